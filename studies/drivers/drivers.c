// The driver table: which study type a spec asks for. A study type is a file in this folder
// and a line here.
//
// The spec names its study type by a section: sensitivity (with its method), fit, calibration
// or posture; without one it is a Monte Carlo study, or a grid when its sampling method is
// grid. The posture section may also accompany another study type: it then prepares every
// sample (quiet standing on the platform, the fall) for that study's design. A cohort section
// runs the study (whichever it is) for every subject of a generated cohort. A pipeline section
// chains OpenSim's tools per subject and trial (drivers/pipeline.c).
#include <stdlib.h>
#include <string.h>

#include "../engine.h"

extern const mbs_driver_ops mbs_driver_monte_carlo;
extern const mbs_driver_ops mbs_driver_grid;
extern const mbs_driver_ops mbs_driver_posture;
extern const mbs_driver_ops mbs_driver_sobol;
extern const mbs_driver_ops mbs_driver_morris;
extern const mbs_driver_ops mbs_driver_local;
extern const mbs_driver_ops mbs_driver_fit;
extern const mbs_driver_ops mbs_driver_calibration;
extern const mbs_driver_ops mbs_driver_pipeline;
int mbs_cohort_wrap(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err);

typedef struct driver_entry {
  const char* section;         // the spec's section that selects it
  const char* method;          // the section's `method`, or NULL for any
  const mbs_driver_ops* ops;
  int prepares;                // 1: it can also prepare the samples of another design
} driver_entry;

static const driver_entry table[] = {
    {"sensitivity", "sobol", &mbs_driver_sobol, 0},
    {"sensitivity", "morris", &mbs_driver_morris, 0},
    {"sensitivity", "local", &mbs_driver_local, 0},
    {"fit", NULL, &mbs_driver_fit, 0},
    {"calibration", NULL, &mbs_driver_calibration, 0},
    {"posture", NULL, &mbs_driver_posture, 1},
    {"pipeline", NULL, &mbs_driver_pipeline, 0},
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

static int has_section(const mbs_study_spec* spec, const char* name) {
  if (!strcmp(name, "posture")) return spec->posture != NULL;
  return mbs_spec_find_section(spec, name) != NULL;
}

// the entry for a present section (its method matched), or NULL with err set when the method is
// unknown
static const driver_entry* entry_for(const mbs_study_spec* spec, const char* section,
                                     mbs_error* err, int* rc) {
  const mbs_spec_section* s = mbs_spec_find_section(spec, section);
  char* m = NULL;
  char names[256] = "";
  *rc = MBS_OK;
  for (size_t i = 0; i < NTABLE; i++) {
    if (strcmp(table[i].section, section)) continue;
    if (!table[i].method) return &table[i];
    if (!m && (*rc = mbs_spec_section_string(s, "method", NULL, 0, &m, err))) return NULL;
    if (!strcmp(m, table[i].method)) {
      free(m);
      return &table[i];
    }
    strncat(names, names[0] ? ", " : "", sizeof(names) - strlen(names) - 1);
    strncat(names, table[i].method, sizeof(names) - strlen(names) - 1);
  }
  *rc = mbs_spec_section_fail(s, "method", MBS_ERR_ARGUMENT, err, "unknown method '%.60s' (%s)",
                              m ? m : "", names);
  free(m);
  return NULL;
}

int mbs_driver_create(const mbs_study_spec* spec, mbs_driver* d, mbs_error* err) {
  memset(d, 0, sizeof(*d));
  const driver_entry* design = NULL;
  const driver_entry* prep = NULL;
  int rc = MBS_OK;
  for (size_t i = 0; i < NTABLE; i++) {
    const driver_entry* e = &table[i];
    if (!has_section(spec, e->section)) continue;
    if ((design && !strcmp(design->section, e->section)) ||
        (prep && !strcmp(prep->section, e->section)))
      continue;  // its other methods
    const driver_entry* found = entry_for(spec, e->section, err, &rc);
    if (!found) return rc;
    if (found->prepares && !prep) {
      prep = found;
    } else if (!design) {
      design = found;
    } else {
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, spec, 0,
                           "%s and %s: a study has one study type; give one of the sections",
                           design->section, found->section);
    }
  }
  if (prep && !design) {  // the preparation is the study itself
    design = prep;
    prep = NULL;
  }
  d->ops = design ? design->ops
                  : spec->has_sampling && spec->method == MBS_DESIGN_GRID ? &mbs_driver_grid
                                                                           : &mbs_driver_monte_carlo;
  if (prep) {
    if (!design) {  // (cannot happen)
      return MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "a preparation without a design");
    }
    d->prep = calloc(1, sizeof(*d->prep));
    if (!d->prep) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    d->prep->ops = prep->ops;
    d->prep->as_prep = 1;
    if ((rc = prep->ops->create(d->prep, spec, err))) return rc;
  }
  if ((rc = d->ops->create(d, spec, err))) return rc;
  // a generated cohort runs the design for every subject
  if (mbs_spec_find_section(spec, "cohort")) return mbs_cohort_wrap(d, spec, err);
  return MBS_OK;
}

void mbs_driver_destroy(mbs_driver* d) {
  if (d->prep) {
    mbs_driver_destroy(d->prep);
    free(d->prep);
  }
  if (d->ops && d->ops->destroy) d->ops->destroy(d);
  d->ops = NULL;
  d->self = NULL;
  d->prep = NULL;
}
