// Integrators: explicit Runge-Kutta methods with error control (Merson 4(3), Dormand-Prince
// 5(4)), fixed-step methods (explicit Euler, RK4, semi-explicit Euler, velocity Verlet), and the
// dispatch to SUNDIALS CVODE (integrator_cvode.c). Common to all: coordinate projection after
// each accepted step and cubic Hermite dense output over the last step.
//
// Error control (Simbody paper eqs 5-7, Theory Manual §9): the local error estimate e is
// measured as max(RMS over q of |e_q|, RMS over u of |e_u| / max(1, |u|)), and a step is
// accepted when that is at most the accuracy alpha. Step size: h_new = 0.9 h (alpha/err)^(1/p),
// growing at most 5 times and shrinking at least to 0.1 of a rejected step.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>
#include <stdint.h>

#include "integrator_impl.h"
#include "mbs/controller.h"
#include "mbs/constraint.h"
#include "mbs/dynamics.h"

static struct mbs_rosw* rosw_create(const mbs_system* sys);
// ros34pw2's error estimate is of its embedded second-order solution while it advances with the
// third: scaled by 10 so that alpha gives it the global accuracy it gives Merson (energy within
// 10 alpha |E| on the tests' pendulums and chains)
static const double rosw_error_scale = 10.0;

static const char* const integ_names[MBS_INTEG_COUNT] = {
    "rk_merson", "dormand_prince", "cvode_bdf", "euler", "rk4", "semi_explicit_euler", "verlet",
    "ros34pw2"};

const char* mbs_integrator_name(mbs_integrator_type t) {
  return (int)t >= 0 && t < MBS_INTEG_COUNT ? integ_names[t] : NULL;
}

int mbs_integrator_from_name(const char* name) {
  for (int t = 0; t < MBS_INTEG_COUNT; t++)
    if (strcmp(integ_names[t], name) == 0) return t;
  return -1;
}

int mbs_integrator_is_error_controlled(mbs_integrator_type t) {
  return t == MBS_INTEG_RK_MERSON || t == MBS_INTEG_DORMAND_PRINCE || t == MBS_INTEG_CVODE_BDF ||
         t == MBS_INTEG_ROS34PW2;
}

void mbs_integrator_options_default(mbs_integrator_options* o) {
  o->accuracy = 1e-3;
  o->constraint_tolerance = 0;  // 0.1 accuracy
  o->fixed_step = 1e-3;
  o->initial_step = 0;
  o->min_step = 1e-12;
  o->max_step = 0;
}

mbs_integrator* mbs_integrator_create(const mbs_system* sys, mbs_integrator_type type,
                                      const mbs_integrator_options* o) {
  if (!sys || !mbs_system_is_finalized(sys) || (int)type < 0 || type >= MBS_INTEG_COUNT)
    return NULL;
  mbs_integrator_options opt;
  if (o) opt = *o;
  else mbs_integrator_options_default(&opt);
  if (!(opt.accuracy > 0) || !(opt.accuracy < 1) || !(opt.fixed_step > 0) ||
      !(opt.min_step >= 0) || !(opt.max_step >= 0) || !(opt.initial_step >= 0) ||
      !(opt.constraint_tolerance >= 0))
    return NULL;
  if (opt.constraint_tolerance == 0) opt.constraint_tolerance = 0.1 * opt.accuracy;
  mbs_integrator* in = calloc(1, sizeof(*in));
  if (!in) return NULL;
  in->type = type;
  in->opt = opt;
  in->nq = mbs_system_nq(sys);
  in->nu = mbs_system_nu(sys);
  in->nz = mbs_system_nz(sys);
  in->ny = in->nq + in->nu + in->nz;
  const size_t ny = (size_t)(in->ny > 0 ? in->ny : 1);
  in->mem = calloc(21 * ny, sizeof(double));
  if (!in->mem) {
    free(in);
    return NULL;
  }
  double* p = in->mem;
  in->y0 = p; p += ny;
  in->f0 = p; p += ny;
  in->y1 = p; p += ny;
  in->f1 = p; p += ny;
  in->ytmp = p; p += ny;
  in->yerr = p; p += ny;
  for (int i = 0; i < 7; i++) {
    in->k[i] = p;
    p += ny;
  }
  in->ylow = p;
  p += ny;
  in->dense = p;  // 5 ny
  in->jac_formed = 0;
  if (type == MBS_INTEG_ROS34PW2 && !(in->ros = rosw_create(sys))) {
    mbs_integrator_destroy(in);
    return NULL;
  }
  if (type == MBS_INTEG_CVODE_BDF && mbs_cvode_create(in, sys) != MBS_OK) {
    mbs_integrator_destroy(in);
    return NULL;
  }
  return in;
}

void mbs_integrator_destroy(mbs_integrator* in) {
  if (!in) return;
  if (in->cvode) mbs_cvode_destroy(in);
  free(in->ros);
  free(in->mem);
  free(in);
}

const mbs_integrator_stats* mbs_integrator_stats_of(const mbs_integrator* in) {
  return &in->stats;
}
mbs_integrator_type mbs_integrator_type_of(const mbs_integrator* in) { return in->type; }

void mbs_integrator_last_step(const mbs_integrator* in, double* t0, double* t1) {
  if (t0) *t0 = in->t0;
  if (t1) *t1 = in->t1;
}

//---------------------------------- evaluation -------------------------------------------------

// put (t, y) into the State (invalidating from Time)
void mbs_integ_set_state(const mbs_integrator* in, mbs_state* st, double t, const double* y) {
  memcpy(mbs_state_upd_q(st), y, (size_t)in->nq * sizeof(double));
  memcpy(mbs_state_upd_u(st), y + in->nq, (size_t)in->nu * sizeof(double));
  if (in->nz)
    memcpy(mbs_state_upd_z(st), y + in->nq + in->nu, (size_t)in->nz * sizeof(double));
  mbs_state_set_time(st, t);
}

void mbs_integ_get_state(const mbs_integrator* in, const mbs_state* st, double* y) {
  memcpy(y, mbs_state_q(st), (size_t)in->nq * sizeof(double));
  memcpy(y + in->nq, mbs_state_u(st), (size_t)in->nu * sizeof(double));
  if (in->nz) memcpy(y + in->nq + in->nu, mbs_state_z(st), (size_t)in->nz * sizeof(double));
}

// f = y'(t, y); the State is left realized at (t, y)
int mbs_integ_eval(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double t,
                   const double* y, double* f) {
  mbs_integ_set_state(in, st, t, y);
  in->stats.evaluations++;
  const int rc = mbs_realize_acceleration(sys, st);
  if (rc) return rc;
  memcpy(f, mbs_get_qdot(sys, st), (size_t)in->nq * sizeof(double));
  memcpy(f + in->nq, mbs_get_udot(sys, st), (size_t)in->nu * sizeof(double));
  if (in->nz)
    memcpy(f + in->nq + in->nu, mbs_get_zdot(sys, st), (size_t)in->nz * sizeof(double));
  return MBS_OK;
}

// weighted RMS norm of an error estimate e over q (absolute), u and z (each relative above 1):
// the largest of the three groups' RMS
double mbs_integ_error_norm(const mbs_integrator* in, const double* e, const double* ya,
                            const double* yb) {
  double sq = 0, su = 0, sz = 0;
  const int nqu = in->nq + in->nu;
  for (int i = 0; i < in->nq; i++) sq += e[i] * e[i];
  for (int i = in->nq; i < in->ny; i++) {
    const double w = 1.0 / fmax(1.0, fmax(fabs(ya[i]), fabs(yb[i])));
    if (i < nqu) su += (w * e[i]) * (w * e[i]);
    else sz += (w * e[i]) * (w * e[i]);
  }
  const double nq = in->nq ? sqrt(sq / in->nq) : 0, nu = in->nu ? sqrt(su / in->nu) : 0;
  const double nz = in->nz ? sqrt(sz / in->nz) : 0;
  const double n = fmax(fmax(nq, nu), nz);
  return isfinite(n) ? n : INFINITY;
}

// project the State onto the constraints; count it if anything changed
int mbs_integ_project(mbs_integrator* in, const mbs_system* sys, mbs_state* st) {
  mbs_integ_get_state(in, st, in->ytmp);
  const int rc = mbs_project(sys, st, in->opt.constraint_tolerance);
  if (rc) return rc;
  if (memcmp(in->ytmp, mbs_state_q(st), (size_t)in->nq * sizeof(double)) != 0 ||
      memcmp(in->ytmp + in->nq, mbs_state_u(st), (size_t)in->nu * sizeof(double)) != 0)
    in->stats.projections++;
  return MBS_OK;
}

//---------------------------------- initialization ---------------------------------------------

int mbs_integ_order(mbs_integrator_type t) {
  switch (t) {
    case MBS_INTEG_RK_MERSON: return 4;
    case MBS_INTEG_DORMAND_PRINCE: return 5;
    case MBS_INTEG_CVODE_BDF: return 5;
    case MBS_INTEG_EXPLICIT_EULER: return 1;
    case MBS_INTEG_RK4: return 4;
    case MBS_INTEG_SEMI_EXPLICIT_EULER: return 1;
    case MBS_INTEG_VERLET: return 2;
    case MBS_INTEG_ROS34PW2: return 3;  // the estimate is of the second-order solution
    case MBS_INTEG_COUNT: break;
  }
  return 1;
}

// a first step size from the derivatives (Hairer, Norsett and Wanner's heuristic, in the
// accuracy-weighted norm): small enough that an Euler step changes y by about 1% of alpha^(1/p).
// In two halves around the one evaluation it needs, y' at the trial point ytmp = y1 + h0 f1 into
// k[0] (the batched simulator evaluates it with other States')
double mbs_integ_initial_trial(mbs_integrator* in) {
  const double a = in->opt.accuracy;
  const double d0 = mbs_integ_error_norm(in, in->y1, in->y1, in->y1) / a;
  const double d1 = mbs_integ_error_norm(in, in->f1, in->y1, in->y1) / a;
  const double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  for (int i = 0; i < in->ny; i++) in->ytmp[i] = in->y1[i] + h0 * in->f1[i];
  return h0;
}

void mbs_integ_initial_finish(mbs_integrator* in, double h0, int trial_ok) {
  const double a = in->opt.accuracy;
  const double d1 = mbs_integ_error_norm(in, in->f1, in->y1, in->y1) / a;
  double d2 = 0;
  if (trial_ok) {
    for (int i = 0; i < in->ny; i++) in->yerr[i] = in->k[0][i] - in->f1[i];
    d2 = mbs_integ_error_norm(in, in->yerr, in->y1, in->ytmp) / a / h0;
  }
  const double p = mbs_integ_order(in->type);
  const double dm = fmax(d1, d2);
  const double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 1.0 / (p + 1));
  in->h = fmin(100 * h0, h1);
}

static int initial_step(mbs_integrator* in, const mbs_system* sys, mbs_state* st) {
  const double h0 = mbs_integ_initial_trial(in);
  const int rc = mbs_integ_eval(in, sys, st, in->t1 + h0, in->ytmp, in->k[0]);
  mbs_integ_initial_finish(in, h0, rc == MBS_OK);
  // leave the State at the start point
  return mbs_integ_eval(in, sys, st, in->t1, in->y1, in->f1);
}

int mbs_integrator_initialize(mbs_integrator* in, const mbs_system* sys, mbs_state* st) {
  if (!in || !sys || !st) return MBS_ERR_ARGUMENT;
  int rc = mbs_integ_project(in, sys, st);
  if (rc) return rc;
  in->t0 = in->t1 = mbs_state_time(st);
  mbs_integ_get_state(in, st, in->y1);
  if ((rc = mbs_integ_eval(in, sys, st, in->t1, in->y1, in->f1))) return rc;
  memcpy(in->y0, in->y1, (size_t)in->ny * sizeof(double));
  memcpy(in->f0, in->f1, (size_t)in->ny * sizeof(double));
  in->initialized = 1;
  in->dense_valid = 0;
  in->jac_formed = 0;
  if ((rc = mbs_controllers_record(sys, st))) return rc;  // where delayed signals start
  if (in->type == MBS_INTEG_CVODE_BDF) return mbs_cvode_initialize(in, sys, st);
  if (mbs_integrator_is_error_controlled(in->type)) {
    if (in->opt.initial_step > 0) in->h = in->opt.initial_step;
    else if ((rc = initial_step(in, sys, st))) return rc;
  } else {
    in->h = in->opt.fixed_step;
  }
  return MBS_OK;
}

//---------------------------------- Runge-Kutta stages -----------------------------------------

// ytmp = y + h sum_j a[j] k[j]
static void combine(mbs_integrator* in, const double* y, double h, const double* a, int nk,
                    double* out) {
  for (int i = 0; i < in->ny; i++) {
    double s = 0;
    for (int j = 0; j < nk; j++)
      if (a[j] != 0) s += a[j] * in->k[j][i];
    out[i] = y[i] + h * s;
  }
}

// Merson, stage by stage: the point of evaluation s = 1..4 of a step of size h from (t1, y1),
// from k[0 .. s-1], into out; returns its time
double mbs_integ_merson_point(mbs_integrator* in, int s, double h, double* out) {
  static const double a[4][4] = {{1.0 / 3, 0, 0, 0},
                                 {1.0 / 6, 1.0 / 6, 0, 0},
                                 {1.0 / 8, 0, 3.0 / 8, 0},
                                 {0.5, 0, -1.5, 2.0}};  // the third-order solution
  const double t = in->t1;
  combine(in, in->y1, h, a[s - 1], s, out);
  return s == 1 || s == 2 ? t + h / 3 : s == 3 ? t + h / 2 : t + h;
}

// after the evaluations k[1..4]: y_new (4th order) and the error estimate 0.2 (y4 - y3)
void mbs_integ_merson_finish(mbs_integrator* in, double h, double* ynew, double* err) {
  const double b[5] = {1.0 / 6, 0, 0, 4.0 / 6, 1.0 / 6};
  combine(in, in->y1, h, b, 5, ynew);
  for (int i = 0; i < in->ny; i++) err[i] = 0.2 * (ynew[i] - in->ylow[i]);
}

static int step_merson(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double h,
                       double* ynew, double* err) {
  memcpy(in->k[0], in->f1, (size_t)in->ny * sizeof(double));
  for (int s = 1; s <= 4; s++) {
    double* at = s == 4 ? in->ylow : in->ytmp;
    const double ts = mbs_integ_merson_point(in, s, h, at);
    const int rc = mbs_integ_eval(in, sys, st, ts, at, in->k[s]);
    if (rc) return rc;
  }
  mbs_integ_merson_finish(in, h, ynew, err);
  return MBS_OK;
}

// Dormand-Prince 5(4): y_new (5th order) and y5 - y4; k[6] = f(t + h, y_new)
static int step_dopri(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double h,
                      double* ynew, double* err) {
  static const double c[7] = {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1};
  static const double A[7][6] = {
      {0},
      {1.0 / 5},
      {3.0 / 40, 9.0 / 40},
      {44.0 / 45, -56.0 / 15, 32.0 / 9},
      {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
      {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
      {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
  static const double E[7] = {71.0 / 57600,      0, -71.0 / 16695, 71.0 / 1920,
                              -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
  const double t = in->t1;
  memcpy(in->k[0], in->f1, (size_t)in->ny * sizeof(double));
  int rc;
  for (int s = 1; s < 7; s++) {
    combine(in, in->y1, h, A[s], s, s == 6 ? ynew : in->ytmp);
    if ((rc = mbs_integ_eval(in, sys, st, t + c[s] * h, s == 6 ? ynew : in->ytmp, in->k[s])))
      return rc;
  }
  // The estimate is of the embedded fourth-order solution while the step advances with the
  // fifth: scaled by 10 so that alpha gives Dormand-Prince the global accuracy it gives Merson
  // (energy within 10 alpha |E| on the tests' pendulums and chains).
  for (int i = 0; i < in->ny; i++) {
    double s = 0;
    for (int j = 0; j < 7; j++) s += E[j] * in->k[j][i];
    err[i] = 10 * h * s;
  }
  return MBS_OK;
}

// Dormand-Prince's continuous extension of order 4 (Shampine's coefficients, as in Hairer's
// DOPRI5): after an accepted step, keep the five polynomial coefficient vectors
static void dopri_dense_prepare(mbs_integrator* in, double h, const double* y0,
                                const double* y1raw) {
  static const double d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
                      d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
                      d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;
  double* r = in->dense;
  const int n = in->ny;
  for (int i = 0; i < n; i++) {
    const double dy = y1raw[i] - y0[i];
    const double bspl = h * in->k[0][i] - dy;
    r[i] = y0[i];
    r[n + i] = dy;
    r[2 * n + i] = bspl;
    r[3 * n + i] = dy - h * in->k[6][i] - bspl;
    r[4 * n + i] = h * (d1 * in->k[0][i] + d3 * in->k[2][i] + d4 * in->k[3][i] +
                        d5 * in->k[4][i] + d6 * in->k[5][i] + d7 * in->k[6][i]);
  }
  in->dense_valid = 1;
}

//---------------------------------- Rosenbrock-W -----------------------------------------------

// The approximate Jacobian J of the linearly implicit method. The stiffness of a muscle-driven
// model is in its muscles: a compliant tendon is a stiff spring between the skeleton and a
// fiber state, and fiber damping a stiff damper. J keeps exactly those terms. With R_m the
// moment arms of muscle m (the generalized forces of a unit tension), so that its path's length
// changes by -R_m^T dq and its speed by -R_m^T du, and M the mass matrix:
//   dq'/du = I (q' = u; for mobilizers with q' = N(q) u this is an approximation, and for
//            models with nq != nu the coordinates are left explicit),
//   du'/dq = -M^-1 sum_m R_m F_L R_m^T,  du'/du = -M^-1 sum_m R_m F_V R_m^T,
//   du'/dz_m = M^-1 R_m F_z,
//   dz_m'/dq = -g_L R_m^T,  dz_m'/du = -g_V R_m^T,  dz_m'/dz_m = J_zz,
// the partial derivatives F_z, F_L, F_V of the tendon force and J_zz, g_L, g_V of the states'
// derivatives from the muscle model alone (mbs_muscles_linearize). Gravity, velocity forces and
// other auxiliary states are left explicit. A W-method keeps its order with any J, so these
// choices cost no accuracy, only stability where they leave something stiff out.
//
// With constraints (G u' = b), M^-1 becomes the constrained response: x = M_c^-1 tau solves
// [M G^T; G 0] [x; mu] = [tau; 0], so the implicit corrections keep to the constraints.
//
// Solving W k = r (W = I - h gamma J) then reduces, with k_u = r_u + d, to
//   [A G^T; G 0] [d; mu] = [h gamma sum_m R_m (beta_m + kappa_m R_m^T r_u); 0],
//   A = M - h gamma sum_m kappa_m R_m R_m^T,
// each muscle's states eliminated through its own small S_m = I - h gamma J_zz (below).
struct mbs_rosw {
  int nm, nu, coupled_q;
  int mc, nc;      // constraint equations: most, now; the systems below are nu + nc square
  mbs_muscle_lin* lin;
  double* R;       // nm x nu moment arms
  int* ridx;       // their nonzero entries: indices, rn[m] per muscle
  int* rn;
  double* M;       // nu x nu mass matrix
  double* G;       // nc x nu constraint Jacobian
  double* K0;      // [M G^T; G 0], LU-factored
  double* A;       // [A G^T; G 0], LU-factored for h_factored
  lapack_int* piv;
  lapack_int* piv0;
  double h_factored;
  double* S;       // per muscle: S_m^-1 (3 x 3) and y_m = S_m^-1 (h gamma g_L + g_V) (3)
  double* kappa;   // per muscle
  double* w;       // nu + nc work
};

static struct mbs_rosw* rosw_create(const mbs_system* sys) {
  const int nm = mbs_muscles_count(sys), nu = mbs_system_nu(sys);
  int mc = 0;
  for (int c = 0; c < mbs_system_nconstraint(sys); c++) {
    int mp, mv, ma;
    mbs_constraint_count(sys, c, &mp, &mv, &ma);
    mc += mp + mv + ma;  // holonomic, nonholonomic, acceleration-only equations
  }
  const size_t NM = (size_t)(nm > 0 ? nm : 1), NU = (size_t)(nu > 0 ? nu : 1);
  const size_t NK = NU + (size_t)mc;
  const size_t bytes = sizeof(struct mbs_rosw) + NM * sizeof(mbs_muscle_lin) +
                       (NM * NU + NU * NU + (size_t)mc * NU + 2 * NK * NK + 12 * NM + NM + NK) *
                           sizeof(double) +
                       (NM * NU + NM) * sizeof(int) + 2 * NK * sizeof(lapack_int) + 64;
  struct mbs_rosw* r = calloc(1, bytes);
  if (!r) return NULL;
  r->nm = nm;
  r->nu = nu;
  r->mc = mc;
  r->coupled_q = mbs_system_nq(sys) == nu;
  char* p = (char*)(r + 1);
  r->lin = (mbs_muscle_lin*)(void*)p;
  p += NM * sizeof(mbs_muscle_lin);
  double* d = (double*)(void*)p;
  r->R = d; d += NM * NU;
  r->M = d; d += NU * NU;
  r->G = d; d += (size_t)mc * NU;
  r->K0 = d; d += NK * NK;
  r->A = d; d += NK * NK;
  r->S = d; d += 12 * NM;
  r->kappa = d; d += NM;
  r->w = d; d += NK;
  int* ip = (int*)(void*)d;
  r->ridx = ip; ip += NM * NU;
  r->rn = ip; ip += NM;
  r->piv = (lapack_int*)(void*)(((uintptr_t)ip + 15) & ~(uintptr_t)15);
  r->piv0 = r->piv + NK;
  r->h_factored = -1;
  return r;
}

// x = S^-1 b for an n x n matrix (n <= 3) by Gaussian elimination with partial pivoting
static void small_solve(int n, const double* S, const double* b, double* x) {
  double a[3][4];
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) a[i][j] = S[3 * i + j];
    a[i][3] = b[i];
  }
  for (int c = 0; c < n; c++) {
    int pr = c;
    for (int i = c + 1; i < n; i++)
      if (fabs(a[i][c]) > fabs(a[pr][c])) pr = i;
    if (pr != c)
      for (int j = 0; j < 4; j++) {
        const double t = a[c][j];
        a[c][j] = a[pr][j];
        a[pr][j] = t;
      }
    for (int i = c + 1; i < n; i++) {
      const double f = a[i][c] / a[c][c];
      for (int j = c; j < 4; j++) a[i][j] -= f * a[c][j];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    double v = a[i][3];
    for (int j = i + 1; j < n; j++) v -= a[i][j] * x[j];
    x[i] = v / a[i][i];
  }
}

static double rdot(const struct mbs_rosw* r, int m, const double* v) {
  const double* R = r->R + (size_t)m * r->nu;
  const int* idx = r->ridx + (size_t)m * r->nu;
  double s = 0;
  for (int k = 0; k < r->rn[m]; k++) s += R[idx[k]] * v[idx[k]];
  return s;
}

static void raxpy(const struct mbs_rosw* r, int m, double a, double* v) {
  const double* R = r->R + (size_t)m * r->nu;
  const int* idx = r->ridx + (size_t)m * r->nu;
  for (int k = 0; k < r->rn[m]; k++) v[idx[k]] += a * R[idx[k]];
}

// K = [B G^T; G 0] from the nu x nu B. K is symmetric, so LAPACK takes it as it is, in either
// storage order.
static void kkt_fill(const struct mbs_rosw* r, double* K, const double* B) {
  const int nu = r->nu, nk = nu + r->nc;
  memset(K, 0, (size_t)nk * nk * sizeof(double));
  for (int i = 0; i < nu; i++) memcpy(K + (size_t)i * nk, B + (size_t)i * nu, nu * sizeof(double));
  for (int c = 0; c < r->nc; c++)
    for (int j = 0; j < nu; j++) {
      K[(size_t)(nu + c) * nk + j] = r->G[(size_t)c * nu + j];
      K[(size_t)j * nk + nu + c] = r->G[(size_t)c * nu + j];
    }
}

// J at (t1, y1): the mass matrix, the muscles' moment arms and partial derivatives
static int rosw_form(mbs_integrator* in, const mbs_system* sys, mbs_state* st) {
  struct mbs_rosw* r = in->ros;
  if (r->nm == 0) {  // J is dq'/du = I alone: nothing to form
    in->jac_formed = 1;
    return MBS_OK;
  }
  // the State is usually there already, realized (the end of the accepted step)
  int rc = MBS_OK;
  mbs_integ_get_state(in, st, in->ytmp);
  if (mbs_state_stage(st) < MBS_STAGE_DYNAMICS || mbs_state_time(st) != in->t1 ||
      memcmp(in->ytmp, in->y1, (size_t)in->ny * sizeof(double)) != 0) {
    mbs_integ_set_state(in, st, in->t1, in->y1);
    rc = mbs_realize_dynamics(sys, st);
  }
  if (rc == MBS_OK && r->nu > 0) rc = mbs_calc_mass_matrix(sys, st, r->M);
  r->nc = r->mc > 0 ? mbs_constraint_nequation(sys, st) : 0;
  if (r->nc > r->mc) return MBS_ERR_INTERNAL;
  if (rc == MBS_OK && r->nc > 0) rc = mbs_calc_constraint_jacobian(sys, st, r->G);
  if (rc == MBS_OK && r->nm > 0) rc = mbs_muscles_linearize(sys, st, r->lin, r->R);
  if (rc) return rc;
  for (int m = 0; m < r->nm; m++) {
    const double* R = r->R + (size_t)m * r->nu;
    double big = 0;
    for (int i = 0; i < r->nu; i++) big = fmax(big, fabs(R[i]));
    int n = 0;
    for (int i = 0; i < r->nu; i++)
      if (fabs(R[i]) > 1e-12 * big) r->ridx[(size_t)m * r->nu + n++] = i;
    r->rn[m] = n;
    if (!r->coupled_q) {  // coordinates explicit: no length terms
      r->lin[m].FL = 0;
      for (int k = 0; k < MBS_MUSCLE_LIN_MAXZ; k++) r->lin[m].gL[k] = 0;
    }
  }
  // [M G^T; G 0]; redundant constraints make it singular: then J leaves them out (a W-method
  // keeps its order with any J; the projection after each step still enforces them)
  kkt_fill(r, r->K0, r->M);
  int nk = r->nu + r->nc;
  if (r->nc > 0 && LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nk, nk, r->K0, nk, r->piv0) != 0) {
    r->nc = 0;
    kkt_fill(r, r->K0, r->M);
    nk = r->nu;
  } else if (r->nc > 0) {
    nk = 0;  // factored
  }
  if (nk > 0 && LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nk, nk, r->K0, nk, r->piv0) != 0)
    return MBS_ERR_SINGULAR;
  r->h_factored = -1;
  in->jac_formed = 1;
  return MBS_OK;
}

// the iteration matrix for the step h: each S_m, y_m, kappa_m, and A factored
static int rosw_factor(mbs_integrator* in, double h, double hg) {
  struct mbs_rosw* r = in->ros;
  if (r->h_factored == h || r->nm == 0) return MBS_OK;
  const int nu = r->nu, nk = nu + r->nc;
  kkt_fill(r, r->A, r->M);
  for (int m = 0; m < r->nm; m++) {
    const mbs_muscle_lin* l = &r->lin[m];
    double* S = r->S + 12 * m;
    double* y = S + 9;
    double b[MBS_MUSCLE_LIN_MAXZ];
    for (int i = 0; i < l->nz; i++) {
      for (int j = 0; j < l->nz; j++) S[3 * i + j] = (i == j) - hg * l->Jzz[i][j];
      b[i] = hg * l->gL[i] + l->gV[i];
    }
    // S_m^-1 by columns, then y_m
    double Sm[9], col[3], e[3];
    memcpy(Sm, S, sizeof(Sm));
    for (int j = 0; j < l->nz; j++) {
      for (int i = 0; i < l->nz; i++) e[i] = i == j;
      small_solve(l->nz, Sm, e, col);
      for (int i = 0; i < l->nz; i++) S[3 * i + j] = col[i];
    }
    for (int i = 0; i < l->nz; i++) {
      y[i] = 0;
      for (int j = 0; j < l->nz; j++) y[i] += S[3 * i + j] * b[j];
    }
    double fy = 0;
    for (int i = 0; i < l->nz; i++) fy += l->Fz[i] * y[i];
    const double kappa = -hg * l->FL - l->FV - hg * fy;
    r->kappa[m] = kappa;
    const double* R = r->R + (size_t)m * nu;
    const int* idx = r->ridx + (size_t)m * nu;
    for (int a = 0; a < r->rn[m]; a++)
      for (int c = 0; c < r->rn[m]; c++)
        r->A[(size_t)idx[a] * nk + idx[c]] -= hg * kappa * R[idx[a]] * R[idx[c]];
  }
  if (nk > 0 && LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nk, nk, r->A, nk, r->piv) != 0) {
    r->h_factored = -1;
    return MBS_ERR_SINGULAR;
  }
  r->h_factored = h;
  return MBS_OK;
}

// one stage: k = W^-1 h (f + J v)
static int rosw_stage(mbs_integrator* in, double h, double hg, const double* f, const double* v,
                      double* k) {
  const struct mbs_rosw* r = in->ros;
  const int nq = in->nq, nu = in->nu, nqu = nq + nu;
  double* kq = k;
  double* ku = k + nq;
  double* kz = k + nqu;
  const double* vq = v;
  const double* vu = v + nq;
  const double* vz = v + nqu;
  if (r->nm == 0) {  // W k = h (f + J v) with J = [0 I 0; 0 0 0; 0 0 0] when q' = u
    for (int i = 0; i < nu; i++) ku[i] = h * f[nq + i];
    for (int i = 0; i < in->nz; i++) kz[i] = h * f[nqu + i];
    for (int i = 0; i < nq; i++)
      kq[i] = h * f[i] + (r->coupled_q ? h * vu[i] + hg * ku[i] : 0);
    return MBS_OK;
  }
  const int nk = nu + r->nc;
  // r_q = h (q' + (J v)_q), r_z = h (z' + (J v)_z), r_u = h (u' + M_c^-1 sum_m R_m w_m)
  for (int i = 0; i < nq; i++) kq[i] = h * (f[i] + (r->coupled_q ? vu[i] : 0));
  for (int i = 0; i < in->nz; i++) kz[i] = h * f[nqu + i];
  double* x = r->w;
  memset(x, 0, (size_t)nk * sizeof(double));
  for (int m = 0; m < r->nm; m++) {
    const mbs_muscle_lin* l = &r->lin[m];
    const double Rq = r->coupled_q ? rdot(r, m, vq) : 0, Ru = rdot(r, m, vu);
    double wm = -l->FL * Rq - l->FV * Ru;
    for (int j = 0; j < l->nz; j++) wm += l->Fz[j] * vz[l->z0 + j];
    raxpy(r, m, wm, x);
    for (int i = 0; i < l->nz; i++) {
      double jv = -l->gL[i] * Rq - l->gV[i] * Ru;
      for (int j = 0; j < l->nz; j++) jv += l->Jzz[i][j] * vz[l->z0 + j];
      kz[l->z0 + i] += h * jv;
    }
  }
  if (nk > 0 &&
      LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nk, 1, r->K0, nk, r->piv0, x, nk) != 0)
    return MBS_ERR_SINGULAR;
  for (int i = 0; i < nu; i++) ku[i] = h * (f[nq + i] + x[i]);  // r_u for now
  // eliminate each muscle's states: S_m x_m = r_z - h gamma g_L s_m, s_m = R_m . r_q;
  // beta_m = -F_L s_m + F_z . x_m; the right side h gamma sum_m R_m (beta_m + kappa_m R_m . r_u)
  double* d = r->w;
  memset(d, 0, (size_t)nk * sizeof(double));
  for (int m = 0; m < r->nm; m++) {
    const mbs_muscle_lin* l = &r->lin[m];
    const double s = r->coupled_q ? rdot(r, m, kq) : 0;
    double b[MBS_MUSCLE_LIN_MAXZ], xm[MBS_MUSCLE_LIN_MAXZ];
    for (int i = 0; i < l->nz; i++) b[i] = kz[l->z0 + i] - hg * l->gL[i] * s;
    const double* Si = r->S + 12 * m;
    for (int i = 0; i < l->nz; i++) {
      xm[i] = 0;
      for (int j = 0; j < l->nz; j++) xm[i] += Si[3 * i + j] * b[j];
    }
    double beta = -l->FL * s;
    for (int i = 0; i < l->nz; i++) {
      kz[l->z0 + i] = xm[i];
      beta += l->Fz[i] * xm[i];
    }
    raxpy(r, m, hg * (beta + r->kappa[m] * rdot(r, m, ku)), d);
  }
  if (nk > 0 && LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nk, 1, r->A, nk, r->piv, d, nk) != 0)
    return MBS_ERR_SINGULAR;
  for (int i = 0; i < nu; i++) ku[i] += d[i];
  // back: k_z = x_m - h gamma p_m y_m with p_m = R_m . k_u; k_q = r_q + h gamma k_u
  for (int m = 0; m < r->nm; m++) {
    const mbs_muscle_lin* l = &r->lin[m];
    const double p = rdot(r, m, ku);
    const double* y = r->S + 12 * m + 9;
    for (int i = 0; i < l->nz; i++) kz[l->z0 + i] -= hg * p * y[i];
  }
  if (r->coupled_q)
    for (int i = 0; i < nq; i++) kq[i] += hg * ku[i];
  return MBS_OK;
}

// ROS34PW2 (Rang and Angermann, BIT 45, 2005):
//   W k_s = h f(t + alpha_s h, y + sum_j a_sj k_j) + h J sum_j g_sj k_j,  W = I - h gamma J
//   y_new = y + sum_s b_s k_s, error estimate sum_s (b_s - bhat_s) k_s (of the second-order
//   embedded solution). k[0..3] hold the increments; the first stage's derivative is f1.
static int step_ros34pw2(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double h,
                         double* ynew, double* err) {
  static const double gamma = 4.3586652150845900e-01;
  static const double A[4][3] = {{0},
                                 {8.7173304301691801e-01},
                                 {8.4457060015369423e-01, -1.1299064236484185e-01},
                                 {0, 0, 1}};
  static const double G[4][3] = {{0},
                                 {-8.7173304301691801e-01},
                                 {-9.0338057013044082e-01, 5.4180672388095326e-02},
                                 {2.4212380706095346e-01, -1.2232505839045147e+00,
                                  5.4526025533510214e-01}};
  static const double b[4] = {2.4212380706095346e-01, -1.2232505839045147e+00,
                              1.5452602553351020e+00, 4.3586652150845900e-01};
  static const double bhat[4] = {3.7810903145819369e-01, -9.6042292212423178e-02,
                                 5.0000000000000000e-01, 2.1793326075422950e-01};
  int rc;
  if (!in->jac_formed && (rc = rosw_form(in, sys, st))) return rc;
  const double hg = h * gamma;
  if ((rc = rosw_factor(in, h, hg)))
    return MBS_FAIL(&st->err, rc, mbs_system_name(sys), "%s: the iteration matrix is singular "
                    "for the step %g s", mbs_system_name(sys), h);
  const int n = in->ny;
  const double* y = in->y1;
  double* v = in->ylow;
  for (int s = 0; s < 4; s++) {
    const double* fs = in->f1;
    double c = 0;
    for (int j = 0; j < s; j++) c += A[s][j];
    if (s > 0) {
      for (int i = 0; i < n; i++) {
        double yi = y[i];
        for (int j = 0; j < s; j++) yi += A[s][j] * in->k[j][i];
        in->ytmp[i] = yi;
      }
      if ((rc = mbs_integ_eval(in, sys, st, in->t1 + c * h, in->ytmp, in->yerr))) return rc;
      fs = in->yerr;
    }
    for (int i = 0; i < n; i++) {
      double g = 0;
      for (int j = 0; j < s; j++) g += G[s][j] / h * in->k[j][i];
      v[i] = g * h;  // sum_j g_sj k_j
    }
    if ((rc = rosw_stage(in, h, hg, fs, v, in->k[s])))
      return MBS_FAIL(&st->err, rc, mbs_system_name(sys), "%s: the iteration matrix is "
                      "singular for the step %g s", mbs_system_name(sys), h);
  }
  for (int i = 0; i < n; i++) {
    double yi = y[i], e = 0;
    for (int s = 0; s < 4; s++) {
      yi += b[s] * in->k[s][i];
      e += (b[s] - bhat[s]) * in->k[s][i];
    }
    ynew[i] = yi;
    err[i] = rosw_error_scale * e;
  }
  return MBS_OK;
}

static int step_euler(mbs_integrator* in, double h, double* ynew) {
  for (int i = 0; i < in->ny; i++) ynew[i] = in->y1[i] + h * in->f1[i];
  return MBS_OK;
}

static int step_rk4(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double h,
                    double* ynew) {
  const double t = in->t1;
  memcpy(in->k[0], in->f1, (size_t)in->ny * sizeof(double));
  int rc;
  const double a2[1] = {0.5};
  combine(in, in->y1, h, a2, 1, in->ytmp);
  if ((rc = mbs_integ_eval(in, sys, st, t + h / 2, in->ytmp, in->k[1]))) return rc;
  const double a3[2] = {0, 0.5};
  combine(in, in->y1, h, a3, 2, in->ytmp);
  if ((rc = mbs_integ_eval(in, sys, st, t + h / 2, in->ytmp, in->k[2]))) return rc;
  const double a4[3] = {0, 0, 1};
  combine(in, in->y1, h, a4, 3, in->ytmp);
  if ((rc = mbs_integ_eval(in, sys, st, t + h, in->ytmp, in->k[3]))) return rc;
  const double b[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
  combine(in, in->y1, h, b, 4, ynew);
  return MBS_OK;
}

// u1 = u0 + h u'0, then q1 = q0 + h N(q0) u1; the State is at (t, y1) realized on entry
static int step_semi_explicit(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double h,
                              double* ynew) {
  const int nq = in->nq;
  for (int i = nq; i < in->ny; i++) ynew[i] = in->y1[i] + h * in->f1[i];
  int rc = mbs_calc_qdot(sys, st, ynew + nq, in->ytmp);
  if (rc) return rc;
  for (int i = 0; i < nq; i++) ynew[i] = in->y1[i] + h * in->ytmp[i];
  return MBS_OK;
}

// q1 = q0 + h q'0 + h^2/2 q''0; u1 = u0 + h/2 (u'0 + u'1), iterating u'1 = u'(q1, u1)
static int step_verlet(mbs_integrator* in, const mbs_system* sys, mbs_state* st, double h,
                       double* ynew) {
  const int nq = in->nq, nu = in->nu;
  const double* qdd = mbs_get_qdotdot(sys, st);  // the State is at (t, y1) on entry
  if (!qdd) return MBS_ERR_STAGE;
  for (int i = 0; i < nq; i++) ynew[i] = in->y1[i] + h * in->f1[i] + 0.5 * h * h * qdd[i];
  // u and z: trapezoidal, iterated
  for (int i = 0; i < nu + in->nz; i++) ynew[nq + i] = in->y1[nq + i] + h * in->f1[nq + i];
  for (int it = 0; it < 8; it++) {
    int rc = mbs_integ_eval(in, sys, st, in->t1 + h, ynew, in->k[0]);
    if (rc) return rc;
    double change = 0;
    for (int i = 0; i < nu + in->nz; i++) {
      const double un = in->y1[nq + i] + 0.5 * h * (in->f1[nq + i] + in->k[0][nq + i]);
      change = fmax(change, fabs(un - ynew[nq + i]) / fmax(1.0, fabs(un)));
      ynew[nq + i] = un;
    }
    if (change <= 1e-12) break;
  }
  return MBS_OK;
}

//---------------------------------- one step ---------------------------------------------------

static int fail(mbs_state* st, const mbs_system* sys, const char* why, double t, double h) {
  char reason[MBS_ERROR_MESSAGE_LEN];
  snprintf(reason, sizeof(reason), "%s", why);  // why may be the State's own message
  return mbs_error_set(&st->err, MBS_ERR_INTEGRATOR, "mbs_integrator_step", __LINE__,
                       mbs_system_name(sys), "%s: integration failed at t = %.9g (step %.3g): %s",
                       mbs_system_name(sys), t, h, reason);
}

// the failure when the step h from t fell below the smallest allowed (why: the reason of the
// last try's failure, if it failed; last_err: its error estimate, if it had one)
int mbs_integ_fail_min_step(const mbs_integrator* in, const mbs_system* sys, mbs_state* st,
                            const char* why, double last_err, double t, double h) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  if (why[0])
    snprintf(msg, sizeof(msg), "%s", why);
  else if (last_err > 0)
    snprintf(msg, sizeof(msg),
             "the step needed fell below the smallest allowed, %g s (error estimate of the "
             "last try %.3g times the accuracy %g); the model may be too stiff for %s (try "
             "cvode_bdf) or discontinuous", in->opt.min_step, last_err / in->opt.accuracy,
             in->opt.accuracy, mbs_integrator_name(in->type));
  else
    snprintf(msg, sizeof(msg),
             "the step the accuracy %g needs is below the smallest allowed, %g s; the model "
             "may be too stiff for %s (try cvode_bdf)", in->opt.accuracy, in->opt.min_step,
             mbs_integrator_name(in->type));
  return fail(st, sys, msg, t, h);
}

// the step from t of size h is done: [y0, f0] <- its start, [y1, f1] <- its end (ytmp, f0)
void mbs_integ_commit(mbs_integrator* in, double t, double h) {
  double* tmp = in->y0;
  in->y0 = in->y1;
  in->y1 = tmp;
  memcpy(in->y1, in->ytmp, (size_t)in->ny * sizeof(double));
  tmp = in->f1;
  in->f1 = in->f0;
  in->f0 = tmp;
  in->t0 = t;
  in->t1 = t + h;
  in->stats.steps++;
}

// the step to try after an accepted one of size h with error estimate err
void mbs_integ_accepted(mbs_integrator* in, double h, double err, int hit_limit) {
  const double p = mbs_integ_order(in->type);
  const double grow = err > 0 ? 0.9 * pow(in->opt.accuracy / err, 1.0 / p) : 5.0;
  // grow only when worth it; never past 5x
  if (grow >= 1.2 && !hit_limit) in->h = h * fmin(grow, 5.0);
  else if (!hit_limit) in->h = h;
}

// the step to try after a rejected one of size h (err: its error estimate, 0 when it failed)
double mbs_integ_rejected(mbs_integrator* in, double h, double err) {
  const double p = mbs_integ_order(in->type);
  const double shrink =
      isfinite(err) && err > 0 ? 0.9 * pow(in->opt.accuracy / err, 1.0 / p) : 0.1;
  h *= fmin(0.9, fmax(0.1, shrink));
  in->h = h;
  return h;
}

int mbs_integrator_step(mbs_integrator* in, const mbs_system* sys, mbs_state* st,
                        double t_limit) {
  if (!in || !sys || !st) return MBS_ERR_ARGUMENT;
  if (!in->initialized) {
    int rc = mbs_integrator_initialize(in, sys, st);
    if (rc) return rc;
  }
  if (in->type == MBS_INTEG_CVODE_BDF) return mbs_cvode_step(in, sys, st, t_limit);
  const double t = in->t1;
  if (!(t_limit > t)) return fail(st, sys, "the end time is not after the current time", t, 0);
  const int controlled = mbs_integrator_is_error_controlled(in->type);
  double h = controlled ? in->h : in->opt.fixed_step;
  if (in->opt.max_step > 0) h = fmin(h, in->opt.max_step);
  h = fmin(h, mbs_controllers_max_step(sys, st));  // delayed signals stay known
  double* ynew = in->k[5];
  if (in->type == MBS_INTEG_DORMAND_PRINCE) ynew = in->ylow;  // k[5], k[6] are stages there
  char why[MBS_ERROR_MESSAGE_LEN];
  why[0] = 0;
  double last_err = 0;
  for (;;) {
    int hit_limit = 0;
    if (t + h >= t_limit || t + 1.01 * h >= t_limit) {  // do not leave a sliver
      h = t_limit - t;
      hit_limit = 1;
    }
    if (h < in->opt.min_step && !hit_limit)
      return mbs_integ_fail_min_step(in, sys, st, why, last_err, t, h);
    in->stats.attempts++;
    why[0] = 0;
    int rc = MBS_OK;
    double err = 0;
    switch (in->type) {
      case MBS_INTEG_RK_MERSON: rc = step_merson(in, sys, st, h, ynew, in->yerr); break;
      case MBS_INTEG_DORMAND_PRINCE: rc = step_dopri(in, sys, st, h, ynew, in->yerr); break;
      case MBS_INTEG_EXPLICIT_EULER: rc = step_euler(in, h, ynew); break;
      case MBS_INTEG_RK4: rc = step_rk4(in, sys, st, h, ynew); break;
      case MBS_INTEG_SEMI_EXPLICIT_EULER: rc = step_semi_explicit(in, sys, st, h, ynew); break;
      case MBS_INTEG_VERLET: rc = step_verlet(in, sys, st, h, ynew); break;
      case MBS_INTEG_ROS34PW2: rc = step_ros34pw2(in, sys, st, h, ynew, in->yerr); break;
      case MBS_INTEG_CVODE_BDF:
      case MBS_INTEG_COUNT: rc = MBS_ERR_INTERNAL; break;
    }
    if (rc == MBS_OK && controlled) last_err = err = mbs_integ_error_norm(in, in->yerr, in->y1, ynew);
    if (rc != MBS_OK) snprintf(why, sizeof(why), "%s", mbs_state_error(st)->message);
    // accept: project and evaluate the derivatives at the new point
    if (rc == MBS_OK && err <= in->opt.accuracy) {
      mbs_integ_set_state(in, st, t + h, ynew);
      rc = mbs_integ_project(in, sys, st);
      if (rc == MBS_OK) {
        mbs_integ_get_state(in, st, in->ytmp);
        if (in->type == MBS_INTEG_DORMAND_PRINCE) dopri_dense_prepare(in, h, in->y1, ynew);
        if (in->type == MBS_INTEG_DORMAND_PRINCE &&
            memcmp(in->ytmp, ynew, (size_t)in->ny * sizeof(double)) == 0) {
          memcpy(in->f0, in->k[6], (size_t)in->ny * sizeof(double));  // first same as last
          rc = mbs_realize_acceleration(sys, st);
        } else {
          rc = mbs_integ_eval(in, sys, st, t + h, in->ytmp, in->f0);
        }
      }
      if (rc == MBS_OK) {
        mbs_integ_commit(in, t, h);
        // ros34pw2 linearizes anew at the start of each step (kept through rejected tries)
        if (in->type == MBS_INTEG_ROS34PW2) in->jac_formed = 0;
        if ((rc = mbs_controllers_record(sys, st))) return rc;
        if (controlled) mbs_integ_accepted(in, h, err, hit_limit);
        return MBS_OK;
      }
      snprintf(why, sizeof(why), "%s", mbs_state_error(st)->message);
    }
    // reject: restore the State at the last good point and shrink the step
    in->stats.rejected++;
    mbs_integ_set_state(in, st, t, in->y1);
    if (!controlled) {
      // a fixed-step method cannot shrink beyond its step on its own: halve and retry
      if (!(h > in->opt.min_step)) return fail(st, sys, why, t, h);
      h *= 0.5;
      continue;
    }
    h = mbs_integ_rejected(in, h, err);
  }
}

//---------------------------------- re-stepping ------------------------------------------------

int mbs_integ_restep(const mbs_integrator* in, mbs_integrator* shadow, const mbs_system* sys,
                     mbs_state* st, double t, double* y) {
  if (in->type == MBS_INTEG_CVODE_BDF) return mbs_integrator_interpolate(in, t, y);
  const double h = t - in->t0;
  if (h == 0) {
    memcpy(y, in->y0, (size_t)in->ny * sizeof(double));
    return MBS_OK;
  }
  // one step of the method from the start of the last step, into the shadow's buffers
  shadow->t1 = in->t0;
  memcpy(shadow->y1, in->y0, (size_t)in->ny * sizeof(double));
  memcpy(shadow->f1, in->f0, (size_t)in->ny * sizeof(double));
  int rc = MBS_OK;
  switch (in->type) {
    case MBS_INTEG_RK_MERSON: rc = step_merson(shadow, sys, st, h, y, shadow->yerr); break;
    case MBS_INTEG_DORMAND_PRINCE: rc = step_dopri(shadow, sys, st, h, y, shadow->yerr); break;
    case MBS_INTEG_EXPLICIT_EULER: rc = step_euler(shadow, h, y); break;
    case MBS_INTEG_RK4: rc = step_rk4(shadow, sys, st, h, y); break;
    case MBS_INTEG_ROS34PW2:
      shadow->jac_formed = 0;  // formed at the step's start
      rc = step_ros34pw2(shadow, sys, st, h, y, shadow->yerr);
      break;
    case MBS_INTEG_SEMI_EXPLICIT_EULER:
    case MBS_INTEG_VERLET:
      // these use the State realized at the start point
      mbs_integ_set_state(shadow, st, in->t0, in->y0);
      rc = mbs_realize_acceleration(sys, st);
      if (rc == MBS_OK)
        rc = in->type == MBS_INTEG_VERLET ? step_verlet(shadow, sys, st, h, y)
                                          : step_semi_explicit(shadow, sys, st, h, y);
      break;
    case MBS_INTEG_CVODE_BDF:
    case MBS_INTEG_COUNT: rc = MBS_ERR_INTERNAL; break;
  }
  return rc;
}

//---------------------------------- dense output -----------------------------------------------

int mbs_integrator_interpolate(const mbs_integrator* in, double t, double* y) {
  if (!in) return MBS_ERR_ARGUMENT;
  if (in->type == MBS_INTEG_CVODE_BDF && in->cvode) return mbs_cvode_interpolate(in, t, y);
  const double h = in->t1 - in->t0;
  if (!(h > 0)) {
    memcpy(y, in->y1, (size_t)in->ny * sizeof(double));
    return t == in->t1 ? MBS_OK : MBS_ERR_ARGUMENT;
  }
  const double s = (t - in->t0) / h;
  if (s < -1e-9 || s > 1 + 1e-9) return MBS_ERR_ARGUMENT;
  if (in->type == MBS_INTEG_DORMAND_PRINCE && in->dense_valid) {
    // y(s) = r1 + s (r2 + (1 - s) (r3 + s (r4 + (1 - s) r5))); then carried by the projection
    // correction of the end point, growing linearly over the step
    const int n = in->ny;
    const double* r = in->dense;
    const double s1 = 1 - s;
    for (int i = 0; i < n; i++) {
      const double raw =
          r[i] + s * (r[n + i] + s1 * (r[2 * n + i] + s * (r[3 * n + i] + s1 * r[4 * n + i])));
      const double end_correction = in->y1[i] - (r[i] + r[n + i]);
      y[i] = raw + s * end_correction;
    }
    return MBS_OK;
  }
  // cubic Hermite through (y0, f0) and (y1, f1)
  const double s2 = s * s, s3 = s2 * s;
  const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s;
  const double h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
  for (int i = 0; i < in->ny; i++)
    y[i] = h00 * in->y0[i] + h10 * h * in->f0[i] + h01 * in->y1[i] + h11 * h * in->f1[i];
  return MBS_OK;
}
