// OpenSim's ScaleTool through `mbstudy run-tool` (jobs/tool_scale.c, io/scale.c):
//  - a small model written here (three bodies in a chain, offset frames, a CustomJoint with a
//    constant translation, markers, a muscle and a path spring between bodies, wrap objects):
//    a static trial is made by hand from the model's geometry scaled by known per-body factors
//    (the bodies' origins and markers at the default pose, every offset scaled by its body's
//    factors); measurement-based scaling recovers the factors (uniform and per axis), masses sum
//    to the subject's mass with OpenSim's distribution rules, the inertia of a cylinder-shaped
//    body follows the scaled cylinder, the muscle's optimal fiber and tendon slack lengths and
//    the spring's resting length scale with their paths' lengths (computed here by hand), wrap
//    objects and the joint's translation scale as OpenSim defines; MarkerPlacer moves a free
//    marker to its measured place, keeps a fixed one and deletes one the trial lacks;
//  - bad input: clear messages naming the file and element;
//  - with --data DIR (the shared folder; exit 77 without it): gait10dof18musc scaled by the
//    factors of OpenSim's own scaled subject (data/gait10dof18musc/subject01.osim) against that
//    model, number by number (masses, inertias, mass centres, joint frames, path points, moving
//    points' multipliers, muscle lengths); and the subject's static trial: the scaled model with
//    its placed markers fits the trial better than the generic model;
//  - with --opensim DIR (OpenSim's Applications/Scale/test files in DIR/Scale; exit 77 without):
//    OpenSim's subject01_Setup_Scale.xml against its std_subject01_scaleSet_applied.xml.
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mbs/ik.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/scale.h"
#include "mbs/table.h"
#include "mbs_test.h"
#include "mbs_test_tool.h"


static char tmpdir[256];

static void write_file(const char* name, const char* text) {
  mbs_test_write_file(tmpdir, name, text);
}


// run a setup file with the ScaleTool in this process; the log into *log (malloc'd)
static int run_setup(const char* setup, const char* results, char** log) {
  return mbs_test_run_setup(mbs_tool_scale, setup, results, log);
}


//---------------------------------- XML numbers -----------------------------------------------

// the numbers of every leaf element, by a path of tag:name components (the Model is "Model")
typedef struct leaf {
  char path[600];
  double v[32];
  int n;
} leaf;

typedef struct leaves {
  leaf* l;
  int n, cap;
} leaves;

static void collect(xmlNodePtr e, const char* path, leaves* out) {
  for (xmlNodePtr c = e->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    xmlChar* nm = xmlGetProp(c, (const xmlChar*)"name");
    char p[600];
    snprintf(p, sizeof(p), "%s/%s%s%s", path, (const char*)c->name, nm && *nm ? ":" : "",
             nm && *nm ? (const char*)nm : "");
    xmlFree(nm);
    int leafy = 1;
    for (xmlNodePtr k = c->children; k; k = k->next) leafy &= k->type != XML_ELEMENT_NODE;
    if (!leafy) {
      collect(c, p, out);
      continue;
    }
    xmlChar* t = xmlNodeGetContent(c);
    leaf L;
    memset(&L, 0, sizeof(L));
    snprintf(L.path, sizeof(L.path), "%s", p);
    const char* s = t ? (const char*)t : "";
    char* end;
    while (L.n < 32) {
      const double x = strtod(s, &end);
      if (end == s) break;
      L.v[L.n++] = x;
      s = end;
    }
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    const int junk = *s != 0;
    xmlFree(t);
    if (L.n == 0 || junk) continue;
    if (out->n == out->cap) {
      out->cap = out->cap ? 2 * out->cap : 256;
      out->l = realloc(out->l, (size_t)out->cap * sizeof(leaf));
    }
    out->l[out->n++] = L;
  }
}

static int read_leaves(const char* file, leaves* out) {
  memset(out, 0, sizeof(*out));
  xmlDocPtr d = xmlReadFile(file, NULL, XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR |
                                            XML_PARSE_NOWARNING | XML_PARSE_HUGE);
  if (!d) return -1;
  xmlNodePtr root = xmlDocGetRootElement(d);
  for (xmlNodePtr c = root ? root->children : NULL; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE) collect(c, (const char*)c->name, out);
  xmlFreeDoc(d);
  return 0;
}

// the numbers of the first leaf whose path ends with `suffix`
static const leaf* find_leaf(const leaves* ls, const char* suffix) {
  const size_t k = strlen(suffix);
  for (int i = 0; i < ls->n; i++) {
    const size_t n = strlen(ls->l[i].path);
    if (n >= k && !strcmp(ls->l[i].path + n - k, suffix)) return &ls->l[i];
  }
  return NULL;
}

static double leaf_value(const leaves* ls, const char* suffix, int i) {
  const leaf* l = find_leaf(ls, suffix);
  if (!l || i >= l->n) {
    fprintf(stderr, "no value %d of %s\n", i, suffix);
    return NAN;
  }
  return l->v[i];
}

//---------------------------------- the small model --------------------------------------------

// bodies thigh, shank, foot; factors of the subject
static const double S_THIGH[3] = {1.1, 1.1, 1.1};
static const double S_SHANK[3] = {0.9, 1.2, 1.05};
static const double S_FOOT[3] = {1.3, 1.3, 1.3};
static const double KNEE_DX = 0.01;  // the knee's constant translation along x (thigh frame)

static const char* model_text =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\"><Model name=\"leg\">\n"
    "<Ground name=\"ground\"/>\n"
    "<gravity>0 -9.80665 0</gravity>\n"
    "<BodySet name=\"bodyset\"><objects>\n"
    " <Body name=\"thigh\"><mass>8</mass><mass_center>0 -0.2 0</mass_center>\n"
    "  <inertia>0.1 0.02 0.1 0.001 0 0</inertia>\n"
    "  <attached_geometry><Mesh name=\"thigh_geom\"><socket_frame>..</socket_frame>"
    "<scale_factors>1 1 1</scale_factors><mesh_file>femur.vtp</mesh_file></Mesh>"
    "</attached_geometry></Body>\n"
    " <Body name=\"shank\"><mass>3</mass><mass_center>0 -0.2 0</mass_center>\n"
    "  <inertia>0.0412 0.0024 0.0412 0 0 0</inertia>\n"
    "  <WrapObjectSet name=\"wrapobjectset\"><objects>\n"
    "   <WrapCylinder name=\"cyl\"><xyz_body_rotation>1.5707963267948966 0 0</xyz_body_rotation>"
    "<translation>0.02 -0.1 0.01</translation><radius>0.03</radius><length>0.1</length>"
    "</WrapCylinder>\n"
    "   <WrapSphere name=\"ball\"><translation>0 -0.3 0</translation><radius>0.02</radius>"
    "</WrapSphere>\n"
    "  </objects></WrapObjectSet></Body>\n"
    " <Body name=\"foot\"><mass>1</mass><mass_center>0.05 0 0</mass_center>\n"
    "  <inertia>0.001 0.002 0.003 0 0 0</inertia></Body>\n"
    "</objects></BodySet>\n"
    "<JointSet name=\"jointset\"><objects>\n"
    " <PinJoint name=\"hip\"><socket_parent_frame>ground_offset</socket_parent_frame>"
    "<socket_child_frame>thigh_offset</socket_child_frame>\n"
    "  <coordinates><Coordinate name=\"hip_flexion\"><default_value>0</default_value>"
    "</Coordinate></coordinates>\n"
    "  <frames><PhysicalOffsetFrame name=\"ground_offset\"><socket_parent>/ground</socket_parent>"
    "<translation>0 1 0</translation><orientation>0 0 0</orientation></PhysicalOffsetFrame>\n"
    "  <PhysicalOffsetFrame name=\"thigh_offset\"><socket_parent>/bodyset/thigh</socket_parent>"
    "<translation>0 0 0</translation><orientation>0 0 0</orientation></PhysicalOffsetFrame>"
    "</frames></PinJoint>\n"
    " <CustomJoint name=\"knee\"><socket_parent_frame>thigh_offset</socket_parent_frame>"
    "<socket_child_frame>shank_offset</socket_child_frame>\n"
    "  <coordinates><Coordinate name=\"knee_angle\"><default_value>0</default_value>"
    "</Coordinate></coordinates>\n"
    "  <SpatialTransform>\n"
    "   <TransformAxis name=\"rotation1\"><coordinates></coordinates><axis>1 0 0</axis>"
    "</TransformAxis>\n"
    "   <TransformAxis name=\"rotation2\"><coordinates></coordinates><axis>0 1 0</axis>"
    "</TransformAxis>\n"
    "   <TransformAxis name=\"rotation3\"><coordinates>knee_angle</coordinates><axis>0 0 1</axis>"
    "<LinearFunction name=\"function\"><coefficients>1 0</coefficients></LinearFunction>"
    "</TransformAxis>\n"
    "   <TransformAxis name=\"translation1\"><coordinates></coordinates><axis>1 0 0</axis>"
    "<Constant name=\"function\"><value>0.01</value></Constant></TransformAxis>\n"
    "   <TransformAxis name=\"translation2\"><coordinates></coordinates><axis>0 1 0</axis>"
    "</TransformAxis>\n"
    "   <TransformAxis name=\"translation3\"><coordinates></coordinates><axis>0 0 1</axis>"
    "</TransformAxis>\n"
    "  </SpatialTransform>\n"
    "  <frames><PhysicalOffsetFrame name=\"thigh_offset\"><socket_parent>/bodyset/thigh"
    "</socket_parent><translation>0 -0.4 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "  <PhysicalOffsetFrame name=\"shank_offset\"><socket_parent>/bodyset/shank</socket_parent>"
    "<translation>0 0 0</translation><orientation>0 0 0</orientation></PhysicalOffsetFrame>"
    "</frames></CustomJoint>\n"
    " <PinJoint name=\"ankle\"><socket_parent_frame>shank_offset</socket_parent_frame>"
    "<socket_child_frame>foot_offset</socket_child_frame>\n"
    "  <coordinates><Coordinate name=\"ankle_angle\"><default_value>0</default_value>"
    "</Coordinate></coordinates>\n"
    "  <frames><PhysicalOffsetFrame name=\"shank_offset\"><socket_parent>/bodyset/shank"
    "</socket_parent><translation>0 -0.4 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "  <PhysicalOffsetFrame name=\"foot_offset\"><socket_parent>/bodyset/foot</socket_parent>"
    "<translation>0.02 0 0</translation><orientation>0 0 0</orientation></PhysicalOffsetFrame>"
    "</frames></PinJoint>\n"
    "</objects></JointSet>\n"
    "<ForceSet name=\"forceset\"><objects>\n"
    " <Thelen2003Muscle name=\"vas\"><GeometryPath name=\"path\"><PathPointSet><objects>\n"
    "  <PathPoint name=\"vas-P1\"><socket_parent_frame>/bodyset/thigh</socket_parent_frame>"
    "<location>0.03 -0.2 0</location></PathPoint>\n"
    "  <PathPoint name=\"vas-P2\"><socket_parent_frame>/bodyset/shank</socket_parent_frame>"
    "<location>0.03 -0.1 0</location></PathPoint>\n"
    "  </objects></PathPointSet></GeometryPath>\n"
    "  <max_isometric_force>1000</max_isometric_force><optimal_fiber_length>0.1"
    "</optimal_fiber_length><tendon_slack_length>0.2</tendon_slack_length>"
    "<pennation_angle_at_optimal>0</pennation_angle_at_optimal></Thelen2003Muscle>\n"
    " <PathSpring name=\"spring\"><GeometryPath name=\"path\"><PathPointSet><objects>\n"
    "  <PathPoint name=\"sp-P1\"><socket_parent_frame>/bodyset/thigh</socket_parent_frame>"
    "<location>0 -0.1 0.02</location></PathPoint>\n"
    "  <PathPoint name=\"sp-P2\"><socket_parent_frame>/bodyset/foot</socket_parent_frame>"
    "<location>0.05 0 0.02</location></PathPoint>\n"
    "  </objects></PathPointSet></GeometryPath>\n"
    "  <resting_length>0.7</resting_length><stiffness>100</stiffness><dissipation>0.1"
    "</dissipation></PathSpring>\n"
    "</objects></ForceSet>\n"
    "<MarkerSet name=\"markerset\"><objects>\n"
    " <Marker name=\"Gone\"><socket_parent_frame>/bodyset/thigh</socket_parent_frame>"
    "<location>0 -0.1 0.05</location><fixed>false</fixed></Marker>\n"
    "</objects></MarkerSet>\n"
    "</Model></OpenSimDocument>\n";

// the markers of the marker set file: name, body (0 thigh, 1 shank, 2 foot), location, fixed
typedef struct mk {
  const char* name;
  int body;
  double loc[3];
  int fixed;
} mk;

static const mk markers[] = {
    {"T1", 0, {0.05, -0.1, 0}, 0},     {"T2", 0, {0.05, -0.3, 0}, 0},
    {"T3", 0, {0, -0.2, 0.06}, 0},     {"S1", 1, {0.04, -0.05, 0}, 0},
    {"S2", 1, {0.04, -0.35, 0}, 0},    {"S3", 1, {0.08, -0.2, 0}, 0},
    {"S4", 1, {-0.02, -0.2, 0}, 0},    {"S5", 1, {0, -0.3, 0.05}, 0},
    {"S6", 1, {0, -0.3, -0.03}, 0},    {"M", 1, {0.03, -0.25, 0.04}, 0},
    {"F1", 2, {0.1, 0, 0}, 0},         {"F2", 2, {-0.02, 0.02, 0}, 0},
    {"F3", 2, {0.05, 0.01, 0.04}, 1},
};
#define NMK ((int)(sizeof(markers) / sizeof(markers[0])))
static const double M_SHIFT[3] = {0.005, 0.01, -0.002};   // M's measured place off the model's
static const double F3_SHIFT[3] = {0.004, -0.003, 0.002};  // F3 is fixed: not moved

static const double* factor_of(int body) {
  return body == 0 ? S_THIGH : body == 1 ? S_SHANK : S_FOOT;
}

// the bodies' origins in Ground at the default pose (every angle 0), scaled by s (or not)
static void origins(int scaled, double o[3][3]) {
  const double* st = scaled ? S_THIGH : (const double[3]){1, 1, 1};
  const double* ss = scaled ? S_SHANK : (const double[3]){1, 1, 1};
  const double* sf = scaled ? S_FOOT : (const double[3]){1, 1, 1};
  const double thigh[3] = {0, 1, 0};
  const double shank[3] = {thigh[0] + KNEE_DX * st[0], thigh[1] - 0.4 * st[1], thigh[2]};
  const double foot[3] = {shank[0] - 0.02 * sf[0], shank[1] - 0.4 * ss[1], shank[2]};
  memcpy(o[0], thigh, sizeof(thigh));
  memcpy(o[1], shank, sizeof(shank));
  memcpy(o[2], foot, sizeof(foot));
}

static void point(int scaled, int body, const double loc[3], double p[3]) {
  double o[3][3];
  origins(scaled, o);
  const double* s = scaled ? factor_of(body) : (const double[3]){1, 1, 1};
  for (int k = 0; k < 3; k++) p[k] = o[body][k] + s[k] * loc[k];
}

static double dist(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
              (a[2] - b[2]) * (a[2] - b[2]));
}

// a path of two points on bodies b1, b2, scaled or not
static double path2(int scaled, int b1, const double l1[3], int b2, const double l2[3]) {
  double p1[3], p2[3];
  point(scaled, b1, l1, p1);
  point(scaled, b2, l2, p2);
  return dist(p1, p2);
}

static void write_marker_set(void) {
  static const char* bodies[3] = {"thigh", "shank", "foot"};
  char* s = calloc(8192, 1);
  strcat(s, "<?xml version=\"1.0\"?>\n<OpenSimDocument Version=\"20302\"><MarkerSet><objects>\n");
  for (int i = 0; i < NMK; i++)
    sprintf(s + strlen(s), " <Marker name=\"%s\"><body> %s </body><location> %.17g %.17g %.17g "
            "</location><fixed> %s </fixed></Marker>\n", markers[i].name,
            bodies[markers[i].body], markers[i].loc[0], markers[i].loc[1], markers[i].loc[2],
            markers[i].fixed ? "true" : "false");
  strcat(s, "</objects></MarkerSet></OpenSimDocument>\n");
  write_file("markers.xml", s);
  free(s);
}

// the static trial: the scaled model's markers at the default pose, in mm; frame 1 misses T1
// (outside the time range used), M and F3 are measured off the model
static void write_trial(void) {
  char* s = calloc(65536, 1);
  const int nframe = 11;
  sprintf(s, "PathFileType\t4\t(X/Y/Z)\tstatic.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\t"
          "Units\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n100\t100\t%d\t%d\tmm\t100\t1\t"
          "%d\nFrame#\tTime", nframe, NMK, nframe);
  for (int i = 0; i < NMK; i++) sprintf(s + strlen(s), "\t%s\t\t", markers[i].name);
  strcat(s, "\n\t");
  for (int i = 0; i < NMK; i++) sprintf(s + strlen(s), "\tX%d\tY%d\tZ%d", i + 1, i + 1, i + 1);
  strcat(s, "\n\n");
  for (int f = 0; f < nframe; f++) {
    sprintf(s + strlen(s), "%d\t%.3f", f + 1, 0.01 * f);
    for (int i = 0; i < NMK; i++) {
      double p[3];
      point(1, markers[i].body, markers[i].loc, p);
      for (int k = 0; k < 3; k++) {
        if (!strcmp(markers[i].name, "M")) p[k] += M_SHIFT[k];
        if (!strcmp(markers[i].name, "F3")) p[k] += F3_SHIFT[k];
      }
      if (f == 0 && i == 0) strcat(s, "\t\t\t");
      else sprintf(s + strlen(s), "\t%.9f\t%.9f\t%.9f", 1000 * p[0], 1000 * p[1], 1000 * p[2]);
    }
    strcat(s, "\n");
  }
  write_file("static.trc", s);
  free(s);
}

static const char* setup_text =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <ScaleTool name=\"subject\">\n"
    "    <mass>24</mass>\n"
    "    <GenericModelMaker>\n"
    "      <model_file>leg.osim</model_file>\n"
    "      <marker_set_file>markers.xml</marker_set_file>\n"
    "    </GenericModelMaker>\n"
    "    <ModelScaler>\n"
    "      <apply>true</apply>\n"
    "      <scaling_order> measurements </scaling_order>\n"
    "      <MeasurementSet><objects>\n"
    "        <Measurement name=\"thigh\"><MarkerPairSet><objects>\n"
    "          <MarkerPair><markers> T1 T2 </markers></MarkerPair>\n"
    "          <MarkerPair><markers> T1 T3 </markers></MarkerPair></objects></MarkerPairSet>\n"
    "          <BodyScaleSet><objects><BodyScale name=\"thigh\"><axes> X Y Z </axes></BodyScale>"
    "</objects></BodyScaleSet></Measurement>\n"
    "        <Measurement name=\"shank_y\"><MarkerPairSet><objects>\n"
    "          <MarkerPair><markers> S1 S2 </markers></MarkerPair></objects></MarkerPairSet>\n"
    "          <BodyScaleSet><objects><BodyScale name=\"shank\"><axes> Y </axes></BodyScale>"
    "</objects></BodyScaleSet></Measurement>\n"
    "        <Measurement name=\"shank_x\"><MarkerPairSet><objects>\n"
    "          <MarkerPair><markers> S3 S4 </markers></MarkerPair></objects></MarkerPairSet>\n"
    "          <BodyScaleSet><objects><BodyScale name=\"shank\"><axes> X </axes></BodyScale>"
    "</objects></BodyScaleSet></Measurement>\n"
    "        <Measurement name=\"shank_z\"><MarkerPairSet><objects>\n"
    "          <MarkerPair><markers> S5 S6 </markers></MarkerPair></objects></MarkerPairSet>\n"
    "          <BodyScaleSet><objects><BodyScale name=\"shank\"><axes> Z </axes></BodyScale>"
    "</objects></BodyScaleSet></Measurement>\n"
    "        <Measurement name=\"foot\"><MarkerPairSet><objects>\n"
    "          <MarkerPair><markers> F1 F2 </markers></MarkerPair>\n"
    "          <MarkerPair><markers> F1 F2 </markers></MarkerPair></objects></MarkerPairSet>\n"
    "          <BodyScaleSet><objects><BodyScale name=\"foot\"><axes> X Y Z </axes></BodyScale>"
    "</objects></BodyScaleSet></Measurement>\n"
    "      </objects></MeasurementSet>\n"
    "      <marker_file>static.trc</marker_file>\n"
    "      <time_range> 0.01 0.1 </time_range>\n"
    "      <preserve_mass_distribution>false</preserve_mass_distribution>\n"
    "      <output_model_file>out/scaled.osim</output_model_file>\n"
    "      <output_scale_file>out/scales.xml</output_scale_file>\n"
    "    </ModelScaler>\n"
    "    <MarkerPlacer>\n"
    "      <apply>true</apply>\n"
    "      <IKTaskSet><objects>\n"
    "        <IKMarkerTask name=\"T1\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"T2\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"T3\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"S1\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"S2\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"S5\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"M\"><apply>false</apply><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"F1\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKMarkerTask name=\"F2\"><weight>1</weight></IKMarkerTask>\n"
    "        <IKCoordinateTask name=\"ankle_angle\"><weight>1</weight>"
    "<value_type>manual_value</value_type><value>0</value></IKCoordinateTask>\n"
    "      </objects></IKTaskSet>\n"
    "      <marker_file>static.trc</marker_file>\n"
    "      <time_range> 0.02 0.1 </time_range>\n"
    "      <output_model_file>out/placed.osim</output_model_file>\n"
    "      <output_marker_file>out/placed_markers.xml</output_marker_file>\n"
    "      <output_motion_file>out/static_pose.sto</output_motion_file>\n"
    "    </MarkerPlacer>\n"
    "  </ScaleTool>\n"
    "</OpenSimDocument>\n";

// the setup with `from` replaced by `to` (NULL: as it is), written as `name`
static void write_setup(const char* name, const char* from, const char* to) {
  char* s = strdup(setup_text);
  if (from) {
    char* at = strstr(s, from);
    if (!at) {
      fprintf(stderr, "setup has no '%s'\n", from);
      exit(1);
    }
    char* t = malloc(strlen(s) + strlen(to) + 1);
    sprintf(t, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    free(s);
    s = t;
  }
  write_file(name, s);
  free(s);
}

static void path_of(char* buf, size_t n, const char* name) {
  snprintf(buf, n, "%s/%s", tmpdir, name);
}

static void test_small_model(void) {
  write_file("leg.osim", model_text);
  write_marker_set();
  write_trial();
  write_setup("setup.xml", NULL, NULL);
  char setup[512], *log = NULL;
  path_of(setup, sizeof(setup), "setup.xml");
  const int rc = run_setup(setup, NULL, &log);
  EXPECT_EQ_INT(rc, 0);
  if (rc) {
    fprintf(stderr, "%s\n", log);
    free(log);
    return;
  }
  EXPECT_LOG(log, "markers of", "0 replaced, 13 added");
  EXPECT_LOG(log, "deleted 1 markers", NULL);
  free(log);

  // the scale set file: the factors back
  char p[512];
  path_of(p, sizeof(p), "out/scales.xml");
  leaves sc;
  EXPECT_OK(read_leaves(p, &sc));
  {
    static const char* names[4] = {"ground", "thigh", "shank", "foot"};
    xmlDocPtr d = xmlReadFile(p, NULL, XML_PARSE_NOBLANKS | XML_PARSE_NOERROR);
    int found = 0, offsets = 0;
    xmlNodePtr objs = d ? xmlDocGetRootElement(d)->children : NULL;
    while (objs && (objs->type != XML_ELEMENT_NODE || strcmp((const char*)objs->name, "ScaleSet")))
      objs = objs->next;
    for (xmlNodePtr o = objs ? objs->children : NULL; o; o = o->next)
      if (o->type == XML_ELEMENT_NODE && !strcmp((const char*)o->name, "objects")) objs = o;
    for (xmlNodePtr s = objs ? objs->children : NULL; s; s = s->next) {
      if (s->type != XML_ELEMENT_NODE) continue;
      char seg[64] = "", scales[256] = "";
      for (xmlNodePtr c = s->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        xmlChar* t = xmlNodeGetContent(c);
        if (!strcmp((const char*)c->name, "segment")) snprintf(seg, sizeof(seg), "%s", t);
        if (!strcmp((const char*)c->name, "scales")) snprintf(scales, sizeof(scales), "%s", t);
        xmlFree(t);
      }
      double f[3] = {NAN, NAN, NAN};
      sscanf(scales, "%lf %lf %lf", &f[0], &f[1], &f[2]);
      for (int b = 0; b < 4; b++)
        if (!strcmp(seg, names[b])) {
          const double* want = b == 0 ? (const double[3]){1, 1, 1} : factor_of(b - 1);
          for (int k = 0; k < 3; k++) EXPECT_NEAR(f[k], want[k], 1e-12);
          found++;
        }
      if (strstr(seg, "_offset")) {
        offsets++;
        for (int k = 0; k < 3; k++) EXPECT_NEAR(f[k], 1, 0);
      }
    }
    EXPECT_EQ_INT(found, 4);
    EXPECT_EQ_INT(offsets, 6);
    xmlFreeDoc(d);
  }
  free(sc.l);

  // the scaled model (before marker placement)
  path_of(p, sizeof(p), "out/scaled.osim");
  leaves m;
  EXPECT_OK(read_leaves(p, &m));
  // masses: proportional to m s_x s_y s_z, summing to the subject's 24 kg
  const double m0[3] = {8, 3, 1};
  double w[3], wsum = 0;
  for (int b = 0; b < 3; b++) {
    const double* s = factor_of(b);
    w[b] = m0[b] * s[0] * s[1] * s[2];
    wsum += w[b];
  }
  static const char* mass_path[3] = {"Body:thigh/mass", "Body:shank/mass", "Body:foot/mass"};
  double total = 0;
  for (int b = 0; b < 3; b++) {
    const double mb = leaf_value(&m, mass_path[b], 0);
    EXPECT_NEAR(mb, 24 * w[b] / wsum, 1e-12);
    total += mb;
  }
  EXPECT_NEAR(total, 24, 1e-12);
  const double f_mass = 24 / wsum;
  // inertia: the thigh scales uniformly (mass ratio x s^2); the shank is a cylinder along y
  // (r = 0.04, L = 0.4) whose radius scales by sqrt(sx sz) and length by sy
  {
    const double mt = 8 * 1.331 * f_mass, ratio = mt / 8 * 1.1 * 1.1;
    const double I0[6] = {0.1, 0.02, 0.1, 0.001, 0, 0};
    for (int k = 0; k < 6; k++)
      EXPECT_NEAR(leaf_value(&m, "Body:thigh/inertia", k), I0[k] * ratio, 1e-12);
    const double ms = 3 * 0.9 * 1.2 * 1.05 * f_mass, r2 = 0.04 * 0.04 * 0.9 * 1.05;
    const double L = 0.4 * 1.2;
    EXPECT_NEAR(leaf_value(&m, "Body:shank/inertia", 1), 0.5 * ms * r2, 1e-10);
    EXPECT_NEAR(leaf_value(&m, "Body:shank/inertia", 0), ms * (L * L / 12 + r2 / 4), 1e-10);
    EXPECT_NEAR(leaf_value(&m, "Body:shank/inertia", 2), ms * (L * L / 12 + r2 / 4), 1e-10);
  }
  // mass centres and offset frames
  EXPECT_NEAR(leaf_value(&m, "Body:shank/mass_center", 1), -0.2 * 1.2, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "Body:foot/mass_center", 0), 0.05 * 1.3, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "CustomJoint:knee/frames/PhysicalOffsetFrame:thigh_offset/"
                             "translation", 1), -0.4 * 1.1, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "PinJoint:ankle/frames/PhysicalOffsetFrame:shank_offset/"
                             "translation", 1), -0.4 * 1.2, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "PinJoint:ankle/frames/PhysicalOffsetFrame:foot_offset/"
                             "translation", 0), 0.02 * 1.3, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "PinJoint:hip/frames/PhysicalOffsetFrame:ground_offset/"
                             "translation", 1), 1, 0);
  // the knee's constant translation: a multiplier of the thigh's x factor
  EXPECT_NEAR(leaf_value(&m, "TransformAxis:translation1/MultiplierFunction:function/scale", 0),
              1.1, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "TransformAxis:translation1/MultiplierFunction:function/function/"
                             "Constant/value", 0), 0.01, 0);
  // mesh scale factors (display)
  EXPECT_NEAR(leaf_value(&m, "Mesh:thigh_geom/scale_factors", 2), 1.1, 1e-15);
  // wrap objects on the shank: the cylinder's axis is the shank's y (rotated about x by 90 deg)
  EXPECT_NEAR(leaf_value(&m, "WrapCylinder:cyl/length", 0), 0.1 * 1.2, 1e-14);
  EXPECT_NEAR(leaf_value(&m, "WrapCylinder:cyl/radius", 0), 0.03 * (0.9 + 1.05) / 2, 1e-14);
  EXPECT_NEAR(leaf_value(&m, "WrapCylinder:cyl/translation", 2), 0.01 * 1.05, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "WrapSphere:ball/radius", 0), 0.02 * (0.9 + 1.2 + 1.05) / 3, 1e-15);
  EXPECT_NEAR(leaf_value(&m, "WrapSphere:ball/translation", 1), -0.3 * 1.2, 1e-15);
  // path points and the lengths that follow the paths
  EXPECT_NEAR(leaf_value(&m, "PathPoint:vas-P2/location", 0), 0.03 * 0.9, 1e-15);
  {
    const double a[3] = {0.03, -0.2, 0}, b[3] = {0.03, -0.1, 0};
    const double r = path2(1, 0, a, 1, b) / path2(0, 0, a, 1, b);
    EXPECT_NEAR(leaf_value(&m, "Thelen2003Muscle:vas/optimal_fiber_length", 0), 0.1 * r, 1e-12);
    EXPECT_NEAR(leaf_value(&m, "Thelen2003Muscle:vas/tendon_slack_length", 0), 0.2 * r, 1e-12);
    const double c[3] = {0, -0.1, 0.02}, d[3] = {0.05, 0, 0.02};
    const double rs = path2(1, 0, c, 2, d) / path2(0, 0, c, 2, d);
    EXPECT_NEAR(leaf_value(&m, "PathSpring:spring/resting_length", 0), 0.7 * rs, 1e-12);
  }
  free(m.l);

  // read back by mbstudy: the bodies where the hand's geometry puts them, the markers scaled
  mbs_error err;
  mbs_osim_model* om = mbs_osim_read(p, &err);
  EXPECT_TRUE(om != NULL);
  if (om) {
    const mbs_system* sys = mbs_osim_system(om);
    mbs_state* st = mbs_state_create(sys);
    EXPECT_OK(mbs_osim_default_state(om, st));
    EXPECT_OK(mbs_realize_position(sys, st));
    double o[3][3];
    origins(1, o);
    static const char* bn[3] = {"thigh", "shank", "foot"};
    for (int b = 0; b < 3; b++) {
      double R[9], pg[3];
      EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, bn[b]), R, pg));
      for (int k = 0; k < 3; k++) EXPECT_NEAR(pg[k], o[b][k], 1e-14);
    }
    EXPECT_EQ_INT(mbs_osim_nmarker(om), NMK + 1);
    for (int i = 0; i < mbs_osim_nmarker(om); i++) {
      const mbs_osim_marker* k = mbs_osim_marker_at(om, i);
      for (int j = 0; j < NMK; j++) {
        if (strcmp(markers[j].name, k->name)) continue;
        for (int c = 0; c < 3; c++)
          EXPECT_NEAR(k->location[c], markers[j].loc[c] * factor_of(markers[j].body)[c], 1e-15);
      }
    }
    mbs_state_destroy(st);
    mbs_osim_free(om);
  }

  // marker placement: M at its measured place, F3 (fixed) kept, "Gone" deleted
  path_of(p, sizeof(p), "out/placed.osim");
  om = mbs_osim_read(p, &err);
  EXPECT_TRUE(om != NULL);
  if (om) {
    EXPECT_EQ_INT(mbs_osim_nmarker(om), NMK);
    for (int i = 0; i < mbs_osim_nmarker(om); i++) {
      const mbs_osim_marker* k = mbs_osim_marker_at(om, i);
      EXPECT_TRUE(strcmp(k->name, "Gone") != 0);
      for (int j = 0; j < NMK; j++) {
        if (strcmp(markers[j].name, k->name)) continue;
        const double* s = factor_of(markers[j].body);
        for (int c = 0; c < 3; c++) {
          const double want = markers[j].loc[c] * s[c] + (!strcmp(k->name, "M") ? M_SHIFT[c] : 0);
          EXPECT_NEAR(k->location[c], want, 1e-8);
        }
      }
    }
    mbs_osim_free(om);
  }
  path_of(p, sizeof(p), "out/placed_markers.xml");
  leaves pm;
  EXPECT_OK(read_leaves(p, &pm));
  EXPECT_NEAR(leaf_value(&pm, "Marker:M/location", 1), -0.25 * 1.2 + M_SHIFT[1], 1e-8);
  EXPECT_NEAR(leaf_value(&pm, "Marker:F3/location", 0), 0.05 * 1.3, 1e-15);
  free(pm.l);
  path_of(p, sizeof(p), "out/static_pose.sto");
  mbs_table* pose = NULL;
  EXPECT_OK(mbs_table_read_sto(p, &pose, &err));
  if (pose) {
    EXPECT_EQ_INT(pose->nrow, 1);
    EXPECT_TRUE(mbs_table_column(pose, "/jointset/knee/knee_angle/value") > 0);
    for (int c = 1; c < pose->ncol; c++) EXPECT_ABS(mbs_table_get(pose, 0, c), 0, 1e-7);
    mbs_table_free(pose);
  }

  // preserve_mass_distribution: the same ratios as the generic model
  write_setup("setup_preserve.xml", "<preserve_mass_distribution>false",
              "<preserve_mass_distribution>true");
  path_of(setup, sizeof(setup), "setup_preserve.xml");
  EXPECT_EQ_INT(run_setup(setup, NULL, &log), 0);
  free(log);
  path_of(p, sizeof(p), "out/scaled.osim");
  EXPECT_OK(read_leaves(p, &m));
  for (int b = 0; b < 3; b++) EXPECT_NEAR(leaf_value(&m, mass_path[b], 0), 2 * m0[b], 1e-12);
  // inertia: mass ratio 2 with the length factors (uniform thigh)
  EXPECT_NEAR(leaf_value(&m, "Body:thigh/inertia", 0), 0.1 * 2 * 1.21, 1e-12);
  free(m.l);
}

// a bad setup: run it, expect failure (or success with a warning) and a log line
static void bad_case(const char* from, const char* to, int want_ok, const char* a,
                     const char* b) {
  write_setup("bad.xml", from, to);
  char setup[512], *log = NULL;
  path_of(setup, sizeof(setup), "bad.xml");
  const int rc = run_setup(setup, NULL, &log);
  mbs_test_checks++;
  if ((rc == 0) != want_ok) {
    mbs_test_failures++;
    fprintf(stderr, "%s:%d: FAIL: '%s' -> '%s': exit %d; the log:\n%s\n", __FILE__, __LINE__,
            from, to, rc, log);
  }
  EXPECT_LOG(log, a, b);
  free(log);
}

static void test_bad_input(void) {
  // a marker pair naming a marker the model lacks, and one the trial lacks
  bad_case("<markers> S5 S6 </markers>", "<markers> S5 Nope </markers>", 0,
           "bad.xml:24: Measurement 'shank_z': marker 'Nope'", "not in the generic model");
  write_file("few.trc", "PathFileType\t4\t(X/Y/Z)\tfew.trc\nDataRate\tCameraRate\tNumFrames\t"
             "NumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n100\t100\t2\t1"
             "\tmm\t100\t1\t2\nFrame#\tTime\tT1\t\t\n\t\tX1\tY1\tZ1\n\n1\t0\t1\t2\t3\n2\t0.01\t1"
             "\t2\t3\n");
  bad_case("<marker_file>static.trc</marker_file>\n      <time_range> 0.01 0.1",
           "<marker_file>few.trc</marker_file>\n      <time_range> 0.01 0.1", 0,
           "bad.xml:14: Measurement 'thigh': marker 'T2'", "few.trc");
  // a marker missing in the frames averaged
  bad_case("<time_range> 0.01 0.1 </time_range>", "<time_range> 0 0.1 </time_range>", 0,
           "Measurement 'thigh': marker 'T1' or 'T2' is missing in frames 1 to 11", NULL);
  // a measurement without pairs
  bad_case("<MarkerPair><markers> S3 S4 </markers></MarkerPair>", "", 0,
           "Measurement 'shank_x' has no marker pairs", NULL);
  bad_case("<markers> F1 F2 </markers></MarkerPair>\n          <MarkerPair>",
           "<markers> F1 </markers></MarkerPair>\n          <MarkerPair>", 0,
           "bad.xml:27: Measurement 'foot': MarkerPair's <markers> must name two markers", NULL);
  // an unknown body: passed over with a warning naming it (as OpenSim passes over it)
  bad_case("<BodyScale name=\"foot\">", "<BodyScale name=\"hoof\">", 1,
           "warning: ", "bad.xml:29: Measurement 'foot': BodyScale 'hoof': the model has no "
           "such body");
  bad_case("<axes> Y </axes>", "<axes> Y W </axes>", 0, "BodyScale 'shank': <axes> 'Y W'",
           NULL);
  // time ranges: empty, reversed, not numbers; a MarkerPlacer range without frames
  bad_case("<time_range> 0.01 0.1 </time_range>", "<time_range></time_range>", 0,
           "bad.xml:32: <time_range> is empty", NULL);
  bad_case("<time_range> 0.01 0.1 </time_range>", "<time_range> 0.1 0.01 </time_range>", 0,
           "bad.xml:32: <time_range> 0.1 .. 0.01 is empty: the start is after the end", NULL);
  bad_case("<time_range> 0.01 0.1 </time_range>", "<time_range> soon </time_range>", 0,
           "<time_range> 'soon' is not two times", NULL);
  bad_case("<time_range> 0.02 0.1 </time_range>", "<time_range> 0.025 0.028 </time_range>", 0,
           "<time_range> 0.025 .. 0.028 holds no frame of", NULL);
  // missing files
  bad_case("<model_file>leg.osim", "<model_file>nothere.osim", 0, "bad.xml:6: <model_file>",
           "nothere.osim");
  bad_case("<model_file>leg.osim</model_file>", "", 0, "<GenericModelMaker> has no <model_file>",
           NULL);
  bad_case("<marker_set_file>markers.xml", "<marker_set_file>nomarkers.xml", 0,
           "bad.xml:7: <marker_set_file>", "nomarkers.xml");
  bad_case("<marker_file>static.trc</marker_file>\n      <time_range> 0.01",
           "<marker_file>nostatic.trc</marker_file>\n      <time_range> 0.01", 0,
           "<marker_file>", "nostatic.trc");
  bad_case("<marker_file>static.trc</marker_file>\n      <time_range> 0.01",
           "<time_range> 0.01", 0, "scaling_order has 'measurements' but there is no "
           "<marker_file>", NULL);
  bad_case("<scaling_order> measurements </scaling_order>",
           "<scaling_order> measurements manual </scaling_order>", 0,
           "bad.xml:11: <scaling_order>: 'manual' is not 'measurements' or 'manualScale'", NULL);
  bad_case("<MeasurementSet>", "<MeasurementSet file=\"none.xml\">", 0,
           "<MeasurementSet file=\"none.xml\">", "none.xml");
  // a MeasurementSet in a file of its own (OpenSim's file="..."): its measurements are used
  write_file("ms.xml", "<?xml version=\"1.0\"?>\n<OpenSimDocument Version=\"40000\">"
             "<MeasurementSet><objects>\n<Measurement name=\"thigh_only\"><MarkerPairSet>"
             "<objects><MarkerPair><markers>T1 T2</markers></MarkerPair></objects>"
             "</MarkerPairSet><BodyScaleSet><objects><BodyScale name=\"thigh\"><axes>X Y Z</axes>"
             "</BodyScale></objects></BodyScaleSet></Measurement>\n</objects></MeasurementSet>"
             "</OpenSimDocument>\n");
  bad_case("<MeasurementSet>", "<MeasurementSet file=\"ms.xml\">", 1,
           "measurement 'thigh_only': scale factor 1.1", NULL);
  // a manual scale of an unknown body, and one that is not three numbers
  bad_case("<scaling_order> measurements </scaling_order>",
           "<scaling_order> manualScale </scaling_order><ScaleSet><objects><Scale><scales>1 1 1"
           "</scales><segment>tail</segment></Scale></objects></ScaleSet>", 1,
           "warning: ", "Scale: the model has no body 'tail'");
  bad_case("<scaling_order> measurements </scaling_order>",
           "<scaling_order> manualScale </scaling_order><ScaleSet><objects><Scale><scales>1 1"
           "</scales><segment>foot</segment></Scale></objects></ScaleSet>", 0,
           "Scale 'foot': <scales> '1 1' is not three non-zero numbers", NULL);
  // a marker set naming a body the model lacks
  write_file("badmarkers.xml", "<OpenSimDocument Version=\"20302\"><MarkerSet><objects>\n"
             "<Marker name=\"X\"><body>wing</body><location>0 0 0</location></Marker>\n"
             "</objects></MarkerSet></OpenSimDocument>\n");
  bad_case("<marker_set_file>markers.xml", "<marker_set_file>badmarkers.xml", 0,
           "badmarkers.xml:2: Marker 'X': the model", "has no body 'wing'");
}

//---------------------------------- gait10dof18musc --------------------------------------------

static const char* subject_segments[] = {"pelvis", "femur_r", "tibia_r", "talus_r", "calcn_r",
                                         "toes_r", "femur_l", "tibia_l", "talus_l", "calcn_l",
                                         "toes_l", "torso"};
#define NSUBJ 12

// the factors of OpenSim's scaled subject: its meshes' scale_factors
static int subject_factors(const leaves* subj, double f[NSUBJ][3]) {
  for (int i = 0; i < NSUBJ; i++) {
    char key[200];
    snprintf(key, sizeof(key), "Body:%s/attached_geometry/Mesh:%s_geom_1/scale_factors",
             subject_segments[i], subject_segments[i]);
    const leaf* l = find_leaf(subj, key);
    if (!l || l->n != 3) return -1;
    memcpy(f[i], l->v, sizeof(f[i]));
  }
  return 0;
}

// what differs between the published generic model and the one OpenSim scaled for subject01
// (other muscle parameters and points of three muscles, a default pose, a range, the pelvis's
// constant offset): left out of the comparison
static int excluded(const char* path) {
  static const char* const skip[] = {"MarkerSet", "glut_max", "vasti", "gastroc",
                                     "pelvis_ty/default_value", "ankle_angle", "minimum_activation",
                                     "ground_pelvis/SpatialTransform/TransformAxis:translation3",
                                     NULL};
  for (int i = 0; skip[i]; i++)
    if (strstr(path, skip[i])) return 1;
  return 0;
}

static int test_gait(const char* data) {
  char generic[512], subject[512], trial[512];
  snprintf(generic, sizeof(generic), "%s/models/gait10dof18musc.osim", data);
  snprintf(subject, sizeof(subject), "%s/data/gait10dof18musc/subject01.osim", data);
  snprintf(trial, sizeof(trial), "%s/data/gait10dof18musc/ExperimentalData/subject01_static.trc",
           data);
  struct stat sb;
  if (stat(generic, &sb) || stat(subject, &sb) || stat(trial, &sb)) {
    printf("SKIPPED: no gait10dof18musc model, subject or static trial under %s\n", data);
    return 77;
  }
  leaves subj;
  if (read_leaves(subject, &subj)) return 1;
  double f[NSUBJ][3];
  EXPECT_OK(subject_factors(&subj, f));
  double mass = 0;
  for (int i = 0; i < NSUBJ; i++) {
    char key[100];
    snprintf(key, sizeof(key), "Body:%s/mass", subject_segments[i]);
    mass += leaf_value(&subj, key, 0);
  }
  // 1. manual scaling by the subject's factors, against OpenSim's scaled model
  char* s = calloc(65536, 1);
  sprintf(s, "<OpenSimDocument Version=\"40000\"><ScaleTool name=\"subject01\"><mass>%.17g</mass>"
          "<GenericModelMaker><model_file>%s</model_file></GenericModelMaker><ModelScaler>"
          "<scaling_order>manualScale</scaling_order><ScaleSet><objects>", mass, generic);
  for (int i = 0; i < NSUBJ; i++)
    sprintf(s + strlen(s), "<Scale><scales>%.17g %.17g %.17g</scales><segment>%s</segment>"
            "</Scale>", f[i][0], f[i][1], f[i][2], subject_segments[i]);
  strcat(s, "</objects></ScaleSet><preserve_mass_distribution>true</preserve_mass_distribution>"
         "<output_model_file>gait_scaled.osim</output_model_file></ModelScaler></ScaleTool>"
         "</OpenSimDocument>\n");
  write_file("gait_setup.xml", s);
  char setup[512], out[512], *log = NULL;
  path_of(setup, sizeof(setup), "gait_setup.xml");
  EXPECT_EQ_INT(run_setup(setup, NULL, &log), 0);
  free(log);
  path_of(out, sizeof(out), "gait_scaled.osim");
  leaves mine;
  EXPECT_OK(read_leaves(out, &mine));
  int compared = 0, lengths = 0;
  double worst = 0;
  const char* worst_path = "";
  for (int i = 0; i < mine.n; i++) {
    const leaf* a = &mine.l[i];
    if (excluded(a->path)) continue;
    // the same element in OpenSim's model (its Model is named otherwise)
    const char* rest = strchr(a->path + 6, '/');
    const leaf* b = rest ? find_leaf(&subj, rest) : NULL;
    if (!b || b->n != a->n) continue;
    for (int k = 0; k < a->n; k++) {
      const double d = fabs(a->v[k] - b->v[k]) / (fabs(b->v[k]) > 1e-3 ? fabs(b->v[k]) : 1e-3);
      if (d > worst) {
        worst = d;
        worst_path = a->path;
      }
      // OpenSim wrote its subject's points and inertias with 6 significant digits
      if (!mbs_test_close(a->v[k], b->v[k], 4e-6 * (fabs(b->v[k]) > 1e-3 ? 1 : 1e-3))) {
        mbs_test_failures++;
        fprintf(stderr, "%s:%d: FAIL: %s[%d] = %.17g, OpenSim's subject01: %.17g\n", __FILE__,
                __LINE__, a->path, k, a->v[k], b->v[k]);
      }
      mbs_test_checks++;
    }
    compared++;
    if (strstr(a->path, "optimal_fiber_length") || strstr(a->path, "tendon_slack_length"))
      lengths++;
  }
  printf("gait10dof18musc scaled as OpenSim's subject01: %d elements compared (%d muscle lengths), "
         "largest relative difference %.2g (%s)\n", compared, lengths, worst, worst_path);
  EXPECT_TRUE(compared > 450);
  EXPECT_EQ_INT(lengths, 24);
  free(mine.l);

  // 2. the static trial: a generic marker set (OpenSim's placed markers on subject01 taken back
  //    by its factors), measurement-based scaling and marker placement; the scaled model fits
  //    the trial better than the generic one
  char* ms = calloc(65536, 1);
  strcat(ms, "<OpenSimDocument Version=\"40000\"><MarkerSet name=\"markerset\"><objects>\n");
  int nm = 0;
  mbs_error serr;
  mbs_osim_model* sm = mbs_osim_read(subject, &serr);
  EXPECT_TRUE(sm != NULL);
  for (int i = 0; sm && i < subj.n; i++) {
    const leaf* l = &subj.l[i];
    const char* at = strstr(l->path, "/Marker:");
    if (!at || !strstr(l->path, "/location")) continue;
    char name[64];
    sscanf(at + 8, "%63[^/]", name);
    int body = -1;  // the marker's body, as mbstudy's reader finds it
    for (int j = 0; j < mbs_osim_nmarker(sm); j++)
      if (!strcmp(mbs_osim_marker_at(sm, j)->name, name)) body = mbs_osim_marker_at(sm, j)->body;
    const char* bname = body > 0 ? mbs_body_name(mbs_osim_system(sm), body) : NULL;
    int seg = -1;
    for (int k = 0; bname && k < NSUBJ; k++)
      if (!strcmp(subject_segments[k], bname)) seg = k;
    if (seg < 0) continue;
    sprintf(ms + strlen(ms), "<Marker name=\"%s\"><socket_parent_frame>/bodyset/%s"
            "</socket_parent_frame><location>%.17g %.17g %.17g</location><fixed>false"
            "</fixed></Marker>\n", name, bname, l->v[0] / f[seg][0], l->v[1] / f[seg][1],
            l->v[2] / f[seg][2]);
    nm++;
  }
  mbs_osim_free(sm);
  strcat(ms, "</objects></MarkerSet></OpenSimDocument>\n");
  write_file("gait_markers.xml", ms);
  free(ms);
  EXPECT_EQ_INT(nm, 39);
  static const char* pairs[][3] = {{"torso", "V.Sacral", "Top.Head"},
                                   {"pelvis", "R.ASIS", "L.ASIS"},
                                   {"femur_r femur_l", "R.ASIS", "R.Knee.Lat"},
                                   {"femur_r femur_l", "L.ASIS", "L.Knee.Lat"},
                                   {"tibia_r tibia_l talus_r talus_l", "R.Knee.Lat", "R.Ankle.Lat"},
                                   {"tibia_r tibia_l talus_r talus_l", "L.Knee.Lat", "L.Ankle.Lat"},
                                   {"calcn_r calcn_l toes_r toes_l", "R.Heel", "R.Toe.Tip"},
                                   {"calcn_r calcn_l toes_r toes_l", "L.Heel", "L.Toe.Tip"}};
  sprintf(s, "<OpenSimDocument Version=\"40000\"><ScaleTool name=\"subject01\"><mass>%.17g</mass>"
          "<GenericModelMaker><model_file>%s</model_file><marker_set_file>gait_markers.xml"
          "</marker_set_file></GenericModelMaker><ModelScaler><scaling_order>measurements"
          "</scaling_order><MeasurementSet><objects>", mass, generic);
  for (int i = 0; i < 8; i += 1) {
    if (i > 0 && !strcmp(pairs[i][0], pairs[i - 1][0])) continue;
    sprintf(s + strlen(s), "<Measurement name=\"m%d\"><MarkerPairSet><objects>", i);
    for (int j = i; j < 8 && !strcmp(pairs[j][0], pairs[i][0]); j++)
      sprintf(s + strlen(s), "<MarkerPair><markers>%s %s</markers></MarkerPair>", pairs[j][1],
              pairs[j][2]);
    strcat(s, "</objects></MarkerPairSet><BodyScaleSet><objects>");
    char bodies[128];
    snprintf(bodies, sizeof(bodies), "%s", pairs[i][0]);
    for (char* b = strtok(bodies, " "); b; b = strtok(NULL, " "))
      sprintf(s + strlen(s), "<BodyScale name=\"%s\"><axes>X Y Z</axes></BodyScale>", b);
    strcat(s, "</objects></BodyScaleSet></Measurement>");
  }
  sprintf(s + strlen(s), "</objects></MeasurementSet><marker_file>%s</marker_file><time_range>1 2"
          "</time_range><preserve_mass_distribution>true</preserve_mass_distribution>"
          "<output_scale_file>gait_scales.xml</output_scale_file><output_model_file>"
          "gait_scaled_only.osim</output_model_file></ModelScaler><MarkerPlacer>"
          "<marker_file>%s</marker_file><time_range>1 2</time_range><output_model_file>"
          "gait_placed.osim</output_model_file></MarkerPlacer></ScaleTool></OpenSimDocument>\n",
          trial, trial);
  write_file("gait_setup2.xml", s);
  free(s);
  path_of(setup, sizeof(setup), "gait_setup2.xml");
  const int rc = run_setup(setup, NULL, &log);
  EXPECT_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "%s\n", log);
  free(log);
  // the fit: IK of the averaged static pose (frames at 1 .. 2 s) with every marker, weight 1
  mbs_error err;
  mbs_table* tr = NULL;
  EXPECT_OK(mbs_table_read_trc(trial, &tr, &err));
  EXPECT_OK(mbs_table_to_meters(tr, &err));
  double rms[3] = {NAN, NAN, NAN};
  for (int which = 0; which < 3 && tr; which++) {
    mbs_osim_model* om = NULL;
    if (which == 0) {
      mbs_scale_model* g = mbs_scale_model_read(generic, &err);
      char mp[512];
      path_of(mp, sizeof(mp), "gait_markers.xml");
      if (g && !mbs_scale_model_update_markers(g, mp, NULL, NULL, &err))
        om = mbs_scale_model_build(g, NULL, &err);
      mbs_scale_model_free(g);
    } else {
      path_of(out, sizeof(out), which == 1 ? "gait_scaled_only.osim" : "gait_placed.osim");
      om = mbs_osim_read(out, &err);
    }
    EXPECT_TRUE(om != NULL);
    if (!om) continue;
    const mbs_system* sys = mbs_osim_system(om);
    const int n = mbs_osim_nmarker(om);
    mbs_ik_marker* ikm = calloc((size_t)n, sizeof(mbs_ik_marker));
    double* obs = calloc(3 * (size_t)n, sizeof(double));
    int used = 0;
    for (int i = 0; i < n; i++) {
      const mbs_osim_marker* k = mbs_osim_marker_at(om, i);
      int col = -1;
      for (int j = 0; j < tr->nmarkers; j++)
        if (!strcmp(tr->markers[j], k->name)) col = j;
      if (col < 0 || k->body <= 0) continue;
      double sum[3] = {0, 0, 0};
      int cnt = 0;
      for (int r = 0; r < tr->nrow; r++) {
        const double t = mbs_table_get(tr, r, 0);
        if (t < 1 - 1e-9 || t > 2 + 1e-9) continue;
        for (int c = 0; c < 3; c++) sum[c] += mbs_table_get(tr, r, 1 + 3 * col + c);
        cnt++;
      }
      ikm[used] = (mbs_ik_marker){.name = k->name, .body = k->body, .weight = 1};
      memcpy(ikm[used].station, k->location, sizeof(k->location));
      for (int c = 0; c < 3; c++) obs[3 * used + c] = sum[c] / cnt;
      used++;
    }
    mbs_ik_problem pr;
    mbs_ik_problem_default(&pr);
    pr.nmarker = used;
    pr.markers = ikm;
    mbs_ik* ik = NULL;
    mbs_state* st = mbs_state_create(sys);
    if (!mbs_ik_create(sys, &pr, &ik, &err) && !mbs_osim_default_state(om, st) &&
        !mbs_ik_solve(ik, sys, st, obs, NULL, NULL)) {
      const double* e2 = mbs_ik_marker_squared_errors(ik);
      double tot = 0;
      for (int i = 0; i < used; i++) tot += e2[i];
      rms[which] = sqrt(tot / used);
    }
    mbs_ik_free(ik);
    mbs_state_destroy(st);
    free(ikm);
    free(obs);
    mbs_osim_free(om);
  }
  mbs_table_free(tr);
  printf("subject01's static trial: marker error RMS %.4g m with the generic model, %.4g m with "
         "the scaled model (its markers scaled), %.3g m once its markers are placed\n", rms[0],
         rms[1], rms[2]);
  EXPECT_TRUE(rms[1] < rms[0]);
  EXPECT_TRUE(rms[2] < 1e-6);
  free(subj.l);
  return 0;
}

//---------------------------------- OpenSim's own test -----------------------------------------

static int test_opensim(const char* dir) {
  char setup[600], std_file[600];
  snprintf(setup, sizeof(setup), "%s/Scale/subject01_Setup_Scale.xml", dir);
  snprintf(std_file, sizeof(std_file), "%s/Scale/std_subject01_scaleSet_applied.xml", dir);
  struct stat sb;
  if (stat(setup, &sb) || stat(std_file, &sb)) {
    printf("SKIPPED: no OpenSim Scale test files (Scale/subject01_Setup_Scale.xml, "
           "std_subject01_scaleSet_applied.xml) under %s\n", dir);
    return 77;
  }
  char* log = NULL;
  const int rc = run_setup(setup, tmpdir, &log);
  EXPECT_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "%s\n", log);
  free(log);
  // testScale's comparison: every Scale of the standard found by segment, its factors equal
  char mine[600];
  snprintf(mine, sizeof(mine), "%s/subject01_scaleSet_applied.xml", tmpdir);
  leaves a, b;
  EXPECT_OK(read_leaves(mine, &a));
  EXPECT_OK(read_leaves(std_file, &b));
  int n = 0, exact = 0;
  double worst = 0;
  for (int i = 0; i < b.n; i++) {
    if (!strstr(b.l[i].path, "/scales")) continue;
    // the segment follows its scales in the file: matched by position among the Scales
    const leaf* want = &b.l[i];
    const leaf* got = NULL;
    for (int j = 0, k = 0; j < a.n && !got; j++)
      if (strstr(a.l[j].path, "/scales") && k++ == n) got = &a.l[j];
    n++;
    if (!got) continue;
    int same = 1;
    for (int k = 0; k < 3; k++) {
      const double d = fabs(got->v[k] - want->v[k]) / fabs(want->v[k]);
      if (d > worst) worst = d;
      same &= got->v[k] == want->v[k];
      EXPECT_NEAR(got->v[k], want->v[k], 1e-8);
    }
    exact += same;
  }
  printf("OpenSim's scale test (subject01, gait2354): %d segments, %d bit-identical to "
         "std_subject01_scaleSet_applied.xml, largest relative difference %.2g\n", n, exact,
         worst);
  EXPECT_EQ_INT(n, 13);
  free(a.l);
  free(b.l);
  return 0;
}

int main(int argc, char** argv) {
  const char* data = NULL;
  const char* opensim = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else if (!strcmp(argv[i], "--opensim") && i + 1 < argc) opensim = argv[++i];
  }
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mbs_test_tool_scale_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
    return 1;
  }
  int rc = 0;
  if (data) {
    rc = test_gait(data);
  } else if (opensim) {
    rc = test_opensim(opensim);
  } else {
    test_small_model();
    test_bad_input();
  }
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  if (!getenv("MBS_TEST_KEEP") && system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
  xmlCleanupParser();
  if (rc == 77) return 77;
  return mbs_test_finish("test_tool_scale");
}
