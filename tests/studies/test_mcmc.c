// Ensemble MCMC (studies/mcmc.c) against independent truth: the analytic posterior of a
// linear-Gaussian regression (mean and covariance in closed form), the half-normal's moments
// (sqrt(2/pi), 1 - 2/pi) for a prior support whose outside is told -inf without evaluation,
// the autocorrelation time (1 + phi)/(1 - phi) of an AR(1) sequence and of iid draws (1),
// split-R-hat on chains that agree and on chains that do not, a direct O(N M) autocorrelation
// sum against the FFT, emcee's usual acceptance range, the affine invariance of the stretch
// move (an affine image of the ensemble moves as the affine image, and a condition-1e4
// Gaussian mixes as fast as an isotropic one), and bit-identical determinism and replay.
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mcmc.h"
#include "mbs/sampler.h"
#include "mbs_test.h"

// 1 when MBS_TEST_QUICK is set (valgrind runs use shorter chains)
static int quick(void) {
  const char* s = getenv("MBS_TEST_QUICK");
  return s && *s && strcmp(s, "0") != 0;
}

//---------------------------------- helpers --------------------------------------------------

typedef double (*logp_fn)(const double* x, void* ctx);

// Run the sampler to its end with the log-probability f, as a driver would: ask a batch,
// evaluate its points, tell. Every told value is appended to record (when given: room for
// W + 2 T W/2 values), the log a resuming driver would replay.
static int run(mbs_mcmc* s, logp_fn f, void* ctx, double* record) {
  const int W = mbs_mcmc_get_options(s)->walkers, n = mbs_mcmc_get_options(s)->dim;
  double* lp = malloc(sizeof(double) * W);
  long nrec = 0;
  int rc = MBS_OK;
  mbs_error err;
  for (;;) {
    mbs_mcmc_batch b;
    mbs_mcmc_ask(s, &b);
    if (b.count == 0) break;
    for (int i = 0; i < b.count; i++) lp[i] = f(b.points + (size_t)i * n, ctx);
    if (record) {
      memcpy(record + nrec, lp, sizeof(double) * b.count);
      nrec += b.count;
    }
    rc = mbs_mcmc_tell(s, lp, b.count, &err);
    if (rc != MBS_OK) {
      fprintf(stderr, "tell: %s\n", err.message);
      break;
    }
  }
  free(lp);
  return rc;
}

// W walkers in a Gaussian ball of radius r around c (n numbers), drawn from mbs_rng (seed)
static void ball(double* x, int W, int n, const double* c, double r, uint64_t seed) {
  mbs_rng g = mbs_rng_make(seed, 0, 77);
  for (int k = 0; k < W; k++)
    for (int i = 0; i < n; i++) x[k * n + i] = c[i] + r * mbs_rng_normal(&g);
}

// inverse of a symmetric positive definite n x n matrix in place (LAPACK Cholesky)
static int inv_spd(double* A, int n) {
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, A, n) != 0) return -1;
  if (LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', n, A, n) != 0) return -1;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) A[i * n + j] = A[j * n + i];
  return 0;
}

// The stationary acceptance probability of the stretch move on a Gaussian in n dimensions: the
// ensemble's stationary law is the product of the target's, so the moving walker x and its
// partner x' are independent draws of the target (for a Gaussian, by affine invariance, a
// standard normal) and the probability is E min(1, z^(n-1) p(y) / p(x)), y = x' + z (x - x'),
// z from g. Estimated here by plain Monte Carlo over independent draws (not a chain), with a
// standard error below 0.002.
static double stationary_acceptance(int n, double a) {
  const long N = quick() ? 20000 : 200000;
  mbs_rng g = mbs_rng_make(31337, (uint64_t)n, 9);
  double sum = 0;
  for (long s = 0; s < N; s++) {
    double x[8], xp[8], lr = 0;
    for (int i = 0; i < n; i++) x[i] = mbs_rng_normal(&g);
    for (int i = 0; i < n; i++) xp[i] = mbs_rng_normal(&g);
    const double w = (a - 1) * mbs_rng_uniform(&g) + 1, z = w * w / a;
    lr = (n - 1) * log(z);
    for (int i = 0; i < n; i++) {
      const double y = xp[i] + z * (x[i] - xp[i]);
      lr += 0.5 * (x[i] * x[i] - y * y);
    }
    sum += lr >= 0 ? 1 : exp(lr);
  }
  return sum / N;
}

static double mean_acceptance(const mbs_mcmc* s) {
  const int W = mbs_mcmc_get_options(s)->walkers;
  double f[256], m = 0;
  mbs_mcmc_acceptance(s, f);
  for (int k = 0; k < W; k++) m += f[k];
  return m / W;
}

//---------------------------------- linear-Gaussian posterior --------------------------------

enum { LG_N = 3, LG_M = 20 };

typedef struct lg_problem {
  double X[LG_M][LG_N], y[LG_M], sigma;
  double mu0[LG_N], P0[LG_N * LG_N];  // prior mean and precision
} lg_problem;

// log-posterior up to a constant: -|y - X theta|^2 / 2 sigma^2 - (theta - mu0)' P0 (...) / 2
static double lg_logp(const double* th, void* ctx) {
  const lg_problem* p = ctx;
  double ll = 0;
  for (int r = 0; r < LG_M; r++) {
    double e = p->y[r];
    for (int i = 0; i < LG_N; i++) e -= p->X[r][i] * th[i];
    ll += e * e;
  }
  double lp = 0;
  for (int i = 0; i < LG_N; i++)
    for (int j = 0; j < LG_N; j++)
      lp += (th[i] - p->mu0[i]) * p->P0[i * LG_N + j] * (th[j] - p->mu0[j]);
  return -0.5 * ll / (p->sigma * p->sigma) - 0.5 * lp;
}

static void test_linear_gaussian(void) {
  lg_problem p;
  const double truth[LG_N] = {0.5, -1.0, 2.0};
  p.sigma = 0.5;
  mbs_rng g = mbs_rng_make(2024, 0, 5);
  for (int r = 0; r < LG_M; r++) {
    p.X[r][0] = 1;
    p.X[r][1] = mbs_rng_normal(&g);
    p.X[r][2] = 0.5 * p.X[r][1] + mbs_rng_normal(&g);  // correlated regressors
    p.y[r] = p.sigma * mbs_rng_normal(&g);
    for (int i = 0; i < LG_N; i++) p.y[r] += p.X[r][i] * truth[i];
  }
  // prior N(mu0, S0) with correlated S0
  const double S0[LG_N * LG_N] = {4, 1, 0, 1, 2, 0.5, 0, 0.5, 1};
  const double mu0[LG_N] = {0, 0, 1};
  memcpy(p.mu0, mu0, sizeof(mu0));
  memcpy(p.P0, S0, sizeof(S0));
  EXPECT_OK(inv_spd(p.P0, LG_N));
  // the analytic posterior
  double Spost[LG_N * LG_N], mpost[LG_N], rhs[LG_N];
  for (int i = 0; i < LG_N; i++) {
    rhs[i] = 0;
    for (int j = 0; j < LG_N; j++) {
      double xtx = 0;
      for (int r = 0; r < LG_M; r++) xtx += p.X[r][i] * p.X[r][j];
      Spost[i * LG_N + j] = p.P0[i * LG_N + j] + xtx / (p.sigma * p.sigma);
      rhs[i] += p.P0[i * LG_N + j] * p.mu0[j];
    }
    for (int r = 0; r < LG_M; r++) rhs[i] += p.X[r][i] * p.y[r] / (p.sigma * p.sigma);
  }
  EXPECT_OK(inv_spd(Spost, LG_N));
  for (int i = 0; i < LG_N; i++) {
    mpost[i] = 0;
    for (int j = 0; j < LG_N; j++) mpost[i] += Spost[i * LG_N + j] * rhs[j];
  }

  // W = 32 walkers from a tiny ball at the prior mean, far from the posterior
  const int W = 32;
  const long T = quick() ? 2000 : 10000, burn = quick() ? 500 : 1000;
  double x0[32 * LG_N];
  ball(x0, W, LG_N, mu0, 1e-3, 11);
  mbs_mcmc_options o = {.walkers = W, .dim = LG_N, .steps = T, .scale = 0, .seed = 42};
  mbs_mcmc* s = NULL;
  mbs_error err;
  EXPECT_OK(mbs_mcmc_create(&s, &o, x0, &err));
  if (!s) return;
  EXPECT_NEAR(mbs_mcmc_get_options(s)->scale, 2.0, 0);
  EXPECT_OK(run(s, lg_logp, &p, NULL));
  EXPECT_EQ_INT(mbs_mcmc_steps_done(s), T);
  const double* chain = mbs_mcmc_chain(s);
  double tau[LG_N], ess[LG_N], rhat[LG_N], mean[LG_N], cov[LG_N * LG_N];
  int shortc[LG_N];
  EXPECT_OK(mbs_mcmc_autocorr_time(tau, shortc, chain, T, W, LG_N, burn, &err));
  mbs_mcmc_ess(ess, tau, T, W, LG_N, burn);
  EXPECT_OK(mbs_mcmc_split_rhat(rhat, chain, T, W, LG_N, burn, &err));
  EXPECT_OK(mbs_mcmc_mean_cov(mean, cov, chain, T, W, LG_N, burn, &err));
  const double acc = mean_acceptance(s);
  printf("linear-Gaussian (n = 3, W = 32, T = %ld, burn %ld): acceptance %.3f\n", T, burn, acc);
  for (int i = 0; i < LG_N; i++) {
    const double mcse = sqrt(Spost[i * LG_N + i] * tau[i] / (W * (double)(T - burn)));
    printf("  theta%d: mean %.5f (analytic %.5f, %+.2f MCSE)  var %.3e (analytic %.3e)  "
           "tau %.1f  ESS %.0f  R-hat %.4f%s\n",
           i, mean[i], mpost[i], (mean[i] - mpost[i]) / mcse, cov[i * LG_N + i],
           Spost[i * LG_N + i], tau[i], ess[i], rhat[i], shortc[i] ? "  (short chain)" : "");
    EXPECT_TRUE(isfinite(tau[i]) && tau[i] > 1);
    EXPECT_ABS(mean[i], mpost[i], 4 * mcse);
    EXPECT_NEAR(cov[i * LG_N + i] / Spost[i * LG_N + i], 1.0, 0.10);
    // R-hat - 1 is about tau / (kept steps / 2) for an ensemble: < 1.01 needs a long chain
    EXPECT_TRUE(rhat[i] < (quick() ? 1.05 : 1.01));
    EXPECT_TRUE(!shortc[i] || quick());
    for (int j = 0; j < i; j++) {
      const double scale = sqrt(Spost[i * LG_N + i] * Spost[j * LG_N + j]);
      printf("  cov%d%d: %.4e (analytic %.4e)\n", i, j, cov[i * LG_N + j], Spost[i * LG_N + j]);
      EXPECT_ABS(cov[i * LG_N + j] / scale, Spost[i * LG_N + j] / scale, 0.10);
    }
  }
  // emcee's usual range, and the stationary value of a Gaussian in 3 dimensions
  const double acc_exact = stationary_acceptance(LG_N, 2.0);
  printf("  acceptance %.3f, stationary value for a 3-D Gaussian %.3f\n", acc, acc_exact);
  EXPECT_TRUE(acc > 0.2 && acc < 0.7);
  EXPECT_ABS(acc, acc_exact, 0.02);
  mbs_mcmc_free(s);
}

//---------------------------------- support: -inf without evaluation -------------------------

typedef struct half_ctx {
  long evaluated, skipped;
} half_ctx;

// a standard normal in 2 dimensions restricted to the prior support theta0 > 0: outside the
// support the "driver" tells -inf without evaluating the density
static double logp_half(const double* x, void* ctx) {
  half_ctx* c = ctx;
  if (!(x[0] > 0)) {
    c->skipped++;
    return -INFINITY;
  }
  c->evaluated++;
  return -0.5 * (x[0] * x[0] + x[1] * x[1]);
}

static void test_support(void) {
  const int W = 16, n = 2;
  const long T = 4000, burn = 300;
  double x0[16 * 2];
  const double c[2] = {1, 0};
  ball(x0, W, n, c, 0.1, 3);
  mbs_mcmc_options o = {.walkers = W, .dim = n, .steps = T, .seed = 7};
  mbs_mcmc* s = NULL;
  mbs_error err;
  EXPECT_OK(mbs_mcmc_create(&s, &o, x0, &err));
  if (!s) return;
  half_ctx hc = {0, 0};
  EXPECT_OK(run(s, logp_half, &hc, NULL));
  const double* chain = mbs_mcmc_chain(s);
  int outside = 0;
  for (long i = 0; i < T * W; i++) outside += !(chain[i * n] > 0);
  double tau[2], mean[2], cov[4];
  EXPECT_OK(mbs_mcmc_autocorr_time(tau, NULL, chain, T, W, n, burn, &err));
  EXPECT_OK(mbs_mcmc_mean_cov(mean, cov, chain, T, W, n, burn, &err));
  const double m_true = sqrt(2 / M_PI), v_true = 1 - 2 / M_PI;
  const double mcse = sqrt(v_true * tau[0] / (W * (double)(T - burn)));
  printf("half-normal support: %ld proposals told -inf unevaluated, %ld evaluated; mean %.4f "
         "(exact %.4f, %+.2f MCSE), variance %.4f (exact %.4f)\n",
         hc.skipped, hc.evaluated, mean[0], m_true, (mean[0] - m_true) / mcse, cov[0], v_true);
  EXPECT_TRUE(hc.skipped > 0);
  EXPECT_EQ_INT(outside, 0);
  EXPECT_ABS(mean[0], m_true, 4 * mcse);
  EXPECT_NEAR(cov[0] / v_true, 1.0, 0.10);
  EXPECT_NEAR(cov[3], 1.0, 0.10);
  mbs_mcmc_free(s);
}

//---------------------------------- autocorrelation, ESS, R-hat ------------------------------

// tau by direct sums, for comparison with the FFT: rho_k(t) = sum_s dx_s dx_{s+t} / sum dx^2
// per walker, averaged, with the same window rule
static double tau_direct(const double* chain, long T, int W, int dim, int d) {
  double* f = calloc(T, sizeof(double));
  for (int k = 0; k < W; k++) {
    double m = 0;
    for (long t = 0; t < T; t++) m += chain[(t * W + k) * dim + d];
    m /= T;
    double c0 = 0;
    for (long t = 0; t < T; t++) {
      const double v = chain[(t * W + k) * dim + d] - m;
      c0 += v * v;
    }
    for (long lag = 0; lag < T; lag++) {
      double c = 0;
      for (long t = 0; t + lag < T; t++)
        c += (chain[(t * W + k) * dim + d] - m) * (chain[((t + lag) * W + k) * dim + d] - m);
      f[lag] += c / c0 / W;
    }
  }
  double sum = 0, tau = NAN;
  for (long M = 0; M < T; M++) {
    sum += f[M];
    tau = 2 * sum - 1;
    if (M >= 5 * tau) break;
  }
  free(f);
  return tau;
}

static void test_autocorr(void) {
  // parameter 0: AR(1) with phi = 0.9 started in its stationary law; parameter 1: iid normal.
  // An odd number of walkers exercises the unpaired transform.
  const int W = 33, dim = 2;
  const long T = quick() ? 4000 : 10000;
  const double phi = 0.9;
  double* chain = malloc(sizeof(double) * T * W * dim);
  for (int k = 0; k < W; k++) {
    mbs_rng g = mbs_rng_make(99, (uint64_t)k, 1);
    double x = mbs_rng_normal(&g) / sqrt(1 - phi * phi);
    for (long t = 0; t < T; t++) {
      if (t > 0) x = phi * x + mbs_rng_normal(&g);
      chain[(t * W + k) * dim + 0] = x;
      chain[(t * W + k) * dim + 1] = mbs_rng_normal(&g);
    }
  }
  double tau[2], ess[2], rhat[2];
  int shortc[2];
  mbs_error err;
  EXPECT_OK(mbs_mcmc_autocorr_time(tau, shortc, chain, T, W, dim, 0, &err));
  mbs_mcmc_ess(ess, tau, T, W, dim, 0);
  EXPECT_OK(mbs_mcmc_split_rhat(rhat, chain, T, W, dim, 0, &err));
  printf("AR(1) phi = 0.9: tau %.2f (exact %.2f); iid: tau %.3f, ESS %.0f of %ld draws; "
         "R-hat %.5f %.5f\n",
         tau[0], (1 + phi) / (1 - phi), tau[1], ess[1], T * W, rhat[0], rhat[1]);
  EXPECT_NEAR(tau[0] / ((1 + phi) / (1 - phi)), 1.0, 0.15);
  EXPECT_NEAR(ess[1] / (double)(T * W), 1.0, 0.15);
  EXPECT_TRUE(!shortc[0] && !shortc[1]);
  EXPECT_TRUE(rhat[0] < 1.01 && rhat[1] < 1.01);
  EXPECT_TRUE(rhat[0] >= 0.99 && rhat[1] >= 0.99);

  // a kept part of 500 steps is shorter than 50 tau for the AR(1) but not for the iid draws
  EXPECT_OK(mbs_mcmc_autocorr_time(tau, shortc, chain, T, W, dim, T - 500, &err));
  EXPECT_TRUE(shortc[0] && !shortc[1]);

  // the FFT against direct sums, on the first 300 steps (all walkers), both parameters
  for (int d = 0; d < dim; d++) {
    double t300[2];
    EXPECT_OK(mbs_mcmc_autocorr_time(t300, NULL, chain, 300, W, dim, 0, &err));
    EXPECT_NEAR(t300[d], tau_direct(chain, 300, W, dim, d), 1e-10);
  }

  // split-R-hat: walkers whose means differ by 2 (sd 1), and walkers that all drift from 0 to
  // 4 within their chains (the second halves disagree with the first: what splitting detects)
  const long T2 = 2000;
  double* c2 = malloc(sizeof(double) * T2 * 32 * 2);
  for (int k = 0; k < 32; k++) {
    mbs_rng g = mbs_rng_make(5, (uint64_t)k, 2);
    for (long t = 0; t < T2; t++) {
      c2[(t * 32 + k) * 2 + 0] = mbs_rng_normal(&g) + (k < 16 ? 0 : 2);
      c2[(t * 32 + k) * 2 + 1] = mbs_rng_normal(&g) + 4.0 * t / T2;
    }
  }
  EXPECT_OK(mbs_mcmc_split_rhat(rhat, c2, T2, 32, 2, 0, &err));
  printf("split-R-hat: walkers apart %.3f (about sqrt 2 = 1.414), drifting walkers %.3f\n",
         rhat[0], rhat[1]);
  EXPECT_TRUE(rhat[0] > 1.1 && rhat[1] > 1.1);
  EXPECT_NEAR(rhat[0], sqrt(2.0), 0.05);
  // an odd kept length (the middle draw left out) and a constant parameter (NaN)
  for (long t = 0; t < T2; t++)
    for (int k = 0; k < 32; k++) c2[(t * 32 + k) * 2 + 1] = 3;
  EXPECT_OK(mbs_mcmc_split_rhat(rhat, c2, T2, 32, 2, 1, &err));
  EXPECT_TRUE(rhat[0] > 1.1 && isnan(rhat[1]));
  EXPECT_OK(mbs_mcmc_autocorr_time(tau, shortc, c2, T2, 32, 2, 0, &err));
  EXPECT_TRUE(isnan(tau[1]) && shortc[1]);
  // mean and covariance of known numbers: 2 steps x 2 walkers x 1 parameter, 1..4
  const double tiny[4] = {1, 2, 3, 4};
  double m, v;
  EXPECT_OK(mbs_mcmc_mean_cov(&m, &v, tiny, 2, 2, 1, 0, &err));
  EXPECT_NEAR(m, 2.5, 1e-15);
  EXPECT_NEAR(v, 5.0 / 3.0, 1e-15);
  EXPECT_TRUE(mbs_mcmc_split_rhat(rhat, c2, T2, 32, 2, T2 - 3, &err) == MBS_ERR_ARGUMENT);
  EXPECT_TRUE(mbs_mcmc_autocorr_time(tau, NULL, c2, T2, 32, 2, -1, &err) == MBS_ERR_ARGUMENT);
  free(c2);
  free(chain);
}

//---------------------------------- acceptance and affine invariance -------------------------

typedef struct gauss_ctx {
  double P[4];  // precision of a 2-D Gaussian
} gauss_ctx;

static double logp_gauss2(const double* x, void* ctx) {
  const gauss_ctx* g = ctx;
  return -0.5 * (g->P[0] * x[0] * x[0] + 2 * g->P[1] * x[0] * x[1] + g->P[3] * x[1] * x[1]);
}

// tau averaged over the two parameters of a run of the 2-D Gaussian with precision P from a
// ball (centre c, radius r)
static double run_tau(const gauss_ctx* g, const double* c, double r, uint64_t seed, long T,
                      long burn, double* acceptance) {
  const int W = 32;
  double x0[64], tau[2];
  ball(x0, W, 2, c, r, seed);
  mbs_mcmc_options o = {.walkers = W, .dim = 2, .steps = T, .seed = seed};
  mbs_mcmc* s = NULL;
  mbs_error err;
  if (mbs_mcmc_create(&s, &o, x0, &err) != MBS_OK) return NAN;
  run(s, logp_gauss2, (void*)g, NULL);
  mbs_mcmc_autocorr_time(tau, NULL, mbs_mcmc_chain(s), T, W, 2, burn, &err);
  if (acceptance) *acceptance = mean_acceptance(s);
  mbs_mcmc_free(s);
  return 0.5 * (tau[0] + tau[1]);
}

static void test_affine_invariance(void) {
  // A = R(30 deg) diag(10, 0.1): the covariance A A' has eigenvalues 100 and 0.01
  // (condition 1e4) and correlation 0.87 between the coordinates
  const double ca = cos(M_PI / 6), sa = sin(M_PI / 6);
  const double A[4] = {ca * 10, -sa * 0.1, sa * 10, ca * 0.1};
  double S[4] = {A[0] * A[0] + A[1] * A[1], A[0] * A[2] + A[1] * A[3], 0,
                 A[2] * A[2] + A[3] * A[3]};
  S[2] = S[1];
  gauss_ctx iso = {{1, 0, 0, 1}}, cor;
  memcpy(cor.P, S, sizeof(S));
  EXPECT_OK(inv_spd(cor.P, 2));

  // exact equivariance: the same seed from the affine image of the initial ensemble gives the
  // affine image of the chain (up to rounding), with the same acceptances. Over 50 steps: the
  // ensemble's dynamics amplify rounding (about 1e-12 after 50 steps, 1e-9 after 100, 1e-5
  // after 200, until an acceptance flips), as any chaotic map would.
  {
    const int W = 32;
    const long T = 50;
    double x0[64], y0[64];
    const double c[2] = {0.3, -0.2};
    ball(x0, W, 2, c, 0.5, 21);
    for (int k = 0; k < W; k++) {
      y0[2 * k] = A[0] * x0[2 * k] + A[1] * x0[2 * k + 1];
      y0[2 * k + 1] = A[2] * x0[2 * k] + A[3] * x0[2 * k + 1];
    }
    mbs_mcmc_options o = {.walkers = W, .dim = 2, .steps = T, .seed = 21};
    mbs_mcmc *sx = NULL, *sy = NULL;
    mbs_error err;
    EXPECT_OK(mbs_mcmc_create(&sx, &o, x0, &err));
    EXPECT_OK(mbs_mcmc_create(&sy, &o, y0, &err));
    if (!sx || !sy) return;
    run(sx, logp_gauss2, &iso, NULL);
    run(sy, logp_gauss2, &cor, NULL);
    const double *cx = mbs_mcmc_chain(sx), *cy = mbs_mcmc_chain(sy);
    // map the correlated chain back with A^-1 = diag(1/10, 10) R(-30 deg) and compare
    const double Ai[4] = {ca / 10, sa / 10, -sa * 10, ca * 10};
    double worst = 0;
    for (long i = 0; i < T * W; i++) {
      const double bx = Ai[0] * cy[2 * i] + Ai[1] * cy[2 * i + 1];
      const double by = Ai[2] * cy[2 * i] + Ai[3] * cy[2 * i + 1];
      const double e = fmax(fabs(bx - cx[2 * i]), fabs(by - cx[2 * i + 1]));
      if (e > worst) worst = e;
    }
    printf("affine image: the condition-1e4 chain mapped back differs from the isotropic one by "
           "%.1e at most over %ld steps\n", worst, T);
    double fx[32], fy[32];
    mbs_mcmc_acceptance(sx, fx);
    mbs_mcmc_acceptance(sy, fy);
    EXPECT_TRUE(memcmp(fx, fy, sizeof(fx)) == 0);
    EXPECT_TRUE(worst < 1e-8);
    mbs_mcmc_free(sx);
    mbs_mcmc_free(sy);
  }

  // statistical: independent runs (other seeds, a round ball not shaped like the target)
  const long T = quick() ? 2000 : 6000, burn = 500;
  const double c0[2] = {0, 0}, c1[2] = {1, 1};
  double acc;
  const double tau_iso = run_tau(&iso, c0, 0.1, 1001, T, burn, &acc);
  const double tau_cor = run_tau(&cor, c1, 0.1, 2002, T, burn, NULL);
  const double acc_exact = stationary_acceptance(2, 2.0);
  printf("standard normal n = 2: acceptance %.3f (stationary value %.3f); tau isotropic %.1f, "
         "condition 1e4 %.1f\n",
         acc, acc_exact, tau_iso, tau_cor);
  // in 2 dimensions the stretch move with a = 2 accepts about 0.715 of its proposals on any
  // Gaussian, a little above emcee's usual 0.2 - 0.7 range of thumb
  EXPECT_TRUE(acc > 0.2 && acc < 0.75);
  EXPECT_ABS(acc, acc_exact, 0.02);
  EXPECT_NEAR(tau_cor / tau_iso, 1.0, 0.30);
}

//---------------------------------- determinism and replay -----------------------------------

static void test_determinism(void) {
  const int W = 8, n = 2;
  const long T = 300, nvals = W + 2 * T * (W / 2);
  double x0[16];
  const double c[2] = {0, 0};
  ball(x0, W, n, c, 1, 8);
  gauss_ctx iso = {{1, 0.3, 0.3, 2}};
  mbs_mcmc_options o = {.walkers = W, .dim = n, .steps = T, .seed = 123};
  mbs_mcmc *a = NULL, *b = NULL, *r = NULL, *d = NULL;
  mbs_error err;
  double* rec = malloc(sizeof(double) * nvals);
  EXPECT_OK(mbs_mcmc_create(&a, &o, x0, &err));
  EXPECT_OK(mbs_mcmc_create(&b, &o, x0, &err));
  EXPECT_OK(run(a, logp_gauss2, &iso, rec));
  EXPECT_OK(run(b, logp_gauss2, &iso, NULL));
  const size_t bytes = sizeof(double) * T * W * n;
  EXPECT_TRUE(memcmp(mbs_mcmc_chain(a), mbs_mcmc_chain(b), bytes) == 0);
  EXPECT_TRUE(memcmp(mbs_mcmc_chain_logp(a), mbs_mcmc_chain_logp(b),
                     sizeof(double) * T * W) == 0);

  // recreate, replay the tells of the first 201 batches (initial + 100 steps), check that
  // asking twice gives the same batch, then continue live
  EXPECT_OK(mbs_mcmc_create(&r, &o, x0, &err));
  long used = 0;
  for (long batch = 0; batch < 201; batch++) {
    mbs_mcmc_batch q1, q2;
    mbs_mcmc_ask(r, &q1);
    mbs_mcmc_ask(r, &q2);
    EXPECT_EQ_INT(q1.index, batch);
    if (batch == 0) EXPECT_TRUE(q1.count == W && q1.first_walker == 0);
    if (batch > 0) EXPECT_TRUE(q1.count == W / 2 && q1.first_walker == ((batch - 1) % 2) * W / 2);
    if (batch == 150) {
      EXPECT_TRUE(q1.points == q2.points && q1.step == 74);
      // the replayed batch's points are where the live log-probabilities were taken
      EXPECT_NEAR(logp_gauss2(q1.points, &iso), rec[used], 0);
    }
    if (mbs_mcmc_tell(r, rec + used, q1.count, &err) != MBS_OK) break;
    used += q1.count;
  }
  EXPECT_EQ_INT(mbs_mcmc_steps_done(r), 100);
  EXPECT_OK(run(r, logp_gauss2, &iso, NULL));
  EXPECT_TRUE(memcmp(mbs_mcmc_chain(a), mbs_mcmc_chain(r), bytes) == 0);
  double fa[8], fr[8];
  mbs_mcmc_acceptance(a, fa);
  mbs_mcmc_acceptance(r, fr);
  EXPECT_TRUE(memcmp(fa, fr, sizeof(fa)) == 0);

  // another seed gives another chain
  o.seed = 124;
  EXPECT_OK(mbs_mcmc_create(&d, &o, x0, &err));
  EXPECT_OK(run(d, logp_gauss2, &iso, NULL));
  EXPECT_TRUE(memcmp(mbs_mcmc_chain(a), mbs_mcmc_chain(d), bytes) != 0);
  mbs_mcmc_batch done;
  mbs_mcmc_ask(d, &done);
  EXPECT_TRUE(done.count == 0 && done.index == 1 + 2 * T);
  const double one = 0;
  EXPECT_TRUE(mbs_mcmc_tell(d, &one, 1, &err) == MBS_ERR_ARGUMENT);
  free(rec);
  mbs_mcmc_free(a);
  mbs_mcmc_free(b);
  mbs_mcmc_free(r);
  mbs_mcmc_free(d);
}

//---------------------------------- errors and rejections ------------------------------------

static void test_errors(void) {
  const int n = 2;
  double x0[12];
  const double c[2] = {0, 0};
  ball(x0, 6, n, c, 1, 4);
  mbs_mcmc* s = NULL;
  mbs_error err;
  mbs_mcmc_options o = {.walkers = 5, .dim = n, .steps = 10, .seed = 1};
  EXPECT_TRUE(mbs_mcmc_create(&s, &o, x0, &err) == MBS_ERR_ARGUMENT && !s);
  EXPECT_TRUE(strstr(err.message, "5 walkers") != NULL);
  o.walkers = 0;
  EXPECT_TRUE(mbs_mcmc_create(&s, &o, x0, &err) == MBS_ERR_ARGUMENT);
  o.walkers = 6;
  o.scale = 0.5;
  EXPECT_TRUE(mbs_mcmc_create(&s, &o, x0, &err) == MBS_ERR_ARGUMENT);
  o.scale = 0;
  o.dim = 0;
  EXPECT_TRUE(mbs_mcmc_create(&s, &o, x0, &err) == MBS_ERR_ARGUMENT);
  o.dim = n;
  // walkers on a line do not span the plane; a non-finite walker
  double line[12];
  for (int k = 0; k < 6; k++) line[2 * k] = line[2 * k + 1] = k;
  EXPECT_TRUE(mbs_mcmc_create(&s, &o, line, &err) == MBS_ERR_PARAMETER && !s);
  double bad[12];
  memcpy(bad, x0, sizeof(bad));
  bad[7] = NAN;
  EXPECT_TRUE(mbs_mcmc_create(&s, &o, bad, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "walker 3") != NULL);

  // initial log-probabilities: -inf or NaN name the walker; the sampler stays at batch 0
  EXPECT_OK(mbs_mcmc_create(&s, &o, x0, &err));
  if (!s) return;
  double lp[6] = {0, 0, 0, 0, 0, -INFINITY};
  EXPECT_TRUE(mbs_mcmc_tell(s, lp, 6, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "walker 5") != NULL);
  lp[5] = 0;
  lp[2] = NAN;
  EXPECT_TRUE(mbs_mcmc_tell(s, lp, 6, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "walker 2") != NULL);
  mbs_mcmc_batch b;
  mbs_mcmc_ask(s, &b);
  EXPECT_TRUE(b.index == 0 && b.count == 6);
  EXPECT_TRUE(mbs_mcmc_tell(s, lp, 3, &err) == MBS_ERR_ARGUMENT);
  for (int k = 0; k < 6; k++)
    lp[k] = -0.5 * (x0[2 * k] * x0[2 * k] + x0[2 * k + 1] * x0[2 * k + 1]);
  EXPECT_OK(mbs_mcmc_tell(s, lp, 6, &err));
  EXPECT_NEAR(mbs_mcmc_walker_logp(s)[4], lp[4], 0);

  // a half-step told NaN for every proposal moves nothing; +inf is an error that changes
  // nothing; -inf is a rejection
  double before[12];
  memcpy(before, mbs_mcmc_walkers(s), sizeof(before));
  const double nan3[3] = {NAN, NAN, NAN}, pinf[3] = {0, INFINITY, 0};
  const double minf[3] = {-INFINITY, -INFINITY, -INFINITY};
  EXPECT_TRUE(mbs_mcmc_tell(s, pinf, 3, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "walker 1") != NULL);
  mbs_mcmc_ask(s, &b);
  EXPECT_EQ_INT(b.index, 1);
  EXPECT_OK(mbs_mcmc_tell(s, nan3, 3, &err));
  EXPECT_OK(mbs_mcmc_tell(s, minf, 3, &err));
  EXPECT_TRUE(memcmp(before, mbs_mcmc_walkers(s), sizeof(before)) == 0);
  EXPECT_EQ_INT(mbs_mcmc_steps_done(s), 1);
  double f[6];
  mbs_mcmc_acceptance(s, f);
  for (int k = 0; k < 6; k++) EXPECT_NEAR(f[k], 0, 0);
  // the chain's first step holds the unmoved walkers
  EXPECT_TRUE(memcmp(before, mbs_mcmc_chain(s), sizeof(before)) == 0);
  mbs_mcmc_free(s);
  mbs_mcmc_free(NULL);
}

int main(void) {
  test_errors();
  test_determinism();
  test_autocorr();
  test_linear_gaussian();
  test_support();
  test_affine_invariance();
  return mbs_test_finish("test_mcmc");
}
