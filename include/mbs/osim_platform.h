// The perturbation platform of the posture study (the OpenSim paper, §5) as pieces of OpenSim 4
// XML: the platform body, its joint with three prescribed translations, its top surface, five
// Hunt-Crossley spheres under a foot and their contact force. Shared by mbstudy's own human
// (studies/human_model.h) and the adapter that puts other models on the platform
// (mbs/posture_adapt.h). Also the small text buffer both use to write OpenSim XML.
#ifndef MBS_IO_OSIM_PLATFORM_H_
#define MBS_IO_OSIM_PLATFORM_H_

#include <stddef.h>

// the platform's displacement profile in time, from 0 to 1 over its duration
typedef enum mbs_platform_profile {
  MBS_PLATFORM_SMOOTH_STEP = 0,  // 10 s^3 - 15 s^4 + 6 s^5: zero speed and acceleration at both
                                 // ends
  MBS_PLATFORM_COSINE = 1,       // (1 - cos(pi s)) / 2: zero speed at both ends
} mbs_platform_profile;

// the platform and the contact between the foot spheres and it (Hunt-Crossley, both surfaces
// alike)
typedef struct mbs_platform_params {
  double platform_mass;        // kg (default 100; its motion is prescribed)
  double platform_duration;    // s over which the platform moves (default 0.5)
  mbs_platform_profile platform_profile;  // default smooth step
  double sphere_radius;        // m (default 0: the builder's default)
  double contact_stiffness;    // Pa (default 1e7)
  double contact_dissipation;  // s/m (default 1)
  double static_friction, dynamic_friction, viscous_friction;  // (0.9, 0.8, 0)
  double transition_velocity;  // m/s (default 0.05)
} mbs_platform_params;

void mbs_platform_params_default(mbs_platform_params* p);

// the unit step the platform follows: 0 before t = 0, 1 after t = duration, and the profile of
// s = t / duration between
double mbs_platform_step(double t, double duration, mbs_platform_profile profile);
const char* mbs_platform_profile_name(mbs_platform_profile profile);  // "smooth_step", "cosine"
int mbs_platform_profile_from_name(const char* name);                 // -1 when unknown

// Pieces of OpenSim 4 XML (malloc'ed text; NULL for invalid parameters or no memory):
// the body "platform" (platform_mass; centre 5 cm below its top surface)
char* mbs_platform_body_xml(const mbs_platform_params* p);
// the CustomJoint "platform_joint" from ground, with the prescribed coordinates platform_tx/ty/tz
// (the unit step of mbs_platform_step over platform_duration, as a natural cubic spline through
// 41 samples, times a multiplier whose scale is the displacement along that axis, 0 by default)
char* mbs_platform_joint_xml(const mbs_platform_params* p);
// the ContactHalfSpace "platform_surface": the platform's top, outward normal +y
char* mbs_platform_surface_xml(void);
// five ContactSpheres <name>_<side> (names in mbs_foot_sphere_names: heel, met1, met5, hallux,
// midfoot), sphere k on body[k] at loc[k] in that body's frame
extern const char* const mbs_foot_sphere_names[5];
char* mbs_foot_spheres_xml(const char* side, const char* const body[5], const double loc[5][3],
                           double radius);
// the HuntCrossleyForce "foot_<side>" between platform_surface and that foot's five spheres
char* mbs_foot_contact_xml(const mbs_platform_params* p, const char* side);

// A growing text (start with {0}): mbs_text_put appends printf-style; after a failure (no
// memory) it does nothing and bad is set. mbs_text_done gives the text (the caller frees it) or,
// when something failed, frees it and gives NULL.
typedef struct mbs_text {
  char* s;
  size_t n, cap;
  int bad;
} mbs_text;
void mbs_text_put(mbs_text* b, const char* f, ...) __attribute__((format(printf, 2, 3)));
char* mbs_text_done(mbs_text* b);
// an OpenSim Body element: mass, centre of mass, inertia about it (xx yy zz xy xz yz)
void mbs_osim_put_body(mbs_text* b, const char* name, double m, const double c[3],
                       const double I[6]);
// a TransformAxis element of a SpatialTransform (function: its XML)
void mbs_osim_put_axis(mbs_text* b, const char* name, const char* coord, const char* axis,
                       const char* function);
// a CustomJoint's whole SpatialTransform: rotation1..3 then translation1..3 about or along
// axes[k] ("0 0 1"), each the identity of coordinate coords[k], or the constant 0 where
// coords[k] is ""
void mbs_osim_put_spatial_transform(mbs_text* b, const char* const coords[6],
                                    const char* const axes[6]);

#endif  // MBS_IO_OSIM_PLATFORM_H_
