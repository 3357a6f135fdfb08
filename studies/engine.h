// The study engine's inner interfaces (include/mbs/study.h is the outer one).
//
// A study is one engine and one driver. The engine (plan.c, sample.c, scheduler.c, journal.c,
// merge.c, engine.c) knows nothing about any design: it plans the model, the parameters and the
// outputs from the spec, runs batches of samples over MPI ranks and OpenMP threads — a sample
// is (index, parameter vector) → State edits → simulation → per-sample results —, journals
// them, resumes, isolates failures and merges everything into one HDF5 file. A driver
// (drivers/*.c, one file per study type, listed in drivers/drivers.c) is an ops table plus its
// own data: it says which samples to run, prepares a sample's State where its design needs it,
// names its per-sample results and turns completed samples into its own results in the file.
//
// The order of a run: driver create (its spec section) → load_model (the driver's, or the
// spec's model) → axes (the driver's own parameters, before the spec's) → the spec's parameters
// and outputs → driver plan (its per-sample results, the number of samples, checks) → events
// and scalars → batches: next_batch, the samples, absorb, until next_batch gives none → the
// file is complete → finish (the driver's group) → the file is moved into place.
//
// Resume: the journals hold every completed sample with its parameters. A one-shot driver
// (one batch of all samples) resumes by skipping the samples the journals hold. An iterative
// driver is deterministic (its batches are a pure function of the spec and of the results of
// the batches before), so a resumed run replays it: the samples of completed batches come
// from the journals instead of being simulated again, absorb sees the same results, and the
// run continues at the first batch not complete. The engine checks that a journal's sample
// has the parameters the replay gives it.
#ifndef MBS_STUDIES_ENGINE_H_
#define MBS_STUDIES_ENGINE_H_

#include <stdint.h>
#include <stdio.h>

#include "mbs/batch.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/sampler.h"
#include "mbs/spec.h"
#include "mbs/store.h"

struct mbs_test_function;
typedef struct mbs_driver mbs_driver;

//---------------------------------- the plan ---------------------------------------------------

// what a parameter sets
typedef enum mbs_param_kind {
  MBS_PK_SYSTEM = 0,    // an instance parameter of the System (index into the State's block)
  MBS_PK_COORD_VALUE,   // a coordinate's initial value (index: model coordinate)
  MBS_PK_COORD_SPEED,   // a coordinate's initial speed
  MBS_PK_DRIVER,        // read by the driver itself (an axis of its design)
  MBS_PK_FUNCTION,      // an argument of a test function (index: its position)
  MBS_PK_SYSTEM_SET,    // several instance parameters at once (a path with * or ?): linked[]
                        // (and controls[])
  MBS_PK_CONTROL,       // a muscle's excitation, "/forceset/<muscle>/excitation": a State
                        // control set at the sample's start (index: the control)
} mbs_param_kind;

typedef struct mbs_param_plan {
  mbs_param_kind kind;
  int index;
  double base;          // the model's value (for scale factors and nominal values)
  int is_scale;         // the drawn value multiplies base
  char* name;           // as in the spec, with [k]
  const char* unit;
  double lower, upper;  // the valid range of the model's parameter (-inf, inf when none)
  const mbs_spec_parameter* spec;  // NULL for a driver's axis
  // MBS_PK_SYSTEM_SET: the parameters a pattern matched; with a scale the parameter's value is
  // the factor on each one's own model value, else the value they all take
  int nlinked;
  int* linked;          // indices into the State's parameter vector
  double* linked_base;  // their model values
  int ncontrols;        // the muscles' excitations it matched (MBS_PK_SYSTEM_SET)
  int* controls;        // control indices
  double* control_base; // their default values
} mbs_param_plan;

enum { MBS_Q_Q = 0, MBS_Q_U, MBS_Q_COM, MBS_Q_BODY_POS, MBS_Q_BODY_ORI, MBS_Q_CONTACT,
       MBS_Q_REACTION, MBS_Q_Z, MBS_Q_MUSCLE,
       MBS_Q_DRIVER };  // filled by a driver that evaluates its samples itself

typedef struct mbs_quantity_plan {
  char* name;
  int kind, arg;        // arg: body, force or constraint index; for MBS_Q_MUSCLE the field
                        // (mbs_spec_muscle_output)
  int ncomp;
  char** comps;
  int* forces;          // MBS_Q_MUSCLE: each component's muscle (force index)
  const char* unit;
  const char** comp_units;  // each component's unit (literals) when they differ (q, u); NULL
  long offset;          // first value of this quantity in a sample's trajectory buffer
  int hidden;           // computed for a scalar only: not stored as a trajectory
} mbs_quantity_plan;

// where a scalar comes from
typedef enum mbs_scalar_source {
  MBS_SC_QUANTITY = 0,  // a reduction of a quantity over the frames
  MBS_SC_EVENT,         // an event's first time
  MBS_SC_DRIVER,        // the driver's per-sample result `index`
  MBS_SC_FUNCTION,      // a test function's output `index`
} mbs_scalar_source;

typedef struct mbs_scalar_plan {
  const char* name;
  const char* unit;
  mbs_scalar_source source;
  int index;            // quantity, event, driver result or function output
  int comp;
  int at;               // mbs_spec_reduce
} mbs_scalar_plan;

typedef struct mbs_event_plan {
  const mbs_spec_event* e;
  int body;             // height events
  int coord;            // coordinate events (model index)
} mbs_event_plan;

#define MBS_PLAN_MAX_ATTRIBUTES 16

typedef struct mbs_plan {
  const mbs_study_spec* spec;
  const char* study_type;          // the driver's name
  mbs_osim_model* om;              // the model (NULL for a test function)
  char* model_document;            // its OpenSim document when no file of the user's holds it
                                   // (a posture study's model on the platform), or NULL: stored
                                   // in the result file as /model/document
  const mbs_system* sys;
  const struct mbs_test_function* fn;  // a test function instead of a model, or NULL
  uint64_t fingerprint;            // of the spec and the model: journals of another study are
                                   // refused
  // parameters: the driver's axes first, then the spec's
  int np, naxes;
  mbs_param_plan* par;
  mbs_distribution* dist;
  // trajectories and frames
  int nquant;
  mbs_quantity_plan* quant;
  long frame_values;               // values per sample over all quantities and frames
  int nframes;
  double* times;
  // per-sample scalars: the spec's, the test function's, then the driver's results
  int nscal;
  mbs_scalar_plan* scal;
  int nresults;                    // the driver's per-sample results
  char** result_names;
  const char** result_units;
  int fn_dim;                      // a test function's number of arguments
  int nfunction_names;             // and its outputs (its first scalars)
  char** function_names;
  int nevents;
  mbs_event_plan* ev;
  unsigned char* com_skip;         // bodies left out of `com`, or NULL
  mbs_integrator_type integrator;
  long nsamples;                   // the samples the study can have: its count for a one-shot
                                   // driver, an upper bound for an iterative one
  int rank, nranks;
  FILE* log;                       // warnings (rank 0); never NULL on rank 0
  const char* time_units;          // the frames' axis (/time): NULL for s; a driver that sets
                                   // its own frames may say otherwise ("%" of a cycle)
  // runs an OpenSim tool setup file, as `mbstudy run-tool` (mbs_study_options.run_tool), for
  // study types that chain tools; NULL where the caller gives none
  int (*run_tool)(void* user, const char* setup, const char* results_dir,
                  const struct mbs_osim_param_value* params, int nparams, FILE* log);
  void* run_tool_user;
  int nattr;                       // the driver's root attributes for the result file
  char* attr_key[MBS_PLAN_MAX_ATTRIBUTES];
  char* attr_value[MBS_PLAN_MAX_ATTRIBUTES];
} mbs_plan;

// "<spec file>:<line>: <what>" (line 0: no line)
int mbs_plan_fail(mbs_error* err, int code, const mbs_study_spec* s, int line, const char* fmt,
                  ...) __attribute__((format(printf, 5, 6)));
// FNV-1a, for fingerprints
uint64_t mbs_fnv1a(uint64_t h, const void* data, size_t n);
#define MBS_FNV_OFFSET 14695981039346656037ULL
// the hash of a file's bytes (*ok 0 when it cannot be read)
uint64_t mbs_file_hash(const char* path, int* ok);

// the spec's model: an .osim file or a built-in model (or a test function)
int mbs_plan_load_model(mbs_plan* P, mbs_error* err);
// a parameter of the driver's own design with the given levels (a discrete distribution);
// the driver's axes come before the spec's parameters
int mbs_plan_add_axis(mbs_plan* P, const char* name, const char* unit, const double* levels,
                      int n, mbs_error* err);
int mbs_plan_params(mbs_plan* P, mbs_error* err);
int mbs_plan_outputs(mbs_plan* P, mbs_error* err);
// The frames of a driver that evaluates its samples itself (ops->evaluate): n frames at
// `times` (copied), in `units` (kept: a literal). Lays out the quantities again.
int mbs_plan_set_frames(mbs_plan* P, int n, const double* times, const char* units,
                        mbs_error* err);
// A trajectory such a driver fills (kind MBS_Q_DRIVER), ncomp components named comps, in
// `unit` (kept: a literal); its index in P->quant, or a negative status.
int mbs_plan_add_driver_quantity(mbs_plan* P, const char* name, int ncomp,
                                 const char* const* comps, const char* unit, mbs_error* err);
// a per-sample result of the driver, stored as /scalars/<name>
int mbs_plan_add_result(mbs_plan* P, const char* name, const char* unit, mbs_error* err);
int mbs_plan_events_and_scalars(mbs_plan* P, mbs_error* err);
// a root attribute of the result file (given again: replaced)
int mbs_plan_attribute(mbs_plan* P, const char* key, const char* value, mbs_error* err);
int mbs_plan_find_quantity(const mbs_plan* P, int kind, int arg);
// the index of a scalar by name, or -1
int mbs_plan_find_scalar(const mbs_plan* P, const char* name);
// A quantity for a driver's use (e.g. the fitted trajectories): the quantity of that kind
// ("q", "u", "com" or "bodies/<body>/position"), added as a trajectory when the spec's outputs
// do not record it; or a recorded muscle trajectory ("muscles/<field>"). Its index, or a
// negative status.
int mbs_plan_require_quantity(mbs_plan* P, const char* what, mbs_error* err);
void mbs_plan_free(mbs_plan* P);

// Parameter values from a point u in the unit hypercube (u_j in (0, 1), or [0, 1] for
// bounded distributions): each parameter takes its distribution's quantile (times the model's
// value for a scale).
void mbs_plan_values_from_unit(const mbs_plan* P, const double* u, double* values);
// the full factorial grid over the discrete (and constant) parameters: sample `index`
void mbs_plan_grid_point(const mbs_plan* P, long index, double* values);
// the number of grid points (the product of the levels), or -1 when too many
long mbs_plan_grid_count(const mbs_plan* P);
// every parameter that has a distribution: 1, else 0 with an error naming the first without
// (`what` names the study type: "a Sobol study draws ...")
int mbs_plan_require_distributions(const mbs_plan* P, const char* what, mbs_error* err);
// a parameter's nominal value: its `initial:`, else the model's value (base; for a scale 1 ×
// base)
double mbs_plan_nominal(const mbs_plan* P, int j);
// the interval holding a distribution's values (for a scale: times the model's value)
void mbs_plan_support(const mbs_plan* P, int j, double* lo, double* hi);

//---------------------------------- one sample -------------------------------------------------

#define MBS_SAMPLE_MAX_EVENTS 4

typedef struct mbs_sample {
  const mbs_plan* P;
  const mbs_driver* D;
  mbs_state* st;                   // NULL for a test function
  long index;
  double* params;                  // np: set before mbs_sample_run
  double* traj;                    // frame_values
  int frames;                      // frames recorded
  double* scalars;                 // nscal
  double* results;                 // the driver's per-sample results (nresults), NaN unless set
  double* event_time;
  mbs_event events[MBS_SAMPLE_MAX_EVENTS];  // events the driver adds in prepare
  int nevents;
  double duration;                 // the simulated duration (the spec's; prepare may change it)
  void* scratch;                   // the driver's per-thread scratch (ops->scratch bytes)
  void* prep_scratch;              // the preparation's (D->prep)
  int stopped;                     // stopped by a signal: not recorded
  char message[512];               // why an evaluating driver's sample failed (ops->evaluate)
  double wall;                     // s
  long steps;
} mbs_sample;

mbs_sample* mbs_sample_create(const mbs_plan* P, const mbs_driver* D);
void mbs_sample_destroy(mbs_sample* r);
// Run sample r->index with the parameters in r->params from the pristine State: the State
// edits, the driver's prepare, the simulation, the outputs, the driver's results. Returns the
// sample's status with the message in mbs_sample_message.
int mbs_sample_run(mbs_sample* r, const mbs_state* pristine);
const char* mbs_sample_message(const mbs_sample* r, int status);
// The sample's State at its start (the parameters applied, the initial coordinates, assembly
// or the driver's preparation), without simulating: for drivers that integrate themselves.
int mbs_sample_setup(mbs_sample* r, const mbs_state* pristine);

// The simulation options of the plan's samples (integrator, accuracy, report interval, wall-time
// limit).
void mbs_sample_simulation_options(const mbs_plan* P, mbs_simulation_options* o);
// 1 if the plan's samples can be simulated side by side (batch.h: a System the batched path
// takes, rk_merson, no events, no driver's own evaluation); else 0 with the reason
int mbs_plan_batchable(const mbs_plan* P, const mbs_driver* D, char* why, size_t n);
// Run rs[0..n-1] (n <= MBS_SAMPLE_GROUP_MAX, each with its index and parameters set) as
// mbs_sample_run does, their simulations side by side in the lanes of `bs` (made with
// mbs_sample_simulation_options for the plan's System): statuses in status[]. A sample whose
// driver added events, or whose duration differs from the first's, is simulated alone. Each
// sample's wall time is the group's over n. Returns how many were simulated together.
#define MBS_SAMPLE_GROUP_MAX 32
int mbs_sample_run_group(mbs_sample* const* rs, int n, const mbs_state* pristine,
                         mbs_batch_sim* bs, int* status);

// set by SIGTERM/SIGINT (engine.c): samples stop at their next report
int mbs_study_stop_requested(void);

//---------------------------------- drivers ----------------------------------------------------

// The samples a driver asks for: [first, first + count), contiguous with the batches before;
// params (count × np, row by row) for an iterative driver, NULL when ops->point gives them.
typedef struct mbs_batch {
  long first, count;
  double* params;                  // owned by the driver, valid until its next call
} mbs_batch;

// A batch's completed samples, in index order (on rank 0, for absorb)
typedef struct mbs_batch_results {
  long first, count;
  const double* params;            // count × np
  const int* status;               // count
  const double* scalars;           // count × nscal (the plan's order)
  const double* traj;              // count × frame_values (hidden quantities included)
  const int* frames;               // count
} mbs_batch_results;

typedef struct mbs_driver_ops {
  const char* name;                // the study type (the file's `study` attribute)
  int iterative;                   // 1: batch after batch (next_batch and absorb)
  size_t scratch;                  // per-thread scratch bytes for prepare and results
  // read the driver's spec section and allocate its data (d->self)
  int (*create)(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err);
  // optional: build the model instead of the spec's (P->om, P->sys, P->fingerprint)
  int (*load_model)(mbs_driver* d, mbs_plan* P, mbs_error* err);
  // optional: the driver's own parameters (mbs_plan_add_axis), before the spec's
  int (*axes)(mbs_driver* d, mbs_plan* P, mbs_error* err);
  // after the parameters and outputs are planned: its per-sample results
  // (mbs_plan_add_result), P->nsamples, its attributes, and every check that can fail before
  // the first sample
  int (*plan)(mbs_driver* d, mbs_plan* P, mbs_error* err);
  // iterative drivers: the next batch (count 0 when done); called on rank 0
  int (*next_batch)(mbs_driver* d, const mbs_plan* P, mbs_batch* b, mbs_error* err);
  // one-shot drivers: the parameters of sample `index`, a pure function (on every rank)
  void (*point)(const mbs_driver* d, const mbs_plan* P, long index, double* params);
  // optional: put the sample's State where the design needs it (after the parameters are
  // applied and constraints assembled); may set results and add events. Any thread.
  int (*prepare)(const mbs_driver* d, mbs_sample* r);
  // optional: per-sample results after the simulation (status: the run's). Any thread.
  void (*results)(const mbs_driver* d, mbs_sample* r, int status);
  // optional: evaluate the sample itself instead of simulating a State (a chain of tools):
  // fill r->traj for every quantity (frames 0 .. r->frames - 1) and r->results; on failure
  // return the status with the reason in r->message. Scalars follow from the trajectories and
  // results as for simulated samples. Any thread.
  int (*evaluate)(const mbs_driver* d, mbs_sample* r);
  // iterative drivers: a completed batch (rank 0)
  int (*absorb)(mbs_driver* d, const mbs_plan* P, const mbs_batch_results* b, mbs_error* err);
  // optional: its own results, written into the complete result file at `path` (rank 0; the
  // file is closed; open it, add a group, close it)
  int (*finish)(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err);
  void (*destroy)(mbs_driver* d);
} mbs_driver_ops;

// A study has one design driver. A driver that can also act as a preparation (the posture
// study's quiet standing and fall) may accompany another study type's design: the design
// driver's `prep`. The preparation then contributes its model, axes (each of one level), plan
// (results, attributes), prepare and results; the design gives the samples and the analysis.
struct mbs_driver {
  const mbs_driver_ops* ops;
  void* self;
  int as_prep;                     // 1: this driver is another design's preparation
  mbs_driver* prep;                // the preparation of this design, or NULL
};

// The driver of a spec (drivers/drivers.c): its study type from the spec's sections, created.
int mbs_driver_create(const mbs_study_spec* spec, mbs_driver* d, mbs_error* err);
void mbs_driver_destroy(mbs_driver* d);

#endif  // MBS_STUDIES_ENGINE_H_
