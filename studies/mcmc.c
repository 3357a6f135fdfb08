// Ensemble MCMC: emcee's affine-invariant stretch move as an ask/tell state machine, and its
// convergence diagnostics (include/mbs/mcmc.h).
//
// Sources: Goodman and Weare, Comm. App. Math. Comp. Sci. 5, 65-80 (2010), the stretch move and
// its acceptance probability z^(n-1) p(y)/p(x_k); Foreman-Mackey et al., PASP 125, 306-312
// (2013), the parallel split into two half-ensembles and emcee's conventions (stretch scale 2,
// acceptance fraction, the autocorrelation time with Sokal's automatic window, c = 5, trusted
// beyond 50 tau, and the linear-independence test of the initial walkers); Sokal, "Monte Carlo
// methods in statistical mechanics: foundations and new algorithms" (1996 lecture notes), the
// window; Gelman et al., Bayesian Data Analysis, 3rd ed., section 11.4, split-R-hat.
#include "mbs/mcmc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "mbs/sampler.h"

#define COMPONENT "mcmc"

struct mbs_mcmc {
  mbs_mcmc_options opt;
  int half;            // W/2
  long batch;          // current batch: 0 the initial walkers, 1 + h half-step h
  long nbatch;         // 1 + 2 T: the batch index once all steps are done
  double* x;           // W x n walkers now
  double* lp;          // W their log-probabilities (NaN before the initial tell)
  double* prop;        // W/2 x n proposals of the current half-step
  double* logz;        // W/2: (n - 1) log z of each proposal
  double* logu;        // W/2: log of the acceptance uniform
  long* accepted;      // W accepted proposals per walker
  double* chain;       // T x W x n
  double* chain_lp;    // T x W
};

//---------------------------------- the sampler ----------------------------------------------

// the initial walkers must span the n dimensions: emcee's walkers_independent (centre the
// ensemble, scale each column to its largest magnitude, then to unit norm, and ask for a
// condition number of at most 1e8)
static int check_independent(const double* x, int W, int n, mbs_error* err) {
  double* c = malloc(sizeof(double) * ((size_t)W * n + (size_t)n + (size_t)n));
  if (!c) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, COMPONENT, "mcmc: out of memory");
  double* sv = c + (size_t)W * n;
  double* superb = sv + n;
  int rc = MBS_OK;
  for (int i = 0; i < n && rc == MBS_OK; i++) {
    double mean = 0;
    for (int k = 0; k < W; k++) mean += x[(size_t)k * n + i];
    mean /= W;
    double big = 0;
    for (int k = 0; k < W; k++) {
      const double v = x[(size_t)k * n + i] - mean;
      c[(size_t)k * n + i] = v;
      if (fabs(v) > big) big = fabs(v);
    }
    if (!(big > 0)) {
      rc = MBS_FAIL(err, MBS_ERR_PARAMETER, COMPONENT,
                    "mcmc: parameter %d has the same initial value %g in every walker; the "
                    "stretch move can never change it, so start the walkers spread around it",
                    i, x[i]);
      break;
    }
    double norm = 0;
    for (int k = 0; k < W; k++) {
      c[(size_t)k * n + i] /= big;
      norm += c[(size_t)k * n + i] * c[(size_t)k * n + i];
    }
    norm = sqrt(norm);
    for (int k = 0; k < W; k++) c[(size_t)k * n + i] /= norm;
  }
  if (rc == MBS_OK) {
    const int info = (int)LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', W, n, c, n, sv, NULL, 1,
                                         NULL, 1, superb);
    const int m = W < n ? W : n;
    const double cond = info == 0 ? sv[0] / sv[m - 1] : INFINITY;
    if (info != 0 || W <= n || !(cond <= 1e8))
      rc = MBS_FAIL(err, MBS_ERR_PARAMETER, COMPONENT,
                    "mcmc: the %d initial walkers do not span the %d parameters (condition "
                    "number %g of the centred ensemble, above emcee's 1e8); the stretch move "
                    "stays in their affine hull, so start them linearly independent",
                    W, n, W <= n ? INFINITY : cond);
  }
  free(c);
  return rc;
}

// draw the random numbers of half-step h = batch - 1 and form its proposals
static void begin_half_step(mbs_mcmc* s) {
  const int n = s->opt.dim, H = s->half;
  const long h = s->batch - 1;
  const int first = (int)(h % 2) * H, other = H - first;
  const double a = s->opt.scale;
  for (int i = 0; i < H; i++) {
    const int k = first + i;
    mbs_rng r = mbs_rng_make(s->opt.seed, (uint64_t)h, MBS_MCMC_STREAM | (uint64_t)k);
    const double w = (a - 1) * mbs_rng_uniform(&r) + 1;
    const double z = w * w / a;
    long pick = (long)floor(mbs_rng_uniform(&r) * H);
    if (pick > H - 1) pick = H - 1;
    const int j = other + (int)pick;
    s->logz[i] = (n - 1) * log(z);
    s->logu[i] = log(mbs_rng_uniform(&r));
    const double* xk = s->x + (size_t)k * n;
    const double* xj = s->x + (size_t)j * n;
    double* y = s->prop + (size_t)i * n;
    for (int d = 0; d < n; d++) y[d] = xj[d] + z * (xk[d] - xj[d]);
  }
}

int mbs_mcmc_create(mbs_mcmc** out, const mbs_mcmc_options* opt, const double* initial,
                    mbs_error* err) {
  if (!out) return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT, "mcmc: no output pointer given");
  *out = NULL;
  if (!opt || !initial)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT, "mcmc: options or initial walkers missing");
  mbs_mcmc_options o = *opt;
  if (o.scale == 0) o.scale = MBS_MCMC_DEFAULT_SCALE;
  if (o.dim < 1)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: %d parameters given; at least 1 is needed", o.dim);
  if (o.walkers < 2 || o.walkers % 2 != 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: %d walkers given; the ensemble is split into two halves, so it needs "
                    "an even number of at least 2 (2 x %d = %d or more recommended)",
                    o.walkers, o.dim, 2 * o.dim);
  if (o.steps < 1)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: %ld steps given; at least 1 is needed", o.steps);
  if (!(o.scale > 1) || !isfinite(o.scale))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: stretch scale %g must be finite and above 1 (emcee's default is 2)",
                    o.scale);
  const size_t W = (size_t)o.walkers, n = (size_t)o.dim, T = (size_t)o.steps;
  if (T > ((size_t)1 << 40) / (W * n))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: a chain of %ld steps x %d walkers x %d parameters is too large",
                    o.steps, o.walkers, o.dim);
  for (size_t k = 0; k < W; k++)
    for (size_t i = 0; i < n; i++)
      if (!isfinite(initial[k * n + i]))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, COMPONENT,
                        "mcmc: initial walker %zu has non-finite parameter %zu (%g)", k, i,
                        initial[k * n + i]);
  int rc = check_independent(initial, o.walkers, o.dim, err);
  if (rc != MBS_OK) return rc;

  mbs_mcmc* s = calloc(1, sizeof(*s));
  if (!s) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, COMPONENT, "mcmc: out of memory");
  s->opt = o;
  s->half = o.walkers / 2;
  s->batch = 0;
  s->nbatch = 1 + 2 * o.steps;
  s->x = malloc(sizeof(double) * W * n);
  s->lp = malloc(sizeof(double) * W);
  s->prop = malloc(sizeof(double) * (W / 2) * n);
  s->logz = malloc(sizeof(double) * (W / 2));
  s->logu = malloc(sizeof(double) * (W / 2));
  s->accepted = calloc(W, sizeof(long));
  s->chain = malloc(sizeof(double) * T * W * n);
  s->chain_lp = malloc(sizeof(double) * T * W);
  if (!s->x || !s->lp || !s->prop || !s->logz || !s->logu || !s->accepted || !s->chain ||
      !s->chain_lp) {
    mbs_mcmc_free(s);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, COMPONENT,
                    "mcmc: out of memory for a chain of %ld steps x %d walkers x %d parameters",
                    o.steps, o.walkers, o.dim);
  }
  memcpy(s->x, initial, sizeof(double) * W * n);
  for (size_t k = 0; k < W; k++) s->lp[k] = NAN;
  *out = s;
  return MBS_OK;
}

void mbs_mcmc_free(mbs_mcmc* s) {
  if (!s) return;
  free(s->x);
  free(s->lp);
  free(s->prop);
  free(s->logz);
  free(s->logu);
  free(s->accepted);
  free(s->chain);
  free(s->chain_lp);
  free(s);
}

void mbs_mcmc_ask(const mbs_mcmc* s, mbs_mcmc_batch* b) {
  b->index = s->batch;
  if (s->batch == 0) {
    b->step = 0;
    b->count = s->opt.walkers;
    b->first_walker = 0;
    b->points = s->x;
  } else if (s->batch < s->nbatch) {
    b->step = (s->batch - 1) / 2;
    b->count = s->half;
    b->first_walker = (int)((s->batch - 1) % 2) * s->half;
    b->points = s->prop;
  } else {
    b->step = s->opt.steps;
    b->count = 0;
    b->first_walker = 0;
    b->points = NULL;
  }
}

int mbs_mcmc_tell(mbs_mcmc* s, const double* logp, int count, mbs_error* err) {
  if (s->batch >= s->nbatch)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: all %ld steps are done; there is no batch to tell", s->opt.steps);
  const int W = s->opt.walkers, n = s->opt.dim, H = s->half;
  const int expect = s->batch == 0 ? W : H;
  if (count != expect || (count > 0 && !logp))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: batch %ld has %d points but %d log-probabilities were told",
                    s->batch, expect, logp ? count : 0);
  if (s->batch == 0) {
    for (int k = 0; k < W; k++)
      if (!isfinite(logp[k]))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, COMPONENT,
                        "mcmc: walker %d starts at log-probability %g; every walker must start "
                        "where the posterior is positive and finite (inside the prior's "
                        "support, where the model runs)",
                        k, logp[k]);
    memcpy(s->lp, logp, sizeof(double) * W);
    s->batch = 1;
    begin_half_step(s);
    return MBS_OK;
  }
  const long h = s->batch - 1;
  const int first = (int)(h % 2) * H;
  for (int i = 0; i < H; i++)
    if (isinf(logp[i]) && logp[i] > 0)
      return MBS_FAIL(err, MBS_ERR_PARAMETER, COMPONENT,
                      "mcmc: the proposal for walker %d (step %ld) has log-probability +inf",
                      first + i, h / 2);
  for (int i = 0; i < H; i++) {
    const int k = first + i;
    if (isnan(logp[i])) continue;  // rejected; -inf is rejected by the comparison below
    if (s->logu[i] < s->logz[i] + logp[i] - s->lp[k]) {
      memcpy(s->x + (size_t)k * n, s->prop + (size_t)i * n, sizeof(double) * n);
      s->lp[k] = logp[i];
      s->accepted[k]++;
    }
  }
  if (h % 2 == 1) {
    const size_t t = (size_t)(h / 2);
    memcpy(s->chain + t * W * n, s->x, sizeof(double) * W * n);
    memcpy(s->chain_lp + t * W, s->lp, sizeof(double) * W);
  }
  s->batch++;
  if (s->batch < s->nbatch) begin_half_step(s);
  return MBS_OK;
}

const mbs_mcmc_options* mbs_mcmc_get_options(const mbs_mcmc* s) { return &s->opt; }

long mbs_mcmc_steps_done(const mbs_mcmc* s) { return s->batch < 1 ? 0 : (s->batch - 1) / 2; }

const double* mbs_mcmc_chain(const mbs_mcmc* s) { return s->chain; }

const double* mbs_mcmc_chain_logp(const mbs_mcmc* s) { return s->chain_lp; }

const double* mbs_mcmc_walkers(const mbs_mcmc* s) { return s->x; }

const double* mbs_mcmc_walker_logp(const mbs_mcmc* s) { return s->lp; }

void mbs_mcmc_acceptance(const mbs_mcmc* s, double* fraction) {
  const long t = mbs_mcmc_steps_done(s);
  for (int k = 0; k < s->opt.walkers; k++)
    fraction[k] = t > 0 ? (double)s->accepted[k] / (double)t : NAN;
}

//---------------------------------- diagnostics ----------------------------------------------

static int check_chain(const double* chain, long steps, int walkers, int dim, long burn,
                       long need, mbs_error* err) {
  if (!chain || walkers < 1 || dim < 1)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: diagnostics need a chain of at least 1 walker and 1 parameter");
  if (burn < 0 || steps - burn < need)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: %ld steps with a burn-in of %ld keep %ld; these diagnostics need "
                    "at least %ld",
                    steps, burn, steps - burn, need);
  return MBS_OK;
}

// in-place radix-2 FFT of length nfft (a power of two) with the table cs[j] = cos(2 pi j/nfft),
// sn[j] = sin(2 pi j/nfft), j < nfft/2; sign -1 forward, +1 inverse (unscaled)
static void fft(double* re, double* im, long nfft, const double* cs, const double* sn,
                int sign) {
  for (long i = 1, j = 0; i < nfft; i++) {
    long bit = nfft >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      double t = re[i];
      re[i] = re[j];
      re[j] = t;
      t = im[i];
      im[i] = im[j];
      im[j] = t;
    }
  }
  for (long len = 2; len <= nfft; len <<= 1) {
    const long half = len >> 1, stride = nfft / len;
    for (long i = 0; i < nfft; i += len)
      for (long j = 0; j < half; j++) {
        const double wr = cs[j * stride], wi = sign * sn[j * stride];
        const long p = i + j, q = p + half;
        const double vr = re[q] * wr - im[q] * wi, vi = re[q] * wi + im[q] * wr;
        re[q] = re[p] - vr;
        im[q] = im[p] - vi;
        re[p] += vr;
        im[p] += vi;
      }
  }
}

int mbs_mcmc_autocorr_time(double* tau, int* short_chain, const double* chain, long steps,
                           int walkers, int dim, long burn, mbs_error* err) {
  int rc = check_chain(chain, steps, walkers, dim, burn, 2, err);
  if (rc != MBS_OK) return rc;
  const long N = steps - burn;
  long nfft = 1;
  while (nfft < 2 * N) nfft <<= 1;
  // re, im (nfft each), the twiddle table (nfft / 2 each), the averaged function f (N)
  double* buf = malloc(sizeof(double) * (size_t)(3 * nfft + N));
  if (!buf)
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, COMPONENT,
                    "mcmc: out of memory for the autocorrelation of %ld steps", N);
  double *re = buf, *im = re + nfft, *cs = im + nfft, *sn = cs + nfft / 2, *f = sn + nfft / 2;
  for (long j = 0; j < nfft / 2; j++) {
    cs[j] = cos(2 * M_PI * (double)j / (double)nfft);
    sn[j] = sin(2 * M_PI * (double)j / (double)nfft);
  }
  const double* x0 = chain + (size_t)burn * walkers * dim;
  const size_t row = (size_t)walkers * dim;
  for (int d = 0; d < dim; d++) {
    for (long t = 0; t < N; t++) f[t] = 0;
    int used = 0;
    // two walkers per transform: the first in the real part, the second in the imaginary
    for (int k = 0; k < walkers; k += 2) {
      const int pair = k + 1 < walkers;
      double mean[2] = {0, 0}, ss[2] = {0, 0};
      for (int q = 0; q <= pair; q++) {
        for (long t = 0; t < N; t++) mean[q] += x0[t * row + (size_t)(k + q) * dim + d];
        mean[q] /= (double)N;
        for (long t = 0; t < N; t++) {
          const double v = x0[t * row + (size_t)(k + q) * dim + d] - mean[q];
          ss[q] += v * v;
        }
      }
      for (long t = 0; t < N; t++) {
        re[t] = x0[t * row + (size_t)k * dim + d] - mean[0];
        im[t] = pair ? x0[t * row + (size_t)(k + 1) * dim + d] - mean[1] : 0;
      }
      for (long t = N; t < nfft; t++) re[t] = im[t] = 0;
      fft(re, im, nfft, cs, sn, -1);
      // the two spectra from Z: X_m = (Z_m + conj Z_-m) / 2, Y_m = (Z_m - conj Z_-m) / 2i;
      // |X_m|^2 and |Y_m|^2 become the real and imaginary parts (both even sequences, so the
      // inverse transform keeps them apart). Pairs (m, nfft - m) are done together.
      for (long m = 0; m <= nfft / 2; m++) {
        const long mm = (nfft - m) & (nfft - 1);
        const double ar = re[m], ai = im[m], br = re[mm], bi = im[mm];
        const double px = 0.25 * ((ar + br) * (ar + br) + (ai - bi) * (ai - bi));
        const double py = 0.25 * ((ar - br) * (ar - br) + (ai + bi) * (ai + bi));
        re[m] = re[mm] = px;
        im[m] = im[mm] = py;
      }
      fft(re, im, nfft, cs, sn, +1);
      for (int q = 0; q <= pair; q++) {
        const double* acf = q == 0 ? re : im;
        if (!(ss[q] > 0) || !(acf[0] > 0)) continue;  // a constant series: left out
        for (long t = 0; t < N; t++) f[t] += acf[t] / acf[0];
        used++;
      }
    }
    double est = NAN;
    if (used > 0) {
      // tau(M) = 2 sum_{t<=M} f(t) / used - 1; the first M with M >= c tau(M)
      double sum = 0;
      for (long M = 0; M < N; M++) {
        sum += f[M] / used;
        est = 2 * sum - 1;
        if ((double)M >= MBS_MCMC_WINDOW_C * est) break;
      }
    }
    tau[d] = est;
    if (short_chain) short_chain[d] = !(MBS_MCMC_TAU_TOLERANCE * est <= (double)N);
  }
  free(buf);
  return MBS_OK;
}

void mbs_mcmc_ess(double* ess, const double* tau, long steps, int walkers, int dim, long burn) {
  for (int d = 0; d < dim; d++) ess[d] = (double)walkers * (double)(steps - burn) / tau[d];
}

int mbs_mcmc_split_rhat(double* rhat, const double* chain, long steps, int walkers, int dim,
                        long burn, mbs_error* err) {
  int rc = check_chain(chain, steps, walkers, dim, burn, 4, err);
  if (rc != MBS_OK) return rc;
  const long N = steps - burn, L = N / 2;
  const int m = 2 * walkers;
  const size_t row = (size_t)walkers * dim;
  const double* x0 = chain + (size_t)burn * row;
  for (int d = 0; d < dim; d++) {
    double sum_mean = 0, sum_mean2 = 0, sum_var = 0;
    for (int k = 0; k < walkers; k++)
      for (int part = 0; part < 2; part++) {
        const long start = part == 0 ? 0 : N - L;  // the middle draw is left out for odd N
        double mean = 0;
        for (long t = start; t < start + L; t++) mean += x0[t * row + (size_t)k * dim + d];
        mean /= (double)L;
        double var = 0;
        for (long t = start; t < start + L; t++) {
          const double v = x0[t * row + (size_t)k * dim + d] - mean;
          var += v * v;
        }
        var /= (double)(L - 1);
        sum_mean += mean;
        sum_mean2 += mean * mean;
        sum_var += var;
      }
    const double grand = sum_mean / m;
    // between-chain B = L/(m-1) sum (mean_j - grand)^2, within-chain Wv = mean of s_j^2
    double B = (double)L / (m - 1) * (sum_mean2 - m * grand * grand);
    if (B < 0) B = 0;
    const double Wv = sum_var / m;
    const double var_plus = (double)(L - 1) / (double)L * Wv + B / (double)L;
    rhat[d] = Wv > 0 ? sqrt(var_plus / Wv) : NAN;
  }
  return MBS_OK;
}

int mbs_mcmc_mean_cov(double* mean, double* cov, const double* chain, long steps, int walkers,
                      int dim, long burn, mbs_error* err) {
  int rc = check_chain(chain, steps, walkers, dim, burn, 1, err);
  if (rc != MBS_OK) return rc;
  const size_t count = (size_t)(steps - burn) * walkers;
  if (count < 2)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, COMPONENT,
                    "mcmc: a covariance needs at least 2 kept samples, not %zu", count);
  const double* x0 = chain + (size_t)burn * walkers * dim;
  for (int i = 0; i < dim; i++) mean[i] = 0;
  for (size_t s = 0; s < count; s++)
    for (int i = 0; i < dim; i++) mean[i] += x0[s * dim + i];
  for (int i = 0; i < dim; i++) mean[i] /= (double)count;
  if (!cov) return MBS_OK;
  for (int i = 0; i < dim * dim; i++) cov[i] = 0;
  for (size_t s = 0; s < count; s++)
    for (int i = 0; i < dim; i++) {
      const double vi = x0[s * dim + i] - mean[i];
      for (int j = 0; j <= i; j++) cov[i * dim + j] += vi * (x0[s * dim + j] - mean[j]);
    }
  for (int i = 0; i < dim; i++)
    for (int j = 0; j <= i; j++) {
      cov[i * dim + j] /= (double)(count - 1);
      cov[j * dim + i] = cov[i * dim + j];
    }
  return MBS_OK;
}
