// Path actuators, path springs and ligaments (include/mbs/path_force.h): force elements whose
// tension pulls along a geometry path (path.c), applied through mbs_path_apply_tension as a
// muscle's tendon force is (force_muscle.c). The laws are OpenSim's:
//   PathActuator::computeActuation   T = optimal_force * control
//   PathSpring::getTension           T = stiffness * stretch * (1 + dissipation * L'),
//                                    stretch = max(0, L - resting_length)
//   Ligament::computeForce           T = pcsa_force * curve(L / resting_length) if L >
//                                    resting_length, else 0
// Their numbers are instance parameters checked at Instance; the path, the control function
// and the curve are the System's. At Dynamics each evaluates its path once (length and speed),
// keeps a report in the State's force cache (the tension first, which mbs_get_actuator_tension
// reads) and applies the tension; nothing is allocated.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mbs/path_force.h"
#include "model_impl.h"
#include "path_impl.h"

// integer arguments (iarg)
enum { PF_PATH = 0, PF_FUNCTION = 1 };  // function: a control function or the curve, or -1

// parameters
enum { PA_OPTIMAL = 0, PA_SIZE = 1 };
enum { PS_REST = 0, PS_STIFFNESS = 1, PS_DISSIPATION = 2, PS_SIZE = 3 };
enum { LG_REST = 0, LG_PCSA = 1, LG_SIZE = 2 };

// the report cache (Dynamics)
enum {
  PR_TENSION = 0, PR_LENGTH, PR_SPEED, PR_STRETCH, PR_CONTROL, PR_ELASTIC, PR_DISSIPATIVE,
  PR_SIZE
};

//---------------------------------- checks -----------------------------------------------------

// A parameter check shared by add time (defaults) and Instance (the State's values): 0 if fine,
// else 1 with the reason in msg.
typedef int (*problem_fn)(const double* p, char* msg, size_t n);

static int negative(double v, const char* what, char* msg, size_t n) {
  if (v < 0) {
    snprintf(msg, n, "%s %g must not be negative", what, v);
    return 1;
  }
  return 0;
}

static int actuator_problem(const double* p, char* msg, size_t n) {
  if (!(p[PA_OPTIMAL] > 0)) {
    snprintf(msg, n, "optimal_force %g must be positive", p[PA_OPTIMAL]);
    return 1;
  }
  return 0;
}

static int spring_problem(const double* p, char* msg, size_t n) {
  return negative(p[PS_REST], "resting_length", msg, n) ||
         negative(p[PS_STIFFNESS], "stiffness", msg, n) ||
         negative(p[PS_DISSIPATION], "dissipation", msg, n);
}

static int ligament_problem(const double* p, char* msg, size_t n) {
  if (!(p[LG_REST] > 0)) {
    snprintf(msg, n, "resting_length %g must be positive", p[LG_REST]);
    return 1;
  }
  return negative(p[LG_PCSA], "pcsa_force", msg, n);
}

static int check_with(mbs_state* st, const mbs_force_desc* f, const double* p, problem_fn fn) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  if (fn(p, msg, sizeof(msg))) return mbs_force_fail(st, f, "%s", msg);
  return MBS_OK;
}

static int actuator_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                          const double* p) {
  (void)sys;
  return check_with(st, f, p, actuator_problem);
}
static int spring_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                        const double* p) {
  (void)sys;
  return check_with(st, f, p, spring_problem);
}
static int ligament_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                          const double* p) {
  (void)sys;
  return check_with(st, f, p, ligament_problem);
}

//---------------------------------- dynamics ---------------------------------------------------

// evaluate the path with its speed; NaN length and speed if it fails (the error is in the
// State, and the NaN tension that follows is reported by the dynamics)
static void eval_path(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                      mbs_path_eval_out* o) {
  if (mbs_path_eval(sys, st, f->iarg[PF_PATH], o, 1) != MBS_OK) o->length = o->speed = NAN;
}

// keep the report and apply the tension
static void finish(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                   const mbs_path_eval_out* o, double tension, double stretch, double control,
                   double elastic, double dissipative, double* F_body, double* f_mob) {
  double* r = st->force_cache + f->cache_adr;
  r[PR_TENSION] = tension;
  r[PR_LENGTH] = o->length;
  r[PR_SPEED] = o->speed;
  r[PR_STRETCH] = stretch;
  r[PR_CONTROL] = control;
  r[PR_ELASTIC] = elastic;
  r[PR_DISSIPATIVE] = dissipative;
  mbs_path_apply_tension(sys, st, f->iarg[PF_PATH], o, tension, F_body, f_mob);
}

static void actuator_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                           const double* p, double* F_body, double* f_mob) {
  mbs_path_eval_out o;
  eval_path(sys, st, f, &o);
  // the control in effect: its function of time or the State's control, plus controllers'
  const double c = f->control >= 0 ? st->control_eff[f->control] : 0.0;
  double tension = p[PA_OPTIMAL] * c;
  if (isnan(o.length)) tension = NAN;
  finish(sys, st, f, &o, tension, 0.0, c, 0.0, 0.0, F_body, f_mob);
}

static double spring_stretch(double length, double rest) {
  return length > rest ? length - rest : isnan(length) ? NAN : 0.0;
}

static void spring_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                         const double* p, double* F_body, double* f_mob) {
  mbs_path_eval_out o;
  eval_path(sys, st, f, &o);
  const double stretch = spring_stretch(o.length, p[PS_REST]);
  const double elastic = p[PS_STIFFNESS] * stretch;
  const double dissipative = elastic * p[PS_DISSIPATION] * o.speed;
  finish(sys, st, f, &o, elastic + dissipative, stretch, 0.0, elastic, dissipative, F_body,
         f_mob);
}

// stiffness * stretch^2 / 2 at the State's pose. The path's evaluation writes only its wraps'
// memories in the State, as mbs_calc_path_length does.
static double spring_potential(const mbs_system* sys, const mbs_state* cst,
                               const mbs_force_desc* f, const double* p) {
  mbs_state* st = (mbs_state*)cst;
  mbs_path_eval_out o;
  if (mbs_path_eval(sys, st, f->iarg[PF_PATH], &o, 0) != MBS_OK) return NAN;
  const double s = spring_stretch(o.length, p[PS_REST]);
  return 0.5 * p[PS_STIFFNESS] * s * s;
}

static void ligament_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                           const double* p, double* F_body, double* f_mob) {
  mbs_path_eval_out o;
  eval_path(sys, st, f, &o);
  const double rest = p[LG_REST];
  double tension = 0.0;
  if (!(o.length <= rest)) {  // stretched (or a failed path: NaN)
    double d[3];
    mbs_system_eval_function(sys, st, f->iarg[PF_FUNCTION], o.length / rest, d);
    tension = p[LG_PCSA] * d[0];
  }
  finish(sys, st, f, &o, tension, spring_stretch(o.length, rest), 0.0, tension, 0.0, F_body,
         f_mob);
}

const mbs_force_ops mbs_path_actuator_ops = {"path_actuator", actuator_check, actuator_apply,
                                             NULL};
const mbs_force_ops mbs_path_spring_ops = {"path_spring", spring_check, spring_apply,
                                           spring_potential};
const mbs_force_ops mbs_ligament_ops = {"ligament", ligament_check, ligament_apply, NULL};

//---------------------------------- building ---------------------------------------------------

// an element about to be added: who adds it, its kind and the name it will have
typedef struct pending {
  const char* func;
  const char* kind;
  const char* name;
  char fallback[48];                   // "<kind><index>", when there is no other name
  char comp[MBS_ERROR_COMPONENT_LEN];  // "force '<name>'" (cut to fit)
} pending;

static int add_fail(mbs_system* sys, const pending* pd, int code, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_fail(mbs_system* sys, const pending* pd, int code, const char* fmt, ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return mbs_error_set(&sys->err, code, pd->func, __LINE__, pd->comp, "%s (%s): %s", pd->comp,
                       pd->kind, msg);
}

// the checks every element shares, before anything is added: its name (given, else the path's
// owner, else "<kind><index>" when the path does not exist), its path, finite defaults and the
// element's own problems
static int begin(mbs_system* sys, pending* pd, const char* func, const char* kind,
                 const char* name, int path, const double* p, int np, problem_fn fn) {
  pd->func = func;
  pd->kind = kind;
  const int path_ok = path >= 0 && path < mbs_system_npath(sys);
  snprintf(pd->fallback, sizeof(pd->fallback), "%.20s%d", kind, sys->nforce);
  pd->name = name ? name : path_ok ? mbs_path_owner(sys, path) : pd->fallback;
  snprintf(pd->comp, sizeof(pd->comp), "force '%.*s'", (int)sizeof(pd->comp) - 9, pd->name);
  int rc = mbs_system_check_building(sys, func);
  if (rc) return rc;
  if (!path_ok)
    return add_fail(sys, pd, MBS_ERR_ARGUMENT, "path %d does not exist (0..%d)", path,
                    mbs_system_npath(sys) - 1);
  if (!pd->name[0] || strchr(pd->name, '/'))
    return add_fail(sys, pd, MBS_ERR_ARGUMENT, "a name must not be empty or contain '/'");
  if (mbs_force_find(sys, pd->name) >= 0)
    return add_fail(sys, pd, MBS_ERR_ARGUMENT, "the name is taken by another force");
  for (int k = 0; k < np; k++)
    if (!isfinite(p[k])) return add_fail(sys, pd, MBS_ERR_PARAMETER, "a parameter is not finite");
  char msg[MBS_ERROR_MESSAGE_LEN];
  if (fn(p, msg, sizeof(msg))) return add_fail(sys, pd, MBS_ERR_PARAMETER, "%s", msg);
  return MBS_OK;
}

static int check_function(mbs_system* sys, const pending* pd, int fn, int optional,
                          const char* what) {
  if (fn < (optional ? -1 : 0) || fn >= sys->nfunc)
    return add_fail(sys, pd, MBS_ERR_ARGUMENT, "%s refers to function %d, which does not exist "
                    "(%s0..%d)", what, fn, optional ? "-1 or " : "", sys->nfunc - 1);
  return MBS_OK;
}

// add the element: named, its parameters declared, its report cache reserved
static int add(mbs_system* sys, const pending* pd, mbs_force_type type, int path, int function,
               const double* p, const char* const* fields, const char* const* units, int np) {
  const int id = mbs_system_new_force(sys, type, pd->kind, 0, 0, p, np);
  if (id < 0) return id;
  int rc = mbs_system_set_force_name(sys, id, pd->name);
  if (rc) return rc;
  sys->force[id].iarg[PF_PATH] = path;
  sys->force[id].iarg[PF_FUNCTION] = function;
  for (int k = 0; k < np; k++)
    if ((rc = mbs_system_force_param(sys, id, fields[k], k, 1, units[k]))) return rc;
  if ((rc = mbs_system_force_cache(sys, id, PR_SIZE))) return rc;
  return id;
}

int mbs_system_add_path_actuator(mbs_system* sys, const mbs_path_actuator_spec* s) {
  static const char* const fields[PA_SIZE] = {"optimal_force"};
  static const char* const units[PA_SIZE] = {"N"};
  if (!s) return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "path_actuator", "path_actuator: no spec");
  const double p[PA_SIZE] = {s->optimal_force};
  pending pd;
  int rc = begin(sys, &pd, __func__, "path_actuator", s->name, s->path, p, PA_SIZE,
                 actuator_problem);
  if (rc) return rc;
  if (!isfinite(s->default_control))
    return add_fail(sys, &pd, MBS_ERR_PARAMETER, "default control is not finite");
  if ((rc = check_function(sys, &pd, s->control_function, 1, "control function"))) return rc;
  const int id = add(sys, &pd, MBS_FORCE_PATH_ACTUATOR, s->path, s->control_function, p, fields,
                     units, PA_SIZE);
  if (id < 0) return id;
  const int c = mbs_system_force_control(sys, id, s->default_control, s->control_function);
  return c < 0 ? c : id;
}

int mbs_system_add_path_spring(mbs_system* sys, const mbs_path_spring_spec* s) {
  static const char* const fields[PS_SIZE] = {"resting_length", "stiffness", "dissipation"};
  static const char* const units[PS_SIZE] = {"m", "N/m", "s/m"};
  if (!s) return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "path_spring", "path_spring: no spec");
  const double p[PS_SIZE] = {s->resting_length, s->stiffness, s->dissipation};
  pending pd;
  int rc = begin(sys, &pd, __func__, "path_spring", s->name, s->path, p, PS_SIZE,
                 spring_problem);
  if (rc) return rc;
  return add(sys, &pd, MBS_FORCE_PATH_SPRING, s->path, -1, p, fields, units, PS_SIZE);
}

int mbs_system_add_ligament(mbs_system* sys, const mbs_ligament_spec* s) {
  static const char* const fields[LG_SIZE] = {"resting_length", "pcsa_force"};
  static const char* const units[LG_SIZE] = {"m", "N"};
  if (!s) return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "ligament", "ligament: no spec");
  const double p[LG_SIZE] = {s->resting_length, s->pcsa_force};
  pending pd;
  int rc = begin(sys, &pd, __func__, "ligament", s->name, s->path, p, LG_SIZE,
                 ligament_problem);
  if (rc) return rc;
  if ((rc = check_function(sys, &pd, s->force_length_curve, 0, "force_length_curve")))
    return rc;
  return add(sys, &pd, MBS_FORCE_LIGAMENT, s->path, s->force_length_curve, p, fields, units,
             LG_SIZE);
}

int mbs_system_add_ligament_default_curve(mbs_system* sys, const char* name) {
  // OpenSim Ligament::constructProperties
  static const double x[13] = {-5.0, 0.998, 0.999, 1.0, 1.1,   1.2,  1.3,
                               1.4,  1.5,   1.6,   1.601, 1.602, 5.0};
  static const double y[13] = {0.0,  0.0,  0.0, 0.0, 0.035, 0.12, 0.26,
                               0.55, 1.17, 2.0, 2.0, 2.0,   2.0};
  mbs_function_spec s;
  memset(&s, 0, sizeof(s));
  s.type = MBS_FUNC_SIMM_SPLINE;
  s.name = name;
  s.n = 13;
  s.x = x;
  s.y = y;
  return mbs_system_add_function(sys, &s);
}

//---------------------------------- queries ----------------------------------------------------

static int is_path_force(const mbs_system* sys, int force) {
  if (force < 0 || force >= sys->nforce) return 0;
  const mbs_force_type t = sys->force[force].type;
  return t == MBS_FORCE_PATH_ACTUATOR || t == MBS_FORCE_PATH_SPRING || t == MBS_FORCE_LIGAMENT;
}

int mbs_get_path_force_report(const mbs_system* sys, mbs_state* st, int force,
                              mbs_path_force_report* out) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  if (!is_path_force(sys, force) || !out)
    return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, __func__, __LINE__, sys->name,
                         "%s: force %d is not a path actuator, path spring or ligament (or no "
                         "output given)", __func__, force);
  const double* r = st->force_cache + sys->force[force].cache_adr;
  out->tension = r[PR_TENSION];
  out->length = r[PR_LENGTH];
  out->lengthening_speed = r[PR_SPEED];
  out->stretch = r[PR_STRETCH];
  out->control = r[PR_CONTROL];
  out->elastic_tension = r[PR_ELASTIC];
  out->dissipative_tension = r[PR_DISSIPATIVE];
  return MBS_OK;
}

int mbs_path_force_path(const mbs_system* sys, int force) {
  return is_path_force(sys, force) ? sys->force[force].iarg[PF_PATH] : -1;
}
