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
//
// Wrapping (OpenSim's PathWrap over a WrapObject): a path may wrap over wrap objects fixed in
// bodies (spheres, cylinders, ellipsoids, tori; the geometry is mbs/wrap.h's). Each wrap
// considers the segments between the active points of its range and wraps the one the object
// lies across (a mandatory wrap), else the one it lengthens least, inserting two tangent
// points fixed on the object's body; the path runs over the surface between them. With two or
// more wraps the pass over the wraps repeats, each seeing the others' tangent points, until
// the length changes by less than 0.5 mm (at most 8 passes; when the first wraps nothing and
// the second finds a point inside it, the first two swap), as OpenSim does. What a wrap
// remembers between evaluations lives in the State. A wrap object's sizes and translation are
// instance parameters "<prefix>/radius", "/length" (cylinder), "/dimensions" (ellipsoid),
// "/inner_radius", "/outer_radius" (torus) and "/translation", where the prefix names it
// (OpenSim's "/bodyset/<body>/<name>"). Spheres and cylinders give the shortest path, so their
// moment arms are -dL/dq; OpenSim's ellipsoid (a planar path) and torus (a cylinder placed by
// the line) are approximations whose tangent points are not the shortest path's off symmetric
// placements: their moment arms, OpenSim's generalized forces of a unit tension, and the
// lengthening speed, the tangent points' relative velocity, then differ from -dL/dq and dL/dt
// as OpenSim's do.
#ifndef MBS_PATH_H_
#define MBS_PATH_H_

#include "mbs/spatial.h"
#include "mbs/state.h"
#include "mbs/system.h"
#include "mbs/wrap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MBS_PATH_MAX_POINTS 64
#define MBS_PATH_MAX_WRAPS 16     // wraps per path

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

// Add a wrap object fixed in `body` at X_BW (its frame in the body): obj's shape, sizes and
// quadrant (its method is each path wrap's); `prefix` names its parameters (see above), `name`
// is what paths and messages call it; an inactive object wraps nothing. Returns its index.
int mbs_system_add_wrap_object(mbs_system* sys, const char* prefix, const char* name, int body,
                               const mbs_transform* X_BW, const mbs_wrap_object* obj,
                               int active);
int mbs_system_nwrap_object(const mbs_system* sys);
int mbs_wrap_object_find(const mbs_system* sys, const char* name);   // -1 if unknown
const char* mbs_wrap_object_name(const mbs_system* sys, int wrap);
int mbs_wrap_object_body(const mbs_system* sys, int wrap);
// Let the path wrap over a wrap object (at most MBS_PATH_MAX_WRAPS per path, in the order
// added), by `method` for ellipsoids, considering its points start..end (1-based, as
// OpenSim's range; < 1 for the first or the last point).
int mbs_path_add_wrap(mbs_system* sys, int path, int wrap, mbs_wrap_method method, int start,
                      int end);
int mbs_path_nwrap(const mbs_system* sys, int path);
int mbs_path_wrap_object(const mbs_system* sys, int path, int i);  // its i-th wrap's object
mbs_wrap_shape mbs_wrap_object_shape(const mbs_system* sys, int wrap);

// The path's length (m) [Position] and lengthening speed (m/s) [Velocity; speed may be NULL to
// need only Position].
int mbs_calc_path_length(const mbs_system* sys, mbs_state* st, int path, double* length,
                         double* speed);
// The path's points now, in Ground: its active points and its wraps' tangent points in order
// (at most MBS_PATH_MAX_POINTS + 2 MBS_PATH_MAX_WRAPS; count in *n) [Position].
int mbs_calc_path_points(const mbs_system* sys, mbs_state* st, int path, double* points_G,
                         int* n);
// Moment arms: the generalized forces (nu) of a unit tension along the path [Position].
int mbs_calc_path_moment_arms(const mbs_system* sys, mbs_state* st, int path, double* r);

#ifdef __cplusplus
}
#endif

#endif  // MBS_PATH_H_
