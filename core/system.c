// Building and querying a System: bodies, mobilizers, functions, force elements, parameters.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "path_impl.h"

//---------------------------------- helpers ----------------------------------------------------

static char* dup_string(const char* s) {
  const size_t n = strlen(s) + 1;
  char* r = malloc(n);
  if (r) memcpy(r, s, n);
  return r;
}

// make room for `need` elements in *p (capacity *cap)
static int grow(void** p, int* cap, int need, size_t elem) {
  if (need <= *cap) return 1;
  int ncap = *cap ? *cap : 8;
  while (ncap < need) ncap *= 2;
  void* q = realloc(*p, (size_t)ncap * elem);
  if (!q) return 0;
  *p = q;
  *cap = ncap;
  return 1;
}

#define GROW(arr, cap, need) grow((void**)&(arr), &(cap), (need), sizeof(*(arr)))

static int check_building(mbs_system* sys, const char* func) {
  if (!sys) return MBS_ERR_ARGUMENT;
  if (sys->finalized)
    return mbs_error_set(&sys->err, MBS_ERR_FINALIZED, func, __LINE__, sys->name,
                         "system '%s' is finalized; nothing can be added", sys->name);
  return MBS_OK;
}

static int all_finite(const double* v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

// add n parameters with defaults; returns the first index or -1
static int add_params(mbs_system* sys, const double* defaults, int n) {
  if (!GROW(sys->param_default, sys->cap_param, sys->nparam + n)) return -1;
  const int adr = sys->nparam;
  for (int i = 0; i < n; i++) sys->param_default[adr + i] = defaults ? defaults[i] : 0.0;
  sys->nparam += n;
  return adr;
}

// name a block of parameters; takes ownership of path
static int add_param_block(mbs_system* sys, char* path, int index, int size, const char* unit) {
  if (!path || !GROW(sys->pblock, sys->cap_pblock, sys->npblock + 1)) {
    free(path);
    return 0;
  }
  mbs_param_info* b = &sys->pblock[sys->npblock++];
  b->path = path;
  b->index = index;
  b->size = size;
  b->unit = unit;
  // physical quantities that cannot be negative, recognized by the last segment of the path
  static const char* const nonneg[] = {"mass", "stiffness", "damping", "dissipation",
                                       "friction", "viscosity", "rest_length", "radius", "radii",
                                       "optimal_force", "transition", "transition_velocity",
                                       "upper_stiffness", "lower_stiffness"};
  const char* last = strrchr(path, '/');
  last = last ? last + 1 : path;
  b->lower = -INFINITY;
  b->upper = INFINITY;
  for (size_t i = 0; i < sizeof(nonneg) / sizeof(nonneg[0]); i++) {
    const size_t n = strlen(nonneg[i]), m = strlen(last);
    if (m >= n && !strcmp(last + m - n, nonneg[i])) b->lower = 0;
  }
  return 1;
}

static int no_memory(mbs_system* sys, const char* func) {
  return mbs_error_set(&sys->err, MBS_ERR_NO_MEMORY, func, __LINE__, sys->name,
                       "system '%s': out of memory", sys->name);
}

//---------------------------------- create / destroy -------------------------------------------

static int add_ground(mbs_system* sys);

mbs_system* mbs_system_create(const char* name) {
  mbs_system* sys = calloc(1, sizeof(*sys));
  if (!sys) return NULL;
  sys->name = dup_string(name && *name ? name : "model");
  if (!sys->name || !add_ground(sys)) {
    mbs_system_destroy(sys);
    return NULL;
  }
  return sys;
}

void mbs_system_destroy(mbs_system* sys) {
  if (!sys) return;
  for (int i = 0; i < sys->nbody; i++) {
    free(sys->body_name[i]);
    free(sys->mob_name[i]);
  }
  free(sys->body_name);
  free(sys->mob_name);
  free(sys->body_parent);
  free(sys->body_mob);
  free(sys->body_qadr);
  free(sys->body_nq);
  free(sys->body_uadr);
  free(sys->body_nu);
  free(sys->body_param_adr);
  free(sys->body_pool_adr);
  free(sys->body_fmob);
  free(sys->body_diadr);
  free(sys->body_nchild);
  free(sys->fmob);
  for (int i = 0; i < sys->nfunc; i++) free(sys->func[i].name);
  free(sys->func);
  for (int i = 0; i < sys->nforce; i++) free(sys->force[i].name);
  free(sys->force);
  free(sys->control_default);
  free(sys->z_default);
  free(sys->z_force);
  free((void*)sys->z_field);
  free(sys->control_force);
  free(sys->control_function);
  mbs_controller_data_free(sys->controllers);
  mbs_contact_data_free(sys->contact);
  mbs_path_data_free(sys->paths);
  mbs_muscle_data_free(sys->muscles);
  for (int i = 0; i < sys->ncon; i++) free(sys->con[i].name);
  free(sys->con);
  free(sys->param_default);
  for (int i = 0; i < sys->npblock; i++) free((char*)sys->pblock[i].path);
  free(sys->pblock);
  free(sys->q_default);
  free(sys->name);
  free(sys);
}

const mbs_error* mbs_system_error(const mbs_system* sys) { return &sys->err; }

//---------------------------------- bodies -----------------------------------------------------

// grow every per-body array to hold one more body
static int grow_bodies(mbs_system* sys) {
  const int need = sys->nbody + 1;
  if (need <= sys->cap_body) return 1;
  int cap = sys->cap_body;
  int ok = 1;
  int c;
#define GROW_BODY(arr) (c = cap, ok = ok && grow((void**)&sys->arr, &c, need, sizeof(*sys->arr)))
  GROW_BODY(body_name);
  GROW_BODY(mob_name);
  GROW_BODY(body_parent);
  GROW_BODY(body_mob);
  GROW_BODY(body_qadr);
  GROW_BODY(body_nq);
  GROW_BODY(body_uadr);
  GROW_BODY(body_nu);
  GROW_BODY(body_param_adr);
  GROW_BODY(body_pool_adr);
  GROW_BODY(body_fmob);
  GROW_BODY(body_diadr);
  GROW_BODY(body_nchild);
#undef GROW_BODY
  if (ok) sys->cap_body = c;
  return ok;
}

static int add_ground(mbs_system* sys) {
  if (!grow_bodies(sys)) return 0;
  sys->body_name[0] = dup_string("ground");
  sys->mob_name[0] = dup_string("ground");
  if (!sys->body_name[0] || !sys->mob_name[0]) return 0;
  sys->body_parent[0] = -1;
  sys->body_mob[0] = MBS_MOB_WELD;
  sys->body_qadr[0] = sys->body_uadr[0] = 0;
  sys->body_nq[0] = sys->body_nu[0] = 0;
  sys->body_param_adr[0] = -1;
  sys->body_pool_adr[0] = 0;
  sys->body_fmob[0] = -1;
  sys->body_diadr[0] = 0;
  sys->body_nchild[0] = 0;
  sys->nbody = 1;
  return 1;
}

mbs_body_spec mbs_body_spec_default(const char* name, int parent, mbs_mobilizer_type mobilizer) {
  mbs_body_spec s;
  memset(&s, 0, sizeof(s));
  s.name = name;
  s.parent = parent;
  s.mobilizer = mobilizer;
  return s;
}

static int check_function_mobilizer(mbs_system* sys, const mbs_body_spec* s, const char* comp) {
  const mbs_function_mobilizer* f = s->function;
  if (!f)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                    "%s: a function-based mobilizer needs its axes and functions", comp);
  if (f->ncoord < 1 || f->ncoord > 6)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                    "%s: a function-based mobilizer has 1 to 6 coordinates, not %d", comp,
                    f->ncoord);
  int used[6] = {0};
  for (int k = 0; k < 6; k++) {
    const mbs_spatial_axis* a = k < 3 ? &f->rotation[k] : &f->translation[k - 3];
    const char* kind = k < 3 ? "rotation" : "translation";
    if (!all_finite(a->axis, 3) || mbs_v3_norm(a->axis) < 1e-12)
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, "%s: %s axis %d is zero or not finite",
                      comp, kind, k % 3 + 1);
    if (a->coord >= f->ncoord)
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                      "%s: %s axis %d uses coordinate %d but there are %d", comp, kind,
                      k % 3 + 1, a->coord, f->ncoord);
    if (a->function < 0 || a->function >= sys->nfunc)
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                      "%s: %s axis %d refers to function %d, which does not exist", comp, kind,
                      k % 3 + 1, a->function);
    if (a->coord >= 0) used[a->coord] = 1;
  }
  for (int j = 0; j < f->ncoord; j++)
    if (!used[j])
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                      "%s: coordinate %d drives no axis (it would have no effect)", comp, j);
  return MBS_OK;
}

int mbs_system_add_body(mbs_system* sys, const mbs_body_spec* s) {
  int rc = check_building(sys, __func__);
  if (rc) return rc;
  if (!s || !s->name || !*s->name)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, sys->name, "body: a body needs a name");
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "body '%s'", s->name);
  if (mbs_body_find(sys, s->name) >= 0)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, "%s: a body of that name exists", comp);
  if (s->parent < 0 || s->parent >= sys->nbody)
    return MBS_FAIL(&sys->err, MBS_ERR_TOPOLOGY, comp,
                    "%s: parent %d is not an existing body (0..%d)", comp, s->parent,
                    sys->nbody - 1);
  if ((int)s->mobilizer < 0 || s->mobilizer >= MBS_MOB_COUNT)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, "%s: unknown mobilizer type %d", comp,
                    (int)s->mobilizer);
  if (!isfinite(s->mass) || s->mass < 0)
    return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, comp, "%s: mass %g is negative or not finite",
                    comp, s->mass);
  double I_C[9];
  mbs_inertia_from_moments(I_C, s->inertia);
  if (!all_finite(s->com, 3) || !mbs_inertia_is_physical(I_C))
    return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, comp,
                    "%s: inertia (%g %g %g %g %g %g) is not physical (it must be positive "
                    "semidefinite with principal moments obeying the triangle inequality)",
                    comp, s->inertia[0], s->inertia[1], s->inertia[2], s->inertia[3],
                    s->inertia[4], s->inertia[5]);
  if (!all_finite(s->X_PF.angles, 3) || !all_finite(s->X_PF.p, 3) ||
      !all_finite(s->X_BM.angles, 3) || !all_finite(s->X_BM.p, 3))
    return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, comp, "%s: mobilizer frames are not finite",
                    comp);
  const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(s->mobilizer);
  int nq = ops->nq, nu = ops->nu, nmob = 0;
  if (s->mobilizer == MBS_MOB_FUNCTION) {
    if ((rc = check_function_mobilizer(sys, s, comp))) return rc;
    nq = nu = s->function->ncoord;
  } else if (s->mobilizer == MBS_MOB_SCREW) {
    nmob = 1;
    if (!isfinite(s->pitch))
      return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, comp, "%s: screw pitch is not finite", comp);
  } else if (s->mobilizer == MBS_MOB_ELLIPSOID || s->mobilizer == MBS_MOB_ELLIPSOID_XYZ) {
    nmob = 3;
    if (!all_finite(s->radii, 3) || s->radii[0] < 0 || s->radii[1] < 0 || s->radii[2] < 0)
      return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, comp,
                      "%s: ellipsoid radii must be finite and not negative", comp);
  }

  if (!grow_bodies(sys)) return no_memory(sys, __func__);
  if (s->mobilizer == MBS_MOB_FUNCTION && !GROW(sys->fmob, sys->cap_fmob, sys->nfmob + 1))
    return no_memory(sys, __func__);

  // parameters: mass, com, inertia, frames, mobilizer
  double p[MBS_BP_MOB + 3];
  p[MBS_BP_MASS] = s->mass;
  memcpy(p + MBS_BP_COM, s->com, 3 * sizeof(double));
  memcpy(p + MBS_BP_INERTIA, s->inertia, 6 * sizeof(double));
  memcpy(p + MBS_BP_PF_ANGLES, s->X_PF.angles, 3 * sizeof(double));
  memcpy(p + MBS_BP_PF_P, s->X_PF.p, 3 * sizeof(double));
  memcpy(p + MBS_BP_BM_ANGLES, s->X_BM.angles, 3 * sizeof(double));
  memcpy(p + MBS_BP_BM_P, s->X_BM.p, 3 * sizeof(double));
  if (nmob == 1) p[MBS_BP_MOB] = s->pitch;
  if (nmob == 3) memcpy(p + MBS_BP_MOB, s->radii, 3 * sizeof(double));
  const int padr = add_params(sys, p, MBS_BP_MOB + nmob);
  if (padr < 0) return no_memory(sys, __func__);

  const int b = sys->nbody;
  char* mob_name = s->mobilizer_name && *s->mobilizer_name ? dup_string(s->mobilizer_name)
                                                           : mbs_format_string("%s_joint", s->name);
  sys->body_name[b] = dup_string(s->name);
  sys->mob_name[b] = mob_name;
  if (!sys->body_name[b] || !mob_name) {
    free(sys->body_name[b]);
    free(mob_name);
    return no_memory(sys, __func__);
  }
  const char* bn = s->name;
  const char* jn = mob_name;
  int ok = 1;
  ok &=
      add_param_block(sys, mbs_format_string("/bodyset/%s/mass", bn), padr + MBS_BP_MASS, 1, "kg");
  ok &= add_param_block(sys, mbs_format_string("/bodyset/%s/mass_center", bn), padr + MBS_BP_COM, 3,
                        "m");
  ok &= add_param_block(sys, mbs_format_string("/bodyset/%s/inertia", bn), padr + MBS_BP_INERTIA, 6,
                        "kg m^2");
  ok &= add_param_block(sys, mbs_format_string("/jointset/%s/parent_frame/orientation", jn),
                        padr + MBS_BP_PF_ANGLES, 3, "rad");
  ok &= add_param_block(sys, mbs_format_string("/jointset/%s/parent_frame/translation", jn),
                        padr + MBS_BP_PF_P, 3, "m");
  ok &= add_param_block(sys, mbs_format_string("/jointset/%s/child_frame/orientation", jn),
                        padr + MBS_BP_BM_ANGLES, 3, "rad");
  ok &= add_param_block(sys, mbs_format_string("/jointset/%s/child_frame/translation", jn),
                        padr + MBS_BP_BM_P, 3, "m");
  if (nmob == 1)
    ok &= add_param_block(sys, mbs_format_string("/jointset/%s/pitch", jn), padr + MBS_BP_MOB, 1,
                          "m/rad");
  if (nmob == 3)
    ok &= add_param_block(sys, mbs_format_string("/jointset/%s/radii", jn), padr + MBS_BP_MOB, 3,
                          "m");
  if (!ok) return no_memory(sys, __func__);

  sys->body_parent[b] = s->parent;
  sys->body_mob[b] = s->mobilizer;
  sys->body_qadr[b] = sys->nq;
  sys->body_nq[b] = nq;
  sys->body_uadr[b] = sys->nu;
  sys->body_nu[b] = nu;
  sys->body_param_adr[b] = padr;
  sys->body_pool_adr[b] = 0;
  sys->body_diadr[b] = 0;
  sys->body_nchild[b] = 0;
  sys->body_fmob[b] = -1;
  if (s->mobilizer == MBS_MOB_FUNCTION) {
    mbs_function_mobilizer* f = &sys->fmob[sys->nfmob];
    *f = *s->function;
    for (int k = 0; k < 3; k++) {
      double* ar = f->rotation[k].axis;
      double* at = f->translation[k].axis;
      mbs_v3_scale(ar, ar, 1.0 / mbs_v3_norm(ar));
      mbs_v3_scale(at, at, 1.0 / mbs_v3_norm(at));
    }
    sys->body_fmob[b] = sys->nfmob++;
  }
  sys->nq += nq;
  sys->nu += nu;
  sys->nbody++;
  return b;
}

//---------------------------------- functions --------------------------------------------------

int mbs_system_add_function(mbs_system* sys, const mbs_function_spec* s) {
  int rc = check_building(sys, __func__);
  if (rc) return rc;
  if (!s) return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, sys->name, "function: no spec given");
  const int id = sys->nfunc;
  char* name = s->name && *s->name ? dup_string(s->name) : mbs_format_string("function%d", id);
  if (!name) return no_memory(sys, __func__);
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "function '%s'", name);
#define FUNC_FAIL(...)                                                  \
  do {                                                                  \
    free(name);                                                         \
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, __VA_ARGS__);    \
  } while (0)
  if ((int)s->type < 0 || s->type >= MBS_FUNC_COUNT) FUNC_FAIL("%s: unknown type %d", comp, s->type);
  const int n = s->n;
  double* defaults = NULL;
  int np = mbs_function_param_count(s->type, n);
  switch (s->type) {
    case MBS_FUNC_CONSTANT:
    case MBS_FUNC_LINEAR:
    case MBS_FUNC_SINE:
      if (!s->coefs) FUNC_FAIL("%s: coefficients missing", comp);
      break;
    case MBS_FUNC_POLYNOMIAL:
      if (n < 1 || !s->coefs) FUNC_FAIL("%s: a polynomial needs n >= 1 coefficients", comp);
      break;
    case MBS_FUNC_NATURAL_CUBIC_SPLINE:
    case MBS_FUNC_SIMM_SPLINE:
    case MBS_FUNC_PIECEWISE_LINEAR:
    case MBS_FUNC_PIECEWISE_LINEAR_HELD:
    case MBS_FUNC_STEPS:
      if (n < 2 || !s->x || !s->y) FUNC_FAIL("%s: needs at least 2 points", comp);
      break;
    case MBS_FUNC_MULTIPLIER:
      if (s->inner < 0 || s->inner >= sys->nfunc)
        FUNC_FAIL("%s: inner function %d does not exist", comp, s->inner);
      if (!isfinite(s->scale)) FUNC_FAIL("%s: scale is not finite", comp);
      break;
    case MBS_FUNC_COUNT:
      break;
  }
  defaults = malloc((size_t)np * sizeof(double));
  if (!defaults) {
    free(name);
    return no_memory(sys, __func__);
  }
  if (s->type == MBS_FUNC_NATURAL_CUBIC_SPLINE || s->type == MBS_FUNC_SIMM_SPLINE ||
      s->type == MBS_FUNC_PIECEWISE_LINEAR || s->type == MBS_FUNC_PIECEWISE_LINEAR_HELD ||
      s->type == MBS_FUNC_STEPS) {
    memcpy(defaults, s->x, (size_t)n * sizeof(double));
    memcpy(defaults + n, s->y, (size_t)n * sizeof(double));
  } else if (s->type == MBS_FUNC_MULTIPLIER) {
    defaults[0] = s->scale;
  } else {
    memcpy(defaults, s->coefs, (size_t)np * sizeof(double));
  }
  // check the defaults now (knots increasing, finite), so a bad model fails when built
  if (s->type != MBS_FUNC_MULTIPLIER) {
    const int nc = mbs_function_cache_count(s->type, n);
    double* cache = malloc((size_t)(nc > 0 ? nc : 1) * sizeof(double));
    rc = cache ? mbs_function_prepare(s->type, n, defaults, cache, &sys->err, comp)
               : MBS_ERR_NO_MEMORY;
    free(cache);
    if (rc) {
      free(defaults);
      free(name);
      return rc == MBS_ERR_NO_MEMORY ? no_memory(sys, __func__) : rc;
    }
  }
#undef FUNC_FAIL
  if (!GROW(sys->func, sys->cap_func, sys->nfunc + 1)) {
    free(defaults);
    free(name);
    return no_memory(sys, __func__);
  }
  const int padr = add_params(sys, defaults, np);
  free(defaults);
  if (padr < 0) {
    free(name);
    return no_memory(sys, __func__);
  }
  int ok = 1;
  switch (s->type) {
    case MBS_FUNC_CONSTANT:
      ok = add_param_block(sys, mbs_format_string("/functions/%s/value", name), padr, 1, "");
      break;
    case MBS_FUNC_LINEAR:
    case MBS_FUNC_POLYNOMIAL:
      ok =
          add_param_block(sys, mbs_format_string("/functions/%s/coefficients", name), padr, np, "");
      break;
    case MBS_FUNC_NATURAL_CUBIC_SPLINE:
    case MBS_FUNC_SIMM_SPLINE:
    case MBS_FUNC_PIECEWISE_LINEAR:
    case MBS_FUNC_PIECEWISE_LINEAR_HELD:
    case MBS_FUNC_STEPS:
      ok = add_param_block(sys, mbs_format_string("/functions/%s/x", name), padr, n, "") &&
           add_param_block(sys, mbs_format_string("/functions/%s/y", name), padr + n, n, "");
      break;
    case MBS_FUNC_MULTIPLIER:
      ok = add_param_block(sys, mbs_format_string("/functions/%s/scale", name), padr, 1, "");
      break;
    case MBS_FUNC_SINE:
      ok = add_param_block(sys, mbs_format_string("/functions/%s/coefficients", name), padr, 4, "");
      break;
    case MBS_FUNC_COUNT:
      break;
  }
  if (!ok) {
    free(name);
    return no_memory(sys, __func__);
  }
  mbs_func_desc* d = &sys->func[sys->nfunc++];
  d->type = s->type;
  d->n = n;
  d->param_adr = padr;
  d->cache_adr = sys->nfunc_cache;
  d->inner = s->type == MBS_FUNC_MULTIPLIER ? s->inner : -1;
  d->name = name;
  sys->nfunc_cache += mbs_function_cache_count(s->type, n);
  return id;
}

void mbs_system_eval_function(const mbs_system* sys, const mbs_state* st, int f, double x,
                              double d[3]) {
  double scale = 1;
  while (sys->func[f].type == MBS_FUNC_MULTIPLIER) {
    scale *= st->param[sys->func[f].param_adr];
    f = sys->func[f].inner;
  }
  const mbs_func_desc* fd = &sys->func[f];
  mbs_function_eval(fd->type, fd->n, st->param + fd->param_adr, st->func_cache + fd->cache_adr,
                    x, d);
  d[0] *= scale;
  d[1] *= scale;
  d[2] *= scale;
}

//---------------------------------- force elements ---------------------------------------------

// a new force's provisional name, kind<n>: one no force has and no parameter is named under
// (a model reader may name a force's path before the force, and renaming the force moves every
// parameter under its old name)
static char* default_force_name(const mbs_system* sys, const char* kind) {
  for (int n = sys->nforce;; n++) {
    char* name = mbs_format_string("%s%d", kind, n);
    char* prefix = name ? mbs_format_string("/forceset/%s/", name) : NULL;
    if (!prefix) {
      free(name);
      return NULL;
    }
    int taken = 0;
    for (int i = 0; i < sys->nforce && !taken; i++) taken = !strcmp(sys->force[i].name, name);
    const size_t lp = strlen(prefix);
    for (int i = 0; i < sys->npblock && !taken; i++)
      taken = !strncmp(sys->pblock[i].path, prefix, lp);
    free(prefix);
    if (!taken) return name;
    free(name);
  }
}

int mbs_system_new_force(mbs_system* sys, mbs_force_type type, const char* kind, int body1,
                         int body2, const double* params, int np) {
  int rc = check_building(sys, __func__);
  if (rc) return rc;
  if (!GROW(sys->force, sys->cap_force, sys->nforce + 1)) return no_memory(sys, __func__);
  char* name = default_force_name(sys, kind);
  if (!name) return no_memory(sys, __func__);
  const int padr = add_params(sys, params, np);
  if (padr < 0) {
    free(name);
    return no_memory(sys, __func__);
  }
  mbs_force_desc* f = &sys->force[sys->nforce];
  memset(f, 0, sizeof(*f));
  f->type = type;
  f->body1 = body1;
  f->body2 = body2;
  f->qindex = f->uindex = -1;
  f->param_adr = padr;
  f->nparam = np;
  for (int i = 0; i < MBS_FORCE_NIARG; i++) f->iarg[i] = -1;
  f->control = -1;
  f->cache_adr = -1;
  f->icache_adr = -1;
  f->z_adr = -1;
  f->name = name;
  return sys->nforce++;
}

int mbs_system_force_param(mbs_system* sys, int force, const char* field, int offset, int size,
                           const char* unit) {
  const mbs_force_desc* f = &sys->force[force];
  if (!add_param_block(sys, mbs_format_string("/forceset/%s/%s", f->name, field),
                       f->param_adr + offset, size, unit))
    return no_memory(sys, __func__);
  return MBS_OK;
}

int mbs_system_force_cache(mbs_system* sys, int force, int n) {
  sys->force[force].cache_adr = sys->nforce_cache;
  sys->force[force].ncache = n;
  sys->nforce_cache += n;
  return MBS_OK;
}

int mbs_system_force_control(mbs_system* sys, int force, double default_value, int function) {
  const int n = sys->ncontrol;
  int cap = sys->cap_control, cap2 = sys->cap_control;
  if (!GROW(sys->control_default, cap, n + 1)) return no_memory(sys, __func__);
  if (!GROW(sys->control_function, cap2, n + 1)) return no_memory(sys, __func__);
  if (!GROW(sys->control_force, sys->cap_control, n + 1)) return no_memory(sys, __func__);
  sys->control_default[n] = default_value;
  sys->control_function[n] = function;
  sys->control_force[n] = force;
  sys->force[force].control = n;
  sys->ncontrol = n + 1;
  return n;
}

int mbs_system_force_z(mbs_system* sys, int force, int n, const double* defaults,
                       const char* const* fields) {
  const int first = sys->nz;
  int cap = sys->cap_z, cap2 = sys->cap_z;
  if (!GROW(sys->z_default, sys->cap_z, first + n) || !GROW(sys->z_force, cap, first + n) ||
      !GROW(sys->z_field, cap2, first + n))
    return no_memory(sys, __func__);
  for (int i = 0; i < n; i++) {
    sys->z_default[first + i] = defaults ? defaults[i] : 0;
    sys->z_force[first + i] = force;
    sys->z_field[first + i] = fields ? fields[i] : "z";
  }
  sys->force[force].z_adr = first;
  sys->force[force].nz = n;
  sys->nz = first + n;
  return first;
}

int mbs_system_add_params(mbs_system* sys, const double* defaults, int n) {
  const int adr = add_params(sys, defaults, n);
  return adr < 0 ? no_memory(sys, __func__) : adr;
}

int mbs_system_add_param_path(mbs_system* sys, char* path, int index, int size,
                              const char* unit) {
  return add_param_block(sys, path, index, size, unit) ? MBS_OK : no_memory(sys, __func__);
}

char* mbs_format_string(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char* r = malloc((size_t)n + 1);
  if (!r) return NULL;
  va_start(ap, fmt);
  vsnprintf(r, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return r;
}

int mbs_system_no_memory(mbs_system* sys, const char* func) { return no_memory(sys, func); }

int mbs_system_check_building(mbs_system* sys, const char* func) {
  return check_building(sys, func);
}

static int check_body(mbs_system* sys, int body, const char* what) {
  if (body < 0 || body >= sys->nbody)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, what, "%s: body %d does not exist (0..%d)",
                    what, body, sys->nbody - 1);
  return MBS_OK;
}

int mbs_system_check_body(mbs_system* sys, int body, const char* what) {
  return check_body(sys, body, what);
}

static int add_force(mbs_system* sys, mbs_force_type type, const char* kind, int body1, int body2,
                     const double* params, int np) {
  return mbs_system_new_force(sys, type, kind, body1, body2, params, np);
}

int mbs_system_set_force_name(mbs_system* sys, int force, const char* name) {
  int rc = check_building(sys, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "force", "force %d does not exist (0..%d)",
                    force, sys->nforce - 1);
  if (!name || !*name || strchr(name, '/'))
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, sys->force[force].name,
                    "force '%s': a name must not be empty or contain '/'",
                    sys->force[force].name);
  for (int i = 0; i < sys->nforce; i++)
    if (i != force && strcmp(sys->force[i].name, name) == 0)
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, name, "force '%s': the name is taken", name);
  char* old_prefix = mbs_format_string("/forceset/%s/", sys->force[force].name);
  char* nn = dup_string(name);
  if (!old_prefix || !nn) {
    free(old_prefix);
    free(nn);
    return no_memory(sys, __func__);
  }
  const size_t lp = strlen(old_prefix);
  for (int i = 0; i < sys->npblock; i++) {
    mbs_param_info* b = &sys->pblock[i];
    if (strncmp(b->path, old_prefix, lp) != 0) continue;
    char* path = mbs_format_string("/forceset/%s/%s", name, b->path + lp);
    if (!path) {
      free(old_prefix);
      free(nn);
      return no_memory(sys, __func__);
    }
    free((char*)b->path);
    b->path = path;
  }
  free(old_prefix);
  free(sys->force[force].name);
  sys->force[force].name = nn;
  return MBS_OK;
}

int mbs_system_add_gravity(mbs_system* sys, const double g[3]) {
  int rc = check_building(sys, __func__);
  if (rc) return rc;
  if (!all_finite(g, 3))
    return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, "gravity", "gravity: g is not finite");
  const int id = add_force(sys, MBS_FORCE_GRAVITY, "gravity", 0, 0, g, 3);
  if (id >= 0 && !add_param_block(sys, mbs_format_string("/forceset/%s/g", sys->force[id].name),
                                  sys->force[id].param_adr, 3, "m/s^2"))
    return no_memory(sys, __func__);
  return id;
}

int mbs_system_add_mobility_force(mbs_system* sys, int body, int axis, double value) {
  int rc = check_building(sys, __func__);
  if (rc || (rc = check_body(sys, body, "mobility force"))) return rc;
  if (axis < 0 || axis >= sys->body_nu[body])
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "mobility force",
                    "mobility force: body '%s' has %d speeds, no axis %d", sys->body_name[body],
                    sys->body_nu[body], axis);
  const int id = add_force(sys, MBS_FORCE_MOBILITY, "mobility_force", body, body, &value, 1);
  if (id < 0) return id;
  sys->force[id].uindex = sys->body_uadr[body] + axis;
  if (!add_param_block(sys, mbs_format_string("/forceset/%s/value", sys->force[id].name),
                       sys->force[id].param_adr, 1, "N or N m"))
    return no_memory(sys, __func__);
  return id;
}

int mbs_system_add_body_force(mbs_system* sys, int body, const double p_BS[3],
                              const double force_G[3]) {
  int rc = check_building(sys, __func__);
  if (rc || (rc = check_body(sys, body, "body force"))) return rc;
  const double p[6] = {p_BS[0], p_BS[1], p_BS[2], force_G[0], force_G[1], force_G[2]};
  const int id = add_force(sys, MBS_FORCE_BODY_FORCE, "body_force", body, body, p, 6);
  if (id < 0) return id;
  const char* n = sys->force[id].name;
  const int a = sys->force[id].param_adr;
  if (!add_param_block(sys, mbs_format_string("/forceset/%s/point", n), a, 3, "m") ||
      !add_param_block(sys, mbs_format_string("/forceset/%s/force", n), a + 3, 3, "N"))
    return no_memory(sys, __func__);
  return id;
}

int mbs_system_add_body_torque(mbs_system* sys, int body, const double torque_G[3]) {
  int rc = check_building(sys, __func__);
  if (rc || (rc = check_body(sys, body, "body torque"))) return rc;
  const int id = add_force(sys, MBS_FORCE_BODY_TORQUE, "body_torque", body, body, torque_G, 3);
  if (id >= 0 &&
      !add_param_block(sys, mbs_format_string("/forceset/%s/torque", sys->force[id].name),
                       sys->force[id].param_adr, 3, "N m"))
    return no_memory(sys, __func__);
  return id;
}

static int add_two_point(mbs_system* sys, mbs_force_type type, const char* kind, int b1,
                         const double p1[3], int b2, const double p2[3], double c1, double c2,
                         int nc) {
  int rc = check_building(sys, __func__);
  if (rc || (rc = check_body(sys, b1, kind)) || (rc = check_body(sys, b2, kind))) return rc;
  if (!isfinite(c1) || c1 < 0 || !isfinite(c2) || c2 < 0)
    return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, kind,
                    "%s: coefficients must be finite and not negative (%g, %g)", kind, c1, c2);
  const double p[8] = {p1[0], p1[1], p1[2], p2[0], p2[1], p2[2], c1, c2};
  const int id = add_force(sys, type, kind, b1, b2, p, 6 + nc);
  if (id < 0) return id;
  const char* n = sys->force[id].name;
  const int a = sys->force[id].param_adr;
  int ok = add_param_block(sys, mbs_format_string("/forceset/%s/point1", n), a, 3, "m") &&
           add_param_block(sys, mbs_format_string("/forceset/%s/point2", n), a + 3, 3, "m");
  if (type == MBS_FORCE_SPRING)
    ok = ok &&
         add_param_block(sys, mbs_format_string("/forceset/%s/stiffness", n), a + 6, 1, "N/m") &&
         add_param_block(sys, mbs_format_string("/forceset/%s/rest_length", n), a + 7, 1, "m");
  else
    ok =
        ok && add_param_block(sys, mbs_format_string("/forceset/%s/damping", n), a + 6, 1, "N s/m");
  if (!ok) return no_memory(sys, __func__);
  return id;
}

int mbs_system_add_spring(mbs_system* sys, int body1, const double p1[3], int body2,
                          const double p2[3], double k, double rest_length) {
  return add_two_point(sys, MBS_FORCE_SPRING, "spring", body1, p1, body2, p2, k, rest_length, 2);
}

int mbs_system_add_damper(mbs_system* sys, int body1, const double p1[3], int body2,
                          const double p2[3], double c) {
  return add_two_point(sys, MBS_FORCE_DAMPER, "damper", body1, p1, body2, p2, c, 0, 1);
}

static int add_mobility_element(mbs_system* sys, mbs_force_type type, const char* kind, int body,
                                int axis, double c1, double c2, int nc) {
  int rc = check_building(sys, __func__);
  if (rc || (rc = check_body(sys, body, kind))) return rc;
  if (axis < 0 || axis >= sys->body_nu[body])
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, kind, "%s: body '%s' has %d speeds, no axis %d",
                    kind, sys->body_name[body], sys->body_nu[body], axis);
  if (type == MBS_FORCE_MOBILITY_SPRING && sys->body_nq[body] != sys->body_nu[body])
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, kind,
                    "%s: body '%s' has quaternion coordinates; a mobility spring needs angles or "
                    "lengths", kind, sys->body_name[body]);
  if (!isfinite(c1) || c1 < 0 || !isfinite(c2))
    return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, kind,
                    "%s: coefficient must be finite and not negative (%g)", kind, c1);
  const double p[2] = {c1, c2};
  const int id = add_force(sys, type, kind, body, body, p, nc);
  if (id < 0) return id;
  sys->force[id].uindex = sys->body_uadr[body] + axis;
  sys->force[id].qindex = sys->body_qadr[body] + axis;
  const char* n = sys->force[id].name;
  const int a = sys->force[id].param_adr;
  int ok;
  if (type == MBS_FORCE_MOBILITY_SPRING)
    ok =
        add_param_block(sys, mbs_format_string("/forceset/%s/stiffness", n), a, 1,
                        "N/m or N m/rad") &&
        add_param_block(sys, mbs_format_string("/forceset/%s/rest_value", n), a + 1, 1, "m or rad");
  else
    ok = add_param_block(sys, mbs_format_string("/forceset/%s/damping", n), a, 1,
                         "N s/m or N m s/rad");
  if (!ok) return no_memory(sys, __func__);
  return id;
}

int mbs_system_add_mobility_spring(mbs_system* sys, int body, int axis, double k, double q0) {
  return add_mobility_element(sys, MBS_FORCE_MOBILITY_SPRING, "mobility_spring", body, axis, k,
                              q0, 2);
}

int mbs_system_add_mobility_damper(mbs_system* sys, int body, int axis, double c) {
  return add_mobility_element(sys, MBS_FORCE_MOBILITY_DAMPER, "mobility_damper", body, axis, c, 0,
                              1);
}

//---------------------------------- finalize ---------------------------------------------------

int mbs_system_finalize(mbs_system* sys) {
  int rc = check_building(sys, __func__);
  if (rc) return rc;
  if ((rc = mbs_contact_finalize(sys))) return rc;
  // per-body pools, D^-1 blocks, children
  int npool = 0, ndi = 0;
  for (int b = 0; b < sys->nbody; b++) sys->body_nchild[b] = 0;
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
    sys->body_pool_adr[b] = npool;
    npool += ops->npool;
    sys->body_diadr[b] = ndi;
    ndi += sys->body_nu[b] * sys->body_nu[b];
    sys->body_nchild[sys->body_parent[b]]++;
  }
  sys->npool = npool;
  sys->ndi = ndi;
  // default coordinates
  sys->q_default = calloc((size_t)(sys->nq > 0 ? sys->nq : 1), sizeof(double));
  if (!sys->q_default) return no_memory(sys, __func__);
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
    if (ops->default_q) {
      mbs_mob_ctx c;
      memset(&c, 0, sizeof(c));
      c.sys = sys;
      c.body = b;
      c.nq = sys->body_nq[b];
      c.nu = sys->body_nu[b];
      ops->default_q(&c, sys->q_default + sys->body_qadr[b]);
    }
  }
  // variable block: [t | q | u | z | param | f_applied | F_applied | controls]
  sys->var_q = 1;
  sys->var_u = sys->var_q + (size_t)sys->nq;
  sys->var_z = sys->var_u + (size_t)sys->nu;
  sys->var_param = sys->var_z + (size_t)sys->nz;
  sys->var_fapp = sys->var_param + (size_t)sys->nparam;
  sys->var_Fapp = sys->var_fapp + (size_t)sys->nu;
  sys->var_control = sys->var_Fapp + 6 * (size_t)sys->nbody;
  sys->nvars = sys->var_control + (size_t)sys->ncontrol;
  // scratch: room for several per-body spatial arrays and a dense nu x nu matrix, and for the
  // constraint solvers (m x m and m x nu matrices, LAPACK workspaces)
  const size_t m = (size_t)sys->mcon, nu = (size_t)sys->nu;
  sys->scratch_bytes = 4096 + sizeof(double) * (48 * (size_t)sys->nbody + 16 * nu + 2 * nu * nu +
                                                4 * m * m + 4 * m * nu + 32 * m + 256);
  sys->finalized = 1;
  mbs_error_clear(&sys->err);
  return MBS_OK;
}

//---------------------------------- queries ----------------------------------------------------

const char* mbs_system_name(const mbs_system* sys) { return sys->name; }
int mbs_system_is_finalized(const mbs_system* sys) { return sys->finalized; }
int mbs_system_nbody(const mbs_system* sys) { return sys->nbody; }
int mbs_system_nq(const mbs_system* sys) { return sys->nq; }
int mbs_system_nu(const mbs_system* sys) { return sys->nu; }
int mbs_system_nz(const mbs_system* sys) { return sys->nz; }
int mbs_system_z_name(const mbs_system* sys, int i, char* buf, size_t n) {
  if (i < 0 || i >= sys->nz) return MBS_ERR_ARGUMENT;
  snprintf(buf, n, "%s/%s", sys->force[sys->z_force[i]].name, sys->z_field[i]);
  return MBS_OK;
}
int mbs_system_nparam(const mbs_system* sys) { return sys->nparam; }
const char* mbs_force_name(const mbs_system* sys, int force) {
  return force >= 0 && force < sys->nforce ? sys->force[force].name : NULL;
}
const char* mbs_force_kind(const mbs_system* sys, int force) {
  return force >= 0 && force < sys->nforce ? mbs_force_ops_of(sys->force[force].type)->kind
                                           : NULL;
}
int mbs_force_find(const mbs_system* sys, const char* name) {
  for (int i = 0; name && i < sys->nforce; i++)
    if (strcmp(sys->force[i].name, name) == 0) return i;
  return -1;
}
int mbs_system_ncontrol(const mbs_system* sys) { return sys->ncontrol; }
int mbs_control_force(const mbs_system* sys, int control) {
  return control >= 0 && control < sys->ncontrol ? sys->control_force[control] : -1;
}
int mbs_system_nforce(const mbs_system* sys) { return sys->nforce; }

static int valid_body(const mbs_system* sys, int b) { return b >= 0 && b < sys->nbody; }

const char* mbs_body_name(const mbs_system* sys, int b) {
  return valid_body(sys, b) ? sys->body_name[b] : NULL;
}
int mbs_body_find(const mbs_system* sys, const char* name) {
  for (int b = 0; b < sys->nbody; b++)
    if (strcmp(sys->body_name[b], name) == 0) return b;
  return -1;
}
int mbs_body_parent(const mbs_system* sys, int b) {
  return valid_body(sys, b) ? sys->body_parent[b] : -1;
}
const char* mbs_body_mobilizer_name(const mbs_system* sys, int body) {
  return body >= 0 && body < sys->nbody ? sys->mob_name[body] : NULL;
}
mbs_mobilizer_type mbs_body_mobilizer(const mbs_system* sys, int b) {
  return valid_body(sys, b) ? sys->body_mob[b] : MBS_MOB_WELD;
}
int mbs_body_qadr(const mbs_system* sys, int b) { return valid_body(sys, b) ? sys->body_qadr[b] : -1; }
int mbs_body_nq(const mbs_system* sys, int b) { return valid_body(sys, b) ? sys->body_nq[b] : -1; }
int mbs_body_uadr(const mbs_system* sys, int b) { return valid_body(sys, b) ? sys->body_uadr[b] : -1; }
int mbs_body_nu(const mbs_system* sys, int b) { return valid_body(sys, b) ? sys->body_nu[b] : -1; }

int mbs_system_nparam_block(const mbs_system* sys) { return sys->npblock; }
const mbs_param_info* mbs_system_param_block(const mbs_system* sys, int i) {
  return i >= 0 && i < sys->npblock ? &sys->pblock[i] : NULL;
}
const mbs_param_info* mbs_system_find_param(const mbs_system* sys, const char* path) {
  for (int i = 0; i < sys->npblock; i++)
    if (strcmp(sys->pblock[i].path, path) == 0) return &sys->pblock[i];
  return NULL;
}
double mbs_system_param_default(const mbs_system* sys, int i) {
  return i >= 0 && i < sys->nparam ? sys->param_default[i] : NAN;
}
int mbs_system_set_param_default(mbs_system* sys, int i, double value) {
  if (!sys || i < 0 || i >= sys->nparam || !isfinite(value)) return MBS_ERR_ARGUMENT;
  sys->param_default[i] = value;
  return MBS_OK;
}
