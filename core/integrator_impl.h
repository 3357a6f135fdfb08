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

// The state at t within the last step by one step of the method itself from the step's start
// (more accurate than the interpolant, for isolating events); the shadow integrator (same type
// and system) provides the work buffers, st is a scratch State.
int mbs_integ_restep(const mbs_integrator* in, mbs_integrator* shadow, const mbs_system* sys,
                     mbs_state* st, double t, double* y);

// CVODE (integrator_cvode.c)
int mbs_cvode_create(mbs_integrator* in, const mbs_system* sys);
void mbs_cvode_destroy(mbs_integrator* in);
int mbs_cvode_initialize(mbs_integrator* in, const mbs_system* sys, mbs_state* st);
int mbs_cvode_step(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double t_limit);
int mbs_cvode_interpolate(const mbs_integrator* in, double t, double* y);

#endif  // MBS_CORE_INTEGRATOR_IMPL_H_
