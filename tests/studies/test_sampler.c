// Random numbers and sample designs (studies/sampler.c) against independent truth: Random123's
// known-answer vectors for Philox4x64-10 (through an independent Philox written here), values
// of the normal quantile and of truncated-normal moments computed with 50-digit arithmetic
// (mpmath), statistical tests, Joe and Kuo's published first Sobol' points and SciPy's
// unscrambled Sobol' points (same new-joe-kuo-6.21201 direction numbers, Gray-code order), and
// the stratification properties of Latin hypercubes and digital nets.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/sampler.h"
#include "mbs_test.h"

// 1 when MBS_TEST_QUICK is set (valgrind runs use fewer draws)
static int quick(void) {
  const char* s = getenv("MBS_TEST_QUICK");
  return s && *s && strcmp(s, "0") != 0;
}

static long ndraws(void) { return quick() ? 100000 : 1000000; }

//---------------------------------- Philox4x64-10 --------------------------------------------

// an independent Philox4x64-10 (Salmon et al., SC'11): 10 rounds of two 64x64 -> 128-bit
// multiplications, the key bumped by the Weyl constants between rounds
static void philox_ref(const uint64_t ctr_in[4], const uint64_t key_in[2], uint64_t out[4]) {
  uint64_t c[4] = {ctr_in[0], ctr_in[1], ctr_in[2], ctr_in[3]};
  uint64_t k[2] = {key_in[0], key_in[1]};
  for (int r = 0; r < 10; r++) {
    if (r > 0) {
      k[0] += UINT64_C(0x9E3779B97F4A7C15);
      k[1] += UINT64_C(0xBB67AE8584CAA73B);
    }
    const unsigned __int128 p0 = (unsigned __int128)UINT64_C(0xD2E7470EE14C6C93) * c[0];
    const unsigned __int128 p1 = (unsigned __int128)UINT64_C(0xCA5A826395121157) * c[2];
    const uint64_t hi0 = (uint64_t)(p0 >> 64), lo0 = (uint64_t)p0;
    const uint64_t hi1 = (uint64_t)(p1 >> 64), lo1 = (uint64_t)p1;
    const uint64_t n[4] = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    memcpy(c, n, sizeof(c));
  }
  memcpy(out, c, sizeof(c));
}

static void test_philox(void) {
  // Random123's kat_vectors, "philox4x64 10": counter, key, result
  static const uint64_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, UINT64_C(0x16554d9eca36314c), UINT64_C(0xdb20fe9d672d0fdc),
       UINT64_C(0xd7e772cee186176b), UINT64_C(0x7e68b68aec7ba23b)},
      {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
       UINT64_C(0x87b092c3013fe90b), UINT64_C(0x438c3c67be8d0224), UINT64_C(0x9cc7d7c69cd777b6),
       UINT64_C(0xa09caebf594f0ba0)},
      {UINT64_C(0x243f6a8885a308d3), UINT64_C(0x13198a2e03707344), UINT64_C(0xa4093822299f31d0),
       UINT64_C(0x082efa98ec4e6c89), UINT64_C(0x452821e638d01377), UINT64_C(0xbe5466cf34e90c6c),
       UINT64_C(0xa528f45403e61d95), UINT64_C(0x38c72dbd566e9788), UINT64_C(0xa5a1610e72fd18b5),
       UINT64_C(0x57bd43b5e52b7fe6)}};
  for (int t = 0; t < 3; t++) {
    uint64_t out[4];
    philox_ref(kat[t], kat[t] + 4, out);
    for (int i = 0; i < 4; i++) EXPECT_TRUE(out[i] == kat[t][6 + i]);
  }
  // the zero vector through the library: seed 0, sample 0, stream 0, draws 0..3 are its lanes
  mbs_rng r = mbs_rng_make(0, 0, 0);
  for (int i = 0; i < 4; i++) EXPECT_TRUE(mbs_rng_bits(&r) == kat[0][6 + i]);
  EXPECT_TRUE(r.draw == 4);
  // any (seed, sample, stream, draw) is lane draw % 4 of the reference at counter (sample,
  // stream, draw / 4, 0) and key (seed, 0), including the largest sample and draw numbers
  mbs_test_rng g = {7001};
  for (int it = 0; it < 2000; it++) {
    const uint64_t seed = (uint64_t)(mbs_test_uniform(&g, 0, 1) * 0x1p64);
    const uint64_t sample = it % 3 == 0 ? UINT64_MAX : (uint64_t)(mbs_test_uniform(&g, 0, 1e12));
    const uint64_t stream = (uint64_t)(mbs_test_uniform(&g, 0, 1e4));
    const uint64_t draw = it % 5 == 0 ? (UINT64_MAX - 3) : (uint64_t)(mbs_test_uniform(&g, 0, 1e6));
    mbs_rng q = mbs_rng_make(seed, sample, stream);
    q.draw = draw;
    const uint64_t bits = mbs_rng_bits(&q);
    const uint64_t ctr[4] = {sample, stream, draw / 4, 0}, key[2] = {seed, 0};
    uint64_t out[4];
    philox_ref(ctr, key, out);
    EXPECT_TRUE(bits == out[draw % 4]);
    EXPECT_TRUE(q.draw == draw + 1);
  }
}

// the same (seed, sample, stream) gives the same numbers in any order of calls
static void test_reproducible(void) {
  enum { N = 64 };
  double fwd[N], u[N];
  mbs_rng r = mbs_rng_make(12345, 678, 9);
  for (int k = 0; k < N; k++) fwd[k] = mbs_rng_uniform(&r);
  // backwards, each draw from a fresh generator positioned at it
  for (int k = N - 1; k >= 0; k--) {
    mbs_rng s = mbs_rng_make(12345, 678, 9);
    s.draw = (uint64_t)k;
    u[k] = mbs_rng_uniform(&s);
  }
  for (int k = 0; k < N; k++) EXPECT_TRUE(u[k] == fwd[k]);
  // interleaved with other streams and samples
  mbs_rng a = mbs_rng_make(12345, 678, 9), b = mbs_rng_make(12345, 679, 9);
  mbs_rng c = mbs_rng_make(12345, 678, 10), d = mbs_rng_make(12346, 678, 9);
  int same_b = 0, same_c = 0, same_d = 0;
  for (int k = 0; k < N; k++) {
    const double vb = mbs_rng_uniform(&b), vc = mbs_rng_uniform(&c), vd = mbs_rng_uniform(&d);
    const double va = mbs_rng_uniform(&a);
    EXPECT_TRUE(va == fwd[k]);
    same_b += vb == va;
    same_c += vc == va;
    same_d += vd == va;
  }
  EXPECT_EQ_INT(same_b, 0);
  EXPECT_EQ_INT(same_c, 0);
  EXPECT_EQ_INT(same_d, 0);
  // a normal is the quantile of the uniform of the same draw
  mbs_rng n1 = mbs_rng_make(5, 6, 7), n2 = mbs_rng_make(5, 6, 7);
  for (int k = 0; k < 100; k++)
    EXPECT_TRUE(mbs_rng_normal(&n1) == mbs_normal_quantile(mbs_rng_uniform(&n2)));
  // the uniform is the top 53 bits, centered
  mbs_rng b1 = mbs_rng_make(11, 12, 13), b2 = mbs_rng_make(11, 12, 13);
  for (int k = 0; k < 100; k++)
    EXPECT_TRUE(mbs_rng_uniform(&b1) == ((double)(mbs_rng_bits(&b2) >> 11) + 0.5) * 0x1p-53);
  // (the one 53-bit value whose centered double would round to 1 is kept at 1 - 2^-53: it occurs
  // once in 2^53 draws and cannot be reached through the public interface here)
}

//---------------------------------- uniforms -------------------------------------------------

static void test_uniform_stats(void) {
  const long n = ndraws();
  enum { BINS = 100 };
  long bins[BINS] = {0};
  double s1 = 0, s2 = 0, umin = 1, umax = 0;
  for (long i = 0; i < n; i++) {
    // a new sample every 7 draws: the statistics cover samples and draws alike
    mbs_rng r = mbs_rng_make(2024, (uint64_t)(i / 7), 3);
    r.draw = (uint64_t)(i % 7);
    const double u = mbs_rng_uniform(&r);
    s1 += u;
    s2 += (u - 0.5) * (u - 0.5);
    umin = fmin(umin, u);
    umax = fmax(umax, u);
    bins[(int)(u * BINS)]++;
  }
  const double mean = s1 / n, var = s2 / n - (mean - 0.5) * (mean - 0.5);
  // 5 standard errors: sd of the mean sqrt(1/12 / n); of the variance sqrt((1/80 - 1/144) / n)
  EXPECT_ABS(mean, 0.5, 5 * sqrt(1.0 / 12 / n));
  EXPECT_ABS(var, 1.0 / 12, 5 * sqrt((1.0 / 80 - 1.0 / 144) / n));
  EXPECT_TRUE(umin > 0 && umax < 1);
  double chi2 = 0;
  const double e = (double)n / BINS;
  for (int b = 0; b < BINS; b++) chi2 += (bins[b] - e) * (bins[b] - e) / e;
  // 99 degrees of freedom: the 0.1% and 99.9% points are 61.14 and 148.23
  printf("uniform: n %ld, mean %.6f, variance %.6f (1/12 = %.6f), chi-square(99) %.1f\n", n,
         mean, var, 1.0 / 12, chi2);
  EXPECT_TRUE(chi2 > 61.14 && chi2 < 148.23);
}

//---------------------------------- the normal distribution ----------------------------------

static void test_normal(void) {
  // 60-digit values at the double nearest each p (mpmath: the root of log ncdf(x) = log p)
  static const struct {
    double p, x;
  } known[] = {
      {0.975, 1.959963984540053855604431},    {1e-300, -37.04709629936119923654704},
      {1e-100, -21.27345356096532429417952},  {1e-20, -9.262340089798407579572095},
      {1e-10, -6.361340902404056199100397},   {0.001, -3.090232306167813535358005},
      {0.02, -2.053748910631823044338639},    {0.3, -0.5244005127080408159694544},
      {0.5000001, 2.506628273311648301161888e-7},
  };
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
    const double x = mbs_normal_quantile(known[i].p);
    EXPECT_TRUE(fabs(x - known[i].x) <= 2e-15 * fabs(known[i].x));
  }
  EXPECT_ABS(mbs_normal_quantile(0.975), 1.959963984540054, 1e-15);  // the value to 16 digits
  EXPECT_TRUE(mbs_normal_quantile(0.5) == 0);
  EXPECT_TRUE(isinf(mbs_normal_quantile(0)) && mbs_normal_quantile(0) < 0);
  EXPECT_TRUE(isinf(mbs_normal_quantile(1)) && mbs_normal_quantile(1) > 0);
  EXPECT_TRUE(isnan(mbs_normal_quantile(NAN)));
  // the upper tail: 1 - 2^-40 is exact, the quantile is 7.0477002566644087254
  EXPECT_TRUE(fabs(mbs_normal_quantile(1 - 0x1p-40) - 7.047700256664408725350992) < 2e-15 * 7.05);
  // the smallest and largest uniforms a generator returns, 2^-54 and 1 - 2^-53
  EXPECT_TRUE(isfinite(mbs_normal_quantile(0x1p-54)) && mbs_normal_quantile(0x1p-54) < -8.2);
  EXPECT_TRUE(mbs_normal_quantile(1 - 0x1p-53) == -mbs_normal_quantile(0x1p-53));
  EXPECT_TRUE(isfinite(mbs_normal_quantile(1 - 0x1p-53)));
  // the CDF: known values and symmetry
  // (mpmath: Phi(1.959963984540054) = 0.97499999999999998912, Phi(-37.047096299361201) =
  // 9.9999999999995236547e-301)
  EXPECT_NEAR(mbs_normal_cdf(1.959963984540054), 0.97499999999999998912, 2e-16);
  EXPECT_TRUE(mbs_normal_cdf(0) == 0.5);
  EXPECT_TRUE(fabs(mbs_normal_cdf(-37.047096299361201) / 9.9999999999995236547e-301 - 1) < 3e-13);
  // round trip in the body: Phi(Phi^-1(p)) = p to 1e-14 relative, p = 0.001 .. 0.999
  double worst = 0;
  mbs_test_rng g = {4711};
  for (int i = 0; i < 200000; i++) {
    const double p = i < 100000 ? mbs_test_uniform(&g, 1e-3, 1 - 1e-3)
                                : pow(10, mbs_test_uniform(&g, -3, -0.3));
    const double rel = fabs(mbs_normal_cdf(mbs_normal_quantile(p)) - p) / p;
    worst = fmax(worst, rel);
    // mirror: Phi^-1(1 - p) = -Phi^-1(p) where 1 - p is exact (p >= 1/2)
    if (p >= 0.5) EXPECT_TRUE(mbs_normal_quantile(1 - p) == -mbs_normal_quantile(p));
  }
  printf("normal quantile: round trip worst relative error %.2e in the body\n", worst);
  EXPECT_TRUE(worst < 1e-14);
  // tails down to 1e-300: the round trip is limited by the CDF's conditioning, x^2 eps (the
  // rounding of x / sqrt(2) inside erfc)
  double worst_tail = 0;
  for (int i = 0; i < 20000; i++) {
    const double p = pow(10, mbs_test_uniform(&g, -300, -3));
    const double x = mbs_normal_quantile(p);
    const double rel = fabs(mbs_normal_cdf(x) - p) / p;
    worst_tail = fmax(worst_tail, rel / (x * x));
  }
  printf("normal quantile: tail round trip worst relative error / x^2 %.2e\n", worst_tail);
  EXPECT_TRUE(worst_tail < 1.5e-15);
}

//---------------------------------- distributions --------------------------------------------

typedef struct moments {
  double mean, var, m4, lo, hi;
} moments;

// sample moments of n quantile draws (two passes: mean, then central moments)
static moments sample_moments(const mbs_distribution* d, uint64_t seed, long n) {
  moments m = {0, 0, 0, INFINITY, -INFINITY};
  double s = 0;
  for (long i = 0; i < n; i++) {
    mbs_rng r = mbs_rng_make(seed, (uint64_t)i, 0);
    const double x = mbs_distribution_quantile(d, mbs_rng_uniform(&r));
    s += x;
    m.lo = fmin(m.lo, x);
    m.hi = fmax(m.hi, x);
  }
  m.mean = s / n;
  double s2 = 0, s4 = 0;
  for (long i = 0; i < n; i++) {
    mbs_rng r = mbs_rng_make(seed, (uint64_t)i, 0);
    const double x = mbs_distribution_quantile(d, mbs_rng_uniform(&r)) - m.mean;
    s2 += x * x;
    s4 += x * x * x * x;
  }
  m.var = s2 / n;
  m.m4 = s4 / n;
  return m;
}

// sample mean and variance within 5 standard errors of the closed forms
static void check_moments(const char* name, const mbs_distribution* d, uint64_t seed) {
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_distribution_check(d, name, &err));
  const long n = ndraws();
  const moments m = sample_moments(d, seed, n);
  const double mean = mbs_distribution_mean(d), var = mbs_distribution_variance(d);
  const double se_mean = sqrt(var / n), se_var = sqrt(fmax(m.m4 - m.var * m.var, 0) / n);
  printf("%-34s mean %.6g (closed form %.6g, %+.2f se)  variance %.6g (%.6g, %+.2f se)\n", name,
         m.mean, mean, (m.mean - mean) / se_mean, m.var, var, (m.var - var) / se_var);
  EXPECT_ABS(m.mean, mean, 5 * se_mean);
  EXPECT_ABS(m.var, var, 5 * se_var);
  if (d->type == MBS_DIST_TRUNCATED_NORMAL) EXPECT_TRUE(m.lo >= d->lo && m.hi <= d->hi);
  if (d->type == MBS_DIST_UNIFORM) EXPECT_TRUE(m.lo >= d->a && m.hi <= d->b);
  if (d->type == MBS_DIST_LOGNORMAL) EXPECT_TRUE(m.lo > 0);
}

static mbs_distribution dist(mbs_dist_type t, double a, double b, double lo, double hi) {
  const mbs_distribution d = {t, a, b, lo, hi, NULL, 0};
  return d;
}

static void test_distributions(void) {
  mbs_distribution d;
  d = dist(MBS_DIST_UNIFORM, -2, 5, 0, 0);
  check_moments("uniform(-2, 5)", &d, 1);
  EXPECT_NEAR(mbs_distribution_mean(&d), 1.5, 1e-15);
  EXPECT_NEAR(mbs_distribution_variance(&d), 49.0 / 12, 1e-15);
  EXPECT_NEAR(mbs_distribution_quantile(&d, 0.25), -0.25, 1e-15);
  d = dist(MBS_DIST_NORMAL, 3, 0.7, 0, 0);
  check_moments("normal(3, 0.7)", &d, 2);
  EXPECT_NEAR(mbs_distribution_quantile(&d, 0.975), 3 + 0.7 * 1.959963984540054235524594, 1e-15);
  d = dist(MBS_DIST_LOGNORMAL, 0.3, 0.5, 0, 0);
  check_moments("lognormal(0.3, 0.5)", &d, 3);
  EXPECT_NEAR(mbs_distribution_mean(&d), 1.5295904196633786726, 1e-15);
  EXPECT_NEAR(mbs_distribution_variance(&d), 0.66451917202044216045, 1e-15);
  EXPECT_NEAR(mbs_distribution_quantile(&d, 0.5), exp(0.3), 1e-15);

  // truncated normal: closed-form moments against 50-digit quadrature (mpmath), then samples
  // (mass Z between the bounds, mean and variance: quadrature and closed form at 60 digits)
  static const struct {
    double a, b, lo, hi, mass, mean, var;
    const char* name;
  } tn[] = {
      {1, 2, -1, 4, 0.77453754479968488258, 1.2903748943050523463, 1.6627400246295574792,
       "truncated normal(1,2) [-1,4]"},
      {0, 1, -0.5, 0.25, 0.29016878695693682788, -0.11925055896410056163,
       0.045982520932688995407, "truncated normal(0,1) [-0.5,0.25]"},
      {0, 1, 8, 9, 6.2198319858658302829e-16, 8.1211889929797971226, 0.014148542782748111039,
       "truncated normal(0,1) [8,9]"},
      {0, 1, 8, INFINITY, 6.2209605742717841235e-16, 8.1213681122361126807,
       0.014324883443340910176, "truncated normal(0,1) [8,inf)"},
      {10, 0.5, -INFINITY, 9, 0.0227501319481792072, 8.8133922335885795664,
       0.028569775103520314161, "truncated normal(10,0.5) (-inf,9]"},
      {2, 3, -30, -20, 1.1224881271354750422e-13, -20.395125242632195445,
       0.1511207047055923835, "truncated normal(2,3) [-30,-20]"},
  };
  for (size_t i = 0; i < sizeof(tn) / sizeof(tn[0]); i++) {
    d = dist(MBS_DIST_TRUNCATED_NORMAL, tn[i].a, tn[i].b, tn[i].lo, tn[i].hi);
    EXPECT_NEAR(mbs_distribution_mean(&d), tn[i].mean, 1e-13);
    // the closed form subtracts terms of size alpha^2 from 1 to leave about 1 / alpha^2, and
    // the tails carry the x^2 eps error of erfc's rounded argument: 2e-11 at alpha = 8
    EXPECT_TRUE(fabs(mbs_distribution_variance(&d) - tn[i].var) <= 1e-10 * tn[i].var);
    check_moments(tn[i].name, &d, 10 + i);
    // the ends of the probability range reach the bounds and stay inside
    const double q0 = mbs_distribution_quantile(&d, 0x1p-54);
    const double q1 = mbs_distribution_quantile(&d, 1 - 0x1p-53);
    EXPECT_TRUE(q0 >= d.lo && q1 <= d.hi && q0 < q1);
    // to first order the bound plus b p Z / phi(bound), in standard units delta (far from the
    // bound when the mass lies away from it: 2.4e-4 at -30 in N(2, 3) on [-30, -20]); the
    // second-order term is alpha delta^2 / 2
    const double alpha = (d.lo - d.a) / d.b, beta = (d.hi - d.a) / d.b;
    if (isfinite(d.lo)) {
      const double delta = 0x1p-54 * tn[i].mass / (exp(-0.5 * alpha * alpha) / sqrt(2 * M_PI));
      EXPECT_ABS(q0, d.lo + d.b * delta, d.b * (fabs(alpha) * delta * delta + 1e-13));
    }
    if (isfinite(d.hi)) {
      const double delta = 0x1p-53 * tn[i].mass / (exp(-0.5 * beta * beta) / sqrt(2 * M_PI));
      EXPECT_ABS(q1, d.hi - d.b * delta, d.b * (fabs(beta) * delta * delta + 1e-13));
    }
    // monotone in p
    double prev = -INFINITY;
    for (int k = 1; k < 1000; k++) {
      const double x = mbs_distribution_quantile(&d, k / 1000.0);
      EXPECT_TRUE(x >= prev);
      prev = x;
    }
  }
  // quantiles in the far tails (mpmath): the median of N(0,1) beyond 8, and the 25% point of
  // N(2, 3) on [-30, -20]
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 0, 1, 8, INFINITY);
  EXPECT_NEAR(mbs_distribution_quantile(&d, 0.5), 8.0849110073915441024, 1e-13);
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 2, 3, -30, -20);
  EXPECT_NEAR(mbs_distribution_quantile(&d, 0.25), -20.550461377269047435, 1e-13);
  // extreme bounds: mean + 20 and + 37 standard deviations still sample inside
  const double far[2] = {20, 37};
  for (int f = 0; f < 2; f++) {
    d = dist(MBS_DIST_TRUNCATED_NORMAL, 5, 2, 5 + 2 * far[f], 5 + 2 * (far[f] + 0.5));
    mbs_error err;
    EXPECT_OK(mbs_distribution_check(&d, "far", &err));
    int inside = 1;
    for (int k = 0; k < 10000; k++) {
      mbs_rng r = mbs_rng_make(99, (uint64_t)k, 0);
      const double x = mbs_distribution_quantile(&d, mbs_rng_uniform(&r));
      inside &= x >= d.lo && x <= d.hi && isfinite(x);
    }
    EXPECT_TRUE(inside);
    // the mean lies between the bound and bound + sd / alpha
    const double m = mbs_distribution_mean(&d);
    EXPECT_TRUE(m > d.lo && m < d.lo + 2 * 2 / far[f]);
  }

  // discrete: equal frequencies
  static const double values[4] = {1, 2.5, 4, 10};
  d = dist(MBS_DIST_DISCRETE, 0, 0, 0, 0);
  d.values = values;
  d.nvalues = 4;
  check_moments("discrete {1, 2.5, 4, 10}", &d, 4);
  EXPECT_NEAR(mbs_distribution_mean(&d), 4.375, 1e-15);
  EXPECT_NEAR(mbs_distribution_variance(&d), (3.375 * 3.375 + 1.875 * 1.875 + 0.375 * 0.375 +
                                              5.625 * 5.625) / 4, 1e-15);
  const long n = ndraws();
  long counts[4] = {0};
  for (long i = 0; i < n; i++) {
    mbs_rng r = mbs_rng_make(77, (uint64_t)i, 5);
    const double x = mbs_distribution_quantile(&d, mbs_rng_uniform(&r));
    int k = -1;
    for (int j = 0; j < 4; j++)
      if (x == values[j]) k = j;
    EXPECT_TRUE(k >= 0);
    if (k >= 0) counts[k]++;
  }
  for (int j = 0; j < 4; j++) EXPECT_ABS(counts[j], n / 4.0, 5 * sqrt(n * 0.25 * 0.75));
  EXPECT_TRUE(mbs_distribution_quantile(&d, 0.2499999) == 1);
  EXPECT_TRUE(mbs_distribution_quantile(&d, 0.25) == 2.5);
  EXPECT_TRUE(mbs_distribution_quantile(&d, 1 - 0x1p-53) == 10);
  // constant
  d = dist(MBS_DIST_CONSTANT, 4.5, 0, 0, 0);
  EXPECT_TRUE(mbs_distribution_quantile(&d, 0.123) == 4.5);
  EXPECT_TRUE(mbs_distribution_mean(&d) == 4.5 && mbs_distribution_variance(&d) == 0);
}

//---------------------------------- Latin hypercube ------------------------------------------

// the strata floor(u count) of one dimension over all indices: exactly one point in each
static int lhs_is_stratified(uint64_t seed, long count, int dim, int j) {
  char* seen = calloc((size_t)count, 1);
  double* u = malloc((size_t)dim * sizeof(double));
  int ok = 1;
  for (long i = 0; i < count && ok; i++) {
    mbs_design_point(MBS_DESIGN_LHS, seed, count, i, dim, u);
    if (!(u[j] > 0 && u[j] < 1)) ok = 0;
    const long s = (long)floor(u[j] * count);
    if (s < 0 || s >= count || seen[s]) ok = 0;
    else seen[s] = 1;
  }
  free(seen);
  free(u);
  return ok;
}

static void test_lhs(void) {
  enum { COUNT = 1000, DIM = 5 };
  static double pts[COUNT][DIM], pts2[COUNT][DIM];
  for (long i = 0; i < COUNT; i++) {
    mbs_design_point(MBS_DESIGN_LHS, 42, COUNT, i, DIM, pts[i]);
    mbs_design_point(MBS_DESIGN_LHS, 43, COUNT, i, DIM, pts2[i]);
  }
  int differ = 0, same_strata = 0;
  for (int j = 0; j < DIM; j++) {
    int hits[COUNT] = {0};
    for (long i = 0; i < COUNT; i++) {
      EXPECT_TRUE(pts[i][j] > 0 && pts[i][j] < 1);
      hits[(int)floor(pts[i][j] * COUNT)]++;
      differ += pts[i][j] != pts2[i][j];
      same_strata += floor(pts[i][j] * COUNT) == floor(pts2[i][j] * COUNT);
    }
    int once = 0;
    for (int s = 0; s < COUNT; s++) once += hits[s] == 1;
    EXPECT_EQ_INT(once, COUNT);
  }
  EXPECT_EQ_INT(differ, COUNT * DIM);
  EXPECT_TRUE(same_strata < 30);  // about DIM for independent permutations
  // dimensions are permuted independently: the correlation of strata between dimensions and
  // with the index is small (sd 1 / sqrt(1000) = 0.032)
  for (int j = 0; j < DIM; j++) {
    for (int k = -1; k < j; k++) {
      double sxy = 0;
      for (long i = 0; i < COUNT; i++) {
        const double x = k < 0 ? (i + 0.5) / COUNT : pts[i][k];
        sxy += (x - 0.5) * (pts[i][j] - 0.5);
      }
      const double corr = sxy / COUNT * 12;
      EXPECT_TRUE(fabs(corr) < 0.15);
    }
  }
  // reproducible point by point
  double u[DIM];
  mbs_design_point(MBS_DESIGN_LHS, 42, COUNT, 617, DIM, u);
  for (int j = 0; j < DIM; j++) EXPECT_TRUE(u[j] == pts[617][j]);
  // the permutation is a bijection for counts around powers of two (cycle walking), in several
  // dimensions and for several seeds
  static const long counts[] = {1, 2, 3, 5, 1000, 1023, 1024, 1025, 4097};
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
    for (uint64_t seed = 0; seed < 3; seed++)
      for (int j = 0; j < 3; j++) EXPECT_TRUE(lhs_is_stratified(seed, counts[c], 3, j));
  if (!quick()) EXPECT_TRUE(lhs_is_stratified(2025, 100003, 1, 0));
  // count 2: both orders of the two strata occur over seeds
  int order[2] = {0, 0};
  for (uint64_t seed = 0; seed < 64; seed++) {
    mbs_design_point(MBS_DESIGN_LHS, seed, 2, 0, 1, u);
    order[u[0] < 0.5]++;
  }
  EXPECT_TRUE(order[0] > 10 && order[1] > 10);
}

//---------------------------------- random design --------------------------------------------

static void test_random_design(void) {
  double u[7];
  for (long i = 0; i < 50; i++) {
    mbs_design_point(MBS_DESIGN_RANDOM, 31, 50, i, 7, u);
    for (int j = 0; j < 7; j++) {
      mbs_rng r = mbs_rng_make(31, (uint64_t)i, (uint64_t)j);
      EXPECT_TRUE(u[j] == mbs_rng_uniform(&r));
    }
  }
}

//---------------------------------- Sobol' ---------------------------------------------------

// SciPy 1.10 qmc.Sobol(d=64, scramble=False) after fast_forward(n): each coordinate times 2^30
static const struct {
  uint64_t n;
  uint32_t x[64];
} scipy_points[4] = {
    {7, {134217728, 671088640, 402653184, 134217728, 134217728, 402653184, 671088640,
         671088640, 671088640, 939524096, 671088640, 134217728, 671088640, 402653184,
         134217728, 134217728, 134217728, 134217728, 671088640, 939524096, 939524096,
         402653184, 671088640, 134217728, 134217728, 671088640, 671088640, 939524096,
         939524096, 402653184, 671088640, 939524096, 134217728, 671088640, 939524096,
         939524096, 402653184, 134217728, 671088640, 134217728, 134217728, 939524096,
         939524096, 134217728, 671088640, 939524096, 402653184, 939524096, 402653184,
         134217728, 939524096, 134217728, 402653184, 671088640, 402653184, 134217728,
         134217728, 134217728, 671088640, 671088640, 939524096, 134217728, 671088640,
         402653184}},
    {1000, {235929600,  103809024, 556793856,  726663168, 300941312,  974127104,  49283072,
            965738496,  537919488, 74448896,   91226112,  273678336,  173015040,  412090368,
            154140672,  397410304, 772800512,  370147328, 1064304640, 779091968,  560988160,
            590348288,  1020264448, 579862528, 625999872, 974127104,  42991616,   1051721728,
            63963136,   365953024, 158334976,  156237824, 317718528,  636485632,  860880896,
            827326464,  911212544, 892338176,  330301440, 514850816,  980418560,  273678336,
            1030750208, 753926144, 902823936,  99614720,  936378368,  986710016,  1072693248,
            514850816,  378535936, 554696704,  808452096, 470810624,  135266304,  957349888,
            487587840,  84934656,  948961280,  613416960, 479199232,  646971392,  277872640,
            479199232}},
    {999999, {20038656,  964066304,  394126336, 38046720,   918287360, 660753408,  832615424,
              93529088,  163185664,  851975168, 257584128,  504914944, 704406528,  849497088,
              252376064, 1012171776, 567954432, 502965248,  242351104, 737639424,  538016768,
              43207680,  268444672,  181718016, 652964864,  484779008, 705999872,  857525248,
              298556416, 379937792,  37901312,  707156992,  986555392, 601953280,  953566208,
              184984576, 727632896,  217644032, 51248128,   104524800, 702196736,  1049213952,
              527862784, 249267200,  240428032, 598649856,  595049472, 392928256,  90018816,
              167861248, 890432512,  187393024, 700400640,  647384064, 1054919680, 149898240,
              3230720,   558646272,  481084416, 827245568,  71781376,  270943232,  394544128,
              272122880}},
    {1073741823, {1,         858993459, 385885991,  805503005,  268619575, 784934857,
                  502268945, 903271033, 67436641,   868921959,  997196295, 655061653,
                  744030901, 462422065, 724742933,  308059905,  187583765, 525530409,
                  1002344493, 1056964611, 632619011, 48168961,  1063555075, 913821699,
                  759153923, 414278913, 950820099,  78705921,   26022771,  310149809,
                  733013587, 906207283, 1006665331, 1038365585, 868080049, 777034417,
                  11804371,  858793053, 431050931,  522126179,  569126247, 618160839,
                  684141227, 679305799, 88435769,   115893253,  801580743, 295248201,
                  452993921, 663303033, 438985887,  819253509,  893388689, 360973285,
                  97606883,  944047953, 923074097,  399771505,  441452925, 88557149,
                  377948031, 242861801, 937119805,  499567131}},
};

// the product of (1 + (x_j - 0.5)) over 8 dimensions: integral 1
static double smooth(const double* x) {
  double f = 1;
  for (int j = 0; j < 8; j++) f *= 1 + (x[j] - 0.5);
  return f;
}

static double integrate(mbs_design_type type, uint64_t seed, long n) {
  double s = 0, x[8];
  for (long i = 0; i < n; i++) {
    mbs_design_point(type, seed, n, i, 8, x);
    s += smooth(x);
  }
  return s / n;
}

// points index 0 .. 2^k - 2 (sequence points 1 .. 2^k - 1) in one dimension: their strata of
// width 2^-k are distinct, the only empty one is `empty`, and all sit at the same offset within
// their stratum (0 unscrambled; the shift's lower digits when scrambled)
static void check_net_1d(uint64_t seed, int k, int dim, int j, long empty_expected) {
  const long n = 1L << k;
  char* seen = calloc((size_t)n, 1);
  double u[MBS_SOBOL_MAX_DIM];
  double offset = -1;
  int ok = 1, same_offset = 1;
  for (long i = 0; i + 1 < n; i++) {
    mbs_design_point(MBS_DESIGN_SOBOL, seed, n, i, dim, u);
    if (!(u[j] > 0 && u[j] < 1)) ok = 0;
    const double t = u[j] * n;  // exact: a power-of-two scaling
    const long s = (long)floor(t);
    if (seen[s]) ok = 0;
    seen[s] = 1;
    if (offset < 0) offset = t - s;
    if (t - s != offset) same_offset = 0;
  }
  long empty = -1, nempty = 0;
  for (long s = 0; s < n; s++)
    if (!seen[s]) empty = s, nempty++;
  EXPECT_TRUE(ok);
  EXPECT_TRUE(same_offset);
  EXPECT_EQ_INT(nempty, 1);
  if (empty_expected >= 0) EXPECT_EQ_INT(empty, empty_expected);
  if (seed == 0) EXPECT_TRUE(offset == 0);
  free(seen);
}

// dimensions 1 and 2 form a (0, k, 2)-net: with the origin's image, every elementary box of
// area 2^-k holds exactly one of the first 2^k points; the skipped origin leaves one box empty
static void check_net_2d(uint64_t seed, int k) {
  const long n = 1L << k;
  int* cnt = malloc((size_t)n * sizeof(int));
  double u[2];
  for (int a = 0; a <= k; a++) {
    memset(cnt, 0, (size_t)n * sizeof(int));
    for (long i = 0; i + 1 < n; i++) {
      mbs_design_point(MBS_DESIGN_SOBOL, seed, n, i, 2, u);
      const long bx = (long)floor(ldexp(u[0], a)), by = (long)floor(ldexp(u[1], k - a));
      cnt[(bx << (k - a)) + by]++;
    }
    int ones = 0, zeros = 0;
    for (long b = 0; b < n; b++) ones += cnt[b] == 1, zeros += cnt[b] == 0;
    EXPECT_EQ_INT(ones, n - 1);
    EXPECT_EQ_INT(zeros, 1);
    if (seed == 0) EXPECT_EQ_INT(cnt[0], 0);  // the origin's box
  }
  free(cnt);
}

static void test_sobol(void) {
  // Joe and Kuo's first points (dimensions 1..3), origin skipped
  static const double jk[9][3] = {{0.5, 0.5, 0.5},         {0.75, 0.25, 0.25},
                                  {0.25, 0.75, 0.75},      {0.375, 0.375, 0.625},
                                  {0.875, 0.875, 0.125},   {0.625, 0.125, 0.875},
                                  {0.125, 0.625, 0.375},   {0.1875, 0.3125, 0.9375},
                                  {0.6875, 0.8125, 0.4375}};
  double u[MBS_SOBOL_MAX_DIM];
  for (int i = 0; i < 9; i++) {
    mbs_design_point(MBS_DESIGN_SOBOL, 0, 16, i, 3, u);
    for (int j = 0; j < 3; j++) EXPECT_TRUE(u[j] == jk[i][j]);
  }
  // all 64 dimensions against SciPy (bits 1..30 of the direction numbers)
  for (int t = 0; t < 4; t++) {
    const long n = (long)scipy_points[t].n;
    mbs_design_point(MBS_DESIGN_SOBOL, 0, n, n - 1, MBS_SOBOL_MAX_DIM, u);
    int match = 0;
    for (int j = 0; j < MBS_SOBOL_MAX_DIM; j++)
      match += ldexp(u[j], 30) == (double)scipy_points[t].x[j];
    EXPECT_EQ_INT(match, MBS_SOBOL_MAX_DIM);
  }
  // a point does not depend on how many dimensions are asked for
  double v[3];
  mbs_design_point(MBS_DESIGN_SOBOL, 0, 1000, 999, MBS_SOBOL_MAX_DIM, u);
  mbs_design_point(MBS_DESIGN_SOBOL, 0, 1000, 999, 3, v);
  for (int j = 0; j < 3; j++) EXPECT_TRUE(u[j] == v[j]);
  // stratification for count 2^k in every dimension: the first 2^k - 1 points fill all strata
  // but the origin's, at their left ends (multiples of 2^-k)
  const int k = 10;
  for (int j = 0; j < MBS_SOBOL_MAX_DIM; j++) check_net_1d(0, k, MBS_SOBOL_MAX_DIM, j, 0);
  check_net_2d(0, k);
  // the 2^k-th point (sequence point 2^k) lands inside (0, 1) on a 2^-(k+1) grid
  mbs_design_point(MBS_DESIGN_SOBOL, 0, 1L << k, (1L << k) - 1, MBS_SOBOL_MAX_DIM, u);
  for (int j = 0; j < MBS_SOBOL_MAX_DIM; j++) {
    EXPECT_TRUE(u[j] > 0 && u[j] < 1);
    EXPECT_TRUE(ldexp(u[j], k + 1) == floor(ldexp(u[j], k + 1)));
  }
  // scrambled: inside (0, 1); points 0 .. 2^k - 2 leave one stratum empty (point 2^k - 1's)
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (int j = 0; j < MBS_SOBOL_MAX_DIM; j += 7) check_net_1d(seed, k, MBS_SOBOL_MAX_DIM, j, -1);
    check_net_2d(seed, k);
  }
  // scrambled designs start at point 0 (the shifted origin): 2^k points fill all 2^k strata
  for (uint64_t seed = 1; seed <= 3; seed++) {
    const long n = 1L << k;
    char* seen = calloc((size_t)n * MBS_SOBOL_MAX_DIM, 1);
    long filled = 0;
    for (long i = 0; i < n; i++) {
      mbs_design_point(MBS_DESIGN_SOBOL, seed, n, i, MBS_SOBOL_MAX_DIM, u);
      for (int j = 0; j < MBS_SOBOL_MAX_DIM; j++) {
        char* c = &seen[(long)j * n + (long)floor(u[j] * n)];
        filled += !*c;
        *c = 1;
      }
    }
    EXPECT_EQ_INT(filled, n * MBS_SOBOL_MAX_DIM);
    free(seen);
  }
  // scrambling changes every coordinate, and seeds differ
  double s1[MBS_SOBOL_MAX_DIM], s2[MBS_SOBOL_MAX_DIM];
  mbs_design_point(MBS_DESIGN_SOBOL, 0, 100, 17, MBS_SOBOL_MAX_DIM, u);
  mbs_design_point(MBS_DESIGN_SOBOL, 1, 100, 17, MBS_SOBOL_MAX_DIM, s1);
  mbs_design_point(MBS_DESIGN_SOBOL, 2, 100, 17, MBS_SOBOL_MAX_DIM, s2);
  int diff01 = 0, diff12 = 0;
  for (int j = 0; j < MBS_SOBOL_MAX_DIM; j++) {
    diff01 += u[j] != s1[j];
    diff12 += s1[j] != s2[j];
    EXPECT_TRUE(s1[j] > 0 && s1[j] < 1);
  }
  EXPECT_EQ_INT(diff01, MBS_SOBOL_MAX_DIM);
  EXPECT_EQ_INT(diff12, MBS_SOBOL_MAX_DIM);
  // the largest count: the last point is still inside (0, 1)
  const long big = 1L << 40;
  mbs_design_point(MBS_DESIGN_SOBOL, 0, big, big - 1, MBS_SOBOL_MAX_DIM, u);
  for (int j = 0; j < MBS_SOBOL_MAX_DIM; j++) EXPECT_TRUE(u[j] > 0 && u[j] < 1);
  mbs_design_point(MBS_DESIGN_SOBOL, 9, big, big - 1, MBS_SOBOL_MAX_DIM, u);
  for (int j = 0; j < MBS_SOBOL_MAX_DIM; j++) EXPECT_TRUE(u[j] > 0 && u[j] < 1);

  // integration error of a smooth 8-dimensional integrand at N = 4096: Sobol' ~ 1/N, random
  // ~ 1/sqrt(N) (sd of the integrand (13/12)^4 - 1 ... about 0.95, so 0.015 at N = 4096)
  const long n = 4096;
  const double e_sobol = fabs(integrate(MBS_DESIGN_SOBOL, 0, n) - 1);
  double rms_random = 0, rms_scrambled = 0, rms_lhs = 0;
  const int reps = 8;
  for (int r = 0; r < reps; r++) {
    const double er = integrate(MBS_DESIGN_RANDOM, 100 + r, n) - 1;
    const double es = integrate(MBS_DESIGN_SOBOL, 200 + r, n) - 1;
    const double el = integrate(MBS_DESIGN_LHS, 300 + r, n) - 1;
    rms_random += er * er / reps;
    rms_scrambled += es * es / reps;
    rms_lhs += el * el / reps;
  }
  rms_random = sqrt(rms_random);
  rms_scrambled = sqrt(rms_scrambled);
  rms_lhs = sqrt(rms_lhs);
  printf("8-d integral at N = %ld: error Sobol' %.2e, scrambled Sobol' rms %.2e, LHS rms %.2e, "
         "random rms %.2e\n", n, e_sobol, rms_scrambled, rms_lhs, rms_random);
  EXPECT_TRUE(rms_random > 0.005 && rms_random < 0.04);
  EXPECT_TRUE(e_sobol < rms_random / 20);
  EXPECT_TRUE(rms_scrambled < rms_random / 10);
  EXPECT_TRUE(rms_lhs < rms_random);
}

//---------------------------------- checks and names -----------------------------------------

static void expect_reject(const mbs_distribution* d, const char* what) {
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_distribution_check(d, what, &err), MBS_ERR_PARAMETER);
  EXPECT_EQ_INT(err.code, MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, what) == err.message);
  EXPECT_TRUE(strcmp(err.component, what) == 0);
}

static void test_checks(void) {
  mbs_error err;
  mbs_distribution d;
  d = dist(MBS_DIST_UNIFORM, 1, 1, 0, 0);
  expect_reject(&d, "parameter 'femur_r.mass'");
  d = dist(MBS_DIST_UNIFORM, 2, 1, 0, 0);
  expect_reject(&d, "uniform reversed");
  d = dist(MBS_DIST_UNIFORM, NAN, 1, 0, 0);
  expect_reject(&d, "uniform nan");
  d = dist(MBS_DIST_UNIFORM, 0, INFINITY, 0, 0);
  expect_reject(&d, "uniform inf");
  d = dist(MBS_DIST_NORMAL, 0, 0, 0, 0);
  expect_reject(&d, "normal zero sd");
  d = dist(MBS_DIST_NORMAL, 0, -1, 0, 0);
  expect_reject(&d, "normal negative sd");
  d = dist(MBS_DIST_NORMAL, INFINITY, 1, 0, 0);
  expect_reject(&d, "normal inf mean");
  d = dist(MBS_DIST_LOGNORMAL, 0, NAN, 0, 0);
  expect_reject(&d, "lognormal nan");
  d = dist(MBS_DIST_LOGNORMAL, 708, 2, 0, 0);
  expect_reject(&d, "lognormal overflow");
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 0, 1, 1, 1);
  expect_reject(&d, "truncated empty");
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 0, 1, 2, 1);
  expect_reject(&d, "truncated reversed");
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 0, 1, NAN, 1);
  expect_reject(&d, "truncated nan");
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 0, 1, 40, INFINITY);
  expect_reject(&d, "truncated no mass");
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 0, 0, -1, 1);
  expect_reject(&d, "truncated zero sd");
  d = dist(MBS_DIST_DISCRETE, 0, 0, 0, 0);
  expect_reject(&d, "discrete none");
  static const double bad[3] = {1, NAN, 2};
  d.values = bad;
  d.nvalues = 3;
  expect_reject(&d, "discrete nan");
  d = dist(MBS_DIST_CONSTANT, INFINITY, 0, 0, 0);
  expect_reject(&d, "constant inf");
  d = dist((mbs_dist_type)42, 0, 1, 0, 0);
  expect_reject(&d, "unknown type");
  EXPECT_EQ_INT(mbs_distribution_check(NULL, "none", &err), MBS_ERR_ARGUMENT);
  // accepted: bounds far in a tail, one-sided and two-sided infinite truncation
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 1, 2, 1 + 8 * 2, INFINITY);
  EXPECT_OK(mbs_distribution_check(&d, "tail", &err));
  d = dist(MBS_DIST_TRUNCATED_NORMAL, 1, 2, -INFINITY, INFINITY);
  EXPECT_OK(mbs_distribution_check(&d, "untruncated", &err));
  EXPECT_NEAR(mbs_distribution_mean(&d), 1, 1e-15);
  EXPECT_NEAR(mbs_distribution_variance(&d), 4, 1e-15);
  d = dist(MBS_DIST_CONSTANT, 3, 0, 0, 0);
  EXPECT_OK(mbs_distribution_check(&d, "constant", &err));

  // designs
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_design_check(MBS_DESIGN_SOBOL, 100, 65, &err), MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "sobol") != NULL && strstr(err.message, "65") != NULL);
  EXPECT_OK(mbs_design_check(MBS_DESIGN_SOBOL, 100, 64, &err));
  EXPECT_OK(mbs_design_check(MBS_DESIGN_LHS, 100, 200, &err));
  EXPECT_OK(mbs_design_check(MBS_DESIGN_RANDOM, 1, 1000, &err));
  const mbs_design_type types[3] = {MBS_DESIGN_RANDOM, MBS_DESIGN_LHS, MBS_DESIGN_SOBOL};
  for (int t = 0; t < 3; t++) {
    mbs_error_clear(&err);
    EXPECT_EQ_INT(mbs_design_check(types[t], 0, 3, &err), MBS_ERR_ARGUMENT);
    EXPECT_TRUE(strstr(err.message, mbs_design_name(types[t])) != NULL &&
                strstr(err.message, "count 0") != NULL);
    EXPECT_EQ_INT(mbs_design_check(types[t], -5, 3, &err), MBS_ERR_ARGUMENT);
    EXPECT_EQ_INT(mbs_design_check(types[t], 10, -1, &err), MBS_ERR_ARGUMENT);
  }
  EXPECT_EQ_INT(mbs_design_check(MBS_DESIGN_LHS, (1L << 40) + 1, 3, &err), MBS_ERR_PARAMETER);
  EXPECT_EQ_INT(mbs_design_check((mbs_design_type)9, 10, 3, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strlen(err.message) > 0);
  // a point that cannot be made is NaN, never a value that looks valid
  double u[66];
  mbs_design_point(MBS_DESIGN_SOBOL, 0, 100, 5, 65, u);
  EXPECT_TRUE(isnan(u[0]) && isnan(u[64]));
  mbs_design_point(MBS_DESIGN_LHS, 0, 100, 100, 2, u);
  EXPECT_TRUE(isnan(u[0]) && isnan(u[1]));

  // names both ways
  for (int t = 0; t < MBS_DESIGN_COUNT; t++)
    EXPECT_EQ_INT(mbs_design_from_name(mbs_design_name((mbs_design_type)t)), t);
  for (int t = 0; t < MBS_DIST_COUNT; t++)
    EXPECT_EQ_INT(mbs_dist_from_name(mbs_dist_name((mbs_dist_type)t)), t);
  EXPECT_TRUE(strcmp(mbs_design_name(MBS_DESIGN_LHS), "lhs") == 0);
  EXPECT_TRUE(strcmp(mbs_dist_name(MBS_DIST_TRUNCATED_NORMAL), "truncated_normal") == 0);
  EXPECT_EQ_INT(mbs_design_from_name("sobol"), MBS_DESIGN_SOBOL);
  EXPECT_EQ_INT(mbs_dist_from_name("lognormal"), MBS_DIST_LOGNORMAL);
  EXPECT_EQ_INT(mbs_design_from_name("halton"), -1);
  EXPECT_EQ_INT(mbs_dist_from_name("Normal"), -1);
  EXPECT_EQ_INT(mbs_dist_from_name(NULL), -1);
  EXPECT_EQ_INT(mbs_design_from_name(""), -1);
}

// the full factorial grid: every combination of levels exactly once, the first factor varying
// slowest; discrete distributions take their k-th value at level k
static void test_grid(void) {
  const int levels[3] = {2, 3, 4};
  EXPECT_EQ_INT((int)mbs_grid_count(levels, 3), 24);
  const int bad[2] = {3, 0};
  EXPECT_TRUE(mbs_grid_count(bad, 2) < 0);
  const int huge[3] = {1 << 20, 1 << 20, 1 << 20};
  EXPECT_TRUE(mbs_grid_count(huge, 3) < 0);
  double v0[2] = {-1, 1}, v1[3] = {10, 20, 30}, v2[4] = {0.1, 0.2, 0.3, 0.4};
  mbs_distribution d[3] = {{.type = MBS_DIST_DISCRETE, .values = v0, .nvalues = 2},
                           {.type = MBS_DIST_DISCRETE, .values = v1, .nvalues = 3},
                           {.type = MBS_DIST_DISCRETE, .values = v2, .nvalues = 4}};
  int seen[24] = {0};
  for (long i = 0; i < 24; i++) {
    double u[3];
    mbs_grid_point(levels, 3, i, u);
    int k[3];
    for (int j = 0; j < 3; j++) {
      EXPECT_TRUE(u[j] > 0 && u[j] < 1);
      k[j] = (int)floor(u[j] * levels[j]);
      // the discrete distribution gives exactly the level's value
      const double x = mbs_distribution_quantile(&d[j], u[j]);
      EXPECT_NEAR(x, d[j].values[k[j]], 0);
    }
    // mixed radix, first factor slowest
    EXPECT_EQ_INT(k[0] * 12 + k[1] * 4 + k[2], (int)i);
    seen[k[0] * 12 + k[1] * 4 + k[2]]++;
  }
  int all_once = 1;
  for (int i = 0; i < 24; i++) all_once &= seen[i] == 1;
  EXPECT_TRUE(all_once);
  double u[3];
  mbs_grid_point(levels, 3, 24, u);
  EXPECT_TRUE(isnan(u[0]) && isnan(u[2]));
  EXPECT_EQ_INT(mbs_design_from_name("grid"), MBS_DESIGN_GRID);
}

int main(void) {
  test_philox();
  test_grid();
  test_reproducible();
  test_uniform_stats();
  test_normal();
  test_distributions();
  test_random_design();
  test_lhs();
  test_sobol();
  test_checks();
  return mbs_test_finish("test_sampler");
}
