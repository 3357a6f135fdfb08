// Conservation laws under a fine fixed-step RK4:
// - total energy (kinetic + gravity + springs) of random trees mixing every mobilizer type,
//   with gravity and linear springs and no dissipation, stays constant;
// - a free-floating tree with no forces keeps its spatial momentum and kinetic energy;
// - with dampers only (no gravity or springs), energy decreases monotonically and the
//   dissipated power equals -sum c v^2 (checked through dE/dt by finite difference).
#include <string.h>

#include "random_tree.h"

static double total_energy(const mbs_system* sys, mbs_state* st) {
  double ke = 0, pe = 0;
  EXPECT_OK(mbs_realize_velocity(sys, st));
  EXPECT_OK(mbs_calc_kinetic_energy(sys, st, &ke));
  EXPECT_OK(mbs_calc_potential_energy(sys, st, &pe));
  return ke + pe;
}

// Largest |E(t) - E(0)| over [0, T] integrating with step h from the state `init`.
static double energy_drift(const mbs_system* sys, const mbs_state* init, double T, double h) {
  mbs_state* st = mbs_state_create(sys);
  mbs_state_copy(sys, st, init);
  const double E0 = total_energy(sys, st);
  const int nsteps = (int)(T / h + 0.5);
  double drift = 0;
  for (int k = 0; k < nsteps; k++) {
    const int rc = mbs_step_rk4(sys, st, h);
    EXPECT_OK(rc);
    if (rc) {
      fprintf(stderr, "%s\n", mbs_state_error(st)->message);
      drift = INFINITY;
      break;
    }
    if (k % 20 == 19) drift = fmax(drift, fabs(total_energy(sys, st) - E0));
  }
  mbs_state_destroy(st);
  return drift;
}

// Energy is conserved by the equations of motion, so the RK4 drift must be small and must
// vanish at fourth order as the step is halved (a non-conservative error in the forces or the
// dynamics would leave a drift that does not shrink). Bodies with X-Y-Z angle coordinates may
// pass near their gimbal-lock configuration, where the local error grows but still converges.
static void energy_tree(mbs_test_rng* rng, int nbody, double T, double* worst, double* worst_ratio) {
  random_tree_opts o = {nbody, random_tree_all_types, MBS_MOB_COUNT, 0, 1, 1, 0, 1, 0};
  mbs_system* sys = random_tree_create(rng, &o);
  EXPECT_TRUE(sys != NULL);
  if (!sys) return;
  mbs_state* st = mbs_state_create(sys);
  random_tree_state(rng, sys, st, 1.0, 1.0, 0);
  const double E0 = total_energy(sys, st);
  double ke0;
  mbs_calc_kinetic_energy(sys, st, &ke0);
  const double scale = fmax(fabs(E0), ke0) + 1e-3;  // energy scale: |E| and exchanged KE
  const double d1 = energy_drift(sys, st, T, 4e-4) / scale;
  const double d2 = energy_drift(sys, st, T, 2e-4) / scale;
  *worst = fmax(*worst, d2);
  // fourth order: halving h divides the drift by about 16 (8 allows for round-off)
  if (d2 > 1e-11) *worst_ratio = fmin(*worst_ratio, d1 / d2);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void momentum_tree(mbs_test_rng* rng, double* worst_h, double* worst_ke,
                          double* worst_ratio) {
  // a floating base (free) carrying a random tree, no gravity, no forces
  const mbs_mobilizer_type types[] = {MBS_MOB_FREE, MBS_MOB_PIN,     MBS_MOB_BALL,
                                      MBS_MOB_GIMBAL, MBS_MOB_FUNCTION, MBS_MOB_UNIVERSAL,
                                      MBS_MOB_SLIDER, MBS_MOB_ELLIPSOID, MBS_MOB_SCREW};
  random_tree_opts o = {9, types, 9, 0, 0, 0, 0, 1, 0};
  mbs_system* sys = random_tree_create(rng, &o);
  EXPECT_TRUE(sys != NULL);
  if (!sys) return;
  // only body 1 may hang from Ground: make the tree's other roots children of body 1 instead
  // (random_tree picks parents at random, so rebuild until it is a single floating tree)
  int single = 1;
  for (int b = 2; b < mbs_system_nbody(sys); b++) single &= mbs_body_parent(sys, b) != 0;
  if (!single) {
    mbs_system_destroy(sys);
    momentum_tree(rng, worst_h, worst_ke, worst_ratio);
    return;
  }
  mbs_state* init = mbs_state_create(sys);
  mbs_state* st = mbs_state_create(sys);
  random_tree_state(rng, sys, init, 1.0, 1.0, 0);
  double h0[6], ke0, hs = 0;
  EXPECT_OK(mbs_realize_velocity(sys, init));
  mbs_calc_momentum(sys, init, h0);
  mbs_calc_kinetic_energy(sys, init, &ke0);
  for (int i = 0; i < 6; i++) hs = fmax(hs, fabs(h0[i]));
  // drift at steps h and h/2: small, and vanishing at fourth order
  double dh[2] = {0, 0}, dke[2] = {0, 0};
  for (int r = 0; r < 2; r++) {
    const double h = r == 0 ? 1e-3 : 5e-4;
    mbs_state_copy(sys, st, init);
    for (int k = 0; k < (int)(0.5 / h + 0.5); k++) EXPECT_OK(mbs_step_rk4(sys, st, h));
    double h1[6], ke1;
    EXPECT_OK(mbs_realize_velocity(sys, st));
    mbs_calc_momentum(sys, st, h1);
    mbs_calc_kinetic_energy(sys, st, &ke1);
    for (int i = 0; i < 6; i++) dh[r] = fmax(dh[r], fabs(h1[i] - h0[i]) / (1 + hs));
    dke[r] = fabs(ke1 - ke0) / (1e-3 + ke0);
  }
  *worst_h = fmax(*worst_h, dh[1]);
  *worst_ke = fmax(*worst_ke, dke[1]);
  if (dh[1] > 1e-12) *worst_ratio = fmin(*worst_ratio, dh[0] / dh[1]);
  mbs_state_destroy(init);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void damped_tree(mbs_test_rng* rng, double* worst_power, int* increases) {
  random_tree_opts o = {6, random_tree_all_types, MBS_MOB_COUNT, 0, 0, 0, 1, 1, 0};
  mbs_system* sys = random_tree_create(rng, &o);
  EXPECT_TRUE(sys != NULL);
  if (!sys) return;
  mbs_state* st = mbs_state_create(sys);
  random_tree_state(rng, sys, st, 1.0, 1.0, 0);
  const double h = 1e-3;
  double Eprev = total_energy(sys, st);
  for (int k = 0; k < 500; k++) {
    // power of all forces = u . (f_mob + J^T F) must equal dE/dt
    EXPECT_OK(mbs_realize_dynamics(sys, st));
    const int nu = mbs_system_nu(sys);
    double* f = malloc((size_t)nu * sizeof(double) + 8);
    mbs_calc_jacobian_transpose_times(sys, st, mbs_get_body_forces(sys, st), f);
    const double* fm = mbs_get_mobility_forces(sys, st);
    const double* u = mbs_state_u(st);
    double power = 0;
    for (int i = 0; i < nu; i++) power += u[i] * (f[i] + fm[i]);
    free(f);
    EXPECT_TRUE(power <= 1e-12);
    EXPECT_OK(mbs_step_rk4(sys, st, h));
    const double E = total_energy(sys, st);
    if (E > Eprev + 1e-12) (*increases)++;
    // compare the average power over the step with the energy change (first order in h)
    *worst_power = fmax(*worst_power, fabs((E - Eprev) / h - power) / (1 + fabs(power)));
    Eprev = E;
  }
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  mbs_test_rng rng = {2024};
  const int quick = test_quick();
  double worst_e = 0, worst_ratio = INFINITY;
  for (int t = 0; t < (quick ? 2 : 10); t++)
    energy_tree(&rng, 4 + t % 9, quick ? 0.1 : 1.0, &worst_e, &worst_ratio);
  double worst_h = 0, worst_ke = 0, worst_hratio = INFINITY;
  for (int t = 0; t < (quick ? 1 : 4); t++) momentum_tree(&rng, &worst_h, &worst_ke, &worst_hratio);
  double worst_p = 0;
  int increases = 0;
  for (int t = 0; t < (quick ? 1 : 3); t++) damped_tree(&rng, &worst_p, &increases);
  printf("energy drift / energy scale %.3g (smallest drift ratio for h/2: %.3g); momentum drift %.3g (ratio for h/2: %.3g), "
         "kinetic energy drift %.3g (free-floating); damped: dE/dt vs power %.3g, energy increases %d\n",
         worst_e, worst_ratio, worst_h, worst_hratio, worst_ke, worst_p, increases);
  EXPECT_TRUE(worst_e < 1e-6);
  EXPECT_TRUE(worst_ratio > 8);
  EXPECT_TRUE(worst_h < 1e-8);
  EXPECT_TRUE(worst_hratio > 8);
  EXPECT_TRUE(worst_ke < 1e-8);
  EXPECT_TRUE(worst_p < 0.05);
  EXPECT_EQ_INT(increases, 0);
  return mbs_test_finish("test_energy");
}
