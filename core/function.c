// Constant, linear, polynomial and cubic-spline functions with two derivatives.
//
// Both splines are stored per knot i as y_i + b_i dx + c_i dx^2 + d_i dx^3, dx = x - x_i.
// Natural spline: s'' = 0 at both ends. SIMM spline (Forsythe, Malcolm & Moler's end
// conditions, as OpenSim's SimmSpline): s''' at each end equals the third divided difference
// of the four end points, so cubic data are reproduced exactly (3 points: a parabola).
#include "mbs/function.h"
#include "mbs/spatial.h"

#include <math.h>
#include <string.h>

int mbs_function_param_count(mbs_function_type type, int n) {
  switch (type) {
    case MBS_FUNC_CONSTANT: return 1;
    case MBS_FUNC_LINEAR: return 2;
    case MBS_FUNC_POLYNOMIAL: return n;
    case MBS_FUNC_NATURAL_CUBIC_SPLINE: return 2 * n;
    case MBS_FUNC_SIMM_SPLINE: return 2 * n;
    case MBS_FUNC_MULTIPLIER: return 1;
    case MBS_FUNC_SINE: return 4;
    case MBS_FUNC_PIECEWISE_LINEAR:
    case MBS_FUNC_PIECEWISE_LINEAR_HELD:
    case MBS_FUNC_STEPS: return 2 * n;
    case MBS_FUNC_COUNT: break;
  }
  return 0;
}

int mbs_function_cache_count(mbs_function_type type, int n) {
  if (type == MBS_FUNC_NATURAL_CUBIC_SPLINE || type == MBS_FUNC_SIMM_SPLINE) return 3 * n;
  return 0;
}

// solve a tridiagonal system in place: sub[i] x[i-1] + diag[i] x[i] + sup[i] x[i+1] = rhs[i]
// (sub[0], sup[n-1] unused); the solution overwrites rhs; diag is destroyed. Returns 0 when a
// pivot vanishes.
static int solve_tridiagonal(int n, const double* sub, double* diag, const double* sup,
                             double* rhs) {
  for (int i = 1; i < n; i++) {
    if (diag[i - 1] == 0) return 0;
    const double w = sub[i] / diag[i - 1];
    diag[i] -= w * sup[i - 1];
    rhs[i] -= w * rhs[i - 1];
  }
  if (diag[n - 1] == 0) return 0;
  rhs[n - 1] /= diag[n - 1];
  for (int i = n - 2; i >= 0; i--) rhs[i] = (rhs[i] - sup[i] * rhs[i + 1]) / diag[i];
  return 1;
}

// Fill b, c, d from sigma_i = s''(x_i)/6 (the cubic on [x_i, x_i+1] is then determined).
static void spline_coefficients(int n, const double* x, const double* y, const double* sigma,
                                double* b, double* c, double* d) {
  for (int i = 0; i < n - 1; i++) {
    const double h = x[i + 1] - x[i];
    const double slope = (y[i + 1] - y[i]) / h;
    b[i] = slope - h * (sigma[i + 1] + 2 * sigma[i]);
    c[i] = 3 * sigma[i];
    d[i] = (sigma[i + 1] - sigma[i]) / h;
  }
  // at the last knot: the slope and curvature of the last piece, continued
  const double h = x[n - 1] - x[n - 2];
  b[n - 1] = (y[n - 1] - y[n - 2]) / h + h * (sigma[n - 2] + 2 * sigma[n - 1]);
  c[n - 1] = 3 * sigma[n - 1];
  d[n - 1] = d[n - 2];
}

int mbs_function_prepare(mbs_function_type type, int n, const double* param, double* cache,
                         mbs_error* err, const char* component) {
  const int np = mbs_function_param_count(type, n);
  for (int i = 0; i < np; i++)
    if (!isfinite(param[i]))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, component, "%s: parameter %d is not finite",
                      component, i);
  if (type == MBS_FUNC_POLYNOMIAL && n < 1)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                    "%s: a polynomial needs at least one coefficient", component);
  const int linear = type == MBS_FUNC_PIECEWISE_LINEAR ||
                     type == MBS_FUNC_PIECEWISE_LINEAR_HELD || type == MBS_FUNC_STEPS;
  if (type != MBS_FUNC_NATURAL_CUBIC_SPLINE && type != MBS_FUNC_SIMM_SPLINE && !linear)
    return MBS_OK;

  const double* x = param;
  const double* y = param + n;
  if (n < 2)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                    "%s: a spline needs at least 2 points, got %d", component, n);
  for (int i = 0; i + 1 < n; i++)
    if (!(x[i + 1] > x[i]))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, component,
                      "%s: spline knots must increase strictly (x[%d] = %g, x[%d] = %g)",
                      component, i, x[i], i + 1, x[i + 1]);

  if (linear) return MBS_OK;
  double* b = cache;
  double* c = cache + n;
  double* d = cache + 2 * n;
  if (n == 2) {
    b[0] = b[1] = (y[1] - y[0]) / (x[1] - x[0]);
    c[0] = c[1] = d[0] = d[1] = 0;
    return MBS_OK;
  }
  // Tridiagonal system for sigma_i = s''(x_i)/6, interior rows:
  // h(i-1) s(i-1) + 2 (h(i-1) + h(i)) s(i) + h(i) s(i+1) = D(i) - D(i-1), D = divided differences.
  // The work arrays use b, c, d of the cache before they receive the coefficients.
  double* sub = b;
  double* diag = c;
  double* sup = d;
  double sigma[n];  // n is small (knots of a spline), a VLA is fine here
  for (int i = 1; i < n - 1; i++) {
    const double h0 = x[i] - x[i - 1], h1 = x[i + 1] - x[i];
    sub[i] = h0;
    diag[i] = 2 * (h0 + h1);
    sup[i] = h1;
    sigma[i] = (y[i + 1] - y[i]) / h1 - (y[i] - y[i - 1]) / h0;
  }
  const double hf = x[1] - x[0], hl = x[n - 1] - x[n - 2];
  if (type == MBS_FUNC_NATURAL_CUBIC_SPLINE) {
    diag[0] = 1; sup[0] = 0; sigma[0] = 0;
    diag[n - 1] = 1; sub[n - 1] = 0; sigma[n - 1] = 0;
  } else {
    // sigma(1) - sigma(0) = h^2 * third divided difference (sign flipped at the far end)
    diag[0] = -hf; sup[0] = hf;
    diag[n - 1] = -hl; sub[n - 1] = hl;
    sigma[0] = sigma[n - 1] = 0;
    if (n > 3) {
      double dd[4];  // divided differences D(k) = (y(k+1) - y(k)) / h(k)
      for (int k = 0; k < 3; k++) dd[k] = (y[k + 1] - y[k]) / (x[k + 1] - x[k]);
      const double t0 = ((dd[2] - dd[1]) / (x[3] - x[1]) - (dd[1] - dd[0]) / (x[2] - x[0])) /
                        (x[3] - x[0]);
      for (int k = 0; k < 3; k++)
        dd[k] = (y[n - 3 + k] - y[n - 4 + k]) / (x[n - 3 + k] - x[n - 4 + k]);
      const double t1 = ((dd[2] - dd[1]) / (x[n - 1] - x[n - 3]) -
                         (dd[1] - dd[0]) / (x[n - 2] - x[n - 4])) /
                        (x[n - 1] - x[n - 4]);
      sigma[0] = t0 * hf * hf;
      sigma[n - 1] = -t1 * hl * hl;
    }
  }
  if (!solve_tridiagonal(n, sub, diag, sup, sigma))
    return MBS_FAIL(err, MBS_ERR_SINGULAR, component, "%s: spline system is singular",
                    component);
  spline_coefficients(n, x, y, sigma, b, c, d);
  return MBS_OK;
}

static void spline_eval(int n, const double* x, const double* y, const double* cache, double xv,
                        double out[3]) {
  const double* b = cache;
  const double* c = cache + n;
  const double* d = cache + 2 * n;
  if (xv <= x[0] || xv >= x[n - 1]) {
    // end tangent line outside the knots (and exactly at the end knots)
    const int k = xv <= x[0] ? 0 : n - 1;
    const double dx = xv - x[k];
    out[0] = y[k] + dx * b[k];
    out[1] = b[k];
    out[2] = (dx == 0) ? 2 * c[k] : 0;
    return;
  }
  int lo = 0, hi = n - 1;  // x[lo] <= xv < x[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (xv < x[mid]) hi = mid;
    else lo = mid;
  }
  const double dx = xv - x[lo];
  out[0] = y[lo] + dx * (b[lo] + dx * (c[lo] + dx * d[lo]));
  out[1] = b[lo] + dx * (2 * c[lo] + 3 * dx * d[lo]);
  out[2] = 2 * c[lo] + 6 * dx * d[lo];
}

void mbs_function_eval(mbs_function_type type, int n, const double* param, const double* cache,
                       double x, double d[3]) {
  switch (type) {
    case MBS_FUNC_CONSTANT:
      d[0] = param[0]; d[1] = 0; d[2] = 0;
      return;
    case MBS_FUNC_LINEAR:
      d[0] = param[0] * x + param[1]; d[1] = param[0]; d[2] = 0;
      return;
    case MBS_FUNC_POLYNOMIAL: {
      double v = 0, dv = 0, ddv = 0;
      for (int i = 0; i < n; i++) {  // Horner on value and both derivatives
        ddv = ddv * x + 2 * dv;
        dv = dv * x + v;
        v = v * x + param[i];
      }
      d[0] = v; d[1] = dv; d[2] = ddv;
      return;
    }
    case MBS_FUNC_NATURAL_CUBIC_SPLINE:
    case MBS_FUNC_SIMM_SPLINE:
      spline_eval(n, param, param + n, cache, x, d);
      return;
    case MBS_FUNC_SINE: {
      double sn, cs;
      const double a = param[0], w = param[1];
      mbs_sincos(w * x + param[2], &sn, &cs);
      d[0] = a * sn + param[3];
      d[1] = a * w * cs;
      d[2] = -a * w * w * sn;
      return;
    }
    case MBS_FUNC_PIECEWISE_LINEAR: {
      const double* xs = param;
      const double* ys = param + n;
      int lo = 0, hi = n - 1;  // the segment [x[lo], x[lo+1]] holding x (end ones outside)
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < xs[mid]) hi = mid;
        else lo = mid;
      }
      const double slope = (ys[lo + 1] - ys[lo]) / (xs[lo + 1] - xs[lo]);
      d[0] = ys[lo] + slope * (x - xs[lo]);
      d[1] = slope;
      d[2] = 0;
      return;
    }
    case MBS_FUNC_PIECEWISE_LINEAR_HELD:
    case MBS_FUNC_STEPS: {
      const double* xs = param;
      const double* ys = param + n;
      d[1] = d[2] = 0;
      if (!(x > xs[0])) {
        d[0] = ys[0];
        return;
      }
      if (!(x < xs[n - 1])) {
        d[0] = ys[n - 1];
        return;
      }
      int lo = 0, hi = n - 1;  // x in [x[lo], x[hi]), hi = lo + 1
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < xs[mid]) hi = mid;
        else lo = mid;
      }
      if (type == MBS_FUNC_STEPS) {
        // at a node its own value, between nodes the later node's (OpenSim's ControlLinear)
        d[0] = x == xs[lo] ? ys[lo] : ys[hi];
        return;
      }
      const double slope = (ys[hi] - ys[lo]) / (xs[hi] - xs[lo]);
      d[0] = ys[lo] + slope * (x - xs[lo]);
      d[1] = slope;
      return;
    }
    case MBS_FUNC_MULTIPLIER:
    case MBS_FUNC_COUNT:
      break;
  }
  d[0] = d[1] = d[2] = NAN;
}
