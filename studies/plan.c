// The plan of a study (engine.h): the model, what each parameter sets, the trajectories and
// frames, the events and the per-sample scalars, all resolved against the model and checked
// before the first sample runs.
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_models.h"
#include "engine.h"
#include "test_functions.h"

int mbs_plan_fail(mbs_error* err, int code, const mbs_study_spec* s, int line, const char* fm,
                  ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fm);
  vsnprintf(msg, sizeof(msg), fm, ap);
  va_end(ap);
  const char* base = strrchr(s->path, '/');
  base = base ? base + 1 : s->path;
  if (line > 0)
    return mbs_error_set(err, code, "mbs_study_run", line, base, "%s:%d: %s", base, line, msg);
  return mbs_error_set(err, code, "mbs_study_run", 0, base, "%s: %s", base, msg);
}

uint64_t mbs_fnv1a(uint64_t h, const void* data, size_t n) {
  const unsigned char* p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t mbs_file_hash(const char* path, int* ok) {
  FILE* f = fopen(path, "rb");
  uint64_t h = MBS_FNV_OFFSET;
  *ok = f != NULL;
  if (!f) return h;
  unsigned char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) h = mbs_fnv1a(h, buf, n);
  fclose(f);
  return h;
}

#define NO_MEMORY(err) MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory")

int mbs_plan_load_model(mbs_plan* P, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  mbs_osim_options o = {.external_loads = sp->external_loads};
  mbs_error e;
  uint64_t h = MBS_FNV_OFFSET;
  if (sp->model_path) {
    P->om = mbs_osim_read_options(sp->model_path, &o, &e);
    int ok;
    h = mbs_file_hash(sp->model_path, &ok);
  } else if ((P->fn = mbs_test_function_find(sp->model))) {
    h = mbs_fnv1a(h, sp->model, strlen(sp->model));
  } else {
    const char* text = mbs_builtin_model(sp->model);
    if (!text && !strcmp(sp->model, "human"))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, 0,
                           "model: 'human' (mbstudy's standing human) stands on the perturbation "
                           "platform of a posture study: add a posture: section (knee_flexion, "
                           "magnitude, ...)");
    if (!text) {
      char list[400] = "";
      for (int i = 0; i < mbs_builtin_model_count(); i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, mbs_builtin_model_name(i), sizeof(list) - strlen(list) - 1);
      }
      strncat(list, "; test functions: ", sizeof(list) - strlen(list) - 1);
      for (int i = 0; i < mbs_test_function_count(); i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, mbs_test_function_at(i)->name, sizeof(list) - strlen(list) - 1);
      }
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, 0,
                           "model: '%s' is neither an .osim file nor a built-in model (%s)",
                           sp->model, list);
    }
    P->om = mbs_osim_parse(text, strlen(text), sp->model, &o, &e);
    h = mbs_fnv1a(h, text, strlen(text));
  }
  if (!P->fn && !P->om)
    return mbs_error_set(err, e.code, "mbs_study_run", 0, e.component, "%s", e.message);
  if (P->om) P->sys = mbs_osim_system(P->om);
  if (!P->fn && !sp->has_simulation && !mbs_spec_find_section(sp, "pipeline"))
    return mbs_plan_fail(err, MBS_ERR_PARSE, sp, 1, "simulation: missing (required: model '%s' "
                         "is simulated)", sp->model);
  h = mbs_fnv1a(h, sp->text, strlen(sp->text));
  P->fingerprint = h;
  return MBS_OK;
}

//---------------------------------- parameters -------------------------------------------------

static int grow_params(mbs_plan* P, mbs_error* err) {
  mbs_param_plan* par = realloc(P->par, (size_t)(P->np + 2) * sizeof(*par));
  if (par) P->par = par;
  mbs_distribution* dist = realloc(P->dist, (size_t)(P->np + 2) * sizeof(*dist));
  if (dist) P->dist = dist;
  if (!par || !dist) return NO_MEMORY(err);
  memset(&P->par[P->np], 0, sizeof(*par));
  memset(&P->dist[P->np], 0, sizeof(*dist));
  P->par[P->np].lower = -INFINITY;
  P->par[P->np].upper = INFINITY;
  return MBS_OK;
}

int mbs_plan_add_axis(mbs_plan* P, const char* name, const char* unit, const double* levels,
                      int n, mbs_error* err) {
  if (P->np > P->naxes)
    return MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "a driver's axis after the spec's parameters");
  int rc = grow_params(P, err);
  if (rc) return rc;
  double* v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  mbs_param_plan* q = &P->par[P->np];
  q->name = mbs_format_string("%s", name);
  if (!v || !q->name) {
    free(v);
    free(q->name);
    q->name = NULL;
    return NO_MEMORY(err);
  }
  memcpy(v, levels, (size_t)n * sizeof(double));
  q->kind = MBS_PK_DRIVER;
  q->index = P->naxes;
  q->unit = unit;
  P->dist[P->np] = (mbs_distribution){.type = MBS_DIST_DISCRETE, .values = v, .nvalues = n};
  P->np++;
  P->naxes++;
  return MBS_OK;
}

// "/jointset/<joint>/<coordinate>/default_value" (or default_speed_value)
static int coordinate_param(const mbs_plan* P, const char* path, mbs_param_kind* kind) {
  const char* last = strrchr(path, '/');
  if (!last) return -1;
  if (!strcmp(last, "/default_value")) *kind = MBS_PK_COORD_VALUE;
  else if (!strcmp(last, "/default_speed_value")) *kind = MBS_PK_COORD_SPEED;
  else return -1;
  const char* prev = last;
  while (prev > path && prev[-1] != '/') prev--;
  const size_t n = (size_t)(last - prev);
  char name[256];
  if (n == 0 || n >= sizeof(name)) return -1;
  memcpy(name, prev, n);
  name[n] = 0;
  return mbs_osim_find_coordinate(P->om, name);
}

// the interval holding a distribution's values
static void dist_support(const mbs_distribution* d, double* lo, double* hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  switch (d->type) {
    case MBS_DIST_UNIFORM: *lo = d->a; *hi = d->b; break;
    case MBS_DIST_LOGNORMAL: *lo = 0; break;
    case MBS_DIST_TRUNCATED_NORMAL: *lo = d->lo; *hi = d->hi; break;
    case MBS_DIST_CONSTANT: *lo = *hi = d->a; break;
    case MBS_DIST_DISCRETE:
      *lo = INFINITY;
      *hi = -INFINITY;
      for (int i = 0; i < d->nvalues; i++) {
        *lo = fmin(*lo, d->values[i]);
        *hi = fmax(*hi, d->values[i]);
      }
      break;
    default: break;
  }
}

void mbs_plan_support(const mbs_plan* P, int j, double* lo, double* hi) {
  dist_support(&P->dist[j], lo, hi);
  if (P->par[j].is_scale) {
    const double a = *lo * P->par[j].base, b = *hi * P->par[j].base;
    *lo = fmin(a, b);
    *hi = fmax(a, b);
  }
}

double mbs_plan_nominal(const mbs_plan* P, int j) {
  const mbs_spec_parameter* sp = P->par[j].spec;
  if (sp && !isnan(sp->initial)) return sp->initial;
  return P->par[j].base;
}

// a test function's argument: "/x<i>", 1 <= i <= max
static int function_arg(const mbs_test_function* fn, const char* path) {
  if (path[0] != '/' || path[1] != 'x') return -1;
  char* end;
  const long i = strtol(path + 2, &end, 10);
  if (*end || end == path + 2 || i < 1 || i > fn->max_dim || path[2] == '0') return -1;
  return (int)i - 1;
}

static int plan_function_params(mbs_plan* P, int first, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  int dim = 0;
  for (int i = first; i < P->np; i++) {
    const mbs_spec_parameter* p = P->par[i].spec;
    const int k = p->component == 0 ? function_arg(P->fn, p->path) : -1;
    if (k < 0)
      return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, p->line,
                           "parameters: '%s' is not an argument of the test function '%s' "
                           "(/x1 .. /x%d)", p->path, P->fn->name, P->fn->max_dim);
    P->par[i].kind = MBS_PK_FUNCTION;
    P->par[i].index = k;
    P->par[i].base = P->fn->default_arg(k);
    P->par[i].unit = "1";
    if (k + 1 > dim) dim = k + 1;
  }
  if (dim < P->fn->min_dim) dim = P->fn->min_dim;
  P->nscal = 0;  // the function's outputs become its first scalars (plan_events_and_scalars)
  P->frame_values = 0;
  (void)dim;
  return MBS_OK;
}

// A name or path against a pattern with * and ? (within a path segment, as a shell's): the
// matcher of parameter paths, muscle lists and excitations
static int path_matches(const char* pattern, const char* path) {
  return fnmatch(pattern, path, FNM_PATHNAME) == 0;
}

static int is_muscle(const mbs_system* sys, int force) {
  const char* kind = force >= 0 ? mbs_force_kind(sys, force) : NULL;
  return kind && !strcmp(kind, "muscle");
}

// the path "/forceset/<muscle>/excitation" of control c, or 0 when c drives no muscle
static int excitation_path(const mbs_system* sys, int c, char* buf, size_t n) {
  const int f = mbs_control_force(sys, c);
  if (!is_muscle(sys, f)) return 0;
  snprintf(buf, n, "/forceset/%s/excitation", mbs_force_name(sys, f));
  return 1;
}

// A muscle's excitation set through the State's control has an effect unless the model gives it
// as a function of time (a PrescribedController, a controls file): the excitation in effect at
// two control values, compared. `st` is a scratch State of the model.
static int excitation_is_settable(const mbs_system* sys, mbs_state* st, int c) {
  const int f = mbs_control_force(sys, c);
  const double saved = mbs_state_controls(st)[c];
  double e[2] = {0, 1};
  for (int k = 0; k < 2; k++) {
    mbs_state_upd_controls(st)[c] = 0.25 + 0.5 * k;
    mbs_muscle_report rep = {0};
    if (mbs_realize_dynamics(sys, st) || mbs_get_muscle_report(sys, st, f, &rep)) break;
    e[k] = rep.excitation;
  }
  mbs_state_upd_controls(st)[c] = saved;
  return e[0] != e[1];
}

static int fixed_excitation(const mbs_plan* P, const mbs_spec_parameter* p, const char* path,
                            mbs_error* err) {
  return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, p->line,
                       "parameters: '%s': the muscle's excitation is a function of time in model "
                       "'%s' (its controller's), not the State's control: a study cannot set it",
                       path, mbs_osim_name(P->om));
}

// A path with * or ? (within a segment, as a shell's): every instance parameter it matches
// (component [k] of each) and every muscle excitation, set together. All must share a unit.
static int plan_pattern(mbs_plan* P, mbs_param_plan* q, mbs_state* scratch, mbs_error* err) {
  const mbs_spec_parameter* p = q->spec;
  const mbs_study_spec* sp = P->spec;
  const int nb = mbs_system_nparam_block(P->sys);
  const int ncontrol = mbs_system_ncontrol(P->sys);
  q->linked = malloc((size_t)(nb + 1) * sizeof(int));
  q->linked_base = malloc((size_t)(nb + 1) * sizeof(double));
  q->controls = malloc((size_t)(ncontrol + 1) * sizeof(int));
  q->control_base = malloc((size_t)(ncontrol + 1) * sizeof(double));
  if (!q->linked || !q->linked_base || !q->controls || !q->control_base) return NO_MEMORY(err);
  q->lower = -INFINITY;
  q->upper = INFINITY;
  const char* first_path = NULL;
  for (int b = 0; b < nb; b++) {
    const mbs_param_info* info = mbs_system_param_block(P->sys, b);
    if (!path_matches(p->path, info->path) || p->component >= info->size) continue;
    if (q->nlinked > 0 && strcmp(q->unit, info->unit))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, p->line,
                           "parameters: '%s' matches parameters of different units ('%s' in %s, "
                           "'%s' in %s)", q->name, q->unit, first_path, info->unit, info->path);
    if (!first_path) first_path = info->path;
    q->unit = info->unit;
    q->linked[q->nlinked] = info->index + p->component;
    q->linked_base[q->nlinked] = mbs_system_param_default(P->sys, info->index + p->component);
    q->lower = fmax(q->lower, info->lower);
    q->upper = fmin(q->upper, info->upper);
    q->nlinked++;
  }
  for (int c = 0; c < ncontrol && p->component == 0; c++) {
    char path[400];
    if (!excitation_path(P->sys, c, path, sizeof(path)) || !path_matches(p->path, path))
      continue;
    if (q->nlinked > 0 && strcmp(q->unit, "1"))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, p->line,
                           "parameters: '%s' matches parameters of different units ('%s' in %s, "
                           "'1' in %s)", q->name, q->unit, first_path, path);
    if (!excitation_is_settable(P->sys, scratch, c)) return fixed_excitation(P, p, path, err);
    q->unit = "1";
    q->controls[q->ncontrols] = c;
    q->control_base[q->ncontrols] = mbs_state_controls(scratch)[c];
    q->ncontrols++;
  }
  if (q->nlinked == 0 && q->ncontrols == 0)
    return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, p->line,
                         "parameters: '%s' matches no parameter of model '%s' (* and ? match "
                         "within one path segment; see mbstudy model params)", q->name,
                         mbs_osim_name(P->om));
  q->kind = MBS_PK_SYSTEM_SET;
  q->index = q->nlinked > 0 ? q->linked[0] : -1;
  q->base = q->nlinked > 0 ? q->linked_base[0] : q->control_base[0];
  if (p->is_scale) {  // the factor itself is the parameter's value
    q->base = 1;
    q->unit = "1 (factor on each matched parameter)";
  }
  return MBS_OK;
}

static int plan_model_params(mbs_plan* P, int first, mbs_state* scratch, mbs_error* err);

int mbs_plan_params(mbs_plan* P, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  const int first = P->np;
  for (int i = 0; i < sp->nparams; i++) {
    int rc = grow_params(P, err);
    if (rc) return rc;
    const mbs_spec_parameter* p = &sp->params[i];
    mbs_param_plan* q = &P->par[P->np];
    q->spec = p;
    q->is_scale = p->is_scale;
    q->name = p->component ? mbs_format_string("%s[%d]", p->path, p->component)
                           : mbs_format_string("%s", p->path);
    if (!q->name) return NO_MEMORY(err);
    P->dist[P->np] = p->dist;
    P->np++;
    if (p->has_dist) {
      char what[300];
      snprintf(what, sizeof(what), "parameter '%s'", q->name);
      mbs_error de;
      if (mbs_distribution_check(&p->dist, what, &de) != MBS_OK)
        return mbs_plan_fail(err, de.code, sp, p->line, "%s", de.message);
    }
  }
  if (P->fn) return plan_function_params(P, first, err);
  // a State of the model's defaults: the controls' default values, and whether they act
  mbs_state* scratch = P->np > first ? mbs_state_create(P->sys) : NULL;
  if (P->np > first && !scratch) return NO_MEMORY(err);
  const int rc = plan_model_params(P, first, scratch, err);
  mbs_state_destroy(scratch);
  return rc;
}

// the spec's parameters from `first` on, resolved against the model
static int plan_model_params(mbs_plan* P, int first, mbs_state* scratch, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  for (int i = first; i < P->np; i++) {
    mbs_param_plan* q = &P->par[i];
    const mbs_spec_parameter* p = q->spec;
    if (strpbrk(p->path, "*?")) {
      const int rc = plan_pattern(P, q, scratch, err);
      if (rc) return rc;
      continue;
    }
    const mbs_param_info* info = mbs_system_find_param(P->sys, p->path);
    if (info) {
      if (p->component < 0 || p->component >= info->size)
        return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, p->line,
                             "parameters: '%s' has %d component%s; [%d] is out of range",
                             p->path, info->size, info->size == 1 ? "" : "s", p->component);
      q->kind = MBS_PK_SYSTEM;
      q->index = info->index + p->component;
      q->base = mbs_system_param_default(P->sys, q->index);
      q->unit = info->unit;
      q->lower = info->lower;
      q->upper = info->upper;
      if (!p->has_dist) continue;
      // values outside the valid range will fail their samples: say so before the run
      double lo, hi;
      mbs_plan_support(P, i, &lo, &hi);
      if (P->rank == 0 && P->log && (lo < info->lower || hi > info->upper))
        fprintf(P->log, "mbstudy: warning: parameters: '%s' may be drawn outside its valid "
                "range (%g .. %g); those samples will fail\n", q->name, info->lower,
                info->upper);
      continue;
    }
    mbs_param_kind kind;
    const int c = coordinate_param(P, p->path, &kind);
    if (c >= 0 && p->component == 0) {
      const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(P->om, c);
      q->kind = kind;
      q->index = c;
      q->base = kind == MBS_PK_COORD_VALUE ? ci->default_value : ci->default_speed;
      const int rot = ci->motion == MBS_OSIM_ROTATIONAL;
      q->unit = kind == MBS_PK_COORD_VALUE ? (rot ? "rad" : "m") : (rot ? "rad/s" : "m/s");
      continue;
    }
    // a muscle's excitation: its State control
    int control = -1;
    char path[400];
    for (int k = 0; k < mbs_system_ncontrol(P->sys) && control < 0; k++)
      if (excitation_path(P->sys, k, path, sizeof(path)) && !strcmp(path, p->path)) control = k;
    if (control >= 0) {
      if (p->component != 0)
        return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, p->line,
                             "parameters: '%s' has 1 component; [%d] is out of range", p->path,
                             p->component);
      if (!excitation_is_settable(P->sys, scratch, control))
        return fixed_excitation(P, p, p->path, err);
      q->kind = MBS_PK_CONTROL;
      q->index = control;
      q->base = mbs_state_controls(scratch)[control];
      q->unit = "1";
      continue;
    }
    // the closest known paths, to help
    char hint[600] = "";
    const char* slash = strrchr(p->path, '/');
    const size_t prefix = slash ? (size_t)(slash - p->path) : 0;
    int shown = 0;
    for (int b = 0; b < mbs_system_nparam_block(P->sys) && shown < 4; b++) {
      const char* bp = mbs_system_param_block(P->sys, b)->path;
      if (prefix && !strncmp(bp, p->path, prefix)) {
        strncat(hint, shown ? ", " : "; the model has e.g. ", sizeof(hint) - strlen(hint) - 1);
        strncat(hint, bp, sizeof(hint) - strlen(hint) - 1);
        shown++;
      }
    }
    for (int k = 0; k < mbs_system_ncontrol(P->sys) && shown < 5; k++)
      if (prefix && excitation_path(P->sys, k, path, sizeof(path)) &&
          !strncmp(path, p->path, prefix) && path[prefix] == '/') {
        strncat(hint, shown ? ", " : "; the model has e.g. ", sizeof(hint) - strlen(hint) - 1);
        strncat(hint, path, sizeof(hint) - strlen(hint) - 1);
        shown++;
      }
    return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, p->line,
                         "parameters: '%s' is not a parameter of model '%s'%s", p->path,
                         mbs_osim_name(P->om), hint);
  }
  return MBS_OK;
}

int mbs_plan_require_distributions(const mbs_plan* P, const char* what, mbs_error* err) {
  for (int j = P->naxes; j < P->np; j++)
    if (P->par[j].spec && !P->par[j].spec->has_dist)
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, P->par[j].spec->line,
                           "parameters: '%s' has no distribution: %s", P->par[j].name, what);
  return MBS_OK;
}

void mbs_plan_values_from_unit(const mbs_plan* P, const double* u, double* values) {
  for (int i = 0; i < P->np; i++) {
    const double x = mbs_distribution_quantile(&P->dist[i], u[i]);
    values[i] = P->par[i].is_scale ? x * P->par[i].base : x;
  }
}

static int levels_of(const mbs_distribution* d) {
  return d->type == MBS_DIST_DISCRETE ? d->nvalues : 1;
}

void mbs_plan_grid_point(const mbs_plan* P, long index, double* values) {
  int lv[MBS_SOBOL_MAX_DIM];
  double uu[MBS_SOBOL_MAX_DIM];
  const int big = P->np > MBS_SOBOL_MAX_DIM;
  int* levels = big ? malloc((size_t)P->np * sizeof(int)) : lv;
  double* u = big ? malloc((size_t)P->np * sizeof(double)) : uu;
  if (!levels || !u) {
    for (int i = 0; i < P->np; i++) values[i] = NAN;
  } else {
    for (int i = 0; i < P->np; i++) levels[i] = levels_of(&P->dist[i]);
    mbs_grid_point(levels, P->np, index, u);
    mbs_plan_values_from_unit(P, u, values);
  }
  if (big) {
    free(levels);
    free(u);
  }
}

long mbs_plan_grid_count(const mbs_plan* P) {
  int* levels = malloc((size_t)(P->np + 1) * sizeof(int));
  if (!levels) return -1;
  for (int i = 0; i < P->np; i++) levels[i] = levels_of(&P->dist[i]);
  const long n = mbs_grid_count(levels, P->np);
  free(levels);
  return n;
}

//---------------------------------- outputs ----------------------------------------------------

static int add_quantity(mbs_plan* P, const char* name, int kind, int arg, int ncomp,
                        const char* const* comps, const char* unit) {
  mbs_quantity_plan* nq = realloc(P->quant, (size_t)(P->nquant + 1) * sizeof(*nq));
  if (!nq) return MBS_ERR_NO_MEMORY;
  P->quant = nq;
  mbs_quantity_plan* q = &P->quant[P->nquant++];
  memset(q, 0, sizeof(*q));
  q->name = mbs_format_string("%s", name);
  q->kind = kind;
  q->arg = arg;
  q->ncomp = ncomp;
  q->unit = unit;
  q->comps = calloc((size_t)ncomp + 1, sizeof(char*));
  if (!q->name || !q->comps) return MBS_ERR_NO_MEMORY;
  for (int k = 0; k < ncomp; k++)
    if (!(q->comps[k] = mbs_format_string("%s", comps[k]))) return MBS_ERR_NO_MEMORY;
  return MBS_OK;
}

// each quantity's offset in a sample's frame values, and their number
static void lay_out_frames(mbs_plan* P) {
  long off = 0;
  for (int i = 0; i < P->nquant; i++) {
    P->quant[i].offset = off;
    off += (long)P->nframes * P->quant[i].ncomp;
  }
  P->frame_values = off;
}

int mbs_plan_set_frames(mbs_plan* P, int n, const double* times, const char* units,
                        mbs_error* err) {
  if (n < 1 || !times)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "study", "mbs_plan_set_frames: %d frames", n);
  double* t = malloc((size_t)n * sizeof(double));
  if (!t) return NO_MEMORY(err);
  memcpy(t, times, (size_t)n * sizeof(double));
  free(P->times);
  P->times = t;
  P->nframes = n;
  P->time_units = units;
  lay_out_frames(P);
  return MBS_OK;
}

int mbs_plan_add_driver_quantity(mbs_plan* P, const char* name, int ncomp,
                                 const char* const* comps, const char* unit, mbs_error* err) {
  if (ncomp < 1)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "study", "'%s': a trajectory with %d components",
                    name, ncomp);
  if (add_quantity(P, name, MBS_Q_DRIVER, 0, ncomp, comps, unit)) return NO_MEMORY(err);
  lay_out_frames(P);
  return P->nquant - 1;
}

static const char* const xyz[3] = {"x", "y", "z"};

// q, u, com or a body's position, recorded as a trajectory (hidden: for a scalar only)
static int add_basic_quantity(mbs_plan* P, int kind, int arg, int hidden) {
  const int nc = mbs_osim_ncoordinate(P->om);
  const char** names = calloc((size_t)nc + 1, sizeof(char*));
  if (!names) return MBS_ERR_NO_MEMORY;
  for (int k = 0; k < nc; k++) names[k] = mbs_osim_coordinate_info(P->om, k)->name;
  char nm[300];
  snprintf(nm, sizeof(nm), "%s", kind == MBS_Q_Q ? "q" : kind == MBS_Q_U ? "u" : "com");
  if (kind == MBS_Q_BODY_POS)
    snprintf(nm, sizeof(nm), "bodies/%s/position", mbs_body_name(P->sys, arg));
  const int coords = kind == MBS_Q_Q || kind == MBS_Q_U;
  const int rc = add_quantity(P, nm, kind, arg, coords ? nc : 3, coords ? names : xyz,
                              kind == MBS_Q_Q ? "rad or m" : kind == MBS_Q_U ? "rad/s or m/s"
                                                                              : "m");
  free(names);
  if (rc) return rc;
  mbs_quantity_plan* q = &P->quant[P->nquant - 1];
  q->hidden = hidden;
  if (coords) {  // rad or m per coordinate, by its motion type (OpenSim's rule)
    if (!(q->comp_units = calloc((size_t)nc + 1, sizeof(char*)))) return MBS_ERR_NO_MEMORY;
    for (int k = 0; k < nc; k++) {
      const int rot = mbs_osim_coordinate_info(P->om, k)->motion == MBS_OSIM_ROTATIONAL;
      q->comp_units[k] = kind == MBS_Q_Q ? (rot ? "rad" : "m") : (rot ? "rad/s" : "m/s");
    }
  }
  return MBS_OK;
}

// a muscle field of the muscles forces[0..n-1], "muscles/<field>" (hidden: for a scalar only)
static int add_muscle_quantity(mbs_plan* P, int field, const int* forces, int n, int hidden) {
  const char** names = calloc((size_t)n + 1, sizeof(char*));
  int* fs = malloc(((size_t)n + 1) * sizeof(int));
  if (!names || !fs) {
    free(names);
    free(fs);
    return MBS_ERR_NO_MEMORY;
  }
  for (int k = 0; k < n; k++) names[k] = mbs_force_name(P->sys, forces[k]);
  memcpy(fs, forces, (size_t)n * sizeof(int));
  char nm[300];
  snprintf(nm, sizeof(nm), "muscles/%s", mbs_spec_muscle_output_name(field));
  const int rc = add_quantity(P, nm, MBS_Q_MUSCLE, field, n, names,
                              mbs_spec_muscle_output_unit(field));
  free(names);
  if (rc) {
    free(fs);
    return rc;
  }
  P->quant[P->nquant - 1].forces = fs;
  P->quant[P->nquant - 1].hidden = hidden;
  return MBS_OK;
}

// the model's muscles as "a, b, c, ..." (for messages)
static void muscle_list(const mbs_system* sys, char* buf, size_t cap) {
  buf[0] = '\0';
  int shown = 0;
  for (int f = 0; f < mbs_system_nforce(sys); f++) {
    if (!is_muscle(sys, f)) continue;
    if (shown == 6) {
      strncat(buf, ", ...", cap - strlen(buf) - 1);
      break;
    }
    strncat(buf, shown ? ", " : "", cap - strlen(buf) - 1);
    strncat(buf, mbs_force_name(sys, f), cap - strlen(buf) - 1);
    shown++;
  }
}

// outputs.muscles resolved to muscles (in the list's order, each pattern's matches in the
// model's order, each muscle once), and one trajectory per field of outputs.muscle_outputs
static int plan_muscles(mbs_plan* P, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  const mbs_system* sys = P->sys;
  const int nf = mbs_system_nforce(sys);
  int nmuscle = 0;
  for (int f = 0; f < nf; f++) nmuscle += is_muscle(sys, f);
  if (nmuscle == 0)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, sp->muscles_line,
                         "outputs.muscles: model '%s' has no muscles", mbs_osim_name(P->om));
  int* chosen = malloc((size_t)nmuscle * sizeof(int));
  if (!chosen) return NO_MEMORY(err);
  int n = 0, rc = MBS_OK;
  char list[400];
  for (int i = 0; i < sp->nmuscles && !rc; i++) {
    int matched = 0;
    for (int f = 0; f < nf; f++) {
      if (!is_muscle(sys, f) || !path_matches(sp->muscles[i], mbs_force_name(sys, f))) continue;
      matched++;
      int seen = 0;
      for (int k = 0; k < n; k++) seen = seen || chosen[k] == f;
      if (!seen) chosen[n++] = f;
    }
    if (matched) continue;
    const int f = mbs_force_find(sys, sp->muscles[i]);
    muscle_list(sys, list, sizeof(list));
    if (f >= 0)
      rc = mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, sp->muscle_lines[i],
                         "outputs.muscles: '%s' is a force of kind '%s', not a muscle (the "
                         "model's muscles: %s)", sp->muscles[i], mbs_force_kind(sys, f), list);
    else
      rc = mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, sp->muscle_lines[i],
                         "outputs.muscles: '%s' matches no muscle of model '%s' (its muscles: "
                         "%s)", sp->muscles[i], mbs_osim_name(P->om), list);
  }
  for (int j = 0; j < sp->nmuscle_outputs && !rc; j++)
    if (add_muscle_quantity(P, sp->muscle_outputs[j], chosen, n, 0)) rc = NO_MEMORY(err);
  free(chosen);
  return rc;
}

int mbs_plan_outputs(mbs_plan* P, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  const mbs_system* sys = P->sys;
  if (P->fn) {  // a formula: no trajectories, one frame
    P->nframes = 1;
    P->times = calloc(1, sizeof(double));
    return P->times ? MBS_OK : NO_MEMORY(err);
  }
  int rc = MBS_OK;
  static const char* wxyz[4] = {"w", "x", "y", "z"};
  if (sp->outputs & MBS_OUT_Q) rc |= add_basic_quantity(P, MBS_Q_Q, 0, 0);
  if (sp->outputs & MBS_OUT_U) rc |= add_basic_quantity(P, MBS_Q_U, 0, 0);
  if (sp->outputs & MBS_OUT_COM) rc |= add_basic_quantity(P, MBS_Q_COM, 0, 0);
  if ((sp->outputs & MBS_OUT_Z) && mbs_system_nz(sys) == 0 && P->rank == 0 && P->log)
    fprintf(P->log, "mbstudy: warning: outputs: z: model '%s' has no auxiliary state variables "
            "(activations, fiber lengths); nothing recorded\n", mbs_osim_name(P->om));
  if ((sp->outputs & MBS_OUT_Z) && mbs_system_nz(sys) > 0) {
    const int nz = mbs_system_nz(sys);
    char** zn = calloc((size_t)nz + 1, sizeof(char*));
    int ok = zn != NULL;
    for (int i = 0; ok && i < nz; i++) {
      char buf[300];
      mbs_system_z_name(sys, i, buf, sizeof(buf));
      ok = (zn[i] = mbs_format_string("%s", buf)) != NULL;
    }
    if (ok) rc |= add_quantity(P, "z", MBS_Q_Z, 0, nz, (const char* const*)zn, "1 or m");
    for (int i = 0; zn && i < nz; i++) free(zn[i]);
    free(zn);
    if (!ok) rc = MBS_ERR_NO_MEMORY;
  }
  if (rc) return NO_MEMORY(err);
  if (sp->outputs & MBS_OUT_BODIES)
    for (int i = 0; i < sp->nbodies; i++) {
      const int b = mbs_body_find(sys, sp->bodies[i]);
      if (b < 0)
        return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, 0,
                             "outputs.bodies: '%s' is not a body", sp->bodies[i]);
      char nm[300];
      rc |= add_basic_quantity(P, MBS_Q_BODY_POS, b, 0);
      snprintf(nm, sizeof(nm), "bodies/%s/orientation", sp->bodies[i]);
      rc |= add_quantity(P, nm, MBS_Q_BODY_ORI, b, 4, wxyz, "1 (quaternion)");
    }
  if (sp->outputs & MBS_OUT_CONTACTS)
    for (int i = 0; i < sp->ncontacts; i++) {
      const int f = mbs_force_find(sys, sp->contacts[i]);
      const char* kind = f >= 0 ? mbs_force_kind(sys, f) : NULL;
      if (!kind || (strcmp(kind, "hunt_crossley") && strcmp(kind, "elastic_foundation")))
        return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, 0,
                             "outputs.contacts: '%s' is not a contact force of the model",
                             sp->contacts[i]);
      // the number of pairs: from a State
      mbs_state* st = mbs_state_create(sys);
      int npair = 0;
      mbs_contact_report rep[1];
      if (!st || mbs_realize_dynamics(sys, st) ||
          mbs_get_contact_reports(sys, st, f, rep, 0, &npair)) {
        mbs_state_destroy(st);
        return mbs_plan_fail(err, MBS_ERR_INTERNAL, sp, 0, "outputs.contacts: '%s': no reports",
                             sp->contacts[i]);
      }
      char** comps = calloc((size_t)npair * 7 + 1, sizeof(char*));
      static const char* field[7] = {"fx", "fy", "fz", "px", "py", "pz", "depth"};
      int ok = comps != NULL;
      if (ok && npair > 0) {
        mbs_contact_report* all = calloc((size_t)npair, sizeof(*all));
        int n2 = 0;
        ok = all && !mbs_get_contact_reports(sys, st, f, all, npair, &n2);
        for (int k = 0; ok && k < npair; k++)
          for (int j = 0; j < 7; j++)
            ok = ok && (comps[7 * k + j] = mbs_format_string(
                            "%s-%s/%s", mbs_contact_geometry_name(sys, all[k].geometry1),
                            mbs_contact_geometry_name(sys, all[k].geometry2), field[j])) != NULL;
        free(all);
      }
      mbs_state_destroy(st);
      char nm[300];
      snprintf(nm, sizeof(nm), "contacts/%s", sp->contacts[i]);
      if (ok) rc |= add_quantity(P, nm, MBS_Q_CONTACT, f, 7 * npair, (const char* const*)comps,
                                 "N, m");
      for (int k = 0; comps && k < 7 * npair; k++) free(comps[k]);
      free(comps);
      if (!ok) return NO_MEMORY(err);
    }
  if (sp->outputs & MBS_OUT_REACTIONS)
    for (int c = 0; c < mbs_system_nconstraint(sys); c++) {
      static const char* mf[6] = {"mx", "my", "mz", "fx", "fy", "fz"};
      char nm[300];
      snprintf(nm, sizeof(nm), "reactions/%s", mbs_constraint_name(sys, c));
      rc |= add_quantity(P, nm, MBS_Q_REACTION, c, 6, mf, "N m, N");
    }
  if (rc) return NO_MEMORY(err);
  if ((sp->outputs & MBS_OUT_MUSCLES) && (rc = plan_muscles(P, err))) return rc;
  // the frames, checked as a double before anything is sized by them
  const double frames = floor(sp->duration / sp->output_interval * (1 + 1e-12)) + 1;
  const long max_frames = sp->max_frames > 0 ? sp->max_frames : 1000000;
  if (!(frames <= (double)max_frames))
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp,
                         sp->output_interval_line ? sp->output_interval_line : sp->duration_line,
                         "simulation: %g s reported every %g s is %.4g frames per sample; the "
                         "limit is %ld (execution.max_frames): report less often",
                         sp->duration, sp->output_interval, frames, max_frames);
  P->nframes = (int)frames;
  P->times = malloc((size_t)P->nframes * sizeof(double));
  if (!P->times) return NO_MEMORY(err);
  for (int k = 0; k < P->nframes; k++) P->times[k] = k * sp->output_interval;
  lay_out_frames(P);
  return MBS_OK;
}

int mbs_plan_find_quantity(const mbs_plan* P, int kind, int arg) {
  for (int i = 0; i < P->nquant; i++)
    if (P->quant[i].kind == kind && P->quant[i].arg == arg) return i;
  return -1;
}

int mbs_plan_require_quantity(mbs_plan* P, const char* what, mbs_error* err) {
  int kind, arg = 0;
  if (!P->om)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "study", "'%s': a test function has no trajectories",
                    what);
  if (!strcmp(what, "q")) kind = MBS_Q_Q;
  else if (!strcmp(what, "u")) kind = MBS_Q_U;
  else if (!strcmp(what, "com")) kind = MBS_Q_COM;
  else if (!strncmp(what, "bodies/", 7) && strlen(what) > 16 &&
           !strcmp(what + strlen(what) - 9, "/position")) {
    char body[256];
    snprintf(body, sizeof(body), "%.*s", (int)(strlen(what) - 16), what + 7);
    kind = MBS_Q_BODY_POS;
    arg = mbs_body_find(P->sys, body);
    if (arg < 0)
      return MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, "study", "'%s': '%s' is not a body of the model",
                      what, body);
  } else if (!strncmp(what, "muscles/", 8)) {
    for (int k = 0; k < P->nquant; k++)
      if (P->quant[k].kind == MBS_Q_MUSCLE && !P->quant[k].hidden &&
          !strcmp(P->quant[k].name, what))
        return k;
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "study",
                    "'%s' is not among the recorded trajectories (outputs.trajectories: muscles, "
                    "with outputs.muscles and outputs.muscle_outputs)", what);
  } else {
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "study",
                    "'%s' is not a trajectory (q, u, com, bodies/<body>/position, "
                    "muscles/<field>)", what);
  }
  int k = mbs_plan_find_quantity(P, kind, arg);
  if (k >= 0) {
    P->quant[k].hidden = 0;
    return k;
  }
  if (add_basic_quantity(P, kind, arg, 0)) return NO_MEMORY(err);
  lay_out_frames(P);
  return P->nquant - 1;
}

int mbs_plan_add_result(mbs_plan* P, const char* name, const char* unit, mbs_error* err) {
  char** n = realloc(P->result_names, (size_t)(P->nresults + 1) * sizeof(char*));
  if (n) P->result_names = n;
  const char** u = realloc(P->result_units, (size_t)(P->nresults + 1) * sizeof(char*));
  if (u) P->result_units = u;
  if (!n || !u) return NO_MEMORY(err);
  if (!(P->result_names[P->nresults] = mbs_format_string("%s", name))) return NO_MEMORY(err);
  P->result_units[P->nresults++] = unit;
  return MBS_OK;
}

int mbs_plan_attribute(mbs_plan* P, const char* key, const char* value, mbs_error* err) {
  for (int i = 0; i < P->nattr; i++)
    if (!strcmp(P->attr_key[i], key)) {  // given again: the new value
      char* v = mbs_format_string("%s", value);
      if (!v) return NO_MEMORY(err);
      free(P->attr_value[i]);
      P->attr_value[i] = v;
      return MBS_OK;
    }
  if (P->nattr == MBS_PLAN_MAX_ATTRIBUTES)
    return MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "too many attributes");
  P->attr_key[P->nattr] = mbs_format_string("%s", key);
  P->attr_value[P->nattr] = mbs_format_string("%s", value);
  if (!P->attr_key[P->nattr] || !P->attr_value[P->nattr]) {
    free(P->attr_key[P->nattr]);
    free(P->attr_value[P->nattr]);
    return NO_MEMORY(err);
  }
  P->nattr++;
  return MBS_OK;
}

int mbs_plan_find_scalar(const mbs_plan* P, const char* name) {
  for (int i = 0; i < P->nscal; i++)
    if (!strcmp(P->scal[i].name, name)) return i;
  return -1;
}

//---------------------------------- events and scalars -----------------------------------------

static int plan_function_scalars(mbs_plan* P, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  if (sp->nscalars > 0)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, sp->scalars[0].line,
                         "outputs.scalars: model '%s' is a test function; its outputs are "
                         "recorded as they are", P->fn->name);
  if (sp->nevents > 0)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, sp->events[0].line,
                         "simulation.events: model '%s' is a test function: nothing is simulated",
                         P->fn->name);
  int dim = P->fn->min_dim;
  for (int i = 0; i < P->np; i++)
    if (P->par[i].kind == MBS_PK_FUNCTION && P->par[i].index + 1 > dim) dim = P->par[i].index + 1;
  const int nout = P->fn->noutputs(dim);
  P->nscal = nout + P->nresults;
  P->scal = calloc((size_t)P->nscal + 1, sizeof(*P->scal));
  char** names = calloc((size_t)nout + 1, sizeof(char*));
  if (!P->scal || !names) {
    free(names);
    return NO_MEMORY(err);
  }
  // the names live with the plan: kept in result_names' shape, freed by mbs_plan_free
  for (int k = 0; k < nout; k++) {
    char buf[32];
    P->fn->output_name(dim, k, buf, sizeof(buf));
    names[k] = mbs_format_string("%s", buf);
    if (!names[k]) {
      for (int j = 0; j < k; j++) free(names[j]);
      free(names);
      return NO_MEMORY(err);
    }
    P->scal[k] = (mbs_scalar_plan){names[k], "1", MBS_SC_FUNCTION, k, 0, 0};
  }
  P->function_names = names;
  P->nfunction_names = nout;
  P->fn_dim = dim;
  return MBS_OK;
}

int mbs_plan_events_and_scalars(mbs_plan* P, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  int first_result;
  if (P->fn) {
    int rc = plan_function_scalars(P, err);
    if (rc) return rc;
    first_result = P->nfunction_names;
  } else {
    P->nevents = sp->nevents;
    P->ev = calloc((size_t)P->nevents + 1, sizeof(*P->ev));
    P->nscal = sp->nscalars + P->nresults;
    P->scal = calloc((size_t)P->nscal + 1, sizeof(*P->scal));
    if (!P->ev || !P->scal) return NO_MEMORY(err);
    first_result = sp->nscalars;
  }
  for (int k = 0; k < P->nresults; k++)
    P->scal[first_result + k] =
        (mbs_scalar_plan){P->result_names[k], P->result_units[k], MBS_SC_DRIVER, k, 0, 0};
  if (P->fn) {
    for (int k = 0; k < P->nresults; k++)
      for (int j = 0; j < first_result; j++)
        if (!strcmp(P->scal[j].name, P->result_names[k]))
          return mbs_plan_fail(err, MBS_ERR_INTERNAL, sp, 0, "scalar '%s' given twice",
                               P->result_names[k]);
    return MBS_OK;
  }
  for (int i = 0; i < P->nevents; i++) {
    const mbs_spec_event* e = &sp->events[i];
    P->ev[i].e = e;
    P->ev[i].body = P->ev[i].coord = -1;
    if (e->kind == MBS_SPEC_EVENT_HEIGHT_BELOW || e->kind == MBS_SPEC_EVENT_HEIGHT_ABOVE) {
      P->ev[i].body = mbs_body_find(P->sys, e->body);
      if (P->ev[i].body < 0)
        return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, e->line,
                             "events: '%s': body '%s' is not a body of the model", e->name,
                             e->body);
    } else {
      P->ev[i].coord = mbs_osim_find_coordinate(P->om, e->coordinate);
      if (P->ev[i].coord < 0)
        return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, e->line,
                             "events: '%s': '%s' is not a coordinate of the model", e->name,
                             e->coordinate);
    }
  }
  for (int i = 0; i < sp->nscalars; i++) {
    const mbs_spec_scalar* s = &sp->scalars[i];
    mbs_scalar_plan* p = &P->scal[i];
    for (int k = 0; k < P->nresults; k++)
      if (!strcmp(s->name, P->result_names[k]))
        return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, s->line,
                             "outputs.scalars: '%s' is a scalar the %s study writes itself; "
                             "choose another name", s->name, P->study_type);
    p->name = s->name;
    p->at = s->at;
    p->index = -1;
    if (s->event) {
      p->source = MBS_SC_EVENT;
      for (int k = 0; k < P->nevents; k++)
        if (!strcmp(sp->events[k].name, s->event)) p->index = k;
      p->unit = "s";
      continue;
    }
    int kind, arg = 0;
    p->source = MBS_SC_QUANTITY;
    if (!strcmp(s->of, "q") || !strcmp(s->of, "u")) {
      kind = s->of[0] == 'q' ? MBS_Q_Q : MBS_Q_U;
      p->comp = mbs_osim_find_coordinate(P->om, s->coordinate);
      if (p->comp < 0)
        return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, s->line,
                             "scalars: '%s': '%s' is not a coordinate of the model", s->name,
                             s->coordinate ? s->coordinate : "");
      p->unit = kind == MBS_Q_Q ? "rad or m" : "rad/s or m/s";
    } else if (!strcmp(s->of, "com")) {
      kind = MBS_Q_COM;
      p->comp = s->component;
      p->unit = "m";
    } else if (!strncmp(s->of, "body:", 5)) {
      kind = MBS_Q_BODY_POS;
      arg = mbs_body_find(P->sys, s->of + 5);
      if (arg < 0)
        return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, s->line,
                             "scalars: '%s': '%s' is not a body of the model", s->name,
                             s->of + 5);
      p->comp = s->component;
      p->unit = "m";
    } else if (!strncmp(s->of, "muscle:", 7)) {
      const int f = mbs_force_find(P->sys, s->of + 7);
      if (!is_muscle(P->sys, f)) {
        char list[400];
        muscle_list(P->sys, list, sizeof(list));
        return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, s->line,
                             "scalars: '%s': '%s' is not a muscle of model '%s' (%s%s)", s->name,
                             s->of + 7, mbs_osim_name(P->om), list[0] ? "its muscles: " : "",
                             list[0] ? list : "it has none");
      }
      p->unit = mbs_spec_muscle_output_unit(s->output);
      // a trajectory of the field that holds the muscle, else one of its own, not stored
      for (int k = 0; k < P->nquant && p->index < 0; k++) {
        const mbs_quantity_plan* q = &P->quant[k];
        for (int c = 0; q->kind == MBS_Q_MUSCLE && q->arg == s->output && c < q->ncomp; c++)
          if (q->forces[c] == f) {
            p->index = k;
            p->comp = c;
            break;
          }
      }
      if (p->index < 0) {
        if (add_muscle_quantity(P, s->output, &f, 1, 1)) return NO_MEMORY(err);
        p->index = P->nquant - 1;
        p->comp = 0;
      }
      continue;
    } else {
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, s->line,
                           "scalars: '%s': unknown quantity '%s'", s->name, s->of);
    }
    p->index = mbs_plan_find_quantity(P, kind, arg);
    if (p->index < 0) {
      // not among the trajectories: computed per frame for the reduction, not stored
      if (add_basic_quantity(P, kind, arg, 1)) return NO_MEMORY(err);
      p->index = P->nquant - 1;
    }
  }
  lay_out_frames(P);  // again: scalars may have added quantities
  return MBS_OK;
}

void mbs_plan_free(mbs_plan* P) {
  for (int i = 0; i < P->np; i++) {
    free(P->par[i].name);
    free(P->par[i].linked);
    free(P->par[i].linked_base);
    free(P->par[i].controls);
    free(P->par[i].control_base);
    if (P->par[i].kind == MBS_PK_DRIVER) free((void*)P->dist[i].values);
  }
  free(P->par);
  free(P->dist);
  for (int i = 0; i < P->nquant; i++) {
    for (int k = 0; k < P->quant[i].ncomp; k++) free(P->quant[i].comps[k]);
    free(P->quant[i].comps);
    free(P->quant[i].comp_units);
    free(P->quant[i].forces);
    free(P->quant[i].name);
  }
  free(P->quant);
  free(P->times);
  free(P->model_document);
  free(P->scal);
  free(P->ev);
  for (int i = 0; i < P->nresults; i++) free(P->result_names[i]);
  free(P->result_names);
  free(P->result_units);
  for (int i = 0; i < P->nfunction_names; i++) free(P->function_names[i]);
  free(P->function_names);
  for (int i = 0; i < P->nattr; i++) {
    free(P->attr_key[i]);
    free(P->attr_value[i]);
  }
  free(P->com_skip);
  mbs_osim_free(P->om);
  memset(P, 0, sizeof(*P));
}
