// A study sample's model as an OpenSim document (export_model.h).
#include "export_model.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/xml_read.h"

static int is(const xmlNode* n, const char* name) {
  return n && n->type == XML_ELEMENT_NODE && !strcmp((const char*)n->name, name);
}

// the element child `name` of n, made (before the first element child, so that OpenSim's
// property order stays readable) when absent
static xmlNode* child(xmlNode* n, const char* name) {
  for (xmlNode* c = n->children; c; c = c->next)
    if (is(c, name)) return c;
  return xmlNewChild(n, NULL, (const xmlChar*)name, NULL);
}

static int set_number(xmlNode* n, const char* name, double v) {
  xmlNode* c = child(n, name);
  if (!c) return -1;
  char buf[40];
  snprintf(buf, sizeof buf, "%.17g", v);
  xmlNodeSetContent(c, (const xmlChar*)buf);
  return 0;
}

typedef struct edit {
  const mbs_export_model_values* v;
  int ncoord_set;
  int nplatform_set;
  int failed;
} edit;

static const char* const platform_functions[3] = {"platform_x", "platform_y", "platform_z"};

static void walk(xmlNode* n, edit* e) {
  for (; n && !e->failed; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    xmlChar* name = xmlGetProp(n, (const xmlChar*)"name");
    if (name && is(n, "Coordinate")) {
      for (int k = 0; k < e->v->ncoord; k++) {
        if (strcmp((const char*)name, e->v->coords[k])) continue;
        if (!isnan(e->v->value[k]) && set_number(n, "default_value", e->v->value[k])) e->failed = 1;
        if (e->v->speed && !isnan(e->v->speed[k]) &&
            set_number(n, "default_speed_value", e->v->speed[k]))
          e->failed = 1;
        e->ncoord_set++;
        break;
      }
    }
    if (name && e->v->platform && is(n, "MultiplierFunction"))
      for (int k = 0; k < 3; k++)
        if (!strcmp((const char*)name, platform_functions[k])) {
          if (set_number(n, "scale", e->v->platform[k])) e->failed = 1;
          e->nplatform_set++;
        }
    xmlFree(name);
    walk(n->children, e);
  }
}

char* mbs_export_model_document(const char* doc, const char* source,
                                 const mbs_export_model_values* v, mbs_error* err) {
  const size_t n = strlen(doc);
  if (n > (size_t)INT32_MAX) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, source, "%s: the model document is too large", source);
    return NULL;
  }
  mbs_xml_failure xf;
  xmlDocPtr d = mbs_xml_read(source, doc, n, 0, "a model file", &xf);
  xmlNode* root = d ? xmlDocGetRootElement(d) : NULL;
  if (!root) {
    MBS_FAIL(err, MBS_ERR_PARSE, source, "%s:%d: %s", source, d ? 1 : xf.line,
             d ? "an empty document" : xf.msg);
    if (d) xmlFreeDoc(d);
    return NULL;
  }
  edit e = {v, 0, 0, 0};
  walk(root, &e);
  if (e.failed) {
    xmlFreeDoc(d);
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, source, "%s: out of memory editing the model", source);
    return NULL;
  }
  if (v->platform && e.nplatform_set != 3) {
    xmlFreeDoc(d);
    MBS_FAIL(err, MBS_ERR_ARGUMENT, source,
             "%s: the model has no platform functions platform_x, platform_y and platform_z "
             "(found %d of 3): not a posture study's model", source, e.nplatform_set);
    return NULL;
  }
  xmlChar* out = NULL;
  int len = 0;
  xmlDocDumpFormatMemoryEnc(d, &out, &len, "UTF-8", 0);
  xmlFreeDoc(d);
  if (!out) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, source, "%s: out of memory writing the model", source);
    return NULL;
  }
  char* s = malloc((size_t)len + 1);
  if (s) {
    memcpy(s, out, (size_t)len);
    s[len] = 0;
  } else {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, source, "%s: out of memory writing the model", source);
  }
  xmlFree(out);
  return s;
}
