// bench_ik: how fast mbstudy's inverse kinematics (mbs/ik.h) solves the frames of a motion
// capture trial, on one core.
//
// The trial is given as an OpenSim InverseKinematicsTool setup file: its model_file,
// marker_file, accuracy, time_range and IKMarkerTask weights (as `mbstudy run-tool` reads them:
// applied marker tasks found in the file and the model, in the file's order; every marker at
// weight 1 when no task is applied; locked coordinates held, clamped ones bounded; coordinate
// tasks are not part of this benchmark). The model and the markers are read once and the solver
// is built once; then each run starts from the model's default pose and solves every frame of
// the time range in order, each from the frame before, as the tool does. Only that frame loop
// is timed (the observations of a frame are taken from the marker table inside it). The table
// gives each run and then the median and the range of the repeats.
//
//   OPENBLAS_NUM_THREADS=1 bench_ik [--repeats N] [--accuracy A] SETUP.xml
//     --repeats N    runs (default 21)
//     --accuracy A   the solver's accuracy instead of the setup's
//
// Exit status: 0 when every frame of every run was solved, 1 otherwise, 2 for bad arguments.
#define _POSIX_C_SOURCE 200809L  // clock_gettime, CLOCK_PROCESS_CPUTIME_ID, uname

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>

#include "mbs/ik.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/table.h"

#ifndef MBS_BENCH_BUILD_INFO
#define MBS_BENCH_BUILD_INFO "(unknown build)"
#endif

#define MAX_RUNS 256
#define MAX_TASKS 1024

static double now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(const double* v, int n) {
  double s[MAX_RUNS];
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

// the text of child element `name` of n, trimmed (malloc'd), or NULL when absent or empty
static char* child_text(xmlNodePtr n, const char* name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || strcmp((const char*)c->name, name)) continue;
    xmlChar* t = xmlNodeGetContent(c);
    char* s = t ? (char*)t : NULL;
    if (!s) return NULL;
    char* b = s;
    while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r') b++;
    char* e = b + strlen(b);
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    char* out = *b && strcmp(b, "Unassigned") ? strdup(b) : NULL;
    xmlFree(t);
    return out;
  }
  return NULL;
}

typedef struct task {
  char* name;
  double weight;
} task;

int main(int argc, char** argv) {
  int repeats = 21;
  double accuracy = NAN;
  const char* setup = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--accuracy") && i + 1 < argc) accuracy = atof(argv[++i]);
    else if (argv[i][0] != '-' && !setup) setup = argv[i];
    else {
      fprintf(stderr, "usage: bench_ik [--repeats N] [--accuracy A] SETUP.xml\n");
      return 2;
    }
  }
  if (!setup || repeats < 1 || repeats > MAX_RUNS) {
    fprintf(stderr, "usage: bench_ik [--repeats N (1..%d)] [--accuracy A] SETUP.xml\n",
            MAX_RUNS);
    return 2;
  }
  // the setup
  xmlDocPtr doc = xmlReadFile(setup, NULL, XML_PARSE_NONET | XML_PARSE_NOWARNING |
                                               XML_PARSE_NOERROR);
  xmlNodePtr tool = doc ? xmlDocGetRootElement(doc) : NULL;
  if (tool && !strcmp((const char*)tool->name, "OpenSimDocument")) {
    tool = tool->children;
    while (tool && tool->type != XML_ELEMENT_NODE) tool = tool->next;
  }
  if (!tool || strcmp((const char*)tool->name, "InverseKinematicsTool")) {
    fprintf(stderr, "bench_ik: %s: not an InverseKinematicsTool setup file\n", setup);
    return 1;
  }
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", setup);
  char* slash = strrchr(dir, '/');
  if (slash) slash[1] = 0;
  else strcpy(dir, "./");
  char* model_name = child_text(tool, "model_file");
  char* marker_name = child_text(tool, "marker_file");
  char* acc_text = child_text(tool, "accuracy");
  char* range_text = child_text(tool, "time_range");
  if (!model_name || !marker_name) {
    fprintf(stderr, "bench_ik: %s: no model_file or marker_file\n", setup);
    return 1;
  }
  if (isnan(accuracy)) accuracy = acc_text ? atof(acc_text) : 1e-5;
  double t_range[2] = {-INFINITY, INFINITY};
  if (range_text) sscanf(range_text, "%lf %lf", &t_range[0], &t_range[1]);
  task* tasks = calloc(MAX_TASKS, sizeof(task));
  int ntask = 0;
  for (xmlNodePtr set = tool->children; set; set = set->next) {
    if (set->type != XML_ELEMENT_NODE || strcmp((const char*)set->name, "IKTaskSet")) continue;
    for (xmlNodePtr objs = set->children; objs; objs = objs->next) {
      if (objs->type != XML_ELEMENT_NODE || strcmp((const char*)objs->name, "objects")) continue;
      for (xmlNodePtr t = objs->children; t && ntask < MAX_TASKS; t = t->next) {
        if (t->type != XML_ELEMENT_NODE || strcmp((const char*)t->name, "IKMarkerTask")) continue;
        char* apply = child_text(t, "apply");
        char* weight = child_text(t, "weight");
        xmlChar* nm = xmlGetProp(t, (const xmlChar*)"name");
        if (nm && (!apply || !strcasecmp(apply, "true"))) {
          tasks[ntask].name = strdup((const char*)nm);
          tasks[ntask].weight = weight ? atof(weight) : 0;
          ntask++;
        }
        xmlFree(nm);
        free(apply);
        free(weight);
      }
    }
  }
  xmlFreeDoc(doc);
  char model_path[8192], marker_path[8192];
  snprintf(model_path, sizeof(model_path), "%s%s", model_name[0] == '/' ? "" : dir, model_name);
  snprintf(marker_path, sizeof(marker_path), "%s%s", marker_name[0] == '/' ? "" : dir,
           marker_name);

  // the model, the markers in meters
  mbs_error err;
  mbs_osim_model* m = mbs_osim_read(model_path, &err);
  if (!m) {
    fprintf(stderr, "bench_ik: %s\n", err.message);
    return 1;
  }
  mbs_table* trc = NULL;
  if (mbs_table_read_trc(marker_path, &trc, &err) ||
      (trc->units && mbs_table_to_meters(trc, &err))) {
    fprintf(stderr, "bench_ik: %s\n", err.message);
    return 1;
  }
  const mbs_system* sys = mbs_osim_system(m);
  const int nfile = trc->nmarkers, ncoord = mbs_osim_ncoordinate(m);
  mbs_ik_marker* mk = calloc((size_t)nfile + 1, sizeof(*mk));
  int* col = calloc((size_t)nfile + 1, sizeof(int));
  int nm = 0;
  for (int j = 0; j < nfile; j++) {
    double w = 1;
    if (ntask) {
      int k = -1;
      for (int i = 0; i < ntask && k < 0; i++)
        if (!strcmp(tasks[i].name, trc->markers[j])) k = i;
      if (k < 0) continue;
      w = tasks[k].weight;
    }
    for (int i = 0; i < mbs_osim_nmarker(m); i++) {
      const mbs_osim_marker* om = mbs_osim_marker_at(m, i);
      if (strcmp(om->name, trc->markers[j]) || om->body <= 0) continue;
      mk[nm] = (mbs_ik_marker){om->name, om->body, {om->location[0], om->location[1],
                                                    om->location[2]}, w};
      col[nm++] = j;
      break;
    }
  }
  mbs_ik_bound* bounds = calloc((size_t)ncoord + 1, sizeof(*bounds));
  int* fixed = calloc((size_t)ncoord + 1, sizeof(int));
  int nbound = 0, nfixed = 0;
  for (int i = 0; i < ncoord; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    if (c->locked) fixed[nfixed++] = c->qindex;
    else if (c->clamped && !c->prescribed)
      bounds[nbound++] = (mbs_ik_bound){c->name, c->qindex, c->range[0], c->range[1]};
  }
  mbs_ik_problem p;
  mbs_ik_problem_default(&p);
  p.nmarker = nm;
  p.markers = mk;
  p.nbound = nbound;
  p.bounds = bounds;
  p.nfixed = nfixed;
  p.fixed = fixed;
  p.accuracy = accuracy;
  mbs_ik* ik = NULL;
  if (nm == 0 || mbs_ik_create(sys, &p, &ik, &err)) {
    fprintf(stderr, "bench_ik: %s\n", nm ? err.message : "no marker to track");
    return 1;
  }
  // frames: the rows from the one nearest the start to the one nearest the end
  int i0 = 0, i1 = trc->nrow - 1;
  for (int i = 0; i < trc->nrow; i++) {
    const double t = mbs_table_get(trc, i, 0);
    if (fabs(t - t_range[0]) < fabs(mbs_table_get(trc, i0, 0) - t_range[0])) i0 = i;
    if (fabs(t - t_range[1]) < fabs(mbs_table_get(trc, i1, 0) - t_range[1])) i1 = i;
  }
  const int nframes = i1 - i0 + 1;
  double* obs = calloc(3 * (size_t)nm + 1, sizeof(double));
  mbs_state* st = mbs_state_create(sys);

  struct utsname un;
  const int have_un = uname(&un) == 0;
  const char* ob = getenv("OPENBLAS_NUM_THREADS");
  time_t tnow = time(NULL);
  char date[64];
  strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", gmtime(&tnow));
  printf("# bench_ik, mbstudy %s, %s; %s; %s %s; OPENBLAS_NUM_THREADS=%s\n", MBS_VERSION_STRING,
         MBS_BENCH_BUILD_INFO, date, have_un ? un.machine : "?", have_un ? un.release : "",
         ob ? ob : "(unset)");
  printf("# %s: model %s (%d coordinates), %d markers tracked of %s, %d frames (t = %g .. %g "
         "s), accuracy %g, %d runs from the default pose\n", setup, mbs_osim_name(m), ncoord,
         nm, marker_path, nframes, mbs_table_get(trc, i0, 0), mbs_table_get(trc, i1, 0),
         accuracy, repeats);
  printf("%5s %12s %12s %12s %12s %10s\n", "run", "wall ms", "cpu ms", "frames/s", "iter/frame",
         "not conv.");
  double fps[MAX_RUNS], cpu_fps[MAX_RUNS];
  int failed = 0;
  for (int run = 0; run < repeats; run++) {
    mbs_osim_default_state(m, st);
    long iters = 0;
    int notconv = 0;
    const double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (int f = i0; f <= i1; f++) {
      const double* row = trc->data + (size_t)f * trc->ncol;
      for (int i = 0; i < nm; i++)
        for (int k = 0; k < 3; k++) obs[3 * i + k] = row[1 + 3 * col[i] + k];
      mbs_state_set_time(st, row[0]);
      mbs_ik_report rep;
      if (mbs_ik_solve(ik, sys, st, obs, NULL, &rep)) {
        fprintf(stderr, "bench_ik: frame %d: %s\n", f + 1, mbs_state_error(st)->message);
        failed = 1;
        break;
      }
      iters += rep.iterations;
      notconv += !rep.converged;
    }
    const double wall = now(CLOCK_MONOTONIC) - w0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    fps[run] = nframes / wall;
    cpu_fps[run] = nframes / cpu;
    printf("%5d %12.3f %12.3f %12.0f %12.2f %10d\n", run + 1, 1e3 * wall, 1e3 * cpu, fps[run],
           (double)iters / nframes, notconv);
    if (failed) break;
  }
  if (!failed) {
    double lo = INFINITY, hi = 0;
    for (int r = 0; r < repeats; r++) {
      lo = fmin(lo, fps[r]);
      hi = fmax(hi, fps[r]);
    }
    printf("median %.0f frames/s (range %.0f .. %.0f over %d runs; by CPU time %.0f frames/s), "
           "%.1f us per frame\n", median(fps, repeats), lo, hi, repeats,
           median(cpu_fps, repeats), 1e6 / median(fps, repeats));
  }
  mbs_state_destroy(st);
  mbs_ik_free(ik);
  free(obs);
  free(mk);
  free(col);
  free(bounds);
  free(fixed);
  for (int i = 0; i < ntask; i++) free(tasks[i].name);
  free(tasks);
  free(model_name);
  free(marker_name);
  free(acc_text);
  free(range_text);
  mbs_table_free(trc);
  mbs_osim_free(m);
  return failed;
}
