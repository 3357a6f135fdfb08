// SUNDIALS CVODE (variable-order BDF with Newton iterations and a dense Jacobian by difference
// quotients) for stiff models: stiff contact, stiff tendons. CVODE takes single steps
// (CV_ONE_STEP) up to the caller's limit, projects onto the constraints through its projection
// hook (mbs_project), and gives its own interpolant as dense output. Its error messages go into
// the State's error record, never to a stream.
//
// No allocation inside the steps: CVODE allocates in two places of its own while stepping, its
// dense difference-quotient Jacobian (cvLsDenseDQJac wraps the matrix's columns in a vector
// from N_VCloneEmpty, destroyed after every Jacobian) and its linear-solver interface (the saved
// Jacobian, made by SUNMatClone at the first step, cvLsInitialize). Both go through operation
// tables that SUNDIALS lets an application replace: the vectors CVODE clones from cv->y (its
// work vectors) hand out `column`, and cv->A hands out `saved`, both made at mbs_cvode_create.
// The replacements find their integrator through `active`, set around each CVode call on the
// calling thread; anything else falls back to SUNDIALS's own functions.
#include <cvode/cvode.h>
#include <cvode/cvode_proj.h>
#include <nvector/nvector_serial.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "integrator_impl.h"
#include "mbs/controller.h"

struct mbs_cvode {
  SUNContext ctx;
  void* mem;
  N_Vector y;
  N_Vector abstol;
  SUNMatrix A;
  SUNLinearSolver LS;
  N_Vector dky;
  N_Vector column;        // the Jacobian's column vector, handed out by cv_clone_empty
  int column_out;         // handed out and not given back yet
  SUNMatrix saved;        // the saved Jacobian until cv_clone_matrix hands it to CVODE
  mbs_integrator* in;
  const mbs_system* sys;
  mbs_state* st;          // the State being integrated (during a step)
  int started;
  char message[MBS_ERROR_MESSAGE_LEN];
};

static int cv_rhs(realtype t, N_Vector y, N_Vector ydot, void* user) {
  struct mbs_cvode* cv = user;
  const int rc = mbs_integ_eval(cv->in, cv->sys, cv->st, t, N_VGetArrayPointer(y),
                                N_VGetArrayPointer(ydot));
  return rc == MBS_OK ? 0 : 1;  // positive: recoverable, CVODE retries with a smaller step
}

static int cv_project(realtype t, N_Vector ycur, N_Vector corr, realtype eps_proj, N_Vector err,
                      void* user) {
  (void)eps_proj;
  (void)err;
  struct mbs_cvode* cv = user;
  const double* y = N_VGetArrayPointer(ycur);
  double* c = N_VGetArrayPointer(corr);
  mbs_integ_set_state(cv->in, cv->st, t, y);
  const int rc = mbs_project(cv->sys, cv->st, cv->in->opt.constraint_tolerance);
  if (rc) return 1;
  mbs_integ_get_state(cv->in, cv->st, c);
  for (int i = 0; i < cv->in->ny; i++) c[i] -= y[i];
  return 0;
}

// the integrator whose CVode call runs on this thread
static _Thread_local struct mbs_cvode* active;

static N_Vector cv_clone_empty(N_Vector w) {
  struct mbs_cvode* cv = active;
  if (cv && !cv->column_out && N_VGetLength(w) == N_VGetLength(cv->column)) {
    cv->column_out = 1;
    return cv->column;
  }
  return N_VCloneEmpty_Serial(w);
}

// the column's destroy operation: back for the next Jacobian
static void cv_column_release(N_Vector v) {
  struct mbs_cvode* cv = active;
  if (cv && v == cv->column) cv->column_out = 0;
}

static SUNMatrix cv_clone_matrix(SUNMatrix A) {
  struct mbs_cvode* cv = active;
  if (cv && cv->saved && A == cv->A) {
    SUNMatrix s = cv->saved;  // CVODE owns it from now on (SUNMatDestroy at CVodeFree)
    cv->saved = NULL;
    return s;
  }
  return SUNMatClone_Dense(A);
}

static void cv_error(int code, const char* module, const char* function, char* msg, void* user) {
  struct mbs_cvode* cv = user;
  snprintf(cv->message, sizeof(cv->message), "%s %s (%d): %s", module, function, code, msg);
}

int mbs_cvode_create(mbs_integrator* in, const mbs_system* sys) {
  struct mbs_cvode* cv = calloc(1, sizeof(*cv));
  if (!cv) return MBS_ERR_NO_MEMORY;
  in->cvode = cv;
  cv->in = in;
  cv->sys = sys;
  const sunindextype n = in->ny > 0 ? in->ny : 1;
  if (SUNContext_Create(NULL, &cv->ctx) != 0) return MBS_ERR_NO_MEMORY;
  cv->y = N_VNew_Serial(n, cv->ctx);
  cv->abstol = N_VNew_Serial(n, cv->ctx);
  cv->dky = N_VNew_Serial(n, cv->ctx);
  cv->A = SUNDenseMatrix(n, n, cv->ctx);
  cv->column = N_VNewEmpty_Serial(n, cv->ctx);
  if (!cv->y || !cv->abstol || !cv->dky || !cv->A || !cv->column) return MBS_ERR_NO_MEMORY;
  cv->saved = SUNMatClone_Dense(cv->A);
  if (!cv->saved) return MBS_ERR_NO_MEMORY;
  // before CVodeInit, which clones its work vectors from y
  cv->y->ops->nvcloneempty = cv_clone_empty;
  cv->column->ops->nvdestroy = cv_column_release;
  cv->A->ops->clone = cv_clone_matrix;
  cv->LS = SUNLinSol_Dense(cv->y, cv->A, cv->ctx);
  cv->mem = CVodeCreate(CV_BDF, cv->ctx);
  if (!cv->LS || !cv->mem) return MBS_ERR_NO_MEMORY;
  N_VConst(0.0, cv->y);
  if (CVodeInit(cv->mem, cv_rhs, 0.0, cv->y) != CV_SUCCESS) return MBS_ERR_INTERNAL;
  // Tolerances: coordinates and speeds absolutely below 1, relatively above. BDF's global
  // error grows faster than its local tolerance, so alpha is scaled by 1e-3 to give the
  // accuracy alpha gives the Runge-Kutta methods (energy within 10 alpha |E| on the tests'
  // pendulums and chains).
  const double tol = 1e-3 * in->opt.accuracy;
  N_VConst(tol, cv->abstol);
  if (CVodeSVtolerances(cv->mem, tol, cv->abstol) != CV_SUCCESS ||
      CVodeSetUserData(cv->mem, cv) != CV_SUCCESS ||
      CVodeSetErrHandlerFn(cv->mem, cv_error, cv) != CV_SUCCESS ||
      CVodeSetLinearSolver(cv->mem, cv->LS, cv->A) != CV_SUCCESS ||
      CVodeSetMaxNumSteps(cv->mem, 100000) != CV_SUCCESS ||
      CVodeSetProjFn(cv->mem, cv_project) != CV_SUCCESS)
    return MBS_ERR_INTERNAL;
  if (in->opt.max_step > 0) CVodeSetMaxStep(cv->mem, in->opt.max_step);
  if (in->opt.min_step > 0) CVodeSetMinStep(cv->mem, in->opt.min_step);
  if (in->opt.initial_step > 0) CVodeSetInitStep(cv->mem, in->opt.initial_step);
  return MBS_OK;
}

void mbs_cvode_destroy(mbs_integrator* in) {
  struct mbs_cvode* cv = in->cvode;
  if (!cv) return;
  if (cv->mem) CVodeFree(&cv->mem);
  if (cv->LS) SUNLinSolFree(cv->LS);
  if (cv->A) SUNMatDestroy(cv->A);
  if (cv->y) N_VDestroy(cv->y);
  if (cv->abstol) N_VDestroy(cv->abstol);
  if (cv->dky) N_VDestroy(cv->dky);
  if (cv->column) {
    cv->column->ops->nvdestroy = N_VDestroy_Serial;
    N_VDestroy(cv->column);
  }
  if (cv->saved) SUNMatDestroy(cv->saved);  // never handed to CVODE
  if (cv->ctx) SUNContext_Free(&cv->ctx);
  free(cv);
  in->cvode = NULL;
}

int mbs_cvode_initialize(mbs_integrator* in, const mbs_system* sys, mbs_state* st) {
  struct mbs_cvode* cv = in->cvode;
  cv->sys = sys;
  cv->st = st;
  memcpy(N_VGetArrayPointer(cv->y), in->y1, (size_t)in->ny * sizeof(double));
  if (CVodeReInit(cv->mem, in->t1, cv->y) != CV_SUCCESS)
    return MBS_FAIL(&st->err, MBS_ERR_INTEGRATOR, mbs_system_name(sys), "%s: CVODE restart: %s",
                    mbs_system_name(sys), cv->message);
  // delayed controllers need steps no longer than their shortest delay
  double hmax = mbs_controllers_max_step(sys, st);
  if (in->opt.max_step > 0) hmax = fmin(hmax, in->opt.max_step);
  if (isfinite(hmax)) CVodeSetMaxStep(cv->mem, hmax);
  cv->started = 1;
  return MBS_OK;
}

int mbs_cvode_step(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double t_limit) {
  struct mbs_cvode* cv = in->cvode;
  cv->sys = sys;
  cv->st = st;
  if (!(t_limit > in->t1))
    return MBS_FAIL(&st->err, MBS_ERR_INTEGRATOR, mbs_system_name(sys),
                    "%s: integration failed at t = %.9g: the end time is not after it",
                    mbs_system_name(sys), in->t1);
  CVodeSetStopTime(cv->mem, t_limit);
  realtype t = in->t1;
  cv->message[0] = 0;
  active = cv;
  const int flag = CVode(cv->mem, t_limit, cv->y, &t, CV_ONE_STEP);
  active = NULL;
  if (flag < 0) {
    // put the State back at the last good point
    mbs_integ_set_state(in, st, in->t1, in->y1);
    mbs_realize_acceleration(sys, st);
    return MBS_FAIL(&st->err, MBS_ERR_INTEGRATOR, mbs_system_name(sys),
                    "%s: integration failed at t = %.9g: CVODE %s%s%s", mbs_system_name(sys),
                    in->t1, CVodeGetReturnFlagName(flag), cv->message[0] ? ": " : "",
                    cv->message);
  }
  long nsteps = 0, netf = 0, nncf = 0;
  CVodeGetNumSteps(cv->mem, &nsteps);
  CVodeGetNumErrTestFails(cv->mem, &netf);
  CVodeGetNumNonlinSolvConvFails(cv->mem, &nncf);
  in->stats.steps = nsteps;
  in->stats.rejected = netf + nncf;
  in->stats.attempts = nsteps + netf + nncf;
  memcpy(in->y0, in->y1, (size_t)in->ny * sizeof(double));
  memcpy(in->y1, N_VGetArrayPointer(cv->y), (size_t)in->ny * sizeof(double));
  in->t0 = in->t1;
  in->t1 = t;
  // leave the State at the new point, realized, and record it for delayed controllers
  const int rc = mbs_integ_eval(in, sys, st, t, in->y1, in->f1);
  if (rc) return rc;
  return mbs_controllers_record(sys, st);
}

int mbs_cvode_interpolate(const mbs_integrator* in, double t, double* y) {
  struct mbs_cvode* cv = in->cvode;
  if (t == in->t1) {
    memcpy(y, in->y1, (size_t)in->ny * sizeof(double));
    return MBS_OK;
  }
  if (CVodeGetDky(cv->mem, t, 0, cv->dky) != CV_SUCCESS) return MBS_ERR_ARGUMENT;
  memcpy(y, N_VGetArrayPointer(cv->dky), (size_t)in->ny * sizeof(double));
  return MBS_OK;
}
