// Muscle-path wrapping over OpenSim's WrapSphere, WrapCylinder, WrapEllipsoid and WrapTorus:
// the geometric kernel, independent of the System.
//
// Given the two path points next to a wrap object, expressed in the object's own frame, decide
// whether the path wraps over the object and, if it does, give the two tangent points r1 (on
// the side of p1) and r2 (on the side of p2), the length of the path on the surface between
// them, and a few points of that surface path for drawing. The path over this segment is then
// |p1 - r1| + length + |r2 - p2| (mbs_wrap_path_length).
//
// The decisions (when to wrap, on which side, what a quadrant means) follow OpenSim 4's
// wrapLine() of each class (opensim-core, OpenSim/Simulation/Wrap: WrapSphere.cpp,
// WrapCylinder.cpp, WrapEllipsoid.cpp, WrapTorus.cpp, WrapObject.cpp); the geometry is solved in
// closed form where OpenSim iterates:
// - Sphere (centre at the origin): the exact geodesic, a great circle in the plane of the
//   centre and the two points. Wraps when the segment p1-p2 passes through the sphere.
// - Cylinder (axis z, centred, from -length/2 to length/2): the exact geodesic, a helix. Seen
//   along the axis the path wraps the circle, and unrolling the cylinder with the two straight
//   pieces makes the whole path one straight line, so the height grows in proportion to the
//   horizontal distance travelled (OpenSim reaches the same curve by sliding the tangent points
//   until tangent within 1 degree). Unconstrained it wraps when the segment passes within the
//   radius of the axis line; no wrap when both tangent points lie beyond the ends (OpenSim's
//   rule: one tangent point within the length is enough), nor for a segment along the axis.
// - Ellipsoid (semi-axes dimensions[] along x, y, z): OpenSim's planar approximation of the
//   geodesic. A surface point c1 fixes the plane through p1, p2 and c1; the path is the tangent
//   segments and the arc of the plane's elliptical section on c1's side. c1 comes from the
//   method of PathWrap, all three implemented as in WrapEllipsoid.cpp (in coordinates scaled
//   by 3 / (a + b + c) as there): midpoint (the surface point closest to the middle of the
//   chord of p1-p2 inside the ellipsoid), axial ("Frans": the closest point in the principal
//   section crossed by the chord along the axis most parallel to it), hybrid (OpenSim's
//   default: axial blended with the "fan", the mean direction from 298 chord points to their
//   closest surface points). Tangent points and the section's arc are then solved in closed
//   form (an affine map makes the section a circle; arc length by Gauss-Legendre) where OpenSim
//   iterates and sums 1 mm chords; when OpenSim starts that iteration from the chord's ends
//   instead of c1 (axial, its chord point off the chord) the side is the one whose tangent
//   points lie nearer those ends. Wraps (mandatory) when the segment passes through it.
// - Torus (tube of radius inner_radius around the circle of radius outer_radius about z in the
//   plane z = 0): as OpenSim, the point of that circle closest to the line p1-p2 (the true
//   closest point: OpenSim's residual has a factor 2 that aims at a circle of twice the radius;
//   for symmetric paths both agree) carries a cylinder of the tube's radius tangent to the circle,
//   unbounded, constrained to the side facing the torus axis: the path is pulled through the
//   hole and wraps the inner side of the tube. Reported as "wrapped" (a point within the tube
//   radius of that cylinder's axis: no wrap).
//
// Quadrant (OpenSim's WrapObject quadrant: "all", "+x", "-x", "+y", "-y", "+z", "-z"): the side
// of the object the path must wrap on. With a quadrant, sphere and cylinder choose the wrapping
// direction whose surface path has its midpoint farthest toward the quadrant (the shorter one
// on a tie; on a cylinder a quadrant along its axis decides only whether it wraps); the
// cylinder decides as OpenSim: when a path point lies in the quadrant it wraps only if the
// segment passes through it, or if the points lie on both sides and the segment passes on the
// wrong side; when neither point does, it always wraps around the quadrant's side. A sphere or
// ellipsoid still needs the segment to pass through it. The ellipsoid moves c1 into the
// quadrant as OpenSim does (mirrored, blended toward the plane by the fan weight); the torus
// keeps only the closest points of its circle whose line point lies in the quadrant.
// The active range of path points (PathWrap range) and the choice among several segments of a
// path (mandatory wrap first, else the least lengthening) are the caller's.
//
// No allocation, no global state. What OpenSim keeps between evaluations (PathWrap's previous
// wrap) is an mbs_wrap_memory the caller stores in its State: read only when the points do not
// fix the answer (the line through a sphere's centre, or through an ellipsoid's c1: the
// previous wrapping plane and turning sense are kept; a cylinder's exact tie of both sides: the
// previous sense), and updated by the caller with mbs_wrap_remember for the segment it chose.
#ifndef MBS_WRAP_H_
#define MBS_WRAP_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_wrap_shape {
  MBS_WRAP_SPHERE = 0,
  MBS_WRAP_CYLINDER,
  MBS_WRAP_ELLIPSOID,
  MBS_WRAP_TORUS,
  MBS_WRAP_SHAPE_COUNT
} mbs_wrap_shape;

// the side of the object the path must wrap on ("all": either, the shorter)
typedef enum mbs_wrap_quadrant {
  MBS_WRAP_ALL = 0,
  MBS_WRAP_POS_X, MBS_WRAP_NEG_X,
  MBS_WRAP_POS_Y, MBS_WRAP_NEG_Y,
  MBS_WRAP_POS_Z, MBS_WRAP_NEG_Z,
  MBS_WRAP_QUADRANT_COUNT
} mbs_wrap_quadrant;

// PathWrap's method for ellipsoids (ignored by the other shapes); hybrid is OpenSim's default
typedef enum mbs_wrap_method {
  MBS_WRAP_HYBRID = 0,
  MBS_WRAP_MIDPOINT,
  MBS_WRAP_AXIAL,
  MBS_WRAP_METHOD_COUNT
} mbs_wrap_method;

// A wrap object's shape and settings, in its own frame (lengths in metres).
typedef struct mbs_wrap_object {
  mbs_wrap_shape shape;
  const char* name;           // for messages (not owned; may be NULL)
  double radius;              // sphere, cylinder
  double length;              // cylinder: along z, centred on the origin (INFINITY: unbounded)
  double dimensions[3];       // ellipsoid: semi-axes along x, y, z
  double inner_radius;        // torus: radius of the tube
  double outer_radius;        // torus: radius of the tube's centre circle (> inner_radius)
  mbs_wrap_quadrant quadrant;
  mbs_wrap_method method;     // ellipsoid
} mbs_wrap_object;

// OpenSim's WrapAction for one segment
typedef enum mbs_wrap_action {
  MBS_WRAP_NONE = 0,          // noWrap: the segment stays straight
  MBS_WRAP_INSIDE,            // insideRadius: a path point lies inside the object; no wrap
  MBS_WRAP_WRAPPED,           // wrapped: the segment wraps; among several candidate segments
                              // of a path OpenSim keeps the one lengthening the path least
  MBS_WRAP_MANDATORY          // mandatoryWrap: the straight segment passes through the object,
                              // so this segment must wrap (as OpenSim, a sphere without
                              // quadrant and a torus report "wrapped" even then)
} mbs_wrap_action;

#define MBS_WRAP_PATH_POINTS 17

typedef struct mbs_wrap_result {
  mbs_wrap_action action;
  double r1[3], r2[3];        // tangent points (when wrapped)
  double length;              // length on the surface from r1 to r2 (0 when not wrapped)
  int npath;                  // MBS_WRAP_PATH_POINTS when wrapped, else 0
  double path[MBS_WRAP_PATH_POINTS][3];  // the surface path, path[0] = r1 ... r2, for drawing
  double c1[3];               // ellipsoid: the surface point fixing the wrapping plane; other
                              // shapes: the surface path's midpoint
  double axis[3];             // unit vector about which the path turns positively from r1 to
                              // r2 (normal of its plane; the cylinder's axis, signed)
} mbs_wrap_result;

// What a wrap remembers between evaluations (OpenSim's previous wrap), kept by the caller.
typedef struct mbs_wrap_memory {
  int valid;                  // 0: nothing remembered
  double r1[3], r2[3], c1[3], axis[3];
} mbs_wrap_memory;

// Check an object's numbers (positive radii and semi-axes, length >= 0, outer radius above
// inner radius, known shape, quadrant and method); MBS_ERR_PARAMETER naming the object.
int mbs_wrap_object_check(const mbs_wrap_object* obj, mbs_error* err);

// Wrap the segment p1-p2 (in the object's frame) over the object. `prev` may be NULL. Returns
// MBS_OK with out->action telling whether it wrapped; MBS_ERR_ARGUMENT for a NULL or non-finite
// point, MBS_ERR_PARAMETER for a bad object, MBS_ERR_NAN for a non-finite result. Pure: no
// allocation, nothing written but *out (and *err on failure).
int mbs_wrap_segment(mbs_wrap_result* out, const mbs_wrap_object* obj, const double p1[3],
                     const double p2[3], const mbs_wrap_memory* prev, mbs_error* err);

// |p1 - r1| + length + |r2 - p2| when wrapped, else |p1 - p2|
double mbs_wrap_path_length(const mbs_wrap_result* res, const double p1[3], const double p2[3]);

// Keep the wrap the caller chose for its segment (PathWrap::setPreviousWrap); a result that did
// not wrap, or NULL, forgets (resetPreviousWrap).
void mbs_wrap_remember(mbs_wrap_memory* mem, const mbs_wrap_result* res);

// OpenSim's spellings: quadrant "all"/"ALL"/"All", "Unassigned" (= all), "x", "+x", "X", "+X",
// "-x", "-X" and likewise y, z; method "hybrid"/"Hybrid"/"HYBRID", midpoint, axial in the same
// three cases, "Unassigned" (= hybrid). Surrounding blanks are ignored. MBS_ERR_PARSE if unknown.
int mbs_wrap_quadrant_parse(mbs_wrap_quadrant* q, const char* text, mbs_error* err);
int mbs_wrap_method_parse(mbs_wrap_method* m, const char* text, mbs_error* err);
// "all", "+x", "-x", "+y", "-y", "+z", "-z"; "hybrid", "midpoint", "axial"; "sphere", ...
const char* mbs_wrap_quadrant_name(mbs_wrap_quadrant q);
const char* mbs_wrap_method_name(mbs_wrap_method m);
const char* mbs_wrap_shape_name(mbs_wrap_shape s);

#ifdef __cplusplus
}
#endif

#endif  // MBS_WRAP_H_
