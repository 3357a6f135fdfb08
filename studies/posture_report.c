// The report of a finished posture study: the samples on the study's grid as /posture in the
// result file, a picture in the manner of Fig. 12 of the OpenSim paper (Seth et al. 2011), and
// a Markdown table. See posture_report.h and io/FORMAT.md.
#define _GNU_SOURCE  // RTLD_DEFAULT
#include "posture_report.h"

#include <dlfcn.h>

#include <cairo.h>
#include <errno.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { AX_MODE, AX_KNEE, AX_DIR, AX_MAG, NAXES };

static const char* const param_name[NAXES] = {"posture/mode", "posture/knee_flexion",
                                              "posture/direction", "posture/magnitude"};
static const char* const axis_name[NAXES] = {"mode", "knee_flexion", "direction", "magnitude"};

typedef struct axis {
  int n;
  double* v;  // sorted distinct values
} axis;

typedef struct report {
  const char* path;
  long S;                       // samples
  int P;                        // parameters
  double* params;               // S x P
  uint8_t* done;                // S
  int32_t* code;                // S
  double* T;                    // S, time to fall
  double* si;                   // S, stability index
  int col[NAXES];               // column of each posture parameter in /parameters
  axis ax[NAXES];
  size_t ncell;                 // product of the axes' lengths
  double* g_si;                 // ncell
  double* g_T;                  // ncell
  int64_t* g_sample;            // ncell
  long written, good, placed;   // samples written, good ones, good ones placed on the grid
  char study[64], model[256], fall[1024], duration[64];
} report;

// ------------------------------------------------------------------------------------------
// HDF5 errors (as in io/store.c: the innermost message of the error stack, nothing printed)

typedef struct walk_info {
  char api[64];
  char inner[256];
  int n;
} walk_info;

static herr_t walk_cb(unsigned n, const H5E_error2_t* e, void* data) {
  walk_info* w = data;
  if (n == 0 && e->func_name) snprintf(w->api, sizeof w->api, "%s", e->func_name);
  if (e->desc && *e->desc) snprintf(w->inner, sizeof w->inner, "%s", e->desc);
  w->n++;
  return 0;
}

static int h5_fail(mbs_error* err, const char* path, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int h5_fail(mbs_error* err, const char* path, const char* fmt, ...) {
  char what[192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  walk_info w;
  memset(&w, 0, sizeof w);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &w);
  H5Eclear2(H5E_DEFAULT);
  const char* sys = strstr(w.inner, "error message = '");
  if (sys) {
    sys += strlen("error message = '");
    const char* end = strchr(sys, '\'');
    const int len = end ? (int)(end - sys) : (int)strlen(sys);
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot %s: %.*s (HDF5 %s)", path, what, len, sys,
                    w.api[0] ? w.api : "error");
  }
  if (w.n && w.inner[0])
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot %s: %s (HDF5 %s)", path, what, w.inner,
                    w.api[0] ? w.api : "error");
  return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot %s (HDF5 error)", path, what);
}

#define H5TRY(call, ...)                         \
  do {                                           \
    if ((call) < 0) {                            \
      rc = h5_fail(err, path, __VA_ARGS__);      \
      goto done;                                 \
    }                                            \
  } while (0)

#define NOMEM(ptr)                                                                      \
  do {                                                                                  \
    if (!(ptr)) {                                                                       \
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);           \
      goto done;                                                                        \
    }                                                                                   \
  } while (0)

static void close_id(hid_t* id, herr_t (*fn)(hid_t)) {
  if (*id >= 0) fn(*id);
  *id = -1;
}

// ------------------------------------------------------------------------------------------
// reading the study file

// a root attribute as text (fixed- or variable-length string); "" when absent or not text
static void read_attr_text(hid_t f, const char* key, char* out, size_t n) {
  out[0] = '\0';
  if (H5Aexists(f, key) <= 0) return;
  hid_t a = H5Aopen(f, key, H5P_DEFAULT);
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

// the question asked when something a posture study writes is missing
static const char* posture_hint(const report* R, char* buf, size_t n) {
  if (R->study[0] && strcmp(R->study, "posture")) {
    snprintf(buf, n, "the file's study is '%s', not a posture study", R->study);
    return buf;
  }
  return "is this a posture study?";
}

// a whole dataset of `rank` dimensions read as `memtype` (elements of `size` bytes); *buf is
// allocated. A missing dataset is the file's fault (MBS_ERR_PARSE), naming it.
static int read_dataset(const report* R, mbs_error* err, hid_t f, const char* name, int rank,
                        hid_t memtype, size_t size, hsize_t* dims, void** buf) {
  const char* path = R->path;
  char hint[160];
  int rc = 0;
  hid_t d = -1, sp = -1;
  *buf = NULL;
  htri_t exists = H5Lexists(f, name, H5P_DEFAULT);
  if (exists <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no %s: %s", path, name,
                    posture_hint(R, hint, sizeof hint));
  }
  H5TRY(d = H5Dopen2(f, name, H5P_DEFAULT), "open %s", name);
  H5TRY(sp = H5Dget_space(d), "get the dataspace of %s", name);
  const int r = H5Sget_simple_extent_ndims(sp);
  H5TRY(r, "get the rank of %s", name);
  if (r != rank) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s has %d dimensions, expected %d", path, name,
                  r, rank);
    goto done;
  }
  H5TRY(H5Sget_simple_extent_dims(sp, dims, NULL), "get the dimensions of %s", name);
  size_t total = 1;
  for (int i = 0; i < rank; i++) total *= (size_t)dims[i];
  *buf = malloc((total ? total : 1) * size);
  NOMEM(*buf);
  if (total) H5TRY(H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *buf), "read %s", name);
done:
  if (rc) {
    free(*buf);
    *buf = NULL;
  }
  close_id(&sp, H5Sclose);
  close_id(&d, H5Dclose);
  return rc;
}

// the columns of the four posture parameters in /parameter_names (fixed-length UTF-8 strings)
static int find_columns(report* R, hid_t f, mbs_error* err) {
  const char* path = R->path;
  int rc = 0;
  hid_t d = -1, ft = -1, mt = -1, sp = -1;
  char* names = NULL, hint[160];
  const char* ds = "/parameter_names";
  if (H5Lexists(f, ds, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no %s: is this a study result file?", path,
                    ds);
  }
  H5TRY(d = H5Dopen2(f, ds, H5P_DEFAULT), "open %s", ds);
  H5TRY(ft = H5Dget_type(d), "get the type of %s", ds);
  if (H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) > 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s does not hold fixed-length strings", path,
                  ds);
    goto done;
  }
  H5TRY(sp = H5Dget_space(d), "get the dataspace of %s", ds);
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(sp) != 1 || H5Sget_simple_extent_dims(sp, &n, NULL) < 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s is not a list of names", path, ds);
    goto done;
  }
  const size_t len = H5Tget_size(ft) + 1;
  H5TRY(mt = H5Tcopy(H5T_C_S1), "make a string type for %s", ds);
  H5TRY(H5Tset_size(mt, len), "make a string type for %s", ds);
  H5TRY(H5Tset_strpad(mt, H5T_STR_NULLTERM), "make a string type for %s", ds);
  H5TRY(H5Tset_cset(mt, H5T_CSET_UTF8), "make a string type for %s", ds);
  names = calloc((size_t)(n ? n : 1), len);
  NOMEM(names);
  if (n) H5TRY(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, names), "read %s", ds);
  R->P = (int)n;
  for (int k = 0; k < NAXES; k++) {
    R->col[k] = -1;
    for (hsize_t i = 0; i < n; i++)
      if (!strcmp(names + i * len, param_name[k])) R->col[k] = (int)i;
    if (R->col[k] < 0) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                    "%s: no parameter '%s' in /parameter_names: %s", path, param_name[k],
                    posture_hint(R, hint, sizeof hint));
      goto done;
    }
  }
done:
  free(names);
  close_id(&sp, H5Sclose);
  close_id(&mt, H5Tclose);
  close_id(&ft, H5Tclose);
  close_id(&d, H5Dclose);
  return rc;
}

static int read_study(report* R, hid_t f, mbs_error* err) {
  const char* path = R->path;
  read_attr_text(f, "study", R->study, sizeof R->study);
  // the model as the user named it: a built-in's name, an .osim file's name without folders
  read_attr_text(f, "model", R->model, sizeof R->model);
  const char* slash = strrchr(R->model, '/');
  if (slash) memmove(R->model, slash + 1, strlen(slash + 1) + 1);
  read_attr_text(f, "fall_criterion", R->fall, sizeof R->fall);
  read_attr_text(f, "simulated_duration", R->duration, sizeof R->duration);
  int rc = find_columns(R, f, err);
  if (rc) return rc;
  hsize_t dims[2] = {0, 0};
  rc = read_dataset(R, err, f, "/parameters", 2, H5T_NATIVE_DOUBLE, sizeof(double), dims,
                    (void**)&R->params);
  if (rc) return rc;
  if (dims[1] != (hsize_t)R->P)
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /parameters has %llu columns but "
                    "/parameter_names %d names", path, (unsigned long long)dims[1], R->P);
  R->S = (long)dims[0];
  struct {
    const char* name;
    hid_t type;
    size_t size;
    void** buf;
  } per_sample[] = {
      {"/status/done", H5T_NATIVE_UINT8, 1, (void**)&R->done},
      {"/status/code", H5T_NATIVE_INT32, 4, (void**)&R->code},
      {"/scalars/time_to_fall", H5T_NATIVE_DOUBLE, 8, (void**)&R->T},
      {"/scalars/stability_index", H5T_NATIVE_DOUBLE, 8, (void**)&R->si},
  };
  for (size_t i = 0; i < sizeof per_sample / sizeof per_sample[0]; i++) {
    hsize_t n = 0;
    rc = read_dataset(R, err, f, per_sample[i].name, 1, per_sample[i].type,
                      per_sample[i].size, &n, per_sample[i].buf);
    if (rc) return rc;
    if (n != (hsize_t)R->S)
      return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s has %llu values for %ld samples", path,
                      per_sample[i].name, (unsigned long long)n, R->S);
  }
  return MBS_OK;
}

// ------------------------------------------------------------------------------------------
// the grid

static int same_value(double a, double b) {
  return fabs(a - b) <= 1e-9 * fmax(1, fmax(fabs(a), fabs(b)));
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// index of v in the sorted axis, -1 when absent
static int axis_find(const axis* a, double v) {
  int lo = 0, hi = a->n - 1;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    if (same_value(a->v[mid], v)) return mid;
    if (a->v[mid] < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int sample_values(const report* R, long s, double v[NAXES]) {
  if (R->done[s] != 1) return 0;
  for (int k = 0; k < NAXES; k++) {
    v[k] = R->params[(size_t)s * (size_t)R->P + (size_t)R->col[k]];
    if (!isfinite(v[k])) return 0;
  }
  return 1;
}

static int build_grid(report* R, mbs_error* err) {
  const char* path = R->path;
  int rc = 0;
  double v[NAXES];
  for (int k = 0; k < NAXES; k++) {
    R->ax[k].v = malloc((size_t)(R->S ? R->S : 1) * sizeof(double));
    NOMEM(R->ax[k].v);
  }
  for (long s = 0; s < R->S; s++) {
    if (!sample_values(R, s, v)) continue;
    R->written++;
    for (int k = 0; k < NAXES; k++) R->ax[k].v[R->ax[k].n++] = v[k];
  }
  if (R->written == 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no written sample has values of the four "
                  "posture parameters (of %ld samples)", path, R->S);
    goto done;
  }
  double cells = 1;
  for (int k = 0; k < NAXES; k++) {
    axis* a = &R->ax[k];
    qsort(a->v, (size_t)a->n, sizeof(double), cmp_double);
    int m = 0;
    for (int i = 0; i < a->n; i++)
      if (m == 0 || !same_value(a->v[m - 1], a->v[i])) a->v[m++] = a->v[i];
    a->n = m;
    cells *= m;
  }
  if (cells > (double)R->S) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: the posture parameters do not form a grid: "
                  "%d modes x %d knee flexions x %d directions x %d magnitudes = %.0f cells for "
                  "%ld samples", path, R->ax[0].n, R->ax[1].n, R->ax[2].n, R->ax[3].n, cells,
                  R->S);
    goto done;
  }
  R->ncell = (size_t)cells;
  R->g_si = malloc(R->ncell * sizeof(double));
  R->g_T = malloc(R->ncell * sizeof(double));
  R->g_sample = malloc(R->ncell * sizeof(int64_t));
  if (!R->g_si || !R->g_T || !R->g_sample) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory for the grid", path);
    goto done;
  }
  for (size_t c = 0; c < R->ncell; c++) {
    R->g_si[c] = R->g_T[c] = NAN;
    R->g_sample[c] = -1;
  }
  // a cell holds the written sample with its values, preferring a successful one
  for (long s = 0; s < R->S; s++) {
    if (!sample_values(R, s, v)) continue;
    size_t c = 0;
    for (int k = 0; k < NAXES; k++) c = c * (size_t)R->ax[k].n + (size_t)axis_find(&R->ax[k], v[k]);
    const int good = R->code[s] == 0;
    R->good += good;
    const int64_t prev = R->g_sample[c];
    if (prev >= 0 && (R->code[prev] == 0 || !good)) continue;
    R->g_sample[c] = s;
    if (good) {
      R->g_si[c] = R->si[s];
      R->g_T[c] = R->T[s];
      R->placed++;
    }
  }
done:
  return rc;
}

static size_t cell(const report* R, int m, int k, int d, int g) {
  return (((size_t)m * (size_t)R->ax[AX_KNEE].n + (size_t)k) * (size_t)R->ax[AX_DIR].n +
          (size_t)d) * (size_t)R->ax[AX_MAG].n + (size_t)g;
}

// ------------------------------------------------------------------------------------------
// labels

static const char* mode_short(double v, char* buf, size_t n) {
  if (v == 0) return "free";
  if (v == 1) return "locked";
  snprintf(buf, n, "mode %g", v);
  return buf;
}

static const char* mode_long(double v, char* buf, size_t n) {
  if (v == 0) return "joints free, holding torques";
  if (v == 1) return "leg and back joints locked";
  snprintf(buf, n, "joint mode %g", v);
  return buf;
}

// 0: anterior, 180: posterior, otherwise -1
static int direction_kind(double deg) {
  double d = fmod(deg, 360);
  if (d < 0) d += 360;
  if (fabs(d) < 1e-9 || fabs(d - 360) < 1e-9) return 0;
  if (fabs(d - 180) < 1e-9) return 180;
  if (fabs(d - 90) < 1e-9) return 90;
  if (fabs(d - 270) < 1e-9) return 270;
  return -1;
}

static const char* direction_short(double deg, char* buf, size_t n) {
  const int k = direction_kind(deg);
  if (k == 0) return "anterior";
  if (k == 180) return "posterior";
  if (k == 90) return "right";
  if (k == 270) return "left";
  snprintf(buf, n, "%g°", deg);
  return buf;
}

static const char* direction_long(double deg, char* buf, size_t n) {
  const int k = direction_kind(deg);
  if (k == 0) return "anterior platform displacement";
  if (k == 180) return "posterior platform displacement";
  if (k == 90) return "platform displaced to the right";
  if (k == 270) return "platform displaced to the left";
  snprintf(buf, n, "platform displaced at %g° (0° anterior, 90° right)", deg);
  return buf;
}

// ------------------------------------------------------------------------------------------
// writing /posture

// fixed-length, NUL-padded UTF-8 string type of `width` bytes (at least 1)
static hid_t str_type(size_t width) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return t;
  if (H5Tset_size(t, width ? width : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0 ||
      H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

static int attr_string(const char* path, mbs_error* err, hid_t loc, const char* key,
                       const char* value) {
  int rc = 0;
  hid_t t = -1, sp = -1, a = -1;
  H5TRY(t = str_type(strlen(value)), "make a string type for attribute '%s'", key);
  H5TRY(sp = H5Screate(H5S_SCALAR), "make a dataspace for attribute '%s'", key);
  H5TRY(a = H5Acreate2(loc, key, t, sp, H5P_DEFAULT, H5P_DEFAULT), "create attribute '%s'", key);
  H5TRY(H5Awrite(a, t, value), "write attribute '%s'", key);
done:
  close_id(&a, H5Aclose);
  close_id(&sp, H5Sclose);
  close_id(&t, H5Tclose);
  return rc;
}

static int attr_numbers(const char* path, mbs_error* err, hid_t loc, const char* key,
                        hid_t filetype, hid_t memtype, int n, const void* values) {
  int rc = 0;
  hid_t sp = -1, a = -1;
  hsize_t dims[1] = {(hsize_t)n};
  H5TRY(sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL),
        "make a dataspace for attribute '%s'", key);
  H5TRY(a = H5Acreate2(loc, key, filetype, sp, H5P_DEFAULT, H5P_DEFAULT),
        "create attribute '%s'", key);
  H5TRY(H5Awrite(a, memtype, values), "write attribute '%s'", key);
done:
  close_id(&a, H5Aclose);
  close_id(&sp, H5Sclose);
  return rc;
}

// dataset /posture/<name> written whole; *out stays open
static int make_dataset(const char* path, mbs_error* err, hid_t g, hid_t dcpl, const char* name,
                        hid_t filetype, hid_t memtype, int rank, const hsize_t* dims,
                        const void* buf, hid_t* out) {
  int rc = 0;
  hid_t sp = -1;
  *out = -1;
  H5TRY(sp = H5Screate_simple(rank, dims, NULL), "make the dataspace of /posture/%s", name);
  H5TRY(*out = H5Dcreate2(g, name, filetype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
        "create /posture/%s", name);
  H5TRY(H5Dwrite(*out, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), "write /posture/%s", name);
done:
  close_id(&sp, H5Sclose);
  return rc;
}

static int write_group(report* R, hid_t f, mbs_error* err) {
  const char* path = R->path;
  int rc = 0;
  hid_t gcpl = -1, dcpl = -1, g = -1, st = -1;
  hid_t scale[NAXES] = {-1, -1, -1, -1}, data[3] = {-1, -1, -1};
  char* modes = NULL;
  H5TRY(gcpl = H5Pcreate(H5P_GROUP_CREATE), "make group properties");
  H5TRY(H5Pset_obj_track_times(gcpl, 0), "set group properties");
  H5TRY(dcpl = H5Pcreate(H5P_DATASET_CREATE), "make dataset properties");
  H5TRY(H5Pset_obj_track_times(dcpl, 0), "set dataset properties");
  const htri_t exists = H5Lexists(f, "/posture", H5P_DEFAULT);
  H5TRY(exists, "look for /posture");
  if (exists) H5TRY(H5Ldelete(f, "/posture", H5P_DEFAULT), "delete the old /posture");
  H5TRY(g = H5Gcreate2(f, "/posture", H5P_DEFAULT, gcpl, H5P_DEFAULT), "create /posture");
  const int64_t used = R->placed;
  rc = attr_numbers(path, err, g, "samples_used", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &used);
  if (rc) goto done;

  // the scales: mode names, then knee flexion, direction and magnitude values
  const axis* am = &R->ax[AX_MODE];
  size_t w = 1;
  char buf[32];
  for (int i = 0; i < am->n; i++) {
    const size_t l = strlen(mode_short(am->v[i], buf, sizeof buf));
    if (l > w) w = l;
  }
  modes = calloc(am->n > 0 ? (size_t)am->n : 1, w);
  NOMEM(modes);
  for (int i = 0; i < am->n; i++) {
    const char* s = mode_short(am->v[i], buf, sizeof buf);
    memcpy(modes + (size_t)i * w, s, strlen(s));
  }
  H5TRY(st = str_type(w), "make a string type for /posture/mode");
  hsize_t n1 = (hsize_t)am->n;
  rc = make_dataset(path, err, g, dcpl, "mode", st, st, 1, &n1, modes, &scale[AX_MODE]);
  if (rc) goto done;
  rc = attr_numbers(path, err, scale[AX_MODE], "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                    am->n, am->v);
  if (rc) goto done;
  static const char* const unit[NAXES] = {NULL, "deg", "deg", "m"};
  for (int k = AX_KNEE; k < NAXES; k++) {
    n1 = (hsize_t)R->ax[k].n;
    rc = make_dataset(path, err, g, dcpl, axis_name[k], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1,
                      &n1, R->ax[k].v, &scale[k]);
    if (!rc) rc = attr_string(path, err, scale[k], "units", unit[k]);
    if (rc) goto done;
  }
  for (int k = 0; k < NAXES; k++)
    H5TRY(H5DSset_scale(scale[k], axis_name[k]), "make /posture/%s a dimension scale",
          axis_name[k]);

  // the grid
  hsize_t dims[NAXES];
  for (int k = 0; k < NAXES; k++) dims[k] = (hsize_t)R->ax[k].n;
  static const char* const dname[3] = {"stability_index", "time_to_fall", "samples"};
  rc = make_dataset(path, err, g, dcpl, dname[0], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, NAXES,
                    dims, R->g_si, &data[0]);
  if (!rc) rc = attr_string(path, err, data[0], "units", "1");
  if (!rc) rc = make_dataset(path, err, g, dcpl, dname[1], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                             NAXES, dims, R->g_T, &data[1]);
  if (!rc) rc = attr_string(path, err, data[1], "units", "s");
  if (!rc) rc = make_dataset(path, err, g, dcpl, dname[2], H5T_STD_I64LE, H5T_NATIVE_INT64,
                             NAXES, dims, R->g_sample, &data[2]);
  if (rc) goto done;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < NAXES; k++) {
      H5TRY(H5DSattach_scale(data[i], scale[k], (unsigned)k),
            "attach /posture/%s to axis %d of /posture/%s", axis_name[k], k, dname[i]);
      H5TRY(H5DSset_label(data[i], (unsigned)k, axis_name[k]), "label axis %d of /posture/%s",
            k, dname[i]);
    }
done:
  for (int i = 0; i < 3; i++) close_id(&data[i], H5Dclose);
  for (int k = 0; k < NAXES; k++) close_id(&scale[k], H5Dclose);
  free(modes);
  close_id(&st, H5Tclose);
  close_id(&g, H5Gclose);
  close_id(&dcpl, H5Pclose);
  close_id(&gcpl, H5Pclose);
  return rc;
}

// ------------------------------------------------------------------------------------------
// the Markdown table

static int write_table(const report* R, FILE* out, mbs_error* err) {
  const char* slash = strrchr(R->path, '/');
  char b1[32], b2[32], cap[96] = "";
  if (R->duration[0]) snprintf(cap, sizeof cap, ", capped at %s s", R->duration);
  errno = 0;
  fprintf(out, "Posture study `%s`%s%s%s: stability index 1 − exp(−T²) (T = time to fall in s%s) "
          "by platform displacement; – = no successful sample (%ld of %ld samples succeeded)"
          "\n\n", slash ? slash + 1 : R->path, R->model[0] ? " (model " : "", R->model,
          R->model[0] ? ")" : "", cap, R->good, R->S);
  fprintf(out, "| joints | knee | direction |");
  for (int g = 0; g < R->ax[AX_MAG].n; g++) fprintf(out, " %g cm |", R->ax[AX_MAG].v[g] * 100);
  fprintf(out, "\n|:--|--:|:--|");
  for (int g = 0; g < R->ax[AX_MAG].n; g++) fprintf(out, "--:|");
  fprintf(out, "\n");
  for (int m = 0; m < R->ax[AX_MODE].n; m++)
    for (int k = 0; k < R->ax[AX_KNEE].n; k++)
      for (int d = 0; d < R->ax[AX_DIR].n; d++) {
        fprintf(out, "| %s | %g° | %s |", mode_short(R->ax[AX_MODE].v[m], b1, sizeof b1),
                R->ax[AX_KNEE].v[k], direction_short(R->ax[AX_DIR].v[d], b2, sizeof b2));
        for (int g = 0; g < R->ax[AX_MAG].n; g++) {
          const double v = R->g_si[cell(R, m, k, d, g)];
          if (isnan(v)) fprintf(out, " – |");
          else fprintf(out, " %.2f |", v);
        }
        fprintf(out, "\n");
      }
  if (fflush(out) != 0 || ferror(out))
    return MBS_FAIL(err, MBS_ERR_IO, R->path, "%s: cannot write the Markdown table: %s",
                    R->path, errno ? strerror(errno) : "write error");
  return MBS_OK;
}

// ------------------------------------------------------------------------------------------
// the picture

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
    if (len && text_width(cr, trial) > maxw) {
      if (draw) text(cr, x, y + lines * lineh, line, 0);
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
    if (draw) text(cr, x, y + lines * lineh, line, 0);
    lines++;
  }
  return lines;
}

static void marker(cairo_t* cr, int shape, double x, double y, const double rgb[3]) {
  const double r = 5;
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
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_set_line_width(cr, 1.2);
  cairo_stroke(cr);
}

// a step of 1, 2 or 5 times a power of ten near span / 5
static double nice_step(double span) {
  const double raw = span / 5;
  const double p = pow(10, floor(log10(raw)));
  const double f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

typedef struct frame {
  double x0, x1, y0, y1;   // plot area in pixels (y0 top)
  double u0, u1;           // x data range, cm
} frame;

static double px_x(const frame* F, double u) {
  return F->x0 + (u - F->u0) / (F->u1 - F->u0) * (F->x1 - F->x0);
}

static double px_y(const frame* F, double s) {
  const double lo = -0.04, hi = 1.04;  // a margin so markers at 0 and 1 stay inside
  return F->y1 - (s - lo) / (hi - lo) * (F->y1 - F->y0);
}

// panel of mode m and direction d in the box (px, py, pw, ph); ticks every ustep from u0 to u1
// (cm), the frame padded by `pad` on both sides so that markers at the ends stay inside
static void draw_panel(cairo_t* cr, const report* R, int m, int d, double px, double py,
                       double pw, double ph, double u0, double u1, double ustep, double pad) {
  char buf[64];
  frame F = {px + 78, px + pw - 24, py + 34, py + ph - 58, u0 - pad, u1 + pad};
  // direction title
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  font(cr, 15, 1);
  text(cr, F.x0, py + 20, direction_long(R->ax[AX_DIR].v[d], buf, sizeof buf), 0);
  // grid and ticks
  font(cr, 13, 0);
  cairo_set_line_width(cr, 1);
  for (int i = 0; i <= 4; i++) {
    const double s = i * 0.25, y = round(px_y(&F, s)) + 0.5;
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, F.x0, y);
    cairo_line_to(cr, F.x1, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    snprintf(buf, sizeof buf, "%g", s);
    text(cr, F.x0 - 8, y + 4.5, buf, 1);
  }
  const int nt = (int)floor((u1 - u0) / ustep + 1e-6);
  for (int i = 0; i <= nt; i++) {
    const double u = u0 + i * ustep, x = round(px_x(&F, u)) + 0.5;
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, x, F.y0);
    cairo_line_to(cr, x, F.y1);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_move_to(cr, x, F.y1);
    cairo_line_to(cr, x, F.y1 + 5);
    cairo_stroke(cr);
    snprintf(buf, sizeof buf, "%g", fabs(u) < 1e-12 ? 0.0 : u);
    text(cr, x, F.y1 + 20, buf, 0.5);
  }
  cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
  cairo_rectangle(cr, round(F.x0) + 0.5, round(F.y0) + 0.5, round(F.x1 - F.x0),
                  round(F.y1 - F.y0));
  cairo_stroke(cr);
  // axis titles
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  font(cr, 14, 0);
  text(cr, 0.5 * (F.x0 + F.x1), F.y1 + 42, "platform displacement (cm)", 0.5);
  text_vertical(cr, px + 20, 0.5 * (F.y0 + F.y1), "stability index");
  // one line per knee flexion; NaN breaks it. Lines are set apart by 4 px so that equal values
  // (e.g. no fall: 1) stay visible for every knee flexion
  int any = 0;
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  const int nk = R->ax[AX_KNEE].n;
  for (int k = 0; k < nk; k++) {
    const double* rgb = palette[k % 8];
    const double dodge = 4 * (k - 0.5 * (nk - 1));
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, 2.5);
    int pen = 0;
    for (int g = 0; g < R->ax[AX_MAG].n; g++) {
      const double v = R->g_si[cell(R, m, k, d, g)];
      if (isnan(v)) {
        pen = 0;
        continue;
      }
      const double x = px_x(&F, R->ax[AX_MAG].v[g] * 100) + dodge, y = px_y(&F, v);
      if (pen) cairo_line_to(cr, x, y);
      else cairo_move_to(cr, x, y);
      pen = 1;
    }
    cairo_stroke(cr);
    for (int g = 0; g < R->ax[AX_MAG].n; g++) {
      const double v = R->g_si[cell(R, m, k, d, g)];
      if (isnan(v)) continue;
      marker(cr, k, px_x(&F, R->ax[AX_MAG].v[g] * 100) + dodge, px_y(&F, v), rgb);
      any = 1;
    }
  }
  if (!any) {
    cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
    font(cr, 14, 0);
    text(cr, 0.5 * (F.x0 + F.x1), 0.5 * (F.y0 + F.y1), "no successful samples", 0.5);
    return;
  }
  // the stable range of each posture (the paper's Fig. 12b): the largest displacement up to
  // which the model stands for the whole simulated duration, written in the empty part of the
  // panel (below the lines when some posture stands, above them when every posture falls)
  const double D = R->duration[0] ? atof(R->duration) : NAN;
  if (!(D > 0)) return;
  int stands_any = 0;
  double range[8];
  for (int k = 0; k < nk && k < 8; k++) {
    range[k] = -1;
    for (int g = 0; g < R->ax[AX_MAG].n; g++) {
      const double T = R->g_T[cell(R, m, k, d, g)];
      if (!(T >= D * (1 - 1e-9))) break;
      range[k] = R->ax[AX_MAG].v[g];
    }
    stands_any |= range[k] >= 0;
  }
  font(cr, 13, 0);
  if (!stands_any) {
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    text(cr, F.x1 - 10, px_y(&F, 0.9), "falls at every displacement, 0 cm included", 1);
    return;
  }
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  double y = px_y(&F, 0.5);
  text(cr, F.x0 + 12, y, "stands the whole simulated time up to:", 0);
  for (int k = 0; k < nk && k < 8; k++) {
    y += 18;
    const double* rgb = palette[k % 8];
    marker(cr, k, F.x0 + 20, y - 4.5, rgb);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    if (range[k] >= 0)
      snprintf(buf, sizeof buf, "%g° knee flexion: %g cm", R->ax[AX_KNEE].v[k],
               100 * range[k]);
    else
      snprintf(buf, sizeof buf, "%g° knee flexion: falls even unperturbed",
               R->ax[AX_KNEE].v[k]);
    text(cr, F.x0 + 32, y, buf, 0);
  }
}

static int draw_png(const report* R, const char* png, mbs_error* err) {
  const int nm = R->ax[AX_MODE].n, nd = R->ax[AX_DIR].n, nk = R->ax[AX_KNEE].n;
  const int W = nm <= 2 ? 1400 : 80 + 660 * nm;
  const double margin = 40;
  char buf[1400], b2[64];
  // measure the header on a scratch surface: title, subtitle, fall criterion, legend
  cairo_surface_t* scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t* cr = cairo_create(scratch);
  char fall[1100] = "";
  if (R->fall[0]) snprintf(fall, sizeof fall, "Fall criterion: %s", R->fall);
  font(cr, 15, 0);
  const int fall_lines = fall[0] ? text_wrapped(cr, 0, 0, fall, W - 2 * margin, 20, 0) : 0;
  cairo_destroy(cr);
  cairo_surface_destroy(scratch);
  const double legend_y = 100 + 20 * fall_lines + 12;
  const double header = legend_y + 44;  // column titles' baseline
  const double rows_top = header + 10, footer = 26;
  const double min_row = 250;
  int H = 900;
  if (rows_top + nd * min_row + footer > H) H = (int)ceil(rows_top + nd * min_row + footer);

  cairo_surface_t* surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
  cr = cairo_create(surf);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);

  // title and subtitle
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  snprintf(buf, sizeof buf, "Standing balance after a platform displacement%s%s",
           R->model[0] ? " — model " : "", R->model);
  double size = 24;  // smaller for a long model name
  for (font(cr, size, 1); size > 12 && text_width(cr, buf) > W - 2 * margin; font(cr, size, 1))
    size -= 1;
  text(cr, margin, 40, buf, 0);
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  font(cr, 15, 0);
  if (R->duration[0])
    snprintf(buf, sizeof buf, "stability index = 1 − exp(−T²), T = time to fall in s (capped "
             "at the simulated duration %s s)", R->duration);
  else
    snprintf(buf, sizeof buf, "stability index = 1 − exp(−T²), T = time to fall in s (capped "
             "at the simulated duration)");
  text(cr, margin, 72, buf, 0);
  if (fall[0]) text_wrapped(cr, margin, 94, fall, W - 2 * margin, 20, 1);

  // legend: one entry per knee flexion
  double x = margin;
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  font(cr, 15, 1);
  x += text(cr, x, legend_y + 5, "knee flexion", 0) + 18;
  font(cr, 15, 0);
  for (int k = 0; k < nk; k++) {
    const double* rgb = palette[k % 8];
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, 2.5);
    cairo_move_to(cr, x, legend_y);
    cairo_line_to(cr, x + 34, legend_y);
    cairo_stroke(cr);
    marker(cr, k, x + 17, legend_y, rgb);
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    snprintf(b2, sizeof b2, "%g°", R->ax[AX_KNEE].v[k]);
    x += 42 + text(cr, x + 42, legend_y + 5, b2, 0) + 22;
  }
  cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
  font(cr, 13, 0);
  const char* gap = "(a gap in a line: no successful sample there)";
  if (x + 10 + text_width(cr, gap) < W - margin) text(cr, x + 10, legend_y + 5, gap, 0);

  // x range: from 0 (or below) to the largest displacement, in cm
  const axis* ag = &R->ax[AX_MAG];
  double lo = fmin(0, ag->v[0] * 100), hi = ag->v[ag->n - 1] * 100;
  if (hi - lo <= 0) hi = lo + 1;
  const double step = nice_step(hi - lo);
  const double u0 = floor(lo / step + 1e-9) * step, u1 = ceil(hi / step - 1e-9) * step;
  const double pad = 0.03 * (u1 - u0);

  const double colw = (W - 2 * (margin - 20)) / (double)nm;
  const double rowh = (H - rows_top - footer) / (double)nd;
  for (int m = 0; m < nm; m++) {
    const double px = margin - 20 + m * colw;
    cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
    font(cr, 18, 1);
    text(cr, px + 78 + 0.5 * (colw - 102), header,
         mode_long(R->ax[AX_MODE].v[m], b2, sizeof b2), 0.5);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1.5);
    cairo_move_to(cr, px + 78, header + 7);
    cairo_line_to(cr, px + colw - 24, header + 7);
    cairo_stroke(cr);
    for (int d = 0; d < nd; d++) {
      cairo_save(cr);
      draw_panel(cr, R, m, d, px, rows_top + d * rowh, colw, rowh, u0, u1, step, pad);
      cairo_restore(cr);
    }
  }
  // footer: provenance
  cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
  font(cr, 12, 0);
  const char* slash = strrchr(R->path, '/');
  snprintf(buf, sizeof buf, "%s: %ld samples, %ld succeeded, %ld failed, %ld not written",
           slash ? slash + 1 : R->path, R->S, R->good, R->written - R->good, R->S - R->written);
  text(cr, margin, H - 9, buf, 0);

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

// ------------------------------------------------------------------------------------------

int mbs_posture_report(const char* h5_path, const char* png_path, FILE* table, mbs_error* err) {
  if (!h5_path || !*h5_path)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture report", "posture report: no result file");
  const char* path = h5_path;
  report R;
  memset(&R, 0, sizeof R);
  R.path = path;
  int rc = 0;
  hid_t f = -1;
  struct stat sb;
  if (stat(path, &sb) != 0)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open the result file: %s", path,
                    strerror(errno));
  H5E_auto2_t afunc = NULL;
  void* adata = NULL;
  H5Eget_auto2(H5E_DEFAULT, &afunc, &adata);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  H5TRY(f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), "open the result file for writing");
  rc = read_study(&R, f, err);
  if (!rc) rc = build_grid(&R, err);
  if (!rc) rc = write_group(&R, f, err);
  if (!rc) H5TRY(H5Fflush(f, H5F_SCOPE_LOCAL), "write the file");
done:
  // as in io/store.c: close only a file that flushed (HDF5 1.10 keeps a file whose close
  // failed and crashes at exit); otherwise HDF5's shutdown closes it
  if (f >= 0) {
    if (!rc || H5Fflush(f, H5F_SCOPE_LOCAL) >= 0) {
      if (H5Fclose(f) < 0 && !rc) rc = h5_fail(err, path, "close the file");
    }
    H5Eclear2(H5E_DEFAULT);
  }
  H5Eset_auto2(H5E_DEFAULT, afunc, adata);
  if (!rc && png_path) rc = draw_png(&R, png_path, err);
  if (!rc && table) rc = write_table(&R, table, err);
  free(R.params);
  free(R.done);
  free(R.code);
  free(R.T);
  free(R.si);
  for (int k = 0; k < NAXES; k++) free(R.ax[k].v);
  free(R.g_si);
  free(R.g_T);
  free(R.g_sample);
  return rc;
}

void mbs_posture_report_cleanup(void) {
  // without both resets, valgrind and LeakSanitizer report fontconfig's configuration (parsed
  // on the first use of a font) as definitely lost; FcFini is looked up in the process (cairo
  // loaded fontconfig), so mbstudy does not link fontconfig itself
  cairo_debug_reset_static_data();
  void (*fc_fini)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "FcFini");
  if (fc_fini) fc_fini();
}
