// Spatial algebra: 3-vectors, rotations, transforms, spatial vectors and inertias.
//
// Conventions (Simbody Theory Manual §3, §12):
// - A 3x3 matrix is double[9], row-major: m[3*i+j].
// - R_AB is the rotation of frame B in frame A: its columns are B's axes expressed in A, so a
//   vector expressed in B is re-expressed in A as v_A = R_AB v_B; R_BA = R_AB^T.
// - A transform X_AB = (R_AB, p_AB) with p_AB the vector from A's origin to B's origin,
//   expressed in A. Composition X_AC = X_AB X_BC.
// - Spatial vectors are double[6], angular first: velocity V = [w; v], acceleration
//   A = [b; a], force F = [m; f] (moment about the reference point, then force).
// - A 6x6 spatial matrix is double[36], row-major, blocks [[J, F], [F^T, M]] for inertias.
// - Body-fixed X-Y-Z angles (OpenSim's convention): R = Rx(a0) Ry(a1) Rz(a2).
// - Quaternions are scalar first: (q0, q1, q2, q3).
// Pure functions put the output first; outputs may not alias inputs unless stated.
#ifndef MBS_SPATIAL_H_
#define MBS_SPATIAL_H_

#include <math.h>
#include <string.h>

#ifdef __cplusplus
#define MBS_RESTRICT __restrict
extern "C" {
#else
#define MBS_RESTRICT restrict
#endif

//---------------------------------- 3-vectors --------------------------------------------------

static inline void mbs_v3_set(double r[3], double x, double y, double z) {
  r[0] = x; r[1] = y; r[2] = z;
}
static inline void mbs_v3_copy(double r[3], const double a[3]) {
  r[0] = a[0]; r[1] = a[1]; r[2] = a[2];
}
static inline void mbs_v3_zero(double r[3]) { r[0] = r[1] = r[2] = 0; }
static inline void mbs_v3_add(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2];
}
static inline void mbs_v3_sub(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2];
}
static inline void mbs_v3_scale(double r[3], const double a[3], double s) {
  r[0] = s * a[0]; r[1] = s * a[1]; r[2] = s * a[2];
}
// r += s a
static inline void mbs_v3_axpy(double r[3], double s, const double a[3]) {
  r[0] += s * a[0]; r[1] += s * a[1]; r[2] += s * a[2];
}
static inline double mbs_v3_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline double mbs_v3_norm(const double a[3]) { return sqrt(mbs_v3_dot(a, a)); }
// r = a x b (r may not alias a or b)
static inline void mbs_v3_cross(double r[3], const double a[3], const double b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
// r += a x b
static inline void mbs_v3_cross_add(double r[3], const double a[3], const double b[3]) {
  r[0] += a[1] * b[2] - a[2] * b[1];
  r[1] += a[2] * b[0] - a[0] * b[2];
  r[2] += a[0] * b[1] - a[1] * b[0];
}

//---------------------------------- 3x3 matrices -----------------------------------------------

static inline void mbs_m33_identity(double r[9]) {
  r[0] = 1; r[1] = 0; r[2] = 0;
  r[3] = 0; r[4] = 1; r[5] = 0;
  r[6] = 0; r[7] = 0; r[8] = 1;
}
static inline void mbs_m33_copy(double r[9], const double a[9]) { memcpy(r, a, 9 * sizeof(double)); }
static inline void mbs_m33_transpose(double r[9], const double a[9]) {
  r[0] = a[0]; r[1] = a[3]; r[2] = a[6];
  r[3] = a[1]; r[4] = a[4]; r[5] = a[7];
  r[6] = a[2]; r[7] = a[5]; r[8] = a[8];
}
// r = a b
static inline void mbs_m33_mul(double r[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    const double a0 = a[3 * i], a1 = a[3 * i + 1], a2 = a[3 * i + 2];
    r[3 * i]     = a0 * b[0] + a1 * b[3] + a2 * b[6];
    r[3 * i + 1] = a0 * b[1] + a1 * b[4] + a2 * b[7];
    r[3 * i + 2] = a0 * b[2] + a1 * b[5] + a2 * b[8];
  }
}
// r = a^T b
static inline void mbs_m33_tmul(double r[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    const double a0 = a[i], a1 = a[3 + i], a2 = a[6 + i];
    r[3 * i]     = a0 * b[0] + a1 * b[3] + a2 * b[6];
    r[3 * i + 1] = a0 * b[1] + a1 * b[4] + a2 * b[7];
    r[3 * i + 2] = a0 * b[2] + a1 * b[5] + a2 * b[8];
  }
}
// r = a b^T
static inline void mbs_m33_mult(double r[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    const double a0 = a[3 * i], a1 = a[3 * i + 1], a2 = a[3 * i + 2];
    r[3 * i]     = a0 * b[0] + a1 * b[1] + a2 * b[2];
    r[3 * i + 1] = a0 * b[3] + a1 * b[4] + a2 * b[5];
    r[3 * i + 2] = a0 * b[6] + a1 * b[7] + a2 * b[8];
  }
}
// r = a v
static inline void mbs_m33_vec(double r[3], const double a[9], const double v[3]) {
  const double x = v[0], y = v[1], z = v[2];
  r[0] = a[0] * x + a[1] * y + a[2] * z;
  r[1] = a[3] * x + a[4] * y + a[5] * z;
  r[2] = a[6] * x + a[7] * y + a[8] * z;
}
// r = a^T v
static inline void mbs_m33_tvec(double r[3], const double a[9], const double v[3]) {
  const double x = v[0], y = v[1], z = v[2];
  r[0] = a[0] * x + a[3] * y + a[6] * z;
  r[1] = a[1] * x + a[4] * y + a[7] * z;
  r[2] = a[2] * x + a[5] * y + a[8] * z;
}
// r = v x (the cross-product matrix, so that (v x) w = v x w)
static inline void mbs_m33_cross(double r[9], const double v[3]) {
  r[0] = 0;     r[1] = -v[2]; r[2] = v[1];
  r[3] = v[2];  r[4] = 0;     r[5] = -v[0];
  r[6] = -v[1]; r[7] = v[0];  r[8] = 0;
}

//---------------------------------- rotations --------------------------------------------------

// sin(x) and cos(x) together, within two units in the last place, with the same bits on
// every machine (core/sincos.c)
void mbs_sincos(double x, double* s, double* c);

// rotation by angle a about the x, y or z axis
void mbs_rot_x(double R[9], double a);
void mbs_rot_y(double R[9], double a);
void mbs_rot_z(double R[9], double a);
// rotation by angle a about a unit axis (Rodrigues)
void mbs_rot_axis_angle(double R[9], const double axis[3], double a);
// body-fixed X-Y-Z sequence: R = Rx(a[0]) Ry(a[1]) Rz(a[2]) (OpenSim's orientation convention)
void mbs_rot_body_xyz(double R[9], const double a[3]);
// angles a with mbs_rot_body_xyz(a) = R, a[1] in [-pi/2, pi/2]
void mbs_rot_to_body_xyz(double a[3], const double R[9]);
// angular velocity in the parent frame from body-fixed XYZ angle rates: w = E(a) adot, with
// E = [[1, 0, s1], [0, c0, -s0 c1], [0, s0, c0 c1]]; singular where cos(a1) = 0
void mbs_body_xyz_rate_matrix(double E[9], const double a[3]);
// rotation from a quaternion (normalized inside; q need not be unit length)
void mbs_quat_to_rot(double R[9], const double q[4]);
// unit quaternion with q0 >= 0 from a rotation matrix
void mbs_rot_to_quat(double q[4], const double R[9]);
// r = a * b (Hamilton product, scalar first)
void mbs_quat_mul(double r[4], const double a[4], const double b[4]);

//---------------------------------- transforms -------------------------------------------------

// a rigid transform X_AB = (R_AB, p_AB)
typedef struct mbs_transform {
  double R[9];
  double p[3];
} mbs_transform;

static inline void mbs_tf_identity(mbs_transform* X) {
  mbs_m33_identity(X->R);
  mbs_v3_zero(X->p);
}
// X_AC = X_AB X_BC
void mbs_tf_mul(mbs_transform* X_AC, const mbs_transform* X_AB, const mbs_transform* X_BC);
// X_BA = X_AB^-1
void mbs_tf_inverse(mbs_transform* X_BA, const mbs_transform* X_AB);
// p_A = X_AB p_B (a station given in B, measured from A's origin and expressed in A)
void mbs_tf_point(double p_A[3], const mbs_transform* X_AB, const double p_B[3]);
// transform from body-fixed XYZ angles and a translation (OpenSim frame properties)
void mbs_tf_from_xyz(mbs_transform* X, const double angles[3], const double p[3]);

//---------------------------------- spatial vectors --------------------------------------------

static inline void mbs_sv_zero(double r[6]) { memset(r, 0, 6 * sizeof(double)); }
static inline void mbs_sv_copy(double r[6], const double a[6]) { memcpy(r, a, 6 * sizeof(double)); }
// summed pairwise: a shorter dependency chain than left to right
static inline double mbs_sv_dot(const double a[6], const double b[6]) {
  return ((a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5]);
}
// shift a motion vector outward by l (from point P to point B = P + l):
// r = phi(l)^T V = [w; v + w x l]
static inline void mbs_sv_shift_motion(double r[6], const double V[6], const double l[3]) {
  r[0] = V[0]; r[1] = V[1]; r[2] = V[2];
  r[3] = V[3] + V[1] * l[2] - V[2] * l[1];
  r[4] = V[4] + V[2] * l[0] - V[0] * l[2];
  r[5] = V[5] + V[0] * l[1] - V[1] * l[0];
}
// shift a force vector inward by l (from point B = P + l to point P): r = phi(l) F = [m + l x f; f]
static inline void mbs_sv_shift_force(double r[6], const double F[6], const double l[3]) {
  r[0] = F[0] + l[1] * F[5] - l[2] * F[4];
  r[1] = F[1] + l[2] * F[3] - l[0] * F[5];
  r[2] = F[2] + l[0] * F[4] - l[1] * F[3];
  r[3] = F[3]; r[4] = F[4]; r[5] = F[5];
}
// r += phi(l) F
static inline void mbs_sv_shift_force_add(double r[6], const double F[6], const double l[3]) {
  r[0] += F[0] + l[1] * F[5] - l[2] * F[4];
  r[1] += F[1] + l[2] * F[3] - l[0] * F[5];
  r[2] += F[2] + l[0] * F[4] - l[1] * F[3];
  r[3] += F[3]; r[4] += F[4]; r[5] += F[5];
}
// re-express a spatial vector: r = diag(R, R) a
static inline void mbs_sv_rotate(double r[6], const double R[9], const double a[6]) {
  mbs_m33_vec(r, R, a);
  mbs_m33_vec(r + 3, R, a + 3);
}

//---------------------------------- rigid-body inertia -----------------------------------------

// Spatial inertia of a rigid body about a point O (the body origin), all in one frame:
// M = [[I_O, m c x], [-m c x, m 1]], with c the center of mass measured from O and
// I_O the inertia about O. Stored as mass, c and I_O.
typedef struct mbs_rigid_inertia {
  double m;
  double c[3];
  double Io[9];    // inertia about O, symmetric
} mbs_rigid_inertia;

// inertia about O from the inertia about the center of mass (parallel-axis theorem)
void mbs_inertia_shift_from_com(double I_O[9], double m, const double c[3], const double I_C[9]);
// inertia about O re-expressed: I' = R I R^T
void mbs_inertia_rotate(double r[9], const double R[9], const double Imat[9]);
// F = M V for a rigid spatial inertia: [I w + m c x v; m (v - c x w)]
void mbs_rigid_inertia_mul(double F[6], const mbs_rigid_inertia* M, const double V[6]);
// expand a rigid spatial inertia into a 6x6 matrix
void mbs_rigid_inertia_to_mat(double P[36], const mbs_rigid_inertia* M);
// 6x6 inertia from a rigid inertia, added in place: P += M
void mbs_rigid_inertia_add_to_mat(double P[36], const mbs_rigid_inertia* M);
// inertia matrix from OpenSim's six moments (xx yy zz xy xz yz)
void mbs_inertia_from_moments(double Imat[9], const double moments[6]);
// eigenvalues of a symmetric 3x3 matrix, ascending
void mbs_sym33_eigenvalues(double ev[3], const double A[9]);
// 1 if a central inertia is physical: symmetric, finite, principal moments >= 0 and each at
// most the sum of the other two (relative tolerance 1e-9); 0 otherwise
int mbs_inertia_is_physical(const double I_C[9]);

//---------------------------------- 6x6 matrices -----------------------------------------------

// r = P a
void mbs_m66_vec(double r[6], const double P[36], const double a[6]);
// r += P a
void mbs_m66_vec_add(double r[6], const double P[36], const double a[6]);

//---------------------------------- packed symmetric 6x6 ---------------------------------------
// A symmetric spatial matrix [[J, F], [F^T, M]] (articulated and composite inertias) stored as
// 21 numbers: J upper triangle (J00 J01 J02 J11 J12 J22), F row-major (9), M upper triangle.
enum { MBS_SYM6_J = 0, MBS_SYM6_F = 6, MBS_SYM6_M = 15, MBS_SYM6_SIZE = 21 };

// P = the spatial inertia of a rigid body
void mbs_sym6_from_rigid(double P[21], const mbs_rigid_inertia* M);
// r = P a
void mbs_sym6_mul(double* MBS_RESTRICT r, const double* MBS_RESTRICT P, const double a[6]);
// r += phi(l) P phi(l)^T (shift from a body's origin to its parent's, l = p_PB); with g and q
// given (else NULL) also r -= g q^T, for a symmetric g q^T (the articulated-body step of a
// one-speed mobilizer)
void mbs_sym6_shift_add(double* MBS_RESTRICT r, const double* MBS_RESTRICT P, const double l[3],
                        const double* g, const double* q);
// conversions to and from a full row-major 6x6
void mbs_sym6_to_full(double A[36], const double P[21]);
void mbs_sym6_from_full(double P[21], const double A[36]);

#ifdef __cplusplus
}
#endif

#endif  // MBS_SPATIAL_H_
