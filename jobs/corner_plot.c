// The corner plot of a calibration study's posterior samples (as the `corner` package draws it),
// read from the study file through include/mbs/results.h and drawn with cairo. See corner_plot.h.
#include "corner_plot.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/results.h"
#include "plot_util.h"

enum { MAXD = MBS_CORNER_PLOT_MAX_PARAMS, NBINS = 30, GAP = 10 };
enum { LEFT = 130, TOP = 150, RIGHT = 40, BOTTOM = 120, MIN_W = 720 };

static const double* const blue = mbs_plot_palette[0];
static const double fill_blue[3] = {0xC6 / 255., 0xDB / 255., 0xEF / 255.};
static const double* const vermillion = mbs_plot_palette[1];

// what is read from the file and what is computed from it for the first D parameters
typedef struct post {
  const char* path;
  int Dall, D;          // parameters in the file, drawn
  long N;               // samples
  char** names;         // Dall shortened names
  double* x;            // N x Dall
  double* mean;         // Dall, NULL when absent
  double* cov;          // Dall x Dall, NULL when absent
  double lo[MAXD], hi[MAXD];     // axis ranges
  double q[MAXD][3];             // 16, 50, 84 % quantiles (NaN without finite samples)
  long nfinite[MAXD];
} post;

// ------------------------------------------------------------------------------------------
// reading

// the float dataset `name` whole as doubles into *out (malloc'ed), its shape in dims[rank]
// (rank at most 4); `required` 0: a missing dataset leaves *out NULL and is no error
static int read_doubles(const post* P, mbs_results* r, const char* name, int required,
                        double** out, long dims[4], int* rank, mbs_error* err) {
  *out = NULL;
  *rank = 0;
  if (!mbs_results_exists(r, name)) {
    if (!required) return 0;
    return MBS_FAIL(err, MBS_ERR_PARSE, P->path, "%s: no %s: is this a calibration study?",
                    P->path, name);
  }
  return mbs_results_read(r, name, out, dims, rank, err);
}

static int read_calibration(post* P, mbs_results* r, mbs_error* err) {
  const char* path = P->path;
  if (!mbs_results_exists(r, "/calibration"))
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no /calibration: is this a calibration "
                    "study?", path);
  int rc = mbs_plot_read_names(r, path, "/calibration/parameter_names",
                               "is this a calibration study?", &P->names, &P->Dall, err);
  if (rc) return rc;
  const int D = P->Dall;
  if (D < 1)
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /calibration/parameter_names is empty", path);
  long dims[4];
  int rank;
  rc = read_doubles(P, r, "/calibration/samples", 1, &P->x, dims, &rank, err);
  if (rc) return rc;
  if (rank < 2 || dims[rank - 1] != D)
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /calibration/samples is not samples x %d "
                    "parameters", path, D);
  P->N = 1;
  for (int i = 0; i < rank - 1; i++) P->N *= dims[i];
  if (P->N < 1)
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /calibration/samples holds no samples",
                    path);
  rc = read_doubles(P, r, "/calibration/mean", 0, &P->mean, dims, &rank, err);
  if (rc) return rc;
  if (P->mean && !(rank == 1 && dims[0] == D))
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /calibration/mean does not hold %d values",
                    path, D);
  rc = read_doubles(P, r, "/calibration/covariance", 0, &P->cov, dims, &rank, err);
  if (rc) return rc;
  if (P->cov && !(rank == 2 && dims[0] == D && dims[1] == D))
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /calibration/covariance is not %d x %d",
                    path, D, D);
  return 0;
}

static void post_free(post* P) {
  mbs_plot_free_names(P->names);
  free(P->x);
  free(P->mean);
  free(P->cov);
}

// ------------------------------------------------------------------------------------------
// statistics

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// quantile p of sorted v[n] by linear interpolation between order statistics (numpy's default,
// Hyndman & Fan 1996 type 7)
static double quantile(const double* v, long n, double p) {
  const double h = (n - 1) * p;
  const long k = (long)floor(h);
  if (k >= n - 1) return v[n - 1];
  return v[k] + (h - k) * (v[k + 1] - v[k]);
}

// ranges and quantiles of the drawn parameters; 0 or MBS_ERR_NO_MEMORY
static int summarize(post* P, mbs_error* err) {
  double* v = malloc((size_t)P->N * sizeof *v);
  if (!v) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, P->path, "%s: out of memory", P->path);
  for (int j = 0; j < P->D; j++) {
    long n = 0;
    for (long s = 0; s < P->N; s++) {
      const double x = P->x[(size_t)s * P->Dall + j];
      if (isfinite(x)) v[n++] = x;
    }
    P->nfinite[j] = n;
    if (n == 0) {
      P->lo[j] = 0;
      P->hi[j] = 1;
      P->q[j][0] = P->q[j][1] = P->q[j][2] = NAN;
      continue;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    P->q[j][0] = quantile(v, n, 0.16);
    P->q[j][1] = quantile(v, n, 0.50);
    P->q[j][2] = quantile(v, n, 0.84);
    P->lo[j] = quantile(v, n, 0.005);
    P->hi[j] = quantile(v, n, 0.995);
    if (!(P->hi[j] > P->lo[j])) {  // all (nearly) equal: a range around the value
      const double c = 0.5 * (P->lo[j] + P->hi[j]);
      const double h = c != 0 ? 0.01 * fabs(c) : 0.5;
      P->lo[j] = c - h;
      P->hi[j] = c + h;
    }
  }
  free(v);
  return 0;
}

// the bin of x among nb bins over [lo, hi], -1 outside (hi itself in the last bin)
static int bin_of(double x, double lo, double hi, int nb) {
  if (!(x >= lo && x <= hi)) return -1;
  const int b = (int)((x - lo) / (hi - lo) * nb);
  return b >= nb ? nb - 1 : b;
}

// ------------------------------------------------------------------------------------------
// drawing helpers

// v with the decimals that show err to two significant digits (at most 8; %.3g for very large
// or very small numbers)
static const char* fmt_value(double v, double e, char* buf, size_t n) {
  int d = 3;
  if (isfinite(e) && e > 0) d = 1 - (int)floor(log10(e));
  if (d < 0) d = 0;
  if (d > 8 || fabs(v) >= 1e6) snprintf(buf, n, "%.3g", v);
  else snprintf(buf, n, "%.*f", d, v);
  if (!strcmp(buf, "-0") || (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)))
    memmove(buf, buf + 1, strlen(buf));  // no "-0.00"
  return buf;
}

// the geometry of the picture
typedef struct layout {
  int D, P;   // parameters drawn, panel size
  int W, H;
} layout;

static layout make_layout(int D) {
  layout L;
  L.D = D;
  L.P = D <= 2 ? 340 : D <= 3 ? 300 : D <= 5 ? 230 : D <= 7 ? 180 : 150;
  const int grid = D * L.P + (D - 1) * GAP;
  L.W = LEFT + grid + RIGHT;
  if (L.W < MIN_W) L.W = MIN_W;
  L.H = TOP + grid + BOTTOM;
  return L;
}

static double panel_x(const layout* L, int j) { return LEFT + j * (L->P + GAP); }
static double panel_y(const layout* L, int i) { return TOP + i * (L->P + GAP); }

// pixel of a value of parameter j along x of a panel at px, along y of a panel at py
static double to_x(const post* S, const layout* L, int j, double px, double v) {
  return px + (v - S->lo[j]) / (S->hi[j] - S->lo[j]) * L->P;
}
static double to_y(const post* S, const layout* L, int i, double py, double v) {
  return py + L->P - (v - S->lo[i]) / (S->hi[i] - S->lo[i]) * L->P;
}

static void panel_frame(cairo_t* cr, double px, double py, double P) {
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, round(px) + 0.5, round(py) + 0.5, P - 1, P - 1);
  cairo_stroke(cr);
}

// a tick value with the decimals of the step (1000.0012 next to 1000.0014, 2100 next to
// 2200), in %g notation when that would be long; no "-0"
static void tick_text(double v, double step, double lo, double hi, char* buf, size_t n) {
  if (fabs(v) < 1e-9 * step) v = 0;
  int dec = -(int)floor(log10(step) + 1e-9);
  if (dec < 0) dec = 0;
  const double big = fmax(fabs(lo), fabs(hi));
  if (big < 1e6 && dec <= 5) {
    snprintf(buf, n, "%.*f", dec, v);
  } else {
    int sig = (int)floor(log10(big)) + (int)(-floor(log10(step) + 1e-9)) + 1;
    sig = sig < 1 ? 1 : sig > 10 ? 10 : sig;
    snprintf(buf, n, "%.*g", sig, v);
  }
}

// ticks of parameter j along the bottom (axis 0) or left (axis 1) edge of a panel, with their
// values when `labels`
static void ticks(cairo_t* cr, const post* S, const layout* L, int j, int axis, double px,
                  double py, int labels) {
  const double lo = S->lo[j], hi = S->hi[j];
  const double step = mbs_plot_nice_step(hi - lo, L->P >= 250 ? 4 : 3);
  char buf[64];
  mbs_plot_font(cr, 11, 0);
  // labels horizontal when they fit between the ticks, else at 45 degrees (x only)
  double maxw = 0;
  for (double v = ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step; v += step) {
    tick_text(v, step, lo, hi, buf, sizeof buf);
    maxw = fmax(maxw, mbs_plot_text_width(cr, buf));
  }
  const int slanted = maxw > 0.8 * step / (hi - lo) * L->P;
  for (double v = ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step; v += step) {
    tick_text(v, step, lo, hi, buf, sizeof buf);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1);
    if (axis == 0) {
      const double x = round(to_x(S, L, j, px, v)) + 0.5, y = py + L->P;
      cairo_move_to(cr, x, y);
      cairo_line_to(cr, x, y - 5);
      cairo_stroke(cr);
      if (!labels) continue;
      cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
      if (slanted) {
        cairo_save(cr);
        cairo_translate(cr, x + 3, y + 9);
        cairo_rotate(cr, -M_PI / 4);
        mbs_plot_text(cr, 0, 0, buf, 1);
        cairo_restore(cr);
      } else {
        // a value that would reach into the next panel's is left out (its tick stays)
        const double w = mbs_plot_text_width(cr, buf);
        if (x - 0.5 * w >= px - 0.5 * GAP && x + 0.5 * w <= px + L->P + 0.5 * GAP)
          mbs_plot_text(cr, x, y + 16, buf, 0.5);
      }
    } else {
      const double y = round(to_y(S, L, j, py, v)) + 0.5;
      cairo_move_to(cr, px, y);
      cairo_line_to(cr, px + 5, y);
      cairo_stroke(cr);
      if (!labels) continue;
      cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
      mbs_plot_text(cr, px - 6, y + 4, buf, 1);
    }
  }
}

// ------------------------------------------------------------------------------------------
// panels

// the histogram of parameter j on the diagonal, its quantiles and its title
static void draw_diagonal(cairo_t* cr, const post* S, const layout* L, int j) {
  const double px = panel_x(L, j), py = panel_y(L, j), P = L->P;
  long count[NBINS] = {0}, cmax = 0;
  for (long s = 0; s < S->N; s++) {
    const int b = bin_of(S->x[(size_t)s * S->Dall + j], S->lo[j], S->hi[j], NBINS);
    if (b >= 0) count[b]++;
  }
  for (int b = 0; b < NBINS; b++)
    if (count[b] > cmax) cmax = count[b];
  cairo_save(cr);
  cairo_rectangle(cr, px, py, P, P);
  cairo_clip(cr);
  if (cmax > 0) {
    const double top = 1.1 * cmax, bw = P / NBINS;
    const double ybase = py + P;
    cairo_move_to(cr, px, ybase);
    for (int b = 0; b < NBINS; b++) {
      const double y = ybase - count[b] / top * P;
      cairo_line_to(cr, px + b * bw, y);
      cairo_line_to(cr, px + (b + 1) * bw, y);
    }
    cairo_line_to(cr, px + P, ybase);
    cairo_close_path(cr);
    mbs_plot_rgb(cr, fill_blue);
    cairo_fill_preserve(cr);
    mbs_plot_rgb(cr, blue);
    cairo_set_line_width(cr, 1.6);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
    cairo_stroke(cr);
    // the 16, 50, 84 % quantiles
    const double dash[2] = {6, 4};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    cairo_set_line_width(cr, 1.3);
    for (int k = 0; k < 3; k++) {
      const double x = round(to_x(S, L, j, px, S->q[j][k])) + 0.5;
      cairo_move_to(cr, x, py);
      cairo_line_to(cr, x, py + P);
    }
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
  } else {
    cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
    mbs_plot_font(cr, 13, 0);
    mbs_plot_text(cr, px + 0.5 * P, py + 0.5 * P, "no finite samples", 0.5);
  }
  cairo_restore(cr);
  panel_frame(cr, px, py, P);

  // the title: "name = median" with +(q84 - q50) over -(q50 - q16) after it
  if (!isfinite(S->q[j][1])) return;
  const double up = S->q[j][2] - S->q[j][1], down = S->q[j][1] - S->q[j][0];
  char med[64], sup[64], sub[64], name[600], head[700];
  const double e = fmin(up > 0 ? up : INFINITY, down > 0 ? down : INFINITY);
  fmt_value(S->q[j][1], e, med, sizeof med);
  char t[64];
  snprintf(sup, sizeof sup, "+%s", fmt_value(up, e, t, sizeof t));
  snprintf(sub, sizeof sub, "−%s", fmt_value(down, e, t, sizeof t));
  const double avail = P + GAP - 4;
  double size = P >= 230 ? 14 : 12;
  for (;; size -= 0.5) {  // smaller for long titles, down to 10 px; then the name is cut
    mbs_plot_font(cr, size, 0);
    snprintf(head, sizeof head, "%s = %s", S->names[j], med);
    const double wh = mbs_plot_text_width(cr, head);
    mbs_plot_font(cr, 0.75 * size, 0);
    const double ws = fmax(mbs_plot_text_width(cr, sup), mbs_plot_text_width(cr, sub));
    if (wh + ws + 2 <= avail || size <= 10) {
      mbs_plot_font(cr, size, 0);
      if (wh + ws + 2 > avail) {  // cut the name
        char tail[80];
        snprintf(tail, sizeof tail, " = %s", med);
        const double wt = mbs_plot_text_width(cr, tail);
        mbs_plot_fit(cr, S->names[j], fmax(avail - ws - 2 - wt, 20), name, sizeof name);
        snprintf(head, sizeof head, "%s%s", name, tail);
      }
      const double w = mbs_plot_text_width(cr, head) + 2 + ws;
      const double x0 = px + 0.5 * P - 0.5 * w, yb = py - 12;
      cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
      const double wh2 = mbs_plot_text(cr, x0, yb, head, 0);
      mbs_plot_font(cr, 0.75 * size, 0);
      mbs_plot_text(cr, x0 + wh2 + 2, yb - 0.45 * size, sup, 0);
      mbs_plot_text(cr, x0 + wh2 + 2, yb + 0.3 * size, sub, 0);
      break;
    }
  }
}

// the 2-D histogram of parameters j (x) and i (y), i > j, with the Gaussian's ellipses
static void draw_pair(cairo_t* cr, const post* S, const layout* L, int i, int j, int k,
                      long* count) {
  const double px = panel_x(L, j), py = panel_y(L, i), P = L->P;
  memset(count, 0, (size_t)k * k * sizeof *count);
  long cmax = 0;
  for (long s = 0; s < S->N; s++) {
    const double* row = S->x + (size_t)s * S->Dall;
    const int bx = bin_of(row[j], S->lo[j], S->hi[j], k);
    const int by = bin_of(row[i], S->lo[i], S->hi[i], k);
    if (bx < 0 || by < 0) continue;
    const long c = ++count[by * k + bx];
    if (c > cmax) cmax = c;
  }
  cairo_save(cr);
  cairo_rectangle(cr, px, py, P, P);
  cairo_clip(cr);
  // bins on whole pixels, so that neighbours meet without seams
  for (int by = 0; by < k; by++)
    for (int bx = 0; bx < k; bx++) {
      const long c = count[by * k + bx];
      if (!c) continue;
      const double g = 1 - 0.85 * (double)c / cmax;
      const double x0 = round(px + bx * P / k), x1 = round(px + (bx + 1) * P / k);
      const double y1 = round(py + P - by * P / k), y0 = round(py + P - (by + 1) * P / k);
      cairo_set_source_rgb(cr, g, g, g);
      cairo_rectangle(cr, x0, y0, x1 - x0, y1 - y0);
      cairo_fill(cr);
    }
  // the 1 and 2 sigma ellipses: mean + r (L11 cos t, L21 cos t + L22 sin t), L the Cholesky
  // factor of the pair's 2 x 2 covariance
  if (S->mean && S->cov) {
    const int D = S->Dall;
    const double cxx = S->cov[j * D + j], cyy = S->cov[i * D + i];
    const double cxy = 0.5 * (S->cov[i * D + j] + S->cov[j * D + i]);
    const double l11 = sqrt(cxx), l21 = cxy / l11, l22sq = cyy - l21 * l21;
    if (cxx > 0 && isfinite(l11) && l22sq > 0 && isfinite(l22sq) && isfinite(S->mean[i]) &&
        isfinite(S->mean[j])) {
      const double l22 = sqrt(l22sq);
      const double dash[2] = {7, 4};
      for (int r = 1; r <= 2; r++) {
        for (int n = 0; n <= 180; n++) {
          const double t = 2 * M_PI * n / 180;
          const double u = S->mean[j] + r * l11 * cos(t);
          const double v = S->mean[i] + r * (l21 * cos(t) + l22 * sin(t));
          const double x = to_x(S, L, j, px, u), y = to_y(S, L, i, py, v);
          if (n) cairo_line_to(cr, x, y);
          else cairo_move_to(cr, x, y);
        }
        cairo_close_path(cr);
        mbs_plot_rgb(cr, vermillion);
        cairo_set_line_width(cr, r == 1 ? 2.0 : 1.6);
        cairo_set_dash(cr, dash, r == 1 ? 0 : 2, 0);
        cairo_stroke(cr);
      }
      cairo_set_dash(cr, NULL, 0, 0);
    }
  }
  cairo_restore(cr);
  panel_frame(cr, px, py, P);
}

// ------------------------------------------------------------------------------------------
// the picture

static void draw(cairo_t* cr, const post* S, const layout* L, long* count, int k) {
  char buf[1400], b2[1400];
  const int D = L->D;
  const double P = L->P;
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  const double margin = 40, avail = L->W - 2 * margin;
  // title, subtitle and legend
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  mbs_plot_font(cr, 22, 1);
  snprintf(b2, sizeof b2, "Posterior of %d parameter%s", S->Dall, S->Dall == 1 ? "" : "s");
  mbs_plot_text(cr, margin, 38, mbs_plot_fit(cr, b2, avail, buf, sizeof buf), 0);
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  mbs_plot_font(cr, 13, 0);
  snprintf(b2, sizeof b2, "%ld samples after burn-in; diagonal: histograms, dashed at the 16, "
           "50 and 84 %% quantiles", S->N);
  mbs_plot_text(cr, margin, 62, mbs_plot_fit(cr, b2, avail, buf, sizeof buf), 0);
  const double ly = 86;
  double x = margin;
  if (D >= 2) {
    // a little grey ramp for the 2-D histograms
    for (int s = 0; s < 5; s++) {
      const double g = 1 - 0.85 * (s + 1) / 5.0;
      cairo_set_source_rgb(cr, g, g, g);
      cairo_rectangle(cr, x + 8 * s, ly - 10, 8, 12);
      cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    x += 48 + mbs_plot_text(cr, x + 48, ly, "2-D histograms (darker: more samples)", 0) + 24;
    if (S->mean && S->cov) {
      const double dash[2] = {7, 4};
      mbs_plot_rgb(cr, vermillion);
      cairo_set_line_width(cr, 2);
      cairo_move_to(cr, x, ly - 4);
      cairo_line_to(cr, x + 24, ly - 4);
      cairo_stroke(cr);
      cairo_set_line_width(cr, 1.6);
      cairo_set_dash(cr, dash, 2, 0);
      cairo_move_to(cr, x + 30, ly - 4);
      cairo_line_to(cr, x + 54, ly - 4);
      cairo_stroke(cr);
      cairo_set_dash(cr, NULL, 0, 0);
      cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
      snprintf(b2, sizeof b2, "1σ, 2σ ellipses of the posterior mean and covariance");
      mbs_plot_text(cr, x + 62, ly, mbs_plot_fit(cr, b2, L->W - margin - x - 62, buf, sizeof buf),
                    0);
    } else {
      cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
      mbs_plot_text(cr, x, ly, "(no mean or covariance in the file: no ellipses)", 0);
    }
  }

  for (int i = 0; i < D; i++) {
    draw_diagonal(cr, S, L, i);
    for (int j = 0; j < i; j++) draw_pair(cr, S, L, i, j, k, count);
  }
  // ticks on every panel, values and names on the outer ones: x along the bottom row, y along
  // the left column (below the first row: the first row's panel is a histogram)
  for (int i = 0; i < D; i++)
    for (int j = 0; j <= i; j++) {
      const double px = panel_x(L, j), py = panel_y(L, i);
      ticks(cr, S, L, j, 0, px, py, i == D - 1);
      if (j < i) ticks(cr, S, L, i, 1, px, py, j == 0);
    }
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  mbs_plot_font(cr, P >= 230 ? 15 : 13, 0);
  for (int j = 0; j < D; j++) {
    const double cx = panel_x(L, j) + 0.5 * P, by = panel_y(L, D - 1) + P;
    mbs_plot_text(cr, cx, by + 60, mbs_plot_fit(cr, S->names[j], P + GAP - 4, buf, sizeof buf),
                  0.5);
  }
  for (int i = 1; i < D; i++)
    mbs_plot_text_vertical(cr, LEFT - 78, panel_y(L, i) + 0.5 * P,
                  mbs_plot_fit(cr, S->names[i], P + GAP - 4, buf, sizeof buf));
  // footer: the file and what is not shown
  cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
  mbs_plot_font(cr, 12, 0);
  const char* slash = strrchr(S->path, '/');
  int n = snprintf(b2, sizeof b2, "%s: /calibration, %ld samples x %d parameter%s",
                   slash ? slash + 1 : S->path, S->N, S->Dall, S->Dall == 1 ? "" : "s");
  if (S->Dall > D && n > 0 && n < (int)sizeof b2)
    snprintf(b2 + n, sizeof b2 - (size_t)n, "; the first %d parameters shown, %d left out", D,
             S->Dall - D);
  mbs_plot_text(cr, margin, L->H - 14, mbs_plot_fit(cr, b2, avail, buf, sizeof buf), 0);
}

int mbs_corner_plot_png(const char* h5, const char* png, mbs_error* err) {
  mbs_results* r = mbs_plot_open("corner plot", h5, png, err);
  if (!r) return err->code;
  const char* path = h5;
  post S;
  memset(&S, 0, sizeof S);
  S.path = path;
  int rc = mbs_plot_close(r, read_calibration(&S, r, err), err);
  if (!rc) {
    S.D = S.Dall < MAXD ? S.Dall : MAXD;
    rc = summarize(&S, err);
  }
  // bins of the 2-D histograms
  int k = (int)lround(sqrt((double)S.N) / 2.2);
  k = k < 10 ? 10 : k > 30 ? 30 : k;
  long* count = rc ? NULL : malloc((size_t)k * k * sizeof *count);
  if (!rc && !count) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
  if (rc) {
    post_free(&S);
    return rc;
  }

  const layout L = make_layout(S.D);
  cairo_surface_t* surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, L.W, L.H);
  cairo_t* cr = cairo_create(surf);
  draw(cr, &S, &L, count, k);
  free(count);
  post_free(&S);
  return mbs_plot_write_png(cr, surf, png, err);
}
