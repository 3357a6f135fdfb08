// Forward sensitivities with SUNDIALS CVODES (see include/mbs/sensitivity.h).
//
// CVODES holds the parameter vector it perturbs: p = [the State's parameters (nparam) | one
// slot per MBS_SENS_INITIAL_ONLY parameter], plist[i] = param_index[i] or nparam + i. Its
// difference quotients for s_i' = (df/dy) s_i + df/dp_i (CVODES' cvSensRhs1InternalDQ,
// centered) set p[plist[i]] = p_i +- delta and y +- delta s_i and call the right-hand side,
// which copies the parameters of plist into the State (only when one differs, since writing
// them invalidates the Instance stage) and realizes through Acceleration. The slots of
// initial-only parameters are read by nobody, so their df/dp is exactly zero.
#include <cvodes/cvodes.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "mbs/sensitivity.h"
#include "model_impl.h"

void mbs_sensitivity_options_default(mbs_sensitivity_options* o) {
  o->rtol = 1e-7;
  o->atol = 1e-9;
  o->max_steps = 100000;
}

//---------------------------------- the check --------------------------------------------------

// 1 if function f (or the function a multiplier scales) is piecewise linear or steps
static int piecewise_linear(const mbs_system* sys, int f) {
  for (int depth = 0; f >= 0 && f < sys->nfunc && depth <= sys->nfunc; depth++) {
    if (sys->func[f].type == MBS_FUNC_PIECEWISE_LINEAR ||
        sys->func[f].type == MBS_FUNC_PIECEWISE_LINEAR_HELD || sys->func[f].type == MBS_FUNC_STEPS)
      return 1;
    if (sys->func[f].type != MBS_FUNC_MULTIPLIER) return 0;
    f = sys->func[f].inner;
  }
  return 0;
}

int mbs_sensitivity_check(const mbs_system* sys, mbs_error* err) {
  if (!sys) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "mbs_sensitivity_check: no system given");
  const char* name = mbs_system_name(sys);
  if (!mbs_system_is_finalized(sys))
    return MBS_FAIL(err, MBS_ERR_NOT_FINALIZED, name,
                    "model '%s' is not finalized: forward sensitivities need its State layout",
                    name);
  if (sys->nu <= 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "model '%s' has no degrees of freedom: there is nothing to integrate", name);
  if (sys->ncon > 0) {
    char names[160];
    size_t len = 0;
    names[0] = 0;
    for (int c = 0; c < sys->ncon && len < sizeof(names); c++) {
      const char* cn = sys->con[c].name ? sys->con[c].name : "(unnamed)";
      const int w = snprintf(names + len, sizeof(names) - len, "%s'%s'", c ? ", " : "", cn);
      if (w < 0) break;
      len += (size_t)w;
    }
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "model '%s' has %d constraint%s (%s): CVODES integrates the sensitivities "
                    "without projecting onto the constraints; use central differences",
                    name, sys->ncon, sys->ncon == 1 ? "" : "s", names);
  }
  if (sys->nz > 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "model '%s' has %d auxiliary states (z), which this path does not integrate; "
                    "use central differences", name, sys->nz);
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_type t = sys->force[i].type;
    if (t == MBS_FORCE_HUNT_CROSSLEY || t == MBS_FORCE_ELASTIC_FOUNDATION)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                      "model '%s' has contact force '%s' (%s): contact switches on and off and "
                      "its friction saturates, so the right-hand side is not smooth; use "
                      "central differences",
                      name, sys->force[i].name, mbs_force_kind(sys, i));
  }
  for (int b = 1; b < sys->nbody; b++) {
    if (sys->body_mob[b] != MBS_MOB_FUNCTION || sys->body_fmob[b] < 0) continue;
    const mbs_function_mobilizer* fm = &sys->fmob[sys->body_fmob[b]];
    for (int a = 0; a < 6; a++) {
      const mbs_spatial_axis* ax = a < 3 ? &fm->rotation[a] : &fm->translation[a - 3];
      if (ax->coord < 0 || !piecewise_linear(sys, ax->function)) continue;
      const char* fn = sys->func[ax->function].name;
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                      "model '%s': joint '%s' follows piecewise linear function '%s', whose "
                      "slope jumps at its knots, so the right-hand side is not smooth; use "
                      "central differences",
                      name, sys->mob_name[b], fn ? fn : "(unnamed)");
    }
  }
  return MBS_OK;
}

//---------------------------------- the integration --------------------------------------------

typedef struct sens_work {
  const mbs_system* sys;
  mbs_state* st;
  int nq, nu, ny, np, nparam;
  double* p;       // nparam + np: the values CVODES perturbs
  double* p0;      // nparam: the State's parameters on entry
  double* ystart;  // ny: y on entry
  double* pbar;    // np
  int* plist;      // np
  SUNContext ctx;
  void* mem;
  N_Vector y;
  N_Vector* yS;
  SUNMatrix A;
  SUNLinearSolver LS;
  char cv_message[MBS_ERROR_MESSAGE_LEN + 64];  // the last error CVODES reported
  char rhs_message[MBS_ERROR_MESSAGE_LEN + 64];  // why the last failed right-hand side failed
} sens_work;

// y' = f(t, y, p): p from CVODES' array into the State, then the State's q' and u'
static int sens_rhs(realtype t, N_Vector yv, N_Vector ydot, void* user) {
  sens_work* w = user;
  const double* yy = N_VGetArrayPointer(yv);
  double* f = N_VGetArrayPointer(ydot);
  const double* cur = mbs_state_params(w->st);
  int changed = 0;
  for (int i = 0; i < w->np && !changed; i++) {
    const int k = w->plist[i];
    if (k < w->nparam && cur[k] != w->p[k]) changed = 1;
  }
  if (changed) {
    double* pp = mbs_state_upd_params(w->st);
    for (int i = 0; i < w->np; i++) {
      const int k = w->plist[i];
      if (k < w->nparam) pp[k] = w->p[k];
    }
  }
  memcpy(mbs_state_upd_q(w->st), yy, (size_t)w->nq * sizeof(double));
  memcpy(mbs_state_upd_u(w->st), yy + w->nq, (size_t)w->nu * sizeof(double));
  mbs_state_set_time(w->st, t);
  const int rc = mbs_realize_acceleration(w->sys, w->st);
  if (rc) {
    snprintf(w->rhs_message, sizeof(w->rhs_message), "at t = %.9g: %s", t,
             mbs_state_error(w->st)->message);
    return 1;  // recoverable: CVODES retries with a smaller step, then gives up
  }
  memcpy(f, mbs_get_qdot(w->sys, w->st), (size_t)w->nq * sizeof(double));
  memcpy(f + w->nq, mbs_get_udot(w->sys, w->st), (size_t)w->nu * sizeof(double));
  for (int j = 0; j < w->ny; j++)
    if (!isfinite(f[j])) {
      snprintf(w->rhs_message, sizeof(w->rhs_message), "at t = %.9g: %s %d of y' is %g", t,
               j < w->nq ? "q'" : "u'", j < w->nq ? j : j - w->nq, f[j]);
      return 1;
    }
  return 0;
}

static void sens_error(int code, const char* module, const char* function, char* msg,
                       void* user) {
  sens_work* w = user;
  if (code >= 0) return;  // warnings (e.g. t + h = t) are not failures
  snprintf(w->cv_message, sizeof(w->cv_message), "%s %s: %s", module, function, msg);
}

// CVODES' name of a return flag (CVodeGetReturnFlagName allocates it; freed here)
static void flag_name(int flag, char* out, size_t n) {
  char* s = CVodeGetReturnFlagName(flag);
  snprintf(out, n, "%s", s ? s : "(unknown flag)");
  free(s);
}

static void work_free(sens_work* w) {
  if (w->mem) CVodeFree(&w->mem);
  if (w->LS) SUNLinSolFree(w->LS);
  if (w->A) SUNMatDestroy(w->A);
  if (w->yS) N_VDestroyVectorArray(w->yS, w->np);
  if (w->y) N_VDestroy(w->y);
  if (w->ctx) SUNContext_Free(&w->ctx);
  free(w->p);
  free(w->p0);
  free(w->ystart);
  free(w->pbar);
  free(w->plist);
}

// put (t, y) into the State with its entry parameters, realized through Acceleration
static int leave_state(sens_work* w, double t, const double* yy) {
  const double* cur = mbs_state_params(w->st);
  if (w->nparam && memcmp(cur, w->p0, (size_t)w->nparam * sizeof(double)) != 0)
    memcpy(mbs_state_upd_params(w->st), w->p0, (size_t)w->nparam * sizeof(double));
  memcpy(mbs_state_upd_q(w->st), yy, (size_t)w->nq * sizeof(double));
  memcpy(mbs_state_upd_u(w->st), yy + w->nq, (size_t)w->nu * sizeof(double));
  mbs_state_set_time(w->st, t);
  return mbs_realize_acceleration(w->sys, w->st);
}

// check the arguments; MBS_OK or the status with the message
static int check_arguments(const mbs_system* sys, mbs_state* st, const int* param_index,
                           int np, const double* dy0_dp, const double* times, int nt,
                           const mbs_sensitivity_options* o, const double* y,
                           const double* dy_dp, mbs_error* err) {
  const char* name = mbs_system_name(sys);
  if (!st)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name, "%s: forward sensitivities: no State given",
                    name);
  if (st->sys != sys)
    return MBS_FAIL(err, MBS_ERR_SYSTEM_MISMATCH, name,
                    "%s: forward sensitivities: the State belongs to another system", name);
  if (np < 0 || nt < 1 || !times || !y || (np > 0 && (!param_index || !dy_dp)))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "%s: forward sensitivities: need np >= 0 (got %d), nt >= 1 (got %d), the "
                    "output times and y, and for np > 0 the parameter indices and dy_dp",
                    name, np, nt);
  if (!(o->rtol > 0) || !(o->atol > 0) || !(o->max_steps > 0) || !isfinite(o->rtol) ||
      !isfinite(o->atol))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "%s: forward sensitivities: tolerances (rtol %g, atol %g) and max_steps "
                    "(%ld) must be positive",
                    name, o->rtol, o->atol, o->max_steps);
  const double t0 = mbs_state_time(st);
  for (int k = 0; k < nt; k++)
    if (!isfinite(times[k]) || times[k] < (k ? times[k - 1] : t0))
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                      "%s: forward sensitivities: output time %d (%.9g) is not finite or comes "
                      "before %s (%.9g)",
                      name, k, times[k], k ? "the one before it" : "the State's time",
                      k ? times[k - 1] : t0);
  const int nparam = sys->nparam;
  const double* par = mbs_state_params(st);
  for (int i = 0; i < np; i++) {
    const int k = param_index[i];
    if (k == MBS_SENS_INITIAL_ONLY) continue;
    if (k < 0 || k >= nparam)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                      "%s: forward sensitivities: parameter %d has index %d, outside the "
                      "State's %d parameters",
                      name, i, k, nparam);
    if (!isfinite(par[k]))
      return MBS_FAIL(err, MBS_ERR_NAN, name,
                      "%s: forward sensitivities: parameter %d (index %d) is %g", name, i, k,
                      par[k]);
  }
  const int ny = sys->nq + sys->nu;
  if (dy0_dp)
    for (int j = 0; j < np * ny; j++)
      if (!isfinite(dy0_dp[j]))
        return MBS_FAIL(err, MBS_ERR_NAN, name,
                        "%s: forward sensitivities: dy0_dp[%d][%d] is %g", name, j / ny, j % ny,
                        dy0_dp[j]);
  return MBS_OK;
}

// set up CVODES (problem, tolerances, solver, sensitivities); MBS_OK or a status
static int setup(sens_work* w, const int* param_index, const double* dy0_dp, double t0,
                 double t_end, const mbs_sensitivity_options* o) {
  const int np = w->np, nparam = w->nparam, ny = w->ny;
  w->p = calloc((size_t)(nparam + np) + 1, sizeof(double));
  w->p0 = calloc((size_t)nparam + 1, sizeof(double));
  w->pbar = calloc((size_t)np + 1, sizeof(double));
  w->plist = calloc((size_t)np + 1, sizeof(int));
  w->ystart = calloc((size_t)ny, sizeof(double));
  if (!w->p || !w->p0 || !w->pbar || !w->plist || !w->ystart) return MBS_ERR_NO_MEMORY;
  memcpy(w->ystart, mbs_state_q(w->st), (size_t)w->nq * sizeof(double));
  memcpy(w->ystart + w->nq, mbs_state_u(w->st), (size_t)w->nu * sizeof(double));
  memcpy(w->p0, mbs_state_params(w->st), (size_t)nparam * sizeof(double));
  memcpy(w->p, w->p0, (size_t)nparam * sizeof(double));
  for (int i = 0; i < np; i++) {
    const int k = param_index[i];
    w->plist[i] = k == MBS_SENS_INITIAL_ONLY ? nparam + i : k;
    w->p[nparam + i] = 1.0;  // a dummy value nobody reads
    const double v = w->p[w->plist[i]];
    w->pbar[i] = (k == MBS_SENS_INITIAL_ONLY || v == 0) ? 1.0 : fabs(v);
  }
  if (SUNContext_Create(NULL, &w->ctx) != 0) return MBS_ERR_NO_MEMORY;
  w->y = N_VNew_Serial(ny, w->ctx);
  w->A = SUNDenseMatrix(ny, ny, w->ctx);
  if (!w->y || !w->A) return MBS_ERR_NO_MEMORY;
  memcpy(N_VGetArrayPointer(w->y), w->ystart, (size_t)ny * sizeof(double));
  w->LS = SUNLinSol_Dense(w->y, w->A, w->ctx);
  w->mem = CVodeCreate(CV_BDF, w->ctx);
  if (!w->LS || !w->mem) return MBS_ERR_NO_MEMORY;
  if (CVodeSetErrHandlerFn(w->mem, sens_error, w) != CV_SUCCESS ||
      CVodeInit(w->mem, sens_rhs, t0, w->y) != CV_SUCCESS ||
      CVodeSStolerances(w->mem, o->rtol, o->atol) != CV_SUCCESS ||
      CVodeSetUserData(w->mem, w) != CV_SUCCESS ||
      CVodeSetLinearSolver(w->mem, w->LS, w->A) != CV_SUCCESS ||
      CVodeSetMaxNumSteps(w->mem, o->max_steps) != CV_SUCCESS ||
      CVodeSetStopTime(w->mem, t_end) != CV_SUCCESS)
    return MBS_ERR_INTEGRATOR;
  if (np == 0) return MBS_OK;
  w->yS = N_VCloneVectorArray(np, w->y);
  if (!w->yS) return MBS_ERR_NO_MEMORY;
  for (int i = 0; i < np; i++) {
    double* s = N_VGetArrayPointer(w->yS[i]);
    if (dy0_dp) memcpy(s, dy0_dp + (size_t)i * ny, (size_t)ny * sizeof(double));
    else memset(s, 0, (size_t)ny * sizeof(double));
  }
  if (CVodeSensInit(w->mem, np, CV_STAGGERED, NULL, w->yS) != CV_SUCCESS ||
      CVodeSetSensParams(w->mem, w->p, w->pbar, w->plist) != CV_SUCCESS ||
      CVodeSensEEtolerances(w->mem) != CV_SUCCESS ||
      CVodeSetSensErrCon(w->mem, SUNTRUE) != CV_SUCCESS)
    return MBS_ERR_INTEGRATOR;
  return MBS_OK;
}

int mbs_forward_sensitivity(const mbs_system* sys, mbs_state* st, const int* param_index,
                            int np, const double* dy0_dp, const double* times, int nt,
                            const mbs_sensitivity_options* o, double* y, double* dy_dp,
                            mbs_error* err) {
  int rc = mbs_sensitivity_check(sys, err);
  if (rc) return rc;
  mbs_sensitivity_options defaults;
  if (!o) {
    mbs_sensitivity_options_default(&defaults);
    o = &defaults;
  }
  rc = check_arguments(sys, st, param_index, np, dy0_dp, times, nt, o, y, dy_dp, err);
  if (rc) return rc;
  const char* name = mbs_system_name(sys);
  const double t0 = mbs_state_time(st);
  // the model must be valid where we start
  if ((rc = mbs_realize_acceleration(sys, st)))
    return MBS_FAIL(err, rc, name, "%s: forward sensitivities at t = %.9g: %s", name, t0,
                    mbs_state_error(st)->message);

  sens_work w;
  memset(&w, 0, sizeof(w));
  w.sys = sys;
  w.st = st;
  w.nq = sys->nq;
  w.nu = sys->nu;
  w.ny = w.nq + w.nu;
  w.np = np;
  w.nparam = sys->nparam;
  const int ny = w.ny;
  rc = setup(&w, param_index, dy0_dp, t0, times[nt - 1], o);
  if (rc) {
    rc = MBS_FAIL(err, rc, name, "%s: forward sensitivities: setting up CVODES failed%s%s%s",
                  name, rc == MBS_ERR_NO_MEMORY ? " (out of memory)" : "",
                  w.cv_message[0] ? ": " : "", w.cv_message);
    work_free(&w);
    return rc;
  }

  // the initial values, reported for output times equal to t0
  double t_reached = t0;         // where CVODES stands
  double t_last = t0;            // the time of y_last
  const double* y_last = NULL;  // the last output row written
  for (int k = 0; k < nt; k++) {
    double* yk = y + (size_t)k * ny;
    double* sk = np ? dy_dp + (size_t)k * np * ny : NULL;
    if (times[k] == t_reached) {
      if (y_last) {
        memcpy(yk, y_last, (size_t)ny * sizeof(double));
        if (np) memcpy(sk, sk - (size_t)np * ny, (size_t)np * ny * sizeof(double));
      } else {  // still at t0
        memcpy(yk, N_VGetArrayPointer(w.y), (size_t)ny * sizeof(double));
        for (int i = 0; i < np; i++)
          memcpy(sk + (size_t)i * ny, N_VGetArrayPointer(w.yS[i]), (size_t)ny * sizeof(double));
      }
    } else {
      realtype tret = t_reached;
      w.cv_message[0] = 0;
      w.rhs_message[0] = 0;
      const int flag = CVode(w.mem, times[k], w.y, &tret, CV_NORMAL);
      if (flag >= 0 && np) {
        const int f2 = CVodeGetSens(w.mem, &tret, w.yS);
        if (f2 != CV_SUCCESS) {
          char fname[48];
          flag_name(f2, fname, sizeof(fname));
          rc = MBS_FAIL(err, MBS_ERR_INTEGRATOR, name,
                        "%s: sensitivity integration failed at t = %.9g: CVodeGetSens %s%s%s",
                        name, times[k], fname,
                        w.cv_message[0] ? ": " : "", w.cv_message);
          break;
        }
      }
      if (flag < 0) {
        realtype tcur = t_reached;
        CVodeGetCurrentTime(w.mem, &tcur);
        char fname[48];
        flag_name(flag, fname, sizeof(fname));
        // the likeliest cause first: the model's own failure, else a stalled sensitivity
        // corrector when atol is too small for CVODES' difference quotients
        const char* hint = "";
        if (!w.rhs_message[0] && np > 0 && o->atol < 1e-9)
          hint = " (atol below 1e-9 makes CVODES' sensitivity difference quotients noisy)";
        rc = MBS_FAIL(err, flag == CV_TOO_MUCH_WORK ? MBS_ERR_STEP_LIMIT : MBS_ERR_INTEGRATOR,
                      name,
                      "%s: sensitivity integration failed at t = %.9g (on the way to %.9g): "
                      "CVODES %s%s%s%s%s%s",
                      name, tcur, times[k], fname, hint,
                      w.rhs_message[0] ? "; the model failed " : "", w.rhs_message,
                      w.cv_message[0] ? "; " : "", w.cv_message);
        break;
      }
      memcpy(yk, N_VGetArrayPointer(w.y), (size_t)ny * sizeof(double));
      for (int i = 0; i < np; i++)
        memcpy(sk + (size_t)i * ny, N_VGetArrayPointer(w.yS[i]), (size_t)ny * sizeof(double));
      t_reached = times[k];
    }
    int bad = -1;
    for (int j = 0; j < ny && bad < 0; j++)
      if (!isfinite(yk[j])) bad = j;
    for (int j = 0; j < np * ny && bad < 0; j++)
      if (!isfinite(sk[j])) bad = ny + j;
    if (bad >= 0) {
      rc = MBS_FAIL(err, MBS_ERR_NAN, name,
                    "%s: sensitivity integration reached a non-finite %s at t = %.9g", name,
                    bad < ny ? "state" : "sensitivity", times[k]);
      break;
    }
    y_last = yk;
    t_last = times[k];
  }
  // leave the State at the last output reached (or where it started) with its parameters
  if (w.ystart) {
    const double t_leave = y_last ? t_last : t0;
    const int rc2 = leave_state(&w, t_leave, y_last ? y_last : w.ystart);
    if (rc == MBS_OK && rc2 != MBS_OK)
      rc = MBS_FAIL(err, rc2, name, "%s: forward sensitivities: at the end, t = %.9g: %s", name,
                    t_leave, mbs_state_error(st)->message);
  }
  work_free(&w);
  return rc;
}
