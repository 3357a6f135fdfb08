// Constraints: building, the active equations of a State, constrained accelerations, errors,
// projection and assembly.
//
// Accelerations (Simbody paper §4.2): with u'0 from the articulated-body method, build G^T one
// column per equation (the forces of a unit multiplier, mapped to generalized forces by J^T in
// O(depth)), X = M^-1 G^T (O(n) per column), Y = G X, and solve Y lambda = G u'0 - b (the
// acceleration errors of u'0) by LU, or by dgelsy's minimum-norm least squares when Y is
// singular (redundant constraints). Then u' = u'0 - X lambda.
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

//---------------------------------- building ---------------------------------------------------

mbs_constraint_spec mbs_constraint_spec_default(mbs_constraint_type type, const char* name) {
  mbs_constraint_spec s;
  memset(&s, 0, sizeof(s));
  s.type = type;
  s.name = name;
  s.function = -1;
  s.coordinate.body = s.independent.body = -1;
  s.enabled = 1;
  return s;
}

static char* con_strdup(const char* s) {
  const size_t n = strlen(s) + 1;
  char* r = malloc(n);
  if (r) memcpy(r, s, n);
  return r;
}

static int add_param_path(mbs_system* sys, const char* name, const char* what, int index, int size,
                          const char* unit) {
  char buf[256];
  snprintf(buf, sizeof(buf), "/constraintset/%s/%s", name, what);
  char* path = con_strdup(buf);
  if (!path) return 0;
  return mbs_system_add_param_path(sys, path, index, size, unit) == MBS_OK;
}

// resolve a coordinate reference to global q and u indices; requires q' = u
static int coordinate_index(mbs_system* sys, mbs_coordinate_ref r, const char* comp, int* q,
                            int* u) {
  if (r.body < 1 || r.body >= sys->nbody)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, "%s: body %d has no coordinates", comp,
                    r.body);
  if (r.axis < 0 || r.axis >= sys->body_nu[r.body])
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                    "%s: body '%s' has %d coordinates, no coordinate %d", comp,
                    sys->body_name[r.body], sys->body_nu[r.body], r.axis);
  if (mbs_mobilizer_ops_of(sys->body_mob[r.body])->qdot != NULL)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                    "%s: the coordinates of body '%s' (%s) are not integrals of its speeds; a "
                    "coordinate constraint needs q' = u",
                    comp, sys->body_name[r.body], mbs_mobilizer_type_name(sys->body_mob[r.body]));
  *q = sys->body_qadr[r.body] + r.axis;
  *u = sys->body_uadr[r.body] + r.axis;
  return MBS_OK;
}

int mbs_system_add_constraint(mbs_system* sys, const mbs_constraint_spec* s) {
  if (!sys) return MBS_ERR_ARGUMENT;
  if (sys->finalized)
    return MBS_FAIL(&sys->err, MBS_ERR_FINALIZED, sys->name,
                    "system '%s' is finalized; nothing can be added", sys->name);
  if (!s || (int)s->type < 0 || s->type >= MBS_CON_COUNT)
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, sys->name, "constraint: unknown type");
  const mbs_constraint_ops* ops = mbs_constraint_ops_of(s->type);
  char name[80];  // fits into a component string with its prefix
  if (s->name && *s->name) snprintf(name, sizeof(name), "%s", s->name);
  else snprintf(name, sizeof(name), "%s%d", ops->name, sys->ncon);
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "constraint '%s'", name);
  for (int c = 0; c < sys->ncon; c++)
    if (strcmp(sys->con[c].name, name) == 0)
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, "%s: a constraint of that name exists",
                      comp);

  mbs_constraint_desc d;
  memset(&d, 0, sizeof(d));
  d.type = s->type;
  d.body1 = s->body1;
  d.body2 = s->body2;
  d.qd = d.ud = d.qi = d.ui = -1;
  d.function = -1;
  d.mp = ops->mp;
  d.mv = ops->mv;
  d.ma = ops->ma;
  int rc = MBS_OK;
  const int coord = s->type == MBS_CON_COORDINATE_COUPLER || s->type == MBS_CON_LOCKED_COORDINATE ||
                    s->type == MBS_CON_PRESCRIBED_MOTION || s->type == MBS_CON_CONSTANT_SPEED ||
                    s->type == MBS_CON_CONSTANT_ACCELERATION;
  if (coord) {
    if ((rc = coordinate_index(sys, s->coordinate, comp, &d.qd, &d.ud))) return rc;
    d.body1 = d.body2 = s->coordinate.body;
    if (s->type == MBS_CON_COORDINATE_COUPLER) {
      if ((rc = coordinate_index(sys, s->independent, comp, &d.qi, &d.ui))) return rc;
      if (d.ui == d.ud)
        return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                        "%s: the dependent and independent coordinates are the same", comp);
    }
    if (s->type == MBS_CON_COORDINATE_COUPLER || s->type == MBS_CON_PRESCRIBED_MOTION) {
      if (s->function < 0 || s->function >= sys->nfunc)
        return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, "%s: function %d does not exist",
                        comp, s->function);
      d.function = s->function;
    }
  } else {
    if (s->body1 < 0 || s->body1 >= sys->nbody || s->body2 < 0 || s->body2 >= sys->nbody)
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp,
                      "%s: bodies %d and %d must exist (0..%d)", comp, s->body1, s->body2,
                      sys->nbody - 1);
    if (s->body1 == s->body2)
      return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, comp, "%s: both ends are on body '%s'", comp,
                      sys->body_name[s->body1]);
  }
  for (int i = 0; i < 3; i++)
    if (!isfinite(s->p1[i]) || !isfinite(s->p2[i]) || !isfinite(s->a1[i]) || !isfinite(s->a2[i]))
      return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, comp, "%s: geometry is not finite", comp);
  if (!isfinite(s->value))
    return MBS_FAIL(&sys->err, MBS_ERR_PARAMETER, comp, "%s: value is not finite", comp);

  // parameters
  double p[MBS_CP_SIZE];
  memcpy(p + MBS_CP_P1, s->p1, 3 * sizeof(double));
  memcpy(p + MBS_CP_P2, s->p2, 3 * sizeof(double));
  memcpy(p + MBS_CP_A1, s->a1, 3 * sizeof(double));
  memcpy(p + MBS_CP_A2, s->a2, 3 * sizeof(double));
  p[MBS_CP_VALUE] = s->value;
  p[MBS_CP_ENABLED] = s->enabled ? 1 : 0;
  if (sys->nparam + MBS_CP_SIZE > sys->cap_param) {
    int cap = sys->cap_param ? sys->cap_param : 64;
    while (cap < sys->nparam + MBS_CP_SIZE) cap *= 2;
    double* np = realloc(sys->param_default, (size_t)cap * sizeof(double));
    if (!np) return MBS_FAIL(&sys->err, MBS_ERR_NO_MEMORY, comp, "%s: out of memory", comp);
    sys->param_default = np;
    sys->cap_param = cap;
  }
  if (sys->ncon == sys->cap_con) {
    const int cap = sys->cap_con ? 2 * sys->cap_con : 8;
    mbs_constraint_desc* nc = realloc(sys->con, (size_t)cap * sizeof(*nc));
    if (!nc) return MBS_FAIL(&sys->err, MBS_ERR_NO_MEMORY, comp, "%s: out of memory", comp);
    sys->con = nc;
    sys->cap_con = cap;
  }
  d.param_adr = sys->nparam;
  memcpy(sys->param_default + sys->nparam, p, sizeof(p));
  sys->nparam += MBS_CP_SIZE;
  d.name = con_strdup(name);
  const int a = d.param_adr;
  if (!d.name || !add_param_path(sys, name, "point1", a + MBS_CP_P1, 3, "m") ||
      !add_param_path(sys, name, "point2", a + MBS_CP_P2, 3, "m") ||
      !add_param_path(sys, name, "direction1", a + MBS_CP_A1, 3, "") ||
      !add_param_path(sys, name, "direction2", a + MBS_CP_A2, 3, "") ||
      !add_param_path(sys, name, "value", a + MBS_CP_VALUE, 1, "") ||
      !add_param_path(sys, name, "enabled", a + MBS_CP_ENABLED, 1, "")) {
    free(d.name);
    return MBS_FAIL(&sys->err, MBS_ERR_NO_MEMORY, comp, "%s: out of memory", comp);
  }
  sys->con[sys->ncon] = d;
  sys->mcon += d.mp + d.mv + d.ma;
  return sys->ncon++;
}

int mbs_system_nconstraint(const mbs_system* sys) { return sys->ncon; }
const char* mbs_constraint_name(const mbs_system* sys, int c) {
  return c >= 0 && c < sys->ncon ? sys->con[c].name : NULL;
}
mbs_constraint_type mbs_constraint_type_of(const mbs_system* sys, int c) {
  return c >= 0 && c < sys->ncon ? sys->con[c].type : MBS_CON_COUNT;
}
void mbs_constraint_count(const mbs_system* sys, int c, int* mp, int* mv, int* ma) {
  const int ok = c >= 0 && c < sys->ncon;
  if (mp) *mp = ok ? sys->con[c].mp : 0;
  if (mv) *mv = ok ? sys->con[c].mv : 0;
  if (ma) *ma = ok ? sys->con[c].ma : 0;
}

static void con_ctx(mbs_con_ctx* c, const mbs_system* sys, const mbs_state* st, int k) {
  c->sys = sys;
  c->st = st;
  c->d = &sys->con[k];
  c->p = st->param + sys->con[k].param_adr;
  c->cc = st->con_cache + MBS_CC_SIZE * k;
}

//---------------------------------- Instance ---------------------------------------------------

static int unit(double out[3], const double in[3]) {
  const double n = mbs_v3_norm(in);
  if (!(n > 1e-12)) return 0;
  mbs_v3_scale(out, in, 1.0 / n);
  return 1;
}

int mbs_constraints_realize_instance(const mbs_system* sys, mbs_state* st) {
  int neq = 0, np = 0, nv = 0;
  for (int k = 0; k < sys->ncon; k++) {
    const mbs_constraint_desc* d = &sys->con[k];
    const double* p = st->param + d->param_adr;
    double* cc = st->con_cache + MBS_CC_SIZE * k;
    char comp[MBS_ERROR_COMPONENT_LEN];
    snprintf(comp, sizeof(comp), "constraint '%s'", d->name);
    for (int i = 0; i < MBS_CP_SIZE; i++)
      if (!isfinite(p[i]))
        return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: parameter %d is not finite",
                        comp, i);
    const int enabled = p[MBS_CP_ENABLED] != 0;
    // derived geometry
    memset(cc, 0, MBS_CC_SIZE * sizeof(double));
    const int needs_a1 = d->type == MBS_CON_POINT_IN_PLANE || d->type == MBS_CON_POINT_ON_LINE ||
                         d->type == MBS_CON_CONSTANT_ANGLE || d->type == MBS_CON_ROLLING;
    if (needs_a1 && !unit(cc + MBS_CC_A1, p + MBS_CP_A1))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: direction1 is zero", comp);
    if (d->type == MBS_CON_CONSTANT_ANGLE && !unit(cc + MBS_CC_A2, p + MBS_CP_A2))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: direction2 is zero", comp);
    if (needs_a1) {
      // x1: a unit vector perpendicular to a1; y1 = a1 x x1
      const double* a = cc + MBS_CC_A1;
      double e[3] = {0, 0, 0};
      const int k0 = fabs(a[0]) <= fabs(a[1]) && fabs(a[0]) <= fabs(a[2]) ? 0
                     : fabs(a[1]) <= fabs(a[2])                         ? 1
                                                                        : 2;
      e[k0] = 1;
      double x[3];
      mbs_v3_cross(x, a, e);
      unit(cc + MBS_CC_X1, x);
      mbs_v3_cross(cc + MBS_CC_Y1, a, cc + MBS_CC_X1);
    }
    mbs_rot_body_xyz(cc + MBS_CC_R1, p + MBS_CP_A1);
    mbs_rot_body_xyz(cc + MBS_CC_R2, p + MBS_CP_A2);
    if (d->type == MBS_CON_ROD && !(p[MBS_CP_VALUE] > 0))
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp,
                      "%s: rod length %g must be positive (use a ball constraint for 0)", comp,
                      p[MBS_CP_VALUE]);
    if (d->type == MBS_CON_ROLLING && p[MBS_CP_VALUE] < 0)
      return MBS_FAIL(&st->err, MBS_ERR_PARAMETER, comp, "%s: radius %g is negative", comp,
                      p[MBS_CP_VALUE]);
    if (!enabled) {
      st->con_eq[k] = -1;
      continue;
    }
    st->con_eq[k] = neq;
    const int m = d->mp + d->mv + d->ma;
    for (int i = 0; i < m; i++) {
      st->eq_con[neq + i] = k;
      st->eq_level[neq + i] = i < d->mp ? 0 : i < d->mp + d->mv ? 1 : 2;
    }
    neq += m;
    np += d->mp;
    nv += d->mv;
  }
  st->ncon_eq = neq;
  st->ncon_p = np;
  st->ncon_v = nv;
  return MBS_OK;
}

int mbs_constraint_nequation(const mbs_system* sys, mbs_state* st) {
  return mbs_realize_instance(sys, st) == MBS_OK ? st->ncon_eq : 0;
}

//---------------------------------- kinematics helpers -----------------------------------------

void mbs_body_accelerations(const mbs_system* sys, const mbs_state* st, const double* udot,
                            double* A) {
  mbs_sv_zero(A);
  for (int b = 1; b < sys->nbody; b++) {
    double* Ab = A + 6 * b;
    mbs_sv_shift_motion(Ab, A + 6 * sys->body_parent[b], st->l + 3 * b);
    const int uadr = sys->body_uadr[b];
    const double* H = st->H + 6 * uadr;
    for (int j = 0; j < sys->body_nu[b]; j++)
      for (int i = 0; i < 6; i++) Ab[i] += H[6 * j + i] * udot[uadr + j];
    for (int i = 0; i < 6; i++) Ab[i] += st->A_c[6 * b + i];
  }
}

// add J^T F_b for a spatial force F on body b (about its origin): walk to the root
static void add_jt_body_force(const mbs_system* sys, const mbs_state* st, int b, const double F[6],
                              double* f) {
  double Fa[6];
  mbs_sv_copy(Fa, F);
  for (int a = b; a != 0; a = sys->body_parent[a]) {
    const int ua = sys->body_uadr[a];
    const double* H = st->H + 6 * ua;
    for (int j = 0; j < sys->body_nu[a]; j++) f[ua + j] += mbs_sv_dot(H + 6 * j, Fa);
    double t[6];
    mbs_sv_shift_force(t, Fa, st->l + 3 * a);
    mbs_sv_copy(Fa, t);
  }
}

// G^T into Gt (nu x m column-major), using F (nbody x 6, zero on entry and exit) as scratch
static void build_Gt(const mbs_system* sys, mbs_state* st, double* Gt, double* F) {
  const int n = sys->nu, m = st->ncon_eq;
  memset(Gt, 0, (size_t)n * (size_t)m * sizeof(double));
  double lam[6];
  for (int k = 0; k < sys->ncon; k++) {
    const int e0 = st->con_eq[k];
    if (e0 < 0) continue;
    mbs_con_ctx c;
    con_ctx(&c, sys, st, k);
    const mbs_constraint_ops* ops = mbs_constraint_ops_of(c.d->type);
    const int mk = c.d->mp + c.d->mv + c.d->ma;
    for (int j = 0; j < mk; j++) {
      double* col = Gt + (size_t)n * (size_t)(e0 + j);
      for (int i = 0; i < mk; i++) lam[i] = i == j ? 1.0 : 0.0;
      ops->forces(&c, lam, F, col);
      const int bs[2] = {c.d->body1, c.d->body2};
      for (int s = 0; s < 2; s++) {
        const int b = bs[s];
        if (b <= 0 || (s == 1 && b == bs[0])) continue;
        add_jt_body_force(sys, st, b, F + 6 * b, col);
        mbs_sv_zero(F + 6 * b);
      }
    }
  }
}

// errors of the active equations: level 0 position (holonomic only), 1 velocity (holonomic
// and nonholonomic) for body velocities V and speeds u, 2 acceleration (all) for A and udot.
// Outputs are packed in equation order over the included equations.
static int eval_errors(const mbs_system* sys, const mbs_state* st, int level, const double* V,
                       const double* u, const double* A, const double* udot, double* out) {
  int n = 0;
  double e[8];
  for (int k = 0; k < sys->ncon; k++) {
    if (st->con_eq[k] < 0) continue;
    mbs_con_ctx c;
    con_ctx(&c, sys, st, k);
    const mbs_constraint_ops* ops = mbs_constraint_ops_of(c.d->type);
    int cnt;
    if (level == 0) {
      cnt = c.d->mp;
      if (cnt) ops->perr(&c, e);
    } else if (level == 1) {
      cnt = c.d->mp + c.d->mv;
      if (cnt) ops->verr(&c, V, u, e);
    } else {
      cnt = c.d->mp + c.d->mv + c.d->ma;
      ops->aerr(&c, A, udot, e);
    }
    for (int i = 0; i < cnt; i++) out[n++] = e[i];
  }
  return n;
}

//---------------------------------- accelerations ----------------------------------------------

// solve the m x m system Y x = b (Y column-major, overwritten) by LU, or by minimum-norm least
// squares when Y is singular; work must hold m^2 + 6 m + 64 doubles and iwork 2 m ints
static int solve_multipliers(int m, double* Y, double* b, double* work, lapack_int* iwork) {
  double* Ycopy = work;           // m x m
  double* bcopy = work + m * m;   // m
  double* w = bcopy + m;          // 4 m (dgecon) or dgelsy workspace
  memcpy(Ycopy, Y, (size_t)m * (size_t)m * sizeof(double));
  memcpy(bcopy, b, (size_t)m * sizeof(double));
  double anorm = 0;  // 1-norm
  for (int j = 0; j < m; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s += fabs(Y[j * m + i]);
    if (s > anorm) anorm = s;
  }
  lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, m, Y, m, iwork);
  double rcond = 0;
  if (info == 0)
    info = LAPACKE_dgecon_work(LAPACK_COL_MAJOR, '1', m, Y, m, anorm, &rcond, w, iwork + m);
  if (info == 0 && rcond > 1e-12) {
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', m, 1, Y, m, iwork, b, m);
    return MBS_OK;
  }
  // redundant (or inconsistent) equations: the minimum-norm least-squares multipliers
  memcpy(Y, Ycopy, (size_t)m * (size_t)m * sizeof(double));
  memcpy(b, bcopy, (size_t)m * sizeof(double));
  for (int i = 0; i < m; i++) iwork[i] = 0;
  lapack_int rank = 0;
  const lapack_int lwork = (lapack_int)(5 * m + 64);
  info = LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, m, 1, Y, m, b, m, iwork, 1e-12, &rank, w,
                             lwork);
  return info == 0 ? MBS_OK : MBS_ERR_SINGULAR;
}

int mbs_constraints_solve_accelerations(const mbs_system* sys, mbs_state* st) {
  const int m = st->ncon_eq, n = sys->nu, nb = sys->nbody;
  memset(st->F_con, 0, 6 * (size_t)nb * sizeof(double));
  memset(st->f_con, 0, (size_t)n * sizeof(double));
  if (m == 0) return MBS_OK;
  const size_t mark = mbs_stack_mark(st);
  double* F = MBS_STACK_ALLOC(st, 6 * nb, double);
  double* Y = MBS_STACK_ALLOC(st, (size_t)m * m, double);
  double* g0 = MBS_STACK_ALLOC(st, m, double);
  double* work = MBS_STACK_ALLOC(st, 5 * (size_t)m + (size_t)(m + 1) * m + 64, double);
  lapack_int* iwork = MBS_STACK_ALLOC(st, 2 * (size_t)m + 2, lapack_int);
  if (!F || !Y || !g0 || !work || !iwork) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  memset(F, 0, 6 * (size_t)nb * sizeof(double));
  build_Gt(sys, st, st->Gt, F);
  int rc = MBS_OK;
  for (int j = 0; j < m && rc == MBS_OK; j++)
    rc = mbs_calc_mass_matrix_inverse_times(sys, st, st->Gt + (size_t)n * j,
                                            st->MinvGt + (size_t)n * j);
  if (rc) {
    mbs_stack_release(st, mark);
    return rc;
  }
  // Y = G M^-1 G^T (symmetric), g0 = acceleration errors of the unconstrained u'
  for (int j = 0; j < m; j++)
    for (int i = 0; i <= j; i++) {
      const double* gi = st->Gt + (size_t)n * i;
      const double* xj = st->MinvGt + (size_t)n * j;
      double s = 0;
      for (int k = 0; k < n; k++) s += gi[k] * xj[k];
      Y[j * m + i] = Y[i * m + j] = s;
    }
  eval_errors(sys, st, 2, NULL, NULL, st->A_GB, st->udot, g0);
  memcpy(st->lambda, g0, (size_t)m * sizeof(double));
  rc = solve_multipliers(m, Y, st->lambda, work, iwork);
  if (rc) {
    mbs_stack_release(st, mark);
    return MBS_FAIL(&st->err, MBS_ERR_SINGULAR, sys->name,
                    "%s: the constraint equations could not be solved for their multipliers",
                    sys->name);
  }
  // u' = u'0 - M^-1 G^T lambda; body accelerations; the constraint forces -(F, f)(lambda)
  for (int j = 0; j < m; j++) {
    const double lj = st->lambda[j];
    const double* xj = st->MinvGt + (size_t)n * j;
    for (int k = 0; k < n; k++) st->udot[k] -= lj * xj[k];
  }
  mbs_body_accelerations(sys, st, st->udot, st->A_GB);
  for (int k = 0; k < sys->ncon; k++) {
    if (st->con_eq[k] < 0) continue;
    mbs_con_ctx c;
    con_ctx(&c, sys, st, k);
    mbs_constraint_ops_of(c.d->type)->forces(&c, st->lambda + st->con_eq[k], st->F_con, st->f_con);
  }
  for (int i = 0; i < 6 * nb; i++) st->F_con[i] = -st->F_con[i];
  for (int i = 0; i < n; i++) st->f_con[i] = -st->f_con[i];
  mbs_stack_release(st, mark);
  for (int i = 0; i < m; i++)
    if (!isfinite(st->lambda[i])) {
      const int k = st->eq_con[i];
      return MBS_FAIL(&st->err, MBS_ERR_NAN, sys->con[k].name,
                      "constraint '%s': its multiplier is not finite", sys->con[k].name);
    }
  return MBS_OK;
}

//---------------------------------- errors and results -----------------------------------------

int mbs_calc_position_errors(const mbs_system* sys, mbs_state* st, double* err, int* n) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  const int k = eval_errors(sys, st, 0, NULL, NULL, NULL, NULL, err);
  if (n) *n = k;
  return MBS_OK;
}

int mbs_calc_velocity_errors(const mbs_system* sys, mbs_state* st, double* err, int* n) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__);
  if (rc) return rc;
  const int k = eval_errors(sys, st, 1, st->V_GB, st->u, NULL, NULL, err);
  if (n) *n = k;
  return MBS_OK;
}

int mbs_calc_acceleration_errors(const mbs_system* sys, mbs_state* st, double* err, int* n) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_ACCELERATION, __func__);
  if (rc) return rc;
  const int k = eval_errors(sys, st, 2, NULL, NULL, st->A_GB, st->udot, err);
  if (n) *n = k;
  return MBS_OK;
}

int mbs_calc_acceleration_errors_of(const mbs_system* sys, mbs_state* st, const double* udot,
                                    double* err, int* n) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_VELOCITY, __func__);
  if (rc) return rc;
  const size_t mark = mbs_stack_mark(st);
  double* A = MBS_STACK_ALLOC(st, 6 * sys->nbody, double);
  if (!A) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  mbs_body_accelerations(sys, st, udot, A);
  const int k = eval_errors(sys, st, 2, NULL, NULL, A, udot, err);
  if (n) *n = k;
  mbs_stack_release(st, mark);
  return MBS_OK;
}

int mbs_calc_constraint_jacobian(const mbs_system* sys, mbs_state* st, double* G) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  const int n = sys->nu, m = st->ncon_eq;
  const size_t mark = mbs_stack_mark(st);
  double* F = MBS_STACK_ALLOC(st, 6 * sys->nbody, double);
  if (!F) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  memset(F, 0, 6 * (size_t)sys->nbody * sizeof(double));
  build_Gt(sys, st, st->Gt, F);  // G^T column-major is G row-major
  memcpy(G, st->Gt, (size_t)n * (size_t)m * sizeof(double));
  mbs_stack_release(st, mark);
  return MBS_OK;
}

const double* mbs_get_multipliers(const mbs_system* sys, mbs_state* st, int* n) {
  if (mbs_check_stage(sys, st, MBS_STAGE_ACCELERATION, __func__)) return NULL;
  if (n) *n = st->ncon_eq;
  return st->lambda;
}

int mbs_get_constraint_forces(const mbs_system* sys, mbs_state* st, int c, double F1[6],
                              double F2[6], double* f_mob) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_ACCELERATION, __func__);
  if (rc) return rc;
  if (c < 0 || c >= sys->ncon)
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, sys->name, "%s: no constraint %d", __func__, c);
  const int nb = sys->nbody, n = sys->nu;
  const size_t mark = mbs_stack_mark(st);
  double* F = MBS_STACK_ALLOC(st, 6 * nb, double);
  double* f = MBS_STACK_ALLOC(st, n + 1, double);
  if (!F || !f) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  memset(F, 0, 6 * (size_t)nb * sizeof(double));
  memset(f, 0, (size_t)n * sizeof(double));
  if (st->con_eq[c] >= 0) {
    mbs_con_ctx ctx;
    con_ctx(&ctx, sys, st, c);
    mbs_constraint_ops_of(ctx.d->type)->forces(&ctx, st->lambda + st->con_eq[c], F, f);
  }
  // the force on the system is -G^T lambda
  for (int i = 0; i < 6; i++) {
    if (F1) F1[i] = -F[6 * sys->con[c].body1 + i];
    if (F2) F2[i] = sys->con[c].body2 == sys->con[c].body1 ? 0 : -F[6 * sys->con[c].body2 + i];
  }
  if (f_mob)
    for (int i = 0; i < n; i++) f_mob[i] = -f[i];
  mbs_stack_release(st, mark);
  return MBS_OK;
}

//---------------------------------- projection and assembly ------------------------------------

static double rms(const double* e, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += e[i] * e[i];
  return n > 0 ? sqrt(s / n) : 0;
}

// minimum-norm solution of the underdetermined rows of G selected by `rows` (level mask) in
// the weighted norm |W x| with W = diag(1 / scale) (scale NULL: W = I): x = S z with
// min |z| s.t. G_rows S z = rhs; G given through Gt (nu x m). x has nu entries.
static int min_norm_solve(const mbs_system* sys, mbs_state* st, const int* rows, int nr,
                          const double* rhs, const double* scale, double* x) {
  const int n = sys->nu;
  const int ld = nr > n ? nr : n;
  const size_t mark = mbs_stack_mark(st);
  double* A = MBS_STACK_ALLOC(st, (size_t)nr * n, double);   // nr x n column-major
  double* b = MBS_STACK_ALLOC(st, ld, double);
  lapack_int* jpvt = MBS_STACK_ALLOC(st, n + 1, lapack_int);
  const lapack_int lwork = (lapack_int)(4 * (nr + n) + 2 * nr * n + 64);
  double* work = MBS_STACK_ALLOC(st, lwork, double);
  if (!A || !b || !jpvt || !work) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  for (int r = 0; r < nr; r++) {
    const double* g = st->Gt + (size_t)n * rows[r];
    for (int j = 0; j < n; j++) A[(size_t)j * nr + r] = scale ? g[j] * scale[j] : g[j];
    b[r] = rhs[r];
  }
  for (int j = 0; j < n; j++) jpvt[j] = 0;
  lapack_int rank = 0;
  const lapack_int info = LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, nr, n, 1, A, nr, b, ld, jpvt,
                                              1e-12, &rank, work, lwork);
  if (info == 0)
    for (int j = 0; j < n; j++) x[j] = scale ? scale[j] * b[j] : b[j];
  mbs_stack_release(st, mark);
  return info == 0 ? MBS_OK : MBS_ERR_SINGULAR;
}

// the worst constraint by position error, for messages
static const char* worst_constraint(const mbs_system* sys, const mbs_state* st, const double* e,
                                    const int* rows, int nr, double* worst) {
  int wi = 0;
  *worst = 0;
  for (int r = 0; r < nr; r++)
    if (fabs(e[r]) > *worst) {
      *worst = fabs(e[r]);
      wi = r;
    }
  return nr ? sys->con[st->eq_con[rows[wi]]].name : "";
}

static int project_positions(const mbs_system* sys, mbs_state* st, double tol, int max_iter,
                             double* err_out) {
  const int n = sys->nu, m = st->ncon_eq;
  const size_t mark = mbs_stack_mark(st);
  int* rows = MBS_STACK_ALLOC(st, m + 1, int);
  double* e = MBS_STACK_ALLOC(st, m + 1, double);
  double* du = MBS_STACK_ALLOC(st, n + 1, double);
  double* dq = MBS_STACK_ALLOC(st, sys->nq + 1, double);
  double* F = MBS_STACK_ALLOC(st, 6 * sys->nbody, double);
  if (!rows || !e || !du || !dq || !F) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  int nr = 0;
  for (int i = 0; i < m; i++)
    if (st->eq_level[i] == 0) rows[nr++] = i;
  int rc = MBS_OK;
  double err = 0, prev = INFINITY;
  for (int it = 0;; it++) {
    if ((rc = mbs_realize_position(sys, st))) break;
    eval_errors(sys, st, 0, NULL, NULL, NULL, NULL, e);
    err = rms(e, nr);
    if (err <= tol) break;
    if (it >= max_iter || !(err < 2 * prev)) {
      rc = MBS_ERR_ASSEMBLY;
      break;
    }
    prev = err;
    memset(F, 0, 6 * (size_t)sys->nbody * sizeof(double));
    build_Gt(sys, st, st->Gt, F);
    // unit weights, as in the error norm: angles in radians, lengths over a 1 m length scale
    if ((rc = min_norm_solve(sys, st, rows, nr, e, NULL, du))) break;
    // q -= N du (Gauss-Newton step; the mapping N takes speeds to coordinate rates)
    if ((rc = mbs_calc_qdot(sys, st, du, dq))) break;
    double* q = mbs_state_upd_q(st);
    for (int i = 0; i < sys->nq; i++) q[i] -= dq[i];
    mbs_state_normalize_q(sys, st);
  }
  if (err_out) *err_out = err;
  if (rc == MBS_ERR_ASSEMBLY) {
    double worst;
    const char* name = worst_constraint(sys, st, e, rows, nr, &worst);
    MBS_FAIL(&st->err, MBS_ERR_ASSEMBLY, name,
             "constraint '%s': position error %.3g remains (RMS %.3g over %d equations, "
             "tolerance %.3g)", name, worst, err, nr, tol);
  }
  mbs_stack_release(st, mark);
  return rc;
}

static int project_velocities(const mbs_system* sys, mbs_state* st, double tol) {
  const int n = sys->nu, m = st->ncon_eq;
  const size_t mark = mbs_stack_mark(st);
  int* rows = MBS_STACK_ALLOC(st, m + 1, int);
  double* e = MBS_STACK_ALLOC(st, m + 1, double);
  double* du = MBS_STACK_ALLOC(st, n + 1, double);
  double* scale = MBS_STACK_ALLOC(st, n + 1, double);
  double* F = MBS_STACK_ALLOC(st, 6 * sys->nbody, double);
  if (!rows || !e || !du || !scale || !F) {
    mbs_stack_release(st, mark);
    return MBS_ERR_STACK;
  }
  int nr = 0;
  for (int i = 0; i < m; i++)
    if (st->eq_level[i] <= 1) rows[nr++] = i;
  int rc = MBS_OK;
  for (int it = 0; it < 3; it++) {  // linear in u: one step, repeated only for round-off
    if ((rc = mbs_realize_velocity(sys, st))) break;
    eval_errors(sys, st, 1, st->V_GB, st->u, NULL, NULL, e);
    const double err = rms(e, nr);
    if (err <= tol) break;
    if (it == 2) {
      double worst;
      const char* name = worst_constraint(sys, st, e, rows, nr, &worst);
      rc = MBS_FAIL(&st->err, MBS_ERR_ASSEMBLY, name,
                    "constraint '%s': velocity error %.3g remains (RMS %.3g, tolerance %.3g)",
                    name, worst, err, tol);
      break;
    }
    memset(F, 0, 6 * (size_t)sys->nbody * sizeof(double));
    build_Gt(sys, st, st->Gt, F);
    // the integrators' weights on u (relative above 1): the correction is normal to the
    // manifold in the norm the error is measured in (Theory Manual §10.1)
    for (int i = 0; i < n; i++) scale[i] = fmax(1.0, fabs(st->u[i]));
    if ((rc = min_norm_solve(sys, st, rows, nr, e, scale, du))) break;
    double* u = mbs_state_upd_u(st);
    for (int i = 0; i < n; i++) u[i] -= du[i];
  }
  mbs_stack_release(st, mark);
  return rc;
}

// time scale t_c that weighs velocity errors against position errors (Theory Manual §9.3):
// a velocity error v counts as the position error t_c v
#define MBS_CONSTRAINT_TIME_SCALE 0.1

int mbs_project(const mbs_system* sys, mbs_state* st, double tol) {
  int rc = mbs_realize_position(sys, st);
  if (rc) return rc;
  if (st->ncon_eq == 0) return MBS_OK;
  if ((rc = project_positions(sys, st, tol, 10, NULL))) return rc;
  return project_velocities(sys, st, tol / MBS_CONSTRAINT_TIME_SCALE);
}

void mbs_assembly_options_default(mbs_assembly_options* o) {
  o->tolerance = 1e-10;
  o->max_iterations = 50;
}

int mbs_assemble(const mbs_system* sys, mbs_state* st, const mbs_assembly_options* o) {
  mbs_assembly_options d;
  if (!o) {
    mbs_assembly_options_default(&d);
    o = &d;
  }
  int rc = mbs_realize_position(sys, st);
  if (rc) return rc;
  if (st->ncon_eq == 0) return MBS_OK;
  if ((rc = project_positions(sys, st, o->tolerance, o->max_iterations, NULL))) return rc;
  return project_velocities(sys, st, o->tolerance);
}
