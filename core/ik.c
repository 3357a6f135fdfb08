// Inverse kinematics (mbs/ik.h): damped Gauss-Newton on marker and coordinate goals with the
// holonomic constraints as equality constraints and bounded coordinates in an active set.
//
// Unknowns are coordinate changes dq (nq). A marker's Jacobian is taken from the Position
// stage's hinge matrices, column by column along the marker's ancestors (d p / d u), then mapped
// to coordinate rates body by body: d p / d q = (d p / d u) N^-1, where N^-1 is the identity for
// mobilizers with q' = u and a small block otherwise (X-Y-Z angles, quaternions). The
// constraint Jacobian is mapped the same way. Each step minimizes the Gauss-Newton model
//   m(dq) = 1/2 dq' (H + lambda D) dq - g' dq,  H = J' S J + W_task,  g = -J' S r - W_task e
// subject to C dq = -perr (hard constraints) with the fixed and bound-active coordinates' dq
// given, by the range-space method: H_RR = L L', Y = L^-1 C_R', S = Y'Y (pivoted Cholesky,
// dependent rows dropped), S mu = Y'L^-1 rhs - d, dq_R = L^-T (L^-1 rhs - Y mu).
#include "mbs/ik.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/constraint.h"
#include "model_impl.h"

#define IK_LAMBDA_MIN 1e-6     // Levenberg-Marquardt damping, relative to diag(H)
#define IK_LAMBDA_MAX 1e10
#define IK_DAMP_FLOOR 1e-3     // damping floor, relative to the mean diagonal of H
#define IK_DROP_TOL 1e-10      // a constraint row is dependent below this fraction of its norm

struct mbs_ik {
  int nq, nu, nbody;
  int nm, ntask, nbound, nfixed;
  mbs_ik_marker* mk;
  mbs_ik_task* task;
  mbs_ik_bound* bound;
  int* fixed;
  double accuracy, cweight;
  int max_iter;

  // coordinates: per body whether q' = u, and N^-1 blocks (nu_b x nq_b, row-major) otherwise
  unsigned char* ident;   // nbody
  int* ninv_adr;          // nbody: offset into ninv, or -1
  double* ninv;
  // markers: the ancestor bodies of each (marker's body first) and their q columns
  int* chain_adr;         // nm + 1
  int* chain;
  int* col_adr;           // nm + 1
  int* col;
  int maxcols;
  double* jq;             // 3 x maxcols

  // per coordinate
  unsigned char* isfixed; // nq
  int* active;            // nbound: -1 at its lower bound, +1 at its upper bound, 0 free

  // frame data
  double* loc;            // 3 nm, Ground
  double* err2;           // nm
  double* res;            // 3 nm, p - x (0 when not tracked)
  double* scale;          // nm: w / W, or 0
  double* target;         // ntask

  // linear algebra
  int mcon;               // equations of all constraints (G rows)
  double* G;              // mcon x nu
  double* Cq;             // mcon x nq: holonomic rows in coordinates
  double* perr;           // mcon
  double* H;              // nq x nq
  double* Hreg;           // nq x nq
  double* g;              // nq
  double* L;              // nq x nq
  double* Y;              // nq x mcon
  double* S;              // mcon x mcon
  double* t;              // mcon
  double* mu;             // mcon
  double* dC;             // mcon
  double* orig;           // mcon: S's original diagonal
  int* perm;              // mcon
  int* ridx;              // nq: free columns
  double* z;              // nq
  double* dq;             // nq
  double* q0;             // nq
  double* grad;           // nq
};

void mbs_ik_problem_default(mbs_ik_problem* p) {
  memset(p, 0, sizeof(*p));
  p->accuracy = 1e-5;
  p->constraint_weight = INFINITY;
  p->max_iterations = 200;
}

void mbs_ik_free(mbs_ik* ik) {
  if (!ik) return;
  free(ik->mk);
  free(ik->task);
  free(ik->bound);
  free(ik->fixed);
  free(ik->ident);
  free(ik->ninv_adr);
  free(ik->ninv);
  free(ik->chain_adr);
  free(ik->chain);
  free(ik->col_adr);
  free(ik->col);
  free(ik->jq);
  free(ik->isfixed);
  free(ik->active);
  free(ik->loc);
  free(ik->err2);
  free(ik->res);
  free(ik->scale);
  free(ik->target);
  free(ik->G);
  free(ik->Cq);
  free(ik->perr);
  free(ik->H);
  free(ik->Hreg);
  free(ik->g);
  free(ik->L);
  free(ik->Y);
  free(ik->S);
  free(ik->t);
  free(ik->mu);
  free(ik->dC);
  free(ik->orig);
  free(ik->perm);
  free(ik->ridx);
  free(ik->z);
  free(ik->dq);
  free(ik->q0);
  free(ik->grad);
  free(ik);
}

static const char* nm_or(const char* name, const char* dflt) { return name && *name ? name : dflt; }

int mbs_ik_create(const mbs_system* sys, const mbs_ik_problem* p, mbs_ik** out, mbs_error* err) {
  *out = NULL;
  if (!sys || !p) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "inverse kinematics",
                                  "inverse kinematics: no system or problem");
  if (!sys->finalized)
    return MBS_FAIL(err, MBS_ERR_NOT_FINALIZED, sys->name,
                    "inverse kinematics: system '%s' is not finalized", sys->name);
  if (p->nmarker < 0 || p->ntask < 0 || p->nbound < 0 || p->nfixed < 0 ||
      (p->nmarker && !p->markers) || (p->ntask && !p->tasks) || (p->nbound && !p->bounds) ||
      (p->nfixed && !p->fixed))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "inverse kinematics",
                    "inverse kinematics: bad counts or missing arrays in the problem");
  if (!(p->accuracy > 0) || !isfinite(p->accuracy))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "inverse kinematics",
                    "inverse kinematics: accuracy %g must be positive", p->accuracy);
  if (!(p->constraint_weight >= 0))
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "inverse kinematics",
                    "inverse kinematics: constraint weight %g must be positive or infinite",
                    p->constraint_weight);
  const int nq = sys->nq, nb = sys->nbody;
  for (int i = 0; i < p->nmarker; i++) {
    const mbs_ik_marker* m = &p->markers[i];
    const char* n = nm_or(m->name, "(unnamed)");
    if (m->body <= 0 || m->body >= nb)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, n, "inverse kinematics: marker '%s': body %d is %s",
                      n, m->body, m->body == 0 ? "Ground (it cannot move)" : "not in the system");
    if (!(m->weight >= 0) || !isfinite(m->weight) || !isfinite(m->station[0]) ||
        !isfinite(m->station[1]) || !isfinite(m->station[2]))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, n,
                      "inverse kinematics: marker '%s': weight %g or its location is not a "
                      "finite non-negative number", n, m->weight);
  }
  for (int i = 0; i < p->ntask; i++) {
    const mbs_ik_task* t = &p->tasks[i];
    const char* n = nm_or(t->name, "(unnamed)");
    if (t->q < 0 || t->q >= nq)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, n,
                      "inverse kinematics: coordinate task '%s': q index %d is not in 0..%d", n,
                      t->q, nq - 1);
    if (!(t->weight >= 0) || !isfinite(t->weight))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, n,
                      "inverse kinematics: coordinate task '%s': weight %g is not a finite "
                      "non-negative number", n, t->weight);
  }
  for (int i = 0; i < p->nbound; i++) {
    const mbs_ik_bound* b = &p->bounds[i];
    const char* n = nm_or(b->name, "(unnamed)");
    if (b->q < 0 || b->q >= nq)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, n,
                      "inverse kinematics: bounded coordinate '%s': q index %d is not in 0..%d",
                      n, b->q, nq - 1);
    if (!(b->lower <= b->upper) || isnan(b->lower) || isnan(b->upper))
      return MBS_FAIL(err, MBS_ERR_PARAMETER, n,
                      "inverse kinematics: bounded coordinate '%s': range %g .. %g is empty", n,
                      b->lower, b->upper);
    for (int k = 0; k < i; k++)
      if (p->bounds[k].q == b->q)
        return MBS_FAIL(err, MBS_ERR_ARGUMENT, n,
                        "inverse kinematics: bounded coordinate '%s': q %d is bounded twice", n,
                        b->q);
  }
  for (int i = 0; i < p->nfixed; i++)
    if (p->fixed[i] < 0 || p->fixed[i] >= nq)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, "inverse kinematics",
                      "inverse kinematics: fixed q index %d is not in 0..%d", p->fixed[i],
                      nq - 1);

  mbs_ik* ik = calloc(1, sizeof(*ik));
  if (!ik) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "inverse kinematics", "out of memory");
  ik->nq = nq;
  ik->nu = sys->nu;
  ik->nbody = nb;
  ik->nm = p->nmarker;
  ik->ntask = p->ntask;
  ik->nbound = p->nbound;
  ik->nfixed = p->nfixed;
  ik->accuracy = p->accuracy;
  ik->cweight = p->constraint_weight;
  ik->max_iter = p->max_iterations > 0 ? p->max_iterations : 200;
  ik->mcon = sys->mcon;
  const size_t nm = (size_t)ik->nm, n = (size_t)nq, m = (size_t)ik->mcon + 1;
#define IK_ALLOC(f, cnt) ok = ok && ((ik->f = calloc((cnt) + 1, sizeof(*ik->f))) != NULL)
  int ok = 1;
  IK_ALLOC(mk, nm);
  IK_ALLOC(task, (size_t)ik->ntask);
  IK_ALLOC(bound, (size_t)ik->nbound);
  IK_ALLOC(fixed, (size_t)ik->nfixed);
  IK_ALLOC(ident, (size_t)nb);
  IK_ALLOC(ninv_adr, (size_t)nb);
  IK_ALLOC(chain_adr, nm + 1);
  IK_ALLOC(col_adr, nm + 1);
  IK_ALLOC(isfixed, n);
  IK_ALLOC(active, (size_t)ik->nbound);
  IK_ALLOC(loc, 3 * nm);
  IK_ALLOC(err2, nm);
  IK_ALLOC(res, 3 * nm);
  IK_ALLOC(scale, nm);
  IK_ALLOC(target, (size_t)ik->ntask);
  IK_ALLOC(G, m * (size_t)ik->nu);
  IK_ALLOC(Cq, m * n);
  IK_ALLOC(perr, m);
  IK_ALLOC(H, n * n);
  IK_ALLOC(Hreg, n * n);
  IK_ALLOC(g, n);
  IK_ALLOC(L, n * n);
  IK_ALLOC(Y, n * m);
  IK_ALLOC(S, m * m);
  IK_ALLOC(t, m);
  IK_ALLOC(mu, m);
  IK_ALLOC(dC, m);
  IK_ALLOC(orig, m);
  IK_ALLOC(perm, m);
  IK_ALLOC(ridx, n);
  IK_ALLOC(z, n);
  IK_ALLOC(dq, n);
  IK_ALLOC(q0, n);
  IK_ALLOC(grad, n);
#undef IK_ALLOC
  if (!ok) {
    mbs_ik_free(ik);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "inverse kinematics", "out of memory");
  }
  if (ik->nm) memcpy(ik->mk, p->markers, nm * sizeof(*ik->mk));
  if (ik->ntask) memcpy(ik->task, p->tasks, (size_t)ik->ntask * sizeof(*ik->task));
  if (ik->nbound) memcpy(ik->bound, p->bounds, (size_t)ik->nbound * sizeof(*ik->bound));
  if (ik->nfixed) memcpy(ik->fixed, p->fixed, (size_t)ik->nfixed * sizeof(int));
  for (int i = 0; i < ik->nfixed; i++) ik->isfixed[ik->fixed[i]] = 1;

  // which mobilizers map speeds to coordinate rates by the identity
  size_t nninv = 0;
  for (int b = 1; b < nb; b++) {
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
    ik->ident[b] = !ops->u_from_qdot && sys->body_nq[b] == sys->body_nu[b];
    ik->ninv_adr[b] = -1;
    if (!ik->ident[b]) {
      ik->ninv_adr[b] = (int)nninv;
      nninv += (size_t)sys->body_nq[b] * (size_t)sys->body_nu[b];
    }
  }
  ik->ident[0] = 1;
  ik->ninv_adr[0] = -1;
  ok = (ik->ninv = calloc(nninv + 1, sizeof(double))) != NULL;
  // marker chains
  size_t nchain = 0, ncol = 0;
  for (int i = 0; i < ik->nm; i++)
    for (int a = ik->mk[i].body; a != 0; a = sys->body_parent[a]) {
      nchain++;
      ncol += (size_t)sys->body_nq[a];
    }
  ok = ok && (ik->chain = calloc(nchain + 1, sizeof(int))) != NULL &&
       (ik->col = calloc(ncol + 1, sizeof(int))) != NULL;
  if (!ok) {
    mbs_ik_free(ik);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "inverse kinematics", "out of memory");
  }
  int ci = 0, cc = 0;
  for (int i = 0; i < ik->nm; i++) {
    ik->chain_adr[i] = ci;
    ik->col_adr[i] = cc;
    for (int a = ik->mk[i].body; a != 0; a = sys->body_parent[a]) {
      ik->chain[ci++] = a;
      for (int k = 0; k < sys->body_nq[a]; k++) ik->col[cc++] = sys->body_qadr[a] + k;
    }
    if (cc - ik->col_adr[i] > ik->maxcols) ik->maxcols = cc - ik->col_adr[i];
  }
  ik->chain_adr[ik->nm] = ci;
  ik->col_adr[ik->nm] = cc;
  if (!(ik->jq = calloc(3 * (size_t)ik->maxcols + 1, sizeof(double)))) {
    mbs_ik_free(ik);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "inverse kinematics", "out of memory");
  }
  *out = ik;
  return MBS_OK;
}

const double* mbs_ik_marker_locations(const mbs_ik* ik) { return ik->loc; }
const double* mbs_ik_marker_squared_errors(const mbs_ik* ik) { return ik->err2; }

//---------------------------------- dense helpers ----------------------------------------------

// Cholesky A = L L' in place (lower triangle, row-major n x n); -1 if not positive definite
static int cholesky(double* A, int n) {
  for (int j = 0; j < n; j++) {
    double* Aj = A + (size_t)j * n;
    double d = Aj[j];
    for (int k = 0; k < j; k++) d -= Aj[k] * Aj[k];
    if (!(d > 0) || !isfinite(d)) return -1;
    d = sqrt(d);
    Aj[j] = d;
    for (int i = j + 1; i < n; i++) {
      double* Ai = A + (size_t)i * n;
      double s = Ai[j];
      for (int k = 0; k < j; k++) s -= Ai[k] * Aj[k];
      Ai[j] = s / d;
    }
  }
  return 0;
}

// x = L^-1 b (in place), L lower row-major n x n
static void solve_lower(const double* L, int n, double* x) {
  for (int i = 0; i < n; i++) {
    const double* Li = L + (size_t)i * n;
    double s = x[i];
    for (int k = 0; k < i; k++) s -= Li[k] * x[k];
    x[i] = s / Li[i];
  }
}

// x = L^-T b (in place)
static void solve_upper_t(const double* L, int n, double* x) {
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k < n; k++) s -= L[(size_t)k * n + i] * x[k];
    x[i] = s / L[(size_t)i * n + i];
  }
}

// Solve S mu = t (S symmetric positive semidefinite, m x m row-major, overwritten) by Cholesky
// with diagonal pivoting; a row whose remaining diagonal falls below IK_DROP_TOL of its original
// diagonal depends on the rows already taken and gets mu = 0. orig, perm: m scratch.
static void solve_pivoted(double* S, int m, const double* t, double* mu, double* orig, int* perm) {
  for (int i = 0; i < m; i++) {
    perm[i] = i;
    orig[i] = S[(size_t)i * m + i];
    mu[i] = 0;
  }
  int r = 0;
  for (int k = 0; k < m; k++) {
    int p = -1;
    double best = IK_DROP_TOL;
    for (int i = k; i < m; i++) {
      const double oi = orig[perm[i]];
      const double rel = oi > 0 ? S[(size_t)i * m + i] / oi : 0;
      if (rel > best) {
        best = rel;
        p = i;
      }
    }
    if (p < 0) break;
    if (p != k) {  // swap rows and columns k and p
      for (int j = 0; j < m; j++) {
        double tmp = S[(size_t)k * m + j];
        S[(size_t)k * m + j] = S[(size_t)p * m + j];
        S[(size_t)p * m + j] = tmp;
      }
      for (int j = 0; j < m; j++) {
        double tmp = S[(size_t)j * m + k];
        S[(size_t)j * m + k] = S[(size_t)j * m + p];
        S[(size_t)j * m + p] = tmp;
      }
      const int tp = perm[k];
      perm[k] = perm[p];
      perm[p] = tp;
    }
    const double d = sqrt(S[(size_t)k * m + k]);
    S[(size_t)k * m + k] = d;
    for (int i = k + 1; i < m; i++) S[(size_t)i * m + k] /= d;
    for (int i = k + 1; i < m; i++)
      for (int j = k + 1; j <= i; j++) {
        S[(size_t)i * m + j] -= S[(size_t)i * m + k] * S[(size_t)j * m + k];
        S[(size_t)j * m + i] = S[(size_t)i * m + j];
      }
    r++;
  }
  // the leading r x r factor: forward and back substitution on the permuted right side
  double* y = orig;  // orig is no longer needed
  for (int i = 0; i < r; i++) {
    double s = t[perm[i]];
    for (int k = 0; k < i; k++) s -= S[(size_t)i * m + k] * y[k];
    y[i] = s / S[(size_t)i * m + i];
  }
  for (int i = r - 1; i >= 0; i--) {
    double s = y[i];
    for (int k = i + 1; k < r; k++) s -= S[(size_t)k * m + i] * y[k];
    y[i] = s / S[(size_t)i * m + i];
  }
  for (int i = 0; i < r; i++) mu[perm[i]] = y[i];
}

//---------------------------------- model evaluation -------------------------------------------

// N^-1 blocks of the mobilizers whose speeds are not the coordinate rates   [Position]
static void update_ninv(mbs_ik* ik, const mbs_system* sys, const mbs_state* st) {
  mbs_mob_ctx c;
  double e[8], u[8];
  for (int b = 1; b < ik->nbody; b++) {
    if (ik->ident[b]) continue;
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
    const int nqb = sys->body_nq[b], nub = sys->body_nu[b];
    double* N = ik->ninv + ik->ninv_adr[b];
    mbs_mob_ctx_init(&c, sys, st, b);
    for (int k = 0; k < nqb; k++) {
      for (int i = 0; i < nqb; i++) e[i] = i == k ? 1 : 0;
      if (ops->u_from_qdot) ops->u_from_qdot(&c, st->q + sys->body_qadr[b], e, u);
      else for (int i = 0; i < nub; i++) u[i] = i < nqb ? e[i] : 0;
      for (int j = 0; j < nub; j++) N[j * nqb + k] = u[j];
    }
  }
}

// a row over u (nu) mapped to a row over q (nq): row_q = row_u N^-1
static void row_u_to_q(const mbs_ik* ik, const mbs_system* sys, const double* ru, double* rq) {
  for (int b = 1; b < ik->nbody; b++) {
    const int qa = sys->body_qadr[b], ua = sys->body_uadr[b];
    const int nqb = sys->body_nq[b], nub = sys->body_nu[b];
    if (ik->ident[b]) {
      for (int k = 0; k < nqb; k++) rq[qa + k] = ru[ua + k];
    } else {
      const double* N = ik->ninv + ik->ninv_adr[b];
      for (int k = 0; k < nqb; k++) {
        double s = 0;
        for (int j = 0; j < nub; j++) s += ru[ua + j] * N[j * nqb + k];
        rq[qa + k] = s;
      }
    }
  }
}

// number of holonomic equations active in the State                           [Instance]
static int holonomic_rows(const mbs_state* st) { return st->ncon_p; }

// Realize Position and evaluate the goals: marker locations and residuals, cost f, the
// holonomic constraint errors (perr), their largest magnitude and their 1-norm.
static int evaluate(mbs_ik* ik, const mbs_system* sys, mbs_state* st, const double* obs,
                    double* f, double* cmax, double* c1) {
  int rc = mbs_realize_position(sys, st);
  if (rc) return rc;
  double cost = 0;
  for (int i = 0; i < ik->nm; i++) {
    const mbs_ik_marker* m = &ik->mk[i];
    const mbs_transform* X = &st->X_GB[m->body];
    double* p = ik->loc + 3 * i;
    mbs_tf_point(p, X, m->station);
    double* r = ik->res + 3 * i;
    const double* x = obs ? obs + 3 * i : NULL;
    if (x && isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2])) {
      for (int k = 0; k < 3; k++) r[k] = p[k] - x[k];
      ik->err2[i] = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
      cost += ik->scale[i] * ik->err2[i];
    } else {
      r[0] = r[1] = r[2] = 0;
      ik->err2[i] = 0;
    }
  }
  for (int j = 0; j < ik->ntask; j++) {
    const double e = st->q[ik->task[j].q] - ik->target[j];
    cost += ik->task[j].weight * e * e;
  }
  *cmax = 0;
  *c1 = 0;
  const int np = holonomic_rows(st);
  if (np > 0 && ik->cweight > 0) {
    int n = 0;
    if ((rc = mbs_calc_position_errors(sys, st, ik->perr, &n))) return rc;
    for (int k = 0; k < n; k++) {
      const double a = fabs(ik->perr[k]);
      if (a > *cmax) *cmax = a;
      *c1 += a;
      if (isfinite(ik->cweight)) cost += ik->cweight * a * a;
    }
  }
  *f = cost;
  return MBS_OK;
}

// H and g of the Gauss-Newton model at the evaluated pose; the holonomic constraint rows in
// coordinates into Cq (hard constraints) or into H and g (finite weight). Returns the number of
// hard rows, or a negative status.
static int build_model(mbs_ik* ik, const mbs_system* sys, mbs_state* st) {
  const int n = ik->nq;
  memset(ik->H, 0, (size_t)n * n * sizeof(double));
  memset(ik->g, 0, (size_t)n * sizeof(double));
  update_ninv(ik, sys, st);
  for (int i = 0; i < ik->nm; i++) {
    const double s = ik->scale[i];
    if (!(s > 0)) continue;  // missing in this frame, or weight 0
    const double* p = ik->loc + 3 * i;
    const double* r = ik->res + 3 * i;
    const int nc = ik->col_adr[i + 1] - ik->col_adr[i];
    const int* cols = ik->col + ik->col_adr[i];
    double* J = ik->jq;  // 3 x nc
    int k = 0;
    for (int c = ik->chain_adr[i]; c < ik->chain_adr[i + 1]; c++) {
      const int a = ik->chain[c];
      double rr[3], ju[3][6];
      mbs_v3_sub(rr, p, st->X_GB[a].p);
      const int ua = sys->body_uadr[a], nub = sys->body_nu[a], nqb = sys->body_nq[a];
      for (int j = 0; j < nub; j++) {
        const double* h = st->H + 6 * (ua + j);
        double v[3];
        mbs_v3_cross(v, h, rr);
        for (int d = 0; d < 3; d++) ju[d][j] = v[d] + h[3 + d];
      }
      if (ik->ident[a]) {
        for (int d = 0; d < 3; d++)
          for (int j = 0; j < nub; j++) J[d * nc + k + j] = ju[d][j];
      } else {
        const double* N = ik->ninv + ik->ninv_adr[a];
        for (int d = 0; d < 3; d++)
          for (int kk = 0; kk < nqb; kk++) {
            double sum = 0;
            for (int j = 0; j < nub; j++) sum += ju[d][j] * N[j * nqb + kk];
            J[d * nc + k + kk] = sum;
          }
      }
      k += nqb;
    }
    for (int a = 0; a < nc; a++) {
      const double ja0 = J[a], ja1 = J[nc + a], ja2 = J[2 * nc + a];
      ik->g[cols[a]] -= s * (ja0 * r[0] + ja1 * r[1] + ja2 * r[2]);
      double* Ha = ik->H + (size_t)cols[a] * n;
      for (int b = 0; b < nc; b++)
        Ha[cols[b]] += s * (ja0 * J[b] + ja1 * J[nc + b] + ja2 * J[2 * nc + b]);
    }
  }
  for (int j = 0; j < ik->ntask; j++) {
    const int q = ik->task[j].q;
    const double w = ik->task[j].weight;
    ik->H[(size_t)q * n + q] += w;
    ik->g[q] -= w * (st->q[q] - ik->target[j]);
  }
  const int np = holonomic_rows(st);
  if (np == 0 || ik->cweight == 0) return 0;
  int rc = mbs_calc_constraint_jacobian(sys, st, ik->G);
  if (rc) return rc;
  int r = 0;
  for (int e = 0; e < st->ncon_eq; e++) {
    if (st->eq_level[e] != 0) continue;
    row_u_to_q(ik, sys, ik->G + (size_t)e * ik->nu, ik->Cq + (size_t)r * n);
    r++;
  }
  if (isfinite(ik->cweight)) {
    const double w = ik->cweight;
    for (int k = 0; k < r; k++) {
      const double* c = ik->Cq + (size_t)k * n;
      for (int a = 0; a < n; a++) {
        if (c[a] == 0) continue;
        ik->g[a] -= w * c[a] * ik->perr[k];
        for (int b = 0; b < n; b++) ik->H[(size_t)a * n + b] += w * c[a] * c[b];
      }
    }
    return 0;
  }
  return r;
}

// the step for damping lambda with m hard rows: dq (and mu); -1 if H + lambda D is not positive
// definite
static int solve_step(mbs_ik* ik, const double* q, int m, double lambda) {
  const int n = ik->nq;
  // damped Hessian: H + lambda (diag(H) + floor)
  double tr = 0;
  for (int j = 0; j < n; j++) tr += ik->H[(size_t)j * n + j];
  const double floor = IK_DAMP_FLOOR * (n > 0 ? tr / n : 0) + 1e-12;
  memcpy(ik->Hreg, ik->H, (size_t)n * n * sizeof(double));
  for (int j = 0; j < n; j++)
    ik->Hreg[(size_t)j * n + j] += lambda * (ik->H[(size_t)j * n + j] + floor);
  double gmax = 0;
  for (int j = 0; j < n; j++)
    if (fabs(ik->g[j]) > gmax) gmax = fabs(ik->g[j]);
  // active bounds: keep those still at their bound
  for (int k = 0; k < ik->nbound; k++) {
    const mbs_ik_bound* b = &ik->bound[k];
    if (ik->active[k] < 0 && q[b->q] > b->lower) ik->active[k] = 0;
    if (ik->active[k] > 0 && q[b->q] < b->upper) ik->active[k] = 0;
    if (ik->isfixed[b->q]) ik->active[k] = 0;
  }
  const int max_rounds = 3 * ik->nbound + 4;
  for (int round = 0;; round++) {
    // free columns and the given changes of the others
    int nr = 0;
    for (int j = 0; j < n; j++) {
      ik->dq[j] = 0;
      if (!ik->isfixed[j]) ik->ridx[nr++] = j;
    }
    for (int k = 0; k < ik->nbound; k++) {
      if (!ik->active[k]) continue;
      const mbs_ik_bound* b = &ik->bound[k];
      ik->dq[b->q] = (ik->active[k] < 0 ? b->lower : b->upper) - q[b->q];
      for (int a = 0; a < nr; a++)
        if (ik->ridx[a] == b->q) {
          memmove(ik->ridx + a, ik->ridx + a + 1, (size_t)(nr - a - 1) * sizeof(int));
          nr--;
          break;
        }
    }
    // reduced Hessian and right side
    double* L = ik->L;
    for (int a = 0; a < nr; a++) {
      const double* Ha = ik->Hreg + (size_t)ik->ridx[a] * n;
      for (int b = 0; b < nr; b++) L[(size_t)a * nr + b] = Ha[ik->ridx[b]];
      double s = ik->g[ik->ridx[a]];
      for (int j = 0; j < n; j++) s -= Ha[j] * ik->dq[j];  // dq is zero on free columns
      ik->z[a] = s;
    }
    if (cholesky(L, nr)) return -1;
    solve_lower(L, nr, ik->z);
    for (int k = 0; k < m; k++) ik->mu[k] = 0;
    if (m > 0) {
      for (int k = 0; k < m; k++) {
        const double* c = ik->Cq + (size_t)k * n;
        double* y = ik->grad;  // scratch: the row's free part, then L^-1 of it
        double dc = -ik->perr[k];
        for (int j = 0; j < n; j++) dc -= c[j] * ik->dq[j];
        ik->dC[k] = dc;
        for (int a = 0; a < nr; a++) y[a] = c[ik->ridx[a]];
        solve_lower(L, nr, y);
        for (int a = 0; a < nr; a++) ik->Y[(size_t)a * m + k] = y[a];
      }
      for (int k = 0; k < m; k++) {
        double tk = -ik->dC[k];
        for (int a = 0; a < nr; a++) tk += ik->Y[(size_t)a * m + k] * ik->z[a];
        ik->t[k] = tk;
        for (int l = 0; l <= k; l++) {
          double s = 0;
          for (int a = 0; a < nr; a++) s += ik->Y[(size_t)a * m + k] * ik->Y[(size_t)a * m + l];
          ik->S[(size_t)k * m + l] = ik->S[(size_t)l * m + k] = s;
        }
      }
      solve_pivoted(ik->S, m, ik->t, ik->mu, ik->orig, ik->perm);
      for (int a = 0; a < nr; a++) {
        double s = 0;
        for (int k = 0; k < m; k++) s += ik->Y[(size_t)a * m + k] * ik->mu[k];
        ik->z[a] -= s;
      }
    }
    solve_upper_t(L, nr, ik->z);
    for (int a = 0; a < nr; a++) ik->dq[ik->ridx[a]] = ik->z[a];
    if (round >= max_rounds || ik->nbound == 0) break;
    // a bound the step crosses first becomes active
    int block = -1, side = 0;
    double alpha = INFINITY;
    for (int k = 0; k < ik->nbound; k++) {
      const mbs_ik_bound* b = &ik->bound[k];
      if (ik->active[k] || ik->isfixed[b->q]) continue;
      const double d = ik->dq[b->q], qn = q[b->q] + d;
      const double tol = 1e-12 * (1 + fabs(b->upper - b->lower));
      if (qn < b->lower - tol && d < 0) {
        const double a = (b->lower - q[b->q]) / d;
        if (a < alpha) { alpha = a; block = k; side = -1; }
      } else if (qn > b->upper + tol && d > 0) {
        const double a = (b->upper - q[b->q]) / d;
        if (a < alpha) { alpha = a; block = k; side = 1; }
      }
    }
    if (block >= 0) {
      ik->active[block] = side;
      continue;
    }
    // an active bound whose gradient points inward is released
    int release = -1;
    double worst = 1e-12 * (1 + gmax);
    for (int k = 0; k < ik->nbound; k++) {
      if (!ik->active[k]) continue;
      const int j = ik->bound[k].q;
      double gr = -ik->g[j];
      const double* Hj = ik->Hreg + (size_t)j * n;
      for (int b = 0; b < n; b++) gr += Hj[b] * ik->dq[b];
      for (int r = 0; r < m; r++) gr += ik->Cq[(size_t)r * n + j] * ik->mu[r];
      // model gradient in q_j: positive at the upper bound (or negative at the lower) means
      // the model decreases inward
      const double inward = ik->active[k] > 0 ? gr : -gr;
      if (inward > worst) {
        worst = inward;
        release = k;
      }
    }
    if (release < 0) break;
    ik->active[release] = 0;
  }
  return 0;
}

//---------------------------------- the solve --------------------------------------------------

int mbs_ik_solve(mbs_ik* ik, const mbs_system* sys, mbs_state* st, const double* observed,
                 const double* targets, mbs_ik_report* rep) {
  mbs_ik_report dummy;
  if (!rep) rep = &dummy;
  memset(rep, 0, sizeof(*rep));
  if (!ik || !sys || !st) return MBS_ERR_ARGUMENT;
  if (st->sys != sys || sys->nq != ik->nq)
    return MBS_FAIL(&st->err, MBS_ERR_SYSTEM_MISMATCH, sys->name,
                    "inverse kinematics: the State or the solver belongs to another system");
  if (ik->nm && !observed)
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, "inverse kinematics",
                    "inverse kinematics: %d markers but no observations", ik->nm);
  if (ik->ntask && !targets)
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, "inverse kinematics",
                    "inverse kinematics: %d coordinate tasks but no target values", ik->ntask);
  for (int j = 0; j < ik->ntask; j++) {
    ik->target[j] = targets[j];
    if (!isfinite(targets[j]))
      return MBS_FAIL(&st->err, MBS_ERR_NAN, nm_or(ik->task[j].name, "coordinate task"),
                      "inverse kinematics: coordinate task '%s': the target value is not a "
                      "number", nm_or(ik->task[j].name, "(unnamed)"));
  }
  // the markers tracked in this frame and their normalized weights
  double W = 0;
  for (int i = 0; i < ik->nm; i++) {
    const double* x = observed + 3 * i;
    const int seen = isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]) && ik->mk[i].weight > 0;
    ik->scale[i] = seen ? ik->mk[i].weight : 0;
    W += ik->scale[i];
    rep->nobserved += seen;
  }
  for (int i = 0; i < ik->nm; i++) ik->scale[i] = W > 0 ? ik->scale[i] / W : 0;

  // start inside the bounds
  int rc = mbs_realize_instance(sys, st);
  if (rc) return rc;
  {
    int clipped = 0;
    for (int k = 0; k < ik->nbound; k++) {
      const mbs_ik_bound* b = &ik->bound[k];
      const double v = st->q[b->q];
      if (v < b->lower || v > b->upper) clipped = 1;
    }
    if (clipped) {
      double* q = mbs_state_upd_q(st);
      for (int k = 0; k < ik->nbound; k++) {
        const mbs_ik_bound* b = &ik->bound[k];
        if (q[b->q] < b->lower) q[b->q] = b->lower;
        if (q[b->q] > b->upper) q[b->q] = b->upper;
      }
    }
  }
  const int hard = !isfinite(ik->cweight);
  const double step_tol = 0.1 * ik->accuracy;
  const double con_tol = 1e-3 * ik->accuracy;
  double f, cmax, c1;
  if ((rc = evaluate(ik, sys, st, observed, &f, &cmax, &c1))) return rc;
  double rho = 0, lambda = IK_LAMBDA_MIN, last_step = INFINITY;
  int it = 0, converged = 0;
  while (it < ik->max_iter) {
    const int m = build_model(ik, sys, st);
    if (m < 0) return m;
    const int mh = hard ? m : 0;
    memcpy(ik->q0, st->q, (size_t)ik->nq * sizeof(double));
    int accepted = 0;
    double step = 0;
    while (it < ik->max_iter) {
      it++;
      if (solve_step(ik, ik->q0, mh, lambda)) {
        lambda = lambda < 1e-3 ? 1e-3 : 10 * lambda;
        if (lambda > IK_LAMBDA_MAX) break;
        continue;
      }
      double mumax = 0;
      for (int k = 0; k < mh; k++)
        if (fabs(ik->mu[k]) > mumax) mumax = fabs(ik->mu[k]);
      if (4 * mumax > rho) rho = 4 * mumax;
      const double phi = f + rho * c1;
      step = 0;
      for (int j = 0; j < ik->nq; j++)
        if (fabs(ik->dq[j]) > step) step = fabs(ik->dq[j]);
      double* q = mbs_state_upd_q(st);
      for (int j = 0; j < ik->nq; j++) q[j] = ik->q0[j] + ik->dq[j];
      for (int k = 0; k < ik->nbound; k++) {  // active ones exactly on their bounds
        const mbs_ik_bound* b = &ik->bound[k];
        if (q[b->q] < b->lower || ik->active[k] < 0) q[b->q] = b->lower;
        if (q[b->q] > b->upper || ik->active[k] > 0) q[b->q] = b->upper;
      }
      if (ik->nq != ik->nu) mbs_state_normalize_q(sys, st);
      double ft, cmt, c1t;
      rc = evaluate(ik, sys, st, observed, &ft, &cmt, &c1t);
      const double phit = ft + rho * c1t;
      if (rc == MBS_OK && isfinite(phit) &&
          (phit <= phi + 1e-14 * fabs(phi) || step <= step_tol)) {
        f = ft;
        cmax = cmt;
        c1 = c1t;
        accepted = 1;
        break;
      }
      // rejected: back to the previous pose, more damping
      memcpy(mbs_state_upd_q(st), ik->q0, (size_t)ik->nq * sizeof(double));
      if ((rc = evaluate(ik, sys, st, observed, &f, &cmax, &c1))) return rc;
      lambda = lambda < 1e-3 ? 1e-3 : 10 * lambda;
      if (lambda > IK_LAMBDA_MAX) break;
    }
    if (!accepted) break;
    last_step = step;
    const int near_gn = lambda <= 1e-2;
    lambda = lambda * 0.1 > IK_LAMBDA_MIN ? lambda * 0.1 : IK_LAMBDA_MIN;
    if (step <= step_tol && near_gn && (!hard || cmax <= con_tol)) {
      converged = 1;
      break;
    }
  }
  rep->iterations = it;
  rep->converged = converged;
  rep->cost = f;
  rep->step = last_step;
  rep->constraint_error = cmax;
  for (int k = 0; k < ik->nbound; k++) rep->nactive += ik->active[k] != 0;
  if (hard && !(cmax <= fmax(con_tol, 10 * ik->accuracy))) {
    // name the worst constraint
    int n = 0, worst = 0;
    mbs_calc_position_errors(sys, st, ik->perr, &n);
    for (int k = 1; k < n; k++)
      if (fabs(ik->perr[k]) > fabs(ik->perr[worst])) worst = k;
    int e = -1;
    for (int k = 0, h = 0; k < st->ncon_eq; k++)
      if (st->eq_level[k] == 0 && h++ == worst) e = k;
    const char* name = e >= 0 ? sys->con[st->eq_con[e]].name : "";
    return MBS_FAIL(&st->err, MBS_ERR_ASSEMBLY, nm_or(name, "inverse kinematics"),
                    "inverse kinematics: constraint '%s': position error %.3g remains after %d "
                    "iterations (accuracy %g)", nm_or(name, "?"), cmax, it, ik->accuracy);
  }
  return MBS_OK;
}
