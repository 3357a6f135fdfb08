// Force elements beyond the basic ones of system.h, as OpenSim models use them: bushings,
// coordinate limit forces, spring generalized forces, prescribed external forces, and
// actuators (coordinate, point, torque) driven by a control.
//
// Every add function returns the element's index (>= 0) or a negative status with the message
// in mbs_system_error. Numbers given here are defaults: a State holds the values in use as
// instance parameters under "/forceset/<name>/<field>" (rename with mbs_system_set_force_name).
// Units are SI with radians; convert OpenSim's per-degree values at the file's edge.
#ifndef MBS_FORCE_H_
#define MBS_FORCE_H_

#include "mbs/muscle.h"
#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

// OpenSim BushingForce: a linear spring-damper between frame 1 (fixed on body 1) and frame 2
// (fixed on body 2). The deflection is frame 2 relative to frame 1: body-fixed X-Y-Z angles
// (theta) and the translation of frame 2's origin from frame 1's origin expressed in frame 1
// (d). Generalized forces -K theta - D theta' (rotational) and -K d - D d' (translational) act
// on those six deflection coordinates and are applied to the bodies as the equal and opposite
// spatial forces that do the same work.
typedef struct mbs_bushing_spec {
  int body1, body2;
  mbs_frame_spec frame1, frame2;     // in body 1 and body 2
  double rotational_stiffness[3];    // N m / rad about x, y, z
  double translational_stiffness[3]; // N / m
  double rotational_damping[3];      // N m s / rad
  double translational_damping[3];   // N s / m
} mbs_bushing_spec;
int mbs_system_add_bushing(mbs_system* sys, const mbs_bushing_spec* spec);

// OpenSim CoordinateLimitForce on coordinate `axis` of body's mobilizer (q' = u): a stiff
// spring beyond each limit, blended in smoothly over `transition` (rad or m) past the limit,
// plus damping that is blended in the same way:
//   f = -K_upper (q - q_upper) beyond q_upper, +K_lower (q_lower - q) below q_lower, and
//   -damping u, each scaled by the same smooth step over the transition.
typedef struct mbs_coordinate_limit_spec {
  int body, axis;
  double upper_stiffness, upper_limit;   // N m / rad (or N / m), rad (or m)
  double lower_stiffness, lower_limit;
  double damping;                        // N m s / rad (or N s / m)
  double transition;                     // rad (or m), > 0
} mbs_coordinate_limit_spec;
int mbs_system_add_coordinate_limit(mbs_system* sys, const mbs_coordinate_limit_spec* spec);

// OpenSim SpringGeneralizedForce on coordinate `axis` of body's mobilizer (q' = u):
// f = -stiffness (q - rest_length) - viscosity u.
int mbs_system_add_spring_generalized_force(mbs_system* sys, int body, int axis,
                                            double stiffness, double rest_length,
                                            double viscosity);

// OpenSim ExternalForce (e.g. ground reaction forces from a .mot file): force, point of
// application and torque, each a vector of three functions of time (indices from
// mbs_system_add_function; -1: that vector is not applied — a force with no point acts at the
// body's origin). force and torque are expressed in `force_frame_body`'s frame, the point in
// `point_frame_body`'s frame (0 = Ground).
typedef struct mbs_external_force_spec {
  int body;                    // applied to
  int force_frame_body;        // force and torque expressed in this body's frame
  int point_frame_body;        // point expressed in this body's frame
  int force_functions[3];      // N
  int point_functions[3];      // m
  int torque_functions[3];     // N m
} mbs_external_force_spec;
int mbs_system_add_external_force(mbs_system* sys, const mbs_external_force_spec* spec);
// An external force's force, point of application and torque at the State's time, in Ground,
// and the body it is applied to (any output may be NULL) [Position]. A force without a point
// acts at the body's origin; missing vectors are zero.
int mbs_get_external_force(const mbs_system* sys, mbs_state* st, int force, int* body,
                           double force_G[3], double point_G[3], double torque_G[3]);

// Actuators. Each has a control c (a State variable, mbs_state_controls; starts at
// `default_control`) or, with control_function >= 0, c = f(t). The tension is
// optimal_force * c.
//
// CoordinateActuator: generalized force optimal_force * c on coordinate `axis` of body.
int mbs_system_add_coordinate_actuator(mbs_system* sys, int body, int axis, double optimal_force,
                                       double default_control, int control_function);
// OpenSim's ActivationCoordinateActuator: the generalized force optimal_force * a on a
// coordinate, a an auxiliary state (default_activation) with first-order dynamics a' = (e - a)
// / time_constant toward the excitation e (the control, or control_function of time if >= 0).
// Parameters "optimal_force" and "activation_time_constant". Returns the force index.
int mbs_system_add_activation_coordinate_actuator(mbs_system* sys, int body, int axis,
                                                  double optimal_force, double time_constant,
                                                  double default_activation,
                                                  double default_control, int control_function);
// PointActuator: force optimal_force * c along `direction` at `point` on body; direction in
// Ground if force_is_global else in the body; point in Ground if point_is_global else in the
// body (a global point is where the force acts at each instant).
typedef struct mbs_point_actuator_spec {
  int body;
  double point[3];
  int point_is_global;
  double direction[3];         // normalized by the system
  int force_is_global;
  double optimal_force;
  double default_control;
  int control_function;        // -1: use the State's control
} mbs_point_actuator_spec;
int mbs_system_add_point_actuator(mbs_system* sys, const mbs_point_actuator_spec* spec);
// TorqueActuator: torque optimal_force * c about `axis` on body A and its opposite on body B;
// axis in Ground if torque_is_global else in body A.
typedef struct mbs_torque_actuator_spec {
  int body_a, body_b;
  double axis[3];              // normalized by the system
  int torque_is_global;
  double optimal_force;
  double default_control;
  int control_function;        // -1: use the State's control
} mbs_torque_actuator_spec;
int mbs_system_add_torque_actuator(mbs_system* sys, const mbs_torque_actuator_spec* spec);

// The current tension (optimal_force * control) of an actuator [Dynamics]; 0 for other forces.
int mbs_get_actuator_tension(const mbs_system* sys, mbs_state* st, int force, double* tension);

// An actuator's speed and power as OpenSim's Actuation analysis reports them [Dynamics]:
// coordinate actuators (and activation coordinate actuators) the coordinate's speed, power
// tension x speed; point actuators the magnitude of the velocity of the point where the force
// acts (OpenSim 4's PointActuator speed), power tension x speed; torque actuators the angular
// velocity of body A relative to body B about the torque's axis, power tension x speed; path
// actuators and muscles the path's lengthening speed, power -tension x speed (a muscle's
// muscle_power). Either output may be NULL; MBS_ERR_ARGUMENT for forces that are not actuators.
int mbs_get_actuator_speed(const mbs_system* sys, mbs_state* st, int force, double* speed,
                           double* power);

// A muscle (include/mbs/muscle.h) pulling along geometry path `path` (include/mbs/path.h) with
// its tendon force. Its excitation is a control (default_excitation) or, when
// excitation_function >= 0, that function of time; activation (default_activation) and the
// fiber state are auxiliary states (none for a rigid tendon; the fiber state defaults to the
// equilibrium at the muscle's rest length; mbs_equilibrate_muscles sets it for a pose).
// Instance parameters "/forceset/<name>/": max_isometric_force, optimal_fiber_length,
// tendon_slack_length, pennation_angle_at_optimal, max_contraction_velocity,
// activation_time_constant, deactivation_time_constant, fiber_damping, minimum_activation; the
// curves' constants are p's. Returns the force index.
int mbs_system_add_muscle(mbs_system* sys, const mbs_muscle_params* p, int path,
                          double default_activation, double default_excitation,
                          int excitation_function);

// A muscle's state and forces [Dynamics]
typedef struct mbs_muscle_report {
  double tendon_force;                  // N
  double fiber_length, fiber_velocity;  // m, m/s
  double normalized_fiber_length, normalized_fiber_velocity;
  double activation, excitation;
  double pennation_angle;               // rad
  double active_fiber_force, passive_fiber_force;  // N
  double muscle_power;                  // W
  double path_length, path_speed;       // m, m/s
  double tendon_length;                 // m
  double damping_fiber_force;           // N (damped models)
  int clamped;                          // the fiber at its minimum length and shortening: its
                                        // velocity and forces are zero (OpenSim)
} mbs_muscle_report;
int mbs_get_muscle_report(const mbs_system* sys, mbs_state* st, int force,
                          mbs_muscle_report* out);
// Everything about a muscle now (mbs_muscle_output: pennation angular velocity, tendon
// velocity, fiber force along the tendon, ... besides the report's values): its model evaluated
// at the State's path length and speed, activation and fiber states, as Dynamics evaluates it
// [Dynamics]; an error names the muscle.
int mbs_get_muscle_output(const mbs_system* sys, mbs_state* st, int force,
                          mbs_muscle_output* out);
// the path of a muscle, or -1
int mbs_force_path(const mbs_system* sys, int force);
// Every muscle's fiber state set to its equilibrium at the State's pose, speeds and activation
// (OpenSim's equilibrateMuscles) [realizes to Velocity]; an error names the muscle.
int mbs_equilibrate_muscles(const mbs_system* sys, mbs_state* st);

#ifdef __cplusplus
}
#endif

#endif  // MBS_FORCE_H_
