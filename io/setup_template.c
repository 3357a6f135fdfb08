// OpenSim tool setup files made from templates (setup_template.h).
#include "mbs/setup_template.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xml_read.h"
static char* read_all(const char* path, mbs_error* err) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char* s = malloc(cap);
  for (size_t k; s && (k = fread(s + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (n + 1 >= cap) {
      char* t = realloc(s, cap *= 2);
      if (!t) {
        free(s);
        s = NULL;
      } else {
        s = t;
      }
    }
  }
  const int bad = ferror(f);
  fclose(f);
  if (!s || bad) {
    free(s);
    MBS_FAIL(err, bad ? MBS_ERR_IO : MBS_ERR_NO_MEMORY, path, "%s: %s", path,
             bad ? "cannot read" : "out of memory");
    return NULL;
  }
  s[n] = 0;
  return s;
}

// a growing string
typedef struct text {
  char* s;
  size_t n, cap;
} text;

static int put(text* t, const char* s, size_t n) {
  if (t->n + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    while (t->n + n + 1 > cap) cap *= 2;
    char* u = realloc(t->s, cap);
    if (!u) return 0;
    t->s = u;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, n);
  t->n += n;
  t->s[t->n] = 0;
  return 1;
}

// the template with its variables replaced (malloc'd), or NULL with err set
static char* substitute(const char* path, const char* src, int nvars, const char* const* names,
                        const char* const* values, mbs_error* err) {
  text out = {NULL, 0, 0};
  int line = 1, ok = 1;
  for (const char* p = src; *p && ok;) {
    if (p[0] == '$' && p[1] == '$') {
      ok = put(&out, "$", 1);
      p += 2;
      continue;
    }
    if (p[0] == '$' && p[1] == '{') {
      const char* end = strchr(p + 2, '}');
      const size_t len = end ? (size_t)(end - p - 2) : 0;
      int v = -1;
      for (int i = 0; end && i < nvars; i++)
        if (strlen(names[i]) == len && !strncmp(names[i], p + 2, len)) v = i;
      if (v < 0) {
        char known[512] = "";
        for (int i = 0; i < nvars; i++) {
          strncat(known, i ? ", " : "", sizeof(known) - strlen(known) - 1);
          strncat(known, names[i], sizeof(known) - strlen(known) - 1);
        }
        free(out.s);
        MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, path, "%s:%d: %.*s is not a variable of the setup "
                 "templates (%s; write $$ for a $)", path, line,
                 end ? (int)(end - p + 1) : 2, p, known);
        return NULL;
      }
      ok = put(&out, values[v], strlen(values[v]));
      p = end + 1;
      continue;
    }
    if (*p == '\n') line++;
    ok = put(&out, p, 1);
    p++;
  }
  if (!ok || !out.s) {
    free(out.s);
    if (ok) return calloc(1, 1);
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  return out.s;
}

static int is_elem(xmlNodePtr n) { return n && n->type == XML_ELEMENT_NODE; }

static xmlNodePtr first_elem(xmlNodePtr n) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is_elem(c)) return c;
  return NULL;
}

static xmlNodePtr kid(xmlNodePtr n, const char* name, size_t len) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is_elem(c) && strlen((const char*)c->name) == len &&
        !strncmp((const char*)c->name, name, len))
      return c;
  return NULL;
}

// the tool element of a document: the first element of <OpenSimDocument>, or the root
static xmlNodePtr tool_of(xmlDocPtr doc) {
  xmlNodePtr root = xmlDocGetRootElement(doc);
  if (root && !strcmp((const char*)root->name, "OpenSimDocument")) return first_elem(root);
  return root;
}

// the element at `path` below `tool` (create: the last component made when absent)
static xmlNodePtr at_path(xmlNodePtr tool, const char* path, int create) {
  xmlNodePtr n = tool;
  for (const char* p = path; n && *p;) {
    const char* slash = strchr(p, '/');
    const size_t len = slash ? (size_t)(slash - p) : strlen(p);
    xmlNodePtr c = kid(n, p, len);
    if (!c && create && !slash) {
      char name[256];
      snprintf(name, sizeof(name), "%.*s", (int)len, p);
      c = xmlNewChild(n, NULL, (const xmlChar*)name, NULL);
    }
    n = c;
    p = slash ? slash + 1 : p + len;
  }
  return n;
}

static xmlDocPtr parse_file(const char* path, const char* text, mbs_error* err) {
  mbs_xml_failure xf;
  xmlDocPtr doc = mbs_xml_read(path, text, text ? strlen(text) : 0, 0, "a setup file", &xf);
  if (!doc) {
    MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: %s%s", path, xf.line,
             xf.entities ? "" : "not a well-formed setup file: ", xf.msg);
  } else if (!tool_of(doc)) {
    MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no tool element", path);
    xmlFreeDoc(doc);
    doc = NULL;
  }
  return doc;
}

int mbs_setup_template_write(const char* template_path, int nvars, const char* const* names,
                             const char* const* values, int nset, const char* const* paths,
                             const char* const* set_values, const char* out, mbs_error* err) {
  char* src = read_all(template_path, err);
  if (!src) return err ? err->code : MBS_ERR_IO;
  char* filled = substitute(template_path, src, nvars, names, values, err);
  free(src);
  if (!filled) return err ? err->code : MBS_ERR_PARSE;
  xmlDocPtr doc = parse_file(template_path, filled, err);
  free(filled);
  if (!doc) return err ? err->code : MBS_ERR_PARSE;
  xmlNodePtr tool = tool_of(doc);
  int rc = MBS_OK;
  for (int i = 0; i < nset && rc == MBS_OK; i++) {
    xmlNodePtr e = at_path(tool, paths[i], 1);
    if (!e) continue;  // a part of the tool the template does not have
    xmlNodeSetContent(e, NULL);
    xmlNodeAddContent(e, (const xmlChar*)set_values[i]);
  }
  if (xmlSaveFormatFileEnc(out, doc, "UTF-8", 1) < 0)
    rc = MBS_FAIL(err, MBS_ERR_IO, out, "%s: cannot write the setup file: %s", out,
                  strerror(errno));
  xmlFreeDoc(doc);
  return rc;
}

char* mbs_setup_element_text(const char* setup_path, const char* path, mbs_error* err) {
  xmlDocPtr doc = parse_file(setup_path, NULL, err);
  if (!doc) return NULL;
  xmlNodePtr e = at_path(tool_of(doc), path, 0);
  char* r = NULL;
  if (e) {
    xmlChar* t = xmlNodeGetContent(e);
    const char* s = t ? (const char*)t : "";
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
    if (n > 0 && !(n == 10 && !strncmp(s, "Unassigned", 10))) {
      r = malloc(n + 1);
      if (r) {
        memcpy(r, s, n);
        r[n] = 0;
      }
    }
    xmlFree(t);
  }
  xmlFreeDoc(doc);
  return r;
}

char* mbs_setup_tool_name(const char* setup_path, mbs_error* err) {
  xmlDocPtr doc = parse_file(setup_path, NULL, err);
  if (!doc) return NULL;
  const char* name = (const char*)tool_of(doc)->name;
  char* r = malloc(strlen(name) + 1);
  if (r) strcpy(r, name);
  xmlFreeDoc(doc);
  return r;
}
