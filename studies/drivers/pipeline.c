// The pipeline study: OpenSim's tools chained per subject and trial — scale, inverse
// kinematics, inverse dynamics, static optimization, joint reactions —, each stage an OpenSim
// setup file made from a template, every (subject, trial) a sample run on the ranks and threads
// of the study engine with its journals, resume and fault isolation; optionally many draws of
// each with marker noise and marker placement errors (a Monte Carlo study around the
// pipeline), and with the model's parameters drawn per sample, whose spread gives bands per
// percent of the cycle.
//
//   model: generic.osim                  # the generic model (${generic_model})
//   pipeline:
//     subjects:                          # a list, or {folder: DIR, mass: {s01: 72.6, ...}}
//       - {name: s01, folder: data/s01, mass: 72.6, height: 1.8, trials: [walk]}
//     trials: [walk]                     # the trials of subjects that do not list theirs
//     stages:                            # setup templates (any of these, in this order)
//       scale: setups/scale.xml          #   ScaleTool
//       ik: setups/ik.xml                #   InverseKinematicsTool
//       id: setups/id.xml                #   InverseDynamicsTool
//       so: setups/so.xml                #   AnalyzeTool with StaticOptimization
//       jr: setups/jr.xml                #   AnalyzeTool with JointReaction
//     frames: 101                        # points of the cycle, 0 .. 100 %
//     draws: 1                           # samples per subject and trial (> 1 with noise)
//     seed: 1
//     noise: {markers: 0.002, placement: 0.005}   # m: white noise on every marker coordinate
//                                        # of every frame; a constant offset of each marker
//     keep: nominal                      # the work folders kept: nominal (draw 0), all, none
//   parameters:                          # optional: drawn for every sample (seed, sample)
//     - {path: /bodyset/femur_r/mass, scale: {type: normal, mean: 1, std: 0.05}}
//     - {path: /forceset/*/max_isometric_force, scale: {type: uniform, low: 0.8, high: 1.2}}
//
// Parameters are the model's (mbstudy model params): each sample's values go to every model the
// tools read (mbs_osim_options.param_values) — a `scale:` as the factor on that model's own
// value (the generic, a subject's or the scaled one), a `distribution:` as the value; the
// result file holds them per sample as any study's parameters.
//
// In the templates ${subject}, ${trial}, ${folder} (the subject's folder), ${mass}, ${height},
// ${generic_model}, ${model} (the scaled model after a scale stage, else the subject's `model`
// or the generic one), ${work} (the sample's folder), ${ik}, ${id} (the files those stages
// write) and ${draw} stand for their values; the chain sets where each tool reads the previous
// one's output (model_file, coordinates_file) and where it writes (results_directory, output
// files), so the templates are the setup files a lab already has, with ${folder} where they
// name the subject's files. The work folder of a sample is
// <output>.pipeline/<subject>/<trial>/draw<k>, holding the setup files made, the tools' logs and
// their OpenSim files.
//
// Per sample: trajectories at the cycle's frames (the inverse kinematics' time range mapped to
// 0 .. 100 %): ik/q (the generic model's coordinates, rad or m), id/generalized_forces
// (<coordinate>_moment or _force), so/activation (the muscles); results pipeline_subject,
// pipeline_trial, pipeline_draw and ik_marker_error_rms (the mean over frames of the RMS marker
// error). /pipeline holds the subjects and trials, and per subject and trial the nominal draw's
// OpenSim files as tables and, with several draws, the 5, 50 and 95 % bands of each trajectory.
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine.h"
#include "mbs/files.h"
#include "mbs/results.h"
#include "mbs/setup_template.h"
#include "mbs/table.h"

enum { ST_SCALE = 0, ST_IK, ST_ID, ST_SO, ST_JR, ST_N };
static const char* const stage_names[ST_N] = {"scale", "ik", "id", "so", "jr"};
enum { KEEP_NOMINAL = 0, KEEP_ALL, KEEP_NONE };
enum { PR_SUBJECT = 0, PR_TRIAL, PR_DRAW, PR_MARKER_RMS, PR_N };
static const char* const result_names[PR_N] = {"pipeline_subject", "pipeline_trial",
                                               "pipeline_draw", "ik_marker_error_rms"};
static const char* const result_units[PR_N] = {"1", "1", "1", "m"};
#define PIPELINE_STREAM_NOISE UINT64_C(0x5049504e4f495345)      // "PIPNOISE"
#define PIPELINE_STREAM_PLACEMENT UINT64_C(0x504950504c414345)  // "PIPPLACE"

typedef struct subject {
  char* name;
  char* folder;      // absolute
  char* model;       // absolute, or NULL
  double mass, height;
  char** trials;
  int ntrials;
} subject;

typedef struct pipeline {
  subject* subj;
  int nsubj;
  char* tmpl[ST_N];  // absolute template paths, NULL for stages not run
  int frames;
  long draws;
  long seed;
  double noise_markers, noise_placement;
  int keep;
  // planned
  long ncases;       // (subject, trial) pairs
  int* case_subj;
  int* case_trial;
  char* generic;     // the generic model's path
  char* workroot;    // <output>.pipeline
  int q_quant, id_quant, so_quant;
  int nq;
  char** id_labels;  // the inverse dynamics' columns of the generic model's coordinates
  int* rotational;   // per coordinate: degrees in the inverse kinematics' file
  int nmus;
  char** muscles;
  int first_result;
} pipeline;

static char* dup_str(const char* s) {
  if (!s) return NULL;
  char* d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

static void free_list(char** v, int n) {
  for (int i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

static char* base_name_of(const char* path) {
  const char* s = strrchr(path, '/');
  const char* b = s ? s + 1 : path;
  size_t n = strlen(b);
  while (n > 1 && b[n - 1] == '/') n--;
  char* r = malloc(n + 1);
  if (r) {
    memcpy(r, b, n);
    r[n] = 0;
  }
  return r;
}

// a path made absolute (the tools resolve paths against their setup files, which the chain
// writes into each sample's folder): *path replaced; 0, or -1 (out of memory)
static int absolute(char** path) {
  if (!*path || (*path)[0] == '/') return 0;
  char cwd[4096];
  if (!getcwd(cwd, sizeof(cwd))) return -1;
  char* a = mbs_format_string("%s/%s", cwd, *path);
  if (!a) return -1;
  free(*path);
  *path = a;
  return 0;
}

//---------------------------------- the spec section -------------------------------------------

static int cmp_str(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

// subjects: {folder: DIR, mass: {name: kg}}: every sub-folder of DIR a subject
static int subjects_from_folder(pipeline* p, const mbs_spec_section* s, char** trials,
                                int ntrials, mbs_error* err) {
  static const char* const keys[] = {"folder", "mass", "height"};
  int rc = mbs_spec_section_keys(s, keys, 3, err);
  char* dir = NULL;
  if (rc || (rc = mbs_spec_section_string(s, "folder", NULL, 1, &dir, err))) return rc;
  char pattern[4096];
  snprintf(pattern, sizeof(pattern), "%s/*/", dir);
  glob_t g;
  memset(&g, 0, sizeof(g));
  const int grc = glob(pattern, 0, NULL, &g);
  if (grc || g.gl_pathc == 0) {
    globfree(&g);
    rc = mbs_spec_section_fail(s, "folder", MBS_ERR_IO, err, "no subject folders in %s", dir);
    free(dir);
    return rc;
  }
  free(dir);
  qsort(g.gl_pathv, g.gl_pathc, sizeof(char*), cmp_str);
  p->subj = calloc(g.gl_pathc, sizeof(subject));
  if (!p->subj) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  mbs_spec_section masses, heights;
  const int has_mass = mbs_spec_section_has(s, "mass");
  const int has_height = mbs_spec_section_has(s, "height");
  if (!rc && has_mass) rc = mbs_spec_section_sub(s, "mass", &masses, err);
  if (!rc && has_height) rc = mbs_spec_section_sub(s, "height", &heights, err);
  for (size_t i = 0; !rc && i < g.gl_pathc; i++) {
    subject* u = &p->subj[p->nsubj++];
    u->folder = dup_str(g.gl_pathv[i]);
    if (u->folder && strlen(u->folder) > 1) u->folder[strlen(u->folder) - 1] = 0;
    if (absolute(&u->folder)) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
      break;
    }
    u->name = u->folder ? base_name_of(u->folder) : NULL;
    if (!u->name) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
      break;
    }
    u->mass = u->height = NAN;  // unless given for this subject
    if (has_mass && mbs_spec_section_has(&masses, u->name))
      rc = mbs_spec_section_number(&masses, u->name, NAN, 0, 1, NAN, 0, &u->mass, err);
    if (!rc && has_height && mbs_spec_section_has(&heights, u->name))
      rc = mbs_spec_section_number(&heights, u->name, NAN, 0, 1, NAN, 0, &u->height, err);
    u->trials = calloc((size_t)ntrials + 1, sizeof(char*));
    for (int k = 0; u->trials && k < ntrials; k++) u->trials[k] = dup_str(trials[k]);
    u->ntrials = ntrials;
  }
  globfree(&g);
  return rc;
}

static int read_subjects(pipeline* p, const mbs_spec_section* sec, char** trials, int ntrials,
                         mbs_error* err) {
  int n = 0, rc;
  if (!mbs_spec_section_has(sec, "subjects"))
    return mbs_spec_section_fail(sec, NULL, MBS_ERR_PARSE, err,
                                 "subjects: missing (a list of subjects, or {folder: DIR})");
  mbs_spec_section sub;
  mbs_error probe;
  if (mbs_spec_section_count(sec, "subjects", &n, &probe) != MBS_OK) {  // a mapping: a folder
    if ((rc = mbs_spec_section_sub(sec, "subjects", &sub, err))) return rc;
    return subjects_from_folder(p, &sub, trials, ntrials, err);
  }
  if (n < 1)
    return mbs_spec_section_fail(sec, "subjects", MBS_ERR_ARGUMENT, err, "no subjects");
  p->subj = calloc((size_t)n, sizeof(subject));
  if (!p->subj) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  static const char* const keys[] = {"name", "folder", "model", "mass", "height", "trials"};
  for (int i = 0; i < n; i++) {
    subject* u = &p->subj[p->nsubj++];
    u->mass = u->height = NAN;  // unless given
    if ((rc = mbs_spec_section_item(sec, "subjects", i, &sub, err)) ||
        (rc = mbs_spec_section_keys(&sub, keys, 6, err)) ||
        (rc = mbs_spec_section_string(&sub, "folder", NULL, 1, &u->folder, err)) ||
        (mbs_spec_section_has(&sub, "model") &&
         (rc = mbs_spec_section_string(&sub, "model", NULL, 1, &u->model, err))))
      return rc;
    if (mbs_spec_section_has(&sub, "mass") &&
        (rc = mbs_spec_section_number(&sub, "mass", NAN, 0, 1, NAN, 0, &u->mass, err)))
      return rc;
    if (mbs_spec_section_has(&sub, "height") &&
        (rc = mbs_spec_section_number(&sub, "height", NAN, 0, 1, NAN, 0, &u->height, err)))
      return rc;
    if (mbs_spec_section_has(&sub, "name")) {
      if ((rc = mbs_spec_section_string(&sub, "name", NULL, 0, &u->name, err))) return rc;
    } else if (!(u->name = base_name_of(u->folder))) {
      return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
    }
    for (int k = 0; k < i; k++)
      if (!strcmp(p->subj[k].name, u->name))
        return mbs_spec_section_fail(&sub, "name", MBS_ERR_ARGUMENT, err,
                                     "subject '%s' is listed twice", u->name);
    if (strchr(u->name, '/') || !*u->name || !strcmp(u->name, "..") || !strcmp(u->name, "."))
      return mbs_spec_section_fail(&sub, "name", MBS_ERR_ARGUMENT, err,
                                   "'%s' cannot name a subject's folder of results", u->name);
    if (mbs_spec_section_has(&sub, "trials")) {
      if ((rc = mbs_spec_section_names(&sub, "trials", &u->trials, &u->ntrials, err))) return rc;
    } else {
      u->trials = calloc((size_t)ntrials + 1, sizeof(char*));
      if (!u->trials) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
      for (int k = 0; k < ntrials; k++)
        if (!(u->trials[k] = dup_str(trials[k])))
          return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
      u->ntrials = ntrials;
    }
    if (u->ntrials < 1)
      return mbs_spec_section_fail(&sub, "trials", MBS_ERR_ARGUMENT, err,
                                   "subject '%s' has no trials (give its trials or "
                                   "pipeline.trials)", u->name);
    if (absolute(&u->folder) || absolute(&u->model))
      return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
    struct stat sb;
    if (stat(u->folder, &sb) || !S_ISDIR(sb.st_mode))
      return mbs_spec_section_fail(&sub, "folder", MBS_ERR_IO, err, "%s is not a folder",
                                   u->folder);
  }
  return MBS_OK;
}

static int pl_create(mbs_driver* d, const mbs_study_spec* spec, mbs_error* err) {
  const mbs_spec_section* sec = mbs_spec_find_section(spec, "pipeline");
  pipeline* p = calloc(1, sizeof(*p));
  if (!p) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  d->self = p;
  p->q_quant = p->id_quant = p->so_quant = -1;
  static const char* const keys[] = {"subjects", "trials", "stages", "frames", "draws",
                                     "seed",     "noise",  "keep"};
  int rc = mbs_spec_section_keys(sec, keys, 8, err);
  char** trials = NULL;
  int ntrials = 0;
  long frames = 101;
  if (!rc && mbs_spec_section_has(sec, "trials"))
    rc = mbs_spec_section_names(sec, "trials", &trials, &ntrials, err);
  if (!rc) rc = read_subjects(p, sec, trials, ntrials, err);
  free_list(trials, ntrials);
  if (!rc) rc = mbs_spec_section_integer(sec, "frames", 101, 2, 100000, &frames, err);
  if (!rc) rc = mbs_spec_section_integer(sec, "draws", 1, 1, 1000000000L, &p->draws, err);
  if (!rc) rc = mbs_spec_section_integer(sec, "seed", 1, 0, LONG_MAX, &p->seed, err);
  p->frames = (int)frames;
  static const char* const keeps[] = {"nominal", "all", "none"};
  if (!rc) rc = mbs_spec_section_choice(sec, "keep", keeps, 3, KEEP_NOMINAL, &p->keep, err);
  mbs_spec_section st;
  if (!rc) rc = mbs_spec_section_sub(sec, "stages", &st, err);
  if (!rc) rc = mbs_spec_section_keys(&st, stage_names, ST_N, err);
  int nstage = 0;
  for (int k = 0; !rc && k < ST_N; k++) {
    if (!mbs_spec_section_has(&st, stage_names[k])) continue;
    rc = mbs_spec_section_string(&st, stage_names[k], NULL, 1, &p->tmpl[k], err);
    if (!rc && absolute(&p->tmpl[k]))
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
    if (!rc && access(p->tmpl[k], R_OK))
      rc = mbs_spec_section_fail(&st, stage_names[k], MBS_ERR_IO, err, "%s: %s", p->tmpl[k],
                                 strerror(errno));
    nstage++;
  }
  if (!rc && nstage == 0)
    rc = mbs_spec_section_fail(&st, NULL, MBS_ERR_ARGUMENT, err,
                               "no stages (scale, ik, id, so, jr: setup templates)");
  if (!rc && mbs_spec_section_has(sec, "noise")) {
    mbs_spec_section nz;
    static const char* const nkeys[] = {"markers", "placement"};
    if (!(rc = mbs_spec_section_sub(sec, "noise", &nz, err)) &&
        !(rc = mbs_spec_section_keys(&nz, nkeys, 2, err)) &&
        !(rc = mbs_spec_section_number(&nz, "markers", 0, 0, 0, NAN, 0, &p->noise_markers, err)))
      rc = mbs_spec_section_number(&nz, "placement", 0, 0, 0, NAN, 0, &p->noise_placement, err);
    if (!rc && (p->noise_markers > 0 || p->noise_placement > 0) && !p->tmpl[ST_IK])
      rc = mbs_spec_section_fail(sec, "noise", MBS_ERR_ARGUMENT, err,
                                 "marker noise needs an ik stage (it perturbs its marker file)");
  }
  if (!rc && p->draws > 1 && p->noise_markers == 0 && p->noise_placement == 0 &&
      spec->nparams == 0)
    rc = mbs_spec_section_fail(sec, "draws", MBS_ERR_ARGUMENT, err,
                               "%ld draws without noise would all be the same: give "
                               "noise.markers or noise.placement, parameters to draw, or one "
                               "draw", p->draws);
  return rc;
}

//---------------------------------- the plan ---------------------------------------------------

// the muscles of a model (forces of kind "muscle"), in force order
static int model_muscles(const mbs_system* sys, char*** out, int* n) {
  *out = NULL;
  *n = 0;
  const int nf = mbs_system_nforce(sys);
  char** v = calloc((size_t)nf + 1, sizeof(char*));
  if (!v) return MBS_ERR_NO_MEMORY;
  for (int f = 0; f < nf; f++)
    if (!strcmp(mbs_force_kind(sys, f), "muscle") && !(v[(*n)++] = dup_str(mbs_force_name(sys, f))))
      return MBS_ERR_NO_MEMORY;
  *out = v;
  return MBS_OK;
}

static int pl_plan(mbs_driver* d, mbs_plan* P, mbs_error* err) {
  pipeline* p = d->self;
  const mbs_study_spec* sp = P->spec;
  if (!P->om)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, 0,
                         "pipeline: the model must be an OpenSim model (the generic model)");
  if (P->nquant > 0)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, 0,
                         "pipeline: a pipeline study takes no simulation outputs (its "
                         "trajectories are the tools' results)");
  // parameters: the model's own, drawn per sample and given to the models the tools read
  for (int j = 0; j < P->np; j++) {
    mbs_param_plan* q = &P->par[j];
    if (q->kind != MBS_PK_SYSTEM && !(q->kind == MBS_PK_SYSTEM_SET && q->ncontrols == 0))
      return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, q->spec ? q->spec->line : 0,
                           "parameters: '%s' is not a parameter of the model the tools read "
                           "(initial coordinates and excitations are not: the tools take the "
                           "motion from the data)", q->name);
    // a factor is drawn, stored and applied as the factor: each subject's model (generic,
    // scaled or its own) has its own value
    if (q->is_scale && q->kind == MBS_PK_SYSTEM) {
      q->base = 1;
      q->unit = "1 (factor on the model's value)";
    }
  }
  if (P->np > 0) {
    const int rc = mbs_plan_require_distributions(P, "a pipeline draws its values per sample",
                                                  err);
    if (rc) return rc;
  }
  p->generic = dup_str(sp->model_path);
  p->workroot = mbs_format_string("%s.pipeline", sp->output);
  if (!p->generic || !p->workroot || absolute(&p->generic) || absolute(&p->workroot))
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  for (int i = 0; i < p->nsubj; i++) p->ncases += p->subj[i].ntrials;
  p->case_subj = calloc((size_t)p->ncases + 1, sizeof(int));
  p->case_trial = calloc((size_t)p->ncases + 1, sizeof(int));
  if (!p->case_subj || !p->case_trial)
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  long c = 0;
  for (int i = 0; i < p->nsubj; i++)
    for (int k = 0; k < p->subj[i].ntrials; k++) {
      p->case_subj[c] = i;
      p->case_trial[c++] = k;
    }
  // the cycle's frames, 0 .. 100 %
  double* t = malloc((size_t)p->frames * sizeof(double));
  if (!t) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  for (int k = 0; k < p->frames; k++) t[k] = 100.0 * k / (p->frames - 1);
  int rc = mbs_plan_set_frames(P, p->frames, t, "% of the cycle", err);
  free(t);
  if (rc) return rc;
  // the trajectories
  p->nq = mbs_osim_ncoordinate(P->om);
  const char** qn = calloc((size_t)p->nq + 1, sizeof(char*));
  p->id_labels = calloc((size_t)p->nq + 1, sizeof(char*));
  p->rotational = calloc((size_t)p->nq + 1, sizeof(int));
  if (!qn || !p->id_labels || !p->rotational) {
    free(qn);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  }
  for (int i = 0; i < p->nq; i++) {
    const mbs_osim_coordinate* ci = mbs_osim_coordinate_info(P->om, i);
    qn[i] = ci->name;
    p->rotational[i] = ci->motion == MBS_OSIM_ROTATIONAL;
    p->id_labels[i] =
        mbs_format_string("%s_%s", ci->name, p->rotational[i] ? "moment" : "force");
    if (!p->id_labels[i]) rc = MBS_ERR_NO_MEMORY;
  }
  if (!rc && p->tmpl[ST_IK] && p->nq > 0) {
    rc = mbs_plan_add_driver_quantity(P, "ik/q", p->nq, qn, "rad or m", err);
    p->q_quant = rc >= 0 ? rc : -1;
    rc = rc >= 0 ? MBS_OK : rc;
  }
  free(qn);
  if (!rc && p->tmpl[ST_ID] && p->nq > 0) {
    rc = mbs_plan_add_driver_quantity(P, "id/generalized_forces", p->nq,
                                      (const char* const*)p->id_labels, "N m or N", err);
    p->id_quant = rc >= 0 ? rc : -1;
    rc = rc >= 0 ? MBS_OK : rc;
  }
  if (!rc && p->tmpl[ST_SO]) {
    if (model_muscles(P->sys, &p->muscles, &p->nmus))
      return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
    if (p->nmus > 0) {
      rc = mbs_plan_add_driver_quantity(P, "so/activation", p->nmus,
                                        (const char* const*)p->muscles, "1", err);
      p->so_quant = rc >= 0 ? rc : -1;
      rc = rc >= 0 ? MBS_OK : rc;
    }
  }
  if (rc) return rc;
  p->first_result = P->nresults;
  for (int k = 0; k < PR_N && !rc; k++) rc = mbs_plan_add_result(P, result_names[k], result_units[k], err);
  if (rc) return rc;
  P->nsamples = p->ncases * p->draws;
  if (!P->run_tool)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, 0,
                         "pipeline: this program cannot run OpenSim's tools (run the study with "
                         "`mbstudy run`)");
  char nb[64];
  snprintf(nb, sizeof(nb), "%ld", p->draws);
  if ((rc = mbs_plan_attribute(P, "pipeline_draws", nb, err))) return rc;
  if (mbs_make_dirs(p->workroot))
    return mbs_plan_fail(err, MBS_ERR_IO, sp, 0, "pipeline: cannot make %s: %s", p->workroot,
                         strerror(errno));
  return MBS_OK;
}

// a sample is (subject, trial, draw); the model's parameters, if any, are drawn independently
// for every sample (a pure function of the seed and the sample)
static void pl_point(const mbs_driver* d, const mbs_plan* P, long index, double* params) {
  const pipeline* p = d->self;
  if (P->np == 0) return;
  double* u = malloc((size_t)P->np * sizeof(double));
  if (!u) {
    for (int j = 0; j < P->np; j++) params[j] = NAN;
    return;
  }
  mbs_design_point(MBS_DESIGN_RANDOM, (uint64_t)p->seed, P->nsamples, index, P->np, u);
  mbs_plan_values_from_unit(P, u, params);
  free(u);
}

// the sample's parameter values for the tools' models: a drawn factor multiplies the value of
// the model the tool reads (scaled or not), a drawn value is the value
static int tool_params(const mbs_plan* P, const double* params, mbs_osim_param_value** out) {
  *out = NULL;
  if (P->np == 0) return MBS_OK;
  mbs_osim_param_value* v = calloc((size_t)P->np, sizeof(*v));
  if (!v) return MBS_ERR_NO_MEMORY;
  for (int j = 0; j < P->np; j++) {
    const mbs_param_plan* q = &P->par[j];
    v[j].path = q->spec->path;
    v[j].component = q->spec->component;
    v[j].value = params[j];
    v[j].is_scale = q->is_scale;
  }
  *out = v;
  return MBS_OK;
}

//---------------------------------- one sample -------------------------------------------------

// the last line of a tool's log that is not a warning nor progress, for a message
static void last_error_line(const char* log, char* out, size_t size) {
  out[0] = 0;
  for (const char* line = log; line && *line;) {
    const char* end = strchr(line, '\n');
    const size_t n = end ? (size_t)(end - line) : strlen(line);
    if (n > 0 && !strstr(line, "warning:") && strncmp(line, "progress", 8) &&
        (!strstr(line, "wrote ") || strstr(line, ": ")))
      snprintf(out, size, "%.*s", (int)(n < size - 1 ? n : size - 1), line);
    line = end ? end + 1 : NULL;
  }
}

// the first file matching dir/pattern (malloc'd), or NULL
static char* find_file(const char* dir, const char* pattern) {
  char pat[4096];
  snprintf(pat, sizeof(pat), "%s/%s", dir, pattern);
  glob_t g;
  memset(&g, 0, sizeof(g));
  char* r = NULL;
  if (!glob(pat, 0, NULL, &g) && g.gl_pathc > 0) r = dup_str(g.gl_pathv[0]);
  globfree(&g);
  return r;
}

// the inverse kinematics' marker file perturbed for draw r (white noise on every coordinate of
// every frame, a constant offset of each marker), written to `out`; set in *set as marker_file
static int noisy_markers(const pipeline* p, const mbs_sample* r, const char* src,
                         const char* out, char* msg, size_t size) {
  mbs_table* t = NULL;
  mbs_error e;
  if (mbs_table_read_trc(src, &t, &e)) {
    snprintf(msg, size, "ik: the marker file to perturb: %s", e.message);
    return e.code;
  }
  double unit = 1;  // the file's units per meter
  if (t->units && !strcmp(t->units, "mm")) unit = 1000;
  else if (t->units && !strcmp(t->units, "cm")) unit = 100;
  mbs_rng place = mbs_rng_make((uint64_t)p->seed, (uint64_t)r->index, PIPELINE_STREAM_PLACEMENT);
  mbs_rng white = mbs_rng_make((uint64_t)p->seed, (uint64_t)r->index, PIPELINE_STREAM_NOISE);
  double* off = calloc(3 * (size_t)t->nmarkers + 1, sizeof(double));
  if (!off) {
    mbs_table_free(t);
    snprintf(msg, size, "ik: out of memory");
    return MBS_ERR_NO_MEMORY;
  }
  for (int k = 0; k < 3 * t->nmarkers; k++)
    off[k] = p->noise_placement * unit * mbs_rng_normal(&place);
  for (int row = 0; row < t->nrow; row++)
    for (int k = 0; k < 3 * t->nmarkers; k++) {
      double* v = &t->data[(size_t)row * t->ncol + 1 + k];
      const double w = p->noise_markers * unit * mbs_rng_normal(&white);  // drawn for NaN too
      if (isfinite(*v)) *v += off[k] + w;
    }
  free(off);
  const int rc = mbs_table_write_trc(t, out, &e);
  if (rc) snprintf(msg, size, "ik: the marker file to perturb: %s", e.message);
  mbs_table_free(t);
  return rc;
}

// the columns `labels` of table t at the cycle's frames (the range [t0, t1] mapped to 0 .. 100 %,
// linear interpolation; a column absent, or a frame outside the table's rows: NaN); scale[j]
// multiplies column j (NULL: 1)
static void resample(const mbs_table* t, double t0, double t1, int frames, int ncomp,
                     const char* const* labels, const double* scale, double* out) {
  for (int j = 0; j < ncomp; j++) {
    const int c = mbs_table_column(t, labels[j]);
    for (int k = 0; k < frames; k++) {
      double v = NAN;
      const double tk = t0 + (t1 - t0) * k / (frames - 1);
      if (c > 0 && t->nrow > 0) {
        int lo = 0, hi = t->nrow - 1;
        if (tk >= mbs_table_get(t, 0, 0) - 1e-9 && tk <= mbs_table_get(t, hi, 0) + 1e-9) {
          while (hi - lo > 1) {
            const int mid = (lo + hi) / 2;
            if (mbs_table_get(t, mid, 0) <= tk) lo = mid;
            else hi = mid;
          }
          const double ta = mbs_table_get(t, lo, 0), tb = mbs_table_get(t, hi, 0);
          const double w = tb > ta ? fmin(fmax((tk - ta) / (tb - ta), 0), 1) : 0;
          v = (1 - w) * mbs_table_get(t, lo, c) + w * mbs_table_get(t, hi, c);
        }
      }
      out[(size_t)k * ncomp + j] = scale ? v * scale[j] : v;
    }
  }
}

// run one stage: its setup made from the template, the tool run, its log kept in the work
// folder; 0, or the status with the reason in msg
static int run_stage(const pipeline* p, const mbs_plan* P, const mbs_osim_param_value* params,
                     int stage, const char* work, int nvars, const char* const* names,
                     const char* const* values, int nset, const char* const* paths,
                     const char* const* set_values, char* msg, size_t size) {
  char setup[4096], logpath[4096];
  snprintf(setup, sizeof(setup), "%s/%s_setup.xml", work, stage_names[stage]);
  snprintf(logpath, sizeof(logpath), "%s/%s.log", work, stage_names[stage]);
  mbs_error e;
  int rc = mbs_setup_template_write(p->tmpl[stage], nvars, names, values, nset, paths,
                                    set_values, setup, &e);
  if (rc) {
    snprintf(msg, size, "%s: %s", stage_names[stage], e.message);
    return rc;
  }
  char* text = NULL;
  size_t len = 0;
  FILE* log = open_memstream(&text, &len);
  if (!log) {
    snprintf(msg, size, "%s: out of memory", stage_names[stage]);
    return MBS_ERR_NO_MEMORY;
  }
  const int trc = P->run_tool(P->run_tool_user, setup, work, params, params ? P->np : 0, log);
  fclose(log);
  FILE* f = fopen(logpath, "w");
  if (f) {
    fputs(text ? text : "", f);
    fclose(f);
  }
  if (trc) {
    char line[400];
    last_error_line(text, line, sizeof(line));
    snprintf(msg, size, "%s: %s", stage_names[stage], line[0] ? line : "the tool failed");
    rc = MBS_ERR_IO;
  }
  free(text);
  return rc;
}

static int pl_evaluate(const mbs_driver* d, mbs_sample* r) {
  const pipeline* p = d->self;
  const mbs_plan* P = r->P;
  const long c = r->index / p->draws, draw = r->index % p->draws;
  const subject* u = &p->subj[p->case_subj[c]];
  const char* trial = u->trials[p->case_trial[c]];
  double* res = r->results + p->first_result;
  res[PR_SUBJECT] = p->case_subj[c];
  res[PR_TRIAL] = p->case_trial[c];
  res[PR_DRAW] = (double)draw;
  char work[4096], pre[600], ik[4200], id[4200], model[4200], markers[4200];
  snprintf(work, sizeof(work), "%s/%s/%s/draw%ld", p->workroot, u->name, trial, draw);
  snprintf(pre, sizeof(pre), "subject %s, trial %s%s", u->name, trial, p->draws > 1 ? "" : "");
  if (p->draws > 1) snprintf(pre + strlen(pre), sizeof(pre) - strlen(pre), ", draw %ld", draw);
  if (mbs_make_dirs(work)) {
    snprintf(r->message, sizeof(r->message), "%s: cannot make %s: %s", pre, work,
             strerror(errno));
    return MBS_ERR_IO;
  }
  snprintf(ik, sizeof(ik), "%s/ik.mot", work);
  snprintf(id, sizeof(id), "%s/id.sto", work);
  snprintf(model, sizeof(model), "%s", u->model ? u->model : p->generic);
  char mass[64], height[64], drawtxt[32];
  if (isnan(u->mass)) snprintf(mass, sizeof(mass), "-1");
  else snprintf(mass, sizeof(mass), "%.17g", u->mass);
  if (isnan(u->height)) snprintf(height, sizeof(height), "-1");
  else snprintf(height, sizeof(height), "%.17g", u->height);
  snprintf(drawtxt, sizeof(drawtxt), "%ld", draw);
  const char* names[] = {"subject", "trial", "folder", "mass", "height", "generic_model",
                         "model", "work", "ik", "id", "draw"};
  const char* values[] = {u->name, trial, u->folder, mass, height, p->generic, model, work, ik,
                          id, drawtxt};
  const int nvars = 11;
  char msg[sizeof(r->message)];
  mbs_osim_param_value* tp = NULL;  // the drawn model parameters
  int rc = tool_params(P, r->params, &tp);
  if (rc) snprintf(msg, sizeof(msg), "out of memory");
  // scale: the model the rest of the chain uses
  if (!rc && p->tmpl[ST_SCALE]) {
    char scaled[4200], placed[4200];
    snprintf(scaled, sizeof(scaled), "%s/scaled.osim", work);
    snprintf(placed, sizeof(placed), "%s/scaled_placed.osim", work);
    const char* paths[] = {"ModelScaler/output_model_file", "MarkerPlacer/output_model_file"};
    const char* vals[] = {scaled, placed};
    rc = run_stage(p, P, tp, ST_SCALE, work, nvars, names, values, 2, paths, vals, msg, sizeof(msg));
    if (!rc) snprintf(model, sizeof(model), "%s", access(placed, R_OK) ? scaled : placed);
    if (!rc && access(model, R_OK)) {
      snprintf(msg, sizeof(msg), "scale: no scaled model written (its ModelScaler or "
               "MarkerPlacer must be applied)");
      rc = MBS_ERR_IO;
    }
  }
  // inverse kinematics, on perturbed markers for the draws of a Monte Carlo study
  if (!rc && p->tmpl[ST_IK]) {
    markers[0] = 0;
    if (p->noise_markers > 0 || p->noise_placement > 0) {
      // the template's marker file: made once without the sets to read it
      char probe[4200];
      snprintf(probe, sizeof(probe), "%s/ik_template.xml", work);
      mbs_error e;
      rc = mbs_setup_template_write(p->tmpl[ST_IK], nvars, names, values, 0, NULL, NULL, probe,
                                    &e);
      char* src = rc ? NULL : mbs_setup_element_text(probe, "marker_file", &e);
      if (rc || !src) {
        snprintf(msg, sizeof(msg), "ik: %s", rc ? e.message : "the template has no marker_file");
        rc = rc ? rc : MBS_ERR_PARSE;
      } else {
        char full[4200];
        if (src[0] == '/') snprintf(full, sizeof(full), "%s", src);
        else snprintf(full, sizeof(full), "%s/%s", work, src);
        snprintf(markers, sizeof(markers), "%s/markers_draw%ld.trc", work, draw);
        rc = noisy_markers(p, r, full, markers, msg, sizeof(msg));
      }
      free(src);
      remove(probe);
    }
    if (!rc) {
      const char* paths[] = {"model_file", "output_motion_file", "results_directory",
                             "marker_file"};
      const char* vals[] = {model, ik, work, markers};
      rc = run_stage(p, P, tp, ST_IK, work, nvars, names, values, markers[0] ? 4 : 3, paths, vals,
                     msg, sizeof(msg));
    }
  }
  // inverse dynamics and the analyses, on the inverse kinematics' coordinates
  for (int st = ST_ID; !rc && st < ST_N; st++) {
    if (!p->tmpl[st]) continue;
    const char* paths[] = {"model_file", "results_directory", "output_gen_force_file",
                           "coordinates_file"};
    const char* vals[] = {model, work, "id.sto", ik};
    int nset = p->tmpl[ST_IK] ? 4 : 3;
    if (st != ST_ID) {  // the AnalyzeTool has no output_gen_force_file
      paths[2] = paths[3];
      vals[2] = vals[3];
      nset--;
    }
    rc = run_stage(p, P, tp, st, work, nvars, names, values, nset, paths, vals, msg, sizeof(msg));
  }
  // the results at the cycle's frames
  mbs_table *tq = NULL, *tid = NULL, *tso = NULL, *terr = NULL;
  mbs_error e;
  double t0 = NAN, t1 = NAN;
  if (!rc && p->tmpl[ST_IK]) {
    if ((rc = mbs_table_read_sto(ik, &tq, &e))) {
      snprintf(msg, sizeof(msg), "ik: %s", e.message);
    } else if (tq->nrow < 2) {
      snprintf(msg, sizeof(msg), "ik: %s has %d rows (the cycle needs two at least)", ik,
               tq->nrow);
      rc = MBS_ERR_PARSE;
    } else {
      t0 = mbs_table_get(tq, 0, 0);
      t1 = mbs_table_get(tq, tq->nrow - 1, 0);
    }
  }
  if (!rc && p->tmpl[ST_ID] && (rc = mbs_table_read_sto(id, &tid, &e)))
    snprintf(msg, sizeof(msg), "id: %s", e.message);
  if (!rc && isnan(t0) && tid && tid->nrow >= 2) {  // no inverse kinematics: the ID's range
    t0 = mbs_table_get(tid, 0, 0);
    t1 = mbs_table_get(tid, tid->nrow - 1, 0);
  }
  if (!rc && p->so_quant >= 0) {
    char* so = find_file(work, "*_StaticOptimization_activation.sto");
    if (!so) {
      snprintf(msg, sizeof(msg), "so: no *_StaticOptimization_activation.sto written in %s",
               work);
      rc = MBS_ERR_IO;
    } else if ((rc = mbs_table_read_sto(so, &tso, &e))) {
      snprintf(msg, sizeof(msg), "so: %s", e.message);
    }
    free(so);
    if (!rc && isnan(t0) && tso->nrow >= 2) {
      t0 = mbs_table_get(tso, 0, 0);
      t1 = mbs_table_get(tso, tso->nrow - 1, 0);
    }
  }
  if (!rc) {
    char** qn = calloc((size_t)p->nq + 1, sizeof(char*));
    double* scale = calloc((size_t)p->nq + 1, sizeof(double));
    if (!qn || !scale) {
      snprintf(msg, sizeof(msg), "out of memory");
      rc = MBS_ERR_NO_MEMORY;
    }
    for (int i = 0; !rc && i < p->nq; i++) {
      qn[i] = (char*)mbs_osim_coordinate_info(P->om, i)->name;
      scale[i] = tq && tq->in_degrees && p->rotational[i] ? M_PI / 180 : 1;
    }
    if (!rc && p->q_quant >= 0)
      resample(tq, t0, t1, p->frames, p->nq, (const char* const*)qn, scale,
               r->traj + P->quant[p->q_quant].offset);
    if (!rc && p->id_quant >= 0)
      resample(tid, t0, t1, p->frames, p->nq, (const char* const*)p->id_labels, NULL,
               r->traj + P->quant[p->id_quant].offset);
    if (!rc && p->so_quant >= 0)
      resample(tso, t0, t1, p->frames, p->nmus, (const char* const*)p->muscles, NULL,
               r->traj + P->quant[p->so_quant].offset);
    free(qn);
    free(scale);
    if (!rc) r->frames = p->frames;
  }
  if (!rc && p->tmpl[ST_IK]) {  // the marker errors' mean RMS
    char* ef = find_file(work, "*_ik_marker_errors.sto");
    if (ef && !mbs_table_read_sto(ef, &terr, &e)) {
      const int col = mbs_table_column(terr, "marker_error_RMS");
      double sum = 0;
      for (int k = 0; col > 0 && k < terr->nrow; k++) sum += mbs_table_get(terr, k, col);
      if (col > 0 && terr->nrow > 0) res[PR_MARKER_RMS] = sum / terr->nrow;
    }
    free(ef);
  }
  mbs_table_free(tq);
  mbs_table_free(tid);
  mbs_table_free(tso);
  mbs_table_free(terr);
  free(tp);
  if (rc) {  // the folder named as from the result file's (the same on every run and rank)
    const char* rel = strstr(work, ".pipeline/");
    const char* slash = rel ? rel : work;
    while (rel && slash > work && slash[-1] != '/') slash--;
    snprintf(r->message, sizeof(r->message), "%s: %s (files in %s)", pre, msg, slash);
  }
  else if (p->keep == KEEP_NONE || (p->keep == KEEP_NOMINAL && draw > 0)) mbs_remove_tree(work);
  return rc;
}

//---------------------------------- the study's own results ------------------------------------

// an OpenSim file of a sample's folder as /pipeline/<subject>/<trial>/files/<stem>: the table's
// rows with its column labels as a dimension scale, its file name and its header's name line
static int store_table(mbs_results* rs, const char* group, const char* file, mbs_error* err) {
  mbs_table* t = NULL;
  mbs_error e;
  const int is_trc = strlen(file) > 4 && !strcasecmp(file + strlen(file) - 4, ".trc");
  if ((is_trc ? mbs_table_read_trc(file, &t, &e) : mbs_table_read_sto(file, &t, &e)) != MBS_OK)
    return MBS_OK;  // not a table (a log, a model): left on disk
  char* stem = base_name_of(file);
  char *name = NULL, *labels = NULL;
  int rc = stem ? MBS_OK : MBS_ERR_NO_MEMORY;
  if (!rc) {
    char* dot = strrchr(stem, '.');
    if (dot) *dot = 0;
    name = mbs_format_string("%s/%s", group, stem);
    labels = mbs_format_string("%s/%s_columns", group, stem);
    if (!name || !labels) rc = MBS_ERR_NO_MEMORY;
  }
  const long dims[2] = {t->nrow, t->ncol};
  if (!rc) rc = mbs_results_write(rs, name, 2, dims, t->data, NULL, err);
  if (!rc) rc = mbs_results_strings(rs, labels, t->ncol, (const char* const*)t->labels, 1, err);
  if (!rc) rc = mbs_results_attach(rs, name, 1, labels, "column", err);
  if (!rc) rc = mbs_results_attribute(rs, name, "in_degrees", t->in_degrees ? "yes" : "no", err);
  // what `mbstudy export --pipeline` needs to write the file back as OpenSim reads it
  if (!rc) {
    const char* base = strrchr(file, '/');
    rc = mbs_results_attribute(rs, name, "file", base ? base + 1 : file, err);
  }
  if (!rc) rc = mbs_results_attribute(rs, name, "table_name", t->name ? t->name : "", err);
  if (!rc) {  // the other header lines ("key=value" or text), one per line, and the version
    size_t len = 1;
    for (int i = 0; i < t->nmeta; i++)
      len += strlen(t->meta[i].value) + (t->meta[i].key ? strlen(t->meta[i].key) + 1 : 0) + 1;
    char* header = calloc(len, 1);
    if (!header) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
    for (int i = 0; header && i < t->nmeta; i++) {
      if (t->meta[i].key) strcat(strcat(header, t->meta[i].key), "=");
      strcat(strcat(header, t->meta[i].value), i + 1 < t->nmeta ? "\n" : "");
    }
    if (!rc) rc = mbs_results_attribute(rs, name, "header", header, err);
    free(header);
    if (!rc) rc = mbs_results_attribute(rs, name, "header_version", t->version == 3 ? "3" : "1",
                                        err);
  }
  free(stem);
  free(name);
  free(labels);
  mbs_table_free(t);
  return rc;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// the value at percentile q of n sorted numbers (linear between order statistics)
static double percentile(const double* v, int n, double q) {
  if (n < 1) return NAN;
  const double h = (n - 1) * q / 100;
  const int lo = (int)floor(h);
  const int hi = lo + 1 < n ? lo + 1 : lo;
  return v[lo] + (h - lo) * (v[hi] - v[lo]);
}

static int pl_finish(mbs_driver* d, const mbs_plan* P, const char* path, mbs_error* err) {
  pipeline* p = d->self;
  mbs_results* rs = mbs_results_open(path, err);
  if (!rs) return err->code;
  int rc = mbs_results_group(rs, "pipeline", 1, err);
  char** sn = calloc((size_t)p->nsubj + 1, sizeof(char*));
  for (int i = 0; sn && i < p->nsubj; i++) sn[i] = p->subj[i].name;
  if (!rc) rc = sn ? mbs_results_strings(rs, "pipeline/subjects", p->nsubj,
                                         (const char* const*)sn, 0, err)
                   : MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  free(sn);
  // per subject and trial: the nominal draw's OpenSim files, when kept
  for (long c = 0; !rc && c < p->ncases; c++) {
    const subject* u = &p->subj[p->case_subj[c]];
    const char* trial = u->trials[p->case_trial[c]];
    char group[1024], pat[4200];
    snprintf(group, sizeof(group), "pipeline/%s/%s", u->name, trial);
    if ((rc = mbs_results_group(rs, group, 1, err))) break;
    snprintf(pat, sizeof(pat), "%s/%s/%s/draw0/*.{mot,sto}", p->workroot, u->name, trial);
    glob_t g;
    memset(&g, 0, sizeof(g));
    if (!glob(pat, GLOB_BRACE, NULL, &g) && g.gl_pathc > 0) {
      char files[1100];
      snprintf(files, sizeof(files), "%s/files", group);
      rc = mbs_results_group(rs, files, 1, err);
      for (size_t k = 0; !rc && k < g.gl_pathc; k++) rc = store_table(rs, files, g.gl_pathv[k], err);
    }
    globfree(&g);
  }
  // with several draws: each trajectory's 5, 50 and 95 % bands per subject and trial
  static const double pct[3] = {5, 50, 95};
  double* col = calloc((size_t)p->draws + 1, sizeof(double));
  if (!rc && !col) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
  for (int qi = 0; !rc && p->draws > 1 && qi < P->nquant; qi++) {
    const mbs_quantity_plan* q = &P->quant[qi];
    char name[1200];
    snprintf(name, sizeof(name), "trajectories/%s", q->name);
    const long per = (long)P->nframes * q->ncomp;
    double* all = NULL;  // samples x frames x components: case c's are rows c * draws ..
    long dims[4];
    int rank = 0;
    if ((rc = mbs_results_read(rs, name, &all, dims, &rank, err))) break;
    double* band = malloc(3 * (size_t)per * sizeof(double) + 1);
    if (!band) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "pipeline", "out of memory");
    for (long c = 0; !rc && c < p->ncases; c++) {
      const double* rows = all + c * p->draws * per;
      for (long v = 0; v < per; v++) {
        int n = 0;
        for (long k = 0; k < p->draws; k++)
          if (isfinite(rows[k * per + v])) col[n++] = rows[k * per + v];
        qsort(col, (size_t)n, sizeof(double), cmp_double);
        for (int j = 0; j < 3; j++) band[j * per + v] = percentile(col, n, pct[j]);
      }
      const subject* u = &p->subj[p->case_subj[c]];
      char bname[1400];
      snprintf(bname, sizeof(bname), "pipeline/%s/%s/bands/%s", u->name,
               u->trials[p->case_trial[c]], q->name);
      const long bdims[3] = {3, P->nframes, q->ncomp};
      rc = mbs_results_write(rs, bname, 3, bdims, band, q->unit, err);
      if (!rc) rc = mbs_results_attribute(rs, bname, "percentiles", "5 50 95", err);
    }
    free(band);
    free(all);
  }
  free(col);
  const int crc = mbs_results_close(rs, rc ? NULL : err);
  return rc ? rc : crc;
}

static void pl_destroy(mbs_driver* d) {
  pipeline* p = d->self;
  if (!p) return;
  for (int i = 0; i < p->nsubj; i++) {
    free(p->subj[i].name);
    free(p->subj[i].folder);
    free(p->subj[i].model);
    free_list(p->subj[i].trials, p->subj[i].ntrials);
  }
  free(p->subj);
  for (int k = 0; k < ST_N; k++) free(p->tmpl[k]);
  free(p->case_subj);
  free(p->case_trial);
  free(p->generic);
  free(p->workroot);
  free_list(p->id_labels, p->nq);
  free(p->rotational);
  free_list(p->muscles, p->nmus);
  free(p);
  d->self = NULL;
}

const mbs_driver_ops mbs_driver_pipeline = {
    .name = "pipeline",
    .create = pl_create,
    .plan = pl_plan,
    .point = pl_point,
    .evaluate = pl_evaluate,
    .finish = pl_finish,
    .destroy = pl_destroy,
};
