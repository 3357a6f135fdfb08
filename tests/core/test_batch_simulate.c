// Batched simulation (batch.h, mbs_batch_simulate) against mbs_simulate, State by State: random
// trees of every supported mobilizer with random joint frames, springs, dampers, gravity and
// per-State parameters and initial conditions, 1..11 States per call (partial SIMD groups; up
// to 11 States on 3 lanes, each lane taking the next State when its own ends),
// under every instruction set this CPU runs; every report (time, q, u) and the final State
// agree to 1e-12 relative, and so do the step counts. Also: reports after every step, a
// failing lane among good ones, a lane stopped by its report function, the step limit, the
// integrators refused, energy conservation of a conservative system (physics, not agreement),
// and no allocation once the simulator is made.
#include <math.h>
#include <string.h>

#include "mbs/batch.h"
#include "mbs_test_alloc.h"
#include "random_tree.h"

static const char* const isas[] = {"portable", "avx2", "avx512"};

static const mbs_mobilizer_type supported_types[] = {
    MBS_MOB_WELD,   MBS_MOB_PIN,   MBS_MOB_SLIDER,      MBS_MOB_UNIVERSAL, MBS_MOB_CYLINDER,
    MBS_MOB_PLANAR, MBS_MOB_SCREW, MBS_MOB_TRANSLATION, MBS_MOB_GIMBAL,    MBS_MOB_BALL,
    MBS_MOB_BALL_XYZ, MBS_MOB_FREE, MBS_MOB_FREE_XYZ};
#define NSUPPORTED ((int)(sizeof(supported_types) / sizeof(supported_types[0])))

#define MAXLANE 11
#define MAXREP 4096

// what the report function records for one lane: t, q, u of every report
typedef struct recorder {
  int ny, n, stop_after;
  double* v;  // MAXREP x (1 + ny)
} recorder;

static int record(const mbs_system* sys, mbs_state* st, void* user) {
  recorder* r = user;
  if (r->n < MAXREP) {
    double* p = r->v + (size_t)r->n * (size_t)(1 + r->ny);
    p[0] = mbs_state_time(st);
    memcpy(p + 1, mbs_state_q(st), (size_t)mbs_system_nq(sys) * sizeof(double));
    memcpy(p + 1 + mbs_system_nq(sys), mbs_state_u(st),
           (size_t)mbs_system_nu(sys) * sizeof(double));
  }
  r->n++;
  return r->stop_after > 0 && r->n >= r->stop_after;
}

static double worst_err = 0;

static void check_close(double a, double b, const char* what, int lane, int k, int* reported) {
  double s = fmax(fabs(a), fabs(b));
  if (s < 1) s = 1;
  const double e = fabs(a - b) / s;
  if (e > worst_err || e != e) worst_err = e != e ? INFINITY : e;
  mbs_test_checks++;
  if (!(e <= 1e-12)) {
    mbs_test_failures++;
    if ((*reported)++ < 5)
      fprintf(stderr, "FAIL: %s (lane %d, value %d): batched %.17g, mbs_simulate %.17g\n", what,
              lane, k, a, b);
  }
}

static void perturb_params(mbs_test_rng* rng, const mbs_system* sys, mbs_state* st) {
  double* p = mbs_state_upd_params(st);
  const int nb = mbs_system_nparam_block(sys);
  const mbs_param_info* info = mbs_system_param_block(sys, (int)mbs_test_uniform(rng, 0, nb));
  const size_t len = strlen(info->path);
  if (info->lower >= 0 || (len > 8 && strcmp(info->path + len - 8, "/inertia") == 0)) {
    const double f = mbs_test_uniform(rng, 0.8, 1.25);
    for (int i = 0; i < info->size; i++) p[info->index + i] *= f;
  } else {
    for (int i = 0; i < info->size; i++) p[info->index + i] += mbs_test_uniform(rng, -0.05, 0.05);
  }
}

typedef struct lanes {
  int n, ny;
  mbs_state* st[MAXLANE];   // batched
  mbs_state* ref[MAXLANE];  // one at a time
  recorder rb[MAXLANE], rr[MAXLANE];
  void* users[MAXLANE];
  mbs_simulation_result res[MAXLANE], rres[MAXLANE];
  int status[MAXLANE], rstatus[MAXLANE];
} lanes;

static void lanes_make(lanes* L, mbs_test_rng* rng, const mbs_system* sys, int n, int vary) {
  memset(L, 0, sizeof(*L));
  L->n = n;
  L->ny = mbs_system_nq(sys) + mbs_system_nu(sys);
  for (int i = 0; i < n; i++) {
    L->st[i] = mbs_state_create(sys);
    random_tree_state(rng, sys, L->st[i], 0.8, 1.0, 0);
    if (vary && mbs_test_uniform(rng, 0, 1) < 0.6) perturb_params(rng, sys, L->st[i]);
    L->ref[i] = mbs_state_create(sys);
    mbs_state_copy(sys, L->ref[i], L->st[i]);
    L->rb[i].ny = L->rr[i].ny = L->ny;
    L->rb[i].v = malloc((size_t)MAXREP * (size_t)(1 + L->ny) * sizeof(double));
    L->rr[i].v = malloc((size_t)MAXREP * (size_t)(1 + L->ny) * sizeof(double));
    L->users[i] = &L->rb[i];
  }
}

static void lanes_free(lanes* L) {
  for (int i = 0; i < L->n; i++) {
    mbs_state_destroy(L->st[i]);
    mbs_state_destroy(L->ref[i]);
    free(L->rb[i].v);
    free(L->rr[i].v);
  }
}

// simulate every lane both ways and compare everything
static void run_and_compare(lanes* L, const mbs_system* sys, mbs_batch_sim* bs,
                            const mbs_simulation_options* o, double t_final, const char* label) {
  const int rc = mbs_batch_simulate(bs, sys, L->st, L->n, t_final, record, L->users, L->res,
                                    L->status);
  int first_bad = MBS_OK;
  for (int i = 0; i < L->n; i++) {
    L->rstatus[i] = mbs_simulate(sys, L->ref[i], t_final, o, NULL, 0, record, &L->rr[i],
                                 &L->rres[i]);
    if (first_bad == MBS_OK) first_bad = L->rstatus[i];
  }
  EXPECT_EQ_INT(rc, first_bad);
  int reported = 0;
  char what[160];
  for (int i = 0; i < L->n; i++) {
    const recorder *a = &L->rb[i], *b = &L->rr[i];
    EXPECT_EQ_INT(L->status[i], L->rstatus[i]);
    EXPECT_EQ_INT(a->n, b->n);
    EXPECT_TRUE(L->res[i].integrator.steps == L->rres[i].integrator.steps);
    EXPECT_TRUE(L->res[i].integrator.attempts == L->rres[i].integrator.attempts);
    EXPECT_TRUE(L->res[i].integrator.rejected == L->rres[i].integrator.rejected);
    EXPECT_TRUE(L->res[i].reports == L->rres[i].reports);
    EXPECT_TRUE(L->res[i].stopped_by_report == L->rres[i].stopped_by_report);
    EXPECT_TRUE(L->res[i].t_end == L->rres[i].t_end);
    if (L->status[i] != L->rstatus[i] || a->n != b->n ||
        L->res[i].integrator.steps != L->rres[i].integrator.steps)
      fprintf(stderr, "  %s, lane %d: status %d / %d, reports %d / %d, steps %ld / %ld\n", label,
              i, L->status[i], L->rstatus[i], a->n, b->n, L->res[i].integrator.steps,
              L->rres[i].integrator.steps);
    const int nrep = a->n < b->n ? a->n : b->n;
    for (int k = 0; k < nrep && k < MAXREP; k++)
      for (int j = 0; j <= L->ny; j++) {
        snprintf(what, sizeof(what), "%s: report %d", label, k);
        check_close(a->v[(size_t)k * (size_t)(1 + L->ny) + (size_t)j],
                    b->v[(size_t)k * (size_t)(1 + L->ny) + (size_t)j], what, i, j, &reported);
      }
    if (L->status[i] == MBS_OK && L->rstatus[i] == MBS_OK) {
      const double* ud = mbs_get_udot(sys, L->st[i]);
      const double* ur = mbs_get_udot(sys, L->ref[i]);
      EXPECT_TRUE(ud != NULL && ur != NULL);  // both realized through Acceleration at the end
      for (int j = 0; ud && ur && j < mbs_system_nu(sys); j++) {
        snprintf(what, sizeof(what), "%s: final u'", label);
        check_close(ud[j], ur[j], what, i, j, &reported);
      }
    } else {
      // the same failure, said the same way
      EXPECT_TRUE(strcmp(mbs_state_error(L->st[i])->message,
                         mbs_state_error(L->ref[i])->message) == 0);
    }
  }
}

static void test_agreement(void) {
  const int quick = test_quick();
  for (int ia = 0; ia < 3; ia++) {
    if (!mbs_batch_isa_available(isas[ia])) {
      printf("  %s: not available on this CPU, skipped\n", isas[ia]);
      continue;
    }
    const double worst_before = worst_err;
    worst_err = 0;
    long steps = 0;
    for (int shape = 0; shape < (quick ? 2 : 4); shape++) {
      mbs_test_rng rng = {777 + 31 * (unsigned long long)shape};  // the same models per set
      random_tree_opts ro = {shape < 2 ? 6 : 12, supported_types, NSUPPORTED, shape % 2, 1,
                             shape != 1, shape != 2, 1, 0};
      mbs_system* sys = random_tree_create(&rng, &ro);
      EXPECT_TRUE(sys != NULL);
      if (!sys) continue;
      mbs_simulation_options o;
      mbs_simulation_options_default(&o);
      o.integ.accuracy = shape % 2 ? 1e-4 : 1e-7;
      o.report_interval = shape == 3 ? 0 : 0.05;  // shape 3: a report after every step
      // shapes 1 and 3: 3 lanes for up to 11 States (lanes take the next State as theirs end)
      mbs_batch_sim* bs = mbs_batch_sim_create(sys, shape % 2 ? 3 : MAXLANE, &o);
      EXPECT_TRUE(bs != NULL);
      if (!bs) {
        mbs_system_destroy(sys);
        continue;
      }
      EXPECT_OK(mbs_batch_set_isa(mbs_batch_sim_batch(bs), isas[ia]));
      for (int n = 1; n <= MAXLANE; n += quick ? 5 : 2) {
        lanes L;
        lanes_make(&L, &rng, sys, n, n % 2);
        char label[96];
        snprintf(label, sizeof(label), "%s, shape %d, %d lanes", isas[ia], shape, n);
        run_and_compare(&L, sys, bs, &o, shape == 3 ? 0.2 : 0.6, label);
        for (int i = 0; i < n; i++) steps += L.res[i].integrator.steps;
        lanes_free(&L);
      }
      mbs_batch_sim_destroy(bs);
      mbs_system_destroy(sys);
    }
    printf("  %s: %ld steps, largest relative difference %.3g\n", isas[ia], steps, worst_err);
    EXPECT_TRUE(steps > 100);  // the runs did integrate
    if (worst_before > worst_err) worst_err = worst_before;
  }
}

// a lane that fails (a non-finite speed), one stopped by its report function, the step limit;
// the other lanes go on as alone
static void test_lane_events(void) {
  mbs_test_rng rng = {4242};
  const mbs_mobilizer_type pin = MBS_MOB_PIN;
  random_tree_opts ro = {5, &pin, 1, 1, 1, 1, 1, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &ro);
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-6;
  o.report_interval = 0.1;
  mbs_batch_sim* bs = mbs_batch_sim_create(sys, 8, &o);
  EXPECT_TRUE(bs != NULL);
  lanes L;
  lanes_make(&L, &rng, sys, 7, 1);
  mbs_state_upd_u(L.st[2])[1] = NAN;
  mbs_state_upd_u(L.ref[2])[1] = NAN;
  L.rb[4].stop_after = L.rr[4].stop_after = 3;
  run_and_compare(&L, sys, bs, &o, 0.8, "lane events");
  EXPECT_TRUE(L.status[2] != MBS_OK);
  EXPECT_TRUE(strstr(mbs_state_error(L.st[2])->message, "t = ") != NULL);
  printf("  failing lane: %s\n", mbs_state_error(L.st[2])->message);
  EXPECT_EQ_INT(L.status[4], MBS_OK);
  EXPECT_TRUE(L.res[4].stopped_by_report && L.rb[4].n == 3);
  for (int i = 0; i < 7; i++)
    if (i != 2) EXPECT_EQ_INT(L.status[i], MBS_OK);
  lanes_free(&L);
  mbs_batch_sim_destroy(bs);
  // the step limit
  o.max_steps = 4;
  bs = mbs_batch_sim_create(sys, 3, &o);
  lanes_make(&L, &rng, sys, 3, 0);
  run_and_compare(&L, sys, bs, &o, 5.0, "step limit");
  for (int i = 0; i < 3; i++) EXPECT_EQ_INT(L.status[i], MBS_ERR_STEP_LIMIT);
  lanes_free(&L);
  mbs_batch_sim_destroy(bs);
  mbs_system_destroy(sys);
}

// only rk_merson, and only Systems the batched forward dynamics takes
static void test_refused(void) {
  mbs_test_rng rng = {5};
  const mbs_mobilizer_type pin = MBS_MOB_PIN;
  random_tree_opts ro = {3, &pin, 1, 1, 1, 0, 0, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &ro);
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  char why[256];
  EXPECT_TRUE(mbs_batch_simulation_supported(sys, &o, why, sizeof(why)));
  o.integrator = MBS_INTEG_DORMAND_PRINCE;
  EXPECT_TRUE(!mbs_batch_simulation_supported(sys, &o, why, sizeof(why)));
  EXPECT_TRUE(strstr(why, "dormand_prince") != NULL);
  EXPECT_TRUE(mbs_batch_sim_create(sys, 4, &o) == NULL);
  o.integrator = MBS_INTEG_RK_MERSON;
  o.integ.accuracy = 2;  // invalid
  EXPECT_TRUE(mbs_batch_sim_create(sys, 4, &o) == NULL);
  mbs_simulation_options_default(&o);
  mbs_batch_sim* bs = mbs_batch_sim_create(sys, 2, &o);
  mbs_state* st[3] = {mbs_state_create(sys), mbs_state_create(sys), NULL};
  mbs_simulation_result res[3];
  int status[3];
  EXPECT_EQ_INT(mbs_batch_simulate(bs, sys, st, 3, 1.0, NULL, NULL, res, status),
                MBS_ERR_ARGUMENT);  // a NULL State
  EXPECT_EQ_INT(mbs_batch_simulate(bs, sys, st, 0, 1.0, NULL, NULL, res, status),
                MBS_ERR_ARGUMENT);
  mbs_batch_sim_destroy(bs);
  for (int i = 0; i < 2; i++) mbs_state_destroy(st[i]);
  mbs_system_destroy(sys);
}

// A conservative system (gravity and springs, no dampers, no applied forces): each lane keeps
// its own energy to the accuracy's order over many periods. Physics, independent of the
// one-at-a-time path.
static void test_energy(void) {
  mbs_test_rng rng = {31337};
  const mbs_mobilizer_type types[] = {MBS_MOB_PIN, MBS_MOB_BALL, MBS_MOB_UNIVERSAL};
  random_tree_opts ro = {8, types, 3, 0, 1, 1, 0, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &ro);
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = 1e-8;
  o.report_interval = 0.5;
  const int n = 8;
  mbs_batch_sim* bs = mbs_batch_sim_create(sys, n, &o);
  mbs_state* st[8];
  double e0[8];
  for (int i = 0; i < n; i++) {
    st[i] = mbs_state_create(sys);
    random_tree_state(&rng, sys, st[i], 0.8, 1.0, 0);
    double ke, pe;
    EXPECT_OK(mbs_realize_velocity(sys, st[i]));
    EXPECT_OK(mbs_calc_kinetic_energy(sys, st[i], &ke));
    EXPECT_OK(mbs_calc_potential_energy(sys, st[i], &pe));
    e0[i] = ke + pe;
  }
  mbs_simulation_result res[8];
  int status[8];
  EXPECT_OK(mbs_batch_simulate(bs, sys, st, n, 3.0, NULL, NULL, res, status));
  double worst = 0;
  for (int i = 0; i < n; i++) {
    double ke, pe;
    EXPECT_OK(mbs_realize_velocity(sys, st[i]));
    EXPECT_OK(mbs_calc_kinetic_energy(sys, st[i], &ke));
    EXPECT_OK(mbs_calc_potential_energy(sys, st[i], &pe));
    const double rel = fabs(ke + pe - e0[i]) / fmax(1.0, fabs(e0[i]));
    if (rel > worst) worst = rel;
    EXPECT_TRUE(fabs(mbs_state_time(st[i]) - 3.0) < 1e-12);
  }
  printf("  energy: largest relative drift over 3 s at accuracy 1e-8: %.3g\n", worst);
  EXPECT_TRUE(worst < 1e-5);
  for (int i = 0; i < n; i++) mbs_state_destroy(st[i]);
  mbs_batch_sim_destroy(bs);
  mbs_system_destroy(sys);
}

// once made, simulating allocates nothing
static void test_no_allocation(void) {
  mbs_test_rng rng = {99};
  const mbs_mobilizer_type types[] = {MBS_MOB_PIN, MBS_MOB_FREE};
  random_tree_opts ro = {6, types, 2, 1, 1, 1, 1, 1, 0};
  mbs_system* sys = random_tree_create(&rng, &ro);
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.report_interval = 0.05;
  mbs_batch_sim* bs = mbs_batch_sim_create(sys, 5, &o);
  mbs_state* st[5];
  for (int i = 0; i < 5; i++) {
    st[i] = mbs_state_create(sys);
    random_tree_state(&rng, sys, st[i], 0.5, 0.5, 0);
  }
  mbs_simulation_result res[5];
  int status[5];
  EXPECT_OK(mbs_batch_simulate(bs, sys, st, 5, 0.1, NULL, NULL, res, status));
  const long before = n_alloc;
  EXPECT_OK(mbs_batch_simulate(bs, sys, st, 5, 0.5, NULL, NULL, res, status));
  const long used = n_alloc - before;
  printf("  allocations in a second call: %ld\n", used);
  EXPECT_TRUE(used == 0);
  for (int i = 0; i < 5; i++) mbs_state_destroy(st[i]);
  mbs_batch_sim_destroy(bs);
  mbs_system_destroy(sys);
}

int main(void) {
  EXPECT_TRUE(mbs_test_alloc_active());
  printf("test_batch_simulate: default instruction set %s\n", mbs_batch_isa());
  test_agreement();
  test_lane_events();
  test_refused();
  test_energy();
  test_no_allocation();
  printf("test_batch_simulate: largest relative difference from mbs_simulate %.3g\n", worst_err);
  return mbs_test_finish("test_batch_simulate");
}
