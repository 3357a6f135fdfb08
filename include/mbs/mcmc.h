// Ensemble Markov chain Monte Carlo for Bayesian calibration: the affine-invariant
// stretch-move sampler of Goodman and Weare ("Ensemble samplers with affine invariance", Comm.
// App. Math. Comp. Sci. 5, 65-80, 2010) in the parallel form of emcee (Foreman-Mackey, Hogg,
// Lang, Goodman, "emcee: the MCMC hammer", PASP 125, 306-312, 2013), and the convergence
// diagnostics its users know: emcee's integrated autocorrelation time with Sokal's automatic
// window, the effective sample size, and split-R-hat (Gelman et al., Bayesian Data Analysis,
// 3rd ed., section 11.4).
//
// The sampler is an ask/tell state machine: it never calls the log-posterior itself. Each ask
// hands out a batch of points (the W initial walkers first, then the W/2 proposals of each
// half-step), each tell takes their log-probabilities. Every batch is a pure function of
// (options, initial walkers, the tells so far), so a driver stopped at any moment resumes by
// creating the sampler again and replaying the recorded tells: it continues bit-identically.
//
// One step is two half-steps (emcee's red-blue scheme). The ensemble is split into the halves
// S0 = walkers 0..W/2-1 and S1 = walkers W/2..W-1; half-step h = 2 t + b of step t moves S_b
// using the current positions of the other half. Each walker k of S_b draws a partner j
// uniformly from the other half and z from g(z) ~ 1/sqrt(z) on [1/a, a], proposes
//   y = x_j + z (x_k - x_j),
// and accepts it with probability min(1, z^(n-1) exp(logp(y) - logp(x_k))) (log-uniform
// comparison; a NaN log-probability is a rejection; -inf is allowed and is a rejection).
//
// Random numbers (include/mbs/sampler.h): walker k's numbers of half-step h come from
//   mbs_rng_make(seed, h, MBS_MCMC_STREAM | k),
// draw 0 for z = ((a - 1) u + 1)^2 / a, draw 1 for the partner j = other half's first walker
// + floor(u W/2), draw 2 for the acceptance test log(u) < (n - 1) log z + logp(y) - logp(x_k).
// The stream's high word ("MCMC") keeps these apart from the small streams of sample designs.
//
// Skipping evaluations: a driver that knows a proposal lies outside the prior's support may
// tell -inf for it without simulating it. The proposal is then rejected whatever its random
// numbers, exactly as if it had been evaluated; a replay must tell the same -inf (as it will,
// the decision being a function of the point).
#ifndef MBS_MCMC_H_
#define MBS_MCMC_H_

#include <stdint.h>

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// high 32 bits of the random streams of the sampler ("MCMC"); the low bits are the walker
#define MBS_MCMC_STREAM (UINT64_C(0x4D434D43) << 32)
// emcee's defaults: stretch scale a, Sokal's window constant c, and the number of
// autocorrelation times a chain needs before its estimate is trusted
#define MBS_MCMC_DEFAULT_SCALE 2.0
#define MBS_MCMC_WINDOW_C 5.0
#define MBS_MCMC_TAU_TOLERANCE 50.0

typedef struct mbs_mcmc_options {
  int walkers;     // W: even and >= 2; 2 n or more recommended (emcee refuses fewer)
  int dim;         // n >= 1 parameters
  long steps;      // T >= 1: the full steps to run, the chain's capacity
  double scale;    // stretch scale a > 1; 0 for emcee's default 2
  uint64_t seed;
} mbs_mcmc_options;

// The batch to evaluate now.
typedef struct mbs_mcmc_batch {
  long index;           // 0: the initial walkers; 1 + h: half-step h = 2 t + b of step t
  long step;            // t (0 for the initial batch)
  int count;            // points: W (initial), W/2 (half-step), 0 (all steps done)
  int first_walker;     // the points are walkers first_walker .. first_walker + count - 1
  const double* points; // count x n, row-major; owned by the sampler, valid until the next tell
} mbs_mcmc_batch;

typedef struct mbs_mcmc mbs_mcmc;

// A sampler for `opt` starting from the W x n walkers `initial` (copied; row-major, walker k
// at initial[k n]). MBS_ERR_ARGUMENT for bad options; MBS_ERR_PARAMETER for non-finite
// walkers or an ensemble that does not span the n dimensions (emcee's test: the centred,
// column-normalized walkers have a condition number above 1e8), which the stretch move could
// never leave. Allocates the whole chain (T x W x n). *out is NULL on failure.
int mbs_mcmc_create(mbs_mcmc** out, const mbs_mcmc_options* opt, const double* initial,
                    mbs_error* err);
// Free a sampler; NULL is fine.
void mbs_mcmc_free(mbs_mcmc* s);

// The current batch (the same until it is told; count 0 once all T steps are done).
void mbs_mcmc_ask(const mbs_mcmc* s, mbs_mcmc_batch* batch);
// The log-probabilities of the current batch's `count` points, in its order. Initial batch:
// every value must be finite (MBS_ERR_PARAMETER naming the first walker that is not, and the
// sampler stays at the initial batch). Half-steps: NaN and -inf are rejections, +inf is
// MBS_ERR_PARAMETER (nothing changes). MBS_ERR_ARGUMENT when count is not the batch's or all
// steps are done.
int mbs_mcmc_tell(mbs_mcmc* s, const double* logp, int count, mbs_error* err);

// the options as used (scale filled in)
const mbs_mcmc_options* mbs_mcmc_get_options(const mbs_mcmc* s);
// full steps done: the chain's length so far
long mbs_mcmc_steps_done(const mbs_mcmc* s);
// the chain: positions after each full step, steps_done x W x n (step t, walker k, parameter
// i at [(t W + k) n + i]), and their log-probabilities, steps_done x W
const double* mbs_mcmc_chain(const mbs_mcmc* s);
const double* mbs_mcmc_chain_logp(const mbs_mcmc* s);
// the walkers now (W x n) and their log-probabilities (W; NaN before the initial tell)
const double* mbs_mcmc_walkers(const mbs_mcmc* s);
const double* mbs_mcmc_walker_logp(const mbs_mcmc* s);
// acceptance fraction of each walker: accepted proposals / full steps done (W numbers; NaN
// before the first step), as emcee's acceptance_fraction
void mbs_mcmc_acceptance(const mbs_mcmc* s, double* fraction);

// ---------------------------------------------------------------------------------------------
// Diagnostics of a chain laid out as above (steps x walkers x dim), over its kept part: steps
// burn .. steps - 1 (thinning 1). Outputs are dim numbers, one per parameter.

// Integrated autocorrelation time, as emcee's get_autocorr_time: the normalized
// autocorrelation function of each walker's series (FFT, biased estimator), averaged over
// walkers, tau(M) = 1 + 2 sum_{t=1..M} rho(t) at Sokal's window, the smallest M with
// M >= c tau(M) (c = MBS_MCMC_WINDOW_C; the last lag when none). Walkers whose series is
// constant are left out of the average; tau is NaN when all are. short_chain (may be NULL):
// 1 where the kept chain is shorter than MBS_MCMC_TAU_TOLERANCE tau (or tau is NaN), a flag
// that the estimate is not to be trusted, not an error. Needs steps - burn >= 2.
int mbs_mcmc_autocorr_time(double* tau, int* short_chain, const double* chain, long steps,
                           int walkers, int dim, long burn, mbs_error* err);
// Effective sample size W (steps - burn) / tau of each parameter, from its tau.
void mbs_mcmc_ess(double* ess, const double* tau, long steps, int walkers, int dim, long burn);
// Split-R-hat (BDA3 section 11.4, not the rank-normalized version): each walker is a chain,
// each split into a first and a second half (the middle draw left out when the kept length is
// odd); sqrt(var+ / W) with var+ = (L - 1)/L W + B/L. The walkers of an ensemble are not
// independent chains (each move uses another walker), so this is a check that the walkers
// agree, weaker than with independent chains. NaN when the within-chain variance is 0. Needs
// steps - burn >= 4.
int mbs_mcmc_split_rhat(double* rhat, const double* chain, long steps, int walkers, int dim,
                        long burn, mbs_error* err);
// Mean (dim) and covariance (dim x dim, divisor N - 1; may be NULL) of the N = W (steps -
// burn) kept samples. Needs N >= 2.
int mbs_mcmc_mean_cov(double* mean, double* cov, const double* chain, long steps, int walkers,
                      int dim, long burn, mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_MCMC_H_
