// Minimal SVG line charts: axes with round tick values, a legend, one or more panels.
#include "svg_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { PANEL_W = 420, PANEL_H = 340, MARGIN_L = 70, MARGIN_R = 20, MARGIN_T = 40, MARGIN_B = 55 };

// a "nice" tick step for a range, about 5 ticks
static double tick_step(double range) {
  if (!(range > 0)) return 1;
  const double raw = range / 5;
  const double mag = pow(10, floor(log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

static void data_range(const svg_panel* p, double* x0, double* x1, double* y0, double* y1) {
  *x0 = *y0 = INFINITY;
  *x1 = *y1 = -INFINITY;
  for (int s = 0; s < p->nseries; s++)
    for (int i = 0; i < p->series[s].n; i++) {
      const double x = p->series[s].x[i], y = p->series[s].y[i];
      if (!isfinite(x) || !isfinite(y)) continue;
      *x0 = fmin(*x0, x); *x1 = fmax(*x1, x);
      *y0 = fmin(*y0, y); *y1 = fmax(*y1, y);
    }
  if (!(*x1 >= *x0)) { *x0 = 0; *x1 = 1; }
  if (!(*y1 >= *y0)) { *y0 = 0; *y1 = 1; }
  if (*x1 - *x0 < 1e-12) { *x0 -= 0.5; *x1 += 0.5; }
  if (*y1 - *y0 < 1e-12 * fmax(1, fabs(*y0))) { *y0 -= 0.5; *y1 += 0.5; }
  const double px = 0.04 * (*x1 - *x0), py = 0.06 * (*y1 - *y0);
  *x0 -= px; *x1 += px; *y0 -= py; *y1 += py;
}

static void panel(FILE* f, const svg_panel* p, double ox, double oy) {
  double x0, x1, y0, y1;
  data_range(p, &x0, &x1, &y0, &y1);
  const double w = PANEL_W - MARGIN_L - MARGIN_R, h = PANEL_H - MARGIN_T - MARGIN_B;
  if (p->equal_aspect) {  // widen one range so that a unit is as long on both axes
    const double sx = (x1 - x0) / w, sy = (y1 - y0) / h, s = fmax(sx, sy);
    const double cx = 0.5 * (x0 + x1), cy = 0.5 * (y0 + y1);
    x0 = cx - 0.5 * s * w; x1 = cx + 0.5 * s * w;
    y0 = cy - 0.5 * s * h; y1 = cy + 0.5 * s * h;
  }
  const double L = ox + MARGIN_L, T = oy + MARGIN_T;
#define PX(x) (L + ((x) - x0) / (x1 - x0) * w)
#define PY(y) (T + h - ((y) - y0) / (y1 - y0) * h)
  fprintf(f, "<text x='%.1f' y='%.1f' font-size='15' text-anchor='middle' font-weight='bold'>%s</text>\n",
          L + w / 2, oy + 22, p->title);
  fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='white' stroke='#444'/>\n", L, T, w, h);
  const double dx = tick_step(x1 - x0), dy = tick_step(y1 - y0);
  for (double t = ceil(x0 / dx) * dx; t <= x1 + 1e-9 * dx; t += dx) {
    const double v = fabs(t) < 1e-12 * dx ? 0 : t;
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", PX(v), T, PX(v), T + h);
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>%g</text>\n", PX(v), T + h + 15, v);
  }
  for (double t = ceil(y0 / dy) * dy; t <= y1 + 1e-9 * dy; t += dy) {
    const double v = fabs(t) < 1e-12 * dy ? 0 : t;
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", L, PY(v), L + w, PY(v));
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='end'>%g</text>\n", L - 5, PY(v) + 4, v);
  }
  fprintf(f, "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle'>%s</text>\n", L + w / 2,
          T + h + 38, p->xlabel);
  fprintf(f, "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle' transform='rotate(-90 %.1f %.1f)'>%s</text>\n",
          ox + 16, T + h / 2, ox + 16, T + h / 2, p->ylabel);
  for (int s = 0; s < p->nseries; s++) {
    const svg_series* se = &p->series[s];
    fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.6' points='", se->color);
    for (int i = 0; i < se->n; i++)
      if (isfinite(se->x[i]) && isfinite(se->y[i]))
        fprintf(f, "%.1f,%.1f ", PX(se->x[i]), PY(se->y[i]));
    fprintf(f, "'/>\n");
    // legend
    const double ly = T + 14 + 16 * s;
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' stroke-width='3'/>\n",
            L + 8, ly - 4, L + 26, ly - 4, se->color);
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='11'>%s</text>\n", L + 30, ly, se->label);
  }
#undef PX
#undef PY
}

int svg_write(const char* path, const char* title, const char* note, const svg_panel* panels,
              int npanels, mbs_error* err) {
  FILE* f = fopen(path, "w");
  if (!f) return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create file: %s", path, strerror(errno));
  const int W = PANEL_W * npanels, H = PANEL_H + 70;
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
             "font-family='Helvetica, Arial, sans-serif'>\n", W, H);
  fprintf(f, "<rect width='100%%' height='100%%' fill='#fafafa'/>\n");
  fprintf(f, "<text x='%d' y='26' font-size='18' text-anchor='middle'>%s</text>\n", W / 2, title);
  for (int i = 0; i < npanels; i++) panel(f, &panels[i], PANEL_W * i, 36);
  if (note)
    fprintf(f, "<text x='%d' y='%d' font-size='12' text-anchor='middle' fill='#333'>%s</text>\n",
            W / 2, H - 10, note);
  fprintf(f, "</svg>\n");
  const int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: write failed: %s", path, strerror(errno));
  return MBS_OK;
}
