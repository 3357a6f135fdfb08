// What the pictures of jobs/ draw alike with cairo, and how they open study files. See
// plot_util.h.
#define _GNU_SOURCE  // RTLD_DEFAULT, strndup, M_PI
#include "plot_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const double mbs_plot_palette[8][3] = {
    {0x00 / 255., 0x72 / 255., 0xB2 / 255.},  // blue
    {0xD5 / 255., 0x5E / 255., 0x00 / 255.},  // vermillion
    {0x00 / 255., 0x9E / 255., 0x73 / 255.},  // bluish green
    {0xCC / 255., 0x79 / 255., 0xA7 / 255.},  // reddish purple
    {0xE6 / 255., 0x9F / 255., 0x00 / 255.},  // orange
    {0x56 / 255., 0xB4 / 255., 0xE9 / 255.},  // sky blue
    {0x00 / 255., 0x00 / 255., 0x00 / 255.},  // black
    {0xF0 / 255., 0xE4 / 255., 0x42 / 255.},  // yellow
};

// ------------------------------------------------------------------------------------------
// text

void mbs_plot_font(cairo_t* cr, double size, int bold) {
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

void mbs_plot_font_to_fit(cairo_t* cr, const char* s, double maxw, double size, double least,
                          double step, int bold) {
  for (mbs_plot_font(cr, size, bold); size > least && mbs_plot_text_width(cr, s) > maxw;
       mbs_plot_font(cr, size, bold))
    size -= step;
}

double mbs_plot_text_width(cairo_t* cr, const char* s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  return e.x_advance;
}

double mbs_plot_text(cairo_t* cr, double x, double y, const char* s, double halign) {
  const double w = mbs_plot_text_width(cr, s);
  cairo_move_to(cr, x - halign * w, y);
  cairo_show_text(cr, s);
  return w;
}

void mbs_plot_text_vertical(cairo_t* cr, double x, double y, const char* s) {
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, -M_PI / 2);
  mbs_plot_text(cr, 0, 0, s, 0.5);
  cairo_restore(cr);
}

const char* mbs_plot_fit(cairo_t* cr, const char* s, double maxw, char* buf, size_t n) {
  snprintf(buf, n, "%s", s);
  if (mbs_plot_text_width(cr, buf) <= maxw) return buf;
  size_t len = strlen(buf);
  while (len > 0) {
    do len--;
    while (len > 0 && ((unsigned char)buf[len] & 0xC0) == 0x80);
    char t[512];
    snprintf(t, sizeof t, "%.*s…", (int)len, buf);
    if (mbs_plot_text_width(cr, t) <= maxw || len == 0) {
      snprintf(buf, n, "%s", t);
      break;
    }
  }
  return buf;
}

// ------------------------------------------------------------------------------------------
// axes

double mbs_plot_nice_step(double span, double k) {
  const double raw = span / k;
  const double p = pow(10, floor(log10(raw)));
  const double f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

const char* mbs_plot_tick_text(double v, double step, char* buf, size_t n) {
  if (fabs(v) < 1e-9 * step) v = 0;
  snprintf(buf, n, "%.6g", v);
  return buf;
}

double mbs_plot_fx(const mbs_plot_frame* F, double u) {
  return F->x0 + (u - F->u0) / (F->u1 - F->u0) * (F->x1 - F->x0);
}

double mbs_plot_fy(const mbs_plot_frame* F, double v) {
  return F->y1 - (v - F->v0) / (F->v1 - F->v0) * (F->y1 - F->y0);
}

void mbs_plot_grid_y(cairo_t* cr, const mbs_plot_frame* F, double step,
                     const mbs_plot_grid_style* s) {
  char buf[64];
  mbs_plot_font(cr, s->font, 0);
  cairo_set_line_width(cr, 1);
  const double first = ceil(F->v0 / step - 1e-6) * step;
  const int nt = (int)floor((F->v1 - first) / step + 1e-6);
  for (int i = 0; i <= nt; i++) {
    const double v = first + i * step, y = round(mbs_plot_fy(F, v)) + 0.5;
    cairo_set_source_rgb(cr, s->grey, s->grey, s->grey);
    cairo_move_to(cr, F->x0, y);
    cairo_line_to(cr, F->x1, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    mbs_plot_text(cr, F->x0 - s->ylabel_dx, y + s->ylabel_dy,
                  mbs_plot_tick_text(v, step, buf, sizeof buf), 1);
  }
}

void mbs_plot_grid_x(cairo_t* cr, const mbs_plot_frame* F, double step,
                     const mbs_plot_grid_style* s) {
  char buf[64];
  mbs_plot_font(cr, s->font, 0);
  cairo_set_line_width(cr, 1);
  const double first = ceil(F->u0 / step - 1e-6) * step;
  const int nt = (int)floor((F->u1 - first) / step + 1e-6);
  for (int i = 0; i <= nt; i++) {
    const double u = first + i * step, x = round(mbs_plot_fx(F, u)) + 0.5;
    cairo_set_source_rgb(cr, s->grey, s->grey, s->grey);
    cairo_move_to(cr, x, F->y0);
    cairo_line_to(cr, x, F->y1);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_move_to(cr, x, F->y1);
    cairo_line_to(cr, x, F->y1 + s->tick);
    cairo_stroke(cr);
    mbs_plot_text(cr, x, F->y1 + s->xlabel_dy, mbs_plot_tick_text(u, step, buf, sizeof buf), 0.5);
  }
}

void mbs_plot_frame_box(cairo_t* cr, const mbs_plot_frame* F) {
  cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, round(F->x0) + 0.5, round(F->y0) + 0.5, round(F->x1 - F->x0),
                  round(F->y1 - F->y0));
  cairo_stroke(cr);
}

// ------------------------------------------------------------------------------------------
// colours and markers

void mbs_plot_rgb(cairo_t* cr, const double* rgb) {
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
}

void mbs_plot_marker(cairo_t* cr, int shape, double x, double y, double r, const double rgb[3]) {
  switch (shape % 4) {
    case 0:
      cairo_arc(cr, x, y, r, 0, 2 * M_PI);
      break;
    case 1:
      cairo_rectangle(cr, x - 0.9 * r, y - 0.9 * r, 1.8 * r, 1.8 * r);
      break;
    case 2:
      cairo_move_to(cr, x, y - 1.2 * r);
      cairo_line_to(cr, x + 1.1 * r, y + 0.8 * r);
      cairo_line_to(cr, x - 1.1 * r, y + 0.8 * r);
      cairo_close_path(cr);
      break;
    default:
      cairo_move_to(cr, x, y - 1.3 * r);
      cairo_line_to(cr, x + 1.1 * r, y);
      cairo_line_to(cr, x, y + 1.3 * r);
      cairo_line_to(cr, x - 1.1 * r, y);
      cairo_close_path(cr);
      break;
  }
  mbs_plot_rgb(cr, rgb);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_set_line_width(cr, 1.2);
  cairo_stroke(cr);
}

// ------------------------------------------------------------------------------------------
// files

mbs_results* mbs_plot_open(const char* what, const char* h5, const char* png, mbs_error* err) {
  if (!h5 || !*h5 || !png || !*png) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, what, "%s: no result file or no picture file", what);
    return NULL;
  }
  struct stat sb;
  if (stat(h5, &sb) != 0) {
    MBS_FAIL(err, MBS_ERR_IO, h5, "%s: cannot open the result file: %s", h5, strerror(errno));
    return NULL;
  }
  return mbs_results_open_read(h5, err);
}

int mbs_plot_close(mbs_results* r, int rc, mbs_error* err) {
  mbs_error later;
  const int rc_close = mbs_results_close(r, rc ? &later : err);
  return rc ? rc : rc_close;
}

char* mbs_plot_short_name(const char* s) {
  size_t n = strlen(s);
  while (n > 1 && s[n - 1] == '/') n--;
  size_t b = n;
  for (int seg = 0; seg < 2 && b > 0; seg++) {
    if (seg) b--;  // skip the slash between the segments
    while (b > 0 && s[b - 1] != '/') b--;
  }
  while (b < n && s[b] == '/') b++;  // "/mass": "mass"
  return strndup(s + b, n - b);
}

int mbs_plot_read_names(mbs_results* r, const char* path, const char* name, const char* hint,
                        char*** out, int* n, mbs_error* err) {
  *out = NULL;
  *n = 0;
  if (!mbs_results_exists(r, name))
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no %s: %s", path, name, hint);
  char** v = NULL;
  int count = 0;
  const int rc = mbs_results_read_strings(r, name, &v, &count, err);
  if (rc) return rc;
  for (int i = 0; i < count; i++) {
    char* s = mbs_plot_short_name(v[i]);
    if (!s) {
      mbs_plot_free_names(v);
      return MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    }
    free(v[i]);
    v[i] = s;
  }
  *out = v;
  *n = count;
  return MBS_OK;
}

void mbs_plot_free_names(char** v) {
  for (size_t i = 0; v && v[i]; i++) free(v[i]);
  free(v);
}

int mbs_plot_write_png(cairo_t* cr, cairo_surface_t* surf, const char* png, mbs_error* err) {
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  if (st == CAIRO_STATUS_SUCCESS) {
    errno = 0;
    st = cairo_surface_write_to_png(surf, png);
  }
  const int e = errno;
  cairo_surface_destroy(surf);
  if (st != CAIRO_STATUS_SUCCESS) {
    if (st == CAIRO_STATUS_WRITE_ERROR && e)
      return MBS_FAIL(err, MBS_ERR_IO, png, "%s: cannot write the picture: %s", png,
                      strerror(e));
    return MBS_FAIL(err, MBS_ERR_IO, png, "%s: cannot draw or write the picture: %s", png,
                    cairo_status_to_string(st));
  }
  return MBS_OK;
}

void mbs_plot_cleanup(void) {
  // without both resets, valgrind and LeakSanitizer report fontconfig's configuration (parsed
  // on the first use of a font) as definitely lost; FcFini is looked up in the process (cairo
  // loaded fontconfig), so mbstudy does not link fontconfig itself
  cairo_debug_reset_static_data();
  void (*fc_fini)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "FcFini");
  if (fc_fini) fc_fini();
}
