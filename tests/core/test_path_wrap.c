// Wrapping in geometry paths (include/mbs/path.h) against independent truth:
// - a pulley: a path from a point on Ground to a point on a pin-jointed arm over a cylinder
//   (a sphere, an ellipsoid with equal axes) centred on the pin's axis. Wrapped, its length is
//   the two tangent segments sqrt(d^2 - R^2) and the arc R (angle between the points -
//   acos(R/d1) - acos(R/d2)), its moment arm exactly R (or -R on the side the quadrant asks),
//   its lengthening speed -R u; unwrapped, the straight distance; the torus: the same pulley
//   through its hole, around the inner side of its tube;
// - two pulleys in series (a cylinder on Ground at the first pin, one on the first link at the
//   second pin, each over its own range of points): moment arms R1 and R2;
// - an ellipsoid pulley in a principal plane (each method): moment arms equal -dL/dq;
// - on a spatial chain (ball, pin, slider) with a sphere on Ground and a finite cylinder on the
//   first body, over random poses and speeds: the moment arms (generalized forces of a unit
//   tension through the tangent points) equal -dL/dq by central differences wherever the
//   length is smooth there, and the lengthening speed the rate of the length;
// - what a wrap remembers lives in the State: at the pose where the path runs through the
//   cylinder's axis, two States that came from either side keep their own sides, and a copy
//   keeps its source's;
// - an inactive object wraps nothing; bad objects and ranges are refused naming them, a bad
//   size in a State at Instance.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs/wrap.h"
#include "mbs_test.h"

static const mbs_transform identity = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};

static mbs_wrap_object shape(mbs_wrap_shape s, double R) {
  mbs_wrap_object o;
  memset(&o, 0, sizeof(o));
  o.shape = s;
  o.radius = R;
  o.length = 1.0;
  o.dimensions[0] = o.dimensions[1] = o.dimensions[2] = R;
  o.quadrant = MBS_WRAP_ALL;
  return o;
}

// arm on a pin about z at the origin; origin point on Ground at distance d1 and angle a1 (from
// +x, in the xy plane), insertion on the arm at distance d2 along the arm's -y; a wrap object
// centred on the pin's axis
static mbs_system* pulley_at(const mbs_wrap_object* obj, const mbs_transform* X,
                             mbs_wrap_method method, double d1, double a1, double d2,
                             int* path) {
  mbs_system* sys = mbs_system_create("pulley");
  mbs_body_spec s = mbs_body_spec_default("arm", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.01;
  const int arm = mbs_system_add_body(sys, &s);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", arm)};
  p[0].location[0] = d1 * cos(a1);
  p[0].location[1] = d1 * sin(a1);
  p[1].location[1] = -d2;
  *path = mbs_system_add_path(sys, "m", p, 2);
  const int w = mbs_system_add_wrap_object(sys, "/ground/pulley", "pulley", 0, X, obj, 1);
  EXPECT_EQ_INT(w, 0);
  EXPECT_EQ_INT(mbs_path_add_wrap(sys, *path, w, method, -1, -1), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static mbs_system* pulley(const mbs_wrap_object* obj, mbs_wrap_method method, double d1,
                          double a1, double d2, int* path) {
  return pulley_at(obj, &identity, method, d1, a1, d2, path);
}

// the length of the pulley's path in closed form: the insertion at angle q - pi/2; `side` +1
// wraps through decreasing angles from the origin point (clockwise, the +x side for a1 = pi/2)
static double pulley_length(double R, double d1, double a1, double d2, double q, int side,
                            int* wraps) {
  const double a2 = q - M_PI / 2;
  double sweep = side > 0 ? a1 - a2 : a2 - a1;  // angle travelled around the axis
  while (sweep < 0) sweep += 2 * M_PI;
  while (sweep >= 2 * M_PI) sweep -= 2 * M_PI;
  const double arc = sweep - acos(R / d1) - acos(R / d2);
  *wraps = arc > 0;
  if (!*wraps) {
    const double dx = d1 * cos(a1) - d2 * cos(a2), dy = d1 * sin(a1) - d2 * sin(a2);
    return sqrt(dx * dx + dy * dy);
  }
  return sqrt(d1 * d1 - R * R) + sqrt(d2 * d2 - R * R) + R * arc;
}

// the straight segment between the pulley's points passes within R of the axis
static int pulley_crosses(double R, double d1, double a1, double d2, double q) {
  const double a2 = q - M_PI / 2;
  const double x1 = d1 * cos(a1), y1 = d1 * sin(a1), x2 = d2 * cos(a2), y2 = d2 * sin(a2);
  const double dx = x2 - x1, dy = y2 - y1;
  double t = -(x1 * dx + y1 * dy) / (dx * dx + dy * dy);
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  return hypot(x1 + t * dx, y1 + t * dy) < R;
}

static void test_pulley(mbs_wrap_shape sh, mbs_wrap_quadrant quadrant, int side) {
  const double R = 0.04, d1 = 0.3, a1 = M_PI / 2, d2 = 0.25;
  mbs_wrap_object obj = shape(sh, R);
  obj.quadrant = quadrant;
  if (sh == MBS_WRAP_CYLINDER) obj.length = 0.5;
  int path;
  mbs_system* sys = pulley(&obj, MBS_WRAP_MIDPOINT, d1, a1, d2, &path);
  mbs_state* st = mbs_state_create(sys);
  int nwrapped = 0, nstraight = 0;
  double worst = 0, worst_ma = 0;
  for (double q = -2.5; q <= 2.5; q += 0.02) {
    mbs_state_upd_q(st)[0] = q;
    mbs_state_upd_u(st)[0] = 0.8;
    EXPECT_OK(mbs_realize_velocity(sys, st));
    double L, Ld, ma[1];
    EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, &Ld));
    EXPECT_OK(mbs_calc_path_moment_arms(sys, st, path, ma));
    int wraps;
    double Lx = pulley_length(R, d1, a1, d2, q, side, &wraps);
    if (sh == MBS_WRAP_SPHERE && wraps && !pulley_crosses(R, d1, a1, d2, q)) {
      // a sphere wraps only a segment that passes through it, whatever its quadrant
      Lx = pulley_length(R, d1, a1, d2, q, -side, &wraps);
      wraps = 0;
    }
    // with a quadrant the wrap side is fixed; without, the straight line decides: the path
    // wraps only when the segment crosses the object, on the shorter side
    if (quadrant == MBS_WRAP_ALL) {
      int w1, w2;
      const double L1 = pulley_length(R, d1, a1, d2, q, 1, &w1);
      const double L2 = pulley_length(R, d1, a1, d2, q, -1, &w2);
      const double Ls = w1 ? L2 : L1;  // (the straight one when one side is straight)
      const double Lw = w1 && w2 ? fmin(L1, L2) : Ls;
      if (fabs(L - Lw) > worst) worst = fabs(L - Lw);
      if (fabs(L1 - L2) < 1e-9) continue;  // through the axis: either side (the State's memory)
      if (w1 && w2) {
        nwrapped++;
        const double r = L1 < L2 ? R : -R;
        if (fabs(ma[0] - r) > worst_ma) worst_ma = fabs(ma[0] - r);
        EXPECT_NEAR(Ld, -r * 0.8, 1e-10);
      } else {
        nstraight++;
      }
      continue;
    }
    if (fabs(L - Lx) > worst) worst = fabs(L - Lx);
    if (wraps) {
      nwrapped++;
      if (fabs(ma[0] - side * R) > worst_ma) worst_ma = fabs(ma[0] - side * R);
      EXPECT_NEAR(Ld, -side * R * 0.8, 1e-10);
    } else {
      nstraight++;
    }
  }
  printf("pulley over a %s, quadrant %s: %d poses wrapped, %d straight; |L - closed form| <= "
         "%.2e m, |moment arm - R| <= %.2e m\n", mbs_wrap_shape_name(sh),
         mbs_wrap_quadrant_name(quadrant), nwrapped, nstraight, worst, worst_ma);
  EXPECT_TRUE(nwrapped > 10 && nstraight > 10);
  EXPECT_TRUE(worst < 1e-10);
  EXPECT_TRUE(worst_ma < 1e-10);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// two pulleys in series: Ground point over a cylinder at pin 1 (on Ground), then over a
// cylinder at pin 2 (on link 1), to a point on link 2
static void test_two_pulleys(void) {
  const double R1 = 0.05, R2 = 0.05, L1 = 0.4;
  mbs_system* sys = mbs_system_create("two pulleys");
  mbs_body_spec s1 = mbs_body_spec_default("link1", 0, MBS_MOB_PIN);
  s1.mass = 1;
  s1.inertia[0] = s1.inertia[1] = s1.inertia[2] = 0.01;
  const int b1 = mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = s1;
  s2.name = "link2";
  s2.parent = b1;
  s2.X_PF.p[1] = -L1;  // pin 2 at the end of link 1, below pin 1
  const int b2 = mbs_system_add_body(sys, &s2);
  mbs_path_point_spec p[3] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("via", b1),
                              mbs_path_point_spec_default("insertion", b2)};
  p[0].location[1] = 0.2;     // above pin 1
  p[1].location[1] = -L1 / 2;  // on link 1, halfway between the pins
  p[2].location[1] = -0.25;   // on link 2
  const int path = mbs_system_add_path(sys, "m", p, 3);
  mbs_wrap_object c1 = shape(MBS_WRAP_CYLINDER, R1), c2 = shape(MBS_WRAP_CYLINDER, R2);
  c1.quadrant = MBS_WRAP_POS_X;
  c2.quadrant = MBS_WRAP_POS_X;
  mbs_transform X2 = identity;
  X2.p[1] = -L1;
  const int w1 = mbs_system_add_wrap_object(sys, "/ground/c1", "c1", 0, &identity, &c1, 1);
  const int w2 = mbs_system_add_wrap_object(sys, "/bodyset/link1/c2", "c2", b1, &X2, &c2, 1);
  // c1 over the first segment only, c2 over the second (OpenSim's 1-based range)
  EXPECT_EQ_INT(mbs_path_add_wrap(sys, path, w1, MBS_WRAP_HYBRID, 1, 2), 0);
  EXPECT_EQ_INT(mbs_path_add_wrap(sys, path, w2, MBS_WRAP_HYBRID, 2, 3), 1);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  int n = 0;
  for (double q1 = 0.05; q1 <= 0.4; q1 += 0.05)
    for (double q2 = 0.05; q2 <= 0.4; q2 += 0.05) {
      mbs_state_upd_q(st)[0] = q1;
      mbs_state_upd_q(st)[1] = q2;
      EXPECT_OK(mbs_realize_position(sys, st));
      double ma[2], pts[3 * 8];
      int np;
      EXPECT_OK(mbs_calc_path_moment_arms(sys, st, path, ma));
      EXPECT_OK(mbs_calc_path_points(sys, st, path, pts, &np));
      if (np != 7) continue;  // both wrapped: 3 points and 2 x 2 tangent points
      n++;
      // the ground-side segment is tangent to c1 about pin 1; the link-2 segment tangent to c2
      EXPECT_NEAR(ma[0], R1, 1e-10);
      EXPECT_NEAR(ma[1], R2, 1e-10);
    }
  printf("two pulleys: %d poses with both wrapped: moment arms R1 and R2\n", n);
  EXPECT_TRUE(n >= 10);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// a spatial chain with four kinds of wrap objects on different bodies
// mask: which objects the path wraps over (1 sphere, 2 cylinder, 4 ellipsoid)
static mbs_system* spatial_chain(int* path, int ellipsoid_method, int mask) {
  mbs_system* sys = mbs_system_create("spatial");
  mbs_body_spec s1 = mbs_body_spec_default("b1", 0, MBS_MOB_BALL);
  s1.mass = 1;
  s1.inertia[0] = s1.inertia[1] = s1.inertia[2] = 0.01;
  s1.X_PF.p[1] = 0.1;
  const int b1 = mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = s1;
  s2.name = "b2";
  s2.parent = b1;
  s2.mobilizer = MBS_MOB_PIN;
  s2.X_PF.p[0] = 0.02;
  s2.X_PF.p[1] = -0.35;
  s2.X_PF.angles[0] = 0.3;
  s2.X_PF.angles[1] = -0.2;
  const int b2 = mbs_system_add_body(sys, &s2);
  mbs_body_spec s3 = s1;
  s3.name = "b3";
  s3.parent = b2;
  s3.mobilizer = MBS_MOB_SLIDER;
  s3.X_PF.p[0] = 0;
  s3.X_PF.p[1] = -0.3;
  s3.X_PF.angles[2] = -1.2;
  const int b3 = mbs_system_add_body(sys, &s3);
  mbs_path_point_spec p[4] = {
      mbs_path_point_spec_default("a", 0), mbs_path_point_spec_default("b", b1),
      mbs_path_point_spec_default("c", b2), mbs_path_point_spec_default("d", b3)};
  const double loc[4][3] = {
      {0.06, 0.25, 0.03}, {0.07, -0.2, -0.04}, {-0.05, -0.15, 0.06}, {0.04, -0.12, 0.02}};
  for (int i = 0; i < 4; i++) memcpy(p[i].location, loc[i], sizeof(loc[i]));
  *path = mbs_system_add_path(sys, "m", p, 4);
  mbs_wrap_object sphere = shape(MBS_WRAP_SPHERE, 0.045);
  mbs_wrap_object cyl = shape(MBS_WRAP_CYLINDER, 0.03);
  cyl.length = 0.12;
  mbs_wrap_object ell = shape(MBS_WRAP_ELLIPSOID, 0);
  ell.dimensions[0] = 0.05;
  ell.dimensions[1] = 0.03;
  ell.dimensions[2] = 0.04;
  mbs_transform X;
  const double a1[3] = {0.2, 0.1, -0.3}, p1[3] = {0.0, 0.1, 0.0};
  mbs_tf_from_xyz(&X, a1, p1);
  const int ws = mbs_system_add_wrap_object(sys, "/ground/s", "s", 0, &X, &sphere, 1);
  const double a2[3] = {0.1, 1.4, 0.2}, p2[3] = {0.0, -0.34, 0.0};
  mbs_tf_from_xyz(&X, a2, p2);
  const int wc = mbs_system_add_wrap_object(sys, "/bodyset/b1/c", "c", b1, &X, &cyl, 1);
  const double a3[3] = {-0.3, 0.5, 0.7}, p3[3] = {-0.07, -0.26, 0.035};
  mbs_tf_from_xyz(&X, a3, p3);
  const int we = mbs_system_add_wrap_object(sys, "/bodyset/b2/e", "e", b2, &X, &ell, 1);
  if (mask & 1) EXPECT_TRUE(mbs_path_add_wrap(sys, *path, ws, MBS_WRAP_HYBRID, -1, -1) >= 0);
  if (mask & 2) EXPECT_TRUE(mbs_path_add_wrap(sys, *path, wc, MBS_WRAP_HYBRID, -1, -1) >= 0);
  if (mask & 4)
    EXPECT_TRUE(mbs_path_add_wrap(sys, *path, we, (mbs_wrap_method)ellipsoid_method, -1, -1) >= 0);

  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static double uniform(double a, double b) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return a + (b - a) * (double)(rng >> 11) / 9007199254740992.0;
}

static double length_at(const mbs_system* sys, mbs_state* st, int path) {
  double L = NAN;
  if (mbs_realize_position(sys, st) == MBS_OK) mbs_calc_path_length(sys, st, path, &L, NULL);
  return L;
}

static void test_spatial(int method, int mask) {
  int path;
  mbs_system* sys = spatial_chain(&path, method, mask);
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys);
  mbs_state* st = mbs_state_create(sys);
  mbs_state* fd = mbs_state_create(sys);
  int checked = 0, kinked = 0, wrapped_poses = 0;
  double worst = 0, worst_speed = 0;
  for (int trial = 0; trial < 300; trial++) {
    double* q = mbs_state_upd_q(st);
    double quat[4] = {1, uniform(-0.4, 0.4), uniform(-0.4, 0.4), uniform(-0.4, 0.4)};
    const double nrm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] +
                            quat[3] * quat[3]);
    for (int k = 0; k < 4; k++) q[k] = quat[k] / nrm;
    q[4] = uniform(-1.2, 1.2);
    q[5] = uniform(-0.05, 0.05);
    double* u = mbs_state_upd_u(st);
    for (int k = 0; k < nu; k++) u[k] = uniform(-1, 1);
    EXPECT_OK(mbs_realize_velocity(sys, st));
    double L, Ld, ma[8], pts[3 * 16];
    int np;
    EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, &Ld));
    EXPECT_OK(mbs_calc_path_moment_arms(sys, st, path, ma));
    EXPECT_OK(mbs_calc_path_points(sys, st, path, pts, &np));
    wrapped_poses += np > 4;
    // -dL/dq along each mobility: move q by q' = N(q) e_j h (mbs_state_... via u)
    for (int j = 0; j < nu; j++) {
      double dL[2];
      const double hs[2] = {1e-5, 2e-5};
      for (int hi = 0; hi < 2; hi++) {
        double Lpm[2];
        for (int sgn = 0; sgn < 2; sgn++) {
          mbs_state_copy(sys, fd, st);
          double ej[8] = {0}, qd[8];
          ej[j] = 1;
          EXPECT_OK(mbs_calc_qdot(sys, fd, ej, qd));
          double* qq = mbs_state_upd_q(fd);
          const double h = sgn ? -hs[hi] : hs[hi];
          for (int k = 0; k < nq; k++) qq[k] += h * qd[k];
          Lpm[sgn] = length_at(sys, fd, path);
        }
        dL[hi] = (Lpm[0] - Lpm[1]) / (2 * hs[hi]);
      }
      if (fabs(dL[0] - dL[1]) > 1e-6) {  // a kink (a wrap starting or a quadrant flip) nearby
        kinked++;
        continue;
      }
      checked++;
      if (getenv("WRAP_VERBOSE") && fabs(ma[j] + dL[0]) > 1e-4)
        printf("trial %d dof %d: moment arm %.6f, -dL/dq %.6f (L %.5f, %d points)\n", trial, j,
               ma[j], -dL[0], L, np);
      if (fabs(ma[j] + dL[0]) > worst) worst = fabs(ma[j] + dL[0]);
    }
    // the speed is the length's rate along the State's own u
    {
      double Lpm[2];
      const double h = 1e-6;
      for (int sgn = 0; sgn < 2; sgn++) {
        mbs_state_copy(sys, fd, st);
        double* qq = mbs_state_upd_q(fd);
        const double* qd = mbs_get_qdot(sys, st);
        for (int k = 0; k < nq; k++) qq[k] += (sgn ? -h : h) * qd[k];
        Lpm[sgn] = length_at(sys, fd, path);
      }
      const double rate = (Lpm[0] - Lpm[1]) / (2 * h);
      double s = 0;
      for (int k = 0; k < nu; k++) s -= ma[k] * u[k];
      if (fabs(rate - s) < 1e-6 && fabs(Ld - rate) > worst_speed) worst_speed = fabs(Ld - rate);
    }
  }
  printf("spatial chain over%s%s%s%s%s: %d of 300 poses wrapped; %d moment arms checked "
         "(%d near kinks skipped): |r + dL/dq| <= %.2e m; |speed - dL/dt| <= %.2e m/s\n",
         mask & 1 ? " sphere" : "", mask & 2 ? " cylinder" : "", mask & 4 ? " ellipsoid (" : "",
         mask & 4 ? mbs_wrap_method_name((mbs_wrap_method)method) : "", mask & 4 ? ")" : "",
         wrapped_poses, checked, kinked, worst, worst_speed);
  EXPECT_TRUE(wrapped_poses > 40);
  EXPECT_TRUE(kinked < checked / 10);
  EXPECT_TRUE(worst < 1e-6);
  EXPECT_TRUE(worst_speed < 1e-6);
  mbs_state_destroy(fd);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// An ellipsoid centred on the pin's axis, along its z semi-axis, the path in its xy principal
// plane: by symmetry the planar path is the shortest, so the moment arms (generalized forces of
// a unit tension through the tangent points) equal -dL/dq, whichever method finds the plane.
// (Off principal planes OpenSim's planar approximation is not the shortest path and its moment
// arms differ from -dL/dq by up to tens of percent; the kernel's tests check its geometry.)
static void test_ellipse_pulley(mbs_wrap_method method) {
  const double d1 = 0.3, a1 = M_PI / 2, d2 = 0.25;
  mbs_wrap_object ell = shape(MBS_WRAP_ELLIPSOID, 0);
  ell.dimensions[0] = 0.06;
  ell.dimensions[1] = 0.035;
  ell.dimensions[2] = 0.08;
  int path;
  mbs_system* sys = pulley(&ell, method, d1, a1, d2, &path);
  mbs_state* st = mbs_state_create(sys);
  int nwrapped = 0;
  double worst = 0;
  for (double q = -0.6; q <= 0.6; q += 0.01) {
    double Lq[3], ma = 0;
    int np = 0;
    for (int k = 0; k < 3; k++) {
      mbs_state_upd_q(st)[0] = q + (k - 1) * 1e-6;
      EXPECT_OK(mbs_realize_position(sys, st));
      EXPECT_OK(mbs_calc_path_length(sys, st, path, &Lq[k], NULL));
      if (k == 1) {
        double pts[3 * 4];
        EXPECT_OK(mbs_calc_path_moment_arms(sys, st, path, &ma));
        EXPECT_OK(mbs_calc_path_points(sys, st, path, pts, &np));
      }
    }
    if (np != 4 || fabs(q) < 0.005) continue;  // straight, or through the centre (a tie)
    nwrapped++;
    const double dLdq = (Lq[2] - Lq[0]) / 2e-6;
    if (fabs(ma + dLdq) > worst) worst = fabs(ma + dLdq);
  }
  printf("pulley over an ellipsoid in its principal plane (%s): %d poses wrapped, "
         "|r + dL/dq| <= %.2e m\n", mbs_wrap_method_name(method), nwrapped, worst);
  EXPECT_TRUE(nwrapped > 20);
  EXPECT_TRUE(worst < 1e-7);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// A torus whose tube passes along the pin's axis, the path in a meridian plane through its
// hole: the path wraps the inner side of the tube exactly as over a cylinder of the tube's
// radius on the pin's axis, on the side facing the torus axis (here +x). (Off such symmetric
// placements OpenSim's torus, a cylinder placed at the centre circle's point closest to the
// line, moves with the path's ends, so its moment arms are not -dL/dq; the kernel's own tests
// check its lengths.)
static void test_torus_pulley(void) {
  const double r = 0.04, Rc = 0.5, d1 = 0.3, a1 = M_PI / 2, d2 = 0.25;
  mbs_wrap_object torus = shape(MBS_WRAP_TORUS, 0);
  torus.inner_radius = r;
  torus.outer_radius = Rc;
  // torus frame: x_T = -x_G (from the torus centre to the pin), y_T = z_G (the tube's
  // direction at the pin), z_T = x_T x y_T = y_G; centre at (Rc, 0, 0) in Ground
  const mbs_transform X = {{-1, 0, 0, 0, 0, 1, 0, 1, 0}, {Rc, 0, 0}};
  int path;
  mbs_system* sys = pulley_at(&torus, &X, MBS_WRAP_HYBRID, d1, a1, d2, &path);
  mbs_state* st = mbs_state_create(sys);
  int nwrapped = 0, nstraight = 0;
  double worst = 0, worst_ma = 0;
  for (double q = -2.5; q <= 2.5; q += 0.02) {
    mbs_state_upd_q(st)[0] = q;
    EXPECT_OK(mbs_realize_position(sys, st));
    double L, ma;
    EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, NULL));
    EXPECT_OK(mbs_calc_path_moment_arms(sys, st, path, &ma));
    int wraps;
    const double Lx = pulley_length(r, d1, a1, d2, q, 1, &wraps);
    if (fabs(L - Lx) > worst) worst = fabs(L - Lx);
    if (wraps && fabs(ma - r) > worst_ma) worst_ma = fabs(ma - r);
    nwrapped += wraps;
    nstraight += !wraps;
  }
  printf("pulley through a torus' hole: %d poses wrapped, %d straight; |L - closed form| <= "
         "%.2e m, |moment arm - r| <= %.2e m\n", nwrapped, nstraight, worst, worst_ma);
  EXPECT_TRUE(nwrapped > 10 && nstraight > 10);
  EXPECT_TRUE(worst < 1e-10);
  EXPECT_TRUE(worst_ma < 1e-10);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// the path through the cylinder's axis: each State keeps the side it came from
static void test_memory_in_state(void) {
  const double R = 0.04, d = 0.3;
  mbs_wrap_object obj = shape(MBS_WRAP_CYLINDER, R);
  int path;
  mbs_system* sys = pulley(&obj, MBS_WRAP_HYBRID, d, M_PI / 2, d, &path);
  mbs_state* a = mbs_state_create(sys);
  mbs_state* b = mbs_state_create(sys);
  double ma_a, ma_b;
  // a comes from q > 0 (wrapping the +x side: moment arm +R), b from q < 0 (-R)
  for (int step = 0; step <= 10; step++) {
    mbs_state_upd_q(a)[0] = 0.1 * (10 - step) / 10.0;
    mbs_state_upd_q(b)[0] = -0.1 * (10 - step) / 10.0;
    EXPECT_OK(mbs_realize_position(sys, a));
    EXPECT_OK(mbs_realize_position(sys, b));
    EXPECT_OK(mbs_calc_path_moment_arms(sys, a, path, &ma_a));
    EXPECT_OK(mbs_calc_path_moment_arms(sys, b, path, &ma_b));
  }
  printf("through the axis: the State from q > 0 keeps moment arm %.4f, from q < 0 %.4f\n",
         ma_a, ma_b);
  EXPECT_NEAR(ma_a, R, 1e-12);
  EXPECT_NEAR(ma_b, -R, 1e-12);
  // a copy carries the memory
  mbs_state* c = mbs_state_create(sys);
  EXPECT_OK(mbs_state_copy(sys, c, b));
  double ma_c;
  EXPECT_OK(mbs_realize_position(sys, c));
  EXPECT_OK(mbs_calc_path_moment_arms(sys, c, path, &ma_c));
  EXPECT_NEAR(ma_c, -R, 1e-12);
  mbs_state_destroy(c);
  mbs_state_destroy(b);
  mbs_state_destroy(a);
  mbs_system_destroy(sys);
}

static void test_inactive_and_bad(void) {
  mbs_wrap_object obj = shape(MBS_WRAP_SPHERE, 0.04);
  mbs_system* sys = mbs_system_create("inactive");
  mbs_body_spec s = mbs_body_spec_default("arm", 0, MBS_MOB_PIN);
  s.mass = 1;
  const int arm = mbs_system_add_body(sys, &s);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", arm)};
  p[0].location[1] = 0.3;
  p[1].location[1] = -0.3;
  const int path = mbs_system_add_path(sys, "m", p, 2);
  const int w = mbs_system_add_wrap_object(sys, "/ground/ball", "ball", 0, &identity, &obj, 0);
  EXPECT_EQ_INT(mbs_path_add_wrap(sys, path, w, MBS_WRAP_HYBRID, -1, -1), 0);
  // refused while building: an unknown object, a range beyond the points, a second "ball"
  EXPECT_TRUE(mbs_path_add_wrap(sys, path, 5, MBS_WRAP_HYBRID, -1, -1) < 0);
  EXPECT_TRUE(mbs_path_add_wrap(sys, path, w, MBS_WRAP_HYBRID, 1, 3) < 0);
  EXPECT_TRUE(strstr(mbs_system_error(sys)->message, "'m'") != NULL);
  EXPECT_TRUE(mbs_system_add_wrap_object(sys, "/ground/ball", "ball", 0, &identity, &obj, 1) < 0);
  mbs_wrap_object bad = obj;
  bad.radius = -1;
  EXPECT_TRUE(mbs_system_add_wrap_object(sys, "/ground/b2", "b2", 0, &identity, &bad, 1) < 0);
  printf("refused: %s\n", mbs_system_error(sys)->message);
  EXPECT_TRUE(strstr(mbs_system_error(sys)->message, "b2") != NULL);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_realize_position(sys, st));
  double L;
  EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, NULL));
  EXPECT_NEAR(L, 0.6, 1e-14);  // straight through the inactive sphere
  // a State whose radius parameter is made negative fails at Instance, naming the object
  const mbs_param_info* pr = mbs_system_find_param(sys, "/ground/ball/radius");
  EXPECT_TRUE(pr != NULL);
  if (pr) {
    mbs_state_upd_params(st)[pr->index] = -0.01;
    const int rc = mbs_realize_position(sys, st);
    EXPECT_TRUE(rc != MBS_OK);
    printf("bad radius: %s\n", mbs_state_error(st)->message);
    EXPECT_TRUE(strstr(mbs_state_error(st)->message, "ball") != NULL);
  }
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  test_pulley(MBS_WRAP_CYLINDER, MBS_WRAP_POS_X, 1);
  test_pulley(MBS_WRAP_CYLINDER, MBS_WRAP_NEG_X, -1);
  test_pulley(MBS_WRAP_CYLINDER, MBS_WRAP_ALL, 0);
  test_pulley(MBS_WRAP_SPHERE, MBS_WRAP_ALL, 0);
  test_pulley(MBS_WRAP_SPHERE, MBS_WRAP_POS_X, 1);
  test_pulley(MBS_WRAP_ELLIPSOID, MBS_WRAP_ALL, 0);
  test_two_pulleys();
  test_spatial(MBS_WRAP_HYBRID, 1);
  test_spatial(MBS_WRAP_HYBRID, 2);
  test_spatial(MBS_WRAP_HYBRID, 3);
  for (int m = 0; m < MBS_WRAP_METHOD_COUNT; m++) test_ellipse_pulley((mbs_wrap_method)m);
  test_torus_pulley();
  test_memory_in_state();
  test_inactive_and_bad();
  return mbs_test_finish("test_path_wrap");
}
