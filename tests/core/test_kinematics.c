// Kinematics of every mobilizer type against finite differences (Theory Manual eqs 5.7-5.8):
// along the path q(s) = q + s q' + s^2/2 q'', u(s) = u + s u', with q' = N(q) u,
// - the body poses X_GB(q(s)) change at the body velocities V_GB (so N and H agree),
// - the body velocities change at the body accelerations A_GB (so HDot u and the Coriolis
//   terms are right),
// - q' changes at q'' (so N' u is right),
// and u = N^-1 q' inverts q' = N u.
// Derivatives are central differences at steps e and e/2 combined by Richardson extrapolation.
#include <string.h>

#include "random_tree.h"

typedef struct path_point {
  double R[16][9], p[16][3], V[16][6], qdot[64];
} path_point;

// evaluate poses, velocities and q' at path parameter s
static void eval_at(const mbs_system* sys, const mbs_state* st, mbs_state* tmp, double s,
                    path_point* out) {
  mbs_state_copy(sys, tmp, st);
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys), nb = mbs_system_nbody(sys);
  const double* qd = mbs_get_qdot(sys, (mbs_state*)st);
  const double* qdd = mbs_get_qdotdot(sys, (mbs_state*)st);
  const double* ud = mbs_get_udot(sys, (mbs_state*)st);
  double* q = mbs_state_upd_q(tmp);
  double* u = mbs_state_upd_u(tmp);
  for (int i = 0; i < nq; i++) q[i] += s * qd[i] + 0.5 * s * s * qdd[i];
  for (int i = 0; i < nu; i++) u[i] += s * ud[i];
  EXPECT_OK(mbs_realize_velocity(sys, tmp));
  for (int b = 0; b < nb; b++) {
    mbs_get_body_transform(sys, tmp, b, out->R[b], out->p[b]);
    mbs_get_body_velocity(sys, tmp, b, out->V[b]);
  }
  memcpy(out->qdot, mbs_get_qdot(sys, tmp), (size_t)nq * sizeof(double));
}

// Richardson-extrapolated central difference of x(s) from samples at +-e and +-e/2
static double deriv(double xp, double xm, double xp2, double xm2, double e) {
  return (4 * (xp2 - xm2) / e - (xp - xm) / (2 * e)) / 3;
}

static double rel(double a, double b) { return fabs(a - b) / (1 + fabs(b)); }

int main(void) {
  mbs_test_rng rng = {77};
  const int ntrials = test_quick() ? 2 : 12;
  double worst_v = 0, worst_a = 0, worst_qdd = 0, worst_inv = 0;
  int worst_type_v = -1, worst_type_a = -1;
  path_point* pts = malloc(4 * sizeof(path_point));
  for (int t = 0; t < MBS_MOB_COUNT; t++) {
    // a chain of three bodies of this type (so that the parent moves too) with random frames
    const mbs_mobilizer_type types[1] = {(mbs_mobilizer_type)t};
    random_tree_opts o = {3, types, 1, 1, 1, 0, 0, 1, 0};
    for (int trial = 0; trial < ntrials; trial++) {
      mbs_system* sys = random_tree_create(&rng, &o);
      EXPECT_TRUE(sys != NULL);
      if (!sys) continue;
      mbs_state* st = mbs_state_create(sys);
      mbs_state* tmp = mbs_state_create(sys);
      random_tree_state(&rng, sys, st, 1.2, 1.5, 1);
      EXPECT_OK(mbs_realize_acceleration(sys, st));
      const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys), nb = mbs_system_nbody(sys);

      // u = N^-1 (N u)
      double u2[64];
      EXPECT_OK(mbs_calc_u_from_qdot(sys, st, mbs_get_qdot(sys, st), u2));
      for (int i = 0; i < nu; i++) {
        const double e = rel(u2[i], mbs_state_u(st)[i]);
        if (e > worst_inv) worst_inv = e;
      }

      const double e = 2e-4;
      const double s[4] = {e, -e, e / 2, -e / 2};
      for (int k = 0; k < 4; k++) eval_at(sys, st, tmp, s[k], &pts[k]);
      for (int b = 1; b < nb; b++) {
        double Rd[9], RGB[9], pGB[3], V[6], A[6];
        mbs_get_body_transform(sys, st, b, RGB, pGB);
        mbs_get_body_velocity(sys, st, b, V);
        mbs_get_body_acceleration(sys, st, b, A);
        for (int i = 0; i < 9; i++)
          Rd[i] = deriv(pts[0].R[b][i], pts[1].R[b][i], pts[2].R[b][i], pts[3].R[b][i], e);
        double W[9];  // Rdot R^T = w x
        mbs_m33_mult(W, Rd, RGB);
        const double w[3] = {W[7], W[2], W[3]};
        double ev = 0;
        for (int i = 0; i < 3; i++) {
          ev = fmax(ev, rel(w[i], V[i]));
          const double pd = deriv(pts[0].p[b][i], pts[1].p[b][i], pts[2].p[b][i], pts[3].p[b][i], e);
          ev = fmax(ev, rel(pd, V[3 + i]));
        }
        // Rdot R^T must be skew-symmetric
        ev = fmax(ev, fabs(W[1] + W[3]) + fabs(W[2] + W[6]) + fabs(W[5] + W[7]) + fabs(W[0]) +
                          fabs(W[4]) + fabs(W[8]));
        if (ev > worst_v) {
          worst_v = ev;
          worst_type_v = t;
        }
        double ea = 0;
        for (int i = 0; i < 6; i++) {
          const double ad = deriv(pts[0].V[b][i], pts[1].V[b][i], pts[2].V[b][i], pts[3].V[b][i], e);
          ea = fmax(ea, rel(ad, A[i]));
        }
        if (ea > worst_a) {
          worst_a = ea;
          worst_type_a = t;
        }
      }
      const double* qdd = mbs_get_qdotdot(sys, st);
      for (int i = 0; i < nq; i++) {
        const double d = deriv(pts[0].qdot[i], pts[1].qdot[i], pts[2].qdot[i], pts[3].qdot[i], e);
        worst_qdd = fmax(worst_qdd, rel(d, qdd[i]));
      }
      mbs_state_destroy(tmp);
      mbs_state_destroy(st);
      mbs_system_destroy(sys);
    }
  }
  free(pts);
  printf("worst relative errors: velocity %.3g (%s), acceleration %.3g (%s), q'' %.3g, "
         "N^-1 N %.3g\n",
         worst_v, worst_type_v >= 0 ? mbs_mobilizer_type_name(worst_type_v) : "-", worst_a,
         worst_type_a >= 0 ? mbs_mobilizer_type_name(worst_type_a) : "-", worst_qdd, worst_inv);
  EXPECT_TRUE(worst_v < 1e-8);
  EXPECT_TRUE(worst_a < 1e-8);
  EXPECT_TRUE(worst_qdd < 1e-8);
  EXPECT_TRUE(worst_inv < 1e-13);
  return mbs_test_finish("test_kinematics");
}
