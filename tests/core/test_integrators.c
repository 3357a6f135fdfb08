// Integrators and the time stepper against exact answers:
// - the period of a pendulum (large amplitude) against the complete elliptic integral, from
//   zero-crossing events, for each error-controlled integrator;
// - energy of a double pendulum and of random chains over 20 s within 10 x accuracy x |E|;
// - a four-bar linkage keeps its constraint errors within the projection tolerance;
// - a falling ball reaching a height: the event time against the closed form, every integrator;
// - a prescribed coordinate follows its function while simulating;
// - steps increase as the accuracy tightens; the fixed-step methods converge at their order;
// - reports arrive at the requested times and match a fine solution; failures are statuses.
#include <string.h>

#include "mbs/mbs.h"
#include "random_tree.h"

static const double g0 = 9.81;

#define NCONTROLLED 4
static const mbs_integrator_type controlled[NCONTROLLED] = {
    MBS_INTEG_RK_MERSON, MBS_INTEG_DORMAND_PRINCE, MBS_INTEG_CVODE_BDF, MBS_INTEG_ROS34PW2};

static mbs_system* pendulum_system(double L) {
  mbs_system* sys = mbs_system_create("pendulum");
  mbs_body_spec s = mbs_body_spec_default("bob", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.com[0] = L;
  mbs_system_add_body(sys, &s);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_system_finalize(sys);
  return sys;
}

// complete elliptic integral of the first kind K(k) by the arithmetic-geometric mean
static double ellip_k(double k) {
  double a = 1, b = sqrt(1 - k * k);
  for (int i = 0; i < 40; i++) {
    const double an = 0.5 * (a + b);
    b = sqrt(a * b);
    a = an;
  }
  return M_PI / (2 * a);
}

// trigger: the pendulum angle measured from straight down (q = -pi/2)
static double angle_from_bottom(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  (void)user;
  return mbs_state_q(st)[0] + M_PI / 2;
}

typedef struct crossings {
  double t[64];
  int n;
} crossings;

static mbs_event_action record_crossing(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  crossings* c = user;
  if (c->n < 64) c->t[c->n++] = mbs_state_time(st);
  return MBS_EVENT_CONTINUE;
}

static void test_pendulum_period(void) {
  const double L = 1.3, amp = 2.0;  // large amplitude: far from 2 pi sqrt(L/g)
  const double T = 4 * sqrt(L / g0) * ellip_k(sin(amp / 2));
  mbs_system* sys = pendulum_system(L);
  for (int k = 0; k < NCONTROLLED; k++) {
    mbs_state* st = mbs_state_create(sys);
    mbs_state_upd_q(st)[0] = -M_PI / 2 + amp;
    crossings c = {{0}, 0};
    mbs_event ev = {"bottom", angle_from_bottom, MBS_STAGE_POSITION, -1, record_crossing, &c};
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = controlled[k];
    o.integ.accuracy = 1e-9;
    mbs_simulation_result r;
    EXPECT_OK(mbs_simulate(sys, st, 4.5 * T, &o, &ev, 1, NULL, NULL, &r));
    // falling through the bottom at T/4, 5T/4, 9T/4, ...
    EXPECT_TRUE(c.n >= 4);
    double worst = 0;
    for (int i = 0; i < c.n; i++) worst = fmax(worst, fabs(c.t[i] - (0.25 + i) * T));
    printf("pendulum period %.12f s (exact %.12f), %s: %d crossings, worst time error %.2e\n",
           c.n > 1 ? (c.t[c.n - 1] - c.t[0]) / (c.n - 1) : 0.0, T,
           mbs_integrator_name(controlled[k]), c.n, worst);
    EXPECT_TRUE(worst < 1e-6);
    mbs_state_destroy(st);
  }
  mbs_system_destroy(sys);
}

static double energy(const mbs_system* sys, mbs_state* st) {
  double ke = 0, pe = 0;
  mbs_realize_velocity(sys, st);
  mbs_calc_kinetic_energy(sys, st, &ke);
  mbs_calc_potential_energy(sys, st, &pe);
  return ke + pe;
}

typedef struct drift {
  double E0, worst, ke_max;
} drift;

static int track_energy(const mbs_system* sys, mbs_state* st, void* user) {
  drift* d = user;
  double ke;
  mbs_calc_kinetic_energy(sys, st, &ke);
  d->ke_max = fmax(d->ke_max, ke);
  d->worst = fmax(d->worst, fabs(energy(sys, st) - d->E0));
  return 0;
}

static mbs_system* double_pendulum(void) {
  mbs_system* sys = mbs_system_create("double_pendulum");
  mbs_body_spec s1 = mbs_body_spec_default("link1", 0, MBS_MOB_PIN);
  s1.mass = 1.3;
  s1.com[0] = 0.9;
  mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = mbs_body_spec_default("link2", 1, MBS_MOB_PIN);
  s2.mass = 0.7;
  s2.com[0] = 0.6;
  s2.X_PF.p[0] = 0.9;
  mbs_system_add_body(sys, &s2);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_system_finalize(sys);
  return sys;
}

static void check_energy(const mbs_system* sys, mbs_state* init, double T, double accuracy,
                         const char* what) {
  for (int k = 0; k < NCONTROLLED; k++) {
    mbs_state* st = mbs_state_create(sys);
    mbs_state_copy(sys, st, init);
    drift d = {energy(sys, st), 0, 0};
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = controlled[k];
    o.integ.accuracy = accuracy;
    o.report_interval = 0.05;
    mbs_simulation_result r;
    const int rc = mbs_simulate(sys, st, T, &o, NULL, 0, track_energy, &d, &r);
    EXPECT_OK(rc);
    if (rc) fprintf(stderr, "%s\n", mbs_state_error(st)->message);
    // |E|: the total energy, or the kinetic energy it exchanges if that is larger (a total
    // near zero says nothing about the size of the energies in play)
    const double bound = 10 * accuracy * fmax(fabs(d.E0), d.ke_max);
    printf("energy %s, %s: drift %.3g, bound 10 x %.0e x |E| = %.3g, %ld steps\n", what,
           mbs_integrator_name(controlled[k]), d.worst, accuracy, bound, r.integrator.steps);
    EXPECT_TRUE(d.worst <= bound);
    mbs_state_destroy(st);
  }
}

static void test_energy(void) {
  mbs_system* sys = double_pendulum();
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 1.0;
  mbs_state_upd_q(st)[1] = 0.5;
  check_energy(sys, st, 20.0, 1e-6, "double pendulum");
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
  // random chains of rotational mobilizers (the motion stays bounded) with gravity and springs;
  // smooth coupling functions (a spline's third derivative jumps at its knots, which no
  // error estimate of order 4 sees) and no X-Y-Z angle coordinates (their singularity makes the
  // coordinates, not the physics, hard to integrate)
  static const mbs_mobilizer_type rot[5] = {MBS_MOB_PIN, MBS_MOB_BALL, MBS_MOB_UNIVERSAL,
                                            MBS_MOB_FUNCTION, MBS_MOB_ELLIPSOID};
  mbs_test_rng rng = {99};
  for (int t = 0; t < (test_quick() ? 1 : 4); t++) {
    random_tree_opts opts = {7, rot, 5, 1, 1, 1, 0, 1, 1};
    mbs_system* chain = random_tree_create(&rng, &opts);
    mbs_state* s0 = mbs_state_create(chain);
    random_tree_state(&rng, chain, s0, 0.5, 0.5, 0);
    check_energy(chain, s0, test_quick() ? 2.0 : 20.0, 1e-6, "random chain");
    mbs_state_destroy(s0);
    mbs_system_destroy(chain);
  }
}

typedef struct con_track {
  double worst_p, worst_v;
} con_track;

static int track_constraints(const mbs_system* sys, mbs_state* st, void* user) {
  con_track* c = user;
  double e[8];
  int n;
  mbs_calc_position_errors(sys, st, e, &n);
  for (int i = 0; i < n; i++) c->worst_p = fmax(c->worst_p, fabs(e[i]));
  mbs_calc_velocity_errors(sys, st, e, &n);
  for (int i = 0; i < n; i++) c->worst_v = fmax(c->worst_v, fabs(e[i]));
  return 0;
}

// a planar four-bar closed by a ball joint (its out-of-plane equation is redundant); with_muscle:
// a Thelen muscle from Ground to the rocker's middle, at low excitation (stiff)
static mbs_system* four_bar_system(int with_muscle) {
  const double lg = 1.0, len[3] = {0.4, 1.1, 0.8};
  mbs_system* sys = mbs_system_create("four_bar");
  const char* names[3] = {"crank", "coupler", "rocker"};
  for (int i = 0; i < 3; i++) {
    mbs_body_spec s = mbs_body_spec_default(names[i], i, MBS_MOB_PIN);
    s.mass = 1.0 + 0.3 * i;
    s.com[0] = len[i] / 2;
    s.inertia[2] = s.inertia[1] = s.mass * len[i] * len[i] / 12;
    s.inertia[0] = 1e-3;
    if (i > 0) s.X_PF.p[0] = len[i - 1];
    mbs_system_add_body(sys, &s);
  }
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_BALL, "closure");
  c.body1 = 0;
  c.body2 = 3;
  c.p1[0] = lg;
  c.p2[0] = len[2];
  mbs_system_add_constraint(sys, &c);
  if (with_muscle) {
    mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                                mbs_path_point_spec_default("insertion", 3)};
    p[0].location[0] = 0.5;
    p[0].location[1] = 0.6;
    p[1].location[0] = len[2] / 2;
    const int path = mbs_system_add_path(sys, "muscle", p, 2);
    mbs_muscle_params mp;
    mbs_muscle_params_default(&mp, MBS_MUSCLE_THELEN2003);
    mp.max_isometric_force = 300;
    mp.optimal_fiber_length = 0.3;
    mp.tendon_slack_length = 0.4;
    EXPECT_TRUE(mbs_system_add_muscle(sys, &mp, path, 0.02, 0.02, -1) >= 0);
  }
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static void four_bar_start(const mbs_system* sys, mbs_state* st) {
  double* q = mbs_state_upd_q(st);
  q[0] = 1.2; q[1] = -0.6; q[2] = -1.9;
  mbs_state_upd_u(st)[0] = 3.0;
  EXPECT_OK(mbs_assemble(sys, st, NULL));
}

static void test_four_bar(void) {
  mbs_system* sys = four_bar_system(0);
  for (int k = 0; k < NCONTROLLED; k++) {
    mbs_state* st = mbs_state_create(sys);
    four_bar_start(sys, st);
    const double E0 = energy(sys, st);
    con_track ct = {0, 0};
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = controlled[k];
    o.integ.accuracy = 1e-5;
    o.report_interval = 0.01;
    mbs_simulation_result r;
    EXPECT_OK(mbs_simulate(sys, st, 5.0, &o, NULL, 0, track_constraints, &ct, &r));
    const double tol = 0.1 * o.integ.accuracy;
    printf("four-bar, %s: worst position error %.2e, velocity error %.2e (tolerance %.0e), "
           "energy change %.2e of %.3g\n",
           mbs_integrator_name(controlled[k]), ct.worst_p, ct.worst_v, tol,
           fabs(energy(sys, st) - E0), fabs(E0));
    EXPECT_TRUE(ct.worst_p <= 3 * tol);
    EXPECT_TRUE(ct.worst_v <= 3 * tol / 0.1);
    EXPECT_TRUE(fabs(energy(sys, st) - E0) <= 10 * o.integ.accuracy * fabs(E0));
    mbs_state_destroy(st);
  }
  mbs_system_destroy(sys);
}

// a ball dropped from h0 with upward speed v0: height above h reaches 0 at
// t* = (v0 + sqrt(v0^2 + 2 g (h0 - h))) / g
static double height_above(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  return mbs_state_q(st)[1] - *(const double*)user;
}

// the four-bar driven by a stiff muscle: ros34pw2 (its Jacobian with the constraints, the
// redundant one left out) against Dormand-Prince at 1e-11, constraints kept
static void test_four_bar_muscle(void) {
  mbs_system* sys = four_bar_system(1);
  const mbs_integrator_type types[3] = {MBS_INTEG_DORMAND_PRINCE, MBS_INTEG_ROS34PW2,
                                        MBS_INTEG_RK_MERSON};
  const double acc[3] = {1e-11, 1e-5, 1e-5};
  double q[3][3];
  long tries[3];
  for (int k = 0; k < 3; k++) {
    mbs_state* st = mbs_state_create(sys);
    four_bar_start(sys, st);
    EXPECT_OK(mbs_equilibrate_muscles(sys, st));
    con_track ct = {0, 0};
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = types[k];
    o.integ.accuracy = acc[k];
    o.report_interval = 0.01;
    mbs_simulation_result r;
    EXPECT_OK(mbs_simulate(sys, st, 2.0, &o, NULL, 0, track_constraints, &ct, &r));
    for (int i = 0; i < 3; i++) q[k][i] = mbs_state_q(st)[i];
    tries[k] = r.integrator.steps + r.integrator.rejected;
    printf("four-bar with a muscle, %s at %g: q(2) %.8f %.8f %.8f, %ld steps tried, worst "
           "position error %.2e\n", mbs_integrator_name(types[k]), acc[k], q[k][0], q[k][1],
           q[k][2], tries[k], ct.worst_p);
    if (k > 0) EXPECT_TRUE(ct.worst_p <= 3 * 0.1 * acc[k]);
    mbs_state_destroy(st);
  }
  double e_ros = 0, e_merson = 0;
  for (int i = 0; i < 3; i++) {
    e_ros = fmax(e_ros, fabs(q[1][i] - q[0][i]));
    e_merson = fmax(e_merson, fabs(q[2][i] - q[0][i]));
  }
  printf("four-bar with a muscle: |q - reference| %.2e (ros34pw2), %.2e (rk_merson)\n", e_ros,
         e_merson);
  EXPECT_TRUE(e_ros < 1e-3);
  EXPECT_TRUE(fabs(q[0][0] - 1.2) > 0.1);  // it moved
  mbs_system_destroy(sys);
}

static void test_falling_ball_event(void) {
  const double h0 = 10.0, v0 = 3.0, h = 1.5;
  const double t_star = (v0 + sqrt(v0 * v0 + 2 * g0 * (h0 - h))) / g0;
  mbs_system* sys = mbs_system_create("ball");
  mbs_body_spec s = mbs_body_spec_default("ball", 0, MBS_MOB_TRANSLATION);
  s.mass = 0.5;
  mbs_system_add_body(sys, &s);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_system_finalize(sys);
  double level = h;
  for (int k = 0; k < MBS_INTEG_COUNT; k++) {
    mbs_state* st = mbs_state_create(sys);
    mbs_state_upd_q(st)[1] = h0;
    mbs_state_upd_u(st)[1] = v0;
    mbs_event ev = {"reached", height_above, MBS_STAGE_POSITION, -1, NULL, &level};
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = (mbs_integrator_type)k;
    o.integ.accuracy = 1e-8;
    o.integ.fixed_step = 0.01;
    o.event_tolerance = 1e-10;
    mbs_simulation_result r;
    EXPECT_OK(mbs_simulate(sys, st, 10.0, &o, &ev, 1, NULL, NULL, &r));
    EXPECT_EQ_INT(r.event, 0);
    // the polynomial trajectory is integrated exactly by methods of order >= 2; Euler and
    // semi-explicit Euler are first order: their event time is off by O(step)
    const int exact = k != MBS_INTEG_EXPLICIT_EULER && k != MBS_INTEG_SEMI_EXPLICIT_EULER;
    const double tol = exact ? 1e-8 : 0.02;
    printf("falling ball, %s: event at %.12f s (exact %.12f)\n",
           mbs_integrator_name((mbs_integrator_type)k), r.event_time, t_star);
    EXPECT_ABS(r.event_time, t_star, tol);
    EXPECT_ABS(r.t_end, r.event_time, 0);
    mbs_state_destroy(st);
  }
  mbs_system_destroy(sys);
}

typedef struct follow {
  double worst;
} follow;

static int track_prescribed(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  follow* f = user;
  const double t = mbs_state_time(st);
  f->worst = fmax(f->worst, fabs(mbs_state_q(st)[0] - 0.3 * sin(2 * t)));
  return 0;
}

static void test_prescribed(void) {
  // a pendulum driven along q = 0.3 sin(2 t) by a prescribed-motion constraint (the sine as a
  // natural spline through 401 samples, good to ~1e-9)
  mbs_system* sys = mbs_system_create("driven");
  double x[401], y[401];
  for (int i = 0; i < 401; i++) {
    x[i] = -0.5 + 0.02 * i;
    y[i] = 0.3 * sin(2 * x[i]);
  }
  mbs_function_spec f = {MBS_FUNC_NATURAL_CUBIC_SPLINE, "drive", 401, NULL, x, y, 0, 0};
  const int fid = mbs_system_add_function(sys, &f);
  mbs_body_spec s = mbs_body_spec_default("arm", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.com[0] = 0.5;
  mbs_system_add_body(sys, &s);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_PRESCRIBED_MOTION, "drive");
  c.coordinate = (mbs_coordinate_ref){1, 0};
  c.function = fid;
  mbs_system_add_constraint(sys, &c);
  mbs_system_finalize(sys);
  mbs_state* st = mbs_state_create(sys);
  follow fw = {0};
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-7;
  o.report_interval = 0.01;
  EXPECT_OK(mbs_simulate(sys, st, 5.0, &o, NULL, 0, track_prescribed, &fw, NULL));
  printf("prescribed motion: worst |q - 0.3 sin 2t| %.2e\n", fw.worst);
  EXPECT_TRUE(fw.worst < 1e-7);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_steps_vs_accuracy(void) {
  mbs_system* sys = double_pendulum();
  for (int k = 0; k < NCONTROLLED; k++) {
    long prev = 0, prev2 = 0;
    int monotone = 1;
    printf("steps for 10 s of the double pendulum, %s:", mbs_integrator_name(controlled[k]));
    for (int e = 2; e <= 8; e++) {
      mbs_state* st = mbs_state_create(sys);
      mbs_state_upd_q(st)[0] = 1.0;
      mbs_state_upd_q(st)[1] = 0.5;
      mbs_simulation_options o;
      mbs_simulation_options_default(&o);
      o.integrator = controlled[k];
      o.integ.accuracy = pow(10, -e);
      mbs_simulation_result r;
      EXPECT_OK(mbs_simulate(sys, st, 10.0, &o, NULL, 0, NULL, NULL, &r));
      printf(" %ld", r.integrator.steps);
      // never fewer steps for more accuracy, and more over every two decades (at the loosest
      // accuracies the step can be held by stability rather than accuracy)
      if (r.integrator.steps < prev || (e >= 4 && r.integrator.steps <= prev2)) monotone = 0;
      prev2 = prev;
      prev = r.integrator.steps;
      mbs_state_destroy(st);
    }
    printf("\n");
    EXPECT_TRUE(monotone);
  }
  mbs_system_destroy(sys);
}

// harmonic oscillator: slider with a spring, x(t) = x0 cos(w t); error at t = 2 for steps h, h/2
static void test_fixed_step_orders(void) {
  const double m = 2.0, k = 8.0, x0 = 0.3, w = sqrt(k / m), T = 2.0;
  mbs_system* sys = mbs_system_create("oscillator");
  mbs_body_spec s = mbs_body_spec_default("mass", 0, MBS_MOB_SLIDER);
  s.mass = m;
  mbs_system_add_body(sys, &s);
  mbs_system_add_mobility_spring(sys, 1, 0, k, 0);
  mbs_system_finalize(sys);
  const struct { mbs_integrator_type t; double order; } cases[4] = {
      {MBS_INTEG_EXPLICIT_EULER, 1}, {MBS_INTEG_SEMI_EXPLICIT_EULER, 1},
      {MBS_INTEG_VERLET, 2}, {MBS_INTEG_RK4, 4}};
  for (int c = 0; c < 4; c++) {
    double err[2];
    for (int r = 0; r < 2; r++) {
      mbs_state* st = mbs_state_create(sys);
      mbs_state_upd_q(st)[0] = x0;
      mbs_simulation_options o;
      mbs_simulation_options_default(&o);
      o.integrator = cases[c].t;
      o.integ.fixed_step = r == 0 ? 0.01 : 0.005;
      EXPECT_OK(mbs_simulate(sys, st, T, &o, NULL, 0, NULL, NULL, NULL));
      err[r] = fabs(mbs_state_q(st)[0] - x0 * cos(w * T));
      mbs_state_destroy(st);
    }
    const double ratio = err[0] / err[1], expect = pow(2, cases[c].order);
    printf("%s: error %.2e at h = 0.01, ratio for h/2 %.2f (order %g: %g)\n",
           mbs_integrator_name(cases[c].t), err[0], ratio, cases[c].order, expect);
    EXPECT_TRUE(ratio > 0.8 * expect && ratio < 1.25 * expect);
  }
  mbs_system_destroy(sys);
}

typedef struct times {
  double t[1000];
  double q[1000];
  int n;
} times;

static int record(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  times* tm = user;
  if (tm->n < 1000) {
    tm->t[tm->n] = mbs_state_time(st);
    tm->q[tm->n++] = mbs_state_q(st)[0];
  }
  return 0;
}

static void test_reports(void) {
  // reports at exactly k * 0.05 s, and the interpolated values match a tight solution
  mbs_system* sys = double_pendulum();
  times* a = calloc(1, sizeof(times));
  times* b = calloc(1, sizeof(times));
  for (int pass = 0; pass < 2; pass++) {
    mbs_state* st = mbs_state_create(sys);
    mbs_state_upd_q(st)[0] = 1.0;
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integ.accuracy = pass == 0 ? 1e-6 : 1e-12;
    o.report_interval = 0.05;
    EXPECT_OK(mbs_simulate(sys, st, 2.0, &o, NULL, 0, record, pass ? b : a, NULL));
    mbs_state_destroy(st);
  }
  EXPECT_EQ_INT(a->n, 41);
  EXPECT_EQ_INT(b->n, 41);
  double worst = 0;
  for (int i = 0; i < a->n && i < b->n; i++) {
    EXPECT_ABS(a->t[i], 0.05 * i, 1e-12);
    worst = fmax(worst, fabs(a->q[i] - b->q[i]));
  }
  printf("reports at accuracy 1e-6 against 1e-12: worst angle difference %.2e\n", worst);
  EXPECT_TRUE(worst < 1e-4);
  free(a);
  free(b);
  mbs_system_destroy(sys);
}

static void test_failures(void) {
  // a step limit and a singular model come back as statuses with messages
  mbs_system* sys = double_pendulum();
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 1.0;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.max_steps = 5;
  mbs_simulation_result r;
  EXPECT_EQ_INT(mbs_simulate(sys, st, 10.0, &o, NULL, 0, NULL, NULL, &r), MBS_ERR_STEP_LIMIT);
  EXPECT_TRUE(strstr(mbs_state_error(st)->message, "step limit") != NULL);
  EXPECT_TRUE(r.t_end > 0 && r.t_end < 10);  // the steps taken are kept
  EXPECT_NEAR(mbs_state_time(st), r.t_end, 0);
  // a wall-time limit: a tight accuracy over a long time stops early, keeping what was done
  o.max_steps = 0;
  o.integ.accuracy = 1e-12;
  o.max_wall_time = 0.05;
  EXPECT_EQ_INT(mbs_simulate(sys, st, 1e6, &o, NULL, 0, NULL, NULL, &r), MBS_ERR_STEP_LIMIT);
  EXPECT_TRUE(strstr(mbs_state_error(st)->message, "wall-time limit") != NULL);
  EXPECT_TRUE(r.t_end > 0 && r.t_end < 1e6);
  o.max_wall_time = 0;
  o.integ.accuracy = 2.0;
  EXPECT_EQ_INT(mbs_simulate(sys, st, 10.0, &o, NULL, 0, NULL, NULL, &r), MBS_ERR_ARGUMENT);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
  // a spring too stiff for an explicit method at the smallest allowed step: the integrator
  // gives up with a status naming the time and step, never aborts
  {
    mbs_system* stiff = mbs_system_create("stiff");
    mbs_body_spec b = mbs_body_spec_default("bob", 0, MBS_MOB_PIN);
    b.mass = 1;
    b.com[0] = 1;
    mbs_system_add_body(stiff, &b);
    EXPECT_TRUE(mbs_system_add_mobility_spring(stiff, 1, 0, 1e12, 0) >= 0);
    EXPECT_OK(mbs_system_finalize(stiff));
    st = mbs_state_create(stiff);
    mbs_state_upd_q(st)[0] = 0.1;
    mbs_simulation_options_default(&o);
    o.integ.min_step = 1e-4;
    EXPECT_EQ_INT(mbs_simulate(stiff, st, 1.0, &o, NULL, 0, NULL, NULL, &r), MBS_ERR_INTEGRATOR);
    printf("too stiff: %s\n", mbs_state_error(st)->message);
    EXPECT_TRUE(strstr(mbs_state_error(st)->message, "integration failed at t = ") != NULL);
    EXPECT_TRUE(isfinite(mbs_state_q(st)[0]));
    mbs_state_destroy(st);
    mbs_system_destroy(stiff);
  }
  mbs_system* bad = mbs_system_create("ghost");
  mbs_body_spec s = mbs_body_spec_default("ghost", 0, MBS_MOB_PIN);  // no mass: singular
  mbs_system_add_body(bad, &s);
  mbs_system_finalize(bad);
  st = mbs_state_create(bad);
  mbs_simulation_options_default(&o);
  EXPECT_EQ_INT(mbs_simulate(bad, st, 1.0, &o, NULL, 0, NULL, NULL, NULL), MBS_ERR_SINGULAR);
  EXPECT_TRUE(strstr(mbs_state_error(st)->message, "ghost") != NULL);
  mbs_state_destroy(st);
  mbs_system_destroy(bad);
}

// After t = 0.5 s an applied force becomes NaN: the run must stop with a status and a message
// naming the time, keep every report before it, and leave the State at the last good time.
static double after_half(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  (void)user;
  return mbs_state_time(st) - 0.5;
}
static mbs_event_action poison(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  (void)user;
  mbs_state_upd_applied_mobility_forces(st)[0] = NAN;
  return MBS_EVENT_CONTINUE;
}
static int count_reports(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  double* last = user;
  last[0] += 1;
  last[1] = mbs_state_time(st);
  return 0;
}
static void test_failure_keeps_reports(void) {
  mbs_system* sys = double_pendulum();
  for (int k = 0; k < NCONTROLLED; k++) {
    mbs_state* st = mbs_state_create(sys);
    mbs_state_upd_q(st)[0] = 1.0;
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = controlled[k];
    o.report_interval = 0.01;
    const mbs_event ev = {"poison", after_half, MBS_STAGE_TIME, 1, poison, NULL};
    double seen[2] = {0, -1};
    mbs_simulation_result r;
    const int rc = mbs_simulate(sys, st, 2.0, &o, &ev, 1, count_reports, seen, &r);
    const char* msg = mbs_state_error(st)->message;
    printf("%s with a NaN force after 0.5 s: status %d, %g reports up to t = %g, state at %g: %s\n",
           mbs_integrator_name(controlled[k]), rc, seen[0], seen[1], mbs_state_time(st), msg);
    EXPECT_TRUE(rc != MBS_OK);
    EXPECT_TRUE(strstr(msg, "0.5") != NULL);       // names the time
    EXPECT_TRUE(seen[0] >= 51 && seen[1] >= 0.5 - 1e-9);  // reports 0, 0.01, ..., 0.5 kept
    EXPECT_TRUE(fabs(mbs_state_time(st) - 0.5) < 1e-6);
    const double* q = mbs_state_q(st);
    EXPECT_TRUE(isfinite(q[0]) && isfinite(q[1]));
    mbs_state_destroy(st);
  }
  mbs_system_destroy(sys);
}

// a stiff, overdamped oscillator: m x'' + c x' + k x = 0 with c^2 >> 4 m k; exact solution
// A e^(r1 t) + B e^(r2 t). CVODE's BDF follows it in far fewer steps than an explicit method,
// whose step is held by stability (h < 2.8 m / c for Merson) rather than accuracy.
static void test_stiff(void) {
  const double m = 1.0, c = 2e4, k = 100.0, x0 = 0.1, T = 2.0;
  const double disc = sqrt(c * c - 4 * m * k);
  const double r1 = (-c + disc) / (2 * m), r2 = (-c - disc) / (2 * m);
  const double B = -r1 * x0 / (r2 - r1), A = x0 - B;  // x(0) = x0, x'(0) = 0
  const double exact = A * exp(r1 * T) + B * exp(r2 * T);
  mbs_system* sys = mbs_system_create("stiff");
  mbs_body_spec s = mbs_body_spec_default("mass", 0, MBS_MOB_SLIDER);
  s.mass = m;
  mbs_system_add_body(sys, &s);
  mbs_system_add_mobility_spring(sys, 1, 0, k, 0);
  mbs_system_add_mobility_damper(sys, 1, 0, c);
  mbs_system_finalize(sys);
  long steps[2];
  for (int i = 0; i < 2; i++) {
    mbs_state* st = mbs_state_create(sys);
    mbs_state_upd_q(st)[0] = x0;
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = i ? MBS_INTEG_CVODE_BDF : MBS_INTEG_RK_MERSON;
    o.integ.accuracy = 1e-5;
    mbs_simulation_result r;
    EXPECT_OK(mbs_simulate(sys, st, T, &o, NULL, 0, NULL, NULL, &r));
    steps[i] = r.integrator.steps;
    printf("stiff oscillator, %s: x(%g) = %.9g (exact %.9g), %ld steps\n",
           mbs_integrator_name(o.integrator), T, mbs_state_q(st)[0], exact, steps[i]);
    EXPECT_NEAR(mbs_state_q(st)[0], exact, 1e-4);
    mbs_state_destroy(st);
  }
  EXPECT_TRUE(steps[1] * 20 < steps[0]);
  mbs_system_destroy(sys);
}

int main(void) {
  test_stiff();
  test_pendulum_period();
  test_energy();
  test_four_bar();
  test_four_bar_muscle();
  test_falling_ball_event();
  test_prescribed();
  test_steps_vs_accuracy();
  test_fixed_step_orders();
  test_reports();
  test_failures();
  test_failure_keeps_reports();
  return mbs_test_finish("test_integrators");
}
