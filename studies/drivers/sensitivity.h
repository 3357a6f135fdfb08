// What the sensitivity study types (sobol.c, morris.c, local.c) share: the options of the
// spec's `sensitivity:` section that all of them read, the checks of the plan, and the group
// /sensitivity of the result file (io/FORMAT.md, "Sensitivity studies"): the analysis of every
// scalar output and, on request, of every frame and component of trajectory outputs.
#ifndef MBS_STUDIES_DRIVERS_SENSITIVITY_H_
#define MBS_STUDIES_DRIVERS_SENSITIVITY_H_

#include "../engine.h"

typedef struct sens_common {
  uint64_t seed;
  int nboot;                   // bootstrap resamples
  double confidence;           // level of the confidence intervals
  char** outputs;              // the scalars analyzed (NULL: all)
  int noutputs;
  char** trajectories;         // trajectories analyzed per frame
  int ntrajectories;
  int D;                       // parameters varied: P->par[first .. first + D)
  int first;
} sens_common;

// the keys every sensitivity method reads (seed, bootstrap, confidence, outputs, trajectories)
// besides its own `keys`; all keys checked
int sens_read_common(const mbs_spec_section* s, const char* const* keys, int nkeys,
                     sens_common* c, mbs_error* err);
void sens_free_common(sens_common* c);
// the parameters varied (the spec's; a preparation's axes must have one level), their
// distributions (`need_dist`), the outputs and trajectories named in the section
int sens_plan_common(sens_common* c, mbs_plan* P, int need_dist, const char* what,
                     mbs_error* err);
// the preparation's axes at their one level (params[0 .. first))
void sens_fixed_axes(const sens_common* c, const mbs_plan* P, double* params);

// One analysis of an output's values Y (one per sample, NaN for failed samples): fills the
// arrays out[k] (each D or D × D values) and the number of samples (base points, trajectories)
// it used.
typedef int (*sens_analyze_fn)(const void* self, const mbs_plan* P, const double* Y,
                               double* const* out, long* used, mbs_error* err);
typedef struct sens_array {
  const char* name;            // "S1"
  int square;                  // D × D instead of D values
  int output_units;            // 1: in the output's units (else `units` below)
  const char* units;
} sens_array;

// /sensitivity in the file at `path`: attributes (method and the given ones), the parameters,
// then each scalar output (/sensitivity/scalars/<name>/<array>) and each trajectory
// (/sensitivity/trajectories/<q>/<array>, frames × components × D [× D]) analyzed by fn
int sens_write(const char* path, const mbs_plan* P, const sens_common* c, const char* method,
               const char* const* attr, int nattr, const sens_array* arrays, int narrays,
               sens_analyze_fn fn, const void* self, mbs_error* err);

#endif  // MBS_STUDIES_DRIVERS_SENSITIVITY_H_
