// What a fit or a calibration compares the simulations with: targets read from the spec's
// section (`targets:`), each a trajectory of the simulation against reference data at the
// study's frames, or a scalar of the simulation against a value; together a vector of weighted
// residuals r = w · (simulated − reference) per sample.
//
//   targets:
//     - trajectory: q             # q, u, com, or bodies/<body>/position
//       coordinate: block_ty      # for q and u (or component: 0..2 / x, y, z)
//       data: block.sto           # .sto/.mot (degrees converted) or a study's .h5 file
//       column: /jointset/slide/block_ty/value   # default: the coordinate's name, or
//                                                # OpenSim's state label ending /<name>/value
//       sample: 0                 # .h5 data: the sample whose trajectory is the reference
//       from: 0.1                 # s; frames outside [from, to] and the data's range are left out
//       to: 2.0
//       weight: 1                 # or sigma: the noise's standard deviation (weight = 1/sigma)
//     - {scalar: q1_final, value: 0.31, sigma: 0.01}
//
// Reference values between data rows are interpolated linearly in time.
#ifndef MBS_STUDIES_DRIVERS_TARGETS_H_
#define MBS_STUDIES_DRIVERS_TARGETS_H_

#include "../engine.h"

typedef struct fit_target {
  int is_scalar;
  char* what;                  // trajectory or scalar name as written
  char* coordinate;
  char* comp_name;             // component: a name (x, y, z) or NULL
  long comp_index;             // component: a number, or -1
  char* data;                  // resolved path
  char* column;
  long sample;
  double from, to;
  double value;                // scalar targets
  double weight;
  int line;
  // resolved
  int quantity, comp;          // trajectory: the plan's quantity and its component
  int scalar;                  // scalar: the plan's scalar
  double* ref;                 // nframes reference values (NaN: frame left out)
  int nused;                   // frames (or 1) in the residual vector
} fit_target;

typedef struct fit_targets {
  int n;
  fit_target* t;
  int m;                       // residuals per sample
} fit_targets;

// the targets listed under `targets` of the section (at least one)
int targets_read(const mbs_spec_section* s, fit_targets* T, mbs_error* err);
// resolved against the plan (their quantities recorded as trajectories), the reference data
// read and put at the frames
int targets_plan(fit_targets* T, mbs_plan* P, const mbs_spec_section* s, mbs_error* err);
// a sample's residuals r (T->m) from its scalars and trajectory values; NaN where the sample
// has none (failed, or ended early)
void targets_residuals(const fit_targets* T, const mbs_plan* P, const double* scalars,
                       const double* traj, double* r);
// a label per residual ("q/block_ty@0.25", "q1_final") into labels[m] (new strings)
int targets_labels(const fit_targets* T, const mbs_plan* P, char** labels);
void targets_free(fit_targets* T);

#endif  // MBS_STUDIES_DRIVERS_TARGETS_H_
