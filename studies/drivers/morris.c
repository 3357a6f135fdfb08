// Morris' elementary effects (Morris 1991; Campolongo et al. 2007; SALib's conventions): N
// trajectories of D+1 points on a grid of p levels in the unit hypercube, each next point
// changing one parameter by Δ = p / (2(p − 1)); N(D+1) samples, mapped through the parameters'
// distributions (bounded ones: the grid's ends are the distribution's ends). When the samples
// are in, each parameter's elementary effects (the change of an output per change of the
// parameter in unit range) give mu, mu_star (the mean of their magnitudes), sigma and
// mu_star_conf (a bootstrap interval) for every scalar output, and on request for every frame
// of trajectories, in /sensitivity.
//
//   sensitivity:
//     method: morris
//     samples: 100           # N, the trajectories
//     levels: 4              # p, even
//     seed: 1                # of the trajectories and of the bootstrap
//     bootstrap: 1000
//     confidence: 0.95
//     outputs: [y]           # the scalars analyzed (default: all)
//     trajectories: [q]      # also analyzed frame by frame (optional)
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/gsa.h"
#include "sensitivity.h"

typedef struct morris_driver {
  sens_common c;
  long N;
  int levels;
} morris_driver;

static int morris_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  morris_driver* m = calloc(1, sizeof(*m));
  if (!m) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  d->self = m;
  const mbs_spec_section* sec = mbs_spec_find_section(spec, "sensitivity");
  static const char* const keys[] = {"samples", "levels"};
  long levels = 4;
  int rc = sens_read_common(sec, keys, 2, &m->c, err);
  if (!rc && !mbs_spec_section_has(sec, "bootstrap")) m->c.nboot = 1000;
  if (!rc) rc = mbs_spec_section_integer(sec, "samples", LONG_MIN, 2, 1L << 30, &m->N, err);
  if (!rc) rc = mbs_spec_section_integer(sec, "levels", 4, 2, 1000, &levels, err);
  if (!rc && levels % 2)
    rc = mbs_spec_section_fail(sec, "levels", MBS_ERR_ARGUMENT, err,
                               "%ld is odd: Morris' grid needs an even number of levels", levels);
  m->levels = (int)levels;
  return rc;
}

static int morris_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  morris_driver* m = d->self;
  int rc = sens_plan_common(&m->c, P, 1, "Morris' grid spans the parameters' distributions",
                            err);
  if (rc) return rc;
  for (int j = m->c.first; j < P->np; j++) {
    const mbs_distribution* dist = &P->dist[j];
    if (dist->type != MBS_DIST_UNIFORM && dist->type != MBS_DIST_TRUNCATED_NORMAL &&
        dist->type != MBS_DIST_DISCRETE)
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, P->par[j].spec->line,
                           "parameters: '%s': Morris' grid reaches both ends of a parameter's "
                           "range: give a bounded distribution (uniform, truncated_normal or "
                           "discrete), not %s", P->par[j].name, mbs_dist_name(dist->type));
  }
  mbs_error ge;
  if (mbs_morris_check(m->N, m->c.D, m->levels, &ge))
    return mbs_plan_fail(err, ge.code, P->spec, mbs_spec_find_section(P->spec, "sensitivity")->line,
                         "sensitivity: %s", ge.message);
  P->nsamples = mbs_morris_rows(m->N, m->c.D);
  return MBS_OK;
}

// a level on [0, 1] through a bounded distribution (its ends included)
static double bounded_quantile(const mbs_distribution* d, double u) {
  if (d->type == MBS_DIST_UNIFORM) return d->a + u * (d->b - d->a);
  if (d->type == MBS_DIST_DISCRETE) {
    int k = (int)floor(u * d->nvalues);
    if (k >= d->nvalues) k = d->nvalues - 1;
    return d->values[k];
  }
  if (u <= 0) return d->lo;
  if (u >= 1) return d->hi;
  return mbs_distribution_quantile(d, u);
}

static void morris_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  const morris_driver* m = d->self;
  double u[MBS_SOBOL_MAX_DIM * 4];
  double* uu = m->c.D > MBS_SOBOL_MAX_DIM * 4 ? malloc((size_t)m->c.D * sizeof(double)) : u;
  if (!uu) {
    for (int j = 0; j < P->np; j++) params[j] = NAN;
    return;
  }
  mbs_morris_point(m->c.seed, index, m->c.D, m->levels, uu);
  sens_fixed_axes(&m->c, P, params);
  for (int j = 0; j < m->c.D; j++) {
    const int k = m->c.first + j;
    const double x = bounded_quantile(&P->dist[k], uu[j]);
    params[k] = P->par[k].is_scale ? x * P->par[k].base : x;
  }
  if (uu != u) free(uu);
}

static int morris_analyze(const void* self, const mbs_plan* P, const double* Y,
                          double* const* out, long* used, mbs_error* err) {
  const morris_driver* m = self;
  const long rows = P->nsamples;
  const int D = m->c.D;
  double* U = malloc((size_t)rows * (size_t)D * sizeof(double));
  if (!U) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (long r = 0; r < rows; r++) mbs_morris_point(m->c.seed, r, D, m->levels, U + r * D);
  mbs_morris_options o = mbs_morris_options_default();
  o.nboot = m->c.nboot;
  o.conf_level = m->c.confidence;
  o.seed = m->c.seed;
  mbs_morris_result res;
  memset(&res, 0, sizeof(res));
  const int rc = mbs_morris_analyze(U, Y, m->N, D, &o, &res, err);
  free(U);
  *used = res.n_used;
  if (rc) return rc;
  memcpy(out[0], res.mu, (size_t)D * sizeof(double));
  memcpy(out[1], res.mu_star, (size_t)D * sizeof(double));
  memcpy(out[2], res.sigma, (size_t)D * sizeof(double));
  memcpy(out[3], res.mu_star_conf, (size_t)D * sizeof(double));
  mbs_morris_result_free(&res);
  return MBS_OK;
}

static int morris_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  const morris_driver* m = d->self;
  static const sens_array arrays[4] = {
      {"mu", 0, 1, NULL}, {"mu_star", 0, 1, NULL}, {"sigma", 0, 1, NULL},
      {"mu_star_conf", 0, 1, NULL}};
  char n[32], lv[32], delta[32], boot[32], conf[32];
  snprintf(n, sizeof(n), "%ld", m->N);
  snprintf(lv, sizeof(lv), "%d", m->levels);
  snprintf(delta, sizeof(delta), "%.17g", mbs_morris_delta(m->levels));
  snprintf(boot, sizeof(boot), "%d", m->c.nboot);
  snprintf(conf, sizeof(conf), "%g", m->c.confidence);
  const char* attr[] = {"trajectories", n, "levels", lv, "delta", delta,
                        "bootstrap_resamples", boot, "confidence_level", conf,
                        "elementary_effect", "change of the output per change of the parameter "
                        "over its whole range (unit hypercube), as SALib"};
  return sens_write(path, P, &m->c, "morris", attr, (int)(sizeof(attr) / sizeof(attr[0])),
                    arrays, 4, morris_analyze, m, err);
}

static void morris_destroy(mbs_driver* d) {
  morris_driver* m = d->self;
  if (m) sens_free_common(&m->c);
  free(m);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_morris = {
    .name = "morris",
    .create = morris_create,
    .plan = morris_plan,
    .point = morris_point,
    .finish = morris_finish,
    .destroy = morris_destroy,
};
