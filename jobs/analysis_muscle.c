// OpenSim's MuscleAnalysis (analyze.h): lengths, velocities, forces and powers of muscles, and
// their moment arms and moments about coordinates.
//   properties muscle_list: names or "all" (default); moment_arm_coordinate_list: names or
//              "all" (default); compute_moments (default true)
//   files      <tool>_<name>_<quantity>.sto, columns time and the muscles (ForceSet order), for
//              quantity in PennationAngle, Length, FiberLength, NormalizedFiberLength,
//              TendonLength, FiberVelocity, NormFiberVelocity, PennationAngularVelocity,
//              TendonForce, FiberForce, ActiveFiberForce, PassiveFiberForce,
//              ActiveFiberForceAlongTendon, PassiveFiberForceAlongTendon, FiberActivePower,
//              FiberPassivePower, TendonPower, MuscleActuatorPower; with compute_moments also
//              MomentArm_<coordinate> and Moment_<coordinate> for each coordinate
// As OpenSim 4's MuscleAnalysis::record: each muscle's model evaluated at the State
// (mbs_get_muscle_output): Length is the path's length; the passive fiber force includes the
// fiber's damping (Millard's damped model); powers are -force x velocity of the fiber (active,
// passive), of the tendon, and of the whole musculotendon (MuscleActuatorPower); angles in
// radians whatever in_degrees says (as OpenSim's). The moment arm about a coordinate is
// OpenSim's MomentArmSolver's: the generalized forces of a unit tension along the path
// (mbs_calc_path_moment_arms) weighted by the speeds that move the coordinate at unit speed
// while every constraint holds and the other speeds are as small as they can be (just the
// coordinate's own generalized force when the model has no constraints); the moment is the
// moment arm times the tendon force. Muscles named in muscle_list that are not muscles of the
// model and coordinates not in the model are left out with a warning.
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze.h"
#include "mbs/constraint.h"
#include "mbs/mbs.h"
#include "mbs/path.h"

enum {
  Q_PENNATION = 0, Q_LENGTH, Q_FIBER_LENGTH, Q_NORM_FIBER_LENGTH, Q_TENDON_LENGTH,
  Q_FIBER_VELOCITY, Q_NORM_FIBER_VELOCITY, Q_PENNATION_VELOCITY, Q_TENDON_FORCE, Q_FIBER_FORCE,
  Q_ACTIVE_FORCE, Q_PASSIVE_FORCE, Q_ACTIVE_ALONG, Q_PASSIVE_ALONG, Q_ACTIVE_POWER,
  Q_PASSIVE_POWER, Q_TENDON_POWER, Q_MUSCLE_POWER, Q_COUNT
};
static const char* const q_names[Q_COUNT] = {
    "PennationAngle", "Length", "FiberLength", "NormalizedFiberLength", "TendonLength",
    "FiberVelocity", "NormFiberVelocity", "PennationAngularVelocity", "TendonForce",
    "FiberForce", "ActiveFiberForce", "PassiveFiberForce", "ActiveFiberForceAlongTendon",
    "PassiveFiberForceAlongTendon", "FiberActivePower", "FiberPassivePower", "TendonPower",
    "MuscleActuatorPower"};

typedef struct ma_data {
  int n;            // muscles
  int* force;       // their force indices
  int* path;        // their paths
  int nq;           // coordinates for moment arms (0 without compute_moments)
  int* coord;       // model indices
  int table[Q_COUNT];
  int* t_arm;       // per coordinate: moment arm and moment tables
  int* t_moment;
  int nu, cons;     // speeds; whether the model has constraints
  double* work;     // r (nu), then each coordinate's coupling (nq x nu)
  double* lsq;      // the coupling's least squares: G, A (m x nu each), b, singular values
  size_t lsq_size;
  double* force_now;  // tendon forces of the row (n)
} ma_data;

static void ma_destroy(void* data) {
  ma_data* d = data;
  if (!d) return;
  free(d->force);
  free(d->path);
  free(d->coord);
  free(d->t_arm);
  free(d->t_moment);
  free(d->work);
  free(d->lsq);
  free(d->force_now);
  free(d);
}

static int ma_create(const mbs_analyze_context* c, mbs_analysis* a, void** data) {
  ma_data* d = calloc(1, sizeof(*d));
  *data = d;
  if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
  const mbs_system* sys = c->sys;
  const mbs_osim_model* m = c->model;
  mbs_setup_node* node = mbs_analysis_node(a);
  mbs_error err;
  mbs_error_clear(&err);
  int moments = 1, rc = 0;
  if (mbs_setup_bool(c->setup, node, "compute_moments", 1, &moments, &err))
    return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  char **mw = NULL, *mbuf = NULL, **cw = NULL, *cbuf = NULL;
  int nmw = 0, ncw = 0;
  const char** labels = NULL;
  if (mbs_analysis_words(c->setup, node, "muscle_list", &mw, &mbuf, &nmw) ||
      mbs_analysis_words(c->setup, node, "moment_arm_coordinate_list", &cw, &cbuf, &ncw)) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  const int nf = mbs_system_nforce(sys), nc = mbs_osim_ncoordinate(m);
  d->force = malloc(((size_t)nf + (size_t)nmw + 1) * sizeof(int));
  d->path = malloc(((size_t)nf + (size_t)nmw + 1) * sizeof(int));
  d->coord = malloc(((size_t)nc + (size_t)ncw + 1) * sizeof(int));
  labels = malloc(((size_t)nf + (size_t)nmw + 1) * sizeof(char*));
  if (!d->force || !d->path || !d->coord || !labels) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  // the muscles: "all" (alone) or the names, in the list's order
  mbs_setup_node* ml = mbs_setup_child(c->setup, node, "muscle_list");
  if (nmw == 0 || (nmw == 1 && !strcmp(mw[0], "all"))) {
    for (int f = 0; f < nf; f++)
      if (!strcmp(mbs_force_kind(sys, f), "muscle")) d->force[d->n++] = f;
  } else {
    for (int i = 0; i < nmw; i++) {
      const int f = mbs_force_find(sys, mw[i]);
      if (f < 0 || strcmp(mbs_force_kind(sys, f), "muscle")) {
        mbs_analysis_warn(c, a, ml, "muscle_list: '%s' is not a muscle of model '%s'; left out, "
                          "as OpenSim leaves it out", mw[i], mbs_osim_name(m));
        continue;
      }
      d->force[d->n++] = f;
    }
  }
  if (d->n == 0) mbs_analysis_warn(c, a, ml, "no muscles to analyze");
  for (int i = 0; i < d->n; i++) {
    d->path[i] = mbs_force_path(sys, d->force[i]);
    labels[i] = mbs_force_name(sys, d->force[i]);
  }
  // the coordinates: "all" (first word, any case) or the names
  if (moments) {
    mbs_setup_node* cl = mbs_setup_child(c->setup, node, "moment_arm_coordinate_list");
    if (ncw == 0 || !strcasecmp(cw[0], "all")) {
      for (int k = 0; k < nc; k++) d->coord[d->nq++] = k;
    } else {
      for (int i = 0; i < ncw; i++) {
        const int k = mbs_osim_find_coordinate(m, cw[i]);
        if (k < 0)
          mbs_analysis_warn(c, a, cl, "moment_arm_coordinate_list: coordinate '%s' is not part "
                            "of model '%s'; left out, as OpenSim leaves it out", cw[i],
                            mbs_osim_name(m));
        else
          d->coord[d->nq++] = k;
      }
    }
  }
  static const char desc[] =
      "\nThis analysis gathers basic information about muscles during a simulation (e.g., "
      "forces, tendon lengths, moment arms, etc).\nUnits are S.I. units (second, meters, "
      "Newtons, ...)\nIf the header above contains a line with 'inDegrees', this indicates "
      "whether rotational values are in degrees (yes) or radians (no).\n\n";
  d->t_arm = malloc(((size_t)d->nq + 1) * sizeof(int));
  d->t_moment = malloc(((size_t)d->nq + 1) * sizeof(int));
  if (!d->t_arm || !d->t_moment) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  for (int i = 0; i < d->nq; i++) {
    char sfx[600];
    snprintf(sfx, sizeof(sfx), "MomentArm_%s", mbs_osim_coordinate_info(m, d->coord[i])->name);
    if ((d->t_arm[i] = mbs_analysis_add_table(c, a, sfx, sfx, desc, 0, d->n, labels)) < 0) {
      rc = 1;
      goto done;
    }
  }
  for (int i = 0; i < d->nq; i++) {
    char sfx[600];
    snprintf(sfx, sizeof(sfx), "Moment_%s", mbs_osim_coordinate_info(m, d->coord[i])->name);
    if ((d->t_moment[i] = mbs_analysis_add_table(c, a, sfx, sfx, desc, 0, d->n, labels)) < 0) {
      rc = 1;
      goto done;
    }
  }
  for (int k = 0; k < Q_COUNT; k++)
    if ((d->table[k] = mbs_analysis_add_table(c, a, q_names[k], q_names[k], desc, 0, d->n,
                                              labels)) < 0) {
      rc = 1;
      goto done;
    }
  d->nu = mbs_system_nu(sys);
  d->cons = mbs_system_nconstraint(sys) > 0;
  d->work = malloc(((size_t)d->nu * (1 + (size_t)d->nq) + 1) * sizeof(double));
  d->force_now = malloc(((size_t)d->n + 1) * sizeof(double));
  if (!d->work || !d->force_now) rc = mbs_analysis_fail(c, a, NULL, "out of memory");
done:
  free(labels);
  free(mw);
  free(mbuf);
  free(cw);
  free(cbuf);
  return rc;
}

static int ma_begin(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  (void)st;
  ma_data* d = data;
  for (int i = 0; i < d->nq; i++) {
    const mbs_osim_coordinate* q = mbs_osim_coordinate_info(c->model, d->coord[i]);
    if (q->locked || q->prescribed)
      mbs_analysis_warn(c, a, NULL, "coordinate %s is %s and can't be varied; its moment arms "
                        "are the generalized forces on it alone", q->name,
                        q->locked ? "locked" : "prescribed");
  }
  return 0;
}

// The speeds that move coordinate k at unit speed with every constraint holding and the other
// speeds least (minimum-norm least squares): coupling (nu). Without constraints (or for a
// locked or prescribed coordinate) the unit vector of k's speed.
static int coupling(const mbs_analyze_context* c, ma_data* d, mbs_state* st,
                    const mbs_osim_coordinate* q, double* out) {
  const int nu = d->nu, ui = q->uindex;
  memset(out, 0, (size_t)nu * sizeof(double));
  out[ui] = 1;
  if (!d->cons || q->locked || q->prescribed) return 0;
  const int m = mbs_constraint_nequation(c->sys, st);
  if (m <= 0 || nu < 2) return 0;
  const size_t need = 2 * (size_t)m * nu + 2 * ((size_t)m + nu) + 2;
  if (need > d->lsq_size) {  // (grows once, to the model's number of equations)
    double* p = realloc(d->lsq, need * sizeof(double));
    if (!p) return -1;
    d->lsq = p;
    d->lsq_size = need;
  }
  double* G = d->lsq;             // m x nu
  double* A = G + (size_t)m * nu; // m x (nu - 1): G without column ui
  double* b = A + (size_t)m * nu; // max(m, nu): right-hand side, then the solution
  if (mbs_calc_constraint_jacobian(c->sys, st, G)) return -1;
  const int n1 = nu - 1, ldb = 1;
  for (int r = 0; r < m; r++) {
    for (int j = 0, k = 0; j < nu; j++)
      if (j != ui) A[(size_t)r * n1 + k++] = G[(size_t)r * nu + j];
    b[r] = -G[(size_t)r * nu + ui];
  }
  for (int r = m; r < nu; r++) b[r] = 0;
  // does the coordinate take part in any constraint? (else its unit vector already holds them)
  int involved = 0;
  for (int r = 0; r < m && !involved; r++) involved = b[r] != 0;
  if (!involved) return 0;
  double* s = b + (m > nu ? m : nu);  // singular values (min(m, n1))
  lapack_int rank = 0;
  const lapack_int info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, m, n1, 1, A, n1, b, ldb, s, 1e-12,
                                         &rank);
  if (info != 0) return -1;
  for (int j = 0, k = 0; j < nu; j++)
    if (j != ui) out[j] = b[k++];
  return 0;
}

static int ma_record(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  ma_data* d = data;
  const mbs_system* sys = c->sys;
  const double t = mbs_state_time(st);
  if (mbs_realize_dynamics(sys, st))
    return mbs_analysis_fail(c, a, NULL, "muscle forces at t = %.9g s: %s", t,
                             mbs_state_error(st)->message);
  double* row[Q_COUNT];
  for (int k = 0; k < Q_COUNT; k++) row[k] = mbs_analysis_row(a, d->table[k]);
  for (int i = 0; i < d->n; i++) {
    mbs_muscle_output o;
    if (mbs_get_muscle_output(sys, st, d->force[i], &o)) {  // (the row stays NaN)
      mbs_analysis_warn(c, a, NULL, "unable to evaluate muscle '%s' at t = %.9g s: %s",
                        mbs_force_name(sys, d->force[i]), t, mbs_state_error(st)->message);
      d->force_now[i] = NAN;
      continue;
    }
    mbs_muscle_report rep;
    mbs_get_muscle_report(sys, st, d->force[i], &rep);
    const double passive = o.passive_fiber_force + o.damping_fiber_force;
    const double length = rep.path_length;
    row[Q_PENNATION][i] = o.pennation_angle;
    row[Q_LENGTH][i] = length;
    row[Q_FIBER_LENGTH][i] = o.fiber_length;
    row[Q_NORM_FIBER_LENGTH][i] = o.normalized_fiber_length;
    row[Q_TENDON_LENGTH][i] = o.tendon_length;
    row[Q_FIBER_VELOCITY][i] = o.fiber_velocity;
    row[Q_NORM_FIBER_VELOCITY][i] = o.normalized_fiber_velocity;
    row[Q_PENNATION_VELOCITY][i] = o.pennation_angular_velocity;
    row[Q_TENDON_FORCE][i] = o.tendon_force;
    row[Q_FIBER_FORCE][i] = o.fiber_force;
    row[Q_ACTIVE_FORCE][i] = o.active_fiber_force;
    row[Q_PASSIVE_FORCE][i] = passive;
    row[Q_ACTIVE_ALONG][i] = o.active_fiber_force * o.cos_pennation;
    row[Q_PASSIVE_ALONG][i] = passive * o.cos_pennation;
    row[Q_ACTIVE_POWER][i] = -o.active_fiber_force * o.fiber_velocity;
    row[Q_PASSIVE_POWER][i] = -passive * o.fiber_velocity;
    row[Q_TENDON_POWER][i] = -o.tendon_force * o.tendon_velocity;
    row[Q_MUSCLE_POWER][i] = o.muscle_power;
    d->force_now[i] = o.tendon_force;
  }
  if (d->nq == 0) return 0;
  // each coordinate's coupling, then each muscle's generalized forces of a unit tension
  double* r = d->work;
  for (int k = 0; k < d->nq; k++) {
    const mbs_osim_coordinate* q = mbs_osim_coordinate_info(c->model, d->coord[k]);
    if (coupling(c, d, st, q, d->work + (size_t)(k + 1) * d->nu))
      return mbs_analysis_fail(c, a, NULL, "moment arms about %s at t = %.9g s: the speeds that "
                               "keep the constraints: %s", q->name, t,
                               mbs_state_error(st)->message[0] ? mbs_state_error(st)->message
                                                               : "least squares failed");
  }
  for (int i = 0; i < d->n; i++) {
    if (mbs_calc_path_moment_arms(sys, st, d->path[i], r))
      return mbs_analysis_fail(c, a, NULL, "moment arms of '%s' at t = %.9g s: %s",
                               mbs_force_name(sys, d->force[i]), t, mbs_state_error(st)->message);
    for (int k = 0; k < d->nq; k++) {
      const double* cpl = d->work + (size_t)(k + 1) * d->nu;
      double s = 0;
      for (int j = 0; j < d->nu; j++) s += cpl[j] * r[j];
      mbs_analysis_row(a, d->t_arm[k])[i] = s;
      mbs_analysis_row(a, d->t_moment[k])[i] = s * d->force_now[i];
    }
  }
  return 0;
}

const mbs_analysis_type mbs_analysis_muscle = {
    "MuscleAnalysis", "muscles' lengths, velocities, forces, powers, moment arms and moments",
    ma_create, ma_begin, ma_record, NULL, ma_destroy};
