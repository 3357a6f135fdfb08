// bench_batch_simulate: throughput of the batched simulation (mbs_batch_simulate, batch.h)
// against mbs_simulate one State at a time, on pin chains with general joint frames.
//
// For chains of --bodies sizes (random X_PF and X_BM rotations and offsets, random mass
// properties, gravity), --states States with random initial q and u are simulated for
// --duration seconds by rk_merson at --accuracy, reporting every --report seconds (a report
// function that reads the State; each report realizes the State's kinematics, one lane at a
// time):
//   A: mbs_simulate on each State in turn;
//   B: mbs_batch_simulate on all of them, --lanes side by side (a lane takes the next State
//      when its own ends), for every instruction set the CPU runs;
// interleaved A, B, A, B, ... over --repeats rounds. It prints the time per simulated State,
// the gain (median A / median B), the steps taken, and checks that every State ends where
// mbs_simulate puts it (to 1e-12 relative). Single thread.
//
//   bench_batch_simulate [--states N] [--lanes L] [--repeats R] [--duration S]
//                        [--accuracy A] [--report S] [--bodies 10,50,...] [--isa avx512,...]
//                        [--json FILE]
//
// Exit status: 0 on success, 1 when the paths disagree or something fails, 2 for bad arguments.
#define _GNU_SOURCE  // clock_gettime, M_PI

#include "mbs/batch.h"
#include "mbs/mbs.h"

#ifndef MBS_BENCH_BUILD_INFO
#define MBS_BENCH_BUILD_INFO "(unknown build)"
#endif

#define MAX_ISA 3
#define MAX_REPEATS 101
#define MAX_SIZES 16

#include "bench_util.h"

static volatile double sink;

static int read_state(const mbs_system* sys, mbs_state* st, void* user) {
  (void)user;
  sink = mbs_state_q(st)[mbs_system_nq(sys) - 1];
  return 0;
}

static void set_initial(mbs_state* const* st, const double* y0, int n, int nq, int nu) {
  for (int i = 0; i < n; i++) {
    memcpy(mbs_state_upd_q(st[i]), y0 + (size_t)i * (size_t)(nq + nu), (size_t)nq * sizeof(double));
    memcpy(mbs_state_upd_u(st[i]), y0 + (size_t)i * (size_t)(nq + nu) + nq,
           (size_t)nu * sizeof(double));
    mbs_state_set_time(st[i], 0);
  }
}

// A: seconds per State; *steps: total accepted steps
static double run_alone(const mbs_system* sys, mbs_state* const* st, const double* y0, int n,
                        const mbs_simulation_options* o, double T, long* steps) {
  set_initial(st, y0, n, mbs_system_nq(sys), mbs_system_nu(sys));
  const double t0 = now();
  long s = 0;
  for (int i = 0; i < n; i++) {
    mbs_simulation_result r;
    if (mbs_simulate(sys, st[i], T, o, NULL, 0, read_state, NULL, &r) != MBS_OK) return -1;
    s += r.integrator.steps;
  }
  *steps = s;
  return (now() - t0) / n;
}

// B: seconds per State
static double run_batched(const mbs_system* sys, mbs_batch_sim* bs, mbs_state* const* st,
                          const double* y0, int n, double T, long* steps) {
  set_initial(st, y0, n, mbs_system_nq(sys), mbs_system_nu(sys));
  mbs_simulation_result res[64];
  int status[64];
  const double t0 = now();
  long s = 0;
  if (mbs_batch_simulate(bs, sys, st, n, T, read_state, NULL, res, status) != MBS_OK) return -1;
  for (int k = 0; k < n; k++) s += res[k].integrator.steps;
  *steps = s;
  return (now() - t0) / n;
}

int main(int argc, char** argv) {
  int nstates = 32, lanes = 8, repeats = 5;
  double duration = 1.0, accuracy = 1e-6, report = 0.05;
  int sizes[MAX_SIZES] = {10, 50, 200}, nsizes = 3;
  const char* json = NULL;
  const char* isa_list = "avx512,avx2,portable";
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "bench_batch_simulate: '%s' needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--states")) nstates = atoi(v);
    else if (!strcmp(a, "--lanes")) lanes = atoi(v);
    else if (!strcmp(a, "--repeats")) repeats = atoi(v);
    else if (!strcmp(a, "--duration")) duration = atof(v);
    else if (!strcmp(a, "--accuracy")) accuracy = atof(v);
    else if (!strcmp(a, "--report")) report = atof(v);
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
      fprintf(stderr, "usage: bench_batch_simulate [--states N] [--lanes L] [--repeats R] "
                      "[--duration S] [--accuracy A] [--report S] [--bodies 10,50,...] "
                      "[--isa avx512,avx2,portable] [--json FILE]\n");
      return 2;
    }
    i++;
  }
  if (nstates < 1 || nstates > 64 || lanes < 1 || lanes > 64 || repeats < 1 ||
      repeats > MAX_REPEATS || !(duration > 0) || !(accuracy > 0 && accuracy < 1) ||
      !(report >= 0) || nsizes < 1) {
    fprintf(stderr, "bench_batch_simulate: bad arguments (states and lanes 1..64)\n");
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
  printf("# bench_batch_simulate, mbstudy %s; %s\n", MBS_VERSION_STRING, MBS_BENCH_BUILD_INFO);
  printf("# machine: %s; ISAs timed:", cpu);
  for (int k = 0; k < nisa; k++) printf(" %s", isas[k]);
  printf("\n# pin chains with random joint frames and gravity; %d States with random q and u, "
         "%g s each by rk_merson at accuracy %g, reports every %g s; batched %d side by side; "
         "%d interleaved rounds; single thread\n", nstates, duration, accuracy, report, lanes,
         repeats);
  printf("# milliseconds per simulated State, median [min, max] over the rounds; gain = median "
         "one-at-a-time / median batched\n");
  printf("%6s %8s %26s", "bodies", "steps", "one at a time (ms)");
  for (int k = 0; k < nisa; k++) printf(" %26s %6s", isas[k], "gain");
  printf("\n");
  FILE* jf = NULL;
  if (json) {
    jf = fopen(json, "w");
    if (!jf) {
      fprintf(stderr, "bench_batch_simulate: cannot write %s\n", json);
      return 1;
    }
    fprintf(jf, "{\n  \"benchmark\": \"bench_batch_simulate\",\n  \"version\": \"%s\",\n",
            MBS_VERSION_STRING);
    fprintf(jf, "  \"build\": \"%s\",\n  \"cpu\": \"%s\",\n", MBS_BENCH_BUILD_INFO, cpu);
    fprintf(jf, "  \"states\": %d,\n  \"lanes\": %d,\n  \"repeats\": %d,\n  \"duration_s\": %g,\n"
                "  \"accuracy\": %g,\n  \"report_interval_s\": %g,\n", nstates, lanes, repeats,
            duration, accuracy, report);
    fprintf(jf, "  \"unit\": \"seconds per simulated State\",\n  \"chains\": [");
  }
  mbs_simulation_options o;
  mbs_simulation_options_default(&o);
  o.integ.accuracy = accuracy;
  o.report_interval = report;
  int status = 0;
  for (int si = 0; si < nsizes; si++) {
    const int nb = sizes[si];
    mbs_system* sys = make_chain(nb);
    if (!sys) return 1;
    const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys);
    double* y0 = malloc((size_t)nstates * (size_t)(nq + nu) * sizeof(double));
    mbs_state* st[64];
    mbs_state* ref[64];
    for (int i = 0; i < nstates; i++) {
      for (int j = 0; j < nq; j++) y0[(size_t)i * (size_t)(nq + nu) + (size_t)j] = uniform(-1, 1);
      for (int j = 0; j < nu; j++)
        y0[(size_t)i * (size_t)(nq + nu) + (size_t)(nq + j)] = uniform(-1, 1);
      st[i] = mbs_state_create(sys);
      ref[i] = mbs_state_create(sys);
    }
    mbs_batch_sim* bs[MAX_ISA];
    for (int k = 0; k < nisa; k++) {
      bs[k] = mbs_batch_sim_create(sys, lanes, &o);
      if (!bs[k] || mbs_batch_set_isa(mbs_batch_sim_batch(bs[k]), isas[k]) != MBS_OK) {
        fprintf(stderr, "bench_batch_simulate: cannot make a %s simulator\n", isas[k]);
        return 1;
      }
    }
    // the two paths agree: the end States
    long steps_a = 0, steps_b = 0;
    if (run_alone(sys, ref, y0, nstates, &o, duration, &steps_a) < 0) {
      fprintf(stderr, "bench_batch_simulate: %d bodies: mbs_simulate failed\n", nb);
      return 1;
    }
    double worst = 0;
    for (int k = 0; k < nisa; k++) {
      if (run_batched(sys, bs[k], st, y0, nstates, duration, &steps_b) < 0 ||
          steps_b != steps_a) {
        fprintf(stderr, "bench_batch_simulate: %d bodies, %s: failed or other steps (%ld, %ld)\n",
                nb, isas[k], steps_b, steps_a);
        status = 1;
      }
      for (int i = 0; i < nstates; i++)
        for (int j = 0; j < nq; j++) {
          const double a = mbs_state_q(st[i])[j], b = mbs_state_q(ref[i])[j];
          const double e = fabs(a - b) / fmax(1.0, fmax(fabs(a), fabs(b)));
          if (!(e <= worst)) worst = e;
        }
    }
    if (!(worst <= 1e-12)) {
      fprintf(stderr, "bench_batch_simulate: %d bodies: the paths differ by %g relative\n", nb,
              worst);
      status = 1;
    }
    double ta[MAX_REPEATS], tb[MAX_ISA][MAX_REPEATS];
    long dummy;
    for (int r = 0; r < repeats; r++) {
      ta[r] = run_alone(sys, ref, y0, nstates, &o, duration, &dummy);
      for (int k = 0; k < nisa; k++)
        tb[k][r] = run_batched(sys, bs[k], st, y0, nstates, duration, &dummy);
    }
    const stats sa = summarize(ta, repeats);
    printf("%6d %8.0f %8.3f [%7.3f, %7.3f]", nb, (double)steps_a / nstates, 1e3 * sa.median,
           1e3 * sa.min, 1e3 * sa.max);
    for (int k = 0; k < nisa; k++) {
      const stats sb = summarize(tb[k], repeats);
      printf(" %8.3f [%7.3f, %7.3f] %6.2f", 1e3 * sb.median, 1e3 * sb.min, 1e3 * sb.max,
             sa.median / sb.median);
    }
    printf("   (max rel. difference %.2g)\n", worst);
    fflush(stdout);
    if (jf) {
      fprintf(jf, "%s\n    {\"bodies\": %d, \"steps_per_state\": %.1f, \"max_rel_difference\": "
                  "%.3g,\n", si ? "," : "", nb, (double)steps_a / nstates, worst);
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
    for (int k = 0; k < nisa; k++) mbs_batch_sim_destroy(bs[k]);
    for (int i = 0; i < nstates; i++) {
      mbs_state_destroy(st[i]);
      mbs_state_destroy(ref[i]);
    }
    free(y0);
    mbs_system_destroy(sys);
  }
  if (jf) {
    fprintf(jf, "\n  ]\n}\n");
    fclose(jf);
  }
  return status;
}
