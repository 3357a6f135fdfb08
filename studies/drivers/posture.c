// The posture perturbation study (the OpenSim paper's §5 platform experiment): a full factorial
// grid over joint mode, knee flexion, platform direction and displacement (its own four axes)
// and any discrete parameters of the spec; each grid point is put into quiet standing
// (studies/posture.h) before the platform moves, the fall is an event (the pelvis below a
// fraction of its standing height), and the time to fall, the stability index, the
// quiet-standing posture and its holding torques are the per-sample results. When the study is
// complete, the grid's table is added to the file as /posture (include/mbs/posture_table.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine.h"
#include "../human_model.h"
#include "../posture.h"
#include "mbs/posture_adapt.h"
#include "mbs/posture_table.h"

// the grid's axes (the first four parameters) and the per-sample results
enum { PA_MODE = 0, PA_KNEE, PA_DIRECTION, PA_MAGNITUDE, PA_N };
static const char* const axis_names[PA_N] = {"posture/mode", "posture/knee_flexion",
                                             "posture/direction", "posture/magnitude"};
static const char* const axis_units[PA_N] = {"1 (0 free, 1 locked, 2 feedback, 3 muscles)",
                                             "deg", "deg", "m"};
enum {
  PS_T = 0, PS_SI, PS_HIP, PS_ANKLE, PS_PELVIS, PS_RESIDUAL,
  PS_TORQUE,  // the holding torques of PS_NTORQUE coordinates (torque_joints)
  PS_NTORQUE = 4,
  PS_N = PS_TORQUE + PS_NTORQUE
};
static const char* const result_names[PS_N] = {
    "time_to_fall", "stability_index", "hip_flexion", "ankle_angle", "pelvis_height",
    "equilibrium_residual", "torque_lumbar_extension", "torque_hip_flexion_r",
    "torque_knee_angle_r", "torque_ankle_angle_r"};
static const char* const result_units[PS_N] = {"s", "1", "deg", "deg", "m", "N or N m",
                                               "N m", "N m", "N m", "N m"};
// their indices in mbs_posture_joint_names (and mbs_posture_result.torque)
static const int torque_joints[PS_NTORQUE] = {0, 3, 6, 7};

typedef struct posture_driver {
  const mbs_spec_posture* po;
  int pelvis_ty;            // q index
} posture_driver;

// per thread: the fall event's data
typedef struct posture_scratch {
  mbs_posture_fall fall;
} posture_scratch;

static int posture_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  posture_driver* p = calloc(1, sizeof(*p));
  if (!p) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  p->po = spec->posture;
  d->self = p;
  return MBS_OK;
}

// the model on the platform: mbstudy's own human, or the given model put on it
static int posture_load_model(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  const mbs_study_spec* sp = P->spec;
  const mbs_spec_posture* po = ((posture_driver*)d->self)->po;
  mbs_osim_options o = {.external_loads = sp->external_loads};
  int feedback = 0;  // the feedback controllers, only where a feedback mode is run
  for (int k = 0; k < po->nmode; k++)
    feedback = feedback || po->mode[k] == MBS_JOINTS_FEEDBACK || po->mode[k] == MBS_JOINTS_MUSCLES;
  if (feedback) o.extend = mbs_posture_add_feedback;
  const mbs_osim_options adapt_o = {.extend = o.extend};
  mbs_error e;
  uint64_t h = MBS_FNV_OFFSET;
  if (!sp->has_simulation)
    return mbs_plan_fail(err, MBS_ERR_PARSE, sp, 1, "simulation: missing (required)");
  mbs_human_params hp;
  mbs_human_params_default(&hp);
  hp.height = po->height;
  hp.mass = po->mass;
  hp.lock_joints = 1;
  hp.platform.platform_duration = po->perturbation_duration;
  hp.platform.platform_profile =
      po->profile ? (mbs_platform_profile)mbs_platform_profile_from_name(po->profile)
                  : MBS_PLATFORM_SMOOTH_STEP;
  mbs_platform_params* pl = &hp.platform;
  double* const over[7] = {&pl->sphere_radius,     &pl->contact_stiffness,
                           &pl->contact_dissipation, &pl->static_friction,
                           &pl->dynamic_friction,  &pl->viscous_friction,
                           &pl->transition_velocity};
  const double given[7] = {po->sphere_radius,   po->stiffness,        po->dissipation,
                           po->static_friction, po->dynamic_friction, po->viscous_friction,
                           po->transition_velocity};
  for (int k = 0; k < 7; k++)
    if (!isnan(given[k])) *over[k] = given[k];
  if (sp->model_path) {
    mbs_posture_adapt_options ao;
    mbs_posture_adapt_options_default(&ao);
    ao.contact = hp.platform;
    int nj = 0;
    while (mbs_posture_joint_names[nj]) nj++;
    ao.held_required = mbs_posture_joint_names;
    ao.nrequired = MBS_POSTURE_REQUIRED_JOINTS;
    ao.held_optional = mbs_posture_joint_names + MBS_POSTURE_REQUIRED_JOINTS;
    ao.noptional = nj - MBS_POSTURE_REQUIRED_JOINTS;
    if (po->feet[0]) ao.feet[0] = po->feet[0], ao.feet[1] = po->feet[1];
    if (po->toes[0]) ao.toes[0] = po->toes[0], ao.toes[1] = po->toes[1];
    ao.foot_length = po->foot_length;
    ao.sole = po->sole;
    ao.remove_muscles = po->remove_muscles;
    ao.osim = &adapt_o;
    P->model_document = mbs_posture_adapt_file(sp->model_path, &ao, &e);
    if (P->model_document)
      P->om = mbs_osim_parse(P->model_document, strlen(P->model_document), sp->model_path,
                             &adapt_o, &e);
    int ok;
    h = mbs_file_hash(sp->model_path, &ok);
  } else if (!strcmp(sp->model, "human")) {
    char* text = mbs_human_model_osim(&hp);
    if (!text)
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, po->line,
                           "posture: cannot build the human of height %g m and mass %g kg with "
                           "these contact parameters", po->height, po->mass);
    P->om = mbs_osim_parse(text, strlen(text), "human", &o, &e);
    h = mbs_fnv1a(h, text, strlen(text));
    P->model_document = text;
  } else {
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, po->line,
                         "posture: model '%s' is neither 'human' (mbstudy's own) nor an .osim "
                         "file", sp->model);
  }
  if (!P->om) return mbs_error_set(err, e.code, "mbs_study_run", 0, e.component, "%s", e.message);
  P->sys = mbs_osim_system(P->om);
  P->fingerprint = mbs_fnv1a(h, sp->text, strlen(sp->text));
  return MBS_OK;
}

static int posture_axes(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  const mbs_spec_posture* po = ((posture_driver*)d->self)->po;
  const double modes[4] = {po->mode[0], po->mode[1], po->mode[2], po->mode[3]};
  const double* src[PA_N] = {modes, po->knee_flexion, po->direction, po->magnitude};
  const int n[PA_N] = {po->nmode, po->nknee, po->ndirection, po->nmagnitude};
  for (int a = 0; a < PA_N; a++) {
    const int rc = mbs_plan_add_axis(P, axis_names[a], axis_units[a], src[a], n[a], err);
    if (rc) return rc;
  }
  return MBS_OK;
}

static int posture_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  posture_driver* pd = d->self;
  const mbs_spec_posture* po = pd->po;
  const mbs_study_spec* sp = P->spec;
  const int k = mbs_osim_find_coordinate(P->om, "pelvis_ty");
  if (k < 0)
    return mbs_plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, po->line,
                         "posture: the model has no coordinate pelvis_ty (the fall criterion)");
  pd->pelvis_ty = mbs_osim_coordinate_info(P->om, k)->qindex;
  for (int i = P->naxes; i < P->np; i++) {
    const mbs_param_plan* q = &P->par[i];
    if (q->kind == MBS_PK_COORD_VALUE || q->kind == MBS_PK_COORD_SPEED)
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, q->spec->line,
                           "parameters: '%s': a posture study sets the coordinates itself (quiet "
                           "standing)", q->spec->path);
    int platform = q->kind == MBS_PK_SYSTEM && !strncmp(q->spec->path, "/functions/platform_t", 21);
    for (int k = 0; q->kind == MBS_PK_SYSTEM_SET && k < q->nlinked; k++)
      for (int s = 0; s < 3; s++) {
        static const char* const sc[3] = {"/functions/platform_tx/prescribed/scale",
                                           "/functions/platform_ty/prescribed/scale",
                                           "/functions/platform_tz/prescribed/scale"};
        const mbs_param_info* pi = mbs_system_find_param(P->sys, sc[s]);
        platform = platform || (pi && q->linked[k] == pi->index);
      }
    if (platform)
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, q->spec->line,
                           "parameters: '%s': the posture grid sets the platform's displacement "
                           "(posture.magnitude and posture.direction)", q->spec->path);
  }
  int rc;
  if (d->as_prep) {
    // another study type draws the samples: the posture is one point of the grid
    for (int a = 0; a < PA_N; a++)
      if (P->dist[a].nvalues != 1)
        return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, po->line,
                             "posture: in a %s study the posture is one point of the grid: give "
                             "one value for %s (it has %d)", P->study_type, axis_names[a] + 8,
                             P->dist[a].nvalues);
  } else {
    if ((rc = mbs_plan_require_distributions(P, "the posture grid takes its levels", err)))
      return rc;
    P->nsamples = mbs_plan_grid_count(P);
    if (P->nsamples != sp->count)
      return mbs_plan_fail(err, MBS_ERR_INTERNAL, sp, po->line, "posture: the grid has %ld "
                           "points, the spec says %ld", P->nsamples, sp->count);
  }
  // a posture study's `com` is the subject's: the platform it stands on is apparatus
  if (!(P->com_skip = mbs_posture_subject_skip(P->sys)))
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int j = 0; j < PS_N; j++)
    if ((rc = mbs_plan_add_result(P, result_names[j], result_units[j], err))) return rc;
  // the file says what the study did
  char duration[32], fall[200], pert[200];
  snprintf(duration, sizeof(duration), "%.17g", sp->duration);
  snprintf(fall, sizeof(fall), "the pelvis (its origin) below %g of its quiet-standing height",
           po->fall_fraction);
  snprintf(pert, sizeof(pert), "platform displaced by the magnitude along the direction over "
           "%g s, profile %s", po->perturbation_duration, po->profile ? po->profile : "smooth_step");
  if ((rc = mbs_plan_attribute(P, "simulated_duration", duration, err)) ||
      (rc = mbs_plan_attribute(P, "fall_criterion", fall, err)) ||
      (rc = mbs_plan_attribute(P, "perturbation", pert, err)))
    return rc;
  return MBS_OK;
}

static void posture_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  (void)d;
  mbs_plan_grid_point(P, index, params);
}

// quiet standing for the sample's knee flexion and joint mode, the platform's displacement set
// from magnitude and direction, and the fall as an event
static int posture_prepare(const mbs_driver* d, mbs_sample* r) {
  const posture_driver* pd = d->self;
  const mbs_spec_posture* po = pd->po;
  const mbs_plan* P = r->P;
  const mbs_system* sys = P->sys;
  mbs_state* st = r->st;
  const double deg = 3.14159265358979323846 / 180;
  const double mode = r->params[PA_MODE], knee = r->params[PA_KNEE];
  int rc = mbs_realize_instance(sys, st);
  // anterior is +x, right is +z (OpenSim's convention)
  static const char* const scale[3] = {"/functions/platform_tx/prescribed/scale",
                                       "/functions/platform_ty/prescribed/scale",
                                       "/functions/platform_tz/prescribed/scale"};
  double disp[3];
  mbs_posture_displacement(r->params[PA_MAGNITUDE], r->params[PA_DIRECTION], disp);
  for (int k = 0; k < 3 && rc == MBS_OK; k++)
    rc = mbs_state_set_param(sys, st, scale[k], 0, disp[k]);
  if (rc) return rc;
  mbs_posture_options o;
  mbs_posture_options_default(&o);
  o.knee_flexion = knee * deg;
  o.trunk_lean = (po->trunk_lean + po->trunk_lean_ratio * knee) * deg;
  o.mode = mode > 2.5   ? MBS_JOINTS_MUSCLES
           : mode > 1.5 ? MBS_JOINTS_FEEDBACK
           : mode > 0.5 ? MBS_JOINTS_LOCKED
                        : MBS_JOINTS_FREE;
  o.com_ahead = po->com_ahead;
  o.accuracy = P->spec->accuracy;
  mbs_posture_result pr;
  mbs_error e;
  mbs_error_clear(&e);
  rc = mbs_posture_quiet_standing(P->om, st, &o, &pr, &e);
  if (rc) {
    mbs_error* se = (mbs_error*)mbs_state_error(st);
    if (e.code) *se = e;
    return rc;
  }
  r->results[PS_HIP] = pr.hip_flexion / deg;
  r->results[PS_ANKLE] = pr.ankle_angle / deg;
  r->results[PS_PELVIS] = pr.pelvis_height;
  r->results[PS_RESIDUAL] = pr.residual;
  for (int k = 0; k < PS_NTORQUE; k++) r->results[PS_TORQUE + k] = pr.torque[torque_joints[k]];
  // the fall: the pelvis below its fraction of the standing height
  posture_scratch* s = r->scratch;
  s->fall = (mbs_posture_fall){pd->pelvis_ty, po->fall_fraction * pr.pelvis_height, NAN};
  r->events[r->nevents++] = mbs_posture_fall_event(&s->fall);
  return MBS_OK;
}

// T: the time of the fall, or the simulated duration when the model stays up
static void posture_results(const mbs_driver* d, mbs_sample* r, int status) {
  (void)d;
  if (status != MBS_OK) return;
  const posture_scratch* s = r->scratch;
  const double T = isnan(s->fall.time) ? r->duration : s->fall.time;
  r->results[PS_T] = T;
  r->results[PS_SI] = 1 - exp(-T * T);
}

// the grid's table as /posture
static int posture_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  (void)d;
  (void)P;
  mbs_posture_table* t = NULL;
  const int rc = mbs_posture_table_read(path, 1, &t, err);
  mbs_posture_table_free(t);
  return rc;
}

static void posture_destroy(mbs_driver* d) {
  free(d->self);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_posture = {
    .name = "posture",
    .scratch = sizeof(posture_scratch),
    .create = posture_create,
    .load_model = posture_load_model,
    .axes = posture_axes,
    .plan = posture_plan,
    .point = posture_point,
    .prepare = posture_prepare,
    .results = posture_results,
    .finish = posture_finish,
    .destroy = posture_destroy,
};
