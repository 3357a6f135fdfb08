// Batched simulation (batch.h): States of one System integrated side by side by
// Runge-Kutta-Merson, each with its own steps, their forward dynamics evaluated together.
//
// Each lane is mbs_simulate (simulate.c) without events, written as a state machine that stops
// wherever the one-at-a-time path would evaluate y' = f(t, y): the lane puts (t, y) into its
// State and waits; when every unfinished lane waits, one mbs_batch_forward_dynamics call
// evaluates them all and each lane goes on to its next evaluation. Lanes step independently
// (different step sizes, rejections, report times); a lane whose State has finished takes the
// call's next State. Every number a lane computes comes from the same functions, in the same
// order, as mbs_integrator_step's (integrator.c exports them: Merson's stages, the error norm,
// the step-size control, the first step), and the batched forward dynamics gives the
// one-at-a-time path's u' and q' bit for bit, so a lane's steps, reports and final State are
// those of mbs_simulate.
//
// Differences from mbs_simulate, none of them in the numbers: the first step's heuristic does
// not evaluate the start point a second time (its value is known), so `evaluations` counts one
// fewer; the batched Systems have no constraints, so the projection after each step (which
// would change nothing) is not made; the State of an interpolated report is copied from the
// lane's once, not at every report; the wall-time limit counts from the start of the call.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "integrator_impl.h"
#include "mbs/batch.h"
#include "mbs/simulate.h"

enum { L_START, L_INIT_F, L_INIT_H, L_BEGIN, L_STEP, L_ATTEMPT, L_STAGE, L_ACCEPT, L_DONE };

typedef struct lane {
  mbs_state* st;
  mbs_integrator* in;
  mbs_state* tmp;       // interpolated States for reports
  double* y;
  void* user;
  mbs_simulation_result* res;
  int phase, stage, hit_limit, rc;
  int idx;              // the State's index in the call
  int erc;              // the status of the evaluation the lane waited for
  double t_start, t, h, h0, err, last_err;
  long steps, k_report;
  double* dest;         // where the pending evaluation's y' goes
  char why[MBS_ERROR_MESSAGE_LEN];
} lane;

struct mbs_batch_sim {
  const mbs_system* sys;
  mbs_simulation_options opt;
  int lanes;
  mbs_batch* batch;
  lane* L;
  mbs_state** pending;  // States waiting for their evaluation, in lane order
  int* who;             // their lanes
};

static double wall_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int mbs_batch_simulation_supported(const mbs_system* sys, const mbs_simulation_options* o,
                                   char* why, size_t n) {
  if (why && n) why[0] = 0;
  if (o && o->integrator != MBS_INTEG_RK_MERSON) {
    if (why && n)
      snprintf(why, n, "the batched simulation integrates with rk_merson only, not %s",
               mbs_integrator_name(o->integrator));
    return 0;
  }
  return mbs_batch_supported(sys, why, n);
}

mbs_batch_sim* mbs_batch_sim_create(const mbs_system* sys, int lanes,
                                    const mbs_simulation_options* o) {
  if (!sys || lanes < 1 || !mbs_batch_simulation_supported(sys, o, NULL, 0)) return NULL;
  mbs_batch_sim* b = calloc(1, sizeof(*b));
  if (!b) return NULL;
  b->sys = sys;
  if (o) b->opt = *o;
  else mbs_simulation_options_default(&b->opt);
  b->lanes = lanes;
  b->batch = mbs_batch_create(sys, lanes);
  b->L = calloc((size_t)lanes, sizeof(*b->L));
  b->pending = calloc((size_t)lanes, sizeof(*b->pending));
  b->who = calloc((size_t)lanes, sizeof(*b->who));
  int ok = b->batch && b->L && b->pending && b->who;
  const size_t ny = (size_t)(mbs_system_nq(sys) + mbs_system_nu(sys) + 1);
  for (int i = 0; ok && i < lanes; i++) {
    lane* l = &b->L[i];
    l->in = mbs_integrator_create(sys, MBS_INTEG_RK_MERSON, &b->opt.integ);
    l->tmp = mbs_state_create(sys);
    l->y = malloc(ny * sizeof(double));
    ok = l->in && l->tmp && l->y;
  }
  if (!ok || !(b->opt.report_interval >= 0) || b->opt.max_steps < 0 ||
      !(b->opt.max_wall_time >= 0)) {
    mbs_batch_sim_destroy(b);
    return NULL;
  }
  return b;
}

void mbs_batch_sim_destroy(mbs_batch_sim* b) {
  if (!b) return;
  for (int i = 0; b->L && i < b->lanes; i++) {
    mbs_integrator_destroy(b->L[i].in);
    mbs_state_destroy(b->L[i].tmp);
    free(b->L[i].y);
  }
  mbs_batch_destroy(b->batch);
  free(b->L);
  free(b->pending);
  free(b->who);
  free(b);
}

mbs_batch* mbs_batch_sim_batch(const mbs_batch_sim* b) { return b ? b->batch : NULL; }

// the lane waits for y'(t, y) into dest
static int post(lane* l, double t, const double* y, double* dest) {
  mbs_integ_set_state(l->in, l->st, t, y);
  l->in->stats.evaluations++;
  l->dest = dest;
  return 1;
}

static int do_report(const mbs_system* sys, lane* l, mbs_state* x, mbs_report_fn report) {
  const int rc = mbs_realize_velocity(sys, x);
  if (rc) return rc;
  l->res->reports++;
  if (report && report(sys, x, l->user)) l->res->stopped_by_report = 1;
  return MBS_OK;
}

// the reports within the step just taken (simulate.c, without events)
static int reports_of_step(const mbs_batch_sim* b, lane* l, double t_final,
                           mbs_report_fn report) {
  const mbs_system* sys = b->sys;
  const double t1 = l->in->t1;
  const double dt = b->opt.report_interval;
  while (!l->res->stopped_by_report) {
    const double tr = dt > 0 ? l->t_start + l->k_report * dt : t1;
    const double tr_c = fmin(tr, t_final);
    if (tr_c > t1) break;
    int rc;
    if (tr_c == t1) {
      rc = do_report(sys, l, l->st, report);
    } else {
      // tmp holds the lane's parameters and applied forces since the start (nothing changes
      // them during the run: the batched Systems have no controllers); only t, q, u are new
      rc = mbs_integrator_interpolate(l->in, tr_c, l->y);
      if (!rc) {
        mbs_integ_set_state(l->in, l->tmp, tr_c, l->y);
        rc = mbs_project(sys, l->tmp, l->in->opt.constraint_tolerance);
      }
      if (!rc) rc = do_report(sys, l, l->tmp, report);
    }
    if (rc) return rc;
    l->k_report++;
    if (dt == 0 || tr_c >= t_final) break;
  }
  return MBS_OK;
}

static void finish(const mbs_batch_sim* b, lane* l, int rc) {
  const mbs_system* sys = b->sys;
  mbs_state* st = l->st;
  l->rc = rc;
  l->phase = L_DONE;
  l->res->t_end = mbs_state_time(st);
  l->res->integrator = *mbs_integrator_stats_of(l->in);
  if (rc == MBS_OK) mbs_realize_acceleration(sys, st);
  if (rc != MBS_OK && st->err.code == rc && !strstr(st->err.message, "t = ")) {
    const size_t len = strlen(st->err.message);
    snprintf(st->err.message + len, sizeof(st->err.message) - len, " (simulation at t = %.9g s)",
             mbs_state_time(st));
  }
}

// Run lane l until it waits for an evaluation (1) or has finished (0). erc: the status of the
// evaluation it waited for (MBS_OK when its y' is in place).
static int advance(const mbs_batch_sim* b, lane* l, int erc, double t_final, double wall_start,
                   mbs_report_fn report) {
  const mbs_system* sys = b->sys;
  const mbs_simulation_options* o = &b->opt;
  mbs_integrator* in = l->in;
  mbs_state* st = l->st;
  for (;;) {
    switch (l->phase) {
      case L_START: {  // mbs_integrator_initialize
        int rc = mbs_state_copy(sys, l->tmp, st);  // for interpolated reports
        if (!rc) rc = mbs_integ_project(in, sys, st);
        if (rc) {
          finish(b, l, rc);
          return 0;
        }
        in->t0 = in->t1 = mbs_state_time(st);
        mbs_integ_get_state(in, st, in->y1);
        l->phase = L_INIT_F;
        return post(l, in->t1, in->y1, in->f1);
      }
      case L_INIT_F:
        if (erc) {
          finish(b, l, erc);
          return 0;
        }
        memcpy(in->y0, in->y1, (size_t)in->ny * sizeof(double));
        memcpy(in->f0, in->f1, (size_t)in->ny * sizeof(double));
        in->initialized = 1;
        in->dense_valid = 0;
        in->jac_formed = 0;
        if (in->opt.initial_step > 0) {
          in->h = in->opt.initial_step;
          l->phase = L_BEGIN;
          continue;
        }
        l->h0 = mbs_integ_initial_trial(in);
        l->phase = L_INIT_H;
        return post(l, in->t1 + l->h0, in->ytmp, in->k[0]);
      case L_INIT_H:
        mbs_integ_initial_finish(in, l->h0, erc == MBS_OK);
        l->phase = L_BEGIN;
        continue;
      case L_BEGIN: {
        // the State at the start point, and the report there (mbs_simulate)
        mbs_integ_set_state(in, st, in->t1, in->y1);
        const int rc = do_report(sys, l, st, report);
        if (rc) {
          finish(b, l, rc);
          return 0;
        }
        l->k_report = 1;
        l->phase = L_STEP;
        continue;
      }
      case L_STEP: {  // the loop of mbs_simulate and the start of mbs_integrator_step
        if (!(mbs_state_time(st) < t_final) || l->res->stopped_by_report) {
          finish(b, l, MBS_OK);
          return 0;
        }
        if (o->max_steps > 0 && l->steps >= o->max_steps) {
          finish(b, l,
                 MBS_FAIL(&st->err, MBS_ERR_STEP_LIMIT, mbs_system_name(sys),
                          "%s: stopped at t = %.9g after the step limit of %ld steps",
                          mbs_system_name(sys), mbs_state_time(st), o->max_steps));
          return 0;
        }
        if (o->max_wall_time > 0 && wall_seconds() - wall_start > o->max_wall_time) {
          finish(b, l,
                 MBS_FAIL(&st->err, MBS_ERR_STEP_LIMIT, mbs_system_name(sys),
                          "%s: stopped at t = %.9g after the wall-time limit of %g s",
                          mbs_system_name(sys), mbs_state_time(st), o->max_wall_time));
          return 0;
        }
        l->t = in->t1;
        double h = in->h;
        if (in->opt.max_step > 0) h = fmin(h, in->opt.max_step);
        l->h = h;
        l->why[0] = 0;
        l->last_err = 0;
        l->phase = L_ATTEMPT;
        continue;
      }
      case L_ATTEMPT: {
        const double t = l->t;
        l->hit_limit = 0;
        if (t + l->h >= t_final || t + 1.01 * l->h >= t_final) {  // do not leave a sliver
          l->h = t_final - t;
          l->hit_limit = 1;
        }
        if (l->h < in->opt.min_step && !l->hit_limit) {
          finish(b, l, mbs_integ_fail_min_step(in, sys, st, l->why, l->last_err, t, l->h));
          return 0;
        }
        in->stats.attempts++;
        l->why[0] = 0;
        memcpy(in->k[0], in->f1, (size_t)in->ny * sizeof(double));
        l->stage = 1;
        l->phase = L_STAGE;
        const double ts = mbs_integ_merson_point(in, 1, l->h, in->ytmp);
        return post(l, ts, in->ytmp, in->k[1]);
      }
      case L_STAGE: {
        l->err = 0;
        if (erc == MBS_OK && l->stage < 4) {
          l->stage++;
          double* at = l->stage == 4 ? in->ylow : in->ytmp;
          const double ts = mbs_integ_merson_point(in, l->stage, l->h, at);
          return post(l, ts, at, in->k[l->stage]);
        }
        if (erc == MBS_OK) {
          double* ynew = in->k[5];
          mbs_integ_merson_finish(in, l->h, ynew, in->yerr);
          l->last_err = l->err = mbs_integ_error_norm(in, in->yerr, in->y1, ynew);
          if (l->err <= in->opt.accuracy) {  // accept: y' at the new point
            mbs_integ_set_state(in, st, l->t + l->h, ynew);
            mbs_integ_get_state(in, st, in->ytmp);
            l->phase = L_ACCEPT;
            return post(l, l->t + l->h, in->ytmp, in->f0);
          }
        } else {
          snprintf(l->why, sizeof(l->why), "%s", mbs_state_error(st)->message);
        }
        goto reject;
      }
      case L_ACCEPT: {
        if (erc != MBS_OK) {
          snprintf(l->why, sizeof(l->why), "%s", mbs_state_error(st)->message);
          goto reject;
        }
        mbs_integ_commit(in, l->t, l->h);
        mbs_integ_accepted(in, l->h, l->err, l->hit_limit);
        l->steps++;
        const int rc = reports_of_step(b, l, t_final, report);
        if (rc) {
          finish(b, l, rc);
          return 0;
        }
        l->phase = L_STEP;
        continue;
      }
      default:
        return 0;
    }
  reject:
    // restore the State at the last good point and shrink the step
    in->stats.rejected++;
    mbs_integ_set_state(in, st, l->t, in->y1);
    l->h = mbs_integ_rejected(in, l->h, l->err);
    l->phase = L_ATTEMPT;
    erc = MBS_OK;
  }
}

// put State i into lane l, ready to start
static void lane_start(lane* l, mbs_state* st, mbs_simulation_result* r, void* user, int idx) {
  memset(r, 0, sizeof(*r));
  r->event = -1;
  l->st = st;
  l->res = r;
  l->user = user;
  l->idx = idx;
  l->rc = MBS_OK;
  l->erc = MBS_OK;
  l->steps = 0;
  l->k_report = 0;
  l->t_start = mbs_state_time(st);
  memset(&l->in->stats, 0, sizeof(l->in->stats));
  l->in->initialized = 0;
  r->t_end = l->t_start;
  l->phase = L_START;
}

int mbs_batch_simulate(mbs_batch_sim* b, const mbs_system* sys, mbs_state* const* states, int n,
                       double t_final, mbs_report_fn report, void* const* users,
                       mbs_simulation_result* results, int* status) {
  if (!b || sys != b->sys || !states || n < 1 || !results || !status) return MBS_ERR_ARGUMENT;
  for (int i = 0; i < n; i++)
    if (!states[i]) return MBS_ERR_ARGUMENT;
  const double wall_start = wall_seconds();
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys);
  for (int i = 0; i < n; i++) status[i] = MBS_OK;
  int next = 0;  // the next State to put into a lane
  for (int k = 0; k < b->lanes; k++) b->L[k].phase = L_DONE;
  for (;;) {
    // every lane runs to its next evaluation; a finished lane takes the next State
    int np = 0;
    for (int k = 0; k < b->lanes; k++) {
      lane* l = &b->L[k];
      for (;;) {
        if (l->phase == L_DONE) {
          if (next >= n) break;
          const int i = next++;
          lane_start(l, states[i], &results[i], users ? users[i] : NULL, i);
          if (!(t_final >= l->t_start) || !isfinite(t_final)) {
            status[i] = MBS_FAIL(&states[i]->err, MBS_ERR_ARGUMENT, mbs_system_name(sys),
                                 "%s: simulation end time %g is before the start time %g",
                                 mbs_system_name(sys), t_final, l->t_start);
            l->phase = L_DONE;
            continue;
          }
        }
        if (advance(b, l, l->erc, t_final, wall_start, report)) {
          b->pending[np] = l->st;
          b->who[np++] = k;
          break;
        }
        status[l->idx] = l->rc;  // finished
      }
    }
    if (np == 0) break;
    const int brc = mbs_batch_forward_dynamics(b->batch, sys, b->pending, np);
    const int refused =
        brc == MBS_ERR_ARGUMENT && mbs_batch_status(b->batch, 0) == MBS_ERR_ARGUMENT;
    for (int j = 0; j < np; j++) {
      lane* l = &b->L[b->who[j]];
      if (refused) {  // cannot happen with a simulator's own batch; said, not hidden
        finish(b, l, MBS_FAIL(&l->st->err, MBS_ERR_INTERNAL, mbs_system_name(sys),
                              "%s: the batched forward dynamics refused the call: %s",
                              mbs_system_name(sys), mbs_batch_error(b->batch)->message));
        status[l->idx] = l->rc;
        continue;
      }
      l->erc = mbs_batch_status(b->batch, j);
      if (l->erc == MBS_OK) {
        memcpy(l->dest, mbs_batch_qdot(b->batch, j), (size_t)nq * sizeof(double));
        memcpy(l->dest + nq, mbs_batch_udot(b->batch, j), (size_t)nu * sizeof(double));
      }
    }
  }
  int rc = MBS_OK;
  for (int i = 0; i < n && rc == MBS_OK; i++) rc = status[i];
  return rc;
}
