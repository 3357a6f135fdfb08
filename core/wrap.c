// Muscle-path wrapping kernels over spheres, cylinders, ellipsoids and tori (OpenSim's
// WrapSphere, WrapCylinder, WrapEllipsoid, WrapTorus): see include/mbs/wrap.h.
//
// Every shape reduces to one planar problem, the path from P1 to P2 around a circle (for the
// ellipsoid, around the unit circle that an affine map makes of its planar section): the
// tangent point from a point at distance d from the centre lies at angle +-acos(R/d) from it,
// and the arc between the tangent points follows from the angle the two points subtend.
#include "mbs/wrap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbs/spatial.h"

#define TWO_PI (2.0 * M_PI)

// OpenSim's constants (SimmMacros.h, WrapEllipsoid.cpp)
#define ROUNDOFF_ERROR 2e-13         // EQUAL_WITHIN_ERROR: "zero" coordinate of a point
#define ELL_INSIDE_TOL 1e-4          // a point with sum (x_i/a_i)^2 - 1 < -this is inside
#define ELL_COLLINEAR_TOL 1e-4       // p1, p2 in the same direction from the centre
#define MU_BLEND_MIN 0.7073          // hybrid: 100 % fan below (must exceed cos 45 deg)
#define MU_BLEND_MAX 0.9             // hybrid: 100 % axial ("Frans") above
#define NUM_FAN_SAMPLES 300
#define SV_BOUNDARY_BLEND 0.3

static const char* const shape_names[MBS_WRAP_SHAPE_COUNT] = {"sphere", "cylinder",
                                                               "ellipsoid", "torus"};
static const char* const class_names[MBS_WRAP_SHAPE_COUNT] = {"WrapSphere", "WrapCylinder",
                                                               "WrapEllipsoid", "WrapTorus"};
static const char* const quadrant_names[MBS_WRAP_QUADRANT_COUNT] = {"all", "+x", "-x", "+y",
                                                                    "-y", "+z", "-z"};
static const char* const method_names[MBS_WRAP_METHOD_COUNT] = {"hybrid", "midpoint", "axial"};

static inline int dsign(double a) { return a >= 0.0 ? 1 : -1; }
static inline double sq(double a) { return a * a; }

// r = a / |a|, or zero when |a| is zero; returns |a|
static double normalize_or_zero(double r[3], const double a[3]) {
  const double n = mbs_v3_norm(a);
  if (n > 0) {
    mbs_v3_scale(r, a, 1.0 / n);
  } else {
    mbs_v3_zero(r);
  }
  return n;
}

//---------------------------------- names and checks -------------------------------------------

const char* mbs_wrap_quadrant_name(mbs_wrap_quadrant q) {
  return (unsigned)q < MBS_WRAP_QUADRANT_COUNT ? quadrant_names[q] : "unknown";
}
const char* mbs_wrap_method_name(mbs_wrap_method m) {
  return (unsigned)m < MBS_WRAP_METHOD_COUNT ? method_names[m] : "unknown";
}
const char* mbs_wrap_shape_name(mbs_wrap_shape s) {
  return (unsigned)s < MBS_WRAP_SHAPE_COUNT ? shape_names[s] : "unknown";
}

static void component_of(const mbs_wrap_object* obj, char comp[MBS_ERROR_COMPONENT_LEN]) {
  const char* cls = (unsigned)obj->shape < MBS_WRAP_SHAPE_COUNT ? class_names[obj->shape]
                                                                 : "wrap object";
  snprintf(comp, MBS_ERROR_COMPONENT_LEN, "%s '%.64s'", cls, obj->name ? obj->name : "");
}

static int positive(double x) { return isfinite(x) && x > 0; }

int mbs_wrap_object_check(const mbs_wrap_object* obj, mbs_error* err) {
  if (!obj) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "wrap", "wrap: no wrap object given");
  char comp[MBS_ERROR_COMPONENT_LEN];
  component_of(obj, comp);
  if ((unsigned)obj->shape >= MBS_WRAP_SHAPE_COUNT)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, comp, "%s: unknown shape %d", comp, (int)obj->shape);
  if ((unsigned)obj->quadrant >= MBS_WRAP_QUADRANT_COUNT)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, comp, "%s: unknown quadrant %d", comp,
                    (int)obj->quadrant);
  if ((unsigned)obj->method >= MBS_WRAP_METHOD_COUNT)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, comp, "%s: unknown wrapping method %d", comp,
                    (int)obj->method);
  switch (obj->shape) {
    case MBS_WRAP_SPHERE:
      if (!positive(obj->radius))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, comp, "%s: the radius must be positive (%g).",
                        comp, obj->radius);
      break;
    case MBS_WRAP_CYLINDER:
      if (!positive(obj->radius))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, comp, "%s: the radius must be positive (%g).",
                        comp, obj->radius);
      if (!(obj->length >= 0))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, comp,
                        "%s: the length must not be negative (%g).", comp, obj->length);
      break;
    case MBS_WRAP_ELLIPSOID:
      for (int i = 0; i < 3; i++)
        if (!positive(obj->dimensions[i]))
          return MBS_FAIL(err, MBS_ERR_PARAMETER, comp,
                          "%s: the dimensions must be positive (%g %g %g).", comp,
                          obj->dimensions[0], obj->dimensions[1], obj->dimensions[2]);
      break;
    case MBS_WRAP_TORUS:
      if (!positive(obj->inner_radius) || !positive(obj->outer_radius) ||
          !(obj->outer_radius > obj->inner_radius))
        return MBS_FAIL(err, MBS_ERR_PARAMETER, comp,
                        "%s: the radii must be positive and the outer radius above the inner "
                        "radius (inner %g, outer %g).",
                        comp, obj->inner_radius, obj->outer_radius);
      break;
    default:
      break;
  }
  return MBS_OK;
}

// copy text without surrounding blanks into buf (n bytes); 0 if it does not fit
static int trimmed(char* buf, size_t n, const char* text) {
  while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r') text++;
  size_t len = strlen(text);
  while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\n' ||
                     text[len - 1] == '\r'))
    len--;
  if (len + 1 > n) return 0;
  memcpy(buf, text, len);
  buf[len] = '\0';
  return 1;
}

int mbs_wrap_quadrant_parse(mbs_wrap_quadrant* q, const char* text, mbs_error* err) {
  if (!q || !text) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "wrap", "wrap: no quadrant given");
  char s[16];
  if (trimmed(s, sizeof s, text)) {
    if (!strcmp(s, "all") || !strcmp(s, "ALL") || !strcmp(s, "All") ||
        !strcmp(s, "Unassigned")) {
      *q = MBS_WRAP_ALL;
      return MBS_OK;
    }
    // "x", "+x", "X", "+X", "-x", "-X" and the same for y, z
    const char* p = s;
    int sign = 1;
    if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
    if (p[0] && !p[1]) {
      int axis = -1;
      if (p[0] == 'x' || p[0] == 'X') axis = 0;
      if (p[0] == 'y' || p[0] == 'Y') axis = 1;
      if (p[0] == 'z' || p[0] == 'Z') axis = 2;
      if (axis >= 0) {
        *q = (mbs_wrap_quadrant)(MBS_WRAP_POS_X + 2 * axis + (sign < 0));
        return MBS_OK;
      }
    }
  }
  return MBS_FAIL(err, MBS_ERR_PARSE, "wrap",
                  "wrap: unknown quadrant '%.40s' (all, +x, -x, +y, -y, +z or -z)", text);
}

int mbs_wrap_method_parse(mbs_wrap_method* m, const char* text, mbs_error* err) {
  if (!m || !text) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "wrap", "wrap: no method given");
  static const char* const spellings[MBS_WRAP_METHOD_COUNT][3] = {
      {"hybrid", "Hybrid", "HYBRID"}, {"midpoint", "Midpoint", "MIDPOINT"},
      {"axial", "Axial", "AXIAL"}};
  char s[16];
  if (trimmed(s, sizeof s, text)) {
    if (!strcmp(s, "Unassigned")) {
      *m = MBS_WRAP_HYBRID;
      return MBS_OK;
    }
    for (int i = 0; i < MBS_WRAP_METHOD_COUNT; i++)
      for (int j = 0; j < 3; j++)
        if (!strcmp(s, spellings[i][j])) {
          *m = (mbs_wrap_method)i;
          return MBS_OK;
        }
  }
  return MBS_FAIL(err, MBS_ERR_PARSE, "wrap",
                  "wrap: unknown wrapping method '%.40s' (hybrid, midpoint or axial)", text);
}

//---------------------------------- the planar problem -----------------------------------------

// The path from P1 to P2 around the circle of radius R about the origin of a plane, turning
// counter-clockwise (s = +1) or clockwise (s = -1) about it: tangent points at angles th1, th2
// and the arc phi >= 0 between them (th2 = th1 + s phi modulo 2 pi). Turning counter-clockwise
// the path keeps the circle on its left, so its arc lies right of the line P1 -> P2; the arc on
// the line's side (the centre being on the other) sweeps the angle g the points subtend, the
// other 2 pi - g, each less the two tangent angles. A negative result (only on the line's
// side when the line misses the circle: no such wrap) is returned as 0.
typedef struct arc2d {
  double th1, th2, phi;
} arc2d;

static arc2d circle_arc(const double p1[2], const double p2[2], double R, int s) {
  const double d1 = hypot(p1[0], p1[1]), d2 = hypot(p2[0], p2[1]);
  const double b1 = d1 > R ? acos(R / d1) : 0.0, b2 = d2 > R ? acos(R / d2) : 0.0;
  const double cr = p1[0] * p2[1] - p1[1] * p2[0], dt = p1[0] * p2[0] + p1[1] * p2[1];
  const double g = atan2(fabs(cr), dt);
  const int centre_left = cr >= 0 ? 1 : -1;  // the centre lies left of P1 -> P2
  double phi = (s == centre_left ? g : TWO_PI - g) - b1 - b2;
  if (phi < 0) phi = 0;
  arc2d a;
  a.th1 = atan2(p1[1], p1[0]) + s * b1;
  a.th2 = atan2(p2[1], p2[0]) - s * b2;
  a.phi = phi;
  return a;
}

// unit vector of a frame axis times a sign
static void axis_vector(double r[3], int axis, double sign) {
  mbs_v3_zero(r);
  r[axis] = sign;
}

// A unit normal e3 of a plane containing the unit vector e1 when the points do not fix it: the
// remembered turning axis made perpendicular to e1; else the plane of e1 and the quadrant's axis;
// else the plane of e1 and the frame axis most perpendicular to it.
static void fallback_normal(double e3[3], const double e1[3], int wrap_axis, int wrap_sign,
                            const mbs_wrap_memory* prev) {
  double m[3];
  if (prev && prev->valid) {
    mbs_v3_copy(m, prev->axis);
    mbs_v3_axpy(m, -mbs_v3_dot(m, e1), e1);
    if (normalize_or_zero(e3, m) > 1e-6) return;
  }
  if (wrap_sign != 0) {
    double w[3];
    axis_vector(w, wrap_axis, 1.0);
    mbs_v3_cross(m, e1, w);
    if (normalize_or_zero(e3, m) > 1e-6) return;
  }
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(e1[i]) < fabs(e1[k])) k = i;
  double w[3];
  axis_vector(w, k, 1.0);
  mbs_v3_cross(m, e1, w);
  normalize_or_zero(e3, m);
}

//---------------------------------- cylinder ---------------------------------------------------

// Cylinder of radius R about the z axis, |z| <= half_length (INFINITY: unbounded), quadrant
// (wrap_axis, wrap_sign), wrap_sign 0 for all. Writes *out only when it wraps.
static mbs_wrap_action cylinder_wrap(mbs_wrap_result* out, double R, double half_length,
                                     int wrap_axis, int wrap_sign, const double p1[3],
                                     const double p2[3], const mbs_wrap_memory* prev) {
  const double d1 = hypot(p1[0], p1[1]), d2 = hypot(p2[0], p2[1]);
  if (d1 < R || d2 < R) return MBS_WRAP_INSIDE;

  // closest approach of the line p1-p2 to the axis (seen along the axis, the closest point of
  // the projected line to the centre): does the segment pass through the cylinder?
  const double q[2] = {p2[0] - p1[0], p2[1] - p1[1]};
  const double qq = q[0] * q[0] + q[1] * q[1];
  const int parallel = !(qq > 1e-24 * sq(d1 > d2 ? d1 : d2));
  double t12 = 0;
  int through = 0;
  if (!parallel) {
    t12 = -(p1[0] * q[0] + p1[1] * q[1]) / qq;
    const double nx = p1[0] + t12 * q[0], ny = p1[1] + t12 * q[1];
    through = nx * nx + ny * ny < R * R && t12 > 0 && t12 < 1;
  }
  double near12[3];
  for (int i = 0; i < 3; i++) near12[i] = p1[i] + t12 * (p2[i] - p1[i]);

  // OpenSim's decision (WrapCylinder::wrapLine)
  mbs_wrap_action action;
  if (wrap_sign == 0) {
    if (!through) return MBS_WRAP_NONE;
    action = MBS_WRAP_MANDATORY;
  } else {
    const int s1 = dsign(p1[wrap_axis]), s2 = dsign(p2[wrap_axis]);
    if (s1 == wrap_sign || s2 == wrap_sign) {
      if (through)
        action = MBS_WRAP_MANDATORY;
      else if (s1 != s2 && dsign(near12[wrap_axis]) != wrap_sign)
        action = MBS_WRAP_WRAPPED;  // passes on the wrong side: pulled round the quadrant
      else
        return MBS_WRAP_NONE;
    } else {
      action = MBS_WRAP_WRAPPED;  // both points off the quadrant: always round it
    }
  }
  if (parallel) return MBS_WRAP_NONE;  // a segment along the axis cannot go round it

  // the turning direction: when the segment misses the circle, only round the far side;
  // else the one toward the quadrant, or the shorter one
  const double P1[2] = {p1[0], p1[1]}, P2[2] = {p2[0], p2[1]};
  const int centre_left = P1[0] * P2[1] - P1[1] * P2[0] >= 0 ? 1 : -1;
  int s;
  if (!through) {
    s = -centre_left;
  } else {
    const arc2d ap = circle_arc(P1, P2, R, 1), am = circle_arc(P1, P2, R, -1);
    double diff = 0;
    if (wrap_sign != 0 && wrap_axis != 2) {
      const double mp = ap.th1 + 0.5 * ap.phi, mm = am.th1 - 0.5 * am.phi;
      diff = wrap_sign * R * (wrap_axis == 0 ? cos(mp) - cos(mm) : sin(mp) - sin(mm));
    }
    if (fabs(diff) > 1e-12 * R)
      s = diff > 0 ? 1 : -1;
    else if (fabs(ap.phi - am.phi) > 1e-12)
      s = ap.phi < am.phi ? 1 : -1;
    else
      s = (prev && prev->valid && prev->axis[2] < 0) ? -1 : 1;
  }
  const arc2d a = circle_arc(P1, P2, R, s);

  // unrolled, the whole path is straight: height in proportion to the horizontal distance
  const double l1 = sqrt(fmax(0.0, d1 * d1 - R * R)), l2 = sqrt(fmax(0.0, d2 * d2 - R * R));
  const double arc = R * a.phi, horizontal = l1 + arc + l2, dz = p2[2] - p1[2];
  const double z1 = horizontal > 0 ? p1[2] + dz * l1 / horizontal : p1[2];
  const double z2 = horizontal > 0 ? p1[2] + dz * (l1 + arc) / horizontal : p2[2];

  // OpenSim: no wrap when both tangent points lie beyond the cylinder's ends
  if ((z1 < -half_length || z1 > half_length) && (z2 < -half_length || z2 > half_length))
    return MBS_WRAP_NONE;

  mbs_v3_set(out->r1, R * cos(a.th1), R * sin(a.th1), z1);
  mbs_v3_set(out->r2, R * cos(a.th2), R * sin(a.th2), z2);
  out->length = hypot(arc, z2 - z1);
  out->npath = MBS_WRAP_PATH_POINTS;
  for (int k = 0; k < MBS_WRAP_PATH_POINTS; k++) {
    const double t = (double)k / (MBS_WRAP_PATH_POINTS - 1), th = a.th1 + s * a.phi * t;
    mbs_v3_set(out->path[k], R * cos(th), R * sin(th), z1 + (z2 - z1) * t);
  }
  mbs_v3_copy(out->path[MBS_WRAP_PATH_POINTS - 1], out->r2);
  const double thm = a.th1 + 0.5 * s * a.phi;
  mbs_v3_set(out->c1, R * cos(thm), R * sin(thm), 0.5 * (z1 + z2));
  mbs_v3_set(out->axis, 0, 0, s);
  return action;
}

//---------------------------------- sphere -----------------------------------------------------

// Sphere of radius R about the origin: the great circle in the plane of the centre, p1 and p2.
// (Round the far side OpenSim's wrap_path_length comes out negative, angle = -(2 pi - angle),
// a sign meant for drawing; the length here is the arc's.)
static mbs_wrap_action sphere_wrap(mbs_wrap_result* out, double R, int wrap_axis,
                                   int wrap_sign, const double p1[3], const double p2[3],
                                   const mbs_wrap_memory* prev) {
  const double n1 = mbs_v3_norm(p1), n2 = mbs_v3_norm(p2);
  if (n1 < R || n2 < R) return MBS_WRAP_INSIDE;

  // both intersections of the line p2 + l (p1 - p2) with the sphere within the segment
  double ri[3];
  mbs_v3_sub(ri, p1, p2);
  const double a = mbs_v3_dot(ri, ri), b = 2.0 * mbs_v3_dot(p2, ri), c = n2 * n2 - R * R;
  const double disc = b * b - 4.0 * a * c;
  if (!(a > 0) || disc < 0) return MBS_WRAP_NONE;
  const double l1 = (-b + sqrt(disc)) / (2.0 * a), l2 = (-b - sqrt(disc)) / (2.0 * a);
  if (!(0.0 < l1 && l1 < 1.0) || !(0.0 < l2 && l2 < 1.0)) return MBS_WRAP_NONE;

  // OpenSim (WrapSphere::wrapLine): "wrapped" unconstrained; constrained, mandatory when a
  // point lies in the quadrant (the segment passes through the sphere)
  mbs_wrap_action action = MBS_WRAP_WRAPPED;
  if (wrap_sign != 0 && (dsign(p1[wrap_axis]) == wrap_sign || dsign(p2[wrap_axis]) == wrap_sign))
    action = MBS_WRAP_MANDATORY;

  // the plane: e1 toward p1, e3 its normal, e2 = e3 x e1
  double e1[3], e2[3], e3[3], cr[3];
  mbs_v3_scale(e1, p1, 1.0 / n1);
  mbs_v3_cross(cr, p1, p2);
  const double ncr = mbs_v3_norm(cr);
  if (ncr > 1e-12 * n1 * n2)
    mbs_v3_scale(e3, cr, 1.0 / ncr);
  else
    fallback_normal(e3, e1, wrap_axis, wrap_sign, prev);  // line through the centre
  mbs_v3_cross(e2, e3, e1);
  const double P1[2] = {n1, 0}, P2[2] = {mbs_v3_dot(p2, e1), mbs_v3_dot(p2, e2)};

  // the segment passes through the sphere: both directions wrap; toward the quadrant, else
  // the shorter one, else (points opposite) positively about e3
  const arc2d ap = circle_arc(P1, P2, R, 1), am = circle_arc(P1, P2, R, -1);
  double diff = 0;
  if (wrap_sign != 0) {
    const double mp = ap.th1 + 0.5 * ap.phi, mm = am.th1 - 0.5 * am.phi;
    diff = wrap_sign * R *
           ((cos(mp) - cos(mm)) * e1[wrap_axis] + (sin(mp) - sin(mm)) * e2[wrap_axis]);
  }
  int s;
  if (fabs(diff) > 1e-12 * R)
    s = diff > 0 ? 1 : -1;
  else if (fabs(ap.phi - am.phi) > 1e-12)
    s = ap.phi < am.phi ? 1 : -1;
  else
    s = 1;
  const arc2d arc = s > 0 ? ap : am;

  for (int i = 0; i < 3; i++) {
    out->r1[i] = R * (cos(arc.th1) * e1[i] + sin(arc.th1) * e2[i]);
    out->r2[i] = R * (cos(arc.th2) * e1[i] + sin(arc.th2) * e2[i]);
  }
  out->length = R * arc.phi;
  out->npath = MBS_WRAP_PATH_POINTS;
  for (int k = 0; k < MBS_WRAP_PATH_POINTS; k++) {
    const double th = arc.th1 + s * arc.phi * k / (MBS_WRAP_PATH_POINTS - 1);
    for (int i = 0; i < 3; i++) out->path[k][i] = R * (cos(th) * e1[i] + sin(th) * e2[i]);
  }
  mbs_v3_copy(out->path[MBS_WRAP_PATH_POINTS - 1], out->r2);
  const double thm = arc.th1 + 0.5 * s * arc.phi;
  for (int i = 0; i < 3; i++) out->c1[i] = R * (cos(thm) * e1[i] + sin(thm) * e2[i]);
  mbs_v3_scale(out->axis, e3, s);
  return action;
}

//---------------------------------- ellipsoid: closest points ----------------------------------

// The root t > -min a_i^2 of sum_i (a_i u_i / (t + a_i^2))^2 = 1 (every u_i nonzero), which
// gives the point x_i = a_i^2 u_i / (t + a_i^2) of the ellipse (n = 2) or ellipsoid (n = 3)
// closest to u (Lagrange; Eberly, Graphics Gems IV, as OpenSim). The function is convex and
// decreasing there; Newton from the left of the root (where one term alone is 1) climbs
// monotonically to it.
static double closest_point_root(int n, const double* a, const double* u) {
  double t = -INFINITY;
  double amin2 = INFINITY;
  for (int i = 0; i < n; i++) {
    const double ti = -a[i] * a[i] + a[i] * fabs(u[i]);
    if (ti > t) t = ti;
    if (a[i] * a[i] < amin2) amin2 = a[i] * a[i];
  }
  for (int it = 0; it < 300; it++) {
    double g = -1.0, dg = 0.0;
    for (int i = 0; i < n; i++) {
      const double d = t + a[i] * a[i], r = a[i] * u[i] / d;
      g += r * r;
      dg -= 2.0 * r * r / d;
    }
    if (!(g > 0) || !(dg < 0)) break;  // at the root (or past it by rounding)
    const double step = -g / dg;
    t += step;
    if (step <= 1e-16 * (fabs(t) + amin2)) break;
  }
  return t;
}

// Point (x, y) of the ellipse (x/a)^2 + (y/b)^2 = 1 closest to (u, v); near the axes the
// special cases of OpenSim's closestPointToEllipse (the evolute's inside: two closest points,
// the one of positive other coordinate).
static void ellipse_closest(double a, double b, double u, double v, double* x, double* y) {
  const int near_x = fabs(u) <= ROUNDOFF_ERROR, near_y = fabs(v) <= ROUNDOFF_ERROR;
  if (near_x && near_y) {
    if (a < b) {
      *x = u < 0 ? -a : a;
      *y = v;
    } else {
      *x = u;
      *y = v < 0 ? -b : b;
    }
    return;
  }
  if (near_x) {
    if (a >= b || fabs(v) >= b - a * a / b) {
      *x = u;
      *y = v >= 0 ? b : -b;
    } else {
      *y = b * b * v / (b * b - a * a);
      *x = a * sqrt(fabs(1 - sq(*y / b)));
    }
    return;
  }
  if (near_y) {
    if (b >= a || fabs(u) >= a - b * b / a) {
      *x = u >= 0 ? a : -a;
      *y = v;
    } else {
      *x = a * a * u / (a * a - b * b);
      *y = b * sqrt(fabs(1 - sq(*x / a)));
    }
    return;
  }
  const double ab[2] = {a, b}, uv[2] = {u, v};
  const double t = closest_point_root(2, ab, uv);
  *x = a * a * u / (t + a * a);
  *y = b * b * v / (t + b * b);
}

// Point x of the ellipsoid with semi-axes a closest to u (OpenSim's findClosestPoint): with
// special = i, or when coordinate i of u is zero (the one leaving the narrowest section when
// several are), within the section through u perpendicular to axis i, x_i = u_i.
static void ellipsoid_closest(double x[3], const double a[3], const double u[3], int special) {
  if (special < 0) {
    double narrowest = INFINITY;
    for (int i = 0; i < 3; i++)
      if (fabs(u[i]) <= ROUNDOFF_ERROR) {
        const double sum = a[(i + 1) % 3] + a[(i + 2) % 3];
        if (narrowest > sum) {
          special = i;
          narrowest = sum;
        }
      }
  }
  if (special == 0) {
    x[0] = u[0];
    ellipse_closest(a[1], a[2], u[1], u[2], &x[1], &x[2]);
  } else if (special == 1) {
    x[1] = u[1];
    ellipse_closest(a[2], a[0], u[2], u[0], &x[2], &x[0]);
  } else if (special == 2) {
    x[2] = u[2];
    ellipse_closest(a[0], a[1], u[0], u[1], &x[0], &x[1]);
  } else {
    const double t = closest_point_root(3, a, u);
    for (int i = 0; i < 3; i++) x[i] = a[i] * a[i] * u[i] / (t + a[i] * a[i]);
  }
}

//---------------------------------- ellipsoid: the wrapping plane ------------------------------

// c1, the surface point that fixes the wrapping plane through p1 and p2 (WrapEllipsoid.cpp,
// "COMPUTE WRAPPING PLANE" and the quadrant flip), in the scaled coordinates. x1, x2: where the
// segment enters and leaves the ellipsoid (x1 on p1's side). Returns whether c1 also tells the
// side of the path; 0 when OpenSim starts its search for the tangent points from x1 and x2
// instead (the axial method when its chord point falls outside the chord, c1 not mirrored).
static int ellipsoid_plane_point(double c1[3], const double a[3], mbs_wrap_method method,
                                  int wrap_axis, int wrap_sign, const double p1p2[3],
                                  const double x1[3], const double x2[3]) {
  double r1r2[3], mid[3], dir[3];
  mbs_v3_sub(r1r2, x2, x1);
  for (int i = 0; i < 3; i++) mid[i] = x1[i] + 0.5 * r1r2[i];
  normalize_or_zero(dir, p1p2);
  int best = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(dir[i]) > fabs(dir[best])) best = i;
  double mu = fabs(dir[best]);
  double fan_weight = -INFINITY;
  int c1_side = 1;

  if (method == MBS_WRAP_HYBRID || method == MBS_WRAP_AXIAL) {
    // "Frans": the chord's point in the principal plane across the most parallel axis, and
    // the closest point of that plane's section
    const double t = -x1[best] / r1r2[best];
    if (method == MBS_WRAP_AXIAL) c1_side = t > 0.0 && t < 1.0;
    double sv[3], c1_axial[3];
    for (int i = 0; i < 3; i++) sv[i] = x1[i] + t * r1r2[i];
    ellipsoid_closest(c1_axial, a, sv, best);
    if (method == MBS_WRAP_HYBRID && mu > MU_BLEND_MIN) {
      // fade the axial result out when its chord point nears the chord's ends
      double s = 1.0;
      if (t < 0.0 || t > 1.0)
        s = 0.0;
      else if (t < SV_BOUNDARY_BLEND)
        s = t / SV_BOUNDARY_BLEND;
      else if (t > 1.0 - SV_BOUNDARY_BLEND)
        s = (1.0 - t) / SV_BOUNDARY_BLEND;
      if (s < 1.0) mu = MU_BLEND_MIN + s * (mu - MU_BLEND_MIN);
    }
    if (method == MBS_WRAP_AXIAL || mu > MU_BLEND_MIN) mbs_v3_copy(c1, c1_axial);
    if (method == MBS_WRAP_HYBRID && mu < MU_BLEND_MAX) {
      // the fan: mean direction from chord points to their closest surface points
      double vsum[3] = {0, 0, 0};
      for (int k = 1; k < NUM_FAN_SAMPLES - 1; k++) {
        const double tt = (double)k / NUM_FAN_SAMPLES;
        double sv_k[3], c_k[3], v[3];
        for (int i = 0; i < 3; i++) sv_k[i] = x1[i] + tt * r1r2[i];
        ellipsoid_closest(c_k, a, sv_k, -1);
        mbs_v3_sub(v, c_k, sv_k);
        normalize_or_zero(v, v);
        mbs_v3_add(vsum, vsum, v);
      }
      normalize_or_zero(vsum, vsum);
      double tip[3];
      mbs_v3_add(tip, mid, vsum);
      if (mu <= MU_BLEND_MIN) {
        ellipsoid_closest(c1, a, tip, -1);
        fan_weight = 1.0;
      } else {
        const double tt = (mu - MU_BLEND_MIN) / (MU_BLEND_MAX - MU_BLEND_MIN);
        double c_fan[3], blend[3];
        ellipsoid_closest(c_fan, a, tip, -1);
        for (int i = 0; i < 3; i++) blend[i] = tt * c1[i] + (1.0 - tt) * c_fan[i];
        ellipsoid_closest(c1, a, blend, -1);
        fan_weight = 1.0 - tt;
      }
    }
  } else {
    ellipsoid_closest(c1, a, mid, -1);  // midpoint
  }

  // quadrant: mirror c1 into it, and when the fan contributed, move it that much toward the
  // mirror plane and back onto the surface. (OpenSim's test for a fan weight not yet set,
  // EQUAL_WITHIN_ERROR(fanWeight, -Infinity), is never true, so without a fan c1 is only
  // mirrored; kept so.)
  if (wrap_sign != 0 && dsign(c1[wrap_axis]) != wrap_sign) {
    const double orig = c1[wrap_axis];
    c1[wrap_axis] = -c1[wrap_axis];
    c1_side = 1;
    if (fan_weight > 1.0) fan_weight = 1.0;
    if (fan_weight > 0.0) {
      const double bisection = 0.5 * (orig + c1[wrap_axis]);
      c1[wrap_axis] += fan_weight * (bisection - c1[wrap_axis]);
      double tc[3];
      mbs_v3_copy(tc, c1);
      ellipsoid_closest(c1, a, tc, -1);
    }
  }
  return c1_side;
}

// length of the arc (A cos th, B sin th) from th0 over dth (either sign): composite 8-point
// Gauss-Legendre, panels no wider than the distance of the integrand's complex singularities
// from the real axis (acosh(1/e)), which keeps the error near rounding
static double ellipse_arc_length(double A, double B, double th0, double dth) {
  static const double x[4] = {0.1834346424956498, 0.5255324099163290, 0.7966664774136267,
                              0.9602898564975363};
  static const double w[4] = {0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
                              0.1012285362903763};
  const double span = fabs(dth);
  if (span == 0) return 0;
  const double big = A > B ? A : B, ratio = (A > B ? B : A) / big;
  if (ratio > 1 - 1e-14) return big * span;
  const double e = sqrt((1 - ratio) * (1 + ratio));
  double h = log((1 + ratio) / e);
  if (h > M_PI / 8) h = M_PI / 8;
  long n = (long)ceil(span / h);
  if (n < 1) n = 1;
  if (n > 4096) n = 4096;
  const double step = dth / n;
  double sum = 0;
  for (long p = 0; p < n; p++) {
    const double c = th0 + (p + 0.5) * step;
    for (int j = 0; j < 4; j++)
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        const double th = c + sgn * 0.5 * step * x[j];
        sum += w[j] * hypot(A * sin(th), B * cos(th));
      }
  }
  return sum * 0.5 * fabs(step);
}

//---------------------------------- ellipsoid --------------------------------------------------

static mbs_wrap_action ellipsoid_wrap(mbs_wrap_result* out, const double dim[3], int wrap_axis,
                                      int wrap_sign, mbs_wrap_method method,
                                      const double p1_in[3], const double p2_in[3],
                                      const mbs_wrap_memory* prev) {
  // OpenSim works in coordinates scaled so that the mean semi-axis is 1 (the fan's unit step
  // and the zero test of coordinates depend on it)
  const double f = 3.0 / (dim[0] + dim[1] + dim[2]);
  double p1[3], p2[3], a[3];
  for (int i = 0; i < 3; i++) {
    p1[i] = f * p1_in[i];
    p2[i] = f * p2_in[i];
    a[i] = f * dim[i];
  }
  double p1e = -1, p2e = -1;
  for (int i = 0; i < 3; i++) {
    p1e += sq(p1[i] / a[i]);
    p2e += sq(p2[i] / a[i]);
  }
  if (p1e < -ELL_INSIDE_TOL || p2e < -ELL_INSIDE_TOL) return MBS_WRAP_INSIDE;
  double u1[3], u2[3];
  normalize_or_zero(u1, p1);
  normalize_or_zero(u2, p2);
  if (fabs(mbs_v3_dot(u1, u2) - 1.0) < ELL_COLLINEAR_TOL) return MBS_WRAP_NONE;

  // both intersections of the line p2 + l (p1 - p2) with the ellipsoid within the segment
  double p1p2[3], f1[3], f2[3];
  mbs_v3_sub(p1p2, p1, p2);
  for (int i = 0; i < 3; i++) {
    f1[i] = p1p2[i] / a[i];
    f2[i] = p2[i] / a[i];
  }
  const double aa = mbs_v3_dot(f1, f1), bb = 2.0 * mbs_v3_dot(f1, f2);
  const double cc = mbs_v3_dot(f2, f2) - 1.0, disc = bb * bb - 4.0 * aa * cc;
  if (!(aa > 0) || disc < 0) return MBS_WRAP_NONE;
  const double l1 = (-bb + sqrt(disc)) / (2.0 * aa), l2 = (-bb - sqrt(disc)) / (2.0 * aa);
  if (!(0.0 < l1 && l1 < 1.0) || !(0.0 < l2 && l2 < 1.0)) return MBS_WRAP_NONE;
  double x1[3], x2[3];
  for (int i = 0; i < 3; i++) {
    x1[i] = p2[i] + l1 * p1p2[i];
    x2[i] = p2[i] + l2 * p1p2[i];
  }

  double c1[3];
  const int c1_side = ellipsoid_plane_point(c1, a, method, wrap_axis, wrap_sign, p1p2, x1, x2);

  // the plane through p1, p2 and c1: e1 along p1 -> p2, n its normal, e2 = n x e1; the path
  // passes on c1's side of the line (turning clockwise about n when c1 lies left of it)
  double e1[3], e2[3], n[3], d1c[3];
  const double seg = normalize_or_zero(e1, p1p2);
  mbs_v3_scale(e1, e1, -1.0);
  mbs_v3_sub(d1c, p1, c1);
  mbs_v3_cross(n, p1p2, d1c);
  const double nn = mbs_v3_norm(n);
  int s;
  if (nn > 1e-12 * seg * mbs_v3_norm(d1c)) {
    mbs_v3_scale(n, n, 1.0 / nn);
    mbs_v3_cross(e2, n, e1);
    double c1p[3];
    mbs_v3_sub(c1p, c1, p1);
    s = mbs_v3_dot(c1p, e2) > 0 ? -1 : 1;
  } else {
    fallback_normal(n, e1, wrap_axis, wrap_sign, prev);  // c1 on the line: no plane
    mbs_v3_cross(e2, n, e1);
    s = 1;
  }

  // the section in the plane, points p1 + u e1 + v e2: w^T M w + 2 b^T w + c0 = 0 with
  // M = E^T D E, D = diag(1/a^2); centre w0 = -M^-1 b, then (w - w0)^T M (w - w0) = k
  double De1[3], De2[3];
  for (int i = 0; i < 3; i++) {
    De1[i] = e1[i] / sq(a[i]);
    De2[i] = e2[i] / sq(a[i]);
  }
  const double m11 = mbs_v3_dot(e1, De1), m12 = mbs_v3_dot(e1, De2), m22 = mbs_v3_dot(e2, De2);
  const double b1 = mbs_v3_dot(p1, De1), b2 = mbs_v3_dot(p1, De2), c0 = p1e;
  const double det = m11 * m22 - m12 * m12;
  const double w0u = -(m22 * b1 - m12 * b2) / det, w0v = -(m11 * b2 - m12 * b1) / det;
  const double k = -(b1 * w0u + b2 * w0v) - c0;
  if (!(k > 0) || !(det > 0)) return MBS_WRAP_NONE;  // (the segment crosses it: not reached)
  // principal axes: gmax (eigenvalue lmax, the shorter semi-axis A), gmin = gmax turned +90
  const double psi = 0.5 * atan2(2.0 * m12, m11 - m22);
  const double gmax[2] = {cos(psi), sin(psi)}, gmin[2] = {-sin(psi), cos(psi)};
  const double lmax = 0.5 * (m11 + m22) + hypot(0.5 * (m11 - m22), m12), lmin = det / lmax;
  const double A = sqrt(k / lmax), B = sqrt(k / lmin);
  double C[3], G1[3], G2[3];
  for (int i = 0; i < 3; i++) {
    C[i] = p1[i] + w0u * e1[i] + w0v * e2[i];
    G1[i] = gmax[0] * e1[i] + gmax[1] * e2[i];
    G2[i] = gmin[0] * e1[i] + gmin[1] * e2[i];
  }
  // scaled by 1/A, 1/B along the axes the section is the unit circle; tangency is kept
  const double y1[2] = {-w0u, -w0v}, y2[2] = {seg - w0u, -w0v};
  const double P1[2] = {(y1[0] * gmax[0] + y1[1] * gmax[1]) / A,
                        (y1[0] * gmin[0] + y1[1] * gmin[1]) / B};
  const double P2[2] = {(y2[0] * gmax[0] + y2[1] * gmax[1]) / A,
                        (y2[0] * gmin[0] + y2[1] * gmin[1]) / B};
#define SECTION_POINT(dst, th)                                                        \
  for (int i_ = 0; i_ < 3; i_++)                                                      \
    (dst)[i_] = C[i_] + A * cos(th) * G1[i_] + B * sin(th) * G2[i_]
  if (!c1_side) {
    // the side whose tangent points lie nearer the entry and exit points, where OpenSim's
    // search for them starts
    double dsum[2];
    for (int j = 0; j < 2; j++) {
      const arc2d aj = circle_arc(P1, P2, 1.0, j ? -1 : 1);
      double t1[3], t2[3];
      SECTION_POINT(t1, aj.th1);
      SECTION_POINT(t2, aj.th2);
      dsum[j] = sqrt(sq(t1[0] - x1[0]) + sq(t1[1] - x1[1]) + sq(t1[2] - x1[2])) +
                sqrt(sq(t2[0] - x2[0]) + sq(t2[1] - x2[1]) + sq(t2[2] - x2[2]));
    }
    s = dsum[1] < dsum[0] ? -1 : 1;
  }
  const arc2d arc = circle_arc(P1, P2, 1.0, s);

  const double inv = 1.0 / f;
  for (int kk = 0; kk < MBS_WRAP_PATH_POINTS; kk++) {
    SECTION_POINT(out->path[kk], arc.th1 + s * arc.phi * kk / (MBS_WRAP_PATH_POINTS - 1));
  }
  SECTION_POINT(out->r1, arc.th1);
  SECTION_POINT(out->r2, arc.th2);
#undef SECTION_POINT
  for (int i = 0; i < 3; i++) {
    out->r1[i] *= inv;
    out->r2[i] *= inv;
    out->c1[i] = inv * c1[i];
    for (int kk = 0; kk < MBS_WRAP_PATH_POINTS; kk++) out->path[kk][i] *= inv;
  }
  mbs_v3_copy(out->path[0], out->r1);
  mbs_v3_copy(out->path[MBS_WRAP_PATH_POINTS - 1], out->r2);
  out->npath = MBS_WRAP_PATH_POINTS;
  out->length = inv * ellipse_arc_length(A, B, arc.th1, s * arc.phi);
  mbs_v3_scale(out->axis, n, s);
  return MBS_WRAP_MANDATORY;
}

//---------------------------------- torus ------------------------------------------------------

// squared distance from the point p + u d (d a unit vector) to the circle of radius R about z
static double circle_distance2(const double p[3], const double d[3], double u, double R) {
  const double x = p[0] + u * d[0], y = p[1] + u * d[1], z = p[2] + u * d[2];
  return sq(hypot(x, y) - R) + z * z;
}

// its derivative in u
static double circle_distance2_du(const double p[3], const double d[3], double u, double R) {
  const double x = p[0] + u * d[0], y = p[1] + u * d[1], z = p[2] + u * d[2];
  const double rho = hypot(x, y);
  if (!(rho > 0)) return 2.0 * z * d[2];
  return 2.0 * (rho - R) * (x * d[0] + y * d[1]) / rho + 2.0 * z * d[2];
}

// a local minimum of the distance within [lo, hi] (which holds one): golden section, then
// bisection on the derivative's sign change
static double circle_distance_minimum(const double p[3], const double d[3], double R, double lo,
                                      double hi) {
  const double g = 0.5 * (sqrt(5.0) - 1.0);
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = circle_distance2(p, d, x1, R), f2 = circle_distance2(p, d, x2, R);
  for (int it = 0; it < 50; it++) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = circle_distance2(p, d, x1, R);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = circle_distance2(p, d, x2, R);
    }
  }
  if (circle_distance2_du(p, d, lo, R) < 0 && circle_distance2_du(p, d, hi, R) > 0) {
    for (int it = 0; it < 64; it++) {
      const double m = 0.5 * (lo + hi);
      if (m <= lo || m >= hi) break;
      if (circle_distance2_du(p, d, m, R) < 0)
        lo = m;
      else
        hi = m;
    }
  }
  return 0.5 * (lo + hi);
}

static mbs_wrap_action torus_wrap(mbs_wrap_result* out, double r, double R, int wrap_axis,
                                  int wrap_sign, const double p1[3], const double p2[3]) {
  // the point of the centre circle closest to the line p1-p2 (OpenSim: the better of two
  // local searches; here every local minimum along the line): unconstrained the closest;
  // constrained the closest whose line point lies in the quadrant, none: no wrap
  double d[3];
  mbs_v3_sub(d, p2, p1);
  const double len = normalize_or_zero(d, d);
  if (!(len > 0)) return MBS_WRAP_NONE;
  const double u0 = -mbs_v3_dot(p1, d);
  double x0[3];
  mbs_v3_copy(x0, p1);
  mbs_v3_axpy(x0, u0, d);
  const double n0 = mbs_v3_norm(x0);
  // farther along the line than this, every point is farther from the circle than x0 is
  const double W = sqrt(sq(n0 + 2.0 * R) - n0 * n0) + R;
  enum { NS = 64 };
  const double h = 2.0 * W / (NS - 1);
  double best = INFINITY, best_u = 0;
  double fprev = circle_distance2(p1, d, u0 - W, R), fcur = circle_distance2(p1, d, u0 - W + h, R);
  for (int i = 1; i < NS - 1; i++) {
    const double ui = u0 - W + i * h, fnext = circle_distance2(p1, d, ui + h, R);
    if (fcur <= fprev && fcur < fnext) {
      const double um = circle_distance_minimum(p1, d, R, ui - h, ui + h);
      const double fm = circle_distance2(p1, d, um, R);
      double xm[3];
      mbs_v3_copy(xm, p1);
      mbs_v3_axpy(xm, um, d);
      const int in_quadrant = wrap_sign == 0 || dsign(xm[wrap_axis]) == wrap_sign;
      if (in_quadrant && hypot(xm[0], xm[1]) > 1e-12 * R && fm < best) {
        best = fm;
        best_u = um;
      }
    }
    fprev = fcur;
    fcur = fnext;
  }
  if (best == INFINITY) return MBS_WRAP_NONE;
  double xm[3];
  mbs_v3_copy(xm, p1);
  mbs_v3_axpy(xm, best_u, d);
  const double rho = hypot(xm[0], xm[1]);
  const double ch[3] = {xm[0] / rho, xm[1] / rho, 0};
  const double c[3] = {R * ch[0], R * ch[1], 0};

  // a cylinder of the tube's radius at c along the circle's tangent: its x axis toward the
  // torus axis, y = -z, and the path must wrap on its +x side (OpenSim: quadrant "+x")
  const double X[3] = {-ch[0], -ch[1], 0}, Y[3] = {0, 0, -1}, Z[3] = {ch[1], -ch[0], 0};
  double q1[3], q2[3], t1[3], t2[3];
  mbs_v3_sub(t1, p1, c);
  mbs_v3_sub(t2, p2, c);
  mbs_v3_set(q1, mbs_v3_dot(X, t1), mbs_v3_dot(Y, t1), mbs_v3_dot(Z, t1));
  mbs_v3_set(q2, mbs_v3_dot(X, t2), mbs_v3_dot(Y, t2), mbs_v3_dot(Z, t2));
  mbs_wrap_result local;
  const mbs_wrap_action act = cylinder_wrap(&local, r, INFINITY, 0, 1, q1, q2, NULL);
  if (act != MBS_WRAP_WRAPPED && act != MBS_WRAP_MANDATORY) return MBS_WRAP_NONE;

  // back to the torus frame; OpenSim reports "wrapped"
#define TORUS_POINT(dst, src)                                         \
  for (int i_ = 0; i_ < 3; i_++)                                      \
    (dst)[i_] = c[i_] + X[i_] * (src)[0] + Y[i_] * (src)[1] + Z[i_] * (src)[2]
  TORUS_POINT(out->r1, local.r1);
  TORUS_POINT(out->r2, local.r2);
  TORUS_POINT(out->c1, local.c1);
  for (int k = 0; k < MBS_WRAP_PATH_POINTS; k++) {
    TORUS_POINT(out->path[k], local.path[k]);
  }
#undef TORUS_POINT
  out->npath = MBS_WRAP_PATH_POINTS;
  out->length = local.length;
  mbs_v3_scale(out->axis, Z, local.axis[2]);
  return MBS_WRAP_WRAPPED;
}

//---------------------------------- entry points -----------------------------------------------

static int finite3(const double v[3]) {
  return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

int mbs_wrap_segment(mbs_wrap_result* out, const mbs_wrap_object* obj, const double p1[3],
                     const double p2[3], const mbs_wrap_memory* prev, mbs_error* err) {
  if (!out || !obj || !p1 || !p2)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "wrap", "wrap: a NULL argument");
  memset(out, 0, sizeof *out);
  const int rc = mbs_wrap_object_check(obj, err);
  if (rc) return rc;
  if (!finite3(p1) || !finite3(p2)) {
    char comp[MBS_ERROR_COMPONENT_LEN];
    component_of(obj, comp);
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, comp,
                    "%s: a path point is not finite ((%g, %g, %g), (%g, %g, %g)).", comp, p1[0],
                    p1[1], p1[2], p2[0], p2[1], p2[2]);
  }
  int wrap_axis = 0, wrap_sign = 0;
  if (obj->quadrant != MBS_WRAP_ALL) {
    wrap_axis = (obj->quadrant - MBS_WRAP_POS_X) / 2;
    wrap_sign = (obj->quadrant - MBS_WRAP_POS_X) % 2 ? -1 : 1;
  }
  mbs_wrap_action action = MBS_WRAP_NONE;
  switch (obj->shape) {
    case MBS_WRAP_SPHERE:
      action = sphere_wrap(out, obj->radius, wrap_axis, wrap_sign, p1, p2, prev);
      break;
    case MBS_WRAP_CYLINDER:
      action = cylinder_wrap(out, obj->radius, 0.5 * obj->length, wrap_axis, wrap_sign, p1, p2,
                             prev);
      break;
    case MBS_WRAP_ELLIPSOID:
      action = ellipsoid_wrap(out, obj->dimensions, wrap_axis, wrap_sign, obj->method, p1, p2,
                              prev);
      break;
    case MBS_WRAP_TORUS:
      action = torus_wrap(out, obj->inner_radius, obj->outer_radius, wrap_axis, wrap_sign, p1,
                          p2);
      break;
    default:
      break;
  }
  if (action != MBS_WRAP_WRAPPED && action != MBS_WRAP_MANDATORY) {
    memset(out, 0, sizeof *out);
    out->action = action;
    return MBS_OK;
  }
  out->action = action;
  int ok = finite3(out->r1) && finite3(out->r2) && finite3(out->axis) && isfinite(out->length);
  for (int k = 0; k < out->npath; k++) ok = ok && finite3(out->path[k]);
  if (!ok) {
    char comp[MBS_ERROR_COMPONENT_LEN];
    component_of(obj, comp);
    memset(out, 0, sizeof *out);
    return MBS_FAIL(err, MBS_ERR_NAN, comp,
                    "%s: the wrap of the segment (%g, %g, %g)-(%g, %g, %g) is not finite.", comp,
                    p1[0], p1[1], p1[2], p2[0], p2[1], p2[2]);
  }
  return MBS_OK;
}

double mbs_wrap_path_length(const mbs_wrap_result* res, const double p1[3], const double p2[3]) {
  double d[3];
  if (res && (res->action == MBS_WRAP_WRAPPED || res->action == MBS_WRAP_MANDATORY)) {
    double sum = res->length;
    mbs_v3_sub(d, p1, res->r1);
    sum += mbs_v3_norm(d);
    mbs_v3_sub(d, res->r2, p2);
    return sum + mbs_v3_norm(d);
  }
  mbs_v3_sub(d, p1, p2);
  return mbs_v3_norm(d);
}

void mbs_wrap_remember(mbs_wrap_memory* mem, const mbs_wrap_result* res) {
  if (!mem) return;
  memset(mem, 0, sizeof *mem);
  if (!res || (res->action != MBS_WRAP_WRAPPED && res->action != MBS_WRAP_MANDATORY)) return;
  mem->valid = 1;
  mbs_v3_copy(mem->r1, res->r1);
  mbs_v3_copy(mem->r2, res->r2);
  mbs_v3_copy(mem->c1, res->c1);
  mbs_v3_copy(mem->axis, res->axis);
}
