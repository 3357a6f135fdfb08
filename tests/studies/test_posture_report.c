// The posture study's report on a synthetic result file written with the store: a grid of
// 2 joint modes x 3 knee flexions x 2 directions x 4 platform displacements in shuffled sample
// order, time to fall from a known formula, one failed sample and one never written. The grid
// read back from /posture holds 1 - exp(-T^2) of the formula in every cell (NaN for the two
// bad samples) with its dimension scales and labels; the picture is a 1400 x 900 PNG in the
// palette's colours; the Markdown table has one row per mode, knee and direction; running the
// report twice replaces /posture; the table read on its own (read-only) holds the same grid; a
// file without the stability index, a missing file and an unwritable picture are refused with
// messages naming the file.
//
//   test_posture_report [--png FILE]   also keep a copy of the picture as FILE
#define _GNU_SOURCE  // RTLD_DEFAULT
#include <cairo.h>
#include <dlfcn.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbs/posture_table.h"
#include "../../jobs/posture_report.h"
#include "mbs/store.h"
#include "mbs_test.h"

enum { NM = 2, NK = 3, ND = 2, NG = 4, NCELL = NM * NK * ND * NG };
static const double modes[NM] = {0, 1};
static const double knees[NK] = {1, 15, 30};
static const double dirs[ND] = {0, 180};
static const double mags[NG] = {0.02, 0.04, 0.06, 0.08};
static const double duration = 3;
static const long failed_sample = 10, missing_sample = 20;

static double fall_time(int m, int k, int d, int g) {
  const double T = (modes[m] == 1 ? 2.0 : 0.8) * (0.04 / mags[g]) * (dirs[d] == 0 ? 1.0 : 0.75) *
                   (1 + knees[k] / 60);
  return fmin(T, duration);
}

static int cell_of(int m, int k, int d, int g) { return ((m * NK + k) * ND + d) * NG + g; }

static void cell_indices(int c, int* m, int* k, int* d, int* g) {
  *g = c % NG;
  c /= NG;
  *d = c % ND;
  c /= ND;
  *k = c % NK;
  *m = c / NK;
}

// perm[sample] = the grid cell of the sample
static int perm[NCELL];

static void make_study(const char* path, int with_stability_index) {
  mbs_test_rng rng = {0x9E3779B97F4A7C15ULL};
  for (int i = 0; i < NCELL; i++) perm[i] = i;
  for (int i = NCELL - 1; i > 0; i--) {
    int j = (int)mbs_test_uniform(&rng, 0, i + 1);
    if (j > i) j = i;
    const int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  // the posture parameters among others, not in the grid's order
  const char* pnames[] = {"/bodyset/pelvis/mass", "posture/magnitude", "posture/mode",
                          "posture/direction", "posture/knee_flexion"};
  const char* punits[] = {"kg", "m", "1", "deg", "deg"};
  const char* snames[] = {"time_to_fall", "stability_index"};
  const char* sunits[] = {"s", "1"};
  const mbs_store_attribute attrs[] = {
      {"study", "posture"},
      {"fall_criterion", "the model falls when its pelvis drops below 3/4 of its height in "
                         "quiet standing"},
      {"simulated_duration", "3"},
      {"model", "synthetic_standing_human"},
  };
  const double times[1] = {0};
  mbs_store_layout L;
  memset(&L, 0, sizeof L);
  L.nsamples = NCELL;
  L.nparams = 5;
  L.param_names = pnames;
  L.param_units = punits;
  L.nframes = 1;
  L.times = times;
  L.nscalars = with_stability_index ? 2 : 1;
  L.scalar_names = snames;
  L.scalar_units = sunits;
  L.nattributes = 4;
  L.attributes = attrs;
  mbs_error err;
  mbs_store* s = mbs_store_create(path, &L, 1, &err);
  EXPECT_TRUE(s != NULL);
  if (!s) {
    printf("store: %s\n", err.message);
    return;
  }
  for (long i = 0; i < NCELL; i++) {
    if (i == missing_sample) continue;
    int m, k, d, g;
    cell_indices(perm[i], &m, &k, &d, &g);
    const double params[5] = {75 + i, mags[g], modes[m], dirs[d], knees[k]};
    double T = fall_time(m, k, d, g);
    if (i == failed_sample) T = 0.123;  // values of a failed sample must not be used
    const double scalars[2] = {T, 1 - exp(-T * T)};
    mbs_store_sample x;
    memset(&x, 0, sizeof x);
    x.index = i;
    x.params = params;
    x.status = i == failed_sample ? -1 : 0;
    x.message = i == failed_sample ? "synthetic failure" : "";
    x.nframes_done = 1;
    x.scalars = scalars;
    EXPECT_OK(mbs_store_write_sample(s, &x, &err));
  }
  EXPECT_OK(mbs_store_close(s, &err));
}

static void read_doubles(hid_t f, const char* name, double* out, int n) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  EXPECT_TRUE(d >= 0);
  if (d < 0) return;
  hid_t sp = H5Dget_space(d);
  EXPECT_EQ_INT(H5Sget_simple_extent_npoints(sp), n);
  if (H5Sget_simple_extent_npoints(sp) == n)
    EXPECT_TRUE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
  H5Sclose(sp);
  H5Dclose(d);
}

// a scalar variable-length UTF-8 string attribute (units: h5py reads them as str)
static void expect_units(hid_t f, const char* obj, const char* units) {
  hid_t a = H5Aopen_by_name(f, obj, "units", H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_TRUE(a >= 0);
  if (a < 0) return;
  hid_t t = H5Aget_type(a);
  EXPECT_TRUE(H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0);
  EXPECT_TRUE(H5Tget_cset(t) == H5T_CSET_UTF8);
  char buf[64] = "";
  char* s = NULL;
  hid_t mt = H5Tcopy(H5T_C_S1);
  H5Tset_size(mt, H5T_VARIABLE);
  H5Tset_cset(mt, H5T_CSET_UTF8);
  EXPECT_TRUE(H5Aread(a, mt, &s) >= 0);
  if (s) snprintf(buf, sizeof buf, "%s", s);
  if (s) H5free_memory(s);
  if (strcmp(buf, units)) printf("%s: units '%s', expected '%s'\n", obj, buf, units);
  EXPECT_TRUE(!strcmp(buf, units));
  H5Tclose(mt);
  H5Tclose(t);
  H5Aclose(a);
}

static void check_group(const char* path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_TRUE(f >= 0);
  if (f < 0) return;
  double si[NCELL], T[NCELL];
  int64_t sample[NCELL];
  read_doubles(f, "/posture/stability_index", si, NCELL);
  read_doubles(f, "/posture/time_to_fall", T, NCELL);
  hid_t d = H5Dopen2(f, "/posture/samples", H5P_DEFAULT);
  EXPECT_TRUE(d >= 0 && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, sample) >= 0);
  if (d >= 0) H5Dclose(d);
  int bad = 0, nan_cells = 0;
  for (long i = 0; i < NCELL; i++) {
    int m, k, dd, g;
    const int c = perm[i];
    cell_indices(c, &m, &k, &dd, &g);
    const double Tx = fall_time(m, k, dd, g);
    if (i == failed_sample || i == missing_sample) {
      bad += !(isnan(si[c]) && isnan(T[c]));
      nan_cells++;
      EXPECT_EQ_INT(sample[c], i == failed_sample ? failed_sample : -1);
      continue;
    }
    bad += !(fabs(si[c] - (1 - exp(-Tx * Tx))) < 1e-15 && T[c] == Tx && sample[c] == i);
  }
  EXPECT_EQ_INT(bad, 0);
  EXPECT_EQ_INT(nan_cells, 2);
  // the layout: 4-D, C order, the cell of (mode 1, knee 15, posterior, 6 cm) by hand
  {
    const int c = cell_of(1, 1, 1, 2);
    EXPECT_NEAR(T[c], fmin(3, 2.0 * (0.04 / 0.06) * 0.75 * (1 + 15.0 / 60)), 1e-15);
  }
  // scales, labels, units
  static const char* const axes[4] = {"mode", "knee_flexion", "direction", "magnitude"};
  static const char* const data[3] = {"/posture/stability_index", "/posture/time_to_fall",
                                      "/posture/samples"};
  const hsize_t expect_dims[4] = {NM, NK, ND, NG};
  hid_t scale[4];
  char name[128];
  for (int k = 0; k < 4; k++) {
    snprintf(name, sizeof name, "/posture/%s", axes[k]);
    scale[k] = H5Dopen2(f, name, H5P_DEFAULT);
    EXPECT_TRUE(scale[k] >= 0 && H5DSis_scale(scale[k]) > 0);
    char sname[64] = "";
    H5DSget_scale_name(scale[k], sname, sizeof sname);
    EXPECT_TRUE(!strcmp(sname, axes[k]));
  }
  for (int i = 0; i < 3; i++) {
    hid_t ds = H5Dopen2(f, data[i], H5P_DEFAULT);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[4] = {0, 0, 0, 0};
    EXPECT_EQ_INT(H5Sget_simple_extent_ndims(sp), 4);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    for (int k = 0; k < 4; k++) {
      EXPECT_EQ_INT(dims[k], expect_dims[k]);
      EXPECT_TRUE(H5DSis_attached(ds, scale[k], (unsigned)k) > 0);
      char label[64] = "";
      H5DSget_label(ds, (unsigned)k, label, sizeof label);
      EXPECT_TRUE(!strcmp(label, axes[k]));
    }
    H5Sclose(sp);
    H5Dclose(ds);
  }
  for (int k = 0; k < 4; k++) H5Dclose(scale[k]);
  expect_units(f, "/posture/stability_index", "1");
  expect_units(f, "/posture/time_to_fall", "s");
  expect_units(f, "/posture/knee_flexion", "deg");
  expect_units(f, "/posture/direction", "deg");
  expect_units(f, "/posture/magnitude", "m");
  double v[4];
  read_doubles(f, "/posture/knee_flexion", v, NK);
  for (int k = 0; k < NK; k++) EXPECT_TRUE(v[k] == knees[k]);
  read_doubles(f, "/posture/direction", v, ND);
  for (int k = 0; k < ND; k++) EXPECT_TRUE(v[k] == dirs[k]);
  read_doubles(f, "/posture/magnitude", v, NG);
  for (int k = 0; k < NG; k++) EXPECT_TRUE(v[k] == mags[k]);
  // the mode names as fixed-length UTF-8 strings
  d = H5Dopen2(f, "/posture/mode", H5P_DEFAULT);
  hid_t t = H5Dget_type(d);
  EXPECT_TRUE(H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) == 0 &&
              H5Tget_cset(t) == H5T_CSET_UTF8);
  const size_t w = H5Tget_size(t);
  char* s = calloc(NM, w + 1);
  hid_t mt = H5Tcopy(t);
  H5Tset_size(mt, w + 1);
  H5Tset_strpad(mt, H5T_STR_NULLTERM);
  EXPECT_TRUE(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0);
  EXPECT_TRUE(!strcmp(s, "free") && !strcmp(s + w + 1, "locked"));
  free(s);
  H5Tclose(mt);
  H5Tclose(t);
  H5Dclose(d);
  H5Fclose(f);
}

static void check_png(const char* png) {
  cairo_surface_t* img = cairo_image_surface_create_from_png(png);
  EXPECT_TRUE(cairo_surface_status(img) == CAIRO_STATUS_SUCCESS);
  if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
    printf("%s: %s\n", png, cairo_status_to_string(cairo_surface_status(img)));
    cairo_surface_destroy(img);
    return;
  }
  cairo_surface_flush(img);
  const int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
  EXPECT_EQ_INT(w, 1400);
  EXPECT_EQ_INT(h, 900);
  const int stride = cairo_image_surface_get_stride(img);
  const unsigned char* px = cairo_image_surface_get_data(img);
  // the first three colours of the palette (one per knee flexion) and how much is not white
  const uint32_t want[3] = {0x0072B2, 0xD55E00, 0x009E73};
  long found[3] = {0, 0, 0}, ink = 0;
  enum { NSEEN = 4096 };
  static uint32_t seen[NSEEN];
  int nseen = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const uint32_t c = *(const uint32_t*)(px + (size_t)y * stride + 4 * (size_t)x) & 0xFFFFFF;
      if (c != 0xFFFFFF) ink++;
      for (int i = 0; i < 3; i++) found[i] += c == want[i];
      int known = 0;
      for (int i = 0; i < nseen && !known; i++) known = seen[i] == c;
      if (!known && nseen < NSEEN) seen[nseen++] = c;
    }
  printf("picture %dx%d: %d distinct colours (counted up to %d), %.1f%% not white, palette "
         "pixels %ld %ld %ld\n", w, h, nseen, NSEEN, 100.0 * ink / ((double)w * h), found[0],
         found[1], found[2]);
  EXPECT_TRUE(nseen >= 8);
  EXPECT_TRUE(ink > 0.01 * w * h && ink < 0.5 * w * h);
  for (int i = 0; i < 3; i++) EXPECT_TRUE(found[i] > 100);
  // the background is white at the corners
  EXPECT_TRUE((*(const uint32_t*)px & 0xFFFFFF) == 0xFFFFFF);
  cairo_surface_destroy(img);
}

static void check_table(const char* md) {
  int lines = 0;
  for (const char* p = md; *p; p++) lines += *p == '\n';
  // the summary (caption, blank, header row, rule, rows), a blank, its label, a blank and the
  // grid (header row, rule, rows)
  EXPECT_EQ_INT(lines, 9 + 2 * NM * NK * ND);
  EXPECT_TRUE(strstr(md, "| joints | knee | direction | 2 cm | 4 cm | 6 cm | 8 cm |") != NULL);
  EXPECT_TRUE(strstr(md, "capped at 3") != NULL);
  EXPECT_TRUE(strstr(md, "synthetic_standing_human") != NULL);
  // (locked, 30°, anterior): T = 2 (0.04 / displacement) 1.5, capped at 3: 3, 3, 2, 1.5; it
  // stands up to 4 cm
  char row[256];
  snprintf(row, sizeof row, "| locked | 30° | anterior | 4 cm | %.3f | 3.00 s |\n",
           (2 * (1 - exp(-9.0)) + (1 - exp(-4.0)) + (1 - exp(-1.5 * 1.5))) / 4);
  EXPECT_TRUE(strstr(md, row) != NULL);
  if (!strstr(md, row)) printf("expected the summary row %s", row);
  // (free, 15°, posterior): T = 0.8 (0.04 / 0.02) 0.75 1.25 = 1.5 s at 2 cm: falls there
  int m0, k0, d0, g0;
  cell_indices(perm[failed_sample], &m0, &k0, &d0, &g0);
  if (!(m0 == 0 && k0 == 1 && d0 == 1 && g0 == 0)) {
    snprintf(row, sizeof row, "| free | 15° | posterior | none (falls at 2 cm) |");
    EXPECT_TRUE(strstr(md, row) != NULL);
    if (!strstr(md, row)) printf("expected the summary row %s\n", row);
  }
  // standing the whole 3 s and falling are told apart: the falls with their time
  snprintf(row, sizeof row,
           "| locked | 30° | anterior | %.4f | %.4f | %.4f (falls at 2.00 s) | %.4f (falls at "
           "1.50 s) |\n", 1 - exp(-9.0), 1 - exp(-9.0), 1 - exp(-4.0), 1 - exp(-1.5 * 1.5));
  EXPECT_TRUE(strstr(md, row) != NULL);
  if (!strstr(md, row)) printf("expected the row %s", row);
  // the failed sample's row shows a dash in its column
  int m, k, d, g;
  cell_indices(perm[failed_sample], &m, &k, &d, &g);
  snprintf(row, sizeof row, "| %s | %g° | %s |", m ? "locked" : "free", knees[k],
           d ? "posterior" : "anterior");
  const char* grid = strstr(md, "The stability index by platform displacement");
  EXPECT_TRUE(grid != NULL);
  const char* r = grid ? strstr(grid, row) : NULL;
  EXPECT_TRUE(r != NULL);
  if (r) {
    r += strlen(row);
    for (int i = 0; i < g; i++) r = strchr(r, '|') + 1;
    EXPECT_TRUE(!strncmp(r, " – |", strlen(" – |")));
  }
}

// the table read on its own (include/mbs/posture_table.h), the file opened read-only: the same grid
static void check_table_read(const char* path) {
  mbs_posture_table* t = NULL;
  mbs_error err;
  EXPECT_OK(mbs_posture_table_read(path, 0, &t, &err));
  if (!t) return;
  EXPECT_EQ_INT(t->nsamples, NCELL);
  EXPECT_EQ_INT(t->written, NCELL - 1);
  EXPECT_EQ_INT(t->good, NCELL - 2);
  EXPECT_EQ_INT(t->placed, NCELL - 2);
  EXPECT_EQ_INT(t->ncell, NCELL);
  EXPECT_TRUE(!strcmp(t->model, "synthetic_standing_human") && !strcmp(t->duration, "3"));
  EXPECT_EQ_INT(t->axis[MBS_POSTURE_KNEE].n, NK);
  for (long i = 0; i < NCELL; i++) {
    int m, k, d, g;
    cell_indices(perm[i], &m, &k, &d, &g);
    const size_t c = mbs_posture_table_cell(t, m, k, d, g);
    EXPECT_EQ_INT(t->sample[c], i == missing_sample ? -1 : i);
    const double T = fall_time(m, k, d, g);
    if (i == missing_sample || i == failed_sample) EXPECT_TRUE(isnan(t->stability_index[c]));
    else EXPECT_NEAR(t->stability_index[c], 1 - exp(-T * T), 1e-15);
  }
  mbs_posture_table_free(t);
}

int main(int argc, char** argv) {
  const char* keep = argc > 2 && !strcmp(argv[1], "--png") ? argv[2] : NULL;
  char h5[128], png[128], h5bad[128];
  snprintf(h5, sizeof h5, "posture_report_%ld.h5", (long)getpid());
  snprintf(png, sizeof png, "posture_report_%ld.png", (long)getpid());
  snprintf(h5bad, sizeof h5bad, "posture_report_nosi_%ld.h5", (long)getpid());
  make_study(h5, 1);
  mbs_error err;
  for (int run = 0; run < 2; run++) {  // the second run replaces /posture
    char* md = NULL;
    size_t mdlen = 0;
    FILE* table = open_memstream(&md, &mdlen);
    const int rc = mbs_posture_report(h5, png, table, NULL, &err);
    fclose(table);
    EXPECT_OK(rc);
    if (rc) printf("report: %s\n", err.message);
    if (run == 0) printf("%s", md);
    check_table(md);
    free(md);
    check_group(h5);
    check_png(png);
  }
  EXPECT_OK(mbs_posture_report(h5, NULL, NULL, NULL, &err));  // neither picture nor table
  check_table_read(h5);
  if (keep) {
    FILE* in = fopen(png, "rb");
    FILE* out = fopen(keep, "wb");
    char buf[8192];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    if (in) fclose(in);
    if (out) fclose(out);
    printf("picture kept as %s\n", keep);
  }
  // a picture that cannot be written names its file
  char nowhere[192];
  snprintf(nowhere, sizeof nowhere, "no_such_dir_%ld/figure.png", (long)getpid());
  EXPECT_EQ_INT(mbs_posture_report(h5, nowhere, NULL, NULL, &err), MBS_ERR_IO);
  printf("unwritable picture: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, nowhere) != NULL);
  unlink(h5);
  unlink(png);

  // a study without the stability index
  make_study(h5bad, 0);
  EXPECT_EQ_INT(mbs_posture_report(h5bad, png, NULL, NULL, &err), MBS_ERR_PARSE);
  printf("no stability index: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, h5bad) != NULL);
  EXPECT_TRUE(strstr(err.message, "no /scalars/stability_index") != NULL);
  EXPECT_TRUE(access(png, F_OK) != 0);  // no picture drawn
  unlink(h5bad);
  // a missing file
  char missing[128];
  snprintf(missing, sizeof missing, "/tmp/posture_report_missing_%ld.h5", (long)getpid());
  EXPECT_EQ_INT(mbs_posture_report(missing, png, NULL, NULL, &err), MBS_ERR_IO);
  printf("missing file: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, missing) != NULL);
  mbs_posture_report_cleanup();  // cairo's and fontconfig's caches
  return mbs_test_finish("test_posture_report");
}
