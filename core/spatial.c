// Spatial algebra kernels that are too long to inline; conventions in include/mbs/spatial.h.
#include "mbs/spatial.h"

//---------------------------------- rotations --------------------------------------------------

void mbs_rot_x(double R[9], double a) {
  double s, c;
  mbs_sincos(a, &s, &c);
  R[0] = 1; R[1] = 0; R[2] = 0;
  R[3] = 0; R[4] = c; R[5] = -s;
  R[6] = 0; R[7] = s; R[8] = c;
}

void mbs_rot_y(double R[9], double a) {
  double s, c;
  mbs_sincos(a, &s, &c);
  R[0] = c;  R[1] = 0; R[2] = s;
  R[3] = 0;  R[4] = 1; R[5] = 0;
  R[6] = -s; R[7] = 0; R[8] = c;
}

void mbs_rot_z(double R[9], double a) {
  double s, c;
  mbs_sincos(a, &s, &c);
  R[0] = c; R[1] = -s; R[2] = 0;
  R[3] = s; R[4] = c;  R[5] = 0;
  R[6] = 0; R[7] = 0;  R[8] = 1;
}

void mbs_rot_axis_angle(double R[9], const double k[3], double a) {
  // R = c 1 + (1 - c) k k^T + s k x
  double s, c;
  mbs_sincos(a, &s, &c);
  const double t = 1 - c;
  R[0] = c + t * k[0] * k[0];
  R[1] = t * k[0] * k[1] - s * k[2];
  R[2] = t * k[0] * k[2] + s * k[1];
  R[3] = t * k[1] * k[0] + s * k[2];
  R[4] = c + t * k[1] * k[1];
  R[5] = t * k[1] * k[2] - s * k[0];
  R[6] = t * k[2] * k[0] - s * k[1];
  R[7] = t * k[2] * k[1] + s * k[0];
  R[8] = c + t * k[2] * k[2];
}

void mbs_rot_body_xyz(double R[9], const double a[3]) {
  // Rx(a0) Ry(a1) Rz(a2), multiplied out
  double s0, c0;
  mbs_sincos(a[0], &s0, &c0);
  double s1, c1;
  mbs_sincos(a[1], &s1, &c1);
  double s2, c2;
  mbs_sincos(a[2], &s2, &c2);
  R[0] = c1 * c2;
  R[1] = -c1 * s2;
  R[2] = s1;
  R[3] = c0 * s2 + s0 * s1 * c2;
  R[4] = c0 * c2 - s0 * s1 * s2;
  R[5] = -s0 * c1;
  R[6] = s0 * s2 - c0 * s1 * c2;
  R[7] = s0 * c2 + c0 * s1 * s2;
  R[8] = c0 * c1;
}

void mbs_rot_to_body_xyz(double a[3], const double R[9]) {
  double s1 = R[2];
  if (s1 > 1) s1 = 1;
  if (s1 < -1) s1 = -1;
  a[1] = asin(s1);
  if (fabs(s1) < 1 - 1e-12) {
    a[0] = atan2(-R[5], R[8]);
    a[2] = atan2(-R[1], R[0]);
  } else {
    // gimbal lock: only a0 +- a2 is defined; put it all in a0
    a[2] = 0;
    a[0] = atan2(R[7], R[4]);
  }
}

void mbs_body_xyz_rate_matrix(double E[9], const double a[3]) {
  double s0, c0;
  mbs_sincos(a[0], &s0, &c0);
  double s1, c1;
  mbs_sincos(a[1], &s1, &c1);
  E[0] = 1; E[1] = 0;  E[2] = s1;
  E[3] = 0; E[4] = c0; E[5] = -s0 * c1;
  E[6] = 0; E[7] = s0; E[8] = c0 * c1;
}

void mbs_quat_to_rot(double R[9], const double qin[4]) {
  const double n2 = qin[0] * qin[0] + qin[1] * qin[1] + qin[2] * qin[2] + qin[3] * qin[3];
  const double s = n2 > 0 ? 2.0 / n2 : 0.0;
  const double q0 = qin[0], q1 = qin[1], q2 = qin[2], q3 = qin[3];
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

void mbs_rot_to_quat(double q[4], const double R[9]) {
  // Shepperd's method: pivot on the largest of the four squared components
  const double tr = R[0] + R[4] + R[8];
  double w[4] = {tr, R[0], R[4], R[8]};
  int k = 0;
  for (int i = 1; i < 4; i++)
    if (w[i] > w[k]) k = i;
  double t;
  switch (k) {
    case 0:
      t = sqrt(1 + tr) * 2;
      q[0] = 0.25 * t;
      q[1] = (R[7] - R[5]) / t;
      q[2] = (R[2] - R[6]) / t;
      q[3] = (R[3] - R[1]) / t;
      break;
    case 1:
      t = sqrt(1 + 2 * R[0] - tr) * 2;
      q[0] = (R[7] - R[5]) / t;
      q[1] = 0.25 * t;
      q[2] = (R[1] + R[3]) / t;
      q[3] = (R[2] + R[6]) / t;
      break;
    case 2:
      t = sqrt(1 + 2 * R[4] - tr) * 2;
      q[0] = (R[2] - R[6]) / t;
      q[1] = (R[1] + R[3]) / t;
      q[2] = 0.25 * t;
      q[3] = (R[5] + R[7]) / t;
      break;
    default:
      t = sqrt(1 + 2 * R[8] - tr) * 2;
      q[0] = (R[3] - R[1]) / t;
      q[1] = (R[2] + R[6]) / t;
      q[2] = (R[5] + R[7]) / t;
      q[3] = 0.25 * t;
      break;
  }
  if (q[0] < 0)
    for (int i = 0; i < 4; i++) q[i] = -q[i];
  const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; i++) q[i] /= n;
}

void mbs_quat_mul(double r[4], const double a[4], const double b[4]) {
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

//---------------------------------- transforms -------------------------------------------------

void mbs_tf_mul(mbs_transform* X_AC, const mbs_transform* X_AB, const mbs_transform* X_BC) {
  double p[3];
  mbs_m33_vec(p, X_AB->R, X_BC->p);
  mbs_v3_add(X_AC->p, X_AB->p, p);
  mbs_m33_mul(X_AC->R, X_AB->R, X_BC->R);
}

void mbs_tf_inverse(mbs_transform* X_BA, const mbs_transform* X_AB) {
  double p[3];
  mbs_m33_tvec(p, X_AB->R, X_AB->p);
  mbs_v3_scale(X_BA->p, p, -1.0);
  mbs_m33_transpose(X_BA->R, X_AB->R);
}

void mbs_tf_point(double p_A[3], const mbs_transform* X_AB, const double p_B[3]) {
  double r[3];
  mbs_m33_vec(r, X_AB->R, p_B);
  mbs_v3_add(p_A, X_AB->p, r);
}

void mbs_tf_from_xyz(mbs_transform* X, const double angles[3], const double p[3]) {
  mbs_rot_body_xyz(X->R, angles);
  mbs_v3_copy(X->p, p);
}

//---------------------------------- rigid-body inertia -----------------------------------------

void mbs_inertia_shift_from_com(double I_O[9], double m, const double c[3], const double I_C[9]) {
  // I_O = I_C + m ((c.c) 1 - c c^T)
  const double cc = mbs_v3_dot(c, c);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      I_O[3 * i + j] = I_C[3 * i + j] + m * ((i == j ? cc : 0.0) - c[i] * c[j]);
}

void mbs_inertia_rotate(double r[9], const double R[9], const double Imat[9]) {
  // T = R I, then r = T R^T on the upper triangle, mirrored (r is exactly symmetric)
  double t[9];
  mbs_m33_mul(t, R, Imat);
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++)
      r[3 * i + j] = r[3 * j + i] =
          t[3 * i] * R[3 * j] + t[3 * i + 1] * R[3 * j + 1] + t[3 * i + 2] * R[3 * j + 2];
}

void mbs_rigid_inertia_mul(double F[6], const mbs_rigid_inertia* M, const double V[6]) {
  double t[3];
  mbs_m33_vec(F, M->Io, V);
  mbs_v3_cross(t, M->c, V + 3);
  mbs_v3_axpy(F, M->m, t);
  mbs_v3_cross(t, M->c, V);
  F[3] = M->m * (V[3] - t[0]);
  F[4] = M->m * (V[4] - t[1]);
  F[5] = M->m * (V[5] - t[2]);
}

void mbs_rigid_inertia_to_mat(double P[36], const mbs_rigid_inertia* M) {
  const double m = M->m;
  const double mc0 = m * M->c[0], mc1 = m * M->c[1], mc2 = m * M->c[2];
  const double* J = M->Io;
  // rows: [I | m c x] over [-m c x | m 1]
  P[0] = J[0];  P[1] = J[1];  P[2] = J[2];  P[3] = 0;     P[4] = -mc2;  P[5] = mc1;
  P[6] = J[3];  P[7] = J[4];  P[8] = J[5];  P[9] = mc2;   P[10] = 0;    P[11] = -mc0;
  P[12] = J[6]; P[13] = J[7]; P[14] = J[8]; P[15] = -mc1; P[16] = mc0;  P[17] = 0;
  P[18] = 0;    P[19] = mc2;  P[20] = -mc1; P[21] = m;    P[22] = 0;    P[23] = 0;
  P[24] = -mc2; P[25] = 0;    P[26] = mc0;  P[27] = 0;    P[28] = m;    P[29] = 0;
  P[30] = mc1;  P[31] = -mc0; P[32] = 0;    P[33] = 0;    P[34] = 0;    P[35] = m;
}

void mbs_rigid_inertia_add_to_mat(double P[36], const mbs_rigid_inertia* M) {
  const double m = M->m;
  const double mc0 = m * M->c[0], mc1 = m * M->c[1], mc2 = m * M->c[2];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) P[6 * i + j] += M->Io[3 * i + j];
  // upper right m c x
  P[4] += -mc2; P[5] += mc1;
  P[9] += mc2;  P[11] += -mc0;
  P[15] += -mc1; P[16] += mc0;
  // lower left -m c x = (m c x)^T
  P[19] += mc2; P[20] += -mc1;
  P[24] += -mc2; P[26] += mc0;
  P[30] += mc1; P[31] += -mc0;
  P[21] += m; P[28] += m; P[35] += m;
}

void mbs_inertia_from_moments(double J[9], const double mo[6]) {
  J[0] = mo[0]; J[1] = mo[3]; J[2] = mo[4];
  J[3] = mo[3]; J[4] = mo[1]; J[5] = mo[5];
  J[6] = mo[4]; J[7] = mo[5]; J[8] = mo[2];
}

//---------------------------------- 6x6 matrices -----------------------------------------------

void mbs_m66_vec(double r[6], const double P[36], const double a[6]) {
  for (int i = 0; i < 6; i++) {
    const double* p = P + 6 * i;
    r[i] = p[0] * a[0] + p[1] * a[1] + p[2] * a[2] + p[3] * a[3] + p[4] * a[4] + p[5] * a[5];
  }
}

void mbs_m66_vec_add(double r[6], const double P[36], const double a[6]) {
  for (int i = 0; i < 6; i++) {
    const double* p = P + 6 * i;
    r[i] += p[0] * a[0] + p[1] * a[1] + p[2] * a[2] + p[3] * a[3] + p[4] * a[4] + p[5] * a[5];
  }
}


//---------------------------------- inertia checks ---------------------------------------------

void mbs_sym33_eigenvalues(double ev[3], const double A[9]) {
  // cyclic Jacobi rotations: accurate to rounding also for repeated eigenvalues (the closed
  // trigonometric form loses half the digits there)
  double a[3][3];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) a[i][k] = 0.5 * (A[3 * i + k] + A[3 * k + i]);
  for (int sweep = 0; sweep < 50; sweep++) {
    const double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
    const double diag = fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]);
    if (off == 0 || off <= 1e-300 + 1e-18 * diag) break;
    for (int p = 0; p < 2; p++)
      for (int q = p + 1; q < 3; q++) {
        if (a[p][q] == 0) continue;
        // rotation that zeroes a[p][q]
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        const double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; k++) {  // columns p, q
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) {  // rows p, q
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
      }
  }
  double e0 = a[0][0], e1 = a[1][1], e2 = a[2][2], t;
  if (e0 > e1) { t = e0; e0 = e1; e1 = t; }
  if (e1 > e2) { t = e1; e1 = e2; e2 = t; }
  if (e0 > e1) { t = e0; e0 = e1; e1 = t; }
  ev[0] = e0;
  ev[1] = e1;
  ev[2] = e2;
}

int mbs_inertia_is_physical(const double J[9]) {
  for (int i = 0; i < 9; i++)
    if (!isfinite(J[i])) return 0;
  const double scale = fabs(J[0]) + fabs(J[4]) + fabs(J[8]);
  const double tol = 1e-9 * scale;
  if (fabs(J[1] - J[3]) > tol || fabs(J[2] - J[6]) > tol || fabs(J[5] - J[7]) > tol) return 0;
  double ev[3];
  mbs_sym33_eigenvalues(ev, J);
  if (ev[0] < -tol) return 0;
  return ev[2] <= ev[0] + ev[1] + tol;
}

//---------------------------------- packed symmetric 6x6 ---------------------------------------

// index of J(i,j) or M(i,j), i, j in 0..2, in the packed upper triangle
static inline int tri(int i, int j) {
  static const int k[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
  return k[i][j];
}

void mbs_sym6_from_rigid(double P[21], const mbs_rigid_inertia* M) {
  const double m = M->m;
  const double mc0 = m * M->c[0], mc1 = m * M->c[1], mc2 = m * M->c[2];
  const double* J = M->Io;
  P[0] = J[0]; P[1] = J[1]; P[2] = J[2]; P[3] = J[4]; P[4] = J[5]; P[5] = J[8];
  // F = m c x
  P[6] = 0;     P[7] = -mc2;  P[8] = mc1;
  P[9] = mc2;   P[10] = 0;    P[11] = -mc0;
  P[12] = -mc1; P[13] = mc0;  P[14] = 0;
  P[15] = m; P[16] = 0; P[17] = 0; P[18] = m; P[19] = 0; P[20] = m;
}

void mbs_sym6_mul(double* restrict r, const double* restrict P, const double a[6]) {
  const double* J = P;
  const double* F = P + MBS_SYM6_F;
  const double* M = P + MBS_SYM6_M;
  const double a0 = a[0], a1 = a[1], a2 = a[2], b0 = a[3], b1 = a[4], b2 = a[5];
  r[0] = (J[0] * a0 + J[1] * a1 + J[2] * a2) + (F[0] * b0 + F[1] * b1 + F[2] * b2);
  r[1] = (J[1] * a0 + J[3] * a1 + J[4] * a2) + (F[3] * b0 + F[4] * b1 + F[5] * b2);
  r[2] = (J[2] * a0 + J[4] * a1 + J[5] * a2) + (F[6] * b0 + F[7] * b1 + F[8] * b2);
  r[3] = (F[0] * a0 + F[3] * a1 + F[6] * a2) + (M[0] * b0 + M[1] * b1 + M[2] * b2);
  r[4] = (F[1] * a0 + F[4] * a1 + F[7] * a2) + (M[1] * b0 + M[3] * b1 + M[4] * b2);
  r[5] = (F[2] * a0 + F[5] * a1 + F[8] * a2) + (M[2] * b0 + M[4] * b1 + M[5] * b2);
}

void mbs_sym6_shift_add(double* restrict r, const double* restrict P, const double l[3],
                        const double* g, const double* q) {
  // r += [[J + L F^T - F' L, F'], [F'^T, M]], F' = F + L M, L = l x
  const double l0 = l[0], l1 = l[1], l2 = l[2];
  const double* J = P;
  const double* F = P + MBS_SYM6_F;
  const double* M = P + MBS_SYM6_M;
  const double m00 = M[0], m01 = M[1], m02 = M[2], m11 = M[3], m12 = M[4], m22 = M[5];
  // rows of M: (m00 m01 m02), (m01 m11 m12), (m02 m12 m22)
  double Fp[9];
  Fp[0] = F[0] + (l1 * m02 - l2 * m01);
  Fp[1] = F[1] + (l1 * m12 - l2 * m11);
  Fp[2] = F[2] + (l1 * m22 - l2 * m12);
  Fp[3] = F[3] + (l2 * m00 - l0 * m02);
  Fp[4] = F[4] + (l2 * m01 - l0 * m12);
  Fp[5] = F[5] + (l2 * m02 - l0 * m22);
  Fp[6] = F[6] + (l0 * m01 - l1 * m00);
  Fp[7] = F[7] + (l0 * m11 - l1 * m01);
  Fp[8] = F[8] + (l0 * m12 - l1 * m02);
  // (L F^T)[i][k] = (L row i) . (F row k); (F' L)[i][k] = (F' row i) . (L column k)
  // L rows: (0, -l2, l1), (l2, 0, -l0), (-l1, l0, 0); L columns: the rows negated
  double LF[3][3], FL[3][3];
  for (int k = 0; k < 3; k++) {
    const double f0 = F[3 * k], f1 = F[3 * k + 1], f2 = F[3 * k + 2];
    LF[0][k] = l1 * f2 - l2 * f1;
    LF[1][k] = l2 * f0 - l0 * f2;
    LF[2][k] = l0 * f1 - l1 * f0;
  }
  for (int i = 0; i < 3; i++) {
    const double p0 = Fp[3 * i], p1 = Fp[3 * i + 1], p2 = Fp[3 * i + 2];
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
    double* rJ = r;
    double* rF = r + MBS_SYM6_F;
    double* rM = r + MBS_SYM6_M;
    rJ[0] -= g[0] * q[0]; rJ[1] -= g[0] * q[1]; rJ[2] -= g[0] * q[2];
    rJ[3] -= g[1] * q[1]; rJ[4] -= g[1] * q[2]; rJ[5] -= g[2] * q[2];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) rF[3 * i + j] -= g[i] * q[3 + j];
    rM[0] -= g[3] * q[3]; rM[1] -= g[3] * q[4]; rM[2] -= g[3] * q[5];
    rM[3] -= g[4] * q[4]; rM[4] -= g[4] * q[5]; rM[5] -= g[5] * q[5];
  }
}

void mbs_sym6_to_full(double A[36], const double P[21]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      A[6 * i + j] = P[MBS_SYM6_J + tri(i, j)];
      A[6 * i + 3 + j] = P[MBS_SYM6_F + 3 * i + j];
      A[6 * (3 + j) + i] = P[MBS_SYM6_F + 3 * i + j];
      A[6 * (3 + i) + 3 + j] = P[MBS_SYM6_M + tri(i, j)];
    }
}

void mbs_sym6_from_full(double P[21], const double A[36]) {
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++) {
      P[MBS_SYM6_J + tri(i, j)] = A[6 * i + j];
      P[MBS_SYM6_M + tri(i, j)] = A[6 * (3 + i) + 3 + j];
    }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) P[MBS_SYM6_F + 3 * i + j] = A[6 * i + 3 + j];
}
