// OpenSim's BodyKinematics analysis (analyze.h): the bodies' centers of mass and orientations,
// their velocities and accelerations, and the whole model's center of mass.
//   properties bodies: names, "all" (default: every body and the center of mass) and
//              "center_of_mass"; express_results_in_body_local_frame (default false)
//   files      <tool>_<name>_pos_global.sto ("Positions"), _vel_global.sto ("Velocities"),
//              _acc_global.sto ("Accelerations"); _vel_bodyLocal.sto and _acc_bodyLocal.sto
//              when expressed in the bodies' frames. Columns <body>_X, _Y, _Z, _Ox, _Oy, _Oz
//              per body, then center_of_mass_X, _Y, _Z
// As OpenSim 4's BodyKinematics::record: positions are the center of mass in Ground and the
// body's orientation as body-fixed X-Y-Z angles; velocities and accelerations are the center of
// mass's and the body's angular ones (from the model's forward dynamics at the State), in Ground
// or, with the flag, in the body's frame (the whole model's center of mass always in Ground);
// with in_degrees (default) angles, angular velocities and accelerations are in degrees.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "mbs/mbs.h"

typedef struct bk_data {
  int n;          // bodies recorded
  int* body;      // their indices in the System
  int com;        // record the whole model's center of mass
  int local;      // express in the bodies' frames
  int* com_param; // per System body: the parameter index of its mass center (-1: none)
  int* mass_param;
  int tp, tv, ta;
} bk_data;

static void bk_destroy(void* data) {
  bk_data* d = data;
  if (!d) return;
  free(d->body);
  free(d->com_param);
  free(d->mass_param);
  free(d);
}

static int bk_create(const mbs_analyze_context* c, mbs_analysis* a, void** data) {
  bk_data* d = calloc(1, sizeof(*d));
  *data = d;
  if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
  const mbs_system* sys = c->sys;
  const int nb = mbs_system_nbody(sys);
  mbs_setup_node* node = mbs_analysis_node(a);
  mbs_error err;
  mbs_error_clear(&err);
  if (mbs_setup_bool(c->setup, node, "express_results_in_body_local_frame", 0, &d->local, &err))
    return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  char **w = NULL, *buf = NULL;
  int nw = 0, rc = 0;
  char** labels = NULL;
  int nl = 0;
  if (mbs_analysis_words(c->setup, node, "bodies", &w, &buf, &nw))
    return mbs_analysis_fail(c, a, NULL, "out of memory");
  d->body = malloc(((size_t)nb + (size_t)nw + 1) * sizeof(int));
  d->com_param = malloc((size_t)nb * sizeof(int));
  d->mass_param = malloc((size_t)nb * sizeof(int));
  if (!d->body || !d->com_param || !d->mass_param) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  for (int b = 0; b < nb; b++) {
    char path[600];
    snprintf(path, sizeof(path), "/bodyset/%s/mass_center", mbs_body_name(sys, b));
    const mbs_param_info* p = mbs_system_find_param(sys, path);
    d->com_param[b] = p ? p->index : -1;
    snprintf(path, sizeof(path), "/bodyset/%s/mass", mbs_body_name(sys, b));
    p = mbs_system_find_param(sys, path);
    d->mass_param[b] = p ? p->index : -1;
  }
  for (int i = 0; i < nw || (nw == 0 && i == 0); i++) {
    const char* name = nw ? w[i] : "all";
    if (!strcmp(name, "all")) {  // every body and the center of mass, the rest ignored
      d->n = 0;
      for (int b = 1; b < nb; b++) d->body[d->n++] = b;
      d->com = 1;
      break;
    }
    if (!strcmp(name, "center_of_mass")) {
      d->com = 1;
      continue;
    }
    const int b = mbs_body_find(sys, name);
    if (b <= 0) {
      rc = mbs_analysis_fail(c, a, mbs_setup_child(c->setup, node, "bodies"),
                             "bodies: no body named '%s' in model '%s'%s", name,
                             mbs_osim_name(c->model), b == 0 ? " (ground does not move)" : "");
      goto done;
    }
    d->body[d->n++] = b;
  }
  if (d->n == 0 && !d->com) mbs_analysis_warn(c, a, NULL, "no bodies to record");
  nl = 6 * d->n + (d->com ? 3 : 0);
  labels = calloc((size_t)nl + 1, sizeof(char*));
  if (!labels) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  static const char* comp[6] = {"X", "Y", "Z", "Ox", "Oy", "Oz"};
  for (int i = 0; i < d->n; i++)
    for (int k = 0; k < 6; k++)
      labels[6 * i + k] = mbs_format_string("%s_%s", mbs_body_name(sys, d->body[i]), comp[k]);
  for (int k = 0; d->com && k < 3; k++)
    labels[6 * d->n + k] = mbs_format_string("center_of_mass_%s", comp[k]);
  for (int i = 0; i < nl; i++)
    if (!labels[i]) {
      rc = mbs_analysis_fail(c, a, NULL, "out of memory");
      goto done;
    }
  char desc[2048];
  snprintf(desc, sizeof(desc),
           "\nThis file contains the kinematics (positions and orientations,\nvelocities and "
           "angular velocities, or accelerations and angular accelerations)\nof the centers of "
           "mass of the body segments in model %s.\n\nBody segment orientations are described "
           "using body-fixed X-Y-Z Euler angles.\n\nAngular velocities and accelerations are "
           "expressed in the %s frame.\n\nUnits are S.I. units (seconds, meters, Newtons, "
           "...)\nIf the header above contains a line with 'inDegrees', this indicates whether "
           "rotational values are in degrees (yes) or radians (no).\n\n",
           mbs_osim_name(c->model), d->local ? "body-local" : "ground");
  const int deg = mbs_analysis_in_degrees(a);
  const char* sfx = d->local ? "bodyLocal" : "global";
  char sa[32], sv[32];
  snprintf(sa, sizeof(sa), "acc_%s", sfx);
  snprintf(sv, sizeof(sv), "vel_%s", sfx);
  if ((d->ta = mbs_analysis_add_table(c, a, sa, "Accelerations", desc, deg, nl,
                                      (const char* const*)labels)) < 0 ||
      (d->tv = mbs_analysis_add_table(c, a, sv, "Velocities", desc, deg, nl,
                                      (const char* const*)labels)) < 0 ||
      (d->tp = mbs_analysis_add_table(c, a, "pos_global", "Positions", desc, deg, nl,
                                      (const char* const*)labels)) < 0)
    rc = 1;
done:
  for (int i = 0; labels && i < nl; i++) free(labels[i]);
  free(labels);
  free(w);
  free(buf);
  return rc;
}

// body-fixed X-Y-Z angles of R (row-major), Simbody's convertRotationToBodyFixedXYZ
static void body_fixed_xyz(const double R[9], double a[3]) {
  const double s = R[2] > 1 ? 1 : R[2] < -1 ? -1 : R[2];
  a[1] = asin(s);
  if (fabs(s) < 1 - 1e-12) {
    a[0] = atan2(-R[5], R[8]);
    a[2] = atan2(-R[1], R[0]);
  } else {  // gimbal lock: the first and third axes line up; put it all in the first angle
    a[0] = atan2(R[7], R[4]);
    a[2] = 0;
  }
}

static int bk_record(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  bk_data* d = data;
  const mbs_system* sys = c->sys;
  if (mbs_realize_acceleration(sys, st))
    return mbs_analysis_fail(c, a, NULL, "accelerations at t = %.9g s: %s", mbs_state_time(st),
                             mbs_state_error(st)->message);
  const double* par = mbs_state_params(st);
  const double ds = mbs_analysis_in_degrees(a) ? 180 / M_PI : 1;
  double* P = mbs_analysis_row(a, d->tp);
  double* V = mbs_analysis_row(a, d->tv);
  double* A = mbs_analysis_row(a, d->ta);
  const int nb = mbs_system_nbody(sys);
  static const double zero[3] = {0, 0, 0};
  double M = 0, cp[3] = {0, 0, 0}, cv[3] = {0, 0, 0}, ca[3] = {0, 0, 0};
  // every body: its center of mass's position, velocity and acceleration in Ground, and its
  // orientation, angular velocity and acceleration; recorded bodies go to the rows
  for (int b = 1; b < nb; b++) {
    int slot = -1;
    for (int i = 0; i < d->n && slot < 0; i++)
      if (d->body[i] == b) slot = i;
    if (slot < 0 && !d->com) continue;
    const double* com = d->com_param[b] >= 0 ? par + d->com_param[b] : zero;
    double R[9], p0[3], Vb[6], Ab[6], r[3], p[3], v[3], acc[3], t[3];
    mbs_get_body_transform(sys, st, b, R, p0);
    mbs_get_body_velocity(sys, st, b, Vb);
    mbs_get_body_acceleration(sys, st, b, Ab);
    mbs_m33_vec(r, R, com);  // origin to center of mass, in Ground
    mbs_v3_add(p, p0, r);
    mbs_v3_cross(v, Vb, r);
    mbs_v3_add(v, v, Vb + 3);
    mbs_v3_cross(acc, Ab, r);  // a + alpha x r + w x (w x r)
    mbs_v3_add(acc, acc, Ab + 3);
    mbs_v3_cross(t, Vb, r);
    double wwr[3];
    mbs_v3_cross(wwr, Vb, t);
    mbs_v3_add(acc, acc, wwr);
    if (d->com) {
      const double mass = d->mass_param[b] >= 0 ? par[d->mass_param[b]] : 0;
      M += mass;
      mbs_v3_axpy(cp, mass, p);
      mbs_v3_axpy(cv, mass, v);
      mbs_v3_axpy(ca, mass, acc);
    }
    for (int i = 0; i < d->n; i++) {  // (a body may be listed more than once)
      if (d->body[i] != b) continue;
      double ang[3], w[3], al[3], vv[3], aa[3];
      body_fixed_xyz(R, ang);
      mbs_v3_copy(w, Vb);
      mbs_v3_copy(al, Ab);
      mbs_v3_copy(vv, v);
      mbs_v3_copy(aa, acc);
      if (d->local) {  // expressed in the body's frame
        mbs_m33_tvec(w, R, Vb);
        mbs_m33_tvec(al, R, Ab);
        mbs_m33_tvec(vv, R, v);
        mbs_m33_tvec(aa, R, acc);
      }
      for (int k = 0; k < 3; k++) {
        P[6 * i + k] = p[k];
        P[6 * i + 3 + k] = ang[k] * ds;
        V[6 * i + k] = vv[k];
        V[6 * i + 3 + k] = w[k] * ds;
        A[6 * i + k] = aa[k];
        A[6 * i + 3 + k] = al[k] * ds;
      }
    }
  }
  if (d->com)
    for (int k = 0; k < 3; k++) {
      P[6 * d->n + k] = cp[k] / M;
      V[6 * d->n + k] = cv[k] / M;
      A[6 * d->n + k] = ca[k] / M;
    }
  return 0;
}

const mbs_analysis_type mbs_analysis_body_kinematics = {
    "BodyKinematics", "bodies' centers of mass, orientations and their rates (_pos_global, ...)",
    bk_create, NULL, bk_record, NULL, bk_destroy};
