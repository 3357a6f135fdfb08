// Random multibody trees for tests.
#include "random_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const mbs_mobilizer_type random_tree_all_types[MBS_MOB_COUNT] = {
    MBS_MOB_WELD,     MBS_MOB_PIN,       MBS_MOB_SLIDER,   MBS_MOB_UNIVERSAL,
    MBS_MOB_CYLINDER, MBS_MOB_PLANAR,    MBS_MOB_SCREW,    MBS_MOB_TRANSLATION,
    MBS_MOB_GIMBAL,   MBS_MOB_BALL,      MBS_MOB_BALL_XYZ, MBS_MOB_FREE,
    MBS_MOB_FREE_XYZ, MBS_MOB_ELLIPSOID, MBS_MOB_ELLIPSOID_XYZ, MBS_MOB_FUNCTION};

int test_quick(void) {
  const char* s = getenv("MBS_TEST_QUICK");
  return s && *s && strcmp(s, "0") != 0;
}

void random_quaternion(mbs_test_rng* rng, double q[4]) {
  double n = 0;
  do {
    n = 0;
    for (int i = 0; i < 4; i++) {
      q[i] = mbs_test_uniform(rng, -1, 1);
      n += q[i] * q[i];
    }
  } while (n < 0.01 || n > 1);
  n = sqrt(n);
  for (int i = 0; i < 4; i++) q[i] /= n;
}

void random_inertia(mbs_test_rng* rng, double mo[6]) {
  const double d1 = mbs_test_uniform(rng, 0.05, 0.3);
  const double d2 = mbs_test_uniform(rng, 0.05, 0.3);
  const double lo = fabs(d1 - d2) + 0.01, hi = d1 + d2 - 0.01;
  const double d3 = mbs_test_uniform(rng, lo, hi);
  double q[4], R[9], J[9], D[9] = {d1, 0, 0, 0, d2, 0, 0, 0, d3};
  random_quaternion(rng, q);
  mbs_quat_to_rot(R, q);
  mbs_inertia_rotate(J, R, D);
  mo[0] = J[0]; mo[1] = J[4]; mo[2] = J[8];
  mo[3] = J[1]; mo[4] = J[2]; mo[5] = J[5];
}

static void random_vec(mbs_test_rng* rng, double v[3], double s) {
  for (int i = 0; i < 3; i++) v[i] = mbs_test_uniform(rng, -s, s);
}

static void random_unit(mbs_test_rng* rng, double v[3]) {
  double n;
  do {
    random_vec(rng, v, 1);
    n = mbs_v3_norm(v);
  } while (n < 0.2 || n > 1);
  mbs_v3_scale(v, v, 1 / n);
}

// a random function; `strong` ones have a slope bounded away from zero (so that the
// coordinate they are driven by always moves the body)
static int random_function(mbs_test_rng* rng, mbs_system* sys, int strong, double scale,
                           int const_only, int smooth) {
  mbs_function_spec f;
  memset(&f, 0, sizeof(f));
  double c[4], x[6], y[6];
  if (const_only) {
    f.type = MBS_FUNC_CONSTANT;
    c[0] = mbs_test_uniform(rng, -0.5, 0.5) * scale;
    f.coefs = c;
    return mbs_system_add_function(sys, &f);
  }
  const int kind = (int)mbs_test_uniform(rng, 0, strong || smooth ? 3 : 5);
  switch (kind) {
    case 0:  // linear
      f.type = MBS_FUNC_LINEAR;
      c[0] = (mbs_test_uniform(rng, 0, 1) < 0.5 ? -1 : 1) * mbs_test_uniform(rng, 0.6, 1.4) * scale;
      c[1] = mbs_test_uniform(rng, -0.3, 0.3) * scale;
      f.coefs = c;
      break;
    case 1:  // polynomial, dominant linear term, small cubic: monotone (the derivative
             // 3 c0 x^2 + 2 c1 x + c2 never vanishes since c1^2 < 3 c0 c2)
      f.type = MBS_FUNC_POLYNOMIAL;
      f.n = 4;
      c[0] = mbs_test_uniform(rng, 0.005, 0.02) * scale;
      c[1] = mbs_test_uniform(rng, -0.05, 0.05) * scale;
      c[2] = mbs_test_uniform(rng, 0.8, 1.2) * scale;
      c[3] = mbs_test_uniform(rng, -0.2, 0.2) * scale;
      f.coefs = c;
      break;
    case 2: {  // multiplier of a linear function
      mbs_function_spec g;
      memset(&g, 0, sizeof(g));
      g.type = MBS_FUNC_LINEAR;
      c[0] = mbs_test_uniform(rng, 0.7, 1.3) * scale;
      c[1] = mbs_test_uniform(rng, -0.2, 0.2) * scale;
      g.coefs = c;
      const int inner = mbs_system_add_function(sys, &g);
      if (inner < 0) return inner;
      f.type = MBS_FUNC_MULTIPLIER;
      f.inner = inner;
      f.scale = mbs_test_uniform(rng, 0.7, 1.3);
      break;
    }
    default: {  // splines through a smooth, mostly monotone curve
      f.type = kind == 3 ? MBS_FUNC_NATURAL_CUBIC_SPLINE : MBS_FUNC_SIMM_SPLINE;
      f.n = 6;
      const double a = mbs_test_uniform(rng, 0.5, 1.0), b = mbs_test_uniform(rng, -0.2, 0.2);
      for (int i = 0; i < 6; i++) {
        x[i] = -3 + 1.2 * i + mbs_test_uniform(rng, -0.2, 0.2);
        y[i] = scale * (a * x[i] + b * sin(2 * x[i]));
      }
      f.x = x;
      f.y = y;
      break;
    }
  }
  return mbs_system_add_function(sys, &f);
}

static int add_function_mobilizer(mbs_test_rng* rng, mbs_system* sys, mbs_body_spec* s,
                                  mbs_function_mobilizer* fm, int smooth) {
  memset(fm, 0, sizeof(*fm));
  // smooth mode: at most two driven axes, which cannot line up (three driven rotations have a
  // gimbal-lock configuration, like X-Y-Z angles)
  fm->ncoord = 1 + (int)mbs_test_uniform(rng, 0, smooth ? 2 : 3);
  // random rotation axes, not nearly parallel; translation axes random unit vectors
  for (int i = 0; i < 3; i++) {
    for (int tries = 0; tries < 100; tries++) {  // keep axes well apart
      random_unit(rng, fm->rotation[i].axis);
      random_unit(rng, fm->translation[i].axis);
      int ok = 1;
      for (int j = 0; j < i; j++) {
        double c[3];
        mbs_v3_cross(c, fm->rotation[i].axis, fm->rotation[j].axis);
        ok = ok && mbs_v3_norm(c) > 0.4;
        mbs_v3_cross(c, fm->translation[i].axis, fm->translation[j].axis);
        ok = ok && mbs_v3_norm(c) > 0.4;
      }
      if (ok) break;
    }
  }
  // the first ncoord axes (in a random order) each get one coordinate with a strong function
  int order[6] = {0, 1, 2, 3, 4, 5};
  for (int i = 5; i > 0; i--) {
    const int j = (int)mbs_test_uniform(rng, 0, i + 1);
    const int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (int k = 0; k < 6; k++) {
    const int i = order[k];
    mbs_spatial_axis* a = i < 3 ? &fm->rotation[i] : &fm->translation[i - 3];
    const double scale = i < 3 ? 1.0 : 0.2;
    if (k < fm->ncoord) {
      a->coord = k;
      a->function = random_function(rng, sys, 1, scale, 0, smooth);
    } else if (!smooth && mbs_test_uniform(rng, 0, 1) < 0.5) {
      a->coord = (int)mbs_test_uniform(rng, 0, fm->ncoord);
      a->function = random_function(rng, sys, 0, scale * 0.3, 0, smooth);
    } else {
      a->coord = -1;
      a->function = random_function(rng, sys, 0, scale, 1, smooth);
    }
    if (a->function < 0) return a->function;
  }
  s->function = fm;
  return 0;
}

mbs_system* random_tree_create(mbs_test_rng* rng, const random_tree_opts* o) {
  mbs_system* sys = mbs_system_create("random_tree");
  if (!sys) return NULL;
  mbs_function_mobilizer fm;
  for (int i = 0; i < o->nbody; i++) {
    char name[32];
    snprintf(name, sizeof(name), "b%d", i + 1);
    const int nb = mbs_system_nbody(sys);
    const int parent = o->chain ? nb - 1 : (int)mbs_test_uniform(rng, 0, nb);
    const mbs_mobilizer_type t = o->types[i % o->ntypes];
    mbs_body_spec s = mbs_body_spec_default(name, parent, t);
    s.mass = mbs_test_uniform(rng, 0.5, 3.0);
    random_vec(rng, s.com, 0.3);
    random_inertia(rng, s.inertia);
    if (o->frames) {
      random_vec(rng, s.X_PF.angles, M_PI);
      random_vec(rng, s.X_PF.p, 0.5);
      random_vec(rng, s.X_BM.angles, M_PI);
      random_vec(rng, s.X_BM.p, 0.3);
    } else {
      s.X_PF.p[0] = 0.5;
    }
    s.pitch = mbs_test_uniform(rng, -0.2, 0.2);
    for (int k = 0; k < 3; k++) s.radii[k] = mbs_test_uniform(rng, 0.05, 0.3);
    if (t == MBS_MOB_FUNCTION && add_function_mobilizer(rng, sys, &s, &fm, o->smooth) != 0) {
      fprintf(stderr, "random tree: %s\n", mbs_system_error(sys)->message);
      mbs_system_destroy(sys);
      return NULL;
    }
    if (mbs_system_add_body(sys, &s) < 0) {
      fprintf(stderr, "random tree: %s\n", mbs_system_error(sys)->message);
      mbs_system_destroy(sys);
      return NULL;
    }
  }
  const int nb = mbs_system_nbody(sys);
  if (o->gravity) {
    const double g[3] = {0.3, -9.81, 0.7};
    mbs_system_add_gravity(sys, g);
  }
  for (int k = 0; k < (o->springs || o->dampers ? 4 : 0); k++) {
    const int b1 = (int)mbs_test_uniform(rng, 0, nb), b2 = 1 + (int)mbs_test_uniform(rng, 0, nb - 1);
    double p1[3], p2[3];
    random_vec(rng, p1, 0.3);
    random_vec(rng, p2, 0.3);
    if (o->springs) mbs_system_add_spring(sys, b1, p1, b2, p2, mbs_test_uniform(rng, 5, 50), 0.3);
    if (o->dampers) mbs_system_add_damper(sys, b1, p1, b2, p2, mbs_test_uniform(rng, 0.1, 2));
  }
  for (int b = 1; b < nb && (o->springs || o->dampers); b++) {
    if (mbs_body_nu(sys, b) == 0) continue;
    if (o->springs && mbs_body_nq(sys, b) == mbs_body_nu(sys, b))
      mbs_system_add_mobility_spring(sys, b, 0, mbs_test_uniform(rng, 1, 10), 0.1);
    if (o->dampers) mbs_system_add_mobility_damper(sys, b, 0, mbs_test_uniform(rng, 0.1, 1));
  }
  if (mbs_system_finalize(sys) != 0) {
    fprintf(stderr, "random tree: %s\n", mbs_system_error(sys)->message);
    mbs_system_destroy(sys);
    return NULL;
  }
  return sys;
}

void random_tree_state(mbs_test_rng* rng, const mbs_system* sys, mbs_state* st, double qscale,
                       double uscale, int forces) {
  double* q = mbs_state_upd_q(st);
  double* u = mbs_state_upd_u(st);
  for (int b = 1; b < mbs_system_nbody(sys); b++) {
    const mbs_mobilizer_type t = mbs_body_mobilizer(sys, b);
    double* qb = q + mbs_body_qadr(sys, b);
    const int nq = mbs_body_nq(sys, b);
    const int quat = t == MBS_MOB_BALL || t == MBS_MOB_FREE || t == MBS_MOB_ELLIPSOID;
    int k0 = 0;
    if (quat) {
      random_quaternion(rng, qb);
      k0 = 4;
    }
    for (int k = k0; k < nq; k++) qb[k] = mbs_test_uniform(rng, -qscale, qscale);
    // keep X-Y-Z angle coordinates away from their singularity at the middle angle +-pi/2
    const int xyz = t == MBS_MOB_GIMBAL || t == MBS_MOB_BALL_XYZ || t == MBS_MOB_FREE_XYZ ||
                    t == MBS_MOB_ELLIPSOID_XYZ;
    if (xyz) qb[1] = mbs_test_uniform(rng, -1.2, 1.2);
  }
  for (int i = 0; i < mbs_system_nu(sys); i++) u[i] = mbs_test_uniform(rng, -uscale, uscale);
  if (forces) {
    double* f = mbs_state_upd_applied_mobility_forces(st);
    for (int i = 0; i < mbs_system_nu(sys); i++) f[i] = mbs_test_uniform(rng, -5, 5);
    double* F = mbs_state_upd_applied_body_forces(st);
    for (int i = 6; i < 6 * mbs_system_nbody(sys); i++) F[i] = mbs_test_uniform(rng, -5, 5);
  }
}
