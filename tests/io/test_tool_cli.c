// `mbstudy inverse-kinematics`, `mbstudy scale` and `mbstudy analyze` (jobs/tool_cli.c) against
// `mbstudy run-tool` on the equivalent setup files, run by the mbstudy program:
//  - a planar double pendulum written here (two pins, markers on both rods and on Ground, two
//    coordinate actuators and a Thelen muscle), a trial generated from a known motion (a marker
//    missing in some frames, one the model lacks), its coordinates, states, controls, an
//    external force; each command (run in that folder, with relative file names) against
//    run-tool on a setup file written by hand: the same tables, row by row, to 1e-12 (the same
//    computation: they should be equal), and for scale the same model and scale set text, number
//    by number; the flags' defaults (every marker at weight 1, OpenSim's analysis defaults, the
//    file's time range), --weight, --weights (an IKTaskSet file, and a setup file's), coordinate
//    tasks, --marker-errors under any name, measurements, manual scales, marker placement,
//    every analysis with filtering, controls, loads and a step interval, and a states file;
//  - bad flags: --help, unknown options, missing values, missing required flags, missing files,
//    markers, bodies or analyses that do not exist, flags that do not go together: the exit
//    status (0, 2 for bad arguments, 1 for a failed run) and the message;
//  - with --data DIR (the shared folder): gait10dof18musc's walking trial through
//    `mbstudy inverse-kinematics --weights walk_Setup_IK.xml` against run-tool on that setup
//    (skipped, exit 77, when the trial is absent and nothing else is asked).
//   test_tool_cli --mbstudy EXE [--data DIR] [--valgrind VALGRIND]
// With --valgrind every mbstudy command runs under it (leaks and errors fail the command); with
// MBS_TEST_KEEP=1 in the environment the test's folder is kept.
#define _GNU_SOURCE  // mkdtemp
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mbs/files.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/table.h"
#include "mbs_test.h"

#define PI 3.14159265358979323846
#define NFRAME 101  // the trial: 0 .. 1 s every 10 ms

static char tmpdir[256];
static const char* mbstudy = NULL;
static const char* valgrind = NULL;
static char cmd_log[1 << 16];  // the last command's output (stdout and stderr)

//---------------------------------- files and commands -------------------------------------------

static char* path_of(const char* name) { return mbs_format_string("%s/%s", tmpdir, name); }

static void write_file(const char* name, const char* text) {
  char* p = path_of(name);
  FILE* f = fopen(p, "w");
  if (!f || fputs(text, f) < 0) {
    fprintf(stderr, "cannot write %s: %s\n", p, strerror(errno));
    exit(1);
  }
  fclose(f);
  free(p);
}

static char* read_text(const char* name) {
  char* p = path_of(name);
  FILE* f = fopen(p, "r");
  free(p);
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  rewind(f);
  char* s = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
  if (s && n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
  fclose(f);
  return s;
}

// `mbstudy ARGS` run in tmpdir; its exit status, its output in cmd_log
static int run(const char* args) {
  char* cmd = mbs_format_string(
      "cd '%s' && %s%s '%s' %s > cmd.log 2>&1", tmpdir, valgrind ? valgrind : "",
      valgrind ? " --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect"
                 " --quiet"
               : "",
      mbstudy, args);
  const int rc = system(cmd);
  free(cmd);
  char* log = read_text("cmd.log");
  snprintf(cmd_log, sizeof(cmd_log), "%s", log ? log : "");
  free(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// run and expect exit status `status` and, when given, a line of the output holding `a` (and b)
static void expect_run(const char* args, int status, const char* a, const char* b) {
  const int rc = run(args);
  mbs_test_checks++;
  int ok = rc == status;
  if (ok && a) {
    ok = 0;
    for (const char* line = cmd_log; *line && !ok;) {
      const char* end = strchr(line, '\n');
      char buf[4096];
      const size_t n = end ? (size_t)(end - line) : strlen(line);
      snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) - 1 ? n : sizeof(buf) - 1), line);
      ok = strstr(buf, a) && (!b || strstr(buf, b));
      line = end ? end + 1 : line + n;
    }
  }
  if (!ok) {
    mbs_test_failures++;
    fprintf(stderr, "FAIL: mbstudy %s: exit %d (expected %d)%s%s%s%s%s; its output:\n%s\n", args,
            rc, status, a ? ", a line with '" : "", a ? a : "", b ? "' and '" : "", b ? b : "",
            a ? "'" : "", cmd_log);
  }
}

static mbs_table* read_table(const char* name) {
  char* p = path_of(name);
  mbs_table* t = NULL;
  mbs_error err;
  const int rc = mbs_table_read_sto(p, &t, &err);
  free(p);
  if (rc) {
    fprintf(stderr, "FAIL: %s\n", err.message);
    return NULL;
  }
  return t;
}

// two result tables: the same name, columns, rows and values (to tol, relative to the largest
// magnitude of the column); the rows compared, or -1
static int same_table(const char* a, const char* b, double tol) {
  mbs_table* ta = read_table(a);
  mbs_table* tb = read_table(b);
  mbs_test_checks++;
  int ok = ta && tb && ta->nrow == tb->nrow && ta->ncol == tb->ncol && ta->nrow > 0 &&
           !strcmp(ta->name, tb->name) && ta->in_degrees == tb->in_degrees;
  for (int c = 0; ok && c < ta->ncol; c++) ok = !strcmp(ta->labels[c], tb->labels[c]);
  double worst = 0;
  int wr = 0, wc = 0;
  for (int c = 0; ok && c < ta->ncol; c++) {
    double scale = 1;
    for (int r = 0; r < ta->nrow; r++)
      if (fabs(mbs_table_get(ta, r, c)) > scale) scale = fabs(mbs_table_get(ta, r, c));
    for (int r = 0; r < ta->nrow; r++) {
      const double x = mbs_table_get(ta, r, c), y = mbs_table_get(tb, r, c);
      const double d = isnan(x) && isnan(y) ? 0 : isnan(x) || isnan(y) ? INFINITY
                                                                        : fabs(x - y) / scale;
      if (!(d <= worst)) {
        worst = d;
        wr = r;
        wc = c;
      }
    }
  }
  if (ok && !(worst <= tol)) {
    ok = 0;
    fprintf(stderr, "FAIL: %s and %s: row %d, %s: %.17g and %.17g\n", a, b, wr + 1,
            ta->labels[wc], mbs_table_get(ta, wr, wc), mbs_table_get(tb, wr, wc));
  } else if (!ok) {
    fprintf(stderr, "FAIL: %s and %s: not the same table (%s)\n", a, b,
            !ta || !tb ? "unread" : "name, columns or rows differ");
  }
  const int n = ok ? ta->nrow : -1;
  if (!ok) mbs_test_failures++;
  mbs_table_free(ta);
  mbs_table_free(tb);
  return n;
}

// two text files equal but for numbers within tol (relative): 1 if so
static int same_text(const char* a, const char* b, double tol) {
  char* sa = read_text(a);
  char* sb = read_text(b);
  const char *p = sa, *q = sb;
  int ok = sa && sb && *sa;
  while (ok && *p && *q) {
    char *ep, *eq;
    const int num = (*p == '-' || (*p >= '0' && *p <= '9')) &&
                    (*q == '-' || (*q >= '0' && *q <= '9'));
    const double x = num ? strtod(p, &ep) : 0, y = num ? strtod(q, &eq) : 0;
    if (num && ep > p && eq > q) {
      const double s = fabs(x) > 1 ? fabs(x) : 1;
      ok = fabs(x - y) <= tol * s;
      p = ep;
      q = eq;
    } else {
      ok = *p++ == *q++;
    }
  }
  ok = ok && !*p && !*q;
  mbs_test_checks++;
  if (!ok) {
    mbs_test_failures++;
    fprintf(stderr, "FAIL: %s and %s differ%s%.60s\n", a, b, sa && sb ? " at: " : " (unread)",
            sa && sb ? p : "");
  }
  free(sa);
  free(sb);
  return ok;
}

static int file_exists(const char* name) {
  char* p = path_of(name);
  struct stat sb;
  const int e = !stat(p, &sb);
  free(p);
  return e;
}

//---------------------------------- the model and its trial --------------------------------------

static const char* model_text =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <Model name=\"pend\">\n"
    "    <Ground name=\"ground\"/>\n"
    "    <gravity>0 -9.80665 0</gravity>\n"
    "    <BodySet name=\"bodyset\"><objects>\n"
    "      <Body name=\"rod1\"><mass>2</mass><mass_center>0 0 0</mass_center>\n"
    "        <inertia>0.1 0.1 0.05 0 0 0</inertia></Body>\n"
    "      <Body name=\"rod2\"><mass>1</mass><mass_center>0 0 0</mass_center>\n"
    "        <inertia>0.1 0.1 0.03 0 0 0</inertia></Body>\n"
    "    </objects></BodySet>\n"
    "    <JointSet name=\"jointset\"><objects>\n"
    "      <PinJoint name=\"pin1\">\n"
    "        <socket_parent_frame>ground_offset</socket_parent_frame>\n"
    "        <socket_child_frame>rod1_offset</socket_child_frame>\n"
    "        <coordinates><Coordinate name=\"q1\"><default_value>0</default_value>"
    "<range>-3 3</range></Coordinate></coordinates>\n"
    "        <frames>\n"
    "          <PhysicalOffsetFrame name=\"ground_offset\"><socket_parent>/ground</socket_parent>"
    "<translation>0.1 0.2 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "          <PhysicalOffsetFrame name=\"rod1_offset\"><socket_parent>/bodyset/rod1"
    "</socket_parent><translation>0 0.4 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "        </frames>\n"
    "      </PinJoint>\n"
    "      <PinJoint name=\"pin2\">\n"
    "        <socket_parent_frame>rod1_below</socket_parent_frame>\n"
    "        <socket_child_frame>rod2_offset</socket_child_frame>\n"
    "        <coordinates><Coordinate name=\"q2\"><default_value>0</default_value>"
    "<range>-3 3</range></Coordinate></coordinates>\n"
    "        <frames>\n"
    "          <PhysicalOffsetFrame name=\"rod1_below\"><socket_parent>/bodyset/rod1"
    "</socket_parent><translation>0 -0.4 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "          <PhysicalOffsetFrame name=\"rod2_offset\"><socket_parent>/bodyset/rod2"
    "</socket_parent><translation>0 0.3 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "        </frames>\n"
    "      </PinJoint>\n"
    "    </objects></JointSet>\n"
    "    <ForceSet name=\"forceset\"><objects>\n"
    "      <CoordinateActuator name=\"m1\"><coordinate>q1</coordinate>"
    "<optimal_force>100</optimal_force></CoordinateActuator>\n"
    "      <CoordinateActuator name=\"m2\"><coordinate>q2</coordinate>"
    "<optimal_force>50</optimal_force></CoordinateActuator>\n"
    "      <Thelen2003Muscle name=\"mus\">\n"
    "        <GeometryPath name=\"geometrypath\"><PathPointSet><objects>\n"
    "          <PathPoint name=\"o\"><socket_parent_frame>/ground</socket_parent_frame>"
    "<location>0.15 0.5 0</location></PathPoint>\n"
    "          <PathPoint name=\"i\"><socket_parent_frame>/bodyset/rod1</socket_parent_frame>"
    "<location>0.05 0.1 0</location></PathPoint>\n"
    "        </objects></PathPointSet></GeometryPath>\n"
    "        <max_isometric_force>500</max_isometric_force>\n"
    "        <optimal_fiber_length>0.2</optimal_fiber_length>\n"
    "        <tendon_slack_length>0.38</tendon_slack_length>\n"
    "        <pennation_angle_at_optimal>0</pennation_angle_at_optimal>\n"
    "        <default_fiber_length>0.2</default_fiber_length>\n"
    "      </Thelen2003Muscle>\n"
    "    </objects></ForceSet>\n"
    "    <MarkerSet name=\"markerset\"><objects>\n"
    "      <Marker name=\"R1A\"><socket_parent_frame>/bodyset/rod1</socket_parent_frame>"
    "<location>0.05 0.2 0.03</location></Marker>\n"
    "      <Marker name=\"R1B\"><socket_parent_frame>/bodyset/rod1</socket_parent_frame>"
    "<location>-0.04 -0.25 -0.02</location></Marker>\n"
    "      <Marker name=\"R1C\"><socket_parent_frame>/bodyset/rod1</socket_parent_frame>"
    "<location>0.03 0 0.05</location></Marker>\n"
    "      <Marker name=\"R2A\"><socket_parent_frame>/bodyset/rod2</socket_parent_frame>"
    "<location>0.04 0.2 0.02</location></Marker>\n"
    "      <Marker name=\"R2B\"><socket_parent_frame>/bodyset/rod2</socket_parent_frame>"
    "<location>-0.03 -0.2 0.04</location></Marker>\n"
    "      <Marker name=\"R2C\"><socket_parent_frame>/bodyset/rod2</socket_parent_frame>"
    "<location>0.02 -0.05 -0.05</location></Marker>\n"
    "      <Marker name=\"GND\"><socket_parent_frame>/ground</socket_parent_frame>"
    "<location>0.3 0 0</location></Marker>\n"
    "    </objects></MarkerSet>\n"
    "  </Model>\n"
    "</OpenSimDocument>\n";

static void motion(double t, double q[2], double u[2]) {
  q[0] = 0.4 * sin(3 * t) + 0.1;
  q[1] = 0.6 * cos(2 * t) - 0.2;
  u[0] = 1.2 * cos(3 * t);
  u[1] = -1.2 * sin(2 * t);
}

// the model's markers at the motion's poses (m), model order; NULL after a failure
static double* marker_positions(int nframe, double dt, double grow) {
  mbs_error err;
  mbs_osim_model* m = mbs_osim_parse(model_text, strlen(model_text), "pend.osim", NULL, &err);
  if (!m) {
    fprintf(stderr, "FAIL: the test's model: %s\n", err.message);
    mbs_test_failures++;
    return NULL;
  }
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  mbs_osim_default_state(m, st);
  const int nm = mbs_osim_nmarker(m);
  double* x = calloc((size_t)nframe * 3 * nm, sizeof(double));
  for (int k = 0; x && k < nframe; k++) {
    double q[2], u[2];
    motion(dt * k, q, u);
    mbs_osim_set_coordinates(m, st, q, u);
    mbs_realize_position(sys, st);
    for (int i = 0; i < nm; i++) {
      const mbs_osim_marker* mk = mbs_osim_marker_at(m, i);
      double* p = x + ((size_t)k * nm + i) * 3;
      mbs_get_station_location(sys, st, mk->body, mk->location, p);
      for (int d = 0; d < 3; d++) p[d] *= grow;
    }
  }
  mbs_state_destroy(st);
  mbs_osim_free(m);
  return x;
}

static const char* marker_names[7] = {"R1A", "R1B", "R1C", "R2A", "R2B", "R2C", "GND"};

// a .trc in mm: EXTRA (not in the model) first, the model's markers in reverse order; R2C
// missing in frames 10..12 (0-based) when `gap`
static void write_trc(const char* name, int nframe, double dt, double grow, int gap) {
  double* x = marker_positions(nframe, dt, grow);
  if (!x) return;
  size_t cap = 1 << 20, len = 0;
  char* s = malloc(cap);
#define PUT(...) len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__)
  PUT("PathFileType\t4\t(X/Y/Z)\t%s\n", name);
  PUT("DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\t"
      "OrigNumFrames\n");
  PUT("%g\t%g\t%d\t8\tmm\t%g\t1\t%d\n", 1 / dt, 1 / dt, nframe, 1 / dt, nframe);
  PUT("Frame#\tTime\tEXTRA\t\t\t");
  for (int i = 6; i >= 0; i--) PUT("%s\t\t\t", marker_names[i]);
  PUT("\n\t\t");
  for (int i = 0; i < 8; i++) PUT("X%d\tY%d\tZ%d\t", i + 1, i + 1, i + 1);
  PUT("\n\n");
  for (int k = 0; k < nframe; k++) {
    PUT("%d\t%.6f\t10.0\t20.0\t30.0\t", k + 1, dt * k);
    for (int i = 6; i >= 0; i--) {
      if (gap && i == 5 && k >= 10 && k <= 12) {
        PUT("\t\t\t");
        continue;
      }
      // a little deterministic noise, so that the fit is not exact
      for (int d = 0; d < 3; d++)
        PUT("%.9f\t", 1000 * x[((size_t)k * 7 + i) * 3 + d] + 0.8 * sin(7.0 * k + 3 * i + d));
    }
    PUT("\n");
  }
#undef PUT
  write_file(name, s);
  free(s);
  free(x);
}

static void write_inputs(void) {
  write_file("pend.osim", model_text);
  write_trc("trial.trc", NFRAME, 0.01, 1, 1);
  write_trc("static.trc", 5, 0.01, 1.1, 0);
  // the coordinates in degrees, the states in radians
  size_t cap = 1 << 16, len = 0, slen = 0;
  char* s = malloc(cap);
  char* st = malloc(cap);
  len += (size_t)snprintf(s, cap, "Coordinates\nversion=1\nnRows=%d\nnColumns=3\ninDegrees=yes\n"
                                  "endheader\ntime\tq1\tq2\n", NFRAME);
  slen += (size_t)snprintf(st, cap, "states\nversion=1\nnRows=%d\nnColumns=5\ninDegrees=no\n"
                                    "endheader\ntime\t/jointset/pin1/q1/value\t"
                                    "/jointset/pin1/q1/speed\t/jointset/pin2/q2/value\t"
                                    "/jointset/pin2/q2/speed\n", NFRAME);
  for (int k = 0; k < NFRAME; k++) {
    double q[2], u[2];
    const double t = 0.01 * k;
    motion(t, q, u);
    len += (size_t)snprintf(s + len, cap - len, "%.6f\t%.12f\t%.12f\n", t, q[0] * 180 / PI,
                            q[1] * 180 / PI);
    slen += (size_t)snprintf(st + slen, cap - slen, "%.6f\t%.15g\t%.15g\t%.15g\t%.15g\n", t, q[0],
                             u[0], q[1], u[1]);
  }
  write_file("coords.mot", s);
  write_file("states.sto", st);
  free(s);
  free(st);
  write_file("controls.sto", "Controls\nversion=1\nnRows=2\nnColumns=3\ninDegrees=no\n"
                             "endheader\ntime\tm1\tm2\n0\t0.3\t-0.2\n1\t-0.1\t0.4\n");
  write_file("loads.xml",
             "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
             "<OpenSimDocument Version=\"40000\"><ExternalLoads name=\"loads\"><objects>\n"
             "  <ExternalForce name=\"push\"><applied_to_body>rod2</applied_to_body>\n"
             "    <force_expressed_in_body>ground</force_expressed_in_body>\n"
             "    <point_expressed_in_body>rod2</point_expressed_in_body>\n"
             "    <force_identifier>push_v</force_identifier><point_identifier>push_p"
             "</point_identifier></ExternalForce>\n"
             "</objects><datafile>loads.mot</datafile></ExternalLoads></OpenSimDocument>\n");
  write_file("loads.mot", "loads\nversion=1\nnRows=3\nnColumns=7\ninDegrees=no\nendheader\n"
                          "time\tpush_vx\tpush_vy\tpush_vz\tpush_px\tpush_py\tpush_pz\n"
                          "0\t3\t-1\t0\t0\t-0.2\t0\n0.5\t4\t-2\t0\t0\t-0.2\t0\n"
                          "1\t2\t-1\t0\t0\t-0.2\t0\n");
}

//---------------------------------- inverse-kinematics ------------------------------------------

static const char* ik_setup =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <InverseKinematicsTool name=\"ref\">\n"
    "    <results_directory>ref_ik</results_directory>\n"
    "    <model_file>pend.osim</model_file>\n"
    "%s"
    "    <marker_file>trial.trc</marker_file>\n"
    "    <time_range>%s</time_range>\n"
    "    <report_errors>true</report_errors>\n"
    "    <output_motion_file>ref_ik/%s.mot</output_motion_file>\n"
    "  </InverseKinematicsTool>\n"
    "</OpenSimDocument>\n";

static void write_ik_setup(const char* name, const char* extra, const char* range,
                           const char* motion_name) {
  char* s = mbs_format_string(ik_setup, extra, range, motion_name);
  write_file(name, s);
  free(s);
}

static const char* task_set =
    "<IKTaskSet name=\"tasks\">\n"
    "  <objects>\n"
    "    <IKMarkerTask name=\"R1A\"><apply>true</apply><weight>4</weight></IKMarkerTask>\n"
    "    <IKMarkerTask name=\"R1B\"><apply>true</apply><weight>1</weight></IKMarkerTask>\n"
    "    <IKMarkerTask name=\"R1C\"><apply>false</apply><weight>1</weight></IKMarkerTask>\n"
    "    <IKMarkerTask name=\"R2A\"><apply>true</apply><weight>2</weight></IKMarkerTask>\n"
    "    <IKMarkerTask name=\"R2C\"><apply>true</apply><weight>0.5</weight></IKMarkerTask>\n"
    "    <IKCoordinateTask name=\"q2\"><apply>true</apply><weight>3</weight>"
    "<value_type>manual_value</value_type><value>0.7</value></IKCoordinateTask>\n"
    "  </objects>\n"
    "  <groups/>\n"
    "</IKTaskSet>\n";

static void test_inverse_kinematics(void) {
  // the defaults: every marker of the trial that the model has, weight 1; the errors file
  // under a name of its own
  write_ik_setup("ik_default.xml", "", "0.1 0.5", "default");
  expect_run("run-tool ik_default.xml --quiet", 0, "wrote", "ref_ik/default.mot");
  expect_run("inverse-kinematics --model pend.osim --markers ./trial.trc --time-range 0.1 0.5 "
             "--out cli_ik/default.mot --marker-errors cli_ik/errors.sto --quiet",
             0, "the marker errors are in", "cli_ik/errors.sto");
  const int n = same_table("ref_ik/default.mot", "cli_ik/default.mot", 1e-12);
  EXPECT_EQ_INT(n, 41);
  same_table("ref_ik/ref_ik_marker_errors.sto", "cli_ik/errors.sto", 1e-12);
  {  // no folder of the errors' left behind
    char* p = path_of("cli_ik");
    DIR* d = opendir(p);
    int other = 0;
    for (struct dirent* e; d && (e = readdir(d));)
      if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) other++;
    if (d) closedir(d);
    free(p);
    EXPECT_TRUE(d && other == 0);
  }
  // the tool's warning about the ground marker, as with the setup
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --out cli_ik/d2.mot", 0,
             "'GND'", "fixed to Ground");
  // weights by flags (R2B's 0 leaves it out), coordinate tasks, accuracy, constraint weight,
  // every frame
  char* markers = mbs_format_string(
      "    <accuracy>1e-8</accuracy>\n"
      "    <constraint_weight>Inf</constraint_weight>\n"
      "    <IKTaskSet><objects>\n"
      "      <IKMarkerTask name=\"GND\"><weight>1</weight></IKMarkerTask>\n"
      "      <IKMarkerTask name=\"R2C\"><weight>1</weight></IKMarkerTask>\n"
      "      <IKMarkerTask name=\"R2A\"><weight>1</weight></IKMarkerTask>\n"
      "      <IKMarkerTask name=\"R1C\"><weight>1</weight></IKMarkerTask>\n"
      "      <IKMarkerTask name=\"R1B\"><weight>2.5</weight></IKMarkerTask>\n"
      "      <IKMarkerTask name=\"R1A\"><weight>7</weight></IKMarkerTask>\n"
      "      <IKCoordinateTask name=\"q1\"><weight>0.01</weight>"
      "<value_type>manual_value</value_type><value>%.17g</value></IKCoordinateTask>\n"
      "      <IKCoordinateTask name=\"q2\"><weight>1</weight>"
      "<value_type>default_value</value_type></IKCoordinateTask>\n"
      "    </objects></IKTaskSet>\n", 20 * (PI / 180));
  write_ik_setup("ik_weights.xml", markers, "-1 2", "weights");
  free(markers);
  expect_run("run-tool ik_weights.xml --quiet", 0, "wrote", "ref_ik/weights.mot");
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weight R1A=7 "
             "--weight R1B=2.5 --weight R2B=0 --coordinate-task q1=20deg:0.01 "
             "--coordinate-task q2=default --accuracy 1e-8 --constraint-weight Inf "
             "--marker-errors cli_ik/w_ik_marker_errors.sto --out cli_ik/weights.mot --quiet",
             0, "wrote", "cli_ik/w_ik_marker_errors.sto");
  EXPECT_EQ_INT(same_table("ref_ik/weights.mot", "cli_ik/weights.mot", 1e-12), NFRAME);
  same_table("ref_ik/ref_ik_marker_errors.sto", "cli_ik/w_ik_marker_errors.sto", 1e-12);
  // an IKTaskSet file, and the same set in a setup file; a coordinate task replacing its own
  char* doc = mbs_format_string("<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
                                "<OpenSimDocument Version=\"40000\">\n%s</OpenSimDocument>\n",
                                task_set);
  write_file("tasks.xml", doc);
  free(doc);
  write_ik_setup("ik_tasks.xml", task_set, "0 1", "tasks");
  expect_run("run-tool ik_tasks.xml --quiet", 0, "wrote", "ref_ik/tasks.mot");
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weights tasks.xml "
             "--out cli_ik/tasks.mot --quiet", 0, NULL, NULL);
  EXPECT_EQ_INT(same_table("ref_ik/tasks.mot", "cli_ik/tasks.mot", 1e-12), NFRAME);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weights ik_tasks.xml "
             "--out cli_ik/tasks2.mot --quiet", 0, NULL, NULL);
  EXPECT_EQ_INT(same_table("ref_ik/tasks.mot", "cli_ik/tasks2.mot", 1e-12), NFRAME);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weights tasks.xml "
             "--coordinate-task q2=0.3:0.5 --out cli_ik/tasks3.mot --quiet", 0,
             "--coordinate-task q2 replaces the IKCoordinateTask 'q2' of tasks.xml", NULL);
  mbs_table* t = read_table("cli_ik/tasks3.mot");
  mbs_table* r = read_table("cli_ik/tasks.mot");
  EXPECT_TRUE(t && r && t->nrow == r->nrow && fabs(mbs_table_get(t, 50, 2) -
                                                   mbs_table_get(r, 50, 2)) > 1e-3);
  mbs_table_free(t);
  mbs_table_free(r);

  // bad flags
  expect_run("inverse-kinematics --help", 0, "usage: mbstudy inverse-kinematics", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --out x.mot --bogus 1", 2,
             "mbstudy inverse-kinematics: unknown option '--bogus'", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --out x.mot stray", 2,
             "unexpected argument 'stray'", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --out", 2,
             "--out needs a value", NULL);
  expect_run("inverse-kinematics --model --markers trial.trc --out x.mot", 2,
             "--model needs a value", NULL);
  expect_run("inverse-kinematics --model pend.osim --out x.mot", 2,
             "mbstudy inverse-kinematics: missing --markers", NULL);
  expect_run("inverse-kinematics --model pend.osim --out x.mot", 2, "usage:", NULL);
  expect_run("inverse-kinematics --model nosuch.osim --markers trial.trc --out x.mot", 1,
             "--model nosuch.osim: No such file or directory", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weights none.xml "
             "--out x.mot", 1, "--weights none.xml: No such file or directory", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weight NOPE=2 "
             "--out x.mot", 1, "--weight NOPE: trial.trc has no marker 'NOPE'", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weight EXTRA=2 "
             "--out x.mot", 1, "--weight EXTRA: pend.osim has no marker 'EXTRA'", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weight R1A "
             "--out x.mot", 2, "--weight takes NAME=WEIGHT", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weight R1A=-1 "
             "--out x.mot", 2, "weight -1 is negative", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weights tasks.xml "
             "--weight R1A=2 --out x.mot", 2, "--weights and --weight do not go together",
             NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --coordinate-task knee=0 "
             "--out x.mot", 1, "--coordinate-task knee: pend.osim has no coordinate 'knee'",
             NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --coordinate-task q1=abc "
             "--out x.mot", 2, "--coordinate-task's value expects a number, got 'abc'", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --time-range 0.5 0.1 "
             "--out x.mot", 2, "--time-range 0.5 0.1: the start is after the end", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --time-range 0.5 "
             "--out x.mot", 2, "--time-range expects a number, got '--out'", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --accuracy 0 "
             "--out x.mot", 2, "--accuracy must be positive", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers pend.osim --out x.mot", 1,
             "mbstudy reads marker files in the .trc format", NULL);
  expect_run("inverse-kinematics --model pend.osim --markers trial.trc --weights pend.osim "
             "--out x.mot", 1, "--weights pend.osim: no <IKTaskSet> in the file", NULL);
  EXPECT_TRUE(!file_exists("x.mot"));
}

//---------------------------------- scale -------------------------------------------------------

static const char* measurement_set =
    "<MeasurementSet name=\"measurements\">\n"
    "  <objects>\n"
    "    <Measurement name=\"rod1\"><apply>true</apply>\n"
    "      <MarkerPairSet><objects>\n"
    "        <MarkerPair><markers> R1A R1B</markers></MarkerPair>\n"
    "        <MarkerPair><markers> R1A R1C</markers></MarkerPair>\n"
    "      </objects></MarkerPairSet>\n"
    "      <BodyScaleSet><objects><BodyScale name=\"rod1\"><axes> X Y Z</axes></BodyScale>"
    "</objects></BodyScaleSet>\n"
    "    </Measurement>\n"
    "    <Measurement name=\"rod2\"><apply>true</apply>\n"
    "      <MarkerPairSet><objects>\n"
    "        <MarkerPair><markers> R2A R2B</markers></MarkerPair>\n"
    "      </objects></MarkerPairSet>\n"
    "      <BodyScaleSet><objects><BodyScale name=\"rod2\"><axes> X Y</axes></BodyScale>"
    "</objects></BodyScaleSet>\n"
    "    </Measurement>\n"
    "  </objects>\n"
    "</MeasurementSet>\n";

static void test_scale(void) {
  char* doc = mbs_format_string("<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
                                "<OpenSimDocument Version=\"40000\">\n%s</OpenSimDocument>\n",
                                measurement_set);
  write_file("measurements.xml", doc);
  free(doc);
  write_file("markerset.xml",
             "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
             "<OpenSimDocument Version=\"40000\"><MarkerSet name=\"markerset\"><objects>\n"
             "  <Marker name=\"R1C\"><socket_parent_frame>/bodyset/rod1</socket_parent_frame>"
             "<location>0.03 0.01 0.06</location></Marker>\n"
             "  <Marker name=\"NEW\"><socket_parent_frame>/bodyset/rod2</socket_parent_frame>"
             "<location>0 -0.1 0</location></Marker>\n"
             "</objects></MarkerSet></OpenSimDocument>\n");
  // every step: marker set, measurements (in a file), manual scales after them, mass with its
  // distribution kept, markers placed
  char* setup = mbs_format_string(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\">\n"
      "  <ScaleTool name=\"scaled\">\n"
      "    <mass>4.5</mass>\n"
      "    <GenericModelMaker><model_file>pend.osim</model_file>"
      "<marker_set_file>markerset.xml</marker_set_file></GenericModelMaker>\n"
      "    <ModelScaler>\n"
      "      <apply>true</apply>\n"
      "      <scaling_order> measurements manualScale</scaling_order>\n"
      "      <MeasurementSet file=\"measurements.xml\"/>\n"
      "      <ScaleSet><objects>\n"
      "        <Scale><scales> 1.05 0.95 1</scales><segment>rod2</segment><apply>true</apply>"
      "</Scale>\n"
      "      </objects></ScaleSet>\n"
      "      <marker_file>static.trc</marker_file>\n"
      "      <time_range> 0 0.04</time_range>\n"
      "      <preserve_mass_distribution>true</preserve_mass_distribution>\n"
      "      <output_scale_file>ref_scale/scale_set.xml</output_scale_file>\n"
      "    </ModelScaler>\n"
      "    <MarkerPlacer>\n"
      "      <apply>true</apply>\n"
      "      <marker_file>static.trc</marker_file>\n"
      "      <time_range> 0 0.04</time_range>\n"
      "      <output_model_file>ref_scale/scaled.osim</output_model_file>\n"
      "    </MarkerPlacer>\n"
      "  </ScaleTool>\n"
      "</OpenSimDocument>\n");
  write_file("scale_setup.xml", setup);
  free(setup);
  expect_run("run-tool scale_setup.xml --quiet", 0, "wrote", "ref_scale/scaled.osim");
  expect_run("scale --model pend.osim --static static.trc --mass 4.5 --markers markerset.xml "
             "--measurements measurements.xml --manual rod2=1.05,0.95,1 --time-range 0 0.04 "
             "--place-markers --preserve-mass-distribution --out cli_scale/scaled.osim "
             "--scale-set cli_scale/scale_set.xml --quiet",
             0, "wrote", "cli_scale/scaled.osim");
  same_text("ref_scale/scaled.osim", "cli_scale/scaled.osim", 1e-12);
  same_text("ref_scale/scale_set.xml", "cli_scale/scale_set.xml", 1e-12);
  // the factors: rod1's by its measurement (the trial is the model grown 10 %), rod2's manual
  char* set = read_text("cli_scale/scale_set.xml");
  EXPECT_TRUE(set && strstr(set, "1.05 0.95 1"));
  free(set);
  // the masses only, with their distribution by size; the first frame
  setup = mbs_format_string(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\">\n"
      "  <ScaleTool name=\"manual\">\n"
      "    <mass>4</mass>\n"
      "    <GenericModelMaker><model_file>pend.osim</model_file></GenericModelMaker>\n"
      "    <ModelScaler>\n"
      "      <apply>true</apply>\n"
      "      <scaling_order>manualScale</scaling_order>\n"
      "      <ScaleSet><objects>\n"
      "        <Scale><scales> 1.2 1.2 1.2</scales><segment>rod1</segment></Scale>\n"
      "      </objects></ScaleSet>\n"
      "      <marker_file>static.trc</marker_file>\n"
      "      <output_model_file>ref_scale/manual.osim</output_model_file>\n"
      "    </ModelScaler>\n"
      "  </ScaleTool>\n"
      "</OpenSimDocument>\n");
  write_file("scale_manual.xml", setup);
  free(setup);
  expect_run("run-tool scale_manual.xml --quiet", 0, "wrote", "ref_scale/manual.osim");
  expect_run("scale --model pend.osim --static static.trc --mass 4 --manual rod1=1.2 "
             "--out cli_scale/manual.osim", 0, "wrote", "cli_scale/manual.osim");
  same_text("ref_scale/manual.osim", "cli_scale/manual.osim", 1e-12);
  expect_run("scale --model pend.osim --static static.trc --mass 4 --out cli_scale/mass.osim", 0,
             "note: no --measurements or --manual", NULL);

  // bad flags
  expect_run("scale --help", 0, "usage: mbstudy scale", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass 4 --out y.osim --scales 2", 2,
             "mbstudy scale: unknown option '--scales'", NULL);
  expect_run("scale --model pend.osim --static static.trc --out y.osim", 2,
             "mbstudy scale: missing --mass", NULL);
  expect_run("scale --model pend.osim --out y.osim", 2, "missing --static, --mass", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass --out y.osim", 2,
             "--mass needs a value", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass -3 --out y.osim", 2,
             "--mass must be positive", NULL);
  expect_run("scale --model pend.osim --static nosuch.trc --mass 4 --out y.osim", 1,
             "--static nosuch.trc: No such file or directory", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass 4 --measurements nosuch.xml "
             "--out y.osim", 1, "--measurements nosuch.xml: No such file or directory", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass 4 --manual wing=1.1 "
             "--out y.osim", 1, "--manual wing: pend.osim has no body 'wing'", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass 4 --manual rod1=1,2 "
             "--out y.osim", 2, "--manual takes BODY=S or BODY=SX,SY,SZ", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass 4 --manual rod1=0 "
             "--out y.osim", 2, "--manual takes BODY=S or BODY=SX,SY,SZ", NULL);
  expect_run("scale --model pend.osim --static static.trc --mass 4 --measurements tasks.xml "
             "--out y.osim", 1, "holds a <IKTaskSet>, not the <MeasurementSet>", NULL);
  EXPECT_TRUE(!file_exists("y.osim"));
}

//---------------------------------- analyze -----------------------------------------------------

// every result file <ref_dir>/<ref>_X against <cli_dir>/<cli>_X; how many
static int same_results(const char* ref_dir, const char* ref, const char* cli_dir,
                        const char* cli) {
  char* p = path_of(ref_dir);
  DIR* d = opendir(p);
  free(p);
  int n = 0;
  const size_t l = strlen(ref);
  for (struct dirent* e; d && (e = readdir(d));) {
    if (strncmp(e->d_name, ref, l) || e->d_name[l] != '_') continue;
    char* a = mbs_format_string("%s/%s", ref_dir, e->d_name);
    char* b = mbs_format_string("%s/%s%s", cli_dir, cli, e->d_name + l);
    if (same_table(a, b, 1e-12) > 0) n++;
    free(a);
    free(b);
  }
  if (d) closedir(d);
  return n;
}

static const char* analyze_setup =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <AnalyzeTool name=\"ref\">\n"
    "    <model_file>pend.osim</model_file>\n"
    "    <results_directory>ref_an</results_directory>\n"
    "    <initial_time>0.1</initial_time>\n"
    "    <final_time>0.9</final_time>\n"
    "    <AnalysisSet name=\"Analyses\"><objects>\n"
    "      <Kinematics name=\"Kinematics\"><step_interval>2</step_interval></Kinematics>\n"
    "      <BodyKinematics name=\"BodyKinematics\"><step_interval>2</step_interval>"
    "</BodyKinematics>\n"
    "      <Actuation name=\"Actuation\"><step_interval>2</step_interval></Actuation>\n"
    "      <MuscleAnalysis name=\"MuscleAnalysis\"><step_interval>2</step_interval>"
    "</MuscleAnalysis>\n"
    "      <JointReaction name=\"JointReaction\"><step_interval>2</step_interval>"
    "</JointReaction>\n"
    "      <StaticOptimization name=\"StaticOptimization\"><step_interval>2</step_interval>"
    "</StaticOptimization>\n"
    "      <InducedAccelerations name=\"InducedAccelerations\"><step_interval>2</step_interval>"
    "<coordinate_names>all</coordinate_names></InducedAccelerations>\n"
    "    </objects></AnalysisSet>\n"
    "    <ControllerSet name=\"Controllers\"><objects>\n"
    "      <ControlSetController><controls_file>controls.sto</controls_file>"
    "</ControlSetController>\n"
    "    </objects></ControllerSet>\n"
    "    <external_loads_file>loads.xml</external_loads_file>\n"
    "    <coordinates_file>coords.mot</coordinates_file>\n"
    "    <lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>\n"
    "  </AnalyzeTool>\n"
    "</OpenSimDocument>\n";

static void test_analyze(void) {
  // every analysis with OpenSim's defaults, filtered coordinates, controls, loads, a time range
  // and a step interval
  write_file("analyze_setup.xml", analyze_setup);
  expect_run("run-tool analyze_setup.xml --quiet", 0, "results in", "ref_an");
  expect_run("analyze --model pend.osim --coordinates coords.mot --lowpass 6 --analyses all "
             "--external-loads loads.xml --controls controls.sto --time-range 0.1 0.9 "
             "--step-interval 2 --name cli --results cli_an --quiet", 0, "results in", "cli_an");
  const int n = same_results("ref_an", "ref", "cli_an", "cli");
  printf("analyze: %d result files the same as run-tool's\n", n);
  // Kinematics 3, BodyKinematics 3, Actuation 3, MuscleAnalysis 17, JointReaction 1, SO 2,
  // IA 3 (q1, q2, the center of mass)
  EXPECT_TRUE(n >= 30);
  mbs_table* k = read_table("cli_an/cli_Kinematics_q.sto");
  EXPECT_TRUE(k && k->nrow > 30 && k->nrow < 50);  // every second row of 0.1 .. 0.9 s
  if (k) printf("analyze: %d rows from %g to %g s\n", k->nrow, mbs_table_get(k, 0, 0),
                mbs_table_get(k, k->nrow - 1, 0));
  mbs_table_free(k);
  // a states file, the defaults: Kinematics over every row, named after the model
  write_file("analyze_states.xml",
             "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
             "<OpenSimDocument Version=\"40000\">\n"
             "  <AnalyzeTool name=\"pend\">\n"
             "    <model_file>pend.osim</model_file>\n"
             "    <results_directory>ref_st</results_directory>\n"
             "    <initial_time>0</initial_time>\n"
             "    <final_time>1</final_time>\n"
             "    <AnalysisSet><objects><Kinematics name=\"Kinematics\"/></objects></AnalysisSet>\n"
             "    <states_file>states.sto</states_file>\n"
             "  </AnalyzeTool>\n"
             "</OpenSimDocument>\n");
  expect_run("run-tool analyze_states.xml --quiet", 0, "results in", "ref_st");
  expect_run("analyze --model pend.osim --states states.sto --results cli_st", 0, "wrote",
             "cli_st/pend_Kinematics_");
  EXPECT_EQ_INT(same_results("ref_st", "pend", "cli_st", "pend"), 3);

  // bad flags
  expect_run("analyze --help", 0, "usage: mbstudy analyze", NULL);
  expect_run("analyze --model pend.osim --states states.sto --results z --bogus", 2,
             "mbstudy analyze: unknown option '--bogus'", NULL);
  expect_run("analyze --model pend.osim --results z", 2,
             "mbstudy analyze: missing --states or --coordinates", NULL);
  expect_run("analyze --model pend.osim --states states.sto", 2, "missing --results", NULL);
  expect_run("analyze --model pend.osim --states states.sto --results", 2,
             "--results needs a value", NULL);
  expect_run("analyze --model pend.osim --states states.sto --coordinates coords.mot "
             "--results z", 2, "--states and --coordinates do not go together", NULL);
  expect_run("analyze --model pend.osim --states states.sto --lowpass 6 --results z", 2,
             "--lowpass goes with --coordinates", NULL);
  expect_run("analyze --model pend.osim --states states.sto --analyses kinematic --results z",
             2, "--analyses: unknown analysis 'kinematic'", NULL);
  expect_run("analyze --model pend.osim --states states.sto --step-interval 0 --results z", 2,
             "--step-interval expects a positive integer, got '0'", NULL);
  expect_run("analyze --model pend.osim --states nosuch.sto --results z", 1,
             "--states nosuch.sto: No such file or directory", NULL);
  expect_run("analyze --model pend.osim --coordinates coords.mot --controls nosuch.sto "
             "--results z", 1, "--controls nosuch.sto: No such file or directory", NULL);
  expect_run("analyze --model pend.osim --coordinates coords.mot --time-range 5 6 --results z",
             1, "lies outside the states", NULL);
  EXPECT_TRUE(!file_exists("z"));
  // the command list names the three
  expect_run("help", 0, "inverse-kinematics --model MODEL.osim --markers TRIAL.trc", NULL);
  expect_run("help", 0, "scale --model GENERIC.osim --static STATIC.trc --mass KG", NULL);
  expect_run("help", 0, "analyze --model MODEL.osim (--states S.sto | --coordinates C.mot)",
             NULL);
}

//---------------------------------- gait10dof18musc ---------------------------------------------

// OpenSim's walking trial: its IK setup through run-tool, and the same from flags with the
// setup's IKTaskSet as --weights (absolute paths); 1 when the trial is absent
static int test_gait(const char* data) {
  char* dir = mbs_format_string("%s/data/gait10dof18musc", data);
  char* setup = mbs_format_string("%s/IK/walk_Setup_IK.xml", dir);
  if (access(setup, R_OK)) {
    printf("SKIPPED: %s is absent\n", setup);
    free(dir);
    free(setup);
    return 1;
  }
  char* a = mbs_format_string("run-tool '%s' --results gait_ref --quiet", setup);
  expect_run(a, 0, "wrote", "gait_ref/subject01_walk_IK.mot");
  free(a);
  a = mbs_format_string("inverse-kinematics --model '%s/subject01.osim' --markers "
                        "'%s/ExperimentalData/subject01_walk.trc' --weights '%s' "
                        "--time-range 0 2.5 --out gait_cli/walk_ik.mot --marker-errors "
                        "gait_cli/errors.sto --quiet", dir, dir, setup);
  expect_run(a, 0, "wrote", "gait_cli/walk_ik.mot");
  free(a);
  const int n = same_table("gait_ref/subject01_walk_IK.mot", "gait_cli/walk_ik.mot", 1e-12);
  printf("gait10dof18musc walking trial: %d frames the same as run-tool's\n", n);
  EXPECT_TRUE(n > 100);
  same_table("gait_ref/_ik_marker_errors.sto", "gait_cli/errors.sto", 1e-12);
  free(dir);
  free(setup);
  return 0;
}

int main(int argc, char** argv) {
  const char* data = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--mbstudy")) mbstudy = argv[i + 1];
    else if (!strcmp(argv[i], "--data")) data = argv[i + 1];
    else if (!strcmp(argv[i], "--valgrind")) valgrind = argv[i + 1];
  }
  if (!mbstudy) {
    fprintf(stderr, "usage: test_tool_cli --mbstudy EXE [--data DIR] [--valgrind VALGRIND]\n");
    return 2;
  }
  char* exe = realpath(mbstudy, NULL);  // (the commands run in the test's folder)
  if (!exe) {
    fprintf(stderr, "%s: %s\n", mbstudy, strerror(errno));
    return 1;
  }
  mbstudy = exe;
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mbs_tool_cli_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    fprintf(stderr, "cannot make a folder: %s\n", strerror(errno));
    return 1;
  }
  int skipped = 0;
  if (data) {
    skipped = test_gait(data);
  } else {
    write_inputs();
    test_inverse_kinematics();
    test_scale();
    test_analyze();
  }
  if (mbs_test_failures) fprintf(stderr, "the files are kept in %s\n", tmpdir);
  else if (!getenv("MBS_TEST_KEEP")) mbs_remove_tree(tmpdir);
  else printf("the files are in %s\n", tmpdir);
  const int rc = mbs_test_finish("test_tool_cli");
  free(exe);
  return rc == EXIT_SUCCESS && skipped && mbs_test_checks == 0 ? 77 : rc;
}
