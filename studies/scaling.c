// Scaling a model to a subject as State edits (scaling.h).
#include "scaling.h"

#include <stdlib.h>
#include <string.h>

enum { SC_MASS = 0, SC_LENGTH, SC_INERTIA };

typedef struct scaled_block {
  int index, size;   // in the State's parameter vector
  int body;
  int kind;
} scaled_block;

struct mbs_scaling {
  int n;
  scaled_block* b;
};

// "<prefix><name>/<rest>": the name part (into out), or 0
static int segment(const char* path, const char* prefix, char* out, size_t cap,
                   const char** rest) {
  const size_t n = strlen(prefix);
  if (strncmp(path, prefix, n)) return 0;
  const char* s = path + n;
  const char* e = strchr(s, '/');
  if (!e || (size_t)(e - s) >= cap) return 0;
  memcpy(out, s, (size_t)(e - s));
  out[e - s] = '\0';
  *rest = e + 1;
  return 1;
}

// the body whose joint (mobilizer) has this name
static int joint_child(const mbs_system* sys, const char* joint) {
  for (int b = 1; b < mbs_system_nbody(sys); b++) {
    const char* j = mbs_body_mobilizer_name(sys, b);
    if (j && !strcmp(j, joint)) return b;
  }
  return -1;
}

static int geometry_body(const mbs_system* sys, const char* name) {
  for (int g = 0; g < mbs_system_ncontact_geometry(sys); g++)
    if (!strcmp(mbs_contact_geometry_name(sys, g), name)) return mbs_contact_geometry_body(sys, g);
  return -1;
}

mbs_scaling* mbs_scaling_create(const mbs_system* sys) {
  mbs_scaling* s = calloc(1, sizeof(*s));
  const int nb = mbs_system_nparam_block(sys);
  if (!s || !(s->b = calloc((size_t)nb + 1, sizeof(*s->b)))) {
    free(s);
    return NULL;
  }
  for (int i = 0; i < nb; i++) {
    const mbs_param_info* p = mbs_system_param_block(sys, i);
    char name[256];
    const char* rest;
    int body = -1, kind = -1;
    if (segment(p->path, "/bodyset/", name, sizeof(name), &rest)) {
      body = mbs_body_find(sys, name);
      if (!strcmp(rest, "mass")) kind = SC_MASS;
      else if (!strcmp(rest, "mass_center")) kind = SC_LENGTH;
      else if (!strcmp(rest, "inertia")) kind = SC_INERTIA;
    } else if (segment(p->path, "/jointset/", name, sizeof(name), &rest)) {
      const int child = joint_child(sys, name);
      if (child > 0 && !strcmp(rest, "parent_frame/translation")) {
        body = mbs_body_parent(sys, child);
        kind = SC_LENGTH;
      } else if (child > 0 && !strcmp(rest, "child_frame/translation")) {
        body = child;
        kind = SC_LENGTH;
      }
    } else if (segment(p->path, "/functions/", name, sizeof(name), &rest)) {
      const int child = joint_child(sys, name);
      if (child > 0 && !strncmp(rest, "translation", 11) && rest[11] >= '1' && rest[11] <= '3' &&
          rest[12] == '/' && (!strcmp(rest + 13, "y") || !strcmp(rest + 13, "value"))) {
        body = mbs_body_parent(sys, child);
        kind = SC_LENGTH;
      }
    } else if (segment(p->path, "/contactgeometryset/", name, sizeof(name), &rest)) {
      if (!strcmp(rest, "location") || !strcmp(rest, "radius")) {
        body = geometry_body(sys, name);
        kind = SC_LENGTH;
      }
    }
    if (kind < 0 || body <= 0) continue;  // Ground, or not a size
    s->b[s->n++] = (scaled_block){p->index, p->size, body, kind};
  }
  return s;
}

void mbs_scaling_free(mbs_scaling* s) {
  if (!s) return;
  free(s->b);
  free(s);
}

int mbs_scaling_count(const mbs_scaling* s) {
  int n = 0;
  for (int i = 0; i < s->n; i++) n += s->b[i].size;
  return n;
}

void mbs_scaling_apply(const mbs_scaling* s, mbs_state* st, const double* length,
                       const double* mass) {
  double* to = mbs_state_upd_params(st);
  for (int i = 0; i < s->n; i++) {
    const scaled_block* b = &s->b[i];
    const double L = length[b->body], M = mass[b->body];
    const double f = b->kind == SC_MASS ? M : b->kind == SC_LENGTH ? L : M * L * L;
    for (int k = 0; k < b->size; k++) to[b->index + k] *= f;
  }
}
