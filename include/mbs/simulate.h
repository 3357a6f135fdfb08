// The time stepper: advances a State with an integrator, reports at a fixed interval
// independent of the step size (dense output), and watches event triggers e(t, y): a sign
// change within a step is isolated to a time tolerance on the integrator's interpolant, then the
// event's handler may change the State (discrete variables, parameters, speeds) and continue,
// or end the run (Simbody paper §3).
#ifndef MBS_SIMULATE_H_
#define MBS_SIMULATE_H_

#include "mbs/integrate.h"
#include "mbs/state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_event_action {
  MBS_EVENT_CONTINUE = 0,   // keep integrating (the integrator restarts at the event)
  MBS_EVENT_TERMINATE = 1,  // end the run at the event
} mbs_event_action;

typedef struct mbs_event {
  const char* name;
  // the trigger e(t, y): an event happens where it changes sign; the State is realized to
  // `stage` when it is called
  double (*trigger)(const mbs_system* sys, mbs_state* st, void* user);
  mbs_stage stage;          // Position, Velocity, Dynamics or Acceleration
  int direction;            // +1: only rising through zero, -1: only falling, 0: both
  // called at the event with the State at the event time; may change the State; NULL ends the
  // run
  mbs_event_action (*handler)(const mbs_system* sys, mbs_state* st, void* user);
  void* user;
} mbs_event;

typedef struct mbs_simulation_options {
  mbs_integrator_type integrator;   // default MBS_INTEG_RK_MERSON
  mbs_integrator_options integ;
  double report_interval;           // s; 0 reports after every step
  double event_tolerance;           // width of the bracket that isolates an event, default 1e-9 s
  long max_steps;                   // 0: no limit
  double max_wall_time;             // s of wall-clock time; 0: no limit
} mbs_simulation_options;

void mbs_simulation_options_default(mbs_simulation_options* o);

// called at each report time with a State realized to Velocity at that time; a non-zero return
// ends the run (reported as MBS_OK, ended by the caller)
typedef int (*mbs_report_fn)(const mbs_system* sys, mbs_state* st, void* user);

typedef struct mbs_simulation_result {
  double t_end;           // time reached
  int event;              // index of the event that ended the run, or -1
  double event_time;      // when it happened
  long events;            // events handled (ending or not)
  long reports;
  mbs_integrator_stats integrator;
  int stopped_by_report;  // the report function asked to stop
} mbs_simulation_result;

// Simulate from the State's time to t_final. On return the State holds the last time reached
// (t_final, an ending event's time, or the last good step before a failure). Failures of the
// integrator or the model come back as a status with the message in the State's error record;
// everything before them has been reported.
int mbs_simulate(const mbs_system* sys, mbs_state* st, double t_final,
                 const mbs_simulation_options* o, const mbs_event* events, int nevents,
                 mbs_report_fn report, void* report_user, mbs_simulation_result* result);

#ifdef __cplusplus
}
#endif

#endif  // MBS_SIMULATE_H_
