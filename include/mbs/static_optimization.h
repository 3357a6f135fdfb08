// Static optimization (the numerical core of OpenSim's StaticOptimization analysis): at one
// instant, the actuator controls that make the model's accelerations equal desired ones at the
// least effort.
//
// The parameters are the controls of the System's actuators (its force elements with a
// control: muscles, coordinate, point, torque, activation-coordinate and path actuators), in
// control order, each within its bounds (OpenSim's min_control and max_control). Actuator j's
// force is x_j F_j: for a muscle F_j is its capacity at full activation, either the active
// fiber force along the tendon its rigid-tendon fiber makes at the State's path length and
// lengthening speed (use_muscle_physiology, OpenSim's calcInextensibleTendonActiveFiberForce,
// see mbs_muscle_inextensible_tendon_active_force) or its maximum isometric force; for any
// other actuator its optimal force. The muscles' passive fiber forces do not act (OpenSim
// overrides the muscles' whole force); every other force element does (gravity, springs,
// ligaments, bushings, limits, contact, external loads), as do the State's applied forces.
//
// The problem, minimize sum_j |x_j|^p (p = activation_exponent) subject to lo <= x <= hi and
// the acceleration constraints, is linear in x at a fixed State:
//  - without active constraints the equations of motion M u' + C = f_other + sum_j x_j g_j
//    give one row per speed: sum_j g_j x_j = M u'_desired + C - f_other (g_j: the generalized
//    forces of actuator j at x_j = 1);
//  - with constraints (locked, prescribed and coupled coordinates, closed loops) the rows are
//    the accelerations of the speeds that are not constrained (not locked, prescribed or a
//    coupler's dependent one, as OpenSim's Coordinate::isConstrained), from the constrained
//    response u' = P M^-1 f (P removes the constraint forces: G u' = b holds).
// For p = 2 the optimum is found exactly (least-distance programming by Lawson & Hanson's
// method, core/least_distance.c; the Karush-Kuhn-Tucker conditions are checked); for other
// p > 1 by a sequential quadratic method with exact second derivatives started there.
//
// An mbs_so is made once per System (and thread) and allocates nothing when solving.
#ifndef MBS_STATIC_OPTIMIZATION_H_
#define MBS_STATIC_OPTIMIZATION_H_

#include "mbs/muscle.h"
#include "mbs/state.h"
#include "mbs/status.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_so_options {
  double activation_exponent;     // p > 1 (OpenSim's activation_exponent, default 2)
  int use_muscle_physiology;      // default 1
  double convergence_criterion;   // p != 2: largest relative change of the objective accepted
                                  // as converged (optimizer_convergence_criterion, 1e-4)
  int max_iterations;             // p != 2: iterations allowed (optimizer_max_iterations, 100)
  // per control (mbs_system_ncontrol entries, may be NULL): bounds (default: muscles [0, 1],
  // other actuators (-inf, inf)) and which actuators take no part (OpenSim: appliesForce
  // false); an excluded actuator applies no force
  const double* lower;
  const double* upper;
  const unsigned char* exclude;
  // names of the speeds (nu entries, may be NULL), used in messages; default "<joint>:k"
  const char* const* speed_names;
} mbs_so_options;

void mbs_so_options_default(mbs_so_options* o);

typedef struct mbs_so mbs_so;

// Prepare for a finalized System; *out is NULL on failure (message in err).
int mbs_so_create(const mbs_system* sys, const mbs_so_options* o, mbs_so** out,
                  mbs_error* err);
void mbs_so_free(mbs_so* so);

// the parameters: their number, and each one's control and force element
int mbs_so_nparam(const mbs_so* so);
int mbs_so_param_control(const mbs_so* so, int j);
int mbs_so_param_force(const mbs_so* so, int j);

typedef struct mbs_so_info {
  double objective;            // sum |x_j|^p
  double max_violation;        // largest |row residual|: N m / N (no constraints) or rad/s^2,
                               // m/s^2 (constrained rows)
  int nrow;                    // acceleration constraints (rows)
  int nactive;                 // parameters at a bound
  int iterations;              // p != 2: SQP iterations
  int constrained_form;        // 1: the rows are constrained accelerations
} mbs_so_info;

// Solve at the State's time, q, u and auxiliary states (st is not changed) for the desired
// accelerations udot (nu, the State's speed order): activation (nparam) the optimal controls,
// force (nparam, may be NULL) x_j F_j, info (may be NULL). When no control within the bounds
// meets the accelerations, returns MBS_ERR_ASSEMBLY with a message naming the speeds that
// cannot be driven and by how much, after filling activation and force with the controls that
// come closest (least squares within the bounds). MBS_ERR_ARGUMENT for non-finite inputs.
int mbs_so_solve(mbs_so* so, const mbs_state* st, const double* udot, double* activation,
                 double* force, mbs_so_info* info, mbs_error* err);

// The muscle's force capacity as OpenSim's Muscle::calcInextensibleTendonActiveFiberForce
// computes it at activation a (clamped as each model clamps it), path length lmt and
// lengthening speed vmt, with the tendon rigid at its slack length (fiber length
// sqrt(h^2 + (lmt - L_ST)^2), fiber velocity vmt cos(alpha)):
//  - Thelen 2003, Millard 2012: F_max a f_AL(l~) f_V(v~) cos(alpha), 0 at or below the
//    minimum fiber length (Thelen's f_V is the inverse of its f_V^-1 at a, kept >= 0; Millard's
//    its force-velocity curve);
//  - DeGroote 2016: F_max a f_AL f_V (not along the tendon, as OpenSim reports it);
//  - RigidTendonMuscle: F_max a f_AL f_V cos(alpha) of its own fiber;
//  - Thelen2003Muscle_Deprecated, Schutte 1993, Delp 1990 (OpenSim's
//    ActivationFiberLengthMuscle_Deprecated): the isometric tendon force at activation a with
//    the compliant tendon (mbs_muscle_equilibrium_solve, path speed 0 for Schutte and Delp)
//    times the generic force-velocity factor 1.8 - 1.8 / (1 + exp((0.04 - v)/0.18)),
//    v = -cos(alpha_opt) vmt / (v_max l_opt).
int mbs_muscle_inextensible_tendon_active_force(const mbs_muscle_model* m, double lmt,
                                                double vmt, double activation, double* force,
                                                mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_STATIC_OPTIMIZATION_H_
