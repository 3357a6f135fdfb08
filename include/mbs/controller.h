// Controllers: what sets the actuators' controls (muscle excitations, actuator controls) while
// a model runs.
//
// The control an actuator uses, its control in effect, is computed at Dynamics: its function of
// time where it has one (OpenSim's PrescribedController, or a controls file), else the State's
// control (mbs_state_controls: a study's or a caller's value, starting at the actuator's
// default); then every controller adds its output, as OpenSim's controllers add into the
// controls. mbs_get_controls gives the controls in effect.
//
// PD tracking with an optional neural delay (a controller of a coordinate):
//   e(t) = scale (kp (reference - q(t - delay)) - kd_scale kd u(t - delay))
// or, with a window w > 0, a low-pass form: q and u replaced by their means over
// [t - delay - w, t - delay] (q by Simpson's rule; u's mean is q's change over the window / w)
//   each output k adds  clamp(offset_k + gain_k e(t), lower_k, upper_k)  to control c_k,
// so a joint torque actuator gets gain 1/optimal_force, and muscles on either side of a joint
// get gains of either sign clamped to [0, 1] (an agonist pulls when the joint lags behind).
// Its numbers are instance parameters "/controllerset/<name>/kp", "kd" (N m/rad, N m s/rad for
// a gain and scales of 1), "reference" (rad or m), "delay" (s, >= 0), "scale" (a factor on kp
// and kd, >= 0, default 1: e.g. a joint's gravitational stiffness, so that kp and kd are
// normalized by it) and "kd_scale" (a further factor on kd, >= 0, default 1: e.g. a time scale
// of the joint's motion, making kd dimensionless) and "window" (s, >= 0, default 0): a study may
// vary them. The
// delayed coordinate is read from the State's history of accepted steps (cubic Hermite in q
// with its rate u between recorded samples, u linear; before the first sample, the values at
// the start), which the integrators record after every accepted step and which keeps at least
// four delays of past; every integrator keeps its steps no longer than the shortest delay.
//
// The outputs' gains are instance parameters as well, "/controllerset/<name>/gains" (one per
// output, finite; defaults from the spec), so that a State may set how the controller's effort
// is shared among its controls (e.g. among muscles, by their moment arms at the State's pose).
//
// A combination of coordinates (spec.nterm > 0) is sensed in place of one coordinate:
//   y = sum_k c_k q_k, y' = sum_k c_k u_k,
// and y, y' take q's and u's places above (delayed and windowed alike); the coefficients c_k are
// instance parameters too, "/controllerset/<name>/coefficients" (one per term, finite), so that
// a State may set them, e.g. the linearization of a body's sway about its own posture.
//
// A C callback: fn(sys, st, controls, user) adds to `controls` (the controls in effect, one per
// mbs_system_ncontrol) at Dynamics, from the State realized to Velocity. It must not change the
// State and, as States run on several threads at once, must be safe to call concurrently.
#ifndef MBS_CONTROLLER_H_
#define MBS_CONTROLLER_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_pd_output {
  int control;                 // the control it adds to (0 .. mbs_system_ncontrol - 1)
  double gain;                 // control per unit of e
  double offset;               // added before clamping
  double lower, upper;         // clamp of this output (-INFINITY, INFINITY: none)
} mbs_pd_output;

// one term of a sensed combination of coordinates (mbs_pd_controller_spec.terms)
typedef struct mbs_pd_term {
  int q_index, u_index;        // a coordinate's place in q and its rate's in u (u = q')
  double coefficient;          // finite; the default of its instance parameter
} mbs_pd_term;

typedef struct mbs_pd_controller_spec {
  const char* name;            // unique among controllers; names its parameters
  int q_index, u_index;        // the coordinate's place in q and its rate's in u (u = q'),
                               // when nterm is 0
  double reference;            // rad or m
  double kp, kd;               // >= 0
  double delay;                // s, >= 0
  double window;               // s, >= 0: 0 for none
  int noutput;                 // >= 1
  const mbs_pd_output* outputs;
  double scale;                // >= 0, a factor on kp and kd; used when scale_set (else 1)
  int scale_set;
  int nterm;                   // 0, or the number of terms: the controller then senses
  const mbs_pd_term* terms;    // y = sum_k c_k q_k (rate sum_k c_k u_k) in place of q_index
} mbs_pd_controller_spec;

// Add a PD tracking controller; returns its index or a negative status (message in
// mbs_system_error, naming the controller).
int mbs_system_add_pd_controller(mbs_system* sys, const mbs_pd_controller_spec* spec);

typedef void (*mbs_controller_fn)(const mbs_system* sys, const mbs_state* st, double* controls,
                                  void* user);
// Add a user controller called at Dynamics; returns its index or a negative status.
int mbs_system_add_controller_callback(mbs_system* sys, const char* name, mbs_controller_fn fn,
                                       void* user);

int mbs_system_ncontroller(const mbs_system* sys);
const char* mbs_controller_name(const mbs_system* sys, int controller);
int mbs_controller_find(const mbs_system* sys, const char* name);  // -1 if unknown

// The controls in effect (mbs_system_ncontrol of them) [Dynamics].
const double* mbs_get_controls(const mbs_system* sys, mbs_state* st);

// The State's history of delayed signals, kept by the integrators (after initialization and
// each accepted step): record the State's present (samples later than its time are dropped
// first, so a run restarted from an earlier time does not see its own future). Callers that
// step a State by other means call it after each step.
int mbs_controllers_record(const mbs_system* sys, mbs_state* st);
// the longest step that keeps the delayed signals known: the shortest look-back in the State
// (a PD controller's delay, or without a delay half its window), over the controllers whose
// output depends on what they sense (scale > 0, kp or kd x kd_scale > 0); INFINITY if none
double mbs_controllers_max_step(const mbs_system* sys, const mbs_state* st);

#ifdef __cplusplus
}
#endif

#endif  // MBS_CONTROLLER_H_
