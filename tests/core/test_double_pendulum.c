// Planar double pendulum against the closed-form Lagrange equations (Theory digest T1):
// point masses m1 = 1.3, m2 = 0.7 at the link tips, L1 = 0.9, L2 = 0.6, g = 9.81 along -y,
// theta = (0.4, -0.9) (theta2 relative), theta' = (0.8, -1.7), torques (0.3, -0.2);
// expected u' = (-9.010349864396, 3.021602957053).
#include <string.h>

#include "mbs/mbs.h"
#include "mbs_test.h"

// u' from the closed-form mass matrix, bias and gravity (independent of the engine)
static void lagrange(const double th[2], const double w[2], const double tau[2], double m1,
                     double m2, double L1, double L2, double g, double udot[2]) {
  const double c2 = cos(th[1]), s2 = sin(th[1]);
  const double M11 = (m1 + m2) * L1 * L1 + m2 * L2 * L2 + 2 * m2 * L1 * L2 * c2;
  const double M12 = m2 * L2 * L2 + m2 * L1 * L2 * c2;
  const double M22 = m2 * L2 * L2;
  const double C1 = -m2 * L1 * L2 * s2 * (2 * w[0] * w[1] + w[1] * w[1]);
  const double C2 = m2 * L1 * L2 * s2 * w[0] * w[0];
  // angles measured from +x toward +y; gravity along -y
  const double G1 = -(m1 + m2) * g * L1 * cos(th[0]) - m2 * g * L2 * cos(th[0] + th[1]);
  const double G2 = -m2 * g * L2 * cos(th[0] + th[1]);
  const double r1 = tau[0] + G1 - C1, r2 = tau[1] + G2 - C2;
  const double det = M11 * M22 - M12 * M12;
  udot[0] = (M22 * r1 - M12 * r2) / det;
  udot[1] = (M11 * r2 - M12 * r1) / det;
}

int main(void) {
  const double m1 = 1.3, m2 = 0.7, L1 = 0.9, L2 = 0.6, g = 9.81;
  mbs_system* sys = mbs_system_create("double_pendulum");
  // link frames: origin at the joint, x along the link; point mass at the tip
  mbs_body_spec s1 = mbs_body_spec_default("link1", 0, MBS_MOB_PIN);
  s1.mass = m1;
  s1.com[0] = L1;
  const int b1 = mbs_system_add_body(sys, &s1);
  mbs_body_spec s2 = mbs_body_spec_default("link2", b1, MBS_MOB_PIN);
  s2.mass = m2;
  s2.com[0] = L2;
  s2.X_PF.p[0] = L1;
  const int b2 = mbs_system_add_body(sys, &s2);
  EXPECT_EQ_INT(b1, 1);
  EXPECT_EQ_INT(b2, 2);
  const double gv[3] = {0, -g, 0};
  EXPECT_TRUE(mbs_system_add_gravity(sys, gv) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_state* st = mbs_state_create(sys);
  EXPECT_TRUE(st != NULL);

  const double th[2] = {0.4, -0.9}, w[2] = {0.8, -1.7}, tau[2] = {0.3, -0.2};
  memcpy(mbs_state_upd_q(st), th, sizeof(th));
  memcpy(mbs_state_upd_u(st), w, sizeof(w));
  memcpy(mbs_state_upd_applied_mobility_forces(st), tau, sizeof(tau));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  const double* udot = mbs_get_udot(sys, st);
  EXPECT_TRUE(udot != NULL);
  double ref[2];
  lagrange(th, w, tau, m1, m2, L1, L2, g, ref);
  EXPECT_NEAR(ref[0], -9.010349864396, 1e-12);
  EXPECT_NEAR(ref[1], 3.021602957053, 1e-12);
  if (udot) {
    EXPECT_NEAR(udot[0], ref[0], 1e-12);
    EXPECT_NEAR(udot[1], ref[1], 1e-12);
  }
  // many random states against the closed form
  mbs_test_rng rng = {12345};
  double worst = 0;
  for (int k = 0; k < 200; k++) {
    double t2[2], w2[2], f2[2];
    for (int i = 0; i < 2; i++) {
      t2[i] = mbs_test_uniform(&rng, -3, 3);
      w2[i] = mbs_test_uniform(&rng, -5, 5);
      f2[i] = mbs_test_uniform(&rng, -2, 2);
    }
    memcpy(mbs_state_upd_q(st), t2, sizeof(t2));
    memcpy(mbs_state_upd_u(st), w2, sizeof(w2));
    memcpy(mbs_state_upd_applied_mobility_forces(st), f2, sizeof(f2));
    EXPECT_OK(mbs_realize_acceleration(sys, st));
    lagrange(t2, w2, f2, m1, m2, L1, L2, g, ref);
    const double* ud = mbs_get_udot(sys, st);
    for (int i = 0; i < 2; i++) {
      const double e = fabs(ud[i] - ref[i]) / (1 + fabs(ref[i]));
      if (e > worst) worst = e;
    }
  }
  EXPECT_TRUE(worst < 1e-12);
  printf("double pendulum: worst relative error over 200 random states %.3g\n", worst);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
  return mbs_test_finish("test_double_pendulum");
}
