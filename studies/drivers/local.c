// Local sensitivity: the derivatives of every output with respect to each parameter at its
// nominal value, by central differences — 2D + 1 simulations run in parallel: the nominal
// point, then p_j + h_j and p_j − h_j for each parameter — and, where the model fits that path
// (a smooth ODE: include/mbs/sensitivity.h), by SUNDIALS CVODES' forward sensitivities of the
// nominal run, the two written side by side with their largest difference.
//
//   parameters:
//     - {path: /bodyset/rod1/mass, initial: 1.2}   # the nominal value: initial, else the model's
//   sensitivity:
//     method: local
//     step: 1.0e-4           # h_j = step · |p_j| (step · 1 when p_j = 0; step times the width of
//                            # the distribution's support when it has one and p_j = 0)
//     cvodes: auto           # auto (when the model fits) | true (required) | false
//     outputs: [q1_final]    # the scalars (default: all)
//     trajectories: [q, u]   # also frame by frame
//
// Sample 0 is the nominal run. /sensitivity/scalars/<name>: `derivative` (D, central
// differences; one-sided where a side failed), `normalized` (p_j / y · dy/dp_j), and for
// scalars of q and u at `final` or `mean` `derivative_cvodes`; /sensitivity/trajectories/<q>:
// `derivative` (frames × components × D) and, for q and u, `derivative_cvodes`.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/results.h"
#include "mbs/sensitivity.h"
#include "../test_functions.h"
#include "sensitivity.h"

enum { CV_AUTO = 0, CV_TRUE, CV_FALSE };

typedef struct local_driver {
  sens_common c;
  double step;
  int cvodes;
  double* nominal;   // np (the whole parameter vector at the nominal point)
  double* h;         // D
} local_driver;

static int local_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  local_driver* l = calloc(1, sizeof(*l));
  if (!l) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  d->self = l;
  const mbs_spec_section* sec = mbs_spec_find_section(spec, "sensitivity");
  static const char* const keys[] = {"step", "cvodes"};
  static const char* const modes[] = {"auto", "true", "false"};
  int rc = sens_read_common(sec, keys, 2, &l->c, err);
  if (!rc) rc = mbs_spec_section_number(sec, "step", 1e-4, 0, 1, 0.5, 0, &l->step, err);
  if (!rc) rc = mbs_spec_section_choice(sec, "cvodes", modes, 3, CV_AUTO, &l->cvodes, err);
  return rc;
}

static int local_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  local_driver* l = d->self;
  int rc = sens_plan_common(&l->c, P, 0, "", err);
  if (rc) return rc;
  l->nominal = malloc((size_t)P->np * sizeof(double));
  l->h = malloc((size_t)l->c.D * sizeof(double));
  if (!l->nominal || !l->h) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  sens_fixed_axes(&l->c, P, l->nominal);
  for (int j = 0; j < l->c.D; j++) {
    const int k = l->c.first + j;
    const double p = mbs_plan_nominal(P, k);
    double lo, hi;
    mbs_plan_support(P, k, &lo, &hi);
    const double width = P->par[k].spec->has_dist && isfinite(hi - lo) ? hi - lo : 1;
    l->nominal[k] = p;
    l->h[j] = l->step * (p != 0 ? fabs(p) : width);
    if (!isfinite(p))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, P->par[k].spec->line,
                           "parameters: '%s': its nominal value is not finite", P->par[k].name);
  }
  if (l->cvodes == CV_TRUE) {
    if (P->fn)
      return mbs_spec_section_fail(mbs_spec_find_section(P->spec, "sensitivity"), "cvodes",
                                   MBS_ERR_ARGUMENT, err, "model '%s' is a test function: "
                                   "nothing is integrated", P->fn->name);
    mbs_error ce;
    if (mbs_sensitivity_check(P->sys, &ce))
      return mbs_spec_section_fail(mbs_spec_find_section(P->spec, "sensitivity"), "cvodes",
                                   MBS_ERR_ARGUMENT, err, "%s", ce.message);
    if (d->prep)
      return mbs_spec_section_fail(mbs_spec_find_section(P->spec, "sensitivity"), "cvodes",
                                   MBS_ERR_ARGUMENT, err, "the posture study's preparation "
                                   "is not differentiated: use cvodes: false");
  }
  P->nsamples = 2L * l->c.D + 1;
  return MBS_OK;
}

static void local_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  const local_driver* l = d->self;
  memcpy(params, l->nominal, (size_t)P->np * sizeof(double));
  if (index == 0) return;
  const int j = (int)((index - 1) / 2);
  params[l->c.first + j] += (index % 2 ? 1 : -1) * l->h[j];
}

static int local_analyze(const void* self, const mbs_plan* P, const double* Y,
                         double* const* out, long* used, mbs_error* err) {
  const local_driver* l = self;
  (void)err;
  *used = 0;
  for (long s = 0; s < P->nsamples; s++) *used += !isnan(Y[s]);
  for (int j = 0; j < l->c.D; j++) {
    const double yp = Y[2 * j + 1], ym = Y[2 * j + 2], h = l->h[j];
    double dy = NAN;
    if (!isnan(yp) && !isnan(ym)) dy = (yp - ym) / (2 * h);
    else if (!isnan(yp) && !isnan(Y[0])) dy = (yp - Y[0]) / h;
    else if (!isnan(ym) && !isnan(Y[0])) dy = (Y[0] - ym) / h;
    out[0][j] = dy;
    out[1][j] = Y[0] != 0 ? dy * l->nominal[l->c.first + j] / Y[0] : NAN;
  }
  return MBS_OK;
}

//---------------------------------- CVODES -----------------------------------------------------

// The model's coordinates (or speeds) at y = (q, u): through a scratch State.
static void coords_at(const mbs_plan* P, mbs_state* st, const double* y, int speeds,
                      double* out) {
  const int nq = mbs_system_nq(P->sys), nu = mbs_system_nu(P->sys);
  memcpy(mbs_state_upd_q(st), y, (size_t)nq * sizeof(double));
  memcpy(mbs_state_upd_u(st), y + nq, (size_t)nu * sizeof(double));
  if (speeds) mbs_osim_get_coordinates(P->om, st, NULL, out);
  else mbs_osim_get_coordinates(P->om, st, out, NULL);
}

// d(coordinates)/dp along dy/dp by a central difference of the (smooth, nearly linear) map from
// y to the coordinates
static void coord_derivative(const mbs_plan* P, mbs_state* st, const double* y,
                             const double* dy, int ny, int speeds, double* out, double* a,
                             double* b, double* yy) {
  const int nc = mbs_osim_ncoordinate(P->om);
  double scale = 0;
  for (int i = 0; i < ny; i++) scale = fmax(scale, fabs(dy[i]));
  const double eps = scale > 0 ? 1e-7 / scale : 1e-7;
  for (int i = 0; i < ny; i++) yy[i] = y[i] + eps * dy[i];
  coords_at(P, st, yy, speeds, a);
  for (int i = 0; i < ny; i++) yy[i] = y[i] - eps * dy[i];
  coords_at(P, st, yy, speeds, b);
  for (int c = 0; c < nc; c++) out[c] = (a[c] - b[c]) / (2 * eps);
}

typedef struct cv_result {
  int ok;
  char why[MBS_ERROR_MESSAGE_LEN];
  int nc, nt, D;
  double* dq;   // nt × nc × D
  double* du;
} cv_result;

static int run_cvodes(const local_driver* l, const mbs_driver* d, const mbs_plan* P,
                      cv_result* cv, mbs_error* err) {
  const mbs_system* sys = P->sys;
  const int D = l->c.D, nt = P->nframes, nc = mbs_osim_ncoordinate(P->om);
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys), ny = nq + nu;
  cv->nc = nc;
  cv->nt = nt;
  cv->D = D;
  mbs_error ce;
  if (mbs_sensitivity_check(sys, &ce)) {
    snprintf(cv->why, sizeof(cv->why), "not used: %.280s", ce.message);
    return MBS_OK;
  }
  if (d->prep) {
    snprintf(cv->why, sizeof(cv->why), "not used: the posture study's preparation is not "
             "differentiated");
    return MBS_OK;
  }
  for (int j = 0; j < l->c.D; j++) {
    if (P->par[l->c.first + j].kind == MBS_PK_SYSTEM_SET) {
      snprintf(cv->why, sizeof(cv->why), "not used: '%.200s' sets several parameters at once",
               P->par[l->c.first + j].name);
      return MBS_OK;
    }
    if (P->par[l->c.first + j].kind == MBS_PK_CONTROL) {
      snprintf(cv->why, sizeof(cv->why), "not used: '%.200s' is a control, which the "
               "sensitivities do not differentiate", P->par[l->c.first + j].name);
      return MBS_OK;
    }
  }
  int rc = MBS_OK;
  mbs_state* pristine = mbs_state_create(sys);
  mbs_state* scratch = mbs_state_create(sys);
  mbs_sample* r = mbs_sample_create(P, d);
  int* idx = malloc((size_t)D * sizeof(int));
  double* dy0 = calloc((size_t)D * ny + 1, sizeof(double));
  double* y0 = malloc((size_t)ny * 2 * sizeof(double) + 8);
  double* y = malloc((size_t)nt * ny * sizeof(double) + 8);
  double* dy = malloc((size_t)nt * D * ny * sizeof(double) + 8);
  double* work = malloc((size_t)(3 * nc + ny + 4) * sizeof(double));
  cv->dq = malloc((size_t)nt * nc * D * sizeof(double) + 8);
  cv->du = malloc((size_t)nt * nc * D * sizeof(double) + 8);
  if (!pristine || !scratch || !r || !idx || !dy0 || !y0 || !y || !dy || !work || !cv->dq ||
      !cv->du) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    goto done;
  }
  // the initial state's dependence on initial coordinates and speeds: central differences of
  // the set-up (assembly included)
  for (int j = 0; j < D && rc == MBS_OK; j++) {
    const mbs_param_plan* q = &P->par[l->c.first + j];
    idx[j] = q->kind == MBS_PK_SYSTEM ? q->index : MBS_SENS_INITIAL_ONLY;
    if (q->kind == MBS_PK_SYSTEM) continue;
    for (int side = 0; side < 2 && rc == MBS_OK; side++) {
      memcpy(r->params, l->nominal, (size_t)P->np * sizeof(double));
      r->params[l->c.first + j] += (side ? -1 : 1) * l->h[j];
      rc = mbs_sample_setup(r, pristine);
      memcpy(y0 + side * ny, mbs_state_q(r->st), (size_t)nq * sizeof(double));
      memcpy(y0 + side * ny + nq, mbs_state_u(r->st), (size_t)nu * sizeof(double));
    }
    for (int i = 0; i < ny; i++) dy0[(size_t)j * ny + i] = (y0[i] - y0[ny + i]) / (2 * l->h[j]);
  }
  if (rc == MBS_OK) {
    memcpy(r->params, l->nominal, (size_t)P->np * sizeof(double));
    rc = mbs_sample_setup(r, pristine);
  }
  if (rc != MBS_OK) {
    snprintf(cv->why, sizeof(cv->why), "failed: %.280s", mbs_sample_message(r, rc));
    rc = MBS_OK;
    goto done;
  }
  mbs_sensitivity_options o;
  mbs_sensitivity_options_default(&o);
  o.rtol = fmin(1e-7, P->spec->accuracy);
  if (mbs_forward_sensitivity(sys, r->st, idx, D, dy0, P->times, nt, &o, y, dy, &ce)) {
    snprintf(cv->why, sizeof(cv->why), "failed: %.280s", ce.message);
    goto done;
  }
  mbs_state_copy(sys, scratch, pristine);
  for (int k = 0; k < nt; k++)
    for (int j = 0; j < D; j++) {
      const double* yk = y + (size_t)k * ny;
      const double* sk = dy + ((size_t)k * D + j) * ny;
      double* a = work;
      double* b = work + nc;
      double* out = work + 2 * nc;
      double* yy = work + 3 * nc;
      coord_derivative(P, scratch, yk, sk, ny, 0, out, a, b, yy);
      for (int c = 0; c < nc; c++) cv->dq[((size_t)k * nc + c) * D + j] = out[c];
      coord_derivative(P, scratch, yk, sk, ny, 1, out, a, b, yy);
      for (int c = 0; c < nc; c++) cv->du[((size_t)k * nc + c) * D + j] = out[c];
    }
  cv->ok = 1;
  snprintf(cv->why, sizeof(cv->why), "used: CVODES forward sensitivities (BDF, rtol %g, atol "
           "%g) of the nominal run", o.rtol, o.atol);
done:
  mbs_sample_destroy(r);
  mbs_state_destroy(pristine);
  mbs_state_destroy(scratch);
  free(idx);
  free(dy0);
  free(y0);
  free(y);
  free(dy);
  free(work);
  return rc;
}

// the CVODES derivatives beside the central differences; their largest difference relative to
// the largest derivative, per parameter, over q and u
static int write_cvodes(const local_driver* l, const mbs_plan* P, const cv_result* cv,
                        const char* path, mbs_error* err) {
  mbs_results* r = mbs_results_open(path, err);
  if (!r) return err->code;
  int rc = mbs_results_attribute(r, "/sensitivity", "cvodes", cv->why, err);
  const int D = cv->D, nt = cv->nt, nc = cv->nc;
  double* worst = calloc((size_t)D + 1, sizeof(double));
  double* big = calloc((size_t)D + 1, sizeof(double));
  if (!worst || !big) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int t = 0; cv->ok && !rc && t < l->c.ntrajectories; t++) {
    const char* name = l->c.trajectories[t];
    const double* src = !strcmp(name, "q") ? cv->dq : !strcmp(name, "u") ? cv->du : NULL;
    if (!src) continue;
    char ds[300], fd[300];
    snprintf(ds, sizeof(ds), "/sensitivity/trajectories/%s/derivative_cvodes", name);
    snprintf(fd, sizeof(fd), "/sensitivity/trajectories/%s/derivative", name);
    const long dims[3] = {nt, nc, D};
    rc = mbs_results_write(r, ds, 3, dims, src, NULL, err);
    if (!rc) rc = mbs_results_attach(r, ds, 0, "/time", "time", err);
    char comps[300];
    snprintf(comps, sizeof(comps), "/trajectories/%s_components", name);
    if (!rc) rc = mbs_results_attach(r, ds, 1, comps, "component", err);
    if (!rc)
      rc = mbs_results_attach(r, ds, 2, "/sensitivity/parameter_names", "parameter", err);
    double* v = NULL;
    long vd[4];
    int rank;
    if (!rc) rc = mbs_results_read(r, fd, &v, vd, &rank, err);
    for (long i = 0; !rc && i < (long)nt * nc * D; i++) {
      const int j = (int)(i % D);
      if (isnan(v[i]) || isnan(src[i])) continue;
      worst[j] = fmax(worst[j], fabs(v[i] - src[i]));
      big[j] = fmax(big[j], fabs(src[i]));
    }
    free(v);
  }
  // the scalars of q and u at their final frame or their mean
  for (int i = 0; cv->ok && !rc && i < P->nscal; i++) {
    const mbs_scalar_plan* s = &P->scal[i];
    if (s->source != MBS_SC_QUANTITY) continue;
    const mbs_quantity_plan* q = &P->quant[s->index];
    if ((q->kind != MBS_Q_Q && q->kind != MBS_Q_U) ||
        (s->at != MBS_SPEC_AT_FINAL && s->at != MBS_SPEC_AT_MEAN))
      continue;
    char group[1100], ds[1200];
    snprintf(group, sizeof(group), "/sensitivity/scalars/%s", s->name);
    if (!mbs_results_exists(r, group)) continue;
    const double* src = q->kind == MBS_Q_Q ? cv->dq : cv->du;
    double der[MBS_SOBOL_MAX_DIM * 4];
    for (int j = 0; j < D && j < MBS_SOBOL_MAX_DIM * 4; j++) {
      double acc = 0;
      if (s->at == MBS_SPEC_AT_FINAL) {
        acc = src[((size_t)(nt - 1) * nc + s->comp) * D + j];
      } else {
        for (int k = 0; k < nt; k++) acc += src[((size_t)k * nc + s->comp) * D + j];
        acc /= nt;
      }
      der[j] = acc;
    }
    snprintf(ds, sizeof(ds), "%s/derivative_cvodes", group);
    const long dims[1] = {D};
    rc = mbs_results_write(r, ds, 1, dims, der, NULL, err);
    if (!rc)
      rc = mbs_results_attach(r, ds, 0, "/sensitivity/parameter_names", "parameter", err);
  }
  if (cv->ok && !rc && l->c.ntrajectories > 0) {
    for (int j = 0; j < D; j++) worst[j] = big[j] > 0 ? worst[j] / big[j] : worst[j];
    const long dims[1] = {D};
    rc = mbs_results_write(r, "/sensitivity/cvodes_vs_central_differences", 1, dims, worst, "1",
                           err);
    if (!rc)
      rc = mbs_results_attribute(r, "/sensitivity/cvodes_vs_central_differences", "description",
                                 "per parameter: the largest difference between the two "
                                 "derivatives of the trajectories of q and u, relative to the "
                                 "largest CVODES derivative", err);
  }
  free(worst);
  free(big);
  mbs_error cerr;
  const int crc = mbs_results_close(r, &cerr);
  if (!rc && crc) *err = cerr;
  return rc ? rc : crc;
}

static int local_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  const local_driver* l = d->self;
  static const sens_array arrays[2] = {
      {"derivative", 0, 0, "output units per parameter units"}, {"normalized", 0, 0, "1"}};
  char step[32];
  snprintf(step, sizeof(step), "%.17g", l->step);
  const char* attr[] = {"step", step, "derivative",
                        "central differences (y(p + h) - y(p - h)) / 2h, h = step |p| (one-sided "
                        "where a side failed); normalized: p / y dy/dp",
                        "samples", "0: the nominal point; 2j + 1 and 2j + 2: parameter j "
                        "raised and lowered by its step"};
  int rc = sens_write(path, P, &l->c, "local", attr, (int)(sizeof(attr) / sizeof(attr[0])),
                      arrays, 2, local_analyze, l, err);
  if (rc) return rc;
  // the nominal parameters
  mbs_results* r = mbs_results_open(path, err);
  if (!r) return err->code;
  const long dims[1] = {l->c.D};
  rc = mbs_results_write(r, "/sensitivity/nominal", 1, dims, l->nominal + l->c.first, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/sensitivity/step_sizes", 1, dims, l->h, NULL, err);
  mbs_error cerr;
  if (mbs_results_close(r, &cerr) && !rc) {
    *err = cerr;
    rc = cerr.code;
  }
  if (rc || P->fn || l->cvodes == CV_FALSE) return rc;
  cv_result cv;
  memset(&cv, 0, sizeof(cv));
  rc = run_cvodes(l, d, P, &cv, err);
  if (!rc && !cv.ok && l->cvodes == CV_TRUE)
    rc = MBS_FAIL(err, MBS_ERR_INTEGRATOR, "study", "sensitivity.cvodes: %s", cv.why);
  if (!rc) rc = write_cvodes(l, P, &cv, path, err);
  free(cv.dq);
  free(cv.du);
  return rc;
}

static void local_destroy(mbs_driver* d) {
  local_driver* l = d->self;
  if (l) {
    sens_free_common(&l->c);
    free(l->nominal);
    free(l->h);
  }
  free(l);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_local = {
    .name = "local_sensitivity",
    .create = local_create,
    .plan = local_plan,
    .point = local_point,
    .finish = local_finish,
    .destroy = local_destroy,
};
