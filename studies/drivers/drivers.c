#include <stdlib.h>
// The driver table: which study type a spec asks for. A study type is a file in this folder
// and a line here.
//
// The spec names its study type by a section: posture, sensitivity (with its method),
// fit or calibration; without one it is a Monte Carlo study, or a grid when its sampling
// method is grid.
#include <string.h>

#include "../engine.h"

extern const mbs_driver_ops mbs_driver_monte_carlo;
extern const mbs_driver_ops mbs_driver_grid;
extern const mbs_driver_ops mbs_driver_posture;

typedef struct driver_entry {
  const char* section;         // the spec's section that selects it
  const char* method;          // the section's `method`, or NULL for any
  const mbs_driver_ops* ops;
} driver_entry;

static const driver_entry table[] = {
    {"posture", NULL, &mbs_driver_posture},
};

static int has_section(const mbs_study_spec* spec, const char* name) {
  if (!strcmp(name, "posture")) return spec->posture != NULL;
  return mbs_spec_find_section(spec, name) != NULL;
}

int mbs_driver_create(const mbs_study_spec* spec, mbs_driver* d, mbs_error* err) {
  memset(d, 0, sizeof(*d));
  const mbs_driver_ops* chosen = NULL;
  const char* first = NULL;
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    const driver_entry* e = &table[i];
    if (!has_section(spec, e->section)) continue;
    if (first && strcmp(first, e->section))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, spec, 0,
                           "%s and %s: a study has one study type; give one of the sections",
                           first, e->section);
    first = e->section;
    if (e->method) {
      const mbs_spec_section* s = mbs_spec_find_section(spec, e->section);
      char* m = NULL;
      const int rc = mbs_spec_section_string(s, "method", NULL, 0, &m, err);
      if (rc) return rc;
      const int match = !strcmp(m, e->method);
      free(m);
      if (!match) continue;
    }
    chosen = e->ops;
  }
  if (first && !chosen) {
    // a section whose method no entry has
    const mbs_spec_section* s = mbs_spec_find_section(spec, first);
    char names[256] = "";
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
      if (!strcmp(table[i].section, first) && table[i].method) {
        strncat(names, names[0] ? ", " : "", sizeof(names) - strlen(names) - 1);
        strncat(names, table[i].method, sizeof(names) - strlen(names) - 1);
      }
    char* m = NULL;
    mbs_spec_section_string(s, "method", "", 0, &m, err);
    const int rc = mbs_spec_section_fail(s, "method", MBS_ERR_ARGUMENT, err,
                                         "unknown method '%.60s' (%s)", m ? m : "", names);
    free(m);
    return rc;
  }
  if (!chosen)
    chosen = spec->has_sampling && spec->method == MBS_DESIGN_GRID ? &mbs_driver_grid
                                                                  : &mbs_driver_monte_carlo;
  d->ops = chosen;
  return chosen->create(d, spec, err);
}

void mbs_driver_destroy(mbs_driver* d) {
  if (d->ops && d->ops->destroy) d->ops->destroy(d);
  d->ops = NULL;
  d->self = NULL;
}
