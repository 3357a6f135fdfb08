// Inverse kinematics (mbs/ik.h) against independent truth:
//  - markers generated from known coordinates (a leg on a free joint with pin, CustomJoint and
//    X-Y-Z-angle joints): the coordinates come back to the solver's tolerance, from the default
//    pose and frame after frame along a trajectory;
//  - with noise: the first-order optimality conditions hold, checked by central differences of
//    the cost computed here from marker locations alone, and the fit is no worse than the truth;
//  - clamped coordinates stay in their ranges: the solution sits on the bound with the cost
//    decreasing outward (KKT by finite differences) and stationary in the other coordinates;
//  - a locked coordinate keeps its value exactly although the markers say otherwise;
//  - markers missing in a frame are left out (the rest still determine the pose), a frame
//    without any keeps the pose;
//  - coordinate tasks pull as weighted and markers weigh by w_i / sum of the observed w
//    (OpenSim's normalization): closed forms on two sliders;
//  - constraints: a coupler enforced exactly, and as a penalty of finite weight against the
//    closed form;
//  - bad problems are refused with the marker, task or bound named;
//  - solving a frame allocates nothing (malloc is wrapped at link time to count calls).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/ik.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "ik_leg_model.h"
#include "mbs_test.h"

#include "mbs_test_alloc.h"

#define PI 3.14159265358979323846

// two bodies on sliders along Ground's x, a marker (two on the first), optionally a coupler
// s2 = s1
static char* rig_text(int coupled) {
  static const char* head =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\"><Model name=\"rig\">\n"
      "  <Ground name=\"ground\"/><gravity>0 -9.80665 0</gravity>\n"
      "  <BodySet name=\"bodyset\"><objects>\n"
      "    <Body name=\"b1\"><mass>1</mass><inertia>0.1 0.1 0.1 0 0 0</inertia></Body>\n"
      "    <Body name=\"b2\"><mass>1</mass><inertia>0.1 0.1 0.1 0 0 0</inertia></Body>\n"
      "  </objects></BodySet>\n"
      "  <JointSet name=\"jointset\"><objects>\n"
      "    <SliderJoint name=\"j1\"><socket_parent_frame>/ground</socket_parent_frame>\n"
      "      <socket_child_frame>/bodyset/b1</socket_child_frame>\n"
      "      <coordinates><Coordinate name=\"s1\"><range>-5 5</range></Coordinate>"
      "</coordinates></SliderJoint>\n"
      "    <SliderJoint name=\"j2\"><socket_parent_frame>/ground</socket_parent_frame>\n"
      "      <socket_child_frame>/bodyset/b2</socket_child_frame>\n"
      "      <coordinates><Coordinate name=\"s2\"><range>-5 5</range></Coordinate>"
      "</coordinates></SliderJoint>\n"
      "  </objects></JointSet>\n";
  static const char* coupler =
      "  <ConstraintSet name=\"constraintset\"><objects>\n"
      "    <CoordinateCouplerConstraint name=\"couple\"><isEnforced>true</isEnforced>\n"
      "      <coupled_coordinates_function><LinearFunction><coefficients>1 0</coefficients>"
      "</LinearFunction></coupled_coordinates_function>\n"
      "      <independent_coordinate_names>s1</independent_coordinate_names>\n"
      "      <dependent_coordinate_name>s2</dependent_coordinate_name>\n"
      "    </CoordinateCouplerConstraint>\n"
      "  </objects></ConstraintSet>\n";
  static const char* tail =
      "  <MarkerSet name=\"markerset\"><objects>\n"
      "    <Marker name=\"m1\"><socket_parent_frame>/bodyset/b1</socket_parent_frame>"
      "<location>0 0 0</location></Marker>\n"
      "    <Marker name=\"m1b\"><socket_parent_frame>/bodyset/b1</socket_parent_frame>"
      "<location>0.1 0.2 0</location></Marker>\n"
      "    <Marker name=\"m2\"><socket_parent_frame>/bodyset/b2</socket_parent_frame>"
      "<location>0 0 0.3</location></Marker>\n"
      "  </objects></MarkerSet>\n"
      "</Model></OpenSimDocument>\n";
  return mbs_format_string("%s%s%s", head, coupled ? coupler : "", tail);
}

static mbs_osim_model* parse(const char* text, const char* name) {
  mbs_error err;
  mbs_osim_model* m = mbs_osim_parse(text, strlen(text), name, NULL, &err);
  if (!m) fprintf(stderr, "%s\n", err.message);
  return m;
}

// an IK problem for a model: every marker (weight 1), clamped coordinates bounded, locked ones
// fixed (what the tool builds from a setup, done here by hand)
typedef struct problem {
  mbs_ik_marker mk[32];
  mbs_ik_bound b[16];
  int fixed[16];
  mbs_ik_problem p;
} problem;

static void make_problem(const mbs_osim_model* m, problem* pr, double accuracy) {
  memset(pr, 0, sizeof(*pr));
  mbs_ik_problem_default(&pr->p);
  for (int i = 0; i < mbs_osim_nmarker(m); i++) {
    const mbs_osim_marker* k = mbs_osim_marker_at(m, i);
    pr->mk[i] = (mbs_ik_marker){k->name, k->body, {k->location[0], k->location[1],
                                                   k->location[2]}, 1};
  }
  pr->p.nmarker = mbs_osim_nmarker(m);
  pr->p.markers = pr->mk;
  for (int i = 0; i < mbs_osim_ncoordinate(m); i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    if (c->locked) pr->fixed[pr->p.nfixed++] = c->qindex;
    else if (c->clamped)
      pr->b[pr->p.nbound++] = (mbs_ik_bound){c->name, c->qindex, c->range[0], c->range[1]};
  }
  pr->p.bounds = pr->b;
  pr->p.fixed = pr->fixed;
  pr->p.accuracy = accuracy;
}

static int coord(const mbs_osim_model* m, const char* name) {
  return mbs_osim_find_coordinate(m, name);
}

// marker locations in Ground at coordinates q (model order) into x (3 per marker)
static void markers_at(const mbs_osim_model* m, mbs_state* st, const double* q, double* x) {
  const mbs_system* sys = mbs_osim_system(m);
  double u[32] = {0};
  mbs_osim_set_coordinates(m, st, q, u);
  mbs_realize_position(sys, st);
  for (int i = 0; i < mbs_osim_nmarker(m); i++) {
    const mbs_osim_marker* k = mbs_osim_marker_at(m, i);
    mbs_get_station_location(sys, st, k->body, k->location, x + 3 * i);
  }
}

// the IK cost at coordinates q, from marker locations alone (weights w, observed where finite)
static double cost_at(const mbs_osim_model* m, mbs_state* st, const double* q, const double* x,
                      const double* w) {
  double loc[3 * 32], f = 0, W = 0;
  markers_at(m, st, q, loc);
  for (int i = 0; i < mbs_osim_nmarker(m); i++) {
    if (!isfinite(x[3 * i])) continue;
    double e = 0;
    for (int k = 0; k < 3; k++) {
      const double d = loc[3 * i + k] - x[3 * i + k];
      e += d * d;
    }
    f += w[i] * e;
    W += w[i];
  }
  return f / W;
}

// central difference of the cost in coordinate j
static double cost_slope(const mbs_osim_model* m, mbs_state* st, const double* q, int j,
                         const double* x, const double* w) {
  double qq[32];
  memcpy(qq, q, sizeof(qq));
  const double h = 1e-6;
  qq[j] = q[j] + h;
  const double fp = cost_at(m, st, qq, x, w);
  qq[j] = q[j] - h;
  const double fm = cost_at(m, st, qq, x, w);
  return (fp - fm) / (2 * h);
}

static void get_q(const mbs_osim_model* m, const mbs_state* st, double* q) {
  double u[32];
  mbs_osim_get_coordinates(m, st, q, u);
}

// the leg's true pose for frame k of a trajectory (k < 0: the fixed test pose)
static void leg_pose(const mbs_osim_model* m, int k, double* q) {
  const double s = k < 0 ? 0 : sin(0.1 * k), c = k < 0 ? 0 : cos(0.07 * k);
  memset(q, 0, 32 * sizeof(double));
  q[coord(m, "pelvis_rx")] = 0.1 + 0.05 * s;
  q[coord(m, "pelvis_ry")] = -0.2 + 0.1 * c;
  q[coord(m, "pelvis_rz")] = 0.3 - 0.05 * s;
  q[coord(m, "pelvis_tx")] = 0.4 + 0.02 * (k < 0 ? 0 : k);
  q[coord(m, "pelvis_ty")] = 0.9 + 0.01 * c;
  q[coord(m, "pelvis_tz")] = -0.1;
  q[coord(m, "hip")] = 0.5 - 0.4 * s;
  q[coord(m, "knee")] = -0.8 + 0.5 * c;
  q[coord(m, "ankle")] = 0.2 * s;
  q[coord(m, "shoulder")] = 0.25;  // no marker: stays at its default
  q[coord(m, "slide")] = 0.05;     // locked at its default
}

static void test_recovery(void) {
  mbs_osim_model* m = parse(leg_text, "leg.osim");
  EXPECT_TRUE(m != NULL);
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  const int n = mbs_osim_ncoordinate(m), nm = mbs_osim_nmarker(m);
  mbs_state* gen = mbs_state_create(sys);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_osim_default_state(m, gen));
  EXPECT_OK(mbs_osim_default_state(m, st));
  problem pr;
  make_problem(m, &pr, 1e-8);
  mbs_ik* ik = NULL;
  EXPECT_OK(mbs_ik_create(sys, &pr.p, &ik, NULL));
  double qt[32], q[32], x[3 * 32];
  // from the default pose to a pose far from it
  leg_pose(m, -1, qt);
  markers_at(m, gen, qt, x);
  mbs_ik_report rep;
  EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
  EXPECT_TRUE(rep.converged);
  EXPECT_EQ_INT(rep.nobserved, nm);
  get_q(m, st, q);
  double worst = 0;
  for (int j = 0; j < n; j++) worst = fmax(worst, fabs(q[j] - qt[j]));
  printf("recovery from the default pose: %d iterations, largest |q - q_true| %.2e\n",
         rep.iterations, worst);
  EXPECT_TRUE(worst <= 1e-7);
  // along a trajectory, each frame from the one before
  long iters = 0;
  worst = 0;
  const int nframes = 60;
  for (int k = 0; k < nframes; k++) {
    leg_pose(m, k, qt);
    markers_at(m, gen, qt, x);
    mbs_state_set_time(st, 0.01 * k);
    EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
    EXPECT_TRUE(rep.converged);
    iters += rep.iterations;
    get_q(m, st, q);
    for (int j = 0; j < n; j++) worst = fmax(worst, fabs(q[j] - qt[j]));
    const double* e2 = mbs_ik_marker_squared_errors(ik);
    for (int i = 0; i < nm; i++) EXPECT_TRUE(e2[i] < 1e-14);
  }
  printf("trajectory of %d frames: %.1f iterations per frame, largest |q - q_true| %.2e\n",
         nframes, (double)iters / nframes, worst);
  EXPECT_TRUE(worst <= 1e-7);
  // marker locations reported are the model's at the solution
  {
    const double* loc = mbs_ik_marker_locations(ik);
    for (int i = 0; i < 3 * nm; i++) EXPECT_ABS(loc[i], x[i], 1e-7);
  }
  // no allocation while solving
  {
    leg_pose(m, 3, qt);
    markers_at(m, gen, qt, x);
    const long before = n_alloc;
    mbs_ik_solve(ik, sys, st, x, NULL, &rep);
    EXPECT_EQ_INT(n_alloc - before, 0);
  }
  mbs_ik_free(ik);
  mbs_state_destroy(gen);
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

static void test_noise_and_bounds(void) {
  mbs_osim_model* m = parse(leg_text, "leg.osim");
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  const int n = mbs_osim_ncoordinate(m), nm = mbs_osim_nmarker(m);
  mbs_state* gen = mbs_state_create(sys);
  mbs_state* st = mbs_state_create(sys);
  mbs_state* fd = mbs_state_create(sys);
  mbs_osim_default_state(m, gen);
  mbs_osim_default_state(m, fd);
  problem pr;
  make_problem(m, &pr, 1e-9);
  // unequal weights
  double w[32];
  for (int i = 0; i < nm; i++) w[i] = pr.mk[i].weight = 1 + (i % 3);
  mbs_ik* ik = NULL;
  EXPECT_OK(mbs_ik_create(sys, &pr.p, &ik, NULL));
  const int ja = coord(m, "ankle"), jslide = coord(m, "slide");
  mbs_test_rng rng = {0x9e3779b97f4a7c15ULL};
  double qt[32], q[32], x[3 * 32];
  // noise of 5 mm: the solution is stationary and fits at least as well as the truth
  for (int trial = 0; trial < 3; trial++) {
    mbs_osim_default_state(m, st);
    leg_pose(m, 5 + 7 * trial, qt);
    markers_at(m, gen, qt, x);
    for (int i = 0; i < 3 * nm; i++) x[i] += mbs_test_uniform(&rng, -0.0087, 0.0087);
    mbs_ik_report rep;
    EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
    EXPECT_TRUE(rep.converged);
    get_q(m, st, q);
    double gmax = 0, dq = 0;
    for (int j = 0; j < n; j++) {
      if (j == jslide) continue;
      gmax = fmax(gmax, fabs(cost_slope(m, fd, q, j, x, w)));
      dq = fmax(dq, fabs(q[j] - qt[j]));
    }
    const double fsol = cost_at(m, fd, q, x, w), ftrue = cost_at(m, fd, qt, x, w);
    printf("noise: cost %.6e (truth %.6e), largest |df/dq| %.1e, largest |q - q_true| %.3f\n",
           fsol, ftrue, gmax, dq);
    EXPECT_NEAR(rep.cost, fsol, 1e-9);
    EXPECT_TRUE(gmax <= 1e-8);
    EXPECT_TRUE(fsol <= ftrue);
    EXPECT_TRUE(dq < 0.1);
  }
  // clamped ankle: the truth beyond each end of the range
  for (int side = -1; side <= 1; side += 2) {
    mbs_osim_default_state(m, st);
    leg_pose(m, -1, qt);
    qt[ja] = side * 0.65;
    markers_at(m, gen, qt, x);
    mbs_ik_report rep;
    EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
    EXPECT_TRUE(rep.converged);
    EXPECT_EQ_INT(rep.nactive, 1);
    get_q(m, st, q);
    EXPECT_TRUE(q[ja] == side * 0.4);  // on the bound, not past it
    // KKT: the cost decreases outward, and is stationary in the other coordinates
    const double ga = cost_slope(m, fd, q, ja, x, w);
    double gmax = 0;
    for (int j = 0; j < n; j++)
      if (j != ja && j != jslide) gmax = fmax(gmax, fabs(cost_slope(m, fd, q, j, x, w)));
    printf("ankle clamped at %+.1f (truth %+.2f): df/dankle %+.3e, other |df/dq| %.1e\n",
           q[ja], qt[ja], ga, gmax);
    EXPECT_TRUE(side * ga < -1e-6);
    EXPECT_TRUE(gmax <= 1e-8);
    // and released again when the markers come back inside
    leg_pose(m, -1, qt);
    qt[ja] = side * 0.3;
    markers_at(m, gen, qt, x);
    EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
    get_q(m, st, q);
    EXPECT_EQ_INT(rep.nactive, 0);
    EXPECT_ABS(q[ja], side * 0.3, 1e-7);
  }
  // a clamped coordinate starting outside its range is brought in
  {
    double u[32] = {0};
    leg_pose(m, -1, qt);
    markers_at(m, gen, qt, x);
    mbs_osim_default_state(m, st);
    get_q(m, st, q);
    q[ja] = 1.2;
    mbs_osim_set_coordinates(m, st, q, u);
    EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, NULL));
    get_q(m, st, q);
    EXPECT_ABS(q[ja], qt[ja], 1e-7);
  }
  mbs_ik_free(ik);
  mbs_state_destroy(gen);
  mbs_state_destroy(st);
  mbs_state_destroy(fd);
  mbs_osim_free(m);
}

static void test_locked_and_missing(void) {
  mbs_osim_model* m = parse(leg_text, "leg.osim");
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  const int n = mbs_osim_ncoordinate(m), nm = mbs_osim_nmarker(m);
  mbs_state* gen = mbs_state_create(sys);
  mbs_state* st = mbs_state_create(sys);
  mbs_osim_default_state(m, gen);
  mbs_osim_default_state(m, st);
  problem pr;
  make_problem(m, &pr, 1e-8);
  mbs_ik* ik = NULL;
  EXPECT_OK(mbs_ik_create(sys, &pr.p, &ik, NULL));
  const int js = coord(m, "slide");
  double qt[32], q[32], x[3 * 32];
  // the block's marker says slide = 0.12; the locked slider stays at 0.05 exactly
  leg_pose(m, -1, qt);
  qt[js] = 0.12;
  markers_at(m, gen, qt, x);
  mbs_ik_report rep;
  EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
  get_q(m, st, q);
  EXPECT_TRUE(q[js] == 0.05);
  printf("locked slider: %.17g (markers say %.2f)\n", q[js], qt[js]);
  // markers missing in a frame: left out, the pose still found
  leg_pose(m, 11, qt);
  markers_at(m, gen, qt, x);
  int miss[2] = {-1, -1};
  for (int i = 0; i < nm; i++) {
    const char* name = mbs_osim_marker_at(m, i)->name;
    if (!strcmp(name, "PB")) miss[0] = i;
    if (!strcmp(name, "F3")) miss[1] = i;
  }
  x[3 * miss[0] + 1] = NAN;  // one coordinate missing is enough
  for (int k = 0; k < 3; k++) x[3 * miss[1] + k] = NAN;
  EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
  EXPECT_TRUE(rep.converged);
  EXPECT_EQ_INT(rep.nobserved, nm - 2);
  get_q(m, st, q);
  double worst = 0;
  for (int j = 0; j < n; j++)
    if (j != js) worst = fmax(worst, fabs(q[j] - qt[j]));
  printf("two markers missing: largest |q - q_true| %.2e\n", worst);
  EXPECT_TRUE(worst <= 1e-7);
  EXPECT_TRUE(mbs_ik_marker_squared_errors(ik)[miss[0]] == 0);
  EXPECT_TRUE(mbs_ik_marker_squared_errors(ik)[miss[1]] == 0);
  // a frame without any marker keeps the pose
  double q_before[32];
  get_q(m, st, q_before);
  for (int i = 0; i < 3 * nm; i++) x[i] = NAN;
  EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
  EXPECT_EQ_INT(rep.nobserved, 0);
  get_q(m, st, q);
  for (int j = 0; j < n; j++) EXPECT_TRUE(q[j] == q_before[j]);
  mbs_ik_free(ik);
  mbs_state_destroy(gen);
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

// the rig's markers: m1 (b1), m1b (b1), m2 (b2); observed x, weights w, coordinate tasks
static void test_tasks_closed_form(void) {
  char* text = rig_text(0);
  mbs_osim_model* m = parse(text, "rig.osim");
  free(text);
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  mbs_osim_default_state(m, st);
  problem pr;
  make_problem(m, &pr, 1e-10);
  const double w[3] = {1, 3, 2};
  for (int i = 0; i < 3; i++) pr.mk[i].weight = w[i];
  const int q1 = mbs_osim_coordinate_info(m, coord(m, "s1"))->qindex;
  const int q2 = mbs_osim_coordinate_info(m, coord(m, "s2"))->qindex;
  const mbs_ik_task task = {"s1", q1, 0.7};
  pr.p.ntask = 1;
  pr.p.tasks = &task;
  mbs_ik* ik = NULL;
  EXPECT_OK(mbs_ik_create(sys, &pr.p, &ik, NULL));
  // observations: x offsets along the sliders; y, z off the markers (no effect on s)
  // m1 at (s1, 0, 0), m1b at (s1 + 0.1, 0.2, 0), m2 at (s2, 0, 0.3)
  double x[9] = {0.3, 0.05, -0.02, 0.5 + 0.1, 0.2, 0.01, -0.2, 0.1, 0.3};
  const double v = 1.0, wt = 0.7;
  mbs_ik_report rep;
  EXPECT_OK(mbs_ik_solve(ik, sys, st, x, &v, &rep));
  double q[8];
  get_q(m, st, q);
  // f = [w1 (s1 - .3)^2 + w2 (s1 - .5)^2 + w3 (s2 + .2)^2] / W + wt (s1 - v)^2 + const
  double W = w[0] + w[1] + w[2];
  double s1 = ((w[0] * 0.3 + w[1] * 0.5) / W + wt * v) / ((w[0] + w[1]) / W + wt);
  printf("task: s1 %.15f (closed form %.15f), s2 %.15f (-0.2)\n", q[q1], s1, q[q2]);
  EXPECT_ABS(q[q1], s1, 1e-10);
  EXPECT_ABS(q[q2], -0.2, 1e-10);
  // m1b missing: W counts the observed markers only
  x[3] = NAN;
  EXPECT_OK(mbs_ik_solve(ik, sys, st, x, &v, &rep));
  get_q(m, st, q);
  W = w[0] + w[2];
  s1 = (w[0] * 0.3 / W + wt * v) / (w[0] / W + wt);
  EXPECT_ABS(q[q1], s1, 1e-10);
  // a heavier task pulls harder
  const mbs_ik_task heavy = {"s1", q1, 50};
  pr.p.tasks = &heavy;
  mbs_ik* ik2 = NULL;
  EXPECT_OK(mbs_ik_create(sys, &pr.p, &ik2, NULL));
  EXPECT_OK(mbs_ik_solve(ik2, sys, st, x, &v, &rep));
  get_q(m, st, q);
  s1 = (w[0] * 0.3 / W + 50 * v) / (w[0] / W + 50);
  EXPECT_ABS(q[q1], s1, 1e-10);
  mbs_ik_free(ik2);
  mbs_ik_free(ik);
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

static void test_constraints(void) {
  char* text = rig_text(1);
  mbs_osim_model* m = parse(text, "rig_coupled.osim");
  free(text);
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  const int q1 = mbs_osim_coordinate_info(m, coord(m, "s1"))->qindex;
  const int q2 = mbs_osim_coordinate_info(m, coord(m, "s2"))->qindex;
  // markers m1 (x 0.2) and m2 (x 0.6) tracked, m1b not (weight 0)
  double x[9] = {0.2, 0, 0, NAN, NAN, NAN, 0.6, 0, 0.3};
  for (int hard = 1; hard >= 0; hard--) {
    mbs_osim_default_state(m, st);
    problem pr;
    make_problem(m, &pr, 1e-10);
    pr.mk[1].weight = 0;
    const double wc = 2;
    if (!hard) pr.p.constraint_weight = wc;
    mbs_ik* ik = NULL;
    EXPECT_OK(mbs_ik_create(sys, &pr.p, &ik, NULL));
    mbs_ik_report rep;
    EXPECT_OK(mbs_ik_solve(ik, sys, st, x, NULL, &rep));
    EXPECT_TRUE(rep.converged);
    double q[8];
    get_q(m, st, q);
    // hard: s1 = s2 = mean; penalty: f = ((s1-x1)^2 + (s2-x2)^2)/2 + wc (s2-s1)^2 gives
    // s2 - s1 = (x2 - x1) / (1 + 4 wc) about the same mean
    const double mean = 0.4, d = hard ? 0 : 0.4 / (1 + 4 * wc);
    printf("coupler %s: s1 %.12f s2 %.12f (closed form %.12f %.12f)\n",
           hard ? "enforced" : "penalty", q[q1], q[q2], mean - d / 2, mean + d / 2);
    EXPECT_ABS(q[q1], mean - d / 2, 1e-9);
    EXPECT_ABS(q[q2], mean + d / 2, 1e-9);
    if (hard) EXPECT_TRUE(rep.constraint_error <= 1e-12);
    mbs_ik_free(ik);
  }
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

static void test_bad_problems(void) {
  mbs_osim_model* m = parse(leg_text, "leg.osim");
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  problem pr;
  mbs_ik* ik = NULL;
  mbs_error err;
  make_problem(m, &pr, 1e-5);
  pr.mk[2].body = 0;
  EXPECT_TRUE(mbs_ik_create(sys, &pr.p, &ik, &err) == MBS_ERR_ARGUMENT && !ik);
  EXPECT_TRUE(strstr(err.message, "marker 'PC'") && strstr(err.message, "Ground"));
  make_problem(m, &pr, 1e-5);
  pr.mk[1].weight = -1;
  EXPECT_TRUE(mbs_ik_create(sys, &pr.p, &ik, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "marker 'PB'") != NULL);
  make_problem(m, &pr, 1e-5);
  pr.b[0].lower = 1;
  EXPECT_TRUE(mbs_ik_create(sys, &pr.p, &ik, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "'ankle'") && strstr(err.message, "empty"));
  make_problem(m, &pr, 0);
  EXPECT_TRUE(mbs_ik_create(sys, &pr.p, &ik, &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "accuracy") != NULL);
  make_problem(m, &pr, 1e-5);
  mbs_ik_task t = {"knee", 99, 1};
  pr.p.ntask = 1;
  pr.p.tasks = &t;
  EXPECT_TRUE(mbs_ik_create(sys, &pr.p, &ik, &err) == MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(err.message, "coordinate task 'knee'") != NULL);
  // a NaN target is refused when solving, naming the task
  t.q = 0;
  EXPECT_OK(mbs_ik_create(sys, &pr.p, &ik, &err));
  mbs_state* st = mbs_state_create(sys);
  mbs_osim_default_state(m, st);
  double x[3 * 32] = {0};
  const double nan_target = NAN;
  EXPECT_TRUE(mbs_ik_solve(ik, sys, st, x, &nan_target, NULL) == MBS_ERR_NAN);
  EXPECT_TRUE(strstr(mbs_state_error(st)->message, "'knee'") != NULL);
  mbs_state_destroy(st);
  mbs_ik_free(ik);
  mbs_osim_free(m);
}

int main(void) {
  EXPECT_TRUE(mbs_test_alloc_active());  // the allocation counter sees the libraries
  test_recovery();
  test_noise_and_bounds();
  test_locked_and_missing();
  test_tasks_closed_form();
  test_constraints();
  test_bad_problems();
  return mbs_test_finish("test_ik");
}
