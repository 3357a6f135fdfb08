// Scaling a model to a subject as State edits (studies/scaling.h), checked against the model
// built for that subject: mbstudy's human is made from its height and mass alone (every length
// proportional to the height, every mass to the mass), so the human built at 1.75 m and 75 kg,
// scaled by the height and mass ratios as State edits, must hold the same parameter values as
// the human built at the subject's height and mass — every one of them — and give the same
// quiet standing (pelvis height, hip angle, holding torques) and the same accelerations.
// The platform (apparatus) keeps its size.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../studies/human_model.h"
#include "../../studies/posture.h"
#include "../../studies/scaling.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs_test.h"

static mbs_osim_model* build(double H, double M) {
  mbs_human_params p;
  mbs_human_params_default(&p);
  p.height = H;
  p.mass = M;
  p.lock_joints = 1;
  mbs_error err;
  mbs_osim_model* m = mbs_human_model_build(&p, &err);
  if (!m) printf("%s\n", err.message);
  return m;
}

// the reference human scaled to (H, M) by State edits, against the human built at (H, M)
static void test_subject(double H, double M) {
  const double H0 = 1.75, M0 = 75;
  mbs_osim_model* ref = build(H0, M0);
  mbs_osim_model* direct = build(H, M);
  EXPECT_TRUE(ref && direct);
  if (!ref || !direct) {
    mbs_osim_free(ref);
    mbs_osim_free(direct);
    return;
  }
  const mbs_system* sys = mbs_osim_system(ref);
  const mbs_system* sys2 = mbs_osim_system(direct);
  EXPECT_EQ_INT(mbs_system_nparam(sys), mbs_system_nparam(sys2));
  mbs_scaling* sc = mbs_scaling_create(sys);
  EXPECT_TRUE(sc != NULL && mbs_scaling_count(sc) > 100);
  const int nb = mbs_system_nbody(sys);
  unsigned char* skip = mbs_posture_subject_skip(sys);
  double* L = malloc((size_t)nb * sizeof(double));
  double* Mf = malloc((size_t)nb * sizeof(double));
  for (int b = 0; b < nb; b++) {
    L[b] = b == 0 || skip[b] ? 1 : H / H0;
    Mf[b] = b == 0 || skip[b] ? 1 : M / M0;
  }
  mbs_state* st = mbs_state_create(sys);
  mbs_state* st2 = mbs_state_create(sys2);
  mbs_scaling_apply(sc, st, L, Mf);
  // every parameter as the builder gives it
  const double* a = mbs_state_params(st);
  const double* b = mbs_state_params(st2);
  int bad = 0;
  for (int k = 0; k < mbs_system_nparam_block(sys); k++) {
    const mbs_param_info* p = mbs_system_param_block(sys, k);
    for (int i = 0; i < p->size; i++) {
      const double x = a[p->index + i], y = b[p->index + i];
      if (fabs(x - y) > 1e-12 * fmax(1, fmax(fabs(x), fabs(y)))) {
        if (bad++ < 10) printf("  %s[%d]: scaled %.17g, built %.17g\n", p->path, i, x, y);
      }
    }
  }
  printf("H = %.3f m, M = %.1f kg: %d scaled numbers, %d differ from the human built so\n", H, M,
         mbs_scaling_count(sc), bad);
  EXPECT_EQ_INT(bad, 0);
  // the same quiet standing
  mbs_posture_options o;
  mbs_posture_options_default(&o);
  o.knee_flexion = 15 * 3.14159265358979 / 180;
  o.mode = MBS_JOINTS_FREE;
  mbs_posture_result r1, r2;
  mbs_error e;
  EXPECT_OK(mbs_osim_default_state(ref, st));  // (coordinates and speeds; parameters kept)
  EXPECT_OK(mbs_osim_default_state(direct, st2));
  EXPECT_OK(mbs_posture_quiet_standing(ref, st, &o, &r1, &e));
  EXPECT_OK(mbs_posture_quiet_standing(direct, st2, &o, &r2, &e));
  EXPECT_NEAR(r1.pelvis_height, r2.pelvis_height, 1e-9);
  EXPECT_NEAR(r1.hip_flexion, r2.hip_flexion, 1e-9);
  for (int j = 0; j < MBS_POSTURE_MAX_JOINTS; j++) EXPECT_NEAR(r1.torque[j], r2.torque[j], 1e-6);
  printf("  quiet standing: pelvis %.6f m vs %.6f m, knee torque %.6f vs %.6f N m\n",
         r1.pelvis_height, r2.pelvis_height, r1.torque[6], r2.torque[6]);
  // and the same accelerations there
  EXPECT_OK(mbs_realize_acceleration(sys, st));
  EXPECT_OK(mbs_realize_acceleration(sys2, st2));
  const double* u1 = mbs_get_udot(sys, st);
  const double* u2 = mbs_get_udot(sys2, st2);
  double worst = 0;
  for (int i = 0; i < mbs_system_nu(sys); i++) worst = fmax(worst, fabs(u1[i] - u2[i]));
  EXPECT_TRUE(worst < 1e-7);
  mbs_state_destroy(st);
  mbs_state_destroy(st2);
  free(skip);
  free(L);
  free(Mf);
  mbs_scaling_free(sc);
  mbs_osim_free(ref);
  mbs_osim_free(direct);
}

int main(void) {
  test_subject(1.629, 67.8);
  test_subject(1.90, 102.0);
  return mbs_test_finish("test_scaling");
}
