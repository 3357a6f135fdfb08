// CMA-ES and Levenberg-Marquardt (studies/optim.c) against known truth: the minima of
// Rosenbrock's function (1, ..., 1), of an ellipsoid (its centre, or the centre's projection on
// the box when the centre is outside), of Rastrigin's function (0 after IPOP restarts from a
// local well); Hansen's Table 1 parameters re-derived here; the documented random-number keys;
// bit-identical reruns and replays. LM: exact fits of a exp(-b t) + c, the analytic Jacobian,
// the closed-form damped step of a straight-line fit, the closed-form covariance of a straight
// line, a Monte-Carlo covariance of refits against sigma^2 (JᵀJ)^-1 from the analytic Jacobian,
// a fit ending on a bound (with the other parameters the closed-form linear least squares), and
// non-identifiable parameters (a product, a parameter without effect).
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/optim.h"
#include "mbs/sampler.h"
#include "mbs_test.h"

// 1 when MBS_TEST_QUICK is set (valgrind runs use fewer Monte-Carlo refits: 200, not 1000)
static int quick(void) {
  const char* s = getenv("MBS_TEST_QUICK");
  return s && *s && strcmp(s, "0") != 0;
}

#define MAXN 8

//---------------------------------- objectives -----------------------------------------------

typedef double (*objective)(const double* x, int n, const void* ctx);

static double rosenbrock(const double* x, int n, const void* ctx) {
  (void)ctx;
  double f = 0;
  for (int i = 0; i + 1 < n; i++) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    f += 100 * a * a + b * b;
  }
  return f;
}

// sum 10^(6 i / (n - 1)) (x_i - c_i)^2, condition number 1e6
static double ellipsoid(const double* x, int n, const void* ctx) {
  const double* c = ctx;
  double f = 0;
  for (int i = 0; i < n; i++) {
    const double w = n > 1 ? pow(10.0, 6.0 * i / (n - 1)) : 1;
    f += w * (x[i] - c[i]) * (x[i] - c[i]);
  }
  return f;
}

// 10 n + sum x_i^2 - 10 cos(2 pi x_i): global minimum 0 at 0, local minima near the integers
static double rastrigin(const double* x, int n, const void* ctx) {
  (void)ctx;
  double f = 10.0 * n;
  for (int i = 0; i < n; i++) f += x[i] * x[i] - 10 * cos(2 * M_PI * x[i]);
  return f;
}

// a sphere that fails (NaN) for x_0 > 1 and returns +inf for x_1 > 1
static double sphere_with_failures(const double* x, int n, const void* ctx) {
  const double* c = ctx;
  if (x[0] > 1) return NAN;
  if (x[1] > 1) return INFINITY;
  double f = 0;
  for (int i = 0; i < n; i++) f += (x[i] - c[i]) * (x[i] - c[i]);
  return f;
}

//---------------------------------- a CMA-ES driver loop -------------------------------------

typedef struct cma_run {
  double best_f;
  double best_x[MAXN];
  int stop, restarts;
  long evaluations, generations;
  long outside;          // asked points outside the bounds
  long failed_best;      // generations whose logged best-ever value was NaN
} cma_run;

// ask/evaluate/tell until a run stops; restart (IPOP) while best f > f_good and restarts remain
static void run_cmaes(const mbs_cmaes_options* o, objective f, const void* ctx, double f_good,
                      cma_run* out) {
  memset(out, 0, sizeof(*out));
  mbs_error err;
  mbs_cmaes* c = mbs_cmaes_create(o, &err);
  EXPECT_TRUE(c != NULL);
  if (!c) return;
  const int n = o->n;
  double* x = NULL;
  double* fx = NULL;
  for (;;) {
    const int lambda = mbs_cmaes_population(c);
    x = realloc(x, (size_t)lambda * n * sizeof(double));
    fx = realloc(fx, (size_t)lambda * sizeof(double));
    if (mbs_cmaes_ask(c, x, &err) != MBS_OK) break;
    for (int k = 0; k < lambda; k++) {
      for (int j = 0; j < n; j++)
        if (!(x[k * n + j] >= o->lo[j] && x[k * n + j] <= o->hi[j])) out->outside++;
      fx[k] = f(x + k * n, n, ctx);
    }
    EXPECT_OK(mbs_cmaes_tell(c, fx, &err));
    out->generations++;
    if (isnan(c->log.best_f)) out->failed_best++;
    if (c->stop == MBS_CMAES_RUNNING) continue;
    if (c->best_f <= f_good || c->stop == MBS_CMAES_FTARGET) break;
    if (mbs_cmaes_restart(c, &err) != MBS_OK) break;
  }
  out->best_f = mbs_cmaes_best(c, out->best_x);
  out->stop = c->stop;
  out->restarts = c->restart;
  out->evaluations = c->evaluations;
  free(x);
  free(fx);
  mbs_cmaes_free(c);
}

static void box(double* lo, double* hi, int n, double a, double b) {
  for (int j = 0; j < n; j++) lo[j] = a, hi[j] = b;
}

//---------------------------------- CMA-ES tests ---------------------------------------------

// Hansen's Table 1 for n = 10 (lambda 10, mu 5), re-derived from the formulas; pycma prints
// this strategy as "(5_w,10)-CMA-ES (mu_w=3.2,w_1=46%)"
static void test_cmaes_parameters(void) {
  double lo[10], hi[10], x0[10];
  box(lo, hi, 10, -1, 1);
  for (int j = 0; j < 10; j++) x0[j] = 0;
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, 10);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  mbs_error err;
  mbs_cmaes* c = mbs_cmaes_create(&o, &err);
  EXPECT_TRUE(c != NULL);
  if (!c) return;
  EXPECT_EQ_INT(c->lambda, 10);
  EXPECT_EQ_INT(c->mu, 5);
  const double w[5] = {log(5.5) - log(1), log(5.5) - log(2), log(5.5) - log(3),
                       log(5.5) - log(4), log(5.5) - log(5)};
  const double sw = w[0] + w[1] + w[2] + w[3] + w[4];
  double s2 = 0;
  for (int i = 0; i < 5; i++) {
    EXPECT_NEAR(c->weights[i], w[i] / sw, 1e-14);
    s2 += (w[i] / sw) * (w[i] / sw);
  }
  EXPECT_NEAR(c->mueff, 1 / s2, 1e-13);
  EXPECT_ABS(c->mueff, 3.2, 0.05);
  EXPECT_ABS(c->weights[0], 0.46, 0.005);
  const double me = 1 / s2;
  EXPECT_NEAR(c->cs, (me + 2) / (10 + me + 5), 1e-14);
  EXPECT_NEAR(c->ds, 1 + c->cs, 1e-14);  // sqrt((mueff - 1) / 11) < 1
  EXPECT_NEAR(c->cc, (4 + me / 10) / (14 + 2 * me / 10), 1e-14);
  EXPECT_NEAR(c->c1, 2 / (11.3 * 11.3 + me), 1e-14);
  EXPECT_NEAR(c->cmu, 2 * (me - 2 + 1 / me) / (144 + me), 1e-14);
  EXPECT_NEAR(c->chi_n, sqrt(10) * (1 - 1 / 40.0 + 1 / 2100.0), 1e-14);
  mbs_cmaes_free(c);
  // default population 4 + floor(3 ln n)
  const int ns[5] = {1, 2, 5, 20, 30}, lams[5] = {4, 6, 8, 12, 14};
  for (int t = 0; t < 5; t++) {
    double l[30], h[30], z[30];
    box(l, h, ns[t], 0, 1);
    for (int j = 0; j < ns[t]; j++) z[j] = 0.5;
    mbs_cmaes_default_options(&o, ns[t]);
    o.lo = l, o.hi = h, o.x0 = z;
    c = mbs_cmaes_create(&o, &err);
    EXPECT_TRUE(c && c->lambda == lams[t]);
    mbs_cmaes_free(c);
  }
}

// the first generation's points from the documented keys: u_k = reflect(u0 + sigma0 z_k), z_k
// from mbs_rng_make(seed, 0, TAG * 2^40 + restart * 2^32 + k); after a restart, lambda doubles
// and restart 1's keys are used
static void test_cmaes_keys(void) {
  const int n = 3;
  const double lo[3] = {-2, 0, 10}, hi[3] = {2, 1, 20}, x0[3] = {1.9, 0.5, 11};
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, n);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  o.seed = 12345;
  o.sigma0 = 0.4;
  mbs_error err;
  mbs_cmaes* c = mbs_cmaes_create(&o, &err);
  EXPECT_TRUE(c != NULL);
  if (!c) return;
  for (int r = 0; r < 2; r++) {
    const int lambda = mbs_cmaes_population(c);
    EXPECT_EQ_INT(lambda, (4 + (int)floor(3 * log(3.0))) << r);
    double* x = malloc((size_t)lambda * n * sizeof(double));
    EXPECT_OK(mbs_cmaes_ask(c, x, &err));
    double maxdiff = 0;
    for (int k = 0; k < lambda; k++) {
      mbs_rng g = mbs_rng_make(12345, 0, (UINT64_C(0x434d41) << 40) + ((uint64_t)r << 32) + k);
      for (int j = 0; j < n; j++) {
        double u = (x0[j] - lo[j]) / (hi[j] - lo[j]) + 0.4 * mbs_rng_normal(&g);
        while (u < 0 || u > 1) u = u < 0 ? -u : 2 - u;  // mirror at the faces
        maxdiff = fmax(maxdiff, fabs(x[k * n + j] - (lo[j] + u * (hi[j] - lo[j]))));
      }
    }
    EXPECT_TRUE(maxdiff < 1e-13);
    free(x);
    EXPECT_OK(mbs_cmaes_restart(c, &err));
  }
  mbs_cmaes_free(c);
}

static void test_cmaes_rosenbrock(int n) {
  double lo[MAXN], hi[MAXN], x0[MAXN];
  box(lo, hi, n, -5, 5);
  for (int j = 0; j < n; j++) x0[j] = j % 2 ? 1 : -1.2;
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, n);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  o.seed = 2016;
  o.tolfun = 1e-20;  // f is 0 at the minimum: run until the step is below tolx
  cma_run run;
  run_cmaes(&o, rosenbrock, NULL, 1e-14, &run);
  printf("  Rosenbrock n=%d: f %.3g after %ld evaluations, %d restarts, stop %s\n", n,
         run.best_f, run.evaluations, run.restarts, mbs_cmaes_stop_text(run.stop));
  for (int j = 0; j < n; j++) EXPECT_ABS(run.best_x[j], 1, 1e-6);
  EXPECT_TRUE(run.best_f < 1e-12);
  EXPECT_EQ_INT(run.outside, 0);
  EXPECT_TRUE(run.evaluations <= mbs_cmaes_max_evaluations(&o));
}

static void test_cmaes_ellipsoid(void) {
  const int n = 5;
  double lo[MAXN], hi[MAXN], x0[MAXN];
  const double centre[MAXN] = {0.3, -1.7, 2.2, 4.1, -2.9};
  box(lo, hi, n, -3, 7);
  for (int j = 0; j < n; j++) x0[j] = 5;
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, n);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  o.seed = 7;
  o.tolfun = 1e-20;
  o.max_restarts = 0;
  cma_run run;
  run_cmaes(&o, ellipsoid, centre, 0, &run);
  printf("  ellipsoid n=5: f %.3g after %ld evaluations, stop %s\n", run.best_f,
         run.evaluations, mbs_cmaes_stop_text(run.stop));
  for (int j = 0; j < n; j++) EXPECT_ABS(run.best_x[j], centre[j], 1e-6);
  EXPECT_EQ_INT(run.stop, MBS_CMAES_TOLX);
  EXPECT_EQ_INT(run.outside, 0);

  // the centre outside the box in two coordinates: the minimum over the box is the centre
  // projected on it (the ellipsoid is separable). Folded at the face, f grows linearly away
  // from it in those coordinates, quadratically in the others, so their scales part at the
  // square: the default condition limit (1e14) ends the run with the free coordinates near
  // 1e-6; a looser limit lets them converge further
  const double far[MAXN] = {9, -1.7, -4, 4.1, 0.5};
  double projected[MAXN];
  for (int j = 0; j < n; j++) projected[j] = fmin(fmax(far[j], lo[j]), hi[j]);
  o.max_condition = 1e20;
  run_cmaes(&o, ellipsoid, far, 0, &run);
  o.max_condition = 1e14;
  printf("  ellipsoid, centre outside the box: f %.6g after %ld evaluations, stop %s\n",
         run.best_f, run.evaluations, mbs_cmaes_stop_text(run.stop));
  for (int j = 0; j < n; j++) EXPECT_ABS(run.best_x[j], projected[j], 1e-6);
  EXPECT_NEAR(run.best_f, ellipsoid(projected, n, far), 1e-9);
  EXPECT_EQ_INT(run.outside, 0);

  // the target value stops the run
  o.f_target = 1e-3;
  run_cmaes(&o, ellipsoid, centre, 0, &run);
  EXPECT_EQ_INT(run.stop, MBS_CMAES_FTARGET);
  EXPECT_TRUE(run.best_f <= 1e-3);
}

// failed evaluations (NaN, +inf) rank last: the sphere is minimized in the region where it is
// defined, at the centre (0.5, 0.5), and the best value is never a failure
static void test_cmaes_failures(void) {
  const int n = 2;
  double lo[2], hi[2];
  const double x0[2] = {0.9, 0.9}, centre[2] = {0.5, 0.5};
  box(lo, hi, n, -4, 4);
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, n);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  o.seed = 99;
  o.max_restarts = 0;
  o.tolfun = 1e-20;
  cma_run run;
  run_cmaes(&o, sphere_with_failures, centre, 0, &run);
  EXPECT_ABS(run.best_x[0], 0.5, 1e-6);
  EXPECT_ABS(run.best_x[1], 0.5, 1e-6);
  EXPECT_TRUE(isfinite(run.best_f));
  EXPECT_EQ_INT(run.failed_best, 0);

  // a generation in which every evaluation failed leaves the distribution as it was, and the
  // next generation has other points
  mbs_error err;
  mbs_cmaes* c = mbs_cmaes_create(&o, &err);
  if (!c) return;
  const int lambda = mbs_cmaes_population(c);
  double* x = malloc((size_t)lambda * n * sizeof(double));
  double* x2 = malloc((size_t)lambda * n * sizeof(double));
  double* f = malloc((size_t)lambda * sizeof(double));
  EXPECT_OK(mbs_cmaes_ask(c, x, &err));
  for (int k = 0; k < lambda; k++) f[k] = k % 2 ? NAN : INFINITY;
  EXPECT_OK(mbs_cmaes_tell(c, f, &err));
  EXPECT_TRUE(c->sigma == o.sigma0 && c->C[0] == 1 && c->C[1] == 0 && c->C[3] == 1);
  EXPECT_NEAR(c->log.mean[0], 0.9, 1e-15);
  EXPECT_TRUE(isnan(c->log.best_f_generation) && c->log.best_f == INFINITY);
  EXPECT_EQ_INT(c->log.generation, 1);
  EXPECT_EQ_INT(c->log.evaluations, lambda);
  EXPECT_OK(mbs_cmaes_ask(c, x2, &err));
  EXPECT_TRUE(memcmp(x, x2, (size_t)lambda * n * sizeof(double)) != 0);
  free(x), free(x2), free(f);
  mbs_cmaes_free(c);
}

// Rastrigin n = 2 from a local well at (4, 4) with a small step, over 10 seeds: a single run
// mostly stays in a local minimum (the nearest non-global wells are at f ~ 1, 2, ...), while
// IPOP's larger populations find the global one at 0 every time
static void test_cmaes_restarts(void) {
  const int n = 2, nseed = 10;
  double lo[2], hi[2];
  const double x0[2] = {3.98, 3.98};
  box(lo, hi, n, -5.12, 5.12);
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, n);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  o.sigma0 = 0.07;  // 0.7 in x: about the width of a well
  o.f_target = 1e-12;
  int global = 0, local = 0, restarted = 0;
  long evals = 0;
  for (int s = 0; s < nseed; s++) {
    o.seed = 100 + s;
    o.max_restarts = 9;
    cma_run run;
    run_cmaes(&o, rastrigin, NULL, 1e-12, &run);
    global += run.best_f <= 1e-12 && fabs(run.best_x[0]) < 1e-6 && fabs(run.best_x[1]) < 1e-6;
    restarted += run.restarts > 0;
    evals += run.evaluations;
    EXPECT_EQ_INT(run.outside, 0);
    EXPECT_TRUE(run.evaluations <= mbs_cmaes_max_evaluations(&o));
    o.max_restarts = 0;
    run_cmaes(&o, rastrigin, NULL, 1e-12, &run);
    local += run.best_f > 0.9;
  }
  printf("  Rastrigin n=2, %d seeds: global minimum %d times with IPOP (%d needed restarts, %ld "
         "evaluations in all), local minimum %d times without restarts\n", nseed, global,
         restarted, evals, local);
  EXPECT_EQ_INT(global, nseed);
  EXPECT_TRUE(local >= nseed / 2);
  EXPECT_TRUE(restarted >= nseed / 2);
}

// the evaluation bound: sum over runs of lambda 2^r times the run's generation limit
static void test_cmaes_bound(void) {
  double lo[2], hi[2];
  const double x0[2] = {0, 0};
  box(lo, hi, 2, -1, 1);
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, 2);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  o.lambda = 10;
  o.max_generations = 100;
  o.max_restarts = 2;
  EXPECT_EQ_INT(mbs_cmaes_max_evaluations(&o), 10 * 100 + 20 * 100 + 40 * 100);
  // Hansen's default limit 100 + 150 (n + 3)^2 / sqrt(lambda), n = 2, lambda = 6 then 12
  o.lambda = 0;
  o.max_generations = 0;
  o.max_restarts = 1;
  const long g6 = 100 + (long)ceil(3750 / sqrt(6.0)), g12 = 100 + (long)ceil(3750 / sqrt(12.0));
  EXPECT_EQ_INT(mbs_cmaes_max_evaluations(&o), 6 * g6 + 12 * g12);
  // bad options are refused with a message
  mbs_error err;
  mbs_error_clear(&err);
  hi[1] = -1;
  EXPECT_TRUE(mbs_cmaes_create(&o, &err) == NULL);
  EXPECT_EQ_INT(err.code, MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "bounds of parameter 1") != NULL);
  EXPECT_EQ_INT(mbs_cmaes_max_evaluations(&o), -1);
}

// record a run: generation g's points and values; restart after generation `restart_at`
typedef struct cma_record {
  int ngen;
  int lambda[64];
  double* x[64];
  double* f[64];
} cma_record;

static void record_run(const mbs_cmaes_options* o, int ngen, int restart_at, cma_record* rec) {
  mbs_error err;
  mbs_cmaes* c = mbs_cmaes_create(o, &err);
  const int n = o->n;
  rec->ngen = ngen;
  for (int g = 0; g < ngen; g++) {
    if (g == restart_at) EXPECT_OK(mbs_cmaes_restart(c, &err));
    const int lam = rec->lambda[g] = mbs_cmaes_population(c);
    rec->x[g] = malloc((size_t)lam * n * sizeof(double));
    rec->f[g] = malloc((size_t)lam * sizeof(double));
    EXPECT_OK(mbs_cmaes_ask(c, rec->x[g], &err));
    for (int k = 0; k < lam; k++) rec->f[g][k] = rosenbrock(rec->x[g] + k * n, n, NULL);
    if (g % 7 == 3) rec->f[g][1] = NAN;  // a failed evaluation now and then
    EXPECT_OK(mbs_cmaes_tell(c, rec->f[g], &err));
  }
  mbs_cmaes_free(c);
}

static void free_record(cma_record* rec) {
  for (int g = 0; g < rec->ngen; g++) free(rec->x[g]), free(rec->f[g]);
}

// two runs with the same seed are bit-identical; a run re-created and replayed from its
// recorded values (tells only, and the restart where it happened) continues bit-identically
static void test_cmaes_determinism(void) {
  const int n = 4;
  double lo[MAXN], hi[MAXN], x0[MAXN];
  box(lo, hi, n, -5, 5);
  for (int j = 0; j < n; j++) x0[j] = 0.5 * j;
  mbs_cmaes_options o;
  mbs_cmaes_default_options(&o, n);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  o.seed = 31337;
  cma_record a, b;
  record_run(&o, 40, 15, &a);
  record_run(&o, 40, 15, &b);
  int same = 1;
  for (int g = 0; g < 40; g++)
    same &= a.lambda[g] == b.lambda[g] &&
            memcmp(a.x[g], b.x[g], (size_t)a.lambda[g] * n * sizeof(double)) == 0;
  EXPECT_TRUE(same);
  EXPECT_TRUE(a.lambda[14] * 2 == a.lambda[15]);
  free_record(&b);

  // replay the first 22 generations (a restart among them), then ask the rest
  mbs_error err;
  mbs_cmaes* c = mbs_cmaes_create(&o, &err);
  for (int g = 0; g < 22; g++) {
    if (g == 15) EXPECT_OK(mbs_cmaes_restart(c, &err));
    EXPECT_OK(mbs_cmaes_tell(c, a.f[g], &err));
  }
  int cont = 1;
  double* x = malloc((size_t)a.lambda[39] * n * sizeof(double));
  for (int g = 22; g < 40; g++) {
    EXPECT_OK(mbs_cmaes_ask(c, x, &err));
    cont &= mbs_cmaes_population(c) == a.lambda[g] &&
            memcmp(x, a.x[g], (size_t)a.lambda[g] * n * sizeof(double)) == 0;
    EXPECT_OK(mbs_cmaes_ask(c, x, &err));  // asking twice gives the same points
    cont &= memcmp(x, a.x[g], (size_t)a.lambda[g] * n * sizeof(double)) == 0;
    EXPECT_OK(mbs_cmaes_tell(c, a.f[g], &err));
  }
  EXPECT_TRUE(cont);
  free(x);
  mbs_cmaes_free(c);

  // another seed gives other points
  o.seed = 31338;
  record_run(&o, 2, -1, &b);
  EXPECT_TRUE(memcmp(a.x[0], b.x[0], (size_t)a.lambda[0] * n * sizeof(double)) != 0);
  free_record(&b);
  free_record(&a);
}

//---------------------------------- Levenberg-Marquardt --------------------------------------

// y = a exp(-b t) + c at t_i = 4 i / (m - 1)
typedef struct expdata {
  int m;
  double t[64], y[64];
} expdata;

static double expmodel(const double* p, double t) { return p[0] * exp(-p[1] * t) + p[2]; }

static void exp_residuals(const expdata* d, const double* p, double* r) {
  for (int i = 0; i < d->m; i++) r[i] = expmodel(p, d->t[i]) - d->y[i];
}

static void exp_jacobian(const expdata* d, const double* p, double* J) {
  for (int i = 0; i < d->m; i++) {
    const double e = exp(-p[1] * d->t[i]);
    J[i * 3 + 0] = e;
    J[i * 3 + 1] = -p[0] * d->t[i] * e;
    J[i * 3 + 2] = 1;
  }
}

static void make_expdata(expdata* d, int m, const double* p) {
  d->m = m;
  for (int i = 0; i < m; i++) {
    d->t[i] = 4.0 * i / (m - 1);
    d->y[i] = expmodel(p, d->t[i]);
  }
}

typedef void (*residual_fn)(const void* ctx, const double* p, double* r);

static void exp_res(const void* ctx, const double* p, double* r) {
  exp_residuals(ctx, p, r);
}

// ask/evaluate/tell until the fit stops; returns the optimizer (the caller frees it)
static mbs_lm* run_lm(const mbs_lm_options* o, residual_fn f, const void* ctx) {
  mbs_error err;
  mbs_lm* lm = mbs_lm_create(o, &err);
  EXPECT_TRUE(lm != NULL);
  if (!lm) return NULL;
  const int cap = mbs_lm_max_batch(o);
  double* pts = malloc((size_t)cap * o->n * sizeof(double));
  double* res = malloc((size_t)cap * o->m * sizeof(double));
  long outside = 0;
  while (lm->stop == MBS_LM_RUNNING) {
    int count = 0;
    if (mbs_lm_ask(lm, pts, &count, &err) != MBS_OK) {
      EXPECT_TRUE(0);
      break;
    }
    for (int k = 0; k < count; k++) {
      for (int j = 0; j < o->n; j++)
        if (!(pts[k * o->n + j] >= o->lo[j] && pts[k * o->n + j] <= o->hi[j])) outside++;
      f(ctx, pts + k * o->n, res + (size_t)k * o->m);
    }
    if (mbs_lm_tell(lm, res, &err) != MBS_OK) {
      EXPECT_TRUE(0);
      break;
    }
  }
  EXPECT_EQ_INT(outside, 0);
  free(pts);
  free(res);
  return lm;
}

static int converged(int stop) {
  return stop == MBS_LM_FTOL || stop == MBS_LM_XTOL || stop == MBS_LM_GTOL;
}

// the finite-difference Jacobian against the analytic one: central inside the box, one-sided
// three-point at a bound, forward
static void test_lm_jacobian(void) {
  expdata d;
  const double p[3] = {2.5, 1.3, 0.4};
  make_expdata(&d, 30, p);
  const double lo[3] = {0, 1.3, -1}, hi[3] = {2.5, 5, 1};  // a at its upper, b at its lower bound
  const double* typ = NULL;
  double pts[7 * 3], res[7 * 30], J[30 * 3], Ja[30 * 3];
  exp_jacobian(&d, p, Ja);
  for (int forward = 0; forward <= 1; forward++) {
    const double h = forward ? sqrt(DBL_EPSILON) : cbrt(DBL_EPSILON);
    mbs_lm_stencil(3, p, lo, hi, typ, h, forward, pts);
    const int np = mbs_lm_stencil_size(3, forward);
    EXPECT_EQ_INT(np, forward ? 4 : 7);
    int inside = 1;
    for (int k = 0; k < np; k++) {
      for (int j = 0; j < 3; j++) inside &= pts[k * 3 + j] >= lo[j] && pts[k * 3 + j] <= hi[j];
      exp_residuals(&d, pts + k * 3, res + k * 30);
    }
    EXPECT_TRUE(inside);
    // a's points are below it, b's above it, c's on both sides
    if (!forward) {
      EXPECT_TRUE(pts[1 * 3 + 0] < 2.5 && pts[2 * 3 + 0] < pts[1 * 3 + 0]);
      EXPECT_TRUE(pts[3 * 3 + 1] > 1.3 && pts[4 * 3 + 1] > pts[3 * 3 + 1]);
      EXPECT_TRUE(pts[5 * 3 + 2] < 0.4 && pts[6 * 3 + 2] > 0.4);
    }
    mbs_error err;
    EXPECT_OK(mbs_lm_jacobian(3, 30, forward, pts, res, J, &err));
    double worst = 0;
    for (int i = 0; i < 30 * 3; i++)
      worst = fmax(worst, fabs(J[i] - Ja[i]) / fmax(1e-3, fabs(Ja[i])));
    printf("  Jacobian (%s): worst relative error %.2g\n", forward ? "forward" : "central",
           worst);
    EXPECT_TRUE(worst < (forward ? 1e-6 : 1e-7));
  }
  // a fixed parameter (lo == hi) has a zero column; a non-finite residual is refused
  const double lo2[3] = {0, 1.3, -1}, hi2[3] = {5, 1.3, 1};
  mbs_lm_stencil(3, p, lo2, hi2, NULL, 1e-6, 0, pts);
  for (int k = 0; k < 7; k++) exp_residuals(&d, pts + k * 3, res + k * 30);
  mbs_error err;
  EXPECT_OK(mbs_lm_jacobian(3, 30, 0, pts, res, J, &err));
  double col = 0;
  for (int i = 0; i < 30; i++) col += fabs(J[i * 3 + 1]);
  EXPECT_TRUE(col == 0);
  res[4 * 30 + 7] = NAN;
  EXPECT_EQ_INT(mbs_lm_jacobian(3, 30, 0, pts, res, J, &err), MBS_ERR_NAN);
  EXPECT_TRUE(strstr(err.message, "finite-difference point 4") != NULL);
}

// the damped step of a straight-line fit y = alpha + beta t against the closed-form 2x2 solve
// of (JᵀJ + lambda diag(JᵀJ)) delta = -Jᵀr; tiny damping gives the least-squares line
static void test_lm_step(void) {
  const int m = 6;
  const double t[6] = {0, 1, 2, 3, 4, 5}, y[6] = {1.1, 2.9, 5.2, 7.1, 8.8, 11.2};
  double J[12], r[6];
  const double x[2] = {0.5, 1.0}, lo[2] = {-100, -100}, hi[2] = {100, 100};
  for (int i = 0; i < m; i++) {
    J[2 * i] = 1, J[2 * i + 1] = t[i];
    r[i] = x[0] + x[1] * t[i] - y[i];
  }
  double A11 = 0, A12 = 0, A22 = 0, g1 = 0, g2 = 0;
  for (int i = 0; i < m; i++) {
    A11 += 1, A12 += t[i], A22 += t[i] * t[i];
    g1 += r[i], g2 += t[i] * r[i];
  }
  const double lambdas[3] = {1e-12, 0.1, 10};
  mbs_error err;
  for (int k = 0; k < 3; k++) {
    const double l = lambdas[k];
    const double a = A11 * (1 + l), b = A12, c = A22 * (1 + l);
    const double det = a * c - b * b;
    const double d1 = (-g1 * c + g2 * b) / det, d2 = (-g2 * a + g1 * b) / det;
    double xn[2];
    EXPECT_OK(mbs_lm_step(m, 2, J, r, x, lo, hi, l, xn, &err));
    EXPECT_NEAR(xn[0], x[0] + d1, 1e-12);
    EXPECT_NEAR(xn[1], x[1] + d2, 1e-12);
  }
  // the least-squares line: beta = Sty / Stt, alpha = mean(y) - beta mean(t)
  double tm = 2.5, ym = 0, Sty = 0, Stt = 0;
  for (int i = 0; i < m; i++) ym += y[i] / m;
  for (int i = 0; i < m; i++) Sty += (t[i] - tm) * (y[i] - ym), Stt += (t[i] - tm) * (t[i] - tm);
  double xn[2];
  EXPECT_OK(mbs_lm_step(m, 2, J, r, x, lo, hi, 1e-14, xn, &err));
  EXPECT_NEAR(xn[1], Sty / Stt, 1e-10);
  EXPECT_NEAR(xn[0], ym - Sty / Stt * tm, 1e-10);
  // the trial points: dampings lambda {1/10, 1, 10}, steps shrinking as the damping grows
  double pts[6], lam[3];
  EXPECT_OK(mbs_lm_trial_points(m, 2, J, r, x, lo, hi, 1.0, 10, 3, pts, lam, &err));
  EXPECT_NEAR(lam[0], 0.1, 1e-15);
  EXPECT_NEAR(lam[1], 1, 1e-15);
  EXPECT_NEAR(lam[2], 10, 1e-15);
  const double s0 = hypot(pts[0] - x[0], pts[1] - x[1]), s1 = hypot(pts[2] - x[0], pts[3] - x[1]),
               s2 = hypot(pts[4] - x[0], pts[5] - x[1]);
  EXPECT_TRUE(s0 > s1 && s1 > s2 && s2 > 0);
  // a parameter on its bound with the descent direction -Jᵀr pointing out of the box is held
  // while the other one is solved for alone: alpha stays at its upper bound 0.5 (the line
  // through the data starts near 1), beta minimizes sum (0.5 + beta t - y)^2
  const double hi2[2] = {0.5, 100};
  EXPECT_TRUE(g1 < 0);
  EXPECT_OK(mbs_lm_step(m, 2, J, r, x, lo, hi2, 1e-14, xn, &err));
  double Sy = 0, St = 0;
  for (int i = 0; i < m; i++) Sy += t[i] * (y[i] - 0.5), St += t[i] * t[i];
  EXPECT_TRUE(xn[0] == 0.5);
  EXPECT_NEAR(xn[1], Sy / St, 1e-10);
  EXPECT_EQ_INT(mbs_lm_step(m, 2, J, r, x, lo, hi, 0, xn, &err), MBS_ERR_ARGUMENT);
}

// exact data from a start 30 % off: (a, b, c) recovered to 1e-8, central and forward stencils;
// the fit re-created and replayed from its recorded residuals continues bit-identically
static void test_lm_exact(void) {
  expdata d;
  const double p[3] = {2.5, 1.3, 0.4};
  make_expdata(&d, 40, p);
  const double lo[3] = {0, 0, -5}, hi[3] = {10, 10, 5}, x0[3] = {1.3 * 2.5, 0.7 * 1.3, 1.3 * 0.4};
  for (int forward = 0; forward <= 1; forward++) {
    mbs_lm_options o;
    mbs_lm_default_options(&o, 3, 40);
    o.lo = lo, o.hi = hi, o.x0 = x0;
    o.forward = forward;
    mbs_lm* lm = run_lm(&o, exp_res, &d);
    if (!lm) return;
    printf("  LM exact (%s): %d iterations, %ld evaluations, cost %.2g, stop %s\n",
           forward ? "forward" : "central", lm->iteration, lm->evaluations, lm->cost,
           mbs_lm_stop_text(lm->stop));
    EXPECT_TRUE(converged(lm->stop));
    for (int j = 0; j < 3; j++) EXPECT_NEAR(lm->x[j], p[j], 1e-8);
    mbs_lm_free(lm);
  }

  // record every batch of a fit, then replay the first half by tells only
  mbs_lm_options o;
  mbs_lm_default_options(&o, 3, 40);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  mbs_error err;
  mbs_lm* a = mbs_lm_create(&o, &err);
  const int cap = mbs_lm_max_batch(&o);
  enum { MAXB = 64 };
  double* pts[MAXB];
  double* res[MAXB];
  int cnt[MAXB], nb = 0;
  while (a->stop == MBS_LM_RUNNING && nb < MAXB) {
    pts[nb] = malloc((size_t)cap * 3 * sizeof(double));
    res[nb] = malloc((size_t)cap * 40 * sizeof(double));
    EXPECT_OK(mbs_lm_ask(a, pts[nb], &cnt[nb], &err));
    for (int k = 0; k < cnt[nb]; k++) exp_residuals(&d, pts[nb] + 3 * k, res[nb] + 40 * k);
    EXPECT_OK(mbs_lm_tell(a, res[nb], &err));
    nb++;
  }
  mbs_lm* b = mbs_lm_create(&o, &err);
  for (int k = 0; k < nb / 2; k++) EXPECT_OK(mbs_lm_tell(b, res[k], &err));
  int same = 1;
  double* q = malloc((size_t)cap * 3 * sizeof(double));
  for (int k = nb / 2; k < nb; k++) {
    int c = 0;
    EXPECT_OK(mbs_lm_ask(b, q, &c, &err));
    same &= c == cnt[k] && memcmp(q, pts[k], (size_t)c * 3 * sizeof(double)) == 0;
    EXPECT_OK(mbs_lm_tell(b, res[k], &err));
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(b->stop == a->stop && memcmp(a->x, b->x, 3 * sizeof(double)) == 0);
  EXPECT_TRUE(nb >= 4);
  // asking once the fit has stopped is refused
  int c = 0;
  EXPECT_EQ_INT(mbs_lm_ask(b, q, &c, &err), MBS_ERR_ARGUMENT);
  free(q);
  for (int k = 0; k < nb; k++) free(pts[k]), free(res[k]);
  mbs_lm_free(a);
  mbs_lm_free(b);
}

// no improving trial: x stays and the damping rises by factor^K past the largest tried
static void test_lm_damping(void) {
  expdata d;
  const double p[3] = {2.5, 1.3, 0.4};
  make_expdata(&d, 20, p);
  const double lo[3] = {0, 0, -5}, hi[3] = {10, 10, 5}, x0[3] = {3, 1, 0.5};
  mbs_lm_options o;
  mbs_lm_default_options(&o, 3, 20);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  mbs_error err;
  mbs_lm* lm = mbs_lm_create(&o, &err);
  double pts[7 * 3], res[7 * 20];
  int c = 0;
  EXPECT_OK(mbs_lm_ask(lm, pts, &c, &err));
  EXPECT_EQ_INT(c, 7);
  for (int k = 0; k < c; k++) exp_residuals(&d, pts + 3 * k, res + 20 * k);
  EXPECT_OK(mbs_lm_tell(lm, res, &err));
  EXPECT_EQ_INT(lm->phase, MBS_LM_PHASE_TRIALS);
  EXPECT_OK(mbs_lm_ask(lm, pts, &c, &err));
  EXPECT_EQ_INT(c, 3);
  EXPECT_NEAR(lm->lambdas[0], 1e-4, 1e-15);
  EXPECT_NEAR(lm->lambdas[2], 1e-2, 1e-15);
  for (int k = 0; k < 3 * 20; k++) res[k] = NAN;  // every trial failed
  EXPECT_OK(mbs_lm_tell(lm, res, &err));
  EXPECT_TRUE(lm->x[0] == 3 && lm->x[1] == 1 && lm->x[2] == 0.5);
  EXPECT_NEAR(lm->lambda, 1e-3 * 1e3, 1e-12);
  EXPECT_EQ_INT(lm->phase, MBS_LM_PHASE_TRIALS);
  // then a success at the middle trial lowers the damping below it (lambda 1 -> 0.1)
  EXPECT_OK(mbs_lm_ask(lm, pts, &c, &err));
  for (int k = 0; k < 3; k++) exp_residuals(&d, pts + 3 * k, res + 20 * k);
  for (int i = 0; i < 20; i++) res[0 * 20 + i] = NAN, res[2 * 20 + i] *= 10;
  EXPECT_OK(mbs_lm_tell(lm, res, &err));
  EXPECT_NEAR(lm->lambda, 0.1, 1e-12);
  EXPECT_TRUE(memcmp(lm->x, pts + 3, 3 * sizeof(double)) == 0);
  EXPECT_EQ_INT(lm->phase, MBS_LM_PHASE_JACOBIAN);
  mbs_lm_free(lm);
}

// the true b below the lower bound: the fit ends on the bound, and (a, c) are the linear least
// squares of y ~ a exp(-b_lo t) + c (closed form)
static void test_lm_bound(void) {
  expdata d;
  const double p[3] = {2.5, 1.3, 0.4};
  make_expdata(&d, 40, p);
  const double lo[3] = {0, 1.6, -5}, hi[3] = {10, 3, 5}, x0[3] = {3, 2.5, 0.5};
  mbs_lm_options o;
  mbs_lm_default_options(&o, 3, 40);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  mbs_lm* lm = run_lm(&o, exp_res, &d);
  if (!lm) return;
  printf("  LM with b on its bound: (%.10g, %.10g, %.10g), stop %s\n", lm->x[0], lm->x[1],
         lm->x[2], mbs_lm_stop_text(lm->stop));
  EXPECT_TRUE(converged(lm->stop));
  EXPECT_TRUE(lm->x[1] == 1.6);
  double S11 = 0, S12 = 0, S22 = 0, b1 = 0, b2 = 0;
  for (int i = 0; i < d.m; i++) {
    const double e = exp(-1.6 * d.t[i]);
    S11 += e * e, S12 += e, S22 += 1, b1 += e * d.y[i], b2 += d.y[i];
  }
  const double det = S11 * S22 - S12 * S12;
  EXPECT_NEAR(lm->x[0], (b1 * S22 - b2 * S12) / det, 1e-8);
  EXPECT_NEAR(lm->x[2], (S11 * b2 - S12 * b1) / det, 1e-8);
  EXPECT_TRUE(lm->g[1] > 0);  // the cost would fall below the bound
  mbs_lm_free(lm);
}

// the covariance of a straight line y = alpha + beta t (closed form): Var(beta) = s^2 / Stt,
// Var(alpha) = s^2 sum t^2 / (m Stt), Cov = -s^2 tbar / Stt, s^2 = |r|^2 / (m - 2)
static void test_lm_covariance_line(void) {
  const int m = 7;
  const double t[7] = {0, 0.5, 1.5, 2, 3, 4.5, 6};
  double J[14], r[7], rr = 0, tm = 0, Stt = 0, St2 = 0;
  for (int i = 0; i < m; i++) {
    J[2 * i] = 1, J[2 * i + 1] = t[i];
    r[i] = 0.1 * sin(3.0 * i);
    rr += r[i] * r[i];
    tm += t[i] / m;
    St2 += t[i] * t[i];
  }
  for (int i = 0; i < m; i++) Stt += (t[i] - tm) * (t[i] - tm);
  double cov[4], cu[4];
  int ok[2], rank = 0;
  mbs_error err;
  EXPECT_OK(mbs_lm_covariance(m, 2, J, r, 0, cov, cu, ok, &rank, &err));
  EXPECT_EQ_INT(rank, 2);
  EXPECT_TRUE(ok[0] && ok[1]);
  EXPECT_NEAR(cu[3], 1 / Stt, 1e-13);
  EXPECT_NEAR(cu[0], St2 / (m * Stt), 1e-13);
  EXPECT_NEAR(cu[1], -tm / Stt, 1e-13);
  EXPECT_NEAR(cu[2], -tm / Stt, 1e-13);
  const double s2 = rr / (m - 2);
  for (int k = 0; k < 4; k++) EXPECT_NEAR(cov[k], s2 * cu[k], 1e-14);
  // no degrees of freedom left: the scaled covariance is NaN, the unscaled one still given
  EXPECT_OK(mbs_lm_covariance(2, 2, J, r, 0, cov, cu, ok, &rank, &err));
  EXPECT_TRUE(isnan(cov[0]) && isfinite(cu[0]));
}

// a product a b exp(-c t): a and b are not identifiable, c is, with the variance of the
// reparameterized model p exp(-c t), p = a b (closed form from its analytic Jacobian); a
// parameter without effect is not identifiable either
static void prod_res(const void* ctx, const double* p, double* r) {
  const expdata* d = ctx;
  for (int i = 0; i < d->m; i++) r[i] = p[0] * p[1] * exp(-p[2] * d->t[i]) - d->y[i];
}

static void test_lm_identifiability(void) {
  expdata d;
  const double pe[3] = {2.0, 1.3, 0.0};  // y = 2 exp(-1.3 t)
  make_expdata(&d, 30, pe);
  for (int i = 0; i < d.m; i++) d.y[i] += 0.01 * sin(7.0 * i);  // a non-zero residual
  const double lo[3] = {0.1, 0.1, 0}, hi[3] = {10, 10, 5}, x0[3] = {1, 1.5, 1};
  mbs_lm_options o;
  mbs_lm_default_options(&o, 3, 30);
  o.lo = lo, o.hi = hi, o.x0 = x0;
  mbs_lm* lm = run_lm(&o, prod_res, &d);
  if (!lm) return;
  printf("  LM with a product: a b = %.10g, c = %.10g, stop %s\n", lm->x[0] * lm->x[1], lm->x[2],
         mbs_lm_stop_text(lm->stop));
  EXPECT_TRUE(lm->stop != MBS_LM_RUNNING);
  double cov[9], cu[9];
  int ok[3], rank = 0;
  mbs_error err;
  EXPECT_OK(mbs_lm_covariance(30, 3, lm->J, lm->r, 0, cov, cu, ok, &rank, &err));
  EXPECT_EQ_INT(rank, 2);
  EXPECT_TRUE(!ok[0] && !ok[1] && ok[2]);
  EXPECT_TRUE(isnan(cov[0]) && isnan(cov[4]) && isnan(cov[1]) && isnan(cov[2 * 3 + 0]));
  // the reparameterized fit (p, c): (JᵀJ)^-1 from the analytic Jacobian at the fit
  const double pp = lm->x[0] * lm->x[1], c = lm->x[2];
  double A11 = 0, A12 = 0, A22 = 0;
  for (int i = 0; i < d.m; i++) {
    const double e = exp(-c * d.t[i]), jp = e, jc = -pp * d.t[i] * e;
    A11 += jp * jp, A12 += jp * jc, A22 += jc * jc;
  }
  EXPECT_NEAR(cu[8], A11 / (A11 * A22 - A12 * A12), 1e-5);
  mbs_lm_free(lm);

  // a zero column (a parameter the residuals do not depend on)
  double J[5 * 2], r[5];
  for (int i = 0; i < 5; i++) J[2 * i] = 1 + i, J[2 * i + 1] = 0, r[i] = 0.1 * i;
  EXPECT_OK(mbs_lm_covariance(5, 2, J, r, 0, cov, cu, ok, &rank, &err));
  EXPECT_EQ_INT(rank, 1);
  EXPECT_TRUE(ok[0] && !ok[1]);
  EXPECT_NEAR(cu[0], 1 / 55.0, 1e-14);
  EXPECT_TRUE(isnan(cu[1]) && isnan(cu[3]));
}

// noisy data: the covariance estimate against sigma^2 (JᵀJ)^-1 at the truth (analytic J), and
// the Monte-Carlo covariance of refits over noise draws (mbs_rng keyed (seed, draw, 0))
static void test_lm_covariance_mc(void) {
  const int ndraw = quick() ? 200 : 1000;
  const double sigma = 0.02;
  expdata d0;
  const double p[3] = {2.5, 1.3, 0.4};
  make_expdata(&d0, 40, p);
  const int m = 40;
  // the truth: sigma^2 (JᵀJ)^-1 at p
  double J[40 * 3], A[9] = {0}, T[9];
  exp_jacobian(&d0, p, J);
  for (int i = 0; i < m; i++)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) A[a * 3 + b] += J[i * 3 + a] * J[i * 3 + b];
  {  // 3x3 inverse by cofactors
    const double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                       A[2] * (A[3] * A[7] - A[4] * A[6]);
    T[0] = (A[4] * A[8] - A[5] * A[7]) / det, T[1] = (A[2] * A[7] - A[1] * A[8]) / det;
    T[2] = (A[1] * A[5] - A[2] * A[4]) / det, T[3] = (A[5] * A[6] - A[3] * A[8]) / det;
    T[4] = (A[0] * A[8] - A[2] * A[6]) / det, T[5] = (A[2] * A[3] - A[0] * A[5]) / det;
    T[6] = (A[3] * A[7] - A[4] * A[6]) / det, T[7] = (A[1] * A[6] - A[0] * A[7]) / det;
    T[8] = (A[0] * A[4] - A[1] * A[3]) / det;
    for (int k = 0; k < 9; k++) T[k] *= sigma * sigma;
  }
  const double lo[3] = {0, 0, -5}, hi[3] = {10, 10, 5}, x0[3] = {1.3 * 2.5, 0.7 * 1.3, 1.3 * 0.4};
  double mean[3] = {0}, mc[9] = {0}, est[9] = {0}, unscaled[9] = {0};
  double* fits = malloc((size_t)ndraw * 3 * sizeof(double));
  int all_converged = 1;
  for (int k = 0; k < ndraw; k++) {
    expdata d = d0;
    mbs_rng g = mbs_rng_make(2024, (uint64_t)k, 0);
    for (int i = 0; i < m; i++) d.y[i] += sigma * mbs_rng_normal(&g);
    mbs_lm_options o;
    mbs_lm_default_options(&o, 3, m);
    o.lo = lo, o.hi = hi, o.x0 = x0;
    mbs_lm* lm = run_lm(&o, exp_res, &d);
    if (!lm) break;
    all_converged &= converged(lm->stop);
    double cov[9], cu[9];
    int ok[3], rank;
    mbs_error err;
    EXPECT_OK(mbs_lm_covariance(m, 3, lm->J, lm->r, 0, cov, cu, ok, &rank, &err));
    for (int a = 0; a < 9; a++) est[a] += cov[a] / ndraw, unscaled[a] += cu[a] / ndraw;
    for (int j = 0; j < 3; j++) fits[k * 3 + j] = lm->x[j], mean[j] += lm->x[j] / ndraw;
    mbs_lm_free(lm);
  }
  EXPECT_TRUE(all_converged);
  for (int k = 0; k < ndraw; k++)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        mc[a * 3 + b] += (fits[k * 3 + a] - mean[a]) * (fits[k * 3 + b] - mean[b]) / (ndraw - 1);
  free(fits);
  printf("  LM covariance, %d refits: standard deviations (MC, estimate, truth):\n", ndraw);
  for (int j = 0; j < 3; j++)
    printf("    %c: %.5g %.5g %.5g\n", "abc"[j], sqrt(mc[j * 4]), sqrt(est[j * 4]),
           sqrt(T[j * 4]));
  // the relative standard error of a variance from N draws is sqrt(2 / N): 4.5 % for 1000
  const double tol_mc = quick() ? 0.35 : 0.2;
  for (int j = 0; j < 3; j++) {
    EXPECT_NEAR(mc[j * 4] / T[j * 4], 1, tol_mc);
    EXPECT_NEAR(est[j * 4] / mc[j * 4], 1, tol_mc);       // the estimate against Monte Carlo
    EXPECT_NEAR(est[j * 4] / T[j * 4], 1, 0.1);            // E[s^2] = sigma^2
    EXPECT_NEAR(unscaled[j * 4] * sigma * sigma / T[j * 4], 1, 0.02);
    for (int i = 0; i < j; i++) {
      const double rmc = mc[i * 3 + j] / sqrt(mc[i * 4] * mc[j * 4]);
      const double rt = T[i * 3 + j] / sqrt(T[i * 4] * T[j * 4]);
      EXPECT_ABS(rmc, rt, quick() ? 0.25 : 0.1);  // standard error (1 - r^2) / sqrt(N)
    }
  }
}

int main(void) {
  printf("CMA-ES\n");
  test_cmaes_parameters();
  test_cmaes_keys();
  test_cmaes_rosenbrock(2);
  test_cmaes_rosenbrock(5);
  test_cmaes_ellipsoid();
  test_cmaes_failures();
  test_cmaes_restarts();
  test_cmaes_bound();
  test_cmaes_determinism();
  printf("Levenberg-Marquardt\n");
  test_lm_jacobian();
  test_lm_step();
  test_lm_exact();
  test_lm_damping();
  test_lm_bound();
  test_lm_covariance_line();
  test_lm_identifiability();
  test_lm_covariance_mc();
  return mbs_test_finish("test_optim");
}
