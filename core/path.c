// Geometry paths (include/mbs/path.h).
#include "mbs/path.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "path_impl.h"

mbs_path_point_spec mbs_path_point_spec_default(const char* name, int body) {
  mbs_path_point_spec s;
  memset(&s, 0, sizeof(s));
  s.name = name;
  s.kind = MBS_PATH_POINT_FIXED;
  s.body = body;
  s.q_index = -1;
  for (int k = 0; k < 3; k++) s.function[k] = s.function_q[k] = s.function_u[k] = -1;
  return s;
}

void mbs_path_data_free(struct mbs_path_data* d) {
  if (!d) return;
  for (int i = 0; i < d->npath; i++) {
    free(d->path[i].owner);
    free(d->path[i].point);
  }
  for (int i = 0; i < d->nwrapobj; i++) free(d->wrapobj[i].name);
  free(d->path);
  free(d->wrapobj);
  free(d);
}

static struct mbs_path_data* path_data(mbs_system* sys) {
  if (!sys->paths) sys->paths = calloc(1, sizeof(*sys->paths));
  return sys->paths;
}

static int fail(mbs_system* sys, const char* owner, const char* fmt, const char* a, int n) {
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "path of '%s'", owner ? owner : "?");
  return mbs_error_set(&sys->err, MBS_ERR_ARGUMENT, "mbs_system_add_path", __LINE__, comp,
                       "path of '%s': %s %s %d", owner ? owner : "?", fmt, a ? a : "", n);
}

int mbs_system_add_path(mbs_system* sys, const char* owner, const mbs_path_point_spec* pts,
                        int n) {
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!owner || !pts || n < 2 || n > MBS_PATH_MAX_POINTS)
    return fail(sys, owner, "needs 2 to 64 points; it has", NULL, n);
  for (int i = 0; i < n; i++) {
    const mbs_path_point_spec* p = &pts[i];
    if (p->body < 0 || p->body >= sys->nbody)
      return fail(sys, owner, "point", p->name, i);
    if (p->kind == MBS_PATH_POINT_CONDITIONAL && (p->q_index < 0 || p->q_index >= sys->nq))
      return fail(sys, owner, "conditional point without a coordinate:", p->name, i);
    for (int k = 0; p->kind == MBS_PATH_POINT_MOVING && k < 3; k++)
      if (p->function[k] >= 0 &&
          (p->function[k] >= sys->nfunc || p->function_q[k] < 0 || p->function_q[k] >= sys->nq ||
           p->function_u[k] < 0 || p->function_u[k] >= sys->nu))
        return fail(sys, owner, "moving point with a bad function or coordinate:", p->name, i);
    for (int k = 0; k < 3; k++)
      if (!isfinite(p->location[k]) &&
          !(p->kind == MBS_PATH_POINT_MOVING && p->function[k] >= 0))
        return fail(sys, owner, "location is not finite at point", p->name, i);
  }
  struct mbs_path_data* d = path_data(sys);
  if (!d) return mbs_system_no_memory(sys, __func__);
  if (d->npath == d->cap) {
    const int cap = d->cap ? 2 * d->cap : 8;
    mbs_path_desc* p = realloc(d->path, (size_t)cap * sizeof(*p));
    if (!p) return mbs_system_no_memory(sys, __func__);
    d->path = p;
    d->cap = cap;
  }
  mbs_path_desc* path = &d->path[d->npath];
  memset(path, 0, sizeof(*path));
  path->owner = mbs_format_string("%s", owner);
  path->point = calloc((size_t)n, sizeof(*path->point));
  if (!path->owner || !path->point) {
    free(path->owner);
    free(path->point);
    return mbs_system_no_memory(sys, __func__);
  }
  path->npoint = n;
  for (int i = 0; i < n; i++) {
    mbs_path_point_desc* q = &path->point[i];
    q->spec = pts[i];
    q->spec.name = NULL;  // (the caller's string; the parameter path keeps the name)
    double loc[3];
    for (int k = 0; k < 3; k++) loc[k] = isfinite(pts[i].location[k]) ? pts[i].location[k] : 0;
    q->loc_adr = mbs_system_add_params(sys, loc, 3);
    if (q->loc_adr < 0) return q->loc_adr;
    char* pp = mbs_format_string("/forceset/%s/path/%s/location", owner,
                                 pts[i].name ? pts[i].name : "point");
    if (!pp) return mbs_system_no_memory(sys, __func__);
    if ((rc = mbs_system_add_param_path(sys, pp, q->loc_adr, 3, "m"))) return rc;
  }
  return d->npath++;
}

int mbs_system_npath(const mbs_system* sys) { return sys->paths ? sys->paths->npath : 0; }

const char* mbs_path_owner(const mbs_system* sys, int path) {
  return path >= 0 && path < mbs_system_npath(sys) ? sys->paths->path[path].owner : NULL;
}

int mbs_path_npoint(const mbs_system* sys, int path) {
  return path >= 0 && path < mbs_system_npath(sys) ? sys->paths->path[path].npoint : -1;
}

//---------------------------------- wrap objects -----------------------------------------------

static int wrap_fail(mbs_system* sys, const char* func, const char* name, const char* msg) {
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "wrap object '%s'", name ? name : "?");
  return mbs_error_set(&sys->err, MBS_ERR_ARGUMENT, func, __LINE__, comp, "wrap object '%s': %s",
                       name ? name : "?", msg);
}

// a parameter block "<prefix>/<what>" of n values
static int wrap_param(mbs_system* sys, const char* prefix, const char* what, const double* v,
                      int n) {
  const int adr = mbs_system_add_params(sys, v, n);
  if (adr < 0) return adr;
  char* pp = mbs_format_string("%s/%s", prefix, what);
  if (!pp) return mbs_system_no_memory(sys, "mbs_system_add_wrap_object");
  const int rc = mbs_system_add_param_path(sys, pp, adr, n, "m");
  return rc ? rc : adr;
}

int mbs_system_add_wrap_object(mbs_system* sys, const char* prefix, const char* name, int body,
                               const mbs_transform* X_BW, const mbs_wrap_object* obj,
                               int active) {
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!prefix || !name || !X_BW || !obj)
    return wrap_fail(sys, __func__, name, "needs a parameter prefix, a name, a frame and a shape");
  if (body < 0 || body >= sys->nbody) return wrap_fail(sys, __func__, name, "no such body");
  if (mbs_wrap_object_find(sys, name) >= 0)
    return wrap_fail(sys, __func__, name, "a wrap object of that name exists already");
  for (int k = 0; k < 3; k++)
    if (!isfinite(X_BW->p[k])) return wrap_fail(sys, __func__, name, "translation not finite");
  for (int k = 0; k < 9; k++)
    if (!isfinite(X_BW->R[k])) return wrap_fail(sys, __func__, name, "rotation not finite");
  mbs_wrap_object o = *obj;
  o.name = name;
  o.method = MBS_WRAP_HYBRID;
  mbs_error e;
  if (mbs_wrap_object_check(&o, &e)) return wrap_fail(sys, __func__, name, e.message);
  struct mbs_path_data* d = path_data(sys);
  if (!d) return mbs_system_no_memory(sys, __func__);
  if (d->nwrapobj == d->wrapcap) {
    const int cap = d->wrapcap ? 2 * d->wrapcap : 8;
    mbs_wrap_desc* w = realloc(d->wrapobj, (size_t)cap * sizeof(*w));
    if (!w) return mbs_system_no_memory(sys, __func__);
    d->wrapobj = w;
    d->wrapcap = cap;
  }
  mbs_wrap_desc* w = &d->wrapobj[d->nwrapobj];
  memset(w, 0, sizeof(*w));
  if (!(w->name = mbs_format_string("%s", name))) return mbs_system_no_memory(sys, __func__);
  d->nwrapobj++;  // (owns the name from here on)
  w->body = body;
  w->active = active != 0;
  memcpy(w->R_BW, X_BW->R, sizeof(w->R_BW));
  w->obj = o;
  w->obj.name = NULL;
  w->size_adr[0] = w->size_adr[1] = -1;
  if ((w->trans_adr = wrap_param(sys, prefix, "translation", X_BW->p, 3)) < 0)
    return w->trans_adr;
  switch (o.shape) {
    case MBS_WRAP_SPHERE:
      w->size_adr[0] = wrap_param(sys, prefix, "radius", &o.radius, 1);
      break;
    case MBS_WRAP_CYLINDER:
      if ((w->size_adr[0] = wrap_param(sys, prefix, "radius", &o.radius, 1)) >= 0)
        w->size_adr[1] = wrap_param(sys, prefix, "length", &o.length, 1);
      break;
    case MBS_WRAP_ELLIPSOID:
      w->size_adr[0] = wrap_param(sys, prefix, "dimensions", o.dimensions, 3);
      break;
    case MBS_WRAP_TORUS:
      if ((w->size_adr[0] = wrap_param(sys, prefix, "inner_radius", &o.inner_radius, 1)) >= 0)
        w->size_adr[1] = wrap_param(sys, prefix, "outer_radius", &o.outer_radius, 1);
      break;
    default:
      break;
  }
  if (w->size_adr[0] < 0) return w->size_adr[0];
  if (w->size_adr[1] < 0 && (o.shape == MBS_WRAP_CYLINDER || o.shape == MBS_WRAP_TORUS))
    return w->size_adr[1];
  return d->nwrapobj - 1;
}

int mbs_system_nwrap_object(const mbs_system* sys) {
  return sys && sys->paths ? sys->paths->nwrapobj : 0;
}

int mbs_wrap_object_find(const mbs_system* sys, const char* name) {
  for (int i = 0; name && i < mbs_system_nwrap_object(sys); i++)
    if (!strcmp(sys->paths->wrapobj[i].name, name)) return i;
  return -1;
}

const char* mbs_wrap_object_name(const mbs_system* sys, int wrap) {
  return wrap >= 0 && wrap < mbs_system_nwrap_object(sys) ? sys->paths->wrapobj[wrap].name : NULL;
}

int mbs_wrap_object_body(const mbs_system* sys, int wrap) {
  return wrap >= 0 && wrap < mbs_system_nwrap_object(sys) ? sys->paths->wrapobj[wrap].body : -1;
}

int mbs_path_add_wrap(mbs_system* sys, int path, int wrap, mbs_wrap_method method, int start,
                      int end) {
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (path < 0 || path >= mbs_system_npath(sys))
    return fail(sys, NULL, "no such path:", NULL, path);
  mbs_path_desc* P = &sys->paths->path[path];
  if (wrap < 0 || wrap >= mbs_system_nwrap_object(sys))
    return fail(sys, P->owner, "no such wrap object:", NULL, wrap);
  if (P->nwrap >= MBS_PATH_MAX_WRAPS)
    return fail(sys, P->owner, "too many wraps; at most", NULL, MBS_PATH_MAX_WRAPS);
  if ((int)method < 0 || method >= MBS_WRAP_METHOD_COUNT)
    return fail(sys, P->owner, "unknown wrap method", NULL, (int)method);
  if (start > P->npoint || end > P->npoint || (start >= 1 && end >= 1 && end < start))
    return fail(sys, P->owner, "wrap range outside its points; it has", NULL, P->npoint);
  mbs_path_wrap_desc* pw = &P->wrap[P->nwrap++];
  pw->wrap = wrap;
  pw->method = method;
  pw->start = start;
  pw->end = end;
  pw->mem = sys->nwrap_memory++;
  return P->nwrap - 1;
}

int mbs_path_nwrap(const mbs_system* sys, int path) {
  return path >= 0 && path < mbs_system_npath(sys) ? sys->paths->path[path].nwrap : -1;
}

int mbs_path_wrap_object(const mbs_system* sys, int path, int i) {
  if (path < 0 || path >= mbs_system_npath(sys)) return -1;
  const mbs_path_desc* P = &sys->paths->path[path];
  return i >= 0 && i < P->nwrap ? P->wrap[i].wrap : -1;
}

mbs_wrap_shape mbs_wrap_object_shape(const mbs_system* sys, int wrap) {
  return wrap >= 0 && wrap < mbs_system_nwrap_object(sys) ? sys->paths->wrapobj[wrap].obj.shape
                                                           : MBS_WRAP_SHAPE_COUNT;
}

// the object with its sizes now, and its frame in Ground
static void wrap_now(const mbs_state* st, const mbs_wrap_desc* w, mbs_wrap_method method,
                     mbs_wrap_object* obj, mbs_transform* X_GW) {
  const double* prm = st->param;
  *obj = w->obj;
  obj->name = w->name;
  obj->method = method;
  switch (w->obj.shape) {
    case MBS_WRAP_SPHERE:
      obj->radius = prm[w->size_adr[0]];
      break;
    case MBS_WRAP_CYLINDER:
      obj->radius = prm[w->size_adr[0]];
      obj->length = prm[w->size_adr[1]];
      break;
    case MBS_WRAP_ELLIPSOID:
      memcpy(obj->dimensions, prm + w->size_adr[0], 3 * sizeof(double));
      break;
    case MBS_WRAP_TORUS:
      obj->inner_radius = prm[w->size_adr[0]];
      obj->outer_radius = prm[w->size_adr[1]];
      break;
    default:
      break;
  }
  if (X_GW) {
    mbs_transform X_BW;
    memcpy(X_BW.R, w->R_BW, sizeof(X_BW.R));
    memcpy(X_BW.p, prm + w->trans_adr, sizeof(X_BW.p));
    mbs_tf_mul(X_GW, &st->X_GB[w->body], &X_BW);
  }
}

int mbs_paths_realize_instance(const mbs_system* sys, mbs_state* st) {
  const struct mbs_path_data* d = sys->paths;
  if (!d) return MBS_OK;
  for (int i = 0; i < d->nwrapobj; i++) {
    const mbs_wrap_desc* w = &d->wrapobj[i];
    mbs_wrap_object obj;
    wrap_now(st, w, MBS_WRAP_HYBRID, &obj, NULL);
    mbs_error e;
    int rc = mbs_wrap_object_check(&obj, &e);
    const double* t = st->param + w->trans_adr;
    if (!rc && !(isfinite(t[0]) && isfinite(t[1]) && isfinite(t[2]))) {
      rc = MBS_ERR_PARAMETER;
      snprintf(e.message, sizeof(e.message), "translation (%g, %g, %g) is not finite", t[0], t[1],
               t[2]);
    }
    if (rc) {
      char comp[MBS_ERROR_COMPONENT_LEN];
      snprintf(comp, sizeof(comp), "wrap object '%s'", w->name);
      return mbs_error_set(&st->err, MBS_ERR_PARAMETER, __func__, __LINE__, comp,
                           "wrap object '%s': %s", w->name, e.message);
    }
  }
  for (int i = 0; i < d->npath; i++) {
    const mbs_path_desc* P = &d->path[i];
    for (int j = 0; j < P->npoint; j++) {
      const double* loc = st->param + P->point[j].loc_adr;
      if (isfinite(loc[0]) && isfinite(loc[1]) && isfinite(loc[2])) continue;
      char comp[MBS_ERROR_COMPONENT_LEN];
      snprintf(comp, sizeof(comp), "path of '%s'", P->owner);
      return mbs_error_set(&st->err, MBS_ERR_PARAMETER, __func__, __LINE__, comp,
                           "path of '%s': point %d's location (%g, %g, %g) is not finite",
                           P->owner, j + 1, loc[0], loc[1], loc[2]);
    }
  }
  return MBS_OK;
}

// a point's location in its body and (with ldot) its rate of change there
static void point_in_body(const mbs_system* sys, const mbs_state* st, const mbs_path_point_desc* q,
                          double p_B[3], double pdot_B[3], double dpdq[3]) {
  const double* loc = st->param + q->loc_adr;
  for (int k = 0; k < 3; k++) {
    p_B[k] = loc[k];
    if (pdot_B) pdot_B[k] = 0;
    if (dpdq) dpdq[k] = 0;
    if (q->spec.kind != MBS_PATH_POINT_MOVING || q->spec.function[k] < 0) continue;
    double d[3];
    mbs_system_eval_function(sys, st, q->spec.function[k], st->q[q->spec.function_q[k]], d);
    p_B[k] = d[0];
    if (dpdq) dpdq[k] = d[1];
    if (pdot_B) pdot_B[k] = d[1] * st->u[q->spec.function_u[k]];
  }
}

static int point_active(const mbs_state* st, const mbs_path_point_desc* q) {
  if (q->spec.kind != MBS_PATH_POINT_CONDITIONAL) return 1;
  const double x = st->q[q->spec.q_index];
  return x >= q->spec.range[0] && x <= q->spec.range[1];
}

static double dist3(const double a[3], const double b[3]) {
  double d[3];
  mbs_v3_sub(d, a, b);
  return mbs_v3_norm(d);
}

// entry k of a path wrap's tangent points: -(2 w + side) - 1
static int wrap_entry(int w, int side) { return -(2 * w + side) - 1; }
static int entry_wrap(int index) { return (-index - 1) / 2; }

static void remove_entry(mbs_path_eval_out* o, int k) {
  const size_t m = (size_t)(o->n - k - 1);
  memmove(o->index + k, o->index + k + 1, m * sizeof(int));
  memmove(o->body + k, o->body + k + 1, m * sizeof(int));
  memmove(o->p + 3 * k, o->p + 3 * (k + 1), 3 * m * sizeof(double));
  memmove(o->seg + k, o->seg + k + 1, m * sizeof(double));
  o->n--;
}

static void insert_entry(mbs_path_eval_out* o, int k, int index, int body, const double p[3],
                         double surface) {
  const size_t m = (size_t)(o->n - k);
  memmove(o->index + k + 1, o->index + k, m * sizeof(int));
  memmove(o->body + k + 1, o->body + k, m * sizeof(int));
  memmove(o->p + 3 * (k + 1), o->p + 3 * k, 3 * m * sizeof(double));
  memmove(o->seg + k + 1, o->seg + k, m * sizeof(double));
  o->index[k] = index;
  o->body[k] = body;
  memcpy(o->p + 3 * k, p, 3 * sizeof(double));
  o->seg[k] = surface;  // (while wrapping: the surface length ending at this entry)
  o->n++;
}

static void remove_wrap(mbs_path_eval_out* o, int w) {
  for (int k = 0; k < o->n; k++)
    if (o->index[k] == wrap_entry(w, 0)) {
      remove_entry(o, k);
      remove_entry(o, k);  // its second tangent point follows it
      return;
    }
}

// entries k and k + 1 are a wrap's two tangent points, with the wrap surface between them
static int on_surface(const mbs_path_eval_out* o, int k) {
  return o->index[k] < 0 && o->index[k + 1] == o->index[k] - 1 && (-o->index[k] - 1) % 2 == 0;
}

static double current_length(const mbs_path_eval_out* o) {
  double L = 0;
  for (int k = 0; k + 1 < o->n; k++)
    L += on_surface(o, k) ? o->seg[k + 1] : dist3(o->p + 3 * k, o->p + 3 * (k + 1));
  return L;
}

static int wrap_error(mbs_state* st, const mbs_path_desc* P, const char* obj, const char* msg) {
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "path of '%s'", P->owner);
  return mbs_error_set(&st->err, MBS_ERR_NAN, "mbs_path_eval", __LINE__, comp,
                       "path of '%s': wrapping over '%s': %s", P->owner, obj, msg);
}

// OpenSim's GeometryPath::applyWrapObjects over the entries (active points so far)
static int apply_wraps(const mbs_system* sys, mbs_state* st, const mbs_path_desc* P,
                       mbs_path_eval_out* o) {
  const int nw = P->nwrap;
  int order[MBS_PATH_MAX_WRAPS], result[MBS_PATH_MAX_WRAPS];
  for (int i = 0; i < nw; i++) order[i] = i;
  const int max_iterations = nw < 2 ? 1 : 8;
  double last_length = INFINITY;
  for (int kk = 0; kk < max_iterations; kk++) {
    for (int i = 0; i < nw; i++) {
      const int wi = order[i];
      const mbs_path_wrap_desc* pw = &P->wrap[wi];
      const mbs_wrap_desc* W = &sys->paths->wrapobj[pw->wrap];
      result[i] = MBS_WRAP_NONE;
      remove_wrap(o, wi);
      if (!W->active) continue;
      // the range: the first and last active points within it, found among the entries
      const int ws = pw->start < 1 ? 0 : pw->start - 1;
      const int we = pw->end < 1 ? P->npoint - 1 : pw->end - 1;
      int jf = -1, jr = -1;
      for (int k = 0; k < o->n; k++) {
        if (o->index[k] < ws || o->index[k] > we) continue;
        if (jf < 0) jf = k;
        jr = k;
      }
      if (jf < 0) return MBS_OK;  // no active point in its range: OpenSim stops wrapping here
      mbs_wrap_object obj;
      mbs_transform X_GW;
      wrap_now(st, W, pw->method, &obj, &X_GW);
      mbs_wrap_memory* mem = &st->wrap_mem[pw->mem];
      mbs_wrap_result best, wr;
      int best_at = -1;
      double min_change = INFINITY;
      for (int k = jf; k < jr; k++) {
        if (o->index[k] < 0 && o->index[k + 1] < 0 &&
            P->wrap[entry_wrap(o->index[k])].wrap == P->wrap[entry_wrap(o->index[k + 1])].wrap)
          continue;  // both on this object's surface already
        double p1[3], p2[3], d[3];
        mbs_v3_sub(d, o->p + 3 * k, X_GW.p);
        mbs_m33_tvec(p1, X_GW.R, d);
        mbs_v3_sub(d, o->p + 3 * (k + 1), X_GW.p);
        mbs_m33_tvec(p2, X_GW.R, d);
        mbs_error e;
        if (mbs_wrap_segment(&wr, &obj, p1, p2, mem, &e))
          return wrap_error(st, P, W->name, e.message);
        result[i] = wr.action;
        if (wr.action == MBS_WRAP_MANDATORY) {
          best = wr;
          best_at = k;
          mbs_wrap_remember(mem, &wr);
          break;
        }
        if (wr.action == MBS_WRAP_WRAPPED) {
          const double change = mbs_wrap_path_length(&wr, p1, p2) - dist3(p1, p2);
          if (change < min_change) {
            best = wr;
            best_at = k;
            mbs_wrap_remember(mem, &wr);
            min_change = change;
          }
        }
      }
      if (best_at < 0) {
        mbs_wrap_remember(mem, NULL);
        continue;
      }
      double r1[3], r2[3];
      mbs_m33_vec(r1, X_GW.R, best.r1);
      mbs_v3_add(r1, r1, X_GW.p);
      mbs_m33_vec(r2, X_GW.R, best.r2);
      mbs_v3_add(r2, r2, X_GW.p);
      insert_entry(o, best_at + 1, wrap_entry(wi, 0), W->body, r1, 0);
      insert_entry(o, best_at + 2, wrap_entry(wi, 1), W->body, r2, best.length);
    }
    const double length = current_length(o);
    if (fabs(length - last_length) < 0.0005) break;
    last_length = length;
    if (kk == 0 && nw > 1 && result[0] == MBS_WRAP_NONE && result[1] == MBS_WRAP_INSIDE) {
      // the first wrapped nothing and the second found a point inside: swap them, try again
      order[0] = 1;
      order[1] = 0;
      remove_wrap(o, 0);
    }
  }
  return MBS_OK;
}

int mbs_path_eval(const mbs_system* sys, mbs_state* st, int path, mbs_path_eval_out* o,
                  int with_speed) {
  const mbs_path_desc* P = &sys->paths->path[path];
  o->n = 0;
  o->length = 0;
  o->speed = 0;
  for (int i = 0; i < P->npoint; i++) {
    const mbs_path_point_desc* q = &P->point[i];
    if (!point_active(st, q)) continue;
    const int k = o->n++;
    double p_B[3];
    point_in_body(sys, st, q, p_B, NULL, NULL);
    o->index[k] = i;
    o->body[k] = q->spec.body;
    o->seg[k] = 0;
    mbs_force_station(st, q->spec.body, p_B, o->p + 3 * k, NULL);
  }
  int rc = MBS_OK;
  if (P->nwrap > 0 && (rc = apply_wraps(sys, st, P, o))) {
    o->length = o->speed = NAN;
    return rc;
  }
  // velocities: a path point's as a station of its body (a moving point's motion in its body
  // added); a tangent point's as fixed on the wrap object's body
  for (int k = 0; with_speed && k < o->n; k++) {
    const int b = o->body[k];
    double p_B[3], d[3];
    mbs_v3_sub(d, o->p + 3 * k, st->X_GB[b].p);
    mbs_m33_tvec(p_B, st->X_GB[b].R, d);
    mbs_force_station(st, b, p_B, d, o->v + 3 * k);
    if (o->index[k] < 0) continue;
    const mbs_path_point_desc* q = &P->point[o->index[k]];
    if (q->spec.kind != MBS_PATH_POINT_MOVING) continue;
    double pdot_B[3], w[3];
    point_in_body(sys, st, q, p_B, pdot_B, NULL);
    mbs_m33_vec(w, st->X_GB[b].R, pdot_B);
    mbs_v3_add(o->v + 3 * k, o->v + 3 * k, w);
  }
  for (int k = 0; k + 1 < o->n; k++) {
    if (on_surface(o, k)) {
      // over the wrap surface: both ends on the object's body
      o->seg[k] = o->seg[k + 1];
      memset(o->dir + 3 * k, 0, 3 * sizeof(double));
      o->length += o->seg[k];
      continue;
    }
    double d[3];
    mbs_v3_sub(d, o->p + 3 * (k + 1), o->p + 3 * k);
    const double len = mbs_v3_norm(d);
    o->seg[k] = len;
    o->length += len;
    if (len > 1e-14) mbs_v3_scale(o->dir + 3 * k, d, 1 / len);
    else memset(o->dir + 3 * k, 0, 3 * sizeof(double));
    if (with_speed) {
      double dv[3];
      mbs_v3_sub(dv, o->v + 3 * (k + 1), o->v + 3 * k);
      o->speed += mbs_v3_dot(o->dir + 3 * k, dv);
    }
  }
  if (o->n > 0) o->seg[o->n - 1] = 0;
  return MBS_OK;
}

void mbs_path_apply_tension(const mbs_system* sys, const mbs_state* st, int path,
                            const mbs_path_eval_out* o, double tension, double* F_body,
                            double* f_mob) {
  const mbs_path_desc* P = &sys->paths->path[path];
  for (int k = 0; k < o->n; k++) {
    // the point's net pull: toward the next point and toward the previous one
    double F[3] = {0, 0, 0};
    if (k + 1 < o->n) mbs_v3_axpy(F, tension, o->dir + 3 * k);
    if (k > 0) mbs_v3_axpy(F, -tension, o->dir + 3 * (k - 1));
    const int b = o->body[k];
    if (b > 0) mbs_force_add_point_force(st, F_body, b, o->p + 3 * k, F);
    if (o->index[k] < 0) continue;  // a tangent point: fixed on the wrap object's body
    const mbs_path_point_desc* q = &P->point[o->index[k]];
    if (q->spec.kind == MBS_PATH_POINT_MOVING && f_mob) {
      // the point moves in its body with its coordinates: F . R_GB dp_B/dq on each
      double p_B[3], dpdq[3];
      point_in_body(sys, st, q, p_B, NULL, dpdq);
      for (int a = 0; a < 3; a++) {
        if (q->spec.function[a] < 0) continue;
        double e[3] = {0, 0, 0}, w[3];
        e[a] = dpdq[a];
        mbs_m33_vec(w, st->X_GB[b].R, e);
        f_mob[q->spec.function_u[a]] += mbs_v3_dot(F, w);
      }
    }
  }
}

static int check_path(const mbs_system* sys, mbs_state* st, int path, const char* func) {
  if (!sys || !st) return MBS_ERR_ARGUMENT;
  if (path < 0 || path >= mbs_system_npath(sys))
    return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, func, __LINE__, sys->name,
                         "%s: path %d does not exist (0..%d)", func, path,
                         mbs_system_npath(sys) - 1);
  return MBS_OK;
}

int mbs_calc_path_length(const mbs_system* sys, mbs_state* st, int path, double* length,
                         double* speed) {
  int rc = check_path(sys, st, path, __func__);
  if (!rc) rc = mbs_check_stage(sys, st, speed ? MBS_STAGE_VELOCITY : MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  mbs_path_eval_out o;
  rc = mbs_path_eval(sys, st, path, &o, speed != NULL);
  if (length) *length = o.length;
  if (speed) *speed = o.speed;
  return rc;
}

int mbs_calc_path_points(const mbs_system* sys, mbs_state* st, int path, double* points_G,
                         int* n) {
  int rc = check_path(sys, st, path, __func__);
  if (!rc) rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  mbs_path_eval_out o;
  if ((rc = mbs_path_eval(sys, st, path, &o, 0))) return rc;
  memcpy(points_G, o.p, 3 * (size_t)o.n * sizeof(double));
  *n = o.n;
  return MBS_OK;
}

int mbs_calc_path_moment_arms(const mbs_system* sys, mbs_state* st, int path, double* r) {
  int rc = check_path(sys, st, path, __func__);
  if (!rc) rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  const size_t mark = mbs_stack_mark(st);
  double* F = MBS_STACK_ALLOC(st, 6 * (size_t)sys->nbody, double);
  double* f = MBS_STACK_ALLOC(st, (size_t)sys->nu + 1, double);
  if (!F || !f) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  memset(F, 0, 6 * (size_t)sys->nbody * sizeof(double));
  memset(f, 0, ((size_t)sys->nu + 1) * sizeof(double));
  mbs_path_eval_out o;
  if ((rc = mbs_path_eval(sys, st, path, &o, 0))) {
    mbs_stack_release(st, mark);
    return rc;
  }
  mbs_path_apply_tension(sys, st, path, &o, 1.0, F, f);
  rc = mbs_calc_jacobian_transpose_times(sys, st, F, r);
  for (int i = 0; rc == MBS_OK && i < sys->nu; i++) r[i] += f[i];
  mbs_stack_release(st, mark);
  return rc;
}
