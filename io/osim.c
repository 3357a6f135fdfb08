// Reading OpenSim 4.x models (.osim) into an mbs_system.
//
// The document is parsed with libxml2, then read in passes: frames (Ground, bodies, the
// PhysicalOffsetFrames of joints, forces and bodies) are collected with their socket paths;
// joints are ordered from Ground outward so that every parent comes before its child; bodies
// and mobilizers are added in that order; then functions, constraints, contact geometry, forces
// and actuators, markers; finally the system is finalized. Socket paths are resolved as
// OpenSim does: an absolute path from the model ("/bodyset/femur_r"), or a path relative to the
// component that owns the socket ("femur_r_offset", "../femur_r"), with a search by name as
// the last resort.
#include "mbs/osim.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/constraint.h"
#include "mbs/contact.h"
#include "mbs/dynamics.h"
#include "mbs/force.h"
#include "mbs/mesh.h"
#include "mbs/path.h"
#include "mbs/path_force.h"
#include "mbs/spatial.h"
#include "mbs/table.h"
#include "osim_upgrade.h"
#include "xml_read.h"

//---------------------------------- reading XML safely (xml_read.h) ----------------------------

// what the parser met while reading, kept in the parser context's _private
typedef struct xml_guard {
  int entity_line;    // line of the first entity declaration, 0 if none
  int doctype_line;   // line of the document type (<!DOCTYPE ...>), 0 if none
} xml_guard;

// an entity declaration (general or parameter, parsed or unparsed): the document is refused
// here, before the entity exists, so nothing can ever expand it
static void xml_refuse_entity(xmlParserCtxtPtr ctxt) {
  xml_guard* g = ctxt->_private;
  if (g && !g->entity_line) {
    const int line = xmlSAX2GetLineNumber(ctxt);
    g->entity_line = line > 0 ? line : 1;
  }
  ctxt->wellFormed = 0;
  xmlStopParser(ctxt);
}

static void xml_entity_decl(void* ctx, const xmlChar* name, int type, const xmlChar* public_id,
                            const xmlChar* system_id, xmlChar* content) {
  (void)name, (void)type, (void)public_id, (void)system_id, (void)content;
  xml_refuse_entity(ctx);
}

static void xml_unparsed_entity_decl(void* ctx, const xmlChar* name, const xmlChar* public_id,
                                     const xmlChar* system_id, const xmlChar* notation) {
  (void)name, (void)public_id, (void)system_id, (void)notation;
  xml_refuse_entity(ctx);
}

static void xml_internal_subset(void* ctx, const xmlChar* name, const xmlChar* external_id,
                                const xmlChar* system_id) {
  xmlParserCtxtPtr ctxt = ctx;
  xml_guard* g = ctxt->_private;
  if (g && !g->doctype_line) g->doctype_line = xmlSAX2GetLineNumber(ctxt);
  xmlSAX2InternalSubset(ctx, name, external_id, system_id);
}

// entity declarations in a document type that reached the tree anyway (a second line of
// defence: the SAX hooks above refuse them first)
static int xml_dtd_declares_entities(xmlDtdPtr dtd) {
  if (!dtd) return 0;
  if (dtd->entities || dtd->pentities) return 1;
  for (xmlNodePtr n = dtd->children; n; n = n->next)
    if (n->type == XML_ENTITY_DECL) return 1;
  return 0;
}

xmlDocPtr mbs_xml_read(const char* path, const char* text, size_t n, int options,
                       const char* what, mbs_xml_failure* f) {
  mbs_xml_failure local;
  if (!f) f = &local;
  memset(f, 0, sizeof(*f));
  if (!what) what = "this file";
  if (text && n > (size_t)INT_MAX) {
    snprintf(f->msg, sizeof(f->msg), "more than 2 GB of text");
    return NULL;
  }
  options &= ~(XML_PARSE_HUGE | XML_PARSE_NOENT | XML_PARSE_DTDLOAD | XML_PARSE_DTDATTR |
               XML_PARSE_DTDVALID | XML_PARSE_XINCLUDE);
  options |= XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  xmlResetLastError();
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt || !ctxt->sax) {
    xmlFreeParserCtxt(ctxt);
    snprintf(f->msg, sizeof(f->msg), "out of memory");
    return NULL;
  }
  xml_guard g = {0, 0};
  ctxt->_private = &g;
  ctxt->sax->entityDecl = xml_entity_decl;
  ctxt->sax->unparsedEntityDecl = xml_unparsed_entity_decl;
  ctxt->sax->internalSubset = xml_internal_subset;
  xmlDocPtr doc = text ? xmlCtxtReadMemory(ctxt, text, (int)n, path, NULL, options)
                       : xmlCtxtReadFile(ctxt, path ? path : "", NULL, options);
  if (doc && !g.entity_line &&
      (xml_dtd_declares_entities(doc->intSubset) || xml_dtd_declares_entities(doc->extSubset)))
    g.entity_line = g.doctype_line > 0 ? g.doctype_line : 1;
  if (g.entity_line) {
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    f->line = g.entity_line;
    f->entities = 1;
    snprintf(f->msg, sizeof(f->msg),
             "entity declarations are not allowed in %s (a document type with <!ENTITY ...>)",
             what);
    return NULL;
  }
  if (!doc) {
    const xmlError* e = ctxt->lastError.code != XML_ERR_OK ? &ctxt->lastError : xmlGetLastError();
    snprintf(f->msg, sizeof(f->msg), "%s",
             e && e->message ? e->message : "not a well-formed XML document");
    const size_t len = strlen(f->msg);
    if (len && f->msg[len - 1] == '\n') f->msg[len - 1] = 0;
    f->line = e ? e->line : 0;
    f->io = e && e->domain == XML_FROM_IO;
  }
  xmlFreeParserCtxt(ctxt);
  return doc;
}

//---------------------------------- the model --------------------------------------------------

typedef struct frame_rec {
  char* path;          // absolute component path, e.g. "/jointset/knee_r/femur_r_offset"
  char* parent;        // socket_parent as written (offset frames), else NULL
  char* owner;         // path of the component owning the socket, for relative paths
  int body;            // body record for a body frame; -1 for ground; -2 for offset frames
  double angles[3], p[3];
  int line;
  int state;           // 0 unresolved, 1 resolving, 2 resolved
  int res_body;        // resolved: body record (-1 = Ground)
  mbs_transform X;     // resolved: the frame in its body
} frame_rec;

typedef struct body_rec {
  char* name;
  xmlNodePtr node;
  int line;
  int sys;             // index in the system once added, 0 for none yet
} body_rec;

typedef struct joint_rec {
  char* name;
  const char* kind;
  xmlNodePtr node;
  int line;
  int parent_frame, child_frame;
  int done;
} joint_rec;

// an auxiliary state's value in the file (a muscle's default fiber length)
typedef struct zdef_rec {
  int force;
  const char* field;
  double value;
} zdef_rec;

struct mbs_osim_model {
  char* path;
  char* dir;
  char* name;
  int version;
  mbs_system* sys;
  // coordinates
  mbs_osim_coordinate* coord;
  int ncoord, cap_coord;
  // records, markers, warnings
  mbs_osim_record* rec;
  int nrec, cap_rec, nmuscle;
  mbs_osim_marker* marker;
  int nmarker, cap_marker;
  zdef_rec* zdef;
  int nzdef, cap_zdef;
  char** warning;
  int nwarning, cap_warning;
  // the external loads' data file and its time range (mbs_osim_external_loads_range)
  const char* loads_data;
  double loads_t0, loads_t1;
  // strings and arrays owned by the model
  void** pool;
  int npool, cap_pool;
  // reading state
  frame_rec* frame;
  int nframe, cap_frame;
  body_rec* body;
  int nbody, cap_body;
  joint_rec* joint;
  int njoint, cap_joint;
  mbs_error* err;
  const mbs_osim_options* opt;
  int old_thelen;  // Thelen2003Muscles of an OpenSim 1.x/2.x document read as the deprecated
};

static int grow(void** p, int* cap, int need, size_t size) {
  if (need <= *cap) return 1;
  int c = *cap ? *cap : 8;
  while (c < need) c *= 2;
  void* q = realloc(*p, (size_t)c * size);
  if (!q) return 0;
  *p = q;
  *cap = c;
  return 1;
}
#define GROW(arr, cap, need) grow((void**)&(arr), &(cap), (need), sizeof(*(arr)))

// keep a malloc'ed block until the model is freed
static void* keep(mbs_osim_model* m, void* p) {
  if (!p) return NULL;
  if (!GROW(m->pool, m->cap_pool, m->npool + 1)) {
    free(p);
    return NULL;
  }
  m->pool[m->npool++] = p;
  return p;
}

static char* dup_str(const char* s) {
  if (!s) return NULL;
  const size_t n = strlen(s);
  char* r = malloc(n + 1);
  if (r) memcpy(r, s, n + 1);
  return r;
}

static const char* base_name(const char* path) {
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

// an error naming the file, the line and the component
static int fail_at(mbs_osim_model* m, int line, const char* kind, const char* name, int code,
                   const char* f, ...) __attribute__((format(printf, 6, 7)));
static int fail_at(mbs_osim_model* m, int line, const char* kind, const char* name, int code,
                   const char* f, ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof(msg), f, ap);
  va_end(ap);
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "%s '%s'", kind ? kind : "", name ? name : "");
  if (kind)
    return mbs_error_set(m->err, code, "mbs_osim_read", line, comp, "%s:%d: %s '%s': %s",
                         base_name(m->path), line, kind, name ? name : "", msg);
  return mbs_error_set(m->err, code, "mbs_osim_read", line, base_name(m->path), "%s:%d: %s",
                       base_name(m->path), line, msg);
}

static void warn_at(mbs_osim_model* m, int line, const char* kind, const char* name,
                    const char* f, ...) __attribute__((format(printf, 5, 6)));
static void warn_at(mbs_osim_model* m, int line, const char* kind, const char* name,
                    const char* f, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof(msg), f, ap);
  va_end(ap);
  char* w = mbs_format_string("%s:%d: %s '%s': %s", base_name(m->path), line, kind,
                              name ? name : "", msg);
  if (!w || !GROW(m->warning, m->cap_warning, m->nwarning + 1)) {
    free(w);
    return;
  }
  m->warning[m->nwarning++] = w;
}

// the options' parameter values (mbs_osim_options.param_values) set on the finalized System:
// each names parameters that exist, and gives values within their valid ranges
static int set_param_values(mbs_osim_model* m, int line) {
  const mbs_osim_options* o = m->opt;
  for (int k = 0; k < o->nparam_values; k++) {
    const mbs_osim_param_value* v = &o->param_values[k];
    char idx[24];
    snprintf(idx, sizeof(idx), "[%d]", v->component);
    int matched = 0;
    for (int b = 0; b < mbs_system_nparam_block(m->sys); b++) {
      const mbs_param_info* info = mbs_system_param_block(m->sys, b);
      if (fnmatch(v->path, info->path, FNM_PATHNAME) || v->component < 0 ||
          v->component >= info->size)
        continue;
      const int i = info->index + v->component;
      const double x = v->is_scale ? v->value * mbs_system_param_default(m->sys, i) : v->value;
      if (!(x >= info->lower && x <= info->upper))  // NaN too
        return fail_at(m, line, "Model", m->name, MBS_ERR_ARGUMENT,
                       "parameter %s%s = %g is outside its valid range (%g .. %g)",
                       info->path, info->size > 1 ? idx : "", x, info->lower, info->upper);
      mbs_system_set_param_default(m->sys, i, x);
      matched++;
    }
    if (!matched)
      return fail_at(m, line, "Model", m->name, MBS_ERR_UNKNOWN_NAME,
                     "parameter '%s%s' matches no parameter of the model (* and ? match "
                     "within one path segment; see mbstudy model params)", v->path,
                     v->component ? idx : "");
  }
  return MBS_OK;
}

// a system error, with the file and line of the element being built
static int sys_fail(mbs_osim_model* m, int line, const char* kind, const char* name) {
  const mbs_error* e = mbs_system_error(m->sys);
  return fail_at(m, line, kind, name, e->code ? e->code : MBS_ERR_INTERNAL, "%s", e->message);
}

//---------------------------------- XML helpers ------------------------------------------------

static int is_elem(xmlNodePtr n) { return n && n->type == XML_ELEMENT_NODE; }
static int line_of(xmlNodePtr n) { return n ? (int)xmlGetLineNo(n) : 0; }
static const char* tag(xmlNodePtr n) { return (const char*)n->name; }

static xmlNodePtr child(xmlNodePtr n, const char* name) {
  if (!n) return NULL;
  for (xmlNodePtr c = n->children; c; c = c->next)
    if (is_elem(c) && strcmp(tag(c), name) == 0) return c;
  return NULL;
}

// the first element child (any name)
static xmlNodePtr first_elem(xmlNodePtr n) {
  if (!n) return NULL;
  for (xmlNodePtr c = n->children; c; c = c->next)
    if (is_elem(c)) return c;
  return NULL;
}

// the text of an element, trimmed, kept by the model ("" if empty; NULL if n is NULL)
static const char* text_of(mbs_osim_model* m, xmlNodePtr n) {
  if (!n) return NULL;
  xmlChar* t = xmlNodeGetContent(n);
  const char* s = t ? (const char*)t : "";
  while (isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
  char* r = malloc(len + 1);
  if (r) {
    memcpy(r, s, len);
    r[len] = 0;
  }
  xmlFree(t);
  return keep(m, r);
}

static const char* keep_name(mbs_osim_model* m, xmlNodePtr n) {
  xmlChar* a = xmlGetProp(n, (const xmlChar*)"name");
  char* r = dup_str(a ? (const char*)a : "");
  xmlFree(a);
  return keep(m, r);
}

// parse exactly `count` numbers from the text of child `field` of n (OpenSim writes "Inf",
// "-Inf" and "NaN" too); returns 0 and sets the error when absent or malformed
static int read_numbers(mbs_osim_model* m, xmlNodePtr n, const char* field, double* out,
                        int count, const char* kind, const char* name) {
  xmlNodePtr c = child(n, field);
  if (!c)
    return fail_at(m, line_of(n), kind, name, MBS_ERR_PARSE, "<%s> is missing", field), 0;
  const char* s = text_of(m, c);
  if (!s) return fail_at(m, line_of(c), kind, name, MBS_ERR_NO_MEMORY, "out of memory"), 0;
  const char* p = s;
  for (int i = 0; i < count; i++) {
    char* end;
    errno = 0;
    const double v = strtod(p, &end);
    if (end == p)
      return fail_at(m, line_of(c), kind, name, MBS_ERR_PARSE,
                     "<%s> needs %d number%s, got '%s'", field, count, count > 1 ? "s" : "", s),
             0;
    out[i] = v;
    p = end;
  }
  while (isspace((unsigned char)*p)) p++;
  if (*p)
    return fail_at(m, line_of(c), kind, name, MBS_ERR_PARSE,
                   "<%s> needs %d number%s, got '%s'", field, count, count > 1 ? "s" : "", s),
           0;
  return 1;
}

// like read_numbers, with a default when the field is absent
static int read_numbers_or(mbs_osim_model* m, xmlNodePtr n, const char* field, double* out,
                           int count, const double* dflt, const char* kind, const char* name) {
  if (!child(n, field)) {
    for (int i = 0; i < count; i++) out[i] = dflt[i];
    return 1;
  }
  return read_numbers(m, n, field, out, count, kind, name);
}

static int read_number_or(mbs_osim_model* m, xmlNodePtr n, const char* field, double* out,
                          double dflt, const char* kind, const char* name) {
  return read_numbers_or(m, n, field, out, 1, &dflt, kind, name);
}

// a list of numbers of any length (at least `min`); the array is kept by the model
static double* read_list(mbs_osim_model* m, xmlNodePtr c, int* count, const char* kind,
                         const char* name) {
  const char* s = text_of(m, c);
  int cap = 0, n = 0;
  double* v = NULL;
  const char* p = s ? s : "";
  for (;;) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p) break;
    char* end;
    const double x = strtod(p, &end);
    if (end == p) {
      free(v);
      fail_at(m, line_of(c), kind, name, MBS_ERR_PARSE, "<%s>: '%.40s' is not a number",
              tag(c), p);
      return NULL;
    }
    if (!GROW(v, cap, n + 1)) {
      free(v);
      fail_at(m, line_of(c), kind, name, MBS_ERR_NO_MEMORY, "out of memory");
      return NULL;
    }
    v[n++] = x;
    p = end;
  }
  *count = n;
  if (!v) v = malloc(sizeof(double));
  return keep(m, v);
}

// true/false (also 1/0); missing: dflt
static int read_bool(mbs_osim_model* m, xmlNodePtr n, const char* field, int dflt) {
  const char* s = text_of(m, child(n, field));
  if (!s || !*s) return dflt;
  if (!strcmp(s, "true") || !strcmp(s, "1")) return 1;
  if (!strcmp(s, "false") || !strcmp(s, "0")) return 0;
  warn_at(m, line_of(child(n, field)), tag(n), base_name(s), "<%s>%s</%s> is not true/false; "
          "using %s", field, s, field, dflt ? "true" : "false");
  return dflt;
}

//---------------------------------- paths and frames -------------------------------------------

// join and normalize a socket path against its owner ("a/b" + "../c" -> "a/c")
static char* resolve_path(const char* owner, const char* rel) {
  char* joined = rel[0] == '/' ? dup_str(rel) : mbs_format_string("%s/%s", owner ? owner : "", rel);
  if (!joined) return NULL;
  // split into segments, drop "." and apply ".."
  char* out = malloc(strlen(joined) + 2);
  if (!out) {
    free(joined);
    return NULL;
  }
  size_t len = 0;
  out[0] = 0;
  char* save = NULL;
  for (char* seg = strtok_r(joined, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
    if (!strcmp(seg, ".") || !*seg) continue;
    if (!strcmp(seg, "..")) {
      while (len > 0 && out[len - 1] != '/') len--;
      if (len > 0) len--;  // the slash
      out[len] = 0;
      continue;
    }
    out[len++] = '/';
    strcpy(out + len, seg);
    len += strlen(seg);
  }
  if (len == 0) {
    out[0] = '/';
    out[1] = 0;
  }
  free(joined);
  return out;
}

static int find_frame_path(mbs_osim_model* m, const char* path) {
  for (int i = 0; i < m->nframe; i++)
    if (!strcmp(m->frame[i].path, path)) return i;
  return -1;
}

// a frame by socket text relative to `owner`; -1 when not found (no error set)
static int find_frame(mbs_osim_model* m, const char* owner, const char* socket) {
  if (!socket || !*socket) return -1;
  char* p = resolve_path(owner, socket);
  if (!p) return -1;
  int f = find_frame_path(m, p);
  free(p);
  if (f >= 0) return f;
  // OpenSim 4.0 files also name frames by a path relative to the model, or by name alone
  p = resolve_path("", socket);
  if (p) {
    f = find_frame_path(m, p);
    free(p);
    if (f >= 0) return f;
  }
  const char* want = base_name(socket);
  int found = -1, count = 0;
  for (int i = 0; i < m->nframe; i++)
    if (!strcmp(base_name(m->frame[i].path), want)) {
      found = i;
      count++;
    }
  if (count == 1) return found;
  if (!strcmp(want, "ground")) return 0;
  return -1;
}

static int add_frame(mbs_osim_model* m, char* path, char* owner, const char* parent, int body,
                     const double angles[3], const double p[3], int line) {
  if (!path || !GROW(m->frame, m->cap_frame, m->nframe + 1)) {
    free(path);
    free(owner);
    return -1;
  }
  frame_rec* f = &m->frame[m->nframe];
  memset(f, 0, sizeof(*f));
  f->path = keep(m, path);
  f->owner = keep(m, owner);
  f->parent = parent ? keep(m, dup_str(parent)) : NULL;
  f->body = body;
  if (angles) memcpy(f->angles, angles, sizeof(f->angles));
  if (p) memcpy(f->p, p, sizeof(f->p));
  f->line = line;
  return m->nframe++;
}

// offset frames inside <frames> or <components> of a component at `owner_path`
static int collect_offset_frames(mbs_osim_model* m, xmlNodePtr list, const char* owner_path) {
  if (!list) return MBS_OK;
  for (xmlNodePtr c = list->children; c; c = c->next) {
    if (!is_elem(c)) continue;
    if (strcmp(tag(c), "PhysicalOffsetFrame") != 0) continue;
    const char* nm = keep_name(m, c);
    double ang[3], p[3];
    static const double zero[3] = {0, 0, 0};
    if (!read_numbers_or(m, c, "orientation", ang, 3, zero, "PhysicalOffsetFrame", nm) ||
        !read_numbers_or(m, c, "translation", p, 3, zero, "PhysicalOffsetFrame", nm))
      return m->err->code;
    const char* parent = text_of(m, child(c, "socket_parent"));
    if (!parent || !*parent)
      return fail_at(m, line_of(c), "PhysicalOffsetFrame", nm, MBS_ERR_PARSE,
                     "<socket_parent> is missing");
    char* path = mbs_format_string("%s/%s", owner_path, nm);
    // a frame's socket path is relative to the frame itself
    if (add_frame(m, path, dup_str(path), parent, -2, ang, p, line_of(c)) < 0)
      return fail_at(m, line_of(c), "PhysicalOffsetFrame", nm, MBS_ERR_NO_MEMORY,
                     "out of memory");
    // frames may own frames
    int rc = collect_offset_frames(m, child(c, "components"), m->frame[m->nframe - 1].path);
    if (rc) return rc;
  }
  return MBS_OK;
}

static int resolve_frame(mbs_osim_model* m, int f) {
  frame_rec* fr = &m->frame[f];
  if (fr->state == 2) return MBS_OK;
  if (fr->state == 1)
    return fail_at(m, fr->line, "PhysicalOffsetFrame", base_name(fr->path), MBS_ERR_PARSE,
                   "frames refer to each other in a circle");
  if (fr->body != -2) {  // Ground or a body
    fr->res_body = fr->body;
    mbs_tf_identity(&fr->X);
    fr->state = 2;
    return MBS_OK;
  }
  fr->state = 1;
  // a frame's socket_parent is relative to the frame (".." is its owner); OpenSim 4.0 files
  // often write the owner-relative form, which find_frame also tries
  int par = find_frame(m, fr->owner, fr->parent);
  if (par < 0) {
    char* up = resolve_path(fr->owner, "..");
    par = up ? find_frame(m, up, fr->parent) : -1;
    free(up);
  }
  if (par < 0)
    return fail_at(m, fr->line, "PhysicalOffsetFrame", base_name(fr->path), MBS_ERR_PARSE,
                   "socket_parent '%s' is not a frame of the model", fr->parent);
  int rc = resolve_frame(m, par);
  if (rc) return rc;
  fr = &m->frame[f];
  mbs_transform X_PO;
  mbs_tf_from_xyz(&X_PO, fr->angles, fr->p);
  mbs_tf_mul(&fr->X, &m->frame[par].X, &X_PO);
  fr->res_body = m->frame[par].res_body;
  fr->state = 2;
  return MBS_OK;
}

// a socket naming a frame: resolved body record (-1 Ground) and the frame in that body
static int socket_frame(mbs_osim_model* m, const char* owner, xmlNodePtr n, const char* field,
                        const char* kind, const char* name, int* body, mbs_transform* X) {
  xmlNodePtr c = child(n, field);
  const char* s = text_of(m, c);
  if (!s || !*s)
    return fail_at(m, line_of(c ? c : n), kind, name, MBS_ERR_PARSE, "<%s> is missing", field);
  const int f = find_frame(m, owner, s);
  if (f < 0)
    return fail_at(m, line_of(c), kind, name, MBS_ERR_PARSE,
                   "<%s>%s</%s> is not a frame of the model", field, s, field);
  int rc = resolve_frame(m, f);
  if (rc) return rc;
  *body = m->frame[f].res_body;
  if (X) *X = m->frame[f].X;
  return MBS_OK;
}

// the system index of a body record (-1 = Ground)
static int sys_body(mbs_osim_model* m, int rec) { return rec < 0 ? 0 : m->body[rec].sys; }

// a body given by name or path (older elements such as PointActuator's <body>)
static int body_by_name(mbs_osim_model* m, const char* s) {
  if (!s || !*s) return -2;
  const char* b = base_name(s);
  if (!strcmp(b, "ground")) return -1;
  for (int i = 0; i < m->nbody; i++)
    if (!strcmp(m->body[i].name, b)) return i;
  return -2;
}

static void frame_spec_of(const mbs_transform* X, mbs_frame_spec* f) {
  mbs_rot_to_body_xyz(f->angles, X->R);
  memcpy(f->p, X->p, sizeof(f->p));
}

//---------------------------------- functions --------------------------------------------------

// Add the OpenSim function element `fn` (Constant, LinearFunction, PolynomialFunction,
// SimmSpline, NaturalCubicSpline, GCVSpline, PiecewiseLinearFunction, MultiplierFunction) as
// function `fname`; returns its index or a negative status.
static int add_function(mbs_osim_model* m, xmlNodePtr fn, const char* fname, const char* kind,
                        const char* name) {
  if (!fn)
    return fail_at(m, 0, kind, name, MBS_ERR_PARSE, "a function is missing");
  const char* t = tag(fn);
  mbs_function_spec s;
  memset(&s, 0, sizeof(s));
  s.name = fname;
  s.inner = -1;
  double coef[4];
  int n = 0, nx = 0, ny = 0;
  if (!strcmp(t, "Constant")) {
    if (!read_numbers(m, fn, "value", coef, 1, kind, name)) return m->err->code;
    s.type = MBS_FUNC_CONSTANT;
    s.coefs = coef;
  } else if (!strcmp(t, "LinearFunction")) {
    if (!read_numbers(m, fn, "coefficients", coef, 2, kind, name)) return m->err->code;
    s.type = MBS_FUNC_LINEAR;
    s.coefs = coef;
  } else if (!strcmp(t, "PolynomialFunction")) {
    xmlNodePtr c = child(fn, "coefficients");
    if (!c) return fail_at(m, line_of(fn), kind, name, MBS_ERR_PARSE, "<coefficients> missing");
    const double* v = read_list(m, c, &n, kind, name);
    if (!v) return m->err->code;
    s.type = MBS_FUNC_POLYNOMIAL;
    s.n = n;
    s.coefs = v;
  } else if (!strcmp(t, "SimmSpline") || !strcmp(t, "NaturalCubicSpline") ||
             !strcmp(t, "GCVSpline") || !strcmp(t, "PiecewiseLinearFunction")) {
    xmlNodePtr cx = child(fn, "x"), cy = child(fn, "y");
    if (!cx || !cy)
      return fail_at(m, line_of(fn), kind, name, MBS_ERR_PARSE, "%s needs <x> and <y>", t);
    s.x = read_list(m, cx, &nx, kind, name);
    s.y = s.x ? read_list(m, cy, &ny, kind, name) : NULL;
    if (!s.x || !s.y) return m->err->code;
    if (nx != ny)
      return fail_at(m, line_of(fn), kind, name, MBS_ERR_PARSE,
                     "%s has %d x values and %d y values", t, nx, ny);
    s.n = nx;
    if (!strcmp(t, "SimmSpline")) s.type = MBS_FUNC_SIMM_SPLINE;
    else if (!strcmp(t, "PiecewiseLinearFunction")) s.type = MBS_FUNC_PIECEWISE_LINEAR;
    else s.type = MBS_FUNC_NATURAL_CUBIC_SPLINE;
    if (!strcmp(t, "GCVSpline"))
      warn_at(m, line_of(fn), kind, name,
              "GCVSpline is interpolated by a natural cubic spline through its points");
    if (nx == 1) {  // a single point: a constant, as OpenSim evaluates it
      s.type = MBS_FUNC_CONSTANT;
      coef[0] = s.y[0];
      s.coefs = coef;
      s.n = 0;
    }
  } else if (!strcmp(t, "MultiplierFunction")) {
    xmlNodePtr inner = first_elem(child(fn, "function"));
    char* iname = mbs_format_string("%s.inner", fname);
    const int in = add_function(m, inner, keep(m, iname), kind, name);
    if (in < 0) return in;
    double scale;
    if (!read_number_or(m, fn, "scale", &scale, 1.0, kind, name)) return m->err->code;
    s.type = MBS_FUNC_MULTIPLIER;
    s.inner = in;
    s.scale = scale;
  } else if (!strcmp(t, "Sine")) {
    double a, w, ph, off;
    if (!read_number_or(m, fn, "amplitude", &a, 1, kind, name) ||
        !read_number_or(m, fn, "omega", &w, 1, kind, name) ||
        !read_number_or(m, fn, "phase", &ph, 0, kind, name) ||
        !read_number_or(m, fn, "offset", &off, 0, kind, name))
      return m->err->code;
    coef[0] = a;
    coef[1] = w;
    coef[2] = ph;
    coef[3] = off;
    s.type = MBS_FUNC_SINE;
    s.coefs = coef;
  } else {
    return fail_at(m, line_of(fn), kind, name, MBS_ERR_TOPOLOGY,
                   "function type %s is not supported", t);
  }
  const int id = mbs_system_add_function(m->sys, &s);
  if (id < 0) return sys_fail(m, line_of(fn), kind, name);
  return id;
}

//---------------------------------- bodies and joints ------------------------------------------

typedef struct joint_type {
  const char* kind;
  mbs_mobilizer_type mob;
  int ncoord;  // -1: any (CustomJoint)
} joint_type;

static const joint_type joint_types[] = {
    {"WeldJoint", MBS_MOB_WELD, 0},          {"PinJoint", MBS_MOB_PIN, 1},
    {"SliderJoint", MBS_MOB_SLIDER, 1},      {"UniversalJoint", MBS_MOB_UNIVERSAL, 2},
    {"GimbalJoint", MBS_MOB_GIMBAL, 3},      {"BallJoint", MBS_MOB_BALL_XYZ, 3},
    {"FreeJoint", MBS_MOB_FREE_XYZ, 6},      {"PlanarJoint", MBS_MOB_PLANAR, 3},
    {"EllipsoidJoint", MBS_MOB_ELLIPSOID_XYZ, 3}, {"CustomJoint", MBS_MOB_FUNCTION, -1},
};

static const joint_type* joint_type_of(const char* kind) {
  for (size_t i = 0; i < sizeof(joint_types) / sizeof(joint_types[0]); i++)
    if (!strcmp(joint_types[i].kind, kind)) return &joint_types[i];
  return NULL;
}

static int collect_bodies(mbs_osim_model* m, xmlNodePtr model) {
  // Ground first: frame 0
  xmlNodePtr ground = child(model, "Ground");
  if (add_frame(m, dup_str("/ground"), dup_str("/ground"), NULL, -1, NULL, NULL,
                line_of(ground ? ground : model)) != 0)
    return fail_at(m, line_of(model), NULL, NULL, MBS_ERR_NO_MEMORY, "out of memory");
  if (ground) {
    int rc = collect_offset_frames(m, child(ground, "components"), "/ground");
    if (rc) return rc;
  }
  xmlNodePtr objs = child(child(model, "BodySet"), "objects");
  for (xmlNodePtr b = objs ? objs->children : NULL; b; b = b->next) {
    if (!is_elem(b)) continue;
    if (strcmp(tag(b), "Body") != 0) {
      warn_at(m, line_of(b), tag(b), "", "not a Body; ignored");
      continue;
    }
    if (!GROW(m->body, m->cap_body, m->nbody + 1))
      return fail_at(m, line_of(b), "Body", "", MBS_ERR_NO_MEMORY, "out of memory");
    body_rec* r = &m->body[m->nbody];
    r->name = (char*)keep_name(m, b);
    r->node = b;
    r->line = line_of(b);
    r->sys = 0;
    if (!r->name || !*r->name)
      return fail_at(m, r->line, "Body", "", MBS_ERR_PARSE, "a body has no name");
    for (int i = 0; i < m->nbody; i++)
      if (!strcmp(m->body[i].name, r->name))
        return fail_at(m, r->line, "Body", r->name, MBS_ERR_PARSE,
                       "a body of that name exists (line %d)", m->body[i].line);
    char* path = mbs_format_string("/bodyset/%s", r->name);
    if (add_frame(m, path, path ? dup_str(path) : NULL, NULL, m->nbody, NULL, NULL, r->line) < 0)
      return fail_at(m, r->line, "Body", r->name, MBS_ERR_NO_MEMORY, "out of memory");
    m->nbody++;
    int rc = collect_offset_frames(m, child(b, "components"), m->frame[m->nframe - 1].path);
    if (rc) return rc;
  }
  return MBS_OK;
}

static int collect_joints(mbs_osim_model* m, xmlNodePtr model) {
  xmlNodePtr objs = child(child(model, "JointSet"), "objects");
  for (xmlNodePtr j = objs ? objs->children : NULL; j; j = j->next) {
    if (!is_elem(j)) continue;
    const char* nm = keep_name(m, j);
    if (!joint_type_of(tag(j)))
      return fail_at(m, line_of(j), tag(j), nm, MBS_ERR_TOPOLOGY,
                     "joint type %s is not supported (supported: WeldJoint, PinJoint, "
                     "SliderJoint, UniversalJoint, GimbalJoint, BallJoint, FreeJoint, "
                     "PlanarJoint, EllipsoidJoint, CustomJoint)", tag(j));
    char* path = mbs_format_string("/jointset/%s", nm);
    if (!keep(m, path)) return fail_at(m, line_of(j), tag(j), nm, MBS_ERR_NO_MEMORY, "memory");
    int rc = collect_offset_frames(m, child(j, "frames"), path);
    if (rc) return rc;
    if (!GROW(m->joint, m->cap_joint, m->njoint + 1))
      return fail_at(m, line_of(j), tag(j), nm, MBS_ERR_NO_MEMORY, "out of memory");
    joint_rec* r = &m->joint[m->njoint++];
    memset(r, 0, sizeof(*r));
    r->name = (char*)nm;
    r->kind = (const char*)j->name;
    r->node = j;
    r->line = line_of(j);
    r->parent_frame = r->child_frame = -1;
  }
  // sockets, once all frames are known
  for (int i = 0; i < m->njoint; i++) {
    joint_rec* r = &m->joint[i];
    char* owner = mbs_format_string("/jointset/%s", r->name);
    if (!keep(m, owner)) return fail_at(m, r->line, r->kind, r->name, MBS_ERR_NO_MEMORY, "memory");
    const char* fields[2] = {"socket_parent_frame", "socket_child_frame"};
    for (int k = 0; k < 2; k++) {
      xmlNodePtr c = child(r->node, fields[k]);
      const char* s = text_of(m, c);
      if (!s || !*s)
        return fail_at(m, r->line, r->kind, r->name, MBS_ERR_PARSE, "<%s> is missing",
                       fields[k]);
      const int f = find_frame(m, owner, s);
      if (f < 0)
        return fail_at(m, line_of(c), r->kind, r->name, MBS_ERR_PARSE,
                       "<%s>%s</%s> is not a frame of the model", fields[k], s, fields[k]);
      int rc = resolve_frame(m, f);
      if (rc) return rc;
      if (k == 0) r->parent_frame = f;
      else r->child_frame = f;
    }
    if (m->frame[r->child_frame].res_body < 0)
      return fail_at(m, r->line, r->kind, r->name, MBS_ERR_TOPOLOGY,
                     "the child frame is on Ground; reversed joints are not supported");
  }
  return MBS_OK;
}

static int add_coordinate(mbs_osim_model* m, xmlNodePtr c, const char* joint, int body, int axis,
                          mbs_osim_motion motion) {
  if (!GROW(m->coord, m->cap_coord, m->ncoord + 1))
    return fail_at(m, line_of(c), "Coordinate", "", MBS_ERR_NO_MEMORY, "out of memory");
  mbs_osim_coordinate* k = &m->coord[m->ncoord];
  memset(k, 0, sizeof(*k));
  k->name = keep_name(m, c);
  k->joint = joint;
  k->body = body;
  k->axis = axis;
  k->motion = motion;
  static const double range0[2] = {-INFINITY, INFINITY};
  if (!read_number_or(m, c, "default_value", &k->default_value, 0, "Coordinate", k->name) ||
      !read_number_or(m, c, "default_speed_value", &k->default_speed, 0, "Coordinate",
                      k->name) ||
      !read_numbers_or(m, c, "range", k->range, 2, range0, "Coordinate", k->name))
    return m->err->code;
  for (int i = 0; i < m->ncoord; i++)
    if (!strcmp(m->coord[i].name, k->name))
      return fail_at(m, line_of(c), "Coordinate", k->name, MBS_ERR_PARSE,
                     "a coordinate of that name exists (joint '%s')", m->coord[i].joint);
  k->clamped = read_bool(m, c, "clamped", 0);
  k->locked = read_bool(m, c, "locked", 0);
  k->prescribed = read_bool(m, c, "prescribed", 0);
  m->ncoord++;
  return MBS_OK;
}

// the coordinates of a joint (their Coordinate elements, in order)
static int joint_coordinates(xmlNodePtr j, xmlNodePtr* out, int max) {
  int n = 0;
  xmlNodePtr list = child(j, "coordinates");
  for (xmlNodePtr c = list ? list->children : NULL; c; c = c->next)
    if (is_elem(c) && !strcmp(tag(c), "Coordinate")) {
      if (n < max) out[n] = c;
      n++;
    }
  return n;
}

// CustomJoint: the spatial transform as a function-based mobilizer
static int custom_joint(mbs_osim_model* m, joint_rec* r, xmlNodePtr* coords, int nc,
                        mbs_function_mobilizer* fm, mbs_osim_motion* motion) {
  xmlNodePtr st = child(r->node, "SpatialTransform");
  if (!st) return fail_at(m, r->line, r->kind, r->name, MBS_ERR_PARSE, "<SpatialTransform> missing");
  memset(fm, 0, sizeof(*fm));
  fm->ncoord = nc;
  // each coordinate's motion type as OpenSim 4 gives it (CustomJoint::constructCoordinates):
  // through the axes in order, one that uses it through a LinearFunction of slope +-1 (or no
  // function: the identity) makes it rotational (rotation1..3) or translational; one with any
  // other function makes it coupled unless it is already one of those. So a knee that rotates
  // with its angle and slides along splines of it is rotational.
  enum { MT_NONE = 0, MT_ROT, MT_TRANS, MT_COUPLED };
  int mt[6] = {MT_NONE, MT_NONE, MT_NONE, MT_NONE, MT_NONE, MT_NONE};
  static const char* axes[6] = {"rotation1", "rotation2", "rotation3",
                                "translation1", "translation2", "translation3"};
  for (int a = 0; a < 6; a++) {
    xmlNodePtr ta = NULL;
    for (xmlNodePtr c = st->children; c; c = c->next) {
      if (!is_elem(c) || strcmp(tag(c), "TransformAxis") != 0) continue;
      xmlChar* an = xmlGetProp(c, (const xmlChar*)"name");
      const int hit = an && !strcmp((const char*)an, axes[a]);
      xmlFree(an);
      if (hit) {
        ta = c;
        break;
      }
    }
    mbs_spatial_axis* sa = a < 3 ? &fm->rotation[a] : &fm->translation[a - 3];
    static const double unit[6][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1},
                                      {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    if (!ta) {  // absent: no motion about/along a default axis
      memcpy(sa->axis, unit[a], sizeof(sa->axis));
      mbs_function_spec z = {MBS_FUNC_CONSTANT, NULL, 0, (const double[]){0}, NULL, NULL, 0, -1};
      char* fname = keep(m, mbs_format_string("%s/%s", r->name, axes[a]));
      z.name = fname;
      sa->function = mbs_system_add_function(m->sys, &z);
      sa->coord = -1;
      if (sa->function < 0) return sys_fail(m, r->line, r->kind, r->name);
      continue;
    }
    if (!read_numbers(m, ta, "axis", sa->axis, 3, r->kind, r->name)) return m->err->code;
    const char* cn = text_of(m, child(ta, "coordinates"));
    sa->coord = -1;
    if (cn && *cn) {
      if (strchr(cn, ' '))
        return fail_at(m, line_of(ta), r->kind, r->name, MBS_ERR_TOPOLOGY,
                       "%s depends on several coordinates (%s); one is supported", axes[a], cn);
      for (int k = 0; k < nc; k++) {
        xmlChar* kn = xmlGetProp(coords[k], (const xmlChar*)"name");
        const int hit = kn && !strcmp((const char*)kn, cn);
        xmlFree(kn);
        if (hit) sa->coord = k;
      }
      if (sa->coord < 0)
        return fail_at(m, line_of(ta), r->kind, r->name, MBS_ERR_PARSE,
                       "%s uses coordinate '%s', which is not one of the joint's", axes[a], cn);
    }
    xmlNodePtr fn = child(ta, "function");
    fn = fn ? first_elem(fn) : NULL;
    if (!fn) {  // OpenSim 4 writes the function element directly, named "function"
      for (xmlNodePtr c = ta->children; c; c = c->next)
        if (is_elem(c) && strcmp(tag(c), "coordinates") && strcmp(tag(c), "axis")) {
          fn = c;
          break;
        }
    }
    if (sa->coord >= 0) {  // the coordinate's motion type
      double c[2] = {1, 0};
      const int linear = !fn || (!strcmp(tag(fn), "LinearFunction") &&
                                 read_numbers(m, fn, "coefficients", c, 2, r->kind, r->name));
      if (fn && !strcmp(tag(fn), "LinearFunction") && !linear) return m->err->code;
      if (linear && fabs(c[0]) == 1) mt[sa->coord] = a < 3 ? MT_ROT : MT_TRANS;
      else if (mt[sa->coord] == MT_NONE) mt[sa->coord] = MT_COUPLED;
    }
    if (!fn) {  // no function: identity in the coordinate (OpenSim's default is linear 1 0)
      if (sa->coord < 0) {
        mbs_function_spec z = {MBS_FUNC_CONSTANT, NULL, 0, (const double[]){0}, NULL, NULL, 0, -1};
        z.name = keep(m, mbs_format_string("%s/%s", r->name, axes[a]));
        sa->function = mbs_system_add_function(m->sys, &z);
      } else {
        mbs_function_spec l = {MBS_FUNC_LINEAR, NULL, 0, (const double[]){1, 0}, NULL, NULL, 0, -1};
        l.name = keep(m, mbs_format_string("%s/%s", r->name, axes[a]));
        sa->function = mbs_system_add_function(m->sys, &l);
      }
      if (sa->function < 0) return sys_fail(m, line_of(ta), r->kind, r->name);
      continue;
    }
    sa->function = add_function(m, fn, keep(m, mbs_format_string("%s/%s", r->name, axes[a])),
                                r->kind, r->name);
    if (sa->function < 0) return sa->function;
  }
  for (int k = 0; k < nc; k++)
    motion[k] = mt[k] == MT_COUPLED ? MBS_OSIM_COUPLED
                : mt[k] == MT_TRANS ? MBS_OSIM_TRANSLATIONAL
                                    : MBS_OSIM_ROTATIONAL;
  return MBS_OK;
}

// OpenSim replaces an inertia that is not physical by a sphere's with the same norm of the
// moments (|(Ixx, Iyy, Izz)| / sqrt 3 each) and warns; models with such bodies were released
static void physical_inertia(mbs_osim_model* m, const body_rec* b, double I[6]) {
  double J[9];
  mbs_inertia_from_moments(J, I);
  if (mbs_inertia_is_physical(J)) return;
  const double d = sqrt(I[0] * I[0] + I[1] * I[1] + I[2] * I[2]) / sqrt(3.0);
  warn_at(m, b->line, "Body", b->name,
          "inertia (%g %g %g %g %g %g) is not physical; replaced by (%g %g %g 0 0 0) as "
          "OpenSim does", I[0], I[1], I[2], I[3], I[4], I[5], d, d, d);
  I[0] = I[1] = I[2] = d;
  I[3] = I[4] = I[5] = 0;
}

static int add_body_for_joint(mbs_osim_model* m, joint_rec* r) {
  const joint_type* jt = joint_type_of(r->kind);
  const frame_rec* pf = &m->frame[r->parent_frame];
  const frame_rec* cf = &m->frame[r->child_frame];
  body_rec* b = &m->body[cf->res_body];
  xmlNodePtr coords[6];
  const int nc = joint_coordinates(r->node, coords, 6);
  if (nc > 6)
    return fail_at(m, r->line, r->kind, r->name, MBS_ERR_PARSE, "%d coordinates (at most 6)", nc);
  if (jt->ncoord >= 0 && nc != jt->ncoord)
    return fail_at(m, r->line, r->kind, r->name, MBS_ERR_PARSE,
                   "a %s has %d coordinate%s, the file gives %d", r->kind, jt->ncoord,
                   jt->ncoord == 1 ? "" : "s", nc);
  mbs_body_spec s = mbs_body_spec_default(b->name, sys_body(m, pf->res_body), jt->mob);
  s.mobilizer_name = r->name;
  frame_spec_of(&pf->X, &s.X_PF);
  frame_spec_of(&cf->X, &s.X_BM);
  xmlNodePtr bn = b->node;
  static const double zero3[3] = {0, 0, 0};
  static const double zero6[6] = {0, 0, 0, 0, 0, 0};
  if (!read_number_or(m, bn, "mass", &s.mass, 0, "Body", b->name) ||
      !read_numbers_or(m, bn, "mass_center", s.com, 3, zero3, "Body", b->name) ||
      !read_numbers_or(m, bn, "inertia", s.inertia, 6, zero6, "Body", b->name))
    return m->err->code;
  physical_inertia(m, b, s.inertia);
  mbs_osim_motion motion[6] = {MBS_OSIM_ROTATIONAL, MBS_OSIM_ROTATIONAL, MBS_OSIM_ROTATIONAL,
                               MBS_OSIM_ROTATIONAL, MBS_OSIM_ROTATIONAL, MBS_OSIM_ROTATIONAL};
  mbs_function_mobilizer fm;
  switch (jt->mob) {
    case MBS_MOB_SLIDER: motion[0] = MBS_OSIM_TRANSLATIONAL; break;
    case MBS_MOB_PLANAR: motion[1] = motion[2] = MBS_OSIM_TRANSLATIONAL; break;
    case MBS_MOB_FREE_XYZ: motion[3] = motion[4] = motion[5] = MBS_OSIM_TRANSLATIONAL; break;
    case MBS_MOB_ELLIPSOID_XYZ:
      if (!read_numbers(m, r->node, "radii_x_y_z", s.radii, 3, r->kind, r->name))
        return m->err->code;
      break;
    case MBS_MOB_FUNCTION: {
      if (nc == 0)
        return fail_at(m, r->line, r->kind, r->name, MBS_ERR_TOPOLOGY,
                       "a CustomJoint without coordinates is not supported (use a WeldJoint)");
      int rc = custom_joint(m, r, coords, nc, &fm, motion);
      if (rc) return rc;
      s.function = &fm;
      break;
    }
    default: break;
  }
  const int id = mbs_system_add_body(m->sys, &s);
  if (id < 0) return sys_fail(m, r->line, r->kind, r->name);
  b->sys = id;
  char* jpath = keep(m, dup_str(r->name));
  for (int k = 0; k < nc; k++) {
    int rc = add_coordinate(m, coords[k], jpath, id, k, motion[k]);
    if (rc) return rc;
  }
  return MBS_OK;
}

// bodies in topological order, coordinates in the model's (file) order
static int build_tree(mbs_osim_model* m) {
  // joints are named uniquely (coordinates, state paths and reports name them), as OpenSim
  // requires of the components of a set
  for (int i = 0; i < m->njoint; i++)
    for (int j = 0; j < i; j++)
      if (!strcmp(m->joint[i].name, m->joint[j].name))
        return fail_at(m, m->joint[i].line, "Joint", m->joint[i].name, MBS_ERR_PARSE,
                       "a second joint named '%s' (the first at line %d): joint names must be "
                       "unique", m->joint[i].name, m->joint[j].line);
  // mobilizers must be added parent first; the model's coordinate order is the file's joint
  // order, so coordinates are re-sorted afterwards
  int* order = calloc((size_t)m->njoint + 1, sizeof(int));
  if (!order) return fail_at(m, 0, NULL, NULL, MBS_ERR_NO_MEMORY, "out of memory");
  int placed = 0;
  for (int progress = 1; progress;) {
    progress = 0;
    for (int i = 0; i < m->njoint; i++) {
      joint_rec* r = &m->joint[i];
      if (r->done) continue;
      const int pb = m->frame[r->parent_frame].res_body;
      const int cb = m->frame[r->child_frame].res_body;
      if (pb >= 0 && m->body[pb].sys == 0) continue;  // parent not yet in the tree
      if (m->body[cb].sys != 0) {
        free(order);
        return fail_at(m, r->line, r->kind, r->name, MBS_ERR_TOPOLOGY,
                       "body '%s' already has a joint; closing a loop needs a constraint",
                       m->body[cb].name);
      }
      const int before = m->ncoord;
      int rc = add_body_for_joint(m, r);
      if (rc) {
        free(order);
        return rc;
      }
      (void)before;
      r->done = 1;
      order[placed++] = i;
      progress = 1;
    }
  }
  free(order);
  for (int i = 0; i < m->njoint; i++) {
    const joint_rec* r = &m->joint[i];
    if (!r->done) {
      const int pb = m->frame[r->parent_frame].res_body;
      return fail_at(m, r->line, r->kind, r->name, MBS_ERR_TOPOLOGY,
                     "its parent body '%s' is not connected to ground",
                     pb >= 0 ? m->body[pb].name : "ground");
    }
  }
  // bodies without a joint: OpenSim connects them to Ground with a free joint
  for (int i = 0; i < m->nbody; i++) {
    body_rec* b = &m->body[i];
    if (b->sys != 0) continue;
    warn_at(m, b->line, "Body", b->name,
            "no joint connects it; it is attached to ground by a free joint, as OpenSim does");
    mbs_body_spec s = mbs_body_spec_default(b->name, 0, MBS_MOB_FREE_XYZ);
    static const double zero3[3] = {0, 0, 0};
    static const double zero6[6] = {0, 0, 0, 0, 0, 0};
    if (!read_number_or(m, b->node, "mass", &s.mass, 0, "Body", b->name) ||
        !read_numbers_or(m, b->node, "mass_center", s.com, 3, zero3, "Body", b->name) ||
        !read_numbers_or(m, b->node, "inertia", s.inertia, 6, zero6, "Body", b->name))
      return m->err->code;
    physical_inertia(m, b, s.inertia);
    const int id = mbs_system_add_body(m->sys, &s);
    if (id < 0) return sys_fail(m, b->line, "Body", b->name);
    b->sys = id;
  }
  // coordinates in the file's joint order (add_body_for_joint appended them in tree order)
  mbs_osim_coordinate* sorted = malloc(((size_t)m->ncoord + 1) * sizeof(*sorted));
  if (!sorted) return fail_at(m, 0, NULL, NULL, MBS_ERR_NO_MEMORY, "out of memory");
  int n = 0;
  for (int i = 0; i < m->njoint; i++)
    for (int k = 0; k < m->ncoord; k++)
      if (n < m->ncoord && !strcmp(m->coord[k].joint, m->joint[i].name))
        sorted[n++] = m->coord[k];
  if (n > 0) memcpy(m->coord, sorted, (size_t)n * sizeof(*sorted));
  free(sorted);
  return MBS_OK;
}

//---------------------------------- constraints ------------------------------------------------

static int coord_ref(mbs_osim_model* m, const char* name, mbs_coordinate_ref* ref) {
  const int k = mbs_osim_find_coordinate(m, name ? base_name(name) : "");
  if (k < 0) return 0;
  ref->body = m->coord[k].body;
  ref->axis = m->coord[k].axis;
  return 1;
}

static int add_constraint(mbs_osim_model* m, mbs_constraint_spec* c, int line, const char* kind) {
  if (mbs_system_add_constraint(m->sys, c) < 0) return sys_fail(m, line, kind, c->name);
  return MBS_OK;
}

static int read_constraints(mbs_osim_model* m, xmlNodePtr model) {
  xmlNodePtr objs = child(child(model, "ConstraintSet"), "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next) {
    if (!is_elem(e)) continue;
    const char* kind = tag(e);
    const char* nm = keep_name(m, e);
    const int line = line_of(e);
    char* owner = keep(m, mbs_format_string("/constraintset/%s", nm));
    int rc = collect_offset_frames(m, child(e, "frames"), owner);
    if (rc) return rc;
    const int enforced = read_bool(m, e, "isEnforced", !read_bool(m, e, "isDisabled", 0));
    mbs_constraint_spec c;
    int b1 = -1, b2 = -1;
    static const double zero3[3] = {0, 0, 0};
    if (!strcmp(kind, "WeldConstraint")) {
      mbs_transform X1, X2;
      if ((rc = socket_frame(m, owner, e, "socket_frame1", kind, nm, &b1, &X1)) ||
          (rc = socket_frame(m, owner, e, "socket_frame2", kind, nm, &b2, &X2)))
        return rc;
      c = mbs_constraint_spec_default(MBS_CON_WELD, nm);
      mbs_frame_spec f1, f2;
      frame_spec_of(&X1, &f1);
      frame_spec_of(&X2, &f2);
      memcpy(c.p1, f1.p, sizeof(c.p1));
      memcpy(c.a1, f1.angles, sizeof(c.a1));
      memcpy(c.p2, f2.p, sizeof(c.p2));
      memcpy(c.a2, f2.angles, sizeof(c.a2));
    } else if (!strcmp(kind, "PointConstraint") || !strcmp(kind, "ConstantDistanceConstraint")) {
      if ((rc = socket_frame(m, owner, e, "socket_body_1", kind, nm, &b1, NULL)) ||
          (rc = socket_frame(m, owner, e, "socket_body_2", kind, nm, &b2, NULL)))
        return rc;
      const int rod = !strcmp(kind, "ConstantDistanceConstraint");
      c = mbs_constraint_spec_default(rod ? MBS_CON_ROD : MBS_CON_BALL, nm);
      if (!read_numbers_or(m, e, "location_body_1", c.p1, 3, zero3, kind, nm) ||
          !read_numbers_or(m, e, "location_body_2", c.p2, 3, zero3, kind, nm) ||
          (rod && !read_numbers(m, e, "constant_distance", &c.value, 1, kind, nm)))
        return m->err->code;
    } else if (!strcmp(kind, "PointOnLineConstraint")) {
      if ((rc = socket_frame(m, owner, e, "socket_line_body", kind, nm, &b1, NULL)) ||
          (rc = socket_frame(m, owner, e, "socket_follower_body", kind, nm, &b2, NULL)))
        return rc;
      c = mbs_constraint_spec_default(MBS_CON_POINT_ON_LINE, nm);
      if (!read_numbers(m, e, "line_direction_vec", c.a1, 3, kind, nm) ||
          !read_numbers_or(m, e, "point_on_line", c.p1, 3, zero3, kind, nm) ||
          !read_numbers_or(m, e, "point_on_follower", c.p2, 3, zero3, kind, nm))
        return m->err->code;
    } else if (!strcmp(kind, "CoordinateCouplerConstraint")) {
      c = mbs_constraint_spec_default(MBS_CON_COORDINATE_COUPLER, nm);
      const char* ind = text_of(m, child(e, "independent_coordinate_names"));
      const char* dep = text_of(m, child(e, "dependent_coordinate_name"));
      if (!ind || !*ind || strchr(ind, ' '))
        return fail_at(m, line, kind, nm, MBS_ERR_TOPOLOGY,
                       "needs exactly one independent coordinate, got '%s'", ind ? ind : "");
      if (!coord_ref(m, ind, &c.independent))
        return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "unknown coordinate '%s'", ind);
      if (!dep || !coord_ref(m, dep, &c.coordinate))
        return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "unknown coordinate '%s'",
                       dep ? dep : "");
      double scale;
      if (!read_number_or(m, e, "scale_factor", &scale, 1, kind, nm)) return m->err->code;
      xmlNodePtr fn = first_elem(child(e, "coupled_coordinates_function"));
      const int f = add_function(m, fn, keep(m, mbs_format_string("%s/function", nm)), kind, nm);
      if (f < 0) return f;
      c.function = f;
      if (scale != 1) {  // OpenSim: dependent = scale * f(independent)
        char* sname = keep(m, mbs_format_string("%s/scaled", nm));
        mbs_function_spec ms = {MBS_FUNC_MULTIPLIER, sname, 0, NULL, NULL, NULL, scale, f};
        c.function = mbs_system_add_function(m->sys, &ms);
        if (c.function < 0) return sys_fail(m, line, kind, nm);
      }
      b1 = b2 = -3;  // coordinate constraints carry no bodies
    } else {
      warn_at(m, line, kind, nm, "constraint type not supported; ignored");
      continue;
    }
    if (b1 != -3) {
      c.body1 = sys_body(m, b1);
      c.body2 = sys_body(m, b2);
    }
    c.enabled = enforced;
    if ((rc = add_constraint(m, &c, line, kind))) return rc;
  }
  return MBS_OK;
}

// locked and prescribed coordinates become constraints
static int coordinate_constraints(mbs_osim_model* m, xmlNodePtr model) {
  (void)model;
  for (int k = 0; k < m->ncoord; k++) {
    mbs_osim_coordinate* c = &m->coord[k];
    if (!c->locked && !c->prescribed) continue;
    const mbs_mobilizer_type mt = mbs_body_mobilizer(m->sys, c->body);
    const int qdot_is_u = mt != MBS_MOB_BALL_XYZ && mt != MBS_MOB_FREE_XYZ &&
                          mt != MBS_MOB_ELLIPSOID_XYZ;
    if (!qdot_is_u) {
      warn_at(m, 0, "Coordinate", c->name,
              "locked or prescribed coordinates of %s mobilizers are not supported; it is free",
              mbs_mobilizer_type_name(mt));
      continue;
    }
    if (c->locked) {
      mbs_constraint_spec s = mbs_constraint_spec_default(
          MBS_CON_LOCKED_COORDINATE, keep(m, mbs_format_string("%s_locked", c->name)));
      s.coordinate = (mbs_coordinate_ref){c->body, c->axis};
      s.value = c->default_value;
      if (mbs_system_add_constraint(m->sys, &s) < 0) return sys_fail(m, 0, "Coordinate", c->name);
    }
  }
  return MBS_OK;
}

static int prescribed_coordinates(mbs_osim_model* m, xmlNodePtr model) {
  // the Coordinate elements are found again through the joints
  for (int i = 0; i < m->njoint; i++) {
    xmlNodePtr coords[6];
    const int nc = joint_coordinates(m->joint[i].node, coords, 6);
    for (int k = 0; k < nc && k < 6; k++) {
      xmlChar* kn = xmlGetProp(coords[k], (const xmlChar*)"name");
      const int ci = mbs_osim_find_coordinate(m, kn ? (const char*)kn : "");
      xmlFree(kn);
      if (ci < 0) continue;
      mbs_osim_coordinate* c = &m->coord[ci];
      if (!c->prescribed || c->locked) continue;
      xmlNodePtr fn = first_elem(child(coords[k], "prescribed_function"));
      if (!fn) {
        warn_at(m, line_of(coords[k]), "Coordinate", c->name,
                "prescribed without a prescribed_function; it is free");
        continue;
      }
      const int f = add_function(m, fn, keep(m, mbs_format_string("%s/prescribed", c->name)),
                                 "Coordinate", c->name);
      if (f < 0) return f;
      mbs_constraint_spec s = mbs_constraint_spec_default(
          MBS_CON_PRESCRIBED_MOTION, keep(m, mbs_format_string("%s_prescribed", c->name)));
      s.coordinate = (mbs_coordinate_ref){c->body, c->axis};
      s.function = f;
      if (mbs_system_add_constraint(m->sys, &s) < 0)
        return sys_fail(m, line_of(coords[k]), "Coordinate", c->name);
    }
  }
  (void)model;
  return MBS_OK;
}

//---------------------------------- records (kept, not simulated) ------------------------------

static mbs_osim_record* new_record(mbs_osim_model* m, xmlNodePtr e) {
  if (!GROW(m->rec, m->cap_rec, m->nrec + 1)) return NULL;
  mbs_osim_record* r = &m->rec[m->nrec++];
  memset(r, 0, sizeof(*r));
  r->kind = keep(m, dup_str(tag(e)));
  r->name = keep_name(m, e);
  r->line = line_of(e);
  r->body = -1;
  // every simple child element (text only) as a property
  int n = 0;
  for (xmlNodePtr c = e->children; c; c = c->next)
    if (is_elem(c) && !first_elem(c)) n++;
  mbs_osim_property* p = keep(m, calloc((size_t)n + 1, sizeof(*p)));
  if (!p) return NULL;
  n = 0;
  for (xmlNodePtr c = e->children; c; c = c->next)
    if (is_elem(c) && !first_elem(c)) {
      p[n].name = keep(m, dup_str(tag(c)));
      p[n].text = text_of(m, c);
      n++;
    }
  r->properties = p;
  r->nproperty = n;
  return r;
}

static int read_path(mbs_osim_model* m, mbs_osim_record* r, xmlNodePtr path, const char* owner) {
  xmlNodePtr pts = child(child(path, "PathPointSet"), "objects");
  int n = 0;
  for (xmlNodePtr p = pts ? pts->children : NULL; p; p = p->next) n += is_elem(p);
  mbs_osim_path_point* out = keep(m, calloc((size_t)n + 1, sizeof(*out)));
  if (!out) return fail_at(m, r->line, r->kind, r->name, MBS_ERR_NO_MEMORY, "out of memory");
  n = 0;
  for (xmlNodePtr p = pts ? pts->children : NULL; p; p = p->next) {
    if (!is_elem(p)) continue;
    mbs_osim_path_point* q = &out[n];
    q->name = keep_name(m, p);
    q->kind = keep(m, dup_str(tag(p)));
    q->coordinate = -1;
    for (int k = 0; k < 3; k++) q->location_function[k] = q->location_coordinate[k] = -1;
    int body;
    int rc = socket_frame(m, owner, p, "socket_parent_frame", tag(p), q->name, &body, NULL);
    if (rc) return rc;
    mbs_transform X;
    // the point is given in its frame; store it in the body
    const int f = find_frame(m, owner, text_of(m, child(p, "socket_parent_frame")));
    X = m->frame[f].X;
    q->body = sys_body(m, body);
    static const double zero3[3] = {0, 0, 0};
    double loc[3];
    if (!read_numbers_or(m, p, "location", loc, 3, zero3, tag(p), q->name)) return m->err->code;
    if (!strcmp(tag(p), "ConditionalPathPoint")) {
      const char* cn = text_of(m, child(p, "socket_coordinate"));
      if (!cn) cn = text_of(m, child(p, "coordinate"));
      q->coordinate = mbs_osim_find_coordinate(m, cn ? base_name(cn) : "");
      if (q->coordinate < 0)
        return fail_at(m, line_of(p), tag(p), q->name, MBS_ERR_PARSE, "unknown coordinate '%s'",
                       cn ? cn : "");
      if (!read_numbers(m, p, "range", q->range, 2, tag(p), q->name)) return m->err->code;
    } else if (!strcmp(tag(p), "MovingPathPoint")) {
      static const char* lf[3] = {"x_location", "y_location", "z_location"};
      static const char* cf[3] = {"socket_x_coordinate", "socket_y_coordinate",
                                  "socket_z_coordinate"};
      for (int k = 0; k < 3; k++) {
        xmlNodePtr fn = first_elem(child(p, lf[k]));
        if (!fn) continue;
        const char* cn = text_of(m, child(p, cf[k]));
        q->location_coordinate[k] = mbs_osim_find_coordinate(m, cn ? base_name(cn) : "");
        q->location_function[k] =
            add_function(m, fn, keep(m, mbs_format_string("%s/%s/%s", r->name, q->name, lf[k])),
                         tag(p), q->name);
        if (q->location_function[k] < 0) return q->location_function[k];
        if (q->location_coordinate[k] >= 0) {
          // value at the default pose, for a first look
          loc[k] = NAN;
        }
      }
    }
    double pb[3];
    mbs_m33_vec(pb, X.R, loc);
    for (int k = 0; k < 3; k++) q->location[k] = isnan(loc[k]) ? NAN : pb[k] + X.p[k];
    n++;
  }
  r->points = out;
  r->npoint = n;
  xmlNodePtr wraps = child(child(path, "PathWrapSet"), "objects");
  int nw = 0;
  for (xmlNodePtr w = wraps ? wraps->children : NULL; w; w = w->next) nw += is_elem(w);
  const char** wn = keep(m, calloc((size_t)nw + 1, sizeof(*wn)));
  if (!wn) return fail_at(m, r->line, r->kind, r->name, MBS_ERR_NO_MEMORY, "out of memory");
  nw = 0;
  for (xmlNodePtr w = wraps ? wraps->children : NULL; w; w = w->next)
    if (is_elem(w)) {
      const char* obj = text_of(m, child(w, "wrap_object"));
      wn[nw++] = obj ? obj : keep_name(m, w);
    }
  r->wraps = wn;
  r->nwrap = nw;
  return MBS_OK;
}

static int ends_with(const char* s, const char* suffix) {
  const size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

//---------------------------------- contact geometry -------------------------------------------

static int read_contact_geometry(mbs_osim_model* m, xmlNodePtr model) {
  xmlNodePtr objs = child(child(model, "ContactGeometrySet"), "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next) {
    if (!is_elem(e)) continue;
    const char* kind = tag(e);
    const char* nm = keep_name(m, e);
    const int line = line_of(e);
    mbs_geometry_type type;
    if (!strcmp(kind, "ContactHalfSpace")) type = MBS_GEOM_HALFSPACE;
    else if (!strcmp(kind, "ContactSphere")) type = MBS_GEOM_SPHERE;
    else if (!strcmp(kind, "ContactEllipsoid")) type = MBS_GEOM_ELLIPSOID;
    else if (!strcmp(kind, "ContactMesh")) type = MBS_GEOM_MESH;
    else {
      warn_at(m, line, kind, nm, "contact geometry type not supported; ignored (forces that "
              "use it will not see it)");
      continue;
    }
    char* owner = keep(m, mbs_format_string("/contactgeometryset/%s", nm));
    int body;
    mbs_transform X_BF;
    int rc = socket_frame(m, owner, e, "socket_frame", kind, nm, &body, &X_BF);
    if (rc) return rc;
    double loc[3], ang[3];
    static const double zero3[3] = {0, 0, 0};
    if (!read_numbers_or(m, e, "location", loc, 3, zero3, kind, nm) ||
        !read_numbers_or(m, e, "orientation", ang, 3, zero3, kind, nm))
      return m->err->code;
    mbs_transform X_FG, X_BG;
    mbs_tf_from_xyz(&X_FG, ang, loc);
    mbs_tf_mul(&X_BG, &X_BF, &X_FG);
    mbs_contact_geometry_spec s = mbs_contact_geometry_spec_default(nm, type, sys_body(m, body));
    frame_spec_of(&X_BG, &s.frame);
    if (type == MBS_GEOM_SPHERE && !read_numbers(m, e, "radius", &s.radius, 1, kind, nm))
      return m->err->code;
    if (type == MBS_GEOM_ELLIPSOID && !read_numbers(m, e, "radii", s.radii, 3, kind, nm))
      return m->err->code;
    mbs_mesh mesh = {NULL, 0, NULL, 0};
    if (type == MBS_GEOM_MESH) {
      // the file is found next to the model, or in its Geometry folder (as OpenSim looks)
      const char* fn = text_of(m, child(e, "filename"));
      if (!fn || !*fn)
        return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "<filename> is missing");
      char* cand[3] = {fn[0] == '/' ? dup_str(fn) : mbs_format_string("%s/%s", m->dir, fn),
                       mbs_format_string("%s/Geometry/%s", m->dir, fn), dup_str(fn)};
      const char* found = NULL;
      for (int k = 0; k < 3 && !found; k++) {
        FILE* probe = cand[k] ? fopen(cand[k], "rb") : NULL;
        if (probe) {
          fclose(probe);
          found = cand[k];
        }
      }
      mbs_error merr;
      rc = found ? mbs_mesh_read(found, &mesh, &merr) : MBS_ERR_IO;
      if (rc) {
        rc = fail_at(m, line, kind, nm, rc, "mesh file '%s': %s", fn,
                     found ? merr.message : "not found next to the model or in its Geometry "
                                            "folder");
        for (int k = 0; k < 3; k++) free(cand[k]);
        return rc;
      }
      for (int k = 0; k < 3; k++) free(cand[k]);
      s.vertices = mesh.vertices;
      s.nvertex = mesh.nvertex;
      s.triangles = mesh.triangles;
      s.ntriangle = mesh.ntriangle;
    }
    const int gid = mbs_system_add_contact_geometry(m->sys, &s);
    mbs_mesh_free(&mesh);
    if (gid < 0) return sys_fail(m, line, kind, nm);
  }
  return MBS_OK;
}

//---------------------------------- forces -----------------------------------------------------

// a prescribed control function for an actuator, from enabled PrescribedControllers
typedef struct control_fn {
  const char* actuator;
  xmlNodePtr function;  // an OpenSim function element, or NULL when fn is given
  int line;
  int fn;               // the System's function already made (a controls file), or -1
} control_fn;

static int name_force(mbs_osim_model* m, int id, const char* nm, int line, const char* kind) {
  if (id < 0) return sys_fail(m, line, kind, nm);
  if (mbs_system_set_force_name(m->sys, id, nm) != MBS_OK) return sys_fail(m, line, kind, nm);
  return MBS_OK;
}

static double deg(double x) { return x * (M_PI / 180.0); }

static int coordinate_of_force(mbs_osim_model* m, xmlNodePtr e, const char* field,
                               const char* kind, const char* nm, int* k) {
  const char* cn = text_of(m, child(e, field));
  *k = mbs_osim_find_coordinate(m, cn ? base_name(cn) : "");
  if (*k < 0)
    return fail_at(m, line_of(e), kind, nm, MBS_ERR_PARSE, "<%s>%s</%s> is not a coordinate",
                   field, cn ? cn : "", field);
  return MBS_OK;
}

static int contact_surfaces(mbs_osim_model* m, xmlNodePtr e, const char* kind, const char* nm,
                            mbs_contact_surface** out, int* n) {
  xmlNodePtr set = NULL;
  for (xmlNodePtr c = e->children; c; c = c->next)
    if (is_elem(c) && strstr(tag(c), "ContactParametersSet")) set = c;
  xmlNodePtr objs = child(set, "objects");
  int cap = 0, count = 0;
  mbs_contact_surface* s = NULL;
  for (xmlNodePtr p = objs ? objs->children : NULL; p; p = p->next) {
    if (!is_elem(p)) continue;
    double k, d, us, ud, uv;
    if (!read_number_or(m, p, "stiffness", &k, 0, kind, nm) ||
        !read_number_or(m, p, "dissipation", &d, 0, kind, nm) ||
        !read_number_or(m, p, "static_friction", &us, 0, kind, nm) ||
        !read_number_or(m, p, "dynamic_friction", &ud, 0, kind, nm) ||
        !read_number_or(m, p, "viscous_friction", &uv, 0, kind, nm)) {
      free(s);
      return m->err->code;
    }
    const char* geoms = text_of(m, child(p, "geometry"));
    char* list = dup_str(geoms ? geoms : "");
    char* save = NULL;
    for (char* g = list ? strtok_r(list, " \t\n", &save) : NULL; g;
         g = strtok_r(NULL, " \t\n", &save)) {
      const int gi = mbs_contact_geometry_find(m->sys, base_name(g));
      if (gi < 0) {
        warn_at(m, line_of(p), kind, nm, "contact geometry '%s' is unknown or not supported; "
                "left out of the force", g);
        continue;
      }
      if (!GROW(s, cap, count + 1)) {
        free(list);
        free(s);
        return fail_at(m, line_of(p), kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
      }
      s[count++] = (mbs_contact_surface){gi, k, d, us, ud, uv};
    }
    free(list);
  }
  *out = s;
  *n = count;
  return MBS_OK;
}

static int control_function_for(mbs_osim_model* m, const control_fn* cf, int ncf,
                                 const char* actuator, const char* kind) {
  int found = -1;
  for (int i = 0; i < ncf; i++) {
    if (strcmp(cf[i].actuator, actuator) != 0) continue;
    if (found >= 0) {
      warn_at(m, cf[i].line, kind, actuator, "a second controller drives this actuator; only "
              "the first one's control (line %d) is applied", cf[found].line);
      continue;
    }
    found = i;
  }
  if (found < 0) return -1;
  if (cf[found].fn >= 0) return cf[found].fn;
  return add_function(m, cf[found].function,
                      keep(m, mbs_format_string("%s/control", actuator)), kind, actuator);
}

// the muscle kinds mbstudy simulates, and which of its models each is
static int muscle_kind_of(const char* kind) {
  if (!strcmp(kind, "Thelen2003Muscle")) return MBS_MUSCLE_THELEN2003;
  if (!strcmp(kind, "Millard2012EquilibriumMuscle")) return MBS_MUSCLE_MILLARD2012;
  if (!strcmp(kind, "DeGrooteFregly2016Muscle")) return MBS_MUSCLE_DEGROOTE2016;
  if (!strcmp(kind, "RigidTendonMuscle")) return MBS_MUSCLE_RIGID_TENDON;
  if (!strcmp(kind, "Schutte1993Muscle_Deprecated") || !strcmp(kind, "Schutte1993Muscle"))
    return MBS_MUSCLE_SCHUTTE1993;
  if (!strcmp(kind, "Delp1990Muscle_Deprecated") || !strcmp(kind, "Delp1990Muscle"))
    return MBS_MUSCLE_DELP1990;
  if (!strcmp(kind, "Thelen2003Muscle_Deprecated")) return MBS_MUSCLE_THELEN2003_DEPRECATED;
  return -1;
}

// a tabulated muscle curve (<field> holding an OpenSim function) into c; kept when absent;
// *given set when the file has it
static int muscle_curve(mbs_osim_model* m, xmlNodePtr e, const char* field, mbs_muscle_curve* c,
                        int* given, const char* kind, const char* nm) {
  xmlNodePtr fn = first_elem(child(e, field));
  if (given) *given = fn != NULL;
  if (!fn) return 1;
  const char* t = tag(fn);
  int nx = 0, ny = 0;
  const double* x = NULL;
  const double* y = NULL;
  mbs_function_type type;
  double coef[4];
  if (!strcmp(t, "SimmSpline") || !strcmp(t, "NaturalCubicSpline") || !strcmp(t, "GCVSpline") ||
      !strcmp(t, "PiecewiseLinearFunction")) {
    xmlNodePtr cx = child(fn, "x"), cy = child(fn, "y");
    if (!cx || !cy) {
      fail_at(m, line_of(fn), kind, nm, MBS_ERR_PARSE, "%s: %s needs <x> and <y>", field, t);
      return 0;
    }
    x = read_list(m, cx, &nx, kind, nm);
    y = x ? read_list(m, cy, &ny, kind, nm) : NULL;
    if (!x || !y) return 0;
    if (nx != ny) {
      fail_at(m, line_of(fn), kind, nm, MBS_ERR_PARSE, "%s: %d x values and %d y values",
              field, nx, ny);
      return 0;
    }
    type = !strcmp(t, "SimmSpline") ? MBS_FUNC_SIMM_SPLINE
           : !strcmp(t, "PiecewiseLinearFunction") ? MBS_FUNC_PIECEWISE_LINEAR
                                                   : MBS_FUNC_NATURAL_CUBIC_SPLINE;
  } else if (!strcmp(t, "Constant")) {
    if (!read_numbers(m, fn, "value", coef, 1, kind, nm)) return 0;
    type = MBS_FUNC_CONSTANT;
    x = coef;
    nx = 1;
  } else if (!strcmp(t, "LinearFunction")) {
    if (!read_numbers(m, fn, "coefficients", coef, 2, kind, nm)) return 0;
    type = MBS_FUNC_LINEAR;
    x = coef;
    nx = 2;
  } else {
    fail_at(m, line_of(fn), kind, nm, MBS_ERR_TOPOLOGY, "%s: function type %s is not supported "
            "for a muscle curve", field, t);
    return 0;
  }
  mbs_error ce;
  if (mbs_muscle_curve_set(c, type, nx, x, y, &ce)) {
    fail_at(m, line_of(fn), kind, nm, MBS_ERR_PARSE, "%s: %s", field, ce.message);
    return 0;
  }
  return 1;
}

// a number property of element e (or of its child element `sub`), kept when absent
static int muscle_number(mbs_osim_model* m, xmlNodePtr e, const char* sub, const char* field,
                         double* v, const char* kind, const char* nm) {
  xmlNodePtr n = sub ? first_elem(child(e, sub)) : e;
  if (sub && !n) n = child(e, sub);
  if (!n) return 1;
  return read_number_or(m, n, field, v, *v, kind, nm);
}

static int add_path_wraps(mbs_osim_model* m, xmlNodePtr geometry_path, int path,
                          const char* kind, const char* nm);

// A muscle of a kind mbstudy simulates: its path, its properties (OpenSim's defaults where the
// file has none), its excitation (a PrescribedController's function, or a control)
// the system's path of a path force read into record r (its points, then its wraps)
static int build_path(mbs_osim_model* m, xmlNodePtr e, const mbs_osim_record* r,
                      const char* kind, const char* nm, int* path_out) {
  const int line = line_of(e);
  mbs_path_point_spec pts[MBS_PATH_MAX_POINTS];
  if (r->npoint < 2 || r->npoint > MBS_PATH_MAX_POINTS)
    return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "its path has %d points (2 to %d)",
                   r->npoint, MBS_PATH_MAX_POINTS);
  for (int i = 0; i < r->npoint; i++) {
    const mbs_osim_path_point* q = &r->points[i];
    mbs_path_point_spec* s = &pts[i];
    *s = mbs_path_point_spec_default(q->name, q->body);
    memcpy(s->location, q->location, sizeof(s->location));
    if (q->coordinate >= 0) {
      const mbs_osim_coordinate* c = &m->coord[q->coordinate];
      s->kind = MBS_PATH_POINT_CONDITIONAL;
      s->q_index = mbs_body_qadr(m->sys, c->body) + c->axis;
      s->range[0] = q->range[0];
      s->range[1] = q->range[1];
    }
    for (int k = 0; k < 3; k++) {
      if (q->location_function[k] < 0 || q->location_coordinate[k] < 0) continue;
      const mbs_osim_coordinate* c = &m->coord[q->location_coordinate[k]];
      s->kind = MBS_PATH_POINT_MOVING;
      s->function[k] = q->location_function[k];
      s->function_q[k] = mbs_body_qadr(m->sys, c->body) + c->axis;
      s->function_u[k] = mbs_body_uadr(m->sys, c->body) + c->axis;
    }
  }
  const int path = mbs_system_add_path(m->sys, nm, pts, r->npoint);
  if (path < 0) return sys_fail(m, line, kind, nm);
  *path_out = path;
  return add_path_wraps(m, child(e, "GeometryPath"), path, kind, nm);
}

static int add_muscle(mbs_osim_model* m, xmlNodePtr e, const mbs_osim_record* r, int mk,
                      const char* kind, const char* nm, const control_fn* cf, int ncf, int* id) {
  const int line = line_of(e);
  int path = -1;
  int rc = build_path(m, e, r, kind, nm, &path);
  if (rc) return rc;
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, (mbs_muscle_kind)mk);
  double a0 = mk == MBS_MUSCLE_DEGROOTE2016 ? 0.5 : 0.05;
  double ignore_tc = 0, ignore_pf = 0;
  static const char* const base[] = {"max_isometric_force", "optimal_fiber_length",
                                     "tendon_slack_length", "pennation_angle_at_optimal",
                                     "max_contraction_velocity", "activation_time_constant",
                                     "deactivation_time_constant", "default_activation"};
  double* bv[] = {&p.max_isometric_force, &p.optimal_fiber_length, &p.tendon_slack_length,
                  &p.pennation_angle_at_optimal, &p.max_contraction_velocity,
                  &p.activation_time_constant, &p.deactivation_time_constant, &a0};
  for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
    if (!muscle_number(m, e, NULL, base[i], bv[i], kind, nm)) return m->err->code;
  // Thelen calls its activation time constants activation_time_constant and
  // deactivation_time_constant too; the old names activation1/2 are not read
  int ok = 1;
  if (mk == MBS_MUSCLE_THELEN2003_DEPRECATED) {
    mbs_thelen2003_curve_params* t = &p.thelen;
    mbs_thelen2003_deprecated_params* o = &p.thelen_deprecated;
    ok = muscle_number(m, e, NULL, "FmaxTendonStrain", &t->fmax_tendon_strain, kind, nm) &&
         muscle_number(m, e, NULL, "FmaxMuscleStrain", &t->fmax_muscle_strain, kind, nm) &&
         muscle_number(m, e, NULL, "KshapeActive", &t->kshape_active, kind, nm) &&
         muscle_number(m, e, NULL, "KshapePassive", &t->kshape_passive, kind, nm) &&
         muscle_number(m, e, NULL, "Af", &t->af, kind, nm) &&
         muscle_number(m, e, NULL, "Flen", &t->flen, kind, nm) &&
         muscle_number(m, e, NULL, "damping", &o->damping, kind, nm) &&
         muscle_number(m, e, NULL, "Vmax", &o->vmax, kind, nm) &&
         muscle_number(m, e, NULL, "Vmax0", &o->vmax0, kind, nm);
  } else if (mk == MBS_MUSCLE_THELEN2003) {
    mbs_thelen2003_curve_params* t = &p.thelen;
    ok = muscle_number(m, e, NULL, "FmaxTendonStrain", &t->fmax_tendon_strain, kind, nm) &&
         muscle_number(m, e, NULL, "FmaxMuscleStrain", &t->fmax_muscle_strain, kind, nm) &&
         muscle_number(m, e, NULL, "KshapeActive", &t->kshape_active, kind, nm) &&
         muscle_number(m, e, NULL, "KshapePassive", &t->kshape_passive, kind, nm) &&
         muscle_number(m, e, NULL, "Af", &t->af, kind, nm) &&
         muscle_number(m, e, NULL, "Flen", &t->flen, kind, nm) &&
         muscle_number(m, e, NULL, "fv_linear_extrap_threshold",
                       &t->fv_linear_extrap_threshold, kind, nm) &&
         muscle_number(m, e, NULL, "minimum_activation", &p.minimum_activation, kind, nm) &&
         muscle_number(m, e, NULL, "maximum_pennation_angle", &p.maximum_pennation_angle, kind,
                       nm);
  } else if (mk == MBS_MUSCLE_MILLARD2012) {
    mbs_millard2012_curve_params* c = &p.millard;
    ok = muscle_number(m, e, NULL, "fiber_damping", &p.fiber_damping, kind, nm) &&
         muscle_number(m, e, NULL, "minimum_activation", &p.minimum_activation, kind, nm) &&
         muscle_number(m, e, NULL, "maximum_pennation_angle", &p.maximum_pennation_angle, kind,
                       nm) &&
         muscle_number(m, e, "ActiveForceLengthCurve", "min_norm_active_fiber_length",
                       &c->afl_min_norm_active_fiber_length, kind, nm) &&
         muscle_number(m, e, "ActiveForceLengthCurve", "transition_norm_fiber_length",
                       &c->afl_transition_norm_fiber_length, kind, nm) &&
         muscle_number(m, e, "ActiveForceLengthCurve", "max_norm_active_fiber_length",
                       &c->afl_max_norm_active_fiber_length, kind, nm) &&
         muscle_number(m, e, "ActiveForceLengthCurve", "shallow_ascending_slope",
                       &c->afl_shallow_ascending_slope, kind, nm) &&
         muscle_number(m, e, "ActiveForceLengthCurve", "minimum_value", &c->afl_minimum_value,
                       kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "concentric_slope_at_vmax",
                       &c->fv_concentric_slope_at_vmax, kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "concentric_slope_near_vmax",
                       &c->fv_concentric_slope_near_vmax, kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "isometric_slope", &c->fv_isometric_slope,
                       kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "eccentric_slope_at_vmax",
                       &c->fv_eccentric_slope_at_vmax, kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "eccentric_slope_near_vmax",
                       &c->fv_eccentric_slope_near_vmax, kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "max_eccentric_velocity_force_multiplier",
                       &c->fv_max_eccentric_velocity_force_multiplier, kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "concentric_curviness",
                       &c->fv_concentric_curviness, kind, nm) &&
         muscle_number(m, e, "ForceVelocityCurve", "eccentric_curviness",
                       &c->fv_eccentric_curviness, kind, nm) &&
         muscle_number(m, e, "FiberForceLengthCurve", "strain_at_zero_force",
                       &c->fpe_strain_at_zero_force, kind, nm) &&
         muscle_number(m, e, "FiberForceLengthCurve", "strain_at_one_norm_force",
                       &c->fpe_strain_at_one_norm_force, kind, nm) &&
         muscle_number(m, e, "FiberForceLengthCurve", "stiffness_at_low_force",
                       &c->fpe_stiffness_at_low_force, kind, nm) &&
         muscle_number(m, e, "FiberForceLengthCurve", "stiffness_at_one_norm_force",
                       &c->fpe_stiffness_at_one_norm_force, kind, nm) &&
         muscle_number(m, e, "FiberForceLengthCurve", "curviness", &c->fpe_curviness, kind,
                       nm) &&
         muscle_number(m, e, "TendonForceLengthCurve", "strain_at_one_norm_force",
                       &c->fse_strain_at_one_norm_force, kind, nm) &&
         muscle_number(m, e, "TendonForceLengthCurve", "stiffness_at_one_norm_force",
                       &c->fse_stiffness_at_one_norm_force, kind, nm) &&
         muscle_number(m, e, "TendonForceLengthCurve", "norm_force_at_toe_end",
                       &c->fse_norm_force_at_toe_end, kind, nm) &&
         muscle_number(m, e, "TendonForceLengthCurve", "curviness", &c->fse_curviness, kind,
                       nm);
    ignore_tc = read_bool(m, e, "ignore_tendon_compliance", 0);
  } else if (mk == MBS_MUSCLE_SCHUTTE1993 || mk == MBS_MUSCLE_DELP1990) {
    mbs_simm_muscle_params* q = &p.simm;
    int passive_given = 0;
    // older files call the pennation property pennation_angle
    ok = muscle_number(m, e, NULL, "pennation_angle", &p.pennation_angle_at_optimal, kind, nm) &&
         muscle_number(m, e, NULL, "time_scale", &q->time_scale, kind, nm) &&
         muscle_number(m, e, NULL, "activation1", &q->activation1, kind, nm) &&
         muscle_number(m, e, NULL, "activation2", &q->activation2, kind, nm) &&
         muscle_number(m, e, NULL, "damping", &q->damping, kind, nm) &&
         muscle_number(m, e, NULL, "mass", &q->mass, kind, nm) &&
         muscle_curve(m, e, "tendon_force_length_curve", &q->tendon_force_length_curve, NULL,
                      kind, nm) &&
         muscle_curve(m, e, "active_force_length_curve", &q->active_force_length_curve, NULL,
                      kind, nm) &&
         muscle_curve(m, e, "passive_force_length_curve", &q->passive_force_length_curve,
                      &passive_given, kind, nm) &&
         (mk != MBS_MUSCLE_DELP1990 ||
          muscle_curve(m, e, "force_velocity_curve", &q->force_velocity_curve, NULL, kind, nm));
    // a passive curve in the file replaces Schutte's exponential (OpenSim: a property the file
    // sets is no longer at its default)
    if (passive_given) q->passive_force_length_curve_is_default = 0;
  } else if (mk == MBS_MUSCLE_DEGROOTE2016) {
    mbs_degroote2016_curve_params* d = &p.degroote;
    ok = muscle_number(m, e, NULL, "fiber_damping", &p.fiber_damping, kind, nm) &&
         muscle_number(m, e, NULL, "active_force_width_scale", &d->active_force_width_scale,
                       kind, nm) &&
         muscle_number(m, e, NULL, "passive_fiber_strain_at_one_norm_force",
                       &d->passive_fiber_strain_at_one_norm_force, kind, nm) &&
         muscle_number(m, e, NULL, "tendon_strain_at_one_norm_force",
                       &d->tendon_strain_at_one_norm_force, kind, nm) &&
         muscle_number(m, e, NULL, "activation_dynamics_smoothing",
                       &p.activation_dynamics_smoothing, kind, nm);
    ignore_tc = read_bool(m, e, "ignore_tendon_compliance", 0);
    ignore_pf = read_bool(m, e, "ignore_passive_fiber_force", 0);
    d->ignore_passive_fiber_force = (int)ignore_pf;
  }
  if (!ok) return m->err->code;
  p.ignore_tendon_compliance = (int)ignore_tc;
  const int fn = control_function_for(m, cf, ncf, nm, kind);
  if (fn < -1) return fn;
  *id = mbs_system_add_muscle(m->sys, &p, path, a0, 0, fn);
  if (*id < 0) return sys_fail(m, line, kind, nm);
  // the fiber state the file starts from when not equilibrated (default_fiber_length, or De
  // Groote's default_normalized_tendon_force)
  const int dg = mk == MBS_MUSCLE_DEGROOTE2016;
  const char* field = dg ? "default_normalized_tendon_force" : "default_fiber_length";
  if (mk != MBS_MUSCLE_RIGID_TENDON && child(e, field)) {
    double v;
    if (!read_numbers(m, e, field, &v, 1, kind, nm)) return m->err->code;
    if (!GROW(m->zdef, m->cap_zdef, m->nzdef + 1))
      return fail_at(m, line, kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
    m->zdef[m->nzdef++] = (zdef_rec){*id, dg ? "normalized_tendon_force" : "fiber_length", v};
  }
  return MBS_OK;
}

// OpenSim's PathActuator, PathSpring and Ligament (OpenSim's defaults where the file is silent)
static int add_path_force(mbs_osim_model* m, xmlNodePtr e, const mbs_osim_record* r,
                          const char* kind, const char* nm, const control_fn* cf, int ncf,
                          int* id) {
  const int line = line_of(e);
  int path = -1;
  int rc = build_path(m, e, r, kind, nm, &path);
  if (rc) return rc;
  if (!strcmp(kind, "PathActuator")) {
    mbs_path_actuator_spec s = {nm, path, 1.0, 0.0, -1};
    if (!read_number_or(m, e, "optimal_force", &s.optimal_force, 1.0, kind, nm))
      return m->err->code;
    const int fn = control_function_for(m, cf, ncf, nm, kind);
    if (fn < -1) return fn;
    s.control_function = fn;
    *id = mbs_system_add_path_actuator(m->sys, &s);
  } else if (!strcmp(kind, "PathSpring")) {
    mbs_path_spring_spec s = {nm, path, NAN, NAN, NAN};
    if (!read_numbers(m, e, "resting_length", &s.resting_length, 1, kind, nm) ||
        !read_numbers(m, e, "stiffness", &s.stiffness, 1, kind, nm) ||
        !read_numbers(m, e, "dissipation", &s.dissipation, 1, kind, nm))
      return m->err->code;
    *id = mbs_system_add_path_spring(m->sys, &s);
  } else {  // Ligament
    mbs_ligament_spec s = {nm, path, NAN, NAN, -1};
    if (!read_numbers(m, e, "resting_length", &s.resting_length, 1, kind, nm) ||
        !read_numbers(m, e, "pcsa_force", &s.pcsa_force, 1, kind, nm))
      return m->err->code;
    xmlNodePtr fn = first_elem(child(e, "force_length_curve"));
    char* fname = keep(m, mbs_format_string("%s/force_length_curve", nm));
    s.force_length_curve = fn ? add_function(m, fn, fname, kind, nm)
                              : mbs_system_add_ligament_default_curve(m->sys, fname);
    if (s.force_length_curve < 0)
      return fn ? s.force_length_curve : sys_fail(m, line, kind, nm);
    *id = mbs_system_add_ligament(m->sys, &s);
  }
  return *id < 0 ? sys_fail(m, line, kind, nm) : MBS_OK;
}

// the class a force of class `kind` is read as: the options' renames (OpenSim's
// Object::renameType), else itself
// Documents of OpenSim 1.x and 2.x (Version below 30000) were made with the Thelen2003Muscle of
// those versions, which OpenSim 4 keeps as Thelen2003Muscle_Deprecated (OpenSim 3 replaced the
// class under the same name); their muscles are read as that model, as OpenSim's own tests run
// such files, unless a rename says otherwise. Said once per model.
static const char* renamed_type(mbs_osim_model* m, const char* kind, int line) {
  for (int i = 0; m->opt && i < m->opt->nrename_types; i++)
    if (!strcmp(m->opt->rename_types[2 * i], kind)) return m->opt->rename_types[2 * i + 1];
  if (m->version < 30000 && !strcmp(kind, "Thelen2003Muscle")) {
    if (!m->old_thelen++)
      warn_at(m, line, "Model", m->name,
              "an OpenSim %d.x document: its Thelen2003Muscles are read as "
              "Thelen2003Muscle_Deprecated, the Thelen model of OpenSim 1.x and 2.x that it was "
              "made with (run-tool --rename-type Thelen2003Muscle=Thelen2003Muscle reads them "
              "as OpenSim 4's)", m->version / 10000);
    return "Thelen2003Muscle_Deprecated";
  }
  return kind;
}

static int read_forces(mbs_osim_model* m, xmlNodePtr force_set, const control_fn* cf, int ncf) {
  xmlNodePtr objs = child(force_set, "objects");
  int npath = 0, first_path_line = 0;
  const char *first_path_kind = NULL, *first_path_name = NULL;
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next) {
    if (!is_elem(e)) continue;
    const char* kind = renamed_type(m, tag(e), line_of(e));
    const char* nm = keep_name(m, e);
    const int line = line_of(e);
    if (!read_bool(m, e, "appliesForce", 1) || read_bool(m, e, "isDisabled", 0)) {
      warn_at(m, line, kind, nm, "does not apply force (appliesForce false); left out");
      continue;
    }
    int excluded = 0;  // a tool's forces_to_exclude
    for (int i = 0; m->opt && i < m->opt->nexclude_forces && !excluded; i++)
      excluded = !strcmp(m->opt->exclude_forces[i], nm);
    if (excluded) continue;
    char* owner = keep(m, mbs_format_string("/forceset/%s", nm));
    int rc = collect_offset_frames(m, child(e, "frames"), owner);
    if (rc) return rc;
    int id = -1;
    static const double zero3[3] = {0, 0, 0};
    if (child(e, "GeometryPath")) {  // muscles (simulated), other path forces (kept as records)
      mbs_osim_record* r = new_record(m, e);
      if (!r) return fail_at(m, line, kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
      if ((rc = read_path(m, r, child(e, "GeometryPath"), owner))) return rc;
      if (ends_with(kind, "Muscle") || strstr(kind, "Muscle_")) m->nmuscle++;
      const int mk = muscle_kind_of(kind);
      if (mk >= 0) {
        if ((rc = add_muscle(m, e, r, mk, kind, nm, cf, ncf, &id))) return rc;
        if ((rc = name_force(m, id, nm, line, kind))) return rc;
        continue;
      }
      if (!strcmp(kind, "PathActuator") || !strcmp(kind, "PathSpring") ||
          !strcmp(kind, "Ligament")) {
        if ((rc = add_path_force(m, e, r, kind, nm, cf, ncf, &id))) return rc;
        if ((rc = name_force(m, id, nm, line, kind))) return rc;
        continue;
      }
      if (!npath++) {
        first_path_line = line;
        first_path_kind = kind;
        first_path_name = nm;
      }
      continue;
    } else if (!strcmp(kind, "PointToPointSpring")) {
      int b1, b2;
      double p1[3], p2[3], k, L0;
      if ((rc = socket_frame(m, owner, e, "socket_body1", kind, nm, &b1, NULL)) ||
          (rc = socket_frame(m, owner, e, "socket_body2", kind, nm, &b2, NULL)))
        return rc;
      if (!read_numbers_or(m, e, "point1", p1, 3, zero3, kind, nm) ||
          !read_numbers_or(m, e, "point2", p2, 3, zero3, kind, nm) ||
          !read_number_or(m, e, "stiffness", &k, 1, kind, nm) ||
          !read_number_or(m, e, "rest_length", &L0, 0, kind, nm))
        return m->err->code;
      id = mbs_system_add_spring(m->sys, sys_body(m, b1), p1, sys_body(m, b2), p2, k, L0);
    } else if (!strcmp(kind, "BushingForce")) {
      mbs_bushing_spec s;
      memset(&s, 0, sizeof(s));
      mbs_transform X1, X2;
      int b1, b2;
      if ((rc = socket_frame(m, owner, e, "socket_frame1", kind, nm, &b1, &X1)) ||
          (rc = socket_frame(m, owner, e, "socket_frame2", kind, nm, &b2, &X2)))
        return rc;
      s.body1 = sys_body(m, b1);
      s.body2 = sys_body(m, b2);
      frame_spec_of(&X1, &s.frame1);
      frame_spec_of(&X2, &s.frame2);
      if (!read_numbers_or(m, e, "rotational_stiffness", s.rotational_stiffness, 3, zero3, kind,
                           nm) ||
          !read_numbers_or(m, e, "translational_stiffness", s.translational_stiffness, 3, zero3,
                           kind, nm) ||
          !read_numbers_or(m, e, "rotational_damping", s.rotational_damping, 3, zero3, kind,
                           nm) ||
          !read_numbers_or(m, e, "translational_damping", s.translational_damping, 3, zero3,
                           kind, nm))
        return m->err->code;
      id = mbs_system_add_bushing(m->sys, &s);
    } else if (!strcmp(kind, "CoordinateLimitForce")) {
      int k;
      if ((rc = coordinate_of_force(m, e, "coordinate", kind, nm, &k))) return rc;
      mbs_coordinate_limit_spec s;
      memset(&s, 0, sizeof(s));
      s.body = m->coord[k].body;
      s.axis = m->coord[k].axis;
      if (!read_number_or(m, e, "upper_stiffness", &s.upper_stiffness, 1, kind, nm) ||
          !read_number_or(m, e, "upper_limit", &s.upper_limit, 0, kind, nm) ||
          !read_number_or(m, e, "lower_stiffness", &s.lower_stiffness, 1, kind, nm) ||
          !read_number_or(m, e, "lower_limit", &s.lower_limit, 0, kind, nm) ||
          !read_number_or(m, e, "damping", &s.damping, 0.001, kind, nm) ||
          !read_number_or(m, e, "transition", &s.transition, 0.1, kind, nm))
        return m->err->code;
      // OpenSim gives rotational limits and transition in degrees, stiffness per degree and
      // damping per degree/s
      if (m->coord[k].motion == MBS_OSIM_ROTATIONAL) {
        s.upper_limit = deg(s.upper_limit);
        s.lower_limit = deg(s.lower_limit);
        s.transition = deg(s.transition);
        s.upper_stiffness /= deg(1);
        s.lower_stiffness /= deg(1);
        s.damping /= deg(1);
      }
      id = mbs_system_add_coordinate_limit(m->sys, &s);
    } else if (!strcmp(kind, "SpringGeneralizedForce")) {
      int k;
      if ((rc = coordinate_of_force(m, e, "coordinate", kind, nm, &k))) return rc;
      double st, rl, vis;
      if (!read_number_or(m, e, "stiffness", &st, 0, kind, nm) ||
          !read_number_or(m, e, "rest_length", &rl, 0, kind, nm) ||
          !read_number_or(m, e, "viscosity", &vis, 0, kind, nm))
        return m->err->code;
      id = mbs_system_add_spring_generalized_force(m->sys, m->coord[k].body, m->coord[k].axis,
                                                   st, rl, vis);
    } else if (!strcmp(kind, "HuntCrossleyForce") || !strcmp(kind, "ElasticFoundationForce")) {
      mbs_contact_surface* s = NULL;
      int n = 0;
      double vt;
      if ((rc = contact_surfaces(m, e, kind, nm, &s, &n))) return rc;
      if (!read_number_or(m, e, "transition_velocity", &vt, 0.01, kind, nm)) {
        free(s);
        return m->err->code;
      }
      if (!strcmp(kind, "ElasticFoundationForce")) {
        // OpenSim (Simbody) uses the mesh's parameters only: the other surface is rigid
        for (int i = 0; i < n; i++)
          if (mbs_contact_geometry_type(m->sys, s[i].geometry) != MBS_GEOM_MESH)
            s[i].stiffness = 0;
      }
      id = !strcmp(kind, "HuntCrossleyForce")
               ? mbs_system_add_hunt_crossley(m->sys, s, n, vt)
               : mbs_system_add_elastic_foundation(m->sys, s, n, vt);
      free(s);
    } else if (!strcmp(kind, "CoordinateActuator")) {
      int k;
      if ((rc = coordinate_of_force(m, e, "coordinate", kind, nm, &k))) return rc;
      double f0;
      if (!read_number_or(m, e, "optimal_force", &f0, 1, kind, nm)) return m->err->code;
      const int fn = control_function_for(m, cf, ncf, nm, kind);
      if (fn < -1) return fn;
      id = mbs_system_add_coordinate_actuator(m->sys, m->coord[k].body, m->coord[k].axis, f0, 0,
                                              fn);
    } else if (!strcmp(kind, "ActivationCoordinateActuator")) {
      int k;
      if ((rc = coordinate_of_force(m, e, "coordinate", kind, nm, &k))) return rc;
      double f0, tau, a0;
      if (!read_number_or(m, e, "optimal_force", &f0, 1, kind, nm) ||
          !read_number_or(m, e, "activation_time_constant", &tau, 0.01, kind, nm) ||
          !read_number_or(m, e, "default_activation", &a0, 0.5, kind, nm))
        return m->err->code;
      const int fn = control_function_for(m, cf, ncf, nm, kind);
      if (fn < -1) return fn;
      id = mbs_system_add_activation_coordinate_actuator(m->sys, m->coord[k].body,
                                                         m->coord[k].axis, f0, tau, a0, 0, fn);
    } else if (!strcmp(kind, "PointActuator")) {
      mbs_point_actuator_spec s;
      memset(&s, 0, sizeof(s));
      const char* bn = text_of(m, child(e, "body"));
      const int b = body_by_name(m, bn);
      if (b < -1)
        return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "<body>%s</body> is not a body",
                       bn ? bn : "");
      s.body = sys_body(m, b);
      static const double x1[3] = {1, 0, 0};
      if (!read_numbers_or(m, e, "point", s.point, 3, zero3, kind, nm) ||
          !read_numbers_or(m, e, "direction", s.direction, 3, x1, kind, nm) ||
          !read_number_or(m, e, "optimal_force", &s.optimal_force, 1, kind, nm))
        return m->err->code;
      s.point_is_global = read_bool(m, e, "point_is_global", 0);
      s.force_is_global = read_bool(m, e, "force_is_global", 0);
      s.control_function = control_function_for(m, cf, ncf, nm, kind);
      if (s.control_function < -1) return s.control_function;
      id = mbs_system_add_point_actuator(m->sys, &s);
    } else if (!strcmp(kind, "TorqueActuator")) {
      mbs_torque_actuator_spec s;
      memset(&s, 0, sizeof(s));
      const char* an = text_of(m, child(e, "bodyA"));
      const char* bn = text_of(m, child(e, "bodyB"));
      if (!an) an = text_of(m, child(e, "socket_bodyA"));
      if (!bn) bn = text_of(m, child(e, "socket_bodyB"));
      const int a = body_by_name(m, an), b = body_by_name(m, bn);
      if (a < -1 || b < -1)
        return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "bodies '%s' and '%s' must be bodies",
                       an ? an : "", bn ? bn : "");
      s.body_a = sys_body(m, a);
      s.body_b = sys_body(m, b);
      static const double z1[3] = {0, 0, 1};
      if (!read_numbers_or(m, e, "axis", s.axis, 3, z1, kind, nm) ||
          !read_number_or(m, e, "optimal_force", &s.optimal_force, 1, kind, nm))
        return m->err->code;
      s.torque_is_global = read_bool(m, e, "torque_is_global", 1);
      s.control_function = control_function_for(m, cf, ncf, nm, kind);
      if (s.control_function < -1) return s.control_function;
      id = mbs_system_add_torque_actuator(m->sys, &s);
    } else {
      mbs_osim_record* r = new_record(m, e);
      if (!r) return fail_at(m, line, kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
      warn_at(m, line, kind, nm, "force type not supported; kept but not applied");
      continue;
    }
    if ((rc = name_force(m, id, nm, line, kind))) return rc;
  }
  if (npath)
    warn_at(m, first_path_line, first_path_kind, first_path_name,
            "this and the other path forces of kinds mbstudy does not simulate yet (%d in all) "
            "are read with their paths but apply no force", npath);
  return MBS_OK;
}

// the actuators a controller names (actuator_list or OpenSim 4.x's socket_actuators, names or
// component paths); NULL for all of them (an empty list or "ALL"); the count in *n
static char** controller_actuators(mbs_osim_model* m, xmlNodePtr e, int* n) {
  const char* list = text_of(m, child(e, "actuator_list"));
  if (!list || !*list) list = text_of(m, child(e, "socket_actuators"));
  *n = 0;
  char* copy = dup_str(list ? list : "");
  if (!copy) return NULL;
  char** out = NULL;
  int cap = 0;
  char* save = NULL;
  for (char* a = strtok_r(copy, " \t\r\n", &save); a; a = strtok_r(NULL, " \t\r\n", &save)) {
    if (!strcmp(a, "ALL")) {
      *n = 0;
      break;
    }
    if (!GROW(out, cap, *n + 1)) break;
    out[(*n)++] = keep(m, dup_str(base_name(a)));
  }
  free(copy);
  if (*n == 0) {
    free(out);
    return NULL;
  }
  return out;
}

static const char* file_base(const char* p) {
  const char* s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int add_control_fn(control_fn** cf, int* cap, int* count, control_fn c) {
  if (!GROW(*cf, *cap, *count + 1)) return 0;
  (*cf)[(*count)++] = c;
  return 1;
}

// one control curve of a controls file as a System function of time (OpenSim's ControlLinear:
// linear between nodes and extrapolated past the ends, or held there, or steps)
static int control_curve(mbs_osim_model* m, const char* name, const double* t, const double* v,
                         int n, int steps, int extrapolate, const char* file, int line) {
  mbs_function_spec s;
  memset(&s, 0, sizeof(s));
  s.name = keep(m, mbs_format_string("%s/control", name));
  double c0;
  if (n == 1) {
    c0 = v[0];
    s.type = MBS_FUNC_CONSTANT;
    s.coefs = &c0;
  } else {
    s.type = steps ? MBS_FUNC_STEPS : extrapolate ? MBS_FUNC_PIECEWISE_LINEAR
                                                  : MBS_FUNC_PIECEWISE_LINEAR_HELD;
    s.n = n;
    s.x = t;
    s.y = v;
  }
  const int id = mbs_system_add_function(m->sys, &s);
  if (id < 0)
    return mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", line, name,
                         "%s:%d: control '%s': %s", file_base(file), line, name,
                         mbs_system_error(m->sys)->message), -1;
  return id;
}

// the actuator a control drives: its name, or its name before ".excitation"; NULL if none of
// `only` (all when NULL)
static const char* control_actuator(mbs_osim_model* m, const char* control, char** only,
                                    int nonly) {
  char* a = keep(m, dup_str(control));
  if (!a) return NULL;
  const size_t len = strlen(a), ext = strlen(".excitation");
  if (len > ext && !strcmp(a + len - ext, ".excitation")) a[len - ext] = 0;
  if (!only) return a;
  for (int i = 0; i < nonly; i++)
    if (!strcmp(only[i], a)) return a;
  return NULL;
}

// A controls file (OpenSim ControlSet .xml of ControlLinear / ControlConstant, or a .sto of
// columns): a function of time for each control, appended to cf for its actuator
static int read_controls_file(mbs_osim_model* m, const char* file, char** only, int nonly,
                              control_fn** cf, int* cap, int* count) {
  const size_t fl = strlen(file);
  if (fl > 4 && !strcmp(file + fl - 4, ".sto")) {
    mbs_table* t = NULL;
    mbs_error te;
    if (mbs_table_read_sto(file, &t, &te))
      return mbs_error_set(m->err, te.code, "mbs_osim_read", 0, file, "%s", te.message);
    int rc = MBS_OK;
    double* col = malloc((size_t)(t->nrow > 0 ? t->nrow : 1) * sizeof(double));
    double* tm = malloc((size_t)(t->nrow > 0 ? t->nrow : 1) * sizeof(double));
    if (!col || !tm) rc = fail_at(m, 0, NULL, file, MBS_ERR_NO_MEMORY, "out of memory");
    for (int r = 0; rc == MBS_OK && r < t->nrow; r++) tm[r] = mbs_table_get(t, r, 0);
    for (int c = 1; rc == MBS_OK && c < t->ncol; c++) {
      const char* act = control_actuator(m, t->labels[c], only, nonly);
      if (!act) continue;
      if (t->nrow < 1) break;
      for (int r = 0; r < t->nrow; r++) col[r] = mbs_table_get(t, r, c);
      const int fn = control_curve(m, act, tm, col, t->nrow, 0, 1, file, 0);
      if (fn < 0) rc = m->err->code;
      else if (!add_control_fn(cf, cap, count, (control_fn){act, NULL, 0, fn}))
        rc = fail_at(m, 0, NULL, file, MBS_ERR_NO_MEMORY, "out of memory");
    }
    free(col);
    free(tm);
    mbs_table_free(t);
    return rc;
  }
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(file, NULL, 0, 0, "a controls file", &xf);
  if (!doc)
    return mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", xf.line, file, "%s:%d: %s%s",
                         file, xf.line, xf.entities ? "" : "cannot read the controls file: ",
                         xf.msg);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr set = root && !strcmp(tag(root), "ControlSet") ? root : child(root, "ControlSet");
  xmlNodePtr objs = child(set, "objects");
  int rc = MBS_OK;
  if (!objs)
    rc = mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", line_of(root), file,
                       "%s:%d: no <ControlSet> with <objects> in the controls file", file,
                       line_of(root));
  double* t = NULL;
  double* v = NULL;
  int tcap = 0;
  for (xmlNodePtr e = objs ? objs->children : NULL; rc == MBS_OK && e; e = e->next) {
    if (!is_elem(e)) continue;
    const char* cname = keep_name(m, e);
    const int line = line_of(e);
    const char* act = control_actuator(m, cname, only, nonly);
    if (!act) continue;
    int n = 0, steps = 0, extrapolate = 1;
    if (!strcmp(tag(e), "ControlConstant")) {
      double value = 0;
      if (!read_number_or(m, e, "value", &value, 0, tag(e), cname)) {
        rc = m->err->code;
        break;
      }
      if (!GROW(t, tcap, 1) || !(v = realloc(v, (size_t)tcap * sizeof(double)))) {
        rc = fail_at(m, line, tag(e), cname, MBS_ERR_NO_MEMORY, "out of memory");
        break;
      }
      t[0] = 0;
      v[0] = value;
      n = 1;
    } else if (!strcmp(tag(e), "ControlLinear")) {
      steps = read_bool(m, e, "use_steps", 0);
      extrapolate = read_bool(m, e, "extrapolate", 1);
      xmlNodePtr nodes = child(e, "x_nodes");
      for (xmlNodePtr k = nodes ? nodes->children : NULL; k; k = k->next) {
        if (!is_elem(k)) continue;
        if (n + 1 > tcap) {
          const int c2 = tcap ? 2 * tcap : 64;
          double* t2 = realloc(t, (size_t)c2 * sizeof(double));
          if (t2) t = t2;
          double* v2 = t2 ? realloc(v, (size_t)c2 * sizeof(double)) : NULL;
          if (v2) v = v2;
          if (!t2 || !v2) {
            rc = fail_at(m, line, tag(e), cname, MBS_ERR_NO_MEMORY, "out of memory");
            break;
          }
          tcap = c2;
        }
        if (!read_numbers(m, k, "t", &t[n], 1, tag(e), cname) ||
            !read_numbers(m, k, "value", &v[n], 1, tag(e), cname)) {
          rc = m->err->code;
          break;
        }
        n++;
      }
      if (rc) break;
      if (n == 0) {
        warn_at(m, line, tag(e), cname, "no control nodes in %s; the control is not applied",
                file_base(file));
        continue;
      }
    } else {
      warn_at(m, line, tag(e), cname, "control type not supported in %s; not applied",
              file_base(file));
      continue;
    }
    const int fn = control_curve(m, act, t, v, n, steps, extrapolate, file, line);
    if (fn < 0) rc = m->err->code;
    else if (!add_control_fn(cf, cap, count, (control_fn){act, NULL, line, fn}))
      rc = fail_at(m, line, tag(e), cname, MBS_ERR_NO_MEMORY, "out of memory");
  }
  free(t);
  free(v);
  xmlFreeDoc(doc);
  return rc;
}

// a file named in the model (or a setup file), relative to the model's folder
static char* model_relative(const mbs_osim_model* m, const char* fn) {
  return fn[0] == '/' ? dup_str(fn) : mbs_format_string("%s/%s", m->dir, fn);
}

// Controllers that compute controls as functions of time: PrescribedControllers (a function
// per actuator) and ControlSetControllers (a controls file); the options' controls file too
// (OpenSim's ForwardTool controls_file, over all actuators). Other controllers are kept.
static int read_controllers(mbs_osim_model* m, xmlNodePtr model, control_fn** out, int* n) {
  xmlNodePtr objs = child(child(model, "ControllerSet"), "objects");
  int cap = 0, count = 0, rc = MBS_OK;
  control_fn* cf = NULL;
  for (xmlNodePtr e = objs ? objs->children : NULL; rc == MBS_OK && e; e = e->next) {
    if (!is_elem(e)) continue;
    const char* kind = tag(e);
    const char* nm = keep_name(m, e);
    const int enabled = read_bool(m, e, "enabled", 1);
    const int prescribed = !strcmp(kind, "PrescribedController");
    if (!prescribed && strcmp(kind, "ControlSetController") != 0) {
      if (!new_record(m, e)) {
        rc = fail_at(m, line_of(e), kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
        break;
      }
      warn_at(m, line_of(e), kind, nm, "controller type not supported; kept but not run%s",
              enabled ? "" : " (disabled anyway)");
      continue;
    }
    if (!enabled) continue;
    int nact = 0;
    char** acts = controller_actuators(m, e, &nact);
    if (prescribed) {
      xmlNodePtr fobjs = child(child(e, "FunctionSet"), "objects");
      xmlNodePtr f = fobjs ? first_elem(fobjs) : NULL;
      if (!acts && f)
        rc = fail_at(m, line_of(e), kind, nm, MBS_ERR_PARSE,
                     "a PrescribedController needs its actuators listed (actuator_list)");
      for (int i = 0; rc == MBS_OK && i < nact; i++) {
        if (!f) {
          rc = fail_at(m, line_of(e), kind, nm, MBS_ERR_PARSE,
                       "more actuators in actuator_list than functions in FunctionSet");
          break;
        }
        if (!add_control_fn(&cf, &cap, &count, (control_fn){acts[i], f, line_of(f), -1}))
          rc = fail_at(m, line_of(e), kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
        do f = f->next;
        while (f && !is_elem(f));
      }
    } else {
      const char* file = text_of(m, child(e, "controls_file"));
      if (!file || !*file || !strcmp(file, "Unassigned")) {
        warn_at(m, line_of(e), kind, nm, "no controls_file; the controller is not run");
      } else {
        char* path = model_relative(m, file);
        rc = path ? read_controls_file(m, path, acts, nact, &cf, &cap, &count)
                  : fail_at(m, line_of(e), kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
        if (rc && path)  // name the controller too
          fail_at(m, line_of(e), kind, nm, rc, "controls_file %s: %s", file, m->err->message);
        free(path);
      }
    }
    free(acts);
  }
  if (rc == MBS_OK && m->opt && m->opt->controls_file)
    rc = read_controls_file(m, m->opt->controls_file, NULL, 0, &cf, &cap, &count);
  if (rc) {
    free(cf);
    return rc;
  }
  *out = cf;
  *n = count;
  return MBS_OK;
}

static int read_markers(mbs_osim_model* m, xmlNodePtr model) {
  xmlNodePtr objs = child(child(model, "MarkerSet"), "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next) {
    if (!is_elem(e)) continue;
    const char* nm = keep_name(m, e);
    char* owner = keep(m, mbs_format_string("/markerset/%s", nm));
    int body;
    mbs_transform X;
    const char* field = child(e, "socket_parent_frame") ? "socket_parent_frame" : "body";
    int rc = socket_frame(m, owner, e, field, tag(e), nm, &body, &X);
    if (rc) return rc;
    double loc[3];
    static const double zero3[3] = {0, 0, 0};
    if (!read_numbers_or(m, e, "location", loc, 3, zero3, tag(e), nm)) return m->err->code;
    if (!GROW(m->marker, m->cap_marker, m->nmarker + 1))
      return fail_at(m, line_of(e), tag(e), nm, MBS_ERR_NO_MEMORY, "out of memory");
    mbs_osim_marker* mk = &m->marker[m->nmarker++];
    mk->name = nm;
    mk->body = sys_body(m, body);
    mbs_m33_vec(mk->location, X.R, loc);
    for (int k = 0; k < 3; k++) mk->location[k] += X.p[k];
    mk->fixed = read_bool(m, e, "fixed", 0);
  }
  return MBS_OK;
}

// the wrap object kinds mbstudy simulates
static int wrap_shape_of(const char* kind) {
  if (!strcmp(kind, "WrapSphere")) return MBS_WRAP_SPHERE;
  if (!strcmp(kind, "WrapCylinder")) return MBS_WRAP_CYLINDER;
  if (!strcmp(kind, "WrapEllipsoid")) return MBS_WRAP_ELLIPSOID;
  if (!strcmp(kind, "WrapTorus")) return MBS_WRAP_TORUS;
  return -1;
}

// one wrap object of a body (or Ground) at frame X_BF of the body, its parameters under prefix
static int add_wrap_object(mbs_osim_model* m, xmlNodePtr e, int body, const mbs_transform* X_BF,
                           const char* owner) {
  const char* kind = tag(e);
  const char* nm = keep_name(m, e);
  const int line = line_of(e);
  const int shape = wrap_shape_of(kind);
  if (shape < 0) {  // e.g. the obstacle-set objects of OpenSim 3: kept as a record
    mbs_osim_record* r = new_record(m, e);
    if (!r) return fail_at(m, line, kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
    r->body = body;
    warn_at(m, line, kind, nm, "a wrap object of a kind mbstudy does not simulate: paths that "
            "use it go straight past it");
    return MBS_OK;
  }
  if (!*nm) return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "a wrap object needs a name");
  static const double zero3[3] = {0, 0, 0};
  static const double dims0[3] = {0.05, 0.05, 0.05};
  double ang[3], t[3];
  mbs_wrap_object o;
  memset(&o, 0, sizeof(o));
  o.shape = (mbs_wrap_shape)shape;
  // OpenSim's defaults where the file has none
  o.radius = shape == MBS_WRAP_SPHERE ? 0.05 : 1.0;
  o.length = 1.0;
  o.inner_radius = 0.01;
  o.outer_radius = 0.05;
  if (!read_numbers_or(m, e, "xyz_body_rotation", ang, 3, zero3, kind, nm) ||
      !read_numbers_or(m, e, "translation", t, 3, zero3, kind, nm))
    return m->err->code;
  int ok = 1;
  if (shape == MBS_WRAP_SPHERE || shape == MBS_WRAP_CYLINDER)
    ok = read_number_or(m, e, "radius", &o.radius, o.radius, kind, nm);
  if (ok && shape == MBS_WRAP_CYLINDER)
    ok = read_number_or(m, e, "length", &o.length, o.length, kind, nm);
  if (ok && shape == MBS_WRAP_ELLIPSOID)
    ok = read_numbers_or(m, e, "dimensions", o.dimensions, 3, dims0, kind, nm);
  if (ok && shape == MBS_WRAP_TORUS)
    ok = read_number_or(m, e, "inner_radius", &o.inner_radius, o.inner_radius, kind, nm) &&
         read_number_or(m, e, "outer_radius", &o.outer_radius, o.outer_radius, kind, nm);
  if (!ok) return m->err->code;
  const char* q = text_of(m, child(e, "quadrant"));
  mbs_error qe;
  if (q && *q && mbs_wrap_quadrant_parse(&o.quadrant, q, &qe))
    return fail_at(m, line_of(child(e, "quadrant")), kind, nm, MBS_ERR_PARSE,
                   "quadrant '%s' is not one of all, +x, -x, +y, -y, +z, -z", q);
  mbs_transform X_FW, X_BW;
  mbs_tf_from_xyz(&X_FW, ang, t);
  mbs_tf_mul(&X_BW, X_BF, &X_FW);
  const int active = read_bool(m, e, "active", 1);
  char* prefix = keep(m, mbs_format_string("%s/%s", owner, nm));
  if (!prefix) return fail_at(m, line, kind, nm, MBS_ERR_NO_MEMORY, "out of memory");
  // a frame offset from its body: the translation parameter is the offset's, in the body
  if (mbs_system_add_wrap_object(m->sys, prefix, nm, body, &X_BW, &o, active) < 0)
    return sys_fail(m, line, kind, nm);
  return MBS_OK;
}

// wrap objects of every body (and Ground), for the paths that wrap over them
static int read_wrap_objects(mbs_osim_model* m, xmlNodePtr model) {
  xmlNodePtr holders[1024];
  const char* paths[1024];
  int nh = 0;
  xmlNodePtr g = child(model, "Ground");
  if (g) {
    paths[nh] = "/ground";
    holders[nh++] = g;
  }
  xmlNodePtr objs = child(child(model, "BodySet"), "objects");
  for (xmlNodePtr b = objs ? objs->children : NULL; b && nh < 1024; b = b->next)
    if (is_elem(b)) {
      paths[nh] = keep(m, mbs_format_string("/bodyset/%s", keep_name(m, b)));
      if (!paths[nh]) return fail_at(m, line_of(b), tag(b), "", MBS_ERR_NO_MEMORY, "out of memory");
      holders[nh++] = b;
    }
  for (int i = 0; i < nh; i++) {
    xmlNodePtr w = child(child(holders[i], "WrapObjectSet"), "objects");
    if (!w) continue;
    int body = 0;
    mbs_transform X_BF;
    mbs_tf_identity(&X_BF);
    if (holders[i] != g) {
      const int f = find_frame_path(m, paths[i]);
      if (f < 0) continue;  // a body that is not part of the model: reported where it is read
      const int rc = resolve_frame(m, f);
      if (rc) return rc;
      body = sys_body(m, m->frame[f].res_body);
      X_BF = m->frame[f].X;
    }
    for (xmlNodePtr e = w->children; e; e = e->next) {
      if (!is_elem(e)) continue;
      const int rc = add_wrap_object(m, e, body, &X_BF, paths[i]);
      if (rc) return rc;
    }
  }
  return MBS_OK;
}

// the path's wraps (PathWrapSet) over the model's wrap objects
static int add_path_wraps(mbs_osim_model* m, xmlNodePtr geometry_path, int path,
                          const char* kind, const char* nm) {
  xmlNodePtr wraps = child(child(geometry_path, "PathWrapSet"), "objects");
  const int npoint = mbs_path_npoint(m->sys, path);
  for (xmlNodePtr w = wraps ? wraps->children : NULL; w; w = w->next) {
    if (!is_elem(w)) continue;
    const int line = line_of(w);
    const char* obj = text_of(m, child(w, "wrap_object"));
    if (!obj || !*obj) obj = text_of(m, child(w, "socket_wrap_object"));
    if (!obj || !*obj)
      return fail_at(m, line, kind, nm, MBS_ERR_PARSE, "a PathWrap without <wrap_object>");
    const int wo = mbs_wrap_object_find(m->sys, base_name(obj));
    if (wo < 0) {
      // an object of a kind not simulated is warned where it is read; else it is unknown
      int kept = 0;
      for (int i = 0; i < m->nrec && !kept; i++)
        kept = !strcmp(m->rec[i].name, base_name(obj)) && !strncmp(m->rec[i].kind, "Wrap", 4);
      if (kept) continue;
      return fail_at(m, line, kind, nm, MBS_ERR_PARSE,
                     "wraps over '%s', which is not a wrap object of any body", obj);
    }
    mbs_wrap_method method = MBS_WRAP_HYBRID;
    const char* ms = text_of(m, child(w, "method"));
    mbs_error me;
    if (ms && *ms && mbs_wrap_method_parse(&method, ms, &me))
      return fail_at(m, line_of(child(w, "method")), kind, nm, MBS_ERR_PARSE,
                     "wrap method '%s' is not one of hybrid, midpoint, axial", ms);
    double range[2] = {-1, -1};
    static const double none[2] = {-1, -1};
    if (!read_numbers_or(m, w, "range", range, 2, none, kind, nm)) return m->err->code;
    const int start = (int)range[0], end = (int)range[1];
    if (range[0] != start || range[1] != end || start > npoint || end > npoint ||
        (start >= 1 && end >= 1 && end < start))
      return fail_at(m, line_of(child(w, "range")), kind, nm, MBS_ERR_PARSE,
                     "wrap range %g %g over '%s' is not within its %d path points (1-based; -1 "
                     "for the first or last)", range[0], range[1], obj, npoint);
    if (mbs_path_add_wrap(m->sys, path, wo, method, start, end) < 0)
      return sys_fail(m, line, kind, nm);
  }
  return MBS_OK;
}

//---------------------------------- external loads ---------------------------------------------


// a spline of time through a table column as a function of the system; -1 with the error set
// the three columns (x, y, z) of an ExternalForce's identifier: <id>x, <id>y, <id>z, or else
// as OpenSim finds them, the first three columns whose labels start with the identifier
// ("force" finds forceX, forceY, forceZ); 0 when there are none
static int identifier_columns(const mbs_table* t, const char* id, int cols[3]) {
  char label[300];
  int found = 1;
  for (int a = 0; a < 3; a++) {
    snprintf(label, sizeof(label), "%s%c", id, "xyz"[a]);
    if ((cols[a] = mbs_table_column(t, label)) < 0) found = 0;
  }
  if (found) return 1;
  const size_t n = strlen(id);
  for (int c = 1; c + 2 < t->ncol; c++)
    if (!strncmp(t->labels[c], id, n)) {
      if (strncmp(t->labels[c + 1], id, n) || strncmp(t->labels[c + 2], id, n)) return 0;
      for (int a = 0; a < 3; a++) cols[a] = c + a;
      return 1;
    }
  return 0;
}

static int column_function(mbs_osim_model* m, const mbs_table* t, int c, const char* xml,
                           int line, const char* force) {
  const char* label = t->labels[c];
  double* x = malloc((size_t)t->nrow * sizeof(double));
  double* y = malloc((size_t)t->nrow * sizeof(double));
  if (!x || !y) {
    free(x);
    free(y);
    return mbs_error_set(m->err, MBS_ERR_NO_MEMORY, "mbs_osim_read", line, force,
                         "out of memory"),
           -1;
  }
  for (int r = 0; r < t->nrow; r++) {
    x[r] = mbs_table_get(t, r, 0);
    y[r] = mbs_table_get(t, r, c);
  }
  char* fname = keep(m, mbs_format_string("external_loads/%s/%s", force, label));
  mbs_function_spec s = {MBS_FUNC_NATURAL_CUBIC_SPLINE, fname, t->nrow, NULL, x, y, 0, -1};
  const int id = mbs_system_add_function(m->sys, &s);
  free(x);
  free(y);
  if (id < 0)
    mbs_error_set(m->err, mbs_system_error(m->sys)->code, "mbs_osim_read", line, force,
                  "%s:%d: ExternalForce '%s': column '%s': %s", file_base(xml), line, force,
                  label, mbs_system_error(m->sys)->message);
  return id;
}

static int read_external_loads(mbs_osim_model* m, const char* xml) {
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(xml, NULL, 0, 0, "an external loads file", &xf);
  if (!doc)
    return mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", xf.line, xml, "%s:%d: %s",
                         file_base(xml), xf.line, xf.msg);
  int rc = MBS_OK;
  mbs_table* t = NULL;
  char* data = NULL;
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr el = root && !strcmp(tag(root), "ExternalLoads") ? root : child(root, "ExternalLoads");
  const char* df = el ? text_of(m, child(el, "datafile")) : NULL;
  if (!el || !df || !*df) {
    rc = mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", line_of(root), xml,
                       "%s:%d: no <ExternalLoads> with a <datafile>", file_base(xml),
                       line_of(root));
    goto done;
  }
  const char* slash = strrchr(xml, '/');
  data = df[0] == '/' || !slash ? dup_str(df)
                                : mbs_format_string("%.*s/%s", (int)(slash - xml), xml, df);
  mbs_error terr;
  if (!data || mbs_table_read(data, &t, &terr) != MBS_OK) {
    rc = mbs_error_set(m->err, data ? terr.code : MBS_ERR_NO_MEMORY, "mbs_osim_read",
                       line_of(el), xml, "%s: datafile: %s", file_base(xml),
                       data ? terr.message : "out of memory");
    goto done;
  }
  if (t->nrow > 0) {
    m->loads_data = keep(m, dup_str(data));
    m->loads_t0 = mbs_table_get(t, 0, 0);
    m->loads_t1 = mbs_table_get(t, t->nrow - 1, 0);
  }
  xmlNodePtr objs = child(el, "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL; e && !rc; e = e->next) {
    if (!is_elem(e)) continue;
    const char* nm = keep_name(m, e);
    const int line = line_of(e);
    if (strcmp(tag(e), "ExternalForce") != 0) {
      warn_at(m, line, tag(e), nm, "not an ExternalForce; ignored");
      continue;
    }
    if (read_bool(m, e, "isDisabled", 0)) continue;
    const char* bodies[3] = {text_of(m, child(e, "applied_to_body")),
                             text_of(m, child(e, "force_expressed_in_body")),
                             text_of(m, child(e, "point_expressed_in_body"))};
    int b[3];
    for (int k = 0; k < 3; k++) {
      const int mb = mbs_body_find(m->sys, bodies[k] ? base_name(bodies[k]) : "");
      if (mb < 0 && !(bodies[k] && !strcmp(base_name(bodies[k]), "ground"))) {
        rc = mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", line, nm,
                           "%s:%d: ExternalForce '%s': '%s' is not a body of the model",
                           file_base(xml), line, nm, bodies[k] ? bodies[k] : "");
        break;
      }
      b[k] = mb < 0 ? 0 : mb;
    }
    if (rc) break;
    mbs_external_force_spec s;
    memset(&s, 0, sizeof(s));
    s.body = b[0];
    s.force_frame_body = b[1];
    s.point_frame_body = b[2];
    const char* ids[3] = {text_of(m, child(e, "force_identifier")),
                          text_of(m, child(e, "point_identifier")),
                          text_of(m, child(e, "torque_identifier"))};
    int* fns[3] = {s.force_functions, s.point_functions, s.torque_functions};
    for (int k = 0; k < 3 && !rc; k++) {
      for (int a = 0; a < 3; a++) fns[k][a] = -1;
      if (!ids[k] || !*ids[k] || !strcmp(ids[k], "Unassigned")) continue;
      int cols[3];
      if (!identifier_columns(t, ids[k], cols)) {
        rc = mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", line, nm,
                           "%s:%d: ExternalForce '%s': the data file has no columns %sx, %sy, "
                           "%sz (nor three columns starting with '%s')",
                           file_base(xml), line, nm, ids[k], ids[k], ids[k], ids[k]);
        break;
      }
      for (int a = 0; a < 3 && !rc; a++) {
        fns[k][a] = column_function(m, t, cols[a], xml, line, nm);
        if (fns[k][a] < 0) rc = m->err->code ? m->err->code : MBS_ERR_PARSE;
      }
    }
    if (rc) break;
    const int id = mbs_system_add_external_force(m->sys, &s);
    if (id < 0) {
      rc = mbs_error_set(m->err, mbs_system_error(m->sys)->code, "mbs_osim_read", line, nm,
                         "%s:%d: ExternalForce '%s': %s", file_base(xml), line, nm,
                         mbs_system_error(m->sys)->message);
      break;
    }
    if (mbs_system_set_force_name(m->sys, id, nm) != MBS_OK) {
      rc = mbs_error_set(m->err, mbs_system_error(m->sys)->code, "mbs_osim_read", line, nm,
                         "%s:%d: ExternalForce '%s': %s", file_base(xml), line, nm,
                         mbs_system_error(m->sys)->message);
      break;
    }
  }
done:
  mbs_table_free(t);
  free(data);
  xmlFreeDoc(doc);
  return rc;
}

//---------------------------------- reading ----------------------------------------------------

// a ForceSet file (OpenSim's force_set_files of a tool): its forces added to the model's;
// messages name that file
static int read_force_set_file(mbs_osim_model* m, const char* file, const control_fn* cf,
                               int ncf) {
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(file, NULL, 0, 0, "a force set file", &xf);
  if (!doc)
    return mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", xf.line, file, "%s:%d: %s%s",
                         file, xf.line, xf.entities ? "" : "cannot read the force set file: ",
                         xf.msg);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr set = root && !strcmp(tag(root), "ForceSet") ? root : child(root, "ForceSet");
  int rc;
  if (!set) {
    rc = mbs_error_set(m->err, MBS_ERR_PARSE, "mbs_osim_read", line_of(root), file,
                       "%s:%d: no <ForceSet> in the force set file", file, line_of(root));
  } else {
    char* model_path = m->path;  // messages name the file being read
    m->path = (char*)file;
    rc = read_forces(m, set, cf, ncf);
    m->path = model_path;
  }
  xmlFreeDoc(doc);
  return rc;
}

static int read_model(mbs_osim_model* m, xmlNodePtr model) {
  int rc;
  control_fn* cf = NULL;
  int ncf = 0;
  if ((rc = collect_bodies(m, model)) || (rc = collect_joints(m, model)) ||
      (rc = build_tree(m)) || (rc = read_constraints(m, model)) ||
      (rc = coordinate_constraints(m, model)) || (rc = prescribed_coordinates(m, model)) ||
      (rc = read_contact_geometry(m, model)) || (rc = read_wrap_objects(m, model)) ||
      (rc = read_controllers(m, model, &cf, &ncf)))
    return rc;
  // the model's forces (unless a tool replaces them), then force sets from other files
  if (!m->opt || !m->opt->replace_force_set) rc = read_forces(m, child(model, "ForceSet"), cf, ncf);
  for (int i = 0; rc == MBS_OK && m->opt && i < m->opt->nforce_set_files; i++)
    rc = read_force_set_file(m, m->opt->force_set_files[i], cf, ncf);
  free(cf);
  if (rc) return rc;
  if ((rc = read_markers(m, model))) return rc;
  if (m->opt && m->opt->external_loads && (rc = read_external_loads(m, m->opt->external_loads)))
    return rc;
  // gravity
  double g[3];
  static const double g0[3] = {0, -9.80665, 0};
  if (!read_numbers_or(m, model, "gravity", g, 3, g0, "Model", m->name)) return m->err->code;
  const int gid = mbs_system_add_gravity(m->sys, g);
  if (gid < 0) return sys_fail(m, line_of(model), "Model", m->name);
  if (mbs_force_find(m->sys, "gravity") < 0) mbs_system_set_force_name(m->sys, gid, "gravity");
  // sets not read at all
  static const char* ignored[] = {"ProbeSet", "ComponentSet"};
  for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
    xmlNodePtr s = child(child(model, ignored[i]), "objects");
    for (xmlNodePtr e = s ? s->children : NULL; e; e = e->next)
      if (is_elem(e)) {
        mbs_osim_record* r = new_record(m, e);
        if (!r) return fail_at(m, line_of(e), tag(e), "", MBS_ERR_NO_MEMORY, "out of memory");
        warn_at(m, line_of(e), tag(e), r->name, "%s elements are not supported; kept but not "
                "used", ignored[i]);
      }
  }
  for (int i = 0; i < m->ncoord; i++) {  // known before finalizing: for the extension
    m->coord[i].qindex = mbs_body_qadr(m->sys, m->coord[i].body) + m->coord[i].axis;
    m->coord[i].uindex = mbs_body_uadr(m->sys, m->coord[i].body) + m->coord[i].axis;
  }
  if (m->opt && m->opt->extend) {
    const int rc = m->opt->extend(m, m->sys, m->opt->extend_user, m->err);
    if (rc) {
      if (!m->err->code) return sys_fail(m, line_of(model), "Model", m->name);
      return rc;
    }
  }
  if (mbs_system_finalize(m->sys) != MBS_OK) return sys_fail(m, line_of(model), "Model", m->name);
  for (int i = 0; i < m->ncoord; i++) {
    m->coord[i].qindex = mbs_body_qadr(m->sys, m->coord[i].body) + m->coord[i].axis;
    m->coord[i].uindex = mbs_body_uadr(m->sys, m->coord[i].body) + m->coord[i].axis;
  }
  return m->opt ? set_param_values(m, line_of(model)) : MBS_OK;
}

// muscles first among the records
static void order_records(mbs_osim_model* m) {
  int k = 0;
  for (int i = 0; i < m->nrec; i++) {
    const char* kind = m->rec[i].kind;
    if (ends_with(kind, "Muscle") || strstr(kind, "Muscle_")) {
      mbs_osim_record t = m->rec[i];
      memmove(&m->rec[k + 1], &m->rec[k], (size_t)(i - k) * sizeof(t));
      m->rec[k++] = t;
    }
  }
}

mbs_osim_model* mbs_osim_read(const char* path, mbs_error* err) {
  return mbs_osim_read_options(path, NULL, err);
}

static mbs_osim_model* read_any(const char* path, const char* text, size_t len,
                                const mbs_osim_options* o, mbs_error* err);

mbs_osim_model* mbs_osim_read_options(const char* path, const mbs_osim_options* o,
                                      mbs_error* err) {
  return read_any(path, NULL, 0, o, err);
}

mbs_osim_model* mbs_osim_parse(const char* text, size_t len, const char* name,
                               const mbs_osim_options* o, mbs_error* err) {
  return read_any(name ? name : "model.osim", text ? text : "", text ? len : 0, o, err);
}

// a document older than OpenSim 4 (Version < 30500) converted in place as OpenSim 4 converts it
static int upgrade(mbs_osim_model* m, xmlNodePtr model) {
  mbs_osim_upgrade_report r;
  const int rc = mbs_osim_upgrade(model, m->version, &r);
  if (rc) return fail_at(m, r.line, NULL, NULL, rc, "OpenSim document version %d: %s", m->version,
                         r.msg);
  return MBS_OK;
}

static mbs_osim_model* read_any(const char* path, const char* text, size_t len,
                                const mbs_osim_options* o, mbs_error* err) {
  mbs_error local;
  if (!err) err = &local;
  mbs_error_clear(err);
  if (!path) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, "osim", "mbs_osim_read: no path");
    return NULL;
  }
  if (!text) {
    FILE* f = fopen(path, "rb");
    if (!f) {
      MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open: %s", path, strerror(errno));
      return NULL;
    }
    fclose(f);
  }
  mbs_osim_model* m = calloc(1, sizeof(*m));
  if (!m) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  m->err = err;
  m->opt = o;
  m->path = dup_str(path);
  const char* slash = strrchr(path, '/');
  m->dir = slash ? mbs_format_string("%.*s", (int)(slash - path), path) : dup_str(".");
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(path, text, text ? len : 0, 0, "a model file", &xf);
  if (!doc) {
    fail_at(m, xf.line, NULL, NULL, MBS_ERR_PARSE, "%s%s", xf.entities ? "" : "malformed XML: ",
            xf.msg);
    mbs_osim_free(m);
    return NULL;
  }
  xmlNodePtr root = xmlDocGetRootElement(doc);
  int rc = MBS_OK;
  if (!root || strcmp(tag(root), "OpenSimDocument") != 0) {
    rc = fail_at(m, line_of(root), NULL, NULL, MBS_ERR_PARSE,
                 "not an OpenSim document (root element <%s>)", root ? tag(root) : "none");
  } else {
    xmlChar* v = xmlGetProp(root, (const xmlChar*)"Version");
    m->version = v ? atoi((const char*)v) : 0;
    xmlFree(v);
    xmlNodePtr model = child(root, "Model");
    if (!model) {
      rc = fail_at(m, line_of(root), NULL, NULL, MBS_ERR_PARSE, "no <Model> element");
    } else if (m->version < 30500 && (rc = upgrade(m, model)) != MBS_OK) {
      // (the message is set)
    } else {
      m->name = dup_str(keep_name(m, model));
      m->sys = mbs_system_create(m->name && *m->name ? m->name : "model");
      if (!m->sys) rc = fail_at(m, 0, NULL, NULL, MBS_ERR_NO_MEMORY, "out of memory");
      else rc = read_model(m, model);
    }
  }
  xmlFreeDoc(doc);
  if (rc) {
    mbs_osim_free(m);
    return NULL;
  }
  order_records(m);
  m->err = NULL;
  m->opt = NULL;
  // the frames and joints were only needed while reading
  free(m->frame);
  free(m->body);
  free(m->joint);
  m->frame = NULL;
  m->body = NULL;
  m->joint = NULL;
  m->nframe = m->nbody = m->njoint = 0;
  return m;
}

void mbs_osim_free(mbs_osim_model* m) {
  if (!m) return;
  mbs_system_destroy(m->sys);
  for (int i = 0; i < m->npool; i++) free(m->pool[i]);
  free(m->pool);
  for (int i = 0; i < m->nwarning; i++) free(m->warning[i]);
  free(m->warning);
  free(m->coord);
  free(m->rec);
  free(m->marker);
  free(m->zdef);
  free(m->frame);
  free(m->body);
  free(m->joint);
  free(m->path);
  free(m->dir);
  free(m->name);
  free(m);
}

//---------------------------------- queries ----------------------------------------------------

const mbs_system* mbs_osim_system(const mbs_osim_model* m) { return m->sys; }
const char* mbs_osim_name(const mbs_osim_model* m) { return m->name ? m->name : ""; }
const char* mbs_osim_path(const mbs_osim_model* m) { return m->path; }

int mbs_osim_file_auxiliary_states(const mbs_osim_model* m, mbs_state* st) {
  const mbs_system* sys = m->sys;
  int n = 0;
  double* z = mbs_state_upd_z(st);
  for (int i = 0; i < mbs_system_nz(sys); i++) {
    char name[512];
    mbs_system_z_name(sys, i, name, sizeof(name));
    for (int k = 0; k < m->nzdef; k++) {
      const char* fn = mbs_force_name(sys, m->zdef[k].force);
      const size_t l = strlen(fn);
      if (!strncmp(name, fn, l) && name[l] == '/' && !strcmp(name + l + 1, m->zdef[k].field)) {
        z[i] = m->zdef[k].value;
        n++;
      }
    }
  }
  return n;
}
int mbs_osim_version(const mbs_osim_model* m) { return m->version; }
int mbs_osim_ncoordinate(const mbs_osim_model* m) { return m->ncoord; }

const mbs_osim_coordinate* mbs_osim_coordinate_info(const mbs_osim_model* m, int i) {
  return i >= 0 && i < m->ncoord ? &m->coord[i] : NULL;
}

int mbs_osim_find_coordinate(const mbs_osim_model* m, const char* name) {
  for (int i = 0; name && i < m->ncoord; i++)
    if (!strcmp(m->coord[i].name, name)) return i;
  return -1;
}

int mbs_osim_nmuscle(const mbs_osim_model* m) { return m->nmuscle; }
int mbs_osim_nrecord(const mbs_osim_model* m) { return m->nrec; }
const mbs_osim_record* mbs_osim_record_at(const mbs_osim_model* m, int i) {
  return i >= 0 && i < m->nrec ? &m->rec[i] : NULL;
}
int mbs_osim_nmarker(const mbs_osim_model* m) { return m->nmarker; }
const mbs_osim_marker* mbs_osim_marker_at(const mbs_osim_model* m, int i) {
  return i >= 0 && i < m->nmarker ? &m->marker[i] : NULL;
}
int mbs_osim_nwarning(const mbs_osim_model* m) { return m->nwarning; }

const char* mbs_osim_external_loads_range(const mbs_osim_model* m, double* t0, double* t1) {
  if (!m->loads_data) return NULL;
  *t0 = m->loads_t0;
  *t1 = m->loads_t1;
  return m->loads_data;
}
const char* mbs_osim_warning(const mbs_osim_model* m, int i) {
  return i >= 0 && i < m->nwarning ? m->warning[i] : NULL;
}

//---------------------------------- states -----------------------------------------------------

int mbs_osim_set_coordinates(const mbs_osim_model* m, mbs_state* st, const double* values,
                             const double* speeds) {
  if (values) {
    double* q = mbs_state_upd_q(st);
    for (int i = 0; i < m->ncoord; i++) q[m->coord[i].qindex] = values[i];
  }
  if (speeds) {
    double* u = mbs_state_upd_u(st);
    for (int i = 0; i < m->ncoord; i++) u[m->coord[i].uindex] = speeds[i];
  }
  return MBS_OK;
}

int mbs_osim_get_coordinates(const mbs_osim_model* m, const mbs_state* st, double* values,
                             double* speeds) {
  const double* q = mbs_state_q(st);
  const double* u = mbs_state_u(st);
  for (int i = 0; i < m->ncoord; i++) {
    if (values) values[i] = q[m->coord[i].qindex];
    if (speeds) speeds[i] = u[m->coord[i].uindex];
  }
  return MBS_OK;
}

int mbs_osim_get_accelerations(const mbs_osim_model* m, mbs_state* st, double* udot) {
  int rc = mbs_realize_acceleration(m->sys, st);
  if (rc) return rc;
  const double* a = mbs_get_udot(m->sys, st);
  for (int i = 0; i < m->ncoord; i++) udot[i] = a[m->coord[i].uindex];
  return MBS_OK;
}

int mbs_osim_default_state(const mbs_osim_model* m, mbs_state* st) {
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  for (int i = 0; i < m->ncoord; i++) {
    q[m->coord[i].qindex] = m->coord[i].default_value;
    u[m->coord[i].uindex] = m->coord[i].default_speed;
  }
  const int rc = mbs_system_nconstraint(m->sys) == 0 ? mbs_realize_velocity(m->sys, st)
                                                     : mbs_assemble(m->sys, st, NULL);
  // muscles start in equilibrium with the default pose, as OpenSim's initSystem leaves them
  return rc ? rc : mbs_equilibrate_muscles(m->sys, st);
}
