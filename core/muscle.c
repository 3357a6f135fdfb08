// Musculotendon models on top of the normalized curves: parameters and their checks, the
// constant-width pennation model, activation dynamics, fiber dynamics (the fiber velocity
// from the fiber-tendon equilibrium, O-1..O-4 of the OpenSim paper) and the equilibrium
// initialization. Follows OpenSim's Thelen2003Muscle, Millard2012EquilibriumMuscle,
// DeGrooteFregly2016Muscle, RigidTendonMuscle, Schutte1993Muscle_Deprecated,
// Delp1990Muscle_Deprecated and Thelen2003Muscle_Deprecated; the differences are noted where
// they occur.
#include "mbs/muscle.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static double clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

const char* mbs_muscle_kind_name(mbs_muscle_kind kind) {
  switch (kind) {
    case MBS_MUSCLE_THELEN2003: return "Thelen2003Muscle";
    case MBS_MUSCLE_MILLARD2012: return "Millard2012EquilibriumMuscle";
    case MBS_MUSCLE_DEGROOTE2016: return "DeGrooteFregly2016Muscle";
    case MBS_MUSCLE_RIGID_TENDON: return "RigidTendonMuscle";
    case MBS_MUSCLE_SCHUTTE1993: return "Schutte1993Muscle_Deprecated";
    case MBS_MUSCLE_DELP1990: return "Delp1990Muscle_Deprecated";
    case MBS_MUSCLE_THELEN2003_DEPRECATED: return "Thelen2003Muscle_Deprecated";
    default: return "unknown muscle";
  }
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

static int is_simm(mbs_muscle_kind k) {
  return k == MBS_MUSCLE_SCHUTTE1993 || k == MBS_MUSCLE_DELP1990;
}

// the curve of a Schutte / Delp parameter set (MBS_SIMM_* order)
static size_t simm_curve_offset(mbs_simm_curve which) {
  switch (which) {
    case MBS_SIMM_TENDON_FORCE_LENGTH:
      return offsetof(mbs_simm_muscle_params, tendon_force_length_curve);
    case MBS_SIMM_ACTIVE_FORCE_LENGTH:
      return offsetof(mbs_simm_muscle_params, active_force_length_curve);
    case MBS_SIMM_PASSIVE_FORCE_LENGTH:
      return offsetof(mbs_simm_muscle_params, passive_force_length_curve);
    default: return offsetof(mbs_simm_muscle_params, force_velocity_curve);
  }
}
static mbs_muscle_curve* simm_curve_params(mbs_simm_muscle_params* sm, mbs_simm_curve which) {
  return (mbs_muscle_curve*)(void*)((char*)sm + simm_curve_offset(which));
}
static const mbs_muscle_curve* simm_curve_of(const mbs_simm_muscle_params* sm,
                                             mbs_simm_curve which) {
  return (const mbs_muscle_curve*)(const void*)((const char*)sm + simm_curve_offset(which));
}

static const char* const simm_curve_names[MBS_SIMM_CURVE_COUNT] = {
    "tendon_force_length_curve", "active_force_length_curve", "passive_force_length_curve",
    "force_velocity_curve"};

void mbs_muscle_params_default(mbs_muscle_params* p, mbs_muscle_kind kind) {
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->max_isometric_force = 1000;
  p->optimal_fiber_length = 0.1;
  p->tendon_slack_length = 0.2;
  p->pennation_angle_at_optimal = 0;
  p->max_contraction_velocity = 10;
  p->maximum_pennation_angle = acos(0.1);
  p->activation_dynamics_smoothing = 0.1;
  switch (kind) {
    case MBS_MUSCLE_MILLARD2012:
      p->activation_time_constant = 0.010;
      p->deactivation_time_constant = 0.040;
      p->minimum_activation = 0.01;
      p->fiber_damping = 0.1;
      break;
    case MBS_MUSCLE_DEGROOTE2016:
      p->activation_time_constant = 0.015;
      p->deactivation_time_constant = 0.060;
      p->minimum_activation = 0;
      p->fiber_damping = 0;
      break;
    case MBS_MUSCLE_RIGID_TENDON:
      p->activation_time_constant = 0.010;  // unused: the activation is the excitation
      p->deactivation_time_constant = 0.040;
      p->minimum_activation = 0;
      p->ignore_tendon_compliance = 1;
      break;
    case MBS_MUSCLE_SCHUTTE1993:
    case MBS_MUSCLE_DELP1990:
      // unused (SIMM's activation dynamics has activation1, activation2): the time constants
      // it has at full excitation and at rest
      p->activation_time_constant = 0.1 / (7.667 + 1.459854);
      p->deactivation_time_constant = 0.1 / 1.459854;
      p->minimum_activation = 0;
      break;
    case MBS_MUSCLE_THELEN2003_DEPRECATED:
      p->activation_time_constant = 0.01;
      p->deactivation_time_constant = 0.04;
      p->minimum_activation = 0;
      p->maximum_pennation_angle = M_PI / 2;  // only the geometry's limit
      break;
    default:  // Thelen 2003
      p->activation_time_constant = 0.015;
      p->deactivation_time_constant = 0.050;
      p->minimum_activation = 0.01;
      break;
  }
  mbs_thelen2003_curve_params* t = &p->thelen;
  t->fmax_tendon_strain = 0.04;
  t->fmax_muscle_strain = 0.6;
  t->kshape_active = 0.45;
  t->kshape_passive = 5.0;
  t->af = 0.25;
  t->flen = 1.4;
  t->fv_linear_extrap_threshold = 0.95;
  if (kind == MBS_MUSCLE_THELEN2003_DEPRECATED) {  // OpenSim 2's defaults
    t->fmax_tendon_strain = 0.033;
    t->kshape_active = 0.5;
    t->kshape_passive = 4.0;
    t->af = 0.3;
    t->flen = 1.8;
  }
  p->thelen_deprecated.vmax = 10;
  p->thelen_deprecated.vmax0 = 5;
  p->thelen_deprecated.damping = 0.05;
  mbs_millard2012_curve_params* c = &p->millard;
  c->afl_min_norm_active_fiber_length = 0.47 - 0.0259;
  c->afl_transition_norm_fiber_length = 0.73;
  c->afl_max_norm_active_fiber_length = 1.8123;
  c->afl_shallow_ascending_slope = 0.8616;
  c->afl_minimum_value = 0.1;
  c->fv_concentric_slope_at_vmax = 0;
  c->fv_concentric_slope_near_vmax = 0.25;
  c->fv_isometric_slope = 5;
  c->fv_eccentric_slope_at_vmax = 0;
  c->fv_eccentric_slope_near_vmax = 0.15;
  c->fv_max_eccentric_velocity_force_multiplier = 1.4;
  c->fv_concentric_curviness = 0.6;
  c->fv_eccentric_curviness = 0.9;
  c->fpe_strain_at_zero_force = 0;
  c->fpe_strain_at_one_norm_force = 0.7;
  c->fpe_stiffness_at_low_force = 0.2;
  c->fpe_stiffness_at_one_norm_force = 2.0 / 0.7;
  c->fpe_curviness = 0.75;
  c->fse_strain_at_one_norm_force = 0.049;
  c->fse_stiffness_at_one_norm_force = 1.375 / 0.049;
  c->fse_norm_force_at_toe_end = 2.0 / 3.0;
  c->fse_curviness = 0.5;
  mbs_degroote2016_curve_params* g = &p->degroote;
  g->active_force_width_scale = 1;
  g->passive_fiber_strain_at_one_norm_force = 0.6;
  g->tendon_strain_at_one_norm_force = 0.049;
  g->ignore_passive_fiber_force = 0;
  // Schutte1993Muscle_Deprecated / Delp1990Muscle_Deprecated properties
  mbs_simm_muscle_params* sm = &p->simm;
  sm->time_scale = 0.1;
  sm->activation1 = 7.667;
  sm->activation2 = 1.459854;
  sm->damping = 0.1;
  sm->mass = 0.00287;
  sm->passive_force_length_curve_is_default = kind == MBS_MUSCLE_SCHUTTE1993;
  for (int k = 0; k < MBS_SIMM_CURVE_COUNT; k++) {
    const double *x = NULL, *y = NULL;
    const int n = mbs_simm_default_curve_points((mbs_simm_curve)k, &x, &y);
    mbs_muscle_curve_set(simm_curve_params(sm, (mbs_simm_curve)k), MBS_FUNC_SIMM_SPLINE, n, x, y,
                         NULL);
  }
}

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) return MBS_FAIL(err, MBS_ERR_PARAMETER, name, __VA_ARGS__); \
  } while (0)

static int is_rigid(const mbs_muscle_model* m) {
  return m->p.kind == MBS_MUSCLE_RIGID_TENDON || m->p.ignore_tendon_compliance;
}

int mbs_muscle_prepare(mbs_muscle_model* m, const mbs_muscle_params* params, const char* name,
                       mbs_error* err) {
  if (!name) name = "muscle";
  memset(m, 0, sizeof *m);
  m->p = *params;
  mbs_muscle_params* p = &m->p;
  const char* kind = mbs_muscle_kind_name(p->kind);
  CHECK(p->kind >= 0 && p->kind < MBS_MUSCLE_KIND_COUNT, "%s: unknown muscle kind %d", name,
        (int)p->kind);
  CHECK(p->max_isometric_force > 0 && isfinite(p->max_isometric_force),
        "%s: max_isometric_force must be positive, got %g", name, p->max_isometric_force);
  CHECK(p->optimal_fiber_length > 0 && isfinite(p->optimal_fiber_length),
        "%s: optimal_fiber_length must be positive, got %g", name, p->optimal_fiber_length);
  CHECK(p->tendon_slack_length > 0 && isfinite(p->tendon_slack_length),
        "%s: tendon_slack_length must be positive, got %g", name, p->tendon_slack_length);
  CHECK(p->pennation_angle_at_optimal >= 0 && p->pennation_angle_at_optimal < M_PI / 2 - 1e-6,
        "%s: pennation_angle_at_optimal must be in [0, pi/2), got %g", name,
        p->pennation_angle_at_optimal);
  CHECK(p->maximum_pennation_angle > p->pennation_angle_at_optimal &&
            p->maximum_pennation_angle <= M_PI / 2,
        "%s: maximum_pennation_angle must be in (pennation_angle_at_optimal, pi/2], got %g",
        name, p->maximum_pennation_angle);
  CHECK(p->max_contraction_velocity > 0 && isfinite(p->max_contraction_velocity),
        "%s: max_contraction_velocity must be positive, got %g", name,
        p->max_contraction_velocity);
  CHECK(p->activation_time_constant > 0 && p->deactivation_time_constant > 0,
        "%s: the activation and deactivation time constants must be positive, got %g and %g",
        name, p->activation_time_constant, p->deactivation_time_constant);
  CHECK(p->minimum_activation >= 0 && p->minimum_activation < 1,
        "%s: minimum_activation must be in [0, 1), got %g", name, p->minimum_activation);
  CHECK(p->fiber_damping >= 0 && isfinite(p->fiber_damping),
        "%s: fiber_damping must be >= 0, got %g", name, p->fiber_damping);

  const double lopt = p->optimal_fiber_length;
  m->velocity_scale = p->max_contraction_velocity * lopt;
  m->width = lopt * sin(p->pennation_angle_at_optimal);
  m->max_sin_pennation = sin(p->maximum_pennation_angle);
  double lmin = fmax(m->width / m->max_sin_pennation, 0.01 * lopt);

  switch (p->kind) {
    case MBS_MUSCLE_THELEN2003: {
      const mbs_thelen2003_curve_params* t = &p->thelen;
      CHECK(p->fiber_damping == 0, "%s: a %s has no fiber damping (got %g)", name, kind,
            p->fiber_damping);
      CHECK(p->minimum_activation >= 0.01,
            "%s: a %s needs minimum_activation >= 0.01 (its fiber velocity is singular at "
            "a = 0), got %g",
            name, kind, p->minimum_activation);
      CHECK(t->fmax_tendon_strain > 0 && t->fmax_muscle_strain > 0 && t->kshape_active > 0 &&
                t->kshape_passive > 0 && t->af > 0,
            "%s: FmaxTendonStrain, FmaxMuscleStrain, KshapeActive, KshapePassive and Af must "
            "be positive",
            name);
      CHECK(t->flen > 1, "%s: Flen must exceed 1, got %g", name, t->flen);
      CHECK(t->fv_linear_extrap_threshold > 1 / t->flen && t->fv_linear_extrap_threshold < 1,
            "%s: fv_linear_extrap_threshold must be in (1/Flen, 1), got %g", name,
            t->fv_linear_extrap_threshold);
      mbs_thelen2003_tendon_constants(t, &m->thelen_e_toe, &m->thelen_k_lin);
      break;
    }
    case MBS_MUSCLE_MILLARD2012: {
      mbs_millard2012_curve_params* c = &p->millard;
      // OpenSim switches to the undamped model below a damping of 0.001
      m->damped = p->fiber_damping >= 0.001;
      if (!m->damped) p->fiber_damping = 0;
      double slope_c = c->fv_concentric_slope_at_vmax, slope_e = c->fv_eccentric_slope_at_vmax;
      if (!m->damped && !p->ignore_tendon_compliance) {
        CHECK(p->minimum_activation >= 0.01,
              "%s: the undamped %s with an elastic tendon needs minimum_activation >= 0.01, "
              "got %g",
              name, kind, p->minimum_activation);
        c->afl_minimum_value = fmax(c->afl_minimum_value, 0.1);
        slope_c = fmax(slope_c, 0.5 * c->fv_concentric_slope_near_vmax);
        slope_e = fmax(slope_e, 0.5 * c->fv_eccentric_slope_near_vmax);
      } else {
        c->afl_minimum_value = 0;
        slope_c = slope_e = 0;
      }
      c->fv_concentric_slope_at_vmax = slope_c;
      c->fv_eccentric_slope_at_vmax = slope_e;
      int rc = mbs_millard_active_force_length_curve(
          &m->c.millard.afl, c->afl_min_norm_active_fiber_length,
          c->afl_transition_norm_fiber_length, c->afl_max_norm_active_fiber_length,
          c->afl_shallow_ascending_slope, c->afl_minimum_value, 1.0, err);
      if (!rc)
        rc = mbs_millard_force_velocity_curve(
            &m->c.millard.fv, slope_c, c->fv_concentric_slope_near_vmax, c->fv_isometric_slope,
            slope_e, c->fv_eccentric_slope_near_vmax,
            c->fv_max_eccentric_velocity_force_multiplier, c->fv_concentric_curviness,
            c->fv_eccentric_curviness, err);
      if (!rc)
        rc = mbs_millard_force_velocity_curve(
            &m->c.millard.fv_inv, 0.5 * c->fv_concentric_slope_near_vmax,
            c->fv_concentric_slope_near_vmax, c->fv_isometric_slope,
            0.5 * c->fv_eccentric_slope_near_vmax, c->fv_eccentric_slope_near_vmax,
            c->fv_max_eccentric_velocity_force_multiplier, c->fv_concentric_curviness,
            c->fv_eccentric_curviness, err);
      if (!rc)
        rc = mbs_millard_fiber_force_length_curve(
            &m->c.millard.fpe, c->fpe_strain_at_zero_force, c->fpe_strain_at_one_norm_force,
            c->fpe_stiffness_at_low_force, c->fpe_stiffness_at_one_norm_force, c->fpe_curviness,
            err);
      if (!rc)
        rc = mbs_millard_tendon_force_length_curve(
            &m->c.millard.fse, c->fse_strain_at_one_norm_force,
            c->fse_stiffness_at_one_norm_force, c->fse_norm_force_at_toe_end, c->fse_curviness,
            err);
      if (rc) {
        // the curve's message, prefixed with the muscle
        char msg[MBS_ERROR_MESSAGE_LEN];
        snprintf(msg, sizeof msg, "%s", err ? err->message : "");
        return MBS_FAIL(err, rc, name, "%s: %.250s", name, msg);
      }
      lmin = fmax(lmin, c->afl_min_norm_active_fiber_length * lopt);
      break;
    }
    case MBS_MUSCLE_DEGROOTE2016: {
      const mbs_degroote2016_curve_params* g = &p->degroote;
      CHECK(g->active_force_width_scale >= 1,
            "%s: active_force_width_scale must be >= 1, got %g", name,
            g->active_force_width_scale);
      CHECK(g->passive_fiber_strain_at_one_norm_force > 0 &&
                g->tendon_strain_at_one_norm_force > 0,
            "%s: passive_fiber_strain_at_one_norm_force and tendon_strain_at_one_norm_force "
            "must be positive",
            name);
      CHECK(p->activation_dynamics_smoothing > 0,
            "%s: activation_dynamics_smoothing must be positive, got %g", name,
            p->activation_dynamics_smoothing);
      m->degroote_kT = log(6.0) / g->tendon_strain_at_one_norm_force;
      lmin = fmax(lmin, 0.2 * lopt);
      break;
    }
    case MBS_MUSCLE_THELEN2003_DEPRECATED: {
      const mbs_thelen2003_curve_params* t = &p->thelen;
      const mbs_thelen2003_deprecated_params* o = &p->thelen_deprecated;
      CHECK(p->fiber_damping == 0, "%s: a %s has no fiber_damping (got %g); its damping is the "
            "property `damping`", name, kind, p->fiber_damping);
      CHECK(!p->ignore_tendon_compliance,
            "%s: ignore_tendon_compliance is not implemented for a %s (nor in OpenSim)", name,
            kind);
      CHECK(t->fmax_tendon_strain > 0 && t->fmax_muscle_strain > 0 && t->kshape_active > 0 &&
                t->kshape_passive > 0 && t->af > 0,
            "%s: FmaxTendonStrain, FmaxMuscleStrain, KshapeActive, KshapePassive and Af must "
            "be positive",
            name);
      CHECK(t->flen > 1, "%s: Flen must exceed 1, got %g", name, t->flen);
      CHECK(o->vmax > 0 && o->vmax0 > 0 && isfinite(o->vmax) && isfinite(o->vmax0),
            "%s: Vmax and Vmax0 must be positive, got %g and %g", name, o->vmax, o->vmax0);
      CHECK(o->damping >= 0 && isfinite(o->damping), "%s: damping must be >= 0, got %g", name,
            o->damping);
      m->velocity_scale = o->vmax * lopt;  // at full activation
      break;
    }
    case MBS_MUSCLE_RIGID_TENDON: {
      CHECK(p->fiber_damping == 0, "%s: a %s has no fiber damping (got %g)", name, kind,
            p->fiber_damping);
      const int rc = mbs_delp_curves_prepare(&m->c.delp, err);
      if (rc) return rc;
      break;
    }
    case MBS_MUSCLE_SCHUTTE1993:
    case MBS_MUSCLE_DELP1990: {
      const mbs_simm_muscle_params* sm = &p->simm;
      const int delp = p->kind == MBS_MUSCLE_DELP1990;
      m->velocity_scale = lopt / sm->time_scale;  // their curves' v~ is in l_opt / time_scale
      CHECK(p->fiber_damping == 0, "%s: a %s has no fiber_damping (got %g)%s", name, kind,
            p->fiber_damping,
            delp ? "" : "; its damping is the property `damping`");
      CHECK(!p->ignore_tendon_compliance,
            "%s: ignore_tendon_compliance is not implemented for a %s (nor in OpenSim)", name,
            kind);
      CHECK(sm->time_scale > 0 && isfinite(sm->time_scale),
            "%s: time_scale must be positive, got %g", name, sm->time_scale);
      CHECK(sm->activation1 >= 0 && sm->activation2 > 0 && isfinite(sm->activation1) &&
                isfinite(sm->activation2),
            "%s: activation1 must be >= 0 and activation2 positive, got %g and %g", name,
            sm->activation1, sm->activation2);
      if (delp)
        CHECK(sm->mass > 0 && isfinite(sm->mass), "%s: mass must be positive, got %g", name,
              sm->mass);
      else
        CHECK(sm->damping > 0 && isfinite(sm->damping),
              "%s: damping must be positive (the fiber velocity divides by it), got %g", name,
              sm->damping);
      for (int k = 0; k < MBS_SIMM_CURVE_COUNT; k++) {
        if (k == MBS_SIMM_FORCE_VELOCITY && !delp) continue;  // Schutte's is closed-form
        if (k == MBS_SIMM_PASSIVE_FORCE_LENGTH && !delp &&
            sm->passive_force_length_curve_is_default)
          continue;  // Schutte's exponential replaces the default table
        const mbs_muscle_curve* c = simm_curve_of(&m->p.simm, (mbs_simm_curve)k);
        const int points = c->type == MBS_FUNC_SIMM_SPLINE ||
                           c->type == MBS_FUNC_NATURAL_CUBIC_SPLINE ||
                           c->type == MBS_FUNC_PIECEWISE_LINEAR;
        CHECK(points || c->type == MBS_FUNC_CONSTANT || c->type == MBS_FUNC_LINEAR ||
                  c->type == MBS_FUNC_POLYNOMIAL || c->type == MBS_FUNC_SINE,
              "%s: %s has function type %d, which cannot be a muscle curve", name,
              simm_curve_names[k], (int)c->type);
        CHECK(!points || (c->n >= 2 && c->n <= MBS_MUSCLE_CURVE_MAX_POINTS),
              "%s: %s needs 2 to %d points, got %d", name, simm_curve_names[k],
              MBS_MUSCLE_CURVE_MAX_POINTS, c->n);
        CHECK(c->type != MBS_FUNC_POLYNOMIAL ||
                  (c->n >= 1 && c->n <= 2 * MBS_MUSCLE_CURVE_MAX_POINTS),
              "%s: %s needs 1 to %d polynomial coefficients, got %d", name, simm_curve_names[k],
              2 * MBS_MUSCLE_CURVE_MAX_POINTS, c->n);
        char comp[MBS_ERROR_COMPONENT_LEN];
        snprintf(comp, sizeof comp, "%.60s: %s", name, simm_curve_names[k]);
        const int rc = mbs_function_prepare(c->type, c->n, c->param, m->c.simm.coef[k], err, comp);
        if (rc) return rc;
      }
      break;
    }
    default: break;
  }
  m->min_fiber_length = lmin;
  m->min_fiber_length_along_tendon = sqrt(fmax(lmin * lmin - m->width * m->width, 0));
  return MBS_OK;
}

int mbs_muscle_state_count(const mbs_muscle_model* m, int* has_activation, int* has_fiber) {
  const int a = m->p.kind != MBS_MUSCLE_RIGID_TENDON;
  const int f = is_rigid(m) ? 0 : m->p.kind == MBS_MUSCLE_DELP1990 ? 2 : 1;
  if (has_activation) *has_activation = a;
  if (has_fiber) *has_fiber = f;
  return a + f;
}

// ---------------------------------------------------------------------------------------------
// Pennation and activation
// ---------------------------------------------------------------------------------------------

int mbs_muscle_uses_path_speed(const mbs_muscle_model* m) {
  const mbs_muscle_kind k = m->p.kind;
  return is_rigid(m) || !(k == MBS_MUSCLE_THELEN2003 || k == MBS_MUSCLE_MILLARD2012);
}

void mbs_muscle_pennation(const mbs_muscle_model* m, double l, double* alpha, double* cos_alpha,
                          double* dalpha_dl) {
  double a = 0, c = 1, d = 0;
  if (m->width > 0) {
    const double s = (l > 0) ? m->width / l : INFINITY;
    if (s < m->max_sin_pennation) {
      a = asin(s);
      c = sqrt(1 - s * s);
      d = -s / (c * l);  // = -tan(alpha)/l
    } else {
      a = m->p.maximum_pennation_angle;
      c = cos(a);
    }
  }
  if (alpha) *alpha = a;
  if (cos_alpha) *cos_alpha = c;
  if (dalpha_dl) *dalpha_dl = d;
}

double mbs_muscle_activation_derivative(const mbs_muscle_model* m, double u, double a) {
  const mbs_muscle_params* p = &m->p;
  switch (p->kind) {
    case MBS_MUSCLE_THELEN2003:
    case MBS_MUSCLE_MILLARD2012: {
      a = clampd(a, p->minimum_activation, 1);
      u = clampd(u, p->minimum_activation, 1);
      const double z = 0.5 + 1.5 * a;
      const double tau =
          u > a ? p->activation_time_constant * z : p->deactivation_time_constant / z;
      return (u - a) / tau;
    }
    case MBS_MUSCLE_DEGROOTE2016: {
      const double f = 0.5 * tanh(p->activation_dynamics_smoothing * (u - a));
      const double z = 0.5 + 1.5 * a;
      return ((f + 0.5) / (p->activation_time_constant * z) +
              (0.5 - f) * z / p->deactivation_time_constant) *
             (u - a);
    }
    case MBS_MUSCLE_SCHUTTE1993:
    case MBS_MUSCLE_DELP1990: {
      // SIMM's activation dynamics in normalized time t / time_scale (Schutte1993Muscle_
      // Deprecated::computeActuation, Delp1990Muscle_Deprecated::computeActuation)
      const mbs_simm_muscle_params* sm = &p->simm;
      const double rate = u >= a ? sm->activation1 * u + sm->activation2 : sm->activation2;
      return (u - a) * rate / sm->time_scale;
    }
    case MBS_MUSCLE_THELEN2003_DEPRECATED:
      return (u - a) / (u >= a ? p->activation_time_constant : p->deactivation_time_constant);
    default: return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Curves of a model
// ---------------------------------------------------------------------------------------------

void mbs_simm_muscle_curve_eval(const mbs_muscle_model* m, mbs_simm_curve which, double x,
                                double d[2]) {
  if (!is_simm(m->p.kind) || which < 0 || which >= MBS_SIMM_CURVE_COUNT) {
    d[0] = d[1] = NAN;
    return;
  }
  const mbs_muscle_curve* c = simm_curve_of(&m->p.simm, which);
  double e[3];
  mbs_function_eval(c->type, c->n, c->param, m->c.simm.coef[which], x, e);
  d[0] = e[0];
  d[1] = e[1];
}

// Schutte's passive curve: OpenSim's calcNonzeroPassiveForce uses e^{8(l~-1)}/e^4 (1 at
// l~ = 1.5, nonzero at any length) when the model file does not give the curve
static void schutte_fpe(const mbs_muscle_model* m, double l, double d[2]) {
  if (m->p.simm.passive_force_length_curve_is_default) {
    d[0] = exp(8 * (l - 1) - 4);
    d[1] = 8 * d[0];
  } else {
    mbs_simm_muscle_curve_eval(m, MBS_SIMM_PASSIVE_FORCE_LENGTH, l, d);
  }
}

// Schutte's force-velocity multiplier g(v~), v~ in l_opt per time_scale: Hill's hyperbola
// k_v (1 + v~)/(k_v - v~) while shortening (0 at v~ = -1, slope (1 + k_v)/k_v at 0) and
// (f_max v~ + s)/(v~ + s) while lengthening (toward f_max = 1.4), with k_v = 0.15 and
// s = 0.13 k_v/(1 + k_v): the relation OpenSim's Schutte1993Muscle_Deprecated::calcFiberVelocity
// inverts (with its damping) by the quadratic formula.
static const double schutte_kv = 0.15, schutte_slope_k = 0.13, schutte_fmax = 1.4;
static double schutte_s(void) { return schutte_slope_k * schutte_kv / (schutte_kv + 1); }
static double schutte_fv(double v, double* dfv) {
  if (v < 0) {
    const double q = schutte_kv - v;
    if (dfv) *dfv = schutte_kv * (1 + schutte_kv) / (q * q);
    return schutte_kv * (1 + v) / q;
  }
  const double sk = schutte_s(), q = v + sk;
  if (dfv) *dfv = (schutte_fmax - 1) * sk / (q * q);
  return (schutte_fmax * v + sk) / q;
}

// The root of v^2 + b v + c = 0 (c <= 0: real roots of opposite signs, or 0) that is negative
// (neg = 1) or non-negative (neg = 0), by the cancellation-free pair q, c/q.
static double quadratic_root(double b, double c, int neg) {
  const double q = -0.5 * (b + copysign(sqrt(b * b - 4 * c), b));
  if (q == 0) return 0;
  const double r1 = q, r2 = c / q;
  return neg ? fmin(r1, r2) : fmax(r1, r2);
}

// Schutte's fiber velocity v~ from A g(v~) + d v~ = F: with A = a f_AL, the active force at
// v~ = 0, shortening when F < A: d v~^2 - (F + k_v A + k_v d) v~ + k_v (F - A) = 0 (its root
// in (-1, 0) for F >= 0); lengthening: d v~^2 - (F - f_max A - s d) v~ - s (F - A) = 0 (its
// root >= 0); below F = -d (not reached: F is kept >= 0) pure damping, v~ = F/d.
static double schutte_velocity(double A, double F, double d) {
  if (F < -d) return F / d;
  if (F < A) return quadratic_root(-(F + schutte_kv * A + schutte_kv * d) / d,
                                   schutte_kv * (F - A) / d, 1);
  const double sk = schutte_s();
  return quadratic_root(-(F - schutte_fmax * A) / d + sk, -sk * (F - A) / d, 0);
}

static void curve_fal(const mbs_muscle_model* m, double l, double d[2]) {
  double e[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003:
    case MBS_MUSCLE_THELEN2003_DEPRECATED:  // the same Gaussian
      mbs_thelen2003_active_force_length(&m->p.thelen, l, d);
      return;
    case MBS_MUSCLE_MILLARD2012:
      mbs_bezier_curve_eval(&m->c.millard.afl, l, e);
      d[0] = e[0];
      d[1] = e[1];
      return;
    case MBS_MUSCLE_DEGROOTE2016:
      mbs_degroote2016_active_force_length(&m->p.degroote, l, d);
      return;
    case MBS_MUSCLE_SCHUTTE1993:
      // OpenSim's Schutte keeps f_AL >= 0 (its Delp computes its fiber force unclamped)
      mbs_simm_muscle_curve_eval(m, MBS_SIMM_ACTIVE_FORCE_LENGTH, l, d);
      if (d[0] < 0) d[0] = d[1] = 0;
      return;
    case MBS_MUSCLE_DELP1990:
      mbs_simm_muscle_curve_eval(m, MBS_SIMM_ACTIVE_FORCE_LENGTH, l, d);
      return;
    default: mbs_delp_curve_eval(&m->c.delp, MBS_DELP_ACTIVE_FORCE_LENGTH, l, d); return;
  }
}

static void curve_fpe(const mbs_muscle_model* m, double l, double d[2]) {
  double e[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003: mbs_thelen2003_passive_force_length(&m->p.thelen, l, d); return;
    case MBS_MUSCLE_THELEN2003_DEPRECATED:
      mbs_thelen2003_deprecated_passive_force_length(&m->p.thelen, l, d);
      return;
    case MBS_MUSCLE_MILLARD2012:
      mbs_bezier_curve_eval(&m->c.millard.fpe, l, e);
      d[0] = e[0];
      d[1] = e[1];
      return;
    case MBS_MUSCLE_DEGROOTE2016:
      mbs_degroote2016_passive_force_length(&m->p.degroote, l, d);
      return;
    case MBS_MUSCLE_SCHUTTE1993: schutte_fpe(m, l, d); return;
    case MBS_MUSCLE_DELP1990:
      mbs_simm_muscle_curve_eval(m, MBS_SIMM_PASSIVE_FORCE_LENGTH, l, d);
      return;
    default:
      // RigidTendonMuscle clamps its passive curve to [0, 10]
      mbs_delp_curve_eval(&m->c.delp, MBS_DELP_PASSIVE_FORCE_LENGTH, l, d);
      if (d[0] < 0 || d[0] > 10) {
        d[0] = clampd(d[0], 0, 10);
        d[1] = 0;
      }
      return;
  }
}

static void curve_fse(const mbs_muscle_model* m, double lt, double d[2]) {
  double e[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003: mbs_thelen2003_tendon_force_length(&m->p.thelen, lt, d); return;
    case MBS_MUSCLE_THELEN2003_DEPRECATED:  // at the tendon strain
      mbs_thelen2003_deprecated_tendon_force_length(&m->p.thelen, lt - 1, d);
      return;
    case MBS_MUSCLE_MILLARD2012:
      mbs_bezier_curve_eval(&m->c.millard.fse, lt, e);
      d[0] = e[0];
      d[1] = e[1];
      return;
    case MBS_MUSCLE_DEGROOTE2016:
      mbs_degroote2016_tendon_force_length(&m->p.degroote, lt, d);
      return;
    case MBS_MUSCLE_SCHUTTE1993:
    case MBS_MUSCLE_DELP1990:
      // the table is in tendon strain l~T - 1; no force below zero strain (calcTendonForce)
      if (lt - 1 < 0) d[0] = d[1] = 0;
      else mbs_simm_muscle_curve_eval(m, MBS_SIMM_TENDON_FORCE_LENGTH, lt - 1, d);
      return;
    default: d[0] = d[1] = 0; return;  // rigid tendon
  }
}

// the force-velocity multiplier at normalized velocity v (Thelen's depends on a)
static double curve_fv(const mbs_muscle_model* m, double a, double v, double* dfv) {
  double e[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003: return mbs_thelen2003_fv(&m->p.thelen, a, v, dfv);
    case MBS_MUSCLE_MILLARD2012:
      mbs_bezier_curve_eval(&m->c.millard.fv, v, e);
      if (dfv) *dfv = e[1];
      return e[0];
    case MBS_MUSCLE_DEGROOTE2016:
      mbs_degroote2016_force_velocity(v, e);
      if (dfv) *dfv = e[1];
      return e[0];
    case MBS_MUSCLE_SCHUTTE1993: return schutte_fv(v, dfv);
    case MBS_MUSCLE_DELP1990:
      mbs_simm_muscle_curve_eval(m, MBS_SIMM_FORCE_VELOCITY, v, e);
      if (dfv) *dfv = e[1];
      return e[0];
    default:
      mbs_delp_curve_eval(&m->c.delp, MBS_DELP_FORCE_VELOCITY, v, e);
      if (dfv) *dfv = e[1];
      return e[0];
  }
}

// the normalized velocity at multiplier fv (undamped models)
static double curve_fv_inverse(const mbs_muscle_model* m, double a, double fv) {
  double e[3];
  switch (m->p.kind) {
    case MBS_MUSCLE_THELEN2003: return mbs_thelen2003_fv_inverse(&m->p.thelen, a, fv, NULL);
    case MBS_MUSCLE_MILLARD2012:
      mbs_bezier_curve_eval_inverse(&m->c.millard.fv_inv, fv, e);
      return e[0];
    default: return mbs_degroote2016_fv_inverse(fv, NULL);
  }
}

// ---------------------------------------------------------------------------------------------
// Fiber dynamics
// ---------------------------------------------------------------------------------------------

// The damped equilibrium g(v) = a_fal fv(v) + fpe + beta v - target = 0 (increasing in v):
// a bracket grown from the guess, then Newton steps kept inside it. Returns 0 on success.
static int solve_damped_velocity(const mbs_muscle_model* m, double a, double a_fal, double fpe,
                                 double beta, double target, double guess, double* v_out) {
  double v = guess, dfv;
  double g = a_fal * curve_fv(m, a, v, &dfv) + fpe + beta * v - target;
  const double tol = 1e-12 * fmax(1, fabs(target));
  if (fabs(g) <= tol) {
    *v_out = v;
    return 0;
  }
  double lo, hi;
  double step = 0.5;
  if (g < 0) {
    lo = v;
    hi = v + step;
    for (int k = 0; k < 200; k++) {
      const double gh = a_fal * curve_fv(m, a, hi, NULL) + fpe + beta * hi - target;
      if (gh >= 0) break;
      lo = hi;
      step *= 2;
      hi += step;
    }
  } else {
    hi = v;
    lo = v - step;
    for (int k = 0; k < 200; k++) {
      const double gl = a_fal * curve_fv(m, a, lo, NULL) + fpe + beta * lo - target;
      if (gl <= 0) break;
      hi = lo;
      step *= 2;
      lo -= step;
    }
  }
  for (int it = 0; it < 200; it++) {
    g = a_fal * curve_fv(m, a, v, &dfv) + fpe + beta * v - target;
    if (fabs(g) <= tol) {
      *v_out = v;
      return 0;
    }
    if (g < 0) lo = v;
    else hi = v;
    const double dg = a_fal * dfv + beta;
    double vn = dg > 0 ? v - g / dg : -INFINITY;
    if (!(vn > lo && vn < hi)) vn = 0.5 * (lo + hi);
    if (hi - lo <= 4 * DBL_EPSILON * fmax(1, fabs(v))) {
      *v_out = 0.5 * (lo + hi);
      return 0;
    }
    v = vn;
  }
  *v_out = v;
  return -1;
}

static double effective_damping(const mbs_muscle_model* m) {
  if (m->p.kind == MBS_MUSCLE_MILLARD2012 && m->damped) return m->p.fiber_damping;
  if (m->p.kind == MBS_MUSCLE_DEGROOTE2016) return m->p.fiber_damping;
  if (m->p.kind == MBS_MUSCLE_SCHUTTE1993) return m->p.simm.damping;
  return 0;
}

// Schutte1993Muscle_Deprecated and Delp1990Muscle_Deprecated (computeActuation of each): fiber
// length state l (m) and, for Delp, fiber velocity state vm (m/s).
// the fiber's and tendon's lengths and speeds in a muscle's output (vn: normalized fiber
// velocity, in the model's own normalization)
static void report_geometry(mbs_muscle_output* out, double lm, double lopt, double vm, double vn,
                            double alpha, double cosa, double dalpha_dt, double vat, double lt,
                            double lst, double vmt) {
  out->fiber_length = lm;
  out->normalized_fiber_length = lm / lopt;
  out->fiber_velocity = vm;
  out->normalized_fiber_velocity = vn;
  out->pennation_angle = alpha;
  out->cos_pennation = cosa;
  out->pennation_angular_velocity = dalpha_dt;
  out->fiber_length_along_tendon = lm * cosa;
  out->fiber_velocity_along_tendon = vat;
  out->tendon_length = lt;
  out->normalized_tendon_length = lt / lst;
  out->tendon_strain = lt / lst - 1;
  out->tendon_velocity = vmt - vat;
}

static void report_multipliers(mbs_muscle_output* out, double fal, double fpe, double fv,
                               int clamped) {
  out->active_force_length_multiplier = fal;
  out->passive_force_multiplier = fpe;
  out->force_velocity_multiplier = fv;
  out->clamped = clamped;
}

static int simm_eval(const mbs_muscle_model* m, double lmt, double vmt, double activation,
                     double l, double vm_state, mbs_muscle_output* out, mbs_error* err) {
  const mbs_muscle_params* p = &m->p;
  const mbs_simm_muscle_params* sm = &p->simm;
  const char* name = mbs_muscle_kind_name(p->kind);
  const int delp = p->kind == MBS_MUSCLE_DELP1990;
  memset(out, 0, sizeof *out);
  if (!(isfinite(lmt) && isfinite(vmt) && isfinite(activation) && isfinite(l) &&
        (!delp || isfinite(vm_state))))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "%s: path length %g, speed %g, activation %g and fiber states %g, %g must "
                    "be finite",
                    name, lmt, vmt, activation, l, delp ? vm_state : 0.0);
  const double fiso = p->max_isometric_force, lopt = p->optimal_fiber_length;
  const double lst = p->tendon_slack_length, ts = sm->time_scale;
  const double vscale = m->velocity_scale;  // l_opt / time_scale
  const double lmin = m->min_fiber_length;
  const double a = clampd(activation, p->minimum_activation, 1);
  out->activation = a;

  // geometry: the fiber state floored at the minimum fiber length, constant-width pennation
  const double lm = fmax(l, lmin);
  double alpha, cosa, dadl;
  mbs_muscle_pennation(m, lm, &alpha, &cosa, &dadl);
  const double lt = lmt - lm * cosa;
  double fal[2], fpe[2], fse[2];
  curve_fal(m, lm / lopt, fal);
  curve_fpe(m, lm / lopt, fpe);
  curve_fse(m, lt / lst, fse);  // f_T at the tendon strain
  double vn, fv, acc = 0;  // v~ (l_opt / time_scale), f_V, Delp's dv^M/dt
  int clamped = 0;
  if (delp) {
    // the junction mass: d v~/dt~ = (f_T cos - F~ cos^2)/m~ + v~^2 tan^2 / l~
    vn = vm_state / vscale;
    fv = curve_fv(m, a, vn, NULL);
    const double fm = a * fal[0] * fv + fpe[0];
    const double mass = sm->mass * (lopt / ts) * (lopt / ts);
    const double ta = tan(alpha);
    const double acc_n =
        (fse[0] * cosa - fm * cosa * cosa) / mass + vn * vn * ta * ta / (lm / lopt);
    acc = acc_n * lopt / (ts * ts);
  } else if (cosa <= 1e-12) {
    // fibers perpendicular to the tendon (maximum_pennation_angle = pi/2 only): still while
    // the tendon carries no force, else as with a stiff tendon, the path's speed times the
    // cosine at the fiber length a slack tendon would leave
    vn = 0;
    if (fse[0] != 0) {
      const double lat = lmt - lst;
      const double cos_new = lat > 0 ? lat / sqrt(lat * lat + m->width * m->width) : 0;
      vn = vmt * cos_new / vscale;
    }
    fv = curve_fv(m, a, vn, NULL);
  } else {
    // Schutte's damped force-velocity relation A g(v~) + d v~ = F
    const double F = fmax(fse[0] / cosa - fpe[0], 0);
    vn = schutte_velocity(a * fal[0], F, sm->damping);
    fv = curve_fv(m, a, vn, NULL);
  }
  if (!delp) {
    clamped = l <= lmin && vn <= 0;
    if (clamped) {
      vn = 0;
      fv = 1;
    }
  }
  const double vm = vn * vscale;
  const double dalpha_dt = dadl * vm;
  const double vat = vm * cosa - lm * sin(alpha) * dalpha_dt;

  report_geometry(out, lm, lopt, vm, vm / (lopt * p->max_contraction_velocity), alpha, cosa,
                  dalpha_dt, vat, lt, lst, vmt);
  report_multipliers(out, fal[0], fpe[0], fv, clamped);
  if (!clamped) {
    out->active_fiber_force = fiso * a * fal[0] * fv;
    out->passive_fiber_force = fiso * fpe[0];
    out->damping_fiber_force = delp ? 0 : fiso * sm->damping * vn;
    out->fiber_force =
        out->active_fiber_force + out->passive_fiber_force + out->damping_fiber_force;
  }
  out->fiber_force_along_tendon = out->fiber_force * cosa;
  out->tendon_force = fiso * fse[0];
  out->normalized_tendon_force = fse[0];
  out->muscle_power = -out->tendon_force * vmt;
  out->fiber_state_derivative = delp ? vm_state : vm;
  out->fiber_acceleration = acc;
  return MBS_OK;
}

// Thelen2003Muscle_Deprecated (its computeActuation): fiber length state l (m); activation
// unclamped
static int thelen_deprecated_eval(const mbs_muscle_model* m, double lmt, double vmt,
                                  double a, double l, mbs_muscle_output* out, mbs_error* err) {
  const mbs_muscle_params* p = &m->p;
  const mbs_thelen2003_deprecated_params* o = &p->thelen_deprecated;
  const char* name = mbs_muscle_kind_name(p->kind);
  memset(out, 0, sizeof *out);
  if (!(isfinite(lmt) && isfinite(vmt) && isfinite(a) && isfinite(l)))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "%s: path length %g, speed %g, activation %g and fiber length %g must be "
                    "finite",
                    name, lmt, vmt, a, l);
  const double fiso = p->max_isometric_force, lopt = p->optimal_fiber_length;
  const double lst = p->tendon_slack_length;
  out->activation = a;
  // the maximum shortening velocity grows with activation
  const double vmax = (a < 1 ? o->vmax0 + a * (o->vmax - o->vmax0) : o->vmax) * lopt;
  double alpha, cosa, dadl, fal[2], fpe[2], fse[2];
  mbs_muscle_pennation(m, l, &alpha, &cosa, &dadl);
  const double lt = lmt - l * cosa;
  curve_fal(m, l / lopt, fal);
  curve_fpe(m, l / lopt, fpe);
  curve_fse(m, lt / lst, fse);
  const double A = fmax(a, 1e-6) * fal[0];
  double vn, F;  // v^M / vmax; the velocity-dependent force
  if (cosa <= 1e-12) {
    // fibers perpendicular to the tendon: still while the tendon carries (almost) no force,
    // else as with a stiff tendon, the path's speed times the cosine at the fiber length a
    // slack tendon would leave
    vn = 0;
    if (fabs(fse[0]) > 1e-12) {
      const double lat = lmt - lst;
      const double cos_new = lat > 0 ? lat / sqrt(lat * lat + m->width * m->width) : 0;
      vn = vmt * cos_new / vmax;
    }
    F = A;
  } else {
    F = fse[0] / cosa - fpe[0];
    vn = mbs_thelen2003_deprecated_fiber_velocity(&p->thelen, o->damping, A, F, NULL);
  }
  const double vm = vn * vmax;
  const double dalpha_dt = dadl * vm;
  const double vat = vm * cosa - l * sin(alpha) * dalpha_dt;
  report_geometry(out, l, lopt, vm, vm / (lopt * p->max_contraction_velocity), alpha, cosa,
                  dalpha_dt, vat, lt, lst, vmt);
  report_multipliers(out, fal[0], fpe[0], A > 0 ? F / A : 1, 0);
  out->active_fiber_force = fiso * F;
  out->passive_fiber_force = fiso * fpe[0];
  out->fiber_force = out->active_fiber_force + out->passive_fiber_force;
  out->fiber_force_along_tendon = out->fiber_force * cosa;
  out->tendon_force = fiso * fse[0];
  out->normalized_tendon_force = fse[0];
  out->muscle_power = -out->tendon_force * vmt;
  out->fiber_state_derivative = vm;
  return MBS_OK;
}

static int eval_one(const mbs_muscle_model* m, double lmt, double vmt, double activation,
                    double s, mbs_muscle_output* out, mbs_error* err) {
  const mbs_muscle_params* p = &m->p;
  const char* name = mbs_muscle_kind_name(p->kind);
  memset(out, 0, sizeof *out);
  if (!(isfinite(lmt) && isfinite(vmt) && isfinite(activation) && (isfinite(s) || is_rigid(m))))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "%s: path length %g, speed %g, activation %g and fiber state %g must be "
                    "finite",
                    name, lmt, vmt, activation, s);
  const double fiso = p->max_isometric_force, lopt = p->optimal_fiber_length;
  const double lst = p->tendon_slack_length, vscale = p->max_contraction_velocity * lopt;
  const double beta = effective_damping(m);
  const double lmin = m->min_fiber_length;
  const double a = clampd(activation, p->minimum_activation, 1);
  out->activation = a;

  double lm, alpha, cosa, dadl, lt, vn = 0, fv = 1, fse = 0, dfse = 0;
  double fal[2], fpe[2];
  int clamped = 0, tendon_given = 0;  // tendon_given: F^T from the fiber (rigid tendon)
  if (is_rigid(m)) {
    // the fiber spans the path less the slack tendon, at constant width
    const double lat = lmt - lst;
    lm = (lat >= m->min_fiber_length_along_tendon) ? sqrt(m->width * m->width + lat * lat) : lmin;
    mbs_muscle_pennation(m, lm, &alpha, &cosa, &dadl);
    lt = lmt - lm * cosa;
    const int buckled = lt < lst - 1e-12 * lst;  // path shorter than the shortest fiber + L_ST
    vn = buckled ? 0 : vmt * cosa / vscale;
    curve_fal(m, lm / lopt, fal);
    curve_fpe(m, lm / lopt, fpe);
    fv = curve_fv(m, a, vn, NULL);
    clamped = lm <= lmin && vn <= 0;
    tendon_given = 1;
  } else if (p->kind == MBS_MUSCLE_DEGROOTE2016) {
    if (!(s > -0.2))
      return MBS_FAIL(err, MBS_ERR_NAN, name,
                      "%s: the normalized tendon force %g is at or below -0.2, where the tendon "
                      "curve has no inverse",
                      name, s);
    lt = lst * mbs_degroote2016_tendon_length(&p->degroote, s);
    const double lat = lmt - lt;
    if (!(lat > 0))
      return MBS_FAIL(err, MBS_ERR_NAN, name,
                      "%s: the tendon (%g m at normalized force %g) is as long as the path (%g m): "
                      "the fiber has no length along the tendon",
                      name, lt, s, lmt);
    lm = sqrt(lat * lat + m->width * m->width);
    cosa = lat / lm;
    alpha = atan2(m->width, lat);
    dadl = m->width > 0 ? -(m->width / lm) / (cosa * lm) : 0;
    fse = s;
    double dd[2];
    mbs_degroote2016_tendon_force_length(&p->degroote, lt / lst, dd);
    dfse = dd[1];
    curve_fal(m, lm / lopt, fal);
    curve_fpe(m, lm / lopt, fpe);
    const double target = s / cosa, a_fal = a * fal[0];
    if (beta > 0) {
      double guess = 0;
      if (a_fal > 1e-3) guess = clampd(mbs_degroote2016_fv_inverse(
                                           clampd((target - fpe[0]) / a_fal, 0.05, 1.75), NULL),
                                       -1, 1);
      if (solve_damped_velocity(m, a, a_fal, fpe[0], beta, target, guess, &vn))
        return MBS_FAIL(err, MBS_ERR_NAN, name,
                        "%s: the damped fiber velocity did not converge (a = %g, l^M = %g m)",
                        name, a, lm);
      fv = curve_fv(m, a, vn, NULL);
    } else {
      if (!(a_fal > 1e-12))
        return MBS_FAIL(err, MBS_ERR_NAN, name,
                        "%s: a f_AL = %g: without fiber damping the explicit fiber velocity is "
                        "singular (give a positive minimum activation or fiber damping)",
                        name, a_fal);
      fv = (target - fpe[0]) / a_fal;
      vn = mbs_degroote2016_fv_inverse(fv, NULL);
    }
  } else {  // Thelen, Millard: fiber length state
    lm = fmax(s, lmin);
    mbs_muscle_pennation(m, lm, &alpha, &cosa, &dadl);
    lt = lmt - lm * cosa;
    double dd[2];
    curve_fse(m, lt / lst, dd);
    fse = dd[0];
    dfse = dd[1];
    curve_fal(m, lm / lopt, fal);
    curve_fpe(m, lm / lopt, fpe);
    const double target = fse / cosa, a_fal = a * fal[0];
    if (beta > 0) {
      // start from the undamped solution, as OpenSim does
      const double fv0 = (target - fpe[0]) / (fmax(a, 0.01) * fmax(fal[0], 0.01));
      const double guess = clampd(curve_fv_inverse(m, a, fv0), -1, 1);
      if (solve_damped_velocity(m, a, a_fal, fpe[0], beta, target, guess, &vn))
        return MBS_FAIL(err, MBS_ERR_NAN, name,
                        "%s: the damped fiber velocity did not converge (a = %g, l^M = %g m)",
                        name, a, lm);
      fv = curve_fv(m, a, vn, NULL);
    } else {
      fv = (target - fpe[0]) / a_fal;  // a >= 0.01 and f_AL > 0 by construction
      vn = curve_fv_inverse(m, a, fv);
    }
    clamped = s <= lmin && vn <= 0;
  }

  if (clamped) {
    vn = 0;
    fv = 1;
  }
  const double vm = vn * vscale;
  const double dalpha_dt = dadl * vm;
  const double vat = vm * cosa - lm * sin(alpha) * dalpha_dt;

  report_geometry(out, lm, lopt, vm, vn, alpha, cosa, dalpha_dt, vat, lt, lst, vmt);
  report_multipliers(out, fal[0], fpe[0], fv, clamped);
  if (!clamped) {
    double fa = fiso * a * fal[0] * fv, fp = fiso * fpe[0], fd = fiso * beta * vn;
    if (tendon_given && fa + fp + fd < 0) {
      // a rigid tendon cannot push: the damping saturates (OpenSim's Millard)
      if (fa + fp < 0) fa = -fp;
      fd = -fa - fp;
    }
    out->active_fiber_force = fa;
    out->passive_fiber_force = fp;
    out->damping_fiber_force = fd;
    out->fiber_force = fa + fp + fd;
  }
  out->fiber_force_along_tendon = out->fiber_force * cosa;
  out->tendon_force = tendon_given ? out->fiber_force_along_tendon : fiso * fse;
  out->normalized_tendon_force = out->tendon_force / fiso;
  out->muscle_power = -out->tendon_force * vmt;
  if (p->kind == MBS_MUSCLE_DEGROOTE2016 && !tendon_given)
    out->fiber_state_derivative = dfse * out->tendon_velocity / lst;
  else if (!tendon_given)
    out->fiber_state_derivative = vm;
  return MBS_OK;
}

int mbs_muscle_eval_states(const mbs_muscle_model* m, double lmt, double vmt, double activation,
                           const double* fs, mbs_muscle_output* out, mbs_error* err) {
  int nf = 0;
  mbs_muscle_state_count(m, NULL, &nf);
  if (nf > 0 && !fs) {
    const char* name = mbs_muscle_kind_name(m->p.kind);
    memset(out, 0, sizeof *out);
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name, "%s: its %d fiber state%s not given", name, nf,
                    nf == 1 ? " is" : "s are");
  }
  switch (m->p.kind) {
    case MBS_MUSCLE_SCHUTTE1993: return simm_eval(m, lmt, vmt, activation, fs[0], 0, out, err);
    case MBS_MUSCLE_DELP1990: return simm_eval(m, lmt, vmt, activation, fs[0], fs[1], out, err);
    case MBS_MUSCLE_THELEN2003_DEPRECATED:
      return thelen_deprecated_eval(m, lmt, vmt, activation, fs[0], out, err);
    default: return eval_one(m, lmt, vmt, activation, nf ? fs[0] : NAN, out, err);
  }
}

int mbs_muscle_eval(const mbs_muscle_model* m, double lmt, double vmt, double activation,
                    double fiber_state, mbs_muscle_output* out, mbs_error* err) {
  if (m->p.kind == MBS_MUSCLE_DELP1990) {
    const char* name = mbs_muscle_kind_name(m->p.kind);
    memset(out, 0, sizeof *out);
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "%s: has two fiber states (length and velocity): evaluate it with "
                    "mbs_muscle_eval_states",
                    name);
  }
  return mbs_muscle_eval_states(m, lmt, vmt, activation, &fiber_state, out, err);
}

// ---------------------------------------------------------------------------------------------
// Equilibrium initialization
// ---------------------------------------------------------------------------------------------

typedef struct eq_ctx {
  const mbs_muscle_model* m;
  double a, lmt, vmt;
} eq_ctx;

typedef void (*residual_fn)(const eq_ctx* c, double x, double* r, double* dr);

// Thelen, Millard: fiber force along the tendon - tendon force (N) at fiber length lm, with
// the fiber velocity of OpenSim's heuristic when vmt != 0: the path velocity is shared between
// fiber (along the tendon) and tendon in inverse proportion to their stiffnesses (all of it to
// the tendon when the tendon is slack, all to the fiber when the fiber's stiffness is <= 0).
// dr is the partial at fixed fiber velocity; *vm_out (may be NULL) the fiber velocity, m/s.
static void fiber_length_balance(const eq_ctx* c, double lm, double* r, double* dr,
                                 double* vm_out) {
  const mbs_muscle_model* m = c->m;
  const mbs_muscle_params* p = &m->p;
  const double fiso = p->max_isometric_force, lopt = p->optimal_fiber_length;
  const double lst = p->tendon_slack_length, vscale = m->velocity_scale;
  const double beta = effective_damping(m), a = c->a;
  double alpha, cosa, dadl, fal[2], fpe[2], fse[2];
  mbs_muscle_pennation(m, lm, &alpha, &cosa, &dadl);
  const double sina = sin(alpha);
  const double lt = c->lmt - lm * cosa;
  const double dlat_dl = cosa - lm * sina * dadl;  // d(l^M cos(alpha))/dl^M
  const double dcos_dl = -sina * dadl;
  curve_fal(m, lm / lopt, fal);
  curve_fpe(m, lm / lopt, fpe);
  curve_fse(m, lt / lst, fse);
  double vn = 0, fv = 1;
  if (c->vmt != 0) {
    const double f0 = a * fal[0] + fpe[0];
    const double kf = fiso * ((a * fal[1] + fpe[1]) / lopt * cosa + f0 * dcos_dl) / dlat_dl;
    const double kt = fiso * fse[1] / lst;
    // a fiber of negative stiffness (descending limb) counts as infinitely compliant, which
    // keeps the split continuous where OpenSim's kf/(kf + kt) has a pole
    const double kfp = fmax(kf, 0);
    const double vt = (kfp + kt > 0 && lt > lst) ? kfp / (kfp + kt) * c->vmt : c->vmt;
    vn = (c->vmt - vt) * cosa / vscale;
    fv = curve_fv(m, a, vn, NULL);
  }
  const double fm = a * fal[0] * fv + fpe[0] + beta * vn;
  *r = fiso * (fm * cosa - fse[0]);
  *dr = fiso * ((a * fal[1] * fv + fpe[1]) / lopt * cosa + fm * dcos_dl + fse[1] / lst * dlat_dl);
  if (vm_out) *vm_out = vn * vscale;
}
static void fiber_length_residual(const eq_ctx* c, double lm, double* r, double* dr) {
  fiber_length_balance(c, lm, r, dr, NULL);
}

// DeGroote: the same residual as a function of the normalized tendon force, with zero tendon
// velocity (OpenSim solves its implicit form with d f_T/dt = 0): the fiber takes all of vmt.
static void tendon_force_residual(const eq_ctx* c, double ft, double* r, double* dr) {
  const mbs_muscle_model* m = c->m;
  const mbs_muscle_params* p = &m->p;
  const double fiso = p->max_isometric_force, lopt = p->optimal_fiber_length;
  const double lst = p->tendon_slack_length, vscale = p->max_contraction_velocity * lopt;
  const double beta = effective_damping(m), a = c->a, h = m->width;
  const double lt = lst * mbs_degroote2016_tendon_length(&p->degroote, ft);
  double fse[2], fal[2], fpe[2], dfv;
  mbs_degroote2016_tendon_force_length(&p->degroote, lt / lst, fse);
  const double lat = c->lmt - lt, lm = sqrt(lat * lat + h * h), cosa = lat / lm;
  curve_fal(m, lm / lopt, fal);
  curve_fpe(m, lm / lopt, fpe);
  const double vn = c->vmt * cosa / vscale;
  const double fv = curve_fv(m, a, vn, &dfv);
  const double fm = a * fal[0] * fv + fpe[0] + beta * vn;
  *r = fiso * (fm * cosa - ft);
  const double dcos_dlat = h * h / (lm * lm * lm);
  const double dfm_dlat = (a * fal[1] * fv + fpe[1]) / lopt * cosa +
                          (a * fal[0] * dfv + beta) * c->vmt / vscale * dcos_dlat;
  const double dlat_dft = -lst / fse[1];
  *dr = fiso * ((dfm_dlat * cosa + fm * dcos_dlat) * dlat_dft - 1);
}

// Newton's method kept inside the bracket [lo, hi] (r(lo), r(hi) of opposite signs), bisecting
// when a step leaves it or |r| does not halve twice in a row. 0: |r| <= tol; -1: iteration
// limit; -2: the bracket shrank to nothing (a jump in r, not a root), x_out, r_out at the end
// of the final bracket where r has the sign of r(lo).
static int solve_bracketed(residual_fn f, const eq_ctx* c, double lo, double hi, double r_lo,
                           double x, double tol, double* x_out, double* r_out, int* iters) {
  const int neg_lo = r_lo < 0;
  double r = r_lo, dr, r_prev = INFINITY, r_lo_now = r_lo;
  int slow = 0;
  if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
  for (int it = 1; it <= 300; it++) {
    f(c, x, &r, &dr);
    *iters = it;
    *x_out = x;
    *r_out = r;
    if (fabs(r) <= tol) return 0;
    if ((r < 0) == neg_lo) {
      lo = x;
      r_lo_now = r;
    } else {
      hi = x;
    }
    slow = fabs(r) > 0.5 * fabs(r_prev) ? slow + 1 : 0;
    double xn = x - r / dr;
    if (!(isfinite(xn) && xn > lo && xn < hi) || slow >= 2) {
      xn = 0.5 * (lo + hi);
      slow = 0;
    }
    if (hi - lo <= 4 * DBL_EPSILON * fmax(fabs(lo), fabs(hi))) {
      *x_out = lo;
      *r_out = r_lo_now;
      return -2;
    }
    r_prev = r;
    x = xn;
  }
  return -1;
}

int mbs_muscle_equilibrium_solve(const mbs_muscle_model* m, double activation, double lmt,
                                 double vmt, double tol, mbs_muscle_equilibrium* eq,
                                 mbs_error* err) {
  const mbs_muscle_params* p = &m->p;
  const char* name = mbs_muscle_kind_name(p->kind);
  memset(eq, 0, sizeof *eq);
  eq->fiber_state = NAN;
  if (!(isfinite(activation) && isfinite(lmt) && isfinite(vmt)))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, name,
                    "%s: equilibrium needs finite activation (%g), length (%g) and speed (%g)",
                    name, activation, lmt, vmt);
  const double fiso = p->max_isometric_force, lst = p->tendon_slack_length;
  if (!(tol > 0)) tol = 1e-8 * fiso;
  // OpenSim 2's Thelen model starts isometric at any speed (computeIsometricForce)
  const eq_ctx c = {m, clampd(activation, p->minimum_activation, 1), lmt,
                    p->kind == MBS_MUSCLE_THELEN2003_DEPRECATED ? 0 : vmt};

  if (is_rigid(m)) {  // no fiber state: the path fixes the fiber
    mbs_muscle_output o;
    const int rc = mbs_muscle_eval(m, lmt, vmt, activation, 0, &o, err);
    if (rc) return rc;
    eq->fiber_length = o.fiber_length;
    eq->fiber_velocity = o.fiber_velocity;
    eq->tendon_force = o.tendon_force;
    eq->at_lower_bound = o.clamped;
    return MBS_OK;
  }

  const double lmin = m->min_fiber_length, h = m->width;
  double r_lo, r_hi, dr, x, r;
  int rc;
  if (p->kind == MBS_MUSCLE_DEGROOTE2016) {
    const double lt_max = lmt - m->min_fiber_length_along_tendon;
    if (!(lt_max > lst)) {
      // even with a slack tendon the fiber would be shorter than its minimum length
      eq->at_lower_bound = 1;
      eq->fiber_state = 0;
      eq->fiber_length = lmin;
      return MBS_OK;
    }
    double fd[2];
    mbs_degroote2016_tendon_force_length(&p->degroote, lt_max / lst, fd);
    const double f_hi = fmin(5.0, fd[0]);
    tendon_force_residual(&c, 0, &r_lo, &dr);
    if (fabs(r_lo) <= tol) {
      x = 0;
      r = r_lo;
    } else if (r_lo < 0) {
      // the fiber pushes even against a slack tendon (damping while shortening fast): zero
      // tendon force, as OpenSim's bisection on [0, 5] ends
      eq->tendon_slack = 1;
      x = 0;
      r = r_lo;
    } else {
      tendon_force_residual(&c, f_hi, &r_hi, &dr);
      if (r_hi > tol) {  // the fiber outpulls the tendon up to the bound
        if (f_hi < 5) eq->at_lower_bound = 1;
        else eq->at_upper_bound = 1;
        x = f_hi;
        r = r_hi;
      } else if (fabs(r_hi) <= tol) {
        x = f_hi;
        r = r_hi;
      } else {
        rc = solve_bracketed(tendon_force_residual, &c, 0, f_hi, r_lo, fmin(0.5 * f_hi, r_lo / fiso),
                             tol, &x, &r, &eq->iterations);
        if (rc)
          return MBS_FAIL(err, MBS_ERR_ASSEMBLY, name,
                          "%s: the equilibrium iteration %s at a = %g, L^MT = %g m, V^MT = %g "
                          "m/s (tendon force %g F_max, residual %g N, tolerance %g N)",
                          name, rc == -1 ? "reached its limit" : "stalled at a jump", c.a, lmt,
                          vmt, x, r, tol);
      }
    }
    const double lat = lmt - lst * mbs_degroote2016_tendon_length(&p->degroote, x);
    eq->fiber_state = x;
    eq->fiber_length = eq->at_lower_bound ? lmin : sqrt(lat * lat + h * h);
    double cos_eq;  // the fiber takes all of vmt, as the residual assumes
    mbs_muscle_pennation(m, eq->fiber_length, NULL, &cos_eq, NULL);
    eq->fiber_velocity = vmt * cos_eq;
    eq->tendon_force = x * fiso;
    eq->residual = r;
    return MBS_OK;
  }

  // Thelen, Millard: fiber length in [l_min, the length at which the tendon is slack]
  const double lat_slack = lmt - lst;
  const double lo = lmin;
  const double hi = lat_slack > m->min_fiber_length_along_tendon ? sqrt(h * h + lat_slack * lat_slack)
                                                                 : lmin;
  fiber_length_residual(&c, lo, &r_lo, &dr);
  if (fabs(r_lo) <= tol) {
    x = lo;
    r = r_lo;
  } else if (r_lo > 0) {
    eq->at_lower_bound = 1;
    x = lo;
    r = r_lo;
  } else {
    fiber_length_residual(&c, hi, &r_hi, &dr);
    if (fabs(r_hi) <= tol) {
      x = hi;
      r = r_hi;
    } else if (r_hi < 0 && is_simm(p->kind)) {
      // a tabulated passive curve dipping below zero (a spline's undershoot) makes the fiber
      // push even with the tendon slack: the tendon is just slack, as at a pushing fiber
      eq->tendon_slack = 1;
      x = hi;
      r = r_hi;
    } else if (r_hi < 0) {
      return MBS_FAIL(err, MBS_ERR_ASSEMBLY, name,
                      "%s: no equilibrium at a = %g, L^MT = %g m, V^MT = %g m/s: the fiber force "
                      "along the tendon stays below the tendon force (%g N short at a slack "
                      "tendon)",
                      name, c.a, lmt, vmt, r_hi);
    } else {
      // OpenSim's first guess: the tendon 1 % longer than slack
      const double lat0 = lmt - 1.01 * lst;
      const double x0 = sqrt(h * h + lat0 * lat0);
      rc = solve_bracketed(fiber_length_residual, &c, lo, hi, r_lo, x0, tol, &x, &r,
                           &eq->iterations);
      if (rc == -2 && hi - x <= 1e-9 * hi) {
        // the sign changes only where the tendon goes slack: below it the (shortening) fiber
        // pushes; at it the slack tendon leaves the fiber still
        eq->tendon_slack = 1;
        x = hi;
        rc = 0;
      }
      if (rc)
        return MBS_FAIL(err, MBS_ERR_ASSEMBLY, name,
                        "%s: the equilibrium iteration %s at a = %g, L^MT = %g m, V^MT = %g m/s "
                        "(fiber length %g m, residual %g N, tolerance %g N)",
                        name, rc == -1 ? "reached its limit" : "stalled at a jump", c.a, lmt, vmt,
                        x, r, tol);
    }
  }
  double cosa, fse[2], rr, drr;
  mbs_muscle_pennation(m, x, NULL, &cosa, NULL);
  curve_fse(m, (lmt - x * cosa) / lst, fse);
  eq->fiber_state = x;
  eq->fiber_length = x;
  fiber_length_balance(&c, x, &rr, &drr, &eq->fiber_velocity);
  eq->tendon_force = fse[0] * fiso;
  eq->residual = r;
  return MBS_OK;
}
