// Putting an OpenSim 4 model on the perturbation platform (mbs/posture_adapt.h).
#include "mbs/posture_adapt.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/spatial.h"
#include "mbs/status.h"
#include "osim_upgrade.h"
#include "xml_read.h"

// the numbers of mbs/posture_adapt.h
#define MTP_FRACTION 0.72       // the mtp joint centre's distance from the heel / foot length
#define SOLE_BELOW_MTP 0.10     // the sole's depth below the mtp joint centre / foot length
#define BREADTH_RATIO (0.055 / 0.152)  // foot breadth / foot length (Drillis and Contini)
#define RADIUS_PER_LENGTH (0.02 / (0.152 * 1.75))  // the built-in human's sphere radius / foot
                                                   // length

// the spheres of mbs_foot_sphere_names (heel, met1, met5, hallux, midfoot) from the heel, in
// foot lengths (x; the heel sphere is at its radius instead) and foot breadths (z, + lateral):
// studies/human_model.c's sx, sz with its heel 0.25 L behind the ankle
static const double sphere_x[5] = {0, 0.75, 0.70, 0.95, 0.35};
static const double sphere_z[5] = {0, -0.35, 0.40, -0.30, 0.45};
enum { HALLUX = 3 };
#define MAX_HELD 64  // held coordinates at the most

void mbs_posture_adapt_options_default(mbs_posture_adapt_options* o) {
  memset(o, 0, sizeof(*o));
  o->feet[0] = "calcn_r";
  o->feet[1] = "calcn_l";
  o->toes[0] = "toes_r";
  o->toes[1] = "toes_l";
  o->foot_length = 0;
  o->sole = NAN;
  o->remove_muscles = 1;
  mbs_platform_params_default(&o->contact);
  o->held_required = o->held_optional = NULL;
  o->nrequired = o->noptional = 0;
}

//---------------------------------- XML helpers -----------------------------------------------

typedef struct ctx {
  const char* path;
  mbs_error* err;
  xmlDocPtr doc;
  xmlNodePtr model;
} ctx;

static int fail(ctx* c, int code, const char* f, ...) __attribute__((format(printf, 3, 4)));
static int fail(ctx* c, int code, const char* f, ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof msg, f, ap);
  va_end(ap);
  MBS_FAIL(c->err, code, c->path, "%s: %s", c->path, msg);
  return code;
}

static int is_elem(xmlNodePtr n) { return n && n->type == XML_ELEMENT_NODE; }
static int tag_is(xmlNodePtr n, const char* t) {
  return is_elem(n) && !strcmp((const char*)n->name, t);
}

static xmlNodePtr child(xmlNodePtr n, const char* name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (tag_is(c, name)) return c;
  return NULL;
}

// the name attribute equals s
static int named(xmlNodePtr n, const char* s) {
  xmlChar* a = xmlGetProp(n, (const xmlChar*)"name");
  const int r = a && !strcmp((const char*)a, s);
  xmlFree(a);
  return r;
}

// the element of <set><objects> named s, or NULL
static xmlNodePtr find_in_set(xmlNodePtr model, const char* set, const char* s) {
  xmlNodePtr objs = child(child(model, set), "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next)
    if (is_elem(e) && named(e, s)) return e;
  return NULL;
}

// the trimmed text of an element (malloc'ed; "" when empty; NULL without memory)
static char* text_of(xmlNodePtr n) {
  xmlChar* t = n ? xmlNodeGetContent(n) : NULL;
  const char* s = t ? (const char*)t : "";
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
  size_t len = strlen(s);
  while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
                 s[len - 1] == '\r'))
    len--;
  char* r = malloc(len + 1);
  if (r) {
    memcpy(r, s, len);
    r[len] = 0;
  }
  xmlFree(t);
  return r;
}

// the last component of a socket path ("/bodyset/calcn_r" -> "calcn_r")
static const char* base_of(const char* s) {
  const char* b = strrchr(s, '/');
  return b ? b + 1 : s;
}

// parse up to 3 numbers from the text of child `field` (absent: zeros); 0 when malformed
static int numbers3(xmlNodePtr n, const char* field, double v[3]) {
  v[0] = v[1] = v[2] = 0;
  xmlNodePtr c = child(n, field);
  if (!c) return 1;
  char* s = text_of(c);
  if (!s) return 0;
  const char* p = s;
  int ok = 1;
  for (int k = 0; k < 3 && ok; k++) {
    char* end;
    v[k] = strtod(p, &end);
    if (end == p) ok = 0;
    p = end;
  }
  free(s);
  return ok;
}

// remove whitespace-only text nodes under n and its following siblings
static void strip_blanks(xmlNodePtr n) {
  while (n) {
    xmlNodePtr next = n->next;
    if (n->type == XML_TEXT_NODE && xmlIsBlankNode(n)) {
      xmlUnlinkNode(n);
      xmlFreeNode(n);
    } else if (n->children) {
      strip_blanks(n->children);
    }
    n = next;
  }
}

// parse an XML fragment (malloc'ed text, freed here; NULL: out of memory or bad parameters)
// and append its elements to `parent`
static int append_fragment(ctx* c, xmlNodePtr parent, char* text, const char* what) {
  if (!text)
    return fail(c, MBS_ERR_ARGUMENT, "cannot make the %s (invalid contact or platform "
                "parameters, or out of memory)", what);
  xmlNodePtr list = NULL;
  const xmlParserErrors e = xmlParseInNodeContext(
      parent, text, (int)strlen(text),
      XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR | XML_PARSE_NOWARNING, &list);
  free(text);
  if (e != XML_ERR_OK || !list) {
    xmlFreeNodeList(list);
    return fail(c, MBS_ERR_PARSE, "the %s fragment does not parse (libxml2 error %d)", what,
                (int)e);
  }
  strip_blanks(list);
  xmlAddChildList(parent, list);
  return MBS_OK;
}

// the <objects> of a set of the model, creating the set (after `after`, or at the end of the
// model) when absent
static xmlNodePtr objects_of(ctx* c, const char* set, const char* lower, const char* after[]) {
  xmlNodePtr s = child(c->model, set);
  if (!s) {
    s = xmlNewDocNode(c->doc, NULL, (const xmlChar*)set, NULL);
    if (!s) return NULL;
    xmlNewProp(s, (const xmlChar*)"name", (const xmlChar*)lower);
    xmlNodePtr where = NULL;
    for (int k = 0; after[k] && !where; k++) where = child(c->model, after[k]);
    if (where) xmlAddNextSibling(where, s);
    else xmlAddChild(c->model, s);
  }
  xmlNodePtr o = child(s, "objects");
  if (!o) {
    o = xmlNewDocNode(c->doc, NULL, (const xmlChar*)"objects", NULL);
    if (!o) return NULL;
    if (s->children) xmlAddPrevSibling(s->children, o);
    else xmlAddChild(s, o);
  }
  return o;
}

//---------------------------------- names ------------------------------------------------------

// a list of names (the removed actuators)
typedef struct names {
  char** s;
  int n, cap;
} names;

static int names_add(names* l, const char* s) {
  if (l->n == l->cap) {
    const int cap = l->cap ? 2 * l->cap : 64;
    char** t = realloc(l->s, (size_t)cap * sizeof(char*));
    if (!t) return 0;
    l->s = t;
    l->cap = cap;
  }
  const size_t len = strlen(s);
  char* d = malloc(len + 1);
  if (!d) return 0;
  memcpy(d, s, len + 1);
  l->s[l->n++] = d;
  return 1;
}

static int names_has(const names* l, const char* s) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->s[i], s)) return 1;
  return 0;
}

static void names_free(names* l) {
  for (int i = 0; i < l->n; i++) free(l->s[i]);
  free(l->s);
}

// the Coordinate element of that name in the joints, or NULL
static xmlNodePtr find_coordinate(xmlNodePtr model, const char* name) {
  xmlNodePtr objs = child(child(model, "JointSet"), "objects");
  for (xmlNodePtr j = objs ? objs->children : NULL; j; j = j->next) {
    xmlNodePtr coords = is_elem(j) ? child(j, "coordinates") : NULL;
    for (xmlNodePtr k = coords ? coords->children : NULL; k; k = k->next)
      if (tag_is(k, "Coordinate") && named(k, name)) return k;
  }
  return NULL;
}

//---------------------------------- removing muscles -------------------------------------------

static int ends_with(const char* s, const char* suffix) {
  const size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static int is_removed_kind(const char* kind) {
  return ends_with(kind, "Muscle") || strstr(kind, "Muscle_") || !strcmp(kind, "PathActuator");
}

// rewrite a whitespace-separated list without the removed names (whose positions are set in
// gone[], of at least as many entries as the list has names); returns how many are left
static int filter_list(ctx* c, xmlNodePtr n, const names* removed, char* gone, int max,
                       int* total, int* bad) {
  char* s = text_of(n);
  char* out = s ? malloc(strlen(s) + 1) : NULL;
  if (!s || !out) {
    free(s);
    free(out);
    *bad = fail(c, MBS_ERR_NO_MEMORY, "out of memory");
    return 0;
  }
  out[0] = 0;
  int left = 0, k = 0;
  char* save = NULL;
  for (char* t = strtok_r(s, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save), k++) {
    const int g = names_has(removed, base_of(t));
    if (gone && k < max) gone[k] = (char)g;
    if (g) continue;
    if (left++) strcat(out, " ");
    strcat(out, t);
  }
  *total = k;
  if (left < k) xmlNodeSetContent(n, (const xmlChar*)out);
  free(s);
  free(out);
  return left;
}

static void remove_node(xmlNodePtr n) {
  xmlUnlinkNode(n);
  xmlFreeNode(n);
}

static int remove_muscles(ctx* c, mbs_posture_adapt_info* info) {
  names removed = {NULL, 0, 0};
  int rc = MBS_OK;
  xmlNodePtr objs = child(child(c->model, "ForceSet"), "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL, next; e; e = next) {
    next = e->next;
    if (!is_elem(e)) continue;
    if (!is_removed_kind((const char*)e->name)) {
      info->kept_forces++;
      continue;
    }
    xmlChar* nm = xmlGetProp(e, (const xmlChar*)"name");
    const int ok = names_add(&removed, nm ? (const char*)nm : "");
    xmlFree(nm);
    if (!ok) {
      names_free(&removed);
      return fail(c, MBS_ERR_NO_MEMORY, "out of memory");
    }
    remove_node(e);
    info->removed_forces++;
  }
  if (!removed.n) return MBS_OK;
  // the ForceSet's groups lose the removed members; empty groups go
  xmlNodePtr groups = child(child(c->model, "ForceSet"), "groups");
  for (xmlNodePtr g = groups ? groups->children : NULL, next; g && !rc; g = next) {
    next = g->next;
    xmlNodePtr members = is_elem(g) ? child(g, "members") : NULL;
    if (!members) continue;
    int total = 0;
    if (!filter_list(c, members, &removed, NULL, 0, &total, &rc) && !rc && total)
      remove_node(g);
  }
  // controllers lose the removed actuators (and a PrescribedController the functions paired
  // with them by position); a controller left with none goes
  xmlNodePtr ctrl = child(child(c->model, "ControllerSet"), "objects");
  for (xmlNodePtr e = ctrl ? ctrl->children : NULL, next; e && !rc; e = next) {
    next = e->next;
    if (!is_elem(e)) continue;
    xmlNodePtr list = child(e, "actuator_list");
    if (!list) list = child(e, "socket_actuators");
    if (!list) continue;
    char gone[4096];
    int total = 0;
    const int left = filter_list(c, list, &removed, gone, (int)sizeof gone, &total, &rc);
    if (rc || left == total) continue;
    if (!left) {
      remove_node(e);
      info->removed_controllers++;
      continue;
    }
    xmlNodePtr fobjs = child(child(e, "FunctionSet"), "objects");
    int k = 0;
    for (xmlNodePtr f = fobjs ? fobjs->children : NULL, fn; f; f = fn) {
      fn = f->next;
      if (!is_elem(f)) continue;
      if (k < total && k < (int)sizeof gone && gone[k]) remove_node(f);
      k++;
    }
  }
  names_free(&removed);
  return rc;
}

//---------------------------------- the feet ---------------------------------------------------

// an offset frame of a joint (in its <frames>) or a body: the body it is on and the transform
// from that body to the frame
typedef struct frame_ref {
  char body[256];
  mbs_transform X;  // X_BF
} frame_ref;

// resolve a joint's socket (text s) to a body and offset: 0, 1 when it names neither a frame
// of the joint on a body nor a body, MBS_ERR_* on failure
static int resolve_socket(ctx* c, xmlNodePtr joint, const char* s, frame_ref* f) {
  const char* b = base_of(s);
  mbs_tf_identity(&f->X);
  xmlNodePtr frames = child(joint, "frames");
  for (xmlNodePtr p = frames ? frames->children : NULL; p; p = p->next) {
    if (!is_elem(p) || !named(p, b)) continue;
    char* parent = text_of(child(p, "socket_parent"));
    if (!parent) return fail(c, MBS_ERR_NO_MEMORY, "out of memory");
    snprintf(f->body, sizeof f->body, "%s", base_of(parent));
    free(parent);
    double t[3], a[3];
    if (!numbers3(p, "translation", t) || !numbers3(p, "orientation", a))
      return fail(c, MBS_ERR_PARSE, "frame '%s': malformed translation or orientation", b);
    mbs_tf_from_xyz(&f->X, a, t);
    return find_in_set(c->model, "BodySet", f->body) ? 0 : 1;
  }
  snprintf(f->body, sizeof f->body, "%s", b);
  return find_in_set(c->model, "BodySet", f->body) ? 0 : 1;
}

// a joint's socket
static int joint_socket(ctx* c, xmlNodePtr j, const char* field, frame_ref* f) {
  char* s = text_of(child(j, field));
  if (!s) return fail(c, MBS_ERR_NO_MEMORY, "out of memory");
  const int rc = *s ? resolve_socket(c, j, s, f) : 1;
  free(s);
  return rc;
}

// the toes body's frame in the foot body's (with the mtp joint at zero) and the joint's centre
// in the foot body
static int find_mtp(ctx* c, const char* foot, const char* toes, mbs_transform* X_FT,
                    double centre[3]) {
  xmlNodePtr objs = child(child(c->model, "JointSet"), "objects");
  for (xmlNodePtr j = objs ? objs->children : NULL; j; j = j->next) {
    if (!is_elem(j)) continue;
    frame_ref cf, pf;
    int rc = joint_socket(c, j, "socket_child_frame", &cf);
    if (rc == 1 || (rc == 0 && strcmp(cf.body, toes) != 0)) continue;
    if (rc) return rc;
    xmlChar* jn = xmlGetProp(j, (const xmlChar*)"name");
    rc = joint_socket(c, j, "socket_parent_frame", &pf);
    if (rc == 0 && strcmp(pf.body, foot) != 0)
      rc = fail(c, MBS_ERR_TOPOLOGY, "joint '%s' hangs the toes '%s' from '%s', not from the "
                "foot '%s'", jn ? (const char*)jn : "", toes, pf.body, foot);
    else if (rc == 1)
      rc = fail(c, MBS_ERR_TOPOLOGY, "joint '%s' (of the toes '%s'): its parent frame is not "
                "on a body", jn ? (const char*)jn : "", toes);
    xmlFree(jn);
    if (rc) return rc;
    // X_FT = X_FP X_TC^-1 (the parent and child joint frames coincide at zero)
    mbs_transform X_CT;
    mbs_tf_inverse(&X_CT, &cf.X);
    mbs_tf_mul(X_FT, &pf.X, &X_CT);
    for (int k = 0; k < 3; k++) centre[k] = pf.X.p[k];
    return MBS_OK;
  }
  return fail(c, MBS_ERR_TOPOLOGY, "no joint has the toes body '%s' as its child", toes);
}

//---------------------------------- the adapter ------------------------------------------------

static int check_absent(ctx* c, const char* set, const char* what, const char* name) {
  if (find_in_set(c->model, set, name))
    return fail(c, MBS_ERR_PARSE, "a %s named '%s' is already present (is the model already on "
                "the platform?)", what, name);
  return MBS_OK;
}

static int adapt(ctx* c, const mbs_posture_adapt_options* o, mbs_posture_adapt_info* info) {
  int rc;
  xmlNodePtr root = xmlDocGetRootElement(c->doc);
  if (!root || strcmp((const char*)root->name, "OpenSimDocument") != 0)
    return fail(c, MBS_ERR_PARSE, "not an OpenSim 4 model (root element <%s>, expected "
                "<OpenSimDocument>)", root ? (const char*)root->name : "none");
  xmlChar* v = xmlGetProp(root, (const xmlChar*)"Version");
  const int version = v ? atoi((const char*)v) : 0;
  xmlFree(v);
  c->model = child(root, "Model");
  if (!c->model) return fail(c, MBS_ERR_PARSE, "not an OpenSim 4 model (no <Model> element)");
  if (version < 30500) {  // an OpenSim 1.x-3.x document: converted first, as the reader does
    mbs_osim_upgrade_report r;
    if ((rc = mbs_osim_upgrade(c->model, version, &r)))
      return fail(c, rc, "line %d: OpenSim document version %d: %s", r.line, version, r.msg);
    if (!xmlSetProp(root, (const xmlChar*)"Version", (const xmlChar*)"40000"))
      return fail(c, MBS_ERR_NO_MEMORY, "out of memory");
  }
  if (!child(c->model, "BodySet") || !child(c->model, "JointSet"))
    return fail(c, MBS_ERR_PARSE, "the model has no BodySet or JointSet");
  // names the adapter adds must be free
  if ((rc = check_absent(c, "BodySet", "body", "platform")) ||
      (rc = check_absent(c, "JointSet", "joint", "platform_joint")) ||
      (rc = check_absent(c, "ContactGeometrySet", "contact geometry", "platform_surface")))
    return rc;
  static const char* const pc[3] = {"platform_tx", "platform_ty", "platform_tz"};
  for (int k = 0; k < 3; k++)
    if (find_coordinate(c->model, pc[k]))
      return fail(c, MBS_ERR_PARSE, "a coordinate named '%s' is already present (is the model "
                  "already on the platform?)", pc[k]);
  static const char* const side[2] = {"r", "l"};
  for (int i = 0; i < 2; i++) {
    char nm[64];
    for (int k = 0; k < 5; k++) {
      snprintf(nm, sizeof nm, "%s_%s", mbs_foot_sphere_names[k], side[i]);
      if ((rc = check_absent(c, "ContactGeometrySet", "contact geometry", nm))) return rc;
    }
  }
  // the feet
  for (int i = 0; i < 2; i++)
    if (!o->feet[i] || !find_in_set(c->model, "BodySet", o->feet[i]))
      return fail(c, MBS_ERR_UNKNOWN_NAME, "no foot body '%s'", o->feet[i] ? o->feet[i] : "");
  // the held coordinates
  const int nreq = o->held_required ? o->nrequired : 0;
  const int nopt = o->held_optional ? o->noptional : 0;
  if (nreq < 0 || nopt < 0 || nreq + nopt > MAX_HELD)
    return fail(c, MBS_ERR_ARGUMENT, "%d required and %d optional held coordinates (at most %d)",
                nreq, nopt, MAX_HELD);
  xmlNodePtr held[MAX_HELD];
  const char* held_name[MAX_HELD];
  int nheld = 0;
  for (int k = 0; k < nreq + nopt; k++) {
    const char* nm = k < nreq ? o->held_required[k] : o->held_optional[k - nreq];
    xmlNodePtr n = nm ? find_coordinate(c->model, nm) : NULL;
    if (!n && k < nreq)
      return fail(c, MBS_ERR_UNKNOWN_NAME, "the held coordinate '%s' is missing", nm ? nm : "");
    if (!n) continue;
    held[nheld] = n;
    held_name[nheld++] = nm;
  }
  // the feet's geometry
  double L[2], sole[2], centre[2][3] = {{0, 0, 0}, {0, 0, 0}};
  mbs_transform X_FT[2];
  int on_toes[2];
  for (int i = 0; i < 2; i++) {
    on_toes[i] = o->toes[i] && find_in_set(c->model, "BodySet", o->toes[i]);
    if (on_toes[i] && (rc = find_mtp(c, o->feet[i], o->toes[i], &X_FT[i], centre[i]))) return rc;
    if (!on_toes[i] && !(o->foot_length > 0 && isfinite(o->sole)))
      return fail(c, MBS_ERR_ARGUMENT, "foot '%s': %s%s%s to estimate it from: give the foot "
                  "length and the sole's height", o->feet[i],
                  o->toes[i] ? "no toes body '" : "no toes body given",
                  o->toes[i] ? o->toes[i] : "", o->toes[i] ? "'" : "");
    L[i] = o->foot_length > 0 ? o->foot_length : centre[i][0] / MTP_FRACTION;
    if (!(L[i] > 0.05 && L[i] < 1))
      return fail(c, MBS_ERR_ARGUMENT, "foot '%s': a foot length of %g m (from the mtp joint "
                  "centre at x = %g m) is not plausible", o->feet[i], L[i], centre[i][0]);
    sole[i] = isfinite(o->sole) ? o->sole : centre[i][1] - SOLE_BELOW_MTP * L[i];
  }
  const double r = o->contact.sphere_radius > 0 ? o->contact.sphere_radius
                                                : RADIUS_PER_LENGTH * 0.5 * (L[0] + L[1]);
  // muscles out (before the names of the new forces are checked)
  if (o->remove_muscles && (rc = remove_muscles(c, info))) return rc;
  if (!o->remove_muscles) {
    xmlNodePtr fo = child(child(c->model, "ForceSet"), "objects");
    for (xmlNodePtr e = fo ? fo->children : NULL; e; e = e->next)
      if (is_elem(e)) info->kept_forces++;
  }
  for (int i = 0; i < 2; i++) {
    char nm[64];
    snprintf(nm, sizeof nm, "foot_%s", side[i]);
    if ((rc = check_absent(c, "ForceSet", "force", nm))) return rc;
  }
  for (int k = 0; k < nheld; k++) {
    char nm[128];
    snprintf(nm, sizeof nm, "%s_torque", held_name[k]);
    if ((rc = check_absent(c, "ForceSet", "force", nm))) return rc;
  }
  // the platform
  xmlNodePtr bodies = child(child(c->model, "BodySet"), "objects");
  xmlNodePtr joints = child(child(c->model, "JointSet"), "objects");
  if (!bodies) bodies = objects_of(c, "BodySet", "bodyset", (const char*[]){NULL});
  if (!joints) joints = objects_of(c, "JointSet", "jointset", (const char*[]){NULL});
  xmlNodePtr geoms = objects_of(c, "ContactGeometrySet", "contactgeometryset",
                                (const char*[]){"MarkerSet", "ForceSet", "JointSet", NULL});
  xmlNodePtr forces = objects_of(c, "ForceSet", "forceset",
                                 (const char*[]){"ConstraintSet", "ControllerSet", "JointSet",
                                                 NULL});
  if (!bodies || !joints || !geoms || !forces) return fail(c, MBS_ERR_NO_MEMORY, "out of memory");
  if ((rc = append_fragment(c, bodies, mbs_platform_body_xml(&o->contact), "platform body")) ||
      (rc = append_fragment(c, joints, mbs_platform_joint_xml(&o->contact), "platform joint")) ||
      (rc = append_fragment(c, geoms, mbs_platform_surface_xml(), "platform surface")))
    return rc;
  // the spheres and the contact forces
  for (int i = 0; i < 2; i++) {
    const double w = BREADTH_RATIO * L[i];
    const double lateral = i == 0 ? 1 : -1;
    const char* body[5];
    double loc[5][3];
    for (int k = 0; k < 5; k++) {
      body[k] = o->feet[i];
      loc[k][0] = k == 0 ? r : sphere_x[k] * L[i];
      loc[k][1] = sole[i] + r;
      loc[k][2] = centre[i][2] + lateral * sphere_z[k] * w;
    }
    if (on_toes[i]) {
      // p_T = X_FT^-1 p_F
      mbs_transform X_TF;
      mbs_tf_inverse(&X_TF, &X_FT[i]);
      double p[3];
      mbs_tf_point(p, &X_TF, loc[HALLUX]);
      for (int k = 0; k < 3; k++) loc[HALLUX][k] = p[k];
      body[HALLUX] = o->toes[i];
    }
    char* sp = mbs_foot_spheres_xml(side[i], body, (const double(*)[3])loc, r);
    if ((rc = append_fragment(c, geoms, sp, "foot spheres")) ||
        (rc = append_fragment(c, forces, mbs_foot_contact_xml(&o->contact, side[i]),
                              "foot contact force")))
      return rc;
    info->foot_length[i] = L[i];
    info->sole[i] = sole[i];
    info->hallux_on_toes[i] = on_toes[i];
  }
  info->radius = r;
  // the held coordinates: locked, each with a unit torque actuator
  for (int k = 0; k < nheld; k++) {
    xmlNodePtr lk = child(held[k], "locked");
    if (lk) xmlNodeSetContent(lk, (const xmlChar*)"true");
    else if (!xmlNewTextChild(held[k], NULL, (const xmlChar*)"locked", (const xmlChar*)"true"))
      return fail(c, MBS_ERR_NO_MEMORY, "out of memory");
    const size_t len = 2 * strlen(held_name[k]) + 160;
    char* a = malloc(len);
    if (a)
      snprintf(a, len, "<CoordinateActuator name=\"%s_torque\"><coordinate>%s</coordinate>"
               "<optimal_force>1</optimal_force></CoordinateActuator>", held_name[k],
               held_name[k]);
    if ((rc = append_fragment(c, forces, a, "coordinate actuator"))) return rc;
  }
  info->nheld = nheld;
  // where it came from
  char note[512];
  snprintf(note, sizeof note, " put on the perturbation platform by mbstudy (posture_adapt): "
           "%d muscles and path actuators removed, %d other forces kept, %d held coordinates "
           "locked with actuators, foot length %.4g m, sole at y = %.4g m, spheres of %.4g m ",
           info->removed_forces, info->kept_forces, nheld, L[0], sole[0], r);
  xmlNodePtr cm = xmlNewDocComment(c->doc, (const xmlChar*)note);
  if (!cm) return fail(c, MBS_ERR_NO_MEMORY, "out of memory");
  if (c->model->children) xmlAddPrevSibling(c->model->children, cm);
  else xmlAddChild(c->model, cm);
  return MBS_OK;
}

char* mbs_posture_adapt_osim_info(const char* text, size_t n, const char* path,
                                  const mbs_posture_adapt_options* o,
                                  mbs_posture_adapt_info* info, mbs_error* err) {
  mbs_error local;
  if (!err) err = &local;
  mbs_error_clear(err);
  mbs_posture_adapt_info dummy;
  if (!info) info = &dummy;
  memset(info, 0, sizeof(*info));
  mbs_posture_adapt_options dflt;
  if (!o) {
    mbs_posture_adapt_options_default(&dflt);
    o = &dflt;
  }
  ctx c = {path ? path : "model.osim", err, NULL, NULL};
  if (!text || n > INT_MAX) {
    fail(&c, MBS_ERR_ARGUMENT, "no text, or more than 2 GB");
    return NULL;
  }
  mbs_xml_failure xf;
  c.doc = mbs_xml_read(c.path, text, n, XML_PARSE_NOBLANKS, "a model file", &xf);
  if (!c.doc) {
    if (xf.entities)
      MBS_FAIL(c.err, MBS_ERR_PARSE, c.path, "%s:%d: %s", c.path, xf.line, xf.msg);
    else
      fail(&c, MBS_ERR_PARSE, "not an OpenSim 4 model: malformed XML (line %d): %s", xf.line,
           xf.msg);
    return NULL;
  }
  char* out = NULL;
  if (adapt(&c, o, info) == MBS_OK) {
    xmlChar* mem = NULL;
    int size = 0;
    xmlDocDumpFormatMemoryEnc(c.doc, &mem, &size, "UTF-8", 1);
    if (mem && size >= 0 && (out = malloc((size_t)size + 1))) {
      memcpy(out, mem, (size_t)size);
      out[size] = 0;
    } else {
      fail(&c, MBS_ERR_NO_MEMORY, "out of memory writing the document");
    }
    xmlFree(mem);
  }
  xmlFreeDoc(c.doc);
  return out;
}

char* mbs_posture_adapt_osim(const char* text, size_t n, const char* path,
                             const mbs_posture_adapt_options* o, mbs_error* err) {
  return mbs_posture_adapt_osim_info(text, n, path, o, NULL, err);
}

char* mbs_posture_adapt_file(const char* path, const mbs_posture_adapt_options* o,
                             mbs_error* err) {
  mbs_error local;
  if (!err) err = &local;
  mbs_error_clear(err);
  if (!path) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture_adapt", "mbs_posture_adapt_read: no path");
    return NULL;
  }
  FILE* f = fopen(path, "rb");
  if (!f) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  char* text = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = cap ? 2 * cap : 1 << 20;
      char* t = realloc(text, cap);
      if (!t) {
        free(text);
        fclose(f);
        MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
        return NULL;
      }
      text = t;
    }
    const size_t got = fread(text + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  const int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(text);
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: read error", path);
    return NULL;
  }
  text[n] = 0;
  char* doc = mbs_posture_adapt_osim(text, n, path, o, err);
  free(text);
  return doc;
}

mbs_osim_model* mbs_posture_adapt_read(const char* path, const mbs_posture_adapt_options* o,
                                       mbs_error* err) {
  char* doc = mbs_posture_adapt_file(path, o, err);
  if (!doc) return NULL;
  mbs_osim_model* m = mbs_osim_parse(doc, strlen(doc), path, o ? o->osim : NULL, err);
  free(doc);
  return m;
}
