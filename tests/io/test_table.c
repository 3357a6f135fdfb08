// OpenSim data tables against independent truth:
//  - storage round trips (header versions 1 and 3): bit-identical numbers, the same labels,
//    name, inDegrees and header lines; an OpenSim 4 style file (no nRows, CRLF, spaces, NaN);
//  - malformed files written here (wrong column count, non-numeric field, missing endheader,
//    truncated file, empty file, nRows/nColumns mismatch, ...): the expected status and a
//    message with the file name and the line number;
//  - a marker file written here: NaN for a marker not seen, labels, units, meters;
//  - degrees to radians for the listed columns only;
//  - the low-pass filter on 1 Hz + 30 Hz sampled at 600 Hz, cutoff 6 Hz: both parts come out
//    with the zero-phase Butterworth gain 1 / (1 + (tan(pi f T) / tan(pi fc T))^6) and no
//    phase lag, away from the ends; a straight line passes unchanged;
//  - padding against its formula; the quintic spline reproduces a quadratic exactly (inside
//    and outside the knots) and a sine with derivatives within bounds set by the spacing, with
//    errors falling as h^6, h^5, h^4; resampling.
// With `--data <shared folder>` it reads OpenSim's published files instead (IK .mot, ground
// reaction .mot, .trc, ID .sto) and checks counts and values against the text; it prints
// "SKIPPED: <reason>" and exits 77 (CTest's skip code) when the folder is absent.
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/table.h"
#include "mbs_test.h"

static void write_text(const char* path, const char* text) {
  FILE* f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fputs(text, f);
  fclose(f);
}

static int same_double(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return memcmp(&a, &b, sizeof(double)) == 0;
}

static int same_str(const char* a, const char* b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

// every field a round trip keeps, compared exactly
static int tables_equal(const mbs_table* a, const mbs_table* b) {
  if (a->nrow != b->nrow || a->ncol != b->ncol || a->in_degrees != b->in_degrees) return 0;
  if (!same_str(a->name, b->name) || a->nmeta != b->nmeta) return 0;
  for (int c = 0; c < a->ncol; c++)
    if (!same_str(a->labels[c], b->labels[c])) return 0;
  for (int i = 0; i < a->nmeta; i++)
    if (!same_str(a->meta[i].key, b->meta[i].key) || !same_str(a->meta[i].value, b->meta[i].value))
      return 0;
  for (long k = 0; k < (long)a->nrow * a->ncol; k++)
    if (!same_double(a->data[k], b->data[k])) return 0;
  return 1;
}

// ---------------------------------------------------------------------------------------------

static mbs_table* tricky_table(void) {
  const char* labels[5] = {"time", "knee_angle_r", "hip_flexion_r", "/jointset/a/b/value",
                           "force"};
  mbs_table* t = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_create(&t, "Coordinates", 40, 5, labels, &err));
  if (!t) exit(1);
  mbs_test_rng rng = {0x9e3779b97f4a7c15ULL};
  for (int r = 0; r < t->nrow; r++) {
    double* row = t->data + (size_t)r * t->ncol;
    row[0] = r / 60.0;
    row[1] = sin(0.3 * r) / 3.0;                                  // needs 17 digits
    row[2] = mbs_test_uniform(&rng, -1, 1) * pow(10, mbs_test_uniform(&rng, -300, 300));
    row[3] = 1.0 / (r + 7);
    row[4] = mbs_test_uniform(&rng, -1e4, 1e4);
  }
  t->data[5 * 5 + 2] = NAN;          // OpenSim writes NaN for missing values
  t->data[6 * 5 + 2] = -0.0;
  t->data[7 * 5 + 2] = 4.9406564584124654e-324;  // smallest subnormal
  t->data[8 * 5 + 2] = DBL_MAX;
  t->data[9 * 5 + 2] = -INFINITY;
  t->in_degrees = 1;
  EXPECT_OK(mbs_table_set_meta(t, NULL, "Units are S.I. units (second, meters, Newtons, ...)",
                               &err));
  EXPECT_OK(mbs_table_set_meta(t, "DataRate", "60.000000", &err));
  EXPECT_OK(mbs_table_set_meta(t, NULL, "Angles are in degrees.", &err));
  EXPECT_OK(mbs_table_set_meta(t, "OpenSimVersion", "4.5", &err));
  return t;
}

static void test_round_trip(void) {
  mbs_error err;
  mbs_error_clear(&err);
  mbs_table* t = tricky_table();
  for (int version = 1; version <= 3; version += 2) {
    const char* path = version == 1 ? "test_table_v1.sto" : "test_table_v3.sto";
    EXPECT_OK(mbs_table_write_sto(t, path, version, &err));
    mbs_table* back = NULL;
    EXPECT_OK(mbs_table_read_sto(path, &back, &err));
    if (!back) {
      fprintf(stderr, "%s\n", err.message);
      continue;
    }
    EXPECT_TRUE(tables_equal(t, back));
    EXPECT_EQ_INT(back->version, version);
    EXPECT_TRUE(isnan(mbs_table_get(back, 5, 2)));
    EXPECT_TRUE(signbit(mbs_table_get(back, 6, 2)));
    EXPECT_TRUE(same_str(mbs_table_get_meta(back, "DataRate"), "60.000000"));
    EXPECT_TRUE(back->meta[0].key == NULL);
    // and a second round trip from what was read
    EXPECT_OK(mbs_table_write_sto(back, path, version, &err));
    mbs_table* again = NULL;
    EXPECT_OK(mbs_table_read_sto(path, &again, &err));
    EXPECT_TRUE(again && tables_equal(t, again));
    mbs_table_free(again);
    mbs_table_free(back);
    // the header as OpenSim expects it
    FILE* f = fopen(path, "r");
    char line[256];
    EXPECT_TRUE(f && fgets(line, sizeof(line), f) && strcmp(line, "Coordinates\n") == 0);
    if (version == 1) {
      EXPECT_TRUE(fgets(line, sizeof(line), f) && strcmp(line, "version=1\n") == 0);
      EXPECT_TRUE(fgets(line, sizeof(line), f) && strcmp(line, "nRows=40\n") == 0);
      EXPECT_TRUE(fgets(line, sizeof(line), f) && strcmp(line, "nColumns=5\n") == 0);
      EXPECT_TRUE(fgets(line, sizeof(line), f) && strcmp(line, "inDegrees=yes\n") == 0);
    } else {
      int saw_type = 0, saw_version = 0;
      while (fgets(line, sizeof(line), f) && strcmp(line, "endheader\n") != 0) {
        saw_type |= strcmp(line, "DataType=double\n") == 0;
        saw_version |= strcmp(line, "version=3\n") == 0;
        EXPECT_TRUE(strncmp(line, "nRows", 5) != 0);
      }
      EXPECT_TRUE(saw_type && saw_version);
    }
    if (f) fclose(f);
    remove(path);
  }
  // writer refusals: a label with a blank, an unsupported version
  free(t->labels[1]);
  t->labels[1] = strdup("knee angle");
  EXPECT_EQ_INT(mbs_table_write_sto(t, "test_table_bad.sto", 1, &err), MBS_ERR_ARGUMENT);
  EXPECT_EQ_INT(mbs_table_write_sto(t, "test_table_bad.sto", 2, &err), MBS_ERR_ARGUMENT);
  EXPECT_EQ_INT(mbs_table_write_sto(t, "/nonexistent-folder/x.sto", 1, &err), MBS_ERR_ARGUMENT);
  free(t->labels[1]);
  t->labels[1] = strdup("knee_angle_r");
  EXPECT_OK(mbs_table_set_meta(t, NULL, "a=b", &err));  // would read back as a field
  EXPECT_EQ_INT(mbs_table_write_sto(t, "test_table_bad.sto", 1, &err), MBS_ERR_ARGUMENT);
  t->nmeta--;
  free(t->meta[t->nmeta].value);
  EXPECT_EQ_INT(mbs_table_write_sto(t, "/nonexistent-folder/x.sto", 1, &err), MBS_ERR_IO);
  EXPECT_TRUE(strstr(err.message, "/nonexistent-folder/x.sto") != NULL);
  mbs_table_free(t);
}

// an OpenSim 4 (STOFileAdapter) file: no name, no nRows/nColumns, CRLF, spaces, nan, NaN
static void test_read_version3(void) {
  const char* path = "test_table_osim4.sto";
  write_text(path,
             "inDegrees=no\r\n"
             "num_states=2\r\n"
             "DataType=double\r\n"
             "version=3\r\n"
             "OpenSimVersion=4.5.2\r\n"
             "endheader\r\n"
             "time\t/jointset/hip/q/value   /jointset/hip/q/speed\r\n"
             "0.0\t1.5\t-2\r\n"
             "0.1   nan\t3e-2\r\n"
             "\r\n"
             "0.2\t-NaN   7\r\n");
  mbs_table* t = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_table_read_sto(path, &t, &err));
  if (!t) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  EXPECT_EQ_INT(t->nrow, 3);
  EXPECT_EQ_INT(t->ncol, 3);
  EXPECT_EQ_INT(t->version, 3);
  EXPECT_EQ_INT(t->in_degrees, 0);
  EXPECT_TRUE(strcmp(t->name, "") == 0);
  EXPECT_TRUE(strcmp(t->labels[2], "/jointset/hip/q/speed") == 0);
  EXPECT_EQ_INT(t->nmeta, 2);
  EXPECT_TRUE(same_str(mbs_table_get_meta(t, "num_states"), "2"));
  EXPECT_TRUE(same_str(mbs_table_get_meta(t, "OpenSimVersion"), "4.5.2"));
  EXPECT_TRUE(mbs_table_get(t, 0, 1) == 1.5 && mbs_table_get(t, 1, 2) == 3e-2);
  EXPECT_TRUE(isnan(mbs_table_get(t, 1, 1)) && isnan(mbs_table_get(t, 2, 1)));
  EXPECT_TRUE(mbs_table_get(t, 2, 0) == 0.2);
  EXPECT_EQ_INT(mbs_table_column(t, "/jointset/hip/q/value"), 1);
  EXPECT_EQ_INT(mbs_table_column(t, "nope"), -1);
  mbs_table_free(t);
  remove(path);
}

// malformed storage and marker files: status, and a message naming the file and line
static void expect_bad(const char* path, const char* text, int status, int line,
                       const char* also) {
  if (text) write_text(path, text);
  mbs_table* t = (mbs_table*)1;
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = mbs_table_read(path, &t, &err);
  char where[128];
  snprintf(where, sizeof(where), "%s:%d:", path, line);
  mbs_test_checks++;
  if (rc != status || t != NULL || err.code != status || !strstr(err.message, where) ||
      (also && !strstr(err.message, also))) {
    mbs_test_failures++;
    fprintf(stderr, "%s:%d: FAIL: %s: status %d (expected %d), message '%s' (expected '%s'%s%s)\n",
            __FILE__, __LINE__, path, rc, status, err.message, where, also ? " and " : "",
            also ? also : "");
  }
  if (text) remove(path);
}

static void test_malformed(void) {
  const char* head =
      "walk\nversion=1\nnRows=3\nnColumns=3\ninDegrees=yes\nendheader\ntime\ta\tb\n";
  char buf[512];
  snprintf(buf, sizeof(buf), "%s0\t1\t2\n0.1\t1\n0.2\t1\t2\n", head);
  expect_bad("test_table_columns.mot", buf, MBS_ERR_PARSE, 9,
             "row 2 has 2 values, the header says 3 columns");
  snprintf(buf, sizeof(buf), "%s0\t1\t2\n0.1\t1\t2\n0.2\t1\tx7\n", head);
  expect_bad("test_table_nonnumeric.mot", buf, MBS_ERR_PARSE, 10, "column 3 ('b'): 'x7'");
  expect_bad("test_table_noend.mot",
             "walk\nversion=1\nnRows=1\nnColumns=3\ntime\ta\tb\n0\t1\t2\n", MBS_ERR_PARSE, 6,
             "endheader");
  expect_bad("test_table_noend2.mot", "walk\nversion=1\nnRows=1\n", MBS_ERR_PARSE, 3,
             "endheader");
  snprintf(buf, sizeof(buf), "%s0\t1\t2\n0.1\t1\t2\n0.2\t1", head);  // cut inside the last row
  expect_bad("test_table_truncated.mot", buf, MBS_ERR_PARSE, 10, "truncated");
  snprintf(buf, sizeof(buf), "%s0\t1\t2\n0.1\t1\t2\n", head);  // cut at a line end
  expect_bad("test_table_short.mot", buf, MBS_ERR_PARSE, 3, "nRows=3, the file has 2 data rows");
  snprintf(buf, sizeof(buf), "%s0\t1\t2\n0.1\t1\t2\n0.2\t1\t2\n0.3\t1\t2\n", head);
  expect_bad("test_table_nrows.mot", buf, MBS_ERR_PARSE, 3, "nRows=3, the file has 4");
  expect_bad("test_table_ncols.mot",
             "walk\nversion=1\nnRows=1\nnColumns=4\nendheader\ntime\ta\tb\n0\t1\t2\n",
             MBS_ERR_PARSE, 6, "nColumns=4");
  expect_bad("test_table_empty.sto", "", MBS_ERR_PARSE, 1, "empty");
  expect_bad("test_table_blank.sto", "\n  \n", MBS_ERR_PARSE, 1, "empty");
  expect_bad("test_table_degrees.sto",
             "walk\nversion=1\ninDegrees=maybe\nendheader\ntime\n0\n", MBS_ERR_PARSE, 3,
             "inDegrees");
  expect_bad("test_table_vec3.sto", "DataType=Vec3\nversion=3\nendheader\ntime\ta\n0\t1,2,3\n",
             MBS_ERR_PARSE, 1, "Vec3");
  expect_bad("test_table_nolabels.sto", "walk\nendheader\n\n", MBS_ERR_PARSE, 3, "labels");
  // a file that does not exist: an I/O error naming it
  mbs_table* t = NULL;
  mbs_error err;
  EXPECT_EQ_INT(mbs_table_read_sto("test_table_missing.sto", &t, &err), MBS_ERR_IO);
  EXPECT_TRUE(strstr(err.message, "test_table_missing.sto") != NULL);

  // marker files
  const char* trc_head =
      "PathFileType\t4\t(X/Y/Z)\tbad.trc\n"
      "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\t"
      "OrigNumFrames\n"
      "100\t100\t2\t2\tmm\t100\t1\t2\n";
  snprintf(buf, sizeof(buf),
           "%sFrame#\tTime\tA\t\t\tB\t\t\tC\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n1\t0\t1\t2\t3\t4\t5\t6\n",
           trc_head);
  expect_bad("test_table_markers.trc", buf, MBS_ERR_PARSE, 4, "NumMarkers=2");
  snprintf(buf, sizeof(buf),
           "%sFrame#\tTime\tA\t\t\tB\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n1\t0\t1\t2\t3\t4\t5\t6\n"
           "2\t0.01\t1\t2\t3\t4\t5,5\t6\n",
           trc_head);
  expect_bad("test_table_value.trc", buf, MBS_ERR_PARSE, 8, "'B_y'");
  snprintf(buf, sizeof(buf),
           "%sFrame#\tTime\tA\t\t\tB\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n1\t0\t1\t2\t3\t4\t5\t6\n",
           trc_head);
  expect_bad("test_table_frames.trc", buf, MBS_ERR_PARSE, 3, "NumFrames=2, the file has 1");
  snprintf(buf, sizeof(buf),
           "%sFrame#\tTime\tA\t\t\tB\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n1\t0\t1\t2\t3\t4\t5\t6\n"
           "2\t0.01\t1\t2\t3\t4",
           trc_head);
  expect_bad("test_table_cut.trc", buf, MBS_ERR_PARSE, 8, "truncated");
  expect_bad("test_table_notrc.trc", "DataRate\t100\n", MBS_ERR_PARSE, 1, "PathFileType");
}

// ---------------------------------------------------------------------------------------------

static void test_trc(void) {
  const char* path = "test_table_markers_ok.trc";
  write_text(path,
             "PathFileType\t4\t(X/Y/Z)\tsynthetic.trc\r\n"
             "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\t"
             "OrigDataStartFrame\tOrigNumFrames\r\n"
             "100.00\t100.00\t       3\t3\tmm\t100.00\t1\t       3\r\n"
             "Frame#\tTime\tR.ASIS\t\t\tL.ASIS\t\t\tTop.Head\t\t\t\r\n"
             "\t\tX1\tY1\tZ1\tX2\tY2\tZ2\tX3\tY3\tZ3\t\r\n"
             "\r\n"
             "1\t0.000000\t617.247620\t1055.275020\t170.781980\t1\t2\t3\t-4\t-5\t-6\t\r\n"
             "2\t0.010000\t618\t1053\t168\t\t\t\t7\t8\t9\t\r\n"  // L.ASIS not seen
             "3\t0.020000\t619\t1052\t167\t1.5\t\t3.5\t10\t11\t12\r\n");  // one field empty
  mbs_table* t = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_table_read(path, &t, &err));
  if (!t) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  EXPECT_EQ_INT(t->nrow, 3);
  EXPECT_EQ_INT(t->ncol, 10);
  EXPECT_EQ_INT(t->nmarkers, 3);
  EXPECT_TRUE(strcmp(t->name, "synthetic.trc") == 0);
  EXPECT_TRUE(strcmp(t->markers[2], "Top.Head") == 0);
  EXPECT_TRUE(strcmp(t->labels[0], "time") == 0 && strcmp(t->labels[1], "R.ASIS_x") == 0 &&
              strcmp(t->labels[6], "L.ASIS_z") == 0 && strcmp(t->labels[9], "Top.Head_z") == 0);
  EXPECT_TRUE(same_str(t->units, "mm"));
  EXPECT_TRUE(same_str(mbs_table_get_meta(t, "DataRate"), "100.00"));
  EXPECT_TRUE(same_str(mbs_table_get_meta(t, "NumFrames"), "3"));
  EXPECT_TRUE(mbs_table_get(t, 0, 1) == 617.247620 && mbs_table_get(t, 0, 9) == -6);
  EXPECT_TRUE(isnan(mbs_table_get(t, 1, 4)) && isnan(mbs_table_get(t, 1, 5)) &&
              isnan(mbs_table_get(t, 1, 6)));
  EXPECT_TRUE(isnan(mbs_table_get(t, 2, 4)) && isnan(mbs_table_get(t, 2, 6)));  // whole marker
  EXPECT_TRUE(mbs_table_get(t, 2, 7) == 10 && mbs_table_get(t, 2, 0) == 0.02);
  EXPECT_OK(mbs_table_to_meters(t, &err));
  EXPECT_NEAR(mbs_table_get(t, 0, 1), 0.61724762, 1e-15);
  EXPECT_TRUE(mbs_table_get(t, 2, 0) == 0.02);  // time untouched
  EXPECT_TRUE(same_str(t->units, "m") && same_str(mbs_table_get_meta(t, "Units"), "m"));
  EXPECT_OK(mbs_table_to_meters(t, &err));  // meters stay meters
  EXPECT_NEAR(mbs_table_get(t, 0, 1), 0.61724762, 1e-15);
  free(t->units);
  t->units = strdup("inch");
  EXPECT_EQ_INT(mbs_table_to_meters(t, &err), MBS_ERR_PARAMETER);
  mbs_table* c = NULL;
  EXPECT_OK(mbs_table_copy(&c, t, &err));
  EXPECT_TRUE(c && c->nmarkers == 3 && same_str(c->markers[1], "L.ASIS") &&
              same_str(c->units, "inch") && tables_equal(c, t));
  mbs_table_free(c);
  mbs_table_free(t);
  remove(path);
}

static void test_radians(void) {
  const char* labels[4] = {"time", "pelvis_tilt", "pelvis_tx", "knee_angle_r"};
  mbs_table* t = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_create(&t, "Coordinates", 2, 4, labels, &err));
  const double v[8] = {0, 10, 0.6, -45, 0.1, -90, 0.7, 180};
  memcpy(t->data, v, sizeof(v));
  t->in_degrees = 1;
  const char* angles[2] = {"pelvis_tilt", "knee_angle_r"};
  const char* wrong[2] = {"pelvis_tilt", "knee_angle"};
  EXPECT_EQ_INT(mbs_table_to_radians(t, wrong, 2, &err), MBS_ERR_UNKNOWN_NAME);
  EXPECT_TRUE(strstr(err.message, "knee_angle") != NULL);
  EXPECT_TRUE(t->in_degrees == 1 && mbs_table_get(t, 0, 1) == 10);  // nothing converted
  EXPECT_OK(mbs_table_to_radians(t, angles, 2, &err));
  EXPECT_EQ_INT(t->in_degrees, 0);
  EXPECT_NEAR(mbs_table_get(t, 0, 1), 10 * M_PI / 180, 1e-15);
  EXPECT_NEAR(mbs_table_get(t, 0, 3), -M_PI / 4, 1e-15);
  EXPECT_NEAR(mbs_table_get(t, 1, 1), -M_PI / 2, 1e-15);
  EXPECT_NEAR(mbs_table_get(t, 1, 3), M_PI, 1e-15);
  EXPECT_TRUE(mbs_table_get(t, 0, 2) == 0.6 && mbs_table_get(t, 1, 2) == 0.7);  // meters
  EXPECT_TRUE(mbs_table_get(t, 1, 0) == 0.1);
  EXPECT_OK(mbs_table_to_radians(t, angles, 2, &err));  // already radians: nothing to do
  EXPECT_NEAR(mbs_table_get(t, 1, 3), M_PI, 1e-15);
  t->in_degrees = 1;
  EXPECT_OK(mbs_table_to_radians(t, NULL, 0, &err));  // every column but time
  EXPECT_NEAR(mbs_table_get(t, 0, 2), 0.6 * M_PI / 180, 1e-15);
  EXPECT_TRUE(mbs_table_get(t, 1, 0) == 0.1);
  mbs_table_free(t);
}

// ---------------------------------------------------------------------------------------------

static double butterworth_zero_phase_gain(double f, double fc, double T) {
  return 1 / (1 + pow(tan(M_PI * f * T) / tan(M_PI * fc * T), 6));
}

static mbs_table* sampled(int n, double T, double (*fn)(double)) {
  const char* labels[3] = {"time", "y", "z"};
  mbs_table* t = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_create(&t, "signal", n, 3, labels, &err));
  if (!t) exit(1);
  for (int r = 0; r < n; r++) {
    t->data[3 * r] = r * T;
    t->data[3 * r + 1] = fn(r * T);
    t->data[3 * r + 2] = 0.25 + 2 * r * T;  // a straight line
  }
  return t;
}

static double two_sines(double t) { return sin(2 * M_PI * t) + 0.5 * sin(2 * M_PI * 30 * t); }

static void test_lowpass(void) {
  const double fs = 600, T = 1 / fs, fc = 6;
  const int n = 2401;  // 4 s
  mbs_table* t = sampled(n, T, two_sines);
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_table_lowpass(t, fc, NULL, 0, 1, &err));
  const double g1 = butterworth_zero_phase_gain(1, fc, T);
  const double g30 = butterworth_zero_phase_gain(30, fc, T);
  // away from the ends (the middle 2 s: whole periods of both parts) project on sin and cos
  double s1 = 0, c1 = 0, s30 = 0, c30 = 0, worst = 0, worst_line = 0;
  const int k0 = 600, k1 = 1800;
  for (int k = k0; k < k1; k++) {
    const double tk = k * T, y = mbs_table_get(t, k, 1);
    s1 += y * sin(2 * M_PI * tk);
    c1 += y * cos(2 * M_PI * tk);
    s30 += y * sin(2 * M_PI * 30 * tk);
    c30 += y * cos(2 * M_PI * 30 * tk);
    const double expect = g1 * sin(2 * M_PI * tk) + g30 * 0.5 * sin(2 * M_PI * 30 * tk);
    worst = fmax(worst, fabs(y - expect));
    worst_line = fmax(worst_line, fabs(mbs_table_get(t, k, 2) - (0.25 + 2 * tk)));
  }
  const double N = k1 - k0;
  const double amp1 = 2 / N * hypot(s1, c1), phase1 = atan2(2 / N * c1, 2 / N * s1);
  const double amp30 = 2 / N * hypot(s30, c30);
  printf("lowpass 6 Hz at 600 Hz: 1 Hz gain %.9f (formula %.9f), phase %.2e rad; 30 Hz gain "
         "%.4e (formula %.4e); max deviation from the filtered sines %.2e; line %.2e\n",
         amp1, g1, phase1, amp30 / 0.5, g30, worst, worst_line);
  EXPECT_TRUE(1 - g1 > 1e-5);                // the test can see the 1 Hz attenuation ...
  EXPECT_ABS(amp1, g1, 1e-7);                // ... and it is the formula's
  EXPECT_ABS(phase1, 0, 1e-7);               // zero phase
  EXPECT_NEAR(amp30 / 0.5, g30, 0.01 * g30 / fmax(g30, 1));  // 1 % of the tiny 30 Hz gain
  EXPECT_TRUE(worst < 1e-7);
  EXPECT_TRUE(worst_line < 1e-9);
  // near the ends the padding keeps the error small too
  double worst_end = 0;
  for (int k = 0; k < n; k++) {
    const double tk = k * T;
    worst_end = fmax(worst_end, fabs(mbs_table_get(t, k, 1) - g1 * sin(2 * M_PI * tk)));
  }
  printf("lowpass: max deviation over the whole 4 s %.2e\n", worst_end);
  EXPECT_TRUE(worst_end < 0.05);

  // only the listed column changes; a cutoff at the formula's half-power point
  mbs_table_free(t);
  t = sampled(n, T, two_sines);
  mbs_table* orig = NULL;
  EXPECT_OK(mbs_table_copy(&orig, t, &err));
  const char* z[1] = {"z"};
  EXPECT_OK(mbs_table_lowpass(t, fc, z, 1, 1, &err));
  int y_same = 1;
  for (int k = 0; k < n; k++) y_same &= mbs_table_get(t, k, 1) == mbs_table_get(orig, k, 1);
  EXPECT_TRUE(y_same);
  EXPECT_NEAR(butterworth_zero_phase_gain(fc, fc, T), 0.5, 1e-15);

  // a column listed twice is filtered once
  mbs_table* once = NULL;
  EXPECT_OK(mbs_table_copy(&once, orig, &err));
  const char* twice[2] = {"y", "y"};
  const char* y1[1] = {"y"};
  EXPECT_OK(mbs_table_lowpass(once, fc, y1, 1, 1, &err));
  mbs_table* dup = NULL;
  EXPECT_OK(mbs_table_copy(&dup, orig, &err));
  EXPECT_OK(mbs_table_lowpass(dup, fc, twice, 2, 1, &err));
  EXPECT_TRUE(once && dup && tables_equal(once, dup));
  // OpenSim's ID tool pads the table itself and filters without further padding: the rows of
  // the original range are the same as with pad = 1
  mbs_table* padded = NULL;
  EXPECT_OK(mbs_table_pad(orig, n / 2, &padded, &err));
  EXPECT_OK(mbs_table_lowpass(padded, fc, y1, 1, 0, &err));
  int same = padded != NULL;
  for (int k = 0; k < n && same; k++)
    same = mbs_table_get(padded, n / 2 + k, 1) == mbs_table_get(once, k, 1) &&
           fabs(mbs_table_get(padded, n / 2 + k, 0) - mbs_table_get(once, k, 0)) < 1e-12;
  EXPECT_TRUE(same);
  mbs_table_free(padded);
  mbs_table_free(once);
  mbs_table_free(dup);

  // refusals
  const char* bad[1] = {"w"};
  EXPECT_EQ_INT(mbs_table_lowpass(t, fc, bad, 1, 1, &err), MBS_ERR_UNKNOWN_NAME);
  EXPECT_EQ_INT(mbs_table_lowpass(t, 300, NULL, 0, 1, &err), MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "half the sampling rate") != NULL);
  EXPECT_EQ_INT(mbs_table_lowpass(t, 0, NULL, 0, 1, &err), MBS_ERR_PARAMETER);
  t->data[3 * 100] += 0.3 * T;  // one sample late: not uniform
  EXPECT_EQ_INT(mbs_table_lowpass(t, fc, NULL, 0, 1, &err), MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "not uniform") != NULL && strstr(err.message, "row 101"));
  t->data[3 * 100] = t->data[3 * 99];  // repeated time
  EXPECT_EQ_INT(mbs_table_lowpass(t, fc, NULL, 0, 1, &err), MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "does not increase at row 101") != NULL);
  t->data[3 * 100] = 100 * T;
  t->data[3 * 50 + 1] = NAN;
  EXPECT_EQ_INT(mbs_table_lowpass(t, fc, NULL, 0, 1, &err), MBS_ERR_NAN);
  EXPECT_TRUE(strstr(err.message, "'y'") && strstr(err.message, "row 51"));
  mbs_table_free(orig);
  mbs_table_free(t);
}

static double square(double t) { return t * t; }

static void test_pad(void) {
  mbs_table* t = sampled(5, 1, square);  // y = 0 1 4 9 16
  mbs_table* p = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_pad(t, 2, &p, &err));
  if (!p) return;
  EXPECT_EQ_INT(p->nrow, 9);
  const double time[9] = {-2, -1, 0, 1, 2, 3, 4, 5, 6};
  const double y[9] = {-4, -1, 0, 1, 4, 9, 16, 23, 28};  // 2 y0 - y[k], 2 y4 - y[4-k]
  int ok = 1;
  for (int r = 0; r < 9; r++) ok &= mbs_table_get(p, r, 0) == time[r] && mbs_table_get(p, r, 1) == y[r];
  EXPECT_TRUE(ok);
  mbs_table_free(p);
  EXPECT_EQ_INT(mbs_table_pad(t, 5, &p, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(p == NULL);
  mbs_table_free(t);
}

// ---------------------------------------------------------------------------------------------

static double quadratic(double t) { return 3 - 2 * t + 0.7 * t * t; }

static const double kOmega = 2 * M_PI * 1.3;
static double sine(double t) { return sin(kOmega * t); }

// largest errors of value and derivatives of the spline of sin(w t) sampled with n points on
// [0, 2], over [0.5, 1.5] at points between the knots
static void sine_errors(int n, double e[3]) {
  const double h = 2.0 / (n - 1);
  mbs_table* t = sampled(n, h, sine);
  mbs_table_spline* s = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_spline_create(t, &s, &err));
  e[0] = e[1] = e[2] = 0;
  for (int k = 0; k <= 1000 && s; k++) {
    const double tk = 0.5 + k * 1e-3 + 0.37 * h * (k % 3);
    double d[3];
    mbs_table_spline_eval(s, 1, tk, d);
    e[0] = fmax(e[0], fabs(d[0] - sin(kOmega * tk)));
    e[1] = fmax(e[1], fabs(d[1] - kOmega * cos(kOmega * tk)));
    e[2] = fmax(e[2], fabs(d[2] + kOmega * kOmega * sin(kOmega * tk)));
  }
  mbs_table_spline_free(s);
  mbs_table_free(t);
}

static void test_spline(void) {
  mbs_error err;
  // a quadratic on uneven knots: exact everywhere, also outside the knots
  const char* labels[2] = {"time", "q"};
  mbs_table* t = NULL;
  EXPECT_OK(mbs_table_create(&t, "q", 30, 2, labels, &err));
  mbs_test_rng rng = {12345};
  double x = -1;
  for (int r = 0; r < 30; r++) {
    x += mbs_test_uniform(&rng, 0.02, 0.3);
    t->data[2 * r] = x;
    t->data[2 * r + 1] = quadratic(x);
  }
  mbs_table_spline* s = NULL;
  EXPECT_OK(mbs_table_spline_create(t, &s, &err));
  double worst[3] = {0, 0, 0};
  for (int k = -50; k <= 1050 && s; k++) {
    const double tk = t->data[0] + k * (x - t->data[0]) / 1000;
    double d[3];
    mbs_table_spline_eval(s, 1, tk, d);
    worst[0] = fmax(worst[0], fabs(d[0] - quadratic(tk)));
    worst[1] = fmax(worst[1], fabs(d[1] - (-2 + 1.4 * tk)));
    worst[2] = fmax(worst[2], fabs(d[2] - 1.4));
  }
  printf("spline of a quadratic: errors %.1e %.1e %.1e\n", worst[0], worst[1], worst[2]);
  EXPECT_TRUE(worst[0] < 1e-12 && worst[1] < 1e-11 && worst[2] < 1e-9);
  double d[3], all[2], all1[2], all2[2];
  mbs_table_spline_eval(s, 1, t->data[2 * 7], d);
  EXPECT_NEAR(d[0], t->data[2 * 7 + 1], 1e-14);  // through the knots
  mbs_table_spline_eval_all(s, 0.123, all, all1, all2);
  mbs_table_spline_eval(s, 1, 0.123, d);
  EXPECT_TRUE(all[0] == 0.123 && all1[0] == 1 && all2[0] == 0);
  EXPECT_TRUE(all[1] == d[0] && all1[1] == d[1] && all2[1] == d[2]);
  mbs_table_spline_free(s);

  // refusals
  t->data[2 * 5 + 1] = NAN;
  EXPECT_EQ_INT(mbs_table_spline_create(t, &s, &err), MBS_ERR_NAN);
  t->data[2 * 5 + 1] = 0;
  t->data[2 * 5] = t->data[2 * 4];
  EXPECT_EQ_INT(mbs_table_spline_create(t, &s, &err), MBS_ERR_PARAMETER);
  t->nrow = 2;
  EXPECT_EQ_INT(mbs_table_spline_create(t, &s, &err), MBS_ERR_PARAMETER);
  EXPECT_TRUE(s == NULL);
  t->nrow = 30;
  mbs_table_free(t);

  // a sine: interior errors bounded by the spacing, and falling as h^6, h^5, h^4
  double e[3], e2[3];
  const int n = 41;  // h = 0.05 s, 15 points per period
  sine_errors(n, e);
  sine_errors(2 * n - 1, e2);
  const double wh = kOmega * 2.0 / (n - 1);
  printf("spline of sin: errors %.2e %.2e %.2e at h = %.3f, ratios at h/2: %.1f %.1f %.1f\n",
         e[0], e[1], e[2], 2.0 / (n - 1), e[0] / e2[0], e[1] / e2[1], e[2] / e2[2]);
  // bounds (w h)^(6-k) w^k / 100: the quintic's error constants are far below 1/100 ...
  EXPECT_TRUE(e[0] < pow(wh, 6) / 100);
  EXPECT_TRUE(e[1] < pow(wh, 5) * kOmega / 100);
  EXPECT_TRUE(e[2] < pow(wh, 4) * kOmega * kOmega / 100);
  // ... and the orders are those of a quintic (2^6, 2^5, 2^4 within 25 %)
  EXPECT_TRUE(e[0] / e2[0] > 0.75 * 64);
  EXPECT_TRUE(e[1] / e2[1] > 0.75 * 32);
  EXPECT_TRUE(e[2] / e2[2] > 0.75 * 16);
}

static void test_resample(void) {
  const int n = 61;
  const double h = 2.0 / (n - 1);
  mbs_table* t = sampled(n, h, sine);
  mbs_table* r = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_resample(t, h / 3, &r, &err));
  if (!r) return;
  EXPECT_EQ_INT(r->nrow, 3 * (n - 1) + 1);
  EXPECT_TRUE(mbs_table_get(r, r->nrow - 1, 0) <= 2.0);
  EXPECT_NEAR(mbs_table_get(r, r->nrow - 1, 0), 2.0, 1e-12);
  double worst = 0;
  for (int k = 0; k < r->nrow; k++) {
    const double tk = mbs_table_get(r, k, 0);
    if (tk < 0.5 || tk > 1.5) continue;
    worst = fmax(worst, fabs(mbs_table_get(r, k, 1) - sin(kOmega * tk)));
    EXPECT_NEAR(mbs_table_get(r, k, 2), 0.25 + 2 * tk, 1e-12);
  }
  EXPECT_TRUE(worst < pow(kOmega * h, 6) / 100);
  EXPECT_NEAR(mbs_table_min_step(r), h / 3, 1e-12);
  mbs_table_free(r);
  EXPECT_EQ_INT(mbs_table_resample(t, -1, &r, &err), MBS_ERR_PARAMETER);
  mbs_table_free(t);
}

// ---------------------------------------------------------------------------------------------
// OpenSim's published files

static mbs_table* read_shared(const char* dir, const char* rel) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/data/gait10dof18musc/%s", dir, rel);
  mbs_table* t = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_table_read(path, &t, &err));
  if (!t) fprintf(stderr, "%s\n", err.message);
  return t;
}

static int test_shared(const char* dir) {
  char probe[1024];
  snprintf(probe, sizeof(probe), "%s/data/gait10dof18musc/IK/subject01_walk_IK.mot", dir);
  FILE* f = fopen(probe, "r");
  if (!f) {
    printf("SKIPPED: OpenSim data not found (%s; set MBS_SHARED_DIR)\n", probe);
    return 77;
  }
  fclose(f);
  mbs_error err;
  mbs_error_clear(&err);

  mbs_table* ik = read_shared(dir, "IK/subject01_walk_IK.mot");
  if (ik) {
    EXPECT_EQ_INT(ik->nrow, 151);
    EXPECT_EQ_INT(ik->ncol, 11);
    EXPECT_EQ_INT(ik->version, 1);
    EXPECT_EQ_INT(ik->in_degrees, 1);
    EXPECT_TRUE(same_str(ik->name, "Coordinates"));
    EXPECT_TRUE(same_str(ik->labels[1], "pelvis_tilt") && same_str(ik->labels[10], "lumbar_extension"));
    EXPECT_TRUE(ik->nmeta == 2 && ik->meta[1].key == NULL &&
                same_str(ik->meta[1].value, "Angles are in degrees."));
    EXPECT_TRUE(mbs_table_get(ik, 0, 1) == 10.32995988 && mbs_table_get(ik, 0, 10) == -26.13945065);
    EXPECT_TRUE(mbs_table_get(ik, 1, 0) == 0.01666667 && mbs_table_get(ik, 3, 5) == -11.40851839);
    EXPECT_TRUE(mbs_table_get(ik, 150, 0) == 2.5 && mbs_table_get(ik, 150, 1) == 8.55862145);
    // round trips of OpenSim's own file
    mbs_table* back = NULL;
    EXPECT_OK(mbs_table_write_sto(ik, "test_table_ik_v1.mot", 1, &err));
    EXPECT_OK(mbs_table_read_sto("test_table_ik_v1.mot", &back, &err));
    EXPECT_TRUE(back && tables_equal(ik, back));
    mbs_table_free(back);
    back = NULL;
    EXPECT_OK(mbs_table_write_sto(ik, "test_table_ik_v3.mot", 3, &err));
    EXPECT_OK(mbs_table_read_sto("test_table_ik_v3.mot", &back, &err));
    EXPECT_TRUE(back && tables_equal(ik, back));
    mbs_table_free(back);
    remove("test_table_ik_v1.mot");
    remove("test_table_ik_v3.mot");
    // the rotational coordinates to radians; pelvis_tx and pelvis_ty are meters
    mbs_table* raw = NULL;
    EXPECT_OK(mbs_table_copy(&raw, ik, &err));
    const char* rot[8] = {"pelvis_tilt",   "hip_flexion_r", "knee_angle_r", "ankle_angle_r",
                          "hip_flexion_l", "knee_angle_l",  "ankle_angle_l", "lumbar_extension"};
    EXPECT_OK(mbs_table_to_radians(ik, rot, 8, &err));
    int sane = 1, exact = 1;
    for (int r = 0; r < ik->nrow; r++) {
      for (int c = 1; c < ik->ncol; c++) {
        const double v = mbs_table_get(ik, r, c), v0 = mbs_table_get(raw, r, c);
        if (c == 2 || c == 3) {
          exact &= v == v0;
          sane &= v > 0.5 && v < 1.1;  // pelvis 0.5-1.1 m ahead and above the origin
        } else {
          exact &= v == v0 * (M_PI / 180);
          sane &= fabs(v) < M_PI / 2;  // walking: no joint beyond 90 degrees
        }
      }
      const double knee = mbs_table_get(ik, r, 5);
      sane &= knee > -2.1 && knee < 0.2;  // the knee flexes to negative angles in this model
    }
    EXPECT_TRUE(exact);
    EXPECT_TRUE(sane);
    EXPECT_NEAR(mbs_table_get(ik, 0, 1), 0.180292, 1e-6);  // 10.33 degrees
    // OpenSim's ID filter (6 Hz, padded) on the IK result: smooth walking data change little
    EXPECT_OK(mbs_table_lowpass(ik, 6, rot, 8, 1, &err));
    double worst = 0;
    for (int r = 0; r < ik->nrow; r++)
      for (int c = 1; c < ik->ncol; c++)
        worst = fmax(worst, fabs(mbs_table_get(ik, r, c) - mbs_table_get(raw, r, c) * (c == 2 || c == 3 ? 1 : M_PI / 180)));
    printf("IK coordinates filtered at 6 Hz: largest change %.4f rad\n", worst);
    EXPECT_TRUE(worst > 1e-4 && worst < 0.05);
    mbs_table_spline* s = NULL;
    EXPECT_OK(mbs_table_spline_create(ik, &s, &err));
    double q[11], qd[11], qdd[11];
    if (s) mbs_table_spline_eval_all(s, 1.234, q, qd, qdd);
    EXPECT_TRUE(s && fabs(qd[5]) < 15 && fabs(qdd[5]) < 300);  // knee: rad/s, rad/s^2
    mbs_table_spline_free(s);
    mbs_table_free(raw);
    mbs_table_free(ik);
  }

  mbs_table* grf = read_shared(dir, "ExperimentalData/subject01_walk_grf.mot");
  if (grf) {
    EXPECT_EQ_INT(grf->nrow, 1501);
    EXPECT_EQ_INT(grf->ncol, 19);
    EXPECT_TRUE(same_str(grf->name, "subject01_walk1_grf.mot"));
    EXPECT_TRUE(same_str(grf->labels[7], "1_ground_force_vx") &&
                same_str(grf->labels[18], "1_ground_torque_z"));
    EXPECT_TRUE(mbs_table_get(grf, 0, 1) == 101.5119767 && mbs_table_get(grf, 0, 2) == 745.4661142);
    EXPECT_TRUE(mbs_table_get(grf, 1, 0) == 0.0017 && mbs_table_get(grf, 1, 16) == 1.31259011);
    EXPECT_TRUE(mbs_table_get(grf, 1500, 0) == 2.5 && mbs_table_get(grf, 1500, 1) == 121.2435375);
    // times printed with 4 decimals at 600 Hz are not uniform: the filter says so
    EXPECT_EQ_INT(mbs_table_lowpass(grf, 6, NULL, 0, 1, &err), MBS_ERR_PARAMETER);
    mbs_table_free(grf);
  }

  mbs_table* trc = read_shared(dir, "ExperimentalData/subject01_walk.trc");
  if (trc) {
    EXPECT_EQ_INT(trc->nrow, 151);
    EXPECT_EQ_INT(trc->nmarkers, 41);
    EXPECT_EQ_INT(trc->ncol, 1 + 3 * 41);
    EXPECT_TRUE(same_str(trc->units, "mm"));
    EXPECT_TRUE(same_str(trc->name, "subject01_walk1.trc"));
    EXPECT_TRUE(same_str(mbs_table_get_meta(trc, "DataRate"), "60.00"));
    EXPECT_TRUE(same_str(trc->markers[0], "R.ASIS") && same_str(trc->markers[40], "Top.Head"));
    EXPECT_TRUE(same_str(trc->labels[3], "R.ASIS_z") && same_str(trc->labels[123], "Top.Head_z"));
    EXPECT_TRUE(mbs_table_get(trc, 0, 1) == 617.247620 && mbs_table_get(trc, 0, 3) == 170.781980);
    EXPECT_TRUE(mbs_table_get(trc, 1, 0) == 0.017 && mbs_table_get(trc, 1, 1) == 617.998110);
    EXPECT_TRUE(mbs_table_get(trc, 150, 0) == 2.5 && mbs_table_get(trc, 150, 1) == 597.613650);
    int nan_count = 0;
    for (long k = 0; k < (long)trc->nrow * trc->ncol; k++) nan_count += isnan(trc->data[k]);
    EXPECT_EQ_INT(nan_count, 0);
    EXPECT_OK(mbs_table_to_meters(trc, &err));
    EXPECT_NEAR(mbs_table_get(trc, 0, 2), 1.05527502, 1e-15);
    EXPECT_TRUE(mbs_table_get(trc, 150, 0) == 2.5);
    mbs_table_free(trc);
  }

  mbs_table* id = read_shared(dir, "ID/Results/subject01_walk_ID.sto");
  if (id) {
    EXPECT_EQ_INT(id->nrow, 151);
    EXPECT_EQ_INT(id->ncol, 11);
    EXPECT_EQ_INT(id->in_degrees, 0);
    EXPECT_TRUE(same_str(id->name, "Inverse Dynamics Generalized Forces"));
    EXPECT_TRUE(same_str(id->labels[5], "knee_angle_r_moment"));
    EXPECT_TRUE(mbs_table_get(id, 0, 0) == -0.00000050 && mbs_table_get(id, 0, 1) == 2.02122553);
    EXPECT_TRUE(mbs_table_get(id, 150, 0) == 2.49999850 && mbs_table_get(id, 150, 10) == 3.88919711);
    // OpenSim's ID tool pads the IK result with nrow/2 rows, then (the 8-decimal times being
    // uneven by 1e-8) resamples at the smallest step before filtering, and reports on that
    // grid: the same steps here give its output times (-0.0000005, 0.01666616, ...)
    mbs_table* ik2 = read_shared(dir, "IK/subject01_walk_IK.mot");
    mbs_table *padded = NULL, *grid = NULL;
    if (ik2) EXPECT_OK(mbs_table_pad(ik2, ik2->nrow / 2, &padded, &err));
    if (padded) EXPECT_OK(mbs_table_resample(padded, mbs_table_min_step(padded), &grid, &err));
    if (grid) {
      int k0 = 0;
      while (k0 + 1 < grid->nrow && mbs_table_get(grid, k0 + 1, 0) <= 0) k0++;
      double worst = 0;
      for (int r = 0; r < id->nrow && k0 + r < grid->nrow; r++)
        worst = fmax(worst, fabs(mbs_table_get(grid, k0 + r, 0) - mbs_table_get(id, r, 0)));
      printf("OpenSim ID output times from pad + resample: largest difference %.1e s\n", worst);
      EXPECT_TRUE(k0 + id->nrow <= grid->nrow && worst < 5e-9);
      EXPECT_OK(mbs_table_lowpass(grid, 6, NULL, 0, 0, &err));  // the rest of the ID pipeline
    }
    mbs_table_free(grid);
    mbs_table_free(padded);
    mbs_table_free(ik2);
    mbs_table_free(id);
  }
  return mbs_test_finish("test_table (OpenSim files)");
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "--data") == 0) return test_shared(argv[2]);
  test_round_trip();
  test_read_version3();
  test_malformed();
  test_trc();
  test_radians();
  test_lowpass();
  test_pad();
  test_spline();
  test_resample();
  return mbs_test_finish("test_table");
}
