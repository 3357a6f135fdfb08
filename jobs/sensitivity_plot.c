// The picture of a sensitivity study's indices (Sobol' bars or Morris' screening plot), read from
// the study file through include/mbs/results.h (the outputs listed with the HDF5 C API) and drawn
// with cairo. See sensitivity_plot.h.
#define _GNU_SOURCE  // strverscmp
#include "sensitivity_plot.h"

#include <cairo.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/h5_util.h"
#include "mbs/results.h"
#include "plot_util.h"

enum { MAXP = MBS_SENSITIVITY_PLOT_MAX_PANELS, HEADER = 120, FOOTER = 40, PANEL_H = 470 };
enum { SOBOL = 0, MORRIS = 1 };

// the datasets of one output, by method
static const char* const fields[2][4] = {{"S1", "S1_conf", "ST", "ST_conf"},
                                         {"mu_star", "mu_star_conf", "sigma", "mu"}};

typedef struct output {
  char* name;
  double* v[4];         // fields[method][k], D values each
  char failed[320];     // the group's attribute `analysis_failed` (why the indices are NaN)
} output;

// what is read from the file
typedef struct sens {
  const char* path;
  int method;
  int D;
  char** pnames;     // D shortened parameter names
  int nout;          // scalar outputs in the file
  char** onames;     // their names, drawing order
  int nshown;        // min(nout, MAXP)
  output out[MAXP];
  char model[256];   // the root attribute `model` without folders, "" when absent
} sens;

// ------------------------------------------------------------------------------------------
// reading

// the dataset `name` as D doubles into *out (malloc'ed)
static int read_vector(const sens* S, mbs_results* r, const char* name, double** out,
                       mbs_error* err) {
  long dims[4];
  int rank;
  const int rc = mbs_results_read(r, name, out, dims, &rank, err);
  if (rc) return rc;
  long n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  if (n != S->D) {
    free(*out);
    *out = NULL;
    return MBS_FAIL(err, MBS_ERR_PARSE, S->path, "%s: %s has %ld values, expected %d (one per "
                    "parameter)", S->path, name, n, S->D);
  }
  return 0;
}

// a list of names
typedef struct name_list {
  char** v;
  int n, cap;
  int nomem;
} name_list;

static int name_add(name_list* L, char* name) {
  if (!name) return L->nomem = 1, -1;
  if (L->n == L->cap) {
    const int cap = L->cap ? 2 * L->cap : 16;
    char** v = realloc(L->v, (size_t)cap * sizeof *v);
    if (!v) {
      free(name);
      return L->nomem = 1, -1;
    }
    L->v = v;
    L->cap = cap;
  }
  L->v[L->n++] = name;
  return 0;
}

static void name_list_free(name_list* L) {
  for (int i = 0; i < L->n; i++) free(L->v[i]);
  free(L->v);
  L->v = NULL;
  L->n = L->cap = 0;
}

// H5Literate callback: the names of the groups in a group
static herr_t collect_group(hid_t g, const char* name, const H5L_info_t* info, void* data) {
  (void)info;
  hid_t o = H5Oopen(g, name, H5P_DEFAULT);
  if (o < 0) return 0;  // a dangling link: not an output
  const int is_group = H5Iget_type(o) == H5I_GROUP;
  H5Oclose(o);
  return is_group ? name_add(data, strdup(name)) : 0;
}

// the outputs under the group g (named `prefix` below /sensitivity/scalars, "" at the top): a
// group holding the dataset `field` is an output, any other group is searched (output names
// may contain '/', e.g. bodies/rod2/position_max); 0 or -1 (HDF5 error or out of memory)
static int walk_outputs(hid_t g, const char* prefix, const char* field, name_list* out,
                        int depth) {
  name_list kids = {NULL, 0, 0, 0};
  hsize_t idx = 0;
  int rc = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_group, &kids) < 0 ? -1 : 0;
  for (int i = 0; i < kids.n && !rc; i++) {
    hid_t sub = H5Gopen2(g, kids.v[i], H5P_DEFAULT);
    if (sub < 0) {
      rc = -1;
      break;
    }
    char* full = mbs_format_string("%s%s%s", prefix, *prefix ? "/" : "", kids.v[i]);
    const htri_t has = full ? H5Lexists(sub, field, H5P_DEFAULT) : 0;
    if (!full) out->nomem = 1, rc = -1;
    else if (has > 0) rc = name_add(out, full), full = NULL;
    else if (has < 0) rc = -1;
    else if (depth < 8) rc = walk_outputs(sub, full, field, out, depth + 1);
    free(full);
    H5Gclose(sub);
  }
  if (kids.nomem) out->nomem = 1;
  name_list_free(&kids);
  return rc;
}

static int natural_order(const void* a, const void* b) {
  return strverscmp(*(char* const*)a, *(char* const*)b);
}

// the outputs in natural order of their names (r2 before r10); include/mbs/results.h does not
// list a group's members, so the group is walked with the HDF5 C API on a handle of its own
static int list_outputs(sens* S, mbs_results* r, mbs_error* err) {
  const char* path = S->path;
  const char* grp = "/sensitivity/scalars";
  if (!mbs_results_exists(r, grp)) return 0;  // no scalar outputs: an empty picture
  int rc = 0;
  hid_t f = -1, g = -1;
  name_list L = {NULL, 0, 0, 0};
  const mbs_h5_quiet quiet = mbs_h5_quiet_begin();
  H5TRY(f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), "open the result file");
  H5TRY(g = H5Gopen2(f, grp, H5P_DEFAULT), "open %s", grp);
  if (walk_outputs(g, "", fields[S->method][0], &L, 0) < 0) {
    if (L.nomem) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    else rc = mbs_h5_fail(err, path, "list the outputs in %s", grp);
    goto done;
  }
  if (L.n > 1) qsort(L.v, (size_t)L.n, sizeof *L.v, natural_order);
done:
  mbs_h5_close(&g, H5Gclose);
  mbs_h5_close(&f, H5Fclose);
  H5Eclear2(H5E_DEFAULT);
  mbs_h5_quiet_end(quiet);
  S->onames = L.v;
  S->nout = L.n;
  return rc;
}

// the string attribute `key` of `obj` into buf[n] ("" when absent)
static int read_text(mbs_results* r, const char* obj, const char* key, char* buf, size_t n,
                     mbs_error* err) {
  char* v = NULL;
  const int rc = mbs_results_read_attribute(r, obj, key, &v, err);
  snprintf(buf, n, "%s", v ? v : "");
  free(v);
  return rc;
}

static int read_sensitivity(sens* S, mbs_results* r, mbs_error* err) {
  const char* path = S->path;
  if (!mbs_results_exists(r, "/sensitivity"))
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no /sensitivity: is this a sensitivity study?",
                    path);
  char method[64];
  int rc = read_text(r, "/sensitivity", "method", method, sizeof method, err);
  if (rc) return rc;
  if (!strcmp(method, "sobol")) S->method = SOBOL;
  else if (!strcmp(method, "morris")) S->method = MORRIS;
  else if (!method[0])
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /sensitivity has no attribute 'method' "
                    "(sobol or morris)", path);
  else
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /sensitivity has method '%s': expected "
                    "sobol or morris", path, method);
  rc = read_text(r, "/", "model", S->model, sizeof S->model, err);
  if (rc) return rc;
  const char* slash = strrchr(S->model, '/');
  if (slash) memmove(S->model, slash + 1, strlen(slash + 1) + 1);
  rc = mbs_plot_read_names(r, path, "/sensitivity/parameter_names",
                           "is this a study result file?", &S->pnames, &S->D, err);
  if (rc) return rc;
  if (S->D < 1)
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /sensitivity/parameter_names is empty", path);
  rc = list_outputs(S, r, err);
  if (rc) return rc;
  S->nshown = S->nout < MAXP ? S->nout : MAXP;
  char name[1200];
  for (int o = 0; o < S->nshown; o++) {
    S->out[o].name = S->onames[o];
    snprintf(name, sizeof name, "/sensitivity/scalars/%s", S->onames[o]);
    rc = read_text(r, name, "analysis_failed", S->out[o].failed, sizeof S->out[o].failed, err);
    if (rc) return rc;
    for (int k = 0; k < 4; k++) {
      snprintf(name, sizeof name, "/sensitivity/scalars/%s/%s", S->onames[o],
               fields[S->method][k]);
      if (k == 3 && S->method == MORRIS && !mbs_results_exists(r, name))
        continue;  // mu is not drawn: not required
      rc = read_vector(S, r, name, &S->out[o].v[k], err);
      if (rc) return rc;
    }
  }
  return 0;
}

static void sens_free(sens* S) {
  mbs_plot_free_names(S->pnames);
  for (int o = 0; o < S->nshown; o++)
    for (int k = 0; k < 4; k++) free(S->out[o].v[k]);
  for (int o = 0; o < S->nout; o++) free(S->onames[o]);
  free(S->onames);
}

// ------------------------------------------------------------------------------------------
// drawing helpers

// the panels' grid: labels of 12 px, lines of grey 0.9
static const mbs_plot_grid_style grid = {12, 0.9, 4, 7, 4, 18};

static void clip_to(cairo_t* cr, const mbs_plot_frame* F) {
  cairo_rectangle(cr, F->x0, F->y0, F->x1 - F->x0, F->y1 - F->y0);
  cairo_clip(cr);
}

// a vertical (or horizontal, when `horizontal`) error bar from a to b at c, with caps of half
// width w
static void error_bar(cairo_t* cr, int horizontal, double c, double a, double b, double w) {
  if (horizontal) {
    cairo_move_to(cr, a, c);
    cairo_line_to(cr, b, c);
    cairo_move_to(cr, a, c - w);
    cairo_line_to(cr, a, c + w);
    cairo_move_to(cr, b, c - w);
    cairo_line_to(cr, b, c + w);
  } else {
    cairo_move_to(cr, c, a);
    cairo_line_to(cr, c, b);
    cairo_move_to(cr, c - w, a);
    cairo_line_to(cr, c + w, a);
    cairo_move_to(cr, c - w, b);
    cairo_line_to(cr, c + w, b);
  }
  cairo_stroke(cr);
}

// what a panel without values says: `what` and, when the driver recorded it, why
static void no_values(cairo_t* cr, const mbs_plot_frame* F, const char* what, const char* why) {
  char buf[400];
  cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
  mbs_plot_font(cr, 14, 0);
  const double xc = 0.5 * (F->x0 + F->x1), yc = 0.5 * (F->y0 + F->y1);
  mbs_plot_text(cr, xc, yc, what, 0.5);
  if (!why || !*why) return;
  mbs_plot_font(cr, 12, 0);
  mbs_plot_text(cr, xc, yc + 22, mbs_plot_fit(cr, why, F->x1 - F->x0 - 20, buf, sizeof buf), 0.5);
}

// a small arrowhead with its tip at (x, y) pointing along (dx, dy) (a unit axis direction):
// where an error bar leaves the frame
static void arrowhead(cairo_t* cr, double x, double y, double dx, double dy) {
  cairo_move_to(cr, x, y);
  cairo_line_to(cr, x - 7 * dx - 4 * dy, y - 7 * dy - 4 * dx);
  cairo_line_to(cr, x - 7 * dx + 4 * dy, y - 7 * dy + 4 * dx);
  cairo_close_path(cr);
  cairo_fill(cr);
}

// ------------------------------------------------------------------------------------------
// Sobol': grouped bars

static void draw_sobol(cairo_t* cr, const sens* S, const output* o, double px, double py,
                       double pw) {
  const int D = S->D;
  const double *S1 = o->v[0], *S1c = o->v[1], *ST = o->v[2], *STc = o->v[3];
  char buf[600], b2[600];
  // the y range: 0..1, extended to the estimates outside it
  double lo = 0, hi = 1;
  int any = 0;
  for (int i = 0; i < D; i++) {
    if (isfinite(S1[i])) lo = fmin(lo, S1[i]), hi = fmax(hi, S1[i]), any = 1;
    if (isfinite(ST[i])) lo = fmin(lo, ST[i]), hi = fmax(hi, ST[i]), any = 1;
  }
  // beyond 0 and 1 by whole half steps (ticks stay on whole steps)
  const double step = mbs_plot_nice_step(hi - lo, 5), half = 0.5 * step;
  lo = floor(lo / half + 1e-9) * half;
  hi = ceil(hi / half - 1e-9) * half;
  mbs_plot_frame F = {px + 74, px + pw - 22, py + 44, py + PANEL_H - 112, 0, D, lo, hi};

  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  mbs_plot_font(cr, 16, 1);
  snprintf(b2, sizeof b2, "Sobol' indices of %s", o->name);
  mbs_plot_text(cr, F.x0, py + 26, mbs_plot_fit(cr, b2, pw - 90, buf, sizeof buf), 0);
  mbs_plot_grid_y(cr, &F, step, &grid);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  mbs_plot_font(cr, 13, 0);
  mbs_plot_text_vertical(cr, px + 22, 0.5 * (F.y0 + F.y1), "Sobol' index");

  // bars, clipped to the frame
  const double gw = (F.x1 - F.x0) / D;
  const double bw = fmin(0.36 * gw, 44);
  const double y0 = mbs_plot_fy(&F, 0);
  cairo_save(cr);
  clip_to(cr, &F);
  for (int i = 0; i < D; i++) {
    const double xc = F.x0 + (i + 0.5) * gw;
    const double* v[2] = {S1, ST};
    const double* c[2] = {S1c, STc};
    for (int k = 0; k < 2; k++) {
      const double x = k ? xc + 1 : xc - 1 - bw;
      if (!isfinite(v[k][i])) continue;
      const double y = mbs_plot_fy(&F, v[k][i]);
      mbs_plot_rgb(cr, mbs_plot_palette[k]);
      cairo_rectangle(cr, round(x), fmin(y, y0), round(x + bw) - round(x), fabs(y - y0));
      cairo_fill(cr);
      if (isfinite(c[k][i]) && c[k][i] > 0) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        cairo_set_line_width(cr, 1.4);
        const double ya = mbs_plot_fy(&F, v[k][i] - c[k][i]);
        const double yb = mbs_plot_fy(&F, v[k][i] + c[k][i]);
        error_bar(cr, 0, x + 0.5 * bw, ya, yb, fmin(0.25 * bw, 6));
        if (yb < F.y0) arrowhead(cr, x + 0.5 * bw, F.y0, 0, -1);
        if (ya > F.y1) arrowhead(cr, x + 0.5 * bw, F.y1, 0, 1);
      }
    }
    for (int k = 0; k < 2; k++) {  // "n/a" where an index is missing
      if (isfinite(v[k][i]) || !any) continue;
      cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
      mbs_plot_font(cr, 11, 0);
      mbs_plot_text(cr, k ? xc + 1 + 0.5 * bw : xc - 1 - 0.5 * bw, y0 - 5, "n/a", 0.5);
    }
  }
  // the zero line
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, F.x0, round(y0) + 0.5);
  cairo_line_to(cr, F.x1, round(y0) + 0.5);
  cairo_stroke(cr);
  cairo_restore(cr);
  mbs_plot_frame_box(cr, &F);
  if (!any) no_values(cr, &F, "no finite indices", o->failed);
  // parameter names under the groups, at 45 degrees, ending at the group's tick
  mbs_plot_font(cr, 12, 0);
  for (int i = 0; i < D; i++) {
    const double xc = F.x0 + (i + 0.5) * gw;
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, round(xc) + 0.5, F.y1);
    cairo_line_to(cr, round(xc) + 0.5, F.y1 + 4);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_save(cr);
    cairo_translate(cr, xc + 4, F.y1 + 12);
    cairo_rotate(cr, -M_PI / 4);
    mbs_plot_text(cr, 0, 0, mbs_plot_fit(cr, S->pnames[i], 138, buf, sizeof buf), 1);
    cairo_restore(cr);
  }
}

// ------------------------------------------------------------------------------------------
// Morris: sigma against mu_star

typedef struct box {
  double x0, y0, x1, y1;
} box;

static int overlaps(const box* a, const box* b) {
  return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

static void draw_morris(cairo_t* cr, const sens* S, const output* o, double px, double py,
                        double pw) {
  const int D = S->D;
  const double *ms = o->v[0], *msc = o->v[1], *sg = o->v[2];
  char buf[600], b2[600];
  double xmax = 0, ymax = 0;
  int any = 0;
  for (int i = 0; i < D; i++) {
    if (!isfinite(ms[i]) || !isfinite(sg[i])) continue;
    any = 1;
    xmax = fmax(xmax, ms[i] + (isfinite(msc[i]) ? fabs(msc[i]) : 0));
    ymax = fmax(ymax, sg[i]);
  }
  if (!(xmax > 0)) xmax = 1;
  // sigma at least a tenth of mu_star's range, so that rounding noise (sigma 1e-16 of a linear
  // model) is not blown up to fill the panel
  if (!(ymax > 0.1 * xmax)) ymax = 0.1 * xmax;
  xmax *= 1.05;
  ymax *= 1.08;
  const double xs = mbs_plot_nice_step(xmax, 5), ys = mbs_plot_nice_step(ymax, 5);
  mbs_plot_frame F = {px + 84, px + pw - 26, py + 44, py + PANEL_H - 70,
                      0, ceil(xmax / xs - 1e-9) * xs, 0, ceil(ymax / ys - 1e-9) * ys};

  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  mbs_plot_font(cr, 16, 1);
  snprintf(b2, sizeof b2, "Morris elementary effects of %s", o->name);
  mbs_plot_text(cr, F.x0, py + 26, mbs_plot_fit(cr, b2, pw - 100, buf, sizeof buf), 0);
  mbs_plot_grid_y(cr, &F, ys, &grid);
  mbs_plot_grid_x(cr, &F, xs, &grid);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  mbs_plot_font(cr, 13, 0);
  mbs_plot_text(cr, 0.5 * (F.x0 + F.x1), F.y1 + 42, "μ* (mean of |elementary effects|)", 0.5);
  mbs_plot_text_vertical(cr, px + 22, 0.5 * (F.y0 + F.y1),
                         "σ (standard deviation of the effects)");

  cairo_save(cr);
  clip_to(cr, &F);
  // sigma = mu_star, dashed, labelled where it leaves the frame
  const double e = fmin(F.u1, F.v1);
  const double dash[2] = {7, 5};
  cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
  cairo_set_line_width(cr, 1.3);
  cairo_set_dash(cr, dash, 2, 0);
  cairo_move_to(cr, mbs_plot_fx(&F, 0), mbs_plot_fy(&F, 0));
  cairo_line_to(cr, mbs_plot_fx(&F, e), mbs_plot_fy(&F, e));
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  mbs_plot_font(cr, 12, 0);
  if (F.u1 <= F.v1)
    mbs_plot_text(cr, mbs_plot_fx(&F, e) - 6, mbs_plot_fy(&F, e) + 16, "σ = μ*", 1);
  else
    mbs_plot_text(cr, mbs_plot_fx(&F, e) + 8, mbs_plot_fy(&F, e) + 12, "σ = μ*", 0);
  // error bars, then markers
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  cairo_set_line_width(cr, 1.3);
  for (int i = 0; i < D; i++) {
    if (!isfinite(ms[i]) || !isfinite(sg[i]) || !isfinite(msc[i]) || !(msc[i] > 0)) continue;
    error_bar(cr, 1, mbs_plot_fy(&F, sg[i]), mbs_plot_fx(&F, ms[i] - msc[i]),
              mbs_plot_fx(&F, ms[i] + msc[i]), 4);
    if (ms[i] - msc[i] < F.u0) arrowhead(cr, F.x0, mbs_plot_fy(&F, sg[i]), -1, 0);
  }
  cairo_restore(cr);  // markers at the frame's edges are drawn whole
  enum { NPLACED = 3 * 64 };
  box placed[NPLACED];  // markers, error bars and labels placed so far
  int np = 0;
  for (int i = 0; i < D; i++) {
    if (!isfinite(ms[i]) || !isfinite(sg[i])) continue;
    const double x = mbs_plot_fx(&F, ms[i]), y = mbs_plot_fy(&F, sg[i]);
    mbs_plot_marker(cr, i / 8, x, y, 6, mbs_plot_palette[i % 8]);
    if (np < 64) placed[np++] = (box){x - 7, y - 7, x + 7, y + 7};
    if (np < 64 && isfinite(msc[i]) && msc[i] > 0)
      placed[np++] = (box){mbs_plot_fx(&F, ms[i] - msc[i]) - 1, y - 5,
                           mbs_plot_fx(&F, ms[i] + msc[i]) + 1, y + 5};
  }
  // labels: above right of the point, else right, below right, the same on the left, centred
  // above or below: the first place inside the frame free of markers, error bars and labels
  // drawn before; above right when none is free
  mbs_plot_font(cr, 12, 0);
  for (int i = 0; i < D; i++) {
    if (!isfinite(ms[i]) || !isfinite(sg[i])) continue;
    const double x = mbs_plot_fx(&F, ms[i]), y = mbs_plot_fy(&F, sg[i]);
    const char* s = mbs_plot_fit(cr, S->pnames[i], 230, buf, sizeof buf);
    const double w = mbs_plot_text_width(cr, s);
    const double cand[8][2] = {{x + 6, y - 10},      {x + 10, y + 4},      {x + 6, y + 19},
                               {x - 6 - w, y - 10},  {x - 10 - w, y + 4},  {x - 6 - w, y + 19},
                               {x - 0.5 * w, y - 11}, {x - 0.5 * w, y + 21}};
    int pick = -1;
    box b = {0, 0, 0, 0};
    for (int c = 0; c < 8 && pick < 0; c++) {
      b = (box){cand[c][0] - 1, cand[c][1] - 11, cand[c][0] + w + 1, cand[c][1] + 3};
      if (b.x0 < F.x0 || b.x1 > F.x1 || b.y0 < F.y0 || b.y1 > F.y1) continue;
      int free_ = 1;
      for (int k = 0; k < np && free_; k++) free_ = !overlaps(&b, &placed[k]);
      if (free_) pick = c;
    }
    if (pick < 0) {
      pick = x + 6 + w <= F.x1 ? 0 : 3;
      b = (box){cand[pick][0] - 1, cand[pick][1] - 11, cand[pick][0] + w + 1, cand[pick][1] + 3};
    }
    // dark text on a white halo, readable over the grid and the dashed line
    cairo_move_to(cr, cand[pick][0], cand[pick][1]);
    cairo_text_path(cr, s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_set_line_width(cr, 3);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_stroke_preserve(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_fill(cr);
    if (np < NPLACED) placed[np++] = b;
  }
  mbs_plot_frame_box(cr, &F);
  if (!any) no_values(cr, &F, "no finite effects", o->failed);
}

// ------------------------------------------------------------------------------------------
// the picture

static int panel_width(int D, int npanels) {
  const int w = 150 + 44 * D, least = npanels <= 1 ? 820 : 620;
  return w < least ? least : w > 2400 ? 2400 : w;
}

static void draw(cairo_t* cr, const sens* S, int W, int H, int cols, int PW) {
  char buf[1400], b2[1400];
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  const double margin = 40;
  // title and subtitle
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  snprintf(b2, sizeof b2, "%s%s%s",
           S->method == SOBOL ? "Sobol' sensitivity indices" : "Morris screening: elementary "
                                                                "effects",
           S->model[0] ? " — model " : "", S->model);
  mbs_plot_font_to_fit(cr, b2, W - 2 * margin, 24, 16, 1, 1);  // smaller for a long model name
  mbs_plot_text(cr, margin, 40, mbs_plot_fit(cr, b2, W - 2 * margin, buf, sizeof buf), 0);
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  if (S->method == SOBOL)
    snprintf(b2, sizeof b2, "%d parameter%s, %d scalar output%s: the share of the output's "
             "variance due to each parameter alone (S1) and with its interactions (ST)", S->D,
             S->D == 1 ? "" : "s", S->nout, S->nout == 1 ? "" : "s");
  else
    snprintf(b2, sizeof b2, "%d parameter%s, %d scalar output%s: right = influential, above "
             "the dashed line σ = μ* = non-linear or interacting", S->D, S->D == 1 ? "" : "s",
             S->nout, S->nout == 1 ? "" : "s");
  mbs_plot_font_to_fit(cr, b2, W - 2 * margin, 14, 11, 0.5, 0);
  mbs_plot_text(cr, margin, 68, mbs_plot_fit(cr, b2, W - 2 * margin, buf, sizeof buf), 0);
  // legend
  const double ly = 98;
  double x = margin;
  mbs_plot_font(cr, 14, 0);
  if (S->method == SOBOL) {
    const char* names[2] = {"S1 first order", "ST total"};
    for (int k = 0; k < 2; k++) {
      mbs_plot_rgb(cr, mbs_plot_palette[k]);
      cairo_rectangle(cr, x, ly - 12, 16, 16);
      cairo_fill(cr);
      cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
      x += 24 + mbs_plot_text(cr, x + 24, ly + 1, names[k], 0) + 26;
    }
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_set_line_width(cr, 1.4);
    error_bar(cr, 0, x + 6, ly - 13, ly + 5, 5);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    mbs_plot_text(cr, x + 20, ly + 1, "± confidence bound (S1_conf, ST_conf)", 0);
  } else {
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1.3);
    error_bar(cr, 1, ly - 4, x, x + 30, 4);
    mbs_plot_marker(cr, 0, x + 15, ly - 4, 6, mbs_plot_palette[6]);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    const char* point = "μ* ± mu_star_conf, one point per parameter";
    x += 40 + mbs_plot_text(cr, x + 40, ly + 1, point, 0) + 30;
    const double dash[2] = {7, 5};
    cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, x, ly - 4);
    cairo_line_to(cr, x + 34, ly - 4);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    mbs_plot_text(cr, x + 42, ly + 1, "σ = μ*", 0);
  }
  // panels
  if (S->nshown == 0) {
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    mbs_plot_font(cr, 16, 0);
    mbs_plot_text(cr, 0.5 * W, HEADER + 0.5 * PANEL_H,
         "no scalar outputs in /sensitivity/scalars (trajectory indices are not drawn)", 0.5);
  }
  for (int o = 0; o < S->nshown; o++) {
    const double px = margin + (o % cols) * PW, py = HEADER + (o / cols) * PANEL_H;
    cairo_save(cr);
    if (S->method == SOBOL) draw_sobol(cr, S, &S->out[o], px, py, PW);
    else draw_morris(cr, S, &S->out[o], px, py, PW);
    cairo_restore(cr);
  }
  // footer: the file and what is not shown
  cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
  mbs_plot_font(cr, 12, 0);
  const char* slash = strrchr(S->path, '/');
  int n = snprintf(b2, sizeof b2, "%s: /sensitivity (method %s), %d parameter%s, %d scalar "
                   "output%s", slash ? slash + 1 : S->path,
                   S->method == SOBOL ? "sobol" : "morris", S->D, S->D == 1 ? "" : "s",
                   S->nout, S->nout == 1 ? "" : "s");
  if (S->nout > S->nshown && n > 0 && n < (int)sizeof b2)
    snprintf(b2 + n, sizeof b2 - (size_t)n, "; %d more not shown (the first %d are)",
             S->nout - S->nshown, S->nshown);
  mbs_plot_text(cr, margin, H - 14, mbs_plot_fit(cr, b2, W - 2 * margin, buf, sizeof buf), 0);
}

int mbs_sensitivity_plot_png(const char* h5, const char* png, mbs_error* err) {
  mbs_results* r = mbs_plot_open("sensitivity plot", h5, png, err);
  if (!r) return err->code;
  sens S;
  memset(&S, 0, sizeof S);
  S.path = h5;
  int rc = mbs_plot_close(r, read_sensitivity(&S, r, err), err);
  if (rc) {
    sens_free(&S);
    return rc;
  }

  const int n = S.nshown;
  const int cols = n <= 1 ? 1 : n <= 4 ? 2 : 3;
  const int rows = n <= 1 ? 1 : (n + cols - 1) / cols;
  const int PW = panel_width(S.D, n);
  const int W = 80 + cols * PW, H = HEADER + rows * PANEL_H + FOOTER;
  cairo_surface_t* surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
  cairo_t* cr = cairo_create(surf);
  draw(cr, &S, W, H, cols, PW);
  sens_free(&S);
  return mbs_plot_write_png(cr, surf, png, err);
}
