// Compliant contact against independent truth: Simbody's own Hunt-Crossley check
// (TestHuntCrossleyForce: sphere R = 0.8 on a half-space, k = 1 and 2, c = 0.5 and 1, Stribeck
// friction with harmonic means), Hertz equilibrium of a resting sphere, two spheres, an
// ellipsoid against Johnson's closed form for elliptical Hertz contact (and against the sphere
// when its radii are equal), a block sticking and sliding on an incline, energy conservation of
// a bouncing sphere and the restitution e = 1 - c v, the elastic foundation under uniform and
// tilted presses, reports, and parameter checks with their messages.
#include <string.h>

#include "mbs/mbs.h"
#include "mbs_test.h"

static const double g0 = 9.81;

static int contains(const char* s, const char* sub) { return s && strstr(s, sub) != NULL; }

// a half-space fixed on Ground whose solid is below the plane through the origin with normal
// (-sin th, cos th, 0) (th = 0: the floor y < 0); returns the geometry index
static int add_floor(mbs_system* sys, const char* name, double th) {
  mbs_contact_geometry_spec g = mbs_contact_geometry_spec_default(name, MBS_GEOM_HALFSPACE, 0);
  g.frame.angles[2] = th - M_PI / 2;  // the frame's x axis points into the solid
  return mbs_system_add_contact_geometry(sys, &g);
}

static int add_sphere_geom(mbs_system* sys, const char* name, int body, double r) {
  mbs_contact_geometry_spec g = mbs_contact_geometry_spec_default(name, MBS_GEOM_SPHERE, body);
  g.radius = r;
  return mbs_system_add_contact_geometry(sys, &g);
}

static mbs_contact_surface surface(int geometry, double k, double c, double us, double ud,
                                   double uv) {
  mbs_contact_surface s = {geometry, k, c, us, ud, uv};
  return s;
}

static int add_free_body(mbs_system* sys, const char* name, double m, double I) {
  mbs_body_spec s = mbs_body_spec_default(name, 0, MBS_MOB_FREE);
  s.mass = m;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = I;
  return mbs_system_add_body(sys, &s);
}

// free body b: position and linear/angular velocity
static void set_free(const mbs_system* sys, mbs_state* st, int b, const double p[3],
                     const double v[3], const double w[3]) {
  double* q = mbs_state_upd_q(st) + mbs_body_qadr(sys, b);
  double* u = mbs_state_upd_u(st) + mbs_body_uadr(sys, b);
  q[0] = 1;
  q[1] = q[2] = q[3] = 0;
  for (int k = 0; k < 3; k++) {
    q[4 + k] = p[k];
    u[k] = w ? w[k] : 0;
    u[3 + k] = v ? v[k] : 0;
  }
}

//---------------------------------- Simbody's TestHuntCrossleyForce ---------------------------

static double stribeck(double vs, double vt, double us, double ud, double uv) {
  const double r = vs / vt;
  return fmin(r, 1.0) * (ud + 2 * (us - ud) / (1 + r * r)) + uv * vs;
}

// the paper's curve, written from its description: quintic smooth steps (10 x^3 - 15 x^4 +
// 6 x^5) up to mu_s over [0, vt] and down to mu_d over [vt, 3 vt]
static double paper_stribeck(double vs, double vt, double us, double ud) {
  const double r = vs / vt;
  if (r >= 3) return ud;
  if (r >= 1) {
    const double x = (r - 1) / 2;
    return us + (ud - us) * x * x * x * (10 - 15 * x + 6 * x * x);
  }
  return us * r * r * r * (10 - 15 * r + 6 * r * r);
}

static void test_simbody_hunt_crossley(void) {
  const double R = 0.8, k1 = 1, k2 = 2, c1 = 0.5, c2 = 1.0, vt = 0.001;
  const double us1 = 1.0, us2 = 0.7, ud1 = 0.5, ud2 = 0.2, uv1 = 0.1, uv2 = 0.05;
  mbs_system* sys = mbs_system_create("hunt_crossley");
  const int ball = add_free_body(sys, "ball", 1.0, 0.4 * R * R);
  const int gs = add_sphere_geom(sys, "sphere", ball, R);
  const int gh = add_floor(sys, "floor", 0);
  EXPECT_EQ_INT(gs, 0);
  EXPECT_EQ_INT(gh, 1);
  const mbs_contact_surface surf[2] = {surface(gs, k1, c1, us1, ud1, uv1),
                                       surface(gh, k2, c2, us2, ud2, uv2)};
  const int hc = mbs_system_add_hunt_crossley(sys, surf, 2, vt);
  EXPECT_TRUE(hc >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_EQ_INT(mbs_system_ncontact_geometry(sys), 2);
  EXPECT_EQ_INT(mbs_contact_geometry_find(sys, "floor"), gh);
  EXPECT_TRUE(strcmp(mbs_contact_geometry_name(sys, gs), "sphere") == 0);
  EXPECT_TRUE(mbs_system_find_param(sys, "/contactgeometryset/sphere/radius") != NULL);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/hunt_crossley0/sphere/stiffness") != NULL);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/hunt_crossley0/transition_velocity") != NULL);

  // the test's expected values (Simbody: s_i = k_i^(2/3))
  const double s1 = pow(k1, 2.0 / 3.0), s2 = pow(k2, 2.0 / 3.0), s = s1 * s2 / (s1 + s2);
  const double c = (c1 * s2 + c2 * s1) / (s1 + s2);
  const double us = 2 * us1 * us2 / (us1 + us2), ud = 2 * ud1 * ud2 / (ud1 + ud2),
               uv = 2 * uv1 * uv2 / (uv1 + uv2);
  mbs_state* st = mbs_state_create(sys);
  const double depths[] = {-0.1, 0.0, 1e-4, 0.01, 0.1, 0.3};
  const double vns[] = {0.0, 0.2, 1.0, -0.3, -0.5, -2.0};  // approach (> 0) / separation
  const double slips[] = {0.0, 0.0002, 0.001, 0.003, 0.5};
  int nchecked = 0;
  for (size_t id = 0; id < sizeof(depths) / sizeof(*depths); id++)
    for (size_t iv = 0; iv < sizeof(vns) / sizeof(*vns); iv++)
      for (size_t is = 0; is < sizeof(slips) / sizeof(*slips); is++) {
        const double d = depths[id], vn = vns[iv], vs = slips[is];
        const double w[3] = {0, 0, is == 3 ? 2.0 : 0};  // one case of spin: slip from w x r
        const double p[3] = {0.1, R - d, -0.2}, v[3] = {vs, -vn, 0};
        set_free(sys, st, ball, p, v, w);
        EXPECT_OK(mbs_realize_dynamics(sys, st));
        const double* F = mbs_get_body_forces(sys, st) + 6 * ball;
        // expected: normal force, the contact point 0.61 d above the sphere's lowest point
        // (the softer sphere takes the share s2 / (s1 + s2) of the depth), friction against
        // the slip of that point
        double fn = 0;
        if (d > 0) fn = fmax(0.0, 4.0 / 3.0 * s * d * sqrt(R * s * d) * (1 + 1.5 * c * vn));
        const double Py = p[1] - R + s2 / (s1 + s2) * d;
        const double r[3] = {0, Py - p[1], 0};
        const double vP[3] = {v[0] - w[2] * r[1], v[1], v[2]};  // v + w x r (w along z)
        const double vslip = fabs(vP[0]);
        double f[3] = {0, fn, 0};
        if (vslip > 0) f[0] = -fn * stribeck(vslip, vt, us, ud, uv) * (vP[0] / vslip);
        const double M[3] = {r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2],
                             r[0] * f[1] - r[1] * f[0]};
        for (int k = 0; k < 3; k++) {
          EXPECT_NEAR(F[3 + k], f[k], 1e-12);
          EXPECT_NEAR(F[k], M[k], 1e-12);
        }
        mbs_contact_report rep[2];
        int n = -1;
        EXPECT_OK(mbs_get_contact_reports(sys, st, hc, rep, 2, &n));
        EXPECT_EQ_INT(n, 1);
        EXPECT_EQ_INT(rep[0].geometry1, gs);
        EXPECT_EQ_INT(rep[0].geometry2, gh);
        EXPECT_EQ_INT(rep[0].in_contact, d > 0);
        if (d > 0) {
          EXPECT_NEAR(rep[0].penetration, d, 1e-12);
          EXPECT_NEAR(rep[0].point[1], Py, 1e-12);
          EXPECT_NEAR(rep[0].point[0], p[0], 1e-12);
          EXPECT_NEAR(rep[0].normal[1], -1.0, 1e-15);
          // force on geometry 2 (the floor) is the opposite of the force on the ball
          for (int k = 0; k < 3; k++) EXPECT_NEAR(rep[0].force[k], -f[k], 1e-12);
        } else {
          EXPECT_ABS(rep[0].penetration, 0, 0);
          EXPECT_ABS(rep[0].force[1], 0, 0);
        }
        nchecked++;
      }
  EXPECT_EQ_INT(nchecked, 180);

  // potential energy (2/5) k x^(5/2) and its slope, the elastic force
  const double d = 0.05, h = 1e-6;
  double pe[2];
  for (int i = 0; i < 2; i++) {
    const double p[3] = {0, R - d - (i ? h : -h), 0};
    set_free(sys, st, ball, p, NULL, NULL);
    EXPECT_OK(mbs_realize_position(sys, st));
    EXPECT_OK(mbs_calc_potential_energy(sys, st, &pe[i]));
  }
  const double kH = 4.0 / 3.0 * s * sqrt(R * s);
  EXPECT_NEAR((pe[0] + pe[1]) / 2, 0.4 * kH * pow(d, 2.5), 1e-9);
  EXPECT_NEAR((pe[1] - pe[0]) / (2 * h), kH * pow(d, 1.5), 1e-7);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// the order of the surfaces does not matter: a half-space listed first gives the same forces
// (with dissipation and friction, at random positions, velocities and spins)
static void test_pair_order(void) {
  mbs_system* sys[2];
  int ball = 0;
  for (int order = 0; order < 2; order++) {
    sys[order] = mbs_system_create("order");
    ball = add_free_body(sys[order], "ball", 1.0, 0.1);
    const int gs = add_sphere_geom(sys[order], "sphere", ball, 0.3);
    const int gh = add_floor(sys[order], "floor", 0.3);
    const mbs_contact_surface a = surface(gs, 1e5, 0.7, 0.9, 0.6, 0.1);
    const mbs_contact_surface b = surface(gh, 3e5, 0.2, 0.5, 0.3, 0.2);
    const mbs_contact_surface surf[2] = {order ? b : a, order ? a : b};
    mbs_system_add_hunt_crossley(sys[order], surf, 2, 0.05);
    EXPECT_OK(mbs_system_finalize(sys[order]));
  }
  mbs_state* st[2] = {mbs_state_create(sys[0]), mbs_state_create(sys[1])};
  mbs_test_rng rng = {12345};
  for (int trial = 0; trial < 50; trial++) {
    double p[3], v[3], w[3];
    for (int k = 0; k < 3; k++) {
      p[k] = mbs_test_uniform(&rng, -0.5, 0.5);
      v[k] = mbs_test_uniform(&rng, -1, 1);
      w[k] = mbs_test_uniform(&rng, -3, 3);
    }
    p[1] = p[0] * tan(0.3) + 0.3 - mbs_test_uniform(&rng, 0, 0.03) / cos(0.3);  // overlapping
    for (int order = 0; order < 2; order++) {
      set_free(sys[order], st[order], ball, p, v, w);
      EXPECT_OK(mbs_realize_dynamics(sys[order], st[order]));
    }
    const double* F0 = mbs_get_body_forces(sys[0], st[0]) + 6 * ball;
    const double* F1 = mbs_get_body_forces(sys[1], st[1]) + 6 * ball;
    EXPECT_TRUE(fabs(F0[4]) > 0);
    for (int k = 0; k < 6; k++) EXPECT_NEAR(F1[k], F0[k], 1e-12);
  }
  for (int order = 0; order < 2; order++) {
    mbs_state_destroy(st[order]);
    mbs_system_destroy(sys[order]);
  }
}

//---------------------------------- Hertz equilibrium -----------------------------------------

static int record_nothing(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys, (void)st, (void)user;
  return 0;
}

static void test_hertz_equilibrium(void) {
  const double m = 2.0, R = 0.1, E = 1e6, c = 5.0;
  mbs_system* sys = mbs_system_create("resting");
  const int ball = add_free_body(sys, "ball", m, 0.4 * m * R * R);
  mbs_system_add_gravity(sys, (double[3]){0, -g0, 0});
  const int gs = add_sphere_geom(sys, "ball", ball, R);
  const int gh = add_floor(sys, "floor", 0);
  const mbs_contact_surface surf[2] = {surface(gs, E, c, 0.8, 0.6, 0), surface(gh, E, c, 0.8, 0.6, 0)};
  const int hc = mbs_system_add_hunt_crossley(sys, surf, 2, 1e-3);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  const double Es = E / pow(2.0, 1.5);  // equal moduli: E* = E / 2^(3/2)
  const double x_eq = pow(m * g0 / (4.0 / 3.0 * sqrt(R) * Es), 2.0 / 3.0);
  set_free(sys, st, ball, (double[3]){0, R + 0.002, 0}, NULL, NULL);
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-7;
  o.report_interval = 0.1;
  mbs_simulation_result res;
  EXPECT_OK(mbs_simulate(sys, st, 1.5, &o, NULL, 0, record_nothing, NULL, &res));
  const double x = R - mbs_state_q(st)[5];
  printf("  Hertz equilibrium: x = %.9g m, closed form %.9g m (rel. %.2g)\n", x, x_eq,
         fabs(x / x_eq - 1));
  EXPECT_NEAR(x / x_eq, 1.0, 1e-5);
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  mbs_contact_report rep;
  int n;
  EXPECT_OK(mbs_get_contact_reports(sys, st, hc, &rep, 1, &n));
  EXPECT_NEAR(-rep.force[1], m * g0, 1e-4);  // the floor carries the weight
  EXPECT_NEAR(rep.penetration, x, 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- two spheres -----------------------------------------------

static void test_sphere_sphere(void) {
  const double r1 = 0.3, r2 = 0.5, E = 2e5, c = 0.3;
  for (int order = 0; order < 2; order++) {
    mbs_system* sys = mbs_system_create("spheres");
    const int a = add_free_body(sys, "a", 1, 0.1), b = add_free_body(sys, "b", 2, 0.2);
    const int ga = add_sphere_geom(sys, "A", a, r1), gb = add_sphere_geom(sys, "B", b, r2);
    const mbs_contact_surface sa = surface(ga, E, c, 0, 0, 0), sb = surface(gb, E, c, 0, 0, 0);
    const mbs_contact_surface surf[2] = {order ? sb : sa, order ? sa : sb};
    const int hc = mbs_system_add_hunt_crossley(sys, surf, 2, 0.01);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    const double dir[3] = {0.48, 0.6, -0.64};  // unit, from a's center to b's
    const double x = 0.02, L = r1 + r2 - x, vrel = 0.7;  // b approaches a at vrel
    const double pa[3] = {0.1, -0.2, 0.3};
    double pb[3], vb[3];
    for (int k = 0; k < 3; k++) {
      pb[k] = pa[k] + L * dir[k];
      vb[k] = -vrel * dir[k];
    }
    set_free(sys, st, a, pa, NULL, NULL);
    set_free(sys, st, b, pb, vb, NULL);
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    const double* F = mbs_get_body_forces(sys, st);
    const double Rr = r1 * r2 / (r1 + r2), Es = E / pow(2.0, 1.5);
    const double fn = 4.0 / 3.0 * sqrt(Rr) * Es * pow(x, 1.5) * (1 + 1.5 * c * vrel);
    for (int k = 0; k < 3; k++) {
      EXPECT_NEAR(F[6 * b + 3 + k], fn * dir[k], 1e-12);
      EXPECT_NEAR(F[6 * a + 3 + k], -fn * dir[k], 1e-12);
      // equal materials: the point is midway between the surfaces, on the line of centers, so
      // no moment about either center
      EXPECT_ABS(F[6 * a + k], 0, 1e-12);
      EXPECT_ABS(F[6 * b + k], 0, 1e-12);
    }
    mbs_contact_report rep;
    int n;
    EXPECT_OK(mbs_get_contact_reports(sys, st, hc, &rep, 1, &n));
    const double sgn = order ? -1 : 1;  // geometry 1 is the first surface listed
    for (int k = 0; k < 3; k++) {
      EXPECT_NEAR(rep.point[k], pa[k] + (r1 - x / 2) * dir[k], 1e-12);
      EXPECT_NEAR(rep.normal[k], sgn * dir[k], 1e-12);
      EXPECT_NEAR(rep.force[k], sgn * fn * dir[k], 1e-12);
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
}

//---------------------------------- ellipsoids ------------------------------------------------

// complete elliptic integrals by composite Simpson quadrature (independent of the library's AGM)
static void simpson_KE(double m, double* K, double* E) {
  const int n = 20000;
  const double h = (M_PI / 2) / n;
  double sk = 0, se = 0;
  for (int i = 0; i <= n; i++) {
    const double s = sin(i * h), w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    const double q = sqrt(1 - m * s * s);
    sk += w / q;
    se += w * q;
  }
  *K = sk * h / 3;
  *E = se * h / 3;
}

// Johnson, Contact Mechanics §4.2 (Hertz, elliptical contact): for the contact ellipse's axis
// ratio k = a/b, the relative semi-curvature A (along a) and the approach delta, the load is
// P = (2/3) pi a delta E* / K(e) with a^2 = delta (K - E) / (K e^2 A); the curvature ratio is
// B/A = (k^2 E - K) / (K - E)
static double johnson_load(double k, double A, double delta, double Es, double* ratio) {
  const double m = 1 - 1 / (k * k);
  double K, E;
  simpson_KE(m, &K, &E);
  *ratio = (k * k * E - K) / (K - E);
  const double a = sqrt(delta * (K - E) / (K * m * A));
  return 2.0 / 3.0 * M_PI * a * delta * Es / K;
}

static void test_ellipsoid(void) {
  const double E = 3e5;
  const double Es = E / pow(2.0, 1.5);
  // (1) an ellipsoid with equal radii is the sphere
  {
    mbs_system* sys = mbs_system_create("ellipsoid_sphere");
    const int b1 = add_free_body(sys, "s", 1, 0.1), b2 = add_free_body(sys, "e", 1, 0.1);
    const int gs = add_sphere_geom(sys, "sphere", b1, 0.25);
    mbs_contact_geometry_spec ge = mbs_contact_geometry_spec_default("ell", MBS_GEOM_ELLIPSOID, b2);
    ge.radii[0] = ge.radii[1] = ge.radii[2] = 0.25;
    ge.frame.angles[0] = 0.3;  // any orientation
    ge.frame.angles[1] = -1.1;
    const int gel = mbs_system_add_contact_geometry(sys, &ge);
    const int gh = add_floor(sys, "floor", 0.2);
    const mbs_contact_surface s1[2] = {surface(gs, E, 0.4, 0.9, 0.5, 0.1), surface(gh, 2 * E, 0.2, 0.9, 0.5, 0.1)};
    const mbs_contact_surface s2[2] = {surface(gel, E, 0.4, 0.9, 0.5, 0.1), surface(gh, 2 * E, 0.2, 0.9, 0.5, 0.1)};
    const int f1 = mbs_system_add_hunt_crossley(sys, s1, 2, 0.01);
    const int f2 = mbs_system_add_hunt_crossley(sys, s2, 2, 0.01);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    const double p[3] = {0.3, 0.2, 0.1}, v[3] = {0.2, -0.3, 0.1}, w[3] = {1, 2, -1};
    set_free(sys, st, b1, p, v, w);
    set_free(sys, st, b2, p, v, w);
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    mbs_contact_report r1, r2;
    int n;
    EXPECT_OK(mbs_get_contact_reports(sys, st, f1, &r1, 1, &n));
    EXPECT_OK(mbs_get_contact_reports(sys, st, f2, &r2, 1, &n));
    EXPECT_EQ_INT(r1.in_contact, 1);
    EXPECT_NEAR(r2.penetration, r1.penetration, 1e-14);
    for (int k = 0; k < 3; k++) {
      EXPECT_NEAR(r2.point[k], r1.point[k], 1e-14);
      EXPECT_NEAR(r2.force[k], r1.force[k], 1e-12);
    }
    const double* F = mbs_get_body_forces(sys, st);
    for (int k = 0; k < 6; k++) EXPECT_NEAR(F[6 * b2 + k], F[6 * b1 + k], 1e-12);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
  // (2) an ellipsoid resting on its pole: Johnson's closed form. Radii (ax, ay, c): the
  // curvatures at the pole are c/ax^2 and c/ay^2, so B/A = ax^2/ay^2; solve eq. (29) for k
  // by bisection here, then compare the load.
  {
    const double ay = 0.1, c = 0.15, delta = 1e-3;
    const double ks[] = {1.0, 1.3, 2.0, 4.0};
    for (size_t i = 0; i < sizeof(ks) / sizeof(*ks); i++) {
      double ratio = 1, P;
      if (ks[i] == 1.0) {  // sphere-like pole: R = ay^2 / c
        P = 4.0 / 3.0 * sqrt(ay * ay / c) * Es * pow(delta, 1.5);
      } else {
        (void)johnson_load(ks[i], 1, 1, 1, &ratio);
      }
      const double ax = ay * sqrt(ratio);
      const double A = c / (2 * ax * ax);
      if (ks[i] != 1.0) P = johnson_load(ks[i], A, delta, Es, &ratio);
      mbs_system* sys = mbs_system_create("ellipsoid");
      const int b = add_free_body(sys, "e", 1, 0.1);
      mbs_contact_geometry_spec ge = mbs_contact_geometry_spec_default("ell", MBS_GEOM_ELLIPSOID, b);
      ge.radii[0] = ax;
      ge.radii[1] = c;  // the body's y axis is the pole's normal
      ge.radii[2] = ay;
      const int gel = mbs_system_add_contact_geometry(sys, &ge);
      const int gh = add_floor(sys, "floor", 0);
      const mbs_contact_surface s[2] = {surface(gel, E, 0, 0, 0, 0), surface(gh, E, 0, 0, 0, 0)};
      mbs_system_add_hunt_crossley(sys, s, 2, 0.01);
      EXPECT_OK(mbs_system_finalize(sys));
      mbs_state* st = mbs_state_create(sys);
      set_free(sys, st, b, (double[3]){0, c - delta, 0}, NULL, NULL);
      EXPECT_OK(mbs_realize_dynamics(sys, st));
      const double fy = mbs_get_body_forces(sys, st)[6 * b + 4];
      printf("  ellipsoid k = %.1f: B/A = %.6f, load %.9g N, Johnson %.9g N\n", ks[i], ratio, fy,
             P);
      EXPECT_NEAR(fy / P, 1.0, 2e-8);
      mbs_state_destroy(st);
      mbs_system_destroy(sys);
    }
  }
  // (3) any orientation: the depth is the deepest surface point (sampled), and the force uses
  // the principal curvatures from the ellipsoid's Gaussian and mean curvature there
  {
    const double rad[3] = {0.3, 0.12, 0.2};
    mbs_system* sys = mbs_system_create("ellipsoid_tilted");
    const int b = add_free_body(sys, "e", 1, 0.1);
    mbs_contact_geometry_spec ge = mbs_contact_geometry_spec_default("ell", MBS_GEOM_ELLIPSOID, b);
    memcpy(ge.radii, rad, sizeof(rad));
    ge.frame.angles[0] = 0.4;
    ge.frame.angles[1] = 0.7;
    ge.frame.angles[2] = -0.2;
    const int gel = mbs_system_add_contact_geometry(sys, &ge);
    const int gh = add_floor(sys, "floor", 0);
    const mbs_contact_surface s[2] = {surface(gh, E, 0, 0, 0, 0), surface(gel, E, 0, 0, 0, 0)};
    const int hc = mbs_system_add_hunt_crossley(sys, s, 2, 0.01);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    set_free(sys, st, b, (double[3]){0.05, 0.125, -0.02}, NULL, NULL);
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    // sample the surface for the lowest point, in Ground
    double R_GE[9];
    double Rb[9], pb[3];
    mbs_get_body_transform(sys, st, b, Rb, pb);
    mbs_rot_body_xyz(R_GE, ge.frame.angles);
    // a coarse grid in (theta, phi), then grids shrinking around the best point
    double best_th = 0, best_ph = 0, ymin = 1e9, pmin[3] = {0, 0, 0};
    double span_th = M_PI, span_ph = 2 * M_PI, c_th = M_PI / 2, c_ph = M_PI;
    for (int pass = 0; pass < 12; pass++) {
      const int ng = 60;
      for (int i = 0; i <= ng; i++)
        for (int j = 0; j <= ng; j++) {
          const double th = c_th + span_th * ((double)i / ng - 0.5);
          const double ph = c_ph + span_ph * ((double)j / ng - 0.5);
          const double e[3] = {rad[0] * sin(th) * cos(ph), rad[1] * sin(th) * sin(ph),
                               rad[2] * cos(th)};
          double y = pb[1];
          for (int k = 0; k < 3; k++) y += R_GE[3 + k] * e[k];  // body frame = Ground rotation
          if (y < ymin) {
            ymin = y;
            best_th = th;
            best_ph = ph;
            for (int l = 0; l < 3; l++) {
              pmin[l] = 0;
              for (int k = 0; k < 3; k++) pmin[l] += R_GE[3 * l + k] * e[k];
            }
          }
        }
      c_th = best_th;
      c_ph = best_ph;
      span_th *= 0.2;
      span_ph *= 0.2;
    }
    mbs_contact_report rep;
    int n;
    EXPECT_OK(mbs_get_contact_reports(sys, st, hc, &rep, 1, &n));
    EXPECT_NEAR(rep.penetration, -ymin, 1e-12);
    // principal curvatures at the support point (in E): x = point, hq^2 = sum x_i^2 / r_i^4;
    // Gaussian curvature 1 / (abc)^2 / hq^4, mean (a^2+b^2+c^2 - |x|^2) / (2 (abc)^2 hq^3)
    double d[3];  // the direction into the floor (-y of Ground) in E
    for (int k = 0; k < 3; k++) d[k] = -R_GE[3 + k];
    double h2 = 0;
    for (int k = 0; k < 3; k++) h2 += rad[k] * rad[k] * d[k] * d[k];
    double x[3], hq2 = 0, xx = 0, rr = 0;
    for (int k = 0; k < 3; k++) {
      x[k] = rad[k] * rad[k] * d[k] / sqrt(h2);
      hq2 += x[k] * x[k] / pow(rad[k], 4);
      xx += x[k] * x[k];
      rr += rad[k] * rad[k];
    }
    const double abc2 = pow(rad[0] * rad[1] * rad[2], 2);
    const double KG = 1 / (abc2 * hq2 * hq2), H = (rr - xx) / (2 * abc2 * pow(hq2, 1.5));
    const double kmax = H + sqrt(H * H - KG), kmin = H - sqrt(H * H - KG);
    // the contact ellipse for B/A = kmax/kmin, by bisection on k with quadrature integrals
    double lo = 1, hi = 50, ratio = 0;
    for (int it = 0; it < 60; it++) {
      const double mid = 0.5 * (lo + hi);
      (void)johnson_load(mid, 1, 1, 1, &ratio);
      if (ratio < kmax / kmin) lo = mid; else hi = mid;
    }
    const double delta = rep.penetration;
    const double P = johnson_load(0.5 * (lo + hi), kmin / 2, delta, Es, &ratio);
    printf("  tilted ellipsoid: curvatures %.6g, %.6g; load %.9g N, Johnson %.9g N\n", kmin, kmax,
           rep.force[1], P);
    EXPECT_NEAR(rep.force[1] / P, 1.0, 1e-7);
    // the point: the lowest point moved up by the ellipsoid's share (1/2) of the depth
    EXPECT_NEAR(rep.point[0], pb[0] + pmin[0], 1e-6);
    EXPECT_NEAR(rep.point[2], pb[2] + pmin[2], 1e-6);
    EXPECT_NEAR(rep.point[1], -0.5 * delta, 1e-12);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
}

//---------------------------------- block on an incline --------------------------------------

typedef struct incline_log {
  int b;
  double dir[3];   // down the incline
  double t[2], v[2];
} incline_log;

static double downhill_speed(const mbs_system* sys, const mbs_state* st, const incline_log* L) {
  const double* u = mbs_state_u(st) + mbs_body_uadr(sys, L->b);
  return u[3] * L->dir[0] + u[4] * L->dir[1] + u[5] * L->dir[2];
}

static void block_on_incline(double th_deg, double us, double ud, int model, double* v_end,
                             double* a_meas, double* creep_expected) {
  const double th = th_deg * M_PI / 180, m = 1.0, hx = 0.1, hz = 0.08, hy = 0.03, r = 0.02;
  const double E = 1e7, vt = 1e-3;
  mbs_system* sys = mbs_system_create("incline");
  mbs_body_spec s = mbs_body_spec_default("block", 0, MBS_MOB_FREE);
  s.mass = m;
  s.inertia[0] = m * (hy * hy + hz * hz) / 3;
  s.inertia[1] = m * (hx * hx + hz * hz) / 3;
  s.inertia[2] = m * (hx * hx + hy * hy) / 3;
  const int b = mbs_system_add_body(sys, &s);
  mbs_system_add_gravity(sys, (double[3]){0, -g0, 0});
  const int gh = add_floor(sys, "incline", th);
  mbs_contact_surface surf[5];
  surf[0] = surface(gh, E, 20.0, us, ud, 0);
  const char* names[4] = {"c1", "c2", "c3", "c4"};
  for (int i = 0; i < 4; i++) {
    mbs_contact_geometry_spec g = mbs_contact_geometry_spec_default(names[i], MBS_GEOM_SPHERE, b);
    g.radius = r;
    g.frame.p[0] = (i & 1) ? hx : -hx;
    g.frame.p[1] = -hy;
    g.frame.p[2] = (i & 2) ? hz : -hz;
    surf[1 + i] = surface(mbs_system_add_contact_geometry(sys, &g), E, 20.0, us, ud, 0);
  }
  const int hc = mbs_system_add_hunt_crossley(sys, surf, 5, vt);
  EXPECT_TRUE(hc >= 0);
  if (model != MBS_FRICTION_HOLLARS)
    EXPECT_OK(mbs_system_set_contact_friction_model(sys, hc, (mbs_friction_model)model));
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  // rotated by th about z, resting on the incline
  const double n[3] = {-sin(th), cos(th), 0};
  double* q = mbs_state_upd_q(st);
  q[0] = cos(th / 2);
  q[3] = sin(th / 2);
  // each corner pressed to its share of the weight, so that the block starts at rest in
  // equilibrium (a drop would start it sliding, and above vt the friction is only mu_d)
  const double x_eq = pow(m * g0 * cos(th) / 4 / (4.0 / 3.0 * sqrt(r) * E / pow(2, 1.5)), 2.0 / 3.0);
  for (int k = 0; k < 3; k++) q[4 + k] = (hy + r - x_eq) * n[k];
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-6;
  incline_log L = {b, {-cos(th), -sin(th), 0}, {0, 0}, {0, 0}};
  EXPECT_OK(mbs_simulate(sys, st, 0.4, &o, NULL, 0, NULL, NULL, NULL));
  L.t[0] = mbs_state_time(st);
  L.v[0] = downhill_speed(sys, st, &L);
  EXPECT_OK(mbs_simulate(sys, st, 0.8, &o, NULL, 0, NULL, NULL, NULL));
  L.t[1] = mbs_state_time(st);
  L.v[1] = downhill_speed(sys, st, &L);
  *v_end = L.v[1];
  *a_meas = (L.v[1] - L.v[0]) / (L.t[1] - L.t[0]);
  // creep where mu(v) = tan th on the rising branch v < vt, by bisection
  double lo = 0, hi = vt;
  for (int it = 0; it < 100; it++) {
    const double mid = 0.5 * (lo + hi);
    const double mu = model == MBS_FRICTION_STRIBECK ? paper_stribeck(mid, vt, us, ud)
                                                     : stribeck(mid, vt, us, ud, 0);
    if (mu < tan(th)) lo = mid; else hi = mid;
  }
  *creep_expected = tan(th) < us ? lo : NAN;
  // all four corners carry the block
  mbs_contact_report rep[4];
  int nrep;
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_OK(mbs_get_contact_reports(sys, st, hc, rep, 4, &nrep));
  EXPECT_EQ_INT(nrep, 4);
  double fn = 0;
  for (int i = 0; i < 4; i++) {
    EXPECT_EQ_INT(rep[i].in_contact, 1);
    fn += rep[i].force[0] * n[0] + rep[i].force[1] * n[1];
  }
  EXPECT_NEAR(fn, m * g0 * cos(th), 1e-4);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_incline(void) {
  const double us = 0.6, ud = 0.4;  // arctan(0.6) = 30.96 degrees
  for (int model = 0; model < 2; model++) {
    const char* mname = model == MBS_FRICTION_STRIBECK ? "paper's Stribeck spline" : "Hollars";
    double v, a, creep;
    block_on_incline(25, us, ud, model, &v, &a, &creep);
    printf("  incline 25 deg (%s): creep %.6g m/s (expected %.6g), acceleration %.3g m/s^2\n",
           mname, v, creep, a);
    EXPECT_TRUE(fabs(v) < 1e-3);            // below the transition velocity: it sticks
    EXPECT_NEAR(v / creep, 1.0, 1e-3);
    EXPECT_ABS(a, 0, 1e-3);
    block_on_incline(35, us, ud, model, &v, &a, &creep);
    const double th = 35 * M_PI / 180, a_exp = g0 * (sin(th) - ud * cos(th));
    printf("  incline 35 deg (%s): slides at %.4g m/s with a = %.9g m/s^2 (g(sin - mu_d cos) = "
           "%.9g)\n", mname, v, a, a_exp);
    EXPECT_TRUE(v > 0.5);
    EXPECT_NEAR(a / a_exp, 1.0, 1e-5);
  }
}

// The paper's Stribeck curve (§5.1, Fig. 5): 0 at rest, mu_s at vt, mu_d from 3 vt on, and C2:
// one-sided first and second differences agree at the joints vt and 3 vt and at 0
static void test_stribeck_spline(void) {
  const double us = 0.9, ud = 0.5, uv = 0.3, vt = 0.01;
  const mbs_friction_model S = MBS_FRICTION_STRIBECK;
  EXPECT_NEAR(mbs_contact_friction_coefficient(S, us, ud, uv, vt, 0), 0, 0);
  EXPECT_NEAR(mbs_contact_friction_coefficient(S, us, ud, uv, vt, vt), us + uv * vt, 1e-15);
  EXPECT_NEAR(mbs_contact_friction_coefficient(S, us, ud, uv, vt, 3 * vt), ud + uv * 3 * vt,
              1e-15);
  EXPECT_NEAR(mbs_contact_friction_coefficient(S, us, ud, uv, vt, 10 * vt), ud + uv * 10 * vt,
              1e-15);
  double worst1 = 0, worst2 = 0;
  const double knots[3] = {1e-9, vt, 3 * vt};
  for (int k = 0; k < 3; k++) {
    const double v = knots[k], h = 1e-5 * vt;
    double f[5];
    for (int i = 0; i < 5; i++)
      f[i] = mbs_contact_friction_coefficient(S, us, ud, uv, vt, v + (i - 2) * h);
    const double d1l = (f[2] - f[1]) / h, d1r = (f[3] - f[2]) / h;
    const double d2l = (f[2] - 2 * f[1] + f[0]) / (h * h), d2r = (f[4] - 2 * f[3] + f[2]) / (h * h);
    // scales: slopes of order (us - ud)/vt, curvatures of order (us - ud)/vt^2
    worst1 = fmax(worst1, fabs(d1l - d1r) / ((us - ud) / vt));
    worst2 = fmax(worst2, fabs(d2l - d2r) / ((us - ud) / (vt * vt)));
  }
  printf("  Stribeck spline: jumps at 0, vt, 3 vt: slope %.2e, curvature %.2e (relative)\n",
         worst1, worst2);
  EXPECT_TRUE(worst1 < 1e-4);
  EXPECT_TRUE(worst2 < 1e-2);  // one-sided differences: O(h / vt) truncation; a kink gives O(1)
  // the other law has its kink at vt
  const mbs_friction_model H = MBS_FRICTION_HOLLARS;
  const double h = 1e-6 * vt;
  const double kink = (mbs_contact_friction_coefficient(H, us, ud, 0, vt, vt + h) -
                       mbs_contact_friction_coefficient(H, us, ud, 0, vt, vt)) / h -
                      (mbs_contact_friction_coefficient(H, us, ud, 0, vt, vt) -
                       mbs_contact_friction_coefficient(H, us, ud, 0, vt, vt - h)) / h;
  EXPECT_TRUE(fabs(kink) > 0.1 * us / vt);
}

//---------------------------------- energy and restitution ------------------------------------

typedef struct bounce_log {
  double E0, max_dev;
} bounce_log;

static int bounce_report(const mbs_system* sys, mbs_state* st, void* user) {
  bounce_log* L = user;
  double ke, pe;
  mbs_realize_position(sys, st);
  mbs_calc_kinetic_energy(sys, st, &ke);
  mbs_calc_potential_energy(sys, st, &pe);
  const double E = ke + pe;
  if (isnan(L->E0)) L->E0 = E;
  if (fabs(E - L->E0) > L->max_dev) L->max_dev = fabs(E - L->E0);
  return 0;
}

static double sphere_gap(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  return mbs_state_q(st)[5] - *(const double*)user;
}
static double sphere_vy(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys, (void)user;
  return mbs_state_u(st)[4];
}
static mbs_event_action continue_run(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys, (void)st, (void)user;
  return MBS_EVENT_CONTINUE;
}

// A sphere dropped from h0 onto the floor, up to the apex after the bounce; energy at every
// step, and the restitution e = sqrt(rebound / drop height)
static void bouncing_sphere(double c, double h0, int touch_event, double* e_meas,
                            double* rel_dev, double* vin) {
  const double m = 0.5, R = 0.05, E = 1e6;
  mbs_system* sys = mbs_system_create("bounce");
  const int ball = add_free_body(sys, "ball", m, 0.4 * m * R * R);
  mbs_system_add_gravity(sys, (double[3]){0, -g0, 0});
  const int gs = add_sphere_geom(sys, "ball", ball, R);
  const int gh = add_floor(sys, "floor", 0);
  // the same dissipation on both (c* = c); the floor is 1000 times stiffer
  const mbs_contact_surface surf[2] = {surface(gs, E, c, 0, 0, 0),
                                       surface(gh, 1000 * E, c, 0, 0, 0)};
  mbs_system_add_hunt_crossley(sys, surf, 2, 0.01);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  set_free(sys, st, ball, (double[3]){0, R + h0, 0}, NULL, NULL);
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-6;
  o.report_interval = 0;  // every step
  bounce_log L = {NAN, 0};
  // Contact begins and ends where the penetration crosses zero, and there the force has a
  // kink of order x^(3/2) that an embedded error estimate does not see inside a step: without
  // the touch event the energy jumps by ~40 alpha |E| in the step that leaves contact. The
  // event ends a step exactly there. The apex event ends the run at the top of the rebound.
  const double radius = R;
  const mbs_event ev[2] = {
      {"apex", sphere_vy, MBS_STAGE_VELOCITY, -1, NULL, NULL},
      {"touch", sphere_gap, MBS_STAGE_POSITION, 0, continue_run, (void*)&radius}};
  mbs_simulation_result res;
  EXPECT_OK(mbs_simulate(sys, st, 2.0, &o, ev, touch_event ? 2 : 1, bounce_report, &L, &res));
  EXPECT_EQ_INT(res.event, 0);
  *rel_dev = L.max_dev / fabs(L.E0);
  *e_meas = sqrt((mbs_state_q(st)[5] - R) / h0);
  *vin = sqrt(2 * g0 * h0);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_energy_and_restitution(void) {
  double e, dev, vin;
  bouncing_sphere(0, 0.2, 0, &e, &dev, &vin);
  printf("  bouncing sphere, no dissipation, no touch event: |dE|/|E| = %.3g, e = %.9f\n", dev,
         e);
  bouncing_sphere(0, 0.2, 1, &e, &dev, &vin);
  printf("  bouncing sphere, no dissipation: |dE|/|E| = %.3g (bound 10 alpha = 1e-5), "
         "e = %.9f\n", dev, e);
  EXPECT_TRUE(dev <= 10 * 1e-6);
  EXPECT_NEAR(e, 1.0, 1e-5);
  EXPECT_TRUE(dev > 0);
  const double c = 0.02;
  bouncing_sphere(c, 0.2, 1, &e, &dev, &vin);
  // Hunt and Crossley: e = 1 - c v for small c v (paper §5.1); here c v = 0.04
  printf("  bouncing sphere, c = %g s/m, v = %.4g m/s: 1 - e = %.5g, c v = %.5g\n", c, vin, 1 - e,
         c * vin);
  EXPECT_TRUE(e < 1);
  EXPECT_NEAR((1 - e) / (c * vin), 1.0, 0.05);
}

//---------------------------------- elastic foundation ----------------------------------------

// a flat square of side L in the x-z plane of its frame, N x N cells of 2 triangles, normals -y
static void square_mesh(int N, double L, double* v, int* t) {
  for (int i = 0; i <= N; i++)
    for (int j = 0; j <= N; j++) {
      double* p = v + 3 * (i * (N + 1) + j);
      p[0] = -L / 2 + L * i / N;
      p[1] = 0;
      p[2] = -L / 2 + L * j / N;
    }
  int k = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      const int a = i * (N + 1) + j, b = a + N + 1, c = b + 1, d = a + 1;
      // counterclockwise seen from below (-y): a, b, c and a, c, d
      t[k++] = a, t[k++] = b, t[k++] = c;
      t[k++] = a, t[k++] = c, t[k++] = d;
    }
}

static void test_elastic_foundation(void) {
  enum { N = 12 };
  const double L = 0.2, k = 2e7, x0 = 0.003;
  double v[3 * (N + 1) * (N + 1)];
  int t[6 * N * N];
  square_mesh(N, L, v, t);
  for (int variant = 0; variant < 2; variant++) {  // rigid floor; floor as stiff as the mesh
    mbs_system* sys = mbs_system_create("efm");
    const int b = add_free_body(sys, "foot", 1, 0.01);
    mbs_contact_geometry_spec gm = mbs_contact_geometry_spec_default("sole", MBS_GEOM_MESH, b);
    gm.vertices = v;
    gm.nvertex = (N + 1) * (N + 1);
    gm.triangles = t;
    gm.ntriangle = 2 * N * N;
    const int gsole = mbs_system_add_contact_geometry(sys, &gm);
    EXPECT_TRUE(gsole >= 0);
    const int gh = add_floor(sys, "floor", 0);
    const mbs_contact_surface surf[2] = {surface(gsole, k, 0, 0, 0, 0),
                                         surface(gh, variant ? k : 0, 0, 0, 0, 0)};
    const int ef = mbs_system_add_elastic_foundation(sys, surf, 2, 0.01);
    EXPECT_TRUE(ef >= 0);
    EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/elastic_foundation0/sole/stiffness") != NULL);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    const double keff = variant ? k / 2 : k, s = variant ? 0.5 : 1.0;
    // uniform press: total k A x, at the centroid
    const double c[3] = {0.03, -x0, -0.02};
    set_free(sys, st, b, c, NULL, NULL);
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    const double* F = mbs_get_body_forces(sys, st) + 6 * b;
    EXPECT_NEAR(F[4], keff * L * L * x0, 1e-10);
    EXPECT_ABS(F[3], 0, 1e-12);
    EXPECT_ABS(F[5], 0, 1e-12);
    for (int i = 0; i < 3; i++) EXPECT_ABS(F[i], 0, 1e-10);  // no moment about the center
    mbs_contact_report rep;
    int n;
    EXPECT_OK(mbs_get_contact_reports(sys, st, ef, &rep, 1, &n));
    EXPECT_EQ_INT(n, 1);
    EXPECT_EQ_INT(rep.geometry1, gsole);
    EXPECT_EQ_INT(rep.in_contact, 1);
    EXPECT_NEAR(rep.penetration, x0, 1e-15);
    EXPECT_NEAR(rep.force[1], -keff * L * L * x0, 1e-10);
    EXPECT_NEAR(rep.point[0], c[0], 1e-12);
    EXPECT_NEAR(rep.point[1], -(1 - s) * x0, 1e-12);  // the mesh takes the share s of the depth
    EXPECT_NEAR(rep.point[2], c[2], 1e-12);
    EXPECT_NEAR(rep.normal[1], -1, 1e-15);
    double pe;
    EXPECT_OK(mbs_calc_potential_energy(sys, st, &pe));
    EXPECT_NEAR(pe, 0.5 * keff * L * L * x0 * x0, 1e-12);
    // tilted press: rotated by al about z; depth x0 - xi sin(al) at a face centroid (xi, zeta)
    const double al = 0.01;
    double* q = mbs_state_upd_q(st) + mbs_body_qadr(sys, b);
    q[0] = cos(al / 2);
    q[3] = sin(al / 2);
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    F = mbs_get_body_forces(sys, st) + 6 * b;
    double fsum = 0, Mz = 0, Mx = 0, cop_x = 0;
    for (int f = 0; f < 2 * N * N; f++) {
      const double* A = v + 3 * t[3 * f];
      const double* B = v + 3 * t[3 * f + 1];
      const double* C = v + 3 * t[3 * f + 2];
      const double xi = (A[0] + B[0] + C[0]) / 3, ze = (A[2] + B[2] + C[2]) / 3;
      const double area = 0.5 * fabs((B[0] - A[0]) * (C[2] - A[2]) - (B[2] - A[2]) * (C[0] - A[0]));
      const double depth = x0 - xi * sin(al);
      const double fi = keff * area * depth;
      // the spring acts at the centroid moved up by s * depth: r = (xi cos, xi sin + s depth, ze)
      const double ry = xi * sin(al) + s * depth;
      fsum += fi;
      Mz += xi * cos(al) * fi;
      Mx += -ze * fi;
      (void)ry;
      cop_x += fi * (c[0] + xi * cos(al));
    }
    EXPECT_NEAR(F[4], fsum, 1e-10);
    EXPECT_NEAR(fsum, keff * L * L * x0, 1e-10);  // linear depth field: the centroid rule is exact
    EXPECT_NEAR(F[2], Mz, 1e-12);
    EXPECT_NEAR(F[0], Mx, 1e-12);
    // continuum: Mz = -k cos sin * L^4 / 12 (the centroid rule errs by O(1/N^2))
    const double Mz_cont = -keff * cos(al) * sin(al) * pow(L, 4) / 12;
    printf("  elastic foundation tilted press: Mz = %.9g N m (continuum %.9g)\n", F[2], Mz_cont);
    EXPECT_NEAR(F[2] / Mz_cont, 1.0, 2.0 / (N * N));
    EXPECT_OK(mbs_get_contact_reports(sys, st, ef, &rep, 1, &n));
    EXPECT_NEAR(rep.point[0], cop_x / fsum, 1e-12);
    // lifted: apart
    set_free(sys, st, b, (double[3]){0, 0.01, 0}, NULL, NULL);
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    EXPECT_OK(mbs_get_contact_reports(sys, st, ef, &rep, 1, &n));
    EXPECT_EQ_INT(rep.in_contact, 0);
    EXPECT_ABS(rep.force[1], 0, 0);
    EXPECT_ABS(rep.penetration, 0, 0);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
}

static void test_elastic_foundation_sphere(void) {
  // the flat square pressed onto a sphere fixed on Ground: springs at the centroids inside the
  // sphere, each k a x along the sphere's normal there; with dissipation and sliding friction
  enum { N = 10 };
  const double L = 0.2, k = 1e6, rs = 0.3, x0 = 0.004, cdis = 0.5, mu = 0.4, vs = 0.2,
               vdown = 0.05;
  double v[3 * (N + 1) * (N + 1)];
  int t[6 * N * N];
  square_mesh(N, L, v, t);
  mbs_system* sys = mbs_system_create("efm_sphere");
  const int b = add_free_body(sys, "pad", 1, 0.01);
  mbs_contact_geometry_spec gm = mbs_contact_geometry_spec_default("pad", MBS_GEOM_MESH, b);
  gm.vertices = v;
  gm.nvertex = (N + 1) * (N + 1);
  gm.triangles = t;
  gm.ntriangle = 2 * N * N;
  const int gp = mbs_system_add_contact_geometry(sys, &gm);
  const int gs = add_sphere_geom(sys, "dome", 0, rs);
  const mbs_contact_surface surf[2] = {surface(gp, k, cdis, mu, mu, 0), surface(gs, 0, 0, 0, 0, 0)};
  mbs_system_add_elastic_foundation(sys, surf, 2, 1e-3);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  const double c[3] = {0, rs - x0, 0}, vel[3] = {vs, -vdown, 0};
  set_free(sys, st, b, c, vel, NULL);
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  const double* F = mbs_get_body_forces(sys, st) + 6 * b;
  double f[3] = {0, 0, 0};
  int inside = 0;
  for (int i = 0; i < 2 * N * N; i++) {
    double p[3];
    for (int j = 0; j < 3; j++)
      p[j] = c[j] + (v[3 * t[3 * i] + j] + v[3 * t[3 * i + 1] + j] + v[3 * t[3 * i + 2] + j]) / 3;
    const double d = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    if (d >= rs) continue;
    inside++;
    const double A[3] = {v[3 * t[3 * i]], v[3 * t[3 * i] + 1], v[3 * t[3 * i] + 2]};
    const double* B = v + 3 * t[3 * i + 1];
    const double* C = v + 3 * t[3 * i + 2];
    const double area = 0.5 * fabs((B[0] - A[0]) * (C[2] - A[2]) - (B[2] - A[2]) * (C[0] - A[0]));
    const double nrm[3] = {p[0] / d, p[1] / d, p[2] / d};  // out of the sphere
    const double x = rs - d;
    // penetration rate: the pad moves with vel (no spin), the dome is still
    const double xdot = -(vel[0] * nrm[0] + vel[1] * nrm[1] + vel[2] * nrm[2]);
    const double fn = k * area * x * (1 + cdis * xdot);
    double vt[3];
    for (int j = 0; j < 3; j++) vt[j] = vel[j] + xdot * nrm[j];
    const double vtn = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    for (int j = 0; j < 3; j++) f[j] += fn * nrm[j] - fn * stribeck(vtn, 1e-3, mu, mu, 0) * vt[j] / vtn;
  }
  EXPECT_TRUE(inside > 10 && inside < 2 * N * N);
  for (int j = 0; j < 3; j++) EXPECT_NEAR(F[3 + j], f[j], 1e-10);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- checks and messages ---------------------------------------

static void test_checks(void) {
  mbs_system* sys = mbs_system_create("checks");
  const int b = add_free_body(sys, "ball", 1, 0.1);
  // bad geometry at add time
  mbs_contact_geometry_spec g = mbs_contact_geometry_spec_default("bad", MBS_GEOM_SPHERE, b);
  g.radius = -0.1;
  EXPECT_TRUE(mbs_system_add_contact_geometry(sys, &g) < 0);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "contact geometry 'bad'"));
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "radius"));
  const int gs = add_sphere_geom(sys, "ball", b, 0.1);
  EXPECT_TRUE(add_sphere_geom(sys, "ball", b, 0.2) < 0);  // the name is taken
  g = mbs_contact_geometry_spec_default("x", MBS_GEOM_SPHERE, 7);
  g.radius = 1;
  EXPECT_TRUE(mbs_system_add_contact_geometry(sys, &g) < 0);  // no body 7
  const double mv[9] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
  const int bad_tri[3] = {0, 1, 3}, rep_tri[3] = {0, 1, 1};
  g = mbs_contact_geometry_spec_default("m", MBS_GEOM_MESH, b);
  g.vertices = mv;
  g.nvertex = 3;
  g.triangles = bad_tri;
  g.ntriangle = 1;
  EXPECT_TRUE(mbs_system_add_contact_geometry(sys, &g) < 0);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "triangle 0 refers to vertex 3"));
  g.triangles = rep_tri;
  EXPECT_TRUE(mbs_system_add_contact_geometry(sys, &g) < 0);
  const int gh = add_floor(sys, "floor", 0);
  // bad surfaces
  mbs_contact_surface s[2] = {surface(gs, -1, 0, 0, 0, 0), surface(gh, 1e6, 0, 0, 0, 0)};
  EXPECT_TRUE(mbs_system_add_hunt_crossley(sys, s, 2, 0.01) < 0);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "surface 'ball': stiffness -1"));
  s[0].stiffness = 1e6;
  EXPECT_TRUE(mbs_system_add_hunt_crossley(sys, s, 2, 0) < 0);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "transition velocity"));
  s[1].geometry = gs;
  EXPECT_TRUE(mbs_system_add_hunt_crossley(sys, s, 2, 0.01) < 0);  // listed twice
  EXPECT_TRUE(mbs_system_add_elastic_foundation(sys, s, 2, 0.01) < 0);
  s[1].geometry = gh;
  EXPECT_TRUE(mbs_system_add_elastic_foundation(sys, s, 2, 0.01) < 0);  // no mesh
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "none of the surfaces is a mesh"));
  // a degenerate mesh (collinear triangle) fails at finalize, naming the geometry
  const double cv[9] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
  const int tri[3] = {0, 1, 2};
  g = mbs_contact_geometry_spec_default("flat", MBS_GEOM_MESH, b);
  g.vertices = cv;
  g.nvertex = 3;
  g.triangles = tri;
  g.ntriangle = 1;
  const int gflat = mbs_system_add_contact_geometry(sys, &g);
  EXPECT_TRUE(gflat >= 0);
  const int hc = mbs_system_add_hunt_crossley(sys, s, 2, 0.01);
  EXPECT_TRUE(hc >= 0);
  EXPECT_TRUE(mbs_system_finalize(sys) < 0);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "contact geometry 'flat'"));
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "zero area"));
  mbs_system_destroy(sys);

  sys = mbs_system_create("checks2");
  const int b2 = add_free_body(sys, "ball", 1, 0.1);
  const int g2 = add_sphere_geom(sys, "ball", b2, 0.1);
  const int h2 = add_floor(sys, "floor", 0);
  const int h3 = add_floor(sys, "wall", 1.0);
  const mbs_contact_surface s2[3] = {surface(g2, 1e6, 0, 0, 0, 0), surface(h2, 1e6, 0, 0, 0, 0),
                                     surface(h3, 1e6, 0, 0, 0, 0)};
  const int hc2 = mbs_system_add_hunt_crossley(sys, s2, 3, 0.01);  // floor-wall: same body
  const int spring = mbs_system_add_body_force(sys, b2, (double[3]){0, 0, 0}, (double[3]){0, 0, 0});
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  set_free(sys, st, b2, (double[3]){0, 1, 0}, NULL, NULL);
  mbs_contact_report rep[3];
  int n;
  EXPECT_TRUE(mbs_get_contact_reports(sys, st, hc2, rep, 3, &n) == MBS_ERR_STAGE);
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_OK(mbs_get_contact_reports(sys, st, hc2, rep, 3, &n));
  EXPECT_EQ_INT(n, 2);  // ball-floor, ball-wall
  EXPECT_EQ_INT(rep[0].in_contact, 0);
  EXPECT_EQ_INT(rep[1].geometry2, h3);
  EXPECT_TRUE(mbs_get_contact_reports(sys, st, spring, rep, 3, &n) == MBS_ERR_ARGUMENT);
  // instance parameters are checked at Instance, naming the geometry or the surface
  EXPECT_OK(mbs_state_set_param(sys, st, "/contactgeometryset/ball/radius", 0, -0.5));
  EXPECT_TRUE(mbs_realize_dynamics(sys, st) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "contact geometry 'ball': radius -0.5"));
  EXPECT_OK(mbs_state_set_param(sys, st, "/contactgeometryset/ball/radius", 0, 0.5));
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/hunt_crossley0/wall/dynamic_friction", 0, -1));
  EXPECT_TRUE(mbs_realize_dynamics(sys, st) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "surface 'wall': dynamic friction -1"));
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/hunt_crossley0/wall/dynamic_friction", 0, 0.3));
  // a larger radius from the State's parameters reaches the floor: 0.5 - 1 < 0, still apart;
  // 1.2 overlaps by 0.2
  EXPECT_OK(mbs_state_set_param(sys, st, "/contactgeometryset/ball/radius", 0, 1.2));
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_OK(mbs_get_contact_reports(sys, st, hc2, rep, 1, &n));
  EXPECT_EQ_INT(rep[0].in_contact, 1);
  EXPECT_NEAR(rep[0].penetration, 0.2, 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  test_simbody_hunt_crossley();
  test_stribeck_spline();
  test_pair_order();
  test_hertz_equilibrium();
  test_sphere_sphere();
  test_ellipsoid();
  test_incline();
  test_energy_and_restitution();
  test_elastic_foundation();
  test_elastic_foundation_sphere();
  test_checks();
  return mbs_test_finish("test_contact");
}
