// bench_batch: throughput of the batched forward dynamics (include/mbs/batch.h) against the
// one-at-a-time path, on pin chains with general joint frames.
//
// For chains of 1, 5, 10, 20, 50, 100 and 200 bodies (random X_PF and X_BM rotations and
// offsets, random mass properties, gravity) and --states States with random q and u, it times
//   A: the one-at-a-time path: for each State, invalidate its Position stage (as setting q does)
//      and mbs_realize_acceleration (Position, Velocity, Dynamics, the articulated-body method);
//   B: mbs_batch_forward_dynamics on all of them at once, for every instruction set the CPU runs
//      (the States' q and u read from each State, results kept in the batch);
// interleaved A, B, A, B, ... over --repeats rounds, each measurement at least --min-time
// seconds. It prints per State-evaluation times (median, min, max over the rounds), the
// throughput gain (median A / median B) and checks that both paths agree. Single thread.
//
//   bench_batch [--states N] [--repeats R] [--min-time S] [--bodies 1,5,10,...]
//               [--isa avx512,avx2,portable] [--json FILE]
//
// Exit status: 0 on success, 1 when the paths disagree or something fails, 2 for bad arguments.
#define _GNU_SOURCE  // clock_gettime, M_PI

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbs/batch.h"
#include "mbs/mbs.h"

#ifndef MBS_BENCH_BUILD_INFO
#define MBS_BENCH_BUILD_INFO "(unknown build)"
#endif

#define MAX_ISA 3
#define MAX_REPEATS 101
#define MAX_SIZES 16

#include "bench_util.h"

static volatile double sink;  // keeps results alive

// A: every State one at a time; returns seconds per State-evaluation
static double time_one_at_a_time(const mbs_system* sys, mbs_state** st, int n, double min_time,
                                 int* calls) {
  const int nu = mbs_system_nu(sys);
  int reps = *calls;
  for (;;) {
    const double t0 = now();
    double acc = 0;
    for (int r = 0; r < reps; r++)
      for (int i = 0; i < n; i++) {
        mbs_state_upd_q(st[i]);  // invalidates Position, as a new q would
        if (mbs_realize_acceleration(sys, st[i]) != MBS_OK) return -1;
        acc += mbs_get_udot(sys, st[i])[nu - 1];
      }
    const double dt = now() - t0;
    sink = acc;
    if (dt >= min_time) {
      *calls = reps;
      return dt / ((double)reps * n);
    }
    reps = dt > 0 ? (int)(reps * 1.5 * min_time / dt) + 1 : reps * 10;
  }
}

// B: all States per batch call
static double time_batch(const mbs_system* sys, mbs_batch* bt, mbs_state** st, int n,
                         double min_time, int* calls) {
  const int nu = mbs_system_nu(sys);
  int reps = *calls;
  for (;;) {
    const double t0 = now();
    double acc = 0;
    for (int r = 0; r < reps; r++) {
      if (mbs_batch_forward_dynamics(bt, sys, st, n) != MBS_OK) return -1;
      acc += mbs_batch_udot(bt, n - 1)[nu - 1];
    }
    const double dt = now() - t0;
    sink = acc;
    if (dt >= min_time) {
      *calls = reps;
      return dt / ((double)reps * n);
    }
    reps = dt > 0 ? (int)(reps * 1.5 * min_time / dt) + 1 : reps * 10;
  }
}

int main(int argc, char** argv) {
  int nstates = 64, repeats = 7;
  double min_time = 0.05;
  int sizes[MAX_SIZES] = {1, 5, 10, 20, 50, 100, 200}, nsizes = 7;
  const char* json = NULL;
  const char* isa_list = "avx512,avx2,portable";
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "bench_batch: '%s' needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--states")) nstates = atoi(v);
    else if (!strcmp(a, "--repeats")) repeats = atoi(v);
    else if (!strcmp(a, "--min-time")) min_time = atof(v);
    else if (!strcmp(a, "--json")) json = v;
    else if (!strcmp(a, "--isa")) isa_list = v;
    else if (!strcmp(a, "--bodies")) {
      nsizes = 0;
      for (const char* p = v; *p && nsizes < MAX_SIZES;) {
        sizes[nsizes++] = atoi(p);
        p = strchr(p, ',');
        if (!p) break;
        p++;
      }
    } else {
      fprintf(stderr,
              "usage: bench_batch [--states N] [--repeats R] [--min-time S] [--bodies 1,5,...] "
              "[--isa avx512,avx2,portable] [--json FILE]\n");
      return 2;
    }
    i++;
  }
  if (nstates < 1 || repeats < 1 || repeats > MAX_REPEATS || min_time <= 0 || nsizes < 1) {
    fprintf(stderr, "bench_batch: bad arguments\n");
    return 2;
  }
  const char* isa_all[MAX_ISA] = {"avx512", "avx2", "portable"};
  const char* isas[MAX_ISA];
  int nisa = 0;
  for (int k = 0; k < MAX_ISA; k++)
    if (strstr(isa_list, isa_all[k]) && mbs_batch_isa_available(isa_all[k]))
      isas[nisa++] = isa_all[k];
  char cpu[256];
  cpu_model(cpu, sizeof(cpu));
  printf("# bench_batch, mbstudy %s; %s\n", MBS_VERSION_STRING, MBS_BENCH_BUILD_INFO);
  printf("# machine: %s; default batch ISA %s; ISAs timed:", cpu, mbs_batch_isa());
  for (int k = 0; k < nisa; k++) printf(" %s", isas[k]);
  printf("\n# pin chains with random joint frames and gravity; %d States per batch call, random q "
         "and u each; %d interleaved rounds of >= %g s per measurement; single thread\n",
         nstates, repeats, min_time);
  printf("# times per State-evaluation (u' of one State), median [min, max] over the rounds; "
         "gain = median one-at-a-time / median batched\n");
  printf("%6s %24s", "bodies", "one at a time (us)");
  for (int k = 0; k < nisa; k++) printf(" %24s %6s", isas[k], "gain");
  printf("\n");

  FILE* jf = NULL;
  if (json) {
    jf = fopen(json, "w");
    if (!jf) {
      fprintf(stderr, "bench_batch: cannot write %s\n", json);
      return 1;
    }
    fprintf(jf, "{\n  \"benchmark\": \"bench_batch\",\n  \"version\": \"%s\",\n",
            MBS_VERSION_STRING);
    fprintf(jf, "  \"build\": \"%s\",\n  \"cpu\": \"%s\",\n", MBS_BENCH_BUILD_INFO, cpu);
    fprintf(jf, "  \"states_per_call\": %d,\n  \"repeats\": %d,\n  \"min_time_s\": %g,\n",
            nstates, repeats, min_time);
    fprintf(jf, "  \"unit\": \"seconds per State-evaluation\",\n  \"chains\": [");
  }

  int status = 0;
  for (int si = 0; si < nsizes; si++) {
    const int nb = sizes[si];
    mbs_system* sys = make_chain(nb);
    if (!sys) return 1;
    mbs_state** st = calloc((size_t)nstates, sizeof(*st));
    for (int i = 0; i < nstates; i++) {
      st[i] = mbs_state_create(sys);
      double* q = mbs_state_upd_q(st[i]);
      double* u = mbs_state_upd_u(st[i]);
      for (int j = 0; j < nb; j++) {
        q[j] = uniform(-M_PI, M_PI);
        u[j] = uniform(-2, 2);
      }
    }
    mbs_batch* bt[MAX_ISA];
    for (int k = 0; k < nisa; k++) {
      bt[k] = mbs_batch_create(sys, nstates);
      if (!bt[k] || mbs_batch_set_isa(bt[k], isas[k]) != MBS_OK) {
        fprintf(stderr, "bench_batch: cannot make a %s batch\n", isas[k]);
        return 1;
      }
    }
    // the two paths agree
    double worst = 0;
    for (int k = 0; k < nisa; k++) {
      if (mbs_batch_forward_dynamics(bt[k], sys, st, nstates) != MBS_OK) {
        fprintf(stderr, "bench_batch: %s\n", mbs_batch_error(bt[k])->message);
        return 1;
      }
      for (int i = 0; i < nstates; i++) {
        mbs_realize_acceleration(sys, st[i]);
        const double* a = mbs_get_udot(sys, st[i]);
        const double* b = mbs_batch_udot(bt[k], i);
        for (int j = 0; j < nb; j++) {
          double s = fmax(1.0, fmax(fabs(a[j]), fabs(b[j])));
          const double e = fabs(a[j] - b[j]) / s;
          if (!(e <= worst)) worst = e;
        }
      }
    }
    if (!(worst <= 1e-12)) {
      fprintf(stderr, "bench_batch: %d bodies: the paths differ by %g relative\n", nb, worst);
      status = 1;
    }
    // interleaved rounds
    double ta[MAX_REPEATS], tb[MAX_ISA][MAX_REPEATS];
    int calls_a = 1, calls_b[MAX_ISA];
    for (int k = 0; k < nisa; k++) calls_b[k] = 1;
    // a warm-up round sizes the repetitions
    time_one_at_a_time(sys, st, nstates, min_time, &calls_a);
    for (int k = 0; k < nisa; k++) time_batch(sys, bt[k], st, nstates, min_time, &calls_b[k]);
    for (int r = 0; r < repeats; r++) {
      ta[r] = time_one_at_a_time(sys, st, nstates, min_time, &calls_a);
      for (int k = 0; k < nisa; k++)
        tb[k][r] = time_batch(sys, bt[k], st, nstates, min_time, &calls_b[k]);
    }
    const stats sa = summarize(ta, repeats);
    printf("%6d %8.3f [%6.3f, %6.3f]", nb, 1e6 * sa.median, 1e6 * sa.min, 1e6 * sa.max);
    for (int k = 0; k < nisa; k++) {
      const stats sb = summarize(tb[k], repeats);
      printf(" %8.3f [%6.3f, %6.3f] %6.2f", 1e6 * sb.median, 1e6 * sb.min, 1e6 * sb.max,
             sa.median / sb.median);
    }
    printf("   (max rel. difference %.2g)\n", worst);
    fflush(stdout);
    if (jf) {
      fprintf(jf, "%s\n    {\"bodies\": %d, \"max_rel_difference\": %.3g,\n", si ? "," : "", nb,
              worst);
      fprintf(jf, "     \"one_at_a_time\": [");
      for (int r = 0; r < repeats; r++) fprintf(jf, "%s%.6e", r ? ", " : "", ta[r]);
      fprintf(jf, "],\n     \"batched\": {");
      for (int k = 0; k < nisa; k++) {
        fprintf(jf, "%s\"%s\": [", k ? ", " : "", isas[k]);
        for (int r = 0; r < repeats; r++) fprintf(jf, "%s%.6e", r ? ", " : "", tb[k][r]);
        fprintf(jf, "]");
      }
      fprintf(jf, "}}");
    }
    for (int k = 0; k < nisa; k++) mbs_batch_destroy(bt[k]);
    for (int i = 0; i < nstates; i++) mbs_state_destroy(st[i]);
    free(st);
    mbs_system_destroy(sys);
  }
  if (jf) {
    fprintf(jf, "\n  ]\n}\n");
    fclose(jf);
  }
  return status;
}
