// OpenSim 2's Thelen model (Thelen2003Muscle_Deprecated): its curves against their equations
// (Thelen, J Biomech Eng 125:70-77, 2003, in the forms OpenSim 1.x and 2.x used, written here
// independently of the library), the damped force-velocity relation and the maximum velocity
// that grows with activation, first-order activation dynamics against its closed-form
// solution, the static equilibrium, and a fiber's work-energy balance.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbs/muscle.h"
#include "mbs_test.h"

// ---------------------------------------------------------------------------------------------
// Reference formulas (OpenSim 2 defaults: e0T 0.033, e0M 0.6, gamma 0.5, kPE 4, Af 0.3,
// Flen 1.8, damping 0.05, Vmax 10, Vmax0 5)
// ---------------------------------------------------------------------------------------------

static double ref_fal(double l) { return exp(-(l - 1) * (l - 1) / 0.5); }
static double ref_fpe(double l) {
  if (l <= 1.6) return exp(4 * (l - 1) / 0.6) / exp(4.0);
  return 1 + 4 / 0.6 * (l - 1.6);  // its tangent at 1 + e0, where the exponential is 1
}
static double ref_fse(double strain) {
  const double e_toe = 0.609 * 0.033;
  double f = 0;
  if (strain > e_toe) f = 1.712 / 0.033 * (strain - e_toe) + 0.333333;
  else if (strain > 0) f = 0.333333 * (exp(3 * strain / e_toe) - 1) / (exp(3.0) - 1);
  return f + 0.001 * (1 + strain);
}
// Thelen's eq. 6-7 with damping d: the normalized fiber velocity v solves
// F - A = v (b + d), b = A + F/Af shortening, (2 + 2/Af)(A Flen - F)/(Flen - 1) lengthening
static double ref_branch_residual(double A, double F, double v, double d) {
  const double b = F < A ? A + F / 0.3 : (2 + 2 / 0.3) * (A * 1.8 - F) / 0.8;
  return F - A - v * (b + d);
}
// the velocity itself, continued below F = 0 and above F = 0.95 A Flen by the secants over
// 1e-6 A Flen (OpenSim 2's construction)
static double ref_branch_velocity(double A, double F, double d) {
  const double b = F < A ? A + F / 0.3 : (2 + 2 / 0.3) * (A * 1.8 - F) / 0.8;
  return (F - A) / (b + d);
}
static double ref_velocity(double A, double F, double d) {
  const double f1 = 0.95 * A * 1.8, e = 1e-6;
  if (F < 0) {
    const double v0 = ref_branch_velocity(A, 0, d), v1 = ref_branch_velocity(A, e, d);
    return v0 + F * (v1 - v0) / e;
  }
  if (F >= f1) {
    const double v0 = ref_branch_velocity(A, f1, d);
    const double v1 = ref_branch_velocity(A, (0.95 + e) * A * 1.8, d);
    return v0 + (F - f1) * (v1 - v0) / (e * A * 1.8);
  }
  return ref_branch_velocity(A, F, d);
}

static void default_params(mbs_muscle_params* p) {
  mbs_muscle_params_default(p, MBS_MUSCLE_THELEN2003_DEPRECATED);
  p->max_isometric_force = 800;
  p->optimal_fiber_length = 0.12;
  p->tendon_slack_length = 0.2;
  p->pennation_angle_at_optimal = 0.25;
}

static void test_defaults(void) {
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_THELEN2003_DEPRECATED);
  EXPECT_NEAR(p.thelen.fmax_tendon_strain, 0.033, 1e-15);
  EXPECT_NEAR(p.thelen.fmax_muscle_strain, 0.6, 1e-15);
  EXPECT_NEAR(p.thelen.kshape_active, 0.5, 1e-15);
  EXPECT_NEAR(p.thelen.kshape_passive, 4, 1e-15);
  EXPECT_NEAR(p.thelen.af, 0.3, 1e-15);
  EXPECT_NEAR(p.thelen.flen, 1.8, 1e-15);
  EXPECT_NEAR(p.thelen_deprecated.vmax, 10, 1e-15);
  EXPECT_NEAR(p.thelen_deprecated.vmax0, 5, 1e-15);
  EXPECT_NEAR(p.thelen_deprecated.damping, 0.05, 1e-15);
  EXPECT_NEAR(p.activation_time_constant, 0.01, 1e-15);
  EXPECT_NEAR(p.deactivation_time_constant, 0.04, 1e-15);
  EXPECT_TRUE(p.minimum_activation == 0);
  EXPECT_TRUE(!strcmp(mbs_muscle_kind_name(MBS_MUSCLE_THELEN2003_DEPRECATED),
                      "Thelen2003Muscle_Deprecated"));
  // the new Thelen model keeps its own defaults
  mbs_muscle_params_default(&p, MBS_MUSCLE_THELEN2003);
  EXPECT_NEAR(p.thelen.fmax_tendon_strain, 0.04, 1e-15);
  EXPECT_NEAR(p.thelen.af, 0.25, 1e-15);
}

// value against the reference, slope against central differences of the library's value
static void test_curves(void) {
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_THELEN2003_DEPRECATED);
  const mbs_thelen2003_curve_params* t = &p.thelen;
  double worst_v = 0, worst_d = 0;
  for (int i = 0; i <= 400; i++) {
    const double l = 0.3 + 1.7 * i / 400.0, x = -0.02 + 0.08 * i / 400.0, h = 1e-6;
    double d[2], dp[2], dm[2];
    mbs_thelen2003_deprecated_passive_force_length(t, l, d);
    mbs_thelen2003_deprecated_passive_force_length(t, l + h, dp);
    mbs_thelen2003_deprecated_passive_force_length(t, l - h, dm);
    worst_v = fmax(worst_v, fabs(d[0] - ref_fpe(l)) / fmax(1, ref_fpe(l)));
    if (fabs(l - 1.6) > 2 * h) worst_d = fmax(worst_d, fabs(d[1] - (dp[0] - dm[0]) / (2 * h)) /
                                                           fmax(1, fabs(d[1])));
    mbs_thelen2003_deprecated_tendon_force_length(t, x, d);
    mbs_thelen2003_deprecated_tendon_force_length(t, x + h, dp);
    mbs_thelen2003_deprecated_tendon_force_length(t, x - h, dm);
    worst_v = fmax(worst_v, fabs(d[0] - ref_fse(x)) / fmax(1, ref_fse(x)));
    if (fabs(x) > 2 * h && fabs(x - 0.609 * 0.033) > 2 * h)
      worst_d = fmax(worst_d, fabs(d[1] - (dp[0] - dm[0]) / (2 * h)) / fmax(1, fabs(d[1])));
    mbs_thelen2003_active_force_length(t, l, d);
    worst_v = fmax(worst_v, fabs(d[0] - ref_fal(l)));
  }
  EXPECT_TRUE(worst_v < 1e-14);
  EXPECT_TRUE(worst_d < 1e-6);
  printf("curves: largest value error %.2g, slope error %.2g\n", worst_v, worst_d);
  // the passive curve is 1 at l~ = 1 + e0 and e^-4 at rest; the tendon carries about F_max at
  // the strain e0 (Thelen's definition of FmaxTendonStrain, to the rounding of his constants)
  double d[2];
  mbs_thelen2003_deprecated_passive_force_length(t, 1.6, d);
  EXPECT_NEAR(d[0], 1, 1e-14);
  mbs_thelen2003_deprecated_passive_force_length(t, 1.0, d);
  EXPECT_NEAR(d[0], exp(-4.0), 1e-14);
  mbs_thelen2003_deprecated_tendon_force_length(t, 0.033, d);
  EXPECT_TRUE(fabs(d[0] - 1) < 0.005);
  mbs_thelen2003_deprecated_tendon_force_length(t, -0.01, d);  // slack: only the 0.001 term
  EXPECT_NEAR(d[0], 0.001 * 0.99, 1e-15);
}

static void test_fiber_velocity(void) {
  mbs_muscle_params p;
  mbs_muscle_params_default(&p, MBS_MUSCLE_THELEN2003_DEPRECATED);
  const mbs_thelen2003_curve_params* t = &p.thelen;
  const double damping[3] = {0, 0.05, 0.3}, actives[4] = {1e-6, 0.05, 0.4, 1.0};
  double worst_eq = 0, worst_slope = 0;
  int monotone = 1, continuous = 1;
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 4; j++) {
      const double d = damping[k], A = actives[j];
      // v = 0 at F = A; v = -1/(1 + d/A) unloaded (the maximum shortening velocity without
      // damping)
      EXPECT_ABS(mbs_thelen2003_deprecated_fiber_velocity(t, d, A, A, NULL), 0, 1e-15);
      EXPECT_NEAR(mbs_thelen2003_deprecated_fiber_velocity(t, d, A, 0, NULL), -A / (A + d),
                  1e-12);
      double prev = -INFINITY;
      for (int i = 0; i <= 1000; i++) {
        const double F = A * (-0.5 + 2.5 * i / 1000.0), h = 1e-7 * fmax(A, 1e-3);
        double dv;
        const double v = mbs_thelen2003_deprecated_fiber_velocity(t, d, A, F, &dv);
        if (!(v > prev)) monotone = 0;
        prev = v;
        if (F >= 0 && F < 0.95 * A * 1.8)  // Thelen's relation itself
          worst_eq = fmax(worst_eq, fabs(ref_branch_residual(A, F, v, d)) / fmax(A, 1e-3));
        const double vp = mbs_thelen2003_deprecated_fiber_velocity(t, d, A, F + h, NULL);
        const double vm = mbs_thelen2003_deprecated_fiber_velocity(t, d, A, F - h, NULL);
        if (fabs(F) > 2 * h && fabs(F - A) > 2 * h && fabs(F - 0.95 * A * 1.8) > 2 * h)
          worst_slope = fmax(worst_slope, fabs(dv - (vp - vm) / (2 * h)) / fmax(1, fabs(dv)));
      }
      // the straight continuations meet the curve where they begin
      const double f1 = 0.95 * A * 1.8, e = 1e-9 * A;
      if (fabs(mbs_thelen2003_deprecated_fiber_velocity(t, d, A, f1 + e, NULL) -
               mbs_thelen2003_deprecated_fiber_velocity(t, d, A, f1 - e, NULL)) > 1e-6 ||
          fabs(mbs_thelen2003_deprecated_fiber_velocity(t, d, A, e, NULL) -
               mbs_thelen2003_deprecated_fiber_velocity(t, d, A, -e, NULL)) > 1e-6)
        continuous = 0;
    }
  EXPECT_TRUE(monotone);
  EXPECT_TRUE(continuous);
  EXPECT_TRUE(worst_eq < 1e-13);
  EXPECT_TRUE(worst_slope < 1e-5);
  printf("fiber velocity: relation residual %.2g, slope error %.2g\n", worst_eq, worst_slope);
}

// the model's fiber dynamics against the equations evaluated here: pennation at constant
// width, tendon strain, v^M = v (Vmax0 + a (Vmax - Vmax0)) l_opt
static void test_eval(void) {
  mbs_muscle_params p;
  default_params(&p);
  mbs_muscle_model m;
  mbs_error err;
  EXPECT_OK(mbs_muscle_prepare(&m, &p, "test", &err));
  int na, nf;
  EXPECT_EQ_INT(mbs_muscle_state_count(&m, &na, &nf), 2);
  const double lopt = 0.12, lst = 0.2, fiso = 800, h = lopt * sin(0.25);
  double worst = 0, worst_v = 0;  // worst_v: against OpenSim 2's secant continuations
  for (int i = 0; i < 60; i++) {
    const double a = 0.02 + 0.98 * (i % 6) / 5.0, l = lopt * (0.6 + 0.1 * (i / 6));
    const double lmt = lst * 1.02 + l * 0.9, vmt = 0.3 * ((i % 3) - 1);
    mbs_muscle_output o;
    EXPECT_OK(mbs_muscle_eval(&m, lmt, vmt, a, l, &o, &err));
    const double cosa = sqrt(1 - (h / l) * (h / l));
    const double strain = (lmt - l * cosa) / lst - 1;
    const double ft = ref_fse(strain);
    const double F = ft / cosa - ref_fpe(l / lopt), A = a * ref_fal(l / lopt);
    const double vmax = (5 + a * 5) * lopt;
    const double v = o.fiber_velocity / vmax, vr = ref_velocity(A, F, 0.05);
    worst = fmax(worst, fabs(o.tendon_force - fiso * ft) / fiso);
    worst_v = fmax(worst_v, fabs(v - vr) / fmax(1, fabs(vr)));
    worst = fmax(worst, fabs(o.pennation_angle - asin(h / l)));
    worst = fmax(worst, fabs(o.fiber_state_derivative - o.fiber_velocity));
    worst = fmax(worst, fabs(o.fiber_force * cosa - o.tendon_force) / fiso);
    worst = fmax(worst, fabs(o.passive_fiber_force - fiso * ref_fpe(l / lopt)) / fiso);
  }
  EXPECT_TRUE(worst < 1e-12);
  EXPECT_TRUE(worst_v < 1e-9);
  printf("fiber dynamics: largest error %.2g, velocity %.2g\n", worst, worst_v);
  // activation at or above 1: Vmax itself; near zero: Vmax0 with A floored at 1e-6
  mbs_muscle_output o1, o0;
  EXPECT_OK(mbs_muscle_eval(&m, lst + lopt, 0, 1.2, lopt, &o1, &err));
  EXPECT_OK(mbs_muscle_eval(&m, lst + lopt, 0, 0, lopt, &o0, &err));
  EXPECT_TRUE(isfinite(o0.fiber_velocity) && isfinite(o1.fiber_velocity));
  EXPECT_NEAR(o1.activation, 1.2, 1e-15);  // not clamped
  // bad input
  EXPECT_TRUE(mbs_muscle_eval(&m, NAN, 0, 0.5, lopt, &o1, &err) == MBS_ERR_ARGUMENT);
  p.thelen_deprecated.vmax0 = 0;
  EXPECT_TRUE(mbs_muscle_prepare(&m, &p, "bad", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "Vmax") != NULL);
  default_params(&p);
  p.fiber_damping = 0.1;
  EXPECT_TRUE(mbs_muscle_prepare(&m, &p, "bad", &err) == MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(err.message, "damping") != NULL);
}

// da/dt = (u - a)/t_act while rising, (u - a)/t_deact while falling: a step of excitation
// integrated by small RK4 steps against a(t) = u + (a0 - u) e^{-t/tau}
static void test_activation(void) {
  mbs_muscle_params p;
  default_params(&p);
  mbs_muscle_model m;
  mbs_error err;
  EXPECT_OK(mbs_muscle_prepare(&m, &p, "test", &err));
  const double cases[2][3] = {{0.9, 0.02, 0.01}, {0.05, 0.8, 0.04}};  // u, a0, tau
  for (int c = 0; c < 2; c++) {
    const double u = cases[c][0], tau = cases[c][2];
    double a = cases[c][1];
    const double dt = 1e-5;
    for (int i = 0; i < 5000; i++) {
      const double k1 = mbs_muscle_activation_derivative(&m, u, a);
      const double k2 = mbs_muscle_activation_derivative(&m, u, a + 0.5 * dt * k1);
      const double k3 = mbs_muscle_activation_derivative(&m, u, a + 0.5 * dt * k2);
      const double k4 = mbs_muscle_activation_derivative(&m, u, a + dt * k3);
      a += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    }
    EXPECT_NEAR(a, u + (cases[c][1] - u) * exp(-0.05 / tau), 1e-10);
  }
  // unclamped: activation below zero and excitation above one act as they are
  EXPECT_NEAR(mbs_muscle_activation_derivative(&m, 1.5, -0.1), 1.6 / 0.01, 1e-12);
}

// static equilibrium: (a f_AL + f_PE) cos(alpha) = f_T at the solution, over a grid of
// activations and lengths; the speed does not change it
static void test_equilibrium(void) {
  mbs_muscle_params p;
  default_params(&p);
  mbs_muscle_model m;
  mbs_error err;
  EXPECT_OK(mbs_muscle_prepare(&m, &p, "test", &err));
  const double lopt = 0.12, fiso = 800, h = lopt * sin(0.25);
  double worst = 0;
  int solved = 0;
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 12; j++) {
      const double a = 0.01 + 0.11 * i, lmt = 0.2 + lopt * (0.7 + 0.08 * j);
      mbs_muscle_equilibrium eq, eqv;
      if (mbs_muscle_equilibrium_solve(&m, a, lmt, 0, 1e-9 * fiso, &eq, &err)) continue;
      EXPECT_OK(mbs_muscle_equilibrium_solve(&m, a, lmt, 0.4, 1e-9 * fiso, &eqv, &err));
      EXPECT_NEAR(eqv.fiber_length, eq.fiber_length, 1e-15);
      EXPECT_TRUE(eqv.fiber_velocity == 0);
      const double l = eq.fiber_length, cosa = sqrt(1 - (h / l) * (h / l));
      const double lt = lmt - l * cosa;
      const double r = (a * ref_fal(l / lopt) + ref_fpe(l / lopt)) * cosa - ref_fse(lt / 0.2 - 1);
      worst = fmax(worst, fabs(r));
      solved++;
    }
  EXPECT_EQ_INT(solved, 120);
  EXPECT_TRUE(worst < 1e-9);
  printf("equilibrium: %d solved, largest normalized residual %.2g\n", solved, worst);
}

// a fiber stretched and released at constant activation with the path held: the tendon's
// and the fiber's forces do work on each other through the fiber velocity; with the path
// still, the tendon's energy change equals the work of its force on the fiber (the 0.001
// term's energy included), to the integration error
static void test_energy(void) {
  mbs_muscle_params p;
  default_params(&p);
  p.pennation_angle_at_optimal = 0;  // fiber along the tendon
  mbs_muscle_model m;
  mbs_error err;
  EXPECT_OK(mbs_muscle_prepare(&m, &p, "test", &err));
  const double lopt = 0.12, lst = 0.2, fiso = 800, lmt = lst * 1.02 + 0.95 * lopt;
  const double l0 = 0.85 * lopt;
  double l = l0, work = 0;
  const double dt = 1e-6;
  mbs_muscle_output o;
  const double lt0 = lmt - l;
  for (int i = 0; i < 40000; i++) {  // RK2 (midpoint) on the fiber length
    EXPECT_OK(mbs_muscle_eval(&m, lmt, 0, 0.3, l, &o, &err));
    const double lm = l + 0.5 * dt * o.fiber_velocity;
    mbs_muscle_output om;
    EXPECT_OK(mbs_muscle_eval(&m, lmt, 0, 0.3, lm, &om, &err));
    work += om.tendon_force * om.fiber_velocity * dt;  // the tendon pulls the fiber longer
    l += dt * om.fiber_velocity;
  }
  // the tendon's stored energy: the integral of its force over its length change
  const double lt1 = lmt - l;
  double energy = 0;
  const int n = 2000;
  for (int i = 0; i < n; i++) {
    const double x = lt0 + (lt1 - lt0) * (i + 0.5) / n;
    energy += fiso * ref_fse(x / lst - 1) * (lt1 - lt0) / n;
  }
  EXPECT_TRUE(fabs(l - l0) > 0.01 * lopt);  // it moved
  EXPECT_NEAR(-energy, work, 1e-5);
  printf("energy: tendon %.6g J, work on the fiber %.6g J\n", -energy, work);
}

int main(void) {
  test_defaults();
  test_curves();
  test_fiber_velocity();
  test_eval();
  test_activation();
  test_equilibrium();
  test_energy();
  return mbs_test_finish("test_muscle_thelen_deprecated");
}
