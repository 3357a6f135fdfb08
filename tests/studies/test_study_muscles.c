// Muscles in studies (io/spec.c, studies/plan.c, studies/sample.c) on OpenSim's tug_of_war: two
// Thelen 2003 muscles pulling a 20 kg block along a slider, their paths along the slider (run
// with --data DIR, the folder holding models/; exits 77, skipped, when it is absent). The
// studies run in this process through mbs_study_run and their files are read back with
// include/mbs/results.h. The truths are Thelen's published curves and activation dynamics,
// solved and integrated here:
// - the model's parameters under each muscle's own name (what mbstudy model params lists);
// - a Monte Carlo study varying muscle1's max_isometric_force and both muscles' excitations
//   (and muscle2's activation time constant): at t = 0 each sample's recorded tendon forces are
//   the static equilibria of its own parameters (f_V = 1, no pennation, the block at 0); after
//   40 s the block rests where the two colinear tendon forces balance (equal recorded forces,
//   the position and force of the static balance solved here by bisection); the recorded
//   activations follow da/dt = (e - a) / tau(a, e) toward each sample's excitation; the recorded
//   excitation is the sample's; components and units attributes; scalars of a recorded muscle
//   output (max, final) equal the reductions of its trajectory, and one of an unrecorded output
//   (mean excitation) the sample's excitation;
// - patterns: "/forceset/*/max_isometric_force" as a scale factor and "/forceset/muscle?/
//   excitation" set every muscle's, on a grid;
// - scalars in other study types: a local sensitivity of the settled tendon force to muscle1's
//   excitation against the derivative of the static balance, and a fit of muscle1's
//   excitation to the settled tendon force of the static balance at e = 0.6;
// - bad specs: each fails with its message and line.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/results.h"
#include "mbs/spec.h"
#include "mbs/study.h"
#include "mbs_test.h"

static const char* data = NULL;
static char model[4096];
static char dir[4096];
static int quick = 0;  // MBS_TEST_QUICK: fewer samples (valgrind)

//---------------------------------- Thelen 2003 ------------------------------------------------

// the curves with OpenSim's defaults (e0^M 0.6, k^PE 5, gamma 0.45, e0^T 0.04)
static double thelen_fal(double l) { return exp(-(l - 1) * (l - 1) / 0.45); }
static double thelen_fpe(double l) {
  return l > 1 ? (exp(5 * (l - 1) / 0.6) - 1) / (exp(5.0) - 1) : 0;
}
static double thelen_fse(double strain) {
  const double e0 = 0.04, e3 = exp(3.0);
  const double etoe = 99 * e0 * e3 / (166 * e3 - 67), ftoe = 0.33;
  const double klin = 0.67 / (e0 - etoe);
  if (strain <= 0) return 0;
  if (strain <= etoe) return ftoe / (e3 - 1) * (exp(3 * strain / etoe) - 1);
  return klin * (strain - etoe) + ftoe;
}

// tug_of_war's muscles: optimal fiber length 0.1 m, tendon slack length 0.2 m, no pennation
static const double lopt = 0.1, lst = 0.2;

// the tendon force of a muscle at rest (fiber velocity 0: f_V = 1) along a path of length L
static double static_force(double L, double a, double fmax) {
  double lo = 0.01 * lopt, hi = L - lst;  // fiber length: the tendon at least slack
  if (hi <= lo) return 0;
  for (int it = 0; it < 200; it++) {
    const double lm = 0.5 * (lo + hi);
    const double fm = a * thelen_fal(lm / lopt) + thelen_fpe(lm / lopt);
    const double ft = thelen_fse((L - lm - lst) / lst);
    if (fm > ft) hi = lm;  // a longer tendon (shorter fiber) pulls harder
    else lo = lm;
  }
  return fmax * thelen_fse((L - 0.5 * (lo + hi) - lst) / lst);
}

// The block at rest: muscle 1 (from z = -0.35 on Ground to the block's z - 0.05) and muscle 2
// (from z = 0.35 to z + 0.05) both lie along the slider, so at block position x their lengths
// are 0.3 + x and 0.3 - x; their tendon forces balance at x (returned), the force in *force.
static double static_balance(double a1, double f1, double a2, double f2, double* force) {
  double lo = -0.25, hi = 0.25, x = 0;
  for (int it = 0; it < 200; it++) {
    x = 0.5 * (lo + hi);
    const double net = static_force(0.3 - x, a2, f2) - static_force(0.3 + x, a1, f1);
    if (net > 0) lo = x;  // pulled toward +z: the balance lies further on
    else hi = x;
  }
  *force = static_force(0.3 + x, a1, f1);
  return x;
}

// Thelen's activation dynamics (OpenSim's clamp of a and e to [a_min, 1]): a after t seconds
// from a0, by RK4 in steps of at most 1e-5 s
static double activation_after(double a0, double e, double tau_act, double tau_deact, double t) {
  const double amin = 0.01;
  const double u = fmin(fmax(e, amin), 1);
#define ADOT(a)                                                                     \
  ((u - fmin(fmax((a), amin), 1)) /                                                 \
   (u > fmin(fmax((a), amin), 1) ? tau_act * (0.5 + 1.5 * fmin(fmax((a), amin), 1)) \
                                 : tau_deact / (0.5 + 1.5 * fmin(fmax((a), amin), 1))))
  const long n = (long)ceil(t / 1e-5 - 1e-9);
  const double h = n > 0 ? t / (double)n : 0;
  double a = a0;
  for (long k = 0; k < n; k++) {
    const double k1 = ADOT(a), k2 = ADOT(a + 0.5 * h * k1), k3 = ADOT(a + 0.5 * h * k2),
                 k4 = ADOT(a + h * k3);
    a += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
#undef ADOT
  return a;
}

//---------------------------------- studies ----------------------------------------------------

// lines[0..n-1] as one text (line k of the file is lines[k - 1])
static char* join(const char* const* lines, int n) {
  size_t len = 1;
  for (int i = 0; i < n; i++) len += strlen(lines[i]) + 1;
  char* t = malloc(len);
  if (!t) return NULL;
  t[0] = '\0';
  for (int i = 0; i < n; i++) {
    strcat(t, lines[i]);
    strcat(t, "\n");
  }
  return t;
}

// the spec text `text` as <dir>/<name>.yaml, parsed (returns its status, message in err)
static int parse(const char* name, const char* text, mbs_study_spec** spec, mbs_error* err) {
  char path[4300];
  snprintf(path, sizeof(path), "%s/%s.yaml", dir, name);
  FILE* f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return mbs_spec_parse(text, path, spec, err);
}

// run the study of spec `text` (its output <dir>/<name>.h5); its status, the message in err
static int run(const char* name, const char* text, mbs_error* err) {
  mbs_study_spec* spec = NULL;
  int rc = parse(name, text, &spec, err);
  if (rc) return rc;
  mbs_study_options o;
  mbs_study_options_default(&o);
  o.quiet = 1;
  o.force = 1;
  o.log = stdout;
  mbs_study_result res;
  rc = mbs_study_run(spec, &o, &res, err);
  mbs_spec_free(spec);
  return rc;
}

static mbs_results* open_results(const char* name) {
  char path[4300];
  snprintf(path, sizeof(path), "%s/%s.h5", dir, name);
  mbs_error e;
  mbs_results* r = mbs_results_open_read(path, &e);
  if (!r) printf("%s: %s\n", path, e.message);
  return r;
}

// a dataset whole (NULL on failure: counted); dims[] its shape
static double* read_all(mbs_results* r, const char* ds, long* dims) {
  double* v = NULL;
  int rank = 0;
  mbs_error e;
  const int rc = mbs_results_read(r, ds, &v, dims, &rank, &e);
  EXPECT_OK(rc);
  if (rc) printf("%s: %s\n", ds, e.message);
  return rc ? NULL : v;
}

static int has_attribute(mbs_results* r, const char* ds, const char* key, const char* want) {
  char* v = NULL;
  mbs_error e;
  if (mbs_results_read_attribute(r, ds, key, &v, &e) || !v) return 0;
  const int same = !strcmp(v, want);
  if (!same) printf("%s: %s = '%s', expected '%s'\n", ds, key, v, want);
  free(v);
  return same;
}

// the component names of quantity q are exactly names[0..n-1]
static int has_components(mbs_results* r, const char* q, const char* const* names, int n) {
  char ds[300];
  snprintf(ds, sizeof(ds), "/trajectories/%s_components", q);
  char** v = NULL;
  int m = 0;
  mbs_error e;
  if (mbs_results_read_strings(r, ds, &v, &m, &e)) return 0;
  int same = m == n;
  for (int i = 0; i < m; i++) {
    same = same && !strcmp(v[i], names[i]);
    free(v[i]);
  }
  free(v);
  return same;
}

// every sample written and successful
static int all_good(mbs_results* r, long S) {
  long d[4];
  double* code = read_all(r, "/status/code", d);
  double* done = read_all(r, "/status/done", d);
  int ok = code && done && d[0] == S;
  for (long s = 0; ok && s < S; s++) ok = code[s] == 0 && done[s] == 1;
  free(code);
  free(done);
  return ok;
}

//---------------------------------- the model's parameters -------------------------------------

static void test_parameter_names(void) {
  mbs_error e;
  mbs_osim_model* m = mbs_osim_read(model, &e);
  EXPECT_TRUE(m != NULL);
  if (!m) {
    printf("%s: %s\n", model, e.message);
    return;
  }
  const mbs_system* sys = mbs_osim_system(m);
  // each muscle's properties under its own name, distinct from the other's
  static const char* const fields[] = {"max_isometric_force", "optimal_fiber_length",
                                       "tendon_slack_length", "activation_time_constant"};
  for (int k = 0; k < 4; k++) {
    char p1[200], p2[200];
    snprintf(p1, sizeof(p1), "/forceset/muscle1/%s", fields[k]);
    snprintf(p2, sizeof(p2), "/forceset/muscle2/%s", fields[k]);
    const mbs_param_info* i1 = mbs_system_find_param(sys, p1);
    const mbs_param_info* i2 = mbs_system_find_param(sys, p2);
    EXPECT_TRUE(i1 != NULL && i2 != NULL);
    if (!i1 || !i2) {
      printf("model parameters: %s %s, %s %s\n", p1, i1 ? "found" : "missing", p2,
             i2 ? "found" : "missing");
      continue;
    }
    EXPECT_TRUE(i1->index != i2->index);
  }
  int seen = 0;
  for (int b = 0; b < mbs_system_nparam_block(sys); b++)
    seen += !strcmp(mbs_system_param_block(sys, b)->path, "/forceset/muscle2/max_isometric_force");
  EXPECT_EQ_INT(seen, 1);
  // each muscle's excitation is a control of its own
  int n = 0;
  for (int c = 0; c < mbs_system_ncontrol(sys); c++) {
    const int f = mbs_control_force(sys, c);
    n += f >= 0 && !strcmp(mbs_force_kind(sys, f), "muscle");
  }
  EXPECT_EQ_INT(n, 2);
  mbs_osim_free(m);
}

//---------------------------------- Monte Carlo ------------------------------------------------

static void test_monte_carlo(void) {
  const int S = quick ? 3 : 8;
  char model_line[4200], sampling[200];
  snprintf(model_line, sizeof(model_line), "model: %s", model);
  snprintf(sampling, sizeof(sampling), "sampling: {count: %d, seed: 7, method: lhs}", S);
  const char* lines[] = {
      model_line,
      "simulation: {duration: 40.0, accuracy: 1.0e-7, output_interval: 0.1}",
      "parameters:",
      "  - path: /forceset/muscle1/max_isometric_force",
      "    distribution: {type: uniform, low: 600, high: 1400}",
      "  - path: /forceset/muscle1/excitation",
      "    distribution: {type: uniform, low: 0.2, high: 0.9}",
      "  - path: /forceset/muscle2/excitation",
      "    distribution: {type: uniform, low: 0.2, high: 0.9}",
      "  - path: /forceset/muscle2/activation_time_constant",
      "    distribution: {type: uniform, low: 0.01, high: 0.04}",
      "outputs:",
      "  trajectories: [q, u, muscles]",
      "  muscles: [muscle2, \"muscle*\"]",
      "  muscle_outputs: [tendon_force, activation, excitation, fiber_velocity]",
      "  scalars:",
      "    - {name: peak1, of: \"muscle:muscle1\", output: tendon_force, at: max}",
      "    - {name: final2, of: \"muscle:muscle2\", output: tendon_force, at: final}",
      "    - {name: e1_mean, of: \"muscle:muscle1\", output: excitation, at: mean}",
      "    - {name: l1_min, of: \"muscle:muscle1\", output: fiber_length, at: min}",
      sampling,
      "execution: {threads: 2}",
      "output: monte_carlo.h5",
  };
  char* text = join(lines, (int)(sizeof(lines) / sizeof(lines[0])));
  mbs_error e;
  const int rc = run("monte_carlo", text, &e);
  free(text);
  EXPECT_OK(rc);
  if (rc) {
    printf("monte_carlo: %s\n", e.message);
    return;
  }
  mbs_results* r = open_results("monte_carlo");
  if (!r) return;
  EXPECT_TRUE(all_good(r, S));
  long dp[4], df[4], da[4], de[4], dt[4], dq[4], ds[4];
  double* par = read_all(r, "/parameters", dp);
  double* tf = read_all(r, "/trajectories/muscles/tendon_force", df);
  double* act = read_all(r, "/trajectories/muscles/activation", da);
  double* exc = read_all(r, "/trajectories/muscles/excitation", de);
  double* time = read_all(r, "/time", dt);
  double* q = read_all(r, "/trajectories/q", dq);
  double* peak1 = read_all(r, "/scalars/peak1", ds);
  double* final2 = read_all(r, "/scalars/final2", ds);
  double* e1_mean = read_all(r, "/scalars/e1_mean", ds);
  double* l1_min = read_all(r, "/scalars/l1_min", ds);
  // the layout: S x F x 2, the muscles in the list's order (muscle2, then muscle1 from the
  // pattern), units
  static const char* const order[2] = {"muscle2", "muscle1"};
  EXPECT_TRUE(has_components(r, "muscles/tendon_force", order, 2));
  EXPECT_TRUE(has_components(r, "muscles/activation", order, 2));
  EXPECT_TRUE(has_attribute(r, "/trajectories/muscles/tendon_force", "units", "N"));
  EXPECT_TRUE(has_attribute(r, "/trajectories/muscles/activation", "units", "1"));
  EXPECT_TRUE(has_attribute(r, "/trajectories/muscles/fiber_velocity", "units", "m/s"));
  EXPECT_TRUE(has_attribute(r, "/scalars/peak1", "units", "N"));
  EXPECT_TRUE(!mbs_results_exists(r, "/trajectories/muscles/fiber_length"));  // (l1_min's)
  EXPECT_TRUE(mbs_results_exists(r, "/statistics/muscles/tendon_force/mean"));
  const long F = df[1];
  const int ok = par && tf && act && exc && time && q && peak1 && final2 && e1_mean && l1_min &&
                 dp[0] == S && dp[1] == 4 && df[0] == S && df[2] == 2 && da[1] == F &&
                 de[1] == F && dt[0] == F && F == 401;
  EXPECT_TRUE(ok);
  double worst0 = 0, worst_end = 0, worst_x = 0, worst_a = 0;
  for (long s = 0; ok && s < S; s++) {
    const double fmax1 = par[s * 4 + 0], e1 = par[s * 4 + 1], e2 = par[s * 4 + 2],
                 tau2 = par[s * 4 + 3];
#define TF(k, m) tf[(s * F + (k)) * 2 + (m)]
#define ACT(k, m) act[(s * F + (k)) * 2 + (m)]
    // t = 0: the block at 0, both paths 0.3 m, each muscle at rest with its default activation
    // (muscle1 1, muscle2 0.05) and its own max isometric force
    const double f1_0 = static_force(0.3, 1.0, fmax1), f2_0 = static_force(0.3, 0.05, 1000);
    EXPECT_NEAR(TF(0, 1), f1_0, 1e-8);
    EXPECT_NEAR(TF(0, 0), f2_0, 1e-8);
    worst0 = fmax(worst0, fmax(fabs(TF(0, 1) - f1_0) / f1_0, fabs(TF(0, 0) - f2_0) / f2_0));
    // after 40 s: at rest where the colinear tendon forces balance
    double fb;
    const double xb = static_balance(e1, fmax1, e2, 1000, &fb);
    EXPECT_NEAR(TF(F - 1, 0), TF(F - 1, 1), 1e-5);
    EXPECT_NEAR(TF(F - 1, 1), fb, 1e-5);
    EXPECT_ABS(q[s * F + F - 1], xb, 1e-6);
    worst_end = fmax(worst_end, fabs(TF(F - 1, 1) - fb) / fb);
    worst_x = fmax(worst_x, fabs(q[s * F + F - 1] - xb));
    // activations toward the excitations: muscle1 down from 1 (deactivation 0.05 s), muscle2
    // up from 0.05 (its own activation time constant)
    double a1 = 1.0, a2 = 0.05;
    for (long k = 0; k < F; k++) {
      if (k > 0) {
        a1 = activation_after(a1, e1, 0.015, 0.05, time[k] - time[k - 1]);
        a2 = activation_after(a2, e2, tau2, 0.05, time[k] - time[k - 1]);
      }
      EXPECT_ABS(ACT(k, 1), a1, 1e-6);
      EXPECT_ABS(ACT(k, 0), a2, 1e-6);
      worst_a = fmax(worst_a, fmax(fabs(ACT(k, 1) - a1), fabs(ACT(k, 0) - a2)));
      EXPECT_TRUE(exc[(s * F + k) * 2 + 1] == e1 && exc[(s * F + k) * 2 + 0] == e2);
    }
    EXPECT_TRUE(ACT(0, 0) == 0.05 && ACT(0, 1) == 1.0);
    EXPECT_ABS(ACT(F - 1, 0), e2, 1e-9);
    EXPECT_ABS(ACT(F - 1, 1), e1, 1e-9);
    // the scalars: reductions of the recorded trajectories (or of one kept for them only)
    double mx = -INFINITY;
    for (long k = 0; k < F; k++) mx = fmax(mx, TF(k, 1));
    EXPECT_TRUE(peak1[s] == mx);
    EXPECT_TRUE(final2[s] == TF(F - 1, 0));
    EXPECT_NEAR(e1_mean[s], e1, 1e-14);
    EXPECT_TRUE(l1_min[s] > 0.3 * lopt && l1_min[s] < 0.3 - lst);
#undef TF
#undef ACT
  }
  printf("monte_carlo: %d samples; tendon forces at t = 0 within %.2e of the equilibria, after "
         "40 s within %.2e of the static balance (block within %.2e m); activations within "
         "%.2e of Thelen's dynamics\n", S, worst0, worst_end, worst_x, worst_a);
  free(par);
  free(tf);
  free(act);
  free(exc);
  free(time);
  free(q);
  free(peak1);
  free(final2);
  free(e1_mean);
  free(l1_min);
  mbs_error ce;
  mbs_results_close(r, &ce);
}

//---------------------------------- patterns and scale factors ---------------------------------

static void test_patterns(void) {
  char model_line[4200];
  snprintf(model_line, sizeof(model_line), "model: %s", model);
  const char* lines[] = {
      model_line,
      "simulation: {duration: 1.0, accuracy: 1.0e-7, output_interval: 0.5}",
      "parameters:",
      "  - path: \"/forceset/*/max_isometric_force\"",
      "    scale: {type: discrete, values: [0.8, 1.25]}",
      "  - path: \"/forceset/muscle?/excitation\"",
      "    distribution: {type: discrete, values: [0.3, 0.7]}",
      "outputs:",
      "  trajectories: [muscles]",
      "  muscles: \"*\"",
      "  muscle_outputs: [excitation, tendon_force]",
      "sampling: {method: grid}",
      "output: patterns.h5",
  };
  char* text = join(lines, (int)(sizeof(lines) / sizeof(lines[0])));
  mbs_error e;
  const int rc = run("patterns", text, &e);
  free(text);
  EXPECT_OK(rc);
  if (rc) {
    printf("patterns: %s\n", e.message);
    return;
  }
  mbs_results* r = open_results("patterns");
  if (!r) return;
  EXPECT_TRUE(all_good(r, 4));
  static const char* const order[2] = {"muscle1", "muscle2"};
  EXPECT_TRUE(has_components(r, "muscles/tendon_force", order, 2));
  EXPECT_TRUE(has_attribute(r, "/trajectories/muscles/excitation", "units", "1"));
  long dp[4], df[4], de[4];
  double* par = read_all(r, "/parameters", dp);
  double* tf = read_all(r, "/trajectories/muscles/tendon_force", df);
  double* exc = read_all(r, "/trajectories/muscles/excitation", de);
  const int ok = par && tf && exc && dp[0] == 4 && dp[1] == 2 && df[1] == 3 && df[2] == 2;
  EXPECT_TRUE(ok);
  int scales = 0;
  for (long s = 0; ok && s < 4; s++) {
    const double scale = par[2 * s], ex = par[2 * s + 1];
    scales += scale == 1.25;
    // both muscles' maximum forces scaled from 1000 N, both excitations set
    EXPECT_NEAR(tf[(s * 3) * 2 + 0], static_force(0.3, 1.0, 1000 * scale), 1e-8);
    EXPECT_NEAR(tf[(s * 3) * 2 + 1], static_force(0.3, 0.05, 1000 * scale), 1e-8);
    EXPECT_TRUE(exc[(s * 3 + 2) * 2 + 0] == ex && exc[(s * 3 + 2) * 2 + 1] == ex);
  }
  EXPECT_EQ_INT(scales, 2);
  free(par);
  free(tf);
  free(exc);
  mbs_error ce;
  mbs_results_close(r, &ce);
}

//---------------------------------- scalars in other study types ------------------------------

// the settled tendon force with muscle1's excitation e and muscle2 unexcited (its activation at
// its minimum, 0.01)
static double settled_force(double e) {
  double f;
  static_balance(e, 1000, 0.01, 1000, &f);
  return f;
}

static void test_local_sensitivity(void) {
  char model_line[4200];
  snprintf(model_line, sizeof(model_line), "model: %s", model);
  const char* lines[] = {
      model_line,
      "simulation: {duration: 20.0, accuracy: 1.0e-7, output_interval: 0.5}",
      "parameters:",
      "  - {path: /forceset/muscle1/excitation, initial: 0.6}",
      "outputs:",
      "  trajectories: [q]",
      "  scalars: [{name: force, of: \"muscle:muscle1\", output: tendon_force, at: final}]",
      "sensitivity: {method: local, step: 5.0e-2, cvodes: false}",
      "output: local.h5",
  };
  char* text = join(lines, (int)(sizeof(lines) / sizeof(lines[0])));
  mbs_error e;
  const int rc = run("local", text, &e);
  free(text);
  EXPECT_OK(rc);
  if (rc) {
    printf("local: %s\n", e.message);
    return;
  }
  mbs_results* r = open_results("local");
  if (!r) return;
  long d[4];
  double* der = read_all(r, "/sensitivity/scalars/force/derivative", d);
  double* y = read_all(r, "/scalars/force", d);
  const double h = 0.6 * 5e-2;
  const double truth = (settled_force(0.6 + h) - settled_force(0.6 - h)) / (2 * h);
  if (der && y) {
    EXPECT_NEAR(y[0], settled_force(0.6), 1e-4);
    EXPECT_NEAR(der[0], truth, 2e-3);
    printf("local: dF/de %.6f N against the static balance's %.6f N\n", der[0], truth);
  }
  free(der);
  free(y);
  mbs_error ce;
  mbs_results_close(r, &ce);
}

static void test_fit(void) {
  char model_line[4200], target[200];
  snprintf(model_line, sizeof(model_line), "model: %s", model);
  const double f06 = settled_force(0.6);
  snprintf(target, sizeof(target), "    - {scalar: force, value: %.12g, weight: 0.01}", f06);
  const char* lines[] = {
      model_line,
      "simulation: {duration: 20.0, accuracy: 1.0e-7, output_interval: 0.5}",
      "parameters:",
      "  - path: /forceset/muscle1/excitation",
      "    initial: 0.45",
      "    distribution: {type: uniform, low: 0.2, high: 0.95}",
      "outputs:",
      "  trajectories: [q]",
      "  scalars: [{name: force, of: \"muscle:muscle1\", output: tendon_force, at: final}]",
      "fit:",
      "  targets:",
      target,
      "  method: lm",
      "  step: 1.0e-3",
      "  iterations: 20",
      "output: fit.h5",
  };
  char* text = join(lines, (int)(sizeof(lines) / sizeof(lines[0])));
  mbs_error e;
  const int rc = run("fit", text, &e);
  free(text);
  EXPECT_OK(rc);
  if (rc) {
    printf("fit: %s\n", e.message);
    return;
  }
  mbs_results* r = open_results("fit");
  if (!r) return;
  long d[4];
  double* p = read_all(r, "/fit/parameters", d);
  if (p) {
    EXPECT_ABS(p[0], 0.6, 1e-4);
    printf("fit: muscle1's excitation %.6f for the static balance's force at 0.6 (%.4f N)\n",
           p[0], f06);
  }
  free(p);
  mbs_error ce;
  mbs_results_close(r, &ce);
}

//---------------------------------- bad specs --------------------------------------------------

typedef struct bad_case {
  const char* name;
  int line;             // the first line replaced (1-based), 0: none
  int count;            // the lines replaced (0: 1)
  const char* text;     // their new text (may hold several lines)
  int status;
  const char* message;  // expected in the message, after "<name>.yaml:<at>: "
  int at;               // the line the message names
} bad_case;

static void test_bad_specs(void) {
  char model_line[4200];
  snprintf(model_line, sizeof(model_line), "model: %s", model);
  // the good spec: line k is good[k - 1]
  const char* good[] = {
      model_line,                                                              // 1
      "simulation: {duration: 0.1, accuracy: 1.0e-5, output_interval: 0.05}", // 2
      "parameters:",                                                           // 3
      "  - path: /forceset/muscle1/excitation",                                // 4
      "    distribution: {type: uniform, low: 0.2, high: 0.9}",                // 5
      "outputs:",                                                              // 6
      "  trajectories: [q, muscles]",                                          // 7
      "  muscles: [muscle1, muscle2]",                                         // 8
      "  muscle_outputs: [tendon_force, fiber_length]",                        // 9
      "  scalars:",                                                            // 10
      "    - {name: peak, of: \"muscle:muscle1\", output: tendon_force, at: max}",  // 11
      "sampling: {count: 2, seed: 1}",                                         // 12
      "output: bad.h5",                                                        // 13
  };
  const int ngood = (int)(sizeof(good) / sizeof(good[0]));
  static const bad_case cases[] = {
      {"good", 0, 0, NULL, MBS_OK, NULL, 0},
      {"unknown_field", 9, 0, "  muscle_outputs: [tendon_force, fibre_length]", MBS_ERR_ARGUMENT,
       "outputs.muscle_outputs[1]: unknown muscle output 'fibre_length' (tendon_force, ", 9},
      {"unknown_field_multiline", 9, 0, "  muscle_outputs:\n    - activation\n    - force",
       MBS_ERR_ARGUMENT, "outputs.muscle_outputs[1]: unknown muscle output 'force'", 11},
      {"field_twice", 9, 0, "  muscle_outputs: [activation, activation]", MBS_ERR_ARGUMENT,
       "outputs.muscle_outputs[1]: 'activation' is listed twice", 9},
      {"no_match", 8, 0, "  muscles:\n    - muscle1\n    - \"soleus*\"", MBS_ERR_UNKNOWN_NAME,
       "outputs.muscles: 'soleus*' matches no muscle of model 'Tug_of_War' (its muscles: "
       "muscle1, muscle2)", 10},
      {"not_a_muscle", 8, 0, "  muscles: [muscle1, gravity]", MBS_ERR_ARGUMENT,
       "outputs.muscles: 'gravity' is a force of kind 'gravity', not a muscle", 8},
      {"muscles_without_list", 8, 0, "  # (no muscles)", MBS_ERR_ARGUMENT,
       "outputs.trajectories[1]: 'muscles' needs the muscles listed in outputs.muscles", 7},
      {"list_without_muscles", 7, 0, "  trajectories: [q]", MBS_ERR_ARGUMENT,
       "outputs.muscles: muscles are listed but 'muscles' is not in outputs.trajectories", 8},
      {"fields_without_muscles", 7, 2, "  trajectories: [q]\n  # (no muscles)", MBS_ERR_ARGUMENT,
       "outputs.muscle_outputs: muscle outputs are listed but 'muscles' is not in "
       "outputs.trajectories", 9},
      {"listed_twice", 8, 0, "  muscles: [muscle1, muscle1]", MBS_ERR_ARGUMENT,
       "outputs.muscles[1]: 'muscle1' is listed twice", 8},
      {"scalar_no_output", 11, 0, "    - {name: peak, of: \"muscle:muscle1\", at: max}",
       MBS_ERR_PARSE, "outputs.scalars[0].output: missing (required)", 11},
      {"scalar_bad_output", 11, 0, "    - {name: peak, of: \"muscle:muscle1\", output: force}",
       MBS_ERR_ARGUMENT, "outputs.scalars[0].output: unknown muscle output 'force'", 11},
      {"scalar_component", 11, 0,
       "    - name: peak\n      of: \"muscle:muscle1\"\n      output: tendon_force\n"
       "      component: 0", MBS_ERR_PARSE,
       "outputs.scalars[0].component: not used with of: muscle:muscle1", 14},
      {"scalar_coordinate", 11, 0,
       "    - {name: peak, of: \"muscle:muscle1\", output: activation, coordinate: block_tz}",
       MBS_ERR_PARSE, "outputs.scalars[0].coordinate: not used with of: muscle:muscle1", 11},
      {"scalar_output_of_q", 11, 0,
       "    - {name: peak, of: q, coordinate: block_tz, output: activation}", MBS_ERR_PARSE,
       "outputs.scalars[0].output: only with of: muscle:<name>", 11},
      {"scalar_pattern", 11, 0, "    - {name: peak, of: \"muscle:muscle*\", output: activation}",
       MBS_ERR_ARGUMENT, "outputs.scalars[0].of: 'muscle:muscle*': a scalar is one muscle's",
       11},
      {"scalar_not_a_muscle", 11, 0, "    - {name: peak, of: \"muscle:block\", output: activation}",
       MBS_ERR_UNKNOWN_NAME,
       "scalars: 'peak': 'block' is not a muscle of model 'Tug_of_War' (its muscles: muscle1, "
       "muscle2)", 11},
      {"excitation_component", 4, 0, "  - path: /forceset/muscle1/excitation[1]", MBS_ERR_ARGUMENT,
       "parameters: '/forceset/muscle1/excitation' has 1 component; [1] is out of range", 4},
      {"excitation_unknown", 4, 0, "  - path: /forceset/muscle3/excitation", MBS_ERR_UNKNOWN_NAME,
       "parameters: '/forceset/muscle3/excitation' is not a parameter of model 'Tug_of_War'", 4},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const bad_case* b = &cases[i];
    const char* lines[32];
    int n = 0;
    const int last = b->line + (b->count > 0 ? b->count : 1) - 1;
    for (int k = 1; k <= ngood; k++)
      if (k == b->line) lines[n++] = b->text;
      else if (k < b->line || k > last) lines[n++] = good[k - 1];
    char* text = join(lines, n);
    mbs_error e;
    memset(&e, 0, sizeof(e));
    const int rc = run(b->name, text, &e);
    free(text);
    EXPECT_EQ_INT(rc, b->status);
    if (!b->message) {
      if (rc) printf("%s: %s\n", b->name, e.message);
      continue;
    }
    char want[600];
    snprintf(want, sizeof(want), "%s.yaml:%d: %s", b->name, b->at, b->message);
    const int found = strstr(e.message, want) != NULL;
    EXPECT_TRUE(found);
    printf("%s: %s\n", b->name, e.message);
    if (!found) printf("  expected: ...%s...\n", want);
  }
}

// a model without muscles, and a muscle whose excitation is a function of time
static void test_bad_models(void) {
  const char* lines[] = {
      "model: double_pendulum",
      "simulation: {duration: 0.1, accuracy: 1.0e-5, output_interval: 0.05}",
      "outputs:",
      "  trajectories: [q, muscles]",
      "  muscles: \"*\"",
      "sampling: {count: 2, seed: 1}",
      "output: bad.h5",
  };
  char* text = join(lines, (int)(sizeof(lines) / sizeof(lines[0])));
  mbs_error e;
  int rc = run("no_muscles", text, &e);
  free(text);
  EXPECT_EQ_INT(rc, MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(e.message, "no_muscles.yaml:5: outputs.muscles: model 'double_pendulum' "
                                "has no muscles") != NULL);
  printf("no_muscles: %s\n", e.message);
  const char* scalar_lines[] = {
      "model: double_pendulum",
      "simulation: {duration: 0.1, accuracy: 1.0e-5, output_interval: 0.05}",
      "outputs:",
      "  scalars: [{name: a, of: \"muscle:biceps\", output: activation, at: final}]",
      "sampling: {count: 2, seed: 1}",
      "output: bad.h5",
  };
  text = join(scalar_lines, (int)(sizeof(scalar_lines) / sizeof(scalar_lines[0])));
  rc = run("no_muscles_scalar", text, &e);
  free(text);
  EXPECT_EQ_INT(rc, MBS_ERR_UNKNOWN_NAME);
  EXPECT_TRUE(strstr(e.message, "no_muscles_scalar.yaml:4: scalars: 'a': 'biceps' is not a "
                                "muscle of model 'double_pendulum' (it has none)") != NULL);
  printf("no_muscles_scalar: %s\n", e.message);

  // tug_of_war with muscle2's excitation prescribed by a controller
  FILE* f = fopen(model, "rb");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* xml = malloc((size_t)n + 1);
  const size_t got = xml ? fread(xml, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!xml || got != (size_t)n) {
    free(xml);
    return;
  }
  xml[n] = '\0';
  static const char* const from = "<ControllerSet name=\"controllerset\">\n\t\t\t<objects />";
  static const char* const to =
      "<ControllerSet name=\"controllerset\"><objects><PrescribedController name=\"pc\">"
      "<actuator_list>muscle2</actuator_list><FunctionSet name=\"ControlFunctions\"><objects>"
      "<Constant name=\"muscle2\"><value>0.3</value></Constant></objects></FunctionSet>"
      "</PrescribedController></objects>";
  char* at = strstr(xml, from);
  EXPECT_TRUE(at != NULL);
  char path[4300];
  snprintf(path, sizeof(path), "%s/prescribed.osim", dir);
  f = at ? fopen(path, "w") : NULL;
  if (f) {
    fwrite(xml, 1, (size_t)(at - xml), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    fclose(f);
  }
  free(xml);
  if (!at) return;
  for (int pattern = 0; pattern < 2; pattern++) {
    const char* plines[] = {
        "model: prescribed.osim",
        "simulation: {duration: 0.1, accuracy: 1.0e-5, output_interval: 0.05}",
        "parameters:",
        pattern ? "  - path: \"/forceset/*/excitation\""
                : "  - path: /forceset/muscle2/excitation",
        "    distribution: {type: uniform, low: 0.2, high: 0.9}",
        "sampling: {count: 2, seed: 1}",
        "output: bad.h5",
    };
    text = join(plines, (int)(sizeof(plines) / sizeof(plines[0])));
    rc = run("prescribed", text, &e);
    free(text);
    EXPECT_EQ_INT(rc, MBS_ERR_ARGUMENT);
    EXPECT_TRUE(strstr(e.message, "prescribed.yaml:4: parameters: '/forceset/muscle2/"
                                  "excitation': the muscle's excitation is a function of time") !=
                NULL);
    printf("prescribed: %s\n", e.message);
  }
  // muscle1's is still the State's
  const char* ok_lines[] = {
      "model: prescribed.osim",
      "simulation: {duration: 0.1, accuracy: 1.0e-5, output_interval: 0.05}",
      "parameters:",
      "  - path: /forceset/muscle1/excitation",
      "    distribution: {type: uniform, low: 0.2, high: 0.9}",
      "outputs: {trajectories: [muscles], muscles: \"*\", muscle_outputs: excitation}",
      "sampling: {count: 2, seed: 1}",
      "output: prescribed.h5",
  };
  text = join(ok_lines, (int)(sizeof(ok_lines) / sizeof(ok_lines[0])));
  rc = run("prescribed_ok", text, &e);
  free(text);
  EXPECT_OK(rc);
  if (rc) printf("prescribed_ok: %s\n", e.message);
  mbs_results* r = rc ? NULL : open_results("prescribed");
  if (!r) return;
  long d[4], dp[4];
  double* exc = read_all(r, "/trajectories/muscles/excitation", d);
  double* par = read_all(r, "/parameters", dp);
  if (exc && par && d[0] == 2 && d[2] == 2)
    for (long s = 0; s < 2; s++) {
      EXPECT_TRUE(exc[(s * d[1] + d[1] - 1) * 2 + 0] == par[s]);
      EXPECT_NEAR(exc[(s * d[1] + d[1] - 1) * 2 + 1], 0.3, 1e-15);
    }
  free(exc);
  free(par);
  mbs_error ce;
  mbs_results_close(r, &ce);
}

// the files this test made
static void clean(void) {
  static const char* const names[] = {"monte_carlo", "patterns", "local", "fit", "bad",
                                      "prescribed"};
  char path[4300];
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    snprintf(path, sizeof(path), "%s/%s.h5", dir, names[i]);
    remove(path);
  }
  snprintf(path, sizeof(path), "%s/prescribed.osim", dir);
  remove(path);
  // the specs
  static const char* const specs[] = {
      "monte_carlo", "patterns", "local", "fit", "good", "unknown_field",
      "unknown_field_multiline", "field_twice", "no_match", "not_a_muscle",
      "muscles_without_list", "list_without_muscles", "fields_without_muscles", "listed_twice",
      "scalar_no_output", "scalar_bad_output", "scalar_component", "scalar_coordinate",
      "scalar_output_of_q", "scalar_pattern", "scalar_not_a_muscle", "excitation_component",
      "excitation_unknown", "no_muscles", "no_muscles_scalar", "prescribed", "prescribed_ok"};
  for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
    snprintf(path, sizeof(path), "%s/%s.yaml", dir, specs[i]);
    remove(path);
  }
  rmdir(dir);
}

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--data")) data = argv[i + 1];
  snprintf(model, sizeof(model), "%s/models/tug_of_war.osim", data ? data : "");
  struct stat sb;
  if (!data || stat(model, &sb) != 0) {
    printf("skipped: %s not found (give --data DIR holding models/)\n", model);
    return 77;
  }
  quick = getenv("MBS_TEST_QUICK") != NULL;
  const char* tmp = getenv("TMPDIR");
  snprintf(dir, sizeof(dir), "%s/mbs_study_muscles_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    printf("cannot make a folder %s\n", dir);
    return 1;
  }
  test_parameter_names();
  test_monte_carlo();
  test_patterns();
  test_local_sensitivity();
  test_fit();
  test_bad_specs();
  test_bad_models();
  clean();
  return mbs_test_finish("test_study_muscles");
}
