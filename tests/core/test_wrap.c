// Tests of the wrapping kernels (core/wrap.c) against closed forms from elementary geometry:
// - sphere: two tangent segments plus the great-circle arc, tangency, coplanarity, misses;
// - cylinder: the unrolled helix (tangent heights, constant slope, length), finite length,
//   quadrants (+y and -y give the two sides; OpenSim's forced wrap and no-wrap cases);
// - ellipsoid: a = b = c gives the sphere (every method); a path in a principal plane gives
//   the planar ellipse wrap (tangent points from the eccentric anomaly, arc by a fine polyline);
//   a general ellipsoid lies between the straight line and the wrap of the circumscribed
//   sphere's section in the same plane, with tangent points tangent and on the surface;
// - torus: paths in a meridian plane, through the hole round the tube's inner side;
// - quadrants of the ellipsoid (c1 mirrored) and the torus (its circle's closest point);
// - continuity of the path length while a point sweeps across the onset of wrapping;
// - the memory (line through a sphere's centre), parsing and argument checks.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/spatial.h"
#include "mbs/wrap.h"
#include "mbs_test.h"

static double dist3(const double a[3], const double b[3]) {
  double d[3];
  mbs_v3_sub(d, a, b);
  return mbs_v3_norm(d);
}

static double angle3(const double a[3], const double b[3]) {
  double c[3];
  mbs_v3_cross(c, a, b);
  return atan2(mbs_v3_norm(c), mbs_v3_dot(a, b));
}

static int wrapped(const mbs_wrap_result* r) {
  return r->action == MBS_WRAP_WRAPPED || r->action == MBS_WRAP_MANDATORY;
}

// Planar wrap round a circle of radius R: points at distances d1, d2 from its centre whose
// directions are `sweep` apart measured through the side the path goes round.
static double planar_arc(double d1, double d2, double sweep, double R) {
  return R * (sweep - acos(R / d1) - acos(R / d2));
}
static double planar_total(double d1, double d2, double sweep, double R) {
  return sqrt(d1 * d1 - R * R) + sqrt(d2 * d2 - R * R) + planar_arc(d1, d2, sweep, R);
}

static mbs_wrap_object sphere_object(double R, mbs_wrap_quadrant q) {
  mbs_wrap_object o;
  memset(&o, 0, sizeof o);
  o.shape = MBS_WRAP_SPHERE;
  o.name = "test_sphere";
  o.radius = R;
  o.quadrant = q;
  return o;
}

static mbs_wrap_object cylinder_object(double R, double length, mbs_wrap_quadrant q) {
  mbs_wrap_object o;
  memset(&o, 0, sizeof o);
  o.shape = MBS_WRAP_CYLINDER;
  o.name = "test_cylinder";
  o.radius = R;
  o.length = length;
  o.quadrant = q;
  return o;
}

static mbs_wrap_object ellipsoid_object(double a, double b, double c, mbs_wrap_method m) {
  mbs_wrap_object o;
  memset(&o, 0, sizeof o);
  o.shape = MBS_WRAP_ELLIPSOID;
  o.name = "test_ellipsoid";
  o.dimensions[0] = a;
  o.dimensions[1] = b;
  o.dimensions[2] = c;
  o.method = m;
  return o;
}

static mbs_wrap_object torus_object(double inner, double outer) {
  mbs_wrap_object o;
  memset(&o, 0, sizeof o);
  o.shape = MBS_WRAP_TORUS;
  o.name = "test_torus";
  o.inner_radius = inner;
  o.outer_radius = outer;
  return o;
}

static void random_direction(mbs_test_rng* rng, double v[3]) {
  double n;
  do {
    for (int i = 0; i < 3; i++) v[i] = mbs_test_uniform(rng, -1, 1);
    n = mbs_v3_norm(v);
  } while (n < 0.1 || n > 1);
  mbs_v3_scale(v, v, 1.0 / n);
}

// distance from the origin to the segment p1-p2, and whether its foot lies strictly inside
static double segment_distance(const double p1[3], const double p2[3], int* inside) {
  double d[3], x[3];
  mbs_v3_sub(d, p2, p1);
  const double t = -mbs_v3_dot(p1, d) / mbs_v3_dot(d, d);
  *inside = t > 0 && t < 1;
  mbs_v3_copy(x, p1);
  mbs_v3_axpy(x, t, d);
  return mbs_v3_norm(x);
}

// the sphere's wrap, checked against the closed form for the arc on the short side (short = 1)
// or the long side
static void check_sphere_wrap(const mbs_wrap_result* r, double R, const double p1[3],
                              const double p2[3], int shortside, double tol) {
  const double d1 = mbs_v3_norm(p1), d2 = mbs_v3_norm(p2), g = angle3(p1, p2);
  const double sweep = shortside ? g : 2 * M_PI - g;
  EXPECT_NEAR(r->length, planar_arc(d1, d2, sweep, R), tol);
  EXPECT_NEAR(mbs_wrap_path_length(r, p1, p2), planar_total(d1, d2, sweep, R), tol);
  double n[3], t1[3], t2[3];
  mbs_v3_cross(n, p1, p2);
  mbs_v3_scale(n, n, 1.0 / mbs_v3_norm(n));
  mbs_v3_sub(t1, p1, r->r1);
  mbs_v3_sub(t2, p2, r->r2);
  EXPECT_NEAR(mbs_v3_norm(r->r1), R, tol);
  EXPECT_NEAR(mbs_v3_norm(r->r2), R, tol);
  EXPECT_ABS(mbs_v3_dot(t1, r->r1) / (mbs_v3_norm(t1) * R), 0, tol);  // tangent at r1
  EXPECT_ABS(mbs_v3_dot(t2, r->r2) / (mbs_v3_norm(t2) * R), 0, tol);
  EXPECT_ABS(mbs_v3_dot(r->r1, n) / R, 0, tol);  // in the plane of the centre, p1, p2
  EXPECT_ABS(mbs_v3_dot(r->r2, n) / R, 0, tol);
  // the great-circle arc between the tangent points: r * angle, or r * (2 pi - angle)
  const double a12 = angle3(r->r1, r->r2);
  EXPECT_NEAR(r->length, R * (r->length > M_PI * R ? 2 * M_PI - a12 : a12), tol);
  EXPECT_EQ_INT(r->npath, MBS_WRAP_PATH_POINTS);
  for (int k = 0; k < r->npath; k++) EXPECT_NEAR(mbs_v3_norm(r->path[k]), R, tol);
}

static void test_sphere(void) {
  mbs_test_rng rng = {0x5eed1234abcdULL};
  mbs_error err;
  int nwrap = 0, nmiss = 0;
  for (int trial = 0; trial < 400; trial++) {
    const double R = mbs_test_uniform(&rng, 0.02, 0.1);
    double u1[3], u2[3], p1[3], p2[3];
    random_direction(&rng, u1);
    random_direction(&rng, u2);
    mbs_v3_scale(p1, u1, R * mbs_test_uniform(&rng, 1.05, 5));
    mbs_v3_scale(p2, u2, R * mbs_test_uniform(&rng, 1.05, 5));
    int inside;
    const double h = segment_distance(p1, p2, &inside);
    if (fabs(h - R) < 1e-6 * R) continue;  // grazing: either answer is right
    const mbs_wrap_object o = sphere_object(R, MBS_WRAP_ALL);
    mbs_wrap_result r;
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    if (h < R && inside) {
      nwrap++;
      EXPECT_EQ_INT(r.action, MBS_WRAP_WRAPPED);  // OpenSim's answer without a quadrant
      check_sphere_wrap(&r, R, p1, p2, 1, 1e-10);
    } else {
      nmiss++;
      EXPECT_EQ_INT(r.action, MBS_WRAP_NONE);
      EXPECT_NEAR(mbs_wrap_path_length(&r, p1, p2), dist3(p1, p2), 1e-15);
    }
  }
  EXPECT_TRUE(nwrap > 50 && nmiss > 50);

  // a point inside
  {
    const mbs_wrap_object o = sphere_object(0.05, MBS_WRAP_ALL);
    const double p1[3] = {0.01, 0.02, 0}, p2[3] = {0.2, 0, 0};
    mbs_wrap_result r;
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_INSIDE);
  }
  // quadrants: the segment passes just below the centre, so the short way is under it
  {
    const double R = 0.05;
    const double p1[3] = {-3 * R, -0.2 * R, 0.0}, p2[3] = {3 * R, -0.3 * R, 0.1 * R};
    mbs_wrap_result r;
    mbs_wrap_object o = sphere_object(R, MBS_WRAP_ALL);
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    check_sphere_wrap(&r, R, p1, p2, 1, 1e-10);
    EXPECT_TRUE(r.path[MBS_WRAP_PATH_POINTS / 2][1] < 0);
    o.quadrant = MBS_WRAP_NEG_Y;  // points in the quadrant: mandatory, the same short way
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
    check_sphere_wrap(&r, R, p1, p2, 1, 1e-10);
    o.quadrant = MBS_WRAP_POS_Y;  // the long way, over the top
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_WRAPPED);
    check_sphere_wrap(&r, R, p1, p2, 0, 1e-10);
    EXPECT_TRUE(r.path[MBS_WRAP_PATH_POINTS / 2][1] > 0.9 * R);
  }
}

// the line through the centre: the plane is the remembered one
static void test_sphere_memory(void) {
  mbs_error err;
  const double R = 0.04;
  const double p1[3] = {2 * R, 0, 0}, p2[3] = {-3 * R, 0, 0};
  const mbs_wrap_object o = sphere_object(R, MBS_WRAP_ALL);
  const double expect = planar_arc(2 * R, 3 * R, M_PI, R);
  mbs_wrap_result r;
  EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));  // nothing remembered: some plane
  EXPECT_NEAR(r.length, expect, 1e-12);
  const double axes[2][3] = {{0, 0, 1}, {0, -1, 0}};
  for (int k = 0; k < 2; k++) {
    mbs_wrap_memory mem;
    mbs_wrap_result prev;
    memset(&prev, 0, sizeof prev);
    prev.action = MBS_WRAP_WRAPPED;
    mbs_v3_copy(prev.axis, axes[k]);
    mbs_wrap_remember(&mem, &prev);
    EXPECT_TRUE(mem.valid);
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, &mem, &err));
    EXPECT_NEAR(r.length, expect, 1e-12);
    EXPECT_ABS(mbs_v3_dot(r.r1, axes[k]), 0, 1e-15);
    EXPECT_ABS(mbs_v3_dot(r.r2, axes[k]), 0, 1e-15);
    double c[3];  // turning positively about the remembered axis
    mbs_v3_cross(c, r.r1, r.path[1]);
    EXPECT_TRUE(mbs_v3_dot(c, axes[k]) > 0);
    mbs_wrap_result none;
    memset(&none, 0, sizeof none);
    mbs_wrap_remember(&mem, &none);  // no wrap: forget
    EXPECT_TRUE(!mem.valid);
  }
}

// the cylinder's wrap against the unrolled helix on the side `shortside` (1: the arc on the
// segment's side, 0: the other)
static void check_cylinder_wrap(const mbs_wrap_result* r, double R, const double p1[3],
                                const double p2[3], int shortside, double tol) {
  const double q1[3] = {p1[0], p1[1], 0}, q2[3] = {p2[0], p2[1], 0};
  const double d1 = mbs_v3_norm(q1), d2 = mbs_v3_norm(q2), g = angle3(q1, q2);
  const double sweep = shortside ? g : 2 * M_PI - g;
  const double l1 = sqrt(d1 * d1 - R * R), l2 = sqrt(d2 * d2 - R * R);
  const double arc = planar_arc(d1, d2, sweep, R), horizontal = l1 + arc + l2;
  const double dz = p2[2] - p1[2];
  // unrolled, the path is one straight line of run `horizontal` and rise dz
  EXPECT_NEAR(mbs_wrap_path_length(r, p1, p2), hypot(horizontal, dz), tol);
  EXPECT_NEAR(r->r1[2], p1[2] + dz * l1 / horizontal, tol);
  EXPECT_NEAR(r->r2[2], p1[2] + dz * (l1 + arc) / horizontal, tol);
  EXPECT_NEAR(r->length, arc * hypot(1.0, dz / horizontal), tol);
  // tangent points on the surface, tangent seen along the axis
  EXPECT_NEAR(hypot(r->r1[0], r->r1[1]), R, tol);
  EXPECT_NEAR(hypot(r->r2[0], r->r2[1]), R, tol);
  EXPECT_ABS(((p1[0] - r->r1[0]) * r->r1[0] + (p1[1] - r->r1[1]) * r->r1[1]) / (l1 * R), 0, tol);
  EXPECT_ABS(((p2[0] - r->r2[0]) * r->r2[0] + (p2[1] - r->r2[1]) * r->r2[1]) / (l2 * R), 0, tol);
  // constant slope: straight piece, helix, straight piece
  const double slope = dz / horizontal;
  EXPECT_NEAR((r->r1[2] - p1[2]) / hypot(r->r1[0] - p1[0], r->r1[1] - p1[1]), slope, tol);
  EXPECT_NEAR((p2[2] - r->r2[2]) / hypot(r->r2[0] - p2[0], r->r2[1] - p2[1]), slope, tol);
  for (int k = 0; k < r->npath; k++)
    EXPECT_NEAR(hypot(r->path[k][0], r->path[k][1]), R, tol);
}

static void test_cylinder(void) {
  mbs_test_rng rng = {0xc0ffee77ULL};
  mbs_error err;
  int nwrap = 0, nmiss = 0;
  for (int trial = 0; trial < 400; trial++) {
    const double R = mbs_test_uniform(&rng, 0.01, 0.05);
    const double a1 = mbs_test_uniform(&rng, -M_PI, M_PI), a2 = mbs_test_uniform(&rng, -M_PI, M_PI);
    const double d1 = R * mbs_test_uniform(&rng, 1.05, 5), d2 = R * mbs_test_uniform(&rng, 1.05, 5);
    const double p1[3] = {d1 * cos(a1), d1 * sin(a1), mbs_test_uniform(&rng, -0.2, 0.2)};
    const double p2[3] = {d2 * cos(a2), d2 * sin(a2), mbs_test_uniform(&rng, -0.2, 0.2)};
    const double q1[3] = {p1[0], p1[1], 0}, q2[3] = {p2[0], p2[1], 0};
    int inside;
    const double h = segment_distance(q1, q2, &inside);
    if (fabs(h - R) < 1e-6 * R) continue;
    const mbs_wrap_object o = cylinder_object(R, INFINITY, MBS_WRAP_ALL);
    mbs_wrap_result r;
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    if (h < R && inside) {
      nwrap++;
      EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
      check_cylinder_wrap(&r, R, p1, p2, 1, 1e-10);
    } else {
      nmiss++;
      EXPECT_EQ_INT(r.action, MBS_WRAP_NONE);
    }
  }
  EXPECT_TRUE(nwrap > 50 && nmiss > 50);

  const double R = 0.03;
  // finite length: the tangent points of this path lie at heights z1 and z2
  {
    const double p1[3] = {-3 * R, -0.5 * R, 0.5}, p2[3] = {3 * R, -0.5 * R, 0.9};
    const double u1[3] = {-3, -0.5, 0}, u2[3] = {3, -0.5, 0};
    const double d = hypot(3, 0.5) * R, g = angle3(u1, u2);
    const double l = sqrt(d * d - R * R), arc = planar_arc(d, d, g, R), run = 2 * l + arc;
    const double z1 = 0.5 + 0.4 * l / run, z2 = 0.5 + 0.4 * (l + arc) / run;
    mbs_wrap_result r;
    mbs_wrap_object o = cylinder_object(R, 2 * (z1 - 1e-6), MBS_WRAP_ALL);  // both beyond
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_NONE);
    o.length = 2 * (z1 + 1e-6);  // r1 within
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
    check_cylinder_wrap(&r, R, p1, p2, 1, 1e-10);
    o.length = 2 * (z2 + 1e-6);
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
  }
  // quadrants +y and -y: the two sides of the same path
  {
    const double p1[3] = {-3 * R, 0.3 * R, 0}, p2[3] = {2.5 * R, 0.2 * R, 0.2};
    mbs_wrap_result r;
    mbs_wrap_object o = cylinder_object(R, 10, MBS_WRAP_POS_Y);
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
    check_cylinder_wrap(&r, R, p1, p2, 1, 1e-10);
    EXPECT_TRUE(r.r1[1] > 0 && r.r2[1] > 0);
    o.quadrant = MBS_WRAP_NEG_Y;  // neither point in -y: OpenSim wraps round the -y side
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_WRAPPED);
    check_cylinder_wrap(&r, R, p1, p2, 0, 1e-10);
    EXPECT_TRUE(r.r1[1] < 0 && r.r2[1] < 0);
    EXPECT_TRUE(r.path[MBS_WRAP_PATH_POINTS / 2][1] < -0.9 * R);
    o.quadrant = MBS_WRAP_ALL;  // the shorter: over the top
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    check_cylinder_wrap(&r, R, p1, p2, 1, 1e-10);
  }
  // OpenSim's cases for a segment missing the cylinder with quadrant +y
  {
    mbs_wrap_result r;
    const mbs_wrap_object o = cylinder_object(R, 10, MBS_WRAP_POS_Y);
    // both points below, the segment passes below: pulled round the top anyway
    const double a1[3] = {-3 * R, -2 * R, 0}, a2[3] = {3 * R, -1.5 * R, 0.1};
    EXPECT_OK(mbs_wrap_segment(&r, &o, a1, a2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_WRAPPED);
    check_cylinder_wrap(&r, R, a1, a2, 0, 1e-10);
    EXPECT_TRUE(r.path[MBS_WRAP_PATH_POINTS / 2][1] > 0.9 * R);
    // one point above, the segment passes below the axis: pulled round the top
    const double b1[3] = {-3 * R, 0.5 * R, 0}, b2[3] = {3 * R, -4 * R, -0.1};
    EXPECT_OK(mbs_wrap_segment(&r, &o, b1, b2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_WRAPPED);
    check_cylinder_wrap(&r, R, b1, b2, 0, 1e-10);
    // both points above, the segment passes above: free
    const double c1[3] = {-3 * R, 1.5 * R, 0}, c2[3] = {3 * R, 1.2 * R, 0};
    EXPECT_OK(mbs_wrap_segment(&r, &o, c1, c2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_NONE);
    // one point above, the segment passes above the axis beside the cylinder: free
    const double e1[3] = {-3 * R, 3 * R, 0}, e2[3] = {3 * R, -0.5 * R, 0};
    EXPECT_OK(mbs_wrap_segment(&r, &o, e1, e2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_NONE);
    // a point inside
    const double f1[3] = {0.5 * R, 0, 3}, f2[3] = {3 * R, 0, 0};
    EXPECT_OK(mbs_wrap_segment(&r, &o, f1, f2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_INSIDE);
  }
}

// point of the ellipse (A cos t, B sin t) where the tangent passes through (x, y), on the side
// of positive y
static double ellipse_tangent_anomaly_upper(double A, double B, double x, double y) {
  const double psi = atan2(y / B, x / A), rho = hypot(x / A, y / B), b = acos(1 / rho);
  return sin(psi + b) > 0 ? psi + b : psi - b;
}

static void test_ellipsoid_principal_plane(void) {
  mbs_error err;
  const double A = 0.04, B = 0.02, C = 0.03;  // the path lies in z = 0; c is not the smallest
  const double p1[3] = {-0.1, 0.005, 0}, p2[3] = {0.09, 0.012, 0};
  // the chord's middle lies above the x axis: c1 and the path on top
  const double t1 = ellipse_tangent_anomaly_upper(A, B, p1[0], p1[1]);
  const double t2 = ellipse_tangent_anomaly_upper(A, B, p2[0], p2[1]);
  const double T1[3] = {A * cos(t1), B * sin(t1), 0}, T2[3] = {A * cos(t2), B * sin(t2), 0};
  double arc = 0;
  const int n = 200000;
  for (int k = 0; k < n; k++) {
    const double ta = t1 + (t2 - t1) * k / n, tb = t1 + (t2 - t1) * (k + 1) / n;
    arc += hypot(A * (cos(tb) - cos(ta)), B * (sin(tb) - sin(ta)));
  }
  const double total = dist3(p1, T1) + arc + dist3(T2, p2);
  for (int m = 0; m < MBS_WRAP_METHOD_COUNT; m++) {
    const mbs_wrap_object o = ellipsoid_object(A, B, C, (mbs_wrap_method)m);
    mbs_wrap_result r;
    EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
    EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
    for (int i = 0; i < 3; i++) {
      EXPECT_ABS(r.r1[i], T1[i], 1e-12);
      EXPECT_ABS(r.r2[i], T2[i], 1e-12);
    }
    EXPECT_NEAR(r.length, arc, 1e-11);
    EXPECT_NEAR(mbs_wrap_path_length(&r, p1, p2), total, 1e-11);
  }
}

// a = b = c: every method gives the sphere's great circle
static void test_ellipsoid_sphere(void) {
  mbs_test_rng rng = {0xe111950dULL};
  mbs_error err;
  for (int m = 0; m < MBS_WRAP_METHOD_COUNT; m++) {
    int nwrap = 0;
    for (int trial = 0; trial < 300; trial++) {
      const double R = mbs_test_uniform(&rng, 0.02, 0.1);
      double u1[3], u2[3], p1[3], p2[3];
      random_direction(&rng, u1);
      random_direction(&rng, u2);
      mbs_v3_scale(p1, u1, R * mbs_test_uniform(&rng, 1.05, 5));
      mbs_v3_scale(p2, u2, R * mbs_test_uniform(&rng, 1.05, 5));
      int inside;
      const double h = segment_distance(p1, p2, &inside);
      if (fabs(h - R) < 1e-6 * R || h < 1e-3 * R) continue;
      const mbs_wrap_object o = ellipsoid_object(R, R, R, (mbs_wrap_method)m);
      mbs_wrap_result r;
      EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
      if (h < R && inside) {
        nwrap++;
        EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
        check_sphere_wrap(&r, R, p1, p2, 1, 1e-9);
      } else {
        EXPECT_EQ_INT(r.action, MBS_WRAP_NONE);
      }
    }
    EXPECT_TRUE(nwrap > 20);
  }
}

// general ellipsoids: tangency, planarity and the bounds
static void test_ellipsoid_general(void) {
  mbs_test_rng rng = {0xab5c1553ULL};
  mbs_error err;
  const double a[3] = {0.04, 0.025, 0.015}, Rmax = 0.04;
  for (int m = 0; m < MBS_WRAP_METHOD_COUNT; m++) {
    const mbs_wrap_object o = ellipsoid_object(a[0], a[1], a[2], (mbs_wrap_method)m);
    int nwrap = 0;
    for (int trial = 0; trial < 400; trial++) {
      double u1[3], u2[3], p1[3], p2[3];
      random_direction(&rng, u1);
      random_direction(&rng, u2);
      mbs_v3_scale(p1, u1, mbs_test_uniform(&rng, 1.1, 3) * Rmax);
      mbs_v3_scale(p2, u2, mbs_test_uniform(&rng, 1.1, 3) * Rmax);
      mbs_wrap_result r;
      EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
      if (!wrapped(&r)) continue;
      nwrap++;
      for (int k = 0; k < r.npath; k++) {  // on the surface
        double e = -1;
        for (int i = 0; i < 3; i++) e += (r.path[k][i] / a[i]) * (r.path[k][i] / a[i]);
        EXPECT_ABS(e, 0, 1e-12);
      }
      double t1 = 0, t2 = 0;  // p lies in the tangent plane at r: sum r_i p_i / a_i^2 = 1
      for (int i = 0; i < 3; i++) {
        t1 += r.r1[i] * p1[i] / (a[i] * a[i]);
        t2 += r.r2[i] * p2[i] / (a[i] * a[i]);
      }
      EXPECT_ABS(t1, 1, 1e-11);
      EXPECT_ABS(t2, 1, 1e-11);
      // the plane of p1, p2 and the path
      double d[3], w[3], n[3];
      mbs_v3_sub(d, p2, p1);
      mbs_v3_sub(w, r.path[MBS_WRAP_PATH_POINTS / 2], p1);
      mbs_v3_cross(n, d, w);
      const double nn = mbs_v3_norm(n);
      if (nn < 1e-6 * mbs_v3_norm(d) * mbs_v3_norm(w)) continue;
      mbs_v3_scale(n, n, 1 / nn);
      for (int k = 0; k < r.npath; k++) {
        double q[3];
        mbs_v3_sub(q, r.path[k], p1);
        EXPECT_ABS(mbs_v3_dot(q, n), 0, 1e-12);
      }
      // bounds: the straight line below; above, the same side's wrap round the section of
      // the circumscribed sphere by that plane (a disc containing the ellipse's section)
      const double L = mbs_wrap_path_length(&r, p1, p2);
      EXPECT_TRUE(L >= dist3(p1, p2) * (1 - 1e-14));
      const double off = mbs_v3_dot(p1, n), rho = sqrt(Rmax * Rmax - off * off);
      double o1[3], o2[3], oc[3], x[3];
      mbs_v3_scale(oc, n, off);  // the disc's centre
      mbs_v3_sub(o1, p1, oc);
      mbs_v3_sub(o2, p2, oc);
      mbs_v3_cross(x, d, o1);  // -(d x (oc - p1)) = d x o1: the centre's side, negated
      const int centre_side = -mbs_v3_dot(x, n) > 0;
      const int wrap_side = 1;  // w was the path's midpoint, n = d x w
      const double g = angle3(o1, o2);
      const double sweep = centre_side == wrap_side ? 2 * M_PI - g : g;
      const double bound = planar_total(mbs_v3_norm(o1), mbs_v3_norm(o2), sweep, rho);
      EXPECT_TRUE(L <= bound * (1 + 1e-12));
    }
    EXPECT_TRUE(nwrap > 20);
  }
}

// the total length while p1 and p2 move by step * dir1, step * dir2, n steps: no jump larger
// than factor * step * (|dir1| + |dir2|); with `onset`, the path wraps at some positions and
// not at others
static void check_sweep(const mbs_wrap_object* o, const double start1[3], const double dir1[3],
                        const double start2[3], const double dir2[3], double step, int n,
                        double factor, int onset) {
  mbs_error err;
  double last = 0, worst = 0;
  int nw = 0;
  for (int k = 0; k <= n; k++) {
    double p1[3], p2[3];
    mbs_v3_copy(p1, start1);
    mbs_v3_axpy(p1, k * step, dir1);
    mbs_v3_copy(p2, start2);
    mbs_v3_axpy(p2, k * step, dir2);
    mbs_wrap_result r;
    EXPECT_OK(mbs_wrap_segment(&r, o, p1, p2, NULL, &err));
    nw += wrapped(&r);
    const double L = mbs_wrap_path_length(&r, p1, p2);
    if (k > 0 && fabs(L - last) > worst) worst = fabs(L - last);
    last = L;
  }
  if (onset)
    EXPECT_TRUE(nw > n / 10 && nw < n - n / 10);
  else
    EXPECT_EQ_INT(nw, n + 1);
  const double bound = factor * step * (mbs_v3_norm(dir1) + mbs_v3_norm(dir2)) + 1e-15;
  EXPECT_TRUE(worst <= bound);
  if (!(worst <= bound))
    fprintf(stderr, "  %s (%s): largest change %.3g for a step of %.3g\n",
            mbs_wrap_shape_name(o->shape), mbs_wrap_method_name(o->method), worst, step);
}

// the torus: paths in the meridian plane y = 0 against the planar wrap round the tube's
// section, a circle of radius r about (R, 0, 0), on its side facing the hole
static void check_torus_meridian(const mbs_wrap_result* res, double r, double R,
                                 const double p1[3], const double p2[3], double rot) {
  // back to the plane y = 0
  const double c = cos(-rot), s = sin(-rot);
  double q1[3], q2[3], t1[3], t2[3];
  const double* src[4] = {p1, p2, res->r1, res->r2};
  double* dst[4] = {q1, q2, t1, t2};
  for (int k = 0; k < 4; k++)
    mbs_v3_set(dst[k], c * src[k][0] - s * src[k][1], s * src[k][0] + c * src[k][1], src[k][2]);
  // in-plane coordinates about the tube's centre
  const double a1[3] = {q1[0] - R, q1[2], 0}, a2[3] = {q2[0] - R, q2[2], 0};
  const double hole[3] = {-r, 0, 0};
  double d[3], w[3], x[3];
  mbs_v3_sub(d, a2, a1);
  mbs_v3_sub(w, hole, a1);
  mbs_v3_cross(x, d, w);
  const int hole_side = x[2] > 0;
  mbs_v3_scale(w, a1, -1);  // the centre's side
  mbs_v3_cross(x, d, w);
  const int centre_side = x[2] > 0;
  const double g = angle3(a1, a2), sweep = hole_side == centre_side ? 2 * M_PI - g : g;
  const double d1 = mbs_v3_norm(a1), d2 = mbs_v3_norm(a2);
  EXPECT_NEAR(res->length, planar_arc(d1, d2, sweep, r), 1e-10);
  EXPECT_NEAR(mbs_wrap_path_length(res, p1, p2), planar_total(d1, d2, sweep, r), 1e-10);
  EXPECT_ABS(t1[1], 0, 1e-12);
  EXPECT_ABS(t2[1], 0, 1e-12);
  EXPECT_NEAR(hypot(t1[0] - R, t1[2]), r, 1e-12);
  EXPECT_NEAR(hypot(t2[0] - R, t2[2]), r, 1e-12);
  const double* mid = res->path[MBS_WRAP_PATH_POINTS / 2];
  EXPECT_TRUE(hypot(mid[0], mid[1]) < R);  // round the inner side
}

static void test_torus(void) {
  mbs_error err;
  const double r = 0.02, R = 0.1;
  const mbs_wrap_object o = torus_object(r, R);
  for (int k = 0; k < 3; k++) {
    const double rot = k * 0.7, c = cos(rot), s = sin(rot);
    mbs_wrap_result res;
    // crossing the tube: mandatory for the cylinder, "wrapped" as OpenSim reports it
    const double a1[3] = {0.11 * c, 0.11 * s, 0.06}, a2[3] = {0.095 * c, 0.095 * s, -0.05};
    EXPECT_OK(mbs_wrap_segment(&res, &o, a1, a2, NULL, &err));
    EXPECT_EQ_INT(res.action, MBS_WRAP_WRAPPED);
    check_torus_meridian(&res, r, R, a1, a2, rot);
    // both points outside the ring: pulled through the hole
    const double b1[3] = {0.13 * c, 0.13 * s, 0.05}, b2[3] = {0.13 * c, 0.13 * s, -0.05};
    EXPECT_OK(mbs_wrap_segment(&res, &o, b1, b2, NULL, &err));
    EXPECT_EQ_INT(res.action, MBS_WRAP_WRAPPED);
    check_torus_meridian(&res, r, R, b1, b2, rot);
    // through the hole without touching the tube
    const double e1[3] = {0.07 * c, 0.07 * s, 0.05}, e2[3] = {0.075 * c, 0.075 * s, -0.05};
    EXPECT_OK(mbs_wrap_segment(&res, &o, e1, e2, NULL, &err));
    EXPECT_EQ_INT(res.action, MBS_WRAP_NONE);
  }
}

static void test_continuity(void) {
  const int n = getenv("MBS_TEST_QUICK") ? 400 : 4000;
  const double up[3] = {0, 1, 0}, still[3] = {0, 0, 0};
  {  // sphere: p1 rises so that the segment passes from below the sphere to through it
    const mbs_wrap_object o = sphere_object(0.05, MBS_WRAP_ALL);
    const double start[3] = {-0.15, -0.12, 0.01}, p2[3] = {0.15, -0.02, -0.01};
    check_sweep(&o, start, up, p2, still, 0.1 / n, n, 1.0 + 1e-9, 1);
  }
  {  // cylinder, points at different heights
    const mbs_wrap_object o = cylinder_object(0.05, 1, MBS_WRAP_ALL);
    const double start[3] = {-0.15, -0.12, 0.1}, p2[3] = {0.15, -0.02, -0.1};
    check_sweep(&o, start, up, p2, still, 0.1 / n, n, 1.0 + 1e-9, 1);
  }
  for (int m = 0; m < MBS_WRAP_METHOD_COUNT; m++) {
    const mbs_wrap_object o = ellipsoid_object(0.05, 0.03, 0.02, (mbs_wrap_method)m);
    {  // a skew path starting to cross the ellipsoid
      const double start[3] = {-0.12, -0.1, 0.03}, p2[3] = {0.1, 0.0, -0.02};
      const double dir[3] = {0.2, 1, 0.1};
      check_sweep(&o, start, dir, p2, still, 0.1 / n, n, 1.0 + 1e-9, 1);
    }
    {  // a path turning from along x to diagonal: hybrid goes from axial to fan
      const double s1[3] = {-0.08, 0, 0.004}, s2[3] = {0.08, 0.004, 0.002};
      const double d1[3] = {0, 1, 0}, d2[3] = {0, -1, 0};
      check_sweep(&o, s1, d1, s2, d2, 0.12 / n, n, 1.0 + 1e-9, 0);
    }
  }
  {  // torus: a path through the hole starting to touch the tube's inner side
    const mbs_wrap_object o = torus_object(0.02, 0.1);
    const double start[3] = {0.06, 0, 0.06}, p2[3] = {0.085, 0, -0.06}, dx[3] = {1, 0, 0};
    check_sweep(&o, start, dx, p2, still, 0.035 / n, n, 1.0 + 1e-9, 1);
  }
}

// quadrants of an ellipsoid and a torus
static void test_quadrants_ellipsoid_torus(void) {
  mbs_error err;
  const double a[3] = {0.04, 0.03, 0.02};
  const double p1[3] = {-0.1, -0.006, 0.001}, p2[3] = {0.1, -0.01, 0};
  for (int m = 0; m < MBS_WRAP_METHOD_COUNT; m++) {
    mbs_wrap_object o = ellipsoid_object(a[0], a[1], a[2], (mbs_wrap_method)m);
    const mbs_wrap_quadrant qs[3] = {MBS_WRAP_ALL, MBS_WRAP_NEG_Y, MBS_WRAP_POS_Y};
    for (int k = 0; k < 3; k++) {
      o.quadrant = qs[k];
      mbs_wrap_result r;
      EXPECT_OK(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err));
      EXPECT_EQ_INT(r.action, MBS_WRAP_MANDATORY);
      // unconstrained and -y: round the -y, +z side (the short way); +y: c1 mirrored in
      // y = 0, round the +y, +z side
      const double* mid = r.path[MBS_WRAP_PATH_POINTS / 2];
      EXPECT_TRUE(k < 2 ? mid[1] < -0.3 * a[1] : mid[1] > 0.3 * a[1]);
      EXPECT_TRUE(mid[2] > 0.5 * a[2]);
      double t1 = 0, e = -1;
      for (int i = 0; i < 3; i++) {
        t1 += r.r1[i] * p1[i] / (a[i] * a[i]);
        e += (r.r2[i] / a[i]) * (r.r2[i] / a[i]);
      }
      EXPECT_ABS(t1, 1, 1e-11);
      EXPECT_ABS(e, 0, 1e-12);
    }
  }
  // a torus constrained to +x does not wrap a path crossing its tube on the -x side
  mbs_wrap_object o = torus_object(0.02, 0.1);
  const double q1[3] = {-0.11, 0, 0.06}, q2[3] = {-0.095, 0, -0.05};
  mbs_wrap_result r;
  o.quadrant = MBS_WRAP_POS_X;
  EXPECT_OK(mbs_wrap_segment(&r, &o, q1, q2, NULL, &err));
  EXPECT_EQ_INT(r.action, MBS_WRAP_NONE);
  o.quadrant = MBS_WRAP_NEG_X;
  EXPECT_OK(mbs_wrap_segment(&r, &o, q1, q2, NULL, &err));
  EXPECT_EQ_INT(r.action, MBS_WRAP_WRAPPED);
  check_torus_meridian(&r, 0.02, 0.1, q1, q2, M_PI);
}

static void test_parse_and_errors(void) {
  mbs_error err;
  mbs_wrap_quadrant q;
  EXPECT_OK(mbs_wrap_quadrant_parse(&q, " -y ", &err));
  EXPECT_EQ_INT(q, MBS_WRAP_NEG_Y);
  EXPECT_OK(mbs_wrap_quadrant_parse(&q, "x", &err));
  EXPECT_EQ_INT(q, MBS_WRAP_POS_X);
  EXPECT_OK(mbs_wrap_quadrant_parse(&q, "+Z", &err));
  EXPECT_EQ_INT(q, MBS_WRAP_POS_Z);
  EXPECT_OK(mbs_wrap_quadrant_parse(&q, "Unassigned", &err));
  EXPECT_EQ_INT(q, MBS_WRAP_ALL);
  EXPECT_OK(mbs_wrap_quadrant_parse(&q, "All", &err));
  EXPECT_EQ_INT(q, MBS_WRAP_ALL);
  EXPECT_EQ_INT(mbs_wrap_quadrant_parse(&q, "xy", &err), MBS_ERR_PARSE);
  EXPECT_EQ_INT(mbs_wrap_quadrant_parse(&q, "+", &err), MBS_ERR_PARSE);
  mbs_wrap_method m;
  EXPECT_OK(mbs_wrap_method_parse(&m, "MIDPOINT", &err));
  EXPECT_EQ_INT(m, MBS_WRAP_MIDPOINT);
  EXPECT_OK(mbs_wrap_method_parse(&m, " hybrid", &err));
  EXPECT_EQ_INT(m, MBS_WRAP_HYBRID);
  EXPECT_EQ_INT(mbs_wrap_method_parse(&m, "geodesic", &err), MBS_ERR_PARSE);
  EXPECT_TRUE(strstr(err.message, "geodesic") != NULL);
  EXPECT_TRUE(!strcmp(mbs_wrap_quadrant_name(MBS_WRAP_NEG_Z), "-z"));

  const double p1[3] = {1, 0, 0}, p2[3] = {-1, 0, 0};
  mbs_wrap_result r;
  mbs_wrap_object o = sphere_object(-0.1, MBS_WRAP_ALL);
  EXPECT_EQ_INT(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err), MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "WrapSphere 'test_sphere'") == err.message);
  o = torus_object(0.1, 0.05);
  EXPECT_EQ_INT(mbs_wrap_segment(&r, &o, p1, p2, NULL, &err), MBS_ERR_PARAMETER);
  o = sphere_object(0.1, MBS_WRAP_ALL);
  const double bad[3] = {NAN, 0, 0};
  EXPECT_EQ_INT(mbs_wrap_segment(&r, &o, bad, p2, NULL, &err), MBS_ERR_ARGUMENT);
}

int main(void) {
  test_sphere();
  test_sphere_memory();
  test_cylinder();
  test_ellipsoid_principal_plane();
  test_ellipsoid_sphere();
  test_ellipsoid_general();
  test_torus();
  test_quadrants_ellipsoid_torus();
  test_continuity();
  test_parse_and_errors();
  return mbs_test_finish("test_wrap");
}
