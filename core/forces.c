// Force elements: the table of element types (mbs_force_ops), the helpers they share, and the
// basic elements: uniform gravity, constant mobility forces, constant body forces and torques,
// two-point linear springs and dampers, mobility linear springs and dampers. Other element
// types live in their own files and are listed in the table.
//
// Body forces are spatial forces [moment; force] in Ground about each body's origin; a force f
// at a station S adds [r x f; f] with r = p_GS - p_GB.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model_impl.h"

// add a force f (in G) acting at point pS (in G) on body b
void mbs_force_add_point_force(const mbs_state* st, double* F_body, int b, const double pS[3],
                               const double f[3]) {
  if (b == 0) return;
  double r[3];
  double* F = F_body + 6 * b;
  mbs_v3_sub(r, pS, st->X_GB[b].p);
  mbs_v3_cross_add(F, r, f);
  mbs_v3_add(F + 3, F + 3, f);
}

void mbs_force_add_torque(double* F_body, int b, const double torque[3]) {
  if (b != 0) mbs_v3_add(F_body + 6 * b, F_body + 6 * b, torque);
}

// station p_BS of body b: location and velocity in G
void mbs_force_station(const mbs_state* st, int b, const double p_BS[3], double p[3],
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

int mbs_force_fail(mbs_state* st, const mbs_force_desc* f, const char* fmt, ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "force '%s'", f->name);
  return mbs_error_set(&st->err, MBS_ERR_PARAMETER, "mbs_realize_instance", __LINE__, comp,
                       "force '%s': %s", f->name, msg);
}

int mbs_check_force_params(const mbs_system* sys, mbs_state* st) {
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_desc* f = &sys->force[i];
    const double* p = st->param + f->param_adr;
    for (int k = 0; k < f->nparam; k++)
      if (!isfinite(p[k])) return mbs_force_fail(st, f, "parameter %d is not finite", k);
    const mbs_force_ops* ops = mbs_force_ops_of(f->type);
    int rc;
    if (ops->check && (rc = ops->check(sys, st, f, p))) return rc;
  }
  return MBS_OK;
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

//---------------------------------- basic elements --------------------------------------------

static void gravity_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                          const double* p, double* F_body, double* f_mob) {
  (void)fd;
  (void)f_mob;
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_rigid_inertia* M = &st->M_G[b];
    double* F = F_body + 6 * b;
    const double w[3] = {M->m * p[0], M->m * p[1], M->m * p[2]};
    mbs_v3_cross_add(F, M->c, w);
    mbs_v3_add(F + 3, F + 3, w);
  }
}
static double gravity_potential(const mbs_system* sys, const mbs_state* st,
                                const mbs_force_desc* fd, const double* p) {
  (void)fd;
  double e = 0;
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_rigid_inertia* M = &st->M_G[b];
    double c[3];
    mbs_v3_add(c, st->X_GB[b].p, M->c);
    e -= M->m * mbs_v3_dot(p, c);
  }
  return e;
}

static void mobility_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                           const double* p, double* F_body, double* f_mob) {
  (void)sys;
  (void)st;
  (void)F_body;
  f_mob[fd->uindex] += p[0];
}

static void body_force_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                             const double* p, double* F_body, double* f_mob) {
  (void)sys;
  (void)f_mob;
  double pS[3];
  mbs_force_station(st, fd->body1, p, pS, NULL);
  mbs_force_add_point_force(st, F_body, fd->body1, pS, p + 3);
}

static void body_torque_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                              const double* p, double* F_body, double* f_mob) {
  (void)sys;
  (void)st;
  (void)f_mob;
  mbs_force_add_torque(F_body, fd->body1, p);
}

static int two_point_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                           const double* p) {
  (void)sys;
  if (p[6] < 0) return mbs_force_fail(st, fd, "coefficient %g must not be negative", p[6]);
  if (fd->type == MBS_FORCE_SPRING && p[7] < 0)
    return mbs_force_fail(st, fd, "rest length %g must not be negative", p[7]);
  return MBS_OK;
}
static void two_point_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                            const double* p, double* F_body, double* f_mob) {
  (void)sys;
  (void)f_mob;
  double p1[3], p2[3], v1[3], v2[3], d[3];
  mbs_force_station(st, fd->body1, p, p1, v1);
  mbs_force_station(st, fd->body2, p + 3, p2, v2);
  mbs_v3_sub(d, p2, p1);
  const double L = mbs_v3_norm(d);
  if (L == 0) return;  // direction undefined: no force
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
  mbs_force_add_point_force(st, F_body, fd->body1, p1, f);
  mbs_v3_scale(f, f, -1.0);
  mbs_force_add_point_force(st, F_body, fd->body2, p2, f);
}
static double spring_potential(const mbs_system* sys, const mbs_state* st,
                               const mbs_force_desc* fd, const double* p) {
  (void)sys;
  double p1[3], p2[3], d[3];
  mbs_force_station(st, fd->body1, p, p1, NULL);
  mbs_force_station(st, fd->body2, p + 3, p2, NULL);
  mbs_v3_sub(d, p2, p1);
  const double s = mbs_v3_norm(d) - p[7];
  return 0.5 * p[6] * s * s;
}

static int nonneg_first_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                              const double* p) {
  (void)sys;
  if (p[0] < 0) return mbs_force_fail(st, fd, "coefficient %g must not be negative", p[0]);
  return MBS_OK;
}
static void mobility_spring_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                                  const double* p, double* F_body, double* f_mob) {
  (void)F_body;
  mobility_spring(sys, st, fd, p[0] * (st->q[fd->qindex] - p[1]), f_mob);
}
static double mobility_spring_potential(const mbs_system* sys, const mbs_state* st,
                                        const mbs_force_desc* fd, const double* p) {
  (void)sys;
  const double s = st->q[fd->qindex] - p[1];
  return 0.5 * p[0] * s * s;
}
static void mobility_damper_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* fd,
                                  const double* p, double* F_body, double* f_mob) {
  (void)sys;
  (void)F_body;
  f_mob[fd->uindex] -= p[0] * st->u[fd->uindex];
}

//---------------------------------- the table --------------------------------------------------

static const mbs_force_ops gravity_ops = {"gravity", NULL, gravity_apply, gravity_potential};
static const mbs_force_ops mobility_ops = {"mobility_force", NULL, mobility_apply, NULL};
static const mbs_force_ops body_force_ops = {"body_force", NULL, body_force_apply, NULL};
static const mbs_force_ops body_torque_ops = {"body_torque", NULL, body_torque_apply, NULL};
static const mbs_force_ops spring_ops = {"spring", two_point_check, two_point_apply,
                                         spring_potential};
static const mbs_force_ops damper_ops = {"damper", two_point_check, two_point_apply, NULL};
static const mbs_force_ops mobility_spring_ops = {"mobility_spring", nonneg_first_check,
                                                  mobility_spring_apply,
                                                  mobility_spring_potential};
static const mbs_force_ops mobility_damper_ops = {"mobility_damper", nonneg_first_check,
                                                  mobility_damper_apply, NULL};

extern const mbs_force_ops mbs_path_actuator_ops, mbs_path_spring_ops,
    mbs_ligament_ops;  // force_path.c

static const mbs_force_ops* const force_table[MBS_FORCE_TYPE_COUNT] = {
    [MBS_FORCE_GRAVITY] = &gravity_ops,
    [MBS_FORCE_MOBILITY] = &mobility_ops,
    [MBS_FORCE_BODY_FORCE] = &body_force_ops,
    [MBS_FORCE_BODY_TORQUE] = &body_torque_ops,
    [MBS_FORCE_SPRING] = &spring_ops,
    [MBS_FORCE_DAMPER] = &damper_ops,
    [MBS_FORCE_MOBILITY_SPRING] = &mobility_spring_ops,
    [MBS_FORCE_MOBILITY_DAMPER] = &mobility_damper_ops,
    [MBS_FORCE_BUSHING] = &mbs_bushing_ops,
    [MBS_FORCE_COORDINATE_LIMIT] = &mbs_coordinate_limit_ops,
    [MBS_FORCE_SPRING_GENERALIZED] = &mbs_spring_generalized_ops,
    [MBS_FORCE_EXTERNAL] = &mbs_external_force_ops,
    [MBS_FORCE_COORDINATE_ACTUATOR] = &mbs_coordinate_actuator_ops,
    [MBS_FORCE_POINT_ACTUATOR] = &mbs_point_actuator_ops,
    [MBS_FORCE_TORQUE_ACTUATOR] = &mbs_torque_actuator_ops,
    [MBS_FORCE_ACTIVATION_COORDINATE_ACTUATOR] = &mbs_activation_coordinate_actuator_ops,
    [MBS_FORCE_MUSCLE] = &mbs_muscle_ops,
    [MBS_FORCE_PATH_ACTUATOR] = &mbs_path_actuator_ops,
    [MBS_FORCE_PATH_SPRING] = &mbs_path_spring_ops,
    [MBS_FORCE_LIGAMENT] = &mbs_ligament_ops,
    [MBS_FORCE_HUNT_CROSSLEY] = &mbs_hunt_crossley_ops,
    [MBS_FORCE_ELASTIC_FOUNDATION] = &mbs_elastic_foundation_ops,
};

const mbs_force_ops* mbs_force_ops_of(mbs_force_type type) { return force_table[type]; }

void mbs_calc_controls(const mbs_system* sys, mbs_state* st) {
  // the controls in effect: a function of time or the State's control, plus the controllers'
  for (int c = 0; c < sys->ncontrol; c++) {
    const int fn = sys->control_function[c];
    if (fn >= 0) {
      double d[3];
      mbs_system_eval_function(sys, st, fn, st->vars[0], d);
      st->control_eff[c] = d[0];
    } else {
      st->control_eff[c] = st->controls[c];
    }
  }
  if (sys->controllers) mbs_controllers_apply(sys, st, st->control_eff);
}

int mbs_calc_applied_forces(const mbs_system* sys, mbs_state* st, double* F_body, double* f_mob) {
  memcpy(F_body, st->F_applied, 6 * (size_t)sys->nbody * sizeof(double));
  memcpy(f_mob, st->f_applied, (size_t)sys->nu * sizeof(double));
  if (sys->nz) memset(st->zdot, 0, (size_t)sys->nz * sizeof(double));
  mbs_calc_controls(sys, st);
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_desc* fd = &sys->force[i];
    force_table[fd->type]->apply(sys, st, fd, st->param + fd->param_adr, F_body, f_mob);
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
    if (force_table[fd->type]->potential)
      e += force_table[fd->type]->potential(sys, st, fd, st->param + fd->param_adr);
  }
  *pe = e;
  return MBS_OK;
}
