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
  free(d->path);
  free(d);
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
  if (!sys->paths && !(sys->paths = calloc(1, sizeof(*sys->paths))))
    return mbs_system_no_memory(sys, __func__);
  struct mbs_path_data* d = sys->paths;
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

int mbs_path_eval(const mbs_system* sys, const mbs_state* st, int path, mbs_path_eval_out* o,
                  int with_speed) {
  const mbs_path_desc* P = &sys->paths->path[path];
  o->n = 0;
  o->length = 0;
  o->speed = 0;
  for (int i = 0; i < P->npoint; i++) {
    const mbs_path_point_desc* q = &P->point[i];
    if (!point_active(st, q)) continue;
    const int k = o->n++;
    double p_B[3], pdot_B[3];
    point_in_body(sys, st, q, p_B, with_speed ? pdot_B : NULL, NULL);
    const int b = q->spec.body;
    o->index[k] = i;
    mbs_force_station(st, b, p_B, o->p + 3 * k, with_speed ? o->v + 3 * k : NULL);
    if (with_speed && q->spec.kind == MBS_PATH_POINT_MOVING) {
      double w[3];
      mbs_m33_vec(w, st->X_GB[b].R, pdot_B);
      mbs_v3_add(o->v + 3 * k, o->v + 3 * k, w);
    }
  }
  for (int k = 0; k + 1 < o->n; k++) {
    double d[3];
    mbs_v3_sub(d, o->p + 3 * (k + 1), o->p + 3 * k);
    const double len = mbs_v3_norm(d);
    o->length += len;
    if (len > 1e-14) mbs_v3_scale(o->dir + 3 * k, d, 1 / len);
    else memset(o->dir + 3 * k, 0, 3 * sizeof(double));
    if (with_speed) {
      double dv[3];
      mbs_v3_sub(dv, o->v + 3 * (k + 1), o->v + 3 * k);
      o->speed += mbs_v3_dot(o->dir + 3 * k, dv);
    }
  }
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
    const mbs_path_point_desc* q = &P->point[o->index[k]];
    const int b = q->spec.body;
    if (b > 0) mbs_force_add_point_force(st, F_body, b, o->p + 3 * k, F);
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
  mbs_path_eval(sys, st, path, &o, speed != NULL);
  if (length) *length = o.length;
  if (speed) *speed = o.speed;
  return MBS_OK;
}

int mbs_calc_path_points(const mbs_system* sys, mbs_state* st, int path, double* points_G,
                         int* n) {
  int rc = check_path(sys, st, path, __func__);
  if (!rc) rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  mbs_path_eval_out o;
  mbs_path_eval(sys, st, path, &o, 0);
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
  mbs_path_eval(sys, st, path, &o, 0);
  mbs_path_apply_tension(sys, st, path, &o, 1.0, F, f);
  rc = mbs_calc_jacobian_transpose_times(sys, st, F, r);
  for (int i = 0; rc == MBS_OK && i < sys->nu; i++) r[i] += f[i];
  mbs_stack_release(st, mark);
  return rc;
}
