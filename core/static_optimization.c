// Static optimization (mbs/static_optimization.h): the rows of the acceleration constraints
// at one State, then least-distance programming (p = 2) or a sequential quadratic method
// (other p) for the controls.
#include "mbs/static_optimization.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics_split.h"
#include "least_distance.h"
#include "mbs/constraint.h"
#include "mbs/dynamics.h"
#include "mbs/force.h"
#include "mbs/path.h"
#include "model_impl.h"

#define SO_SQP_MIN_CHANGE 1e-13   // p != 2: relative objective change that ends the iteration
#define SO_REPORT_TOL 1e-6        // a row short by more than this (relative) is reported
#define SO_BEST_EFFORT_EPS 1e-10  // weight of the controls in the closest-approach problem

//---------------------------------- muscle capacity --------------------------------------------

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

int mbs_muscle_inextensible_tendon_active_force(const mbs_muscle_model* m, double lmt,
                                                double vmt, double activation, double* force,
                                                mbs_error* err) {
  if (!m || !force) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "%s: no model or output", __func__);
  *force = 0;
  if (!isfinite(lmt) || !isfinite(vmt) || !isfinite(activation))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "%s: length %g, speed %g, activation %g: not "
                    "finite", __func__, lmt, vmt, activation);
  const mbs_muscle_params* p = &m->p;
  const double fiso = p->max_isometric_force, lopt = p->optimal_fiber_length;
  switch (p->kind) {
    case MBS_MUSCLE_THELEN2003:
    case MBS_MUSCLE_MILLARD2012:
    case MBS_MUSCLE_DEGROOTE2016: {
      const double along = lmt - p->tendon_slack_length;
      const double l = sqrt(along * along + m->width * m->width);
      const int degroote = p->kind == MBS_MUSCLE_DEGROOTE2016;
      if (!degroote && !(l > m->min_fiber_length)) return MBS_OK;
      double alpha, cosa;
      mbs_muscle_pennation(m, l, &alpha, &cosa, NULL);
      const double v = vmt * cosa / (lopt * p->max_contraction_velocity);
      const double ln = l / lopt;
      double d[3];
      if (p->kind == MBS_MUSCLE_THELEN2003) {
        const double a = clampd(activation, p->minimum_activation, 1);
        mbs_thelen2003_active_force_length(&p->thelen, ln, d);
        const double fv = fmax(0, mbs_thelen2003_fv(&p->thelen, a, v, NULL));
        *force = fiso * a * d[0] * fv * cosa;
      } else if (p->kind == MBS_MUSCLE_MILLARD2012) {
        const double a = clampd(activation, p->minimum_activation, 1);
        mbs_bezier_curve_eval(&m->c.millard.afl, ln, d);
        const double fal = d[0];
        mbs_bezier_curve_eval(&m->c.millard.fv, v, d);
        *force = fiso * a * fal * d[0] * cosa;
      } else {
        mbs_degroote2016_active_force_length(&p->degroote, ln, d);
        const double fal = d[0];
        mbs_degroote2016_force_velocity(v, d);
        *force = fiso * activation * fal * d[0];
      }
      return MBS_OK;
    }
    case MBS_MUSCLE_RIGID_TENDON: {
      mbs_muscle_output out;
      int rc = mbs_muscle_eval(m, lmt, vmt, activation, 0, &out, err);
      if (rc) return rc;
      *force = fiso * activation * out.active_force_length_multiplier *
               out.force_velocity_multiplier * out.cos_pennation;
      return MBS_OK;
    }
    case MBS_MUSCLE_THELEN2003_DEPRECATED:
    case MBS_MUSCLE_SCHUTTE1993:
    case MBS_MUSCLE_DELP1990: {
      mbs_muscle_equilibrium eq;
      const double vs = p->kind == MBS_MUSCLE_THELEN2003_DEPRECATED ? vmt : 0;
      int rc = mbs_muscle_equilibrium_solve(m, activation, lmt, vs, 0, &eq, err);
      if (rc) return rc;
      const double v = -cos(p->pennation_angle_at_optimal) * vmt /
                       (p->max_contraction_velocity * lopt);
      const double fv = 1.8 - 1.8 / (1 + exp((0.04 - v) / 0.18));
      *force = eq.tendon_force * fv;
      return MBS_OK;
    }
    default: break;
  }
  return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "%s: muscle kind %d unknown", __func__,
                  (int)p->kind);
}

//---------------------------------- setup ------------------------------------------------------

void mbs_so_options_default(mbs_so_options* o) {
  memset(o, 0, sizeof(*o));
  o->activation_exponent = 2;
  o->use_muscle_physiology = 1;
  o->convergence_criterion = 1e-4;
  o->max_iterations = 100;
}

struct mbs_so {
  const mbs_system* sys;
  int nu, nb, np;
  double p, conv;
  int physiology, maxit;
  int* ctrl;          // np: control of each parameter
  int* force;         // np: its force element
  double* lo;         // np
  double* hi;         // np
  char** speed_names; // nu (copies), or NULL
  mbs_state* ws;      // work State
  double* F;          // 6 nb
  double* Fo;         // 6 nb: other forces' body forces
  double* fm;         // nu
  double* fo;         // nu
  double* g;          // nu
  double* gother;     // nu
  double* C;          // nu
  double* a;          // nu
  double* e;          // mcon
  double* gact;       // nu x np, column-major
  double* fopt;       // np
  unsigned char* dependent;  // nu
  int nrow;
  int* row_u;         // nu
  double* A;          // nu x np, column-major (ld nu)
  double* b;          // nu
  double* x;          // np
  double* lam;        // nu
  // p != 2
  double* grad;       // np
  double* hs;         // np: sqrt of the Hessian's diagonal
  double* Ay;         // nu x np
  double* by;         // nu
  double* ylo;        // np
  double* yhi;        // np
  double* y;          // np
  double* xn;         // np
  // closest approach: (x, r) with A x - r = b
  double* Abig;       // nu x (np + nu)
  double* lob;        // np + nu
  double* hib;        // np + nu
  double* xb;         // np + nu
  mbs_lsd* lsd;
  mbs_cresp* cr;
  int mcon;
};

void mbs_so_free(mbs_so* so) {
  if (!so) return;
  if (so->speed_names)
    for (int i = 0; i < so->nu; i++) free(so->speed_names[i]);
  free(so->speed_names);
  free(so->ctrl); free(so->force); free(so->lo); free(so->hi);
  mbs_state_destroy(so->ws);
  free(so->F); free(so->Fo); free(so->fm); free(so->fo); free(so->g); free(so->gother);
  free(so->C); free(so->a); free(so->e); free(so->gact); free(so->fopt); free(so->dependent);
  free(so->row_u); free(so->A); free(so->b); free(so->x); free(so->lam); free(so->grad);
  free(so->hs); free(so->Ay); free(so->by); free(so->ylo); free(so->yhi); free(so->y);
  free(so->xn); free(so->Abig); free(so->lob); free(so->hib); free(so->xb);
  mbs_lsd_free(so->lsd);
  mbs_cresp_free(so->cr);
  free(so);
}

static void* zalloc(size_t n, size_t size) { return calloc(n ? n : 1, size); }

int mbs_so_create(const mbs_system* sys, const mbs_so_options* opt, mbs_so** out,
                  mbs_error* err) {
  if (out) *out = NULL;
  if (!sys || !out) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "%s: no system or output", __func__);
  if (!mbs_system_is_finalized(sys))
    return MBS_FAIL(err, MBS_ERR_NOT_FINALIZED, mbs_system_name(sys),
                    "%s: static optimization needs a finalized system", mbs_system_name(sys));
  mbs_so_options o;
  if (opt) o = *opt;
  else mbs_so_options_default(&o);
  const char* sn = mbs_system_name(sys);
  if (!(o.activation_exponent > 1) || !isfinite(o.activation_exponent))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "StaticOptimization",
                    "StaticOptimization: activation_exponent %g must be a number above 1 (the "
                    "objective sum |x|^p is then strictly convex)", o.activation_exponent);
  if (!(o.convergence_criterion > 0)) o.convergence_criterion = 1e-4;
  if (o.max_iterations < 1) o.max_iterations = 100;
  const int nc = mbs_system_ncontrol(sys);
  int np = 0;
  for (int c = 0; c < nc; c++)
    if (!o.exclude || !o.exclude[c]) np++;
  mbs_so* so = calloc(1, sizeof(*so));
  if (!so) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, sn, "%s: out of memory", sn);
  so->sys = sys;
  so->nu = mbs_system_nu(sys);
  so->nb = mbs_system_nbody(sys);
  so->np = np;
  so->p = o.activation_exponent;
  so->conv = o.convergence_criterion;
  so->physiology = o.use_muscle_physiology;
  so->maxit = o.max_iterations;
  so->mcon = sys->mcon;
  const size_t nu = (size_t)so->nu, nb = (size_t)so->nb, n = (size_t)np;
  so->ctrl = zalloc(n, sizeof(int));
  so->force = zalloc(n, sizeof(int));
  so->lo = zalloc(n, sizeof(double));
  so->hi = zalloc(n, sizeof(double));
  so->ws = mbs_state_create(sys);
  so->F = zalloc(6 * nb, sizeof(double));
  so->Fo = zalloc(6 * nb, sizeof(double));
  so->fm = zalloc(nu, sizeof(double));
  so->fo = zalloc(nu, sizeof(double));
  so->g = zalloc(nu, sizeof(double));
  so->gother = zalloc(nu, sizeof(double));
  so->C = zalloc(nu, sizeof(double));
  so->a = zalloc(nu, sizeof(double));
  so->e = zalloc((size_t)so->mcon, sizeof(double));
  so->gact = zalloc(nu * n, sizeof(double));
  so->fopt = zalloc(n, sizeof(double));
  so->dependent = zalloc(nu, 1);
  so->row_u = zalloc(nu, sizeof(int));
  so->A = zalloc(nu * n, sizeof(double));
  so->b = zalloc(nu, sizeof(double));
  so->x = zalloc(n, sizeof(double));
  so->lam = zalloc(nu, sizeof(double));
  so->grad = zalloc(n, sizeof(double));
  so->hs = zalloc(n, sizeof(double));
  so->Ay = zalloc(nu * n, sizeof(double));
  so->by = zalloc(nu, sizeof(double));
  so->ylo = zalloc(n, sizeof(double));
  so->yhi = zalloc(n, sizeof(double));
  so->y = zalloc(n, sizeof(double));
  so->xn = zalloc(n, sizeof(double));
  so->Abig = zalloc(nu * (n + nu), sizeof(double));
  so->lob = zalloc(n + nu, sizeof(double));
  so->hib = zalloc(n + nu, sizeof(double));
  so->xb = zalloc(n + nu, sizeof(double));
  so->lsd = mbs_lsd_create(np + so->nu, so->nu);
  so->cr = mbs_cresp_create(so->nu, so->mcon);
  if (!so->ctrl || !so->force || !so->lo || !so->hi || !so->ws || !so->F || !so->Fo ||
      !so->fm || !so->fo || !so->g || !so->gother || !so->C || !so->a || !so->e || !so->gact ||
      !so->fopt || !so->dependent || !so->row_u || !so->A || !so->b || !so->x || !so->lam ||
      !so->grad || !so->hs || !so->Ay || !so->by || !so->ylo || !so->yhi || !so->y ||
      !so->xn || !so->Abig || !so->lob || !so->hib || !so->xb || !so->lsd || !so->cr) {
    mbs_so_free(so);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, sn, "%s: out of memory", sn);
  }
  if (o.speed_names) {
    so->speed_names = calloc(nu ? nu : 1, sizeof(char*));
    if (!so->speed_names) {
      mbs_so_free(so);
      return MBS_FAIL(err, MBS_ERR_NO_MEMORY, sn, "%s: out of memory", sn);
    }
    for (size_t i = 0; i < nu; i++)
      if (o.speed_names[i] && !(so->speed_names[i] = strdup(o.speed_names[i]))) {
        mbs_so_free(so);
        return MBS_FAIL(err, MBS_ERR_NO_MEMORY, sn, "%s: out of memory", sn);
      }
  }
  int j = 0;
  for (int c = 0; c < nc; c++) {
    if (o.exclude && o.exclude[c]) continue;
    const int f = mbs_control_force(sys, c);
    const int muscle = sys->force[f].type == MBS_FORCE_MUSCLE;
    so->ctrl[j] = c;
    so->force[j] = f;
    so->lo[j] = o.lower ? o.lower[c] : (muscle ? 0.0 : -INFINITY);
    so->hi[j] = o.upper ? o.upper[c] : (muscle ? 1.0 : INFINITY);
    if (isnan(so->lo[j]) || isnan(so->hi[j]) || so->lo[j] > so->hi[j]) {
      const char* name = mbs_force_name(sys, f);
      MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
               "actuator '%s': its control bounds [%g, %g] leave no value", name, so->lo[j],
               so->hi[j]);
      mbs_so_free(so);
      return MBS_ERR_ARGUMENT;
    }
    j++;
  }
  *out = so;
  return MBS_OK;
}

int mbs_so_nparam(const mbs_so* so) { return so ? so->np : 0; }
int mbs_so_param_control(const mbs_so* so, int j) {
  return so && j >= 0 && j < so->np ? so->ctrl[j] : -1;
}
int mbs_so_param_force(const mbs_so* so, int j) {
  return so && j >= 0 && j < so->np ? so->force[j] : -1;
}

//---------------------------------- the rows ---------------------------------------------------

static const char* speed_name(const mbs_so* so, int i, char* buf, size_t n) {
  if (so->speed_names && so->speed_names[i]) return so->speed_names[i];
  const mbs_system* sys = so->sys;
  for (int b = 1; b < so->nb; b++) {
    const int ua = mbs_body_uadr(sys, b), nub = mbs_body_nu(sys, b);
    if (i >= ua && i < ua + nub) {
      if (nub == 1) snprintf(buf, n, "%s", mbs_body_mobilizer_name(sys, b));
      else snprintf(buf, n, "%s[%d]", mbs_body_mobilizer_name(sys, b), i - ua);
      return buf;
    }
  }
  snprintf(buf, n, "speed %d", i);
  return buf;
}

// a failure of the work State, with the time
static int ws_fail(mbs_so* so, int rc, mbs_error* err) {
  const mbs_error* e = mbs_state_error(so->ws);
  if (e && e->code) {
    if (err) *err = *e;
    return e->code;
  }
  return MBS_FAIL(err, rc, mbs_system_name(so->sys), "%s: static optimization failed (%s)",
                  mbs_system_name(so->sys), mbs_status_text(rc));
}

// the actuators' unit columns g_j (x_j = 1) and their forces F_j
static int actuator_columns(mbs_so* so, mbs_error* err) {
  const mbs_system* sys = so->sys;
  mbs_state* ws = so->ws;
  const int nu = so->nu;
  for (int j = 0; j < so->np; j++) {
    const mbs_force_desc* fd = &sys->force[so->force[j]];
    double* col = so->gact + (size_t)j * nu;
    int rc;
    if (fd->type == MBS_FORCE_MUSCLE) {
      const int path = mbs_force_path(sys, so->force[j]);
      double L, V;
      if ((rc = mbs_calc_path_length(sys, ws, path, &L, &V)) ||
          (rc = mbs_calc_path_moment_arms(sys, ws, path, col)))
        return ws_fail(so, rc, err);
      const mbs_muscle_model* m =
          (const mbs_muscle_model*)(const void*)(ws->force_icache + fd->icache_adr);
      double fj = m->p.max_isometric_force;
      if (so->physiology) {
        mbs_error e;
        if ((rc = mbs_muscle_inextensible_tendon_active_force(m, L, V, 1.0, &fj, &e)))
          return MBS_FAIL(err, rc, fd->name, "muscle '%s': its force capacity at t = %g: %s",
                          fd->name, mbs_state_time(ws), e.message);
      }
      so->fopt[j] = fj;
      for (int i = 0; i < nu; i++) col[i] *= fj;
    } else {
      // the actuator alone at control 1 (an activation actuator at activation 1)
      const int c = fd->control;
      const double save_c = ws->control_eff[c];
      double save_z = 0;
      const int za = fd->type == MBS_FORCE_ACTIVATION_COORDINATE_ACTUATOR ? fd->z_adr : -1;
      if (za >= 0) {
        save_z = ws->z[za];
        ws->z[za] = 1;
      }
      ws->control_eff[c] = 1;
      mbs_split_force(sys, ws, so->force[j], so->F, so->fm);
      so->fopt[j] = ws->force_cache[fd->cache_adr];  // the tension, optimal_force x 1
      ws->control_eff[c] = save_c;
      if (za >= 0) ws->z[za] = save_z;
      if ((rc = mbs_split_generalized(sys, ws, so->F, so->fm, col))) return ws_fail(so, rc, err);
    }
    for (int i = 0; i < nu; i++)
      if (!isfinite(col[i]))
        return MBS_FAIL(err, MBS_ERR_NAN, fd->name,
                        "actuator '%s': its generalized forces at t = %g are not finite",
                        fd->name, mbs_state_time(ws));
  }
  return MBS_OK;
}

// the other force elements (and the State's applied forces), generalized
static int other_forces(mbs_so* so, mbs_error* err) {
  const mbs_system* sys = so->sys;
  mbs_state* ws = so->ws;
  const int nu = so->nu, nb = so->nb;
  memcpy(so->Fo, ws->F_applied, 6 * (size_t)nb * sizeof(double));
  memcpy(so->fo, ws->f_applied, (size_t)nu * sizeof(double));
  for (int i = 0; i < sys->nforce; i++) {
    if (sys->force[i].control >= 0) continue;  // actuators: their force is x_j F_j
    mbs_split_force(sys, ws, i, so->F, so->fm);
    for (int k = 0; k < 6 * nb; k++) so->Fo[k] += so->F[k];
    for (int k = 0; k < nu; k++) so->fo[k] += so->fm[k];
  }
  int rc = mbs_split_generalized(sys, ws, so->Fo, so->fo, so->gother);
  if (rc) return ws_fail(so, rc, err);
  for (int k = 0; k < nu; k++)
    if (!isfinite(so->gother[k])) {
      rc = mbs_diagnose_forces(sys, ws);
      (void)rc;
      const mbs_error* e = mbs_state_error(ws);
      if (e->code == MBS_ERR_NAN) {
        if (err) *err = *e;
        return MBS_ERR_NAN;
      }
      return MBS_FAIL(err, MBS_ERR_NAN, mbs_system_name(sys),
                      "%s: the forces other than the actuators' are not finite at t = %g",
                      mbs_system_name(sys), mbs_state_time(ws));
    }
  return MBS_OK;
}

// rows A x = b and their speeds
static int build_rows(mbs_so* so, const double* udot, int* constrained, mbs_error* err) {
  const mbs_system* sys = so->sys;
  mbs_state* ws = so->ws;
  const int nu = so->nu, np = so->np;
  int m = 0, rc;
  if ((rc = mbs_cresp_prepare(so->cr, sys, ws, NULL, 0, &m))) return ws_fail(so, rc, err);
  if ((rc = mbs_calc_bias_forces(sys, ws, so->C))) return ws_fail(so, rc, err);
  if (m == 0) {
    // M u' + C = f_other + G x
    if ((rc = mbs_calc_mass_matrix_times(sys, ws, udot, so->b))) return ws_fail(so, rc, err);
    so->nrow = nu;
    for (int i = 0; i < nu; i++) {
      so->row_u[i] = i;
      so->b[i] += so->C[i] - so->gother[i];
    }
    memcpy(so->A, so->gact, (size_t)nu * np * sizeof(double));
    *constrained = 0;
    return MBS_OK;
  }
  // the speeds the constraints make dependent (OpenSim's Coordinate::isConstrained)
  memset(so->dependent, 0, (size_t)nu);
  for (int k = 0; k < sys->ncon; k++) {
    if (ws->con_eq[k] < 0) continue;
    const mbs_constraint_desc* d = &sys->con[k];
    if ((d->type == MBS_CON_LOCKED_COORDINATE || d->type == MBS_CON_PRESCRIBED_MOTION ||
         d->type == MBS_CON_COORDINATE_COUPLER || d->type == MBS_CON_CONSTANT_SPEED ||
         d->type == MBS_CON_CONSTANT_ACCELERATION) && d->ud >= 0 && d->ud < nu)
      so->dependent[d->ud] = 1;
  }
  so->nrow = 0;
  for (int i = 0; i < nu; i++)
    if (!so->dependent[i]) so->row_u[so->nrow++] = i;
  // baseline: the constrained accelerations with every actuator at zero
  for (int i = 0; i < nu; i++) so->g[i] = so->gother[i] - so->C[i];
  if ((rc = mbs_calc_mass_matrix_inverse_times(sys, ws, so->g, so->a)))
    return ws_fail(so, rc, err);
  int ne = 0;
  if ((rc = mbs_calc_acceleration_errors_of(sys, ws, so->a, so->e, &ne)))
    return ws_fail(so, rc, err);
  mbs_cresp_project(so->cr, so->a, so->e, NULL);
  for (int r = 0; r < so->nrow; r++) so->b[r] = udot[so->row_u[r]] - so->a[so->row_u[r]];
  // each actuator's constrained response
  for (int j = 0; j < np; j++) {
    if ((rc = mbs_calc_mass_matrix_inverse_times(sys, ws, so->gact + (size_t)j * nu, so->a)))
      return ws_fail(so, rc, err);
    mbs_cresp_project(so->cr, so->a, NULL, NULL);
    for (int r = 0; r < so->nrow; r++) so->A[(size_t)j * nu + r] = so->a[so->row_u[r]];
  }
  *constrained = 1;
  return MBS_OK;
}

//---------------------------------- solving ----------------------------------------------------

static double objective(const mbs_so* so, const double* x) {
  double s = 0;
  for (int j = 0; j < so->np; j++) s += so->p == 2 ? x[j] * x[j] : pow(fabs(x[j]), so->p);
  return s;
}

// p != 2: sequential quadratic steps from the (feasible) p = 2 solution in so->x
static int sqp(mbs_so* so, int* iterations) {
  const int np = so->np, nr = so->nrow, nu = so->nu;
  const double p = so->p;
  double f = objective(so, so->x);
  int it = 0;
  for (it = 1; it <= so->maxit; it++) {
    double xmax = 0;
    for (int j = 0; j < np; j++) xmax = fmax(xmax, fabs(so->x[j]));
    if (xmax == 0) break;
    // gradient and the Hessian's diagonal, kept within 1e-8 .. 1e8 of its value at |x| = xmax
    const double href = p * (p - 1) * pow(xmax, p - 2);
    for (int j = 0; j < np; j++) {
      const double ax = fabs(so->x[j]);
      so->grad[j] = p * pow(ax, p - 1) * (so->x[j] < 0 ? -1 : 1);
      double h = ax > 0 ? p * (p - 1) * pow(ax, p - 2) : (p > 2 ? 0 : INFINITY);
      h = clampd(h, 1e-8 * href, 1e8 * href);
      so->hs[j] = sqrt(h);
    }
    // y = H^1/2 d + H^-1/2 grad: min ||y||, A H^-1/2 y = A H^-1 grad, bounds on d
    for (int r = 0; r < nr; r++) so->by[r] = 0;
    for (int j = 0; j < np; j++) {
      const double s = so->hs[j], gs = so->grad[j] / s;
      for (int r = 0; r < nr; r++) {
        const double ar = so->A[(size_t)j * nu + r];
        so->Ay[(size_t)j * nu + r] = ar / s;
        so->by[r] += ar * gs / s;
      }
      so->ylo[j] = isfinite(so->lo[j]) ? s * (so->lo[j] - so->x[j]) + gs : -INFINITY;
      so->yhi[j] = isfinite(so->hi[j]) ? s * (so->hi[j] - so->x[j]) + gs : INFINITY;
    }
    if (mbs_lsd_solve(so->lsd, nr, np, so->Ay, nu, so->by, so->ylo, so->yhi, so->y, NULL, NULL,
                      NULL) != MBS_LSD_OK)
      break;  // the current point stays (feasible)
    // d = H^-1/2 (y - H^-1/2 grad) in so->xn, then a backtracking line search
    double slope = 0, dmax = 0;
    for (int j = 0; j < np; j++) {
      const double s = so->hs[j];
      so->xn[j] = (so->y[j] - so->grad[j] / s) / s;
      slope += so->grad[j] * so->xn[j];
      dmax = fmax(dmax, fabs(so->xn[j]));
    }
    if (dmax <= 1e-15 * (1 + xmax) || slope >= 0) break;
    double alpha = 1, fn = f;
    for (int ls = 0; ls < 60; ls++, alpha *= 0.5) {
      double s = 0;
      for (int j = 0; j < np; j++) {
        double v = so->x[j] + alpha * so->xn[j];
        v = clampd(v, so->lo[j], so->hi[j]);
        s += pow(fabs(v), p);
      }
      fn = s;
      if (fn <= f + 1e-4 * alpha * slope) break;
    }
    if (!(fn < f)) break;
    for (int j = 0; j < np; j++)
      so->x[j] = clampd(so->x[j] + alpha * so->xn[j], so->lo[j], so->hi[j]);
    const double change = (f - fn) / (fabs(f) > 1e-300 ? fabs(f) : 1);
    f = fn;
    if (change <= SO_SQP_MIN_CHANGE) break;
  }
  *iterations = it > so->maxit ? so->maxit : it;
  return it > so->maxit ? MBS_ERR_STEP_LIMIT : MBS_OK;
}

// the controls that come closest: min ||A x - b||^2 + eps ||x||^2 within the bounds, as the
// least-distance problem in y = (sqrt(eps) x, r) with A x - r = b
static int closest(mbs_so* so) {
  const int np = so->np, nr = so->nrow, nu = so->nu, nv = np + nr;
  double an = 0;
  for (int j = 0; j < np; j++)
    for (int r = 0; r < nr; r++) an += so->A[(size_t)j * nu + r] * so->A[(size_t)j * nu + r];
  const double eps = SO_BEST_EFFORT_EPS * (an > 0 ? an / (np > 0 ? np : 1) : 1);
  const double se = sqrt(eps);
  memset(so->Abig, 0, (size_t)nu * nv * sizeof(double));
  for (int j = 0; j < np; j++) {
    for (int r = 0; r < nr; r++) so->Abig[(size_t)j * nu + r] = so->A[(size_t)j * nu + r] / se;
    so->lob[j] = so->lo[j] * se;
    so->hib[j] = so->hi[j] * se;
  }
  for (int r = 0; r < nr; r++) {
    so->Abig[(size_t)(np + r) * nu + r] = -1;
    so->lob[np + r] = -INFINITY;
    so->hib[np + r] = INFINITY;
  }
  const int rc = mbs_lsd_solve(so->lsd, nr, nv, so->Abig, nu, so->b, so->lob, so->hib, so->xb,
                               NULL, NULL, NULL);
  for (int j = 0; j < np; j++)
    so->x[j] = rc == MBS_LSD_OK ? clampd(so->xb[j] / se, so->lo[j], so->hi[j])
                                : clampd(0, so->lo[j], so->hi[j]);
  return rc;
}

static double row_residual(const mbs_so* so, int r) {
  double s = -so->b[r];
  for (int j = 0; j < so->np; j++) s += so->A[(size_t)j * so->nu + r] * so->x[j];
  return s;
}

// the message for rows that cannot be met (after closest() filled so->x)
static int report_short(mbs_so* so, int constrained, int bad_row, mbs_error* err) {
  const mbs_system* sys = so->sys;
  const double t = mbs_state_time(so->ws);
  char msg[MBS_ERROR_MESSAGE_LEN], name[128];
  const char* unit = constrained ? "acceleration" : "generalized force";
  int len = 0, nshown = 0;
  if (bad_row >= 0) {
    double anorm = 0;
    for (int j = 0; j < so->np; j++) anorm += fabs(so->A[(size_t)j * so->nu + bad_row]);
    const char* sp = speed_name(so, so->row_u[bad_row], name, sizeof name);
    if (anorm == 0)
      len = snprintf(msg, sizeof msg, "static optimization at t = %g: no actuator drives "
                     "coordinate '%s', which needs %s %g", t, sp, unit, so->b[bad_row]);
    else
      len = snprintf(msg, sizeof msg, "static optimization at t = %g: the actuators cannot "
                     "drive coordinate '%s' independently of the others (their moment arms "
                     "are linearly dependent)", t, sp);
    return MBS_FAIL(err, MBS_ERR_ASSEMBLY, sp, "%s", msg);
  }
  len = snprintf(msg, sizeof msg, "static optimization at t = %g: the actuators cannot meet "
                 "the accelerations within their bounds:", t);
  for (int r = 0; r < so->nrow && len < (int)sizeof msg; r++) {
    const double res = row_residual(so, r);
    if (fabs(res) <= SO_REPORT_TOL * (1 + fabs(so->b[r]))) continue;
    const char* sp = speed_name(so, so->row_u[r], name, sizeof name);
    if (nshown < 4)
      len += snprintf(msg + len, sizeof msg - (size_t)len, "%s coordinate '%s' short by %.4g of "
                      "the %s %.4g it needs", nshown ? ";" : "", sp, -res, unit, so->b[r]);
    nshown++;
  }
  if (nshown > 4 && len < (int)sizeof msg)
    len += snprintf(msg + len, sizeof msg - (size_t)len, "; and %d more", nshown - 4);
  int nb = 0;
  for (int j = 0; j < so->np && len < (int)sizeof msg; j++) {
    const int at = so->x[j] <= so->lo[j] || so->x[j] >= so->hi[j];
    if (!at) continue;
    if (nb < 6)
      len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%s", nb ? ", " : " (at their "
                      "bounds: ", mbs_force_name(sys, so->force[j]));
    nb++;
  }
  if (nb && len < (int)sizeof msg)
    snprintf(msg + len, sizeof msg - (size_t)len, nb > 6 ? ", ...)" : ")");
  return MBS_FAIL(err, MBS_ERR_ASSEMBLY, mbs_system_name(sys), "%s", msg);
}

int mbs_so_solve(mbs_so* so, const mbs_state* st, const double* udot, double* activation,
                 double* force, mbs_so_info* info, mbs_error* err) {
  if (!so || !st || !udot || !activation)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "%s: missing argument", __func__);
  const mbs_system* sys = so->sys;
  const int nu = so->nu, np = so->np;
  const char* sn = mbs_system_name(sys);
  char name[128];
  if (info) memset(info, 0, sizeof(*info));
  const double t = mbs_state_time(st);
  if (!isfinite(t)) return MBS_FAIL(err, MBS_ERR_ARGUMENT, sn, "%s: the time is not finite", sn);
  const double* q = mbs_state_q(st);
  const double* u = mbs_state_u(st);
  for (int i = 0; i < mbs_system_nq(sys); i++)
    if (!isfinite(q[i]))
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, sn, "static optimization at t = %g: coordinate "
                      "value %d is not finite", t, i);
  for (int i = 0; i < nu; i++) {
    if (!isfinite(u[i]))
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, sn, "static optimization at t = %g: the speed "
                      "of '%s' is not finite", t, speed_name(so, i, name, sizeof name));
    if (!isfinite(udot[i]))
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, sn, "static optimization at t = %g: the desired "
                      "acceleration of '%s' is not finite", t,
                      speed_name(so, i, name, sizeof name));
  }
  mbs_error_clear(&so->ws->err);
  int rc = mbs_state_copy(sys, so->ws, st);
  if (rc) return ws_fail(so, rc, err);
  if ((rc = mbs_realize_velocity(sys, so->ws))) return ws_fail(so, rc, err);
  mbs_calc_controls(sys, so->ws);
  int constrained = 0;
  if ((rc = other_forces(so, err)) || (rc = actuator_columns(so, err)) ||
      (rc = build_rows(so, udot, &constrained, err)))
    return rc;
  // p = 2, exactly
  int bad = -1, nactive = 0, iterations = 0;
  const int lrc = mbs_lsd_solve(so->lsd, so->nrow, np, so->A, nu, so->b, so->lo, so->hi, so->x,
                                NULL, &bad, &nactive);
  int status = MBS_OK;
  if (lrc == MBS_LSD_INCONSISTENT || lrc == MBS_LSD_INFEASIBLE) {
    closest(so);
    status = report_short(so, constrained, lrc == MBS_LSD_INCONSISTENT ? bad : -1, err);
    // the row index of an inconsistency refers to so->row_u through its row
  } else if (lrc != MBS_LSD_OK) {
    closest(so);
    status = MBS_FAIL(err, MBS_ERR_SINGULAR, sn, "static optimization at t = %g: the "
                      "least-distance solution failed", t);
  } else if (so->p != 2) {
    if (sqp(so, &iterations) == MBS_ERR_STEP_LIMIT)
      status = MBS_FAIL(err, MBS_ERR_STEP_LIMIT, sn, "static optimization at t = %g: no "
                        "convergence in %d iterations (activation_exponent %g)", t, so->maxit,
                        so->p);
    nactive = 0;
    for (int j = 0; j < np; j++) nactive += so->x[j] <= so->lo[j] || so->x[j] >= so->hi[j];
  }
  for (int j = 0; j < np; j++) {
    activation[j] = so->x[j];
    if (force) force[j] = so->x[j] * so->fopt[j];
  }
  if (info) {
    info->objective = objective(so, so->x);
    double v = 0;
    for (int r = 0; r < so->nrow; r++) v = fmax(v, fabs(row_residual(so, r)));
    info->max_violation = v;
    info->nrow = so->nrow;
    info->nactive = nactive;
    info->iterations = iterations;
    info->constrained_form = constrained;
  }
  return status;
}
