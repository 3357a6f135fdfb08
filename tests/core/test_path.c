// Geometry paths (include/mbs/path.h) against independent truth:
// - a point on a pendulum to a point on the ground: the length by the law of cosines, the
//   lengthening speed dL/dq u, the moment arm -dL/dq in closed form;
// - on a chain of a pin, a ball (quaternion) and a slider with a conditional point and a point
//   moving with the pin's angle (a cubic spline): the moment arms (generalized forces of a unit
//   tension) equal -dL/dq along q' = N e_j by central differences for every speed, the speed
//   equals the directional derivative of the length, the conditional point drops out of the
//   path outside its range (with the tension applied as the segments' point forces, these
//   moment arms make a path spring conservative);
// - bad input is refused with the path's owner named.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs_test.h"

static void test_pendulum(void) {
  mbs_system* sys = mbs_system_create("pendulum");
  mbs_body_spec s = mbs_body_spec_default("rod", 0, MBS_MOB_PIN);
  s.mass = 1;
  const int b = mbs_system_add_body(sys, &s);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", b)};
  const double A[3] = {0.3, 0.4, 0}, r = 0.5;  // ground point; rod point at r along x
  memcpy(p[0].location, A, sizeof(A));
  p[1].location[0] = r;
  const int path = mbs_system_add_path(sys, "muscle", p, 2);
  EXPECT_EQ_INT(path, 0);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/muscle/path/insertion/location") != NULL);
  mbs_state* st = mbs_state_create(sys);
  for (double q = -2; q <= 2; q += 0.5) {
    mbs_state_upd_q(st)[0] = q;
    mbs_state_upd_u(st)[0] = 0.7;
    EXPECT_OK(mbs_realize_velocity(sys, st));
    double L, Ld, ma[1];
    EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, &Ld));
    EXPECT_OK(mbs_calc_path_moment_arms(sys, st, path, ma));
    // the insertion at r (cos q, sin q): L^2 = |A|^2 + r^2 - 2 r (Ax cos q + Ay sin q)
    const double L2 = A[0] * A[0] + A[1] * A[1] + r * r - 2 * r * (A[0] * cos(q) + A[1] * sin(q));
    const double dLdq = r * (A[0] * sin(q) - A[1] * cos(q)) / sqrt(L2);
    EXPECT_NEAR(L, sqrt(L2), 1e-14);
    EXPECT_NEAR(Ld, dLdq * 0.7, 1e-13);
    EXPECT_NEAR(ma[0], -dLdq, 1e-13);
  }
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static mbs_system* chain(int* path_out) {
  mbs_system* sys = mbs_system_create("chain");
  mbs_body_spec s1 = mbs_body_spec_default("b1", 0, MBS_MOB_PIN);
  s1.mass = 1;
  s1.X_PF.p[1] = 0.2;
  const int b1 = mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = mbs_body_spec_default("b2", b1, MBS_MOB_BALL);
  s2.mass = 1;
  s2.X_PF.p[0] = 0.4;
  const int b2 = mbs_system_add_body(sys, &s2);
  mbs_body_spec s3 = mbs_body_spec_default("b3", b2, MBS_MOB_SLIDER);
  s3.mass = 1;
  s3.X_PF.p[1] = -0.3;
  const int b3 = mbs_system_add_body(sys, &s3);
  // x of the moving point as a cubic spline of the pin's angle
  const double xk[5] = {-2, -1, 0, 1, 2}, yk[5] = {0.05, 0.1, 0.12, 0.08, 0.02};
  mbs_function_spec f = {MBS_FUNC_NATURAL_CUBIC_SPLINE, "moving_x", 5, NULL, xk, yk, 1, -1};
  const int fx = mbs_system_add_function(sys, &f);
  mbs_path_point_spec p[5] = {
      mbs_path_point_spec_default("a", 0), mbs_path_point_spec_default("b", b1),
      mbs_path_point_spec_default("c", b2), mbs_path_point_spec_default("d", b2),
      mbs_path_point_spec_default("e", b3)};
  const double loc[5][3] = {{0.1, -0.2, 0.05}, {0.3, 0.1, -0.1}, {0.05, 0.2, 0.1},
                            {0.2, -0.1, 0.15}, {0.1, 0.05, -0.2}};
  for (int i = 0; i < 5; i++) memcpy(p[i].location, loc[i], sizeof(loc[i]));
  p[2].kind = MBS_PATH_POINT_CONDITIONAL;  // active while the slider is within [-0.1, 0.2]
  p[2].q_index = mbs_body_qadr(sys, b3);
  p[2].range[0] = -0.1;
  p[2].range[1] = 0.2;
  p[4].kind = MBS_PATH_POINT_MOVING;
  p[4].function[0] = fx;
  p[4].function_q[0] = mbs_body_qadr(sys, b1);
  p[4].function_u[0] = mbs_body_uadr(sys, b1);
  p[4].location[0] = NAN;
  *path_out = mbs_system_add_path(sys, "muscle", p, 5);
  EXPECT_TRUE(*path_out >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static double length_at(const mbs_system* sys, mbs_state* st, int path) {
  double L = NAN;
  EXPECT_OK(mbs_realize_position(sys, st));
  EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, NULL));
  return L;
}

static void test_chain(void) {
  int path;
  mbs_system* sys = chain(&path);
  mbs_state* st = mbs_state_create(sys);
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys);
  mbs_test_rng rng = {2026};
  double worst_ma = 0, worst_speed = 0;
  int active = 0, inactive = 0;
  for (int trial = 0; trial < 40; trial++) {
    double* q = mbs_state_upd_q(st);
    q[0] = mbs_test_uniform(&rng, -1.5, 1.5);
    double quat[4] = {1, mbs_test_uniform(&rng, -0.5, 0.5), mbs_test_uniform(&rng, -0.5, 0.5),
                      mbs_test_uniform(&rng, -0.5, 0.5)};
    const double nn = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] +
                           quat[3] * quat[3]);
    for (int k = 0; k < 4; k++) q[1 + k] = quat[k] / nn;
    q[5] = mbs_test_uniform(&rng, -0.3, 0.4);
    double* u = mbs_state_upd_u(st);
    for (int i = 0; i < nu; i++) u[i] = mbs_test_uniform(&rng, -1, 1);
    const int on = q[5] >= -0.1 && q[5] <= 0.2;
    active += on;
    inactive += !on;
    double q0[16], ma[16], qd[16], e[16];
    memcpy(q0, q, (size_t)nq * sizeof(double));
    EXPECT_OK(mbs_realize_velocity(sys, st));
    double L, Ld;
    EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, &Ld));
    int n;
    double pts[3 * MBS_PATH_MAX_POINTS];
    EXPECT_OK(mbs_calc_path_points(sys, st, path, pts, &n));
    EXPECT_EQ_INT(n, on ? 5 : 4);
    EXPECT_OK(mbs_calc_path_moment_arms(sys, st, path, ma));
    // the speed: the derivative of L along q' = N u
    double ucopy[16];
    memcpy(ucopy, u, (size_t)nu * sizeof(double));
    EXPECT_OK(mbs_calc_qdot(sys, st, ucopy, qd));
    const double h = 1e-6;
    double Lp, Lm;
    for (int i = 0; i < nq; i++) mbs_state_upd_q(st)[i] = q0[i] + h * qd[i];
    Lp = length_at(sys, st, path);
    for (int i = 0; i < nq; i++) mbs_state_upd_q(st)[i] = q0[i] - h * qd[i];
    Lm = length_at(sys, st, path);
    worst_speed = fmax(worst_speed, fabs(Ld - (Lp - Lm) / (2 * h)));
    // each moment arm: -dL along N e_j
    for (int j = 0; j < nu; j++) {
      memcpy(mbs_state_upd_q(st), q0, (size_t)nq * sizeof(double));
      EXPECT_OK(mbs_realize_position(sys, st));
      memset(e, 0, sizeof(e));
      e[j] = 1;
      EXPECT_OK(mbs_calc_qdot(sys, st, e, qd));
      for (int i = 0; i < nq; i++) mbs_state_upd_q(st)[i] = q0[i] + h * qd[i];
      Lp = length_at(sys, st, path);
      for (int i = 0; i < nq; i++) mbs_state_upd_q(st)[i] = q0[i] - h * qd[i];
      Lm = length_at(sys, st, path);
      worst_ma = fmax(worst_ma, fabs(ma[j] + (Lp - Lm) / (2 * h)));
    }
    memcpy(mbs_state_upd_q(st), q0, (size_t)nq * sizeof(double));
  }
  printf("chain: moment arms vs -dL/dq: %.2e, speed vs dL/dt: %.2e (%d with the conditional "
         "point, %d without)\n", worst_ma, worst_speed, active, inactive);
  EXPECT_TRUE(worst_ma < 1e-8);
  EXPECT_TRUE(worst_speed < 1e-8);
  EXPECT_TRUE(active > 5 && inactive > 5);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_errors(void) {
  mbs_system* sys = mbs_system_create("bad");
  mbs_body_spec s = mbs_body_spec_default("rod", 0, MBS_MOB_PIN);
  s.mass = 1;
  mbs_system_add_body(sys, &s);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("a", 0),
                              mbs_path_point_spec_default("b", 7)};
  EXPECT_TRUE(mbs_system_add_path(sys, "biceps", p, 2) == MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(mbs_system_error(sys)->message, "biceps") != NULL);
  EXPECT_TRUE(mbs_system_add_path(sys, "biceps", p, 1) == MBS_ERR_ARGUMENT);
  mbs_system_destroy(sys);
}

int main(void) {
  test_pendulum();
  test_chain();
  test_errors();
  return mbs_test_finish("test_path");
}
