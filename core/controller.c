// Controllers (include/mbs/controller.h): PD tracking of coordinates with a neural delay read
// from the State's history of accepted steps, and user callbacks; the controls in effect.
#include "mbs/controller.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

// the history of one delayed coordinate: [count, head, then (t, q, u) per sample] in the State;
// samples in time order from the oldest at (head - count) mod N to the newest at head - 1
#define HIST_SAMPLES 1024
#define HIST_DOUBLES (2 + 3 * HIST_SAMPLES)

enum { CTRL_PD = 0, CTRL_CALLBACK };
enum { PD_KP = 0, PD_KD, PD_REFERENCE, PD_DELAY, PD_SCALE, PD_KD_SCALE, PD_WINDOW, PD_NPARAM };
// the PD parameters' names (/controllerset/<name>/<parameter>); all but the reference are >= 0
static const char* const pd_param_names[PD_NPARAM] = {"kp",    "kd",       "reference", "delay",
                                                      "scale", "kd_scale", "window"};

typedef struct ctrl_desc {
  char* name;
  int kind;
  int q, u;                 // PD: the coordinate (nterm 0)
  int nterm;                // PD: or a combination of coordinates
  int* tq;                  // their places in q, then in u (2 nterm)
  int coef_adr;             // their coefficients in the State's parameters
  int gain_adr;             // PD: the outputs' gains in the State's parameters
  int param_adr;            // PD: kp, kd, reference, delay in the State's parameters
  int nout;
  mbs_pd_output* out;
  int hist_adr;             // PD: its history in st->ctrl_hist
  mbs_controller_fn fn;     // callback
  void* user;
} ctrl_desc;

struct mbs_controller_data {
  int n, cap;
  ctrl_desc* c;
};

void mbs_controller_data_free(struct mbs_controller_data* d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) {
    free(d->c[i].name);
    free(d->c[i].out);
    free(d->c[i].tq);
  }
  free(d->c);
  free(d);
}

static int fail(mbs_system* sys, const char* name, const char* fmt, double v) {
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "controller '%s'", name ? name : "?");
  char msg[256];
  snprintf(msg, sizeof(msg), fmt, v);
  return mbs_error_set(&sys->err, MBS_ERR_ARGUMENT, "mbs_system_add_controller", __LINE__, comp,
                       "controller '%s': %s", name ? name : "?", msg);
}

static ctrl_desc* new_controller(mbs_system* sys, const char* name, int* rc) {
  *rc = mbs_system_check_building(sys, "mbs_system_add_controller");
  if (*rc) return NULL;
  if (!name || !*name) {
    *rc = fail(sys, name, "a controller needs a name%.0f", 0);
    return NULL;
  }
  if (mbs_controller_find(sys, name) >= 0) {
    *rc = fail(sys, name, "a controller of that name exists already%.0f", 0);
    return NULL;
  }
  if (!sys->controllers && !(sys->controllers = calloc(1, sizeof(*sys->controllers)))) {
    *rc = mbs_system_no_memory(sys, "mbs_system_add_controller");
    return NULL;
  }
  struct mbs_controller_data* d = sys->controllers;
  if (d->n == d->cap) {
    const int cap = d->cap ? 2 * d->cap : 8;
    ctrl_desc* c = realloc(d->c, (size_t)cap * sizeof(*c));
    if (!c) {
      *rc = mbs_system_no_memory(sys, "mbs_system_add_controller");
      return NULL;
    }
    d->c = c;
    d->cap = cap;
  }
  ctrl_desc* c = &d->c[d->n];
  memset(c, 0, sizeof(*c));
  c->hist_adr = -1;
  if (!(c->name = mbs_format_string("%s", name))) {
    *rc = mbs_system_no_memory(sys, "mbs_system_add_controller");
    return NULL;
  }
  d->n++;
  *rc = MBS_OK;
  return c;
}

int mbs_system_add_pd_controller(mbs_system* sys, const mbs_pd_controller_spec* s) {
  if (!sys) return MBS_ERR_ARGUMENT;
  if (!s) return fail(sys, NULL, "no specification%.0f", 0);
  const char* nm = s->name;
  if (s->nterm < 0 || (s->nterm > 0 && !s->terms))
    return fail(sys, nm, "%g terms without their list", s->nterm);
  if (s->nterm == 0 &&
      (s->q_index < 0 || s->q_index >= sys->nq || s->u_index < 0 || s->u_index >= sys->nu))
    return fail(sys, nm, "its coordinate is not one of the system's (q index %g)", s->q_index);
  for (int k = 0; k < s->nterm; k++) {
    const mbs_pd_term* t = &s->terms[k];
    if (t->q_index < 0 || t->q_index >= sys->nq || t->u_index < 0 || t->u_index >= sys->nu)
      return fail(sys, nm, "term %g: its coordinate is not one of the system's", k);
    if (!isfinite(t->coefficient)) return fail(sys, nm, "term %g: its coefficient is not finite", k);
  }
  if (!(s->kp >= 0) || !isfinite(s->kp)) return fail(sys, nm, "kp %g must be >= 0", s->kp);
  if (!(s->kd >= 0) || !isfinite(s->kd)) return fail(sys, nm, "kd %g must be >= 0", s->kd);
  if (!(s->delay >= 0) || !isfinite(s->delay))
    return fail(sys, nm, "delay %g must be >= 0", s->delay);
  if (!(s->window >= 0) || !isfinite(s->window))
    return fail(sys, nm, "window %g must be >= 0", s->window);
  if (!isfinite(s->reference)) return fail(sys, nm, "reference %g is not finite", s->reference);
  if (s->scale_set && (!(s->scale >= 0) || !isfinite(s->scale)))
    return fail(sys, nm, "scale %g must be >= 0", s->scale);
  if (s->noutput < 1 || !s->outputs) return fail(sys, nm, "it drives no control%.0f", 0);
  for (int k = 0; k < s->noutput; k++) {
    const mbs_pd_output* o = &s->outputs[k];
    if (o->control < 0 || o->control >= sys->ncontrol)
      return fail(sys, nm, "output to control %g, which does not exist", o->control);
    if (!isfinite(o->gain) || !isfinite(o->offset) || isnan(o->lower) || isnan(o->upper) ||
        o->lower > o->upper)
      return fail(sys, nm, "output %g: gain and offset must be finite, lower <= upper", k);
  }
  int rc;
  ctrl_desc* c = new_controller(sys, nm, &rc);
  if (!c) return rc;
  c->kind = CTRL_PD;
  c->q = s->q_index;
  c->u = s->u_index;
  c->nout = s->noutput;
  if (!(c->out = malloc((size_t)s->noutput * sizeof(*c->out))))
    return mbs_system_no_memory(sys, __func__);
  memcpy(c->out, s->outputs, (size_t)s->noutput * sizeof(*c->out));
  const double p[PD_NPARAM] = {s->kp, s->kd, s->reference, s->delay,
                               s->scale_set ? s->scale : 1.0, 1.0, s->window};
  static const char* const pu[PD_NPARAM] = {"N m/rad or N/m", "N m s/rad or N s/m", "rad or m",
                                            "s", "1", "1", "s"};
  c->param_adr = mbs_system_add_params(sys, p, PD_NPARAM);
  if (c->param_adr < 0) return c->param_adr;
  for (int k = 0; k < PD_NPARAM; k++) {
    char* path = mbs_format_string("/controllerset/%s/%s", nm, pd_param_names[k]);
    if (!path) return mbs_system_no_memory(sys, __func__);
    if ((rc = mbs_system_add_param_path(sys, path, c->param_adr + k, 1, pu[k]))) return rc;
  }
  {  // the outputs' gains, instance parameters too
    double* g = malloc((size_t)s->noutput * sizeof(*g));
    if (!g) return mbs_system_no_memory(sys, __func__);
    for (int k = 0; k < s->noutput; k++) g[k] = s->outputs[k].gain;
    c->gain_adr = mbs_system_add_params(sys, g, s->noutput);
    free(g);
    if (c->gain_adr < 0) return c->gain_adr;
    char* path = mbs_format_string("/controllerset/%s/gains", nm);
    if (!path) return mbs_system_no_memory(sys, __func__);
    if ((rc = mbs_system_add_param_path(sys, path, c->gain_adr, s->noutput, "1"))) return rc;
  }
  if (s->nterm > 0) {
    double* coef = malloc((size_t)s->nterm * sizeof(*coef));
    if (!coef || !(c->tq = malloc(2 * (size_t)s->nterm * sizeof(*c->tq)))) {
      free(coef);
      return mbs_system_no_memory(sys, __func__);
    }
    for (int k = 0; k < s->nterm; k++) {
      c->tq[k] = s->terms[k].q_index;
      c->tq[s->nterm + k] = s->terms[k].u_index;
      coef[k] = s->terms[k].coefficient;
    }
    c->nterm = s->nterm;
    c->coef_adr = mbs_system_add_params(sys, coef, s->nterm);
    free(coef);
    if (c->coef_adr < 0) return c->coef_adr;
    char* path = mbs_format_string("/controllerset/%s/coefficients", nm);
    if (!path) return mbs_system_no_memory(sys, __func__);
    if ((rc = mbs_system_add_param_path(sys, path, c->coef_adr, s->nterm, "1"))) return rc;
  }
  c->hist_adr = sys->nctrl_hist;
  sys->nctrl_hist += HIST_DOUBLES;
  return sys->controllers->n - 1;
}

int mbs_system_add_controller_callback(mbs_system* sys, const char* name, mbs_controller_fn fn,
                                       void* user) {
  if (!sys) return MBS_ERR_ARGUMENT;
  if (!fn) return fail(sys, name, "no function%.0f", 0);
  int rc;
  ctrl_desc* c = new_controller(sys, name, &rc);
  if (!c) return rc;
  c->kind = CTRL_CALLBACK;
  c->fn = fn;
  c->user = user;
  return sys->controllers->n - 1;
}

int mbs_system_ncontroller(const mbs_system* sys) {
  return sys && sys->controllers ? sys->controllers->n : 0;
}

const char* mbs_controller_name(const mbs_system* sys, int i) {
  return i >= 0 && i < mbs_system_ncontroller(sys) ? sys->controllers->c[i].name : NULL;
}

int mbs_controller_find(const mbs_system* sys, const char* name) {
  for (int i = 0; name && i < mbs_system_ncontroller(sys); i++)
    if (!strcmp(sys->controllers->c[i].name, name)) return i;
  return -1;
}

int mbs_controllers_realize_instance(const mbs_system* sys, mbs_state* st) {
  for (int i = 0; i < mbs_system_ncontroller(sys); i++) {
    const ctrl_desc* c = &sys->controllers->c[i];
    if (c->kind != CTRL_PD) continue;
    const double* p = st->param + c->param_adr;
    int bad = -1;
    for (int k = 0; k < PD_NPARAM && bad < 0; k++)
      if (!isfinite(p[k]) || (k != PD_REFERENCE && !(p[k] >= 0))) bad = k;
    for (int k = 0; bad < 0 && k < c->nout; k++)
      if (!isfinite(st->param[c->gain_adr + k])) {
        char comp[MBS_ERROR_COMPONENT_LEN];
        snprintf(comp, sizeof(comp), "controller '%s'", c->name);
        return mbs_error_set(&st->err, MBS_ERR_PARAMETER, "mbs_realize_instance", __LINE__,
                             comp, "controller '%s': gain %d = %g is not finite", c->name, k,
                             st->param[c->gain_adr + k]);
      }
    for (int k = 0; bad < 0 && k < c->nterm; k++)
      if (!isfinite(st->param[c->coef_adr + k])) {
        char comp[MBS_ERROR_COMPONENT_LEN];
        snprintf(comp, sizeof(comp), "controller '%s'", c->name);
        return mbs_error_set(&st->err, MBS_ERR_PARAMETER, "mbs_realize_instance", __LINE__,
                             comp, "controller '%s': coefficient %d = %g is not finite", c->name,
                             k, st->param[c->coef_adr + k]);
      }
    if (bad < 0) continue;
    char comp[MBS_ERROR_COMPONENT_LEN];
    snprintf(comp, sizeof(comp), "controller '%s'", c->name);
    return mbs_error_set(&st->err, MBS_ERR_PARAMETER, "mbs_realize_instance", __LINE__, comp,
                         "controller '%s': %s = %g (kp, kd, delay, window, scales >= 0, all "
                         "finite)", c->name, pd_param_names[bad], p[bad]);
  }
  return MBS_OK;
}

//---------------------------------- history ----------------------------------------------------

// what a PD controller senses now: its coordinate and rate, or their combination
static void sensed(const ctrl_desc* c, const mbs_state* st, double* y, double* yd) {
  if (c->nterm == 0) {
    *y = st->q[c->q];
    *yd = st->u[c->u];
    return;
  }
  const double* w = st->param + c->coef_adr;
  double a = 0, b = 0;
  for (int k = 0; k < c->nterm; k++) {
    a += w[k] * st->q[c->tq[k]];
    b += w[k] * st->u[c->tq[c->nterm + k]];
  }
  *y = a;
  *yd = b;
}

static double* sample(double* h, int i) { return h + 2 + 3 * i; }

// the coordinate at time tau from the history h (q by cubic Hermite with u as its rate, u
// linearly); the present values when there is none yet
static void delayed(const double* h, double tau, double q_now, double u_now, double* q,
                    double* u) {
  const int count = (int)h[0], head = (int)h[1];
  if (count <= 0) {
    *q = q_now;
    *u = u_now;
    return;
  }
  const int first = (head - count + HIST_SAMPLES) % HIST_SAMPLES;
  const double* s0 = sample((double*)h, first);
  const double* sn = sample((double*)h, (head - 1 + HIST_SAMPLES) % HIST_SAMPLES);
  if (tau <= s0[0]) {  // before the record began: the values then
    *q = s0[1];
    *u = s0[2];
    return;
  }
  if (tau >= sn[0]) {  // past the newest (a step longer than the delay): along its rate
    *q = sn[1] + sn[2] * (tau - sn[0]);
    *u = sn[2];
    return;
  }
  int lo = 0, hi = count - 1;  // sample indices in time order
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (sample((double*)h, (first + mid) % HIST_SAMPLES)[0] <= tau) lo = mid;
    else hi = mid;
  }
  const double* a = sample((double*)h, (first + lo) % HIST_SAMPLES);
  const double* b = sample((double*)h, (first + hi) % HIST_SAMPLES);
  const double dt = b[0] - a[0];
  const double s = (tau - a[0]) / dt, s2 = s * s, s3 = s2 * s;
  *q = (2 * s3 - 3 * s2 + 1) * a[1] + (s3 - 2 * s2 + s) * dt * a[2] + (-2 * s3 + 3 * s2) * b[1] +
       (s3 - s2) * dt * b[2];
  *u = a[2] + s * (b[2] - a[2]);
}

int mbs_controllers_record(const mbs_system* sys, mbs_state* st) {
  if (!sys || !st) return MBS_ERR_ARGUMENT;
  const double t = st->vars[0];
  for (int i = 0; i < mbs_system_ncontroller(sys); i++) {
    const ctrl_desc* c = &sys->controllers->c[i];
    if (c->kind != CTRL_PD) continue;
    double* h = st->ctrl_hist + c->hist_adr;
    int count = (int)h[0], head = (int)h[1];
    // drop samples at or after t (a restart from an earlier time)
    while (count > 0 && sample(h, (head - 1 + HIST_SAMPLES) % HIST_SAMPLES)[0] >= t) {
      head = (head - 1 + HIST_SAMPLES) % HIST_SAMPLES;
      count--;
    }
    // keep samples at least delay/256 apart (the newest may be closer, and is replaced)
    const double spacing =
        (st->param[c->param_adr + PD_DELAY] + st->param[c->param_adr + PD_WINDOW]) / 256;
    if (count >= 2) {
      const double* prev = sample(h, (head - 2 + 2 * HIST_SAMPLES) % HIST_SAMPLES);
      if (t - prev[0] < spacing) {
        head = (head - 1 + HIST_SAMPLES) % HIST_SAMPLES;
        count--;
      }
    }
    double* s = sample(h, head);
    s[0] = t;
    sensed(c, st, &s[1], &s[2]);
    head = (head + 1) % HIST_SAMPLES;
    if (count < HIST_SAMPLES) count++;
    h[0] = count;
    h[1] = head;
  }
  return MBS_OK;
}

double mbs_controllers_max_step(const mbs_system* sys, const mbs_state* st) {
  double m = INFINITY;
  for (int i = 0; sys && st && i < mbs_system_ncontroller(sys); i++) {
    const ctrl_desc* c = &sys->controllers->c[i];
    if (c->kind != CTRL_PD) continue;
    const double* p = st->param + c->param_adr;
    // a controller whose output cannot depend on what it senses does not look back
    if (p[PD_SCALE] == 0 || (p[PD_KP] == 0 && (p[PD_KD] == 0 || p[PD_KD_SCALE] == 0))) continue;
    // the latest time it looks back to: t - delay, or without a delay t - window / 2
    const double d = p[PD_DELAY] > 0 ? p[PD_DELAY] : 0.5 * p[PD_WINDOW];
    if (d > 0 && d < m) m = d;
  }
  return m;
}

//---------------------------------- controls in effect -----------------------------------------

void mbs_controllers_apply(const mbs_system* sys, mbs_state* st, double* controls) {
  const double t = st->vars[0];
  for (int i = 0; i < mbs_system_ncontroller(sys); i++) {
    const ctrl_desc* c = &sys->controllers->c[i];
    if (c->kind == CTRL_CALLBACK) {
      c->fn(sys, st, controls, c->user);
      continue;
    }
    const double* p = st->param + c->param_adr;
    double q, u;
    sensed(c, st, &q, &u);
    const double* h = st->ctrl_hist + c->hist_adr;
    const double d = p[PD_DELAY], w = p[PD_WINDOW];
    if (w > 0) {  // the means over the window: q by Simpson's rule, u = its change / w
      double q1 = q, u1 = u, qm, q0, unused;
      if (d > 0) delayed(h, t - d, q, u, &q1, &u1);
      delayed(h, t - d - w / 2, q, u, &qm, &unused);
      delayed(h, t - d - w, q, u, &q0, &unused);
      q = (q0 + 4 * qm + q1) / 6;
      u = (q1 - q0) / w;
    } else if (d > 0) {
      delayed(h, t - d, q, u, &q, &u);
    }
    const double e =
        p[PD_SCALE] * (p[PD_KP] * (p[PD_REFERENCE] - q) - p[PD_KD_SCALE] * p[PD_KD] * u);
    for (int k = 0; k < c->nout; k++) {
      const mbs_pd_output* o = &c->out[k];
      double v = o->offset + st->param[c->gain_adr + k] * e;
      if (v < o->lower) v = o->lower;
      if (v > o->upper) v = o->upper;
      controls[o->control] += v;
    }
  }
}

const double* mbs_get_controls(const mbs_system* sys, mbs_state* st) {
  if (!sys || !st || mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__)) return NULL;
  return st->control_eff;
}
