// Muscles as force elements: a musculotendon model (include/mbs/muscle.h) pulling along a
// geometry path (include/mbs/path.h) with its tendon force; activation and the fiber state are
// auxiliary states z; the model's main properties are instance parameters (a study varies
// them, a cohort scales them), the curves' constants the System's. At Instance the model is
// prepared from them into the State's cache; at Dynamics the path's length and speed, the
// excitation and the states give the tendon force, the states' derivatives and the reports.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/force.h"
#include "mbs/muscle.h"
#include "model_impl.h"
#include "integrator_impl.h"
#include "path_impl.h"

// parameters of a muscle (in this order)
enum {
  MP_FMAX = 0, MP_LOPT, MP_LTS, MP_ALPHA, MP_VMAX, MP_TACT, MP_TDEACT, MP_DAMPING, MP_AMIN,
  MP_SIZE
};
static const char* const mp_names[MP_SIZE] = {
    "max_isometric_force",        "optimal_fiber_length",    "tendon_slack_length",
    "pennation_angle_at_optimal", "max_contraction_velocity", "activation_time_constant",
    "deactivation_time_constant", "fiber_damping",            "minimum_activation"};
static const char* const mp_units[MP_SIZE] = {"N", "m", "m", "rad", "1/s", "s", "s", "1", "1"};

// integer arguments
enum { MI_MUSCLE = 0, MI_PATH = 1, MI_FUNCTION = 2, MI_ACT = 3, MI_FIBER = 4, MI_NFIBER = 5 };

// the report cache (Dynamics)
enum {
  MR_TENDON_FORCE = 0, MR_FIBER_LENGTH, MR_FIBER_VELOCITY, MR_NORM_FIBER_LENGTH,
  MR_NORM_FIBER_VELOCITY, MR_ACTIVATION, MR_EXCITATION, MR_PENNATION, MR_ACTIVE_FORCE,
  MR_PASSIVE_FORCE, MR_POWER, MR_PATH_LENGTH, MR_PATH_SPEED, MR_TENDON_LENGTH, MR_DAMPING_FORCE,
  MR_CLAMPED, MR_SIZE
};

struct mbs_muscle_data {
  int n, cap;
  mbs_muscle_params* templ;  // the curves' constants and the kind
};

void mbs_muscle_data_free(struct mbs_muscle_data* d) {
  if (!d) return;
  free(d->templ);
  free(d);
}

static mbs_muscle_model* model_of(const mbs_state* st, const mbs_force_desc* f) {
  return (mbs_muscle_model*)(void*)(st->force_icache + f->icache_adr);
}

static void params_of(const mbs_system* sys, const mbs_force_desc* f, const double* p,
                      mbs_muscle_params* out) {
  *out = sys->muscles->templ[f->iarg[MI_MUSCLE]];
  out->max_isometric_force = p[MP_FMAX];
  out->optimal_fiber_length = p[MP_LOPT];
  out->tendon_slack_length = p[MP_LTS];
  out->pennation_angle_at_optimal = p[MP_ALPHA];
  out->max_contraction_velocity = p[MP_VMAX];
  out->activation_time_constant = p[MP_TACT];
  out->deactivation_time_constant = p[MP_TDEACT];
  out->fiber_damping = p[MP_DAMPING];
  out->minimum_activation = p[MP_AMIN];
}

// Instance: the model from the State's parameters
static int muscle_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                        const double* p) {
  mbs_muscle_params mp;
  params_of(sys, f, p, &mp);
  mbs_error e;
  char name[160];
  snprintf(name, sizeof(name), "muscle '%s'", f->name);
  if (mbs_muscle_prepare(model_of(st, f), &mp, name, &e) != MBS_OK) {
    char comp[MBS_ERROR_COMPONENT_LEN];
    snprintf(comp, sizeof(comp), "force '%s'", f->name);
    return mbs_error_set(&st->err, e.code, "mbs_realize_instance", __LINE__, comp, "%s",
                         e.message);
  }
  return MBS_OK;
}

// the excitation in effect [Dynamics]: its function of time or the State's control, plus the
// controllers'
static double excitation_of(const mbs_state* st, const mbs_force_desc* f) {
  return f->control >= 0 ? st->control_eff[f->control] : 0;
}

// Dynamics: tendon force along the path, the states' derivatives, the reports
static void muscle_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                         const double* p, double* F_body, double* f_mob) {
  (void)p;
  const mbs_muscle_model* m = model_of(st, f);
  mbs_path_eval_out o;
  mbs_path_eval(sys, st, f->iarg[MI_PATH], &o, 1);
  const double e = excitation_of(st, f);
  const int ia = f->iarg[MI_ACT], ifb = f->iarg[MI_FIBER], nfb = f->iarg[MI_NFIBER];
  const double a = ia >= 0 ? st->z[ia] : e;
  mbs_muscle_output out;
  mbs_error err;
  double* r = st->force_cache + f->cache_adr;
  if (mbs_muscle_eval_states(m, o.length, o.speed, a, ifb >= 0 ? st->z + ifb : NULL, &out,
                             &err) != MBS_OK) {
    // a NaN force: the dynamics reports it (mbs_diagnose_forces)
    for (int k = 0; k < MR_SIZE; k++) r[k] = NAN;
    if (ia >= 0) st->zdot[ia] = NAN;
    for (int k = 0; ifb >= 0 && k < nfb; k++) st->zdot[ifb + k] = NAN;
    mbs_path_apply_tension(sys, st, f->iarg[MI_PATH], &o, NAN, F_body, f_mob);
    return;
  }
  if (ia >= 0) st->zdot[ia] = mbs_muscle_activation_derivative(m, e, a);
  if (ifb >= 0) st->zdot[ifb] = out.fiber_state_derivative;
  if (ifb >= 0 && nfb > 1) st->zdot[ifb + 1] = out.fiber_acceleration;  // Delp: v^M
  r[MR_TENDON_FORCE] = out.tendon_force;
  r[MR_FIBER_LENGTH] = out.fiber_length;
  r[MR_FIBER_VELOCITY] = out.fiber_velocity;
  r[MR_NORM_FIBER_LENGTH] = out.normalized_fiber_length;
  r[MR_NORM_FIBER_VELOCITY] = out.normalized_fiber_velocity;
  r[MR_ACTIVATION] = out.activation;
  r[MR_EXCITATION] = e;
  r[MR_PENNATION] = out.pennation_angle;
  r[MR_ACTIVE_FORCE] = out.active_fiber_force;
  r[MR_PASSIVE_FORCE] = out.passive_fiber_force;
  r[MR_POWER] = out.muscle_power;
  r[MR_PATH_LENGTH] = o.length;
  r[MR_PATH_SPEED] = o.speed;
  r[MR_TENDON_LENGTH] = out.tendon_length;
  r[MR_DAMPING_FORCE] = out.damping_fiber_force;
  r[MR_CLAMPED] = out.clamped;
  mbs_path_apply_tension(sys, st, f->iarg[MI_PATH], &o, out.tendon_force, F_body, f_mob);
}

const mbs_force_ops mbs_muscle_ops = {"muscle", muscle_check, muscle_apply, NULL};

int mbs_system_add_muscle(mbs_system* sys, const mbs_muscle_params* p, int path,
                          double default_activation, double default_excitation,
                          int excitation_function) {
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!p || p->kind < 0 || p->kind >= MBS_MUSCLE_KIND_COUNT)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "muscle", "muscle: no parameters or an unknown "
                    "kind");
  if (path < 0 || path >= mbs_system_npath(sys))
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "muscle", "muscle: path %d does not exist",
                    path);
  if (excitation_function >= sys->nfunc)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "muscle",
                    "muscle: excitation function %d does not exist", excitation_function);
  // the parameters as a model would check them, before anything is added
  mbs_muscle_model* probe = malloc(sizeof(*probe));
  if (!probe) return mbs_system_no_memory(sys, __func__);
  mbs_error e;
  rc = mbs_muscle_prepare(probe, p, mbs_path_owner(sys, path), &e);
  int has_act = 0, has_fiber = 0;
  if (rc == MBS_OK) mbs_muscle_state_count(probe, &has_act, &has_fiber);
  double fiber0 = NAN;
  if (rc == MBS_OK && has_fiber) {  // a default fiber state: the equilibrium at rest length
    mbs_muscle_equilibrium eq;
    const double lmt = p->optimal_fiber_length * cos(p->pennation_angle_at_optimal) +
                       p->tendon_slack_length;
    if (mbs_muscle_equilibrium_solve(probe, default_activation, lmt, 0, 0, &eq, &e) == MBS_OK)
      fiber0 = eq.fiber_state;
    else
      fiber0 = p->kind == MBS_MUSCLE_DEGROOTE2016 ? 0 : p->optimal_fiber_length;
  }
  free(probe);
  if (rc) return mbs_error_set(&sys->err, rc, __func__, __LINE__, e.component, "%s", e.message);
  if (!sys->muscles && !(sys->muscles = calloc(1, sizeof(*sys->muscles))))
    return mbs_system_no_memory(sys, __func__);
  struct mbs_muscle_data* d = sys->muscles;
  if (d->n == d->cap) {
    const int cap = d->cap ? 2 * d->cap : 16;
    mbs_muscle_params* t = realloc(d->templ, (size_t)cap * sizeof(*t));
    if (!t) return mbs_system_no_memory(sys, __func__);
    d->templ = t;
    d->cap = cap;
  }
  d->templ[d->n] = *p;
  double pv[MP_SIZE] = {p->max_isometric_force,        p->optimal_fiber_length,
                        p->tendon_slack_length,        p->pennation_angle_at_optimal,
                        p->max_contraction_velocity,   p->activation_time_constant,
                        p->deactivation_time_constant, p->fiber_damping,
                        p->minimum_activation};
  const int id = mbs_system_new_force(sys, MBS_FORCE_MUSCLE, "muscle", 0, 0, pv, MP_SIZE);
  if (id < 0) return id;
  mbs_force_desc* f = &sys->force[id];
  f->iarg[MI_MUSCLE] = d->n++;
  f->iarg[MI_PATH] = path;
  f->iarg[MI_FUNCTION] = excitation_function;
  for (int k = 0; k < MP_SIZE; k++)
    if ((rc = mbs_system_force_param(sys, id, mp_names[k], k, 1, mp_units[k]))) return rc;
  if ((rc = mbs_system_force_cache(sys, id, MR_SIZE)) < 0) return rc;
  f = &sys->force[id];
  f->icache_adr = sys->nforce_icache;
  sys->nforce_icache += (int)((sizeof(mbs_muscle_model) + sizeof(double) - 1) / sizeof(double));
  const int c = mbs_system_force_control(sys, id, default_excitation, excitation_function);
  if (c < 0) return c;
  double z0[3];
  const char* fields[3];
  int nz = 0;
  if (has_act) {
    z0[nz] = default_activation;
    fields[nz++] = "activation";
  }
  if (has_fiber) {
    z0[nz] = fiber0;
    fields[nz++] = p->kind == MBS_MUSCLE_DEGROOTE2016 ? "normalized_tendon_force"
                                                      : "fiber_length";
  }
  if (has_fiber > 1) {  // Delp: the junction's velocity, at rest
    z0[nz] = 0;
    fields[nz++] = "fiber_velocity";
  }
  f->iarg[MI_NFIBER] = has_fiber;
  if (nz > 0) {
    const int z = mbs_system_force_z(sys, id, nz, z0, fields);
    if (z < 0) return z;
    f = &sys->force[id];
    f->iarg[MI_ACT] = has_act ? z : -1;
    f->iarg[MI_FIBER] = has_fiber ? z + (has_act ? 1 : 0) : -1;
  } else {
    f->iarg[MI_ACT] = f->iarg[MI_FIBER] = -1;
  }
  return id;
}

int mbs_get_muscle_report(const mbs_system* sys, mbs_state* st, int force,
                          mbs_muscle_report* out) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce || sys->force[force].type != MBS_FORCE_MUSCLE || !out)
    return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, __func__, __LINE__, sys->name,
                         "%s: force %d is not a muscle", __func__, force);
  const double* r = st->force_cache + sys->force[force].cache_adr;
  out->tendon_force = r[MR_TENDON_FORCE];
  out->fiber_length = r[MR_FIBER_LENGTH];
  out->fiber_velocity = r[MR_FIBER_VELOCITY];
  out->normalized_fiber_length = r[MR_NORM_FIBER_LENGTH];
  out->normalized_fiber_velocity = r[MR_NORM_FIBER_VELOCITY];
  out->activation = r[MR_ACTIVATION];
  out->excitation = r[MR_EXCITATION];
  out->pennation_angle = r[MR_PENNATION];
  out->active_fiber_force = r[MR_ACTIVE_FORCE];
  out->passive_fiber_force = r[MR_PASSIVE_FORCE];
  out->muscle_power = r[MR_POWER];
  out->path_length = r[MR_PATH_LENGTH];
  out->path_speed = r[MR_PATH_SPEED];
  out->tendon_length = r[MR_TENDON_LENGTH];
  out->damping_fiber_force = r[MR_DAMPING_FORCE];
  out->clamped = r[MR_CLAMPED] != 0;
  return MBS_OK;
}

int mbs_get_muscle_output(const mbs_system* sys, mbs_state* st, int force,
                          mbs_muscle_output* out) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce || sys->force[force].type != MBS_FORCE_MUSCLE || !out)
    return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, __func__, __LINE__, sys->name,
                         "%s: force %d is not a muscle", __func__, force);
  // the model evaluated again as muscle_apply evaluates it (the report keeps only a part)
  const mbs_force_desc* f = &sys->force[force];
  mbs_path_eval_out o;
  mbs_path_eval(sys, st, f->iarg[MI_PATH], &o, 1);
  const int ia = f->iarg[MI_ACT], ifb = f->iarg[MI_FIBER];
  const double a = ia >= 0 ? st->z[ia] : excitation_of(st, f);
  mbs_error e;
  if (mbs_muscle_eval_states(model_of(st, f), o.length, o.speed, a, ifb >= 0 ? st->z + ifb : NULL,
                             out, &e) != MBS_OK)
    return mbs_error_set(&st->err, e.code, __func__, __LINE__, f->name, "muscle '%s': %s",
                         f->name, e.message);
  return MBS_OK;
}

int mbs_force_path(const mbs_system* sys, int force) {
  if (force < 0 || force >= sys->nforce || sys->force[force].type != MBS_FORCE_MUSCLE) return -1;
  return sys->force[force].iarg[MI_PATH];
}

int mbs_equilibrate_muscles(const mbs_system* sys, mbs_state* st) {
  int any = 0;
  for (int i = 0; i < sys->nforce && !any; i++)
    any = sys->force[i].type == MBS_FORCE_MUSCLE && sys->force[i].iarg[MI_FIBER] >= 0;
  if (!any) return MBS_OK;
  int rc = mbs_realize_velocity(sys, st);
  if (rc) return rc;
  mbs_calc_controls(sys, st);  // (a rigid tendon's activation is its excitation)
  // the models are prepared at Instance (realized above)
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_desc* f = &sys->force[i];
    if (f->type != MBS_FORCE_MUSCLE || f->iarg[MI_FIBER] < 0) continue;
    mbs_path_eval_out o;
    if ((rc = mbs_path_eval(sys, st, f->iarg[MI_PATH], &o, 1))) return rc;
    const double a = f->iarg[MI_ACT] >= 0 ? st->z[f->iarg[MI_ACT]] : excitation_of(st, f);
    mbs_muscle_equilibrium eq;
    mbs_error e;
    rc = mbs_muscle_equilibrium_solve(model_of(st, f), a, o.length, o.speed, 0, &eq, &e);
    if (rc) {
      char comp[MBS_ERROR_COMPONENT_LEN];
      snprintf(comp, sizeof(comp), "muscle '%s'", f->name);
      return mbs_error_set(&st->err, rc, __func__, __LINE__, comp, "%s", e.message);
    }
    st->z[f->iarg[MI_FIBER]] = eq.fiber_state;
    if (f->iarg[MI_NFIBER] > 1) st->z[f->iarg[MI_FIBER] + 1] = eq.fiber_velocity;
  }
  mbs_state_invalidate(st, MBS_STAGE_DYNAMICS);
  return MBS_OK;
}

//---------------------------------- linearization ----------------------------------------------

int mbs_muscles_count(const mbs_system* sys) {
  int n = 0;
  for (int i = 0; i < sys->nforce; i++) n += sys->force[i].type == MBS_FORCE_MUSCLE;
  return n;
}

// the muscle's tendon force and its states' derivatives at (L, V, z), z the activation (if a
// state) then the fiber states
static int lin_eval(const mbs_muscle_model* m, const mbs_force_desc* f, double e, double L,
                    double V, const double* z, double* F, double* zd) {
  const int ia = f->iarg[MI_ACT], ifb = f->iarg[MI_FIBER], nfb = f->iarg[MI_NFIBER];
  const double a = ia >= 0 ? z[0] : e;
  const double* zf = ifb >= 0 ? z + (ia >= 0 ? 1 : 0) : NULL;
  mbs_muscle_output out;
  mbs_error err;
  if (mbs_muscle_eval_states(m, L, V, a, zf, &out, &err) != MBS_OK) return MBS_ERR_NAN;
  *F = out.tendon_force;
  int k = 0;
  if (ia >= 0) zd[k++] = mbs_muscle_activation_derivative(m, e, a);
  if (ifb >= 0) zd[k++] = out.fiber_state_derivative;
  if (ifb >= 0 && nfb > 1) zd[k++] = out.fiber_acceleration;
  return isfinite(*F) ? MBS_OK : MBS_ERR_NAN;
}

int mbs_muscles_linearize(const mbs_system* sys, mbs_state* st, mbs_muscle_lin* lin,
                          double* R) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  const int nu = sys->nu;
  int n = 0;
  for (int i = 0; i < sys->nforce; i++) {
    const mbs_force_desc* f = &sys->force[i];
    if (f->type != MBS_FORCE_MUSCLE) continue;
    mbs_muscle_lin* l = &lin[n];
    double* r = R + (size_t)n * nu;
    n++;
    memset(l, 0, sizeof(*l));
    const int ia = f->iarg[MI_ACT], ifb = f->iarg[MI_FIBER], nfb = f->iarg[MI_NFIBER];
    l->nz = (ia >= 0) + (ifb >= 0 ? nfb : 0);
    l->z0 = ia >= 0 ? ia : ifb;
    if ((rc = mbs_calc_path_moment_arms(sys, st, f->iarg[MI_PATH], r))) return rc;
    // the base point as the dynamics left it: the path's length and speed, the tendon force and
    // the states' derivatives
    const mbs_muscle_model* m = model_of(st, f);
    const double* rep = st->force_cache + f->cache_adr;
    const double e = excitation_of(st, f);
    double x[MBS_MUSCLE_LIN_MAXZ + 2], zd0[MBS_MUSCLE_LIN_MAXZ];
    const double F0 = rep[MR_TENDON_FORCE];
    for (int k = 0; k < l->nz; k++) {
      x[k] = st->z[l->z0 + k];
      zd0[k] = st->zdot[l->z0 + k];
    }
    x[l->nz] = rep[MR_PATH_LENGTH];
    x[l->nz + 1] = rep[MR_PATH_SPEED];
    // forward differences in each state, the length and the speed (where it enters)
    const int ncol = l->nz + (mbs_muscle_uses_path_speed(m) ? 2 : 1);
    for (int j = 0; j < ncol; j++) {
      const double keep = x[j];
      const double scale = j == l->nz ? fmax(fabs(keep), 1e-2) : fmax(fabs(keep), 1e-1);
      const double d = 1e-7 * scale;
      x[j] = keep + d;
      double F1 = F0, zd1[MBS_MUSCLE_LIN_MAXZ];
      memcpy(zd1, zd0, sizeof(zd1));
      const int bad = lin_eval(m, f, e, x[l->nz], x[l->nz + 1], x, &F1, zd1) != MBS_OK;
      x[j] = keep;
      const double inv = bad ? 0 : 1 / ((keep + d) - keep);
      const double dF = (F1 - F0) * inv;
      if (j < l->nz) l->Fz[j] = dF;
      else if (j == l->nz) l->FL = dF;
      else l->FV = dF;
      for (int k = 0; k < l->nz; k++) {
        const double g = (zd1[k] - zd0[k]) * inv;
        if (j < l->nz) l->Jzz[k][j] = g;
        else if (j == l->nz) l->gL[k] = g;
        else l->gV[k] = g;
      }
    }
    // a kink (a clamped fiber, a curve's end) can leave a difference that is not finite
    int ok = isfinite(l->FL) && isfinite(l->FV);
    for (int k = 0; k < l->nz; k++) {
      ok = ok && isfinite(l->Fz[k]) && isfinite(l->gL[k]) && isfinite(l->gV[k]);
      for (int j = 0; j < l->nz; j++) ok = ok && isfinite(l->Jzz[k][j]);
    }
    if (!ok) {
      const int nz = l->nz, z0 = l->z0;
      memset(l, 0, sizeof(*l));
      l->nz = nz;
      l->z0 = z0;
    }
  }
  return MBS_OK;
}
