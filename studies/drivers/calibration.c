// Bayesian calibration: samples of the posterior of the parameters given data (the targets,
// targets.h, with their noise's standard deviation: Gaussian errors, log-likelihood
// −½ Σ ((simulated − reference) / σ)²) and the priors (the parameters' distributions), by an
// ensemble MCMC sampler (the affine-invariant stretch move of Goodman & Weare, as emcee;
// include/mbs/mcmc.h). Each half-step's proposals — half of the walkers — are one distributed
// batch; a proposal outside the priors' support is rejected without being simulated. When it
// ends, /calibration holds the chain, the kept posterior samples, their mean and covariance,
// R̂, the autocorrelation times and effective sample sizes.
//
//   parameters:                    # priors; `initial` centres the starting walkers
//     - {path: /bodyset/block/mass, initial: 1.1, distribution: {type: normal, mean: 1, std: 0.2}}
//   calibration:
//     targets: [...]               # with sigma (targets.h)
//     walkers: 16                  # even; default 4 n, at least 8
//     steps: 1000
//     burn_in: 250                 # steps discarded (default: a quarter)
//     seed: 1
//     scale: 2                     # the stretch move's a
//     spread: 0.01                 # the starting walkers: initial + spread × the prior's
//                                  # standard deviation (or range) × N(0, 1)
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mcmc.h"
#include "mbs/results.h"
#include "targets.h"

typedef struct calib_driver {
  fit_targets T;
  long walkers, steps, burn, seed;
  double scale, spread;
  int n, first, np;
  double* initial;            // walkers × n
  mbs_mcmc* mc;
  long next;
  double* logprior;           // of the points of the current ask
  long* sample_of;            // the batch index of each point, or -1 (not simulated)
  double* logp;
  double* batch;              // count × np
  double* res;
  int count;                  // points of the current ask
} calib_driver;

static int calib_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  calib_driver* c = calloc(1, sizeof(*c));
  if (!c) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  d->self = c;
  const mbs_spec_section* s = mbs_spec_find_section(spec, "calibration");
  static const char* const keys[] = {"targets", "walkers", "steps", "burn_in", "seed", "scale",
                                     "spread"};
  int rc = mbs_spec_section_keys(s, keys, (int)(sizeof(keys) / sizeof(keys[0])), err);
  if (!rc) rc = mbs_spec_section_integer(s, "walkers", 0, 0, 100000, &c->walkers, err);
  if (!rc) rc = mbs_spec_section_integer(s, "steps", 1000, 1, 100000000, &c->steps, err);
  if (!rc) rc = mbs_spec_section_integer(s, "burn_in", -1, 0, c->steps - 1, &c->burn, err);
  if (!rc) rc = mbs_spec_section_integer(s, "seed", 1, 0, LONG_MAX, &c->seed, err);
  if (!rc) rc = mbs_spec_section_number(s, "scale", 2, 1, 1, NAN, 0, &c->scale, err);
  if (!rc) rc = mbs_spec_section_number(s, "spread", 0.01, 0, 1, NAN, 0, &c->spread, err);
  if (!rc && c->walkers % 2)
    rc = mbs_spec_section_fail(s, "walkers", MBS_ERR_ARGUMENT, err,
                               "%ld is odd: the ensemble moves in two halves", c->walkers);
  if (!rc) rc = targets_read(s, &c->T, err);
  if (c->burn < 0) c->burn = c->steps / 4;
  return rc;
}

// the log-density of a parameter's prior (its distribution; for a scale, of the factor)
static double log_prior(const mbs_plan* P, int k, double x) {
  const mbs_distribution* d = &P->dist[k];
  if (P->par[k].is_scale) x /= P->par[k].base;
  const double ln2pi = 1.8378770664093453;
  switch (d->type) {
    case MBS_DIST_UNIFORM: return x >= d->a && x <= d->b ? -log(d->b - d->a) : -INFINITY;
    case MBS_DIST_NORMAL: {
      const double z = (x - d->a) / d->b;
      return -0.5 * z * z - log(d->b) - 0.5 * ln2pi;
    }
    case MBS_DIST_LOGNORMAL: {
      if (!(x > 0)) return -INFINITY;
      const double z = (log(x) - d->a) / d->b;
      return -0.5 * z * z - log(d->b * x) - 0.5 * ln2pi;
    }
    case MBS_DIST_TRUNCATED_NORMAL: {
      if (x < d->lo || x > d->hi) return -INFINITY;
      const double z = (x - d->a) / d->b;
      const double mass = mbs_normal_cdf((d->hi - d->a) / d->b) - mbs_normal_cdf((d->lo - d->a) / d->b);
      return -0.5 * z * z - log(d->b * mass) - 0.5 * ln2pi;
    }
    default: return NAN;
  }
}

static int calib_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  calib_driver* c = d->self;
  const mbs_spec_section* s = mbs_spec_find_section(P->spec, "calibration");
  c->first = P->naxes;
  c->n = P->np - P->naxes;
  c->np = P->np;
  if (c->n < 1)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, s->line, "calibration: no parameters "
                         "(give them under parameters:, with their priors as distributions)");
  if (c->walkers == 0) c->walkers = 4L * c->n < 8 ? 8 : 4L * c->n + (4L * c->n) % 2;
  if (c->walkers < 2L * c->n)
    return mbs_spec_section_fail(s, "walkers", MBS_ERR_ARGUMENT, err,
                                 "%ld walkers cannot span %d parameters: give at least %d",
                                 c->walkers, c->n, 2 * c->n);
  int rc = mbs_plan_require_distributions(P, "a calibration's prior is its distribution", err);
  if (rc) return rc;
  c->initial = malloc((size_t)c->walkers * (size_t)c->n * sizeof(double));
  if (!c->initial) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int j = 0; j < c->n; j++) {
    const int k = c->first + j;
    const mbs_distribution* dist = &P->dist[k];
    if (dist->type == MBS_DIST_DISCRETE || dist->type == MBS_DIST_CONSTANT)
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, P->par[k].spec->line,
                           "parameters: '%s': a calibrated parameter's prior needs a density "
                           "(uniform, normal, lognormal or truncated_normal), not %s",
                           P->par[k].name, mbs_dist_name(dist->type));
    double centre = P->par[k].spec && !isnan(P->par[k].spec->initial)
                        ? P->par[k].spec->initial
                        : mbs_distribution_mean(dist) * (P->par[k].is_scale ? P->par[k].base : 1);
    double width = sqrt(mbs_distribution_variance(dist)) * (P->par[k].is_scale ? fabs(P->par[k].base) : 1);
    if (!isfinite(log_prior(P, k, centre)))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, P->par[k].spec->line,
                           "parameters: '%s': the walkers' centre %g is outside the prior's "
                           "support", P->par[k].name, centre);
    for (long w = 0; w < c->walkers; w++) {
      // a ball around the centre, inside the support (deterministic: keyed by the seed)
      mbs_rng r = mbs_rng_make((uint64_t)c->seed, (uint64_t)w, 0x494e4954ULL * 64 + (uint64_t)j);
      double x = centre;
      for (int tries = 0; tries < 100; tries++) {
        x = centre + c->spread * width * mbs_rng_normal(&r);
        if (isfinite(log_prior(P, k, x))) break;
        x = centre;
      }
      c->initial[w * c->n + j] = x;
    }
  }
  if ((rc = targets_plan(&c->T, P, s, err))) return rc;
  P->nsamples = c->walkers * (c->steps + 1);
  mbs_mcmc_options o = {(int)c->walkers, c->n, c->steps, c->scale, (uint64_t)c->seed};
  if ((rc = mbs_mcmc_create(&c->mc, &o, c->initial, err))) return rc;
  c->logprior = malloc((size_t)c->walkers * sizeof(double));
  c->sample_of = malloc((size_t)c->walkers * sizeof(long));
  c->logp = malloc((size_t)c->walkers * sizeof(double));
  c->batch = malloc((size_t)c->walkers * (size_t)c->np * sizeof(double));
  c->res = malloc((size_t)(c->T.m + 1) * sizeof(double));
  if (!c->logprior || !c->sample_of || !c->logp || !c->batch || !c->res)
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  return MBS_OK;
}

static int calib_next_batch(mbs_driver* d, const mbs_plan* P, mbs_batch* b, mbs_error* err) {
  calib_driver* c = d->self;
  b->first = c->next;
  b->count = 0;
  b->params = NULL;
  for (int i = 0; i < c->T.n; i++)
    if (c->T.t[i].is_scalar && (c->T.t[i].scalar = mbs_plan_find_scalar(P, c->T.t[i].what)) < 0)
      return MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, "study", "calibration.targets[%d]: '%s' is not "
                      "a scalar of the study (outputs.scalars)", i, c->T.t[i].what);
  for (;;) {
    mbs_mcmc_batch mb;
    mbs_mcmc_ask(c->mc, &mb);
    if (mb.count == 0) return MBS_OK;  // every step done
    c->count = mb.count;
    long k = 0;
    for (int i = 0; i < mb.count; i++) {
      const double* x = mb.points + (size_t)i * c->n;
      double lp = 0;
      for (int j = 0; j < c->n; j++) lp += log_prior(P, c->first + j, x[j]);
      c->logprior[i] = lp;
      c->sample_of[i] = -1;
      if (!isfinite(lp)) continue;  // outside the support: rejected without a simulation
      double* row = c->batch + k * c->np;
      for (int j = 0; j < c->first; j++) row[j] = P->dist[j].values[0];
      memcpy(row + c->first, x, (size_t)c->n * sizeof(double));
      c->sample_of[i] = k++;
    }
    if (k > 0) {
      b->count = k;
      b->params = c->batch;
      return MBS_OK;
    }
    // nothing to simulate in this half-step: every proposal is rejected
    for (int i = 0; i < mb.count; i++) c->logp[i] = -INFINITY;
    int rc = mbs_mcmc_tell(c->mc, c->logp, mb.count, err);
    if (rc) return rc;
  }
}

static void calib_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  (void)d;
  (void)index;
  for (int j = 0; j < P->np; j++) params[j] = NAN;
}

static int calib_absorb(mbs_driver* d, const mbs_plan* P, const mbs_batch_results* b,
                        mbs_error* err) {
  calib_driver* c = d->self;
  for (int i = 0; i < c->count; i++) {
    const long k = c->sample_of[i];
    if (k < 0) {
      c->logp[i] = -INFINITY;
      continue;
    }
    targets_residuals(&c->T, P, b->scalars + k * P->nscal, b->traj + k * P->frame_values,
                      c->res);
    double ss = 0;
    for (int r = 0; r < c->T.m; r++) ss += c->res[r] * c->res[r];
    c->logp[i] = b->status[k] == MBS_OK && isfinite(ss) ? c->logprior[i] - 0.5 * ss : NAN;
  }
  c->next = b->first + b->count;
  return mbs_mcmc_tell(c->mc, c->logp, c->count, err);
}

static int calib_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  calib_driver* c = d->self;
  const int n = c->n, W = (int)c->walkers;
  const long T = mbs_mcmc_steps_done(c->mc), burn = c->burn < T ? c->burn : 0;
  const double* chain = mbs_mcmc_chain(c->mc);
  const double* clogp = mbs_mcmc_chain_logp(c->mc);
  mbs_results* r = mbs_results_open(path, err);
  if (!r) return err->code;
  int rc = mbs_results_group(r, "calibration", 1, err);
  const char** names = calloc((size_t)n + 1, sizeof(char*));
  double* mean = malloc((size_t)n * sizeof(double));
  double* cov = malloc((size_t)n * n * sizeof(double));
  double* tau = malloc((size_t)n * sizeof(double));
  double* ess = malloc((size_t)n * sizeof(double));
  double* rhat = malloc((size_t)n * sizeof(double));
  double* acc = malloc((size_t)W * sizeof(double));
  int* shortc = calloc((size_t)n, sizeof(int));
  long* shortl = calloc((size_t)n, sizeof(long));
  if (!names || !mean || !cov || !tau || !ess || !rhat || !acc || !shortc || !shortl)
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int j = 0; j < n && names; j++) names[j] = P->par[c->first + j].name;
  mbs_error de;
  if (!rc) {
    if (mbs_mcmc_mean_cov(mean, cov, chain, T, W, n, burn, &de))
      for (int i = 0; i < n * n; i++) cov[i] = mean[i % n] = NAN;
    if (mbs_mcmc_autocorr_time(tau, shortc, chain, T, W, n, burn, &de))
      for (int j = 0; j < n; j++) tau[j] = NAN;
    mbs_mcmc_ess(ess, tau, T, W, n, burn);
    if (mbs_mcmc_split_rhat(rhat, chain, T, W, n, burn, &de))
      for (int j = 0; j < n; j++) rhat[j] = NAN;
    mbs_mcmc_acceptance(c->mc, acc);
    for (int j = 0; j < n; j++) shortl[j] = shortc[j];
  }
  const long dn[1] = {n}, dnn[2] = {n, n}, dw[1] = {W}, dc[3] = {T, W, n}, dl[2] = {T, W};
  const long ds[2] = {(T - burn) * W, n};
  if (!rc) rc = mbs_results_strings(r, "/calibration/parameter_names", n, names, 1, err);
  if (!rc) rc = mbs_results_write(r, "/calibration/chain", 3, dc, chain, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/calibration/log_probability", 2, dl, clogp, NULL, err);
  if (!rc)
    rc = mbs_results_write(r, "/calibration/samples", 2, ds, chain + (size_t)burn * W * n, NULL,
                           err);
  if (!rc) rc = mbs_results_write(r, "/calibration/mean", 1, dn, mean, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/calibration/covariance", 2, dnn, cov, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/calibration/autocorr_time", 1, dn, tau, "steps", err);
  if (!rc) rc = mbs_results_write(r, "/calibration/ess", 1, dn, ess, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/calibration/rhat", 1, dn, rhat, NULL, err);
  if (!rc) rc = mbs_results_write_int(r, "/calibration/chain_too_short", 1, dn, shortl, err);
  if (!rc) rc = mbs_results_write(r, "/calibration/acceptance", 1, dw, acc, NULL, err);
  if (!rc) rc = mbs_results_write(r, "/calibration/initial_walkers", 2, (const long[2]){W, n},
                                  c->initial, NULL, err);
  static const char* const per[] = {"/calibration/mean", "/calibration/autocorr_time",
                                    "/calibration/ess", "/calibration/rhat",
                                    "/calibration/chain_too_short"};
  for (int i = 0; i < 5 && !rc; i++)
    rc = mbs_results_attach(r, per[i], 0, "/calibration/parameter_names", "parameter", err);
  if (!rc) rc = mbs_results_attach(r, "/calibration/chain", 2, "/calibration/parameter_names",
                                   "parameter", err);
  if (!rc) rc = mbs_results_attach(r, "/calibration/samples", 1, "/calibration/parameter_names",
                                   "parameter", err);
  for (int a = 0; a < 2 && !rc; a++)
    rc = mbs_results_attach(r, "/calibration/covariance", a, "/calibration/parameter_names",
                            "parameter", err);
  char sw[32], st[32], sb[32], sa[32], sd[32];
  snprintf(sw, sizeof(sw), "%d", W);
  snprintf(st, sizeof(st), "%ld", T);
  snprintf(sb, sizeof(sb), "%ld", burn);
  snprintf(sa, sizeof(sa), "%g", c->scale);
  snprintf(sd, sizeof(sd), "%ld", c->seed);
  const char* attr[][2] = {
      {"sampler", "affine-invariant ensemble, stretch move (Goodman & Weare 2010, as emcee), "
                  "two halves per step"},
      {"walkers", sw}, {"steps", st}, {"burn_in", sb}, {"scale", sa}, {"seed", sd},
      {"likelihood", "Gaussian: -1/2 sum ((simulated - reference) / sigma)^2 over the targets"},
      {"prior", "the parameters' distributions, independent"},
      {"rhat", "split R-hat with each walker a chain (walkers of an ensemble are not "
               "independent chains)"},
      {"autocorr_time", "emcee's integrated autocorrelation time (Sokal's window, c = 5), "
                        "averaged over walkers; chain_too_short: 1 where the kept chain is "
                        "shorter than 50 tau"}};
  for (size_t i = 0; i < sizeof(attr) / sizeof(attr[0]) && !rc; i++)
    rc = mbs_results_attribute(r, "/calibration", attr[i][0], attr[i][1], err);
  mbs_error cerr;
  if (mbs_results_close(r, &cerr) && !rc) {
    *err = cerr;
    rc = cerr.code;
  }
  free(names);
  free(mean);
  free(cov);
  free(tau);
  free(ess);
  free(rhat);
  free(acc);
  free(shortc);
  free(shortl);
  return rc;
}

static void calib_destroy(mbs_driver* d) {
  calib_driver* c = d->self;
  if (!c) return;
  targets_free(&c->T);
  mbs_mcmc_free(c->mc);
  free(c->initial);
  free(c->logprior);
  free(c->sample_of);
  free(c->logp);
  free(c->batch);
  free(c->res);
  free(c);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_calibration = {
    .name = "calibration",
    .iterative = 1,
    .create = calib_create,
    .plan = calib_plan,
    .next_batch = calib_next_batch,
    .point = calib_point,
    .absorb = calib_absorb,
    .finish = calib_finish,
    .destroy = calib_destroy,
};
