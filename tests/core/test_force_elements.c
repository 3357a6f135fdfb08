// Force elements of force.h against independent truths:
// - bushing, coordinate limit and spring generalized force: generalized forces equal -dPE/dq
//   (central differences of mbs_calc_potential_energy along q' = N e_j for every speed j) on
//   random configurations, also for quaternion and X-Y-Z angle mobilizers;
// - bushing: with a translation body carrying a gimbal body whose frames are the bushing's
//   frames, the deflection is exactly (gimbal angles, translation), so the generalized forces
//   are exactly -(K q + D u); pure translation and pure rotation give -k d and -k theta;
// - coordinate limit: zero inside the range, -K (q - q_upper) beyond the transition, half
//   stiffness and half damping in the middle of the transition (SimTK's quintic step), C1 at
//   both ends of the transition, potential energy continuous;
// - energy of a bushing-suspended free body and of a pendulum bounded by a coordinate limit
//   conserved by Merson within 10 x accuracy x |E| (at the end of every step), and its RK4
//   drift vanishing at fourth order; with damping the energy never increases;
// - external force and point/torque actuators on a free body: body accelerations from
//   Newton-Euler about the mass center; forces expressed in a body frame turn with it;
//   functions of time are followed; controls are State variables that invalidate Dynamics;
//   a slider driven by c(t) = a t follows x = F a t^3 / (6 m);
// - bad input: clear statuses and messages naming the element or the body.
#include <string.h>

#include "random_tree.h"

static const double g0 = 9.81;

static int contains(const char* s, const char* part) { return strstr(s, part) != NULL; }

// total generalized forces J^T F + f at the State's q and u
static void generalized_forces(const mbs_system* sys, mbs_state* st, double* f) {
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_OK(mbs_calc_jacobian_transpose_times(sys, st, mbs_get_body_forces(sys, st), f));
  const double* fm = mbs_get_mobility_forces(sys, st);
  for (int i = 0; i < mbs_system_nu(sys); i++) f[i] += fm[i];
}

static double potential(const mbs_system* sys, mbs_state* st) {
  double pe = NAN;
  EXPECT_OK(mbs_realize_position(sys, st));
  EXPECT_OK(mbs_calc_potential_energy(sys, st, &pe));
  return pe;
}

// largest |f_j + dPE/dq . N e_j| / max(1, |f_j|) over the speeds, at the State's q with u = 0
static double gradient_error(const mbs_system* sys, mbs_state* st, double h) {
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys);
  double q0[64], f[64], e[64], qd[64];
  memcpy(q0, mbs_state_q(st), (size_t)nq * sizeof(double));
  memset(mbs_state_upd_u(st), 0, (size_t)nu * sizeof(double));
  generalized_forces(sys, st, f);
  double worst = 0;
  for (int j = 0; j < nu; j++) {
    memset(e, 0, sizeof(e));
    e[j] = 1;
    memcpy(mbs_state_upd_q(st), q0, (size_t)nq * sizeof(double));
    EXPECT_OK(mbs_realize_position(sys, st));
    EXPECT_OK(mbs_calc_qdot(sys, st, e, qd));
    double pe[2];
    for (int s = 0; s < 2; s++) {
      double* q = mbs_state_upd_q(st);
      for (int i = 0; i < nq; i++) q[i] = q0[i] + (s ? -h : h) * qd[i];
      pe[s] = potential(sys, st);
    }
    const double fd = -(pe[0] - pe[1]) / (2 * h);
    worst = fmax(worst, fabs(f[j] - fd) / fmax(1.0, fabs(f[j])));
  }
  memcpy(mbs_state_upd_q(st), q0, (size_t)nq * sizeof(double));
  return worst;
}

static mbs_body_spec body(const char* name, int parent, mbs_mobilizer_type t, double m) {
  mbs_body_spec s = mbs_body_spec_default(name, parent, t);
  s.mass = m;
  s.inertia[0] = 0.3 * m;
  s.inertia[1] = 0.4 * m;
  s.inertia[2] = 0.5 * m;
  return s;
}

static void random_frame(mbs_test_rng* rng, mbs_frame_spec* f) {
  for (int i = 0; i < 3; i++) {
    f->angles[i] = mbs_test_uniform(rng, -1, 1);
    f->p[i] = mbs_test_uniform(rng, -0.3, 0.3);
  }
}

// quaternion of body-fixed X-Y-Z angles
static void quat_of_angles(double q[4], const double a[3]) {
  double R[9];
  mbs_rot_body_xyz(R, a);
  mbs_rot_to_quat(q, R);
}

//---------------------------------- conservative forces: -dPE/dq -------------------------------

static void test_gradients(void) {
  mbs_test_rng rng = {77};
  double worst_bushing = 0, worst_limit = 0, worst_spring = 0;
  // bushings between a free body, a ball body, an X-Y-Z free body, an X-Y-Z ball body and Ground
  const mbs_mobilizer_type t1[2] = {MBS_MOB_FREE, MBS_MOB_FREE_XYZ};
  const mbs_mobilizer_type t2[2] = {MBS_MOB_BALL, MBS_MOB_BALL_XYZ};
  for (int variant = 0; variant < 2; variant++) {
    mbs_system* sys = mbs_system_create("bushings");
    mbs_body_spec a = body("a", 0, t1[variant], 1.2);
    mbs_body_spec b = body("b", 1, t2[variant], 0.8);
    random_frame(&rng, &b.X_PF);
    random_frame(&rng, &b.X_BM);
    const int ia = mbs_system_add_body(sys, &a), ib = mbs_system_add_body(sys, &b);
    for (int k = 0; k < 2; k++) {
      mbs_bushing_spec s;
      memset(&s, 0, sizeof(s));
      s.body1 = k ? ia : 0;
      s.body2 = k ? ib : ia;
      random_frame(&rng, &s.frame1);
      random_frame(&rng, &s.frame2);
      for (int i = 0; i < 3; i++) {
        s.rotational_stiffness[i] = mbs_test_uniform(&rng, 1, 10);
        s.translational_stiffness[i] = mbs_test_uniform(&rng, 50, 300);
      }
      EXPECT_TRUE(mbs_system_add_bushing(sys, &s) >= 0);
    }
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    for (int trial = 0; trial < 20; trial++) {
      double* q = mbs_state_upd_q(st);
      double ang[3];
      for (int i = 0; i < 3; i++) ang[i] = mbs_test_uniform(&rng, -0.9, 0.9);
      if (variant == 0) {
        quat_of_angles(q, ang);
        for (int i = 0; i < 3; i++) q[4 + i] = mbs_test_uniform(&rng, -0.5, 0.5);
        for (int i = 0; i < 3; i++) ang[i] = mbs_test_uniform(&rng, -0.9, 0.9);
        quat_of_angles(q + 7, ang);
      } else {
        for (int i = 0; i < 3; i++) q[i] = ang[i];
        for (int i = 0; i < 3; i++) q[3 + i] = mbs_test_uniform(&rng, -0.5, 0.5);
        for (int i = 0; i < 3; i++) q[6 + i] = mbs_test_uniform(&rng, -0.9, 0.9);
      }
      worst_bushing = fmax(worst_bushing, gradient_error(sys, st, 1e-6));
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }

  // coordinate limits on a pin and on a gimbal axis, spring generalized forces on a slider and
  // on a gimbal axis (every coordinate here has q' = u)
  {
    mbs_system* sys = mbs_system_create("limits");
    mbs_body_spec p = body("pin", 0, MBS_MOB_PIN, 1);
    mbs_body_spec g = body("gim", 1, MBS_MOB_GIMBAL, 1);
    mbs_body_spec s = body("sl", 2, MBS_MOB_SLIDER, 1);
    mbs_system_add_body(sys, &p);
    mbs_system_add_body(sys, &g);
    mbs_system_add_body(sys, &s);
    mbs_coordinate_limit_spec c = {1, 0, 300, 0.5, 200, -0.4, 0, 0.1};
    EXPECT_TRUE(mbs_system_add_coordinate_limit(sys, &c) >= 0);
    mbs_coordinate_limit_spec c2 = {2, 1, 50, 0.2, 80, -0.3, 0, 0.05};
    EXPECT_TRUE(mbs_system_add_coordinate_limit(sys, &c2) >= 0);
    EXPECT_TRUE(mbs_system_add_spring_generalized_force(sys, 3, 0, 40, 0.15, 0) >= 0);
    EXPECT_TRUE(mbs_system_add_spring_generalized_force(sys, 2, 2, 7, -0.2, 0) >= 0);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    // inside, at, in the transition of and beyond each limit (pin: [-0.4, 0.5], h = 0.1)
    const double qs[] = {0.0, 0.5, 0.53, 0.55, 0.6, 0.61, 0.9, -0.4, -0.43, -0.47, -0.5, -1.2};
    for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
      double* q = mbs_state_upd_q(st);
      q[0] = qs[k];
      q[1] = mbs_test_uniform(&rng, -0.5, 0.5);
      q[2] = mbs_test_uniform(&rng, -0.6, 0.6);
      q[3] = mbs_test_uniform(&rng, -0.5, 0.5);
      q[4] = mbs_test_uniform(&rng, -0.5, 0.5);
      worst_limit = fmax(worst_limit, gradient_error(sys, st, 1e-7));
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
  {
    mbs_system* sys = mbs_system_create("springs");
    mbs_body_spec s = body("sl", 0, MBS_MOB_CYLINDER, 1);
    mbs_system_add_body(sys, &s);
    EXPECT_TRUE(mbs_system_add_spring_generalized_force(sys, 1, 0, 12, 0.3, 0) >= 0);
    EXPECT_TRUE(mbs_system_add_spring_generalized_force(sys, 1, 1, 25, -0.1, 0) >= 0);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    for (int k = 0; k < 10; k++) {
      double* q = mbs_state_upd_q(st);
      q[0] = mbs_test_uniform(&rng, -2, 2);
      q[1] = mbs_test_uniform(&rng, -1, 1);
      worst_spring = fmax(worst_spring, gradient_error(sys, st, 1e-6));
      // and the closed form, with viscosity 0
      double f[2];
      generalized_forces(sys, st, f);
      EXPECT_NEAR(f[0], -12 * (mbs_state_q(st)[0] - 0.3), 1e-14);
      EXPECT_NEAR(f[1], -25 * (mbs_state_q(st)[1] + 0.1), 1e-14);
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
  printf("-dPE/dq against generalized forces (relative): bushings %.2e, coordinate limits %.2e, "
         "spring generalized forces %.2e\n", worst_bushing, worst_limit, worst_spring);
  EXPECT_TRUE(worst_bushing < 1e-6);
  EXPECT_TRUE(worst_limit < 1e-6);
  EXPECT_TRUE(worst_spring < 1e-6);
}

//---------------------------------- bushing closed forms ---------------------------------------

static void test_bushing_closed_form(void) {
  mbs_test_rng rng = {5};
  // translation body T (frame F = bushing frame 1) carrying gimbal body R (its M frame = bushing
  // frame 2): the bushing deflection is exactly (gimbal angles, translation of T)
  const double k_rot[3] = {11, 13, 17}, k_tr[3] = {300, 500, 700};
  const double c_rot[3] = {0.5, 0.7, 0.9}, c_tr[3] = {3, 5, 7};
  mbs_system* sys = mbs_system_create("bushing_exact");
  mbs_body_spec t = body("t", 0, MBS_MOB_TRANSLATION, 1.0);
  mbs_body_spec r = body("r", 1, MBS_MOB_GIMBAL, 1.0);
  random_frame(&rng, &t.X_PF);
  random_frame(&rng, &r.X_BM);
  mbs_system_add_body(sys, &t);
  mbs_system_add_body(sys, &r);
  mbs_bushing_spec s;
  memset(&s, 0, sizeof(s));
  s.body1 = 0;
  s.body2 = 2;
  s.frame1 = t.X_PF;
  s.frame2 = r.X_BM;
  memcpy(s.rotational_stiffness, k_rot, sizeof(k_rot));
  memcpy(s.translational_stiffness, k_tr, sizeof(k_tr));
  memcpy(s.rotational_damping, c_rot, sizeof(c_rot));
  memcpy(s.translational_damping, c_tr, sizeof(c_tr));
  const int id = mbs_system_add_bushing(sys, &s);
  EXPECT_EQ_INT(id, 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  double worst = 0;
  for (int trial = 0; trial < 20; trial++) {
    double* q = mbs_state_upd_q(st);
    double* u = mbs_state_upd_u(st);
    for (int i = 0; i < 6; i++) {
      q[i] = mbs_test_uniform(&rng, -1, 1);
      u[i] = mbs_test_uniform(&rng, -2, 2);
    }
    double f[6];
    generalized_forces(sys, st, f);
    for (int i = 0; i < 3; i++) {
      const double ft = -(k_tr[i] * q[i] + c_tr[i] * u[i]);
      const double fr = -(k_rot[i] * q[3 + i] + c_rot[i] * u[3 + i]);
      worst = fmax(worst, fabs(f[i] - ft) / fmax(1, fabs(ft)));
      worst = fmax(worst, fabs(f[3 + i] - fr) / fmax(1, fabs(fr)));
    }
    double pe = potential(sys, st), pe_exact = 0;
    for (int i = 0; i < 3; i++)
      pe_exact += 0.5 * (k_tr[i] * q[i] * q[i] + k_rot[i] * q[3 + i] * q[3 + i]);
    EXPECT_NEAR(pe, pe_exact, 1e-12);
  }
  printf("bushing: generalized forces against -(K q + D u) for large deflections: %.2e\n", worst);
  EXPECT_TRUE(worst < 1e-12);

  // pure translation d along frame 1's x: force on body 2 is -k_x d along that axis (in G);
  // pure rotation theta about x: torque -k_theta_x theta about it, no force
  double R_GF[9];
  mbs_rot_body_xyz(R_GF, t.X_PF.angles);
  double* q = mbs_state_upd_q(st);
  memset(q, 0, 6 * sizeof(double));
  memset(mbs_state_upd_u(st), 0, 6 * sizeof(double));
  q[0] = 0.01;
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  const double* F = mbs_get_body_forces(sys, st) + 6 * 2;
  double p_GM[3];
  EXPECT_OK(mbs_get_station_location(sys, st, 2, r.X_BM.p, p_GM));
  // about body 2's origin the force at M's origin gives a moment r x f; take it about M
  double R_GB[9], p_GB[3];
  mbs_get_body_transform(sys, st, 2, R_GB, p_GB);
  double rr[3], mom_M[3];
  mbs_v3_sub(rr, p_GM, p_GB);
  mbs_v3_cross(mom_M, rr, F + 3);
  for (int i = 0; i < 3; i++) {
    EXPECT_NEAR(F[3 + i], -k_tr[0] * 0.01 * R_GF[3 * i], 1e-12);
    EXPECT_ABS(F[i] - mom_M[i], 0, 1e-12);
  }
  q = mbs_state_upd_q(st);
  q[0] = 0;
  q[3] = 0.02;
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  F = mbs_get_body_forces(sys, st) + 6 * 2;
  for (int i = 0; i < 3; i++) {
    EXPECT_NEAR(F[i], -k_rot[0] * 0.02 * R_GF[3 * i], 1e-12);
    EXPECT_ABS(F[3 + i], 0, 1e-12);
  }
  // the frames are instance parameters: moving frame 1 by -0.01 along its x undoes q[0] = 0.01
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/bushing0/frame1/orientation") != NULL);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/bushing0/rotational_damping") != NULL);
  q = mbs_state_upd_q(st);
  q[3] = 0;
  q[0] = 0.01;
  double p1[3];
  for (int i = 0; i < 3; i++) p1[i] = t.X_PF.p[i] + 0.01 * R_GF[3 * i];
  for (int i = 0; i < 3; i++)
    EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/bushing0/frame1/translation", i, p1[i]));
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  F = mbs_get_body_forces(sys, st) + 6 * 2;
  for (int i = 0; i < 6; i++) EXPECT_ABS(F[i], 0, 1e-12);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- coordinate limit closed forms ------------------------------

static double limit_force(const mbs_system* sys, mbs_state* st, double q, double u) {
  mbs_state_upd_q(st)[0] = q;
  mbs_state_upd_u(st)[0] = u;
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  return mbs_get_mobility_forces(sys, st)[0];
}

static void test_coordinate_limit(void) {
  const double Ku = 400, qu = 0.7, Kl = 250, ql = -0.3, c = 3, h = 0.08;
  mbs_system* sys = mbs_system_create("limit");
  mbs_body_spec p = body("pin", 0, MBS_MOB_PIN, 1);
  mbs_system_add_body(sys, &p);
  mbs_coordinate_limit_spec s = {1, 0, Ku, qu, Kl, ql, c, h};
  EXPECT_EQ_INT(mbs_system_add_coordinate_limit(sys, &s), 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  // inside the range: nothing, whatever the speed
  for (double q = ql; q <= qu; q += 0.05) EXPECT_ABS(limit_force(sys, st, q, 2.5), 0, 0);
  // beyond the transition: the full spring and damper
  for (double d = h; d < 1; d += 0.1) {
    EXPECT_NEAR(limit_force(sys, st, qu + d, 1.5), -Ku * d - c * 1.5, 1e-14);
    EXPECT_NEAR(limit_force(sys, st, ql - d, -1.5), Kl * d + c * 1.5, 1e-14);
  }
  // middle of the transition: the quintic step is 1/2 for stiffness and damping alike
  EXPECT_NEAR(limit_force(sys, st, qu + h / 2, 2.0), -0.5 * Ku * h / 2 - 0.5 * c * 2.0, 1e-14);
  EXPECT_NEAR(limit_force(sys, st, ql - h / 2, 2.0), 0.5 * Kl * h / 2 - 0.5 * c * 2.0, 1e-14);
  // a quarter into it: S(1/4) = 10/64 - 15/256 + 6/1024 = 0.103515625
  EXPECT_NEAR(limit_force(sys, st, qu + h / 4, 0), -0.103515625 * Ku * h / 4, 1e-14);
  // smooth: value and slope continuous at both ends of each transition
  const double ends[4] = {qu, qu + h, ql, ql - h};
  double worst_jump = 0, worst_slope = 0;
  for (int k = 0; k < 4; k++) {
    const double e = 1e-6, x = ends[k];
    const double fm2 = limit_force(sys, st, x - 2 * e, 0), fm1 = limit_force(sys, st, x - e, 0);
    const double fp1 = limit_force(sys, st, x + e, 0), fp2 = limit_force(sys, st, x + 2 * e, 0);
    // values extrapolated linearly to x from each side
    worst_jump = fmax(worst_jump, fabs((2 * fp1 - fp2) - (2 * fm1 - fm2)) / (Ku * h));
    worst_slope = fmax(worst_slope, fabs((fp2 - fp1) - (fm1 - fm2)) / e / Ku);
  }
  printf("coordinate limit: value jump %.2e, slope jump %.2e across the transition ends\n",
         worst_jump, worst_slope);
  EXPECT_TRUE(worst_jump < 1e-5);
  EXPECT_TRUE(worst_slope < 1e-4);
  // potential energy: OpenSim's closed form beyond the transition, continuous at its end
  mbs_state_upd_q(st)[0] = qu + 0.5;
  EXPECT_NEAR(potential(sys, st), Ku * (0.125 - h * h / 7), 1e-14);
  mbs_state_upd_q(st)[0] = qu + h * (1 - 1e-9);
  const double pe_in = potential(sys, st);
  mbs_state_upd_q(st)[0] = qu + h * (1 + 1e-9);
  EXPECT_NEAR(pe_in, potential(sys, st), 1e-8);
  EXPECT_NEAR(pe_in, 5.0 / 14.0 * Ku * h * h, 1e-8);
  // a parameter set in the State is used; a bad one is refused at Instance
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/coordinate_limit0/upper_stiffness", 0, 100));
  EXPECT_NEAR(limit_force(sys, st, qu + 1, 0), -100, 1e-14);
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/coordinate_limit0/transition", 0, 0));
  EXPECT_EQ_INT(mbs_realize_dynamics(sys, st), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "coordinate_limit0"));
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "transition"));
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- energy -----------------------------------------------------

typedef struct energy_track {
  double E0, worst, ke_max, prev, worst_rise;
  long n;
} energy_track;

static double total_energy(const mbs_system* sys, mbs_state* st) {
  double ke = 0, pe = 0;
  EXPECT_OK(mbs_realize_velocity(sys, st));
  EXPECT_OK(mbs_calc_kinetic_energy(sys, st, &ke));
  EXPECT_OK(mbs_calc_potential_energy(sys, st, &pe));
  return ke + pe;
}

static int track(const mbs_system* sys, mbs_state* st, void* user) {
  energy_track* d = user;
  double ke;
  const double E = total_energy(sys, st);
  mbs_calc_kinetic_energy(sys, st, &ke);
  d->ke_max = fmax(d->ke_max, ke);
  d->worst = fmax(d->worst, fabs(E - d->E0));
  if (d->n++ > 0) d->worst_rise = fmax(d->worst_rise, E - d->prev);
  d->prev = E;
  return 0;
}

// simulate and return the tracked energies
static energy_track run_energy(const mbs_system* sys, const mbs_state* init, double T,
                               double accuracy) {
  mbs_state* st = mbs_state_create(sys);
  mbs_state_copy(sys, st, init);
  energy_track d = {total_energy(sys, st), 0, 0, 0, -INFINITY, 0};
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integrator = MBS_INTEG_RK_MERSON;
  o.integ.accuracy = accuracy;
  o.report_interval = 0;  // at the end of every step (not interpolated)
  mbs_simulation_result r;
  const int rc = mbs_simulate(sys, st, T, &o, NULL, 0, track, &d, &r);
  EXPECT_OK(rc);
  if (rc) fprintf(stderr, "%s\n", mbs_state_error(st)->message);
  d.prev = total_energy(sys, st);  // final energy
  mbs_state_destroy(st);
  return d;
}

// largest |E(t) - E(0)| over [0, T] under fixed-step RK4 with step h
static double rk4_drift(const mbs_system* sys, const mbs_state* init, double T, double h) {
  mbs_state* st = mbs_state_create(sys);
  mbs_state_copy(sys, st, init);
  const double E0 = total_energy(sys, st);
  double drift = 0;
  for (int k = 0; k < (int)(T / h + 0.5); k++) {
    EXPECT_OK(mbs_step_rk4(sys, st, h));
    drift = fmax(drift, fabs(total_energy(sys, st) - E0));
  }
  mbs_state_destroy(st);
  return drift;
}

static mbs_system* bushing_suspended(double damping) {
  mbs_test_rng rng = {31};
  mbs_system* sys = mbs_system_create("bushing_suspended");
  mbs_body_spec b = body("block", 0, MBS_MOB_FREE, 2.0);
  b.com[0] = 0.05;
  b.com[1] = -0.1;
  mbs_system_add_body(sys, &b);
  mbs_bushing_spec s;
  memset(&s, 0, sizeof(s));
  s.body1 = 0;
  s.body2 = 1;
  random_frame(&rng, &s.frame1);
  random_frame(&rng, &s.frame2);
  memcpy(s.frame2.angles, s.frame1.angles, sizeof(s.frame1.angles));  // no initial twist
  const double kr[3] = {15, 20, 25}, kt[3] = {400, 600, 500};
  for (int i = 0; i < 3; i++) {
    s.rotational_stiffness[i] = kr[i];
    s.translational_stiffness[i] = kt[i];
    s.rotational_damping[i] = damping * 0.05;
    s.translational_damping[i] = damping * 1.0;
  }
  mbs_system_add_bushing(sys, &s);
  mbs_system_add_gravity(sys, (double[3]){0, -g0, 0});
  mbs_system_finalize(sys);
  return sys;
}

static mbs_system* limited_pendulum(double damping) {
  mbs_system* sys = mbs_system_create("limited_pendulum");
  mbs_body_spec b = body("link", 0, MBS_MOB_PIN, 1.0);
  b.com[0] = 0.5;
  b.inertia[0] = b.inertia[1] = b.inertia[2] = 0.02;
  mbs_system_add_body(sys, &b);
  mbs_coordinate_limit_spec s = {1, 0, 300, 0.3, 300, -0.9, damping, 0.05};
  mbs_system_add_coordinate_limit(sys, &s);
  mbs_system_add_gravity(sys, (double[3]){0, -g0, 0});
  mbs_system_finalize(sys);
  return sys;
}

static void test_energy(void) {
  const int quick = test_quick();
  const double T = quick ? 0.5 : 5.0, alpha = 1e-6;
  for (int which = 0; which < 2; which++) {
    // conservative: drift within 10 alpha |E|
    mbs_system* sys = which ? limited_pendulum(0) : bushing_suspended(0);
    mbs_state* st = mbs_state_create(sys);
    if (which) {
      mbs_state_upd_u(st)[0] = 5.0;  // swings into both limits
    } else {
      double* q = mbs_state_upd_q(st);
      const double a[3] = {0.2, -0.1, 0.15};
      quat_of_angles(q, a);
      q[4] = 0.03;
      q[5] = -0.05;
      double* u = mbs_state_upd_u(st);
      u[0] = 1.0;
      u[2] = -0.8;
      u[3] = 0.4;
    }
    energy_track d = run_energy(sys, st, T, alpha);
    const double bound = 10 * alpha * fmax(fabs(d.E0), d.ke_max);
    printf("energy, %s: drift %.6g, bound 10 x %.0e x |E| = %.3g\n", mbs_system_name(sys),
           d.worst, alpha, bound);
    EXPECT_TRUE(d.worst <= bound);
    // a non-conservative error would leave a drift that does not vanish at fourth order
    const double d1 = rk4_drift(sys, st, quick ? 0.3 : 1.0, 1e-3);
    const double d2 = rk4_drift(sys, st, quick ? 0.3 : 1.0, 5e-4);
    printf("energy, %s: RK4 drift %.3g at h = 1e-3, %.3g at h/2 (ratio %.1f)\n",
           mbs_system_name(sys), d1, d2, d1 / d2);
    EXPECT_TRUE(d2 < 1e-11 * bound / alpha || d1 / d2 > 8);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);

    // damped: the energy never rises (beyond the integration error) and is dissipated
    sys = which ? limited_pendulum(2.0) : bushing_suspended(1.0);
    st = mbs_state_create(sys);
    if (which) {
      mbs_state_upd_u(st)[0] = 5.0;
    } else {
      double* q = mbs_state_upd_q(st);
      const double a[3] = {0.2, -0.1, 0.15};
      quat_of_angles(q, a);
      q[4] = 0.03;
      mbs_state_upd_u(st)[0] = 1.0;
    }
    d = run_energy(sys, st, T, 1e-8);
    const double scale = fmax(fabs(d.E0), d.ke_max);
    printf("energy, %s damped: E %.6g -> %.6g, largest rise between reports %.3g\n",
           mbs_system_name(sys), d.E0, d.prev, d.worst_rise);
    EXPECT_TRUE(d.worst_rise <= 1e-7 * scale);
    EXPECT_TRUE(d.prev < d.E0 - 1e-3 * scale);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
}

//---------------------------------- external force and actuators ------------------------------

static void solve3(double x[3], const double A[9], const double b[3]) {
  const double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                     A[2] * (A[3] * A[7] - A[4] * A[6]);
  for (int k = 0; k < 3; k++) {
    double M[9];
    memcpy(M, A, sizeof(M));
    for (int i = 0; i < 3; i++) M[3 * i + k] = b[i];
    x[k] = (M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) +
            M[2] * (M[3] * M[7] - M[4] * M[6])) / det;
  }
}

// [alpha; a of the origin] of a free body at rest under force F (G) at point pG and torque T (G)
static void rigid_response(const mbs_system* sys, mbs_state* st, int b, const mbs_body_spec* s,
                           const double F[3], const double pG[3], const double T[3],
                           double A[6]) {
  double R[9], pO[3], cG[3], pC[3], I_B[9], I_G[9], r[3], tau[3];
  mbs_get_body_transform(sys, st, b, R, pO);
  mbs_m33_vec(cG, R, s->com);
  mbs_v3_add(pC, pO, cG);
  mbs_inertia_from_moments(I_B, s->inertia);
  mbs_inertia_rotate(I_G, R, I_B);
  mbs_v3_sub(r, pG, pC);
  mbs_v3_cross(tau, r, F);
  mbs_v3_add(tau, tau, T);
  solve3(A, I_G, tau);
  double t[3];
  mbs_v3_cross(t, A, cG);
  for (int i = 0; i < 3; i++) A[3 + i] = F[i] / s->mass - t[i];
}

static double acc_error(const mbs_system* sys, mbs_state* st, int b, const double A[6]) {
  double got[6], e = 0;
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_OK(mbs_get_body_acceleration(sys, st, b, got));
  for (int i = 0; i < 6; i++) e = fmax(e, fabs(got[i] - A[i]) / fmax(1, fabs(A[i])));
  return e;
}

static int add_constant(mbs_system* sys, double v) {
  mbs_function_spec f;
  memset(&f, 0, sizeof(f));
  f.type = MBS_FUNC_CONSTANT;
  f.coefs = &v;
  return mbs_system_add_function(sys, &f);
}
static int add_linear(mbs_system* sys, double slope, double intercept) {
  const double c[2] = {slope, intercept};
  mbs_function_spec f;
  memset(&f, 0, sizeof(f));
  f.type = MBS_FUNC_LINEAR;
  f.coefs = c;
  return mbs_system_add_function(sys, &f);
}

static mbs_body_spec free_spec(void) {
  mbs_body_spec s = mbs_body_spec_default("box", 0, MBS_MOB_FREE);
  s.mass = 2.5;
  s.com[0] = 0.1;
  s.com[1] = -0.2;
  s.com[2] = 0.05;
  const double I[6] = {0.3, 0.4, 0.5, 0.02, -0.01, 0.03};
  memcpy(s.inertia, I, sizeof(I));
  return s;
}

static void set_pose(mbs_state* st, const double a[3], const double p[3]) {
  double* q = mbs_state_upd_q(st);
  quat_of_angles(q, a);
  memcpy(q + 4, p, 3 * sizeof(double));
  memset(mbs_state_upd_u(st), 0, 6 * sizeof(double));
}

static void test_external_force(void) {
  const double F[3] = {3, -1, 2}, P[3] = {0.2, 0.3, -0.1}, T[3] = {0.5, -0.2, 0.1};
  const double a[3] = {0.4, -0.7, 1.1}, pos[3] = {1, 2, 3};
  double worst = 0;
  for (int frames = 0; frames < 2; frames++) {
    // frames 0: force and torque in Ground, point in the body; 1: force and torque in the body,
    // point in Ground
    mbs_system* sys = mbs_system_create("external");
    mbs_body_spec s = free_spec();
    mbs_system_add_body(sys, &s);
    mbs_external_force_spec e;
    e.body = 1;
    e.force_frame_body = frames ? 1 : 0;
    e.point_frame_body = frames ? 0 : 1;
    for (int i = 0; i < 3; i++) {
      e.force_functions[i] = add_constant(sys, F[i]);
      e.point_functions[i] = add_constant(sys, P[i]);
      e.torque_functions[i] = add_constant(sys, T[i]);
    }
    EXPECT_EQ_INT(mbs_system_add_external_force(sys, &e), 0);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    set_pose(st, a, pos);
    EXPECT_OK(mbs_realize_position(sys, st));
    double R[9], pO[3], FG[3], TG[3], PG[3];
    mbs_get_body_transform(sys, st, 1, R, pO);
    if (frames) {
      mbs_m33_vec(FG, R, F);
      mbs_m33_vec(TG, R, T);
      memcpy(PG, P, sizeof(PG));
    } else {
      memcpy(FG, F, sizeof(FG));
      memcpy(TG, T, sizeof(TG));
      mbs_get_station_location(sys, st, 1, P, PG);
    }
    double A[6];
    rigid_response(sys, st, 1, &s, FG, PG, TG, A);
    worst = fmax(worst, acc_error(sys, st, 1, A));
    // the center of mass accelerates at F/m
    double aC[3], cG[3];
    mbs_m33_vec(cG, R, s.com);
    double got[6];
    mbs_get_body_acceleration(sys, st, 1, got);
    mbs_v3_cross(aC, got, cG);
    for (int i = 0; i < 3; i++) EXPECT_NEAR(got[3 + i] + aC[i], FG[i] / s.mass, 1e-12);
    if (frames) {
      // turned by a quarter turn about z, a force given in the body turns with it
      const double a2[3] = {0, 0, M_PI / 2};
      set_pose(st, a2, pos);
      EXPECT_OK(mbs_realize_dynamics(sys, st));
      const double* Fb = mbs_get_body_forces(sys, st) + 6;
      EXPECT_NEAR(Fb[3], -F[1], 1e-14);
      EXPECT_NEAR(Fb[4], F[0], 1e-14);
      EXPECT_NEAR(Fb[5], F[2], 1e-14);
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
  // a function of time; no point: at the body's origin; no torque
  {
    mbs_system* sys = mbs_system_create("external_t");
    mbs_body_spec s = free_spec();
    mbs_system_add_body(sys, &s);
    mbs_external_force_spec e = {1, 0, 0, {0, 1, 1}, {-1, -1, -1}, {-1, -1, -1}};
    e.force_functions[0] = add_linear(sys, 2.0, 1.0);
    e.force_functions[1] = add_constant(sys, 0.0);
    e.force_functions[2] = e.force_functions[1];
    EXPECT_EQ_INT(mbs_system_add_external_force(sys, &e), 0);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    set_pose(st, a, pos);
    for (int k = 0; k < 3; k++) {
      mbs_state_set_time(st, 0.5 * k);
      EXPECT_OK(mbs_realize_dynamics(sys, st));
      const double* Fb = mbs_get_body_forces(sys, st) + 6;
      EXPECT_NEAR(Fb[3], 1.0 + 2.0 * 0.5 * k, 1e-14);
      EXPECT_ABS(Fb[0] * Fb[0] + Fb[1] * Fb[1] + Fb[2] * Fb[2], 0, 1e-28);
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
  printf("external force: body accelerations against Newton-Euler %.2e\n", worst);
  EXPECT_TRUE(worst < 1e-12);
}

static void test_actuators(void) {
  double worst = 0;
  // point and torque actuators on a free body
  for (int global = 0; global < 2; global++) {
    mbs_system* sys = mbs_system_create("actuated");
    mbs_body_spec s = free_spec();
    mbs_system_add_body(sys, &s);
    mbs_point_actuator_spec pa = {1, {0.3, -0.1, 0.2}, global, {0, 3, 4}, global, 20, 0.5, -1};
    const int ip = mbs_system_add_point_actuator(sys, &pa);
    mbs_torque_actuator_spec ta = {1, 0, {1, 1, 0}, global, 4, -0.25, -1};
    const int it = mbs_system_add_torque_actuator(sys, &ta);
    EXPECT_EQ_INT(ip, 0);
    EXPECT_EQ_INT(it, 1);
    EXPECT_OK(mbs_system_finalize(sys));
    EXPECT_EQ_INT(mbs_system_ncontrol(sys), 2);
    EXPECT_EQ_INT(mbs_control_force(sys, 1), it);
    mbs_state* st = mbs_state_create(sys);
    EXPECT_NEAR(mbs_state_controls(st)[0], 0.5, 0);
    const double a[3] = {-0.3, 0.8, 0.2}, pos[3] = {0.5, -1, 0.2};
    for (int k = 0; k < 2; k++) {
      set_pose(st, a, pos);
      EXPECT_OK(mbs_realize_position(sys, st));
      double R[9], pO[3], FG[3], TG[3], PG[3];
      mbs_get_body_transform(sys, st, 1, R, pO);
      const double c0 = mbs_state_controls(st)[0], c1 = mbs_state_controls(st)[1];
      const double d[3] = {0, 0.6 * 20 * c0, 0.8 * 20 * c0};
      const double ax[3] = {4 * c1 / sqrt(2), 4 * c1 / sqrt(2), 0};
      if (global) {
        memcpy(FG, d, sizeof(FG));
        memcpy(TG, ax, sizeof(TG));
        memcpy(PG, pa.point, sizeof(PG));
      } else {
        mbs_m33_vec(FG, R, d);
        mbs_m33_vec(TG, R, ax);
        mbs_get_station_location(sys, st, 1, pa.point, PG);
      }
      double A[6];
      rigid_response(sys, st, 1, &s, FG, PG, TG, A);
      worst = fmax(worst, acc_error(sys, st, 1, A));
      double tension;
      EXPECT_OK(mbs_get_actuator_tension(sys, st, ip, &tension));
      EXPECT_NEAR(tension, 20 * c0, 1e-15);
      EXPECT_OK(mbs_get_actuator_tension(sys, st, it, &tension));
      EXPECT_NEAR(tension, 4 * c1, 1e-15);
      // new controls: Dynamics is invalidated, the tension needs realizing again
      double* c = mbs_state_upd_controls(st);
      EXPECT_TRUE(mbs_state_stage(st) < MBS_STAGE_DYNAMICS);
      EXPECT_EQ_INT(mbs_get_actuator_tension(sys, st, ip, &tension), MBS_ERR_STAGE);
      c[0] = -1.5;
      c[1] = 0.75;
    }
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
  printf("point and torque actuators: body accelerations against Newton-Euler %.2e\n", worst);
  EXPECT_TRUE(worst < 1e-12);

  // a torque actuator between two bodies: equal and opposite; a body-A axis turns with A;
  // spherical inertia: alpha = tau / I
  {
    mbs_system* sys = mbs_system_create("torque_pair");
    mbs_body_spec s1 = mbs_body_spec_default("a", 0, MBS_MOB_BALL);
    s1.mass = 1;
    s1.inertia[0] = s1.inertia[1] = s1.inertia[2] = 0.2;
    mbs_body_spec s2 = s1;
    s2.name = "b";
    mbs_system_add_body(sys, &s1);
    mbs_system_add_body(sys, &s2);
    mbs_torque_actuator_spec ta = {1, 2, {0, 0, 2}, 0, 3, 1, -1};
    EXPECT_EQ_INT(mbs_system_add_torque_actuator(sys, &ta), 0);
    EXPECT_OK(mbs_system_finalize(sys));
    mbs_state* st = mbs_state_create(sys);
    const double ang[3] = {M_PI / 2, 0, 0};  // a's z axis turned onto -y of Ground
    quat_of_angles(mbs_state_upd_q(st), ang);
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    double A1[6], A2[6];
    mbs_get_body_acceleration(sys, st, 1, A1);
    mbs_get_body_acceleration(sys, st, 2, A2);
    EXPECT_NEAR(A1[1], -3 / 0.2, 1e-12);
    EXPECT_NEAR(A2[1], 3 / 0.2, 1e-12);
    EXPECT_ABS(A1[0], 0, 1e-12);
    EXPECT_ABS(A1[2], 0, 1e-12);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }

  // coordinate actuator: F c on its speed; c(t) = 0.5 t drives a slider to x = F 0.5 t^3 / (6 m)
  {
    mbs_system* sys = mbs_system_create("slider");
    mbs_body_spec s = mbs_body_spec_default("cart", 0, MBS_MOB_SLIDER);
    s.mass = 4;
    mbs_system_add_body(sys, &s);
    const int ic = mbs_system_add_coordinate_actuator(sys, 1, 0, 10, 0.3, -1);
    const int fn = add_linear(sys, 0.5, 0);
    const int it = mbs_system_add_coordinate_actuator(sys, 1, 0, 8, 0.0, fn);
    EXPECT_OK(mbs_system_finalize(sys));
    EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/coordinate_actuator0/optimal_force") != NULL);
    mbs_state* st = mbs_state_create(sys);
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    EXPECT_NEAR(mbs_get_mobility_forces(sys, st)[0], 3.0, 1e-15);
    EXPECT_NEAR(mbs_get_udot(sys, st)[0], 3.0 / 4, 1e-15);
    mbs_state_upd_controls(st)[0] = -0.7;
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    EXPECT_NEAR(mbs_get_mobility_forces(sys, st)[0], -7.0, 1e-15);
    mbs_state_upd_controls(st)[0] = 0;
    for (int k = 0; k < 3; k++) {
      mbs_state_set_time(st, 0.4 * k);
      double tension;
      EXPECT_OK(mbs_realize_dynamics(sys, st));
      EXPECT_OK(mbs_get_actuator_tension(sys, st, it, &tension));
      EXPECT_NEAR(tension, 8 * 0.5 * 0.4 * k, 1e-15);
      EXPECT_OK(mbs_get_actuator_tension(sys, st, ic, &tension));
      EXPECT_NEAR(tension, 0, 0);
      // the control of a function-driven actuator is not used
      mbs_state_upd_controls(st)[1] = 99;
    }
    mbs_state_set_time(st, 0);
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integ.accuracy = 1e-8;
    EXPECT_OK(mbs_simulate(sys, st, 1.5, &o, NULL, 0, NULL, NULL, NULL));
    const double t = mbs_state_time(st);
    printf("coordinate actuator with c(t) = t/2: x(1.5) = %.12f, closed form %.12f\n",
           mbs_state_q(st)[0], 8 * 0.5 * t * t * t / (6 * 4));
    EXPECT_NEAR(mbs_state_q(st)[0], 8 * 0.5 * t * t * t / (6 * 4), 1e-7);
    EXPECT_NEAR(mbs_state_u(st)[0], 8 * 0.5 * t * t / (2 * 4), 1e-7);
    mbs_state_destroy(st);
    mbs_system_destroy(sys);
  }
}

//---------------------------------- bad input --------------------------------------------------

static void test_bad_input(void) {
  mbs_system* sys = mbs_system_create("bad");
  mbs_body_spec b1 = body("thigh", 0, MBS_MOB_BALL, 1);
  mbs_body_spec b2 = body("shank", 1, MBS_MOB_PIN, 1);
  mbs_system_add_body(sys, &b1);
  mbs_system_add_body(sys, &b2);
  const mbs_error* err = mbs_system_error(sys);

  mbs_bushing_spec bs;
  memset(&bs, 0, sizeof(bs));
  bs.body1 = 1;
  bs.body2 = 2;
  bs.translational_stiffness[1] = -5;
  EXPECT_EQ_INT(mbs_system_add_bushing(sys, &bs), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(err->message, "bushing0"));
  EXPECT_TRUE(contains(err->message, "translational stiffness -5"));
  bs.translational_stiffness[1] = 5;
  bs.body2 = 7;
  EXPECT_EQ_INT(mbs_system_add_bushing(sys, &bs), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err->message, "bushing0") && contains(err->message, "body 7"));
  bs.body2 = 2;
  bs.frame1.p[0] = NAN;
  EXPECT_EQ_INT(mbs_system_add_bushing(sys, &bs), MBS_ERR_PARAMETER);
  bs.frame1.p[0] = 0;
  EXPECT_EQ_INT(mbs_system_add_bushing(sys, &bs), 0);

  mbs_coordinate_limit_spec cl = {1, 0, 10, 1, 10, -1, 0, 0.1};
  EXPECT_EQ_INT(mbs_system_add_coordinate_limit(sys, &cl), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err->message, "thigh") && contains(err->message, "coordinate_limit1"));
  cl.body = 2;
  cl.transition = 0;
  EXPECT_EQ_INT(mbs_system_add_coordinate_limit(sys, &cl), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(err->message, "transition"));
  cl.transition = 0.1;
  cl.lower_stiffness = -1;
  EXPECT_EQ_INT(mbs_system_add_coordinate_limit(sys, &cl), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(err->message, "lower stiffness"));
  cl.lower_stiffness = 1;
  cl.axis = 1;
  EXPECT_EQ_INT(mbs_system_add_coordinate_limit(sys, &cl), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err->message, "shank"));
  EXPECT_EQ_INT(mbs_system_add_spring_generalized_force(sys, 1, 2, 1, 0, 0), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err->message, "thigh"));
  EXPECT_EQ_INT(mbs_system_add_spring_generalized_force(sys, 2, 0, -1, 0, 0), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(err->message, "spring_generalized_force1") &&
              contains(err->message, "stiffness -1"));
  EXPECT_EQ_INT(mbs_system_add_spring_generalized_force(sys, 2, 0, 1, 0, -2), MBS_ERR_PARAMETER);

  mbs_point_actuator_spec pa = {2, {0, 0, 0}, 0, {0, 0, 0}, 0, 10, 0, -1};
  EXPECT_EQ_INT(mbs_system_add_point_actuator(sys, &pa), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(err->message, "point_actuator1") && contains(err->message, "direction"));
  pa.direction[0] = 1;
  pa.optimal_force = 0;
  EXPECT_EQ_INT(mbs_system_add_point_actuator(sys, &pa), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(err->message, "optimal force"));
  pa.optimal_force = 10;
  pa.control_function = 3;
  EXPECT_EQ_INT(mbs_system_add_point_actuator(sys, &pa), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err->message, "function 3"));
  mbs_torque_actuator_spec ta = {1, 1, {0, 0, 1}, 0, 1, 0, -1};
  EXPECT_EQ_INT(mbs_system_add_torque_actuator(sys, &ta), MBS_ERR_ARGUMENT);
  ta.body_b = 0;
  ta.axis[2] = 0;
  EXPECT_EQ_INT(mbs_system_add_torque_actuator(sys, &ta), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(err->message, "torque_actuator1") && contains(err->message, "axis"));
  EXPECT_EQ_INT(mbs_system_add_coordinate_actuator(sys, 2, 1, 1, 0, -1), MBS_ERR_ARGUMENT);
  EXPECT_EQ_INT(mbs_system_add_coordinate_actuator(sys, 2, 0, 1, NAN, -1), MBS_ERR_PARAMETER);

  mbs_external_force_spec e = {1, 0, 0, {5, 5, 5}, {-1, -1, -1}, {-1, -1, -1}};
  EXPECT_EQ_INT(mbs_system_add_external_force(sys, &e), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err->message, "external_force1") && contains(err->message, "function 5"));
  const int f0 = add_constant(sys, 1.0);
  e.force_functions[0] = e.force_functions[1] = f0;
  e.force_functions[2] = -1;
  EXPECT_EQ_INT(mbs_system_add_external_force(sys, &e), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err->message, "three functions"));
  e.force_functions[2] = f0;
  e.point_frame_body = 9;
  EXPECT_EQ_INT(mbs_system_add_external_force(sys, &e), MBS_ERR_ARGUMENT);
  e.point_frame_body = 2;
  EXPECT_EQ_INT(mbs_system_add_external_force(sys, &e), 1);

  // a failed add leaves no trace
  EXPECT_EQ_INT(mbs_system_nforce(sys), 2);
  EXPECT_EQ_INT(mbs_system_ncontrol(sys), 0);
  EXPECT_OK(mbs_system_set_force_name(sys, 0, "knee_bushing"));
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/knee_bushing/translational_stiffness") != NULL);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_EQ_INT(mbs_system_add_spring_generalized_force(sys, 2, 0, 1, 0, 0), MBS_ERR_FINALIZED);

  // a bad value in the State is refused at Instance, naming the element
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  double tension = 1;
  EXPECT_OK(mbs_get_actuator_tension(sys, st, 0, &tension));
  EXPECT_NEAR(tension, 0, 0);
  EXPECT_EQ_INT(mbs_get_actuator_tension(sys, st, 5, &tension), MBS_ERR_ARGUMENT);
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/knee_bushing/rotational_damping", 2, -0.1));
  EXPECT_EQ_INT(mbs_realize_position(sys, st), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "knee_bushing") &&
              contains(mbs_state_error(st)->message, "rotational damping"));
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// a force's provisional name (kind<n>) never takes one in use: renaming the second spring must
// leave the first spring's parameters under the first spring's name
static void test_provisional_names(void) {
  mbs_system* sys = mbs_system_create("names");
  mbs_body_spec b1 = body("thigh", 0, MBS_MOB_PIN, 1);
  mbs_system_add_body(sys, &b1);
  EXPECT_EQ_INT(mbs_system_add_spring_generalized_force(sys, 1, 0, 10, 0, 0), 0);
  char prefix[64], taken[80], path[160];
  snprintf(prefix, sizeof prefix, "%s", mbs_force_name(sys, 0));
  size_t n = strlen(prefix);
  while (n > 0 && prefix[n - 1] >= '0' && prefix[n - 1] <= '9') prefix[--n] = 0;
  snprintf(taken, sizeof taken, "%s1", prefix);  // what the next provisional name would be
  EXPECT_OK(mbs_system_set_force_name(sys, 0, taken));
  snprintf(path, sizeof path, "/forceset/%s/stiffness", taken);
  const mbs_param_info* before = mbs_system_find_param(sys, path);
  EXPECT_TRUE(before != NULL);
  const int index = before ? before->index : -1;
  EXPECT_EQ_INT(mbs_system_add_spring_generalized_force(sys, 1, 0, 20, 0, 0), 1);
  EXPECT_TRUE(strcmp(mbs_force_name(sys, 1), taken) != 0);
  EXPECT_OK(mbs_system_set_force_name(sys, 1, "second"));
  const mbs_param_info* after = mbs_system_find_param(sys, path);
  EXPECT_TRUE(after != NULL && after->index == index);
  const mbs_param_info* second = mbs_system_find_param(sys, "/forceset/second/stiffness");
  EXPECT_TRUE(second != NULL && second->index != index);
  printf("provisional names: '%s' keeps its parameters, the new spring was '%s' before naming\n",
         taken, "second");
  mbs_system_destroy(sys);
}

int main(void) {
  test_gradients();
  test_bushing_closed_form();
  test_coordinate_limit();
  test_energy();
  test_external_force();
  test_actuators();
  test_bad_input();
  test_provisional_names();
  return mbs_test_finish("test_force_elements");
}
