// O(n) operators on random trees that mix every mobilizer type, checked against dense linear
// algebra and against each other's defining equations:
// - articulated-body forward dynamics = solve(M, f - C), M from the composite-body method,
//   factored by LAPACK Cholesky (dposv);
// - inverse dynamics of the forward-dynamics result gives back the applied forces;
// - M (M^-1 v) = v and M^-1 (M v) = v; M v by recursion = dense M times v;
// - J u = body velocities; J^T F = sum of station Jacobians transposed;
// - mobilizer reactions: H^T R = applied mobility forces, and the Ground reaction equals the
//   rate of change of momentum (central difference) minus the applied body forces.
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "random_tree.h"

static double max_abs(const double* v, int n) {
  double m = 0;
  for (int i = 0; i < n; i++)
    if (fabs(v[i]) > m) m = fabs(v[i]);
  return m;
}

static double max_diff(const double* a, const double* b, int n) {
  double m = 0;
  for (int i = 0; i < n; i++)
    if (fabs(a[i] - b[i]) > m) m = fabs(a[i] - b[i]);
  return m;
}

typedef struct worst {
  double fd, id, minv, mv, jac, jt, react, ground;
} worst;

static void upd(double* w, double e) {
  if (e > *w) *w = e;
}

// spatial momentum about the Ground origin at q = q0 + s qdot + s^2/2 qdotdot, u = u0 + s udot
static void momentum_at(const mbs_system* sys, mbs_state* tmp, const mbs_state* st, double s,
                        double h[6]) {
  mbs_state_copy(sys, tmp, st);
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys);
  const double* qd = mbs_get_qdot(sys, (mbs_state*)st);
  const double* qdd = mbs_get_qdotdot(sys, (mbs_state*)st);
  const double* ud = mbs_get_udot(sys, (mbs_state*)st);
  double* q = mbs_state_upd_q(tmp);
  double* u = mbs_state_upd_u(tmp);
  for (int i = 0; i < nq; i++) q[i] += s * qd[i] + 0.5 * s * s * qdd[i];
  for (int i = 0; i < nu; i++) u[i] += s * ud[i];
  mbs_realize_velocity(sys, tmp);
  mbs_calc_momentum(sys, tmp, h);
}

static void check_tree(mbs_test_rng* rng, int nbody, worst* w) {
  random_tree_opts o = {nbody, random_tree_all_types, MBS_MOB_COUNT, 0, 1, 1, 1, 1, 0};
  mbs_system* sys = random_tree_create(rng, &o);
  EXPECT_TRUE(sys != NULL);
  if (!sys) return;
  mbs_state* st = mbs_state_create(sys);
  mbs_state* tmp = mbs_state_create(sys);
  const int n = mbs_system_nu(sys), nb = mbs_system_nbody(sys);
  double* M = calloc((size_t)n * n + 1, sizeof(double));
  double* work = calloc(16 * (size_t)(n + 6 * nb) + 16, sizeof(double));
  double* x = work;
  double* C = x + n;
  double* f = C + n;
  double* v = f + n;
  double* y = v + n;
  double* z = y + n;
  double* F = z + n;
  double* V = F + 6 * nb;
  double* R = V + 6 * nb;
  double* J = R + 6 * nb;  // 3 x n
  for (int k = 0; k < 4; k++) {
    random_tree_state(rng, sys, st, 1.5, 2.0, 1);
    int rc = mbs_realize_acceleration(sys, st);
    EXPECT_OK(rc);
    if (rc) {
      fprintf(stderr, "%s\n", mbs_state_error(st)->message);
      continue;
    }
    const double* udot = mbs_get_udot(sys, st);
    const double scale = 1 + max_abs(udot, n);

    // forward dynamics against solve(M, f_app - C)
    EXPECT_OK(mbs_calc_mass_matrix(sys, st, M));
    EXPECT_OK(mbs_calc_bias_forces(sys, st, C));
    EXPECT_OK(mbs_calc_jacobian_transpose_times(sys, st, mbs_get_body_forces(sys, st), x));
    const double* fm = mbs_get_mobility_forces(sys, st);
    for (int i = 0; i < n; i++) x[i] += fm[i] - C[i];
    double sym = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) upd(&sym, fabs(M[i * n + j] - M[j * n + i]));
    EXPECT_TRUE(sym == 0);
    double* Mf = calloc((size_t)n * n + 1, sizeof(double));
    memcpy(Mf, M, (size_t)n * n * sizeof(double));
    const lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, 1, Mf, n, x, 1);
    EXPECT_EQ_INT(info, 0);  // M is symmetric positive definite
    free(Mf);
    upd(&w->fd, max_diff(x, udot, n) / scale);

    // inverse dynamics gives back the applied generalized forces
    memcpy(f, mbs_state_applied_mobility_forces(st), (size_t)n * sizeof(double));
    mbs_state_copy(sys, tmp, st);
    memset(mbs_state_upd_applied_mobility_forces(tmp), 0, (size_t)n * sizeof(double));
    EXPECT_OK(mbs_realize_dynamics(sys, tmp));
    EXPECT_OK(mbs_calc_inverse_dynamics(sys, tmp, udot, y));
    upd(&w->id, max_diff(y, f, n) / (1 + max_abs(f, n)));

    // M (M^-1 v) = v, M^-1 (M v) = v, recursive M v = dense M v
    for (int i = 0; i < n; i++) v[i] = mbs_test_uniform(rng, -1, 1);
    EXPECT_OK(mbs_calc_mass_matrix_inverse_times(sys, st, v, y));
    EXPECT_OK(mbs_calc_mass_matrix_times(sys, st, y, z));
    upd(&w->minv, max_diff(z, v, n));
    EXPECT_OK(mbs_calc_mass_matrix_times(sys, st, v, y));
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += M[i * n + j] * v[j];
      z[i] = s;
    }
    upd(&w->mv, max_diff(y, z, n) / (1 + max_abs(z, n)));
    EXPECT_OK(mbs_calc_mass_matrix_inverse_times(sys, st, y, z));
    upd(&w->minv, max_diff(z, v, n));

    // J u = V_GB
    EXPECT_OK(mbs_calc_jacobian_times(sys, st, mbs_state_u(st), V));
    for (int b = 0; b < nb; b++) {
      double Vb[6];
      mbs_get_body_velocity(sys, st, b, Vb);
      upd(&w->jac, max_diff(V + 6 * b, Vb, 6) / (1 + max_abs(Vb, 6)));
    }
    // J^T F for a point force f at station s of body b equals J_s^T f
    for (int trial = 0; trial < 3; trial++) {
      const int b = 1 + (int)mbs_test_uniform(rng, 0, nb - 1);
      double pBS[3], fG[3], pG[3], RGB[9], pGB[3], r[3];
      for (int i = 0; i < 3; i++) {
        pBS[i] = mbs_test_uniform(rng, -0.5, 0.5);
        fG[i] = mbs_test_uniform(rng, -3, 3);
      }
      mbs_get_station_location(sys, st, b, pBS, pG);
      mbs_get_body_transform(sys, st, b, RGB, pGB);
      mbs_v3_sub(r, pG, pGB);
      memset(F, 0, 6 * (size_t)nb * sizeof(double));
      mbs_v3_cross(F + 6 * b, r, fG);
      mbs_v3_copy(F + 6 * b + 3, fG);
      EXPECT_OK(mbs_calc_jacobian_transpose_times(sys, st, F, y));
      EXPECT_OK(mbs_calc_station_jacobian(sys, st, b, pBS, J));
      for (int j = 0; j < n; j++) z[j] = J[j] * fG[0] + J[n + j] * fG[1] + J[2 * n + j] * fG[2];
      upd(&w->jt, max_diff(y, z, n) / (1 + max_abs(z, n)));
      // the station Jacobian gives the station's velocity
      double vS[3] = {0, 0, 0}, Vb[6], vx[3];
      const double* u = mbs_state_u(st);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < n; j++) vS[i] += J[i * n + j] * u[j];
      mbs_get_body_velocity(sys, st, b, Vb);
      mbs_v3_cross(vx, Vb, r);
      mbs_v3_add(vx, vx, Vb + 3);
      upd(&w->jac, max_diff(vS, vx, 3) / (1 + max_abs(vx, 3)));
    }

    // mobilizer reactions
    EXPECT_OK(mbs_calc_mobilizer_reaction_forces(sys, st, R));
    const double* Fb = mbs_get_body_forces(sys, st);
    for (int b = 1; b < nb; b++) {
      // move the reaction from M's origin to B's origin: moment += (p_M - p_B) x f
      double RGB[9], pGB[3], pM[3], rr[3], RB[6];
      mbs_get_body_transform(sys, st, b, RGB, pGB);
      // p_BM from the parameter table
      char path[128];
      snprintf(path, sizeof(path), "/jointset/%s_joint/child_frame/translation", mbs_body_name(sys, b));
      const mbs_param_info* tp = mbs_system_find_param(sys, path);
      EXPECT_TRUE(tp != NULL);
      if (!tp) continue;
      mbs_get_station_location(sys, st, b, mbs_state_params(st) + tp->index, pM);
      mbs_v3_sub(rr, pM, pGB);
      mbs_sv_copy(RB, R + 6 * b);
      mbs_v3_cross_add(RB, rr, RB + 3);
      // H^T R_B: the reaction's components along the free directions are the mobility forces
      double Hcol[6];
      const int uadr = mbs_body_uadr(sys, b);
      for (int j = 0; j < mbs_body_nu(sys, b); j++) {
        // column j of H from the Jacobian of unit speed j
        memset(y, 0, (size_t)n * sizeof(double));
        y[uadr + j] = 1;
        mbs_calc_jacobian_times(sys, st, y, V);
        mbs_sv_copy(Hcol, V + 6 * b);
        const double tau = mbs_sv_dot(Hcol, RB);
        upd(&w->react, fabs(tau - fm[uadr + j]) / (1 + fabs(fm[uadr + j])));
      }
    }
    // Ground reaction = dh/dt - sum of applied body forces about the origin
    // central differences at steps e and e/2, combined by Richardson extrapolation
    const double e = 1e-4;
    double hp[6], hm[6], hp2[6], hm2[6], hdot[6], ext[6] = {0, 0, 0, 0, 0, 0};
    momentum_at(sys, tmp, st, e, hp);
    momentum_at(sys, tmp, st, -e, hm);
    momentum_at(sys, tmp, st, e / 2, hp2);
    momentum_at(sys, tmp, st, -e / 2, hm2);
    for (int i = 0; i < 6; i++)
      hdot[i] = (4 * (hp2[i] - hm2[i]) / e - (hp[i] - hm[i]) / (2 * e)) / 3;
    for (int b = 1; b < nb; b++) {
      double RGB[9], pGB[3];
      mbs_get_body_transform(sys, st, b, RGB, pGB);
      mbs_sv_shift_force_add(ext, Fb + 6 * b, pGB);
    }
    double resid[6];
    for (int i = 0; i < 6; i++) resid[i] = hdot[i] - ext[i];
    upd(&w->ground, max_diff(resid, R, 6) / (1 + max_abs(resid, 6)));
  }
  free(work);
  free(M);
  mbs_state_destroy(tmp);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  mbs_test_rng rng = {0x9e3779b97f4a7c15ULL};
  worst w = {0};
  const int ntrees = test_quick() ? 4 : 40;
  for (int t = 0; t < ntrees; t++) check_tree(&rng, 2 + (t * 7) % 17, &w);
  printf("worst relative errors: forward dynamics %.3g, inverse dynamics %.3g, M*Minv %.3g, "
         "M*v %.3g, J*u %.3g, J^T*F %.3g, reactions %.3g, ground reaction (finite difference) "
         "%.3g\n",
         w.fd, w.id, w.minv, w.mv, w.jac, w.jt, w.react, w.ground);
  EXPECT_TRUE(w.fd < 1e-10);
  EXPECT_TRUE(w.id < 1e-10);
  EXPECT_TRUE(w.minv < 1e-10);
  EXPECT_TRUE(w.mv < 1e-12);
  EXPECT_TRUE(w.jac < 1e-12);
  EXPECT_TRUE(w.jt < 1e-12);
  EXPECT_TRUE(w.react < 1e-10);
  EXPECT_TRUE(w.ground < 1e-8);
  return mbs_test_finish("test_tree_dynamics");
}
