// Reading OpenSim models (.osim, OpenSim 4.x documents: Version 40000 and later).
//
// mbs_osim_read parses the file with libxml2 and builds a finalized mbs_system: bodies in
// topological order with the mobilizer of each joint, functions, constraints (including
// locked and prescribed coordinates), contact geometry, force elements, actuators and
// gravity. What mbstudy does not simulate yet (muscles and their paths, wrap objects,
// controllers other than prescribed ones, probes) is kept as records for the parts that will
// build on it, and reported as warnings that name the element; nothing is dropped silently. A
// malformed file gives an error naming the file, the line and the component.
#ifndef MBS_OSIM_H_
#define MBS_OSIM_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_osim_model mbs_osim_model;

typedef enum mbs_osim_motion {
  MBS_OSIM_ROTATIONAL = 0,   // an angle, rad (degrees in OpenSim files that say inDegrees)
  MBS_OSIM_TRANSLATIONAL,    // a length, m
  MBS_OSIM_COUPLED,          // a CustomJoint coordinate that no axis uses through a linear
                             // function of slope +-1 (OpenSim 4's rule: an axis that does
                             // makes it rotational or translational, so a knee rotating with
                             // its angle and sliding along splines of it is rotational)
} mbs_osim_motion;

// A coordinate, in the model's order (joints in file order, coordinates in joint order).
typedef struct mbs_osim_coordinate {
  const char* name;
  const char* joint;
  int body;                  // the body whose mobilizer owns it
  int axis;                  // its index among that mobilizer's coordinates
  int qindex, uindex;        // in the State's q and u
  mbs_osim_motion motion;
  double default_value;      // rad or m
  double default_speed;
  double range[2];
  int clamped, locked, prescribed;
} mbs_osim_coordinate;

// A named key and its text, as in the file (numbers are parsed by whoever needs them).
typedef struct mbs_osim_property {
  const char* name;
  const char* text;
} mbs_osim_property;

// A point of a muscle path.
typedef struct mbs_osim_path_point {
  const char* name;
  const char* kind;          // "PathPoint", "ConditionalPathPoint", "MovingPathPoint"
  int body;
  double location[3];        // in the body (MovingPathPoint: at the default pose)
  int coordinate;            // ConditionalPathPoint: model coordinate index, else -1
  double range[2];           // ConditionalPathPoint: active range
  int location_function[3];  // MovingPathPoint: function of each coordinate of x, y, z (-1)
  int location_coordinate[3];// MovingPathPoint: model coordinate index driving x, y, z (-1)
} mbs_osim_path_point;

// An element read but not simulated yet (muscles, other path actuators, wrap objects,
// controllers, probes, ...): its class, name, line, properties and, for path actuators, path
// points and wrap object names.
typedef struct mbs_osim_record {
  const char* kind;          // element name, e.g. "Thelen2003Muscle"
  const char* name;
  int line;
  int body;                  // the body it is fixed to, when it has one (wrap objects), else -1
  int nproperty;
  const mbs_osim_property* properties;
  int npoint;
  const mbs_osim_path_point* points;
  int nwrap;
  const char* const* wraps;  // names of the wrap objects the path uses
} mbs_osim_record;

// A marker fixed on a body.
typedef struct mbs_osim_marker {
  const char* name;
  int body;
  double location[3];        // in the body
  int fixed;
} mbs_osim_marker;

// Read `path`; NULL on failure with the message in err. Warnings (unknown elements, elements
// kept but not simulated) are collected in the model.
mbs_osim_model* mbs_osim_read(const char* path, mbs_error* err);

typedef struct mbs_osim_options {
  // an OpenSim ExternalLoads file (e.g. ground reactions): each ExternalForce in it becomes a
  // prescribed external force whose force, point and torque follow its datafile's columns
  // (<identifier>x, y, z) through natural cubic splines of time; NULL for none
  const char* external_loads;
  // an OpenSim controls file (a ControlSet .xml of ControlLinear nodes, or a .sto with a column
  // per control) driving the actuators it names (OpenSim's ForwardTool controls_file): each
  // control, named after its actuator or "<actuator>.excitation", becomes that actuator's
  // control as a function of time; NULL for none
  const char* controls_file;
  // a tool's force sets (OpenSim's replace_force_set and force_set_files): the model's own
  // ForceSet left out, and ForceSet files whose forces are added
  int replace_force_set;
  const char* const* force_set_files;
  int nforce_set_files;
  // called when the model is read, before its system is finalized, to add what a file cannot
  // say (e.g. controllers of a study): the coordinates' qindex and uindex are known; returns
  // MBS_OK or a status with the message in err (or in mbs_system_error); NULL for none
  int (*extend)(mbs_osim_model* m, struct mbs_system* sys, void* user, mbs_error* err);
  void* extend_user;
  // forces of one class read as another (OpenSim's Object::renameType, which OpenSim's own
  // tests use to run OpenSim 2 models with the muscle model they were made with, e.g.
  // Thelen2003Muscle as Thelen2003Muscle_Deprecated): nrename_types pairs (old, new) in
  // rename_types[2 i], rename_types[2 i + 1]
  const char* const* rename_types;
  int nrename_types;
  // forces of the ForceSet left out by name, as a tool's forces_to_exclude sets appliesForce
  // false on them (OpenSim's DynamicsTool): nexclude_forces names in exclude_forces
  const char* const* exclude_forces;
  int nexclude_forces;
  // values of the model's parameters other than its file's (a study's draws carried into the
  // tools it runs): set once the model is built, before any State is made from it
  const struct mbs_osim_param_value* param_values;
  int nparam_values;
} mbs_osim_options;

// A parameter's value for mbs_osim_options.param_values: `path` names parameter blocks as
// `mbstudy model params` lists them (* and ? match within one path segment, every block
// matched is set), `component` the number within each block (0 for a scalar); the value itself,
// or with is_scale the factor on the model's own value.
typedef struct mbs_osim_param_value {
  const char* path;
  int component;
  double value;
  int is_scale;
} mbs_osim_param_value;

// a model from text in memory (`name` stands for the file in messages; relative paths, such as
// mesh files, resolve against the current folder)
mbs_osim_model* mbs_osim_parse(const char* text, size_t len, const char* name,
                               const mbs_osim_options* o, mbs_error* err);

// as mbs_osim_read, with options (o may be NULL)
mbs_osim_model* mbs_osim_read_options(const char* path, const mbs_osim_options* o,
                                      mbs_error* err);
void mbs_osim_free(mbs_osim_model* m);

const mbs_system* mbs_osim_system(const mbs_osim_model* m);
const char* mbs_osim_name(const mbs_osim_model* m);
const char* mbs_osim_path(const mbs_osim_model* m);
int mbs_osim_version(const mbs_osim_model* m);   // the document's Version, e.g. 40000

int mbs_osim_ncoordinate(const mbs_osim_model* m);
const mbs_osim_coordinate* mbs_osim_coordinate_info(const mbs_osim_model* m, int i);
int mbs_osim_find_coordinate(const mbs_osim_model* m, const char* name);  // -1 if unknown

int mbs_osim_nmuscle(const mbs_osim_model* m);          // muscles (kind ends in "Muscle")
int mbs_osim_nrecord(const mbs_osim_model* m);          // all records, muscles first
const mbs_osim_record* mbs_osim_record_at(const mbs_osim_model* m, int i);

int mbs_osim_nmarker(const mbs_osim_model* m);
const mbs_osim_marker* mbs_osim_marker_at(const mbs_osim_model* m, int i);

int mbs_osim_nwarning(const mbs_osim_model* m);
// The data file of the external loads read with the model (mbs_osim_options.external_loads)
// and its first and last times; NULL without external loads. Outside that range each force,
// point and torque follows its spline's end tangent (linear extrapolation).
const char* mbs_osim_external_loads_range(const mbs_osim_model* m, double* t0, double* t1);
const char* mbs_osim_warning(const mbs_osim_model* m, int i);  // "file:line: Kind 'name': ..."

// Put a State of the model's system in its default pose: coordinates at their default values
// and speeds, then assembled so that every constraint holds (locked and prescribed coordinates
// keep their values); muscles with fiber states start in equilibrium with that pose.
int mbs_osim_default_state(const mbs_osim_model* m, mbs_state* st);
// The muscles' fiber states the file gives (default_fiber_length, DeGroote's
// default_normalized_tendon_force) put into the State, as OpenSim starts a model it does not
// equilibrate; muscles without one keep theirs. Returns how many were set.
int mbs_osim_file_auxiliary_states(const mbs_osim_model* m, mbs_state* st);

// Coordinate values and speeds in the model's coordinate order to and from a State. Speeds
// follow OpenSim's convention, which is mbstudy's for every joint type (BallJoint and the
// rotations of FreeJoint: angular velocity of the child joint frame in the parent joint frame,
// expressed in the parent joint frame; FreeJoint translations: velocity of the child frame's
// origin expressed in the parent joint frame).
int mbs_osim_set_coordinates(const mbs_osim_model* m, mbs_state* st, const double* values,
                             const double* speeds);
int mbs_osim_get_coordinates(const mbs_osim_model* m, const mbs_state* st, double* values,
                             double* speeds);
// Generalized accelerations in the model's coordinate order [Acceleration].
int mbs_osim_get_accelerations(const mbs_osim_model* m, mbs_state* st, double* udot);

#ifdef __cplusplus
}
#endif

#endif  // MBS_OSIM_H_
