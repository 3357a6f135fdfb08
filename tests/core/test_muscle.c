// Muscle kernels against the published equations and physics: every curve against its
// closed form (coded here independently) or the values its construction fixes, derivatives
// against central differences, inverses against their forward curves, C2 joints of the
// Bezier curves, pennation at constant width, the isometric force at optimal length (O-1),
// equilibrium initialization over a grid of activations, lengths and speeds, a slow passive
// stretch (work done = energy stored + work absorbed by the fiber's active and damping
// elements, and a tendon force that never decreases), activation rise and fall times against
// the analytic solution of the first-order ODE with tau(a), the fiber velocity of each model
// against its equation (Thelen's eqs. 6-7, Millard's damped equilibrium, De Groote's explicit
// tendon-force rate), and the errors for bad parameters and singular states.
//
// The whole test takes well under a second (no MBS_TEST_QUICK switch is needed).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/function.h"
#include "mbs/muscle.h"
#include "mbs_test.h"

// the largest |a - b| / max(1, |a|, |b|) seen in a group of comparisons
typedef struct maxerr {
  double err;
  double at;  // where it happened
} maxerr;
static void track(maxerr* m, double a, double b, double at) {
  double s = fmax(1, fmax(fabs(a), fabs(b)));
  double e = fabs(a - b) / s;
  if (!(e <= m->err)) {  // also catches NaN
    m->err = isnan(e) ? INFINITY : e;
    m->at = at;
  }
}
#define EXPECT_MAXERR(m, tol, what)                                                          \
  do {                                                                                       \
    mbs_test_checks++;                                                                       \
    if (!((m).err <= (tol))) {                                                               \
      mbs_test_failures++;                                                                   \
      fprintf(stderr, "%s:%d: FAIL: %s: error %.3g at %.10g (tol %g)\n", __FILE__, __LINE__, \
              what, (m).err, (m).at, (double)(tol));                                         \
    }                                                                                        \
  } while (0)

// ---------------------------------------------------------------------------------------------
// Reference formulas, written from the papers (Thelen 2003; De Groote et al. 2016 as in
// OpenSim; Delp 1990 tables) independently of the library
// ---------------------------------------------------------------------------------------------

static double ref_thelen_fal(double l) { return exp(-(l - 1) * (l - 1) / 0.45); }
static double ref_thelen_fpe(double l) {
  return l > 1 ? (exp(5.0 * (l - 1) / 0.6) - 1) / (exp(5.0) - 1) : 0;
}
// the toe strain where the toe exponential 0.33 (e^{3x/et} - 1)/(e^3 - 1) reaches 0.33 with the
// slope of the line through (et, 0.33) and (e0, 1): found by bisection on the slope mismatch
static double ref_thelen_etoe(double e0) {
  double lo = 1e-6 * e0, hi = e0 * (1 - 1e-9);
  for (int i = 0; i < 200; i++) {
    const double et = 0.5 * (lo + hi);
    const double toe_slope = 0.33 * 3 / et * exp(3.0) / (exp(3.0) - 1);
    const double line_slope = 0.67 / (e0 - et);
    if (toe_slope > line_slope) lo = et;  // toe too steep: move its end out
    else hi = et;
  }
  return 0.5 * (lo + hi);
}
static double ref_thelen_fse(double lt) {
  const double e0 = 0.04, et = ref_thelen_etoe(e0), x = lt - 1;
  if (x <= 0) return 0;
  if (x <= et) return 0.33 * (exp(3 * x / et) - 1) / (exp(3.0) - 1);
  return 0.33 + 0.67 / (e0 - et) * (x - et);
}
// Thelen's eqs. 6-7 with F = a f_AL f_V (not the multiplier), as OpenSim's calcdlceN, valid for
// 0 < F < 0.95 a f_AL Flen
static double ref_thelen_eq6(double a, double fal, double fv) {
  const double af = 0.25, flen = 1.4, afl = a * fal, f = afl * fv;
  const double b = (f <= afl) ? afl + f / af : (2 + 2 / af) * (afl * flen - f) / (flen - 1);
  return (0.25 + 0.75 * a) * (f - afl) / b;
}

static const double dg_b[3][4] = {
    {0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465},
    {0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188},
    {0.1, 1.0, 0.3535533905932740, 0.0}};
static double ref_dg_fal(double l) {
  double f = 0;
  for (int i = 0; i < 3; i++) {
    const double w = dg_b[i][2] + dg_b[i][3] * l;
    f += dg_b[i][0] * exp(-0.5 * (l - dg_b[i][1]) * (l - dg_b[i][1]) / (w * w));
  }
  return f;
}
static double ref_dg_fpe(double l) {
  const double off = exp(4 * (0.2 - 1) / 0.6);
  return (exp(4 * (l - 1) / 0.6) - off) / (exp(4.0) - off);
}
static double ref_dg_kt(void) { return log(6.0) / 0.049; }
static double ref_dg_fse(double lt) { return 0.2 * exp(ref_dg_kt() * (lt - 1)) - 0.2; }
static double ref_dg_fv(double v) {
  const double d1 = -0.3211346127989808, d2 = -8.149, d3 = -0.374, d4 = 0.8825327733249912;
  return d1 * log((d2 * v + d3) + sqrt((d2 * v + d3) * (d2 * v + d3) + 1)) + d4;
}

// pennation at constant width, from sin(alpha) l = h, clamped at acos(0.1)
static double ref_cos_pennation(double h, double l) {
  const double smax = sin(acos(0.1));
  const double s = h / l;
  return s < smax ? sqrt(1 - s * s) : 0.1;
}

// ---------------------------------------------------------------------------------------------

static void test_thelen_curves(void) {
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_THELEN2003);
  const mbs_thelen2003_curve_params* t = &p.thelen;
  double et, kl;
  mbs_thelen2003_tendon_constants(t, &et, &kl);
  EXPECT_NEAR(et, ref_thelen_etoe(0.04), 1e-12);
  EXPECT_ABS(et, 0.02434, 5e-6);       // papers digest [calc]
  EXPECT_ABS(et / 0.04, 0.609, 5e-4);  // Thelen's rounded 0.609 e0
  EXPECT_ABS(kl, 42.8, 0.05);
  maxerr v = {0, 0}, dv = {0, 0};
  const double h = 1e-6;
  for (int i = 0; i <= 400; i++) {
    const double l = 0.3 + 1.5 * i / 400.0;  // fiber lengths 0.3 .. 1.8
    double d[2], dp[2], dm[2];
    mbs_thelen2003_active_force_length(t, l, d);
    track(&v, d[0], ref_thelen_fal(l), l);
    mbs_thelen2003_active_force_length(t, l + h, dp);
    mbs_thelen2003_active_force_length(t, l - h, dm);
    track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), l);
    mbs_thelen2003_passive_force_length(t, l, d);
    track(&v, d[0], ref_thelen_fpe(l), l);
    if (fabs(l - 1) > 2 * h) {  // kink at l~ = 1
      mbs_thelen2003_passive_force_length(t, l + h, dp);
      mbs_thelen2003_passive_force_length(t, l - h, dm);
      track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), l);
    }
    const double lt = 0.99 + 0.08 * i / 400.0;  // tendon lengths 0.99 .. 1.07
    mbs_thelen2003_tendon_force_length(t, lt, d);
    track(&v, d[0], ref_thelen_fse(lt), lt);
    if (fabs(lt - 1) > 2 * h && fabs(lt - 1 - et) > 2 * h) {
      mbs_thelen2003_tendon_force_length(t, lt + h, dp);
      mbs_thelen2003_tendon_force_length(t, lt - h, dm);
      track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), lt);
    }
  }
  EXPECT_MAXERR(v, 1e-12, "Thelen f_AL, f_PE, f_T against their closed forms");
  EXPECT_MAXERR(dv, 1e-7, "Thelen curve slopes against central differences");
  double d[2];
  mbs_thelen2003_tendon_force_length(t, 1.04, d);
  EXPECT_NEAR(d[0], 1.0, 1e-12);  // F_max at FmaxTendonStrain
  mbs_thelen2003_passive_force_length(t, 1.6, d);
  EXPECT_NEAR(d[0], 1.0, 1e-12);  // F_max at FmaxMuscleStrain

  // force-velocity: eqs. 6-7 (in force form, a f_AL != 1), inverse, slopes, extrapolation
  maxerr e6 = {0, 0}, inv = {0, 0}, sl = {0, 0}, sl2 = {0, 0};
  const double as[4] = {0.01, 0.3, 0.7, 1.0};
  for (int ia = 0; ia < 4; ia++) {
    const double a = as[ia];
    for (int i = 0; i <= 300; i++) {
      const double fv = -0.3 + 2.0 * i / 300.0;  // -0.3 .. 1.7 (beyond both extrapolations)
      double dvdf;
      const double vel = mbs_thelen2003_fv_inverse(t, a, fv, &dvdf);
      if (fv > 0 && fv < 0.95 * 1.4) track(&e6, vel, ref_thelen_eq6(a, 0.63, fv), fv);
      double dfdv;
      const double back = mbs_thelen2003_fv(t, a, vel, &dfdv);
      track(&inv, back, fv, fv);
      const double hh = 1e-7;
      // (kinks: fv = 0 and the threshold 0.95 Flen where the lines begin, and fv = 1, v = 0
      // where eq. 7 switches from concentric to eccentric: Thelen's slope doubles there)
      if (fabs(fv) > 2 * hh && fabs(fv - 1.33) > 2 * hh && fabs(fv - 1) > 2 * hh) {
        const double fd = (mbs_thelen2003_fv_inverse(t, a, fv + hh, NULL) -
                           mbs_thelen2003_fv_inverse(t, a, fv - hh, NULL)) / (2 * hh);
        track(&sl, dvdf, fd, fv);
        const double fd2 = (mbs_thelen2003_fv(t, a, vel + hh, NULL) -
                            mbs_thelen2003_fv(t, a, vel - hh, NULL)) / (2 * hh);
        track(&sl2, dfdv, fd2, vel);
      }
    }
  }
  EXPECT_MAXERR(e6, 1e-13, "Thelen f_V^-1 against eqs. 6-7");
  EXPECT_MAXERR(inv, 1e-12, "Thelen f_V(f_V^-1(x)) = x");
  EXPECT_MAXERR(sl, 1e-6, "Thelen f_V^-1 slope against central differences");
  EXPECT_MAXERR(sl2, 1e-6, "Thelen f_V slope against central differences");
  // isometric, maximum shortening (fv = 0 at v = -(0.25 + 0.75 a)), Flen asymptote side
  EXPECT_ABS(mbs_thelen2003_fv_inverse(t, 1, 1, NULL), 0, 1e-15);
  EXPECT_NEAR(mbs_thelen2003_fv_inverse(t, 1, 0, NULL), -1.0, 1e-14);
  EXPECT_NEAR(mbs_thelen2003_fv_inverse(t, 0.2, 0, NULL), -0.4, 1e-14);
  EXPECT_NEAR(mbs_thelen2003_fv(t, 0.5, 0, NULL), 1.0, 1e-14);
}

static void test_degroote_curves(void) {
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_DEGROOTE2016);
  const mbs_degroote2016_curve_params* g = &p.degroote;
  EXPECT_ABS(ref_dg_kt(), 36.57, 0.005);  // papers digest
  maxerr v = {0, 0}, dv = {0, 0}, inv = {0, 0};
  const double h = 1e-6;
  for (int i = 0; i <= 400; i++) {
    const double l = 0.2 + 1.6 * i / 400.0;
    double d[2], dp[2], dm[2];
    mbs_degroote2016_active_force_length(g, l, d);
    track(&v, d[0], ref_dg_fal(l), l);
    mbs_degroote2016_active_force_length(g, l + h, dp);
    mbs_degroote2016_active_force_length(g, l - h, dm);
    track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), l);
    mbs_degroote2016_passive_force_length(g, l, d);
    track(&v, d[0], ref_dg_fpe(l), l);
    mbs_degroote2016_passive_force_length(g, l + h, dp);
    mbs_degroote2016_passive_force_length(g, l - h, dm);
    track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), l);
    const double lt = 0.995 + 0.07 * i / 400.0;
    mbs_degroote2016_tendon_force_length(g, lt, d);
    track(&v, d[0], ref_dg_fse(lt), lt);
    mbs_degroote2016_tendon_force_length(g, lt + h, dp);
    mbs_degroote2016_tendon_force_length(g, lt - h, dm);
    track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), lt);
    track(&inv, mbs_degroote2016_tendon_length(g, ref_dg_fse(lt)), lt, lt);
    const double vel = -1 + 2.0 * i / 400.0;
    mbs_degroote2016_force_velocity(vel, d);
    track(&v, d[0], ref_dg_fv(vel), vel);
    mbs_degroote2016_force_velocity(vel + h, dp);
    mbs_degroote2016_force_velocity(vel - h, dm);
    track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), vel);
    double dvdf;
    const double back = mbs_degroote2016_fv_inverse(d[0], &dvdf);
    track(&inv, back, vel, vel);
    track(&dv, dvdf, 1 / d[1], vel);
  }
  EXPECT_MAXERR(v, 1e-13, "De Groote curves against their closed forms");
  EXPECT_MAXERR(dv, 1e-6, "De Groote curve slopes against central differences");
  EXPECT_MAXERR(inv, 1e-12, "De Groote inverses against their forward curves");
  double d[2];
  mbs_degroote2016_force_velocity(0, d);
  EXPECT_ABS(d[0], 1.0, 1e-4);  // the fitted curve passes (0, 1) to 4 digits
  mbs_degroote2016_active_force_length(g, 1.0, d);
  EXPECT_ABS(d[0], 1.0, 1e-4);
  mbs_degroote2016_passive_force_length(g, 0.2, d);
  EXPECT_ABS(d[0], 0, 1e-15);  // zero at the lower bound of fiber length
  mbs_degroote2016_passive_force_length(g, 1.6, d);
  EXPECT_NEAR(d[0], (exp(4.0) - exp(-16.0 / 3)) / (exp(4.0) - exp(-16.0 / 3)), 1e-14);
  mbs_degroote2016_tendon_force_length(g, 1.049, d);
  EXPECT_NEAR(d[0], 1.0, 1e-12);  // F_max at the tendon strain at one normalized force
  mbs_degroote2016_tendon_force_length(g, 1.0, d);
  EXPECT_ABS(d[0], 0.0, 1e-15);
  // the width scale stretches the curve about l~ = 1
  mbs_degroote2016_curve_params g2 = *g;
  g2.active_force_width_scale = 2;
  double d2[2];
  mbs_degroote2016_active_force_length(&g2, 1.4, d2);
  mbs_degroote2016_active_force_length(g, 1.2, d);
  EXPECT_NEAR(d2[0], d[0], 1e-15);
  EXPECT_NEAR(d2[1], d[1] / 2, 1e-15);
}

static void test_delp_curves(void) {
  mbs_delp_curves c;
  mbs_error err;
  EXPECT_OK(mbs_delp_curves_prepare(&c, &err));
  maxerr knots = {0, 0}, dv = {0, 0};
  for (int k = 0; k < MBS_DELP_CURVE_COUNT; k++) {
    const double *x, *y;
    const int n = mbs_delp_curve_points((mbs_delp_curve)k, &x, &y);
    EXPECT_TRUE(n == (k == 0 ? 21 : k == 1 ? 13 : 42));
    for (int i = 0; i < n; i++) {
      double d[2];
      mbs_delp_curve_eval(&c, (mbs_delp_curve)k, x[i], d);
      track(&knots, d[0], y[i], x[i]);
      if (i + 1 < n) {
        const double xm = 0.5 * (x[i] + x[i + 1]), h = 1e-7 * (x[i + 1] - x[i]);
        double dp[2], dm[2];
        mbs_delp_curve_eval(&c, (mbs_delp_curve)k, xm, d);
        mbs_delp_curve_eval(&c, (mbs_delp_curve)k, xm + h, dp);
        mbs_delp_curve_eval(&c, (mbs_delp_curve)k, xm - h, dm);
        track(&dv, d[1], (dp[0] - dm[0]) / (2 * h), xm);
      }
    }
  }
  EXPECT_MAXERR(knots, 1e-12, "Delp splines through their tables");
  EXPECT_MAXERR(dv, 1e-6, "Delp spline slopes against central differences");
}

// central-difference checks of slope and curvature along a Bezier curve, including its ends
static void check_bezier_derivatives(const mbs_bezier_curve* c, const char* what) {
  maxerr d1 = {0, 0}, d2 = {0, 0};
  const double lo = c->x_lo - 0.1 * (c->x_hi - c->x_lo), hi = c->x_hi + 0.1 * (c->x_hi - c->x_lo);
  for (int i = 0; i <= 1000; i++) {
    const double x = lo + (hi - lo) * (i + 0.5) / 1001.0, h = 1e-7;
    double d[3], dp[3], dm[3];
    mbs_bezier_curve_eval(c, x, d);
    mbs_bezier_curve_eval(c, x + h, dp);
    mbs_bezier_curve_eval(c, x - h, dm);
    track(&d1, d[1], (dp[0] - dm[0]) / (2 * h), x);
    // (d2 is continuous at the joints but its slope is not: no differences across them)
    int near_joint = 0;
    for (int k = 0; k < c->nseg; k++)
      if (fabs(x - c->px[k][0]) < 20 * h || fabs(x - c->px[k][5]) < 20 * h) near_joint = 1;
    mbs_bezier_curve_eval(c, x + 10 * h, dp);
    mbs_bezier_curve_eval(c, x - 10 * h, dm);
    if (!near_joint) track(&d2, d[2], (dp[1] - dm[1]) / (20 * h), x);
  }
  char msg[160];
  snprintf(msg, sizeof msg, "%s: dy/dx against central differences", what);
  EXPECT_MAXERR(d1, 1e-7, msg);
  snprintf(msg, sizeof msg, "%s: d2y/dx2 against central differences", what);
  EXPECT_MAXERR(d2, 1e-4, msg);
  // C2 joints between segments and with the extrapolating lines: equal values and slopes on
  // both sides, zero curvature on both sides
  maxerr jv = {0, 0}, js = {0, 0}, jc = {0, 0};
  for (int k = 0; k <= c->nseg; k++) {
    const double xj = k < c->nseg ? c->px[k][0] : c->px[c->nseg - 1][5];
    double l[3], r[3];
    mbs_bezier_curve_eval(c, nextafter(xj, -INFINITY), l);
    mbs_bezier_curve_eval(c, nextafter(xj, INFINITY), r);
    track(&jv, l[0], r[0], xj);
    track(&js, l[1], r[1], xj);
    track(&jc, l[2], 0, xj);
    track(&jc, r[2], 0, xj);
  }
  snprintf(msg, sizeof msg, "%s: values continuous at the joints", what);
  EXPECT_MAXERR(jv, 1e-13, msg);
  snprintf(msg, sizeof msg, "%s: slopes continuous at the joints", what);
  EXPECT_MAXERR(js, 1e-9, msg);
  snprintf(msg, sizeof msg, "%s: zero curvature on both sides of the joints", what);
  EXPECT_MAXERR(jc, 1e-6, msg);
}

static void test_millard_curves(void) {
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_MILLARD2012);
  const mbs_millard2012_curve_params* q = &p.millard;
  mbs_error err;
  mbs_bezier_curve afl, fv, fpe, fse;
  EXPECT_OK(mbs_millard_active_force_length_curve(
      &afl, q->afl_min_norm_active_fiber_length, q->afl_transition_norm_fiber_length,
      q->afl_max_norm_active_fiber_length, q->afl_shallow_ascending_slope, q->afl_minimum_value,
      1.0, &err));
  EXPECT_OK(mbs_millard_force_velocity_curve(
      &fv, q->fv_concentric_slope_at_vmax, q->fv_concentric_slope_near_vmax,
      q->fv_isometric_slope, q->fv_eccentric_slope_at_vmax, q->fv_eccentric_slope_near_vmax,
      q->fv_max_eccentric_velocity_force_multiplier, q->fv_concentric_curviness,
      q->fv_eccentric_curviness, &err));
  EXPECT_OK(mbs_millard_fiber_force_length_curve(
      &fpe, q->fpe_strain_at_zero_force, q->fpe_strain_at_one_norm_force,
      q->fpe_stiffness_at_low_force, q->fpe_stiffness_at_one_norm_force, q->fpe_curviness, &err));
  EXPECT_OK(mbs_millard_tendon_force_length_curve(
      &fse, q->fse_strain_at_one_norm_force, q->fse_stiffness_at_one_norm_force,
      q->fse_norm_force_at_toe_end, q->fse_curviness, &err));
  EXPECT_EQ_INT(afl.nseg, 5);
  EXPECT_EQ_INT(fv.nseg, 4);
  EXPECT_EQ_INT(fpe.nseg, 2);
  EXPECT_EQ_INT(fse.nseg, 2);
  double d[3];
  // values fixed by the factory's parameters
  mbs_bezier_curve_eval(&afl, 1.0, d);
  EXPECT_NEAR(d[0], 1.0, 1e-14);
  EXPECT_ABS(d[1], 0.0, 1e-12);
  mbs_bezier_curve_eval(&afl, 0.4441, d);
  EXPECT_NEAR(d[0], 0.1, 1e-14);
  mbs_bezier_curve_eval(&afl, 1.8123, d);
  EXPECT_NEAR(d[0], 0.1, 1e-14);
  mbs_bezier_curve_eval(&afl, 0.2, d);  // flat at the minimum value beyond the ends
  EXPECT_NEAR(d[0], 0.1, 1e-14);
  mbs_bezier_curve_eval(&afl, 2.5, d);
  EXPECT_NEAR(d[0], 0.1, 1e-14);
  mbs_bezier_curve_eval(&fpe, 1.7, d);
  EXPECT_NEAR(d[0], 1.0, 1e-14);
  EXPECT_NEAR(d[1], 2.0 / 0.7, 1e-10);
  mbs_bezier_curve_eval(&fpe, 0.9, d);
  EXPECT_ABS(d[0], 0.0, 1e-15);
  mbs_bezier_curve_eval(&fpe, 1.0, d);
  EXPECT_ABS(d[0], 0.0, 1e-15);
  mbs_bezier_curve_eval(&fse, 1.049, d);
  EXPECT_NEAR(d[0], 1.0, 1e-13);
  EXPECT_NEAR(d[1], 1.375 / 0.049, 1e-10);
  mbs_bezier_curve_eval(&fse, 1.0, d);
  EXPECT_ABS(d[0], 0.0, 1e-15);
  EXPECT_ABS(d[1], 0.0, 1e-12);
  // the toe ends where the linear part reaches 2/3
  const double x_toe = 1.049 + (2.0 / 3 - 1) / (1.375 / 0.049);
  mbs_bezier_curve_eval(&fse, x_toe, d);
  EXPECT_NEAR(d[0], 2.0 / 3, 1e-13);
  mbs_bezier_curve_eval(&fv, 0.0, d);
  EXPECT_NEAR(d[0], 1.0, 1e-14);
  EXPECT_NEAR(d[1], 5.0, 1e-10);
  mbs_bezier_curve_eval(&fv, -1.0, d);
  EXPECT_ABS(d[0], 0.0, 1e-15);
  mbs_bezier_curve_eval(&fv, 1.0, d);
  EXPECT_NEAR(d[0], 1.4, 1e-14);
  mbs_bezier_curve_eval(&fv, 0.999999, d);
  EXPECT_ABS(d[0], 1.4, 1e-6);
  EXPECT_ABS(d[1], 0.0, 1e-3);
  mbs_bezier_curve_eval(&fv, -0.9, d);
  EXPECT_NEAR(d[1], 0.25, 1e-10);
  mbs_bezier_curve_eval(&fv, 0.9, d);
  EXPECT_NEAR(d[1], 0.15, 1e-10);

  check_bezier_derivatives(&afl, "Millard f_AL");
  check_bezier_derivatives(&fv, "Millard f_V");
  check_bezier_derivatives(&fpe, "Millard f_PE");
  check_bezier_derivatives(&fse, "Millard f_T");

  // monotone curves stay monotone
  int mono = 1;
  double prev[3] = {-1, -1, -1};
  for (int i = 0; i <= 2000; i++) {
    double a[3], b[3], c[3];
    mbs_bezier_curve_eval(&fv, -1.2 + 2.4 * i / 2000.0, a);
    mbs_bezier_curve_eval(&fpe, 0.9 + 1.0 * i / 2000.0, b);
    mbs_bezier_curve_eval(&fse, 0.99 + 0.07 * i / 2000.0, c);
    if (a[0] < prev[0] || b[0] < prev[1] || c[0] < prev[2]) mono = 0;
    prev[0] = a[0];
    prev[1] = b[0];
    prev[2] = c[0];
  }
  EXPECT_TRUE(mono);

  // the inverse force-velocity curve (end slopes half the near-vmax slopes): f_V(f_V^-1(y)) = y
  mbs_bezier_curve fvi;
  EXPECT_OK(mbs_millard_force_velocity_curve(&fvi, 0.125, 0.25, 5, 0.075, 0.15, 1.4, 0.6, 0.9,
                                             &err));
  check_bezier_derivatives(&fvi, "Millard f_V with nonzero end slopes");
  maxerr inv = {0, 0}, dinv = {0, 0};
  for (int i = 0; i <= 400; i++) {
    const double y = -0.2 + 1.8 * i / 400.0;  // beyond both ends of [0, 1.4]
    double x[3], back[3];
    mbs_bezier_curve_eval_inverse(&fvi, y, x);
    mbs_bezier_curve_eval(&fvi, x[0], back);
    track(&inv, back[0], y, y);
    track(&dinv, x[1], 1 / back[1], y);
  }
  EXPECT_MAXERR(inv, 1e-13, "Millard f_V(f_V^-1(y)) = y");
  EXPECT_MAXERR(dinv, 1e-9, "Millard dx/dy of the inverse = 1/(dy/dx)");

  // a corner that cannot be C-shaped is refused with a message
  double px[6], py[6];
  mbs_error_clear(&err);
  // (parallel tangents y = -x and y = 2 - x meet "at" (0.5, 1.5), farther than the ends' gap)
  EXPECT_TRUE(mbs_bezier_corner(0, 0, -1, 1, 1, -1, 0.5, px, py, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "C-shaped") != NULL);
  EXPECT_TRUE(mbs_millard_force_velocity_curve(&fvi, 0, 0.25, 0.5, 0, 0.15, 1.4, 0.6, 0.9, &err) ==
              MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "isometric slope") != NULL);
}

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

typedef struct model_case {
  const char* label;
  mbs_muscle_kind kind;
  double damping;  // < 0: the default
  double alpha_opt;
  int rigid;
} model_case;

static const model_case cases[] = {
    {"Thelen", MBS_MUSCLE_THELEN2003, -1, 0.0, 0},
    {"Thelen pennated", MBS_MUSCLE_THELEN2003, -1, 0.35, 0},
    {"Millard damped", MBS_MUSCLE_MILLARD2012, -1, 0.0, 0},
    {"Millard damped pennated", MBS_MUSCLE_MILLARD2012, -1, 0.35, 0},
    {"Millard undamped pennated", MBS_MUSCLE_MILLARD2012, 0, 0.35, 0},
    {"DeGroote", MBS_MUSCLE_DEGROOTE2016, -1, 0.0, 0},
    {"DeGroote pennated damped", MBS_MUSCLE_DEGROOTE2016, 0.05, 0.35, 0},
    {"Millard rigid tendon", MBS_MUSCLE_MILLARD2012, -1, 0.35, 1},
    {"Thelen rigid tendon", MBS_MUSCLE_THELEN2003, -1, 0.0, 1},
    {"RigidTendonMuscle", MBS_MUSCLE_RIGID_TENDON, -1, 0.35, 1},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static int make_model(const model_case* mc, mbs_muscle_model* m) {
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, mc->kind);
  if (mc->damping >= 0) p.fiber_damping = mc->damping;
  p.pennation_angle_at_optimal = mc->alpha_opt;
  if (mc->rigid) p.ignore_tendon_compliance = 1;
  mbs_error err;
  const int rc = mbs_muscle_prepare(m, &p, mc->label, &err);
  if (rc) fprintf(stderr, "prepare %s: %s\n", mc->label, err.message);
  return rc;
}

// The model's normalized curves, for the tests' residuals (Thelen and DeGroote: the reference
// formulas above; Millard: its Bezier curves, tested above)
static double model_fal(const mbs_muscle_model* m, double l) {
  double d[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003: return ref_thelen_fal(l);
    case MBS_MUSCLE_DEGROOTE2016: return ref_dg_fal(l);
    case MBS_MUSCLE_MILLARD2012: mbs_bezier_curve_eval(&m->c.millard.afl, l, d); return d[0];
    default: mbs_delp_curve_eval(&m->c.delp, MBS_DELP_ACTIVE_FORCE_LENGTH, l, d); return d[0];
  }
}
static double model_fpe(const mbs_muscle_model* m, double l) {
  double d[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003: return ref_thelen_fpe(l);
    case MBS_MUSCLE_DEGROOTE2016: return ref_dg_fpe(l);
    case MBS_MUSCLE_MILLARD2012: mbs_bezier_curve_eval(&m->c.millard.fpe, l, d); return d[0];
    default: mbs_delp_curve_eval(&m->c.delp, MBS_DELP_PASSIVE_FORCE_LENGTH, l, d); return d[0];
  }
}
static double model_fse(const mbs_muscle_model* m, double lt) {
  double d[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003: return ref_thelen_fse(lt);
    case MBS_MUSCLE_DEGROOTE2016: return ref_dg_fse(lt);
    default: mbs_bezier_curve_eval(&m->c.millard.fse, lt, d); return d[0];
  }
}
// normalized tendon length at normalized force f, by bisection on the tendon curve
static double model_tendon_length(const mbs_muscle_model* m, double f) {
  double lo = 1, hi = 1.5;
  for (int i = 0; i < 200; i++) {
    const double mid = 0.5 * (lo + hi);
    if (model_fse(m, mid) < f) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

static void test_pennation(void) {
  mbs_muscle_model m;
  const model_case mc = {"pennated", MBS_MUSCLE_THELEN2003, -1, 0.35, 0};
  EXPECT_OK(make_model(&mc, &m));
  const double h = 0.1 * sin(0.35);
  EXPECT_NEAR(m.width, h, 1e-15);
  EXPECT_NEAR(m.min_fiber_length, h / sin(acos(0.1)), 1e-15);
  double al, ca, da;
  mbs_muscle_pennation(&m, 0.1, &al, &ca, &da);
  EXPECT_NEAR(al, 0.35, 1e-14);  // alpha_opt at l_opt
  maxerr w = {0, 0}, dd = {0, 0};
  for (int i = 0; i <= 200; i++) {
    const double l = 0.04 + 0.2 * i / 200.0, hh = 1e-8;
    mbs_muscle_pennation(&m, l, &al, &ca, &da);
    track(&w, l * sin(al), h, l);  // constant width
    track(&w, ca, cos(al), l);
    double ap, am;
    mbs_muscle_pennation(&m, l + hh, &ap, NULL, NULL);
    mbs_muscle_pennation(&m, l - hh, &am, NULL, NULL);
    track(&dd, da * 0.1, (ap - am) / (2 * hh) * 0.1, l);
  }
  EXPECT_MAXERR(w, 1e-14, "pennation keeps l sin(alpha) = h");
  EXPECT_MAXERR(dd, 1e-6, "dalpha/dl against central differences");
  mbs_muscle_pennation(&m, 0.5 * h, &al, &ca, &da);  // shorter than allowed: clamped
  EXPECT_NEAR(al, acos(0.1), 1e-14);
  EXPECT_NEAR(ca, 0.1, 1e-14);
  EXPECT_TRUE(da == 0);
}

// O-1 at l^M = l_opt, alpha = alpha_opt, a = 1, v = 0: F^T = F_max (f_AL(1) + f_PE(1)) cos
// alpha_opt, which is F_max cos alpha_opt for Thelen, Millard and (with a rigid tendon) f_AL(1)
// of the Delp table; De Groote's f_AL(1) + f_PE(1) = 1.018
static void test_isometric(void) {
  for (int k = 0; k < NCASES; k++) {
    const model_case* mc = &cases[k];
    mbs_muscle_model m;
    if (make_model(mc, &m)) {
      EXPECT_TRUE(0);
      continue;
    }
    const double fmax = 1000, lopt = 0.1, lst = 0.2, ca = cos(mc->alpha_opt);
    const double fn = (model_fal(&m, 1) + model_fpe(&m, 1)) * ca;
    if (m.p.kind == MBS_MUSCLE_THELEN2003 || m.p.kind == MBS_MUSCLE_MILLARD2012)
      EXPECT_NEAR(fn, ca, 1e-13);
    const double lt = mc->rigid ? 1.0 : model_tendon_length(&m, fn);
    const double lmt = lopt * ca + lst * lt;
    const double state = m.p.kind == MBS_MUSCLE_DEGROOTE2016 ? fn : lopt;
    mbs_muscle_output o;
    mbs_error err;
    EXPECT_OK(mbs_muscle_eval(&m, lmt, 0, 1.0, state, &o, &err));
    EXPECT_NEAR(o.fiber_length, lopt, 1e-12);
    EXPECT_NEAR(o.pennation_angle, mc->alpha_opt, 1e-12);
    EXPECT_NEAR(o.tendon_force, fmax * fn, 1e-9);
    EXPECT_NEAR(o.fiber_force_along_tendon, fmax * fn, 1e-9);
    EXPECT_ABS(o.normalized_fiber_velocity, 0, 1e-9);  // in equilibrium: the fiber is still
    EXPECT_ABS(o.fiber_state_derivative, 0, 1e-8);
    EXPECT_NEAR(o.active_fiber_force, fmax * model_fal(&m, 1), 1e-8);
    EXPECT_TRUE(o.clamped == 0);
    // equilibrium initialization finds the same fiber
    mbs_muscle_equilibrium eq;
    EXPECT_OK(mbs_muscle_equilibrium_solve(&m, 1.0, lmt, 0, 0, &eq, &err));
    EXPECT_NEAR(eq.fiber_length, lopt, 1e-9);
    EXPECT_NEAR(eq.tendon_force, fmax * fn, 1e-7);
    EXPECT_TRUE(eq.at_lower_bound == 0);
  }
}

// the equilibrium residual F^M cos(alpha) - F^T (N) of a static fiber, from the curves
static double static_residual(const mbs_muscle_model* m, double a, double lmt, double lm) {
  const double fmax = 1000, lopt = 0.1, lst = 0.2;
  const double ca = ref_cos_pennation(m->width, lm);
  const double fm = a * model_fal(m, lm / lopt) + model_fpe(m, lm / lopt);
  return fmax * (fm * ca - model_fse(m, (lmt - lm * ca) / lst));
}

// the smaller one-sided slope of f_V at v = 0 (Thelen's doubles across v = 0)
static double fv_slope_at_zero(const mbs_muscle_model* m, double a) {
  const double h = 1e-7;
  double l, r, d[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003:
      l = (1 - mbs_thelen2003_fv(&m->p.thelen, a, -h, NULL)) / h;
      r = (mbs_thelen2003_fv(&m->p.thelen, a, h, NULL) - 1) / h;
      return fmin(l, r);
    case MBS_MUSCLE_MILLARD2012: mbs_bezier_curve_eval(&m->c.millard.fv, 0, d); return d[1];
    default: return (ref_dg_fv(h) - ref_dg_fv(-h)) / (2 * h);
  }
}

// the residual F^M cos(alpha) - F^T (N) at the minimum fiber length, from the curves
static double residual_at_min(const mbs_muscle_model* m, double a, double lmt) {
  const double lm = m->min_fiber_length, ca = ref_cos_pennation(m->width, lm);
  const double fm = a * model_fal(m, lm / 0.1) + model_fpe(m, lm / 0.1);
  const double ft = model_fse(m, (lmt - lm * ca) / 0.2);
  return 1000 * (fm * ca - fmax(ft, 0));
}

static void test_equilibrium_grid(void) {
  const double acts[7] = {0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0};
  const double speeds[3] = {0, -0.3, 0.3};  // m/s
  const double tol = 1e-5;                  // N, the default 1e-8 F_max
  for (int k = 0; k < NCASES; k++) {
    const model_case* mc = &cases[k];
    mbs_muscle_model m;
    if (make_model(mc, &m)) continue;
    const double beta = m.p.kind == MBS_MUSCLE_MILLARD2012 && m.damped ? m.p.fiber_damping
                        : m.p.kind == MBS_MUSCLE_DEGROOTE2016          ? m.p.fiber_damping
                                                                       : 0;
    int fails = 0, solved = 0, bound = 0, bad_bound = 0, slack = 0, bad_slack = 0, count = 0;
    double worst = 0, worst_v = 0, worst_dg = 0, worst_tv = 0;
    for (int ia = 0; ia < 7; ia++)
      for (int il = 0; il <= 50; il++)
        for (int iv = 0; iv < 3; iv++) {
          const double a = fmax(acts[ia], m.p.minimum_activation);
          // from the slack length L_ST to 1.5 (l_opt + L_ST): fibers up to 2.5 l_opt
          const double lmt = 0.2 + 0.25 * il / 50.0;
          const double vmt = speeds[iv];
          mbs_muscle_equilibrium eq;
          mbs_error err;
          mbs_error_clear(&err);
          count++;
          const int rc = mbs_muscle_equilibrium_solve(&m, a, lmt, vmt, 0, &eq, &err);
          if (rc) {
            if (fails++ < 3)
              fprintf(stderr, "%s: a %g L %g V %g: %s\n", mc->label, a, lmt, vmt, err.message);
            continue;
          }
          if (mc->rigid) {
            solved++;
            continue;
          }
          if (eq.tendon_slack) {  // only a fiber shortening fast can push
            slack++;
            if (!(vmt < 0 && eq.residual < 0 && eq.tendon_force == 0)) {
              bad_slack++;
              fprintf(stderr, "%s: a %g L %g V %g: slack tendon with residual %g N, F^T %g N\n",
                      mc->label, a, lmt, vmt, eq.residual, eq.tendon_force);
            }
            continue;
          }
          if (eq.at_lower_bound || eq.at_upper_bound) {
            bound++;
            if (vmt == 0 && eq.at_lower_bound &&
                !(eq.fiber_length == m.min_fiber_length && residual_at_min(&m, a, lmt) > 0))
              bad_bound++;
            if (vmt == 0 && eq.at_upper_bound) {
              // De Groote's tendon force at its bound 5: the fiber still pulls harder
              const double lat = lmt - 0.2 * (log(5.2 / 0.2) / ref_dg_kt() + 1);
              const double lm = sqrt(lat * lat + m.width * m.width), ca = lat / lm;
              const double r = 1000 * ((a * ref_dg_fal(lm / 0.1) + ref_dg_fpe(lm / 0.1)) * ca - 5);
              if (!(m.p.kind == MBS_MUSCLE_DEGROOTE2016 && eq.fiber_state == 5 && r > 0))
                bad_bound++;
            }
            continue;
          }
          solved++;
          if (!(fabs(eq.residual) <= tol)) fails++;
          mbs_muscle_output o;
          if (mbs_muscle_eval(&m, lmt, vmt, a, eq.fiber_state, &o, &err)) {
            fails++;
            continue;
          }
          const double lm = eq.fiber_length, ca = ref_cos_pennation(m.width, lm);
          const double fal = model_fal(&m, lm / 0.1);
          if (vmt == 0) {
            // the residual from the curves, and a fiber that stays still (its velocity times
            // the force-velocity stiffness is within the force tolerance)
            double r;
            if (m.p.kind == MBS_MUSCLE_DEGROOTE2016) {
              r = 1000 * ((a * fal + ref_dg_fpe(lm / 0.1)) * ca) - eq.tendon_force;
              worst_dg = fmax(worst_dg, fabs(ref_dg_fse(o.normalized_tendon_length) * 1000 -
                                             eq.tendon_force));
            } else {
              r = static_residual(&m, a, lmt, lm);
            }
            worst = fmax(worst, fabs(r));
            worst_v = fmax(worst_v, fabs(o.normalized_fiber_velocity) *
                                        (a * fal * fv_slope_at_zero(&m, a) + beta) * ca * 1000);
          } else if (m.p.kind == MBS_MUSCLE_DEGROOTE2016) {
            // all of the path's speed in the fiber: the tendon force does not change
            const double sv = -8.149 * o.normalized_fiber_velocity - 0.374;
            const double dfv = -0.3211346127989808 * -8.149 / sqrt(sv * sv + 1);
            worst_tv =
                fmax(worst_tv, fabs(o.tendon_velocity) * ca * ca * (a * fal * dfv + beta) * 1000);
          }
        }
    if (getenv("MUSCLE_VERBOSE") || fails || bad_bound || bad_slack || worst > 1.01 * tol || worst_v > 1.01 * tol ||
        worst_tv > 1.1 * tol || worst_dg > 1e-8)
      fprintf(stderr,
              "%s: %d of %d failed, %d at a bound (%d wrongly), %d slack (%d wrongly), worst "
              "residual %g N, still fiber %g N, DeGroote tendon curve %g N, tendon speed %g N\n",
              mc->label, fails, count, bound, bad_bound, slack, bad_slack, worst, worst_v,
              worst_dg, worst_tv);
    EXPECT_EQ_INT(fails, 0);
    EXPECT_EQ_INT(bad_bound, 0);
    EXPECT_EQ_INT(bad_slack, 0);
    EXPECT_TRUE(worst <= 1.01 * tol);
    EXPECT_TRUE(worst_v <= 1.01 * tol);
    EXPECT_TRUE(worst_tv <= 1.1 * tol);  // (a linearization)
    EXPECT_TRUE(worst_dg <= 1e-8);
    EXPECT_TRUE(solved > count / 2);
  }
}

// F^T never decreases as a passive muscle is lengthened quasi-statically (equilibria at V = 0)
static void test_passive_monotone(void) {
  for (int k = 0; k < NCASES; k++) {
    const model_case* mc = &cases[k];
    mbs_muscle_model m;
    if (make_model(mc, &m)) continue;
    const double a = fmax(0.01, m.p.minimum_activation);
    double prev = -1;
    int ok = 1;
    for (int i = 0; i <= 300; i++) {
      const double lmt = 0.2 + 0.17 * i / 300.0;
      mbs_muscle_equilibrium eq;
      mbs_error err;
      if (mbs_muscle_equilibrium_solve(&m, a, lmt, 0, 1e-9, &eq, &err)) {
        ok = 0;
        break;
      }
      if (eq.tendon_force < prev - 1e-8) {
        fprintf(stderr, "%s: F^T falls from %.12g to %.12g at L^MT %g\n", mc->label, prev,
                eq.tendon_force, lmt);
        ok = 0;
      }
      prev = eq.tendon_force;
    }
    EXPECT_TRUE(ok);
  }
}

// Energy stored in the passive fiber element and the tendon between two states (J): closed
// forms for Thelen and De Groote, Simpson's rule on the Millard curves.
static double thelen_fpe_integral(double l) {  // int_1^l f_PE
  const double k = 5, e0 = 0.6;
  return l > 1 ? ((e0 / k) * expm1(k * (l - 1) / e0) - (l - 1)) / expm1(k) : 0;
}
static double thelen_fse_integral(double lt) {  // int_1^lt f_T
  const double e0 = 0.04, et = ref_thelen_etoe(e0), kl = 0.67 / (e0 - et), x = lt - 1;
  const double c = 0.33 / expm1(3.0);
  if (x <= 0) return 0;
  if (x <= et) return c * ((et / 3) * expm1(3 * x / et) - x);
  return c * ((et / 3) * expm1(3.0) - et) + 0.33 * (x - et) + 0.5 * kl * (x - et) * (x - et);
}
static double dg_fpe_antiderivative(double l) {
  const double k = 4, e0 = 0.6, off = exp(k * (0.2 - 1) / e0);
  return ((e0 / k) * exp(k * (l - 1) / e0) - off * l) / (exp(k) - off);
}
static double dg_fse_antiderivative(double lt) {
  const double kt = ref_dg_kt();
  return 0.2 * exp(kt * (lt - 1)) / kt - 0.2 * lt;
}
static double simpson(const mbs_bezier_curve* c, double a, double b) {
  const int n = 2000;
  const double h = (b - a) / n;
  double s = 0, d[3];
  for (int i = 0; i <= n; i++) {
    mbs_bezier_curve_eval(c, a + i * h, d);
    s += d[0] * (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2));
  }
  return s * h / 3;
}
static double stored_energy_change(const mbs_muscle_model* m, const mbs_muscle_output* o0,
                                   const mbs_muscle_output* o1) {
  const double fmax = 1000, lopt = 0.1, lst = 0.2;
  const double l0 = o0->normalized_fiber_length, l1 = o1->normalized_fiber_length;
  const double t0 = o0->normalized_tendon_length, t1 = o1->normalized_tendon_length;
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003:
      return fmax * lopt * (thelen_fpe_integral(l1) - thelen_fpe_integral(l0)) +
             fmax * lst * (thelen_fse_integral(t1) - thelen_fse_integral(t0));
    case MBS_MUSCLE_DEGROOTE2016:
      return fmax * lopt * (dg_fpe_antiderivative(l1) - dg_fpe_antiderivative(l0)) +
             fmax * lst * (dg_fse_antiderivative(t1) - dg_fse_antiderivative(t0));
    default:
      return fmax * lopt * simpson(&m->c.millard.fpe, l0, l1) +
             fmax * lst * simpson(&m->c.millard.fse, t0, t1);
  }
}

// y = (fiber state, work done by the path on the muscle, work absorbed by the fiber's active
// and damping elements)
static int stretch_rhs(const mbs_muscle_model* m, double a, double lmt, double vmt,
                       const double y[3], double dy[3], mbs_muscle_output* o) {
  mbs_error err;
  const int rc = mbs_muscle_eval(m, lmt, vmt, a, y[0], o, &err);
  if (rc) fprintf(stderr, "stretch: %s\n", err.message);
  dy[0] = o->fiber_state_derivative;
  dy[1] = o->tendon_force * vmt;
  dy[2] = (o->active_fiber_force + o->damping_fiber_force) * o->fiber_velocity;
  return rc;
}

// A slow stretch of a muscle at minimum activation, integrated with RK4: the work done on it
// equals the change in stored energy plus the work absorbed by its active and damping elements
// (the quasi-static limit of a passive muscle), and its tendon force never decreases. (De
// Groote with damping: undamped at a = 0.01 its explicit tendon-force ODE is too stiff for a
// fixed explicit step.)
static void test_stretch(void) {
  const model_case st[4] = {{"Thelen pennated", MBS_MUSCLE_THELEN2003, -1, 0.35, 0},
                            {"Millard damped pennated", MBS_MUSCLE_MILLARD2012, -1, 0.35, 0},
                            {"Millard undamped", MBS_MUSCLE_MILLARD2012, 0, 0.0, 0},
                            {"DeGroote damped", MBS_MUSCLE_DEGROOTE2016, 0.1, 0.0, 0}};
  const double dt = 2.5e-4, vmt = 0.01, T = 6;  // 6 cm at 1 cm/s
  for (int k = 0; k < 4; k++) {
    mbs_muscle_model m;
    if (make_model(&st[k], &m)) {
      EXPECT_TRUE(0);
      continue;
    }
    const double a = 0.01, l0 = 0.2 + 0.1 * cos(st[k].alpha_opt);
    mbs_muscle_equilibrium eq;
    mbs_error err;
    EXPECT_OK(mbs_muscle_equilibrium_solve(&m, a, l0, vmt, 0, &eq, &err));
    double y[3] = {eq.fiber_state, 0, 0};
    mbs_muscle_output o0, o;
    double dy[3];
    int rc = stretch_rhs(&m, a, l0, vmt, y, dy, &o0);
    double ft_prev = o0.tendon_force;
    int monotone = 1, clamped = 0;
    const int n = (int)lround(T / dt);
    for (int i = 0; i < n && !rc; i++) {
      const double t = i * dt;
      double k1[3], k2[3], k3[3], k4[3], yt[3];
      rc |= stretch_rhs(&m, a, l0 + vmt * t, vmt, y, k1, &o);
      for (int j = 0; j < 3; j++) yt[j] = y[j] + 0.5 * dt * k1[j];
      rc |= stretch_rhs(&m, a, l0 + vmt * (t + 0.5 * dt), vmt, yt, k2, &o);
      for (int j = 0; j < 3; j++) yt[j] = y[j] + 0.5 * dt * k2[j];
      rc |= stretch_rhs(&m, a, l0 + vmt * (t + 0.5 * dt), vmt, yt, k3, &o);
      for (int j = 0; j < 3; j++) yt[j] = y[j] + dt * k3[j];
      rc |= stretch_rhs(&m, a, l0 + vmt * (t + dt), vmt, yt, k4, &o);
      for (int j = 0; j < 3; j++) y[j] += dt / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
      rc |= stretch_rhs(&m, a, l0 + vmt * (t + dt), vmt, y, dy, &o);
      if (o.tendon_force < ft_prev - 1e-9 * 1000) monotone = 0;
      if (o.clamped) clamped = 1;
      ft_prev = o.tendon_force;
    }
    EXPECT_OK(rc);
    EXPECT_TRUE(monotone);
    EXPECT_TRUE(!clamped);
    const double de = stored_energy_change(&m, &o0, &o);
    const double w_in = y[1], w_abs = y[2];
    if (getenv("MUSCLE_VERBOSE") || !mbs_test_close(w_in, de + w_abs, 1e-9 * w_in) || !monotone)
      fprintf(stderr,
              "%s: work in %.10g J, stored %.10g J + absorbed %.10g J (diff %.3g), F^T %g .. %g "
              "N, l~ %g .. %g\n",
              st[k].label, w_in, de, w_abs, w_in - de - w_abs, o0.tendon_force, o.tendon_force,
              o0.normalized_fiber_length, o.normalized_fiber_length);
    EXPECT_TRUE(fabs(w_in - (de + w_abs)) <= 1e-9 * w_in);
    EXPECT_TRUE(o.normalized_fiber_length > 1.3);  // stretched well into the passive range
    EXPECT_TRUE(o.tendon_force > 100);
  }
}

// ---------------------------------------------------------------------------------------------
// Activation dynamics
// ---------------------------------------------------------------------------------------------

// the time at which a fixed-step RK4 solution of da/dt = f(u, a) from a0 crosses a1
static double crossing_time(const mbs_muscle_model* m, double u, double a0, double a1,
                            double dt) {
  double a = a0, t = 0;
  for (int i = 0; i < 10000000; i++) {
    const double k1 = mbs_muscle_activation_derivative(m, u, a);
    const double k2 = mbs_muscle_activation_derivative(m, u, a + 0.5 * dt * k1);
    const double k3 = mbs_muscle_activation_derivative(m, u, a + 0.5 * dt * k2);
    const double k4 = mbs_muscle_activation_derivative(m, u, a + dt * k3);
    const double an = a + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    if ((an - a1) * (a - a1) <= 0) {
      // cubic Hermite between the steps, solved for a1 by bisection
      const double f0 = k1, f1 = mbs_muscle_activation_derivative(m, u, an);
      double lo = 0, hi = 1;
      for (int j = 0; j < 60; j++) {
        const double s = 0.5 * (lo + hi);
        const double h00 = (1 + 2 * s) * (1 - s) * (1 - s), h10 = s * (1 - s) * (1 - s);
        const double h01 = s * s * (3 - 2 * s), h11 = s * s * (s - 1);
        const double v = h00 * a + h10 * dt * f0 + h01 * an + h11 * dt * f1;
        if ((v - a1) * (a - a1) > 0) lo = s;
        else hi = s;
      }
      return t + 0.5 * (lo + hi) * dt;
    }
    a = an;
    t += dt;
  }
  return NAN;
}

// mbs_muscle_uses_path_speed: where it says 0, a change of the path's speed changes neither
// the tendon force nor the fiber state's derivative; where it says 1, it changes one of them
static void test_path_speed(void) {
  for (int c = 0; c < NCASES; c++) {
    mbs_muscle_model m;
    EXPECT_OK(make_model(&cases[c], &m));
    int nf = 0;
    mbs_muscle_state_count(&m, NULL, &nf);
    const double lopt = m.p.optimal_fiber_length, lst = m.p.tendon_slack_length;
    const double lmt = 1.02 * lopt * cos(m.p.pennation_angle_at_optimal) + 1.03 * lst;
    mbs_muscle_equilibrium eq;
    mbs_error err;
    double fs[2] = {0, 0};
    if (nf > 0) {
      EXPECT_OK(mbs_muscle_equilibrium_solve(&m, 0.4, lmt, 0.0, 0, &eq, &err));
      fs[0] = eq.fiber_state;
    }
    int changed = 0;
    for (int k = 0; k < 3; k++) {
      const double v0 = 0.1 * (k - 1), v1 = v0 + 0.05;
      mbs_muscle_output o0, o1;
      EXPECT_OK(mbs_muscle_eval_states(&m, lmt, v0, 0.4, nf ? fs : NULL, &o0, &err));
      EXPECT_OK(mbs_muscle_eval_states(&m, lmt, v1, 0.4, nf ? fs : NULL, &o1, &err));
      changed = changed || o0.tendon_force != o1.tendon_force ||
                o0.fiber_state_derivative != o1.fiber_state_derivative;
    }
    printf("path speed: %-26s uses it %d, changes the outputs %d\n", cases[c].label,
           mbs_muscle_uses_path_speed(&m), changed);
    EXPECT_EQ_INT(mbs_muscle_uses_path_speed(&m), changed);
  }
}

static void test_activation(void) {
  mbs_muscle_model m;
  const mbs_muscle_kind kinds[2] = {MBS_MUSCLE_THELEN2003, MBS_MUSCLE_MILLARD2012};
  for (int k = 0; k < 2; k++) {
    const model_case mc = {"activation", kinds[k], -1, 0, 0};
    EXPECT_OK(make_model(&mc, &m));
    const double ta = m.p.activation_time_constant, td = m.p.deactivation_time_constant;
    const double am = m.p.minimum_activation;
    // rise: t_act (0.5 + 1.5 a) da/dt = 1 - a, so t = t_act [2 ln((1-a0)/(1-a)) - 1.5 (a - a0)]
    const double t_rise = ta * (2 * log((1 - am) / 0.5) - 1.5 * (0.5 - am));
    EXPECT_NEAR(crossing_time(&m, 1.0, am, 0.5, 1e-5), t_rise, 1e-9);
    // not a pure exponential with the initial time constant
    const double t_exp = ta * (0.5 + 1.5 * am) * log((1 - am) / 0.5);
    EXPECT_TRUE(fabs(t_rise - t_exp) > 0.1 * t_rise);
    // fall (u = 0 acts as a_min): t_deact da/dt = -(a - a_min)(0.5 + 1.5 a), partial fractions
    const double t_fall = td / (0.5 + 1.5 * am) * (log((1 - am) / (0.5 - am)) - log(2.0 / 1.25));
    EXPECT_NEAR(crossing_time(&m, 0.0, 1.0, 0.5, 1e-5), t_fall, 1e-9);
    // the derivative itself (O-5 with tau(a))
    EXPECT_NEAR(mbs_muscle_activation_derivative(&m, 0.8, 0.3), 0.5 / (ta * (0.5 + 0.45)), 1e-12);
    EXPECT_NEAR(mbs_muscle_activation_derivative(&m, 0.2, 0.6), -0.4 * (0.5 + 0.9) / td, 1e-12);
    EXPECT_NEAR(mbs_muscle_activation_derivative(&m, 1.0, 0.0),  // a clamped to a_min
                (1 - am) / (ta * (0.5 + 1.5 * am)), 1e-12);
  }
  // De Groote: t = int da / (da/dt) by Simpson's rule against the RK4 crossing
  const model_case mc = {"activation", MBS_MUSCLE_DEGROOTE2016, -1, 0, 0};
  EXPECT_OK(make_model(&mc, &m));
  for (int dir = 0; dir < 2; dir++) {
    const double u = dir ? 0.0 : 1.0, a0 = dir ? 1.0 : 0.0, a1 = 0.5;
    const int n = 20000;
    double s = 0;
    for (int i = 0; i <= n; i++) {
      const double aa = a0 + (a1 - a0) * i / n;
      // the reference rate, from De Groote et al.'s smoothed first-order equation
      const double f = 0.5 * tanh(0.1 * (u - aa)), z = 0.5 + 1.5 * aa;
      const double rate = ((f + 0.5) / (0.015 * z) + (0.5 - f) * z / 0.060) * (u - aa);
      EXPECT_TRUE(i % 5000 || mbs_test_close(mbs_muscle_activation_derivative(&m, u, aa), rate,
                                               1e-13));
      s += (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2)) / rate;
    }
    const double t_ref = s * (a1 - a0) / n / 3;
    EXPECT_NEAR(crossing_time(&m, u, a0, a1, 1e-5), t_ref, 1e-9);
  }
  // RigidTendonMuscle: no activation dynamics
  const model_case mr = {"activation", MBS_MUSCLE_RIGID_TENDON, -1, 0, 0};
  EXPECT_OK(make_model(&mr, &m));
  EXPECT_TRUE(mbs_muscle_activation_derivative(&m, 1, 0) == 0);
}

// ---------------------------------------------------------------------------------------------
// Fiber dynamics and outputs
// ---------------------------------------------------------------------------------------------

static void test_eval_physics(void) {
  mbs_test_rng rng = {0x9e3779b97f4a7c15ULL};
  mbs_muscle_model th, mi, dg;
  const model_case cth = {"Thelen", MBS_MUSCLE_THELEN2003, -1, 0.3, 0};
  const model_case cmi = {"Millard", MBS_MUSCLE_MILLARD2012, -1, 0.3, 0};
  const model_case cdg = {"DeGroote", MBS_MUSCLE_DEGROOTE2016, -1, 0.3, 0};
  EXPECT_OK(make_model(&cth, &th));
  EXPECT_OK(make_model(&cmi, &mi));
  EXPECT_OK(make_model(&cdg, &dg));
  const double lopt = 0.1, lst = 0.2, vscale = 1.0, h = 0.1 * sin(0.3);
  maxerr eq6 = {0, 0}, damped = {0, 0}, dgv = {0, 0}, power = {0, 0}, kin = {0, 0};
  int n_eq6 = 0;
  for (int i = 0; i < 400; i++) {
    const double a = mbs_test_uniform(&rng, 0.02, 1);
    const double lm = mbs_test_uniform(&rng, 0.6, 1.5) * lopt;
    const double lt = lst * mbs_test_uniform(&rng, 1.0, 1.045);
    const double vmt = mbs_test_uniform(&rng, -0.5, 0.5);
    const double ca = ref_cos_pennation(h, lm);
    const double lmt = lm * ca + lt;
    mbs_muscle_output o;
    mbs_error err;
    // Thelen: the fiber velocity of eqs. 6-7 at F = f_T/cos - f_PE
    EXPECT_OK(mbs_muscle_eval(&th, lmt, vmt, a, lm, &o, &err));
    const double fal = ref_thelen_fal(lm / lopt);
    const double fv = (ref_thelen_fse(lt / lst) / ca - ref_thelen_fpe(lm / lopt)) / (a * fal);
    if (fv > 0 && fv < 0.95 * 1.4) {
      track(&eq6, o.normalized_fiber_velocity, ref_thelen_eq6(a, fal, fv), fv);
      n_eq6++;
    }
    track(&power, o.muscle_power, -o.tendon_force * vmt, vmt);
    track(&kin, o.fiber_velocity_along_tendon, o.fiber_velocity / ca, lm);  // constant width
    track(&kin, o.tendon_velocity + o.fiber_velocity_along_tendon, vmt, lm);
    track(&kin, o.pennation_angular_velocity, -o.fiber_velocity / lm * h / (lm * ca), lm);
    // Millard damped: (a f_AL f_V(v) + f_PE + beta v) cos = f_T
    EXPECT_OK(mbs_muscle_eval(&mi, lmt, vmt, a, lm, &o, &err));
    double d[3], e[3], g[3], f[3];
    mbs_bezier_curve_eval(&mi.c.millard.afl, lm / lopt, d);
    mbs_bezier_curve_eval(&mi.c.millard.fpe, lm / lopt, e);
    mbs_bezier_curve_eval(&mi.c.millard.fse, lt / lst, g);
    mbs_bezier_curve_eval(&mi.c.millard.fv, o.normalized_fiber_velocity, f);
    track(&damped, (a * d[0] * f[0] + e[0] + 0.1 * o.normalized_fiber_velocity) * ca, g[0], lm);
    track(&damped, o.fiber_force_along_tendon / 1000, g[0], lm);
    track(&damped, o.damping_fiber_force / 1000, 0.1 * o.normalized_fiber_velocity, lm);
    // De Groote: d f_T/dt = f_T'(l~T) v^T / L_ST, v^T = V^MT - v^M / cos, v^M from the closed
    // inverse at f_V = (f_T/cos - f_PE)/(a f_AL)
    const double ft = mbs_test_uniform(&rng, 0.05, 1.2);
    const double ltn = log((ft + 0.2) / 0.2) / ref_dg_kt() + 1;
    const double lmt2 = sqrt(lm * lm - h * h) + lst * ltn;
    EXPECT_OK(mbs_muscle_eval(&dg, lmt2, vmt, a, ft, &o, &err));
    const double fvd = (ft / ca - ref_dg_fpe(lm / lopt)) / (a * ref_dg_fal(lm / lopt));
    const double d1 = -0.3211346127989808, d2 = -8.149, d3 = -0.374, d4 = 0.8825327733249912;
    const double vn = (sinh((fvd - d4) / d1) - d3) / d2;
    const double vt = vmt - vn * vscale / ca;
    track(&dgv, o.fiber_length, lm, lm);
    track(&dgv, o.normalized_fiber_velocity, vn, fvd);
    track(&dgv, o.fiber_state_derivative, ref_dg_kt() * 0.2 * exp(ref_dg_kt() * (ltn - 1)) * vt / lst,
          fvd);
  }
  EXPECT_TRUE(n_eq6 > 100);
  EXPECT_MAXERR(eq6, 1e-12, "Thelen fiber velocity against eqs. 6-7 (O-4)");
  EXPECT_MAXERR(damped, 1e-11, "Millard damped fiber velocity solves the damped equilibrium");
  EXPECT_MAXERR(dgv, 1e-10, "De Groote explicit tendon-force derivative");
  EXPECT_MAXERR(power, 1e-15, "muscle power = -F^T V^MT");
  EXPECT_MAXERR(kin, 1e-13, "constant-width kinematics");

  // a fiber at its minimum length that would shorten further is clamped: no velocity, no force
  mbs_muscle_output o;
  mbs_error err;
  EXPECT_OK(mbs_muscle_eval(&th, 0.2 + th.min_fiber_length_along_tendon * 0.5, -1, 0.5,
                            th.min_fiber_length * 0.5, &o, &err));
  EXPECT_TRUE(o.clamped == 1);
  EXPECT_TRUE(o.fiber_velocity == 0 && o.fiber_state_derivative == 0 && o.fiber_force == 0);
  EXPECT_NEAR(o.fiber_length, th.min_fiber_length, 1e-15);

  // a rigid tendon never pushes: damping saturates while shortening fast
  mbs_muscle_model rg;
  const model_case crg = {"Millard rigid", MBS_MUSCLE_MILLARD2012, 1.0, 0.0, 1};
  EXPECT_OK(make_model(&crg, &rg));
  EXPECT_OK(mbs_muscle_eval(&rg, 0.28, -3, 0.2, 0, &o, &err));
  EXPECT_TRUE(o.fiber_force >= 0 && o.tendon_force >= 0);
  EXPECT_NEAR(o.fiber_force, 0, 1e-12);
  EXPECT_NEAR(o.damping_fiber_force, -(o.active_fiber_force + o.passive_fiber_force), 1e-12);
  EXPECT_NEAR(o.fiber_velocity, -3.0, 1e-14);
  EXPECT_OK(mbs_muscle_eval(&rg, 0.28, 0.2, 0.2, 0, &o, &err));  // lengthening: unsaturated
  EXPECT_NEAR(o.damping_fiber_force, 1000 * 1.0 * 0.2, 1e-9);
  EXPECT_NEAR(o.fiber_length, 0.08, 1e-15);

  // states: activation + fiber for Thelen, Millard, De Groote; none for a rigid tendon
  int ha, hf;
  EXPECT_EQ_INT(mbs_muscle_state_count(&th, &ha, &hf), 2);
  EXPECT_EQ_INT(mbs_muscle_state_count(&rg, &ha, &hf), 1);
  EXPECT_TRUE(ha == 1 && hf == 0);
  const model_case crt = {"RigidTendonMuscle", MBS_MUSCLE_RIGID_TENDON, -1, 0.0, 1};
  mbs_muscle_model rt;
  EXPECT_OK(make_model(&crt, &rt));
  EXPECT_EQ_INT(mbs_muscle_state_count(&rt, &ha, &hf), 0);

  // a model is plain data: a byte copy evaluates bit for bit the same
  mbs_muscle_model copy;
  memcpy(&copy, &mi, sizeof copy);
  mbs_muscle_output o1, o2;
  EXPECT_OK(mbs_muscle_eval(&mi, 0.3, 0.1, 0.4, 0.095, &o1, &err));
  EXPECT_OK(mbs_muscle_eval(&copy, 0.3, 0.1, 0.4, 0.095, &o2, &err));
  EXPECT_TRUE(memcmp(&o1, &o2, sizeof o1) == 0);

  // errors name the muscle and say why
  mbs_error_clear(&err);
  EXPECT_TRUE(mbs_muscle_eval(&dg, 0.2, 0, 0.5, 4.0, &o, &err) == MBS_ERR_NAN);
  EXPECT_TRUE(strstr(err.message, "no length along the tendon") != NULL);
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_THELEN2003);
  p.minimum_activation = 0;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "soleus_r", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "soleus_r") && strstr(err.message, "minimum_activation"));
  mbs_muscle_params_default(&p, MBS_MUSCLE_MILLARD2012);
  p.millard.afl_transition_norm_fiber_length = 1.2;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "vasint_r", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "vasint_r") && strstr(err.message, "active force-length"));
  mbs_muscle_params_default(&p, MBS_MUSCLE_MILLARD2012);
  p.fiber_damping = 0;
  p.minimum_activation = 0;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "glmax1_r", &err) == MBS_ERR_PARAMETER);
  // the undamped Millard model raises f_AL's floor to 0.1, the damped one lowers it to 0
  p.minimum_activation = 0.01;
  EXPECT_OK(mbs_muscle_prepare(&copy, &p, "glmax1_r", &err));
  double d[3];
  mbs_bezier_curve_eval(&copy.c.millard.afl, 0.3, d);
  EXPECT_NEAR(d[0], 0.1, 1e-15);
  mbs_bezier_curve_eval(&mi.c.millard.afl, 0.3, d);
  EXPECT_ABS(d[0], 0, 1e-15);
  EXPECT_NEAR(mi.min_fiber_length, 0.4441 * 0.1, 1e-15);
  mbs_muscle_equilibrium eq;
  EXPECT_TRUE(mbs_muscle_equilibrium_solve(&mi, NAN, 0.3, 0, 0, &eq, &err) == MBS_ERR_ARGUMENT);
}

// ---------------------------------------------------------------------------------------------
// Schutte1993Muscle_Deprecated and Delp1990Muscle_Deprecated
// ---------------------------------------------------------------------------------------------

// OpenSim's default tables of both classes (their constructProperties / setupProperties), x
// then y
static const double os_tendon[2 * 17] = {
    -10.0, -0.002, -0.001, 0.0, 0.00131, 0.00281, 0.00431, 0.00581, 0.00731, 0.00881, 0.0103,
    0.0118, 0.0123, 9.2, 9.201, 9.202, 20.0,
    0.0, 0.0, 0.0, 0.0, 0.0108, 0.0257, 0.0435, 0.0652, 0.0915, 0.123, 0.161, 0.208, 0.227,
    345.0, 345.0, 345.0, 345.0};
static const double os_active[2 * 21] = {
    -5.307692, -4.307692, -1.923077, -0.884615, -0.269231, 0.230769, 0.461538, 0.52725, 0.62875,
    0.71875, 0.86125, 1.045, 1.2175, 1.43875, 1.5, 1.615385, 2.0, 2.961538, 3.692308, 5.461538,
    9.901902,
    0.012188, 0.021899, 0.036466, 0.052493, 0.075312, 0.114158, 0.157859, 0.226667, 0.636667,
    0.856667, 0.95, 0.993333, 0.77, 0.246667, 0.193821, 0.133252, 0.072683, 0.044417, 0.036341,
    0.021899, 0.007332};
static const double os_passive[2 * 13] = {
    -5.0, 0.998, 0.999, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.601, 1.602, 5.0,
    0.0, 0.0, 0.0, 0.0, 0.035, 0.12, 0.26, 0.55, 1.17, 2.0, 2.0, 2.0, 2.0};
static const double os_fv[2 * 42] = {
    -1.001, -1.0, -0.95, -0.9, -0.85, -0.8, -0.75, -0.7, -0.65, -0.6, -0.55, -0.5, -0.45, -0.4,
    -0.35, -0.3, -0.25, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35,
    0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0,
    0.0, 0.0, 0.010417, 0.021739, 0.034091, 0.047619, 0.0625, 0.078947, 0.097222, 0.117647,
    0.140625, 0.166667, 0.196429, 0.230769, 0.270833, 0.318182, 0.375, 0.444444, 0.53125,
    0.642857, 0.791667, 1.0, 1.482014, 1.601571, 1.655791, 1.686739, 1.706751, 1.720753,
    1.731099, 1.739055, 1.745365, 1.75049, 1.754736, 1.758312, 1.761364, 1.763999, 1.766298,
    1.768321, 1.770115, 1.771717, 1.773155, 1.774455};

// The NaturalCubicSpline curves every Schutte1993Muscle of BothLegs22.osim (OpenSim 2.2 format)
// carries, x then y
static const double bl_tendon[2 * 17] = {
    -10.0, -0.002, -0.001, 0.0, 0.00131, 0.00281, 0.00431, 0.00581, 0.00731, 0.00881, 0.0103,
    0.0118, 0.0123, 9.2, 9.201, 9.202, 20.0,
    0.0, 0.0, 0.0, 0.0, 0.0108, 0.0257, 0.0435, 0.0652, 0.0915, 0.123, 0.161, 0.208, 0.227,
    345.0, 345.0, 345.0, 345.0};
static const double bl_active[2 * 17] = {
    -5.0, 0.0, 0.401, 0.402, 0.4035, 0.52725, 0.62875, 0.71875, 0.86125, 1.045, 1.2175, 1.43875,
    1.61875, 1.62, 1.621, 2.2, 5.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.226667, 0.636667, 0.856667, 0.95, 0.993333, 0.77, 0.246667, 0.0,
    0.0, 0.0, 0.0, 0.0};
static const double bl_passive[2 * 13] = {
    -5.0, 0.998, 0.999, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.601, 1.602, 5.0,
    0.0, 0.0, 0.0, 0.0, 0.035, 0.12, 0.26, 0.55, 1.17, 2.0, 2.0, 2.0, 2.0};

// Muscles of BothLegs22.osim: their properties (in the file all have time_scale 0.1,
// activation1 7.667, activation2 1.459854, damping 0.1, max_contraction_velocity 10; two cases
// here change time_scale and max_contraction_velocity)
typedef struct simm_case {
  const char* label;
  mbs_muscle_kind kind;
  double fmax, lopt, lst, alpha;
  int curves;  // 0: OpenSim's default tables (Schutte: exponential passive curve), 1: BothLegs22
  double ts, vmax;  // time_scale (s), max_contraction_velocity (l_opt/s)
} simm_case;
static const simm_case simm_cases[] = {
    {"Schutte GMED1", MBS_MUSCLE_SCHUTTE1993, 546, 0.0535, 0.078, 0.13962634016, 1, 0.1, 10},
    {"Schutte SOL", MBS_MUSCLE_SCHUTTE1993, 2839, 0.03, 0.268, 0.436332312999, 1, 0.05, 6},
    {"Schutte MEDGAS defaults", MBS_MUSCLE_SCHUTTE1993, 1113, 0.045, 0.408, 0.296705972839, 0,
     0.1, 10},
    {"Delp GMED1", MBS_MUSCLE_DELP1990, 546, 0.0535, 0.078, 0.13962634016, 1, 0.1, 10},
    {"Delp SOL defaults", MBS_MUSCLE_DELP1990, 2839, 0.03, 0.268, 0.436332312999, 0, 0.08, 6},
};
#define NSIMM ((int)(sizeof simm_cases / sizeof simm_cases[0]))

// the test's own copy of a case's curves: mbs_function splines through the tables above
typedef struct simm_ref {
  mbs_function_type type;
  const double* tab[4];  // tendon, active, passive, force-velocity
  int n[4];
  double coef[4][3 * 42];
  int exp_passive;       // Schutte with the default passive curve: e^{8(l-1)}/e^4
} simm_ref;

static void simm_case_params(const simm_case* sc, mbs_muscle_params* p, simm_ref* r) {
  mbs_muscle_params_default(p, sc->kind);
  p->max_isometric_force = sc->fmax;
  p->optimal_fiber_length = sc->lopt;
  p->tendon_slack_length = sc->lst;
  p->pennation_angle_at_optimal = sc->alpha;
  p->simm.time_scale = sc->ts;
  p->max_contraction_velocity = sc->vmax;
  memset(r, 0, sizeof *r);
  if (sc->curves) {
    mbs_error err;
    EXPECT_OK(mbs_muscle_curve_set(&p->simm.tendon_force_length_curve,
                                   MBS_FUNC_NATURAL_CUBIC_SPLINE, 17, bl_tendon, bl_tendon + 17,
                                   &err));
    EXPECT_OK(mbs_muscle_curve_set(&p->simm.active_force_length_curve,
                                   MBS_FUNC_NATURAL_CUBIC_SPLINE, 17, bl_active, bl_active + 17,
                                   &err));
    EXPECT_OK(mbs_muscle_curve_set(&p->simm.passive_force_length_curve,
                                   MBS_FUNC_NATURAL_CUBIC_SPLINE, 13, bl_passive,
                                   bl_passive + 13, &err));
    p->simm.passive_force_length_curve_is_default = 0;  // given in the file
    r->type = MBS_FUNC_NATURAL_CUBIC_SPLINE;
    r->tab[0] = bl_tendon, r->n[0] = 17;
    r->tab[1] = bl_active, r->n[1] = 17;
    r->tab[2] = bl_passive, r->n[2] = 13;
  } else {
    r->type = MBS_FUNC_SIMM_SPLINE;
    r->tab[0] = os_tendon, r->n[0] = 17;
    r->tab[1] = os_active, r->n[1] = 21;
    r->tab[2] = os_passive, r->n[2] = 13;
    r->exp_passive = sc->kind == MBS_MUSCLE_SCHUTTE1993;
  }
  r->tab[3] = os_fv, r->n[3] = 42;  // (Delp's; the BothLegs22 muscles are Schutte's)
  for (int k = 0; k < 4; k++) {
    mbs_error err;
    EXPECT_OK(mbs_function_prepare(k == 3 ? MBS_FUNC_SIMM_SPLINE : r->type, r->n[k], r->tab[k],
                                   r->coef[k], &err, "test curve"));
  }
}

static double ref_curve(const simm_ref* r, int k, double x) {
  double d[3];
  mbs_function_eval(k == 3 ? MBS_FUNC_SIMM_SPLINE : r->type, r->n[k], r->tab[k], r->coef[k], x, d);
  return d[0];
}
// f_T at tendon strain e (none below 0), f_AL (Schutte: >= 0), f_PE, f_V
static double ref_simm_ft(const simm_ref* r, double e) { return e < 0 ? 0 : ref_curve(r, 0, e); }
static double ref_simm_fal(const simm_ref* r, mbs_muscle_kind k, double l) {
  const double f = ref_curve(r, 1, l);
  return k == MBS_MUSCLE_SCHUTTE1993 && f < 0 ? 0 : f;
}
static double ref_simm_fpe(const simm_ref* r, double l) {
  return r->exp_passive ? exp(8.0 * (l - 1)) / exp(4.0) : ref_curve(r, 2, l);
}
// Schutte's force-velocity multiplier (Hill's hyperbola shortening, its lengthening branch)
static double ref_schutte_g(double v) {
  const double kv = 0.15, s = 0.13 * kv / (kv + 1);
  return v < 0 ? (1 + v) / (1 - v / kv) : (1.4 * v + s) / (v + s);
}
// OpenSim's calcFiberVelocity, term by term (F: velocity-dependent force, A = a f_AL, d)
static double ref_schutte_velocity(double A, double F, double d) {
  const double kv = 0.15, slope_k = 0.13, fmax = 1.4;
  if (F < -d) return F / d;
  if (F < A) {
    const double c = kv * (F - A) / d, b = -kv * (F / kv + A + d) / d;
    return (-b - sqrt(b * b - 4 * c)) / 2.0;
  }
  const double c = -(slope_k * kv / (d * (kv + 1))) * (F - A);
  const double b = -(F / d - fmax * A / d - slope_k * kv / (kv + 1));
  return (-b + sqrt(b * b - 4 * c)) / 2.0;
}

static int make_simm(const simm_case* sc, mbs_muscle_model* m, simm_ref* r) {
  mbs_muscle_params p;
  simm_case_params(sc, &p, r);
  mbs_error err;
  const int rc = mbs_muscle_prepare(m, &p, sc->label, &err);
  if (rc) fprintf(stderr, "prepare %s: %s\n", sc->label, err.message);
  return rc;
}

static int simm_eval(const mbs_muscle_model* m, double lmt, double vmt, double a, double l,
                     double v, mbs_muscle_output* o) {
  const double s[2] = {l, v};
  mbs_error err;
  const int rc = mbs_muscle_eval_states(m, lmt, vmt, a, s, o, &err);
  if (rc) fprintf(stderr, "eval: %s\n", err.message);
  return rc;
}

static void test_simm_curves(void) {
  // the default tables are OpenSim's
  const double* tabs[4] = {os_tendon, os_active, os_passive, os_fv};
  const int ns[4] = {17, 21, 13, 42};
  maxerr tab = {0, 0};
  for (int k = 0; k < MBS_SIMM_CURVE_COUNT; k++) {
    const double *x, *y;
    const int n = mbs_simm_default_curve_points((mbs_simm_curve)k, &x, &y);
    EXPECT_EQ_INT(n, ns[k]);
    for (int i = 0; i < n && n == ns[k]; i++) {
      track(&tab, x[i], tabs[k][i], k);
      track(&tab, y[i], tabs[k][n + i], k);
    }
  }
  EXPECT_MAXERR(tab, 0, "default Schutte/Delp tables against OpenSim's");

  // every prepared curve passes through its table's points (SimmSplines and natural cubic
  // splines) and has the slope of its central differences between them
  maxerr knots = {0, 0}, slope = {0, 0};
  for (int c = 0; c < NSIMM; c++) {
    mbs_muscle_model m;
    simm_ref r;
    if (make_simm(&simm_cases[c], &m, &r)) {
      EXPECT_TRUE(0);
      continue;
    }
    for (int k = 0; k < 4; k++) {
      if (k == 3 && m.p.kind != MBS_MUSCLE_DELP1990) continue;
      const int n = r.n[k];
      const double *x = r.tab[k], *y = r.tab[k] + n;
      for (int i = 0; i < n; i++) {
        double d[2], dp[2], dm[2];
        mbs_simm_muscle_curve_eval(&m, (mbs_simm_curve)k, x[i], d);
        track(&knots, d[0], y[i], x[i]);
        if (i + 1 < n) {
          const double xm = 0.5 * (x[i] + x[i + 1]), h = 1e-6 * (x[i + 1] - x[i]);
          mbs_simm_muscle_curve_eval(&m, (mbs_simm_curve)k, xm, d);
          mbs_simm_muscle_curve_eval(&m, (mbs_simm_curve)k, xm + h, dp);
          mbs_simm_muscle_curve_eval(&m, (mbs_simm_curve)k, xm - h, dm);
          track(&slope, d[1] * (x[i + 1] - x[i]), (dp[0] - dm[0]) / (2 * h) * (x[i + 1] - x[i]),
                xm);
        }
      }
    }
  }
  EXPECT_MAXERR(knots, 1e-12, "Schutte/Delp curves through their tables");
  EXPECT_MAXERR(slope, 1e-6, "Schutte/Delp curve slopes against central differences");

  // the model's multipliers: f_T at the tendon strain (0 when slack), Schutte's f_AL kept >= 0,
  // its passive exponential when the file gives no passive curve
  maxerr mult = {0, 0};
  for (int c = 0; c < NSIMM; c++) {
    const simm_case* sc = &simm_cases[c];
    mbs_muscle_model m;
    simm_ref r;
    if (make_simm(sc, &m, &r)) continue;
    const double h = sc->lopt * sin(sc->alpha);
    for (int i = 0; i <= 200; i++) {
      const double ln = 0.45 + 1.35 * i / 200.0, e = -0.01 + 0.05 * i / 200.0;
      const double lm = ln * sc->lopt, ca = ref_cos_pennation(h, lm);  // (above l_min)
      mbs_muscle_output o;
      if (simm_eval(&m, lm * ca + sc->lst * (1 + e), 0, 0.5, lm, 0, &o)) continue;
      track(&mult, o.tendon_strain, e, e);
      track(&mult, o.normalized_tendon_force, ref_simm_ft(&r, e), e);
      track(&mult, o.active_force_length_multiplier, ref_simm_fal(&r, sc->kind, ln), ln);
      track(&mult, o.passive_force_multiplier, ref_simm_fpe(&r, ln), ln);
    }
  }
  EXPECT_MAXERR(mult, 1e-12, "Schutte/Delp multipliers from their curves");
  mbs_muscle_model m;
  simm_ref r;
  EXPECT_OK(make_simm(&simm_cases[2], &m, &r));
  mbs_muscle_output o;
  EXPECT_OK(simm_eval(&m, 0.5, 0, 0.5, 1.5 * 0.045, 0, &o));
  EXPECT_NEAR(o.passive_force_multiplier, 1.0, 1e-14);  // e^{8 (1.5 - 1)}/e^4

  // other OpenSim functions as curves: a piecewise linear table and a constant
  mbs_muscle_params p;
  mbs_error err;
  mbs_muscle_params_default(&p, MBS_MUSCLE_DELP1990);
  const double px[3] = {0, 1, 2}, py[3] = {0, 1, 3}, cval = 0.5;
  EXPECT_OK(mbs_muscle_curve_set(&p.simm.passive_force_length_curve,
                                 MBS_FUNC_PIECEWISE_LINEAR, 3, px, py, &err));
  EXPECT_OK(mbs_muscle_curve_set(&p.simm.force_velocity_curve, MBS_FUNC_CONSTANT, 1, &cval, NULL,
                                 &err));
  EXPECT_OK(mbs_muscle_prepare(&m, &p, "piecewise", &err));
  double d[2];
  mbs_simm_muscle_curve_eval(&m, MBS_SIMM_PASSIVE_FORCE_LENGTH, 1.5, d);
  EXPECT_NEAR(d[0], 2.0, 1e-15);
  EXPECT_NEAR(d[1], 2.0, 1e-15);
  mbs_simm_muscle_curve_eval(&m, MBS_SIMM_FORCE_VELOCITY, -0.3, d);
  EXPECT_NEAR(d[0], 0.5, 1e-15);
  EXPECT_TRUE(mbs_muscle_curve_set(&p.simm.force_velocity_curve, MBS_FUNC_SIMM_SPLINE, 65, os_fv,
                                   os_fv, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(mbs_muscle_curve_set(&p.simm.force_velocity_curve, MBS_FUNC_MULTIPLIER, 1, &cval,
                                   NULL, &err) == MBS_ERR_PARAMETER);
  p.simm.force_velocity_curve.type = MBS_FUNC_MULTIPLIER;
  EXPECT_TRUE(mbs_muscle_prepare(&m, &p, "multiplier", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "force_velocity_curve") != NULL);
}

// SIMM's activation dynamics at sampled points, from the equation in Schutte1993Muscle_Deprecated
// and Delp1990Muscle_Deprecated (computeActuation)
static void test_simm_activation(void) {
  const double sets[3][3] = {{0.1, 7.667, 1.459854},   // OpenSim's defaults, BothLegs22
                             {0.1, 0.01, 0.04},        // wrist.osim (OpenSim 1.9 file)
                             {0.05, 3.0, 2.0}};
  maxerr e = {0, 0};
  for (int kind = 0; kind < 2; kind++)
    for (int s = 0; s < 3; s++) {
      mbs_muscle_params p;
      mbs_muscle_params_default(&p, kind ? MBS_MUSCLE_DELP1990 : MBS_MUSCLE_SCHUTTE1993);
      p.simm.time_scale = sets[s][0];
      p.simm.activation1 = sets[s][1];
      p.simm.activation2 = sets[s][2];
      mbs_muscle_model m;
      mbs_error err;
      EXPECT_OK(mbs_muscle_prepare(&m, &p, "activation", &err));
      for (int iu = 0; iu <= 20; iu++)
        for (int ia = 0; ia <= 20; ia++) {
          const double u = iu / 20.0, a = ia / 20.0;
          const double ref = u >= a ? (u - a) * (sets[s][1] * u + sets[s][2]) / sets[s][0]
                                    : (u - a) * sets[s][2] / sets[s][0];
          track(&e, mbs_muscle_activation_derivative(&m, u, a), ref, u + 10 * a);
        }
    }
  EXPECT_MAXERR(e, 1e-14, "SIMM activation dynamics against its equation");
  // OpenSim's defaults: rise at full excitation with rate (7.667 + 1.459854)/0.1 = 91.3/s at a
  // = 0, fall with 1.459854/0.1 = 14.6/s
  mbs_muscle_params p;
  mbs_muscle_model m;
  mbs_error err;
  mbs_muscle_params_default(&p, MBS_MUSCLE_SCHUTTE1993);
  EXPECT_OK(mbs_muscle_prepare(&m, &p, "activation", &err));
  EXPECT_NEAR(mbs_muscle_activation_derivative(&m, 1, 0), 91.26854, 1e-12);
  EXPECT_NEAR(mbs_muscle_activation_derivative(&m, 0, 1), -14.59854, 1e-12);
}

// Schutte: the kernel's fiber velocity solves the model's force balance
// A g(v~) + d v~ = max(f_T/cos(alpha) - f_PE, 0), A = a max(f_AL, 0), and is OpenSim's root
static void test_schutte_velocity(void) {
  maxerr bal = {0, 0}, root = {0, 0}, rel = {0, 0};
  int count = 0, shortening = 0, lengthening = 0, bad_sign = 0;
  for (int c = 0; c < NSIMM; c++) {
    const simm_case* sc = &simm_cases[c];
    if (sc->kind != MBS_MUSCLE_SCHUTTE1993) continue;
    mbs_muscle_model m;
    simm_ref r;
    if (make_simm(sc, &m, &r)) continue;
    const double h = sc->lopt * sin(sc->alpha), d = 0.1, vs = sc->lopt / sc->ts;
    const double acts[5] = {0, 0.02, 0.3, 0.7, 1};
    for (int ia = 0; ia < 5; ia++)
      for (int il = 0; il <= 40; il++)
        for (int ie = 0; ie <= 30; ie++) {
          const double a = acts[ia], ln = 0.45 + 1.2 * il / 40.0, e = -0.005 + 0.04 * ie / 30.0;
          const double lm = ln * sc->lopt, ca = ref_cos_pennation(h, lm);
          const double lmt = lm * ca + sc->lst * (1 + e), vmt = 0.3 * (ie % 3 - 1);
          mbs_muscle_output o;
          if (simm_eval(&m, lmt, vmt, a, lm, 0, &o)) {
            EXPECT_TRUE(0);
            continue;
          }
          count++;
          const double A = a * ref_simm_fal(&r, sc->kind, ln);
          const double F = fmax(ref_simm_ft(&r, e) / ca - ref_simm_fpe(&r, ln), 0);
          const double v = o.fiber_velocity / vs;  // l_opt per time_scale
          track(&bal, A * ref_schutte_g(v) + d * v, F, ln + 10 * e);
          track(&root, v, ref_schutte_velocity(A, F, d), ln + 10 * e);
          if (F < A) {
            shortening++;
            if (!(v < 0 && v > -1)) bad_sign++;
          } else {
            lengthening++;
            if (!(v >= 0)) bad_sign++;
          }
          // the outputs' relations: dl/dt, forces, pennation rate, speeds, power
          track(&rel, o.fiber_state_derivative, o.fiber_velocity, 0);
          track(&rel, o.normalized_fiber_velocity, o.fiber_velocity / (sc->vmax * sc->lopt), 1);
          track(&rel, o.force_velocity_multiplier, ref_schutte_g(v), 2);
          track(&rel, o.active_fiber_force / sc->fmax, A * ref_schutte_g(v), 3);
          track(&rel, o.damping_fiber_force / sc->fmax, d * v, 4);
          track(&rel, o.passive_fiber_force / sc->fmax, ref_simm_fpe(&r, ln), 5);
          track(&rel, o.tendon_force / sc->fmax, ref_simm_ft(&r, e), 6);
          if (F > 0)  // a fiber in balance with its tendon
            track(&rel, o.fiber_force_along_tendon / sc->fmax, ref_simm_ft(&r, e), 7);
          const double hh = 1e-7 * lm;
          const double L_p = (lm + hh) * ref_cos_pennation(h, lm + hh);
          const double L_m = (lm - hh) * ref_cos_pennation(h, lm - hh);
          track(&rel, o.fiber_velocity_along_tendon, (L_p - L_m) / (2 * hh) * o.fiber_velocity,
                8);
          track(&rel, o.pennation_angular_velocity,
                -tan(o.pennation_angle) / lm * o.fiber_velocity, 9);
          track(&rel, o.tendon_velocity, vmt - o.fiber_velocity_along_tendon, 10);
          track(&rel, o.muscle_power, -o.tendon_force * vmt, 11);
          track(&rel, o.fiber_acceleration, 0, 12);
        }
  }
  EXPECT_MAXERR(bal, 1e-11, "Schutte: A g(v) + d v = max(f_T/cos - f_PE, 0)");
  EXPECT_MAXERR(root, 1e-9, "Schutte: OpenSim's calcFiberVelocity root");
  EXPECT_MAXERR(rel, 1e-6, "Schutte: output relations");
  EXPECT_EQ_INT(bad_sign, 0);
  EXPECT_TRUE(shortening > count / 10 && lengthening > count / 10);
}

// Delp: the kernel's fiber acceleration is the junction mass's equation of motion
static void test_delp_acceleration(void) {
  maxerr acc = {0, 0}, rel = {0, 0};
  for (int c = 0; c < NSIMM; c++) {
    const simm_case* sc = &simm_cases[c];
    if (sc->kind != MBS_MUSCLE_DELP1990) continue;
    mbs_muscle_model m;
    simm_ref r;
    if (make_simm(sc, &m, &r)) continue;
    const double h = sc->lopt * sin(sc->alpha), ts = sc->ts, vs = sc->lopt / ts;
    const double mass = 0.00287 * vs * vs;  // normalized, as OpenSim
    for (int ia = 0; ia <= 4; ia++)
      for (int il = 0; il <= 30; il++)
        for (int iv = 0; iv <= 10; iv++) {
          const double a = ia / 4.0, ln = 0.45 + 1.2 * il / 30.0, e = 0.002 + 0.001 * (il % 25);
          const double vn = -1.2 + 2.4 * iv / 10.0;  // l_opt per time_scale
          const double lm = ln * sc->lopt, ca = ref_cos_pennation(h, lm);
          const double ta = sqrt(1 - ca * ca) / ca, lmt = lm * ca + sc->lst * (1 + e);
          mbs_muscle_output o;
          if (simm_eval(&m, lmt, 0.1, a, lm, vn * vs, &o)) {
            EXPECT_TRUE(0);
            continue;
          }
          const double fm = a * ref_simm_fal(&r, sc->kind, ln) * ref_curve(&r, 3, vn) +
                            ref_simm_fpe(&r, ln);
          const double an =
              (ref_simm_ft(&r, e) * ca - fm * ca * ca) / mass + vn * vn * ta * ta / ln;
          track(&acc, o.fiber_acceleration, an * sc->lopt / (ts * ts), ln + 10 * vn);
          track(&rel, o.fiber_state_derivative, vn * vs, 0);
          track(&rel, o.fiber_velocity, vn * vs, 1);
          track(&rel, o.fiber_force / sc->fmax, fm, 2);
          track(&rel, o.tendon_force / sc->fmax, ref_simm_ft(&r, e), 3);
          track(&rel, o.damping_fiber_force, 0, 4);
          track(&rel, o.force_velocity_multiplier, ref_curve(&r, 3, vn), 5);
          EXPECT_TRUE(o.clamped == 0);
        }
  }
  EXPECT_MAXERR(acc, 1e-10, "Delp: fiber acceleration of the junction mass");
  EXPECT_MAXERR(rel, 1e-12, "Delp: output relations");
}

// equilibrium initialization over a grid of activations and path lengths: the static balance
// (a f_AL + f_PE) cos(alpha) = f_T(strain) from the test's curves, and a fiber that stays still;
// with path speed: the balance at the fiber velocity the solution reports
static void test_simm_equilibrium(void) {
  const double acts[6] = {0, 0.01, 0.05, 0.25, 0.5, 1};
  const double speeds[3] = {0, -0.05, 0.05};
  for (int c = 0; c < NSIMM; c++) {
    const simm_case* sc = &simm_cases[c];
    mbs_muscle_model m;
    simm_ref r;
    if (make_simm(sc, &m, &r)) continue;
    const int delp = sc->kind == MBS_MUSCLE_DELP1990;
    const double h = sc->lopt * sin(sc->alpha), vs = sc->lopt / sc->ts, tol = 1e-8 * sc->fmax;
    double worst = 0, worst_dyn = 0, still = 0;
    int fails = 0, bound = 0, bad_bound = 0, slack = 0, count = 0;
    for (int ia = 0; ia < 6; ia++)
      for (int il = 0; il <= 60; il++)
        for (int iv = 0; iv < 3; iv++) {
          const double a = acts[ia], vmt = speeds[iv];
          // from a slack tendon with a short fiber to fibers of 1.8 l_opt on a strained tendon
          const double lmt = sc->lst + sc->lopt * (0.3 + 1.6 * il / 60.0);
          mbs_muscle_equilibrium eq;
          mbs_error err;
          count++;
          if (mbs_muscle_equilibrium_solve(&m, a, lmt, vmt, 0, &eq, &err)) {
            if (fails++ < 3) fprintf(stderr, "%s: %s\n", sc->label, err.message);
            continue;
          }
          const double lm = eq.fiber_length, ln = lm / sc->lopt, ca = ref_cos_pennation(h, lm);
          const double e = (lmt - lm * ca) / sc->lst - 1;
          if (eq.tendon_slack) {  // the fiber pushes (damping, or a passive curve below 0)
            slack++;
            if (!(eq.residual < 0 && fabs(eq.tendon_force) <= 1e-12 * sc->fmax)) bad_bound++;
            continue;
          }
          if (eq.at_lower_bound) {  // even the shortest fiber outpulls the tendon
            bound++;
            const double rmin = (a * ref_simm_fal(&r, sc->kind, ln) + ref_simm_fpe(&r, ln)) * ca -
                                ref_simm_ft(&r, e);
            if (!(lm == m.min_fiber_length && (vmt != 0 || rmin > 0))) bad_bound++;
            continue;
          }
          const double vn = eq.fiber_velocity / vs;
          const double fv = delp ? ref_curve(&r, 3, vn) : ref_schutte_g(vn);
          const double fm = a * ref_simm_fal(&r, sc->kind, ln) * fv + ref_simm_fpe(&r, ln) +
                            (delp ? 0 : 0.1 * vn);
          const double res = sc->fmax * (fm * ca - ref_simm_ft(&r, e));
          if (vmt == 0) {
            worst = fmax(worst, fabs(res));
            EXPECT_TRUE(eq.fiber_velocity == 0);
            // the dynamics leave it there
            mbs_muscle_output o;
            if (simm_eval(&m, lmt, 0, a, eq.fiber_state, eq.fiber_velocity, &o)) {
              fails++;
              continue;
            }
            // the force its motion stands for: Delp's junction mass times its acceleration,
            // Schutte's damping force along the tendon (either is the residual)
            still = fmax(still, delp ? fabs(o.fiber_acceleration) * sc->ts * sc->ts / sc->lopt *
                                           0.00287 * vs * vs * sc->fmax
                                     : fabs(o.fiber_velocity / vs) * 0.1 * ca * sc->fmax);
          } else {
            worst_dyn = fmax(worst_dyn, fabs(res));
          }
        }
    if (getenv("MUSCLE_VERBOSE") || fails || bad_bound || worst > 1.01 * tol ||
        worst_dyn > 1.01 * tol || still > 1.01 * tol)
      fprintf(stderr,
              "%s: %d of %d failed, %d at the lower bound (%d wrongly), %d slack, worst "
              "residual %g N (with speed %g N), still fiber %g N\n",
              sc->label, fails, count, bound, bad_bound, slack, worst, worst_dyn, still);
    EXPECT_EQ_INT(fails, 0);
    EXPECT_EQ_INT(bad_bound, 0);
    EXPECT_TRUE(worst <= 1.01 * tol);
    EXPECT_TRUE(worst_dyn <= 1.01 * tol);
    EXPECT_TRUE(still <= 1.01 * tol);
    EXPECT_TRUE(bound + slack < count / 4);
  }
}

// Fixed path length, constant excitation: the states integrated by classical RK4 (written here)
// settle where equilibrium initialization puts the fiber at activation u
typedef struct simm_ode {
  const mbs_muscle_model* m;
  double lmt, u;
} simm_ode;
static void simm_rhs(const simm_ode* q, const double y[3], double dy[3]) {
  mbs_muscle_output o;
  mbs_error err;
  const int rc = mbs_muscle_eval_states(q->m, q->lmt, 0, y[0], y + 1, &o, &err);
  dy[0] = mbs_muscle_activation_derivative(q->m, q->u, y[0]);
  dy[1] = rc ? NAN : o.fiber_state_derivative;
  dy[2] = rc ? NAN : o.fiber_acceleration;
}
static void test_simm_isometric(void) {
  const int quick = getenv("MBS_TEST_QUICK") != NULL;
  const int which[2] = {0, 3};  // GMED1, Schutte and Delp
  for (int w = 0; w < 2; w++) {
    const simm_case* sc = &simm_cases[which[w]];
    mbs_muscle_model m;
    simm_ref r;
    if (make_simm(sc, &m, &r)) continue;
    const int delp = sc->kind == MBS_MUSCLE_DELP1990;
    const double lmt = sc->lst * 1.01 + sc->lopt * 1.05, u = 0.6, a0 = 0.05;
    mbs_muscle_equilibrium e0, e1;
    mbs_error err;
    EXPECT_OK(mbs_muscle_equilibrium_solve(&m, a0, lmt, 0, 0, &e0, &err));
    EXPECT_OK(mbs_muscle_equilibrium_solve(&m, u, lmt, 0, 0, &e1, &err));
    const simm_ode q = {&m, lmt, u};
    double y[3] = {a0, e0.fiber_length, 0};
    const double dt = delp ? 1e-5 : 1e-4, T = quick ? 0.4 : 1.0;
    const int steps = (int)(T / dt + 0.5);
    double fmin_seen = INFINITY;
    for (int i = 0; i < steps; i++) {
      double k1[3], k2[3], k3[3], k4[3], t[3];
      simm_rhs(&q, y, k1);
      for (int j = 0; j < 3; j++) t[j] = y[j] + 0.5 * dt * k1[j];
      simm_rhs(&q, t, k2);
      for (int j = 0; j < 3; j++) t[j] = y[j] + 0.5 * dt * k2[j];
      simm_rhs(&q, t, k3);
      for (int j = 0; j < 3; j++) t[j] = y[j] + dt * k3[j];
      simm_rhs(&q, t, k4);
      for (int j = 0; j < 3; j++) y[j] += dt / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
      fmin_seen = fmin(fmin_seen, y[1]);
    }
    mbs_muscle_output o;
    EXPECT_OK(simm_eval(&m, lmt, 0, y[0], y[1], y[2], &o));
    if (getenv("MUSCLE_VERBOSE"))
      fprintf(stderr, "%s: a %.12g l %.12g (equilibrium %.12g, from %.12g) v %g F^T %.9g (%.9g)\n",
              sc->label, y[0], y[1], e1.fiber_length, e0.fiber_length, y[2], o.tendon_force,
              e1.tendon_force);
    EXPECT_NEAR(y[0], u, quick ? 1e-9 : 1e-12);
    EXPECT_TRUE(e1.fiber_length < e0.fiber_length - 0.02 * sc->lopt);  // activation shortens it
    EXPECT_ABS(y[1], e1.fiber_length, (quick ? 1e-6 : 1e-9) * sc->lopt);
    EXPECT_ABS(o.tendon_force, e1.tendon_force, (quick ? 1e-4 : 1e-7) * sc->fmax);
    EXPECT_ABS(o.fiber_velocity, 0, (quick ? 1e-5 : 1e-8) * sc->lopt / sc->ts);
    EXPECT_TRUE(fmin_seen >= m.min_fiber_length);
  }
}

static void test_simm_api(void) {
  mbs_muscle_model sm, dm;
  simm_ref r;
  EXPECT_OK(make_simm(&simm_cases[0], &sm, &r));
  EXPECT_OK(make_simm(&simm_cases[3], &dm, &r));
  int ha, hf;
  EXPECT_EQ_INT(mbs_muscle_state_count(&sm, &ha, &hf), 2);
  EXPECT_TRUE(ha == 1 && hf == 1);
  EXPECT_EQ_INT(mbs_muscle_state_count(&dm, &ha, &hf), 3);
  EXPECT_TRUE(ha == 1 && hf == 2);
  EXPECT_TRUE(strcmp(mbs_muscle_kind_name(MBS_MUSCLE_SCHUTTE1993),
                     "Schutte1993Muscle_Deprecated") == 0);
  EXPECT_TRUE(strcmp(mbs_muscle_kind_name(MBS_MUSCLE_DELP1990), "Delp1990Muscle_Deprecated") == 0);
  EXPECT_EQ_INT(MBS_MUSCLE_RIGID_TENDON, 3);  // the older kinds keep their numbers

  // mbs_muscle_eval: Schutte as the others; Delp needs both of its fiber states
  mbs_muscle_output o1, o2;
  mbs_error err;
  EXPECT_OK(mbs_muscle_eval(&sm, 0.14, 0.1, 0.4, 0.055, &o1, &err));
  const double s1 = 0.055;
  EXPECT_OK(mbs_muscle_eval_states(&sm, 0.14, 0.1, 0.4, &s1, &o2, &err));
  EXPECT_TRUE(memcmp(&o1, &o2, sizeof o1) == 0);
  EXPECT_TRUE(mbs_muscle_eval(&dm, 0.14, 0.1, 0.4, 0.055, &o1, &err) == MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(err.message, "mbs_muscle_eval_states") != NULL);
  EXPECT_TRUE(mbs_muscle_eval_states(&dm, 0.14, 0.1, 0.4, NULL, &o1, &err) == MBS_ERR_ARGUMENT);
  const double s2[2] = {0.055, NAN};
  EXPECT_TRUE(mbs_muscle_eval_states(&dm, 0.14, 0.1, 0.4, s2, &o1, &err) == MBS_ERR_ARGUMENT);

  // plain data: byte copies evaluate bit for bit the same
  mbs_muscle_model copy;
  memcpy(&copy, &dm, sizeof copy);
  const double s3[2] = {0.05, -0.1};
  EXPECT_OK(mbs_muscle_eval_states(&dm, 0.14, 0.1, 0.4, s3, &o1, &err));
  EXPECT_OK(mbs_muscle_eval_states(&copy, 0.14, 0.1, 0.4, s3, &o2, &err));
  EXPECT_TRUE(memcmp(&o1, &o2, sizeof o1) == 0);

  // Schutte's active fiber at its minimum length with a slack tendon stays there
  mbs_muscle_model md;
  EXPECT_OK(make_simm(&simm_cases[2], &md, &r));
  const double lmin = md.min_fiber_length;
  EXPECT_OK(mbs_muscle_eval(&md, 0.408 * 0.99, -1, 1, 0.5 * lmin, &o1, &err));
  EXPECT_TRUE(o1.clamped == 1 && o1.fiber_velocity == 0 && o1.fiber_force == 0);
  EXPECT_NEAR(o1.fiber_length, lmin, 1e-15);
  EXPECT_OK(mbs_muscle_eval(&md, 0.408 * 0.99, -1, 1, 1.01 * lmin, &o1, &err));
  EXPECT_TRUE(o1.clamped == 0 && o1.fiber_velocity < 0);  // above it: shortening

  // fibers perpendicular to the tendon (maximum_pennation_angle = pi/2, as OpenSim's
  // calcPennation allows): with a taut tendon they follow the path at the cosine of the fiber a
  // slack tendon would leave (Schutte's stiff-tendon branch)
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_SCHUTTE1993);
  p.pennation_angle_at_optimal = 0.5;
  p.maximum_pennation_angle = M_PI / 2;
  EXPECT_OK(mbs_muscle_prepare(&copy, &p, "perpendicular", &err));
  const double hw = 0.1 * sin(0.5), lat = 0.25 - 0.2;
  EXPECT_NEAR(copy.min_fiber_length, hw, 1e-15);
  EXPECT_OK(mbs_muscle_eval(&copy, 0.25, 0.2, 0.5, hw, &o1, &err));
  EXPECT_ABS(o1.cos_pennation, 0, 1e-12);
  EXPECT_NEAR(o1.fiber_velocity, 0.2 * lat / sqrt(lat * lat + hw * hw), 1e-14);
  EXPECT_OK(mbs_muscle_eval(&copy, 0.19, 0.2, 0.5, hw, &o1, &err));  // slack tendon: still
  EXPECT_TRUE(o1.fiber_velocity == 0 && o1.tendon_force == 0);

  // parameter errors name the muscle and the property
  mbs_muscle_params_default(&p, MBS_MUSCLE_SCHUTTE1993);
  p.simm.damping = 0;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "GMED1", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "GMED1") && strstr(err.message, "damping"));
  mbs_muscle_params_default(&p, MBS_MUSCLE_SCHUTTE1993);
  p.fiber_damping = 0.1;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "GMED1", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "GMED1") && strstr(err.message, "fiber_damping"));
  mbs_muscle_params_default(&p, MBS_MUSCLE_DELP1990);
  p.simm.mass = 0;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "SOL", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "SOL") && strstr(err.message, "mass"));
  mbs_muscle_params_default(&p, MBS_MUSCLE_DELP1990);
  p.simm.time_scale = 0;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "SOL", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "time_scale") != NULL);
  mbs_muscle_params_default(&p, MBS_MUSCLE_DELP1990);
  p.simm.activation2 = 0;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "SOL", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "activation2") != NULL);
  mbs_muscle_params_default(&p, MBS_MUSCLE_SCHUTTE1993);
  p.ignore_tendon_compliance = 1;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "GMED1", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "ignore_tendon_compliance") != NULL);
  mbs_muscle_params_default(&p, MBS_MUSCLE_DELP1990);
  p.simm.force_velocity_curve.param[3] = p.simm.force_velocity_curve.param[2];  // x repeats
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "SOL", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "SOL") && strstr(err.message, "force_velocity_curve") &&
              strstr(err.message, "increase"));
  // Schutte has no force-velocity table: a bad one is not used, so not an error
  mbs_muscle_params_default(&p, MBS_MUSCLE_SCHUTTE1993);
  p.simm.force_velocity_curve.n = 0;
  EXPECT_OK(mbs_muscle_prepare(&copy, &p, "GMED1", &err));
  mbs_muscle_params_default(&p, MBS_MUSCLE_SCHUTTE1993);
  p.simm.passive_force_length_curve_is_default = 0;
  p.simm.passive_force_length_curve.n = 1;
  EXPECT_TRUE(mbs_muscle_prepare(&copy, &p, "GMED1", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "passive_force_length_curve") != NULL);
}

int main(void) {
  test_thelen_curves();
  test_degroote_curves();
  test_delp_curves();
  test_millard_curves();
  test_pennation();
  test_isometric();
  test_equilibrium_grid();
  test_passive_monotone();
  test_stretch();
  test_activation();
  test_path_speed();
  test_eval_physics();
  test_simm_curves();
  test_simm_activation();
  test_schutte_velocity();
  test_delp_acceleration();
  test_simm_equilibrium();
  test_simm_isometric();
  test_simm_api();
  return mbs_test_finish("test_muscle");
}
