// Study specifications: the YAML file that describes a study, read with libfyaml into
// mbs_study_spec. Every error names the file, the line and the key
// ("study.yaml:14: parameters[2].distribution.type: unknown distribution 'gauss' (uniform,
// normal, lognormal, truncated_normal, discrete, constant)"). Unknown keys are errors, never
// ignored. Statuses: MBS_ERR_PARSE for the form (YAML syntax, unknown or missing keys, a list
// or mapping or text where something else belongs, numbers that do not parse), MBS_ERR_ARGUMENT
// for values out of range, unknown names, duplicates and references to nothing, MBS_ERR_IO
// when the file cannot be read. Numbers are plain (unquoted) decimal scalars, finite.
//
// Example:
//
//   model: double_pendulum              # a built-in model, or a path to an .osim file
//                                       # (relative to the spec file)
//   external_loads: grf.xml             # optional, for .osim models
//   simulation:
//     duration: 5                       # s
//     accuracy: 1.0e-4
//     integrator: rk_merson             # any of mbs_integrator_from_name
//     output_interval: 0.01             # s between trajectory frames
//     max_wall_time: 60                 # s per sample; 0: none
//     events:
//       - name: fall
//         body: pelvis                  # a station on a body...
//         point: [0, 0, 0]              # (in the body, default origin)
//         height_below: 0.5             # ...whose Ground y falls below this ends the sample
//         # (or height_above; or coordinate: q1 with below: or above:); terminate: false
//         # records the time without ending the sample
//   parameters:
//     - path: /bodyset/rod1/mass
//       distribution: {type: uniform, low: 0.8, high: 1.2}
//     - path: /bodyset/rod2/mass
//       scale: {type: normal, mean: 1.0, std: 0.05}   # a factor on the model's value
//     - path: /jointset/pin1/q1/default_value          # initial coordinate value
//       distribution: {type: discrete, values: [-0.5, 0, 0.5]}
//     - path: /bodyset/rod1/mass_center[1]             # one component of a vector
//       distribution: {type: truncated_normal, mean: 0.5, std: 0.1, low: 0.3, high: 0.7}
//   # distribution (and scale) types and their keys: uniform {low, high}, normal {mean, std},
//   # lognormal {mu, sigma} (mean and standard deviation of log x), truncated_normal {mean,
//   # std, low, high}, discrete {values: [...]}, constant {value}; exactly one of distribution
//   # and scale per parameter, each (path, component) at most once
//   outputs:                            # optional
//     trajectories: [q, u, com, bodies, contacts]   # q, u, z, com, bodies, contacts,
//                                       # reactions, muscles; default [q, u] when not given
//     bodies: [rod2]                    # positions and orientations of these bodies (with
//                                       # 'bodies' in trajectories)
//     contacts: [foot_contact_force]    # contact forces of these forces (with 'contacts')
//     muscles: [soleus_r, "gas*_r"]     # muscles recorded (with 'muscles'): names or patterns
//                                       # with * and ? ("*": every muscle), in this order
//     muscle_outputs: [tendon_force, activation]   # their fields, one trajectory each
//                                       # (muscles/<field>); default [tendon_force,
//                                       # activation, fiber_length]; see mbs_spec_muscle_output
//     scalars:
//       - {name: q1_end, of: q, coordinate: q1, at: final}     # final | max | min | mean
//       - {name: rod2_y_max, of: "body:rod2", component: 1, at: max}  # com too: component
//       - {name: fall_time, event: fall}                       # event time (NaN if none)
//       - {name: peak_soleus, of: "muscle:soleus_r", output: tendon_force, at: max}
//   sampling:
//     count: 1000
//     seed: 42
//     method: lhs                       # random | lhs | sobol | grid (a full factorial over
//                                       # discrete and constant parameters; count optional)
//   execution:
//     threads: 2                        # per MPI rank; 0: OpenMP's default
//     checkpoint_interval: 30           # s of wall time between checkpoints
//     allow_failed_samples: false       # true: `run` exits 0 when samples failed (else 4)
//     max_frames: 1000000               # frames per sample at most (refused above)
//     check_disk_space: true            # false: run even when the result (uncompressed)
//                                       # exceeds the free space of its disk
//     journal_segment: 67108864         # bytes: a thread's journal is closed and a new one
//                                       # begun past this size, so that journals merged into
//                                       # the result file can be deleted during the run
//   output: results.h5                  # relative to the spec file's folder
#ifndef MBS_SPEC_H_
#define MBS_SPEC_H_

#include "mbs/sampler.h"
#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_spec_parameter {
  char* path;                  // "/bodyset/rod1/mass"; written "/bodyset/rod1/mass_center[1]"
                               // it is "/bodyset/rod1/mass_center" with component 1
  int component;               // index within a vector parameter (from "[k]"), else 0
  int is_scale;                // 1: the drawn value multiplies the model's value
  mbs_distribution dist;       // values owned by the spec
  int has_dist;                // 0: neither distribution nor scale given (the model's value is
                               // the nominal value; study types that draw values refuse it)
  double initial;              // `initial:` (fitting, calibration, local sensitivity), or NAN
  int initial_line;
  int line;                    // where it was given
} mbs_spec_parameter;

typedef enum mbs_spec_event_kind {
  MBS_SPEC_EVENT_HEIGHT_BELOW = 0,   // a body station's Ground y falls below `value`
  MBS_SPEC_EVENT_HEIGHT_ABOVE,       // rises above `value`
  MBS_SPEC_EVENT_COORDINATE_BELOW,   // a coordinate falls below `value`
  MBS_SPEC_EVENT_COORDINATE_ABOVE,
} mbs_spec_event_kind;

typedef struct mbs_spec_event {
  char* name;
  mbs_spec_event_kind kind;
  char* body;                  // height events
  double point[3];
  char* coordinate;            // coordinate events
  double value;
  int terminate;               // 1: the sample ends at the event (default); 0: only recorded
  int line;
} mbs_spec_event;

typedef enum mbs_spec_reduce {
  MBS_SPEC_AT_FINAL = 0,
  MBS_SPEC_AT_MAX,
  MBS_SPEC_AT_MIN,
  MBS_SPEC_AT_MEAN,            // over the output frames
} mbs_spec_reduce;

// A muscle's recorded fields (outputs.muscle_outputs, a scalar's `output`), as in
// mbs_muscle_report
typedef enum mbs_spec_muscle_output {
  MBS_MUSCLE_OUT_TENDON_FORCE = 0,          // N
  MBS_MUSCLE_OUT_FIBER_LENGTH,              // m
  MBS_MUSCLE_OUT_FIBER_VELOCITY,            // m/s
  MBS_MUSCLE_OUT_NORMALIZED_FIBER_LENGTH,   // 1
  MBS_MUSCLE_OUT_NORMALIZED_FIBER_VELOCITY, // 1
  MBS_MUSCLE_OUT_ACTIVATION,                // 1
  MBS_MUSCLE_OUT_EXCITATION,                // 1
  MBS_MUSCLE_OUT_PENNATION_ANGLE,           // rad
  MBS_MUSCLE_OUT_ACTIVE_FIBER_FORCE,        // N
  MBS_MUSCLE_OUT_PASSIVE_FIBER_FORCE,       // N
  MBS_MUSCLE_OUT_MUSCLE_POWER,              // W
  MBS_MUSCLE_OUT_TENDON_LENGTH,             // m
  MBS_MUSCLE_OUT_COUNT
} mbs_spec_muscle_output;
// its name ("tendon_force") and SI unit ("N"); NULL out of range
const char* mbs_spec_muscle_output_name(int field);
const char* mbs_spec_muscle_output_unit(int field);

typedef struct mbs_spec_scalar {
  char* name;
  char* of;                    // "q", "u", "com" (component 0..2), "body:<name>" (position
                               // component), "muscle:<name>" (field `output`), or NULL for an
                               // event time
  char* coordinate;            // for q and u
  int component;               // for com and body positions
  int output;                  // for muscles: an mbs_spec_muscle_output; else -1
  mbs_spec_reduce at;
  char* event;                 // the event whose first time this is
  int line;
} mbs_spec_scalar;

// trajectory quantities (bit flags)
enum {
  MBS_OUT_Q = 1,
  MBS_OUT_U = 2,
  MBS_OUT_Z = 4,
  MBS_OUT_COM = 8,
  MBS_OUT_BODIES = 16,
  MBS_OUT_CONTACTS = 32,
  MBS_OUT_REACTIONS = 64,
  MBS_OUT_MUSCLES = 128,
};

// A posture perturbation study (the OpenSim paper's platform experiment): a full factorial grid
// over joint mode, knee flexion, perturbation direction and magnitude (and any discrete
// parameters). For each grid point the model is put into quiet standing, the platform moves,
// and the time to fall T and stability index 1 - exp(-T^2) are recorded. Keys:
//
//   model: human                        # mbstudy's own standing human, or an .osim model that
//                                       # is put on the platform (feet below)
//   posture:
//     knee_flexion: [1, 15, 30, 45]     # deg
//     direction: [anterior, posterior]  # or degrees: 0 anterior, 90 right, 180 posterior
//     magnitude: [0, 0.02, 0.04]        # m of platform displacement; knee_flexion, direction
//                                       # and magnitude also as a range {from: 0, to: 0.2,
//                                       # step: 0.001} (to included when on a step)
//     mode: [free, locked]              # free: holding torques; locked: back and legs locked;
//                                       # feedback: holding torques and delayed PD feedback;
//                                       # muscles: the model's muscles hold the posture and the
//                                       # same feedback drives them (an .osim with muscles)
//     perturbation: {duration: 0.5, profile: smooth_step}   # s; smooth_step | cosine
//     fall_fraction: 0.75               # fallen when the pelvis is below this fraction of its
//                                       # standing height
//     com_ahead: 0                      # m the centre of mass stands ahead of the ankles
//                                       # (0: 35 % of the base of support from the heel)
//     trunk_lean: 0                     # deg the pelvis and trunk lean forward, plus
//     trunk_lean_ratio: 0               # this many deg per deg of knee flexion
//     subject: {height: 1.75, mass: 75} # the built-in human's size
//     contact: {sphere_radius: 0.02, stiffness: 1.0e7, dissipation: 1, static_friction: 0.9,
//               dynamic_friction: 0.8, viscous_friction: 0, transition_velocity: 0.05}
//     feet: {bodies: [calcn_r, calcn_l], toes: [toes_r, toes_l], foot_length: 0.25,
//            sole: -0.027, remove_muscles: true}   # .osim models only; lengths estimated
//                                                  # from the model when not given; the
//                                                  # muscles are kept with mode muscles
// `sampling` may then be left out (its method is grid; a count, if given, must match).
typedef struct mbs_spec_posture {
  double* knee_flexion;        // deg
  int nknee;
  double* direction;           // deg
  int ndirection;
  double* magnitude;           // m
  int nmagnitude;
  int mode[4];                 // 0 free, 1 locked, 2 feedback, 3 muscles
  int nmode;
  double perturbation_duration;  // s
  char* profile;
  double fall_fraction;
  double com_ahead;            // m, 0: default
  double trunk_lean;           // deg
  double trunk_lean_ratio;     // deg of lean per deg of knee flexion
  double height, mass;         // built-in human
  // contact; NAN: the model builder's default
  double sphere_radius, stiffness, dissipation, static_friction, dynamic_friction,
      viscous_friction, transition_velocity;
  // .osim models
  char* feet[2];
  char* toes[2];
  double foot_length;          // 0: estimated
  double sole;                 // NAN: estimated
  int remove_muscles;
  int line;
} mbs_spec_posture;

// A section of the spec whose contents a study type reads itself (sensitivity, fit,
// calibration, cohort), or a mapping inside one: read it with the mbs_spec_section_* functions,
// whose messages have the spec's form ("study.yaml:12: fit.targets[0].weight: -1 is negative").
// A section is valid while its spec is.
typedef struct mbs_spec_section {
  const char* name;            // the top-level key ("fit")
  void* node;                  // the YAML mapping (libfyaml)
  int line;                    // the line of its key
  const struct mbs_study_spec* spec;
  char kp[200];                // its key path in messages ("fit.targets[0]")
} mbs_spec_section;

#define MBS_SPEC_MAX_SECTIONS 8

typedef struct mbs_study_spec {
  char* path;                  // the spec file
  char* text;                  // its whole text (kept for provenance)
  char* model;                 // built-in name or .osim path as written
  char* model_path;            // .osim path resolved against the spec's folder, or NULL
  char* external_loads;        // resolved path or NULL
  // simulation
  double duration, accuracy, output_interval, max_wall_time;
  char* integrator;
  mbs_spec_event* events;
  int nevents;
  // parameters
  mbs_spec_parameter* params;
  int nparams;
  // outputs
  unsigned outputs;            // MBS_OUT_* flags
  char** bodies;
  int nbodies;
  char** contacts;
  int ncontacts;
  char** muscles;              // outputs.muscles: names or patterns (* and ?)
  int* muscle_lines;           // the line of each
  int nmuscles;
  int muscles_line;            // the line of the key outputs.muscles
  int muscle_outputs[MBS_MUSCLE_OUT_COUNT];  // outputs.muscle_outputs (mbs_spec_muscle_output)
  int nmuscle_outputs;
  mbs_spec_scalar* scalars;
  int nscalars;
  // sampling
  long count;
  uint64_t seed;
  mbs_design_type method;
  // execution
  int threads;
  int threads_line;            // its line in the file (0: not there, or set by --threads)
  long max_frames;             // frames per sample at most (execution.max_frames, 1000000)
  int check_disk_space;        // 0: run even when the result may not fit on its disk
  long journal_segment;        // bytes of a journal before the next is begun (64 MiB)
  int duration_line, output_interval_line;  // lines of simulation.duration, .output_interval
  double checkpoint_interval;
  int allow_failed_samples;    // 1: failed samples are acceptable (run exits 0 with them)
  char* output;                // resolved against the spec's folder
  mbs_spec_posture* posture;   // a posture study, or NULL
  int has_simulation;          // 0: no simulation section (defaults in the fields above)
  int has_sampling;            // 0: no sampling section
  int sampling_line;
  mbs_spec_section sections[MBS_SPEC_MAX_SECTIONS];  // sensitivity, fit, calibration, cohort
  int nsections;
  void* yaml_parser;           // the parsed document, kept for the sections
  void* yaml_doc;
  void* yaml_diag;
} mbs_study_spec;

// Read and check a spec file. On failure *out is NULL and err says why.
int mbs_spec_read(const char* path, mbs_study_spec** out, mbs_error* err);
// the same from text (path used in messages and to resolve relative paths)
int mbs_spec_parse(const char* text, const char* path, mbs_study_spec** out, mbs_error* err);
void mbs_spec_free(mbs_study_spec* s);

// The section named `name` ("fit"), or NULL when the spec has none.
const mbs_spec_section* mbs_spec_find_section(const mbs_study_spec* s, const char* name);

// Reading a section. Every function names the section's key path, the key and its line in its
// errors (MBS_ERR_PARSE for the form, MBS_ERR_ARGUMENT for values out of range). A key that is
// absent gives the default; a default of NAN (numbers), LONG_MIN (integers) or NULL (strings)
// makes the key required.
// every key of the mapping among keys[0..n-1], each once
int mbs_spec_section_keys(const mbs_spec_section* s, const char* const* keys, int n,
                          mbs_error* err);
int mbs_spec_section_has(const mbs_spec_section* s, const char* key);
// the line of a key (the section's line when absent)
int mbs_spec_section_line(const mbs_spec_section* s, const char* key);
// a number in [lo, hi] (NAN bounds: none); lo_open/hi_open exclude the bound
int mbs_spec_section_number(const mbs_spec_section* s, const char* key, double dflt, double lo,
                            int lo_open, double hi, int hi_open, double* out, mbs_error* err);
int mbs_spec_section_integer(const mbs_spec_section* s, const char* key, long dflt, long lo,
                             long hi, long* out, mbs_error* err);
int mbs_spec_section_bool(const mbs_spec_section* s, const char* key, int dflt, int* out,
                          mbs_error* err);
// one of names[0..n-1] (its index); dflt -1: required
int mbs_spec_section_choice(const mbs_spec_section* s, const char* key,
                            const char* const* names, int n, int dflt, int* out,
                            mbs_error* err);
// a new string (free it); with `path`, resolved against the spec file's folder
int mbs_spec_section_string(const mbs_spec_section* s, const char* key, const char* dflt,
                            int path, char** out, mbs_error* err);
// a list of numbers (a new array, free it), or one number as a list of one
int mbs_spec_section_numbers(const mbs_spec_section* s, const char* key, double** out, int* n,
                             mbs_error* err);
// a list of names (a new array of new strings; free each and the array), or one name
int mbs_spec_section_names(const mbs_spec_section* s, const char* key, char*** out, int* n,
                           mbs_error* err);
// a mapping under `key` (required)
int mbs_spec_section_sub(const mbs_spec_section* s, const char* key, mbs_spec_section* out,
                         mbs_error* err);
// a list of mappings under `key`: its length (0 when absent), and its item i
int mbs_spec_section_count(const mbs_spec_section* s, const char* key, int* n, mbs_error* err);
int mbs_spec_section_item(const mbs_spec_section* s, const char* key, int i,
                          mbs_spec_section* out, mbs_error* err);
// an error in the spec's form at the line of `key` (or of the section)
int mbs_spec_section_fail(const mbs_spec_section* s, const char* key, int code, mbs_error* err,
                          const char* fmt, ...) __attribute__((format(printf, 5, 6)));

#ifdef __cplusplus
}
#endif

#endif  // MBS_SPEC_H_
