// The picture of a posture study's table in the manner of Fig. 12 of the OpenSim paper (Seth et
// al. 2011), drawn with cairo. See posture_plot.h.
#include "posture_plot.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_util.h"

// the axes by short names
enum {
  AX_MODE = MBS_POSTURE_MODE,
  AX_KNEE = MBS_POSTURE_KNEE,
  AX_DIR = MBS_POSTURE_DIRECTION,
  AX_MAG = MBS_POSTURE_MAGNITUDE
};

// s broken at spaces into lines of at most maxw; draws them from baseline y (when draw) and
// returns the number of lines
static int text_wrapped(cairo_t* cr, double x, double y, const char* s, double maxw,
                        double lineh, int draw) {
  char line[1024];
  int lines = 0;
  size_t len = 0;
  const char* p = s;
  while (*p) {
    const char* e = strchr(p, ' ');
    const size_t wl = e ? (size_t)(e - p) : strlen(p);
    char trial[1024];
    if (wl + len + 2 >= sizeof trial) break;
    snprintf(trial, sizeof trial, "%.*s%s%.*s", (int)len, line, len ? " " : "", (int)wl, p);
    if (len && mbs_plot_text_width(cr, trial) > maxw) {
      if (draw) mbs_plot_text(cr, x, y + lines * lineh, line, 0);
      lines++;
      snprintf(line, sizeof line, "%.*s", (int)wl, p);
    } else {
      snprintf(line, sizeof line, "%s", trial);
    }
    len = strlen(line);
    p += wl;
    while (*p == ' ') p++;
  }
  if (len) {
    if (draw) mbs_plot_text(cr, x, y + lines * lineh, line, 0);
    lines++;
  }
  return lines;
}

// the panels' grid: labels of 13 px, lines of grey 0.88
static const mbs_plot_grid_style grid = {13, 0.88, 5, 8, 4.5, 20};

// the height of the strip of differences under each panel, as a fraction of the panel's
static const double strip_ratio = 0.38;
// the gap between a panel and its strip, px
static const double strip_gap = 10;
// differences from the mean up to this are none (rounding of the mean)
static const double same_index = 1e-12;

// the stability index of mode m, knee flexion k, direction d and displacement g; with `diff`,
// its difference from the mean of the knee flexions with a value there. NaN for no value.
static double value_at(const mbs_posture_table* t, int m, int k, int d, int g, int diff) {
  const double v = t->stability_index[mbs_posture_table_cell(t, m, k, d, g)];
  if (!diff || isnan(v)) return v;
  double sum = 0;
  int n = 0;
  for (int j = 0; j < t->axis[AX_KNEE].n; j++) {
    const double w = t->stability_index[mbs_posture_table_cell(t, m, j, d, g)];
    if (!isnan(w)) sum += w, n++;
  }
  return v - sum / n;
}

// vertical grid lines at the multiples of `step` in u0..u1, without ticks and labels (those are
// under the strip)
static void grid_x_lines(cairo_t* cr, const mbs_plot_frame* F, double step) {
  cairo_set_line_width(cr, 1);
  cairo_set_source_rgb(cr, grid.grey, grid.grey, grid.grey);
  const double first = ceil(F->u0 / step - 1e-6) * step;
  const int nt = (int)floor((F->u1 - first) / step + 1e-6);
  for (int i = 0; i <= nt; i++) {
    const double x = round(mbs_plot_fx(F, first + i * step)) + 0.5;
    cairo_move_to(cr, x, F->y0);
    cairo_line_to(cr, x, F->y1);
  }
  cairo_stroke(cr);
}

// one line per knee flexion of the values of value_at (diff as given) in the frame F, markers
// of radius r; NaN breaks a line. Lines are set apart by 4 px so that equal values (e.g. no
// fall: 1) stay visible for every knee flexion. Whether any value was drawn.
static int draw_curves(cairo_t* cr, const mbs_posture_table* t, int m, int d, int diff,
                       const mbs_plot_frame* F, double width, double r) {
  int any = 0;
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  const int nk = t->axis[AX_KNEE].n;
  for (int k = 0; k < nk; k++) {
    const double* rgb = mbs_plot_palette[k % 8];
    const double dodge = 4 * (k - 0.5 * (nk - 1));
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, width);
    int pen = 0;
    for (int g = 0; g < t->axis[AX_MAG].n; g++) {
      const double v = value_at(t, m, k, d, g, diff);
      if (isnan(v)) {
        pen = 0;
        continue;
      }
      const double x = mbs_plot_fx(F, t->axis[AX_MAG].v[g] * 100) + dodge;
      const double y = mbs_plot_fy(F, v);
      if (pen) cairo_line_to(cr, x, y);
      else cairo_move_to(cr, x, y);
      pen = 1;
    }
    cairo_stroke(cr);
    // markers at least 12 px apart, so that a fine grid of displacements stays a line
    double last = -INFINITY;
    for (int g = 0; g < t->axis[AX_MAG].n; g++) {
      const double v = value_at(t, m, k, d, g, diff);
      if (isnan(v)) continue;
      any = 1;
      const double x = mbs_plot_fx(F, t->axis[AX_MAG].v[g] * 100) + dodge;
      if (x - last < 12) continue;
      mbs_plot_marker(cr, k, x, mbs_plot_fy(F, v), r, rgb);
      last = x;
    }
  }
  return any;
}

// the largest step of 1, 2 or 5 times a power of ten not above r (> 0)
static double nice_below(double r) {
  double p = pow(10, floor(log10(r)));
  if (p > r) p /= 10;  // log10's rounding
  const double f = r / p;
  return (f >= 5 ? 5 : f >= 2 ? 2 : 1) * p;
}

// the strip under the panel of mode m and direction d in the frame S (its data range set here):
// each knee flexion's difference from the mean of the knee flexions at each displacement, on a
// symmetric scale from the largest difference, with the displacement's ticks, labels and title
// below it (the panel shares them)
static void draw_strip(cairo_t* cr, const mbs_posture_table* t, int m, int d, mbs_plot_frame S,
                       double ustep, double px) {
  char buf[64];
  const int nk = t->axis[AX_KNEE].n, ng = t->axis[AX_MAG].n;
  double most = 0;
  int any = 0, several = 0;  // a value at all; two knee flexions with a value somewhere
  for (int g = 0; g < ng; g++) {
    int n = 0;
    for (int k = 0; k < nk; k++) {
      const double v = value_at(t, m, k, d, g, 1);
      if (isnan(v)) continue;
      n++;
      if (fabs(v) > most) most = fabs(v);
    }
    any |= n > 0;
    several |= n > 1;
  }
  const int differ = most > same_index;
  // the largest difference 7 px inside the frame, so that its markers stay inside
  const double half = 0.5 * (S.y1 - S.y0);
  const double R = differ ? most * half / fmax(half - 7, 0.5 * half) : 1;
  S.v0 = -R;
  S.v1 = R;
  // grid: the zero line darker, ± a step of 1, 2 or 5 times a power of ten (labelled)
  mbs_plot_grid_x(cr, &S, ustep, &grid);
  mbs_plot_font(cr, grid.font, 0);
  cairo_set_line_width(cr, 1);
  const double step = differ ? nice_below(R) : 0;
  for (int i = differ ? -1 : 0; i <= (differ ? 1 : 0); i++) {
    const double y = round(mbs_plot_fy(&S, i * step)) + 0.5;
    if (i) cairo_set_source_rgb(cr, grid.grey, grid.grey, grid.grey);
    else cairo_set_source_rgb(cr, 0.55, 0.55, 0.55);
    cairo_move_to(cr, S.x0, y);
    cairo_line_to(cr, S.x1, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    mbs_plot_text(cr, S.x0 - grid.ylabel_dx, y + grid.ylabel_dy,
                  mbs_plot_tick_text(i * step, differ ? step : 1, buf, sizeof buf), 1);
  }
  mbs_plot_frame_box(cr, &S);
  // axis titles: the displacement's (the panel's too) and the difference's in two lines
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  mbs_plot_font(cr, 14, 0);
  mbs_plot_text(cr, 0.5 * (S.x0 + S.x1), S.y1 + 40, "platform displacement (cm)", 0.5);
  mbs_plot_font(cr, 12, 0);
  const double ym = 0.5 * (S.y0 + S.y1);
  mbs_plot_text_vertical(cr, px + 14, ym, "index − mean");
  mbs_plot_text_vertical(cr, px + 28, ym, "of postures");
  if (!any) return;
  if (differ) {
    draw_curves(cr, t, m, d, 1, &S, 2, 4);
    return;
  }
  cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
  mbs_plot_font(cr, 12, 0);
  mbs_plot_text(cr, S.x1 - 10, mbs_plot_fy(&S, 0) - 7,
                several ? "postures identical" : "a single posture: no differences", 1);
}

// panel of mode m and direction d in the box (px, py, pw, ph), with its strip of differences
// below; ticks every ustep from u0 to u1 (cm), the frame padded by `pad` on both sides so that
// markers at the ends stay inside
static void draw_panel(cairo_t* cr, const mbs_posture_table* t, int m, int d, double px, double py,
                       double pw, double ph, double u0, double u1, double ustep, double pad) {
  char buf[64];
  // the panel's frame from 32 px below the top, the strip's ending 52 px above the bottom (its
  // tick labels and the axis title below)
  const double top = py + 32, bottom = py + ph - 52;
  const double mainh = (bottom - top - strip_gap) / (1 + strip_ratio);
  // the stability index from 0 to 1 with a margin, so that markers at 0 and 1 stay inside
  const mbs_plot_frame F = {px + 78, px + pw - 24, top, top + mainh,
                            u0 - pad, u1 + pad, -0.04, 1.04};
  const mbs_plot_frame S = {F.x0, F.x1, F.y1 + strip_gap, bottom, F.u0, F.u1, -1, 1};
  // direction title
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  mbs_plot_font(cr, 15, 1);
  mbs_plot_text(cr, F.x0, py + 20,
                mbs_posture_direction_name(t->axis[AX_DIR].v[d], 1, buf, sizeof buf), 0);
  // grid (the displacement's ticks and labels under the strip)
  mbs_plot_grid_y(cr, &F, 0.25, &grid);
  grid_x_lines(cr, &F, ustep);
  mbs_plot_frame_box(cr, &F);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  mbs_plot_font(cr, 14, 0);
  mbs_plot_text_vertical(cr, px + 20, 0.5 * (F.y0 + F.y1), "stability index");
  const int any = draw_curves(cr, t, m, d, 0, &F, 2.5, 5);
  draw_strip(cr, t, m, d, S, ustep, px);
  if (!any) {
    cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
    mbs_plot_font(cr, 14, 0);
    mbs_plot_text(cr, 0.5 * (F.x0 + F.x1), 0.5 * (F.y0 + F.y1), "no successful samples", 0.5);
    return;
  }
  // the stable range of each posture (the paper's Fig. 12b): the largest displacement up to
  // which the model stands for the whole simulated duration, written in the empty part of the
  // panel (below the lines when some posture stands, above them when every posture falls)
  if (!(t->duration[0] && atof(t->duration) > 0)) return;  // no simulated duration in the file
  const int nk = t->axis[AX_KNEE].n;
  int stands_any = 0;
  double range[8];
  for (int k = 0; k < nk && k < 8; k++) {
    range[k] = mbs_posture_table_stable_range(t, m, k, d);
    stands_any |= range[k] >= 0;
  }
  mbs_plot_font(cr, 13, 0);
  if (!stands_any) {
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    mbs_plot_text(cr, F.x1 - 10, mbs_plot_fy(&F, 0.9),
                  "falls at every displacement, 0 cm included", 1);
    return;
  }
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  double y = mbs_plot_fy(&F, 0.5);
  // lines of 18 px, closer (down to 13 px, smaller type) when the panel is short
  const int nlines = nk < 8 ? nk : 8;
  const double lineh = fmax(13, fmin(18, (F.y1 - 6 - y) / nlines));
  const double font = lineh >= 16 ? 13 : 11.5;
  mbs_plot_font(cr, font, 0);
  mbs_plot_text(cr, F.x0 + 12, y, "stands the whole simulated time up to:", 0);
  for (int k = 0; k < nlines; k++) {
    y += lineh;
    const double* rgb = mbs_plot_palette[k % 8];
    mbs_plot_marker(cr, k, F.x0 + 20, y - 0.35 * font, lineh >= 16 ? 5 : 4, rgb);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    mbs_plot_font(cr, font, 0);
    if (range[k] >= 0)
      snprintf(buf, sizeof buf, "%g° knee flexion: %g cm", t->axis[AX_KNEE].v[k],
               100 * range[k]);
    else if (isnan(range[k]))
      snprintf(buf, sizeof buf, "%g° knee flexion: no result at %g cm", t->axis[AX_KNEE].v[k],
               100 * t->axis[AX_MAG].v[0]);
    else
      snprintf(buf, sizeof buf, "%g° knee flexion: falls even unperturbed",
               t->axis[AX_KNEE].v[k]);
    mbs_plot_text(cr, F.x0 + 32, y, buf, 0);
  }
}

int mbs_posture_plot_png(const mbs_posture_table* t, const char* png, mbs_error* err) {
  const int nm = t->axis[AX_MODE].n, nd = t->axis[AX_DIR].n, nk = t->axis[AX_KNEE].n;
  const int W = nm <= 2 ? 1400 : 80 + 660 * nm;
  const double margin = 40;
  char buf[1400], b2[64];
  // measure the header on a scratch surface: title, subtitle, fall criterion, legend
  cairo_surface_t* scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t* cr = cairo_create(scratch);
  char fall[1100] = "";
  if (t->fall[0]) snprintf(fall, sizeof fall, "Fall criterion: %s", t->fall);
  mbs_plot_font(cr, 15, 0);
  const int fall_lines = fall[0] ? text_wrapped(cr, 0, 0, fall, W - 2 * margin, 20, 0) : 0;
  cairo_destroy(cr);
  cairo_surface_destroy(scratch);
  const double legend_y = 100 + 20 * fall_lines + 12;
  const double header = legend_y + 44;  // column titles' baseline
  const double rows_top = header + 10, footer = 26;
  // a row: its title, the panel (at least ~165 px) and its strip of differences (~63 px), the
  // displacement's labels and title
  const double min_row = 330;
  int H = 900;
  if (rows_top + nd * min_row + footer > H) H = (int)ceil(rows_top + nd * min_row + footer);

  cairo_surface_t* surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
  cr = cairo_create(surf);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);

  // title and subtitle
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  snprintf(buf, sizeof buf, "Standing balance after a platform displacement%s%s",
           t->model[0] ? " — model " : "", t->model);
  mbs_plot_font_to_fit(cr, buf, W - 2 * margin, 24, 12, 1, 1);  // smaller for a long model name
  mbs_plot_text(cr, margin, 40, buf, 0);
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  mbs_plot_font(cr, 15, 0);
  if (t->duration[0])
    snprintf(buf, sizeof buf, "stability index = 1 − exp(−T²), T = time to fall in s (capped "
             "at the simulated duration %g s)", atof(t->duration));
  else
    snprintf(buf, sizeof buf, "stability index = 1 − exp(−T²), T = time to fall in s (capped "
             "at the simulated duration)");
  mbs_plot_text(cr, margin, 72, buf, 0);
  if (fall[0]) text_wrapped(cr, margin, 94, fall, W - 2 * margin, 20, 1);

  // legend: one entry per knee flexion
  double x = margin;
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  mbs_plot_font(cr, 15, 1);
  x += mbs_plot_text(cr, x, legend_y + 5, "knee flexion", 0) + 18;
  mbs_plot_font(cr, 15, 0);
  for (int k = 0; k < nk; k++) {
    const double* rgb = mbs_plot_palette[k % 8];
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, 2.5);
    cairo_move_to(cr, x, legend_y);
    cairo_line_to(cr, x + 34, legend_y);
    cairo_stroke(cr);
    mbs_plot_marker(cr, k, x + 17, legend_y, 5, rgb);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    snprintf(b2, sizeof b2, "%g°", t->axis[AX_KNEE].v[k]);
    x += 42 + mbs_plot_text(cr, x + 42, legend_y + 5, b2, 0) + 22;
  }
  cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
  mbs_plot_font(cr, 13, 0);
  const char* gap = "(a gap in a line: no successful sample there)";
  if (x + 10 + mbs_plot_text_width(cr, gap) < W - margin)
    mbs_plot_text(cr, x + 10, legend_y + 5, gap, 0);

  // x range: from 0 (or below) to the largest displacement, in cm
  const mbs_posture_axis* ag = &t->axis[AX_MAG];
  double lo = fmin(0, ag->v[0] * 100), hi = ag->v[ag->n - 1] * 100;
  if (hi - lo <= 0) hi = lo + 1;
  const double step = mbs_plot_nice_step(hi - lo, 5);
  const double u0 = floor(lo / step + 1e-9) * step, u1 = ceil(hi / step - 1e-9) * step;
  const double pad = 0.03 * (u1 - u0);

  const double colw = (W - 2 * (margin - 20)) / (double)nm;
  const double rowh = (H - rows_top - footer) / (double)nd;
  for (int m = 0; m < nm; m++) {
    const double px = margin - 20 + m * colw;
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    mbs_plot_font(cr, 18, 1);
    mbs_plot_text(cr, px + 78 + 0.5 * (colw - 102), header,
                  mbs_posture_mode_name(t->axis[AX_MODE].v[m], 1, b2, sizeof b2), 0.5);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1.5);
    cairo_move_to(cr, px + 78, header + 7);
    cairo_line_to(cr, px + colw - 24, header + 7);
    cairo_stroke(cr);
    for (int d = 0; d < nd; d++) {
      cairo_save(cr);
      draw_panel(cr, t, m, d, px, rows_top + d * rowh, colw, rowh, u0, u1, step, pad);
      cairo_restore(cr);
    }
  }
  // footer: provenance
  cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
  mbs_plot_font(cr, 12, 0);
  const char* slash = strrchr(t->path, '/');
  snprintf(buf, sizeof buf, "%s: %ld samples, %ld succeeded, %ld failed, %ld not written",
           slash ? slash + 1 : t->path, t->nsamples, t->good, t->written - t->good,
           t->nsamples - t->written);
  mbs_plot_text(cr, margin, H - 9, buf, 0);
  return mbs_plot_write_png(cr, surf, png, err);
}
