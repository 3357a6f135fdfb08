// The HDF5 study store (io/store.c, layout in io/FORMAT.md), read back with the HDF5 C API:
//  - a small study (37 samples, 11 frames, quantities of 3 and 2 components, one with '/' in
//    its name, 2 scalars, 3 parameters, 7 percentile levels, 8 samples per chunk): failed
//    samples (one without trajectories), one sample ending after 6 frames, a NaN inside an ok
//    sample, a sample never written and a study stopped early at sample 30. Every dataset,
//    attribute, dimension scale, label, chunk shape, filter and fill value is checked; the
//    statistics against values computed here independently (two-pass mean and variance,
//    sorted percentiles), failed and unwritten samples excluded;
//  - the statistics bit-identical when the percentile pass runs with a tiny memory budget
//    (one column at a time, and a few frames at a time), and the whole file byte-identical;
//  - samples out of order, repeated, out of range or malformed are refused; an existing file is
//    refused without force (and kept), replaced with it; bad layouts and an unwritable path fail
//    with messages that name the file;
//  - 20000 samples with the chunk chosen by the store (256 KiB aim, 1 MiB cap) and one
//    sample larger than 1 MiB (frames split across chunks), statistics checked on a few columns;
//  - a study with no parameters, scalars, quantities or percentiles;
//  - a full disk (a file size limit): the failing write returns MBS_ERR_IO naming the file, the
//    store refuses further samples, and close still frees everything.
// With `--example <file>` it only writes the small study to <file> (for tests/io/check_store.py).
#include <hdf5.h>
#include <hdf5_hl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mbs/store.h"
#include "mbs_test.h"

#define NS 37
#define NF 11
#define NP 3
#define NSC 2
#define NPCT 7
#define SPC 8
#define LAST_WRITTEN 30
#define GAP 22
#define NANSAMPLE 10

static const int ncomp[2] = {3, 2};
static const char* qnames[2] = {"q", "bodies/rod2/position"};
static const char* qunits[2] = {"rad", "m"};
static const char* comps0[3] = {"hip_flexion", "knee_angle", "ankle_angle"};
static const char* comps1[2] = {"x", "y"};
static const char* pnames[NP] = {"/bodyset/rod1/mass", "/bodyset/rod1/length",
                                 "/forceset/spring/stiffness"};
static const char* punits[NP] = {"kg", "m", "N/m"};
static const char* snames[NSC] = {"final_energy", "max_knee"};
static const char* sunits[NSC] = {"J", "rad"};
static const double pct[NPCT] = {0, 5, 25, 50, 75, 95, 100};
static const char* author = "J\xc3\xb6rg M\xc3\xbcller";  // UTF-8

typedef struct study {
  double times[NF];
  double params[NS][NP];
  double traj0[NS][NF * 3];
  double traj1[NS][NF * 2];
  double sc[NS][NSC];
  int status[NS], nframes_done[NS], written[NS];
  char msg[NS][64];
  double wall[NS];
  long steps[NS];
} study;

static int is_failed(int i) { return i == 3 || i == 17 || i == 18; }

static void make_study(study* st) {
  memset(st, 0, sizeof *st);
  mbs_test_rng rng = {0x2545F4914F6CDD1DULL};
  for (int f = 0; f < NF; f++) st->times[f] = 0.1 * f;
  for (int i = 0; i < NS; i++) {
    st->written[i] = i <= LAST_WRITTEN && i != GAP;
    st->status[i] = is_failed(i) ? MBS_ERR_INTEGRATOR : 0;
    st->nframes_done[i] = is_failed(i) ? (i == 18 ? 0 : 4) : (i == 29 ? 6 : NF);
    snprintf(st->msg[i], sizeof st->msg[i], "%s",
             is_failed(i) ? "integrator failed at t = 0.35 s: step size underflow" : "");
    st->wall[i] = 0.01 * (i + 1);
    st->steps[i] = 100 + 3 * i;
    for (int j = 0; j < NP; j++) st->params[i][j] = mbs_test_uniform(&rng, 0.5, 2.0) * (j + 1);
    const double big = is_failed(i) ? 1e6 : 0;  // would spoil the statistics if included
    for (int f = 0; f < NF; f++) {
      for (int c = 0; c < 3; c++)
        st->traj0[i][f * 3 + c] =
            f < st->nframes_done[i] ? big + sin(0.3 * f + c) * st->params[i][0] +
                                          mbs_test_uniform(&rng, -0.1, 0.1)
                                    : NAN;
      for (int c = 0; c < 2; c++)
        st->traj1[i][f * 2 + c] =
            f < st->nframes_done[i] ? big + (c ? -1 : 1) * 0.1 * f * st->params[i][1] : NAN;
    }
    st->sc[i][0] = big + mbs_test_uniform(&rng, 1, 10);
    st->sc[i][1] = i == 5 ? NAN : big + mbs_test_uniform(&rng, 0, 1);
  }
  st->traj0[NANSAMPLE][5 * 3 + 1] = NAN;  // a missing value inside an ok sample
}

static mbs_store_layout small_layout(const study* st, mbs_store_quantity* q,
                                     mbs_store_attribute* attrs) {
  q[0] = (mbs_store_quantity){qnames[0], 3, comps0, qunits[0], NULL};
  q[1] = (mbs_store_quantity){qnames[1], 2, comps1, qunits[1], NULL};
  attrs[0] = (mbs_store_attribute){"study", "monte_carlo"};
  attrs[1] = (mbs_store_attribute){"seed", "42"};
  attrs[2] = (mbs_store_attribute){"author", author};
  attrs[3] = (mbs_store_attribute){"empty", ""};
  mbs_store_layout L = {0};
  L.nsamples = NS;
  L.nparams = NP;
  L.param_names = pnames;
  L.param_units = punits;
  L.nframes = NF;
  L.times = st->times;
  L.nquantities = 2;
  L.quantities = q;
  L.nscalars = NSC;
  L.scalar_names = snames;
  L.scalar_units = sunits;
  L.npercentiles = NPCT;
  L.percentiles = pct;
  L.nattributes = 4;
  L.attributes = attrs;
  L.samples_per_chunk = SPC;
  return L;
}

static int write_small(const char* path, const study* st, int force) {
  mbs_store_quantity q[2];
  mbs_store_attribute attrs[4];
  mbs_store_layout L = small_layout(st, q, attrs);
  mbs_error err;
  mbs_error_clear(&err);
  mbs_store* s = mbs_store_create(path, &L, force, &err);
  if (!s) {
    fprintf(stderr, "create %s: %s\n", path, err.message);
    return err.code ? err.code : -1;
  }
  int rc = 0;
  for (int i = 0; i < NS && !rc; i++) {
    if (!st->written[i]) continue;
    const double* traj[2] = {st->traj0[i], st->traj1[i]};
    mbs_store_sample x = {0};
    x.index = i;
    x.params = st->params[i];
    x.status = st->status[i];
    x.message = st->msg[i];
    x.wall_time = st->wall[i];
    x.steps = st->steps[i];
    x.nframes_done = st->nframes_done[i];
    x.traj = i == 18 ? NULL : traj;
    x.scalars = st->sc[i];
    rc = mbs_store_write_sample(s, &x, &err);
    if (rc) fprintf(stderr, "write sample %d: %s\n", i, err.message);
  }
  if (!rc) rc = mbs_store_set_attribute(s, "end_time", "2024-01-01T00:00:00Z", &err);
  if (!rc) rc = mbs_store_set_attribute(s, "seed", "43", &err);  // replaces the layout's value
  int rc2 = mbs_store_close(s, &err);
  if (rc2) fprintf(stderr, "close %s: %s\n", path, err.message);
  return rc ? rc : rc2;
}

// ------------------------------------------------------------------------------------------
// reading helpers

static int same_double(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return memcmp(&a, &b, sizeof a) == 0;
}

// a string attribute (UTF-8: variable-length for `units`, fixed-length for every other) into
// buf; returns 0 on success
static int read_attr_str(hid_t loc, const char* obj, const char* name, char* buf, size_t n) {
  int rc = -1;
  hid_t a = H5Aopen_by_name(loc, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t ft = H5Aget_type(a), mt = H5Tcopy(H5T_C_S1);
  const int units = !strcmp(name, "units");
  if (ft >= 0 && H5Tget_class(ft) == H5T_STRING && units && H5Tis_variable_str(ft) > 0 &&
      H5Tget_cset(ft) == H5T_CSET_UTF8) {
    char* s = NULL;
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    if (H5Aread(a, mt, &s) >= 0 && s && strlen(s) < n) {
      strcpy(buf, s);
      rc = 0;
    }
    if (s) H5free_memory(s);
  } else if (ft >= 0 && H5Tget_class(ft) == H5T_STRING && !units && !H5Tis_variable_str(ft) &&
      H5Tget_cset(ft) == H5T_CSET_UTF8 && H5Tget_size(ft) < n) {
    H5Tset_size(mt, H5Tget_size(ft) + 1);
    H5Tset_strpad(mt, H5T_STR_NULLTERM);
    H5Tset_cset(mt, H5T_CSET_UTF8);  // HDF5 converts no ASCII <-> UTF-8
    memset(buf, 0, n);
    if (H5Aread(a, mt, buf) >= 0) rc = 0;
  }
  H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return rc;
}

static void expect_attr(hid_t loc, const char* obj, const char* name, const char* value) {
  char buf[512];
  int rc = read_attr_str(loc, obj, name, buf, sizeof buf);
  EXPECT_EQ_INT(rc, 0);
  EXPECT_TRUE(rc == 0 && strcmp(buf, value) == 0);
  if (rc == 0 && strcmp(buf, value))
    fprintf(stderr, "  attribute %s of %s is '%s', expected '%s'\n", name, obj, buf, value);
}

// n strings of a 1-D fixed-length string dataset or attribute array (variable-length for a
// `units` attribute), as fixed-width rows; free with free()
static char* read_strings(hid_t d, int is_attr, int* n, size_t* width) {
  hid_t ft = is_attr ? H5Aget_type(d) : H5Dget_type(d);
  hid_t sp = is_attr ? H5Aget_space(d) : H5Dget_space(d);
  hssize_t np = H5Sget_simple_extent_npoints(sp);
  if (is_attr && H5Tis_variable_str(ft) > 0) {
    char name[64] = "";
    H5Aget_name(d, sizeof(name), name);
    char** v = calloc((size_t)(np > 0 ? np : 1), sizeof(char*));
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    int ok = !strcmp(name, "units") && H5Tget_cset(ft) == H5T_CSET_UTF8 &&
             (np == 0 || H5Aread(d, mt, v) >= 0);
    const size_t w = 256;
    char* buf = calloc((size_t)(np > 0 ? np : 1), w);
    for (hssize_t i = 0; i < np; i++) {
      if (v[i]) snprintf(buf + (size_t)i * w, w, "%s", v[i]);
      if (v[i]) H5free_memory(v[i]);
    }
    free(v);
    H5Tclose(mt);
    H5Sclose(sp);
    H5Tclose(ft);
    EXPECT_TRUE(ok);
    *n = (int)np;
    *width = w;
    return buf;
  }
  size_t w = H5Tget_size(ft) + 1;
  hid_t mt = H5Tcopy(H5T_C_S1);
  H5Tset_size(mt, w);
  H5Tset_strpad(mt, H5T_STR_NULLTERM);
  H5Tset_cset(mt, H5T_CSET_UTF8);
  char* buf = calloc((size_t)(np > 0 ? np : 1), w);
  int ok = !H5Tis_variable_str(ft) && H5Tget_cset(ft) == H5T_CSET_UTF8;
  if (np > 0) ok = ok && (is_attr ? H5Aread(d, mt, buf) : H5Dread(d, mt, H5S_ALL, H5S_ALL,
                                                                   H5P_DEFAULT, buf)) >= 0;
  H5Tclose(mt);
  H5Sclose(sp);
  H5Tclose(ft);
  EXPECT_TRUE(ok);
  *n = (int)np;
  *width = w;
  return buf;
}

static void expect_strings(hid_t d, int is_attr, int n, const char* const* v) {
  int m = 0;
  size_t w = 0;
  char* buf = read_strings(d, is_attr, &m, &w);
  EXPECT_EQ_INT(m, n);
  for (int i = 0; i < n && i < m; i++) EXPECT_TRUE(strcmp(buf + (size_t)i * w, v[i]) == 0);
  free(buf);
}

// the whole of a dataset as doubles (or int64); NULL on failure; free with free()
static void* read_all(hid_t file, const char* name, hid_t memtype, size_t elem, long* n) {
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) {
    fprintf(stderr, "  cannot open %s\n", name);
    return NULL;
  }
  hid_t sp = H5Dget_space(d);
  hssize_t np = H5Sget_simple_extent_npoints(sp);
  void* buf = malloc((size_t)(np > 0 ? np : 1) * elem);
  if (np > 0 && H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    free(buf);
    buf = NULL;
  }
  H5Sclose(sp);
  H5Dclose(d);
  if (n) *n = (long)np;
  return buf;
}

static double* read_f64(hid_t file, const char* name, long expect_n) {
  long n = -1;
  double* v = read_all(file, name, H5T_NATIVE_DOUBLE, sizeof(double), &n);
  EXPECT_TRUE(v != NULL);
  EXPECT_EQ_INT(n, expect_n);
  return v;
}

static int64_t* read_i64(hid_t file, const char* name, long expect_n) {
  long n = -1;
  int64_t* v = read_all(file, name, H5T_NATIVE_INT64, sizeof(int64_t), &n);
  EXPECT_TRUE(v != NULL);
  EXPECT_EQ_INT(n, expect_n);
  return v;
}

static void expect_dims(hid_t file, const char* name, int rank, const hsize_t* dims) {
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_TRUE(d >= 0);
  if (d < 0) return;
  hid_t sp = H5Dget_space(d);
  hsize_t got[4] = {0};
  EXPECT_EQ_INT(H5Sget_simple_extent_ndims(sp), rank);
  H5Sget_simple_extent_dims(sp, got, NULL);
  for (int i = 0; i < rank; i++) EXPECT_EQ_INT(got[i], dims[i]);
  H5Sclose(sp);
  H5Dclose(d);
}

// axis `idx` of dataset `name` has the scale `scale` attached and label `label`
static void expect_scale(hid_t file, const char* name, unsigned idx, const char* scale,
                         const char* label) {
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT), sc = H5Dopen2(file, scale, H5P_DEFAULT);
  EXPECT_TRUE(d >= 0 && sc >= 0);
  if (d >= 0 && sc >= 0) {
    EXPECT_TRUE(H5DSis_scale(sc) > 0);
    EXPECT_TRUE(H5DSis_attached(d, sc, idx) > 0);
    EXPECT_EQ_INT(H5DSget_num_scales(d, idx), 1);
    char buf[64] = {0};
    H5DSget_label(d, idx, buf, sizeof buf);
    EXPECT_TRUE(strcmp(buf, label) == 0);
    if (H5DSis_attached(d, sc, idx) <= 0 || strcmp(buf, label))
      fprintf(stderr, "  %s axis %u: scale %s, label '%s' (expected '%s')\n", name, idx, scale,
              buf, label);
  }
  if (d >= 0) H5Dclose(d);
  if (sc >= 0) H5Dclose(sc);
}

// compressed: 1 compressed, 0 not, -1 as the dataset's "compression" attribute says
static void expect_chunk(hid_t file, const char* name, int rank, const hsize_t* chunk,
                         int compressed) {
  if (compressed < 0) {
    char how[256];
    EXPECT_EQ_INT(read_attr_str(file, name, "compression", how, sizeof how), 0);
    compressed = strncmp(how, "shuffle + deflate", 17) == 0;
  }
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_TRUE(d >= 0);
  if (d < 0) return;
  hid_t dcpl = H5Dget_create_plist(d);
  EXPECT_EQ_INT(H5Pget_layout(dcpl), H5D_CHUNKED);
  hsize_t got[4] = {0};
  EXPECT_EQ_INT(H5Pget_chunk(dcpl, 4, got), rank);
  for (int i = 0; i < rank; i++) EXPECT_EQ_INT(got[i], chunk[i]);
  // shuffle + deflate when compressed, then always the Fletcher32 checksum
  unsigned flags = 0, cd[4] = {0};
  size_t ncd = 4;
  if (compressed) {
    EXPECT_EQ_INT(H5Pget_nfilters(dcpl), 3);
    EXPECT_EQ_INT(H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_SHUFFLE);
    ncd = 4;
    EXPECT_EQ_INT(H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL), H5Z_FILTER_DEFLATE);
    EXPECT_EQ_INT(cd[0], 1);  // deflate level
  } else {
    EXPECT_EQ_INT(H5Pget_nfilters(dcpl), 1);
  }
  ncd = 4;
  EXPECT_EQ_INT(H5Pget_filter2(dcpl, (unsigned)H5Pget_nfilters(dcpl) - 1, &flags, &ncd, cd, 0,
                               NULL, NULL), H5Z_FILTER_FLETCHER32);
  H5Pclose(dcpl);
  H5Dclose(d);
}

static double fill_value_f64(hid_t file, const char* name) {
  double v = 0;
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t dcpl = H5Dget_create_plist(d);
  H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, &v);
  H5Pclose(dcpl);
  H5Dclose(d);
  return v;
}

// ------------------------------------------------------------------------------------------
// independent statistics: two-pass mean and variance, percentiles of the sorted values

typedef struct ref_stats {
  long n;
  double mean, std, pct[NPCT];
} ref_stats;

static int cmp_d(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static ref_stats reference(double* v, long n, const double* levels, int nlevels) {
  ref_stats r;
  r.n = n;
  r.mean = r.std = NAN;
  for (int p = 0; p < nlevels; p++) r.pct[p] = NAN;
  if (n == 0) return r;
  double sum = 0;
  for (long i = 0; i < n; i++) sum += v[i];
  r.mean = sum / n;
  if (n > 1) {
    double ss = 0;
    for (long i = 0; i < n; i++) ss += (v[i] - r.mean) * (v[i] - r.mean);
    r.std = sqrt(ss / (n - 1));
  }
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  for (int p = 0; p < nlevels; p++) {
    const double pos = levels[p] / 100 * (n - 1);
    const long lo = (long)floor(pos);
    const double frac = pos - lo;
    r.pct[p] = lo + 1 < n ? v[lo] * (1 - frac) + v[lo + 1] * frac : v[lo];
  }
  return r;
}

// ------------------------------------------------------------------------------------------

static void check_small(const char* path, const study* st) {
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_TRUE(file >= 0);
  if (file < 0) return;

  // root attributes
  expect_attr(file, "/", "mbstudy_format", "1");
  expect_attr(file, "/", "study", "monte_carlo");
  expect_attr(file, "/", "seed", "43");
  expect_attr(file, "/", "author", author);
  expect_attr(file, "/", "empty", "");
  expect_attr(file, "/", "end_time", "2024-01-01T00:00:00Z");

  // axes
  int64_t* samples = read_i64(file, "/samples", NS);
  for (int i = 0; samples && i < NS; i++) EXPECT_EQ_INT(samples[i], i);
  free(samples);
  double* t = read_f64(file, "/time", NF);
  for (int f = 0; t && f < NF; f++) EXPECT_TRUE(same_double(t[f], st->times[f]));
  free(t);
  expect_attr(file, "/time", "units", "s");
  {
    hid_t d = H5Dopen2(file, "/parameter_names", H5P_DEFAULT);
    expect_strings(d, 0, NP, pnames);
    char buf[64] = {0};
    H5DSget_scale_name(d, buf, sizeof buf);
    EXPECT_TRUE(strcmp(buf, "parameter_names") == 0);
    H5Dclose(d);
    d = H5Dopen2(file, "/samples", H5P_DEFAULT);
    H5DSget_scale_name(d, buf, sizeof buf);
    EXPECT_TRUE(strcmp(buf, "samples") == 0);
    H5Dclose(d);
  }

  // parameters
  hsize_t pd[2] = {NS, NP};
  expect_dims(file, "/parameters", 2, pd);
  double* p = read_f64(file, "/parameters", NS * NP);
  for (int i = 0; p && i < NS; i++)
    for (int j = 0; j < NP; j++)
      EXPECT_TRUE(same_double(p[i * NP + j], st->written[i] ? st->params[i][j] : NAN));
  free(p);
  {
    hid_t d = H5Dopen2(file, "/parameters", H5P_DEFAULT);
    hid_t a = H5Aopen(d, "units", H5P_DEFAULT);
    expect_strings(a, 1, NP, punits);
    H5Aclose(a);
    H5Dclose(d);
  }
  expect_scale(file, "/parameters", 0, "/samples", "sample");
  expect_scale(file, "/parameters", 1, "/parameter_names", "parameter");

  // status
  {
    long n = 0;
    int32_t* code = read_all(file, "/status/code", H5T_NATIVE_INT32, 4, &n);
    uint8_t* done = read_all(file, "/status/done", H5T_NATIVE_UINT8, 1, &n);
    double* wall = read_f64(file, "/status/wall_time", NS);
    int64_t* steps = read_i64(file, "/status/steps", NS);
    hid_t d = H5Dopen2(file, "/status/message", H5P_DEFAULT);
    int nm = 0;
    size_t w = 0;
    char* msg = read_strings(d, 0, &nm, &w);
    hid_t ft = H5Dget_type(d);
    EXPECT_EQ_INT(H5Tget_size(ft), MBS_ERROR_MESSAGE_LEN);
    H5Tclose(ft);
    H5Dclose(d);
    EXPECT_EQ_INT(nm, NS);
    for (int i = 0; code && done && wall && steps && i < NS; i++) {
      EXPECT_EQ_INT(done[i], st->written[i]);
      EXPECT_EQ_INT(code[i], st->written[i] ? st->status[i] : 0);
      EXPECT_TRUE(same_double(wall[i], st->written[i] ? st->wall[i] : NAN));
      EXPECT_EQ_INT(steps[i], st->written[i] ? st->steps[i] : 0);
      EXPECT_TRUE(strcmp(msg + (size_t)i * w, st->written[i] ? st->msg[i] : "") == 0);
    }
    free(code);
    free(done);
    free(wall);
    free(steps);
    free(msg);
    expect_attr(file, "/status/wall_time", "units", "s");
    const char* names[] = {"/status/code", "/status/message", "/status/wall_time",
                           "/status/steps", "/status/done"};
    for (int k = 0; k < 5; k++) expect_scale(file, names[k], 0, "/samples", "sample");
  }

  // trajectories
  long nok = 0;
  for (int i = 0; i < NS; i++) nok += st->written[i] && st->status[i] == 0;
  for (int k = 0; k < 2; k++) {
    char name[128], cname[128], sname[128];
    snprintf(name, sizeof name, "/trajectories/%s", qnames[k]);
    snprintf(cname, sizeof cname, "/trajectories/%s_components", qnames[k]);
    const int nc = ncomp[k];
    hsize_t dims[3] = {NS, NF, (hsize_t)nc}, chunk[3] = {SPC, NF, (hsize_t)nc};
    expect_dims(file, name, 3, dims);
    expect_chunk(file, name, 3, chunk, -1);
    EXPECT_TRUE(isnan(fill_value_f64(file, name)));
    expect_attr(file, name, "units", qunits[k]);
    expect_scale(file, name, 0, "/samples", "sample");
    expect_scale(file, name, 1, "/time", "time");
    expect_scale(file, name, 2, cname, "component");
    {
      hid_t d = H5Dopen2(file, cname, H5P_DEFAULT);
      expect_strings(d, 0, nc, k ? comps1 : comps0);
      H5Dclose(d);
    }
    double* v = read_f64(file, name, NS * NF * nc);
    for (int i = 0; v && i < NS; i++)
      for (int m = 0; m < NF * nc; m++) {
        const double want = st->written[i] ? (k ? st->traj1[i][m] : st->traj0[i][m]) : NAN;
        EXPECT_TRUE(same_double(v[(size_t)i * NF * nc + m], want));
      }
    free(v);

    // statistics against the reference
    snprintf(sname, sizeof sname, "/statistics/%s/count", qnames[k]);
    int64_t* cnt = read_i64(file, sname, NF * nc);
    snprintf(sname, sizeof sname, "/statistics/%s/mean", qnames[k]);
    double* mean = read_f64(file, sname, NF * nc);
    expect_attr(file, sname, "units", qunits[k]);
    expect_scale(file, sname, 0, "/time", "time");
    expect_scale(file, sname, 1, cname, "component");
    snprintf(sname, sizeof sname, "/statistics/%s/std", qnames[k]);
    double* sd = read_f64(file, sname, NF * nc);
    snprintf(sname, sizeof sname, "/statistics/%s/count", qnames[k]);
    expect_scale(file, sname, 1, cname, "component");
    snprintf(sname, sizeof sname, "/statistics/%s/percentile", qnames[k]);
    double* pc = read_f64(file, sname, NPCT * NF * nc);
    expect_attr(file, sname, "method", "linear");
    expect_scale(file, sname, 0, "/statistics/percentiles", "percentile");
    expect_scale(file, sname, 1, "/time", "time");
    expect_scale(file, sname, 2, cname, "component");
    for (int f = 0; cnt && mean && sd && pc && f < NF; f++)
      for (int c = 0; c < nc; c++) {
        double col[NS];
        long n = 0;
        for (int i = 0; i < NS; i++) {
          if (!st->written[i] || st->status[i] != 0) continue;
          const double x = k ? st->traj1[i][f * nc + c] : st->traj0[i][f * nc + c];
          if (!isnan(x)) col[n++] = x;
        }
        ref_stats r = reference(col, n, pct, NPCT);
        const int m = f * nc + c;
        EXPECT_EQ_INT(cnt[m], r.n);
        EXPECT_TRUE(isnan(r.mean) ? isnan(mean[m]) : mbs_test_close(mean[m], r.mean, 1e-13));
        EXPECT_TRUE(isnan(r.std) ? isnan(sd[m]) : mbs_test_close(sd[m], r.std, 1e-12));
        for (int q = 0; q < NPCT; q++)
          EXPECT_NEAR(pc[(size_t)q * NF * nc + m], r.pct[q], 1e-13);
      }
    // the counts: ok samples, less sample 29 after frame 5, less the NaN in sample 10
    if (cnt) {
      EXPECT_EQ_INT(cnt[0], nok);
      EXPECT_EQ_INT(cnt[(NF - 1) * nc], nok - 1);
      if (k == 0) EXPECT_EQ_INT(cnt[5 * 3 + 1], nok - 1);
      if (k == 0) EXPECT_EQ_INT(cnt[5 * 3 + 0], nok);
    }
    free(cnt);
    free(mean);
    free(sd);
    free(pc);
  }
  double* lev = read_f64(file, "/statistics/percentiles", NPCT);
  for (int q = 0; lev && q < NPCT; q++) EXPECT_TRUE(same_double(lev[q], pct[q]));
  free(lev);
  expect_attr(file, "/statistics/percentiles", "units", "%");
  {
    hid_t g = H5Gopen2(file, "/statistics", H5P_DEFAULT);
    hid_t a = H5Aopen(g, "samples_used", H5P_DEFAULT);
    int64_t used = -1;
    H5Aread(a, H5T_NATIVE_INT64, &used);
    EXPECT_EQ_INT(used, nok);
    H5Aclose(a);
    H5Gclose(g);
  }

  // scalars
  for (int k = 0; k < NSC; k++) {
    char name[128], sname[128];
    snprintf(name, sizeof name, "/scalars/%s", snames[k]);
    double* v = read_f64(file, name, NS);
    for (int i = 0; v && i < NS; i++)
      EXPECT_TRUE(same_double(v[i], st->written[i] ? st->sc[i][k] : NAN));
    free(v);
    expect_attr(file, name, "units", sunits[k]);
    expect_scale(file, name, 0, "/samples", "sample");
    double col[NS];
    long n = 0;
    for (int i = 0; i < NS; i++)
      if (st->written[i] && st->status[i] == 0 && !isnan(st->sc[i][k])) col[n++] = st->sc[i][k];
    ref_stats r = reference(col, n, pct, NPCT);
    snprintf(sname, sizeof sname, "/statistics/scalars/%s/count", snames[k]);
    int64_t* cnt = read_i64(file, sname, 1);
    snprintf(sname, sizeof sname, "/statistics/scalars/%s/mean", snames[k]);
    double* mean = read_f64(file, sname, 1);
    expect_attr(file, sname, "units", sunits[k]);
    snprintf(sname, sizeof sname, "/statistics/scalars/%s/std", snames[k]);
    double* sd = read_f64(file, sname, 1);
    snprintf(sname, sizeof sname, "/statistics/scalars/%s/percentile", snames[k]);
    double* pc = read_f64(file, sname, NPCT);
    expect_scale(file, sname, 0, "/statistics/percentiles", "percentile");
    if (cnt && mean && sd && pc) {
      EXPECT_EQ_INT(cnt[0], r.n);
      EXPECT_EQ_INT(cnt[0], k == 1 ? nok - 1 : nok);
      EXPECT_NEAR(mean[0], r.mean, 1e-13);
      EXPECT_NEAR(sd[0], r.std, 1e-12);
      for (int q = 0; q < NPCT; q++) EXPECT_NEAR(pc[q], r.pct[q], 1e-13);
    }
    free(cnt);
    free(mean);
    free(sd);
    free(pc);
  }
  EXPECT_EQ_INT(H5Fget_obj_count(file, H5F_OBJ_ALL), 1);  // the helpers closed everything
  H5Fclose(file);
}

// every statistics dataset of files a and b holds the same bits
static void compare_statistics(const char* a, const char* b) {
  hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_TRUE(fa >= 0 && fb >= 0);
  const char* groups[] = {"/statistics/q", "/statistics/bodies/rod2/position",
                          "/statistics/scalars/final_energy", "/statistics/scalars/max_knee"};
  const char* sets[] = {"count", "mean", "std", "percentile"};
  for (int g = 0; fa >= 0 && fb >= 0 && g < 4; g++)
    for (int k = 0; k < 4; k++) {
      char name[160];
      snprintf(name, sizeof name, "%s/%s", groups[g], sets[k]);
      long na = 0, nb = 0;
      double* va = read_all(fa, name, H5T_NATIVE_DOUBLE, 8, &na);
      double* vb = read_all(fb, name, H5T_NATIVE_DOUBLE, 8, &nb);
      EXPECT_TRUE(va && vb && na == nb && na > 0);
      int same = va && vb && na == nb;
      for (long i = 0; same && i < na; i++) same = same_double(va[i], vb[i]);
      EXPECT_TRUE(same);
      if (!same) fprintf(stderr, "  %s differs between %s and %s\n", name, a, b);
      free(va);
      free(vb);
    }
  if (fa >= 0) H5Fclose(fa);
  if (fb >= 0) H5Fclose(fb);
}

// the two files hold the same bytes
static int files_equal(const char* a, const char* b) {
  FILE* fa = fopen(a, "rb");
  FILE* fb = fopen(b, "rb");
  int same = fa && fb;
  while (same) {
    const int ca = fgetc(fa), cb = fgetc(fb);
    same = ca == cb;
    if (ca == EOF) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

static void test_small(const study* st) {
  const char* path = "test_store_small.h5";
  EXPECT_OK(write_small(path, st, 1));
  check_small(path, st);
  // the percentile pass one column at a time, then a few frames at a time: same bits
  const char* budgets[] = {"200", "1000"};
  for (int b = 0; b < 2; b++) {
    const char* path2 = "test_store_small_budget.h5";
    setenv("MBS_STORE_PERCENTILE_MEMORY", budgets[b], 1);
    EXPECT_OK(write_small(path2, st, 1));
    unsetenv("MBS_STORE_PERCENTILE_MEMORY");
    compare_statistics(path, path2);
    // no timestamps in the file: the same study gives the same bytes
    EXPECT_TRUE(files_equal(path, path2));
    unlink(path2);
  }
  unlink(path);
}

static mbs_store* tiny_store(const char* path, int force, mbs_error* err) {
  static const double times[2] = {0, 1};
  static const char* c[1] = {"x"};
  static const mbs_store_quantity q = {"x", 1, c, "m", NULL};
  mbs_store_layout L = {0};
  L.nsamples = 10;
  L.nframes = 2;
  L.times = times;
  L.nquantities = 1;
  L.quantities = &q;
  return mbs_store_create(path, &L, force, err);
}

static void test_order(void) {
  const char* path = "test_store_order.h5";
  mbs_error err;
  mbs_error_clear(&err);
  mbs_store* s = tiny_store(path, 1, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) return;
  const double v[2] = {1, 2};
  const double* traj[1] = {v};
  mbs_store_sample x = {0};
  x.nframes_done = 2;
  x.traj = traj;
  x.index = 5;
  EXPECT_OK(mbs_store_write_sample(s, &x, &err));
  EXPECT_EQ_INT(mbs_store_write_sample(s, &x, &err), MBS_ERR_ARGUMENT);  // again
  EXPECT_TRUE(strstr(err.message, "increasing") != NULL && strstr(err.message, path) != NULL);
  x.index = 4;
  EXPECT_EQ_INT(mbs_store_write_sample(s, &x, &err), MBS_ERR_ARGUMENT);  // backwards
  EXPECT_TRUE(strstr(err.message, "sample 4 arrived after sample 5") != NULL);
  x.index = 10;
  EXPECT_EQ_INT(mbs_store_write_sample(s, &x, &err), MBS_ERR_ARGUMENT);  // out of range
  x.index = 6;
  x.nframes_done = 3;
  EXPECT_EQ_INT(mbs_store_write_sample(s, &x, &err), MBS_ERR_ARGUMENT);  // too many frames
  x.nframes_done = 1;
  x.traj = NULL;
  EXPECT_EQ_INT(mbs_store_write_sample(s, &x, &err), MBS_ERR_ARGUMENT);  // no values
  x.traj = traj;
  EXPECT_OK(mbs_store_write_sample(s, &x, &err));  // the refusals left the store usable
  EXPECT_EQ_INT(mbs_store_set_attribute(s, "mbstudy_format", "2", &err), MBS_ERR_ARGUMENT);
  // an attribute far above HDF5's 64 KiB compact limit (a whole study specification)
  const size_t big = 200000;
  char* spec = malloc(big + 1);
  for (size_t i = 0; spec && i < big; i++) spec[i] = (char)('a' + i % 26);
  if (spec) spec[big] = '\0';
  if (spec) EXPECT_OK(mbs_store_set_attribute(s, "specification", spec, &err));
  EXPECT_OK(mbs_store_close(s, &err));
  if (spec) {
    char* back = malloc(big + 2);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT_TRUE(back && read_attr_str(f, "/", "specification", back, big + 2) == 0 &&
                strcmp(back, spec) == 0);
    H5Fclose(f);
    free(back);
    free(spec);
  }
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  long n = 0;
  uint8_t* done = read_all(file, "/status/done", H5T_NATIVE_UINT8, 1, &n);
  double* t = read_f64(file, "/trajectories/x", 20);
  for (int i = 0; done && i < 10; i++) EXPECT_EQ_INT(done[i], i == 5 || i == 6);
  if (t) {
    EXPECT_TRUE(t[10] == 1 && t[11] == 2 && t[12] == 1 && isnan(t[13]) && isnan(t[0]));
  }
  double* mean = read_f64(file, "/statistics/x/mean", 2);
  if (mean) EXPECT_TRUE(mean[0] == 1 && mean[1] == 2);
  free(done);
  free(t);
  free(mean);
  expect_attr(file, "/", "mbstudy_format", "1");
  H5Fclose(file);
  unlink(path);
}

static void test_existing(void) {
  const char* path = "test_store_existing.h5";
  mbs_error err;
  mbs_error_clear(&err);
  mbs_store* s = tiny_store(path, 1, &err);
  EXPECT_TRUE(s != NULL);
  const double v[2] = {7, 8};
  const double* traj[1] = {v};
  mbs_store_sample x = {0};
  x.index = 2;
  x.nframes_done = 2;
  x.traj = traj;
  EXPECT_OK(mbs_store_write_sample(s, &x, &err));
  EXPECT_OK(mbs_store_close(s, &err));
  // refused without force, and the file is kept as it was
  mbs_error_clear(&err);
  s = tiny_store(path, 0, &err);
  EXPECT_TRUE(s == NULL);
  EXPECT_EQ_INT(err.code, MBS_ERR_IO);
  EXPECT_TRUE(strstr(err.message, path) != NULL && strstr(err.message, "--force") != NULL);
  printf("existing file: %s\n", err.message);
  mbs_store_close(s, &err);  // NULL is accepted
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  double* t = read_f64(file, "/trajectories/x", 20);
  if (t) EXPECT_TRUE(t[4] == 7 && t[5] == 8);
  free(t);
  H5Fclose(file);
  // replaced with force
  s = tiny_store(path, 1, &err);
  EXPECT_TRUE(s != NULL);
  EXPECT_OK(mbs_store_close(s, &err));
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  t = read_f64(file, "/trajectories/x", 20);
  if (t) EXPECT_TRUE(isnan(t[4]) && isnan(t[5]));
  free(t);
  int64_t* cnt = read_i64(file, "/statistics/x/count", 2);
  if (cnt) EXPECT_TRUE(cnt[0] == 0 && cnt[1] == 0);
  free(cnt);
  H5Fclose(file);
  unlink(path);
}

static void test_errors(const study* st) {
  mbs_error err;
  mbs_store_quantity q[2];
  mbs_store_attribute attrs[4];
  const char* path = "test_store_bad.h5";
  unlink(path);
  struct {
    const char* what;
    int field;
  } cases[] = {{"no frames", 0},          {"percentile above 100", 1}, {"name 'scalars'", 2},
               {"duplicate quantity", 3}, {"name clash with a scale", 4}, {"empty segment", 5},
               {"absolute name", 6},      {"no components", 7},        {"negative chunk", 8}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mbs_store_layout L = small_layout(st, q, attrs);
    double bad_pct[NPCT];
    memcpy(bad_pct, pct, sizeof pct);
    switch (cases[c].field) {
      case 0: L.nframes = 0; break;
      case 1: bad_pct[2] = 101; L.percentiles = bad_pct; break;
      case 2: q[1].name = "scalars/x"; break;
      case 3: q[1].name = "q"; break;
      case 4: q[1].name = "q_components"; break;
      case 5: q[1].name = "a//b"; break;
      case 6: q[1].name = "/a"; break;
      case 7: q[1].ncomp = 0; break;
      case 8: L.samples_per_chunk = -1; break;
    }
    mbs_error_clear(&err);
    mbs_store* s = mbs_store_create(path, &L, 1, &err);
    EXPECT_TRUE(s == NULL);
    EXPECT_EQ_INT(err.code, MBS_ERR_ARGUMENT);
    EXPECT_TRUE(strstr(err.message, path) != NULL);
    if (s) mbs_store_close(s, &err);
    struct stat sb;
    EXPECT_TRUE(stat(path, &sb) != 0);  // nothing was created
    if (c == 4) printf("bad layout (%s): %s\n", cases[c].what, err.message);
  }
  // HDF5's own failure: a folder that does not exist
  mbs_store_layout L = small_layout(st, q, attrs);
  const char* nowhere = "no_such_folder_for_test_store/x.h5";
  mbs_error_clear(&err);
  mbs_store* s = mbs_store_create(nowhere, &L, 0, &err);
  EXPECT_TRUE(s == NULL);
  EXPECT_EQ_INT(err.code, MBS_ERR_IO);
  EXPECT_TRUE(strstr(err.message, nowhere) != NULL && strstr(err.message, "create") != NULL);
  printf("unwritable path: %s\n", err.message);
}

// a value of sample i, frame f, component c of the large studies (no storage needed)
static double big_value(long i, int f, int c) {
  return sin(0.001 * (double)i * (c + 1) + 0.3 * f) +
         1e-3 * (double)((i * 7919 + f * 31 + c) % 1000);
}

static void test_large(void) {
  const int quick = getenv("MBS_TEST_QUICK") != NULL;
  const long ns = quick ? 6000 : 20000;
  const int nf = 11;
  double times[11];
  for (int f = 0; f < nf; f++) times[f] = 0.01 * f;
  static const char* c3[3] = {"x", "y", "z"};
  static const char* c2[2] = {"a", "b"};
  const mbs_store_quantity q[2] = {{"com", 3, c3, "m", NULL}, {"grf", 2, c2, "N", NULL}};
  const double levels[3] = {10, 50, 90};
  // default chunking (~256 KiB), then a requested chunk above the 1 MiB cap
  const int requests[2] = {0, 100000};
  const long expect_spc[2] = {256 * 1024 / (11 * 3 * 8), 1024 * 1024 / (11 * 3 * 8)};
  for (int run = 0; run < 2; run++) {
    const char* path = "test_store_large.h5";
    mbs_store_layout L = {0};
    L.nsamples = run == 0 ? ns : 5000;
    L.nframes = nf;
    L.times = times;
    L.nquantities = 2;
    L.quantities = q;
    L.npercentiles = 3;
    L.percentiles = levels;
    L.samples_per_chunk = requests[run];
    mbs_error err;
    mbs_error_clear(&err);
    mbs_store* s = mbs_store_create(path, &L, 1, &err);
    EXPECT_TRUE(s != NULL);
    if (!s) {
      fprintf(stderr, "%s\n", err.message);
      return;
    }
    double v0[11 * 3], v1[11 * 2];
    const double* traj[2] = {v0, v1};
    int rc = 0;
    for (long i = 0; i < L.nsamples && !rc; i++) {
      for (int f = 0; f < nf; f++) {
        for (int c = 0; c < 3; c++) v0[f * 3 + c] = big_value(i, f, c);
        for (int c = 0; c < 2; c++) v1[f * 2 + c] = -big_value(i, f, c);
      }
      mbs_store_sample x = {0};
      x.index = i;
      x.status = i % 97 == 13 ? MBS_ERR_NAN : 0;
      x.message = x.status ? "state became NaN" : "";
      x.nframes_done = nf;
      x.traj = traj;
      rc = mbs_store_write_sample(s, &x, &err);
    }
    EXPECT_OK(rc);
    EXPECT_OK(mbs_store_close(s, &err));
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hsize_t ch0[3] = {(hsize_t)expect_spc[run], 11, 3}, ch1[3] = {(hsize_t)expect_spc[run], 11, 2};
    expect_chunk(file, "/trajectories/com", 3, ch0, -1);
    expect_chunk(file, "/trajectories/grf", 3, ch1, -1);
    printf("%ld samples, samples_per_chunk %d: chunks of %ld samples (%ld bytes)\n", L.nsamples,
           requests[run], expect_spc[run], expect_spc[run] * 11 * 3 * 8);
    if (run == 0) {
      // statistics of a few columns against the reference
      double* mean = read_f64(file, "/statistics/com/mean", nf * 3);
      double* sd = read_f64(file, "/statistics/com/std", nf * 3);
      double* pc = read_f64(file, "/statistics/com/percentile", 3 * nf * 3);
      double* col = malloc((size_t)ns * sizeof *col);
      const int fcs[3][2] = {{0, 0}, {5, 1}, {10, 2}};
      for (int k = 0; mean && sd && pc && col && k < 3; k++) {
        const int f = fcs[k][0], c = fcs[k][1];
        long n = 0;
        for (long i = 0; i < ns; i++)
          if (i % 97 != 13) col[n++] = big_value(i, f, c);
        ref_stats r = reference(col, n, levels, 3);
        EXPECT_NEAR(mean[f * 3 + c], r.mean, 1e-12);
        EXPECT_NEAR(sd[f * 3 + c], r.std, 1e-11);
        for (int p = 0; p < 3; p++) EXPECT_NEAR(pc[p * nf * 3 + f * 3 + c], r.pct[p], 1e-14);
      }
      free(col);
      free(mean);
      free(sd);
      free(pc);
    }
    H5Fclose(file);
    unlink(path);
  }
}

// one sample larger than 1 MiB: chunks of one sample and part of the frames
static void test_huge_sample(void) {
  const char* path = "test_store_huge.h5";
  const int nf = 50000;
  double* times = malloc(nf * sizeof *times);
  double* v = malloc((size_t)nf * 3 * sizeof *v);
  if (!times || !v) return;
  for (int f = 0; f < nf; f++) times[f] = 1e-4 * f;
  static const char* c3[3] = {"x", "y", "z"};
  const mbs_store_quantity q = {"p", 3, c3, "m", NULL};
  const double levels[1] = {50};
  mbs_store_layout L = {0};
  L.nsamples = 3;
  L.nframes = nf;
  L.times = times;
  L.nquantities = 1;
  L.quantities = &q;
  L.npercentiles = 1;
  L.percentiles = levels;
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  for (long i = 0; s && i < 3; i++) {
    for (int m = 0; m < nf * 3; m++) v[m] = (double)i + 1e-6 * m;
    const double* traj[1] = {v};
    mbs_store_sample x = {0};
    x.index = i;
    x.nframes_done = nf;
    x.traj = traj;
    EXPECT_OK(mbs_store_write_sample(s, &x, &err));
  }
  EXPECT_OK(mbs_store_close(s, &err));
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hsize_t ch[3] = {1, 1024 * 1024 / 24, 3};
  expect_chunk(file, "/trajectories/p", 3, ch, -1);
  double* t = read_f64(file, "/trajectories/p", 3L * nf * 3);
  if (t) EXPECT_TRUE(t[2L * nf * 3 + 7] == 2 + 1e-6 * 7 && t[nf * 3 - 1] == 1e-6 * (nf * 3 - 1));
  double* med = read_f64(file, "/statistics/p/percentile", nf * 3);
  if (med) EXPECT_TRUE(med[100] == 1 + 1e-6 * 100);
  free(t);
  free(med);
  H5Fclose(file);
  unlink(path);
  free(times);
  free(v);
}

// no parameters, scalars, quantities or percentiles
static void test_empty(void) {
  const char* path = "test_store_empty.h5";
  const double times[1] = {0};
  mbs_store_layout L = {0};
  L.nsamples = 4;
  L.nframes = 1;
  L.times = times;
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  mbs_store_sample x = {0};
  x.index = 1;
  x.status = MBS_ERR_ASSEMBLY;
  x.message = "constraints cannot be satisfied";
  EXPECT_OK(mbs_store_write_sample(s, &x, &err));
  EXPECT_OK(mbs_store_close(s, &err));
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hsize_t pd[2] = {4, 0};
  expect_dims(file, "/parameters", 2, pd);
  EXPECT_TRUE(H5Lexists(file, "/trajectories", H5P_DEFAULT) > 0);
  EXPECT_TRUE(H5Lexists(file, "/scalars", H5P_DEFAULT) > 0);
  EXPECT_TRUE(H5Lexists(file, "/statistics", H5P_DEFAULT) > 0);
  EXPECT_TRUE(H5Lexists(file, "/statistics/percentiles", H5P_DEFAULT) == 0);
  long n = 0;
  int32_t* code = read_all(file, "/status/code", H5T_NATIVE_INT32, 4, &n);
  if (code) EXPECT_TRUE(code[1] == MBS_ERR_ASSEMBLY && code[0] == 0);
  free(code);
  H5Fclose(file);
  unlink(path);
}

// deflate only where it pays: a quantity of repeated values (rounded to 1/8) is compressed, one
// of random doubles (no redundancy in the mantissa) is stored plain; both read back exactly
static void test_compression_choice(void) {
  const char* path = "test_store_compression.h5";
  enum { CS = 40, CF = 50 };
  double times[CF];
  for (int f = 0; f < CF; f++) times[f] = 0.1 * f;
  const char* c2[2] = {"a", "b"};
  const mbs_store_quantity qs[2] = {{"steps", 2, c2, "m", NULL}, {"noise", 2, c2, "m", NULL}};
  mbs_store_layout L = {0};
  L.nsamples = CS;
  L.nframes = CF;
  L.times = times;
  L.nquantities = 2;
  L.quantities = qs;
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) return;
  mbs_test_rng rng = {4242};
  static double a[CS][CF * 2], b[CS][CF * 2];
  for (int i = 0; i < CS; i++) {
    for (int k = 0; k < CF * 2; k++) {
      a[i][k] = floor(8 * sin(0.05 * k + i)) / 8;
      b[i][k] = mbs_test_uniform(&rng, -1, 1);
    }
    const double* traj[2] = {a[i], b[i]};
    mbs_store_sample x = {0};
    x.index = i;
    x.nframes_done = CF;
    x.traj = traj;
    EXPECT_OK(mbs_store_write_sample(s, &x, &err));
  }
  EXPECT_OK(mbs_store_close(s, &err));
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  char how[256];
  EXPECT_EQ_INT(read_attr_str(file, "/trajectories/steps", "compression", how, sizeof how), 0);
  printf("repeated values: %s\n", how);
  EXPECT_TRUE(strncmp(how, "shuffle + deflate", 17) == 0);
  EXPECT_EQ_INT(read_attr_str(file, "/trajectories/noise", "compression", how, sizeof how), 0);
  printf("random doubles: %s\n", how);
  EXPECT_TRUE(strncmp(how, "none", 4) == 0);
  long n = 0;
  double* ra = read_all(file, "/trajectories/steps", H5T_NATIVE_DOUBLE, sizeof(double), &n);
  double* rb = read_all(file, "/trajectories/noise", H5T_NATIVE_DOUBLE, sizeof(double), &n);
  EXPECT_TRUE(ra && rb && memcmp(ra, a, sizeof a) == 0 && memcmp(rb, b, sizeof b) == 0);
  free(ra);
  free(rb);
  H5Fclose(file);
  unlink(path);
}

// the disk fills up (a file size limit): a write or the close fails with a message naming the
// file, later samples are refused, and close frees everything
static void test_write_failure(void) {
  const char* path = "test_store_full.h5";
  struct rlimit old;
  if (getrlimit(RLIMIT_FSIZE, &old) != 0) return;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  const int nf = 200, nc = 20;
  double* times = malloc(nf * sizeof *times);
  double* v = malloc((size_t)nf * nc * sizeof *v);
  if (!times || !v) return;
  for (int f = 0; f < nf; f++) times[f] = 0.01 * f;
  const mbs_store_quantity q = {"q", nc, NULL, "rad", NULL};
  const double levels[1] = {50};
  mbs_store_layout L = {0};
  L.nsamples = 400;
  L.nframes = nf;
  L.times = times;
  L.nquantities = 1;
  L.quantities = &q;
  L.npercentiles = 1;
  L.percentiles = levels;
  mbs_error err;
  mbs_error_clear(&err);
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  struct rlimit lim = old;
  lim.rlim_cur = 256 * 1024;  // the file may not grow past 256 KiB
  setrlimit(RLIMIT_FSIZE, &lim);
  int rc = 0;
  long i = 0;
  for (; s && i < L.nsamples && !rc; i++) {
    for (int m = 0; m < nf * nc; m++)
      v[m] = sin(0.37 * (double)(i * nf * nc + m));  // incompressible
    const double* traj[1] = {v};
    mbs_store_sample x = {0};
    x.index = i;
    x.nframes_done = nf;
    x.traj = traj;
    rc = mbs_store_write_sample(s, &x, &err);
  }
  if (rc) {
    EXPECT_EQ_INT(rc, MBS_ERR_IO);
    EXPECT_TRUE(strstr(err.message, path) != NULL);
    printf("disk full while writing sample %ld: %s\n", i - 1, err.message);
    mbs_store_sample x = {0};
    x.index = i + 1;
    EXPECT_EQ_INT(mbs_store_write_sample(s, &x, &err), MBS_ERR_IO);  // the store is broken
  }
  const int rc2 = mbs_store_close(s, &err);
  EXPECT_TRUE(rc != 0 || rc2 != 0);
  EXPECT_TRUE(rc2 == 0 || strstr(err.message, path) != NULL);
  if (!rc) printf("disk full at close: %s\n", err.message);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  unlink(path);
  free(times);
  free(v);
}

// A study whose sample count is known only at its end: made for 1000 samples (one block of
// many), 7 written, the axis cut to 7. Every per-sample dataset has 7 rows, the values written
// read back, the statistics are over the 7, and a cut that would lose a written sample or
// grow the axis is refused.
static void test_truncate(void) {
  const char* path = "test_store_truncate.h5";
  static const double times[3] = {0, 0.5, 1};
  static const char* c[2] = {"a", "b"};
  static const mbs_store_quantity q = {"x", 2, c, "m", NULL};
  static const char* pn[1] = {"p"};
  static const char* pu[1] = {"kg"};
  static const char* sn[1] = {"s"};
  static const char* su[1] = {"1"};
  mbs_store_layout L = {0};
  L.nsamples = 1000;
  L.nparams = 1;
  L.param_names = pn;
  L.param_units = pu;
  L.nframes = 3;
  L.times = times;
  L.nquantities = 1;
  L.quantities = &q;
  L.nscalars = 1;
  L.scalar_names = sn;
  L.scalar_units = su;
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) return;
  double traj[6], sum = 0;
  for (long i = 0; i < 7; i++) {
    for (int k = 0; k < 6; k++) traj[k] = 10.0 * (double)i + k;
    const double p = (double)i, sc = 2.0 * (double)i;
    const double* tr[1] = {traj};
    const mbs_store_sample smp = {i, &p, 0, "", 0.1, 5, 3, tr, &sc};
    EXPECT_OK(mbs_store_write_sample(s, &smp, &err));
    sum += sc;
  }
  EXPECT_TRUE(mbs_store_truncate(s, 6, &err) == MBS_ERR_ARGUMENT);     // would lose sample 6
  EXPECT_TRUE(mbs_store_truncate(s, 1001, &err) == MBS_ERR_ARGUMENT);  // would grow
  EXPECT_OK(mbs_store_truncate(s, 7, &err));
  EXPECT_OK(mbs_store_close(s, &err));
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_TRUE(f >= 0);
  if (f < 0) return;
  const char* per[] = {"/samples", "/parameters", "/status/code", "/status/done", "/scalars/s"};
  for (int i = 0; i < 5; i++) {
    long n = 0;
    double* v = read_all(f, per[i], H5T_NATIVE_DOUBLE, 8, &n);
    EXPECT_EQ_INT((int)n, 7);
    free(v);
  }
  long n = 0;
  double* x = read_all(f, "/trajectories/x", H5T_NATIVE_DOUBLE, 8, &n);
  EXPECT_EQ_INT((int)n, 7 * 6);
  int ok = x != NULL;
  for (long i = 0; ok && i < 7; i++)
    for (int k = 0; k < 6; k++) ok = ok && x[i * 6 + k] == 10.0 * (double)i + k;
  EXPECT_TRUE(ok);
  free(x);
  double* mean = read_all(f, "/statistics/scalars/s/mean", H5T_NATIVE_DOUBLE, 8, &n);
  EXPECT_TRUE(mean && n == 1 && fabs(mean[0] - sum / 7) < 1e-12);
  free(mean);
  H5Fclose(f);
  unlink(path);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  study* st = malloc(sizeof *st);
  if (!st) return 2;
  make_study(st);
  if (argc >= 3 && strcmp(argv[1], "--example") == 0) {
    const int rc = write_small(argv[2], st, 1);
    free(st);
    H5close();
    if (rc == 0) printf("wrote %s\n", argv[2]);
    return rc ? EXIT_FAILURE : EXIT_SUCCESS;
  }
  // a folder of its own: the same program may run twice at once (plain and under valgrind)
  char dir[] = "/tmp/mbs_test_store_XXXXXX";
  if (!mkdtemp(dir) || chdir(dir) != 0) {
    printf("cannot make a temporary folder\n");
    free(st);
    return 2;
  }
  test_small(st);
  test_truncate();
  test_order();
  test_existing();
  test_errors(st);
  test_large();
  test_huge_sample();
  test_empty();
  test_compression_choice();
  test_write_failure();
  free(st);
  H5close();
  if (chdir("/") != 0 || rmdir(dir) != 0) printf("could not remove %s\n", dir);
  return mbs_test_finish("test_store");
}
