// Least-distance programming with equality constraints and bounds (see least_distance.h).
#include "least_distance.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LSD_RANK_TOL 1e-10      // |R_kk| below this fraction of |R_00|: a dependent row
#define LSD_CONSIST_TOL 1e-9    // a dependent row's residual (rows scaled to unit norm)
#define LSD_BOUND_TOL 1e-9      // slack allowed on the bounds (relative to the problem's scale)
#define LSD_NEED_TOL 1e-13      // x_p within this (relative) of its bounds needs no LDP
#define LSD_MULT_TOL 1e-9       // relative slack allowed on the bound multipliers' signs

struct mbs_lsd {
  int nmax, mmax;
  // rows: unit-norm scaling and the rows kept (nonzero)
  double* rscale;    // mmax
  int* rows;         // mmax
  double* bs;        // mmax: scaled right-hand side of the kept rows
  // QR of A^T (n x m') with column pivoting
  double* At;        // nmax x mmax
  lapack_int* jpvt;  // mmax
  double* tau;       // max(nmax, mmax)
  double* Q;         // nmax x nmax
  double* w1;        // mmax
  double* xp;        // nmax
  double* lam;       // mmax
  // LDP / NNLS: E = [G^T; h^T], (k+1) x mI
  int* con_var;      // 2 nmax: the variable of each inequality
  int* con_upper;    // 2 nmax: 1 for an upper bound
  double* h;         // 2 nmax
  double* E;         // (nmax + 1) x 2 nmax
  double* u;         // 2 nmax
  double* z;         // 2 nmax
  double* wv;        // 2 nmax
  double* r;         // nmax + 1
  int* pset;         // 2 nmax: 1 if in the passive (positive) set
  int* pidx;         // 2 nmax
  unsigned char* rejected;  // 2 nmax
  double* Ls;        // (nmax + 1) x 2 nmax: copy of E's passive columns for the LS solves
  double* rhs;       // max(nmax + 1, 2 nmax)
  double* v;         // nmax
  // polish
  int* active;       // nmax: -1 lower, +1 upper, 0 free
  int* freev;        // nmax
  double* bf;        // mmax
  double* xf;        // nmax
  double* y;         // nmax
  double* ldx;       // nmax: the least-distance solution before polishing
  // LAPACK
  double* work;
  lapack_int lwork;
};

void mbs_lsd_free(mbs_lsd* w) {
  if (!w) return;
  free(w->rscale); free(w->rows); free(w->bs); free(w->At); free(w->jpvt); free(w->tau);
  free(w->Q); free(w->w1); free(w->xp); free(w->lam); free(w->con_var); free(w->con_upper);
  free(w->h); free(w->E); free(w->u); free(w->z); free(w->wv); free(w->r); free(w->pset);
  free(w->pidx); free(w->rejected); free(w->Ls); free(w->rhs); free(w->v); free(w->active);
  free(w->freev); free(w->bf); free(w->xf); free(w->y); free(w->ldx); free(w->work);
  free(w);
}

static size_t zmax(size_t a, size_t b) { return a > b ? a : b; }

mbs_lsd* mbs_lsd_create(int nmax, int mmax) {
  if (nmax < 1) nmax = 1;
  if (mmax < 1) mmax = 1;
  mbs_lsd* w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->nmax = nmax;
  w->mmax = mmax;
  const size_t n = (size_t)nmax, m = (size_t)mmax, mi = 2 * n;
  w->rscale = malloc(m * sizeof(double));
  w->rows = malloc(m * sizeof(int));
  w->bs = malloc(m * sizeof(double));
  w->At = malloc(n * m * sizeof(double));
  w->jpvt = malloc(m * sizeof(lapack_int));
  w->tau = malloc(zmax(n, m) * sizeof(double));
  w->Q = malloc(n * n * sizeof(double));
  w->w1 = malloc(m * sizeof(double));
  w->xp = malloc(n * sizeof(double));
  w->lam = malloc(m * sizeof(double));
  w->con_var = malloc(mi * sizeof(int));
  w->con_upper = malloc(mi * sizeof(int));
  w->h = malloc(mi * sizeof(double));
  w->E = malloc((n + 1) * mi * sizeof(double));
  w->u = malloc(mi * sizeof(double));
  w->z = malloc(mi * sizeof(double));
  w->wv = malloc(mi * sizeof(double));
  w->r = malloc((n + 1) * sizeof(double));
  w->pset = malloc(mi * sizeof(int));
  w->pidx = malloc(mi * sizeof(int));
  w->rejected = malloc(mi);
  w->Ls = malloc((n + 1) * mi * sizeof(double));
  w->rhs = malloc(zmax(n + 1, mi) * sizeof(double));
  w->v = malloc(n * sizeof(double));
  w->active = malloc(n * sizeof(int));
  w->freev = malloc(n * sizeof(int));
  w->bf = malloc(m * sizeof(double));
  w->xf = malloc(n * sizeof(double));
  w->y = malloc(n * sizeof(double));
  w->ldx = malloc(n * sizeof(double));
  // workspace: the largest of the LAPACK queries for these sizes
  double q = 0;
  lapack_int lw = 64;
  if (LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, nmax, mmax, w->At, nmax, w->jpvt, w->tau, &q, -1) ==
          0 && (lapack_int)q > lw)
    lw = (lapack_int)q;
  if (LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, nmax, nmax, nmax < mmax ? nmax : mmax, w->Q, nmax,
                          w->tau, &q, -1) == 0 && (lapack_int)q > lw)
    lw = (lapack_int)q;
  if (LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'N', nmax, 1, nmax < mmax ? nmax : mmax, w->At,
                          nmax, w->tau, w->xp, nmax, &q, -1) == 0 && (lapack_int)q > lw)
    lw = (lapack_int)q;
  if (LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', nmax + 1, 2 * nmax, 1, w->Ls, nmax + 1, w->rhs,
                         (lapack_int)zmax(n + 1, mi), &q, -1) == 0 && (lapack_int)q > lw)
    lw = (lapack_int)q;
  w->lwork = lw + 3 * (nmax + mmax) + 64;
  w->work = malloc((size_t)w->lwork * sizeof(double));
  if (!w->rscale || !w->rows || !w->bs || !w->At || !w->jpvt || !w->tau || !w->Q || !w->w1 ||
      !w->xp || !w->lam || !w->con_var || !w->con_upper || !w->h || !w->E || !w->u || !w->z ||
      !w->wv || !w->r || !w->pset || !w->pidx || !w->rejected || !w->Ls || !w->rhs || !w->v ||
      !w->active || !w->freev || !w->bf || !w->xf || !w->y || !w->ldx || !w->work) {
    mbs_lsd_free(w);
    return NULL;
  }
  return w;
}

// The minimum-norm solution of the kept rows (w->rows, mk of them, already scaled by
// w->rscale into w->bs) restricted to the variables cols[0..nc) (all n when cols is NULL):
// x (nc) and, if lam, the scaled rows' multipliers (mk, x = A^T lam). With want_null the
// orthonormal basis of the null space is left in w->Q's columns rank..nc-1 (nc x nc).
// Returns the rank, or -1 with *bad (a row index of A) when a dependent row is inconsistent,
// or -2 when LAPACK fails.
static int min_norm(mbs_lsd* w, int mk, int nc, const int* cols, const double* A, int lda,
                    double* x, double* lam, int want_null, int* bad) {
  double* At = w->At;
  for (int i = 0; i < mk; i++) {
    const int row = w->rows[i];
    const double s = w->rscale[row];
    for (int j = 0; j < nc; j++) {
      const int c = cols ? cols[j] : j;
      At[(size_t)i * nc + j] = A[(size_t)c * lda + row] * s;
    }
  }
  const int kref = nc < mk ? nc : mk;
  int r = 0;
  if (mk > 0 && nc > 0) {
    for (int i = 0; i < mk; i++) w->jpvt[i] = 0;
    if (LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, nc, mk, At, nc, w->jpvt, w->tau, w->work,
                            w->lwork) != 0)
      return -2;
    const double r00 = fabs(At[0]);
    while (r < kref && fabs(At[(size_t)r * nc + r]) > LSD_RANK_TOL * (r00 > 1 ? r00 : 1)) r++;
  }
  // R11^T w1 = (P^T b)_1 by forward substitution; then the dependent rows must agree
  for (int k = 0; k < r; k++) {
    double s = w->bs[w->jpvt[k] - 1];
    for (int i = 0; i < k; i++) s -= At[(size_t)k * nc + i] * w->w1[i];
    w->w1[k] = s / At[(size_t)k * nc + k];
  }
  for (int k = r; k < mk; k++) {
    double s = w->bs[w->jpvt[k] - 1];
    for (int i = 0; i < r; i++) s -= At[(size_t)k * nc + i] * w->w1[i];
    if (fabs(s) > LSD_CONSIST_TOL * (1 + fabs(w->bs[w->jpvt[k] - 1]))) {
      *bad = w->rows[w->jpvt[k] - 1];
      return -1;
    }
  }
  // x = Q [w1; 0]
  for (int j = 0; j < nc; j++) x[j] = j < r ? w->w1[j] : 0.0;
  if (r > 0 &&
      LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'N', nc, 1, kref, At, nc, w->tau, x, nc,
                          w->work, w->lwork) != 0)
    return -2;
  if (lam) {
    // P^T lam = [R11^-1 w1; 0]
    for (int k = r - 1; k >= 0; k--) {
      double s = w->w1[k];
      for (int i = k + 1; i < r; i++) s -= At[(size_t)i * nc + k] * w->y[i];
      w->y[k] = s / At[(size_t)k * nc + k];
    }
    for (int k = 0; k < mk; k++) lam[w->jpvt[k] - 1] = k < r ? w->y[k] : 0.0;
  }
  if (want_null && nc > 0) {
    if (kref > 0) {
      for (int j = 0; j < kref; j++)
        memcpy(w->Q + (size_t)j * nc, At + (size_t)j * nc, (size_t)nc * sizeof(double));
      if (LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, nc, nc, kref, w->Q, nc, w->tau, w->work,
                              w->lwork) != 0)
        return -2;
    } else {
      memset(w->Q, 0, (size_t)nc * nc * sizeof(double));
      for (int j = 0; j < nc; j++) w->Q[(size_t)j * nc + j] = 1;
    }
  }
  return r;
}

// Non-negative least squares (Lawson & Hanson, ch. 23): u >= 0 minimizing ||E u - f||, E
// (mr x nc, column-major, ld mr). Leaves the residual f - E u in w->r. Returns 0, or -1 when
// the iteration limit is reached or LAPACK fails.
static int nnls(mbs_lsd* w, int mr, int nc, const double* E, const double* f) {
  double enorm = 0, fnorm = 0;
  for (size_t i = 0; i < (size_t)mr * nc; i++) enorm += E[i] * E[i];
  for (int i = 0; i < mr; i++) fnorm += f[i] * f[i];
  const double tol = 10 * DBL_EPSILON * sqrt(enorm) * (sqrt(fnorm) + 1) * (mr + nc);
  for (int j = 0; j < nc; j++) {
    w->u[j] = 0;
    w->pset[j] = 0;
    w->rejected[j] = 0;
  }
  memcpy(w->r, f, (size_t)mr * sizeof(double));
  int np = 0, iter = 0;
  const int maxit = 5 * (nc + mr) + 50;
  for (;;) {
    // w = E^T r; the most positive component outside the passive set enters it
    int t = -1;
    double best = tol;
    for (int j = 0; j < nc; j++) {
      if (w->pset[j] || w->rejected[j]) continue;
      double s = 0;
      const double* ej = E + (size_t)j * mr;
      for (int i = 0; i < mr; i++) s += ej[i] * w->r[i];
      w->wv[j] = s;
      if (s > best) {
        best = s;
        t = j;
      }
    }
    if (t < 0 || np >= mr) break;
    w->pset[t] = 1;
    w->pidx[np++] = t;
    int entered = 1;
    for (;;) {
      if (++iter > maxit) return -1;
      // z_P = argmin ||E_P z - f||
      for (int k = 0; k < np; k++)
        memcpy(w->Ls + (size_t)k * mr, E + (size_t)w->pidx[k] * mr, (size_t)mr * sizeof(double));
      memcpy(w->rhs, f, (size_t)mr * sizeof(double));
      if (LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', mr, np, 1, w->Ls, mr, w->rhs,
                             mr > np ? mr : np, w->work, w->lwork) != 0)
        return -1;
      if (entered) {
        entered = 0;
        if (!(w->rhs[np - 1] > 0)) {
          // rounding: the entering column cannot take a positive value; set it aside
          w->pset[t] = 0;
          np--;
          w->rejected[t] = 1;
          break;
        }
      }
      int allpos = 1;
      for (int k = 0; k < np; k++)
        if (!(w->rhs[k] > 0)) allpos = 0;
      if (allpos) {
        for (int k = 0; k < np; k++) w->u[w->pidx[k]] = w->rhs[k];
        break;
      }
      // step from u toward z until a passive component reaches zero, and drop it (and any
      // other that rounding left at or below zero)
      double alpha = 1;
      int kmin = -1;
      for (int k = 0; k < np; k++) {
        const double zk = w->rhs[k], uk = w->u[w->pidx[k]];
        if (zk <= 0) {
          const double a = uk / (uk - zk);
          if (kmin < 0 || a < alpha) {
            alpha = a;
            kmin = k;
          }
        }
      }
      int keep = 0;
      for (int k = 0; k < np; k++) {
        const int j = w->pidx[k];
        w->u[j] += alpha * (w->rhs[k] - w->u[j]);
        if (k == kmin || w->u[j] <= 0) {
          w->u[j] = 0;
          w->pset[j] = 0;
        } else {
          w->pidx[keep++] = j;
        }
      }
      np = keep;
      if (np == 0) break;
    }
    // residual r = f - E u; a changed passive set lets rejected columns be tried again
    memcpy(w->r, f, (size_t)mr * sizeof(double));
    for (int j = 0; j < nc; j++) {
      if (w->u[j] == 0) continue;
      const double* ej = E + (size_t)j * mr;
      for (int i = 0; i < mr; i++) w->r[i] -= ej[i] * w->u[j];
    }
    if (!w->rejected[t])
      for (int j = 0; j < nc; j++) w->rejected[j] = 0;
  }
  memcpy(w->r, f, (size_t)mr * sizeof(double));
  for (int j = 0; j < nc; j++) {
    if (w->u[j] == 0) continue;
    const double* ej = E + (size_t)j * mr;
    for (int i = 0; i < mr; i++) w->r[i] -= ej[i] * w->u[j];
  }
  return 0;
}

static int within(double x, double lo, double hi, double scale) {
  return x >= lo - LSD_BOUND_TOL * scale && x <= hi + LSD_BOUND_TOL * scale;
}

int mbs_lsd_solve(mbs_lsd* w, int m, int n, const double* A, int lda, const double* b,
                  const double* lo, const double* hi, double* x, double* lambda, int* bad_row,
                  int* nactive) {
  if (!w || n < 0 || m < 0 || n > w->nmax || m > w->mmax || !x) return MBS_LSD_FAILED;
  int bad = -1;
  if (bad_row) *bad_row = -1;
  if (nactive) *nactive = 0;
  // rows to unit norm; zero rows must ask for nothing
  int mk = 0;
  double bmax = 0;
  for (int i = 0; i < m; i++) bmax = fmax(bmax, fabs(b[i]));
  for (int i = 0; i < m; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += A[(size_t)j * lda + i] * A[(size_t)j * lda + i];
    s = sqrt(s);
    if (s == 0) {
      w->rscale[i] = 0;
      if (fabs(b[i]) > LSD_CONSIST_TOL * (1 + bmax)) {
        if (bad_row) *bad_row = i;
        return MBS_LSD_INCONSISTENT;
      }
      continue;
    }
    w->rscale[i] = 1 / s;
    w->rows[mk] = i;
    w->bs[mk] = b[i] / s;
    mk++;
  }
  // x = x_p + Z v
  const int r = min_norm(w, mk, n, NULL, A, lda, w->xp, NULL, 1, &bad);
  if (r == -1) {
    if (bad_row) *bad_row = bad;
    return MBS_LSD_INCONSISTENT;
  }
  if (r < 0) return MBS_LSD_FAILED;
  const int k = n - r;
  // the bounds as G v >= h: lo - x_p <= (Z v) <= hi - x_p
  int mi = 0;
  for (int j = 0; j < n; j++) {
    if (lo && isfinite(lo[j])) {
      w->con_var[mi] = j;
      w->con_upper[mi] = 0;
      w->h[mi++] = lo[j] - w->xp[j];
    }
    if (hi && isfinite(hi[j])) {
      w->con_var[mi] = j;
      w->con_upper[mi] = 1;
      w->h[mi++] = w->xp[j] - hi[j];
    }
  }
  // the problem's scale: its largest value or finite bound
  double scale = 1;
  for (int j = 0; j < n; j++) {
    scale = fmax(scale, fabs(w->xp[j]));
    if (lo && isfinite(lo[j])) scale = fmax(scale, fabs(lo[j]));
    if (hi && isfinite(hi[j])) scale = fmax(scale, fabs(hi[j]));
  }
  int need = 0;
  for (int i = 0; i < mi; i++)
    if (w->h[i] > LSD_NEED_TOL * scale) need = 1;
  for (int j = 0; j < n; j++) w->active[j] = 0;
  if (!need) {
    memcpy(x, w->xp, (size_t)n * sizeof(double));
  } else {
    if (k == 0) return MBS_LSD_INFEASIBLE;
    // E = [G^T; h^T / hs] ((k+1) x mi), f = e_{k+1}. The solution of the scaled problem is
    // v / hs; the last residual component, the divisor below, is about 1 / (1 + |v / hs|^2),
    // so accuracy needs |v / hs| near 1: a first solve with hs = max |h| estimates |v|, and
    // when it is far from that a second one uses hs = |v|.
    const int mr = k + 1;
    for (int i = 0; i < mi; i++) {
      double* col = w->E + (size_t)i * mr;
      const int j = w->con_var[i];
      const double sg = w->con_upper[i] ? -1.0 : 1.0;
      for (int c = 0; c < k; c++) col[c] = sg * w->Q[(size_t)(r + c) * n + j];
    }
    // f = e_{k+1}, kept in w->z (nnls does not touch it)
    for (int c = 0; c < k; c++) w->z[c] = 0;
    w->z[k] = 1;
    double hs = 0;
    for (int i = 0; i < mi; i++) hs = fmax(hs, fabs(w->h[i]));
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < mi; i++) w->E[(size_t)i * mr + k] = w->h[i] / hs;
      if (nnls(w, mr, mi, w->E, w->z) != 0) return MBS_LSD_FAILED;
      const double rk = w->r[k];  // residual f - E u: its last component
      double rn = 0;
      for (int c = 0; c < k; c++) rn += w->r[c] * w->r[c];
      rn = sqrt(rn);
      if (!(rk > 0) || rn + rk < 1e-14 || (pass == 1 && rk < 1e-10)) return MBS_LSD_INFEASIBLE;
      // Lawson & Hanson: with rho = E u - f, v_c = -rho_c / rho_{k+1}; r = f - E u = -rho
      for (int c = 0; c < k; c++) w->v[c] = -w->r[c] / rk * hs;
      const double vn = rn / rk;  // |v| / hs
      if (pass == 1 || (vn > 0.25 && vn < 4) || vn == 0) break;
      hs *= vn;
    }
    for (int j = 0; j < n; j++) {
      double s = w->xp[j];
      for (int c = 0; c < k; c++) s += w->Q[(size_t)(r + c) * n + j] * w->v[c];
      x[j] = s;
    }
    for (int i = 0; i < mi; i++)
      if (w->u[i] > 0) w->active[w->con_var[i]] = w->con_upper[i] ? 1 : -1;
  }
  // polish: the active bounds fixed, the free variables' minimum-norm solution and the
  // multipliers; kept when it satisfies the KKT conditions
  memcpy(w->ldx, x, (size_t)n * sizeof(double));
  int nf = 0, na = 0;
  for (int j = 0; j < n; j++) {
    if (w->active[j]) {
      x[j] = w->active[j] < 0 ? lo[j] : hi[j];
      na++;
    } else {
      w->freev[nf++] = j;
    }
  }
  for (int i = 0; i < mk; i++) {
    const int row = w->rows[i];
    double s = b[row];
    for (int j = 0; j < n; j++)
      if (w->active[j]) s -= A[(size_t)j * lda + row] * x[j];
    w->bs[i] = s * w->rscale[row];
  }
  const int rf = min_norm(w, mk, nf, w->freev, A, lda, w->xf, w->lam, 0, &bad);
  int ok = rf >= 0;
  for (int c = 0; ok && c < nf; c++) {
    const int j = w->freev[c];
    if (!within(w->xf[c], lo ? lo[j] : -INFINITY, hi ? hi[j] : INFINITY, scale)) ok = 0;
  }
  // bound multipliers mu_j = x_j - (A^T lambda)_j: >= 0 at a lower bound, <= 0 at an upper
  double lmax = 0;
  for (int i = 0; ok && i < mk; i++) lmax = fmax(lmax, fabs(w->lam[i]));
  for (int j = 0; ok && j < n; j++) {
    if (!w->active[j]) continue;
    double s = 0;
    for (int i = 0; i < mk; i++) {
      const int row = w->rows[i];
      s += A[(size_t)j * lda + row] * w->rscale[row] * w->lam[i];
    }
    const double mu = x[j] - s, tol = LSD_MULT_TOL * (1 + fabs(x[j]) + lmax);
    if ((w->active[j] < 0 && mu < -tol) || (w->active[j] > 0 && mu > tol)) ok = 0;
  }
  if (ok) {
    for (int c = 0; c < nf; c++) {
      const int j = w->freev[c];
      double v = w->xf[c];
      if (lo && v < lo[j]) v = lo[j];
      if (hi && v > hi[j]) v = hi[j];
      x[j] = v;
    }
  } else {
    // the least-distance solution as it is: within the bounds up to rounding, or infeasible
    for (int j = 0; j < n; j++) {
      const double l = lo ? lo[j] : -INFINITY, hgh = hi ? hi[j] : INFINITY;
      if (!within(w->ldx[j], l, hgh, scale)) return MBS_LSD_INFEASIBLE;
      x[j] = w->ldx[j] < l ? l : w->ldx[j] > hgh ? hgh : w->ldx[j];
    }
  }
  if (lambda) {
    for (int i = 0; i < m; i++) lambda[i] = 0;
    if (ok)
      for (int i = 0; i < mk; i++) lambda[w->rows[i]] = w->lam[i] * w->rscale[w->rows[i]];
  }
  if (nactive) *nactive = na;
  return MBS_LSD_OK;
}
