// Mobilizers with 3 rotational degrees of freedom: gimbal, ball and free, with quaternion or
// body-fixed X-Y-Z angle coordinates.
//
// Ball and free: u holds the angular velocity w_FM of M in F, expressed in F (and v_FM, the
// velocity of M's origin in F, for free), so H_FM is constant. Their q' = N(q) u:
// - quaternion: q' = 1/2 (0, w) * q, built from the unnormalized q (Theory Manual §8.7);
// - X-Y-Z angles a: w = E(a) a', E = [[1, 0, s1], [0, c0, -s0 c1], [0, s0, c0 c1]].
// Gimbal: u = a' (the angle rates), so H_FM = [E(a); 0] depends on q.
#include "model_impl.h"

//---------------------------------- quaternion kinematics --------------------------------------

void mbs_quat_qdot(const double q[4], const double w[3], double qdot[4]) {
  // 1/2 (0, w) * q = 1/2 (-w.qv, q0 w + w x qv)
  qdot[0] = -0.5 * (w[0] * q[1] + w[1] * q[2] + w[2] * q[3]);
  qdot[1] = 0.5 * (q[0] * w[0] + w[1] * q[3] - w[2] * q[2]);
  qdot[2] = 0.5 * (q[0] * w[1] + w[2] * q[1] - w[0] * q[3]);
  qdot[3] = 0.5 * (q[0] * w[2] + w[0] * q[2] - w[1] * q[1]);
}

void mbs_quat_w_from_qdot(const double q[4], const double qd[4], double w[3]) {
  // w = 2 vec(q' * conj(q)) / |q|^2 = 2 (q0 qd_v - qd0 q_v - qd_v x q_v) / |q|^2
  const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  const double s = 2.0 / n2;
  double c[3];
  mbs_v3_cross(c, qd + 1, q + 1);
  for (int i = 0; i < 3; i++) w[i] = s * (q[0] * qd[1 + i] - qd[0] * q[1 + i] - c[i]);
}

void mbs_quat_qdotdot(const double q[4], const double w[3], const double wdot[3], double qdd[4]) {
  // q'' = 1/2 (0, w') * q + 1/2 (0, w) * q' = 1/2 (0, w') * q - |w|^2 / 4 q
  mbs_quat_qdot(q, wdot, qdd);
  const double k = -0.25 * mbs_v3_dot(w, w);
  for (int i = 0; i < 4; i++) qdd[i] += k * q[i];
}

//---------------------------------- X-Y-Z angle kinematics -------------------------------------

void mbs_xyz_qdot(const double a[3], const double w[3], double ad[3]) {
  // solve E(a) a' = w
  double s0, c0;
  mbs_sincos(a[0], &s0, &c0);
  double s1, c1;
  mbs_sincos(a[1], &s1, &c1);
  ad[1] = c0 * w[1] + s0 * w[2];
  ad[2] = (-s0 * w[1] + c0 * w[2]) / c1;
  ad[0] = w[0] - s1 * ad[2];
}

void mbs_xyz_w_from_qdot(const double a[3], const double ad[3], double w[3]) {
  double E[9];
  mbs_body_xyz_rate_matrix(E, a);
  mbs_m33_vec(w, E, ad);
}

// E'(a, a') a'
static void xyz_edot_times(const double a[3], const double ad[3], double r[3]) {
  double s0, c0;
  mbs_sincos(a[0], &s0, &c0);
  double s1, c1;
  mbs_sincos(a[1], &s1, &c1);
  r[0] = c1 * ad[1] * ad[2];
  r[1] = -s0 * ad[0] * ad[1] + (-c0 * c1 * ad[0] + s0 * s1 * ad[1]) * ad[2];
  r[2] = c0 * ad[0] * ad[1] + (-s0 * c1 * ad[0] - c0 * s1 * ad[1]) * ad[2];
}

void mbs_xyz_qdotdot(const double a[3], const double w[3], const double wdot[3], double add[3]) {
  // a'' = E^-1 (w' - E' a')
  double ad[3], t[3];
  mbs_xyz_qdot(a, w, ad);
  xyz_edot_times(a, ad, t);
  mbs_v3_sub(t, wdot, t);
  mbs_xyz_qdot(a, t, add);
}

//---------------------------------- gimbal -----------------------------------------------------

static void gimbal_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                            double* H) {
  (void)c;
  double E[9];
  mbs_rot_body_xyz(R, q);
  mbs_v3_zero(p);
  mbs_body_xyz_rate_matrix(E, q);
  for (int j = 0; j < 3; j++) {
    double* h = H + 6 * j;
    h[0] = E[j]; h[1] = E[3 + j]; h[2] = E[6 + j];
    h[3] = h[4] = h[5] = 0;
  }
}

static void gimbal_hdot_u(const mbs_mob_ctx* c, const double* q, const double* u, double HDu[6]) {
  (void)c;
  xyz_edot_times(q, u, HDu);
  HDu[3] = HDu[4] = HDu[5] = 0;
}

const mbs_mobilizer_ops mbs_mob_gimbal = {"gimbal", 3, 3, 0, -1, gimbal_position, gimbal_hdot_u,
                                          NULL, NULL, NULL, NULL};

//---------------------------------- ball -------------------------------------------------------

static void rotation_hinge(double* H, int ncol) {
  // columns [e_j; 0] for the three rotations, then [0; e_j] for translations
  for (int j = 0; j < ncol; j++) {
    double* h = H + 6 * j;
    for (int i = 0; i < 6; i++) h[i] = (i == j) ? 1.0 : 0.0;
  }
}

static void ball_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                          double* H) {
  (void)c;
  mbs_quat_to_rot(R, q);
  mbs_v3_zero(p);
  rotation_hinge(H, 3);
}
void mbs_mob_ball_qdot(const mbs_mob_ctx* c, const double* q, const double* u, double* qd) {
  (void)c;
  mbs_quat_qdot(q, u, qd);
}
void mbs_mob_ball_u_from_qdot(const mbs_mob_ctx* c, const double* q, const double* qd,
                              double* u) {
  (void)c;
  mbs_quat_w_from_qdot(q, qd, u);
}
void mbs_mob_ball_qdotdot(const mbs_mob_ctx* c, const double* q, const double* u,
                         const double* ud, double* qdd) {
  (void)c;
  mbs_quat_qdotdot(q, u, ud, qdd);
}
void mbs_mob_quat_default(const mbs_mob_ctx* c, double* q) {
  (void)c;
  q[0] = 1;
  q[1] = q[2] = q[3] = 0;
}

const mbs_mobilizer_ops mbs_mob_ball = {"ball",
                                        4, 3, 0, 0,
                                        ball_position,
                                        NULL,
                                        mbs_mob_ball_qdot,
                                        mbs_mob_ball_u_from_qdot,
                                        mbs_mob_ball_qdotdot,
                                        mbs_mob_quat_default};

static void ball_xyz_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                              double* H) {
  (void)c;
  mbs_rot_body_xyz(R, q);
  mbs_v3_zero(p);
  rotation_hinge(H, 3);
}
void mbs_mob_xyz_qdot(const mbs_mob_ctx* c, const double* q, const double* u, double* qd) {
  (void)c;
  mbs_xyz_qdot(q, u, qd);
}
void mbs_mob_xyz_u_from_qdot(const mbs_mob_ctx* c, const double* q, const double* qd,
                             double* u) {
  (void)c;
  mbs_xyz_w_from_qdot(q, qd, u);
}
void mbs_mob_xyz_qdotdot(const mbs_mob_ctx* c, const double* q, const double* u, const double* ud,
                        double* qdd) {
  (void)c;
  mbs_xyz_qdotdot(q, u, ud, qdd);
}

const mbs_mobilizer_ops mbs_mob_ball_xyz = {"ball_xyz",
                                            3, 3, 0, -1,
                                            ball_xyz_position,
                                            NULL,
                                            mbs_mob_xyz_qdot,
                                            mbs_mob_xyz_u_from_qdot,
                                            mbs_mob_xyz_qdotdot,
                                            NULL};

//---------------------------------- free -------------------------------------------------------

static void free_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                          double* H) {
  (void)c;
  mbs_quat_to_rot(R, q);
  mbs_v3_copy(p, q + 4);
  rotation_hinge(H, 6);
}
static void free_qdot(const mbs_mob_ctx* c, const double* q, const double* u, double* qd) {
  (void)c;
  mbs_quat_qdot(q, u, qd);
  mbs_v3_copy(qd + 4, u + 3);
}
static void free_u_from_qdot(const mbs_mob_ctx* c, const double* q, const double* qd, double* u) {
  (void)c;
  mbs_quat_w_from_qdot(q, qd, u);
  mbs_v3_copy(u + 3, qd + 4);
}
static void free_qdotdot(const mbs_mob_ctx* c, const double* q, const double* u, const double* ud,
                         double* qdd) {
  (void)c;
  mbs_quat_qdotdot(q, u, ud, qdd);
  mbs_v3_copy(qdd + 4, ud + 3);
}

const mbs_mobilizer_ops mbs_mob_free = {"free", 7, 6, 0, 0, free_position, NULL, free_qdot,
                                        free_u_from_qdot, free_qdotdot, mbs_mob_quat_default};

static void free_xyz_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                              double* H) {
  (void)c;
  mbs_rot_body_xyz(R, q);
  mbs_v3_copy(p, q + 3);
  rotation_hinge(H, 6);
}
static void free_xyz_qdot(const mbs_mob_ctx* c, const double* q, const double* u, double* qd) {
  (void)c;
  mbs_xyz_qdot(q, u, qd);
  mbs_v3_copy(qd + 3, u + 3);
}
static void free_xyz_u_from_qdot(const mbs_mob_ctx* c, const double* q, const double* qd,
                                 double* u) {
  (void)c;
  mbs_xyz_w_from_qdot(q, qd, u);
  mbs_v3_copy(u + 3, qd + 3);
}
static void free_xyz_qdotdot(const mbs_mob_ctx* c, const double* q, const double* u,
                             const double* ud, double* qdd) {
  (void)c;
  mbs_xyz_qdotdot(q, u, ud, qdd);
  mbs_v3_copy(qdd + 3, ud + 3);
}

const mbs_mobilizer_ops mbs_mob_free_xyz = {"free_xyz", 6, 6, 0, -1, free_xyz_position, NULL,
                                            free_xyz_qdot, free_xyz_u_from_qdot,
                                            free_xyz_qdotdot, NULL};
