// Running a study (include/mbs/study.h): model and parameter resolution, one sample's
// simulation and outputs, the journals, dynamic scheduling over MPI ranks and OpenMP threads,
// resume, and the final merge into the HDF5 result file.
#include "mbs/study.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "builtin_models.h"
#include "human_model.h"
#include "journal.h"
#include "posture.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/posture_adapt.h"
#include "mbs/sampler.h"
#include "mbs/store.h"
#include "mbs/version.h"

//---------------------------------- signals ----------------------------------------------------

static volatile sig_atomic_t g_stop = 0;

static void on_signal(int sig) {
  g_stop = sig;
}

void mbs_study_install_signal_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}

void mbs_study_options_default(mbs_study_options* o) {
  memset(o, 0, sizeof(*o));
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

//---------------------------------- the study's plan -------------------------------------------

enum { P_SYSTEM = 0, P_COORD_VALUE, P_COORD_SPEED, P_POSTURE };

// a posture study's grid axes (the first four parameters) and its per-sample results (the last
// scalars)
enum { PA_MODE = 0, PA_KNEE, PA_DIRECTION, PA_MAGNITUDE, PA_N };
static const char* const posture_axis_names[PA_N] = {"posture/mode", "posture/knee_flexion",
                                                     "posture/direction", "posture/magnitude"};
static const char* const posture_axis_units[PA_N] = {"1 (0 free, 1 locked)", "deg", "deg", "m"};
enum {
  PS_T = 0, PS_SI, PS_HIP, PS_ANKLE, PS_PELVIS, PS_RESIDUAL,
  PS_TORQUE,  // the holding torques of PS_NTORQUE coordinates (posture_torque_joints)
  PS_NTORQUE = 4,
  PS_N = PS_TORQUE + PS_NTORQUE
};
static const char* const posture_scalar_names[PS_N] = {
    "time_to_fall", "stability_index", "hip_flexion", "ankle_angle", "pelvis_height",
    "equilibrium_residual", "torque_lumbar_extension", "torque_hip_flexion_r",
    "torque_knee_angle_r", "torque_ankle_angle_r"};
static const char* const posture_scalar_units[PS_N] = {"s", "1", "deg", "deg", "m", "N or N m",
                                                       "N m", "N m", "N m", "N m"};
// their indices in mbs_posture_joint_names (and mbs_posture_result.torque)
static const int posture_torque_joints[PS_NTORQUE] = {0, 3, 6, 7};

typedef struct param_plan {
  int kind;
  int index;          // parameter index, or model coordinate index
  double base;        // the model's value (for scale factors)
  int is_scale;       // the drawn value multiplies base
  char* name;         // as in the spec, with [k]
  const char* unit;
} param_plan;

enum { O_Q = 0, O_U, O_COM, O_BODY_POS, O_BODY_ORI, O_CONTACT, O_REACTION };

typedef struct quantity_plan {
  char* name;
  int kind, arg;      // arg: body, force or constraint index
  int ncomp;
  char** comps;
  const char* unit;
  long offset;        // first value of this quantity in a sample's trajectory buffer
  int hidden;         // computed for a scalar only: not stored as a trajectory
} quantity_plan;

typedef struct scalar_plan {
  const char* name;
  const char* unit;
  int quantity;       // index into quantities with the values, or -1 for an event time
  int comp;
  int at;             // mbs_spec_reduce
  int event;          // event index for event times
  int posture;        // PS_* for a posture study's result, else -1
  // for "final" of a quantity not recorded as a trajectory (a body or com not in outputs):
  int kind, arg;      // O_* and body index; kind -1 if from a quantity
} scalar_plan;

typedef struct event_plan {
  const mbs_spec_event* e;
  int body;           // height events
  int coord;          // coordinate events (model index)
} event_plan;

typedef struct study {
  const mbs_study_spec* spec;
  mbs_osim_model* om;
  const mbs_system* sys;
  uint64_t fingerprint;
  int np;
  param_plan* par;
  mbs_distribution* dist;
  int nquant;
  quantity_plan* quant;
  long frame_values;  // values per frame over all quantities
  int nframes;
  double* times;
  int nscal;
  scalar_plan* scal;
  int nevents;
  event_plan* ev;
  // a posture study
  int posture;
  double* posture_levels[PA_N];  // the grid's values (owned)
  unsigned char* com_skip;       // bodies left out of `com` (the platform), or NULL
  int pelvis_ty;                 // q index
  mbs_integrator_type integrator;
  char* parts;        // journal folder
  long nsamples;
  unsigned char* done;  // bitmap of samples completed in earlier runs
  long done_before, failed_before;
  // parallel
  int use_mpi, rank, nranks, nthreads;
  MPI_Win win;
  long* win_mem;      // rank 0: [next sample, samples done in this run]
  long local_next, local_done;
  int attempt;
  FILE* log;
} study;

static int plan_fail(mbs_error* err, int code, const mbs_study_spec* s, int line, const char* fm,
                     ...) __attribute__((format(printf, 5, 6)));
static int plan_fail(mbs_error* err, int code, const mbs_study_spec* s, int line, const char* fm,
                     ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fm);
  vsnprintf(msg, sizeof(msg), fm, ap);
  va_end(ap);
  const char* base = strrchr(s->path, '/');
  base = base ? base + 1 : s->path;
  if (line > 0)
    return mbs_error_set(err, code, "mbs_study_run", line, base, "%s:%d: %s", base, line, msg);
  return mbs_error_set(err, code, "mbs_study_run", 0, base, "%s: %s", base, msg);
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const unsigned char* p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static uint64_t file_hash(const char* path, int* ok) {
  FILE* f = fopen(path, "rb");
  uint64_t h = 14695981039346656037ULL;
  *ok = f != NULL;
  if (!f) return h;
  unsigned char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) h = fnv1a(h, buf, n);
  fclose(f);
  return h;
}

static int load_model(study* S, mbs_error* err) {
  const mbs_study_spec* sp = S->spec;
  mbs_osim_options o = {sp->external_loads};
  mbs_error e;
  uint64_t h = 14695981039346656037ULL;
  if (sp->posture) {
    // the model on the platform: mbstudy's own human, or the given model put on it
    const mbs_spec_posture* po = sp->posture;
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
    double* const over[7] = {&pl->sphere_radius,   &pl->contact_stiffness,
                             &pl->contact_dissipation, &pl->static_friction,
                             &pl->dynamic_friction, &pl->viscous_friction,
                             &pl->transition_velocity};
    const double given[7] = {po->sphere_radius, po->stiffness, po->dissipation,
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
      S->om = mbs_posture_adapt_read(sp->model_path, &ao, &e);
      int ok;
      h = file_hash(sp->model_path, &ok);
    } else if (!strcmp(sp->model, "human")) {
      char* text = mbs_human_model_osim(&hp);
      if (!text)
        return plan_fail(err, MBS_ERR_ARGUMENT, sp, po->line,
                         "posture: cannot build the human of height %g m and mass %g kg with "
                         "these contact parameters", po->height, po->mass);
      S->om = mbs_osim_parse(text, strlen(text), "human", &o, &e);
      h = fnv1a(h, text, strlen(text));
      free(text);
    } else {
      return plan_fail(err, MBS_ERR_ARGUMENT, sp, po->line,
                       "posture: model '%s' is neither 'human' (mbstudy's own) nor an .osim "
                       "file", sp->model);
    }
  } else if (sp->model_path) {
    S->om = mbs_osim_read_options(sp->model_path, &o, &e);
    int ok;
    h = file_hash(sp->model_path, &ok);
  } else {
    const char* text = mbs_builtin_model(sp->model);
    if (!text && !strcmp(sp->model, "human"))
      return plan_fail(err, MBS_ERR_ARGUMENT, sp, 0,
                       "model: 'human' (mbstudy's standing human) stands on the perturbation "
                       "platform of a posture study: add a posture: section (knee_flexion, "
                       "magnitude, ...)");
    if (!text) {
      char list[256] = "";
      for (int i = 0; i < mbs_builtin_model_count(); i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, mbs_builtin_model_name(i), sizeof(list) - strlen(list) - 1);
      }
      return plan_fail(err, MBS_ERR_ARGUMENT, sp, 0,
                       "model: '%s' is neither an .osim file nor a built-in model (%s)",
                       sp->model, list);
    }
    S->om = mbs_osim_parse(text, strlen(text), sp->model, &o, &e);
    h = fnv1a(h, text, strlen(text));
  }
  if (!S->om) return mbs_error_set(err, e.code, "mbs_study_run", 0, e.component, "%s", e.message);
  S->sys = mbs_osim_system(S->om);
  h = fnv1a(h, sp->text, strlen(sp->text));
  S->fingerprint = h;
  return MBS_OK;
}

// "/jointset/<joint>/<coordinate>/default_value" (or default_speed_value)
static int coordinate_param(const study* S, const char* path, int* kind) {
  const char* last = strrchr(path, '/');
  if (!last) return -1;
  if (!strcmp(last, "/default_value")) *kind = P_COORD_VALUE;
  else if (!strcmp(last, "/default_speed_value")) *kind = P_COORD_SPEED;
  else return -1;
  const char* start = path;
  const char* prev = last;
  while (prev > start && prev[-1] != '/') prev--;
  const size_t n = (size_t)(last - prev);
  char name[256];
  if (n == 0 || n >= sizeof(name)) return -1;
  memcpy(name, prev, n);
  name[n] = 0;
  return mbs_osim_find_coordinate(S->om, name);
}

// the interval holding a distribution's values
static void support(const mbs_distribution* d, double* lo, double* hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  switch (d->type) {
    case MBS_DIST_UNIFORM: *lo = d->a; *hi = d->b; break;
    case MBS_DIST_LOGNORMAL: *lo = 0; break;
    case MBS_DIST_TRUNCATED_NORMAL: *lo = d->lo; *hi = d->hi; break;
    case MBS_DIST_CONSTANT: *lo = *hi = d->a; break;
    case MBS_DIST_DISCRETE:
      *lo = INFINITY;
      *hi = -INFINITY;
      for (int i = 0; i < d->nvalues; i++) {
        *lo = fmin(*lo, d->values[i]);
        *hi = fmax(*hi, d->values[i]);
      }
      break;
    default: break;
  }
}

static int plan_posture_axes(study* S, mbs_error* err) {
  const mbs_spec_posture* po = S->spec->posture;
  const double* src[PA_N] = {NULL, po->knee_flexion, po->direction, po->magnitude};
  const int n[PA_N] = {po->nmode, po->nknee, po->ndirection, po->nmagnitude};
  for (int a = 0; a < PA_N; a++) {
    S->posture_levels[a] = malloc((size_t)n[a] * sizeof(double));
    if (!S->posture_levels[a]) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    for (int k = 0; k < n[a]; k++) S->posture_levels[a][k] = a == PA_MODE ? po->mode[k] : src[a][k];
    param_plan* q = &S->par[a];
    q->kind = P_POSTURE;
    q->index = a;
    q->name = mbs_format_string("%s", posture_axis_names[a]);
    q->unit = posture_axis_units[a];
    S->dist[a] = (mbs_distribution){.type = MBS_DIST_DISCRETE, .values = S->posture_levels[a],
                                    .nvalues = n[a]};
  }
  const int k = mbs_osim_find_coordinate(S->om, "pelvis_ty");
  if (k < 0)
    return plan_fail(err, MBS_ERR_UNKNOWN_NAME, S->spec, po->line,
                     "posture: the model has no coordinate pelvis_ty (the fall criterion)");
  S->pelvis_ty = mbs_osim_coordinate_info(S->om, k)->qindex;
  for (int i = 0; i < S->spec->nparams; i++) {
    int kind;
    if (coordinate_param(S, S->spec->params[i].path, &kind) >= 0)
      return plan_fail(err, MBS_ERR_ARGUMENT, S->spec, S->spec->params[i].line,
                       "parameters: '%s': a posture study sets the coordinates itself (quiet "
                       "standing)", S->spec->params[i].path);
  }
  return MBS_OK;
}

static int plan_params(study* S, mbs_error* err) {
  const mbs_study_spec* sp = S->spec;
  S->posture = sp->posture != NULL;
  const int first = S->posture ? PA_N : 0;
  S->np = sp->nparams + first;
  S->par = calloc((size_t)S->np + 1, sizeof(*S->par));
  S->dist = calloc((size_t)S->np + 1, sizeof(*S->dist));
  if (!S->par || !S->dist) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  if (S->posture) {
    const int rc = plan_posture_axes(S, err);
    if (rc) return rc;
  }
  for (int i = first; i < S->np; i++) {
    const mbs_spec_parameter* p = &sp->params[i - first];
    param_plan* q = &S->par[i];
    q->is_scale = p->is_scale;
    q->name = p->component ? mbs_format_string("%s[%d]", p->path, p->component)
                           : mbs_format_string("%s", p->path);
    S->dist[i] = p->dist;
    char what[300];
    snprintf(what, sizeof(what), "parameter '%s'", q->name ? q->name : p->path);
    mbs_error de;
    if (mbs_distribution_check(&p->dist, what, &de) != MBS_OK)
      return plan_fail(err, de.code, sp, p->line, "%s", de.message);
    const mbs_param_info* info = mbs_system_find_param(S->sys, p->path);
    if (info && S->posture && !strncmp(p->path, "/functions/platform_t", 21))
      return plan_fail(err, MBS_ERR_ARGUMENT, sp, p->line,
                       "parameters: '%s': the posture grid sets the platform's displacement "
                       "(posture.magnitude and posture.direction)", p->path);
    if (info) {
      if (p->component < 0 || p->component >= info->size)
        return plan_fail(err, MBS_ERR_ARGUMENT, sp, p->line,
                         "parameters: '%s' has %d component%s; [%d] is out of range", p->path,
                         info->size, info->size == 1 ? "" : "s", p->component);
      q->kind = P_SYSTEM;
      q->index = info->index + p->component;
      q->base = mbs_system_param_default(S->sys, q->index);
      q->unit = info->unit;
      // values outside the valid range will fail their samples: say so before the run
      double lo, hi;
      support(&p->dist, &lo, &hi);
      if (p->is_scale) {
        const double a = lo * q->base, b = hi * q->base;
        lo = fmin(a, b);
        hi = fmax(a, b);
      }
      if (S->rank == 0 && S->log && (lo < info->lower || hi > info->upper))
        fprintf(S->log, "mbstudy: warning: parameters: '%s' may be drawn outside its valid "
                "range (%g .. %g); those samples will fail\n", q->name, info->lower,
                info->upper);
      continue;
    }
    int kind;
    const int c = coordinate_param(S, p->path, &kind);
    if (c >= 0 && p->component == 0) {
      const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(S->om, c);
      q->kind = kind;
      q->index = c;
      q->base = kind == P_COORD_VALUE ? ci->default_value : ci->default_speed;
      const int rot = ci->motion == MBS_OSIM_ROTATIONAL;
      q->unit = kind == P_COORD_VALUE ? (rot ? "rad" : "m") : (rot ? "rad/s" : "m/s");
      continue;
    }
    // the closest known paths, to help
    char hint[600] = "";
    const char* slash = strrchr(p->path, '/');
    const size_t prefix = slash ? (size_t)(slash - p->path) : 0;
    int shown = 0;
    for (int b = 0; b < mbs_system_nparam_block(S->sys) && shown < 4; b++) {
      const char* bp = mbs_system_param_block(S->sys, b)->path;
      if (prefix && !strncmp(bp, p->path, prefix)) {
        strncat(hint, shown ? ", " : "; the model has e.g. ", sizeof(hint) - strlen(hint) - 1);
        strncat(hint, bp, sizeof(hint) - strlen(hint) - 1);
        shown++;
      }
    }
    return plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, p->line,
                     "parameters: '%s' is not a parameter of model '%s'%s", p->path,
                     mbs_osim_name(S->om), hint);
  }
  return MBS_OK;
}

static int add_quantity(study* S, const char* name, int kind, int arg, int ncomp,
                        const char* const* comps, const char* unit) {
  quantity_plan* nq = realloc(S->quant, (size_t)(S->nquant + 1) * sizeof(*nq));
  if (!nq) return MBS_ERR_NO_MEMORY;
  S->quant = nq;
  quantity_plan* q = &S->quant[S->nquant++];
  memset(q, 0, sizeof(*q));
  q->name = mbs_format_string("%s", name);
  q->kind = kind;
  q->arg = arg;
  q->ncomp = ncomp;
  q->unit = unit;
  q->comps = calloc((size_t)ncomp + 1, sizeof(char*));
  if (!q->name || !q->comps) return MBS_ERR_NO_MEMORY;
  for (int k = 0; k < ncomp; k++)
    if (!(q->comps[k] = mbs_format_string("%s", comps[k]))) return MBS_ERR_NO_MEMORY;
  q->offset = 0;
  return MBS_OK;
}

// each quantity's offset in a sample's frame values, and their number
static void lay_out_frames(study* S) {
  long off = 0;
  for (int i = 0; i < S->nquant; i++) {
    S->quant[i].offset = off;
    off += (long)S->nframes * S->quant[i].ncomp;
  }
  S->frame_values = off;
}

static int plan_outputs(study* S, mbs_error* err) {
  const mbs_study_spec* sp = S->spec;
  const mbs_system* sys = S->sys;
  const int nc = mbs_osim_ncoordinate(S->om);
  const char** names = calloc((size_t)nc + 8, sizeof(char*));
  if (!names) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int i = 0; i < nc; i++) names[i] = mbs_osim_coordinate_info(S->om, i)->name;
  int rc = MBS_OK;
  static const char* xyz[3] = {"x", "y", "z"};
  static const char* wxyz[4] = {"w", "x", "y", "z"};
  if (sp->outputs & MBS_OUT_Q) rc |= add_quantity(S, "q", O_Q, 0, nc, names, "rad or m");
  if (sp->outputs & MBS_OUT_U) rc |= add_quantity(S, "u", O_U, 0, nc, names, "rad/s or m/s");
  if (sp->outputs & MBS_OUT_COM) rc |= add_quantity(S, "com", O_COM, 0, 3, xyz, "m");
  // a posture study's `com` is the subject's: the platform it stands on is apparatus
  if (sp->posture && !rc && !(S->com_skip = mbs_posture_subject_skip(sys))) rc = MBS_ERR_NO_MEMORY;
  if ((sp->outputs & MBS_OUT_Z) && S->rank == 0 && S->log)
    fprintf(S->log, "mbstudy: warning: outputs: z: model '%s' has no auxiliary state variables "
            "(activations and fiber lengths come with the muscle models); nothing recorded\n",
            mbs_osim_name(S->om));
  free(names);
  if (rc) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  if (sp->outputs & MBS_OUT_BODIES)
    for (int i = 0; i < sp->nbodies; i++) {
      const int b = mbs_body_find(sys, sp->bodies[i]);
      if (b < 0)
        return plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, 0, "outputs.bodies: '%s' is not a body",
                         sp->bodies[i]);
      char nm[300];
      snprintf(nm, sizeof(nm), "bodies/%s/position", sp->bodies[i]);
      rc |= add_quantity(S, nm, O_BODY_POS, b, 3, xyz, "m");
      snprintf(nm, sizeof(nm), "bodies/%s/orientation", sp->bodies[i]);
      rc |= add_quantity(S, nm, O_BODY_ORI, b, 4, wxyz, "1 (quaternion)");
    }
  if (sp->outputs & MBS_OUT_CONTACTS)
    for (int i = 0; i < sp->ncontacts; i++) {
      const int f = mbs_force_find(sys, sp->contacts[i]);
      const char* kind = f >= 0 ? mbs_force_kind(sys, f) : NULL;
      if (!kind || (strcmp(kind, "hunt_crossley") && strcmp(kind, "elastic_foundation")))
        return plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, 0,
                         "outputs.contacts: '%s' is not a contact force of the model",
                         sp->contacts[i]);
      // the number of pairs: from a State
      mbs_state* st = mbs_state_create(sys);
      int npair = 0;
      mbs_contact_report rep[1];
      if (!st || mbs_realize_dynamics(sys, st) ||
          mbs_get_contact_reports(sys, st, f, rep, 0, &npair)) {
        mbs_state_destroy(st);
        return plan_fail(err, MBS_ERR_INTERNAL, sp, 0, "outputs.contacts: '%s': no reports",
                         sp->contacts[i]);
      }
      char** comps = calloc((size_t)npair * 7 + 1, sizeof(char*));
      static const char* field[7] = {"fx", "fy", "fz", "px", "py", "pz", "depth"};
      int ok = comps != NULL;
      if (ok && npair > 0) {
        mbs_contact_report* all = calloc((size_t)npair, sizeof(*all));
        int n2 = 0;
        ok = all && !mbs_get_contact_reports(sys, st, f, all, npair, &n2);
        for (int k = 0; ok && k < npair; k++)
          for (int j = 0; j < 7; j++)
            ok = ok && (comps[7 * k + j] = mbs_format_string(
                            "%s-%s/%s", mbs_contact_geometry_name(sys, all[k].geometry1),
                            mbs_contact_geometry_name(sys, all[k].geometry2), field[j])) != NULL;
        free(all);
      }
      mbs_state_destroy(st);
      char nm[300];
      snprintf(nm, sizeof(nm), "contacts/%s", sp->contacts[i]);
      if (ok) rc |= add_quantity(S, nm, O_CONTACT, f, 7 * npair, (const char* const*)comps,
                                 "N, m");
      for (int k = 0; comps && k < 7 * npair; k++) free(comps[k]);
      free(comps);
      if (!ok) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
    }
  if (sp->outputs & MBS_OUT_REACTIONS)
    for (int c = 0; c < mbs_system_nconstraint(sys); c++) {
      static const char* mf[6] = {"mx", "my", "mz", "fx", "fy", "fz"};
      char nm[300];
      snprintf(nm, sizeof(nm), "reactions/%s", mbs_constraint_name(sys, c));
      rc |= add_quantity(S, nm, O_REACTION, c, 6, mf, "N m, N");
    }
  if (rc) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  // frames
  S->nframes = (int)floor(sp->duration / sp->output_interval * (1 + 1e-12)) + 1;
  S->times = malloc((size_t)S->nframes * sizeof(double));
  if (!S->times) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int k = 0; k < S->nframes; k++) S->times[k] = k * sp->output_interval;
  lay_out_frames(S);
  return MBS_OK;
}

static int find_quantity(const study* S, int kind, int arg) {
  for (int i = 0; i < S->nquant; i++)
    if (S->quant[i].kind == kind && S->quant[i].arg == arg) return i;
  return -1;
}

static int plan_events_and_scalars(study* S, mbs_error* err) {
  const mbs_study_spec* sp = S->spec;
  S->nevents = sp->nevents;
  S->ev = calloc((size_t)S->nevents + 1, sizeof(*S->ev));
  S->nscal = sp->nscalars + (S->posture ? PS_N : 0);
  S->scal = calloc((size_t)S->nscal + 1, sizeof(*S->scal));
  if (!S->ev || !S->scal) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int i = 0; i < S->nevents; i++) {
    const mbs_spec_event* e = &sp->events[i];
    S->ev[i].e = e;
    S->ev[i].body = S->ev[i].coord = -1;
    if (e->kind == MBS_SPEC_EVENT_HEIGHT_BELOW || e->kind == MBS_SPEC_EVENT_HEIGHT_ABOVE) {
      S->ev[i].body = mbs_body_find(S->sys, e->body);
      if (S->ev[i].body < 0)
        return plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, e->line,
                         "events: '%s': body '%s' is not a body of the model", e->name, e->body);
    } else {
      S->ev[i].coord = mbs_osim_find_coordinate(S->om, e->coordinate);
      if (S->ev[i].coord < 0)
        return plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, e->line,
                         "events: '%s': '%s' is not a coordinate of the model", e->name,
                         e->coordinate);
    }
  }
  for (int i = sp->nscalars; i < S->nscal; i++) {
    scalar_plan* p = &S->scal[i];
    p->name = posture_scalar_names[i - sp->nscalars];
    p->unit = posture_scalar_units[i - sp->nscalars];
    p->quantity = p->event = -1;
    p->posture = i - sp->nscalars;
  }
  for (int i = 0; i < sp->nscalars; i++) {
    const mbs_spec_scalar* s = &sp->scalars[i];
    scalar_plan* p = &S->scal[i];
    for (int k = 0; S->posture && k < PS_N; k++)
      if (!strcmp(s->name, posture_scalar_names[k]))
        return plan_fail(err, MBS_ERR_ARGUMENT, sp, s->line,
                         "outputs.scalars: '%s' is a scalar the posture study writes itself; "
                         "choose another name", s->name);
    p->name = s->name;
    p->at = s->at;
    p->quantity = -1;
    p->event = -1;
    p->posture = -1;
    if (s->event) {
      for (int k = 0; k < S->nevents; k++)
        if (!strcmp(sp->events[k].name, s->event)) p->event = k;
      p->unit = "s";
      continue;
    }
    int kind, arg = 0;
    if (!strcmp(s->of, "q") || !strcmp(s->of, "u")) {
      kind = s->of[0] == 'q' ? O_Q : O_U;
      p->comp = mbs_osim_find_coordinate(S->om, s->coordinate);
      if (p->comp < 0)
        return plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, s->line,
                         "scalars: '%s': '%s' is not a coordinate of the model", s->name,
                         s->coordinate ? s->coordinate : "");
      p->unit = kind == O_Q ? "rad or m" : "rad/s or m/s";
    } else if (!strcmp(s->of, "com")) {
      kind = O_COM;
      p->comp = s->component;
      p->unit = "m";
    } else if (!strncmp(s->of, "body:", 5)) {
      kind = O_BODY_POS;
      arg = mbs_body_find(S->sys, s->of + 5);
      if (arg < 0)
        return plan_fail(err, MBS_ERR_UNKNOWN_NAME, sp, s->line,
                         "scalars: '%s': '%s' is not a body of the model", s->name, s->of + 5);
      p->comp = s->component;
      p->unit = "m";
    } else {
      return plan_fail(err, MBS_ERR_ARGUMENT, sp, s->line, "scalars: '%s': unknown quantity '%s'",
                       s->name, s->of);
    }
    p->quantity = find_quantity(S, kind, arg);
    p->kind = kind;
    p->arg = arg;
    if (p->quantity < 0) {
      // not among the trajectories: record it as a hidden trajectory-free quantity by adding it
      // (its values are computed per frame for the reduction)
      static const char* xyz[3] = {"x", "y", "z"};
      const int nc = mbs_osim_ncoordinate(S->om);
      char nm[300];
      snprintf(nm, sizeof(nm), "%s", kind == O_Q ? "q" : kind == O_U ? "u" : kind == O_COM ? "com"
                                                                                          : "body");
      if (kind == O_BODY_POS) snprintf(nm, sizeof(nm), "bodies/%s/position", s->of + 5);
      const char** names = calloc((size_t)nc + 1, sizeof(char*));
      if (!names) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      for (int k = 0; k < nc; k++) names[k] = mbs_osim_coordinate_info(S->om, k)->name;
      const int r = add_quantity(S, nm, kind, arg, kind == O_Q || kind == O_U ? nc : 3,
                                 kind == O_Q || kind == O_U ? names : xyz,
                                 kind == O_Q ? "rad or m" : kind == O_U ? "rad/s or m/s" : "m");
      free(names);
      if (r) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      p->quantity = S->nquant - 1;
      S->quant[p->quantity].hidden = 1;
    }
  }
  lay_out_frames(S);  // again: scalars may have added quantities
  return MBS_OK;
}

//---------------------------------- one sample -------------------------------------------------

typedef struct sample_run {
  study* S;
  mbs_state* st;
  long index;
  double* params;
  double* traj;       // S->frame_values
  double* scalars;
  double* event_time;
  double posture[PS_N];  // a posture study's results
  int frames;         // frames recorded
  double t_wall0, max_wall;
  int stopped;        // by a signal
} sample_run;

static void quantity_values(const study* S, const quantity_plan* q, mbs_state* st, double* out) {
  const mbs_system* sys = S->sys;
  static const double origin[3] = {0, 0, 0};
  switch (q->kind) {
    case O_Q:
    case O_U: {
      double* v = out;
      if (q->kind == O_Q) mbs_osim_get_coordinates(S->om, st, v, NULL);
      else mbs_osim_get_coordinates(S->om, st, NULL, v);
      break;
    }
    case O_COM: {
      double m;
      if (mbs_calc_center_of_mass_subset(sys, st, S->com_skip, &m, out))
        out[0] = out[1] = out[2] = NAN;
      break;
    }
    case O_BODY_POS:
      if (mbs_get_station_location(sys, st, q->arg, origin, out)) out[0] = out[1] = out[2] = NAN;
      break;
    case O_BODY_ORI: {
      double R[9];
      if (mbs_get_body_transform(sys, st, q->arg, R, NULL)) {
        out[0] = out[1] = out[2] = out[3] = NAN;
      } else {
        mbs_rot_to_quat(out, R);
        if (out[0] < 0)
          for (int k = 0; k < 4; k++) out[k] = -out[k];
      }
      break;
    }
    case O_CONTACT: {
      const int npair = q->ncomp / 7;
      int n = 0;
      mbs_contact_report rep[64];
      if (npair > 64 || mbs_realize_dynamics(sys, st) ||
          mbs_get_contact_reports(sys, st, q->arg, rep, 64, &n) || n != npair) {
        for (int k = 0; k < q->ncomp; k++) out[k] = NAN;
        break;
      }
      for (int k = 0; k < npair; k++) {
        memcpy(out + 7 * k, rep[k].force, 3 * sizeof(double));
        memcpy(out + 7 * k + 3, rep[k].point, 3 * sizeof(double));
        out[7 * k + 6] = rep[k].penetration;
      }
      break;
    }
    case O_REACTION: {
      double F2[6];
      if (mbs_realize_acceleration(sys, st) ||
          mbs_get_constraint_forces(sys, st, q->arg, NULL, F2, NULL)) {
        for (int k = 0; k < 6; k++) out[k] = NAN;
      } else {
        memcpy(out, F2, sizeof(F2));
      }
      break;
    }
  }
}

static int on_report(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  sample_run* r = user;
  const study* S = r->S;
  if (g_stop) {
    r->stopped = 1;
    return 1;
  }
  const double t = mbs_state_time(st);
  const double dt = S->spec->output_interval;
  const long k = lround(t / dt);
  if (k < 0 || k >= S->nframes || fabs(t - k * dt) > 1e-9 * fmax(dt, 1e-300) ||
      k != r->frames)
    return 0;  // an event's report between frames
  for (int i = 0; i < S->nquant; i++) {
    const quantity_plan* q = &S->quant[i];
    quantity_values(S, q, st, r->traj + q->offset + (long)k * q->ncomp);
  }
  r->frames = (int)k + 1;
  return 0;
}

static double event_value(const mbs_system* sys, mbs_state* st, void* user) {
  const event_plan* e = user;
  const sample_run* r = NULL;
  (void)r;
  if (e->body >= 0) {
    double p[3];
    if (mbs_get_station_location(sys, st, e->body, e->e->point, p)) return NAN;
    return p[1] - e->e->value;
  }
  return NAN;
}

// events: the user pointer is a small struct per event and sample
typedef struct event_ctx {
  const event_plan* plan;
  sample_run* run;
  int k;
} event_ctx;

static double trigger(const mbs_system* sys, mbs_state* st, void* user) {
  const event_ctx* c = user;
  const event_plan* e = c->plan;
  if (e->body >= 0) return event_value(sys, st, (void*)e);
  const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(c->run->S->om, e->coord);
  return mbs_state_q(st)[ci->qindex] - e->e->value;
}

static mbs_event_action handler(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  event_ctx* c = user;
  if (isnan(c->run->event_time[c->k])) c->run->event_time[c->k] = mbs_state_time(st);
  return c->plan->e->terminate ? MBS_EVENT_TERMINATE : MBS_EVENT_CONTINUE;
}

// draw the sample's parameters (pure function of seed and index)
static void draw_params(const study* S, long index, double* values) {
  double u[MBS_SOBOL_MAX_DIM];
  int lv[MBS_SOBOL_MAX_DIM];
  const int big = S->np > MBS_SOBOL_MAX_DIM;
  double* uu = big ? malloc((size_t)S->np * sizeof(double)) : u;
  int* levels = big ? malloc((size_t)S->np * sizeof(int)) : lv;
  if (!uu || !levels) {
    for (int i = 0; i < S->np; i++) values[i] = NAN;
  } else {
    if (S->spec->method == MBS_DESIGN_GRID) {
      for (int i = 0; i < S->np; i++)
        levels[i] = S->dist[i].type == MBS_DIST_DISCRETE ? S->dist[i].nvalues : 1;
      mbs_grid_point(levels, S->np, index, uu);
    } else {
      mbs_design_point(S->spec->method, S->spec->seed, S->nsamples, index, S->np, uu);
    }
    for (int i = 0; i < S->np; i++) {
      const double x = mbs_distribution_quantile(&S->dist[i], uu[i]);
      values[i] = S->par[i].is_scale ? x * S->par[i].base : x;
    }
  }
  if (big) {
    free(uu);
    free(levels);
  }
}

// quiet standing for the sample's knee flexion and joint mode, the platform's displacement
// set from magnitude and direction; *level is the pelvis height that counts as fallen
static int prepare_posture(sample_run* r, double* level) {
  const study* S = r->S;
  const mbs_system* sys = S->sys;
  const mbs_spec_posture* po = S->spec->posture;
  mbs_state* st = r->st;
  const double deg = 3.14159265358979323846 / 180;
  const double mode = r->params[PA_MODE], knee = r->params[PA_KNEE];
  const double dir = r->params[PA_DIRECTION] * deg, mag = r->params[PA_MAGNITUDE];
  int rc = mbs_realize_instance(sys, st);
  // anterior is +x, right is +z (OpenSim's convention)
  static const char* const scale[3] = {"/functions/platform_tx/prescribed/scale",
                                       "/functions/platform_ty/prescribed/scale",
                                       "/functions/platform_tz/prescribed/scale"};
  const double d[3] = {mag * cos(dir), 0, mag * sin(dir)};
  for (int k = 0; k < 3 && rc == MBS_OK; k++) rc = mbs_state_set_param(sys, st, scale[k], 0, d[k]);
  if (rc) return rc;
  mbs_posture_options o;
  mbs_posture_options_default(&o);
  o.knee_flexion = knee * deg;
  o.trunk_lean = (po->trunk_lean + po->trunk_lean_ratio * knee) * deg;
  o.mode = mode > 0.5 ? MBS_JOINTS_LOCKED : MBS_JOINTS_FREE;
  o.com_ahead = po->com_ahead;
  o.accuracy = S->spec->accuracy;
  mbs_posture_result pr;
  mbs_error e;
  mbs_error_clear(&e);
  rc = mbs_posture_quiet_standing(S->om, st, &o, &pr, &e);
  if (rc) {
    mbs_error* se = (mbs_error*)mbs_state_error(st);
    if (e.code) *se = e;
    return rc;
  }
  r->posture[PS_HIP] = pr.hip_flexion / deg;
  r->posture[PS_ANKLE] = pr.ankle_angle / deg;
  r->posture[PS_PELVIS] = pr.pelvis_height;
  r->posture[PS_RESIDUAL] = pr.residual;
  for (int k = 0; k < PS_NTORQUE; k++)
    r->posture[PS_TORQUE + k] = pr.torque[posture_torque_joints[k]];
  *level = po->fall_fraction * pr.pelvis_height;
  return MBS_OK;
}

// run one sample into r; returns its status with the message in st's error
static int run_sample(sample_run* r, const mbs_state* pristine, double* wall, long* steps) {
  study* S = r->S;
  const mbs_system* sys = S->sys;
  mbs_state* st = r->st;
  const double t0 = now();
  *steps = 0;
  r->frames = 0;
  for (long i = 0; i < S->frame_values; i++) r->traj[i] = NAN;
  for (int i = 0; i < S->nevents; i++) r->event_time[i] = NAN;
  for (int i = 0; i < S->nscal; i++) r->scalars[i] = NAN;
  draw_params(S, r->index, r->params);
  mbs_state_copy(sys, st, pristine);
  mbs_error_clear((mbs_error*)mbs_state_error(st));
  double* prm = mbs_state_upd_params(st);
  for (int i = 0; i < S->np; i++)
    if (S->par[i].kind == P_SYSTEM) prm[S->par[i].index] = r->params[i];
  // initial coordinates: the model's defaults, then the sampled ones
  const int nc = mbs_osim_ncoordinate(S->om);
  int rc = MBS_OK;
  double* q0 = malloc(2 * ((size_t)nc + 1) * sizeof(double));
  if (!q0) return MBS_ERR_NO_MEMORY;
  for (int i = 0; i < nc; i++) {
    q0[i] = mbs_osim_coordinate_info(S->om, i)->default_value;
    q0[nc + i] = mbs_osim_coordinate_info(S->om, i)->default_speed;
  }
  for (int i = 0; i < S->np; i++) {
    if (S->par[i].kind == P_COORD_VALUE) q0[S->par[i].index] = r->params[i];
    if (S->par[i].kind == P_COORD_SPEED) q0[nc + S->par[i].index] = r->params[i];
  }
  mbs_osim_set_coordinates(S->om, st, q0, q0 + nc);
  free(q0);
  mbs_state_set_time(st, 0);
  mbs_posture_fall fall = {S->pelvis_ty, -INFINITY, NAN};
  for (int k = 0; k < PS_N; k++) r->posture[k] = NAN;
  if (S->posture) {
    rc = prepare_posture(r, &fall.level);
  } else if ((rc = mbs_realize_instance(sys, st)) == MBS_OK && mbs_system_nconstraint(sys) > 0) {
    rc = mbs_assemble(sys, st, NULL);
  }
  if (rc == MBS_OK) {
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    o.integrator = S->integrator;
    o.integ.accuracy = S->spec->accuracy;
    o.report_interval = S->spec->output_interval;
    o.max_wall_time = S->spec->max_wall_time;
    mbs_event* ev = calloc((size_t)S->nevents + 2, sizeof(*ev));
    event_ctx* ec = calloc((size_t)S->nevents + 1, sizeof(*ec));
    if (!ev || !ec) {
      free(ev);
      free(ec);
      return MBS_ERR_NO_MEMORY;
    }
    for (int i = 0; i < S->nevents; i++) {
      const mbs_spec_event* e = S->ev[i].e;
      ec[i] = (event_ctx){&S->ev[i], r, i};
      ev[i].name = e->name;
      ev[i].trigger = trigger;
      ev[i].stage = MBS_STAGE_POSITION;
      ev[i].direction = (e->kind == MBS_SPEC_EVENT_HEIGHT_BELOW ||
                         e->kind == MBS_SPEC_EVENT_COORDINATE_BELOW) ? -1 : 1;
      ev[i].handler = handler;
      ev[i].user = &ec[i];
    }
    int nev = S->nevents;
    if (S->posture)  // the fall: the pelvis below its fraction of the standing height
      ev[nev++] = mbs_posture_fall_event(&fall);
    mbs_simulation_result res;
    memset(&res, 0, sizeof(res));
    rc = mbs_simulate(sys, st, S->spec->duration, &o, ev, nev, on_report, r, &res);
    if (S->posture && rc == MBS_OK) {
      // T: the time of the fall, or the simulated duration when the model stays up
      const double T = isnan(fall.time) ? S->spec->duration : fall.time;
      r->posture[PS_T] = T;
      r->posture[PS_SI] = 1 - exp(-T * T);
    }
    *steps = res.integrator.steps;
    free(ev);
    free(ec);
  }
  *wall = now() - t0;
  // scalars from the frames (and event times)
  for (int i = 0; i < S->nscal; i++) {
    const scalar_plan* p = &S->scal[i];
    if (p->posture >= 0) {
      r->scalars[i] = r->posture[p->posture];
      continue;
    }
    if (p->event >= 0) {
      r->scalars[i] = r->event_time[p->event];
      continue;
    }
    const quantity_plan* q = &S->quant[p->quantity];
    if (r->frames == 0) continue;
    double acc = p->at == MBS_SPEC_AT_MAX ? -INFINITY : p->at == MBS_SPEC_AT_MIN ? INFINITY : 0;
    for (int k = 0; k < r->frames; k++) {
      const double v = r->traj[q->offset + (long)k * q->ncomp + p->comp];
      if (p->at == MBS_SPEC_AT_MAX) acc = fmax(acc, v);
      else if (p->at == MBS_SPEC_AT_MIN) acc = fmin(acc, v);
      else if (p->at == MBS_SPEC_AT_MEAN) acc += v;
    }
    if (p->at == MBS_SPEC_AT_MEAN) acc /= r->frames;
    if (p->at == MBS_SPEC_AT_FINAL) acc = r->traj[q->offset + (long)(r->frames - 1) * q->ncomp + p->comp];
    r->scalars[i] = acc;
  }
  return rc;
}

//---------------------------------- journals and resume ----------------------------------------

static mbs_journal_layout journal_layout(const study* S) {
  mbs_journal_layout L = {S->fingerprint, S->np, S->frame_values, S->nscal};
  return L;
}

static int is_journal(const char* name, int* attempt) {
  int a, r, t;
  char tail[8];
  if (sscanf(name, "j%d-r%d-t%d.bin%7s", &a, &r, &t, tail) == 3) {
    *attempt = a;
    return 1;
  }
  return 0;
}

// the journal files of the parts folder (sorted by name for a fixed order)
static int cmp_str(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static int list_journals(const char* dir, char*** out, int* n, int* max_attempt) {
  *out = NULL;
  *n = 0;
  *max_attempt = -1;
  DIR* d = opendir(dir);
  if (!d) return errno == ENOENT ? MBS_OK : MBS_ERR_IO;
  struct dirent* e;
  int cap = 0;
  while ((e = readdir(d))) {
    int a;
    if (!is_journal(e->d_name, &a)) continue;
    if (a > *max_attempt) *max_attempt = a;
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      char** p = realloc(*out, (size_t)cap * sizeof(char*));
      if (!p) break;
      *out = p;
    }
    (*out)[(*n)++] = mbs_format_string("%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (*n) qsort(*out, (size_t)*n, sizeof(char*), cmp_str);
  return MBS_OK;
}

static void free_list(char** v, int n) {
  for (int i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

// mark the samples completed by earlier runs
static int scan_journals(study* S, mbs_error* err) {
  char** files;
  int n, max_attempt;
  if (list_journals(S->parts, &files, &n, &max_attempt))
    return MBS_FAIL(err, MBS_ERR_IO, S->parts, "%s: cannot read: %s", S->parts, strerror(errno));
  S->attempt = max_attempt + 1;
  const mbs_journal_layout L = journal_layout(S);
  mbs_journal_record rec;
  for (int i = 0; i < n; i++) {
    mbs_journal_reader* r = mbs_journal_open(files[i], &L, err);
    if (!r) {
      free_list(files, n);
      return err->code;
    }
    while (mbs_journal_next(r, &rec)) {
      if (rec.index < 0 || rec.index >= S->nsamples) break;
      unsigned char* byte = &S->done[rec.index >> 3];
      const unsigned char bit = (unsigned char)(1u << (rec.index & 7));
      if (*byte & bit) continue;
      *byte |= bit;
      S->done_before++;
      if (rec.status != MBS_OK) S->failed_before++;
    }
    mbs_journal_close_reader(r);
  }
  free_list(files, n);
  return MBS_OK;
}

//---------------------------------- scheduling -------------------------------------------------

// the next chunk of sample indices [*start, *start + *count)
static void next_chunk(study* S, long* start, long* count) {
  const long nworkers = (long)S->nranks * S->nthreads;
  long seen;
  if (S->use_mpi) {
#pragma omp critical(mbs_mpi)
    {
      const long zero = 0;
      MPI_Fetch_and_op(&zero, &seen, MPI_LONG, 0, 0, MPI_NO_OP, S->win);
      MPI_Win_flush(0, S->win);
    }
  } else {
    seen = __atomic_load_n(&S->local_next, __ATOMIC_RELAXED);
  }
  // guided: a quarter of an even share of what is left, at least 1, at most 64
  long c = (S->nsamples - seen) / (4 * nworkers);
  if (c < 1) c = 1;
  if (c > 64) c = 64;
  if (S->use_mpi) {
#pragma omp critical(mbs_mpi)
    {
      MPI_Fetch_and_op(&c, start, MPI_LONG, 0, 0, MPI_SUM, S->win);
      MPI_Win_flush(0, S->win);
    }
  } else {
    *start = __atomic_fetch_add(&S->local_next, c, __ATOMIC_RELAXED);
  }
  *count = c;
}

static long count_done(study* S, long add) {
  long total;
  if (S->use_mpi) {
#pragma omp critical(mbs_mpi)
    {
      MPI_Fetch_and_op(&add, &total, MPI_LONG, 0, 1, MPI_SUM, S->win);
      MPI_Win_flush(0, S->win);
    }
    return total + add;
  }
  return __atomic_add_fetch(&S->local_done, add, __ATOMIC_RELAXED);
}

//---------------------------------- the merge --------------------------------------------------

typedef struct merge_src {
  char* path;
  mbs_journal_reader* r;
  mbs_journal_record rec;
  int has;
} merge_src;

// The merger writes the result file from the journals in sample order. On rank 0 it runs in a
// thread of its own during the study, taking each sample as soon as the journals hold it (the
// workers hand every record to the operating system at once), so that little is left to do
// when the last sample is computed. The file is written to <parts>/result.h5 and renamed to the
// output only when complete.
typedef struct merger {
  study* S;
  const mbs_study_options* o;
  double t_start_wall;
  merge_src* src;
  int nsrc, capsrc;
  mbs_store* store;
  char* partial;
  const double** traj;
  long next, failed;
  double busy;            // s spent reading journals and writing (not waiting)
  int rc;
  mbs_error err;
  // thread control
  pthread_t thread;
  volatile int finish;    // the workers are done: read everything, then close
  volatile int stop;      // abandon (the study was stopped or failed)
} merger;

static int merger_find_sources(merger* M) {
  char** files;
  int n, max_attempt;
  if (list_journals(M->S->parts, &files, &n, &max_attempt))
    return MBS_FAIL(&M->err, MBS_ERR_IO, M->S->parts, "%s: cannot read: %s", M->S->parts,
                    strerror(errno));
  const mbs_journal_layout L = journal_layout(M->S);
  int rc = MBS_OK;
  for (int i = 0; i < n && rc == MBS_OK; i++) {
    int known = 0;
    for (int k = 0; k < M->nsrc && !known; k++) known = !strcmp(M->src[k].path, files[i]);
    if (known) continue;
    mbs_journal_reader* r = mbs_journal_open(files[i], &L, &M->err);
    if (!r) {  // a journal just created may not have its header yet: try again later
      if (M->err.code == MBS_ERR_PARSE && !M->finish) {
        mbs_error_clear(&M->err);
        continue;
      }
      rc = M->err.code;
      break;
    }
    if (M->nsrc == M->capsrc) {
      const int cap = M->capsrc ? 2 * M->capsrc : 16;
      merge_src* p = realloc(M->src, (size_t)cap * sizeof(*p));
      if (!p) {
        mbs_journal_close_reader(r);
        rc = MBS_FAIL(&M->err, MBS_ERR_NO_MEMORY, "study", "out of memory");
        break;
      }
      M->src = p;
      M->capsrc = cap;
    }
    merge_src* m = &M->src[M->nsrc++];
    memset(m, 0, sizeof(*m));
    m->path = files[i];
    files[i] = NULL;
    m->r = r;
  }
  free_list(files, n);
  return rc;
}

static int merger_open(merger* M) {
  study* S = M->S;
  const mbs_study_spec* sp = S->spec;
  int nq = 0;
  for (int i = 0; i < S->nquant; i++) nq += !S->quant[i].hidden;
  mbs_store_quantity* sq = calloc((size_t)nq + 1, sizeof(*sq));
  const char** pn = calloc((size_t)S->np + 1, sizeof(char*));
  const char** pu = calloc((size_t)S->np + 1, sizeof(char*));
  const char** sn = calloc((size_t)S->nscal + 1, sizeof(char*));
  const char** su = calloc((size_t)S->nscal + 1, sizeof(char*));
  M->traj = calloc((size_t)nq + 1, sizeof(double*));
  M->partial = mbs_format_string("%s/result.h5", S->parts);
  int rc = MBS_OK;
  if (!sq || !pn || !pu || !sn || !su || !M->traj || !M->partial)
    rc = MBS_FAIL(&M->err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int i = 0, k = 0; rc == MBS_OK && i < S->nquant; i++)
    if (!S->quant[i].hidden)
      sq[k++] = (mbs_store_quantity){S->quant[i].name, S->quant[i].ncomp,
                                     (const char* const*)S->quant[i].comps, S->quant[i].unit};
  for (int i = 0; rc == MBS_OK && i < S->np; i++) {
    pn[i] = S->par[i].name;
    pu[i] = S->par[i].unit ? S->par[i].unit : "";
  }
  for (int i = 0; rc == MBS_OK && i < S->nscal; i++) {
    sn[i] = S->scal[i].name;
    su[i] = S->scal[i].unit ? S->scal[i].unit : "";
  }
  char seed[32], count[32], ranks[32], threads[32], hash[32], started[64];
  snprintf(seed, sizeof(seed), "%llu", (unsigned long long)sp->seed);
  snprintf(count, sizeof(count), "%ld", S->nsamples);
  snprintf(ranks, sizeof(ranks), "%d", S->nranks);
  snprintf(threads, sizeof(threads), "%d", S->nthreads);
  snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)S->fingerprint);
  const time_t t0 = time(NULL) - (time_t)(now() - M->t_start_wall);
  struct tm tmv;
  gmtime_r(&t0, &tmv);
  strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tmv);
  const mbs_store_attribute attrs[] = {
      {"creator", "mbstudy " MBS_VERSION_STRING},
      {"model", sp->model_path ? sp->model_path : sp->model},
      {"model_name", mbs_osim_name(S->om)},
      {"study_fingerprint", hash},
      {"spec", sp->text},
      {"spec_path", sp->path},
      {"seed", seed},
      {"samples", count},
      {"sampling", mbs_design_name(sp->method)},
      {"integrator", sp->integrator},
      {"ranks_last_run", ranks},
      {"threads_per_rank_last_run", threads},
      {"started_last_run", started},
  };
  // a posture study says what it did
  const mbs_spec_posture* po = sp->posture;
  char duration[32], fall[200], pert[200];
  snprintf(duration, sizeof(duration), "%.17g", sp->duration);
  if (po) {
    snprintf(fall, sizeof(fall), "the pelvis (its origin) below %g of its quiet-standing height",
             po->fall_fraction);
    snprintf(pert, sizeof(pert), "platform displaced by the magnitude along the direction over "
             "%g s, profile %s", po->perturbation_duration,
             po->profile ? po->profile : "smooth_step");
  }
  mbs_store_attribute all[sizeof(attrs) / sizeof(attrs[0]) + 4];
  int nattr = (int)(sizeof(attrs) / sizeof(attrs[0]));
  memcpy(all, attrs, sizeof(attrs));
  if (po) {
    all[nattr++] = (mbs_store_attribute){"study", "posture"};
    all[nattr++] = (mbs_store_attribute){"simulated_duration", duration};
    all[nattr++] = (mbs_store_attribute){"fall_criterion", fall};
    all[nattr++] = (mbs_store_attribute){"perturbation", pert};
  }
  static const double pct[5] = {5, 25, 50, 75, 95};
  const mbs_store_layout layout = {S->nsamples, S->np, pn, pu, S->nframes, S->times, nq, sq,
                                   S->nscal, sn, su, 5, pct, nattr, all, 0};
  if (rc == MBS_OK) {
    M->store = mbs_store_create(M->partial, &layout, 1, &M->err);
    if (!M->store) rc = M->err.code;
  }
  free(sq);
  free(pn);
  free(pu);
  free(sn);
  free(su);
  return rc;
}

// write every sample the journals hold now, in order; with `final`, every sample must be there
static int merger_step(merger* M, int final, int* progressed) {
  study* S = M->S;
  *progressed = 0;
  const double t0 = now();
  int rc = MBS_OK;
  while (rc == MBS_OK && M->next < S->nsamples && !M->stop) {
    int hit = -1;
    for (int i = 0; i < M->nsrc && hit < 0; i++) {
      merge_src* m = &M->src[i];
      if (!m->has) m->has = mbs_journal_next(m->r, &m->rec);
      while (m->has && m->rec.index < M->next)  // a duplicate (cannot happen; tolerated)
        m->has = mbs_journal_next(m->r, &m->rec);
      if (m->has && m->rec.index == M->next) hit = i;
    }
    if (hit < 0) {
      // perhaps in a journal not known yet
      const int before = M->nsrc;
      if ((rc = merger_find_sources(M)) != MBS_OK) break;
      if (M->nsrc > before) continue;
      if (final)
        rc = MBS_FAIL(&M->err, MBS_ERR_INTERNAL, S->parts, "%s: sample %ld is missing from the "
                      "journals", S->parts, M->next);
      break;
    }
    mbs_journal_record* r = &M->src[hit].rec;
    for (int i = 0, k = 0; i < S->nquant; i++)
      if (!S->quant[i].hidden) M->traj[k++] = r->traj + S->quant[i].offset;
    const mbs_store_sample smp = {r->index, r->params, r->status, r->message, r->wall, r->steps,
                                  r->frames, M->traj, r->scalars};
    rc = mbs_store_write_sample(M->store, &smp, &M->err);
    if (r->status != MBS_OK) {
      FILE* log = M->o->log ? M->o->log : stderr;
      if (M->failed < 20)
        fprintf(log, "failed sample %ld: %s\n", r->index, r->message);
      else if (M->failed == 20)
        fprintf(log, "(more failed samples: see /status in %s)\n", S->spec->output);
      M->failed++;
    }
    M->next++;
    M->src[hit].has = 0;
    *progressed = 1;
  }
  M->busy += now() - t0;
  return rc;
}

static int merger_close(merger* M) {
  study* S = M->S;
  int rc = M->rc;
  const double t0 = now();
  if (rc == MBS_OK) {
    char nfail[32];
    snprintf(nfail, sizeof(nfail), "%ld", M->failed);
    rc = mbs_store_set_attribute(M->store, "failed_samples", nfail, &M->err);
  }
  if (rc == MBS_OK) {
    rc = mbs_store_close(M->store, &M->err);
  } else {
    mbs_store_discard(M->store);
  }
  M->store = NULL;
  for (int i = 0; i < M->nsrc; i++) {
    mbs_journal_close_reader(M->src[i].r);
    M->src[i].r = NULL;
  }
  if (rc == MBS_OK && rename(M->partial, S->spec->output) != 0)
    rc = MBS_FAIL(&M->err, MBS_ERR_IO, S->spec->output, "%s: cannot move %s there: %s",
                  S->spec->output, M->partial, strerror(errno));
  if (rc != MBS_OK) remove(M->partial);
  // the journals are no longer needed once the file is complete
  if (rc == MBS_OK) {
    for (int i = 0; i < M->nsrc; i++) remove(M->src[i].path);
    rmdir(S->parts);
  }
  for (int i = 0; i < M->nsrc; i++) free(M->src[i].path);
  free(M->src);
  free(M->traj);
  free(M->partial);
  M->src = NULL;
  M->nsrc = 0;
  M->busy += now() - t0;
  M->rc = rc;
  return rc;
}

static void* merger_main(void* arg) {
  merger* M = arg;
  M->rc = merger_open(M);
  while (M->rc == MBS_OK && !M->stop) {
    const int finish = M->finish;  // read before the step: a last full pass after it is set
    int progressed;
    M->rc = merger_step(M, finish, &progressed);
    if (finish || M->next >= M->S->nsamples) break;
    if (!progressed) {
      const struct timespec pause = {0, 5000000};  // 5 ms
      nanosleep(&pause, NULL);
    }
  }
  if (M->rc == MBS_OK && M->stop && M->next < M->S->nsamples)
    M->rc = MBS_ERR_INTERRUPTED;
  return NULL;
}

//---------------------------------- the run ----------------------------------------------------

// wait for MPI requests, sleeping between tests instead of spinning
static void polite_wait(int n, MPI_Request* req) {
  for (int done = 0;;) {
    MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    const struct timespec pause = {0, 1000000};  // 1 ms
    nanosleep(&pause, NULL);
  }
}

static void free_study(study* S) {
  for (int i = 0; i < S->np; i++) free(S->par[i].name);
  free(S->par);
  free(S->dist);
  for (int i = 0; i < S->nquant; i++) {
    for (int k = 0; k < S->quant[i].ncomp; k++) free(S->quant[i].comps[k]);
    free(S->quant[i].comps);
    free(S->quant[i].name);
  }
  free(S->quant);
  free(S->times);
  free(S->scal);
  free(S->ev);
  free(S->parts);
  free(S->done);
  for (int k = 0; k < PA_N; k++) free(S->posture_levels[k]);
  free(S->com_skip);
  mbs_osim_free(S->om);
}

static int file_exists(const char* p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

// remove a parts folder's journals (start over)
static void clear_parts(const char* dir) {
  char** files;
  int n, a;
  if (list_journals(dir, &files, &n, &a) == MBS_OK) {
    for (int i = 0; i < n; i++) remove(files[i]);
    free_list(files, n);
  }
  rmdir(dir);
}

int mbs_study_run(const mbs_study_spec* spec, const mbs_study_options* opt,
                  mbs_study_result* result, mbs_error* err) {
  mbs_study_options dflt;
  if (!opt) {
    mbs_study_options_default(&dflt);
    opt = &dflt;
  }
  FILE* log = opt->log ? opt->log : stderr;
  mbs_study_result res;
  memset(&res, 0, sizeof(res));
  const double t_start = now();
  study S;
  memset(&S, 0, sizeof(S));
  S.spec = spec;
  S.nsamples = spec->count;
  S.use_mpi = opt->use_mpi;
  S.rank = 0;
  S.nranks = 1;
  if (S.use_mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &S.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &S.nranks);
  }
  S.nthreads = spec->threads > 0 ? spec->threads : omp_get_max_threads();
  S.log = log;
  int rc = mbs_integrator_from_name(spec->integrator);
  if (rc < 0) rc = plan_fail(err, MBS_ERR_ARGUMENT, spec, 0, "unknown integrator '%s'",
                             spec->integrator);
  else {
    S.integrator = (mbs_integrator_type)rc;
    rc = MBS_OK;
  }
  if (rc == MBS_OK) rc = load_model(&S, err);
  if (rc == MBS_OK) rc = plan_params(&S, err);
  if (rc == MBS_OK) rc = plan_outputs(&S, err);
  if (rc == MBS_OK) rc = plan_events_and_scalars(&S, err);
  if (rc == MBS_OK) {
    mbs_error de;
    if (mbs_design_check(spec->method, spec->count, S.np, &de))
      rc = plan_fail(err, de.code, spec, 0, "sampling: %s", de.message);
  }
  S.parts = mbs_format_string("%s.parts", spec->output);
  S.done = calloc((size_t)(S.nsamples + 7) / 8 + 1, 1);
  if (rc == MBS_OK && (!S.parts || !S.done))
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  // the result file and the journals: never overwrite without --force
  if (rc == MBS_OK && S.rank == 0) {
    const int out_exists = file_exists(spec->output), parts_exist = file_exists(S.parts);
    if (out_exists && !opt->force)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, spec->output,
                    "%s exists; use --force to replace it", spec->output);
    else if (parts_exist && !opt->resume && !opt->force)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, S.parts,
                    "%s holds the completed samples of a stopped run of this study; use "
                    "--resume to continue it or --force to start over", S.parts);
    else if (!parts_exist && opt->resume)
      fprintf(log, "mbstudy: nothing to resume (%s does not exist); starting the study\n",
              S.parts);
    if (rc == MBS_OK && opt->force && !opt->resume && parts_exist) clear_parts(S.parts);
    if (rc == MBS_OK && mkdir(S.parts, 0777) != 0 && errno != EEXIST)
      rc = MBS_FAIL(err, MBS_ERR_IO, S.parts, "%s: cannot create: %s", S.parts, strerror(errno));
  }
  if (S.use_mpi) {  // every rank learns whether rank 0 found a problem
    int bad = rc != MBS_OK;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad && rc == MBS_OK)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, "study", "stopped: rank 0 reported an error");
  }
  if (rc == MBS_OK) rc = scan_journals(&S, err);
  if (rc != MBS_OK) {
    free_study(&S);
    if (result) *result = res;
    return rc;
  }
  res.samples = S.nsamples;
  res.skipped = S.done_before;
  // the shared counters
  if (S.use_mpi) {
    MPI_Win_allocate(S.rank == 0 ? 2 * (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &S.win_mem, &S.win);
    if (S.rank == 0) S.win_mem[0] = S.win_mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, S.win);
  }
  if (S.rank == 0 && S.done_before)
    fprintf(log, "mbstudy: resuming: %ld of %ld samples were completed before (%ld failed)\n",
            S.done_before, S.nsamples, S.failed_before);
  const long todo = S.nsamples - S.done_before;
  long failed_run = 0, done_run = 0;
  double last_sync = now(), last_progress = now();
  int err_thread = 0;
  mbs_error terr;
  mbs_error_clear(&terr);
  // the pristine State (model defaults) every sample starts from
  mbs_state* pristine = mbs_state_create(S.sys);
  if (!pristine) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  double io_time = 0;
  // rank 0 writes the result file while the samples are computed
  merger M;
  memset(&M, 0, sizeof(M));
  M.S = &S;
  M.o = opt;
  M.t_start_wall = t_start;
  int merger_running = 0;
  if (rc == MBS_OK && S.rank == 0) {
    if (pthread_create(&M.thread, NULL, merger_main, &M) == 0) merger_running = 1;
    else rc = MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "cannot start the writer thread");
  }
#pragma omp parallel num_threads(S.nthreads) reduction(+ : failed_run, done_run, io_time) \
    if (rc == MBS_OK)
  {
    const int tid = omp_get_thread_num();
    mbs_error e;
    mbs_error_clear(&e);
    char* path = mbs_format_string("%s/j%d-r%d-t%d.bin", S.parts, S.attempt, S.rank, tid);
    const mbs_journal_layout L = journal_layout(&S);
    mbs_journal_writer* w = path ? mbs_journal_create(path, &L, &e) : NULL;
    free(path);
    sample_run r;
    memset(&r, 0, sizeof(r));
    r.S = &S;
    r.st = mbs_state_create(S.sys);
    r.params = malloc(8 * ((size_t)S.np + 1));
    r.traj = malloc(8 * ((size_t)S.frame_values + 1));
    r.scalars = malloc(8 * ((size_t)S.nscal + 1));
    r.event_time = malloc(8 * ((size_t)S.nevents + 1));
    int ok = w && r.st && r.params && r.traj && r.scalars && r.event_time;
    if (!ok) {
#pragma omp critical(mbs_err)
      if (!err_thread) {
        err_thread = 1;
        terr = e.code ? e : (mbs_error){MBS_ERR_NO_MEMORY, "study", "out of memory", "", 0};
      }
    }
    double sync_t = now();
    while (ok && !g_stop) {
      long start, count;
      next_chunk(&S, &start, &count);
      if (start >= S.nsamples) break;
      for (long i = start; ok && i < start + count && i < S.nsamples && !g_stop; i++) {
        if (S.done[i >> 3] & (1u << (i & 7))) continue;
        r.index = i;
        r.stopped = 0;
        double wall;
        long steps;
        const int st = run_sample(&r, pristine, &wall, &steps);
        if (r.stopped || (g_stop && st != MBS_OK)) break;  // not recorded: redone on resume
        mbs_journal_record rec;
        memset(&rec, 0, sizeof(rec));
        rec.index = i;
        rec.status = st;
        rec.frames = r.frames;
        rec.wall = wall;
        rec.steps = steps;
        if (st != MBS_OK)
          snprintf(rec.message, sizeof(rec.message), "%s",
                   mbs_state_error(r.st)->message[0] ? mbs_state_error(r.st)->message
                                                      : mbs_status_text(st));
        rec.params = r.params;
        rec.traj = r.traj;
        rec.scalars = r.scalars;
        const double tio = now();
        if (mbs_journal_append(w, &rec, &e) != MBS_OK) ok = 0;
        if (ok && now() - sync_t >= S.spec->checkpoint_interval) {
          ok = mbs_journal_sync(w, &e) == MBS_OK;
          sync_t = now();
        }
        io_time += now() - tio;
        done_run++;
        failed_run += st != MBS_OK;
        const long global = count_done(&S, 1);
        if (S.rank == 0 && tid == 0 && opt->progress && now() - last_progress >= 0.5) {
          last_progress = now();
          opt->progress(opt->progress_user, S.done_before + global, S.nsamples);
        }
      }
      if (!ok) {
#pragma omp critical(mbs_err)
        if (!err_thread) {
          err_thread = 1;
          terr = e;
        }
      }
    }
    const double tio = now();
    if (w && mbs_journal_close(w, &e) != MBS_OK) {
#pragma omp critical(mbs_err)
      if (!err_thread) {
        err_thread = 1;
        terr = e;
      }
    }
    io_time += now() - tio;
    mbs_state_destroy(r.st);
    free(r.params);
    free(r.traj);
    free(r.scalars);
    free(r.event_time);
  }
  (void)last_sync;
  (void)todo;
  mbs_state_destroy(pristine);
  if (rc == MBS_OK && err_thread) {
    *err = terr;
    rc = terr.code ? terr.code : MBS_ERR_INTERNAL;
  }
  // everyone stops here; was the study stopped, did any rank fail?
  int stopped = g_stop != 0, bad = rc != MBS_OK;
  long sums[2] = {done_run, failed_run};
  if (S.use_mpi) {
    MPI_Win_unlock_all(S.win);
    // ranks that finish first wait without spinning: their cores go to rank 0's last samples
    // and to its writer thread
    int flags[2] = {stopped, bad};
    MPI_Request req[2];
    MPI_Iallreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req[0]);
    MPI_Iallreduce(MPI_IN_PLACE, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &req[1]);
    polite_wait(2, req);
    stopped = flags[0];
    bad = flags[1];
  }
  res.done = sums[0];
  res.failed = S.failed_before + sums[1];
  res.journal_time = io_time;
  if (S.use_mpi)
    MPI_Allreduce(MPI_IN_PLACE, &res.journal_time, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  res.stopped = stopped;
  if (rc == MBS_OK && bad)
    rc = MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "another rank failed; see its messages");
  if (rc == MBS_OK && stopped) {
    rc = MBS_FAIL(err, MBS_ERR_INTERRUPTED, S.parts,
                  "stopped by a signal after %ld of %ld samples; the completed samples are in "
                  "%s: run again with --resume to finish", S.done_before + res.done, S.nsamples,
                  S.parts);
  }
  if (S.rank == 0 && merger_running) {
    const double t0 = now();
    if (rc == MBS_OK) M.finish = 1;
    else M.stop = 1;
    pthread_join(M.thread, NULL);
    if (rc != MBS_OK && M.rc == MBS_OK) M.rc = MBS_ERR_INTERRUPTED;  // keep the journals
    const int mrc = merger_close(&M);
    if (rc == MBS_OK && mrc != MBS_OK) {
      *err = M.err;
      rc = mrc;
    }
    res.merge_time = now() - t0;
    res.merge_busy = M.busy;
    io_time += res.merge_time;
    if (rc == MBS_OK) res.failed = M.failed;
  }
  if (S.use_mpi) {
    // the other ranks wait for rank 0's file without spinning, leaving their cores to it
    int bad0 = rc != MBS_OK && S.rank == 0;
    MPI_Request req;
    MPI_Ibcast(&bad0, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    polite_wait(1, &req);
    MPI_Win_free(&S.win);
    if (bad0 && rc == MBS_OK)
      rc = MBS_FAIL(err, MBS_ERR_IO, "study", "rank 0 could not write the result file");
  }
  res.wall_time = now() - t_start;
  res.io_time = io_time;
  if (result) *result = res;
  free_study(&S);
  return rc;
}
