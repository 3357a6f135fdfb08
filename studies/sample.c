// One sample (engine.h): the parameters (and muscle excitations) into a State copied from the
// pristine one, the initial coordinates, assembly, the driver's preparation, the muscles'
// equilibrium, the simulation with the spec's events (and the driver's), the trajectories at
// every report, the scalars, and the driver's per-sample results. A test function is evaluated
// instead of simulated.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "test_functions.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// events: the user pointer is a small struct per event and sample
typedef struct event_ctx {
  const mbs_event_plan* plan;
  mbs_sample* run;
  int k;
} event_ctx;

typedef struct sample_impl {
  mbs_sample pub;
  event_ctx* ec;
  mbs_event* ev;
  double* q0;
} sample_impl;

mbs_sample* mbs_sample_create(const mbs_plan* P, const mbs_driver* D) {
  sample_impl* s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  mbs_sample* r = &s->pub;
  r->P = P;
  r->D = D;
  const int nc = P->om ? mbs_osim_ncoordinate(P->om) : 0;
  r->st = P->sys ? mbs_state_create(P->sys) : NULL;
  r->params = malloc(8 * ((size_t)P->np + 1));
  r->traj = malloc(8 * ((size_t)P->frame_values + 1));
  r->scalars = malloc(8 * ((size_t)P->nscal + 1));
  r->results = malloc(8 * ((size_t)P->nresults + 1));
  r->event_time = malloc(8 * ((size_t)P->nevents + 1));
  r->scratch = calloc(1, D->ops->scratch + 1);
  r->prep_scratch = calloc(1, (D->prep ? D->prep->ops->scratch : 0) + 1);
  s->ec = calloc((size_t)P->nevents + 1, sizeof(*s->ec));
  s->ev = calloc((size_t)P->nevents + MBS_SAMPLE_MAX_EVENTS + 1, sizeof(*s->ev));
  s->q0 = malloc(2 * ((size_t)nc + 1) * sizeof(double));
  if ((P->sys && !r->st) || !r->params || !r->traj || !r->scalars || !r->results ||
      !r->event_time || !r->scratch || !r->prep_scratch || !s->ec || !s->ev || !s->q0) {
    mbs_sample_destroy(r);
    return NULL;
  }
  return r;
}

void mbs_sample_destroy(mbs_sample* r) {
  if (!r) return;
  sample_impl* s = (sample_impl*)r;
  mbs_state_destroy(r->st);
  free(r->params);
  free(r->traj);
  free(r->scalars);
  free(r->results);
  free(r->event_time);
  free(r->scratch);
  free(r->prep_scratch);
  free(s->ec);
  free(s->ev);
  free(s->q0);
  free(s);
}

// field `field` (mbs_spec_muscle_output) of a muscle report
static double muscle_field(const mbs_muscle_report* m, int field) {
  switch (field) {
    case MBS_MUSCLE_OUT_TENDON_FORCE: return m->tendon_force;
    case MBS_MUSCLE_OUT_FIBER_LENGTH: return m->fiber_length;
    case MBS_MUSCLE_OUT_FIBER_VELOCITY: return m->fiber_velocity;
    case MBS_MUSCLE_OUT_NORMALIZED_FIBER_LENGTH: return m->normalized_fiber_length;
    case MBS_MUSCLE_OUT_NORMALIZED_FIBER_VELOCITY: return m->normalized_fiber_velocity;
    case MBS_MUSCLE_OUT_ACTIVATION: return m->activation;
    case MBS_MUSCLE_OUT_EXCITATION: return m->excitation;
    case MBS_MUSCLE_OUT_PENNATION_ANGLE: return m->pennation_angle;
    case MBS_MUSCLE_OUT_ACTIVE_FIBER_FORCE: return m->active_fiber_force;
    case MBS_MUSCLE_OUT_PASSIVE_FIBER_FORCE: return m->passive_fiber_force;
    case MBS_MUSCLE_OUT_MUSCLE_POWER: return m->muscle_power;
    case MBS_MUSCLE_OUT_TENDON_LENGTH: return m->tendon_length;
    default: return NAN;
  }
}

static void quantity_values(const mbs_plan* P, const mbs_quantity_plan* q, mbs_state* st,
                            double* out) {
  const mbs_system* sys = P->sys;
  static const double origin[3] = {0, 0, 0};
  switch (q->kind) {
    case MBS_Q_Q: mbs_osim_get_coordinates(P->om, st, out, NULL); break;
    case MBS_Q_U: mbs_osim_get_coordinates(P->om, st, NULL, out); break;
    case MBS_Q_Z: memcpy(out, mbs_state_z(st), (size_t)q->ncomp * sizeof(double)); break;
    case MBS_Q_COM: {
      double m;
      if (mbs_calc_center_of_mass_subset(sys, st, P->com_skip, &m, out))
        out[0] = out[1] = out[2] = NAN;
      break;
    }
    case MBS_Q_BODY_POS:
      if (mbs_get_station_location(sys, st, q->arg, origin, out)) out[0] = out[1] = out[2] = NAN;
      break;
    case MBS_Q_BODY_ORI: {
      double R[9];
      if (mbs_get_body_transform(sys, st, q->arg, R, NULL)) {
        out[0] = out[1] = out[2] = out[3] = NAN;
      } else {
        mbs_rot_to_quat(out, R);
        if (out[0] < 0)
          for (int k = 0; k < 4; k++) out[k] = -out[k];
      }
      break;
    }
    case MBS_Q_CONTACT: {
      const int npair = q->ncomp / 7;
      int n = 0;
      mbs_contact_report rep[64];
      if (npair > 64 || mbs_realize_dynamics(sys, st) ||
          mbs_get_contact_reports(sys, st, q->arg, rep, 64, &n) || n != npair) {
        for (int k = 0; k < q->ncomp; k++) out[k] = NAN;
        break;
      }
      for (int k = 0; k < npair; k++) {
        memcpy(out + 7 * k, rep[k].force, 3 * sizeof(double));
        memcpy(out + 7 * k + 3, rep[k].point, 3 * sizeof(double));
        out[7 * k + 6] = rep[k].penetration;
      }
      break;
    }
    case MBS_Q_MUSCLE: {  // the muscles' reports, from the State realized to Dynamics
      const int ok = mbs_realize_dynamics(sys, st) == MBS_OK;
      for (int k = 0; k < q->ncomp; k++) {
        mbs_muscle_report m = {0};
        out[k] = ok && mbs_get_muscle_report(sys, st, q->forces[k], &m) == MBS_OK
                     ? muscle_field(&m, q->arg)
                     : NAN;
      }
      break;
    }
    case MBS_Q_REACTION: {
      double F2[6];
      if (mbs_realize_acceleration(sys, st) ||
          mbs_get_constraint_forces(sys, st, q->arg, NULL, F2, NULL)) {
        for (int k = 0; k < 6; k++) out[k] = NAN;
      } else {
        memcpy(out, F2, sizeof(F2));
      }
      break;
    }
  }
}

static int on_report(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  mbs_sample* r = user;
  const mbs_plan* P = r->P;
  if (mbs_study_stop_requested()) {
    r->stopped = 1;
    return 1;
  }
  const double t = mbs_state_time(st);
  const double dt = P->spec->output_interval;
  const long k = lround(t / dt);
  if (k < 0 || k >= P->nframes || fabs(t - k * dt) > 1e-9 * fmax(dt, 1e-300) || k != r->frames)
    return 0;  // an event's report between frames
  for (int i = 0; i < P->nquant; i++) {
    const mbs_quantity_plan* q = &P->quant[i];
    quantity_values(P, q, st, r->traj + q->offset + (long)k * q->ncomp);
  }
  r->frames = (int)k + 1;
  return 0;
}

static double trigger(const mbs_system* sys, mbs_state* st, void* user) {
  const event_ctx* c = user;
  const mbs_event_plan* e = c->plan;
  if (e->body >= 0) {
    double p[3];
    if (mbs_get_station_location(sys, st, e->body, e->e->point, p)) return NAN;
    return p[1] - e->e->value;
  }
  const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(c->run->P->om, e->coord);
  return mbs_state_q(st)[ci->qindex] - e->e->value;
}

static mbs_event_action handler(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  event_ctx* c = user;
  if (isnan(c->run->event_time[c->k])) c->run->event_time[c->k] = mbs_state_time(st);
  return c->plan->e->terminate ? MBS_EVENT_TERMINATE : MBS_EVENT_CONTINUE;
}

// the spec's scalars from the frames and event times, the function's outputs and the driver's
// results
static void scalars_of(mbs_sample* r, const double* fn_out) {
  const mbs_plan* P = r->P;
  for (int i = 0; i < P->nscal; i++) {
    const mbs_scalar_plan* p = &P->scal[i];
    r->scalars[i] = NAN;
    switch (p->source) {
      case MBS_SC_DRIVER: r->scalars[i] = r->results[p->index]; continue;
      case MBS_SC_FUNCTION: r->scalars[i] = fn_out ? fn_out[p->index] : NAN; continue;
      case MBS_SC_EVENT:
        r->scalars[i] = p->index >= 0 ? r->event_time[p->index] : NAN;
        continue;
      case MBS_SC_QUANTITY: break;
    }
    const mbs_quantity_plan* q = &P->quant[p->index];
    if (r->frames == 0) continue;
    double acc = p->at == MBS_SPEC_AT_MAX ? -INFINITY : p->at == MBS_SPEC_AT_MIN ? INFINITY : 0;
    for (int k = 0; k < r->frames; k++) {
      const double v = r->traj[q->offset + (long)k * q->ncomp + p->comp];
      if (p->at == MBS_SPEC_AT_MAX) acc = fmax(acc, v);
      else if (p->at == MBS_SPEC_AT_MIN) acc = fmin(acc, v);
      else if (p->at == MBS_SPEC_AT_MEAN) acc += v;
    }
    if (p->at == MBS_SPEC_AT_MEAN) acc /= r->frames;
    if (p->at == MBS_SPEC_AT_FINAL)
      acc = r->traj[q->offset + (long)(r->frames - 1) * q->ncomp + p->comp];
    r->scalars[i] = acc;
  }
}

// the design's prepare, then its preparation's (each sees its own scratch); 0: neither has one
static int has_prepare(const mbs_driver* D) {
  return D->ops->prepare || (D->prep && D->prep->ops->prepare);
}

static int prepare(mbs_sample* r) {
  const mbs_driver* D = r->D;
  int rc = MBS_OK;
  if (D->ops->prepare) rc = D->ops->prepare(D, r);
  if (rc == MBS_OK && D->prep && D->prep->ops->prepare) {
    void* own = r->scratch;
    r->scratch = r->prep_scratch;
    rc = D->prep->ops->prepare(D->prep, r);
    r->scratch = own;
  }
  return rc;
}

static void results(mbs_sample* r, int status) {
  const mbs_driver* D = r->D;
  if (D->prep && D->prep->ops->results) {
    void* own = r->scratch;
    r->scratch = r->prep_scratch;
    D->prep->ops->results(D->prep, r, status);
    r->scratch = own;
  }
  if (D->ops->results) D->ops->results(D, r, status);
}

static int run_function(mbs_sample* r) {
  const mbs_plan* P = r->P;
  double x[MBS_TEST_FUNCTION_MAX_DIM];
  double y[2 * MBS_TEST_FUNCTION_MAX_DIM + 1];
  for (int i = 0; i < P->fn_dim; i++) x[i] = P->fn->default_arg(i);
  for (int i = 0; i < P->np; i++)
    if (P->par[i].kind == MBS_PK_FUNCTION) x[P->par[i].index] = r->params[i];
  int finite = 1;
  for (int i = 0; i < P->fn_dim; i++) finite = finite && isfinite(x[i]);
  P->fn->eval(P->fn_dim, x, y);
  r->frames = 1;
  int rc = prepare(r);
  if (rc == MBS_OK && !finite) rc = MBS_ERR_NAN;
  results(r, rc);
  scalars_of(r, rc == MBS_OK ? y : NULL);
  return rc;
}

static void clear(mbs_sample* r) {
  const mbs_plan* P = r->P;
  r->steps = 0;
  r->frames = 0;
  r->nevents = 0;
  r->stopped = 0;
  r->message[0] = 0;
  r->duration = P->spec->duration;
  for (long i = 0; i < P->frame_values; i++) r->traj[i] = NAN;
  for (int i = 0; i < P->nevents; i++) r->event_time[i] = NAN;
  for (int i = 0; i < P->nresults; i++) r->results[i] = NAN;
}

int mbs_sample_setup(mbs_sample* r, const mbs_state* pristine) {
  sample_impl* impl = (sample_impl*)r;
  const mbs_plan* P = r->P;
  const mbs_system* sys = P->sys;
  mbs_state* st = r->st;
  if (!sys) return MBS_ERR_ARGUMENT;
  clear(r);
  mbs_state_copy(sys, st, pristine);
  mbs_error_clear((mbs_error*)mbs_state_error(st));
  double* prm = mbs_state_upd_params(st);
  double* ctl = mbs_system_ncontrol(sys) > 0 ? mbs_state_upd_controls(st) : NULL;
  for (int i = 0; i < P->np; i++)
    if (P->par[i].kind == MBS_PK_SYSTEM) {
      prm[P->par[i].index] = r->params[i];
    } else if (P->par[i].kind == MBS_PK_CONTROL) {  // a muscle's excitation
      ctl[P->par[i].index] = r->params[i];
    } else if (P->par[i].kind == MBS_PK_SYSTEM_SET) {
      const mbs_param_plan* q = &P->par[i];
      for (int k = 0; k < q->nlinked; k++)
        prm[q->linked[k]] = q->is_scale ? r->params[i] * q->linked_base[k] : r->params[i];
      for (int k = 0; k < q->ncontrols; k++)
        ctl[q->controls[k]] = q->is_scale ? r->params[i] * q->control_base[k] : r->params[i];
    }
  // initial coordinates: the model's defaults, then the sampled ones
  const int nc = mbs_osim_ncoordinate(P->om);
  double* q0 = impl->q0;
  for (int i = 0; i < nc; i++) {
    q0[i] = mbs_osim_coordinate_info(P->om, i)->default_value;
    q0[nc + i] = mbs_osim_coordinate_info(P->om, i)->default_speed;
  }
  for (int i = 0; i < P->np; i++) {
    if (P->par[i].kind == MBS_PK_COORD_VALUE) q0[P->par[i].index] = r->params[i];
    if (P->par[i].kind == MBS_PK_COORD_SPEED) q0[nc + P->par[i].index] = r->params[i];
  }
  mbs_osim_set_coordinates(P->om, st, q0, q0 + nc);
  mbs_state_set_time(st, 0);
  int rc;
  if (has_prepare(r->D)) {
    rc = prepare(r);
  } else if ((rc = mbs_realize_instance(sys, st)) == MBS_OK && mbs_system_nconstraint(sys) > 0) {
    rc = mbs_assemble(sys, st, NULL);
  }
  // muscles start in equilibrium with the sample's pose and properties
  if (rc == MBS_OK) rc = mbs_equilibrate_muscles(sys, st);
  return rc;
}

static int simulate_alone(mbs_sample* r);

int mbs_sample_run(mbs_sample* r, const mbs_state* pristine) {
  const mbs_plan* P = r->P;
  const double t0 = now();
  if (P->fn) {
    clear(r);
    const int rc = run_function(r);
    r->wall = now() - t0;
    return rc;
  }
  if (r->D->ops->evaluate) {  // the driver evaluates the sample itself
    clear(r);
    const int rc = r->D->ops->evaluate(r->D, r);
    if (rc != MBS_OK && !r->message[0])
      snprintf(r->message, sizeof(r->message), "%s", mbs_status_text(rc));
    r->wall = now() - t0;
    scalars_of(r, NULL);
    return rc;
  }
  int rc = mbs_sample_setup(r, pristine);
  if (rc == MBS_OK) rc = simulate_alone(r);
  results(r, rc);
  r->wall = now() - t0;
  scalars_of(r, NULL);
  return rc;
}

// the simulation of a sample set up, alone, with the spec's and the driver's events
static int simulate_alone(mbs_sample* r) {
  sample_impl* impl = (sample_impl*)r;
  const mbs_plan* P = r->P;
  const mbs_system* sys = P->sys;
  mbs_state* st = r->st;
  int rc;
  {
    mbs_simulation_options o;
    mbs_sample_simulation_options(P, &o);
    mbs_event* ev = impl->ev;
    event_ctx* ec = impl->ec;
    for (int i = 0; i < P->nevents; i++) {
      const mbs_spec_event* e = P->ev[i].e;
      ec[i] = (event_ctx){&P->ev[i], r, i};
      memset(&ev[i], 0, sizeof(ev[i]));
      ev[i].name = e->name;
      ev[i].trigger = trigger;
      ev[i].stage = MBS_STAGE_POSITION;
      ev[i].direction = (e->kind == MBS_SPEC_EVENT_HEIGHT_BELOW ||
                         e->kind == MBS_SPEC_EVENT_COORDINATE_BELOW) ? -1 : 1;
      ev[i].handler = handler;
      ev[i].user = &ec[i];
    }
    int nev = P->nevents;
    for (int k = 0; k < r->nevents; k++) ev[nev++] = r->events[k];
    mbs_simulation_result res;
    memset(&res, 0, sizeof(res));
    rc = mbs_simulate(sys, st, r->duration, &o, ev, nev, on_report, r, &res);
    r->steps = res.integrator.steps;
  }
  return rc;
}

void mbs_sample_simulation_options(const mbs_plan* P, mbs_simulation_options* o) {
  mbs_simulation_options_default(o);
  o->integrator = P->integrator;
  o->integ.accuracy = P->spec->accuracy;
  o->report_interval = P->spec->output_interval;
  o->max_wall_time = P->spec->max_wall_time;
}

int mbs_plan_batchable(const mbs_plan* P, const mbs_driver* D, char* why, size_t n) {
  if (why && n) why[0] = 0;
  const char* no = !P->sys                ? "no System (a test function)"
                   : D->ops->evaluate     ? "the driver evaluates its samples itself"
                   : P->nevents > 0       ? "the study has events (their isolation is not batched)"
                                          : NULL;
  if (no) {
    if (why && n) snprintf(why, n, "%s", no);
    return 0;
  }
  mbs_simulation_options o;
  mbs_sample_simulation_options(P, &o);
  return mbs_batch_simulation_supported(P->sys, &o, why, n);
}

int mbs_sample_run_group(mbs_sample* const* rs, int n, const mbs_state* pristine,
                         mbs_batch_sim* bs, int* status) {
  const double t0 = now();
  if (n < 1) return 0;
  const mbs_plan* P = rs[0]->P;
  mbs_state* st[MBS_SAMPLE_GROUP_MAX];
  void* users[MBS_SAMPLE_GROUP_MAX];
  int lane_of[MBS_SAMPLE_GROUP_MAX], lstatus[MBS_SAMPLE_GROUP_MAX];
  mbs_simulation_result res[MBS_SAMPLE_GROUP_MAX];
  int m = 0, batched = 0;
  double t_final = 0;
  for (int k = 0; k < n && k < MBS_SAMPLE_GROUP_MAX; k++) {
    mbs_sample* r = rs[k];
    lane_of[k] = -1;
    status[k] = mbs_sample_setup(r, pristine);
    if (status[k] != MBS_OK) continue;
    // a sample with events of its driver's, or another duration, is simulated alone
    if (r->nevents == 0 && (m == 0 || r->duration == t_final)) {
      t_final = r->duration;
      lane_of[k] = m;
      st[m] = r->st;
      users[m++] = r;
    } else {
      status[k] = simulate_alone(r);
    }
  }
  if (m > 0) {
    mbs_batch_simulate(bs, P->sys, st, m, t_final, on_report, users, res, lstatus);
    batched = m;
  }
  const double wall = (now() - t0) / n;
  for (int k = 0; k < n && k < MBS_SAMPLE_GROUP_MAX; k++) {
    mbs_sample* r = rs[k];
    if (lane_of[k] >= 0) {
      status[k] = lstatus[lane_of[k]];
      r->steps = res[lane_of[k]].integrator.steps;
    }
    results(r, status[k]);
    r->wall = wall;
    scalars_of(r, NULL);
  }
  return batched;
}

const char* mbs_sample_message(const mbs_sample* r, int status) {
  if (status == MBS_OK) return "";
  if (r->message[0]) return r->message;
  if (r->st && mbs_state_error(r->st)->message[0]) return mbs_state_error(r->st)->message;
  if (status == MBS_ERR_NAN) return "an argument of the test function is not finite";
  return mbs_status_text(status);
}
