// OpenSim's InverseDynamicsTool (io/inverse_dynamics.c, jobs/tool_id.c) against independent
// truth.
//
//   test_inverse_dynamics                  small models written here, coordinates from analytic
//                                          motions (no filter): generalized forces against the
//                                          closed-form equations of motion (single and double
//                                          pendulum, a CustomJoint with a coupled translation, a
//                                          slider), an external force at a known point, forces
//                                          kept and excluded as OpenSim's forces_to_exclude,
//                                          labels and OpenSim's tree order, body forces at
//                                          joints, and bad input
//   test_inverse_dynamics --mbstudy EXE    the same models through `mbstudy run-tool` setups and
//                                          `mbstudy inverse-dynamics`, with their messages
//   test_inverse_dynamics --data DIR [--mbstudy EXE]
//                                          gait10dof18musc's walking trial with OpenSim's own
//                                          setup against OpenSim's own result: the times, and
//                                          every column within 2 N m (N) RMS (the tolerance of
//                                          OpenSim's gait ID test); per-column RMS printed.
//                                          Exits 77 (skipped) when DIR holds no such trial.
#define _GNU_SOURCE  // nftw, mkdtemp

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mbs/inverse_dynamics.h"
#include "mbs/table.h"
#include "mbs_test.h"

static const double G = 9.80665;
static char tmpdir[256];

//---------------------------------- files ------------------------------------------------------

static void tmp_path(char* out, size_t n, const char* name) {
  snprintf(out, n, "%s/%s", tmpdir, name);
}

static void write_text(const char* name, const char* text) {
  char p[512];
  tmp_path(p, sizeof(p), name);
  FILE* f = fopen(p, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", p);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

static int rm_entry(const char* p, const struct stat* s, int flag, struct FTW* w) {
  (void)s;
  (void)flag;
  (void)w;
  return remove(p);
}

static void remove_tmpdir(void) { nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mbs_test_id_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    exit(1);
  }
}

//---------------------------------- models -----------------------------------------------------

// a document around a body set, a joint set and the rest (constraints, forces)
static char* model_doc(const char* bodies, const char* joints, const char* rest) {
  return mbs_format_string(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\">\n"
      "  <Model name=\"idtest\">\n"
      "    <Ground name=\"ground\"/>\n"
      "    <gravity>0 -9.80665 0</gravity>\n"
      "    <BodySet name=\"bodyset\"><objects>\n%s    </objects></BodySet>\n"
      "    <JointSet name=\"jointset\"><objects>\n%s    </objects></JointSet>\n"
      "%s"
      "  </Model>\n"
      "</OpenSimDocument>\n",
      bodies, joints, rest);
}

static char* body_xml(const char* name, double m, double c, double izz) {
  return mbs_format_string(
      "      <Body name=\"%s\"><mass>%.17g</mass><mass_center>0 %.17g 0</mass_center>\n"
      "        <inertia>0.1 0.1 %.17g 0 0 0</inertia></Body>\n",
      name, m, -c, izz);
}

// a PinJoint from `parent` (offset by y0 along y) to `child` with coordinate `coord`
static char* pin_xml(const char* name, const char* parent, double y0, const char* child,
                     const char* coord) {
  return mbs_format_string(
      "      <PinJoint name=\"%s\">\n"
      "        <socket_parent_frame>%s_offset</socket_parent_frame>\n"
      "        <socket_child_frame>/bodyset/%s</socket_child_frame>\n"
      "        <coordinates><Coordinate name=\"%s\"><default_value>0</default_value>"
      "</Coordinate></coordinates>\n"
      "        <frames><PhysicalOffsetFrame name=\"%s_offset\">\n"
      "          <socket_parent>%s</socket_parent>\n"
      "          <translation>0 %.17g 0</translation><orientation>0 0 0</orientation>\n"
      "        </PhysicalOffsetFrame></frames>\n"
      "      </PinJoint>\n",
      name, name, child, coord, name, parent, y0);
}

// single pendulum: rod (m 2, center of mass 0.5 below the pin, Izz 0.05) on PinJoint "pin"
static const double P_M = 2, P_L = 0.5, P_I = 0.05;
static char* pendulum_model(const char* rest) {
  char* b = body_xml("rod", P_M, P_L, P_I);
  char* j = pin_xml("pin", "/ground", 0, "rod", "q");
  char* d = model_doc(b, j, rest);
  free(b);
  free(j);
  return d;
}

// double pendulum (link1: m 2, c 0.4, I 0.05, length 0.8; link2: m 1, c 0.3, I 0.03) and, last
// in the file, a second single pendulum "side" hung from Ground
static const double D_M1 = 2, D_C1 = 0.4, D_I1 = 0.05, D_L1 = 0.8, D_M2 = 1, D_C2 = 0.3,
                    D_I2 = 0.03;
static char* double_model(const char* rest) {
  char* b1 = body_xml("link1", D_M1, D_C1, D_I1);
  char* b2 = body_xml("link2", D_M2, D_C2, D_I2);
  char* b3 = body_xml("side", P_M, P_L, P_I);
  char* j1 = pin_xml("pin1", "/ground", 0, "link1", "q1");
  char* j2 = pin_xml("pin2", "/bodyset/link1", -D_L1, "link2", "q2");
  char* j3 = pin_xml("pin3", "/ground", 0, "side", "q3");
  char* bodies = mbs_format_string("%s%s%s", b1, b2, b3);
  char* joints = mbs_format_string("%s%s%s", j1, j2, j3);
  char* d = model_doc(bodies, joints, rest);
  free(b1);
  free(b2);
  free(b3);
  free(j1);
  free(j2);
  free(j3);
  free(bodies);
  free(joints);
  return d;
}

// a CustomJoint "cj": rotation about z by s q (LinearFunction s 0) and a translation along x by
// k q; body m 1.5, center of mass 0.6 below the origin, Izz 0.04
static const double C_M = 1.5, C_L = 0.6, C_I = 0.04;
static char* custom_model(double s, double k) {
  char* b = body_xml("shank", C_M, C_L, C_I);
  char* j = mbs_format_string(
      "      <CustomJoint name=\"cj\">\n"
      "        <socket_parent_frame>/ground</socket_parent_frame>\n"
      "        <socket_child_frame>/bodyset/shank</socket_child_frame>\n"
      "        <coordinates><Coordinate name=\"qc\"/></coordinates>\n"
      "        <SpatialTransform>\n"
      "          <TransformAxis name=\"rotation1\"><coordinates>qc</coordinates>"
      "<axis>0 0 1</axis>\n"
      "            <LinearFunction name=\"function\"><coefficients>%.17g 0</coefficients>"
      "</LinearFunction></TransformAxis>\n"
      "          <TransformAxis name=\"rotation2\"><coordinates></coordinates>"
      "<axis>0 1 0</axis>\n"
      "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
      "          <TransformAxis name=\"rotation3\"><coordinates></coordinates>"
      "<axis>1 0 0</axis>\n"
      "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
      "          <TransformAxis name=\"translation1\"><coordinates>qc</coordinates>"
      "<axis>1 0 0</axis>\n"
      "            <LinearFunction name=\"function\"><coefficients>%.17g 0</coefficients>"
      "</LinearFunction></TransformAxis>\n"
      "          <TransformAxis name=\"translation2\"><coordinates></coordinates>"
      "<axis>0 1 0</axis>\n"
      "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
      "          <TransformAxis name=\"translation3\"><coordinates></coordinates>"
      "<axis>0 0 1</axis>\n"
      "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
      "        </SpatialTransform>\n"
      "      </CustomJoint>\n",
      s, k);
  char* d = model_doc(b, j, "");
  free(b);
  free(j);
  return d;
}

// a block (m 3) on a vertical SliderJoint "slide" (x of its frames turned to Ground's y)
static const double S_M = 3;
static char* slider_model(void) {
  char* b = body_xml("block", S_M, 0, 0.01);
  const char* j =
      "      <SliderJoint name=\"slide\">\n"
      "        <socket_parent_frame>up</socket_parent_frame>\n"
      "        <socket_child_frame>blockframe</socket_child_frame>\n"
      "        <coordinates><Coordinate name=\"h\"/></coordinates>\n"
      "        <frames><PhysicalOffsetFrame name=\"up\"><socket_parent>/ground</socket_parent>\n"
      "          <translation>0 0 0</translation><orientation>0 0 1.5707963267948966"
      "</orientation></PhysicalOffsetFrame>\n"
      "          <PhysicalOffsetFrame name=\"blockframe\"><socket_parent>/bodyset/block"
      "</socket_parent>\n"
      "          <translation>0 0 0</translation><orientation>0 0 1.5707963267948966"
      "</orientation></PhysicalOffsetFrame></frames>\n"
      "      </SliderJoint>\n";
  char* d = model_doc(b, j, "");
  free(b);
  return d;
}

//---------------------------------- motions ----------------------------------------------------

// q(t) = a + b sin(w t + p): value, first and second derivative
typedef struct motion {
  double a, b, w, p;
} motion;

static void motion_eval(const motion* m, double t, double d[3]) {
  const double s = sin(m->w * t + m->p), c = cos(m->w * t + m->p);
  d[0] = m->a + m->b * s;
  d[1] = m->b * m->w * c;
  d[2] = -m->b * m->w * m->w * s;
}

// a .mot file of n motions sampled every dt on [0, T]; `scale` multiplies the values written
// (180/pi for degrees), `nan_row` >= 0 puts NaN in the first coordinate of that row
static void write_motion(const char* file, const char* const* names, const motion* mo, int n,
                         double T, double dt, const double* scale, int in_degrees, int nan_row) {
  char p[512];
  tmp_path(p, sizeof(p), file);
  FILE* f = fopen(p, "w");
  if (!f) exit(1);
  const int rows = (int)lround(T / dt) + 1;
  fprintf(f, "Coordinates\nversion=1\nnRows=%d\nnColumns=%d\ninDegrees=%s\nendheader\ntime",
          rows, n + 1, in_degrees ? "yes" : "no");
  for (int i = 0; i < n; i++) fprintf(f, "\t%s", names[i]);
  fprintf(f, "\n");
  for (int r = 0; r < rows; r++) {
    const double t = r * dt;
    fprintf(f, "%.17g", t);
    for (int i = 0; i < n; i++) {
      double d[3];
      motion_eval(&mo[i], t, d);
      if (r == nan_row && i == 0) fprintf(f, "\tNaN");
      else fprintf(f, "\t%.17g", d[0] * (scale ? scale[i] : 1));
    }
    fprintf(f, "\n");
  }
  fclose(f);
}

//---------------------------------- closed forms -----------------------------------------------

static double pendulum_tau(double m, double L, double I, const double d[3]) {
  return (I + m * L * L) * d[2] + m * G * L * sin(d[0]);
}

// double pendulum, relative angles: tau = M qdd + C + G
static void double_tau(const double a[3], const double b[3], double tau[2]) {
  const double q1 = a[0], q2 = b[0], u1 = a[1], u2 = b[1], a1 = a[2], a2 = b[2];
  const double M11 = D_I1 + D_I2 + D_M1 * D_C1 * D_C1 +
                     D_M2 * (D_L1 * D_L1 + D_C2 * D_C2 + 2 * D_L1 * D_C2 * cos(q2));
  const double M12 = D_I2 + D_M2 * (D_C2 * D_C2 + D_L1 * D_C2 * cos(q2));
  const double M22 = D_I2 + D_M2 * D_C2 * D_C2;
  const double h = D_M2 * D_L1 * D_C2 * sin(q2);
  tau[0] = M11 * a1 + M12 * a2 - h * (2 * u1 * u2 + u2 * u2) +
           G * (D_M1 * D_C1 + D_M2 * D_L1) * sin(q1) + D_M2 * G * D_C2 * sin(q1 + q2);
  tau[1] = M12 * a1 + M22 * a2 + h * u1 * u1 + D_M2 * G * D_C2 * sin(q1 + q2);
}

// CustomJoint: rotation s q, translation k q along x
static double custom_tau(double s, double k, const double d[3]) {
  const double phi = s * d[0];
  const double M = C_M * (k * k + 2 * k * C_L * s * cos(phi) + C_L * C_L * s * s) + C_I * s * s;
  return M * d[2] - C_M * k * C_L * s * s * sin(phi) * d[1] * d[1] +
         C_M * G * C_L * s * sin(phi);
}

//---------------------------------- helpers ----------------------------------------------------

static mbs_id* prepare(const char* model, const char* coords, const char* loads, double lowpass,
                       double t0, double t1, const char* const* ex, int nex, mbs_error* err) {
  char pm[512], pc[512], pl[512];
  tmp_path(pm, sizeof(pm), model);
  tmp_path(pc, sizeof(pc), coords);
  if (loads) tmp_path(pl, sizeof(pl), loads);
  mbs_id_options o;
  mbs_id_options_default(&o);
  o.model_file = pm;
  o.coordinates_file = pc;
  o.external_loads = loads ? pl : NULL;
  o.lowpass_hz = lowpass;
  o.time_range[0] = t0;
  o.time_range[1] = t1;
  o.exclude = ex;
  o.nexclude = nex;
  mbs_id* id = NULL;
  mbs_error_clear(err);
  mbs_id_create(&o, &id, err);
  return id;
}

static int has_warning(const mbs_id* id, const char* a, const char* b) {
  for (int i = 0; i < mbs_id_nwarning(id); i++) {
    const char* w = mbs_id_warning(id, i);
    if (strstr(w, a) && (!b || strstr(w, b))) return 1;
  }
  return 0;
}

// largest |tau(column) - expected(t)| over the frames; expected from a callback
typedef double (*expect_fn)(double t, int which, const void* user);

static double worst_error(const mbs_id* id, const char* label, expect_fn f, int which,
                          const void* user) {
  mbs_table *g = NULL, *b = NULL;
  mbs_error err;
  if (mbs_id_run(id, &g, &b, &err)) {
    printf("run: %s\n", err.message);
    return INFINITY;
  }
  const int c = mbs_table_column(g, label);
  double worst = c > 0 ? 0 : INFINITY;
  for (int r = 0; c > 0 && r < g->nrow; r++) {
    const double t = mbs_table_get(g, r, 0);
    worst = fmax(worst, fabs(mbs_table_get(g, r, c) - f(t, which, user)));
  }
  mbs_table_free(g);
  mbs_table_free(b);
  return worst;
}

//---------------------------------- the unit tests ---------------------------------------------

static const motion PEND = {0.3, 0.7, 2 * M_PI * 0.8, 0.4};

typedef struct pend_extra {
  double k, q0, c;                 // a spring generalized force acting (0: none)
  double F[2][3], P[2][3];         // external forces: F in Ground at P (ground / body point)
  int nforce;
} pend_extra;

static double pend_expect(double t, int which, const void* user) {
  (void)which;
  const pend_extra* x = user;
  double d[3];
  motion_eval(&PEND, t, d);
  double tau = pendulum_tau(P_M, P_L, P_I, d) + (x ? x->k * (d[0] - x->q0) + x->c * d[1] : 0);
  for (int i = 0; x && i < x->nforce; i++) {
    double p[3] = {x->P[i][0], x->P[i][1], x->P[i][2]};
    if (i == 1) {  // the point is fixed in the rod: rotate it with q
      const double c = cos(d[0]), s = sin(d[0]);
      p[0] = c * x->P[i][0] - s * x->P[i][1];
      p[1] = s * x->P[i][0] + c * x->P[i][1];
    }
    tau -= p[0] * x->F[i][1] - p[1] * x->F[i][0];  // the load's moment about the pin (z)
  }
  return tau;
}

static void test_pendulum(void) {
  char* doc = pendulum_model("");
  write_text("pend.osim", doc);
  free(doc);
  const char* names[1] = {"q"};
  write_motion("pend.mot", names, &PEND, 1, 2, 0.005, NULL, 0, -1);
  mbs_error err;
  mbs_id* id = prepare("pend.osim", "pend.mot", NULL, -1, 0.5, 1.5, NULL, 0, &err);
  EXPECT_TRUE(id != NULL);
  if (!id) {
    printf("%s\n", err.message);
    return;
  }
  EXPECT_EQ_INT(mbs_id_ncolumn(id), 1);
  EXPECT_TRUE(!strcmp(mbs_id_column_label(id, 0), "q_moment"));
  // the rows of the file from 0.5 to 1.5 s (no filter: the file's own times)
  EXPECT_EQ_INT(mbs_id_nframe(id), 201);
  EXPECT_NEAR(mbs_id_frame_time(id, 0), 0.5, 1e-12);
  EXPECT_NEAR(mbs_id_frame_time(id, 200), 1.5, 1e-12);
  const double e = worst_error(id, "q_moment", pend_expect, 0, NULL);
  printf("single pendulum: largest |tau - closed form| %.3g N m\n", e);
  EXPECT_TRUE(e < 1e-5);
  mbs_id_free(id);
  // Storage::findIndex: the frame at or before a start between rows
  id = prepare("pend.osim", "pend.mot", NULL, -1, 0.5026, 0.6, NULL, 0, &err);
  EXPECT_TRUE(id && mbs_id_nframe(id) == 21 && fabs(mbs_id_frame_time(id, 0) - 0.5) < 1e-12);
  mbs_id_free(id);
}

static void test_external_force(void) {
  // two loads on the rod: F1 at a point fixed in Ground, F2 at a point fixed in the rod
  pend_extra x;
  memset(&x, 0, sizeof(x));
  x.nforce = 2;
  const double F[2][3] = {{3, -1, 0}, {0.5, -2, 0.7}}, P[2][3] = {{0.2, -0.7, 0}, {0.1, -0.9, 0}};
  memcpy(x.F, F, sizeof(F));
  memcpy(x.P, P, sizeof(P));
  char* loads = mbs_format_string(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\"><ExternalLoads name=\"loads\"><objects>\n"
      "  <ExternalForce name=\"push\"><applied_to_body>rod</applied_to_body>\n"
      "    <force_expressed_in_body>ground</force_expressed_in_body>\n"
      "    <point_expressed_in_body>ground</point_expressed_in_body>\n"
      "    <force_identifier>push_v</force_identifier><point_identifier>push_p"
      "</point_identifier></ExternalForce>\n"
      "  <ExternalForce name=\"tip\"><applied_to_body>%s</applied_to_body>\n"
      "    <force_expressed_in_body>ground</force_expressed_in_body>\n"
      "    <point_expressed_in_body>rod</point_expressed_in_body>\n"
      "    <force_identifier>tip_v</force_identifier><point_identifier>tip_p"
      "</point_identifier></ExternalForce>\n"
      "</objects><datafile>loads.mot</datafile></ExternalLoads></OpenSimDocument>\n",
      "rod");
  write_text("loads.xml", loads);
  char* bad = strdup(loads);
  char* r = strstr(bad, "<applied_to_body>rod</applied_to_body>\n    <force_expressed_in_body>"
                        "ground</force_expressed_in_body>\n    <point_expressed_in_body>rod");
  memcpy(r + strlen("<applied_to_body>"), "arm", 3);
  write_text("badloads.xml", bad);
  free(loads);
  free(bad);
  char* mot = mbs_format_string(
      "loads\nversion=1\nnRows=3\nnColumns=13\ninDegrees=no\nendheader\n"
      "time\tpush_vx\tpush_vy\tpush_vz\tpush_px\tpush_py\tpush_pz\ttip_vx\ttip_vy\ttip_vz\t"
      "tip_px\ttip_py\ttip_pz\n");
  char* body = NULL;
  for (int row = 0; row < 3; row++) {
    char* line = mbs_format_string("%g\t%g\t%g\t%g\t%g\t%g\t%g\t%g\t%g\t%g\t%g\t%g\t%g\n",
                                   row * 1.0, F[0][0], F[0][1], F[0][2], P[0][0], P[0][1],
                                   P[0][2], F[1][0], F[1][1], F[1][2], P[1][0], P[1][1], P[1][2]);
    char* nb = mbs_format_string("%s%s", body ? body : "", line);
    free(body);
    free(line);
    body = nb;
  }
  char* all = mbs_format_string("%s%s", mot, body);
  write_text("loads.mot", all);
  free(mot);
  free(body);
  free(all);
  mbs_error err;
  mbs_id* id = prepare("pend.osim", "pend.mot", "loads.xml", -1, 0.5, 1.5, NULL, 0, &err);
  EXPECT_TRUE(id != NULL);
  if (id) {
    const double e = worst_error(id, "q_moment", pend_expect, 0, &x);
    printf("pendulum with two external forces: largest |tau - closed form| %.3g N m\n", e);
    EXPECT_TRUE(e < 1e-5);
  } else {
    printf("%s\n", err.message);
  }
  mbs_id_free(id);
  // a load on a body the model does not have
  id = prepare("pend.osim", "pend.mot", "badloads.xml", -1, 0.5, 1.5, NULL, 0, &err);
  printf("external loads naming a missing body: %s\n", err.message);
  EXPECT_TRUE(!id && strstr(err.message, "badloads.xml:") &&
              strstr(err.message, "ExternalForce 'tip'") && strstr(err.message, "'arm'"));
  mbs_id_free(id);
}

static void test_forces_to_exclude(void) {
  const char* spring =
      "    <ForceSet name=\"forceset\"><objects>\n"
      "      <SpringGeneralizedForce name=\"spring\"><coordinate>q</coordinate>\n"
      "        <stiffness>4</stiffness><rest_length>0.1</rest_length><viscosity>0.3</viscosity>\n"
      "      </SpringGeneralizedForce>\n"
      "      <CoordinateActuator name=\"motor\"><coordinate>q</coordinate>\n"
      "        <optimal_force>100</optimal_force></CoordinateActuator>\n"
      "    </objects>%s</ForceSet>\n";
  char* plain = mbs_format_string(spring, "");
  char* grouped = mbs_format_string(spring, "<groups><ObjectGroup name=\"passive\"><members>"
                                            "spring</members></ObjectGroup></groups>");
  char* d1 = pendulum_model(plain);
  char* d2 = pendulum_model(grouped);
  write_text("spring.osim", d1);
  write_text("springgroups.osim", d2);
  free(plain);
  free(grouped);
  free(d1);
  free(d2);
  pend_extra acts;
  memset(&acts, 0, sizeof(acts));
  acts.k = 4;
  acts.q0 = 0.1;
  acts.c = 0.3;
  struct {
    const char* model;
    const char* ex[2];
    int nex;
    int spring_acts;       // expected
    int nexcluded;
    const char* warning;   // expected warning text, or NULL
  } cases[] = {
      {"spring.osim", {NULL}, 0, 1, 0, NULL},
      {"spring.osim", {"Muscles"}, 1, 1, 0, NULL},
      {"spring.osim", {"spring"}, 1, 0, 1, NULL},
      {"spring.osim", {"actuators"}, 1, 1, 1, NULL},
      {"spring.osim", {"All"}, 1, 0, 2, NULL},
      {"spring.osim", {"springs", "spring"}, 2, 0, 1, "no force or group named 'springs'"},
      {"springgroups.osim", {"passive"}, 1, 0, 1, NULL},
      {"springgroups.osim", {"spring"}, 1, 1, 0, "'spring' is a force, not a group"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    mbs_error err;
    mbs_id* id = prepare(cases[i].model, "pend.mot", NULL, -1, 0.5, 1.5, cases[i].ex,
                         cases[i].nex, &err);
    EXPECT_TRUE(id != NULL);
    if (!id) {
      printf("%s\n", err.message);
      continue;
    }
    const double e = worst_error(id, "q_moment", pend_expect, 0,
                                 cases[i].spring_acts ? &acts : NULL);
    printf("forces_to_exclude %s%s%s (%s): %d excluded, spring %s, largest error %.3g N m\n",
           cases[i].nex ? cases[i].ex[0] : "(none)", cases[i].nex > 1 ? " " : "",
           cases[i].nex > 1 ? cases[i].ex[1] : "", cases[i].model, mbs_id_nexcluded(id),
           cases[i].spring_acts ? "acts" : "left out", e);
    EXPECT_TRUE(e < 1e-5);
    EXPECT_EQ_INT(mbs_id_nexcluded(id), cases[i].nexcluded);
    if (cases[i].warning) {
      EXPECT_TRUE(has_warning(id, cases[i].warning, "forces_to_exclude"));
    } else {
      EXPECT_TRUE(!has_warning(id, "forces_to_exclude", NULL));
    }
    if (!strcmp(cases[i].ex[0] ? cases[i].ex[0] : "", "actuators"))
      EXPECT_TRUE(!strcmp(mbs_id_excluded(id, 0), "motor"));
    mbs_id_free(id);
  }
}

static const motion DM[3] = {{0.2, 0.8, 2 * M_PI * 0.6, 0.1},
                             {-0.4, 0.9, 2 * M_PI * 0.9, 1.2},
                             {0.1, 0.5, 2 * M_PI * 0.5, -0.3}};

static double double_expect(double t, int which, const void* user) {
  (void)user;
  double a[3], b[3], tau[2];
  motion_eval(&DM[0], t, a);
  motion_eval(&DM[1], t, b);
  double_tau(a, b, tau);
  if (which < 2) return tau[which];
  motion_eval(&DM[2], t, a);
  return pendulum_tau(P_M, P_L, P_I, a);
}

static void test_double_pendulum(void) {
  // with a coupler: ID ignores constraints; each coordinate reports its own force
  const char* coupler =
      "    <ConstraintSet name=\"constraintset\"><objects>\n"
      "      <CoordinateCouplerConstraint name=\"couple\"><isEnforced>true</isEnforced>\n"
      "        <coupled_coordinates_function><LinearFunction><coefficients>0.5 0</coefficients>"
      "</LinearFunction></coupled_coordinates_function>\n"
      "        <independent_coordinate_names>q1</independent_coordinate_names>\n"
      "        <dependent_coordinate_name>q3</dependent_coordinate_name>\n"
      "      </CoordinateCouplerConstraint>\n"
      "    </objects></ConstraintSet>\n";
  for (int k = 0; k < 2; k++) {
    char* doc = double_model(k ? coupler : "");
    write_text("double.osim", doc);
    free(doc);
    // in degrees, columns in another order than the model's
    const char* names[3] = {"q3", "q2", "q1"};
    const motion mo[3] = {DM[2], DM[1], DM[0]};
    const double deg[3] = {180 / M_PI, 180 / M_PI, 180 / M_PI};
    write_motion("double.mot", names, mo, 3, 3, 0.004, deg, 1, -1);
    mbs_error err;
    mbs_id* id = prepare("double.osim", "double.mot", NULL, -1, 0.6, 2.4, NULL, 0, &err);
    EXPECT_TRUE(id != NULL);
    if (!id) {
      printf("%s\n", err.message);
      continue;
    }
    // OpenSim's tree order: level 1 (pin1, pin3), then level 2 (pin2)
    EXPECT_EQ_INT(mbs_id_ncolumn(id), 3);
    EXPECT_TRUE(!strcmp(mbs_id_column_label(id, 0), "q1_moment") &&
                !strcmp(mbs_id_column_label(id, 1), "q3_moment") &&
                !strcmp(mbs_id_column_label(id, 2), "q2_moment"));
    const double e1 = worst_error(id, "q1_moment", double_expect, 0, NULL);
    const double e2 = worst_error(id, "q2_moment", double_expect, 1, NULL);
    const double e3 = worst_error(id, "q3_moment", double_expect, 2, NULL);
    printf("double pendulum%s (and a pendulum beside it): largest errors %.3g %.3g %.3g N m\n",
           k ? " with a coupler constraint" : "", e1, e2, e3);
    EXPECT_TRUE(e1 < 1e-5 && e2 < 1e-5 && e3 < 1e-5);
    mbs_id_free(id);
  }
}

typedef struct custom_case {
  double s, k;
  double scale;  // the file's values are q * scale
} custom_case;

static double custom_expect(double t, int which, const void* user) {
  (void)which;
  const custom_case* c = user;
  double d[3];
  motion_eval(&PEND, t, d);
  if (c->scale != 1) {  // a coupled coordinate: OpenSim reads the degrees file's numbers as is
    for (int i = 0; i < 3; i++) d[i] *= c->scale;
  }
  return custom_tau(c->s, c->k, d);
}

static double slider_expect(double t, int which, const void* user) {
  (void)which;
  (void)user;
  double d[3];
  motion_eval(&PEND, t, d);
  return S_M * (d[2] + G);
}

static void test_custom_and_slider(void) {
  // rotation by q itself or by -q (rotational: _moment, degrees converted), then by 2 q
  // (coupled: _force, and OpenSim leaves its numbers as they are in a degrees file)
  const custom_case cases[3] = {{1, 0.25, 1}, {-1, 0.25, 1}, {2, 0.25, 180 / M_PI}};
  for (int i = 0; i < 3; i++) {
    char* doc = custom_model(cases[i].s, cases[i].k);
    write_text("custom.osim", doc);
    free(doc);
    const char* names[1] = {"qc"};
    const double deg = 180 / M_PI;
    write_motion("custom.mot", names, &PEND, 1, 2, 0.005, &deg, 1, -1);
    mbs_error err;
    mbs_id* id = prepare("custom.osim", "custom.mot", NULL, -1, 0.5, 1.5, NULL, 0, &err);
    EXPECT_TRUE(id != NULL);
    if (!id) {
      printf("%s\n", err.message);
      continue;
    }
    const char* label = i < 2 ? "qc_moment" : "qc_force";
    EXPECT_TRUE(!strcmp(mbs_id_column_label(id, 0), label));
    const double e = worst_error(id, label, custom_expect, 0, &cases[i]);
    printf("CustomJoint (rotation %g q, translation %g q): %s, largest error %.3g\n",
           cases[i].s, cases[i].k, label, e);
    EXPECT_TRUE(e < 1e-5 * (i == 2 ? 1e4 : 1));
    mbs_id_free(id);
  }
  char* doc = slider_model();
  write_text("slider.osim", doc);
  free(doc);
  const char* names[1] = {"h"};
  write_motion("slider.mot", names, &PEND, 1, 2, 0.005, NULL, 1, -1);  // meters stay meters
  mbs_error err;
  mbs_id* id = prepare("slider.osim", "slider.mot", NULL, -1, 0.5, 1.5, NULL, 0, &err);
  EXPECT_TRUE(id != NULL);
  if (id) {
    EXPECT_TRUE(!strcmp(mbs_id_column_label(id, 0), "h_force"));
    const double e = worst_error(id, "h_force", slider_expect, 0, NULL);
    printf("slider: h_force, largest error %.3g N\n", e);
    EXPECT_TRUE(e < 1e-5);
  } else {
    printf("%s\n", err.message);
  }
  mbs_id_free(id);
}

// body forces at joints: the pin's torque about its axis; the CustomJoint's generalized force
// carried by the torque (|k| < 1 makes it the more effective) with no force
static void test_body_forces(void) {
  char pm[512], pc[512];
  for (int k = 0; k < 2; k++) {
    tmp_path(pm, sizeof(pm), k ? "custom.osim" : "pend.osim");
    tmp_path(pc, sizeof(pc), k ? "custom.mot" : "pend.mot");
    if (k) {
      char* doc = custom_model(1, 0.25);
      write_text("custom.osim", doc);
      free(doc);
    }
    mbs_id_options o;
    mbs_id_options_default(&o);
    o.model_file = pm;
    o.coordinates_file = pc;
    o.time_range[0] = 0.5;
    o.time_range[1] = 1.5;
    const char* joints[2] = {k ? "cj" : "pin", "nojoint"};
    o.report_joints = joints;
    o.nreport_joints = 2;
    mbs_id* id = NULL;
    mbs_error err;
    EXPECT_OK(mbs_id_create(&o, &id, &err));
    if (!id) {
      printf("%s\n", err.message);
      continue;
    }
    EXPECT_TRUE(has_warning(id, "'nojoint'", "joints_to_report_body_forces"));
    EXPECT_EQ_INT(mbs_id_nbody_force_column(id), 6);
    EXPECT_TRUE(!strcmp(mbs_id_body_force_label(id, 0), k ? "cj_shank_FX" : "pin_rod_FX") &&
                !strcmp(mbs_id_body_force_label(id, 5), k ? "cj_shank_MZ" : "pin_rod_MZ"));
    mbs_table *g = NULL, *b = NULL;
    EXPECT_OK(mbs_id_run(id, &g, &b, &err));
    double worst = 0;
    for (int r = 0; g && b && r < g->nrow; r++) {
      const double tau = mbs_table_get(g, r, 1);
      for (int c = 1; c <= 5; c++) worst = fmax(worst, fabs(mbs_table_get(b, r, c)));
      worst = fmax(worst, fabs(mbs_table_get(b, r, 6) - tau));
    }
    printf("body forces at %s: largest deviation from (0 0 0, 0 0 tau) %.3g\n",
           k ? "the CustomJoint" : "the pin", worst);
    EXPECT_TRUE(g && b && worst < 1e-9);
    mbs_table_free(g);
    mbs_table_free(b);
    mbs_id_free(id);
  }
}

static void test_bad_input(void) {
  mbs_error err;
  const char* names[1] = {"q"};
  write_motion("nan.mot", names, &PEND, 1, 1, 0.01, NULL, 0, 7);
  mbs_id* id = prepare("pend.osim", "nan.mot", NULL, -1, 0, 1, NULL, 0, &err);
  printf("NaN row: %s\n", err.message);
  EXPECT_TRUE(!id && strstr(err.message, "nan.mot") && strstr(err.message, "data row 8") &&
              strstr(err.message, "'q'"));
  mbs_id_free(id);
  id = prepare("pend.osim", "pend.mot", NULL, -1, 5, 6, NULL, 0, &err);
  printf("time range outside the data: %s\n", err.message);
  EXPECT_TRUE(!id && strstr(err.message, "time_range 5 6") && strstr(err.message, "pend.mot"));
  mbs_id_free(id);
  id = prepare("pend.osim", "pend.mot", NULL, -1, 1.5, 9, NULL, 0, &err);
  EXPECT_TRUE(id && has_warning(id, "extends past", "pend.mot") && mbs_id_nframe(id) == 101);
  mbs_id_free(id);
  id = prepare("pend.osim", "missing.mot", NULL, -1, 0, 1, NULL, 0, &err);
  printf("missing coordinates file: %s\n", err.message);
  EXPECT_TRUE(!id && strstr(err.message, "missing.mot"));
  mbs_id_free(id);
  id = prepare("nomodel.osim", "pend.mot", NULL, -1, 0, 1, NULL, 0, &err);
  printf("missing model file: %s\n", err.message);
  EXPECT_TRUE(!id && strstr(err.message, "nomodel.osim"));
  mbs_id_free(id);
  const char* other[1] = {"elbow"};
  write_motion("other.mot", other, &PEND, 1, 1, 0.01, NULL, 0, -1);
  id = prepare("pend.osim", "other.mot", NULL, -1, 0, 1, NULL, 0, &err);
  printf("no coordinate in the file: %s\n", err.message);
  EXPECT_TRUE(!id && strstr(err.message, "other.mot") && strstr(err.message, "'elbow'"));
  mbs_id_free(id);
  // filtering: a cutoff of 0 Hz; one above half the sampling rate is lowered as OpenSim does
  id = prepare("pend.osim", "pend.mot", NULL, 0, 0, 1, NULL, 0, &err);
  EXPECT_TRUE(!id && strstr(err.message, "lowpass_cutoff_frequency_for_coordinates 0"));
  mbs_id_free(id);
  id = prepare("pend.osim", "pend.mot", NULL, 150, 0.5, 1.5, NULL, 0, &err);
  EXPECT_TRUE(id && has_warning(id, "is used, as OpenSim does", "200 Hz"));
  mbs_id_free(id);
  id = prepare("pend.osim", "pend.mot", NULL, 20, 0.5, 1.5, NULL, 0, &err);
  if (id) {
    // pad + filter: the rows of the padded table in the range; the motion (0.8 Hz) passes a
    // 20 Hz filter all but unchanged
    EXPECT_EQ_INT(mbs_id_nframe(id), 201);
    const double e = worst_error(id, "q_moment", pend_expect, 0, NULL);
    printf("filtered at 20 Hz: largest error %.3g N m\n", e);
    EXPECT_TRUE(e < 1e-3);
  }
  mbs_id_free(id);
}

//---------------------------------- through the command line -----------------------------------

static int run_cmd(const char* cmd, char* out, size_t n) {
  char log[512], full[4096];
  tmp_path(log, sizeof(log), "cmd.log");
  snprintf(full, sizeof(full), "%s > %s 2>&1", cmd, log);
  const int rc = system(full);
  out[0] = 0;
  FILE* f = fopen(log, "r");
  if (f) {
    const size_t k = fread(out, 1, n - 1, f);
    out[k] = 0;
    fclose(f);
  }
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void write_setup(const char* name, const char* coords, const char* loads,
                        const char* extra) {
  char* s = mbs_format_string(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\">\n"
      "  <InverseDynamicsTool name=\"pend\">\n"
      "    <model_file>pend.osim</model_file>\n"
      "    <results_directory>out</results_directory>\n"
      "    <time_range> 0.5 1.5</time_range>\n"
      "    <forces_to_exclude> Muscles</forces_to_exclude>\n"
      "    <external_loads_file>%s</external_loads_file>\n"
      "    <coordinates_file>%s</coordinates_file>\n"
      "    <lowpass_cutoff_frequency_for_coordinates>-1"
      "</lowpass_cutoff_frequency_for_coordinates>\n"
      "    <output_gen_force_file>pend_id.sto</output_gen_force_file>\n"
      "    <joints_to_report_body_forces>pin</joints_to_report_body_forces>\n"
      "    <output_body_forces_file>pend_bf.sto</output_body_forces_file>\n%s"
      "  </InverseDynamicsTool>\n"
      "</OpenSimDocument>\n",
      loads, coords, extra);
  write_text(name, s);
  free(s);
}

static double file_error(const char* path, expect_fn f, const void* user) {
  mbs_table* t = NULL;
  mbs_error err;
  if (mbs_table_read_sto(path, &t, &err)) {
    printf("%s\n", err.message);
    return INFINITY;
  }
  const int c = mbs_table_column(t, "q_moment");
  double worst = c > 0 && t->nrow == 201 ? 0 : INFINITY;
  for (int r = 0; c > 0 && r < t->nrow; r++)
    worst = fmax(worst, fabs(mbs_table_get(t, r, c) - f(mbs_table_get(t, r, 0), 0, user)));
  mbs_table_free(t);
  return worst;
}

static void test_cli(const char* exe) {
  // the pendulum with its loads through a setup file, as OpenSim's tool runs it
  char cmd[2048], out[8192], p[512];
  pend_extra x;
  memset(&x, 0, sizeof(x));
  x.nforce = 2;
  const double F[2][3] = {{3, -1, 0}, {0.5, -2, 0.7}}, P[2][3] = {{0.2, -0.7, 0}, {0.1, -0.9, 0}};
  memcpy(x.F, F, sizeof(F));
  memcpy(x.P, P, sizeof(P));
  write_setup("setup.xml", "pend.mot", "loads.xml", "    <unknown_property>1</unknown_property>\n");
  snprintf(cmd, sizeof(cmd), "%s run-tool %s/setup.xml", exe, tmpdir);
  int rc = run_cmd(cmd, out, sizeof(out));
  printf("run-tool:\n%s", out);
  EXPECT_EQ_INT(rc, 0);
  EXPECT_TRUE(strstr(out, "unknown_property") != NULL);
  tmp_path(p, sizeof(p), "out/pend_id.sto");
  double e = file_error(p, pend_expect, &x);
  printf("run-tool result against the closed form: %.3g N m\n", e);
  EXPECT_TRUE(e < 1e-5);
  tmp_path(p, sizeof(p), "out/pend_bf.sto");
  mbs_table* bt = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_read_sto(p, &bt, &err));
  EXPECT_TRUE(bt && bt->ncol == 7 && !strcmp(bt->labels[6], "pin_rod_MZ") &&
              !strcmp(bt->name, "Inverse Dynamics Body Forces at Specified Joints"));
  mbs_table_free(bt);
  // the same through flags
  snprintf(cmd, sizeof(cmd), "%s inverse-dynamics --model %s/pend.osim --coordinates "
           "%s/pend.mot --external-loads %s/loads.xml --time-range 0.5 1.5 --exclude Muscles "
           "--out %s/flags/id.sto", exe, tmpdir, tmpdir, tmpdir, tmpdir);
  rc = run_cmd(cmd, out, sizeof(out));
  printf("inverse-dynamics:\n%s", out);
  EXPECT_EQ_INT(rc, 0);
  tmp_path(p, sizeof(p), "flags/id.sto");
  e = file_error(p, pend_expect, &x);
  EXPECT_TRUE(e < 1e-5);
  // a setup naming a missing file, a missing body, a bad time range
  write_setup("missing.xml", "gone.mot", "loads.xml", "");
  snprintf(cmd, sizeof(cmd), "%s run-tool %s/missing.xml", exe, tmpdir);
  rc = run_cmd(cmd, out, sizeof(out));
  printf("missing coordinates file:\n%s", out);
  EXPECT_TRUE(rc == 1 && strstr(out, "missing.xml:9: <coordinates_file>") &&
              strstr(out, "gone.mot: No such file"));
  write_setup("badbody.xml", "pend.mot", "badloads.xml", "");
  snprintf(cmd, sizeof(cmd), "%s run-tool %s/badbody.xml", exe, tmpdir);
  rc = run_cmd(cmd, out, sizeof(out));
  printf("external loads naming a missing body:\n%s", out);
  EXPECT_TRUE(rc == 1 && strstr(out, "badloads.xml:") && strstr(out, "'arm' is not a body"));
  char* s = NULL;
  write_setup("badrange.xml", "pend.mot", "loads.xml", "");
  tmp_path(p, sizeof(p), "badrange.xml");
  FILE* f = fopen(p, "r");
  if (f) {
    char buf[4096];
    const size_t k = fread(buf, 1, sizeof(buf) - 1, f);
    buf[k] = 0;
    fclose(f);
    char* r = strstr(buf, " 0.5 1.5");
    memcpy(r, " 7.5 9.5", 8);
    s = strdup(buf);
  }
  if (s) write_text("badrange.xml", s);
  free(s);
  snprintf(cmd, sizeof(cmd), "%s run-tool %s/badrange.xml", exe, tmpdir);
  rc = run_cmd(cmd, out, sizeof(out));
  printf("time range outside the data:\n%s", out);
  EXPECT_TRUE(rc == 1 && strstr(out, "time_range 7.5 9.5 lies outside"));
}

//---------------------------------- OpenSim's gait trial ---------------------------------------

// every column of `ours` against OpenSim's `ref` by label: times, RMS per column
static void compare_with_opensim(const mbs_table* ours, const mbs_table* ref, const char* what) {
  EXPECT_EQ_INT(ours->nrow, ref->nrow);
  EXPECT_EQ_INT(ours->ncol, ref->ncol);
  EXPECT_TRUE(!strcmp(ours->name, ref->name));
  const int n = ours->nrow < ref->nrow ? ours->nrow : ref->nrow;
  double dt = 0;
  for (int r = 0; r < n; r++)
    dt = fmax(dt, fabs(mbs_table_get(ours, r, 0) - mbs_table_get(ref, r, 0)));
  printf("%s: %d frames, times within %.2g s of OpenSim's (%.8f .. %.8f)\n", what, n, dt,
         mbs_table_get(ours, 0, 0), mbs_table_get(ours, n - 1, 0));
  EXPECT_TRUE(dt < 1e-8);  // OpenSim prints 8 decimals
  printf("  %-26s %12s %12s %12s\n", "column", "RMS", "max |diff|", "OpenSim RMS");
  for (int c = 1; c < ref->ncol; c++) {
    const int k = mbs_table_column(ours, ref->labels[c]);
    EXPECT_TRUE(k > 0);
    if (k <= 0) {
      printf("  %-26s missing\n", ref->labels[c]);
      continue;
    }
    double s = 0, m = 0, s0 = 0;
    for (int r = 0; r < n; r++) {
      const double d = mbs_table_get(ours, r, k) - mbs_table_get(ref, r, c);
      s += d * d;
      s0 += mbs_table_get(ref, r, c) * mbs_table_get(ref, r, c);
      m = fmax(m, fabs(d));
    }
    const double rms = sqrt(s / n);
    printf("  %-26s %12.3g %12.3g %12.4g %s\n", ref->labels[c], rms, m, sqrt(s0 / n),
           strstr(ref->labels[c], "_force") ? "N" : "N m");
    EXPECT_TRUE(rms <= 2.0);  // OpenSim's own gait ID test: 2 N m
  }
}

static int test_gait(const char* data, const char* exe) {
  char dir[1024], model[1200], ik[1200], grf[1200], ref_path[1200], setup[1200];
  snprintf(dir, sizeof(dir), "%s/data/gait10dof18musc", data);
  snprintf(setup, sizeof(setup), "%s/ID/walk_Setup_ID.xml", dir);
  if (access(setup, R_OK)) {
    printf("SKIPPED: %s not found (set MBS_SHARED_DIR to the shared data folder)\n", setup);
    return 77;
  }
  snprintf(model, sizeof(model), "%s/subject01.osim", dir);
  snprintf(ik, sizeof(ik), "%s/IK/subject01_walk_IK.mot", dir);
  snprintf(grf, sizeof(grf), "%s/ExperimentalData/subject01_walk_grf.xml", dir);
  snprintf(ref_path, sizeof(ref_path), "%s/ID/Results/subject01_walk_ID.sto", dir);
  mbs_table* ref = NULL;
  mbs_error err;
  EXPECT_OK(mbs_table_read_sto(ref_path, &ref, &err));
  if (!ref) return mbs_test_finish("test_inverse_dynamics (gait10dof18musc)");
  // in process: the library with the setup's settings
  mbs_id_options o;
  mbs_id_options_default(&o);
  const char* ex[1] = {"Muscles"};
  o.model_file = model;
  o.coordinates_file = ik;
  o.external_loads = grf;
  o.lowpass_hz = 6;
  o.time_range[0] = 0;
  o.time_range[1] = 2.5;
  o.exclude = ex;
  o.nexclude = 1;
  mbs_id* id = NULL;
  EXPECT_OK(mbs_id_create(&o, &id, &err));
  if (id) {
    EXPECT_EQ_INT(mbs_id_nexcluded(id), 18);
    mbs_table *g = NULL, *b = NULL;
    EXPECT_OK(mbs_id_run(id, &g, &b, &err));
    if (g) compare_with_opensim(g, ref, "mbs_id_run (library)");
    // OpenSim 4's column order: breadth first over the tree
    EXPECT_TRUE(g && !strcmp(g->labels[4], "hip_flexion_r_moment") &&
                !strcmp(g->labels[5], "hip_flexion_l_moment") &&
                !strcmp(g->labels[6], "lumbar_extension_moment"));
    mbs_table_free(g);
    mbs_table_free(b);
  } else {
    printf("%s\n", err.message);
  }
  mbs_id_free(id);
  // through `mbstudy run-tool` with OpenSim's setup file
  if (exe) {
    char cmd[4096], out[8192], p[512];
    snprintf(cmd, sizeof(cmd), "%s run-tool %s --results %s/gait", exe, setup, tmpdir);
    const int rc = run_cmd(cmd, out, sizeof(out));
    printf("%s\n%s", cmd, out);
    EXPECT_EQ_INT(rc, 0);
    tmp_path(p, sizeof(p), "gait/subject01_walk_ID.sto");
    mbs_table* t = NULL;
    EXPECT_OK(mbs_table_read_sto(p, &t, &err));
    if (t) compare_with_opensim(t, ref, "mbstudy run-tool ID/walk_Setup_ID.xml");
    mbs_table_free(t);
  }
  mbs_table_free(ref);
  return mbs_test_finish("test_inverse_dynamics (gait10dof18musc)");
}

int main(int argc, char** argv) {
  const char *data = NULL, *exe = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--data")) data = argv[i + 1];
    else if (!strcmp(argv[i], "--mbstudy")) exe = argv[i + 1];
  }
  make_tmpdir();
  int rc;
  if (data) {
    rc = test_gait(data, exe);
  } else {
    test_pendulum();
    test_external_force();
    test_forces_to_exclude();
    test_double_pendulum();
    test_custom_and_slider();
    test_body_forces();
    test_bad_input();
    if (exe) test_cli(exe);
    rc = mbs_test_finish(exe ? "test_inverse_dynamics (command line)" : "test_inverse_dynamics");
  }
  remove_tmpdir();
  return rc;
}
