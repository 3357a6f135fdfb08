// bench_id: how fast mbstudy's InverseDynamicsTool evaluates frames (io/inverse_dynamics.c).
//
// Prepares one inverse dynamics problem (model, coordinates, external loads, filter, excluded
// forces, as an OpenSim InverseDynamicsTool setup gives them), then times
//   - the ID evaluation: every frame of the trial through mbs_id_eval on one State (setting q,
//     u from the splines, realizing Dynamics with gravity and the loads, the residual), repeated
//     until at least --min-time seconds have passed; frames per second, median of --repeats;
//   - the whole tool: reading the model and the files, filtering, splines, every frame, and
//     writing the .sto (mbs_id_create + mbs_id_run + mbs_table_write_sto), median of --repeats.
//
//   OPENBLAS_NUM_THREADS=1 bench_id --data SHARED_DIR       (gait10dof18musc's walking trial
//                                                            with its ID setup's settings)
//   OPENBLAS_NUM_THREADS=1 bench_id --model M.osim --coordinates C.mot [--external-loads X.xml]
//                          [--lowpass HZ] [--exclude NAME]... [options]
//     --repeats N     timed repeats (default 7)
//     --min-time S    seconds of frames per repeat (default 0.2)
//     --out FILE.sto  where the whole-tool runs write (default /tmp/bench_id.sto)
//
// Exit status: 0 on success, 1 when the problem cannot be prepared or run, 2 for bad arguments.
#define _POSIX_C_SOURCE 200809L  // clock_gettime

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbs/inverse_dynamics.h"

#ifndef MBS_BENCH_BUILD_INFO
#define MBS_BENCH_BUILD_INFO "(unknown build)"
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv) {
  mbs_id_options o;
  mbs_id_options_default(&o);
  const char* ex[32];
  int nex = 0, repeats = 7;
  double min_time = 0.2;
  const char* out = "/tmp/bench_id.sto";
  char paths[3][4096];
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "bench_id: '%s' needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--data")) {
      snprintf(paths[0], sizeof(paths[0]), "%s/data/gait10dof18musc/subject01.osim", v);
      snprintf(paths[1], sizeof(paths[1]), "%s/data/gait10dof18musc/IK/subject01_walk_IK.mot", v);
      snprintf(paths[2], sizeof(paths[2]),
               "%s/data/gait10dof18musc/ExperimentalData/subject01_walk_grf.xml", v);
      o.model_file = paths[0];
      o.coordinates_file = paths[1];
      o.external_loads = paths[2];
      o.lowpass_hz = 6;
      o.time_range[0] = 0;
      o.time_range[1] = 2.5;
      ex[nex++] = "Muscles";
    } else if (!strcmp(a, "--model")) o.model_file = v;
    else if (!strcmp(a, "--coordinates")) o.coordinates_file = v;
    else if (!strcmp(a, "--external-loads")) o.external_loads = v;
    else if (!strcmp(a, "--lowpass")) o.lowpass_hz = atof(v);
    else if (!strcmp(a, "--exclude") && nex < 32) ex[nex++] = v;
    else if (!strcmp(a, "--repeats")) repeats = atoi(v);
    else if (!strcmp(a, "--min-time")) min_time = atof(v);
    else if (!strcmp(a, "--out")) out = v;
    else {
      fprintf(stderr, "bench_id: unknown option '%s'\n", a);
      return 2;
    }
    i++;
  }
  if (!o.model_file || !o.coordinates_file || repeats < 1 || repeats > 1000) {
    fprintf(stderr, "usage: bench_id --data SHARED_DIR | --model M.osim --coordinates C.mot "
                    "[--external-loads X.xml] [--lowpass HZ] [--exclude NAME]... [--repeats N] "
                    "[--min-time S] [--out FILE.sto]\n");
    return 2;
  }
  o.exclude = ex;
  o.nexclude = nex;
  mbs_error err;
  mbs_error_clear(&err);
  mbs_id* id = NULL;
  if (mbs_id_create(&o, &id, &err)) {
    fprintf(stderr, "bench_id: %s\n", err.message);
    return 1;
  }
  const int nf = mbs_id_nframe(id), nc = mbs_id_ncolumn(id);
  printf("bench_id: %s (%s)\n", mbs_osim_name(mbs_id_model(id)), MBS_BENCH_BUILD_INFO);
  printf("  %d frames (t = %g .. %g s), %d coordinates, %d forces excluded, low-pass %g Hz\n",
         nf, mbs_id_frame_time(id, 0), mbs_id_frame_time(id, nf - 1), nc, mbs_id_nexcluded(id),
         o.lowpass_hz);
  mbs_state* st = mbs_id_state_create(id);
  double* tau = malloc(((size_t)nc + 1) * sizeof(double));
  double* rate = malloc((size_t)repeats * sizeof(double));
  double* whole = malloc((size_t)repeats * sizeof(double));
  int rc = 0;
  if (!st || !tau || !rate || !whole) {
    fprintf(stderr, "bench_id: out of memory\n");
    rc = 1;
    goto done;
  }
  volatile double sink = 0;
  for (int k = 0; k < nf; k++) mbs_id_eval(id, st, mbs_id_frame_time(id, k), tau);  // warm up
  for (int r = 0; r < repeats && !rc; r++) {
    long frames = 0;
    const double t0 = now();
    double t1 = t0;
    while (t1 - t0 < min_time) {
      for (int k = 0; k < nf && !rc; k++) {
        if (mbs_id_eval(id, st, mbs_id_frame_time(id, k), tau)) {
          fprintf(stderr, "bench_id: frame %d: %s\n", k, mbs_state_error(st)->message);
          rc = 1;
        }
        sink += tau[0];
      }
      frames += nf;
      t1 = now();
    }
    rate[r] = frames / (t1 - t0);
  }
  for (int r = 0; r < repeats && !rc; r++) {
    const double t0 = now();
    mbs_id* w = NULL;
    mbs_table *gen = NULL, *body = NULL;
    if (mbs_id_create(&o, &w, &err) || mbs_id_run(w, &gen, &body, &err) ||
        mbs_table_write_sto(gen, out, 1, &err)) {
      fprintf(stderr, "bench_id: %s\n", err.message);
      rc = 1;
    }
    whole[r] = now() - t0;
    mbs_table_free(gen);
    mbs_table_free(body);
    mbs_id_free(w);
  }
  if (!rc) {
    double lo = rate[0], hi = rate[0];
    for (int r = 1; r < repeats; r++) {
      lo = rate[r] < lo ? rate[r] : lo;
      hi = rate[r] > hi ? rate[r] : hi;
    }
    const double med = median(rate, repeats);
    printf("  ID evaluation: %.0f frames/s (median of %d; range %.0f .. %.0f), %.2f us/frame\n",
           med, repeats, lo, hi, 1e6 / med);
    const double w = median(whole, repeats);
    printf("  whole tool (read, filter, splines, %d frames, write): %.2f ms (median of %d), "
           "%.0f frames/s overall\n", nf, 1e3 * w, repeats, nf / w);
  }
done:
  free(tau);
  free(rate);
  free(whole);
  mbs_state_destroy(st);
  mbs_id_free(id);
  return rc;
}
