// Constrained motion against closed forms: a particle on a rod (pendulum tension), on a line
// and on an inclined plane; a sphere rolling down an incline (5/7 g sin); a table on four legs
// (redundant: each leg carries a quarter of the weight, no acceleration); prescribed, locked
// and constant-speed coordinates (the torque each needs); a coordinate coupler on a double
// pendulum against its reduced Lagrange equation; a free body welded or held at constant
// orientation; and assembly of a four-bar linkage from a poor guess.
#include <string.h>

#include "mbs/mbs.h"
#include "mbs_test.h"

static const double g0 = 9.81;

static mbs_body_spec particle(const char* name, int parent, double m) {
  mbs_body_spec s = mbs_body_spec_default(name, parent, MBS_MOB_TRANSLATION);
  s.mass = m;
  return s;
}

static void add_gravity(mbs_system* sys) {
  const double g[3] = {0, -g0, 0};
  mbs_system_add_gravity(sys, g);
}

static void test_rod_pendulum(void) {
  const double m = 1.7, L = 0.8, th = 0.6, thd = 1.3;
  mbs_system* sys = mbs_system_create("rod");
  mbs_body_spec s = particle("bob", 0, m);
  mbs_system_add_body(sys, &s);
  add_gravity(sys);
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_ROD, "rod");
  c.body1 = 0;
  c.body2 = 1;
  c.value = L;
  EXPECT_TRUE(mbs_system_add_constraint(sys, &c) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  const double r[3] = {sin(th), -cos(th), 0}, t[3] = {cos(th), sin(th), 0};
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  for (int i = 0; i < 3; i++) {
    q[i] = L * r[i];
    u[i] = L * thd * t[i];
  }
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  const double* a = mbs_get_udot(sys, st);
  for (int i = 0; i < 3; i++) EXPECT_NEAR(a[i], -g0 * sin(th) * t[i] - L * thd * thd * r[i], 1e-12);
  // the rod pulls the bob toward the pivot with T = m (g cos + L thd^2)
  double F1[6], F2[6];
  EXPECT_OK(mbs_get_constraint_forces(sys, st, 0, F1, F2, NULL));
  const double T = m * (g0 * cos(th) + L * thd * thd);
  for (int i = 0; i < 3; i++) EXPECT_NEAR(F2[3 + i], -T * r[i], 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_line_and_plane(void) {
  // a bead on a line through the origin along d; a particle on a plane with normal n
  const double d[3] = {0.6, -0.64, 0.48}, n[3] = {0.3, 0.9, -0.316227766016838};
  for (int kind = 0; kind < 2; kind++) {
    mbs_system* sys = mbs_system_create(kind ? "plane" : "line");
    mbs_body_spec s = particle("p", 0, 2.0);
    mbs_system_add_body(sys, &s);
    add_gravity(sys);
    mbs_constraint_spec c =
        mbs_constraint_spec_default(kind ? MBS_CON_POINT_IN_PLANE : MBS_CON_POINT_ON_LINE, NULL);
    c.body1 = 0;
    c.body2 = 1;
    memcpy(c.a1, kind ? n : d, sizeof(c.a1));
    mbs_system_add_constraint(sys, &c);
    mbs_system_finalize(sys);
    mbs_state* st = mbs_state_create(sys);
    // start off the constraint: assembly moves the particle onto it
    double* q = mbs_state_upd_q(st);
    q[0] = 0.3; q[1] = 0.2; q[2] = -0.1;
    mbs_state_upd_u(st)[0] = 0.4;
    EXPECT_OK(mbs_assemble(sys, st, NULL));
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    const double* a = mbs_get_udot(sys, st);
    const double g[3] = {0, -g0, 0};
    double nn = 0, gd = 0;
    const double* v = kind ? n : d;
    for (int i = 0; i < 3; i++) nn += v[i] * v[i];
    for (int i = 0; i < 3; i++) gd += g[i] * v[i] / sqrt(nn);
    for (int i = 0; i < 3; i++) {
      const double e = v[i] / sqrt(nn);
      const double expect = kind ? g[i] - gd * e : gd * e;
      EXPECT_NEAR(a[i], expect, 1e-12);
    }
    double err[4];
    int ne;
    EXPECT_OK(mbs_calc_position_errors(sys, st, err, &ne));
    for (int i = 0; i < ne; i++) EXPECT_ABS(err[i], 0, 1e-12);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
}

static void test_rolling_sphere(void) {
  // solid sphere (I = 2/5 m R^2) on a plane through the origin tilted by th about z
  const double m = 3.0, R = 0.25, th = 0.35, I = 0.4 * m * R * R;
  mbs_system* sys = mbs_system_create("rolling");
  mbs_body_spec s = mbs_body_spec_default("ball", 0, MBS_MOB_FREE);
  s.mass = m;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = I;
  mbs_system_add_body(sys, &s);
  add_gravity(sys);
  const double n[3] = {-sin(th), cos(th), 0};
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_ROLLING, "roll");
  c.body1 = 0;
  c.body2 = 1;
  memcpy(c.a1, n, sizeof(c.a1));
  c.value = R;
  mbs_system_add_constraint(sys, &c);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  double* q = mbs_state_upd_q(st);  // (quaternion, center)
  for (int i = 0; i < 3; i++) q[4 + i] = 1.02 * R * n[i];  // slightly off: assembly fixes it
  EXPECT_OK(mbs_assemble(sys, st, NULL));
  EXPECT_NEAR(mbs_state_q(st)[5], R * n[1], 1e-10);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  const double* a = mbs_get_udot(sys, st);
  // down the slope: (5/7) g sin(th) along t = (-cos th, -sin th, 0)
  const double t[3] = {-cos(th), -sin(th), 0};
  for (int i = 0; i < 3; i++) EXPECT_NEAR(a[3 + i], 5.0 / 7.0 * g0 * sin(th) * t[i], 1e-12);
  // spinning about the normal with no slip: no-twist keeps the spin at zero acceleration and
  // the contact point stays still
  double err[4];
  int ne;
  EXPECT_OK(mbs_calc_velocity_errors(sys, st, err, &ne));
  EXPECT_EQ_INT(ne, 4);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_table(int balls) {
  // table top (free) on four legs at (+-a, -h, +-b) whose feet stay on the floor y = 0
  const double M = 12.0, a = 0.6, b = 0.4, h = 0.7;
  mbs_system* sys = mbs_system_create("table");
  mbs_body_spec s = mbs_body_spec_default("top", 0, MBS_MOB_FREE);
  s.mass = M;
  s.inertia[0] = 1.0; s.inertia[1] = 1.5; s.inertia[2] = 0.8;
  mbs_system_add_body(sys, &s);
  add_gravity(sys);
  for (int k = 0; k < 4; k++) {
    mbs_constraint_spec c =
        mbs_constraint_spec_default(balls ? MBS_CON_BALL : MBS_CON_POINT_IN_PLANE, NULL);
    c.body1 = 0;
    c.body2 = 1;
    c.p2[0] = k & 1 ? a : -a;
    c.p2[1] = -h;
    c.p2[2] = k & 2 ? b : -b;
    c.a1[1] = 1;  // floor normal
    if (balls) {
      c.p1[0] = c.p2[0];
      c.p1[2] = c.p2[2];
    }
    mbs_system_add_constraint(sys, &c);
  }
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[5] = h;
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  const double* ud = mbs_get_udot(sys, st);
  for (int i = 0; i < 6; i++) EXPECT_ABS(ud[i], 0, 1e-12);  // a unique answer: no motion
  double fy = 0;
  for (int k = 0; k < 4; k++) {
    double F2[6];
    EXPECT_OK(mbs_get_constraint_forces(sys, st, k, NULL, F2, NULL));
    EXPECT_TRUE(isfinite(F2[4]));
    EXPECT_NEAR(F2[4], M * g0 / 4, 1e-10);  // the load is shared equally
    EXPECT_ABS(F2[3], 0, 1e-10);
    EXPECT_ABS(F2[5], 0, 1e-10);
    fy += F2[4];
  }
  EXPECT_NEAR(fy, M * g0, 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// a pendulum: point mass m at L along x of a pin about z, gravity -y
static mbs_system* pendulum(double m, double L, mbs_constraint_spec* c, int with_f) {
  mbs_system* sys = mbs_system_create("pendulum");
  if (with_f) {
    const double co[3] = {0.5, 0.2, -0.1};  // f(t) = 0.5 t^2 + 0.2 t - 0.1
    mbs_function_spec f = {MBS_FUNC_POLYNOMIAL, "motion", 3, co, NULL, NULL, 0, 0};
    c->function = mbs_system_add_function(sys, &f);
  }
  mbs_body_spec s = mbs_body_spec_default("bob", 0, MBS_MOB_PIN);
  s.mass = m;
  s.com[0] = L;
  mbs_system_add_body(sys, &s);
  add_gravity(sys);
  c->coordinate = (mbs_coordinate_ref){1, 0};
  EXPECT_TRUE(mbs_system_add_constraint(sys, c) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static double constraint_torque(const mbs_system* sys, mbs_state* st) {
  double f[1];
  EXPECT_OK(mbs_get_constraint_forces(sys, st, 0, NULL, NULL, f));
  return f[0];
}

static void test_coordinate_constraints(void) {
  const double m = 1.5, L = 0.7;
  // prescribed: q = f(t); the torque is m L^2 f'' + m g L cos q
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_PRESCRIBED_MOTION, "drive");
  mbs_system* sys = pendulum(m, L, &c, 1);
  mbs_state* st = mbs_state_create(sys);
  const double t = 1.3;
  mbs_state_set_time(st, t);
  EXPECT_OK(mbs_assemble(sys, st, NULL));
  const double f = 0.5 * t * t + 0.2 * t - 0.1, fd = t + 0.2;
  EXPECT_NEAR(mbs_state_q(st)[0], f, 1e-12);
  EXPECT_NEAR(mbs_state_u(st)[0], fd, 1e-12);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], 1.0, 1e-12);
  EXPECT_NEAR(constraint_torque(sys, st), m * L * L * 1.0 + m * g0 * L * cos(f), 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);

  // locked at 0.3: no motion; holding torque m g L cos(0.3); disabling the lock frees it
  c = mbs_constraint_spec_default(MBS_CON_LOCKED_COORDINATE, "lock");
  c.value = 0.3;
  sys = pendulum(m, L, &c, 0);
  st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 0.1;
  EXPECT_OK(mbs_assemble(sys, st, NULL));
  EXPECT_NEAR(mbs_state_q(st)[0], 0.3, 1e-12);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_ABS(mbs_get_udot(sys, st)[0], 0, 1e-12);
  EXPECT_NEAR(constraint_torque(sys, st), m * g0 * L * cos(0.3), 1e-12);
  EXPECT_OK(mbs_state_set_param(sys, st, "/constraintset/lock/enabled", 0, 0));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_EQ_INT(mbs_constraint_nequation(sys, st), 0);
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], -g0 * cos(0.3) / L, 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);

  // constant speed 2 rad/s at q = 0.8: torque m g L cos q keeps it
  c = mbs_constraint_spec_default(MBS_CON_CONSTANT_SPEED, "spin");
  c.value = 2.0;
  sys = pendulum(m, L, &c, 0);
  st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 0.8;
  EXPECT_OK(mbs_assemble(sys, st, NULL));
  EXPECT_NEAR(mbs_state_u(st)[0], 2.0, 1e-12);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_ABS(mbs_get_udot(sys, st)[0], 0, 1e-12);
  EXPECT_NEAR(constraint_torque(sys, st), m * g0 * L * cos(0.8), 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);

  // acceleration-only: u' = 0.5 rad/s^2 whatever q and u are; torque m L^2 0.5 + m g L cos q;
  // assembly leaves q and u alone; a run follows q0 + u0 t + 0.25 t^2 exactly
  c = mbs_constraint_spec_default(MBS_CON_CONSTANT_ACCELERATION, "ramp");
  c.value = 0.5;
  sys = pendulum(m, L, &c, 0);
  int mp, mv, ma;
  mbs_constraint_count(sys, 0, &mp, &mv, &ma);
  EXPECT_TRUE(mp == 0 && mv == 0 && ma == 1);
  st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 0.8;
  mbs_state_upd_u(st)[0] = -1.2;
  EXPECT_OK(mbs_assemble(sys, st, NULL));
  EXPECT_NEAR(mbs_state_q(st)[0], 0.8, 0);
  EXPECT_NEAR(mbs_state_u(st)[0], -1.2, 0);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], 0.5, 1e-12);
  EXPECT_NEAR(constraint_torque(sys, st), m * L * L * 0.5 + m * g0 * L * cos(0.8), 1e-12);
  double aerr[1];
  int na;
  EXPECT_OK(mbs_calc_acceleration_errors(sys, st, aerr, &na));
  EXPECT_TRUE(na == 1 && fabs(aerr[0]) < 1e-12);
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  EXPECT_OK(mbs_simulate(sys, st, 2.0, &o, NULL, 0, NULL, NULL, NULL));
  EXPECT_NEAR(mbs_state_q(st)[0], 0.8 - 1.2 * 2 + 0.25 * 4, 1e-10);
  EXPECT_NEAR(mbs_state_u(st)[0], -1.2 + 0.5 * 2, 1e-10);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_coupler(void) {
  // double pendulum (point masses at the link tips) with q2 = k q1 + c: one degree of freedom
  const double m1 = 1.3, m2 = 0.7, L1 = 0.9, L2 = 0.6, k = 2.0, c0 = 0.1;
  mbs_system* sys = mbs_system_create("coupled");
  const double co[2] = {k, c0};
  mbs_function_spec f = {MBS_FUNC_LINEAR, "ratio", 0, co, NULL, NULL, 0, 0};
  const int fid = mbs_system_add_function(sys, &f);
  mbs_body_spec s1 = mbs_body_spec_default("link1", 0, MBS_MOB_PIN);
  s1.mass = m1;
  s1.com[0] = L1;
  mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = mbs_body_spec_default("link2", 1, MBS_MOB_PIN);
  s2.mass = m2;
  s2.com[0] = L2;
  s2.X_PF.p[0] = L1;
  mbs_system_add_body(sys, &s2);
  add_gravity(sys);
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_COORDINATE_COUPLER, "knee");
  c.coordinate = (mbs_coordinate_ref){2, 0};
  c.independent = (mbs_coordinate_ref){1, 0};
  c.function = fid;
  mbs_system_add_constraint(sys, &c);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 0.4;
  mbs_state_upd_u(st)[0] = 0.8;
  const double tau[2] = {0.3, -0.2};
  memcpy(mbs_state_upd_applied_mobility_forces(st), tau, sizeof(tau));
  EXPECT_OK(mbs_assemble(sys, st, NULL));
  const double q1 = mbs_state_q(st)[0], q2 = mbs_state_q(st)[1];
  const double w1 = mbs_state_u(st)[0], w2 = mbs_state_u(st)[1];
  EXPECT_NEAR(q2, k * q1 + c0, 1e-12);
  EXPECT_NEAR(w2, k * w1, 1e-12);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  // reduced Lagrange equation along (1, k): (c^T M c) u1' = c^T (tau + G - C)
  const double c2 = cos(q2), sn2 = sin(q2);
  const double M11 = (m1 + m2) * L1 * L1 + m2 * L2 * L2 + 2 * m2 * L1 * L2 * c2;
  const double M12 = m2 * L2 * L2 + m2 * L1 * L2 * c2, M22 = m2 * L2 * L2;
  const double C1 = -m2 * L1 * L2 * sn2 * (2 * w1 * w2 + w2 * w2), C2 = m2 * L1 * L2 * sn2 * w1 * w1;
  const double G1 = -(m1 + m2) * g0 * L1 * cos(q1) - m2 * g0 * L2 * cos(q1 + q2);
  const double G2 = -m2 * g0 * L2 * cos(q1 + q2);
  const double Mr = M11 + 2 * k * M12 + k * k * M22;
  const double fr = (tau[0] + G1 - C1) + k * (tau[1] + G2 - C2);
  const double* ud = mbs_get_udot(sys, st);
  EXPECT_NEAR(ud[0], fr / Mr, 1e-12);
  EXPECT_NEAR(ud[1], k * fr / Mr, 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_weld_and_orientation(void) {
  for (int kind = 0; kind < 2; kind++) {
    const double m = 2.5;
    mbs_system* sys = mbs_system_create("held");
    mbs_body_spec s = mbs_body_spec_default("box", 0, MBS_MOB_FREE);
    s.mass = m;
    s.com[0] = 0.2;
    s.inertia[0] = 0.3; s.inertia[1] = 0.4; s.inertia[2] = 0.5;
    mbs_system_add_body(sys, &s);
    add_gravity(sys);
    mbs_constraint_spec c = mbs_constraint_spec_default(
        kind ? MBS_CON_CONSTANT_ORIENTATION : MBS_CON_WELD, NULL);
    c.body1 = 0;
    c.body2 = 1;
    c.a1[2] = 0.4;  // the frame on Ground is turned by 0.4 rad about z
    mbs_system_add_constraint(sys, &c);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    mbs_state_upd_u(st)[2] = 0.5;  // spinning about z: assembly removes it
    EXPECT_OK(mbs_assemble(sys, st, NULL));
    for (int i = 0; i < 3; i++) EXPECT_ABS(mbs_state_u(st)[i], 0, 1e-12);
    double R[9];
    EXPECT_OK(mbs_get_body_transform(sys, st, 1, R, NULL));
    EXPECT_NEAR(R[0], cos(0.4), 1e-10);
    EXPECT_NEAR(R[3], sin(0.4), 1e-10);
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    const double* ud = mbs_get_udot(sys, st);
    for (int i = 0; i < 3; i++) EXPECT_ABS(ud[i], 0, 1e-12);  // no angular acceleration
    // welded: held still, the weld carries the weight; orientation only: free fall
    EXPECT_ABS(ud[4], kind ? -g0 : 0, 1e-12);
    if (!kind) {
      double F2[6];
      EXPECT_OK(mbs_get_constraint_forces(sys, st, 0, NULL, F2, NULL));
      EXPECT_NEAR(F2[4], m * g0, 1e-12);
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
}

static void test_four_bar_assembly(void) {
  // ground link 1.0, crank 0.4, coupler 1.1, rocker 0.8: a planar chain of pins closed by a
  // ball at the rocker's tip (the out-of-plane equation is redundant)
  const double lg = 1.0, l1 = 0.4, l2 = 1.1, l3 = 0.8;
  mbs_system* sys = mbs_system_create("four_bar");
  const char* names[3] = {"crank", "coupler", "rocker"};
  const double len[3] = {l1, l2, l3};
  for (int i = 0; i < 3; i++) {
    mbs_body_spec s = mbs_body_spec_default(names[i], i, MBS_MOB_PIN);
    s.mass = 1.0 + 0.3 * i;
    s.com[0] = len[i] / 2;
    s.inertia[2] = s.inertia[1] = s.mass * len[i] * len[i] / 12;
    s.inertia[0] = 1e-3;
    if (i > 0) s.X_PF.p[0] = len[i - 1];
    mbs_system_add_body(sys, &s);
  }
  add_gravity(sys);
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_BALL, "closure");
  c.body1 = 0;
  c.body2 = 3;
  c.p1[0] = lg;
  c.p2[0] = l3;
  mbs_system_add_constraint(sys, &c);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  double* q = mbs_state_upd_q(st);
  q[0] = 1.2; q[1] = -0.6; q[2] = -1.9;  // a rough guess
  mbs_state_upd_u(st)[0] = 1.0;
  mbs_assembly_options o;
  mbs_assembly_options_default(&o);
  EXPECT_OK(mbs_assemble(sys, st, &o));
  double e[3];
  int n;
  EXPECT_OK(mbs_calc_position_errors(sys, st, e, &n));
  EXPECT_EQ_INT(n, 3);
  for (int i = 0; i < 3; i++) EXPECT_ABS(e[i], 0, 1e-10);
  EXPECT_OK(mbs_calc_velocity_errors(sys, st, e, &n));
  for (int i = 0; i < 3; i++) EXPECT_ABS(e[i], 0, 1e-10);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_OK(mbs_calc_acceleration_errors(sys, st, e, &n));
  for (int i = 0; i < 3; i++) EXPECT_ABS(e[i], 0, 1e-10);
  // the rocker tip is at the ground pivot
  double tip[3];
  const double p2[3] = {l3, 0, 0};
  EXPECT_OK(mbs_get_station_location(sys, st, 3, p2, tip));
  EXPECT_NEAR(tip[0], lg, 1e-10);
  EXPECT_ABS(tip[1], 0, 1e-10);
  // an impossible linkage (rocker too short to reach) is refused with a clear message
  // (after checking that a locked crank stays where it is locked while the rest assembles)
  EXPECT_OK(mbs_state_set_param(sys, st, "/constraintset/closure/point1", 0, 5.0));
  EXPECT_EQ_INT(mbs_assemble(sys, st, &o), MBS_ERR_ASSEMBLY);
  EXPECT_TRUE(strstr(mbs_state_error(st)->message, "closure") != NULL);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_locked_crank_assembly(void) {
  // the four-bar with its crank locked at 1.0 rad: assembly moves only the other joints
  const double lg = 1.0, len[3] = {0.4, 1.1, 0.8};
  mbs_system* sys = mbs_system_create("four_bar_locked");
  const char* names[3] = {"crank", "coupler", "rocker"};
  for (int i = 0; i < 3; i++) {
    mbs_body_spec s = mbs_body_spec_default(names[i], i, MBS_MOB_PIN);
    s.mass = 1.0;
    s.com[0] = len[i] / 2;
    s.inertia[1] = s.inertia[2] = 0.05;
    if (i > 0) s.X_PF.p[0] = len[i - 1];
    mbs_system_add_body(sys, &s);
  }
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_BALL, "closure");
  c.body1 = 0;
  c.body2 = 3;
  c.p1[0] = lg;
  c.p2[0] = len[2];
  mbs_system_add_constraint(sys, &c);
  mbs_constraint_spec lock = mbs_constraint_spec_default(MBS_CON_LOCKED_COORDINATE, "crank_lock");
  lock.coordinate = (mbs_coordinate_ref){1, 0};
  lock.value = 1.0;
  mbs_system_add_constraint(sys, &lock);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  double* q = mbs_state_upd_q(st);
  q[0] = 1.0; q[1] = -0.3; q[2] = -2.2;
  mbs_state_upd_u(st)[1] = 0.7;  // the locked crank cannot move: the others stop too
  EXPECT_OK(mbs_assemble(sys, st, NULL));
  EXPECT_ABS(mbs_state_q(st)[0], 1.0, 1e-12);
  for (int i = 0; i < 3; i++) EXPECT_ABS(mbs_state_u(st)[i], 0, 1e-12);
  double e[4];
  int n;
  EXPECT_OK(mbs_calc_position_errors(sys, st, e, &n));
  EXPECT_EQ_INT(n, 4);
  for (int i = 0; i < n; i++) EXPECT_ABS(e[i], 0, 1e-10);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  test_locked_crank_assembly();
  test_rod_pendulum();
  test_line_and_plane();
  test_rolling_sphere();
  test_table(0);
  test_table(1);
  test_coordinate_constraints();
  test_coupler();
  test_weld_and_orientation();
  test_four_bar_assembly();
  return mbs_test_finish("test_constraint_physics");
}
