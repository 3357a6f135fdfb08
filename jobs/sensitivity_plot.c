// The picture of a sensitivity study's indices (Sobol' bars or Morris' screening plot), read from
// the study file with the HDF5 C API and drawn with cairo. See sensitivity_plot.h.
#define _GNU_SOURCE  // RTLD_DEFAULT
#include "sensitivity_plot.h"

#include <dlfcn.h>

#include <cairo.h>
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/h5_util.h"

enum { MAXP = MBS_SENSITIVITY_PLOT_MAX_PANELS, HEADER = 120, FOOTER = 40, PANEL_H = 470 };
enum { SOBOL = 0, MORRIS = 1 };

// Okabe & Ito (2008), colour-blind safe, darkest first; yellow last (weak on white)
static const double palette[8][3] = {
    {0x00 / 255., 0x72 / 255., 0xB2 / 255.},  // blue
    {0xD5 / 255., 0x5E / 255., 0x00 / 255.},  // vermillion
    {0x00 / 255., 0x9E / 255., 0x73 / 255.},  // bluish green
    {0xCC / 255., 0x79 / 255., 0xA7 / 255.},  // reddish purple
    {0xE6 / 255., 0x9F / 255., 0x00 / 255.},  // orange
    {0x56 / 255., 0xB4 / 255., 0xE9 / 255.},  // sky blue
    {0x00 / 255., 0x00 / 255., 0x00 / 255.},  // black
    {0xF0 / 255., 0xE4 / 255., 0x42 / 255.},  // yellow
};

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

// a string attribute (fixed- or variable-length) of the object `obj` under `loc`; "" when
// absent or not text
static void read_attr_text(hid_t loc, const char* obj, const char* key, char* out, size_t n) {
  out[0] = '\0';
  if (H5Aexists_by_name(loc, obj, key, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return;
  }
  hid_t a = H5Aopen_by_name(loc, obj, key, H5P_DEFAULT, H5P_DEFAULT);
  hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
  hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
  if (ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_STRING &&
      H5Sget_simple_extent_npoints(sp) == 1) {
    hid_t mt = H5Tcopy(ft);
    if (H5Tis_variable_str(ft) > 0) {
      char* s = NULL;
      if (mt >= 0 && H5Aread(a, mt, &s) >= 0 && s) snprintf(out, n, "%s", s);
      if (s) H5free_memory(s);
    } else {
      const size_t len = H5Tget_size(ft);
      char* buf = calloc(len + 1, 1);
      if (buf && mt >= 0 && H5Tset_size(mt, len + 1) >= 0 &&
          H5Tset_strpad(mt, H5T_STR_NULLTERM) >= 0 && H5Aread(a, mt, buf) >= 0)
        snprintf(out, n, "%s", buf);
      free(buf);
    }
    if (mt >= 0) H5Tclose(mt);
  }
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  H5Eclear2(H5E_DEFAULT);
}

// the last two segments of a path-like name ("/bodyset/torso/mass": "torso/mass"), malloc'ed
static char* short_name(const char* s) {
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

// the one-dimensional string dataset `name` (fixed- or variable-length): *out[n] malloc'ed
static int read_strings(const char* path, mbs_error* err, hid_t f, const char* name,
                        char*** out, int* count) {
  int rc = 0;
  hid_t d = -1, ft = -1, mt = -1, sp = -1;
  char* buf = NULL;
  char** vl = NULL;
  *out = NULL;
  *count = 0;
  if (H5Lexists(f, name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no %s: is this a study result file?", path,
                    name);
  }
  H5TRY(d = H5Dopen2(f, name, H5P_DEFAULT), "open %s", name);
  H5TRY(ft = H5Dget_type(d), "get the type of %s", name);
  H5TRY(sp = H5Dget_space(d), "get the dataspace of %s", name);
  hsize_t n = 0;
  if (H5Tget_class(ft) != H5T_STRING || H5Sget_simple_extent_ndims(sp) != 1 ||
      H5Sget_simple_extent_dims(sp, &n, NULL) < 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s is not a list of names", path, name);
    goto done;
  }
  *out = calloc(n ? n : 1, sizeof **out);
  NOMEM(*out);
  *count = (int)n;
  H5TRY(mt = H5Tcopy(H5T_C_S1), "make a string type for %s", name);
  H5TRY(H5Tset_cset(mt, H5Tget_cset(ft)), "make a string type for %s", name);
  if (H5Tis_variable_str(ft) > 0) {
    H5TRY(H5Tset_size(mt, H5T_VARIABLE), "make a string type for %s", name);
    vl = calloc(n ? n : 1, sizeof *vl);
    NOMEM(vl);
    if (n) H5TRY(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, vl), "read %s", name);
    for (hsize_t i = 0; i < n; i++) NOMEM((*out)[i] = short_name(vl[i] ? vl[i] : ""));
  } else {
    const size_t len = H5Tget_size(ft) + 1;
    H5TRY(H5Tset_size(mt, len), "make a string type for %s", name);
    H5TRY(H5Tset_strpad(mt, H5T_STR_NULLTERM), "make a string type for %s", name);
    buf = calloc(n ? n : 1, len);
    NOMEM(buf);
    if (n) H5TRY(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), "read %s", name);
    for (hsize_t i = 0; i < n; i++) NOMEM((*out)[i] = short_name(buf + i * len));
  }
done:
  if (vl) {
    if (sp >= 0 && mt >= 0) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, vl);
    free(vl);
  }
  free(buf);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&mt, H5Tclose);
  mbs_h5_close(&ft, H5Tclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
}

// the dataset `name` as D doubles into *out (malloc'ed)
static int read_vector(const char* path, mbs_error* err, hid_t f, const char* name, int D,
                       double** out) {
  int rc = 0;
  hid_t d = -1, sp = -1;
  *out = NULL;
  if (H5Lexists(f, name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no %s", path, name);
  }
  H5TRY(d = H5Dopen2(f, name, H5P_DEFAULT), "open %s", name);
  H5TRY(sp = H5Dget_space(d), "get the dataspace of %s", name);
  const hssize_t n = H5Sget_simple_extent_npoints(sp);
  if (n != D) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s has %lld values, expected %d (one per "
                  "parameter)", path, name, (long long)n, D);
    goto done;
  }
  *out = malloc((size_t)(D ? D : 1) * sizeof **out);
  NOMEM(*out);
  if (D) H5TRY(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out), "read %s",
               name);
done:
  if (rc) {
    free(*out);
    *out = NULL;
  }
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
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

// the outputs in natural order of their names (r2 before r10)
static int list_outputs(sens* S, hid_t f, mbs_error* err) {
  const char* path = S->path;
  const char* grp = "/sensitivity/scalars";
  int rc = 0;
  hid_t g = -1;
  name_list L = {NULL, 0, 0, 0};
  if (H5Lexists(f, grp, H5P_DEFAULT) <= 0) {  // no scalar outputs: an empty picture
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  H5TRY(g = H5Gopen2(f, grp, H5P_DEFAULT), "open %s", grp);
  if (walk_outputs(g, "", fields[S->method][0], &L, 0) < 0) {
    if (L.nomem) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    else rc = mbs_h5_fail(err, path, "list the outputs in %s", grp);
    goto done;
  }
  if (L.n > 1) qsort(L.v, (size_t)L.n, sizeof *L.v, natural_order);
done:
  mbs_h5_close(&g, H5Gclose);
  S->onames = L.v;
  S->nout = L.n;
  return rc;
}

static int read_sensitivity(sens* S, hid_t f, mbs_error* err) {
  const char* path = S->path;
  if (H5Lexists(f, "/sensitivity", H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no /sensitivity: is this a sensitivity study?",
                    path);
  }
  char method[64];
  read_attr_text(f, "/sensitivity", "method", method, sizeof method);
  if (!strcmp(method, "sobol")) S->method = SOBOL;
  else if (!strcmp(method, "morris")) S->method = MORRIS;
  else if (!method[0])
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /sensitivity has no attribute 'method' "
                    "(sobol or morris)", path);
  else
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /sensitivity has method '%s': expected "
                    "sobol or morris", path, method);
  read_attr_text(f, "/", "model", S->model, sizeof S->model);
  const char* slash = strrchr(S->model, '/');
  if (slash) memmove(S->model, slash + 1, strlen(slash + 1) + 1);
  int rc = read_strings(path, err, f, "/sensitivity/parameter_names", &S->pnames, &S->D);
  if (rc) return rc;
  if (S->D < 1)
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /sensitivity/parameter_names is empty", path);
  rc = list_outputs(S, f, err);
  if (rc) return rc;
  S->nshown = S->nout < MAXP ? S->nout : MAXP;
  char name[1200];
  for (int o = 0; o < S->nshown; o++) {
    S->out[o].name = S->onames[o];
    snprintf(name, sizeof name, "/sensitivity/scalars/%s", S->onames[o]);
    read_attr_text(f, name, "analysis_failed", S->out[o].failed, sizeof S->out[o].failed);
    for (int k = 0; k < 4; k++) {
      snprintf(name, sizeof name, "/sensitivity/scalars/%s/%s", S->onames[o],
               fields[S->method][k]);
      if (k == 3 && S->method == MORRIS && H5Lexists(f, name, H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);  // mu is not drawn: not required
        continue;
      }
      rc = read_vector(path, err, f, name, S->D, &S->out[o].v[k]);
      if (rc) return rc;
    }
  }
  return 0;
}

static void sens_free(sens* S) {
  for (int i = 0; i < S->D && S->pnames; i++) free(S->pnames[i]);
  free(S->pnames);
  for (int o = 0; o < S->nshown; o++)
    for (int k = 0; k < 4; k++) free(S->out[o].v[k]);
  for (int o = 0; o < S->nout; o++) free(S->onames[o]);
  free(S->onames);
}

// ------------------------------------------------------------------------------------------
// drawing helpers

static void font(cairo_t* cr, double size, int bold) {
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

static double text_width(cairo_t* cr, const char* s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  return e.x_advance;
}

// s with its baseline at y; halign 0 left, 0.5 centre, 1 right of x; returns the width
static double text(cairo_t* cr, double x, double y, const char* s, double halign) {
  const double w = text_width(cr, s);
  cairo_move_to(cr, x - halign * w, y);
  cairo_show_text(cr, s);
  return w;
}

// s rotated a quarter turn counter-clockwise, centred on (x, y)
static void text_vertical(cairo_t* cr, double x, double y, const char* s) {
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, -M_PI / 2);
  text(cr, 0, 0, s, 0.5);
  cairo_restore(cr);
}

// s cut (at a UTF-8 character boundary, with "…") to at most maxw wide, into buf
static const char* fit(cairo_t* cr, const char* s, double maxw, char* buf, size_t n) {
  snprintf(buf, n, "%s", s);
  if (text_width(cr, buf) <= maxw) return buf;
  size_t len = strlen(buf);
  while (len > 0) {
    do len--;
    while (len > 0 && ((unsigned char)buf[len] & 0xC0) == 0x80);
    char t[512];
    snprintf(t, sizeof t, "%.*s…", (int)len, buf);
    if (text_width(cr, t) <= maxw || len == 0) {
      snprintf(buf, n, "%s", t);
      break;
    }
  }
  return buf;
}

// a step of 1, 2 or 5 times a power of ten near span / 5
static double nice_step(double span) {
  const double raw = span / 5;
  const double p = pow(10, floor(log10(raw)));
  const double f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

// a tick value as text, without "-0" and without rounding noise
static const char* tick_text(double v, double step, char* buf, size_t n) {
  if (fabs(v) < 1e-9 * step) v = 0;
  snprintf(buf, n, "%.6g", v);
  return buf;
}

// a data-to-pixel frame: data (u0..u1, v0..v1) onto pixels (x0..x1, y1..y0)
typedef struct frame {
  double x0, x1, y0, y1;
  double u0, u1, v0, v1;
} frame;

static double fx(const frame* F, double u) {
  return F->x0 + (u - F->u0) / (F->u1 - F->u0) * (F->x1 - F->x0);
}
static double fy(const frame* F, double v) {
  return F->y1 - (v - F->v0) / (F->v1 - F->v0) * (F->y1 - F->y0);
}

static void set_rgb(cairo_t* cr, const double* rgb) {
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
}

// horizontal grid lines and their labels at the multiples of `step` from v0 to v1
static void y_grid(cairo_t* cr, const frame* F, double step) {
  char buf[64];
  font(cr, 12, 0);
  cairo_set_line_width(cr, 1);
  const double first = ceil(F->v0 / step - 1e-6) * step;
  const int nt = (int)floor((F->v1 - first) / step + 1e-6);
  for (int i = 0; i <= nt; i++) {
    const double v = first + i * step, y = round(fy(F, v)) + 0.5;
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, F->x0, y);
    cairo_line_to(cr, F->x1, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    text(cr, F->x0 - 7, y + 4, tick_text(v, step, buf, sizeof buf), 1);
  }
}

static void x_grid(cairo_t* cr, const frame* F, double step) {
  char buf[64];
  font(cr, 12, 0);
  cairo_set_line_width(cr, 1);
  const int nt = (int)floor((F->u1 - F->u0) / step + 1e-6);
  for (int i = 0; i <= nt; i++) {
    const double u = F->u0 + i * step, x = round(fx(F, u)) + 0.5;
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, x, F->y0);
    cairo_line_to(cr, x, F->y1);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_move_to(cr, x, F->y1);
    cairo_line_to(cr, x, F->y1 + 4);
    cairo_stroke(cr);
    text(cr, x, F->y1 + 18, tick_text(u, step, buf, sizeof buf), 0.5);
  }
}

static void frame_box(cairo_t* cr, const frame* F) {
  cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, round(F->x0) + 0.5, round(F->y0) + 0.5, round(F->x1 - F->x0),
                  round(F->y1 - F->y0));
  cairo_stroke(cr);
}

static void clip_to(cairo_t* cr, const frame* F) {
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
static void no_values(cairo_t* cr, const frame* F, const char* what, const char* why) {
  char buf[400];
  cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
  font(cr, 14, 0);
  const double xc = 0.5 * (F->x0 + F->x1), yc = 0.5 * (F->y0 + F->y1);
  text(cr, xc, yc, what, 0.5);
  if (!why || !*why) return;
  font(cr, 12, 0);
  text(cr, xc, yc + 22, fit(cr, why, F->x1 - F->x0 - 20, buf, sizeof buf), 0.5);
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
  const double step = nice_step(hi - lo), half = 0.5 * step;
  lo = floor(lo / half + 1e-9) * half;
  hi = ceil(hi / half - 1e-9) * half;
  frame F = {px + 74, px + pw - 22, py + 44, py + PANEL_H - 112, 0, D, lo, hi};

  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  font(cr, 16, 1);
  snprintf(b2, sizeof b2, "Sobol' indices of %s", o->name);
  text(cr, F.x0, py + 26, fit(cr, b2, pw - 90, buf, sizeof buf), 0);
  y_grid(cr, &F, step);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  font(cr, 13, 0);
  text_vertical(cr, px + 22, 0.5 * (F.y0 + F.y1), "Sobol' index");

  // bars, clipped to the frame
  const double gw = (F.x1 - F.x0) / D;
  const double bw = fmin(0.36 * gw, 44);
  const double y0 = fy(&F, 0);
  cairo_save(cr);
  clip_to(cr, &F);
  for (int i = 0; i < D; i++) {
    const double xc = F.x0 + (i + 0.5) * gw;
    const double* v[2] = {S1, ST};
    const double* c[2] = {S1c, STc};
    for (int k = 0; k < 2; k++) {
      const double x = k ? xc + 1 : xc - 1 - bw;
      if (!isfinite(v[k][i])) continue;
      const double y = fy(&F, v[k][i]);
      set_rgb(cr, palette[k]);
      cairo_rectangle(cr, round(x), fmin(y, y0), round(x + bw) - round(x), fabs(y - y0));
      cairo_fill(cr);
      if (isfinite(c[k][i]) && c[k][i] > 0) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        cairo_set_line_width(cr, 1.4);
        const double ya = fy(&F, v[k][i] - c[k][i]), yb = fy(&F, v[k][i] + c[k][i]);
        error_bar(cr, 0, x + 0.5 * bw, ya, yb, fmin(0.25 * bw, 6));
        if (yb < F.y0) arrowhead(cr, x + 0.5 * bw, F.y0, 0, -1);
        if (ya > F.y1) arrowhead(cr, x + 0.5 * bw, F.y1, 0, 1);
      }
    }
    for (int k = 0; k < 2; k++) {  // "n/a" where an index is missing
      if (isfinite(v[k][i]) || !any) continue;
      cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
      font(cr, 11, 0);
      text(cr, k ? xc + 1 + 0.5 * bw : xc - 1 - 0.5 * bw, y0 - 5, "n/a", 0.5);
    }
  }
  // the zero line
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, F.x0, round(y0) + 0.5);
  cairo_line_to(cr, F.x1, round(y0) + 0.5);
  cairo_stroke(cr);
  cairo_restore(cr);
  frame_box(cr, &F);
  if (!any) no_values(cr, &F, "no finite indices", o->failed);
  // parameter names under the groups, at 45 degrees, ending at the group's tick
  font(cr, 12, 0);
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
    text(cr, 0, 0, fit(cr, S->pnames[i], 138, buf, sizeof buf), 1);
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

static void marker(cairo_t* cr, int shape, double x, double y, const double rgb[3]) {
  const double r = 6;
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
  set_rgb(cr, rgb);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_set_line_width(cr, 1.2);
  cairo_stroke(cr);
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
  const double xs = nice_step(xmax), ys = nice_step(ymax);
  frame F = {px + 84, px + pw - 26, py + 44, py + PANEL_H - 70, 0, ceil(xmax / xs - 1e-9) * xs,
             0, ceil(ymax / ys - 1e-9) * ys};

  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  font(cr, 16, 1);
  snprintf(b2, sizeof b2, "Morris elementary effects of %s", o->name);
  text(cr, F.x0, py + 26, fit(cr, b2, pw - 100, buf, sizeof buf), 0);
  y_grid(cr, &F, ys);
  x_grid(cr, &F, xs);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  font(cr, 13, 0);
  text(cr, 0.5 * (F.x0 + F.x1), F.y1 + 42, "μ* (mean of |elementary effects|)", 0.5);
  text_vertical(cr, px + 22, 0.5 * (F.y0 + F.y1), "σ (standard deviation of the effects)");

  cairo_save(cr);
  clip_to(cr, &F);
  // sigma = mu_star, dashed, labelled where it leaves the frame
  const double e = fmin(F.u1, F.v1);
  const double dash[2] = {7, 5};
  cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
  cairo_set_line_width(cr, 1.3);
  cairo_set_dash(cr, dash, 2, 0);
  cairo_move_to(cr, fx(&F, 0), fy(&F, 0));
  cairo_line_to(cr, fx(&F, e), fy(&F, e));
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  font(cr, 12, 0);
  if (F.u1 <= F.v1) text(cr, fx(&F, e) - 6, fy(&F, e) + 16, "σ = μ*", 1);
  else text(cr, fx(&F, e) + 8, fy(&F, e) + 12, "σ = μ*", 0);
  // error bars, then markers
  cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
  cairo_set_line_width(cr, 1.3);
  for (int i = 0; i < D; i++) {
    if (!isfinite(ms[i]) || !isfinite(sg[i]) || !isfinite(msc[i]) || !(msc[i] > 0)) continue;
    error_bar(cr, 1, fy(&F, sg[i]), fx(&F, ms[i] - msc[i]), fx(&F, ms[i] + msc[i]), 4);
    if (ms[i] - msc[i] < F.u0) arrowhead(cr, F.x0, fy(&F, sg[i]), -1, 0);
  }
  cairo_restore(cr);  // markers at the frame's edges are drawn whole
  enum { NPLACED = 3 * 64 };
  box placed[NPLACED];  // markers, error bars and labels placed so far
  int np = 0;
  for (int i = 0; i < D; i++) {
    if (!isfinite(ms[i]) || !isfinite(sg[i])) continue;
    const double x = fx(&F, ms[i]), y = fy(&F, sg[i]);
    marker(cr, i / 8, x, y, palette[i % 8]);
    if (np < 64) placed[np++] = (box){x - 7, y - 7, x + 7, y + 7};
    if (np < 64 && isfinite(msc[i]) && msc[i] > 0)
      placed[np++] = (box){fx(&F, ms[i] - msc[i]) - 1, y - 5, fx(&F, ms[i] + msc[i]) + 1, y + 5};
  }
  // labels: above right of the point, else right, below right, the same on the left, centred
  // above or below: the first place inside the frame free of markers, error bars and labels
  // drawn before; above right when none is free
  font(cr, 12, 0);
  for (int i = 0; i < D; i++) {
    if (!isfinite(ms[i]) || !isfinite(sg[i])) continue;
    const double x = fx(&F, ms[i]), y = fy(&F, sg[i]);
    const char* s = fit(cr, S->pnames[i], 230, buf, sizeof buf);
    const double w = text_width(cr, s);
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
  frame_box(cr, &F);
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
  double size = 24;  // smaller for a long model name
  for (font(cr, size, 1); size > 16 && text_width(cr, b2) > W - 2 * margin; font(cr, size, 1))
    size -= 1;
  text(cr, margin, 40, fit(cr, b2, W - 2 * margin, buf, sizeof buf), 0);
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  if (S->method == SOBOL)
    snprintf(b2, sizeof b2, "%d parameter%s, %d scalar output%s: the share of the output's "
             "variance due to each parameter alone (S1) and with its interactions (ST)", S->D,
             S->D == 1 ? "" : "s", S->nout, S->nout == 1 ? "" : "s");
  else
    snprintf(b2, sizeof b2, "%d parameter%s, %d scalar output%s: right = influential, above "
             "the dashed line σ = μ* = non-linear or interacting", S->D, S->D == 1 ? "" : "s",
             S->nout, S->nout == 1 ? "" : "s");
  for (size = 14, font(cr, size, 0); size > 11 && text_width(cr, b2) > W - 2 * margin;
       font(cr, size, 0))
    size -= 0.5;
  text(cr, margin, 68, fit(cr, b2, W - 2 * margin, buf, sizeof buf), 0);
  // legend
  const double ly = 98;
  double x = margin;
  font(cr, 14, 0);
  if (S->method == SOBOL) {
    const char* names[2] = {"S1 first order", "ST total"};
    for (int k = 0; k < 2; k++) {
      set_rgb(cr, palette[k]);
      cairo_rectangle(cr, x, ly - 12, 16, 16);
      cairo_fill(cr);
      cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
      x += 24 + text(cr, x + 24, ly + 1, names[k], 0) + 26;
    }
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_set_line_width(cr, 1.4);
    error_bar(cr, 0, x + 6, ly - 13, ly + 5, 5);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    text(cr, x + 20, ly + 1, "± confidence bound (S1_conf, ST_conf)", 0);
  } else {
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1.3);
    error_bar(cr, 1, ly - 4, x, x + 30, 4);
    marker(cr, 0, x + 15, ly - 4, palette[6]);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    x += 40 + text(cr, x + 40, ly + 1, "μ* ± mu_star_conf, one point per parameter", 0) + 30;
    const double dash[2] = {7, 5};
    cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, x, ly - 4);
    cairo_line_to(cr, x + 34, ly - 4);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    text(cr, x + 42, ly + 1, "σ = μ*", 0);
  }
  // panels
  if (S->nshown == 0) {
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    font(cr, 16, 0);
    text(cr, 0.5 * W, HEADER + 0.5 * PANEL_H,
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
  font(cr, 12, 0);
  const char* slash = strrchr(S->path, '/');
  int n = snprintf(b2, sizeof b2, "%s: /sensitivity (method %s), %d parameter%s, %d scalar "
                   "output%s", slash ? slash + 1 : S->path,
                   S->method == SOBOL ? "sobol" : "morris", S->D, S->D == 1 ? "" : "s",
                   S->nout, S->nout == 1 ? "" : "s");
  if (S->nout > S->nshown && n > 0 && n < (int)sizeof b2)
    snprintf(b2 + n, sizeof b2 - (size_t)n, "; %d more not shown (the first %d are)",
             S->nout - S->nshown, S->nshown);
  text(cr, margin, H - 14, fit(cr, b2, W - 2 * margin, buf, sizeof buf), 0);
}

int mbs_sensitivity_plot_png(const char* h5, const char* png, mbs_error* err) {
  if (!h5 || !*h5 || !png || !*png)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "sensitivity plot",
                    "sensitivity plot: no result file or no picture file");
  const char* path = h5;
  struct stat sb;
  if (stat(path, &sb) != 0)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open the result file: %s", path,
                    strerror(errno));
  int rc = 0;
  hid_t f = -1;
  sens S;
  memset(&S, 0, sizeof S);
  S.path = path;
  const mbs_h5_quiet quiet = mbs_h5_quiet_begin();
  H5TRY(f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), "open the result file");
  rc = read_sensitivity(&S, f, err);
done:
  if (f >= 0) H5Fclose(f);
  H5Eclear2(H5E_DEFAULT);
  mbs_h5_quiet_end(quiet);
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

void mbs_sensitivity_plot_cleanup(void) {
  // as mbs_posture_plot_cleanup: cairo's static data, then fontconfig's configuration (FcFini
  // looked up in the process, where cairo loaded it)
  cairo_debug_reset_static_data();
  void (*fc_fini)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "FcFini");
  if (fc_fini) fc_fini();
}
