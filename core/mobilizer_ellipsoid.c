// Ellipsoid mobilizer (Simbody's Ellipsoid, OpenSim's EllipsoidJoint).
//
// M rotates like a ball joint (u = w_FM in F) and its origin rides on the ellipsoid with
// semi-axes (a, b, c) along F's axes: p_FM = D n, D = diag(a, b, c), n = M's z axis in F.
// Then v_FM = D (w x n), so H_FM = [1; -D (n x)] and HDot_FM u = [0; D (w x (w x n))].
#include "model_impl.h"

static void ellipsoid_common(const mbs_mob_ctx* c, const double R[9], double p[3], double* H) {
  const double a = c->param[0], b = c->param[1], cc = c->param[2];
  const double n0 = R[2], n1 = R[5], n2 = R[8];  // M's z axis in F
  mbs_v3_set(p, a * n0, b * n1, cc * n2);
  // column j: [e_j; D (e_j x n)]
  double* h0 = H;
  double* h1 = H + 6;
  double* h2 = H + 12;
  h0[0] = 1; h0[1] = 0; h0[2] = 0; h0[3] = 0;       h0[4] = -b * n2; h0[5] = cc * n1;
  h1[0] = 0; h1[1] = 1; h1[2] = 0; h1[3] = a * n2;  h1[4] = 0;       h1[5] = -cc * n0;
  h2[0] = 0; h2[1] = 0; h2[2] = 1; h2[3] = -a * n1; h2[4] = b * n0;  h2[5] = 0;
}

static void ellipsoid_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                               double* H) {
  mbs_quat_to_rot(R, q);
  ellipsoid_common(c, R, p, H);
}

static void ellipsoid_xyz_position(const mbs_mob_ctx* c, const double* q, double R[9],
                                   double p[3], double* H) {
  mbs_rot_body_xyz(R, q);
  ellipsoid_common(c, R, p, H);
}

static void ellipsoid_hdot_u(const mbs_mob_ctx* c, const double* q, const double* u,
                             double HDu[6]) {
  double R[9], n[3], t[3], t2[3];
  if (c->nq == 4) mbs_quat_to_rot(R, q);
  else mbs_rot_body_xyz(R, q);
  mbs_v3_set(n, R[2], R[5], R[8]);
  mbs_v3_cross(t, u, n);
  mbs_v3_cross(t2, u, t);
  HDu[0] = HDu[1] = HDu[2] = 0;
  HDu[3] = c->param[0] * t2[0];
  HDu[4] = c->param[1] * t2[1];
  HDu[5] = c->param[2] * t2[2];
}

const mbs_mobilizer_ops mbs_mob_ellipsoid = {"ellipsoid", 4, 3, 0, 0, ellipsoid_position,
                                             ellipsoid_hdot_u, mbs_mob_ball_qdot,
                                             mbs_mob_ball_u_from_qdot, mbs_mob_ball_qdotdot,
                                             mbs_mob_quat_default};

const mbs_mobilizer_ops mbs_mob_ellipsoid_xyz = {"ellipsoid_xyz", 3, 3, 0, -1,
                                                 ellipsoid_xyz_position, ellipsoid_hdot_u,
                                                 mbs_mob_xyz_qdot, mbs_mob_xyz_u_from_qdot,
                                                 mbs_mob_xyz_qdotdot, NULL};
