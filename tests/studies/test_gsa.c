// Global sensitivity analysis (studies/gsa.c) against independent truth: the Saltelli row
// composition written out here, the Ishigami function's closed-form Sobol' indices (Ishigami
// and Homma 1990; Sobol' and Levitan 1999), the linear model's S_i = c_i^2 / sum c^2, the
// Morris design's defining properties (levels, one jump of Delta per step, each parameter
// once), exact elementary effects of a linear model, and Ishigami's expected Morris measures
// computed here by enumerating the Morris grid.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/gsa.h"
#include "mbs/sampler.h"
#include "mbs_test.h"

// 1 when MBS_TEST_QUICK is set (valgrind runs use fewer samples)
static int quick(void) {
  const char* s = getenv("MBS_TEST_QUICK");
  return s && *s && strcmp(s, "0") != 0;
}

//---------------------------------- models ---------------------------------------------------

static const double ISHIGAMI_A = 7, ISHIGAMI_B = 0.1;

// x in [-pi, pi]^3 from the unit point
static double ishigami_unit(const double* u) {
  const double x1 = -M_PI + 2 * M_PI * u[0], x2 = -M_PI + 2 * M_PI * u[1];
  const double x3 = -M_PI + 2 * M_PI * u[2];
  const double s2 = sin(x2);
  return sin(x1) + ISHIGAMI_A * s2 * s2 + ISHIGAMI_B * pow(x3, 4) * sin(x1);
}

// Ishigami's closed-form partial variances: S1, ST (3 each) and S13
static void ishigami_truth(double S1[3], double ST[3], double* S13) {
  const double a = ISHIGAMI_A, b = ISHIGAMI_B, pi4 = pow(M_PI, 4), pi8 = pow(M_PI, 8);
  const double V = a * a / 8 + b * pi4 / 5 + b * b * pi8 / 18 + 0.5;
  const double V1 = 0.5 * (1 + b * pi4 / 5) * (1 + b * pi4 / 5);
  const double V2 = a * a / 8;
  const double V13 = b * b * pi8 * (1.0 / 18 - 1.0 / 50);
  S1[0] = V1 / V;
  S1[1] = V2 / V;
  S1[2] = 0;
  ST[0] = (V1 + V13) / V;
  ST[1] = V2 / V;
  ST[2] = V13 / V;
  *S13 = V13 / V;
}

static const double LINEAR_C[3] = {1, 2, 3};

static double linear_unit(const double* u) {
  return LINEAR_C[0] * u[0] + LINEAR_C[1] * u[1] + LINEAR_C[2] * u[2];
}

// outputs of the Saltelli rows of a 3-parameter model, base points from the scrambled Sobol'
// design of 2D dimensions
static double* saltelli_outputs(double (*f)(const double*), long N, int second_order,
                                uint64_t seed) {
  const int D = 3;
  const long rows = mbs_saltelli_rows(N, D, second_order);
  const long per = rows / N;
  double* Y = malloc((size_t)rows * sizeof(double));
  double ab[6], u[3];
  for (long i = 0; i < N; i++) {
    mbs_design_point(MBS_DESIGN_SOBOL, seed, N, i, 2 * D, ab);
    for (long r = 0; r < per; r++) {
      mbs_saltelli_point(i * per + r, D, second_order, ab, u);
      Y[i * per + r] = f(u);
    }
  }
  return Y;
}

//---------------------------------- Saltelli rows --------------------------------------------

static void test_saltelli_rows(void) {
  const int D = 3;
  const long N = 2;
  EXPECT_EQ_INT(mbs_saltelli_rows(N, D, 1), N * (2 * D + 2));
  EXPECT_EQ_INT(mbs_saltelli_rows(N, D, 0), N * (D + 2));
  EXPECT_EQ_INT(mbs_saltelli_rows(0, D, 1), -1);
  EXPECT_EQ_INT(mbs_saltelli_rows(N, 0, 1), -1);
  EXPECT_EQ_INT(mbs_saltelli_rows(N, 33, 1), -1);
  mbs_error err;
  EXPECT_TRUE(mbs_saltelli_check(N, 33, 1, &err) == MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(err.message, "Saltelli design") == err.message);
  EXPECT_OK(mbs_saltelli_check(N, D, 1, &err));

  for (int so = 0; so <= 1; so++) {
    const long per = so ? 2 * D + 2 : D + 2;
    long row = 0;
    for (long i = 0; i < N; i++) {
      double ab[6], A[3], B[3];
      for (int c = 0; c < 2 * D; c++) ab[c] = 0.1 * (c + 1) + 0.01 * (double)i;
      for (int c = 0; c < D; c++) {
        A[c] = ab[c];
        B[c] = ab[D + c];
      }
      // expected block: A; AB_j; BA_j (second order); B
      double expect[8][3];
      int k = 0;
      memcpy(expect[k++], A, sizeof(A));
      for (int j = 0; j < D; j++, k++) {
        memcpy(expect[k], A, sizeof(A));
        expect[k][j] = B[j];
      }
      if (so)
        for (int j = 0; j < D; j++, k++) {
          memcpy(expect[k], B, sizeof(B));
          expect[k][j] = A[j];
        }
      memcpy(expect[k++], B, sizeof(B));
      EXPECT_EQ_INT(k, per);
      for (int r = 0; r < k; r++, row++) {
        double u[3];
        mbs_saltelli_point(row, D, so, ab, u);
        EXPECT_TRUE(memcmp(u, expect[r], sizeof(u)) == 0);
      }
    }
    EXPECT_EQ_INT(row, mbs_saltelli_rows(N, D, so));
  }
}

//---------------------------------- Sobol' indices -------------------------------------------

static int all_nan(const double* x, long n) {
  for (long i = 0; i < n; i++)
    if (!isnan(x[i])) return 0;
  return 1;
}

// S2 and S2_conf are NaN except above the diagonal
static int s2_layout_ok(const mbs_sobol_indices* s) {
  const int D = s->dim;
  for (int j = 0; j < D; j++)
    for (int k = 0; k < D; k++) {
      const int defined = s->second_order && j < k;
      if (defined != !isnan(s->S2[j * D + k])) return 0;
      if (defined != !isnan(s->S2_conf[j * D + k])) return 0;
    }
  return 1;
}

// |est - truth| <= conf and <= tol
#define EXPECT_IN_CONF(est, conf, truth, tol)         \
  do {                                                \
    EXPECT_ABS((est), (truth), (conf));               \
    EXPECT_ABS((est), (truth), (tol));                \
  } while (0)

static void test_sobol_ishigami(void) {
  const long N = 4096;
  double S1[3], ST[3], S13;
  ishigami_truth(S1, ST, &S13);
  double* Y = saltelli_outputs(ishigami_unit, N, 1, 1);
  for (int est = 0; est < MBS_SOBOL_ESTIMATOR_COUNT; est++) {
    mbs_sobol_options o = mbs_sobol_options_default();
    o.estimator = (mbs_sobol_estimator)est;
    o.seed = 11;
    mbs_sobol_indices s;
    mbs_error err;
    EXPECT_OK(mbs_sobol_analyze(Y, N, 3, 1, &o, &s, &err));
    EXPECT_EQ_INT(s.n_used, N);
    EXPECT_EQ_INT(s.n_total, N);
    for (int j = 0; j < 3; j++) {
      printf("ishigami %-8s x%d: S1 %.4f +- %.4f (%.4f)  ST %.4f +- %.4f (%.4f)\n",
             est ? "jansen" : "saltelli", j + 1, s.S1[j], s.S1_conf[j], S1[j], s.ST[j],
             s.ST_conf[j], ST[j]);
      EXPECT_IN_CONF(s.S1[j], s.S1_conf[j], S1[j], 0.03);
      EXPECT_IN_CONF(s.ST[j], s.ST_conf[j], ST[j], 0.03);
      EXPECT_TRUE(s.S1_conf[j] > 0 && s.ST_conf[j] > 0);
    }
    const double S2_true[3][3] = {{NAN, 0, S13}, {NAN, NAN, 0}, {NAN, NAN, NAN}};
    for (int j = 0; j < 3; j++)
      for (int k = j + 1; k < 3; k++) {
        printf("ishigami %-8s S2(%d,%d) %.4f +- %.4f (%.4f)\n", est ? "jansen" : "saltelli",
               j + 1, k + 1, s.S2[j * 3 + k], s.S2_conf[j * 3 + k], S2_true[j][k]);
        EXPECT_IN_CONF(s.S2[j * 3 + k], s.S2_conf[j * 3 + k], S2_true[j][k], 0.03);
      }
    EXPECT_TRUE(s2_layout_ok(&s));
    mbs_sobol_indices_free(&s);
    EXPECT_TRUE(s.S1 == NULL);
    mbs_sobol_indices_free(&s);  // twice is harmless
  }
  free(Y);
}

static void test_sobol_linear(void) {
  const long N = 4096;
  const double c2 = LINEAR_C[0] * LINEAR_C[0] + LINEAR_C[1] * LINEAR_C[1] +
                    LINEAR_C[2] * LINEAR_C[2];
  for (int so = 0; so <= 1; so++) {
    double* Y = saltelli_outputs(linear_unit, N, so, 3);
    for (int est = 0; est < MBS_SOBOL_ESTIMATOR_COUNT; est++) {
      mbs_sobol_options o = mbs_sobol_options_default();
      o.estimator = (mbs_sobol_estimator)est;
      mbs_sobol_indices s;
      mbs_error err;
      EXPECT_OK(mbs_sobol_analyze(Y, N, 3, so, &o, &s, &err));
      EXPECT_EQ_INT(s.second_order, so);
      for (int j = 0; j < 3; j++) {
        const double truth = LINEAR_C[j] * LINEAR_C[j] / c2;
        EXPECT_ABS(s.S1[j], truth, 0.01);
        EXPECT_ABS(s.ST[j], truth, 0.01);
      }
      if (so) {
        for (int j = 0; j < 3; j++)
          for (int k = j + 1; k < 3; k++) EXPECT_ABS(s.S2[j * 3 + k], 0, 0.01);
      } else {
        EXPECT_TRUE(all_nan(s.S2, 9) && all_nan(s.S2_conf, 9));
      }
      EXPECT_TRUE(s2_layout_ok(&s));
      mbs_sobol_indices_free(&s);
    }
    free(Y);
  }
}

static int same_doubles(const double* a, const double* b, long n) {
  return memcmp(a, b, (size_t)n * sizeof(double)) == 0;
}

static int same_sobol(const mbs_sobol_indices* a, const mbs_sobol_indices* b) {
  const int D = a->dim;
  return a->dim == b->dim && a->n_used == b->n_used && same_doubles(a->S1, b->S1, D) &&
         same_doubles(a->S1_conf, b->S1_conf, D) && same_doubles(a->ST, b->ST, D) &&
         same_doubles(a->ST_conf, b->ST_conf, D) && same_doubles(a->S2, b->S2, (long)D * D) &&
         same_doubles(a->S2_conf, b->S2_conf, (long)D * D);
}

// a NaN output drops exactly its base point; results are bit-identical from call to call
static void test_sobol_failures_and_determinism(void) {
  const long N = quick() ? 256 : 1024;
  const int D = 3;
  const long per = 2 * D + 2;
  double* Y = saltelli_outputs(ishigami_unit, N, 1, 5);
  mbs_sobol_indices s1, s2, dropped;
  mbs_error err;
  EXPECT_OK(mbs_sobol_analyze(Y, N, D, 1, NULL, &s1, &err));
  EXPECT_OK(mbs_sobol_analyze(Y, N, D, 1, NULL, &s2, &err));
  EXPECT_TRUE(same_sobol(&s1, &s2));
  mbs_sobol_indices_free(&s2);

  // base point 7 fails in its BA_2 row: the result is that of the other N - 1 base points
  const long bad = 7;
  double* Yf = malloc((size_t)(N * per) * sizeof(double));
  memcpy(Yf, Y, (size_t)(N * per) * sizeof(double));
  Yf[bad * per + 1 + D + 1] = NAN;
  double* Yd = malloc((size_t)((N - 1) * per) * sizeof(double));
  memcpy(Yd, Y, (size_t)(bad * per) * sizeof(double));
  memcpy(Yd + bad * per, Y + (bad + 1) * per, (size_t)((N - bad - 1) * per) * sizeof(double));
  EXPECT_OK(mbs_sobol_analyze(Yf, N, D, 1, NULL, &s2, &err));
  EXPECT_OK(mbs_sobol_analyze(Yd, N - 1, D, 1, NULL, &dropped, &err));
  EXPECT_EQ_INT(s2.n_used, N - 1);
  EXPECT_EQ_INT(s2.n_total, N);
  EXPECT_TRUE(same_sobol(&s2, &dropped));
  EXPECT_TRUE(!same_sobol(&s1, &s2));
  mbs_sobol_indices_free(&s2);
  mbs_sobol_indices_free(&dropped);

  // only one base point left: an error, nothing allocated
  for (long i = 1; i < N; i++) Yf[i * per] = NAN;
  EXPECT_TRUE(mbs_sobol_analyze(Yf, N, D, 1, NULL, &s2, &err) == MBS_ERR_NAN);
  EXPECT_TRUE(strstr(err.message, "Sobol' analysis: only 1 of") == err.message);
  EXPECT_TRUE(s2.S1 == NULL);
  mbs_sobol_options o = mbs_sobol_options_default();
  o.conf_level = 1;
  EXPECT_TRUE(mbs_sobol_analyze(Y, N, D, 1, &o, &s2, &err) == MBS_ERR_PARAMETER);

  mbs_sobol_indices_free(&s1);
  free(Y);
  free(Yf);
  free(Yd);
}

//---------------------------------- Morris -------------------------------------------------

// the points of N trajectories
static double* morris_points(uint64_t seed, long N, int D, int levels) {
  const long rows = mbs_morris_rows(N, D);
  double* U = malloc((size_t)(rows * D) * sizeof(double));
  for (long r = 0; r < rows; r++) mbs_morris_point(seed, r, D, levels, U + r * D);
  return U;
}

static void test_morris_points(void) {
  const int D = 5;
  const long N = 60;
  mbs_error err;
  EXPECT_TRUE(mbs_morris_check(N, D, 5, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "Morris design") == err.message);
  EXPECT_TRUE(mbs_morris_check(N, D, 0, &err) == MBS_ERR_PARAMETER);
  EXPECT_OK(mbs_morris_check(N, D, 2, &err));
  EXPECT_EQ_INT(mbs_morris_rows(N, D), N * (D + 1));
  double u[5];
  mbs_morris_point(1, 0, D, 3, u);
  EXPECT_TRUE(all_nan(u, D));

  const int all_levels[3] = {2, 4, 6};
  for (int li = 0; li < 3; li++) {
    const int p = all_levels[li];
    const double delta = p / (2.0 * (p - 1));
    EXPECT_NEAR(mbs_morris_delta(p), delta, 1e-15);
    double* U = morris_points(42, N, D, p);
    int grid_ok = 1, step_ok = 1, once_ok = 1, up = 0, down = 0;
    long level_count[6] = {0};
    for (long t = 0; t < N; t++) {
      int changed[5] = {0};
      for (int s = 0; s <= D; s++) {
        const double* x = U + (t * (D + 1) + s) * D;
        for (int j = 0; j < D; j++) {
          const double k = x[j] * (p - 1);
          if (!(x[j] >= 0 && x[j] <= 1 && fabs(k - round(k)) < 1e-12)) grid_ok = 0;
          if (s == 0 && j == 0) level_count[(int)round(k)]++;
        }
        if (s == D) continue;
        const double* y = x + D;
        int nchanged = 0;
        for (int j = 0; j < D; j++) {
          if (y[j] == x[j]) continue;
          nchanged++;
          changed[j]++;
          if (fabs(fabs(y[j] - x[j]) - delta) > 1e-12) step_ok = 0;
          if (y[j] > x[j]) up++;
          else down++;
        }
        if (nchanged != 1) step_ok = 0;
      }
      for (int j = 0; j < D; j++)
        if (changed[j] != 1) once_ok = 0;
    }
    EXPECT_TRUE(grid_ok);
    EXPECT_TRUE(step_ok);
    EXPECT_TRUE(once_ok);
    // both directions occur, and the start of x1 takes every level
    EXPECT_TRUE(up > 0 && down > 0);
    for (int k = 0; k < p; k++) EXPECT_TRUE(level_count[k] > 0);
    // a row is computed without the others: row 3 * (D + 1) + 2 alone equals its place in U
    double v[5];
    mbs_morris_point(42, 3 * (D + 1) + 2, D, p, v);
    EXPECT_TRUE(memcmp(v, U + (3 * (D + 1) + 2) * D, sizeof(v)) == 0);
    free(U);
  }
}

static void test_morris_linear(void) {
  const int D = 4;
  const long N = 50;
  const double c[4] = {1, -2, 3, 0.5};
  double* U = morris_points(9, N, D, 4);
  const long rows = mbs_morris_rows(N, D);
  double* Y = malloc((size_t)rows * sizeof(double));
  for (long r = 0; r < rows; r++) {
    Y[r] = 0;
    for (int j = 0; j < D; j++) Y[r] += c[j] * U[r * D + j];
  }
  mbs_morris_result m;
  mbs_error err;
  EXPECT_OK(mbs_morris_analyze(U, Y, N, D, NULL, &m, &err));
  EXPECT_EQ_INT(m.n_used, N);
  for (int j = 0; j < D; j++) {
    EXPECT_ABS(m.mu[j], c[j], 1e-12);
    EXPECT_ABS(m.mu_star[j], fabs(c[j]), 1e-12);
    EXPECT_ABS(m.sigma[j], 0, 1e-12);
    EXPECT_ABS(m.mu_star_conf[j], 0, 1e-12);
  }
  mbs_morris_result_free(&m);
  EXPECT_TRUE(m.mu == NULL);

  // points that are not a trajectory are refused: step 2 of trajectory 1 changes two
  // coordinates
  double* Ub = malloc((size_t)(rows * D) * sizeof(double));
  memcpy(Ub, U, (size_t)(rows * D) * sizeof(double));
  const double* x = Ub + (1 * (D + 1) + 2) * D;
  double* y = Ub + (1 * (D + 1) + 3) * D;
  for (int j = 0; j < D; j++)
    if (y[j] == x[j]) {
      y[j] = 1 - x[j] + 0.125;
      break;
    }
  EXPECT_TRUE(mbs_morris_analyze(Ub, Y, N, D, NULL, &m, &err) == MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(err.message, "trajectory 1, step 2") != NULL);
  EXPECT_TRUE(m.mu == NULL);
  free(Ub);
  free(U);
  free(Y);
}

// Ishigami's expected Morris measures for the design on p levels: parameter j jumps between
// levels k and k + p/2 (k uniform in 0..p/2-1), every other parameter sits on a level uniform
// in 0..p-1, independently (its base is uniform on the lower half, and whether it is shifted
// by p/2 is its direction xor whether it moved already, a fair coin)
static void ishigami_morris_truth(int p, double mu[3], double mu_star[3]) {
  const int half = p / 2;
  const double delta = p / (2.0 * (p - 1));
  for (int j = 0; j < 3; j++) {
    double s = 0, sa = 0;
    long count = 0;
    for (int k = 0; k < half; k++)
      for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++) {
          double lo[3], hi[3];
          int other = 0;
          for (int i = 0; i < 3; i++) {
            if (i == j) {
              lo[i] = (double)k / (p - 1);
              hi[i] = (double)(k + half) / (p - 1);
            } else {
              lo[i] = hi[i] = (double)(other++ == 0 ? a : b) / (p - 1);
            }
          }
          const double ee = (ishigami_unit(hi) - ishigami_unit(lo)) / delta;
          s += ee;
          sa += fabs(ee);
          count++;
        }
    mu[j] = s / (double)count;
    mu_star[j] = sa / (double)count;
  }
}

static void test_morris_ishigami(void) {
  const long N = 200;
  const int D = 3, p = 4;
  double mu_true[3], mu_star_true[3];
  ishigami_morris_truth(p, mu_true, mu_star_true);
  // x2 jumps between sin^2 = 0 and 3/4 with every pair of levels: |EE_2| = 7 (3/4) / (2/3)
  EXPECT_NEAR(mu_star_true[1], 7.875, 1e-12);
  EXPECT_ABS(mu_true[2], 0, 1e-12);

  double* U = morris_points(2024, N, D, p);
  const long rows = mbs_morris_rows(N, D);
  double* Y = malloc((size_t)rows * sizeof(double));
  for (long r = 0; r < rows; r++) Y[r] = ishigami_unit(U + r * D);
  mbs_morris_options o = mbs_morris_options_default();
  o.nboot = quick() ? 200 : 1000;
  o.seed = 3;
  mbs_morris_result m, m2;
  mbs_error err;
  EXPECT_OK(mbs_morris_analyze(U, Y, N, D, &o, &m, &err));
  const double z = mbs_normal_quantile(0.975);
  for (int j = 0; j < D; j++) {
    printf("morris ishigami x%d: mu %.4f (%.4f)  mu_star %.4f +- %.4f (%.4f)  sigma %.4f\n",
           j + 1, m.mu[j], mu_true[j], m.mu_star[j], m.mu_star_conf[j], mu_star_true[j],
           m.sigma[j]);
    EXPECT_ABS(m.mu_star[j], mu_star_true[j], m.mu_star_conf[j] + 1e-12);
    // mu within its own normal interval, z sigma / sqrt(n)
    EXPECT_ABS(m.mu[j], mu_true[j], z * m.sigma[j] / sqrt((double)m.n_used) + 1e-12);
  }
  EXPECT_ABS(m.mu_star[1], 7.875, 1e-12);  // every |EE_2| is exactly 7.875
  EXPECT_TRUE(m.mu_star_conf[0] > 0 && m.mu_star_conf[2] > 0);

  // determinism, and a NaN output drops exactly its trajectory
  EXPECT_OK(mbs_morris_analyze(U, Y, N, D, &o, &m2, &err));
  EXPECT_TRUE(same_doubles(m.mu, m2.mu, 4L * D));
  mbs_morris_result_free(&m2);
  const long bad = 17, per = D + 1;
  Y[bad * per + 2] = NAN;
  double* Ud = malloc((size_t)((N - 1) * per * D) * sizeof(double));
  double* Yd = malloc((size_t)((N - 1) * per) * sizeof(double));
  memcpy(Ud, U, (size_t)(bad * per * D) * sizeof(double));
  memcpy(Ud + bad * per * D, U + (bad + 1) * per * D,
         (size_t)((N - bad - 1) * per * D) * sizeof(double));
  memcpy(Yd, Y, (size_t)(bad * per) * sizeof(double));
  memcpy(Yd + bad * per, Y + (bad + 1) * per, (size_t)((N - bad - 1) * per) * sizeof(double));
  mbs_morris_result dropped;
  EXPECT_OK(mbs_morris_analyze(U, Y, N, D, &o, &m2, &err));
  EXPECT_OK(mbs_morris_analyze(Ud, Yd, N - 1, D, &o, &dropped, &err));
  EXPECT_EQ_INT(m2.n_used, N - 1);
  EXPECT_EQ_INT(m2.n_total, N);
  EXPECT_TRUE(same_doubles(m2.mu, dropped.mu, 4L * D));
  EXPECT_TRUE(!same_doubles(m.mu, m2.mu, 4L * D));
  mbs_morris_result_free(&m2);
  mbs_morris_result_free(&dropped);
  // fewer than two trajectories left
  for (long t = 1; t < N; t++) Y[t * per] = NAN;
  EXPECT_TRUE(mbs_morris_analyze(U, Y, N, D, &o, &m2, &err) == MBS_ERR_NAN);
  EXPECT_TRUE(strstr(err.message, "Morris analysis: only 1 of") == err.message);
  mbs_morris_result_free(&m);
  free(U);
  free(Y);
  free(Ud);
  free(Yd);
}

int main(void) {
  test_saltelli_rows();
  test_sobol_ishigami();
  test_sobol_linear();
  test_sobol_failures_and_determinism();
  test_morris_points();
  test_morris_linear();
  test_morris_ishigami();
  return mbs_test_finish("test_gsa");
}
