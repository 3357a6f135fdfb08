// Fixed-step time stepping. (Error-controlled integrators, projection and events build on this
// and the State's derivatives.)
#ifndef MBS_INTEGRATE_H_
#define MBS_INTEGRATE_H_

#include "mbs/state.h"

#ifdef __cplusplus
extern "C" {
#endif

// Advance t, q and u by one classical fourth-order Runge-Kutta step of size h, using
// q' = N(q) u and u' from forward dynamics. Quaternions are normalized after the step.
// On failure the State keeps its values from before the step.
int mbs_step_rk4(const mbs_system* sys, mbs_state* st, double h);

#ifdef __cplusplus
}
#endif

#endif  // MBS_INTEGRATE_H_
