// Force elements that pull along a geometry path (include/mbs/path.h), as OpenSim's
// PathActuator, PathSpring and Ligament do. Each pulls with a tension T along its path: the
// path's points are pulled toward each other (a moving point also gives its generalized force),
// over its wraps, exactly as a muscle's tendon force (force.h) is applied. With the path's
// length L and lengthening speed L' (m/s, > 0 lengthening):
//
//   PathActuator (OpenSim PathActuator::computeActuation):
//     T = optimal_force * c,
//     c the control (a State variable, mbs_state_controls, starting at default_control) or,
//     with control_function >= 0, that function of time. mbs_get_actuator_tension reports T.
//   PathSpring (OpenSim PathSpring::getTension):
//     T = stiffness * stretch * (1 + dissipation * L'),   stretch = max(0, L - resting_length);
//     not clamped: a fast enough shortening (dissipation * L' < -1) pushes, as in OpenSim.
//     Its potential energy stiffness * stretch^2 / 2 is counted by mbs_calc_potential_energy
//     (OpenSim's PathSpring reports none).
//   Ligament (OpenSim Ligament::computeForce):
//     T = pcsa_force * curve(L / resting_length) when L > resting_length, else 0 (slack),
//     curve a System function (mbs_system_add_function) of the normalized length; OpenSim files
//     give a SimmSpline, and mbs_system_add_ligament_default_curve adds OpenSim's default one.
//
// Numbers given here are defaults: a State holds the values in use as instance parameters
// "/forceset/<name>/<property>" (optimal_force; resting_length, stiffness, dissipation;
// resting_length, pcsa_force), checked at Instance with a message naming the force
// (optimal_force > 0; stiffness, dissipation, pcsa_force >= 0; a spring's resting_length >= 0,
// a ligament's > 0, as it divides by it). Units SI: N, m, N/m, s/m.
//
// Every add function returns the element's index (>= 0) or a negative status with the message
// in mbs_system_error, naming the force.
#ifndef MBS_PATH_FORCE_H_
#define MBS_PATH_FORCE_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

// OpenSim PathActuator
typedef struct mbs_path_actuator_spec {
  const char* name;            // the force's name; NULL: the path's owner
  int path;                    // from mbs_system_add_path
  double optimal_force;        // N
  double default_control;
  int control_function;        // -1: use the State's control
} mbs_path_actuator_spec;
int mbs_system_add_path_actuator(mbs_system* sys, const mbs_path_actuator_spec* spec);

// OpenSim PathSpring
typedef struct mbs_path_spring_spec {
  const char* name;            // the force's name; NULL: the path's owner
  int path;
  double resting_length;       // m
  double stiffness;            // N/m
  double dissipation;          // s/m
} mbs_path_spring_spec;
int mbs_system_add_path_spring(mbs_system* sys, const mbs_path_spring_spec* spec);

// OpenSim Ligament
typedef struct mbs_ligament_spec {
  const char* name;            // the force's name; NULL: the path's owner
  int path;
  double resting_length;       // m
  double pcsa_force;           // N: the force at curve value 1
  int force_length_curve;      // the System's function of length / resting_length
} mbs_ligament_spec;
int mbs_system_add_ligament(mbs_system* sys, const mbs_ligament_spec* spec);

// OpenSim's default ligament force-length curve (Ligament::constructProperties): a SimmSpline
// through (-5, 0), (0.998, 0), (0.999, 0), (1, 0), (1.1, 0.035), (1.2, 0.12), (1.3, 0.26),
// (1.4, 0.55), (1.5, 1.17), (1.6, 2), (1.601, 2), (1.602, 2), (5, 2), named `name` (NULL:
// "function<index>"; its knots are parameters "/functions/<name>/x" and "/y"). Returns the
// function's index or a negative status.
int mbs_system_add_ligament_default_curve(mbs_system* sys, const char* name);

// What a path actuator, path spring or ligament does now [Dynamics]
typedef struct mbs_path_force_report {
  double tension;              // N, along the path (> 0 pulls its points together)
  double length;               // m
  double lengthening_speed;    // m/s
  double stretch;              // m: max(0, length - resting_length); 0 for a path actuator
  double control;              // a path actuator's control in use; 0 for the others
  double elastic_tension;      // N: a spring's stiffness * stretch, a ligament's tension
  double dissipative_tension;  // N: a spring's stiffness * stretch * dissipation * speed
} mbs_path_force_report;
int mbs_get_path_force_report(const mbs_system* sys, mbs_state* st, int force,
                              mbs_path_force_report* out);
// the path of a path actuator, path spring or ligament; -1 for other forces
int mbs_path_force_path(const mbs_system* sys, int force);

#ifdef __cplusplus
}
#endif

#endif  // MBS_PATH_FORCE_H_
