// Exact percentiles by histogram refinement (io/pselect.c) against a full sort of each column
// with numpy's linear method, bit for bit: columns of uniform, normal-like, log-spread,
// sign-spanning, tied (a few distinct values), all-equal, one-value, empty (all NaN),
// NaN-sprinkled, infinite and subnormal values, extremes near DBL_MAX, -0/+0 and a column
// whose values differ by one ulp; each with the default settings and with a tiny gather cap and
// budget (deeper refinement, nodes waiting for later passes); the number of passes stays
// bounded (a few for smooth data, at most 10 for any 64-bit key range) and memory does not
// depend on the row count (what is allocated is checked against the budget by construction in
// pselect.c; here the passes are counted).
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../io/pselect.h"
#include "mbs_test.h"

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// numpy's default percentile of the non-NaN values of x[0..n)
static void reference(const double* x, long n, const double* pct, int npct, double* out) {
  double* v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  long m = 0;
  for (long i = 0; i < n; i++)
    if (!isnan(x[i])) v[m++] = x[i];
  qsort(v, (size_t)m, sizeof(double), cmp_double);
  for (int l = 0; l < npct; l++) {
    if (m == 0) {
      out[l] = NAN;
      continue;
    }
    const double h = (double)(m - 1) * (pct[l] / 100.0);
    const double lo = floor(h);
    long i = (long)lo;
    if (i < 0) i = 0;
    if (i > m - 1) i = m - 1;
    const long j = i + 1 < m ? i + 1 : m - 1;
    const double g = h - lo, a = v[i], b = v[j], d = b - a;
    out[l] = g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
  }
  free(v);
}

static int same_bits(double a, double b) {
  if (isnan(a) && isnan(b)) return 1;
  return memcmp(&a, &b, sizeof a) == 0 || (a == 0 && b == 0);
}

enum { NCOLS = 17 };

static double value(int col, long i, long n, mbs_test_rng* r) {
  const double u = mbs_test_uniform(r, 0, 1);
  switch (col) {
    case 0: return u;                                        // uniform
    case 1: {                                                // about normal
      double s = 0;
      for (int k = 0; k < 6; k++) s += mbs_test_uniform(r, -1, 1);
      return 3.0 + s;
    }
    case 2: return exp(mbs_test_uniform(r, -40, 40));        // log-spread
    case 3: return mbs_test_uniform(r, -1, 1) * 1e3;         // both signs
    case 4: return floor(u * 5) - 2;                         // 5 distinct values
    case 5: return 0.125;                                    // all equal
    case 6: return i == n / 2 ? 7.5 : NAN;                   // one value
    case 7: return NAN;                                      // none
    case 8: return u < 0.3 ? NAN : u;                        // NaN sprinkled
    case 9: return u < 0.01 ? INFINITY : u > 0.99 ? -INFINITY : u;  // infinities
    case 10: return u * 4.9e-321;                            // subnormal
    case 11: return (u < 0.5 ? -1 : 1) * DBL_MAX * u;        // near the largest
    case 12: return u < 0.5 ? -0.0 : 0.0;                    // signed zeros
    case 13: return 1.0 + (u < 0.5 ? 0 : DBL_EPSILON);       // one ulp apart
    case 14: return i % 2 ? 1e300 : 1.0 + u * 1e-12;         // clustered far from a tail
    case 15: return (double)(n - i);                         // decreasing integers
    default: return u < 0.999 ? 42.0 : u;                    // nearly all tied
  }
}

static void run_case(long n, long cap, size_t budget, const char* what) {
  const double pct[] = {0, 1, 2.5, 5, 25, 50, 75, 95, 97.5, 99, 100, 33.3};
  const int npct = (int)(sizeof pct / sizeof pct[0]);
  double* x = malloc((size_t)n * NCOLS * sizeof(double));  // row-major: row i, column c
  mbs_test_rng r = {0x9E3779B97F4A7C15ULL ^ (unsigned long long)n};
  for (long i = 0; i < n; i++)
    for (int c = 0; c < NCOLS; c++) x[i * NCOLS + c] = value(c, i, n, &r);
  mbs_pselect* s = mbs_pselect_create(NCOLS, pct, npct, cap, budget);
  EXPECT_TRUE(s != NULL);
  if (!s) {
    free(x);
    return;
  }
  int rc, guard = 0;
  while ((rc = mbs_pselect_begin_pass(s)) == 1 && guard++ < 10000) {
    for (long i = 0; i < n; i++) mbs_pselect_row(s, x + i * NCOLS, 1);
    EXPECT_OK(mbs_pselect_end_pass(s));
  }
  EXPECT_EQ_INT(rc, 0);
  double got[12 * NCOLS], want[12], col[1];
  (void)col;
  mbs_pselect_result(s, got, NCOLS);
  double* cx = malloc((size_t)n * sizeof(double));
  int bad = 0;
  for (int c = 0; c < NCOLS; c++) {
    for (long i = 0; i < n; i++) cx[i] = x[i * NCOLS + c];
    reference(cx, n, pct, npct, want);
    for (int l = 0; l < npct; l++) {
      const double g = got[l * NCOLS + c];
      if (!same_bits(g, want[l])) {
        if (bad++ < 10)
          fprintf(stderr, "%s, n = %ld: column %d, %g %%: %.17g, sorted %.17g\n", what, n, c,
                  pct[l], g, want[l]);
      }
    }
  }
  EXPECT_EQ_INT(bad, 0);
  // range pass + at most one pass per 8 bits of key + the gathering; waiting nodes add passes
  // only with a budget smaller than all of a pass's nodes
  const int passes = mbs_pselect_passes(s);
  printf("%s, n = %ld: %d passes\n", what, n, passes);
  if (budget == 0) EXPECT_TRUE(passes <= 11);
  mbs_pselect_free(s);
  free(cx);
  free(x);
}

int main(void) {
  const int quick = getenv("MBS_TEST_QUICK") != NULL;
  const long sizes[] = {1, 2, 3, 10, 129, 1000, 20000, 200000};
  const int nsizes = quick ? 6 : 8;
  for (int k = 0; k < nsizes; k++) {
    run_case(sizes[k], 0, 0, "defaults");
    run_case(sizes[k], 2, 3000, "cap 2, budget 3000 bytes");
  }
  // smooth data of many rows: few passes with the defaults
  {
    const double pct[] = {5, 50, 95};
    const long n = quick ? 50000 : 1000000;
    mbs_pselect* s = mbs_pselect_create(1, pct, 3, 0, 0);
    mbs_test_rng r = {12345};
    double* x = malloc((size_t)n * sizeof(double));
    for (long i = 0; i < n; i++) x[i] = mbs_test_uniform(&r, -2, 3);
    while (mbs_pselect_begin_pass(s) == 1) {
      for (long i = 0; i < n; i++) mbs_pselect_row(s, x + i, 1);
      mbs_pselect_end_pass(s);
    }
    double got[3], want[3];
    mbs_pselect_result(s, got, 1);
    reference(x, n, pct, 3, want);
    for (int l = 0; l < 3; l++) EXPECT_TRUE(same_bits(got[l], want[l]));
    printf("uniform on [-2, 3], n = %ld: %d passes\n", n, mbs_pselect_passes(s));
    EXPECT_TRUE(mbs_pselect_passes(s) <= 6);
    mbs_pselect_free(s);
    free(x);
  }
  return mbs_test_finish("test_pselect");
}
