// Putting an OpenSim 4 model on the perturbation platform of the posture study (the OpenSim
// paper, §5), as mbs_human_model_osim builds its own human: the platform body and its joint with
// three prescribed translations (mbs_platform_body_xml, mbs_platform_joint_xml), the platform's
// top (mbs_platform_surface_xml), five Hunt-Crossley spheres under each foot
// (mbs_foot_spheres_xml, mbs_foot_contact_xml), the held joint coordinates locked (a State sets
// each lock's value and enabled flag: /constraintset/<coordinate>_locked/...) and a coordinate
// actuator "<coordinate>_torque" of unit optimal force on each, and (by default) the muscles
// removed. The result is read by mbs_osim_parse and stood by mbs_posture_quiet_standing.
//
// Held coordinates: those the caller lists in the options, the required ones (the model must
// have them) and the optional ones (held when the model has them); the posture study passes
// studies/posture.h's mbs_posture_joint_names: lumbar_extension, lumbar_bending,
// lumbar_rotation, hip_flexion_r/l, hip_adduction_r/l, hip_rotation_r/l, knee_angle_r/l,
// ankle_angle_r/l (required), and subtalar_angle_r/l, mtp_angle_r/l.
//
// The spheres, in the foot body's frame, whose origin is taken as the back of the heel with x
// forward along the foot, y up and z to the right (as in OpenSim's gait models: calcn), so that
// lateral is +z on the right foot and -z on the left. With L the foot length, the foot's breadth
// w = (0.055 / 0.152) L (Drillis and Contini's breadth over length, as studies/human_model.c)
// and r the sphere radius, the spheres are those of mbs_human_model_osim measured from the heel
// (there the heel lies 0.25 L behind the ankle):
//   heel     x = r        z = 0            (touching the back of the heel)
//   met1     x = 0.75 L   z = -0.35 w      (medial)
//   met5     x = 0.70 L   z = +0.40 w      (lateral)
//   hallux   x = 0.95 L   z = -0.30 w      (medial; on the toes body when there is one)
//   midfoot  x = 0.35 L   z = +0.45 w      (lateral)
// each at y = sole + r, so that their lowest points lie on the sole; z is measured from the
// mtp joint centre's z (0 without a toes body) and mirrored for the left foot. The hallux sphere
// goes on the toes body at the same place, expressed in the toes frame with the mtp joint at
// zero (the toes frame from the mtp joint's parent and child offset frames).
//
// Estimates from the mtp joint (the joint whose child is the toes body; its centre c in the foot
// frame is the translation of its parent offset frame on the foot body):
//   foot_length = c.x / 0.72   the metatarsophalangeal joints lie at about 72 % of the foot's
//                              length from the heel (the first at 72-75 %, the fifth nearer
//                              65 %, the gait models' oblique mtp axis runs between them);
//                              gait2392: 0.1788 / 0.72 = 0.248 m
//   sole = c.y - 0.10 L        the metatarsal heads' centres are about a tenth of the foot's
//                              length (2.5 cm, bone and plantar pad) above the floor;
//                              gait2392: -0.002 - 0.0248 = -0.0268 m
// Without a toes body (or with toes NULL) the hallux sphere is on the foot body, and
// foot_length and sole must be given. The default sphere radius (contact.sphere_radius 0) is the
// built-in human's for its foot: 0.02 m × L / (0.152 × 1.75 m).
#ifndef MBS_IO_POSTURE_ADAPT_H_
#define MBS_IO_POSTURE_ADAPT_H_

#include <stddef.h>

#include "mbs/osim.h"
#include "mbs/osim_platform.h"

typedef struct mbs_posture_adapt_options {
  const char* feet[2];        // foot bodies carrying the spheres, right then left (default
                              // "calcn_r", "calcn_l")
  const char* toes[2];        // toe bodies (the hallux sphere goes there when present; default
                              // "toes_r", "toes_l"); NULL or absent: the hallux on the foot
  double foot_length;         // m; 0: estimated from the mtp joint (above)
  double sole;                // y of the sole in the foot body's frame; NAN: estimated
  int remove_muscles;         // remove muscles and path actuators (default 1)
  mbs_platform_params contact;  // sphere radius, contact parameters, platform mass, duration
                                // and profile (mbs_platform_params_default)
  // the held coordinates (above): nrequired names the model must have, then noptional held when
  // present (default none: the caller gives them)
  const char* const* held_required;
  int nrequired;
  const char* const* held_optional;
  int noptional;
  // options of reading the adapted model (e.g. its extension by a study's controllers); NULL:
  // none
  const mbs_osim_options* osim;
} mbs_posture_adapt_options;

void mbs_posture_adapt_options_default(mbs_posture_adapt_options* o);

// what the adapter did (optional output of mbs_posture_adapt_osim_info)
typedef struct mbs_posture_adapt_info {
  double foot_length[2];      // m, right and left (given or estimated)
  double sole[2];             // y of the sole in each foot body's frame
  double radius;              // m, of the spheres
  int hallux_on_toes[2];      // 1: the hallux sphere is on the toes body
  int nheld;                  // held coordinates (locked, with an actuator)
  int removed_forces;         // muscles and path actuators removed
  int kept_forces;            // other forces of the model, kept as they were
  int removed_controllers;    // controllers left without actuators, removed
} mbs_posture_adapt_info;

// Put an OpenSim 4 model (text of n bytes; path names it in messages) on the perturbation
// platform: a new document (malloc'ed, NUL-terminated) or NULL with err naming the file and
// what is wrong (not an OpenSim 4 model, no foot body 'calcn_r', a held coordinate missing, a
// body, joint, coordinate, contact geometry or force of the names added already present, ...).
// Muscles and path actuators are removed from the ForceSet (and their names from its groups and
// from controllers' actuator lists; a controller left with none is removed); every other element
// of the document is kept as it was.
char* mbs_posture_adapt_osim(const char* text, size_t n, const char* path,
                             const mbs_posture_adapt_options* o, mbs_error* err);
// the same, with what was done (info may be NULL)
char* mbs_posture_adapt_osim_info(const char* text, size_t n, const char* path,
                                  const mbs_posture_adapt_options* o,
                                  mbs_posture_adapt_info* info, mbs_error* err);

// read the file and adapt it: the new document (malloc'ed) or NULL with err
char* mbs_posture_adapt_file(const char* path, const mbs_posture_adapt_options* o,
                             mbs_error* err);
// read the file, adapt it and parse the result with mbs_osim_parse (path in messages; relative
// paths in the model, such as mesh files, resolve against the file's folder)
mbs_osim_model* mbs_posture_adapt_read(const char* path, const mbs_posture_adapt_options* o,
                                       mbs_error* err);

#endif  // MBS_IO_POSTURE_ADAPT_H_
