// Quiet standing and falls on the perturbation platform (the OpenSim paper's §5 experiment):
// the solved posture puts the centre of mass over the feet; settled on its spheres, the body
// needs no force from outside (the contact balances gravity); with the holding torques the free
// model starts with zero accelerations; locked and unperturbed it stays standing; free, it
// stands clearly longer unperturbed than under a perturbation; a large perturbation makes it
// fall, detected as the pelvis dropping below 3/4 of its standing height. The feedback mode:
// the sway the ankles sense is the body's sway to first order; the body, held stiff above the
// ankles, loses its balance where a single inverted pendulum with the same normalized gains,
// intrinsic impedance, window and delay does (its critical delay found here from the delay
// equation); at the default delay a small push dies away and a large one still topples it.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../studies/human_model.h"
#include "../../studies/posture.h"
#include <lapacke.h>

#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs_test.h"

static const double deg = 3.14159265358979323846 / 180;
static mbs_osim_model* model;

static mbs_state* stand(double knee_deg, mbs_joint_mode mode, double dx, mbs_posture_result* r) {
  const mbs_system* sys = mbs_osim_system(model);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_state_set_param(sys, st, "/functions/platform_tx/prescribed/scale", 0, dx));
  mbs_posture_options o;
  mbs_posture_options_default(&o);
  o.knee_flexion = knee_deg * deg;
  o.mode = mode;
  mbs_error err;
  const int rc = mbs_posture_quiet_standing(model, st, &o, r, &err);
  EXPECT_OK(rc);
  if (rc) printf("quiet standing: %s\n", err.message);
  return st;
}

static double fall_time(mbs_state* st, double duration) {
  double T = NAN;
  mbs_error err;
  const int rc = mbs_posture_time_to_fall(model, st, duration, 0.75, 1e-4, &T, &err);
  EXPECT_OK(rc);
  if (rc) printf("time to fall: %s\n", err.message);
  return T;
}

// mass and centre of mass of the named bodies
static void subset_com(mbs_state* st, const char* const* names, int n, double* mass,
                       double com[3]) {
  const mbs_system* sys = mbs_osim_system(model);
  unsigned char skip[64];
  EXPECT_TRUE(mbs_system_nbody(sys) <= 64);
  memset(skip, 1, sizeof skip);
  for (int k = 0; k < n; k++) skip[mbs_body_find(sys, names[k])] = 0;
  EXPECT_OK(mbs_calc_center_of_mass_subset(sys, st, skip, mass, com));
}

// The holding torques against the static moment balance of what hangs above a joint (at rest no
// contact acts above the hips, the only external force there is gravity): the lumbar extension
// torque holds the torso, tau = m g (x_com - x_joint) about the joint's z axis (the torso's frame
// sits at the lumbar joint); the two hip flexion torques together hold pelvis and torso about the
// line through both hip centres (the femurs' frames), whose reaction forces have no moment about
// it; pelvis and torso are the hips' parent side, on which a joint's torque acts with the opposite
// sign: tau_r + tau_l = -m g (x_com - x_hip). Uses only positions and masses, not the inverse
// dynamics that made the torques.
static void check_holding_torques(mbs_state* st, const mbs_posture_result* r) {
  const mbs_system* sys = mbs_osim_system(model);
  const double g = 9.80665;
  double R[9], lumbar[3], hip_r[3], hip_l[3], m, c[3];
  EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, "torso"), R, lumbar));
  EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, "femur_r"), R, hip_r));
  EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, "femur_l"), R, hip_l));
  const char* torso[] = {"torso"};
  subset_com(st, torso, 1, &m, c);
  const double lumbar_expect = m * g * (c[0] - lumbar[0]);
  const char* upper[] = {"pelvis", "torso"};
  subset_com(st, upper, 2, &m, c);
  EXPECT_NEAR(hip_r[0], hip_l[0], 1e-12);
  EXPECT_NEAR(hip_r[1], hip_l[1], 1e-12);
  const double hips_expect = -m * g * (c[0] - hip_r[0]);
  // mbs_posture_joint_names: 0 lumbar_extension, 3 hip_flexion_r, 8 hip_flexion_l
  printf("  holding torques: lumbar extension %.4f N m (moment of the torso's weight %.4f), "
         "hip flexion %.4f + %.4f N m (pelvis and torso %.4f)\n", r->torque[0], lumbar_expect,
         r->torque[3], r->torque[8], hips_expect);
  EXPECT_NEAR(r->torque[0], lumbar_expect, 1e-9 * 75 * g);
  EXPECT_NEAR(r->torque[3] + r->torque[8], hips_expect, 1e-9 * 75 * g);
  EXPECT_NEAR(r->torque[3], r->torque[8], 1e-9 * 75 * g);  // the posture is symmetric
}

static void test_quiet_standing(void) {
  const mbs_system* sys = mbs_osim_system(model);
  const double weight = 75 * 9.80665;
  for (int i = 0; i < 2; i++) {
    const double knee = i ? 30 : 1;
    mbs_posture_result r;
    mbs_state* st = stand(knee, MBS_JOINTS_FREE, 0, &r);
    printf("knee %.0f deg: hip %.2f deg, ankle %.2f deg, com %.4f m ahead of the ankles, "
           "pelvis at %.4f m, speed left %.2e, residual %.3e N (weight %.1f N)\n", knee,
           r.hip_flexion / deg, r.ankle_angle / deg, r.com_ahead, r.pelvis_height,
           r.settle_speed, r.residual, weight);
    // 35 % of the way from the heel sphere's centre (0.25 L behind the ankle, plus the sphere
    // radius) to the hallux sphere's (0.70 L ahead), L = 0.152 H
    const double heel = -0.25 * 0.152 * 1.75 + 0.02, hallux = 0.70 * 0.152 * 1.75;
    EXPECT_NEAR(r.com_ahead, heel + 0.35 * (hallux - heel), 1e-6);
    // the ankles are pins across the sagittal plane: the feet lie flat at θ − h already, and
    // levelling them leaves the angle there
    EXPECT_ABS(r.ankle_angle, knee * deg - r.hip_flexion, 1e-12);
    EXPECT_TRUE(r.residual < 1e-3 * weight);  // the contact carries the body
    EXPECT_TRUE(r.settle_speed < 1e-2);
    // the holding torques make the free model start at rest
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    const double* a = mbs_get_udot(sys, st);
    double amax = 0;
    for (int k = 0; k < mbs_system_nu(sys); k++) amax = fmax(amax, fabs(a[k]));
    printf("  free joints with holding torques: largest acceleration %.2e\n", amax);
    EXPECT_TRUE(amax < 1e-2);
    check_holding_torques(st, &r);
    mbs_state_destroy(st);
  }
}

static void test_falls(void) {
  const double duration = 3.0;
  mbs_posture_result r;
  // locked, unperturbed: stands for the whole run
  mbs_state* st = stand(15, MBS_JOINTS_LOCKED, 0, &r);
  const double T_locked = fall_time(st, duration);
  printf("locked, unperturbed: T = %.3f s\n", T_locked);
  EXPECT_NEAR(T_locked, duration, 0);
  mbs_state_destroy(st);
  // free: an unstable equilibrium; unperturbed it stands clearly longer than perturbed
  st = stand(15, MBS_JOINTS_FREE, 0, &r);
  const double T_free = fall_time(st, duration);
  mbs_state_destroy(st);
  st = stand(15, MBS_JOINTS_FREE, 0.02, &r);
  const double T_free_pushed = fall_time(st, duration);
  mbs_state_destroy(st);
  printf("free: unperturbed T = %.3f s, 2 cm anterior T = %.3f s\n", T_free, T_free_pushed);
  EXPECT_TRUE(T_free > T_free_pushed + 0.1);
  // a large perturbation topples even the locked model
  st = stand(15, MBS_JOINTS_LOCKED, 0.5, &r);
  const double T_pushed = fall_time(st, duration);
  printf("locked, 50 cm anterior: T = %.3f s\n", T_pushed);
  EXPECT_TRUE(T_pushed < duration);
  mbs_state_destroy(st);
}

// quiet standing for other contact parameters and body sizes; feet too soft to hold the rigid
// body upright (the contact's resistance to tilting below weight x height) are refused with a
// clear message instead of a standing balanced on the toes or heels
static void test_other_contacts(void) {
  const double k[3] = {1e7, 3e7, 3e6}, c[3] = {2, 1, 2}, H[3] = {1.55, 1.95, 1.75},
               M[3] = {52, 110, 75};
  const int stands[3] = {1, 1, 0};
  for (int i = 0; i < 3; i++) {
    mbs_human_params p;
    mbs_human_params_default(&p);
    p.lock_joints = 1;
    p.platform.contact_stiffness = k[i];
    p.platform.contact_dissipation = c[i];
    p.height = H[i];
    p.mass = M[i];
    mbs_error err;
    mbs_osim_model* m = mbs_human_model_build(&p, &err);
    EXPECT_TRUE(m != NULL);
    if (!m) continue;
    const mbs_system* sys = mbs_osim_system(m);
    for (int knee = 0; knee <= 45; knee += 45) {
      mbs_state* st = mbs_state_create(sys);
      mbs_posture_options o;
      mbs_posture_options_default(&o);
      o.knee_flexion = (knee + 1) * deg;
      mbs_posture_result r;
      mbs_error_clear(&err);
      const int rc = mbs_posture_quiet_standing(m, st, &o, &r, &err);
      printf("contact %g Pa, %g s/m, %g m, %g kg, knee %d deg: %s\n", k[i], c[i], H[i], M[i],
             knee + 1, rc ? err.message : "stands");
      if (stands[i]) {
        EXPECT_OK(rc);
        if (!rc) {
          EXPECT_TRUE(r.residual < 1e-6 * M[i] * 9.81);
          // flat on the feet: the pelvis barely tilted (a standing on an edge tilts by ~0.1)
          const int tilt = mbs_osim_find_coordinate(m, "pelvis_tilt");
          EXPECT_TRUE(fabs(mbs_state_q(st)[mbs_osim_coordinate_info(m, tilt)->qindex]) < 0.03);
          // and it is a standing: locked and left alone, the body stays up
          double T = 0;
          o.mode = MBS_JOINTS_LOCKED;
          EXPECT_OK(mbs_posture_quiet_standing(m, st, &o, &r, &err));
          EXPECT_OK(mbs_posture_time_to_fall(m, st, 1.0, 0.75, 1e-4, &T, &err));
          EXPECT_NEAR(T, 1.0, 0);
        }
      } else {
        EXPECT_EQ_INT(rc, MBS_ERR_ASSEMBLY);
        EXPECT_TRUE(strstr(err.message, "too soft") != NULL);
      }
      mbs_state_destroy(st);
    }
    mbs_osim_free(m);
  }
}

// a crouch with the pelvis and trunk leaning forward: the lean is the pelvis's tilt, the feet
// are still flat (the foot's pitch in Ground is the sum of the joint angles down the leg), the
// centre of mass stands where it should, and the body stands in equilibrium
static void test_trunk_lean(void) {
  const mbs_system* sys = mbs_osim_system(model);
  const double lean = 20 * deg, knee = 45 * deg;
  mbs_state* st = mbs_state_create(sys);
  mbs_posture_options o;
  mbs_posture_options_default(&o);
  o.knee_flexion = knee;
  o.trunk_lean = lean;
  o.mode = MBS_JOINTS_LOCKED;
  mbs_posture_result r;
  mbs_error err;
  EXPECT_OK(mbs_posture_quiet_standing(model, st, &o, &r, &err));
  const double* q = mbs_state_q(st);
  const double tilt = q[mbs_osim_coordinate_info(model, mbs_osim_find_coordinate(model,
                                                  "pelvis_tilt"))->qindex];
  const double hip = q[mbs_osim_coordinate_info(model, mbs_osim_find_coordinate(model,
                                                 "hip_flexion_r"))->qindex];
  const double kn = q[mbs_osim_coordinate_info(model, mbs_osim_find_coordinate(model,
                                                "knee_angle_r"))->qindex];
  const double ank = q[mbs_osim_coordinate_info(model, mbs_osim_find_coordinate(model,
                                                 "ankle_angle_r"))->qindex];
  printf("lean 20 deg, knee 45 deg: pelvis tilt %.2f deg, hip %.2f deg, ankle %.2f deg, "
         "residual %.2e N\n", tilt / deg, hip / deg, ank / deg, r.residual);
  // the pelvis leans forward by the lean, up to the small rigid tilt of settling on the spheres
  EXPECT_NEAR(tilt, -lean, 0.03);
  // the foot's pitch relative to the pelvis's tilt: flat when hip + knee + ankle = 0 ... + lean
  EXPECT_NEAR(hip + kn + ank - lean, 0, 1e-12);
  EXPECT_NEAR(kn, -knee, 1e-12);
  // the hips flex further than upright (the trunk's weight moves forward)
  mbs_posture_result upright;
  mbs_state* st2 = mbs_state_create(sys);
  o.trunk_lean = 0;
  EXPECT_OK(mbs_posture_quiet_standing(model, st2, &o, &upright, &err));
  EXPECT_TRUE(r.hip_flexion > upright.hip_flexion + 0.5 * lean);
  EXPECT_NEAR(r.com_ahead, upright.com_ahead, 1e-6);
  EXPECT_TRUE(r.residual < 1e-6 * 75 * 9.81);
  // leaning, the trunk needs tens of N m at the back and the hips
  check_holding_torques(st, &r);
  EXPECT_TRUE(r.torque[0] > 10 && r.torque[3] < -5);
  double T = 0;
  EXPECT_OK(mbs_posture_time_to_fall(model, st, 1.0, 0.75, 1e-4, &T, &err));
  EXPECT_NEAR(T, 1.0, 0);
  mbs_state_destroy(st);
  mbs_state_destroy(st2);
}

// a centre of mass the hips cannot bring over the given point is refused with what was reached,
// not settled somewhere else
static void test_unreachable_com(void) {
  const mbs_system* sys = mbs_osim_system(model);
  mbs_state* st = mbs_state_create(sys);
  mbs_posture_options o;
  mbs_posture_options_default(&o);
  o.knee_flexion = 15 * deg;
  o.com_ahead = 0.5;  // half a metre ahead of the ankles: beyond any hip flexion
  mbs_posture_result r;
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = mbs_posture_quiet_standing(model, st, &o, &r, &err);
  printf("centre of mass 50 cm ahead: %s\n", rc ? err.message : "stands");
  EXPECT_TRUE(rc == MBS_ERR_ASSEMBLY);
  EXPECT_TRUE(strstr(err.message, "no hip flexion puts the centre of mass 50.0 cm ahead") != NULL);
  mbs_state_destroy(st);
}

// The free mode's quiet standing is an unstable equilibrium, and the simulated collapse follows
// linear stability theory: the Jacobian of (qdot, udot) by central differences over the subject's
// coordinates (the platform's are prescribed) has an eigenvalue with a positive real part, and
// unperturbed, the deviation from the start grows from the equilibrium's residual at that rate
// (measured while it grows from 1e-6 to 1e-3 rad, well inside the linear range). The fastest
// mode's shape is the collapse the posture study sees (docs/posture_study.md).
typedef struct growth {
  const double* q0;
  const int* qi;
  int n;
  double t_small, t_large;  // when the deviation first exceeds 1e-6 and 1e-3
} growth;

static int record_growth(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  growth* g = user;
  double d = 0;
  for (int k = 0; k < g->n; k++) d = fmax(d, fabs(mbs_state_q(st)[g->qi[k]] - g->q0[g->qi[k]]));
  const double t = mbs_state_time(st);
  if (d > 1e-6 && !(g->t_small >= 0)) g->t_small = t;
  if (d > 1e-3 && !(g->t_large >= 0)) g->t_large = t;
  return d > 1e-2;  // stop once the motion is no longer small
}

static void test_free_mode_instability(void) {
  const mbs_system* sys = mbs_osim_system(model);
  EXPECT_EQ_INT(mbs_system_nq(sys), mbs_system_nu(sys));  // no quaternions in this model
  mbs_posture_result r;
  mbs_state* st = stand(1, MBS_JOINTS_FREE, 0, &r);
  mbs_state* w = mbs_state_create(sys);
  // the subject's coordinates
  int qi[64], ui[64], coord[64], n = 0;
  for (int c = 0; c < mbs_osim_ncoordinate(model) && n < 64; c++) {
    const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(model, c);
    if (strncmp(ci->name, "platform_", 9) == 0) continue;
    coord[n] = c;
    qi[n] = ci->qindex;
    ui[n++] = ci->uindex;
  }
  const int N = 2 * n;
  double* A = calloc((size_t)N * N, sizeof(double));  // column-major
  const double h = 1e-6;
  for (int j = 0; j < N; j++) {
    for (int sgn = 1; sgn >= -1; sgn -= 2) {
      EXPECT_OK(mbs_state_copy(sys, w, st));
      if (j < n) mbs_state_upd_q(w)[qi[j]] += sgn * h;
      else mbs_state_upd_u(w)[ui[j - n]] += sgn * h;
      EXPECT_OK(mbs_realize_acceleration(sys, w));
      const double* qd = mbs_get_qdot(sys, w);
      const double* ud = mbs_get_udot(sys, w);
      for (int i = 0; i < n; i++) {
        A[(size_t)j * N + i] += sgn * qd[qi[i]] / (2 * h);
        A[(size_t)j * N + n + i] += sgn * ud[ui[i]] / (2 * h);
      }
    }
  }
  double* wr = malloc((size_t)N * sizeof(double));
  double* wi = malloc((size_t)N * sizeof(double));
  double* V = malloc((size_t)N * N * sizeof(double));
  const lapack_int info = LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'V', N, A, N, wr, wi, NULL, 1,
                                        V, N);
  EXPECT_EQ_INT((int)info, 0);
  double lambda = -INFINITY;
  int unstable = 0, fastest = 0;
  for (int k = 0; k < N; k++) {
    if (wr[k] > 1e-3) unstable++;
    if (wr[k] > lambda) {
      lambda = wr[k];
      fastest = k;
    }
  }
  // the fastest mode's shape: its coordinates, largest first
  EXPECT_TRUE(wi[fastest] == 0);
  const double* v = V + (size_t)fastest * N;
  double vmax = 0;
  for (int i = 0; i < n; i++) vmax = fmax(vmax, fabs(v[i]));
  printf("  the fastest mode (coordinates relative to the largest):");
  for (int i = 0; i < n; i++)
    if (fabs(v[i]) > 0.1 * vmax)
      printf(" %s %+.2f", mbs_osim_coordinate_info(model, coord[i])->name, v[i] / vmax);
  printf("\n");
  // a sagittal, symmetric collapse: the pelvis turns under an upright trunk (pelvis tilt and
  // lumbar extension opposite and nearly equal), hips and knees fold together
  double vc[5] = {0};
  const char* const names[5] = {"pelvis_tilt", "lumbar_extension", "hip_flexion_r",
                                "knee_angle_r", "hip_flexion_l"};
  for (int k = 0; k < 5; k++)
    for (int i = 0; i < n; i++)
      if (!strcmp(mbs_osim_coordinate_info(model, coord[i])->name, names[k])) vc[k] = v[i] / vmax;
  EXPECT_TRUE(vc[0] * vc[1] < 0 && fabs(vc[0] + vc[1]) < 0.1 && fabs(vc[0]) > 0.3);
  EXPECT_TRUE(vc[2] * vc[3] < 0 && fabs(vc[3]) > 0.3);
  EXPECT_NEAR(vc[2], vc[4], 1e-6);
  // the simulated growth of the deviation, unperturbed
  growth g = {mbs_state_q(st), qi, n, -1, -1};
  double* q0 = malloc((size_t)mbs_system_nq(sys) * sizeof(double));
  memcpy(q0, mbs_state_q(st), (size_t)mbs_system_nq(sys) * sizeof(double));
  g.q0 = q0;
  mbs_simulation_options so;
  mbs_simulation_options_default(&so);
  so.integ.accuracy = 1e-8;
  so.report_interval = 1e-3;
  mbs_simulation_result res;
  EXPECT_OK(mbs_simulate(sys, st, 3.0, &so, NULL, 0, record_growth, &g, &res));
  const double rate = log(1e3) / (g.t_large - g.t_small);
  printf("free, knee 1 deg: %d unstable eigenvalues, the largest %.3f 1/s (e-folding %.1f ms); "
         "the deviation grows from 1e-6 at %.3f s to 1e-3 at %.3f s: %.3f 1/s\n", unstable,
         lambda, 1e3 / lambda, g.t_small, g.t_large, rate);
  EXPECT_TRUE(unstable >= 1 && lambda > 1);
  EXPECT_TRUE(g.t_small > 0 && g.t_large > g.t_small);
  EXPECT_NEAR(rate, lambda, 0.05 * lambda);
  free(q0);
  free(V);
  free(wr);
  free(wi);
  free(A);
  mbs_state_destroy(w);
  mbs_state_destroy(st);
}

//---------------------------------- feedback mode ----------------------------------------------

// the body's sway, independently: the angle from the vertical (Ground's y, against gravity) of
// the line from the mean of the feet's origins (the ankle joints) to the centre of mass of every
// body but Ground and the platform, in the plane of y and fwd
static double sway_now(mbs_state* st, const double fwd[3]) {
  const mbs_system* sys = mbs_osim_system(model);
  unsigned char skip[64] = {1};
  skip[mbs_body_find(sys, "platform")] = 1;
  double m, c[3], a[3] = {0, 0, 0}, R[9], p[3];
  EXPECT_OK(mbs_realize_position(sys, st));
  EXPECT_OK(mbs_calc_center_of_mass_subset(sys, st, skip, &m, c));
  const char* feet[2] = {"calcn_r", "calcn_l"};
  for (int f = 0; f < 2; f++) {
    EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, feet[f]), R, p));
    for (int k = 0; k < 3; k++) a[k] += p[k] / 2;
  }
  double x = 0;
  for (int k = 0; k < 3; k++) x += fwd[k] * (c[k] - a[k]);
  return atan2(x, c[1] - a[1]);
}

// what the ankle controller senses: sum_k c_k q_k with the State's coefficients
static double sensed_sway(const mbs_system* sys, mbs_state* st) {
  const mbs_param_info* pi =
      mbs_system_find_param(sys, "/controllerset/ankle_angle_r_feedback/coefficients");
  EXPECT_TRUE(pi != NULL && pi->size == mbs_osim_ncoordinate(model));
  if (!pi) return NAN;
  double y = 0;
  for (int k = 0; k < pi->size; k++)
    y += mbs_state_params(st)[pi->index + k] *
         mbs_state_q(st)[mbs_osim_coordinate_info(model, k)->qindex];
  return y;
}

static double param(const mbs_system* sys, mbs_state* st, const char* path) {
  const mbs_param_info* pi = mbs_system_find_param(sys, path);
  EXPECT_TRUE(pi != NULL);
  return pi ? mbs_state_params(st)[pi->index] : NAN;
}

// does the single inverted pendulum with ankle feedback lose its balance at delay d? In time
// units of T: th'' = th - k0 th - b0 th' - (kp qbar + kd T ubar), qbar and ubar the means over
// the window w of the angle delayed by d (Simpson's rule; the change over w / w), integrated by
// semi-implicit Euler steps over 40 T from th = 1e-3 at rest
static int pendulum_grows(double kp, double kd, double k0, double b0, double T, double w,
                          double d) {
  const double h = 1e-3, tend = 40;
  const int n = (int)(tend / h), nd = (int)lround(d / T / h), nw = (int)lround(w / T / h);
  double* th = malloc((size_t)(n + 1) * sizeof(double));
  double om = 0, late = 0;
  th[0] = 1e-3;
  for (int i = 0; i < n; i++) {
    const int i1 = i - nd, im = i - nd - nw / 2, i0 = i - nd - nw;
    const double q1 = th[i1 > 0 ? i1 : 0], qm = th[im > 0 ? im : 0], q0 = th[i0 > 0 ? i0 : 0];
    const double qbar = (q0 + 4 * qm + q1) / 6, ubar = (q1 - q0) / (w / T);
    om += h * (th[i] - k0 * th[i] - b0 * om - kp * qbar - kd * ubar);
    th[i + 1] = th[i] + h * om;
    if (i * h > tend - 5) late = fmax(late, fabs(th[i + 1]));
  }
  free(th);
  return late > 1e-3;
}

typedef struct sway_record {
  const mbs_system* sys;
  double y0, early, late;  // the largest |y - y0| before 2 s and after 3 s
} sway_record;

static int record_sway(const mbs_system* sys, mbs_state* st, void* user) {
  sway_record* r = user;
  const double t = mbs_state_time(st), d = fabs(sensed_sway(sys, st) - r->y0);
  if (t < 2) r->early = fmax(r->early, d);
  if (t > 4) r->late = fmax(r->late, d);
  return 0;
}

static void test_feedback(void) {
  mbs_human_params p;
  mbs_human_params_default(&p);
  p.lock_joints = 1;
  char* text = mbs_human_model_osim(&p);
  mbs_osim_options oo = {0};
  oo.extend = mbs_posture_add_feedback;
  mbs_error err;
  mbs_osim_model* fm = mbs_osim_parse(text, strlen(text), "human", &oo, &err);
  free(text);
  EXPECT_TRUE(fm != NULL);
  if (!fm) {
    printf("feedback model: %s\n", err.message);
    return;
  }
  mbs_osim_model* plain = model;
  model = fm;
  const mbs_system* sys = mbs_osim_system(fm);
  const int ankle = 7;  // ankle_angle_r in mbs_posture_joint_names
  EXPECT_TRUE(!strcmp(mbs_posture_joint_names[ankle], "ankle_angle_r"));
  mbs_posture_result r;
  mbs_state* st = stand(1, MBS_JOINTS_FEEDBACK, 0, &r);

  // the ankle's G: half the weight of the body but the right foot times the distance of its
  // centre of mass from the right ankle
  const char* body_r[] = {"pelvis", "torso", "femur_r", "tibia_r", "femur_l", "tibia_l",
                          "calcn_l"};
  double m, c[3], R[9], pa[3], pl[3];
  subset_com(st, body_r, 7, &m, c);
  EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, "calcn_r"), R, pa));
  EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, "calcn_l"), R, pl));
  const double dist = sqrt((c[0] - pa[0]) * (c[0] - pa[0]) + (c[1] - pa[1]) * (c[1] - pa[1]) +
                           (c[2] - pa[2]) * (c[2] - pa[2]));
  EXPECT_NEAR(r.stiffness[ankle], 0.5 * m * 9.80665 * dist, 1e-9 * r.stiffness[ankle]);
  EXPECT_TRUE(r.time_scale[ankle] > 0.2 && r.time_scale[ankle] < 0.5);

  // the sensed sway against the sway itself, to first order: the error of the linearization
  // shrinks as the square of the displacement
  const double d[3] = {pa[0] - pl[0], pa[1] - pl[1], pa[2] - pl[2]};
  double fwd[3] = {d[2], 0, -d[0]};  // y x d
  const double nf = sqrt(fwd[0] * fwd[0] + fwd[2] * fwd[2]);
  fwd[0] /= nf;
  fwd[2] /= nf;
  const double th0 = sway_now(st, fwd), y0 = sensed_sway(sys, st);
  EXPECT_NEAR(param(sys, st, "/controllerset/ankle_angle_r_feedback/reference"), y0, 1e-12);
  mbs_state* w = mbs_state_create(sys);
  double e[2], moved = 0;
  for (int i = 0; i < 2; i++) {
    const double delta = i ? 1e-3 : 2e-3;
    EXPECT_OK(mbs_state_copy(sys, w, st));
    unsigned x = 12345;
    for (int k = 0; k < mbs_osim_ncoordinate(fm); k++) {
      const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(fm, k);
      if (!strncmp(ci->name, "platform_", 9)) continue;
      x = x * 1103515245u + 12345u;
      mbs_state_upd_q(w)[ci->qindex] += delta * (((x >> 8) % 2001) / 1000.0 - 1);
    }
    const double dth = sway_now(w, fwd) - th0, dy = sensed_sway(sys, w) - y0;
    e[i] = fabs(dy - dth);
    if (i) moved = fabs(dth);
    printf("  sway moved by %.3e rad, the sensed sway by %.3e (difference %.2e)\n", dth, dy,
           e[i]);
  }
  EXPECT_TRUE(moved > 2e-4);
  EXPECT_TRUE(e[1] < 1e-2 * moved);
  EXPECT_TRUE(e[0] / e[1] > 3 && e[0] / e[1] < 5);  // second order
  mbs_state_destroy(w);
  mbs_state_destroy(st);

  // the critical delay of the single pendulum with the controllers' own numbers
  st = stand(1, MBS_JOINTS_FEEDBACK, 0.01, &r);
  const double kp = param(sys, st, "/controllerset/ankle_angle_r_feedback/kp");
  const double kd = param(sys, st, "/controllerset/ankle_angle_r_feedback/kd");
  const double win = param(sys, st, "/controllerset/ankle_angle_r_feedback/window");
  const double k0 = param(sys, st, "/controllerset/ankle_angle_r_intrinsic/kp");
  const double b0 = param(sys, st, "/controllerset/ankle_angle_r_intrinsic/kd");
  const double T = r.time_scale[ankle], d0 = param(sys, st, "/controllerset/ankle_angle_r_feedback/delay");
  EXPECT_TRUE(!pendulum_grows(kp, kd, k0, b0, T, win, 0));
  double lo = 0, hi = 1;
  EXPECT_TRUE(pendulum_grows(kp, kd, k0, b0, T, win, hi));
  while (hi - lo > 1e-3) {
    const double mid = (lo + hi) / 2;
    if (pendulum_grows(kp, kd, k0, b0, T, win, mid)) hi = mid;
    else lo = mid;
  }
  const double dc = (lo + hi) / 2;
  EXPECT_TRUE(d0 < dc);
  double fall[2];
  for (int i = 0; i < 2; i++) {
    mbs_state* s2 = stand(1, MBS_JOINTS_FEEDBACK, 0.01, &r);
    const double delay = (i ? 1.2 : 0.85) * dc;
    EXPECT_OK(mbs_state_set_param(sys, s2, "/controllerset/ankle_angle_r_feedback/delay", 0,
                                  delay));
    EXPECT_OK(mbs_state_set_param(sys, s2, "/controllerset/ankle_angle_l_feedback/delay", 0,
                                  delay));
    fall[i] = fall_time(s2, 10);
    mbs_state_destroy(s2);
  }
  printf("feedback: the single pendulum's critical delay %.3f s (T %.3f s, default delay %.3f "
         "s); the body pushed 1 cm with 0.85 and 1.2 times it: time to fall %.2f and %.2f s "
         "(of 10)\n", dc, T, d0, fall[0], fall[1]);
  EXPECT_TRUE(fall[0] == 10);
  EXPECT_TRUE(fall[1] < 10);

  // at the default delay: a 3 cm push dies away, 20 cm topples the body
  sway_record rec = {sys, 0, 0, 0};
  rec.y0 = sensed_sway(sys, st);
  mbs_state_destroy(st);
  st = stand(1, MBS_JOINTS_FEEDBACK, 0.03, &r);
  rec.y0 = sensed_sway(sys, st);
  mbs_simulation_options so;
  mbs_simulation_options_default(&so);
  so.integ.accuracy = 1e-4;
  so.report_interval = 0.01;
  EXPECT_OK(mbs_simulate(sys, st, 6, &so, NULL, 0, record_sway, &rec, NULL));
  printf("  pushed 3 cm: largest sway %.2e rad before 2 s, %.2e rad after 4 s\n", rec.early,
         rec.late);
  EXPECT_TRUE(rec.early > 1e-2);
  EXPECT_TRUE(rec.late < 0.2 * rec.early);
  mbs_state_destroy(st);
  st = stand(1, MBS_JOINTS_FEEDBACK, 0.2, &r);
  const double T20 = fall_time(st, 4);
  printf("  pushed 20 cm: falls at %.2f s\n", T20);
  EXPECT_TRUE(T20 < 4);
  mbs_state_destroy(st);

  // in the free mode the controllers add nothing: the holding torques alone start it at rest
  st = stand(1, MBS_JOINTS_FREE, 0, &r);
  EXPECT_NEAR(param(sys, st, "/controllerset/ankle_angle_r_feedback/scale"), 0, 0);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  double amax = 0;
  for (int k = 0; k < mbs_system_nu(sys); k++) amax = fmax(amax, fabs(mbs_get_udot(sys, st)[k]));
  EXPECT_TRUE(amax < 1e-2);
  mbs_state_destroy(st);
  model = plain;
  mbs_osim_free(fm);
}

int main(void) {
  test_other_contacts();
  mbs_human_params p;
  mbs_human_params_default(&p);
  p.lock_joints = 1;
  mbs_error err;
  model = mbs_human_model_build(&p, &err);
  EXPECT_TRUE(model != NULL);
  if (!model) {
    printf("%s\n", err.message);
    return mbs_test_finish("test_posture");
  }
  test_quiet_standing();
  test_trunk_lean();
  test_unreachable_com();
  test_free_mode_instability();
  test_falls();
  test_feedback();
  mbs_osim_free(model);
  return mbs_test_finish("test_posture");
}
