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
//    store refuses further samples, and close still frees everything;
//  - checkpoints: for 38 layouts every per-sample chunk length along samples divides the
//    checkpoint (or is S), as the trajectories' do; a writer syncing after every sample reaches
//    durable counts 8192, 16384 and S, never writes a chunk below a checkpoint again, and gives
//    the datasets of an unsynced writer; files left by a child process that dies after a sync
//    with later samples written (_exit without closing, SIGKILL at random points, a sync every
//    1 to 5000 samples) and by a stopped run closed with its statistics, continued from their
//    durable count by mbs_store_reopen, hold the same datasets and attributes (object
//    references compared as the names they point to) as the uninterrupted file, statistics
//    included, and the failed samples below the count are reported; reopening is refused, the
//    file's bytes unchanged, for a count that is not a checkpoint, samples never written below
//    it, another layout and a chunk with one flipped byte.
// With `--example <file>` it only writes the small study to <file> (for tests/io/check_store.py).
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

// ------------------------------------------------------------------------------------------
// checkpoints: chunk alignment, sync, and a file continued after a crash

static int power_of_two(long v) { return v > 0 && (v & (v - 1)) == 0; }

// the chunk length along samples of dataset `name`; *nfilters receives its filter count
static long chunk_along_samples(hid_t file, const char* name, int* nfilters) {
  long len = -1;
  *nfilters = -1;
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t dcpl = H5Dget_create_plist(d);
  hsize_t ch[3] = {0, 0, 0};
  if (H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 3, ch) > 0) len = (long)ch[0];
  *nfilters = H5Pget_nfilters(dcpl);
  H5Pclose(dcpl);
  H5Dclose(d);
  return len;
}

// Layouts of several samples per chunk, parameter counts, scalars, 1 and 1000 frames and small
// and large sample counts (and one sample larger than 1 MiB): every per-sample dataset's chunk
// length along samples is spc x 2^k (or S) and divides the checkpoint, which spc divides too;
// the checkpoint keeps within 64 KiB of 8-byte rows and 64 MiB of trajectories (unless it is
// one block), and the filters are shuffle + deflate + Fletcher32 as before.
static void test_chunk_alignment(void) {
  const char* path = "test_store_align.h5";
  const int spcs[] = {0, 1, 3, 8, 100, 1000};
  const int nfs[] = {1, 1000, 50000};
  const long nss[] = {5, 37, 50000};
  static const char* pn[7] = {"a", "b", "c", "d", "e", "f", "g"};
  static const char* sn[2] = {"s1", "s2"};
  static const char* c3[3] = {"x", "y", "z"};
  static const char* c2[2] = {"u", "v"};
  const mbs_store_quantity q[2] = {{"p", 3, c3, "m", NULL}, {"f", 2, c2, "N", NULL}};
  double* times = malloc(50000 * sizeof *times);
  if (!times) return;
  for (int f = 0; f < 50000; f++) times[f] = 1e-3 * f;
  long layouts = 0, lo = -1, hi = -1;
  for (size_t a = 0; a < sizeof spcs / sizeof spcs[0]; a++)
    for (size_t b = 0; b < sizeof nfs / sizeof nfs[0]; b++)
      for (size_t c = 0; c < sizeof nss / sizeof nss[0]; c++) {
        const int nf = nfs[b];
        if (nf == 50000 && (a > 1 || c != 1)) continue;  // the large sample: a few layouts
        mbs_store_layout L = {0};
        L.nsamples = nss[c];
        L.nparams = 1 + (int)(layouts % 7);
        L.param_names = pn;
        L.nframes = nf;
        L.times = times;
        L.nquantities = layouts % 3 == 2 ? 1 : 2;
        L.quantities = q;
        L.nscalars = layouts % 2 ? 2 : 0;
        L.scalar_names = sn;
        L.samples_per_chunk = spcs[a];
        const long traj_bytes = (long)nf * (L.nquantities == 2 ? 5 : 3) * 8;
        mbs_error err;
        mbs_store* s = mbs_store_create(path, &L, 1, &err);
        EXPECT_TRUE(s != NULL);
        if (!s) continue;
        const long ckpt = mbs_store_checkpoint_samples(s);
        EXPECT_OK(mbs_store_close(s, &err));
        layouts++;
        if (lo < 0 || ckpt < lo) lo = ckpt;
        if (ckpt > hi) hi = ckpt;
        hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        EXPECT_TRUE(file >= 0);
        if (file < 0) continue;
        int nfil = 0;
        // trajectories: spc samples per chunk (1 when a sample exceeds 1 MiB)
        const long spc = chunk_along_samples(file, "/trajectories/p", &nfil);
        EXPECT_TRUE(spc >= 1 && ckpt % spc == 0 && power_of_two(ckpt / spc));
        if (L.nquantities == 2) {
          EXPECT_EQ_INT(chunk_along_samples(file, "/trajectories/f", &nfil), spc);
        }
        if (spc > 0 && ckpt > spc) {  // the checkpoint's bounds, when it is more than a block
          EXPECT_TRUE(ckpt * 8 <= 64 * 1024 && ckpt * traj_bytes <= 64L * 1024 * 1024);
        }
        const char* per[] = {"/samples", "/parameters", "/status/code", "/status/message",
                             "/status/wall_time", "/status/steps", "/status/done",
                             "/scalars/s1", "/scalars/s2"};
        const int nper = L.nscalars ? 9 : 7;
        for (int i = 0; i < nper; i++) {
          const long len = chunk_along_samples(file, per[i], &nfil);
          EXPECT_TRUE(len >= 1);
          EXPECT_EQ_INT(nfil, 3);  // shuffle, deflate, Fletcher32
          const int ok = len == L.nsamples ||
                         (ckpt % len == 0 && len % spc == 0 && power_of_two(len / spc));
          EXPECT_TRUE(ok);
          if (!ok)
            fprintf(stderr, "  %s: chunks of %ld samples, checkpoint %ld, spc %ld, S %ld\n",
                    per[i], len, ckpt, spc, L.nsamples);
        }
        // the rule's values: 8-byte rows fill 64 KiB in 8192 samples; 1000 frames x 5
        // components of 8 bytes make 40000 bytes a sample, 1677 samples in 64 MiB, and spc is
        // 10 (256 KiB of the larger quantity): 10 x 128; a sample of 1.2 or 2 MB: 1 x 32
        if (spcs[a] == 8 && nf == 1 && c == 2) EXPECT_EQ_INT(ckpt, 8192);
        if (spcs[a] == 0 && nf == 1000 && L.nquantities == 2) EXPECT_EQ_INT(ckpt, 1280);
        if (nf == 50000) EXPECT_EQ_INT(ckpt, 32);
        H5Fclose(file);
      }
  printf("chunk alignment: %ld layouts, checkpoints of %ld to %ld samples\n", layouts, lo, hi);
  unlink(path);
  free(times);
}

// A study of 20000 samples written through checkpoints (of 8192 samples): failed samples
// (status -1 and 2) with part of their frames, NaN values, a compressible and an
// incompressible quantity, and in most files a block of samples never written (SPC samples
// from CK_SKIP, past every checkpoint: what a first run wrote there must not stay in the file
// it continues). Its values are a function of the sample index, so every writer makes the same.
#define CK_NS 20000
#define CK_NF 11
#define CK_SKIP 19984
#define CK_CKPT 8192

typedef struct ck_sample {
  double params[NP], t0[CK_NF * 3], t1[CK_NF * 2], sc[NSC];
  const double* traj[2];
  char msg[96];
} ck_sample;

static const double ck_times[CK_NF] = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};

static int ck_status(long i) { return i % 97 == 13 ? -1 : i % 389 == 5 ? 2 : 0; }

static void ck_make(long i, ck_sample* b, mbs_store_sample* x) {
  mbs_test_rng rng = {(unsigned long long)(i + 1) * 0x9E3779B97F4A7C15ULL};
  const int status = ck_status(i);
  const int nd = status ? (int)(i % CK_NF) : CK_NF;  // a failed sample's frames before it failed
  for (int j = 0; j < NP; j++) b->params[j] = mbs_test_uniform(&rng, 0.5, 2.0) * (j + 1);
  for (int f = 0; f < CK_NF; f++) {
    for (int c = 0; c < 3; c++)  // rounded: compresses
      b->t0[f * 3 + c] = f < nd ? floor(16 * sin(0.3 * f + c + 1e-3 * (double)i)) / 16 : NAN;
    for (int c = 0; c < 2; c++)  // noise in every bit: stored plain
      b->t1[f * 2 + c] = f < nd ? mbs_test_uniform(&rng, -1, 1) * b->params[1] : NAN;
  }
  if (i % 53 == 7) b->t1[5 * 2 + 1] = NAN;
  b->sc[0] = mbs_test_uniform(&rng, 1, 10);
  b->sc[1] = i % 41 == 3 ? NAN : mbs_test_uniform(&rng, 0, 1);
  snprintf(b->msg, sizeof b->msg, "%s", "");
  if (status) snprintf(b->msg, sizeof b->msg, "sample %ld failed at frame %d", i, nd);
  b->traj[0] = b->t0;
  b->traj[1] = b->t1;
  memset(x, 0, sizeof *x);
  x->index = i;
  x->params = b->params;
  x->status = status;
  x->message = b->msg;
  x->wall_time = 1e-3 * (double)(i % 1000 + 1);
  x->steps = 100 + i % 777;
  x->nframes_done = nd;
  x->traj = b->traj;
  x->scalars = b->sc;
}

static mbs_store_layout ck_layout(mbs_store_quantity* q, mbs_store_attribute* attrs,
                                  const char* started) {
  q[0] = (mbs_store_quantity){qnames[0], 3, comps0, qunits[0], NULL};
  q[1] = (mbs_store_quantity){qnames[1], 2, comps1, qunits[1], NULL};
  attrs[0] = (mbs_store_attribute){"study", "monte_carlo"};
  attrs[1] = (mbs_store_attribute){"started_last_run", started};
  attrs[2] = (mbs_store_attribute){"author", author};
  mbs_store_layout L = {0};
  L.nsamples = CK_NS;
  L.nparams = NP;
  L.param_names = pnames;
  L.param_units = punits;
  L.nframes = CK_NF;
  L.times = ck_times;
  L.nquantities = 2;
  L.quantities = q;
  L.nscalars = NSC;
  L.scalar_names = snames;
  L.scalar_units = sunits;
  L.npercentiles = NPCT;
  L.percentiles = pct;
  L.nattributes = 3;
  L.attributes = attrs;
  L.samples_per_chunk = SPC;
  return L;
}

// sample i is written when skipping the block from `skip` (-1: none)
static int ck_written(long i, long skip) { return skip < 0 || i < skip || i >= skip + SPC; }

// samples [from, to) but the block from `skip`
static int ck_write(mbs_store* s, long from, long to, long skip, mbs_error* err) {
  int rc = 0;
  for (long i = from; i < to && !rc; i++) {
    if (!ck_written(i, skip)) continue;
    ck_sample b;
    mbs_store_sample x;
    ck_make(i, &b, &x);
    rc = mbs_store_write_sample(s, &x, err);
  }
  return rc;
}

// what every writer does at the end: the failure count (as the study engine sets it), close
static int ck_finish(mbs_store* s, long skip, mbs_error* err) {
  long failed = 0;
  for (long i = 0; i < CK_NS; i++) failed += ck_written(i, skip) && ck_status(i) != 0;
  char v[32];
  snprintf(v, sizeof v, "%ld", failed);
  const int rc = mbs_store_set_attribute(s, "failed_samples", v, err);
  const int rc2 = mbs_store_close(s, err);
  return rc ? rc : rc2;
}

// the uninterrupted file
static int ck_reference(const char* path, long skip) {
  mbs_store_quantity q[2];
  mbs_store_attribute a[3];
  mbs_store_layout L = ck_layout(q, a, "2024-01-01T00:00:00Z");
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  if (!s) return -1;
  int rc = ck_write(s, 0, CK_NS, skip, &err);
  const int rc2 = ck_finish(s, skip, &err);
  return rc ? rc : rc2;
}

// info as reopening after n samples should give it
static void expect_prefix(const mbs_store_prefix* info, long n) {
  long failed = 0, first = -1;
  for (long i = 0; i < n; i++)
    if (ck_status(i) != 0 && failed++ == 0) first = i;
  EXPECT_EQ_INT(info->failed, failed);
  EXPECT_EQ_INT(info->first_failed, first);
  char msg[96] = "";
  if (first >= 0) snprintf(msg, sizeof msg, "sample %ld failed at frame %d", first,
                           (int)(first % CK_NF));
  EXPECT_TRUE(strcmp(info->first_message, msg) == 0);
}

// ---- comparing two files through HDF5 (not through the store)

#if H5_VERSION_GE(1, 12, 0)
typedef H5O_info2_t test_oinfo;
#else
typedef H5O_info_t test_oinfo;
#endif

typedef struct str_list {
  char** v;
  int* kind;
  long n, cap;
} str_list;

static void str_add(str_list* l, const char* s, int kind) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    l->kind = realloc(l->kind, (size_t)l->cap * sizeof *l->kind);
    if (!l->v || !l->kind) abort();
  }
  l->v[l->n] = strdup(s);
  l->kind[l->n++] = kind;
}

static void str_free(str_list* l) {
  for (long i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  free(l->kind);
  memset(l, 0, sizeof *l);
}

static herr_t visit_obj(hid_t o, const char* name, const test_oinfo* info, void* data) {
  (void)o;
  str_add(data, name, (int)info->type);
  return 0;
}

static herr_t visit_attr(hid_t o, const char* name, const H5A_info_t* info, void* data) {
  (void)o;
  (void)info;
  str_add(data, name, 0);
  return 0;
}

// append to a growing buffer
typedef struct image {
  char* b;
  size_t n, cap;
} image;

static void img_add(image* m, const void* p, size_t n) {
  if (m->n + n > m->cap) {
    m->cap = 2 * (m->n + n) + 64;
    m->b = realloc(m->b, m->cap);
    if (!m->b) abort();
  }
  memcpy(m->b + m->n, p, n);
  m->n += n;
}

static void img_ref(image* m, hid_t loc, const hobj_ref_t* ref) {
  char name[256] = "?";
  H5Rget_name(loc, H5R_OBJECT, ref, name, sizeof name);
  img_add(m, name, strlen(name) + 1);
}

// An attribute as bytes to compare: its class, size and values; object references (of the
// dimension scales' DIMENSION_LIST and REFERENCE_LIST) as the names of the objects, variable-
// length strings as their text, everything else as stored.
static image attr_image(hid_t obj, const char* name) {
  image m = {NULL, 0, 0};
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
  const hssize_t np = H5Sget_simple_extent_npoints(sp);
  const int cls = H5Tget_class(ft);
  const size_t size = H5Tget_size(ft);
  img_add(&m, &cls, sizeof cls);
  img_add(&m, &np, sizeof np);
  if (!strcmp(name, "DIMENSION_LIST")) {  // per axis: a variable-length list of references
    hvl_t* v = calloc((size_t)np, sizeof *v);
    hid_t mt = H5Tvlen_create(H5T_STD_REF_OBJ);
    if (H5Aread(a, mt, v) >= 0)
      for (hssize_t i = 0; i < np; i++) {
        img_add(&m, &v[i].len, sizeof v[i].len);
        for (size_t k = 0; k < v[i].len; k++) img_ref(&m, obj, (hobj_ref_t*)v[i].p + k);
      }
    H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, v);
    H5Tclose(mt);
    free(v);
  } else if (!strcmp(name, "REFERENCE_LIST")) {  // (dataset, axis) pairs
    typedef struct {
      hobj_ref_t ref;
      int dim;
    } ds_ref;
    ds_ref* v = calloc((size_t)np, sizeof *v);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(ds_ref));
    H5Tinsert(mt, "dataset", HOFFSET(ds_ref, ref), H5T_STD_REF_OBJ);
    H5Tinsert(mt, "dimension", HOFFSET(ds_ref, dim), H5T_NATIVE_INT);
    if (H5Aread(a, mt, v) >= 0)
      for (hssize_t i = 0; i < np; i++) {
        img_ref(&m, obj, &v[i].ref);
        img_add(&m, &v[i].dim, sizeof v[i].dim);
      }
    H5Tclose(mt);
    free(v);
  } else if (cls == H5T_STRING && H5Tis_variable_str(ft) > 0) {
    char** v = calloc((size_t)np, sizeof *v);
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5Tget_cset(ft));
    if (H5Aread(a, mt, v) >= 0)
      for (hssize_t i = 0; i < np; i++) img_add(&m, v[i] ? v[i] : "", strlen(v[i] ? v[i] : "") + 1);
    H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, v);
    H5Tclose(mt);
    free(v);
  } else {
    EXPECT_TRUE(H5Tdetect_class(ft, H5T_REFERENCE) <= 0 && H5Tdetect_class(ft, H5T_VLEN) <= 0);
    img_add(&m, &size, sizeof size);
    char* v = calloc((size_t)np + 1, size);
    if (np > 0 && H5Aread(a, ft, v) < 0) img_add(&m, "unreadable", 10);
    img_add(&m, v, (size_t)np * size);
    free(v);
  }
  H5Sclose(sp);
  H5Tclose(ft);
  H5Aclose(a);
  return m;
}

// The two files hold the same objects (names and kinds), the same attributes (names and
// values, but the root's attribute `run_attr` (may be NULL), which describes the run) and
// datasets of the same type, shape and bytes. Returns the number of differences (each printed).
static int compare_files(const char* pa, const char* pb, const char* run_attr) {
  hid_t fa = H5Fopen(pa, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t fb = H5Fopen(pb, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fa < 0 || fb < 0) {
    fprintf(stderr, "  cannot open %s or %s\n", pa, pb);
    if (fa >= 0) H5Fclose(fa);
    if (fb >= 0) H5Fclose(fb);
    return 1;
  }
  int diff = 0;
  str_list oa = {0}, ob = {0};
#if H5_VERSION_GE(1, 12, 0)
  H5Ovisit3(fa, H5_INDEX_NAME, H5_ITER_INC, visit_obj, &oa, H5O_INFO_BASIC);
  H5Ovisit3(fb, H5_INDEX_NAME, H5_ITER_INC, visit_obj, &ob, H5O_INFO_BASIC);
#else
  H5Ovisit2(fa, H5_INDEX_NAME, H5_ITER_INC, visit_obj, &oa, H5O_INFO_BASIC);
  H5Ovisit2(fb, H5_INDEX_NAME, H5_ITER_INC, visit_obj, &ob, H5O_INFO_BASIC);
#endif
  if (oa.n != ob.n) {
    fprintf(stderr, "  %s has %ld objects, %s %ld\n", pa, oa.n, pb, ob.n);
    diff++;
  }
  for (long i = 0; i < oa.n && i < ob.n; i++) {
    if (strcmp(oa.v[i], ob.v[i]) || oa.kind[i] != ob.kind[i]) {
      fprintf(stderr, "  object %ld: %s in %s, %s in %s\n", i, oa.v[i], pa, ob.v[i], pb);
      diff++;
      continue;
    }
    hid_t a = H5Oopen(fa, oa.v[i], H5P_DEFAULT), b = H5Oopen(fb, ob.v[i], H5P_DEFAULT);
    // attributes
    str_list na = {0}, nb = {0};
    H5Aiterate2(a, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_attr, &na);
    H5Aiterate2(b, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_attr, &nb);
    const int root = !strcmp(oa.v[i], ".");
    long ia = 0, ib = 0;
    while (ia < na.n || ib < nb.n) {
      if (root && run_attr && ia < na.n && !strcmp(na.v[ia], run_attr)) {
        ia++;
        continue;
      }
      if (root && run_attr && ib < nb.n && !strcmp(nb.v[ib], run_attr)) {
        ib++;
        continue;
      }
      if (ia >= na.n || ib >= nb.n || strcmp(na.v[ia], nb.v[ib])) {
        fprintf(stderr, "  %s: attribute %s only in one file\n", oa.v[i],
                ia < na.n ? na.v[ia] : nb.v[ib]);
        diff++;
        break;
      }
      image ma = attr_image(a, na.v[ia]), mb = attr_image(b, nb.v[ib]);
      if (ma.n != mb.n || memcmp(ma.b, mb.b, ma.n)) {
        fprintf(stderr, "  %s: attribute %s differs\n", oa.v[i], na.v[ia]);
        diff++;
      }
      free(ma.b);
      free(mb.b);
      ia++;
      ib++;
    }
    str_free(&na);
    str_free(&nb);
    // a dataset's type, shape and bytes
    if (oa.kind[i] == H5O_TYPE_DATASET) {
      hid_t ta = H5Dget_type(a), tb = H5Dget_type(b), sa = H5Dget_space(a), sb = H5Dget_space(b);
      hsize_t da[4] = {0}, db[4] = {0};
      const int ra = H5Sget_simple_extent_dims(sa, da, NULL);
      const int rb = H5Sget_simple_extent_dims(sb, db, NULL);
      int same = H5Tequal(ta, tb) > 0 && H5Tget_size(ta) == H5Tget_size(tb) && ra == rb &&
                 memcmp(da, db, sizeof da) == 0 && H5Tis_variable_str(ta) <= 0;
      const hssize_t np = H5Sget_simple_extent_npoints(sa);
      const size_t bytes = (size_t)np * H5Tget_size(ta);
      char* va = same ? malloc(bytes + 1) : NULL;
      char* vb = same ? malloc(bytes + 1) : NULL;
      if (same && np > 0)
        same = H5Dread(a, ta, H5S_ALL, H5S_ALL, H5P_DEFAULT, va) >= 0 &&
               H5Dread(b, tb, H5S_ALL, H5S_ALL, H5P_DEFAULT, vb) >= 0 &&
               memcmp(va, vb, bytes) == 0;
      if (!same) {
        fprintf(stderr, "  dataset /%s differs between %s and %s\n", oa.v[i], pa, pb);
        diff++;
      }
      free(va);
      free(vb);
      H5Sclose(sa);
      H5Sclose(sb);
      H5Tclose(ta);
      H5Tclose(tb);
    }
    H5Oclose(a);
    H5Oclose(b);
  }
  str_free(&oa);
  str_free(&ob);
  H5Fclose(fa);
  H5Fclose(fb);
  return diff;
}

// Continue `path` after its durable count d as a second run (another started_last_run) that
// skips the block from `skip`: the result must hold the reference's datasets and attributes.
static void ck_continue(const char* path, const char* ref, long d, long skip,
                        const char* what) {
  mbs_store_quantity q[2];
  mbs_store_attribute a[3];
  mbs_store_layout L = ck_layout(q, a, "second run");
  mbs_error err;
  mbs_error_clear(&err);
  mbs_store_prefix info;
  memset(&info, 0x55, sizeof info);
  mbs_store* s = mbs_store_reopen(path, &L, d, &info, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) {
    fprintf(stderr, "  %s: reopen after %ld samples: %s\n", what, d, err.message);
    return;
  }
  expect_prefix(&info, d);
  EXPECT_EQ_INT(mbs_store_checkpoint_samples(s), CK_CKPT);
  long again = -1;
  EXPECT_OK(mbs_store_sync(s, &again, &err));  // nothing new: the count it was reopened with
  EXPECT_EQ_INT(again, d);
  EXPECT_OK(ck_write(s, d, CK_NS, skip, &err));
  EXPECT_OK(ck_finish(s, skip, &err));
  const int diff = compare_files(ref, path, "started_last_run");
  EXPECT_EQ_INT(diff, 0);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  expect_attr(f, "/", "started_last_run", "second run");
  EXPECT_TRUE(H5Aexists(f, "incomplete") == 0 && H5Aexists(f, "merged_samples") == 0);
  H5Fclose(f);
  printf("%s: continued after %ld samples (%ld failed, the first %ld): %s\n", what, d,
         info.failed, info.first_failed, diff ? "DIFFERENT" : "same datasets and attributes");
}

// A child process writes every sample of the study, syncing after every `every`-th, and dies
// right after sample `die` (by _exit without closing, or by SIGKILL) with later samples
// written and not synced: the file is left as a crash leaves it. This process continues it
// from the child's last durable count (passed through a pipe), skipping the block from `skip`.
static void ck_crash(const char* ref, long skip, int every, long die, int kill_it,
                     const char* what) {
  const char* path = "test_store_crash.h5";
  int fds[2];
  if (pipe(fds) != 0) return;
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    close(fds[0]);
    mbs_store_quantity q[2];
    mbs_store_attribute a[3];
    mbs_store_layout L = ck_layout(q, a, "first run");
    mbs_error err;
    mbs_store* s = mbs_store_create(path, &L, 1, &err);
    if (!s) _exit(3);
    long d = 0;
    for (long i = 0; i <= die; i++) {
      if (ck_write(s, i, i + 1, -1, &err)) _exit(4);
      if (i % every) continue;
      long nd = -1;
      if (mbs_store_sync(s, &nd, &err)) _exit(5);
      if (nd != d && write(fds[1], &nd, sizeof nd) != (ssize_t)sizeof nd) _exit(6);
      d = nd;
    }
    if (kill_it) raise(SIGKILL);
    _exit(0);
  }
  close(fds[1]);
  long d = 0, v = 0, changes = 0;
  while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v) {
    EXPECT_TRUE(v > d && (v % CK_CKPT == 0 || v == CK_NS));
    d = v;
    changes++;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (kill_it)
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  else
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(d > 0);
  char label[160];
  snprintf(label, sizeof label, "%s (sync every %d, died after sample %ld, %ld checkpoints)",
           what, every, die, changes);
  if (d > 0) ck_continue(path, ref, d, skip, label);
  unlink(path);
}

// A stopped run: synced along the way, then closed with its marks (as the study engine closes
// a partial file: attributes "incomplete" and "merged_samples", statistics of what it had)
// after writing CK_SKIP too; continued from its durable count, without CK_SKIP.
static void ck_stopped(const char* ref) {
  const char* path = "test_store_stopped.h5";
  mbs_store_quantity q[2];
  mbs_store_attribute a[3];
  mbs_store_layout L = ck_layout(q, a, "first run");
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) return;
  long d = 0;
  for (long i = 0; i < CK_SKIP + 12; i += 4) {
    EXPECT_OK(ck_write(s, i, i + 4, -1, &err));
    EXPECT_OK(mbs_store_sync(s, &d, &err));
  }
  EXPECT_EQ_INT(d, 2 * CK_CKPT);
  EXPECT_OK(mbs_store_set_attribute(s, "incomplete", "yes: stopped", &err));
  EXPECT_OK(mbs_store_set_attribute(s, "merged_samples", "19996", &err));  // CK_SKIP + 12
  EXPECT_OK(mbs_store_set_attribute(s, "failed_samples", "1", &err));
  EXPECT_OK(mbs_store_close(s, &err));
  ck_continue(path, ref, d, CK_SKIP, "stopped run, closed with its statistics");
  unlink(path);
}

static char* file_bytes(const char* path, long* n) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* b = malloc((size_t)*n + 1);
  if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  return b;
}

// reopening `path` after n samples with layout L fails with `code`, a message holding the
// file's name and `needle`, and leaves the file's bytes as they were
static void expect_refused(const char* path, const mbs_store_layout* L, long n, int code,
                           const char* needle) {
  long n0 = 0, n1 = 0;
  char* before = file_bytes(path, &n0);
  mbs_error err;
  mbs_error_clear(&err);
  mbs_store_prefix info;
  mbs_store* s = mbs_store_reopen(path, L, n, &info, &err);
  EXPECT_TRUE(s == NULL);
  if (s) mbs_store_discard(s);
  EXPECT_EQ_INT(err.code, code);
  const int named = strstr(err.message, path) && strstr(err.message, needle);
  EXPECT_TRUE(named);
  if (!named || err.code != code)
    fprintf(stderr, "  refusal after %ld samples: '%s' (expected '%s')\n", n, err.message,
            needle);
  char* after = file_bytes(path, &n1);
  EXPECT_TRUE(before && after && n0 == n1 && memcmp(before, after, (size_t)n0) == 0);
  free(before);
  free(after);
}

// flip one byte in the middle of the chunk of dataset `name` at sample 0 (HDF5 >= 1.10.5)
static int flip_chunk_byte(const char* path, const char* name) {
#if H5_VERSION_GE(1, 10, 5)
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  hsize_t off[3] = {0, 0, 0}, size = 0;
  haddr_t addr = HADDR_UNDEF;
  unsigned mask = 0;
  const herr_t got = H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size);
  H5Dclose(d);
  H5Fclose(f);
  if (got < 0 || addr == HADDR_UNDEF || size == 0) return -1;
  FILE* fp = fopen(path, "r+b");
  if (!fp) return -1;
  const long at = (long)(addr + size / 2);
  fseek(fp, at, SEEK_SET);
  const int c = fgetc(fp);
  fseek(fp, at, SEEK_SET);
  fputc(c ^ 0x10, fp);
  fclose(fp);
  return 0;
#else
  (void)path;
  (void)name;
  return -1;
#endif
}

// Refusals, each leaving the file as it was: a count that is not a checkpoint (or 0, or past
// S), samples never written below the count (/status/done), a layout of other frames, another
// scalar or another sample count, and a damaged chunk below the count (one flipped byte: the
// Fletcher32 checksum) of a trajectory and of /status/code. Undamaged again, it continues.
static void test_reopen_refusals(void) {
  const char* path = "test_store_refuse.h5";
  mbs_store_quantity q[2];
  mbs_store_attribute a[3];
  mbs_store_layout L = ck_layout(q, a, "first run");
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) return;
  EXPECT_EQ_INT(mbs_store_checkpoint_samples(s), CK_CKPT);
  long d = -1;
  EXPECT_OK(mbs_store_sync(s, &d, &err));
  EXPECT_EQ_INT(d, 0);
  for (long i = 0; i < CK_CKPT + 20; i++) {
    EXPECT_OK(ck_write(s, i, i + 1, -1, &err));
    EXPECT_OK(mbs_store_sync(s, &d, &err));
    if (d != (i >= CK_CKPT ? CK_CKPT : 0)) {
      EXPECT_EQ_INT(d, i >= CK_CKPT ? CK_CKPT : 0);
      break;
    }
  }
  mbs_store_discard(s);  // samples 8192 .. 8211 partly written
  expect_refused(path, &L, CK_CKPT + 1, MBS_ERR_ARGUMENT, "multiple of 8192");
  expect_refused(path, &L, 0, MBS_ERR_ARGUMENT, "multiple of 8192");
  expect_refused(path, &L, CK_NS + CK_CKPT, MBS_ERR_ARGUMENT, "multiple of 8192");
  expect_refused(path, &L, 2 * CK_CKPT, MBS_ERR_IO, "/status/done");
  {
    mbs_error e2;
    mbs_store* s2 = mbs_store_reopen(path, &L, 2 * CK_CKPT, NULL, &e2);
    EXPECT_TRUE(s2 == NULL);
    printf("samples never written: %s\n", e2.message);
  }
  {
    double t12[CK_NF + 1];
    for (int f = 0; f <= CK_NF; f++) t12[f] = 0.1 * f;
    mbs_store_layout L2 = L;
    L2.nframes = CK_NF + 1;
    L2.times = t12;
    expect_refused(path, &L2, CK_CKPT, MBS_ERR_ARGUMENT, "/time");
    L2 = L;
    const char* other[NSC] = {"final_energy", "min_knee"};
    L2.scalar_names = other;
    expect_refused(path, &L2, CK_CKPT, MBS_ERR_ARGUMENT, "/scalars/min_knee");
    L2 = L;
    L2.nsamples = CK_NS + 1;
    expect_refused(path, &L2, CK_CKPT, MBS_ERR_ARGUMENT, "/samples");
    L2 = L;
    L2.nscalars = 1;
    expect_refused(path, &L2, CK_CKPT, MBS_ERR_ARGUMENT, "/scalars");
  }
  const char* damaged[] = {"/trajectories/q", "/status/code"};
  for (int k = 0; k < 2; k++) {
    if (flip_chunk_byte(path, damaged[k]) != 0) {
      printf("damaged chunk: HDF5 %d.%d.%d has no H5Dget_chunk_info_by_coord; not tested\n",
             H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
      break;
    }
    expect_refused(path, &L, CK_CKPT, MBS_ERR_IO, damaged[k]);
    mbs_error e2;
    mbs_store* s2 = mbs_store_reopen(path, &L, CK_CKPT, NULL, &e2);
    EXPECT_TRUE(s2 == NULL);
    printf("damaged chunk: %s\n", e2.message);
    flip_chunk_byte(path, damaged[k]);  // repaired
  }
  mbs_store_prefix info;
  s = mbs_store_reopen(path, &L, CK_CKPT, &info, &err);
  EXPECT_TRUE(s != NULL);
  if (s) expect_prefix(&info, CK_CKPT);
  mbs_store_discard(s);
  unlink(path);
}

// Where the chunks holding synced samples are and what they hold, to show that none of them is
// written again after its checkpoint (HDF5 frees the space of a rewritten filtered chunk and
// may reuse it: a crash would then leave the synced samples damaged).
typedef struct chunk_rec {
  int ds;
  hsize_t offset;
  haddr_t addr;
  hsize_t size;
  unsigned char* bytes;
} chunk_rec;

typedef struct chunk_recs {
  chunk_rec* v;
  long n, cap;
  hsize_t next[16];  // per dataset: the first chunk offset not recorded yet
} chunk_recs;

static const char* const ck_chunked[] = {
    "/samples",          "/parameters",  "/status/code",          "/status/message",
    "/status/wall_time", "/status/steps", "/status/done",         "/scalars/final_energy",
    "/scalars/max_knee", "/trajectories/q", "/trajectories/bodies/rod2/position"};
#define CK_NCHUNKED ((int)(sizeof ck_chunked / sizeof ck_chunked[0]))

#if H5_VERSION_GE(1, 10, 5)
// record the chunks holding samples below d that are not recorded yet: `path` is open in this
// process (by the store); opened again (with the store's close degree), HDF5 shares that file
// and its current chunk indexes
static void record_chunks(const char* path, long d, chunk_recs* r) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  const int fd = open(path, O_RDONLY);
  EXPECT_TRUE(f >= 0 && fd >= 0);
  for (int k = 0; f >= 0 && fd >= 0 && k < CK_NCHUNKED; k++) {
    int nfil = 0;
    const long len = chunk_along_samples(f, ck_chunked[k], &nfil);
    hid_t ds = H5Dopen2(f, ck_chunked[k], H5P_DEFAULT);
    for (; len > 0 && r->next[k] < (hsize_t)d; r->next[k] += (hsize_t)len) {
      chunk_rec c = {k, r->next[k], HADDR_UNDEF, 0, NULL};
      hsize_t off[3] = {r->next[k], 0, 0};
      unsigned mask = 0;
      EXPECT_TRUE(H5Dget_chunk_info_by_coord(ds, off, &mask, &c.addr, &c.size) >= 0 &&
                  c.addr != HADDR_UNDEF && c.size > 0);
      c.bytes = malloc(c.size);
      EXPECT_TRUE(c.bytes && pread(fd, c.bytes, c.size, (off_t)c.addr) == (ssize_t)c.size);
      if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->v = realloc(r->v, (size_t)r->cap * sizeof *r->v);
        if (!r->v) abort();
      }
      r->v[r->n++] = c;
    }
    H5Dclose(ds);
  }
  if (fd >= 0) close(fd);
  if (f >= 0) H5Fclose(f);
}

// every recorded chunk is where it was, with its bytes; returns how many moved or changed
static long moved_chunks(const char* path, const chunk_recs* r) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const int fd = open(path, O_RDONLY);
  long moved = 0;
  for (long i = 0; f >= 0 && fd >= 0 && i < r->n; i++) {
    const chunk_rec* c = &r->v[i];
    hid_t ds = H5Dopen2(f, ck_chunked[c->ds], H5P_DEFAULT);
    hsize_t off[3] = {c->offset, 0, 0}, size = 0;
    haddr_t addr = HADDR_UNDEF;
    unsigned mask = 0;
    unsigned char* now = malloc(c->size);
    const int same = H5Dget_chunk_info_by_coord(ds, off, &mask, &addr, &size) >= 0 &&
                     addr == c->addr && size == c->size && now &&
                     pread(fd, now, c->size, (off_t)c->addr) == (ssize_t)c->size &&
                     memcmp(now, c->bytes, c->size) == 0;
    if (!same && moved++ < 5)
      fprintf(stderr, "  %s: the chunk at sample %llu was written again after its checkpoint\n",
              ck_chunked[c->ds], (unsigned long long)c->offset);
    free(now);
    H5Dclose(ds);
  }
  if (fd >= 0) close(fd);
  if (f >= 0) H5Fclose(f);
  return f >= 0 && fd >= 0 ? moved : -1;
}
#endif

static void free_chunks(chunk_recs* r) {
  for (long i = 0; i < r->n; i++) free(r->v[i].bytes);
  free(r->v);
}

// A writer that syncs after every sample: the durable count steps by checkpoints (to S after
// the last sample), no chunk below a checkpoint is written again, and the file holds the same
// datasets and attributes as one written without syncs.
static void ck_synced(const char* ref_full) {
  const char* path = "test_store_synced.h5";
  mbs_store_quantity q[2];
  mbs_store_attribute a[3];
  mbs_store_layout L = ck_layout(q, a, "2024-01-01T00:00:00Z");
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) return;
  chunk_recs rec;
  memset(&rec, 0, sizeof rec);
  long d = 0, prev = 0, steps = 0;
  for (long i = 0; i < CK_NS; i++) {
    EXPECT_OK(ck_write(s, i, i + 1, -1, &err));
    EXPECT_OK(mbs_store_sync(s, &d, &err));
    EXPECT_TRUE(d >= prev && (d % CK_CKPT == 0 || d == CK_NS));
#if H5_VERSION_GE(1, 10, 5)
    if (d > prev) record_chunks(path, d, &rec);
#endif
    steps += d > prev;
    prev = d;
  }
  EXPECT_EQ_INT(d, CK_NS);  // the last sample's sync writes its block
  EXPECT_EQ_INT(steps, 3);
  EXPECT_OK(ck_finish(s, -1, &err));
  EXPECT_EQ_INT(compare_files(ref_full, path, NULL), 0);
#if H5_VERSION_GE(1, 10, 5)
  EXPECT_TRUE(rec.n > 2 * (CK_NS / SPC));
  const long moved = moved_chunks(path, &rec);
  EXPECT_EQ_INT(moved, 0);
  printf("synced after every sample: durable at 8192, 16384, 20000; of the %ld chunks below "
         "those checkpoints, %ld written again\n", rec.n, moved);
#endif
  free_chunks(&rec);
  unlink(path);
}

// The crash and continue tests against uninterrupted files, with and without CK_SKIP.
static void test_continue(void) {
  const char* ref = "test_store_reference.h5";
  const char* ref_full = "test_store_reference_full.h5";
  EXPECT_OK(ck_reference(ref, CK_SKIP));
  EXPECT_OK(ck_reference(ref_full, -1));
  ck_synced(ref_full);
  ck_crash(ref, CK_SKIP, 1, CK_SKIP + 11, 0, "exit without closing");
  ck_crash(ref_full, -1, 1, CK_NS - 1, 0, "exit after the last sample's sync");
  ck_stopped(ref);
  // killed at random points after a sync
  const int quick = getenv("MBS_TEST_QUICK") != NULL;
  mbs_test_rng rng = {20240607};
  const int everies[4] = {1, 7, 300, 5000};
  for (int seed = 0; seed < (quick ? 1 : 4); seed++) {
    const int every = everies[seed % 4];
    const long lo = CK_CKPT + 2L * every + SPC;
    const long die = lo + (long)mbs_test_uniform(&rng, 0, (double)(CK_NS - 1 - lo));
    ck_crash(ref, CK_SKIP, every, die, 1, "killed (SIGKILL)");
  }
  unlink(ref);
  unlink(ref_full);
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
  test_chunk_alignment();
  test_reopen_refusals();
  test_continue();
  free(st);
  H5close();
  if (chdir("/") != 0 || rmdir(dir) != 0) printf("could not remove %s\n", dir);
  return mbs_test_finish("test_store");
}
