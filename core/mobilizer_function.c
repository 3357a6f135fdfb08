// Function-based mobilizer (OpenSim CustomJoint, Simbody MobilizedBody::FunctionBased).
//
// Up to 6 coordinates q drive six spatial axes through functions: rotation angles
// th_i = f_i(q_ci) about axes a_i applied in sequence (body-fixed), and translations
// s_i = g_i(q_ci) along axes t_i of F:
//   R_FM = R(a0, th0) R(a1, th1) R(a2, th2),   p_FM = s3 t3 + s4 t4 + s5 t5.
// With k_i the rotation axes in F (k0 = a0, k1 = R(a0, th0) a1, k2 = R(a0, th0) R(a1, th1) a2):
//   w_FM = sum k_i th_i',  th_i' = f_i'(q) u_ci  ->  H_w column j = sum_{ci = j} k_i f_i'
//   v_FM = sum t_i s_i'                           ->  H_v column j = sum_{ci = j} t_i g_i'
//   HDot u = [ (k0 th0') x k1 th1' + (k0 th0' + k1 th1') x k2 th2' + sum k_i f_i'' u_ci^2 ;
//              sum t_i g_i'' u_ci^2 ],   and q' = u.
#include <string.h>

#include "model_impl.h"

// pool layout: values and derivatives of the 6 functions, then the rotation axes k_i in F
enum { POOL_F = 0, POOL_K = 18, POOL_SIZE = 27 };

static const mbs_function_mobilizer* fmob_of(const mbs_mob_ctx* c) {
  return &c->sys->fmob[c->sys->body_fmob[c->body]];
}

static const mbs_spatial_axis* axis_of(const mbs_function_mobilizer* f, int i) {
  return i < 3 ? &f->rotation[i] : &f->translation[i - 3];
}

static void function_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                              double* H) {
  const mbs_function_mobilizer* f = fmob_of(c);
  double* fv = c->pool + POOL_F;
  double* k = c->pool + POOL_K;
  for (int i = 0; i < 6; i++) {
    const mbs_spatial_axis* a = axis_of(f, i);
    const double x = a->coord >= 0 ? q[a->coord] : 0.0;
    mbs_system_eval_function(c->sys, c->st, a->function, x, fv + 3 * i);
    if (a->coord < 0) fv[3 * i + 1] = fv[3 * i + 2] = 0;
  }
  // rotations in sequence
  double R0[9], R1[9], R01[9], R2[9];
  mbs_rot_axis_angle(R0, f->rotation[0].axis, fv[0]);
  mbs_rot_axis_angle(R1, f->rotation[1].axis, fv[3]);
  mbs_rot_axis_angle(R2, f->rotation[2].axis, fv[6]);
  mbs_m33_mul(R01, R0, R1);
  mbs_m33_mul(R, R01, R2);
  mbs_v3_copy(k, f->rotation[0].axis);
  mbs_m33_vec(k + 3, R0, f->rotation[1].axis);
  mbs_m33_vec(k + 6, R01, f->rotation[2].axis);
  mbs_v3_zero(p);
  for (int i = 0; i < 3; i++) mbs_v3_axpy(p, fv[3 * (3 + i)], f->translation[i].axis);
  // hinge matrix
  memset(H, 0, 6 * (size_t)c->nu * sizeof(double));
  for (int i = 0; i < 3; i++) {
    const int j = f->rotation[i].coord;
    if (j >= 0) mbs_v3_axpy(H + 6 * j, fv[3 * i + 1], k + 3 * i);
    const int jt = f->translation[i].coord;
    if (jt >= 0) mbs_v3_axpy(H + 6 * jt + 3, fv[3 * (3 + i) + 1], f->translation[i].axis);
  }
}

static void function_hdot_u(const mbs_mob_ctx* c, const double* q, const double* u,
                            double HDu[6]) {
  (void)q;
  const mbs_function_mobilizer* f = fmob_of(c);
  const double* fv = c->pool + POOL_F;
  const double* k = c->pool + POOL_K;
  double thd[6], uc2[6];  // axis rates and squared driving speeds
  for (int i = 0; i < 6; i++) {
    const int j = axis_of(f, i)->coord;
    const double uj = j >= 0 ? u[j] : 0.0;
    thd[i] = fv[3 * i + 1] * uj;
    uc2[i] = uj * uj;
  }
  double w0[3], w1[3], t[3];
  mbs_v3_scale(w0, k, thd[0]);
  mbs_v3_copy(w1, w0);
  mbs_v3_axpy(w1, thd[1], k + 3);
  mbs_sv_zero(HDu);
  mbs_v3_cross(t, w0, k + 3);
  mbs_v3_axpy(HDu, thd[1], t);
  mbs_v3_cross(t, w1, k + 6);
  mbs_v3_axpy(HDu, thd[2], t);
  for (int i = 0; i < 3; i++) {
    mbs_v3_axpy(HDu, fv[3 * i + 2] * uc2[i], k + 3 * i);
    mbs_v3_axpy(HDu + 3, fv[3 * (3 + i) + 2] * uc2[3 + i], f->translation[i].axis);
  }
}

const mbs_mobilizer_ops mbs_mob_function = {"function", -1, -1, POOL_SIZE, -1, function_position,
                                            function_hdot_u, NULL, NULL, NULL, NULL};
