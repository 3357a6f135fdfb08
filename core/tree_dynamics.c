// O(n) recursions over the tree, all in Ground about body origins (Simbody Theory Manual §8,
// §12.5; Jain, Robot and Multibody Dynamics, 2011). Notation per body B with parent P:
// l = p_PB in G, phi(l) = [[1, l x], [0, 1]] shifts forces inward (B -> P) and phi(l)^T
// shifts motion outward; H is the hinge matrix in G; Mk the rigid spatial inertia about B's
// origin; b the gyroscopic force; A_c the Coriolis acceleration; F the applied body force and
// f the applied generalized force.
//
// Articulated inertias (inward): P = Mk + sum_children phi P+ phi^T,
//   D = H^T P H,  G = P H D^-1,  P+ = P - G (P H)^T.
// Forward dynamics (articulated-body method):
//   inward:  z = P A_c + b - F + sum_children phi z+,  e = f - H^T z,  z+ = z + G e
//   outward: A+ = phi^T A_P,  u' = D^-1 e - G^T A+,  A = A+ + H u' + A_c
// The State keeps G already shifted to the parent's origin, G_P = phi G, because then
//   phi z+ = phi z + G_P e,  G^T A+ = G_P^T A_P,  phi P+ phi^T = phi P phi^T - G_P (phi P H)^T,
// and the parts that do not depend on D^-1 (or on e) are computed off the critical path of the
// sweeps (a chain of bodies is a chain of dependent steps).
// Inverse dynamics: outward A = phi^T A_P + H u' + A_c; inward
//   F_B = Mk A + b - F + sum_children phi F_child;  tau = H^T F_B - f.
#include <string.h>

#include "model_impl.h"

//---------------------------------- small dense helpers ----------------------------------------

// inverse of a symmetric positive definite n x n matrix (n <= 6) by Cholesky; 0 if not SPD
static int spd_inverse(int n, const double* A, double* Ainv) {
  double L[36], Li[36];
  memset(L, 0, sizeof(L));
  const double scale = A[0] > 0 ? A[0] : 1.0;
  for (int j = 0; j < n; j++) {
    double d = A[j * n + j];
    for (int k = 0; k < j; k++) d -= L[j * 6 + k] * L[j * 6 + k];
    if (!(d > 1e-300 * scale) || !isfinite(d)) return 0;
    const double ljj = sqrt(d);
    L[j * 6 + j] = ljj;
    for (int i = j + 1; i < n; i++) {
      double s = A[i * n + j];
      for (int k = 0; k < j; k++) s -= L[i * 6 + k] * L[j * 6 + k];
      L[i * 6 + j] = s / ljj;
    }
  }
  // Li = L^-1 (lower triangular)
  memset(Li, 0, sizeof(Li));
  for (int j = 0; j < n; j++) {
    Li[j * 6 + j] = 1.0 / L[j * 6 + j];
    for (int i = j + 1; i < n; i++) {
      double s = 0;
      for (int k = j; k < i; k++) s -= L[i * 6 + k] * Li[k * 6 + j];
      Li[i * 6 + j] = s / L[i * 6 + i];
    }
  }
  // A^-1 = Li^T Li
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0;
      for (int k = i; k < n; k++) s += Li[k * 6 + i] * Li[k * 6 + j];
      Ainv[i * n + j] = Ainv[j * n + i] = s;
    }
  return 1;
}

// r = H^T x for a 6 x n hinge matrix (column j at H + 6 j)
static inline void hinge_t_times(int n, const double* H, const double x[6], double* r) {
  for (int j = 0; j < n; j++) r[j] = mbs_sv_dot(H + 6 * j, x);
}

// r += H v
static inline void hinge_times_add(int n, const double* H, const double* v, double r[6]) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < 6; i++) r[i] += H[6 * j + i] * v[j];
}

//---------------------------------- articulated inertias ---------------------------------------

// One speed: D = h^T P h is a scalar, G_P = phi (P h) / D, and the parent's P (r, or NULL
// for a base body) receives phi P+ phi^T = phi P phi^T - G_P (phi P h)^T. Returns 0 if D is
// not positive.
static int abi_one_speed(const double* restrict P, const double* restrict h,
                         const double l[3], double* restrict G_P, double* restrict di,
                         double* restrict r) {
  double PH[6], q[6];
  if (h[3] == 0 && h[4] == 0 && h[5] == 0) {
    // a rotation about an axis through B's origin (pin with M = B): P h = [J h_w; F^T h_w]
    const double* J = P;
    const double* F = P + MBS_SYM6_F;
    const double a0 = h[0], a1 = h[1], a2 = h[2];
    PH[0] = J[0] * a0 + J[1] * a1 + J[2] * a2;
    PH[1] = J[1] * a0 + J[3] * a1 + J[4] * a2;
    PH[2] = J[2] * a0 + J[4] * a1 + J[5] * a2;
    PH[3] = F[0] * a0 + F[3] * a1 + F[6] * a2;
    PH[4] = F[1] * a0 + F[4] * a1 + F[7] * a2;
    PH[5] = F[2] * a0 + F[5] * a1 + F[8] * a2;
  } else {
    mbs_sym6_mul(PH, P, h);
  }
  mbs_sv_shift_force(q, PH, l);
  const double D = mbs_sv_dot(h, PH);
  if (!(D > 0) || !isfinite(D)) return 0;
  const double inv = 1.0 / D;
  *di = inv;
  for (int i = 0; i < 6; i++) G_P[i] = q[i] * inv;
  if (r) mbs_sym6_shift_add(r, P, l, G_P, q);
  return 1;
}

// Articulated inertia of body b (its P must already hold Mk plus its children's shifted P+):
// D^-1, G and P+, shifted into the parent's P.
static int abi_body(const mbs_system* sys, mbs_state* st, int b) {
  const int nu = sys->body_nu[b];
  const int par = sys->body_parent[b];
  const double* P = st->P + MBS_SYM6_SIZE * b;
  const double* H = st->H + 6 * sys->body_uadr[b];
  double Pp[21];  // P+ (packed)
  if (nu == 0) {
    memcpy(Pp, P, sizeof(Pp));
  } else if (nu == 1) {
    if (!abi_one_speed(P, H, st->l + 3 * b, st->G + 6 * sys->body_uadr[b],
                       st->DI + sys->body_diadr[b],
                       par != 0 ? st->P + MBS_SYM6_SIZE * par : NULL))
      goto singular;
    return MBS_OK;
  } else {
    double PH[36], D[36], Pf[36], Ppf[36];
    double* DI = st->DI + sys->body_diadr[b];
    double* G = st->G + 6 * sys->body_uadr[b];
    mbs_sym6_to_full(Pf, P);
    for (int j = 0; j < nu; j++) mbs_sym6_mul(PH + 6 * j, P, H + 6 * j);
    for (int i = 0; i < nu; i++)
      for (int j = 0; j < nu; j++) D[i * nu + j] = mbs_sv_dot(H + 6 * i, PH + 6 * j);
    if (!spd_inverse(nu, D, DI)) goto singular;
    // G = PH D^-1
    for (int j = 0; j < nu; j++)
      for (int i = 0; i < 6; i++) {
        double s = 0;
        for (int k = 0; k < nu; k++) s += PH[6 * k + i] * DI[k * nu + j];
        G[6 * j + i] = s;
      }
    // P+ = P - G PH^T, symmetrized
    for (int i = 0; i < 6; i++)
      for (int j = i; j < 6; j++) {
        double s = 0;
        for (int k = 0; k < nu; k++) s += G[6 * k + i] * PH[6 * k + j];
        Ppf[6 * i + j] = Ppf[6 * j + i] = Pf[6 * i + j] - s;
      }
    mbs_sym6_from_full(Pp, Ppf);
    // keep G shifted to the parent's origin
    for (int j = 0; j < nu; j++) {
      double g[6];
      mbs_sv_copy(g, G + 6 * j);
      mbs_sv_shift_force(G + 6 * j, g, st->l + 3 * b);
    }
  }
  if (par != 0) mbs_sym6_shift_add(st->P + MBS_SYM6_SIZE * par, Pp, st->l + 3 * b, NULL, NULL);
  return MBS_OK;
singular:
  return MBS_FAIL(&st->err, MBS_ERR_SINGULAR, sys->body_name[b],
                  "body '%s': the articulated inertia across its mobilizer is singular (a "
                  "massless or inertia-free body at the end of a chain?)",
                  sys->body_name[b]);
}

static void abi_init(const mbs_system* sys, mbs_state* st) {
  for (int b = 1; b < sys->nbody; b++) mbs_sym6_from_rigid(st->P + MBS_SYM6_SIZE * b, &st->M_G[b]);
}

int mbs_realize_articulated_inertias(const mbs_system* sys, mbs_state* st) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  if (st->abi_valid) return MBS_OK;
  abi_init(sys, st);
  for (int b = sys->nbody - 1; b >= 1; b--)
    if ((rc = abi_body(sys, st, b))) return rc;
  st->abi_valid = 1;
  return MBS_OK;
}

//---------------------------------- forward dynamics -------------------------------------------

// Inward ABA step for body b: z (accumulated from the children) plus, with bias,
// P A_c + b - F; then e = f - H^T z, and the parent's z receives phi z+ = phi z + G_P e.
static void aba_inward_body(const mbs_system* sys, mbs_state* st, int b, double* z, double* eps,
                            const double* f, int with_bias) {
  const int nu = sys->body_nu[b], uadr = sys->body_uadr[b];
  const int par = sys->body_parent[b];
  double* zb = z + 6 * b;
  if (with_bias) {
    double PA[6];
    mbs_sym6_mul(PA, st->P + MBS_SYM6_SIZE * b, st->A_c + 6 * b);
    const double* gy = st->gyro + 6 * b;
    const double* F = st->F_body + 6 * b;
    for (int i = 0; i < 6; i++) zb[i] += PA[i] + gy[i] - F[i];
  }
  double* zp = par != 0 ? z + 6 * par : NULL;
  if (zp) mbs_sv_shift_force_add(zp, zb, st->l + 3 * b);
  if (nu == 1) {
    const double e = f[uadr] - mbs_sv_dot(st->H + 6 * uadr, zb);
    eps[uadr] = e;
    if (zp) {
      const double* G_P = st->G + 6 * uadr;
      for (int i = 0; i < 6; i++) zp[i] += G_P[i] * e;
    }
  } else if (nu > 0) {
    const double* H = st->H + 6 * uadr;
    double* e = eps + uadr;
    for (int j = 0; j < nu; j++) e[j] = f[uadr + j] - mbs_sv_dot(H + 6 * j, zb);
    if (zp) hinge_times_add(nu, st->G + 6 * uadr, e, zp);
  }
}

// Outward ABA sweep: u' = D^-1 e - G_P^T A_P, A = phi^T A_P + H u' (+ A_c with bias).
static void aba_outward(const mbs_system* sys, mbs_state* st, const double* eps, double* udot,
                        double* A, int with_bias) {
  mbs_sv_zero(A);
  for (int b = 1; b < sys->nbody; b++) {
    const int nu = sys->body_nu[b], uadr = sys->body_uadr[b];
    const double* AP = A + 6 * sys->body_parent[b];
    double* Ab = A + 6 * b;
    mbs_sv_shift_motion(Ab, AP, st->l + 3 * b);
    if (with_bias)
      for (int i = 0; i < 6; i++) Ab[i] += st->A_c[6 * b + i];
    if (nu == 1) {
      const double* H = st->H + 6 * uadr;
      const double ud = st->DI[sys->body_diadr[b]] * eps[uadr] - mbs_sv_dot(st->G + 6 * uadr, AP);
      udot[uadr] = ud;
      for (int i = 0; i < 6; i++) Ab[i] += H[i] * ud;
    } else if (nu > 0) {
      const double* H = st->H + 6 * uadr;
      const double* DI = st->DI + sys->body_diadr[b];
      double GA[6];
      hinge_t_times(nu, st->G + 6 * uadr, AP, GA);
      for (int i = 0; i < nu; i++) {
        double s = -GA[i];
        for (int k = 0; k < nu; k++) s += DI[i * nu + k] * eps[uadr + k];
        udot[uadr + i] = s;
      }
      hinge_times_add(nu, H, udot + uadr, Ab);
    }
  }
}

// The ABA sweeps. With `with_bias`, uses A_c, b and the applied forces of the State (forward
// dynamics); otherwise computes x = M^-1 f for the given f. If the articulated inertias are not
// valid yet, they are computed in the same inward sweep.
static int aba(const mbs_system* sys, mbs_state* st, const double* f, double* udot, int with_bias) {
  const int nb = sys->nbody;
  const size_t mark = mbs_stack_mark(st);
  double* z = MBS_STACK_ALLOC(st, 6 * nb, double);
  double* eps = MBS_STACK_ALLOC(st, sys->nu > 0 ? sys->nu : 1, double);
  double* A = with_bias ? st->A_GB : MBS_STACK_ALLOC(st, 6 * nb, double);
  if (!z || !eps || !A) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  memset(z, 0, 6 * (size_t)nb * sizeof(double));
  int rc = MBS_OK;
  if (st->abi_valid) {
    for (int b = nb - 1; b >= 1; b--) aba_inward_body(sys, st, b, z, eps, f, with_bias);
  } else {
    abi_init(sys, st);
    for (int b = nb - 1; b >= 1 && rc == MBS_OK; b--) {
      rc = abi_body(sys, st, b);
      if (rc == MBS_OK) aba_inward_body(sys, st, b, z, eps, f, with_bias);
    }
    st->abi_valid = rc == MBS_OK;
  }
  if (rc == MBS_OK) aba_outward(sys, st, eps, udot, A, with_bias);
  mbs_stack_release(st, mark);
  return rc;
}

int mbs_calc_forward_dynamics(const mbs_system* sys, mbs_state* st) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc || (rc = aba(sys, st, st->f_mob, st->udot, 1))) return rc;
  for (int i = 0; i < sys->nu; i++)
    if (!isfinite(st->udot[i])) {
      if ((rc = mbs_diagnose_forces(sys, st))) return rc;
      return MBS_FAIL(&st->err, MBS_ERR_NAN, sys->name,
                      "%s: forward dynamics gave a non-finite acceleration u'[%d]", sys->name, i);
    }
  return MBS_OK;
}

int mbs_calc_mass_matrix_inverse_times(const mbs_system* sys, mbs_state* st, const double* f,
                                       double* x) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  return aba(sys, st, f, x, 0);
}

//---------------------------------- mass matrix and inverse dynamics -------------------------

// One recursion for three operators: tau = M udot (+ C with `bias`) (- f_app - J^T F_app with
// `applied`): outward A = phi^T A_P + H udot (+ A_c); inward F_B = Mk A (+ b) (- F) + sum phi
// F_child; tau = H^T F_B (- f).
static int residual(const mbs_system* sys, mbs_state* st, const double* udot, double* tau,
                    int bias, int applied) {
  const int nb = sys->nbody;
  const size_t mark = mbs_stack_mark(st);
  double* A = MBS_STACK_ALLOC(st, 6 * nb, double);
  double* F = MBS_STACK_ALLOC(st, 6 * nb, double);
  if (!A || !F) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  mbs_sv_zero(A);
  for (int b = 1; b < nb; b++) {
    double* Ab = A + 6 * b;
    mbs_sv_shift_motion(Ab, A + 6 * sys->body_parent[b], st->l + 3 * b);
    const int uadr = sys->body_uadr[b];
    if (udot) hinge_times_add(sys->body_nu[b], st->H + 6 * uadr, udot + uadr, Ab);
    if (bias)
      for (int i = 0; i < 6; i++) Ab[i] += st->A_c[6 * b + i];
    double* Fb = F + 6 * b;
    mbs_rigid_inertia_mul(Fb, &st->M_G[b], Ab);
    if (bias)
      for (int i = 0; i < 6; i++) Fb[i] += st->gyro[6 * b + i];
    if (applied)
      for (int i = 0; i < 6; i++) Fb[i] -= st->F_body[6 * b + i];
  }
  for (int b = nb - 1; b >= 1; b--) {
    const int nu = sys->body_nu[b], uadr = sys->body_uadr[b];
    hinge_t_times(nu, st->H + 6 * uadr, F + 6 * b, tau + uadr);
    if (applied)
      for (int j = 0; j < nu; j++) tau[uadr + j] -= st->f_mob[uadr + j];
    const int par = sys->body_parent[b];
    if (par != 0) mbs_sv_shift_force_add(F + 6 * par, F + 6 * b, st->l + 3 * b);
  }
  mbs_stack_release(st, mark);
  return MBS_OK;
}


int mbs_calc_mass_matrix_times(const mbs_system* sys, mbs_state* st, const double* v, double* Mv) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  return residual(sys, st, v, Mv, 0, 0);
}

int mbs_calc_mass_matrix(const mbs_system* sys, mbs_state* st, double* M) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  const int nb = sys->nbody, n = sys->nu;
  const size_t mark = mbs_stack_mark(st);
  double* R = MBS_STACK_ALLOC(st, MBS_SYM6_SIZE * nb, double);  // composite-body inertias
  if (!R) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  for (int b = 1; b < nb; b++) mbs_sym6_from_rigid(R + MBS_SYM6_SIZE * b, &st->M_G[b]);
  for (int b = nb - 1; b >= 1; b--) {
    const int par = sys->body_parent[b];
    if (par != 0)
      mbs_sym6_shift_add(R + MBS_SYM6_SIZE * par, R + MBS_SYM6_SIZE * b, st->l + 3 * b, NULL, NULL);
  }
  for (int b = 1; b < nb; b++) {
    const int nub = sys->body_nu[b], ub = sys->body_uadr[b];
    const double* Hb = st->H + 6 * ub;
    for (int j = 0; j < nub; j++) {
      double F[6];
      mbs_sym6_mul(F, R + MBS_SYM6_SIZE * b, Hb + 6 * j);
      for (int i = 0; i <= j; i++) {  // diagonal block, filled symmetrically
        const double m = mbs_sv_dot(Hb + 6 * i, F);
        M[(ub + i) * n + ub + j] = m;
        M[(ub + j) * n + ub + i] = m;
      }
      // walk to the root, shifting the force to each ancestor's origin
      for (int a = b; sys->body_parent[a] != 0;) {
        double Fs[6];
        mbs_sv_shift_force(Fs, F, st->l + 3 * a);
        memcpy(F, Fs, sizeof(F));
        a = sys->body_parent[a];
        const int ua = sys->body_uadr[a];
        for (int i = 0; i < sys->body_nu[a]; i++) {
          const double m = mbs_sv_dot(st->H + 6 * (ua + i), F);
          M[(ua + i) * n + ub + j] = m;
          M[(ub + j) * n + ua + i] = m;
        }
      }
    }
  }
  mbs_stack_release(st, mark);
  return MBS_OK;
}

int mbs_calc_inverse_dynamics(const mbs_system* sys, mbs_state* st, const double* udot,
                              double* tau) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  return residual(sys, st, udot, tau, 1, 1);
}

int mbs_calc_bias_forces(const mbs_system* sys, mbs_state* st, double* C) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__);
  if (rc) return rc;
  return residual(sys, st, NULL, C, 1, 0);
}

//---------------------------------- Jacobians --------------------------------------------------

int mbs_calc_jacobian_times(const mbs_system* sys, mbs_state* st, const double* u, double* V) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  mbs_sv_zero(V);
  for (int b = 1; b < sys->nbody; b++) {
    double* Vb = V + 6 * b;
    mbs_sv_shift_motion(Vb, V + 6 * sys->body_parent[b], st->l + 3 * b);
    const int uadr = sys->body_uadr[b];
    hinge_times_add(sys->body_nu[b], st->H + 6 * uadr, u + uadr, Vb);
  }
  return MBS_OK;
}

int mbs_calc_jacobian_transpose_times(const mbs_system* sys, mbs_state* st, const double* F,
                                      double* f) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  const int nb = sys->nbody;
  const size_t mark = mbs_stack_mark(st);
  double* z = MBS_STACK_ALLOC(st, 6 * nb, double);
  if (!z) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  memcpy(z, F, 6 * (size_t)nb * sizeof(double));
  for (int b = nb - 1; b >= 1; b--) {
    const int uadr = sys->body_uadr[b];
    hinge_t_times(sys->body_nu[b], st->H + 6 * uadr, z + 6 * b, f + uadr);
    const int par = sys->body_parent[b];
    if (par != 0) mbs_sv_shift_force_add(z + 6 * par, z + 6 * b, st->l + 3 * b);
  }
  mbs_stack_release(st, mark);
  return MBS_OK;
}

int mbs_calc_station_jacobian(const mbs_system* sys, mbs_state* st, int body,
                              const double p_BS[3], double* J) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  if (body < 0 || body >= sys->nbody)
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, sys->name, "%s: body %d does not exist",
                    __func__, body);
  const int n = sys->nu;
  memset(J, 0, 3 * (size_t)n * sizeof(double));
  double pS[3];
  mbs_tf_point(pS, &st->X_GB[body], p_BS);
  // each ancestor's speeds move the station rigidly with that ancestor
  for (int a = body; a != 0; a = sys->body_parent[a]) {
    double r[3];
    mbs_v3_sub(r, pS, st->X_GB[a].p);
    const int ua = sys->body_uadr[a];
    for (int j = 0; j < sys->body_nu[a]; j++) {
      const double* h = st->H + 6 * (ua + j);
      double v[3];
      mbs_v3_cross(v, h, r);
      mbs_v3_add(v, v, h + 3);
      for (int i = 0; i < 3; i++) J[i * n + ua + j] = v[i];
    }
  }
  return MBS_OK;
}

//---------------------------------- kinematic maps ---------------------------------------------

// q' = N u (forward) or u = N^-1 q' (inverse), body by body
static int map_qdot(const mbs_system* sys, mbs_state* st, const double* in, double* out,
                    int inverse, const char* func) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, func);
  if (rc) return rc;
  mbs_mob_ctx c;
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
    const int qa = sys->body_qadr[b], ua = sys->body_uadr[b];
    mbs_mob_ctx_init(&c, sys, st, b);
    if (!inverse && ops->qdot) ops->qdot(&c, st->q + qa, in + ua, out + qa);
    else if (inverse && ops->u_from_qdot) ops->u_from_qdot(&c, st->q + qa, in + qa, out + ua);
    else if (inverse) memcpy(out + ua, in + qa, (size_t)sys->body_nu[b] * sizeof(double));
    else memcpy(out + qa, in + ua, (size_t)sys->body_nu[b] * sizeof(double));
  }
  return MBS_OK;
}

int mbs_calc_qdot(const mbs_system* sys, mbs_state* st, const double* u, double* qdot) {
  return map_qdot(sys, st, u, qdot, 0, __func__);
}

int mbs_calc_u_from_qdot(const mbs_system* sys, mbs_state* st, const double* qdot, double* u) {
  return map_qdot(sys, st, qdot, u, 1, __func__);
}
