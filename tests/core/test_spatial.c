// Spatial algebra (core/spatial.c, include/mbs/spatial.h) against independent truths: closed
// forms written out here, algebraic identities (Simbody Theory Manual), finite differences and
// published numbers. Reference matrices are built with the test's own loops, not the library.
#include <math.h>
#include <string.h>

#include "mbs/spatial.h"
#include "mbs_test.h"

//---------------------------------- test-side linear algebra ---------------------------------

// r = a b for n x n row-major matrices (r may not alias)
static void matmul(int n, double* r, const double* a, const double* b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += a[n * i + k] * b[n * k + j];
      r[n * i + j] = s;
    }
}
static void transpose(int n, double* r, const double* a) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) r[n * i + j] = a[n * j + i];
}
static void matvec(int n, double* r, const double* a, const double* v) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int k = 0; k < n; k++) s += a[n * i + k] * v[k];
    r[i] = s;
  }
}
// r = R X R^T (3x3)
static void sandwich(double* r, const double* R, const double* X) {
  double T[9], Rt[9];
  transpose(3, Rt, R);
  matmul(3, T, R, X);
  matmul(3, r, T, Rt);
}
static double maxdiff(int len, const double* a, const double* b) {
  double e = 0;
  for (int i = 0; i < len; i++) {
    const double d = fabs(a[i] - b[i]);
    if (!(d <= e)) e = d;  // NaN propagates
  }
  return e;
}
static void eye(int n, double* r) {
  for (int i = 0; i < n * n; i++) r[i] = (i % (n + 1) == 0) ? 1.0 : 0.0;
}
static double det3(const double* a) {
  return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
         a[2] * (a[3] * a[7] - a[4] * a[6]);
}
// S = v x (written out independently of mbs_m33_cross)
static void skew(double* S, const double* v) {
  S[0] = 0; S[1] = -v[2]; S[2] = v[1];
  S[3] = v[2]; S[4] = 0; S[5] = -v[0];
  S[6] = -v[1]; S[7] = v[0]; S[8] = 0;
}
static void cross(double* r, const double* a, const double* b) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot3(const double* a, const double* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static void rand_vec(mbs_test_rng* g, double* v, int n, double lo, double hi) {
  for (int i = 0; i < n; i++) v[i] = mbs_test_uniform(g, lo, hi);
}
static void rand_unit(mbs_test_rng* g, double* k) {
  double n;
  do {
    rand_vec(g, k, 3, -1, 1);
    n = sqrt(dot3(k, k));
  } while (n < 0.1 || n > 1);
  for (int i = 0; i < 3; i++) k[i] /= n;
}
// random rotation from a random unit quaternion, by the textbook formula (not the library)
static void rand_rot(mbs_test_rng* g, double* R) {
  double q[4], n;
  do {
    rand_vec(g, q, 4, -1, 1);
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 0.1 || n > 1);
  const double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z); R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z); R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y); R[7] = 2 * (y * z + w * x); R[8] = 1 - 2 * (x * x + y * y);
}
// phi(l) = [[1, l x], [0, 1]] as an explicit 6x6
static void phi66(double* P, const double* l) {
  double L[9];
  skew(L, l);
  eye(6, P);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) P[6 * i + 3 + j] = L[3 * i + j];
}
// max |R R^T - 1| and det - 1
static void check_rotation(const double* R) {
  double Rt[9], RRt[9], I[9];
  transpose(3, Rt, R);
  matmul(3, RRt, R, Rt);
  eye(3, I);
  EXPECT_ABS(maxdiff(9, RRt, I), 0, 1e-14);
  EXPECT_ABS(det3(R), 1, 1e-14);
}
#define EXPECT_MAT(a, b, len, tol) EXPECT_ABS(maxdiff((len), (a), (b)), 0, (tol))

//---------------------------------- rotations ------------------------------------------------

static void test_rotations(void) {
  mbs_test_rng g = {101};
  void (*const rot[3])(double*, double) = {mbs_rot_x, mbs_rot_y, mbs_rot_z};
  for (int it = 0; it < 300; it++) {
    const double a = mbs_test_uniform(&g, -7, 7), c = cos(a), s = sin(a);
    double Rj[9], A[9], v[3];
    for (int j = 0; j < 3; j++) {
      // about axis j: e_j fixed, e_(j+1) -> c e_(j+1) + s e_(j+2) (right-handed)
      double ej[3] = {0, 0, 0}, en[3] = {0, 0, 0}, im[3] = {0, 0, 0};
      ej[j] = 1;
      en[(j + 1) % 3] = 1;
      im[(j + 1) % 3] = c;
      im[(j + 2) % 3] = s;
      rot[j](Rj, a);
      check_rotation(Rj);
      matvec(3, v, Rj, ej);
      EXPECT_MAT(v, ej, 3, 0);
      matvec(3, v, Rj, en);
      EXPECT_MAT(v, im, 3, 1e-15);
      mbs_rot_axis_angle(A, ej, a);
      EXPECT_MAT(A, Rj, 9, 1e-15);
    }

    // Rodrigues about a random unit axis
    double k[3], u[3], t[3], Ru[3], Rk[3], kxu[3], uxRu[3];
    rand_unit(&g, k);
    mbs_rot_axis_angle(A, k, a);
    check_rotation(A);
    matvec(3, Rk, A, k);
    EXPECT_MAT(Rk, k, 3, 1e-14);
    rand_vec(&g, t, 3, -2, 2);
    cross(u, k, t);  // perpendicular to k
    const double uu = dot3(u, u);
    matvec(3, Ru, A, u);
    EXPECT_NEAR(dot3(Ru, u), c * uu, 1e-13);
    EXPECT_NEAR(dot3(Ru, Ru), uu, 1e-13);
    // sense: u x (R u) = sin(a) |u|^2 k
    cross(uxRu, u, Ru);
    for (int i = 0; i < 3; i++) kxu[i] = s * uu * k[i];
    EXPECT_MAT(uxRu, kxu, 3, 1e-13);

    // body-fixed XYZ = Rx(a0) Ry(a1) Rz(a2) formed with mbs_m33_mul
    double ang[3], B[9], X[9], Y[9], Z[9], XY[9], XYZ[9];
    rand_vec(&g, ang, 3, -4, 4);
    mbs_rot_body_xyz(B, ang);
    check_rotation(B);
    mbs_rot_x(X, ang[0]);
    mbs_rot_y(Y, ang[1]);
    mbs_rot_z(Z, ang[2]);
    mbs_m33_mul(XY, X, Y);
    mbs_m33_mul(XYZ, XY, Z);
    EXPECT_MAT(B, XYZ, 9, 1e-15);
  }
}

static void test_euler_angles(void) {
  mbs_test_rng g = {103};
  for (int it = 0; it < 500; it++) {
    double a[3], b[3], R[9], R2[9];
    a[0] = mbs_test_uniform(&g, -M_PI, M_PI);
    a[1] = mbs_test_uniform(&g, -M_PI / 2 + 1e-6, M_PI / 2 - 1e-6);
    a[2] = mbs_test_uniform(&g, -M_PI, M_PI);
    if (it % 10 == 0) a[1] = (it % 20 ? 1 : -1) * M_PI / 2;  // gimbal lock: matrix still ok
    mbs_rot_body_xyz(R, a);
    mbs_rot_to_body_xyz(b, R);
    mbs_rot_body_xyz(R2, b);
    EXPECT_MAT(R2, R, 9, 1e-12);
    EXPECT_TRUE(fabs(b[1]) <= M_PI / 2);
  }
  // angular velocity: (Rdot R^T) = (E(a) ad) x, Rdot by central differences along a + t ad
  for (int it = 0; it < 300; it++) {
    double a[3], ad[3], E[9], w[3], ap[3], am[3], Rp[9], Rm[9], R[9], Rt[9], Rd[9], W[9], S[9];
    rand_vec(&g, a, 3, -3, 3);
    a[1] = mbs_test_uniform(&g, -1.4, 1.4);
    rand_vec(&g, ad, 3, -2, 2);
    const double h = 1e-6;
    for (int i = 0; i < 3; i++) ap[i] = a[i] + h * ad[i], am[i] = a[i] - h * ad[i];
    mbs_rot_body_xyz(Rp, ap);
    mbs_rot_body_xyz(Rm, am);
    mbs_rot_body_xyz(R, a);
    for (int i = 0; i < 9; i++) Rd[i] = (Rp[i] - Rm[i]) / (2 * h);
    transpose(3, Rt, R);
    matmul(3, W, Rd, Rt);
    mbs_body_xyz_rate_matrix(E, a);
    matvec(3, w, E, ad);
    skew(S, w);
    EXPECT_MAT(W, S, 9, 1e-7);
  }
}

//---------------------------------- quaternions ----------------------------------------------

static void test_quaternions(void) {
  mbs_test_rng g = {104};
  for (int it = 0; it < 400; it++) {
    double q[4], qs[4], R[9], R2[9], qr[4];
    rand_vec(&g, q, 4, -1, 1);
    const double s = mbs_test_uniform(&g, 0.01, 50);
    for (int i = 0; i < 4; i++) qs[i] = s * q[i];
    mbs_quat_to_rot(R, q);
    check_rotation(R);
    mbs_quat_to_rot(R2, qs);
    EXPECT_MAT(R2, R, 9, 1e-14);
    for (int i = 0; i < 4; i++) qs[i] = -q[i];  // q and -q are the same rotation
    mbs_quat_to_rot(R2, qs);
    EXPECT_MAT(R2, R, 9, 1e-14);
    // round trip through mbs_rot_to_quat: unit, q0 >= 0, same rotation
    mbs_rot_to_quat(qr, R);
    EXPECT_NEAR(qr[0] * qr[0] + qr[1] * qr[1] + qr[2] * qr[2] + qr[3] * qr[3], 1, 1e-14);
    EXPECT_TRUE(qr[0] >= 0);
    mbs_quat_to_rot(R2, qr);
    EXPECT_MAT(R2, R, 9, 1e-14);
    // composition: R(a*b) = R(a) R(b)
    double a[4], b[4], ab[4], Ra[9], Rb[9], Rab[9], P[9];
    rand_vec(&g, a, 4, -1, 1);
    rand_vec(&g, b, 4, -1, 1);
    mbs_quat_mul(ab, a, b);
    mbs_quat_to_rot(Ra, a);
    mbs_quat_to_rot(Rb, b);
    mbs_quat_to_rot(Rab, ab);
    matmul(3, P, Ra, Rb);
    EXPECT_MAT(Rab, P, 9, 1e-14);
    // angle th about unit k: q = (cos(th/2), sin(th/2) k) gives Rodrigues' matrix
    double k[3], th = mbs_test_uniform(&g, -6.5, 6.5), qk[4], A[9];
    rand_unit(&g, k);
    qk[0] = cos(th / 2);
    for (int i = 0; i < 3; i++) qk[i + 1] = sin(th / 2) * k[i];
    mbs_quat_to_rot(R, qk);
    mbs_rot_axis_angle(A, k, th);
    EXPECT_MAT(R, A, 9, 1e-14);
    // rotations near and at pi exercise every pivot of the conversion
    mbs_rot_axis_angle(A, k, M_PI - mbs_test_uniform(&g, 0, 1e-3));
    mbs_rot_to_quat(qr, A);
    mbs_quat_to_rot(R2, qr);
    EXPECT_MAT(R2, A, 9, 1e-14);
  }
  const double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int j = 0; j < 3; j++) {
    double A[9], q[4], R[9];
    mbs_rot_axis_angle(A, axes[j], M_PI);
    mbs_rot_to_quat(q, A);
    mbs_quat_to_rot(R, q);
    EXPECT_MAT(R, A, 9, 1e-15);
    EXPECT_ABS(fabs(q[j + 1]), 1, 1e-15);
  }
  // Hamilton product basis: i j = k, j k = i, k i = j, i i = -1
  const double bq[4][4] = {{-1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  double r[4];
  for (int j = 1; j <= 3; j++) {
    mbs_quat_mul(r, bq[j], bq[j % 3 + 1]);
    EXPECT_MAT(r, bq[(j + 1) % 3 + 1], 4, 0);
    mbs_quat_mul(r, bq[j], bq[j]);
    EXPECT_MAT(r, bq[0], 4, 0);
  }
}

//---------------------------------- transforms -----------------------------------------------

static void test_transforms(void) {
  mbs_test_rng g = {105};
  for (int it = 0; it < 300; it++) {
    mbs_transform X, Xi, Y, Id, Z;
    double ang[3], p[3], pB[3], pA[3], e[3], R[9], I[9] = {0}, zero[3] = {0, 0, 0};
    rand_vec(&g, ang, 3, -4, 4);
    rand_vec(&g, p, 3, -3, 3);
    mbs_tf_from_xyz(&X, ang, p);
    mbs_rot_body_xyz(R, ang);
    EXPECT_MAT(X.R, R, 9, 0);
    EXPECT_MAT(X.p, p, 3, 0);
    mbs_tf_inverse(&Xi, &X);
    eye(3, I);
    mbs_tf_mul(&Id, &X, &Xi);
    EXPECT_MAT(Id.R, I, 9, 1e-14);
    EXPECT_MAT(Id.p, zero, 3, 1e-14);
    mbs_tf_mul(&Id, &Xi, &X);
    EXPECT_MAT(Id.R, I, 9, 1e-14);
    EXPECT_MAT(Id.p, zero, 3, 1e-14);
    // p_A = R p_B + p
    rand_vec(&g, pB, 3, -3, 3);
    mbs_tf_point(pA, &X, pB);
    matvec(3, e, X.R, pB);
    for (int i = 0; i < 3; i++) e[i] += p[i];
    EXPECT_MAT(pA, e, 3, 1e-14);
    // composition acts on points like applying X_BC then X_AB
    rand_rot(&g, Y.R);
    rand_vec(&g, Y.p, 3, -3, 3);
    mbs_tf_mul(&Z, &X, &Y);
    double t[3], u[3];
    mbs_tf_point(t, &Y, pB);
    mbs_tf_point(u, &X, t);
    mbs_tf_point(t, &Z, pB);
    EXPECT_MAT(t, u, 3, 1e-13);
  }
}

//---------------------------------- cross-product identities ---------------------------------

static void test_cross_identities(void) {
  mbs_test_rng g = {106};
  for (int it = 0; it < 300; it++) {
    double v[3], w[3], U[9], V[9], W[9], VW[9], E[9], Vt[9], T[9], T2[9], Uv[3], S[9];
    rand_vec(&g, v, 3, -3, 3);
    rand_vec(&g, w, 3, -3, 3);
    mbs_m33_cross(V, v);
    mbs_m33_cross(W, w);
    // (v x)(w x) = w v^T - (v.w) 1
    matmul(3, VW, V, W);
    const double vw = dot3(v, w);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) E[3 * i + j] = w[i] * v[j] - (i == j ? vw : 0);
    EXPECT_MAT(VW, E, 9, 1e-13);
    // (v x)^T = -(v x)
    transpose(3, Vt, V);
    for (int i = 0; i < 9; i++) T[i] = -V[i];
    EXPECT_MAT(Vt, T, 9, 0);
    // U (v x) U^T = (U v) x
    rand_rot(&g, U);
    sandwich(T2, U, V);
    matvec(3, Uv, U, v);
    mbs_m33_cross(S, Uv);
    EXPECT_MAT(T2, S, 9, 1e-13);
    // -(v x)(v x) = (v.v) 1 - v v^T
    matmul(3, T, V, V);
    const double vv = dot3(v, v);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        T[3 * i + j] = -T[3 * i + j];
        E[3 * i + j] = (i == j ? vv : 0) - v[i] * v[j];
      }
    EXPECT_MAT(T, E, 9, 1e-13);
    // mbs_m33_cross is the skew matrix, (v x) w = v x w
    skew(T, v);
    EXPECT_MAT(V, T, 9, 0);
    double r[3], c[3];
    matvec(3, r, V, w);
    cross(c, v, w);
    EXPECT_MAT(r, c, 3, 1e-14);
  }
}

//---------------------------------- spatial vectors ------------------------------------------

static void test_shifts(void) {
  mbs_test_rng g = {107};
  for (int it = 0; it < 300; it++) {
    double l[3], ml[3], V[6], F[6], P[36], Pt[36], r[6], e[6], r2[6];
    rand_vec(&g, l, 3, -2, 2);
    rand_vec(&g, V, 6, -3, 3);
    rand_vec(&g, F, 6, -3, 3);
    for (int i = 0; i < 3; i++) ml[i] = -l[i];
    phi66(P, l);
    transpose(6, Pt, P);
    // force: r = phi F; motion: r = phi^T V
    mbs_sv_shift_force(r, F, l);
    matvec(6, e, P, F);
    EXPECT_MAT(r, e, 6, 1e-14);
    double acc[6], acc0[6];
    rand_vec(&g, acc0, 6, -1, 1);
    memcpy(acc, acc0, sizeof(acc));
    mbs_sv_shift_force_add(acc, F, l);
    for (int i = 0; i < 6; i++) e[i] += acc0[i];
    EXPECT_MAT(acc, e, 6, 1e-14);
    mbs_sv_shift_motion(r, V, l);
    matvec(6, e, Pt, V);
    EXPECT_MAT(r, e, 6, 1e-14);
    // power invariance: V_B = phi^T V_P, F_P = phi F_B => V_B.F_B = V_P.F_P
    double VB[6], FP[6];
    mbs_sv_shift_motion(VB, V, l);
    mbs_sv_shift_force(FP, F, l);
    EXPECT_NEAR(mbs_sv_dot(VB, F), mbs_sv_dot(V, FP), 1e-13);
    // shift by l then by -l
    mbs_sv_shift_motion(r2, VB, ml);
    EXPECT_MAT(r2, V, 6, 1e-14);
    mbs_sv_shift_force(r2, FP, ml);
    EXPECT_MAT(r2, F, 6, 1e-14);
    // re-expression: diag(R, R) a
    double R[9], ra[6];
    rand_rot(&g, R);
    mbs_sv_rotate(ra, R, V);
    matvec(3, e, R, V);
    matvec(3, e + 3, R, V + 3);
    EXPECT_MAT(ra, e, 6, 1e-14);
  }
}

//---------------------------------- rigid inertia --------------------------------------------

// a random physical central inertia: R diag(d) R^T with d on the triangle inequality
static void rand_central_inertia(mbs_test_rng* g, double* I) {
  double R[9], D[9] = {0};
  const double a = mbs_test_uniform(g, 0.1, 2), b = mbs_test_uniform(g, 0.1, 2);
  D[0] = a; D[4] = b; D[8] = mbs_test_uniform(g, fabs(a - b), a + b);
  rand_rot(g, R);
  sandwich(I, R, D);
}
// M = [[I_O, m c x], [-m c x, m 1]] written out
static void rigid_mat(double* P, double m, const double* c, const double* IO) {
  double C[9];
  skew(C, c);
  memset(P, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      P[6 * i + j] = IO[3 * i + j];
      P[6 * i + 3 + j] = m * C[3 * i + j];
      P[6 * (3 + i) + j] = -m * C[3 * i + j];
    }
  P[21] = P[28] = P[35] = m;
}
// parallel-axis theorem elementwise
static void parallel_axis(double* IO, double m, const double* c, const double* IC) {
  const double x = c[0], y = c[1], z = c[2];
  IO[0] = IC[0] + m * (y * y + z * z);
  IO[4] = IC[4] + m * (x * x + z * z);
  IO[8] = IC[8] + m * (x * x + y * y);
  IO[1] = IC[1] - m * x * y; IO[3] = IC[3] - m * x * y;
  IO[2] = IC[2] - m * x * z; IO[6] = IC[6] - m * x * z;
  IO[5] = IC[5] - m * y * z; IO[7] = IC[7] - m * y * z;
}

static void test_rigid_inertia(void) {
  mbs_test_rng g = {108};
  for (int it = 0; it < 300; it++) {
    mbs_rigid_inertia M;
    double IC[9], IO[9], P[36], E[36], V[6], F[6], e[6];
    M.m = mbs_test_uniform(&g, 0.1, 10);
    rand_vec(&g, M.c, 3, -1, 1);
    rand_central_inertia(&g, IC);
    mbs_inertia_shift_from_com(M.Io, M.m, M.c, IC);
    parallel_axis(IO, M.m, M.c, IC);
    EXPECT_MAT(M.Io, IO, 9, 1e-13);
    mbs_rigid_inertia_to_mat(P, &M);
    rigid_mat(E, M.m, M.c, IO);
    EXPECT_MAT(P, E, 36, 1e-13);
    double Pa[36];
    memcpy(Pa, P, sizeof(Pa));
    mbs_rigid_inertia_add_to_mat(Pa, &M);  // P + M = 2 M
    for (int i = 0; i < 36; i++) E[i] *= 2;
    EXPECT_MAT(Pa, E, 36, 1e-13);
    rand_vec(&g, V, 6, -3, 3);
    mbs_rigid_inertia_mul(F, &M, V);
    matvec(6, e, P, V);
    EXPECT_MAT(F, e, 6, 1e-12);
    // kinetic energy: 0.5 V.MV = 0.5 m |v + w x c|^2 + 0.5 w.I_C w
    double wxc[3], vc[3], Iw[3];
    cross(wxc, V, M.c);
    for (int i = 0; i < 3; i++) vc[i] = V[3 + i] + wxc[i];
    matvec(3, Iw, IC, V);
    EXPECT_NEAR(0.5 * mbs_sv_dot(V, F), 0.5 * M.m * dot3(vc, vc) + 0.5 * dot3(V, Iw), 1e-12);
    // rotation of an inertia: R I R^T
    double R[9], RIR[9], r[9];
    rand_rot(&g, R);
    sandwich(RIR, R, IO);
    mbs_inertia_rotate(r, R, IO);
    EXPECT_MAT(r, RIR, 9, 1e-13);
  }
  // published example: m = 2.5, com p, central inertia I_C, V = [w; v] about the origin
  const double m = 2.5, p[3] = {0.3, -0.2, 0.5}, w[3] = {0.3, -1.1, 0.7}, v[3] = {0.5, 0.2, -0.4};
  const double G[9] = {0.4, 0.01, 0.02, 0.01, 0.3, 0.03, 0.02, 0.03, 0.5};
  double wxp[3], vcom[3], Gw[3];
  cross(wxp, w, p);
  for (int i = 0; i < 3; i++) vcom[i] = v[i] + wxp[i];
  matvec(3, Gw, G, w);
  const double ke_trans = 0.5 * m * dot3(vcom, vcom), wGw = dot3(w, Gw);
  const double V[6] = {w[0], w[1], w[2], v[0], v[1], v[2]};
  // (a) the matrix as the central inertia I_C: closed form (0.41555 by hand)
  mbs_rigid_inertia M = {.m = m, .c = {p[0], p[1], p[2]}};
  mbs_inertia_shift_from_com(M.Io, m, p, G);
  double F[6];
  mbs_rigid_inertia_mul(F, &M, V);
  const double ke_a = 0.5 * mbs_sv_dot(V, F);
  EXPECT_NEAR(ke_a, ke_trans + 0.5 * wGw, 1e-12);
  EXPECT_NEAR(ke_a, 0.41555, 1e-12);
  // (b) the matrix as the unit inertia G^C (I_C = m G^C, Simbody's convention): the published
  // KE = 0.86525 matches this reading
  double mG[9];
  for (int i = 0; i < 9; i++) mG[i] = m * G[i];
  mbs_inertia_shift_from_com(M.Io, m, p, mG);
  mbs_rigid_inertia_mul(F, &M, V);
  const double ke_b = 0.5 * mbs_sv_dot(V, F);
  EXPECT_NEAR(ke_b, ke_trans + 0.5 * m * wGw, 1e-12);
  EXPECT_NEAR(ke_b, 0.86525, 1e-12);
  printf("published KE 0.86525: I_C reading %.15g, unit-inertia (m G^C) reading %.15g\n", ke_a,
         ke_b);
}

//---------------------------------- 6x6 matrices ---------------------------------------------

static void test_m66(void) {
  mbs_test_rng g = {109};
  for (int it = 0; it < 300; it++) {
    // P = rigid inertia + B B^T (symmetric, positive semi-definite)
    mbs_rigid_inertia M;
    double IC[9], P[36], B[36], Bt[36], BBt[36], l[3];
    M.m = mbs_test_uniform(&g, 0.1, 5);
    rand_vec(&g, M.c, 3, -1, 1);
    rand_central_inertia(&g, IC);
    mbs_inertia_shift_from_com(M.Io, M.m, M.c, IC);
    mbs_rigid_inertia_to_mat(P, &M);
    rand_vec(&g, B, 36, -1, 1);
    transpose(6, Bt, B);
    matmul(6, BBt, B, Bt);
    for (int i = 0; i < 36; i++) P[i] += BBt[i];
    rand_vec(&g, l, 3, -2, 2);
    double Ph[36], Pht[36], T[36], E[36], r[36], rt[36], r0[36];
    phi66(Ph, l);
    transpose(6, Pht, Ph);
    matmul(6, T, Ph, P);
    matmul(6, E, T, Pht);
    // packed symmetric storage: round trip, and the shift against phi P phi^T
    double Ppk[21], back[36], rpk[21], rpk0[21];
    mbs_sym6_from_full(Ppk, P);
    mbs_sym6_to_full(back, Ppk);
    EXPECT_MAT(back, P, 36, 1e-15);  // P is symmetric to rounding
    memset(rpk, 0, sizeof(rpk));
    mbs_sym6_shift_add(rpk, Ppk, l, NULL, NULL);
    mbs_sym6_to_full(r, rpk);
    EXPECT_MAT(r, E, 36, 1e-12);
    // accumulating into a nonzero r
    for (int i = 0; i < 36; i++) r0[i] = 0;
    rand_vec(&g, rpk0, 21, -1, 1);
    memcpy(rpk, rpk0, sizeof(rpk));
    mbs_sym6_shift_add(rpk, Ppk, l, NULL, NULL);
    mbs_sym6_to_full(r, rpk);
    mbs_sym6_to_full(r0, rpk0);
    for (int i = 0; i < 36; i++) E[i] += r0[i];
    EXPECT_MAT(r, E, 36, 1e-12);
    // with the rank-one term: r += phi P phi^T - s q q^T
    double qv[6], gv[6];
    rand_vec(&g, qv, 6, -1, 1);
    const double sc = mbs_test_uniform(&g, 0.1, 2);
    for (int i = 0; i < 6; i++) gv[i] = sc * qv[i];
    memcpy(rpk, rpk0, sizeof(rpk));
    mbs_sym6_shift_add(rpk, Ppk, l, gv, qv);
    mbs_sym6_to_full(r, rpk);
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) E[6 * i + j] -= gv[i] * qv[j];
    EXPECT_MAT(r, E, 36, 1e-12);
    transpose(6, rt, r);
    EXPECT_MAT(r, rt, 36, 0);
    // packed product against the full matrix
    double a6[6], pv[6], fv[6];
    rand_vec(&g, a6, 6, -2, 2);
    mbs_sym6_mul(pv, Ppk, a6);
    matvec(6, fv, P, a6);
    EXPECT_MAT(pv, fv, 6, 1e-13);
    // physics: a rigid inertia shifted to P is the rigid inertia with com c + l about P
    double MB[36], MP[36], cP[3], IP[9], Mpk[21];
    mbs_sym6_from_rigid(Mpk, &M);
    mbs_sym6_to_full(MB, Mpk);
    mbs_rigid_inertia_to_mat(MP, &M);
    EXPECT_MAT(MB, MP, 36, 1e-15);
    memset(rpk, 0, sizeof(rpk));
    mbs_sym6_shift_add(rpk, Mpk, l, NULL, NULL);
    mbs_sym6_to_full(r, rpk);
    for (int i = 0; i < 3; i++) cP[i] = M.c[i] + l[i];
    parallel_axis(IP, M.m, cP, IC);
    rigid_mat(MP, M.m, cP, IP);
    EXPECT_MAT(r, MP, 36, 1e-12);
    // r = P a and r += P a against loops
    double a[6], rv[6], ev[6], acc0[6];
    rand_vec(&g, a, 6, -2, 2);
    mbs_m66_vec(rv, P, a);
    matvec(6, ev, P, a);
    EXPECT_MAT(rv, ev, 6, 1e-13);
    rand_vec(&g, acc0, 6, -2, 2);
    memcpy(rv, acc0, sizeof(rv));
    mbs_m66_vec_add(rv, P, a);
    for (int i = 0; i < 6; i++) ev[i] += acc0[i];
    EXPECT_MAT(rv, ev, 6, 1e-13);
  }
}

//---------------------------------- eigenvalues and physical inertia -------------------------

static void rdrt(double* A, const double* R, const double* d) {
  double D[9] = {0};
  D[0] = d[0]; D[4] = d[1]; D[8] = d[2];
  sandwich(A, R, D);
}
static void sort3(double* d) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2 - i; j++)
      if (d[j] > d[j + 1]) { const double t = d[j]; d[j] = d[j + 1]; d[j + 1] = t; }
}

static void test_eigen_physical(void) {
  mbs_test_rng g = {110};
  // kind 0: distinct, 1: a double eigenvalue, 2: a triple one
  double worst[3] = {0, 0, 0};
  for (int it = 0; it < 600; it++) {
    const int kind = it % 3;
    double d[3], R[9], A[9], ev[3];
    rand_vec(&g, d, 3, -3, 3);
    if (kind >= 1) d[1] = d[0];
    if (kind == 2) d[2] = d[0];
    rand_rot(&g, R);
    rdrt(A, R, d);
    mbs_sym33_eigenvalues(ev, A);
    sort3(d);
    const double scale = fabs(d[0]) + fabs(d[1]) + fabs(d[2]);
    const double e = maxdiff(3, ev, d) / scale;
    if (!(e <= worst[kind])) worst[kind] = e;
    // ascending, up to rounding among equal eigenvalues
    EXPECT_TRUE(ev[0] <= ev[1] + 1e-14 * scale && ev[1] <= ev[2] + 1e-14 * scale);
  }
  // eigenvalues of a symmetric matrix are perfectly conditioned (Weyl): 1e-12 is generous
  EXPECT_ABS(worst[0], 0, 1e-12);
  EXPECT_ABS(worst[1], 0, 1e-12);
  EXPECT_ABS(worst[2], 0, 1e-12);
  printf("sym33 eigenvalues, worst relative error: distinct %.3g, double %.3g, triple %.3g\n",
         worst[0], worst[1], worst[2]);
  const double Dg[9] = {3, 0, 0, 0, -1, 0, 0, 0, 2}, dd[3] = {-1, 2, 3};
  double ev[3];
  mbs_sym33_eigenvalues(ev, Dg);
  EXPECT_MAT(ev, dd, 3, 0);

  // physical inertias (a plate 1,1,2 and a rod 0,1,1 sit on the triangle inequality)
  const double good[4][3] = {{1, 2, 2.5}, {0, 0, 0}, {0, 1, 1}, {1, 1, 2}};
  for (int k = 0; k < 4; k++) {
    double A[9], Id[9] = {0};
    Id[0] = good[k][0]; Id[4] = good[k][1]; Id[8] = good[k][2];
    EXPECT_EQ_INT(mbs_inertia_is_physical(Id), 1);
    int rejected = 0;
    for (int it = 0; it < 100; it++) {
      double R[9];
      rand_rot(&g, R);
      rdrt(A, R, good[k]);
      if (mbs_inertia_is_physical(A)) continue;
      if (rejected++ == 0) {
        mbs_sym33_eigenvalues(ev, A);
        fprintf(stderr, "  rotated d = (%g %g %g) rejected: A =", good[k][0], good[k][1],
                good[k][2]);
        for (int i = 0; i < 9; i++) fprintf(stderr, " %.17g", A[i]);
        fprintf(stderr, "\n  eigenvalues %.17g %.17g %.17g\n", ev[0], ev[1], ev[2]);
      }
    }
    EXPECT_EQ_INT(rejected, 0);  // of 100 random orientations
  }
  const double bad[2][3] = {{-0.1, 1, 1}, {1, 1, 3}};
  for (int k = 0; k < 2; k++) {
    double A[9], R[9], Id[9] = {0};
    Id[0] = bad[k][0]; Id[4] = bad[k][1]; Id[8] = bad[k][2];
    EXPECT_EQ_INT(mbs_inertia_is_physical(Id), 0);
    for (int it = 0; it < 50; it++) {
      rand_rot(&g, R);
      rdrt(A, R, bad[k]);
      EXPECT_EQ_INT(mbs_inertia_is_physical(A), 0);
    }
  }
  double A[9] = {1, 0.1, 0, 0, 1.5, 0, 0, 0, 2};  // not symmetric
  EXPECT_EQ_INT(mbs_inertia_is_physical(A), 0);
  const double okA[9] = {1, 0.1, 0, 0.1, 1.5, 0, 0, 0, 2};
  EXPECT_EQ_INT(mbs_inertia_is_physical(okA), 1);
  double N[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  N[4] = NAN;
  EXPECT_EQ_INT(mbs_inertia_is_physical(N), 0);
  N[4] = 1; N[1] = N[3] = NAN;
  EXPECT_EQ_INT(mbs_inertia_is_physical(N), 0);
  N[1] = N[3] = 0; N[8] = INFINITY;
  EXPECT_EQ_INT(mbs_inertia_is_physical(N), 0);

  // OpenSim moments (xx yy zz xy xz yz)
  const double mo[6] = {1.1, 2.2, 3.3, 0.4, 0.5, 0.6};
  const double Ie[9] = {1.1, 0.4, 0.5, 0.4, 2.2, 0.6, 0.5, 0.6, 3.3};
  double I[9];
  mbs_inertia_from_moments(I, mo);
  EXPECT_MAT(I, Ie, 9, 0);
}

// distance in units in the last place between two doubles of the same sign region
static double ulps(double a, double b) {
  if (a == b) return 0;
  const double scale = fmax(fabs(a), fabs(b));
  int e;
  frexp(scale, &e);
  return fabs(a - b) / ldexp(1.0, e - 53);
}

// mbs_sincos against the C library: within two units in the last place over joint-angle
// ranges and across the quadrant boundaries, exact at 0, and the identity s^2 + c^2 = 1
static void test_sincos(void) {
  mbs_test_rng rng = {31};
  double worst = 0, worst_x = 0;
  for (int i = 0; i < 2000000; i++) {
    const double range = i % 4 == 0 ? 1.0 : i % 4 == 1 ? 10.0 : i % 4 == 2 ? 1000.0 : 1e6;
    const double x = mbs_test_uniform(&rng, -range, range);
    double s, c;
    mbs_sincos(x, &s, &c);
    // compare relative to the larger of |sin|, |cos| (both are needed together in a rotation)
    const double es = ulps(s, sin(x)), ec = ulps(c, cos(x));
    const double e = fmax(fabs(sin(x)) > 1e-3 ? es : 0, fabs(cos(x)) > 1e-3 ? ec : 0);
    if (e > worst) {
      worst = e;
      worst_x = x;
    }
    EXPECT_TRUE(fabs(s - sin(x)) <= 2.3e-16 && fabs(c - cos(x)) <= 2.3e-16);
  }
  printf("mbs_sincos: worst error %.2f ulp (at x = %.17g)\n", worst, worst_x);
  EXPECT_TRUE(worst <= 2.0);
  // near multiples of pi/2, where the reduction matters most
  for (int k = -40; k <= 40; k++)
    for (int d = -3; d <= 3; d++) {
      const double x = nextafter(k * (M_PI / 2), d > 0 ? INFINITY : -INFINITY) + d * 1e-9;
      double s, c;
      mbs_sincos(x, &s, &c);
      EXPECT_TRUE(fabs(s - sin(x)) <= 2.3e-16 && fabs(c - cos(x)) <= 2.3e-16);
    }
  double s, c;
  mbs_sincos(0.0, &s, &c);
  EXPECT_TRUE(s == 0 && c == 1);
  mbs_sincos(-0.0, &s, &c);
  EXPECT_TRUE(s == 0 && signbit(s) && c == 1);
  mbs_sincos(1e300, &s, &c);  // beyond the reduction range: the C library's values
  EXPECT_TRUE(s == sin(1e300) && c == cos(1e300));
  mbs_sincos(NAN, &s, &c);
  EXPECT_TRUE(isnan(s) && isnan(c));
}

int main(void) {
  test_sincos();
  test_rotations();
  test_euler_angles();
  test_quaternions();
  test_transforms();
  test_cross_identities();
  test_shifts();
  test_rigid_inertia();
  test_m66();
  test_eigen_physical();
  return mbs_test_finish("test_spatial");
}
