// The posture study's picture (jobs/posture_plot.c) drawn from tables built in memory and read
// back as pixels. Four knee flexions whose stability indices differ by only 0.003 (as in the
// locked mode of gait2392, docs/posture_gait2392.png) lie on one line in the main panel (0.003
// of its ~200 px is under a pixel); the strip under it, each posture's difference from the mean
// of the postures, must set them apart: in pixel columns of the plot the pixels of the first
// posture's colour and those of the fourth's must lie, on average, at least 4 px apart in height
// (away from the legend at the top and from the stable ranges written at the panel's left).
// Tables whose postures are identical, or with a single posture, must be drawn without error.
//
//   test_posture_plot [--png PREFIX]   keep the pictures as PREFIX_{close,identical,single}.png
#include <cairo.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../jobs/posture_plot.h"
#include "../../jobs/plot_util.h"
#include "mbs/posture_table.h"
#include "mbs_test.h"

enum { NG = 20, MAXK = 4 };

// a table of 1 joint mode (locked), nk knee flexions, 1 direction (anterior) and NG
// displacements of 0 to 19 cm, in memory; the arrays in the struct below
typedef struct synth {
  mbs_posture_table t;
  double mode[1], knee[MAXK], dir[1], mag[NG];
  double si[MAXK * NG], T[MAXK * NG];
  int64_t sample[MAXK * NG];
  char path[32];
} synth;

// kind 0: the postures differ by 0.001 per knee flexion step (0.003 between the first and the
// fourth) where they fall, one cell without a result; 1: identical; 2: a single posture
static void make_table(synth* s, int kind) {
  memset(s, 0, sizeof *s);
  const int nk = kind == 2 ? 1 : MAXK;
  mbs_posture_table* t = &s->t;
  snprintf(s->path, sizeof s->path, "synthetic_posture.h5");
  t->path = s->path;
  s->mode[0] = 1;
  s->dir[0] = 0;
  for (int k = 0; k < nk; k++) s->knee[k] = k == 0 ? 1 : 15 * k;
  for (int g = 0; g < NG; g++) s->mag[g] = 0.01 * g;
  t->axis[MBS_POSTURE_MODE] = (mbs_posture_axis){1, s->mode};
  t->axis[MBS_POSTURE_KNEE] = (mbs_posture_axis){nk, s->knee};
  t->axis[MBS_POSTURE_DIRECTION] = (mbs_posture_axis){1, s->dir};
  t->axis[MBS_POSTURE_MAGNITUDE] = (mbs_posture_axis){NG, s->mag};
  t->ncell = (size_t)nk * NG;
  t->stability_index = s->si;
  t->time_to_fall = s->T;
  t->sample = s->sample;
  snprintf(t->study, sizeof t->study, "posture");
  snprintf(t->model, sizeof t->model, "synthetic_locked");
  snprintf(t->fall, sizeof t->fall, "the pelvis (its origin) below 0.75 of its quiet-standing "
           "height");
  snprintf(t->duration, sizeof t->duration, "4");
  long n = 0;
  for (int k = 0; k < nk; k++)
    for (int g = 0; g < NG; g++) {
      const size_t c = mbs_posture_table_cell(t, 0, k, 0, g);
      // stands the whole 4 s up to 2 cm, then falls later and later the more the knee is bent
      double si = 0.985 - 0.006 * (g - 3) / (NG - 4) + (kind == 0 ? 0.001 * k : 0);
      double T = sqrt(-log(1 - si));
      if (g < 3) T = 4, si = 1 - exp(-16.0);
      s->si[c] = si;
      s->T[c] = T;
      s->sample[c] = n++;
      if (kind == 0 && k == 2 && g == 10) s->si[c] = s->T[c] = NAN, s->sample[c] = -1;
    }
  t->nsamples = n;
  t->written = t->good = t->placed = kind == 0 ? n - 1 : n;
}

static uint32_t rgb_of(int k) {
  const double* c = mbs_plot_palette[k];
  return (uint32_t)lround(c[0] * 255) << 16 | (uint32_t)lround(c[1] * 255) << 8 |
         (uint32_t)lround(c[2] * 255);
}

// the picture read back: NULL (and a failed check) when it cannot be read
static cairo_surface_t* load(const char* png) {
  cairo_surface_t* img = cairo_image_surface_create_from_png(png);
  EXPECT_TRUE(cairo_surface_status(img) == CAIRO_STATUS_SUCCESS);
  if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
    printf("%s: %s\n", png, cairo_status_to_string(cairo_surface_status(img)));
    cairo_surface_destroy(img);
    return NULL;
  }
  cairo_surface_flush(img);
  const int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
  EXPECT_EQ_INT(w, 1400);
  EXPECT_TRUE(h >= 900);
  return img;
}

static uint32_t pixel(cairo_surface_t* img, int x, int y) {
  const unsigned char* px = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  return *(const uint32_t*)(px + (size_t)y * stride + 4 * (size_t)x) & 0xFFFFFF;
}

// pixels of the colour of posture k below the legend
static long count_colour(cairo_surface_t* img, int k, int top) {
  const int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
  const uint32_t want = rgb_of(k);
  long n = 0;
  for (int y = top; y < h; y++)
    for (int x = 0; x < w; x++) n += pixel(img, x, y) == want;
  return n;
}

// the first row with a pixel of posture 0's colour: the legend's line
static int legend_row(cairo_surface_t* img) {
  const int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
  const uint32_t want = rgb_of(0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (pixel(img, x, y) == want) return y;
  return h;
}

// the postures of the first and the last colour set apart: in how many pixel columns of the
// right half (clear of the stable ranges at the panel's left) the mean height of the pixels of
// posture a's colour and that of posture b's lie at least 4 px apart, below the legend; the
// largest such distance in *best
static int columns_apart(cairo_surface_t* img, int a, int b, int top, double* best) {
  const int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
  const uint32_t ca = rgb_of(a), cb = rgb_of(b);
  int n = 0;
  *best = 0;
  for (int x = w / 2; x < w; x++) {
    double sa = 0, sb = 0;
    long na = 0, nb = 0;
    for (int y = top; y < h; y++) {
      const uint32_t c = pixel(img, x, y);
      if (c == ca) sa += y, na++;
      if (c == cb) sb += y, nb++;
    }
    if (!na || !nb) continue;
    const double apart = fabs(sa / na - sb / nb);
    if (apart > *best) *best = apart;
    n += apart >= 4;
  }
  return n;
}

static void keep_copy(const char* png, const char* prefix, const char* what) {
  if (!prefix) return;
  char name[512];
  snprintf(name, sizeof name, "%s_%s.png", prefix, what);
  FILE* in = fopen(png, "rb");
  FILE* out = fopen(name, "wb");
  char buf[8192];
  size_t n;
  while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  if (in) fclose(in);
  if (out) fclose(out);
  printf("picture kept as %s\n", name);
}

int main(int argc, char** argv) {
  const char* keep = argc > 2 && !strcmp(argv[1], "--png") ? argv[2] : NULL;
  char png[128];
  snprintf(png, sizeof png, "posture_plot_%ld.png", (long)getpid());
  mbs_error err;
  static synth s;

  // postures 0.001 apart: set apart by the strip
  make_table(&s, 0);
  int rc = mbs_posture_plot_png(&s.t, png, &err);
  EXPECT_OK(rc);
  if (rc) printf("plot: %s\n", err.message);
  cairo_surface_t* img = rc ? NULL : load(png);
  if (img) {
    const int top = legend_row(img) + 16;  // below the legend's markers
    EXPECT_TRUE(top < 300);
    double best = 0;
    const int n = columns_apart(img, 0, 3, top, &best);
    printf("postures 1° and 45° (0.003 apart): %d pixel columns with their colours >= 4 px "
           "apart, at most %.1f px\n", n, best);
    EXPECT_TRUE(n >= 20);
    EXPECT_TRUE(best >= 10);
    for (int k = 0; k < MAXK; k++) EXPECT_TRUE(count_colour(img, k, top) > 50);
    cairo_surface_destroy(img);
  }
  keep_copy(png, keep, "close");

  // identical postures: a zero line, no division by zero
  make_table(&s, 1);
  rc = mbs_posture_plot_png(&s.t, png, &err);
  EXPECT_OK(rc);
  if (rc) printf("plot (identical): %s\n", err.message);
  img = rc ? NULL : load(png);
  if (img) {
    const int top = legend_row(img) + 16;
    EXPECT_TRUE(count_colour(img, MAXK - 1, top) > 50);
    cairo_surface_destroy(img);
  }
  keep_copy(png, keep, "identical");

  // a single posture
  make_table(&s, 2);
  rc = mbs_posture_plot_png(&s.t, png, &err);
  EXPECT_OK(rc);
  if (rc) printf("plot (single): %s\n", err.message);
  img = rc ? NULL : load(png);
  if (img) {
    EXPECT_TRUE(count_colour(img, 0, legend_row(img) + 16) > 50);
    cairo_surface_destroy(img);
  }
  keep_copy(png, keep, "single");

  unlink(png);
  mbs_plot_cleanup();
  return mbs_test_finish("test_posture_plot");
}
