// Generated cohorts: N subjects drawn from anthropometric distributions — sex, then height and
// mass from a bivariate normal of that sex —, each a scaling of the model (studies/scaling.h:
// every segment's lengths by height / reference height, times an optional per-segment factor,
// every mass by mass / reference mass), and the study's own design run for every subject. A
// design that draws its samples at once runs as sample = subject × (the design's samples) +
// the design's sample; an iterative one (fit, calibration) runs once per subject, all of them
// side by side: each batch holds every unfinished subject's next batch, and the parameter
// `cohort/subject` says whose a sample is. The subjects are a pure function of (seed,
// subject); the per-sample results say which subject a sample belongs to, and /cohort holds
// the subjects, per subject the statistics of every scalar, and an iterative design's own
// results per subject (/cohort/subjects/<k>/fit or .../calibration).
//
//   cohort:
//     subjects: 100
//     seed: 1
//     female: 0.5                         # the fraction of women
//     height: {male: {mean: 1.756, std: 0.069}, female: {mean: 1.629, std: 0.064}}   # m
//     mass: {male: {mean: 85.5, std: 14.2}, female: {mean: 67.8, std: 11.1}}         # kg
//     correlation: 0.5                    # of height and mass within a sex
//     truncate: 3                         # draws beyond this many standard deviations redrawn
//     reference: {height: 1.75, mass: 75} # the model's own subject (default for mbstudy's
//                                         # human: posture.subject)
//     segments:                           # optional: more factors on segments' lengths
//       - {body: femur_r, scale: {type: normal, mean: 1, std: 0.03}}
//
// The default distributions are those of the ANSUR II survey of U.S. Army personnel (Gordon et
// al. 2014; stature and body mass by sex); give your population's.
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine.h"
#include "../scaling.h"
#include "mbs/results.h"

#define COHORT_STREAM UINT64_C(0x434f484f52540000)  // "COHORT"
#define COHORT_SCRATCH 256

enum { CR_SUBJECT = 0, CR_FEMALE, CR_HEIGHT, CR_MASS, CR_N };
static const char* const result_names[CR_N] = {"cohort_subject", "cohort_female",
                                               "cohort_height", "cohort_mass"};
static const char* const result_units[CR_N] = {"1", "1 (1 female)", "m", "kg"};

typedef struct segment_factor {
  char* body_name;
  int body;
  mbs_distribution dist;
  double* values;  // discrete values (owned)
} segment_factor;

typedef struct cohort_driver {
  mbs_driver inner;             // the design run for every subject (with its preparation)
  long subjects, seed;
  double female, rho, truncate;
  double h_mean[2], h_std[2], m_mean[2], m_std[2];  // [0] male, [1] female
  double ref_height, ref_mass;
  int has_reference;
  segment_factor* seg;
  int nseg;
  // planned
  long inner_n;
  int first_result;             // the cohort's results among the plan's
  mbs_scaling* scaling;
  int nbody;
  unsigned char* fixed;         // bodies not scaled (apparatus: the platform)
  double* sex;                  // per subject
  double* height;
  double* mass;
  double* factors;              // subjects × nbody length factors
  // an iterative design: one instance per subject (inst[0] is `inner`), run side by side
  int iterative;
  mbs_driver* inst;
  int subject_axis;             // the plan's parameter cohort/subject
  long* offset;                 // each subject's rows in the current batch
  long* count;
  int* done;
  double* batch;                // the current batch's rows (all subjects)
  long capacity_rows;
  long next;
} cohort_driver;


static int read_pair(const mbs_spec_section* s, const char* key, const double dflt[4],
                     double mean[2], double std[2], mbs_error* err) {
  mean[0] = dflt[0];
  std[0] = dflt[1];
  mean[1] = dflt[2];
  std[1] = dflt[3];
  if (!mbs_spec_section_has(s, key)) return MBS_OK;
  mbs_spec_section sub, sex;
  static const char* const sexes[] = {"male", "female"};
  static const char* const ms[] = {"mean", "std"};
  int rc = mbs_spec_section_sub(s, key, &sub, err);
  if (!rc) rc = mbs_spec_section_keys(&sub, sexes, 2, err);
  for (int k = 0; k < 2 && !rc; k++) {
    if (!mbs_spec_section_has(&sub, sexes[k])) continue;
    rc = mbs_spec_section_sub(&sub, sexes[k], &sex, err);
    if (!rc) rc = mbs_spec_section_keys(&sex, ms, 2, err);
    if (!rc) rc = mbs_spec_section_number(&sex, "mean", NAN, 0, 1, NAN, 0, &mean[k], err);
    if (!rc) rc = mbs_spec_section_number(&sex, "std", NAN, 0, 0, NAN, 0, &std[k], err);
  }
  return rc;
}

// a distribution given as {type: ..., ...} under `key` of an item (normal, uniform, lognormal,
// truncated normal, discrete, constant)
static int read_factor(const mbs_spec_section* it, segment_factor* f, mbs_error* err) {
  mbs_spec_section d;
  int rc = mbs_spec_section_sub(it, "scale", &d, err);
  if (rc) return rc;
  static const char* const types[] = {"uniform", "normal", "lognormal", "truncated_normal",
                                      "discrete", "constant"};
  static const mbs_dist_type tt[] = {MBS_DIST_UNIFORM, MBS_DIST_NORMAL, MBS_DIST_LOGNORMAL,
                                     MBS_DIST_TRUNCATED_NORMAL, MBS_DIST_DISCRETE,
                                     MBS_DIST_CONSTANT};
  int t = 0;
  if ((rc = mbs_spec_section_choice(&d, "type", types, 6, -1, &t, err))) return rc;
  f->dist.type = tt[t];
  static const char* const keys[6][5] = {{"type", "low", "high"},
                                         {"type", "mean", "std"},
                                         {"type", "mu", "sigma"},
                                         {"type", "mean", "std", "low", "high"},
                                         {"type", "values"},
                                         {"type", "value"}};
  static const int nkeys[6] = {3, 3, 3, 5, 2, 2};
  if ((rc = mbs_spec_section_keys(&d, keys[t], nkeys[t], err))) return rc;
  switch (t) {
    case 0:
      rc = mbs_spec_section_number(&d, "low", NAN, NAN, 0, NAN, 0, &f->dist.a, err);
      if (!rc) rc = mbs_spec_section_number(&d, "high", NAN, NAN, 0, NAN, 0, &f->dist.b, err);
      break;
    case 1:
    case 3:
      rc = mbs_spec_section_number(&d, "mean", NAN, NAN, 0, NAN, 0, &f->dist.a, err);
      if (!rc) rc = mbs_spec_section_number(&d, "std", NAN, NAN, 0, NAN, 0, &f->dist.b, err);
      if (!rc && t == 3) {
        rc = mbs_spec_section_number(&d, "low", NAN, NAN, 0, NAN, 0, &f->dist.lo, err);
        if (!rc) rc = mbs_spec_section_number(&d, "high", NAN, NAN, 0, NAN, 0, &f->dist.hi, err);
      }
      break;
    case 2:
      rc = mbs_spec_section_number(&d, "mu", NAN, NAN, 0, NAN, 0, &f->dist.a, err);
      if (!rc) rc = mbs_spec_section_number(&d, "sigma", NAN, NAN, 0, NAN, 0, &f->dist.b, err);
      break;
    case 4:
      rc = mbs_spec_section_numbers(&d, "values", &f->values, &f->dist.nvalues, err);
      f->dist.values = f->values;
      break;
    default:
      rc = mbs_spec_section_number(&d, "value", NAN, NAN, 0, NAN, 0, &f->dist.a, err);
  }
  if (rc) return rc;
  char what[300];
  snprintf(what, sizeof(what), "cohort segment '%s'", f->body_name);
  mbs_error de;
  if (mbs_distribution_check(&f->dist, what, &de))
    return mbs_spec_section_fail(it, "scale", de.code, err, "%s", de.message);
  return MBS_OK;
}

int mbs_cohort_wrap(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err);

int mbs_cohort_wrap(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  extern const mbs_driver_ops mbs_driver_cohort;
  extern const mbs_driver_ops mbs_driver_cohort_iterative;
  cohort_driver* c = calloc(1, sizeof(*c));
  if (!c) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  c->inner = *d;  // the design (and its preparation) it runs for every subject
  d->ops = &mbs_driver_cohort;
  d->self = c;
  d->prep = NULL;
  const mbs_spec_section* s = mbs_spec_find_section(spec, "cohort");
  c->iterative = c->inner.ops->iterative;
  if (c->iterative) d->ops = &mbs_driver_cohort_iterative;
  const size_t need = c->inner.ops->scratch + (c->inner.prep ? c->inner.prep->ops->scratch : 0);
  if (need > COHORT_SCRATCH)
    return MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "cohort: the design needs %zu bytes per "
                    "thread", need);
  static const char* const keys[] = {"subjects", "seed", "female", "height", "mass",
                                     "correlation", "truncate", "reference", "segments"};
  int rc = mbs_spec_section_keys(s, keys, (int)(sizeof(keys) / sizeof(keys[0])), err);
  if (!rc) rc = mbs_spec_section_integer(s, "subjects", LONG_MIN, 1, 1L << 30, &c->subjects, err);
  if (!rc) rc = mbs_spec_section_integer(s, "seed", 1, 0, LONG_MAX, &c->seed, err);
  if (!rc) rc = mbs_spec_section_number(s, "female", 0.5, 0, 0, 1, 0, &c->female, err);
  if (!rc) rc = mbs_spec_section_number(s, "correlation", 0.5, -1, 1, 1, 1, &c->rho, err);
  if (!rc) rc = mbs_spec_section_number(s, "truncate", 3, 0.5, 0, NAN, 0, &c->truncate, err);
  // ANSUR II (Gordon et al. 2014): stature and body mass of U.S. Army men and women
  static const double hd[4] = {1.756, 0.069, 1.629, 0.064};
  static const double md[4] = {85.5, 14.2, 67.8, 11.1};
  if (!rc) rc = read_pair(s, "height", hd, c->h_mean, c->h_std, err);
  if (!rc) rc = read_pair(s, "mass", md, c->m_mean, c->m_std, err);
  if (!rc && mbs_spec_section_has(s, "reference")) {
    mbs_spec_section ref;
    static const char* const rk[] = {"height", "mass"};
    rc = mbs_spec_section_sub(s, "reference", &ref, err);
    if (!rc) rc = mbs_spec_section_keys(&ref, rk, 2, err);
    if (!rc) rc = mbs_spec_section_number(&ref, "height", NAN, 0, 1, NAN, 0, &c->ref_height, err);
    if (!rc) rc = mbs_spec_section_number(&ref, "mass", NAN, 0, 1, NAN, 0, &c->ref_mass, err);
    c->has_reference = 1;
  }
  if (!rc) rc = mbs_spec_section_count(s, "segments", &c->nseg, err);
  if (!rc && c->nseg > 0 && !(c->seg = calloc((size_t)c->nseg, sizeof(*c->seg))))
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int i = 0; i < c->nseg && !rc; i++) {
    mbs_spec_section it;
    static const char* const sk[] = {"body", "scale"};
    rc = mbs_spec_section_item(s, "segments", i, &it, err);
    if (!rc) rc = mbs_spec_section_keys(&it, sk, 2, err);
    if (!rc) rc = mbs_spec_section_string(&it, "body", NULL, 0, &c->seg[i].body_name, err);
    if (!rc) rc = read_factor(&it, &c->seg[i], err);
  }
  if (rc) return rc;
  // the reference subject of mbstudy's own human: the one it is built for
  if (!c->has_reference && spec->posture && !spec->model_path) {
    c->ref_height = spec->posture->height;
    c->ref_mass = spec->posture->mass;
    c->has_reference = 1;
  }
  if (!c->has_reference)
    return mbs_spec_section_fail(s, NULL, MBS_ERR_PARSE, err,
                                 "reference: missing (required: the height and mass of the "
                                 "subject the model %s is made for)", spec->model);
  if (c->iterative) {  // a design per subject; the first keeps the preparation
    c->inst = calloc((size_t)c->subjects, sizeof(*c->inst));
    c->offset = calloc((size_t)c->subjects, sizeof(long));
    c->count = calloc((size_t)c->subjects, sizeof(long));
    c->done = calloc((size_t)c->subjects, sizeof(int));
    if (!c->inst || !c->offset || !c->count || !c->done)
      return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    c->inst[0] = c->inner;
    for (long k = 1; k < c->subjects; k++) {
      c->inst[k].ops = c->inner.ops;
      if ((rc = c->inner.ops->create(&c->inst[k], spec, err))) return rc;
    }
  }
  return MBS_OK;
}

static int cohort_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  (void)d;
  (void)spec;
  return MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "a cohort wraps a design (mbs_cohort_wrap)");
}

static int cohort_load_model(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  cohort_driver* c = d->self;
  mbs_driver* in = &c->inner;
  if (in->ops->load_model) return in->ops->load_model(in, P, err);
  if (in->prep && in->prep->ops->load_model) return in->prep->ops->load_model(in->prep, P, err);
  return mbs_plan_load_model(P, err);
}

static int cohort_axes(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  cohort_driver* c = d->self;
  mbs_driver* in = &c->inner;
  int rc = MBS_OK;
  if (in->prep && in->prep->ops->axes) rc = in->prep->ops->axes(in->prep, P, err);
  if (!rc && in->ops->axes) rc = in->ops->axes(in, P, err);
  if (!rc && c->iterative) {  // whose sample it is: the last of the axes
    double* levels = malloc((size_t)c->subjects * sizeof(double));
    if (!levels) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    for (long k = 0; k < c->subjects; k++) levels[k] = (double)k;
    c->subject_axis = P->np;
    rc = mbs_plan_add_axis(P, "cohort/subject", "1", levels, (int)c->subjects, err);
    free(levels);
  }
  return rc;
}

// the subjects: sex, then height and mass, a pure function of (seed, subject)
static void draw_subject(const cohort_driver* c, long i, double* female, double* h, double* m) {
  mbs_rng r = mbs_rng_make((uint64_t)c->seed, (uint64_t)i, COHORT_STREAM);
  const int f = mbs_rng_uniform(&r) < c->female;
  double z1 = 0, z2 = 0, zm = 0;
  for (int tries = 0; tries < 1000; tries++) {
    z1 = mbs_rng_normal(&r);
    z2 = mbs_rng_normal(&r);
    zm = c->rho * z1 + sqrt(1 - c->rho * c->rho) * z2;
    if (fabs(z1) <= c->truncate && fabs(zm) <= c->truncate) break;
  }
  *female = f;
  *h = c->h_mean[f] + c->h_std[f] * z1;
  *m = c->m_mean[f] + c->m_std[f] * zm;
}

static int cohort_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  cohort_driver* c = d->self;
  mbs_driver* in = &c->inner;
  const mbs_spec_section* s = mbs_spec_find_section(P->spec, "cohort");
  if (!P->sys)
    return mbs_spec_section_fail(s, NULL, MBS_ERR_ARGUMENT, err, "model '%s' is a test function: "
                                 "a cohort scales a model", P->spec->model);
  int rc = MBS_OK;
  if (in->prep) rc = in->prep->ops->plan(in->prep, P, err);
  if (!rc) rc = in->ops->plan(in, P, err);
  // the other subjects' designs plan alike (what they add to the plan is there already)
  for (long k = 1; c->iterative && k < c->subjects && !rc; k++)
    rc = c->inst[k].ops->plan(&c->inst[k], P, err);
  if (rc) return rc;
  c->inner_n = P->nsamples;
  if (c->inner_n > LONG_MAX / c->subjects)
    return mbs_spec_section_fail(s, "subjects", MBS_ERR_ARGUMENT, err, "too many samples");
  P->nsamples = c->inner_n * c->subjects;
  c->first_result = P->nresults;
  for (int k = 0; k < CR_N && !rc; k++)
    rc = mbs_plan_add_result(P, result_names[k], result_units[k], err);
  if (rc) return rc;
  c->nbody = mbs_system_nbody(P->sys);
  for (int i = 0; i < c->nseg; i++) {
    c->seg[i].body = mbs_body_find(P->sys, c->seg[i].body_name);
    if (c->seg[i].body <= 0) {
      mbs_spec_section it;
      mbs_spec_section_item(s, "segments", i, &it, err);
      return mbs_spec_section_fail(&it, "body", MBS_ERR_UNKNOWN_NAME, err,
                                   "'%s' is not a body of the model", c->seg[i].body_name);
    }
  }
  c->scaling = mbs_scaling_create(P->sys);
  c->fixed = calloc((size_t)c->nbody, 1);
  c->sex = malloc((size_t)c->subjects * sizeof(double));
  c->height = malloc((size_t)c->subjects * sizeof(double));
  c->mass = malloc((size_t)c->subjects * sizeof(double));
  c->factors = malloc((size_t)c->subjects * (size_t)c->nbody * sizeof(double));
  if (!c->scaling || !c->fixed || !c->sex || !c->height || !c->mass || !c->factors)
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  // apparatus (the posture study's platform) keeps its size
  if (P->com_skip) memcpy(c->fixed, P->com_skip, (size_t)c->nbody);
  for (long i = 0; i < c->subjects; i++) {
    draw_subject(c, i, &c->sex[i], &c->height[i], &c->mass[i]);
    double* L = c->factors + i * c->nbody;
    for (int b = 0; b < c->nbody; b++) L[b] = c->fixed[b] || b == 0 ? 1 : c->height[i] / c->ref_height;
    for (int k = 0; k < c->nseg; k++) {
      mbs_rng r = mbs_rng_make((uint64_t)c->seed, (uint64_t)i, COHORT_STREAM + 1 + (uint64_t)k);
      L[c->seg[k].body] *= mbs_distribution_quantile(&c->seg[k].dist, mbs_rng_uniform(&r));
    }
  }
  char n[32];
  snprintf(n, sizeof(n), "%ld", c->subjects);
  return mbs_plan_attribute(P, "cohort_subjects", n, err);
}

static void cohort_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  const cohort_driver* c = d->self;
  c->inner.ops->point(&c->inner, P, index % c->inner_n, params);
}

// the subject's size, then the design's preparation (or assembly)
static int cohort_prepare(const mbs_driver* d, mbs_sample* r) {
  const cohort_driver* c = d->self;
  const mbs_plan* P = r->P;
  const long i = c->iterative ? (long)r->params[c->subject_axis] : r->index / c->inner_n;
  double mass[1024];
  double* M = c->nbody <= 1024 ? mass : malloc((size_t)c->nbody * sizeof(double));
  if (!M) return MBS_ERR_NO_MEMORY;
  for (int b = 0; b < c->nbody; b++) M[b] = c->fixed[b] || b == 0 ? 1 : c->mass[i] / c->ref_mass;
  mbs_scaling_apply(c->scaling, r->st, c->factors + i * c->nbody, M);
  if (M != mass) free(M);
  r->results[c->first_result + CR_SUBJECT] = (double)i;
  r->results[c->first_result + CR_FEMALE] = c->sex[i];
  r->results[c->first_result + CR_HEIGHT] = c->height[i];
  r->results[c->first_result + CR_MASS] = c->mass[i];
  const mbs_driver* in = &c->inner;
  void* own = r->scratch;
  char* base = own;
  int rc = MBS_OK;
  if (in->ops->prepare) {
    r->scratch = base;
    rc = in->ops->prepare(in, r);
  }
  if (rc == MBS_OK && in->prep && in->prep->ops->prepare) {
    r->scratch = base + in->ops->scratch;
    rc = in->prep->ops->prepare(in->prep, r);
  }
  r->scratch = own;
  if (!in->ops->prepare && !(in->prep && in->prep->ops->prepare)) {
    rc = mbs_realize_instance(P->sys, r->st);
    if (rc == MBS_OK && mbs_system_nconstraint(P->sys) > 0) rc = mbs_assemble(P->sys, r->st, NULL);
  }
  return rc;
}

static void cohort_results(const mbs_driver* d, mbs_sample* r, int status) {
  const cohort_driver* c = d->self;
  const mbs_driver* in = &c->inner;
  void* own = r->scratch;
  char* base = own;
  if (in->prep && in->prep->ops->results) {
    r->scratch = base + in->ops->scratch;
    in->prep->ops->results(in->prep, r, status);
  }
  if (in->ops->results) {
    r->scratch = base;
    in->ops->results(in, r, status);
  }
  r->scratch = own;
}

// /cohort: the subjects, and per subject the statistics of every scalar over its successful
// samples
static int cohort_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  cohort_driver* c = d->self;
  const long S = c->subjects, n = c->inner_n;
  mbs_results* r = mbs_results_open(path, err);
  if (!r) return err->code;
  int rc = mbs_results_group(r, "cohort", 1, err);
  long* female = malloc((size_t)S * sizeof(long));
  long* idx = malloc((size_t)S * sizeof(long));
  double* stat = malloc(4 * (size_t)S * sizeof(double));
  double* code = NULL;
  if (!female || !idx || !stat) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (long i = 0; i < S && female; i++) {
    female[i] = (long)c->sex[i];
    idx[i] = i;
  }
  const long ds[1] = {S}, dsb[2] = {S, c->nbody};
  if (!rc) rc = mbs_results_write_int(r, "/cohort/subject", 1, ds, idx, err);
  if (!rc) rc = mbs_results_write_int(r, "/cohort/female", 1, ds, female, err);
  if (!rc) rc = mbs_results_write(r, "/cohort/height", 1, ds, c->height, "m", err);
  if (!rc) rc = mbs_results_write(r, "/cohort/mass", 1, ds, c->mass, "kg", err);
  if (!rc) rc = mbs_results_write(r, "/cohort/length_factors", 2, dsb, c->factors, NULL, err);
  if (!rc) {
    const char** bodies = calloc((size_t)c->nbody + 1, sizeof(char*));
    if (!bodies) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    for (int b = 0; b < c->nbody && bodies; b++) bodies[b] = mbs_body_name(P->sys, b);
    if (!rc) rc = mbs_results_strings(r, "/cohort/bodies", c->nbody, bodies, 1, err);
    free(bodies);
  }
  if (!rc) rc = mbs_results_attach(r, "/cohort/length_factors", 1, "/cohort/bodies", "body", err);
  long dims[4];
  int rank;
  double* who = NULL;  // each sample's subject
  if (!rc) rc = mbs_results_read(r, "/status/code", &code, dims, &rank, err);
  const long N = dims[0];
  if (!rc) rc = mbs_results_read(r, "/scalars/cohort_subject", &who, dims, &rank, err);
  for (int k = 0; k < P->nscal && !rc; k++) {
    if (P->scal[k].source == MBS_SC_DRIVER && P->scal[k].index >= c->first_result) continue;
    char ds_name[1100];
    snprintf(ds_name, sizeof(ds_name), "/scalars/%s", P->scal[k].name);
    double* v = NULL;
    if ((rc = mbs_results_read(r, ds_name, &v, dims, &rank, err))) break;
    // per subject: count, sum, sum of squares, min, max over its successful samples
    double* acc = calloc(5 * (size_t)S + 1, sizeof(double));
    if (!acc) {
      free(v);
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      break;
    }
    for (long i = 0; i < S; i++) {
      acc[3 * S + i] = INFINITY;
      acc[4 * S + i] = -INFINITY;
    }
    for (long s = 0; s < N; s++) {
      const long i = (long)who[s];
      if (code[s] != 0 || isnan(v[s]) || i < 0 || i >= S) continue;
      acc[i] += 1;
      acc[S + i] += v[s];
      acc[2 * S + i] += v[s] * v[s];
      acc[3 * S + i] = fmin(acc[3 * S + i], v[s]);
      acc[4 * S + i] = fmax(acc[4 * S + i], v[s]);
    }
    for (long i = 0; i < S; i++) {
      const double cnt = acc[i], mean = cnt > 0 ? acc[S + i] / cnt : NAN;
      stat[i] = mean;
      stat[S + i] = cnt > 1 ? sqrt(fmax(0, (acc[2 * S + i] - cnt * mean * mean) / (cnt - 1)))
                            : NAN;
      stat[2 * S + i] = cnt > 0 ? acc[3 * S + i] : NAN;
      stat[3 * S + i] = cnt > 0 ? acc[4 * S + i] : NAN;
    }
    free(acc);
    free(v);
    static const char* const names[4] = {"mean", "std", "min", "max"};
    for (int q = 0; q < 4 && !rc; q++) {
      char name[1200];
      snprintf(name, sizeof(name), "/cohort/scalars/%s/%s", P->scal[k].name, names[q]);
      rc = mbs_results_write(r, name, 1, ds, stat + q * S, P->scal[k].unit, err);
    }
  }
  char sv[64];
  snprintf(sv, sizeof(sv), "%ld", n);
  if (!rc && !c->iterative)
    rc = mbs_results_attribute(r, "/cohort", "samples_per_subject", sv, err);
  snprintf(sv, sizeof(sv), "%g m, %g kg", c->ref_height, c->ref_mass);
  if (!rc) rc = mbs_results_attribute(r, "/cohort", "reference_subject", sv, err);
  if (!rc)
    rc = mbs_results_attribute(r, "/cohort", "scaling",
                               "every segment's lengths by height / reference height (times its "
                               "segment factor), every mass by mass / reference mass, inertias "
                               "by both; the subject of a sample: /scalars/cohort_subject "
                               "(one-shot designs: subject x samples_per_subject + the "
                               "design's sample)", err);
  if (!rc)
    rc = mbs_results_attribute(r, "/cohort", "design", c->inner.ops->name, err);
  free(female);
  free(idx);
  free(stat);
  free(code);
  free(who);
  mbs_error cerr;
  if (mbs_results_close(r, &cerr) && !rc) {
    *err = cerr;
    rc = cerr.code;
  }
  return rc;
}

// an iterative design per subject: each writes its group (/fit, /calibration), which is moved
// under /cohort/subjects/<k>
static int cohort_iterative_finish(mbs_driver* d, const mbs_plan* P, const char* path,
                                   mbs_error* err) {
  cohort_driver* c = d->self;
  const char* group = c->inner.ops->name;  // "fit" or "calibration"
  int rc0 = cohort_finish(d, P, path, err);  // (it makes /cohort anew: first)
  if (rc0) return rc0;
  for (long k = 0; k < c->subjects; k++) {
    int rc = c->inst[k].ops->finish ? c->inst[k].ops->finish(&c->inst[k], P, path, err) : 0;
    if (rc) return rc;
    mbs_results* r = mbs_results_open(path, err);
    if (!r) return err->code;
    char from[64], to[96];
    snprintf(from, sizeof(from), "/%s", group);
    snprintf(to, sizeof(to), "/cohort/subjects/%ld/%s", k, group);
    rc = mbs_results_move(r, from, to, err);
    mbs_error cerr;
    if (mbs_results_close(r, &cerr) && !rc) {
      *err = cerr;
      rc = cerr.code;
    }
    if (rc) return rc;
  }
  return MBS_OK;
}

static int cohort_next_batch(mbs_driver* d, const mbs_plan* P, mbs_batch* b, mbs_error* err) {
  cohort_driver* c = d->self;
  const int np = P->np;
  long rows = 0;
  for (long k = 0; k < c->subjects; k++) {
    c->count[k] = 0;
    c->offset[k] = rows;
    if (c->done[k]) continue;
    mbs_batch bk = {0, 0, NULL};
    int rc = c->inst[k].ops->next_batch(&c->inst[k], P, &bk, err);
    if (rc) return rc;
    if (bk.count == 0) {
      c->done[k] = 1;
      continue;
    }
    if (rows + bk.count > c->capacity_rows) {
      const long cap = 2 * (rows + bk.count);
      double* p = realloc(c->batch, (size_t)cap * (size_t)np * sizeof(double));
      if (!p) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      c->batch = p;
      c->capacity_rows = cap;
    }
    memcpy(c->batch + rows * np, bk.params, (size_t)bk.count * (size_t)np * sizeof(double));
    for (long j = 0; j < bk.count; j++) c->batch[(rows + j) * np + c->subject_axis] = (double)k;
    c->count[k] = bk.count;
    rows += bk.count;
  }
  b->first = c->next;
  b->count = rows;
  b->params = rows ? c->batch : NULL;
  return MBS_OK;
}

static int cohort_absorb(mbs_driver* d, const mbs_plan* P, const mbs_batch_results* b,
                         mbs_error* err) {
  cohort_driver* c = d->self;
  for (long k = 0; k < c->subjects; k++) {
    if (c->count[k] == 0) continue;
    const long o = c->offset[k];
    const mbs_batch_results sub = {b->first + o, c->count[k], b->params + o * P->np,
                                   b->status + o, b->scalars + o * P->nscal,
                                   b->traj + o * P->frame_values, b->frames + o};
    const int rc = c->inst[k].ops->absorb(&c->inst[k], P, &sub, err);
    if (rc) return rc;
  }
  c->next = b->first + b->count;
  return MBS_OK;
}

static void cohort_no_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  (void)d;
  (void)index;
  for (int j = 0; j < P->np; j++) params[j] = NAN;
}

static void cohort_destroy(mbs_driver* d) {
  cohort_driver* c = d->self;
  if (!c) return;
  mbs_driver_destroy(&c->inner);
  for (long k = 1; c->inst && k < c->subjects; k++)
    if (c->inst[k].ops) mbs_driver_destroy(&c->inst[k]);
  free(c->inst);
  free(c->offset);
  free(c->count);
  free(c->done);
  free(c->batch);
  for (int i = 0; i < c->nseg; i++) {
    free(c->seg[i].body_name);
    free(c->seg[i].values);
  }
  free(c->seg);
  mbs_scaling_free(c->scaling);
  free(c->fixed);
  free(c->sex);
  free(c->height);
  free(c->mass);
  free(c->factors);
  free(c);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_cohort = {
    .name = "cohort",
    .scratch = COHORT_SCRATCH,
    .create = cohort_create,
    .load_model = cohort_load_model,
    .axes = cohort_axes,
    .plan = cohort_plan,
    .point = cohort_point,
    .prepare = cohort_prepare,
    .results = cohort_results,
    .finish = cohort_finish,
    .destroy = cohort_destroy,
};

const mbs_driver_ops mbs_driver_cohort_iterative = {
    .name = "cohort",
    .iterative = 1,
    .scratch = COHORT_SCRATCH,
    .create = cohort_create,
    .load_model = cohort_load_model,
    .axes = cohort_axes,
    .plan = cohort_plan,
    .next_batch = cohort_next_batch,
    .point = cohort_no_point,
    .prepare = cohort_prepare,
    .results = cohort_results,
    .absorb = cohort_absorb,
    .finish = cohort_iterative_finish,
    .destroy = cohort_destroy,
};
