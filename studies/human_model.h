// mbstudy's own standing human without arms, for the posture-perturbation study: a model shaped
// like the standard gait model (free pelvis, three-rotation lumbar and hip joints, 1-dof knees
// whose tibia translates with flexion, pin ankles), sized from height and mass, standing on a
// platform whose three translations are prescribed functions of time, with five Hunt-Crossley
// spheres under each foot. The builder writes an OpenSim 4 document, read with mbs_osim_parse.
//
// Sources of the numbers (all scaled by height H and mass M):
// - segment mass fractions, centre-of-mass locations and radii of gyration: de Leva (1996),
//   "Adjustments to Zatsiorsky-Seluyanov's segment inertia parameters", J. Biomechanics 29,
//   1223-1230, Table 4, males (the arms' mass is carried by the torso, as in the gait model);
// - joint heights and foot length as fractions of stature: Drillis and Contini (1966), as
//   reproduced by Winter, Biomechanics and Motor Control of Human Movement (ankle 0.039 H,
//   knee 0.285 H, hip 0.530 H, shoulder 0.818 H, foot length 0.152 H, foot breadth 0.055 H,
//   hip width 0.191 H, shoulder width 0.259 H).
#ifndef MBS_STUDIES_HUMAN_MODEL_H_
#define MBS_STUDIES_HUMAN_MODEL_H_

#include "mbs/osim.h"
#include "mbs/osim_platform.h"
#include "mbs/status.h"

typedef struct mbs_human_params {
  double height;               // m (default 1.75)
  double mass;                 // kg (default 75)
  // the platform (mass, the duration and profile of its motion) and the contact between the
  // foot spheres and it (mbs_platform_params_default; a sphere radius of 0 means 0.02 H / 1.75)
  mbs_platform_params platform;
  int lock_joints;             // 1: the back and leg coordinates are locked (constraints
                               // /constraintset/<coordinate>_locked, whose value and enabled
                               // flag a State sets); default 0
} mbs_human_params;

void mbs_human_params_default(mbs_human_params* p);

// The model as an OpenSim document (malloc'ed; NULL when out of memory or the parameters are
// not positive). Bodies: platform, pelvis, torso (with head and arms), femur_r/l, tibia_r/l,
// calcn_r/l. Coordinates: platform_tx/ty/tz (prescribed: the unit step of
// mbs_platform_step over platform_duration, as a natural cubic spline through 41 samples,
// times a multiplier whose scale is the displacement along that axis, 0 by default; the scales
// are the study parameters /functions/platform_tx/prescribed/scale etc.); pelvis_tilt,
// pelvis_list, pelvis_rotation, pelvis_tx, pelvis_ty, pelvis_tz (free in Ground, as the gait
// model's CustomJoint); lumbar_extension, lumbar_bending, lumbar_rotation (three
// rotations, as the gait model's back joint); hip_flexion_r, hip_adduction_r, hip_rotation_r
// (three rotations, and _l); knee_angle_r (and _l; the
// tibia's translation follows flexion); ankle_angle_r (and _l). Coordinate actuators with
// unit optimal force on every joint coordinate of the legs and back hold the posture; forces
// "foot_r" and "foot_l" press the spheres (heel, medial and lateral metatarsal heads, hallux,
// lateral midfoot) against the platform's half-space.
char* mbs_human_model_osim(const mbs_human_params* p);

// The same model read (mbs_osim_parse; free with mbs_osim_free); NULL with `err` filled when the
// parameters give no model or the document cannot be read.
mbs_osim_model* mbs_human_model_build(const mbs_human_params* p, mbs_error* err);

#endif  // MBS_STUDIES_HUMAN_MODEL_H_
