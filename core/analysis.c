// Whole-system quantities: kinetic energy, momentum, center of mass, mobilizer reactions.
#include <string.h>

#include "model_impl.h"

int mbs_calc_kinetic_energy(const mbs_system* sys, mbs_state* st, double* ke) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__);
  if (rc) return rc;
  double e = 0;
  for (int b = 1; b < sys->nbody; b++) {
    double MV[6];
    const double* V = st->V_GB + 6 * b;
    mbs_rigid_inertia_mul(MV, &st->M_G[b], V);
    e += mbs_sv_dot(V, MV);
  }
  *ke = 0.5 * e;
  return MBS_OK;
}

int mbs_calc_momentum(const mbs_system* sys, mbs_state* st, double h[6]) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__);
  if (rc) return rc;
  mbs_sv_zero(h);
  for (int b = 1; b < sys->nbody; b++) {
    double MV[6];
    mbs_rigid_inertia_mul(MV, &st->M_G[b], st->V_GB + 6 * b);
    // shift from B's origin to Ground's origin: angular += p_GB x linear
    mbs_sv_shift_force_add(h, MV, st->X_GB[b].p);
  }
  return MBS_OK;
}

int mbs_calc_center_of_mass(const mbs_system* sys, mbs_state* st, double* mass, double com[3]) {
  return mbs_calc_center_of_mass_subset(sys, st, NULL, mass, com);
}

int mbs_calc_center_of_mass_subset(const mbs_system* sys, mbs_state* st,
                                   const unsigned char* skip, double* mass, double com[3]) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  double m = 0, c[3] = {0, 0, 0};
  for (int b = 1; b < sys->nbody; b++) {
    if (skip && skip[b]) continue;
    const mbs_rigid_inertia* M = &st->M_G[b];
    double p[3];
    mbs_v3_add(p, st->X_GB[b].p, M->c);
    mbs_v3_axpy(c, M->m, p);
    m += M->m;
  }
  if (mass) *mass = m;
  if (com) {
    if (m > 0) mbs_v3_scale(com, c, 1.0 / m);
    else mbs_v3_zero(com);
  }
  return MBS_OK;
}

int mbs_calc_center_of_mass_velocity(const mbs_system* sys, mbs_state* st, double vcom[3]) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__);
  if (rc) return rc;
  double m = 0, v[3] = {0, 0, 0};
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_rigid_inertia* M = &st->M_G[b];
    const double* V = st->V_GB + 6 * b;
    double vc[3];
    mbs_v3_cross(vc, V, M->c);
    mbs_v3_add(vc, vc, V + 3);
    mbs_v3_axpy(v, M->m, vc);
    m += M->m;
  }
  if (m > 0) mbs_v3_scale(vcom, v, 1.0 / m);
  else mbs_v3_zero(vcom);
  return MBS_OK;
}

int mbs_calc_mobilizer_reaction_forces(const mbs_system* sys, mbs_state* st, double* R) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_ACCELERATION, __func__);
  if (rc) return rc;
  const int nb = sys->nbody;
  // Newton-Euler for each subtree, inward: the reaction on B about its origin balances
  // Mk A + b - F_applied plus what B passes on to its children.
  for (int b = 1; b < nb; b++) {
    double* Rb = R + 6 * b;
    mbs_rigid_inertia_mul(Rb, &st->M_G[b], st->A_GB + 6 * b);
    for (int i = 0; i < 6; i++)
      Rb[i] += st->gyro[6 * b + i] - st->F_body[6 * b + i] - st->F_con[6 * b + i];
  }
  mbs_sv_zero(R);
  for (int b = nb - 1; b >= 1; b--) {
    const int par = sys->body_parent[b];
    if (par != 0) mbs_sv_shift_force_add(R + 6 * par, R + 6 * b, st->l + 3 * b);
    else mbs_sv_shift_force_add(R, R + 6 * b, st->X_GB[b].p);  // Ground's weld at the origin
  }
  // report at M's origin: moment about M = moment about B + (p_B - p_M) x f
  for (int b = 1; b < nb; b++) {
    double r[3];
    mbs_m33_vec(r, st->X_GB[b].R, st->X_BM[b].p);  // p_BM in G = p_M - p_B
    double* Rb = R + 6 * b;
    double t[3];
    mbs_v3_cross(t, r, Rb + 3);
    mbs_v3_sub(Rb, Rb, t);
  }
  return MBS_OK;
}
