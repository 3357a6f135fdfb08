// Optimizers for parameter fitting: CMA-ES and bounded Levenberg-Marquardt, as ask/tell state
// machines (include/mbs/optim.h).
//
// CMA-ES follows N. Hansen, "The CMA Evolution Strategy: A Tutorial" (arXiv:1604.00772, 2016):
// sampling, selection and recombination, step-size control by the conjugate evolution path with
// the Heaviside h_sigma, rank-one plus rank-mu covariance update, the default parameters of
// Table 1 with positive recombination weights only, and the stopping criteria TolX, TolFun and
// ConditionCov of appendix B.3. Restarts double the population (Auger and Hansen, CEC 2005).
// Levenberg-Marquardt follows Marquardt (1963) for the scaled damping and its update and Moré
// (1978) for computing the step by a QR factorization of the augmented matrix.
#include "mbs/optim.h"

#include <float.h>
#include <limits.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/sampler.h"

static const char* const CMAES = "CMA-ES";
static const char* const LM = "Levenberg-Marquardt";

static double* new_doubles(size_t count) { return calloc(count ? count : 1, sizeof(double)); }

static double clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

//---------------------------------- CMA-ES: parameters ---------------------------------------

void mbs_cmaes_default_options(mbs_cmaes_options* o, int n) {
  memset(o, 0, sizeof(*o));
  o->n = n;
  o->sigma0 = 0.3;
  o->tolx = 1e-10;
  o->tolfun = 1e-12;
  o->max_condition = 1e14;
  o->f_target = -INFINITY;
  o->max_restarts = 9;
}

#define CMAES_MAX_RESTARTS 20

// lambda = 4 + floor(3 ln n) (Table 1)
static int default_lambda(int n) { return 4 + (int)floor(3 * log((double)n)); }

static int first_lambda(const mbs_cmaes_options* o) {
  return o->lambda > 0 ? o->lambda : default_lambda(o->n);
}

// the generation limit of a run of population lambda
static long run_generations(const mbs_cmaes_options* o, int lambda) {
  if (o->max_generations > 0) return o->max_generations;
  const double n3 = o->n + 3.0;
  return 100 + (long)ceil(150 * n3 * n3 / sqrt((double)lambda));
}

int mbs_cmaes_check_options(const mbs_cmaes_options* o, mbs_error* err) {
  if (!o) return MBS_FAIL(err, MBS_ERR_ARGUMENT, CMAES, "CMA-ES: no options were given.");
  if (o->n < 1 || o->n > 10000)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: the dimension is %d; it must be between 1 and 10000.", o->n);
  if (!o->lo || !o->hi || !o->x0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, CMAES,
                    "CMA-ES: the bounds and the initial point must be given.");
  for (int j = 0; j < o->n; j++) {
    if (!isfinite(o->lo[j]) || !isfinite(o->hi[j]) || !(o->hi[j] > o->lo[j]) ||
        !isfinite(o->hi[j] - o->lo[j]))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                      "CMA-ES: the bounds of parameter %d are [%g, %g]; they must be finite "
                      "with low < high.", j, o->lo[j], o->hi[j]);
    if (!(o->x0[j] >= o->lo[j] && o->x0[j] <= o->hi[j]))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                      "CMA-ES: the initial value %g of parameter %d is outside its bounds "
                      "[%g, %g].", o->x0[j], j, o->lo[j], o->hi[j]);
  }
  if (!(o->sigma0 > 0 && o->sigma0 <= 1e3))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: sigma0 is %g; it must be positive (normalized units, 0.3 is the "
                    "default).", o->sigma0);
  if (o->lambda != 0 && (o->lambda < 2 || o->lambda > 1000000))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: the population is %d; it must be 0 (default) or 2 to 1000000.",
                    o->lambda);
  if (o->max_generations < 0)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: the maximum number of generations is %ld; it must be >= 0.",
                    o->max_generations);
  if (!(o->tolx >= 0) || !(o->tolfun >= 0) || !(o->max_condition > 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: tolx (%g) and tolfun (%g) must be >= 0 and the maximum condition "
                    "number (%g) > 1.", o->tolx, o->tolfun, o->max_condition);
  if (isnan(o->f_target))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: f_target is NaN; use -INFINITY for no target.");
  if (o->max_restarts < 0 || o->max_restarts > CMAES_MAX_RESTARTS)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: the maximum number of restarts is %d; it must be 0 to %d.",
                    o->max_restarts, CMAES_MAX_RESTARTS);
  const long lam = first_lambda(o);
  if (lam << o->max_restarts > 100000000L)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, CMAES,
                    "CMA-ES: %d restarts would make the population %ld; allow fewer restarts.",
                    o->max_restarts, lam << o->max_restarts);
  return MBS_OK;
}

long mbs_cmaes_max_evaluations(const mbs_cmaes_options* o) {
  if (mbs_cmaes_check_options(o, NULL) != MBS_OK) return -1;
  long total = 0;
  for (int r = 0; r <= o->max_restarts; r++) {
    const long lam = (long)first_lambda(o) << r;
    const long g = run_generations(o, (int)lam);
    if (g > (LONG_MAX - total) / lam) return -1;
    total += lam * g;
  }
  return total;
}

// the strategy parameters of Table 1 for population lambda
static void set_strategy(mbs_cmaes* c, int lambda) {
  const double n = c->n;
  c->lambda = lambda;
  c->mu = lambda / 2;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < c->mu; i++) {
    c->weights[i] = log((lambda + 1) / 2.0) - log(i + 1.0);
    sum += c->weights[i];
  }
  for (int i = 0; i < c->mu; i++) {
    c->weights[i] /= sum;
    sum2 += c->weights[i] * c->weights[i];
  }
  const double mueff = 1 / sum2;
  c->mueff = mueff;
  c->cs = (mueff + 2) / (n + mueff + 5);
  c->ds = 1 + 2 * fmax(0, sqrt((mueff - 1) / (n + 1)) - 1) + c->cs;
  c->cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n);
  c->c1 = 2 / ((n + 1.3) * (n + 1.3) + mueff);                      // alpha_cov = 2
  c->cmu = fmin(1 - c->c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) * (n + 2) + mueff));
  c->chi_n = sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));          // E|N(0, I)|
  c->fhist_len = 10 + (int)ceil(30 * n / lambda);
}

// (re)allocate the per-candidate arrays for population lambda
static int reserve(mbs_cmaes* c, int lambda, mbs_error* err) {
  if (lambda <= c->capacity) return MBS_OK;
  const size_t nl = (size_t)lambda * (size_t)c->n;
  double* w = realloc(c->weights, (size_t)lambda * sizeof(double));
  if (w) c->weights = w;
  double* u = realloc(c->u, nl * sizeof(double));
  if (u) c->u = u;
  double* x = realloc(c->x, nl * sizeof(double));
  if (x) c->x = x;
  int* ord = realloc(c->order, (size_t)lambda * sizeof(int));
  if (ord) c->order = ord;
  if (!w || !u || !x || !ord)
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, CMAES,
                    "CMA-ES: no memory for a population of %d in dimension %d.", lambda, c->n);
  c->capacity = lambda;
  return MBS_OK;
}

// a new run: mean at x0, sigma0, C = B = I, paths and history cleared
static void start_run(mbs_cmaes* c) {
  const int n = c->n;
  for (int j = 0; j < n; j++) {
    c->mean[j] = clamp((c->x0[j] - c->lo[j]) / (c->hi[j] - c->lo[j]), 0, 1);
    c->ps[j] = c->pc[j] = 0;
    c->D[j] = 1;
  }
  for (int k = 0; k < n * n; k++) c->C[k] = c->B[k] = 0;
  for (int j = 0; j < n; j++) c->C[j * n + j] = c->B[j * n + j] = 1;
  c->sigma = c->opt.sigma0;
  c->generation = 0;
  c->stop = MBS_CMAES_RUNNING;
  c->sampled = 0;
  c->fhist_count = 0;
}

mbs_cmaes* mbs_cmaes_create(const mbs_cmaes_options* o, mbs_error* err) {
  if (mbs_cmaes_check_options(o, err) != MBS_OK) return NULL;
  const int n = o->n;
  const size_t nn = (size_t)n * (size_t)n;
  mbs_cmaes* c = calloc(1, sizeof(*c));
  if (!c) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, CMAES, "CMA-ES: no memory for the optimizer.");
    return NULL;
  }
  c->opt = *o;
  c->opt.lo = c->opt.hi = c->opt.x0 = NULL;
  c->n = n;
  c->lo = new_doubles((size_t)n);
  c->hi = new_doubles((size_t)n);
  c->x0 = new_doubles((size_t)n);
  c->mean = new_doubles((size_t)n);
  c->ps = new_doubles((size_t)n);
  c->pc = new_doubles((size_t)n);
  c->C = new_doubles(nn);
  c->B = new_doubles(nn);
  c->D = new_doubles((size_t)n);
  c->best_x = new_doubles((size_t)n);
  c->log_mean = new_doubles((size_t)n);
  const int lambda = first_lambda(o);
  c->fhist = new_doubles((size_t)(10 + (int)ceil(30.0 * n / lambda)));
  // dsyev's optimal workspace, then 4 vectors of n
  double q = 0;
  lapack_int info = LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'V', 'U', n, c->B, n, c->D, &q, -1);
  c->lwork = info == 0 && q >= 3 * n ? (int)q : 3 * n + 64;
  c->work = new_doubles((size_t)c->lwork + 4 * (size_t)n);
  if (!c->lo || !c->hi || !c->x0 || !c->mean || !c->ps || !c->pc || !c->C || !c->B || !c->D ||
      !c->best_x || !c->log_mean || !c->fhist || !c->work) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, CMAES, "CMA-ES: no memory for dimension %d.", n);
    mbs_cmaes_free(c);
    return NULL;
  }
  if (reserve(c, lambda, err) != MBS_OK) {
    mbs_cmaes_free(c);
    return NULL;
  }
  memcpy(c->lo, o->lo, (size_t)n * sizeof(double));
  memcpy(c->hi, o->hi, (size_t)n * sizeof(double));
  memcpy(c->x0, o->x0, (size_t)n * sizeof(double));
  set_strategy(c, lambda);
  start_run(c);
  c->restart = 0;
  c->evaluations = 0;
  c->best_f = INFINITY;
  memcpy(c->best_x, c->x0, (size_t)n * sizeof(double));
  c->log.best_f = INFINITY;
  c->log.best_f_generation = NAN;
  c->log.sigma = c->sigma;
  c->log.mean = c->log_mean;
  memcpy(c->log_mean, c->x0, (size_t)n * sizeof(double));
  return c;
}

void mbs_cmaes_free(mbs_cmaes* c) {
  if (!c) return;
  free(c->lo);
  free(c->hi);
  free(c->x0);
  free(c->weights);
  free(c->mean);
  free(c->ps);
  free(c->pc);
  free(c->C);
  free(c->B);
  free(c->D);
  free(c->u);
  free(c->x);
  free(c->best_x);
  free(c->fhist);
  free(c->log_mean);
  free(c->order);
  free(c->work);
  free(c);
}

int mbs_cmaes_population(const mbs_cmaes* c) { return c->lambda; }

double mbs_cmaes_best(const mbs_cmaes* c, double* x) {
  if (x) memcpy(x, c->best_x, (size_t)c->n * sizeof(double));
  return c->best_f;
}

const char* mbs_cmaes_stop_text(int reason) {
  switch (reason) {
    case MBS_CMAES_RUNNING: return "running";
    case MBS_CMAES_MAX_GENERATIONS: return "maximum generations";
    case MBS_CMAES_TOLX: return "tolx";
    case MBS_CMAES_TOLFUN: return "tolfun";
    case MBS_CMAES_CONDITION: return "condition number";
    case MBS_CMAES_FTARGET: return "f_target";
  }
  return "unknown";
}

//---------------------------------- CMA-ES: ask ----------------------------------------------

// fold v into [0, 1] by mirroring at 0 and 1 as often as needed (period 2)
static double reflect01(double v) {
  if (v >= 0 && v <= 1) return v;
  double t = fmod(v, 2.0);
  if (t < 0) t += 2;
  return t > 1 ? 2 - t : t;
}

// the candidates of the current generation: u_k = reflect(m + sigma B (D .* z_k))
static void sample(mbs_cmaes* c) {
  const int n = c->n;
  double* z = c->work + c->lwork;  // n
  for (int k = 0; k < c->lambda; k++) {
    const uint64_t stream = (MBS_CMAES_STREAM_TAG << 40) + ((uint64_t)c->restart << 32) +
                            (uint64_t)k;
    mbs_rng rng = mbs_rng_make(c->opt.seed, (uint64_t)c->generation, stream);
    for (int j = 0; j < n; j++) z[j] = c->D[j] * mbs_rng_normal(&rng);
    double* u = c->u + (size_t)k * n;
    double* x = c->x + (size_t)k * n;
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += c->B[j * n + i] * z[j];
      u[i] = reflect01(c->mean[i] + c->sigma * s);
      x[i] = clamp(c->lo[i] + u[i] * (c->hi[i] - c->lo[i]), c->lo[i], c->hi[i]);
    }
  }
  c->sampled = 1;
}

int mbs_cmaes_ask(mbs_cmaes* c, double* x, mbs_error* err) {
  if (c->stop != MBS_CMAES_RUNNING)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, CMAES,
                    "CMA-ES: the run has stopped (%s); restart it or end the optimization.",
                    mbs_cmaes_stop_text(c->stop));
  if (!c->sampled) sample(c);
  memcpy(x, c->x, (size_t)c->lambda * (size_t)c->n * sizeof(double));
  return MBS_OK;
}

//---------------------------------- CMA-ES: tell ---------------------------------------------

// failed evaluations (NaN, +inf) rank after all others
static int failed(double f) { return isnan(f) || f == INFINITY; }

// order[0..lambda) sorted by f, failures last, ties by index (insertion sort: stable, and
// lambda is small)
static void rank_values(int* order, const double* f, int lambda) {
  for (int k = 0; k < lambda; k++) {
    const int v = order[k] = k;
    int i = k;
    while (i > 0) {
      const int w = order[i - 1];
      const int before = failed(f[v]) ? 0 : (failed(f[w]) ? 1 : f[v] < f[w]);
      if (!before) break;
      order[i] = w;
      i--;
    }
    order[i] = v;
  }
}

// C = B diag(D)^2 B^T by dsyev; D floored so that C^-1/2 stays finite
static int decompose(mbs_cmaes* c, mbs_error* err) {
  const int n = c->n;
  for (int j = 0; j < n; j++)
    for (int i = j + 1; i < n; i++) c->C[i * n + j] = c->C[j * n + i];  // upper = lower
  memcpy(c->B, c->C, (size_t)n * (size_t)n * sizeof(double));
  double* ev = c->work + c->lwork;  // n eigenvalues (ascending)
  const lapack_int info =
      LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'V', 'U', n, c->B, n, ev, c->work, c->lwork);
  if (info != 0 || !isfinite(ev[n - 1]))
    return MBS_FAIL(err, MBS_ERR_NAN, CMAES,
                    "CMA-ES: the eigen-decomposition of the covariance matrix failed in "
                    "generation %ld of run %d (LAPACK dsyev info %d).",
                    c->generation, c->restart, (int)info);
  const double floor_ev = ev[n - 1] * 1e-300 > DBL_MIN ? ev[n - 1] * 1e-300 : DBL_MIN;
  for (int j = 0; j < n; j++) c->D[j] = sqrt(ev[j] > floor_ev ? ev[j] : floor_ev);
  return MBS_OK;
}

// the stopping tests after an update
static int stop_reason(const mbs_cmaes* c, const double* f) {
  const int n = c->n;
  if (c->best_f <= c->opt.f_target) return MBS_CMAES_FTARGET;
  int small = 1;
  for (int i = 0; i < n && small; i++)
    small = c->sigma * sqrt(c->C[i * n + i]) < c->opt.tolx &&
            c->sigma * fabs(c->pc[i]) < c->opt.tolx;
  if (small) return MBS_CMAES_TOLX;
  if (c->fhist_count >= c->fhist_len) {
    double lo = INFINITY, hi = -INFINITY;
    const int len = c->fhist_len;
    for (int k = 0; k < len; k++) {
      const double v = c->fhist[(c->fhist_count - 1 - k) % len];
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
    for (int k = 0; k < c->lambda; k++) {
      lo = fmin(lo, f[k]);
      hi = fmax(hi, f[k]);
    }
    int all_finite = 1;
    for (int k = 0; k < c->lambda; k++) all_finite &= isfinite(f[k]) != 0;
    for (int k = 0; k < len; k++) all_finite &= isfinite(c->fhist[k]) != 0;
    if (all_finite && hi - lo < c->opt.tolfun) return MBS_CMAES_TOLFUN;
  }
  const double dmax = c->D[n - 1], dmin = c->D[0];  // ascending
  if ((dmax / dmin) * (dmax / dmin) > c->opt.max_condition) return MBS_CMAES_CONDITION;
  if (c->generation >= run_generations(&c->opt, c->lambda)) return MBS_CMAES_MAX_GENERATIONS;
  return MBS_CMAES_RUNNING;
}

// the update of the distribution from the ranked candidates (c->order), as in the tutorial
static int update(mbs_cmaes* c, mbs_error* err) {
  const int n = c->n, mu = c->mu;
  double* mold = c->work + c->lwork;  // n: the mean before the update
  double* ymean = mold + n;           // n: sum w_i y_i
  double* t1 = ymean + n;             // n
  double* t2 = t1 + n;                // n

  // recombination: m = sum w_i u_{i:lambda} (the reflected points)
  memcpy(mold, c->mean, (size_t)n * sizeof(double));
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < mu; i++) s += c->weights[i] * c->u[(size_t)c->order[i] * n + j];
    c->mean[j] = clamp(s, 0, 1);
    ymean[j] = (c->mean[j] - mold[j]) / c->sigma;
  }

  // p_sigma = (1 - cs) p_sigma + sqrt(cs (2 - cs) mueff) C^-1/2 <y>, C^-1/2 = B D^-1 B^T
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += c->B[j * n + i] * ymean[i];
    t1[j] = s / c->D[j];
  }
  const double as = sqrt(c->cs * (2 - c->cs) * c->mueff);
  double psnorm2 = 0;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += c->B[j * n + i] * t1[j];
    c->ps[i] = (1 - c->cs) * c->ps[i] + as * s;
    psnorm2 += c->ps[i] * c->ps[i];
  }
  const double psnorm = sqrt(psnorm2);

  // h_sigma, p_c
  const double decay = 1 - pow(1 - c->cs, 2.0 * (double)c->generation);
  const int hsig = psnorm / sqrt(decay) < (1.4 + 2 / (n + 1.0)) * c->chi_n;
  const double ac = sqrt(c->cc * (2 - c->cc) * c->mueff);
  for (int i = 0; i < n; i++) c->pc[i] = (1 - c->cc) * c->pc[i] + (hsig ? ac * ymean[i] : 0);

  // C = (1 - c1 - cmu + (1 - hsig) c1 cc (2 - cc)) C + c1 pc pc^T + cmu sum w_i y_i y_i^T
  const double keep = 1 - c->c1 - c->cmu + (hsig ? 0 : c->c1 * c->cc * (2 - c->cc));
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) c->C[j * n + i] = keep * c->C[j * n + i] +
                                                  c->c1 * c->pc[i] * c->pc[j];
  for (int k = 0; k < mu; k++) {
    const double* u = c->u + (size_t)c->order[k] * n;
    for (int i = 0; i < n; i++) t2[i] = (u[i] - mold[i]) / c->sigma;
    const double w = c->cmu * c->weights[k];
    for (int j = 0; j < n; j++)
      for (int i = j; i < n; i++) c->C[j * n + i] += w * t2[i] * t2[j];
  }

  // sigma = sigma exp(cs / ds (|p_sigma| / E|N(0, I)| - 1))
  c->sigma *= exp(c->cs / c->ds * (psnorm / c->chi_n - 1));
  if (!isfinite(c->sigma) || !(c->sigma > 0))
    return MBS_FAIL(err, MBS_ERR_NAN, CMAES,
                    "CMA-ES: the step size became %g in generation %ld of run %d.", c->sigma,
                    c->generation, c->restart);
  return decompose(c, err);
}

int mbs_cmaes_tell(mbs_cmaes* c, const double* f, mbs_error* err) {
  if (c->stop != MBS_CMAES_RUNNING)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, CMAES,
                    "CMA-ES: the run has stopped (%s); no values can be told.",
                    mbs_cmaes_stop_text(c->stop));
  if (!c->sampled) sample(c);  // a replay may tell without asking
  const int n = c->n, lambda = c->lambda;
  rank_values(c->order, f, lambda);
  c->generation++;
  c->evaluations += lambda;

  // best of this generation and ever
  const int kb = c->order[0];
  const double fgen = failed(f[kb]) ? NAN : f[kb];
  if (!isnan(fgen) && fgen < c->best_f) {
    c->best_f = fgen;
    memcpy(c->best_x, c->x + (size_t)kb * n, (size_t)n * sizeof(double));
  }

  // a generation without any successful evaluation carries no information: the distribution
  // is kept (the next generation draws new points, its keys having moved on)
  if (!isnan(fgen)) {
    const int rc = update(c, err);
    if (rc != MBS_OK) return rc;
  }

  // the TolFun history, the stop tests, the log entry
  c->fhist[c->fhist_count % c->fhist_len] = isnan(fgen) ? INFINITY : fgen;
  c->fhist_count++;
  c->stop = stop_reason(c, f);
  c->sampled = 0;
  for (int j = 0; j < n; j++)
    c->log_mean[j] = clamp(c->lo[j] + c->mean[j] * (c->hi[j] - c->lo[j]), c->lo[j], c->hi[j]);
  c->log.restart = c->restart;
  c->log.generation = c->generation;
  c->log.evaluations = c->evaluations;
  c->log.sigma = c->sigma;
  c->log.best_f_generation = fgen;
  c->log.best_f = c->best_f;
  c->log.mean = c->log_mean;
  return MBS_OK;
}

int mbs_cmaes_restart(mbs_cmaes* c, mbs_error* err) {
  if (c->restart >= c->opt.max_restarts)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, CMAES,
                    "CMA-ES: the %d restarts allowed have been made.", c->opt.max_restarts);
  const int lambda = first_lambda(&c->opt) << (c->restart + 1);
  const int rc = reserve(c, lambda, err);
  if (rc != MBS_OK) return rc;
  c->restart++;
  set_strategy(c, lambda);
  start_run(c);
  return MBS_OK;
}

//---------------------------------- Levenberg-Marquardt: helpers -----------------------------

int mbs_lm_stencil_size(int n, int forward) { return forward ? n + 1 : 2 * n + 1; }

// room from x to the bounds (infinite bounds give infinite room)
static double room_below(double x, double lo) { return isfinite(lo) ? x - lo : INFINITY; }
static double room_above(double x, double hi) { return isfinite(hi) ? hi - x : INFINITY; }

// the default typical magnitude of a parameter
static double default_typical(double lo, double hi) {
  return isfinite(lo) && isfinite(hi) && hi > lo ? 1e-3 * (hi - lo) : 1;
}

void mbs_lm_stencil(int n, const double* x, const double* lo, const double* hi,
                    const double* typical, double h, int forward, double* points) {
  const int np = mbs_lm_stencil_size(n, forward);
  for (int p = 0; p < np; p++) memcpy(points + (size_t)p * n, x, (size_t)n * sizeof(double));
  for (int j = 0; j < n; j++) {
    if (!(hi[j] > lo[j])) continue;  // fixed: its points stay at x
    const double typ = typical && typical[j] > 0 ? typical[j] : default_typical(lo[j], hi[j]);
    double s = h * fmax(fabs(x[j]), typ);
    const double below = room_below(x[j], lo[j]), above = room_above(x[j], hi[j]);
    double a, b = 0;
    if (forward) {
      if (above >= s) a = s;
      else if (below >= s) a = -s;
      else a = above >= below ? above : -below;
    } else if (below >= s && above >= s) {
      a = -s, b = s;
    } else if (above >= 2 * s) {
      a = s, b = 2 * s;
    } else if (below >= 2 * s) {
      a = -s, b = -2 * s;
    } else if (above >= below) {
      s = above / 2, a = s, b = 2 * s;
    } else {
      s = below / 2, a = -s, b = -2 * s;
    }
    if (forward) {
      points[(size_t)(1 + j) * n + j] = clamp(x[j] + a, lo[j], hi[j]);
    } else {
      points[(size_t)(1 + 2 * j) * n + j] = clamp(x[j] + a, lo[j], hi[j]);
      points[(size_t)(2 + 2 * j) * n + j] = clamp(x[j] + b, lo[j], hi[j]);
    }
  }
}

int mbs_lm_jacobian(int n, int m, int forward, const double* points, const double* residuals,
                    double* J, mbs_error* err) {
  const int np = mbs_lm_stencil_size(n, forward);
  for (int p = 0; p < np; p++)
    for (int i = 0; i < m; i++)
      if (!isfinite(residuals[(size_t)p * m + i]))
        return MBS_FAIL(err, MBS_ERR_NAN, LM,
                        "Levenberg-Marquardt: residual %d of finite-difference point %d is %g; "
                        "the Jacobian needs finite residuals.", i, p,
                        residuals[(size_t)p * m + i]);
  const double* x = points;
  const double* r0 = residuals;
  for (int j = 0; j < n; j++) {
    if (forward) {
      // (r(x + a e_j) - r(x)) / a, with the step actually represented
      const double a = points[(size_t)(1 + j) * n + j] - x[j];
      const double* ra = residuals + (size_t)(1 + j) * m;
      for (int i = 0; i < m; i++) J[(size_t)i * n + j] = a != 0 ? (ra[i] - r0[i]) / a : 0;
      continue;
    }
    // the derivative at 0 of the parabola through (0, r0), (a, ra), (b, rb)
    const double a = points[(size_t)(1 + 2 * j) * n + j] - x[j];
    const double b = points[(size_t)(2 + 2 * j) * n + j] - x[j];
    const double* ra = residuals + (size_t)(1 + 2 * j) * m;
    const double* rb = residuals + (size_t)(2 + 2 * j) * m;
    if (a == 0 || b == 0 || a == b) {
      for (int i = 0; i < m; i++) J[(size_t)i * n + j] = 0;
      continue;
    }
    const double c0 = -(a + b) / (a * b), ca = b / (a * (b - a)), cb = -a / (b * (b - a));
    for (int i = 0; i < m; i++) J[(size_t)i * n + j] = c0 * r0[i] + ca * ra[i] + cb * rb[i];
  }
  return MBS_OK;
}

// x is held in a step: fixed, or on a face with the descent direction -g pointing out
static int held(double x, double lo, double hi, double g) {
  return !(hi > lo) || (x <= lo && g > 0) || (x >= hi && g < 0);
}

double mbs_lm_gradient(int m, int n, const double* J, const double* r, const double* x,
                       const double* lo, const double* hi, double* g) {
  double gmax = 0;
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s += J[(size_t)i * n + j] * r[i];
    g[j] = s;
    if (!held(x[j], lo[j], hi[j], s)) gmax = fmax(gmax, fabs(s));
  }
  return gmax;
}

int mbs_lm_step(int m, int n, const double* J, const double* r, const double* x,
                const double* lo, const double* hi, double lambda, double* x_new,
                mbs_error* err) {
  if (!(lambda > 0) || !isfinite(lambda))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, LM,
                    "Levenberg-Marquardt: the damping is %g; it must be positive.", lambda);
  // gradient, diagonal of JᵀJ, the free parameters
  int* free_j = malloc((size_t)n * sizeof(int));
  double* g = new_doubles((size_t)n);
  double* d = new_doubles((size_t)n);
  if (!free_j || !g || !d) {
    free(free_j), free(g), free(d);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, LM, "Levenberg-Marquardt: no memory for a step.");
  }
  mbs_lm_gradient(m, n, J, r, x, lo, hi, g);
  double dmax = 0;
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s += J[(size_t)i * n + j] * J[(size_t)i * n + j];
    d[j] = s;
    dmax = fmax(dmax, s);
  }
  int nf = 0;
  for (int j = 0; j < n; j++)
    if (!held(x[j], lo[j], hi[j], g[j])) free_j[nf++] = j;
  memcpy(x_new, x, (size_t)n * sizeof(double));
  int rc = MBS_OK;
  if (nf > 0) {
    // [J_F; sqrt(lambda D_F)] delta_F ~ [-r; 0], column-major (m + nf) x nf
    const int rows = m + nf;
    double* A = new_doubles((size_t)rows * (size_t)nf);
    double* b = new_doubles((size_t)rows);
    double q = 0;
    lapack_int info =
        A && b ? LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', rows, nf, 1, A, rows, b, rows, &q, -1)
               : -1;
    const int lwork = info == 0 && q > 0 ? (int)q : rows + nf * 64;
    double* work = new_doubles((size_t)lwork);
    if (!A || !b || !work) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, LM, "Levenberg-Marquardt: no memory for a step.");
    } else {
      const double dfloor = dmax > 0 ? 1e-12 * dmax : 1;
      for (int k = 0; k < nf; k++) {
        const int j = free_j[k];
        for (int i = 0; i < m; i++) A[(size_t)k * rows + i] = J[(size_t)i * n + j];
        A[(size_t)k * rows + m + k] = sqrt(lambda * fmax(d[j], dfloor));
      }
      for (int i = 0; i < m; i++) b[i] = -r[i];
      info = LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', rows, nf, 1, A, rows, b, rows, work,
                                lwork);
      if (info != 0) {
        rc = MBS_FAIL(err, MBS_ERR_SINGULAR, LM,
                      "Levenberg-Marquardt: the damped least-squares problem of the step is "
                      "singular (LAPACK dgels info %d).", (int)info);
      } else {
        for (int k = 0; k < nf; k++) {
          const int j = free_j[k];
          x_new[j] = clamp(x[j] + b[k], lo[j], hi[j]);
        }
      }
    }
    free(A), free(b), free(work);
  }
  free(free_j), free(g), free(d);
  return rc;
}

int mbs_lm_trial_points(int m, int n, const double* J, const double* r, const double* x,
                        const double* lo, const double* hi, double lambda, double factor,
                        int K, double* points, double* lambdas, mbs_error* err) {
  for (int k = 0; k < K; k++) {
    const double lk = lambda * pow(factor, k - 1);
    if (lambdas) lambdas[k] = lk;
    const int rc = mbs_lm_step(m, n, J, r, x, lo, hi, lk, points + (size_t)k * n, err);
    if (rc != MBS_OK) return rc;
  }
  return MBS_OK;
}

//---------------------------------- Levenberg-Marquardt: covariance --------------------------

int mbs_lm_covariance(int m, int n, const double* J, const double* r, double rcond,
                      double* cov, double* cov_unscaled, int* identifiable, int* rank,
                      mbs_error* err) {
  if (m < 1 || n < 1)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, LM,
                    "Levenberg-Marquardt: a covariance needs residuals and parameters (m = %d, "
                    "n = %d).", m, n);
  if (!(rcond > 0)) rcond = 1e-8;
  const int k = m < n ? m : n;
  double* A = new_doubles((size_t)m * (size_t)n);
  double* S = new_doubles((size_t)n);
  double* sv = new_doubles((size_t)k);
  double* VT = new_doubles((size_t)n * (size_t)n);
  double* cu = new_doubles((size_t)n * (size_t)n);
  int* ok = malloc((size_t)n * sizeof(int));
  double q = 0, dummy = 0;
  lapack_int info = -1;
  if (A && S && sv && VT && cu && ok)
    info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', m, n, A, m, sv, &dummy, 1, VT, n, &q,
                               -1);
  const int lwork = info == 0 && q > 0 ? (int)q : 5 * (m + n) + 64;
  double* work = new_doubles((size_t)lwork);
  int rc = MBS_OK;
  if (!A || !S || !sv || !VT || !cu || !ok || !work) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, LM, "Levenberg-Marquardt: no memory for a covariance.");
    goto done;
  }
  // J with unit-norm columns (a zero column stays zero), column-major
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s += J[(size_t)i * n + j] * J[(size_t)i * n + j];
    S[j] = s > 0 ? sqrt(s) : 1;
    for (int i = 0; i < m; i++) A[(size_t)j * m + i] = J[(size_t)i * n + j] / S[j];
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++)
      if (!isfinite(A[(size_t)j * m + i])) {
        rc = MBS_FAIL(err, MBS_ERR_NAN, LM,
                      "Levenberg-Marquardt: the Jacobian is not finite at residual %d, "
                      "parameter %d.", i, j);
        goto done;
      }
  info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', m, n, A, m, sv, &dummy, 1, VT, n, work,
                             lwork);
  if (info != 0) {
    rc = MBS_FAIL(err, MBS_ERR_SINGULAR, LM,
                  "Levenberg-Marquardt: the singular value decomposition of the Jacobian did "
                  "not converge (LAPACK dgesvd info %d).", (int)info);
    goto done;
  }
  int rk = 0;
  while (rk < k && sv[rk] > 0 && sv[rk] > rcond * sv[0]) rk++;
  // identifiable: no component above 1e-4 in the null space (rows rk..n-1 of V^T)
  for (int j = 0; j < n; j++) {
    double leak = 0;
    for (int i = rk; i < n; i++) leak += VT[(size_t)j * n + i] * VT[(size_t)j * n + i];
    ok[j] = leak <= 1e-8;
  }
  // (JᵀJ)^+ = S^-1 V_r Sigma_r^-2 V_r^T S^-1
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      double s = 0;
      for (int i = 0; i < rk; i++)
        s += VT[(size_t)a * n + i] * VT[(size_t)b * n + i] / (sv[i] * sv[i]);
      cu[(size_t)a * n + b] = ok[a] && ok[b] ? s / (S[a] * S[b]) : NAN;
    }
  double rr = 0;
  for (int i = 0; i < m; i++) rr += r[i] * r[i];
  const double s2 = m > n ? rr / (m - n) : NAN;
  for (int a = 0; a < n * n; a++) {
    if (cov_unscaled) cov_unscaled[a] = cu[a];
    if (cov) cov[a] = s2 * cu[a];
  }
  if (identifiable)
    for (int j = 0; j < n; j++) identifiable[j] = ok[j];
  if (rank) *rank = rk;
done:
  free(A), free(S), free(sv), free(VT), free(cu), free(ok), free(work);
  return rc;
}

//---------------------------------- Levenberg-Marquardt: the state machine -------------------

void mbs_lm_default_options(mbs_lm_options* o, int n, int m) {
  memset(o, 0, sizeof(*o));
  o->n = n;
  o->m = m;
  o->lambda0 = 1e-3;
  o->lambda_factor = 10;
  o->trials = 3;
  o->lambda_max = 1e16;
  o->ftol = o->xtol = o->gtol = 1e-10;
  o->max_iterations = 100;
}

int mbs_lm_check_options(const mbs_lm_options* o, mbs_error* err) {
  if (!o) return MBS_FAIL(err, MBS_ERR_ARGUMENT, LM, "Levenberg-Marquardt: no options were given.");
  if (o->n < 1 || o->m < 1 || o->n > 100000 || o->m > 100000000)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, LM,
                    "Levenberg-Marquardt: %d parameters and %d residuals; both must be >= 1.",
                    o->n, o->m);
  if (!o->lo || !o->hi || !o->x0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, LM,
                    "Levenberg-Marquardt: the bounds and the initial point must be given.");
  for (int j = 0; j < o->n; j++) {
    if (isnan(o->lo[j]) || isnan(o->hi[j]) || o->lo[j] > o->hi[j] || o->lo[j] == INFINITY ||
        o->hi[j] == -INFINITY)
      return MBS_FAIL(err, MBS_ERR_PARAMETER, LM,
                      "Levenberg-Marquardt: the bounds of parameter %d are [%g, %g]; they need "
                      "low <= high.", j, o->lo[j], o->hi[j]);
    if (!isfinite(o->x0[j]))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, LM,
                      "Levenberg-Marquardt: the initial value of parameter %d is %g.", j,
                      o->x0[j]);
    if (o->typical && !(o->typical[j] > 0 && isfinite(o->typical[j])))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, LM,
                      "Levenberg-Marquardt: the typical magnitude of parameter %d is %g; it "
                      "must be positive.", j, o->typical[j]);
  }
  if (!(o->h >= 0 && o->h < 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, LM,
                    "Levenberg-Marquardt: the relative step h is %g; it must be in [0, 1).",
                    o->h);
  if (!(o->lambda0 > 0 && isfinite(o->lambda0)) || !(o->lambda_factor > 1) ||
      !(o->lambda_max >= o->lambda0) || o->trials < 1 || o->trials > 64)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, LM,
                    "Levenberg-Marquardt: lambda0 %g must be positive, the factor %g above 1, "
                    "lambda_max %g at least lambda0, and the trials %d between 1 and 64.",
                    o->lambda0, o->lambda_factor, o->lambda_max, o->trials);
  if (!(o->ftol >= 0) || !(o->xtol >= 0) || !(o->gtol >= 0) || o->max_iterations < 0)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, LM,
                    "Levenberg-Marquardt: ftol %g, xtol %g, gtol %g and the maximum iterations "
                    "%d must be >= 0.", o->ftol, o->xtol, o->gtol, o->max_iterations);
  return MBS_OK;
}

int mbs_lm_max_batch(const mbs_lm_options* o) {
  const int s = mbs_lm_stencil_size(o->n, o->forward);
  return s > o->trials ? s : o->trials;
}

mbs_lm* mbs_lm_create(const mbs_lm_options* o, mbs_error* err) {
  if (mbs_lm_check_options(o, err) != MBS_OK) return NULL;
  const int n = o->n, m = o->m;
  mbs_lm* lm = calloc(1, sizeof(*lm));
  if (!lm) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, LM, "Levenberg-Marquardt: no memory for the optimizer.");
    return NULL;
  }
  lm->opt = *o;
  lm->opt.lo = lm->opt.hi = lm->opt.x0 = lm->opt.typical = NULL;
  if (lm->opt.h == 0) lm->opt.h = o->forward ? sqrt(DBL_EPSILON) : cbrt(DBL_EPSILON);
  lm->n = n;
  lm->m = m;
  const int cap = mbs_lm_max_batch(o);
  lm->lo = new_doubles((size_t)n);
  lm->hi = new_doubles((size_t)n);
  lm->typical = new_doubles((size_t)n);
  lm->x = new_doubles((size_t)n);
  lm->r = new_doubles((size_t)m);
  lm->J = new_doubles((size_t)m * (size_t)n);
  lm->g = new_doubles((size_t)n);
  lm->points = new_doubles((size_t)cap * (size_t)n);
  lm->lambdas = new_doubles((size_t)o->trials);
  lm->work = new_doubles((size_t)n);
  if (!lm->lo || !lm->hi || !lm->typical || !lm->x || !lm->r || !lm->J || !lm->g ||
      !lm->points || !lm->lambdas || !lm->work) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, LM,
             "Levenberg-Marquardt: no memory for %d parameters and %d residuals.", n, m);
    mbs_lm_free(lm);
    return NULL;
  }
  for (int j = 0; j < n; j++) {
    lm->lo[j] = o->lo[j];
    lm->hi[j] = o->hi[j];
    lm->typical[j] = o->typical ? o->typical[j] : default_typical(o->lo[j], o->hi[j]);
    lm->x[j] = clamp(o->x0[j], o->lo[j], o->hi[j]);
  }
  lm->cost = NAN;
  lm->lambda = o->lambda0;
  lm->phase = MBS_LM_PHASE_JACOBIAN;
  lm->stop = MBS_LM_RUNNING;
  return lm;
}

void mbs_lm_free(mbs_lm* lm) {
  if (!lm) return;
  free(lm->lo);
  free(lm->hi);
  free(lm->typical);
  free(lm->x);
  free(lm->r);
  free(lm->J);
  free(lm->g);
  free(lm->points);
  free(lm->lambdas);
  free(lm->work);
  free(lm);
}

const char* mbs_lm_stop_text(int reason) {
  switch (reason) {
    case MBS_LM_RUNNING: return "running";
    case MBS_LM_FTOL: return "ftol";
    case MBS_LM_XTOL: return "xtol";
    case MBS_LM_GTOL: return "gtol";
    case MBS_LM_MAX_ITERATIONS: return "maximum iterations";
    case MBS_LM_NO_PROGRESS: return "no progress";
  }
  return "unknown";
}

// the points of the current phase (a pure function of the state)
static int prepare(mbs_lm* lm, mbs_error* err) {
  if (lm->phase == MBS_LM_PHASE_JACOBIAN) {
    mbs_lm_stencil(lm->n, lm->x, lm->lo, lm->hi, lm->typical, lm->opt.h, lm->opt.forward,
                   lm->points);
    lm->npoints = mbs_lm_stencil_size(lm->n, lm->opt.forward);
  } else {
    lm->npoints = lm->opt.trials;
    const int rc = mbs_lm_trial_points(lm->m, lm->n, lm->J, lm->r, lm->x, lm->lo, lm->hi,
                                       lm->lambda, lm->opt.lambda_factor, lm->opt.trials,
                                       lm->points, lm->lambdas, err);
    if (rc != MBS_OK) return rc;
  }
  lm->prepared = 1;
  return MBS_OK;
}

int mbs_lm_ask(mbs_lm* lm, double* points, int* count, mbs_error* err) {
  if (lm->stop != MBS_LM_RUNNING)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, LM,
                    "Levenberg-Marquardt: the fit has stopped (%s).", mbs_lm_stop_text(lm->stop));
  if (!lm->prepared) {
    const int rc = prepare(lm, err);
    if (rc != MBS_OK) return rc;
  }
  memcpy(points, lm->points, (size_t)lm->npoints * (size_t)lm->n * sizeof(double));
  *count = lm->npoints;
  return MBS_OK;
}

static double norm2(const double* v, int n) {
  double s = 0;
  for (int j = 0; j < n; j++) s += v[j] * v[j];
  return sqrt(s);
}

// after the Jacobian batch: J, r, cost and gradient at x, then the stop tests: a stop decided
// by the accepted step before (pending) takes effect now that J is at the final x
static int tell_jacobian(mbs_lm* lm, const double* res, mbs_error* err) {
  const int n = lm->n, m = lm->m;
  const int rc = mbs_lm_jacobian(n, m, lm->opt.forward, lm->points, res, lm->J, err);
  if (rc != MBS_OK) return rc;
  memcpy(lm->r, res, (size_t)m * sizeof(double));
  const double rn = norm2(lm->r, m);
  lm->cost = 0.5 * rn * rn;
  const double gmax = mbs_lm_gradient(m, n, lm->J, lm->r, lm->x, lm->lo, lm->hi, lm->g);
  lm->phase = MBS_LM_PHASE_TRIALS;
  if (lm->pending != MBS_LM_RUNNING) lm->stop = lm->pending;
  else if (gmax <= lm->opt.gtol) lm->stop = MBS_LM_GTOL;
  else if (lm->iteration >= lm->opt.max_iterations) lm->stop = MBS_LM_MAX_ITERATIONS;
  lm->pending = MBS_LM_RUNNING;
  return MBS_OK;
}

// after the trial batch: accept the best improving point (the damping then lowered below its
// trial's) or raise the damping past the largest tried; the step tests
static void tell_trials(mbs_lm* lm, const double* res) {
  const int n = lm->n, m = lm->m, K = lm->npoints;
  int best = -1;
  double best_cost = lm->cost;
  for (int k = 0; k < K; k++) {
    const double rn = norm2(res + (size_t)k * m, m);
    const double ck = isfinite(rn) ? 0.5 * rn * rn : NAN;
    if (ck < best_cost) best = k, best_cost = ck;
  }
  double* dx = lm->work;  // n
  if (best < 0) {
    // no improvement: converged if every trial step is below xtol, else more damping
    double dmax = 0;
    for (int k = 0; k < K; k++) {
      for (int j = 0; j < n; j++) dx[j] = lm->points[(size_t)k * n + j] - lm->x[j];
      dmax = fmax(dmax, norm2(dx, n));
    }
    if (dmax <= lm->opt.xtol * (lm->opt.xtol + norm2(lm->x, n))) {
      lm->stop = MBS_LM_XTOL;
      return;
    }
    lm->lambda *= pow(lm->opt.lambda_factor, K);
    if (lm->lambda > lm->opt.lambda_max) lm->stop = MBS_LM_NO_PROGRESS;
    return;
  }
  const double* xb = lm->points + (size_t)best * n;
  for (int j = 0; j < n; j++) dx[j] = xb[j] - lm->x[j];
  const double cost_old = lm->cost;
  memcpy(lm->x, xb, (size_t)n * sizeof(double));
  memcpy(lm->r, res + (size_t)best * m, (size_t)m * sizeof(double));
  lm->cost = best_cost;
  lm->lambda = lm->lambdas[best] / lm->opt.lambda_factor;
  lm->iteration++;
  lm->phase = MBS_LM_PHASE_JACOBIAN;
  if (cost_old - best_cost <= lm->opt.ftol * cost_old) lm->pending = MBS_LM_FTOL;
  else if (norm2(dx, n) <= lm->opt.xtol * (lm->opt.xtol + norm2(lm->x, n)))
    lm->pending = MBS_LM_XTOL;
}

int mbs_lm_tell(mbs_lm* lm, const double* residuals, mbs_error* err) {
  if (lm->stop != MBS_LM_RUNNING)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, LM,
                    "Levenberg-Marquardt: the fit has stopped (%s); no residuals can be told.",
                    mbs_lm_stop_text(lm->stop));
  if (!lm->prepared) {  // a replay may tell without asking
    const int rc = prepare(lm, err);
    if (rc != MBS_OK) return rc;
  }
  if (lm->phase == MBS_LM_PHASE_JACOBIAN) {
    const int rc = tell_jacobian(lm, residuals, err);
    if (rc != MBS_OK) return rc;
  } else {
    tell_trials(lm, residuals);
  }
  lm->evaluations += lm->npoints;
  lm->prepared = 0;
  return MBS_OK;
}
