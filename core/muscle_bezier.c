// Millard 2012's muscle curves as C2 quintic Bezier splines (Millard, Uchida, Seth & Delp,
// J Biomech Eng 135(2):021005, 2013; OpenSim's SmoothSegmentedFunction and the control-point
// placement of SmoothSegmentedFunctionFactory).
//
// A segment is B(u) = sum_i C(5,i) u^i (1-u)^(5-i) P_i, u in [0, 1], with control points
// P0, M, M, N, N, P5: B'(0) points from P0 to M and B''(0) = 20 (P0 - M) is parallel to it
// (zero curvature), likewise at u = 1, so segments that share an end point and slope join
// with equal first and (zero) second derivatives. x(u) is monotone on every segment, so y(x)
// is found by solving x(u) = x for u (Newton's method kept inside a shrinking bracket).
#include "mbs/muscle.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

static double scale_curviness(double curviness) { return 0.1 + 0.8 * curviness; }

int mbs_bezier_corner(double x0, double y0, double dydx0, double x1, double y1, double dydx1,
                      double c, double px[6], double py[6], mbs_error* err) {
  // where the tangent lines y0 + dydx0 (x - x0) and y1 + dydx1 (x - x1) meet
  double xc;
  if (fabs(dydx0 - dydx1) > sqrt(DBL_EPSILON))
    xc = (y1 - y0 - x1 * dydx1 + x0 * dydx0) / (dydx0 - dydx1);
  else
    xc = 0.5 * (x0 + x1);
  const double yc = y1 + (xc - x1) * dydx1;
  // a C-shaped corner: the ends are farther apart than either end is from the meeting point
  const double a2 = (xc - x0) * (xc - x0) + (yc - y0) * (yc - y0);
  const double b2 = (xc - x1) * (xc - x1) + (yc - y1) * (yc - y1);
  const double c2 = (x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0);
  if (!(c2 > a2 && c2 > b2))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "Bezier corner",
                    "Bezier corner: the points (%g, %g) with slope %g and (%g, %g) with slope %g "
                    "do not form a C-shaped corner",
                    x0, y0, dydx0, x1, y1, dydx1);
  const double mx = x0 + c * (xc - x0), my = y0 + c * (yc - y0);
  const double nx = x1 + c * (xc - x1), ny = y1 + c * (yc - y1);
  px[0] = x0; px[1] = px[2] = mx; px[3] = px[4] = nx; px[5] = x1;
  py[0] = y0; py[1] = py[2] = my; py[3] = py[4] = ny; py[5] = y1;
  return MBS_OK;
}

// B(u), B'(u), B''(u) of a quintic with control values p[0..5]
static void bezier5(const double p[6], double u, double d[3]) {
  const double t = 1 - u;
  const double u2 = u * u, u3 = u2 * u, u4 = u3 * u, t2 = t * t, t3 = t2 * t, t4 = t3 * t;
  d[0] = t4 * t * p[0] + 5 * u * t4 * p[1] + 10 * u2 * t3 * p[2] + 10 * u3 * t2 * p[3] +
         5 * u4 * t * p[4] + u4 * u * p[5];
  d[1] = 5 * (t4 * (p[1] - p[0]) + 4 * u * t3 * (p[2] - p[1]) + 6 * u2 * t2 * (p[3] - p[2]) +
              4 * u3 * t * (p[4] - p[3]) + u4 * (p[5] - p[4]));
  d[2] = 20 * (t3 * (p[2] - 2 * p[1] + p[0]) + 3 * u * t2 * (p[3] - 2 * p[2] + p[1]) +
               3 * u2 * t * (p[4] - 2 * p[3] + p[2]) + u3 * (p[5] - 2 * p[4] + p[3]));
}

// the u in [0, 1] with s(u) = target for a segment nondecreasing in s
static double solve_u(const double s[6], double target) {
  const double span = s[5] - s[0];
  if (!(span > 0)) return 0;
  if (target <= s[0]) return 0;
  if (target >= s[5]) return 1;
  const double tol = 4 * DBL_EPSILON * (fabs(s[0]) + fabs(s[5]) + fabs(target));
  double lo = 0, hi = 1;
  double u = (target - s[0]) / span;
  for (int it = 0; it < 100; it++) {
    double d[3];
    bezier5(s, u, d);
    const double f = d[0] - target;
    if (fabs(f) <= tol) break;
    if (f < 0) lo = u;
    else hi = u;
    double un = (d[1] > 0) ? u - f / d[1] : -1;
    if (!(un > lo && un < hi)) un = 0.5 * (lo + hi);  // Newton left the bracket: bisect
    if (hi - lo <= 2 * DBL_EPSILON) {
      u = 0.5 * (lo + hi);
      break;
    }
    u = un;
  }
  return u;
}

// evaluate the curve with abscissa a and ordinate b (a = x for y(x), a = y for x(y))
static void curve_eval(const mbs_bezier_curve* c, int inverse, double s, double d[3]) {
  const double a_lo = inverse ? c->y_lo : c->x_lo, a_hi = inverse ? c->y_hi : c->x_hi;
  const double b_lo = inverse ? c->x_lo : c->y_lo, b_hi = inverse ? c->x_hi : c->y_hi;
  if (s < a_lo || s > a_hi) {
    const int hi = s > a_hi;
    double slope = hi ? c->dydx_hi : c->dydx_lo;
    if (inverse) slope = 1 / slope;
    d[0] = (hi ? b_hi : b_lo) + slope * (s - (hi ? a_hi : a_lo));
    d[1] = slope;
    d[2] = 0;
    return;
  }
  int k = 0;
  const double(*pa)[6] = inverse ? c->py : c->px;
  const double(*pb)[6] = inverse ? c->px : c->py;
  while (k < c->nseg - 1 && s > pa[k][5]) k++;
  const double u = solve_u(pa[k], s);
  double da[3], db[3];
  bezier5(pa[k], u, da);
  bezier5(pb[k], u, db);
  d[0] = db[0];
  d[1] = db[1] / da[1];
  d[2] = (db[2] * da[1] - da[2] * db[1]) / (da[1] * da[1] * da[1]);
}

void mbs_bezier_curve_eval(const mbs_bezier_curve* c, double x, double d[3]) {
  curve_eval(c, 0, x, d);
}

void mbs_bezier_curve_eval_inverse(const mbs_bezier_curve* c, double y, double d[3]) {
  curve_eval(c, 1, y, d);
}

// append corner segments given as rows (x0, y0, dydx0, x1, y1, dydx1)
static int build_curve(mbs_bezier_curve* c, int nseg, const double seg[][6], double curv,
                       const double* curv_per_seg, mbs_error* err) {
  c->nseg = nseg;
  for (int k = 0; k < nseg; k++) {
    const double* s = seg[k];
    const double cc = curv_per_seg ? curv_per_seg[k] : curv;
    const int rc = mbs_bezier_corner(s[0], s[1], s[2], s[3], s[4], s[5], cc, c->px[k], c->py[k],
                                     err);
    if (rc) return rc;
  }
  c->x_lo = seg[0][0];
  c->y_lo = seg[0][1];
  c->dydx_lo = seg[0][2];
  c->x_hi = seg[nseg - 1][3];
  c->y_hi = seg[nseg - 1][4];
  c->dydx_hi = seg[nseg - 1][5];
  return MBS_OK;
}

static int curviness_ok(double curviness, const char* curve, mbs_error* err) {
  if (!(curviness >= 0 && curviness <= 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, curve, "%s: curviness must be in [0, 1], got %g",
                    curve, curviness);
  return MBS_OK;
}

int mbs_millard_active_force_length_curve(mbs_bezier_curve* c, double l_min, double l_transition,
                                          double l_max, double shallow_slope, double min_value,
                                          double curviness, mbs_error* err) {
  const char* name = "Millard active force-length curve";
  const double x0 = l_min, x1 = l_transition, x2 = 1.0, x3 = l_max, gap = sqrt(DBL_EPSILON);
  if (!(x0 >= 0 && x1 > x0 + gap && x2 > x1 + gap && x3 > x2 + gap))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: need 0 <= min length (%g) < transition length (%g) < 1 < max length "
                    "(%g)",
                    name, x0, x1, x3);
  if (!(min_value >= 0 && min_value < 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name, "%s: minimum value %g must be in [0, 1)",
                    name, min_value);
  if (!(shallow_slope >= 0 && shallow_slope < (1 - min_value) / (x2 - x1)))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: shallow ascending slope %g must be in [0, %g)", name, shallow_slope,
                    (1 - min_value) / (x2 - x1));
  int rc = curviness_ok(curviness, name, err);
  if (rc) return rc;
  const double cc = scale_curviness(curviness);
  // the plateau is widened by 5 % of the optimal length on each side of its peak
  const double dx = 0.05 * x2, xs = x2 - dx;
  const double y1 = 1 - shallow_slope * (xs - x1);          // end of the steep ascending limb
  const double x01 = x0 + 0.5 * (x1 - x0), y01 = 0.5 * y1;  // its middle
  const double dydx01 = 1.25 * y1 / (x1 - x0);
  const double x1s = x1 + 0.5 * (xs - x1), y1s = y1 + 0.5 * (1 - y1);  // shallow limb middle
  const double x23 = (x2 + dx) + 0.5 * (x3 - (x2 + dx)), y23 = 0.5;   // descending limb middle
  const double dydx23 = -1 / ((x3 - dx) - (x2 + dx));
  const double seg[5][6] = {{x0, min_value, 0, x01, y01, dydx01},
                            {x01, y01, dydx01, x1s, y1s, shallow_slope},
                            {x1s, y1s, shallow_slope, x2, 1, 0},
                            {x2, 1, 0, x23, y23, dydx23},
                            {x23, y23, dydx23, x3, min_value, 0}};
  rc = build_curve(c, 5, seg, cc, NULL, err);
  return rc;
}

int mbs_millard_force_velocity_curve(mbs_bezier_curve* c, double slope_c_vmax,
                                     double slope_c_near, double slope_iso, double slope_e_vmax,
                                     double slope_e_near, double fmax_e, double curviness_c,
                                     double curviness_e, mbs_error* err) {
  const char* name = "Millard force-velocity curve";
  if (!(fmax_e > 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: the maximum eccentric force multiplier %g must exceed 1", name, fmax_e);
  if (!(slope_c_vmax >= 0 && slope_c_vmax < 1 && slope_c_near > slope_c_vmax &&
        slope_c_near <= 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: need 0 <= concentric slope at vmax (%g) < slope near vmax (%g) <= 1",
                    name, slope_c_vmax, slope_c_near);
  if (!(slope_iso > 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name, "%s: the isometric slope %g must exceed 1",
                    name, slope_iso);
  if (!(slope_e_vmax >= 0 && slope_e_near >= slope_e_vmax && slope_e_near < fmax_e - 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: need 0 <= eccentric slope at vmax (%g) <= slope near vmax (%g) < %g",
                    name, slope_e_vmax, slope_e_near, fmax_e - 1);
  int rc = curviness_ok(curviness_c, name, err);
  if (!rc) rc = curviness_ok(curviness_e, name, err);
  if (rc) return rc;
  // the near-vmax points lie where the mean of the two slopes carries the curve from the ends
  const double y_near_c = 0.5 * (slope_c_near + slope_c_vmax) * 0.1;
  const double y_near_e = fmax_e - 0.5 * (slope_e_near + slope_e_vmax) * 0.1;
  const double seg[4][6] = {{-1, 0, slope_c_vmax, -0.9, y_near_c, slope_c_near},
                            {-0.9, y_near_c, slope_c_near, 0, 1, slope_iso},
                            {0, 1, slope_iso, 0.9, y_near_e, slope_e_near},
                            {0.9, y_near_e, slope_e_near, 1, fmax_e, slope_e_vmax}};
  const double cc = scale_curviness(curviness_c), ce = scale_curviness(curviness_e);
  const double curv[4] = {cc, cc, ce, ce};
  return build_curve(c, 4, seg, 0, curv, err);
}

int mbs_millard_fiber_force_length_curve(mbs_bezier_curve* c, double e_zero, double e_iso,
                                         double k_low, double k_iso, double curviness,
                                         mbs_error* err) {
  const char* name = "Millard fiber force-length curve";
  if (!(e_iso > e_zero))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: the strain at one normalized force (%g) must exceed the strain at zero "
                    "force (%g)",
                    name, e_iso, e_zero);
  const double kmin = 1 / (e_iso - e_zero);
  if (!(k_iso > kmin))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: the stiffness at one normalized force %g must exceed %g", name, k_iso,
                    kmin);
  if (!(k_low > 0 && k_low < kmin))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: the low-force stiffness %g must be in (0, %g)", name, k_low, kmin);
  const int rc = curviness_ok(curviness, name, err);
  if (rc) return rc;
  const double x0 = 1 + e_zero, x1 = 1 + e_iso;
  const double dx = fmin(0.1 / k_iso, 0.1 * (x1 - x0));
  const double x_low = x0 + dx, x_foot = x0 + 0.5 * dx, y_low = k_low * (x_low - x_foot);
  const double seg[2][6] = {{x0, 0, 0, x_low, y_low, k_low}, {x_low, y_low, k_low, x1, 1, k_iso}};
  return build_curve(c, 2, seg, scale_curviness(curviness), NULL, err);
}

int mbs_millard_tendon_force_length_curve(mbs_bezier_curve* c, double e_iso, double k_iso,
                                          double f_toe, double curviness, mbs_error* err) {
  const char* name = "Millard tendon force-length curve";
  if (!(e_iso > 0))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: the strain at one normalized force %g must be positive", name, e_iso);
  if (!(f_toe > 0 && f_toe < 1))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: the normalized force at the toe end %g must be in (0, 1)", name, f_toe);
  if (!(k_iso > 1 / e_iso))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, name,
                    "%s: the stiffness at one normalized force %g must exceed %g", name, k_iso,
                    1 / e_iso);
  const int rc = curviness_ok(curviness, name, err);
  if (rc) return rc;
  const double x_iso = 1 + e_iso;
  const double x_toe = x_iso + (f_toe - 1) / k_iso;  // where the linear part begins
  // the toe's mean slope: from a foot at a tenth of the toe strain to the linear part at half
  // the toe-end force
  const double x_foot = 1 + 0.1 * (x_toe - 1);
  const double y_mid = 0.5 * f_toe, x_mid = x_iso + (y_mid - 1) / k_iso;
  const double k_mid = y_mid / (x_mid - x_foot);
  const double x_ctrl = x_foot + 0.5 * (x_mid - x_foot), y_ctrl = k_mid * (x_ctrl - x_foot);
  const double seg[2][6] = {{1, 0, 0, x_ctrl, y_ctrl, k_mid},
                            {x_ctrl, y_ctrl, k_mid, x_toe, f_toe, k_iso}};
  return build_curve(c, 2, seg, scale_curviness(curviness), NULL, err);
}
