// OpenSim's InverseDynamicsTool as a library (io/inverse_dynamics.c): the generalized forces
// that make a model follow measured coordinates, with gravity, external loads and the model's
// forces that are not excluded, computed the way OpenSim 4 computes them:
//
//  - coordinates come from a .mot/.sto file (columns named after the coordinates, or OpenSim 4
//    state labels /jointset/<joint>/<coordinate>/value); a coordinate the file lacks keeps its
//    default value (speed and acceleration zero);
//  - lowpass_hz >= 0: the table is padded with nrow/2 reflected rows at each end, resampled at
//    its smallest step when the steps differ by more than machine epsilon (Storage::lowpassIIR),
//    and filtered by the zero-phase third-order Butterworth filter (mbs_table_lowpass); a cutoff
//    at or above half the sampling rate is lowered to 0.49 times the rate, as OpenSim does;
//  - degrees become radians for the coordinates OpenSim calls rotational;
//  - natural quintic interpolating splines (OpenSim's GCVSplineSet of degree 5) through every
//    coordinate give q, q' and q'' at each frame; u = q' and u' = q'' coordinate by coordinate;
//  - the frames are the rows of that processed table from the row at or before
//    max(first time, time_range[0]) to the row at or before min(last time, time_range[1])
//    (Storage::findIndex), so with filtering they lie on the padded, resampled grid;
//  - forces_to_exclude as DynamicsTool::disableModelForces: "All" (any case) every force of the
//    model's ForceSet, "Actuators" and "Muscles" (any case) those classes, otherwise a group of
//    the ForceSet (case-sensitive) or, only when the ForceSet has no groups, a force's name;
//    excluded forces are left out of the system; gravity and the external loads always act;
//  - tau = M(q) u' + C(q, u) - f_applied with constraints ignored (Simbody's
//    calcResidualForceIgnoringConstraints): each coordinate of a CustomJoint and each
//    coordinate of a CoordinateCouplerConstraint reports its own generalized force;
//  - columns in OpenSim 4's multibody tree order (Simbody's graph maker: breadth first by the
//    level of the joint's child body, joints in JointSet order within a level), labelled
//    <coordinate>_moment for coordinates OpenSim calls rotational, <coordinate>_force for the
//    others (a CustomJoint coordinate is rotational when the last axis that moves it by a
//    LinearFunction of slope +1 or -1 is a rotation axis, as OpenSim 4.4 and later decide;
//    a CustomJoint's coordinates come in the order of its spatial transform);
//  - body forces at joints (Joint::calcEquivalentSpatialForce): the spatial force at the joint's
//    child frame, expressed in Ground, that the joint's generalized forces are equivalent to
//    (minimum-norm least squares on the joint's H matrix), force then moment.
//
// A prepared mbs_id is read-only: threads may share it, each with its own State.
#ifndef MBS_INVERSE_DYNAMICS_H_
#define MBS_INVERSE_DYNAMICS_H_

#include "mbs/osim.h"
#include "mbs/state.h"
#include "mbs/status.h"
#include "mbs/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_id_options {
  const char* model_file;               // .osim
  const char* coordinates_file;         // .mot or .sto
  const char* external_loads;           // OpenSim ExternalLoads .xml, or NULL
  double lowpass_hz;                    // lowpass_cutoff_frequency_for_coordinates (< 0: none)
  double time_range[2];                 // (-inf, inf) by default
  const char* const* exclude;           // forces_to_exclude items
  int nexclude;
  const char* const* report_joints;     // joints_to_report_body_forces (names or "All")
  int nreport_joints;
  const char* const* rename_types;      // pairs (old, new), as mbs_osim_options
  int nrename_types;
  const mbs_osim_param_value* param_values;  // model parameters, as mbs_osim_options
  int nparam_values;
} mbs_id_options;

void mbs_id_options_default(mbs_id_options* o);

typedef struct mbs_id mbs_id;

// Read the model (without its excluded forces, with the external loads) and the coordinates,
// process the coordinates and lay out the frames and columns. *out is NULL on failure, with a
// message naming the file and line or element in err.
int mbs_id_create(const mbs_id_options* o, mbs_id** out, mbs_error* err);
void mbs_id_free(mbs_id* id);

// What the preparation noticed (names matching nothing, coordinates missing from the file,
// a lowered cutoff, frames on the padding, the model reader's warnings), one sentence each.
int mbs_id_nwarning(const mbs_id* id);
const char* mbs_id_warning(const mbs_id* id, int i);

const mbs_osim_model* mbs_id_model(const mbs_id* id);
// names of the forces of the model's ForceSet left out (forces_to_exclude resolved)
int mbs_id_nexcluded(const mbs_id* id);
const char* mbs_id_excluded(const mbs_id* id, int i);

// the frames: their times (OpenSim's output rows)
int mbs_id_nframe(const mbs_id* id);
double mbs_id_frame_time(const mbs_id* id, int k);
// the processed coordinates table (padded, resampled and filtered when filtering; radians):
// time, then one column per coordinate found in the file
const mbs_table* mbs_id_coordinates(const mbs_id* id);

// the generalized-force columns (one per model coordinate, OpenSim's tree order)
int mbs_id_ncolumn(const mbs_id* id);
const char* mbs_id_column_label(const mbs_id* id, int i);   // "knee_angle_r_moment"
int mbs_id_column_coordinate(const mbs_id* id, int i);      // index in the model's coordinates

// the joints whose body forces are reported, 6 columns each: <joint>_<child frame>_FX, _FY,
// _FZ, _MX, _MY, _MZ
int mbs_id_nbody_force_column(const mbs_id* id);
const char* mbs_id_body_force_label(const mbs_id* id, int i);

// A State for evaluating: the model's default coordinates and the fiber states its file gives
// (what OpenSim's initSystem starts from); NULL when out of memory.
mbs_state* mbs_id_state_create(const mbs_id* id);

// The coordinates at time t into st (q, u and time; the accelerations into udot, nu entries
// in the State's speed order), realized to Dynamics.
int mbs_id_set_frame(const mbs_id* id, mbs_state* st, double t, double* udot);
// The generalized forces at time t (mbs_id_ncolumn values, column order). Allocates nothing.
int mbs_id_eval(const mbs_id* id, mbs_state* st, double t, double* tau);
// The body forces at the reported joints (mbs_id_nbody_force_column values) for generalized
// forces tau (column order) at time t; the State is set to the frame at t.
int mbs_id_body_forces(const mbs_id* id, mbs_state* st, double t, const double* tau,
                       double* F);

// Every frame: the generalized forces as OpenSim writes them ("Inverse Dynamics Generalized
// Forces": time and the columns) and, when joints are reported, the body forces ("Inverse
// Dynamics Body Forces at Specified Joints"; *body NULL otherwise). A frame whose forces are not
// finite is an error naming its time.
int mbs_id_run(const mbs_id* id, mbs_table** gen, mbs_table** body, mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_INVERSE_DYNAMICS_H_
