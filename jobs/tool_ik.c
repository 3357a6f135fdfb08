// OpenSim's InverseKinematicsTool (run_tool.h): the model's coordinates, frame by frame, that
// best fit the markers of a motion capture trial (and coordinate tasks), read from a setup file
// with OpenSim 4's properties, results as OpenSim writes them:
//   <output_motion_file>                          the coordinates, rotations in degrees
//                                                 (name "Coordinates", version=1, inDegrees=yes,
//                                                 columns time and the coordinates in the
//                                                 model's order)
//   <results_directory>/<name>_ik_marker_errors.sto           report_errors: time,
//                                                 total_squared_error, marker_error_RMS,
//                                                 marker_error_max (m^2, m, m)
//   <results_directory>/<name>_ik_model_marker_locations.sto  report_marker_locations: time,
//                                                 <marker>_tx, _ty, _tz of the model's markers
//                                                 (m, Ground)
// As in OpenSim: the markers tracked are those with an applied IKMarkerTask (every marker of
// the file, weight 1, when no marker task is applied) that are both in the marker file and in
// the model, in the file's order; a marker missing in a frame (empty fields, NaN) is left out of
// that frame; the frames are the marker file's rows nearest to the ends of time_range (clipped
// to the data); output_motion_file is relative to the setup file (to --results DIR when that is
// given); the trial's name is the tool's name attribute ("" gives "_ik_marker_errors.sto").
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../io/xml_read.h"
#include "mbs/ik.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/table.h"
#include "progress.h"
#include "run_tool.h"

#define LOG(o, ...) fprintf((o)->log, "mbstudy run-tool: " __VA_ARGS__)
#define WARN(o, ...) fprintf((o)->log, "mbstudy run-tool: warning: " __VA_ARGS__)

// a number that may be infinite ("Inf", "-Infinity", as OpenSim writes them)
static int parse_extended(const char* s, double* v) {
  char* end;
  errno = 0;
  *v = strtod(s, &end);
  while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
  return end != s && !*end && !isnan(*v);
}

//---------------------------------- OpenSim 4's motion types ----------------------------------
// OpenSim writes a coordinate in degrees when its motion type is Rotational. For CustomJoints
// OpenSim 4 (CustomJoint::constructCoordinates) goes through the six transform axes in order:
// an axis that uses the coordinate through a LinearFunction of slope +1 or -1 makes it
// Rotational (rotation1..3) or Translational (translation1..3); an axis with another function
// makes it Coupled unless it is already one of those. So a knee rotating with its angle and
// sliding along splines of it is Rotational (the model reader calls it coupled).

static int is_elem_named(xmlNodePtr n, const char* name) {
  return n && n->type == XML_ELEMENT_NODE && (!name || !strcmp((const char*)n->name, name));
}

static xmlNodePtr child_named(xmlNodePtr n, const char* name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is_elem_named(c, name)) return c;
  return NULL;
}

// the function of a TransformAxis: <function><X/></function> (3.x and early 4.0) or an element
// named "function" of any class (OpenSim 4)
static xmlNodePtr axis_function(xmlNodePtr ta) {
  xmlNodePtr f = child_named(ta, "function");
  if (f) {
    for (xmlNodePtr c = f->children; c; c = c->next)
      if (is_elem_named(c, NULL)) return c;
  }
  for (xmlNodePtr c = ta->children; c; c = c->next) {
    if (!is_elem_named(c, NULL)) continue;
    xmlChar* nm = xmlGetProp(c, (const xmlChar*)"name");
    const int hit = nm && !strcmp((const char*)nm, "function");
    xmlFree(nm);
    if (hit) return c;
  }
  return NULL;
}

// does the space-separated list contain word?
static int list_has(const char* list, const char* word) {
  const size_t l = strlen(word);
  for (const char* p = list; p && *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    const char* e = p;
    while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n') e++;
    if ((size_t)(e - p) == l && !strncmp(p, word, l)) return 1;
    p = e;
  }
  return 0;
}

enum { MT_UNDEFINED = 0, MT_ROTATIONAL, MT_TRANSLATIONAL, MT_COUPLED };

static void custom_joint_motion(xmlNodePtr j, const mbs_osim_model* m, int* rot) {
  static const char* axes[6] = {"rotation1", "rotation2", "rotation3",
                                "translation1", "translation2", "translation3"};
  xmlNodePtr ta[6] = {NULL};
  xmlNodePtr st = child_named(j, "SpatialTransform");
  for (xmlNodePtr c = st ? st->children : NULL; c; c = c->next) {
    if (!is_elem_named(c, "TransformAxis")) continue;
    xmlChar* nm = xmlGetProp(c, (const xmlChar*)"name");
    for (int a = 0; nm && a < 6; a++)
      if (!strcmp((const char*)nm, axes[a])) ta[a] = c;
    xmlFree(nm);
  }
  for (int i = 0; i < mbs_osim_ncoordinate(m); i++) {
    const char* cn = mbs_osim_coordinate_info(m, i)->name;
    int mt = MT_UNDEFINED, seen = 0;
    for (int a = 0; a < 6; a++) {
      if (!ta[a]) continue;
      xmlChar* list = xmlNodeGetContent(child_named(ta[a], "coordinates"));
      const int uses = list && list_has((const char*)list, cn);
      xmlFree(list);
      if (!uses) continue;
      seen = 1;
      xmlNodePtr fn = axis_function(ta[a]);
      if (!fn) continue;
      double slope = NAN;
      if (!strcmp((const char*)fn->name, "LinearFunction")) {
        xmlChar* cs = xmlNodeGetContent(child_named(fn, "coefficients"));
        if (cs) slope = strtod((const char*)cs, NULL);
        xmlFree(cs);
      }
      if (slope == 1.0 || slope == -1.0) mt = a < 3 ? MT_ROTATIONAL : MT_TRANSLATIONAL;
      else if (mt == MT_UNDEFINED) mt = MT_COUPLED;
    }
    if (seen) rot[i] = mt == MT_ROTATIONAL;
  }
}

static void walk_custom_joints(xmlNodePtr n, const mbs_osim_model* m, int* rot) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next) {
    if (!is_elem_named(c, NULL)) continue;
    if (!strcmp((const char*)c->name, "CustomJoint")) custom_joint_motion(c, m, rot);
    else walk_custom_joints(c, m, rot);
  }
}

// rot[i]: whether OpenSim 4 writes model coordinate i in degrees
static void opensim_rotational(const char* model_path, const mbs_osim_model* m, int* rot) {
  for (int i = 0; i < mbs_osim_ncoordinate(m); i++)
    rot[i] = mbs_osim_coordinate_info(m, i)->motion == MBS_OSIM_ROTATIONAL;
  xmlDocPtr doc = mbs_xml_read(model_path, NULL, 0, 0, "a model file", NULL);
  if (!doc) return;  // (the model reader has read it: this does not happen)
  walk_custom_joints(xmlDocGetRootElement(doc), m, rot);
  xmlFreeDoc(doc);
}

typedef struct ik_task {
  const char* name;
  int line;
  int coordinate;   // IKCoordinateTask: the model's coordinate index; -1 for markers
  double weight;
  int type;         // 0 default_value, 1 manual_value, 2 from_file
  double value;
  int column;       // from_file: the coordinate file's column
} ik_task;

typedef struct ik_run {
  mbs_osim_model* m;
  mbs_state* st;
  mbs_ik* ik;
  mbs_table *markers, *coords, *motion, *errors, *locations;
  mbs_table_spline* spline;
  ik_task* mtask;           // applied marker tasks
  int nmtask;
  ik_task* ctask;           // applied coordinate tasks that act
  int nctask;
  int* used;                // per marker in use: its column group in the marker file
  int nused;
  mbs_ik_marker* ikm;
  mbs_ik_task* ikt;
  mbs_ik_bound* ikb;
  int* fixed;
  double *obs, *targets, *qv;
  int* rot;                 // per model coordinate: written in degrees
  char** labels;
  int nlabels;
} ik_run;

static void run_free(ik_run* r) {
  mbs_ik_free(r->ik);
  mbs_state_destroy(r->st);
  mbs_osim_free(r->m);
  mbs_table_free(r->markers);
  mbs_table_free(r->coords);
  mbs_table_free(r->motion);
  mbs_table_free(r->errors);
  mbs_table_free(r->locations);
  mbs_table_spline_free(r->spline);
  free(r->mtask);
  free(r->ctask);
  free(r->used);
  free(r->ikm);
  free(r->ikt);
  free(r->ikb);
  free(r->fixed);
  free(r->obs);
  free(r->targets);
  free(r->qv);
  free(r->rot);
  for (int i = 0; i < r->nlabels; i++) free(r->labels[i]);
  free(r->labels);
}

// the IKTaskSet: applied tasks into r->mtask and r->ctask (coordinates as named; resolved
// later); 0 or 1 after an error message
static int read_tasks(mbs_setup* s, const mbs_tool_options* o, ik_run* r) {
  mbs_error err;
  int n = 0;
  while (mbs_setup_item(s, NULL, "IKTaskSet", n)) n++;
  r->mtask = calloc((size_t)n + 1, sizeof(ik_task));
  r->ctask = calloc((size_t)n + 1, sizeof(ik_task));
  if (!r->mtask || !r->ctask) {
    LOG(o, "out of memory\n");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    mbs_setup_node* t = mbs_setup_item(s, NULL, "IKTaskSet", i);
    const char* kind = mbs_setup_kind(t);
    const char* name = mbs_setup_node_name(t);
    const int line = mbs_setup_line(t);
    const int is_marker = !strcmp(kind, "IKMarkerTask");
    if (!is_marker && strcmp(kind, "IKCoordinateTask")) {
      mbs_setup_mark_all(s, t);
      WARN(o, "%s:%d: <%s name=\"%s\"> is not an IK task (IKMarkerTask or IKCoordinateTask); "
              "ignored\n", mbs_setup_path(s), line, kind, name);
      continue;
    }
    if (!*name) {
      LOG(o, "%s:%d: <%s> has no name attribute (the marker or coordinate it is about)\n",
          mbs_setup_path(s), line, kind);
      return 1;
    }
    int apply;
    ik_task k = {.name = name, .line = line, .coordinate = -1, .column = -1};
    mbs_error_clear(&err);
    if (mbs_setup_bool(s, t, "apply", 1, &apply, &err) ||
        mbs_setup_number(s, t, "weight", 0, &k.weight, &err)) {  // OpenSim's IKTask default
      LOG(o, "%s\n", err.message);
      return 1;
    }
    if (k.weight < 0) {
      LOG(o, "%s:%d: %s '%s': weight %g is negative\n", mbs_setup_path(s), line, kind, name,
          k.weight);
      return 1;
    }
    if (is_marker) {
      if (!apply) continue;
      for (int j = 0; j < r->nmtask; j++)
        if (!strcmp(r->mtask[j].name, name)) {
          WARN(o, "%s:%d: a second IKMarkerTask for '%s' (line %d is used)\n",
               mbs_setup_path(s), line, name, r->mtask[j].line);
          apply = 0;
        }
      if (apply) r->mtask[r->nmtask++] = k;
      continue;
    }
    const char* vt = mbs_setup_string(s, t, "value_type");
    if (!vt || !strcasecmp(vt, "default_value")) k.type = 0;
    else if (!strcasecmp(vt, "manual_value")) k.type = 1;
    else if (!strcasecmp(vt, "from_file")) k.type = 2;
    else {
      LOG(o, "%s:%d: IKCoordinateTask '%s': value_type '%s' is not default_value, manual_value "
             "or from_file\n", mbs_setup_path(s), line, name, vt);
      return 1;
    }
    mbs_error_clear(&err);
    if (mbs_setup_number(s, t, "value", 0, &k.value, &err)) {
      LOG(o, "%s\n", err.message);
      return 1;
    }
    if (!apply) continue;
    for (int j = 0; j < r->nctask; j++)
      if (!strcmp(r->ctask[j].name, name)) {
        WARN(o, "%s:%d: a second IKCoordinateTask for '%s' (line %d is used)\n",
             mbs_setup_path(s), line, name, r->ctask[j].line);
        apply = 0;
      }
    if (apply) r->ctask[r->nctask++] = k;
  }
  return 0;
}

// index of the row nearest to time t (the first of two as near)
static int nearest_row(const mbs_table* t, double time) {
  int best = 0;
  for (int i = 1; i < t->nrow; i++)
    if (fabs(mbs_table_get(t, i, 0) - time) < fabs(mbs_table_get(t, best, 0) - time)) best = i;
  return best;
}

static char* join_path(const char* dir, const char* name) {
  if (name[0] == '/') return strdup(name);
  return mbs_format_string("%s/%s", dir, name);
}

int mbs_tool_inverse_kinematics(mbs_setup* s, const mbs_tool_options* o) {
  mbs_error err;
  mbs_error_clear(&err);
  ik_run r;
  memset(&r, 0, sizeof(r));
  const char* path = mbs_setup_path(s);
  const char* trial = mbs_setup_name(s);  // OpenSim names the files after it, "" included
  char* model = mbs_setup_file(s, NULL, "model_file");
  char* marker_file = mbs_setup_file(s, NULL, "marker_file");
  char* coord_file = mbs_setup_file(s, NULL, "coordinate_file");
  const char* rdir = mbs_setup_string(s, NULL, "results_directory");
  char* results = o->results_dir ? strdup(o->results_dir) : mbs_setup_resolve(s, rdir ? rdir : ".");
  const char* motion_name = mbs_setup_string(s, NULL, "output_motion_file");
  char* motion_path = NULL;
  int rc = 1;
  double accuracy, cweight = INFINITY, t_range[2] = {-INFINITY, INFINITY};
  int report_errors, report_locations;
  if (mbs_setup_number(s, NULL, "accuracy", 1e-5, &accuracy, &err) ||
      mbs_setup_bool(s, NULL, "report_errors", 1, &report_errors, &err) ||
      mbs_setup_bool(s, NULL, "report_marker_locations", 0, &report_locations, &err)) {
    LOG(o, "%s\n", err.message);
    goto done;
  }
  if (!(accuracy > 0)) {
    LOG(o, "%s:%d: <accuracy> %g must be positive\n", path,
        mbs_setup_line(mbs_setup_child(s, NULL, "accuracy")), accuracy);
    goto done;
  }
  {
    const char* cw = mbs_setup_string(s, NULL, "constraint_weight");
    if (cw && (!parse_extended(cw, &cweight) || cweight < 0)) {
      LOG(o, "%s:%d: <constraint_weight> '%s' is not a non-negative number or Inf\n", path,
          mbs_setup_line(mbs_setup_child(s, NULL, "constraint_weight")), cw);
      goto done;
    }
    const char* tr = mbs_setup_string(s, NULL, "time_range");
    if (tr) {
      char* copy = strdup(tr);
      char* save = NULL;
      char* a = copy ? strtok_r(copy, " \t\r\n", &save) : NULL;
      char* b = a ? strtok_r(NULL, " \t\r\n", &save) : NULL;
      char* c = b ? strtok_r(NULL, " \t\r\n", &save) : NULL;
      const int ok = a && b && !c && parse_extended(a, &t_range[0]) &&
                     parse_extended(b, &t_range[1]);
      free(copy);
      if (!ok) {
        LOG(o, "%s:%d: <time_range> '%s' is not two times (start and end, s)\n", path,
            mbs_setup_line(mbs_setup_child(s, NULL, "time_range")), tr);
        goto done;
      }
    }
    const char* in = mbs_setup_string(s, NULL, "input_directory");
    if (in)
      WARN(o, "%s:%d: <input_directory> '%s' is not used: files are relative to the setup "
              "file\n", path, mbs_setup_line(mbs_setup_child(s, NULL, "input_directory")), in);
  }
  if (read_tasks(s, o, &r)) goto done;
  mbs_setup_child(s, NULL, "IKTaskSet");
  mbs_setup_warn_unused(s, o->log);
  if (!model) {
    LOG(o, "%s:%d: <%s> has no <model_file>\n", path, mbs_setup_line(mbs_setup_root(s)),
        mbs_setup_tool(s));
    goto done;
  }
  if (!marker_file) {
    LOG(o, "%s:%d: <%s> has no <marker_file> (the .trc file of the trial)\n", path,
        mbs_setup_line(mbs_setup_root(s)), mbs_setup_tool(s));
    goto done;
  }
  if (motion_name)
    motion_path = o->results_dir ? join_path(o->results_dir, motion_name)
                                 : mbs_setup_resolve(s, motion_name);
  else
    WARN(o, "%s: no <output_motion_file>: the coordinates are not written (as OpenSim)\n",
         path);

  // the model
  {
    mbs_osim_options mo = {.rename_types = o->rename_types,
                           .nrename_types = o->nrename_types,
                           .param_values = o->param_values,
                           .nparam_values = o->nparam_values};
    r.m = mbs_osim_read_options(model, &mo, &err);
  }
  if (!r.m) {
    LOG(o, "%s\n", err.message);
    goto done;
  }
  for (int i = 0; i < mbs_osim_nwarning(r.m); i++) WARN(o, "%s\n", mbs_osim_warning(r.m, i));
  const mbs_system* sys = mbs_osim_system(r.m);
  const int ncoord = mbs_osim_ncoordinate(r.m);
  if (!(r.rot = calloc((size_t)ncoord + 1, sizeof(int)))) {
    LOG(o, "out of memory\n");
    goto done;
  }
  opensim_rotational(model, r.m, r.rot);

  // the markers, in meters
  {
    const size_t l = strlen(marker_file);
    if (l < 4 || strcasecmp(marker_file + l - 4, ".trc")) {
      LOG(o, "%s: <marker_file> %s: mbstudy reads marker files in the .trc format\n", path,
          marker_file);
      goto done;
    }
  }
  if (mbs_table_read_trc(marker_file, &r.markers, &err)) {
    LOG(o, "marker_file: %s\n", err.message);
    goto done;
  }
  if (!r.markers->units) {
    WARN(o, "%s: no Units: the marker coordinates are taken as meters (as OpenSim)\n",
         marker_file);
  } else if (mbs_table_to_meters(r.markers, &err)) {
    LOG(o, "marker_file: %s\n", err.message);
    goto done;
  }
  if (r.markers->nrow < 1) {
    LOG(o, "%s: no frames\n", marker_file);
    goto done;
  }
  for (int i = 0; i < r.markers->nrow; i++) {
    const double t = mbs_table_get(r.markers, i, 0);
    if (!isfinite(t)) {
      LOG(o, "%s: frame %d: the time is not a number\n", marker_file, i + 1);
      goto done;
    }
    if (i > 0 && !(t > mbs_table_get(r.markers, i - 1, 0))) {
      LOG(o, "%s: frame %d: time %g does not follow %g of the frame before\n", marker_file,
          i + 1, t, mbs_table_get(r.markers, i - 1, 0));
      goto done;
    }
  }

  // the markers in use: applied tasks (or, without any, every marker of the file, weight 1)
  // found in the file and in the model, in the file's order
  const int nfile = r.markers->nmarkers;
  r.used = calloc((size_t)nfile + 1, sizeof(int));
  r.ikm = calloc((size_t)nfile + 1, sizeof(mbs_ik_marker));
  if (!r.used || !r.ikm) {
    LOG(o, "out of memory\n");
    goto done;
  }
  if (r.nmtask == 0)
    WARN(o, "%s: no IKMarkerTask is applied: every marker of %s that the model has is tracked "
            "with weight 1 (as OpenSim)\n", path, marker_file);
  for (int j = 0; j < nfile; j++) {
    const char* name = r.markers->markers[j];
    double w = 1;
    if (r.nmtask > 0) {
      int k = -1;
      for (int i = 0; i < r.nmtask && k < 0; i++)
        if (!strcmp(r.mtask[i].name, name)) k = i;
      if (k < 0) continue;
      w = r.mtask[k].weight;
    }
    int mi = -1;
    for (int i = 0; i < mbs_osim_nmarker(r.m) && mi < 0; i++)
      if (!strcmp(mbs_osim_marker_at(r.m, i)->name, name)) mi = i;
    if (mi < 0) {
      if (r.nmtask > 0)
        WARN(o, "marker '%s' of %s has a task but the model %s has no such marker; it is not "
                "tracked\n", name, marker_file, model);
      continue;
    }
    const mbs_osim_marker* mk = mbs_osim_marker_at(r.m, mi);
    if (mk->body <= 0) {
      WARN(o, "marker '%s' of %s is fixed to Ground in the model; it is not tracked\n", name,
           model);
      continue;
    }
    mbs_ik_marker* im = &r.ikm[r.nused];
    im->name = mk->name;
    im->body = mk->body;
    memcpy(im->station, mk->location, sizeof(im->station));
    im->weight = w;
    r.used[r.nused++] = j;
  }
  for (int i = 0; i < r.nmtask; i++) {
    int found = 0;
    for (int j = 0; j < nfile && !found; j++)
      found = !strcmp(r.markers->markers[j], r.mtask[i].name);
    if (!found)
      WARN(o, "%s:%d: IKMarkerTask '%s': %s has no such marker; it is not tracked\n", path,
           r.mtask[i].line, r.mtask[i].name, marker_file);
  }
  if (r.nused == 0) {
    LOG(o, "%s: no marker of %s is both in the model (%s) and applied in the IKTaskSet: nothing "
           "to track\n", path, marker_file, model);
    goto done;
  }
  if (r.nused < 4) WARN(o, "only %d markers to track\n", r.nused);

  // coordinate tasks and the coordinate file
  if (coord_file) {
    if (mbs_table_read_sto(coord_file, &r.coords, &err)) {
      LOG(o, "coordinate_file: %s\n", err.message);
      goto done;
    }
    if (r.coords->in_degrees) {  // rotational coordinates only (by name or OpenSim 4 path)
      const char** rot = calloc((size_t)ncoord + 1, sizeof(char*));
      int nrot = 0;
      for (int i = 0; rot && i < ncoord; i++) {
        const mbs_osim_coordinate* c = mbs_osim_coordinate_info(r.m, i);
        char label[600];
        snprintf(label, sizeof(label), "/jointset/%s/%s/value", c->joint, c->name);
        int col = mbs_table_column(r.coords, c->name);
        if (col <= 0) col = mbs_table_column(r.coords, label);
        if (r.rot[i] && col > 0) rot[nrot++] = r.coords->labels[col];
      }
      const int crc = rot ? mbs_table_to_radians(r.coords, rot, nrot, &err) : MBS_ERR_NO_MEMORY;
      free(rot);
      if (crc) {
        LOG(o, "coordinate_file %s: %s\n", coord_file, crc == MBS_ERR_NO_MEMORY ? "out of memory"
                                                                                : err.message);
        goto done;
      }
    }
  }
  r.ikt = calloc((size_t)r.nctask + 1, sizeof(mbs_ik_task));
  r.targets = calloc((size_t)r.nctask + 1, sizeof(double));
  r.ikb = calloc((size_t)ncoord + 1, sizeof(mbs_ik_bound));
  r.fixed = calloc((size_t)ncoord + 1, sizeof(int));
  if (!r.ikt || !r.targets || !r.ikb || !r.fixed) {
    LOG(o, "out of memory\n");
    goto done;
  }
  int ntask = 0, need_spline = 0;
  for (int i = 0; i < r.nctask; i++) {
    ik_task* k = &r.ctask[i];
    k->coordinate = mbs_osim_find_coordinate(r.m, k->name);
    if (k->coordinate < 0) {
      LOG(o, "%s:%d: IKCoordinateTask '%s': the model %s has no such coordinate\n", path,
          k->line, k->name, model);
      goto done;
    }
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(r.m, k->coordinate);
    if (c->locked) {
      LOG(o, "note: IKCoordinateTask '%s': the coordinate is locked and stays at %g\n", k->name,
          c->default_value);
      continue;
    }
    if (k->type == 2) {
      if (!r.coords) {
        LOG(o, "%s:%d: IKCoordinateTask '%s' takes its values from_file, but there is no "
               "<coordinate_file>\n", path, k->line, k->name);
        goto done;
      }
      char label[600];
      snprintf(label, sizeof(label), "/jointset/%s/%s/value", c->joint, c->name);
      k->column = mbs_table_column(r.coords, k->name);
      if (k->column <= 0) k->column = mbs_table_column(r.coords, label);
      if (k->column <= 0) {
        LOG(o, "%s:%d: IKCoordinateTask '%s': %s has no column for it\n", path, k->line,
            k->name, coord_file);
        goto done;
      }
      need_spline = 1;
    }
    r.ctask[ntask] = *k;
    r.ikt[ntask] = (mbs_ik_task){.name = c->name, .q = c->qindex, .weight = k->weight};
    ntask++;
  }
  r.nctask = ntask;
  if (need_spline && mbs_table_spline_create(r.coords, &r.spline, &err)) {
    LOG(o, "coordinate_file %s: %s\n", coord_file, err.message);
    goto done;
  }
  int nbound = 0, nfixed = 0;
  for (int i = 0; i < ncoord; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(r.m, i);
    if (c->locked) r.fixed[nfixed++] = c->qindex;
    else if (c->clamped && !c->prescribed)
      r.ikb[nbound++] = (mbs_ik_bound){.name = c->name, .q = c->qindex, .lower = c->range[0],
                                       .upper = c->range[1]};
  }

  // frames: the rows nearest to the ends of the time range, within the data
  const double t_first = mbs_table_get(r.markers, 0, 0);
  const double t_last = mbs_table_get(r.markers, r.markers->nrow - 1, 0);
  const double t0 = t_range[0] > t_first ? t_range[0] : t_first;
  const double t1 = t_range[1] < t_last ? t_range[1] : t_last;
  if (!(t1 >= t0)) {
    LOG(o, "%s:%d: <time_range> %g .. %g is outside the marker data of %s (%g .. %g s)\n", path,
        mbs_setup_line(mbs_setup_child(s, NULL, "time_range")), t_range[0], t_range[1],
        marker_file, t_first, t_last);
    goto done;
  }
  if ((isfinite(t_range[0]) && t_range[0] < t_first) ||
      (isfinite(t_range[1]) && t_range[1] > t_last))
    WARN(o, "time_range %g .. %g reaches beyond the marker data (%g .. %g s); solving %g .. %g\n",
         t_range[0], t_range[1], t_first, t_last, t0, t1);
  const int i0 = nearest_row(r.markers, t0), i1 = nearest_row(r.markers, t1);
  const int nframes = i1 - i0 + 1;

  // the solver
  {
    mbs_ik_problem p;
    mbs_ik_problem_default(&p);
    p.nmarker = r.nused;
    p.markers = r.ikm;
    p.ntask = r.nctask;
    p.tasks = r.ikt;
    p.nbound = nbound;
    p.bounds = r.ikb;
    p.nfixed = nfixed;
    p.fixed = r.fixed;
    p.accuracy = accuracy;
    p.constraint_weight = cweight;
    if (mbs_ik_create(sys, &p, &r.ik, &err)) {
      LOG(o, "%s: %s\n", model, err.message);
      goto done;
    }
  }
  r.st = mbs_state_create(sys);
  if (!r.st || mbs_osim_default_state(r.m, r.st)) {
    LOG(o, "%s: default state: %s\n", model,
        r.st ? mbs_state_error(r.st)->message : "out of memory");
    goto done;
  }
  r.obs = calloc(3 * (size_t)r.nused + 1, sizeof(double));
  r.qv = calloc(2 * (size_t)ncoord + 2, sizeof(double));
  r.nlabels = 1 + 3 * r.nused > 1 + ncoord ? 1 + 3 * r.nused : 1 + ncoord;
  r.labels = calloc((size_t)r.nlabels + 1, sizeof(char*));
  if (!r.obs || !r.qv || !r.labels) {
    r.nlabels = 0;
    LOG(o, "out of memory\n");
    goto done;
  }
  // result tables
  {
    int ok = (r.labels[0] = strdup("time")) != NULL;
    for (int i = 0; ok && i < ncoord; i++)
      ok = (r.labels[1 + i] = strdup(mbs_osim_coordinate_info(r.m, i)->name)) != NULL;
    if (!ok || mbs_table_create(&r.motion, "Coordinates", nframes, 1 + ncoord,
                                (const char* const*)r.labels, &err)) {
      LOG(o, "%s\n", ok ? err.message : "out of memory");
      goto done;
    }
    r.motion->in_degrees = 1;
    if (mbs_table_set_meta(r.motion, NULL, "Units are S.I. units (second, meters, Newtons, ...)",
                           &err) ||
        mbs_table_set_meta(r.motion, NULL, "Angles are in degrees.", &err)) {
      LOG(o, "%s\n", err.message);
      goto done;
    }
    const char* el[4] = {"time", "total_squared_error", "marker_error_RMS", "marker_error_max"};
    if (report_errors &&
        mbs_table_create(&r.errors, "Model Marker Errors from IK", nframes, 4, el, &err)) {
      LOG(o, "%s\n", err.message);
      goto done;
    }
    for (int i = 0; report_locations && ok && i < r.nused; i++) {
      static const char* xyz[3] = {"_tx", "_ty", "_tz"};
      for (int k = 0; ok && k < 3; k++) {
        free(r.labels[1 + 3 * i + k]);
        ok = (r.labels[1 + 3 * i + k] = mbs_format_string("%s%s", r.ikm[i].name, xyz[k])) !=
             NULL;
      }
    }
    if (report_locations &&
        (!ok || mbs_table_create(&r.locations, "Model Marker Locations from IK", nframes,
                                 1 + 3 * r.nused, (const char* const*)r.labels, &err))) {
      LOG(o, "%s\n", ok ? err.message : "out of memory");
      goto done;
    }
  }

  LOG(o, "%s '%s': %s, %d markers of %s, %d coordinate tasks, %d frames (t = %g .. %g s), "
         "accuracy %g, constraint weight %g\n", mbs_setup_tool(s), trial, mbs_osim_name(r.m),
      r.nused, marker_file, r.nctask, nframes, mbs_table_get(r.markers, i0, 0),
      mbs_table_get(r.markers, i1, 0), accuracy, cweight);
  mbs_progress prog;
  if (!o->quiet) mbs_progress_start(&prog, o->log, "frames", nframes);
  const double wall0 = mbs_wall_seconds();
  long iterations = 0;
  int not_converged = 0, unobserved = 0, partial = 0;
  double rms_sum = 0, max_err = 0;
  double max_err_t = 0;
  for (int f = 0; f < nframes; f++) {
    const int row = i0 + f;
    const double t = mbs_table_get(r.markers, row, 0);
    int missing = 0;
    for (int i = 0; i < r.nused; i++)
      for (int k = 0; k < 3; k++) {
        const double v = mbs_table_get(r.markers, row, 1 + 3 * r.used[i] + k);
        r.obs[3 * i + k] = v;
        if (k == 0 && !isfinite(v)) missing++;
      }
    for (int j = 0; j < r.nctask; j++) {
      const ik_task* k = &r.ctask[j];
      if (k->type == 0)
        r.targets[j] = mbs_osim_coordinate_info(r.m, k->coordinate)->default_value;
      else if (k->type == 1)
        r.targets[j] = k->value;
      else {
        double d[3];
        mbs_table_spline_eval(r.spline, k->column, t, d);
        r.targets[j] = d[0];
      }
    }
    mbs_state_set_time(r.st, t);
    mbs_ik_report rep;
    if (mbs_ik_solve(r.ik, sys, r.st, r.obs, r.targets, &rep)) {
      if (!o->quiet) mbs_progress_finish(&prog);
      LOG(o, "%s: frame %d (t = %g s): %s\n", marker_file, row + 1, t,
          mbs_state_error(r.st)->message);
      goto done;
    }
    iterations += rep.iterations;
    if (!rep.converged && not_converged++ < 5)
      WARN(o, "frame %d (t = %g s): the solver stopped after %d iterations with a last step of "
              "%.3g (accuracy %g)\n", row + 1, t, rep.iterations, rep.step, accuracy);
    if (rep.nobserved == 0 && unobserved++ < 5)
      WARN(o, "frame %d (t = %g s): no tracked marker is observed; the pose of the frame before "
              "is kept%s\n", row + 1, t, r.nctask ? " but for the coordinate tasks" : "");
    if (missing) partial++;
    // results
    mbs_osim_get_coordinates(r.m, r.st, r.qv, r.qv + ncoord);
    double* mrow = r.motion->data + (size_t)f * r.motion->ncol;
    mrow[0] = t;
    for (int i = 0; i < ncoord; i++) {
      mrow[1 + i] = r.rot[i] ? r.qv[i] * (180 / M_PI) : r.qv[i];
    }
    const double* e2 = mbs_ik_marker_squared_errors(r.ik);
    double total = 0, worst = 0;
    for (int i = 0; i < r.nused; i++) {
      total += e2[i];
      if (e2[i] > worst) worst = e2[i];
    }
    const double rms = sqrt(total / r.nused);
    rms_sum += rms;
    if (sqrt(worst) > max_err) {
      max_err = sqrt(worst);
      max_err_t = t;
    }
    if (r.errors) {
      double* er = r.errors->data + (size_t)f * 4;
      er[0] = t;
      er[1] = total;
      er[2] = rms;
      er[3] = sqrt(worst);
    }
    if (r.locations) {
      double* lr = r.locations->data + (size_t)f * r.locations->ncol;
      lr[0] = t;
      memcpy(lr + 1, mbs_ik_marker_locations(r.ik), 3 * (size_t)r.nused * sizeof(double));
    }
    if (!o->quiet) mbs_progress_update(&prog, f + 1);
  }
  const double wall = mbs_wall_seconds() - wall0;
  if (!o->quiet) mbs_progress_finish(&prog);
  if (not_converged > 5) WARN(o, "... %d frames did not converge in all\n", not_converged);
  if (unobserved > 5) WARN(o, "... %d frames without an observed marker in all\n", unobserved);
  if (partial)
    LOG(o, "note: %d frames miss some markers; those markers were left out of those frames\n",
        partial);

  // files
  if (mbs_make_dirs(results)) {
    LOG(o, "cannot create the results directory %s: %s\n", results, strerror(errno));
    goto done;
  }
  if (motion_path) {
    char* slash = strrchr(motion_path, '/');
    if (slash && slash != motion_path) {
      *slash = 0;
      const int mk = mbs_make_dirs(motion_path);
      *slash = '/';
      if (mk) {
        LOG(o, "cannot create the folder of %s: %s\n", motion_path, strerror(errno));
        goto done;
      }
    }
    if (mbs_table_write_sto(r.motion, motion_path, 1, &err)) {
      LOG(o, "%s\n", err.message);
      goto done;
    }
    LOG(o, "wrote %s\n", motion_path);
  }
  char fpath[4096];
  if (r.errors) {
    snprintf(fpath, sizeof(fpath), "%s/%s_ik_marker_errors.sto", results, trial);
    if (mbs_table_write_sto(r.errors, fpath, 1, &err)) {
      LOG(o, "%s\n", err.message);
      goto done;
    }
    LOG(o, "wrote %s\n", fpath);
  }
  if (r.locations) {
    snprintf(fpath, sizeof(fpath), "%s/%s_ik_model_marker_locations.sto", results, trial);
    if (mbs_table_write_sto(r.locations, fpath, 1, &err)) {
      LOG(o, "%s\n", err.message);
      goto done;
    }
    LOG(o, "wrote %s\n", fpath);
  }
  LOG(o, "%d frames in %.3g s (%.0f frames/s, %.1f iterations per frame); marker error RMS "
         "%.4g m on average, largest %.4g m (t = %g s)\n", nframes, wall,
      wall > 0 ? nframes / wall : 0.0, (double)iterations / nframes, rms_sum / nframes, max_err,
      max_err_t);
  rc = 0;
done:
  run_free(&r);
  free(model);
  free(marker_file);
  free(coord_file);
  free(results);
  free(motion_path);
  return rc;
}
