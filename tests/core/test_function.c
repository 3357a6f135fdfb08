// Scalar functions (core/function.c) against closed forms, finite differences, polynomial
// reproduction, an independent natural-spline solve and the documented error handling.
#include <math.h>
#include <string.h>

#include "mbs/function.h"
#include "mbs_test.h"

#define NMAX 16

static mbs_error err;

// prepare + eval wrapper holding the parameters and cache of one function
typedef struct fn {
  mbs_function_type type;
  int n;
  double param[2 * NMAX];
  double cache[3 * NMAX];
} fn;

static int fn_prepare(fn* f) {
  mbs_error_clear(&err);
  return mbs_function_prepare(f->type, f->n, f->param, f->cache, &err, "fn 'test'");
}
static void fn_eval(const fn* f, double x, double d[3]) {
  mbs_function_eval(f->type, f->n, f->param, f->cache, x, d);
}
static void make_spline(fn* f, mbs_function_type type, int n, const double* x, const double* y) {
  f->type = type;
  f->n = n;
  memcpy(f->param, x, n * sizeof(double));
  memcpy(f->param + n, y, n * sizeof(double));
  EXPECT_OK(fn_prepare(f));
}
// random strictly increasing, unevenly spaced knots
static void rand_knots(mbs_test_rng* g, int n, double x0, double* x) {
  x[0] = x0;
  for (int i = 1; i < n; i++) x[i] = x[i - 1] + mbs_test_uniform(g, 0.15, 1.5);
}
// a random point at least `gap` from every knot, inside [x0, x_end]
static double rand_between(mbs_test_rng* g, int n, const double* x, double gap) {
  for (;;) {
    const double t = mbs_test_uniform(g, x[0], x[n - 1]);
    int ok = 1;
    for (int i = 0; i < n; i++)
      if (fabs(t - x[i]) < gap) ok = 0;
    if (ok) return t;
  }
}

// d[1], d[2] against central differences of d[0], d[1]
static void check_fd(const fn* f, double x) {
  const double h = 1e-5;
  double dp[3], dm[3], d[3];
  fn_eval(f, x, d);
  fn_eval(f, x + h, dp);
  fn_eval(f, x - h, dm);
  EXPECT_NEAR(d[1], (dp[0] - dm[0]) / (2 * h), 1e-7);
  EXPECT_NEAR(d[2], (dp[1] - dm[1]) / (2 * h), 1e-7);
}

//---------------------------------- counts, constant, linear, polynomial ---------------------

static void test_counts(void) {
  for (int n = 0; n < 6; n++) {
    EXPECT_EQ_INT(mbs_function_param_count(MBS_FUNC_CONSTANT, n), 1);
    EXPECT_EQ_INT(mbs_function_param_count(MBS_FUNC_LINEAR, n), 2);
    EXPECT_EQ_INT(mbs_function_param_count(MBS_FUNC_POLYNOMIAL, n), n);
    EXPECT_EQ_INT(mbs_function_param_count(MBS_FUNC_NATURAL_CUBIC_SPLINE, n), 2 * n);
    EXPECT_EQ_INT(mbs_function_param_count(MBS_FUNC_SIMM_SPLINE, n), 2 * n);
    EXPECT_EQ_INT(mbs_function_param_count(MBS_FUNC_MULTIPLIER, n), 1);
    EXPECT_EQ_INT(mbs_function_cache_count(MBS_FUNC_CONSTANT, n), 0);
    EXPECT_EQ_INT(mbs_function_cache_count(MBS_FUNC_LINEAR, n), 0);
    EXPECT_EQ_INT(mbs_function_cache_count(MBS_FUNC_POLYNOMIAL, n), 0);
    EXPECT_EQ_INT(mbs_function_cache_count(MBS_FUNC_MULTIPLIER, n), 0);
    // splines keep b, c, d per knot (the cache buffers here rely on 3 n)
    EXPECT_EQ_INT(mbs_function_cache_count(MBS_FUNC_NATURAL_CUBIC_SPLINE, n), 3 * n);
    EXPECT_EQ_INT(mbs_function_cache_count(MBS_FUNC_SIMM_SPLINE, n), 3 * n);
  }
}

static void test_simple(void) {
  mbs_test_rng g = {201};
  fn f;
  // OpenSim order: {2, -3, 5} is 2 x^2 - 3 x + 5; at x = 2: 7, 5, 4
  f.type = MBS_FUNC_POLYNOMIAL;
  f.n = 3;
  f.param[0] = 2; f.param[1] = -3; f.param[2] = 5;
  EXPECT_OK(fn_prepare(&f));
  double d[3];
  fn_eval(&f, 2, d);
  EXPECT_NEAR(d[0], 7, 1e-15);
  EXPECT_NEAR(d[1], 5, 1e-15);
  EXPECT_NEAR(d[2], 4, 1e-15);
  for (int it = 0; it < 300; it++) {
    const double x = mbs_test_uniform(&g, -3, 3);
    // constant
    f.type = MBS_FUNC_CONSTANT;
    f.n = 1;
    f.param[0] = mbs_test_uniform(&g, -5, 5);
    EXPECT_OK(fn_prepare(&f));
    fn_eval(&f, x, d);
    EXPECT_NEAR(d[0], f.param[0], 0);
    EXPECT_ABS(d[1], 0, 0);
    EXPECT_ABS(d[2], 0, 0);
    check_fd(&f, x);
    // linear: slope, intercept
    const double a = mbs_test_uniform(&g, -5, 5), b = mbs_test_uniform(&g, -5, 5);
    f.type = MBS_FUNC_LINEAR;
    f.n = 2;
    f.param[0] = a;
    f.param[1] = b;
    EXPECT_OK(fn_prepare(&f));
    fn_eval(&f, x, d);
    EXPECT_NEAR(d[0], a * x + b, 1e-15);
    EXPECT_NEAR(d[1], a, 1e-15);
    EXPECT_ABS(d[2], 0, 0);
    check_fd(&f, x);
    // polynomial of degree n-1, highest power first, against sums of pow terms
    const int n = 1 + it % 8;
    f.type = MBS_FUNC_POLYNOMIAL;
    f.n = n;
    double v = 0, v1 = 0, v2 = 0, s = 0;
    for (int i = 0; i < n; i++) {
      const double c = mbs_test_uniform(&g, -2, 2);
      const int k = n - 1 - i;
      f.param[i] = c;
      v += c * pow(x, k);
      if (k >= 1) v1 += k * c * pow(x, k - 1);
      if (k >= 2) v2 += k * (k - 1) * c * pow(x, k - 2);
      s += fabs(c) * k * k * pow(fabs(x), k);
    }
    EXPECT_OK(fn_prepare(&f));
    fn_eval(&f, x, d);
    const double tol = 1e-14 * (1 + s);
    EXPECT_ABS(d[0], v, tol);
    EXPECT_ABS(d[1], v1, tol);
    EXPECT_ABS(d[2], v2, tol);
    check_fd(&f, x);
  }
}

//---------------------------------- SIMM spline ----------------------------------------------

static void test_simm(void) {
  mbs_test_rng g = {202};
  double x[NMAX], y[NMAX], d[3];
  fn f;
  for (int it = 0; it < 200; it++) {
    // cubic data at n >= 4 uneven knots are reproduced exactly
    const int n = 4 + it % 9;
    double c[4];
    for (int i = 0; i < 4; i++) c[i] = mbs_test_uniform(&g, -2, 2);
    rand_knots(&g, n, mbs_test_uniform(&g, -3, 1), x);
#define P3(t) (((c[0] * (t) + c[1]) * (t) + c[2]) * (t) + c[3])
#define P3D(t) ((3 * c[0] * (t) + 2 * c[1]) * (t) + c[2])
#define P3DD(t) (6 * c[0] * (t) + 2 * c[1])
    for (int i = 0; i < n; i++) y[i] = P3(x[i]);
    make_spline(&f, MBS_FUNC_SIMM_SPLINE, n, x, y);
    for (int k = 0; k < 20 + n; k++) {
      const double t = k < n ? x[k] : mbs_test_uniform(&g, x[0], x[n - 1]);
      fn_eval(&f, t, d);
      EXPECT_NEAR(d[0], P3(t), 1e-10);
      EXPECT_NEAR(d[1], P3D(t), 1e-10);
      EXPECT_NEAR(d[2], P3DD(t), 1e-10);
      if (k >= n) check_fd(&f, rand_between(&g, n, x, 1e-3));
    }
    // outside: the end tangent line, slope p'(x_end)
    for (int side = 0; side < 2; side++) {
      const double xe = side ? x[n - 1] : x[0];
      const double t = xe + (side ? 1 : -1) * mbs_test_uniform(&g, 0.01, 5);
      fn_eval(&f, t, d);
      EXPECT_NEAR(d[0], P3(xe) + P3D(xe) * (t - xe), 1e-10);
      EXPECT_NEAR(d[1], P3D(xe), 1e-10);
      EXPECT_ABS(d[2], 0, 0);
      check_fd(&f, t);
    }
    // 3 points: the parabola through them; 2 points: the line
    double q[3];
    for (int i = 0; i < 3; i++) q[i] = mbs_test_uniform(&g, -2, 2);
    rand_knots(&g, 3, mbs_test_uniform(&g, -3, 1), x);
    for (int i = 0; i < 3; i++) y[i] = (q[0] * x[i] + q[1]) * x[i] + q[2];
    make_spline(&f, MBS_FUNC_SIMM_SPLINE, 3, x, y);
    for (int k = 0; k < 20; k++) {
      const double t = k < 3 ? x[k] : mbs_test_uniform(&g, x[0], x[2]);
      fn_eval(&f, t, d);
      EXPECT_NEAR(d[0], (q[0] * t + q[1]) * t + q[2], 1e-11);
      EXPECT_NEAR(d[1], 2 * q[0] * t + q[1], 1e-11);
      EXPECT_NEAR(d[2], 2 * q[0], 1e-11);
    }
    rand_knots(&g, 2, mbs_test_uniform(&g, -3, 1), x);
    for (int i = 0; i < 2; i++) y[i] = q[0] * x[i] + q[1];
    make_spline(&f, MBS_FUNC_SIMM_SPLINE, 2, x, y);
    for (int k = 0; k < 10; k++) {
      const double t = mbs_test_uniform(&g, x[0] - 1, x[1] + 1);
      fn_eval(&f, t, d);
      EXPECT_NEAR(d[0], q[0] * t + q[1], 1e-12);
      EXPECT_NEAR(d[1], q[0], 1e-12);
      EXPECT_ABS(d[2], 0, 1e-12);
    }
    // random data: interpolates, C2 at knots, and the FMM end condition s''' = 6 f[x0..x3]
    const int m = 4 + it % 9;
    rand_knots(&g, m, mbs_test_uniform(&g, 0.5, 2), x);
    for (int i = 0; i < m; i++) y[i] = mbs_test_uniform(&g, -2, 2);
    make_spline(&f, MBS_FUNC_SIMM_SPLINE, m, x, y);
    for (int i = 0; i < m; i++) {
      fn_eval(&f, x[i], d);
      EXPECT_NEAR(d[0], y[i], 1e-13);
    }
    for (int k = 0; k < 10; k++) check_fd(&f, rand_between(&g, m, x, 1e-3));
    for (int e = 0; e < 2; e++) {
      // third divided difference of the four end points
      const double* xs = e ? x + m - 4 : x;
      const double* ys = e ? y + m - 4 : y;
      double dd[4];
      for (int i = 0; i < 4; i++) dd[i] = ys[i];
      for (int lvl = 1; lvl < 4; lvl++)
        for (int i = 3; i >= lvl; i--) dd[i] = (dd[i] - dd[i - 1]) / (xs[i] - xs[i - lvl]);
      // s''' on the end piece from two curvatures inside it (s'' is linear there)
      const double a = e ? xs[2] : xs[0], b = e ? xs[3] : xs[1], h = b - a;
      double d1[3], d2[3];
      fn_eval(&f, a + 0.25 * h, d1);
      fn_eval(&f, a + 0.75 * h, d2);
      EXPECT_NEAR((d2[2] - d1[2]) / (0.5 * h), 6 * dd[3], 1e-9);
    }
  }
}

//---------------------------------- natural cubic spline -------------------------------------

// independent natural spline: dense Gaussian elimination (partial pivoting) for M_i = s''(x_i)
static void natural_solve(int n, const double* x, const double* y, double* M) {
  double A[NMAX * NMAX] = {0}, r[NMAX] = {0};
  A[0] = 1;
  A[(n - 1) * n + n - 1] = 1;
  for (int i = 1; i < n - 1; i++) {
    const double h0 = x[i] - x[i - 1], h1 = x[i + 1] - x[i];
    A[i * n + i - 1] = h0;
    A[i * n + i] = 2 * (h0 + h1);
    A[i * n + i + 1] = h1;
    r[i] = 6 * ((y[i + 1] - y[i]) / h1 - (y[i] - y[i - 1]) / h0);
  }
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
    for (int j = 0; j < n; j++) {
      const double t = A[k * n + j]; A[k * n + j] = A[p * n + j]; A[p * n + j] = t;
    }
    const double t = r[k]; r[k] = r[p]; r[p] = t;
    for (int i = k + 1; i < n; i++) {
      const double w = A[i * n + k] / A[k * n + k];
      for (int j = k; j < n; j++) A[i * n + j] -= w * A[k * n + j];
      r[i] -= w * r[k];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = r[i];
    for (int j = i + 1; j < n; j++) s -= A[i * n + j] * M[j];
    M[i] = s / A[i * n + i];
  }
}
// textbook evaluation on [x_i, x_i+1] with A = (x_i+1 - t)/h, B = (t - x_i)/h
static void natural_eval(int n, const double* x, const double* y, const double* M, double t,
                         double d[3]) {
  int i = 0;
  while (i < n - 2 && t > x[i + 1]) i++;
  const double h = x[i + 1] - x[i], A = (x[i + 1] - t) / h, B = (t - x[i]) / h;
  d[0] = A * y[i] + B * y[i + 1] +
         ((A * A * A - A) * M[i] + (B * B * B - B) * M[i + 1]) * h * h / 6;
  d[1] = (y[i + 1] - y[i]) / h - (3 * A * A - 1) / 6 * h * M[i] +
         (3 * B * B - 1) / 6 * h * M[i + 1];
  d[2] = A * M[i] + B * M[i + 1];
}

static void test_natural(void) {
  mbs_test_rng g = {203};
  double x[NMAX], y[NMAX], M[NMAX], d[3], e[3], dl[3], dr[3];
  fn f;
  for (int it = 0; it < 200; it++) {
    const int n = 2 + it % 13;
    rand_knots(&g, n, mbs_test_uniform(&g, 1, 3), x);  // positive: x (1 +- 1e-9) brackets knots
    for (int i = 0; i < n; i++) y[i] = mbs_test_uniform(&g, -2, 2);
    make_spline(&f, MBS_FUNC_NATURAL_CUBIC_SPLINE, n, x, y);
    natural_solve(n, x, y, M);
    for (int i = 0; i < n; i++) {
      fn_eval(&f, x[i], d);
      EXPECT_NEAR(d[0], y[i], 1e-13);
    }
    fn_eval(&f, x[0], d);
    EXPECT_ABS(d[2], 0, 1e-12);
    fn_eval(&f, x[n - 1], d);
    EXPECT_ABS(d[2], 0, 1e-12);
    // continuity across interior knots: from x (1 - 1e-9) to x (1 + 1e-9) the value and slope
    // move only by their Taylor terms, the curvature by at most max|s'''| dx
    double s3 = 0;
    for (int i = 0; i + 1 < n; i++) s3 = fmax(s3, fabs(M[i + 1] - M[i]) / (x[i + 1] - x[i]));
    for (int i = 1; i < n - 1; i++) {
      const double xl = x[i] * (1 - 1e-9), xr = x[i] * (1 + 1e-9), dx = xr - xl;
      fn_eval(&f, xl, dl);
      fn_eval(&f, xr, dr);
      EXPECT_ABS(dr[0], dl[0] + dl[1] * dx + 0.5 * dl[2] * dx * dx, 1e-12);
      EXPECT_ABS(dr[1], dl[1] + dl[2] * dx, 1e-11);
      EXPECT_ABS(dr[2], dl[2], 1.01 * s3 * dx + 1e-11);
    }
    // against the independent solve at random points and at the knots
    for (int k = 0; k < 20 + n; k++) {
      const double t = k < n ? x[k] : mbs_test_uniform(&g, x[0], x[n - 1]);
      fn_eval(&f, t, d);
      natural_eval(n, x, y, M, t, e);
      EXPECT_NEAR(d[0], e[0], 1e-12);
      EXPECT_NEAR(d[1], e[1], 1e-11);
      EXPECT_NEAR(d[2], e[2], 1e-11);
      if (k >= n) check_fd(&f, rand_between(&g, n, x, 1e-3));
    }
    // outside: the end tangent line, slope from the independent solve
    for (int side = 0; side < 2; side++) {
      const int ke = side ? n - 1 : 0;
      natural_eval(n, x, y, M, x[ke], e);
      const double t = x[ke] + (side ? 1 : -1) * mbs_test_uniform(&g, 0.01, 5);
      fn_eval(&f, t, d);
      EXPECT_NEAR(d[0], y[ke] + e[1] * (t - x[ke]), 1e-12);
      EXPECT_NEAR(d[1], e[1], 1e-12);
      EXPECT_ABS(d[2], 0, 0);
      check_fd(&f, t);
    }
    // straight-line data are reproduced exactly
    const double a = mbs_test_uniform(&g, -2, 2), b = mbs_test_uniform(&g, -2, 2);
    for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
    make_spline(&f, MBS_FUNC_NATURAL_CUBIC_SPLINE, n, x, y);
    for (int k = 0; k < 10; k++) {
      const double t = mbs_test_uniform(&g, x[0] - 1, x[n - 1] + 1);
      fn_eval(&f, t, d);
      EXPECT_NEAR(d[0], a * t + b, 1e-12);
      EXPECT_NEAR(d[1], a, 1e-12);
      EXPECT_ABS(d[2], 0, 1e-12);
    }
  }
}

//---------------------------------- parameter checks -----------------------------------------

static void expect_reject(fn* f, const char* what) {
  mbs_error_clear(&err);
  const int rc = mbs_function_prepare(f->type, f->n, f->param, f->cache, &err, what);
  EXPECT_EQ_INT(rc, MBS_ERR_PARAMETER);
  EXPECT_EQ_INT(err.code, MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, what) != NULL);
  EXPECT_TRUE(strcmp(err.component, what) == 0);
}

static void test_errors(void) {
  const mbs_function_type sp[2] = {MBS_FUNC_NATURAL_CUBIC_SPLINE, MBS_FUNC_SIMM_SPLINE};
  fn f;
  for (int s = 0; s < 2; s++) {
    double x[4] = {0, 1, 1, 2}, y[4] = {0, 1, 2, 3};
    f.type = sp[s];
    f.n = 4;
    memcpy(f.param, x, sizeof(x));
    memcpy(f.param + 4, y, sizeof(y));
    expect_reject(&f, "coupler 'knee_equal'");   // equal knots
    f.param[2] = 0.5;
    expect_reject(&f, "coupler 'knee_decr'");    // decreasing knots
    f.param[2] = 1.5;
    EXPECT_OK(fn_prepare(&f));                   // fixed
    f.param[5] = NAN;                            // NaN value
    expect_reject(&f, "coupler 'knee_nan_y'");
    f.param[5] = 1;
    f.param[3] = NAN;                            // NaN knot
    expect_reject(&f, "coupler 'knee_nan_x'");
    f.param[3] = INFINITY;
    expect_reject(&f, "coupler 'knee_inf_x'");
    f.n = 1;                                     // fewer than 2 points
    f.param[0] = 0; f.param[1] = 1;
    expect_reject(&f, "coupler 'knee_one'");
    f.n = 0;
    expect_reject(&f, "coupler 'knee_none'");
  }
  f.type = MBS_FUNC_POLYNOMIAL;
  f.n = 0;
  expect_reject(&f, "poly 'empty'");
  f.n = 3;
  f.param[0] = 1; f.param[1] = NAN; f.param[2] = 2;
  expect_reject(&f, "poly 'nan'");
  f.type = MBS_FUNC_CONSTANT;
  f.n = 1;
  f.param[0] = NAN;
  expect_reject(&f, "const 'nan'");
  f.type = MBS_FUNC_LINEAR;
  f.n = 2;
  f.param[0] = 1; f.param[1] = -INFINITY;
  expect_reject(&f, "linear 'inf'");
}

// sine: A sin(w x + p) + c with its derivatives against the C library
static void test_sine(void) {
  mbs_test_rng g = {808};
  EXPECT_EQ_INT(mbs_function_param_count(MBS_FUNC_SINE, 0), 4);
  for (int it = 0; it < 2000; it++) {
    const double A = mbs_test_uniform(&g, -2, 2), w = mbs_test_uniform(&g, -10, 10);
    const double p = mbs_test_uniform(&g, -3, 3), c = mbs_test_uniform(&g, -1, 1);
    const double x = mbs_test_uniform(&g, -20, 20);
    const double prm[4] = {A, w, p, c};
    double d[3];
    EXPECT_OK(mbs_function_prepare(MBS_FUNC_SINE, 0, prm, NULL, &err, "sine"));
    mbs_function_eval(MBS_FUNC_SINE, 0, prm, NULL, x, d);
    EXPECT_NEAR(d[0], A * sin(w * x + p) + c, 1e-14);
    EXPECT_NEAR(d[1], A * w * cos(w * x + p), 1e-13);
    EXPECT_NEAR(d[2], -A * w * w * sin(w * x + p), 1e-12);
  }
}

// piecewise linear: the straight line between the bracketing points, the end segments
// continued outside; duplicate knots rejected
static void test_piecewise_linear(void) {
  const double prm[8] = {-1, 0, 2, 5, 3, 1, 4, -2};  // x = -1 0 2 5, y = 3 1 4 -2
  double d[3];
  EXPECT_OK(mbs_function_prepare(MBS_FUNC_PIECEWISE_LINEAR, 4, prm, NULL, &err, "pl"));
  const double xs[6] = {-3, -1, -0.5, 1, 3.5, 7};
  const double want[6] = {3 + (-2) * (-2), 3, 2, 2.5, 1, -2 + (-2) * 2};
  const double slope[6] = {-2, -2, -2, 1.5, -2, -2};
  for (int i = 0; i < 6; i++) {
    mbs_function_eval(MBS_FUNC_PIECEWISE_LINEAR, 4, prm, NULL, xs[i], d);
    EXPECT_NEAR(d[0], want[i], 1e-15);
    EXPECT_NEAR(d[1], slope[i], 1e-15);
    EXPECT_NEAR(d[2], 0, 0);
  }
  const double bad[6] = {0, 1, 1, 0, 1, 2};
  EXPECT_EQ_INT(mbs_function_prepare(MBS_FUNC_PIECEWISE_LINEAR, 3, bad, NULL, &err, "pl"),
                MBS_ERR_PARAMETER);
}

// OpenSim's ControlLinear: without extrapolation the line between the bracketing nodes, held
// at the end values outside; with use_steps, between two nodes the later node's value
static void test_control_nodes(void) {
  const double prm[8] = {-1, 0, 2, 5, 3, 1, 4, -2};  // x = -1 0 2 5, y = 3 1 4 -2
  double d[3];
  EXPECT_OK(mbs_function_prepare(MBS_FUNC_PIECEWISE_LINEAR_HELD, 4, prm, NULL, &err, "held"));
  EXPECT_OK(mbs_function_prepare(MBS_FUNC_STEPS, 4, prm, NULL, &err, "steps"));
  const double xs[8] = {-3, -1, -0.5, 0, 1, 3.5, 5, 7};
  const double held[8] = {3, 3, 2, 1, 2.5, 1, -2, -2};
  const double slope[8] = {0, 0, -2, 1.5, 1.5, -2, 0, 0};
  const double steps[8] = {3, 3, 1, 1, 4, -2, -2, -2};
  for (int i = 0; i < 8; i++) {
    mbs_function_eval(MBS_FUNC_PIECEWISE_LINEAR_HELD, 4, prm, NULL, xs[i], d);
    EXPECT_NEAR(d[0], held[i], 1e-15);
    EXPECT_NEAR(d[1], slope[i], 1e-15);
    mbs_function_eval(MBS_FUNC_STEPS, 4, prm, NULL, xs[i], d);
    EXPECT_NEAR(d[0], steps[i], 0);
    EXPECT_NEAR(d[1], 0, 0);
  }
  const double bad[6] = {0, 1, 1, 0, 1, 2};
  EXPECT_EQ_INT(mbs_function_prepare(MBS_FUNC_STEPS, 3, bad, NULL, &err, "steps"),
                MBS_ERR_PARAMETER);
}

int main(void) {
  test_piecewise_linear();
  test_control_nodes();
  test_sine();
  test_counts();
  test_simple();
  test_simm();
  test_natural();
  test_errors();
  return mbs_test_finish("test_function");
}
