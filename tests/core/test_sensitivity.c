// Forward sensitivities with CVODES (core/sensitivity_cvodes.c) against independent truth:
// - a block on a slider with a spring generalized force (stiffness k, rest length L0, mass m),
//   released at rest from x0: x = L0 + (x0 - L0) cos(w t), w = sqrt(k / m); dx/dk, dx/dm,
//   dx/dL0 and the velocity's sensitivities against the derivatives of the closed form;
//   dx/dx0 = cos(w t) with x0 given as an initial-only parameter through dy0_dp;
// - a free body (quaternion coordinates, nq = 7 > nu = 6) thrown and spinning under gravity:
//   dp/dg = t^2 / 2, dp/dv0 = t, no sensitivity of its attitude or to its mass, and the
//   quaternion itself against the closed-form rotation about a fixed axis;
// - a double pendulum (Theory digest T1's numbers): dq/dm2, dq/dL2 and dq/dL1 (the sum of the
//   sensitivities to the two parameters that hold L1) against central finite differences of
//   CVODES runs without sensitivities at tight tolerance;
// - refusals: a constraint, a contact force, a joint driven by a piecewise linear function, bad
//   arguments, an invalid model, a NaN on entry, too many steps, an atol too small for
//   CVODES' difference quotients; the State left at the last time with its parameters
//   untouched.
// MBS_TEST_QUICK=1 shortens the pendulum's run (for valgrind).
#include <string.h>

#include "mbs/mbs.h"
#include "mbs/sensitivity.h"
#include "mbs_test.h"

static int quick(void) {
  const char* s = getenv("MBS_TEST_QUICK");
  return s && *s && strcmp(s, "0") != 0;
}

static int contains(const char* s, const char* sub) { return s && strstr(s, sub) != NULL; }

static int param_index(const mbs_system* sys, const char* path, int component) {
  const mbs_param_info* p = mbs_system_find_param(sys, path);
  EXPECT_TRUE(p != NULL);
  return p ? p->index + component : -2;
}

//---------------------------------- mass-spring oscillator -------------------------------------

static mbs_system* oscillator(double m, double k, double L0) {
  mbs_system* sys = mbs_system_create("oscillator");
  mbs_body_spec b = mbs_body_spec_default("block", 0, MBS_MOB_SLIDER);
  b.mass = m;
  b.inertia[0] = b.inertia[1] = b.inertia[2] = 0.01;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &b), 1);
  const int f = mbs_system_add_spring_generalized_force(sys, 1, 0, k, L0, 0);
  EXPECT_TRUE(f >= 0);
  EXPECT_OK(mbs_system_set_force_name(sys, f, "spring"));
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static void test_oscillator(void) {
  const double m = 2.0, k = 50.0, L0 = 0.1, x0 = 0.4, A = x0 - L0, w = sqrt(k / m);
  mbs_system* sys = oscillator(m, k, L0);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_sensitivity_check(sys, NULL));
  mbs_state_upd_q(st)[0] = x0;
  enum { NT = 7, NP = 4, NY = 2 };
  const double times[NT] = {0.0, 0.13, 0.5, 0.9, 1.7, 2.4, 3.0};
  // k, m, L0, and x0 (initial-only: dy0/dx0 = (1, 0))
  const int pidx[NP] = {param_index(sys, "/forceset/spring/stiffness", 0),
                        param_index(sys, "/bodyset/block/mass", 0),
                        param_index(sys, "/forceset/spring/rest_length", 0),
                        MBS_SENS_INITIAL_ONLY};
  double dy0[NP * NY] = {0};
  dy0[3 * NY + 0] = 1;
  double params_before[64];
  const int npar = mbs_system_nparam(sys);
  EXPECT_TRUE(npar <= 64);
  memcpy(params_before, mbs_state_params(st), (size_t)npar * sizeof(double));
  mbs_sensitivity_options o;
  mbs_sensitivity_options_default(&o);
  o.rtol = 1e-10;
  o.atol = 1e-9;  // not below: CVODES' difference quotients lose eps / atol (see the header)
  double y[NT * NY] = {0}, s[NT * NP * NY] = {0};
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = mbs_forward_sensitivity(sys, st, pidx, NP, dy0, times, NT, &o, y, s, &err);
  EXPECT_OK(rc);
  if (rc) fprintf(stderr, "%s\n", err.message);
  // the closed form and its derivatives
  double worst_y = 0, worst[NP][2] = {{0}};
  double scale[NP][2] = {{0}};
  double ref[NT][NP][2];
  for (int n = 0; n < NT; n++) {
    const double t = times[n], c = cos(w * t), sn = sin(w * t);
    const double x = L0 + A * c, v = -A * w * sn;
    worst_y = fmax(worst_y, fmax(fabs(y[n * NY] - x), fabs(y[n * NY + 1] - v)));
    // d/dw of x and v; dw/dk = w / (2k), dw/dm = -w / (2m)
    const double dx_dw = -A * t * sn, dv_dw = -A * (sn + w * t * c);
    const double dwdk = w / (2 * k), dwdm = -w / (2 * m);
    ref[n][0][0] = dx_dw * dwdk;  // = -x0 sin(wt) t / (2 sqrt(km)) for L0 = 0
    ref[n][0][1] = dv_dw * dwdk;
    ref[n][1][0] = dx_dw * dwdm;
    ref[n][1][1] = dv_dw * dwdm;
    ref[n][2][0] = 1 - c;         // dx/dL0
    ref[n][2][1] = w * sn;
    ref[n][3][0] = c;             // dx/dx0
    ref[n][3][1] = -w * sn;
    for (int i = 0; i < NP; i++)
      for (int j = 0; j < 2; j++) scale[i][j] = fmax(scale[i][j], fabs(ref[n][i][j]));
  }
  for (int n = 0; n < NT; n++)
    for (int i = 0; i < NP; i++)
      for (int j = 0; j < 2; j++) {
        const double e = fabs(s[(n * NP + i) * NY + j] - ref[n][i][j]) / scale[i][j];
        worst[i][j] = fmax(worst[i][j], e);
      }
  printf("oscillator: |y - closed form| %.2e; sensitivity errors relative to their largest "
         "value: dx/dk %.2e, dv/dk %.2e, dx/dm %.2e, dv/dm %.2e, dx/dL0 %.2e, dv/dL0 %.2e, "
         "dx/dx0 %.2e, dv/dx0 %.2e\n",
         worst_y, worst[0][0], worst[0][1], worst[1][0], worst[1][1], worst[2][0], worst[2][1],
         worst[3][0], worst[3][1]);
  EXPECT_TRUE(worst_y < 1e-6);
  for (int i = 0; i < NP; i++)
    for (int j = 0; j < 2; j++) EXPECT_TRUE(worst[i][j] < 1e-6);
  // at t = 0 the sensitivities are exactly dy0_dp
  for (int j = 0; j < NP * NY; j++) EXPECT_TRUE(s[j] == dy0[j]);
  // the State is left at the last time, at the last y, with its parameters untouched
  EXPECT_TRUE(mbs_state_time(st) == times[NT - 1]);
  EXPECT_TRUE(mbs_state_q(st)[0] == y[(NT - 1) * NY] && mbs_state_u(st)[0] == y[(NT - 1) * NY + 1]);
  EXPECT_TRUE(memcmp(params_before, mbs_state_params(st), (size_t)npar * sizeof(double)) == 0);
  EXPECT_TRUE(mbs_state_stage(st) >= MBS_STAGE_ACCELERATION);

  // np = 0: a plain CVODES run gives the same trajectory as the closed form
  mbs_state* st2 = mbs_state_create(sys);
  mbs_state_upd_q(st2)[0] = x0;
  double y2[NT * NY] = {0};
  EXPECT_OK(mbs_forward_sensitivity(sys, st2, NULL, 0, NULL, times, NT, &o, y2, NULL, &err));
  double worst2 = 0;
  for (int n = 0; n < NT; n++)
    worst2 = fmax(worst2, fabs(y2[n * NY] - (L0 + A * cos(w * times[n]))));
  EXPECT_TRUE(worst2 < 1e-6);

  // refusals of bad arguments, each with a message
  const int bad_index[1] = {npar};
  mbs_state_upd_q(st2)[0] = x0;
  mbs_state_set_time(st2, 0);
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_forward_sensitivity(sys, st2, bad_index, 1, NULL, times, NT, &o, y, s, &err),
                MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err.message, "outside the State's"));
  const double backwards[3] = {0.5, 0.2, 1.0};
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_forward_sensitivity(sys, st2, pidx, 1, NULL, backwards, 3, &o, y, s, &err),
                MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err.message, "output time 1"));
  // too few steps allowed: a status naming the time and CVODES' reason
  mbs_sensitivity_options few = o;
  few.max_steps = 5;
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_forward_sensitivity(sys, st2, pidx, NP, dy0, times, NT, &few, y, s, &err),
                MBS_ERR_STEP_LIMIT);
  EXPECT_TRUE(contains(err.message, "failed at t = ") && contains(err.message, "CV_TOO_MUCH_WORK"));
  printf("  too few steps: %s\n", err.message);
  // the State stays at a good point with its parameters: here the last output time reached
  EXPECT_TRUE(mbs_state_time(st2) >= 0 && mbs_state_time(st2) < times[NT - 1]);
  EXPECT_TRUE(memcmp(params_before, mbs_state_params(st2), (size_t)npar * sizeof(double)) == 0);
  // atol far below CVODES' difference-quotient noise: the sensitivity corrector stalls, and
  // the message says why
  mbs_sensitivity_options tiny = o;
  tiny.atol = 1e-12;
  tiny.max_steps = 2000;
  mbs_state_set_time(st2, 0);
  mbs_state_upd_q(st2)[0] = x0;
  mbs_state_upd_u(st2)[0] = 0;
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_forward_sensitivity(sys, st2, pidx, NP, dy0, times, NT, &tiny, y, s, &err),
                MBS_ERR_STEP_LIMIT);
  EXPECT_TRUE(contains(err.message, "atol below 1e-9"));
  printf("  atol 1e-12: %s\n", err.message);
  // an invalid model (negative mass) is reported at the start time
  mbs_state_set_time(st2, 0);
  mbs_state_upd_params(st2)[pidx[1]] = -1;
  mbs_error_clear(&err);
  const int rc_bad = mbs_forward_sensitivity(sys, st2, pidx, NP, dy0, times, NT, &o, y, s, &err);
  EXPECT_TRUE(rc_bad < 0);
  EXPECT_TRUE(contains(err.message, "t = 0"));
  printf("  negative mass: %s\n", err.message);
  // a NaN speed on entry
  mbs_state_upd_params(st2)[pidx[1]] = m;
  mbs_state_upd_u(st2)[0] = NAN;
  mbs_error_clear(&err);
  EXPECT_TRUE(mbs_forward_sensitivity(sys, st2, pidx, NP, dy0, times, NT, &o, y, s, &err) < 0);
  EXPECT_TRUE(contains(err.message, "t = 0"));
  printf("  NaN speed: %s\n", err.message);

  mbs_state_destroy(st2);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- free body with quaternions ---------------------------------

static void test_free_body(void) {
  const double m = 1.5, g = 9.81, I = 0.2;
  const double w[3] = {0.3, -1.1, 0.7}, v0[3] = {0.8, 2.0, -0.5};
  mbs_system* sys = mbs_system_create("thrown");
  mbs_body_spec b = mbs_body_spec_default("ball", 0, MBS_MOB_FREE);
  b.mass = m;
  b.inertia[0] = b.inertia[1] = b.inertia[2] = I;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &b), 1);
  EXPECT_TRUE(mbs_system_add_gravity(sys, (double[3]){0, -g, 0}) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_EQ_INT(mbs_system_nq(sys), 7);
  EXPECT_EQ_INT(mbs_system_nu(sys), 6);
  mbs_state* st = mbs_state_create(sys);
  double* u = mbs_state_upd_u(st);
  for (int i = 0; i < 3; i++) {
    u[i] = w[i];
    u[3 + i] = v0[i];
  }
  enum { NT = 4, NP = 3, NY = 13 };
  const double times[NT] = {0.25, 0.5, 1.0, 1.5};
  // g_y, the mass, and the initial x velocity (initial-only)
  const int pidx[NP] = {param_index(sys, "/forceset/gravity0/g", 1),
                        param_index(sys, "/bodyset/ball/mass", 0), MBS_SENS_INITIAL_ONLY};
  double dy0[NP * NY] = {0};
  dy0[2 * NY + 7 + 3] = 1;  // u[3] = v_x
  mbs_sensitivity_options o;
  mbs_sensitivity_options_default(&o);
  o.rtol = 1e-10;
  o.atol = 1e-9;  // not below: CVODES' difference quotients lose eps / atol (see the header)
  double y[NT * NY] = {0}, s[NT * NP * NY] = {0};
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = mbs_forward_sensitivity(sys, st, pidx, NP, dy0, times, NT, &o, y, s, &err);
  EXPECT_OK(rc);
  if (rc) fprintf(stderr, "%s\n", err.message);
  const double wn = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  double e_quat = 0, e_pos = 0, e_sens = 0;
  for (int n = 0; n < NT; n++) {
    const double t = times[n];
    const double* yn = y + n * NY;
    // rotation about the fixed axis w from the identity: q = (cos(|w| t/2), sin(|w| t/2) w/|w|)
    const double qr[4] = {cos(wn * t / 2), sin(wn * t / 2) * w[0] / wn,
                          sin(wn * t / 2) * w[1] / wn, sin(wn * t / 2) * w[2] / wn};
    for (int i = 0; i < 4; i++) e_quat = fmax(e_quat, fabs(yn[i] - qr[i]));
    for (int i = 0; i < 3; i++) {
      const double p = v0[i] * t + (i == 1 ? -0.5 * g * t * t : 0);
      e_pos = fmax(e_pos, fabs(yn[4 + i] - p));
    }
    const double* sg = s + (n * NP + 0) * NY;
    const double* sm = s + (n * NP + 1) * NY;
    const double* sv = s + (n * NP + 2) * NY;
    for (int j = 0; j < NY; j++) {
      const double ref_g = j == 5 ? 0.5 * t * t : j == 11 ? t : 0;  // p_y and v_y
      const double ref_v = j == 4 ? t : j == 10 ? 1 : 0;             // p_x and v_x
      e_sens = fmax(e_sens, fabs(sg[j] - ref_g) / fmax(1, 0.5 * t * t));
      e_sens = fmax(e_sens, fabs(sm[j]));
      e_sens = fmax(e_sens, fabs(sv[j] - ref_v) / fmax(1, t));
    }
  }
  printf("free body (nq 7, nu 6): quaternion %.2e, position %.2e, sensitivities dy/dg, dy/dm, "
         "dy/dv0 %.2e\n", e_quat, e_pos, e_sens);
  EXPECT_TRUE(e_quat < 1e-6);
  EXPECT_TRUE(e_pos < 1e-7);
  EXPECT_TRUE(e_sens < 1e-6);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- double pendulum --------------------------------------------

static mbs_system* double_pendulum(void) {
  const double m1 = 1.3, m2 = 0.7, L1 = 0.9, L2 = 0.6, g = 9.81;
  mbs_system* sys = mbs_system_create("double_pendulum");
  mbs_body_spec s1 = mbs_body_spec_default("link1", 0, MBS_MOB_PIN);
  s1.mass = m1;
  s1.com[0] = L1;
  mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = mbs_body_spec_default("link2", 1, MBS_MOB_PIN);
  s2.mass = m2;
  s2.com[0] = L2;
  s2.X_PF.p[0] = L1;
  mbs_system_add_body(sys, &s2);
  mbs_system_add_gravity(sys, (double[3]){0, -g, 0});
  return sys;
}

static void pendulum_start(mbs_state* st) {
  const double th[2] = {0.4, -0.9}, w[2] = {0.8, -1.7};
  mbs_state_set_time(st, 0);
  memcpy(mbs_state_upd_q(st), th, sizeof(th));
  memcpy(mbs_state_upd_u(st), w, sizeof(w));
}

static void test_double_pendulum(void) {
  mbs_system* sys = double_pendulum();
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  enum { NP = 4, NY = 4, NTMAX = 4 };
  const int nt = quick() ? 2 : NTMAX;
  const double times[NTMAX] = {0.5, 1.0, 1.5, 2.0};
  // m2, L2 (link 2's tip mass), and L1, which two parameters hold: link 1's tip mass and the
  // joint of link 2
  const int pidx[NP] = {param_index(sys, "/bodyset/link2/mass", 0),
                        param_index(sys, "/bodyset/link2/mass_center", 0),
                        param_index(sys, "/bodyset/link1/mass_center", 0),
                        param_index(sys, "/jointset/link2_joint/parent_frame/translation", 0)};
  mbs_sensitivity_options o;
  mbs_sensitivity_options_default(&o);
  o.rtol = 1e-10;
  o.atol = 1e-9;  // not below: CVODES' difference quotients lose eps / atol (see the header)
  double y[NTMAX * NY] = {0}, s[NTMAX * NP * NY] = {0};
  mbs_error err;
  mbs_error_clear(&err);
  pendulum_start(st);
  int rc = mbs_forward_sensitivity(sys, st, pidx, NP, NULL, times, nt, &o, y, s, &err);
  EXPECT_OK(rc);
  if (rc) fprintf(stderr, "%s\n", err.message);
  // central differences of CVODES runs without sensitivities, relative step 1e-4
  mbs_sensitivity_options tight = o;
  tight.rtol = 1e-12;
  tight.atol = 1e-14;
  const char* names[3] = {"m2", "L2", "L1"};
  double worst[3] = {0};
  const double* p = mbs_state_params(st);
  const double nominal[3] = {p[pidx[0]], p[pidx[1]], p[pidx[2]]};
  for (int a = 0; a < 3; a++) {
    const double h = 1e-4 * nominal[a];
    double yp[NTMAX * NY] = {0}, ym[NTMAX * NY] = {0};
    for (int sign = -1; sign <= 1; sign += 2) {
      mbs_state* sf = mbs_state_create(sys);
      pendulum_start(sf);
      double* pp = mbs_state_upd_params(sf);
      pp[pidx[a]] += sign * h;
      if (a == 2) pp[pidx[3]] += sign * h;  // L1 moves link 1's mass and link 2's joint
      rc = mbs_forward_sensitivity(sys, sf, NULL, 0, NULL, times, nt, &tight,
                                   sign > 0 ? yp : ym, NULL, &err);
      EXPECT_OK(rc);
      mbs_state_destroy(sf);
    }
    double sc = 0;
    for (int n = 0; n < nt; n++)
      for (int j = 0; j < NY; j++) {
        const double fd = (yp[n * NY + j] - ym[n * NY + j]) / (2 * h);
        sc = fmax(sc, fabs(fd));
      }
    for (int n = 0; n < nt; n++)
      for (int j = 0; j < NY; j++) {
        const double fd = (yp[n * NY + j] - ym[n * NY + j]) / (2 * h);
        double an = s[(n * NP + a) * NY + j];
        if (a == 2) an += s[(n * NP + 3) * NY + j];
        worst[a] = fmax(worst[a], fabs(an - fd) / sc);
      }
  }
  printf("double pendulum to t = %g: CVODES sensitivities against central differences, "
         "relative to the largest: %s %.2e, %s %.2e, %s %.2e\n",
         times[nt - 1], names[0], worst[0], names[1], worst[1], names[2], worst[2]);
  for (int a = 0; a < 3; a++) EXPECT_TRUE(worst[a] < 1e-5);
  // the default tolerances (rtol 1e-7, atol 1e-9) against the tight run
  double sd[NTMAX * NP * NY] = {0}, yd[NTMAX * NY] = {0};
  pendulum_start(st);
  EXPECT_OK(mbs_forward_sensitivity(sys, st, pidx, NP, NULL, times, nt, NULL, yd, sd, &err));
  double worst_default = 0, sc_default = 0;
  for (int j = 0; j < nt * NP * NY; j++) sc_default = fmax(sc_default, fabs(s[j]));
  for (int j = 0; j < nt * NP * NY; j++)
    worst_default = fmax(worst_default, fabs(sd[j] - s[j]) / sc_default);
  printf("  default tolerances: sensitivities within %.2e of the tight run (relative to the "
         "largest)\n", worst_default);
  EXPECT_TRUE(worst_default < 1e-4);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

//---------------------------------- refusals ---------------------------------------------------

static void test_refusals(void) {
  mbs_error err;
  // a constraint
  mbs_system* sys = double_pendulum();
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_LOCKED_COORDINATE, "elbow_lock");
  c.coordinate.body = 2;
  c.coordinate.axis = 0;
  c.value = -0.9;
  EXPECT_TRUE(mbs_system_add_constraint(sys, &c) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_sensitivity_check(sys, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err.message, "model 'double_pendulum' has 1 constraint ('elbow_lock')"));
  printf("refused: %s\n", err.message);
  mbs_state* st = mbs_state_create(sys);
  pendulum_start(st);
  const double t1[1] = {0.1};
  double y[4];
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_forward_sensitivity(sys, st, NULL, 0, NULL, t1, 1, NULL, y, NULL, &err),
                MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err.message, "constraint"));
  mbs_state_destroy(st);
  mbs_system_destroy(sys);

  // a contact force
  sys = mbs_system_create("bouncing");
  mbs_body_spec b = mbs_body_spec_default("ball", 0, MBS_MOB_FREE);
  b.mass = 1;
  b.inertia[0] = b.inertia[1] = b.inertia[2] = 0.1;
  const int ball = mbs_system_add_body(sys, &b);
  mbs_contact_geometry_spec gs = mbs_contact_geometry_spec_default("sphere", MBS_GEOM_SPHERE, ball);
  gs.radius = 0.1;
  const int g1 = mbs_system_add_contact_geometry(sys, &gs);
  mbs_contact_geometry_spec gh = mbs_contact_geometry_spec_default("floor", MBS_GEOM_HALFSPACE, 0);
  gh.frame.angles[2] = -M_PI / 2;
  const int g2 = mbs_system_add_contact_geometry(sys, &gh);
  const mbs_contact_surface surf[2] = {{g1, 1e6, 1, 0.8, 0.5, 0}, {g2, 1e6, 1, 0.8, 0.5, 0}};
  EXPECT_TRUE(mbs_system_add_hunt_crossley(sys, surf, 2, 0.01) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_sensitivity_check(sys, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err.message, "contact force 'hunt_crossley"));
  printf("refused: %s\n", err.message);
  mbs_system_destroy(sys);

  // a joint that follows a piecewise linear function of its coordinate
  sys = mbs_system_create("kinked");
  const double kx[3] = {-1, 0, 1}, ky[3] = {-0.5, 0, 1};
  mbs_function_spec pl = {0};
  pl.type = MBS_FUNC_PIECEWISE_LINEAR;
  pl.name = "kink";
  pl.n = 3;
  pl.x = kx;
  pl.y = ky;
  const int fk = mbs_system_add_function(sys, &pl);
  const double zero[1] = {0};
  mbs_function_spec zs = {0};
  zs.type = MBS_FUNC_CONSTANT;
  zs.name = "zero";
  zs.n = 1;
  zs.coefs = zero;
  const int fz = mbs_system_add_function(sys, &zs);
  mbs_function_mobilizer fm;
  memset(&fm, 0, sizeof(fm));
  fm.ncoord = 1;
  for (int i = 0; i < 3; i++) {
    fm.rotation[i].axis[i] = fm.translation[i].axis[i] = 1;
    fm.rotation[i].coord = fm.translation[i].coord = -1;
    fm.rotation[i].function = fm.translation[i].function = fz;
  }
  fm.rotation[2].coord = 0;
  fm.rotation[2].function = fk;
  mbs_body_spec kb = mbs_body_spec_default("arm", 0, MBS_MOB_FUNCTION);
  kb.mass = 1;
  kb.com[0] = 0.5;
  kb.inertia[0] = kb.inertia[1] = kb.inertia[2] = 0.01;
  kb.function = &fm;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &kb), 1);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_sensitivity_check(sys, &err), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(err.message, "piecewise linear function 'kink'"));
  printf("refused: %s\n", err.message);
  mbs_system_destroy(sys);

  // not finalized
  sys = double_pendulum();
  mbs_error_clear(&err);
  EXPECT_EQ_INT(mbs_sensitivity_check(sys, &err), MBS_ERR_NOT_FINALIZED);
  mbs_system_destroy(sys);
}

int main(void) {
  test_oscillator();
  test_free_body();
  test_double_pendulum();
  test_refusals();
  return mbs_test_finish("test_sensitivity");
}
