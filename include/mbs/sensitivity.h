// Forward sensitivities of a simulation with respect to instance parameters (SUNDIALS CVODES).
//
// For y = (q, u) with y' = f(t, y, p), the sensitivities s_i = dy/dp_i obey the variational
// equations s_i' = (df/dy) s_i + df/dp_i, s_i(t0) = dy0/dp_i, integrated alongside y by
// CVODES (Hindmarsh et al., "SUNDIALS: Suite of nonlinear and differential/algebraic equation
// solvers", ACM TOMS 31(3) 2005; Serban and Hindmarsh, "CVODES: the sensitivity-enabled ODE
// solver in SUNDIALS", ASME IDETC 2005): variable-order BDF with Newton iterations on a dense
// Jacobian, the staggered corrector (the state's corrector converges first, then the
// sensitivities' in one linear system each), sensitivities in the local error test, and the
// products (df/dy) s_i + df/dp_i formed by CVODES' own centered difference quotients, which
// perturb the parameter values and the State along s_i together. The right-hand side writes the
// perturbed parameters into the State's parameter array (the Instance stage, so realization
// re-derives everything that depends on them) and realizes through Acceleration.
//
// Only models whose right-hand side is a smooth ODE in (t, y, p) take this path (see
// mbs_sensitivity_check): CVODES integrates without the coordinate projection that keeps
// constraints satisfied, and difference quotients across switching forces give no derivative.
// Quaternions are integrated as they are (their ODE keeps |q| constant; nq may exceed nu).
// The study driver's central differences (2D + 1 simulations) are the path for everything
// else, and the check of this one.
#ifndef MBS_SENSITIVITY_H_
#define MBS_SENSITIVITY_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

// A param_index entry for a parameter that enters only through the initial state (its row of
// dy0_dp), such as an initial coordinate: the right-hand side does not depend on it.
#define MBS_SENS_INITIAL_ONLY (-1)

// Tolerances: CVODES moves y along s_i by about one unit of its error weights (rtol |y| + atol)
// in its difference quotients, so roundoff in f costs about eps / atol of relative accuracy in
// the sensitivities' right-hand side. Keep atol >= ~1e-9 (then ~1e-7 relative is the floor on
// smooth models); with atol <= 1e-10 the sensitivity corrector stalls on that noise and the run
// ends in CV_TOO_MUCH_WORK. rtol may go lower (1e-10) for more accuracy in y.
typedef struct mbs_sensitivity_options {
  double rtol;      // CVODES relative tolerance on y and on the sensitivities, default 1e-7
  double atol;      // absolute tolerance on y, default 1e-9 (on s_i: atol / pbar_i, with pbar_i
                    // = |p_i|, or 1 when p_i = 0 or the parameter is MBS_SENS_INITIAL_ONLY)
  long max_steps;   // steps allowed per output interval (CVodeSetMaxNumSteps), default 100000
} mbs_sensitivity_options;

void mbs_sensitivity_options_default(mbs_sensitivity_options* o);

// Can this System take the CVODES path? It must be finalized, have at least one speed, no
// constraints (no projection during the sensitivity integration), no contact forces (they
// switch on and off and their friction saturates), no auxiliary states, and no function-based
// joint driven by a piecewise linear function (its slope jumps at the knots). If not,
// MBS_ERR_ARGUMENT (or MBS_ERR_NOT_FINALIZED) with a message saying why.
int mbs_sensitivity_check(const mbs_system* sys, mbs_error* err);

// Integrate from the State's time and (q, u) to times[nt - 1] (times non-decreasing, the first
// not before the State's time; a time equal to the State's reports the initial values), and
// report y = (q, u) at each times[k] in y[k * ny + j] (ny = nq + nu) and dy/dp_i in
// dy_dp[(k * np + i) * ny + j]. param_index[i] is an index into the State's parameter array
// (mbs_system_find_param(...)->index + component) or MBS_SENS_INITIAL_ONLY; dy0_dp (np x ny,
// NULL = zeros) gives the sensitivity of the initial state, e.g. 1 at a coordinate's place for
// a parameter that is its initial value. np = 0 runs CVODES without sensitivities (dy_dp may be
// NULL). o NULL: defaults. The parameter values are those of the State. On success the State is
// left at times[nt - 1], realized through Acceleration, its parameters unchanged; on failure
// at the last output time reached, with a status (MBS_ERR_ARGUMENT, MBS_ERR_INTEGRATOR,
// MBS_ERR_NAN, ...) and a message naming the time and the cause. Nothing is printed.
int mbs_forward_sensitivity(const mbs_system* sys, mbs_state* st, const int* param_index,
                            int np, const double* dy0_dp, const double* times, int nt,
                            const mbs_sensitivity_options* o, double* y, double* dy_dp,
                            mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_SENSITIVITY_H_
