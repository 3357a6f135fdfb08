// OpenSim's InverseDynamicsTool (include/mbs/inverse_dynamics.h).
//
// What OpenSim 4 does (opensim-core: InverseDynamicsTool::run, DynamicsTool::disableModelForces,
// InverseDynamicsSolver::solve, Model::getCoordinatesInMultibodyTreeOrder, CustomJoint::
// constructCoordinates, SimbodyEngine::scaleRotationalDofColumns, Joint::
// calcEquivalentSpatialForce, Simbody's MultibodyGraphMaker::growTree) and how it is done here:
//  - The model file is read twice: once here with libxml2 for what the model reader does not
//    keep (the ForceSet's classes and groups, CustomJoint axis functions, the JointSet order and
//    each joint's child frame name), then by mbs_osim_read_options with the excluded forces
//    left out (OpenSim sets appliesForce false on them, which is the same for one tool run and
//    costs nothing per frame).
//  - Coordinates: the steps listed in io/table_filter.c (pad nrow/2, resample at the smallest
//    step when the steps differ by more than machine epsilon, low-pass), degrees to radians,
//    natural quintic splines.
//  - Each frame sets q, u = q' (coordinate by coordinate, as OpenSim's coordinatesToSpeeds map)
//    and time, realizes Dynamics (gravity, external loads, remaining forces) and takes
//    mbs_calc_inverse_dynamics, which ignores constraints as calcResidualForceIgnoringConstraints.
#include "mbs/inverse_dynamics.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <lapacke.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/dynamics.h"
#include "mbs/system.h"
#include "xml_read.h"

// limits of the allocation-free evaluation (stack buffers)
#define ID_MAX_COORD 1024
#define ID_MAX_U 1024

enum { MOTION_ROTATIONAL = 0, MOTION_TRANSLATIONAL, MOTION_COUPLED, MOTION_UNDEFINED };

//---------------------------------- small helpers ----------------------------------------------

typedef struct strlist {
  char** s;
  int n, cap;
} strlist;

static int sl_push_own(strlist* l, char* s) {
  if (!s) return 0;
  if (l->n == l->cap) {
    const int cap = l->cap ? 2 * l->cap : 8;
    char** p = realloc(l->s, (size_t)cap * sizeof(char*));
    if (!p) {
      free(s);
      return 0;
    }
    l->s = p;
    l->cap = cap;
  }
  l->s[l->n++] = s;
  return 1;
}

static int sl_push(strlist* l, const char* s) { return sl_push_own(l, strdup(s ? s : "")); }

static void sl_free(strlist* l) {
  for (int i = 0; i < l->n; i++) free(l->s[i]);
  free(l->s);
  memset(l, 0, sizeof(*l));
}

static int sl_find(const strlist* l, const char* s) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->s[i], s)) return i;
  return -1;
}

static const char* base_name(const char* p) {
  const char* s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int same_nocase(const char* a, const char* b) {
  for (; *a && *b; a++, b++)
    if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return 0;
  return *a == *b;
}

static int ends_with(const char* s, const char* end) {
  const size_t n = strlen(s), m = strlen(end);
  return n >= m && !strcmp(s + n - m, end);
}

//---------------------------------- what the model file says -----------------------------------

typedef struct model_facts {
  strlist force_name, force_kind;     // the ForceSet, in file order
  strlist group_name;                 // its groups
  strlist* group_members;             // per group
  strlist cc_name;                    // CustomJoint coordinates ...
  int* cc_motion;                     // ... OpenSim's motion type for them
  int* cc_rank;                       // ... and their place in their joint (transform order)
  int cap_cc;
  strlist joint_name, joint_child;    // joints in file order, their child frame names
} model_facts;

static void facts_free(model_facts* f) {
  sl_free(&f->force_name);
  sl_free(&f->force_kind);
  for (int i = 0; i < f->group_name.n; i++) sl_free(&f->group_members[i]);
  free(f->group_members);
  sl_free(&f->group_name);
  sl_free(&f->cc_name);
  free(f->cc_motion);
  free(f->cc_rank);
  sl_free(&f->joint_name);
  sl_free(&f->joint_child);
}

static int is_elem(xmlNodePtr n) { return n && n->type == XML_ELEMENT_NODE; }
static const char* tag(xmlNodePtr n) { return (const char*)n->name; }

static xmlNodePtr child(xmlNodePtr n, const char* name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is_elem(c) && !strcmp(tag(c), name)) return c;
  return NULL;
}

// the name attribute (malloc'd, "" when none)
static char* name_of(xmlNodePtr n) {
  xmlChar* a = xmlGetProp(n, (const xmlChar*)"name");
  char* s = strdup(a ? (const char*)a : "");
  xmlFree(a);
  return s;
}

// the text of an element, trimmed (malloc'd, "" when none)
static char* text_of(xmlNodePtr n) {
  xmlChar* c = n ? xmlNodeGetContent(n) : NULL;
  const char* s = c ? (const char*)c : "";
  while (isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len && isspace((unsigned char)s[len - 1])) len--;
  char* out = malloc(len + 1);
  if (out) {
    memcpy(out, s, len);
    out[len] = 0;
  }
  xmlFree(c);
  return out;
}

// the class a model element is read as (--rename-type)
static const char* renamed(const mbs_id_options* o, const char* kind) {
  for (int i = 0; i < o->nrename_types; i++)
    if (!strcmp(o->rename_types[2 * i], kind)) return o->rename_types[2 * i + 1];
  return kind;
}

static int is_muscle_kind(const char* k) { return ends_with(k, "Muscle") || strstr(k, "Muscle_"); }
static int is_actuator_kind(const char* k) {
  return is_muscle_kind(k) || ends_with(k, "Actuator") || !strcmp(k, "ClutchedPathSpring");
}

// the ForceSet: forces and groups
static int read_force_set(model_facts* f, xmlNodePtr set, const mbs_id_options* o) {
  for (xmlNodePtr e = child(set, "objects") ? child(set, "objects")->children : NULL; e;
       e = e->next) {
    if (!is_elem(e)) continue;
    if (!sl_push_own(&f->force_name, name_of(e)) || !sl_push(&f->force_kind, renamed(o, tag(e))))
      return 0;
  }
  for (xmlNodePtr g = child(set, "groups") ? child(set, "groups")->children : NULL; g;
       g = g->next) {
    if (!is_elem(g)) continue;
    strlist* gm = realloc(f->group_members, (size_t)(f->group_name.n + 1) * sizeof(strlist));
    if (!gm) return 0;
    f->group_members = gm;
    memset(&gm[f->group_name.n], 0, sizeof(strlist));
    if (!sl_push_own(&f->group_name, name_of(g))) return 0;
    char* list = text_of(child(g, "members"));
    if (!list) return 0;
    char* save = NULL;
    for (char* w = strtok_r(list, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
      if (!sl_push(&gm[f->group_name.n - 1], w)) {
        free(list);
        return 0;
      }
    free(list);
  }
  return 1;
}

// the function element of a TransformAxis (OpenSim 4 writes it directly, 3.x inside <function>)
static xmlNodePtr axis_function(xmlNodePtr ta) {
  xmlNodePtr fn = child(ta, "function");
  if (fn) {
    for (xmlNodePtr c = fn->children; c; c = c->next)
      if (is_elem(c)) return c;
    return NULL;
  }
  for (xmlNodePtr c = ta->children; c; c = c->next)
    if (is_elem(c) && strcmp(tag(c), "coordinates") && strcmp(tag(c), "axis")) return c;
  return NULL;
}

// CustomJoint::constructCoordinates (OpenSim 4.4 and later): a coordinate's motion type from
// the axes that use it, in axis order: an axis whose function is a LinearFunction of slope +1
// or -1 makes it Rotational (rotation axes) or Translational (translation axes), the last such
// axis deciding; any other function makes it Coupled unless an axis already decided; no axis
// with a function leaves it Undefined (neither rotational nor translational). Its rank is its
// place in the order of first appearance over the axes, the order OpenSim gives the joint's
// coordinates (and their mobilities).
static int custom_joint_motion(model_facts* f, xmlNodePtr j) {
  xmlNodePtr st = child(j, "SpatialTransform");
  static const char* axes[6] = {"rotation1", "rotation2", "rotation3",
                                "translation1", "translation2", "translation3"};
  xmlNodePtr ta[6] = {NULL};
  for (xmlNodePtr c = st ? st->children : NULL; c; c = c->next) {
    if (!is_elem(c) || strcmp(tag(c), "TransformAxis")) continue;
    char* nm = name_of(c);
    for (int a = 0; nm && a < 6; a++)
      if (!strcmp(nm, axes[a])) ta[a] = c;
    free(nm);
  }
  strlist names = {0}, axis_coords[6];
  memset(axis_coords, 0, sizeof(axis_coords));
  int ok = 1;
  for (int a = 0; a < 6 && ok; a++) {
    if (!ta[a]) continue;
    char* list = text_of(child(ta[a], "coordinates"));
    if (!list) {
      ok = 0;
      break;
    }
    char* save = NULL;
    for (char* w = strtok_r(list, " \t\r\n", &save); w && ok;
         w = strtok_r(NULL, " \t\r\n", &save)) {
      ok = sl_push(&axis_coords[a], w);
      if (ok && sl_find(&names, w) < 0) ok = sl_push(&names, w);
    }
    free(list);
  }
  for (int i = 0; ok && i < names.n; i++) {
    int mt = MOTION_UNDEFINED;
    for (int a = 0; a < 6; a++) {
      if (sl_find(&axis_coords[a], names.s[i]) < 0) continue;
      xmlNodePtr fn = axis_function(ta[a]);
      if (!fn) continue;  // (no function)
      double slope = NAN;
      if (!strcmp(tag(fn), "LinearFunction")) {
        char* cs = text_of(child(fn, "coefficients"));
        slope = cs ? strtod(cs, NULL) : NAN;
        free(cs);
      }
      if (slope == 1.0 || slope == -1.0)
        mt = a < 3 ? MOTION_ROTATIONAL : MOTION_TRANSLATIONAL;
      else if (mt == MOTION_UNDEFINED)
        mt = MOTION_COUPLED;
    }
    if (f->cc_name.n == f->cap_cc) {
      const int cap = f->cap_cc ? 2 * f->cap_cc : 16;
      int* p = realloc(f->cc_motion, (size_t)cap * sizeof(int));
      if (p) f->cc_motion = p;
      int* r = p ? realloc(f->cc_rank, (size_t)cap * sizeof(int)) : NULL;
      if (r) f->cc_rank = r;
      if (!p || !r) {
        ok = 0;
        break;
      }
      f->cap_cc = cap;
    }
    f->cc_motion[f->cc_name.n] = mt;
    f->cc_rank[f->cc_name.n] = i;
    ok = sl_push(&f->cc_name, names.s[i]);
  }
  sl_free(&names);
  for (int a = 0; a < 6; a++) sl_free(&axis_coords[a]);
  return ok;
}

// a non-zero vector property (3.x location_in_child, orientation_in_child)
static int nonzero_vec(xmlNodePtr n) {
  char* s = text_of(n);
  int nz = 0;
  char* p = s;
  for (int k = 0; p && k < 3; k++) {
    char* e;
    const double v = strtod(p, &e);
    if (e == p) break;
    nz |= v != 0;
    p = e;
  }
  free(s);
  return nz;
}

// a joint's child frame name (OpenSim 4 socket, the 4.0 connector, or the 3.x body holding the
// joint, "<body>_offset" when the joint sits away from the body's origin)
static char* joint_child_frame(xmlNodePtr j) {
  xmlNodePtr s = child(j, "socket_child_frame");
  if (s) {
    char* t = text_of(s);
    char* out = t ? strdup(base_name(t)) : NULL;
    free(t);
    return out;
  }
  for (xmlNodePtr c = child(j, "connectors") ? child(j, "connectors")->children : NULL; c;
       c = c->next) {
    if (!is_elem(c)) continue;
    char* nm = name_of(c);
    const int hit = nm && (!strcmp(nm, "child_frame") || !strcmp(nm, "child_body"));
    free(nm);
    if (hit) {
      char* t = text_of(child(c, "connectee_name"));
      char* out = t ? strdup(base_name(t)) : NULL;
      free(t);
      return out;
    }
  }
  xmlNodePtr holder = j->parent;
  if (holder && is_elem(holder) && !strcmp(tag(holder), "Joint") && holder->parent &&
      is_elem(holder->parent) && !strcmp(tag(holder->parent), "Body")) {
    char* b = name_of(holder->parent);
    if (b && (nonzero_vec(child(j, "location_in_child")) ||
              nonzero_vec(child(j, "orientation_in_child")))) {
      char* o = mbs_format_string("%s_offset", b);
      free(b);
      return o;
    }
    return b;
  }
  return strdup("");
}

// joints (elements named *Joint with a name, in document order) and CustomJoint coordinates
static int walk_joints(model_facts* f, xmlNodePtr n) {
  for (xmlNodePtr c = n->children; c; c = c->next) {
    if (!is_elem(c)) continue;
    const char* t = tag(c);
    if (strlen(t) > 5 && ends_with(t, "Joint") && xmlHasProp(c, (const xmlChar*)"name")) {
      if (!sl_push_own(&f->joint_name, name_of(c)) ||
          !sl_push_own(&f->joint_child, joint_child_frame(c)))
        return 0;
      if (!strcmp(t, "CustomJoint") && !custom_joint_motion(f, c)) return 0;
    }
    if (!walk_joints(f, c)) return 0;
  }
  return 1;
}

static int read_facts(const char* path, const mbs_id_options* o, model_facts* f,
                      mbs_error* err) {
  memset(f, 0, sizeof(*f));
  FILE* probe = fopen(path, "r");
  if (!probe)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: model_file: cannot open: %s", path,
                    strerror(errno));
  fclose(probe);
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(path, NULL, 0, 0, "a model file", &xf);
  if (!doc)
    return MBS_FAIL(err, xf.io ? MBS_ERR_IO : MBS_ERR_PARSE, path, "%s:%d: model_file: %s", path,
                    xf.line, xf.msg);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr model = root && !strcmp(tag(root), "Model") ? root : child(root, "Model");
  int ok = 1;
  if (model) {
    xmlNodePtr fs = child(model, "ForceSet");
    if (!fs) fs = child(model, "ActuatorSet");  // OpenSim 1.x
    if (fs) ok = read_force_set(f, fs, o);
    if (ok) ok = walk_joints(f, model);
  }
  xmlFreeDoc(doc);
  if (!ok) {
    facts_free(f);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
  }
  return MBS_OK;
}

//---------------------------------- the prepared tool ------------------------------------------

typedef struct id_coord {
  int col;          // column of the processed table (>= 1), or 0: held at `value`
  double value;
  int qi, ui;
} id_coord;

struct mbs_id {
  mbs_osim_model* m;
  strlist warnings;
  strlist excluded;
  int ncoord;
  id_coord* coord;          // per model coordinate
  int* column_coord;        // column -> model coordinate
  int* column_u;            // column -> speed index
  strlist labels;
  mbs_table* coords;        // processed coordinates
  mbs_table_spline* spline;
  int nframe;
  double* times;
  int nu;
  // body forces
  int njoint;
  int* joint_body;
  int* joint_frame_param;   // parameter index of the child frame's translation, or -1
  strlist bf_labels;
};

static void warn(mbs_id* id, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(mbs_id* id, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  sl_push(&id->warnings, buf);
}

void mbs_id_options_default(mbs_id_options* o) {
  memset(o, 0, sizeof(*o));
  o->lowpass_hz = -1;
  o->time_range[0] = -INFINITY;
  o->time_range[1] = INFINITY;
}

void mbs_id_free(mbs_id* id) {
  if (!id) return;
  mbs_osim_free(id->m);
  sl_free(&id->warnings);
  sl_free(&id->excluded);
  free(id->coord);
  free(id->column_coord);
  free(id->column_u);
  sl_free(&id->labels);
  mbs_table_free(id->coords);
  mbs_table_spline_free(id->spline);
  free(id->times);
  free(id->joint_body);
  free(id->joint_frame_param);
  sl_free(&id->bf_labels);
  free(id);
}

// DynamicsTool::disableModelForces on the file's ForceSet: the names to leave out
static int resolve_excluded(mbs_id* id, const model_facts* f, const mbs_id_options* o) {
  unsigned char* out = calloc((size_t)f->force_name.n + 1, 1);
  if (!out) return 0;
  for (int i = 0; i < o->nexclude; i++) {
    const char* item = o->exclude[i];
    if (same_nocase(item, "ALL")) {
      memset(out, 1, (size_t)f->force_name.n);
      break;  // OpenSim stops at All
    }
    const int act = same_nocase(item, "ACTUATORS"), mus = same_nocase(item, "MUSCLES");
    if (act || mus) {
      for (int k = 0; k < f->force_name.n; k++)
        if (mus ? is_muscle_kind(f->force_kind.s[k]) : is_actuator_kind(f->force_kind.s[k]))
          out[k] = 1;
      continue;
    }
    if (f->group_name.n > 0) {
      const int g = sl_find(&f->group_name, item);
      if (g >= 0) {
        for (int k = 0; k < f->group_members[g].n; k++) {
          const int fi = sl_find(&f->force_name, f->group_members[g].s[k]);
          if (fi >= 0) out[fi] = 1;
        }
      } else if (sl_find(&f->force_name, item) >= 0) {
        warn(id, "forces_to_exclude: '%s' is a force, not a group of the ForceSet; OpenSim 4 "
                 "looks force names up only when the ForceSet has no groups, so it is not "
                 "excluded", item);
      } else {
        warn(id, "forces_to_exclude: no force or group named '%s' in the model; nothing "
                 "excluded for it", item);
      }
    } else {
      const int k = sl_find(&f->force_name, item);
      if (k >= 0) out[k] = 1;
      else
        warn(id, "forces_to_exclude: no force or group named '%s' in the model; nothing "
                 "excluded for it", item);
    }
  }
  int ok = 1;
  for (int k = 0; k < f->force_name.n && ok; k++)
    if (out[k]) ok = sl_push(&id->excluded, f->force_name.s[k]);
  free(out);
  return ok;
}

// OpenSim's motion type of model coordinate i (CustomJoint: by the rule above; other joints:
// the joint type's, which the model reader gives)
static int opensim_motion(const model_facts* f, const mbs_osim_coordinate* c) {
  const int k = sl_find(&f->cc_name, c->name);
  if (k >= 0) return f->cc_motion[k];
  return c->motion == MBS_OSIM_ROTATIONAL ? MOTION_ROTATIONAL
         : c->motion == MBS_OSIM_TRANSLATIONAL ? MOTION_TRANSLATIONAL
                                               : MOTION_COUPLED;
}

// a coordinate's place among its joint's (CustomJoint: its spatial transform's order)
static int coordinate_rank(const model_facts* f, const mbs_osim_coordinate* c) {
  const int k = sl_find(&f->cc_name, c->name);
  return k >= 0 ? f->cc_rank[k] : c->axis;
}

static double body_mass(const mbs_system* sys, int b) {
  char path[600];
  snprintf(path, sizeof(path), "/bodyset/%s/mass", mbs_body_name(sys, b));
  const mbs_param_info* p = mbs_system_find_param(sys, path);
  return p ? mbs_system_param_default(sys, p->index) : 1;
}

// Simbody's MultibodyGraphMaker::growTree on the model's tree: level by level, joints in
// JointSet order, a mobile massless body followed at once by its heaviest child. The bodies
// in that order (the order of OpenSim's mobilized bodies) into order[] (nbody - 1 entries).
static int tree_order(const mbs_system* sys, const model_facts* f, int* order) {
  const int nb = mbs_system_nbody(sys);
  int* level = malloc((size_t)nb * sizeof(int));
  int* joints = malloc((size_t)nb * sizeof(int));
  double* key = malloc((size_t)nb * sizeof(double));
  if (!level || !joints || !key) {
    free(level);
    free(joints);
    free(key);
    return 0;
  }
  for (int b = 0; b < nb; b++) {
    level[b] = b == 0 ? 0 : -1;
    const int j = b ? sl_find(&f->joint_name, mbs_body_mobilizer_name(sys, b)) : -1;
    key[b] = j >= 0 ? j : 1e9 + b;  // joints the file does not name (added ones) last
  }
  int nj = 0;
  for (int b = 1; b < nb; b++) joints[nj++] = b;
  for (int i = 1; i < nj; i++)  // stable insertion sort by file order
    for (int k = i; k > 0 && key[joints[k - 1]] > key[joints[k]]; k--) {
      const int t = joints[k];
      joints[k] = joints[k - 1];
      joints[k - 1] = t;
    }
  int n = 0;
  for (int lv = 1;; lv++) {
    int any = 0;
    for (int i = 0; i < nj; i++) {
      const int b = joints[i];
      if (level[b] >= 0) {
        if (level[b] == lv) any = 1;
        continue;
      }
      const int p = mbs_body_parent(sys, b);
      if (level[p] != lv - 1) continue;
      level[b] = lv;
      order[n++] = b;
      any = 1;
      // a mobile massless body: extend its branch to a massive body right away
      for (int cur = b; mbs_body_nu(sys, cur) > 0 && body_mass(sys, cur) <= 0;) {
        int best = -1;
        double mmax = 0;
        for (int k = 0; k < nj; k++) {
          const int c = joints[k];
          if (level[c] < 0 && mbs_body_parent(sys, c) == cur && body_mass(sys, c) > mmax) {
            best = c;
            mmax = body_mass(sys, c);
          }
        }
        if (best < 0) break;
        level[best] = level[cur] + 1;
        order[n++] = best;
        cur = best;
      }
    }
    if (!any) break;
  }
  for (int b = 1; b < nb && n < nb - 1; b++)  // (unreachable bodies, should there be any)
    if (level[b] < 0) order[n++] = b;
  free(level);
  free(joints);
  free(key);
  return 1;
}

// the column of the coordinates table holding coordinate `name`: the name itself, or an
// OpenSim 4 state label /jointset/<joint>/<name>/value
static int coordinate_column(const mbs_table* t, const char* name) {
  int k = mbs_table_column(t, name);
  if (k > 0) return k;
  const size_t n = strlen(name);
  for (int c = 1; c < t->ncol; c++) {
    const char* l = t->labels[c];
    if (l[0] != '/' || !ends_with(l, "/value")) continue;
    const size_t len = strlen(l) - 6;  // without "/value"
    if (len > n && l[len - n - 1] == '/' && !strncmp(l + len - n, name, n)) return c;
  }
  return -1;
}

// read and process the coordinates: the table of the coordinates found, ready for splines
static int prepare_coordinates(mbs_id* id, const model_facts* f, const mbs_id_options* o,
                               mbs_error* err) {
  const char* file = o->coordinates_file;
  mbs_table* raw = NULL;
  int rc = mbs_table_read(file, &raw, err);
  if (rc) return rc;
  const int nc = id->ncoord;
  int* src = malloc(((size_t)nc + 1) * sizeof(int));
  const char** labels = malloc(((size_t)nc + 1) * sizeof(char*));
  int nfound = 0;
  if (!src || !labels) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, file, "%s: out of memory", file);
    goto done;
  }
  if (raw->nmarkers > 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: coordinates_file is a marker file; give the "
                  "coordinates (.mot or .sto)", file);
    goto done;
  }
  labels[0] = "time";
  for (int i = 0; i < nc; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(id->m, i);
    const int col = coordinate_column(raw, c->name);
    id->coord[i].col = 0;
    id->coord[i].value = c->default_value;
    if (col < 0) {
      warn(id, "%s: no column for coordinate '%s'; it is held at its default value %g, as "
               "OpenSim does", file, c->name, c->default_value);
      continue;
    }
    id->coord[i].col = ++nfound;
    src[nfound] = col;
    labels[nfound] = c->name;
  }
  if (nfound == 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: no column names a coordinate of model '%s' "
                  "(the first column after time is '%s')", file, mbs_osim_name(id->m),
                  raw->ncol > 1 ? raw->labels[1] : "(none)");
    goto done;
  }
  if (raw->nrow < 6) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: %d rows; OpenSim's quintic splines need at "
                  "least 6", file, raw->nrow);
    goto done;
  }
  for (int r = 0; r < raw->nrow; r++) {
    const double t = mbs_table_get(raw, r, 0);
    if (!isfinite(t) || (r > 0 && !(t > mbs_table_get(raw, r - 1, 0)))) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, file, "%s: data row %d: time %.9g %s", file, r + 1, t,
                    isfinite(t) ? "does not increase" : "is not a number");
      goto done;
    }
    for (int k = 1; k <= nfound; k++)
      if (!isfinite(mbs_table_get(raw, r, src[k]))) {
        rc = MBS_FAIL(err, MBS_ERR_NAN, file, "%s: data row %d (time %.9g): coordinate '%s' "
                      "is %g", file, r + 1, t, labels[k], mbs_table_get(raw, r, src[k]));
        goto done;
      }
  }
  mbs_table* t = NULL;
  if ((rc = mbs_table_create(&t, raw->name, raw->nrow, nfound + 1, labels, err))) goto done;
  for (int r = 0; r < raw->nrow; r++) {
    t->data[(size_t)r * t->ncol] = mbs_table_get(raw, r, 0);
    for (int k = 1; k <= nfound; k++)
      t->data[(size_t)r * t->ncol + k] = mbs_table_get(raw, r, src[k]);
  }
  if (o->lowpass_hz >= 0) {
    if (!(o->lowpass_hz > 0) || !isfinite(o->lowpass_hz)) {
      mbs_table_free(t);
      rc = MBS_FAIL(err, MBS_ERR_PARAMETER, file, "lowpass_cutoff_frequency_for_coordinates %g "
                    "Hz cannot filter (give a positive cutoff, or a negative value for none)",
                    o->lowpass_hz);
      goto done;
    }
    // Storage::pad(size / 2), then Storage::lowpassIIR: resample at the smallest step when the
    // steps are not uniform to machine precision, filter with T = that step
    mbs_table *p = NULL, *g = NULL;
    rc = mbs_table_pad(t, t->nrow / 2, &p, err);
    mbs_table_free(t);
    t = p;
    if (!rc) {
      double dtmin = mbs_table_min_step(t);
      const double avg =
          (mbs_table_get(t, t->nrow - 1, 0) - mbs_table_get(t, 0, 0)) / (t->nrow - 1);
      if (avg - dtmin > DBL_EPSILON) {
        const double span = mbs_table_get(t, t->nrow - 1, 0) - mbs_table_get(t, 0, 0);
        if (span / dtmin > 100000) {  // Storage::MAX_RESAMPLE_SIZE
          warn(id, "%s: resampling at a step of %g s (the smallest step, %g s, would give more "
                   "than 100000 rows), as OpenSim does", file, span / 100000, dtmin);
          dtmin = span / 100000;
        }
        rc = mbs_table_resample(t, dtmin, &g, err);
        mbs_table_free(t);
        t = g;
      }
    }
    if (!rc) {
      const double T = (mbs_table_get(t, t->nrow - 1, 0) - mbs_table_get(t, 0, 0)) / (t->nrow - 1);
      double fc = o->lowpass_hz;
      if (fc >= 0.5 / T) {
        fc = 0.49 / T;
        warn(id, "lowpass_cutoff_frequency_for_coordinates %g Hz is not below half the "
                 "sampling rate of %s (%g Hz); %g Hz is used, as OpenSim does", o->lowpass_hz,
             file, 1 / T, fc);
      }
      rc = mbs_table_lowpass(t, fc, NULL, 0, 0, err);
    }
    if (rc) {
      char msg[MBS_ERROR_MESSAGE_LEN];
      snprintf(msg, sizeof(msg), "%s", err->message);
      mbs_table_free(t);
      rc = MBS_FAIL(err, rc, file, "%s: filtering the coordinates: %s", file, msg);
      goto done;
    }
  }
  // degrees to radians for the coordinates OpenSim calls rotational
  if (raw->in_degrees) {
    for (int i = 0; i < nc; i++) {
      const int k = id->coord[i].col;
      if (!k || opensim_motion(f, mbs_osim_coordinate_info(id->m, i)) != MOTION_ROTATIONAL)
        continue;
      for (int r = 0; r < t->nrow; r++) t->data[(size_t)r * t->ncol + k] *= M_PI / 180;
    }
  }
  t->in_degrees = 0;
  id->coords = t;
  rc = mbs_table_spline_create(t, &id->spline, err);
  if (rc) {
    char msg[MBS_ERROR_MESSAGE_LEN];
    snprintf(msg, sizeof(msg), "%s", err->message);
    rc = MBS_FAIL(err, rc, file, "%s: splines of the coordinates: %s", file, msg);
    goto done;
  }
  // the frames: Storage::findIndex of the clamped start and end times
  {
    const double first = mbs_table_get(t, 0, 0), last = mbs_table_get(t, t->nrow - 1, 0);
    const double d0 = mbs_table_get(raw, 0, 0), d1 = mbs_table_get(raw, raw->nrow - 1, 0);
    const double a = o->time_range[0], b = o->time_range[1];
    if (!(a <= b)) {
      rc = MBS_FAIL(err, MBS_ERR_PARAMETER, file, "time_range %g %g: the start is after the end",
                    a, b);
      goto done;
    }
    if (b < d0 || a > d1) {
      rc = MBS_FAIL(err, MBS_ERR_PARAMETER, file, "time_range %g %g lies outside the "
                    "coordinates in %s (%g to %g s)", a, b, file, d0, d1);
      goto done;
    }
    const double start = first > a ? first : a, end = last < b ? last : b;
    int i0 = 0, i1 = 0;
    for (int r = 0; r < t->nrow && mbs_table_get(t, r, 0) <= start; r++) i0 = r;
    for (int r = 0; r < t->nrow && mbs_table_get(t, r, 0) <= end; r++) i1 = r;
    id->nframe = i1 - i0 + 1;
    id->times = malloc((size_t)(id->nframe > 0 ? id->nframe : 1) * sizeof(double));
    if (!id->times) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, file, "out of memory");
      goto done;
    }
    for (int k = 0; k < id->nframe; k++) id->times[k] = mbs_table_get(t, i0 + k, 0);
    if (a < d0 || b > d1) {
      const double f0 = id->times[0], f1 = id->times[id->nframe - 1];
      if (f0 < d0 || f1 > d1)
        warn(id, "time_range %g %g extends past the coordinates in %s (%g to %g s); as "
                 "OpenSim, the frames from %g to %g s include the reflected padding the filter "
                 "added (not measured data)", a, b, file, d0, d1, f0, f1);
      else
        warn(id, "time_range %g %g extends past the coordinates in %s (%g to %g s); the "
                 "frames run from %g to %g s", a, b, file, d0, d1, f0, f1);
    }
  }
done:
  free(src);
  free(labels);
  mbs_table_free(raw);
  return rc;
}

// joints_to_report_body_forces (Joint names or "All": every joint, in tree order)
static int prepare_body_forces(mbs_id* id, const model_facts* f, const mbs_id_options* o,
                               const int* order) {
  const mbs_system* sys = mbs_osim_system(id->m);
  const int nb = mbs_system_nbody(sys);
  id->joint_body = malloc((size_t)nb * sizeof(int));
  id->joint_frame_param = malloc((size_t)nb * sizeof(int));
  if (!id->joint_body || !id->joint_frame_param) return 0;
  for (int i = 0; i < o->nreport_joints; i++) {
    const char* item = o->report_joints[i];
    if (same_nocase(item, "ALL")) {
      id->njoint = 0;
      for (int k = 0; k < nb - 1; k++)
        if (sl_find(&f->joint_name, mbs_body_mobilizer_name(sys, order[k])) >= 0)
          id->joint_body[id->njoint++] = order[k];
      break;
    }
    int b = -1;
    for (int k = 1; k < nb && b < 0; k++)
      if (!strcmp(mbs_body_mobilizer_name(sys, k), item)) b = k;
    if (b < 0) {
      warn(id, "joints_to_report_body_forces: no joint named '%s' in the model; its body "
               "forces are not reported", item);
      continue;
    }
    id->joint_body[id->njoint++] = b;
  }
  for (int j = 0; j < id->njoint; j++) {
    const int b = id->joint_body[j];
    const char* jn = mbs_body_mobilizer_name(sys, b);
    const int k = sl_find(&f->joint_name, jn);
    const char* frame =
        k >= 0 && *f->joint_child.s[k] ? f->joint_child.s[k] : mbs_body_name(sys, b);
    char path[600];
    snprintf(path, sizeof(path), "/jointset/%s/child_frame/translation", jn);
    const mbs_param_info* p = mbs_system_find_param(sys, path);
    id->joint_frame_param[j] = p ? p->index : -1;
    static const char* comp[6] = {"FX", "FY", "FZ", "MX", "MY", "MZ"};
    for (int c = 0; c < 6; c++)
      if (!sl_push_own(&id->bf_labels, mbs_format_string("%s_%s_%s", jn, frame, comp[c])))
        return 0;
  }
  return 1;
}

int mbs_id_create(const mbs_id_options* o, mbs_id** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!o || !out || !o->model_file || !o->coordinates_file)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "inverse dynamics",
                    "inverse dynamics: a model file and a coordinates file are needed");
  model_facts f;
  int rc = read_facts(o->model_file, o, &f, err);
  if (rc) return rc;
  mbs_id* id = calloc(1, sizeof(*id));
  int* order = NULL;
  if (!id || !resolve_excluded(id, &f, o)) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, o->model_file, "out of memory");
    goto fail;
  }
  {
    mbs_osim_options mo = {.external_loads = o->external_loads,
                           .rename_types = o->rename_types,
                           .nrename_types = o->nrename_types,
                           .param_values = o->param_values,
                           .nparam_values = o->nparam_values,
                           .exclude_forces = (const char* const*)id->excluded.s,
                           .nexclude_forces = id->excluded.n};
    id->m = mbs_osim_read_options(o->model_file, &mo, err);
  }
  if (!id->m) {
    rc = err->code ? err->code : MBS_ERR_PARSE;
    goto fail;
  }
  for (int i = 0; i < mbs_osim_nwarning(id->m); i++)
    sl_push(&id->warnings, mbs_osim_warning(id->m, i));
  const mbs_system* sys = mbs_osim_system(id->m);
  id->ncoord = mbs_osim_ncoordinate(id->m);
  id->nu = mbs_system_nu(sys);
  if (id->ncoord > ID_MAX_COORD || id->nu > ID_MAX_U) {
    rc = MBS_FAIL(err, MBS_ERR_PARAMETER, o->model_file, "%s: %d coordinates and %d speeds; "
                  "inverse dynamics handles up to %d", o->model_file, id->ncoord, id->nu,
                  ID_MAX_COORD);
    goto fail;
  }
  const int nb = mbs_system_nbody(sys);
  id->coord = calloc((size_t)id->ncoord + 1, sizeof(id_coord));
  id->column_coord = malloc(((size_t)id->ncoord + 1) * sizeof(int));
  id->column_u = malloc(((size_t)id->ncoord + 1) * sizeof(int));
  order = malloc((size_t)nb * sizeof(int));
  if (!id->coord || !id->column_coord || !id->column_u || !order || !tree_order(sys, &f, order)) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, o->model_file, "out of memory");
    goto fail;
  }
  // columns: the coordinates in tree order, body by body; within a body, a CustomJoint's in
  // the order of its spatial transform, the others in their joint's order
  int ncol = 0;
  for (int k = 0; k < nb - 1; k++) {
    const int first = ncol;
    for (int i = 0; i < id->ncoord; i++) {
      const mbs_osim_coordinate* c = mbs_osim_coordinate_info(id->m, i);
      if (c->body != order[k]) continue;
      int p = ncol++;  // insertion by rank
      while (p > first && coordinate_rank(&f, mbs_osim_coordinate_info(
                                                  id->m, id->column_coord[p - 1])) >
                              coordinate_rank(&f, c)) {
        id->column_coord[p] = id->column_coord[p - 1];
        p--;
      }
      id->column_coord[p] = i;
    }
  }
  for (int k = 0; k < ncol; k++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(id->m, id->column_coord[k]);
    id->column_u[k] = c->uindex;
    const int mt = opensim_motion(&f, c);
    if (!sl_push_own(&id->labels, mbs_format_string("%s_%s", c->name,
                                                    mt == MOTION_ROTATIONAL ? "moment"
                                                                            : "force"))) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, o->model_file, "out of memory");
      goto fail;
    }
  }
  if (ncol != id->ncoord) {
    rc = MBS_FAIL(err, MBS_ERR_INTERNAL, o->model_file, "%s: %d of %d coordinates placed in "
                  "tree order", o->model_file, ncol, id->ncoord);
    goto fail;
  }
  for (int i = 0; i < id->ncoord; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(id->m, i);
    id->coord[i].qi = c->qindex;
    id->coord[i].ui = c->uindex;
  }
  if ((rc = prepare_coordinates(id, &f, o, err))) goto fail;
  if (!prepare_body_forces(id, &f, o, order)) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, o->model_file, "out of memory");
    goto fail;
  }
  free(order);
  facts_free(&f);
  *out = id;
  return MBS_OK;
fail:
  free(order);
  facts_free(&f);
  mbs_id_free(id);
  return rc;
}

//---------------------------------- getters ----------------------------------------------------

int mbs_id_nwarning(const mbs_id* id) { return id->warnings.n; }
const char* mbs_id_warning(const mbs_id* id, int i) {
  return i >= 0 && i < id->warnings.n ? id->warnings.s[i] : NULL;
}
const mbs_osim_model* mbs_id_model(const mbs_id* id) { return id->m; }
int mbs_id_nexcluded(const mbs_id* id) { return id->excluded.n; }
const char* mbs_id_excluded(const mbs_id* id, int i) {
  return i >= 0 && i < id->excluded.n ? id->excluded.s[i] : NULL;
}
int mbs_id_nframe(const mbs_id* id) { return id->nframe; }
double mbs_id_frame_time(const mbs_id* id, int k) {
  return k >= 0 && k < id->nframe ? id->times[k] : NAN;
}
const mbs_table* mbs_id_coordinates(const mbs_id* id) { return id->coords; }
int mbs_id_ncolumn(const mbs_id* id) { return id->ncoord; }
const char* mbs_id_column_label(const mbs_id* id, int i) {
  return i >= 0 && i < id->labels.n ? id->labels.s[i] : NULL;
}
int mbs_id_column_coordinate(const mbs_id* id, int i) {
  return i >= 0 && i < id->ncoord ? id->column_coord[i] : -1;
}
int mbs_id_nbody_force_column(const mbs_id* id) { return id->bf_labels.n; }
const char* mbs_id_body_force_label(const mbs_id* id, int i) {
  return i >= 0 && i < id->bf_labels.n ? id->bf_labels.s[i] : NULL;
}

//---------------------------------- evaluation -------------------------------------------------

mbs_state* mbs_id_state_create(const mbs_id* id) {
  const mbs_system* sys = mbs_osim_system(id->m);
  mbs_state* st = mbs_state_create(sys);
  if (!st) return NULL;
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  for (int i = 0; i < id->ncoord; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(id->m, i);
    q[c->qindex] = c->default_value;
    u[c->uindex] = c->default_speed;
  }
  mbs_osim_file_auxiliary_states(id->m, st);
  return st;
}

int mbs_id_set_frame(const mbs_id* id, mbs_state* st, double t, double* udot) {
  const mbs_system* sys = mbs_osim_system(id->m);
  const int ns = id->coords->ncol;
  double v[ID_MAX_COORD + 1], d1[ID_MAX_COORD + 1], d2[ID_MAX_COORD + 1];
  mbs_table_spline_eval_all(id->spline, t, v, d1, d2);
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  memset(udot, 0, (size_t)id->nu * sizeof(double));
  for (int i = 0; i < id->ncoord; i++) {
    const id_coord* c = &id->coord[i];
    if (c->col > 0 && c->col < ns) {
      q[c->qi] = v[c->col];
      u[c->ui] = d1[c->col];
      udot[c->ui] = d2[c->col];
    } else {
      q[c->qi] = c->value;
      u[c->ui] = 0;
    }
  }
  mbs_state_set_time(st, t);
  return mbs_realize_dynamics(sys, st);
}

int mbs_id_eval(const mbs_id* id, mbs_state* st, double t, double* tau) {
  const mbs_system* sys = mbs_osim_system(id->m);
  double udot[ID_MAX_U], tu[ID_MAX_U];
  int rc = mbs_id_set_frame(id, st, t, udot);
  if (rc || (rc = mbs_calc_inverse_dynamics(sys, st, udot, tu))) return rc;
  for (int k = 0; k < id->ncoord; k++) tau[k] = tu[id->column_u[k]];
  return MBS_OK;
}

// min-norm least squares A x = f (A: m x 3 row-major), rank below rcond SignificantReal
static int lstsq3(const double* A, int m, const double* f, double x[3]) {
  double a[3 * 6], b[6];
  lapack_int jpvt[3] = {0, 0, 0}, rank = 0;
  memcpy(a, A, (size_t)(3 * m) * sizeof(double));
  for (int i = 0; i < 6; i++) b[i] = i < m ? f[i] : 0;
  const double rcond = pow(DBL_EPSILON, 0.875);
  const lapack_int info =
      LAPACKE_dgelsy(LAPACK_ROW_MAJOR, m, 3, 1, a, 3, b, 1, jpvt, rcond, &rank);
  for (int k = 0; k < 3; k++) x[k] = info == 0 && rank > 0 ? b[k] : 0;
  return info == 0 ? (int)rank : -1;
}

static void mat_vec3(const double* A, int m, const double x[3], double* y) {
  for (int i = 0; i < m; i++) y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}

static double norm(const double* v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * v[i];
  return sqrt(s);
}

int mbs_id_body_forces(const mbs_id* id, mbs_state* st, double t, const double* tau,
                       double* F) {
  const mbs_system* sys = mbs_osim_system(id->m);
  const int nb = mbs_system_nbody(sys);
  double udot[ID_MAX_U], tu[ID_MAX_U];
  int rc = mbs_id_set_frame(id, st, t, udot);
  if (rc) return rc;
  memset(tu, 0, (size_t)id->nu * sizeof(double));
  for (int k = 0; k < id->ncoord; k++) tu[id->column_u[k]] = tau[k];
  double* V = malloc((size_t)nb * 6 * sizeof(double));
  double* e = calloc((size_t)id->nu + 1, sizeof(double));
  if (!V || !e) {
    free(V);
    free(e);
    return MBS_ERR_NO_MEMORY;
  }
  const double sig = pow(DBL_EPSILON, 0.875);
  const double* params = mbs_state_params(st);
  for (int j = 0; j < id->njoint && !rc; j++) {
    double* Fj = F + 6 * j;
    memset(Fj, 0, 6 * sizeof(double));
    const int b = id->joint_body[j], nu = mbs_body_nu(sys, b), ua = mbs_body_uadr(sys, b);
    if (nu == 0 || nu > 6) continue;
    // H of the mobilizer at the origin of its child frame M, in Ground: angular rows Aw,
    // linear rows Av (the velocity of M's origin per unit speed)
    double pB[3], pM[3], zero[3] = {0, 0, 0}, Aw[18], Av[18], f[6];
    const double* p_BM = id->joint_frame_param[j] >= 0 ? params + id->joint_frame_param[j] : zero;
    if ((rc = mbs_get_station_location(sys, st, b, zero, pB)) ||
        (rc = mbs_get_station_location(sys, st, b, p_BM, pM)))
      break;
    const double r[3] = {pM[0] - pB[0], pM[1] - pB[1], pM[2] - pB[2]};
    for (int i = 0; i < nu && !rc; i++) {
      e[ua + i] = 1;
      rc = mbs_calc_jacobian_times(sys, st, e, V);
      e[ua + i] = 0;
      const double* w = V + 6 * b;
      const double* v = w + 3;
      for (int k = 0; k < 3; k++) Aw[3 * i + k] = w[k];
      Av[3 * i + 0] = v[0] + w[1] * r[2] - w[2] * r[1];
      Av[3 * i + 1] = v[1] + w[2] * r[0] - w[0] * r[2];
      Av[3 * i + 2] = v[2] + w[0] * r[1] - w[1] * r[0];
      f[i] = tu[ua + i];
    }
    if (rc) break;
    // Joint::calcEquivalentSpatialForceForMobilizedBody: a force and a torque each accounting
    // for f by least squares; the more effective one first, the other for the remainder
    double Fv[3], Fw[3], fv[6], fw[6], res[6];
    lstsq3(Av, nu, f, Fv);
    lstsq3(Aw, nu, f, Fw);
    mat_vec3(Av, nu, Fv, fv);
    mat_vec3(Aw, nu, Fw, fw);
    const double nfv = norm(fv, nu), nfw = norm(fw, nu);
    if (nfv > sig && nfw > sig) {
      if (nfw / norm(Fw, 3) > nfv / norm(Fv, 3)) {
        for (int i = 0; i < nu; i++) res[i] = f[i] - fw[i];
        lstsq3(Av, nu, res, Fv);
      } else {
        for (int i = 0; i < nu; i++) res[i] = f[i] - fv[i];
        lstsq3(Aw, nu, res, Fw);
      }
    }
    for (int k = 0; k < 3; k++) {
      Fj[k] = Fv[k];      // force
      Fj[3 + k] = Fw[k];  // moment
    }
  }
  free(V);
  free(e);
  return rc;
}

int mbs_id_run(const mbs_id* id, mbs_table** gen, mbs_table** body, mbs_error* err) {
  *gen = NULL;
  if (body) *body = NULL;
  const int n = id->ncoord, nbf = id->bf_labels.n;
  const char** labels = malloc(((size_t)(n > nbf ? n : nbf) + 1) * sizeof(char*));
  double* tau = malloc(((size_t)n + 1) * sizeof(double));
  mbs_state* st = mbs_id_state_create(id);
  mbs_table *g = NULL, *bt = NULL;
  int rc = MBS_OK;
  if (!labels || !tau || !st) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "inverse dynamics", "inverse dynamics: out of memory");
    goto done;
  }
  labels[0] = "time";
  for (int i = 0; i < n; i++) labels[1 + i] = id->labels.s[i];
  if ((rc = mbs_table_create(&g, "Inverse Dynamics Generalized Forces", id->nframe, n + 1,
                             labels, err)))
    goto done;
  if (nbf > 0 && body) {
    for (int i = 0; i < nbf; i++) labels[1 + i] = id->bf_labels.s[i];
    if ((rc = mbs_table_create(&bt, "Inverse Dynamics Body Forces at Specified Joints",
                               id->nframe, nbf + 1, labels, err)))
      goto done;
  }
  for (int k = 0; k < id->nframe && !rc; k++) {
    const double t = id->times[k];
    double* row = g->data + (size_t)k * g->ncol;
    row[0] = t;
    if ((rc = mbs_id_eval(id, st, t, row + 1))) {
      rc = MBS_FAIL(err, rc, "inverse dynamics", "inverse dynamics at t = %.9g s: %s", t,
                    mbs_state_error(st)->message);
      break;
    }
    for (int i = 0; i < n; i++)
      if (!isfinite(row[1 + i])) {
        rc = MBS_FAIL(err, MBS_ERR_NAN, "inverse dynamics", "inverse dynamics at t = %.9g s: "
                      "%s is %g", t, id->labels.s[i], row[1 + i]);
        break;
      }
    if (!rc && bt) {
      double* brow = bt->data + (size_t)k * bt->ncol;
      brow[0] = t;
      if ((rc = mbs_id_body_forces(id, st, t, row + 1, brow + 1)))
        rc = MBS_FAIL(err, rc, "inverse dynamics", "body forces at t = %.9g s: %s", t,
                      rc == MBS_ERR_NO_MEMORY ? "out of memory" : mbs_state_error(st)->message);
    }
  }
done:
  free(labels);
  free(tau);
  mbs_state_destroy(st);
  if (rc) {
    mbs_table_free(g);
    mbs_table_free(bt);
    return rc;
  }
  *gen = g;
  if (body) *body = bt;
  return MBS_OK;
}
