// Static optimization (core/static_optimization.c) against closed forms and independent
// optimality checks:
//  - one pin joint, two flexors of known moment arms (straight lines: r = (B x A)_z / L) with
//    their maximum isometric forces as capacity: the minimum-norm activations
//    a_i = tau c_i / sum c^2, c_i = r_i F_i, tau = I_O u' (Newton about the pin);
//  - the same with an antagonist held at a lower bound above zero, and with the stronger
//    flexor saturated at its upper bound (the rest from the remaining torque);
//  - a reserve coordinate actuator taking its share (c = its optimal force);
//  - use_muscle_physiology: a single Thelen muscle holding a horizontal arm against gravity,
//    activation = m g x_c / (r F_max f_AL(l~) cos(alpha)) with the rigid-tendon fiber length,
//    f_AL Thelen's Gaussian written out here; the capacity with lengthening and shortening
//    against the Thelen force-velocity relation inverted by bisection;
//  - a two-joint arm with five muscles (one biarticular), gravity, moving, physiology on: the
//    Karush-Kuhn-Tucker conditions checked independently — the rows M u' + C - g from the dense
//    mass matrix and station Jacobians, moment arms by central differences of path lengths,
//    multipliers by least squares on the free activations, their signs at the bounds — for
//    p = 2 and p = 3;
//  - the elbow locked by a constraint: only the shoulder's acceleration is a row (the elbow's
//    desired acceleration is ignored), a_i = tau c_i / sum c^2 with tau from M11;
//  - errors: a non-finite desired acceleration, a joint no actuator crosses (named), more than
//    the muscles can do (the joint named, the closest activations returned), bad options;
//  - solving allocates nothing (malloc is wrapped at link time).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs/static_optimization.h"
#include "mbs_test.h"

#include "mbs_test_alloc.h"

static const double G = 9.81;

// a straight-line muscle from point A on body a to point B on body b
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
  mp.pennation_angle_at_optimal = 0.1;
  const int f = mbs_system_add_muscle(sys, &mp, path, 0.1, 0.1, -1);
  EXPECT_TRUE(f >= 0);
  EXPECT_OK(mbs_system_set_force_name(sys, f, name));
  return f;
}

// ---------------------------------------------------------------------------------------------
// one pin joint

static const double arm_mass = 2, arm_com = 0.3, arm_izz = 0.1;
static const double A1[3] = {0.0, 0.15, 0}, B1[3] = {0.25, 0.02, 0};   // flexor 1
static const double A2[3] = {0.05, 0.12, 0}, B2[3] = {0.15, 0.015, 0}; // flexor 2
static const double A3[3] = {0.0, -0.1, 0}, B3[3] = {0.2, -0.02, 0};   // extensor

typedef struct one_joint {
  mbs_system* sys;
  int body, m1, m2, m3, reserve;
} one_joint;

static one_joint build_one_joint(int gravity, int extensor, int reserve) {
  one_joint o = {0};
  o.sys = mbs_system_create("one_joint");
  mbs_body_spec s = mbs_body_spec_default("arm", 0, MBS_MOB_PIN);
  s.mobilizer_name = "elbow";
  s.mass = arm_mass;
  s.com[0] = arm_com;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = arm_izz;
  o.body = mbs_system_add_body(o.sys, &s);
  if (gravity) {
    const double g[3] = {0, -G, 0};
    mbs_system_add_gravity(o.sys, g);
  }
  o.m1 = add_muscle(o.sys, "flexor1", 0, A1, o.body, B1, 800, 0.12, 0.1);
  o.m2 = add_muscle(o.sys, "flexor2", 0, A2, o.body, B2, 600, 0.1, 0.05);
  o.m3 = extensor ? add_muscle(o.sys, "extensor", 0, A3, o.body, B3, 700, 0.1, 0.1) : -1;
  o.reserve = reserve ? mbs_system_add_coordinate_actuator(o.sys, o.body, 0, 1.5, 0, -1) : -1;
  if (reserve) EXPECT_OK(mbs_system_set_force_name(o.sys, o.reserve, "reserve"));
  EXPECT_OK(mbs_system_finalize(o.sys));
  return o;
}

// moment arm of a line from ground point A to body point B at angle q: (B x A)_z / L
static double line_moment_arm(const double A[3], const double B[3], double q, double* L) {
  const double bx = cos(q) * B[0] - sin(q) * B[1], by = sin(q) * B[0] + cos(q) * B[1];
  const double dx = bx - A[0], dy = by - A[1];
  *L = sqrt(dx * dx + dy * dy);
  return (bx * A[1] - by * A[0]) / *L;
}

static void test_one_joint(void) {
  one_joint o = build_one_joint(0, 1, 0);
  mbs_state* st = mbs_state_create(o.sys);
  const double q = 0.3, I_O = arm_izz + arm_mass * arm_com * arm_com;
  mbs_state_upd_q(st)[0] = q;
  double L;
  const double c1 = 800 * line_moment_arm(A1, B1, q, &L);
  const double c2 = 600 * line_moment_arm(A2, B2, q, &L);
  const double c3 = 700 * line_moment_arm(A3, B3, q, &L);
  EXPECT_TRUE(c1 > 0 && c2 > 0 && c3 < 0);
  mbs_so_options opt;
  mbs_so_options_default(&opt);
  opt.use_muscle_physiology = 0;
  mbs_so* so = NULL;
  mbs_error err;
  EXPECT_OK(mbs_so_create(o.sys, &opt, &so, &err));
  EXPECT_EQ_INT(mbs_so_nparam(so), 3);
  double a[3], f[3];
  mbs_so_info info;
  // small demand: the extensor stays at its lower bound 0, the flexors share by c_i
  double udot = 2.0, tau = I_O * udot;
  EXPECT_OK(mbs_so_solve(so, st, &udot, a, f, &info, &err));
  const double s12 = c1 * c1 + c2 * c2;
  EXPECT_NEAR(a[0], tau * c1 / s12, 1e-12);
  EXPECT_NEAR(a[1], tau * c2 / s12, 1e-12);
  EXPECT_ABS(a[2], 0, 1e-14);
  EXPECT_NEAR(f[0], 800 * a[0], 1e-12);
  EXPECT_NEAR(info.objective, a[0] * a[0] + a[1] * a[1], 1e-12);
  EXPECT_TRUE(info.max_violation < 1e-12);
  EXPECT_EQ_INT(info.nactive, 1);
  EXPECT_EQ_INT(info.constrained_form, 0);
  // negative demand: the extensor alone (flexors at 0)
  udot = -1.5;
  tau = I_O * udot;
  EXPECT_OK(mbs_so_solve(so, st, &udot, a, f, &info, &err));
  EXPECT_NEAR(a[2], tau / c3, 1e-12);
  EXPECT_ABS(a[0], 0, 1e-14);
  EXPECT_ABS(a[1], 0, 1e-14);
  mbs_so_free(so);

  // the extensor held at 0.02 (a lower bound above zero), the stronger flexor saturating
  double lo[3] = {0, 0, 0.02}, hi[3] = {1, 1, 1};
  opt.lower = lo;
  opt.upper = hi;
  EXPECT_OK(mbs_so_create(o.sys, &opt, &so, &err));
  udot = 2.0;
  tau = I_O * udot;
  EXPECT_OK(mbs_so_solve(so, st, &udot, a, f, &info, &err));
  EXPECT_NEAR(a[2], 0.02, 1e-14);
  EXPECT_NEAR(a[0], (tau - 0.02 * c3) * c1 / s12, 1e-12);
  EXPECT_NEAR(a[1], (tau - 0.02 * c3) * c2 / s12, 1e-12);
  const double cbig = c1 > c2 ? c1 : c2, csmall = c1 > c2 ? c2 : c1;
  tau = 1.1 * s12 / cbig + 0.02 * c3;  // the larger share would be 1.1
  udot = tau / I_O;
  EXPECT_OK(mbs_so_solve(so, st, &udot, a, f, &info, &err));
  const int big = c1 > c2 ? 0 : 1;
  EXPECT_NEAR(a[big], 1.0, 1e-14);
  EXPECT_NEAR(a[1 - big], (tau - 0.02 * c3 - cbig) / csmall, 1e-12);
  EXPECT_TRUE(a[1 - big] < 1);
  EXPECT_EQ_INT(info.nactive, 2);
  // p = 3 without active bounds: 3 a_i^2 = lambda c_i, a_i = tau sqrt(c_i) / sum c^1.5
  mbs_so_free(so);
  opt.lower = opt.upper = NULL;
  opt.activation_exponent = 3;
  EXPECT_OK(mbs_so_create(o.sys, &opt, &so, &err));
  udot = 2.0;
  tau = I_O * udot;
  EXPECT_OK(mbs_so_solve(so, st, &udot, a, f, &info, &err));
  const double s15 = pow(c1, 1.5) + pow(c2, 1.5);
  EXPECT_NEAR(a[0], tau * sqrt(c1) / s15, 1e-9);
  EXPECT_NEAR(a[1], tau * sqrt(c2) / s15, 1e-9);
  EXPECT_ABS(a[2], 0, 1e-9);
  EXPECT_TRUE(info.max_violation < 1e-9);
  printf("one joint: p = 3 in %d iterations\n", info.iterations);
  mbs_so_free(so);
  mbs_state_destroy(st);
  mbs_system_destroy(o.sys);
}

static void test_reserve(void) {
  one_joint o = build_one_joint(0, 0, 1);
  mbs_state* st = mbs_state_create(o.sys);
  const double q = -0.2, I_O = arm_izz + arm_mass * arm_com * arm_com;
  mbs_state_upd_q(st)[0] = q;
  mbs_state_upd_u(st)[0] = 0.7;  // one joint: no Coriolis term
  double L;
  const double c1 = 800 * line_moment_arm(A1, B1, q, &L);
  const double c2 = 600 * line_moment_arm(A2, B2, q, &L);
  const double cr = 1.5;
  mbs_so_options opt;
  mbs_so_options_default(&opt);
  opt.use_muscle_physiology = 0;
  mbs_so* so = NULL;
  mbs_error err;
  EXPECT_OK(mbs_so_create(o.sys, &opt, &so, &err));
  EXPECT_EQ_INT(mbs_so_nparam(so), 3);
  EXPECT_EQ_INT(mbs_so_param_force(so, 2), o.reserve);
  double a[3], f[3], udot = 3.0;
  const double tau = I_O * udot, s = c1 * c1 + c2 * c2 + cr * cr;
  EXPECT_OK(mbs_so_solve(so, st, &udot, a, f, NULL, &err));
  EXPECT_NEAR(a[0], tau * c1 / s, 1e-12);
  EXPECT_NEAR(a[1], tau * c2 / s, 1e-12);
  EXPECT_NEAR(a[2], tau * cr / s, 1e-12);
  EXPECT_NEAR(f[2], 1.5 * a[2], 1e-12);  // the reserve's force: control x optimal force
  // pushing the other way: the muscles cannot, the reserve does it all
  udot = -3.0;
  EXPECT_OK(mbs_so_solve(so, st, &udot, a, f, NULL, &err));
  EXPECT_ABS(a[0], 0, 1e-14);
  EXPECT_ABS(a[1], 0, 1e-14);
  EXPECT_NEAR(a[2], I_O * udot / cr, 1e-12);
  mbs_so_free(so);
  mbs_state_destroy(st);
  mbs_system_destroy(o.sys);
}

// ---------------------------------------------------------------------------------------------
// physiology: a Thelen muscle holding a horizontal arm

static double thelen_fal(double ln) { return exp(-(ln - 1) * (ln - 1) / 0.45); }

static void test_physiology_holding(void) {
  one_joint o = build_one_joint(1, 0, 0);
  mbs_state* st = mbs_state_create(o.sys);
  mbs_state_upd_q(st)[0] = 0;  // horizontal: gravity's torque -m g x_c
  mbs_so_options opt;
  mbs_so_options_default(&opt);
  mbs_error err;
  // flexor 2 excluded: flexor 1 alone
  unsigned char excl[2] = {0, 1};
  opt.exclude = excl;
  mbs_so* so = NULL;
  EXPECT_OK(mbs_so_create(o.sys, &opt, &so, &err));
  EXPECT_EQ_INT(mbs_so_nparam(so), 1);
  double a, f, udot = 0;
  EXPECT_OK(mbs_so_solve(so, st, &udot, &a, &f, NULL, &err));
  double L;
  const double r = line_moment_arm(A1, B1, 0, &L);
  const double lopt = 0.12, lts = 0.1, h = lopt * sin(0.1);
  const double l = sqrt(h * h + (L - lts) * (L - lts)), cosa = (L - lts) / l;
  const double cap = 800 * thelen_fal(l / lopt) * cosa;
  const double need = arm_mass * G * arm_com;
  printf("holding: fiber %.4f m (l~ %.4f), capacity %.3f N, activation %.6f\n", l, l / lopt,
         cap, a);
  EXPECT_NEAR(a, need / (r * cap), 1e-12);
  EXPECT_NEAR(f, a * cap, 1e-10);
  mbs_so_free(so);

  // the capacity itself, moving: Thelen's f_V from its inverse f_V^-1 by bisection
  mbs_muscle_params mp;
  mbs_muscle_params_default(&mp, MBS_MUSCLE_THELEN2003);
  mp.max_isometric_force = 800;
  mp.optimal_fiber_length = lopt;
  mp.tendon_slack_length = lts;
  mp.pennation_angle_at_optimal = 0.1;
  static mbs_muscle_model m;
  EXPECT_OK(mbs_muscle_prepare(&m, &mp, "direct", &err));
  const double vmts[4] = {-0.8, -0.2, 0.3, 1.5};
  for (int k = 0; k < 4; k++) {
    double F;
    EXPECT_OK(mbs_muscle_inextensible_tendon_active_force(&m, L, vmts[k], 1.0, &F, &err));
    const double vn = vmts[k] * cosa / (lopt * mp.max_contraction_velocity);
    double flo = -1, fhi = 3;  // f_V^-1 increases in f_V
    for (int it = 0; it < 200; it++) {
      const double mid = 0.5 * (flo + fhi);
      if (mbs_thelen2003_fv_inverse(&mp.thelen, 1.0, mid, NULL) < vn) flo = mid;
      else fhi = mid;
    }
    const double fv = fmax(0, 0.5 * (flo + fhi));
    EXPECT_NEAR(F, 800 * thelen_fal(l / lopt) * fv * cosa, 1e-9);
  }
  // the deprecated models' generic force-velocity factor at zero speed
  mbs_muscle_params_default(&mp, MBS_MUSCLE_THELEN2003_DEPRECATED);
  mp.max_isometric_force = 800;
  mp.optimal_fiber_length = lopt;
  mp.tendon_slack_length = lts;
  EXPECT_OK(mbs_muscle_prepare(&m, &mp, "deprecated", &err));
  mbs_muscle_equilibrium eq;
  EXPECT_OK(mbs_muscle_equilibrium_solve(&m, 1.0, L, 0, 0, &eq, &err));
  double F;
  EXPECT_OK(mbs_muscle_inextensible_tendon_active_force(&m, L, 0, 1.0, &F, &err));
  EXPECT_NEAR(F, eq.tendon_force * (1.8 - 1.8 / (1 + exp(0.04 / 0.18))), 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(o.sys);
}

// ---------------------------------------------------------------------------------------------
// a two-joint arm

typedef struct two_joint {
  mbs_system* sys;
  int upper, fore;
  int nm;
  int lock;
} two_joint;

static const double up_m = 2.0, up_c = 0.15, up_i = 0.02, fo_m = 1.2, fo_c = 0.12, fo_i = 0.01;

static two_joint build_two_joint(int lock_elbow, int elbow_muscles) {
  two_joint t = {0};
  t.sys = mbs_system_create("two_joint");
  mbs_body_spec s = mbs_body_spec_default("upper", 0, MBS_MOB_PIN);
  s.mobilizer_name = "shoulder";
  s.mass = up_m;
  s.com[0] = up_c;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = up_i;
  t.upper = mbs_system_add_body(t.sys, &s);
  s = mbs_body_spec_default("fore", t.upper, MBS_MOB_PIN);
  s.mobilizer_name = "elbow";
  s.X_PF.p[0] = 0.3;
  s.mass = fo_m;
  s.com[0] = fo_c;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = fo_i;
  t.fore = mbs_system_add_body(t.sys, &s);
  const double g[3] = {0, -G, 0};
  mbs_system_add_gravity(t.sys, g);
  const double sA[3] = {0, 0.08, 0}, sB[3] = {0.12, 0.02, 0};     // shoulder flexor
  const double sA2[3] = {-0.02, 0.1, 0}, sB2[3] = {0.2, 0.015, 0};
  const double eA[3] = {0.1, -0.03, 0}, eB[3] = {-0.04, -0.01, 0}; // elbow extensor-ish
  const double eA2[3] = {0.12, 0.03, 0}, eB2[3] = {0.06, 0.015, 0};
  const double bA[3] = {0, 0.05, 0}, bB[3] = {0.05, 0.02, 0};       // biarticular
  add_muscle(t.sys, "shoulder1", 0, sA, t.upper, sB, 900, 0.1, 0.04);
  add_muscle(t.sys, "shoulder2", 0, sA2, t.upper, sB2, 500, 0.15, 0.05);
  t.nm = 2;
  if (elbow_muscles) {
    add_muscle(t.sys, "elbow1", t.upper, eA, t.fore, eB, 700, 0.1, 0.04);
    add_muscle(t.sys, "elbow2", t.upper, eA2, t.fore, eB2, 600, 0.06, 0.02);
    add_muscle(t.sys, "biarticular", 0, bA, t.fore, bB, 400, 0.22, 0.12);
    t.nm = 5;
  }
  if (lock_elbow) {
    mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_LOCKED_COORDINATE, "lock");
    c.coordinate.body = t.fore;
    c.coordinate.axis = 0;
    c.value = 0.9;
    t.lock = mbs_system_add_constraint(t.sys, &c);
    EXPECT_TRUE(t.lock >= 0);
  }
  EXPECT_OK(mbs_system_finalize(t.sys));
  return t;
}

// M u' + C - g (gravity through the mass centers' Jacobians)
static void needed_torques(mbs_system* sys, mbs_state* st, const double* udot, double* tau) {
  const int n = mbs_system_nu(sys);
  double M[4], C[2], J[6];
  EXPECT_OK(mbs_realize_velocity(sys, st));
  EXPECT_OK(mbs_calc_mass_matrix(sys, st, M));
  EXPECT_OK(mbs_calc_bias_forces(sys, st, C));
  for (int i = 0; i < n; i++) {
    tau[i] = C[i];
    for (int j = 0; j < n; j++) tau[i] += M[i * n + j] * udot[j];
  }
  const double coms[2][3] = {{up_c, 0, 0}, {fo_c, 0, 0}}, ms[2] = {up_m, fo_m};
  for (int b = 1; b <= 2; b++) {
    EXPECT_OK(mbs_calc_station_jacobian(sys, st, b, coms[b - 1], J));
    for (int i = 0; i < n; i++) tau[i] -= J[1 * n + i] * (-G) * ms[b - 1];
  }
}

// moment arms -dL/dq by central differences
static void fd_moment_arms(mbs_system* sys, const mbs_state* st, int path, double* r) {
  const int n = mbs_system_nu(sys);
  mbs_state* w = mbs_state_create(sys);
  for (int i = 0; i < n; i++) {
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

// the KKT conditions of min sum |x|^p, A x = tau, lo <= x <= hi, checked from scratch
static void check_kkt(const char* what, int n, int np, const double* A /* n x np row-major */,
                      const double* tau, const double* x, const double* lo, const double* hi,
                      double p) {
  double scale = 0;
  for (int i = 0; i < n; i++) scale = fmax(scale, fabs(tau[i]));
  for (int i = 0; i < n; i++) {
    double s = -tau[i];
    for (int j = 0; j < np; j++) s += A[i * np + j] * x[j];
    EXPECT_TRUE(fabs(s) <= 1e-8 * (1 + scale));
  }
  int nfree = 0;
  double N[4] = {0, 0, 0, 0}, rhs[2] = {0, 0};  // normal equations A_F A_F^T lambda = A_F grad_F
  double grad[8];
  for (int j = 0; j < np; j++) {
    EXPECT_TRUE(x[j] >= lo[j] - 1e-14 && x[j] <= hi[j] + 1e-14);
    grad[j] = p * pow(fabs(x[j]), p - 1) * (x[j] < 0 ? -1 : 1);
    if (x[j] <= lo[j] + 1e-10 || x[j] >= hi[j] - 1e-10) continue;
    nfree++;
    for (int a = 0; a < n; a++) {
      rhs[a] += A[a * np + j] * grad[j];
      for (int b = 0; b < n; b++) N[a * n + b] += A[a * np + j] * A[b * np + j];
    }
  }
  double lam[2] = {0, 0};
  if (n == 1) {
    lam[0] = rhs[0] / N[0];
  } else {
    const double det = N[0] * N[3] - N[1] * N[2];
    lam[0] = (N[3] * rhs[0] - N[1] * rhs[1]) / det;
    lam[1] = (N[0] * rhs[1] - N[2] * rhs[0]) / det;
  }
  double gmax = 0;
  for (int j = 0; j < np; j++) gmax = fmax(gmax, fabs(grad[j]));
  int nlower = 0, nupper = 0;
  for (int j = 0; j < np; j++) {
    double s = 0;
    for (int a = 0; a < n; a++) s += A[a * np + j] * lam[a];
    const double mu = grad[j] - s;  // bound multiplier
    if (x[j] <= lo[j] + 1e-10) {
      EXPECT_TRUE(mu >= -1e-7 * (1 + gmax));
      nlower++;
    } else if (x[j] >= hi[j] - 1e-10) {
      EXPECT_TRUE(mu <= 1e-7 * (1 + gmax));
      nupper++;
    } else {
      EXPECT_TRUE(fabs(mu) <= 1e-7 * (1 + gmax));
    }
  }
  printf("%s: %d free, %d at lower, %d at upper bounds\n", what, nfree, nlower, nupper);
}

static void test_two_joint_kkt(void) {
  two_joint t = build_two_joint(0, 1);
  mbs_system* sys = t.sys;
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 0.4;
  mbs_state_upd_q(st)[1] = 0.9;
  mbs_state_upd_u(st)[0] = 1.1;
  mbs_state_upd_u(st)[1] = -0.6;
  EXPECT_OK(mbs_realize_velocity(sys, st));
  const int np = t.nm;
  double A[2 * 5];
  // capacities (tested above) and moment arms from path lengths
  for (int j = 0; j < np; j++) {
    const int f = mbs_control_force(sys, j);
    const int path = mbs_force_path(sys, f);
    double L, V, r[2];
    EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, &V));
    fd_moment_arms(sys, st, path, r);
    mbs_muscle_params mp;
    mbs_muscle_params_default(&mp, MBS_MUSCLE_THELEN2003);
    const double F[5][3] = {{900, 0.1, 0.04}, {500, 0.15, 0.05}, {700, 0.1, 0.04},
                            {600, 0.06, 0.02}, {400, 0.22, 0.12}};
    mp.max_isometric_force = F[j][0];
    mp.optimal_fiber_length = F[j][1];
    mp.tendon_slack_length = F[j][2];
    mp.pennation_angle_at_optimal = 0.1;
    static mbs_muscle_model m;
    mbs_error err;
    EXPECT_OK(mbs_muscle_prepare(&m, &mp, "direct", &err));
    double cap;
    EXPECT_OK(mbs_muscle_inextensible_tendon_active_force(&m, L, V, 1.0, &cap, &err));
    EXPECT_TRUE(cap > 0);
    A[0 * np + j] = r[0] * cap;
    A[1 * np + j] = r[1] * cap;
  }
  const double lo[5] = {0.01, 0.01, 0.01, 0.01, 0.01};
  double hi[5] = {1, 1, 1, 1, 1};
  const double udots[4][2] = {{4.0, -6.0}, {-3.0, 12.0}, {30.0, 40.0}, {60.0, 90.0}};
  for (int p = 2; p <= 3; p++)
    for (int k = 0; k < 4; k++) {
      mbs_so_options opt;
      mbs_so_options_default(&opt);
      opt.activation_exponent = p;
      hi[0] = k == 3 ? 0.05 : 1;  // the last case with a low ceiling on one muscle
      opt.lower = lo;
      opt.upper = hi;
      mbs_so* so = NULL;
      mbs_error err;
      EXPECT_OK(mbs_so_create(sys, &opt, &so, &err));
      double x[5], tau[2];
      mbs_so_info info;
      const int rc = mbs_so_solve(so, st, udots[k], x, NULL, &info, &err);
      if (rc) printf("%s\n", err.message);
      EXPECT_OK(rc);
      needed_torques(sys, st, udots[k], tau);
      char what[64];
      snprintf(what, sizeof what, "two joints, p = %d, u' = (%g, %g)", p, udots[k][0],
               udots[k][1]);
      check_kkt(what, 2, np, A, tau, x, lo, hi, p);
      mbs_so_free(so);
    }
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_locked_elbow(void) {
  two_joint t = build_two_joint(1, 1);
  mbs_system* sys = t.sys;
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = -0.3;
  mbs_state_upd_q(st)[1] = 0.9;
  mbs_state_upd_u(st)[0] = 0.8;  // the elbow locked: u2 = 0
  EXPECT_OK(mbs_realize_velocity(sys, st));
  mbs_so_options opt;
  mbs_so_options_default(&opt);
  opt.use_muscle_physiology = 0;
  mbs_so* so = NULL;
  mbs_error err;
  EXPECT_OK(mbs_so_create(sys, &opt, &so, &err));
  // the elbow's desired acceleration is not a row: any value
  const double udot[2] = {2.5, 123.0}, udot0[2] = {2.5, 0};
  double x[5], tau[2];
  mbs_so_info info;
  EXPECT_OK(mbs_so_solve(so, st, udot, x, NULL, &info, &err));
  EXPECT_EQ_INT(info.constrained_form, 1);
  EXPECT_EQ_INT(info.nrow, 1);
  // tau_1 = M11 u1' + C1 - g1 (u2 = u2' = 0); shoulder muscles share it by c_i = r_i F_max;
  // the elbow's muscles do nothing for the shoulder (the biarticular one does)
  needed_torques(sys, st, udot0, tau);
  double c[5], s = 0;
  const double fmax[5] = {900, 500, 700, 600, 400};
  for (int j = 0; j < 5; j++) {
    double r[2];
    fd_moment_arms(sys, st, mbs_force_path(sys, mbs_control_force(sys, j)), r);
    c[j] = r[0] * fmax[j];
    if (j == 2 || j == 3) EXPECT_ABS(c[j], 0, 1e-6);
  }
  // the muscles pulling the right way share tau_1; the others stay at zero
  for (int j = 0; j < 5; j++)
    if (c[j] * tau[0] > 0) s += c[j] * c[j];
  for (int j = 0; j < 5; j++) {
    const double expect = c[j] * tau[0] > 0 ? tau[0] * c[j] / s : 0;
    EXPECT_NEAR(x[j], expect, 1e-6);
  }
  mbs_so_free(so);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_errors(void) {
  two_joint t = build_two_joint(0, 0);  // muscles at the shoulder only
  mbs_system* sys = t.sys;
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[1] = 0.5;
  mbs_so_options opt;
  mbs_so_options_default(&opt);
  mbs_so* so = NULL;
  mbs_error err;
  EXPECT_OK(mbs_so_create(sys, &opt, &so, &err));
  double x[2], udot[2] = {0.5, NAN};
  EXPECT_EQ_INT(mbs_so_solve(so, st, udot, x, NULL, NULL, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(err.message, "desired acceleration of 'elbow'") != NULL);
  printf("NaN: %s\n", err.message);
  // the elbow needs a torque against gravity, but no muscle crosses it
  udot[1] = 0;
  EXPECT_EQ_INT(mbs_so_solve(so, st, udot, x, NULL, NULL, &err), MBS_ERR_ASSEMBLY);
  EXPECT_TRUE(strstr(err.message, "no actuator drives coordinate 'elbow'") != NULL);
  printf("undriven: %s\n", err.message);
  mbs_so_free(so);
  mbs_system_destroy(sys);
  mbs_state_destroy(st);

  // more than the muscles can do: the joint named, the closest activations (the flexors full)
  one_joint o = build_one_joint(0, 1, 0);
  st = mbs_state_create(o.sys);
  mbs_state_upd_q(st)[0] = 0.3;
  opt.use_muscle_physiology = 0;
  EXPECT_OK(mbs_so_create(o.sys, &opt, &so, &err));
  double a[3], f[3], ud = 2000;
  mbs_so_info info;
  EXPECT_EQ_INT(mbs_so_solve(so, st, &ud, a, f, &info, &err), MBS_ERR_ASSEMBLY);
  EXPECT_TRUE(strstr(err.message, "coordinate 'elbow' short by") != NULL);
  EXPECT_TRUE(strstr(err.message, "flexor1") != NULL);
  printf("too weak: %s\n", err.message);
  EXPECT_NEAR(a[0], 1, 1e-6);
  EXPECT_NEAR(a[1], 1, 1e-6);
  EXPECT_ABS(a[2], 0, 1e-6);
  mbs_so_free(so);
  // bad options
  opt.activation_exponent = 1;
  EXPECT_EQ_INT(mbs_so_create(o.sys, &opt, &so, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(so == NULL && strstr(err.message, "activation_exponent") != NULL);
  mbs_so_options_default(&opt);
  double lo[3] = {0, 0.5, 0}, hi[3] = {1, 0.4, 1};
  opt.lower = lo;
  opt.upper = hi;
  EXPECT_EQ_INT(mbs_so_create(o.sys, &opt, &so, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(err.message, "flexor2") != NULL);
  mbs_state_destroy(st);
  mbs_system_destroy(o.sys);
}

static void test_no_allocation(void) {
  two_joint t = build_two_joint(1, 1);
  mbs_system* sys = t.sys;
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[1] = 0.9;
  mbs_so_options opt;
  mbs_so_options_default(&opt);
  opt.activation_exponent = 2.5;
  mbs_so* so = NULL;
  mbs_error err;
  EXPECT_OK(mbs_so_create(sys, &opt, &so, &err));
  double x[5], udot[2] = {1, 0};
  EXPECT_OK(mbs_so_solve(so, st, udot, x, NULL, NULL, &err));
  const long before = n_alloc;
  for (int k = 0; k < 10; k++) {
    udot[0] = 0.3 * k;
    EXPECT_OK(mbs_so_solve(so, st, udot, x, NULL, NULL, &err));
  }
  EXPECT_EQ_INT(n_alloc - before, 0);
  mbs_so_free(so);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  EXPECT_TRUE(mbs_test_alloc_active());  // the allocation counter sees the libraries
  test_one_joint();
  test_reserve();
  test_physiology_holding();
  test_two_joint_kkt();
  test_locked_elbow();
  test_errors();
  test_no_allocation();
  return mbs_test_finish("test_static_optimization");
}
