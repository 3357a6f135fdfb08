// Realization of a State, stage by stage (Simbody Theory Manual §7), and the stage-checked
// result getters.
//
// Position (outward):  X_PB = X_PF X_FM(q) X_MB,  X_GB = X_GP X_PB,  l = p_GB - p_GP,
//   H = R_GF phi(r_F)^T H_FM (hinge matrix of B's origin, re-expressed in G; r_F = R_FM p_MB),
//   spatial inertia about B's origin re-expressed in G.
// Velocity (outward):  V_GB = phi(l)^T V_GP + H u,
//   Coriolis acceleration A_c = [(HDot u)_w ; (HDot u)_v + w_P x (v_B - v_P)], with
//   HDot u = w_P x (H u) + R_GF (HDot_FM u + [0; HDot_FM,w u x r_F + w_FM x (w_FM x r_F)]),
//   gyroscopic force [w x I w ; m w x (w x c)].
// The derivation of A_c is in the Theory Manual §5.2 (eqs 5.23-5.29) and §12.
#include <stdio.h>
#include <string.h>

#include "model_impl.h"
#include "path_impl.h"

void mbs_mob_ctx_init(mbs_mob_ctx* c, const mbs_system* sys, const mbs_state* st, int b) {
  c->sys = sys;
  c->st = st;
  c->body = b;
  c->nq = sys->body_nq[b];
  c->nu = sys->body_nu[b];
  c->param = st->param + sys->body_param_adr[b] + MBS_BP_MOB;
  c->pool = st->pool + sys->body_pool_adr[b];
}

static int all_finite(const double* v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

static int check_system(const mbs_system* sys, mbs_state* st, const char* func) {
  if (!sys || !st) return MBS_ERR_ARGUMENT;
  if (!sys->finalized)
    return mbs_error_set(&st->err, MBS_ERR_NOT_FINALIZED, func, __LINE__, sys->name,
                         "%s: system '%s' is not finalized", func, sys->name);
  if (st->sys != sys)
    return mbs_error_set(&st->err, MBS_ERR_SYSTEM_MISMATCH, func, __LINE__, sys->name,
                         "%s: the state belongs to another system", func);
  return MBS_OK;
}

//---------------------------------- Instance ---------------------------------------------------

static int realize_instance_bodies(const mbs_system* sys, mbs_state* st) {
  for (int b = 1; b < sys->nbody; b++) {
    const double* p = st->param + sys->body_param_adr[b];
    const char* name = sys->body_name[b];
    char comp[MBS_ERROR_COMPONENT_LEN];
    snprintf(comp, sizeof(comp), "body '%s'", name);
    const double m = p[MBS_BP_MASS];
    if (!isfinite(m) || m < 0)
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: mass %g is negative or not finite",
                      comp, m);
    double I_C[9];
    mbs_inertia_from_moments(I_C, p + MBS_BP_INERTIA);
    if (!all_finite(p + MBS_BP_COM, 3))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: mass center is not finite", comp);
    if (!mbs_inertia_is_physical(I_C))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp,
                      "%s: inertia (%g %g %g %g %g %g) is not physical (it must be positive "
                      "semidefinite with principal moments obeying the triangle inequality)",
                      comp, p[MBS_BP_INERTIA], p[MBS_BP_INERTIA + 1], p[MBS_BP_INERTIA + 2],
                      p[MBS_BP_INERTIA + 3], p[MBS_BP_INERTIA + 4], p[MBS_BP_INERTIA + 5]);
    if (!all_finite(p + MBS_BP_PF_ANGLES, 12))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: joint frames are not finite", comp);
    const mbs_mobilizer_type t = sys->body_mob[b];
    if (t == MBS_MOB_SCREW && !isfinite(p[MBS_BP_MOB]))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: screw pitch is not finite", comp);
    if ((t == MBS_MOB_ELLIPSOID || t == MBS_MOB_ELLIPSOID_XYZ) &&
        (!all_finite(p + MBS_BP_MOB, 3) || p[MBS_BP_MOB] < 0 || p[MBS_BP_MOB + 1] < 0 ||
         p[MBS_BP_MOB + 2] < 0))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp,
                      "%s: ellipsoid radii must be finite and not negative", comp);

    mbs_tf_from_xyz(&st->X_PF[b], p + MBS_BP_PF_ANGLES, p + MBS_BP_PF_P);
    mbs_tf_from_xyz(&st->X_BM[b], p + MBS_BP_BM_ANGLES, p + MBS_BP_BM_P);
    mbs_tf_inverse(&st->X_MB[b], &st->X_BM[b]);
    unsigned char fl = 0;
    const double* a = p + MBS_BP_PF_ANGLES;
    if (a[0] == 0 && a[1] == 0 && a[2] == 0) fl |= MBS_BF_PF_NO_ROT;
    const double* bm = p + MBS_BP_BM_ANGLES;
    if (bm[0] == 0 && bm[1] == 0 && bm[2] == 0 && bm[3] == 0 && bm[4] == 0 && bm[5] == 0)
      fl |= MBS_BF_BM_IDENTITY;
    st->flags[b] = fl;
    mbs_rigid_inertia* M = &st->M_B[b];
    M->m = m;
    mbs_v3_copy(M->c, p + MBS_BP_COM);
    mbs_inertia_shift_from_com(M->Io, m, M->c, I_C);
  }
  return MBS_OK;
}

static int realize_instance_functions(const mbs_system* sys, mbs_state* st) {
  for (int f = 0; f < sys->nfunc; f++) {
    const mbs_func_desc* fd = &sys->func[f];
    char comp[MBS_ERROR_COMPONENT_LEN];
    snprintf(comp, sizeof(comp), "function '%s'", fd->name);
    if (fd->type == MBS_FUNC_MULTIPLIER) {
      if (!isfinite(st->param[fd->param_adr]))
        return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: scale is not finite", comp);
      continue;
    }
    const int rc = mbs_function_prepare(fd->type, fd->n, st->param + fd->param_adr,
                                        st->func_cache + fd->cache_adr, &st->err, comp);
    if (rc) return rc;
  }
  return MBS_OK;
}

int mbs_realize_instance(const mbs_system* sys, mbs_state* st) {
  int rc = check_system(sys, st, __func__);
  if (rc) return rc;
  if (st->stage >= MBS_STAGE_INSTANCE) return MBS_OK;
  st->stage = MBS_STAGE_MODEL;
  if ((rc = realize_instance_bodies(sys, st))) return rc;
  if ((rc = realize_instance_functions(sys, st))) return rc;
  if ((rc = mbs_paths_realize_instance(sys, st))) return rc;
  if ((rc = mbs_controllers_realize_instance(sys, st))) return rc;
  if ((rc = mbs_check_force_params(sys, st))) return rc;
  if ((rc = mbs_constraints_realize_instance(sys, st))) return rc;
  // Ground: at rest at the origin, no mass
  mbs_tf_identity(&st->X_GB[0]);
  mbs_tf_identity(&st->X_FM[0]);
  mbs_m33_identity(st->R_GF);
  mbs_v3_zero(st->l);
  mbs_v3_zero(st->r_F);
  memset(&st->M_G[0], 0, sizeof(st->M_G[0]));
  mbs_sv_zero(st->V_GB);
  mbs_sv_zero(st->gyro);
  mbs_sv_zero(st->A_c);
  mbs_sv_zero(st->A_GB);
  memset(st->P, 0, MBS_SYM6_SIZE * sizeof(double));
  st->stage = MBS_STAGE_INSTANCE;
  return MBS_OK;
}

//---------------------------------- Time -------------------------------------------------------

int mbs_realize_time(const mbs_system* sys, mbs_state* st) {
  int rc = mbs_realize_instance(sys, st);
  if (rc) return rc;
  if (st->stage >= MBS_STAGE_TIME) return MBS_OK;
  if (!isfinite(st->vars[0]))
    return MBS_FAIL(&st->err, MBS_ERR_NAN, sys->name, "%s: time is not finite", sys->name);
  st->stage = MBS_STAGE_TIME;
  return MBS_OK;
}

//---------------------------------- Position ---------------------------------------------------

static int bad_coordinate(const mbs_system* sys, mbs_state* st, const double* x, int n,
                          const char* what) {
  for (int i = 0; i < n; i++) {
    if (isfinite(x[i])) continue;
    int b = 1;
    const int* adr = what[0] == 'q' ? sys->body_qadr : sys->body_uadr;
    const int* cnt = what[0] == 'q' ? sys->body_nq : sys->body_nu;
    while (b < sys->nbody && !(i >= adr[b] && i < adr[b] + cnt[b])) b++;
    char comp[MBS_ERROR_COMPONENT_LEN];
    snprintf(comp, sizeof(comp), "body '%s'", b < sys->nbody ? sys->body_name[b] : "?");
    return MBS_FAIL(&st->err, MBS_ERR_NAN, comp, "%s: %s[%d] is not finite (%g)", comp, what, i,
                    x[i]);
  }
  return MBS_OK;
}

int mbs_realize_position(const mbs_system* sys, mbs_state* st) {
  int rc = mbs_realize_time(sys, st);
  if (rc) return rc;
  if (st->stage >= MBS_STAGE_POSITION) return MBS_OK;
  if ((rc = bad_coordinate(sys, st, st->q, sys->nq, "q"))) return rc;
  mbs_mob_ctx ctx;
  for (int b = 1; b < sys->nbody; b++) {
    const int par = sys->body_parent[b];
    const int nu = sys->body_nu[b];
    const unsigned char fl = st->flags[b];
    mbs_transform* X_FM = &st->X_FM[b];
    double* H_FM = st->H_FM + 6 * sys->body_uadr[b];
    if (sys->body_mob[b] == MBS_MOB_PIN) {  // the most common joint: no indirect call
      mbs_mob_pin.position(NULL, st->q + sys->body_qadr[b], X_FM->R, X_FM->p, H_FM);
    } else {
      mbs_mob_ctx_init(&ctx, sys, st, b);
      mbs_mobilizer_ops_of(sys->body_mob[b])->position(&ctx, st->q + sys->body_qadr[b], X_FM->R,
                                                       X_FM->p, H_FM);
    }

    // X_FB = X_FM X_MB; r_F = p_MB in F (from M's origin to B's origin)
    double* r_F = st->r_F + 3 * b;
    const double* R_FB = X_FM->R;
    const double* p_FB = X_FM->p;
    double R_FB_[9], p_FB_[3];
    if (fl & MBS_BF_BM_IDENTITY) {
      mbs_v3_zero(r_F);
    } else if (sys->body_mob[b] == MBS_MOB_PIN) {  // X_FB is not needed by the pin's path below
      const double c = X_FM->R[0], sn = X_FM->R[3], *p = st->X_MB[b].p;
      mbs_v3_set(r_F, c * p[0] - sn * p[1], sn * p[0] + c * p[1], p[2]);
    } else {
      mbs_m33_vec(r_F, X_FM->R, st->X_MB[b].p);
      mbs_m33_mul(R_FB_, X_FM->R, st->X_MB[b].R);
      mbs_v3_add(p_FB_, X_FM->p, r_F);
      R_FB = R_FB_;
      p_FB = p_FB_;
    }
    // F in G: R_GF = R_GP R_PF, p_GF = p_GP + R_GP p_PF; then X_GB = X_GF X_FB
    const mbs_transform* X_GP = &st->X_GB[par];
    double* R_GF = st->R_GF + 9 * b;
    if (fl & MBS_BF_PF_NO_ROT) mbs_m33_copy(R_GF, X_GP->R);
    else mbs_m33_mul(R_GF, X_GP->R, st->X_PF[b].R);
    double p_GF[3], t[3];
    int nu_done = 0;  // hinge columns already filled by a fast path
    mbs_m33_vec(p_GF, X_GP->R, st->X_PF[b].p);
    mbs_v3_add(p_GF, p_GF, X_GP->p);
    mbs_transform* X_GB = &st->X_GB[b];
    double* H = st->H + 6 * sys->body_uadr[b];
    if (sys->body_mob[b] == MBS_MOB_PIN && (fl & MBS_BF_BM_IDENTITY)) {
      // pin, M = B: R_GB = R_GF Rz(q) mixes two columns; p_GB = p_GF; H = [z_F in G; 0]
      const double c = X_FM->R[0], sn = X_FM->R[3];
      for (int i = 0; i < 3; i++) {
        const double g0 = R_GF[3 * i], g1 = R_GF[3 * i + 1];
        X_GB->R[3 * i] = c * g0 + sn * g1;
        X_GB->R[3 * i + 1] = c * g1 - sn * g0;
        X_GB->R[3 * i + 2] = R_GF[3 * i + 2];
      }
      mbs_v3_copy(X_GB->p, p_GF);
      mbs_v3_sub(st->l + 3 * b, X_GB->p, X_GP->p);
      H[0] = R_GF[2]; H[1] = R_GF[5]; H[2] = R_GF[8];
      H[3] = H[4] = H[5] = 0;
      nu_done = 1;
    } else if (sys->body_mob[b] == MBS_MOB_PIN) {
      // pin with a general M frame (OpenSim's usual joint): R_GM = R_GF Rz(q) mixes two columns,
      // R_GB = R_GM R_MB, p_GB = p_GF + R_GM p_MB, H = [z; z x (R_GM p_MB)] with z = z_F in G
      const double c = X_FM->R[0], sn = X_FM->R[3];
      double R_GM[9];
      for (int i = 0; i < 3; i++) {
        const double g0 = R_GF[3 * i], g1 = R_GF[3 * i + 1];
        R_GM[3 * i] = c * g0 + sn * g1;
        R_GM[3 * i + 1] = c * g1 - sn * g0;
        R_GM[3 * i + 2] = R_GF[3 * i + 2];
      }
      mbs_m33_mul(X_GB->R, R_GM, st->X_MB[b].R);
      mbs_m33_vec(t, R_GM, st->X_MB[b].p);
      mbs_v3_add(X_GB->p, p_GF, t);
      mbs_v3_sub(st->l + 3 * b, X_GB->p, X_GP->p);
      H[0] = R_GF[2]; H[1] = R_GF[5]; H[2] = R_GF[8];
      mbs_v3_cross(H + 3, H, t);
      nu_done = 1;
    } else {
      mbs_m33_mul(X_GB->R, R_GF, R_FB);
      mbs_m33_vec(t, R_GF, p_FB);
      mbs_v3_add(X_GB->p, p_GF, t);
      mbs_v3_sub(st->l + 3 * b, X_GB->p, X_GP->p);
    }

    // hinge matrix of B's origin, in G
    for (int j = nu_done; j < nu; j++) {
      const double* hf = H_FM + 6 * j;
      double hv[3];
      mbs_v3_copy(hv, hf + 3);
      mbs_v3_cross_add(hv, hf, r_F);
      mbs_m33_vec(H + 6 * j, R_GF, hf);
      mbs_m33_vec(H + 6 * j + 3, R_GF, hv);
    }

    // spatial inertia about B's origin, in G
    mbs_rigid_inertia* M = &st->M_G[b];
    M->m = st->M_B[b].m;
    mbs_m33_vec(M->c, X_GB->R, st->M_B[b].c);
    mbs_inertia_rotate(M->Io, X_GB->R, st->M_B[b].Io);
  }
  st->stage = MBS_STAGE_POSITION;
  st->abi_valid = 0;
  return MBS_OK;
}

//---------------------------------- Velocity ---------------------------------------------------

int mbs_realize_velocity(const mbs_system* sys, mbs_state* st) {
  int rc = mbs_realize_position(sys, st);
  if (rc) return rc;
  if (st->stage >= MBS_STAGE_VELOCITY) return MBS_OK;
  if ((rc = bad_coordinate(sys, st, st->u, sys->nu, "u"))) return rc;
  mbs_mob_ctx ctx;
  for (int b = 1; b < sys->nbody; b++) {
    const int par = sys->body_parent[b];
    const int nu = sys->body_nu[b];
    const int uadr = sys->body_uadr[b];
    const double* u = st->u + uadr;
    const double* H_FM = st->H_FM + 6 * uadr;
    const double* H = st->H + 6 * uadr;
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);

    double HU[6];  // H u: velocity of B relative to P, in G
    if (nu == 1) {
      for (int i = 0; i < 6; i++) HU[i] = H[i] * u[0];
    } else {
      mbs_sv_zero(HU);
      for (int j = 0; j < nu; j++)
        for (int i = 0; i < 6; i++) HU[i] += H[6 * j + i] * u[j];
    }
    const double* VP = st->V_GB + 6 * par;
    const double* wP = VP;
    const double* l = st->l + 3 * b;
    double* V = st->V_GB + 6 * b;
    mbs_sv_shift_motion(V, VP, l);
    for (int i = 0; i < 6; i++) V[i] += HU[i];

    // A_c = w_P x (H u) + R_GF (HDot^B u) + [0; w_P x (v_B - v_P)], with HDot^B u the
    // mobilizer's HDot_FM u carried over to B's origin (derivatives in F)
    double* Ac = st->A_c + 6 * b;
    double t[3], wr[3];
    const int bm_identity = st->flags[b] & MBS_BF_BM_IDENTITY;
    if (sys->body_mob[b] == MBS_MOB_PIN && !bm_identity) {
      // w x (w x r) with w = z u and r from the axis to B's origin, in G: z x r = H_v, so it
      // is u^2 (z x H_v) (no HDot for a pin)
      mbs_v3_zero(Ac);
      mbs_v3_cross(Ac + 3, H, H + 3);
      mbs_v3_scale(Ac + 3, Ac + 3, u[0] * u[0]);
    } else if (ops->hdot_u || !bm_identity) {
      double HDu[6] = {0, 0, 0, 0, 0, 0};
      if (ops->hdot_u) {
        mbs_mob_ctx_init(&ctx, sys, st, b);
        ops->hdot_u(&ctx, st->q + sys->body_qadr[b], u, HDu);
      }
      if (!bm_identity) {
        double V_FM[6] = {0, 0, 0, 0, 0, 0};  // H_FM u: velocity of M in F, in F
        for (int j = 0; j < nu; j++)
          for (int i = 0; i < 6; i++) V_FM[i] += H_FM[6 * j + i] * u[j];
        const double* r_F = st->r_F + 3 * b;
        mbs_v3_cross_add(HDu + 3, HDu, r_F);
        mbs_v3_cross(wr, V_FM, r_F);
        mbs_v3_cross(t, V_FM, wr);
        mbs_v3_add(HDu + 3, HDu + 3, t);
      }
      mbs_sv_rotate(Ac, st->R_GF + 9 * b, HDu);
    } else {
      mbs_sv_zero(Ac);
    }
    mbs_v3_cross_add(Ac, wP, HU);
    mbs_v3_cross_add(Ac + 3, wP, HU + 3);
    double dv[3];
    mbs_v3_sub(dv, V + 3, VP + 3);
    mbs_v3_cross_add(Ac + 3, wP, dv);

    // gyroscopic force [w x (I w); m w x (w x c)]
    const mbs_rigid_inertia* M = &st->M_G[b];
    double* gy = st->gyro + 6 * b;
    double Iw[3];
    mbs_m33_vec(Iw, M->Io, V);
    mbs_v3_cross(gy, V, Iw);
    mbs_v3_cross(wr, V, M->c);
    mbs_v3_cross(t, V, wr);
    mbs_v3_scale(gy + 3, t, M->m);

    // q'
    double* qd = st->qdot + sys->body_qadr[b];
    if (ops->qdot) {
      mbs_mob_ctx_init(&ctx, sys, st, b);
      ops->qdot(&ctx, st->q + sys->body_qadr[b], u, qd);
    } else if (nu == 1) {
      qd[0] = u[0];
    } else {
      for (int j = 0; j < nu; j++) qd[j] = u[j];
    }
  }
  st->stage = MBS_STAGE_VELOCITY;
  return MBS_OK;
}

//---------------------------------- Dynamics ---------------------------------------------------

int mbs_realize_dynamics(const mbs_system* sys, mbs_state* st) {
  int rc = mbs_realize_velocity(sys, st);
  if (rc) return rc;
  if (st->stage >= MBS_STAGE_DYNAMICS) return MBS_OK;
  if ((rc = mbs_calc_applied_forces(sys, st, st->F_body, st->f_mob))) return rc;
  st->stage = MBS_STAGE_DYNAMICS;
  return MBS_OK;
}

//---------------------------------- Acceleration -----------------------------------------------

int mbs_realize_acceleration(const mbs_system* sys, mbs_state* st) {
  int rc = mbs_realize_dynamics(sys, st);
  if (rc) return rc;
  if (st->stage >= MBS_STAGE_ACCELERATION) return MBS_OK;
  if ((rc = mbs_calc_forward_dynamics(sys, st))) return rc;
  if ((rc = mbs_constraints_solve_accelerations(sys, st))) return rc;
  mbs_mob_ctx ctx;
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
    const int qadr = sys->body_qadr[b], uadr = sys->body_uadr[b];
    if (ops->qdotdot) {
      mbs_mob_ctx_init(&ctx, sys, st, b);
      ops->qdotdot(&ctx, st->q + qadr, st->u + uadr, st->udot + uadr, st->qdotdot + qadr);
    } else {
      for (int j = 0; j < sys->body_nu[b]; j++) st->qdotdot[qadr + j] = st->udot[uadr + j];
    }
  }
  st->stage = MBS_STAGE_ACCELERATION;
  return MBS_OK;
}

int mbs_realize(const mbs_system* sys, mbs_state* st, mbs_stage stage) {
  switch (stage) {
    case MBS_STAGE_EMPTY:
    case MBS_STAGE_TOPOLOGY:
      return check_system(sys, st, __func__);
    case MBS_STAGE_MODEL:
    case MBS_STAGE_INSTANCE:
      return mbs_realize_instance(sys, st);
    case MBS_STAGE_TIME:
      return mbs_realize_time(sys, st);
    case MBS_STAGE_POSITION:
      return mbs_realize_position(sys, st);
    case MBS_STAGE_VELOCITY:
      return mbs_realize_velocity(sys, st);
    case MBS_STAGE_DYNAMICS:
      return mbs_realize_dynamics(sys, st);
    case MBS_STAGE_ACCELERATION:
      return mbs_realize_acceleration(sys, st);
    case MBS_STAGE_REPORT: {
      const int rc = mbs_realize_acceleration(sys, st);
      if (rc == MBS_OK) st->stage = MBS_STAGE_REPORT;
      return rc;
    }
    case MBS_STAGE_COUNT:
      break;
  }
  return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, sys->name, "mbs_realize: unknown stage %d",
                  (int)stage);
}

//---------------------------------- results ----------------------------------------------------

static int check_body_index(const mbs_system* sys, mbs_state* st, int body, const char* func) {
  if (body < 0 || body >= sys->nbody)
    return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, func, __LINE__, sys->name,
                         "%s: body %d does not exist (0..%d)", func, body, sys->nbody - 1);
  return MBS_OK;
}

int mbs_get_body_transform(const mbs_system* sys, const mbs_state* cst, int body, double R_GB[9],
                           double p_GB[3]) {
  mbs_state* st = (mbs_state*)cst;  // only the error record is written
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc || (rc = check_body_index(sys, st, body, __func__))) return rc;
  if (R_GB) mbs_m33_copy(R_GB, st->X_GB[body].R);
  if (p_GB) mbs_v3_copy(p_GB, st->X_GB[body].p);
  return MBS_OK;
}

int mbs_get_station_location(const mbs_system* sys, const mbs_state* cst, int body,
                             const double p_BS[3], double p_G[3]) {
  mbs_state* st = (mbs_state*)cst;
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc || (rc = check_body_index(sys, st, body, __func__))) return rc;
  mbs_tf_point(p_G, &st->X_GB[body], p_BS);
  return MBS_OK;
}

int mbs_get_body_velocity(const mbs_system* sys, const mbs_state* cst, int body, double V[6]) {
  mbs_state* st = (mbs_state*)cst;
  int rc = mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__);
  if (rc || (rc = check_body_index(sys, st, body, __func__))) return rc;
  mbs_sv_copy(V, st->V_GB + 6 * body);
  return MBS_OK;
}

int mbs_get_body_acceleration(const mbs_system* sys, const mbs_state* cst, int body, double A[6]) {
  mbs_state* st = (mbs_state*)cst;
  int rc = mbs_check_stage(sys, st, MBS_STAGE_ACCELERATION, __func__);
  if (rc || (rc = check_body_index(sys, st, body, __func__))) return rc;
  mbs_sv_copy(A, st->A_GB + 6 * body);
  return MBS_OK;
}

const double* mbs_get_qdot(const mbs_system* sys, mbs_state* st) {
  return mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__) ? NULL : st->qdot;
}
const double* mbs_get_zdot(const mbs_system* sys, mbs_state* st) {
  return mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__) ? NULL : st->zdot;
}
const double* mbs_get_udot(const mbs_system* sys, mbs_state* st) {
  return mbs_check_stage(sys, st, MBS_STAGE_ACCELERATION, __func__) ? NULL : st->udot;
}
const double* mbs_get_qdotdot(const mbs_system* sys, mbs_state* st) {
  return mbs_check_stage(sys, st, MBS_STAGE_ACCELERATION, __func__) ? NULL : st->qdotdot;
}
const double* mbs_get_mobility_forces(const mbs_system* sys, mbs_state* st) {
  return mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__) ? NULL : st->f_mob;
}
const double* mbs_get_body_forces(const mbs_system* sys, mbs_state* st) {
  return mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__) ? NULL : st->F_body;
}
