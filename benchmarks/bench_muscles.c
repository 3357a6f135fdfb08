// bench_muscles: how fast mbstudy simulates muscle-driven OpenSim models.
//
// Each model is read once; every run then starts a fresh State in the model's default pose
// (mbs_osim_default_state: fibers in equilibrium), sets every muscle's control (its excitation)
// to a constant, and simulates `duration` seconds with mbs_simulate (RK-Merson by default,
// reports at a fixed interval that record the pelvis height). Only mbs_simulate is timed.
// Runs are interleaved (model A exc 1, A exc 2, B exc 1, ..., then again), and the table gives
// the median and the range of the repeats. Coordinate actuators and other non-muscle
// actuators keep their default controls.
//
//   OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 bench_muscles [options] MODEL.osim [MODEL.osim ...]
//     --excitation LIST   constant excitations, comma separated (default 0.05,0.3)
//     --accuracy A        integrator accuracy (default 1e-3)
//     --duration T        simulated seconds (default 1)
//     --repeats N         runs of each model and excitation (default 5)
//     --integrator LIST   integrators, comma separated, each NAME or NAME:ACCURACY (default
//                         rk_merson; names as `mbstudy` takes them); several are interleaved
//     --reference-accuracy R  each model and excitation is first simulated (not timed) by
//                         dormand_prince at accuracy R (default 1e-9; 0: not), and the table
//                         gives each run's largest coordinate error at the end against it
//     --report DT         report interval, s (default 0.01; 0: after every step)
//     --trace DT          print the pelvis height every DT s of the first repeat (default 0.1;
//                         0: none)
//     --quiet             no line per run, only the tables
//
// Exit status: 0 when every run reached the end time, 1 when a model could not be read or a run
// failed (the table says which), 2 for bad arguments.
#define _POSIX_C_SOURCE 200809L  // clock_gettime, CLOCK_PROCESS_CPUTIME_ID, uname

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "mbs/mbs.h"
#include "mbs/osim.h"

#ifndef MBS_BENCH_BUILD_INFO
#define MBS_BENCH_BUILD_INFO "(unknown build)"
#endif

#define MAX_MODELS 8
#define MAX_EXC 8
#define MAX_TRACE 1001
#define MAX_INTEG 8

typedef struct run_result {
  int ok;
  double wall, cpu;      // s
  double t_end;
  mbs_integrator_stats is;
  double pelvis0, pelvis_end, pelvis_min;
  double act0, act_end;  // mean muscle activation at the start and at the end
  int clamped_end;       // muscles whose fibers are clamped at their minimum length at the end
  double qerr;           // largest |q - q_reference| at the end (rad or m); NAN without one
} run_result;

typedef struct model_entry {
  const char* path;
  mbs_osim_model* m;
  int pelvis;            // body index, or -1
  int nmuscle_controls, nother_controls;
  double other_lo, other_hi;  // range of the other actuators' default controls
} model_entry;

// what the report function records
typedef struct recorder {
  const model_entry* me;
  double trace_dt;
  int ntrace;
  double trace_t[MAX_TRACE], trace_h[MAX_TRACE];
  double h0, h_end, h_min;
  int have0;
} recorder;

static double now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double pelvis_height(const mbs_system* sys, const mbs_state* st, int body) {
  double R[9], p[3];
  if (body < 0 || mbs_get_body_transform(sys, st, body, R, p) != MBS_OK) return NAN;
  return p[1];  // OpenSim models: y up
}

static int record(const mbs_system* sys, mbs_state* st, void* user) {
  recorder* r = user;
  const double h = pelvis_height(sys, st, r->me->pelvis);
  const double t = mbs_state_time(st);
  if (!r->have0) {
    r->h0 = h;
    r->h_min = h;
    r->have0 = 1;
  }
  r->h_end = h;
  if (h < r->h_min) r->h_min = h;
  if (r->trace_dt > 0 && r->ntrace < MAX_TRACE) {
    const double next = r->ntrace * r->trace_dt;
    if (t >= next - 1e-9) {
      r->trace_t[r->ntrace] = t;
      r->trace_h[r->ntrace] = h;
      r->ntrace++;
    }
  }
  return 0;
}

static int is_muscle(const mbs_system* sys, int force) {
  return force >= 0 && !strcmp(mbs_force_kind(sys, force), "muscle");
}

// one run; q_ref: the reference's coordinates at the end (NULL: none), q_end: where to put this
// run's (NULL: nowhere)
static int run_once(const model_entry* me, double excitation, const mbs_simulation_options* o,
                    double duration, recorder* rec, run_result* out, const double* q_ref,
                    double* q_end) {
  const mbs_system* sys = mbs_osim_system(me->m);
  memset(out, 0, sizeof(*out));
  mbs_state* st = mbs_state_create(sys);
  if (!st) {
    fprintf(stderr, "bench_muscles: %s: no memory for a State\n", me->path);
    return 1;
  }
  double* c = mbs_state_upd_controls(st);
  for (int k = 0; k < mbs_system_ncontrol(sys); k++)
    if (is_muscle(sys, mbs_control_force(sys, k))) c[k] = excitation;
  if (mbs_osim_default_state(me->m, st) != MBS_OK ||
      mbs_realize(sys, st, MBS_STAGE_DYNAMICS) != MBS_OK) {
    fprintf(stderr, "bench_muscles: %s: default state: %s\n", me->path,
            mbs_state_error(st)->message);
    mbs_state_destroy(st);
    return 1;
  }
  // every muscle is driven by the constant excitation (not by a function of time)
  int nm = 0;
  for (int f = 0; f < mbs_system_nforce(sys); f++) {
    if (!is_muscle(sys, f)) continue;
    mbs_muscle_report mr = {.excitation = NAN};
    if (mbs_get_muscle_report(sys, st, f, &mr) != MBS_OK || mr.excitation != excitation) {
      fprintf(stderr, "bench_muscles: %s: muscle '%s' does not take the excitation %g (has %g)\n",
              me->path, mbs_force_name(sys, f), excitation, mr.excitation);
      mbs_state_destroy(st);
      return 1;
    }
    out->act0 += mr.activation;
    nm++;
  }
  out->act0 = nm > 0 ? out->act0 / nm : NAN;
  mbs_simulation_result res;
  const double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
  const int rc = mbs_simulate(sys, st, duration, o, NULL, 0, record, rec, &res);
  const double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
  out->wall = w1 - w0;
  out->cpu = c1 - c0;
  out->t_end = res.t_end;
  out->is = res.integrator;
  out->pelvis0 = rec->h0;
  out->pelvis_end = rec->h_end;
  out->pelvis_min = rec->h_min;
  out->ok = rc == MBS_OK && fabs(res.t_end - duration) < 1e-9;
  if (rc != MBS_OK) {
    fprintf(stderr, "bench_muscles: %s, excitation %g: stopped at t = %g s: %s\n", me->path,
            excitation, res.t_end, mbs_state_error(st)->message);
  } else {
    // (not timed) the muscles at the end
    int n = 0;
    if (mbs_realize(sys, st, MBS_STAGE_DYNAMICS) != MBS_OK) n = -1;
    for (int f = 0; n >= 0 && f < mbs_system_nforce(sys); f++) {
      mbs_muscle_report mr;
      if (!is_muscle(sys, f) || mbs_get_muscle_report(sys, st, f, &mr) != MBS_OK) continue;
      out->act_end += mr.activation;
      out->clamped_end += mr.clamped != 0;
      n++;
    }
    out->act_end = n > 0 ? out->act_end / n : NAN;
  }
  out->qerr = NAN;
  if (out->ok && q_ref) {
    out->qerr = 0;
    for (int k = 0; k < mbs_system_nq(sys); k++)
      out->qerr = fmax(out->qerr, fabs(mbs_state_q(st)[k] - q_ref[k]));
  }
  if (out->ok && q_end)
    memcpy(q_end, mbs_state_q(st), (size_t)mbs_system_nq(sys) * sizeof(double));
  mbs_state_destroy(st);
  return 0;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// median of n values (sorted copy)
static double median(const double* v, int n) {
  double s[256];
  if (n <= 0) return NAN;
  if (n > 256) n = 256;
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static void range(const double* v, int n, double* lo, double* hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int i = 0; i < n; i++) {
    if (v[i] < *lo) *lo = v[i];
    if (v[i] > *hi) *hi = v[i];
  }
}

static const char* base_name(const char* path) {
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static void usage(FILE* f) {
  fprintf(f,
          "usage: bench_muscles [--excitation 0.05,0.3] [--accuracy 1e-3] [--duration 1]\n"
          "                     [--repeats 5] [--integrator rk_merson[:ACC],...] [--report 0.01]\n"
          "                     [--reference-accuracy 1e-9] [--trace 0.1] [--quiet]\n"
          "                     MODEL.osim [MODEL.osim ...]\n");
}

static int parse_double(const char* s, double* v) {
  char* end;
  *v = strtod(s, &end);
  return end != s && *end == '\0' && isfinite(*v);
}

static int parse_int(const char* s, int lo, int hi, int* v) {
  char* end;
  errno = 0;
  const long x = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno || x < lo || x > hi) return 0;
  *v = (int)x;
  return 1;
}

static double loadavg1(void) {
  double l = NAN;
  FILE* f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = NAN;
    fclose(f);
  }
  return l;
}

int main(int argc, char** argv) {
  double exc[MAX_EXC] = {0.05, 0.3};
  int nexc = 2;
  double accuracy = 1e-3, duration = 1.0, report_dt = 0.01, trace_dt = 0.1;
  int repeats = 5, quiet = 0;
  mbs_integrator_type integ[MAX_INTEG] = {MBS_INTEG_RK_MERSON};
  double iacc[MAX_INTEG] = {NAN};  // NAN: --accuracy
  int ninteg = 1;
  double ref_accuracy = 1e-9;
  model_entry models[MAX_MODELS];
  int nmodel = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const int has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--quiet")) {
      quiet = 1;
    } else if (!strcmp(a, "--excitation") && has_value) {
      char buf[256];
      snprintf(buf, sizeof(buf), "%s", argv[++i]);
      nexc = 0;
      for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (nexc == MAX_EXC || !parse_double(tok, &exc[nexc]) || exc[nexc] < 0 ||
            exc[nexc] > 1) {
          fprintf(stderr, "bench_muscles: bad excitation list '%s' (at most %d values in "
                          "[0, 1])\n", argv[i], MAX_EXC);
          return 2;
        }
        nexc++;
      }
      if (nexc == 0) {
        fprintf(stderr, "bench_muscles: empty excitation list\n");
        return 2;
      }
    } else if (!strcmp(a, "--accuracy") && has_value) {
      if (!parse_double(argv[++i], &accuracy) || !(accuracy > 0)) {
        fprintf(stderr, "bench_muscles: bad accuracy '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "--duration") && has_value) {
      if (!parse_double(argv[++i], &duration) || !(duration > 0)) {
        fprintf(stderr, "bench_muscles: bad duration '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "--report") && has_value) {
      if (!parse_double(argv[++i], &report_dt) || report_dt < 0) {
        fprintf(stderr, "bench_muscles: bad report interval '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "--trace") && has_value) {
      if (!parse_double(argv[++i], &trace_dt) || trace_dt < 0) {
        fprintf(stderr, "bench_muscles: bad trace interval '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "--repeats") && has_value) {
      if (!parse_int(argv[++i], 1, 256, &repeats)) {
        fprintf(stderr, "bench_muscles: bad repeats '%s' (an integer 1..256)\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(a, "--integrator") && has_value) {
      char buf[256];
      snprintf(buf, sizeof(buf), "%s", argv[++i]);
      ninteg = 0;
      for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char* colon = strchr(tok, ':');
        if (colon) *colon = '\0';
        const int t = mbs_integrator_from_name(tok);
        if (ninteg == MAX_INTEG || t < 0 ||
            (colon && (!parse_double(colon + 1, &iacc[ninteg]) || !(iacc[ninteg] > 0)))) {
          fprintf(stderr, "bench_muscles: bad integrator list '%s' (at most %d of NAME or "
                          "NAME:ACCURACY)\n", argv[i], MAX_INTEG);
          return 2;
        }
        if (!colon) iacc[ninteg] = NAN;
        integ[ninteg++] = (mbs_integrator_type)t;
      }
      if (ninteg == 0) {
        fprintf(stderr, "bench_muscles: empty integrator list\n");
        return 2;
      }
    } else if (!strcmp(a, "--reference-accuracy") && has_value) {
      if (!parse_double(argv[++i], &ref_accuracy) || ref_accuracy < 0) {
        fprintf(stderr, "bench_muscles: bad reference accuracy '%s'\n", argv[i]);
        return 2;
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "bench_muscles: unknown option or missing value: %s\n", a);
      usage(stderr);
      return 2;
    } else {
      if (nmodel == MAX_MODELS) {
        fprintf(stderr, "bench_muscles: at most %d models\n", MAX_MODELS);
        return 2;
      }
      models[nmodel++].path = a;
    }
  }
  if (nmodel == 0) {
    usage(stderr);
    return 2;
  }

  // the models, read once (not timed)
  for (int i = 0; i < nmodel; i++) {
    model_entry* me = &models[i];
    mbs_error err;
    const double t0 = now(CLOCK_MONOTONIC);
    me->m = mbs_osim_read(me->path, &err);
    if (!me->m) {
      fprintf(stderr, "bench_muscles: %s\n", err.message);
      for (int j = 0; j < i; j++) mbs_osim_free(models[j].m);
      return 1;
    }
    const mbs_system* sys = mbs_osim_system(me->m);
    me->pelvis = mbs_body_find(sys, "pelvis");
    me->nmuscle_controls = me->nother_controls = 0;
    me->other_lo = INFINITY;
    me->other_hi = -INFINITY;
    mbs_state* st0 = mbs_state_create(sys);  // for the default controls
    for (int k = 0; k < mbs_system_ncontrol(sys); k++) {
      if (is_muscle(sys, mbs_control_force(sys, k))) {
        me->nmuscle_controls++;
      } else {
        me->nother_controls++;
        const double c = st0 ? mbs_state_controls(st0)[k] : NAN;
        if (c < me->other_lo) me->other_lo = c;
        if (c > me->other_hi) me->other_hi = c;
      }
    }
    mbs_state_destroy(st0);
    printf("# %s: read in %.2f s: %d bodies, nq %d, nu %d, nz %d, %d forces, %d warnings\n",
           base_name(me->path), now(CLOCK_MONOTONIC) - t0, mbs_system_nbody(sys) - 1,
           mbs_system_nq(sys), mbs_system_nu(sys), mbs_system_nz(sys), mbs_system_nforce(sys),
           mbs_osim_nwarning(me->m));
    // the muscles by kind, their path points and wraps (from the file's records)
    const char* kinds[16];
    int nkind = 0, count[16] = {0}, npoint = 0, nwrap = 0;
    for (int r = 0; r < mbs_osim_nmuscle(me->m); r++) {
      const mbs_osim_record* rec = mbs_osim_record_at(me->m, r);
      npoint += rec->npoint;
      nwrap += rec->nwrap;
      int k = 0;
      while (k < nkind && strcmp(kinds[k], rec->kind)) k++;
      if (k == nkind && nkind < 16) kinds[nkind++] = rec->kind;
      if (k < nkind) count[k]++;
    }
    printf("#   muscles:");
    for (int k = 0; k < nkind; k++) printf("%s %d %s", k ? "," : "", count[k], kinds[k]);
    printf(" (%d controls); %d path points, %d path wraps in all\n", me->nmuscle_controls,
           npoint, nwrap);
    if (me->nother_controls > 0)
      printf("#   %d other actuators keep their default controls (%g to %g)\n",
             me->nother_controls, me->other_lo, me->other_hi);
    for (int w = 0; w < mbs_osim_nwarning(me->m); w++)
      printf("#   warning: %s\n", mbs_osim_warning(me->m, w));
  }

  for (int g = 0; g < ninteg; g++)
    if (isnan(iacc[g])) iacc[g] = accuracy;
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.report_interval = report_dt;

  struct utsname un;
  const int have_un = uname(&un) == 0;
  const char* ob = getenv("OPENBLAS_NUM_THREADS");
  const char* omp = getenv("OMP_NUM_THREADS");
  time_t tnow = time(NULL);
  char date[64];
  strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", gmtime(&tnow));
  printf("# bench_muscles, mbstudy %s, %s; %s; %s %s\n", MBS_VERSION_STRING, MBS_BENCH_BUILD_INFO,
         date, have_un ? un.machine : "?", have_un ? un.release : "");
  printf("# integrators");
  for (int g = 0; g < ninteg; g++)
    printf("%s %s at accuracy %g", g ? "," : "", mbs_integrator_name(integ[g]), iacc[g]);
  printf("; %g s simulated, reports every %g s, %d repeats interleaved; OPENBLAS_NUM_THREADS=%s "
         "OMP_NUM_THREADS=%s; load average before: %.2f\n", duration, report_dt, repeats,
         ob ? ob : "(unset)", omp ? omp : "(unset)", loadavg1());

  // the references (not timed): dormand_prince at ref_accuracy, per model and excitation
  double* qref[MAX_MODELS * MAX_EXC] = {NULL};
  if (ref_accuracy > 0) {
    mbs_simulation_options ro = o;
    ro.integrator = MBS_INTEG_DORMAND_PRINCE;
    ro.integ.accuracy = ref_accuracy;
    for (int i = 0; i < nmodel; i++)
      for (int e = 0; e < nexc; e++) {
        const mbs_system* sys = mbs_osim_system(models[i].m);
        double* q = malloc((size_t)mbs_system_nq(sys) * sizeof(double));
        recorder rec;
        memset(&rec, 0, sizeof(rec));
        rec.me = &models[i];
        run_result rr;
        const double w0 = now(CLOCK_MONOTONIC);
        if (!q || run_once(&models[i], exc[e], &ro, duration, &rec, &rr, NULL, q) || !rr.ok) {
          fprintf(stderr, "bench_muscles: %s, excitation %g: the reference run failed\n",
                  models[i].path, exc[e]);
          free(q);
          continue;
        }
        qref[i * nexc + e] = q;
        printf("# reference %s e=%g: dormand_prince at accuracy %g, %ld steps, %.1f s\n",
               base_name(models[i].path), exc[e], ref_accuracy, rr.is.steps,
               now(CLOCK_MONOTONIC) - w0);
      }
  }

  const int ncase = nmodel * nexc * ninteg;
  run_result* res = calloc((size_t)ncase * (size_t)repeats, sizeof(*res));
  recorder* traces = calloc((size_t)ncase, sizeof(*traces));
  recorder* scratch = calloc(1, sizeof(*scratch));
  if (!res || !traces || !scratch) {
    fprintf(stderr, "bench_muscles: out of memory\n");
    return 1;
  }
  if (!quiet)
    printf("# run  model  excitation  integrator  accuracy  wall_s  cpu_s  sim_s/wall_s  steps  "
           "rejected  evaluations  pelvis_y_end_m  mean_activation_end  clamped_fibers_end  "
           "q_error_end\n");
  int failed = 0;
  for (int r = 0; r < repeats; r++) {
    for (int i = 0; i < nmodel; i++) {
      for (int e = 0; e < nexc; e++)
      for (int g = 0; g < ninteg; g++) {
        const int cs = (i * nexc + e) * ninteg + g;
        o.integrator = integ[g];
        o.integ.accuracy = iacc[g];
        recorder* rec = r == 0 ? &traces[cs] : scratch;
        memset(rec, 0, sizeof(*rec));
        rec->me = &models[i];
        rec->trace_dt = r == 0 ? trace_dt : 0;
        run_result* rr = &res[cs * repeats + r];
        if (run_once(&models[i], exc[e], &o, duration, rec, rr, qref[i * nexc + e], NULL)) {
          failed = 1;
          continue;
        }
        if (!rr->ok) failed = 1;
        if (!quiet)
          printf("%d  %s  %g  %s  %g  %.4f  %.4f  %.2f  %ld  %ld  %ld  %.4f  %.4f  %d  %.2e%s\n",
                 r + 1, base_name(models[i].path), exc[e], mbs_integrator_name(integ[g]),
                 iacc[g], rr->wall, rr->cpu, rr->t_end / rr->wall, rr->is.steps, rr->is.rejected,
                 rr->is.evaluations, rr->pelvis_end, rr->act_end, rr->clamped_end, rr->qerr,
                 rr->ok ? "" : "  (FAILED)");
        fflush(stdout);
      }
    }
  }
  printf("# load average after: %.2f\n\n", loadavg1());

  // the table: medians and ranges of the repeats that reached the end; the integrator's counts
  // are those of the first of them (the runs are deterministic; "varied" says if they were not)
  printf("| model | excitation | integrator (accuracy) | sim s / wall s, median (min-max) | "
         "sim s / CPU s, median (min-max) | steps | rejected (%% of attempts) | evaluations | "
         "evaluations / sim s | CPU us / evaluation | mean activation at 0 and %g s | pelvis y "
         "at 0 and %g s (m) | largest error of q at %g s (rad or m) |\n", duration, duration,
         duration);
  printf("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|\n");
  for (int i = 0; i < nmodel; i++) {
    for (int e = 0; e < nexc; e++)
    for (int g = 0; g < ninteg; g++) {
      const int cs = (i * nexc + e) * ninteg + g;
      const run_result* rr = &res[cs * repeats];
      double rate[256], crate[256], cpu[256];
      int n = 0, same = 1;
      const run_result* first = NULL;
      for (int r = 0; r < repeats; r++) {
        if (!rr[r].ok) continue;
        if (!first) first = &rr[r];
        rate[n] = rr[r].t_end / rr[r].wall;
        crate[n] = rr[r].t_end / rr[r].cpu;
        cpu[n] = rr[r].cpu;
        n++;
        if (rr[r].is.steps != first->is.steps ||
            rr[r].is.evaluations != first->is.evaluations)
          same = 0;
      }
      if (!first) {
        printf("| %s | %g | %s (%g) | failed | | | | | | | | | |\n", base_name(models[i].path),
               exc[e], mbs_integrator_name(integ[g]), iacc[g]);
        continue;
      }
      double rlo, rhi, clo, chi;
      range(rate, n, &rlo, &rhi);
      range(crate, n, &clo, &chi);
      const mbs_integrator_stats* is = &first->is;
      const long attempts = is->steps + is->rejected;
      printf("| %s | %g | %s (%g) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %ld | %ld (%.0f%%) | "
             "%ld%s | %.0f | %.1f | %.3f, %.3f | %.3f, %.3f | %.1e |%s\n",
             base_name(models[i].path), exc[e], mbs_integrator_name(integ[g]), iacc[g],
             median(rate, n), rlo, rhi, median(crate, n), clo,
             chi, is->steps, is->rejected, attempts ? 100.0 * (double)is->rejected / attempts : 0.0,
             is->evaluations, same ? "" : " (varied)", (double)is->evaluations / first->t_end,
             1e6 * median(cpu, n) / (double)is->evaluations, first->act0, first->act_end, first->pelvis0,
             first->pelvis_end, first->qerr, n < repeats ? " (some repeats failed)" : "");
    }
  }

  // the pelvis height over time (first repeat; the repeats are deterministic); a cell whose
  // report came later than the row's time gives that time
  if (trace_dt > 0) {
    printf("\npelvis origin height y (m) over time, first repeat:\n\n| t (s) |");
    for (int cs = 0; cs < ncase; cs++)
      printf(" %s e=%g %s |", base_name(models[cs / (nexc * ninteg)].path),
             exc[(cs / ninteg) % nexc], mbs_integrator_name(integ[cs % ninteg]));
    printf("\n|---:|");
    for (int cs = 0; cs < ncase; cs++) printf("---:|");
    printf("\n");
    int nrow = 0;
    for (int cs = 0; cs < ncase; cs++)
      if (traces[cs].ntrace > nrow) nrow = traces[cs].ntrace;
    for (int k = 0; k < nrow; k++) {
      printf("| %.2f |", k * trace_dt);
      for (int cs = 0; cs < ncase; cs++) {
        const recorder* tr = &traces[cs];
        if (k >= tr->ntrace) {
          printf(" - |");
        } else if (fabs(tr->trace_t[k] - k * trace_dt) > 1e-9) {
          printf(" %.4f (at %.4f s) |", tr->trace_h[k], tr->trace_t[k]);
        } else {
          printf(" %.4f |", tr->trace_h[k]);
        }
      }
      printf("\n");
    }
  }

  for (int k = 0; k < MAX_MODELS * MAX_EXC; k++) free(qref[k]);
  free(res);
  free(traces);
  free(scratch);
  for (int i = 0; i < nmodel; i++) mbs_osim_free(models[i].m);
  return failed ? 1 : 0;
}
