// Monte Carlo: `count` samples of the parameters' distributions by a design (random, Latin
// hypercube or Sobol'; sampling.method), every sample a pure function of (seed, index); no
// results beyond the samples and their statistics.
#include <math.h>
#include <stdlib.h>

#include "../engine.h"

static int mc_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  (void)spec;
  (void)err;
  d->self = NULL;
  return MBS_OK;
}

static int mc_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  (void)d;
  const mbs_study_spec* sp = P->spec;
  if (!sp->has_sampling)
    return mbs_plan_fail(err, MBS_ERR_PARSE, sp, 1, "sampling: missing (required: a Monte Carlo "
                         "study draws sampling.count samples; or give a study type's section: "
                         "posture, sensitivity, fit, calibration)");
  int rc = mbs_plan_require_distributions(P, "a Monte Carlo study draws its values", err);
  if (rc) return rc;
  mbs_error de;
  if (mbs_design_check(sp->method, sp->count, P->np, &de))
    return mbs_plan_fail(err, de.code, sp, 0, "sampling: %s", de.message);
  P->nsamples = sp->count;
  return MBS_OK;
}

static void mc_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  (void)d;
  double u[MBS_SOBOL_MAX_DIM];
  double* uu = P->np > MBS_SOBOL_MAX_DIM ? malloc((size_t)P->np * sizeof(double)) : u;
  if (!uu) {
    for (int i = 0; i < P->np; i++) params[i] = NAN;
    return;
  }
  mbs_design_point(P->spec->method, P->spec->seed, P->nsamples, index, P->np, uu);
  mbs_plan_values_from_unit(P, uu, params);
  if (uu != u) free(uu);
}

static void mc_destroy(mbs_driver* d) {
  (void)d;
}

const mbs_driver_ops mbs_driver_monte_carlo = {
    .name = "monte_carlo",
    .create = mc_create,
    .plan = mc_plan,
    .point = mc_point,
    .destroy = mc_destroy,
};

// A grid: the full factorial over the discrete and constant parameters (sampling.method: grid).
static int grid_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  (void)d;
  int rc = mbs_plan_require_distributions(P, "a grid takes its levels", err);
  if (rc) return rc;
  P->nsamples = mbs_plan_grid_count(P);
  if (P->nsamples < 1)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, 0, "sampling: the grid has too many "
                         "points");
  return MBS_OK;
}

static void grid_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  (void)d;
  mbs_plan_grid_point(P, index, params);
}

const mbs_driver_ops mbs_driver_grid = {
    .name = "grid",
    .create = mc_create,
    .plan = grid_plan,
    .point = grid_point,
    .destroy = mc_destroy,
};
