// Mobilizer types: the joints that connect a body B to its parent P in the tree.
//
// A mobilizer connects a frame F fixed on the parent (X_PF) to a frame M fixed on the body
// (X_BM); q = 0 (identity quaternion) puts M on F. It grants 0..6 degrees of freedom with nq
// generalized coordinates q and nu generalized speeds u, q' = N(q) u (Simbody Theory Manual §5).
// Unless stated, u = q' and translations are measured in F.
#ifndef MBS_MOBILIZER_H_
#define MBS_MOBILIZER_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_mobilizer_type {
  MBS_MOB_WELD = 0,        // 0 dof: M fixed on F
  MBS_MOB_PIN,             // q: angle about the common z axis
  MBS_MOB_SLIDER,          // q: translation along the common x axis
  MBS_MOB_UNIVERSAL,       // q0 about x, then q1 about the new y
  MBS_MOB_CYLINDER,        // q0 angle about z, q1 translation along z
  MBS_MOB_PLANAR,          // q = (angle about z, x, y) (OpenSim PlanarJoint order)
  MBS_MOB_SCREW,           // q angle about z with translation pitch*q along z
  MBS_MOB_TRANSLATION,     // q = p_FM (x, y, z) in F
  MBS_MOB_GIMBAL,          // q = body-fixed X-Y-Z angles, u = q'
  MBS_MOB_BALL,            // q = quaternion (4), u = angular velocity of M in F, expressed in F
  MBS_MOB_BALL_XYZ,        // q = body-fixed X-Y-Z angles (OpenSim BallJoint), u as MBS_MOB_BALL
  MBS_MOB_FREE,            // q = (quaternion, p_FM), u = (w_FM, v_FM), both in F
  MBS_MOB_FREE_XYZ,        // q = (X-Y-Z angles, p_FM) (OpenSim FreeJoint order), u as MBS_MOB_FREE
  MBS_MOB_ELLIPSOID,       // q = quaternion; M's origin on the ellipsoid (a, b, c) of F where
                           // its normal is M's z axis: p_FM = (a n_x, b n_y, c n_z), n = Mz in F
  MBS_MOB_ELLIPSOID_XYZ,   // as MBS_MOB_ELLIPSOID with X-Y-Z angles (OpenSim EllipsoidJoint)
  MBS_MOB_FUNCTION,        // up to 6 coordinates drive 3 rotation and 3 translation axes
                           // through functions (OpenSim CustomJoint); u = q'
  MBS_MOB_COUNT
} mbs_mobilizer_type;

// name of a mobilizer type ("pin", "ball_xyz", ...), NULL if out of range
const char* mbs_mobilizer_type_name(mbs_mobilizer_type type);
// mobilizer type from its name; -1 if unknown
int mbs_mobilizer_type_from_name(const char* name);
// generalized coordinates and speeds of a type; for MBS_MOB_FUNCTION these are per body and
// this returns -1
int mbs_mobilizer_type_nq(mbs_mobilizer_type type);
int mbs_mobilizer_type_nu(mbs_mobilizer_type type);

// One spatial axis of a function-based mobilizer: the rotation about (or translation along) a
// unit axis by f(q_coord). coord < 0 means f takes no argument (its value at 0 is used).
typedef struct mbs_spatial_axis {
  double axis[3];   // direction, normalized by the system
  int coord;        // index among this mobilizer's coordinates, or -1
  int function;     // index of a function added with mbs_system_add_function
} mbs_spatial_axis;

// Function-based mobilizer (OpenSim CustomJoint, Simbody FunctionBased):
// R_FM = R(a0, f0) R(a1, f1) R(a2, f2) (each axis in the frame after the previous rotations),
// p_FM = f3 t3 + f4 t4 + f5 t5 with the translation axes t in F.
typedef struct mbs_function_mobilizer {
  int ncoord;                  // 1..6 coordinates
  mbs_spatial_axis rotation[3];
  mbs_spatial_axis translation[3];
} mbs_function_mobilizer;

#ifdef __cplusplus
}
#endif

#endif  // MBS_MOBILIZER_H_
