// `mbstudy run-tool` with OpenSim's AnalyzeTool (jobs/tool_analyze.c, jobs/analysis_*.c,
// io/analyze_states.c), against closed forms:
//  - a planar double pendulum (PinJoints with offset frames, a CoordinateActuator and a
//    TorqueActuator driven by a controls file) stepped through a states file: Kinematics (q, u
//    and the accelerations of its Lagrange equations, in degrees and radians), BodyKinematics
//    (centers of mass, orientations, their rates, the whole model's center of mass; in Ground
//    and in the bodies' frames), Actuation (forces, speeds, powers of the controls' closed form),
//    JointReaction (the force each pin transmits is the mass times the acceleration less gravity
//    of what hangs below it, the moment about the pin's axis the motor's torque, on the child
//    and on the parent, in Ground, child and parent frames); step_interval and the time range;
//  - the same motion given as a coordinates file in degrees (speeds by the splines, with and
//    without the low-pass filter, or from a speeds file in degrees whose columns are named
//    after the coordinates) against the motion's derivatives;
//  - MuscleAnalysis on an arm whose third joint is coupled to the second by a
//    CoordinateCouplerConstraint: Length is the straight path's closed-form length, moment arms
//    are -dL/dq by central differences of that closed form along the coupled motion, moments are
//    moment arm x tendon force, and with solve_for_equilibrium_for_auxiliary_states the fiber
//    length solves Thelen's equilibrium (its curves written out here, solved by bisection);
//  - bad input: unknown analyses, missing files, time ranges outside the data, unknown joints,
//    frames, bodies and coordinates, bad lists and values: messages naming the file and line.
// With --data DIR (the shared folder; exit 77, skipped, without it): gait10dof18musc's walking
// trial (IK coordinates low-pass filtered at 6 Hz, ground reactions) through every analysis,
// its moment arms checked against -dL/dq by central differences of the path lengths at
// rows of the trial, and leg6dof9musc's knee (a coupler constraint moves its patella) likewise.
#define _GNU_SOURCE  // nftw, mkdtemp
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbs/analyze_states.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/path.h"
#include "mbs/table.h"
#include "mbs_test.h"
#include "mbs_test_tool.h"
#include "../../jobs/progress.h"

#define PI 3.14159265358979323846
#define G 9.80665

static char tmpdir[256];

static int rm_entry(const char* p, const struct stat* s, int flag, struct FTW* w) {
  (void)s;
  (void)flag;
  (void)w;
  return remove(p);
}

static char* path_of(const char* name) { return mbs_format_string("%s/%s", tmpdir, name); }

static void write_file(const char* name, const char* text) {
  char* p = path_of(name);
  FILE* f = fopen(p, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s: %s\n", p, strerror(errno));
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  free(p);
}


// run a setup (in tmpdir) with the AnalyzeTool in this process; the log into *log (malloc'd)
static int run_setup(const char* setup, char** log) {
  char* p = path_of(setup);
  const int rc = mbs_test_run_setup(mbs_tool_analyze, p, NULL, log);
  free(p);
  return rc;
}


// a result table of tool `tool` in tmpdir/res (NULL, and a failure, when it cannot be read)
static mbs_table* result(const char* tool, const char* analysis, const char* suffix) {
  char* name = mbs_format_string("res/%s_%s_%s.sto", tool, analysis, suffix);
  char* p = path_of(name);
  mbs_table* t = NULL;
  mbs_error err;
  const int rc = mbs_table_read_sto(p, &t, &err);
  mbs_test_checks++;
  if (rc) {
    mbs_test_failures++;
    fprintf(stderr, "FAIL: %s: %s\n", name, err.message);
  }
  free(name);
  free(p);
  return rc ? NULL : t;
}

static double col(const mbs_table* t, int r, const char* label) {
  const int c = mbs_table_column(t, label);
  if (c < 0) {
    fprintf(stderr, "FAIL: no column '%s' in '%s'\n", label, t->name);
    mbs_test_failures++;
    return NAN;
  }
  return mbs_table_get(t, r, c);
}

//---------------------------------- the double pendulum ---------------------------------------

// rod1: mass M1, center of mass at its origin, Izz I1, pin1 A1 above it (its child frame), pin2
// L1 - A1 below; rod2: M2, I2, pin2 A2 above its origin. pin1 sits at (PX, PY) in Ground.
static const double M1 = 2, I1 = 0.05, A1 = 0.4, L1 = 0.8, M2 = 1, I2 = 0.03, A2 = 0.3;
static const double PX = 0.1, PY = 0.2;
// motor1 (CoordinateActuator on q1, optimal force F1) and tq (TorqueActuator on rod2 against
// rod1 about Ground's z, optimal force F2) under controls c1 = 0.5 + t, c2 = 1 - t
static const double F1 = 10, F2 = 5;

static const char* dp_model =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <Model name=\"dp\">\n"
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
    "        <coordinates><Coordinate name=\"q1\"><default_value>0</default_value></Coordinate>"
    "</coordinates>\n"
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
    "        <coordinates><Coordinate name=\"q2\"><default_value>0</default_value></Coordinate>"
    "</coordinates>\n"
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
    "      <CoordinateActuator name=\"motor1\"><coordinate>q1</coordinate>"
    "<optimal_force>10</optimal_force></CoordinateActuator>\n"
    "      <TorqueActuator name=\"tq\"><bodyA>rod2</bodyA><bodyB>rod1</bodyB><axis>0 0 1</axis>"
    "<torque_is_global>true</torque_is_global><optimal_force>5</optimal_force>"
    "</TorqueActuator>\n"
    "    </objects></ForceSet>\n"
    "  </Model>\n"
    "</OpenSimDocument>\n";

// the motion: q1, q2 and their first and second derivatives at t
static void motion(double t, double q[2], double u[2], double a[2]) {
  q[0] = 0.4 * sin(3 * t) + 0.1;
  u[0] = 1.2 * cos(3 * t);
  a[0] = -3.6 * sin(3 * t);
  q[1] = 0.6 * cos(2 * t) - 0.2;
  u[1] = -1.2 * sin(2 * t);
  a[1] = -2.4 * cos(2 * t);
}

// the double pendulum at (q, u, t) by its Lagrange equations in the absolute angles th1 = q1,
// th2 = q1 + q2: their accelerations, the centers of mass, their velocities and accelerations
typedef struct dp_state {
  double th[2], w[2], al[2];        // angles, rates, accelerations
  double c1[2], c2[2], v1[2], v2[2], a1[2], a2[2];
  double tau1, tau2;                // motor1's and tq's torques
} dp_state;

static void dp_solve(const double q[2], const double u[2], double t, dp_state* s) {
  s->th[0] = q[0];
  s->th[1] = q[0] + q[1];
  s->w[0] = u[0];
  s->w[1] = u[0] + u[1];
  s->tau1 = F1 * (0.5 + t);
  s->tau2 = F2 * (1 - t);
  const double d = s->th[0] - s->th[1];
  const double M11 = I1 + M1 * A1 * A1 + M2 * L1 * L1, M12 = M2 * L1 * A2 * cos(d),
               M22 = I2 + M2 * A2 * A2;
  // generalized forces on th1, th2: motor1 on q1; tq on rod2 against rod1
  const double Q1 = s->tau1 - s->tau2, Q2 = s->tau2;
  const double r1 = Q1 - M2 * L1 * A2 * sin(d) * s->w[1] * s->w[1] -
                    (M1 * A1 + M2 * L1) * G * sin(s->th[0]);
  const double r2 = Q2 + M2 * L1 * A2 * sin(d) * s->w[0] * s->w[0] - M2 * A2 * G * sin(s->th[1]);
  const double det = M11 * M22 - M12 * M12;
  s->al[0] = (M22 * r1 - M12 * r2) / det;
  s->al[1] = (M11 * r2 - M12 * r1) / det;
  const double s1 = sin(s->th[0]), k1 = cos(s->th[0]), s2 = sin(s->th[1]), k2 = cos(s->th[1]);
  // center of mass 1: pin1 + A1 (sin th1, -cos th1); pin2: pin1 + L1 (...); 2: pin2 + A2 (...)
  s->c1[0] = PX + A1 * s1;
  s->c1[1] = PY - A1 * k1;
  s->c2[0] = PX + L1 * s1 + A2 * s2;
  s->c2[1] = PY - L1 * k1 - A2 * k2;
  s->v1[0] = A1 * k1 * s->w[0];
  s->v1[1] = A1 * s1 * s->w[0];
  s->v2[0] = L1 * k1 * s->w[0] + A2 * k2 * s->w[1];
  s->v2[1] = L1 * s1 * s->w[0] + A2 * s2 * s->w[1];
  // d2/dt2 of a (sin th, -cos th) = a [th'' (cos th, sin th) + th'^2 (-sin th, cos th)]
  s->a1[0] = A1 * (s->al[0] * k1 - s->w[0] * s->w[0] * s1);
  s->a1[1] = A1 * (s->al[0] * s1 + s->w[0] * s->w[0] * k1);
  s->a2[0] = L1 * (s->al[0] * k1 - s->w[0] * s->w[0] * s1) +
             A2 * (s->al[1] * k2 - s->w[1] * s->w[1] * s2);
  s->a2[1] = L1 * (s->al[0] * s1 + s->w[0] * s->w[0] * k1) +
             A2 * (s->al[1] * s2 + s->w[1] * s->w[1] * k2);
}

#define DP_ROWS 41  // t = 0, 0.01, ..., 0.4

static void write_dp_inputs(void) {
  write_file("dp.osim", dp_model);
  // the controls: linear, so any interpolation between the nodes is exact
  write_file("ctl.sto", "controls\nversion=1\nnRows=3\nnColumns=3\ninDegrees=no\nendheader\n"
                        "time\tmotor1\ttq\n0\t0.5\t1\n0.5\t1\t0.5\n1\t1.5\t0\n");
  // the states: OpenSim 3 labels for q1, OpenSim 4's for q2, speeds both ways
  char* s = mbs_format_string("states\nversion=1\nnRows=%d\nnColumns=5\ninDegrees=no\nendheader\n"
                              "time\tq1\t/jointset/pin2/q2/value\tq1_u\t/jointset/pin2/q2/speed\n",
                              DP_ROWS);
  for (int k = 0; k < DP_ROWS; k++) {
    const double t = 0.01 * k;
    double q[2], u[2], a[2];
    motion(t, q, u, a);
    char* n = mbs_format_string("%s%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n", s, t, q[0], q[1], u[0],
                                u[1]);
    free(s);
    s = n;
  }
  write_file("dp_states.sto", s);
  free(s);
  // the same motion as coordinates in degrees, 100 Hz over 0 .. 1 s
  s = mbs_format_string("coords\nversion=1\nnRows=101\nnColumns=3\ninDegrees=yes\nendheader\n"
                        "time\t/jointset/pin1/q1/value\tq2\n");
  for (int k = 0; k <= 100; k++) {
    const double t = 0.01 * k;
    double q[2], u[2], a[2];
    motion(t, q, u, a);
    char* n = mbs_format_string("%s%.17g\t%.17g\t%.17g\n", s, t, q[0] * 180 / PI,
                                q[1] * 180 / PI);
    free(s);
    s = n;
  }
  write_file("dp_coords.mot", s);
  free(s);
}

static const char* dp_setup_head =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <AnalyzeTool name=\"dp\">\n"
    "    <model_file>dp.osim</model_file>\n"
    "    <results_directory>res</results_directory>\n";

static void test_pendulum(void) {
  write_dp_inputs();
  char* setup = mbs_format_string(
      "%s"
      "    <initial_time>0</initial_time>\n"
      "    <final_time>0.4</final_time>\n"
      "    <AnalysisSet name=\"Analyses\"><objects>\n"
      "      <Kinematics name=\"kin\"><on>true</on></Kinematics>\n"
      "      <Kinematics name=\"kinrad\"><in_degrees>false</in_degrees>"
      "<coordinates>q2</coordinates></Kinematics>\n"
      "      <BodyKinematics name=\"bk\"/>\n"
      "      <BodyKinematics name=\"bkl\"><in_degrees>false</in_degrees>"
      "<bodies>rod2 center_of_mass</bodies>"
      "<express_results_in_body_local_frame>true</express_results_in_body_local_frame>"
      "</BodyKinematics>\n"
      "      <Actuation name=\"act\"><step_interval>3</step_interval></Actuation>\n"
      "      <JointReaction name=\"jr\"><joint_names>pin1 pin2 pin2 pin1</joint_names>"
      "<apply_on_bodies>child child parent child</apply_on_bodies>"
      "<express_in_frame>ground child parent child</express_in_frame></JointReaction>\n"
      "      <Kinematics name=\"off\"><on>false</on></Kinematics>\n"
      "    </objects></AnalysisSet>\n"
      "    <ControllerSet><objects><ControlSetController><controls_file>ctl.sto</controls_file>"
      "</ControlSetController></objects></ControllerSet>\n"
      "    <states_file>dp_states.sto</states_file>\n"
      "  </AnalyzeTool>\n"
      "</OpenSimDocument>\n",
      dp_setup_head);
  write_file("dp_setup.xml", setup);
  free(setup);
  char* log = NULL;
  EXPECT_EQ_INT(run_setup("dp_setup.xml", &log), 0);
  if (mbs_test_failures) fprintf(stderr, "%s\n", log);
  free(log);
  mbs_table* kq = result("dp", "kin", "q");
  mbs_table* ku = result("dp", "kin", "u");
  mbs_table* ka = result("dp", "kin", "dudt");
  mbs_table* rq = result("dp", "kinrad", "q");
  mbs_table* ra = result("dp", "kinrad", "dudt");
  mbs_table* bp = result("dp", "bk", "pos_global");
  mbs_table* bv = result("dp", "bk", "vel_global");
  mbs_table* ba = result("dp", "bk", "acc_global");
  mbs_table* lv = result("dp", "bkl", "vel_bodyLocal");
  mbs_table* la = result("dp", "bkl", "acc_bodyLocal");
  mbs_table* af = result("dp", "act", "force");
  mbs_table* as = result("dp", "act", "speed");
  mbs_table* ap = result("dp", "act", "power");
  mbs_table* jr = result("dp", "jr", "ReactionLoads");
  char* off = path_of("res/dp_off_q.sto");
  EXPECT_TRUE(access(off, F_OK) != 0);  // an analysis that is off writes nothing
  free(off);
  if (kq && ku && ka && rq && ra && bp && bv && ba && lv && la && af && as && ap && jr) {
    // headers and columns as OpenSim writes them
    EXPECT_TRUE(!strcmp(kq->name, "Coordinates") && kq->in_degrees && kq->ncol == 3);
    EXPECT_TRUE(!strcmp(ka->name, "Accelerations") && !strcmp(ku->name, "Speeds"));
    EXPECT_TRUE(!rq->in_degrees && rq->ncol == 2 && !strcmp(rq->labels[1], "q2"));
    EXPECT_TRUE(!strcmp(bp->name, "Positions") && bp->ncol == 1 + 12 + 3);
    EXPECT_TRUE(!strcmp(bp->labels[1], "rod1_X") && !strcmp(bp->labels[6], "rod1_Oz") &&
                !strcmp(bp->labels[13], "center_of_mass_X"));
    EXPECT_TRUE(lv->ncol == 1 + 6 + 3 && !strcmp(lv->labels[1], "rod2_X"));
    EXPECT_TRUE(!strcmp(af->name, "ActuatorForces") && af->ncol == 3 &&
                !strcmp(af->labels[1], "motor1") && !strcmp(af->labels[2], "tq"));
    EXPECT_TRUE(!strcmp(jr->name, "Joint Reaction Loads") && jr->ncol == 1 + 36);
    EXPECT_TRUE(!strcmp(jr->labels[1], "pin1_on_rod1_in_ground_fx") &&
                !strcmp(jr->labels[10], "pin2_on_rod2_in_rod2_fx") &&
                !strcmp(jr->labels[19], "pin2_on_rod1_in_rod1_fx") &&
                !strcmp(jr->labels[36], "pin1_on_rod1_in_rod1_pz"));
    EXPECT_EQ_INT(kq->nrow, DP_ROWS);
    // step_interval 3: the first and the last rows and every third row
    EXPECT_EQ_INT(af->nrow, 15);  // 0, 3, ..., 39 and 40
    double worst = 0;
    for (int r = 0; r < kq->nrow; r++) {
      const double t = mbs_table_get(kq, r, 0);
      double q[2], u[2], a[2];
      motion(t, q, u, a);
      dp_state s;
      dp_solve(q, u, t, &s);
      const double dg = 180 / PI;
      const double qa[2] = {s.al[0], s.al[1] - s.al[0]};  // q1'', q2''
      EXPECT_NEAR(col(kq, r, "q1"), q[0] * dg, 1e-12);
      EXPECT_NEAR(col(kq, r, "q2"), q[1] * dg, 1e-12);
      EXPECT_NEAR(col(ku, r, "q1"), u[0] * dg, 1e-12);
      EXPECT_NEAR(col(ku, r, "q2"), u[1] * dg, 1e-12);
      EXPECT_NEAR(col(ka, r, "q1"), qa[0] * dg, 1e-10);
      EXPECT_NEAR(col(ka, r, "q2"), qa[1] * dg, 1e-10);
      EXPECT_NEAR(col(rq, r, "q2"), q[1], 1e-12);
      EXPECT_NEAR(col(ra, r, "q2"), qa[1], 1e-10);
      worst = fmax(worst, fabs(col(ka, r, "q1") - qa[0] * dg));
      // bodies: centers of mass, angles about z (degrees), rates, accelerations
      const double* c[2] = {s.c1, s.c2};
      const double* v[2] = {s.v1, s.v2};
      const double* ac[2] = {s.a1, s.a2};
      const char* bn[2] = {"rod1", "rod2"};
      for (int b = 0; b < 2; b++) {
        char l[64];
        for (int k = 0; k < 2; k++) {
          snprintf(l, sizeof(l), "%s_%c", bn[b], "XY"[k]);
          EXPECT_NEAR(col(bp, r, l), c[b][k], 1e-12);
          EXPECT_NEAR(col(bv, r, l), v[b][k], 1e-12);
          EXPECT_NEAR(col(ba, r, l), ac[b][k], 1e-10);
        }
        snprintf(l, sizeof(l), "%s_Z", bn[b]);
        EXPECT_ABS(col(bp, r, l), 0, 1e-12);
        snprintf(l, sizeof(l), "%s_Oz", bn[b]);
        EXPECT_NEAR(col(bp, r, l), s.th[b] * dg, 1e-12);
        EXPECT_NEAR(col(bv, r, l), s.w[b] * dg, 1e-12);
        EXPECT_NEAR(col(ba, r, l), s.al[b] * dg, 1e-10);
        snprintf(l, sizeof(l), "%s_Ox", bn[b]);
        EXPECT_ABS(col(bp, r, l), 0, 1e-12);
      }
      for (int k = 0; k < 2; k++) {
        char l[64];
        snprintf(l, sizeof(l), "center_of_mass_%c", "XY"[k]);
        EXPECT_NEAR(col(bp, r, l), (M1 * s.c1[k] + M2 * s.c2[k]) / (M1 + M2), 1e-12);
        EXPECT_NEAR(col(bv, r, l), (M1 * s.v1[k] + M2 * s.v2[k]) / (M1 + M2), 1e-12);
        EXPECT_NEAR(col(ba, r, l), (M1 * s.a1[k] + M2 * s.a2[k]) / (M1 + M2), 1e-10);
        // in rod2's frame (radians): velocity and acceleration rotated by -th2; the whole
        // model's center of mass stays in Ground
        EXPECT_NEAR(col(lv, r, l), (M1 * s.v1[k] + M2 * s.v2[k]) / (M1 + M2), 1e-12);
      }
      const double c2 = cos(s.th[1]), s2 = sin(s.th[1]);
      EXPECT_NEAR(col(lv, r, "rod2_X"), c2 * s.v2[0] + s2 * s.v2[1], 1e-12);
      EXPECT_NEAR(col(lv, r, "rod2_Y"), -s2 * s.v2[0] + c2 * s.v2[1], 1e-12);
      EXPECT_NEAR(col(lv, r, "rod2_Oz"), s.w[1], 1e-12);
      EXPECT_NEAR(col(la, r, "rod2_X"), c2 * s.a2[0] + s2 * s.a2[1], 1e-10);
      EXPECT_NEAR(col(la, r, "rod2_Oz"), s.al[1], 1e-10);
      // reactions: what pin2 applies to rod2 is m2 (a2 - g); pin1 to rod1 also carries rod2
      const double f2[2] = {M2 * s.a2[0], M2 * (s.a2[1] + G)};
      const double f1[2] = {M1 * s.a1[0] + f2[0], M1 * (s.a1[1] + G) + f2[1]};
      const double* J = jr->data + (size_t)r * jr->ncol + 1;
      // pin1 on rod1 in Ground, at pin1; the moment about the pin's axis is the motor's torque
      EXPECT_NEAR(J[0], f1[0], 1e-10);
      EXPECT_NEAR(J[1], f1[1], 1e-10);
      EXPECT_ABS(J[2], 0, 1e-10);
      EXPECT_ABS(J[3], 0, 1e-10);
      EXPECT_ABS(J[4], 0, 1e-10);
      EXPECT_NEAR(J[5], s.tau1, 1e-10);
      EXPECT_NEAR(J[6], PX, 1e-12);
      EXPECT_NEAR(J[7], PY, 1e-12);
      // pin2 on rod2 in rod2's frame (rotated by -th2), at rod2's (0, 0.3); no torque about
      // its axis (tq acts on the bodies, not through the joint)
      J += 9;
      EXPECT_NEAR(J[0], c2 * f2[0] + s2 * f2[1], 1e-10);
      EXPECT_NEAR(J[1], -s2 * f2[0] + c2 * f2[1], 1e-10);
      EXPECT_ABS(J[5], 0, 1e-10);
      EXPECT_ABS(J[6], 0, 1e-12);
      EXPECT_NEAR(J[7], A2, 1e-12);
      // pin2 on rod1 (its parent) in rod1's frame, at rod1's (0, -0.4)
      J += 9;
      const double c1 = cos(s.th[0]), s1 = sin(s.th[0]);
      EXPECT_NEAR(J[0], -(c1 * f2[0] + s1 * f2[1]), 1e-10);
      EXPECT_NEAR(J[1], -(-s1 * f2[0] + c1 * f2[1]), 1e-10);
      EXPECT_ABS(J[5], 0, 1e-10);
      EXPECT_NEAR(J[7], A1 - L1, 1e-12);
      // pin1 on rod1 in rod1's frame, at rod1's (0, 0.4)
      J += 9;
      EXPECT_NEAR(J[0], c1 * f1[0] + s1 * f1[1], 1e-10);
      EXPECT_NEAR(J[1], -s1 * f1[0] + c1 * f1[1], 1e-10);
      EXPECT_NEAR(J[5], s.tau1, 1e-10);
      EXPECT_NEAR(J[7], A1, 1e-12);
    }
    printf("double pendulum: Kinematics, BodyKinematics, JointReaction at %d rows against the "
           "Lagrange equations (largest q1'' difference %.2g deg/s^2)\n", kq->nrow, worst);
    for (int r = 0; r < af->nrow; r++) {
      const double t = mbs_table_get(af, r, 0);
      const int k = (int)lround(t / 0.01);
      EXPECT_TRUE(k % 3 == 0 || k == DP_ROWS - 1);
      double q[2], u[2], a[2];
      motion(t, q, u, a);
      EXPECT_NEAR(col(af, r, "motor1"), F1 * (0.5 + t), 1e-12);
      EXPECT_NEAR(col(af, r, "tq"), F2 * (1 - t), 1e-12);
      EXPECT_NEAR(col(as, r, "motor1"), u[0], 1e-12);
      EXPECT_NEAR(col(as, r, "tq"), u[1], 1e-12);  // rod2's rate less rod1's
      EXPECT_NEAR(col(ap, r, "motor1"), F1 * (0.5 + t) * u[0], 1e-12);
      EXPECT_NEAR(col(ap, r, "tq"), F2 * (1 - t) * u[1], 1e-12);
    }
  }
  mbs_table* all[] = {kq, ku, ka, rq, ra, bp, bv, ba, lv, la, af, as, ap, jr};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) mbs_table_free(all[i]);

  // a time range inside the data: the rows at or before its ends (Storage::findIndex)
  setup = mbs_format_string(
      "%s"
      "    <initial_time>0.025</initial_time>\n"
      "    <final_time>0.1</final_time>\n"
      "    <AnalysisSet><objects><Kinematics name=\"k2\"/></objects></AnalysisSet>\n"
      "    <states_file>dp_states.sto</states_file>\n"
      "  </AnalyzeTool>\n"
      "</OpenSimDocument>\n",
      dp_setup_head);
  write_file("dp_range.xml", setup);
  free(setup);
  EXPECT_EQ_INT(run_setup("dp_range.xml", &log), 0);
  free(log);
  mbs_table* k2 = result("dp", "k2", "q");
  if (k2) {
    EXPECT_EQ_INT(k2->nrow, 9);  // 0.02 .. 0.1
    EXPECT_NEAR(mbs_table_get(k2, 0, 0), 0.02, 1e-15);
    EXPECT_NEAR(mbs_table_get(k2, k2->nrow - 1, 0), 0.1, 1e-15);
  }
  mbs_table_free(k2);

  // the motion as coordinates in degrees: speeds from the splines (and after the filter)
  for (int filtered = 0; filtered < 2; filtered++) {
    setup = mbs_format_string(
        "%s"
        "    <initial_time>0</initial_time>\n"
        "    <final_time>1</final_time>\n"
        "    <AnalysisSet><objects><Kinematics name=\"kc\"><in_degrees>false</in_degrees>"
        "</Kinematics></objects></AnalysisSet>\n"
        "    <coordinates_file>dp_coords.mot</coordinates_file>\n"
        "    <lowpass_cutoff_frequency_for_coordinates>%s</lowpass_cutoff_frequency_for_"
        "coordinates>\n"
        "  </AnalyzeTool>\n"
        "</OpenSimDocument>\n",
        dp_setup_head, filtered ? "15" : "-1");
    write_file("dp_coords.xml", setup);
    free(setup);
    EXPECT_EQ_INT(run_setup("dp_coords.xml", &log), 0);
    free(log);
    mbs_table* cq = result("dp", "kc", "q");
    mbs_table* cu = result("dp", "kc", "u");
    double wq = 0, wu = 0;
    if (cq && cu) {
      EXPECT_EQ_INT(cq->nrow, 101);
      for (int r = 0; r < cq->nrow; r++) {
        const double t = mbs_table_get(cq, r, 0);
        // (the splines' ends; the filter's: the padding continues values and slopes, not
        // curvatures, and the filter spreads that kink over its response time)
        if (t < (filtered ? 0.25 : 0.1) || t > (filtered ? 0.75 : 0.9)) continue;
        double q[2], u[2], a[2];
        motion(t, q, u, a);
        for (int k = 0; k < 2; k++) {
          wq = fmax(wq, fabs(mbs_table_get(cq, r, 1 + k) - q[k]));
          wu = fmax(wu, fabs(mbs_table_get(cu, r, 1 + k) - u[k]));
        }
      }
      // unfiltered: the rows' own values and the quintic's derivative; filtered at 15 Hz,
      // motion at 0.3 to 0.5 Hz loses about (f / fc)^6 of itself
      EXPECT_TRUE(wq <= (filtered ? 1e-6 : 1e-13));
      EXPECT_TRUE(wu <= (filtered ? 1e-5 : 1e-7));
      printf("coordinates file%s: q within %.2g rad, speeds from the splines within %.2g rad/s "
             "of the motion's derivatives\n", filtered ? " (low-pass 15 Hz)" : "", wq, wu);
    }
    mbs_table_free(cq);
    mbs_table_free(cu);
  }

  // speeds from a file: the first run's _u.sto (degrees, columns named after the coordinates)
  setup = mbs_format_string(
      "%s"
      "    <initial_time>0</initial_time>\n"
      "    <final_time>0.4</final_time>\n"
      "    <AnalysisSet><objects><Kinematics name=\"ks\"><in_degrees>false</in_degrees>"
      "</Kinematics></objects></AnalysisSet>\n"
      "    <coordinates_file>dp_coords.mot</coordinates_file>\n"
      "    <speeds_file>res/dp_kin_u.sto</speeds_file>\n"
      "  </AnalyzeTool>\n"
      "</OpenSimDocument>\n",
      dp_setup_head);
  write_file("dp_speeds.xml", setup);
  free(setup);
  EXPECT_EQ_INT(run_setup("dp_speeds.xml", &log), 0);
  free(log);
  mbs_table* su = result("dp", "ks", "u");
  if (su) {
    EXPECT_EQ_INT(su->nrow, DP_ROWS);
    for (int r = 0; r < su->nrow; r++) {
      double q[2], u[2], a[2];
      motion(mbs_table_get(su, r, 0), q, u, a);
      EXPECT_NEAR(col(su, r, "q1"), u[0], 1e-12);
      EXPECT_NEAR(col(su, r, "q2"), u[1], 1e-12);
    }
  }
  mbs_table_free(su);
}

//---------------------------------- the muscle arm --------------------------------------------

// upper (pin "shoulder", a1, at Ground's origin), lower (pin "elbow", a2, 0.6 below),
// cap (pin "capj", a3, 0.4 below the elbow; a3 = 0.5 a2 by a coupler), a Thelen muscle from
// Ground's (0.05, -0.1) to cap's (0.03, -0.1)
static const double T_FMAX = 1000, T_LOPT = 0.3, T_LST = 0.7;

static const char* arm_model =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <Model name=\"arm\">\n"
    "    <Ground name=\"ground\"/>\n"
    "    <gravity>0 -9.80665 0</gravity>\n"
    "    <BodySet name=\"bodyset\"><objects>\n"
    "      <Body name=\"upper\"><mass>1</mass><mass_center>0 -0.3 0</mass_center>"
    "<inertia>0.01 0.01 0.01 0 0 0</inertia></Body>\n"
    "      <Body name=\"lower\"><mass>1</mass><mass_center>0 -0.2 0</mass_center>"
    "<inertia>0.01 0.01 0.01 0 0 0</inertia></Body>\n"
    "      <Body name=\"cap\"><mass>0.1</mass><mass_center>0 0 0</mass_center>"
    "<inertia>0.001 0.001 0.001 0 0 0</inertia></Body>\n"
    "    </objects></BodySet>\n"
    "    <JointSet name=\"jointset\"><objects>\n"
    "      <PinJoint name=\"shoulder\"><socket_parent_frame>/ground</socket_parent_frame>"
    "<socket_child_frame>/bodyset/upper</socket_child_frame><coordinates>"
    "<Coordinate name=\"a1\"/></coordinates></PinJoint>\n"
    "      <PinJoint name=\"elbow\"><socket_parent_frame>up_off</socket_parent_frame>"
    "<socket_child_frame>/bodyset/lower</socket_child_frame><coordinates>"
    "<Coordinate name=\"a2\"/></coordinates><frames><PhysicalOffsetFrame name=\"up_off\">"
    "<socket_parent>/bodyset/upper</socket_parent><translation>0 -0.6 0</translation>"
    "</PhysicalOffsetFrame></frames></PinJoint>\n"
    "      <PinJoint name=\"capj\"><socket_parent_frame>lo_off</socket_parent_frame>"
    "<socket_child_frame>/bodyset/cap</socket_child_frame><coordinates>"
    "<Coordinate name=\"a3\"/></coordinates><frames><PhysicalOffsetFrame name=\"lo_off\">"
    "<socket_parent>/bodyset/lower</socket_parent><translation>0 -0.4 0</translation>"
    "</PhysicalOffsetFrame></frames></PinJoint>\n"
    "    </objects></JointSet>\n"
    "    <ConstraintSet name=\"constraintset\"><objects>\n"
    "      <CoordinateCouplerConstraint name=\"couple\">\n"
    "        <coupled_coordinates_function><LinearFunction><coefficients>0.5 0</coefficients>"
    "</LinearFunction></coupled_coordinates_function>\n"
    "        <independent_coordinate_names>a2</independent_coordinate_names>\n"
    "        <dependent_coordinate_name>a3</dependent_coordinate_name>\n"
    "      </CoordinateCouplerConstraint>\n"
    "    </objects></ConstraintSet>\n"
    "    <ForceSet name=\"forceset\"><objects>\n"
    "      <Thelen2003Muscle name=\"mus\">\n"
    "        <GeometryPath name=\"geometrypath\"><PathPointSet><objects>\n"
    "          <PathPoint name=\"o\"><socket_parent_frame>/ground</socket_parent_frame>"
    "<location>0.05 -0.1 0</location></PathPoint>\n"
    "          <PathPoint name=\"i\"><socket_parent_frame>/bodyset/cap</socket_parent_frame>"
    "<location>0.03 -0.1 0</location></PathPoint>\n"
    "        </objects></PathPointSet></GeometryPath>\n"
    "        <max_isometric_force>1000</max_isometric_force>\n"
    "        <optimal_fiber_length>0.3</optimal_fiber_length>\n"
    "        <tendon_slack_length>0.7</tendon_slack_length>\n"
    "        <pennation_angle_at_optimal>0</pennation_angle_at_optimal>\n"
    "        <default_fiber_length>0.3</default_fiber_length>\n"
    "      </Thelen2003Muscle>\n"
    "    </objects></ForceSet>\n"
    "  </Model>\n"
    "</OpenSimDocument>\n";

// the straight path's length at angles a1, a2, a3 (planar rotations about z)
static double arm_length(double a1, double a2, double a3) {
  // insertion: R(a1) [(0, -0.6) + R(a2) [(0, -0.4) + R(a3) (0.03, -0.1)]]
  double x = 0.03 * cos(a3) + 0.1 * sin(a3), y = 0.03 * sin(a3) - 0.1 * cos(a3);
  y -= 0.4;
  double x2 = cos(a2) * x - sin(a2) * y, y2 = sin(a2) * x + cos(a2) * y;
  y2 -= 0.6;
  const double x1 = cos(a1) * x2 - sin(a1) * y2, y1 = sin(a1) * x2 + cos(a1) * y2;
  return hypot(x1 - 0.05, y1 + 0.1);
}

// Thelen's curves with OpenSim's defaults (FmaxTendonStrain 0.04, FmaxMuscleStrain 0.6,
// KshapeActive 0.45, KshapePassive 5)
static double thelen_tendon(double x) {
  const double e0 = 0.04, e3 = exp(3.0);
  const double etoe = 99 * e0 * e3 / (166 * e3 - 67), klin = 0.67 / (e0 - etoe);
  if (x <= 0) return 0;
  if (x < etoe) return 0.33 * (exp(3 * x / etoe) - 1) / (e3 - 1);
  return 0.33 + klin * (x - etoe);
}
static double thelen_active(double l) { return exp(-(l - 1) * (l - 1) / 0.45); }
static double thelen_passive(double l) {
  return l > 1 ? (exp(5 * (l - 1) / 0.6) - 1) / (exp(5.0) - 1) : 0;
}
// the fiber length in equilibrium at rest: tendon force = fiber force (no pennation), by
// bisection
static double thelen_equilibrium(double L, double a) {
  double lo = 0.05 * T_LOPT, hi = L - T_LST;
  for (int i = 0; i < 200; i++) {
    const double l = 0.5 * (lo + hi);
    const double g = thelen_tendon((L - l - T_LST) / T_LST) -
                     (a * thelen_active(l / T_LOPT) + thelen_passive(l / T_LOPT));
    if (g > 0) lo = l;
    else hi = l;
  }
  return 0.5 * (lo + hi);
}

#define ARM_ROWS 12

static void arm_pose(int k, double a[3]) {
  a[0] = -0.3 + 0.07 * k;
  a[1] = 0.5 - 0.09 * k;
  a[2] = 0.5 * a[1];  // (the coupler's)
}

static void test_muscles(void) {
  write_file("arm.osim", arm_model);
  char* s = mbs_format_string("states\nversion=1\nnRows=%d\nnColumns=9\ninDegrees=no\nendheader\n"
                              "time\ta1\ta2\ta3\ta1_u\ta2_u\ta3_u\t/forceset/mus/activation"
                              "\tmus.fiber_length\n", ARM_ROWS);
  for (int k = 0; k < ARM_ROWS; k++) {
    double a[3];
    arm_pose(k, a);
    char* n = mbs_format_string("%s%g\t%.17g\t%.17g\t%.17g\t0\t0\t0\t0.5\t0.25\n", s, 0.1 * k,
                                a[0], a[1], a[2]);
    free(s);
    s = n;
  }
  write_file("arm_states.sto", s);
  free(s);
  for (int eq = 1; eq >= 0; eq--) {
    s = mbs_format_string(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
        "<OpenSimDocument Version=\"40000\">\n"
        "  <AnalyzeTool name=\"arm\">\n"
        "    <model_file>arm.osim</model_file>\n"
        "    <results_directory>res</results_directory>\n"
        "    <initial_time>0</initial_time><final_time>10</final_time>\n"
        "    <solve_for_equilibrium_for_auxiliary_states>%s"
        "</solve_for_equilibrium_for_auxiliary_states>\n"
        "    <AnalysisSet><objects><MuscleAnalysis name=\"ma\"/>"
        "<Actuation name=\"act\"/></objects></AnalysisSet>\n"
        "    <states_file>arm_states.sto</states_file>\n"
        "  </AnalyzeTool>\n"
        "</OpenSimDocument>\n",
        eq ? "true" : "false");
    write_file("arm_setup.xml", s);
    free(s);
    char* log = NULL;
    EXPECT_EQ_INT(run_setup("arm_setup.xml", &log), 0);
    if (mbs_test_failures) fprintf(stderr, "%s\n", log);
    free(log);
    static const char* q[] = {"Length", "FiberLength", "NormalizedFiberLength", "TendonLength",
                              "TendonForce", "ActiveFiberForce", "PassiveFiberForce",
                              "PennationAngle", "MomentArm_a1", "MomentArm_a2", "MomentArm_a3",
                              "Moment_a2", "FiberForce", "ActiveFiberForceAlongTendon",
                              "MuscleActuatorPower", "FiberVelocity"};
    enum { NQ = sizeof(q) / sizeof(q[0]) };
    mbs_table* t[NQ];
    int ok = 1;
    for (int i = 0; i < NQ; i++) ok &= (t[i] = result("arm", "ma", q[i])) != NULL;
    mbs_table* af = result("arm", "act", "force");
    double warm = 0, wfib = 0;
    if (ok && af) {
      EXPECT_EQ_INT(t[0]->nrow, ARM_ROWS);
      EXPECT_TRUE(t[0]->ncol == 2 && !strcmp(t[0]->labels[1], "mus"));
      EXPECT_TRUE(!strcmp(t[8]->name, "MomentArm_a1"));
      for (int r = 0; r < ARM_ROWS; r++) {
        double a[3];
        arm_pose(r, a);
        const double L = arm_length(a[0], a[1], a[2]);
        EXPECT_NEAR(mbs_table_get(t[0], r, 1), L, 1e-12);
        // -dL/dq by central differences of the closed form; the coupled coordinates move
        // together (a3 = 0.5 a2: about a2 the cap turns half as fast, about a3 the elbow twice)
        const double h = 1e-6;
        const double d1 = (arm_length(a[0] + h, a[1], a[2]) - arm_length(a[0] - h, a[1], a[2])) /
                          (2 * h);
        const double d2 = (arm_length(a[0], a[1] + h, a[2] + 0.5 * h) -
                           arm_length(a[0], a[1] - h, a[2] - 0.5 * h)) / (2 * h);
        const double d3 = (arm_length(a[0], a[1] + 2 * h, a[2] + h) -
                           arm_length(a[0], a[1] - 2 * h, a[2] - h)) / (2 * h);
        EXPECT_NEAR(mbs_table_get(t[8], r, 1), -d1, 1e-8);
        EXPECT_NEAR(mbs_table_get(t[9], r, 1), -d2, 1e-8);
        EXPECT_NEAR(mbs_table_get(t[10], r, 1), -d3, 1e-8);
        warm = fmax(warm, fabs(mbs_table_get(t[9], r, 1) + d2));
        const double F = mbs_table_get(t[4], r, 1);
        EXPECT_NEAR(mbs_table_get(t[11], r, 1), mbs_table_get(t[9], r, 1) * F, 1e-12);
        EXPECT_NEAR(mbs_table_get(af, r, 1), F, 1e-12);  // Actuation: the tendon force
        const double l = mbs_table_get(t[1], r, 1);
        if (eq) {  // Thelen's equilibrium at rest, activation 0.5
          const double le = thelen_equilibrium(L, 0.5);
          EXPECT_NEAR(l, le, 1e-8);
          wfib = fmax(wfib, fabs(l - le));
          EXPECT_ABS(mbs_table_get(t[15], r, 1), 0, 1e-8);  // at rest
        } else {  // the states file's
          EXPECT_NEAR(l, 0.25, 1e-15);
        }
        EXPECT_NEAR(mbs_table_get(t[2], r, 1), l / T_LOPT, 1e-12);
        EXPECT_NEAR(mbs_table_get(t[3], r, 1), L - l, 1e-12);
        EXPECT_NEAR(F, T_FMAX * thelen_tendon((L - l - T_LST) / T_LST), 1e-9);
        EXPECT_ABS(mbs_table_get(t[7], r, 1), 0, 1e-15);
        if (eq) {  // at rest f_V = 1
          EXPECT_NEAR(mbs_table_get(t[5], r, 1), T_FMAX * 0.5 * thelen_active(l / T_LOPT),
                      1e-8);
          EXPECT_NEAR(mbs_table_get(t[6], r, 1), T_FMAX * thelen_passive(l / T_LOPT), 1e-8);
          EXPECT_NEAR(mbs_table_get(t[12], r, 1), F, 1e-6);
          EXPECT_ABS(mbs_table_get(t[14], r, 1), 0, 1e-12);  // no motion, no power
        }
        EXPECT_NEAR(mbs_table_get(t[13], r, 1), mbs_table_get(t[5], r, 1), 1e-12);
      }
      printf("muscle arm (%s): moment arms within %.2g m of -dL/dq along the coupled motion%s",
             eq ? "equilibrium" : "states' fiber lengths", warm, eq ? "" : "\n");
      if (eq) printf(", fiber lengths within %.2g m of Thelen's equilibrium\n", wfib);
    }
    for (int i = 0; i < NQ; i++) mbs_table_free(t[i]);
    mbs_table_free(af);
  }
}

//---------------------------------- bad input -------------------------------------------------

// a setup with `body` inside the tool element (after the model and results) and the tool's log
static int run_body(const char* body, char** log) {
  char* s = mbs_format_string("%s%s  </AnalyzeTool>\n</OpenSimDocument>\n", dp_setup_head, body);
  write_file("bad.xml", s);
  free(s);
  return run_setup("bad.xml", log);
}

static void test_bad_input(void) {
  write_dp_inputs();
  char* log = NULL;
  static const char states[] = "    <states_file>dp_states.sto</states_file>\n";
  static const char kin[] = "<AnalysisSet><objects><Kinematics name=\"k\"/></objects></AnalysisSet>\n";
  char* b;
  // an analysis mbstudy does not run
  b = mbs_format_string("%s    <AnalysisSet><objects>\n      <ForceReporter name=\"fr\"/>\n"
                        "    </objects></AnalysisSet>\n", states);
  EXPECT_EQ_INT(run_body(b, &log), 1);
  EXPECT_LOG(log, "bad.xml:8: <ForceReporter> 'fr' is not an analysis mbstudy runs",
             "JointReaction");
  free(b);
  free(log);
  // missing files
  b = mbs_format_string("    <states_file>nothere.sto</states_file>\n%s", kin);
  EXPECT_EQ_INT(run_body(b, &log), 1);
  EXPECT_LOG(log, "bad.xml:6: <states_file>", "nothere.sto: No such file");
  free(b);
  free(log);
  EXPECT_EQ_INT(run_body(kin, &log), 1);
  EXPECT_LOG(log, "has neither a <states_file> nor a <coordinates_file>", NULL);
  free(log);
  // a time range outside the data; one past its end
  b = mbs_format_string("    <initial_time>5</initial_time><final_time>6</final_time>\n%s%s",
                        states, kin);
  EXPECT_EQ_INT(run_body(b, &log), 1);
  EXPECT_LOG(log, "initial_time 5 to final_time 6 lies outside the states", "(0 to 0.4 s)");
  free(b);
  free(log);
  b = mbs_format_string("    <initial_time>0.3</initial_time><final_time>6</final_time>\n%s%s",
                        states, kin);
  EXPECT_EQ_INT(run_body(b, &log), 0);
  EXPECT_LOG(log, "warning:", "extends past the states");
  free(b);
  free(log);
  b = mbs_format_string("    <initial_time>1</initial_time><final_time>0.5</final_time>\n%s%s",
                        states, kin);
  EXPECT_EQ_INT(run_body(b, &log), 1);
  EXPECT_LOG(log, "bad.xml:6: final_time 0.5 is before initial_time 1", NULL);
  free(b);
  free(log);
  // JointReaction: an unknown joint is left out (a warning), an unknown frame, a bad body
  // keyword, lists of the wrong length and forces_file are errors
  struct {
    const char* props;
    int rc;
    const char* a;
    const char* b;
  } jr[] = {
      {"<joint_names>pin1 nojoint</joint_names>", 0, "warning:", "'nojoint' is not a joint"},
      {"<express_in_frame>nowhere</express_in_frame>", 1, "JointReaction 'j':",
       "express_in_frame: 'nowhere' is neither a frame"},
      {"<apply_on_bodies>sideways</apply_on_bodies>", 1, "JointReaction 'j':",
       "'sideways' is neither child nor parent"},
      {"<joint_names>pin1 pin2</joint_names><apply_on_bodies>child parent child"
       "</apply_on_bodies>",
       1, "JointReaction 'j':", "apply_on_bodies has 3 entries for 2 joints"},
      {"<forces_file>so_forces.sto</forces_file>", 1, "forces_file", "not supported"},
      {"<colour>red</colour>", 0, "<colour>: not used by mbstudy's AnalyzeTool", NULL},
  };
  for (size_t i = 0; i < sizeof(jr) / sizeof(jr[0]); i++) {
    b = mbs_format_string("%s    <AnalysisSet><objects>\n      <JointReaction name=\"j\">%s"
                          "</JointReaction>\n    </objects></AnalysisSet>\n", states,
                          jr[i].props);
    EXPECT_EQ_INT(run_body(b, &log), jr[i].rc);
    EXPECT_LOG(log, "bad.xml:8:", jr[i].a);
    if (jr[i].b) EXPECT_LOG(log, jr[i].a, jr[i].b);
    free(b);
    free(log);
  }
  // unknown bodies and coordinates, a bad step interval, a bad flag
  struct {
    const char* analysis;
    const char* a;
    const char* b;
  } an[] = {
      {"<BodyKinematics name=\"b\"><bodies>rod1 femur</bodies></BodyKinematics>",
       "BodyKinematics 'b':", "no body named 'femur' in model 'dp'"},
      {"<Kinematics name=\"k\"><coordinates>q1 knee</coordinates></Kinematics>",
       "Kinematics 'k':", "no coordinate named 'knee'"},
      {"<Kinematics name=\"k\"><step_interval>0</step_interval></Kinematics>",
       "Kinematics 'k':", "step_interval 0 must be a positive integer"},
      {"<Kinematics name=\"k\"><in_degrees>maybe</in_degrees></Kinematics>", "<in_degrees>",
       "'maybe' is not true or false"},
  };
  for (size_t i = 0; i < sizeof(an) / sizeof(an[0]); i++) {
    b = mbs_format_string("%s    <AnalysisSet><objects>\n      %s\n    </objects></AnalysisSet>\n",
                          states, an[i].analysis);
    EXPECT_EQ_INT(run_body(b, &log), 1);
    EXPECT_LOG(log, "bad.xml:8", an[i].a);
    EXPECT_LOG(log, an[i].a, an[i].b);
    free(b);
    free(log);
  }
  // a states file naming nothing of the model; a coordinates file too short
  write_file("other.sto", "x\nversion=1\nendheader\ntime\tfoo\n0\t1\n1\t2\n");
  b = mbs_format_string("    <states_file>other.sto</states_file>\n%s", kin);
  EXPECT_EQ_INT(run_body(b, &log), 1);
  EXPECT_LOG(log, "other.sto: no column names a state of model 'dp'", "'foo'");
  free(b);
  free(log);
  write_file("short.mot", "x\nversion=1\nendheader\ntime\tq1\n0\t1\n1\t2\n");
  b = mbs_format_string("    <coordinates_file>short.mot</coordinates_file>\n%s", kin);
  EXPECT_EQ_INT(run_body(b, &log), 1);
  EXPECT_LOG(log, "short.mot: 2 rows; OpenSim's quintic splines need at least 6", NULL);
  free(b);
  free(log);
  // an unknown setup element is named; an AnalysisSet with nothing on
  b = mbs_format_string("%s    <flux_capacitor>1.21</flux_capacitor>\n    <AnalysisSet><objects>"
                        "<Kinematics name=\"k\"><on>false</on></Kinematics></objects>"
                        "</AnalysisSet>\n", states);
  EXPECT_EQ_INT(run_body(b, &log), 1);
  EXPECT_LOG(log, "bad.xml:7: <flux_capacitor>: not used by mbstudy's AnalyzeTool", NULL);
  EXPECT_LOG(log, "has no analysis that is on", NULL);
  free(b);
  free(log);
}

//---------------------------------- OpenSim's models (shared data) ----------------------------

// the moment arms MuscleAnalysis wrote at `rows` against -dL/dq by central differences of the
// path lengths with the coordinates set from the states table (a coupled coordinate moved by its
// coupler's slope `slope` when `dep` is given)
static void check_moment_arms(const mbs_osim_model* m, const mbs_table* states,
                              const char* tool, int row_step, const char* dep, const char* indep,
                              double slope, double* worst) {
  const mbs_system* sys = mbs_osim_system(m);
  const int nc = mbs_osim_ncoordinate(m);
  mbs_state* st = mbs_state_create(sys);
  mbs_osim_default_state(m, st);
  const int kd = dep ? mbs_osim_find_coordinate(m, dep) : -1;
  const int ki = indep ? mbs_osim_find_coordinate(m, indep) : -1;
  for (int i = 0; i < nc; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    if (c->locked || i == kd) continue;
    char sfx[300];
    snprintf(sfx, sizeof(sfx), "MomentArm_%s", c->name);
    mbs_table* arms = result(tool, "ma", sfx);
    if (!arms) continue;
    for (int r = 0; r < arms->nrow; r += row_step) {
      const double t = mbs_table_get(arms, r, 0);
      const int sr = mbs_analyze_states_find(states, t);
      for (int k = 1; k < arms->ncol; k++) {
        const int f = mbs_force_find(sys, arms->labels[k]);
        const int p = mbs_force_path(sys, f);
        double L[2];
        const double h = c->motion == MBS_OSIM_ROTATIONAL ? 1e-6 : 1e-7;
        for (int sgn = 0; sgn < 2; sgn++) {
          mbs_analyze_states_set(m, st, states, sr);
          double* q = mbs_state_upd_q(st);
          const double d = sgn ? h : -h;
          q[c->qindex] += d;
          if (i == ki && kd >= 0) q[mbs_osim_coordinate_info(m, kd)->qindex] += slope * d;
          if (mbs_realize_position(sys, st) || mbs_calc_path_length(sys, st, p, &L[sgn], NULL))
            L[sgn] = NAN;
        }
        const double fd = -(L[1] - L[0]) / (2 * h), ma = mbs_table_get(arms, r, k);
        mbs_test_checks++;
        if (!(fabs(ma - fd) <= 1e-6 + 1e-5 * fabs(fd))) {
          mbs_test_failures++;
          fprintf(stderr, "FAIL: %s: moment arm of %s about %s at t = %g: %.9g, -dL/dq %.9g\n",
                  tool, arms->labels[k], c->name, t, ma, fd);
        }
        *worst = fmax(*worst, fabs(ma - fd));
      }
    }
    mbs_table_free(arms);
  }
  mbs_state_destroy(st);
}

static int test_shared(const char* data) {
  char* trial = mbs_format_string("%s/data/gait10dof18musc", data);
  char* leg = mbs_format_string("%s/models/leg6dof9musc.osim", data);
  char* probe = mbs_format_string("%s/IK/subject01_walk_IK.mot", trial);
  if (access(probe, R_OK) || access(leg, R_OK)) {
    printf("SKIPPED: %s or %s not found (give the shared folder with --data)\n", probe, leg);
    free(trial);
    free(leg);
    free(probe);
    return 77;
  }
  // gait10dof18musc walking: every analysis over OpenSim's IK result, filtered as its ID setup
  char* s = mbs_format_string(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\">\n"
      "  <AnalyzeTool name=\"walk\">\n"
      "    <model_file>%s/subject01.osim</model_file>\n"
      "    <results_directory>res</results_directory>\n"
      "    <initial_time>0.6</initial_time><final_time>1.2</final_time>\n"
      "    <solve_for_equilibrium_for_auxiliary_states>true"
      "</solve_for_equilibrium_for_auxiliary_states>\n"
      "    <AnalysisSet><objects>\n"
      "      <Kinematics name=\"kin\"/><BodyKinematics name=\"bk\"/><Actuation name=\"act\"/>\n"
      "      <MuscleAnalysis name=\"ma\"><step_interval>10</step_interval></MuscleAnalysis>\n"
      "      <JointReaction name=\"jr\"><express_in_frame>parent</express_in_frame>"
      "</JointReaction>\n"
      "    </objects></AnalysisSet>\n"
      "    <external_loads_file>%s/ExperimentalData/subject01_walk_grf.xml"
      "</external_loads_file>\n"
      "    <coordinates_file>%s</coordinates_file>\n"
      "    <lowpass_cutoff_frequency_for_coordinates>6</lowpass_cutoff_frequency_for_coordinates>\n"
      "  </AnalyzeTool>\n"
      "</OpenSimDocument>\n",
      trial, trial, probe);
  write_file("walk.xml", s);
  free(s);
  char* log = NULL;
  const double t0 = mbs_wall_seconds();
  EXPECT_EQ_INT(run_setup("walk.xml", &log), 0);
  const double t1 = mbs_wall_seconds();
  if (mbs_test_failures) fprintf(stderr, "%s\n", log);
  free(log);
  char* model = mbs_format_string("%s/subject01.osim", trial);
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read(model, &err);
  double worst = 0;
  if (m) {
    mbs_state* st = mbs_state_create(mbs_osim_system(m));
    mbs_osim_default_state(m, st);
    mbs_analyze_states_options o;
    mbs_analyze_states_options_default(&o);
    o.coordinates_file = probe;
    o.lowpass_hz = 6;
    mbs_table* states = NULL;
    EXPECT_OK(mbs_analyze_states_read(m, st, &o, &states, &err));
    if (states) check_moment_arms(m, states, "walk", 3, NULL, NULL, 0, &worst);
    mbs_table* jr = result("walk", "jr", "ReactionLoads");
    mbs_table* q = result("walk", "kin", "q");
    if (jr && q) {
      EXPECT_EQ_INT(jr->nrow, q->nrow);
      EXPECT_TRUE(!strcmp(jr->labels[1], "ground_pelvis_on_pelvis_in_ground_fx"));
      for (int r = 0; r < jr->nrow; r++)
        for (int c = 1; c < jr->ncol; c++) EXPECT_TRUE(isfinite(mbs_table_get(jr, r, c)));
    }
    printf("gait10dof18musc walking, 0.6 to 1.2 s: every analysis in %.2g s; moment arms of %d "
           "muscles within %.2g m of -dL/dq\n", t1 - t0, mbs_osim_nmuscle(m), worst);
    mbs_table_free(jr);
    mbs_table_free(q);
    mbs_table_free(states);
    mbs_state_destroy(st);
    mbs_osim_free(m);
  } else {
    fprintf(stderr, "FAIL: %s\n", err.message);
    mbs_test_failures++;
  }
  free(model);
  // leg6dof9musc: knee_angle_pat_r follows knee_angle_r (a coupler of slope 1)
  s = mbs_format_string("leg\nversion=1\nnRows=5\nnColumns=4\ninDegrees=no\nendheader\n"
                        "time\tknee_angle_r\tknee_angle_pat_r\thip_flexion_r\n"
                        "0\t-1.4\t-1.4\t0.5\n0.1\t-1\t-1\t0.3\n0.2\t-0.7\t-0.7\t0.2\n"
                        "0.3\t-0.35\t-0.35\t0\n0.4\t-0.1\t-0.1\t-0.2\n");
  write_file("leg_states.sto", s);
  free(s);
  s = mbs_format_string(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\">\n"
      "  <AnalyzeTool name=\"leg\">\n"
      "    <model_file>%s</model_file>\n"
      "    <results_directory>res</results_directory>\n"
      "    <initial_time>0</initial_time><final_time>0.4</final_time>\n"
      "    <AnalysisSet><objects><MuscleAnalysis name=\"ma\"/></objects></AnalysisSet>\n"
      "    <states_file>leg_states.sto</states_file>\n"
      "  </AnalyzeTool>\n"
      "</OpenSimDocument>\n",
      leg);
  write_file("leg.xml", s);
  free(s);
  EXPECT_EQ_INT(run_setup("leg.xml", &log), 0);
  if (mbs_test_failures) fprintf(stderr, "%s\n", log);
  free(log);
  m = mbs_osim_read(leg, &err);
  if (m) {
    mbs_state* st = mbs_state_create(mbs_osim_system(m));
    mbs_osim_default_state(m, st);
    mbs_osim_file_auxiliary_states(m, st);
    mbs_analyze_states_options o;
    mbs_analyze_states_options_default(&o);
    char* sp = path_of("leg_states.sto");
    o.states_file = sp;
    mbs_table* states = NULL;
    EXPECT_OK(mbs_analyze_states_read(m, st, &o, &states, &err));
    worst = 0;
    if (states)
      check_moment_arms(m, states, "leg", 1, "knee_angle_pat_r", "knee_angle_r", 1, &worst);
    printf("leg6dof9musc (patella coupled to the knee): moment arms within %.2g m of -dL/dq "
           "along the coupled motion\n", worst);
    free(sp);
    mbs_table_free(states);
    mbs_state_destroy(st);
    mbs_osim_free(m);
  } else {
    fprintf(stderr, "FAIL: %s\n", err.message);
    mbs_test_failures++;
  }
  free(trial);
  free(leg);
  free(probe);
  return 0;
}

int main(int argc, char** argv) {
  const char* data = NULL;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mbs_test_analyze_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  int rc = 0;
  if (data) {
    rc = test_shared(data);
  } else {
    test_pendulum();
    test_muscles();
    test_bad_input();
  }
  nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (rc == 77) return 77;
  return mbs_test_finish("test_tool_analyze");
}
