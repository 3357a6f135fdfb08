// Path actuators, path springs and ligaments (include/mbs/path_force.h) against independent
// truth:
// - PathActuator on a pendulum whose path wraps a cylinder of radius R centred on the pin: the
//   moment arm is R, so I theta'' = -m g l sin(theta) + optimal_force c R in closed form (the
//   path's length and speed against the pulley's closed form too); the control is the State's
//   (changing it changes the acceleration and mbs_get_actuator_tension), or a function of time;
// - PathSpring without dissipation on a double pendulum, its path from Ground over a via point
//   on the first link and a cylinder at the second pin to the second link (wrapped and
//   straight, stretched and slack in turn): kinetic + gravity (closed form) + stiffness
//   stretch^2 / 2 (the path's length) stays constant over a simulation, within 10 x accuracy,
//   and mbs_calc_potential_energy counts the spring's; with dissipation the same energy falls
//   monotonically, by the integral of the dissipated power stiffness stretch dissipation L'^2
//   (Simpson's rule over the reports);
// - Ligament: slack gives no force even where the curve is not zero; stretched, pcsa_force
//   curve(L / L0) with the curve (OpenSim's default SimmSpline) evaluated here from its knots;
//   a damped hanging mass comes to rest at the length where pcsa_force curve(L / L0) = m g,
//   found here by bisection on that curve;
// - bad input is refused naming the force: negative stiffness, resting length, pcsa_force, a
//   path or curve that does not exist, a taken name; a bad value in a State at Instance.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs_test.h"

static const double g = 9.80665;

static int contains(const char* s, const char* what) { return s && strstr(s, what) != NULL; }

//---------------------------------- PathActuator -----------------------------------------------

// pendulum: arm on a pin about z at the origin, centre of mass l below the pin; a path from
// Ground at (0, d1) over a cylinder of radius R on the pin's axis (its +x side) to the arm at
// (0, -d2)
static const double pa_m = 2.0, pa_l = 0.3, pa_Izz = 0.02, pa_R = 0.05, pa_d1 = 0.3,
                    pa_d2 = 0.25, pa_F0 = 40.0;

static mbs_system* actuated_pendulum(int timed, int* act) {
  mbs_system* sys = mbs_system_create("actuated pendulum");
  mbs_body_spec s = mbs_body_spec_default("arm", 0, MBS_MOB_PIN);
  s.mass = pa_m;
  s.com[1] = -pa_l;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = pa_Izz;
  const int arm = mbs_system_add_body(sys, &s);
  const double gv[3] = {0, -g, 0};
  mbs_system_add_gravity(sys, gv);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", arm)};
  p[0].location[1] = pa_d1;
  p[1].location[1] = -pa_d2;
  const int path = mbs_system_add_path(sys, "act", p, 2);
  mbs_wrap_object cyl;
  memset(&cyl, 0, sizeof(cyl));
  cyl.shape = MBS_WRAP_CYLINDER;
  cyl.radius = pa_R;
  cyl.length = 0.5;
  cyl.quadrant = MBS_WRAP_POS_X;
  const mbs_transform X = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
  const int w = mbs_system_add_wrap_object(sys, "/ground/pulley", "pulley", 0, &X, &cyl, 1);
  EXPECT_EQ_INT(mbs_path_add_wrap(sys, path, w, MBS_WRAP_HYBRID, -1, -1), 0);
  int fn = -1;
  if (timed) {  // c(t) = 0.2 + 0.3 t
    const double coefs[2] = {0.3, 0.2};
    mbs_function_spec f;
    memset(&f, 0, sizeof(f));
    f.type = MBS_FUNC_LINEAR;
    f.name = "excitation";
    f.coefs = coefs;
    fn = mbs_system_add_function(sys, &f);
    EXPECT_TRUE(fn >= 0);
  }
  mbs_path_actuator_spec a = {NULL, path, pa_F0, 0.5, fn};
  *act = mbs_system_add_path_actuator(sys, &a);
  EXPECT_TRUE(*act >= 0);
  if (*act < 0) printf("cannot add the path actuator: %s\n", mbs_system_error(sys)->message);
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

// the pulley's length wrapped over the +x side, arm at angle q
static double pulley_length(double q) {
  const double R = pa_R, d1 = pa_d1, d2 = pa_d2;
  const double arc = M_PI - q - acos(R / d1) - acos(R / d2);
  return sqrt(d1 * d1 - R * R) + sqrt(d2 * d2 - R * R) + R * arc;
}

static double pendulum_udot(double q, double c) {
  return (-pa_m * g * pa_l * sin(q) + pa_F0 * c * pa_R) / (pa_Izz + pa_m * pa_l * pa_l);
}

static void test_path_actuator(void) {
  int act;
  mbs_system* sys = actuated_pendulum(0, &act);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_TRUE(strcmp(mbs_force_name(sys, act), "act") == 0);
  EXPECT_TRUE(strcmp(mbs_force_kind(sys, act), "path_actuator") == 0);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/act/optimal_force") != NULL);
  EXPECT_EQ_INT(mbs_system_ncontrol(sys), 1);
  EXPECT_EQ_INT(mbs_control_force(sys, 0), act);
  EXPECT_EQ_INT(mbs_path_force_path(sys, act), 0);
  EXPECT_NEAR(mbs_state_controls(st)[0], 0.5, 0);
  const double qs[] = {-2.0, -1.2, -0.5, 0.0, 0.3};
  const double cs[] = {0.5, -0.7, 1.3};
  double worst = 0;
  int n = 0;
  for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
    for (size_t j = 0; j < sizeof(cs) / sizeof(cs[0]); j++) {
      mbs_state_upd_q(st)[0] = qs[i];
      mbs_state_upd_u(st)[0] = 0.7;
      mbs_state_upd_controls(st)[0] = cs[j];
      EXPECT_OK(mbs_realize_acceleration(sys, st));
      const double udot = mbs_get_udot(sys, st)[0];
      const double expect = pendulum_udot(qs[i], cs[j]);
      worst = fmax(worst, fabs(udot - expect));
      EXPECT_NEAR(udot, expect, 1e-10);
      mbs_path_force_report r;
      EXPECT_OK(mbs_get_path_force_report(sys, st, act, &r));
      EXPECT_NEAR(r.tension, pa_F0 * cs[j], 1e-14);
      EXPECT_NEAR(r.control, cs[j], 0);
      EXPECT_NEAR(r.length, pulley_length(qs[i]), 1e-12);
      EXPECT_NEAR(r.lengthening_speed, -pa_R * 0.7, 1e-12);
      double T;
      EXPECT_OK(mbs_get_actuator_tension(sys, st, act, &T));
      EXPECT_NEAR(T, pa_F0 * cs[j], 1e-14);
      n++;
    }
  printf("path actuator over a pulley: %d poses and controls, |theta'' - closed form| <= %.2e "
         "rad/s^2\n", n, worst);
  // the optimal force is an instance parameter
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/act/optimal_force", 0, 2 * pa_F0));
  mbs_state_upd_q(st)[0] = 0.1;
  mbs_state_upd_controls(st)[0] = 0.25;
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], pendulum_udot(0.1, 0.5), 1e-10);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);

  // a control function of time instead of the State's control
  sys = actuated_pendulum(1, &act);
  st = mbs_state_create(sys);
  mbs_state_set_time(st, 1.5);
  mbs_state_upd_q(st)[0] = -0.4;
  mbs_state_upd_controls(st)[0] = 7.0;  // not used
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], pendulum_udot(-0.4, 0.2 + 0.3 * 1.5), 1e-10);
  mbs_path_force_report r;
  EXPECT_OK(mbs_get_path_force_report(sys, st, act, &r));
  EXPECT_NEAR(r.control, 0.65, 1e-15);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- PathSpring -------------------------------------------------

// double pendulum: link 1 on a pin at the origin, link 2 on a pin at (0, -ds_L1) on link 1;
// a spring path from Ground over a via point on link 1 and a cylinder at the second pin to
// link 2
static const double ds_m1 = 1.0, ds_m2 = 0.8, ds_l1 = 0.2, ds_l2 = 0.2, ds_L1 = 0.4,
                    ds_I = 0.01, ds_R = 0.04, ds_k = 60.0, ds_L0 = 0.75;

static mbs_system* spring_pendulum(double dissipation, int* spring, int* path) {
  mbs_system* sys = mbs_system_create("spring pendulum");
  mbs_body_spec s1 = mbs_body_spec_default("link1", 0, MBS_MOB_PIN);
  s1.mass = ds_m1;
  s1.com[1] = -ds_l1;
  s1.inertia[0] = s1.inertia[1] = s1.inertia[2] = ds_I;
  const int b1 = mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = mbs_body_spec_default("link2", b1, MBS_MOB_PIN);
  s2.mass = ds_m2;
  s2.com[1] = -ds_l2;
  s2.inertia[0] = s2.inertia[1] = s2.inertia[2] = ds_I;
  s2.X_PF.p[1] = -ds_L1;
  const int b2 = mbs_system_add_body(sys, &s2);
  const double gv[3] = {0, -g, 0};
  mbs_system_add_gravity(sys, gv);
  mbs_path_point_spec p[3] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("via", b1),
                              mbs_path_point_spec_default("insertion", b2)};
  p[0].location[0] = 0.3;
  p[0].location[1] = 0.1;
  p[1].location[0] = 0.05;
  p[1].location[1] = -0.25;
  p[2].location[1] = -0.25;
  *path = mbs_system_add_path(sys, "spring", p, 3);
  mbs_wrap_object cyl;
  memset(&cyl, 0, sizeof(cyl));
  cyl.shape = MBS_WRAP_CYLINDER;
  cyl.radius = ds_R;
  cyl.length = 0.5;
  cyl.quadrant = MBS_WRAP_POS_X;
  const mbs_transform X = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, -ds_L1, 0}};
  const int w = mbs_system_add_wrap_object(sys, "/bodyset/link1/knee", "knee", b1, &X, &cyl, 1);
  EXPECT_EQ_INT(mbs_path_add_wrap(sys, *path, w, MBS_WRAP_HYBRID, 2, 3), 0);
  mbs_path_spring_spec sp = {NULL, *path, ds_L0, ds_k, dissipation};
  *spring = mbs_system_add_path_spring(sys, &sp);
  EXPECT_TRUE(*spring >= 0);
  if (*spring < 0) printf("cannot add the path spring: %s\n", mbs_system_error(sys)->message);
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

#define MAX_REPORTS 32768

typedef struct energy_log {
  int path;
  double dissipation;
  int n;
  double t[MAX_REPORTS], E[MAX_REPORTS], P[MAX_REPORTS];
  double worst_pe;          // |mbs_calc_potential_energy - (gravity + spring)|
  int wrapped, straight;    // reports with the path over the cylinder or not
  int slack;                // reports with the spring slack
  double min_stretch, max_stretch;
} energy_log;

// gravity in closed form from the angles: m g y of each centre of mass
static double gravity_energy(const double* q) {
  const double y1 = -ds_l1 * cos(q[0]);
  const double y2 = -ds_L1 * cos(q[0]) - ds_l2 * cos(q[0] + q[1]);
  return ds_m1 * g * y1 + ds_m2 * g * y2;
}

static int log_energy(const mbs_system* sys, mbs_state* st, void* user) {
  energy_log* lg = user;
  if (lg->n >= MAX_REPORTS) return 1;
  double ke = 0, L = 0, Ld = 0, pe = 0, pts[3 * 16];
  int npts = 0;
  EXPECT_OK(mbs_calc_kinetic_energy(sys, st, &ke));
  EXPECT_OK(mbs_calc_path_length(sys, st, lg->path, &L, &Ld));
  EXPECT_OK(mbs_calc_potential_energy(sys, st, &pe));
  EXPECT_OK(mbs_calc_path_points(sys, st, lg->path, pts, &npts));
  const double s = L > ds_L0 ? L - ds_L0 : 0;
  const double pg = gravity_energy(mbs_state_q(st)), ps = 0.5 * ds_k * s * s;
  lg->worst_pe = fmax(lg->worst_pe, fabs(pe - (pg + ps)));
  if (npts > 3) lg->wrapped++;
  else lg->straight++;
  if (s == 0) lg->slack++;
  lg->min_stretch = fmin(lg->min_stretch, s);
  lg->max_stretch = fmax(lg->max_stretch, s);
  lg->t[lg->n] = mbs_state_time(st);
  lg->E[lg->n] = ke + pg + ps;
  lg->P[lg->n] = ds_k * s * lg->dissipation * Ld * Ld;  // tension_dissipative * L'
  lg->n++;
  return 0;
}

static void run_spring(double dissipation, double accuracy, energy_log* lg) {
  int spring, path;
  mbs_system* sys = spring_pendulum(dissipation, &spring, &path);
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_q(st)[0] = 0.6;
  mbs_state_upd_q(st)[1] = -0.9;
  mbs_state_upd_u(st)[1] = 2.0;
  memset(lg, 0, sizeof(*lg));
  lg->path = path;
  lg->dissipation = dissipation;
  lg->min_stretch = INFINITY;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = accuracy;
  o.report_interval = 0.0001;
  mbs_simulation_result res;
  memset(&res, 0, sizeof(res));
  EXPECT_OK(mbs_simulate(sys, st, 3.0, &o, NULL, 0, log_energy, lg, &res));
  EXPECT_TRUE(lg->n == 30001);
  // the report's dissipative tension is stiffness stretch dissipation L'
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  mbs_path_force_report r;
  EXPECT_OK(mbs_get_path_force_report(sys, st, spring, &r));
  double L, Ld;
  EXPECT_OK(mbs_calc_path_length(sys, st, path, &L, &Ld));
  const double s = L > ds_L0 ? L - ds_L0 : 0;
  EXPECT_NEAR(r.length, L, 1e-15);
  EXPECT_NEAR(r.stretch, s, 1e-15);
  EXPECT_NEAR(r.elastic_tension, ds_k * s, 1e-12);
  EXPECT_NEAR(r.dissipative_tension, ds_k * s * dissipation * Ld, 1e-12);
  EXPECT_NEAR(r.tension, ds_k * s * (1 + dissipation * Ld), 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_path_spring_energy(void) {
  energy_log* lg = malloc(sizeof(*lg));
  if (!lg) return;
  const double acc[2] = {1e-7, 1e-9};
  double drift[2];
  for (int a = 0; a < 2; a++) {
    run_spring(0.0, acc[a], lg);
    double emin = INFINITY, emax = -INFINITY, scale = 0;
    for (int i = 0; i < lg->n; i++) {
      emin = fmin(emin, lg->E[i]);
      emax = fmax(emax, lg->E[i]);
      scale = fmax(scale, fabs(lg->E[i]));
    }
    drift[a] = (emax - emin) / scale;
    printf("path spring, no dissipation, accuracy %.0e: %d reports (%d wrapped, %d straight, "
           "%d slack), stretch %.3f..%.3f m, E %.6f J, max |E - E0| / |E| = %.2e, |PE - "
           "(gravity + k s^2 / 2)| <= %.1e J\n", acc[a], lg->n, lg->wrapped, lg->straight,
           lg->slack, lg->min_stretch, lg->max_stretch, lg->E[0], drift[a], lg->worst_pe);
    EXPECT_TRUE(lg->wrapped > 50 && lg->straight > 50 && lg->slack > 10);
    EXPECT_TRUE(lg->worst_pe < 1e-12);
    EXPECT_TRUE(drift[a] < 10 * acc[a]);
  }
  EXPECT_TRUE(drift[1] < drift[0]);

  // with dissipation: E falls monotonically, by the dissipated power's integral
  const double d = 0.8;
  run_spring(d, 1e-10, lg);
  int rises = 0;
  double scale = 0;
  for (int i = 0; i < lg->n; i++) scale = fmax(scale, fabs(lg->E[i]));
  for (int i = 1; i < lg->n; i++)
    if (lg->E[i] > lg->E[i - 1] + 1e-10 * scale) rises++;
  EXPECT_EQ_INT(rises, 0);
  // Simpson's rule over the uniform reports (and, for comparison, over every other one): where
  // the wrap engages or leaves, L'' and so the power's slope jump, which costs the rule about
  // h^2 |jump| / 8 at each (1e-7 J at h = 0.25 ms here), so the reports are 0.1 ms apart
  const int m = (lg->n - 1) / 4 * 4;
  const double h = lg->t[1] - lg->t[0];
  double W = 0, W2 = 0;
  for (int i = 0; i + 2 <= m; i += 2) W += h / 3 * (lg->P[i] + 4 * lg->P[i + 1] + lg->P[i + 2]);
  for (int i = 0; i + 4 <= m; i += 4)
    W2 += 2 * h / 3 * (lg->P[i] + 4 * lg->P[i + 2] + lg->P[i + 4]);
  const double loss = lg->E[0] - lg->E[m];
  printf("path spring, dissipation %.1f s/m: E %.6f -> %.6f J (%d rises), lost %.9f J; "
         "integral of k s d L'^2 %.9f J (rel. diff %.1e; at twice the interval %.1e)\n", d,
         lg->E[0], lg->E[m], rises, loss, W, fabs(loss - W) / loss, fabs(loss - W2) / loss);
  EXPECT_TRUE(loss > 0.05);
  EXPECT_NEAR(loss, W, 1e-7 * loss);
  free(lg);
}

//---------------------------------- Ligament ---------------------------------------------------

// OpenSim's default ligament force-length curve (Ligament::constructProperties), here to be
// evaluated independently of the System
static const double lig_x[13] = {-5.0, 0.998, 0.999, 1.0, 1.1, 1.2, 1.3,
                                 1.4,  1.5,   1.6,   1.601, 1.602, 5.0};
static const double lig_y[13] = {0.0, 0.0, 0.0, 0.0, 0.035, 0.12, 0.26,
                                 0.55, 1.17, 2.0, 2.0, 2.0, 2.0};
static double lig_param[26], lig_cache[256];

static double curve(double x) {
  double d[3];
  mbs_function_eval(MBS_FUNC_SIMM_SPLINE, 13, lig_param, lig_cache, x, d);
  return d[0];
}

static const double lg_m = 15.0, lg_L0 = 0.2, lg_F = 500.0, lg_c = 300.0;

// a mass on a slider along Ground's y hanging by a ligament from Ground's origin, damped;
// curve: -1 for OpenSim's default, else that function's spec
static mbs_system* hanging(const mbs_function_spec* custom, int* lig) {
  mbs_system* sys = mbs_system_create("hanging");
  mbs_body_spec s = mbs_body_spec_default("block", 0, MBS_MOB_SLIDER);
  s.mass = lg_m;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.01;
  s.X_PF.angles[2] = s.X_BM.angles[2] = M_PI / 2;  // the slider along Ground's y
  const int b = mbs_system_add_body(sys, &s);
  const double gv[3] = {0, -g, 0};
  mbs_system_add_gravity(sys, gv);
  mbs_system_add_mobility_damper(sys, b, 0, lg_c);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", b)};
  const int path = mbs_system_add_path(sys, "lig", p, 2);
  const int fn = custom ? mbs_system_add_function(sys, custom)
                        : mbs_system_add_ligament_default_curve(sys, "lig_curve");
  EXPECT_TRUE(fn >= 0);
  mbs_ligament_spec ls = {NULL, path, lg_L0, lg_F, fn};
  *lig = mbs_system_add_ligament(sys, &ls);
  EXPECT_TRUE(*lig >= 0);
  if (*lig < 0) printf("cannot add the ligament: %s\n", mbs_system_error(sys)->message);
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static void test_ligament(void) {
  memcpy(lig_param, lig_x, sizeof(lig_x));
  memcpy(lig_param + 13, lig_y, sizeof(lig_y));
  mbs_error err;
  EXPECT_TRUE(mbs_function_cache_count(MBS_FUNC_SIMM_SPLINE, 13) <= 256);
  EXPECT_OK(mbs_function_prepare(MBS_FUNC_SIMM_SPLINE, 13, lig_param, lig_cache, &err, "curve"));
  int lig;
  mbs_system* sys = hanging(NULL, &lig);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_TRUE(strcmp(mbs_force_kind(sys, lig), "ligament") == 0);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/lig/resting_length") != NULL);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/lig/pcsa_force") != NULL);
  EXPECT_TRUE(mbs_system_find_param(sys, "/functions/lig_curve/x") != NULL);
  // sampled lengths, slack and stretched; at rest the damper adds nothing: m y'' = T - m g
  const double Ls[] = {0.1, 0.19, 0.2, 0.2002, 0.21, 0.23, 0.25, 0.27, 0.29, 0.31, 0.319};
  double worst = 0;
  for (size_t i = 0; i < sizeof(Ls) / sizeof(Ls[0]); i++) {
    mbs_state_upd_q(st)[0] = -Ls[i];
    mbs_state_upd_u(st)[0] = 0;
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    mbs_path_force_report r;
    EXPECT_OK(mbs_get_path_force_report(sys, st, lig, &r));
    const double T = Ls[i] <= lg_L0 ? 0.0 : lg_F * curve(Ls[i] / lg_L0);
    worst = fmax(worst, fabs(r.tension - T));
    EXPECT_NEAR(r.length, Ls[i], 1e-15);
    EXPECT_NEAR(r.tension, T, 1e-12);
    EXPECT_NEAR(r.stretch, fmax(0, Ls[i] - lg_L0), 1e-15);
    if (Ls[i] <= lg_L0) EXPECT_TRUE(r.tension == 0);
    EXPECT_NEAR(mbs_get_udot(sys, st)[0] * lg_m, T - lg_m * g, 1e-9);
  }
  printf("ligament at %zu lengths: |T - pcsa_force curve(L/L0)| <= %.2e N\n",
         sizeof(Ls) / sizeof(Ls[0]), worst);
  // the length where pcsa_force curve(L / L0) = m g, by bisection on the curve (increasing on
  // [1.2, 1.6])
  double lo = 1.2, hi = 1.6;
  EXPECT_TRUE(lg_F * curve(lo) < lg_m * g && lg_F * curve(hi) > lg_m * g);
  for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
    const double mid = 0.5 * (lo + hi);
    if (lg_F * curve(mid) < lg_m * g) lo = mid;
    else hi = mid;
  }
  const double L_eq = 0.5 * (lo + hi) * lg_L0;
  // released from the rest length, moving down
  mbs_state_upd_q(st)[0] = -lg_L0;
  mbs_state_upd_u(st)[0] = -0.5;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-8;
  o.report_interval = 0.5;
  mbs_simulation_result res;
  memset(&res, 0, sizeof(res));
  EXPECT_OK(mbs_simulate(sys, st, 4.0, &o, NULL, 0, NULL, NULL, &res));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  mbs_path_force_report r;
  EXPECT_OK(mbs_get_path_force_report(sys, st, lig, &r));
  printf("hanging mass at rest: L %.9f m (bisection %.9f m), v %.1e m/s, T %.6f N (m g = "
         "%.6f N), %ld steps\n", r.length, L_eq, mbs_state_u(st)[0], r.tension, lg_m * g,
         res.integrator.steps);
  EXPECT_TRUE(fabs(mbs_state_u(st)[0]) < 1e-6);
  EXPECT_NEAR(r.length, L_eq, 1e-7);
  EXPECT_NEAR(r.tension, lg_m * g, 1e-6);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);

  // a curve that is not zero below the rest length: slack still pulls nothing
  const double lin[2] = {1.0, 0.0};  // curve(x) = x
  mbs_function_spec f;
  memset(&f, 0, sizeof(f));
  f.type = MBS_FUNC_LINEAR;
  f.coefs = lin;
  sys = hanging(&f, &lig);
  st = mbs_state_create(sys);
  const double Ls2[] = {0.05, 0.15, 0.2, 0.25};
  for (size_t i = 0; i < sizeof(Ls2) / sizeof(Ls2[0]); i++) {
    mbs_state_upd_q(st)[0] = -Ls2[i];
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    EXPECT_OK(mbs_get_path_force_report(sys, st, lig, &r));
    EXPECT_NEAR(r.tension, Ls2[i] <= lg_L0 ? 0.0 : lg_F * Ls2[i] / lg_L0, 1e-12);
    EXPECT_NEAR(mbs_get_udot(sys, st)[0] * lg_m, r.tension - lg_m * g, 1e-9);
  }
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- bad input --------------------------------------------------

static void refused(mbs_system* sys, int rc, const char* name, const char* what) {
  EXPECT_TRUE(rc < 0);
  const char* msg = mbs_system_error(sys)->message;
  EXPECT_TRUE(contains(msg, name));
  EXPECT_TRUE(contains(msg, what));
  printf("refused: %s\n", msg);
}

static void test_bad_input(void) {
  mbs_system* sys = mbs_system_create("bad");
  mbs_body_spec s = mbs_body_spec_default("block", 0, MBS_MOB_SLIDER);
  s.mass = 1;
  const int b = mbs_system_add_body(sys, &s);
  mbs_path_point_spec p[2] = {mbs_path_point_spec_default("origin", 0),
                              mbs_path_point_spec_default("insertion", b)};
  const int path = mbs_system_add_path(sys, "band", p, 2);
  const int fn = mbs_system_add_ligament_default_curve(sys, NULL);
  EXPECT_TRUE(path >= 0 && fn >= 0);
  const int nforce = mbs_system_nforce(sys);
  mbs_path_spring_spec sp = {NULL, path, 0.1, -5.0, 0.0};
  refused(sys, mbs_system_add_path_spring(sys, &sp), "band", "stiffness");
  sp.stiffness = 5;
  sp.resting_length = -0.1;
  refused(sys, mbs_system_add_path_spring(sys, &sp), "band", "resting_length");
  sp.resting_length = 0.1;
  sp.dissipation = -1;
  refused(sys, mbs_system_add_path_spring(sys, &sp), "band", "dissipation");
  sp.dissipation = 0;
  sp.path = 7;
  sp.name = "loose";
  refused(sys, mbs_system_add_path_spring(sys, &sp), "loose", "path 7");
  mbs_ligament_spec ls = {NULL, path, 0.1, -20.0, fn};
  refused(sys, mbs_system_add_ligament(sys, &ls), "band", "pcsa_force");
  ls.pcsa_force = 20;
  ls.resting_length = 0;
  refused(sys, mbs_system_add_ligament(sys, &ls), "band", "resting_length");
  ls.resting_length = 0.1;
  ls.force_length_curve = 5;
  refused(sys, mbs_system_add_ligament(sys, &ls), "band", "function 5");
  ls.force_length_curve = fn;
  ls.path = -1;
  refused(sys, mbs_system_add_ligament(sys, &ls), "ligament", "path -1");
  mbs_path_actuator_spec as = {"motor", path, 0.0, 0.0, -1};
  refused(sys, mbs_system_add_path_actuator(sys, &as), "motor", "optimal_force");
  as.optimal_force = 10;
  as.control_function = 3;
  refused(sys, mbs_system_add_path_actuator(sys, &as), "motor", "function 3");
  EXPECT_EQ_INT(mbs_system_nforce(sys), nforce);  // nothing was added
  // good ones, then a taken name
  ls.path = path;
  EXPECT_TRUE(mbs_system_add_ligament(sys, &ls) >= 0);
  sp.path = path;
  sp.name = NULL;
  refused(sys, mbs_system_add_path_spring(sys, &sp), "band", "taken");
  sp.name = "band_spring";
  EXPECT_TRUE(mbs_system_add_path_spring(sys, &sp) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  // bad values in a State, at Instance
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_realize_instance(sys, st));
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/band_spring/stiffness", 0, -3.0));
  EXPECT_TRUE(mbs_realize_instance(sys, st) != MBS_OK);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "band_spring") &&
              contains(mbs_state_error(st)->message, "stiffness"));
  printf("at Instance: %s\n", mbs_state_error(st)->message);
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/band_spring/stiffness", 0, 3.0));
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/band/pcsa_force", 0, -1.0));
  EXPECT_TRUE(mbs_realize_instance(sys, st) != MBS_OK);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "'band'") &&
              contains(mbs_state_error(st)->message, "pcsa_force"));
  printf("at Instance: %s\n", mbs_state_error(st)->message);
  // the report is only for these elements
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/band/pcsa_force", 0, 1.0));
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  mbs_path_force_report r;
  EXPECT_TRUE(mbs_get_path_force_report(sys, st, mbs_system_nforce(sys), &r) != MBS_OK);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  test_path_actuator();
  test_path_spring_energy();
  test_ligament();
  test_bad_input();
  return mbs_test_finish("test_path_forces");
}
