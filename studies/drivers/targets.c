// Fit and calibration targets (targets.h).
#include "targets.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/results.h"
#include "mbs/table.h"

static const char* const target_keys[] = {"trajectory", "coordinate", "component", "data",
                                          "column",     "sample",     "from",      "to",
                                          "weight",     "sigma",      "scalar",    "value"};
#define NKEYS (int)(sizeof(target_keys) / sizeof(target_keys[0]))

static int read_one(const mbs_spec_section* it, fit_target* t, mbs_error* err) {
  int rc = mbs_spec_section_keys(it, target_keys, NKEYS, err);
  if (rc) return rc;
  t->line = it->line;
  t->comp_index = -1;
  const int traj = mbs_spec_section_has(it, "trajectory");
  const int scal = mbs_spec_section_has(it, "scalar");
  if (traj == scal)
    return mbs_spec_section_fail(it, NULL, MBS_ERR_PARSE, err,
                                 "give either trajectory (with data) or scalar (with value)");
  t->is_scalar = scal;
  rc = mbs_spec_section_string(it, scal ? "scalar" : "trajectory", NULL, 0, &t->what, err);
  if (!rc && mbs_spec_section_has(it, "weight") && mbs_spec_section_has(it, "sigma"))
    rc = mbs_spec_section_fail(it, "sigma", MBS_ERR_PARSE, err, "give weight or sigma, not both");
  double sigma = NAN;
  if (!rc) rc = mbs_spec_section_number(it, "weight", 1, 0, 1, NAN, 0, &t->weight, err);
  if (!rc && mbs_spec_section_has(it, "sigma")) {
    rc = mbs_spec_section_number(it, "sigma", NAN, 0, 1, NAN, 0, &sigma, err);
    t->weight = 1 / sigma;
  }
  if (rc) return rc;
  if (scal) {
    static const char* const bad[] = {"coordinate", "component", "data", "column", "sample",
                                      "from", "to"};
    for (int k = 0; k < 7; k++)
      if (mbs_spec_section_has(it, bad[k]))
        return mbs_spec_section_fail(it, bad[k], MBS_ERR_PARSE, err,
                                     "belongs to trajectory targets, not to a scalar");
    return mbs_spec_section_number(it, "value", NAN, NAN, 0, NAN, 0, &t->value, err);
  }
  if (mbs_spec_section_has(it, "value"))
    return mbs_spec_section_fail(it, "value", MBS_ERR_PARSE, err,
                                 "a trajectory target takes its values from data");
  rc = mbs_spec_section_string(it, "data", NULL, 1, &t->data, err);
  if (!rc && mbs_spec_section_has(it, "coordinate"))
    rc = mbs_spec_section_string(it, "coordinate", NULL, 0, &t->coordinate, err);
  if (!rc && mbs_spec_section_has(it, "component")) {
    // a number or a name
    if (mbs_spec_section_integer(it, "component", 0, 0, 1000000, &t->comp_index, err)) {
      t->comp_index = -1;
      rc = mbs_spec_section_string(it, "component", NULL, 0, &t->comp_name, err);
    }
  }
  if (!rc && mbs_spec_section_has(it, "column"))
    rc = mbs_spec_section_string(it, "column", NULL, 0, &t->column, err);
  if (!rc) rc = mbs_spec_section_integer(it, "sample", 0, 0, LONG_MAX, &t->sample, err);
  if (!rc) rc = mbs_spec_section_number(it, "from", -INFINITY, NAN, 0, NAN, 0, &t->from, err);
  if (!rc) rc = mbs_spec_section_number(it, "to", INFINITY, NAN, 0, NAN, 0, &t->to, err);
  if (!rc && !(t->to > t->from))
    rc = mbs_spec_section_fail(it, "to", MBS_ERR_ARGUMENT, err, "%g is not after from (%g)",
                               t->to, t->from);
  return rc;
}

int targets_read(const mbs_spec_section* s, fit_targets* T, mbs_error* err) {
  memset(T, 0, sizeof(*T));
  int n = 0;
  int rc = mbs_spec_section_count(s, "targets", &n, err);
  if (rc) return rc;
  if (n == 0)
    return mbs_spec_section_fail(s, "targets", MBS_ERR_PARSE, err,
                                 "missing (required: what the simulations are compared with)");
  T->t = calloc((size_t)n, sizeof(*T->t));
  if (!T->t) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  T->n = n;
  for (int i = 0; i < n && !rc; i++) {
    mbs_spec_section it;
    rc = mbs_spec_section_item(s, "targets", i, &it, err);
    if (!rc) rc = read_one(&it, &T->t[i], err);
  }
  return rc;
}

void targets_free(fit_targets* T) {
  for (int i = 0; i < T->n; i++) {
    fit_target* t = &T->t[i];
    free(t->what);
    free(t->coordinate);
    free(t->comp_name);
    free(t->data);
    free(t->column);
    free(t->ref);
  }
  free(T->t);
  memset(T, 0, sizeof(*T));
}

static int ends_with(const char* s, const char* suffix) {
  const size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

// linear interpolation of (time, v) at the frames
static void at_frames(const mbs_plan* P, const fit_target* t, const double* time,
                      const double* v, long n, double* ref) {
  for (int k = 0; k < P->nframes; k++) {
    const double tk = P->times[k];
    ref[k] = NAN;
    if (tk < t->from - 1e-12 || tk > t->to + 1e-12 || n < 1) continue;
    if (tk < time[0] - 1e-12 || tk > time[n - 1] + 1e-12) continue;
    long lo = 0, hi = n - 1;
    while (hi - lo > 1) {
      const long mid = (lo + hi) / 2;
      if (time[mid] <= tk) lo = mid;
      else hi = mid;
    }
    if (n == 1 || time[hi] == time[lo]) {
      ref[k] = v[lo];
    } else {
      double a = (tk - time[lo]) / (time[hi] - time[lo]);
      if (a < 0) a = 0;
      if (a > 1) a = 1;
      ref[k] = v[lo] + a * (v[hi] - v[lo]);
    }
  }
}

// reference data from a storage file
static int from_table(fit_target* t, const mbs_plan* P, const mbs_quantity_plan* q,
                      const mbs_spec_section* it, mbs_error* err) {
  mbs_table* tab = NULL;
  mbs_error e;
  if (mbs_table_read(t->data, &tab, &e))
    return mbs_spec_section_fail(it, "data", e.code, err, "%s", e.message);
  int col = -1;
  char want[600];
  if (t->column) {
    col = mbs_table_column(tab, t->column);
    snprintf(want, sizeof(want), "'%s'", t->column);
  } else {
    const char* name = q->comps[t->comp];
    col = mbs_table_column(tab, name);
    const char* tail = q->kind == MBS_Q_U ? "speed" : "value";
    char suffix[300];
    snprintf(suffix, sizeof(suffix), "/%s/%s", name, tail);
    for (int c = 1; c < tab->ncol && col < 0; c++)
      if (ends_with(tab->labels[c], suffix)) col = c;
    snprintf(want, sizeof(want), "'%s' or a label ending in '%s'", name, suffix);
  }
  if (col < 1) {
    mbs_table_free(tab);
    return mbs_spec_section_fail(it, "column", MBS_ERR_UNKNOWN_NAME, err,
                                 "%s has no column %s", t->data, want);
  }
  const long n = tab->nrow;
  double* time = malloc((size_t)(n + 1) * sizeof(double));
  double* v = malloc((size_t)(n + 1) * sizeof(double));
  if (!time || !v) {
    free(time);
    free(v);
    mbs_table_free(tab);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  }
  // degrees in the file for a rotational coordinate
  double f = 1;
  if (tab->in_degrees && (q->kind == MBS_Q_Q || q->kind == MBS_Q_U) &&
      mbs_osim_coordinate_info(P->om, t->comp)->motion == MBS_OSIM_ROTATIONAL)
    f = 3.14159265358979323846 / 180;
  for (long r = 0; r < n; r++) {
    time[r] = mbs_table_get(tab, (int)r, 0);
    v[r] = f * mbs_table_get(tab, (int)r, col);
  }
  at_frames(P, t, time, v, n, t->ref);
  free(time);
  free(v);
  mbs_table_free(tab);
  return MBS_OK;
}

// reference data from another study's file: a sample's trajectory
static int from_study(fit_target* t, const mbs_plan* P, const mbs_quantity_plan* q,
                      const mbs_spec_section* it, mbs_error* err) {
  mbs_error e;
  mbs_results* r = mbs_results_open_read(t->data, &e);
  if (!r) return mbs_spec_section_fail(it, "data", e.code, err, "%s", e.message);
  char ds[400], cs[420];
  snprintf(ds, sizeof(ds), "/trajectories/%s", q->name);
  snprintf(cs, sizeof(cs), "/trajectories/%s_components", q->name);
  double* time = NULL;
  double* all = NULL;
  char** comps = NULL;
  int ncomp = 0, rank = 0, rc = MBS_OK;
  long dims[4];
  if (mbs_results_read(r, "/time", &time, dims, &rank, &e) ||
      mbs_results_read_strings(r, cs, &comps, &ncomp, &e) ||
      mbs_results_read(r, ds, &all, dims, &rank, &e)) {
    rc = mbs_spec_section_fail(it, "data", e.code, err, "%s", e.message);
  } else if (rank != 3 || t->sample >= dims[0]) {
    rc = mbs_spec_section_fail(it, "sample", MBS_ERR_ARGUMENT, err,
                               "%s holds %ld samples; sample %ld is not among them", t->data,
                               dims[0], t->sample);
  } else {
    const char* want = t->column ? t->column : q->comps[t->comp];
    int c = -1;
    for (int k = 0; k < ncomp && c < 0; k++)
      if (!strcmp(comps[k], want)) c = k;
    if (c < 0) {
      rc = mbs_spec_section_fail(it, "column", MBS_ERR_UNKNOWN_NAME, err,
                                 "%s: %s has no component '%s'", t->data, ds, want);
    } else {
      const long F = dims[1], C = dims[2];
      double* v = malloc((size_t)(F + 1) * sizeof(double));
      if (!v) {
        rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      } else {
        for (long k = 0; k < F; k++) v[k] = all[(t->sample * F + k) * C + c];
        at_frames(P, t, time, v, F, t->ref);
        free(v);
      }
    }
  }
  for (int k = 0; k < ncomp; k++) free(comps[k]);
  free(comps);
  free(time);
  free(all);
  mbs_error ce;
  mbs_results_close(r, &ce);
  return rc;
}

int targets_plan(fit_targets* T, mbs_plan* P, const mbs_spec_section* s, mbs_error* err) {
  T->m = 0;
  for (int i = 0; i < T->n; i++) {
    fit_target* t = &T->t[i];
    mbs_spec_section it;
    int rc = mbs_spec_section_item(s, "targets", i, &it, err);
    if (rc) return rc;
    if (t->is_scalar) {
      t->scalar = -1;  // resolved in targets_resolve_scalars, once the scalars are planned
      t->nused = 1;
      T->m += 1;
      continue;
    }
    mbs_error qe;
    const int k = mbs_plan_require_quantity(P, t->what, &qe);
    if (k < 0) return mbs_spec_section_fail(&it, "trajectory", k, err, "%s", qe.message);
    t->quantity = k;
    const mbs_quantity_plan* q = &P->quant[k];
    t->comp = -1;
    if (q->kind == MBS_Q_Q || q->kind == MBS_Q_U) {
      if (!t->coordinate)
        return mbs_spec_section_fail(&it, NULL, MBS_ERR_PARSE, err,
                                     "coordinate: missing (required for %s)", t->what);
      t->comp = mbs_osim_find_coordinate(P->om, t->coordinate);
      if (t->comp < 0)
        return mbs_spec_section_fail(&it, "coordinate", MBS_ERR_UNKNOWN_NAME, err,
                                     "'%s' is not a coordinate of the model", t->coordinate);
    } else {
      if (t->comp_index >= 0 && t->comp_index < q->ncomp) t->comp = (int)t->comp_index;
      for (int c = 0; t->comp_name && c < q->ncomp; c++)
        if (!strcmp(q->comps[c], t->comp_name)) t->comp = c;
      if (t->comp < 0)
        return mbs_spec_section_fail(&it, "component", MBS_ERR_ARGUMENT, err,
                                     "give the component of %s (0 .. %d or x, y, z)", t->what,
                                     q->ncomp - 1);
    }
    t->ref = malloc((size_t)P->nframes * sizeof(double));
    if (!t->ref) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    rc = ends_with(t->data, ".h5") || ends_with(t->data, ".hdf5")
             ? from_study(t, P, q, &it, err)
             : from_table(t, P, q, &it, err);
    if (rc) return rc;
    t->nused = 0;
    for (int f = 0; f < P->nframes; f++) t->nused += !isnan(t->ref[f]);
    if (t->nused == 0)
      return mbs_spec_section_fail(&it, "data", MBS_ERR_ARGUMENT, err,
                                   "%s covers none of the study's frames (%g .. %g s) within "
                                   "from .. to", t->data, P->times[0],
                                   P->times[P->nframes - 1]);
    T->m += t->nused;
  }
  return MBS_OK;
}

// scalar targets: by name, once the plan's scalars exist (the first residual computation)
static int scalar_index(const fit_target* t, const mbs_plan* P) {
  return t->scalar >= 0 ? t->scalar : mbs_plan_find_scalar(P, t->what);
}

void targets_residuals(const fit_targets* T, const mbs_plan* P, const double* scalars,
                       const double* traj, double* r) {
  int k = 0;
  for (int i = 0; i < T->n; i++) {
    const fit_target* t = &T->t[i];
    if (t->is_scalar) {
      const int s = scalar_index(t, P);
      r[k++] = s >= 0 ? t->weight * (scalars[s] - t->value) : NAN;
      continue;
    }
    const mbs_quantity_plan* q = &P->quant[t->quantity];
    for (int f = 0; f < P->nframes; f++) {
      if (isnan(t->ref[f])) continue;
      const double v = traj[q->offset + (long)f * q->ncomp + t->comp];
      r[k++] = t->weight * (v - t->ref[f]);
    }
  }
}

int targets_labels(const fit_targets* T, const mbs_plan* P, char** labels) {
  int k = 0;
  for (int i = 0; i < T->n; i++) {
    const fit_target* t = &T->t[i];
    if (t->is_scalar) {
      if (!(labels[k++] = mbs_format_string("%s", t->what))) return MBS_ERR_NO_MEMORY;
      continue;
    }
    const mbs_quantity_plan* q = &P->quant[t->quantity];
    for (int f = 0; f < P->nframes; f++) {
      if (isnan(t->ref[f])) continue;
      if (!(labels[k++] = mbs_format_string("%s/%s@%.6g", q->name, q->comps[t->comp],
                                            P->times[f])))
        return MBS_ERR_NO_MEMORY;
    }
  }
  return MBS_OK;
}
