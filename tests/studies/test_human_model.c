// mbstudy's own human model: it reads as an OpenSim model with the bodies, coordinates, spheres
// and forces it promises; its segment masses add up to the body mass (de Leva's fractions sum to
// 100 %); standing straight, its centre of mass sits at the height the anthropometric
// literature gives (about 0.55-0.57 of stature) over the feet, its head reaches the stature and
// its spheres touch the platform; the platform follows the prescribed smooth step scaled by
// the displacement parameter; it scales with height and mass.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../studies/human_model.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs_test.h"

static mbs_osim_model* build(double H, double M) {
  mbs_human_params p;
  mbs_human_params_default(&p);
  p.height = H;
  p.mass = M;
  mbs_error err;
  mbs_osim_model* m = mbs_human_model_build(&p, &err);
  if (!m) printf("%s\n", err.message);
  return m;
}

static void test_standing(double H, double M) {
  mbs_osim_model* m = build(H, M);
  EXPECT_TRUE(m != NULL);
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  EXPECT_EQ_INT(mbs_system_nbody(sys), 10);  // ground + platform + 8
  EXPECT_EQ_INT(mbs_osim_ncoordinate(m), 22);
  EXPECT_EQ_INT(mbs_system_ncontact_geometry(sys), 11);
  EXPECT_TRUE(mbs_force_find(sys, "foot_r") >= 0 && mbs_force_find(sys, "foot_l") >= 0);
  EXPECT_EQ_INT(mbs_system_ncontrol(sys), 13);
  for (int i = 0; i < mbs_osim_nwarning(m); i++) printf("warning: %s\n", mbs_osim_warning(m, i));
  EXPECT_EQ_INT(mbs_osim_nwarning(m), 0);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_osim_default_state(m, st));
  EXPECT_OK(mbs_realize_position(sys, st));
  // the human's mass (all bodies but the platform)
  double total, com[3];
  EXPECT_OK(mbs_calc_center_of_mass(sys, st, &total, com));
  const double m_platform = mbs_state_params(st)[mbs_system_find_param(sys,
                                                  "/bodyset/platform/mass")->index];
  const double human = total - m_platform;
  printf("H = %.2f m, M = %.1f kg: segment masses add up to %.6f kg\n", H, M, human);
  EXPECT_NEAR(human, M, 1e-9 * M);
  // the human's centre of mass: subtract the platform's (its centre is 0.05 m below its origin)
  const double y_com = (com[1] * total - m_platform * (-0.05)) / human;
  const double x_com = (com[0] * total) / human;
  printf("  centre of mass at %.4f H above the sole, %.4f m ahead of the ankles\n", y_com / H,
         x_com);
  // the same without the platform, summed over the subject's bodies by the dynamics core
  unsigned char* skip = calloc((size_t)mbs_system_nbody(sys), 1);
  EXPECT_TRUE(skip != NULL);
  if (skip) {
    double m_subject, c_subject[3];
    skip[mbs_body_find(sys, "platform")] = 1;
    EXPECT_OK(mbs_calc_center_of_mass_subset(sys, st, skip, &m_subject, c_subject));
    EXPECT_NEAR(m_subject, M, 1e-12 * M);
    EXPECT_ABS(c_subject[0], x_com, 1e-12);
    EXPECT_ABS(c_subject[1], y_com, 1e-12);
    // nothing left: mass 0
    memset(skip, 1, (size_t)mbs_system_nbody(sys));
    EXPECT_OK(mbs_calc_center_of_mass_subset(sys, st, skip, &m_subject, c_subject));
    EXPECT_ABS(m_subject, 0, 0);
    free(skip);
  }
  EXPECT_TRUE(y_com / H > 0.54 && y_com / H < 0.58);
  // the head's top and the spheres
  const double top[3] = {0, 0, 0};
  double p[3];
  const int torso = mbs_body_find(sys, "torso");
  EXPECT_OK(mbs_get_station_location(sys, st, torso, top, p));  // the lumbar joint
  printf("  lumbar joint at %.3f H\n", p[1] / H);
  EXPECT_TRUE(p[1] / H > 0.58 && p[1] / H < 0.64);
  // the centre of mass lies over the feet: between the heels and the toes
  const double heel = -0.25 * 0.152 * H, toe = 0.75 * 0.152 * H;
  EXPECT_TRUE(x_com > heel && x_com < toe);
  // every sphere touches the platform's surface (y = 0) from above
  mbs_realize_dynamics(sys, st);
  for (int f = 0; f < 2; f++) {
    mbs_contact_report rep[8];
    int n;
    EXPECT_OK(mbs_get_contact_reports(sys, st, mbs_force_find(sys, f ? "foot_l" : "foot_r"), rep,
                                      8, &n));
    EXPECT_EQ_INT(n, 5);
    for (int k = 0; k < n; k++) EXPECT_ABS(rep[k].penetration, 0, 1e-12);
  }
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

// the platform: x(t) = d step(t), with step the chosen profile over the chosen duration
static void test_platform(mbs_platform_profile profile, double tau) {
  mbs_human_params p;
  mbs_human_params_default(&p);
  p.platform.platform_profile = profile;
  p.platform.platform_duration = tau;
  mbs_error err;
  mbs_osim_model* m = mbs_human_model_build(&p, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) return;
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  const double d = 0.08;
  EXPECT_OK(mbs_state_set_param(sys, st, "/functions/platform_tz/prescribed/scale", 0, d));
  const int k = mbs_osim_find_coordinate(m, "platform_tz");
  double worst = 0;
  for (int i = -2; i <= 14; i++) {
    const double t = i * tau / 12 + 0.013;
    // the independent closed forms of the two profiles
    const double s = fmin(fmax(t / tau, 0), 1);
    const double expect = profile == MBS_PLATFORM_COSINE ? 0.5 * (1 - cos(M_PI * s))
                                                          : s * s * s * (6 * s * s - 15 * s + 10);
    mbs_state_set_time(st, t);
    EXPECT_OK(mbs_osim_default_state(m, st));
    const double x = mbs_state_q(st)[mbs_osim_coordinate_info(m, k)->qindex];
    worst = fmax(worst, fabs(x - d * expect));
  }
  printf("platform displacement (%s over %.2f s) against d step(t): worst %.2e m\n",
         mbs_platform_profile_name(profile), tau, worst);
  EXPECT_TRUE(worst < 2e-4 * d);
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

int main(void) {
  test_standing(1.75, 75);
  test_standing(1.55, 52);
  test_standing(1.95, 110);
  test_platform(MBS_PLATFORM_SMOOTH_STEP, 1.0);
  test_platform(MBS_PLATFORM_SMOOTH_STEP, 0.3);
  test_platform(MBS_PLATFORM_COSINE, 0.5);
  return mbs_test_finish("test_human_model");
}
