// Optimizers for parameter fitting: CMA-ES and a bounded Levenberg-Marquardt method, both as
// ask/tell state machines.
//
// Neither optimizer calls the objective: `ask` gives the points to evaluate next as one batch
// (one CMA-ES generation; the finite-difference stencil of one LM iteration; the LM trial
// points), the caller evaluates them anywhere (ranks, threads, in any order) and `tell`s the
// values back in point order. The state is plain data (numbers and arrays, no pointers into
// caller memory) and every ask is a pure function of (options, seed, the tells so far), so a
// run stopped at any point is re-created exactly by creating the optimizer again and replaying
// the recorded tells. "Exactly" holds for the same build on the same LAPACK/BLAS kernels:
// OpenBLAS chooses its kernels by CPU type (OPENBLAS_CORETYPE pins them), and dsyev, dgels and
// dgesvd may round differently with other kernels, so a replay on another CPU type is a valid
// run that may part from the recorded one in the last bits (and then further).
//
// Sources:
//  - CMA-ES: N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772 (2016), the
//    algorithm of its appendix A with the default parameters of its Table 1 (positive weights
//    only), its stopping criteria (appendix B.3); restarts with increasing population (IPOP):
//    A. Auger, N. Hansen, "A restart CMA evolution strategy with increasing population size",
//    IEEE CEC 2005.
//  - Levenberg-Marquardt: D. W. Marquardt, J. SIAM 11, 431-441 (1963) (the damping scaled by
//    diag(JᵀJ), raised and lowered by factors); J. J. Moré, "The Levenberg-Marquardt algorithm:
//    implementation and theory", LNM 630 (1978) (the step as a linear least-squares problem
//    solved by QR); finite-difference steps: Nocedal and Wright, Numerical Optimization, 2nd
//    ed., section 8.1; covariance as SciPy's curve_fit (absolute_sigma=False / True).
#ifndef MBS_OPTIM_H_
#define MBS_OPTIM_H_

#include <stdint.h>

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

//---------------------------------- CMA-ES ---------------------------------------------------
//
// Minimizes f(x) over the box lo <= x <= hi (finite bounds). The search works in normalized
// coordinates u = (x - lo) / (hi - lo) in [0, 1]^n; sigma is in those units.
//
// Random numbers: candidate k of generation g (counted from 0 within the current run) of
// restart r draws its n standard normals z_k from mbs_rng_make(seed, g, stream) with
// stream = MBS_CMAES_STREAM_TAG * 2^40 + r * 2^32 + k, draws 0..n-1 in coordinate order (the
// tag keeps them apart from the sampler's streams, which are small numbers).
//
// Bounds: the sampled u_k = m + sigma B D z_k is reflected into [0, 1]^n (folded at the faces
// as often as needed, a 1-Lipschitz map that fixes [0, 1]^n). The reflected point is the one
// evaluated, and it is also the one used in the update of the mean, the evolution paths and C
// (y_k = (u'_k - m) / sigma), so the distribution learns from the points whose values it was
// told; since the folding never lengthens u - m, these steps are no longer than the sampled ones.
// At an optimum on a face the folded f is V-shaped across it, so the scale of that coordinate
// shrinks as the square of the others' and the condition-number stop comes when the free
// coordinates are near 1e-7 (normalized); a larger max_condition lets them converge further.
//
// Failed evaluations (NaN or +inf) rank last, ties by candidate index. A generation in which
// every evaluation failed leaves the distribution as it was (the next one draws new points).

#define MBS_CMAES_STREAM_TAG UINT64_C(0x434d41)  // "CMA"

// why a run stopped (0: it has not)
typedef enum mbs_cmaes_stop {
  MBS_CMAES_RUNNING = 0,
  MBS_CMAES_MAX_GENERATIONS,  // the run's generation budget is spent
  MBS_CMAES_TOLX,             // sigma sqrt(C_ii) and sigma |pc_i| below tolx for all i
  MBS_CMAES_TOLFUN,           // the range of the best values of the last 10 + ceil(30 n /
                              // lambda) generations and of this generation's values < tolfun
  MBS_CMAES_CONDITION,        // the condition number of C above max_condition
  MBS_CMAES_FTARGET,          // the best value is at or below f_target
  MBS_CMAES_STOP_COUNT
} mbs_cmaes_stop;

typedef struct mbs_cmaes_options {
  int n;                   // dimension, >= 1
  const double* lo;        // n lower bounds (copied at creation)
  const double* hi;        // n upper bounds, hi > lo (copied)
  const double* x0;        // n, initial mean, inside the bounds (copied)
  uint64_t seed;
  double sigma0;           // initial step size in normalized units (0.3)
  int lambda;              // first run's population; 0: 4 + floor(3 ln n)
  long max_generations;    // per run; 0: 100 + 150 (n + 3)^2 / sqrt(lambda) (Hansen's maxiter)
  double tolx;             // normalized units (1e-10)
  double tolfun;           // absolute, in units of f (1e-12)
  double max_condition;    // of C (1e14)
  double f_target;         // stop at best f <= f_target; -INFINITY: never (the default)
  int max_restarts;        // IPOP restarts allowed, each doubling lambda (0..30; default 9)
} mbs_cmaes_options;

// the log entry of the last tell (for the driver's convergence log)
typedef struct mbs_cmaes_log {
  int restart;                 // run number, 0 for the first
  long generation;             // generations told in this run (1 after the first tell)
  long evaluations;            // evaluations told over all runs
  double sigma;                // after the update, normalized units
  double best_f_generation;    // best value of this generation (NaN if all failed)
  double best_f;               // best value ever (+inf until a finite value was told)
  const double* mean;          // n, the mean after the update, original units (owned by the
                               // optimizer, valid until the next tell or restart)
} mbs_cmaes_log;

// The whole state. Matrices are n x n column-major; points are row-major (point k at k * n).
typedef struct mbs_cmaes {
  mbs_cmaes_options opt;       // the options with defaults filled in (pointers cleared)
  int n;
  double *lo, *hi, *x0;        // n each, original units
  // strategy parameters of the current run (Hansen's Table 1)
  int lambda, mu, capacity;    // population, parents, allocated population
  double* weights;             // mu, positive, summing to 1
  double mueff, cs, ds, cc, c1, cmu, chi_n;
  // the distribution (normalized units)
  double* mean;                // n
  double sigma;
  double *ps, *pc;             // n, evolution paths of sigma and of C
  double *C, *B, *D;           // C = B diag(D)^2 B^T; B's columns are the eigenvectors
  // counters
  int restart;
  long generation;             // generations told in this run
  long evaluations;            // evaluations told over all runs
  int stop;                    // an mbs_cmaes_stop
  // the current generation's candidates (made by ask, or by tell if ask was not called)
  int sampled;
  double* u;                   // lambda x n, evaluated points, normalized
  double* x;                   // lambda x n, evaluated points, original units
  // best ever
  double best_f;
  double* best_x;              // n, original units
  // best values of the recent generations, for TolFun (a ring of fhist_len)
  double* fhist;
  int fhist_len, fhist_count;
  mbs_cmaes_log log;
  double* log_mean;            // n
  // workspace
  int* order;                  // capacity
  double* work;                // dsyev workspace and vectors
  int lwork;
} mbs_cmaes;

// default options for dimension n (bounds and initial point left NULL)
void mbs_cmaes_default_options(mbs_cmaes_options* o, int n);
// check options (MBS_ERR_PARAMETER with a message naming the offending number)
int mbs_cmaes_check_options(const mbs_cmaes_options* o, mbs_error* err);
// a new optimizer at generation 0 of run 0; NULL with err filled on bad options or no memory
mbs_cmaes* mbs_cmaes_create(const mbs_cmaes_options* o, mbs_error* err);
void mbs_cmaes_free(mbs_cmaes* c);

// the current population lambda (the number of points the next ask gives)
int mbs_cmaes_population(const mbs_cmaes* c);
// the next generation's lambda points, original units, inside the bounds (x: lambda x n).
// Asking again before telling gives the same points. MBS_ERR_ARGUMENT when the run has stopped.
int mbs_cmaes_ask(mbs_cmaes* c, double* x, mbs_error* err);
// tell the values of the points of the last ask (lambda numbers, NaN/+inf for failures);
// updates the distribution, the best point, the log entry and c->stop
int mbs_cmaes_tell(mbs_cmaes* c, const double* f, mbs_error* err);
// start the next run (IPOP): lambda doubled, mean at x0, sigma0, C = I, paths and TolFun
// history cleared, a new random stream; the best point and the evaluation count are kept.
// MBS_ERR_ARGUMENT when max_restarts runs were already made.
int mbs_cmaes_restart(mbs_cmaes* c, mbs_error* err);
// the best point and value ever told (x may be NULL); +inf before any finite value
double mbs_cmaes_best(const mbs_cmaes* c, double* x);

// An upper bound on the evaluations of a whole optimization with these options (all runs:
// sum over r = 0..max_restarts of lambda 2^r times that run's generation limit); -1 on bad
// options or overflow.
long mbs_cmaes_max_evaluations(const mbs_cmaes_options* o);
// "running", "maximum generations", "tolx", "tolfun", "condition number", "f_target"
const char* mbs_cmaes_stop_text(int reason);

//---------------------------------- Levenberg-Marquardt --------------------------------------
//
// Minimizes cost(x) = 1/2 |r(x)|^2 over lo <= x <= hi (bounds may be infinite), where r has m
// components, already weighted by the caller. Matrices are row-major: J is m x n, J[i n + j] =
// d r_i / d x_j.
//
// Finite differences: parameter j gets the step s_j = h max(|x_j|, typical_j), where
// typical_j is given by the caller or, by default, 1e-3 (hi_j - lo_j) for finite bounds and 1
// otherwise. The central stencil has 2n + 1 points: x, then for each j two points x + a e_j,
// x + b e_j with (a, b) = (-s, s) when both fit in the bounds, else the one-sided (s, 2s) or
// (-s, -2s) (shortened when even that does not fit); the derivative is that of the parabola
// through the three values, second order in every case. The forward stencil has n + 1 points,
// x + s e_j (or x - s e_j at the upper bound). A parameter with lo_j == hi_j is fixed: its
// column is zero. Default h: cbrt(eps) = 6.1e-6 (central), sqrt(eps) = 1.5e-8 (forward); raise
// it for noisy residuals (e.g. simulations with a loose integrator tolerance).
//
// Step: with D = diag(JᵀJ) (floored at 1e-12 max D), the step for damping lambda solves
// (JᵀJ + lambda D) delta = -Jᵀr as the linear least-squares problem [J; sqrt(lambda D)] delta ~
// [-r; 0] by Householder QR (LAPACK dgels), never forming JᵀJ. Parameters on a bound where the
// descent direction -Jᵀr points out of the box (and fixed parameters) are held; the others are
// solved for, and x + delta is projected into the bounds.

typedef enum mbs_lm_stop {
  MBS_LM_RUNNING = 0,
  MBS_LM_FTOL,                // an accepted step reduced the cost by <= ftol * cost
  MBS_LM_XTOL,                // a step (accepted, or every trial) |dx| <= xtol (xtol + |x|)
  MBS_LM_GTOL,                // |projected Jᵀr|_inf <= gtol (0 at a zero residual)
  MBS_LM_MAX_ITERATIONS,      // max_iterations steps were accepted
  MBS_LM_NO_PROGRESS,         // no trial improves and the damping exceeded lambda_max
  MBS_LM_STOP_COUNT
} mbs_lm_stop;

typedef struct mbs_lm_options {
  int n, m;                   // parameters, residuals
  const double* lo;           // n (copied at creation; -INFINITY allowed)
  const double* hi;           // n (copied; +INFINITY allowed; lo <= hi)
  const double* x0;           // n, initial point (copied; projected into the bounds)
  const double* typical;      // n typical magnitudes for the steps, or NULL (copied)
  int forward;                // 0: central stencil of 2n + 1 points (default); 1: n + 1
  double h;                   // relative step; 0: the default above
  double lambda0;             // initial damping (1e-3)
  double lambda_factor;       // damping ratio between trials, and the update factor (10)
  int trials;                 // trial points per batch, K >= 1 (3)
  double lambda_max;          // give up beyond this damping (1e16)
  double ftol, xtol, gtol;    // 1e-10, 1e-10, 1e-10
  int max_iterations;         // accepted steps (100)
} mbs_lm_options;

// what the next ask gives. A fit alternates a Jacobian batch at x with trial batches until one
// trial improves the cost (x moves there) or the fit stops. A stop decided by an accepted step
// (ftol, xtol, maximum iterations) waits for one more Jacobian batch, so that J, r and Jᵀr are
// those of the final x (for mbs_lm_covariance): at most max_iterations + 1 Jacobians.
typedef enum mbs_lm_phase { MBS_LM_PHASE_JACOBIAN = 0, MBS_LM_PHASE_TRIALS } mbs_lm_phase;

// The whole state.
typedef struct mbs_lm {
  mbs_lm_options opt;         // the options with defaults filled in (pointers cleared)
  int n, m;
  double *lo, *hi, *typical;  // n each (typical: the rule's values when not given)
  double* x;                  // n, the current point
  double* r;                  // m, residuals at x (from the last Jacobian batch)
  double* J;                  // m x n at x
  double* g;                  // n, Jᵀr
  double cost;                // 1/2 |r|^2 at x (NaN before the first Jacobian)
  double lambda;              // the damping around which the next trials are centred
  int phase;                  // an mbs_lm_phase
  int iteration;              // Jacobians told
  long evaluations;           // residual evaluations told
  int stop;                   // an mbs_lm_stop
  int pending;                // a stop decided by the last accepted step, set after the
                              // Jacobian at the new x (so J, r and g are at the final x)
  int prepared;               // points hold the current batch
  int npoints;                // points of the current batch
  double* points;             // capacity x n, the current batch
  double* lambdas;            // trials, the damping of each trial point
  double* work;               // n, scratch
} mbs_lm;

void mbs_lm_default_options(mbs_lm_options* o, int n, int m);
int mbs_lm_check_options(const mbs_lm_options* o, mbs_error* err);
mbs_lm* mbs_lm_create(const mbs_lm_options* o, mbs_error* err);
void mbs_lm_free(mbs_lm* lm);

// the largest batch an ask can give (2n + 1 or n + 1, or trials)
int mbs_lm_max_batch(const mbs_lm_options* o);
// the next batch (points: count x n, count <= mbs_lm_max_batch); MBS_ERR_ARGUMENT once stopped
int mbs_lm_ask(mbs_lm* lm, double* points, int* count, mbs_error* err);
// tell the residuals of the last batch (count x m, row-major, in point order). A Jacobian
// batch needs finite residuals (MBS_ERR_NAN otherwise); a trial with a non-finite residual
// counts as not improving. On success lm->stop says whether the fit has ended.
int mbs_lm_tell(mbs_lm* lm, const double* residuals, mbs_error* err);
// "running", "ftol", "xtol", "gtol", "maximum iterations", "no progress"
const char* mbs_lm_stop_text(int reason);

// The helpers the state machine is made of (pure functions; scratch is allocated and freed).

// the stencil size: 2n + 1 (central) or n + 1 (forward)
int mbs_lm_stencil_size(int n, int forward);
// the stencil points at x (stencil_size x n); typical may be NULL (the default rule); h > 0
void mbs_lm_stencil(int n, const double* x, const double* lo, const double* hi,
                    const double* typical, double h, int forward, double* points);
// the Jacobian (m x n) from the stencil points and their residuals (stencil_size x m; row 0
// is r(x)); MBS_ERR_NAN if a residual is not finite
int mbs_lm_jacobian(int n, int m, int forward, const double* points, const double* residuals,
                    double* J, mbs_error* err);
// g = Jᵀr, and the infinity norm of g projected on the bounds (components that push x out of
// the box where it is on a face are dropped)
double mbs_lm_gradient(int m, int n, const double* J, const double* r, const double* x,
                       const double* lo, const double* hi, double* g);
// the projected LM step for damping lambda > 0: x_new = P(x + delta)
int mbs_lm_step(int m, int n, const double* J, const double* r, const double* x,
                const double* lo, const double* hi, double lambda, double* x_new,
                mbs_error* err);
// K trial points (K x n) for dampings lambda * factor^(k - 1), k = 0..K-1 (lambdas: K, may be
// NULL)
int mbs_lm_trial_points(int m, int n, const double* J, const double* r, const double* x,
                        const double* lo, const double* hi, double lambda, double factor,
                        int K, double* points, double* lambdas, mbs_error* err);

// Covariance of the fitted parameters from J (m x n) and r (m) at the fit:
// cov_unscaled = (JᵀJ)^-1 (right when the residuals were weighted by true inverse standard
// deviations), cov = s^2 cov_unscaled with s^2 = |r|^2 / (m - n) (as curve_fit with
// absolute_sigma=False; NaN when m <= n). Computed by the SVD of J with columns scaled to unit
// norm: singular values below rcond times the largest (rcond <= 0: 1e-8) count as zero. A
// parameter whose unit vector has a component above 1e-4 in the null space so found is not
// identifiable: identifiable[j] = 0 and row and column j of both matrices are NaN; the other
// entries are those of the pseudo-inverse, which are the (co)variances of the identifiable
// parameters (they are estimable: orthogonal to the null space). Either
// matrix pointer may be NULL; *rank (may be NULL) is the numerical rank. Returns MBS_OK also
// when rank-deficient (the flags say so).
int mbs_lm_covariance(int m, int n, const double* J, const double* r, double rcond,
                      double* cov, double* cov_unscaled, int* identifiable, int* rank,
                      mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_OPTIM_H_
