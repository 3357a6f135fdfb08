// OpenSim's Actuation analysis (analyze.h): every actuator's force, speed and power.
//   files   <tool>_<name>_force.sto ("ActuatorForces"), _speed.sto ("ActuatorSpeeds"),
//           _power.sto ("ActuatorPowers"); columns time and the actuators in ForceSet order
// As OpenSim 4's Actuation::record at Stage Dynamics: the actuation (optimal force x control
// for coordinate, point, torque and path actuators; the tendon force of muscles), the speed and
// the power of include/mbs/force.h's mbs_get_actuator_speed. Actuators that do not apply force
// (appliesForce false) are left out of the model, so out of the columns, as OpenSim leaves them
// out; a model without actuators gets a warning and no files (OpenSim cancels the analysis so).
// The values are not converted to degrees (OpenSim's Actuation ignores in_degrees).
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "mbs/mbs.h"

typedef struct act_data {
  int n;
  int* force;  // the actuators' force indices
  int tf, ts, tp;
} act_data;

static void act_destroy(void* data) {
  act_data* d = data;
  if (!d) return;
  free(d->force);
  free(d);
}

static int is_actuator(const char* kind) {
  static const char* const kinds[] = {"coordinate_actuator", "activation_coordinate_actuator",
                                      "point_actuator",      "torque_actuator",
                                      "path_actuator",       "muscle"};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    if (!strcmp(kind, kinds[i])) return 1;
  return 0;
}

static int act_create(const mbs_analyze_context* c, mbs_analysis* a, void** data) {
  act_data* d = calloc(1, sizeof(*d));
  *data = d;
  if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
  const mbs_system* sys = c->sys;
  const int nf = mbs_system_nforce(sys);
  d->force = malloc(((size_t)nf + 1) * sizeof(int));
  const char** labels = malloc(((size_t)nf + 1) * sizeof(char*));
  if (!d->force || !labels) {
    free(labels);
    return mbs_analysis_fail(c, a, NULL, "out of memory");
  }
  for (int f = 0; f < nf; f++)
    if (is_actuator(mbs_force_kind(sys, f))) {
      labels[d->n] = mbs_force_name(sys, f);
      d->force[d->n++] = f;
    }
  if (d->n == 0) {  // OpenSim cancels it so
    mbs_analysis_warn(c, a, NULL, "model '%s' has no actuators; nothing to record or write",
                      mbs_osim_name(c->model));
    free(labels);
    return 0;
  }
  static const char desc[] =
      "\nThis file contains either the forces, speeds, or powers developed\nby the actuators of "
      "a model during a simulation.\n\nAn actuator force is a generalized force, meaning that it "
      "can be either a force (N) or a torque (Nm).\n\nAn actuator speed is the rate at which an "
      "actuator shortens. Depending on the actuator,\na speed can be either a translational "
      "speed (m/s) or an angular speed (deg/s or rad/s).\n\nAn actuator power (Watts) is the "
      "rate at which an actuator does work.  Positive power means\nthat the actuator is "
      "delivering energy to the model; negative power means that the actuator\nis absorbing "
      "energy from the model.\n\nUnits are S.I. units (second, meters, Newtons, ...)\nIf the "
      "header above contains a line with 'inDegrees', this indicates whether rotational values "
      "are in degrees (yes) or radians (no).\n\n";
  int rc = 0;
  if ((d->tf = mbs_analysis_add_table(c, a, "force", "ActuatorForces", desc, 0, d->n, labels)) < 0 ||
      (d->ts = mbs_analysis_add_table(c, a, "speed", "ActuatorSpeeds", desc, 0, d->n, labels)) < 0 ||
      (d->tp = mbs_analysis_add_table(c, a, "power", "ActuatorPowers", desc, 0, d->n, labels)) < 0)
    rc = 1;
  free(labels);
  return rc;
}

static int act_record(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  act_data* d = data;
  const mbs_system* sys = c->sys;
  if (d->n == 0) return 0;
  if (mbs_realize_dynamics(sys, st))
    return mbs_analysis_fail(c, a, NULL, "forces at t = %.9g s: %s", mbs_state_time(st),
                             mbs_state_error(st)->message);
  double* F = mbs_analysis_row(a, d->tf);
  double* S = mbs_analysis_row(a, d->ts);
  double* P = mbs_analysis_row(a, d->tp);
  for (int i = 0; i < d->n; i++) {
    const int f = d->force[i];
    int rc;
    if (!strcmp(mbs_force_kind(sys, f), "muscle")) {
      mbs_muscle_report r;
      rc = mbs_get_muscle_report(sys, st, f, &r);
      F[i] = r.tendon_force;
    } else {
      rc = mbs_get_actuator_tension(sys, st, f, &F[i]);
    }
    if (rc || (rc = mbs_get_actuator_speed(sys, st, f, &S[i], &P[i])))
      return mbs_analysis_fail(c, a, NULL, "actuator '%s' at t = %.9g s: %s",
                               mbs_force_name(sys, f), mbs_state_time(st),
                               mbs_state_error(st)->message);
  }
  return 0;
}

const mbs_analysis_type mbs_analysis_actuation = {
    "Actuation", "actuators' forces, speeds and powers (_force, _speed, _power)", act_create,
    NULL, act_record, NULL, act_destroy};
