// Geometry paths (OpenSim's GeometryPath): an ordered list of points on bodies along which a
// muscle, a path actuator, a path spring or a ligament pulls. A point is fixed in its body
// (PathPoint), fixed but taking part only while a coordinate is within a range
// (ConditionalPathPoint), or moving in its body as functions of coordinates (MovingPathPoint).
//
// The path's length is the sum of the distances between consecutive active points; its
// lengthening speed the sum of the relative velocities of those points along the segments.
// A tension T pulls every pair of consecutive active points toward each other: on a segment
// from point i to point i+1 with unit direction d, +T d acts at point i and −T d at point i+1
// (each on its own body; nothing when both are on one body). A moving point also gives the
// generalized force T d · ∂p/∂q on the coordinate that moves it, as OpenSim does. Moment arms
// are OpenSim's: the generalized forces of a unit tension (for a coordinate whose speed is its
// rate, −∂L/∂q), which also holds for coordinates that move the joint frames through functions
// (CustomJoint).
//
// Point locations are instance parameters "/forceset/<owner>/path/<point>/location" (m, in the
// point's body): a study may vary them, and scaling a subject scales them with their body.
#ifndef MBS_PATH_H_
#define MBS_PATH_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MBS_PATH_MAX_POINTS 64

typedef enum mbs_path_point_kind {
  MBS_PATH_POINT_FIXED = 0,
  MBS_PATH_POINT_CONDITIONAL,   // active while q[q_index] is within [range[0], range[1]]
  MBS_PATH_POINT_MOVING,        // location[k] = function[k](q[function_q[k]]) where function >= 0
} mbs_path_point_kind;

typedef struct mbs_path_point_spec {
  const char* name;
  mbs_path_point_kind kind;
  int body;
  double location[3];           // in the body (a moving point: the components without function)
  int q_index;                  // conditional: the coordinate's index in q
  double range[2];
  int function[3];              // moving: the System's function of each component, or -1
  int function_q[3];            // moving: the index in q of the coordinate driving it
  int function_u[3];            // and of its speed in u (its rate: u = q')
} mbs_path_point_spec;

mbs_path_point_spec mbs_path_point_spec_default(const char* name, int body);

// Add a path of n points (2 <= n <= MBS_PATH_MAX_POINTS) owned by the force named `owner` (its
// parameters are named after it). Returns the path's index, or a negative status.
int mbs_system_add_path(mbs_system* sys, const char* owner, const mbs_path_point_spec* points,
                        int n);
int mbs_system_npath(const mbs_system* sys);
// the path's owner name, its points and their names
const char* mbs_path_owner(const mbs_system* sys, int path);
int mbs_path_npoint(const mbs_system* sys, int path);

// The path's length (m) [Position] and lengthening speed (m/s) [Velocity; speed may be NULL to
// need only Position].
int mbs_calc_path_length(const mbs_system* sys, mbs_state* st, int path, double* length,
                         double* speed);
// The active points now, in Ground (at most MBS_PATH_MAX_POINTS; count in *n) [Position].
int mbs_calc_path_points(const mbs_system* sys, mbs_state* st, int path, double* points_G,
                         int* n);
// Moment arms: the generalized forces (nu) of a unit tension along the path [Position].
int mbs_calc_path_moment_arms(const mbs_system* sys, mbs_state* st, int path, double* r);

#ifdef __cplusplus
}
#endif

#endif  // MBS_PATH_H_
