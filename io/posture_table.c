// The table of a finished posture study: the samples of the result file on the study's grid,
// written back into the file as /posture and printed as Markdown. See
// include/mbs/posture_table.h and io/FORMAT.md ("Posture studies").
#include "mbs/posture_table.h"

#include <errno.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "h5_util.h"

// the axes by short names
enum {
  AX_MODE = MBS_POSTURE_MODE,
  AX_KNEE = MBS_POSTURE_KNEE,
  AX_DIR = MBS_POSTURE_DIRECTION,
  AX_MAG = MBS_POSTURE_MAGNITUDE,
  NAXES = MBS_POSTURE_NAXES
};

static const char* const param_name[NAXES] = {"posture/mode", "posture/knee_flexion",
                                              "posture/direction", "posture/magnitude"};
static const char* const axis_name[NAXES] = {"mode", "knee_flexion", "direction", "magnitude"};

// the table being made and what is read for it from the file (released once the grid is built)
typedef struct reader {
  mbs_posture_table* t;
  int P;                        // parameters
  double* params;               // nsamples x P
  uint8_t* done;                // nsamples
  int32_t* code;                // nsamples
  double* T;                    // nsamples, time to fall
  double* si;                   // nsamples, stability index
  int col[NAXES];               // column of each posture parameter in /parameters
} reader;

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
static const char* posture_hint(const reader* R, char* buf, size_t n) {
  const mbs_posture_table* t = R->t;
  if (t->study[0] && strcmp(t->study, "posture")) {
    snprintf(buf, n, "the file's study is '%s', not a posture study", t->study);
    return buf;
  }
  return "is this a posture study?";
}

// a whole dataset of `rank` dimensions read as `memtype` (elements of `size` bytes); *buf is
// allocated. A missing dataset is the file's fault (MBS_ERR_PARSE), naming it.
static int read_dataset(const reader* R, mbs_error* err, hid_t f, const char* name, int rank,
                        hid_t memtype, size_t size, hsize_t* dims, void** buf) {
  const char* path = R->t->path;
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
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
}

// the columns of the four posture parameters in /parameter_names (fixed-length UTF-8 strings)
static int find_columns(reader* R, hid_t f, mbs_error* err) {
  const char* path = R->t->path;
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
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&mt, H5Tclose);
  mbs_h5_close(&ft, H5Tclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
}

static int read_study(reader* R, hid_t f, mbs_error* err) {
  mbs_posture_table* t = R->t;
  const char* path = t->path;
  read_attr_text(f, "study", t->study, sizeof t->study);
  // the model as the user named it: a built-in's name, an .osim file's name without folders
  read_attr_text(f, "model", t->model, sizeof t->model);
  const char* slash = strrchr(t->model, '/');
  if (slash) memmove(t->model, slash + 1, strlen(slash + 1) + 1);
  read_attr_text(f, "fall_criterion", t->fall, sizeof t->fall);
  read_attr_text(f, "simulated_duration", t->duration, sizeof t->duration);
  int rc = find_columns(R, f, err);
  if (rc) return rc;
  hsize_t dims[2] = {0, 0};
  rc = read_dataset(R, err, f, "/parameters", 2, H5T_NATIVE_DOUBLE, sizeof(double), dims,
                    (void**)&R->params);
  if (rc) return rc;
  if (dims[1] != (hsize_t)R->P)
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: /parameters has %llu columns but "
                    "/parameter_names %d names", path, (unsigned long long)dims[1], R->P);
  t->nsamples = (long)dims[0];
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
    if (n != (hsize_t)t->nsamples)
      return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s has %llu values for %ld samples", path,
                      per_sample[i].name, (unsigned long long)n, t->nsamples);
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
static int axis_find(const mbs_posture_axis* a, double v) {
  int lo = 0, hi = a->n - 1;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    if (same_value(a->v[mid], v)) return mid;
    if (a->v[mid] < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int sample_values(const reader* R, long s, double v[NAXES]) {
  if (R->done[s] != 1) return 0;
  for (int k = 0; k < NAXES; k++) {
    v[k] = R->params[(size_t)s * (size_t)R->P + (size_t)R->col[k]];
    if (!isfinite(v[k])) return 0;
  }
  return 1;
}

static int build_grid(reader* R, mbs_error* err) {
  mbs_posture_table* t = R->t;
  const char* path = t->path;
  int rc = 0;
  double v[NAXES];
  for (int k = 0; k < NAXES; k++) {
    t->axis[k].v = malloc((size_t)(t->nsamples ? t->nsamples : 1) * sizeof(double));
    NOMEM(t->axis[k].v);
  }
  for (long s = 0; s < t->nsamples; s++) {
    if (!sample_values(R, s, v)) continue;
    t->written++;
    for (int k = 0; k < NAXES; k++) t->axis[k].v[t->axis[k].n++] = v[k];
  }
  if (t->written == 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no written sample has values of the four "
                  "posture parameters (of %ld samples)", path, t->nsamples);
    goto done;
  }
  double cells = 1;
  for (int k = 0; k < NAXES; k++) {
    mbs_posture_axis* a = &t->axis[k];
    qsort(a->v, (size_t)a->n, sizeof(double), cmp_double);
    int m = 0;
    for (int i = 0; i < a->n; i++)
      if (m == 0 || !same_value(a->v[m - 1], a->v[i])) a->v[m++] = a->v[i];
    a->n = m;
    cells *= m;
  }
  if (cells > (double)t->nsamples) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: the posture parameters do not form a grid: "
                  "%d modes x %d knee flexions x %d directions x %d magnitudes = %.0f cells for "
                  "%ld samples", path, t->axis[0].n, t->axis[1].n, t->axis[2].n, t->axis[3].n,
                  cells, t->nsamples);
    goto done;
  }
  t->ncell = (size_t)cells;
  t->stability_index = malloc(t->ncell * sizeof(double));
  t->time_to_fall = malloc(t->ncell * sizeof(double));
  t->sample = malloc(t->ncell * sizeof(int64_t));
  if (!t->stability_index || !t->time_to_fall || !t->sample) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory for the grid", path);
    goto done;
  }
  for (size_t c = 0; c < t->ncell; c++) {
    t->stability_index[c] = t->time_to_fall[c] = NAN;
    t->sample[c] = -1;
  }
  // a cell holds the written sample with its values, preferring a successful one
  for (long s = 0; s < t->nsamples; s++) {
    if (!sample_values(R, s, v)) continue;
    size_t c = 0;
    for (int k = 0; k < NAXES; k++)
      c = c * (size_t)t->axis[k].n + (size_t)axis_find(&t->axis[k], v[k]);
    const int good = R->code[s] == 0;
    t->good += good;
    const int64_t prev = t->sample[c];
    if (prev >= 0 && (R->code[prev] == 0 || !good)) continue;
    t->sample[c] = s;
    if (good) {
      t->stability_index[c] = R->si[s];
      t->time_to_fall[c] = R->T[s];
      t->placed++;
    }
  }
done:
  return rc;
}

// ------------------------------------------------------------------------------------------
// cells and labels

size_t mbs_posture_table_cell(const mbs_posture_table* t, int m, int k, int d, int g) {
  return (((size_t)m * (size_t)t->axis[AX_KNEE].n + (size_t)k) * (size_t)t->axis[AX_DIR].n +
          (size_t)d) * (size_t)t->axis[AX_MAG].n + (size_t)g;
}

const char* mbs_posture_mode_name(double v, int long_form, char* buf, size_t n) {
  if (v == 0) return long_form ? "joints free, holding torques" : "free";
  if (v == 1) return long_form ? "leg and back joints locked" : "locked";
  if (v == 2) return long_form ? "joints free, holding torques and delayed PD feedback"
                               : "feedback";
  if (v == 3) return long_form ? "joints free, muscles driven by delayed feedback" : "muscles";
  if (long_form) snprintf(buf, n, "joint mode %g", v);
  else snprintf(buf, n, "mode %g", v);
  return buf;
}

// 0: anterior, 180: posterior, 90: right, 270: left, otherwise -1
static int direction_kind(double deg) {
  double d = fmod(deg, 360);
  if (d < 0) d += 360;
  if (fabs(d) < 1e-9 || fabs(d - 360) < 1e-9) return 0;
  if (fabs(d - 180) < 1e-9) return 180;
  if (fabs(d - 90) < 1e-9) return 90;
  if (fabs(d - 270) < 1e-9) return 270;
  return -1;
}

const char* mbs_posture_direction_name(double deg, int long_form, char* buf, size_t n) {
  const int k = direction_kind(deg);
  if (k == 0) return long_form ? "anterior platform displacement" : "anterior";
  if (k == 180) return long_form ? "posterior platform displacement" : "posterior";
  if (k == 90) return long_form ? "platform displaced to the right" : "right";
  if (k == 270) return long_form ? "platform displaced to the left" : "left";
  if (long_form) snprintf(buf, n, "platform displaced at %g° (0° anterior, 90° right)", deg);
  else snprintf(buf, n, "%g°", deg);
  return buf;
}

// ------------------------------------------------------------------------------------------
// writing /posture

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
  mbs_h5_close(&a, H5Aclose);
  mbs_h5_close(&sp, H5Sclose);
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
  mbs_h5_close(&sp, H5Sclose);
  return rc;
}

static int write_posture_group(const mbs_posture_table* t, hid_t f, mbs_error* err) {
  const char* path = t->path;
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
  const int64_t used = t->placed;
  rc = attr_numbers(path, err, g, "samples_used", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &used);
  if (rc) goto done;

  // the scales: mode names, then knee flexion, direction and magnitude values
  const mbs_posture_axis* am = &t->axis[AX_MODE];
  size_t w = 1;
  char buf[32];
  for (int i = 0; i < am->n; i++) {
    const size_t l = strlen(mbs_posture_mode_name(am->v[i], 0, buf, sizeof buf));
    if (l > w) w = l;
  }
  modes = calloc(am->n > 0 ? (size_t)am->n : 1, w);
  NOMEM(modes);
  for (int i = 0; i < am->n; i++) {
    const char* s = mbs_posture_mode_name(am->v[i], 0, buf, sizeof buf);
    memcpy(modes + (size_t)i * w, s, strlen(s));
  }
  H5TRY(st = mbs_h5_str_type(w), "make a string type for /posture/mode");
  hsize_t n1 = (hsize_t)am->n;
  rc = make_dataset(path, err, g, dcpl, "mode", st, st, 1, &n1, modes, &scale[AX_MODE]);
  if (rc) goto done;
  rc = attr_numbers(path, err, scale[AX_MODE], "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                    am->n, am->v);
  if (rc) goto done;
  static const char* const unit[NAXES] = {NULL, "deg", "deg", "m"};
  for (int k = AX_KNEE; k < NAXES; k++) {
    n1 = (hsize_t)t->axis[k].n;
    rc = make_dataset(path, err, g, dcpl, axis_name[k], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1,
                      &n1, t->axis[k].v, &scale[k]);
    if (!rc) rc = mbs_h5_attr_utf8(path, err, scale[k], "units", unit[k]);
    if (rc) goto done;
  }
  for (int k = 0; k < NAXES; k++)
    H5TRY(H5DSset_scale(scale[k], axis_name[k]), "make /posture/%s a dimension scale",
          axis_name[k]);

  // the grid
  hsize_t dims[NAXES];
  for (int k = 0; k < NAXES; k++) dims[k] = (hsize_t)t->axis[k].n;
  static const char* const dname[3] = {"stability_index", "time_to_fall", "samples"};
  rc = make_dataset(path, err, g, dcpl, dname[0], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, NAXES,
                    dims, t->stability_index, &data[0]);
  if (!rc) rc = mbs_h5_attr_utf8(path, err, data[0], "units", "1");
  if (!rc) rc = make_dataset(path, err, g, dcpl, dname[1], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                             NAXES, dims, t->time_to_fall, &data[1]);
  if (!rc) rc = mbs_h5_attr_utf8(path, err, data[1], "units", "s");
  if (!rc) rc = make_dataset(path, err, g, dcpl, dname[2], H5T_STD_I64LE, H5T_NATIVE_INT64,
                             NAXES, dims, t->sample, &data[2]);
  if (rc) goto done;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < NAXES; k++) {
      H5TRY(H5DSattach_scale(data[i], scale[k], (unsigned)k),
            "attach /posture/%s to axis %d of /posture/%s", axis_name[k], k, dname[i]);
      H5TRY(H5DSset_label(data[i], (unsigned)k, axis_name[k]), "label axis %d of /posture/%s",
            k, dname[i]);
    }
done:
  for (int i = 0; i < 3; i++) mbs_h5_close(&data[i], H5Dclose);
  for (int k = 0; k < NAXES; k++) mbs_h5_close(&scale[k], H5Dclose);
  free(modes);
  mbs_h5_close(&st, H5Tclose);
  mbs_h5_close(&g, H5Gclose);
  mbs_h5_close(&dcpl, H5Pclose);
  mbs_h5_close(&gcpl, H5Pclose);
  return rc;
}

// ------------------------------------------------------------------------------------------
// the Markdown table

double mbs_posture_table_stable_range(const mbs_posture_table* t, int m, int k, int d) {
  const double D = t->duration[0] ? atof(t->duration) : NAN;
  if (!(D > 0)) return NAN;
  double range = -1;
  for (int g = 0; g < t->axis[AX_MAG].n; g++) {
    const double T = t->time_to_fall[mbs_posture_table_cell(t, m, k, d, g)];
    if (isnan(T) && g == 0) return NAN;
    if (!(T >= D * (1 - 1e-9))) break;
    range = t->axis[AX_MAG].v[g];
  }
  return range;
}

// "mode knee° direction" of a row or column, in `fmt` ("| %s | %g° | %s |" or " %s %g° %s |")
static void put_label(FILE* out, const mbs_posture_table* t, int m, int k, int d,
                      const char* fmt) {
  char b1[32], b2[32];
  fprintf(out, fmt, mbs_posture_mode_name(t->axis[AX_MODE].v[m], 0, b1, sizeof b1),
          t->axis[AX_KNEE].v[k],
          mbs_posture_direction_name(t->axis[AX_DIR].v[d], 0, b2, sizeof b2));
}

// one stability index, a dash for none; with the time of the fall when the model fell (the
// index alone cannot tell a fall after 2.5 s, 0.998, from standing the whole time)
static void put_index(FILE* out, const mbs_posture_table* t, size_t cell) {
  const double v = t->stability_index[cell], T = t->time_to_fall[cell];
  const double D = t->duration[0] ? atof(t->duration) : NAN;
  if (isnan(v)) fprintf(out, " – |");
  else if (D > 0 && T < D * (1 - 1e-9)) fprintf(out, " %.4f (falls at %.2f s) |", v, T);
  else fprintf(out, " %.4f |", v);
}

static void write_summary(const mbs_posture_table* t, FILE* out) {
  const char* slash = strrchr(t->path, '/');
  const mbs_posture_axis* ag = &t->axis[AX_MAG];
  char dur[40] = "";  // the simulated duration as people write it (0.3, not 0.29999999999999999)
  if (t->duration[0]) snprintf(dur, sizeof dur, "%g", atof(t->duration));
  fprintf(out, "Posture study `%s`%s%s%s: %ld of %ld samples succeeded. T = time to fall "
          "(s%s%s), stability index 1 − exp(−T²); per joint mode, knee flexion and direction "
          "the largest platform displacement up to which the model stands the whole time, the "
          "mean index over the %d displacements (%g to %g cm) and T at the smallest\n\n",
          slash ? slash + 1 : t->path, t->model[0] ? " (model " : "", t->model,
          t->model[0] ? ")" : "", t->good, t->nsamples, t->duration[0] ? ", capped at " : "",
          dur, ag->n, ag->n ? 100 * ag->v[0] : NAN, ag->n ? 100 * ag->v[ag->n - 1] : NAN);
  fprintf(out, "| joints | knee | direction | stands up to | mean index | T at %g cm |\n",
          ag->n ? 100 * ag->v[0] : NAN);
  fprintf(out, "|:--|--:|:--|--:|--:|--:|\n");
  for (int m = 0; m < t->axis[AX_MODE].n; m++)
    for (int k = 0; k < t->axis[AX_KNEE].n; k++)
      for (int d = 0; d < t->axis[AX_DIR].n; d++) {
        put_label(out, t, m, k, d, "| %s | %g° | %s |");
        const double r = mbs_posture_table_stable_range(t, m, k, d);
        if (isnan(r)) fprintf(out, " – |");
        else if (r < 0) fprintf(out, " none (falls at %g cm) |", ag->n ? 100 * ag->v[0] : NAN);
        else fprintf(out, " %g cm |", 100 * r);
        double sum = 0;
        int n = 0;
        for (int g = 0; g < ag->n; g++) {
          const double v = t->stability_index[mbs_posture_table_cell(t, m, k, d, g)];
          if (!isnan(v)) sum += v, n++;
        }
        if (n) fprintf(out, " %.3f |", sum / n);
        else fprintf(out, " – |");
        const double T0 = ag->n ? t->time_to_fall[mbs_posture_table_cell(t, m, k, d, 0)] : NAN;
        if (isnan(T0)) fprintf(out, " – |\n");
        else fprintf(out, " %.2f s |\n", T0);
      }
}

int mbs_posture_table_write_summary(const mbs_posture_table* t, FILE* out, mbs_error* err) {
  errno = 0;
  write_summary(t, out);
  if (fflush(out) != 0 || ferror(out))
    return MBS_FAIL(err, MBS_ERR_IO, t->path, "%s: cannot write the summary: %s", t->path,
                    errno ? strerror(errno) : "write error");
  return MBS_OK;
}

int mbs_posture_table_write_markdown(const mbs_posture_table* t, FILE* out, mbs_error* err) {
  errno = 0;
  write_summary(t, out);
  fprintf(out, "\nThe stability index by platform displacement (– = no successful sample):\n\n");
  const mbs_posture_axis* ag = &t->axis[AX_MAG];
  if (ag->n > MBS_POSTURE_MARKDOWN_COLUMNS) {
    // many displacements: one row per displacement, one column per mode, posture and direction
    fprintf(out, "| displacement |");
    for (int m = 0; m < t->axis[AX_MODE].n; m++)
      for (int k = 0; k < t->axis[AX_KNEE].n; k++)
        for (int d = 0; d < t->axis[AX_DIR].n; d++)
          put_label(out, t, m, k, d, " %s %g° %s |");
    fprintf(out, "\n|--:|");
    const long ncol = (long)t->axis[AX_MODE].n * t->axis[AX_KNEE].n * t->axis[AX_DIR].n;
    for (long i = 0; i < ncol; i++) fprintf(out, "--:|");
    fprintf(out, "\n");
    for (int g = 0; g < ag->n; g++) {
      fprintf(out, "| %g cm |", ag->v[g] * 100);
      for (int m = 0; m < t->axis[AX_MODE].n; m++)
        for (int k = 0; k < t->axis[AX_KNEE].n; k++)
          for (int d = 0; d < t->axis[AX_DIR].n; d++) {
            put_index(out, t, mbs_posture_table_cell(t, m, k, d, g));
          }
      fprintf(out, "\n");
    }
    goto written;
  }
  fprintf(out, "| joints | knee | direction |");
  for (int g = 0; g < ag->n; g++) fprintf(out, " %g cm |", ag->v[g] * 100);
  fprintf(out, "\n|:--|--:|:--|");
  for (int g = 0; g < ag->n; g++) fprintf(out, "--:|");
  fprintf(out, "\n");
  for (int m = 0; m < t->axis[AX_MODE].n; m++)
    for (int k = 0; k < t->axis[AX_KNEE].n; k++)
      for (int d = 0; d < t->axis[AX_DIR].n; d++) {
        put_label(out, t, m, k, d, "| %s | %g° | %s |");
        for (int g = 0; g < ag->n; g++) {
          put_index(out, t, mbs_posture_table_cell(t, m, k, d, g));
        }
        fprintf(out, "\n");
      }
written:
  if (fflush(out) != 0 || ferror(out))
    return MBS_FAIL(err, MBS_ERR_IO, t->path, "%s: cannot write the Markdown table: %s",
                    t->path, errno ? strerror(errno) : "write error");
  return MBS_OK;
}

// ------------------------------------------------------------------------------------------

int mbs_posture_table_read(const char* h5_path, int write_group, mbs_posture_table** out,
                           mbs_error* err) {
  if (out) *out = NULL;
  if (!h5_path || !*h5_path || !out)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture table",
                    "posture table: no result file or no place for the table");
  const char* path = h5_path;
  int rc = 0;
  hid_t f = -1;
  struct stat sb;
  if (stat(path, &sb) != 0)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open the result file: %s", path,
                    strerror(errno));
  reader R;
  memset(&R, 0, sizeof R);
  R.t = calloc(1, sizeof *R.t);
  if (!R.t || !(R.t->path = strdup(path))) {
    free(R.t);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
  }
  const mbs_h5_quiet quiet = mbs_h5_quiet_begin();
  if (write_group)
    H5TRY(f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), "open the result file for writing");
  else
    H5TRY(f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), "open the result file");
  rc = read_study(&R, f, err);
  if (!rc) rc = build_grid(&R, err);
  if (!rc && write_group) rc = write_posture_group(R.t, f, err);
  if (!rc && write_group) H5TRY(H5Fflush(f, H5F_SCOPE_LOCAL), "write the file");
done:
  // as in io/store.c: close only a file that flushed (HDF5 1.10 keeps a file whose close
  // failed and crashes at exit); otherwise HDF5's shutdown closes it
  if (f >= 0) {
    if (!rc || !write_group || H5Fflush(f, H5F_SCOPE_LOCAL) >= 0) {
      if (H5Fclose(f) < 0 && !rc) rc = mbs_h5_fail(err, path, "close the file");
    }
    H5Eclear2(H5E_DEFAULT);
  }
  mbs_h5_quiet_end(quiet);
  free(R.params);
  free(R.done);
  free(R.code);
  free(R.T);
  free(R.si);
  if (rc) mbs_posture_table_free(R.t);
  else *out = R.t;
  return rc;
}

void mbs_posture_table_free(mbs_posture_table* t) {
  if (!t) return;
  free(t->path);
  for (int k = 0; k < NAXES; k++) free(t->axis[k].v);
  free(t->stability_index);
  free(t->time_to_fall);
  free(t->sample);
  free(t);
}
