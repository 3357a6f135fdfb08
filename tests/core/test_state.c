// System/State contract: stage bookkeeping and invalidation, stale reads refused, clear errors
// for bad input that name the component, nothing lost after an error, copies and the variable
// block, parameters taking effect, and no allocation while realizing (malloc is wrapped at link
// time to count calls).
#include <stdlib.h>
#include <string.h>

#include "random_tree.h"

#include "mbs_test_alloc.h"

static int contains(const char* s, const char* sub) { return strstr(s, sub) != NULL; }

// a pendulum: one pin body, point mass m at distance L along x, gravity -y
static mbs_system* pendulum(double m, double L) {
  mbs_system* sys = mbs_system_create("pendulum");
  mbs_body_spec s = mbs_body_spec_default("bob", 0, MBS_MOB_PIN);
  s.mass = m;
  s.com[0] = L;
  mbs_system_add_body(sys, &s);
  const double g[3] = {0, -9.81, 0};
  mbs_system_add_gravity(sys, g);
  const double x[3] = {-1, 0, 1}, y[3] = {0, 0.5, 0.7};
  mbs_function_spec f = {MBS_FUNC_NATURAL_CUBIC_SPLINE, "curve", 3, NULL, x, y, 0, 0};
  mbs_system_add_function(sys, &f);
  mbs_system_finalize(sys);
  return sys;
}

static void test_stages(void) {
  mbs_system* sys = pendulum(2.0, 0.5);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_EQ_INT(mbs_state_stage(st), MBS_STAGE_TOPOLOGY);
  // nothing realized: results are refused with MBS_ERR_STAGE and a message naming the stage
  EXPECT_TRUE(mbs_get_udot(sys, st) == NULL);
  EXPECT_EQ_INT(mbs_state_error(st)->code, MBS_ERR_STAGE);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "Acceleration"));
  double R[9], p[3], V[6];
  EXPECT_EQ_INT(mbs_get_body_transform(sys, st, 1, R, p), MBS_ERR_STAGE);

  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_EQ_INT(mbs_state_stage(st), MBS_STAGE_ACCELERATION);
  EXPECT_TRUE(mbs_get_udot(sys, st) != NULL);
  // each variable invalidates from its own stage up
  mbs_state_upd_applied_mobility_forces(st)[0] = 1;
  EXPECT_EQ_INT(mbs_state_stage(st), MBS_STAGE_VELOCITY);
  EXPECT_TRUE(mbs_get_udot(sys, st) == NULL);
  EXPECT_OK(mbs_get_body_velocity(sys, st, 1, V));
  mbs_state_upd_u(st)[0] = 1;
  EXPECT_EQ_INT(mbs_state_stage(st), MBS_STAGE_POSITION);
  EXPECT_EQ_INT(mbs_get_body_velocity(sys, st, 1, V), MBS_ERR_STAGE);
  EXPECT_OK(mbs_get_body_transform(sys, st, 1, R, p));
  mbs_state_upd_q(st)[0] = 0.3;
  EXPECT_EQ_INT(mbs_state_stage(st), MBS_STAGE_TIME);
  EXPECT_EQ_INT(mbs_get_body_transform(sys, st, 1, R, p), MBS_ERR_STAGE);
  mbs_state_set_time(st, 1.0);
  EXPECT_EQ_INT(mbs_state_stage(st), MBS_STAGE_INSTANCE);
  mbs_state_upd_params(st);
  EXPECT_EQ_INT(mbs_state_stage(st), MBS_STAGE_MODEL);
  // the realized pose is the closed form: bob at L (cos q, sin q)
  EXPECT_OK(mbs_realize_position(sys, st));
  double pS[3];
  const double com[3] = {0.5, 0, 0};
  EXPECT_OK(mbs_get_station_location(sys, st, 1, com, pS));
  EXPECT_NEAR(pS[0], 0.5 * cos(0.3), 1e-15);
  EXPECT_NEAR(pS[1], 0.5 * sin(0.3), 1e-15);
  // a bad body index is refused
  EXPECT_EQ_INT(mbs_get_body_transform(sys, st, 7, R, p), MBS_ERR_ARGUMENT);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_parameters(void) {
  const double m = 2.0, L = 0.5, tau = 0.7;
  mbs_system* sys = pendulum(m, L);
  mbs_state* st = mbs_state_create(sys);
  mbs_state_upd_applied_mobility_forces(st)[0] = tau;
  // q = pi/2: gravity has no moment arm; u' = tau / (m L^2)
  mbs_state_upd_q(st)[0] = M_PI / 2;
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], tau / (m * L * L), 1e-14);
  // a changed mass takes effect through the parameter path
  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/mass", 0, 2 * m));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], tau / (2 * m * L * L), 1e-14);
  // and so does the mass center
  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/mass_center", 0, 2 * L));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], tau / (2 * m * 4 * L * L), 1e-14);

  // unknown path, component out of range
  EXPECT_EQ_INT(mbs_state_set_param(sys, st, "/bodyset/nobody/mass", 0, 1), MBS_ERR_UNKNOWN_NAME);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "/bodyset/nobody/mass"));
  EXPECT_EQ_INT(mbs_state_set_param(sys, st, "/bodyset/bob/mass", 1, 1), MBS_ERR_ARGUMENT);

  // physically invalid values fail the realization with the component named ...
  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/mass", 0, -1));
  EXPECT_EQ_INT(mbs_realize_acceleration(sys, st), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "body 'bob'"));
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "mass"));
  EXPECT_TRUE(mbs_get_udot(sys, st) == NULL);
  // ... and nothing is lost: a good value realizes again, with the other variables intact
  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/mass", 0, m));
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_NEAR(mbs_state_q(st)[0], M_PI / 2, 0);
  EXPECT_NEAR(mbs_get_udot(sys, st)[0], tau / (m * 4 * L * L), 1e-14);

  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/inertia", 0, -0.1));
  EXPECT_EQ_INT(mbs_realize_position(sys, st), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "inertia"));
  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/inertia", 0, 0));
  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/inertia", 0, 1.0));  // 1 > 0 + 0
  EXPECT_EQ_INT(mbs_realize_position(sys, st), MBS_ERR_PARAMETER);
  EXPECT_OK(mbs_state_set_param(sys, st, "/bodyset/bob/inertia", 0, 0));

  EXPECT_OK(mbs_state_set_param(sys, st, "/functions/curve/x", 1, -2));  // knots not increasing
  EXPECT_EQ_INT(mbs_realize_position(sys, st), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "function 'curve'"));
  EXPECT_OK(mbs_state_set_param(sys, st, "/functions/curve/x", 1, 0));

  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/gravity0/g", 1, NAN));
  EXPECT_EQ_INT(mbs_realize_position(sys, st), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "gravity0"));
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/gravity0/g", 1, -9.81));

  // a non-finite coordinate or speed names the body
  mbs_state_upd_q(st)[0] = NAN;
  EXPECT_EQ_INT(mbs_realize_position(sys, st), MBS_ERR_NAN);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "body 'bob'"));
  mbs_state_upd_q(st)[0] = 0.1;
  mbs_state_upd_u(st)[0] = INFINITY;
  EXPECT_EQ_INT(mbs_realize_velocity(sys, st), MBS_ERR_NAN);
  mbs_state_upd_u(st)[0] = 0;
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

static void test_building_errors(void) {
  mbs_system* sys = mbs_system_create("bad");
  mbs_body_spec s = mbs_body_spec_default("a", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.1;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &s), 1);
  EXPECT_EQ_INT(mbs_system_add_body(sys, &s), MBS_ERR_ARGUMENT);  // duplicate name
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "body 'a'"));
  s.name = "b";
  s.parent = 5;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &s), MBS_ERR_TOPOLOGY);  // parent does not exist yet
  s.parent = 1;
  s.mass = -2;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &s), MBS_ERR_PARAMETER);
  s.mass = 1;
  s.inertia[0] = 1;  // 1 > 0.1 + 0.1: violates the triangle inequality
  EXPECT_EQ_INT(mbs_system_add_body(sys, &s), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "inertia"));
  s.inertia[0] = 0.1;
  // a function-based mobilizer whose second coordinate drives nothing
  const double c[2] = {1, 0};
  mbs_function_spec lin = {MBS_FUNC_LINEAR, "lin", 0, c, NULL, NULL, 0, 0};
  const int f = mbs_system_add_function(sys, &lin);
  EXPECT_TRUE(f >= 0);
  const double k0[1] = {0};
  mbs_function_spec zero = {MBS_FUNC_CONSTANT, "zero", 0, k0, NULL, NULL, 0, 0};
  const int f0 = mbs_system_add_function(sys, &zero);
  mbs_function_mobilizer fm = {2,
                               {{{1, 0, 0}, 0, f}, {{0, 1, 0}, -1, f0}, {{0, 0, 1}, -1, f0}},
                               {{{1, 0, 0}, -1, f0}, {{0, 1, 0}, -1, f0}, {{0, 0, 1}, -1, f0}}};
  s.mobilizer = MBS_MOB_FUNCTION;
  s.function = &fm;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &s), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "coordinate 1 drives no axis"));
  fm.ncoord = 1;
  EXPECT_EQ_INT(mbs_system_add_body(sys, &s), 2);
  // a spline with decreasing knots is refused when added
  const double x[3] = {0, 2, 1}, y[3] = {0, 1, 2};
  mbs_function_spec sp = {MBS_FUNC_SIMM_SPLINE, "knee_tx", 3, NULL, x, y, 0, 0};
  EXPECT_EQ_INT(mbs_system_add_function(sys, &sp), MBS_ERR_PARAMETER);
  EXPECT_TRUE(contains(mbs_system_error(sys)->message, "function 'knee_tx'"));
  // a massless body at the end of a chain makes the dynamics singular: clear error
  mbs_body_spec z = mbs_body_spec_default("ghost", 2, MBS_MOB_PIN);
  EXPECT_EQ_INT(mbs_system_add_body(sys, &z), 3);
  EXPECT_EQ_INT(mbs_system_add_mobility_spring(sys, 2, 3, 1.0, 0), MBS_ERR_ARGUMENT);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_EQ_INT(mbs_system_add_body(sys, &z), MBS_ERR_FINALIZED);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_EQ_INT(mbs_realize_acceleration(sys, st), MBS_ERR_SINGULAR);
  EXPECT_TRUE(contains(mbs_state_error(st)->message, "body 'ghost'"));
  // ... but kinematics still work
  EXPECT_OK(mbs_realize_velocity(sys, st));
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
  // a state is not made for an unfinished system
  mbs_system* open = mbs_system_create("open");
  EXPECT_TRUE(mbs_state_create(open) == NULL);
  mbs_system_destroy(open);
}

static void test_copies_and_allocation(void) {
  mbs_test_rng rng = {5};
  random_tree_opts o = {12, random_tree_all_types, MBS_MOB_COUNT, 0, 1, 1, 1, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &o);
  mbs_state* a = mbs_state_create(sys);
  mbs_state* b = mbs_state_create(sys);
  random_tree_state(&rng, sys, a, 1, 1, 1);
  EXPECT_OK(mbs_realize_acceleration(sys, a));
  const int nu = mbs_system_nu(sys);
  // a copy carries the realized cache and reproduces every result bitwise
  EXPECT_OK(mbs_state_copy(sys, b, a));
  EXPECT_EQ_INT(mbs_state_stage(b), MBS_STAGE_ACCELERATION);
  EXPECT_TRUE(memcmp(mbs_get_udot(sys, a), mbs_get_udot(sys, b), nu * sizeof(double)) == 0);
  // the variable block alone is enough to recreate the run
  size_t n;
  const double* vars = mbs_state_vars(a, &n);
  mbs_state* c = mbs_state_create(sys);
  EXPECT_OK(mbs_state_set_vars(sys, c, vars, n));
  EXPECT_OK(mbs_realize_acceleration(sys, c));
  EXPECT_TRUE(memcmp(mbs_get_udot(sys, a), mbs_get_udot(sys, c), nu * sizeof(double)) == 0);
  EXPECT_EQ_INT(mbs_state_set_vars(sys, c, vars, n - 1), MBS_ERR_SYSTEM_MISMATCH);
  // realizing and the O(n) operators allocate nothing
  double* f = calloc((size_t)nu, sizeof(double));
  double* x = calloc((size_t)nu, sizeof(double));
  const long before = n_alloc;
  for (int k = 0; k < 100; k++) {
    mbs_state_upd_q(c)[0] += 1e-3;
    mbs_state_upd_u(c)[0] += 1e-3;
    EXPECT_OK(mbs_realize_acceleration(sys, c));
    EXPECT_OK(mbs_calc_mass_matrix_inverse_times(sys, c, f, x));
    EXPECT_OK(mbs_calc_inverse_dynamics(sys, c, x, f));
    EXPECT_OK(mbs_step_rk4(sys, c, 1e-4));
  }
  EXPECT_EQ_INT(n_alloc - before, 0);
  EXPECT_TRUE(mbs_state_scratch_peak(c) > 0);
  EXPECT_TRUE(mbs_state_scratch_peak(c) <= mbs_state_scratch_size(c));
  free(f);
  free(x);
  mbs_state_destroy(a);
  mbs_state_destroy(b);
  mbs_state_destroy(c);
  mbs_system_destroy(sys);
}

static void test_force_names(void) {
  mbs_system* sys = mbs_system_create("names");
  mbs_body_spec b = mbs_body_spec_default("bob", 0, MBS_MOB_SLIDER);
  b.mass = 2;
  mbs_system_add_body(sys, &b);
  const double o[3] = {0, 0, 0};
  const int k = mbs_system_add_spring(sys, 0, o, 1, o, 100, 0.5);
  const int d = mbs_system_add_damper(sys, 0, o, 1, o, 3);
  EXPECT_TRUE(k >= 0 && d >= 0);
  EXPECT_TRUE(strcmp(mbs_force_kind(sys, k), "spring") == 0);
  EXPECT_OK(mbs_system_set_force_name(sys, k, "suspension"));
  EXPECT_EQ_INT(mbs_system_set_force_name(sys, d, "suspension"), MBS_ERR_ARGUMENT);
  EXPECT_EQ_INT(mbs_system_set_force_name(sys, d, "a/b"), MBS_ERR_ARGUMENT);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_EQ_INT(mbs_force_find(sys, "suspension"), k);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/suspension/stiffness") != NULL);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/spring0/stiffness") == NULL);
  // valid ranges: masses and stiffnesses cannot be negative, positions can be anything
  EXPECT_NEAR(mbs_system_find_param(sys, "/forceset/suspension/stiffness")->lower, 0, 0);
  EXPECT_NEAR(mbs_system_find_param(sys, "/forceset/suspension/rest_length")->lower, 0, 0);
  EXPECT_NEAR(mbs_system_find_param(sys, "/bodyset/bob/mass")->lower, 0, 0);
  EXPECT_TRUE(isinf(mbs_system_find_param(sys, "/bodyset/bob/mass")->upper));
  EXPECT_TRUE(isinf(mbs_system_find_param(sys, "/bodyset/bob/mass_center")->lower));
  EXPECT_TRUE(isinf(mbs_system_find_param(sys, "/forceset/suspension/point1")->lower));
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_state_set_param(sys, st, "/forceset/suspension/stiffness", 0, -1));
  EXPECT_EQ_INT(mbs_realize_dynamics(sys, st), MBS_ERR_PARAMETER);
  EXPECT_TRUE(strstr(mbs_state_error(st)->message, "suspension") != NULL);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

int main(void) {
  EXPECT_TRUE(mbs_test_alloc_active());  // the allocation counter sees the libraries
  test_stages();
  test_parameters();
  test_building_errors();
  test_copies_and_allocation();
  test_force_names();
  return mbs_test_finish("test_state");
}
