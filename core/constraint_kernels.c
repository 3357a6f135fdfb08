// Constraint kernels: position, velocity and acceleration errors of each constraint type, and
// the forces of its multipliers (Simbody Theory Manual §6; the derivations are in the
// comments). Everything is in Ground. For body k: o_k its origin, w_k and v_k (the velocity of
// o_k) from V, b_k and a_k from A; the velocity of the body's material point at r from o_k is
// v_k + w_k x r and its acceleration a_k + b_k x r + w_k x (w_k x r) with the current w_k.
//
// The forces are the duals of the velocity errors: for every u,
// lam . (verr(u) - verr(0)) = sum_k V_k . F_k + u . f, which makes them G^T lam. The tests check
// this, and that d/dt perr = verr and d/dt verr = aerr along trajectories.
#include "model_impl.h"

//---------------------------------- helpers ----------------------------------------------------

static const double* body_R(const mbs_con_ctx* c, int b) { return c->st->X_GB[b].R; }
static const double* body_o(const mbs_con_ctx* c, int b) { return c->st->X_GB[b].p; }
// current angular velocity of body b
static const double* body_w(const mbs_con_ctx* c, int b) { return c->st->V_GB + 6 * b; }

// r = R_GB p_B: a station's offset from its body's origin, in G
static void station_offset(const mbs_con_ctx* c, int b, const double p_B[3], double r[3]) {
  mbs_m33_vec(r, body_R(c, b), p_B);
}

// velocity of body b's material point at offset r, from body velocities V
static void point_vel(const double* V, int b, const double r[3], double v[3]) {
  const double* Vb = V + 6 * b;
  mbs_v3_cross(v, Vb, r);
  mbs_v3_add(v, v, Vb + 3);
}

// acceleration of body b's material point at offset r, from body accelerations A and the
// current angular velocity w
static void point_acc(const double* A, int b, const double w[3], const double r[3],
                      double a[3]) {
  const double* Ab = A + 6 * b;
  double wr[3], t[3];
  mbs_v3_cross(a, Ab, r);
  mbs_v3_add(a, a, Ab + 3);
  mbs_v3_cross(wr, w, r);
  mbs_v3_cross(t, w, wr);
  mbs_v3_add(a, a, t);
}

// add force f at offset r to body b (Ground ignored)
static void add_point_force(double* F, int b, const double r[3], const double f[3], double s) {
  if (b == 0) return;
  double* Fb = F + 6 * b;
  double t[3];
  mbs_v3_cross(t, r, f);
  mbs_v3_axpy(Fb, s, t);
  mbs_v3_axpy(Fb + 3, s, f);
}

static void add_torque(double* F, int b, const double t[3], double s) {
  if (b == 0) return;
  mbs_v3_axpy(F + 6 * b, s, t);
}

//---------------------------------- ball: P2 = P1 (3 equations) --------------------------------

static void ball_points(const mbs_con_ctx* c, const double* p1, const double* p2, double s1[3],
                        double s2[3]) {
  station_offset(c, c->d->body1, p1, s1);
  station_offset(c, c->d->body2, p2, s2);
}

static void ball_perr_at(const mbs_con_ctx* c, const double* p1, const double* p2, double* e) {
  double s1[3], s2[3];
  ball_points(c, p1, p2, s1, s2);
  for (int i = 0; i < 3; i++)
    e[i] = (body_o(c, c->d->body2)[i] + s2[i]) - (body_o(c, c->d->body1)[i] + s1[i]);
}

// verr = v2(s2) - v1(s1)
static void ball_verr_at(const mbs_con_ctx* c, const double* p1, const double* p2,
                         const double* V, double* e) {
  double s1[3], s2[3], v1[3], v2[3];
  ball_points(c, p1, p2, s1, s2);
  point_vel(V, c->d->body1, s1, v1);
  point_vel(V, c->d->body2, s2, v2);
  mbs_v3_sub(e, v2, v1);
}

// aerr = a2(s2) - a1(s1)
static void ball_aerr_at(const mbs_con_ctx* c, const double* p1, const double* p2,
                         const double* A, double* e) {
  double s1[3], s2[3], a1[3], a2[3];
  ball_points(c, p1, p2, s1, s2);
  point_acc(A, c->d->body1, body_w(c, c->d->body1), s1, a1);
  point_acc(A, c->d->body2, body_w(c, c->d->body2), s2, a2);
  mbs_v3_sub(e, a2, a1);
}

// lam on the point of body 2, -lam on the point of body 1
static void ball_forces_at(const mbs_con_ctx* c, const double* p1, const double* p2,
                           const double* lam, double* F) {
  double s1[3], s2[3];
  ball_points(c, p1, p2, s1, s2);
  add_point_force(F, c->d->body2, s2, lam, 1);
  add_point_force(F, c->d->body1, s1, lam, -1);
}

static void ball_perr(const mbs_con_ctx* c, double* e) {
  ball_perr_at(c, c->p + MBS_CP_P1, c->p + MBS_CP_P2, e);
}
static void ball_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)u;
  ball_verr_at(c, c->p + MBS_CP_P1, c->p + MBS_CP_P2, V, e);
}
static void ball_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)udot;
  ball_aerr_at(c, c->p + MBS_CP_P1, c->p + MBS_CP_P2, A, e);
}
static void ball_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)f;
  ball_forces_at(c, c->p + MBS_CP_P1, c->p + MBS_CP_P2, lam, F);
}

//---------------------------------- angle between a (body 1) and b (body 2) --------------------
// perr = a . b - cos(theta); verr = (w2 - w1) . (b x a);
// aerr = (b2 - b1) . (b x a) + (w2 - w1) . ((w2 x b) x a + b x (w1 x a)); torque lam (b x a)
// on body 2 and -lam (b x a) on body 1.

static void angle_vectors(const mbs_con_ctx* c, const double a_B1[3], const double b_B2[3],
                          double a[3], double b[3]) {
  mbs_m33_vec(a, body_R(c, c->d->body1), a_B1);
  mbs_m33_vec(b, body_R(c, c->d->body2), b_B2);
}

static double angle_perr_at(const mbs_con_ctx* c, const double* a1, const double* b2,
                            double cos_theta) {
  double a[3], b[3];
  angle_vectors(c, a1, b2, a, b);
  return mbs_v3_dot(a, b) - cos_theta;
}

static double angle_verr_at(const mbs_con_ctx* c, const double* a1, const double* b2,
                            const double* V) {
  double a[3], b[3], ba[3], dw[3];
  angle_vectors(c, a1, b2, a, b);
  mbs_v3_cross(ba, b, a);
  mbs_v3_sub(dw, V + 6 * c->d->body2, V + 6 * c->d->body1);
  return mbs_v3_dot(dw, ba);
}

static double angle_aerr_at(const mbs_con_ctx* c, const double* a1, const double* b2,
                            const double* A) {
  double a[3], b[3], ba[3], db[3], dw[3], t1[3], t2[3], x[3];
  angle_vectors(c, a1, b2, a, b);
  const double* w1 = body_w(c, c->d->body1);
  const double* w2 = body_w(c, c->d->body2);
  mbs_v3_cross(ba, b, a);
  mbs_v3_sub(db, A + 6 * c->d->body2, A + 6 * c->d->body1);
  mbs_v3_sub(dw, w2, w1);
  mbs_v3_cross(x, w2, b);
  mbs_v3_cross(t1, x, a);    // (w2 x b) x a
  mbs_v3_cross(x, w1, a);
  mbs_v3_cross(t2, b, x);    // b x (w1 x a)
  mbs_v3_add(t1, t1, t2);
  return mbs_v3_dot(db, ba) + mbs_v3_dot(dw, t1);
}

static void angle_forces_at(const mbs_con_ctx* c, const double* a1, const double* b2, double lam,
                            double* F) {
  double a[3], b[3], ba[3];
  angle_vectors(c, a1, b2, a, b);
  mbs_v3_cross(ba, b, a);
  add_torque(F, c->d->body2, ba, lam);
  add_torque(F, c->d->body1, ba, -lam);
}

static void cangle_perr(const mbs_con_ctx* c, double* e) {
  e[0] = angle_perr_at(c, c->cc + MBS_CC_A1, c->cc + MBS_CC_A2, cos(c->p[MBS_CP_VALUE]));
}
static void cangle_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)u;
  e[0] = angle_verr_at(c, c->cc + MBS_CC_A1, c->cc + MBS_CC_A2, V);
}
static void cangle_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)udot;
  e[0] = angle_aerr_at(c, c->cc + MBS_CC_A1, c->cc + MBS_CC_A2, A);
}
static void cangle_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)f;
  angle_forces_at(c, c->cc + MBS_CC_A1, c->cc + MBS_CC_A2, lam[0], F);
}

//---------------------------------- constant orientation (3 equations) -------------------------
// Frames F (rotation R1 on body 1) and B (R2 on body 2) stay aligned: the pairs (Fx, By),
// (Fy, Bz), (Fz, Bx) stay perpendicular (three constant angles of 90 degrees).

static void orient_axes(const mbs_con_ctx* c, int k, double fa[3], double fb[3]) {
  // column k of R1 and column k+1 of R2, in the bodies' frames
  const double* R1 = c->cc + MBS_CC_R1;
  const double* R2 = c->cc + MBS_CC_R2;
  const int kb = (k + 1) % 3;
  for (int i = 0; i < 3; i++) {
    fa[i] = R1[3 * i + k];
    fb[i] = R2[3 * i + kb];
  }
}

static void orient_perr(const mbs_con_ctx* c, double* e) {
  for (int k = 0; k < 3; k++) {
    double fa[3], fb[3];
    orient_axes(c, k, fa, fb);
    e[k] = angle_perr_at(c, fa, fb, 0.0);
  }
}
static void orient_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)u;
  for (int k = 0; k < 3; k++) {
    double fa[3], fb[3];
    orient_axes(c, k, fa, fb);
    e[k] = angle_verr_at(c, fa, fb, V);
  }
}
static void orient_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)udot;
  for (int k = 0; k < 3; k++) {
    double fa[3], fb[3];
    orient_axes(c, k, fa, fb);
    e[k] = angle_aerr_at(c, fa, fb, A);
  }
}
static void orient_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)f;
  for (int k = 0; k < 3; k++) {
    double fa[3], fb[3];
    orient_axes(c, k, fa, fb);
    angle_forces_at(c, fa, fb, lam[k], F);
  }
}

//---------------------------------- weld: ball of the frame origins + constant orientation -----

static void weld_perr(const mbs_con_ctx* c, double* e) {
  ball_perr(c, e);
  orient_perr(c, e + 3);
}
static void weld_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  ball_verr(c, V, u, e);
  orient_verr(c, V, u, e + 3);
}
static void weld_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  ball_aerr(c, A, udot, e);
  orient_aerr(c, A, udot, e + 3);
}
static void weld_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  ball_forces(c, lam, F, f);
  orient_forces(c, lam + 3, F, f);
}

//---------------------------------- rod: |P2 - P1| = L ----------------------------------------
// r = P2 - P1, n = r / |r|: perr = |r| - L; verr = n . dv; aerr = n . da + (|dv|^2 -
// (n . dv)^2) / |r| (from d n/dt = (dv - n (n . dv)) / |r|); lam n on body 2, -lam n on body 1.

static void rod_geometry(const mbs_con_ctx* c, double s1[3], double s2[3], double n[3],
                         double* len) {
  double r[3];
  ball_points(c, c->p + MBS_CP_P1, c->p + MBS_CP_P2, s1, s2);
  for (int i = 0; i < 3; i++)
    r[i] = (body_o(c, c->d->body2)[i] + s2[i]) - (body_o(c, c->d->body1)[i] + s1[i]);
  *len = mbs_v3_norm(r);
  mbs_v3_scale(n, r, *len > 0 ? 1.0 / *len : 0.0);
}

static void rod_perr(const mbs_con_ctx* c, double* e) {
  double s1[3], s2[3], n[3], len;
  rod_geometry(c, s1, s2, n, &len);
  e[0] = len - c->p[MBS_CP_VALUE];
}
static void rod_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)u;
  double s1[3], s2[3], n[3], len, v1[3], v2[3];
  rod_geometry(c, s1, s2, n, &len);
  point_vel(V, c->d->body1, s1, v1);
  point_vel(V, c->d->body2, s2, v2);
  mbs_v3_sub(v2, v2, v1);
  e[0] = mbs_v3_dot(n, v2);
}
static void rod_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)udot;
  double s1[3], s2[3], n[3], len, v1[3], v2[3], a1[3], a2[3];
  rod_geometry(c, s1, s2, n, &len);
  point_vel(c->st->V_GB, c->d->body1, s1, v1);
  point_vel(c->st->V_GB, c->d->body2, s2, v2);
  mbs_v3_sub(v2, v2, v1);
  point_acc(A, c->d->body1, body_w(c, c->d->body1), s1, a1);
  point_acc(A, c->d->body2, body_w(c, c->d->body2), s2, a2);
  mbs_v3_sub(a2, a2, a1);
  const double nv = mbs_v3_dot(n, v2);
  e[0] = mbs_v3_dot(n, a2) + (mbs_v3_dot(v2, v2) - nv * nv) / len;
}
static void rod_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)f;
  double s1[3], s2[3], n[3], len;
  rod_geometry(c, s1, s2, n, &len);
  add_point_force(F, c->d->body2, s2, n, lam[0]);
  add_point_force(F, c->d->body1, s1, n, -lam[0]);
}

//---------------------------------- point S of body 2 in a plane of body 1 ---------------------
// Plane through O (station p1 of body 1) with unit normal n (fixed in body 1); S at station s.
// perr = n . (S - O) - h. With C the material point of body 1 at S (offset rC = S - o1):
// verr = n . (v_S - v_C) (equal to d/dt perr since d/dt n = w1 x n);
// aerr = (w1 x n) . (v_S - v_C) + n . (a_S - a_o1 - b1 x rC - w1 x (v_S - v_o1));
// forces: lam n at S on body 2, -lam n at C on body 1.

typedef struct plane_geom {
  double n[3];      // normal in G
  double S[3];      // the follower point in G
  double s2[3];     // its offset from o2
  double rC[3];     // its offset from o1 (coincident point of body 1)
  double O[3];      // the plane point
} plane_geom;

static void plane_geometry(const mbs_con_ctx* c, const double n_B1[3], const double p2[3],
                           plane_geom* g) {
  const int b1 = c->d->body1, b2 = c->d->body2;
  double t[3];
  mbs_m33_vec(g->n, body_R(c, b1), n_B1);
  station_offset(c, b2, p2, g->s2);
  mbs_v3_add(g->S, body_o(c, b2), g->s2);
  mbs_v3_sub(g->rC, g->S, body_o(c, b1));
  station_offset(c, b1, c->p + MBS_CP_P1, t);
  mbs_v3_add(g->O, body_o(c, b1), t);
}

static double plane_perr_at(const mbs_con_ctx* c, const double n_B1[3], const double p2[3]) {
  plane_geom g;
  plane_geometry(c, n_B1, p2, &g);
  double d[3];
  mbs_v3_sub(d, g.S, g.O);
  return mbs_v3_dot(g.n, d);
}

static double plane_verr_at(const mbs_con_ctx* c, const double n_B1[3], const double p2[3],
                            const double* V) {
  plane_geom g;
  plane_geometry(c, n_B1, p2, &g);
  double vS[3], vC[3];
  point_vel(V, c->d->body2, g.s2, vS);
  point_vel(V, c->d->body1, g.rC, vC);
  mbs_v3_sub(vS, vS, vC);
  return mbs_v3_dot(g.n, vS);
}

static double plane_aerr_at(const mbs_con_ctx* c, const double n_B1[3], const double p2[3],
                            const double* A) {
  const int b1 = c->d->body1, b2 = c->d->body2;
  plane_geom g;
  plane_geometry(c, n_B1, p2, &g);
  const double* w1 = body_w(c, b1);
  const double* V = c->st->V_GB;
  double vS[3], vC[3], aS[3], wn[3], dv[3], t[3], x[3];
  point_vel(V, b2, g.s2, vS);
  point_vel(V, b1, g.rC, vC);
  point_acc(A, b2, body_w(c, b2), g.s2, aS);
  mbs_v3_cross(wn, w1, g.n);
  mbs_v3_sub(dv, vS, vC);
  // a_S - a_o1 - b1 x rC - w1 x (v_S - v_o1)
  mbs_v3_sub(x, aS, A + 6 * b1 + 3);
  mbs_v3_cross(t, A + 6 * b1, g.rC);
  mbs_v3_sub(x, x, t);
  double vso[3];
  mbs_v3_sub(vso, vS, V + 6 * b1 + 3);
  mbs_v3_cross(t, w1, vso);
  mbs_v3_sub(x, x, t);
  return mbs_v3_dot(wn, dv) + mbs_v3_dot(g.n, x);
}

static void plane_forces_at(const mbs_con_ctx* c, const double n_B1[3], const double p2[3],
                            double lam, double* F) {
  plane_geom g;
  plane_geometry(c, n_B1, p2, &g);
  add_point_force(F, c->d->body2, g.s2, g.n, lam);
  add_point_force(F, c->d->body1, g.rC, g.n, -lam);
}

static void pip_perr(const mbs_con_ctx* c, double* e) {
  e[0] = plane_perr_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2);
}
static void pip_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)u;
  e[0] = plane_verr_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2, V);
}
static void pip_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)udot;
  e[0] = plane_aerr_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2, A);
}
static void pip_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)f;
  plane_forces_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2, lam[0], F);
}

//---------------------------------- point on line: two planes through the line -----------------

static void pol_perr(const mbs_con_ctx* c, double* e) {
  e[0] = plane_perr_at(c, c->cc + MBS_CC_X1, c->p + MBS_CP_P2);
  e[1] = plane_perr_at(c, c->cc + MBS_CC_Y1, c->p + MBS_CP_P2);
}
static void pol_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)u;
  e[0] = plane_verr_at(c, c->cc + MBS_CC_X1, c->p + MBS_CP_P2, V);
  e[1] = plane_verr_at(c, c->cc + MBS_CC_Y1, c->p + MBS_CP_P2, V);
}
static void pol_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)udot;
  e[0] = plane_aerr_at(c, c->cc + MBS_CC_X1, c->p + MBS_CP_P2, A);
  e[1] = plane_aerr_at(c, c->cc + MBS_CC_Y1, c->p + MBS_CP_P2, A);
}
static void pol_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)f;
  plane_forces_at(c, c->cc + MBS_CC_X1, c->p + MBS_CP_P2, lam[0], F);
  plane_forces_at(c, c->cc + MBS_CC_Y1, c->p + MBS_CP_P2, lam[1], F);
}

//---------------------------------- coordinate constraints -------------------------------------
// locked: q - value; prescribed: q - f(t); coupler: q_d - f(q_i); constant speed: u - value.
// Their forces are generalized forces: lam on u (coupler: lam on u_d, -lam f'(q_i) on u_i).

static void locked_perr(const mbs_con_ctx* c, double* e) {
  e[0] = c->st->q[c->d->qd] - c->p[MBS_CP_VALUE];
}
static void coord_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)V;
  e[0] = u[c->d->ud];
}
static void coord_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)A;
  e[0] = udot[c->d->ud];
}
static void coord_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)F;
  f[c->d->ud] += lam[0];
}

static void prescribed_eval(const mbs_con_ctx* c, double d[3]) {
  mbs_system_eval_function(c->sys, c->st, c->d->function, c->st->vars[0], d);
}
static void prescribed_perr(const mbs_con_ctx* c, double* e) {
  double d[3];
  prescribed_eval(c, d);
  e[0] = c->st->q[c->d->qd] - d[0];
}
static void prescribed_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)V;
  double d[3];
  prescribed_eval(c, d);
  e[0] = u[c->d->ud] - d[1];
}
static void prescribed_aerr(const mbs_con_ctx* c, const double* A, const double* udot,
                            double* e) {
  (void)A;
  double d[3];
  prescribed_eval(c, d);
  e[0] = udot[c->d->ud] - d[2];
}

static void coupler_eval(const mbs_con_ctx* c, double d[3]) {
  mbs_system_eval_function(c->sys, c->st, c->d->function, c->st->q[c->d->qi], d);
}
static void coupler_perr(const mbs_con_ctx* c, double* e) {
  double d[3];
  coupler_eval(c, d);
  e[0] = c->st->q[c->d->qd] - d[0];
}
static void coupler_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)V;
  double d[3];
  coupler_eval(c, d);
  e[0] = u[c->d->ud] - d[1] * u[c->d->ui];
}
static void coupler_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)A;
  double d[3];
  coupler_eval(c, d);
  const double ui = c->st->u[c->d->ui];
  e[0] = udot[c->d->ud] - d[1] * udot[c->d->ui] - d[2] * ui * ui;
}
static void coupler_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)F;
  double d[3];
  coupler_eval(c, d);
  f[c->d->ud] += lam[0];
  f[c->d->ui] -= lam[0] * d[1];
}

static void speed_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)V;
  e[0] = u[c->d->ud] - c->p[MBS_CP_VALUE];
}

static void accel_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)A;
  e[0] = udot[c->d->ud] - c->p[MBS_CP_VALUE];
}

//---------------------------------- rolling sphere on a plane ----------------------------------
// Plane of body 1 (point O = station p1, unit normal n fixed in body 1, in-plane unit vectors
// t1, t2); sphere of radius R on body 2 with center C (station p2); contact point P = C - R n.
// 1 holonomic: n . (C - O) - R (the point-in-plane equation for C, shifted by R);
// 2 nonholonomic no-slip: t_k . (v2(P) - v1(P)) with v_b(P) the velocity of body b's material
//   point at P; its derivative, with P' = v2(C) - R (w1 x n) and t_k' = w1 x t_k:
//   (w1 x t_k) . dv + t_k . (a_o2 + b2 x r2 + w2 x (P' - v_o2) - a_o1 - b1 x r1
//   - w1 x (P' - v_o1)), r_b = P - o_b;
// 1 nonholonomic no-twist: n . (w2 - w1), derivative (w1 x n) . (w2 - w1) + n . (b2 - b1).
// Forces: the plane force for the contact; lam_k t_k at P on body 2 and -lam_k t_k at P on
// body 1; torque lam n on body 2 and -lam n on body 1.

typedef struct roll_geom {
  double n[3], t[2][3];
  double P[3], r1[3], r2[3];
} roll_geom;

static void roll_geometry(const mbs_con_ctx* c, roll_geom* g) {
  const int b1 = c->d->body1, b2 = c->d->body2;
  const double* R1 = body_R(c, b1);
  mbs_m33_vec(g->n, R1, c->cc + MBS_CC_A1);
  mbs_m33_vec(g->t[0], R1, c->cc + MBS_CC_X1);
  mbs_m33_vec(g->t[1], R1, c->cc + MBS_CC_Y1);
  double s2[3], C[3];
  station_offset(c, b2, c->p + MBS_CP_P2, s2);
  mbs_v3_add(C, body_o(c, b2), s2);
  for (int i = 0; i < 3; i++) g->P[i] = C[i] - c->p[MBS_CP_VALUE] * g->n[i];
  mbs_v3_sub(g->r1, g->P, body_o(c, b1));
  mbs_v3_sub(g->r2, g->P, body_o(c, b2));
}

static void roll_perr(const mbs_con_ctx* c, double* e) {
  e[0] = plane_perr_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2) - c->p[MBS_CP_VALUE];
}

static void roll_verr(const mbs_con_ctx* c, const double* V, const double* u, double* e) {
  (void)u;
  const int b1 = c->d->body1, b2 = c->d->body2;
  e[0] = plane_verr_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2, V);
  roll_geom g;
  roll_geometry(c, &g);
  double v1[3], v2[3], dw[3];
  point_vel(V, b1, g.r1, v1);
  point_vel(V, b2, g.r2, v2);
  mbs_v3_sub(v2, v2, v1);
  e[1] = mbs_v3_dot(g.t[0], v2);
  e[2] = mbs_v3_dot(g.t[1], v2);
  mbs_v3_sub(dw, V + 6 * b2, V + 6 * b1);
  e[3] = mbs_v3_dot(g.n, dw);
}

static void roll_aerr(const mbs_con_ctx* c, const double* A, const double* udot, double* e) {
  (void)udot;
  const int b1 = c->d->body1, b2 = c->d->body2;
  e[0] = plane_aerr_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2, A);
  roll_geom g;
  roll_geometry(c, &g);
  const double* V = c->st->V_GB;
  const double* w1 = body_w(c, b1);
  const double* w2 = body_w(c, b2);
  // P' = v2(C) - R (w1 x n)
  double s2[3], vC[3], Pd[3], wn[3];
  station_offset(c, b2, c->p + MBS_CP_P2, s2);
  point_vel(V, b2, s2, vC);
  mbs_v3_cross(wn, w1, g.n);
  for (int i = 0; i < 3; i++) Pd[i] = vC[i] - c->p[MBS_CP_VALUE] * wn[i];
  // relative velocity and acceleration of the material points at P
  double v1[3], v2[3], dv[3], acc[2][3];
  point_vel(V, b1, g.r1, v1);
  point_vel(V, b2, g.r2, v2);
  mbs_v3_sub(dv, v2, v1);
  for (int k = 0; k < 2; k++) {
    const int b = k == 0 ? b1 : b2;
    const double* r = k == 0 ? g.r1 : g.r2;
    const double* w = k == 0 ? w1 : w2;
    double t[3], x[3];
    mbs_v3_cross(acc[k], A + 6 * b, r);
    mbs_v3_add(acc[k], acc[k], A + 6 * b + 3);
    mbs_v3_sub(x, Pd, V + 6 * b + 3);
    mbs_v3_cross(t, w, x);
    mbs_v3_add(acc[k], acc[k], t);
  }
  double da[3];
  mbs_v3_sub(da, acc[1], acc[0]);
  for (int k = 0; k < 2; k++) {
    double wt[3];
    mbs_v3_cross(wt, w1, g.t[k]);
    e[1 + k] = mbs_v3_dot(wt, dv) + mbs_v3_dot(g.t[k], da);
  }
  double dw[3], db[3];
  mbs_v3_sub(dw, w2, w1);
  mbs_v3_sub(db, A + 6 * b2, A + 6 * b1);
  e[3] = mbs_v3_dot(wn, dw) + mbs_v3_dot(g.n, db);
}

static void roll_forces(const mbs_con_ctx* c, const double* lam, double* F, double* f) {
  (void)f;
  const int b1 = c->d->body1, b2 = c->d->body2;
  plane_forces_at(c, c->cc + MBS_CC_A1, c->p + MBS_CP_P2, lam[0], F);
  roll_geom g;
  roll_geometry(c, &g);
  for (int k = 0; k < 2; k++) {
    add_point_force(F, b2, g.r2, g.t[k], lam[1 + k]);
    add_point_force(F, b1, g.r1, g.t[k], -lam[1 + k]);
  }
  add_torque(F, b2, g.n, lam[3]);
  add_torque(F, b1, g.n, -lam[3]);
}

//---------------------------------- table ------------------------------------------------------

static const mbs_constraint_ops con_table[MBS_CON_COUNT] = {
    [MBS_CON_BALL] = {"ball", 3, 0, 0, ball_perr, ball_verr, ball_aerr, ball_forces},
    [MBS_CON_WELD] = {"weld", 6, 0, 0, weld_perr, weld_verr, weld_aerr, weld_forces},
    [MBS_CON_ROD] = {"rod", 1, 0, 0, rod_perr, rod_verr, rod_aerr, rod_forces},
    [MBS_CON_POINT_IN_PLANE] = {"point_in_plane", 1, 0, 0, pip_perr, pip_verr, pip_aerr,
                                pip_forces},
    [MBS_CON_POINT_ON_LINE] = {"point_on_line", 2, 0, 0, pol_perr, pol_verr, pol_aerr,
                               pol_forces},
    [MBS_CON_CONSTANT_ANGLE] = {"constant_angle", 1, 0, 0, cangle_perr, cangle_verr, cangle_aerr,
                                cangle_forces},
    [MBS_CON_CONSTANT_ORIENTATION] = {"constant_orientation", 3, 0, 0, orient_perr, orient_verr,
                                      orient_aerr, orient_forces},
    [MBS_CON_COORDINATE_COUPLER] = {"coordinate_coupler", 1, 0, 0, coupler_perr, coupler_verr,
                                    coupler_aerr, coupler_forces},
    [MBS_CON_LOCKED_COORDINATE] = {"locked_coordinate", 1, 0, 0, locked_perr, coord_verr,
                                   coord_aerr, coord_forces},
    [MBS_CON_PRESCRIBED_MOTION] = {"prescribed_motion", 1, 0, 0, prescribed_perr,
                                   prescribed_verr, prescribed_aerr, coord_forces},
    [MBS_CON_CONSTANT_SPEED] = {"constant_speed", 0, 1, 0, NULL, speed_verr, coord_aerr,
                                coord_forces},
    [MBS_CON_ROLLING] = {"rolling", 1, 3, 0, roll_perr, roll_verr, roll_aerr, roll_forces},
    [MBS_CON_CONSTANT_ACCELERATION] = {"constant_acceleration", 0, 0, 1, NULL, NULL, accel_aerr,
                                       coord_forces},
};

const mbs_constraint_ops* mbs_constraint_ops_of(mbs_constraint_type type) {
  return &con_table[type];
}

const char* mbs_constraint_type_name(mbs_constraint_type type) {
  return (int)type >= 0 && type < MBS_CON_COUNT ? con_table[type].name : NULL;
}
