// Every constraint type on random trees, away from (and on) its manifold:
// - the Jacobian G from the constraint forces is the derivative of the velocity errors with
//   respect to u: verr(u) - verr(0) = G u for random u (so the forces are exactly G^T lambda);
// - acceleration errors are affine with the same G: aerr(u') - aerr(0) = G u';
// - d/dt perr = verr (holonomic rows) and d/dt verr = aerr along the motion q' = N(q) u,
//   u' given, t' = 1, by Richardson-extrapolated central differences;
// - after forward dynamics, the acceleration errors vanish where G has full row rank (with
//   redundant rows the multipliers are least-squares and inconsistent rows keep a residual).
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "random_tree.h"

static double rel(double a, double b) { return fabs(a - b) / (1 + fabs(b)); }

// a random tree whose coordinate-constraint candidates (pins and sliders) have q' = u
static const mbs_mobilizer_type kTypes[] = {MBS_MOB_PIN,       MBS_MOB_BALL,      MBS_MOB_SLIDER,
                                            MBS_MOB_GIMBAL,    MBS_MOB_FREE,      MBS_MOB_PLANAR,
                                            MBS_MOB_UNIVERSAL, MBS_MOB_FUNCTION,  MBS_MOB_ELLIPSOID,
                                            MBS_MOB_FREE_XYZ};

static void rand3(mbs_test_rng* r, double v[3], double s) {
  for (int i = 0; i < 3; i++) v[i] = mbs_test_uniform(r, -s, s);
}

// add one constraint of the type to a copy of the tree built from `seed`
static mbs_system* build(unsigned long long seed, mbs_constraint_type type) {
  mbs_test_rng rng = {seed};
  mbs_system* sys = mbs_system_create("constrained");
  mbs_function_spec lin = {MBS_FUNC_LINEAR, "lin", 0, (double[]){0.7, 0.2}, NULL, NULL, 0, 0};
  const int f_lin = mbs_system_add_function(sys, &lin);
  const double xs[5] = {-4, -1, 0, 1.5, 4}, ys[5] = {-2, -0.3, 0.1, 0.9, 1.5};
  mbs_function_spec spl = {MBS_FUNC_NATURAL_CUBIC_SPLINE, "curve", 5, NULL, xs, ys, 0, 0};
  const int f_spl = mbs_system_add_function(sys, &spl);
  mbs_function_mobilizer fm = {1, {{{0, 0, 1}, 0, f_lin}, {{1, 0, 0}, -1, -1}, {{0, 1, 0}, -1, -1}},
                               {{{1, 0, 0}, 0, f_spl}, {{0, 1, 0}, -1, -1}, {{0, 0, 1}, -1, -1}}};
  const double zero[1] = {0};
  mbs_function_spec cst = {MBS_FUNC_CONSTANT, "zero", 0, zero, NULL, NULL, 0, 0};
  const int f0 = mbs_system_add_function(sys, &cst);
  fm.rotation[1].function = fm.rotation[2].function = f0;
  fm.translation[1].function = fm.translation[2].function = f0;
  int pins[8], npin = 0;
  for (int i = 0; i < 7; i++) {
    char name[16];
    snprintf(name, sizeof(name), "b%d", i + 1);
    const int nb = mbs_system_nbody(sys);
    const int parent = i == 0 ? 0 : (int)mbs_test_uniform(&rng, 0, nb);
    // the first two bodies are pins: candidates for the coordinate constraints
    const mbs_mobilizer_type t = i < 2 ? MBS_MOB_PIN : kTypes[(i + seed) % 10];
    mbs_body_spec s = mbs_body_spec_default(name, parent, t);
    s.mass = mbs_test_uniform(&rng, 0.5, 2);
    rand3(&rng, s.com, 0.2);
    random_inertia(&rng, s.inertia);
    rand3(&rng, s.X_PF.angles, 3);
    rand3(&rng, s.X_PF.p, 0.4);
    rand3(&rng, s.X_BM.angles, 3);
    rand3(&rng, s.X_BM.p, 0.2);
    for (int k = 0; k < 3; k++) s.radii[k] = mbs_test_uniform(&rng, 0.1, 0.3);
    s.function = &fm;
    const int b = mbs_system_add_body(sys, &s);
    if (t == MBS_MOB_PIN || t == MBS_MOB_SLIDER || t == MBS_MOB_FUNCTION) pins[npin++] = b;
  }
  const double g[3] = {0, -9.81, 0.5};
  mbs_system_add_gravity(sys, g);
  mbs_constraint_spec c = mbs_constraint_spec_default(type, NULL);
  c.body1 = (int)mbs_test_uniform(&rng, 0, 4);
  c.body2 = 4 + (int)mbs_test_uniform(&rng, 0, 4);
  rand3(&rng, c.p1, 0.3);
  rand3(&rng, c.p2, 0.3);
  rand3(&rng, c.a1, 1);
  rand3(&rng, c.a2, 1);
  if (type == MBS_CON_WELD || type == MBS_CON_CONSTANT_ORIENTATION) {
    rand3(&rng, c.a1, 3);
    rand3(&rng, c.a2, 3);
  }
  c.value = type == MBS_CON_CONSTANT_ANGLE ? 1.1 : mbs_test_uniform(&rng, 0.2, 0.6);
  c.coordinate = (mbs_coordinate_ref){pins[0], 0};
  c.independent = (mbs_coordinate_ref){pins[1 % npin], 0};
  c.function = type == MBS_CON_PRESCRIBED_MOTION ? f_spl : f_lin;
  if (type == MBS_CON_COORDINATE_COUPLER) c.function = f_spl;
  if (mbs_system_add_constraint(sys, &c) < 0 || mbs_system_finalize(sys) != 0) {
    fprintf(stderr, "%s\n", mbs_system_error(sys)->message);
    mbs_system_destroy(sys);
    return NULL;
  }
  return sys;
}

// velocity errors (count m) at the state advanced along q' = N u, u' = ud, t' = 1 by s
static void errors_at(const mbs_system* sys, const mbs_state* st, mbs_state* tmp, double s,
                      const double* ud, double* pe, double* ve) {
  mbs_state_copy(sys, tmp, st);
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys);
  double qd[64];
  mbs_calc_qdot(sys, tmp, mbs_state_u(st), qd);
  double* q = mbs_state_upd_q(tmp);
  double* u = mbs_state_upd_u(tmp);
  for (int i = 0; i < nq; i++) q[i] += s * qd[i];
  for (int i = 0; i < nu; i++) u[i] += s * ud[i];
  mbs_state_set_time(tmp, mbs_state_time(st) + s);
  EXPECT_OK(mbs_realize_velocity(sys, tmp));
  EXPECT_OK(mbs_calc_position_errors(sys, tmp, pe, NULL));
  EXPECT_OK(mbs_calc_velocity_errors(sys, tmp, ve, NULL));
}

static double deriv(double p, double m, double p2, double m2, double e) {
  return (4 * (p2 - m2) / e - (p - m) / (2 * e)) / 3;
}

int main(void) {
  const int ntrials = test_quick() ? 2 : 12;
  double worst_G = 0, worst_A = 0, worst_p = 0, worst_v = 0, worst_zero = 0;
  int worst_type[5] = {-1, -1, -1, -1, -1};
  for (int type = 0; type < MBS_CON_COUNT; type++) {
    for (int trial = 0; trial < ntrials; trial++) {
      mbs_system* sys = build(1000 * (unsigned long long)type + (unsigned long long)trial + 1,
                              (mbs_constraint_type)type);
      EXPECT_TRUE(sys != NULL);
      if (!sys) continue;
      mbs_test_rng rng = {77 + (unsigned long long)trial};
      mbs_state* st = mbs_state_create(sys);
      mbs_state* tmp = mbs_state_create(sys);
      random_tree_state(&rng, sys, st, 1.0, 1.0, 1);
      mbs_state_set_time(st, mbs_test_uniform(&rng, -1, 1));
      const int nu = mbs_system_nu(sys);
      const int m = mbs_constraint_nequation(sys, st);
      int mp, mv, ma;
      mbs_constraint_count(sys, 0, &mp, &mv, &ma);
      EXPECT_EQ_INT(m, mp + mv + ma);
      EXPECT_OK(mbs_realize_velocity(sys, st));
      double G[8 * 64], u0[64], ud[64], e0[8], e1[8], a0[8], a1[8];
      EXPECT_OK(mbs_calc_constraint_jacobian(sys, st, G));
      // verr(u) - verr(0) = G u
      for (int i = 0; i < nu; i++) u0[i] = mbs_test_uniform(&rng, -1, 1);
      mbs_state_copy(sys, tmp, st);
      memset(mbs_state_upd_u(tmp), 0, nu * sizeof(double));
      EXPECT_OK(mbs_realize_velocity(sys, tmp));
      EXPECT_OK(mbs_calc_velocity_errors(sys, tmp, e0, NULL));
      memcpy(mbs_state_upd_u(tmp), u0, nu * sizeof(double));
      EXPECT_OK(mbs_realize_velocity(sys, tmp));
      EXPECT_OK(mbs_calc_velocity_errors(sys, tmp, e1, NULL));
      for (int r = 0; r < mp + mv; r++) {
        double gu = 0;
        for (int j = 0; j < nu; j++) gu += G[r * nu + j] * u0[j];
        const double e = rel(e1[r] - e0[r], gu);
        if (e > worst_G) worst_G = e, worst_type[0] = type;
      }
      // aerr(u') - aerr(0) = G u'
      for (int i = 0; i < nu; i++) ud[i] = mbs_test_uniform(&rng, -3, 3);
      double zero[64] = {0};
      EXPECT_OK(mbs_calc_acceleration_errors_of(sys, st, zero, a0, NULL));
      EXPECT_OK(mbs_calc_acceleration_errors_of(sys, st, ud, a1, NULL));
      for (int r = 0; r < m; r++) {
        double gu = 0;
        for (int j = 0; j < nu; j++) gu += G[r * nu + j] * ud[j];
        const double e = rel(a1[r] - a0[r], gu);
        if (e > worst_A) worst_A = e, worst_type[1] = type;
      }
      // d/dt perr = verr and d/dt verr = aerr(u') along the motion
      const double h = 1e-3;
      double pe[4][8], ve[4][8], vnow[8];
      const double sv[4] = {h, -h, h / 2, -h / 2};
      for (int k = 0; k < 4; k++) errors_at(sys, st, tmp, sv[k], ud, pe[k], ve[k]);
      EXPECT_OK(mbs_calc_velocity_errors(sys, st, vnow, NULL));
      for (int r = 0; r < mp; r++) {
        const double e = rel(deriv(pe[0][r], pe[1][r], pe[2][r], pe[3][r], h), vnow[r]);
        if (e > worst_p) worst_p = e, worst_type[2] = type;
      }
      for (int r = 0; r < mp + mv; r++) {
        const double e = rel(deriv(ve[0][r], ve[1][r], ve[2][r], ve[3][r], h), a1[r]);
        if (e > worst_v) worst_v = e, worst_type[3] = type;
      }
      // constrained forward dynamics meets the acceleration constraints (full-rank G)
      double Gc[8 * 64], sing[8], U[64], VT[64], superb[8];
      memcpy(Gc, G, sizeof(double) * m * nu);
      LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', m, nu, Gc, nu, sing, U, 1, VT, 1, superb);
      const int full_rank = m == 0 || sing[m - 1] > 1e-8 * sing[0];
      const int rc = mbs_realize_acceleration(sys, st);
      EXPECT_OK(rc);
      if (rc == 0 && full_rank) {
        double ae[8];
        int n;
        EXPECT_OK(mbs_calc_acceleration_errors(sys, st, ae, &n));
        EXPECT_EQ_INT(n, m);
        const double* udot = mbs_get_udot(sys, st);
        double scale = 1;
        for (int i = 0; i < nu; i++) scale = fmax(scale, fabs(udot[i]));
        for (int r = 0; r < n; r++) {
          const double e = fabs(ae[r]) / scale;
          if (e > worst_zero) worst_zero = e, worst_type[4] = type;
        }
      } else if (rc != 0) {
        fprintf(stderr, "%s: %s\n", mbs_constraint_type_name(type), mbs_state_error(st)->message);
      }
      mbs_state_destroy(tmp);
      mbs_state_destroy(st);
      mbs_system_destroy(sys);
    }
  }
  const char* names[5];
  for (int i = 0; i < 5; i++)
    names[i] = worst_type[i] >= 0 ? mbs_constraint_type_name(worst_type[i]) : "-";
  printf("worst relative errors: G from forces vs velocity errors %.3g (%s); acceleration "
         "errors affine in u' %.3g (%s); d/dt perr vs verr %.3g (%s); d/dt verr vs aerr %.3g "
         "(%s); aerr after forward dynamics %.3g (%s)\n",
         worst_G, names[0], worst_A, names[1], worst_p, names[2], worst_v, names[3], worst_zero,
         names[4]);
  EXPECT_TRUE(worst_G < 1e-12);
  EXPECT_TRUE(worst_A < 1e-12);
  EXPECT_TRUE(worst_p < 1e-8);
  EXPECT_TRUE(worst_v < 1e-8);
  EXPECT_TRUE(worst_zero < 1e-10);
  return mbs_test_finish("test_constraint_kernels");
}
