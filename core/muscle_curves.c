// Closed-form normalized muscle curves: Thelen 2003 (as OpenSim's Thelen2003Muscle computes
// them, and as OpenSim 2 did: Thelen2003Muscle_Deprecated), De Groote & Fregly 2016
// (DeGrooteFregly2016Muscle), and the SIMM / Delp 1990 spline tables that OpenSim's
// RigidTendonMuscle uses by default. Each returns value and slope.
// Also the default tables of Schutte1993Muscle_Deprecated and Delp1990Muscle_Deprecated and
// the flat curve tables those models read from a model file.
#include "mbs/muscle.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "mbs/function.h"

// ---------------------------------------------------------------------------------------------
// Thelen 2003
// ---------------------------------------------------------------------------------------------

void mbs_thelen2003_active_force_length(const mbs_thelen2003_curve_params* p, double l,
                                        double d[2]) {
  const double x = l - 1;
  const double f = exp(-x * x / p->kshape_active);
  d[0] = f;
  d[1] = -2 * x / p->kshape_active * f;
}

void mbs_thelen2003_passive_force_length(const mbs_thelen2003_curve_params* p, double l,
                                         double d[2]) {
  if (!(l > 1)) {
    d[0] = d[1] = 0;
    return;
  }
  const double k = p->kshape_passive, e0 = p->fmax_muscle_strain;
  const double e = exp(k * (l - 1) / e0), den = expm1(k);
  d[0] = (e - 1) / den;
  d[1] = k / e0 * e / den;
}

void mbs_thelen2003_tendon_constants(const mbs_thelen2003_curve_params* p, double* e_toe,
                                     double* k_lin) {
  // Thelen's rounded e_toe = 0.609 e0 is the exact 99 e0 e^3 / (166 e^3 - 67), at which the
  // toe exponential (force 0.33, k_toe = 3) meets a line reaching 1 at e0 with equal slope
  const double e0 = p->fmax_tendon_strain, e3 = exp(3.0);
  const double et = 99 * e0 * e3 / (166 * e3 - 67);
  if (e_toe) *e_toe = et;
  if (k_lin) *k_lin = 0.67 / (e0 - et);
}

void mbs_thelen2003_tendon_force_length(const mbs_thelen2003_curve_params* p, double lt,
                                        double d[2]) {
  const double x = lt - 1, f_toe = 0.33, k_toe = 3;
  double e_toe, k_lin;
  mbs_thelen2003_tendon_constants(p, &e_toe, &k_lin);
  if (x > e_toe) {
    d[0] = f_toe + k_lin * (x - e_toe);
    d[1] = k_lin;
  } else if (x > 0) {
    const double s = f_toe / expm1(k_toe), em = expm1(k_toe * x / e_toe);
    d[0] = s * em;
    d[1] = s * k_toe / e_toe * (em + 1);  // the exponential once
  } else {
    d[0] = d[1] = 0;
  }
}

// Thelen's eq. 6 in multiplier form, v = (0.25 + 0.75 a)(fv - 1)/b, with eq. 7's
// b = 1 + fv/Af (concentric, fv <= 1) or b = (2 + 2/Af)(Flen - fv)/(Flen - 1) (eccentric).
static void thelen_eq6(const mbs_thelen2003_curve_params* p, double k, double fv, double* v,
                       double* dv) {
  double b, db;
  if (fv <= 1) {
    b = 1 + fv / p->af;
    db = 1 / p->af;
  } else {
    const double c2 = (2 + 2 / p->af) / (p->flen - 1);
    b = c2 * (p->flen - fv);
    db = -c2;
  }
  *v = k * (fv - 1) / b;
  *dv = k / b - k * (fv - 1) * db / (b * b);
}

double mbs_thelen2003_fv_inverse(const mbs_thelen2003_curve_params* p, double a, double fv,
                                 double* dv_dfv) {
  const double k = 0.25 + 0.75 * a;
  const double f1 = p->fv_linear_extrap_threshold * p->flen;
  double v, dv;
  if (fv > 0 && fv < f1) {
    thelen_eq6(p, k, fv, &v, &dv);
  } else {
    const double f0 = fv <= 0 ? 0 : f1;
    double v0;
    thelen_eq6(p, k, f0, &v0, &dv);
    v = v0 + dv * (fv - f0);
  }
  if (dv_dfv) *dv_dfv = dv;
  return v;
}

double mbs_thelen2003_fv(const mbs_thelen2003_curve_params* p, double a, double v,
                         double* dfv_dv) {
  const double k = 0.25 + 0.75 * a, af = p->af, flen = p->flen;
  const double c2 = (2 + 2 / af) / (flen - 1);
  const double f1 = p->fv_linear_extrap_threshold * flen;
  double v1, s1;  // velocity and slope dv/dfv where the eccentric line begins
  thelen_eq6(p, k, f1, &v1, &s1);
  double fv, d;
  if (v <= -k) {  // below fv = 0: the line of slope dv/dfv = k (1 + 1/Af) through (0, -k)
    d = 1 / (k * (1 + 1 / af));
    fv = (v + k) * d;
  } else if (v <= 0) {  // v (1 + fv/Af) = k (fv - 1)
    const double q = k - v / af;
    fv = (k + v) / q;
    d = k * (1 + 1 / af) / (q * q);
  } else if (v < v1) {  // v c2 (Flen - fv) = k (fv - 1)
    const double q = k + v * c2;
    fv = (k + v * c2 * flen) / q;
    d = c2 * k * (flen - 1) / (q * q);
  } else {
    d = 1 / s1;
    fv = f1 + (v - v1) * d;
  }
  if (dfv_dv) *dfv_dv = d;
  return fv;
}

// OpenSim 2's forms (Thelen2003Muscle_Deprecated)

void mbs_thelen2003_deprecated_tendon_force_length(const mbs_thelen2003_curve_params* p,
                                                   double x, double d[2]) {
  const double e_toe = 0.609 * p->fmax_tendon_strain, f_toe = 0.333333, k_toe = 3;
  const double k_lin = 1.712 / p->fmax_tendon_strain;
  if (x > e_toe) {
    d[0] = k_lin * (x - e_toe) + f_toe;
    d[1] = k_lin;
  } else if (x > 0) {
    const double s = f_toe / expm1(k_toe), em = expm1(k_toe * x / e_toe);
    d[0] = s * em;
    d[1] = s * k_toe / e_toe * (em + 1);
  } else {
    d[0] = d[1] = 0;
  }
  d[0] += 0.001 * (1 + x);  // never quite slack
  d[1] += 0.001;
}

void mbs_thelen2003_deprecated_passive_force_length(const mbs_thelen2003_curve_params* p,
                                                    double l, double d[2]) {
  const double k = p->kshape_passive, e0 = p->fmax_muscle_strain;
  if (l > 1 + e0) {  // the tangent at l~ = 1 + e0, where the exponential is 1
    d[1] = k / e0;
    d[0] = 1 + d[1] * (l - 1 - e0);
  } else {
    d[0] = exp(k * ((l - 1) / e0 - 1));
    d[1] = k / e0 * d[0];
  }
}

// the two branches of the damped relation at force F (active force A, damping dm): velocity
// and its slope dv/dF
static void thelen_deprecated_branch(const mbs_thelen2003_curve_params* p, double dm, double A,
                                     double F, int shortening, double* v, double* dv) {
  double b, db;
  if (shortening) {
    b = A + F / p->af;
    db = 1 / p->af;
  } else {
    const double c = (2 + 2 / p->af) / (p->flen - 1);
    b = c * (A * p->flen - F);
    db = -c;
  }
  const double q = b + dm;
  *v = (F - A) / q;
  *dv = 1 / q - (F - A) * db / (q * q);
}

// Below F = 0 and above F = 0.95 A Flen the relation continues along its secants over the
// next 1e-6 (absolute below, in units of A Flen above), as OpenSim 2 built them.
double mbs_thelen2003_deprecated_fiber_velocity(const mbs_thelen2003_curve_params* p,
                                                double damping, double A, double F,
                                                double* dv_dF) {
  const double eps = 1e-6;
  double v, dv, v1, dv1;
  if (F < A && F >= 0) {
    thelen_deprecated_branch(p, damping, A, F, 1, &v, &dv);
  } else if (F < A) {
    thelen_deprecated_branch(p, damping, A, 0, 1, &v, &dv1);
    thelen_deprecated_branch(p, damping, A, eps, 1, &v1, &dv1);
    dv = (v1 - v) / eps;
    v += dv * F;
  } else if (F < 0.95 * A * p->flen) {
    thelen_deprecated_branch(p, damping, A, F, 0, &v, &dv);
  } else {
    const double f0 = 0.95 * A * p->flen, f1 = (0.95 + eps) * A * p->flen;
    thelen_deprecated_branch(p, damping, A, f0, 0, &v, &dv1);
    thelen_deprecated_branch(p, damping, A, f1, 0, &v1, &dv1);
    dv = (v1 - v) / (f1 - f0);
    v += dv * (F - f0);
  }
  if (dv_dF) *dv_dF = dv;
  return v;
}

// ---------------------------------------------------------------------------------------------
// De Groote & Fregly 2016
// ---------------------------------------------------------------------------------------------

static const double degroote_b[3][4] = {
    {0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465},
    {0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188},
    {0.1, 1.0, 0.3535533905932740, 0.0}};
static const double degroote_d1 = -0.3211346127989808, degroote_d2 = -8.149,
                    degroote_d3 = -0.374, degroote_d4 = 0.8825327733249912;
static const double degroote_kpe = 4.0, degroote_min_norm_fiber_length = 0.2;
static const double degroote_c1 = 0.2, degroote_c2 = 1.0, degroote_c3 = 0.2;

void mbs_degroote2016_active_force_length(const mbs_degroote2016_curve_params* p, double l,
                                          double d[2]) {
  const double s = p->active_force_width_scale;
  const double x = (l - 1) / s + 1;
  double f = 0, df = 0;
  for (int i = 0; i < 3; i++) {
    const double* b = degroote_b[i];
    const double den = b[2] + b[3] * x;
    const double t = (x - b[1]) / den;
    const double g = b[0] * exp(-0.5 * t * t);
    f += g;
    df += -g * t * (b[2] + b[3] * b[1]) / (den * den);  // dt/dx = (b3 + b4 b2)/den^2
  }
  d[0] = f;
  d[1] = df / s;
}

void mbs_degroote2016_passive_force_length(const mbs_degroote2016_curve_params* p, double l,
                                           double d[2]) {
  if (p->ignore_passive_fiber_force) {
    d[0] = d[1] = 0;
    return;
  }
  const double e0 = p->passive_fiber_strain_at_one_norm_force, k = degroote_kpe;
  const double off = exp(k * (degroote_min_norm_fiber_length - 1) / e0);
  const double den = exp(k) - off, e = exp(k * (l - 1) / e0);
  d[0] = (e - off) / den;
  d[1] = k / e0 * e / den;
}

static double degroote_kt(const mbs_degroote2016_curve_params* p) {
  return log((1 + degroote_c3) / degroote_c1) /
         (1 + p->tendon_strain_at_one_norm_force - degroote_c2);
}

void mbs_degroote2016_tendon_force_length(const mbs_degroote2016_curve_params* p, double lt,
                                          double d[2]) {
  const double kt = degroote_kt(p), e = degroote_c1 * exp(kt * (lt - degroote_c2));
  d[0] = e - degroote_c3;
  d[1] = kt * e;
}

double mbs_degroote2016_tendon_length(const mbs_degroote2016_curve_params* p, double f) {
  return log((f + degroote_c3) / degroote_c1) / degroote_kt(p) + degroote_c2;
}

void mbs_degroote2016_force_velocity(double v, double d[2]) {
  const double s = degroote_d2 * v + degroote_d3, r = sqrt(s * s + 1);
  d[0] = degroote_d1 * log(s + r) + degroote_d4;
  d[1] = degroote_d1 * degroote_d2 / r;
}

double mbs_degroote2016_fv_inverse(double fv, double* dv_dfv) {
  // (the supplement of De Groote et al. 2016 omits the -d3, as OpenSim notes)
  const double z = (fv - degroote_d4) / degroote_d1;
  if (dv_dfv) *dv_dfv = cosh(z) / (degroote_d1 * degroote_d2);
  return (sinh(z) - degroote_d3) / degroote_d2;
}

// ---------------------------------------------------------------------------------------------
// SIMM / Delp 1990 tables (OpenSim RigidTendonMuscle defaults), x then y
// ---------------------------------------------------------------------------------------------

static const double delp_afl[2 * 21] = {
    -5.30769200, -4.30769200, -1.92307700, -0.88461500, -0.26923100, 0.23076900, 0.46153800,
    0.52725000, 0.62875000, 0.71875000, 0.86125000, 1.04500000, 1.21750000, 1.43875000,
    1.50000000, 1.61538500, 2.00000000, 2.96153800, 3.69230800, 5.46153800, 9.90190200,
    0.01218800, 0.02189900, 0.03646600, 0.05249300, 0.07531200, 0.11415800, 0.15785900,
    0.22666700, 0.63666700, 0.85666700, 0.95000000, 0.99333300, 0.77000000, 0.24666700,
    0.19382100, 0.13325200, 0.07268300, 0.04441700, 0.03634100, 0.02189900, 0.00733200};

static const double delp_fpe[2 * 13] = {
    -5.00000000, 0.99800000, 0.99900000, 1.00000000, 1.10000000, 1.20000000, 1.30000000,
    1.40000000, 1.50000000, 1.60000000, 1.60100000, 1.60200000, 5.00000000,
    0.00000000, 0.00000000, 0.00000000, 0.00000000, 0.03500000, 0.12000000, 0.26000000,
    0.55000000, 1.17000000, 2.00000000, 2.00000000, 2.00000000, 2.00000000};

static const double delp_fv[2 * 42] = {
    -1.001, -1.00, -0.95, -0.90, -0.85, -0.80, -0.75, -0.70, -0.65, -0.60, -0.55, -0.50, -0.45,
    -0.40, -0.35, -0.30, -0.25, -0.20, -0.15, -0.10, -0.05, 0.00, 0.05, 0.10, 0.15, 0.20, 0.25,
    0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 1.00,
    0.000000, 0.000000, 0.010417, 0.021739, 0.034091, 0.047619, 0.062500, 0.078947, 0.097222,
    0.117647, 0.140625, 0.166667, 0.196429, 0.230769, 0.270833, 0.318182, 0.375000, 0.444444,
    0.531250, 0.642857, 0.791667, 1.000000, 1.482014, 1.601571, 1.655791, 1.686739, 1.706751,
    1.720753, 1.731099, 1.739055, 1.745365, 1.750490, 1.754736, 1.758312, 1.761364, 1.763999,
    1.766298, 1.768321, 1.770115, 1.771717, 1.773155, 1.774455};

int mbs_delp_curve_points(mbs_delp_curve which, const double** x, const double** y) {
  const double* t;
  int n;
  switch (which) {
    case MBS_DELP_ACTIVE_FORCE_LENGTH: t = delp_afl; n = 21; break;
    case MBS_DELP_PASSIVE_FORCE_LENGTH: t = delp_fpe; n = 13; break;
    case MBS_DELP_FORCE_VELOCITY: t = delp_fv; n = 42; break;
    default: return 0;
  }
  if (x) *x = t;
  if (y) *y = t + n;
  return n;
}

int mbs_delp_curves_prepare(mbs_delp_curves* c, mbs_error* err) {
  static const char* names[MBS_DELP_CURVE_COUNT] = {
      "Delp active force-length curve", "Delp passive force-length curve",
      "Delp force-velocity curve"};
  for (int k = 0; k < MBS_DELP_CURVE_COUNT; k++) {
    const double* x = NULL;
    const int n = mbs_delp_curve_points((mbs_delp_curve)k, &x, NULL);
    const int rc = mbs_function_prepare(MBS_FUNC_SIMM_SPLINE, n, x, c->coef[k], err, names[k]);
    if (rc) return rc;
  }
  return MBS_OK;
}

void mbs_delp_curve_eval(const mbs_delp_curves* c, mbs_delp_curve which, double x,
                         double d[2]) {
  const double* t = NULL;
  const int n = mbs_delp_curve_points(which, &t, NULL);
  if (n == 0) {
    d[0] = d[1] = NAN;
    return;
  }
  double e[3];
  mbs_function_eval(MBS_FUNC_SIMM_SPLINE, n, t, c->coef[which], x, e);
  d[0] = e[0];
  d[1] = e[1];
}

// ---------------------------------------------------------------------------------------------
// Tabulated curves of Schutte1993Muscle_Deprecated and Delp1990Muscle_Deprecated
// ---------------------------------------------------------------------------------------------

// OpenSim's default tendon force-length table of both classes (constructProperties): F^T / F_max
// against tendon strain, 0.227 at a strain of 1.23 %, then one spline piece up to 345 at 9.2
static const double simm_tendon[2 * 17] = {
    -10.0, -0.002, -0.001, 0.0, 0.00131, 0.00281, 0.00431, 0.00581, 0.00731, 0.00881, 0.0103,
    0.0118, 0.0123, 9.2, 9.201, 9.202, 20.0,
    0.0, 0.0, 0.0, 0.0, 0.0108, 0.0257, 0.0435, 0.0652, 0.0915, 0.123, 0.161, 0.208, 0.227,
    345.0, 345.0, 345.0, 345.0};

int mbs_simm_default_curve_points(mbs_simm_curve which, const double** x, const double** y) {
  switch (which) {
    case MBS_SIMM_TENDON_FORCE_LENGTH:
      if (x) *x = simm_tendon;
      if (y) *y = simm_tendon + 17;
      return 17;
    case MBS_SIMM_ACTIVE_FORCE_LENGTH:
      return mbs_delp_curve_points(MBS_DELP_ACTIVE_FORCE_LENGTH, x, y);
    case MBS_SIMM_PASSIVE_FORCE_LENGTH:
      return mbs_delp_curve_points(MBS_DELP_PASSIVE_FORCE_LENGTH, x, y);
    case MBS_SIMM_FORCE_VELOCITY: return mbs_delp_curve_points(MBS_DELP_FORCE_VELOCITY, x, y);
    default: return 0;
  }
}

int mbs_muscle_curve_set(mbs_muscle_curve* c, mbs_function_type type, int n, const double* x,
                         const double* y, mbs_error* err) {
  const char* what = "muscle curve";
  const int points = type == MBS_FUNC_SIMM_SPLINE || type == MBS_FUNC_NATURAL_CUBIC_SPLINE ||
                     type == MBS_FUNC_PIECEWISE_LINEAR;
  const int allowed = points || type == MBS_FUNC_CONSTANT || type == MBS_FUNC_LINEAR ||
                      type == MBS_FUNC_POLYNOMIAL || type == MBS_FUNC_SINE;
  if (!allowed)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                    "%s: function type %d cannot be a muscle curve (a table, a spline, a "
                    "constant, linear, polynomial or sine function can)",
                    what, (int)type);
  if (points && !(n >= 2 && n <= MBS_MUSCLE_CURVE_MAX_POINTS))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, what, "%s: a table needs 2 to %d points, got %d",
                    what, MBS_MUSCLE_CURVE_MAX_POINTS, n);
  if (type == MBS_FUNC_POLYNOMIAL && !(n >= 1 && n <= 2 * MBS_MUSCLE_CURVE_MAX_POINTS))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, what,
                    "%s: a polynomial needs 1 to %d coefficients, got %d", what,
                    2 * MBS_MUSCLE_CURVE_MAX_POINTS, n);
  if (!x || (points && !y))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, what, "%s: no values given", what);
  memset(c, 0, sizeof *c);
  c->type = type;
  c->n = type == MBS_FUNC_POLYNOMIAL || points ? n : 1;
  if (points) {
    memcpy(c->param, x, (size_t)n * sizeof *x);
    memcpy(c->param + n, y, (size_t)n * sizeof *y);
  } else {
    memcpy(c->param, x, (size_t)mbs_function_param_count(type, c->n) * sizeof *x);
  }
  return MBS_OK;
}
