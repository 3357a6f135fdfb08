// The batched forward-dynamics kernel, written once over vectors of W doubles (GCC vector
// extensions) and compiled per instruction set: batch_avx512.c (W = 8), batch_avx2.c (W = 4),
// batch_portable.c (W = 2). Each defines W and BATCH_KERNEL (the entry point's name) and then
// includes this file. Lane k of every vector belongs to State k of the group being evaluated.
//
// The recursions are the one-at-a-time path's, operation for operation and in the same order
// (core/realize.c for Position and Velocity, including its pin fast path; core/forces.c for the
// basic force elements; core/tree_dynamics.c for the articulated-body method), and fused
// multiply-adds are off, so every lane reproduces mbs_realize_acceleration bit for bit. A change
// in the order of operations there must be mirrored here: otherwise the two paths still agree to
// rounding, but on tests/core/random_tree.h trees rounding alone moves u' by up to ~1e-11
// relative, above the 1e-12 that tests/core/test_batch.c holds them to.
//   outward: X_GB, l, H, the spatial inertia in G, V_GB, A_c, the gyroscopic force, the leading
//            gravity elements, q' (and the articulated inertia starts as the rigid one); the
//            lanes' q, u and applied forces are transposed into the workspace on the way
//   force elements in the System's order (body forces, two-point springs and dampers, mobility
//            forces, springs and dampers, later gravity elements)
//   inward:  articulated inertias P, D^-1, G (shifted to the parent's origin), z and e
//   outward: u' and the spatial accelerations A
#include <math.h>
#include <string.h>

#include "batch_impl.h"

// no fused multiply-adds: the one-at-a-time path (built for the baseline instruction set) has
// none, and with the same operations in the same order the lanes reproduce its results
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif

#ifndef W
#error "define W (lanes per vector) before including batch_kernel.h"
#endif

typedef double vd __attribute__((vector_size(8 * W)));
typedef long vl __attribute__((vector_size(8 * W)));  // lane masks (-1 true, 0 false)
typedef unsigned long vu __attribute__((vector_size(8 * W)));  // bits of doubles

#define INL static inline __attribute__((always_inline))

INL vd vb(double x) { return x - (vd){}; }  // broadcast (x - 0 is x, -0 included)
INL vd vsel(vl m, vd a, vd b) { return (vd)(((vl)a & m) | ((vl)b & ~m)); }
INL int any_lane(vl m) {
  long acc = 0;
  for (int k = 0; k < W; k++) acc |= (long)m[k];
  return acc != 0;
}
INL vd vsqrt(vd a) {
  vd r;
  for (int k = 0; k < W; k++) r[k] = __builtin_sqrt(a[k]);
  return r;
}

//---------------------------------- sin and cos ------------------------------------------------
// The vector form of core/sincos.c: reduction by multiples of pi/2 with a three-part constant,
// the same minimax polynomials on [-pi/4, pi/4]; the quadrant comes from the low bits of the
// rounded multiple. Lanes with |x| >= 1647099 (or not finite) take mbs_sincos.

INL void vsincos(vd x, vd* s, vd* c) {
  const double P1 = 1.57079632673412561417e+00, P2 = 6.07710050630396597660e-11,
               P3 = 2.02226624871116645580e-21, TWO_OVER_PI = 6.36619772367581382433e-01,
               ROUND = 6755399441055744.0;
  const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
               S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
               S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
               C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
               C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  const vd t = x * TWO_OVER_PI + ROUND;
  const vd k = t - ROUND;
  const vd r = ((x - k * P1) - k * P2) - k * P3;
  const vd z = r * r;
  const vd ps = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
  const vd sr = r + (r * z) * (S1 + z * ps);
  const vd pc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
  const vd hz = 0.5 * z;
  const vd w = 1.0 - hz;
  const vd cr = w + (((1.0 - w) - hz) + z * pc);
  const vu quad = (vu)t;  // the low bits of t's mantissa hold k (mod 4)
  const vl swap = (vl)-(quad & 1);
  const vu sign_s = (quad & 2) << 62, sign_c = ((quad + 1) & 2) << 62;
  *s = (vd)((vu)vsel(swap, cr, sr) ^ sign_s);
  *c = (vd)((vu)vsel(swap, sr, cr) ^ sign_c);
  const vd ax = (vd)((vu)x & 0x7fffffffffffffffUL);
  const vl big = ~(ax < 1647099.0);
  if (__builtin_expect(any_lane(big), 0))
    for (int i = 0; i < W; i++)
      if (big[i]) {
        double si, ci;
        mbs_sincos(x[i], &si, &ci);
        (*s)[i] = si;
        (*c)[i] = ci;
      }
}

//---------------------------------- 3-vectors and 3x3 matrices --------------------------------

INL void v3_cross(vd r[3], const vd a[3], const vd b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
INL void v3_cross_add(vd r[3], const vd a[3], const vd b[3]) {
  r[0] += a[1] * b[2] - a[2] * b[1];
  r[1] += a[2] * b[0] - a[0] * b[2];
  r[2] += a[0] * b[1] - a[1] * b[0];
}
INL void m33_mul(vd r[9], const vd a[9], const vd b[9]) {
  for (int i = 0; i < 3; i++) {
    const vd a0 = a[3 * i], a1 = a[3 * i + 1], a2 = a[3 * i + 2];
    r[3 * i] = a0 * b[0] + a1 * b[3] + a2 * b[6];
    r[3 * i + 1] = a0 * b[1] + a1 * b[4] + a2 * b[7];
    r[3 * i + 2] = a0 * b[2] + a1 * b[5] + a2 * b[8];
  }
}
INL void m33_vec(vd r[3], const vd a[9], const vd v[3]) {
  const vd x = v[0], y = v[1], z = v[2];
  r[0] = a[0] * x + a[1] * y + a[2] * z;
  r[1] = a[3] * x + a[4] * y + a[5] * z;
  r[2] = a[6] * x + a[7] * y + a[8] * z;
}
INL void m33_identity(vd r[9]) {
  for (int i = 0; i < 9; i++) r[i] = vb(i % 4 == 0 ? 1.0 : 0.0);
}
// R = Rx(a0) Ry(a1) Rz(a2) (mbs_rot_body_xyz), with the sines and cosines of a0 and a1
INL void rot_body_xyz(vd R[9], const vd a0, const vd a1, const vd a2, vd* s0o, vd* c0o, vd* s1o,
                      vd* c1o) {
  vd s0, c0, s1, c1, s2, c2;
  vsincos(a0, &s0, &c0);
  vsincos(a1, &s1, &c1);
  vsincos(a2, &s2, &c2);
  R[0] = c1 * c2;
  R[1] = -c1 * s2;
  R[2] = s1;
  R[3] = c0 * s2 + s0 * s1 * c2;
  R[4] = c0 * c2 - s0 * s1 * s2;
  R[5] = -s0 * c1;
  R[6] = s0 * s2 - c0 * s1 * c2;
  R[7] = s0 * c2 + c0 * s1 * s2;
  R[8] = c0 * c1;
  *s0o = s0;
  *c0o = c0;
  *s1o = s1;
  *c1o = c1;
}
INL void quat_to_rot(vd R[9], const vd* qin) {
  const vd q0 = qin[0], q1 = qin[1], q2 = qin[2], q3 = qin[3];
  const vd n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3;
  const vd s = vsel(n2 > 0, 2.0 / n2, vb(0));
  R[0] = 1 - s * (q2 * q2 + q3 * q3);
  R[1] = s * (q1 * q2 - q0 * q3);
  R[2] = s * (q1 * q3 + q0 * q2);
  R[3] = s * (q1 * q2 + q0 * q3);
  R[4] = 1 - s * (q1 * q1 + q3 * q3);
  R[5] = s * (q2 * q3 - q0 * q1);
  R[6] = s * (q1 * q3 - q0 * q2);
  R[7] = s * (q2 * q3 + q0 * q1);
  R[8] = 1 - s * (q1 * q1 + q2 * q2);
}
// q' = 1/2 (0, w) * q (mbs_quat_qdot)
INL void quat_qdot(vd* qd, const vd* q, const vd* w) {
  qd[0] = -0.5 * (w[0] * q[1] + w[1] * q[2] + w[2] * q[3]);
  qd[1] = 0.5 * (q[0] * w[0] + w[1] * q[3] - w[2] * q[2]);
  qd[2] = 0.5 * (q[0] * w[1] + w[2] * q[1] - w[0] * q[3]);
  qd[3] = 0.5 * (q[0] * w[2] + w[0] * q[2] - w[1] * q[1]);
}
// X-Y-Z angle rates from w: solve E(a) a' = w (mbs_xyz_qdot)
INL void xyz_qdot(vd* ad, vd s0, vd c0, vd s1, vd c1, const vd* w) {
  ad[1] = c0 * w[1] + s0 * w[2];
  ad[2] = (-s0 * w[1] + c0 * w[2]) / c1;
  ad[0] = w[0] - s1 * ad[2];
}

//---------------------------------- spatial vectors and packed inertias ------------------------

INL vd dot6(const vd* a, const vd* b) {
  return ((a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])) +
         (a[4] * b[4] + a[5] * b[5]);
}
// r = phi(l)^T V
INL void shift_motion(vd* r, const vd* V, const vd* l) {
  r[0] = V[0];
  r[1] = V[1];
  r[2] = V[2];
  r[3] = V[3] + V[1] * l[2] - V[2] * l[1];
  r[4] = V[4] + V[2] * l[0] - V[0] * l[2];
  r[5] = V[5] + V[0] * l[1] - V[1] * l[0];
}
// r = phi(l) F
INL void shift_force(vd* r, const vd* F, const vd* l) {
  r[0] = F[0] + l[1] * F[5] - l[2] * F[4];
  r[1] = F[1] + l[2] * F[3] - l[0] * F[5];
  r[2] = F[2] + l[0] * F[4] - l[1] * F[3];
  r[3] = F[3];
  r[4] = F[4];
  r[5] = F[5];
}
INL void shift_force_add(vd* r, const vd* F, const vd* l) {
  r[0] += F[0] + l[1] * F[5] - l[2] * F[4];
  r[1] += F[1] + l[2] * F[3] - l[0] * F[5];
  r[2] += F[2] + l[0] * F[4] - l[1] * F[3];
  r[3] += F[3];
  r[4] += F[4];
  r[5] += F[5];
}
// r = P a (mbs_sym6_mul)
INL void sym6_mul(vd* r, const vd* P, const vd* a) {
  const vd* J = P;
  const vd* F = P + MBS_SYM6_F;
  const vd* M = P + MBS_SYM6_M;
  const vd a0 = a[0], a1 = a[1], a2 = a[2], b0 = a[3], b1 = a[4], b2 = a[5];
  r[0] = (J[0] * a0 + J[1] * a1 + J[2] * a2) + (F[0] * b0 + F[1] * b1 + F[2] * b2);
  r[1] = (J[1] * a0 + J[3] * a1 + J[4] * a2) + (F[3] * b0 + F[4] * b1 + F[5] * b2);
  r[2] = (J[2] * a0 + J[4] * a1 + J[5] * a2) + (F[6] * b0 + F[7] * b1 + F[8] * b2);
  r[3] = (F[0] * a0 + F[3] * a1 + F[6] * a2) + (M[0] * b0 + M[1] * b1 + M[2] * b2);
  r[4] = (F[1] * a0 + F[4] * a1 + F[7] * a2) + (M[1] * b0 + M[3] * b1 + M[4] * b2);
  r[5] = (F[2] * a0 + F[5] * a1 + F[8] * a2) + (M[2] * b0 + M[4] * b1 + M[5] * b2);
}
// r += phi(l) P phi(l)^T, and with g (else NULL) also r -= g q^T (mbs_sym6_shift_add)
INL void sym6_shift_add(vd* r, const vd* P, const vd* l, const vd* g, const vd* q) {
  const vd l0 = l[0], l1 = l[1], l2 = l[2];
  const vd* J = P;
  const vd* F = P + MBS_SYM6_F;
  const vd* M = P + MBS_SYM6_M;
  const vd m00 = M[0], m01 = M[1], m02 = M[2], m11 = M[3], m12 = M[4], m22 = M[5];
  vd Fp[9];
  Fp[0] = F[0] + (l1 * m02 - l2 * m01);
  Fp[1] = F[1] + (l1 * m12 - l2 * m11);
  Fp[2] = F[2] + (l1 * m22 - l2 * m12);
  Fp[3] = F[3] + (l2 * m00 - l0 * m02);
  Fp[4] = F[4] + (l2 * m01 - l0 * m12);
  Fp[5] = F[5] + (l2 * m02 - l0 * m22);
  Fp[6] = F[6] + (l0 * m01 - l1 * m00);
  Fp[7] = F[7] + (l0 * m11 - l1 * m01);
  Fp[8] = F[8] + (l0 * m12 - l1 * m02);
  vd LF[3][3], FL[3][3];
  for (int k = 0; k < 3; k++) {
    const vd f0 = F[3 * k], f1 = F[3 * k + 1], f2 = F[3 * k + 2];
    LF[0][k] = l1 * f2 - l2 * f1;
    LF[1][k] = l2 * f0 - l0 * f2;
    LF[2][k] = l0 * f1 - l1 * f0;
  }
  for (int i = 0; i < 3; i++) {
    const vd p0 = Fp[3 * i], p1 = Fp[3 * i + 1], p2 = Fp[3 * i + 2];
    FL[i][0] = l2 * p1 - l1 * p2;
    FL[i][1] = l0 * p2 - l2 * p0;
    FL[i][2] = l1 * p0 - l0 * p1;
  }
  r[0] += J[0] + LF[0][0] - FL[0][0];
  r[1] += J[1] + LF[0][1] - FL[0][1];
  r[2] += J[2] + LF[0][2] - FL[0][2];
  r[3] += J[3] + LF[1][1] - FL[1][1];
  r[4] += J[4] + LF[1][2] - FL[1][2];
  r[5] += J[5] + LF[2][2] - FL[2][2];
  for (int i = 0; i < 9; i++) r[MBS_SYM6_F + i] += Fp[i];
  for (int i = 0; i < 6; i++) r[MBS_SYM6_M + i] += M[i];
  if (g) {
    vd* rJ = r;
    vd* rF = r + MBS_SYM6_F;
    vd* rM = r + MBS_SYM6_M;
    rJ[0] -= g[0] * q[0]; rJ[1] -= g[0] * q[1]; rJ[2] -= g[0] * q[2];
    rJ[3] -= g[1] * q[1]; rJ[4] -= g[1] * q[2]; rJ[5] -= g[2] * q[2];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) rF[3 * i + j] -= g[i] * q[3 + j];
    rM[0] -= g[3] * q[3]; rM[1] -= g[3] * q[4]; rM[2] -= g[3] * q[5];
    rM[3] -= g[4] * q[4]; rM[4] -= g[4] * q[5]; rM[5] -= g[5] * q[5];
  }
}

//---------------------------------- lanes ------------------------------------------------------

// the group: W States (a partial group repeats its last State), their variable blocks
// ([t | q | u | z | param | f_applied | F_applied], offsets in the System), and the lane whose
// Instance data stands for all lanes with its parameters (not one whose Instance stage failed:
// its cache may be partly stale)
typedef struct group {
  mbs_state* st[W];
  const double* var[W];
  int ref;
} group;

// lane k = parameter adr of State k
INL vd lane_param(const mbs_system* sys, const group* g, int adr) {
  vd r;
  for (int k = 0; k < W; k++) r[k] = g->var[k][sys->var_param + adr];
  return r;
}

// lanes of parameters adr .. adr + 2
INL void lane_param3(const mbs_system* sys, const group* g, int adr, vd r[3]) {
  for (int i = 0; i < 3; i++) r[i] = lane_param(sys, g, adr + i);
}

// do all lanes hold body b's parameters of the reference lane, bit for bit?
typedef long __attribute__((may_alias)) alias_long;
INL int body_uniform(const mbs_batch* bt, const mbs_system* sys, const group* g, int b) {
  const size_t adr = sys->var_param + (size_t)sys->body_param_adr[b];
  const int extra = bt->body_nparam[b] - MBS_BP_MOB;  // the mobilizer's (screw pitch)
  const alias_long* p0 = (const alias_long*)(g->var[g->ref] + adr);
  long diff = 0;
  for (int k = 0; k < W; k++) {
    const alias_long* p = (const alias_long*)(g->var[k] + adr);
    for (int i = 0; i < MBS_BP_MOB; i++) diff |= p[i] ^ p0[i];
    for (int i = MBS_BP_MOB; i < MBS_BP_MOB + extra; i++) diff |= p[i] ^ p0[i];
  }
  return diff == 0;
}

// Body b's Instance-stage data of each lane's State: X_PF, X_MB and the spatial inertia in B
// (mass, mass center, inertia about B's origin), broadcast when every lane has the same
typedef struct body_instance {
  vd RPF[9], pPF[3], RMB[9], pMB[3], m, c[3], Io[9];
} body_instance;

INL void load_instance(const mbs_batch* bt, const mbs_system* sys, const group* g, int b,
                          body_instance* in) {
  if (body_uniform(bt, sys, g, b)) {
    const mbs_state* s = g->st[g->ref];
    const mbs_transform* pf = &s->X_PF[b];
    const mbs_transform* mb = &s->X_MB[b];
    const mbs_rigid_inertia* M = &s->M_B[b];
    for (int i = 0; i < 9; i++) {
      in->RPF[i] = vb(pf->R[i]);
      in->RMB[i] = vb(mb->R[i]);
      in->Io[i] = vb(M->Io[i]);
    }
    for (int i = 0; i < 3; i++) {
      in->pPF[i] = vb(pf->p[i]);
      in->pMB[i] = vb(mb->p[i]);
      in->c[i] = vb(M->c[i]);
    }
    in->m = vb(M->m);
    return;
  }
  // lane by lane, through the doubles of the vectors (vector types alias their elements)
  double* RPF = (double*)in->RPF;
  double* RMB = (double*)in->RMB;
  double* Io = (double*)in->Io;
  double* pPF = (double*)in->pPF;
  double* pMB = (double*)in->pMB;
  double* c = (double*)in->c;
  double* m = (double*)&in->m;
  for (int k = 0; k < W; k++) {
    const mbs_state* s = g->st[k];
    const mbs_transform* pf = &s->X_PF[b];
    const mbs_transform* mb = &s->X_MB[b];
    const mbs_rigid_inertia* M = &s->M_B[b];
    for (int i = 0; i < 9; i++) {
      RPF[i * W + k] = pf->R[i];
      RMB[i * W + k] = mb->R[i];
      Io[i * W + k] = M->Io[i];
    }
    for (int i = 0; i < 3; i++) {
      pPF[i * W + k] = pf->p[i];
      pMB[i * W + k] = mb->p[i];
      c[i * W + k] = M->c[i];
    }
    m[k] = M->m;
  }
}

// Ask for body b's data of every lane ahead of use: the lanes' States are far apart in memory
// and read a little at a time, more streams than the hardware prefetchers follow
#define MBS_BATCH_PREFETCH 3
INL void prefetch_body(const mbs_system* sys, const group* g, int b) {
  const size_t adr = sys->var_param + (size_t)sys->body_param_adr[b];
  const size_t fadr = sys->var_Fapp + 6 * (size_t)b + 5;
  for (int k = 0; k < W; k++) {
    const double* v = g->var[k];
    __builtin_prefetch(v + adr);
    __builtin_prefetch(v + adr + 8);
    __builtin_prefetch(v + adr + 16);
    __builtin_prefetch(v + adr + MBS_BP_MOB);
    __builtin_prefetch(v + fadr);
  }
  const mbs_state* s0 = g->st[g->ref];
  __builtin_prefetch(&s0->X_PF[b]);
  __builtin_prefetch(&s0->X_PF[b].p[2]);
  __builtin_prefetch(&s0->X_MB[b]);
  __builtin_prefetch(&s0->X_MB[b].p[2]);
  __builtin_prefetch(&s0->M_B[b]);
  __builtin_prefetch(&s0->M_B[b].Io[8]);
}

//---------------------------------- workspace --------------------------------------------------

typedef struct wsp {
  vd* body;   // nbody x MBS_BW_SIZE
  vd* speed;  // nu x MBS_SW_SIZE
  vd* DI;     // ndi
  vd* Q;      // nq
  vd* QD;     // nq
} wsp;

INL vd* BW(const wsp* w, int b) { return w->body + (size_t)MBS_BW_SIZE * b; }
INL vd* SW(const wsp* w, int j) { return w->speed + (size_t)MBS_SW_SIZE * j; }

//---------------------------------- the outward pass -------------------------------------------

// mobilizer of body b: R_FM, p_FM and the hinge columns in F (Hf, nu of them, zero-filled) from
// q; HDot_FM u into hdu (returns 0 when it is zero); q' into qd
static int mobilizer(const mbs_system* sys, const group* g, int b, const vd* q, const vd* u,
                     vd RFM[9], vd pFM[3], vd Hf[6][6], vd hdu[6], vd* qd) {
  const int nu = sys->body_nu[b];
  const vd zero = vb(0), one = vb(1);
  for (int j = 0; j < nu; j++)
    for (int i = 0; i < 6; i++) Hf[j][i] = zero;
  for (int i = 0; i < 3; i++) pFM[i] = zero;
  int has_hdu = 0;
  vd s0, c0, s1, c1;
  switch (sys->body_mob[b]) {
    case MBS_MOB_WELD:
      m33_identity(RFM);
      break;
    case MBS_MOB_SLIDER:
      m33_identity(RFM);
      pFM[0] = q[0];
      Hf[0][3] = one;
      qd[0] = u[0];
      break;
    case MBS_MOB_UNIVERSAL: {
      vsincos(q[0], &s0, &c0);
      vsincos(q[1], &s1, &c1);
      const vd Rx[9] = {one, zero, zero, zero, c0, -s0, zero, s0, c0};
      const vd Ry[9] = {c1, zero, s1, zero, one, zero, -s1, zero, c1};
      m33_mul(RFM, Rx, Ry);
      Hf[0][0] = one;
      Hf[1][1] = c0;
      Hf[1][2] = s0;
      for (int i = 0; i < 6; i++) hdu[i] = zero;
      hdu[1] = -s0 * u[0] * u[1];
      hdu[2] = c0 * u[0] * u[1];
      has_hdu = 1;
      qd[0] = u[0];
      qd[1] = u[1];
      break;
    }
    case MBS_MOB_PIN:
    case MBS_MOB_CYLINDER:
    case MBS_MOB_PLANAR:
    case MBS_MOB_SCREW: {
      vsincos(q[0], &s0, &c0);
      const vd Rz[9] = {c0, -s0, zero, s0, c0, zero, zero, zero, one};
      memcpy(RFM, Rz, sizeof(Rz));
      Hf[0][2] = one;
      const int t = sys->body_mob[b];
      if (t == MBS_MOB_CYLINDER) {
        pFM[2] = q[1];
        Hf[1][5] = one;
      } else if (t == MBS_MOB_PLANAR) {
        pFM[0] = q[1];
        pFM[1] = q[2];
        Hf[1][3] = one;
        Hf[2][4] = one;
      } else if (t == MBS_MOB_SCREW) {
        const vd pitch = lane_param(sys, g, sys->body_param_adr[b] + MBS_BP_MOB);
        pFM[2] = pitch * q[0];
        Hf[0][5] = pitch;
      }
      for (int j = 0; j < nu; j++) qd[j] = u[j];
      break;
    }
    case MBS_MOB_TRANSLATION:
      m33_identity(RFM);
      for (int i = 0; i < 3; i++) {
        pFM[i] = q[i];
        Hf[i][3 + i] = one;
        qd[i] = u[i];
      }
      break;
    case MBS_MOB_GIMBAL: {
      rot_body_xyz(RFM, q[0], q[1], q[2], &s0, &c0, &s1, &c1);
      const vd E[9] = {one, zero, s1, zero, c0, -s0 * c1, zero, s0, c0 * c1};
      for (int j = 0; j < 3; j++) {
        Hf[j][0] = E[j];
        Hf[j][1] = E[3 + j];
        Hf[j][2] = E[6 + j];
      }
      // E'(a, a') a' (xyz_edot_times)
      hdu[0] = c1 * u[1] * u[2];
      hdu[1] = -s0 * u[0] * u[1] + (-c0 * c1 * u[0] + s0 * s1 * u[1]) * u[2];
      hdu[2] = c0 * u[0] * u[1] + (-s0 * c1 * u[0] - c0 * s1 * u[1]) * u[2];
      hdu[3] = hdu[4] = hdu[5] = zero;
      has_hdu = 1;
      for (int j = 0; j < 3; j++) qd[j] = u[j];
      break;
    }
    case MBS_MOB_BALL:
    case MBS_MOB_FREE:
      quat_to_rot(RFM, q);
      for (int j = 0; j < nu; j++) Hf[j][j] = one;
      quat_qdot(qd, q, u);
      if (nu == 6)
        for (int i = 0; i < 3; i++) {
          pFM[i] = q[4 + i];
          qd[4 + i] = u[3 + i];
        }
      break;
    case MBS_MOB_BALL_XYZ:
    case MBS_MOB_FREE_XYZ:
      rot_body_xyz(RFM, q[0], q[1], q[2], &s0, &c0, &s1, &c1);
      for (int j = 0; j < nu; j++) Hf[j][j] = one;
      xyz_qdot(qd, s0, c0, s1, c1, u);
      if (nu == 6)
        for (int i = 0; i < 3; i++) {
          pFM[i] = q[3 + i];
          qd[3 + i] = u[3 + i];
        }
      break;
    default:  // refused by mbs_batch_supported
      m33_identity(RFM);
      break;
  }
  return has_hdu;
}

// g of each lane for the leading gravity elements
static void lane_gravity(const mbs_batch* bt, const mbs_system* sys, const group* g,
                         vd grav[MBS_BATCH_NGRAV][3]) {
  for (int e = 0; e < bt->ngrav; e++) {
    const int adr = sys->force[bt->grav[e]].param_adr;
    for (int i = 0; i < 3; i++) grav[e][i] = lane_param(sys, g, adr + i);
  }
}

// gravity on body b: F += [c x m g; m g] (gravity_apply)
INL void gravity_body(vd* F, const vd m, const vd c[3], const vd gv[3]) {
  const vd wg[3] = {m * gv[0], m * gv[1], m * gv[2]};
  v3_cross_add(F, c, wg);
  for (int i = 0; i < 3; i++) F[3 + i] = F[3 + i] + wg[i];
}

// Position, Velocity and the gyroscopic and gravity forces of body b, written to its workspace;
// the articulated inertia starts as the rigid body's. The lanes' q, u and applied forces are
// transposed into the workspace here; finite accumulates x - x of q and u (NaN if one is not
// finite).
INL void outward_body(const mbs_batch* bt, const mbs_system* sys, const group* g, const wsp* w,
                      int b, vd grav[MBS_BATCH_NGRAV][3], vd* finite) {
  const int par = sys->body_parent[b], nu = sys->body_nu[b];
  const int uadr = sys->body_uadr[b], qadr = sys->body_qadr[b];
  vd* B = BW(w, b);
  const vd* Pb = BW(w, par);
  if (bt->prefetch && b + MBS_BATCH_PREFETCH < sys->nbody)
    prefetch_body(sys, g, b + MBS_BATCH_PREFETCH);
  body_instance in;
  load_instance(bt, sys, g, b, &in);
  // this body's q, u and applied forces of each lane
  const int nqb = sys->body_nq[b];
  vd u[6];
  for (int j = 0; j < nqb; j++) {
    vd v;
    for (int k = 0; k < W; k++) v[k] = g->var[k][sys->var_q + qadr + j];
    w->Q[qadr + j] = v;
    *finite += v - v;
  }
  for (int j = 0; j < nu; j++) {
    vd v, f;
    for (int k = 0; k < W; k++) {
      v[k] = g->var[k][sys->var_u + uadr + j];
      f[k] = g->var[k][sys->var_fapp + uadr + j];
    }
    vd* sj = SW(w, uadr + j);
    sj[MBS_SW_U] = u[j] = v;
    sj[MBS_SW_F] = f;
    *finite += v - v;
  }
  for (int i = 0; i < 6; i++) {
    vd v;
    for (int k = 0; k < W; k++) v[k] = g->var[k][sys->var_Fapp + 6 * b + i];
    B[MBS_BW_F + i] = v;
  }
  const vd* q = w->Q + qadr;
  vd* qd = w->QD + qadr;

  vd RFB[9], rF[3], pFB[3], RGF[9], pGF[3], t3[3];
  const vd* RGP = Pb + MBS_BW_R;
  const vd* pGP = Pb + MBS_BW_P;
  vd* RGB = B + MBS_BW_R;
  vd* pGB = B + MBS_BW_P;
  vd* l = B + MBS_BW_L;
  vd* V = B + MBS_BW_V;
  vd* Ac = B + MBS_BW_AC;
  const vd* VP = Pb + MBS_BW_V;
  vd HU[6];
  m33_mul(RGF, RGP, in.RPF);
  m33_vec(pGF, RGP, in.pPF);
  for (int i = 0; i < 3; i++) pGF[i] += pGP[i];

  if (sys->body_mob[b] == MBS_MOB_PIN) {
    // as realize.c's pin path: R_GM = R_GF Rz(q) mixes two columns, R_GB = R_GM R_MB,
    // p_GB = p_GF + R_GM p_MB, H = [z; z x (R_GM p_MB)] with z = z_F in G, and
    // A_c = [0; u^2 (z x H_v)] before the parent's rotation terms
    vd s, c, RGM[9];
    vsincos(q[0], &s, &c);
    for (int i = 0; i < 3; i++) {
      const vd g0 = RGF[3 * i], g1 = RGF[3 * i + 1];
      RGM[3 * i] = c * g0 + s * g1;
      RGM[3 * i + 1] = c * g1 - s * g0;
      RGM[3 * i + 2] = RGF[3 * i + 2];
    }
    m33_mul(RGB, RGM, in.RMB);
    m33_vec(t3, RGM, in.pMB);
    for (int i = 0; i < 3; i++) {
      pGB[i] = pGF[i] + t3[i];
      l[i] = pGB[i] - pGP[i];
    }
    vd* H = SW(w, uadr) + MBS_SW_H;
    H[0] = RGF[2];
    H[1] = RGF[5];
    H[2] = RGF[8];
    v3_cross(H + 3, H, t3);
    const vd u0 = u[0];
    for (int i = 0; i < 6; i++) HU[i] = H[i] * u0;
    qd[0] = u0;
    shift_motion(V, VP, l);
    for (int i = 0; i < 6; i++) V[i] += HU[i];
    vd zh[3];
    v3_cross(zh, H, H + 3);
    const vd uu = u0 * u0;
    for (int i = 0; i < 3; i++) {
      Ac[i] = vb(0);
      Ac[3 + i] = uu * zh[i];
    }
  } else {
    // X_FB = X_FM X_MB, r_F = p_MB in F, H_FM u's angular part w_FM
    vd RFM[9], pFM[3], Hf[6][6], hdu[6];
    const int has_hdu = mobilizer(sys, g, b, q, u, RFM, pFM, Hf, hdu, qd);
    m33_mul(RFB, RFM, in.RMB);
    m33_vec(rF, RFM, in.pMB);
    for (int i = 0; i < 3; i++) pFB[i] = pFM[i] + rF[i];
    m33_mul(RGB, RGF, RFB);
    m33_vec(t3, RGF, pFB);
    for (int i = 0; i < 3; i++) {
      pGB[i] = pGF[i] + t3[i];
      l[i] = pGB[i] - pGP[i];
    }
    for (int i = 0; i < 6; i++) HU[i] = vb(0);
    vd wFM[3] = {vb(0), vb(0), vb(0)};
    for (int j = 0; j < nu; j++) {
      vd* H = SW(w, uadr + j) + MBS_SW_H;
      vd hv[3] = {Hf[j][3], Hf[j][4], Hf[j][5]};
      v3_cross_add(hv, Hf[j], rF);
      m33_vec(H, RGF, Hf[j]);
      m33_vec(H + 3, RGF, hv);
      for (int i = 0; i < 6; i++) HU[i] += H[i] * u[j];
      for (int i = 0; i < 3; i++) wFM[i] += Hf[j][i] * u[j];
    }
    shift_motion(V, VP, l);
    for (int i = 0; i < 6; i++) V[i] += HU[i];
    vd HDu[6], wr[3], t[3];
    for (int i = 0; i < 6; i++) HDu[i] = has_hdu ? hdu[i] : vb(0);
    if (has_hdu) v3_cross_add(HDu + 3, HDu, rF);
    v3_cross(wr, wFM, rF);
    v3_cross(t, wFM, wr);
    for (int i = 0; i < 3; i++) HDu[3 + i] += t[i];
    m33_vec(Ac, RGF, HDu);
    m33_vec(Ac + 3, RGF, HDu + 3);
  }
  const vd* wP = VP;
  v3_cross_add(Ac, wP, HU);
  v3_cross_add(Ac + 3, wP, HU + 3);
  vd dv[3] = {V[3] - VP[3], V[4] - VP[4], V[5] - VP[5]};
  v3_cross_add(Ac + 3, wP, dv);

  // spatial inertia about B's origin in G: c_G = R_GB c, I_G = R_GB I R_GB^T (symmetric)
  vd cG[3], T[9], I[6];
  m33_vec(cG, RGB, in.c);
  m33_mul(T, RGB, in.Io);
  I[0] = T[0] * RGB[0] + T[1] * RGB[1] + T[2] * RGB[2];
  I[1] = T[0] * RGB[3] + T[1] * RGB[4] + T[2] * RGB[5];
  I[2] = T[0] * RGB[6] + T[1] * RGB[7] + T[2] * RGB[8];
  I[3] = T[3] * RGB[3] + T[4] * RGB[4] + T[5] * RGB[5];
  I[4] = T[3] * RGB[6] + T[4] * RGB[7] + T[5] * RGB[8];
  I[5] = T[6] * RGB[6] + T[7] * RGB[7] + T[8] * RGB[8];
  const vd m = in.m;

  // gyroscopic force [w x I w; m w x (w x c)]; the leading gravity elements
  vd Iw[3], wr[3], tt[3];
  vd* gy = B + MBS_BW_GY;
  Iw[0] = I[0] * V[0] + I[1] * V[1] + I[2] * V[2];
  Iw[1] = I[1] * V[0] + I[3] * V[1] + I[4] * V[2];
  Iw[2] = I[2] * V[0] + I[4] * V[1] + I[5] * V[2];
  v3_cross(gy, V, Iw);
  v3_cross(wr, V, cG);
  v3_cross(tt, V, wr);
  for (int i = 0; i < 3; i++) gy[3 + i] = tt[i] * m;
  for (int e = 0; e < bt->ngrav; e++) gravity_body(B + MBS_BW_F, m, cG, grav[e]);
  if (bt->keep_mass) {  // for gravity elements after the first ones
    B[MBS_BW_M] = m;
    for (int i = 0; i < 3; i++) B[MBS_BW_C + i] = cG[i];
  }

  // the articulated inertia starts as the rigid body's (mbs_sym6_from_rigid)
  vd* P = B + MBS_BW_PA;
  for (int i = 0; i < 6; i++) P[i] = I[i];
  const vd mc0 = m * cG[0], mc1 = m * cG[1], mc2 = m * cG[2], zero = vb(0);
  P[6] = zero; P[7] = -mc2; P[8] = mc1;
  P[9] = mc2; P[10] = zero; P[11] = -mc0;
  P[12] = -mc1; P[13] = mc0; P[14] = zero;
  P[15] = m; P[16] = zero; P[17] = zero; P[18] = m; P[19] = zero; P[20] = m;
}

//---------------------------------- force elements ---------------------------------------------

// station p_BS (lanes) of body b: location and velocity in G
INL void station(const wsp* w, int b, const vd pBS[3], vd p[3], vd v[3]) {
  const vd* B = BW(w, b);
  vd r[3];
  m33_vec(r, B + MBS_BW_R, pBS);
  for (int i = 0; i < 3; i++) p[i] = B[MBS_BW_P + i] + r[i];
  v3_cross(v, B + MBS_BW_V, r);
  for (int i = 0; i < 3; i++) v[i] += B[MBS_BW_V + 3 + i];
}

// force f at point pS (in G) on body b: F += [r x f; f], r = pS - p_GB
INL void point_force(const wsp* w, int b, const vd pS[3], const vd f[3]) {
  if (b == 0) return;
  vd* B = BW(w, b);
  vd r[3];
  for (int i = 0; i < 3; i++) r[i] = pS[i] - B[MBS_BW_P + i];
  v3_cross_add(B + MBS_BW_F, r, f);
  for (int i = 0; i < 3; i++) B[MBS_BW_F + 3 + i] = B[MBS_BW_F + 3 + i] + f[i];
}

static void force_elements(const mbs_batch* bt, const mbs_system* sys, const group* g,
                           const wsp* w) {
  for (int e = 0; e < bt->nelem; e++) {
    const mbs_force_desc* fd = &sys->force[bt->elem[e]];
    const int a = fd->param_adr;
    switch (fd->type) {
      case MBS_FORCE_GRAVITY: {
        vd gv[3];
        lane_param3(sys, g, a, gv);
        for (int b = 1; b < sys->nbody; b++) {
          vd* B = BW(w, b);
          gravity_body(B + MBS_BW_F, B[MBS_BW_M], B + MBS_BW_C, gv);
        }
        break;
      }
      case MBS_FORCE_MOBILITY:
        SW(w, fd->uindex)[MBS_SW_F] += lane_param(sys, g, a);
        break;
      case MBS_FORCE_MOBILITY_DAMPER:
        SW(w, fd->uindex)[MBS_SW_F] -= lane_param(sys, g, a) * SW(w, fd->uindex)[MBS_SW_U];
        break;
      case MBS_FORCE_MOBILITY_SPRING: {
        const vd dpe = lane_param(sys, g, a) * (w->Q[fd->qindex] - lane_param(sys, g, a + 1));
        const int b = fd->body1, t = sys->body_mob[b];
        const int k = fd->qindex - sys->body_qadr[b], uadr = sys->body_uadr[b];
        if ((t == MBS_MOB_BALL_XYZ || t == MBS_MOB_FREE_XYZ) && k < 3) {
          // -dPE/dq N[k][:], N's rotational block E^-1 (column j: E^-1 e_j)
          const vd* q = w->Q + sys->body_qadr[b];
          vd s0, c0, s1, c1;
          vsincos(q[0], &s0, &c0);
          vsincos(q[1], &s1, &c1);
          for (int j = 0; j < 3; j++) {
            vd ej[3] = {vb(j == 0), vb(j == 1), vb(j == 2)}, col[3];
            xyz_qdot(col, s0, c0, s1, c1, ej);
            SW(w, uadr + j)[MBS_SW_F] -= dpe * col[k];
          }
        } else {  // q' = u on this coordinate
          SW(w, fd->uindex)[MBS_SW_F] -= dpe;
        }
        break;
      }
      case MBS_FORCE_BODY_FORCE: {
        vd pBS[3], f[3], pS[3], v[3];
        lane_param3(sys, g, a, pBS);
        lane_param3(sys, g, a + 3, f);
        station(w, fd->body1, pBS, pS, v);
        point_force(w, fd->body1, pS, f);
        break;
      }
      case MBS_FORCE_BODY_TORQUE:
        if (fd->body1 != 0) {
          vd* F = BW(w, fd->body1) + MBS_BW_F;
          for (int i = 0; i < 3; i++) F[i] = F[i] + lane_param(sys, g, a + i);
        }
        break;
      case MBS_FORCE_SPRING:
      case MBS_FORCE_DAMPER: {
        vd s1[3], s2[3], p1[3], v1[3], p2[3], v2[3], d[3];
        lane_param3(sys, g, a, s1);
        lane_param3(sys, g, a + 3, s2);
        station(w, fd->body1, s1, p1, v1);
        station(w, fd->body2, s2, p2, v2);
        for (int i = 0; i < 3; i++) d[i] = p2[i] - p1[i];
        const vd L = vsqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        const vl nonzero = L != 0;  // a zero length: direction undefined, no force
        const vd inv = vsel(nonzero, 1.0 / L, vb(0));
        for (int i = 0; i < 3; i++) d[i] = d[i] * inv;
        vd tension;
        if (fd->type == MBS_FORCE_SPRING) {
          tension = lane_param(sys, g, a + 6) * (L - lane_param(sys, g, a + 7));
        } else {
          tension = lane_param(sys, g, a + 6) *
                    ((v2[0] - v1[0]) * d[0] + (v2[1] - v1[1]) * d[1] + (v2[2] - v1[2]) * d[2]);
        }
        tension = vsel(nonzero, tension, vb(0));
        vd f[3] = {d[0] * tension, d[1] * tension, d[2] * tension};
        point_force(w, fd->body1, p1, f);
        for (int i = 0; i < 3; i++) f[i] = -f[i];
        point_force(w, fd->body2, p2, f);
        break;
      }
      default:  // refused by mbs_batch_supported
        break;
    }
  }
}

//---------------------------------- the inward and outward ABA sweeps ---------------------------

// inverse of symmetric positive definite n x n matrices (n <= 6), lane by lane, by Cholesky as
// spd_inverse of core/tree_dynamics.c; lanes where A is not positive definite get bad set
INL void spd_inverse(int n, const vd* A, vd* Ainv, vl* bad) {
  vd L[36], Li[36];
  const vd zero = vb(0);
  for (int i = 0; i < 36; i++) L[i] = Li[i] = zero;
  const vd scale = vsel(A[0] > 0, A[0], vb(1));
  for (int j = 0; j < n; j++) {
    vd d = A[j * n + j];
    for (int k = 0; k < j; k++) d -= L[j * 6 + k] * L[j * 6 + k];
    *bad |= ~((d > 1e-300 * scale) & (d < HUGE_VAL));
    const vd ljj = vsqrt(d);
    L[j * 6 + j] = ljj;
    for (int i = j + 1; i < n; i++) {
      vd s = A[i * n + j];
      for (int k = 0; k < j; k++) s -= L[i * 6 + k] * L[j * 6 + k];
      L[i * 6 + j] = s / ljj;
    }
  }
  for (int j = 0; j < n; j++) {
    Li[j * 6 + j] = 1.0 / L[j * 6 + j];
    for (int i = j + 1; i < n; i++) {
      vd s = zero;
      for (int k = j; k < i; k++) s -= L[i * 6 + k] * Li[k * 6 + j];
      Li[i * 6 + j] = s / L[i * 6 + i];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      vd s = zero;
      for (int k = i; k < n; k++) s += Li[k * 6 + i] * Li[k * 6 + j];
      Ainv[i * n + j] = Ainv[j * n + i] = s;
    }
}

// z_P += phi(l) z (the first child to add assigns: the one-at-a-time path adds to zero)
INL void add_to_parent_z(vd* zp, const vd* zb, const vd* l, int first) {
  if (first) shift_force(zp, zb, l);
  else shift_force_add(zp, zb, l);
}

// articulated inertia and inward ABA step of body b (abi_body and aba_inward_body); the
// children's share of z in the workspace is valid only when b has children
INL void inward_body(const mbs_batch* bt, const mbs_system* sys, const wsp* w, int b, vl* bad) {
  const int nu = sys->body_nu[b], uadr = sys->body_uadr[b], par = sys->body_parent[b];
  const int first = bt->first_child[b];
  vd* B = BW(w, b);
  const vd* P = B + MBS_BW_PA;
  const vd* l = B + MBS_BW_L;
  vd* Ppar = par != 0 ? BW(w, par) + MBS_BW_PA : NULL;
  vd* zp = par != 0 ? BW(w, par) + MBS_BW_Z : NULL;
  vd PA[6], zb[6];
  sym6_mul(PA, P, B + MBS_BW_AC);
  const int children = sys->body_nchild[b] > 0;
  for (int i = 0; i < 6; i++) {
    const vd own = PA[i] + B[MBS_BW_GY + i] - B[MBS_BW_F + i];
    zb[i] = children ? B[MBS_BW_Z + i] + own : own;
  }
  if (nu == 1) {
    vd* s = SW(w, uadr);
    const vd* h = s + MBS_SW_H;
    vd PH[6], qv[6];
    sym6_mul(PH, P, h);
    shift_force(qv, PH, l);
    const vd D = dot6(h, PH);
    *bad |= ~((D > 0) & (D < HUGE_VAL));
    const vd inv = 1.0 / D;
    w->DI[sys->body_diadr[b]] = inv;
    vd* G = s + MBS_SW_G;
    for (int i = 0; i < 6; i++) G[i] = qv[i] * inv;
    const vd e = s[MBS_SW_F] - dot6(h, zb);
    s[MBS_SW_E] = e;
    if (Ppar) {
      sym6_shift_add(Ppar, P, l, G, qv);
      add_to_parent_z(zp, zb, l, first);
      for (int i = 0; i < 6; i++) zp[i] += G[i] * e;
    }
    return;
  }
  if (nu == 0) {
    if (Ppar) {
      sym6_shift_add(Ppar, P, l, NULL, NULL);
      add_to_parent_z(zp, zb, l, first);
    }
    return;
  }
  vd PH[6][6], D[36], Pp[21];
  vd* DI = w->DI + sys->body_diadr[b];
  for (int j = 0; j < nu; j++) sym6_mul(PH[j], P, SW(w, uadr + j) + MBS_SW_H);
  for (int i = 0; i < nu; i++)
    for (int j = 0; j < nu; j++) D[i * nu + j] = dot6(SW(w, uadr + i) + MBS_SW_H, PH[j]);
  spd_inverse(nu, D, DI, bad);
  // G = PH D^-1 (kept in the speeds' G until shifted)
  vd Gc[6][6];
  for (int j = 0; j < nu; j++)
    for (int i = 0; i < 6; i++) {
      vd s = vb(0);
      for (int k = 0; k < nu; k++) s += PH[k][i] * DI[k * nu + j];
      Gc[j][i] = s;
    }
  // P+ = P - G PH^T on the upper triangle (packed)
  static const int rowJ[6] = {0, 0, 0, 1, 1, 2}, colJ[6] = {0, 1, 2, 1, 2, 2};
  for (int x = 0; x < 6; x++) {
    const int i = rowJ[x], j = colJ[x];
    vd sj = vb(0), sm = vb(0);
    for (int k = 0; k < nu; k++) {
      sj += Gc[k][i] * PH[k][j];
      sm += Gc[k][3 + i] * PH[k][3 + j];
    }
    Pp[MBS_SYM6_J + x] = P[MBS_SYM6_J + x] - sj;
    Pp[MBS_SYM6_M + x] = P[MBS_SYM6_M + x] - sm;
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      vd s = vb(0);
      for (int k = 0; k < nu; k++) s += Gc[k][i] * PH[k][3 + j];
      Pp[MBS_SYM6_F + 3 * i + j] = P[MBS_SYM6_F + 3 * i + j] - s;
    }
  for (int j = 0; j < nu; j++) {
    vd* s = SW(w, uadr + j);
    shift_force(s + MBS_SW_G, Gc[j], l);
    s[MBS_SW_E] = s[MBS_SW_F] - dot6(s + MBS_SW_H, zb);
  }
  if (Ppar) {
    sym6_shift_add(Ppar, Pp, l, NULL, NULL);
    add_to_parent_z(zp, zb, l, first);
    for (int j = 0; j < nu; j++) {
      const vd* s = SW(w, uadr + j);
      for (int i = 0; i < 6; i++) zp[i] += s[MBS_SW_G + i] * s[MBS_SW_E];
    }
  }
}

// outward ABA step of body b: u' = D^-1 e - G_P^T A_P, A = phi^T A_P + A_c + H u'
INL void accel_body(const mbs_system* sys, const wsp* w, int b) {
  const int nu = sys->body_nu[b], uadr = sys->body_uadr[b];
  vd* B = BW(w, b);
  const vd* AP = BW(w, sys->body_parent[b]) + MBS_BW_A;
  vd* A = B + MBS_BW_A;
  shift_motion(A, AP, B + MBS_BW_L);
  for (int i = 0; i < 6; i++) A[i] += B[MBS_BW_AC + i];
  if (nu == 1) {
    vd* s = SW(w, uadr);
    const vd ud = w->DI[sys->body_diadr[b]] * s[MBS_SW_E] - dot6(s + MBS_SW_G, AP);
    s[MBS_SW_UD] = ud;
    for (int i = 0; i < 6; i++) A[i] += s[MBS_SW_H + i] * ud;
  } else if (nu > 1) {
    const vd* DI = w->DI + sys->body_diadr[b];
    vd ud[6];
    for (int i = 0; i < nu; i++) {
      vd s = -dot6(SW(w, uadr + i) + MBS_SW_G, AP);
      for (int k = 0; k < nu; k++) s += DI[i * nu + k] * SW(w, uadr + k)[MBS_SW_E];
      ud[i] = s;
      SW(w, uadr + i)[MBS_SW_UD] = s;
    }
    for (int j = 0; j < nu; j++)
      for (int i = 0; i < 6; i++) A[i] += SW(w, uadr + j)[MBS_SW_H + i] * ud[j];
  }
}

//---------------------------------- one group --------------------------------------------------

static vl run_group(const mbs_batch* bt, const mbs_system* sys, const group* g, const wsp* w) {
  vl bad = (vl){};
  vd grav[MBS_BATCH_NGRAV][3];
  lane_gravity(bt, sys, g, grav);
  const int nb = sys->nbody;
  vd finite = vb(0);
  for (int b = 1; b < nb; b++) outward_body(bt, sys, g, w, b, grav, &finite);
  bad |= finite != finite;
  if (bt->nelem) force_elements(bt, sys, g, w);
  for (int b = nb - 1; b >= 1; b--) inward_body(bt, sys, w, b, &bad);
  for (int b = 1; b < nb; b++) accel_body(sys, w, b);
  vd acc = vb(0);
  for (int j = 0; j < sys->nu; j++) acc += SW(w, j)[MBS_SW_UD] - SW(w, j)[MBS_SW_UD];
  bad |= acc != acc;
  return bad;
}

void BATCH_KERNEL(mbs_batch* bt, const mbs_system* sys, mbs_state* const* states, int n) {
  wsp w;
  w.body = (vd*)(void*)bt->ws;
  w.speed = w.body + (size_t)MBS_BW_SIZE * sys->nbody;
  w.DI = w.speed + (size_t)MBS_SW_SIZE * sys->nu;
  w.Q = w.DI + sys->ndi;
  w.QD = w.Q + sys->nq;
  // Ground: at rest at the origin
  vd* G0 = BW(&w, 0);
  for (int i = 0; i < MBS_BW_SIZE; i++) G0[i] = vb(0);
  m33_identity(G0 + MBS_BW_R);
  const int nq = sys->nq, nu = sys->nu;
  for (int g0 = 0; g0 < n; g0 += W) {
    group g;
    const int nl = n - g0 < W ? n - g0 : W;
    g.ref = 0;
    for (int k = W - 1; k >= 0; k--) {
      g.st[k] = states[g0 + (k < nl ? k : nl - 1)];
      g.var[k] = g.st[k]->vars;
      if (k < nl && !bt->redo[g0 + k]) g.ref = k;
    }
    const vl bad = run_group(bt, sys, &g, &w);
    for (int k = 0; k < nl; k++) {
      double* ud = bt->udot + (size_t)(g0 + k) * nu;
      for (int j = 0; j < nu; j++) ud[j] = SW(&w, j)[MBS_SW_UD][k];
      double* qd = bt->qdot + (size_t)(g0 + k) * nq;
      for (int j = 0; j < nq; j++) qd[j] = w.QD[j][k];
      if (bad[k]) bt->redo[g0 + k] = 1;
    }
  }
}
