// The time stepper: integrator steps, reports at fixed times from dense output, and event
// isolation by an Illinois-modified regula falsi on the interpolant (the side that repeats has
// its value halved), stopping when the bracket is narrower than the event tolerance; the event
// is placed at the bracket's later end, where the trigger has already changed sign.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "integrator_impl.h"
#include "mbs/simulate.h"

void mbs_simulation_options_default(mbs_simulation_options* o) {
  o->integrator = MBS_INTEG_RK_MERSON;
  mbs_integrator_options_default(&o->integ);
  o->report_interval = 0;
  o->event_tolerance = 1e-9;
  o->max_steps = 0;
  o->max_wall_time = 0;
}

static double wall_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct stepper {
  const mbs_system* sys;
  mbs_integrator* in;
  mbs_integrator* shadow;  // buffers for re-stepping
  mbs_state* tmp;          // interpolated States (reports, event isolation)
  double* y;
  const mbs_event* ev;
  int nev;
  double tol;              // constraint projection tolerance
} stepper;

// put the State at time t within the last step into tmp (copied from st for its parameters):
// from the interpolant (reports) or by re-stepping (events), projected onto the constraints
static int interpolated_how(stepper* s, mbs_state* st, double t, int restep) {
  int rc = mbs_state_copy(s->sys, s->tmp, st);
  if (rc) return rc;
  rc = restep ? mbs_integ_restep(s->in, s->shadow, s->sys, s->tmp, t, s->y)
              : mbs_integrator_interpolate(s->in, t, s->y);
  if (rc) return rc;
  mbs_integ_set_state(s->in, s->tmp, t, s->y);
  return mbs_project(s->sys, s->tmp, s->tol);
}

static int interpolated(stepper* s, mbs_state* st, double t) {
  return interpolated_how(s, st, t, 0);
}

static int trigger_value(stepper* s, mbs_state* x, int k, double* v) {
  const mbs_event* e = &s->ev[k];
  const int rc = mbs_realize(s->sys, x, e->stage);
  if (rc) return rc;
  *v = e->trigger(s->sys, x, e->user);
  return MBS_OK;
}

// a crossing from a to b in the event's direction
static int crosses(int direction, double a, double b) {
  const int rising = a < 0 && b >= 0, falling = a > 0 && b <= 0;
  return direction > 0 ? rising : direction < 0 ? falling : rising || falling;
}

// isolate event k in [ta, tb] with values fa, fb; returns the time at the later end
static int isolate(stepper* s, mbs_state* st, int k, double ta, double tb, double fa, double fb,
                   double tol, double* te) {
  int side = 0;
  for (int it = 0; it < 200 && tb - ta > tol; it++) {
    double tm = (ta * fb - tb * fa) / (fb - fa);
    const double w = tb - ta;
    // keep the guess well inside; bisect every few iterations to guarantee progress
    if (!(tm > ta + 0.01 * w && tm < tb - 0.01 * w) || it % 8 == 7) tm = ta + 0.5 * w;
    double fm;
    int rc = interpolated_how(s, st, tm, 1);
    if (rc || (rc = trigger_value(s, s->tmp, k, &fm))) return rc;
    if (crosses(0, fa, fm) || fm == 0) {  // the crossing is in [ta, tm]
      tb = tm;
      fb = fm;
      if (side == -1) fa *= 0.5;
      side = -1;
    } else {
      ta = tm;
      fa = fm;
      if (side == 1) fb *= 0.5;
      side = 1;
    }
  }
  *te = tb;
  return MBS_OK;
}

static int do_report(stepper* s, mbs_state* x, mbs_report_fn report, void* user,
                     mbs_simulation_result* r) {
  int rc = mbs_realize_velocity(s->sys, x);
  if (rc) return rc;
  r->reports++;
  if (report && report(s->sys, x, user)) r->stopped_by_report = 1;
  return MBS_OK;
}

int mbs_simulate(const mbs_system* sys, mbs_state* st, double t_final,
                 const mbs_simulation_options* o, const mbs_event* events, int nevents,
                 mbs_report_fn report, void* report_user, mbs_simulation_result* result) {
  mbs_simulation_options opt;
  if (o) opt = *o;
  else mbs_simulation_options_default(&opt);
  mbs_simulation_result res_local;
  mbs_simulation_result* r = result ? result : &res_local;
  memset(r, 0, sizeof(*r));
  r->event = -1;
  if (!sys || !st) return MBS_ERR_ARGUMENT;
  const double t_start = mbs_state_time(st);
  r->t_end = t_start;
  if (!(t_final >= t_start) || !isfinite(t_final))
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, mbs_system_name(sys),
                    "%s: simulation end time %g is before the start time %g",
                    mbs_system_name(sys), t_final, t_start);
  const double wall_start = wall_seconds();
  if (!(opt.report_interval >= 0) || !(opt.event_tolerance > 0) || opt.max_steps < 0 ||
      !(opt.max_wall_time >= 0) ||
      nevents < 0 || (nevents > 0 && !events))
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, mbs_system_name(sys),
                    "%s: invalid simulation options", mbs_system_name(sys));
  for (int k = 0; k < nevents; k++)
    if (!events[k].trigger || events[k].stage < MBS_STAGE_TIME ||
        events[k].stage > MBS_STAGE_ACCELERATION)
      return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, mbs_system_name(sys),
                      "%s: event %d (%s) needs a trigger and a stage from Time to Acceleration",
                      mbs_system_name(sys), k, events[k].name ? events[k].name : "");
  stepper s = {sys, NULL, NULL, NULL, NULL, events, nevents, 0};
  s.in = mbs_integrator_create(sys, opt.integrator, &opt.integ);
  s.shadow = mbs_integrator_create(sys, opt.integrator, &opt.integ);
  s.tol = s.in ? s.in->opt.constraint_tolerance : 0;
  s.tmp = mbs_state_create(sys);
  s.y = malloc((size_t)(mbs_system_nq(sys) + mbs_system_nu(sys) + mbs_system_nz(sys) + 1) * sizeof(double));
  double* e_prev = calloc((size_t)nevents + 1, sizeof(double));
  double* e_now = calloc((size_t)nevents + 1, sizeof(double));
  int rc = MBS_OK;
  if (!s.in || !s.shadow || !s.tmp || !s.y || !e_prev || !e_now) {
    rc = s.in ? MBS_FAIL(&st->err, MBS_ERR_NO_MEMORY, mbs_system_name(sys), "%s: out of memory",
                         mbs_system_name(sys))
              : MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, mbs_system_name(sys),
                         "%s: invalid integrator options (accuracy must be in (0, 1), steps "
                         "positive)", mbs_system_name(sys));
    goto done;
  }
  if ((rc = mbs_integrator_initialize(s.in, sys, st))) goto done;
  for (int k = 0; k < nevents; k++)
    if ((rc = trigger_value(&s, st, k, &e_prev[k]))) goto done;
  long k_report = 0;
  if ((rc = do_report(&s, st, report, report_user, r))) goto done;
  k_report = 1;
  long steps = 0;
  while (mbs_state_time(st) < t_final && !r->stopped_by_report) {
    if (opt.max_steps > 0 && steps >= opt.max_steps) {
      rc = MBS_FAIL(&st->err, MBS_ERR_STEP_LIMIT, mbs_system_name(sys),
                    "%s: stopped at t = %.9g after the step limit of %ld steps",
                    mbs_system_name(sys), mbs_state_time(st), opt.max_steps);
      break;
    }
    if (opt.max_wall_time > 0 && wall_seconds() - wall_start > opt.max_wall_time) {
      rc = MBS_FAIL(&st->err, MBS_ERR_STEP_LIMIT, mbs_system_name(sys),
                    "%s: stopped at t = %.9g after the wall-time limit of %g s",
                    mbs_system_name(sys), mbs_state_time(st), opt.max_wall_time);
      break;
    }
    const double t0 = mbs_state_time(st);
    if ((rc = mbs_integrator_step(s.in, sys, st, t_final))) break;
    steps++;
    const double t1 = mbs_state_time(st);
    // events: the earliest crossing among the triggers
    int kev = -1;
    double tev = t1;
    for (int k = 0; k < nevents && rc == MBS_OK; k++) {
      rc = trigger_value(&s, st, k, &e_now[k]);
      if (rc || !crosses(events[k].direction, e_prev[k], e_now[k])) continue;
      double te;
      rc = isolate(&s, st, k, t0, t1, e_prev[k], e_now[k], opt.event_tolerance, &te);
      if (rc == MBS_OK && (kev < 0 || te < tev)) {
        kev = k;
        tev = te;
      }
    }
    if (rc) break;
    const double t_upto = kev >= 0 ? tev : t1;
    // reports up to the event (or the end of the step), from the interpolant
    while (!r->stopped_by_report) {
      const double tr = opt.report_interval > 0 ? t_start + k_report * opt.report_interval : t1;
      const double tr_c = fmin(tr, t_final);
      if (tr_c > t_upto || (opt.report_interval == 0 && kev >= 0)) break;
      if (tr_c == t1) rc = do_report(&s, st, report, report_user, r);
      else if ((rc = interpolated(&s, st, tr_c)) == MBS_OK)
        rc = do_report(&s, s.tmp, report, report_user, r);
      if (rc) break;
      k_report++;
      if (opt.report_interval == 0 || tr_c >= t_final) break;
    }
    if (rc) break;
    if (kev < 0) {
      memcpy(e_prev, e_now, (size_t)nevents * sizeof(double));
      continue;
    }
    // the event: move the State to its time and let the handler decide
    r->events++;
    if ((rc = interpolated_how(&s, st, tev, 1))) break;
    if ((rc = mbs_state_copy(sys, st, s.tmp))) break;
    if ((rc = mbs_realize_acceleration(sys, st))) break;
    const mbs_event_action action =
        events[kev].handler ? events[kev].handler(sys, st, events[kev].user) : MBS_EVENT_TERMINATE;
    if (action == MBS_EVENT_TERMINATE) {
      r->event = kev;
      r->event_time = tev;
      rc = do_report(&s, st, report, report_user, r);
      break;
    }
    // continue: restart the integrator at the event and take the triggers' values there
    if ((rc = mbs_integrator_initialize(s.in, sys, st))) break;
    for (int k = 0; k < nevents && rc == MBS_OK; k++) rc = trigger_value(&s, st, k, &e_prev[k]);
    if (rc) break;
  }
  r->t_end = mbs_state_time(st);
  r->integrator = *mbs_integrator_stats_of(s.in);
  if (rc == MBS_OK) mbs_realize_acceleration(sys, st);
done:
  if (rc != MBS_OK && st->err.code == rc && !strstr(st->err.message, "t = ")) {
    // a model error (a non-finite force, a singular system) says what failed; add when
    const size_t len = strlen(st->err.message);
    snprintf(st->err.message + len, sizeof(st->err.message) - len, " (simulation at t = %.9g s)",
             mbs_state_time(st));
  }
  free(e_prev);
  free(e_now);
  free(s.y);
  mbs_state_destroy(s.tmp);
  mbs_integrator_destroy(s.in);
  mbs_integrator_destroy(s.shadow);
  return rc;
}
