// Time integration of a State: y = (q, u), y' = (N(q) u, u'(t, q, u)).
//
// One accuracy knob (Simbody paper §3.3): a step is accepted when the weighted RMS norm of its
// estimated local error is at most `accuracy` (coordinates absolutely, speeds relatively above
// 1 and absolutely below), and after every accepted step, for every integrator, the State is
// projected back onto the constraint manifold (positions, then velocities; quaternions
// normalized). Every integrator gives dense output (cubic Hermite between the ends of the last
// step, or CVODE's own interpolant), which the time stepper (simulate.h) uses for reports at a
// fixed interval and for event isolation.
#ifndef MBS_INTEGRATE_H_
#define MBS_INTEGRATE_H_

#include "mbs/state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_integrator_type {
  MBS_INTEG_RK_MERSON = 0,       // Runge-Kutta-Merson 4(3), error controlled (the default)
  MBS_INTEG_DORMAND_PRINCE,      // Dormand-Prince 5(4), error controlled
  MBS_INTEG_CVODE_BDF,           // SUNDIALS CVODE, variable-order BDF, for stiff models
  MBS_INTEG_EXPLICIT_EULER,      // fixed step, first order
  MBS_INTEG_RK4,                 // fixed step, classical fourth order
  MBS_INTEG_SEMI_EXPLICIT_EULER, // fixed step: u first, then q with the new u
  MBS_INTEG_VERLET,              // fixed step, velocity Verlet (iterated for velocity forces)
  MBS_INTEG_ROS34PW2,            // Rosenbrock-W 3(2), error controlled, linearly implicit in the
                                 // auxiliary states z (muscle fibers, activations): see below
  MBS_INTEG_COUNT
} mbs_integrator_type;

// name ("rk_merson", "dormand_prince", "cvode_bdf", "euler", "rk4", "semi_explicit_euler",
// "verlet", "ros34pw2") and the reverse; -1 if unknown
//
// ros34pw2 is Rang and Angermann's four-stage Rosenbrock-W method ROS34PW2 (2005): order 3 with
// an embedded order-2 estimate, L-stable, and of order 3 for any approximation of the Jacobian.
// mbstudy gives it the Jacobian of the muscles, formed at the start of each step: tendon
// stiffness and fiber damping acting through each muscle's moment arms on the mass matrix (with
// the constraints), and each muscle's own states (activation, fiber) implicit against their
// stiffness, all from the muscle model's partial derivatives; the rest of the model (gravity,
// contact, other forces) is integrated explicitly. The fast fiber-tendon modes of compliant
// tendons at low activation, which limit the explicit methods' steps, then no longer do. Its
// accuracy alpha is calibrated like the others (energy within 10 alpha |E| on the test
// pendulums). It pays where the muscles are stiff (gait2392's Thelen muscles; rajagopal2016's
// Millard muscles at low activation); where they are not, rk_merson's fourth order takes fewer
// steps (benchmarks/README.md, "A linearly implicit integrator for stiff muscles").
const char* mbs_integrator_name(mbs_integrator_type type);
int mbs_integrator_from_name(const char* name);
// 1 for the error-controlled integrators
int mbs_integrator_is_error_controlled(mbs_integrator_type type);

typedef struct mbs_integrator_options {
  double accuracy;              // alpha, default 1e-3
  double constraint_tolerance;  // RMS position-constraint error kept by projection
                                // (velocity errors: tolerance / 0.1 s); default 0.1 accuracy
  double fixed_step;            // step of the fixed-step integrators, default 1e-3 s
  double initial_step;          // first step of the error-controlled ones; 0: automatic
  double min_step;              // smallest step before failing, default 1e-12 s
  double max_step;              // largest step, default infinite (0)
} mbs_integrator_options;

void mbs_integrator_options_default(mbs_integrator_options* o);

typedef struct mbs_integrator mbs_integrator;

typedef struct mbs_integrator_stats {
  long steps;          // accepted
  long attempts;       // tried (accepted + rejected)
  long rejected;       // for error or failure
  long evaluations;    // forward-dynamics evaluations
  long projections;    // projections that changed the State
} mbs_integrator_stats;

// NULL if out of memory or the options are invalid
mbs_integrator* mbs_integrator_create(const mbs_system* sys, mbs_integrator_type type,
                                      const mbs_integrator_options* o);
void mbs_integrator_destroy(mbs_integrator* integ);
const mbs_integrator_stats* mbs_integrator_stats_of(const mbs_integrator* integ);
mbs_integrator_type mbs_integrator_type_of(const mbs_integrator* integ);

// Start (or restart, e.g. after an event changed the State) at the State's time: project onto
// the constraints and evaluate the derivatives.
int mbs_integrator_initialize(mbs_integrator* integ, const mbs_system* sys, mbs_state* st);
// Take one accepted step, not beyond t_limit; the State then holds the new time and values,
// realized through Acceleration. Failures (step too small, non-finite values, CVODE errors)
// return MBS_ERR_INTEGRATOR with a message; the State keeps the last good step.
int mbs_integrator_step(mbs_integrator* integ, const mbs_system* sys, mbs_state* st,
                        double t_limit);
// time span of the last step
void mbs_integrator_last_step(const mbs_integrator* integ, double* t0, double* t1);
// Dense output: q and u (nq + nu) at time t within the last step.
int mbs_integrator_interpolate(const mbs_integrator* integ, double t, double* y);

// Advance t, q and u by one classical fourth-order Runge-Kutta step of size h with no error
// control and no projection (a building block for tests); quaternions are normalized after the
// step. On failure the State keeps its values from before the step.
int mbs_step_rk4(const mbs_system* sys, mbs_state* st, double h);

#ifdef __cplusplus
}
#endif

#endif  // MBS_INTEGRATE_H_
