// Scaling an OpenSim model's document as OpenSim 4's ScaleTool does (mbs/scale.h).
//
// Frames are found through the document's component tree, as OpenSim 4 resolves socket paths:
// a path starting with '/' from the model, any other from the component that owns the socket;
// ".." is the owning component's parent. A component is an element with a name attribute (or a
// set such as <BodySet>, named "bodyset" when it has none); the elements between components
// (<objects>, <frames>, <components>, ...) are transparent. When a path does not resolve, its
// last name is looked up among the bodies, Ground and the offset frames (older files name
// bodies alone, e.g. a marker's <body>).
#include "mbs/scale.h"

#include <ctype.h>
#include <float.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/path.h"
#include "mbs/spatial.h"
#include "mbs/state.h"
#include "osim_upgrade.h"
#include "xml_read.h"

#define MAX_FRAME_DEPTH 32
#define SIGNIFICANT_REAL 1.8738e-14  // SimTK::SignificantReal (eps^(7/8)), its default tolerance

struct mbs_scale_model {
  char* path;             // for messages
  xmlDocPtr doc;
  xmlNodePtr model;
  xmlNodePtr ground;      // may be NULL (then Ground is "ground")
  int nseg;               // Ground and the bodies
  xmlNodePtr* seg;        // seg[0] == ground
  char** seg_name;
  int noff;
  char** off_name;
  char** warn;
  int nwarn, capwarn;
};

//---------------------------------- XML helpers -----------------------------------------------

static int is_elem(xmlNodePtr n) { return n && n->type == XML_ELEMENT_NODE; }
static const char* tag(xmlNodePtr n) { return (const char*)n->name; }
static int tag_is(xmlNodePtr n, const char* t) { return is_elem(n) && !strcmp(tag(n), t); }
static int line_of(xmlNodePtr n) { return n ? (int)xmlGetLineNo(n) : 0; }

static xmlNodePtr child(xmlNodePtr n, const char* name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (tag_is(c, name)) return c;
  return NULL;
}

static xmlNodePtr first_elem(xmlNodePtr n) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is_elem(c)) return c;
  return NULL;
}

static char* dup_str(const char* s) {
  const size_t n = strlen(s) + 1;
  char* d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

// the trimmed text of an element into buf ("" when absent)
static const char* text(xmlNodePtr n, char* buf, size_t size) {
  buf[0] = 0;
  if (!n) return buf;
  xmlChar* t = xmlNodeGetContent(n);
  const char* s = t ? (const char*)t : "";
  while (isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len && isspace((unsigned char)s[len - 1])) len--;
  if (len >= size) len = size - 1;
  memcpy(buf, s, len);
  buf[len] = 0;
  xmlFree(t);
  return buf;
}

// the name attribute into buf ("" when none)
static const char* name_of(xmlNodePtr n, char* buf, size_t size) {
  buf[0] = 0;
  xmlChar* a = n ? xmlGetProp(n, (const xmlChar*)"name") : NULL;
  if (a) snprintf(buf, size, "%s", (const char*)a);
  xmlFree(a);
  return buf;
}

static int named(xmlNodePtr n, const char* s) {
  char b[256];
  return !strcmp(name_of(n, b, sizeof(b)), s);
}

void mbs_scale_format_number(char* buf, size_t n, double v) {
  if (v == 0) {
    snprintf(buf, n, "0");
    return;
  }
  for (int p = 15; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, v);
    if (strtod(buf, NULL) == v) return;
  }
}

// k numbers from the text of element c; the count read (k when all are there)
static int parse_numbers(xmlNodePtr c, double* v, int k) {
  char buf[4096];
  const char* s = text(c, buf, sizeof(buf));
  int i = 0;
  while (i < k) {
    char* end;
    const double x = strtod(s, &end);
    if (end == s || !isfinite(x)) break;
    v[i++] = x;
    s = end;
  }
  while (isspace((unsigned char)*s)) s++;
  return *s ? -1 : i;
}

static int set_numbers(xmlNodePtr c, const double* v, int k) {
  char out[1024], num[40];
  out[0] = 0;
  for (int i = 0; i < k; i++) {
    mbs_scale_format_number(num, sizeof(num), v[i]);
    if (i) strncat(out, " ", sizeof(out) - strlen(out) - 1);
    strncat(out, num, sizeof(out) - strlen(out) - 1);
  }
  xmlNodeSetContent(c, (const xmlChar*)out);
  return MBS_OK;
}

//---------------------------------- messages ---------------------------------------------------

static int fail(const mbs_scale_model* sm, mbs_error* err, int code, xmlNodePtr at,
                const char* fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(const mbs_scale_model* sm, mbs_error* err, int code, xmlNodePtr at,
                const char* fmt, ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (at)
    return MBS_FAIL(err, code, sm->path, "%s:%d: %s", sm->path, line_of(at), msg);
  return MBS_FAIL(err, code, sm->path, "%s: %s", sm->path, msg);
}

static void warn(mbs_scale_model* sm, xmlNodePtr at, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(mbs_scale_model* sm, xmlNodePtr at, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (sm->nwarn == sm->capwarn) {
    const int cap = sm->capwarn ? 2 * sm->capwarn : 16;
    char** w = realloc(sm->warn, (size_t)cap * sizeof(char*));
    if (!w) return;
    sm->warn = w;
    sm->capwarn = cap;
  }
  char* s = at ? mbs_format_string("%s:%d: %s", sm->path, line_of(at), msg)
               : mbs_format_string("%s: %s", sm->path, msg);
  if (s) sm->warn[sm->nwarn++] = s;
}

int mbs_scale_model_nwarning(const mbs_scale_model* sm) { return sm->nwarn; }
const char* mbs_scale_model_warning(const mbs_scale_model* sm, int i) {
  return i >= 0 && i < sm->nwarn ? sm->warn[i] : NULL;
}

//---------------------------------- the document -----------------------------------------------

static int is_defaults(xmlNodePtr n) { return tag_is(n, "defaults"); }

static void collect_offset_frames(mbs_scale_model* sm, xmlNodePtr n, int* cap) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next) {
    if (!is_elem(c) || is_defaults(c)) continue;
    if (tag_is(c, "PhysicalOffsetFrame")) {
      if (sm->noff == *cap) {
        const int nc = *cap ? 2 * *cap : 32;
        char** t = realloc(sm->off_name, (size_t)nc * sizeof(char*));
        if (!t) return;
        sm->off_name = t;
        *cap = nc;
      }
      char b[256];
      char* s = dup_str(name_of(c, b, sizeof(b)));
      if (s) sm->off_name[sm->noff++] = s;
    }
    collect_offset_frames(sm, c, cap);
  }
}

static void free_lists(mbs_scale_model* sm) {
  for (int i = 0; i < sm->nseg; i++) free(sm->seg_name[i]);
  free(sm->seg_name);
  free(sm->seg);
  for (int i = 0; i < sm->noff; i++) free(sm->off_name[i]);
  free(sm->off_name);
  sm->seg_name = NULL;
  sm->seg = NULL;
  sm->off_name = NULL;
  sm->nseg = sm->noff = 0;
}

// the segments (Ground and the bodies) and the offset frames' names
static int index_document(mbs_scale_model* sm, mbs_error* err) {
  free_lists(sm);
  sm->ground = child(sm->model, "Ground");
  xmlNodePtr objs = child(child(sm->model, "BodySet"), "objects");
  int n = 1;
  for (xmlNodePtr c = objs ? objs->children : NULL; c; c = c->next)
    if (tag_is(c, "Body")) n++;
  sm->seg = calloc((size_t)n, sizeof(xmlNodePtr));
  sm->seg_name = calloc((size_t)n, sizeof(char*));
  if (!sm->seg || !sm->seg_name) return fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  char b[256];
  sm->seg[0] = sm->ground;
  sm->seg_name[0] = dup_str(sm->ground && *name_of(sm->ground, b, sizeof(b)) ? b : "ground");
  sm->nseg = 1;
  for (xmlNodePtr c = objs ? objs->children : NULL; c; c = c->next) {
    if (!tag_is(c, "Body")) continue;
    name_of(c, b, sizeof(b));
    if (!*b) return fail(sm, err, MBS_ERR_PARSE, c, "a Body has no name");
    for (int i = 0; i < sm->nseg; i++)
      if (sm->seg_name[i] && !strcmp(sm->seg_name[i], b))
        return fail(sm, err, MBS_ERR_PARSE, c, "a second body named '%s'", b);
    sm->seg[sm->nseg] = c;
    sm->seg_name[sm->nseg++] = dup_str(b);
  }
  for (int i = 0; i < sm->nseg; i++)
    if (!sm->seg_name[i]) return fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  int cap = 0;
  collect_offset_frames(sm, sm->model, &cap);
  return MBS_OK;
}

static mbs_scale_model* open_doc(xmlDocPtr doc, const char* path, mbs_error* err) {
  mbs_scale_model* sm = calloc(1, sizeof(*sm));
  if (!sm) {
    xmlFreeDoc(doc);
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  sm->doc = doc;
  sm->path = dup_str(path);
  if (!sm->path) {
    mbs_scale_model_free(sm);
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  xmlNodePtr root = xmlDocGetRootElement(doc);
  if (!root || strcmp(tag(root), "OpenSimDocument") != 0 || !(sm->model = child(root, "Model"))) {
    fail(sm, err, MBS_ERR_PARSE, root, "not an OpenSim model (no <OpenSimDocument><Model>)");
    mbs_scale_model_free(sm);
    return NULL;
  }
  xmlChar* v = xmlGetProp(root, (const xmlChar*)"Version");
  const int version = v ? atoi((const char*)v) : 0;
  xmlFree(v);
  if (version < 30500) {  // OpenSim 1.x-3.x: converted as the reader converts it
    mbs_osim_upgrade_report r;
    memset(&r, 0, sizeof(r));
    const int rc = mbs_osim_upgrade(sm->model, version, &r);
    if (rc) {
      MBS_FAIL(err, rc, path, "%s:%d: OpenSim document version %d: %s", path, r.line, version,
               r.msg);
      mbs_scale_model_free(sm);
      return NULL;
    }
    xmlSetProp(root, (const xmlChar*)"Version", (const xmlChar*)"40000");
  }
  if (index_document(sm, err)) {
    mbs_scale_model_free(sm);
    return NULL;
  }
  return sm;
}

static xmlDocPtr read_xml(const char* path, const char* text, size_t n, mbs_error* err) {
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(path, text, n, XML_PARSE_NOBLANKS, "a model file", &xf);
  if (!doc)
    MBS_FAIL(err, text || xf.entities ? MBS_ERR_PARSE : MBS_ERR_IO, path, "%s:%d: %s", path,
             xf.line, xf.msg);
  return doc;
}

mbs_scale_model* mbs_scale_model_read(const char* path, mbs_error* err) {
  xmlDocPtr doc = read_xml(path, NULL, 0, err);
  return doc ? open_doc(doc, path, err) : NULL;
}

mbs_scale_model* mbs_scale_model_parse(const char* text, size_t n, const char* name,
                                       mbs_error* err) {
  if (!name) name = "model.osim";
  if (!text || n > INT_MAX) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, name, "%s: no text, or more than 2 GB", name);
    return NULL;
  }
  xmlDocPtr doc = read_xml(name, text, n, err);
  return doc ? open_doc(doc, name, err) : NULL;
}

void mbs_scale_model_free(mbs_scale_model* sm) {
  if (!sm) return;
  free_lists(sm);
  for (int i = 0; i < sm->nwarn; i++) free(sm->warn[i]);
  free(sm->warn);
  if (sm->doc) xmlFreeDoc(sm->doc);
  free(sm->path);
  free(sm);
}

int mbs_scale_model_nsegment(const mbs_scale_model* sm) { return sm->nseg; }
const char* mbs_scale_model_segment(const mbs_scale_model* sm, int i) {
  return i >= 0 && i < sm->nseg ? sm->seg_name[i] : NULL;
}
int mbs_scale_model_find_segment(const mbs_scale_model* sm, const char* name) {
  for (int i = 0; i < sm->nseg; i++)
    if (!strcmp(sm->seg_name[i], name)) return i;
  return -1;
}
int mbs_scale_model_noffset_frame(const mbs_scale_model* sm) { return sm->noff; }
const char* mbs_scale_model_offset_frame(const mbs_scale_model* sm, int i) {
  return i >= 0 && i < sm->noff ? sm->off_name[i] : NULL;
}

double mbs_scale_model_total_mass(const mbs_scale_model* sm) {
  double total = 0, m;
  for (int i = 1; i < sm->nseg; i++)
    if (parse_numbers(child(sm->seg[i], "mass"), &m, 1) == 1) total += m;
  return total;
}

int mbs_scale_model_set_name(mbs_scale_model* sm, const char* name) {
  return xmlSetProp(sm->model, (const xmlChar*)"name", (const xmlChar*)name) ? MBS_OK
                                                                              : MBS_ERR_NO_MEMORY;
}

//---------------------------------- the component tree ----------------------------------------

static int ends_with(const char* s, const char* suffix) {
  const size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

// the component name of an element ("" when it is not a component)
static const char* comp_name(xmlNodePtr n, char* buf, size_t size) {
  name_of(n, buf, size);
  if (*buf) return buf;
  if (ends_with(tag(n), "Set") && strlen(tag(n)) < size) {
    size_t i = 0;
    for (const char* t = tag(n); *t; t++) buf[i++] = (char)tolower((unsigned char)*t);
    buf[i] = 0;
  }
  return buf;
}

static int is_component(xmlNodePtr n) {
  char b[256];
  return is_elem(n) && (*comp_name(n, b, sizeof(b)) || tag_is(n, "Model"));
}

static xmlNodePtr comp_parent(const mbs_scale_model* sm, xmlNodePtr n) {
  if (n == sm->model) return NULL;
  for (xmlNodePtr p = n->parent; p && p->type == XML_ELEMENT_NODE; p = p->parent)
    if (p == sm->model || is_component(p)) return p;
  return NULL;
}

static xmlNodePtr comp_child(xmlNodePtr n, const char* name) {
  for (xmlNodePtr c = n->children; c; c = c->next) {
    if (!is_elem(c) || is_defaults(c)) continue;
    char b[256];
    if (*comp_name(c, b, sizeof(b))) {
      if (!strcmp(b, name)) return c;
    } else {
      xmlNodePtr f = comp_child(c, name);
      if (f) return f;
    }
  }
  return NULL;
}

// first element of a tag with that name anywhere (not in <defaults>)
static xmlNodePtr find_named(xmlNodePtr n, const char* t, const char* name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next) {
    if (!is_elem(c) || is_defaults(c)) continue;
    if (tag_is(c, t) && named(c, name)) return c;
    xmlNodePtr f = find_named(c, t, name);
    if (f) return f;
  }
  return NULL;
}

static int segment_of(const mbs_scale_model* sm, xmlNodePtr n) {
  for (int i = 0; i < sm->nseg; i++)
    if (sm->seg[i] && sm->seg[i] == n) return i;
  return -1;
}

// the element a socket path names, from its owner
static xmlNodePtr follow_path(const mbs_scale_model* sm, const char* path, xmlNodePtr owner) {
  char buf[1024];
  snprintf(buf, sizeof(buf), "%s", path);
  xmlNodePtr cur = buf[0] == '/' ? sm->model : owner;
  char* save = NULL;
  for (char* s = strtok_r(buf, "/", &save); s && cur; s = strtok_r(NULL, "/", &save)) {
    if (!strcmp(s, ".")) continue;
    cur = !strcmp(s, "..") ? comp_parent(sm, cur) : comp_child(cur, s);
  }
  return cur;
}

// the frame a socket names: its base segment and its transform in that segment's frame
static int resolve_frame(const mbs_scale_model* sm, const char* path, xmlNodePtr owner,
                         int* seg, mbs_transform* X_SF, int depth) {
  if (!path || !*path || depth > MAX_FRAME_DEPTH) return -1;
  xmlNodePtr f = follow_path(sm, path, owner);
  int s = f ? segment_of(sm, f) : -1;
  if (s < 0 && !(f && tag_is(f, "PhysicalOffsetFrame"))) {
    const char* last = strrchr(path, '/');
    last = last ? last + 1 : path;
    s = mbs_scale_model_find_segment(sm, last);
    f = s >= 0 ? sm->seg[s] : find_named(sm->model, "PhysicalOffsetFrame", last);
    if (s < 0 && !f) return -1;
  }
  if (s >= 0) {
    *seg = s;
    mbs_tf_identity(X_SF);
    return 0;
  }
  char parent[1024];
  text(child(f, "socket_parent"), parent, sizeof(parent));
  mbs_transform X_SP, X_PF;
  if (resolve_frame(sm, parent, f, seg, &X_SP, depth + 1)) return -1;
  double ang[3] = {0, 0, 0}, p[3] = {0, 0, 0};
  xmlNodePtr c;
  if ((c = child(f, "orientation")) && parse_numbers(c, ang, 3) != 3) return -1;
  if ((c = child(f, "translation")) && parse_numbers(c, p, 3) != 3) return -1;
  mbs_tf_from_xyz(&X_PF, ang, p);
  mbs_tf_mul(X_SF, &X_SP, &X_PF);
  return 0;
}

// the base segment of the frame named by field `field` of element e (or by <body>)
static int frame_of(const mbs_scale_model* sm, xmlNodePtr e, const char* field, int* seg,
                    mbs_transform* X_SF, mbs_error* err) {
  char b[1024], nm[256];
  xmlNodePtr c = child(e, field);
  if (!c) c = child(e, "body");
  text(c, b, sizeof(b));
  if (!*b)
    return fail(sm, err, MBS_ERR_PARSE, e, "%s '%s': <%s> is missing", tag(e),
                name_of(e, nm, sizeof(nm)), field);
  mbs_transform X;
  if (resolve_frame(sm, b, e, seg, X_SF ? X_SF : &X, 0))
    return fail(sm, err, MBS_ERR_PARSE, c, "%s '%s': <%s>%s</%s> is not a frame of the model",
                tag(e), name_of(e, nm, sizeof(nm)), tag(c), b, tag(c));
  return MBS_OK;
}

//---------------------------------- markers ----------------------------------------------------

static xmlNodePtr marker_objects(mbs_scale_model* sm, int create) {
  xmlNodePtr set = child(sm->model, "MarkerSet");
  if (!set && create) {
    set = xmlNewChild(sm->model, NULL, (const xmlChar*)"MarkerSet", NULL);
    if (!set) return NULL;
    xmlSetProp(set, (const xmlChar*)"name", (const xmlChar*)"markerset");
  }
  xmlNodePtr objs = child(set, "objects");
  if (!objs && set && create) {
    objs = xmlNewDocNode(sm->doc, NULL, (const xmlChar*)"objects", NULL);
    if (!objs) return NULL;
    if (set->children) xmlAddPrevSibling(set->children, objs);
    else xmlAddChild(set, objs);
  }
  return objs;
}

static xmlNodePtr find_marker(mbs_scale_model* sm, const char* name) {
  xmlNodePtr objs = marker_objects(sm, 0);
  for (xmlNodePtr c = objs ? objs->children : NULL; c; c = c->next)
    if (tag_is(c, "Marker") && named(c, name)) return c;
  return NULL;
}

int mbs_scale_model_update_markers(mbs_scale_model* sm, const char* marker_set_file,
                                   int* nreplaced, int* nadded, mbs_error* err) {
  int replaced = 0, added = 0;
  xmlDocPtr doc = read_xml(marker_set_file, NULL, 0, err);
  if (!doc) return err->code;
  int rc = MBS_OK;
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr set = tag_is(root, "MarkerSet") ? root : child(root, "MarkerSet");
  xmlNodePtr objs = child(set, "objects");
  if (!set) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, marker_set_file, "%s:%d: no <MarkerSet> in the file",
                  marker_set_file, line_of(root));
    goto done;
  }
  xmlNodePtr mine = marker_objects(sm, 1);
  if (!mine) {
    rc = fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
    goto done;
  }
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next) {
    if (!is_elem(e)) continue;
    char nm[256], b[1024];
    const int line = line_of(e);
    if (!tag_is(e, "Marker") || !*name_of(e, nm, sizeof(nm))) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, marker_set_file, "%s:%d: <%s> is not a named Marker",
                    marker_set_file, line, tag(e));
      goto done;
    }
    const int body_line = line_of(child(e, "body"));
    xmlNodePtr copy = xmlDocCopyNode(e, sm->doc, 1);
    if (!copy) {
      rc = fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
      goto done;
    }
    // OpenSim 4's form: <socket_parent_frame> naming the body by its path
    xmlNodePtr body = child(copy, "body");
    if (body && !child(copy, "socket_parent_frame")) {
      text(body, b, sizeof(b));
      const int s = mbs_scale_model_find_segment(sm, b);
      if (s < 0) {
        xmlFreeNode(copy);
        rc = MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, marker_set_file,
                      "%s:%d: Marker '%s': the model %s has no body '%s'", marker_set_file,
                      body_line, nm, sm->path, b);
        goto done;
      }
      char* p = s == 0 ? mbs_format_string("/%s", sm->seg_name[0])
                       : mbs_format_string("/bodyset/%s", sm->seg_name[s]);
      xmlNodePtr sock = p ? xmlNewDocNode(sm->doc, NULL, (const xmlChar*)"socket_parent_frame",
                                          (const xmlChar*)p)
                          : NULL;
      free(p);
      if (!sock) {
        xmlFreeNode(copy);
        rc = fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
        goto done;
      }
      xmlAddPrevSibling(copy->children ? copy->children : body, sock);
      if (!sock->parent) xmlAddChild(copy, sock);
    }
    if (body) {
      xmlUnlinkNode(body);
      xmlFreeNode(body);
    }
    xmlNodePtr vis = child(copy, "VisibleObject");
    if (vis) {
      xmlUnlinkNode(vis);
      xmlFreeNode(vis);
    }
    xmlNodePtr old = find_marker(sm, nm);
    if (old) {
      xmlReplaceNode(old, copy);
      xmlFreeNode(old);
      replaced++;
    } else {
      xmlAddChild(mine, copy);
      added++;
    }
    int seg;
    if (frame_of(sm, copy, "socket_parent_frame", &seg, NULL, err)) {
      rc = MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, marker_set_file,
                    "%s:%d: Marker '%s': its frame is not in the model %s", marker_set_file,
                    line, nm, sm->path);
      goto done;
    }
  }
done:
  xmlFreeDoc(doc);
  if (nreplaced) *nreplaced = replaced;
  if (nadded) *nadded = added;
  return rc;
}

int mbs_scale_model_keep_markers(mbs_scale_model* sm, const char* const* names, int n,
                                 int* ndeleted) {
  int deleted = 0;
  xmlNodePtr objs = marker_objects(sm, 0);
  for (xmlNodePtr c = objs ? objs->children : NULL, next; c; c = next) {
    next = c->next;
    if (!tag_is(c, "Marker")) continue;
    char nm[256];
    name_of(c, nm, sizeof(nm));
    int keep = 0;
    for (int i = 0; i < n && !keep; i++) keep = names[i] && !strcmp(names[i], nm);
    if (keep) continue;
    xmlUnlinkNode(c);
    xmlFreeNode(c);
    deleted++;
  }
  if (ndeleted) *ndeleted = deleted;
  return MBS_OK;
}

int mbs_scale_model_set_marker(mbs_scale_model* sm, const char* name, const double p_B[3],
                               mbs_error* err) {
  xmlNodePtr mk = find_marker(sm, name);
  if (!mk) return fail(sm, err, MBS_ERR_UNKNOWN_NAME, NULL, "no marker '%s'", name);
  int seg;
  mbs_transform X_SF, X_FS;
  int rc = frame_of(sm, mk, "socket_parent_frame", &seg, &X_SF, err);
  if (rc) return rc;
  mbs_tf_inverse(&X_FS, &X_SF);
  double p_F[3];
  mbs_tf_point(p_F, &X_FS, p_B);
  xmlNodePtr loc = child(mk, "location");
  if (!loc) loc = xmlNewChild(mk, NULL, (const xmlChar*)"location", NULL);
  if (!loc) return fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  return set_numbers(loc, p_F, 3);
}

//---------------------------------- building and writing ---------------------------------------

char* mbs_scale_model_text(const mbs_scale_model* sm, size_t* n, mbs_error* err) {
  xmlChar* mem = NULL;
  int size = 0;
  xmlDocDumpFormatMemoryEnc(sm->doc, &mem, &size, "UTF-8", 1);
  char* out = mem && size >= 0 ? malloc((size_t)size + 1) : NULL;
  if (out) {
    memcpy(out, mem, (size_t)size);
    out[size] = 0;
    if (n) *n = (size_t)size;
  } else {
    fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory writing the document");
  }
  xmlFree(mem);
  return out;
}

static int write_text(const char* path, const char* s, size_t n, mbs_error* err) {
  FILE* f = fopen(path, "w");
  if (!f) return MBS_FAIL(err, MBS_ERR_IO, path, "cannot write %s", path);
  const int ok = fwrite(s, 1, n, f) == n;
  if (fclose(f) || !ok) return MBS_FAIL(err, MBS_ERR_IO, path, "cannot write %s", path);
  return MBS_OK;
}

int mbs_scale_model_write(const mbs_scale_model* sm, const char* path, mbs_error* err) {
  size_t n = 0;
  char* s = mbs_scale_model_text(sm, &n, err);
  if (!s) return err->code;
  const int rc = write_text(path, s, n, err);
  free(s);
  return rc;
}

int mbs_scale_model_write_markers(const mbs_scale_model* sm, const char* path, mbs_error* err) {
  xmlDocPtr doc = xmlNewDoc((const xmlChar*)"1.0");
  xmlNodePtr root = doc ? xmlNewDocNode(doc, NULL, (const xmlChar*)"OpenSimDocument", NULL)
                        : NULL;
  if (!root) {
    xmlFreeDoc(doc);
    return fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  }
  xmlDocSetRootElement(doc, root);
  xmlSetProp(root, (const xmlChar*)"Version", (const xmlChar*)"40000");
  xmlNodePtr set = xmlNewChild(root, NULL, (const xmlChar*)"MarkerSet", NULL);
  xmlNodePtr objs = set ? xmlNewChild(set, NULL, (const xmlChar*)"objects", NULL) : NULL;
  if (set) xmlSetProp(set, (const xmlChar*)"name", (const xmlChar*)"markerset");
  xmlNodePtr mine = child(child(sm->model, "MarkerSet"), "objects");
  for (xmlNodePtr c = mine ? mine->children : NULL; c && objs; c = c->next)
    if (tag_is(c, "Marker")) xmlAddChild(objs, xmlDocCopyNode(c, doc, 1));
  if (set) xmlNewChild(set, NULL, (const xmlChar*)"groups", NULL);
  xmlChar* mem = NULL;
  int size = 0;
  xmlDocDumpFormatMemoryEnc(doc, &mem, &size, "UTF-8", 1);
  int rc = mem && objs ? write_text(path, (const char*)mem, (size_t)size, err)
                       : fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  xmlFree(mem);
  xmlFreeDoc(doc);
  return rc;
}

int mbs_scale_set_write(const char* path, int n, const char* const* segments,
                        const double* factors, mbs_error* err) {
  FILE* f = fopen(path, "w");
  if (!f) return MBS_FAIL(err, MBS_ERR_IO, path, "cannot write %s", path);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<OpenSimDocument Version=\"40000\">\n"
             "\t<ScaleSet name=\"ScaleSet\">\n\t\t<objects>\n");
  for (int i = 0; i < n; i++) {
    char num[3][40];
    for (int k = 0; k < 3; k++) mbs_scale_format_number(num[k], 40, factors[3 * i + k]);
    xmlChar* seg = xmlEncodeSpecialChars(NULL, (const xmlChar*)segments[i]);
    fprintf(f, "\t\t\t<Scale>\n\t\t\t\t<scales> %s %s %s</scales>\n\t\t\t\t<segment>%s</segment>"
               "\n\t\t\t\t<apply>true</apply>\n\t\t\t</Scale>\n", num[0], num[1], num[2],
            seg ? (const char*)seg : "");
    xmlFree(seg);
  }
  fprintf(f, "\t\t</objects>\n\t\t<groups />\n\t</ScaleSet>\n</OpenSimDocument>\n");
  if (fclose(f)) return MBS_FAIL(err, MBS_ERR_IO, path, "cannot write %s", path);
  return MBS_OK;
}

// every force of a ForceSet made to apply (so that every path is built)
static void enable_forces(xmlNodePtr n) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next) {
    if (!is_elem(c)) continue;
    if (tag_is(c, "appliesForce")) xmlNodeSetContent(c, (const xmlChar*)"true");
    else if (tag_is(c, "isDisabled")) xmlNodeSetContent(c, (const xmlChar*)"false");
    else enable_forces(c);
  }
}

static mbs_osim_model* build(const mbs_scale_model* sm, const mbs_osim_options* o,
                             int all_forces, mbs_error* err) {
  xmlDocPtr doc = sm->doc;
  if (all_forces) {
    doc = xmlCopyDoc(sm->doc, 1);
    if (!doc) {
      fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
      return NULL;
    }
    enable_forces(child(child(xmlDocGetRootElement(doc), "Model"), "ForceSet"));
  }
  xmlChar* mem = NULL;
  int size = 0;
  xmlDocDumpFormatMemoryEnc(doc, &mem, &size, "UTF-8", 1);
  if (doc != sm->doc) xmlFreeDoc(doc);
  if (!mem) {
    fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
    return NULL;
  }
  mbs_osim_model* m = mbs_osim_parse((const char*)mem, (size_t)size, sm->path, o, err);
  xmlFree(mem);
  return m;
}

mbs_osim_model* mbs_scale_model_build(const mbs_scale_model* sm, const mbs_osim_options* o,
                                      mbs_error* err) {
  return build(sm, o, 0, err);
}

//---------------------------------- scaling ----------------------------------------------------

typedef struct scaler {
  mbs_scale_model* sm;
  const double* F;       // 3 per segment
  mbs_error* err;
  mbs_osim_model* m0;    // the model before scaling
  mbs_scale_report* rep;
} scaler;

static int uniform(const double s[3]) {
  for (int k = 1; k < 3; k++) {
    const double a = s[0], b = s[k];
    double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    if (scale < 1) scale = 1;
    if (!(fabs(a - b) <= scale * SIGNIFICANT_REAL)) return 0;
  }
  return 1;
}

static int is_unit(const double s[3]) { return s[0] == 1 && s[1] == 1 && s[2] == 1; }

// multiply the k numbers of child `field` elementwise by s (absent: nothing to do)
static int scale_field(scaler* z, xmlNodePtr e, const char* field, const double* s, int k) {
  xmlNodePtr c = child(e, field);
  if (!c) return MBS_OK;
  double v[6];
  if (parse_numbers(c, v, k) != k) {
    char nm[256];
    return fail(z->sm, z->err, MBS_ERR_PARSE, c, "%s '%s': <%s> is not %d numbers", tag(e),
                name_of(e, nm, sizeof(nm)), field, k);
  }
  for (int i = 0; i < k; i++) v[i] *= s[i];
  return set_numbers(c, v, k);
}

static int scale_scalar(scaler* z, xmlNodePtr e, const char* field, double f) {
  return scale_field(z, e, field, (const double[3]){f, f, f}, 1);
}

// a frame's attached geometry (Mesh and other Geometry: scale_factors), and 3.x VisibleObject
static int scale_geometry(scaler* z, xmlNodePtr frame, const double s[3]) {
  xmlNodePtr ag = child(frame, "attached_geometry");
  for (xmlNodePtr g = ag ? ag->children : NULL; g; g = g->next) {
    if (!is_elem(g)) continue;
    int rc = scale_field(z, g, "scale_factors", s, 3);
    if (rc) return rc;
  }
  xmlNodePtr vis = child(frame, "VisibleObject");
  return vis ? scale_field(z, vis, "scale_factors", s, 3) : MBS_OK;
}

// the frame's base segment factors (of the frame named by `field` of e)
static int factors_of(scaler* z, xmlNodePtr e, const char* field, const double** s) {
  int seg;
  int rc = frame_of(z->sm, e, field, &seg, NULL, z->err);
  if (rc) return rc;
  *s = z->F + 3 * seg;
  return MBS_OK;
}

static double norm_prod(const double R[9], int col, const double s[3]) {
  double n = 0;
  for (int r = 0; r < 3; r++) n += (R[3 * r + col] * s[r]) * (R[3 * r + col] * s[r]);
  return sqrt(n);
}

// a wrap object of a frame whose base segment scales by s
static int scale_wrap(scaler* z, xmlNodePtr w, const double s[3]) {
  int rc = scale_field(z, w, "translation", s, 3);
  if (rc) return rc;
  double ang[3] = {0, 0, 0}, R[9];
  xmlNodePtr c = child(w, "xyz_body_rotation");
  if (c && parse_numbers(c, ang, 3) != 3)
    return fail(z->sm, z->err, MBS_ERR_PARSE, c, "%s: <xyz_body_rotation> is not 3 numbers",
                tag(w));
  mbs_rot_body_xyz(R, ang);
  const double lx = norm_prod(R, 0, s), ly = norm_prod(R, 1, s), lz = norm_prod(R, 2, s);
  if (tag_is(w, "WrapSphere")) {
    rc = scale_scalar(z, w, "radius", (s[0] + s[1] + s[2]) / 3);
  } else if (tag_is(w, "WrapCylinder")) {
    if (!(rc = scale_scalar(z, w, "radius", 0.5 * (lx + ly))))
      rc = scale_scalar(z, w, "length", lz);
  } else if (tag_is(w, "WrapEllipsoid")) {
    rc = scale_field(z, w, "dimensions", (const double[3]){lx, ly, lz}, 3);
  } else if (tag_is(w, "WrapTorus")) {
    if (!(rc = scale_scalar(z, w, "inner_radius", 0.5 * (lx + ly))))
      rc = scale_scalar(z, w, "outer_radius", 0.5 * (lx + ly));
  } else if (!is_unit(s)) {
    char nm[256];
    warn(z->sm, w, "%s '%s': its translation is scaled, its dimensions are not (a kind "
         "mbstudy does not scale)", tag(w), name_of(w, nm, sizeof(nm)));
  }
  if (!rc) z->rep->nwraps++;
  return rc;
}

static int scale_wraps(scaler* z, xmlNodePtr frame, const double s[3]) {
  xmlNodePtr objs = child(child(frame, "WrapObjectSet"), "objects");
  for (xmlNodePtr w = objs ? objs->children : NULL; w; w = w->next) {
    if (!is_elem(w)) continue;
    int rc = scale_wrap(z, w, s);
    if (rc) return rc;
  }
  return MBS_OK;
}

// the function element of a holder: <holder><function><X/></function></holder>, an element
// named "function" of any class (OpenSim 4's TransformAxis), or the holder's only element
// (a moving point's x_location); *wrap receives the <function> wrapper when there is one
static xmlNodePtr function_in(xmlNodePtr holder, int by_name) {
  xmlNodePtr f = child(holder, "function");
  if (f) {
    xmlNodePtr inner = first_elem(f);
    if (inner) return inner;
  }
  for (xmlNodePtr c = holder ? holder->children : NULL; c; c = c->next) {
    if (!is_elem(c)) continue;
    if (!by_name || named(c, "function")) return c;
  }
  return NULL;
}

// make function element fn a MultiplierFunction of scale `factor` (or multiply its scale)
static int multiply_function(scaler* z, xmlNodePtr fn, double factor) {
  if (tag_is(fn, "MultiplierFunction")) {
    xmlNodePtr sc = child(fn, "scale");
    if (!sc) {
      char num[40];
      mbs_scale_format_number(num, sizeof(num), factor);
      return xmlNewChild(fn, NULL, (const xmlChar*)"scale", (const xmlChar*)num)
                 ? MBS_OK
                 : fail(z->sm, z->err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
    }
    return scale_scalar(z, fn, "scale", factor);
  }
  xmlNodePtr mf = xmlNewDocNode(z->sm->doc, NULL, (const xmlChar*)"MultiplierFunction", NULL);
  if (!mf) return fail(z->sm, z->err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  xmlChar* nm = xmlGetProp(fn, (const xmlChar*)"name");
  if (nm) {
    xmlSetProp(mf, (const xmlChar*)"name", nm);
    xmlUnsetProp(fn, (const xmlChar*)"name");
  }
  xmlFree(nm);
  xmlReplaceNode(fn, mf);
  xmlNodePtr wrap = xmlNewChild(mf, NULL, (const xmlChar*)"function", NULL);
  char num[40];
  mbs_scale_format_number(num, sizeof(num), factor);
  xmlNodePtr sc = xmlNewChild(mf, NULL, (const xmlChar*)"scale", (const xmlChar*)num);
  if (!wrap || !sc) {
    xmlFreeNode(fn);
    return fail(z->sm, z->err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  }
  xmlAddChild(wrap, fn);
  z->rep->nfunctions++;
  return MBS_OK;
}

static int scale_custom_joint(scaler* z, xmlNodePtr j, const double s[3]) {
  static const char* const trans[3] = {"translation1", "translation2", "translation3"};
  xmlNodePtr st = child(j, "SpatialTransform");
  for (xmlNodePtr ta = st ? st->children : NULL; ta; ta = ta->next) {
    if (!tag_is(ta, "TransformAxis")) continue;
    int is_trans = 0;
    for (int k = 0; k < 3; k++) is_trans |= named(ta, trans[k]);
    if (!is_trans) continue;
    xmlNodePtr fn = function_in(ta, 1);
    if (!fn) continue;  // a coordinate's linear function of slope 1 (or the constant 0)
    if (tag_is(fn, "LinearFunction")) {
      double c[2];
      if (parse_numbers(child(fn, "coefficients"), c, 2) == 2 && c[0] == 1 && c[1] == 0)
        continue;  // the axis is a coordinate
    }
    double axis[3] = {0, 0, 0};
    xmlNodePtr ax = child(ta, "axis");
    if (!ax || parse_numbers(ax, axis, 3) != 3)
      return fail(z->sm, z->err, MBS_ERR_PARSE, ax ? ax : ta,
                  "TransformAxis of CustomJoint: <axis> is not 3 numbers");
    const double f = fabs(axis[0]) * s[0] + fabs(axis[1]) * s[1] + fabs(axis[2]) * s[2];
    int rc = multiply_function(z, fn, f);
    if (rc) return rc;
  }
  return MBS_OK;
}

static int scale_moving_point(scaler* z, xmlNodePtr p, const double s[3]) {
  static const char* const loc[3] = {"x_location", "y_location", "z_location"};
  for (int k = 0; k < 3; k++) {
    xmlNodePtr h = child(p, loc[k]);
    xmlNodePtr fn = h ? function_in(h, 0) : NULL;
    if (!fn) continue;
    int rc = multiply_function(z, fn, s[k]);
    if (rc) return rc;
  }
  z->rep->npoints++;
  return MBS_OK;
}

// the Coordinate element of that name and its joint
static xmlNodePtr find_coordinate(const mbs_scale_model* sm, const char* name, xmlNodePtr* joint) {
  xmlNodePtr objs = child(child(sm->model, "JointSet"), "objects");
  for (xmlNodePtr j = objs ? objs->children : NULL; j; j = j->next) {
    xmlNodePtr cs = is_elem(j) ? child(j, "coordinates") : NULL;
    for (xmlNodePtr c = cs ? cs->children : NULL; c; c = c->next)
      if (tag_is(c, "Coordinate") && named(c, name)) {
        *joint = j;
        return c;
      }
  }
  return NULL;
}

static int scale_coupler(scaler* z, xmlNodePtr e) {
  char dep[256], nm[256];
  text(child(e, "dependent_coordinate_name"), dep, sizeof(dep));
  name_of(e, nm, sizeof(nm));
  const int ci = mbs_osim_find_coordinate(z->m0, dep);
  if (ci < 0 || mbs_osim_coordinate_info(z->m0, ci)->motion != MBS_OSIM_TRANSLATIONAL)
    return MBS_OK;  // rotations are not scaled
  xmlNodePtr joint = NULL;
  if (!find_coordinate(z->sm, dep, &joint) || !joint) return MBS_OK;
  const double* s;
  int rc = factors_of(z, joint, "socket_parent_frame", &s);
  if (rc) return rc;
  if (!(s[0] == s[1] && s[0] == s[2]))
    return fail(z->sm, z->err, MBS_ERR_ARGUMENT, e,
                "CoordinateCouplerConstraint '%s': its dependent coordinate '%s' is a "
                "translation of a joint whose parent scales non-uniformly (%g %g %g); OpenSim "
                "does not scale that either", nm, dep, s[0], s[1], s[2]);
  if (!child(e, "scale_factor")) {
    char num[40];
    mbs_scale_format_number(num, sizeof(num), s[0]);
    return xmlNewChild(e, NULL, (const xmlChar*)"scale_factor", (const xmlChar*)num)
               ? MBS_OK
               : fail(z->sm, z->err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  }
  return scale_scalar(z, e, "scale_factor", s[0]);
}

// every element of the model (but <defaults>), by kind
static int walk(scaler* z, xmlNodePtr n) {
  for (xmlNodePtr e = n ? n->children : NULL; e; e = e->next) {
    if (!is_elem(e) || is_defaults(e)) continue;
    const char* t = tag(e);
    const double* s = NULL;
    int rc = MBS_OK;
    const int seg = segment_of(z->sm, e);
    char nm[256];
    if (seg >= 0) {  // Ground or a body
      s = z->F + 3 * seg;
      if (seg > 0) rc = scale_field(z, e, "mass_center", s, 3);
      if (!rc) rc = scale_geometry(z, e, s);
      if (!rc) rc = scale_wraps(z, e, s);
    } else if (!strcmp(t, "PhysicalOffsetFrame")) {
      rc = factors_of(z, e, "socket_parent", &s);
      if (!rc) rc = scale_field(z, e, "translation", s, 3);
      if (!rc) rc = scale_geometry(z, e, s);
      if (!rc) rc = scale_wraps(z, e, s);
      if (!rc) z->rep->nframes++;
    } else if (!strcmp(t, "Marker")) {
      if (!(rc = factors_of(z, e, "socket_parent_frame", &s)))
        rc = scale_field(z, e, "location", s, 3);
      if (!rc) z->rep->nmarkers++;
    } else if (!strcmp(t, "PathPoint") || !strcmp(t, "ConditionalPathPoint") ||
               !strcmp(t, "Station")) {
      if (!(rc = factors_of(z, e, "socket_parent_frame", &s)))
        rc = scale_field(z, e, "location", s, 3);
      if (!rc) z->rep->npoints++;
    } else if (!strcmp(t, "MovingPathPoint")) {
      if (!(rc = factors_of(z, e, "socket_parent_frame", &s))) rc = scale_moving_point(z, e, s);
    } else if (!strcmp(t, "CustomJoint")) {
      if (!(rc = factors_of(z, e, "socket_parent_frame", &s))) rc = scale_custom_joint(z, e, s);
    } else if (!strcmp(t, "EllipsoidJoint")) {
      if (!(rc = factors_of(z, e, "socket_parent_frame", &s)))
        rc = scale_field(z, e, "radii_x_y_z", s, 3);
    } else if (!strcmp(t, "ScapulothoracicJoint") || !strcmp(t, "ConstantCurvatureJoint")) {
      warn(z->sm, e, "%s '%s' is not scaled (mbstudy does not scale that kind of joint)", t,
           name_of(e, nm, sizeof(nm)));
    } else if (!strcmp(t, "CoordinateCouplerConstraint")) {
      rc = scale_coupler(z, e);
    } else if (!strncmp(t, "Contact", 7) && child(e, "socket_frame")) {
      if (!(rc = factors_of(z, e, "socket_frame", &s)) && !is_unit(s))
        warn(z->sm, e, "%s '%s' is on a scaled body and is not scaled (as in OpenSim 4)", t,
             name_of(e, nm, sizeof(nm)));
    }
    if (rc) return rc;
    // sets of wrap objects were handled with their frame; the rest is walked into
    if (!tag_is(e, "WrapObjectSet") && (rc = walk(z, e))) return rc;
  }
  return MBS_OK;
}

// OpenSim's Body::scaleInertialProperties: mass and inertia about the mass centre (xx yy zz xy
// xz yz) for the scale factors s
static void scale_inertia(double* mass, double I6[6], const double s[3], int scale_mass) {
  const double unscaled = *mass;
  const double msf = fabs(s[0] * s[1] * s[2]);
  if (scale_mass) *mass *= msf;
  double I[3][3] = {{I6[0], I6[3], I6[4]}, {I6[3], I6[1], I6[5]}, {I6[4], I6[5], I6[2]}};
  if (*mass <= DBL_EPSILON) {
    memset(I, 0, sizeof(I));
  } else if (uniform(s)) {
    const double f = (scale_mass ? msf : 1) * s[0] * s[0];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) I[r][c] *= f;
  } else {
    // OpenSim's rule: the body taken for a cylinder (inertia about its centre) along its axis of
    // least inertia, its radius from that moment and its length from another one, then the
    // radius scaled by the geometric mean of the other two factors and the length by the axis's
    int axis;
    if (I[0][0] <= I[1][1]) axis = I[0][0] <= I[2][2] ? 0 : 2;
    else axis = I[1][1] <= I[2][2] ? 1 : 2;
    double term = 2.0 * I[axis][axis] / unscaled;
    const double radius = term < 0 ? 0 : sqrt(term);
    const int oa = axis == 0 ? 1 : 0;
    term = 12.0 * (I[oa][oa] - 0.25 * unscaled * radius * radius) / unscaled;
    double length = term < 0 ? 0 : sqrt(term);
    length *= s[axis];
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const double rad_sqr = radius * s[a1] * radius * s[a2];
    const double m = *mass;
    for (int k = 0; k < 3; k++)
      I[k][k] = k == axis ? 0.5 * m * rad_sqr : m * (length * length / 12.0 + 0.25 * rad_sqr);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++)
        if (r != c) I[r][c] *= s[r] * s[c] * (scale_mass ? msf : 1);
  }
  I6[0] = I[0][0];
  I6[1] = I[1][1];
  I6[2] = I[2][2];
  I6[3] = I[0][1];
  I6[4] = I[0][2];
  I6[5] = I[1][2];
}

static int body_inertial(scaler* z, int seg, double* mass, double I[6], xmlNodePtr* cm,
                         xmlNodePtr* ci) {
  xmlNodePtr b = z->sm->seg[seg];
  *cm = child(b, "mass");
  *ci = child(b, "inertia");
  *mass = 0;
  memset(I, 0, 6 * sizeof(double));
  if (*cm && parse_numbers(*cm, mass, 1) != 1)
    return fail(z->sm, z->err, MBS_ERR_PARSE, *cm, "Body '%s': <mass> is not a number",
                z->sm->seg_name[seg]);
  if (*ci && parse_numbers(*ci, I, 6) != 6)
    return fail(z->sm, z->err, MBS_ERR_PARSE, *ci, "Body '%s': <inertia> is not 6 numbers "
                "(xx yy zz xy xz yz)", z->sm->seg_name[seg]);
  return MBS_OK;
}

static int scale_masses(scaler* z, double subject_mass, int preserve) {
  double total = 0;
  for (int i = 1; i < z->sm->nseg; i++) {
    double mass, I[6];
    xmlNodePtr cm, ci;
    int rc = body_inertial(z, i, &mass, I, &cm, &ci);
    if (rc) return rc;
    z->rep->mass_before += mass;
    scale_inertia(&mass, I, z->F + 3 * i, !preserve);
    if (cm) set_numbers(cm, &mass, 1);
    if (ci) set_numbers(ci, I, 6);
    total += mass;
  }
  double f = 1;
  if (subject_mass > 0 && total > 0) f = subject_mass / total;
  z->rep->mass_after = 0;
  for (int i = 1; i < z->sm->nseg; i++) {
    double mass, I[6];
    xmlNodePtr cm, ci;
    int rc = body_inertial(z, i, &mass, I, &cm, &ci);
    if (rc) return rc;
    if (f != 1) {
      mass *= f;
      for (int k = 0; k < 6; k++) I[k] *= f;
      if (cm) set_numbers(cm, &mass, 1);
      if (ci) set_numbers(ci, I, 6);
    }
    z->rep->mass_after += mass;
  }
  return MBS_OK;
}

// the length of every path at the default pose, by owner (the force's name)
typedef struct lengths {
  int n;
  const char** owner;
  double* L;
} lengths;

static int path_lengths(const mbs_scale_model* sm, mbs_osim_model* m, lengths* out,
                        mbs_error* err) {
  const mbs_system* sys = mbs_osim_system(m);
  const int np = mbs_system_npath(sys);
  out->n = 0;
  out->owner = calloc((size_t)np + 1, sizeof(char*));
  out->L = calloc((size_t)np + 1, sizeof(double));
  mbs_state* st = mbs_state_create(sys);
  int rc = MBS_OK;
  if (!out->owner || !out->L || !st) {
    rc = fail(sm, err, MBS_ERR_NO_MEMORY, NULL, "out of memory");
  } else if ((rc = mbs_osim_default_state(m, st)) || (rc = mbs_realize_position(sys, st))) {
    rc = fail(sm, err, rc, NULL, "the default pose: %s", mbs_state_error(st)->message);
  } else {
    for (int p = 0; p < np && !rc; p++) {
      double L;
      if ((rc = mbs_calc_path_length(sys, st, p, &L, NULL))) {
        rc = fail(sm, err, rc, NULL, "path of '%s': %s", mbs_path_owner(sys, p),
                  mbs_state_error(st)->message);
        break;
      }
      out->owner[out->n] = mbs_path_owner(sys, p);
      out->L[out->n++] = L;
    }
  }
  mbs_state_destroy(st);
  return rc;
}

static double length_of(const lengths* l, const char* owner) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->owner[i], owner)) return l->L[i];
  return NAN;
}

static int is_muscle(const char* t) { return ends_with(t, "Muscle") || strstr(t, "Muscle_"); }

static int scale_lengths(scaler* z, const lengths* pre, const lengths* post) {
  xmlNodePtr objs = child(child(z->sm->model, "ForceSet"), "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next) {
    if (!is_elem(e) || !child(e, "GeometryPath")) continue;
    const char* t = tag(e);
    const char* props[2] = {NULL, NULL};
    if (is_muscle(t)) {
      props[0] = "optimal_fiber_length";
      props[1] = "tendon_slack_length";
    } else if (!strcmp(t, "Ligament") || !strcmp(t, "PathSpring")) {
      props[0] = "resting_length";
    } else if (!strcmp(t, "Blankevoort1991Ligament")) {
      props[0] = "slack_length";
    } else {
      continue;  // path actuators: nothing depends on the path's length
    }
    char nm[256];
    name_of(e, nm, sizeof(nm));
    const double L0 = length_of(pre, nm), L1 = length_of(post, nm);
    if (!(L0 > 0) || !isfinite(L1)) {
      warn(z->sm, e, "%s '%s': its path's length is not known to mbstudy; its lengths are "
           "not scaled", t, nm);
      continue;
    }
    for (int k = 0; k < 2 && props[k]; k++) {
      int rc = scale_scalar(z, e, props[k], L1 / L0);
      if (rc) return rc;
    }
    z->rep->nlengths++;
  }
  return MBS_OK;
}

int mbs_scale_model_apply(mbs_scale_model* sm, const double* factors, double subject_mass,
                          int preserve_mass_distribution, const mbs_osim_options* o,
                          mbs_scale_report* rep, mbs_error* err) {
  mbs_scale_report local;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof(*rep));
  for (int i = 0; i < 3 * sm->nseg; i++)
    if (!isfinite(factors[i]) || factors[i] == 0)
      return fail(sm, err, MBS_ERR_ARGUMENT, NULL, "segment '%s': scale factor %g is not a "
                  "finite non-zero number", sm->seg_name[i / 3], factors[i]);
  scaler z = {.sm = sm, .F = factors, .err = err, .rep = rep};
  lengths pre = {0, NULL, NULL}, post = {0, NULL, NULL};
  mbs_osim_model* m1 = NULL;
  int rc = MBS_OK;
  z.m0 = build(sm, o, 1, err);
  if (!z.m0) return err->code;
  if ((rc = path_lengths(sm, z.m0, &pre, err))) goto done;
  if ((rc = walk(&z, sm->model))) goto done;
  if ((rc = scale_masses(&z, subject_mass, preserve_mass_distribution))) goto done;
  if (!(m1 = build(sm, o, 1, err))) {
    rc = err->code;
    goto done;
  }
  if ((rc = path_lengths(sm, m1, &post, err))) goto done;
  rc = scale_lengths(&z, &pre, &post);
done:
  free(pre.owner);
  free(pre.L);
  free(post.owner);
  free(post.L);
  mbs_osim_free(z.m0);
  mbs_osim_free(m1);
  return rc;
}

//---------------------------------- measurements ----------------------------------------------

int mbs_scale_frame_range(const mbs_table* t, double t0, double t1, int* i0, int* i1) {
  if (!t || t->nrow < 1 || t0 > t1) return MBS_ERR_ARGUMENT;
  *i0 = 0;
  *i1 = t->nrow - 1;
  for (int i = t->nrow - 1; i >= 0; i--)
    if (mbs_table_get(t, i, 0) <= t0) {
      *i0 = i;
      break;
    }
  for (int i = *i0; i < t->nrow; i++)
    if (mbs_table_get(t, i, 0) >= t1) {
      *i1 = i;
      break;
    }
  return MBS_OK;
}

double mbs_scale_marker_distance(const mbs_table* t, int a, int b, int i0, int i1) {
  double sum = 0;
  for (int i = i0; i <= i1; i++) {
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
      const double x = mbs_table_get(t, i, 1 + 3 * b + k) - mbs_table_get(t, i, 1 + 3 * a + k);
      d2 += x * x;
    }
    if (!isfinite(d2)) return NAN;
    sum += sqrt(d2);
  }
  return sum / (i1 - i0 + 1);
}
