// Classical fourth-order Runge-Kutta step on y = (q, u, z), y' = (N(q) u, u'(t, q, u, z),
// z'(t, q, u, z)).
#include <string.h>

#include "model_impl.h"

// y' at the State's current values into dq (nq), du (nu) and dz (nz, right after du)
static int derivatives(const mbs_system* sys, mbs_state* st, double* dq, double* du) {
  const int rc = mbs_realize_acceleration(sys, st);
  if (rc) return rc;
  memcpy(dq, st->qdot, (size_t)sys->nq * sizeof(double));
  memcpy(du, st->udot, (size_t)sys->nu * sizeof(double));
  if (sys->nz) memcpy(du + sys->nu, st->zdot, (size_t)sys->nz * sizeof(double));
  return MBS_OK;
}

// q = q0 + a dq, u = u0 + a du, z = z0 + a dz (z0 and dz right after u0 and du), t = t0 + dt
static void set_stage(mbs_state* st, const mbs_system* sys, const double* q0, const double* u0,
                      double t0, double dt, double a, const double* dq, const double* du) {
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  for (int i = 0; i < sys->nq; i++) q[i] = q0[i] + a * dq[i];
  for (int i = 0; i < sys->nu; i++) u[i] = u0[i] + a * du[i];
  if (sys->nz) {
    double* z = mbs_state_upd_z(st);
    for (int i = 0; i < sys->nz; i++) z[i] = u0[sys->nu + i] + a * du[sys->nu + i];
  }
  mbs_state_set_time(st, t0 + dt);
}

int mbs_step_rk4(const mbs_system* sys, mbs_state* st, double h) {
  if (!sys || !st) return MBS_ERR_ARGUMENT;
  if (!(h > 0) || !isfinite(h))
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, sys->name, "%s: step size %g must be positive",
                    __func__, h);
  const int nq = sys->nq, nu = sys->nu;
  const size_t mark = mbs_stack_mark(st);
  const size_t n = (size_t)(nq + nu + sys->nz);
  double* y0 = MBS_STACK_ALLOC(st, n, double);
  double* k = MBS_STACK_ALLOC(st, 4 * n, double);
  if (!y0 || !k) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  double* q0 = y0;
  double* u0 = y0 + nq;
  const double t0 = st->vars[0];
  memcpy(q0, st->q, (size_t)nq * sizeof(double));
  memcpy(u0, st->u, (size_t)nu * sizeof(double));
  if (sys->nz) memcpy(u0 + nu, st->z, (size_t)sys->nz * sizeof(double));
  double* k1 = k;
  double* k2 = k + n;
  double* k3 = k + 2 * n;
  double* k4 = k + 3 * n;
  int rc = derivatives(sys, st, k1, k1 + nq);
  if (!rc) {
    set_stage(st, sys, q0, u0, t0, 0.5 * h, 0.5 * h, k1, k1 + nq);
    rc = derivatives(sys, st, k2, k2 + nq);
  }
  if (!rc) {
    set_stage(st, sys, q0, u0, t0, 0.5 * h, 0.5 * h, k2, k2 + nq);
    rc = derivatives(sys, st, k3, k3 + nq);
  }
  if (!rc) {
    set_stage(st, sys, q0, u0, t0, h, h, k3, k3 + nq);
    rc = derivatives(sys, st, k4, k4 + nq);
  }
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  double* z = sys->nz ? mbs_state_upd_z(st) : NULL;
  if (rc) {  // restore the values from before the step
    memcpy(q, q0, (size_t)nq * sizeof(double));
    memcpy(u, u0, (size_t)nu * sizeof(double));
    if (z) memcpy(z, u0 + nu, (size_t)sys->nz * sizeof(double));
    mbs_state_set_time(st, t0);
    mbs_stack_release(st, mark);
    return rc;
  }
  const double w = h / 6;
  for (size_t i = 0; i < n; i++) {
    const double d = w * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    if (i < (size_t)nq) q[i] = q0[i] + d;
    else if (i < (size_t)(nq + nu)) u[i - nq] = u0[i - nq] + d;
    else z[i - nq - nu] = u0[i - nq] + d;
  }
  mbs_state_set_time(st, t0 + h);
  mbs_state_normalize_q(sys, st);
  mbs_stack_release(st, mark);
  return MBS_OK;
}
