// The System: topology, component definitions and default values of a multibody model.
//
// A system is built once (mbs_system_add_*), finalized, and then never written again: any
// number of States (one per thread or sample) share it read-only. Everything that varies,
// including every physical parameter, lives in a State (state.h).
//
// Bodies are numbered in topological order: Ground is body 0 and a body's parent has a smaller
// index, so every tree recursion is a plain loop over arrays.
#ifndef MBS_SYSTEM_H_
#define MBS_SYSTEM_H_

#include "mbs/function.h"
#include "mbs/mobilizer.h"
#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_system mbs_system;

// A frame fixed on a body, as OpenSim gives it: body-fixed X-Y-Z angles, then a translation.
typedef struct mbs_frame_spec {
  double angles[3];  // rad
  double p[3];       // m, in the body frame
} mbs_frame_spec;

// A body and the mobilizer that connects it to its parent.
typedef struct mbs_body_spec {
  const char* name;                 // unique, not empty
  int parent;                       // index of an existing body (0 = Ground)
  mbs_mobilizer_type mobilizer;
  const char* mobilizer_name;       // name of the joint (may be NULL: "<body>_joint")
  mbs_frame_spec X_PF;              // inboard frame F on the parent
  mbs_frame_spec X_BM;              // outboard frame M on this body
  double mass;                      // kg, >= 0
  double com[3];                    // center of mass in B, m
  double inertia[6];                // about the center of mass in B: xx yy zz xy xz yz, kg m^2
  double pitch;                     // MBS_MOB_SCREW: m per rad
  double radii[3];                  // MBS_MOB_ELLIPSOID*: semi-axes a, b, c along F's x, y, z
  const mbs_function_mobilizer* function;  // MBS_MOB_FUNCTION
} mbs_body_spec;

// a body spec with everything zero or identity, for the given name, parent and mobilizer
mbs_body_spec mbs_body_spec_default(const char* name, int parent, mbs_mobilizer_type mobilizer);

// A new, empty system holding only Ground (body 0). NULL if out of memory.
mbs_system* mbs_system_create(const char* name);
void mbs_system_destroy(mbs_system* sys);

// the last error raised while building or finalizing
const mbs_error* mbs_system_error(const mbs_system* sys);

// Add a body; returns its index (> 0) or a negative status (message in mbs_system_error).
int mbs_system_add_body(mbs_system* sys, const mbs_body_spec* spec);

// Add a function (for function-based mobilizers); returns its index (>= 0) or a negative status.
int mbs_system_add_function(mbs_system* sys, const mbs_function_spec* spec);

//---------------------------------- force elements ---------------------------------------------
// Each returns the force element's index (>= 0) or a negative status. Parameters given here are
// defaults; a State holds the values in use.

// uniform gravity g (m/s^2, in Ground) on every body
int mbs_system_add_gravity(mbs_system* sys, const double g[3]);
// a constant generalized force on speed `axis` of `body`'s mobilizer
int mbs_system_add_mobility_force(mbs_system* sys, int body, int axis, double value);
// a constant force (in Ground) applied at station p_BS (in B) of a body
int mbs_system_add_body_force(mbs_system* sys, int body, const double p_BS[3],
                              const double force_G[3]);
// a constant torque (in Ground) on a body
int mbs_system_add_body_torque(mbs_system* sys, int body, const double torque_G[3]);
// linear spring between two stations: tension k (L - L0) along the line, PE = k (L - L0)^2 / 2
int mbs_system_add_spring(mbs_system* sys, int body1, const double p1[3], int body2,
                          const double p2[3], double k, double rest_length);
// linear damper between two stations: tension c dL/dt along the line
int mbs_system_add_damper(mbs_system* sys, int body1, const double p1[3], int body2,
                          const double p2[3], double c);
// spring on coordinate `axis` of a body's mobilizer with PE = k (q - q0)^2 / 2; it applies the
// generalized force -k (q - q0) N[axis][:] (that is -k (q - q0) on speed `axis` where q' = u),
// so it is conservative for every mobilizer whose coordinates are angles or lengths (not
// quaternions)
int mbs_system_add_mobility_spring(mbs_system* sys, int body, int axis, double k, double q0);
// damper on speed `axis` of a body's mobilizer: f = -c u
int mbs_system_add_mobility_damper(mbs_system* sys, int body, int axis, double c);

// Rename force element `force` (names start as "<kind><index>", e.g. "spring3"); its parameter
// paths follow ("/forceset/<name>/..."). Names are unique and contain no '/'.
int mbs_system_set_force_name(mbs_system* sys, int force, const char* name);

// Lay out the State and freeze the system. After this, nothing may be added.
int mbs_system_finalize(mbs_system* sys);

//---------------------------------- queries ----------------------------------------------------

const char* mbs_system_name(const mbs_system* sys);
int mbs_system_is_finalized(const mbs_system* sys);
int mbs_system_nbody(const mbs_system* sys);   // including Ground
int mbs_system_nq(const mbs_system* sys);
int mbs_system_nu(const mbs_system* sys);
// auxiliary state variables z (activations, fiber lengths of force elements), integrated with q
// and u
int mbs_system_nz(const mbs_system* sys);
// the name of z[i]: "<force element>/<state>" ("biceps/activation")
int mbs_system_z_name(const mbs_system* sys, int i, char* buf, size_t n);
int mbs_system_nparam(const mbs_system* sys);  // instance parameters held by a State
int mbs_system_nforce(const mbs_system* sys);
const char* mbs_force_name(const mbs_system* sys, int force);
const char* mbs_force_kind(const mbs_system* sys, int force);  // e.g. "spring", "bushing"
int mbs_force_find(const mbs_system* sys, const char* name);   // -1 if unknown
// actuator controls (State variables, see mbs_state_controls)
int mbs_system_ncontrol(const mbs_system* sys);
int mbs_control_force(const mbs_system* sys, int control);     // the actuator it drives

const char* mbs_body_name(const mbs_system* sys, int body);
int mbs_body_find(const mbs_system* sys, const char* name);  // -1 if unknown
int mbs_body_parent(const mbs_system* sys, int body);
mbs_mobilizer_type mbs_body_mobilizer(const mbs_system* sys, int body);
const char* mbs_body_mobilizer_name(const mbs_system* sys, int body);  // the joint's name
int mbs_body_qadr(const mbs_system* sys, int body);  // first coordinate in q
int mbs_body_nq(const mbs_system* sys, int body);
int mbs_body_uadr(const mbs_system* sys, int body);  // first speed in u
int mbs_body_nu(const mbs_system* sys, int body);

// Instance parameters are addressed by index; each has a path name such as
// "/bodies/femur_r/mass" or "/bodies/femur_r/com" (a 3-vector occupies 3 consecutive indices).
typedef struct mbs_param_info {
  const char* path;     // name of the parameter block
  int index;            // first index of the block in the State's parameter vector
  int size;             // numbers in the block
  const char* unit;     // SI unit, e.g. "kg", "m", "kg m^2", "rad", "N/m"
  // Valid range of each number (inclusive; -inf / inf when unbounded). Masses, stiffnesses,
  // dampings, dissipations, friction coefficients, viscosities, rest lengths, radii, optimal
  // forces and transitions cannot be negative. Conditions that a range cannot express (an
  // inertia's triangle inequality, a transition above zero, knots in increasing order) are
  // checked when a State is realized: a bad value fails with a message naming the component.
  double lower, upper;
} mbs_param_info;
// number of parameter blocks
int mbs_system_nparam_block(const mbs_system* sys);
// block i
const mbs_param_info* mbs_system_param_block(const mbs_system* sys, int i);
// block by path; NULL if unknown
const mbs_param_info* mbs_system_find_param(const mbs_system* sys, const char* path);
// default value of parameter index i
double mbs_system_param_default(const mbs_system* sys, int i);
// Set the default value of parameter index i: part of building a System (a model reader giving
// a finalized System values from outside its file, before the System is shared or any State
// made from it; States already made keep their values). MBS_ERR_ARGUMENT for an index out of
// range or a value that is not finite.
int mbs_system_set_param_default(mbs_system* sys, int i, double value);

#ifdef __cplusplus
}
#endif

#endif  // MBS_SYSTEM_H_
