// Applied forces split by force element, and the acceleration response of a constrained
// system (see dynamics_split.h).
#include "dynamics_split.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CRESP_RANK_TOL 1e-12   // eigenvalues of Y below this fraction of the largest: dropped

void mbs_split_force(const mbs_system* sys, mbs_state* st, int force, double* F, double* f) {
  memset(F, 0, 6 * (size_t)sys->nbody * sizeof(double));
  memset(f, 0, (size_t)sys->nu * sizeof(double));
  const mbs_force_desc* fd = &sys->force[force];
  mbs_force_ops_of(fd->type)->apply(sys, st, fd, st->param + fd->param_adr, F, f);
}

int mbs_split_generalized(const mbs_system* sys, mbs_state* st, const double* F,
                          const double* f, double* g) {
  const int n = sys->nu;
  if (F) {
    int rc = mbs_calc_jacobian_transpose_times(sys, st, F, g);
    if (rc) return rc;
  } else {
    memset(g, 0, (size_t)n * sizeof(double));
  }
  if (f)
    for (int i = 0; i < n; i++) g[i] += f[i];
  return MBS_OK;
}

struct mbs_cresp {
  int n, mmax, m;
  double* G;       // m x n row-major
  double* MinvGt;  // n x m column-major
  double* Yp;      // m x m
  double* V;       // m x m (eigenvectors)
  double* ev;      // m
  double* t;       // m
  double* work;
  lapack_int lwork;
};

void mbs_cresp_free(mbs_cresp* c) {
  if (!c) return;
  free(c->G);
  free(c->MinvGt);
  free(c->Yp);
  free(c->V);
  free(c->ev);
  free(c->t);
  free(c->work);
  free(c);
}

mbs_cresp* mbs_cresp_create(int nu, int mmax) {
  mbs_cresp* c = calloc(1, sizeof(*c));
  if (!c) return NULL;
  c->n = nu;
  c->mmax = mmax;
  const size_t m = (size_t)(mmax > 0 ? mmax : 1), n = (size_t)(nu > 0 ? nu : 1);
  c->G = malloc(m * n * sizeof(double));
  c->MinvGt = malloc(m * n * sizeof(double));
  c->Yp = malloc(m * m * sizeof(double));
  c->V = malloc(m * m * sizeof(double));
  c->ev = malloc(m * sizeof(double));
  c->t = malloc(m * sizeof(double));
  double q = 0;
  c->lwork = 3 * (lapack_int)m + 16;
  if (LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)m, c->V, (lapack_int)m, c->ev,
                         &q, -1) == 0 && (lapack_int)q > c->lwork)
    c->lwork = (lapack_int)q;
  c->work = malloc((size_t)c->lwork * sizeof(double));
  if (!c->G || !c->MinvGt || !c->Yp || !c->V || !c->ev || !c->t || !c->work) {
    mbs_cresp_free(c);
    return NULL;
  }
  return c;
}

int mbs_cresp_prepare(mbs_cresp* c, const mbs_system* sys, mbs_state* st, const double* Gx,
                      int mx, int* mout) {
  int rc = mbs_realize_position(sys, st);
  if (rc) return rc;
  const int n = c->n, ms = st->ncon_eq, m = ms + (Gx ? mx : 0);
  c->m = 0;
  if (mout) *mout = m;
  if (m == 0) return MBS_OK;
  if (m > c->mmax)
    return MBS_FAIL(&st->err, MBS_ERR_INTERNAL, sys->name,
                    "%s: %d constraint equations, more than the %d prepared for", sys->name, m,
                    c->mmax);
  if (ms > 0 && (rc = mbs_calc_constraint_jacobian(sys, st, c->G))) return rc;
  if (m > ms) memcpy(c->G + (size_t)ms * n, Gx, (size_t)(m - ms) * n * sizeof(double));
  for (int j = 0; j < m; j++)
    if ((rc = mbs_calc_mass_matrix_inverse_times(sys, st, c->G + (size_t)j * n,
                                                 c->MinvGt + (size_t)j * n)))
      return rc;
  // Y = G M^-1 G^T, symmetric positive semi-definite; its pseudo-inverse by eigenvalues
  for (int j = 0; j < m; j++)
    for (int i = 0; i <= j; i++) {
      const double* gi = c->G + (size_t)i * n;
      const double* xj = c->MinvGt + (size_t)j * n;
      double s = 0;
      for (int k = 0; k < n; k++) s += gi[k] * xj[k];
      c->V[(size_t)j * m + i] = c->V[(size_t)i * m + j] = s;
    }
  if (LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'V', 'U', m, c->V, m, c->ev, c->work, c->lwork) != 0)
    return MBS_FAIL(&st->err, MBS_ERR_SINGULAR, sys->name,
                    "%s: the constraint equations' mass matrix could not be factored",
                    sys->name);
  const double emax = c->ev[m - 1];
  memset(c->Yp, 0, (size_t)m * m * sizeof(double));
  for (int k = 0; k < m; k++) {
    if (!(c->ev[k] > CRESP_RANK_TOL * emax)) continue;
    const double s = 1 / c->ev[k];
    const double* vk = c->V + (size_t)k * m;
    for (int j = 0; j < m; j++)
      for (int i = 0; i < m; i++) c->Yp[(size_t)j * m + i] += s * vk[i] * vk[j];
  }
  c->m = m;
  return MBS_OK;
}

void mbs_cresp_project(mbs_cresp* c, double* a, const double* e, double* lam) {
  const int n = c->n, m = c->m;
  if (m == 0) return;
  double* t = c->t;
  if (e) {
    memcpy(t, e, (size_t)m * sizeof(double));
  } else {
    for (int i = 0; i < m; i++) {
      const double* gi = c->G + (size_t)i * n;
      double s = 0;
      for (int k = 0; k < n; k++) s += gi[k] * a[k];
      t[i] = s;
    }
  }
  for (int j = 0; j < m; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s += c->Yp[(size_t)i * m + j] * t[i];
    if (lam) lam[j] = s;
    const double* xj = c->MinvGt + (size_t)j * n;
    for (int k = 0; k < n; k++) a[k] -= s * xj[k];
  }
}
