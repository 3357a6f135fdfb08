// OpenSim's StaticOptimization analysis (analyze.h) on the library's static optimization
// (include/mbs/static_optimization.h).
//   properties use_model_force_set (default true; false, OpenSim's coordinate actuators on every
//              free coordinate instead of the model's forces, is refused), activation_exponent
//              (2), use_muscle_physiology (true), optimizer_convergence_criterion (1e-4),
//              optimizer_max_iterations (100)
//   files      <tool>_<name>_activation.sto and _force.sto ("Static Optimization"), columns
//              time and the actuators (the model's scalar actuators in ForceSet order): each
//              one's control and its force (control x capacity: a muscle's active force at full
//              activation, or its maximum isometric force; another actuator's optimal force)
// As OpenSim 4's StaticOptimization::record: the desired accelerations are the first time
// derivatives of interpolating quintic splines through the states table's speed columns
// (OpenSim's GCVSplineSet of degree 5 over the tool's states), at the row's time; the bounds
// are each actuator's min_control and max_control as the model file and the tool's force set
// files give them, else OpenSim's defaults (Thelen2003Muscle and Millard2012EquilibriumMuscle
// of OpenSim 3 and later files: their minimum_activation, 0.01 by default; other muscles 0;
// muscles' maximum 1; other actuators unbounded). The optimum is exact for exponent 2 (see the
// library), where OpenSim's interior-point optimizer stops within its convergence criterion. A
// row whose accelerations the actuators cannot produce within their bounds is written with the
// controls that come closest and a warning naming the coordinates (OpenSim warns and records
// too). OpenSim's _force.sto comes from a ForceReporter and also lists the model's other
// forces; here it has the actuators' columns only.
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "../io/xml_read.h"
#include "mbs/mbs.h"
#include "mbs/static_optimization.h"

#define SO_MAX_WARNINGS 5

typedef struct so_data {
  mbs_so* so;
  mbs_table_spline* spl;
  int np, nu, ncoord;
  int* coord_u;        // per model coordinate: its speed index
  int* ctrl_of_force;  // per force: its control, or -1
  double* lo;          // per control
  double* hi;
  double* udot;        // nu
  double* value;       // states table columns (spline values)
  double* d1;          // their time derivatives
  const char** speed_names;  // nu
  int ta, tf;
  int nshort;          // rows not met
} so_data;

static void so_destroy(void* data) {
  so_data* d = data;
  if (!d) return;
  mbs_so_free(d->so);
  mbs_table_spline_free(d->spl);
  free(d->coord_u);
  free(d->ctrl_of_force);
  free(d->lo);
  free(d->hi);
  free(d->udot);
  free(d->value);
  free(d->d1);
  free(d->speed_names);
  free(d);
}

// the text of child `key` of element e as a number; 0 if absent or not a number
static int child_number(xmlNodePtr e, const char* key, double* out) {
  for (xmlNodePtr c = e->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || strcmp((const char*)c->name, key)) continue;
    xmlChar* t = xmlNodeGetContent(c);
    if (!t) return 0;
    char* end;
    const double v = strtod((const char*)t, &end);
    int ok = end != (char*)t;
    while (ok && *end) {
      if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') ok = 0;
      end++;
    }
    xmlFree(t);
    if (ok) *out = v;
    return ok;
  }
  return 0;
}

// the bounds of the model's actuators as a file gives them: members of a set (elements under
// <objects>) named after an actuator; `version` is the model's document version
static void scan_bounds(so_data* d, const mbs_system* sys, xmlNodePtr n, int version) {
  for (xmlNodePtr e = n; e; e = e->next) {
    if (e->type != XML_ELEMENT_NODE) continue;
    xmlChar* name = xmlGetProp(e, (const xmlChar*)"name");
    if (name && e->parent && e->parent->name && !strcmp((const char*)e->parent->name, "objects")) {
      const int f = mbs_force_find(sys, (const char*)name);
      const int c = f >= 0 ? d->ctrl_of_force[f] : -1;
      if (c >= 0) {
        const char* tag = (const char*)e->name;
        if (!strcmp(mbs_force_kind(sys, f), "muscle")) {
          double amin = 0.01;
          child_number(e, "minimum_activation", &amin);
          const int with_min = version >= 30000 && (!strcmp(tag, "Thelen2003Muscle") ||
                                                    !strcmp(tag, "Millard2012EquilibriumMuscle"));
          d->lo[c] = with_min ? amin : 0.0;
          d->hi[c] = 1.0;
        }
        child_number(e, "min_control", &d->lo[c]);
        child_number(e, "max_control", &d->hi[c]);
      }
    }
    if (name) xmlFree(name);
    scan_bounds(d, sys, e->children, version);
  }
}

static int read_bounds(const mbs_analyze_context* c, mbs_analysis* a, so_data* d) {
  mbs_error err;
  mbs_error_clear(&err);
  int replace = 0;
  if (mbs_setup_bool(c->setup, NULL, "replace_force_set", 0, &replace, &err))
    return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  char** w = NULL;
  char* buf = NULL;
  int nw = 0;
  if (mbs_analysis_words(c->setup, mbs_setup_root(c->setup), "force_set_files", &w, &buf, &nw))
    return mbs_analysis_fail(c, a, NULL, "out of memory");
  int rc = 0;
  for (int i = replace ? 0 : -1; i < nw && !rc; i++) {
    char* path = i < 0 ? strdup(mbs_osim_path(c->model)) : mbs_setup_resolve(c->setup, w[i]);
    if (!path) {
      rc = mbs_analysis_fail(c, a, NULL, "out of memory");
      break;
    }
    xmlDocPtr doc = mbs_xml_read(path, NULL, 0, 0, "a model file", NULL);
    if (!doc) {
      mbs_analysis_warn(c, a, NULL, "%s: not read again for the actuators' min_control and "
                        "max_control; their defaults apply", path);
    } else {
      scan_bounds(d, c->sys, xmlDocGetRootElement(doc), mbs_osim_version(c->model));
      xmlFreeDoc(doc);
    }
    free(path);
  }
  free(w);
  free(buf);
  return rc;
}

static int so_create(const mbs_analyze_context* c, mbs_analysis* a, void** data) {
  so_data* d = calloc(1, sizeof(*d));
  *data = d;
  if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
  const mbs_system* sys = c->sys;
  mbs_setup_node* node = mbs_analysis_node(a);
  mbs_error err;
  mbs_error_clear(&err);
  int use_model = 1, physiology = 1;
  long maxit = 100;
  mbs_so_options o;
  mbs_so_options_default(&o);
  if (mbs_setup_bool(c->setup, node, "use_model_force_set", 1, &use_model, &err) ||
      mbs_setup_number(c->setup, node, "activation_exponent", 2, &o.activation_exponent, &err) ||
      mbs_setup_bool(c->setup, node, "use_muscle_physiology", 1, &physiology, &err) ||
      mbs_setup_number(c->setup, node, "optimizer_convergence_criterion", 1e-4,
                       &o.convergence_criterion, &err) ||
      mbs_setup_int(c->setup, node, "optimizer_max_iterations", 100, &maxit, &err))
    return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  if (!use_model)
    return mbs_analysis_fail(c, a, mbs_setup_child(c->setup, node, "use_model_force_set"),
                             "use_model_force_set false (coordinate actuators in place of the "
                             "model's forces) is not supported; add reserve actuators with "
                             "force_set_files instead");
  o.use_muscle_physiology = physiology;
  o.max_iterations = (int)(maxit > 0 && maxit < 1000000 ? maxit : 100);
  const int nf = mbs_system_nforce(sys), ncon = mbs_system_ncontrol(sys);
  d->nu = mbs_system_nu(sys);
  d->ncoord = mbs_osim_ncoordinate(c->model);
  d->coord_u = calloc((size_t)d->ncoord + 1, sizeof(int));
  d->ctrl_of_force = malloc(((size_t)nf + 1) * sizeof(int));
  d->lo = calloc((size_t)ncon + 1, sizeof(double));
  d->hi = calloc((size_t)ncon + 1, sizeof(double));
  d->udot = calloc((size_t)d->nu + 1, sizeof(double));
  d->value = calloc((size_t)c->states->ncol + 1, sizeof(double));
  d->d1 = calloc((size_t)c->states->ncol + 1, sizeof(double));
  d->speed_names = calloc((size_t)d->nu + 1, sizeof(char*));
  if (!d->coord_u || !d->ctrl_of_force || !d->lo || !d->hi || !d->udot || !d->value || !d->d1 ||
      !d->speed_names)
    return mbs_analysis_fail(c, a, NULL, "out of memory");
  for (int f = 0; f < nf; f++) d->ctrl_of_force[f] = -1;
  for (int k = 0; k < ncon; k++) {
    const int f = mbs_control_force(sys, k);
    d->ctrl_of_force[f] = k;
    const int muscle = !strcmp(mbs_force_kind(sys, f), "muscle");
    d->lo[k] = muscle ? 0.0 : -INFINITY;
    d->hi[k] = muscle ? 1.0 : INFINITY;
  }
  for (int k = 0; k < d->ncoord; k++) {
    const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(c->model, k);
    d->coord_u[k] = ci->uindex;
    if (ci->uindex >= 0 && ci->uindex < d->nu) d->speed_names[ci->uindex] = ci->name;
  }
  if (read_bounds(c, a, d)) return 1;
  if (ncon == 0)
    return mbs_analysis_fail(c, a, NULL, "model '%s' has no actuators to optimize",
                             mbs_osim_name(c->model));
  o.lower = d->lo;
  o.upper = d->hi;
  o.speed_names = d->speed_names;
  if (mbs_so_create(sys, &o, &d->so, &err))
    return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  d->np = mbs_so_nparam(d->so);
  // the desired accelerations: the speed columns' splines
  if (mbs_table_spline_create(c->states, &d->spl, &err))
    return mbs_analysis_fail(c, a, NULL, "the states' splines: %s", err.message);
  const char** labels = malloc(((size_t)d->np + 1) * sizeof(char*));
  if (!labels) return mbs_analysis_fail(c, a, NULL, "out of memory");
  for (int j = 0; j < d->np; j++) labels[j] = mbs_force_name(sys, mbs_so_param_force(d->so, j));
  static const char desc[] = "This file contains static optimization results.\n\n";
  int rc = 0;
  if ((d->ta = mbs_analysis_add_table(c, a, "activation", "Static Optimization", desc, 0, d->np,
                                      labels)) < 0 ||
      (d->tf = mbs_analysis_add_table(c, a, "force", "Static Optimization", desc, 0, d->np,
                                      labels)) < 0)
    rc = 1;
  free(labels);
  return rc;
}

static int so_record(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  so_data* d = data;
  const double t = mbs_state_time(st);
  mbs_table_spline_eval_all(d->spl, t, d->value, d->d1, NULL);
  memset(d->udot, 0, (size_t)d->nu * sizeof(double));
  for (int k = 0; k < d->ncoord; k++)
    if (d->coord_u[k] >= 0 && d->coord_u[k] < d->nu)
      d->udot[d->coord_u[k]] = d->d1[1 + d->ncoord + k];
  double* act = mbs_analysis_row(a, d->ta);
  double* force = mbs_analysis_row(a, d->tf);
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = mbs_so_solve(d->so, st, d->udot, act, force, NULL, &err);
  if (rc == MBS_ERR_ASSEMBLY) {
    if (d->nshort++ < SO_MAX_WARNINGS)
      mbs_analysis_warn(c, a, NULL, "%s; the closest controls are written (OpenSim warns and "
                        "records too)", err.message);
    return 0;
  }
  if (rc) return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  return 0;
}

static int so_finish(const mbs_analyze_context* c, mbs_analysis* a, void* data) {
  so_data* d = data;
  if (d->nshort > SO_MAX_WARNINGS)
    mbs_analysis_warn(c, a, NULL, "the actuators could not meet the accelerations at %d rows in "
                      "all", d->nshort);
  return 0;
}

const mbs_analysis_type mbs_analysis_static_optimization = {
    "StaticOptimization",
    "actuator controls of least effort sum |x|^p that produce the motion (_activation, _force)",
    so_create, NULL, so_record, so_finish, so_destroy};
