// Quiet standing on the perturbation platform, for a model made by mbs_human_model_osim with
// lock_joints = 1 (or any model with the same coordinate and actuator names).
//
// For a knee flexion θ the posture is symmetric with the pelvis and trunk upright (or leaning
// forward by λ = trunk_lean: pelvis tilt −λ, the lumbar joint straight): knee angle −θ, hip
// flexion h, ankle angle θ − h + λ so that the feet lie flat, and h chosen so that the
// centre of mass is `com_ahead` in front of the ankle joints (by default over the middle of
// the base of support) (the talus's origin when the model
// has a talus, else the foot body's origin), over the base of support. The
// body is lowered onto the platform and, with every back and leg joint held, brought to static
// equilibrium on its spheres: Newton's method on the pelvis's height and tilt until the contact's
// vertical force and pitching moment balance gravity (optionally after a simulated settling
// from t = −settle_time). The speeds are zero and the joint torques that hold the posture come
// from inverse dynamics (generalized forces at zero acceleration) into the actuators' controls.
//
// The joint modes of the perturbation (the OpenSim paper, §5): free — the locks are disabled and
// the holding torques act; locked — the back and leg joints stay locked; feedback — free, with
// delayed PD feedback about quiet standing added to the holding torques (below); and muscles —
// free, the model's muscles holding the posture and driven by the same feedback (below).
#ifndef MBS_STUDIES_POSTURE_H_
#define MBS_STUDIES_POSTURE_H_

#include <math.h>

#include "mbs/osim.h"
#include "mbs/simulate.h"

#define MBS_POSTURE_REQUIRED_JOINTS 13  // see mbs_posture_joint_names
#define MBS_POSTURE_MAX_JOINTS 18
// where the centre of mass stands by default, as a fraction of the base of support from the heel:
// the centre of pressure of quiet standing lies about 4-5 cm ahead of the ankles (Winter, "Human
// balance and posture control during standing and walking", Gait & Posture 3, 1995), about a
// third of the way from the heel to the toes
#define MBS_POSTURE_COM_FRACTION 0.35

typedef enum mbs_joint_mode {
  MBS_JOINTS_FREE = 0,
  MBS_JOINTS_LOCKED = 1,
  MBS_JOINTS_FEEDBACK = 2,
  MBS_JOINTS_MUSCLES = 3,
} mbs_joint_mode;

// The muscles mode (a model with muscles, read with mbs_posture_add_feedback): the muscles hold
// the posture and the same feedback drives them. At quiet standing their activations come from
// static optimization: activations a in [minimum_activation, 1] and reserve torques rho_j at
// the held joints minimizing sum a^2 + sum (rho_j / MBS_POSTURE_RESERVE)^2 while the muscles'
// tendon forces (fibers in equilibrium) and the reserves hold the posture, as OpenSim's
// StaticOptimization with reserve actuators of optimal force 1 N m does; the excitations equal
// the activations and the reserves go to the joints' torque actuators. The feedback is the
// feedback mode's (below), in controllers "<coordinate>_muscles" (kp, kd, delay, window, scale,
// kd_scale, reference, coefficients, gains as instance parameters, defaults those of the
// feedback mode), with three differences:
//  - each controller's effort (a joint torque) drives excitations: an effort e > 0 at joint k
//    adds e x+ to the excitations, e < 0 adds |e| x-, with x+- >= 0 the increments that change
//    the muscles' torques sum_m A_jm x_m by +-1 N m at joint k and by nothing at the other held
//    joints (least squares over the increments, of smallest norm; A_jm = R_jm dF_m/da_m, R the
//    moment arms, F_m the tendon force in equilibrium): an effort recruits the muscles that pull
//    its way, since a muscle at its minimum activation cannot relax further. Quiet standing sets
//    them as the controllers' output gains "/controllerset/<coordinate>_muscles/gains" (output 0
//    the joint's torque actuator, used only where no muscle crosses the joint; then two per
//    muscle, for e > 0 and e < 0);
//  - no window (it stands for the activation dynamics the muscles now have) and no intrinsic
//    controllers (the muscles' own stiffness and damping act);
//  - the feet's joints (subtalar and toes) have no feedback (kp = kd = 0): they are held by their
//    muscles' standing activations, passive forces and the contact. Subtalar feedback through
//    the muscles unsettles quiet standing: on gait2392 with the feedback mode's kd the toes rock
//    by 80 mrad within 1 s of unperturbed standing, against 3 mrad without
//    (docs/posture_study.md).
// In the other modes the muscles stay at rest: excitation 0, activation at its minimum, their
// passive forces acting (the holding torques include them).
#define MBS_POSTURE_RESERVE 1.0  // N m

// Balance by feedback (mode feedback): the holding torques act as in the free mode, and delayed
// feedback about quiet standing is added through the joints' torque actuators (controllers
// added by mbs_posture_add_feedback; their numbers are instance parameters
// "/controllerset/<controller>/<kp|kd|delay|window>", which a study may vary, e.g.
// "/controllerset/ankle_angle_*_feedback/delay").
//
// The ankles balance the body as the standing-balance literature models it: one inverted
// pendulum about the ankles, its sway sensed with a neural delay (controller
// "<ankle>_feedback"):
//   tau(t) = G (kp (theta_standing - theta(t - delay)) - kd T theta'(t - delay)),
// theta the body's sway, the angle from the vertical of the line from the mean ankle position to
// the centre of mass in the plane of gravity and the walking direction, linearized about quiet
// standing as a combination of every coordinate (its coefficients set by quiet standing).
// G = m g d is the gravitational stiffness of the body above the feet about the ankles (m its
// mass, d the centre of mass's distance from the ankle) and T = sqrt(I / G) its time scale (I its
// moment of inertia about the ankle), each halved for one of two legs, so that kp and kd are
// dimensionless. The sway is low-passed by a moving mean over `window`, which stands for the
// muscles' activation dynamics; the ankle muscles' intrinsic stiffness and damping act without
// delay on the ankle's own angle (controller "<ankle>_intrinsic", kp and kd normalized by the
// same G and T). Every default is the identified model of standing balance of Table 1 of
// PMC5664365 (J 66 kg m^2, m 75 kg, h 0.83 m, g 9.81 m/s^2: G = m g h, T = sqrt(J / G)):
// K_P 943.9 N m/rad, K_D 313.5 N m s/rad, delay 0.097 s, intrinsic K 40.5 N m/rad and B 68.8 N
// m s/rad, activation dynamics of natural frequency 16.8 rad/s and relative damping 0.99 (the
// window has the same low-frequency lag, 2 beta / omega_0, as the moving mean's w / 2).
//
// The other held joints (back, hips, knees, subtalar and toe joints) are held stiff about their
// standing angles, as the single pendulum takes the body above the ankles to be rigid
// (controller "<coordinate>_feedback", no delay by default):
//   tau_j = G_j (kp (q_j,standing - q_j(t - delay)) - kd T_j q_j'(t - delay)),
// with G_j and T_j the gravitational stiffness and time scale of the part of the body the joint
// carries in standing (for a joint between the pelvis and a foot, the body without that joint's
// distal side, shared by the two legs; for the back and toes, their distal side), kp 10 and kd 1:
// a choice, not an identified value; with a delay at these joints, per-joint feedback does not
// hold the multi-segment body (docs/posture_study.md).
// Quiet standing sets every controller's "scale" (G), "kd_scale" (T), "reference" and the
// sway's "coefficients"; the scales are 0 (no feedback) in the free and locked modes.
#define MBS_POSTURE_SIP_G (75 * 9.81 * 0.83)             // N m/rad
#define MBS_POSTURE_SIP_T sqrt(66 / MBS_POSTURE_SIP_G)  // s
#define MBS_POSTURE_SWAY_KP (943.9 / MBS_POSTURE_SIP_G)
#define MBS_POSTURE_SWAY_KD (313.5 / (MBS_POSTURE_SIP_G * MBS_POSTURE_SIP_T))
#define MBS_POSTURE_SWAY_DELAY 0.097                 // s
#define MBS_POSTURE_SWAY_WINDOW (4 * 0.99 / 16.8)  // s
#define MBS_POSTURE_INTRINSIC_K (40.5 / MBS_POSTURE_SIP_G)
#define MBS_POSTURE_INTRINSIC_B (68.8 / (MBS_POSTURE_SIP_G * MBS_POSTURE_SIP_T))
#define MBS_POSTURE_JOINT_KP 10.0
#define MBS_POSTURE_JOINT_KD 1.0

typedef struct mbs_posture_options {
  double knee_flexion;   // rad, >= 0
  double trunk_lean;     // rad; the pelvis and trunk lean forward by this (default 0: upright)
  double com_ahead;      // m; the centre of mass's horizontal distance ahead of the ankles
                         // (default 0: MBS_POSTURE_COM_FRACTION of the way from the rearmost to
                         // the foremost contact-sphere centre of the feet)
  double settle_time;    // s of simulated settling before the static solution (default 0)
  double accuracy;       // of the settling simulation (default 1e-5)
  mbs_joint_mode mode;
} mbs_posture_options;

void mbs_posture_options_default(mbs_posture_options* o);

typedef struct mbs_posture_result {
  double hip_flexion, ankle_angle, knee_angle;  // rad
  double com_ahead;          // m, reached (before settling)
  double pelvis_height;      // m, after settling (pelvis origin, the mid-hip point)
  double settle_speed;       // largest speed left at the end of settling (zeroed after)
  double residual;           // largest generalized force on the pelvis coordinates needed at
                             // zero acceleration: what the contact does not balance
  double torque[MBS_POSTURE_MAX_JOINTS];  // holding torques, in the order of
                                          // mbs_posture_joint_names (0 for absent ones)
  double stiffness[MBS_POSTURE_MAX_JOINTS];  // G_j, N m/rad, of the joints with feedback
                                             // controllers (0 for others)
  double time_scale[MBS_POSTURE_MAX_JOINTS];  // T_j, s (0 for others)
  // the muscles mode: the reserve torques left to the joints' actuators (N m), and the root
  // mean square and largest of the muscles' standing activations
  double reserve[MBS_POSTURE_MAX_JOINTS];
  double activation_rms, activation_max;
} mbs_posture_result;

// The feedback controllers, one per held joint coordinate the model has with an actuator
// "<coordinate>_torque": an extension of the model's reading (mbs_osim_options.extend, user
// unused), so that a model read with it can stand in every mode.
int mbs_posture_add_feedback(mbs_osim_model* m, struct mbs_system* sys, void* user,
                             mbs_error* err);
// names of the held (and lockable) joint coordinates, NULL-terminated: the first
// MBS_POSTURE_REQUIRED_JOINTS (back, hips, knees, ankles) every model must have; the others
// (subtalar and toe joints) are held when present
extern const char* const mbs_posture_joint_names[];


// The platform's displacement d (x anterior, y up, z to the subject's right; m) of a posture
// study's magnitude (m) and direction (deg: 0 anterior, 90 right, 180 posterior): the scales of
// its functions platform_tx, _ty, _tz
void mbs_posture_displacement(double magnitude, double direction_deg, double d[3]);

// The subject's bodies for mbs_calc_center_of_mass_subset: nbody flags with the platform (the
// apparatus) set; NULL when out of memory. Free with free().
unsigned char* mbs_posture_subject_skip(const mbs_system* sys);

// Put st (a State of m's system, its parameters already set: platform, contact, masses) into
// quiet standing at time 0 in the given joint mode. The platform's displacement scales are
// kept but set to zero while settling.
int mbs_posture_quiet_standing(const mbs_osim_model* m, mbs_state* st,
                               const mbs_posture_options* o, mbs_posture_result* r,
                               mbs_error* err);

// The fall as an event: the pelvis (q[qindex], its height: coordinate pelvis_ty) falling below
// `level`; the handler records the first fall's time in `time` (set it to NaN before) and ends
// the simulation. The event points at f, which must outlive its use.
typedef struct mbs_posture_fall {
  int qindex;
  double level;
  double time;
} mbs_posture_fall;
mbs_event mbs_posture_fall_event(mbs_posture_fall* f);

// Time to fall: simulate from the State's time to `duration` and stop when the pelvis (its
// origin, the mid-hip point) falls below `fall_fraction` of its height at the start; T is that
// time, or `duration` when the model does not fall (the paper's T, capped by the simulation).
// The stability index is 1 - exp(-T^2).
int mbs_posture_time_to_fall(const mbs_osim_model* m, mbs_state* st, double duration,
                             double fall_fraction, double accuracy, double* T, mbs_error* err);

#endif  // MBS_STUDIES_POSTURE_H_
