// OpenSim's Kinematics analysis (analyze.h): the coordinates' values, speeds and accelerations.
//   property   coordinates: names, or "all" (default) for every coordinate in the model's order
//   files      <tool>_<name>_q.sto ("Coordinates"), _u.sto ("Speeds"), _dudt.sto
//              ("Accelerations"); columns time and the coordinates
// As OpenSim 4's Kinematics::record: the accelerations are the model's forward dynamics at the
// State (its forces, controls and loads; Stage Acceleration), not derivatives of the data; with
// in_degrees (default) the values of the coordinates OpenSim calls rotational are converted to
// degrees and the files say inDegrees=yes.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "mbs/mbs.h"

typedef struct kin_data {
  int n;           // coordinates recorded
  int* coord;      // their model indices
  int nc;          // the model's coordinates
  double *q, *u, *a;  // work arrays (nc each)
  int tq, tu, ta;  // tables
} kin_data;

static void kin_destroy(void* data) {
  kin_data* d = data;
  if (!d) return;
  free(d->coord);
  free(d->q);
  free(d);
}

static int kin_create(const mbs_analyze_context* c, mbs_analysis* a, void** data) {
  kin_data* d = calloc(1, sizeof(*d));
  *data = d;
  if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
  const mbs_osim_model* m = c->model;
  d->nc = mbs_osim_ncoordinate(m);
  char **w = NULL, *buf = NULL;
  int nw = 0;
  if (mbs_analysis_words(c->setup, mbs_analysis_node(a), "coordinates", &w, &buf, &nw))
    return mbs_analysis_fail(c, a, NULL, "out of memory");
  d->coord = malloc(((size_t)d->nc + (size_t)nw + 1) * sizeof(int));
  d->q = malloc((3 * (size_t)d->nc + 1) * sizeof(double));
  const char** labels = malloc(((size_t)d->nc + (size_t)nw + 1) * sizeof(char*));
  int rc = 0;
  if (!d->coord || !d->q || !labels) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  d->u = d->q + d->nc;
  d->a = d->u + d->nc;
  for (int i = 0; i < nw || (nw == 0 && i == 0); i++) {
    const char* name = nw ? w[i] : "all";
    if (!strcmp(name, "all")) {  // OpenSim: every coordinate, the rest of the list ignored
      d->n = 0;
      for (int k = 0; k < d->nc; k++) d->coord[d->n++] = k;
      break;
    }
    const int k = mbs_osim_find_coordinate(m, name);
    if (k < 0) {
      rc = mbs_analysis_fail(c, a, mbs_setup_child(c->setup, mbs_analysis_node(a), "coordinates"),
                             "coordinates: no coordinate named '%s' in model '%s'", name,
                             mbs_osim_name(m));
      goto done;
    }
    d->coord[d->n++] = k;
  }
  if (d->n == 0) mbs_analysis_warn(c, a, NULL, "no coordinates to record");
  for (int i = 0; i < d->n; i++) labels[i] = mbs_osim_coordinate_info(m, d->coord[i])->name;
  static const char desc[] =
      "\nUnits are S.I. units (second, meters, Newtons, ...)\nIf the header above contains a "
      "line with 'inDegrees', this indicates whether rotational values are in degrees (yes) "
      "or radians (no).\n\n";
  const int deg = mbs_analysis_in_degrees(a);
  if ((d->ta = mbs_analysis_add_table(c, a, "dudt", "Accelerations", desc, deg, d->n, labels)) < 0 ||
      (d->tu = mbs_analysis_add_table(c, a, "u", "Speeds", desc, deg, d->n, labels)) < 0 ||
      (d->tq = mbs_analysis_add_table(c, a, "q", "Coordinates", desc, deg, d->n, labels)) < 0)
    rc = 1;
done:
  free(labels);
  free(w);
  free(buf);
  return rc;
}

static int kin_record(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  kin_data* d = data;
  const mbs_osim_model* m = c->model;
  if (mbs_realize_acceleration(c->sys, st) || mbs_osim_get_accelerations(m, st, d->a))
    return mbs_analysis_fail(c, a, NULL, "accelerations at t = %.9g s: %s", mbs_state_time(st),
                             mbs_state_error(st)->message);
  mbs_osim_get_coordinates(m, st, d->q, d->u);
  double* q = mbs_analysis_row(a, d->tq);
  double* u = mbs_analysis_row(a, d->tu);
  double* ud = mbs_analysis_row(a, d->ta);
  const int deg = mbs_analysis_in_degrees(a);
  for (int i = 0; i < d->n; i++) {
    const int k = d->coord[i];
    const double s =
        deg && mbs_osim_coordinate_info(m, k)->motion == MBS_OSIM_ROTATIONAL ? 180 / M_PI : 1;
    q[i] = d->q[k] * s;
    u[i] = d->u[k] * s;
    ud[i] = d->a[k] * s;
  }
  return 0;
}

const mbs_analysis_type mbs_analysis_kinematics = {
    "Kinematics", "coordinates, speeds and accelerations (_q, _u, _dudt)", kin_create, NULL,
    kin_record, NULL, kin_destroy};
