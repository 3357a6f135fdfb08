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

// the platform's displacement profile in time, from 0 to 1 over its duration
typedef enum mbs_platform_profile {
  MBS_PLATFORM_SMOOTH_STEP = 0,  // 10 s^3 - 15 s^4 + 6 s^5: zero speed and acceleration at both
                                 // ends
  MBS_PLATFORM_COSINE = 1,       // (1 - cos(pi s)) / 2: zero speed at both ends
} mbs_platform_profile;

typedef struct mbs_human_params {
  double height;               // m (default 1.75)
  double mass;                 // kg (default 75)
  // contact between the foot spheres and the platform (Hunt-Crossley, both surfaces alike)
  double sphere_radius;        // m (default 0.02 H / 1.75)
  double contact_stiffness;    // Pa (default 1e7)
  double contact_dissipation;  // s/m (default 1)
  double static_friction, dynamic_friction, viscous_friction;  // (0.9, 0.8, 0)
  double transition_velocity;  // m/s (default 0.05)
  double platform_mass;        // kg (default 100; its motion is prescribed)
  double platform_duration;    // s over which the platform moves (default 0.5)
  mbs_platform_profile platform_profile;  // default smooth step
  int lock_joints;             // 1: the back and leg coordinates are locked (constraints
                               // /constraintset/<coordinate>_locked, whose value and enabled
                               // flag a State sets); default 0
} mbs_human_params;

void mbs_human_params_default(mbs_human_params* p);

// The model as an OpenSim document (malloc'ed; NULL when out of memory or the parameters are
// not positive). Bodies: platform, pelvis, torso (with head and arms), femur_r/l, tibia_r/l,
// calcn_r/l. Coordinates: platform_tx/ty/tz (prescribed: the unit step of
// mbs_human_platform_step over platform_duration, as a natural cubic spline through 41 samples,
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

// the unit step the platform follows: 0 before t = 0, 1 after t = duration, and the profile of
// s = t / duration between
double mbs_human_platform_step(double t, double duration, mbs_platform_profile profile);
const char* mbs_platform_profile_name(mbs_platform_profile profile);  // "smooth_step", "cosine"
int mbs_platform_profile_from_name(const char* name);                 // -1 when unknown

// Pieces of OpenSim 4 XML shared by the built-in model and the adapter that puts other models
// on the platform (malloc'ed text; NULL for invalid parameters or no memory):
// the body "platform" (platform_mass; centre 5 cm below its top surface)
char* mbs_platform_body_xml(const mbs_human_params* p);
// the CustomJoint "platform_joint" from ground, with the prescribed coordinates platform_tx/ty/tz
char* mbs_platform_joint_xml(const mbs_human_params* p);
// the ContactHalfSpace "platform_surface": the platform's top, outward normal +y
char* mbs_platform_surface_xml(void);
// five ContactSpheres <name>_<side> (names in mbs_foot_sphere_names: heel, met1, met5, hallux,
// midfoot), sphere k on body[k] at loc[k] in that body's frame
extern const char* const mbs_foot_sphere_names[5];
char* mbs_foot_spheres_xml(const char* side, const char* const body[5], const double loc[5][3],
                           double radius);
// the HuntCrossleyForce "foot_<side>" between platform_surface and that foot's five spheres
char* mbs_foot_contact_xml(const mbs_human_params* p, const char* side);

#endif  // MBS_STUDIES_HUMAN_MODEL_H_
