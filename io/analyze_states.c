// The states OpenSim's AnalyzeTool steps through (include/mbs/analyze_states.h).
//
// What OpenSim 4 does (opensim-core: AnalyzeTool::loadStatesFromFile and run, Model::
// formStateStorage, Storage::getStateIndex, SimbodyEngine::formCompleteStorages, Storage::pad and
// lowpassIIR) and how it is done here: the states file's columns are mapped to the model's state
// variables by name and missing ones take the default State's values; a coordinates file is
// padded, resampled and filtered with io/table_filter.c's functions (the InverseDynamicsTool's
// steps, the same Storage calls), its speeds are the derivatives of interpolating quintic
// splines at its rows.
#include "mbs/analyze_states.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/constraint.h"
#include "mbs/system.h"

void mbs_analyze_states_options_default(mbs_analyze_states_options* o) {
  memset(o, 0, sizeof(*o));
  o->lowpass_hz = -1;
}

static void warn(const mbs_analyze_states_options* o, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(const mbs_analyze_states_options* o, const char* fmt, ...) {
  if (!o->warn) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  o->warn(o->warn_user, buf);
}

// Storage::getStateIndex: the column of state `path` (an OpenSim 4 state name), by its full
// name, its name without leading path parts, or its OpenSim 3 name; -1 if none (column 0, time,
// never matches)
static int state_column(const mbs_table* t, const char* path) {
  int k = mbs_table_column(t, path);
  if (k > 0) return k;
  for (const char* p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
    if (p[1] && (k = mbs_table_column(t, p + 1)) > 0) return k;
  const char* last = strrchr(path, '/');
  if (!last || last == path) return -1;
  // the part before the last element, and that part's last element
  const size_t plen = (size_t)(last - path);
  const char* pb = path + plen;
  while (pb > path && pb[-1] != '/') pb--;
  const size_t blen = (size_t)(path + plen - pb);
  char buf[600];
  if (!strcmp(last + 1, "value")) {
    snprintf(buf, sizeof(buf), "%.*s", (int)blen, pb);
  } else if (!strcmp(last + 1, "speed")) {
    snprintf(buf, sizeof(buf), "%.*s_u", (int)blen, pb);
  } else {
    snprintf(buf, sizeof(buf), "%.*s.%s", (int)blen, pb, last + 1);
  }
  k = mbs_table_column(t, buf);
  return k > 0 ? k : -1;
}

// the labels of the states table (malloc'd strings in a NULL-free array of n)
static char** state_labels(const mbs_osim_model* m, int* n) {
  const mbs_system* sys = mbs_osim_system(m);
  const int nc = mbs_osim_ncoordinate(m), nz = mbs_system_nz(sys);
  *n = 1 + 2 * nc + nz;
  char** l = calloc((size_t)*n, sizeof(char*));
  if (!l) return NULL;
  int ok = (l[0] = strdup("time")) != NULL;
  for (int i = 0; ok && i < nc; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    ok = (l[1 + i] = mbs_format_string("/jointset/%s/%s/value", c->joint, c->name)) &&
         (l[1 + nc + i] = mbs_format_string("/jointset/%s/%s/speed", c->joint, c->name));
  }
  for (int i = 0; ok && i < nz; i++) {
    char zn[512];
    mbs_system_z_name(sys, i, zn, sizeof(zn));
    ok = (l[1 + 2 * nc + i] = mbs_format_string("/forceset/%s", zn)) != NULL;
  }
  if (!ok) {
    for (int i = 0; i < *n; i++) free(l[i]);
    free(l);
    return NULL;
  }
  return l;
}

static void free_labels(char** l, int n) {
  for (int i = 0; l && i < n; i++) free(l[i]);
  free(l);
}

// a new states table of nrow rows for model m (labels set, values zero)
static int new_states(const mbs_osim_model* m, const char* name, int nrow, mbs_table** out,
                      mbs_error* err) {
  int n = 0;
  char** l = state_labels(m, &n);
  if (!l) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "analyze", "out of memory");
  const int rc = mbs_table_create(out, name, nrow, n, (const char* const*)l, err);
  free_labels(l, n);
  return rc;
}

// "a, b, c and 4 more"
static void name_list(char* buf, size_t size, const char* const* names, int n) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < n && i < 4; i++)
    len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", i ? ", " : "",
                            names[i]);
  if (n > 4 && len < size) snprintf(buf + len, size - len, " and %d more", n - 4);
}

static int times_increase(const mbs_table* t, int strict, const char* file, mbs_error* err) {
  for (int r = 0; r < t->nrow; r++) {
    const double x = mbs_table_get(t, r, 0);
    const double prev = r > 0 ? mbs_table_get(t, r - 1, 0) : -INFINITY;
    if (!isfinite(x) || x < prev || (strict && x == prev))
      return MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: data row %d: time %.9g %s", file, r + 1, x,
                      !isfinite(x) ? "is not a number" : "does not increase");
  }
  return MBS_OK;
}

//---------------------------------- from a states file ----------------------------------------

static int from_states_file(const mbs_osim_model* m, const mbs_state* defaults,
                            const mbs_analyze_states_options* o, mbs_table** out,
                            mbs_error* err) {
  const char* file = o->states_file;
  mbs_table* raw = NULL;
  int rc = mbs_table_read(file, &raw, err);
  if (rc) return rc;
  mbs_table* t = NULL;
  int* src = NULL;
  const char** missing = NULL;
  if (raw->nmarkers > 0 || raw->nrow < 1) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: states_file %s", file,
                  raw->nmarkers > 0 ? "is a marker file" : "has no rows");
    goto done;
  }
  if ((rc = times_increase(raw, 0, file, err))) goto done;
  if ((rc = new_states(m, "states", raw->nrow, &t, err))) goto done;
  const mbs_system* sys = mbs_osim_system(m);
  const int nc = mbs_osim_ncoordinate(m), ncol = t->ncol;
  src = malloc((size_t)ncol * sizeof(int));
  missing = malloc((size_t)ncol * sizeof(char*));
  if (!src || !missing) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, file, "%s: out of memory", file);
    goto done;
  }
  int nfound = 0, nmissing = 0;
  for (int k = 1; k < ncol; k++) {
    src[k] = state_column(raw, t->labels[k]);
    if (src[k] > 0) nfound++;
    else missing[nmissing++] = t->labels[k];
  }
  if (nfound == 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: no column names a state of model '%s' (the "
                  "first column after time is '%s'; states are named %s or %s)", file,
                  mbs_osim_name(m), raw->ncol > 1 ? raw->labels[1] : "(none)",
                  ncol > 1 ? t->labels[1] : "/jointset/<joint>/<coordinate>/value",
                  "<coordinate>");
    goto done;
  }
  if (nmissing > 0) {
    char names[400];
    name_list(names, sizeof(names), missing, nmissing);
    warn(o, "%s: %d of the model's %d states have no column (%s); they keep their default "
            "values, as OpenSim does", file, nmissing, ncol - 1, names);
  }
  double* q0 = malloc(2 * ((size_t)nc + 1) * sizeof(double));
  if (!q0) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, file, "%s: out of memory", file);
    goto done;
  }
  double* u0 = q0 + nc + 1;
  mbs_osim_get_coordinates(m, defaults, q0, u0);
  const double* z0 = mbs_state_z(defaults);
  for (int r = 0; r < raw->nrow; r++) {
    double* row = t->data + (size_t)r * ncol;
    row[0] = mbs_table_get(raw, r, 0);
    for (int k = 1; k < ncol; k++) {
      double dflt;
      if (k <= nc) dflt = q0[k - 1];
      else if (k <= 2 * nc) dflt = u0[k - 1 - nc];
      else dflt = z0[k - 1 - 2 * nc];
      row[k] = src[k] > 0 ? mbs_table_get(raw, r, src[k]) : dflt;
    }
    if (raw->in_degrees)
      for (int i = 0; i < nc; i++) {
        if (mbs_osim_coordinate_info(m, i)->motion != MBS_OSIM_ROTATIONAL) continue;
        if (src[1 + i] > 0) row[1 + i] *= M_PI / 180;
        if (src[1 + nc + i] > 0) row[1 + nc + i] *= M_PI / 180;
      }
  }
  free(q0);
  (void)sys;
done:
  free(src);
  free(missing);
  mbs_table_free(raw);
  if (rc) {
    mbs_table_free(t);
    return rc;
  }
  *out = t;
  return MBS_OK;
}

//---------------------------------- from a coordinates file -----------------------------------

// pad, resample and filter as Storage::pad(nrow / 2) and Storage::lowpassIIR
static int lowpass(mbs_table** tp, double hz, const mbs_analyze_states_options* o,
                   const char* file, mbs_error* err) {
  if (!(hz > 0) || !isfinite(hz))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, file, "lowpass_cutoff_frequency_for_coordinates %g "
                    "Hz cannot filter (give a positive cutoff, or a negative value for none)", hz);
  mbs_table *p = NULL, *g = NULL;
  int rc = mbs_table_pad(*tp, (*tp)->nrow / 2, &p, err);
  if (rc) return rc;
  mbs_table_free(*tp);
  *tp = p;
  const double dtmin = mbs_table_min_step(p);
  const double avg = (mbs_table_get(p, p->nrow - 1, 0) - mbs_table_get(p, 0, 0)) / (p->nrow - 1);
  if (avg - dtmin > DBL_EPSILON) {
    if ((rc = mbs_table_resample(p, dtmin, &g, err))) return rc;
    mbs_table_free(*tp);
    *tp = g;
  }
  mbs_table* t = *tp;
  const double T = (mbs_table_get(t, t->nrow - 1, 0) - mbs_table_get(t, 0, 0)) / (t->nrow - 1);
  double fc = hz;
  if (fc >= 0.5 / T) {
    fc = 0.49 / T;
    warn(o, "lowpass_cutoff_frequency_for_coordinates %g Hz is not below half the sampling "
            "rate of %s (%g Hz); %g Hz is used, as OpenSim does", hz, file, 1 / T, fc);
  }
  return mbs_table_lowpass(t, fc, NULL, 0, 0, err);
}

static int from_coordinates_file(const mbs_osim_model* m, const mbs_state* defaults,
                                 const mbs_analyze_states_options* o, mbs_table** out,
                                 mbs_error* err) {
  const char* file = o->coordinates_file;
  mbs_table *raw = NULL, *q = NULL, *t = NULL, *sp = NULL;
  mbs_table_spline* spline = NULL;
  int* col = NULL;    // per coordinate: column of q (>= 1) or 0
  int* scol = NULL;   // per coordinate: column of the speeds file or 0
  const char** missing = NULL;
  const char** labels = NULL;
  double *v = NULL, *d1 = NULL;
  int rc = mbs_table_read(file, &raw, err);
  if (rc) return rc;
  const mbs_system* sys = mbs_osim_system(m);
  const int nc = mbs_osim_ncoordinate(m), nz = mbs_system_nz(sys);
  col = calloc((size_t)nc + 1, sizeof(int));
  scol = calloc((size_t)nc + 1, sizeof(int));
  missing = malloc(((size_t)nc + 1) * sizeof(char*));
  labels = malloc(((size_t)nc + 2) * sizeof(char*));
  if (!col || !scol || !missing || !labels) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, file, "%s: out of memory", file);
    goto done;
  }
  if (raw->nmarkers > 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: coordinates_file is a marker file; give the "
                  "coordinates (.mot or .sto)", file);
    goto done;
  }
  // the coordinates found, in model order
  int nfound = 0, nmissing = 0;
  labels[0] = "time";
  int* src = scol;  // (reused below for the speeds; here the raw columns)
  for (int i = 0; i < nc; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    char path[600];
    snprintf(path, sizeof(path), "/jointset/%s/%s/value", c->joint, c->name);
    const int k = state_column(raw, path);
    if (k < 0) {
      missing[nmissing++] = c->name;
      continue;
    }
    col[i] = ++nfound;
    src[nfound] = k;
    labels[nfound] = c->name;
  }
  if (nfound == 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: no column names a coordinate of model '%s' "
                  "(the first column after time is '%s')", file, mbs_osim_name(m),
                  raw->ncol > 1 ? raw->labels[1] : "(none)");
    goto done;
  }
  if (nmissing > 0) {
    char names[400];
    name_list(names, sizeof(names), missing, nmissing);
    warn(o, "%s: no column for %d of the model's %d coordinates (%s); they keep their default "
            "values", file, nmissing, nc, names);
  }
  if (raw->nrow < 6) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: %d rows; OpenSim's quintic splines need at "
                  "least 6", file, raw->nrow);
    goto done;
  }
  if ((rc = times_increase(raw, 1, file, err))) goto done;
  // A row closer to the previous one than a billionth of the mean step (a forward
  // simulation's last time, written twice with values that repeat the previous row's to
  // rounding) is dropped: as a knot it would make the splines' derivatives explode (their
  // equations divide by powers of the step) and the filter's resampling step vanish.
  const double tol = 1e-9 * (mbs_table_get(raw, raw->nrow - 1, 0) - mbs_table_get(raw, 0, 0)) /
                     (raw->nrow - 1);
  int nkeep = 0;
  for (int r = 0; r < raw->nrow; r++)
    nkeep += r == 0 || mbs_table_get(raw, r, 0) - mbs_table_get(raw, r - 1, 0) > tol;
  if ((rc = mbs_table_create(&q, raw->name, nkeep, nfound + 1, labels, err))) goto done;
  for (int r = 0, kept = 0; r < raw->nrow; r++) {
    if (r > 0 && mbs_table_get(raw, r, 0) - mbs_table_get(raw, r - 1, 0) <= tol) {
      warn(o, "%s: data row %d (time %.17g) is %.3g s after the previous row; it is left out "
              "(its values repeat the previous row's)", file, r + 1, mbs_table_get(raw, r, 0),
           mbs_table_get(raw, r, 0) - mbs_table_get(raw, r - 1, 0));
      continue;
    }
    double* row = q->data + (size_t)kept++ * q->ncol;
    row[0] = mbs_table_get(raw, r, 0);
    for (int k = 1; k <= nfound; k++) {
      row[k] = mbs_table_get(raw, r, src[k]);
      if (!isfinite(row[k])) {
        rc = MBS_FAIL(err, MBS_ERR_NAN, file, "%s: data row %d (time %.9g): coordinate '%s' is "
                      "%g", file, r + 1, row[0], labels[k], row[k]);
        goto done;
      }
    }
  }
  if (q->nrow < 6) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: %d distinct times; OpenSim's quintic splines "
                  "need at least 6", file, q->nrow);
    goto done;
  }
  memset(scol, 0, ((size_t)nc + 1) * sizeof(int));
  if (o->lowpass_hz >= 0 && (rc = lowpass(&q, o->lowpass_hz, o, file, err))) {
    char msg[MBS_ERROR_MESSAGE_LEN];
    snprintf(msg, sizeof(msg), "%s", err->message);
    rc = MBS_FAIL(err, rc, file, "%s: filtering the coordinates: %s", file, msg);
    goto done;
  }
  if (raw->in_degrees)
    for (int i = 0; i < nc; i++) {
      if (!col[i] || mbs_osim_coordinate_info(m, i)->motion != MBS_OSIM_ROTATIONAL) continue;
      for (int r = 0; r < q->nrow; r++) q->data[(size_t)r * q->ncol + col[i]] *= M_PI / 180;
    }
  if ((rc = mbs_table_spline_create(q, &spline, err))) {
    char msg[MBS_ERROR_MESSAGE_LEN];
    snprintf(msg, sizeof(msg), "%s", err->message);
    rc = MBS_FAIL(err, rc, file, "%s: splines of the coordinates: %s", file, msg);
    goto done;
  }
  // speeds from a file: columns by their state labels, OpenSim 3's <coordinate>_u, or the
  // coordinate's own name
  if (o->speeds_file) {
    if ((rc = mbs_table_read(o->speeds_file, &sp, err))) goto done;
    if (sp->nrow < 1 || (rc = times_increase(sp, 1, o->speeds_file, err))) {
      if (!rc)
        rc = MBS_FAIL(err, MBS_ERR_PARSE, o->speeds_file, "%s: speeds_file has no rows",
                      o->speeds_file);
      goto done;
    }
    int ns = 0;
    nmissing = 0;
    for (int i = 0; i < nc; i++) {
      const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
      char path[600];
      snprintf(path, sizeof(path), "/jointset/%s/%s/speed", c->joint, c->name);
      int k = state_column(sp, path);
      if (k < 0) k = mbs_table_column(sp, c->name);
      if (k > 0) {
        scol[i] = k;
        ns++;
      } else {
        missing[nmissing++] = c->name;
      }
    }
    if (ns == 0) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, o->speeds_file, "%s: no column names a speed of model "
                    "'%s' (the first column after time is '%s')", o->speeds_file,
                    mbs_osim_name(m), sp->ncol > 1 ? sp->labels[1] : "(none)");
      goto done;
    }
    if (nmissing > 0) {
      char names[400];
      name_list(names, sizeof(names), missing, nmissing);
      warn(o, "%s: no column for the speeds of %d coordinates (%s); their speeds are the "
              "derivatives of the coordinates' splines", o->speeds_file, nmissing, names);
    }
  }
  // the states table: q at the rows, u = q' there (or the speeds file's), z the defaults'
  if ((rc = new_states(m, "states", q->nrow, &t, err))) goto done;
  v = malloc(((size_t)q->ncol + 1) * sizeof(double));
  d1 = malloc(((size_t)q->ncol + 1) * sizeof(double));
  if (!v || !d1) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, file, "%s: out of memory", file);
    goto done;
  }
  const double* z0 = mbs_state_z(defaults);
  for (int r = 0; r < q->nrow; r++) {
    const double time = mbs_table_get(q, r, 0);
    double* row = t->data + (size_t)r * t->ncol;
    row[0] = time;
    mbs_table_spline_eval_all(spline, time, v, d1, NULL);
    // the speeds file at this time, linearly interpolated (its ends held)
    int s1 = 0;
    double w = 0;
    if (sp) {
      while (s1 + 1 < sp->nrow && mbs_table_get(sp, s1 + 1, 0) <= time) s1++;
      if (s1 + 1 < sp->nrow && time > mbs_table_get(sp, s1, 0))
        w = (time - mbs_table_get(sp, s1, 0)) /
            (mbs_table_get(sp, s1 + 1, 0) - mbs_table_get(sp, s1, 0));
    }
    for (int i = 0; i < nc; i++) {
      const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
      row[1 + i] = col[i] ? mbs_table_get(q, r, col[i]) : c->default_value;
      row[1 + nc + i] = col[i] ? d1[col[i]] : c->default_speed;
      if (scol[i]) {
        const double a = mbs_table_get(sp, s1, scol[i]);
        const double b = s1 + 1 < sp->nrow ? mbs_table_get(sp, s1 + 1, scol[i]) : a;
        double s = a + w * (b - a);
        if (sp->in_degrees && c->motion == MBS_OSIM_ROTATIONAL) s *= M_PI / 180;
        row[1 + nc + i] = s;
      }
    }
    for (int k = 0; k < nz; k++) row[1 + 2 * nc + k] = z0[k];
  }
done:
  free(col);
  free(scol);
  free(missing);
  free(labels);
  free(v);
  free(d1);
  mbs_table_spline_free(spline);
  mbs_table_free(raw);
  mbs_table_free(q);
  mbs_table_free(sp);
  if (rc) {
    mbs_table_free(t);
    return rc;
  }
  *out = t;
  return MBS_OK;
}

int mbs_analyze_states_read(const mbs_osim_model* m, const mbs_state* defaults,
                            const mbs_analyze_states_options* o, mbs_table** out,
                            mbs_error* err) {
  if (out) *out = NULL;
  if (!m || !defaults || !o || !out)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "analyze", "mbs_analyze_states_read: missing argument");
  if (o->states_file) return from_states_file(m, defaults, o, out, err);
  if (o->coordinates_file) return from_coordinates_file(m, defaults, o, out, err);
  return MBS_FAIL(err, MBS_ERR_ARGUMENT, "analyze", "either a states file or a coordinates file "
                  "must be given");
}

int mbs_analyze_states_find(const mbs_table* t, double time) {
  int r = 0;
  for (int i = 0; i < t->nrow && mbs_table_get(t, i, 0) <= time; i++) r = i;
  return r;
}

int mbs_analyze_states_set(const mbs_osim_model* m, mbs_state* st, const mbs_table* t, int row) {
  const mbs_system* sys = mbs_osim_system(m);
  const int nc = mbs_osim_ncoordinate(m), nz = mbs_system_nz(sys);
  const double* r = t->data + (size_t)row * t->ncol;
  mbs_state_set_time(st, r[0]);
  int rc = mbs_osim_set_coordinates(m, st, r + 1, r + 1 + nc);
  if (rc) return rc;
  double* z = mbs_state_upd_z(st);
  for (int k = 0; k < nz; k++) z[k] = r[1 + 2 * nc + k];
  if (mbs_system_nconstraint(sys) > 0) return mbs_assemble(sys, st, NULL);
  return MBS_OK;
}
