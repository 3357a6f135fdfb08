// Quiet standing and falls on the perturbation platform (the OpenSim paper's §5 experiment):
// the solved posture puts the centre of mass over the feet; settled on its spheres, the body
// needs no force from outside (the contact balances gravity); with the holding torques the free
// model starts with zero accelerations; locked and unperturbed it stays standing; free, it
// stands clearly longer unperturbed than under a perturbation; a large perturbation makes it
// fall, detected as the pelvis dropping below 3/4 of its standing height.
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
  mbs_osim_free(model);
  return mbs_test_finish("test_posture");
}
