// Induced accelerations (core/induced_accelerations.c) on a planar chain of three pins with
// gravity, two muscles (one across two joints), a coordinate actuator, other forces (a body
// force, a spring, a damper, an applied generalized force) and an external force on the last
// body that a point constraint replaces above the threshold (checked against the System's own
// ball constraint, disabled in the model, switched on at the same point):
//  - superposition: the contributions sum to "total" within 1e-8 (accelerations, bodies'
//    mass-center and angular accelerations, the system's mass center);
//  - each contribution against M^-1 f computed here: the muscles' tendon forces (their reports)
//    times moment arms from central differences of path lengths, the actuator's control times
//    its optimal force, gravity through the mass centers' Jacobians, the other forces from
//    their definitions, the velocity terms from inverse dynamics at zero acceleration;
//  - "total" is the forward dynamics without the external force (OpenSim disables them);
//  - with the contact replaced (the force above 6 N): every contribution keeps the constraint's
//    accelerations at zero (G a = 0; "total" and "velocity" G a = b) and differs from the
//    unconstrained one by a constraint force (M a - f in the range of G^T);
//  - the bodies' mass-center accelerations are J_c u' (the speeds' terms for "velocity" and
//    "total"), the angular ones the sums of the joint accelerations;
//  - OpenSim's mode: actuators and gravity at zero speeds with the other forces in each, the
//    damper only in "velocity"; compute_potentials_only: muscles with a unit tension;
//  - bad contacts are refused; solving allocates nothing.
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs/induced_accelerations.h"
#include "mbs_test.h"

#include "mbs_test_alloc.h"

#define NU 3
static const double G = 9.81;
static const double masses[3] = {2.0, 1.5, 1.0};
static const double coms[3][3] = {{0.2, 0, 0}, {0.17, 0.01, 0}, {0.15, 0, 0}};
static const double bf_point[3] = {0.1, 0.02, 0}, bf_force[3] = {3, -2, 0};
static const double sp_ground[3] = {0.5, 0.6, 0}, sp_body[3] = {0.2, 0, 0};
static const double sp_k = 50, sp_rest = 0.3, damper_c = 0.8, applied = 0.25;
static const double ext_point[3] = {0.25, 0.01, 0};
static const double act_force = 10, act_control = 0.7;

typedef struct chain {
  mbs_system* sys;
  int b[3];
  int m1, m2, act, ext, contact;
} chain;

static int add_muscle(mbs_system* sys, const char* name, int a, const double A[3], int b,
                      const double B[3], double fmax, double lopt, double lts) {
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", a),
                              mbs_path_point_spec_default("insertion", b)};
  memcpy(p[0].location, A, sizeof(double) * 3);
  memcpy(p[1].location, B, sizeof(double) * 3);
  const int path = mbs_system_add_path(sys, name, p, 2);
  mbs_muscle_params mp;
  mbs_muscle_params_default(&mp, MBS_MUSCLE_THELEN2003);
  mp.max_isometric_force = fmax;
  mp.optimal_fiber_length = lopt;
  mp.tendon_slack_length = lts;
  const int f = mbs_system_add_muscle(sys, &mp, path, 0.3, 0.3, -1);
  EXPECT_TRUE(f >= 0);
  EXPECT_OK(mbs_system_set_force_name(sys, f, name));
  return f;
}

static chain build_chain(int others) {
  chain c;
  memset(&c, 0, sizeof(c));
  c.sys = mbs_system_create("chain");
  static const char* const names[3] = {"link1", "link2", "link3"};
  static const char* const joints[3] = {"joint1", "joint2", "joint3"};
  const double offs[3] = {0, 0.4, 0.35};
  for (int i = 0; i < 3; i++) {
    mbs_body_spec s = mbs_body_spec_default(names[i], i == 0 ? 0 : c.b[i - 1], MBS_MOB_PIN);
    s.mobilizer_name = joints[i];
    s.X_PF.p[0] = offs[i];
    s.mass = masses[i];
    memcpy(s.com, coms[i], sizeof(s.com));
    s.inertia[0] = s.inertia[1] = 0.02;
    s.inertia[2] = 0.03 - 0.01 * i;
    c.b[i] = mbs_system_add_body(c.sys, &s);
  }
  const double g[3] = {0, -G, 0};
  mbs_system_add_gravity(c.sys, g);
  const double A1[3] = {0.05, 0.1, 0}, B1[3] = {0.15, 0.02, 0};
  const double A2[3] = {0.3, 0.03, 0}, B2[3] = {0.05, 0.02, 0};
  c.m1 = add_muscle(c.sys, "muscle1", 0, A1, c.b[0], B1, 600, 0.1, 0.05);
  c.m2 = add_muscle(c.sys, "muscle2", c.b[0], A2, c.b[2], B2, 400, 0.15, 0.2);
  c.act = mbs_system_add_coordinate_actuator(c.sys, c.b[1], 0, act_force, act_control, -1);
  EXPECT_OK(mbs_system_set_force_name(c.sys, c.act, "actuator"));
  if (others) {
    mbs_system_add_body_force(c.sys, c.b[1], bf_point, bf_force);
    mbs_system_add_spring(c.sys, 0, sp_ground, c.b[2], sp_body, sp_k, sp_rest);
    mbs_system_add_mobility_damper(c.sys, c.b[2], 0, damper_c);
  }
  // the external force: (5, 100 t - 2, 0) N in Ground at a point of link3
  const double five = 5, lin[2] = {100, -2}, zero = 0;
  mbs_function_spec fs;
  memset(&fs, 0, sizeof(fs));
  fs.type = MBS_FUNC_CONSTANT;
  fs.n = 1;
  fs.coefs = &five;
  const int f5 = mbs_system_add_function(c.sys, &fs);
  fs.coefs = &zero;
  const int f0 = mbs_system_add_function(c.sys, &fs);
  fs.type = MBS_FUNC_LINEAR;
  fs.n = 2;
  fs.coefs = lin;
  const int flin = mbs_system_add_function(c.sys, &fs);
  int fp[3];
  for (int i = 0; i < 3; i++) {
    fs.type = MBS_FUNC_CONSTANT;
    fs.n = 1;
    fs.coefs = &ext_point[i];
    fp[i] = mbs_system_add_function(c.sys, &fs);
  }
  mbs_external_force_spec es;
  memset(&es, 0, sizeof(es));
  es.body = c.b[2];
  es.force_frame_body = 0;
  es.point_frame_body = c.b[2];
  es.force_functions[0] = f5;
  es.force_functions[1] = flin;
  es.force_functions[2] = f0;
  for (int i = 0; i < 3; i++) {
    es.point_functions[i] = fp[i];
    es.torque_functions[i] = -1;
  }
  c.ext = mbs_system_add_external_force(c.sys, &es);
  EXPECT_TRUE(c.ext >= 0);
  // the System's own constraints for the checks, disabled
  static const char* const cnames[3] = {"contact", "contact_weld", "contact_roll"};
  const mbs_constraint_type ctypes[3] = {MBS_CON_BALL, MBS_CON_WELD, MBS_CON_ROLLING};
  for (int k = 0; k < 3; k++) {
    mbs_constraint_spec cs = mbs_constraint_spec_default(ctypes[k], cnames[k]);
    cs.body1 = 0;
    cs.body2 = c.b[2];
    cs.a1[1] = 1;  // the rolling plane's normal: Ground's y
    cs.enabled = 0;
    const int id = mbs_system_add_constraint(c.sys, &cs);
    EXPECT_TRUE(id >= 0);
    if (k == 0) c.contact = id;
  }
  EXPECT_OK(mbs_system_finalize(c.sys));
  return c;
}

static mbs_state* chain_state(const chain* c, double t) {
  mbs_state* st = mbs_state_create(c->sys);
  mbs_state_set_time(st, t);
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  q[0] = 0.3, q[1] = -0.5, q[2] = 0.8;
  u[0] = 0.7, u[1] = -1.2, u[2] = 0.9;
  mbs_state_upd_applied_mobility_forces(st)[1] = applied;
  EXPECT_OK(mbs_equilibrate_muscles(c->sys, st));
  EXPECT_OK(mbs_realize_acceleration(c->sys, st));
  return st;
}

// x = M^-1 f with the dense mass matrix
static void minv(const mbs_system* sys, mbs_state* st, const double* f, double* x) {
  double M[NU * NU];
  lapack_int piv[NU];
  EXPECT_OK(mbs_calc_mass_matrix(sys, st, M));
  memcpy(x, f, NU * sizeof(double));
  EXPECT_EQ_INT(LAPACKE_dgesv(LAPACK_ROW_MAJOR, NU, 1, M, NU, piv, x, 1), 0);
}

// generalized force of a force (Ground) at station p of body b
static void station_force(const mbs_system* sys, mbs_state* st, int b, const double p[3],
                          const double F[3], double* g) {
  double J[3 * NU];
  EXPECT_OK(mbs_calc_station_jacobian(sys, st, b, p, J));
  for (int i = 0; i < NU; i++) g[i] += J[i] * F[0] + J[NU + i] * F[1] + J[2 * NU + i] * F[2];
}

static void station_position(const mbs_system* sys, mbs_state* st, int b, const double p[3],
                             double x[3]) {
  EXPECT_OK(mbs_get_station_location(sys, st, b, p, x));
}

// -dL/dq of a path by central differences
static void fd_moment_arms(const mbs_system* sys, const mbs_state* st, int path, double* r) {
  mbs_state* w = mbs_state_create(sys);
  for (int i = 0; i < NU; i++) {
    double Lp, Lm, h = 1e-6;
    mbs_state_copy(sys, w, st);
    mbs_state_upd_q(w)[i] += h;
    EXPECT_OK(mbs_realize_position(sys, w));
    EXPECT_OK(mbs_calc_path_length(sys, w, path, &Lp, NULL));
    mbs_state_copy(sys, w, st);
    mbs_state_upd_q(w)[i] -= h;
    EXPECT_OK(mbs_realize_position(sys, w));
    EXPECT_OK(mbs_calc_path_length(sys, w, path, &Lm, NULL));
    r[i] = -(Lp - Lm) / (2 * h);
  }
  mbs_state_destroy(w);
}

// the generalized forces each contributor stands for, computed here
typedef struct expected {
  double muscle[2][NU], muscle_unit[2][NU], act[NU], gravity[NU], other0[NU], otheru[NU],
      C[NU], ext[NU];
} expected;

static void expected_forces(const chain* c, mbs_state* st, expected* e) {
  const mbs_system* sys = c->sys;
  memset(e, 0, sizeof(*e));
  const int m[2] = {c->m1, c->m2};
  for (int k = 0; k < 2; k++) {
    mbs_muscle_report r;
    EXPECT_OK(mbs_get_muscle_report(sys, st, m[k], &r));
    double arm[NU];
    fd_moment_arms(sys, st, mbs_force_path(sys, m[k]), arm);
    for (int i = 0; i < NU; i++) {
      e->muscle[k][i] = r.tendon_force * arm[i];
      e->muscle_unit[k][i] = arm[i];
    }
  }
  e->act[1] = act_force * act_control;
  for (int b = 0; b < 3; b++) {
    const double F[3] = {0, -G * masses[b], 0};
    station_force(sys, st, c->b[b], coms[b], F, e->gravity);
  }
  // others: body force, spring (tension k (L - L0) pulling link3's point toward the ground's),
  // the applied force; the damper -c u3 only at the State's speeds
  station_force(sys, st, c->b[1], bf_point, bf_force, e->other0);
  double p3[3], d[3];
  station_position(sys, st, c->b[2], sp_body, p3);
  for (int i = 0; i < 3; i++) d[i] = p3[i] - sp_ground[i];
  const double L = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), T = sp_k * (L - sp_rest);
  const double Fs[3] = {-T * d[0] / L, -T * d[1] / L, -T * d[2] / L};
  station_force(sys, st, c->b[2], sp_body, Fs, e->other0);
  e->other0[1] += applied;
  memcpy(e->otheru, e->other0, sizeof(e->otheru));
  e->otheru[2] -= damper_c * mbs_state_u(st)[2];
  // velocity terms: C = tau_ID(u' = 0) + f_applied (all force elements and applied forces)
  double zero[NU] = {0, 0, 0}, tau[NU], fb[NU];
  mbs_state* w = mbs_state_create(sys);
  mbs_state_copy(sys, w, st);
  EXPECT_OK(mbs_realize_dynamics(sys, w));
  EXPECT_OK(mbs_calc_inverse_dynamics(sys, w, zero, tau));
  EXPECT_OK(mbs_calc_jacobian_transpose_times(sys, w, mbs_get_body_forces(sys, w), fb));
  const double* fm = mbs_get_mobility_forces(sys, w);
  for (int i = 0; i < NU; i++) e->C[i] = tau[i] + fb[i] + fm[i];
  mbs_state_destroy(w);
  double Fe[3], Pe[3];
  EXPECT_OK(mbs_get_external_force(sys, st, c->ext, NULL, Fe, Pe, NULL));
  station_force(sys, st, c->b[2], ext_point, Fe, e->ext);
}

static int find(const mbs_ia* ia, const char* name) {
  for (int k = 0; k < mbs_ia_ncontributor(ia); k++)
    if (!strcmp(mbs_ia_contributor_name(ia, k), name)) return k;
  return -1;
}

static void expect_vec(const double* a, const double* b, int n, double tol, const char* what) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(b[i]));
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (!(fabs(a[i] - b[i]) <= tol * (1 + s))) bad = 1;
  EXPECT_TRUE(!bad);
  if (bad) {
    fprintf(stderr, "  %s:", what);
    for (int i = 0; i < n; i++) fprintf(stderr, " %.12g/%.12g", a[i], b[i]);
    fprintf(stderr, "\n");
  }
}

// the contributions sum to the total: accelerations, bodies, system mass center
static void check_superposition(const mbs_ia* ia, int nb) {
  const int t = find(ia, "total");
  double su[NU] = {0}, sa[6 * 4] = {0}, sc[3] = {0};
  for (int k = 0; k < mbs_ia_ncontributor(ia); k++) {
    if (k == t) continue;
    const double* u = mbs_ia_udot(ia, k);
    const double* A = mbs_ia_body_acceleration(ia, k);
    const double* c = mbs_ia_com_acceleration(ia, k);
    for (int i = 0; i < NU; i++) su[i] += u[i];
    for (int i = 0; i < 6 * nb; i++) sa[i] += A[i];
    for (int i = 0; i < 3; i++) sc[i] += c[i];
  }
  expect_vec(su, mbs_ia_udot(ia, t), NU, 1e-8, "sum of u'");
  expect_vec(sa, mbs_ia_body_acceleration(ia, t), 6 * nb, 1e-8, "sum of body accelerations");
  expect_vec(sc, mbs_ia_com_acceleration(ia, t), 3, 1e-8, "sum of mass-center accelerations");
}

// bodies: mass-center accelerations J_c u' (+ speeds' terms), angular sums of joint accelerations
static void check_bodies(const chain* c, mbs_state* st, const mbs_ia* ia, int k, int velocity) {
  const double* u = mbs_ia_udot(ia, k);
  const double* A = mbs_ia_body_acceleration(ia, k);
  const double* w = mbs_state_u(st);
  double msum = 0, com[3] = {0, 0, 0};
  for (int b = 0; b < 3; b++) {
    double J[3 * NU], a[3] = {0, 0, 0}, alpha = 0;
    EXPECT_OK(mbs_calc_station_jacobian(c->sys, st, c->b[b], coms[b], J));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < NU; j++) a[i] += J[i * NU + j] * u[j];
    for (int j = 0; j <= b; j++) alpha += u[j];
    if (velocity) {
      // planar: the speeds' terms are J-dot u, by a central difference of J along the motion
      double Jp[3 * NU], Jm[3 * NU], h = 1e-6;
      mbs_state* s2 = mbs_state_create(c->sys);
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        mbs_state_copy(c->sys, s2, st);
        for (int j = 0; j < NU; j++) mbs_state_upd_q(s2)[j] += sgn * h * w[j];
        EXPECT_OK(mbs_realize_position(c->sys, s2));
        EXPECT_OK(mbs_calc_station_jacobian(c->sys, s2, c->b[b], coms[b], sgn > 0 ? Jp : Jm));
      }
      mbs_state_destroy(s2);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < NU; j++) a[i] += (Jp[i * NU + j] - Jm[i * NU + j]) / (2 * h) * w[j];
    }
    const double* Ab = A + 6 * c->b[b];
    EXPECT_ABS(Ab[0], 0, 1e-9);
    EXPECT_ABS(Ab[1], 0, 1e-9);
    EXPECT_NEAR(Ab[2], alpha, 1e-9);
    for (int i = 0; i < 3; i++) EXPECT_NEAR(Ab[3 + i], a[i], velocity ? 1e-6 : 1e-9);
    for (int i = 0; i < 3; i++) com[i] += masses[b] * a[i];
    msum += masses[b];
  }
  for (int i = 0; i < 3; i++)
    EXPECT_NEAR(mbs_ia_com_acceleration(ia, k)[i], com[i] / msum, velocity ? 1e-6 : 1e-9);
}

static void test_free(void) {
  chain c = build_chain(1);
  mbs_state* st = chain_state(&c, 0.0);  // external force 5.4 N: below 6, not replaced
  mbs_ia_contact ct = {c.ext, MBS_IA_CONTACT_POINT, {0, 1, 0}};
  mbs_ia_options o;
  mbs_ia_options_default(&o);
  o.contacts = &ct;
  o.ncontact = 1;
  mbs_ia* ia = NULL;
  mbs_error err;
  EXPECT_OK(mbs_ia_create(c.sys, &o, &ia, &err));
  EXPECT_EQ_INT(mbs_ia_ncontributor(ia), 7);  // total, 3 actuators, gravity, velocity, other
  EXPECT_TRUE(!strcmp(mbs_ia_contributor_name(ia, 1), "muscle1"));
  EXPECT_TRUE(!strcmp(mbs_ia_contributor_name(ia, 6), "other_forces"));
  EXPECT_EQ_INT(mbs_ia_contributor_force(ia, 3), c.act);
  EXPECT_OK(mbs_ia_solve(ia, st, &err));
  EXPECT_EQ_INT(mbs_ia_contact_on(ia, 0), 0);
  expected e;
  expected_forces(&c, st, &e);
  double x[NU], f[NU];
  minv(c.sys, st, e.muscle[0], x);
  expect_vec(mbs_ia_udot(ia, find(ia, "muscle1")), x, NU, 1e-7, "muscle1");
  minv(c.sys, st, e.muscle[1], x);
  expect_vec(mbs_ia_udot(ia, find(ia, "muscle2")), x, NU, 1e-7, "muscle2");
  minv(c.sys, st, e.act, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "actuator")), x, NU, 1e-10, "actuator");
  minv(c.sys, st, e.gravity, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "gravity")), x, NU, 1e-10, "gravity");
  minv(c.sys, st, e.otheru, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "other_forces")), x, NU, 1e-10, "other forces");
  for (int i = 0; i < NU; i++) f[i] = -e.C[i];
  minv(c.sys, st, f, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "velocity")), x, NU, 1e-10, "velocity");
  // total: the forward dynamics without the external force
  minv(c.sys, st, e.ext, x);
  for (int i = 0; i < NU; i++) f[i] = mbs_get_udot(c.sys, st)[i] - x[i];
  expect_vec(mbs_ia_udot(ia, find(ia, "total")), f, NU, 1e-10, "total");
  check_superposition(ia, mbs_system_nbody(c.sys));
  check_bodies(&c, st, ia, find(ia, "gravity"), 0);
  check_bodies(&c, st, ia, find(ia, "muscle2"), 0);
  check_bodies(&c, st, ia, find(ia, "velocity"), 1);
  check_bodies(&c, st, ia, find(ia, "total"), 1);
  mbs_ia_free(ia);

  // OpenSim's mode: zero speeds for actuators and gravity, the other forces in each
  o.mode = MBS_IA_OPENSIM;
  EXPECT_OK(mbs_ia_create(c.sys, &o, &ia, &err));
  EXPECT_EQ_INT(mbs_ia_ncontributor(ia), 6);
  EXPECT_EQ_INT(find(ia, "other_forces"), -1);
  EXPECT_OK(mbs_ia_solve(ia, st, &err));
  for (int i = 0; i < NU; i++) f[i] = e.gravity[i] + e.other0[i];
  minv(c.sys, st, f, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "gravity")), x, NU, 1e-10, "OpenSim gravity");
  for (int i = 0; i < NU; i++) f[i] = e.act[i] + e.other0[i];
  minv(c.sys, st, f, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "actuator")), x, NU, 1e-10, "OpenSim actuator");
  for (int i = 0; i < NU; i++) f[i] = e.muscle[0][i] + e.other0[i];  // Thelen: no speed in it
  minv(c.sys, st, f, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "muscle1")), x, NU, 1e-7, "OpenSim muscle1");
  for (int i = 0; i < NU; i++) f[i] = e.otheru[i] - e.C[i];
  minv(c.sys, st, f, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "velocity")), x, NU, 1e-10, "OpenSim velocity");
  mbs_ia_free(ia);

  // potentials: the muscles' unit tension, no total
  o.mode = MBS_IA_SUPERPOSITION;
  o.compute_potentials_only = 1;
  EXPECT_OK(mbs_ia_create(c.sys, &o, &ia, &err));
  EXPECT_EQ_INT(find(ia, "total"), -1);
  EXPECT_OK(mbs_ia_solve(ia, st, &err));
  minv(c.sys, st, e.muscle_unit[1], x);
  expect_vec(mbs_ia_udot(ia, find(ia, "muscle2")), x, NU, 1e-7, "potential of muscle2");
  minv(c.sys, st, e.act, x);
  expect_vec(mbs_ia_udot(ia, find(ia, "actuator")), x, NU, 1e-10, "potential of actuator");
  mbs_ia_free(ia);
  mbs_state_destroy(st);
  mbs_system_destroy(c.sys);
}

// a at the replaced contact: G a = b_expected, and M a - f = G^T lambda for some lambda
static void check_constrained(const chain* c, mbs_state* sc, const double* a, const double* f,
                              int velocity, const char* what) {
  double err[8];
  const int neq = mbs_constraint_nequation(c->sys, sc);
  int n = 0;
  if (velocity) {
    EXPECT_OK(mbs_calc_acceleration_errors_of(c->sys, sc, a, err, &n));
  } else {
    double G[8 * NU];
    EXPECT_OK(mbs_calc_constraint_jacobian(c->sys, sc, G));
    n = mbs_constraint_nequation(c->sys, sc);
    for (int i = 0; i < n; i++) {
      err[i] = 0;
      for (int j = 0; j < NU; j++) err[i] += G[i * NU + j] * a[j];
    }
  }
  EXPECT_EQ_INT(n, neq);
  for (int i = 0; i < n; i++) EXPECT_ABS(err[i], 0, 1e-9);
  // least squares G^T lambda = M a - f: the residual must vanish
  double M[NU * NU], Gt[NU * 6], r[NU], G[6 * NU];
  EXPECT_OK(mbs_calc_mass_matrix(c->sys, sc, M));
  EXPECT_OK(mbs_calc_constraint_jacobian(c->sys, sc, G));
  double fscale = 0;
  for (int i = 0; i < NU; i++) {
    r[i] = -f[i];
    for (int j = 0; j < NU; j++) r[i] += M[i * NU + j] * a[j];
    for (int k = 0; k < neq; k++) Gt[i * neq + k] = G[k * NU + i];
    fscale = fscale > fabs(f[i]) ? fscale : fabs(f[i]);
  }
  double rr[NU];
  memcpy(rr, r, sizeof(rr));
  lapack_int rank;
  double sv[6];
  // (rr holds NU >= the unknowns' count only when neq <= NU: pad)
  double rhs[6] = {0, 0, 0, 0, 0, 0};
  memcpy(rhs, rr, sizeof(rr));
  EXPECT_EQ_INT(LAPACKE_dgelss(LAPACK_ROW_MAJOR, NU, neq, 1, Gt, neq, rhs, 1, sv, 1e-12, &rank),
                0);
  // residual of the fit: r - G^T lambda
  double res = 0;
  for (int i = 0; i < NU; i++) {
    double s = r[i];
    for (int k = 0; k < neq; k++) s -= G[k * NU + i] * rhs[k];
    res = fmax(res, fabs(s));
  }
  if (!(res <= 1e-9 * (1 + fscale))) fprintf(stderr, "  %s: residual %g\n", what, res);
  EXPECT_TRUE(res <= 1e-9 * (1 + fscale));
}

static void test_contact(mbs_ia_contact_type type) {
  static const char* const cnames[3] = {"contact", "contact_weld", "contact_roll"};
  chain c = build_chain(1);
  mbs_state* st = chain_state(&c, 1.0);  // external force |(5, 98)| N: replaced
  mbs_ia_contact ct = {c.ext, type, {0, 1, 0}};
  mbs_ia_options o;
  mbs_ia_options_default(&o);
  o.contacts = &ct;
  o.ncontact = 1;
  mbs_ia* ia = NULL;
  mbs_error err;
  EXPECT_OK(mbs_ia_create(c.sys, &o, &ia, &err));
  EXPECT_OK(mbs_ia_solve(ia, st, &err));
  EXPECT_EQ_INT(mbs_ia_contact_on(ia, 0), 1);
  check_superposition(ia, mbs_system_nbody(c.sys));
  // the same State with the System's constraint at the force's point, for the checks
  mbs_state* sc = mbs_state_create(c.sys);
  mbs_state_copy(c.sys, sc, st);
  double P[3];
  EXPECT_OK(mbs_realize_position(c.sys, sc));
  station_position(c.sys, sc, c.b[2], ext_point, P);
  char path[96];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "/constraintset/%s/point1", cnames[type]);
    EXPECT_OK(mbs_state_set_param(c.sys, sc, path, i, P[i]));
    snprintf(path, sizeof path, "/constraintset/%s/point2", cnames[type]);
    EXPECT_OK(mbs_state_set_param(c.sys, sc, path, i, ext_point[i]));
  }
  snprintf(path, sizeof path, "/constraintset/%s/enabled", cnames[type]);
  EXPECT_OK(mbs_state_set_param(c.sys, sc, path, 0, 1));
  EXPECT_OK(mbs_realize_acceleration(c.sys, sc));
  expected e;
  expected_forces(&c, st, &e);
  check_constrained(&c, sc, mbs_ia_udot(ia, find(ia, "gravity")), e.gravity, 0, "gravity");
  check_constrained(&c, sc, mbs_ia_udot(ia, find(ia, "muscle2")), e.muscle[1], 0, "muscle2");
  check_constrained(&c, sc, mbs_ia_udot(ia, find(ia, "actuator")), e.act, 0, "actuator");
  check_constrained(&c, sc, mbs_ia_udot(ia, find(ia, "other_forces")), e.otheru, 0, "others");
  double f[NU];
  if (type == MBS_IA_CONTACT_POINT) {
    // the speeds' terms: the System's ball at a point moving with the body agrees exactly
    for (int i = 0; i < NU; i++) f[i] = -e.C[i];
    check_constrained(&c, sc, mbs_ia_udot(ia, find(ia, "velocity")), f, 1, "velocity");
    for (int i = 0; i < NU; i++)
      f[i] = e.muscle[0][i] + e.muscle[1][i] + e.act[i] + e.gravity[i] + e.otheru[i] - e.C[i];
    check_constrained(&c, sc, mbs_ia_udot(ia, find(ia, "total")), f, 1, "total");
  }
  printf("contact %s: total u' = (%.6f, %.6f, %.6f)\n", cnames[type], mbs_ia_udot(ia, 0)[0],
         mbs_ia_udot(ia, 0)[1], mbs_ia_udot(ia, 0)[2]);
  check_bodies(&c, st, ia, find(ia, "gravity"), 0);
  // no allocation per solve
  const long before = n_alloc;
  for (int k = 0; k < 5; k++) EXPECT_OK(mbs_ia_solve(ia, st, &err));
  EXPECT_EQ_INT(n_alloc - before, 0);
  mbs_ia_free(ia);
  mbs_state_destroy(sc);
  mbs_state_destroy(st);
  mbs_system_destroy(c.sys);
}

static void test_bad(void) {
  chain c = build_chain(0);
  mbs_ia_options o;
  mbs_ia_options_default(&o);
  mbs_ia_contact ct = {c.act, MBS_IA_CONTACT_POINT, {0, 1, 0}};  // not an external force
  o.contacts = &ct;
  o.ncontact = 1;
  mbs_ia* ia = NULL;
  mbs_error err;
  EXPECT_EQ_INT(mbs_ia_create(c.sys, &o, &ia, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(ia == NULL && strstr(err.message, "not an external force") != NULL);
  o.force_threshold = -1;
  ct.external_force = c.ext;
  EXPECT_EQ_INT(mbs_ia_create(c.sys, &o, &ia, &err), MBS_ERR_ARGUMENT);
  mbs_ia_options_default(&o);
  EXPECT_OK(mbs_ia_create(c.sys, &o, &ia, &err));
  EXPECT_EQ_INT(mbs_ia_ncontributor(ia), 6);  // no other forces in this chain
  mbs_state* st = mbs_state_create(c.sys);
  mbs_state_upd_u(st)[1] = NAN;
  EXPECT_EQ_INT(mbs_ia_solve(ia, st, &err), MBS_ERR_ARGUMENT);
  printf("bad: %s\n", err.message);
  mbs_ia_free(ia);
  mbs_state_destroy(st);
  mbs_system_destroy(c.sys);
}

int main(void) {
  EXPECT_TRUE(mbs_test_alloc_active());  // the allocation counter sees the libraries
  test_free();
  test_contact(MBS_IA_CONTACT_POINT);
  test_contact(MBS_IA_CONTACT_WELD);
  test_contact(MBS_IA_CONTACT_ROLLING);
  test_bad();
  return mbs_test_finish("test_induced_accelerations");
}
