// Quiet standing on the perturbation platform (posture.h).
#include "posture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>
#include <nlopt.h>

#include "mbs/mbs.h"

const char* const mbs_posture_joint_names[] = {
    "lumbar_extension", "lumbar_bending",  "lumbar_rotation", "hip_flexion_r",
    "hip_adduction_r",  "hip_rotation_r",  "knee_angle_r",    "ankle_angle_r",
    "hip_flexion_l",    "hip_adduction_l", "hip_rotation_l",  "knee_angle_l",
    "ankle_angle_l",
    // optional: held when the model has them (the gait models' subtalar and toe joints)
    "subtalar_angle_r", "mtp_angle_r", "subtalar_angle_l", "mtp_angle_l", NULL};

static const char* const platform_scales[3] = {"/functions/platform_tx/prescribed/scale",
                                               "/functions/platform_ty/prescribed/scale",
                                               "/functions/platform_tz/prescribed/scale"};

void mbs_posture_options_default(mbs_posture_options* o) {
  o->knee_flexion = 0;
  o->trunk_lean = 0;
  o->com_ahead = 0;
  o->settle_time = 0;
  o->accuracy = 1e-5;
  o->mode = MBS_JOINTS_FREE;
}

static int coord(const mbs_osim_model* m, const char* name, mbs_error* err) {
  const int k = mbs_osim_find_coordinate(m, name);
  if (k < 0)
    MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, name, "posture: the model has no coordinate '%s'", name);
  return k;
}

static void set_q(const mbs_osim_model* m, mbs_state* st, int k, double v) {
  mbs_state_upd_q(st)[mbs_osim_coordinate_info(m, k)->qindex] = v;
}

void mbs_posture_displacement(double magnitude, double direction_deg, double d[3]) {
  const double dir = direction_deg * (3.14159265358979323846 / 180);
  d[0] = magnitude * cos(dir);
  d[1] = 0;
  d[2] = magnitude * sin(dir);
}

unsigned char* mbs_posture_subject_skip(const mbs_system* sys) {
  unsigned char* skip = calloc((size_t)mbs_system_nbody(sys), 1);
  const int platform = mbs_body_find(sys, "platform");
  if (skip && platform > 0) skip[platform] = 1;
  return skip;
}

// the right and left ankle joints in Ground: the talus's origin where the model has one (gait
// models), else the foot's [Position]
static int ankle_positions(const mbs_system* sys, mbs_state* st, double p[2][3]) {
  static const double origin[3] = {0, 0, 0};
  const char* feet[2][2] = {{"talus_r", "calcn_r"}, {"talus_l", "calcn_l"}};
  int rc = mbs_realize_position(sys, st);
  for (int f = 0; f < 2 && !rc; f++) {
    int b = mbs_body_find(sys, feet[f][0]);
    if (b < 0) b = mbs_body_find(sys, feet[f][1]);
    rc = b < 0 ? MBS_ERR_UNKNOWN_NAME : mbs_get_station_location(sys, st, b, origin, p[f]);
  }
  return rc;
}

// the human's centre of mass (every body but the platform) and the mean ankle position
static int com_and_ankles(const mbs_osim_model* m, mbs_state* st, const unsigned char* skip,
                          double com[3], double ankle[3]) {
  const mbs_system* sys = mbs_osim_system(m);
  int rc = mbs_realize_position(sys, st);
  if (rc) return rc;
  // the subject's centre of mass (skip: mbs_posture_subject_skip)
  if ((rc = mbs_calc_center_of_mass_subset(sys, st, skip, NULL, com))) return rc;
  double p[2][3];
  if ((rc = ankle_positions(sys, st, p))) return rc;
  for (int k = 0; k < 3; k++) ankle[k] = 0.5 * p[0][k] + 0.5 * p[1][k];
  return MBS_OK;
}

// how far each foot's sole is from level: the x and z components in Ground of the foot body's
// y axis (the spheres' centres lie in a plane y = const of the foot, as mbstudy places them:
// its normal)
static int foot_tilt(const mbs_system* sys, mbs_state* st, const int foot[2], double t[2][2]) {
  int rc = mbs_realize_position(sys, st);
  for (int f = 0; f < 2 && !rc; f++) {
    double R[9];
    rc = mbs_get_body_transform(sys, st, foot[f], R, NULL);
    t[f][0] = R[1];
    t[f][1] = R[7];
  }
  return rc;
}

// the feet flat on the platform: the ankle angles (and the subtalar angles where the model has
// them) that level each foot's sole, by Newton's method from the angles set. A pin ankle
// perpendicular to the sagittal plane (mbstudy's human) is flat already; the gait models' ankle
// and subtalar axes are oblique, so θ − h + λ alone leaves their feet pitched and rolled by
// up to a degree or two, growing with the ankle angle. With an ankle alone only the pitch is
// levelled.
static int level_feet(const mbs_osim_model* m, mbs_state* st, const int ankle[2],
                      const int subtalar[2]) {
  const mbs_system* sys = mbs_osim_system(m);
  // the feet: the bodies of the heel spheres (mbs/osim_platform.h names them), else calcn_r/l
  int foot[2];
  for (int f = 0; f < 2; f++) {
    const int g = mbs_contact_geometry_find(sys, f ? "heel_l" : "heel_r");
    foot[f] = g >= 0 ? mbs_contact_geometry_body(sys, g)
                    : mbs_body_find(sys, f ? "calcn_l" : "calcn_r");
  }
  if (foot[0] <= 0 || foot[1] <= 0) return MBS_OK;
  const int n = subtalar[0] >= 0 && subtalar[1] >= 0 ? 2 : 1;
  const int* dof[2] = {ankle, subtalar};
  const double* q = mbs_state_q(st);
  const double step = 1e-7;
  int rc = MBS_OK;
  for (int it = 0; it < 30; it++) {
    double t0[2][2], t1[2][2], J[2][2][2] = {{{0}}};
    if ((rc = foot_tilt(sys, st, foot, t0))) return rc;
    double worst = 0;
    for (int f = 0; f < 2; f++) worst = fmax(worst, fabs(t0[f][0]) + (n == 2 ? fabs(t0[f][1]) : 0));
    if (worst < 1e-13) break;
    // both feet at once: each foot's angles move only that foot
    for (int j = 0; j < n; j++) {
      double keep[2];
      for (int f = 0; f < 2; f++) {
        keep[f] = q[mbs_osim_coordinate_info(m, dof[j][f])->qindex];
        set_q(m, st, dof[j][f], keep[f] + step);
      }
      rc = foot_tilt(sys, st, foot, t1);
      for (int f = 0; f < 2; f++) set_q(m, st, dof[j][f], keep[f]);
      if (rc) return rc;
      for (int f = 0; f < 2; f++)
        for (int i = 0; i < 2; i++) J[f][i][j] = (t1[f][i] - t0[f][i]) / step;
    }
    for (int f = 0; f < 2; f++) {
      double dx[2] = {0, 0};
      const double det = J[f][0][0] * J[f][1][1] - J[f][0][1] * J[f][1][0];
      if (n == 2 && fabs(det) > 1e-6) {
        dx[0] = (-J[f][1][1] * t0[f][0] + J[f][0][1] * t0[f][1]) / det;
        dx[1] = (J[f][1][0] * t0[f][0] - J[f][0][0] * t0[f][1]) / det;
      } else if (fabs(J[f][0][0]) > 1e-6) {
        dx[0] = -t0[f][0] / J[f][0][0];
      }
      for (int j = 0; j < n; j++) {
        const double v = q[mbs_osim_coordinate_info(m, dof[j][f])->qindex];
        set_q(m, st, dof[j][f], v + fmax(-0.2, fmin(0.2, dx[j])));
      }
    }
  }
  return rc;
}

// what the static solution works on: the model and State, the pelvis's height and tilt
// (coordinates q, their q indices qi), and the inverse dynamics' buffers
typedef struct balance {
  const mbs_osim_model* m;
  mbs_state* st;
  int q[2], qi[2];
  double* udot;  // zeros
  double* tau;
  const unsigned char* skip;  // mbs_posture_subject_skip
} balance;

// the generalized forces on the pelvis's height and tilt that hold the body at rest (zero
// when the contact balances gravity)
static int pelvis_unbalance(const balance* B, double g[2], mbs_error* err) {
  const mbs_system* sys = mbs_osim_system(B->m);
  int rc;
  if ((rc = mbs_realize_dynamics(sys, B->st)) ||
      (rc = mbs_calc_inverse_dynamics(sys, B->st, B->udot, B->tau))) {
    *err = *mbs_state_error(B->st);
    return rc;
  }
  for (int k = 0; k < 2; k++) g[k] = B->tau[mbs_osim_coordinate_info(B->m, B->q[k])->uindex];
  return MBS_OK;
}

// with the pelvis tilted to `tilt`, the pelvis height (between y_top - 5 cm and y_top, where
// the spheres just touch) at which the contact carries the body's weight; g: what is left
// unbalanced there
static int balance_height(const balance* B, double y_top, double tilt, double g[2],
                          mbs_error* err) {
  mbs_state* st = B->st;
  const int* qi = B->qi;
  mbs_state_upd_q(st)[qi[1]] = tilt;
  double hi = y_top + 0.05, lo = y_top - 0.05;
  int rc;
  mbs_state_upd_q(st)[qi[0]] = lo;
  if ((rc = pelvis_unbalance(B, g, err))) return rc;
  if (!(g[0] < 0))
    return MBS_FAIL(err, MBS_ERR_ASSEMBLY, "posture", "posture: 5 cm into the platform, the "
                    "feet's contact still does not carry the body: are the spheres on the feet?");
  for (int it = 0; it < 64 && hi - lo > 1e-14; it++) {
    mbs_state_upd_q(st)[qi[0]] = 0.5 * (lo + hi);
    if ((rc = pelvis_unbalance(B, g, err))) return rc;
    if (g[0] > 0) hi = 0.5 * (lo + hi);
    else lo = 0.5 * (lo + hi);
  }
  return MBS_OK;
}

static int foot_spheres(const mbs_system* sys, mbs_state* st, const unsigned char* skip,
                        double* lo_x, double* hi_x, double* lowest, mbs_error* err);

static int settle_solve(const balance* B, mbs_error* err) {
  const mbs_system* sys = mbs_osim_system(B->m);
  mbs_state* st = B->st;
  const int* qi = B->qi;
  memset(mbs_state_upd_u(st), 0, (size_t)mbs_system_nu(sys) * sizeof(double));
  double total = 0, com[3];
  int rc = mbs_realize_position(sys, st);
  if (!rc) rc = mbs_calc_center_of_mass(sys, st, &total, com);
  if (rc) return rc;
  const double tol = 1e-11 * total * 9.81;
  double g[2];
  // first a robust solution: for a tilt, the height where the contact carries the weight
  // (bisection: the spheres just touching carry nothing); then the tilt where the pitching
  // moment vanishes, searched outward from the start so that the body stays flat on its feet
  // (a tilt onto the heels or the toes balances too, on an edge); then Newton's method on both
  int bad = 0;
  const double y0 = mbs_state_q(st)[qi[0]], t0 = mbs_state_q(st)[qi[1]];
#define MBS_BALANCE_AT(tilt, out)                                                   \
  do {                                                                              \
    if ((rc = balance_height(B, y0, (tilt), out, err))) return rc;       \
  } while (0)
  // the nearest restoring sign change of the moment to the start, in steps of 0.005 rad on both
  // sides
  double ga[2], gb[2], a = t0, b = t0;
  MBS_BALANCE_AT(t0, ga);
  double prev[2] = {ga[1], ga[1]};
  int found = 0;
  for (int k = 1; k <= 60 && !found; k++)
    for (int side = 0; side < 2 && !found; side++) {
      const double t = t0 + (side ? -0.005 : 0.005) * k;
      double gt[2];
      MBS_BALANCE_AT(t, gt);
      // a standing the body returns to: the holding moment needed goes from negative to
      // positive as the tilt grows (an edge of the feet balances with the opposite sign)
      const double lower = side ? gt[1] : prev[side], upper = side ? prev[side] : gt[1];
      if (lower <= 0 && upper >= 0) {
        found = 1;
        a = fmin(t, t - (side ? -0.005 : 0.005));
        b = fmax(t, t - (side ? -0.005 : 0.005));
      }
      prev[side] = gt[1];
    }
  if (found) {
    MBS_BALANCE_AT(a, ga);
    MBS_BALANCE_AT(b, gb);
  }
  if (!found || ga[1] * gb[1] > 0) {
    // where the centre of mass stood over the spheres, flat, for the message
    mbs_state_upd_q(st)[qi[0]] = y0;
    mbs_state_upd_q(st)[qi[1]] = t0;
    double c[3], ankle[3], lo = NAN, hi = NAN, lowest;
    mbs_error e2;
    char where[160] = "";
    if (com_and_ankles(B->m, st, B->skip, c, ankle) == MBS_OK &&
        foot_spheres(sys, st, B->skip, &lo, &hi, &lowest, &e2) == MBS_OK && hi > lo)
      snprintf(where, sizeof where, " (%.1f cm ahead of the rearmost sphere, %.0f %% of the "
               "way to the foremost)", 100 * (c[0] - lo), 100 * (c[0] - lo) / (hi - lo));
    return MBS_FAIL(err, MBS_ERR_ASSEMBLY, "posture",
                    "posture: no stable standing on the feet within 0.3 rad of flat: the centre "
                    "of mass%s is too near the edge of the feet, or their contact too soft to "
                    "hold the body upright (tilting resistance below weight x height)", where);
  }
  for (int it = 0; it < 200 && !bad && b - a > 1e-13; it++) {
    // regula falsi (Illinois), falling back on bisection
    double c = (a * gb[1] - b * ga[1]) / (gb[1] - ga[1]);
    if (!(c > a && c < b)) c = 0.5 * (a + b);
    double gc[2];
    MBS_BALANCE_AT(c, gc);
    if (fabs(gc[1]) < tol) {
      a = b = c;
      break;
    }
    if (gc[1] * ga[1] > 0) {
      a = c;
      ga[1] = gc[1];
      gb[1] *= 0.5;
    } else {
      b = c;
      gb[1] = gc[1];
      ga[1] *= 0.5;
    }
  }
#undef MBS_BALANCE_AT
  if (!bad) {
    double gm[2];
    if ((rc = balance_height(B, y0, 0.5 * (a + b), gm, err))) return rc;
  }
  // then Newton's method on both, with a backtracking line search on g0^2 + (g1 / 0.1 m)^2
  // (the contact force is very nonlinear) and steps of at most 1 cm and 0.05 rad
  if ((rc = pelvis_unbalance(B, g, err))) return rc;
  for (int it = 0; it < 100; it++) {
    if (fabs(g[0]) < tol && fabs(g[1]) < tol) return MBS_OK;
    // the Jacobian by central differences
    double J[2][2];
    const double step[2] = {1e-7, 1e-7};
    for (int k = 0; k < 2; k++) {
      double gp[2], gm[2];
      const double x0 = mbs_state_q(st)[qi[k]];
      mbs_state_upd_q(st)[qi[k]] = x0 + step[k];
      if ((rc = pelvis_unbalance(B, gp, err))) return rc;
      mbs_state_upd_q(st)[qi[k]] = x0 - step[k];
      if ((rc = pelvis_unbalance(B, gm, err))) return rc;
      mbs_state_upd_q(st)[qi[k]] = x0;
      for (int r = 0; r < 2; r++) J[r][k] = (gp[r] - gm[r]) / (2 * step[k]);
    }
    const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    if (!(fabs(det) > 0)) break;
    double dx[2] = {(J[1][1] * g[0] - J[0][1] * g[1]) / det,
                    (-J[1][0] * g[0] + J[0][0] * g[1]) / det};
    const double cap[2] = {1e-2, 5e-2};
    double shrink = 1;
    for (int k = 0; k < 2; k++)
      if (fabs(dx[k]) > cap[k]) shrink = fmin(shrink, cap[k] / fabs(dx[k]));
    const double x0[2] = {mbs_state_q(st)[qi[0]], mbs_state_q(st)[qi[1]]};
    const double merit0 = g[0] * g[0] + 100 * g[1] * g[1];
    double lambda = shrink, gt[2] = {g[0], g[1]};
    for (int ls = 0; ls < 40; ls++, lambda *= 0.5) {
      for (int k = 0; k < 2; k++) mbs_state_upd_q(st)[qi[k]] = x0[k] - lambda * dx[k];
      if ((rc = pelvis_unbalance(B, gt, err))) return rc;
      if (gt[0] * gt[0] + 100 * gt[1] * gt[1] < merit0) break;
    }
    g[0] = gt[0];
    g[1] = gt[1];
  }
  return MBS_FAIL(err, MBS_ERR_ASSEMBLY, "posture",
                  "posture: no static equilibrium on the feet (unbalanced %.3g N, %.3g N m): "
                  "is the centre of mass over the feet?", g[0], g[1]);
}

static int settle_statically(const mbs_osim_model* m, mbs_state* st, const unsigned char* skip,
                             mbs_error* err) {
  balance B = {m, st, {mbs_osim_find_coordinate(m, "pelvis_ty"),
                       mbs_osim_find_coordinate(m, "pelvis_tilt")}, {0, 0}, NULL, NULL, skip};
  if (B.q[0] < 0 || B.q[1] < 0)
    return MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, "pelvis", "posture: no pelvis_ty or pelvis_tilt");
  for (int k = 0; k < 2; k++) B.qi[k] = mbs_osim_coordinate_info(m, B.q[k])->qindex;
  const size_t nu = (size_t)mbs_system_nu(mbs_osim_system(m));
  B.udot = calloc(nu + 1, sizeof(double));
  B.tau = calloc(nu + 1, sizeof(double));
  const int rc = B.udot && B.tau ? settle_solve(&B, err)
                                 : MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "out of memory");
  free(B.udot);
  free(B.tau);
  return rc;
}

// the contact spheres on the subject's bodies (not Ground, not those skip flags: the platform),
// the State at Position stage: the smallest and largest Ground x of their centres and the lowest
// point of any of them; an error when there are none
static int foot_spheres(const mbs_system* sys, mbs_state* st, const unsigned char* skip,
                        double* lo_x, double* hi_x, double* lowest, mbs_error* err) {
  *lo_x = *lowest = INFINITY;
  *hi_x = -INFINITY;
  const double* prm = mbs_state_params(st);
  for (int g = 0; g < mbs_system_ncontact_geometry(sys); g++) {
    if (mbs_contact_geometry_type(sys, g) != MBS_GEOM_SPHERE) continue;
    const int b = mbs_contact_geometry_body(sys, g);
    if (b <= 0 || skip[b]) continue;
    const char* gname = mbs_contact_geometry_name(sys, g);
    char path[256];
    snprintf(path, sizeof path, "/contactgeometryset/%s/radius", gname);
    const mbs_param_info* pr = mbs_system_find_param(sys, path);
    snprintf(path, sizeof path, "/contactgeometryset/%s/location", gname);
    const mbs_param_info* pl = mbs_system_find_param(sys, path);
    double p[3];
    if (!pr || !pl || mbs_get_station_location(sys, st, b, prm + pl->index, p)) continue;
    *lo_x = fmin(*lo_x, p[0]);
    *hi_x = fmax(*hi_x, p[0]);
    *lowest = fmin(*lowest, p[1] - prm[pr->index]);
  }
  if (!isfinite(*lowest))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture",
                    "posture: the model has no contact spheres on its feet");
  return MBS_OK;
}

//---------------------------------- muscles --------------------------------------------------

// the model's muscles, in force order: their force index, control, activation state (or -1: a
// rigid tendon's activation is its excitation) and path
typedef struct muscle_set {
  int n;
  int *force, *control, *act, *path;
} muscle_set;

static void muscle_set_free(muscle_set* ms) {
  free(ms->force);
  *ms = (muscle_set){0, NULL, NULL, NULL, NULL};
}

static int muscles_of(const mbs_system* sys, muscle_set* ms) {
  *ms = (muscle_set){0, NULL, NULL, NULL, NULL};
  const int nf = mbs_system_nforce(sys), nz = mbs_system_nz(sys);
  if (!(ms->force = malloc(4 * (size_t)(nf + 1) * sizeof(int)))) return MBS_ERR_NO_MEMORY;
  ms->control = ms->force + nf + 1;
  ms->act = ms->control + nf + 1;
  ms->path = ms->act + nf + 1;
  for (int f = 0; f < nf; f++) {
    const int path = mbs_force_path(sys, f);
    if (path < 0) continue;
    const int m = ms->n++;
    ms->force[m] = f;
    ms->path[m] = path;
    ms->control[m] = ms->act[m] = -1;
    for (int c = 0; c < mbs_system_ncontrol(sys); c++)
      if (mbs_control_force(sys, c) == f) ms->control[m] = c;
    char want[300], name[300];
    snprintf(want, sizeof want, "%s/activation", mbs_force_name(sys, f));
    for (int z = 0; z < nz; z++)
      if (mbs_system_z_name(sys, z, name, sizeof name) == MBS_OK && !strcmp(name, want))
        ms->act[m] = z;
  }
  return MBS_OK;
}

// a muscle's instance parameter "/forceset/<muscle>/<name>"
static double muscle_param(const mbs_system* sys, const mbs_state* st, int force,
                           const char* name) {
  char path[320];
  snprintf(path, sizeof path, "/forceset/%s/%s", mbs_force_name(sys, force), name);
  const mbs_param_info* pi = mbs_system_find_param(sys, path);
  return pi ? mbs_state_params(st)[pi->index] : NAN;
}

// every muscle's excitation and activation a[m] (a rigid tendon's: its excitation), the fibers
// at their equilibrium for the pose, and the tendon forces F[m] there (F may be NULL)
static int set_activations(const mbs_system* sys, mbs_state* st, const muscle_set* ms,
                           const double* a, double* F) {
  double* ctl = mbs_state_upd_controls(st);
  for (int m = 0; m < ms->n; m++)
    if (ms->control[m] >= 0) ctl[ms->control[m]] = a[m];
  double* z = mbs_state_upd_z(st);
  for (int m = 0; m < ms->n; m++)
    if (ms->act[m] >= 0) z[ms->act[m]] = a[m];
  int rc = mbs_equilibrate_muscles(sys, st);
  if (rc == MBS_OK && F) rc = mbs_realize_dynamics(sys, st);
  for (int m = 0; F && m < ms->n && rc == MBS_OK; m++) {
    mbs_muscle_report r;
    rc = mbs_get_muscle_report(sys, st, ms->force[m], &r);
    F[m] = r.tendon_force;
  }
  return rc;
}

// Static optimization at quiet standing (the muscles mode): activations a in [a_min, 1] and
// reserve torques rho_j at the held joints that minimize sum a^2 + sum (rho_j / 1 N m)^2 (the
// reserves as OpenSim's static optimization takes them: ideal torques of optimal force 1 N m)
// with rho_j = tau_j - sum_m R_jm F_m(a_m): tau_j the torque joint j needs beyond the muscles,
// R the moment arms, F_m(a_m) the muscle's tendon force in equilibrium at activation a_m (all
// at the standing pose, at rest). NLopt's SLSQP on the activations, rho eliminated; gradients
// from dF_m/da_m by a forward difference of the equilibrium (each muscle's force depends on its
// own activation only, so one evaluation gives every muscle's).
typedef struct static_opt {
  const mbs_system* sys;
  mbs_state* st;
  const muscle_set* ms;
  int nj;
  const double* R;    // nj x n, row-major
  const double* tau;  // nj
  double *F, *F2, *x2, *res;
  int rc, nevals;
} static_opt;

static double so_objective(unsigned n, const double* x, double* grad, void* data) {
  static_opt* o = data;
  o->nevals++;
  if ((o->rc = set_activations(o->sys, o->st, o->ms, x, o->F))) return HUGE_VAL;
  double f = 0;
  for (unsigned m = 0; m < n; m++) f += x[m] * x[m];
  for (int j = 0; j < o->nj; j++) {
    double r = o->tau[j];
    for (unsigned m = 0; m < n; m++) r -= o->R[j * (int)n + (int)m] * o->F[m];
    o->res[j] = r / (MBS_POSTURE_RESERVE * MBS_POSTURE_RESERVE);
    f += r * r / (MBS_POSTURE_RESERVE * MBS_POSTURE_RESERVE);
  }
  if (grad) {
    const double h = 1e-7;
    for (unsigned m = 0; m < n; m++) o->x2[m] = x[m] + (x[m] + h <= 1 ? h : -h);
    if ((o->rc = set_activations(o->sys, o->st, o->ms, o->x2, o->F2))) return HUGE_VAL;
    for (unsigned m = 0; m < n; m++) {
      const double dF = (o->F2[m] - o->F[m]) / (o->x2[m] - x[m]);
      double g = 2 * x[m];
      for (int j = 0; j < o->nj; j++) g -= 2 * o->res[j] * o->R[j * (int)n + (int)m] * dF;
      grad[m] = g;
    }
  }
  return f;
}

// The excitation increments x >= 0 per unit of effort at joint k of sign s: x minimizing
// sum x^2 + W |A x - s e_k|^2 over the rows of the joints muscles cross (W large: the torque
// change is s at joint k and none at the others, as far as increments alone can make it), by
// NLopt's SLSQP with the bounds x >= 0. Only increments: a muscle at its minimum activation
// cannot relax further, so an effort is met by recruiting the muscles that pull its way
// (reciprocal activation), each sign with its own set.
typedef struct alloc_problem {
  const double* A;
  int nj, n, k, s;
  const int* rows;  // muscled
  double* r;        // nj
} alloc_problem;

#define MBS_POSTURE_ALLOC_WEIGHT 1e4  // (N m)^-2: A is some N m per unit activation

static double alloc_objective(unsigned n, const double* x, double* grad, void* data) {
  const alloc_problem* p = data;
  double f = 0;
  for (unsigned m = 0; m < n; m++) f += x[m] * x[m];
  for (int j = 0; j < p->nj; j++) {
    double r = 0;
    if (p->rows[j]) {
      for (unsigned m = 0; m < n; m++) r += p->A[j * (int)n + (int)m] * x[m];
      r -= j == p->k ? p->s : 0;
    }
    p->r[j] = r;
    f += MBS_POSTURE_ALLOC_WEIGHT * r * r;
  }
  if (grad)
    for (unsigned m = 0; m < n; m++) {
      double g = 2 * x[m];
      for (int j = 0; j < p->nj; j++)
        g += 2 * MBS_POSTURE_ALLOC_WEIGHT * p->r[j] * p->A[j * (int)n + (int)m];
      grad[m] = g;
    }
  return f;
}

static int increments(const double* A, int nj, int n, int k, int s, const int* rows, double* x,
                      mbs_error* err) {
  double* buf = calloc((size_t)(nj + n + 1), sizeof(double));
  nlopt_opt opt = nlopt_create(NLOPT_LD_SLSQP, (unsigned)n);
  if (!buf || !opt) {
    free(buf);
    nlopt_destroy(opt);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
  }
  alloc_problem p = {A, nj, n, k, s, rows, buf};
  double* lo = buf + nj;
  for (int m = 0; m < n; m++) lo[m] = 0, x[m] = 0;
  nlopt_set_lower_bounds(opt, lo);
  nlopt_set_min_objective(opt, alloc_objective, &p);
  nlopt_set_ftol_rel(opt, 1e-14);
  nlopt_set_maxeval(opt, 1000);
  double f;
  const nlopt_result res = nlopt_optimize(opt, x, &f);
  nlopt_destroy(opt);
  free(buf);
  if (res < 0 && res != NLOPT_ROUNDOFF_LIMITED)
    return MBS_FAIL(err, MBS_ERR_ASSEMBLY, "posture", "posture: the muscles' excitations for "
                    "feedback at joint %d could not be found (NLopt SLSQP: %s)", k,
                    nlopt_result_to_string(res));
  return MBS_OK;
}

// The muscles mode's quiet standing, the State at the standing pose with the muscles at rest
// and tau_rest the joints' holding torques (nj rows: the uindex of each held joint in u_of):
// activations by static optimization (above), set with the fibers in equilibrium; reserve[j]
// the torques left to the joints' actuators; gain (2 nj x n, row-major) the excitation
// increments per unit of joint torque about the standing activations, row 2 j for a positive
// effort at joint j and 2 j + 1 for a negative one (increments(), with A_jm = R_jm dF_m/da_m),
// for the joints some muscle crosses (muscled[j] = 1; a joint no muscle crosses keeps its
// torque actuator's feedback).
static int muscles_standing(const mbs_system* sys, mbs_state* st, const muscle_set* ms,
                            int nj, const int* u_of, const double* tau_rest, double* reserve,
                            double* gain, int* muscled, mbs_error* err) {
  const int n = ms->n, nu = mbs_system_nu(sys);
  double* buf = calloc((size_t)(nj * n * 2 + 6 * n + 2 * nj + nu + 4), sizeof(double));
  if (!buf) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
  double *R = buf, *A = R + nj * n, *a = A + nj * n, *lo = a + n, *hi = lo + n, *F = hi + n;
  double *F2 = F + n, *x2 = F2 + n, *tau = x2 + n, *res = tau + nj, *r_full = res + nj;
  int rc = MBS_OK;
  for (int m = 0; m < n && rc == MBS_OK; m++) {
    const double amin = muscle_param(sys, st, ms->force[m], "minimum_activation");
    lo[m] = a[m] = isfinite(amin) && amin > 0 ? amin : 0;
    hi[m] = 1;
    if ((rc = mbs_calc_path_moment_arms(sys, st, ms->path[m], r_full))) break;
    for (int j = 0; j < nj; j++) R[j * n + m] = r_full[u_of[j]];
  }
  // the torques needed beyond the muscles: the holding torques at rest plus the muscles' own
  if (rc == MBS_OK) rc = set_activations(sys, st, ms, a, F);
  for (int j = 0; j < nj && rc == MBS_OK; j++) {
    tau[j] = tau_rest[j];
    for (int m = 0; m < n; m++) tau[j] += R[j * n + m] * F[m];
  }
  static_opt so = {sys, st, ms, nj, R, tau, F, F2, x2, res, MBS_OK, 0};
  nlopt_opt opt = NULL;
  double fbest = NAN;
  if (rc == MBS_OK) {
    if (!(opt = nlopt_create(NLOPT_LD_SLSQP, (unsigned)n))) rc = MBS_ERR_NO_MEMORY;
    else {
      nlopt_set_lower_bounds(opt, lo);
      nlopt_set_upper_bounds(opt, hi);
      nlopt_set_min_objective(opt, so_objective, &so);
      nlopt_set_ftol_rel(opt, 1e-12);
      nlopt_set_xtol_abs1(opt, 1e-10);
      nlopt_set_maxeval(opt, 2000);
      const nlopt_result res_code = nlopt_optimize(opt, a, &fbest);
      if (so.rc) rc = so.rc;
      else if (res_code < 0 && res_code != NLOPT_ROUNDOFF_LIMITED)
        rc = MBS_FAIL(err, MBS_ERR_ASSEMBLY, "posture", "posture: the static optimization of "
                      "the muscles' activations at quiet standing failed (NLopt SLSQP: %s)",
                      nlopt_result_to_string(res_code));
      nlopt_destroy(opt);
    }
  }
  // the activations set, the reserves from the inverse dynamics there
  if (rc == MBS_OK) rc = set_activations(sys, st, ms, a, F);
  double* udot = calloc((size_t)nu + 1, sizeof(double));
  double* tq = calloc((size_t)nu + 1, sizeof(double));
  if (rc == MBS_OK && (!udot || !tq)) rc = MBS_ERR_NO_MEMORY;
  if (rc == MBS_OK) rc = mbs_calc_inverse_dynamics(sys, st, udot, tq);
  for (int j = 0; j < nj && rc == MBS_OK; j++) reserve[j] = tq[u_of[j]];
  free(udot);
  free(tq);
  // the excitations per unit torque about the standing: dF/da by a central difference (one-sided
  // at the minimum activation, below which the force does not change)
  if (rc == MBS_OK) {
    for (int m = 0; m < n; m++) x2[m] = fmin(a[m] + 1e-6, 1);
    rc = set_activations(sys, st, ms, x2, F2);
    for (int m = 0; m < n; m++) x2[m] = fmax(a[m] - 1e-6, lo[m]);
    if (rc == MBS_OK) rc = set_activations(sys, st, ms, x2, F);
    for (int m = 0; m < n && rc == MBS_OK; m++) {
      const double dF = (F2[m] - F[m]) / (fmin(a[m] + 1e-6, 1) - fmax(a[m] - 1e-6, lo[m]));
      for (int j = 0; j < nj; j++) A[j * n + m] = R[j * n + m] * dF;
    }
    if (rc == MBS_OK) rc = set_activations(sys, st, ms, a, NULL);
  }
  if (rc == MBS_OK) {
    // the joints muscles cross: a row of A of any size against the largest
    double big = 0;
    for (int k = 0; k < nj * n; k++) big = fmax(big, fabs(A[k]));
    for (int j = 0; j < nj; j++) {
      double row = 0;
      for (int m = 0; m < n; m++) row = fmax(row, fabs(A[j * n + m]));
      muscled[j] = big > 0 && row > 1e-6 * big;
    }
    // for each of those joints and each sign of the effort, the excitation increments
    for (int j = 0; j < nj && rc == MBS_OK; j++)
      for (int sgn = 0; sgn < 2 && rc == MBS_OK; sgn++) {
        double* x = gain + (size_t)(2 * j + sgn) * (size_t)n;
        for (int m = 0; m < n; m++) x[m] = 0;
        if (muscled[j]) rc = increments(A, nj, n, j, sgn ? -1 : 1, muscled, x, err);
      }
  }
  if (rc && !err->code) {
    const mbs_error* se = mbs_state_error(st);
    if (se->code) *err = *se;
    else MBS_FAIL(err, rc, "posture", "posture: the muscles at quiet standing: %s",
                  mbs_status_text(rc));
  }
  free(buf);
  return rc;
}

//---------------------------------- feedback -------------------------------------------------

static int is_ankle(const char* coordinate) { return strncmp(coordinate, "ankle_", 6) == 0; }

int mbs_posture_add_feedback(mbs_osim_model* m, mbs_system* sys, void* user, mbs_error* err) {
  (void)user;
  // the ankles sense the body's sway: a combination of every coordinate (posture.h)
  const int ncoord = mbs_osim_ncoordinate(m);
  mbs_pd_term* terms = calloc((size_t)(ncoord > 0 ? ncoord : 1), sizeof(*terms));
  if (!terms) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
  for (int k = 0; k < ncoord; k++) {
    const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(m, k);
    terms[k] = (mbs_pd_term){ci->qindex, ci->uindex, 0};
  }
  // the muscles mode's outputs: the joint's torque actuator, then two per muscle's excitation,
  // one for each sign of the effort (cut off below 0; gains set by quiet standing)
  muscle_set ms;
  mbs_pd_output* out = NULL;
  if (muscles_of(sys, &ms) || !(out = malloc((size_t)(2 * ms.n + 1) * sizeof(*out)))) {
    muscle_set_free(&ms);
    free(terms);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
  }
  int nout = 1;
  for (int m = 0; m < ms.n; m++)
    if (ms.control[m] >= 0) {
      out[nout++] = (mbs_pd_output){ms.control[m], 0, 0, 0, INFINITY};
      out[nout++] = (mbs_pd_output){ms.control[m], 0, 0, 0, INFINITY};
    }
  muscle_set_free(&ms);
  int rc = MBS_OK;
  for (int j = 0; mbs_posture_joint_names[j] && rc == MBS_OK; j++) {
    const char* cn = mbs_posture_joint_names[j];
    const int k = mbs_osim_find_coordinate(m, cn);
    char name[128];
    snprintf(name, sizeof name, "%s_torque", cn);
    const int force = mbs_force_find(sys, name);
    if (k < 0 || force < 0) continue;
    int control = -1;
    for (int c = 0; c < mbs_system_ncontrol(sys); c++)
      if (mbs_control_force(sys, c) == force) control = c;
    char path[160];
    snprintf(path, sizeof path, "/forceset/%s/optimal_force", name);
    const mbs_param_info* pi = mbs_system_find_param(sys, path);
    const double fopt = pi ? mbs_system_param_default(sys, pi->index) : 1;
    if (control < 0 || !(fopt > 0)) {
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, name, "posture: the actuator '%s' of '%s' has no "
                    "control or no positive optimal force", name, cn);
      break;
    }
    const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(m, k);
    out[0] = (mbs_pd_output){control, 1 / fopt, 0, -INFINITY, INFINITY};
    const mbs_pd_output torque = out[0];
    const int sway = is_ankle(cn);
    snprintf(name, sizeof name, "%s_feedback", cn);
    mbs_pd_controller_spec pd = {.name = name,
                                 .q_index = ci->qindex,
                                 .u_index = ci->uindex,
                                 .kp = sway ? MBS_POSTURE_SWAY_KP : MBS_POSTURE_JOINT_KP,
                                 .kd = sway ? MBS_POSTURE_SWAY_KD : MBS_POSTURE_JOINT_KD,
                                 .delay = sway ? MBS_POSTURE_SWAY_DELAY : 0,
                                 .window = sway ? MBS_POSTURE_SWAY_WINDOW : 0,
                                 .noutput = 1,
                                 .outputs = &torque,
                                 .scale = 0,  // off until quiet standing
                                 .scale_set = 1,
                                 .nterm = sway ? ncoord : 0,
                                 .terms = sway ? terms : NULL};
    int added = mbs_system_add_pd_controller(sys, &pd);
    if (added >= 0 && sway) {
      // and the ankle muscles' intrinsic stiffness and damping, on the joint's own angle
      snprintf(name, sizeof name, "%s_intrinsic", cn);
      pd = (mbs_pd_controller_spec){.name = name,
                                    .q_index = ci->qindex,
                                    .u_index = ci->uindex,
                                    .kp = MBS_POSTURE_INTRINSIC_K,
                                    .kd = MBS_POSTURE_INTRINSIC_B,
                                    .noutput = 1,
                                    .outputs = &torque,
                                    .scale = 0,
                                    .scale_set = 1};
      added = mbs_system_add_pd_controller(sys, &pd);
    }
    if (added >= 0 && nout > 1) {
      // with muscles: the muscles mode's feedback, onto their excitations (and onto the torque
      // actuator where no muscle crosses the joint: output gains set by quiet standing)
      out[0].gain = 0;
      // the feedback mode's law and numbers, without the window (which stands for the
      // activation dynamics the muscles now have); the feet's joints without feedback
      // (posture.h)
      const int foot = !strncmp(cn, "subtalar_", 9) || !strncmp(cn, "mtp_", 4);
      snprintf(name, sizeof name, "%s_muscles", cn);
      pd = (mbs_pd_controller_spec){
          .name = name,
          .q_index = ci->qindex,
          .u_index = ci->uindex,
          .kp = sway ? MBS_POSTURE_SWAY_KP : foot ? 0 : MBS_POSTURE_JOINT_KP,
          .kd = sway ? MBS_POSTURE_SWAY_KD : foot ? 0 : MBS_POSTURE_JOINT_KD,
          .delay = sway ? MBS_POSTURE_SWAY_DELAY : 0,
          .noutput = nout,
          .outputs = out,
          .scale = 0,
          .scale_set = 1,
          .nterm = sway ? ncoord : 0,
          .terms = sway ? terms : NULL};
      added = mbs_system_add_pd_controller(sys, &pd);
    }
    if (added < 0) {
      *err = *mbs_system_error(sys);
      rc = err->code ? err->code : MBS_ERR_ARGUMENT;
    }
  }
  free(terms);
  free(out);
  return rc;
}

// the body's sway angle (rad, forward positive): the angle from the vertical of the line from
// the mean ankle position to the subject's centre of mass, in the plane of `up` and `fwd`
static int sway_angle(const mbs_osim_model* m, mbs_state* st, const unsigned char* skip,
                      const double up[3], const double fwd[3], double* angle) {
  double c[3], a[3];
  const int rc = com_and_ankles(m, st, skip, c, a);
  if (rc) return rc;
  double x = 0, y = 0;
  for (int k = 0; k < 3; k++) {
    x += fwd[k] * (c[k] - a[k]);
    y += up[k] * (c[k] - a[k]);
  }
  *angle = atan2(x, y);
  return MBS_OK;
}

// the sway's coefficients on every coordinate at the present pose (central differences) and
// the sway there
static int sway_coefficients(const mbs_osim_model* m, mbs_state* st, const unsigned char* skip,
                             double* coef, double* angle) {
  const mbs_system* sys = mbs_osim_system(m);
  double up[3] = {0, 1, 0}, fwd[3], p[2][3];
  const mbs_param_info* gi = mbs_system_find_param(sys, "/forceset/gravity/g");
  if (gi) {
    const double* g = mbs_state_params(st) + gi->index;
    const double n = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    if (n > 0)
      for (int k = 0; k < 3; k++) up[k] = -g[k] / n;
  }
  // forward: up x (right ankle - left ankle)
  int rc = ankle_positions(sys, st, p);
  if (rc) return rc;
  const double d[3] = {p[0][0] - p[1][0], p[0][1] - p[1][1], p[0][2] - p[1][2]};
  fwd[0] = up[1] * d[2] - up[2] * d[1];
  fwd[1] = up[2] * d[0] - up[0] * d[2];
  fwd[2] = up[0] * d[1] - up[1] * d[0];
  const double n = sqrt(fwd[0] * fwd[0] + fwd[1] * fwd[1] + fwd[2] * fwd[2]);
  if (!(n > 0)) return MBS_ERR_ARGUMENT;
  for (int k = 0; k < 3; k++) fwd[k] /= n;
  if ((rc = sway_angle(m, st, skip, up, fwd, angle))) return rc;
  const double h = 1e-6;
  for (int k = 0; k < mbs_osim_ncoordinate(m) && !rc; k++) {
    const int qi = mbs_osim_coordinate_info(m, k)->qindex;
    const double q0 = mbs_state_q(st)[qi];
    double a1 = 0, a0 = 0;
    mbs_state_upd_q(st)[qi] = q0 + h;
    rc = sway_angle(m, st, skip, up, fwd, &a1);
    mbs_state_upd_q(st)[qi] = q0 - h;
    if (!rc) rc = sway_angle(m, st, skip, up, fwd, &a0);
    mbs_state_upd_q(st)[qi] = q0;
    coef[k] = (a1 - a0) / (2 * h);
  }
  if (!rc) rc = mbs_realize_position(sys, st);
  return rc;
}

// G = m g d of what coordinate k's body carries in standing, and T = sqrt(I / G) with I its
// moment of inertia about the joint's body origin (posture.h) [Position]
static int carried_stiffness(const mbs_osim_model* m, mbs_state* st, const unsigned char* skip,
                             int k, double* G, double* T) {
  const mbs_system* sys = mbs_osim_system(m);
  const int nb = mbs_system_nbody(sys), b = mbs_osim_coordinate_info(m, k)->body;
  unsigned char* part = calloc((size_t)nb, 2);
  if (!part) return MBS_ERR_NO_MEMORY;
  unsigned char* sub = part + nb;
  // the distal side: b and its descendants (bodies come in topological order)
  for (int i = b; i < nb; i++) sub[i] = i == b || (i > b && sub[mbs_body_parent(sys, i)]);
  const char* feet[2] = {"calcn_r", "calcn_l"};
  int leg = 0, nfeet = 0;
  for (int f = 0; f < 2; f++) {
    const int fb = mbs_body_find(sys, feet[f]);
    if (fb < 0) continue;
    nfeet++;
    leg = leg || sub[fb];
  }
  for (int i = 0; i < nb; i++) part[i] = i == 0 || (skip && skip[i]) || (leg ? sub[i] : !sub[i]);
  double mass = 0, com[3], R[9], p[3], inertia = 0;
  int rc = mbs_calc_center_of_mass_subset(sys, st, part, &mass, com);
  if (rc == MBS_OK) rc = mbs_get_body_transform(sys, st, b, R, p);
  const double* prm = mbs_state_params(st);
  for (int i = 1; i < nb && rc == MBS_OK; i++) {
    if (part[i]) continue;
    char path[300];
    snprintf(path, sizeof path, "/bodyset/%s/mass", mbs_body_name(sys, i));
    const mbs_param_info* pm = mbs_system_find_param(sys, path);
    snprintf(path, sizeof path, "/bodyset/%s/mass_center", mbs_body_name(sys, i));
    const mbs_param_info* pc = mbs_system_find_param(sys, path);
    snprintf(path, sizeof path, "/bodyset/%s/inertia", mbs_body_name(sys, i));
    const mbs_param_info* pi = mbs_system_find_param(sys, path);
    if (!pm || !pc || !pi) continue;
    double c[3];
    if ((rc = mbs_get_station_location(sys, st, i, prm + pc->index, c))) break;
    const double r2 = (c[0] - p[0]) * (c[0] - p[0]) + (c[1] - p[1]) * (c[1] - p[1]) +
                      (c[2] - p[2]) * (c[2] - p[2]);
    // about an axis through the origin: m r^2 and the mean of the central moments
    const double* J = prm + pi->index;
    inertia += prm[pm->index] * r2 + (J[0] + J[1] + J[2]) / 2;
  }
  free(part);
  if (rc) return rc;
  double g = 9.80665;
  const mbs_param_info* gi = mbs_system_find_param(sys, "/forceset/gravity/g");
  if (gi) {
    const double* gv = prm + gi->index;
    g = sqrt(gv[0] * gv[0] + gv[1] * gv[1] + gv[2] * gv[2]);
  }
  const double d = sqrt((com[0] - p[0]) * (com[0] - p[0]) + (com[1] - p[1]) * (com[1] - p[1]) +
                        (com[2] - p[2]) * (com[2] - p[2]));
  const double share = leg && nfeet > 0 ? 1.0 / nfeet : 1.0;
  *G = share * mass * g * d;
  *T = *G > 0 ? sqrt(share * inertia / *G) : 0;
  return MBS_OK;
}

// a posture controller's scale, kd_scale and reference ("/controllerset/<coordinate>_<kind>/...")
static int set_pd(const mbs_system* sys, mbs_state* st, const char* coordinate, const char* kind,
                  double scale, double kd_scale, double reference) {
  static const char* const names[3] = {"scale", "kd_scale", "reference"};
  const double v[3] = {scale, kd_scale, reference};
  int rc = MBS_OK;
  for (int k = 0; k < 3 && rc == MBS_OK; k++) {
    char path[256];
    snprintf(path, sizeof path, "/controllerset/%s_%s/%s", coordinate, kind, names[k]);
    rc = mbs_state_set_param(sys, st, path, 0, v[k]);
  }
  return rc;
}

static int quiet_standing(const mbs_osim_model* m, mbs_state* st, const mbs_posture_options* o,
                          mbs_posture_result* r, const unsigned char* skip, mbs_error* err) {
  const mbs_system* sys = mbs_osim_system(m);
  memset(r, 0, sizeof(*r));
  const double theta = o->knee_flexion;
  double target = o->com_ahead;
  if (!(o->trunk_lean > -0.5 && o->trunk_lean < 1.2))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture", "posture: trunk lean %g rad is outside "
                    "-0.5 .. 1.2", o->trunk_lean);
  if (!(theta >= 0 && theta < 2.0))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture", "posture: knee flexion %g rad is outside "
                    "0 .. 2", theta);
  int idx[MBS_POSTURE_MAX_JOINTS];
  int nj = 0;
  for (; mbs_posture_joint_names[nj]; nj++) {
    idx[nj] = mbs_osim_find_coordinate(m, mbs_posture_joint_names[nj]);
    if (idx[nj] < 0 && nj < MBS_POSTURE_REQUIRED_JOINTS)
      return coord(m, mbs_posture_joint_names[nj], err), err->code;
  }
  const int hip_r = 3, knee_r = 6, ankle_r = 7, hip_l = 8, knee_l = 11, ankle_l = 12,
            subtalar_r = 13, subtalar_l = 15;
  const int pelvis_ty = coord(m, "pelvis_ty", err);
  if (pelvis_ty < 0) return err->code;
  // the knees flex with a negative angle (the gait models' convention); a model whose knee range
  // lies on the positive side flexes the other way
  for (int j = knee_r; j <= knee_l; j += knee_l - knee_r) {
    const double* range = mbs_osim_coordinate_info(m, idx[j])->range;
    if (range[0] >= 0 && range[1] > range[0])
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, mbs_posture_joint_names[j],
                      "posture: '%s' flexes with a positive angle (its range is %.0f .. %.0f deg); "
                      "the posture study poses knees of the gait models' convention, flexion "
                      "negative", mbs_posture_joint_names[j], range[0] * 180 / M_PI,
                      range[1] * 180 / M_PI);
  }
  // the platform at rest while settling
  double scale[3];
  double* prm = mbs_state_upd_params(st);
  for (int k = 0; k < 3; k++) {
    const mbs_param_info* pi = mbs_system_find_param(sys, platform_scales[k]);
    scale[k] = pi ? prm[pi->index] : 0;
    if (pi) prm[pi->index] = 0;
  }
  // start from the model's defaults, time -settle_time, all speeds zero
  int rc = mbs_osim_default_state(m, st);
  mbs_state_set_time(st, -o->settle_time);
  memset(mbs_state_upd_u(st), 0, (size_t)mbs_system_nu(sys) * sizeof(double));
  // by default the centre of mass goes where people stand quietly: over the point 35 % of the
  // way from the rearmost to the foremost sphere centre of the feet (the centre of pressure of
  // quiet standing lies about 4-5 cm ahead of the ankles, a third of the foot from the heel)
  if (!(target > 0) && rc == MBS_OK) {
    double com[3], ankle[3], lo_x = INFINITY, hi_x = -INFINITY;
    for (int j = 0; j < nj; j++)
      if (idx[j] >= 0) set_q(m, st, idx[j], 0);
    if ((rc = com_and_ankles(m, st, skip, com, ankle)) == MBS_OK) {
      double lowest_unused;
      rc = foot_spheres(sys, st, skip, &lo_x, &hi_x, &lowest_unused, err);
      target = lo_x + MBS_POSTURE_COM_FRACTION * (hi_x - lo_x) - ankle[0];
    }
  }
  // hip flexion h so that the centre of mass is `target` ahead of the ankles (bisection: the
  // centre of mass moves back as the hips flex with the feet flat)
  const double lean = o->trunk_lean;
  const int tilt = mbs_osim_find_coordinate(m, "pelvis_tilt");
  if (tilt < 0) return coord(m, "pelvis_tilt", err), err->code;
  double lo = -0.3, hi = theta + lean + 0.6, h = 0;
  double com[3], ankle[3];
  for (int it = 0; it < 80 && rc == MBS_OK; it++) {
    h = 0.5 * (lo + hi);
    set_q(m, st, tilt, -lean);
    set_q(m, st, idx[knee_r], -theta);
    set_q(m, st, idx[knee_l], -theta);
    set_q(m, st, idx[hip_r], h);
    set_q(m, st, idx[hip_l], h);
    set_q(m, st, idx[ankle_r], theta - h + lean);
    set_q(m, st, idx[ankle_l], theta - h + lean);
    if ((rc = level_feet(m, st, (const int[2]){idx[ankle_r], idx[ankle_l]},
                         (const int[2]){idx[subtalar_r], idx[subtalar_l]})) ||
        (rc = com_and_ankles(m, st, skip, com, ankle)))
      break;
    const double ahead = com[0] - ankle[0];
    if (ahead > target) lo = h;
    else hi = h;
    r->com_ahead = ahead;
  }
  // the hips' range may not reach the target (arms or a heavy trunk elsewhere than assumed)
  if (rc == MBS_OK && !(fabs(r->com_ahead - target) < 1e-4))
    return MBS_FAIL(err, MBS_ERR_ASSEMBLY, "posture",
                    "posture: at %.1f deg of knee flexion no hip flexion puts the centre of mass "
                    "%.1f cm ahead of the ankles (%.1f cm at the hip's limit, %.1f deg)",
                    theta * 180 / M_PI, 100 * target, 100 * r->com_ahead, h * 180 / M_PI);
  r->hip_flexion = h;
  r->knee_angle = -theta;
  r->ankle_angle = mbs_state_q(st)[mbs_osim_coordinate_info(m, idx[ankle_r])->qindex];
  // lower the body until its lowest sphere touches the platform (y = 0)
  if (rc == MBS_OK) rc = mbs_realize_dynamics(sys, st);
  double lowest = INFINITY, x_unused[2];
  if (rc == MBS_OK) rc = foot_spheres(sys, st, skip, &x_unused[0], &x_unused[1], &lowest, err);
  if (rc == MBS_OK && isfinite(lowest)) {
    const double y = mbs_state_q(st)[mbs_osim_coordinate_info(m, pelvis_ty)->qindex];
    set_q(m, st, pelvis_ty, y - lowest);
  }
  // lock every joint at the posture and let the body settle on its spheres
  for (int j = 0; j < nj && rc == MBS_OK; j++) {
    if (idx[j] < 0) continue;
    char path[256];
    snprintf(path, sizeof path, "/constraintset/%s_locked/value", mbs_posture_joint_names[j]);
    const double v = mbs_state_q(st)[mbs_osim_coordinate_info(m, idx[j])->qindex];
    if ((rc = mbs_state_set_param(sys, st, path, 0, v))) {
      MBS_FAIL(err, rc, path, "posture: the model has no lock '%s' (build it with lock_joints)",
               path);
      break;
    }
    snprintf(path, sizeof path, "/constraintset/%s_locked/enabled", mbs_posture_joint_names[j]);
    rc = mbs_state_set_param(sys, st, path, 0, 1);
  }
  double* ctl = mbs_state_upd_controls(st);
  for (int c = 0; c < mbs_system_ncontrol(sys); c++) ctl[c] = 0;
  // static equilibrium on the spheres: with the joints held, the body is rigid; find the pelvis
  // height and tilt where the contact's vertical force and pitching moment balance gravity
  // (Newton's method on the generalized forces of pelvis_ty and pelvis_tilt at rest)
  if (rc == MBS_OK) rc = settle_statically(m, st, skip, err);
  if (rc == MBS_OK && o->settle_time > 0) {
    mbs_simulation_options so;
    mbs_simulation_options_default(&so);
    so.integ.accuracy = o->accuracy;
    so.report_interval = 0;
    rc = mbs_simulate(sys, st, 0.0, &so, NULL, 0, NULL, NULL, NULL);
    if (rc) *err = *mbs_state_error(st);
    if (rc == MBS_OK) {
      const double* u = mbs_state_u(st);
      for (int i = 0; i < mbs_system_nu(sys); i++)
        r->settle_speed = fmax(r->settle_speed, fabs(u[i]));
      rc = settle_statically(m, st, skip, err);  // from where the dynamic settling ended
    }
  }
  if (rc == MBS_OK) {
    memset(mbs_state_upd_u(st), 0, (size_t)mbs_system_nu(sys) * sizeof(double));
    mbs_state_set_time(st, 0);
    r->pelvis_height = mbs_state_q(st)[mbs_osim_coordinate_info(m, pelvis_ty)->qindex];
  }
  // the muscles at rest (excitation 0, activation at its minimum, fibers in equilibrium), so
  // that the holding torques include their passive forces
  muscle_set ms = {0, NULL, NULL, NULL, NULL};
  if (rc == MBS_OK && muscles_of(sys, &ms))
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
  if (rc == MBS_OK && o->mode == MBS_JOINTS_MUSCLES && ms.n == 0)
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture", "posture: the muscles mode needs a model with "
                  "muscles (an OpenSim model read with its muscles kept: remove_muscles false)");
  if (rc == MBS_OK && ms.n > 0) {
    double* rest = malloc((size_t)ms.n * sizeof(double));
    if (!rest) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
    for (int m = 0; rest && m < ms.n; m++) {
      const double amin = muscle_param(sys, st, ms.force[m], "minimum_activation");
      rest[m] = isfinite(amin) && amin > 0 ? amin : 0;
    }
    if (rest && (rc = set_activations(sys, st, &ms, rest, NULL)) && !err->code)
      *err = *mbs_state_error(st);
    if (rest) {  // excitation 0: the activation stays at its minimum
      for (int m = 0; m < ms.n; m++)
        if (ms.control[m] >= 0) mbs_state_upd_controls(st)[ms.control[m]] = 0;
    }
    free(rest);
  }
  // holding torques: the generalized forces at zero acceleration (constraints aside)
  const int nu = mbs_system_nu(sys);
  double* udot = calloc((size_t)nu + 1, sizeof(double));
  double* tau = calloc((size_t)nu + 1, sizeof(double));
  if (rc == MBS_OK && (!udot || !tau))
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
  if (rc == MBS_OK && ((rc = mbs_realize_dynamics(sys, st)) ||
                       (rc = mbs_calc_inverse_dynamics(sys, st, udot, tau))))
    *err = *mbs_state_error(st);
  if (rc == MBS_OK) {
    static const char* pelvis[6] = {"pelvis_tilt", "pelvis_list", "pelvis_rotation",
                                    "pelvis_tx", "pelvis_ty", "pelvis_tz"};
    for (int k = 0; k < 6; k++) {
      const int c = mbs_osim_find_coordinate(m, pelvis[k]);
      if (c >= 0) r->residual = fmax(r->residual, fabs(tau[mbs_osim_coordinate_info(m, c)->uindex]));
    }
    ctl = mbs_state_upd_controls(st);
    for (int j = 0; j < nj; j++) {
      if (idx[j] < 0) continue;
      const double t = tau[mbs_osim_coordinate_info(m, idx[j])->uindex];
      r->torque[j] = t;
      char name[128];
      snprintf(name, sizeof name, "%s_torque", mbs_posture_joint_names[j]);
      const int force = mbs_force_find(sys, name);
      for (int c = 0; c < mbs_system_ncontrol(sys); c++)
        if (mbs_control_force(sys, c) == force) ctl[c] = o->mode != MBS_JOINTS_LOCKED ? t : 0;
    }
    // the muscles mode: the muscles hold the posture, reserves the rest
    double* gain = NULL;
    int muscled[MBS_POSTURE_MAX_JOINTS] = {0}, u_of[MBS_POSTURE_MAX_JOINTS];
    int jrow[MBS_POSTURE_MAX_JOINTS], nrow = 0;
    if (o->mode == MBS_JOINTS_MUSCLES) {
      double tau_rest[MBS_POSTURE_MAX_JOINTS], reserve[MBS_POSTURE_MAX_JOINTS];
      // the torque actuators off: the reserves are what the muscles leave
      for (int j = 0; j < nj; j++) {
        char name[128];
        snprintf(name, sizeof name, "%s_torque", mbs_posture_joint_names[j]);
        const int force = mbs_force_find(sys, name);
        for (int c = 0; c < mbs_system_ncontrol(sys); c++)
          if (mbs_control_force(sys, c) == force) ctl[c] = 0;
      }
      for (int j = 0; j < nj; j++)
        if (idx[j] >= 0) {
          jrow[nrow] = j;
          u_of[nrow] = mbs_osim_coordinate_info(m, idx[j])->uindex;
          tau_rest[nrow++] = r->torque[j];
        }
      if (!(gain = calloc((size_t)(2 * ms.n * nrow + 1), sizeof(double))))
        rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "posture: out of memory");
      else
        rc = muscles_standing(sys, st, &ms, nrow, u_of, tau_rest, reserve, gain, muscled, err);
      ctl = mbs_state_upd_controls(st);
      for (int i = 0; i < nrow && rc == MBS_OK; i++) {
        const int j = jrow[i];
        r->reserve[j] = reserve[i];
        char name[128];
        snprintf(name, sizeof name, "%s_torque", mbs_posture_joint_names[j]);
        const int force = mbs_force_find(sys, name);
        for (int c = 0; c < mbs_system_ncontrol(sys); c++)
          if (mbs_control_force(sys, c) == force) ctl[c] = reserve[i];
      }
      double sum = 0;
      for (int k = 0; k < ms.n && rc == MBS_OK; k++) {
        const double a = ms.act[k] >= 0 ? mbs_state_z(st)[ms.act[k]]
                                        : mbs_state_controls(st)[ms.control[k]];
        sum += a * a;
        r->activation_max = fmax(r->activation_max, a);
      }
      if (ms.n > 0) r->activation_rms = sqrt(sum / ms.n);
    }
    // feedback about the standing angles, scaled by what each joint carries (off in the free
    // and locked modes)
    int nfeedback = 0, has[MBS_POSTURE_MAX_JOINTS] = {0};
    for (int j = 0; j < nj && rc == MBS_OK; j++) {  // the stiffnesses at the standing pose
      char name[128];
      snprintf(name, sizeof name, "%s_feedback", mbs_posture_joint_names[j]);
      if (idx[j] < 0 || mbs_controller_find(sys, name) < 0) continue;
      has[j] = 1;
      nfeedback++;
      if ((o->mode == MBS_JOINTS_FEEDBACK || o->mode == MBS_JOINTS_MUSCLES) &&
          (rc = carried_stiffness(m, st, skip, idx[j], &r->stiffness[j], &r->time_scale[j])) &&
          !err->code)
        *err = *mbs_state_error(st);
    }
    double* coef = NULL;
    double sway = 0;
    const int ncoord = mbs_osim_ncoordinate(m);
    if (rc == MBS_OK && nfeedback > 0) {  // the sway the ankles sense, linearized here
      if (!(coef = calloc((size_t)ncoord + 1, sizeof(*coef)))) rc = MBS_ERR_NO_MEMORY;
      else if ((rc = sway_coefficients(m, st, skip, coef, &sway)) && !err->code)
        *err = *mbs_state_error(st);
      if (rc && !err->code)
        rc = MBS_FAIL(err, rc, "posture", "posture: the body's sway could not be found (%s)",
                      mbs_status_text(rc));
    }
    for (int j = 0; j < nj && rc == MBS_OK; j++) {  // then the parameters
      if (!has[j]) continue;
      const char* cn = mbs_posture_joint_names[j];
      const double angle = mbs_state_q(st)[mbs_osim_coordinate_info(m, idx[j])->qindex];
      double reference = angle;
      // the feedback mode's controllers, or the muscles mode's (through the muscles)
      const int muscles = o->mode == MBS_JOINTS_MUSCLES;
      const char* kind = muscles ? "muscles" : "feedback";
      if (is_ankle(cn)) {
        reference = 0;
        char path[256];
        snprintf(path, sizeof path, "/controllerset/%s_%s/coefficients", cn, kind);
        for (int k = 0; k < ncoord && rc == MBS_OK; k++) {
          rc = mbs_state_set_param(sys, st, path, k, coef[k]);
          reference += coef[k] * mbs_state_q(st)[mbs_osim_coordinate_info(m, k)->qindex];
        }
        // (in the muscles mode the muscles' own)
        if (rc == MBS_OK && !muscles)
          rc = set_pd(sys, st, cn, "intrinsic", r->stiffness[j], r->time_scale[j], angle);
      }
      if (rc == MBS_OK)
        rc = set_pd(sys, st, cn, kind, r->stiffness[j], r->time_scale[j], reference);
      // the muscles mode: the effort onto the excitations (outputs 1..: two per muscle with a
      // control, in force order, as mbs_posture_add_feedback made them); a joint no muscle
      // crosses keeps its torque output
      int row = -1;
      for (int i = 0; i < nrow; i++)
        if (jrow[i] == j) row = i;
      if (rc == MBS_OK && gain && row >= 0) {
        char path[256];
        snprintf(path, sizeof path, "/controllerset/%s_muscles/gains", cn);
        if (!muscled[row]) {
          char act[160];
          snprintf(act, sizeof act, "/forceset/%s_torque/optimal_force", cn);
          const mbs_param_info* pf = mbs_system_find_param(sys, act);
          const double fopt = pf ? mbs_state_params(st)[pf->index] : 1;
          rc = mbs_state_set_param(sys, st, path, 0, fopt > 0 ? 1 / fopt : 1);
        }
        for (int k = 0, out = 1; muscled[row] && k < ms.n && rc == MBS_OK; k++)
          if (ms.control[k] >= 0) {
            rc = mbs_state_set_param(sys, st, path, out++, gain[(2 * row) * ms.n + k]);
            if (rc == MBS_OK)
              rc = mbs_state_set_param(sys, st, path, out++, -gain[(2 * row + 1) * ms.n + k]);
          }
      }
    }
    free(coef);
    free(gain);
    if (rc == MBS_OK && o->mode == MBS_JOINTS_MUSCLES && ms.n > 0 &&
        mbs_controller_find(sys, "ankle_angle_r_muscles") < 0)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture", "posture: the muscles mode needs the "
                    "model read with its muscles and the feedback controllers "
                    "(mbs_posture_add_feedback)");
    if (rc == MBS_OK && (o->mode == MBS_JOINTS_FEEDBACK || o->mode == MBS_JOINTS_MUSCLES) &&
        nfeedback == 0)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture", "posture: the %s mode needs the "
                    "model read with the feedback controllers (mbs_posture_add_feedback)",
                    o->mode == MBS_JOINTS_FEEDBACK ? "feedback" : "muscles");
    // the mode: free joints drop their locks
    for (int j = 0; j < nj && rc == MBS_OK; j++) {
      if (idx[j] < 0) continue;
      char path[256];
      snprintf(path, sizeof path, "/constraintset/%s_locked/enabled",
               mbs_posture_joint_names[j]);
      rc = mbs_state_set_param(sys, st, path, 0, o->mode == MBS_JOINTS_LOCKED);
    }
  }
  free(udot);
  free(tau);
  muscle_set_free(&ms);
  // the platform's displacement back for the perturbation
  prm = mbs_state_upd_params(st);
  for (int k = 0; k < 3; k++) {
    const mbs_param_info* pi = mbs_system_find_param(sys, platform_scales[k]);
    if (pi) prm[pi->index] = scale[k];
  }
  if (rc == MBS_OK) rc = mbs_realize_acceleration(sys, st);
  if (rc && !err->code) *err = *mbs_state_error(st);
  return rc;
}

//---------------------------------- time to fall ----------------------------------------------

static double pelvis_above_level(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  const mbs_posture_fall* f = user;
  return mbs_state_q(st)[f->qindex] - f->level;
}

static mbs_event_action fallen(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  mbs_posture_fall* f = user;
  if (isnan(f->time)) f->time = mbs_state_time(st);
  return MBS_EVENT_TERMINATE;
}

mbs_event mbs_posture_fall_event(mbs_posture_fall* f) {
  return (mbs_event){"fall", pelvis_above_level, MBS_STAGE_POSITION, -1, fallen, f};
}

int mbs_posture_time_to_fall(const mbs_osim_model* m, mbs_state* st, double duration,
                             double fall_fraction, double accuracy, double* T, mbs_error* err) {
  const mbs_system* sys = mbs_osim_system(m);
  const int k = mbs_osim_find_coordinate(m, "pelvis_ty");
  if (k < 0)
    return MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, "pelvis_ty", "posture: no coordinate pelvis_ty");
  mbs_posture_fall f = {mbs_osim_coordinate_info(m, k)->qindex, 0, NAN};
  f.level = fall_fraction * mbs_state_q(st)[f.qindex];
  mbs_event ev = mbs_posture_fall_event(&f);
  mbs_simulation_options so;
  mbs_simulation_options_default(&so);
  so.integ.accuracy = accuracy;
  so.report_interval = 0;
  const int rc = mbs_simulate(sys, st, duration, &so, &ev, 1, NULL, NULL, NULL);
  if (rc) {
    *err = *mbs_state_error(st);
    return rc;
  }
  *T = isnan(f.time) ? duration : f.time;
  return MBS_OK;
}

int mbs_posture_quiet_standing(const mbs_osim_model* m, mbs_state* st,
                               const mbs_posture_options* o, mbs_posture_result* r,
                               mbs_error* err) {
  unsigned char* skip = mbs_posture_subject_skip(mbs_osim_system(m));
  const int rc = skip ? quiet_standing(m, st, o, r, skip, err)
                      : MBS_FAIL(err, MBS_ERR_NO_MEMORY, "posture", "out of memory");
  free(skip);
  return rc;
}
