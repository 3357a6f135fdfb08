// Muscles as force elements (mbs_system_add_muscle) on a mass hanging from the ceiling by a
// muscle, for each model (Thelen 2003, Millard 2012, De Groote 2016, rigid tendon):
// - the generalized force on the mass is the tendon force the muscle model gives for the path's
//   length and speed, the activation and the fiber state; the states' derivatives are the
//   model's (the plumbing of path, states and excitation);
// - mbs_equilibrate_muscles puts the fiber where fiber and tendon balance at rest (the fiber's
//   velocity is then 0);
// - released, the mass comes to rest where the tendon carries its weight: tendon force = m g
//   (Newton's law at rest), with the fiber in equilibrium there;
// - the muscle's parameters are instance parameters; a bad one fails at Instance naming it;
// - ros34pw2, linearly implicit in the muscles, brings every kind to the same rest, and on a
//   stiff tendon at low activation follows a reference solution (Dormand-Prince at 1e-11) more
//   closely than rk_merson does at the same accuracy, in fewer than half the steps.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs_test.h"

static const double mass = 10, g = 9.80665;

static mbs_system* hanging(mbs_muscle_kind kind, int* muscle) {
  mbs_system* sys = mbs_system_create("hanging");
  mbs_body_spec s = mbs_body_spec_default("block", 0, MBS_MOB_SLIDER);
  s.mass = mass;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.01;
  s.X_PF.angles[2] = s.X_BM.angles[2] = M_PI / 2;  // the slider along Ground's y
  const int b = mbs_system_add_body(sys, &s);
  const double gv[3] = {0, -g, 0};
  mbs_system_add_gravity(sys, gv);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", b)};
  const int path = mbs_system_add_path(sys, "muscle", p, 2);
  mbs_muscle_params mp;
  mbs_muscle_params_default(&mp, kind);
  mp.max_isometric_force = 1000;
  mp.optimal_fiber_length = 0.1;
  mp.tendon_slack_length = 0.2;
  mp.pennation_angle_at_optimal = 0.1;
  *muscle = mbs_system_add_muscle(sys, &mp, path, 0.5, 0.5, -1);
  EXPECT_TRUE(*muscle >= 0);
  if (*muscle < 0) {
    const mbs_error* e = mbs_system_error(sys);
    printf("cannot add the muscle: %s\n", e ? e->message : "?");
  }
  EXPECT_OK(mbs_system_set_force_name(sys, *muscle, "muscle"));
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static void test_kind(mbs_muscle_kind kind, mbs_integrator_type integ) {
  int m;
  mbs_system* sys = hanging(kind, &m);
  mbs_state* st = mbs_state_create(sys);
  const int nz = mbs_system_nz(sys);
  EXPECT_EQ_INT(nz, kind == MBS_MUSCLE_RIGID_TENDON ? 0 : kind == MBS_MUSCLE_DELP1990 ? 3 : 2);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/muscle/max_isometric_force") != NULL);
  // at a pose a little longer than rest, moving
  mbs_state_upd_q(st)[0] = -0.31;
  mbs_state_upd_u(st)[0] = -0.05;
  EXPECT_OK(mbs_equilibrate_muscles(sys, st));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  mbs_muscle_report r;
  EXPECT_OK(mbs_get_muscle_report(sys, st, m, &r));
  EXPECT_NEAR(r.path_length, 0.31, 1e-14);
  EXPECT_NEAR(r.path_speed, 0.05, 1e-14);
  // the same model evaluated directly
  mbs_muscle_params mp;
  mbs_muscle_params_default(&mp, kind);
  mp.max_isometric_force = 1000;
  mp.optimal_fiber_length = 0.1;
  mp.tendon_slack_length = 0.2;
  mp.pennation_angle_at_optimal = 0.1;
  static mbs_muscle_model model;
  mbs_error err;
  EXPECT_OK(mbs_muscle_prepare(&model, &mp, "direct", &err));
  const double a = nz ? mbs_state_z(st)[0] : 0.5;
  mbs_muscle_output out;
  EXPECT_OK(mbs_muscle_eval_states(&model, 0.31, 0.05, a, nz ? mbs_state_z(st) + 1 : NULL, &out,
                                   &err));
  EXPECT_NEAR(r.tendon_force, out.tendon_force, 1e-12);
  // on the mass: the tendon force up (mass * accel = T - m g)
  EXPECT_NEAR(mbs_get_udot(sys, st)[0] * mass, out.tendon_force - mass * g, 1e-9);
  if (nz) {
    const double* zd = mbs_get_zdot(sys, st);
    EXPECT_NEAR(zd[0], mbs_muscle_activation_derivative(&model, 0.5, a), 1e-12);
    EXPECT_NEAR(zd[1], out.fiber_state_derivative, 1e-9);
    if (nz > 2) EXPECT_NEAR(zd[2], out.fiber_acceleration, 1e-9);  // Delp's junction
  }
  // equilibrated at rest: no fiber velocity
  mbs_state_upd_u(st)[0] = 0;
  EXPECT_OK(mbs_equilibrate_muscles(sys, st));
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_OK(mbs_get_muscle_report(sys, st, m, &r));
  if (kind != MBS_MUSCLE_RIGID_TENDON) EXPECT_TRUE(fabs(r.fiber_velocity) < 1e-6);
  // released: at rest the tendon carries the weight
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integrator = integ;
  o.integ.accuracy = 1e-7;
  o.report_interval = 0.5;
  mbs_simulation_result res;
  memset(&res, 0, sizeof(res));
  EXPECT_OK(mbs_simulate(sys, st, 6.0, &o, NULL, 0, NULL, NULL, &res));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_OK(mbs_get_muscle_report(sys, st, m, &r));
  printf("%-13s %s at rest: y %.6f m, v %.2e m/s, tendon force %.6f N (m g = %.6f), fiber %.5f m, "
         "%ld steps\n", mbs_muscle_kind_name(kind), mbs_integrator_name(integ), mbs_state_q(st)[0], mbs_state_u(st)[0],
         r.tendon_force, mass * g, r.fiber_length, res.integrator.steps);
  EXPECT_TRUE(fabs(mbs_state_u(st)[0]) < 1e-4);
  EXPECT_NEAR(r.tendon_force, mass * g, 1e-3);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_bad_parameter(void) {
  int m;
  mbs_system* sys = hanging(MBS_MUSCLE_THELEN2003, &m);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/muscle/optimal_fiber_length", 0, -0.1));
  const int rc = mbs_realize_instance(sys, st);
  EXPECT_TRUE(rc != MBS_OK && strstr(mbs_state_error(st)->message, "muscle") != NULL);
  printf("bad parameter: %s\n", mbs_state_error(st)->message);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// Thelen's muscle at excitation 0.02 (a stiff fiber-tendon mode: the fiber's damping falls with
// activation) from a stretched, moving start, 0.5 s: the position against the reference
static void test_stiff_muscle(void) {
  int m;
  mbs_system* sys = hanging(MBS_MUSCLE_THELEN2003, &m);
  mbs_state* s0 = mbs_state_create(sys);
  mbs_state_upd_q(s0)[0] = -0.33;
  mbs_state_upd_u(s0)[0] = 0.3;
  mbs_state_upd_controls(s0)[0] = 0.02;
  mbs_state_upd_z(s0)[0] = 0.02;
  EXPECT_OK(mbs_equilibrate_muscles(sys, s0));
  const mbs_integrator_type types[3] = {MBS_INTEG_DORMAND_PRINCE, MBS_INTEG_RK_MERSON,
                                        MBS_INTEG_ROS34PW2};
  const double acc[3] = {1e-11, 1e-4, 1e-4};
  double y[3] = {0}, z[3] = {0};
  long steps[3] = {0};
  for (int k = 0; k < 3; k++) {
    mbs_state* st = mbs_state_create(sys);
    EXPECT_OK(mbs_state_copy(sys, st, s0));
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = types[k];
    o.integ.accuracy = acc[k];
    mbs_simulation_result res;
    memset(&res, 0, sizeof(res));
    EXPECT_OK(mbs_simulate(sys, st, 0.5, &o, NULL, 0, NULL, NULL, &res));
    y[k] = mbs_state_q(st)[0];
    z[k] = mbs_state_z(st)[1];
    steps[k] = res.integrator.steps + res.integrator.rejected;
    printf("stiff Thelen muscle, %s at %g: y(0.5) %.9f m, fiber %.9f m, %ld steps tried\n",
           mbs_integrator_name(types[k]), acc[k], y[k], z[k], steps[k]);
    mbs_state_destroy(st);
  }
  const double e_merson = fabs(y[1] - y[0]), e_ros = fabs(y[2] - y[0]);
  printf("stiff Thelen muscle: |y - reference| %.2e (rk_merson), %.2e (ros34pw2)\n", e_merson,
         e_ros);
  EXPECT_TRUE(fabs(y[0] + 0.33) > 1e-3);  // it moved
  EXPECT_TRUE(e_ros < 1e-4);
  EXPECT_TRUE(fabs(z[2] - z[0]) < 1e-4);
  EXPECT_TRUE(e_ros < e_merson);
  EXPECT_TRUE(2 * steps[2] < steps[1]);
  mbs_state_destroy(s0);
  mbs_system_destroy(sys);
}

int main(void) {
  for (int k = 0; k < MBS_MUSCLE_KIND_COUNT; k++) {
    test_kind((mbs_muscle_kind)k, MBS_INTEG_RK_MERSON);
    test_kind((mbs_muscle_kind)k, MBS_INTEG_ROS34PW2);
  }
  test_stiff_muscle();
  test_bad_parameter();
  return mbs_test_finish("test_muscle_force");
}
