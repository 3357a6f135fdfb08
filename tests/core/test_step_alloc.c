// No allocation inside the integration step loop. For every integrator (every
// mbs_integrator_type: the fixed-step ones, the error-controlled ones, the linearly implicit
// ros34pw2 and CVODE) on models that exercise the step paths users run:
// - a random tree of every mobilizer type with gravity, springs, dampers and applied forces;
// - force elements: bushing, coordinate limit, spring generalized force, external force,
//   coordinate, point, torque and activation coordinate actuators (an auxiliary state);
// - constraints: a four-bar closed by a ball joint (one redundant equation: the least-squares
//   path) driven by a muscle, and prescribed motion, a coordinate coupler, a rod and a rolling
//   sphere (nonholonomic) together;
// - compliant contact: Hunt-Crossley spheres and an ellipsoid on a floor, an elastic
//   foundation mesh, with friction, starting in contact;
// - muscles of every kind on paths with via, conditional and moving points and a wrap
//   cylinder, a path actuator, a path spring and a ligament;
// - controllers: a PD tracker with a neural delay and a window (the State's history of
//   accepted steps) driving a torque actuator and a muscle, and a C callback;
// an integrator is created and initialized (where buffers are sized), then the allocations
// (every one in the process, SUNDIALS's and LAPACK's included: tests/mbs_test_alloc.h) are
// counted from the first step on, over many accepted steps with dense output, a restart at an
// event-like re-initialization, and, for the error-controlled ones, rejected steps (a first
// step far too large) and step-size changes: none at all. The same through the time stepper
// (mbs_simulate): none from the first report (after the integrator's initialization) to the
// last, across reports from the interpolant, event isolation by re-stepping and restarts at
// events.
//
// Counting every allocation of the process is how CVODE's own allocations in its steps were
// found (a vector wrapping each column of every difference-quotient Jacobian, the saved Jacobian
// at the first step) and removed (core/integrator_cvode.c); LAPACK (the constraints'
// dgetrf/dgelsy, ros34pw2's factorizations) allocates nothing. (In the sanitizer build only the
// test's and mbstudy's own calls are counted: see tests/mbs_test_alloc.h.)
//
// --data DIR: the same on OpenSim's published gait2392 (Thelen muscles, custom joints,
// wrapping, coupler constraints) and rajagopal2016 from DIR/models; exits 77 (skipped) when
// gait2392 is not there.
#include <stdio.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs_test_alloc.h"
#include "random_tree.h"

static const double g0 = 9.81;

typedef struct model {
  const char* name;
  const mbs_system* sys;
  mbs_state* init;       // the start State (assembled, muscles equilibrated)
  double accuracy;
  double fixed_step;     // of the fixed-step methods
  double big_step;       // first try of the error-controlled ones: far too large, rejected
  double interval;       // the steps' limits come every interval (hit_limit steps)
  double t_sim;          // simulated time through mbs_simulate
  mbs_osim_model* osim;  // owns sys when read from a file
  mbs_system* owned;     // else this
} model;

static void model_free(model* m) {
  mbs_state_destroy(m->init);
  mbs_osim_free(m->osim);
  mbs_system_destroy(m->owned);
}

static int steps_wanted(void) { return test_quick() ? 40 : 200; }

//---------------------------------- the step loop ----------------------------------------------

static void check_step_loop(const model* m, mbs_integrator_type type) {
  const mbs_system* sys = m->sys;
  const int controlled = mbs_integrator_is_error_controlled(type);
  mbs_integrator_options o;
  mbs_integrator_options_default(&o);
  o.accuracy = m->accuracy;
  o.fixed_step = m->fixed_step;
  if (controlled) o.initial_step = m->big_step;
  mbs_integrator* in = mbs_integrator_create(sys, type, &o);
  EXPECT_TRUE(in != NULL);
  if (!in) return;
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_state_copy(sys, st, m->init));
  const int ny = mbs_system_nq(sys) + mbs_system_nu(sys) + mbs_system_nz(sys);
  double* y = calloc((size_t)ny + 1, sizeof(double));
  int rc = mbs_integrator_initialize(in, sys, st);
  EXPECT_OK(rc);
  const double t_start = mbs_state_time(st);
  const int nsteps = steps_wanted();
  long restarted_at = -1;
  double h_first = 0, h_min = INFINITY, h_max = 0;
  double t_limit = t_start + m->interval;
  int k = 0;
  // from the first step on: steps, dense output, a restart; nothing printed in here
  const long before = n_alloc;
  for (; k < nsteps && rc == MBS_OK; k++) {
    while (!(mbs_state_time(st) < t_limit)) t_limit += m->interval;
    if ((rc = mbs_integrator_step(in, sys, st, t_limit))) break;
    double t0, t1;
    mbs_integrator_last_step(in, &t0, &t1);
    const double h = t1 - t0;
    if (k == 0) h_first = h;
    h_min = fmin(h_min, h);
    h_max = fmax(h_max, h);
    if ((rc = mbs_integrator_interpolate(in, t0 + 0.37 * h, y))) break;
    if (k == nsteps / 2) {  // restart where the State is, as the time stepper does at events
      restarted_at = mbs_integrator_stats_of(in)->steps;
      if ((rc = mbs_integrator_initialize(in, sys, st))) break;
    }
  }
  const long allocated = n_alloc - before;
  const mbs_integrator_stats* s = mbs_integrator_stats_of(in);
  printf("%-22s %-19s %4d steps to t = %.5f s: %ld accepted, %ld rejected, %ld evaluations, "
         "h %.2e .. %.2e; %ld allocations\n",
         m->name, mbs_integrator_name(type), k, mbs_state_time(st), s->steps, s->rejected,
         s->evaluations, h_min, h_max, allocated);
  if (rc) fprintf(stderr, "%s, %s: %s\n", m->name, mbs_integrator_name(type),
                  mbs_state_error(st)->message);
  EXPECT_OK(rc);
  EXPECT_EQ_INT(k, nsteps);
  EXPECT_EQ_INT(allocated, 0);
  // steps happened, time advanced (the statistics count from the restart for CVODE, whose
  // restart resets its counters, and from the start for the others)
  EXPECT_TRUE(s->steps > 0);
  EXPECT_TRUE(mbs_state_time(st) > t_start);
  EXPECT_TRUE(restarted_at > 0);
  if (controlled) {
    // the rejection path and step-size control ran inside the counted loop
    EXPECT_TRUE(s->rejected > 0);
    EXPECT_TRUE(h_max > h_min);
    EXPECT_TRUE(h_first < m->big_step);
  }
  free(y);
  mbs_state_destroy(st);
  mbs_integrator_destroy(in);
}

//---------------------------------- the time stepper -------------------------------------------

typedef struct report_count {
  long n;
  long at_first, at_last;  // n_alloc at the first and the last report
} report_count;

static int count_report(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  (void)st;
  report_count* c = user;
  if (c->n++ == 0) c->at_first = n_alloc;
  c->at_last = n_alloc;
  return 0;
}

// an event every 1/20 of the run (a function of time), and a second on the first speed at
// Acceleration (its sign changes, or it never fires)
typedef struct clock_event {
  double period;
  long fired;
} clock_event;

static double clock_trigger(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  const clock_event* c = user;
  return sin(2 * M_PI * mbs_state_time(st) / c->period + 0.5);
}

static double speed_trigger(const mbs_system* sys, mbs_state* st, void* user) {
  (void)user;
  return mbs_get_udot(sys, st)[0];
}

static mbs_event_action clock_handler(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  (void)st;
  ((clock_event*)user)->fired++;
  return MBS_EVENT_CONTINUE;
}

static void check_simulate(const model* m, mbs_integrator_type type) {
  const mbs_system* sys = m->sys;
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_state_copy(sys, st, m->init));
  const double t_final = mbs_state_time(st) + (test_quick() ? 0.25 : 1) * m->t_sim;
  clock_event clk = {(t_final - mbs_state_time(st)) / 10, 0}, acc = {0, 0};
  mbs_event ev[2] = {{"clock", clock_trigger, MBS_STAGE_TIME, 0, clock_handler, &clk},
                     {"speed", speed_trigger, MBS_STAGE_ACCELERATION, 0, clock_handler, &acc}};
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integrator = type;
  o.integ.accuracy = m->accuracy;
  o.integ.fixed_step = m->fixed_step;
  o.report_interval = (t_final - mbs_state_time(st)) / 25;
  o.integ.max_step = clk.period / 3;  // a step sees each crossing of the clock
  report_count c = {0, 0, 0};
  mbs_simulation_result r;
  const int rc = mbs_simulate(sys, st, t_final, &o, ev, mbs_system_nu(sys) > 0 ? 2 : 1,
                              count_report, &c, &r);
  const long allocated = c.at_last - c.at_first;
  printf("%-22s %-19s simulate to %.4f s: %ld steps, %ld rejected, %ld reports, %ld events; "
         "%ld allocations\n", m->name, mbs_integrator_name(type), r.t_end, r.integrator.steps,
         r.integrator.rejected, r.reports, r.events, allocated);
  if (rc) fprintf(stderr, "%s, %s: %s\n", m->name, mbs_integrator_name(type),
                  mbs_state_error(st)->message);
  EXPECT_OK(rc);
  EXPECT_EQ_INT(allocated, 0);
  EXPECT_TRUE(r.integrator.steps > 0);
  EXPECT_ABS(r.t_end, t_final, 1e-12);
  EXPECT_TRUE(r.reports >= 20);
  EXPECT_TRUE(clk.fired >= 5);
  mbs_state_destroy(st);
}

static void check_model(model* m) {
  EXPECT_TRUE(m->sys != NULL && m->init != NULL);
  if (!m->sys || !m->init) return;
  // never stepped: what CVODE would have been handed at its first step is freed (valgrind, ASan)
  mbs_integrator_destroy(mbs_integrator_create(m->sys, MBS_INTEG_CVODE_BDF, NULL));
  for (int t = 0; t < MBS_INTEG_COUNT; t++) check_step_loop(m, (mbs_integrator_type)t);
  for (int t = 0; t < MBS_INTEG_COUNT; t++) check_simulate(m, (mbs_integrator_type)t);
}

//---------------------------------- models -----------------------------------------------------

static model random_tree_model(void) {
  mbs_test_rng rng = {17};
  random_tree_opts ro = {12, random_tree_all_types, MBS_MOB_COUNT, 0, 1, 1, 1, 1, 1};
  mbs_system* sys = random_tree_create(&rng, &ro);
  model m = {"random tree", sys, NULL, 1e-4, 1e-3, 0.1, 0.2, 0.3, NULL, sys};
  if (!m.sys) return m;
  m.init = mbs_state_create(m.sys);
  random_tree_state(&rng, m.sys, m.init, 0.5, 0.5, 1);
  return m;
}

static int find_control(const mbs_system* sys, int force) {
  for (int c = 0; c < mbs_system_ncontrol(sys); c++)
    if (mbs_control_force(sys, c) == force) return c;
  return -1;
}

static model force_elements_model(void) {
  mbs_system* sys = mbs_system_create("force_elements");
  const mbs_mobilizer_type types[6] = {MBS_MOB_PIN,  MBS_MOB_SLIDER,     MBS_MOB_BALL,
                                       MBS_MOB_FREE, MBS_MOB_UNIVERSAL, MBS_MOB_GIMBAL};
  const int parents[6] = {0, 1, 1, 0, 4, 3};
  const char* names[6] = {"arm", "slide", "ball", "free", "universal", "gimbal"};
  int b[7] = {0};
  for (int i = 0; i < 6; i++) {
    mbs_body_spec s = mbs_body_spec_default(names[i], b[parents[i]], types[i]);
    s.mass = 1.0 + 0.2 * i;
    s.com[0] = 0.2;
    s.com[1] = 0.05 * i;
    s.inertia[0] = 0.02;
    s.inertia[1] = 0.03;
    s.inertia[2] = 0.025;
    s.X_PF.p[0] = parents[i] ? 0.3 : 0.1 * i;
    s.X_PF.angles[0] = 0.2 * i;
    b[i + 1] = mbs_system_add_body(sys, &s);
  }
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_bushing_spec bu;
  memset(&bu, 0, sizeof(bu));
  bu.body1 = 0;
  bu.body2 = b[4];
  for (int k = 0; k < 3; k++) {
    bu.rotational_stiffness[k] = 50;
    bu.translational_stiffness[k] = 400;
    bu.rotational_damping[k] = 0.5;
    bu.translational_damping[k] = 5;
  }
  EXPECT_TRUE(mbs_system_add_bushing(sys, &bu) >= 0);
  const mbs_coordinate_limit_spec lim = {b[1], 0, 200, 0.2, 200, -0.2, 1.0, 0.05};
  EXPECT_TRUE(mbs_system_add_coordinate_limit(sys, &lim) >= 0);
  EXPECT_TRUE(mbs_system_add_spring_generalized_force(sys, b[2], 0, 80, 0.05, 0.5) >= 0);
  const double sine[4] = {5, 7, 0.3, 1}, cosine[4] = {0.2, 5, 1.2, 0.1};
  mbs_function_spec fs = {MBS_FUNC_SINE, "push", 4, sine, NULL, NULL, 0, 0};
  const int f_push = mbs_system_add_function(sys, &fs);
  fs = (mbs_function_spec){MBS_FUNC_SINE, "twist", 4, cosine, NULL, NULL, 0, 0};
  const int f_twist = mbs_system_add_function(sys, &fs);
  const double zero = 0.02;
  fs = (mbs_function_spec){MBS_FUNC_CONSTANT, "small", 1, &zero, NULL, NULL, 0, 0};
  const int f_small = mbs_system_add_function(sys, &fs);
  mbs_external_force_spec ef = {b[4], 0, b[4], {f_push, f_small, f_twist},
                                {f_twist, f_small, f_small}, {f_small, f_twist, f_small}};
  EXPECT_TRUE(mbs_system_add_external_force(sys, &ef) >= 0);
  EXPECT_TRUE(mbs_system_add_coordinate_actuator(sys, b[1], 0, 5, 0, f_twist) >= 0);
  mbs_point_actuator_spec pa = {b[4], {0.1, 0, 0}, 0, {0, 1, 0}, 1, 10, 0.5, -1};
  EXPECT_TRUE(mbs_system_add_point_actuator(sys, &pa) >= 0);
  mbs_torque_actuator_spec ta = {b[3], b[1], {0, 0, 1}, 0, 2, 0.3, -1};
  EXPECT_TRUE(mbs_system_add_torque_actuator(sys, &ta) >= 0);
  EXPECT_TRUE(mbs_system_add_activation_coordinate_actuator(sys, b[2], 0, 20, 0.02, 0.1, 0.8,
                                                            -1) >= 0);
  const double p[3] = {0.1, 0, 0}, F[3] = {0, 2, 0}, T[3] = {0, 0, 0.1};
  EXPECT_TRUE(mbs_system_add_body_force(sys, b[6], p, F) >= 0);
  EXPECT_TRUE(mbs_system_add_body_torque(sys, b[5], T) >= 0);
  EXPECT_TRUE(mbs_system_add_mobility_force(sys, b[1], 0, 0.5) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  model m = {"force elements", sys, mbs_state_create(sys), 1e-4, 1e-3, 0.1, 0.2, 0.3, NULL,
             sys};
  double* u = mbs_state_upd_u(m.init);
  for (int i = 0; i < mbs_system_nu(sys); i++) u[i] = 0.3 * sin(1.0 + i);
  return m;
}

// a planar four-bar closed by a ball joint (its out-of-plane equation is redundant), driven by
// a Thelen muscle from Ground to the rocker
static model four_bar_model(void) {
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
  EXPECT_TRUE(mbs_system_add_muscle(sys, &mp, path, 0.2, 0.3, -1) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  model m = {"four-bar, muscle", sys, mbs_state_create(sys), 1e-4, 2e-4, 0.05, 0.1, 0.3,
             NULL, sys};
  double* q = mbs_state_upd_q(m.init);
  q[0] = 1.2;
  q[1] = -0.6;
  q[2] = -1.9;
  mbs_state_upd_u(m.init)[0] = 3.0;
  EXPECT_OK(mbs_assemble(sys, m.init, NULL));
  EXPECT_OK(mbs_equilibrate_muscles(sys, m.init));
  return m;
}

// prescribed motion, a coordinate coupler, a rod and a rolling sphere in one system
static model constraints_model(void) {
  mbs_system* sys = mbs_system_create("constraints");
  const double sine[4] = {0.4, 3, 0, 0.1}, ratio[2] = {-0.5, 0.2};
  mbs_function_spec fs = {MBS_FUNC_SINE, "drive", 4, sine, NULL, NULL, 0, 0};
  const int f_drive = mbs_system_add_function(sys, &fs);
  fs = (mbs_function_spec){MBS_FUNC_LINEAR, "ratio", 0, ratio, NULL, NULL, 0, 0};
  const int f_ratio = mbs_system_add_function(sys, &fs);
  // a driven arm (prescribed), a double pendulum hanging from it (coupled), a particle on a
  // rod from the pendulum's tip, a ball rolling on a tilted plane
  mbs_body_spec s = mbs_body_spec_default("driven", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.com[0] = 0.3;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.01;
  const int arm = mbs_system_add_body(sys, &s);
  s = mbs_body_spec_default("link1", arm, MBS_MOB_PIN);
  s.mass = 1.3;
  s.com[0] = 0.45;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.02;
  s.X_PF.p[0] = 0.6;
  const int l1 = mbs_system_add_body(sys, &s);
  s = mbs_body_spec_default("link2", l1, MBS_MOB_PIN);
  s.mass = 0.7;
  s.com[0] = 0.3;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.01;
  s.X_PF.p[0] = 0.9;
  const int l2 = mbs_system_add_body(sys, &s);
  s = mbs_body_spec_default("particle", 0, MBS_MOB_TRANSLATION);
  s.mass = 0.5;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 1e-3;
  const int pt = mbs_system_add_body(sys, &s);
  s = mbs_body_spec_default("ball", 0, MBS_MOB_FREE);
  const double R = 0.25, th = 0.35, mb = 3.0;
  s.mass = mb;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.4 * mb * R * R;
  const int ball = mbs_system_add_body(sys, &s);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_PRESCRIBED_MOTION, "drive");
  c.coordinate = (mbs_coordinate_ref){arm, 0};
  c.function = f_drive;
  EXPECT_TRUE(mbs_system_add_constraint(sys, &c) >= 0);
  c = mbs_constraint_spec_default(MBS_CON_COORDINATE_COUPLER, "knee");
  c.coordinate = (mbs_coordinate_ref){l2, 0};
  c.independent = (mbs_coordinate_ref){l1, 0};
  c.function = f_ratio;
  EXPECT_TRUE(mbs_system_add_constraint(sys, &c) >= 0);
  c = mbs_constraint_spec_default(MBS_CON_ROD, "rod");
  c.body1 = l2;
  c.p1[0] = 0.6;
  c.body2 = pt;
  c.value = 0.5;
  EXPECT_TRUE(mbs_system_add_constraint(sys, &c) >= 0);
  c = mbs_constraint_spec_default(MBS_CON_ROLLING, "roll");
  c.body1 = 0;
  c.body2 = ball;
  c.a1[0] = -sin(th);
  c.a1[1] = cos(th);
  c.p1[1] = -3;
  c.value = R;
  EXPECT_TRUE(mbs_system_add_constraint(sys, &c) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  model m = {"constraints", sys, mbs_state_create(sys), 1e-6, 1e-3, 0.2, 0.25, 0.3, NULL,
             sys};
  double* q = mbs_state_upd_q(m.init);
  q[mbs_body_qadr(sys, l1)] = -1.2;
  double* qp = q + mbs_body_qadr(sys, pt);
  qp[0] = 1.3;
  qp[1] = -1.4;
  qp[2] = 0.1;
  double* qb = q + mbs_body_qadr(sys, ball);  // (quaternion, center)
  qb[0] = 1;
  qb[4] = -R * sin(th);
  qb[5] = -3 + R * cos(th) + 0.01;
  qb[6] = 0.5;
  double* u = mbs_state_upd_u(m.init);
  u[mbs_body_uadr(sys, l1)] = 1.0;
  u[mbs_body_uadr(sys, ball) + 2] = 1.5;
  EXPECT_OK(mbs_assemble(sys, m.init, NULL));
  return m;
}

// an n x n grid of squares on [-L/2, L/2]^2 in the x-z plane of the body, facing down (-y)
static void square_mesh(int n, double L, double* v, int* t) {
  for (int i = 0; i <= n; i++)
    for (int j = 0; j <= n; j++) {
      double* p = v + 3 * (i * (n + 1) + j);
      p[0] = -L / 2 + L * i / n;
      p[1] = 0;
      p[2] = -L / 2 + L * j / n;
    }
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      const int a = i * (n + 1) + j, b = a + n + 1, c = b + 1, d = a + 1;
      t[k++] = a, t[k++] = b, t[k++] = c;
      t[k++] = a, t[k++] = c, t[k++] = d;
    }
}

static int add_free_body(mbs_system* sys, const char* name, double m, double I) {
  mbs_body_spec s = mbs_body_spec_default(name, 0, MBS_MOB_FREE);
  s.mass = m;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = I;
  return mbs_system_add_body(sys, &s);
}

static void set_free(const mbs_system* sys, mbs_state* st, int b, double x, double y, double z,
                     double vx, double wz) {
  double* q = mbs_state_upd_q(st) + mbs_body_qadr(sys, b);
  double* u = mbs_state_upd_u(st) + mbs_body_uadr(sys, b);
  q[0] = 1;
  q[4] = x;
  q[5] = y;
  q[6] = z;
  u[2] = wz;
  u[3] = vx;
}

// spheres and an ellipsoid (Hunt-Crossley) and a mesh sole (elastic foundation) on a floor,
// starting in contact and sliding (friction)
static model contact_model(void) {
  enum { N = 4 };
  static double v[3 * (N + 1) * (N + 1)];
  static int tri[6 * N * N];
  square_mesh(N, 0.2, v, tri);
  mbs_system* sys = mbs_system_create("contact");
  const int b1 = add_free_body(sys, "ball1", 1, 0.004);
  const int b2 = add_free_body(sys, "ball2", 2, 0.01);
  const int b3 = add_free_body(sys, "egg", 1, 0.004);
  const int b4 = add_free_body(sys, "foot", 1, 0.01);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_contact_geometry_spec gs = mbs_contact_geometry_spec_default("floor", MBS_GEOM_HALFSPACE, 0);
  gs.frame.angles[2] = -M_PI / 2;  // the solid is y < 0
  const int floor = mbs_system_add_contact_geometry(sys, &gs);
  gs = mbs_contact_geometry_spec_default("s1", MBS_GEOM_SPHERE, b1);
  gs.radius = 0.1;
  const int s1 = mbs_system_add_contact_geometry(sys, &gs);
  gs = mbs_contact_geometry_spec_default("s2", MBS_GEOM_SPHERE, b2);
  gs.radius = 0.15;
  const int s2 = mbs_system_add_contact_geometry(sys, &gs);
  gs = mbs_contact_geometry_spec_default("ell", MBS_GEOM_ELLIPSOID, b3);
  gs.radii[0] = 0.15;
  gs.radii[1] = 0.08;
  gs.radii[2] = 0.1;
  const int el = mbs_system_add_contact_geometry(sys, &gs);
  gs = mbs_contact_geometry_spec_default("sole", MBS_GEOM_MESH, b4);
  gs.vertices = v;
  gs.nvertex = (N + 1) * (N + 1);
  gs.triangles = tri;
  gs.ntriangle = 2 * N * N;
  const int sole = mbs_system_add_contact_geometry(sys, &gs);
  const mbs_contact_surface hc[4] = {{floor, 2e6, 1.0, 0.9, 0.6, 0.1},
                                     {s1, 2e6, 1.0, 0.8, 0.5, 0.05},
                                     {s2, 2e6, 0.5, 0.8, 0.5, 0.05},
                                     {el, 2e6, 0.8, 0.7, 0.4, 0.0}};
  const int fhc = mbs_system_add_hunt_crossley(sys, hc, 4, 0.1);
  EXPECT_TRUE(fhc >= 0);
  const mbs_contact_surface efs[2] = {{sole, 2e6, 1.0, 0.9, 0.6, 0.0},
                                      {floor, 0, 1.0, 0.9, 0.6, 0.0}};
  const int fef = mbs_system_add_elastic_foundation(sys, efs, 2, 0.05);
  EXPECT_TRUE(fef >= 0);
  EXPECT_TRUE(mbs_system_set_contact_friction_model(sys, fef, MBS_FRICTION_STRIBECK) == MBS_OK);
  EXPECT_OK(mbs_system_finalize(sys));
  model m = {"contact", sys, mbs_state_create(sys), 1e-4, 1e-4, 0.02, 0.05, 0.1, NULL, sys};
  set_free(sys, m.init, b1, 0, 0.0995, 0, 0.5, 0);
  set_free(sys, m.init, b2, 1, 0.1495, 0.5, -0.2, 3);
  set_free(sys, m.init, b3, 2, 0.0795, 0, 0.3, 1);
  set_free(sys, m.init, b4, 3, -0.0002, 0, 0.2, 0.5);
  // in contact at the start
  EXPECT_OK(mbs_realize_dynamics(sys, m.init));
  mbs_contact_report rep[8];
  int n = 0, touching = 0;
  EXPECT_OK(mbs_get_contact_reports(sys, m.init, fhc, rep, 8, &n));
  for (int i = 0; i < n; i++) touching += rep[i].in_contact;
  EXPECT_EQ_INT(touching, 3);
  EXPECT_OK(mbs_get_contact_reports(sys, m.init, fef, rep, 8, &n));
  EXPECT_TRUE(n == 1 && rep[0].in_contact);
  return m;
}

// a two-link arm with a muscle of every kind and the other path forces
static model muscles_model(void) {
  mbs_system* sys = mbs_system_create("muscles");
  mbs_body_spec s = mbs_body_spec_default("upper", 0, MBS_MOB_PIN);
  s.mass = 2;
  s.com[1] = -0.15;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.02;
  const int up = mbs_system_add_body(sys, &s);
  s = mbs_body_spec_default("lower", up, MBS_MOB_PIN);
  s.mass = 1;
  s.com[1] = -0.15;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.01;
  s.X_PF.p[1] = -0.3;
  const int lo = mbs_system_add_body(sys, &s);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  // joints held near the start pose: the muscles stay well longer than their tendons
  EXPECT_TRUE(mbs_system_add_mobility_spring(sys, up, 0, 30, 0.3) >= 0);
  EXPECT_TRUE(mbs_system_add_mobility_spring(sys, lo, 0, 30, 0.5) >= 0);
  EXPECT_TRUE(mbs_system_add_mobility_damper(sys, up, 0, 1) >= 0);
  EXPECT_TRUE(mbs_system_add_mobility_damper(sys, lo, 0, 1) >= 0);
  // a wrap cylinder about the elbow's axis
  mbs_wrap_object cyl;
  memset(&cyl, 0, sizeof(cyl));
  cyl.shape = MBS_WRAP_CYLINDER;
  cyl.radius = 0.03;
  cyl.length = 0.2;
  cyl.quadrant = MBS_WRAP_ALL;
  mbs_transform X = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, -0.3, 0}};
  const int w = mbs_system_add_wrap_object(sys, "/bodyset/upper/elbow", "elbow", up, &X, &cyl, 1);
  EXPECT_TRUE(w >= 0);
  const double mx[2] = {-1, 1}, my[2] = {0.02, 0.05};
  mbs_function_spec fs = {MBS_FUNC_NATURAL_CUBIC_SPLINE, "moving", 2, NULL, mx, my, 0, 0};
  const int f_moving = mbs_system_add_function(sys, &fs);
  const double sine[4] = {0.3, 10, 0, 0.5};
  fs = (mbs_function_spec){MBS_FUNC_SINE, "excitation", 4, sine, NULL, NULL, 0, 0};
  const int f_exc = mbs_system_add_function(sys, &fs);
  const int q_elbow = mbs_body_qadr(sys, lo), u_elbow = mbs_body_uadr(sys, lo);
  for (int kind = 0; kind < MBS_MUSCLE_KIND_COUNT; kind++) {
    const double side = kind % 2 ? 1 : -1, z = 0.01 * (kind - 3);
    char name[32];
    snprintf(name, sizeof(name), "muscle%d", kind);
    mbs_path_point_spec p[4] = {mbs_path_point_spec_default("origin", up),
                                mbs_path_point_spec_default("via", up),
                                mbs_path_point_spec_default("conditional", up),
                                mbs_path_point_spec_default("insertion", lo)};
    p[0].location[0] = 0.03 * side;
    p[0].location[1] = -0.02;
    p[0].location[2] = z;
    p[1].location[0] = 0.04 * side;
    p[1].location[1] = -0.15;
    p[1].location[2] = z;
    p[2].kind = MBS_PATH_POINT_CONDITIONAL;  // active over part of the motion
    p[2].location[0] = 0.045 * side;
    p[2].location[1] = -0.22;
    p[2].location[2] = z;
    p[2].q_index = q_elbow;
    p[2].range[0] = -0.2;
    p[2].range[1] = 0.6;
    p[3].kind = MBS_PATH_POINT_MOVING;  // its x moves with the elbow angle
    p[3].location[0] = 0.03 * side;
    p[3].location[1] = -0.06;
    p[3].location[2] = z;
    for (int k = 0; k < 3; k++) p[3].function[k] = -1;
    p[3].function[0] = f_moving;
    p[3].function_q[0] = q_elbow;
    p[3].function_u[0] = u_elbow;
    const int path = mbs_system_add_path(sys, name, p, 4);
    EXPECT_TRUE(path >= 0);
    EXPECT_OK(mbs_path_add_wrap(sys, path, w, MBS_WRAP_HYBRID, -1, -1));
    mbs_muscle_params mp;
    mbs_muscle_params_default(&mp, (mbs_muscle_kind)kind);
    mp.max_isometric_force = 200;
    mp.optimal_fiber_length = 0.12;
    mp.tendon_slack_length = 0.18;
    mp.pennation_angle_at_optimal = 0.1;
    const int f = mbs_system_add_muscle(sys, &mp, path, 0.3, 0.4, kind % 3 == 0 ? f_exc : -1);
    EXPECT_TRUE(f >= 0);
    if (f < 0) fprintf(stderr, "muscle %d: %s\n", kind, mbs_system_error(sys)->message);
  }
  // a path actuator, a path spring and a ligament from the shoulder to the forearm
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", lo)};
  p[0].location[0] = 0.1;
  p[1].location[1] = -0.1;
  const int pa_path = mbs_system_add_path(sys, "actuator", p, 2);
  const mbs_path_actuator_spec pa = {NULL, pa_path, 20, 0.3, -1};
  EXPECT_TRUE(mbs_system_add_path_actuator(sys, &pa) >= 0);
  p[0].location[0] = -0.1;
  const int ps_path = mbs_system_add_path(sys, "spring", p, 2);
  const mbs_path_spring_spec ps = {NULL, ps_path, 0.3, 100, 0.2};
  EXPECT_TRUE(mbs_system_add_path_spring(sys, &ps) >= 0);
  p[0].location[0] = 0.05;
  p[0].location[1] = 0.05;
  const int lg_path = mbs_system_add_path(sys, "ligament", p, 2);
  const int curve = mbs_system_add_ligament_default_curve(sys, "ligament_curve");
  const mbs_ligament_spec lg = {NULL, lg_path, 0.42, 50, curve};
  EXPECT_TRUE(mbs_system_add_ligament(sys, &lg) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  model m = {"muscles", sys, mbs_state_create(sys), 1e-4, 1e-4, 0.05, 0.1, 0.2, NULL, sys};
  double* q = mbs_state_upd_q(m.init);
  q[0] = 0.3;
  q[q_elbow] = 0.5;
  mbs_state_upd_u(m.init)[u_elbow] = -1;
  EXPECT_OK(mbs_equilibrate_muscles(sys, m.init));
  // the muscles on one side wrap over the cylinder (their tangent points besides their four
  // points), the others pass it
  double pts[3 * (MBS_PATH_MAX_POINTS + 2 * MBS_PATH_MAX_WRAPS)];
  int n0 = 0, n1 = 0;
  EXPECT_OK(mbs_calc_path_points(sys, m.init, 0, pts, &n0));
  EXPECT_OK(mbs_calc_path_points(sys, m.init, 1, pts, &n1));
  EXPECT_EQ_INT(n0, 6);
  EXPECT_EQ_INT(n1, 4);
  return m;
}

static void half_control(const mbs_system* sys, const mbs_state* st, double* controls,
                         void* user) {
  const int* c = user;
  (void)sys;
  controls[*c] += 0.5 * sin(3 * mbs_state_time(st));
}

// an arm held up by a delayed, windowed PD controller on a torque actuator and a muscle, and a
// C callback adding to the torque's control
static model controller_model(void) {
  static int torque_control;
  mbs_system* sys = mbs_system_create("controller");
  mbs_body_spec s = mbs_body_spec_default("arm", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.com[0] = 0.3;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.01;
  const int arm = mbs_system_add_body(sys, &s);
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
  mbs_torque_actuator_spec ta = {arm, 0, {0, 0, 1}, 1, 10, 0, -1};
  const int ft = mbs_system_add_torque_actuator(sys, &ta);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", arm)};
  p[0].location[1] = 0.4;
  p[1].location[0] = 0.3;
  const int path = mbs_system_add_path(sys, "lifter", p, 2);
  mbs_muscle_params mp;
  mbs_muscle_params_default(&mp, MBS_MUSCLE_MILLARD2012);
  mp.max_isometric_force = 300;
  mp.optimal_fiber_length = 0.2;
  mp.tendon_slack_length = 0.25;
  const int fm = mbs_system_add_muscle(sys, &mp, path, 0.2, 0.2, -1);
  EXPECT_TRUE(ft >= 0 && fm >= 0);
  torque_control = find_control(sys, ft);
  const mbs_pd_output out[2] = {{torque_control, 0.1, 0, -1, 1},
                                {find_control(sys, fm), -0.05, 0.2, 0, 1}};
  mbs_pd_controller_spec pd = {"hold", 0, 0, 0.2, 20, 2, 0.01, 0.005, 2, out, 0, 0, 0, NULL};
  EXPECT_EQ_INT(mbs_system_add_pd_controller(sys, &pd), 0);
  EXPECT_EQ_INT(mbs_system_add_controller_callback(sys, "wobble", half_control, &torque_control),
                1);
  EXPECT_OK(mbs_system_finalize(sys));
  model m = {"controller", sys, mbs_state_create(sys), 1e-4, 5e-4, 0.05, 0.1, 0.3, NULL,
             sys};
  mbs_state_upd_q(m.init)[0] = -0.2;
  mbs_state_upd_u(m.init)[0] = 1;
  EXPECT_OK(mbs_equilibrate_muscles(sys, m.init));
  return m;
}

//---------------------------------- published models -------------------------------------------

// OpenSim's gait2392 (Thelen muscles, custom joints, wrapping, coupler constraints) and, when
// present, rajagopal2016 (Millard muscles, other wrap objects)
static int published_models(const char* dir) {
  const char* names[2] = {"gait2392_thelen2003muscle", "rajagopal2016"};
  for (int i = 0; i < 2; i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/models/%s.osim", dir, names[i]);
    FILE* f = fopen(path, "r");
    if (!f && i == 0) {
      printf("SKIPPED: %s not found (set MBS_SHARED_DIR)\n", path);
      return 77;
    }
    if (!f) continue;
    fclose(f);
    mbs_error err;
    mbs_osim_model* om = mbs_osim_read(path, &err);
    EXPECT_TRUE(om != NULL);
    if (!om) {
      fprintf(stderr, "%s\n", err.message);
      continue;
    }
    model m = {names[i], mbs_osim_system(om), NULL, 1e-3, 1e-4, 0.01, 0.02, 0.05, om, NULL};
    m.init = mbs_state_create(m.sys);
    EXPECT_OK(mbs_osim_default_state(om, m.init));
    check_model(&m);
    model_free(&m);
  }
  return mbs_test_finish("test_step_alloc --data");
}

// test_step_alloc [--data DIR]: --data, the published models in DIR/models instead
int main(int argc, char** argv) {
  const char* data = NULL;
  EXPECT_TRUE(mbs_test_alloc_active());  // the allocation counter sees the libraries
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
      data = argv[++i];
    } else {
      fprintf(stderr, "usage: test_step_alloc [--data DIR]\n");
      return 2;
    }
  }
  if (data) return published_models(data);
  model (*const makers[])(void) = {random_tree_model, force_elements_model, four_bar_model,
                                   constraints_model, contact_model,        muscles_model,
                                   controller_model};
  for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++) {
    model m = makers[i]();
    check_model(&m);
    model_free(&m);
  }
  // the counter counted the models' own allocations
  EXPECT_TRUE(n_alloc > 0);
  return mbs_test_finish("test_step_alloc");
}
