// Parameter fitting: the parameters (within their bounds) for which the simulations match the
// targets (targets.h) best in the weighted least-squares sense, cost = ½ Σ r². A global phase of
// CMA-ES (Hansen's evolution strategy; one generation is one distributed batch; IPOP restarts)
// is followed by a local refinement by Levenberg–Marquardt (its central-difference Jacobian
// stencil of 2n + 1 points is one batch, its trial dampings another), both ask/tell state
// machines of include/mbs/optim.h. When it ends, /fit holds the fitted parameters, their
// covariance from the Jacobian at the fit, the residuals and the convergence log.
//
//   parameters:                    # bounds: a uniform distribution (or truncated normal)
//     - {path: /bodyset/block1/mass, initial: 2.6, distribution: {type: uniform, low: 0.5, high: 5}}
//   fit:
//     targets: [...]               # targets.h
//     method: cmaes+lm             # cmaes+lm | cmaes | lm
//     seed: 1
//     population: 0                # CMA-ES λ (0: 4 + ⌊3 ln n⌋)
//     sigma: 0.3                   # CMA-ES initial step, as a fraction of each range
//     generations: 100             # CMA-ES per run
//     restarts: 1                  # IPOP restarts (population doubled)
//     iterations: 50               # Levenberg–Marquardt steps
//     step: 1.0e-6                 # finite-difference step, relative to each parameter's
//                                  # magnitude (or to 1e-3 of its range)
//     tolerance: 1.0e-10           # relative change of the cost that ends LM
//
// Resume: the fit is a pure function of the spec and the results of its batches, so a resumed
// run replays the batches in the journals and goes on from the first one not complete.
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/optim.h"
#include "mbs/results.h"
#include "targets.h"

enum { PH_CMAES = 0, PH_LM, PH_DONE };
enum { M_BOTH = 0, M_CMAES, M_LM };

typedef struct fit_log_row {
  int phase, run;
  long iteration, evaluations;
  double best_cost, step;     // σ (CMA-ES, normalized) or λ (LM damping)
} fit_log_row;

typedef struct fit_driver {
  fit_targets T;
  int method;
  long seed, population, generations, restarts, iterations;
  double sigma0, step, tolerance;
  // the parameters fitted: P->par[first .. first + n)
  int n, first, np;
  double *lo, *hi, *x0;
  int phase;
  mbs_cmaes* cma;
  mbs_lm* lm;
  int checked;                // the scalar targets were found among the plan's scalars
  long next;                  // the next sample index
  long evaluations;           // samples asked for so far (its own: a cohort interleaves fits)
  long capacity;
  double* points;             // the batch in the fitted parameters (count × n)
  double* batch;              // the batch as parameter vectors (count × np)
  long count;
  double* res;                // count × m residuals
  double* f;                  // count costs
  double best_cost;
  double* best_x;
  long best_sample;
  // the log
  fit_log_row* log;
  double* log_mean;           // rows × n (the CMA-ES mean, the LM point)
  long nlog, caplog;
  char cma_stop[200], lm_stop[200];
} fit_driver;

static int fit_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  fit_driver* f = calloc(1, sizeof(*f));
  if (!f) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  d->self = f;
  f->best_cost = INFINITY;
  f->best_sample = -1;
  const mbs_spec_section* s = mbs_spec_find_section(spec, "fit");
  static const char* const keys[] = {"targets", "method", "seed", "population", "sigma",
                                     "generations", "restarts", "iterations", "step",
                                     "tolerance"};
  static const char* const methods[] = {"cmaes+lm", "cmaes", "lm"};
  int rc = mbs_spec_section_keys(s, keys, (int)(sizeof(keys) / sizeof(keys[0])), err);
  if (!rc) rc = mbs_spec_section_choice(s, "method", methods, 3, M_BOTH, &f->method, err);
  if (!rc) rc = mbs_spec_section_integer(s, "seed", 1, 0, LONG_MAX, &f->seed, err);
  if (!rc) rc = mbs_spec_section_integer(s, "population", 0, 0, 100000, &f->population, err);
  if (!rc) rc = mbs_spec_section_number(s, "sigma", 0.3, 0, 1, 1, 0, &f->sigma0, err);
  if (!rc) rc = mbs_spec_section_integer(s, "generations", 100, 1, 1000000, &f->generations, err);
  if (!rc) rc = mbs_spec_section_integer(s, "restarts", 1, 0, 20, &f->restarts, err);
  if (!rc) rc = mbs_spec_section_integer(s, "iterations", 50, 1, 100000, &f->iterations, err);
  if (!rc) rc = mbs_spec_section_number(s, "step", 1e-6, 0, 1, 0.1, 0, &f->step, err);
  if (!rc) rc = mbs_spec_section_number(s, "tolerance", 1e-10, 0, 0, 1, 0, &f->tolerance, err);
  if (!rc) rc = targets_read(s, &f->T, err);
  return rc;
}

static void cmaes_options(const fit_driver* f, mbs_cmaes_options* o) {
  mbs_cmaes_default_options(o, f->n);
  o->lo = f->lo;
  o->hi = f->hi;
  o->x0 = f->x0;
  o->seed = (uint64_t)f->seed;
  o->sigma0 = f->sigma0;
  o->lambda = (int)f->population;
  o->max_generations = f->generations;
  o->max_restarts = (int)f->restarts;
}

static void lm_options(const fit_driver* f, mbs_lm_options* o, const double* x0) {
  mbs_lm_default_options(o, f->n, f->T.m);
  o->lo = f->lo;
  o->hi = f->hi;
  o->x0 = x0;
  o->h = f->step;
  o->ftol = f->tolerance;
  o->max_iterations = (int)f->iterations;
}

static int fit_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  fit_driver* f = d->self;
  const mbs_spec_section* s = mbs_spec_find_section(P->spec, "fit");
  f->first = P->naxes;
  f->n = P->np - P->naxes;
  f->np = P->np;
  if (f->n < 1)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, s->line,
                         "fit: no parameters to fit (give them under parameters:, with bounds)");
  f->lo = malloc((size_t)f->n * sizeof(double));
  f->hi = malloc((size_t)f->n * sizeof(double));
  f->x0 = malloc((size_t)f->n * sizeof(double));
  f->best_x = malloc((size_t)f->n * sizeof(double));
  if (!f->lo || !f->hi || !f->x0 || !f->best_x)
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int j = 0; j < f->n; j++) {
    const int k = f->first + j;
    const mbs_spec_parameter* sp = P->par[k].spec;
    if (!sp->has_dist || (P->dist[k].type != MBS_DIST_UNIFORM &&
                          P->dist[k].type != MBS_DIST_TRUNCATED_NORMAL))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, sp->line,
                           "parameters: '%s': a fitted parameter needs its bounds: "
                           "distribution: {type: uniform, low: ..., high: ...}", P->par[k].name);
    mbs_plan_support(P, k, &f->lo[j], &f->hi[j]);
    f->x0[j] = mbs_plan_nominal(P, k);
    if (P->par[k].is_scale && !isnan(sp->initial)) f->x0[j] = sp->initial * P->par[k].base;
    if (!(f->x0[j] >= f->lo[j] && f->x0[j] <= f->hi[j]))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec,
                           sp->initial_line > 0 ? sp->initial_line : sp->line,
                           "parameters: '%s': the initial value %g is outside its bounds "
                           "%g .. %g", P->par[k].name, f->x0[j], f->lo[j], f->hi[j]);
  }
  int rc = targets_plan(&f->T, P, s, err);
  if (rc) return rc;
  // the budget: every CMA-ES run and every LM iteration (its stencil and the trial batches a
  // damping climbing to its limit can take)
  long cap = 1;
  if (f->method != M_LM) {
    mbs_cmaes_options o;
    cmaes_options(f, &o);
    mbs_error oe;
    if (mbs_cmaes_check_options(&o, &oe))
      return mbs_plan_fail(err, oe.code, P->spec, s->line, "fit: %s", oe.message);
    cap += mbs_cmaes_max_evaluations(&o);
  }
  if (f->method != M_CMAES) {
    mbs_lm_options o;
    lm_options(f, &o, f->x0);
    mbs_error oe;
    if (mbs_lm_check_options(&o, &oe))
      return mbs_plan_fail(err, oe.code, P->spec, s->line, "fit: %s", oe.message);
    const long stencil = mbs_lm_stencil_size(f->n, 0);
    cap += (f->iterations + 2) * (stencil + 24L * mbs_lm_max_batch(&o));
  }
  f->capacity = cap;
  P->nsamples = cap;
  f->phase = f->method == M_LM ? PH_LM : PH_CMAES;
  char m[32];
  snprintf(m, sizeof(m), "%d", f->T.m);
  return mbs_plan_attribute(P, "fit_residuals", m, err);
}

static int check_scalars(fit_driver* f, const mbs_plan* P, mbs_error* err) {
  const mbs_spec_section* s = mbs_spec_find_section(P->spec, "fit");
  for (int i = 0; i < f->T.n; i++) {
    fit_target* t = &f->T.t[i];
    if (!t->is_scalar) continue;
    t->scalar = mbs_plan_find_scalar(P, t->what);
    if (t->scalar < 0) {
      mbs_spec_section it;
      mbs_spec_section_item(s, "targets", i, &it, err);
      return mbs_spec_section_fail(&it, "scalar", MBS_ERR_UNKNOWN_NAME, err,
                                   "'%s' is not a scalar of the study (outputs.scalars)",
                                   t->what);
    }
  }
  f->checked = 1;
  return MBS_OK;
}

static int grow(fit_driver* f, long count, mbs_error* err) {
  double* a = realloc(f->points, (size_t)count * (size_t)f->n * sizeof(double));
  if (a) f->points = a;
  double* b = realloc(f->batch, (size_t)count * (size_t)f->np * sizeof(double));
  if (b) f->batch = b;
  double* c = realloc(f->res, (size_t)count * (size_t)(f->T.m + 1) * sizeof(double));
  if (c) f->res = c;
  double* g = realloc(f->f, (size_t)count * sizeof(double));
  if (g) f->f = g;
  if (!a || !b || !c || !g) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  return MBS_OK;
}

static int start_lm(fit_driver* f, mbs_error* err) {
  const double* x0 = isfinite(f->best_cost) ? f->best_x : f->x0;
  mbs_lm_options o;
  lm_options(f, &o, x0);
  f->lm = mbs_lm_create(&o, err);
  f->phase = PH_LM;
  return f->lm ? MBS_OK : err->code;
}

static int fit_next_batch(mbs_driver* d, const mbs_plan* P, mbs_batch* b, mbs_error* err) {
  fit_driver* f = d->self;
  int rc = MBS_OK;
  if (!f->checked && (rc = check_scalars(f, P, err))) return rc;
  b->first = f->next;
  b->count = 0;
  b->params = NULL;
  if (f->phase == PH_CMAES) {
    if (!f->cma) {
      mbs_cmaes_options o;
      cmaes_options(f, &o);
      if (!(f->cma = mbs_cmaes_create(&o, err))) return err->code;
    }
    if (f->cma->stop != MBS_CMAES_RUNNING && f->cma->stop != MBS_CMAES_FTARGET &&
        f->cma->restart < f->restarts) {
      if ((rc = mbs_cmaes_restart(f->cma, err))) return rc;
    }
    if (f->cma->stop != MBS_CMAES_RUNNING) {
      snprintf(f->cma_stop, sizeof(f->cma_stop), "%s", mbs_cmaes_stop_text(f->cma->stop));
      if (f->method == M_CMAES) f->phase = PH_DONE;
      else if ((rc = start_lm(f, err))) return rc;
    }
  }
  if (f->phase == PH_CMAES) {
    f->count = mbs_cmaes_population(f->cma);
    if ((rc = grow(f, f->count, err)) || (rc = mbs_cmaes_ask(f->cma, f->points, err))) return rc;
  } else if (f->phase == PH_LM) {
    if (!f->lm && (rc = start_lm(f, err))) return rc;
    if (f->lm->stop != MBS_LM_RUNNING) {
      snprintf(f->lm_stop, sizeof(f->lm_stop), "%s", mbs_lm_stop_text(f->lm->stop));
      f->phase = PH_DONE;
    } else {
      mbs_lm_options o;
      lm_options(f, &o, f->x0);
      if ((rc = grow(f, mbs_lm_max_batch(&o), err))) return rc;
      int count = 0;
      if ((rc = mbs_lm_ask(f->lm, f->points, &count, err))) return rc;
      f->count = count;
    }
  }
  if (f->phase == PH_DONE) return MBS_OK;
  if (f->evaluations + f->count > f->capacity) {  // (the budget is an upper bound: not reached)
    snprintf(f->lm_stop, sizeof(f->lm_stop), "the evaluation budget of %ld samples is spent",
             f->capacity);
    f->phase = PH_DONE;
    return MBS_OK;
  }
  for (long k = 0; k < f->count; k++) {
    double* row = f->batch + k * f->np;
    for (int j = 0; j < f->first; j++) row[j] = P->dist[j].values[0];
    memcpy(row + f->first, f->points + k * f->n, (size_t)f->n * sizeof(double));
  }
  b->count = f->count;
  b->params = f->batch;
  return MBS_OK;
}

static void fit_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  (void)d;
  (void)index;
  for (int j = 0; j < P->np; j++) params[j] = NAN;  // (iterative: the batch gives them)
}

static int add_log(fit_driver* f, int phase, int run, long iteration, long evaluations,
                   double best, double step, const double* mean, mbs_error* err) {
  if (f->nlog == f->caplog) {
    const long cap = f->caplog ? 2 * f->caplog : 64;
    fit_log_row* l = realloc(f->log, (size_t)cap * sizeof(*l));
    if (l) f->log = l;
    double* m = realloc(f->log_mean, (size_t)cap * (size_t)f->n * sizeof(double));
    if (m) f->log_mean = m;
    if (!l || !m) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    f->caplog = cap;
  }
  f->log[f->nlog] = (fit_log_row){phase, run, iteration, evaluations, best, step};
  memcpy(f->log_mean + f->nlog * f->n, mean, (size_t)f->n * sizeof(double));
  f->nlog++;
  return MBS_OK;
}

static int fit_absorb(mbs_driver* d, const mbs_plan* P, const mbs_batch_results* b,
                      mbs_error* err) {
  fit_driver* f = d->self;
  const int m = f->T.m;
  for (long k = 0; k < b->count; k++) {
    double* r = f->res + k * m;
    targets_residuals(&f->T, P, b->scalars + k * P->nscal, b->traj + k * P->frame_values, r);
    double c = 0;
    for (int i = 0; i < m; i++) c += r[i] * r[i];
    c *= 0.5;
    if (b->status[k] != MBS_OK || !isfinite(c)) {
      c = INFINITY;
      for (int i = 0; i < m; i++) r[i] = NAN;
    }
    f->f[k] = c;
    if (c < f->best_cost) {
      f->best_cost = c;
      f->best_sample = b->first + k;
      memcpy(f->best_x, f->points + k * f->n, (size_t)f->n * sizeof(double));
    }
  }
  f->next = b->first + b->count;
  f->evaluations += b->count;
  int rc;
  if (f->phase == PH_CMAES) {
    if ((rc = mbs_cmaes_tell(f->cma, f->f, err))) return rc;
    const mbs_cmaes_log* L = &f->cma->log;
    return add_log(f, PH_CMAES, L->restart, L->generation, f->evaluations, f->best_cost,
                   L->sigma, L->mean, err);
  }
  long bad = -1;
  for (long k = 0; k < b->count && bad < 0; k++)
    if (!isfinite(f->f[k])) bad = b->first + k;
  if (f->lm->phase == MBS_LM_PHASE_JACOBIAN && bad >= 0) {
    // a failed simulation at a Jacobian point: no derivative there
    return MBS_FAIL(err, MBS_ERR_INTEGRATOR, "study",
                    "fit: sample %ld of the Jacobian's stencil failed (see /status); the "
                    "Levenberg-Marquardt refinement needs every simulation near the point", bad);
  }
  if ((rc = mbs_lm_tell(f->lm, f->res, err))) return rc;
  return add_log(f, PH_LM, 0, f->lm->iteration, f->evaluations, f->best_cost, f->lm->lambda,
                 f->lm->x, err);
}

static int fit_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  fit_driver* f = d->self;
  const int n = f->n, m = f->T.m;
  mbs_results* r = mbs_results_open(path, err);
  if (!r) return err->code;
  int rc = mbs_results_group(r, "fit", 1, err);
  const char** names = calloc((size_t)n + 1, sizeof(char*));
  char** labels = calloc((size_t)m + 1, sizeof(char*));
  double* cov = malloc((size_t)n * n * sizeof(double) + 8);
  double* cov_u = malloc((size_t)n * n * sizeof(double) + 8);
  double* se = malloc((size_t)n * sizeof(double) + 8);
  int* ident = calloc((size_t)n + 1, sizeof(int));
  long* identl = calloc((size_t)n + 1, sizeof(long));
  double* x = malloc((size_t)n * sizeof(double) + 8);
  if (!names || !labels || !cov || !cov_u || !se || !ident || !identl || !x)
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int j = 0; j < n && names; j++) names[j] = P->par[f->first + j].name;
  // the fitted point: the refinement's, else the best evaluated
  double cost = f->best_cost;
  if (!rc) memcpy(x, f->best_x, (size_t)n * sizeof(double));
  int rank = 0, have_cov = 0;
  if (!rc && f->lm && f->lm->iteration > 0) {
    memcpy(x, f->lm->x, (size_t)n * sizeof(double));
    cost = f->lm->cost;
    mbs_error ce;
    if (mbs_lm_covariance(m, n, f->lm->J, f->lm->r, 0, cov, cov_u, ident, &rank, &ce) == MBS_OK)
      have_cov = 1;
  }
  for (int i = 0; !have_cov && i < n * n && cov; i++) cov[i] = cov_u[i] = NAN;
  for (int j = 0; se && j < n; j++) {
    se[j] = have_cov ? sqrt(cov[j * n + j]) : NAN;
    identl[j] = have_cov ? ident[j] : -1;
  }
  const long dn[1] = {n}, dnn[2] = {n, n};
  if (!rc) rc = mbs_results_strings(r, "/fit/parameter_names", n, names, 1, err);
  if (!rc) rc = mbs_results_write(r, "/fit/parameters", 1, dn, x, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/fit/initial", 1, dn, f->x0, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/fit/lower", 1, dn, f->lo, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/fit/upper", 1, dn, f->hi, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/fit/standard_error", 1, dn, se, NULL, err);
  if (!rc) rc = mbs_results_write_int(r, "/fit/identifiable", 1, dn, identl, err);
  if (!rc) rc = mbs_results_write(r, "/fit/covariance", 2, dnn, cov, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/fit/covariance_unscaled", 2, dnn, cov_u, NULL, err);
  static const char* const per_param[] = {"/fit/parameters", "/fit/initial", "/fit/lower",
                                          "/fit/upper", "/fit/standard_error",
                                          "/fit/identifiable"};
  for (int i = 0; i < 6 && !rc; i++)
    rc = mbs_results_attach(r, per_param[i], 0, "/fit/parameter_names", "parameter", err);
  for (int a = 0; a < 2 && !rc; a++) {
    rc = mbs_results_attach(r, "/fit/covariance", a, "/fit/parameter_names", "parameter", err);
    if (!rc)
      rc = mbs_results_attach(r, "/fit/covariance_unscaled", a, "/fit/parameter_names",
                              "parameter", err);
  }
  const long d0[1] = {0};
  if (!rc) rc = mbs_results_write(r, "/fit/cost", 0, d0, &cost, NULL, err);
  // the residuals at the fit: from the refinement's last Jacobian, else the best sample's
  if (!rc && m > 0) {
    const double* res = f->lm && f->lm->iteration > 0 ? f->lm->r : NULL;
    double* best_r = NULL;
    if (!res && f->best_sample >= 0) {
      double* sc = NULL;
      best_r = malloc((size_t)m * sizeof(double));
      // the best sample's scalars and trajectories from the file
      double* tr = calloc((size_t)P->frame_values + 1, sizeof(double));
      double* scal = calloc((size_t)P->nscal + 1, sizeof(double));
      long dims[4];
      int rk;
      for (int i = 0; i < P->nscal && !rc && scal; i++) {
        char ds[1100];
        snprintf(ds, sizeof(ds), "/scalars/%s", P->scal[i].name);
        if (mbs_results_read(r, ds, &sc, dims, &rk, err) == MBS_OK) {
          scal[i] = sc[f->best_sample];
          free(sc);
        }
      }
      for (int q = 0; q < P->nquant && tr; q++) {
        const mbs_quantity_plan* qp = &P->quant[q];
        if (qp->hidden) continue;
        char ds[1100];
        snprintf(ds, sizeof(ds), "/trajectories/%s", qp->name);
        double* all = NULL;
        if (mbs_results_read(r, ds, &all, dims, &rk, err) == MBS_OK) {
          memcpy(tr + qp->offset, all + f->best_sample * (long)P->nframes * qp->ncomp,
                 (size_t)P->nframes * qp->ncomp * sizeof(double));
          free(all);
        }
      }
      if (best_r && tr && scal) targets_residuals(&f->T, P, scal, tr, best_r);
      free(tr);
      free(scal);
      res = best_r;
    }
    if (res && labels && targets_labels(&f->T, P, labels) == MBS_OK) {
      const long dm[1] = {m};
      rc = mbs_results_strings(r, "/fit/residual_names", m, (const char* const*)labels, 1, err);
      if (!rc) rc = mbs_results_write(r, "/fit/residuals", 1, dm, res, NULL, err);
      if (!rc)
        rc = mbs_results_attach(r, "/fit/residuals", 0, "/fit/residual_names", "residual", err);
    }
    free(best_r);
  }
  // the convergence log
  if (!rc && f->nlog > 0) {
    const long L = f->nlog;
    long* iphase = malloc((size_t)L * sizeof(long));
    long* irun = malloc((size_t)L * sizeof(long));
    long* iit = malloc((size_t)L * sizeof(long));
    long* iev = malloc((size_t)L * sizeof(long));
    double* best = malloc((size_t)L * sizeof(double));
    double* step = malloc((size_t)L * sizeof(double));
    if (!iphase || !irun || !iit || !iev || !best || !step) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    } else {
      for (long i = 0; i < L; i++) {
        iphase[i] = f->log[i].phase;
        irun[i] = f->log[i].run;
        iit[i] = f->log[i].iteration;
        iev[i] = f->log[i].evaluations;
        best[i] = f->log[i].best_cost;
        step[i] = f->log[i].step;
      }
      const long dl[1] = {L}, dlm[2] = {L, n};
      rc = mbs_results_write_int(r, "/fit/log/phase", 1, dl, iphase, err);
      if (!rc) rc = mbs_results_attribute(r, "/fit/log/phase", "description",
                                          "0 CMA-ES generation, 1 Levenberg-Marquardt batch",
                                          err);
      if (!rc) rc = mbs_results_write_int(r, "/fit/log/run", 1, dl, irun, err);
      if (!rc) rc = mbs_results_write_int(r, "/fit/log/iteration", 1, dl, iit, err);
      if (!rc) rc = mbs_results_write_int(r, "/fit/log/evaluations", 1, dl, iev, err);
      if (!rc) rc = mbs_results_write(r, "/fit/log/best_cost", 1, dl, best, NULL, err);
      if (!rc) rc = mbs_results_write(r, "/fit/log/step", 1, dl, step, NULL, err);
      if (!rc) rc = mbs_results_attribute(r, "/fit/log/step", "description",
                                          "CMA-ES: sigma (normalized units); Levenberg-"
                                          "Marquardt: the damping lambda", err);
      if (!rc) rc = mbs_results_write(r, "/fit/log/point", 2, dlm, f->log_mean, NULL, err);
      if (!rc) rc = mbs_results_attribute(r, "/fit/log/point", "description",
                                          "CMA-ES: the mean; Levenberg-Marquardt: the point",
                                          err);
      if (!rc)
        rc = mbs_results_attach(r, "/fit/log/point", 1, "/fit/parameter_names", "parameter", err);
    }
    free(iphase);
    free(irun);
    free(iit);
    free(iev);
    free(best);
    free(step);
  }
  char ev[32], rk[32];
  snprintf(ev, sizeof(ev), "%ld", f->evaluations);
  snprintf(rk, sizeof(rk), "%d", rank);
  static const char* const mnames[] = {"cmaes+lm", "cmaes", "lm"};
  if (!rc) rc = mbs_results_attribute(r, "/fit", "method", mnames[f->method], err);
  if (!rc) rc = mbs_results_attribute(r, "/fit", "evaluations", ev, err);
  if (!rc && f->cma_stop[0]) rc = mbs_results_attribute(r, "/fit", "cmaes_stop", f->cma_stop, err);
  if (!rc && f->lm_stop[0]) rc = mbs_results_attribute(r, "/fit", "lm_stop", f->lm_stop, err);
  if (!rc)
    rc = mbs_results_attribute(r, "/fit", "cost", "1/2 sum of the squared weighted residuals "
                               "w (simulated - reference)", err);
  if (!rc)
    rc = mbs_results_attribute(r, "/fit", "covariance",
                               have_cov ? "s^2 (J^T J)^-1 at the fit, s^2 = |r|^2 / (m - n) "
                                          "(covariance_unscaled: (J^T J)^-1, for weights that "
                                          "are 1/sigma of the noise)"
                                        : "none (no Levenberg-Marquardt Jacobian at the fit)",
                               err);
  if (!rc && have_cov) rc = mbs_results_attribute(r, "/fit", "jacobian_rank", rk, err);
  mbs_error cerr;
  if (mbs_results_close(r, &cerr) && !rc) {
    *err = cerr;
    rc = cerr.code;
  }
  free(names);
  for (int i = 0; labels && i < m; i++) free(labels[i]);
  free(labels);
  free(cov);
  free(cov_u);
  free(se);
  free(ident);
  free(identl);
  free(x);
  return rc;
}

static void fit_destroy(mbs_driver* d) {
  fit_driver* f = d->self;
  if (!f) return;
  targets_free(&f->T);
  mbs_cmaes_free(f->cma);
  mbs_lm_free(f->lm);
  free(f->lo);
  free(f->hi);
  free(f->x0);
  free(f->best_x);
  free(f->points);
  free(f->batch);
  free(f->res);
  free(f->f);
  free(f->log);
  free(f->log_mean);
  free(f);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_fit = {
    .name = "fit",
    .iterative = 1,
    .create = fit_create,
    .plan = fit_plan,
    .next_batch = fit_next_batch,
    .point = fit_point,
    .absorb = fit_absorb,
    .finish = fit_finish,
    .destroy = fit_destroy,
};
