// Global sensitivity analysis: Saltelli rows and Sobol' indices, Morris trajectories and
// elementary effects (include/mbs/gsa.h).
//
// Random numbers (mbs_rng, keyed by the caller's seed) use streams of their own, tagged "GSA"
// far above the sampler's design streams (0..63 for random designs, 1000 + j for LHS):
//   stream gsa_stream(MORRIS_BASE, 0),      sample t: the base levels of trajectory t (draw j)
//   stream gsa_stream(MORRIS_DIRECTION, 0), sample t: its directions (draw j)
//   stream gsa_stream(MORRIS_ORDER, 0),     sample t: its order of the parameters (Fisher-Yates)
//   stream gsa_stream(SOBOL_BOOTSTRAP, 0),  sample b: the base points of Sobol' resample b
//   stream gsa_stream(MORRIS_BOOTSTRAP, j), sample b: parameter j's trajectories in resample b
#include "mbs/gsa.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/sampler.h"

enum gsa_family {
  MORRIS_BASE = 1,
  MORRIS_DIRECTION = 2,
  MORRIS_ORDER = 3,
  SOBOL_BOOTSTRAP = 4,
  MORRIS_BOOTSTRAP = 5
};

static uint64_t gsa_stream(enum gsa_family family, uint64_t j) {
  return (UINT64_C(0x475341) << 32) | ((uint64_t)family << 24) | j;
}

// an index uniform in 0..n-1 from the next draw of r
static long draw_index(mbs_rng* r, long n) {
  const long k = (long)(mbs_rng_uniform(r) * (double)n);
  return k < n ? k : n - 1;
}

// running mean and sum of squared deviations (Welford), one per bootstrapped quantity
static void welford_add(double* mean, double* m2, long count_after, double x) {
  const double d = x - *mean;
  *mean += d / (double)count_after;
  *m2 += d * (x - *mean);
}

static double bootstrap_conf(double z, double m2, int nboot) {
  return nboot < 2 ? NAN : z * sqrt(m2 / (nboot - 1));
}

static void fill_nan(double* x, long n) {
  for (long i = 0; i < n; i++) x[i] = NAN;
}

//---------------------------------- Saltelli rows --------------------------------------------

static long saltelli_per_base(int D, int second_order) {
  return second_order ? 2L * D + 2 : (long)D + 2;
}

long mbs_saltelli_rows(long N, int D, int second_order) {
  if (N < 1 || D < 1 || D > MBS_SALTELLI_MAX_DIM) return -1;
  const long per = saltelli_per_base(D, second_order);
  if (N > LONG_MAX / per) return -1;
  return N * per;
}

int mbs_saltelli_check(long N, int D, int second_order, mbs_error* err) {
  if (D < 1 || D > MBS_SALTELLI_MAX_DIM)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "Saltelli design",
                    "Saltelli design: %d parameters, expected 1 to %d (the base points are "
                    "2D-dimensional Sobol' points)",
                    D, MBS_SALTELLI_MAX_DIM);
  if (N < 1)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "Saltelli design",
                    "Saltelli design: %ld base points, expected at least 1", N);
  if (mbs_saltelli_rows(N, D, second_order) < 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "Saltelli design",
                    "Saltelli design: %ld base points of %d parameters are too many rows", N, D);
  return MBS_OK;
}

void mbs_saltelli_point(long row, int D, int second_order, const double* ab, double* u) {
  if (D < 1) return;
  if (row < 0) {
    fill_nan(u, D);
    return;
  }
  const long per = saltelli_per_base(D, second_order);
  const long r = row % per;
  const double* A = ab;
  const double* B = ab + D;
  if (r == 0) {
    memcpy(u, A, (size_t)D * sizeof(double));
  } else if (r == per - 1) {
    memcpy(u, B, (size_t)D * sizeof(double));
  } else if (r <= D) {  // AB_j: A with column j from B
    const long j = r - 1;
    memcpy(u, A, (size_t)D * sizeof(double));
    u[j] = B[j];
  } else {  // BA_j: B with column j from A
    const long j = r - 1 - D;
    memcpy(u, B, (size_t)D * sizeof(double));
    u[j] = A[j];
  }
}

//---------------------------------- Sobol' indices -------------------------------------------

mbs_sobol_options mbs_sobol_options_default(void) {
  const mbs_sobol_options o = {100, 0.95, 0, MBS_SOBOL_SALTELLI};
  return o;
}

void mbs_sobol_indices_free(mbs_sobol_indices* s) {
  if (!s) return;
  free(s->S1);
  memset(s, 0, sizeof(*s));
}

// The indices from the base points pick[0..n-1] (NULL: 0..n-1) of the centred blocks Yc
// (per rows each): S1 (D), ST (D), S2 (D x D, j < k only). acc: 2D + D*D scratch sums.
static void sobol_estimate(const double* Yc, long per, const long* pick, long n, int D,
                           int second_order, mbs_sobol_estimator est, double* acc, double* S1,
                           double* ST, double* S2) {
  double* s1 = acc;
  double* st = acc + D;
  double* s2 = acc + 2 * D;
  memset(acc, 0, (size_t)(2 * D + D * D) * sizeof(double));
  // V: population variance of the 2n values f(A), f(B), by two passes
  double mean = 0;
  for (long i = 0; i < n; i++) {
    const double* y = Yc + (pick ? pick[i] : i) * per;
    mean += y[0] + y[per - 1];
  }
  mean /= (double)(2 * n);
  double V = 0;
  for (long i = 0; i < n; i++) {
    const double* y = Yc + (pick ? pick[i] : i) * per;
    const double a = y[0] - mean, b = y[per - 1] - mean;
    V += a * a + b * b;
  }
  V /= (double)(2 * n);

  for (long i = 0; i < n; i++) {
    const double* y = Yc + (pick ? pick[i] : i) * per;
    const double fA = y[0], fB = y[per - 1];
    const double* fAB = y + 1;
    const double* fBA = y + 1 + D;
    for (int j = 0; j < D; j++) {
      if (est == MBS_SOBOL_SALTELLI) {
        s1[j] += fB * (fAB[j] - fA);
      } else {
        const double d = fB - fAB[j];
        s1[j] += d * d;
      }
      const double e = fA - fAB[j];
      st[j] += e * e;
    }
    if (second_order) {
      for (int j = 0; j < D; j++)
        for (int k = j + 1; k < D; k++) {
          if (est == MBS_SOBOL_SALTELLI) {
            s2[j * D + k] += fBA[j] * fAB[k] - fA * fB;
          } else {
            const double d = fBA[j] - fAB[k];
            s2[j * D + k] += d * d;
          }
        }
    }
  }
  const double inv_n = 1.0 / (double)n;
  for (int j = 0; j < D; j++) {
    S1[j] = est == MBS_SOBOL_SALTELLI ? s1[j] * inv_n / V : (V - 0.5 * s1[j] * inv_n) / V;
    ST[j] = 0.5 * st[j] * inv_n / V;
  }
  if (second_order) {
    for (int j = 0; j < D; j++)
      for (int k = j + 1; k < D; k++) {
        const double closed = est == MBS_SOBOL_SALTELLI
                                  ? s2[j * D + k] * inv_n / V
                                  : (V - 0.5 * s2[j * D + k] * inv_n) / V;
        S2[j * D + k] = closed - S1[j] - S1[k];
      }
  }
}

int mbs_sobol_analyze(const double* Y, long N, int D, int second_order,
                      const mbs_sobol_options* opt, mbs_sobol_indices* out, mbs_error* err) {
  static const char* const component = "Sobol' analysis";
  if (!out) return MBS_FAIL(err, MBS_ERR_ARGUMENT, component, "%s: no result", component);
  memset(out, 0, sizeof(*out));
  const mbs_sobol_options o = opt ? *opt : mbs_sobol_options_default();
  if (!Y) return MBS_FAIL(err, MBS_ERR_ARGUMENT, component, "%s: no outputs", component);
  int status = mbs_saltelli_check(N, D, second_order, err);
  if (status) return status;
  if (o.nboot < 0)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                    "%s: %d bootstrap resamples, expected 0 or more", component, o.nboot);
  if (!(o.conf_level > 0 && o.conf_level < 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                    "%s: confidence level %g is not inside (0, 1)", component, o.conf_level);
  if ((int)o.estimator < 0 || o.estimator >= MBS_SOBOL_ESTIMATOR_COUNT)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component, "%s: unknown estimator %d", component,
                    (int)o.estimator);

  const long per = saltelli_per_base(D, second_order);
  const int second = second_order != 0;
  long n = 0;
  for (long i = 0; i < N; i++) {
    int finite = 1;
    for (long r = 0; r < per && finite; r++) finite = isfinite(Y[i * per + r]);
    n += finite;
  }
  if (n < 2)
    return MBS_FAIL(err, MBS_ERR_NAN, component,
                    "%s: only %ld of %ld base points have finite outputs in all their %ld rows; "
                    "at least 2 are needed",
                    component, n, N, per);

  const long nq = 2L * D + (long)D * D;  // S1, ST, S2 of one estimate
  double* result = malloc((size_t)(4L * D + 2L * D * D) * sizeof(double));
  double* Yc = malloc((size_t)(n * per) * sizeof(double));
  double* work = malloc((size_t)(4 * nq) * sizeof(double));
  long* pick = malloc((size_t)n * sizeof(long));
  if (!result || !Yc || !work || !pick) {
    free(result);
    free(Yc);
    free(work);
    free(pick);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, component,
                    "%s: out of memory for %ld base points of %d parameters", component, N, D);
  }
  out->dim = D;
  out->second_order = second;
  out->n_used = n;
  out->n_total = N;
  out->S1 = result;
  out->S1_conf = result + D;
  out->ST = result + 2 * D;
  out->ST_conf = result + 3 * D;
  out->S2 = result + 4 * D;
  out->S2_conf = result + 4 * D + (long)D * D;
  fill_nan(out->S2, 2L * D * D);

  // the finite blocks, centred on the mean of all their rows (SALib standardizes Y; the
  // estimators of S1 and S2 "saltelli" depend on the shift, the scale cancels)
  long m = 0;
  double mean = 0;
  for (long i = 0; i < N; i++) {
    const double* y = Y + i * per;
    int finite = 1;
    for (long r = 0; r < per && finite; r++) finite = isfinite(y[r]);
    if (!finite) continue;
    memcpy(Yc + m * per, y, (size_t)per * sizeof(double));
    for (long r = 0; r < per; r++) mean += y[r];
    m++;
  }
  mean /= (double)(n * per);
  for (long r = 0; r < n * per; r++) Yc[r] -= mean;

  double* acc = work;
  double* q = work + nq;
  double* bmean = work + 2 * nq;
  double* bm2 = work + 3 * nq;
  sobol_estimate(Yc, per, NULL, n, D, second, o.estimator, acc, out->S1, out->ST, out->S2);

  // bootstrap: resample the base points with replacement, recompute every index
  memset(bmean, 0, (size_t)(2 * nq) * sizeof(double));
  for (int b = 0; b < o.nboot; b++) {
    mbs_rng r = mbs_rng_make(o.seed, (uint64_t)b, gsa_stream(SOBOL_BOOTSTRAP, 0));
    for (long i = 0; i < n; i++) pick[i] = draw_index(&r, n);
    sobol_estimate(Yc, per, pick, n, D, second, o.estimator, acc, q, q + D, q + 2 * D);
    for (long k = 0; k < nq; k++) welford_add(&bmean[k], &bm2[k], b + 1, q[k]);
  }
  const double z = mbs_normal_quantile(0.5 + 0.5 * o.conf_level);
  for (int j = 0; j < D; j++) {
    out->S1_conf[j] = bootstrap_conf(z, bm2[j], o.nboot);
    out->ST_conf[j] = bootstrap_conf(z, bm2[D + j], o.nboot);
  }
  if (second)
    for (int j = 0; j < D; j++)
      for (int k = j + 1; k < D; k++)
        out->S2_conf[j * D + k] = bootstrap_conf(z, bm2[2 * D + j * D + k], o.nboot);

  free(Yc);
  free(work);
  free(pick);
  return MBS_OK;
}

//---------------------------------- Morris trajectories --------------------------------------

static int morris_valid(int D, int levels) {
  return D >= 1 && D <= MBS_MORRIS_MAX_DIM && levels >= 2 && levels % 2 == 0;
}

long mbs_morris_rows(long N, int D) {
  if (N < 1 || D < 1 || D > MBS_MORRIS_MAX_DIM || N > LONG_MAX / (D + 1)) return -1;
  return N * (D + 1);
}

int mbs_morris_check(long N, int D, int levels, mbs_error* err) {
  static const char* const component = "Morris design";
  if (D < 1 || D > MBS_MORRIS_MAX_DIM)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, component, "%s: %d parameters, expected 1 to %d",
                    component, D, MBS_MORRIS_MAX_DIM);
  if (levels < 2 || levels % 2 != 0)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                    "%s: %d levels, expected an even number of at least 2", component, levels);
  if (N < 1)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, component,
                    "%s: %ld trajectories, expected at least 1", component, N);
  if (mbs_morris_rows(N, D) < 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, component,
                    "%s: %ld trajectories of %d parameters are too many rows", component, N, D);
  return MBS_OK;
}

double mbs_morris_delta(int levels) { return levels / (2.0 * (levels - 1)); }

void mbs_morris_point(uint64_t seed, long row, int D, int levels, double* u) {
  if (D < 1) return;
  if (row < 0 || !morris_valid(D, levels)) {
    fill_nan(u, D);
    return;
  }
  const uint64_t t = (uint64_t)(row / (D + 1));
  const int s = (int)(row % (D + 1));
  const int half = levels / 2;  // Delta in grid steps; base levels 0..half-1
  // the order of the parameters, a Fisher-Yates shuffle kept in u as exact small integers
  for (int j = 0; j < D; j++) u[j] = j;
  mbs_rng ro = mbs_rng_make(seed, t, gsa_stream(MORRIS_ORDER, 0));
  for (int i = D - 1; i > 0; i--) {
    const long k = draw_index(&ro, i + 1);
    const double w = u[i];
    u[i] = u[k];
    u[k] = w;
  }
  // flag the parameters moved by row s (the first s in the order) by adding D to their slot;
  // the order itself stays readable as u[i] mod D
  for (int i = 0; i < s; i++) u[(long)u[i] % D] += D;
  mbs_rng rb = mbs_rng_make(seed, t, gsa_stream(MORRIS_BASE, 0));
  mbs_rng rd = mbs_rng_make(seed, t, gsa_stream(MORRIS_DIRECTION, 0));
  for (int j = 0; j < D; j++) {
    const int moved = u[j] >= D;
    const int base = (int)draw_index(&rb, half);
    const int up = mbs_rng_uniform(&rd) < 0.5;
    // up: from the base level to base + half; down: from base + half to the base level
    const int level = (up == moved) ? base + half : base;
    u[j] = (double)level / (double)(levels - 1);
  }
}

//---------------------------------- Morris analysis ------------------------------------------

mbs_morris_options mbs_morris_options_default(void) {
  const mbs_morris_options o = {1000, 0.95, 0};
  return o;
}

void mbs_morris_result_free(mbs_morris_result* m) {
  if (!m) return;
  free(m->mu);
  memset(m, 0, sizeof(*m));
}

int mbs_morris_analyze(const double* U, const double* Y, long N, int D,
                       const mbs_morris_options* opt, mbs_morris_result* out, mbs_error* err) {
  static const char* const component = "Morris analysis";
  if (!out) return MBS_FAIL(err, MBS_ERR_ARGUMENT, component, "%s: no result", component);
  memset(out, 0, sizeof(*out));
  const mbs_morris_options o = opt ? *opt : mbs_morris_options_default();
  if (!U || !Y)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, component, "%s: no points or outputs", component);
  if (D < 1 || D > MBS_MORRIS_MAX_DIM || N < 1 || mbs_morris_rows(N, D) < 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, component,
                    "%s: %ld trajectories of %d parameters, expected at least 1 of 1 to %d",
                    component, N, D, MBS_MORRIS_MAX_DIM);
  if (o.nboot < 0)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                    "%s: %d bootstrap resamples, expected 0 or more", component, o.nboot);
  if (!(o.conf_level > 0 && o.conf_level < 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                    "%s: confidence level %g is not inside (0, 1)", component, o.conf_level);

  const long per = D + 1;
  long n = 0;
  for (long t = 0; t < N; t++) {
    int finite = 1;
    for (long r = 0; r < per && finite; r++) finite = isfinite(Y[t * per + r]);
    n += finite;
  }
  if (n < 2)
    return MBS_FAIL(err, MBS_ERR_NAN, component,
                    "%s: only %ld of %ld trajectories have finite outputs in all their %ld rows; "
                    "at least 2 are needed",
                    component, n, N, per);

  double* result = malloc((size_t)(4L * D) * sizeof(double));
  double* ee = malloc((size_t)(n * D) * sizeof(double));  // ee[j * n + trajectory]
  long* seen = malloc((size_t)D * sizeof(long));
  if (!result || !ee || !seen) {
    free(result);
    free(ee);
    free(seen);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, component,
                    "%s: out of memory for %ld trajectories of %d parameters", component, N, D);
  }

  // elementary effects; every trajectory's steps are checked, used or not
  for (int j = 0; j < D; j++) seen[j] = -1;
  long m = 0;
  for (long t = 0; t < N; t++) {
    const double* y = Y + t * per;
    int finite = 1;
    for (long r = 0; r < per && finite; r++) finite = isfinite(y[r]);
    for (long k = 0; k < D; k++) {
      const double* u0 = U + (t * per + k) * D;
      const double* u1 = u0 + D;
      int changed = -1, nchanged = 0;
      for (int j = 0; j < D; j++) {
        if (!isfinite(u0[j]) || !isfinite(u1[j])) {
          nchanged = -1;
          break;
        }
        if (u1[j] != u0[j]) {
          changed = j;
          nchanged++;
        }
      }
      const char* problem = nchanged < 0       ? "has a non-finite coordinate"
                            : nchanged != 1    ? "does not change exactly one coordinate"
                            : seen[changed] == t ? "changes a parameter changed before"
                                               : NULL;
      if (problem) {
        free(result);
        free(ee);
        free(seen);
        return MBS_FAIL(err, MBS_ERR_ARGUMENT, component,
                        "%s: trajectory %ld, step %ld (rows %ld and %ld) %s", component, t, k,
                        t * per + k, t * per + k + 1, problem);
      }
      seen[changed] = t;
      if (finite) ee[changed * n + m] = (y[k + 1] - y[k]) / (u1[changed] - u0[changed]);
    }
    m += finite;
  }

  out->dim = D;
  out->n_used = n;
  out->n_total = N;
  out->mu = result;
  out->mu_star = result + D;
  out->sigma = result + 2 * D;
  out->mu_star_conf = result + 3 * D;
  const double z = mbs_normal_quantile(0.5 + 0.5 * o.conf_level);
  for (int j = 0; j < D; j++) {
    const double* e = ee + (long)j * n;
    double sum = 0, sum_abs = 0;
    for (long i = 0; i < n; i++) {
      sum += e[i];
      sum_abs += fabs(e[i]);
    }
    const double mu = sum / (double)n;
    double ss = 0;
    for (long i = 0; i < n; i++) ss += (e[i] - mu) * (e[i] - mu);
    out->mu[j] = mu;
    out->mu_star[j] = sum_abs / (double)n;
    out->sigma[j] = sqrt(ss / (double)(n - 1));
    // bootstrap of mu_star: resample this parameter's effects with replacement (as SALib,
    // each parameter on its own resampling)
    double bmean = 0, bm2 = 0;
    for (int b = 0; b < o.nboot; b++) {
      mbs_rng r = mbs_rng_make(o.seed, (uint64_t)b, gsa_stream(MORRIS_BOOTSTRAP, (uint64_t)j));
      double s = 0;
      for (long i = 0; i < n; i++) s += fabs(e[draw_index(&r, n)]);
      welford_add(&bmean, &bm2, b + 1, s / (double)n);
    }
    out->mu_star_conf[j] = bootstrap_conf(z, bm2, o.nboot);
  }
  free(ee);
  free(seen);
  return MBS_OK;
}
