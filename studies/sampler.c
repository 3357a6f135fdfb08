// Random numbers and sample designs (include/mbs/sampler.h).
//
// Sources of the published numbers in this file:
//  - Philox4x64-10: Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3"
//    (SC'11), through Random123's own header (Debian librandom123-dev).
//  - Inverse normal CDF: Wichura, "Algorithm AS 241: The percentage points of the normal
//    distribution", Applied Statistics 37(3), 477-484 (1988), routine PPND16 (about 1e-16).
//  - Sobol' direction numbers: Joe and Kuo, "Constructing Sobol sequences with better
//    two-dimensional projections", SIAM J. Sci. Comput. 30, 2635-2654 (2008), file
//    new-joe-kuo-6.21201, dimensions 2..64 (dimension 1 is van der Corput's, all m_k = 1).
//    The construction (direction numbers from the primitive polynomial's recurrence, points in
//    Gray-code order) is Bratley and Fox, ACM TOMS 14, 88-100 (1988), as in Joe and Kuo's notes.
#include "mbs/sampler.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <Random123/philox.h>

//---------------------------------- the generator --------------------------------------------

// second key word of the internal generators (the sample generator uses 0): LHS permutation
// keys and Sobol' digital shifts come from keys that no (seed, sample, stream) can produce
enum { KEY_SAMPLES = 0, KEY_LHS_PERMUTATION = 0x4c4853, KEY_SOBOL_SHIFT = 0x534f42 };

static philox4x64_ctr_t philox(uint64_t c0, uint64_t c1, uint64_t c2, uint64_t c3,
                               uint64_t k0, uint64_t k1) {
  const philox4x64_ctr_t ctr = {{c0, c1, c2, c3}};
  const philox4x64_key_t key = {{k0, k1}};
  return philox4x64_R(10, ctr, key);
}

mbs_rng mbs_rng_make(uint64_t seed, uint64_t sample, uint64_t stream) {
  const mbs_rng r = {seed, sample, stream, 0};
  return r;
}

uint64_t mbs_rng_bits(mbs_rng* r) {
  const uint64_t k = r->draw++;
  const philox4x64_ctr_t x = philox(r->sample, r->stream, k >> 2, 0, r->seed, KEY_SAMPLES);
  return x.v[k & 3];
}

// the top 53 bits k, centered in their cell: (k + 0.5) / 2^53. Below 1/2 this is exact; above,
// doubles are 2^-53 apart and the half rounds to even, which is still uniform on that grid but
// turns the largest k into exactly 1: that one value is kept at 1 - 2^-53, so never 0 or 1
static double uniform_from_bits(uint64_t bits) {
  const double u = ((double)(bits >> 11) + 0.5) * 0x1p-53;
  return u < 1 ? u : 1 - 0x1p-53;
}

double mbs_rng_uniform(mbs_rng* r) { return uniform_from_bits(mbs_rng_bits(r)); }

double mbs_rng_normal(mbs_rng* r) { return mbs_normal_quantile(mbs_rng_uniform(r)); }

//---------------------------------- the normal distribution ----------------------------------

double mbs_normal_cdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }

// the upper tail 1 - Phi(x), accurate where Phi(x) rounds to 1
static double normal_upper(double x) { return 0.5 * erfc(x * M_SQRT1_2); }

// the standard normal density
static double normal_pdf(double x) { return 0.3989422804014326779399461 * exp(-0.5 * x * x); }

static double poly7(const double c[8], double x) {
  return ((((((c[7] * x + c[6]) * x + c[5]) * x + c[4]) * x + c[3]) * x + c[2]) * x + c[1]) * x +
         c[0];
}

// Wichura's AS241 (PPND16): rational approximations in three regions
double mbs_normal_quantile(double p) {
  static const double a[8] = {3.3871328727963666080e0,  1.3314166789178437745e+2,
                              1.9715909503065514427e+3, 1.3731693765509461125e+4,
                              4.5921953931549871457e+4, 6.7265770927008700853e+4,
                              3.3430575583588128105e+4, 2.5090809287301226727e+3};
  static const double b[8] = {1.0,
                              4.2313330701600911252e+1, 6.8718700749205790830e+2,
                              5.3941960214247511077e+3, 2.1213794301586595867e+4,
                              3.9307895800092710610e+4, 2.8729085735721942674e+4,
                              5.2264952788528545610e+3};
  static const double c[8] = {1.42343711074968357734e0,  4.63033784615654529590e0,
                              5.76949722146069140550e0,  3.64784832476320460504e0,
                              1.27045825245236838258e0,  2.41780725177450611770e-1,
                              2.27238449892691845833e-2, 7.74545014278341407640e-4};
  static const double d[8] = {1.0,
                              2.05319162663775882187e0,  1.67638483018380384940e0,
                              6.89767334985100004550e-1, 1.48103976427480074590e-1,
                              1.51986665636164571966e-2, 5.47593808499534494600e-4,
                              1.05075007164441684324e-9};
  static const double e[8] = {6.65790464350110377720e0,  5.46378491116411436990e0,
                              1.78482653991729133580e0,  2.96560571828504891230e-1,
                              2.65321895265761230930e-2, 1.24266094738807843860e-3,
                              2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static const double f[8] = {1.0,
                              5.99832206555887937690e-1, 1.36929880922735805310e-1,
                              1.48753612908506148525e-2, 7.86869131145613259100e-4,
                              1.84631831751005468180e-5, 1.42151175831644588870e-7,
                              2.04426310338993978564e-15};
  if (isnan(p)) return p;
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  const double q = p - 0.5;
  if (fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * poly7(a, r) / poly7(b, r);
  }
  double r = sqrt(-log(q < 0 ? p : 1 - p));
  double x;
  if (r <= 5) {
    r -= 1.6;
    x = poly7(c, r) / poly7(d, r);
  } else {
    r -= 5;
    x = poly7(e, r) / poly7(f, r);
  }
  return q < 0 ? -x : x;
}

//---------------------------------- distributions --------------------------------------------

// a truncated normal in standard units: bounds alpha, beta, the CDF and upper tail at each, and
// the mass Z between them, each from the tail where it is accurate
typedef struct trunc_normal {
  double alpha, beta, p_alpha, q_beta, mass;
} trunc_normal;

static trunc_normal trunc_normal_make(const mbs_distribution* d) {
  trunc_normal t;
  t.alpha = (d->lo - d->a) / d->b;
  t.beta = (d->hi - d->a) / d->b;
  t.p_alpha = mbs_normal_cdf(t.alpha);
  t.q_beta = normal_upper(t.beta);
  if (t.alpha >= 0)  // both bounds in the upper half: difference of upper tails
    t.mass = normal_upper(t.alpha) - t.q_beta;
  else if (t.beta <= 0)  // both in the lower half: difference of CDFs
    t.mass = mbs_normal_cdf(t.beta) - t.p_alpha;
  else
    t.mass = 1 - t.p_alpha - t.q_beta;
  return t;
}

// the smallest mass between truncation bounds that the quantile and moments resolve
#define MBS_TRUNC_MIN_MASS 1e-300

static int finite2(double x, double y) { return isfinite(x) && isfinite(y); }

int mbs_distribution_check(const mbs_distribution* d, const char* what, mbs_error* err) {
  if (!what) what = "distribution";
  if (!d) return MBS_FAIL(err, MBS_ERR_ARGUMENT, what, "%s: no distribution given", what);
  switch (d->type) {
    case MBS_DIST_UNIFORM:
      if (!finite2(d->a, d->b))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                        "%s: uniform bounds %g and %g must be finite", what, d->a, d->b);
      if (!(d->a < d->b))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                        "%s: uniform low %g must be less than high %g", what, d->a, d->b);
      return MBS_OK;
    case MBS_DIST_NORMAL:
    case MBS_DIST_LOGNORMAL:
    case MBS_DIST_TRUNCATED_NORMAL: {
      const char* name = mbs_dist_name(d->type);
      if (!finite2(d->a, d->b))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                        "%s: %s mean %g and standard deviation %g must be finite", what, name,
                        d->a, d->b);
      if (!(d->b > 0))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                        "%s: %s standard deviation %g must be positive", what, name, d->b);
      // the largest draw, at the largest uniform 1 - 2^-53 (8.21 standard deviations)
      if (d->type == MBS_DIST_LOGNORMAL && !isfinite(exp(d->a + 8.3 * d->b)))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                        "%s: lognormal with log-mean %g and log-deviation %g overflows at "
                        "its largest draws",
                        what, d->a, d->b);
      if (d->type != MBS_DIST_TRUNCATED_NORMAL) return MBS_OK;
      if (isnan(d->lo) || isnan(d->hi) || !(d->lo < d->hi))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                        "%s: truncated normal bounds [%g, %g] need low < high", what, d->lo,
                        d->hi);
      const trunc_normal t = trunc_normal_make(d);
      if (!(t.mass >= MBS_TRUNC_MIN_MASS))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                        "%s: truncated normal bounds [%g, %g] hold probability %g of "
                        "normal(%g, %g), below %g",
                        what, d->lo, d->hi, t.mass, d->a, d->b, MBS_TRUNC_MIN_MASS);
      return MBS_OK;
    }
    case MBS_DIST_DISCRETE:
      if (d->nvalues < 1 || !d->values)
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what, "%s: discrete distribution has no values",
                        what);
      for (int i = 0; i < d->nvalues; i++)
        if (!isfinite(d->values[i]))
          return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                          "%s: discrete value %d (%g) is not finite", what, i + 1,
                          d->values[i]);
      return MBS_OK;
    case MBS_DIST_CONSTANT:
      if (!isfinite(d->a))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, what, "%s: constant %g is not finite", what,
                        d->a);
      return MBS_OK;
    default:
      return MBS_FAIL(err, MBS_ERR_PARAMETER, what, "%s: unknown distribution type %d", what,
                      (int)d->type);
  }
}

static double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

double mbs_distribution_quantile(const mbs_distribution* d, double p) {
  switch (d->type) {
    case MBS_DIST_UNIFORM:
      return clamp(d->a + p * (d->b - d->a), d->a, d->b);
    case MBS_DIST_NORMAL:
      return d->a + d->b * mbs_normal_quantile(p);
    case MBS_DIST_LOGNORMAL:
      return exp(d->a + d->b * mbs_normal_quantile(p));
    case MBS_DIST_TRUNCATED_NORMAL: {
      // Phi^-1(Phi(alpha) + p Z), or, where that lies in the upper half, the same point as
      // -Phi^-1(Q(beta) + (1 - p) Z) with Q = 1 - Phi: each tail is reached through small
      // probabilities, so bounds far out in either tail keep their precision
      const trunc_normal t = trunc_normal_make(d);
      const double lower = t.p_alpha + p * t.mass;
      const double upper = t.q_beta + (1 - p) * t.mass;
      double x = lower <= upper ? mbs_normal_quantile(lower) : -mbs_normal_quantile(upper);
      x = clamp(x, t.alpha, t.beta);
      return clamp(d->a + d->b * x, d->lo, d->hi);
    }
    case MBS_DIST_DISCRETE: {
      const int n = d->nvalues;
      long i = (long)floor(p * n);
      if (i < 0) i = 0;
      if (i > n - 1) i = n - 1;
      return d->values[i];
    }
    case MBS_DIST_CONSTANT:
      return d->a;
    default:
      return NAN;
  }
}

// x phi(x), 0 at infinite x
static double x_pdf(double x) { return isinf(x) ? 0 : x * normal_pdf(x); }

double mbs_distribution_mean(const mbs_distribution* d) {
  switch (d->type) {
    case MBS_DIST_UNIFORM:
      return 0.5 * (d->a + d->b);
    case MBS_DIST_NORMAL:
      return d->a;
    case MBS_DIST_LOGNORMAL:
      return exp(d->a + 0.5 * d->b * d->b);
    case MBS_DIST_TRUNCATED_NORMAL: {
      const trunc_normal t = trunc_normal_make(d);
      const double lambda = (normal_pdf(t.alpha) - normal_pdf(t.beta)) / t.mass;
      return clamp(d->a + d->b * lambda, d->lo, d->hi);
    }
    case MBS_DIST_DISCRETE: {
      double s = 0;
      for (int i = 0; i < d->nvalues; i++) s += d->values[i];
      return s / d->nvalues;
    }
    case MBS_DIST_CONSTANT:
      return d->a;
    default:
      return NAN;
  }
}

double mbs_distribution_variance(const mbs_distribution* d) {
  switch (d->type) {
    case MBS_DIST_UNIFORM:
      return (d->b - d->a) * (d->b - d->a) / 12;
    case MBS_DIST_NORMAL:
      return d->b * d->b;
    case MBS_DIST_LOGNORMAL:
      // (e^(s^2) - 1) e^(2 m + s^2)
      return expm1(d->b * d->b) * exp(2 * d->a + d->b * d->b);
    case MBS_DIST_TRUNCATED_NORMAL: {
      // s^2 [1 + (alpha phi(alpha) - beta phi(beta)) / Z - ((phi(alpha) - phi(beta)) / Z)^2]
      const trunc_normal t = trunc_normal_make(d);
      const double lambda = (normal_pdf(t.alpha) - normal_pdf(t.beta)) / t.mass;
      const double v = 1 + (x_pdf(t.alpha) - x_pdf(t.beta)) / t.mass - lambda * lambda;
      return d->b * d->b * (v > 0 ? v : 0);
    }
    case MBS_DIST_DISCRETE: {
      const double m = mbs_distribution_mean(d);
      double s = 0;
      for (int i = 0; i < d->nvalues; i++) s += (d->values[i] - m) * (d->values[i] - m);
      return s / d->nvalues;
    }
    case MBS_DIST_CONSTANT:
      return 0;
    default:
      return NAN;
  }
}

//---------------------------------- Latin hypercube ------------------------------------------

// the largest count of the LHS and Sobol' designs: a point keeps 50 - log2(count) >= 10 bits
// of its position inside its stratum (LHS); Sobol' points use 52-bit direction numbers
#define MBS_DESIGN_MAX_COUNT (1L << 40)

// bits b with 2^b >= n (n >= 1)
static int ceil_log2(uint64_t n) {
  int b = 0;
  while (b < 64 && (UINT64_C(1) << b) < n) b++;
  return b;
}

// 64-bit finalizer (Stafford's mix 13, as in splitmix64)
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

#define LHS_ROUNDS 4

// The permutation of dimension j: a keyed Feistel network on b-bit words (the high half of
// hb = b / 2 bits and the low half of lb = b - hb bits take turns: x_high ^= F(x_low), then
// x_low ^= F(x_high); each step is its own inverse, so any round function gives a bijection of
// {0 .. 2^b - 1}), walked along its cycle until it lands below count (a bijection of
// {0 .. count - 1}: Black and Rogaway's cycle walking).
typedef struct lhs_perm {
  int hb, lb;
  uint64_t key[2 * LHS_ROUNDS];
} lhs_perm;

static lhs_perm lhs_perm_make(uint64_t seed, long count, int j) {
  lhs_perm p;
  const int b = ceil_log2((uint64_t)count);
  p.hb = b / 2;
  p.lb = b - p.hb;
  for (int h = 0; h < 2; h++) {
    const philox4x64_ctr_t k = philox((uint64_t)j, (uint64_t)h, 0, 0, seed, KEY_LHS_PERMUTATION);
    for (int i = 0; i < 4; i++) p.key[4 * h + i] = k.v[i];
  }
  return p;
}

// the top `bits` bits of a keyed hash (0 when bits is 0)
static uint64_t feistel_f(uint64_t key, uint64_t x, int bits) {
  return bits ? mix64(x + key) >> (64 - bits) : 0;
}

static uint64_t lhs_perm_eval(const lhs_perm* p, uint64_t count, uint64_t x) {
  const uint64_t low_mask = (UINT64_C(1) << p->lb) - 1;
  do {
    uint64_t hi = x >> p->lb, lo = x & low_mask;
    for (int r = 0; r < LHS_ROUNDS; r++) {
      hi ^= feistel_f(p->key[2 * r], lo, p->hb);
      lo ^= feistel_f(p->key[2 * r + 1], hi, p->lb);
    }
    x = (hi << p->lb) | lo;
  } while (x >= count);
  return x;
}

// u = (pi(index) + w) / count with w from the uniform of stream 1000 + j, kept on a grid of
// 2^-(50 - b) (centered), so that pi + w is exact and floor(u count) == pi(index) in floating
// point too: every point lies strictly inside its stratum
static double lhs_coordinate(uint64_t seed, long count, long index, int j) {
  const lhs_perm p = lhs_perm_make(seed, count, j);
  const uint64_t stratum = lhs_perm_eval(&p, (uint64_t)count, (uint64_t)index);
  mbs_rng r = mbs_rng_make(seed, (uint64_t)index, 1000 + (uint64_t)j);
  const int gbits = 50 - (p.hb + p.lb);
  const double w = ((double)(mbs_rng_bits(&r) >> (64 - gbits)) + 0.5) * ldexp(1.0, -gbits);
  return ((double)stratum + w) / (double)count;
}

//---------------------------------- Sobol' ---------------------------------------------------

#define SOBOL_BITS 52

// Joe and Kuo's new-joe-kuo-6.21201, dimensions 2..64: degree s of the primitive polynomial,
// its inner coefficients a (bit s-1-k of a is the coefficient of x^(s-k), k = 1..s-1), and the
// initial direction numbers m_1..m_s
typedef struct sobol_poly {
  unsigned char s;
  unsigned char a;
  unsigned short m[9];
} sobol_poly;

static const sobol_poly joe_kuo[MBS_SOBOL_MAX_DIM - 1] = {
    {1, 0, {1}},  // 2
    {2, 1, {1, 3}},  // 3
    {3, 1, {1, 3, 1}},  // 4
    {3, 2, {1, 1, 1}},  // 5
    {4, 1, {1, 1, 3, 3}},  // 6
    {4, 4, {1, 3, 5, 13}},  // 7
    {5, 2, {1, 1, 5, 5, 17}},  // 8
    {5, 4, {1, 1, 5, 5, 5}},  // 9
    {5, 7, {1, 1, 7, 11, 19}},  // 10
    {5, 11, {1, 1, 5, 1, 1}},  // 11
    {5, 13, {1, 1, 1, 3, 11}},  // 12
    {5, 14, {1, 3, 5, 5, 31}},  // 13
    {6, 1, {1, 3, 3, 9, 7, 49}},  // 14
    {6, 13, {1, 1, 1, 15, 21, 21}},  // 15
    {6, 16, {1, 3, 1, 13, 27, 49}},  // 16
    {6, 19, {1, 1, 1, 15, 7, 5}},  // 17
    {6, 22, {1, 3, 1, 15, 13, 25}},  // 18
    {6, 25, {1, 1, 5, 5, 19, 61}},  // 19
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},  // 20
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},  // 21
    {7, 7, {1, 1, 3, 13, 7, 35, 63}},  // 22
    {7, 8, {1, 3, 5, 9, 1, 25, 53}},  // 23
    {7, 14, {1, 3, 1, 13, 9, 35, 107}},  // 24
    {7, 19, {1, 3, 1, 5, 27, 61, 31}},  // 25
    {7, 21, {1, 1, 5, 11, 19, 41, 61}},  // 26
    {7, 28, {1, 3, 5, 3, 3, 13, 69}},  // 27
    {7, 31, {1, 1, 7, 13, 1, 19, 1}},  // 28
    {7, 32, {1, 3, 7, 5, 13, 19, 59}},  // 29
    {7, 37, {1, 1, 3, 9, 25, 29, 41}},  // 30
    {7, 41, {1, 3, 5, 13, 23, 1, 55}},  // 31
    {7, 42, {1, 3, 7, 3, 13, 59, 17}},  // 32
    {7, 50, {1, 3, 1, 3, 5, 53, 69}},  // 33
    {7, 55, {1, 1, 5, 5, 23, 33, 13}},  // 34
    {7, 56, {1, 1, 7, 7, 1, 61, 123}},  // 35
    {7, 59, {1, 1, 7, 9, 13, 61, 49}},  // 36
    {7, 62, {1, 3, 3, 5, 3, 55, 33}},  // 37
    {8, 14, {1, 3, 1, 15, 31, 13, 49, 245}},  // 38
    {8, 21, {1, 3, 5, 15, 31, 59, 63, 97}},  // 39
    {8, 22, {1, 3, 1, 11, 11, 11, 77, 249}},  // 40
    {8, 38, {1, 3, 1, 11, 27, 43, 71, 9}},  // 41
    {8, 47, {1, 1, 7, 15, 21, 11, 81, 45}},  // 42
    {8, 49, {1, 3, 7, 3, 25, 31, 65, 79}},  // 43
    {8, 50, {1, 3, 1, 1, 19, 11, 3, 205}},  // 44
    {8, 52, {1, 1, 5, 9, 19, 21, 29, 157}},  // 45
    {8, 56, {1, 3, 7, 11, 1, 33, 89, 185}},  // 46
    {8, 67, {1, 3, 3, 3, 15, 9, 79, 71}},  // 47
    {8, 70, {1, 3, 7, 11, 15, 39, 119, 27}},  // 48
    {8, 84, {1, 1, 3, 1, 11, 31, 97, 225}},  // 49
    {8, 97, {1, 1, 1, 3, 23, 43, 57, 177}},  // 50
    {8, 103, {1, 3, 7, 7, 17, 17, 37, 71}},  // 51
    {8, 115, {1, 3, 1, 5, 27, 63, 123, 213}},  // 52
    {8, 122, {1, 1, 3, 5, 11, 43, 53, 133}},  // 53
    {9, 8, {1, 3, 5, 5, 29, 17, 47, 173, 479}},  // 54
    {9, 13, {1, 3, 3, 11, 3, 1, 109, 9, 69}},  // 55
    {9, 16, {1, 1, 1, 5, 17, 39, 23, 5, 343}},  // 56
    {9, 22, {1, 3, 1, 5, 25, 15, 31, 103, 499}},  // 57
    {9, 25, {1, 1, 1, 11, 11, 17, 63, 105, 183}},  // 58
    {9, 44, {1, 1, 5, 11, 9, 29, 97, 231, 363}},  // 59
    {9, 47, {1, 1, 5, 15, 19, 45, 41, 7, 383}},  // 60
    {9, 52, {1, 3, 7, 7, 31, 19, 83, 137, 221}},  // 61
    {9, 55, {1, 1, 1, 3, 23, 15, 111, 223, 83}},  // 62
    {9, 59, {1, 1, 5, 13, 31, 15, 55, 25, 161}},  // 63
    {9, 62, {1, 1, 3, 13, 25, 47, 39, 87, 257}},  // 64
};

// direction numbers v_1..v_nbits of dimension j (0-based) as 52-bit fractions:
// v_k = m_k 2^(52 - k), with m_k from the recurrence of the primitive polynomial for k > s
static void sobol_directions(int j, int nbits, uint64_t v[SOBOL_BITS]) {
  if (j == 0) {
    for (int k = 0; k < nbits; k++) v[k] = UINT64_C(1) << (SOBOL_BITS - 1 - k);
    return;
  }
  const sobol_poly* P = &joe_kuo[j - 1];
  const int s = P->s;
  for (int k = 0; k < nbits; k++) {
    if (k < s) {
      v[k] = (uint64_t)P->m[k] << (SOBOL_BITS - 1 - k);
    } else {
      uint64_t x = v[k - s] ^ (v[k - s] >> s);
      for (int i = 1; i < s; i++)
        if ((P->a >> (s - 1 - i)) & 1) x ^= v[k - i];
      v[k] = x;
    }
  }
}

// point n (n >= 1) of the sequence in Gray-code order (Antonov and Saleev): the XOR of the
// direction numbers at the set bits of gray(n) = n ^ (n >> 1), as Joe and Kuo's generator
// numbers its points
static void sobol_point(uint64_t seed, uint64_t n, int dim, double* u) {
  const uint64_t g = n ^ (n >> 1);
  const int nbits = ceil_log2(g + 1);
  uint64_t v[SOBOL_BITS];
  for (int j = 0; j < dim; j++) {
    sobol_directions(j, nbits, v);
    uint64_t x = 0;
    for (int k = 0; k < nbits; k++)
      if ((g >> k) & 1) x ^= v[k];
    if (seed == 0) {
      u[j] = (double)x * 0x1p-52;  // exact; never 0 as n >= 1 and the matrix is regular
    } else {
      // random digital shift: XOR with a 52-bit word of the seed, centered in the 2^-52 cell
      const philox4x64_ctr_t w = philox((uint64_t)j, 0, 0, 0, seed, KEY_SOBOL_SHIFT);
      x ^= w.v[0] >> (64 - SOBOL_BITS);
      u[j] = ((double)x + 0.5) * 0x1p-52;
    }
  }
}

//---------------------------------- designs --------------------------------------------------

// what is wrong with a design request, if anything
typedef enum design_problem {
  DESIGN_OK = 0,
  DESIGN_BAD_TYPE,
  DESIGN_BAD_COUNT,
  DESIGN_BAD_DIM,
  DESIGN_COUNT_TOO_LARGE,
  DESIGN_SOBOL_DIM
} design_problem;

static design_problem design_problem_of(mbs_design_type type, long count, int dim) {
  if ((int)type < 0 || type >= MBS_DESIGN_COUNT) return DESIGN_BAD_TYPE;
  if (count < 1) return DESIGN_BAD_COUNT;
  if (dim < 0) return DESIGN_BAD_DIM;
  if (type != MBS_DESIGN_RANDOM && count > MBS_DESIGN_MAX_COUNT) return DESIGN_COUNT_TOO_LARGE;
  if (type == MBS_DESIGN_SOBOL && dim > MBS_SOBOL_MAX_DIM) return DESIGN_SOBOL_DIM;
  return DESIGN_OK;
}

int mbs_design_check(mbs_design_type type, long count, int dim, mbs_error* err) {
  const design_problem problem = design_problem_of(type, count, dim);
  if (problem == DESIGN_OK) return MBS_OK;
  char component[64];
  snprintf(component, sizeof(component), "design '%s'", mbs_design_name(type));
  switch (problem) {
    case DESIGN_BAD_TYPE:
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, "design", "design: unknown design type %d",
                      (int)type);
    case DESIGN_BAD_COUNT:
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, component,
                      "%s: sample count %ld must be at least 1", component, count);
    case DESIGN_BAD_DIM:
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, component, "%s: dimension %d is negative",
                      component, dim);
    case DESIGN_COUNT_TOO_LARGE:
      return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                      "%s: sample count %ld exceeds the largest supported, %ld", component,
                      count, (long)MBS_DESIGN_MAX_COUNT);
    default:
      return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                      "%s: %d dimensions exceed the %d that Sobol' direction numbers are "
                      "tabulated for",
                      component, dim, MBS_SOBOL_MAX_DIM);
  }
}

void mbs_design_point(mbs_design_type type, uint64_t seed, long count, long index, int dim,
                      double* u) {
  if (dim <= 0) return;
  if (design_problem_of(type, count, dim) != DESIGN_OK || index < 0 || index >= count) {
    for (int j = 0; j < dim; j++) u[j] = NAN;
    return;
  }
  switch (type) {
    case MBS_DESIGN_RANDOM:
      for (int j = 0; j < dim; j++) {
        mbs_rng r = mbs_rng_make(seed, (uint64_t)index, (uint64_t)j);
        u[j] = mbs_rng_uniform(&r);
      }
      return;
    case MBS_DESIGN_LHS:
      for (int j = 0; j < dim; j++) u[j] = lhs_coordinate(seed, count, index, j);
      return;
    case MBS_DESIGN_SOBOL:
      // unscrambled, the origin (point 0) is not inside (0, 1): skip it; scrambled, the shift
      // moves it inside, and points 0..2^k - 1 keep every stratum filled exactly once
      sobol_point(seed, (uint64_t)index + (seed == 0), dim, u);
      return;
    default:
      for (int j = 0; j < dim; j++) u[j] = NAN;
      return;
  }
}

long mbs_grid_count(const int* levels, int dim) {
  long n = 1;
  for (int j = 0; j < dim; j++) {
    if (levels[j] < 1) return -1;
    if (n > MBS_DESIGN_MAX_COUNT / levels[j]) return -1;
    n *= levels[j];
  }
  return n;
}

void mbs_grid_point(const int* levels, int dim, long index, double* u) {
  const long n = mbs_grid_count(levels, dim);
  if (n < 0 || index < 0 || index >= n) {
    for (int j = 0; j < dim; j++) u[j] = NAN;
    return;
  }
  for (int j = dim - 1; j >= 0; j--) {
    const long k = index % levels[j];
    index /= levels[j];
    u[j] = (k + 0.5) / levels[j];
  }
}

//---------------------------------- names ----------------------------------------------------

static const char* const design_names[MBS_DESIGN_COUNT] = {"random", "lhs", "sobol", "grid"};
static const char* const dist_names[MBS_DIST_COUNT] = {
    "uniform", "normal", "lognormal", "truncated_normal", "discrete", "constant"};

static int find_name(const char* const* names, int n, const char* name) {
  if (!name) return -1;
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

int mbs_design_from_name(const char* name) {
  return find_name(design_names, MBS_DESIGN_COUNT, name);
}
const char* mbs_design_name(mbs_design_type t) {
  return (int)t >= 0 && t < MBS_DESIGN_COUNT ? design_names[t] : "unknown";
}
int mbs_dist_from_name(const char* name) { return find_name(dist_names, MBS_DIST_COUNT, name); }
const char* mbs_dist_name(mbs_dist_type t) {
  return (int)t >= 0 && t < MBS_DIST_COUNT ? dist_names[t] : "unknown";
}
