// Internal layout of an integrator, shared by integrator.c and integrator_cvode.c.
#ifndef MBS_CORE_INTEGRATOR_IMPL_H_
#define MBS_CORE_INTEGRATOR_IMPL_H_

#include "mbs/constraint.h"
#include "mbs/integrate.h"
#include "model_impl.h"

struct mbs_integrator {
  mbs_integrator_type type;
  mbs_integrator_options opt;
  int nq, nu, nz, ny;       // y = (q, u, z)
  int initialized;
  double t0, t1;          // the last step
  double h;               // next step to try (error-controlled methods)
  double* y0;             // y and y' at t0 and t1 (for dense output); y1, f1 are the current
  double* f0;
  double* y1;
  double* f1;
  double* ytmp;           // work
  double* yerr;
  double* ylow;
  double* k[7];           // Runge-Kutta stages
  double* dense;          // Dormand-Prince continuous extension (5 x ny)
  struct mbs_rosw* ros;   // ros34pw2: the linearized muscles and the iteration matrix
  int jac_formed;         // ros34pw2: its Jacobian is formed for the present step
  int dense_valid;
  double* mem;
  mbs_integrator_stats stats;
  struct mbs_cvode* cvode;
};

void mbs_integ_set_state(const mbs_integrator* in, mbs_state* st, double t, const double* y);
void mbs_integ_get_state(const mbs_integrator* in, const mbs_state* st, double* y);
int mbs_integ_eval(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double t,
                   const double* y, double* f);
double mbs_integ_error_norm(const mbs_integrator* in, const double* e, const double* ya,
                            const double* yb);
int mbs_integ_project(mbs_integrator* in, const mbs_system* sys, mbs_state* st);

// pieces of mbs_integrator_step that the batched simulator (batch_simulate.c) shares, so that
// both take the same steps: the method's order; the first step's trial point (into ytmp,
// returning h0) and, after y' there is in k[0], the first step (in->h); Runge-Kutta-Merson's
// points of evaluation s = 1..4 (returning their time) and its solution and error estimate;
// an accepted step's bookkeeping (ytmp and f0 become the new end); the next step after an
// accepted or a rejected one; the failure of a step fallen below the smallest
int mbs_integ_order(mbs_integrator_type type);
double mbs_integ_initial_trial(mbs_integrator* in);
void mbs_integ_initial_finish(mbs_integrator* in, double h0, int trial_ok);
double mbs_integ_merson_point(mbs_integrator* in, int s, double h, double* out);
void mbs_integ_merson_finish(mbs_integrator* in, double h, double* ynew, double* err);
void mbs_integ_commit(mbs_integrator* in, double t, double h);
void mbs_integ_accepted(mbs_integrator* in, double h, double err, int hit_limit);
double mbs_integ_rejected(mbs_integrator* in, double h, double err);
int mbs_integ_fail_min_step(const mbs_integrator* in, const mbs_system* sys, mbs_state* st,
                            const char* why, double last_err, double t, double h);

// The state at t within the last step by one step of the method itself from the step's start
// (more accurate than the interpolant, for isolating events); the shadow integrator (same type
// and system) provides the work buffers, st is a scratch State.
int mbs_integ_restep(const mbs_integrator* in, mbs_integrator* shadow, const mbs_system* sys,
                     mbs_state* st, double t, double* y);

// A muscle linearized about the State (force_muscle.c), for the linearly implicit integrator:
// its states z[z0 .. z0 + nz) (the activation if a state, then the fiber states), and the
// partial derivatives of its tendon force F and its states' derivatives z' with respect to its
// states, its path's length L and its lengthening speed V, by forward differences of the muscle
// model alone. Its moment arms (generalized forces of a unit tension) are kept beside it.
#define MBS_MUSCLE_LIN_MAXZ 3
typedef struct mbs_muscle_lin {
  int nz, z0;
  double Fz[MBS_MUSCLE_LIN_MAXZ];                        // dF/dz
  double FL, FV;                                         // dF/dL, dF/dV
  double Jzz[MBS_MUSCLE_LIN_MAXZ][MBS_MUSCLE_LIN_MAXZ];  // dz'/dz
  double gL[MBS_MUSCLE_LIN_MAXZ], gV[MBS_MUSCLE_LIN_MAXZ];  // dz'/dL, dz'/dV
} mbs_muscle_lin;
int mbs_muscles_count(const mbs_system* sys);
// every muscle in force order into lin[], its moment arms into R (nu per muscle) [Dynamics]
int mbs_muscles_linearize(const mbs_system* sys, mbs_state* st, mbs_muscle_lin* lin, double* R);

// CVODE (integrator_cvode.c)
int mbs_cvode_create(mbs_integrator* in, const mbs_system* sys);
void mbs_cvode_destroy(mbs_integrator* in);
int mbs_cvode_initialize(mbs_integrator* in, const mbs_system* sys, mbs_state* st);
int mbs_cvode_step(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double t_limit);
int mbs_cvode_interpolate(const mbs_integrator* in, double t, double* y);

#endif  // MBS_CORE_INTEGRATOR_IMPL_H_
