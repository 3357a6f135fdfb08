// Filtering, padding, resampling and splines of tables, matching what OpenSim's tools do to
// coordinate data before inverse dynamics.
//
// What OpenSim does (opensim-core: InverseDynamicsTool::run, AnalyzeTool, Storage::pad,
// Storage::lowpassIIR, Signal::Pad, Signal::LowpassIIR, TableUtilities::filterLowpass and
// ::pad, GCVSplineSet), and what is matched here:
//  - lowpass_cutoff_frequency_for_coordinates >= 0: the coordinate Storage is padded with
//    size/2 rows at each end (Storage::pad -> Signal::Pad: the signal reflected about its end
//    sample and negated, s[-k] = 2 x[0] - x[k], s[n-1+k] = 2 x[n-1] - x[n-1-k], so value and
//    slope continue; the time column is padded the same way, which extends a uniform grid).
//    Matched, for time and data, in mbs_table_pad and in mbs_table_lowpass(pad = 1).
//  - Storage::lowpassIIR: if the mean step exceeds the smallest step by more than machine
//    epsilon the storage is first resampled at the smallest step with a degree-5 GCVSpline
//    (Storage::resample); then Signal::LowpassIIR runs on every column with T = that step.
//    Not matched automatically: mbs_table_lowpass refuses sampling that is not uniform within
//    MBS_TABLE_UNIFORM_RTOL and says so, because resampling changes every row of the table;
//    mbs_table_resample(t, mbs_table_min_step(t)) does what OpenSim does, explicitly. For files
//    whose times are printed with 8 decimals (uniform within ~1e-6) OpenSim resamples at a step
//    1e-8 s shorter; we filter the rows as they are with T = the mean step, a difference far
//    below the data's precision. (The published ID result for gait10dof18musc shows it: its
//    times -0.0000005, 0.01666616, ... are the IK times padded by 75 rows and resampled at the
//    smallest step 0.01666666 from -1.25 s; tests/io/test_table.c reproduces them.)
//  - Signal::LowpassIIR: a third-order Butterworth low-pass filter by the bilinear transform
//    with pre-warping, wa = tan(pi fc T), H(z) = wa^3 (1 + z^-1)^3 / D(z) with
//    D = (1+wa)(1+wa+wa^2) + (3wa^3+2wa^2-2wa-3) z^-1 + (3wa^3-2wa^2-2wa+3) z^-2
//        + (wa-1)(wa^2-wa+1) z^-3 (normalized by the first coefficient);
//    the first three outputs are set equal to the inputs, the recursion runs forward, the
//    result is reversed, filtered again the same way and reversed back. Matched exactly
//    (same coefficients, same start-up, same order of passes). The zero-phase gain is
//    |H|^2 = 1 / (1 + (tan(pi f T) / wa)^6), 1/2 at the cutoff (each pass is -3 dB there).
//    OpenSim lowers a cutoff at or above half the sampling rate to 0.49 / T with a warning;
//    here that is an error (a library that never prints cannot warn).
//  - The ID tool keeps the padded, filtered rows, converts degrees to radians, and fits a
//    GCVSplineSet of degree 5 with zero error variance (interpolating, natural end conditions)
//    through every column, over the padded time range; q, qdot and qddot at the original times
//    come from the spline. mbs_table_spline_* implements that spline (below); OpenSim's needs at
//    least 6 points, this one 3. To reproduce the ID tool step by step: p = mbs_table_pad(t,
//    t->nrow / 2); if its steps differ at all, mbs_table_resample(p, mbs_table_min_step(p));
//    mbs_table_lowpass(pad = 0); mbs_table_to_radians; mbs_table_spline_create on that table.
//
// The spline: on each interval [x_j, x_j+1] a quintic in s = (t - x_j) / h_j determined by
// the values, first and second derivatives at both ends (quintic Hermite), so it is C2 by
// construction; the derivatives at the knots are the unknowns, fixed by continuity of the third
// and fourth derivatives at interior knots and by zero third and fourth derivatives at both
// ends (the natural quintic spline, the minimizer of the integral of (f''')^2 among
// interpolants, which is what GCVSPL computes with smoothing parameter 0). The system is
// banded (3 sub- and 3 super-diagonals over the 2n unknowns), factored once with LAPACK's
// dgbtrf and solved for all columns at once.
#include "mbs/table.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// shared checks

// column 0 finite and strictly increasing
static int check_time(const mbs_table* t, const char* what, mbs_error* err) {
  for (int r = 0; r < t->nrow; r++) {
    const double x = t->data[(size_t)r * t->ncol];
    if (!isfinite(x))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, "table", "table '%s': %s: %s at row %d is %g",
                      t->name, what, t->labels[0], r + 1, x);
    if (r > 0 && !(x > t->data[(size_t)(r - 1) * t->ncol]))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                      "table '%s': %s: %s does not increase at row %d (%.17g after %.17g)",
                      t->name, what, t->labels[0], r + 1, x, t->data[(size_t)(r - 1) * t->ncol]);
  }
  return MBS_OK;
}

// column indices from names (NULL: every column but 0) into cols; returns the count or a
// negative status
static int resolve_columns(const mbs_table* t, const char* const* columns, int ncolumns,
                           int* cols, const char* what, mbs_error* err) {
  if (!columns) {
    for (int c = 1; c < t->ncol; c++) cols[c - 1] = c;
    return t->ncol - 1;
  }
  if (ncolumns < 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table '%s': %s: %d columns requested",
                    t->name, what, ncolumns);
  int n = 0;
  for (int i = 0; i < ncolumns; i++) {
    const int c = mbs_table_column(t, columns[i]);
    if (c < 0)
      return MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, "table", "table '%s': %s: no column '%s'",
                      t->name, what, columns[i] ? columns[i] : "(null)");
    if (c == 0)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table",
                      "table '%s': %s: column '%s' is the independent variable", t->name, what,
                      columns[i]);
    int seen = 0;  // a column listed twice is filtered once
    for (int j = 0; j < n && !seen; j++) seen = cols[j] == c;
    if (!seen) cols[n++] = c;
  }
  return n;
}

double mbs_table_min_step(const mbs_table* t) {
  if (!t || t->nrow < 2) return NAN;
  double m = INFINITY;
  for (int r = 1; r < t->nrow; r++) {
    const double d = t->data[(size_t)r * t->ncol] - t->data[(size_t)(r - 1) * t->ncol];
    if (d < m) m = d;
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// padding

// Signal::Pad: x (n values) into s (n + 2 npad values), 0 <= npad <= n - 1
static void pad_signal(const double* x, int n, int npad, double* s) {
  for (int i = 0; i < npad; i++) s[i] = 2 * x[0] - x[npad - i];
  memcpy(s + npad, x, (size_t)n * sizeof(double));
  for (int k = 0; k < npad; k++) s[npad + n + k] = 2 * x[n - 1] - x[n - 2 - k];
}

int mbs_table_pad(const mbs_table* t, int npad, mbs_table** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!t || !out) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: pad: bad arguments");
  if (npad < 0 || (npad > 0 && npad > t->nrow - 1))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table",
                    "table '%s': cannot pad %d rows at each end of %d rows (at most rows - 1)",
                    t->name, npad, t->nrow);
  mbs_table* p;
  int rc = mbs_table_copy(&p, t, err);
  if (rc != MBS_OK) return rc;
  const int n = t->nrow, N = n + 2 * npad, nc = t->ncol;
  double* data = calloc((size_t)N * nc + 1, sizeof(double));
  double* x = malloc(((size_t)n + N) * sizeof(double) + 1);
  if (!data || !x) {
    free(data);
    free(x);
    mbs_table_free(p);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table '%s': out of memory", t->name);
  }
  double* s = x + n;
  for (int c = 0; c < nc; c++) {
    for (int r = 0; r < n; r++) x[r] = t->data[(size_t)r * nc + c];
    pad_signal(x, n, npad, s);
    for (int r = 0; r < N; r++) data[(size_t)r * nc + c] = s[r];
  }
  free(x);
  free(p->data);
  p->data = data;
  p->nrow = N;
  *out = p;
  return MBS_OK;
}

// ---------------------------------------------------------------------------------------------
// the low-pass filter

// one pass of Signal::LowpassIIR's recursion; the first three outputs are the inputs
static void butterworth3_pass(const double* in, double* out, int n, const double a[4],
                              const double b[4]) {
  for (int i = 0; i < 3 && i < n; i++) out[i] = in[i];
  for (int i = 3; i < n; i++)
    out[i] = a[0] * in[i] + a[1] * in[i - 1] + a[2] * in[i - 2] + a[3] * in[i - 3] -
             b[1] * out[i - 1] - b[2] * out[i - 2] - b[3] * out[i - 3];
}

static void reverse(const double* in, double* out, int n) {
  for (int i = 0; i < n; i++) out[i] = in[n - 1 - i];
}

int mbs_table_lowpass(mbs_table* t, double cutoff_hz, const char* const* columns, int ncolumns,
                      int pad, mbs_error* err) {
  if (!t) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: lowpass: no table");
  const int n = t->nrow, nc = t->ncol;
  const int npad = pad ? n / 2 : 0;
  const int N = n + 2 * npad;
  if (n < 2 || N < 4)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                    "table '%s': lowpass: %d rows are too few to filter (at least %d)", t->name,
                    n, pad ? 2 : 4);
  int rc = check_time(t, "lowpass", err);
  if (rc != MBS_OK) return rc;
  const double t0 = t->data[0], tn = t->data[(size_t)(n - 1) * nc];
  const double T = (tn - t0) / (n - 1);
  for (int r = 1; r < n; r++) {
    const double d = t->data[(size_t)r * nc] - t->data[(size_t)(r - 1) * nc];
    if (fabs(d - T) > MBS_TABLE_UNIFORM_RTOL * T)
      return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                      "table '%s': lowpass: sampling is not uniform (step %.9g at row %d, mean "
                      "%.9g); resample first (OpenSim resamples at the smallest step, %.9g)",
                      t->name, d, r + 1, T, mbs_table_min_step(t));
  }
  if (!(cutoff_hz > 0) || !isfinite(cutoff_hz))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                    "table '%s': lowpass: cutoff frequency %g Hz is not positive", t->name,
                    cutoff_hz);
  if (cutoff_hz >= 0.5 / T)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                    "table '%s': lowpass: cutoff %g Hz is not below half the sampling rate "
                    "(%g Hz); OpenSim would use %g Hz",
                    t->name, cutoff_hz, 0.5 / T, 0.49 / T);

  int* cols = malloc((size_t)nc * sizeof(int));
  double* buf = malloc((size_t)3 * N * sizeof(double));
  if (!cols || !buf) {
    free(cols);
    free(buf);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table '%s': out of memory", t->name);
  }
  const int ncols = resolve_columns(t, columns, ncolumns, cols, "lowpass", err);
  rc = ncols < 0 ? ncols : MBS_OK;
  for (int i = 0; i < ncols && rc == MBS_OK; i++)
    for (int r = 0; r < n && rc == MBS_OK; r++)
      if (isnan(t->data[(size_t)r * nc + cols[i]]))
        rc = MBS_FAIL(err, MBS_ERR_NAN, "table",
                      "table '%s': lowpass: column '%s' is NaN at row %d (fill gaps first)",
                      t->name, t->labels[cols[i]], r + 1);
  if (rc == MBS_OK) {
    // coefficients of Signal::LowpassIIR
    const double wa = tan(M_PI * cutoff_hz * T);
    const double wa2 = wa * wa, wa3 = wa2 * wa;
    const double den = (wa + 1) * (wa2 + wa + 1);
    const double a[4] = {wa3 / den, 3 * wa3 / den, 3 * wa3 / den, wa3 / den};
    const double b[4] = {1, (3 * wa3 + 2 * wa2 - 2 * wa - 3) / den,
                         (3 * wa3 - 2 * wa2 - 2 * wa + 3) / den, (wa - 1) * (wa2 - wa + 1) / den};
    double *s = buf, *f = buf + N, *x = buf + 2 * N;
    for (int i = 0; i < ncols; i++) {
      const int c = cols[i];
      for (int r = 0; r < n; r++) x[r] = t->data[(size_t)r * nc + c];
      pad_signal(x, n, npad, s);
      butterworth3_pass(s, f, N, a, b);
      reverse(f, s, N);
      butterworth3_pass(s, f, N, a, b);
      reverse(f, s, N);
      for (int r = 0; r < n; r++) t->data[(size_t)r * nc + c] = s[npad + r];
    }
  }
  free(cols);
  free(buf);
  return rc;
}

// ---------------------------------------------------------------------------------------------
// the natural quintic spline

struct mbs_table_spline {
  int n;          // knots
  int ncol;       // table columns (column 0 is the variable)
  double* x;      // n knots
  double* inv_h;  // n - 1 reciprocal interval lengths
  double* coef;   // per column c >= 1, per interval j: c0..c5 of the quintic in s
                  // at coef[((c - 1) * (n - 1) + j) * 6]
  double* ends;   // per column c >= 1: value, slope, curvature at x[0], then at x[n-1]
};

void mbs_table_spline_free(mbs_table_spline* s) {
  if (!s) return;
  free(s->x);
  free(s->inv_h);
  free(s->coef);
  free(s->ends);
  free(s);
}

// c3, c4, c5 of the quintic on [0, 1] with c0..c2 given, from D = c3 + c4 + c5,
// E = 3 c3 + 4 c4 + 5 c5 and F = 6 c3 + 12 c4 + 20 c5 (the end conditions at s = 1)
static void quintic_c345(double D, double E, double F, double c[3]) {
  c[0] = 10 * D - 4 * E + 0.5 * F;
  c[1] = -15 * D + 7 * E - F;
  c[2] = 6 * D - 3 * E + 0.5 * F;
}

// third and fourth derivative (times H^3, H^4, r = h / H) at both ends of a piece:
// q = {f'''(start), f'''(end), f''''(start), f''''(end)}
static void piece_end_derivatives(const double c[3], double r, double q[4]) {
  const double r3 = r * r * r, r4 = r3 * r;
  q[0] = 6 * c[0] / r3;
  q[1] = (6 * c[0] + 24 * c[1] + 60 * c[2]) / r3;
  q[2] = 24 * c[1] / r4;
  q[3] = (24 * c[1] + 120 * c[2]) / r4;
}

// D, E, F of a piece from its end data: values Y0, Y1, scaled slopes u = H f', scaled
// curvatures v = H^2 f'' (A = h f' = r u, B = h^2 f'' = r^2 v)
static void piece_DEF(double dY, double u0, double v0, double u1, double v1, double r,
                      double* D, double* E, double* F) {
  const double A0 = r * u0, B0 = r * r * v0, A1 = r * u1, B1 = r * r * v1;
  *D = dY - A0 - 0.5 * B0;
  *E = A1 - A0 - B0;
  *F = B1 - B0;
}

int mbs_table_spline_create(const mbs_table* t, mbs_table_spline** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!t || !out)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: spline: bad arguments");
  const int n = t->nrow, nc = t->ncol, m = nc - 1;
  if (n < 3)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                    "table '%s': spline: %d rows are too few (at least 3)", t->name, n);
  int rc = check_time(t, "spline", err);
  if (rc != MBS_OK) return rc;
  for (int r = 0; r < n; r++)
    for (int c = 1; c < nc; c++)
      if (!isfinite(t->data[(size_t)r * nc + c]))
        return MBS_FAIL(err, MBS_ERR_NAN, "table",
                        "table '%s': spline: column '%s' is %g at row %d", t->name, t->labels[c],
                        t->data[(size_t)r * nc + c], r + 1);

  mbs_table_spline* s = calloc(1, sizeof(*s));
  const int N = 2 * n, kl = 3, ku = 3, ldab = 2 * kl + ku + 1;
  double* ab = calloc((size_t)ldab * N, sizeof(double));
  double* rhs = calloc((size_t)N * (m > 0 ? m : 1), sizeof(double));
  lapack_int* ipiv = malloc((size_t)N * sizeof(lapack_int));
  if (s) {
    s->n = n;
    s->ncol = nc;
    s->x = malloc((size_t)n * sizeof(double));
    s->inv_h = malloc((size_t)(n - 1) * sizeof(double));
    s->coef = malloc((size_t)(m > 0 ? m : 1) * (n - 1) * 6 * sizeof(double));
    s->ends = malloc((size_t)(m > 0 ? m : 1) * 6 * sizeof(double));
  }
  if (!s || !ab || !rhs || !ipiv || !s->x || !s->inv_h || !s->coef || !s->ends) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table '%s': out of memory", t->name);
    goto done;
  }
  for (int r = 0; r < n; r++) s->x[r] = t->data[(size_t)r * nc];
  const double H = (s->x[n - 1] - s->x[0]) / (n - 1);
  for (int j = 0; j < n - 1; j++) s->inv_h[j] = 1 / (s->x[j + 1] - s->x[j]);

  // Equations: rows 2i, 2i+1 at knot i. Knot 0: f'''=0, f''''=0 (start of piece 0); interior
  // knot i: f''' and f'''' of piece i-1 at its end minus those of piece i at its start; knot
  // n-1: f'''=0, f''''=0 (end of piece n-2). Unknowns 2i, 2i+1: u_i = H f'(x_i), v_i = H^2
  // f''(x_i). A(i, j) lives at ab[kl + ku + i - j + j * ldab].
#define AB(i, j) ab[(kl + ku + (i) - (j)) + (size_t)(j) * ldab]
  for (int j = 0; j < n - 1; j++) {
    const double r = (s->x[j + 1] - s->x[j]) / H;
    const double sign0 = j == 0 ? 1 : -1;
    for (int k = 0; k < 4; k++) {  // unknowns u_j, v_j, u_j+1, v_j+1
      double D, E, F, c[3], q[4];
      piece_DEF(0, k == 0, k == 1, k == 2, k == 3, r, &D, &E, &F);
      quintic_c345(D, E, F, c);
      piece_end_derivatives(c, r, q);
      const int col = 2 * j + k;
      AB(2 * j, col) += sign0 * q[0];
      AB(2 * j + 1, col) += sign0 * q[2];
      AB(2 * j + 2, col) += q[1];
      AB(2 * j + 3, col) += q[3];
    }
    double D, E, F, c[3], qy[4];  // the part from the values (dY = 1), to the right side
    piece_DEF(1, 0, 0, 0, 0, r, &D, &E, &F);
    quintic_c345(D, E, F, c);
    piece_end_derivatives(c, r, qy);
    for (int i = 0; i < m; i++) {
      const double dY =
          t->data[(size_t)(j + 1) * nc + 1 + i] - t->data[(size_t)j * nc + 1 + i];
      double* b = rhs + (size_t)i * N;
      b[2 * j] -= sign0 * qy[0] * dY;
      b[2 * j + 1] -= sign0 * qy[2] * dY;
      b[2 * j + 2] -= qy[1] * dY;
      b[2 * j + 3] -= qy[3] * dY;
    }
  }
#undef AB
  lapack_int info = LAPACKE_dgbtrf(LAPACK_COL_MAJOR, N, N, kl, ku, ab, ldab, ipiv);
  if (info == 0 && m > 0)
    info = LAPACKE_dgbtrs(LAPACK_COL_MAJOR, 'N', N, kl, ku, m, ab, ldab, ipiv, rhs, N);
  if (info != 0) {
    rc = MBS_FAIL(err, MBS_ERR_SINGULAR, "table",
                  "table '%s': spline: the system for the knot derivatives is singular (%d)",
                  t->name, (int)info);
    goto done;
  }
  for (int i = 0; i < m; i++) {
    const double* z = rhs + (size_t)i * N;
    for (int j = 0; j < n - 1; j++) {
      const double r = (s->x[j + 1] - s->x[j]) / H;
      const double y0 = t->data[(size_t)j * nc + 1 + i], y1 = t->data[(size_t)(j + 1) * nc + 1 + i];
      double D, E, F, c[3];
      piece_DEF(y1 - y0, z[2 * j], z[2 * j + 1], z[2 * j + 2], z[2 * j + 3], r, &D, &E, &F);
      quintic_c345(D, E, F, c);
      double* p = s->coef + ((size_t)i * (n - 1) + j) * 6;
      p[0] = y0;
      p[1] = r * z[2 * j];
      p[2] = 0.5 * r * r * z[2 * j + 1];
      p[3] = c[0];
      p[4] = c[1];
      p[5] = c[2];
    }
    double* e = s->ends + (size_t)i * 6;
    e[0] = t->data[1 + i];
    e[1] = z[0] / H;
    e[2] = z[1] / (H * H);
    e[3] = t->data[(size_t)(n - 1) * nc + 1 + i];
    e[4] = z[2 * n - 2] / H;
    e[5] = z[2 * n - 1] / (H * H);
  }
  *out = s;
  s = NULL;
  rc = MBS_OK;
done:
  free(ab);
  free(rhs);
  free(ipiv);
  mbs_table_spline_free(s);
  return rc;
}

// the piece holding t (x[j] <= t <= x[j+1]), t within the knots
static int find_piece(const mbs_table_spline* s, double t) {
  int lo = 0, hi = s->n - 2;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (s->x[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

static void eval_column(const mbs_table_spline* s, int i, int j, double t, double d[3]) {
  if (j < 0) {  // outside: the end quadratic
    const double* e = s->ends + (size_t)i * 6 + (t < s->x[0] ? 0 : 3);
    const double dx = t - (t < s->x[0] ? s->x[0] : s->x[s->n - 1]);
    d[0] = e[0] + dx * (e[1] + 0.5 * dx * e[2]);
    d[1] = e[1] + dx * e[2];
    d[2] = e[2];
    return;
  }
  const double* p = s->coef + ((size_t)i * (s->n - 1) + j) * 6;
  const double ih = s->inv_h[j];
  const double u = (t - s->x[j]) * ih;
  d[0] = p[0] + u * (p[1] + u * (p[2] + u * (p[3] + u * (p[4] + u * p[5]))));
  d[1] = (p[1] + u * (2 * p[2] + u * (3 * p[3] + u * (4 * p[4] + u * 5 * p[5])))) * ih;
  d[2] = (2 * p[2] + u * (6 * p[3] + u * (12 * p[4] + u * 20 * p[5]))) * ih * ih;
}

static int piece_or_outside(const mbs_table_spline* s, double t) {
  if (t < s->x[0] || t > s->x[s->n - 1]) return -1;
  return find_piece(s, t);
}

void mbs_table_spline_eval(const mbs_table_spline* s, int col, double t, double d[3]) {
  if (col <= 0 || col >= s->ncol) {
    d[0] = col == 0 ? t : NAN;
    d[1] = col == 0 ? 1 : NAN;
    d[2] = col == 0 ? 0 : NAN;
    return;
  }
  eval_column(s, col - 1, piece_or_outside(s, t), t, d);
}

void mbs_table_spline_eval_all(const mbs_table_spline* s, double t, double* value, double* d1,
                               double* d2) {
  if (value) value[0] = t;
  if (d1) d1[0] = 1;
  if (d2) d2[0] = 0;
  const int j = piece_or_outside(s, t);
  for (int c = 1; c < s->ncol; c++) {
    double d[3];
    eval_column(s, c - 1, j, t, d);
    if (value) value[c] = d[0];
    if (d1) d1[c] = d[1];
    if (d2) d2[c] = d[2];
  }
}

// ---------------------------------------------------------------------------------------------
// resampling

int mbs_table_resample(const mbs_table* t, double dt, mbs_table** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!t || !out) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: resample: bad arguments");
  if (!(dt > 0) || !isfinite(dt))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table", "table '%s': resample: step %g is not positive",
                    t->name, dt);
  mbs_table_spline* s;
  int rc = mbs_table_spline_create(t, &s, err);
  if (rc != MBS_OK) return rc;
  const double t0 = s->x[0], tn = s->x[s->n - 1];
  const double count = floor((tn - t0) / dt * (1 + 1e-12) + 1e-6) + 1;
  if (count * t->ncol > 1e9) {
    mbs_table_spline_free(s);
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                    "table '%s': resample: step %g gives too many rows (%.0f)", t->name, dt,
                    count);
  }
  const int N = (int)count, nc = t->ncol;
  mbs_table* p = NULL;
  double* data = calloc((size_t)N * nc + 1, sizeof(double));
  rc = data ? mbs_table_copy(&p, t, err)
            : MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table '%s': out of memory", t->name);
  if (rc == MBS_OK) {
    for (int k = 0; k < N; k++) {
      double tk = t0 + k * dt;
      if (tk > tn) tk = tn;  // the last step, within rounding
      mbs_table_spline_eval_all(s, tk, data + (size_t)k * nc, NULL, NULL);
    }
    free(p->data);
    p->data = data;
    p->nrow = N;
    *out = p;
  } else {
    free(data);
  }
  mbs_table_spline_free(s);
  return rc;
}
