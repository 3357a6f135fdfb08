// OpenSim tool setup files (setup.h).
#include "setup.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../io/xml_read.h"

struct mbs_setup {
  char* path;
  char* dir;
  xmlDocPtr doc;
  xmlNodePtr tool;
  char* name;
};

// elements are xmlNodes; "used" is kept in their _private field
#define NODE(n) ((xmlNodePtr)(void*)(n))
#define HANDLE(x) ((mbs_setup_node*)(void*)(x))
static void mark(xmlNodePtr x) {
  if (x) x->_private = (void*)1;
}

static int is_elem(xmlNodePtr x) { return x && x->type == XML_ELEMENT_NODE; }

static char* dup_str(const char* s) {
  char* d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

// the setup of a parsed document (NULL, the document freed, after an error): `path` names it
// in messages, `dir` is the folder its file names are relative to (NULL: path's folder)
static mbs_setup* setup_of_doc(xmlDocPtr doc, const mbs_xml_failure* xf, const char* path,
                               const char* dir, mbs_error* err) {
  if (!doc) {
    mbs_error_set(err, MBS_ERR_PARSE, __func__, xf->line, path, "%s:%d: %s", path, xf->line,
                  xf->msg);
    return NULL;
  }
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr tool = root;
  if (root && !strcmp((const char*)root->name, "OpenSimDocument")) {
    tool = root->children;
    while (tool && !is_elem(tool)) tool = tool->next;
  }
  if (!tool) {
    mbs_error_set(err, MBS_ERR_PARSE, __func__, root ? root->line : 0, path,
                  "%s:%d: no tool element in the setup file", path, root ? root->line : 0);
    xmlFreeDoc(doc);
    return NULL;
  }
  mbs_setup* s = calloc(1, sizeof(*s));
  if (!s) {
    xmlFreeDoc(doc);
    mbs_error_set(err, MBS_ERR_NO_MEMORY, __func__, 0, path, "%s: out of memory", path);
    return NULL;
  }
  s->doc = doc;
  s->tool = tool;
  s->path = dup_str(path);
  const char* slash = strrchr(path, '/');
  s->dir = dir ? dup_str(dir) : slash ? strndup(path, (size_t)(slash - path)) : dup_str(".");
  xmlChar* nm = xmlGetProp(tool, (const xmlChar*)"name");
  s->name = dup_str(nm ? (const char*)nm : "");
  xmlFree(nm);
  if (!s->path || !s->dir || !s->name) {
    mbs_setup_free(s);
    mbs_error_set(err, MBS_ERR_NO_MEMORY, __func__, 0, path, "%s: out of memory", path);
    return NULL;
  }
  return s;
}

mbs_setup* mbs_setup_read(const char* path, mbs_error* err) {
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(path, NULL, 0, 0, "a setup file", &xf);
  return setup_of_doc(doc, &xf, path, NULL, err);
}

mbs_setup* mbs_setup_read_memory(const char* text, size_t n, const char* label, const char* dir,
                                 mbs_error* err) {
  if (n > 2147483647u) {
    mbs_error_set(err, MBS_ERR_PARSE, __func__, 0, label, "%s: too large", label);
    return NULL;
  }
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(label, text, n, 0, "a setup file", &xf);
  return setup_of_doc(doc, &xf, label, dir, err);
}

void mbs_setup_free(mbs_setup* s) {
  if (!s) return;
  xmlFreeDoc(s->doc);
  free(s->path);
  free(s->dir);
  free(s->name);
  free(s);
}

const char* mbs_setup_path(const mbs_setup* s) { return s->path; }
const char* mbs_setup_tool(const mbs_setup* s) { return (const char*)s->tool->name; }
const char* mbs_setup_name(const mbs_setup* s) { return s->name; }
mbs_setup_node* mbs_setup_root(const mbs_setup* s) { return HANDLE(s->tool); }
int mbs_setup_line(const mbs_setup_node* n) { return n ? NODE(n)->line : 0; }
const char* mbs_setup_kind(const mbs_setup_node* n) {
  return n ? (const char*)NODE(n)->name : "";
}

const char* mbs_setup_node_name(const mbs_setup_node* n) {
  // the attribute's text lives in the document; found without allocating
  if (!n) return "";
  for (xmlAttrPtr a = NODE(n)->properties; a; a = a->next)
    if (!strcmp((const char*)a->name, "name") && a->children && a->children->content)
      return (const char*)a->children->content;
  return "";
}

mbs_setup_node* mbs_setup_child(mbs_setup* s, mbs_setup_node* n, const char* key) {
  xmlNodePtr p = n ? NODE(n) : s->tool;
  for (xmlNodePtr c = p->children; c; c = c->next)
    if (is_elem(c) && !strcmp((const char*)c->name, key)) {
      mark(c);
      return HANDLE(c);
    }
  return NULL;
}

// the trimmed text of an element, kept on the element (freed with the document)
static const char* text(xmlNodePtr x) {
  xmlNodePtr t = x->children;
  if (!t || t->type != XML_TEXT_NODE || t->next) {
    // normalize: one text child holding the whole content
    xmlChar* all = xmlNodeGetContent(x);
    xmlNodeSetContent(x, all ? all : (const xmlChar*)"");
    xmlFree(all);
    t = x->children;
  }
  if (!t || !t->content) return "";
  char* c = (char*)t->content;
  while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') c++;
  size_t l = strlen(c);
  while (l && (c[l - 1] == ' ' || c[l - 1] == '\t' || c[l - 1] == '\n' || c[l - 1] == '\r'))
    c[--l] = 0;
  return c;
}

const char* mbs_setup_string(mbs_setup* s, mbs_setup_node* n, const char* key) {
  mbs_setup_node* c = mbs_setup_child(s, n, key);
  if (!c) return NULL;
  const char* t = text(NODE(c));
  return *t && strcmp(t, "Unassigned") ? t : NULL;
}

static int bad(const mbs_setup* s, mbs_setup_node* c, const char* key, const char* t,
               const char* what, mbs_error* err) {
  return mbs_error_set(err, MBS_ERR_PARSE, "mbs_setup", mbs_setup_line(c), s->path,
                       "%s:%d: <%s>: '%.60s' is not %s", s->path, mbs_setup_line(c), key, t,
                       what);
}

int mbs_setup_number(mbs_setup* s, mbs_setup_node* n, const char* key, double dflt,
                     double* out, mbs_error* err) {
  mbs_setup_node* c = mbs_setup_child(s, n, key);
  *out = dflt;
  if (!c) return MBS_OK;
  const char* t = text(NODE(c));
  if (!*t) return MBS_OK;
  char* end;
  errno = 0;
  const double v = strtod(t, &end);
  if (end == t || *end || errno == ERANGE || !isfinite(v)) return bad(s, c, key, t, "a number", err);
  *out = v;
  return MBS_OK;
}

int mbs_setup_int(mbs_setup* s, mbs_setup_node* n, const char* key, long dflt, long* out,
                  mbs_error* err) {
  mbs_setup_node* c = mbs_setup_child(s, n, key);
  *out = dflt;
  if (!c) return MBS_OK;
  const char* t = text(NODE(c));
  if (!*t) return MBS_OK;
  char* end;
  errno = 0;
  const long v = strtol(t, &end, 10);
  if (end == t || *end || errno == ERANGE) return bad(s, c, key, t, "an integer", err);
  *out = v;
  return MBS_OK;
}

int mbs_setup_bool(mbs_setup* s, mbs_setup_node* n, const char* key, int dflt, int* out,
                   mbs_error* err) {
  mbs_setup_node* c = mbs_setup_child(s, n, key);
  *out = dflt;
  if (!c) return MBS_OK;
  const char* t = text(NODE(c));
  if (!*t) return MBS_OK;
  if (!strcasecmp(t, "true") || !strcmp(t, "1")) *out = 1;
  else if (!strcasecmp(t, "false") || !strcmp(t, "0")) *out = 0;
  else return bad(s, c, key, t, "true or false", err);
  return MBS_OK;
}

char* mbs_setup_resolve(const mbs_setup* s, const char* name) {
  if (name[0] == '/') return dup_str(name);
  const size_t n = strlen(s->dir) + strlen(name) + 2;
  char* p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", s->dir, name);
  return p;
}

char* mbs_setup_file(mbs_setup* s, mbs_setup_node* n, const char* key) {
  const char* t = mbs_setup_string(s, n, key);
  return t ? mbs_setup_resolve(s, t) : NULL;
}

mbs_setup_node* mbs_setup_item(mbs_setup* s, mbs_setup_node* n, const char* key, int i) {
  mbs_setup_node* set = key ? mbs_setup_child(s, n, key) : n ? n : HANDLE(s->tool);
  if (!set) return NULL;
  xmlNodePtr list = NODE(set);
  for (xmlNodePtr c = list->children; c; c = c->next)
    if (is_elem(c) && !strcmp((const char*)c->name, "objects")) {
      mark(c);
      list = c;
      break;
    }
  int k = 0;
  for (xmlNodePtr c = list->children; c; c = c->next) {
    if (!is_elem(c) || !strcmp((const char*)c->name, "groups")) {
      if (is_elem(c)) mark(c);
      continue;
    }
    if (k++ == i) {
      mark(c);
      return HANDLE(c);
    }
  }
  return NULL;
}

static void mark_tree(xmlNodePtr x) {
  for (xmlNodePtr c = x->children; c; c = c->next)
    if (is_elem(c)) {
      mark(c);
      mark_tree(c);
    }
}

void mbs_setup_mark_all(mbs_setup* s, mbs_setup_node* n) {
  (void)s;
  if (!n) return;
  mark(NODE(n));
  mark_tree(NODE(n));
}

int mbs_setup_warn_unused(const mbs_setup* s, FILE* out) {
  return mbs_setup_warn_unused_in(s, HANDLE(s->tool), out);
}

int mbs_setup_warn_unused_in(const mbs_setup* s, const mbs_setup_node* node, FILE* out) {
  int n = 0;
  for (xmlNodePtr c = node ? NODE(node)->children : NULL; c; c = c->next) {
    if (!is_elem(c) || c->_private) continue;
    fprintf(out, "mbstudy run-tool: warning: %s:%d: <%s>: not used by mbstudy's %s; ignored\n",
            s->path, c->line, (const char*)c->name, mbs_setup_tool(s));
    n++;
  }
  return n;
}

const char* mbs_setup_attribute(const mbs_setup_node* n, const char* attr) {
  // the attribute's text lives in the document; trimmed in place
  for (xmlAttrPtr a = n ? NODE(n)->properties : NULL; a; a = a->next) {
    if (strcmp((const char*)a->name, attr) || !a->children || !a->children->content) continue;
    char* c = (char*)a->children->content;
    while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') c++;
    size_t l = strlen(c);
    while (l && (c[l - 1] == ' ' || c[l - 1] == '\t' || c[l - 1] == '\n' || c[l - 1] == '\r'))
      c[--l] = 0;
    return *c ? c : NULL;
  }
  return NULL;
}

char** mbs_setup_file_list(mbs_setup* s, mbs_setup_node* n, const char* key, int* count) {
  *count = 0;
  const char* list = mbs_setup_string(s, n, key);
  char* copy = list ? dup_str(list) : NULL;
  char** out = NULL;
  char* save = NULL;
  for (char* f = copy ? strtok_r(copy, " \t\r\n", &save) : NULL; f;
       f = strtok_r(NULL, " \t\r\n", &save)) {
    char** g = realloc(out, (size_t)(*count + 1) * sizeof(char*));
    char* r = g ? mbs_setup_resolve(s, f) : NULL;
    if (!r) {
      free(g ? g : out);
      if (g) out = NULL;
      break;
    }
    out = g;
    out[(*count)++] = r;
  }
  free(copy);
  return out;
}

void mbs_setup_free_list(char** list, int count) {
  for (int i = 0; list && i < count; i++) free(list[i]);
  free(list);
}

char* mbs_setup_tool_controls(mbs_setup* s, const char* given, FILE* log) {
  char* controls = given ? dup_str(given) : NULL;
  for (int i = 0;; i++) {
    mbs_setup_node* c = mbs_setup_item(s, NULL, "ControllerSet", i);
    if (!c) break;
    mbs_setup_mark_all(s, c);
    if (!strcmp(mbs_setup_kind(c), "ControlSetController")) {
      char* f = mbs_setup_file(s, c, "controls_file");
      if (f && controls) {
        fprintf(log, "mbstudy run-tool: warning: %s:%d: a second controls file (%s); only %s is "
                     "applied\n", s->path, mbs_setup_line(c), f, controls);
        free(f);
      } else if (f) {
        controls = f;
      }
      const char* acts = mbs_setup_string(s, c, "actuator_list");
      if (acts && strcmp(acts, "ALL"))
        fprintf(log, "mbstudy run-tool: warning: %s:%d: the controls drive every actuator they "
                     "name (actuator_list '%s' is not applied)\n", s->path, mbs_setup_line(c),
                acts);
    } else {
      fprintf(log, "mbstudy run-tool: warning: %s:%d: controller %s '%s' is not supported in a "
                   "tool's ControllerSet; not run\n", s->path, mbs_setup_line(c),
              mbs_setup_kind(c), mbs_setup_node_name(c));
    }
  }
  mbs_setup_child(s, NULL, "ControllerSet");
  return controls;
}
