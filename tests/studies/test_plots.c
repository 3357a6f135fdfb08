// The pictures of sensitivity and calibration studies (jobs/sensitivity_plot.c,
// jobs/corner_plot.c) drawn from synthetic study files written here with the HDF5 C API, and
// read back as pixels:
// - Sobol' (2 outputs, D = 3): the picture's size from the header's layout; bars of S1 = 0.8
//   and 0.1 in the ratio 8 (heights are linear in the value), a negative estimate drawn below
//   the zero line, a NaN estimate drawn as no bar, ST = 1.1 against 0.35 in the ratio 1.1 / 0.35
//   (the axis extended above 1), panels in the order of the names, not of creation; 15 outputs
//   (one nested, bodies/rod2/position_max): the first 12 in natural order (z_extra_2 before
//   z_extra_10), a failed analysis drawn without bars.
// - Morris (D = 4): the markers' centres are an affine image of (mu_star, sigma): ratios of
//   their pixel differences equal ratios of the values.
// - Calibration (N = 2000 draws of a correlated 2-D Gaussian, mbs_rng): in the 2-D histogram
//   the darkness-weighted centre is the Gaussian's mean, the darkest region is near it, and the
//   shade along the correlation is darker than across it; the 1σ and 2σ ellipses pass through
//   their closed-form extreme points (mean + r (ρσx, σy) and mean + r (σx, ρσy)); the diagonal
//   histograms peak near the mean, fall to exp(-1/2) of the peak one σ away, and have the
//   median line at the mean. Pixel positions come from the axis ranges corner_plot.h promises
//   (the samples' 0.5 and 99.5 % quantiles, computed here and checked against the Gaussian's
//   μ ± 2.5758σ). Twelve parameters (rank-3 samples, some NaN, no mean or covariance): the first
//   ten drawn, no ellipses.
// - String attributes (mbs_results_read_attribute): fixed- and variable-length UTF-8 read back
//   as written, an absent one as NULL, a number refused naming the file.
// - Errors: a file of the other study type, a missing file, a file that is not HDF5, an unknown
//   method, an unwritable picture.
//
//   test_plots [DIR]   write the files into DIR (default /tmp) and keep the pictures there
//
// Random keys (mbs_rng): seed 20240611; sample s of the calibration file draws its two normals
// from stream 0, sample s of the twelve-parameter file its twelve from stream 1.
#include <cairo.h>
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../io/h5_util.h"
#include "../../jobs/corner_plot.h"
#include "../../jobs/plot_util.h"
#include "../../jobs/sensitivity_plot.h"
#include "mbs/results.h"
#include "mbs/sampler.h"
#include "mbs_test.h"

static const uint64_t SEED = 20240611;

// ------------------------------------------------------------------------------------------
// writing study files

static void put_strings(hid_t loc, const char* name, int n, const char* const* v) {
  size_t w = 1;
  for (int i = 0; i < n; i++)
    if (strlen(v[i]) > w) w = strlen(v[i]);
  char* buf = calloc(n > 0 ? (size_t)n : 1, w);
  for (int i = 0; i < n; i++) memcpy(buf + i * w, v[i], strlen(v[i]));
  hid_t t = mbs_h5_str_type(w);
  const hsize_t dim = (hsize_t)n;
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_TRUE(d >= 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  H5Dclose(d);
  H5Sclose(sp);
  H5Tclose(t);
  free(buf);
}

static void put_doubles(hid_t loc, const char* name, int rank, const hsize_t* dims,
                        const double* v) {
  hid_t sp = H5Screate_simple(rank, dims, NULL);
  hid_t d = H5Dcreate2(loc, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_TRUE(d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  H5Dclose(d);
  H5Sclose(sp);
}

static void put_vector(hid_t loc, const char* name, int n, const double* v) {
  const hsize_t dim = (hsize_t)n;
  put_doubles(loc, name, 1, &dim, v);
}

// a group that keeps its links in creation order
static hid_t ordered_group(hid_t loc, const char* name) {
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  return g;
}

static const char* const PNAMES[3] = {"/bodyset/torso/mass",
                                      "/forceset/soleus_r/max_isometric_force",
                                      "/jointset/knee_r/knee_angle_r/range"};

// Sobol' indices of two outputs, created in the order peak_force, hip_range (drawn in the
// order of their names: hip_range first); with `nextra` > 0 also bodies/rod2/position_max (a
// name with slashes: nested groups) with peak_force's values, and z_extra_0 .. z_extra_<nextra-1>
// with hip_range's, except z_extra_0 (the analysis failed: NaN everywhere, the reason in an
// attribute) and z_extra_10, z_extra_11 (S1 NaN)
static const double SOBOL_S1[2][3] = {{0.8, 0.1, -0.05}, {0.3, NAN, 0.5}};
static const double SOBOL_ST[2][3] = {{0.85, 0.2, 0.02}, {0.35, 0.6, 1.1}};

static void make_sobol(const char* path, const char* method, int nextra) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "sensitivity", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  mbs_error err;
  EXPECT_OK(mbs_h5_attr_string(path, &err, g, "method", method));
  put_strings(g, "parameter_names", 3, PNAMES);
  hid_t sc = ordered_group(g, "scalars");
  const double conf1[3] = {0.05, 0.03, 0.04}, conf2[3] = {0.04, 0.05, 0.06};
  const double none[3] = {NAN, NAN, NAN};
  double S2[9];
  for (int i = 0; i < 9; i++) S2[i] = i % 4 == 0 ? NAN : 0.01 * i;
  const hsize_t dd[2] = {3, 3};
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const int nout = 2 + (nextra ? 1 + nextra : 0);
  for (int o = 0; o < nout; o++) {
    char name[48];
    int set = o % 2, failed = 0, s1_nan = 0;
    if (o == 0) snprintf(name, sizeof name, "peak_force");
    else if (o == 1) snprintf(name, sizeof name, "hip_range");
    else if (o == 2) snprintf(name, sizeof name, "bodies/rod2/position_max"), set = 0;
    else {
      const int e = o - 3;
      snprintf(name, sizeof name, "z_extra_%d", e);
      set = 1;
      failed = e == 0;
      s1_nan = e == 10 || e == 11;
    }
    hid_t og = H5Gcreate2(sc, name, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (failed)
      EXPECT_OK(mbs_h5_attr_string(path, &err, og, "analysis_failed",
                                   "z_extra_0: 3 good samples of 64, too few for the indices"));
    put_vector(og, "S1", 3, failed || s1_nan ? none : SOBOL_S1[set]);
    put_vector(og, "S1_conf", 3, failed || s1_nan ? none : conf1);
    put_vector(og, "ST", 3, failed ? none : SOBOL_ST[set]);
    put_vector(og, "ST_conf", 3, failed ? none : conf2);
    put_doubles(og, "S2", 2, dd, S2);
    put_doubles(og, "S2_conf", 2, dd, S2);
    H5Gclose(og);
  }
  H5Pclose(lcpl);
  H5Gclose(sc);
  // trajectory indices: not drawn
  hid_t tg = H5Gcreate2(g, "trajectories", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t qg = H5Gcreate2(tg, "q", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const double junk[6] = {0.9, 0.9, 0.9, 0.9, 0.9, 0.9};
  const hsize_t td[2] = {2, 3};
  put_doubles(qg, "S1", 2, td, junk);
  H5Gclose(qg);
  H5Gclose(tg);
  H5Gclose(g);
  H5Fclose(f);
}

static const double MORRIS_MS[4] = {2.0, 0.5, 1.0, 0.0};
static const double MORRIS_SG[4] = {0.3, 1.5, 0.8, 0.0};

static void make_morris(const char* path) {
  const char* names[4] = {PNAMES[0], PNAMES[1], PNAMES[2], "/bodyset/pelvis/mass"};
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "sensitivity", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  mbs_error err;
  EXPECT_OK(mbs_h5_attr_string(path, &err, g, "method", "morris"));
  EXPECT_OK(mbs_h5_attr_string(path, &err, f, "model", "models/gait2392_simbody.osim"));
  put_strings(g, "parameter_names", 4, names);
  hid_t sc = H5Gcreate2(g, "scalars", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t og = H5Gcreate2(sc, "peak_force", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(sc);
  const double mu[4] = {-1.8, 0.1, 1.0, 0.0}, conf[4] = {0.2, 0.1, 0.3, 0.0};
  put_vector(og, "mu", 4, mu);
  put_vector(og, "mu_star", 4, MORRIS_MS);
  put_vector(og, "sigma", 4, MORRIS_SG);
  put_vector(og, "mu_star_conf", 4, conf);
  H5Gclose(og);
  H5Gclose(g);
  H5Fclose(f);
}

// the calibration file's Gaussian
static const double MU[2] = {2.0, -1.0}, SIG[2] = {0.5, 0.25}, RHO = 0.8;
enum { NCAL = 2000 };
// the axis ranges the picture must have (corner_plot.h): the samples' 0.5 and 99.5 % quantiles
static double cal_lo[2], cal_hi[2];

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// the quantile p of n sorted values, interpolated between the order statistics around
// p (n - 1) (numpy's default)
static double sorted_quantile(const double* v, int n, double p) {
  const double h = p * (n - 1);
  const int k = (int)h;
  return k + 1 < n ? v[k] + (h - k) * (v[k + 1] - v[k]) : v[n - 1];
}

static void make_calibration(const char* path) {
  const char* names[2] = {"/bodyset/torso/mass_scale", "/forceset/soleus_r/max_isometric_force"};
  double* x = malloc(2 * NCAL * sizeof *x);
  const double l21 = RHO, l22 = sqrt(1 - RHO * RHO);
  for (int s = 0; s < NCAL; s++) {
    mbs_rng r = mbs_rng_make(SEED, (uint64_t)s, 0);
    const double z1 = mbs_rng_normal(&r), z2 = mbs_rng_normal(&r);
    x[2 * s] = MU[0] + SIG[0] * z1;
    x[2 * s + 1] = MU[1] + SIG[1] * (l21 * z1 + l22 * z2);
  }
  double* col = malloc(NCAL * sizeof *col);
  for (int j = 0; j < 2; j++) {
    for (int s = 0; s < NCAL; s++) col[s] = x[2 * s + j];
    qsort(col, NCAL, sizeof *col, cmp_double);
    cal_lo[j] = sorted_quantile(col, NCAL, 0.005);
    cal_hi[j] = sorted_quantile(col, NCAL, 0.995);
    // the true Gaussian's: mu -+ 2.5758 sigma, to about 0.1 sigma with 2000 samples
    EXPECT_ABS(cal_lo[j], MU[j] - 2.5758293 * SIG[j], 0.3 * SIG[j]);
    EXPECT_ABS(cal_hi[j], MU[j] + 2.5758293 * SIG[j], 0.3 * SIG[j]);
  }
  free(col);
  const double cov[4] = {SIG[0] * SIG[0], RHO * SIG[0] * SIG[1], RHO * SIG[0] * SIG[1],
                         SIG[1] * SIG[1]};
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "calibration", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  put_strings(g, "parameter_names", 2, names);
  const hsize_t dims[2] = {NCAL, 2}, dd[2] = {2, 2};
  put_doubles(g, "samples", 2, dims, x);
  put_vector(g, "mean", 2, MU);
  put_doubles(g, "covariance", 2, dd, cov);
  H5Gclose(g);
  H5Fclose(f);
  free(x);
}

// D <= 12 independent parameters as 25 steps x 12 walkers x D, a few NaN, no mean/covariance
static void make_independent(const char* path, int D) {
  enum { STEPS = 25, WALKERS = 12 };
  char names[12][64];
  const char* pn[12];
  for (int j = 0; j < D; j++) {
    snprintf(names[j], sizeof names[j], "/forceset/muscle_%02d/max_isometric_force", j);
    pn[j] = names[j];
  }
  double* x = malloc(STEPS * WALKERS * D * sizeof *x);
  for (int s = 0; s < STEPS * WALKERS; s++) {
    mbs_rng r = mbs_rng_make(SEED, (uint64_t)s, 1);
    for (int j = 0; j < D; j++) x[s * D + j] = 1000 * (j + 1) + 50 * mbs_rng_normal(&r);
  }
  x[7 * D + D / 2] = NAN;
  x[9 * D + 0] = INFINITY;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "calibration", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  put_strings(g, "parameter_names", D, pn);
  const hsize_t dims[3] = {STEPS, WALKERS, D};
  put_doubles(g, "samples", 3, dims, x);
  H5Gclose(g);
  H5Fclose(f);
  free(x);
}

// ------------------------------------------------------------------------------------------
// reading pictures

typedef struct image {
  cairo_surface_t* s;
  int w, h, stride;
  const unsigned char* data;
} image;

static int load(const char* png, image* im) {
  memset(im, 0, sizeof *im);
  im->s = cairo_image_surface_create_from_png(png);
  const cairo_status_t st = cairo_surface_status(im->s);
  EXPECT_TRUE(st == CAIRO_STATUS_SUCCESS);
  if (st != CAIRO_STATUS_SUCCESS) {
    printf("%s: %s\n", png, cairo_status_to_string(st));
    cairo_surface_destroy(im->s);
    im->s = NULL;
    return 0;
  }
  cairo_surface_flush(im->s);
  im->w = cairo_image_surface_get_width(im->s);
  im->h = cairo_image_surface_get_height(im->s);
  im->stride = cairo_image_surface_get_stride(im->s);
  im->data = cairo_image_surface_get_data(im->s);
  return 1;
}

static void unload(image* im) {
  if (im->s) cairo_surface_destroy(im->s);
  im->s = NULL;
}

static uint32_t pixel(const image* im, int x, int y) {
  if (x < 0 || y < 0 || x >= im->w || y >= im->h) return 0xFFFFFF;
  return *(const uint32_t*)(im->data + (size_t)y * im->stride + 4 * (size_t)x) & 0xFFFFFF;
}

enum { BLUE = 0x0072B2, VERMILLION = 0xD55E00, GREEN = 0x009E73, PURPLE = 0xCC79A7,
       HIST_FILL = 0xC6DBEF };

// the columns of the box [x0, x1) x [y0, y1) holding pixels of colour c, as runs of adjacent
// columns: run k spans columns a[k]..b[k], its pixels from row top[k] to bottom[k], at most
// height[k] of them in one column
typedef struct runs {
  int n;
  int a[16], b[16], top[16], bottom[16], height[16];
} runs;

static runs colour_runs(const image* im, uint32_t c, int x0, int x1, int y0, int y1) {
  runs R;
  memset(&R, 0, sizeof R);
  for (int x = x0; x < x1; x++) {
    int cnt = 0, top = -1, bottom = -1;
    for (int y = y0; y < y1; y++)
      if (pixel(im, x, y) == c) {
        cnt++;
        if (top < 0) top = y;
        bottom = y;
      }
    if (!cnt) continue;
    // a gap of up to 3 columns (an error bar across a small bar) does not end a run
    if (!R.n || x - R.b[R.n - 1] > 4) {
      if (R.n == 16) break;
      R.a[R.n] = x;
      R.top[R.n] = top;
      R.bottom[R.n] = bottom;
      R.height[R.n] = 0;
      R.n++;
    }
    const int k = R.n - 1;
    R.b[k] = x;
    if (top < R.top[k]) R.top[k] = top;
    if (bottom > R.bottom[k]) R.bottom[k] = bottom;
    if (cnt > R.height[k]) R.height[k] = cnt;
  }
  return R;
}

// centre of the pixels of colour c in a box; count in *n
static void colour_centre(const image* im, uint32_t c, int x0, int x1, int y0, int y1,
                          double* cx, double* cy, long* n) {
  double sx = 0, sy = 0;
  *n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      if (pixel(im, x, y) == c) {
        sx += x;
        sy += y;
        (*n)++;
      }
  *cx = *n ? sx / *n : NAN;
  *cy = *n ? sy / *n : NAN;
}

// pixels of colour c within r of (x, y)
static long colour_near(const image* im, uint32_t c, double x, double y, int r) {
  long n = 0;
  for (int v = (int)y - r; v <= (int)y + r; v++)
    for (int u = (int)x - r; u <= (int)x + r; u++) n += pixel(im, u, v) == c;
  return n;
}

// ------------------------------------------------------------------------------------------
// the checks

static void test_sobol(const char* dir, int keep) {
  char h5[512], png[512];
  snprintf(h5, sizeof h5, "%s/plots_sobol_%ld.h5", dir, (long)getpid());
  snprintf(png, sizeof png, "%s/plots_sobol_%ld.png", dir, (long)getpid());
  make_sobol(h5, "sobol", 0);
  mbs_error err;
  const int rc = mbs_sensitivity_plot_png(h5, png, &err);
  EXPECT_OK(rc);
  if (rc) printf("sobol: %s\n", err.message);
  image im;
  if (!rc && load(png, &im)) {
    // layout (sensitivity_plot.h): D = 3: PW = 620; 2 outputs: 2 columns, 1 row
    EXPECT_EQ_INT(im.w, 80 + 2 * 620);
    EXPECT_EQ_INT(im.h, 120 + 470 + 40);
    for (int o = 0; o < 2; o++) {
      const int x0 = 40 + 620 * o, x1 = x0 + 620, y0 = 120, y1 = 120 + 470;
      const runs s1 = colour_runs(&im, BLUE, x0, x1, y0, y1);
      const runs st = colour_runs(&im, VERMILLION, x0, x1, y0, y1);
      printf("sobol panel %d: S1 bars %d (heights", o, s1.n);
      for (int k = 0; k < s1.n; k++) printf(" %d", s1.bottom[k] - s1.top[k] + 1);
      printf("), ST bars %d (heights", st.n);
      for (int k = 0; k < st.n; k++) printf(" %d", st.bottom[k] - st.top[k] + 1);
      printf(")\n");
      if (o == 1) {  // peak_force (created first, drawn second): S1 0.8, 0.1, -0.05
        EXPECT_EQ_INT(s1.n, 3);
        EXPECT_EQ_INT(st.n, 3);
        if (s1.n != 3) continue;
        EXPECT_TRUE(s1.a[0] < s1.a[1] && s1.a[1] < s1.a[2]);
        const double h0 = s1.bottom[0] - s1.top[0] + 1, h1 = s1.bottom[1] - s1.top[1] + 1;
        EXPECT_NEAR(h0 / h1, 0.8 / 0.1, 0.06);
        // the first two stand on the zero line, the negative one hangs below it
        EXPECT_TRUE(abs(s1.bottom[0] - s1.bottom[1]) <= 1);
        EXPECT_TRUE(s1.top[2] >= s1.bottom[0] - 1);
        const double h2 = s1.bottom[2] - s1.top[2] + 1;
        EXPECT_NEAR(h2 / h1, 0.05 / 0.1, 0.1);
        // ST beside S1, to its right
        if (st.n == 3) EXPECT_TRUE(st.a[0] > s1.b[0] && st.a[0] < s1.a[1]);
      } else {  // hip_range: S1 NaN for the second parameter; ST 0.35, 0.6, 1.1
        EXPECT_EQ_INT(s1.n, 2);
        EXPECT_EQ_INT(st.n, 3);
        if (st.n != 3) continue;
        const double h0 = st.bottom[0] - st.top[0] + 1, h2 = st.bottom[2] - st.top[2] + 1;
        EXPECT_NEAR(h2 / h0, 1.1 / 0.35, 0.05);
        // the missing S1 leaves a gap: no S1 bar left of the second ST bar past the first
        if (s1.n == 2) EXPECT_TRUE(s1.a[1] > st.b[1]);
      }
    }
    // the legend's S1 swatch is in the header, above the panels
    const runs leg = colour_runs(&im, BLUE, 0, im.w, 0, 120);
    EXPECT_EQ_INT(leg.n, 1);
    unload(&im);
  }
  if (!keep) unlink(png);

  // fifteen outputs: four rows of three panels. In natural order bodies/rod2/position_max,
  // hip_range, peak_force, z_extra_0 (failed: no bars), z_extra_1 .. z_extra_8 (S1 bars); left
  // out z_extra_9, z_extra_10 and z_extra_11 (no S1: in plain string order they would come
  // fifth and sixth)
  snprintf(png, sizeof png, "%s/plots_sobol15_%ld.png", dir, (long)getpid());
  make_sobol(h5, "sobol", 12);
  EXPECT_OK(mbs_sensitivity_plot_png(h5, png, &err));
  if (load(png, &im)) {
    EXPECT_EQ_INT(im.w, 80 + 3 * 620);
    EXPECT_EQ_INT(im.h, 120 + 4 * 470 + 40);
    for (int p = 0; p < 12; p++) {
      const int x0 = 40 + (p % 3) * 620, y0 = 120 + (p / 3) * 470;
      const runs s1 = colour_runs(&im, BLUE, x0, x0 + 620, y0, y0 + 470);
      const runs st = colour_runs(&im, VERMILLION, x0, x0 + 620, y0, y0 + 470);
      EXPECT_EQ_INT(s1.n, p == 3 ? 0 : p == 0 || p == 2 ? 3 : 2);
      EXPECT_EQ_INT(st.n, p == 3 ? 0 : 3);
      if (p == 0 && s1.n == 3)  // the nested output has peak_force's values
        EXPECT_NEAR((double)(s1.bottom[0] - s1.top[0] + 1) / (s1.bottom[1] - s1.top[1] + 1),
                    0.8 / 0.1, 0.06);
    }
    unload(&im);
  }
  if (!keep) unlink(png);
  snprintf(png, sizeof png, "%s/plots_error_%ld.png", dir, (long)getpid());

  // an unknown method
  make_sobol(h5, "fast", 0);
  EXPECT_EQ_INT(mbs_sensitivity_plot_png(h5, png, &err), MBS_ERR_PARSE);
  printf("unknown method: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, "fast") != NULL && strstr(err.message, h5) != NULL);
  // a picture that cannot be written names its file
  char nowhere[600];
  snprintf(nowhere, sizeof nowhere, "%s/no_such_dir_%ld/figure.png", dir, (long)getpid());
  make_sobol(h5, "sobol", 0);
  EXPECT_EQ_INT(mbs_sensitivity_plot_png(h5, nowhere, &err), MBS_ERR_IO);
  printf("unwritable picture: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, nowhere) != NULL);
  // the corner plot of a sensitivity study
  unlink(png);
  EXPECT_EQ_INT(mbs_corner_plot_png(h5, png, &err), MBS_ERR_PARSE);
  printf("corner plot of a sensitivity study: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, h5) != NULL);
  EXPECT_TRUE(strstr(err.message, "no /calibration: is this a calibration study?") != NULL);
  EXPECT_TRUE(access(png, F_OK) != 0);  // no picture drawn
  unlink(h5);
}

static void test_morris(const char* dir, int keep) {
  char h5[512], png[512];
  snprintf(h5, sizeof h5, "%s/plots_morris_%ld.h5", dir, (long)getpid());
  snprintf(png, sizeof png, "%s/plots_morris_%ld.png", dir, (long)getpid());
  make_morris(h5);
  mbs_error err;
  const int rc = mbs_sensitivity_plot_png(h5, png, &err);
  EXPECT_OK(rc);
  if (rc) printf("morris: %s\n", err.message);
  image im;
  if (!rc && load(png, &im)) {
    EXPECT_EQ_INT(im.w, 80 + 820);  // one panel: 820 px wide
    EXPECT_EQ_INT(im.h, 120 + 470 + 40);
    // markers in the palette by parameter, inside the panel
    const uint32_t colour[4] = {BLUE, VERMILLION, GREEN, PURPLE};
    double cx[4], cy[4];
    for (int i = 0; i < 4; i++) {
      long n;
      colour_centre(&im, colour[i], 40, 860, 120, 590, &cx[i], &cy[i], &n);
      printf("morris point %d: %ld pixels, centre (%.1f, %.1f)\n", i, n, cx[i], cy[i]);
      EXPECT_TRUE(n > 30 && n < 400);
    }
    // x linear in mu_star, y linear in sigma (pixel y downwards)
    EXPECT_NEAR((cx[0] - cx[1]) / (cx[2] - cx[1]),
                (MORRIS_MS[0] - MORRIS_MS[1]) / (MORRIS_MS[2] - MORRIS_MS[1]), 0.03);
    EXPECT_NEAR((cy[1] - cy[0]) / (cy[2] - cy[0]),
                (MORRIS_SG[1] - MORRIS_SG[0]) / (MORRIS_SG[2] - MORRIS_SG[0]), 0.03);
    EXPECT_TRUE(cy[1] < cy[2] && cy[2] < cy[0]);
    // the point at (0, 0) is where both axes start: on the line through the others' x at 0
    const double px_per = (cx[0] - cx[1]) / (MORRIS_MS[0] - MORRIS_MS[1]);
    EXPECT_ABS(cx[3], cx[1] - MORRIS_MS[1] * px_per, 2.5);
    const double py_per = (cy[1] - cy[0]) / (MORRIS_SG[1] - MORRIS_SG[0]);
    EXPECT_ABS(cy[3], cy[0] - MORRIS_SG[0] * py_per, 2.5);
    // the dashed line sigma = mu_star passes (in grey) half-way between (0,0) and (e, e),
    // e = 1.5 (mu_star 1.5 is on the x axis, sigma 1.5 on the y axis)
    const double lx = cx[3] + 0.75 * px_per, ly = cy[3] + 0.75 * py_per;
    long grey = 0;
    for (int v = (int)ly - 3; v <= (int)ly + 3; v++)
      for (int u = (int)lx - 3; u <= (int)lx + 3; u++) {
        const uint32_t c = pixel(&im, u, v);
        const int r = c >> 16 & 255, g = c >> 8 & 255, b = c & 255;
        grey += r == g && g == b && r < 200;
      }
    EXPECT_TRUE(grey > 0);
    unload(&im);
  }
  if (!keep) unlink(png);
  unlink(h5);
}

// the calibration picture: pixel of a value of parameter j in the panel at (px, py) of size P
static double cal_x(int j, double px, double P, double v) {
  return px + (v - cal_lo[j]) / (cal_hi[j] - cal_lo[j]) * P;
}
static double cal_y(int i, double py, double P, double v) {
  return py + P - (v - cal_lo[i]) / (cal_hi[i] - cal_lo[i]) * P;
}

static int is_grey(uint32_t c) {
  const int r = c >> 16 & 255, g = c >> 8 & 255, b = c & 255;
  return r == g && g == b;
}

// mean darkness (1 - grey level) of the grey pixels within r of (x, y)
static double darkness(const image* im, double x, double y, int r) {
  double s = 0;
  long n = 0;
  for (int v = (int)y - r; v <= (int)y + r; v++)
    for (int u = (int)x - r; u <= (int)x + r; u++) {
      const uint32_t c = pixel(im, u, v);
      if (!is_grey(c)) continue;
      s += 1 - (c & 255) / 255.0;
      n++;
    }
  return n ? s / n : 0;
}

static void test_corner(const char* dir, int keep) {
  char h5[512], png[512];
  snprintf(h5, sizeof h5, "%s/plots_corner_%ld.h5", dir, (long)getpid());
  snprintf(png, sizeof png, "%s/plots_corner_%ld.png", dir, (long)getpid());
  make_calibration(h5);
  mbs_error err;
  const int rc = mbs_corner_plot_png(h5, png, &err);
  EXPECT_OK(rc);
  if (rc) printf("corner: %s\n", err.message);
  image im;
  if (!rc && load(png, &im)) {
    // layout (corner_plot.h): D = 2, P = 340
    const double P = 340;
    EXPECT_EQ_INT(im.w, 170 + 2 * 340 + 10);
    EXPECT_EQ_INT(im.h, 270 + 2 * 340 + 10);
    // the 2-D panel: row 1, column 0
    const double px = 130, py = 150 + P + 10;
    const double mx = cal_x(0, px, P, MU[0]), my = cal_y(1, py, P, MU[1]);
    // one sigma in pixels along x (parameter 0) and y (parameter 1)
    const double sx = SIG[0] / (cal_hi[0] - cal_lo[0]) * P;
    const double sy = SIG[1] / (cal_hi[1] - cal_lo[1]) * P;
    // the darkness-weighted centre of the shade: the samples' mean (within 0.1 sigma)
    double sw = 0, swx = 0, swy = 0;
    for (int y = (int)py + 2; y < py + P - 2; y++)
      for (int x = (int)px + 2; x < px + P - 2; x++) {
        const uint32_t c = pixel(&im, x, y);
        if (!is_grey(c)) continue;
        const double w = 1 - (c & 255) / 255.0;
        sw += w;
        swx += w * x;
        swy += w * y;
      }
    printf("2-D histogram: shade centre (%.1f, %.1f), mean at (%.1f, %.1f), sigma %.1f px\n",
           swx / sw, swy / sw, mx, my, sx);
    EXPECT_ABS(swx / sw, mx, 0.1 * sx);
    EXPECT_ABS(swy / sw, my, 0.1 * sy);
    // the darkest region (averaged over 0.4 sigma) within 0.6 sigma of the mean
    double best = -1, bx = 0, by = 0;
    const int r = (int)(0.4 * fmin(sx, sy));
    for (int y = (int)py + r; y < py + P - r; y += 2)
      for (int x = (int)px + r; x < px + P - r; x += 2) {
        const double d = darkness(&im, x, y, r);
        if (d > best) best = d, bx = x, by = y;
      }
    printf("2-D histogram: darkest at (%.0f, %.0f), %.2f sigma from the mean\n", bx, by,
           hypot((bx - mx) / sx, (by - my) / sy));
    EXPECT_TRUE(hypot((bx - mx) / sx, (by - my) / sy) < 0.6);
    // darker along the correlation (Mahalanobis distance 1.05) than across it (3.2)
    const double along = darkness(&im, mx + sx, my - sy, r);
    const double across = darkness(&im, mx + sx, my + sy, r);
    printf("2-D histogram: darkness %.3f at the mean, %.3f along, %.3f across\n",
           darkness(&im, mx, my, r), along, across);
    EXPECT_TRUE(along > 0.3 * darkness(&im, mx, my, r));
    EXPECT_TRUE(along > 5 * across);
    // the ellipses through their extreme points: top (mu + r (rho sx, sy)), right
    // (mu + r (sx, rho sy)); nothing of them at the mean
    for (int k = 1; k <= 2; k++) {
      const long top = colour_near(&im, VERMILLION, cal_x(0, px, P, MU[0] + k * RHO * SIG[0]),
                                   cal_y(1, py, P, MU[1] + k * SIG[1]), k == 1 ? 3 : 6);
      const long right = colour_near(&im, VERMILLION, cal_x(0, px, P, MU[0] + k * SIG[0]),
                                     cal_y(1, py, P, MU[1] + k * RHO * SIG[1]),
                                     k == 1 ? 3 : 6);  // the 2 sigma one is dashed
      printf("%d sigma ellipse: %ld and %ld pixels at its top and right extremes\n", k, top,
             right);
      EXPECT_TRUE(top > 0 && right > 0);
      // and not at 0.8 of those points
      EXPECT_EQ_INT(colour_near(&im, VERMILLION,
                                cal_x(0, px, P, MU[0] + 0.8 * k * RHO * SIG[0]),
                                cal_y(1, py, P, MU[1] + 0.8 * k * SIG[1]), 2), 0);
    }
    // (the 1 sigma ellipse's half minor axis is sqrt(1 - rho) = 0.45 sigma in standard units)
    EXPECT_EQ_INT(colour_near(&im, VERMILLION, mx, my, (int)(0.28 * fmin(sx, sy))), 0);
    // the diagonal histograms: parameter j in the panel (j, j)
    for (int j = 0; j < 2; j++) {
      const double hx = 130 + j * (P + 10), hy = 150 + j * (P + 10);
      double height[340];
      for (int c = 0; c < (int)P; c++) {
        height[c] = 0;
        for (int y = (int)hy; y < hy + P; y++)
          if (pixel(&im, (int)hx + c, y) == HIST_FILL) {
            height[c] = hy + P - y;
            break;
          }
      }
      // the tallest column averaged over +-0.25 sigma, and the height-weighted centre
      const double m = cal_x(j, hx, P, MU[j]), sj = j ? sy : sx;
      const int w = (int)(0.25 * sj);
      double hbest = -1, cbest = 0, sh = 0, shx = 0;
      for (int c = 0; c < (int)P; c++) {
        sh += height[c];
        shx += height[c] * (hx + c + 0.5);
        if (c < w || c >= (int)P - w) continue;
        double a = 0;
        for (int d = -w; d <= w; d++) a += height[c + d];
        a /= 2 * w + 1;
        if (a > hbest) hbest = a, cbest = hx + c + 0.5;
      }
      printf("histogram %d: peak at %.1f, centre %.1f, mean at %.1f (sigma %.1f px)\n", j,
             cbest, shx / sh, m, sj);
      EXPECT_ABS(cbest, m, 0.5 * sj);
      EXPECT_ABS(shx / sh, m, 0.1 * sj);
      // one sigma away the height is exp(-1/2) of the peak's
      double a1 = 0, a2 = 0;
      for (int d = -w; d <= w; d++) {
        a1 += height[(int)(m - hx - sj) + d];
        a2 += height[(int)(m - hx + sj) + d];
      }
      const double ratio = 0.5 * (a1 + a2) / (2 * w + 1) / hbest;
      printf("histogram %d: height one sigma away / peak = %.3f (exp(-1/2) = %.3f)\n", j,
             ratio, exp(-0.5));
      EXPECT_ABS(ratio, exp(-0.5), 0.12);
      // the dashed median line at the mean: dark pixels in its column over the panel
      long dark = 0;
      for (int y = (int)hy; y < hy + P; y++) {
        int found = 0;
        for (int u = (int)m - 4; u <= (int)m + 4 && !found; u++) {
          const uint32_t c = pixel(&im, u, y);
          found = is_grey(c) && (c & 255) < 0x50;
        }
        dark += found;
      }
      EXPECT_TRUE(dark > P / 3);
    }
    unload(&im);
  }
  if (!keep) unlink(png);

  // the sensitivity picture of a calibration study
  snprintf(png, sizeof png, "%s/plots_error_%ld.png", dir, (long)getpid());
  unlink(png);
  EXPECT_EQ_INT(mbs_sensitivity_plot_png(h5, png, &err), MBS_ERR_PARSE);
  printf("sensitivity plot of a calibration study: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, h5) != NULL);
  EXPECT_TRUE(strstr(err.message, "no /sensitivity: is this a sensitivity study?") != NULL);
  EXPECT_TRUE(access(png, F_OK) != 0);
  unlink(h5);

  // twelve parameters: the first ten in panels of 150 px, no ellipses
  snprintf(png, sizeof png, "%s/plots_corner12_%ld.png", dir, (long)getpid());
  make_independent(h5, 12);
  EXPECT_OK(mbs_corner_plot_png(h5, png, &err));
  if (load(png, &im)) {
    EXPECT_EQ_INT(im.w, 170 + 10 * 150 + 9 * 10);
    EXPECT_EQ_INT(im.h, 270 + 10 * 150 + 9 * 10);
    long verm = 0, fill = 0;
    for (int y = 0; y < im.h; y++)
      for (int x = 0; x < im.w; x++) {
        verm += pixel(&im, x, y) == VERMILLION;
        fill += pixel(&im, x, y) == HIST_FILL;
      }
    EXPECT_EQ_INT(verm, 0);
    // every diagonal panel holds a histogram; the last one's is the tenth parameter's
    for (int j = 0; j < 10; j++) {
      long n;
      double cx, cy;
      const int x0 = 130 + j * 160, y0 = 150 + j * 160;
      colour_centre(&im, HIST_FILL, x0, x0 + 150, y0, y0 + 150, &cx, &cy, &n);
      EXPECT_TRUE(n > 150 * 150 / 8);
      EXPECT_ABS(cx, x0 + 75, 150 * 0.1);
    }
    unload(&im);
  }
  if (!keep) unlink(png);

  // one parameter: its histogram alone, the picture 720 px wide at least
  snprintf(png, sizeof png, "%s/plots_corner1_%ld.png", dir, (long)getpid());
  make_independent(h5, 1);
  EXPECT_OK(mbs_corner_plot_png(h5, png, &err));
  if (load(png, &im)) {
    EXPECT_EQ_INT(im.w, 720);
    EXPECT_EQ_INT(im.h, 270 + 340);
    long n;
    double cx, cy;
    colour_centre(&im, HIST_FILL, 130, 130 + 340, 150, 150 + 340, &cx, &cy, &n);
    EXPECT_TRUE(n > 340 * 340 / 8);
    EXPECT_ABS(cx, 130 + 170, 340 * 0.1);
    unload(&im);
  }
  if (!keep) unlink(png);
  unlink(h5);
}

// the study file's string attributes as the pictures read them (mbs_results_read_attribute):
// fixed-length (as the drivers write them), variable-length (as h5py writes str), absent, and a
// number, which is no string
static void test_read_attribute(const char* dir) {
  char h5[512];
  snprintf(h5, sizeof h5, "%s/plots_attributes_%ld.h5", dir, (long)getpid());
  mbs_error err;
  hid_t f = H5Fcreate(h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t g = H5Gcreate2(f, "sensitivity", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_OK(mbs_h5_attr_string(h5, &err, g, "method", "morris"));
  hid_t vt = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
  H5Tset_size(vt, H5T_VARIABLE);
  H5Tset_cset(vt, H5T_CSET_UTF8);
  const char* model = "models/gait2392 – σ.osim";
  hid_t a = H5Acreate2(f, "model", vt, sp, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_TRUE(a >= 0 && H5Awrite(a, vt, &model) >= 0);
  H5Aclose(a);
  const double two = 2;
  a = H5Acreate2(g, "count", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_TRUE(a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, &two) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(vt);
  H5Gclose(g);
  H5Fclose(f);

  mbs_results* r = mbs_results_open_read(h5, &err);
  EXPECT_TRUE(r != NULL);
  if (r) {
    char* v = NULL;
    EXPECT_OK(mbs_results_read_attribute(r, "/sensitivity", "method", &v, &err));
    EXPECT_TRUE(v && !strcmp(v, "morris"));
    free(v);
    EXPECT_OK(mbs_results_read_attribute(r, "/", "model", &v, &err));
    EXPECT_TRUE(v && !strcmp(v, model));
    free(v);
    EXPECT_OK(mbs_results_read_attribute(r, "/sensitivity", "analysis_failed", &v, &err));
    EXPECT_TRUE(v == NULL);
    EXPECT_EQ_INT(mbs_results_read_attribute(r, "/sensitivity", "count", &v, &err),
                  MBS_ERR_PARSE);
    EXPECT_TRUE(v == NULL && strstr(err.message, h5) && strstr(err.message, "count"));
    EXPECT_TRUE(mbs_results_read_attribute(r, "/nothing", "method", &v, &err) < 0);
    EXPECT_TRUE(v == NULL && strstr(err.message, h5) != NULL);
    EXPECT_OK(mbs_results_close(r, &err));
  }
  unlink(h5);
}

static void test_missing(const char* dir) {
  char missing[512], png[512], text[512];
  snprintf(missing, sizeof missing, "%s/plots_missing_%ld.h5", dir, (long)getpid());
  snprintf(png, sizeof png, "%s/plots_missing_%ld.png", dir, (long)getpid());
  snprintf(text, sizeof text, "%s/plots_text_%ld.h5", dir, (long)getpid());
  mbs_error err;
  EXPECT_EQ_INT(mbs_sensitivity_plot_png(missing, png, &err), MBS_ERR_IO);
  printf("missing file: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, missing) != NULL);
  EXPECT_EQ_INT(mbs_corner_plot_png(missing, png, &err), MBS_ERR_IO);
  EXPECT_TRUE(strstr(err.message, missing) != NULL);
  FILE* f = fopen(text, "w");
  if (f) {
    fputs("not an HDF5 file\n", f);
    fclose(f);
  }
  EXPECT_EQ_INT(mbs_corner_plot_png(text, png, &err), MBS_ERR_IO);
  printf("not HDF5: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, text) != NULL);
  EXPECT_EQ_INT(mbs_sensitivity_plot_png(text, png, &err), MBS_ERR_IO);
  EXPECT_TRUE(access(png, F_OK) != 0);
  unlink(text);
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "/tmp";
  const int keep = argc > 1;
  test_sobol(dir, keep);
  test_morris(dir, keep);
  test_corner(dir, keep);
  test_read_attribute(dir);
  test_missing(dir);
  mbs_plot_cleanup();  // cairo's and fontconfig's caches
  return mbs_test_finish("test_plots");
}
