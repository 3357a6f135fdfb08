// Global sensitivity by Sobol' indices (Saltelli's scheme, SALib's conventions): N base points
// of a 2D-dimensional Sobol' sequence (Joe–Kuo direction numbers; scrambled by a random digital
// shift keyed by the seed, or unscrambled), expanded into SALib's row order — per base point A,
// the D rows AB_j, (with second order) the D rows BA_j, then B: N(2D+2) samples with second
// order, N(D+2) without —, each row's unit point mapped through the parameters' distributions.
// When the samples are in, the first-order, total and second-order indices of every scalar
// output (and, on request, of every frame of trajectories) with bootstrap confidence intervals
// (include/mbs/gsa.h) go into /sensitivity, with SALib's names (S1, S1_conf, ST, ST_conf, S2,
// S2_conf).
//
//   sensitivity:
//     method: sobol
//     samples: 1024          # N, the base points (a power of 2 balances the sequence)
//     second_order: true     # S2 (and the BA_j rows)
//     scramble: true         # false: the plain sequence from its second point
//     seed: 1                # of the scrambling and of the bootstrap
//     estimator: saltelli    # saltelli (SALib's: S1 Saltelli 2010, ST Jansen) | jansen
//     bootstrap: 100         # resamples for the confidence intervals
//     confidence: 0.95
//     outputs: [y]           # the scalars analyzed (default: all)
//     trajectories: [q]      # also analyzed frame by frame (optional)
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/gsa.h"
#include "sensitivity.h"

typedef struct sobol_driver {
  sens_common c;
  long N;
  int second_order, scramble;
  mbs_sobol_estimator estimator;
} sobol_driver;

static int sobol_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  sobol_driver* s = calloc(1, sizeof(*s));
  if (!s) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  d->self = s;
  const mbs_spec_section* sec = mbs_spec_find_section(spec, "sensitivity");
  static const char* const keys[] = {"samples", "second_order", "scramble", "estimator"};
  static const char* const estimators[] = {"saltelli", "jansen"};
  int est = 0;
  int rc = sens_read_common(sec, keys, 4, &s->c, err);
  if (!rc) rc = mbs_spec_section_integer(sec, "samples", LONG_MIN, 2, 1L << 30, &s->N, err);
  if (!rc) rc = mbs_spec_section_bool(sec, "second_order", 1, &s->second_order, err);
  if (!rc) rc = mbs_spec_section_bool(sec, "scramble", 1, &s->scramble, err);
  if (!rc) rc = mbs_spec_section_choice(sec, "estimator", estimators, 2, 0, &est, err);
  s->estimator = (mbs_sobol_estimator)est;
  if (!rc && s->scramble && s->c.seed == 0)
    rc = mbs_spec_section_fail(sec, "seed", MBS_ERR_ARGUMENT, err,
                               "0 leaves the sequence unscrambled: with scramble: true give a "
                               "seed of 1 or more");
  return rc;
}

static int sobol_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  sobol_driver* s = d->self;
  int rc = sens_plan_common(&s->c, P, 1, "a Sobol' study maps its sequence through the "
                            "parameters' distributions", err);
  if (rc) return rc;
  mbs_error ge;
  if (mbs_saltelli_check(s->N, s->c.D, s->second_order, &ge))
    return mbs_plan_fail(err, ge.code, P->spec, mbs_spec_find_section(P->spec, "sensitivity")->line,
                         "sensitivity: %s", ge.message);
  P->nsamples = mbs_saltelli_rows(s->N, s->c.D, s->second_order);
  char n[32];
  snprintf(n, sizeof(n), "%ld", s->N);
  return mbs_plan_attribute(P, "sensitivity_base_samples", n, err);
}

static void sobol_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  const sobol_driver* s = d->self;
  const int D = s->c.D;
  const long per = s->second_order ? 2L * D + 2 : (long)D + 2;
  double ab[2 * MBS_SALTELLI_MAX_DIM], u[MBS_SOBOL_MAX_DIM + MBS_SALTELLI_MAX_DIM];
  mbs_design_point(MBS_DESIGN_SOBOL, s->scramble ? s->c.seed : 0, s->N, index / per, 2 * D, ab);
  mbs_saltelli_point(index, D, s->second_order, ab, u + s->c.first);
  // the whole vector through the distributions: the preparation's axes take their one level
  for (int j = 0; j < s->c.first; j++) u[j] = 0.5;
  mbs_plan_values_from_unit(P, u, params);
}

static int sobol_analyze(const void* self, const mbs_plan* P, const double* Y,
                         double* const* out, long* used, mbs_error* err) {
  const sobol_driver* s = self;
  (void)P;
  mbs_sobol_options o = mbs_sobol_options_default();
  o.nboot = s->c.nboot;
  o.conf_level = s->c.confidence;
  o.seed = s->c.seed;
  o.estimator = s->estimator;
  mbs_sobol_indices ix;
  memset(&ix, 0, sizeof(ix));
  const int rc = mbs_sobol_analyze(Y, s->N, s->c.D, s->second_order, &o, &ix, err);
  *used = ix.n_used;
  if (rc) return rc;
  const size_t D = (size_t)s->c.D;
  memcpy(out[0], ix.S1, D * sizeof(double));
  memcpy(out[1], ix.S1_conf, D * sizeof(double));
  memcpy(out[2], ix.ST, D * sizeof(double));
  memcpy(out[3], ix.ST_conf, D * sizeof(double));
  if (s->second_order) {
    memcpy(out[4], ix.S2, D * D * sizeof(double));
    memcpy(out[5], ix.S2_conf, D * D * sizeof(double));
  }
  mbs_sobol_indices_free(&ix);
  return MBS_OK;
}

static int sobol_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  const sobol_driver* s = d->self;
  static const sens_array arrays[6] = {{"S1", 0, 0, "1"}, {"S1_conf", 0, 0, "1"},
                                       {"ST", 0, 0, "1"}, {"ST_conf", 0, 0, "1"},
                                       {"S2", 1, 0, "1"}, {"S2_conf", 1, 0, "1"}};
  char n[32], boot[32], conf[32];
  snprintf(n, sizeof(n), "%ld", s->N);
  snprintf(boot, sizeof(boot), "%d", s->c.nboot);
  snprintf(conf, sizeof(conf), "%g", s->c.confidence);
  const char* attr[] = {"base_samples", n,
                        "second_order", s->second_order ? "true" : "false",
                        "scrambled", s->scramble ? "true" : "false",
                        "estimator", s->estimator == MBS_SOBOL_JANSEN
                                         ? "jansen (S1, ST and S2 from Jansen's squared differences)"
                                         : "saltelli (S1 Saltelli 2010, ST Jansen 1999, S2 Saltelli 2002)",
                        "bootstrap_resamples", boot,
                        "confidence_level", conf,
                        "row_order", "SALib: per base point A, AB_1..AB_D, BA_1..BA_D (second order), B"};
  return sens_write(path, P, &s->c, "sobol", attr, (int)(sizeof(attr) / sizeof(attr[0])), arrays,
                    s->second_order ? 6 : 4, sobol_analyze, s, err);
}

static void sobol_destroy(mbs_driver* d) {
  sobol_driver* s = d->self;
  if (s) sens_free_common(&s->c);
  free(s);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_sobol = {
    .name = "sobol",
    .create = sobol_create,
    .plan = sobol_plan,
    .point = sobol_point,
    .finish = sobol_finish,
    .destroy = sobol_destroy,
};
