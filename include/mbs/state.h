// The State: everything about one run of a System that varies, plus its realization cache.
//
// Variables: time t, generalized coordinates q, speeds u, auxiliary states z, instance
// parameters (masses, frames, function coefficients, force parameters) and the applied forces
// set by the caller. They are one contiguous block of doubles (mbs_state_vars), so a State can
// be copied, checkpointed or sent between ranks as bytes. The cache and a scratch stack are
// sized when the State is created: realizing never allocates.
//
// Realization stages (Simbody): changing a variable invalidates the cache from that variable's
// stage upward; reading a result needs its stage and is an error (MBS_ERR_STAGE), never a
// silent reuse of a stale value.
#ifndef MBS_STATE_H_
#define MBS_STATE_H_

#include <stddef.h>

#include "mbs/status.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_stage {
  MBS_STAGE_EMPTY = 0,
  MBS_STAGE_TOPOLOGY,      // system finalized, State laid out
  MBS_STAGE_MODEL,         // modeling choices
  MBS_STAGE_INSTANCE,      // parameters -> frames, mass properties, function coefficients
  MBS_STAGE_TIME,          // t
  MBS_STAGE_POSITION,      // q -> transforms, hinge matrices, inertias in Ground
  MBS_STAGE_VELOCITY,      // u -> spatial velocities, q', Coriolis and gyroscopic terms
  MBS_STAGE_DYNAMICS,      // forces, energies
  MBS_STAGE_ACCELERATION,  // u' (articulated-body forward dynamics), q''
  MBS_STAGE_REPORT,
  MBS_STAGE_COUNT
} mbs_stage;

const char* mbs_stage_name(mbs_stage stage);

typedef struct mbs_state mbs_state;

// A new State holding the system's defaults (q = 0 or identity quaternions, u = 0, parameters
// and applied forces at their defaults), realized to Topology. NULL if the system is not
// finalized or memory is short.
mbs_state* mbs_state_create(const mbs_system* sys);
void mbs_state_destroy(mbs_state* st);

// copy the variables of src into dst (same system); dst's cache is invalidated
int mbs_state_copy(const mbs_system* sys, mbs_state* dst, const mbs_state* src);

// highest stage realized
mbs_stage mbs_state_stage(const mbs_state* st);
// the last error raised on this State
const mbs_error* mbs_state_error(const mbs_state* st);
// largest scratch use seen so far, in bytes, and the stack size
size_t mbs_state_scratch_peak(const mbs_state* st);
size_t mbs_state_scratch_size(const mbs_state* st);

// The variable block and its size in doubles: [t | q | u | z | parameters | applied forces].
const double* mbs_state_vars(const mbs_state* st, size_t* n);
// overwrite the whole variable block (invalidates everything above Topology)
int mbs_state_set_vars(const mbs_system* sys, mbs_state* st, const double* vars, size_t n);

//---------------------------------- variables --------------------------------------------------
// Read access is always allowed. The upd_* functions return a writable pointer and invalidate
// the cache from the variable's stage upward.

double mbs_state_time(const mbs_state* st);
void mbs_state_set_time(mbs_state* st, double t);                     // invalidates Time
const double* mbs_state_q(const mbs_state* st);
double* mbs_state_upd_q(mbs_state* st);                               // invalidates Position
const double* mbs_state_u(const mbs_state* st);
double* mbs_state_upd_u(mbs_state* st);                               // invalidates Velocity
const double* mbs_state_z(const mbs_state* st);
double* mbs_state_upd_z(mbs_state* st);                               // invalidates Dynamics
const double* mbs_state_params(const mbs_state* st);
double* mbs_state_upd_params(mbs_state* st);                          // invalidates Instance
// set one parameter by path and component (0 for scalars); checks the path
int mbs_state_set_param(const mbs_system* sys, mbs_state* st, const char* path, int component,
                        double value);
// Applied generalized forces (nu) and body forces (nbody x 6, [moment; force] in Ground, about
// the body origin) that the caller sets, e.g. controls; both start at zero.
const double* mbs_state_applied_mobility_forces(const mbs_state* st);
double* mbs_state_upd_applied_mobility_forces(mbs_state* st);         // invalidates Dynamics
const double* mbs_state_applied_body_forces(const mbs_state* st);
double* mbs_state_upd_applied_body_forces(mbs_state* st);             // invalidates Dynamics

// Controls of the actuators (one each, in the order the actuators were added; see
// mbs_system_ncontrol); they start at the actuators' default controls. An actuator given a
// control function of time uses that instead.
const double* mbs_state_controls(const mbs_state* st);
double* mbs_state_upd_controls(mbs_state* st);                        // invalidates Dynamics

// Normalize quaternions in q (they may drift during integration); no physical effect.
void mbs_state_normalize_q(const mbs_system* sys, mbs_state* st);

//---------------------------------- realization ------------------------------------------------
// Each realizes every lower stage that is not yet valid, then its own. Errors (an invalid
// parameter, a non-finite value) leave the State at the last good stage with the message in
// mbs_state_error.

int mbs_realize(const mbs_system* sys, mbs_state* st, mbs_stage stage);
int mbs_realize_instance(const mbs_system* sys, mbs_state* st);
int mbs_realize_time(const mbs_system* sys, mbs_state* st);
int mbs_realize_position(const mbs_system* sys, mbs_state* st);
int mbs_realize_velocity(const mbs_system* sys, mbs_state* st);
int mbs_realize_dynamics(const mbs_system* sys, mbs_state* st);
int mbs_realize_acceleration(const mbs_system* sys, mbs_state* st);

//---------------------------------- results ----------------------------------------------------
// Each fails with MBS_ERR_STAGE if the State is not realized far enough.

// pose of a body in Ground: R_GB (row-major 3x3) and p_GB (origin)   [Position]
int mbs_get_body_transform(const mbs_system* sys, const mbs_state* st, int body, double R_GB[9],
                           double p_GB[3]);
// location in Ground of a station p_BS fixed on a body              [Position]
int mbs_get_station_location(const mbs_system* sys, const mbs_state* st, int body,
                             const double p_BS[3], double p_G[3]);
// spatial velocity of a body in Ground [w; v of the body origin]    [Velocity]
int mbs_get_body_velocity(const mbs_system* sys, const mbs_state* st, int body, double V_GB[6]);
// spatial acceleration of a body in Ground [b; a of the body origin] [Acceleration]
int mbs_get_body_acceleration(const mbs_system* sys, const mbs_state* st, int body,
                              double A_GB[6]);
// q' (nq)                                                            [Velocity]
const double* mbs_get_qdot(const mbs_system* sys, mbs_state* st);
// u' (nu) from articulated-body forward dynamics                     [Acceleration]
const double* mbs_get_udot(const mbs_system* sys, mbs_state* st);
// z' (nz): the auxiliary states' derivatives from their force elements [Dynamics]
const double* mbs_get_zdot(const mbs_system* sys, mbs_state* st);
// q'' (nq)                                                           [Acceleration]
const double* mbs_get_qdotdot(const mbs_system* sys, mbs_state* st);
// total applied generalized forces (nu) and body forces (nbody x 6, in Ground about each body
// origin, gravity included) from all force elements and the applied forces  [Dynamics]
const double* mbs_get_mobility_forces(const mbs_system* sys, mbs_state* st);
const double* mbs_get_body_forces(const mbs_system* sys, mbs_state* st);

#ifdef __cplusplus
}
#endif

#endif  // MBS_STATE_H_
