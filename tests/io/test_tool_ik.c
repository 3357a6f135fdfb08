// `mbstudy run-tool` with OpenSim's InverseKinematicsTool (jobs/tool_ik.c):
//  - a synthetic trial written here (a leg model, a .trc in mm generated from known coordinates
//    with a marker missing in some frames, a marker the model lacks, a coordinate file in
//    degrees): every coordinate comes back in the .mot (degrees for OpenSim 4's rotational
//    coordinates, the knee CustomJoint included), the from_file task's coordinate follows the
//    file, the locked one stays, marker errors and model marker locations are written with
//    OpenSim's names and columns, and the warnings OpenSim gives are given;
//  - bad input: missing files, a time range outside the data, a NaN time, a frame without any
//    marker, tasks that cannot be served, bad property values: clear messages naming the file,
//    line or element;
//  - with --data DIR (the shared folder; exit 77, skipped, without it): OpenSim's own walking
//    trial of gait10dof18musc (IK/walk_Setup_IK.xml) compared with OpenSim's result
//    IK/subject01_walk_IK.mot, coordinate by coordinate: RMS at most 0.2 degrees for rotations
//    (OpenSim's own IK test tolerance) and 1 mm for translations. With --mbstudy PATH it runs
//    the mbstudy program, otherwise the same command in this process (for valgrind).
#define _GNU_SOURCE  // memmem
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ik_leg_model.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/table.h"
#include "mbs_test.h"
#include "mbs_test_tool.h"

#define PI 3.14159265358979323846
#define NFRAME 20

static char tmpdir[256];

static void write_file(const char* name, const char* text) {
  mbs_test_write_file(tmpdir, name, text);
}


// run a setup file with the IK tool in this process; the log into *log (malloc'd)
static int run_setup(const char* setup, const char* results_dir, char** log) {
  return mbs_test_run_setup(mbs_tool_inverse_kinematics, setup, results_dir, log);
}


//---------------------------------- the synthetic trial ----------------------------------------

typedef struct trial {
  mbs_osim_model* m;
  double q[NFRAME][32];     // true coordinates (rad, m)
  double x[NFRAME][3 * 32]; // markers (m), model order
} trial;

static void true_pose(const mbs_osim_model* m, int k, double* q) {
  const double t = 0.01 * k;
  memset(q, 0, 32 * sizeof(double));
  q[mbs_osim_find_coordinate(m, "pelvis_rx")] = 0.05 * sin(3 * t);
  q[mbs_osim_find_coordinate(m, "pelvis_ry")] = 0.1 + 0.2 * t;
  q[mbs_osim_find_coordinate(m, "pelvis_rz")] = -0.1 * cos(2 * t);
  q[mbs_osim_find_coordinate(m, "pelvis_tx")] = 0.3 + 1.2 * t;
  q[mbs_osim_find_coordinate(m, "pelvis_ty")] = 0.95 + 0.02 * sin(6 * t);
  q[mbs_osim_find_coordinate(m, "pelvis_tz")] = 0.01;
  q[mbs_osim_find_coordinate(m, "hip")] = 0.4 * sin(4 * t);
  q[mbs_osim_find_coordinate(m, "knee")] = -0.3 - 0.6 * t;
  q[mbs_osim_find_coordinate(m, "ankle")] = 0.1 - 0.5 * t;
  q[mbs_osim_find_coordinate(m, "shoulder")] = (10 + 80 * t) * PI / 180;  // from the file
  q[mbs_osim_find_coordinate(m, "slide")] = 0.05;                          // locked
}

static int marker_index(const mbs_osim_model* m, const char* name) {
  for (int i = 0; i < mbs_osim_nmarker(m); i++)
    if (!strcmp(mbs_osim_marker_at(m, i)->name, name)) return i;
  return -1;
}

// F3 is missing in frames 4..6 (0-based); EXTRA (not in the model) is in the file;
// the file's markers are in reverse model order, EXTRA first
static void write_trial(trial* tr, int nan_time_frame, int empty_frame) {
  const mbs_system* sys = mbs_osim_system(tr->m);
  mbs_state* st = mbs_state_create(sys);
  mbs_osim_default_state(tr->m, st);
  const int nm = mbs_osim_nmarker(tr->m);
  for (int k = 0; k < NFRAME; k++) {
    double u[32] = {0};
    true_pose(tr->m, k, tr->q[k]);
    mbs_osim_set_coordinates(tr->m, st, tr->q[k], u);
    mbs_realize_position(sys, st);
    for (int i = 0; i < nm; i++) {
      const mbs_osim_marker* mk = mbs_osim_marker_at(tr->m, i);
      mbs_get_station_location(sys, st, mk->body, mk->location, tr->x[k] + 3 * i);
    }
  }
  mbs_state_destroy(st);
  const int f3 = marker_index(tr->m, "F3");
  size_t cap = 1 << 16, len = 0;
  char* s = malloc(cap);
#define PUT(...) len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__)
  PUT("PathFileType\t4\t(X/Y/Z)\ttrial.trc\n");
  PUT("DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\t"
      "OrigNumFrames\n");
  PUT("100.00\t100.00\t%d\t%d\tmm\t100.00\t1\t%d\n", NFRAME, nm + 1, NFRAME);
  PUT("Frame#\tTime\tEXTRA\t\t\t");
  for (int i = nm - 1; i >= 0; i--) PUT("%s\t\t\t", mbs_osim_marker_at(tr->m, i)->name);
  PUT("\n\t\t");
  for (int i = 0; i <= nm; i++) PUT("X%d\tY%d\tZ%d\t", i + 1, i + 1, i + 1);
  PUT("\n\n");
  for (int k = 0; k < NFRAME; k++) {
    if (k == nan_time_frame) PUT("%d\tnan\t", k + 1);
    else PUT("%d\t%.6f\t", k + 1, 0.01 * k);
    PUT("1.0\t2.0\t3.0\t");
    for (int i = nm - 1; i >= 0; i--) {
      if ((i == f3 && k >= 4 && k <= 6) || k == empty_frame) {
        PUT("\t\t\t");
        continue;
      }
      for (int d = 0; d < 3; d++) PUT("%.12f\t", 1000 * tr->x[k][3 * i + d]);
    }
    PUT("\n");
  }
#undef PUT
  write_file("trial.trc", s);
  free(s);
}

static void write_coordinate_file(void) {
  char s[4096];
  size_t len = (size_t)snprintf(s, sizeof(s), "Coordinates\nversion=1\nnRows=%d\nnColumns=2\n"
                                              "inDegrees=yes\nendheader\ntime\tshoulder\n",
                                NFRAME);
  for (int k = 0; k < NFRAME; k++)
    len += (size_t)snprintf(s + len, sizeof(s) - len, "%.6f\t%.12f\n", 0.01 * k,
                            10 + 80 * 0.01 * k);
  write_file("coords.mot", s);
}

static const char* setup_text =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <InverseKinematicsTool name=\"trial\">\n"
    "    <results_directory>res</results_directory>\n"
    "    <model_file>leg.osim</model_file>\n"
    "    <constraint_weight>Inf</constraint_weight>\n"
    "    <accuracy>1e-8</accuracy>\n"
    "    <IKTaskSet><objects>\n"
    "      <IKMarkerTask name=\"PA\"><apply>true</apply><weight>2</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"PB\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"PC\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"PD\"><weight>3</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"T1\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"T2\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"S1\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"S2\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"F1\"><weight>2</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"F2\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"F3\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"BK\"><apply>false</apply><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"EXTRA\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKMarkerTask name=\"GONE\"><weight>1</weight></IKMarkerTask>\n"
    "      <IKCoordinateTask name=\"shoulder\"><weight>1</weight>"
    "<value_type>from_file</value_type></IKCoordinateTask>\n"
    "      <IKCoordinateTask name=\"slide\"><weight>5</weight>"
    "<value_type>manual_value</value_type><value>0.3</value></IKCoordinateTask>\n"
    "    </objects><groups/></IKTaskSet>\n"
    "    <marker_file>trial.trc</marker_file>\n"
    "    <coordinate_file>coords.mot</coordinate_file>\n"
    "    <time_range> 0.02 0.15</time_range>\n"
    "    <report_errors>true</report_errors>\n"
    "    <output_motion_file>out/trial_ik.mot</output_motion_file>\n"
    "    <report_marker_locations>true</report_marker_locations>\n"
    "    <bogus_property>1</bogus_property>\n"
    "  </InverseKinematicsTool>\n"
    "</OpenSimDocument>\n";

// the setup with one piece of text replaced, as setup.xml
static void write_setup(const char* from, const char* to) {
  const char* p = from ? strstr(setup_text, from) : NULL;
  if (from && !p) {
    fprintf(stderr, "test setup: '%s' not in the template\n", from);
    exit(1);
  }
  char* s = p ? mbs_format_string("%.*s%s%s", (int)(p - setup_text), setup_text, to,
                                  p + strlen(from))
              : mbs_format_string("%s", setup_text);
  write_file("setup.xml", s);
  free(s);
}

static mbs_table* read_table(const char* name) {
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
  mbs_table* t = NULL;
  mbs_error err;
  if (mbs_table_read_sto(p, &t, &err)) {
    fprintf(stderr, "%s\n", err.message);
    return NULL;
  }
  return t;
}

static void test_trial(void) {
  trial* tr = calloc(1, sizeof(trial));
  mbs_error err;
  tr->m = mbs_osim_parse(leg_text, strlen(leg_text), "leg.osim", NULL, &err);
  EXPECT_TRUE(tr->m != NULL);
  if (!tr->m) {
    free(tr);
    return;
  }
  write_file("leg.osim", leg_text);
  write_trial(tr, -1, -1);
  write_coordinate_file();
  write_setup(NULL, NULL);
  char setup[512];
  snprintf(setup, sizeof(setup), "%s/setup.xml", tmpdir);
  char* log = NULL;
  const int rc = run_setup(setup, NULL, &log);
  EXPECT_EQ_INT(rc, 0);
  // OpenSim's warnings
  EXPECT_LOG(log, "'EXTRA'", "no such marker");
  EXPECT_LOG(log, "'GONE'", "has no such marker");
  EXPECT_LOG(log, "<bogus_property>", "not used");
  EXPECT_LOG(log, "'slide'", "locked");
  EXPECT_LOG(log, "3 frames miss some markers", NULL);
  // the motion: OpenSim's header and columns, every coordinate of the truth
  mbs_table* mot = read_table("out/trial_ik.mot");
  EXPECT_TRUE(mot != NULL);
  const int n = mbs_osim_ncoordinate(tr->m);
  if (mot) {
    EXPECT_TRUE(!strcmp(mot->name, "Coordinates"));
    EXPECT_TRUE(mot->in_degrees);
    EXPECT_EQ_INT(mot->nrow, 14);  // the rows nearest 0.02 and 0.15 s, and those between
    EXPECT_EQ_INT(mot->ncol, 1 + n);
    EXPECT_TRUE(!strcmp(mot->labels[0], "time"));
    for (int j = 0; j < n && j + 1 < mot->ncol; j++)
      EXPECT_TRUE(!strcmp(mot->labels[1 + j], mbs_osim_coordinate_info(tr->m, j)->name));
    double worst_deg = 0, worst_m = 0;
    for (int r = 0; r < mot->nrow; r++) {
      const int k = r + 2;
      EXPECT_ABS(mbs_table_get(mot, r, 0), 0.01 * k, 1e-12);
      for (int j = 0; j < n; j++) {
        const char* cn = mbs_osim_coordinate_info(tr->m, j)->name;
        const int trans = !strcmp(cn, "pelvis_tx") || !strcmp(cn, "pelvis_ty") ||
                          !strcmp(cn, "pelvis_tz") || !strcmp(cn, "slide");
        const double v = mbs_table_get(mot, r, 1 + j), qt = tr->q[k][j];
        if (trans) worst_m = fmax(worst_m, fabs(v - qt));
        else worst_deg = fmax(worst_deg, fabs(v - qt * 180 / PI));
      }
      EXPECT_TRUE(mbs_table_get(mot, r, 1 + mbs_osim_find_coordinate(tr->m, "slide")) == 0.05);
    }
    printf("synthetic trial: largest error %.2e deg (rotations, the knee CustomJoint in "
           "degrees), %.2e m (translations)\n", worst_deg, worst_m);
    EXPECT_TRUE(worst_deg < 1e-5);
    EXPECT_TRUE(worst_m < 1e-7);
    // the shoulder has no marker: it follows the coordinate file exactly
    const int js = mbs_osim_find_coordinate(tr->m, "shoulder");
    for (int r = 0; r < mot->nrow; r++)
      EXPECT_ABS(mbs_table_get(mot, r, 1 + js), 10 + 80 * 0.01 * (r + 2), 1e-9);
  }
  // marker errors: OpenSim's file name and columns; the data fit exactly
  mbs_table* er = read_table("res/trial_ik_marker_errors.sto");
  EXPECT_TRUE(er != NULL);
  if (er) {
    EXPECT_TRUE(!strcmp(er->name, "Model Marker Errors from IK"));
    EXPECT_EQ_INT(er->ncol, 4);
    EXPECT_EQ_INT(er->nrow, 14);
    EXPECT_TRUE(!strcmp(er->labels[1], "total_squared_error") &&
                !strcmp(er->labels[2], "marker_error_RMS") &&
                !strcmp(er->labels[3], "marker_error_max"));
    for (int r = 0; r < er->nrow; r++)
      for (int c = 1; c < 4; c++) EXPECT_TRUE(mbs_table_get(er, r, c) < 1e-6);
  }
  // model marker locations: the markers in use in the file's order (reverse model order, BK
  // not applied, EXTRA not in the model), at the generated positions
  mbs_table* lo = read_table("res/trial_ik_model_marker_locations.sto");
  EXPECT_TRUE(lo != NULL);
  if (lo) {
    EXPECT_TRUE(!strcmp(lo->name, "Model Marker Locations from IK"));
    EXPECT_EQ_INT(lo->ncol, 1 + 3 * 11);
    EXPECT_TRUE(!strcmp(lo->labels[1], "F3_tx") && !strcmp(lo->labels[3], "F3_tz") &&
                !strcmp(lo->labels[31], "PA_tx"));
    const int pa = marker_index(tr->m, "PA"), f3 = marker_index(tr->m, "F3");
    for (int r = 0; r < lo->nrow && lo->ncol == 34; r++)
      for (int d = 0; d < 3; d++) {
        EXPECT_ABS(mbs_table_get(lo, r, 31 + d), tr->x[r + 2][3 * pa + d], 1e-8);
        EXPECT_ABS(mbs_table_get(lo, r, 1 + d), tr->x[r + 2][3 * f3 + d], 1e-8);
      }
  }
  mbs_table_free(mot);
  mbs_table_free(er);
  mbs_table_free(lo);
  free(log);
  // --results DIR: the files go there, output_motion_file too
  char res2[512];
  snprintf(res2, sizeof(res2), "%s/elsewhere", tmpdir);
  EXPECT_EQ_INT(run_setup(setup, res2, &log), 0);
  free(log);
  mbs_table* m2 = read_table("elsewhere/out/trial_ik.mot");
  mbs_table* e2 = read_table("elsewhere/trial_ik_marker_errors.sto");
  EXPECT_TRUE(m2 && e2);
  mbs_table_free(m2);
  mbs_table_free(e2);
  mbs_osim_free(tr->m);
  free(tr);
}

// one bad input: the setup with `from` replaced by `to`; expect failure (or success with
// want_ok) and a log line with a and b
static void bad_case(const char* from, const char* to, int want_ok, const char* a,
                     const char* b) {
  write_setup(from, to);
  char setup[512], *log = NULL;
  snprintf(setup, sizeof(setup), "%s/setup.xml", tmpdir);
  const int rc = run_setup(setup, NULL, &log);
  mbs_test_checks++;
  if ((rc == 0) != want_ok) {
    mbs_test_failures++;
    fprintf(stderr, "%s:%d: FAIL: '%s' -> '%s': rc %d; log:\n%s\n", __FILE__, __LINE__,
            from ? from : "", to ? to : "", rc, log);
  }
  EXPECT_LOG(log, a, b);
  if (!want_ok) {
    // the message is the last line: show it once so that the test log documents it
    const char* last = log;
    for (const char* p = log; *p; p++)
      if (*p == '\n' && p[1]) last = p + 1;
    printf("  bad input -> %s", last);
  }
  free(log);
}

static void test_bad_input(void) {
  trial* tr = calloc(1, sizeof(trial));
  mbs_error err;
  tr->m = mbs_osim_parse(leg_text, strlen(leg_text), "leg.osim", NULL, &err);
  if (!tr->m) {
    free(tr);
    return;
  }
  write_file("leg.osim", leg_text);
  write_coordinate_file();
  write_trial(tr, -1, -1);
  char setup_path[512];
  snprintf(setup_path, sizeof(setup_path), "%s/setup.xml", tmpdir);
  bad_case("<marker_file>trial.trc", "<marker_file>nothere.trc", 0, "nothere.trc", NULL);
  bad_case("<model_file>leg.osim", "<model_file>noleg.osim", 0, "noleg.osim", NULL);
  bad_case("<marker_file>trial.trc</marker_file>", "", 0, "setup.xml", "no <marker_file>");
  bad_case("<marker_file>trial.trc", "<marker_file>coords.mot", 0, "coords.mot", ".trc");
  bad_case("<time_range> 0.02 0.15", "<time_range>5 6", 0, "setup.xml:", "outside the marker");
  bad_case("<time_range> 0.02 0.15", "<time_range>0.1 x", 0, "setup.xml:", "time_range");
  bad_case("<time_range> 0.02 0.15", "<time_range>-1 0.05", 1, "beyond the marker data", NULL);
  bad_case("<constraint_weight>Inf", "<constraint_weight>-3", 0, "setup.xml:",
           "constraint_weight");
  bad_case("<coordinate_file>coords.mot</coordinate_file>", "", 0, "setup.xml:",
           "no <coordinate_file>");
  bad_case("<IKCoordinateTask name=\"shoulder\">", "<IKCoordinateTask name=\"elbow\">", 0,
           "IKCoordinateTask 'elbow'", "no such coordinate");
  bad_case("<value_type>manual_value", "<value_type>guess", 0, "setup.xml:", "'guess'");
  bad_case("<IKMarkerTask name=\"PA\"><apply>true</apply><weight>2</weight>",
           "<IKMarkerTask name=\"PA\"><apply>true</apply><weight>x</weight>", 0, "setup.xml:",
           "weight");
  // no marker task at all: OpenSim tracks every marker of the file (in the model) at weight 1
  {
    char* s = strdup(setup_text);
    char* w = s;
    for (const char* line = setup_text; *line;) {
      const char* end = strchr(line, '\n');
      const size_t len = end ? (size_t)(end - line + 1) : strlen(line);
      if (!memmem(line, len, "IKMarkerTask", 12)) {
        memcpy(w, line, len);
        w += len;
      }
      line += len;
    }
    *w = 0;
    write_file("setup.xml", s);
    free(s);
    char* log = NULL;
    EXPECT_EQ_INT(run_setup(setup_path, NULL, &log), 0);
    EXPECT_LOG(log, "no IKMarkerTask is applied", "weight 1");
    EXPECT_LOG(log, "12 markers of", NULL);  // EXTRA is not in the model
    free(log);
  }
  // a NaN time, a frame without any marker
  write_trial(tr, 7, -1);
  bad_case(NULL, NULL, 0, "trial.trc: frame 8", "not a number");
  write_trial(tr, -1, 9);
  bad_case(NULL, NULL, 1, "frame 10", "no tracked marker is observed");
  mbs_osim_free(tr->m);
  free(tr);
}

//---------------------------------- OpenSim's walking trial ------------------------------------

static int test_gait(const char* data, const char* mbstudy) {
  char setup[1024], ref_path[1024], out[512];
  snprintf(setup, sizeof(setup), "%s/data/gait10dof18musc/IK/walk_Setup_IK.xml", data);
  snprintf(ref_path, sizeof(ref_path), "%s/data/gait10dof18musc/IK/subject01_walk_IK.mot", data);
  if (access(setup, R_OK) || access(ref_path, R_OK)) {
    printf("SKIPPED: %s or %s not found (the shared data folder, MBS_SHARED_DIR)\n", setup,
           ref_path);
    return 77;
  }
  snprintf(out, sizeof(out), "%s/gait", tmpdir);
  int rc;
  if (mbstudy) {
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "'%s' run-tool '%s' --results '%s' --quiet", mbstudy, setup, out);
    rc = system(cmd);
  } else {
    char* argv[] = {setup, "--results", out, "--quiet"};
    rc = mbs_cmd_run_tool(4, argv);
  }
  EXPECT_EQ_INT(rc, 0);
  char mine_path[1024];
  snprintf(mine_path, sizeof(mine_path), "%s/subject01_walk_IK.mot", out);
  mbs_table *mine = NULL, *ref = NULL, *er = NULL;
  mbs_error err;
  if (mbs_table_read_sto(mine_path, &mine, &err) || mbs_table_read_sto(ref_path, &ref, &err)) {
    fprintf(stderr, "%s\n", err.message);
    EXPECT_TRUE(0);
    mbs_table_free(mine);
    mbs_table_free(ref);
    return 1;
  }
  snprintf(mine_path, sizeof(mine_path), "%s/_ik_marker_errors.sto", out);
  EXPECT_OK(mbs_table_read_sto(mine_path, &er, &err));
  EXPECT_TRUE(er && er->nrow == 151);
  EXPECT_TRUE(mine->in_degrees && ref->in_degrees);
  EXPECT_EQ_INT(mine->nrow, ref->nrow);
  EXPECT_EQ_INT(mine->ncol, ref->ncol);
  // OpenSim (the version that made the result) wrote times as start + i / DataRate; mbstudy
  // writes the marker file's times (0.017 for 1/60 s), as OpenSim 4.1 and later do
  for (int r = 0; r < mine->nrow && r < ref->nrow; r++)
    EXPECT_ABS(mbs_table_get(mine, r, 0), mbs_table_get(ref, r, 0), 0.5e-3);
  printf("gait10dof18musc walking trial, 151 frames: mbstudy against OpenSim's "
         "subject01_walk_IK.mot\n");
  printf("  %-18s %12s %12s\n", "coordinate", "RMS", "max |diff|");
  for (int c = 1; c < ref->ncol; c++) {
    const int k = mbs_table_column(mine, ref->labels[c]);
    EXPECT_TRUE(k > 0);
    if (k <= 0) continue;
    const int trans = !strcmp(ref->labels[c], "pelvis_tx") || !strcmp(ref->labels[c], "pelvis_ty");
    double s = 0, mx = 0;
    const int nr = mine->nrow < ref->nrow ? mine->nrow : ref->nrow;
    for (int r = 0; r < nr; r++) {
      const double d = mbs_table_get(mine, r, k) - mbs_table_get(ref, r, c);
      s += d * d;
      mx = fmax(mx, fabs(d));
    }
    const double rms = sqrt(s / nr);
    if (trans) printf("  %-18s %9.4f mm %9.4f mm\n", ref->labels[c], 1000 * rms, 1000 * mx);
    else printf("  %-18s %8.4f deg %8.4f deg\n", ref->labels[c], rms, mx);
    EXPECT_TRUE(trans ? rms <= 1e-3 : rms <= 0.2);
  }
  mbs_table_free(mine);
  mbs_table_free(ref);
  mbs_table_free(er);
  return 0;
}

int main(int argc, char** argv) {
  const char* data = NULL;
  const char* mbstudy = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else if (!strcmp(argv[i], "--mbstudy") && i + 1 < argc) mbstudy = argv[++i];
  }
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mbs_test_tool_ik_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
    return 1;
  }
  int rc = 0;
  if (data) {
    rc = test_gait(data, mbstudy);
  } else {
    test_trial();
    test_bad_input();
  }
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
  if (rc == 77) return 77;
  return mbs_test_finish("test_tool_ik");
}
