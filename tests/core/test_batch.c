// Batched forward dynamics (include/mbs/batch.h) against the one-at-a-time path: random trees
// and chains of every supported mobilizer with random joint frames, gravity, springs, dampers,
// applied forces and per-State parameters, n = 1..37 States per call (partial groups), under
// every instruction set this CPU runs; every u' and q' agrees with mbs_realize_acceleration to
// 1e-12 relative. Unsupported Systems are refused with a message naming the component; failing
// States are reported by index while the others' results stay valid; no allocation per call
// (malloc wrapped).
#include <string.h>

#include "mbs/batch.h"
#include "mbs_test_alloc.h"
#include "random_tree.h"

static const char* const isas[] = {"portable", "avx2", "avx512"};

static const mbs_mobilizer_type supported_types[] = {
    MBS_MOB_WELD,   MBS_MOB_PIN,         MBS_MOB_SLIDER, MBS_MOB_UNIVERSAL, MBS_MOB_CYLINDER,
    MBS_MOB_PLANAR, MBS_MOB_SCREW,       MBS_MOB_TRANSLATION, MBS_MOB_GIMBAL, MBS_MOB_BALL,
    MBS_MOB_BALL_XYZ, MBS_MOB_FREE,      MBS_MOB_FREE_XYZ};
#define NSUPPORTED ((int)(sizeof(supported_types) / sizeof(supported_types[0])))

static double worst_err = 0;  // largest |a - b| / max(1, |a|, |b|) seen

static void check_close(double a, double b, const char* what, int state, int i, int* reported) {
  double s = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  if (s < 1) s = 1;
  const double e = fabs(a - b) / s;
  if (e > worst_err || e != e) worst_err = e != e ? INFINITY : e;
  mbs_test_checks++;
  if (!(e <= 1e-12)) {
    mbs_test_failures++;
    if ((*reported)++ < 5)
      fprintf(stderr, "FAIL: %s[%d] of State %d: batch %.17g, one at a time %.17g (rel %.3g)\n",
              what, i, state, a, b, e);
  }
}

// Perturb some of a State's parameters: blocks that cannot be negative are scaled by a common
// positive factor (an inertia stays physical), the others get small offsets.
static void perturb_params(mbs_test_rng* rng, const mbs_system* sys, mbs_state* st, int nblocks) {
  double* p = mbs_state_upd_params(st);
  const int nb = mbs_system_nparam_block(sys);
  for (int k = 0; k < nblocks; k++) {
    const mbs_param_info* info = mbs_system_param_block(sys, (int)mbs_test_uniform(rng, 0, nb));
    const size_t len = strlen(info->path);
    if (info->lower >= 0 || (len > 8 && strcmp(info->path + len - 8, "/inertia") == 0)) {
      const double f = mbs_test_uniform(rng, 0.7, 1.3);
      for (int i = 0; i < info->size; i++) p[info->index + i] *= f;
    } else {
      for (int i = 0; i < info->size; i++) p[info->index + i] += mbs_test_uniform(rng, -0.1, 0.1);
    }
  }
}

// n States with random q, u, applied forces and (if vary) parameters; batch and one at a time
static void compare(mbs_test_rng* rng, const mbs_system* sys, mbs_batch* bt, int n, int vary,
                    const char* label) {
  mbs_state* st[64];
  for (int i = 0; i < n; i++) {
    st[i] = mbs_state_create(sys);
    random_tree_state(rng, sys, st[i], 1.5, 2.0, 1);
    if (vary && mbs_test_uniform(rng, 0, 1) < 0.6)
      perturb_params(rng, sys, st[i], 1 + (int)mbs_test_uniform(rng, 0, 3));
  }
  const int rc = mbs_batch_forward_dynamics(bt, sys, st, n);
  EXPECT_OK(rc);
  if (rc) fprintf(stderr, "%s: %s\n", label, mbs_batch_error(bt)->message);
  const int nu = mbs_system_nu(sys), nq = mbs_system_nq(sys);
  int reported = 0;
  for (int i = 0; i < n; i++) {
    EXPECT_EQ_INT(mbs_batch_status(bt, i), MBS_OK);
    // the States themselves were realized to Instance only
    EXPECT_TRUE(mbs_state_stage(st[i]) == MBS_STAGE_INSTANCE);
    const double* ud = mbs_batch_udot(bt, i);
    const double* qd = mbs_batch_qdot(bt, i);
    EXPECT_OK(mbs_realize_acceleration(sys, st[i]));
    const double* ref = mbs_get_udot(sys, st[i]);
    const double* qref = mbs_get_qdot(sys, st[i]);
    for (int j = 0; j < nu; j++) check_close(ud[j], ref[j], "udot", i, j, &reported);
    for (int j = 0; j < nq; j++) check_close(qd[j], qref[j], "qdot", i, j, &reported);
  }
  if (reported) fprintf(stderr, "  (%s, n = %d)\n", label, n);
  for (int i = 0; i < n; i++) mbs_state_destroy(st[i]);
}

// random trees and chains of the supported mobilizers, every n in 1..37, every ISA
static void test_agreement(void) {
  const int quick = test_quick();
  for (int ia = 0; ia < 3; ia++) {
    if (!mbs_batch_isa_available(isas[ia])) {
      printf("  %s: not available on this CPU, skipped\n", isas[ia]);
      continue;
    }
    const double worst_before = worst_err;
    worst_err = 0;
    for (int shape = 0; shape < 4; shape++) {
      mbs_test_rng rng = {1234 + 77 * (unsigned long long)shape + 1000 * (unsigned long long)ia};
      // trees and chains; with and without springs and dampers
      random_tree_opts o = {shape < 2 ? 13 : 26, supported_types, NSUPPORTED, shape % 2, 1,
                            shape != 1, shape != 1, 1, 0};
      mbs_system* sys = random_tree_create(&rng, &o);
      EXPECT_TRUE(sys != NULL);
      if (!sys) continue;
      char why[256];
      EXPECT_TRUE(mbs_batch_supported(sys, why, sizeof(why)));
      mbs_batch* bt = mbs_batch_create(sys, 37);
      EXPECT_TRUE(bt != NULL);
      EXPECT_OK(mbs_batch_set_isa(bt, isas[ia]));
      EXPECT_TRUE(strcmp(mbs_batch_get_isa(bt), isas[ia]) == 0);
      char label[96];
      for (int n = 1; n <= 37; n += (quick ? 6 : 1)) {
        snprintf(label, sizeof(label), "%s, shape %d, vary %d", isas[ia], shape, n % 2);
        compare(&rng, sys, bt, n, n % 2, label);
      }
      mbs_batch_destroy(bt);
      mbs_system_destroy(sys);
    }
    // a long pin chain with random frames (the benchmark's model)
    {
      mbs_test_rng rng = {99 + (unsigned long long)ia};
      const mbs_mobilizer_type pin = MBS_MOB_PIN;
      random_tree_opts o = {quick ? 20 : 100, &pin, 1, 1, 1, 0, 0, 1, 0};
      mbs_system* sys = random_tree_create(&rng, &o);
      mbs_batch* bt = mbs_batch_create(sys, 37);
      EXPECT_OK(mbs_batch_set_isa(bt, isas[ia]));
      compare(&rng, sys, bt, 37, 0, "pin chain");
      compare(&rng, sys, bt, 19, 1, "pin chain, parameters per State");
      mbs_batch_destroy(bt);
      mbs_system_destroy(sys);
    }
    printf("  %s: largest relative difference %.3g\n", isas[ia], worst_err);
    if (worst_before > worst_err) worst_err = worst_before;
  }
}

// unsupported Systems are refused, naming the component
static void test_unsupported(void) {
  char why[512];
  // an ellipsoid mobilizer
  mbs_system* sys = mbs_system_create("ell");
  mbs_body_spec s = mbs_body_spec_default("arm", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.1;
  mbs_system_add_body(sys, &s);
  s = mbs_body_spec_default("shoulder_blade", 1, MBS_MOB_ELLIPSOID);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.1;
  s.radii[0] = s.radii[1] = s.radii[2] = 0.1;
  s.mobilizer_name = "scapulothoracic";
  mbs_system_add_body(sys, &s);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_TRUE(!mbs_batch_supported(sys, why, sizeof(why)));
  EXPECT_TRUE(strstr(why, "shoulder_blade") && strstr(why, "scapulothoracic") &&
              strstr(why, "ellipsoid"));
  printf("  refused: %s\n", why);
  EXPECT_TRUE(mbs_batch_create(sys, 8) == NULL);
  mbs_system_destroy(sys);

  // a constraint
  sys = mbs_system_create("con");
  s = mbs_body_spec_default("a", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.1;
  mbs_system_add_body(sys, &s);
  s.name = "b";
  s.parent = 1;
  mbs_system_add_body(sys, &s);
  mbs_constraint_spec c = mbs_constraint_spec_default(MBS_CON_LOCKED_COORDINATE, "knee_lock");
  c.coordinate.body = 2;
  c.coordinate.axis = 0;
  EXPECT_TRUE(mbs_system_add_constraint(sys, &c) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_TRUE(!mbs_batch_supported(sys, why, sizeof(why)));
  EXPECT_TRUE(strstr(why, "knee_lock") != NULL);
  printf("  refused: %s\n", why);
  mbs_system_destroy(sys);

  // a force element that is not supported (a coordinate limit)
  sys = mbs_system_create("limit");
  s = mbs_body_spec_default("a", 0, MBS_MOB_PIN);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.1;
  mbs_system_add_body(sys, &s);
  mbs_coordinate_limit_spec lim;
  memset(&lim, 0, sizeof(lim));
  lim.body = 1;
  lim.upper_stiffness = lim.lower_stiffness = 10;
  lim.upper_limit = 1;
  lim.lower_limit = -1;
  lim.transition = 0.1;
  const int f = mbs_system_add_coordinate_limit(sys, &lim);
  EXPECT_TRUE(f >= 0);
  mbs_system_set_force_name(sys, f, "knee_limit");
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_TRUE(!mbs_batch_supported(sys, why, sizeof(why)));
  EXPECT_TRUE(strstr(why, "knee_limit") != NULL);
  printf("  refused: %s\n", why);
  mbs_system_destroy(sys);

  // not finalized; NULL
  sys = mbs_system_create("open");
  EXPECT_TRUE(!mbs_batch_supported(sys, why, sizeof(why)));
  EXPECT_TRUE(mbs_batch_create(sys, 4) == NULL);
  mbs_system_destroy(sys);
  EXPECT_TRUE(!mbs_batch_supported(NULL, NULL, 0));
}

// failing States are reported by index; the others' results are still right; bad calls
static void test_errors(void) {
  mbs_test_rng rng = {4321};
  random_tree_opts o = {8, supported_types, NSUPPORTED, 0, 1, 1, 1, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &o);
  mbs_system* other = random_tree_create(&rng, &o);
  mbs_batch* bt = mbs_batch_create(sys, 11);
  mbs_state* st[11];
  for (int i = 0; i < 11; i++) {
    st[i] = mbs_state_create(sys);
    random_tree_state(&rng, sys, st[i], 1, 1, 1);
  }
  mbs_state_upd_q(st[3])[0] = NAN;                      // a non-finite coordinate
  mbs_state_upd_params(st[6])[mbs_system_find_param(sys, "/bodyset/b2/mass")->index] = -1;
  mbs_state_set_time(st[9], INFINITY);                  // a non-finite time
  const int rc = mbs_batch_forward_dynamics(bt, sys, st, 11);
  EXPECT_EQ_INT(rc, MBS_ERR_NAN);
  const mbs_error* err = mbs_batch_error(bt);
  const char* first = err ? err->message : "";
  printf("  first failure: %s\n", first);
  EXPECT_TRUE(strstr(first, "State 3") != NULL);
  EXPECT_EQ_INT(mbs_batch_status(bt, 3), MBS_ERR_NAN);
  EXPECT_EQ_INT(mbs_batch_status(bt, 6), MBS_ERR_PARAMETER);
  EXPECT_EQ_INT(mbs_batch_status(bt, 9), MBS_ERR_NAN);
  int reported = 0;
  for (int i = 0; i < 11; i++) {
    if (i == 3 || i == 6 || i == 9) continue;
    EXPECT_EQ_INT(mbs_batch_status(bt, i), MBS_OK);
    EXPECT_OK(mbs_realize_acceleration(sys, st[i]));
    for (int j = 0; j < mbs_system_nu(sys); j++)
      check_close(mbs_batch_udot(bt, i)[j], mbs_get_udot(sys, st[i])[j], "udot", i, j, &reported);
  }
  // a State whose new parameters fail at one body keeps older Instance data of the bodies after
  // it; the other States sharing those bodies' new parameters must not receive that data
  for (int i = 0; i < 11; i++) {
    mbs_state_destroy(st[i]);
    st[i] = mbs_state_create(sys);
    random_tree_state(&rng, sys, st[i], 1, 1, 1);
  }
  EXPECT_OK(mbs_realize_acceleration(sys, st[0]));
  const int m1 = mbs_system_find_param(sys, "/bodyset/b1/mass")->index;
  const int m5 = mbs_system_find_param(sys, "/bodyset/b5/mass")->index;
  for (int i = 0; i < 11; i++) mbs_state_upd_params(st[i])[m5] *= 1.7;
  mbs_state_upd_params(st[0])[m1] = -1;
  EXPECT_EQ_INT(mbs_batch_forward_dynamics(bt, sys, st, 11), MBS_ERR_PARAMETER);
  EXPECT_EQ_INT(mbs_batch_status(bt, 0), MBS_ERR_PARAMETER);
  for (int i = 1; i < 11; i++) {
    EXPECT_EQ_INT(mbs_batch_status(bt, i), MBS_OK);
    EXPECT_OK(mbs_realize_acceleration(sys, st[i]));
    for (int j = 0; j < mbs_system_nu(sys); j++)
      check_close(mbs_batch_udot(bt, i)[j], mbs_get_udot(sys, st[i])[j], "udot", i, j, &reported);
  }
  // bad calls
  EXPECT_EQ_INT(mbs_batch_forward_dynamics(bt, sys, st, 12), MBS_ERR_ARGUMENT);
  EXPECT_EQ_INT(mbs_batch_forward_dynamics(bt, sys, st, 0), MBS_ERR_ARGUMENT);
  EXPECT_EQ_INT(mbs_batch_forward_dynamics(bt, other, st, 2), MBS_ERR_SYSTEM_MISMATCH);
  mbs_state* foreign = mbs_state_create(other);
  mbs_state* mixed[2] = {st[0], foreign};
  EXPECT_EQ_INT(mbs_batch_forward_dynamics(bt, sys, mixed, 2), MBS_ERR_SYSTEM_MISMATCH);
  err = mbs_batch_error(bt);
  EXPECT_TRUE(err && strstr(err->message, "State 1") != NULL);
  EXPECT_EQ_INT(mbs_batch_set_isa(bt, "sse9"), MBS_ERR_ARGUMENT);
  EXPECT_TRUE(mbs_batch_udot(bt, 11) == NULL && mbs_batch_udot(bt, -1) == NULL);
  EXPECT_TRUE(mbs_batch_create(sys, 0) == NULL);
  EXPECT_TRUE(mbs_batch_isa_available("portable"));
  EXPECT_TRUE(!mbs_batch_isa_available("sse9"));
  mbs_state_destroy(foreign);
  for (int i = 0; i < 11; i++) mbs_state_destroy(st[i]);
  mbs_batch_destroy(bt);
  mbs_system_destroy(other);
  mbs_system_destroy(sys);
}

// Systems without speeds (welds only, Ground only) and one State per call
static void test_edges(void) {
  for (int nb = 0; nb <= 2; nb++) {
    mbs_system* sys = mbs_system_create("welds");
    for (int b = 1; b <= nb; b++) {
      mbs_body_spec s = mbs_body_spec_default(b == 1 ? "w1" : "w2", b - 1, MBS_MOB_WELD);
      s.mass = 1;
      s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.1;
      mbs_system_add_body(sys, &s);
    }
    const double g[3] = {0, -9.81, 0};
    mbs_system_add_gravity(sys, g);
    EXPECT_OK(mbs_system_finalize(sys));
    EXPECT_TRUE(mbs_batch_supported(sys, NULL, 0));
    mbs_batch* bt = mbs_batch_create(sys, 3);
    EXPECT_TRUE(bt != NULL);
    mbs_state* st[3] = {mbs_state_create(sys), mbs_state_create(sys), mbs_state_create(sys)};
    for (int ia = 0; ia < 3; ia++) {
      if (!mbs_batch_isa_available(isas[ia])) continue;
      EXPECT_OK(mbs_batch_set_isa(bt, isas[ia]));
      EXPECT_OK(mbs_batch_forward_dynamics(bt, sys, st, 3));
      EXPECT_OK(mbs_batch_forward_dynamics(bt, sys, st, 1));
      EXPECT_EQ_INT(mbs_batch_status(bt, 0), MBS_OK);
    }
    for (int i = 0; i < 3; i++) mbs_state_destroy(st[i]);
    mbs_batch_destroy(bt);
    mbs_system_destroy(sys);
  }
  // the same State in several lanes, and one State alone
  mbs_test_rng rng = {2024};
  random_tree_opts o = {6, supported_types, NSUPPORTED, 1, 1, 1, 1, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &o);
  mbs_state* a = mbs_state_create(sys);
  random_tree_state(&rng, sys, a, 1, 1, 1);
  mbs_state* same[5] = {a, a, a, a, a};
  mbs_batch* bt = mbs_batch_create(sys, 5);
  EXPECT_OK(mbs_batch_forward_dynamics(bt, sys, same, 5));
  EXPECT_OK(mbs_realize_acceleration(sys, a));
  int reported = 0;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < mbs_system_nu(sys); j++)
      check_close(mbs_batch_udot(bt, i)[j], mbs_get_udot(sys, a)[j], "udot", i, j, &reported);
  // angles beyond the vector sine's range (|q| >= 1647099) take the library's sine lane by lane
  mbs_state* big[3] = {a, mbs_state_create(sys), mbs_state_create(sys)};
  random_tree_state(&rng, sys, big[1], 1, 1, 0);
  random_tree_state(&rng, sys, big[2], 1, 1, 0);
  mbs_state_upd_q(big[1])[mbs_body_qadr(sys, 1)] = 3.7e6;
  mbs_state_upd_q(big[2])[mbs_body_qadr(sys, 2)] = -2.5e9;
  for (int ia = 0; ia < 3; ia++) {
    if (!mbs_batch_isa_available(isas[ia])) continue;
    EXPECT_OK(mbs_batch_set_isa(bt, isas[ia]));
    EXPECT_OK(mbs_batch_forward_dynamics(bt, sys, big, 3));
    for (int i = 0; i < 3; i++) {
      EXPECT_OK(mbs_realize_acceleration(sys, big[i]));
      for (int j = 0; j < mbs_system_nu(sys); j++)
        check_close(mbs_batch_udot(bt, i)[j], mbs_get_udot(sys, big[i])[j], "udot", i, j,
                    &reported);
      mbs_state_upd_u(big[i]);  // not realized for the next round
    }
  }
  mbs_state_destroy(big[1]);
  mbs_state_destroy(big[2]);
  mbs_state_destroy(a);
  mbs_batch_destroy(bt);
  mbs_system_destroy(sys);
}

// force elements in any order: gravity after other elements and more gravity elements than the
// outward pass takes, body forces and torques, springs and dampers between bodies and Ground
static void test_force_order(void) {
  mbs_test_rng rng = {555};
  mbs_system* sys = mbs_system_create("forces");
  const mbs_mobilizer_type types[4] = {MBS_MOB_PIN, MBS_MOB_BALL, MBS_MOB_FREE_XYZ, MBS_MOB_SLIDER};
  for (int b = 1; b <= 8; b++) {
    char name[16];
    snprintf(name, sizeof(name), "b%d", b);
    mbs_body_spec s = mbs_body_spec_default(name, b / 2, types[b % 4]);
    s.mass = mbs_test_uniform(&rng, 0.5, 2);
    random_inertia(&rng, s.inertia);
    for (int i = 0; i < 3; i++) {
      s.com[i] = mbs_test_uniform(&rng, -0.2, 0.2);
      s.X_PF.angles[i] = mbs_test_uniform(&rng, -3, 3);
      s.X_PF.p[i] = mbs_test_uniform(&rng, -0.4, 0.4);
      s.X_BM.angles[i] = mbs_test_uniform(&rng, -3, 3);
      s.X_BM.p[i] = mbs_test_uniform(&rng, -0.3, 0.3);
    }
    mbs_system_add_body(sys, &s);
  }
  const double g1[3] = {0.1, -9.8, 0.2}, g2[3] = {0.3, 0.1, -0.4}, p1[3] = {0.1, 0.2, -0.1},
               p2[3] = {-0.2, 0.1, 0.3}, f[3] = {1, -2, 0.5};
  EXPECT_TRUE(mbs_system_add_mobility_force(sys, 1, 0, 0.7) >= 0);
  EXPECT_TRUE(mbs_system_add_gravity(sys, g1) >= 0);
  EXPECT_TRUE(mbs_system_add_body_force(sys, 3, p1, f) >= 0);
  EXPECT_TRUE(mbs_system_add_body_torque(sys, 5, f) >= 0);
  EXPECT_TRUE(mbs_system_add_spring(sys, 0, p1, 7, p2, 20, 0.2) >= 0);
  EXPECT_TRUE(mbs_system_add_damper(sys, 2, p1, 6, p2, 1.5) >= 0);
  EXPECT_TRUE(mbs_system_add_mobility_spring(sys, 2, 1, 4, 0.1) >= 0);  // free_xyz rotation
  EXPECT_TRUE(mbs_system_add_mobility_spring(sys, 2, 4, 4, 0.1) >= 0);  // free_xyz translation
  EXPECT_TRUE(mbs_system_add_mobility_damper(sys, 6, 2, 0.3) >= 0);
  for (int k = 0; k < 5; k++) EXPECT_TRUE(mbs_system_add_gravity(sys, g2) >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  EXPECT_TRUE(mbs_batch_supported(sys, NULL, 0));
  mbs_batch* bt = mbs_batch_create(sys, 13);
  for (int ia = 0; ia < 3; ia++) {
    if (!mbs_batch_isa_available(isas[ia])) continue;
    EXPECT_OK(mbs_batch_set_isa(bt, isas[ia]));
    compare(&rng, sys, bt, 13, 1, "force order");
  }
  mbs_batch_destroy(bt);
  mbs_system_destroy(sys);
}

// no allocation per call, whatever the ISA
static void test_no_allocation(void) {
  mbs_test_rng rng = {77};
  random_tree_opts o = {15, supported_types, NSUPPORTED, 0, 1, 1, 1, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &o);
  // the counter sees the library's own allocations (else the check below would prove nothing)
  const long at_create = n_alloc;
  mbs_batch* bt = mbs_batch_create(sys, 21);
  EXPECT_TRUE(n_alloc > at_create);
  mbs_state* st[21];
  for (int i = 0; i < 21; i++) {
    st[i] = mbs_state_create(sys);
    random_tree_state(&rng, sys, st[i], 1, 1, 1);
    if (i % 3 == 0) perturb_params(&rng, sys, st[i], 2);
  }
  for (int ia = 0; ia < 3; ia++) {
    if (!mbs_batch_isa_available(isas[ia])) continue;
    EXPECT_OK(mbs_batch_set_isa(bt, isas[ia]));
    const long before = n_alloc;
    for (int k = 0; k < 20; k++) {
      mbs_state_upd_q(st[k % 21])[0] += 1e-3;
      EXPECT_OK(mbs_batch_forward_dynamics(bt, sys, st, 21 - k % 5));
    }
    EXPECT_EQ_INT(n_alloc - before, 0);
  }
  for (int i = 0; i < 21; i++) mbs_state_destroy(st[i]);
  mbs_batch_destroy(bt);
  mbs_system_destroy(sys);
}

int main(void) {
  EXPECT_TRUE(mbs_test_alloc_active());  // the allocation counter sees the libraries
  printf("test_batch: default instruction set %s\n", mbs_batch_isa());
  test_agreement();
  test_unsupported();
  test_errors();
  test_edges();
  test_force_order();
  test_no_allocation();
  printf("test_batch: largest relative difference from the one-at-a-time path %.3g\n",
         worst_err);
  return mbs_test_finish("test_batch");
}
