// Controllers (include/mbs/controller.h) against closed forms:
// - PD tracking without delay: a rotor on a pin (no gravity, inertia I) driven by a torque
//   actuator whose control a PD controller sets with gain 1/optimal_force is the damped
//   oscillator I th'' + kd th' + kp th = kp th_r, solved in closed form;
// - with a neural delay tau (the method of steps, exact): on [0, tau] the delayed angle is the
//   start's, so th'' = kp (th_r - th0) / I and th = th0 + a t^2 / 2; on [tau, 2 tau] th'' =
//   (kp (th_r - th0 - a (t - tau)^2 / 2) - kd a (t - tau)) / I, a quartic; checked at tau, 1.5
//   tau and 2 tau for every integrator, including CVODE;
// - a sensed combination of coordinates (here c q, its coefficient set by the State) follows the
//   oscillator of gains c kp, c kd about th_r / c;
// - a window: the delayed means over the window against the same delay equation integrated
//   here by small explicit steps, its history kept in arrays;
// - the history belongs to the State: two States from different starts keep their own;
// - an output's clamp and offset; a C callback adding to a control; the controls in effect
//   (function of time, State's control, controllers' sum); gains and delay as parameters of a
//   State; bad specifications and parameters refused naming the controller.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs_test.h"

static const double I_ROTOR = 0.5, F_OPT = 10;

// a rotor on a pin about z, no gravity, a torque actuator on it
static mbs_system* rotor(int* control) {
  mbs_system* sys = mbs_system_create("rotor");
  mbs_body_spec s = mbs_body_spec_default("rotor", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = 0.3;
  s.inertia[2] = I_ROTOR;
  const int b = mbs_system_add_body(sys, &s);
  EXPECT_TRUE(b > 0);
  mbs_torque_actuator_spec ta;
  memset(&ta, 0, sizeof(ta));
  ta.body_a = b;
  ta.body_b = 0;
  ta.axis[2] = 1;
  ta.torque_is_global = 1;
  ta.optimal_force = F_OPT;
  ta.control_function = -1;
  const int f = mbs_system_add_torque_actuator(sys, &ta);
  EXPECT_TRUE(f >= 0);
  if (f < 0) printf("torque actuator: %s\n", mbs_system_error(sys)->message);
  *control = -1;
  for (int c = 0; c < mbs_system_ncontrol(sys); c++)
    if (mbs_control_force(sys, c) == f) *control = c;
  return sys;
}

static int add_pd(mbs_system* sys, const char* name, int control, double kp, double kd,
                  double ref, double delay) {
  mbs_pd_output out = {control, 1 / F_OPT, 0, -INFINITY, INFINITY};
  mbs_pd_controller_spec pd = {name, 0, 0, ref, kp, kd, delay, 0, 1, &out, 0, 0, 0, NULL};
  return mbs_system_add_pd_controller(sys, &pd);
}

// I th'' + kd th' + kp th = kp th_r, th(0) = th0, th'(0) = 0 (underdamped)
static double oscillator(double t, double kp, double kd, double thr, double th0) {
  const double w0 = sqrt(kp / I_ROTOR), z = kd / (2 * sqrt(kp * I_ROTOR));
  const double wd = w0 * sqrt(1 - z * z);
  const double x0 = th0 - thr;
  return thr + exp(-z * w0 * t) * (x0 * cos(wd * t) + x0 * z * w0 / wd * sin(wd * t));
}

// the largest |th - oscillator| at 0.2, 0.4, ..., 2 s simulating st at accuracy 1e-9
static double worst_vs_oscillator(const mbs_system* sys, mbs_state* st, double kp, double kd,
                                  double thr, double th0) {
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-9;
  double worst = 0;
  for (int k = 1; k <= 10; k++) {
    EXPECT_OK(mbs_simulate(sys, st, 0.2 * k, &o, NULL, 0, NULL, NULL, NULL));
    const double e = fabs(mbs_state_q(st)[0] - oscillator(0.2 * k, kp, kd, thr, th0));
    if (e > worst) worst = e;
  }
  return worst;
}

static void test_pd_no_delay(void) {
  int c;
  mbs_system* sys = rotor(&c);
  const double kp = 20, kd = 1.5, thr = 0.4, th0 = -0.2;
  EXPECT_EQ_INT(add_pd(sys, "hold", c, kp, kd, thr, 0), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = th0;
  const double worst = worst_vs_oscillator(sys, st, kp, kd, thr, th0);
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  const double* ctl = mbs_get_controls(sys, st);
  EXPECT_TRUE(ctl != NULL);
  if (ctl)
    EXPECT_NEAR(ctl[c], (kp * (thr - mbs_state_q(st)[0]) - kd * mbs_state_u(st)[0]) / F_OPT,
                1e-12);
  printf("PD without delay: |th - closed form| <= %.2e rad over 2 s\n", worst);
  EXPECT_TRUE(worst < 1e-7);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// the scale multiplies kp and kd: gains of a third, scaled by 1.5 in the spec and by 2 in the
// State, follow the oscillator of the full gains; a negative scale fails at Instance
static void test_pd_scale(void) {
  int c;
  mbs_system* sys = rotor(&c);
  const double kp = 20, kd = 1.5, thr = 0.4, th0 = -0.2;
  mbs_pd_output out = {c, 1 / F_OPT, 0, -INFINITY, INFINITY};
  mbs_pd_controller_spec pd = {"scaled", 0, 0, thr, kp / 3, kd / 3, 0, 0, 1, &out, 1.5, 1, 0, NULL};
  EXPECT_EQ_INT(mbs_system_add_pd_controller(sys, &pd), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  const mbs_param_info* pi = mbs_system_find_param(sys, "/controllerset/scaled/scale");
  EXPECT_TRUE(pi != NULL);
  mbs_state* st = mbs_state_create(sys);
  if (pi) EXPECT_NEAR(mbs_state_params(st)[pi->index], 1.5, 0);
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/scaled/scale", 0, 3));
  mbs_state_upd_q(st)[0] = th0;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-9;
  EXPECT_OK(mbs_simulate(sys, st, 1.0, &o, NULL, 0, NULL, NULL, NULL));
  const double e = fabs(mbs_state_q(st)[0] - oscillator(1.0, kp, kd, thr, th0));
  printf("PD scaled: |th - closed form of the scaled gains| = %.2e rad at 1 s\n", e);
  EXPECT_TRUE(e < 1e-7);
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/scaled/scale", 0, -1));
  EXPECT_TRUE(mbs_realize_instance(sys, st) != MBS_OK);
  EXPECT_TRUE(strstr(mbs_state_error(st)->message, "scale") != NULL);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// the method of steps: th on [0, 2 tau] in closed form
static double delayed_solution(double t, double kp, double kd, double thr, double th0,
                               double tau) {
  const double a = kp * (thr - th0) / I_ROTOR;
  if (t <= tau) return th0 + 0.5 * a * t * t;
  const double s = t - tau;  // on [tau, 2 tau]: th'' = A - B s^2 - C s
  const double A = a, B = kp * a / (2 * I_ROTOR), C = kd * a / I_ROTOR;
  const double th_tau = th0 + 0.5 * a * tau * tau, w_tau = a * tau;
  return th_tau + w_tau * s + A * s * s / 2 - B * s * s * s * s / 12 - C * s * s * s / 6;
}

static void test_pd_delay(mbs_integrator_type integ) {
  int c;
  mbs_system* sys = rotor(&c);
  const double kp = 20, kd = 1.5, thr = 0.4, th0 = -0.2, tau = 0.12;
  EXPECT_EQ_INT(add_pd(sys, "delayed", c, kp, kd, thr, tau), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = th0;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integrator = integ;
  o.integ.accuracy = 1e-10;
  o.integ.fixed_step = 1e-4;
  const double when[3] = {tau, 1.5 * tau, 2 * tau};
  double worst = 0;
  for (int k = 0; k < 3; k++) {
    mbs_state_set_time(st, 0);
    mbs_state_upd_q(st)[0] = th0;
    mbs_state_upd_u(st)[0] = 0;
    EXPECT_OK(mbs_simulate(sys, st, when[k], &o, NULL, 0, NULL, NULL, NULL));
    const double e = fabs(mbs_state_q(st)[0] - delayed_solution(when[k], kp, kd, thr, th0, tau));
    if (e > worst) worst = e;
  }
  printf("PD with a %.2f s delay, %s: |th - method of steps| <= %.2e rad at tau, 1.5 tau, "
         "2 tau\n", tau, mbs_integrator_name(integ), worst);
  EXPECT_TRUE(worst < (integ == MBS_INTEG_CVODE_BDF ? 1e-6 : 1e-8));
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// two States from different starts keep their own histories
static void test_history_per_state(void) {
  int c;
  mbs_system* sys = rotor(&c);
  const double kp = 20, kd = 1.5, thr = 0.4, tau = 0.1;
  EXPECT_EQ_INT(add_pd(sys, "delayed", c, kp, kd, thr, tau), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* a = mbs_state_create(sys);
  mbs_state* b = mbs_state_create(sys);
  mbs_state_upd_q(a)[0] = -0.2;
  mbs_state_upd_q(b)[0] = 0.1;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-10;
  // interleaved: a to 0.05, b to 0.05, a to 0.2, b to 0.2
  for (int k = 1; k <= 4; k++) {
    EXPECT_OK(mbs_simulate(sys, a, 0.05 * k, &o, NULL, 0, NULL, NULL, NULL));
    EXPECT_OK(mbs_simulate(sys, b, 0.05 * k, &o, NULL, 0, NULL, NULL, NULL));
  }
  const double ea = fabs(mbs_state_q(a)[0] - delayed_solution(0.2, kp, kd, thr, -0.2, tau));
  const double eb = fabs(mbs_state_q(b)[0] - delayed_solution(0.2, kp, kd, thr, 0.1, tau));
  printf("two States, interleaved runs: errors %.2e and %.2e rad\n", ea, eb);
  EXPECT_TRUE(ea < 1e-8 && eb < 1e-8);
  mbs_state_destroy(a);
  mbs_state_destroy(b);
  mbs_system_destroy(sys);
}

static void add_half(const mbs_system* sys, const mbs_state* st, double* controls, void* user) {
  (void)sys;
  (void)st;
  controls[*(const int*)user] += 0.5;
}

static void test_controls_in_effect(void) {
  int c;
  mbs_system* sys = rotor(&c);
  // a clamped PD output with an offset, and a callback adding 0.5
  mbs_pd_output out = {c, 1.0, 0.1, -0.2, 0.3};
  mbs_pd_controller_spec pd = {"clamped", 0, 0, 1.0, 2.0, 0.0, 0.0, 0, 1, &out, 0, 0, 0, NULL};
  EXPECT_EQ_INT(mbs_system_add_pd_controller(sys, &pd), 0);
  EXPECT_EQ_INT(mbs_system_add_controller_callback(sys, "half", add_half, &c), 1);
  // refused: a second "half", a negative gain, a control that does not exist, no outputs
  EXPECT_TRUE(mbs_system_add_controller_callback(sys, "half", add_half, &c) < 0);
  pd.name = "bad";
  pd.kp = -1;
  EXPECT_TRUE(mbs_system_add_pd_controller(sys, &pd) < 0);
  printf("refused: %s\n", mbs_system_error(sys)->message);
  EXPECT_TRUE(strstr(mbs_system_error(sys)->message, "'bad'") != NULL);
  pd.kp = 1;
  out.control = 7;
  EXPECT_TRUE(mbs_system_add_pd_controller(sys, &pd) < 0);
  pd.noutput = 0;
  EXPECT_TRUE(mbs_system_add_pd_controller(sys, &pd) < 0);
  EXPECT_EQ_INT(mbs_system_ncontroller(sys), 2);
  EXPECT_EQ_INT(mbs_controller_find(sys, "half"), 1);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  const double qs[3] = {0.0, 0.95, 1.2};  // e = 2 (1 - q): clamped above, inside, below
  for (int k = 0; k < 3; k++) {
    mbs_state_upd_q(st)[0] = qs[k];
    mbs_state_upd_controls(st)[c] = 0.25;  // the State's control: the base
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    const double pdv = fmin(0.3, fmax(-0.2, 0.1 + 2 * (1 - qs[k])));
    EXPECT_NEAR(mbs_get_controls(sys, st)[c], 0.25 + pdv + 0.5, 1e-14);
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    EXPECT_NEAR(mbs_get_udot(sys, st)[0] * I_ROTOR, F_OPT * (0.25 + pdv + 0.5), 1e-12);
  }
  // the gains are a State's parameters: kp = 0 leaves only the offset
  const mbs_param_info* pk = mbs_system_find_param(sys, "/controllerset/clamped/kp");
  EXPECT_TRUE(pk != NULL);
  if (pk) {
    mbs_state_upd_params(st)[pk->index] = 0;
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    EXPECT_NEAR(mbs_get_controls(sys, st)[c], 0.25 + 0.1 + 0.5, 1e-14);
    mbs_state_upd_params(st)[pk->index] = -3;
    EXPECT_TRUE(mbs_realize_dynamics(sys, st) != MBS_OK);
    printf("bad gain: %s\n", mbs_state_error(st)->message);
    EXPECT_TRUE(strstr(mbs_state_error(st)->message, "clamped") != NULL);
  }
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// PD sensing y = c q: c is an instance parameter (default 1 from the spec, 2 in the State)
static void test_pd_terms(void) {
  int c;
  mbs_system* sys = rotor(&c);
  const double kp = 20, kd = 1.5, thr = 0.4, th0 = -0.2, coef = 2;
  mbs_pd_output out = {c, 1 / F_OPT, 0, -INFINITY, INFINITY};
  const mbs_pd_term term = {0, 0, 1};
  mbs_pd_controller_spec pd = {"combined", -1, -1, thr, kp, kd, 0, 0, 1, &out, 0, 0, 1, &term};
  EXPECT_EQ_INT(mbs_system_add_pd_controller(sys, &pd), 0);
  const mbs_pd_term bad = {0, 5, 1};  // no u 5 in a one-coordinate system
  pd.name = "bad";
  pd.terms = &bad;
  EXPECT_TRUE(mbs_system_add_pd_controller(sys, &pd) < 0);
  EXPECT_TRUE(strstr(mbs_system_error(sys)->message, "'bad'") != NULL);
  mbs_error_clear((mbs_error*)mbs_system_error(sys));
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/combined/coefficients", 0, coef));
  mbs_state_upd_q(st)[0] = th0;
  const double worst = worst_vs_oscillator(sys, st, coef * kp, coef * kd, thr / coef, th0);
  printf("PD sensing 2 q: |th - closed form| <= %.2e rad over 2 s\n", worst);
  EXPECT_TRUE(worst < 1e-7);
  // a coefficient that is not finite fails at Instance, naming the controller
  mbs_state* s2 = mbs_state_create(sys);
  EXPECT_OK(mbs_state_set_param(sys, s2, "/controllerset/combined/coefficients", 0, NAN));
  EXPECT_TRUE(mbs_realize_instance(sys, s2) != MBS_OK);
  EXPECT_TRUE(strstr(mbs_state_error(s2)->message, "combined") != NULL);
  mbs_state_destroy(s2);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// the output's gain set by the State (twice the spec's) acts as doubled kp and kd; a gain that
// is not finite fails at Instance
static void test_pd_gains(void) {
  int c;
  mbs_system* sys = rotor(&c);
  const double kp = 20, kd = 1.5, thr = 0.4, th0 = -0.2;
  EXPECT_EQ_INT(add_pd(sys, "shared", c, kp, kd, thr, 0), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  const mbs_param_info* pi = mbs_system_find_param(sys, "/controllerset/shared/gains");
  EXPECT_TRUE(pi != NULL && pi->size == 1);
  if (pi) EXPECT_NEAR(mbs_state_params(st)[pi->index], 1 / F_OPT, 0);
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/shared/gains", 0, 2 / F_OPT));
  mbs_state_upd_q(st)[0] = th0;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-9;
  EXPECT_OK(mbs_simulate(sys, st, 1.0, &o, NULL, 0, NULL, NULL, NULL));
  const double e = fabs(mbs_state_q(st)[0] - oscillator(1.0, 2 * kp, 2 * kd, thr, th0));
  printf("PD with its gain doubled by the State: |th - closed form| = %.2e rad at 1 s\n", e);
  EXPECT_TRUE(e < 1e-7);
  mbs_state* s2 = mbs_state_create(sys);
  EXPECT_OK(mbs_state_set_param(sys, s2, "/controllerset/shared/gains", 0, INFINITY));
  EXPECT_TRUE(mbs_realize_instance(sys, s2) != MBS_OK);
  EXPECT_TRUE(strstr(mbs_state_error(s2)->message, "shared") != NULL);
  mbs_state_destroy(s2);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// delay d and window w: the rotor starts at rest at th0 and the controller sees the means over
// [t - d - w, t - d] (before 0: the start); integrated here by semi-implicit Euler steps of h
// with the angle and rate kept per step, the means formed as documented
static void test_pd_window(void) {
  int c;
  mbs_system* sys = rotor(&c);
  const double kp = 20, kd = 1.5, thr = 0.4, th0 = -0.2, d = 0.05, w = 0.08, T = 1.0;
  mbs_pd_output out = {c, 1 / F_OPT, 0, -INFINITY, INFINITY};
  mbs_pd_controller_spec pd = {"windowed", 0, 0, thr, kp, kd, d, w, 1, &out, 0, 0, 0, NULL};
  EXPECT_EQ_INT(mbs_system_add_pd_controller(sys, &pd), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = th0;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-9;
  EXPECT_OK(mbs_simulate(sys, st, T, &o, NULL, 0, NULL, NULL, NULL));
  // the reference solution
  const double h = 1e-6;
  const int n = (int)lround(T / h), nd = (int)lround(d / h), nw = (int)lround(w / h);
  double* th = malloc((size_t)(n + 1) * sizeof(double));
  double om = 0;
  th[0] = th0;
  for (int i = 0; i < n; i++) {
    const int i1 = i - nd, im = i - nd - nw / 2, i0 = i - nd - nw;
    const double q1 = th[i1 > 0 ? i1 : 0], qm = th[im > 0 ? im : 0], q0 = th[i0 > 0 ? i0 : 0];
    const double qbar = (q0 + 4 * qm + q1) / 6, ubar = (q1 - q0) / w;
    om += h * (kp * (thr - qbar) - kd * ubar) / I_ROTOR;
    th[i + 1] = th[i] + h * om;
  }
  const double e = fabs(mbs_state_q(st)[0] - th[n]);
  printf("PD with delay %.2f s and window %.2f s: th(%.1f) %.6f, explicit steps %.6f\n", d, w, T,
         mbs_state_q(st)[0], th[n]);
  EXPECT_TRUE(e < 1e-4 * fabs(th[n] - th0));
  EXPECT_TRUE(fabs(th[n] - th0) > 0.1);  // it moved
  free(th);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// the step limit follows the look-back of the controllers that act: the delay, half the window
// without a delay, none for a controller scaled to 0 or with no gains; and a window without a
// delay, stepped at a loose accuracy, still matches the same run at a tight one
static void test_max_step(void) {
  int c;
  mbs_system* sys = rotor(&c);
  EXPECT_EQ_INT(add_pd(sys, "slow", c, 20, 1.5, 0.4, 0.03), 0);
  mbs_pd_output out = {c, 1 / F_OPT, 0, -INFINITY, INFINITY};
  mbs_pd_controller_spec pd = {"mean", 0, 0, 0.4, 20, 1.5, 0, 0.1, 1, &out, 0, 0, 0, NULL};
  EXPECT_EQ_INT(mbs_system_add_pd_controller(sys, &pd), 1);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  EXPECT_NEAR(mbs_controllers_max_step(sys, st), 0.03, 0);
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/slow/scale", 0, 0));
  EXPECT_NEAR(mbs_controllers_max_step(sys, st), 0.05, 0);
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/slow/scale", 0, 1));
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/slow/kp", 0, 0));
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/slow/kd", 0, 0));
  EXPECT_NEAR(mbs_controllers_max_step(sys, st), 0.05, 0);
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/mean/kd_scale", 0, 0));
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/mean/kp", 0, 0));
  EXPECT_TRUE(isinf(mbs_controllers_max_step(sys, st)));
  // the window alone acting: loose and tight accuracy agree
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/mean/kd_scale", 0, 1));
  EXPECT_OK(mbs_state_set_param(sys, st, "/controllerset/mean/kp", 0, 20));
  mbs_state_upd_q(st)[0] = -0.2;
  mbs_state* tight = mbs_state_create(sys);
  EXPECT_OK(mbs_state_copy(sys, tight, st));
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-2;
  EXPECT_OK(mbs_simulate(sys, st, 1.0, &o, NULL, 0, NULL, NULL, NULL));
  o.integ.accuracy = 1e-10;
  EXPECT_OK(mbs_simulate(sys, tight, 1.0, &o, NULL, 0, NULL, NULL, NULL));
  const double e = fabs(mbs_state_q(st)[0] - mbs_state_q(tight)[0]);
  printf("PD with a window and no delay: th(1) %.6f at accuracy 1e-2, %.6f at 1e-10\n",
         mbs_state_q(st)[0], mbs_state_q(tight)[0]);
  EXPECT_TRUE(e < 0.02 * fabs(mbs_state_q(tight)[0] + 0.2));
  mbs_state_destroy(tight);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  test_max_step();
  test_pd_no_delay();
  test_pd_terms();
  test_pd_window();
  test_pd_gains();
  test_pd_scale();
  test_pd_delay(MBS_INTEG_RK_MERSON);
  test_pd_delay(MBS_INTEG_DORMAND_PRINCE);
  test_pd_delay(MBS_INTEG_RK4);
  test_pd_delay(MBS_INTEG_CVODE_BDF);
  test_history_per_state();
  test_controls_in_effect();
  return mbs_test_finish("test_controller");
}
