// The .osim reader: a model written here (joints, offset frames, CustomJoint functions, a
// coupler, a locked coordinate, a muscle, an unknown element) against closed forms; broken
// files give errors naming the file, the line and the component; and, with --data DIR (the
// shared folder), every published model loads with the counts its file states, and the double
// pendulum's accelerations match the closed form (also through `mbstudy model accel` when
// --mbstudy PATH is given). Exits 77 (skipped) when --data names a missing folder.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mbs/mbs.h"
#include "mbs/inverse_dynamics.h"
#include "mbs/osim.h"
#include "mbs/posture_adapt.h"
#include "mbs/scale.h"
#include "mbs/setup_template.h"
#include "mbs/table.h"
#include "mbs_test.h"

static const double g0 = 9.80665;
static char tmpdir[256];

static void write_file(const char* path, const char* text, size_t n) {
  FILE* f = fopen(path, "wb");
  EXPECT_TRUE(f != NULL);
  if (!f) return;
  fwrite(text, 1, n, f);
  fclose(f);
}

// A pendulum on a PinJoint hung from an offset frame on Ground, a second link on a CustomJoint
// (rotation about z by the coordinate, a translation along x by a spline of it), a third link
// welded to the second, a coupler making q3 (a pin on link 4) equal 0.5 q2, a locked
// coordinate, a marker, a muscle path and an element mbstudy does not know.
static const char* model_text =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "  <Model name=\"testmodel\">\n"
    "    <Ground name=\"ground\"/>\n"
    "    <gravity>0 -9.80665 0</gravity>\n"
    "    <BodySet name=\"bodyset\"><objects>\n"
    "      <Body name=\"link1\">\n"
    "        <mass>2</mass><mass_center>0 -0.4 0</mass_center>\n"
    "        <inertia>0.1 0.1 0.05 0 0 0</inertia>\n"
    "      </Body>\n"
    "      <Body name=\"link2\">\n"
    "        <mass>1</mass><mass_center>0 -0.3 0</mass_center>\n"
    "        <inertia>0.02 0.02 0.03 0 0 0</inertia>\n"
    "      </Body>\n"
    "      <Body name=\"link3\">\n"
    "        <mass>0.5</mass><mass_center>0.1 0 0</mass_center>\n"
    "        <inertia>0.01 0.01 0.01 0 0 0</inertia>\n"
    "      </Body>\n"
    "      <Body name=\"link4\">\n"
    "        <mass>0.7</mass><mass_center>0 -0.2 0</mass_center>\n"
    "        <inertia>0.01 0.01 0.01 0 0 0</inertia>\n"
    "      </Body>\n"
    "    </objects></BodySet>\n"
    "    <JointSet name=\"jointset\"><objects>\n"
    "      <PinJoint name=\"hinge\">\n"
    "        <socket_parent_frame>ground_offset</socket_parent_frame>\n"
    "        <socket_child_frame>/bodyset/link1</socket_child_frame>\n"
    "        <coordinates><Coordinate name=\"q1\">\n"
    "          <default_value>0.3</default_value><default_speed_value>-0.2</default_speed_value>\n"
    "          <range>-3 3</range><clamped>false</clamped><locked>false</locked>\n"
    "          <prescribed>false</prescribed>\n"
    "        </Coordinate></coordinates>\n"
    "        <frames><PhysicalOffsetFrame name=\"ground_offset\">\n"
    "          <socket_parent>/ground</socket_parent>\n"
    "          <translation>0 1.5 0</translation><orientation>0 0 0</orientation>\n"
    "        </PhysicalOffsetFrame></frames>\n"
    "      </PinJoint>\n"
    "      <CustomJoint name=\"knee\">\n"
    "        <socket_parent_frame>link1_offset</socket_parent_frame>\n"
    "        <socket_child_frame>link2</socket_child_frame>\n"
    "        <coordinates><Coordinate name=\"q2\">\n"
    "          <default_value>-0.5</default_value><range>-2 1</range>\n"
    "        </Coordinate></coordinates>\n"
    "        <frames><PhysicalOffsetFrame name=\"link1_offset\">\n"
    "          <socket_parent>/bodyset/link1</socket_parent>\n"
    "          <translation>0 -0.8 0</translation><orientation>0 0 0</orientation>\n"
    "        </PhysicalOffsetFrame></frames>\n"
    "        <SpatialTransform>\n"
    "          <TransformAxis name=\"rotation1\"><coordinates>q2</coordinates><axis>0 0 1</axis>\n"
    "            <LinearFunction name=\"function\"><coefficients>1 0</coefficients>"
    "</LinearFunction></TransformAxis>\n"
    "          <TransformAxis name=\"rotation2\"><coordinates></coordinates><axis>0 1 0</axis>\n"
    "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
    "          <TransformAxis name=\"rotation3\"><coordinates></coordinates><axis>1 0 0</axis>\n"
    "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
    "          <TransformAxis name=\"translation1\"><coordinates>q2</coordinates><axis>1 0 0"
    "</axis>\n"
    "            <SimmSpline name=\"function\"><x>-2 -1 0 1</x><y>-0.01 0.002 0.004 0.001</y>"
    "</SimmSpline></TransformAxis>\n"
    "          <TransformAxis name=\"translation2\"><coordinates></coordinates><axis>0 1 0"
    "</axis>\n"
    "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
    "          <TransformAxis name=\"translation3\"><coordinates></coordinates><axis>0 0 1"
    "</axis>\n"
    "            <Constant name=\"function\"><value>0</value></Constant></TransformAxis>\n"
    "        </SpatialTransform>\n"
    "      </CustomJoint>\n"
    "      <WeldJoint name=\"weld\">\n"
    "        <socket_parent_frame>/bodyset/link2</socket_parent_frame>\n"
    "        <socket_child_frame>/bodyset/link3</socket_child_frame>\n"
    "      </WeldJoint>\n"
    "      <PinJoint name=\"toe\">\n"
    "        <socket_parent_frame>l3off</socket_parent_frame>\n"
    "        <socket_child_frame>/bodyset/link4</socket_child_frame>\n"
    "        <coordinates><Coordinate name=\"q3\"><default_value>0.1</default_value>\n"
    "          </Coordinate><Coordinate name=\"extra\"/></coordinates>\n"
    "        <frames><PhysicalOffsetFrame name=\"l3off\">\n"
    "          <socket_parent>/bodyset/link3</socket_parent>\n"
    "          <translation>0.2 0 0</translation><orientation>0 0 0.4</orientation>\n"
    "        </PhysicalOffsetFrame></frames>\n"
    "      </PinJoint>\n"
    "    </objects></JointSet>\n"
    "    <ConstraintSet name=\"constraintset\"><objects>\n"
    "      <CoordinateCouplerConstraint name=\"couple\">\n"
    "        <isEnforced>true</isEnforced>\n"
    "        <coupled_coordinates_function><LinearFunction><coefficients>0.5 0</coefficients>"
    "</LinearFunction></coupled_coordinates_function>\n"
    "        <independent_coordinate_names>q2</independent_coordinate_names>\n"
    "        <dependent_coordinate_name>q3</dependent_coordinate_name>\n"
    "      </CoordinateCouplerConstraint>\n"
    "    </objects></ConstraintSet>\n"
    "    <ForceSet name=\"forceset\"><objects>\n"
    "      <Thelen2003Muscle name=\"m1\">\n"
    "        <GeometryPath name=\"geometrypath\"><PathPointSet><objects>\n"
    "          <PathPoint name=\"p1\"><socket_parent_frame>/bodyset/link1</socket_parent_frame>"
    "<location>0.01 -0.1 0</location></PathPoint>\n"
    "          <PathPoint name=\"p2\"><socket_parent_frame>/bodyset/link2</socket_parent_frame>"
    "<location>0.02 -0.1 0</location></PathPoint>\n"
    "        </objects></PathPointSet></GeometryPath>\n"
    "        <max_isometric_force>1000</max_isometric_force>\n"
    "      </Thelen2003Muscle>\n"
    "      <WobblyForce name=\"wobble\"><strength>3</strength></WobblyForce>\n"
    "    </objects></ForceSet>\n"
    "    <MarkerSet name=\"markerset\"><objects>\n"
    "      <Marker name=\"tip\"><socket_parent_frame>/bodyset/link1</socket_parent_frame>\n"
    "        <location>0 -0.8 0</location><fixed>false</fixed></Marker>\n"
    "    </objects></MarkerSet>\n"
    "  </Model>\n"
    "</OpenSimDocument>\n";

static void path_in_tmp(char* out, size_t n, const char* name) {
  snprintf(out, n, "%s/%s", tmpdir, name);
}

// parameter values given with the options (a study's draws for the tools): a factor on every
// matched block's own value, a value for one component; unknown paths and values outside a
// parameter's range refused with the model's file and the parameter
static void test_param_values(const char* text) {
  const mbs_osim_param_value set[] = {
      {.path = "/bodyset/link?/mass", .value = 1.5, .is_scale = 1},
      {.path = "/bodyset/link1/inertia", .component = 2, .value = 0.07},
      {.path = "/forceset/m1/max_isometric_force", .value = 0.5, .is_scale = 1}};
  mbs_osim_options o = {.param_values = set, .nparam_values = 3};
  mbs_error err;
  mbs_osim_model* m = mbs_osim_parse(text, strlen(text), "drawn.osim", &o, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) {
    printf("%s\n", err.message);
    return;
  }
  const mbs_system* sys = mbs_osim_system(m);
  const char* names[4] = {"link1", "link2", "link3", "link4"};
  const double file_mass[4] = {2, 1, 0.5, 0.7};  // the file's
  for (int b = 0; b < 4; b++) {
    char path[64];
    snprintf(path, sizeof(path), "/bodyset/%s/mass", names[b]);
    const mbs_param_info* pi = mbs_system_find_param(sys, path);
    EXPECT_TRUE(pi != NULL);
    if (pi) EXPECT_NEAR(mbs_system_param_default(sys, pi->index), 1.5 * file_mass[b], 1e-15);
  }
  const mbs_param_info* pin = mbs_system_find_param(sys, "/bodyset/link1/inertia");
  EXPECT_TRUE(pin != NULL);
  if (pin) {
    EXPECT_NEAR(mbs_system_param_default(sys, pin->index + 2), 0.07, 0);
    EXPECT_NEAR(mbs_system_param_default(sys, pin->index + 0), 0.1, 0);  // the others: the file's
  }
  const mbs_param_info* pf = mbs_system_find_param(sys, "/forceset/m1/max_isometric_force");
  if (pf) EXPECT_NEAR(mbs_system_param_default(sys, pf->index), 500, 1e-12);
  // a State made from the model takes them
  mbs_state* st = mbs_state_create(sys);
  EXPECT_NEAR(mbs_state_params(st)[pin ? pin->index + 2 : 0], pin ? 0.07 : 0, 0);
  mbs_state_destroy(st);
  mbs_osim_free(m);
  // refused: a path that names nothing, a value outside the valid range, NaN
  const mbs_osim_param_value bad[3] = {{.path = "/bodyset/femur_r/mass", .value = 1},
                                       {.path = "/bodyset/link2/mass", .value = -1},
                                       {.path = "/bodyset/link2/mass", .value = NAN}};
  const int code[3] = {MBS_ERR_UNKNOWN_NAME, MBS_ERR_ARGUMENT, MBS_ERR_ARGUMENT};
  const char* want[3] = {"/bodyset/femur_r/mass", "outside its valid range",
                         "outside its valid range"};
  for (int k = 0; k < 3; k++) {
    mbs_osim_options ob = {.param_values = &bad[k], .nparam_values = 1};
    m = mbs_osim_parse(text, strlen(text), "drawn.osim", &ob, &err);
    EXPECT_TRUE(m == NULL);
    mbs_osim_free(m);
    printf("refused: %s\n", err.message);
    EXPECT_EQ_INT(err.code, code[k]);
    EXPECT_TRUE(strstr(err.message, want[k]) && strstr(err.message, "drawn.osim"));
  }
}

static void test_written_model(void) {
  char path[512];
  path_in_tmp(path, sizeof(path), "testmodel.osim");
  // "extra" coordinate makes the PinJoint wrong: first check that error, then fix it
  write_file(path, model_text, strlen(model_text));
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m == NULL);
  printf("two coordinates on a PinJoint: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, "testmodel.osim:") != NULL);
  EXPECT_TRUE(strstr(err.message, "PinJoint 'toe'") != NULL);
  char* fixed = strdup(model_text);
  char* x = strstr(fixed, "<Coordinate name=\"extra\"/>");
  memset(x, ' ', strlen("<Coordinate name=\"extra\"/>"));
  write_file(path, fixed, strlen(fixed));
  m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) {
    printf("%s\n", err.message);
    free(fixed);
    return;
  }
  const mbs_system* sys = mbs_osim_system(m);
  EXPECT_EQ_INT(mbs_osim_ncoordinate(m), 3);
  EXPECT_EQ_INT(mbs_system_nbody(sys), 5);
  EXPECT_EQ_INT(mbs_osim_nmuscle(m), 1);
  EXPECT_EQ_INT(mbs_osim_nmarker(m), 1);
  EXPECT_EQ_INT(mbs_system_nconstraint(sys), 1);
  // the unknown force is reported; the muscle is simulated, so it draws no warning
  int saw_wobble = 0, saw_muscle = 0;
  for (int i = 0; i < mbs_osim_nwarning(m); i++) {
    const char* w = mbs_osim_warning(m, i);
    printf("warning: %s\n", w);
    saw_wobble |= strstr(w, "WobblyForce 'wobble'") != NULL && strstr(w, "testmodel.osim:") != NULL;
    saw_muscle |= strstr(w, "Thelen2003Muscle 'm1'") != NULL;
  }
  EXPECT_TRUE(saw_wobble && !saw_muscle);
  // the muscle is a force element along a two-point path, with the file's max isometric force
  // and OpenSim's default optimal fiber length where the file has none
  const int fm1 = mbs_force_find(sys, "m1");
  EXPECT_TRUE(fm1 >= 0);
  if (fm1 >= 0) {
    const int path = mbs_force_path(sys, fm1);
    EXPECT_TRUE(path >= 0 && mbs_path_npoint(sys, path) == 2);
    const mbs_param_info* pf = mbs_system_find_param(sys, "/forceset/m1/max_isometric_force");
    const mbs_param_info* pl = mbs_system_find_param(sys, "/forceset/m1/optimal_fiber_length");
    EXPECT_TRUE(pf && pl);
    if (pf) EXPECT_NEAR(mbs_system_param_default(sys, pf->index), 1000, 0);
    if (pl) EXPECT_NEAR(mbs_system_param_default(sys, pl->index), 0.1, 0);
  }
  const mbs_osim_record* r = mbs_osim_record_at(m, 0);
  EXPECT_TRUE(r && !strcmp(r->name, "m1") && r->npoint == 2);
  if (r && r->npoint == 2) {
    EXPECT_EQ_INT(r->points[1].body, mbs_body_find(sys, "link2"));
    EXPECT_NEAR(r->points[1].location[0], 0.02, 0);
  }
  // coordinates in file order, defaults
  EXPECT_TRUE(!strcmp(mbs_osim_coordinate_info(m, 0)->name, "q1"));
  EXPECT_TRUE(!strcmp(mbs_osim_coordinate_info(m, 2)->name, "q3"));
  EXPECT_NEAR(mbs_osim_coordinate_info(m, 1)->range[0], -2, 0);
  // the default pose: the coupler makes q3 = 0.5 q2 (assembly moves q3, the dependent one)
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_osim_default_state(m, st));
  double q[3], u[3];
  mbs_osim_get_coordinates(m, st, q, u);
  printf("default pose: q = %g %g %g, u = %g %g %g\n", q[0], q[1], q[2], u[0], u[1], u[2]);
  EXPECT_NEAR(q[0], 0.3, 1e-9);
  EXPECT_NEAR(q[2], 0.5 * q[1], 1e-9);
  EXPECT_NEAR(u[0], -0.2, 1e-9);
  // marker in Ground: hinge at (0, 1.5, 0), rotated by q1 about z, then (0, -0.8, 0)
  double p[3];
  const mbs_osim_marker* mk = mbs_osim_marker_at(m, 0);
  EXPECT_OK(mbs_realize_position(sys, st));
  EXPECT_OK(mbs_get_station_location(sys, st, mk->body, mk->location, p));
  EXPECT_NEAR(p[0], 0.8 * sin(q[0]), 1e-12);
  EXPECT_NEAR(p[1], 1.5 - 0.8 * cos(q[0]), 1e-12);
  // link2's origin: the knee at the marker, shifted along link1's x by the spline of q2
  double o2[3];
  const double zero[3] = {0, 0, 0};
  EXPECT_OK(mbs_get_station_location(sys, st, mbs_body_find(sys, "link2"), zero, o2));
  const double dx = o2[0] - p[0], dy = o2[1] - p[1];
  const double along = dx * cos(q[0]) + dy * sin(q[0]);   // link1's x axis in Ground
  const double across = -dx * sin(q[0]) + dy * cos(q[0]);
  printf("knee translation along link1 x: %.6f (spline of q2 = %.3f), across: %.2e\n", along,
         q[1], across);
  EXPECT_ABS(across, 0, 1e-12);
  EXPECT_TRUE(along > 0.002 && along < 0.0045);  // the spline between its knots -1 and 0
  mbs_state_destroy(st);
  mbs_osim_free(m);
  test_param_values(fixed);
  free(fixed);
}

// a ContactMesh (an OBJ square plate 0.2 m x 0.2 m facing down, written here; the slider's
// frame is turned so that it moves along Ground y, the mesh's turned back) pressed into a
// ContactHalfSpace by an ElasticFoundationForce: the platform is rigid (OpenSim uses the mesh's
// parameters only), so the force at depth x is k A x
static void test_contact_mesh_model(void) {
  char obj[512], path[512];
  path_in_tmp(obj, sizeof(obj), "plate.obj");
  const char* plate = "v -0.1 0 -0.1\nv 0.1 0 -0.1\nv 0.1 0 0.1\nv -0.1 0 0.1\nf 1 2 3 4\n";
  write_file(obj, plate, strlen(plate));
  const char* text =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\"><Model name=\"press\">\n"
      "  <gravity>0 0 0</gravity>\n"
      "  <BodySet><objects><Body name=\"plate\"><mass>1</mass>"
      "<inertia>0.01 0.01 0.01 0 0 0</inertia></Body></objects></BodySet>\n"
      "  <JointSet><objects><SliderJoint name=\"lift\">\n"
      "    <socket_parent_frame>up</socket_parent_frame>\n"
      "    <socket_child_frame>/bodyset/plate</socket_child_frame>\n"
      "    <coordinates><Coordinate name=\"h\"><default_value>0.1</default_value></Coordinate>"
      "</coordinates>\n"
      "    <frames><PhysicalOffsetFrame name=\"up\"><socket_parent>/ground</socket_parent>"
      "<translation>0 0 0</translation><orientation>0 0 1.5707963267948966</orientation>"
      "</PhysicalOffsetFrame></frames>\n"
      "  </SliderJoint></objects></JointSet>\n"
      "  <ContactGeometrySet><objects>\n"
      "    <ContactHalfSpace name=\"floor\"><socket_frame>/ground</socket_frame>"
      "<location>0 0 0</location><orientation>0 0 -1.5707963267948966</orientation>"
      "</ContactHalfSpace>\n"
      "    <ContactMesh name=\"pad\"><socket_frame>/bodyset/plate</socket_frame>"
      "<location>0 0 0</location><orientation>0 0 -1.5707963267948966</orientation>"
      "<filename>plate.obj</filename></ContactMesh>\n"
      "  </objects></ContactGeometrySet>\n"
      "  <ForceSet><objects><ElasticFoundationForce name=\"ef\">\n"
      "    <ElasticFoundationForce::ContactParametersSet name=\"contact_parameters\"><objects>\n"
      "      <ElasticFoundationForce::ContactParameters><geometry>pad floor</geometry>"
      "<stiffness>1e7</stiffness><dissipation>0</dissipation><static_friction>0"
      "</static_friction><dynamic_friction>0</dynamic_friction><viscous_friction>0"
      "</viscous_friction></ElasticFoundationForce::ContactParameters>\n"
      "    </objects></ElasticFoundationForce::ContactParametersSet>\n"
      "    <transition_velocity>0.01</transition_velocity>\n"
      "  </ElasticFoundationForce></objects></ForceSet>\n"
      "</Model></OpenSimDocument>\n";
  path_in_tmp(path, sizeof(path), "press.osim");
  write_file(path, text, strlen(text));
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) {
    printf("press.osim: %s\n", err.message);
    return;
  }
  const mbs_system* sys = mbs_osim_system(m);
  EXPECT_EQ_INT(mbs_system_ncontact_geometry(sys), 2);
  mbs_state* st = mbs_state_create(sys);
  const double x = 1e-3;  // the slider along Ground y (its x axis turned by 90 deg about z)
  const double h = -x, zero = 0;
  mbs_osim_set_coordinates(m, st, &h, &zero);
  double a;
  EXPECT_OK(mbs_osim_get_accelerations(m, st, &a));
  const double want = 1e7 * 0.04 * x;  // k A x on the 1 kg plate
  printf("ContactMesh pressed %.0e m into the floor: force %.6f N, k A x = %.6f N\n", x, a, want);
  EXPECT_NEAR(a, want, 1e-9 * want);
  mbs_state_destroy(st);
  mbs_osim_free(m);
  // the mesh file missing: an error naming the file
  remove(obj);
  m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m == NULL && strstr(err.message, "plate.obj") && strstr(err.message, "press.osim:"));
  printf("missing mesh: %s\n", err.message);
  mbs_osim_free(m);
}

// broken files: generated from the model above
static void expect_broken(const char* name, const char* text, size_t n, const char* want1,
                          const char* want2) {
  char path[512];
  path_in_tmp(path, sizeof(path), name);
  write_file(path, text, n);
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m == NULL);
  mbs_osim_free(m);
  printf("%-22s -> %s\n", name, err.message);
  EXPECT_TRUE(err.code != MBS_OK);
  EXPECT_TRUE(strstr(err.message, name) != NULL);
  if (want1) EXPECT_TRUE(strstr(err.message, want1) != NULL);
  if (want2) EXPECT_TRUE(strstr(err.message, want2) != NULL);
}

static char* replace(const char* s, const char* from, const char* to) {
  const char* at = strstr(s, from);
  if (!at) return strdup(s);
  const size_t a = (size_t)(at - s), lf = strlen(from), lt = strlen(to), ls = strlen(s);
  char* r = malloc(ls - lf + lt + 1);
  memcpy(r, s, a);
  memcpy(r + a, to, lt);
  memcpy(r + a + lt, at + lf, ls - a - lf + 1);
  return r;
}

static void test_broken_files(void) {
  char* good = replace(model_text, "<Coordinate name=\"extra\"/>", "");
  const size_t n = strlen(good);
  expect_broken("truncated.osim", good, n / 2, "malformed XML", ":");
  expect_broken("empty.osim", "", 0, "malformed XML", NULL);
  expect_broken("notxml.osim", "this is not xml\n", 16, "malformed XML", NULL);
  expect_broken("wrongroot.osim", "<?xml version=\"1.0\"?>\n<Foo/>\n", 29, "not an OpenSim", NULL);
  char* t = replace(good, "<mass>2</mass>", "<mass>two</mass>");
  expect_broken("badmass.osim", t, strlen(t), "Body 'link1'", "<mass>");
  free(t);
  t = replace(good, "<PinJoint name=\"hinge\">", "<HingeJoint name=\"hinge\">");
  char* t2 = replace(t, "</PinJoint>\n      <CustomJoint", "</HingeJoint>\n      <CustomJoint");
  expect_broken("unknownjoint.osim", t2, strlen(t2), "HingeJoint 'hinge'", "not supported");
  free(t);
  free(t2);
  t = replace(good, "<socket_child_frame>/bodyset/link1</socket_child_frame>",
              "<socket_child_frame>/bodyset/nothere</socket_child_frame>");
  expect_broken("badsocket.osim", t, strlen(t), "PinJoint 'hinge'", "nothere");
  free(t);
  t = replace(good, "<x>-2 -1 0 1</x>", "<x>-2 -1 -1 1</x>");
  expect_broken("badspline.osim", t, strlen(t), "CustomJoint 'knee'", "increase");
  free(t);
  t = replace(good, "<dependent_coordinate_name>q3", "<dependent_coordinate_name>q9");
  expect_broken("badcoupler.osim", t, strlen(t), "CoordinateCouplerConstraint 'couple'", "q9");
  free(t);
  t = replace(good, "<inertia>0.1 0.1 0.05 0 0 0</inertia>", "<inertia>0.1 0.1</inertia>");
  expect_broken("shortinertia.osim", t, strlen(t), "Body 'link1'", "6 numbers");
  free(t);
  // an older version number: the document is converted on load, and OpenSim 4 elements it
  // already has are kept as they are
  t = replace(good, "<OpenSimDocument Version=\"40000\">", "<OpenSimDocument Version=\"20302\">");
  {
    mbs_error e;
    mbs_osim_model* old = mbs_osim_parse(t, strlen(t), "oldversion.osim", NULL, &e);
    EXPECT_TRUE(old != NULL && mbs_osim_version(old) == 20302);
    mbs_osim_free(old);
  }
  free(t);
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read("/nonexistent/dir/model.osim", &err);
  EXPECT_TRUE(m == NULL && strstr(err.message, "/nonexistent/dir/model.osim") != NULL);
  free(good);
}

//---------------------------------- entity declarations ----------------------------------------

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// the model's text with a document type holding `dtd` (line 2 of the file) and `body_edit`
// replacing the Ground element (to use an entity); malloc'ed
static char* with_doctype(const char* good, const char* dtd, const char* ground) {
  const char* nl = strchr(good, '\n');
  char* head = mbs_format_string("%.*s<!DOCTYPE OpenSimDocument [%s]>\n%s",
                                 (int)(nl - good + 1), good, dtd, nl + 1);
  char* t = replace(head, "<Ground name=\"ground\"/>", ground);
  free(head);
  return t;
}

// a refused document: NULL within 2 s, a message naming the file, its line and entities
static void expect_entities_refused(const char* what, int failed, const mbs_error* err,
                                    const char* file, int line, double t0) {
  const double dt = seconds_now() - t0;
  printf("%-28s -> %.3f s: %s\n", what, dt, err->message);
  char at[600];
  snprintf(at, sizeof(at), "%s:%d: ", file, line);
  EXPECT_TRUE(failed);
  EXPECT_TRUE(err->code == MBS_ERR_PARSE);
  EXPECT_TRUE(strstr(err->message, at) != NULL);
  EXPECT_TRUE(strstr(err->message, "entity declarations are not allowed") != NULL);
  EXPECT_TRUE(dt < 2.0);
}

// OpenSim files never declare entities; documents that do are refused by every XML reader,
// before anything is expanded: the "billion laughs" (10 entities, each ten of the one before:
// 10^10 characters, gigabytes once expanded), a single harmless entity, a parameter entity and
// an external entity; a document type without entities is still read, and so is the model
static void test_entities(void) {
  char* good = replace(model_text, "<Coordinate name=\"extra\"/>", "");
  char dtd[2048] = "<!ENTITY a \"aaaaaaaaaa\">";
  for (char e = 'b'; e <= 'j'; e++) {
    char decl[128];
    snprintf(decl, sizeof(decl), "<!ENTITY %c \"&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;\">", e,
             e - 1, e - 1, e - 1, e - 1, e - 1, e - 1, e - 1, e - 1, e - 1, e - 1);
    strcat(dtd, decl);
  }
  char* laughs = with_doctype(good, dtd, "<Ground name=\"&j;\"/><name>&j;</name>");
  char path[512];
  mbs_error err;

  // the model reader, from a file and from memory
  path_in_tmp(path, sizeof(path), "laughs.osim");
  write_file(path, laughs, strlen(laughs));
  double t0 = seconds_now();
  mbs_osim_model* m = mbs_osim_read(path, &err);
  expect_entities_refused("billion laughs (file)", m == NULL, &err, "laughs.osim", 2, t0);
  EXPECT_TRUE(strstr(err.message, "in a model file") != NULL);
  mbs_osim_free(m);
  t0 = seconds_now();
  m = mbs_osim_parse(laughs, strlen(laughs), "laughs_mem.osim", NULL, &err);
  expect_entities_refused("billion laughs (memory)", m == NULL, &err, "laughs_mem.osim", 2, t0);
  mbs_osim_free(m);

  // the other readers of models: scaling, the posture platform, inverse dynamics
  t0 = seconds_now();
  mbs_scale_model* sm = mbs_scale_model_read(path, &err);
  expect_entities_refused("billion laughs (scale)", sm == NULL, &err, path, 2, t0);
  mbs_scale_model_free(sm);
  t0 = seconds_now();
  char* adapted = mbs_posture_adapt_osim(laughs, strlen(laughs), "laughs_pa.osim", NULL, &err);
  expect_entities_refused("billion laughs (posture)", adapted == NULL, &err, "laughs_pa.osim",
                          2, t0);
  free(adapted);
  {
    mbs_id_options o;
    mbs_id_options_default(&o);
    o.model_file = path;
    o.coordinates_file = "/nonexistent/coordinates.mot";
    mbs_id* id = NULL;
    t0 = seconds_now();
    const int rc = mbs_id_create(&o, &id, &err);
    expect_entities_refused("billion laughs (ID)", rc != MBS_OK && id == NULL, &err, path, 2,
                            t0);
    mbs_id_free(id);
  }

  // a setup file, and an external loads file given with a good model
  char setup[512];
  path_in_tmp(setup, sizeof(setup), "laughs_setup.xml");
  {
    char* text = mbs_format_string(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE OpenSimDocument [%s]>\n"
        "<OpenSimDocument Version=\"40000\"><InverseDynamicsTool name=\"id\">\n"
        "<results_directory>&j;</results_directory></InverseDynamicsTool></OpenSimDocument>\n",
        dtd);
    write_file(setup, text, strlen(text));
    free(text);
  }
  t0 = seconds_now();
  char* dir = mbs_setup_element_text(setup, "results_directory", &err);
  expect_entities_refused("billion laughs (setup)", dir == NULL, &err, setup, 2, t0);
  EXPECT_TRUE(strstr(err.message, "in a setup file") != NULL);
  free(dir);
  char model[512], loads[512];
  path_in_tmp(model, sizeof(model), "good_for_loads.osim");
  write_file(model, good, strlen(good));
  path_in_tmp(loads, sizeof(loads), "laughs_grf.xml");
  {
    char* text = mbs_format_string(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE OpenSimDocument [%s]>\n"
        "<OpenSimDocument Version=\"40000\"><ExternalLoads name=\"x\">\n"
        "<datafile>&j;</datafile></ExternalLoads></OpenSimDocument>\n", dtd);
    write_file(loads, text, strlen(text));
    free(text);
  }
  mbs_osim_options opt = {.external_loads = loads};
  t0 = seconds_now();
  m = mbs_osim_read_options(model, &opt, &err);
  expect_entities_refused("billion laughs (loads)", m == NULL, &err, "laughs_grf.xml", 2, t0);
  EXPECT_TRUE(strstr(err.message, "in an external loads file") != NULL);
  mbs_osim_free(m);

  // one harmless entity, a parameter entity, an external entity (never fetched): refused too
  static const char* const one[][2] = {
      {"one_entity.osim", "<!ENTITY x \"1\">"},
      {"param_entity.osim", "<!ENTITY % p \"<!ENTITY x 'y'>\">"},
      {"external_entity.osim", "<!ENTITY x SYSTEM \"file:///etc/passwd\">"},
      {"unparsed_entity.osim", "<!NOTATION gif SYSTEM \"gif\"><!ENTITY x SYSTEM \"a.gif\" NDATA gif>"},
  };
  for (size_t k = 0; k < sizeof(one) / sizeof(one[0]); k++) {
    char* t = with_doctype(good, one[k][1], "<Ground name=\"ground\"/>");
    path_in_tmp(path, sizeof(path), one[k][0]);
    write_file(path, t, strlen(t));
    t0 = seconds_now();
    m = mbs_osim_read(path, &err);
    expect_entities_refused(one[k][0], m == NULL, &err, one[k][0], 2, t0);
    EXPECT_TRUE(strstr(err.message, "root:") == NULL);  // nothing of /etc/passwd
    mbs_osim_free(m);
    free(t);
  }
  // a reference to an entity not declared (nothing to expand): malformed, not read
  {
    char* t = replace(good, "<Ground name=\"ground\"/>", "<Ground name=\"&x;\"/>");
    path_in_tmp(path, sizeof(path), "undeclared.osim");
    write_file(path, t, strlen(t));
    m = mbs_osim_read(path, &err);
    EXPECT_TRUE(m == NULL && strstr(err.message, "undeclared.osim") != NULL);
    mbs_osim_free(m);
    free(t);
  }

  // a document type without entities, and the model itself: read
  char* plain = with_doctype(good, "", "<Ground name=\"ground\"/>");
  path_in_tmp(path, sizeof(path), "doctype.osim");
  write_file(path, plain, strlen(plain));
  m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) fprintf(stderr, "  doctype.osim: %s\n", err.message);
  mbs_osim_free(m);
  m = mbs_osim_read(model, &err);
  EXPECT_TRUE(m != NULL && mbs_osim_system(m) != NULL);
  if (!m) fprintf(stderr, "  good_for_loads.osim: %s\n", err.message);
  mbs_osim_free(m);
  free(plain);
  free(laughs);
  free(good);
}

//---------------------------------- published models -------------------------------------------

// count "<tag" occurrences in a file's text (an independent count of the file's elements),
// skipping name="default" (the defaults section of a document)
static int count_tags(const char* text, const char* prefix_re_suffix, int suffix) {
  int n = 0;
  for (const char* p = text; (p = strstr(p, suffix ? " name=\"" : prefix_re_suffix)); p++) {
    if (!suffix) {
      n++;
      continue;
    }
    // an element whose tag ends in prefix_re_suffix: "<...Muscle name=\""
    const char* lt = p;
    while (lt > text && *lt != '<' && *lt != '>' && *lt != '\n') lt--;
    if (*lt != '<') continue;
    const size_t taglen = (size_t)(p - lt - 1);
    const size_t sl = strlen(prefix_re_suffix);
    if (taglen >= sl && !strncmp(p - sl, prefix_re_suffix, sl) &&
        strncmp(p + 7, "default\"", 8) != 0)
      n++;
  }
  return n;
}

static char* slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void test_published_models(const char* data) {
  static const char* models[] = {
      "arm26.osim", "bouncing_block.osim", "double_pendulum.osim", "gait10dof18musc.osim",
      "gait2354_simbody.osim", "gait2392_millard2012muscle.osim",
      "gait2392_thelen2003muscle.osim", "leg6dof9musc.osim", "rajagopal2016.osim",
      "toy_landing.osim", "tug_of_war.osim"};
  for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/models/%s", data, models[i]);
    char* text = slurp(path);
    EXPECT_TRUE(text != NULL);
    if (!text) continue;
    mbs_error err;
    mbs_osim_model* m = mbs_osim_read(path, &err);
    EXPECT_TRUE(m != NULL);
    if (!m) {
      printf("%s: %s\n", models[i], err.message);
      free(text);
      continue;
    }
    const int ncoord = count_tags(text, "<Coordinate name=", 0);
    const int nbody = count_tags(text, "<Body name=", 0);
    const int nmarker = count_tags(text, "<Marker name=", 0);
    const int nmuscle = count_tags(text, "Muscle", 1);
    printf("%-34s coordinates %2d (file %2d), bodies %2d (file %2d), muscles %2d (file %2d), "
           "markers %2d (file %2d), constraints %d, forces %d, warnings %d\n",
           models[i], mbs_osim_ncoordinate(m), ncoord, mbs_system_nbody(mbs_osim_system(m)) - 1,
           nbody, mbs_osim_nmuscle(m), nmuscle, mbs_osim_nmarker(m), nmarker,
           mbs_system_nconstraint(mbs_osim_system(m)), mbs_system_nforce(mbs_osim_system(m)),
           mbs_osim_nwarning(m));
    EXPECT_EQ_INT(mbs_osim_ncoordinate(m), ncoord);
    EXPECT_EQ_INT(mbs_system_nbody(mbs_osim_system(m)) - 1, nbody);
    EXPECT_EQ_INT(mbs_osim_nmuscle(m), nmuscle);
    EXPECT_EQ_INT(mbs_osim_nmarker(m), nmarker);
    if (!strcmp(models[i], "gait2354_simbody.osim")) {
      EXPECT_EQ_INT(mbs_osim_ncoordinate(m), 23);
      EXPECT_EQ_INT(mbs_osim_nmuscle(m), 54);
    }
    if (!strncmp(models[i], "gait2392", 8)) {
      EXPECT_EQ_INT(mbs_osim_ncoordinate(m), 23);
      EXPECT_EQ_INT(mbs_osim_nmuscle(m), 92);
    }
    // the default pose assembles and the accelerations there are finite
    mbs_state* st = mbs_state_create(mbs_osim_system(m));
    const int rc = mbs_osim_default_state(m, st);
    EXPECT_OK(rc);
    if (rc) printf("  default pose: %s\n", mbs_state_error(st)->message);
    double* a = calloc((size_t)mbs_osim_ncoordinate(m) + 1, sizeof(double));
    EXPECT_OK(mbs_osim_get_accelerations(m, st, a));
    int finite = 1;
    for (int k = 0; k < mbs_osim_ncoordinate(m); k++) finite &= isfinite(a[k]);
    EXPECT_TRUE(finite);
    free(a);
    mbs_state_destroy(st);
    mbs_osim_free(m);
    free(text);
  }
}

// double pendulum of point masses m1 = m2 = 1 on 0.5 m links (OpenSim's double_pendulum.osim:
// each rod's mass sits at its origin, 0.5 m below its pin): with absolute angles t1 = q1,
// t2 = q1 + q2 from the downward vertical,
//   (m1 + m2) L1 t1'' + m2 L2 t2'' cos(t1 - t2) + m2 L2 t2'^2 sin(t1 - t2) + (m1 + m2) g sin t1 = 0
//   L2 t2'' + L1 t1'' cos(t1 - t2) - L1 t1'^2 sin(t1 - t2) + g sin t2 = 0
static void closed_form(const double q[2], const double u[2], double a[2]) {
  const double m1 = 1, m2 = 1, L1 = 0.5, L2 = 0.5;
  const double t1 = q[0], t2 = q[0] + q[1], w1 = u[0], w2 = u[0] + u[1];
  const double c = cos(t1 - t2), s = sin(t1 - t2);
  // [A11 A12; A21 A22] [t1''; t2''] = b
  const double A11 = (m1 + m2) * L1, A12 = m2 * L2 * c, A21 = L1 * c, A22 = L2;
  const double b1 = -m2 * L2 * w2 * w2 * s - (m1 + m2) * g0 * sin(t1);
  const double b2 = L1 * w1 * w1 * s - g0 * sin(t2);
  const double det = A11 * A22 - A12 * A21;
  const double tt1 = (b1 * A22 - A12 * b2) / det, tt2 = (A11 * b2 - A21 * b1) / det;
  a[0] = tt1;
  a[1] = tt2 - tt1;
}

static void test_double_pendulum(const char* data, const char* mbstudy) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/models/double_pendulum.osim", data);
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) return;
  mbs_state* st = mbs_state_create(mbs_osim_system(m));
  mbs_test_rng rng = {2354};
  double worst = 0;
  char spath[512];
  path_in_tmp(spath, sizeof(spath), "dp_states.txt");
  FILE* sf = fopen(spath, "w");
  double want[8][2];
  for (int k = 0; k < 8; k++) {
    double q[2], u[2], a[2], e[2];
    for (int i = 0; i < 2; i++) {
      q[i] = mbs_test_uniform(&rng, -2, 2);
      u[i] = mbs_test_uniform(&rng, -3, 3);
    }
    mbs_osim_set_coordinates(m, st, q, u);
    EXPECT_OK(mbs_osim_get_accelerations(m, st, a));
    closed_form(q, u, e);
    for (int i = 0; i < 2; i++) {
      worst = fmax(worst, fabs(a[i] - e[i]) / fmax(1, fabs(e[i])));
      want[k][i] = e[i];
    }
    if (sf) fprintf(sf, "%.17g %.17g %.17g %.17g\n", q[0], q[1], u[0], u[1]);
  }
  if (sf) fclose(sf);
  printf("double_pendulum.osim against the closed form: worst relative difference %.2e\n", worst);
  EXPECT_TRUE(worst < 1e-12);
  if (mbstudy && sf) {
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' model accel '%s' --states '%s'", mbstudy, path, spath);
    FILE* p = popen(cmd, "r");
    EXPECT_TRUE(p != NULL);
    int lines = 0;
    double worst_cli = 0;
    double a0, a1;
    while (p && lines < 8 && fscanf(p, "%lf %lf", &a0, &a1) == 2) {
      worst_cli = fmax(worst_cli, fmax(fabs(a0 - want[lines][0]) / fmax(1, fabs(want[lines][0])),
                                       fabs(a1 - want[lines][1]) / fmax(1, fabs(want[lines][1]))));
      lines++;
    }
    const int status = p ? pclose(p) : -1;
    printf("mbstudy model accel: %d lines, worst relative difference %.2e, exit %d\n", lines,
           worst_cli, status);
    EXPECT_EQ_INT(lines, 8);
    EXPECT_EQ_INT(status, 0);
    EXPECT_TRUE(worst_cli < 1e-12);
  }
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

// bouncing_block.osim settles with its heel sphere (R = 0.05 m) on the platform carrying the
// whole weight: m g = (4/3) sqrt(R) E x^(3/2), with E the pair's combined modulus (both
// surfaces 1e8: E = (E1^(2/3) / 2)^(3/2), Simbody paper Appendix A)
static void test_bouncing_block(const char* data) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/models/bouncing_block.osim", data);
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read(path, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_osim_default_state(m, st));
  // the hip bushing's light damping (0.1 N m s/rad) lets the block and link rock for minutes;
  // more damping (a State edit) does not move the equilibrium, only shortens the way there
  for (int k = 0; k < 3; k++)
    EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/hip_bushing/rotational_damping", k, 20));
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/foot_contact_force/heel/dissipation", 0, 50));
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/knee_limit/damping", 0, 50));
  // friction here has no true stiction: the heel creeps until the chain reaches the pose where
  // it needs no friction; strong viscous friction makes that creep quick and well damped
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/foot_contact_force/heel/viscous_friction",
                                0, 100));
  EXPECT_OK(mbs_state_set_param(
      sys, st, "/forceset/foot_contact_force/platform/viscous_friction", 0, 100));
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-5;
  mbs_simulation_result r;
  const int rc = mbs_simulate(sys, st, 10.0, &o, NULL, 0, NULL, NULL, &r);
  EXPECT_OK(rc);
  if (rc) printf("bouncing_block: %s\n", mbs_state_error(st)->message);
  const int f = mbs_force_find(sys, "foot_contact_force");
  EXPECT_TRUE(f >= 0);
  mbs_contact_report rep[4];
  int n = 0;
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_OK(mbs_get_contact_reports(sys, st, f, rep, 4, &n));
  EXPECT_EQ_INT(n, 1);
  double total = 0;
  for (int b = 1; b < mbs_system_nbody(sys); b++) {
    char p[256];
    snprintf(p, sizeof(p), "/bodyset/%s/mass", mbs_body_name(sys, b));
    total += mbs_state_params(st)[mbs_system_find_param(sys, p)->index];
  }
  const double W = total * g0, R = 0.05, E1 = 1e8;
  const double E = pow(pow(E1, 2.0 / 3.0) / 2, 1.5);
  const double x = pow(3 * W / (4 * sqrt(R) * E), 2.0 / 3.0);
  double vmax = 0;
  for (int i = 0; i < mbs_system_nu(sys); i++) vmax = fmax(vmax, fabs(mbs_state_u(st)[i]));
  printf("bouncing_block after 10 s (%ld steps): penetration %.6e m, Hertz equilibrium %.6e m "
         "(weight %.2f N, normal force %.2f N), largest speed %.2e\n", r.integrator.steps,
         n ? rep[0].penetration : NAN, x, W, n ? fabs(mbs_v3_dot(rep[0].force, rep[0].normal)) : NAN,
         vmax);
  if (n == 1) {
    EXPECT_NEAR(rep[0].penetration, x, 1e-5 * x);
  }
  EXPECT_TRUE(vmax < 1e-4);
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

// subject01.osim with its ground reactions (ExternalLoads file and .mot): at a sample time the
// loads' generalized forces equal J^T F for the force, point and torque columns of that row
static void test_external_loads(const char* data) {
  char model[1024], xml[1024], mot[1024];
  snprintf(model, sizeof(model), "%s/data/gait10dof18musc/subject01.osim", data);
  snprintf(xml, sizeof(xml), "%s/data/gait10dof18musc/ExperimentalData/subject01_walk_grf.xml",
           data);
  snprintf(mot, sizeof(mot), "%s/data/gait10dof18musc/ExperimentalData/subject01_walk_grf.mot",
           data);
  mbs_error err;
  mbs_osim_options opt = {.external_loads = xml};
  mbs_osim_model* with = mbs_osim_read_options(model, &opt, &err);
  EXPECT_TRUE(with != NULL);
  if (!with) {
    printf("%s\n", err.message);
    return;
  }
  mbs_osim_model* without = mbs_osim_read(model, &err);
  mbs_table* t = NULL;
  EXPECT_OK(mbs_table_read(mot, &t, &err));
  if (!without || !t) {
    mbs_osim_free(with);
    mbs_osim_free(without);
    mbs_table_free(t);
    return;
  }
  const mbs_system* sa = mbs_osim_system(with);
  const mbs_system* sb = mbs_osim_system(without);
  EXPECT_EQ_INT(mbs_system_nforce(sa), mbs_system_nforce(sb) + 2);
  EXPECT_TRUE(mbs_force_find(sa, "right") >= 0 && mbs_force_find(sa, "left") >= 0);
  const int nu = mbs_system_nu(sa);
  mbs_state* st[2] = {mbs_state_create(sa), mbs_state_create(sb)};
  double* tau[2] = {calloc((size_t)nu, sizeof(double)), calloc((size_t)nu, sizeof(double))};
  double* zero = calloc((size_t)nu, sizeof(double));
  double* f = calloc((size_t)nu, sizeof(double));
  double* F = calloc(6 * (size_t)mbs_system_nbody(sa), sizeof(double));
  const int row = 600;
  const double time = mbs_table_get(t, row, 0);
  for (int k = 0; k < 2; k++) {
    EXPECT_OK(mbs_osim_default_state(k ? without : with, st[k]));
    mbs_state_set_time(st[k], time);
    EXPECT_OK(mbs_realize_dynamics(k ? sb : sa, st[k]));
    EXPECT_OK(mbs_calc_inverse_dynamics(k ? sb : sa, st[k], zero, tau[k]));
  }
  // the expected body forces from the row: [T + (p - o) x F; F] about each calcn's origin
  const char* prefix[2] = {"", "1_"};
  const char* body[2] = {"calcn_r", "calcn_l"};
  for (int s = 0; s < 2; s++) {
    char lab[64];
    double Fv[3], P[3], T[3], o[3];
    for (int a = 0; a < 3; a++) {
      snprintf(lab, sizeof(lab), "%sground_force_v%c", prefix[s], "xyz"[a]);
      Fv[a] = mbs_table_get(t, row, mbs_table_column(t, lab));
      snprintf(lab, sizeof(lab), "%sground_force_p%c", prefix[s], "xyz"[a]);
      P[a] = mbs_table_get(t, row, mbs_table_column(t, lab));
      snprintf(lab, sizeof(lab), "%sground_torque_%c", prefix[s], "xyz"[a]);
      T[a] = mbs_table_get(t, row, mbs_table_column(t, lab));
    }
    const int b = mbs_body_find(sa, body[s]);
    const double origin[3] = {0, 0, 0};
    EXPECT_OK(mbs_get_station_location(sa, st[0], b, origin, o));
    double r[3], m[3];
    mbs_v3_sub(r, P, o);
    mbs_v3_cross(m, r, Fv);
    for (int a = 0; a < 3; a++) {
      F[6 * b + a] += T[a] + m[a];
      F[6 * b + 3 + a] += Fv[a];
    }
  }
  EXPECT_OK(mbs_calc_jacobian_transpose_times(sa, st[0], F, f));
  double worst = 0, scale = 0;
  for (int i = 0; i < nu; i++) {
    worst = fmax(worst, fabs((tau[1][i] - tau[0][i]) - f[i]));
    scale = fmax(scale, fabs(f[i]));
  }
  printf("ground reactions at t = %g s: generalized forces against J^T F: worst %.2e (largest "
         "%.1f)\n", time, worst, scale);
  EXPECT_TRUE(scale > 100);
  EXPECT_TRUE(worst < 1e-9 * scale);
  free(tau[0]);
  free(tau[1]);
  free(zero);
  free(f);
  free(F);
  mbs_state_destroy(st[0]);
  mbs_state_destroy(st[1]);
  mbs_table_free(t);
  mbs_osim_free(with);
  mbs_osim_free(without);
  // a missing column names the file, the line and the force
  char bad[512];
  path_in_tmp(bad, sizeof(bad), "grf_bad.xml");
  char* text = slurp(xml);
  if (text) {
    char* at = strstr(text, "<force_identifier>ground_force_v");
    if (at) memcpy(at + strlen("<force_identifier>"), "ground_farce_v", 14);
    char* dfile = strstr(text, "<datafile>");
    FILE* fo = fopen(bad, "w");
    if (fo && dfile) {
      fwrite(text, 1, (size_t)(dfile - text), fo);
      fprintf(fo, "<datafile>%s</datafile></ExternalLoads></OpenSimDocument>\n", mot);
      fclose(fo);
    } else if (fo) {
      fclose(fo);
    }
    free(text);
    opt.external_loads = bad;
    mbs_osim_model* m = mbs_osim_read_options(model, &opt, &err);
    EXPECT_TRUE(m == NULL);
    printf("renamed column: %s\n", err.message);
    EXPECT_TRUE(strstr(err.message, "grf_bad.xml:") && strstr(err.message, "'right'") &&
                strstr(err.message, "ground_farce_vx"));
    mbs_osim_free(m);
  }
}

int main(int argc, char** argv) {
  const char* data = NULL;
  const char* mbstudy = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--data")) data = argv[i + 1];
    else if (!strcmp(argv[i], "--mbstudy")) mbstudy = argv[i + 1];
  }
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/mbs_test_osim_%d", (int)getpid());
  mkdir(tmpdir, 0700);
  if (data) {
    char models[1024];
    snprintf(models, sizeof(models), "%s/models", data);
    struct stat sb;
    if (stat(models, &sb) != 0) {
      printf("SKIPPED: %s not found (set the CMake cache variable MBS_SHARED_DIR to the folder "
             "holding models/)\n", models);
      return 77;
    }
    test_published_models(data);
    test_double_pendulum(data, mbstudy);
    test_bouncing_block(data);
    test_external_loads(data);
  } else {
    test_written_model();
    test_contact_mesh_model();
    test_broken_files();
    test_entities();
  }
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
  return mbs_test_finish(data ? "test_osim (published models)" : "test_osim");
}
