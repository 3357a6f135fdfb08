// Basic force elements: uniform gravity, constant mobility forces, constant body forces and
// torques, two-point linear springs and dampers, mobility linear springs and dampers.
//
// Body forces are spatial forces [moment; force] in Ground about each body's origin; a force f
// at a station S adds [r x f; f] with r = p_GS - p_GB.
#include <stdio.h>
#include <string.h>

#include "model_impl.h"

int mbs_check_force_params(const mbs_system* sys, mbs_state* st) {
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_desc* f = &sys->force[i];
    const double* p = st->param + f->param_adr;
    int np = 0, nonneg = 0;  // parameters to check; how many trailing ones must be >= 0
    switch (f->type) {
      case MBS_FORCE_GRAVITY: np = 3; break;
      case MBS_FORCE_MOBILITY: np = 1; break;
      case MBS_FORCE_BODY_FORCE: np = 6; break;
      case MBS_FORCE_BODY_TORQUE: np = 3; break;
      case MBS_FORCE_SPRING: np = 8; nonneg = 2; break;
      case MBS_FORCE_DAMPER: np = 7; nonneg = 1; break;
      case MBS_FORCE_MOBILITY_SPRING: np = 2; break;
      case MBS_FORCE_MOBILITY_DAMPER: np = 1; nonneg = 1; break;
    }
    if (f->type == MBS_FORCE_MOBILITY_SPRING && !(p[0] >= 0))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, f->name,
                      "force '%s': stiffness %g must be finite and not negative", f->name, p[0]);
    for (int k = 0; k < np; k++) {
      if (!isfinite(p[k]))
        return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, f->name,
                        "force '%s': parameter %d is not finite", f->name, k);
      if (k >= np - nonneg && p[k] < 0)
        return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, f->name,
                        "force '%s': parameter %d is %g, it must not be negative", f->name, k,
                        p[k]);
    }
  }
  return MBS_OK;
}

// add a force f (in G) acting at point pS (in G) on body b
static void add_point_force(const mbs_state* st, double* F_body, int b, const double pS[3],
                            const double f[3]) {
  if (b == 0) return;
  double r[3];
  double* F = F_body + 6 * b;
  mbs_v3_sub(r, pS, st->X_GB[b].p);
  mbs_v3_cross_add(F, r, f);
  mbs_v3_add(F + 3, F + 3, f);
}

// station p_BS of body b: location and velocity in G
static void station_kinematics(const mbs_state* st, int b, const double p_BS[3], double p[3],
                               double v[3]) {
  double r[3];
  mbs_m33_vec(r, st->X_GB[b].R, p_BS);
  mbs_v3_add(p, st->X_GB[b].p, r);
  if (v) {
    const double* V = st->V_GB + 6 * b;
    mbs_v3_cross(v, V, r);
    mbs_v3_add(v, v, V + 3);
  }
}

// A spring on coordinate q_k with potential k (q_k - q0)^2 / 2 applies the generalized force
// -N^T grad(PE) = -k (q_k - q0) N[k][:] in u-space (q' = N u), so that it is conservative also
// where q' != u (X-Y-Z angle coordinates of ball, free and ellipsoid mobilizers).
static void mobility_spring(const mbs_system* sys, const mbs_state* st, const mbs_force_desc* fd,
                            double dpe_dq, double* f_mob) {
  const int b = fd->body1;
  const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
  if (!ops->qdot) {  // q' = u
    f_mob[fd->uindex] -= dpe_dq;
    return;
  }
  const int nu = sys->body_nu[b], qadr = sys->body_qadr[b], uadr = sys->body_uadr[b];
  const int k = fd->qindex - qadr;
  mbs_mob_ctx c;
  mbs_mob_ctx_init(&c, sys, st, b);
  double e[6] = {0, 0, 0, 0, 0, 0}, col[7];
  for (int j = 0; j < nu; j++) {  // column j of N
    e[j] = 1;
    ops->qdot(&c, st->q + qadr, e, col);
    e[j] = 0;
    f_mob[uadr + j] -= dpe_dq * col[k];
  }
}

int mbs_calc_applied_forces(const mbs_system* sys, mbs_state* st, double* F_body, double* f_mob) {
  const int nb = sys->nbody;
  memcpy(F_body, st->F_applied, 6 * (size_t)nb * sizeof(double));
  memcpy(f_mob, st->f_applied, (size_t)sys->nu * sizeof(double));
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_desc* fd = &sys->force[i];
    const double* p = st->param + fd->param_adr;
    switch (fd->type) {
      case MBS_FORCE_GRAVITY:
        for (int b = 1; b < nb; b++) {
          const mbs_rigid_inertia* M = &st->M_G[b];
          double* F = F_body + 6 * b;
          const double w[3] = {M->m * p[0], M->m * p[1], M->m * p[2]};
          mbs_v3_cross_add(F, M->c, w);
          mbs_v3_add(F + 3, F + 3, w);
        }
        break;
      case MBS_FORCE_MOBILITY:
        f_mob[fd->uindex] += p[0];
        break;
      case MBS_FORCE_BODY_FORCE: {
        double pS[3];
        station_kinematics(st, fd->body1, p, pS, NULL);
        add_point_force(st, F_body, fd->body1, pS, p + 3);
        break;
      }
      case MBS_FORCE_BODY_TORQUE:
        if (fd->body1 != 0) mbs_v3_add(F_body + 6 * fd->body1, F_body + 6 * fd->body1, p);
        break;
      case MBS_FORCE_SPRING:
      case MBS_FORCE_DAMPER: {
        double p1[3], p2[3], v1[3], v2[3], d[3];
        station_kinematics(st, fd->body1, p, p1, v1);
        station_kinematics(st, fd->body2, p + 3, p2, v2);
        mbs_v3_sub(d, p2, p1);
        const double L = mbs_v3_norm(d);
        if (L == 0) break;  // direction undefined: no force
        mbs_v3_scale(d, d, 1.0 / L);
        double tension;
        if (fd->type == MBS_FORCE_SPRING) {
          tension = p[6] * (L - p[7]);
        } else {
          double dv[3];
          mbs_v3_sub(dv, v2, v1);
          tension = p[6] * mbs_v3_dot(dv, d);
        }
        double f[3];
        mbs_v3_scale(f, d, tension);  // pulls body 1 toward body 2
        add_point_force(st, F_body, fd->body1, p1, f);
        mbs_v3_scale(f, f, -1.0);
        add_point_force(st, F_body, fd->body2, p2, f);
        break;
      }
      case MBS_FORCE_MOBILITY_SPRING:
        mobility_spring(sys, st, fd, p[0] * (st->q[fd->qindex] - p[1]), f_mob);
        break;
      case MBS_FORCE_MOBILITY_DAMPER:
        f_mob[fd->uindex] -= p[0] * st->u[fd->uindex];
        break;
    }
  }
  return MBS_OK;
}

int mbs_diagnose_forces(const mbs_system* sys, mbs_state* st) {
  // which force element (or applied force) is not finite; called after a NaN result
  for (int b = 1; b < sys->nbody; b++)
    for (int i = 0; i < 6; i++)
      if (!isfinite(st->F_applied[6 * b + i]))
        return MBS_FAIL(&st->err, MBS_ERR_NAN, sys->body_name[b],
                        "body '%s': the applied body force is not finite", sys->body_name[b]);
  for (int i = 0; i < sys->nu; i++)
    if (!isfinite(st->f_applied[i]))
      return MBS_FAIL(&st->err, MBS_ERR_NAN, sys->name,
                      "%s: applied generalized force %d is not finite", sys->name, i);
  for (int b = 0; b < 6 * sys->nbody; b++)
    if (!isfinite(st->F_body[b]))
      return MBS_FAIL(&st->err, MBS_ERR_NAN, sys->body_name[b / 6],
                      "body '%s': a force element gives a non-finite force", sys->body_name[b / 6]);
  for (int i = 0; i < sys->nu; i++)
    if (!isfinite(st->f_mob[i]))
      return MBS_FAIL(&st->err, MBS_ERR_NAN, sys->name,
                      "%s: a force element gives a non-finite generalized force on speed %d",
                      sys->name, i);
  return MBS_OK;
}

int mbs_calc_potential_energy(const mbs_system* sys, mbs_state* st, double* pe) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  double e = 0;
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_desc* fd = &sys->force[i];
    const double* p = st->param + fd->param_adr;
    switch (fd->type) {
      case MBS_FORCE_GRAVITY:
        for (int b = 1; b < sys->nbody; b++) {
          const mbs_rigid_inertia* M = &st->M_G[b];
          double c[3];
          mbs_v3_add(c, st->X_GB[b].p, M->c);
          e -= M->m * mbs_v3_dot(p, c);
        }
        break;
      case MBS_FORCE_SPRING: {
        double p1[3], p2[3], d[3];
        station_kinematics(st, fd->body1, p, p1, NULL);
        station_kinematics(st, fd->body2, p + 3, p2, NULL);
        mbs_v3_sub(d, p2, p1);
        const double s = mbs_v3_norm(d) - p[7];
        e += 0.5 * p[6] * s * s;
        break;
      }
      case MBS_FORCE_MOBILITY_SPRING: {
        const double s = st->q[fd->qindex] - p[1];
        e += 0.5 * p[0] * s * s;
        break;
      }
      case MBS_FORCE_MOBILITY:
      case MBS_FORCE_BODY_FORCE:
      case MBS_FORCE_BODY_TORQUE:
      case MBS_FORCE_DAMPER:
      case MBS_FORCE_MOBILITY_DAMPER:
        break;  // not conservative (or not defined as such): no potential
    }
  }
  *pe = e;
  return MBS_OK;
}
