// Shared pieces of the single-thread benchmark programs (bench_batch, bench_batch_simulate):
// the clock, medians of repeated timings, a seeded generator, the pin chain with random joint
// frames both compare on, and the CPU's name.
#ifndef MBS_BENCH_UTIL_H_
#define MBS_BENCH_UTIL_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbs/mbs.h"

#ifndef MAX_REPEATS
#define MAX_REPEATS 101
#endif

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

typedef struct stats {
  double median, min, max;
} stats;

static inline stats summarize(const double* v, int n) {
  double s[MAX_REPEATS];
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  stats r = {n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]), s[0], s[n - 1]};
  return r;
}

static unsigned long long rng_state = 88172645463325252ULL;
static inline double uniform(double lo, double hi) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return lo + (hi - lo) * ((double)(rng_state >> 11) * (1.0 / 9007199254740992.0));
}

// a chain of n pin joints with random joint frames and mass properties, gravity
static inline mbs_system* make_chain(int n) {
  mbs_system* sys = mbs_system_create("pin_chain");
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof(name), "link%d", i + 1);
    mbs_body_spec s = mbs_body_spec_default(name, i, MBS_MOB_PIN);
    s.mass = uniform(0.5, 2.0);
    for (int k = 0; k < 3; k++) {
      s.com[k] = uniform(-0.2, 0.2);
      s.X_PF.angles[k] = uniform(-M_PI, M_PI);
      s.X_PF.p[k] = uniform(-0.3, 0.3);
      s.X_BM.angles[k] = uniform(-M_PI, M_PI);
      s.X_BM.p[k] = uniform(-0.2, 0.2);
    }
    s.X_PF.p[1] -= 0.5;  // links hang below each other
    // principal moments obeying the triangle inequality, about the mass center
    const double a = uniform(0.02, 0.1), b = uniform(0.02, 0.1);
    s.inertia[0] = a;
    s.inertia[1] = b;
    s.inertia[2] = uniform(fabs(a - b) + 0.005, a + b - 0.005);
    if (mbs_system_add_body(sys, &s) < 0) {
      fprintf(stderr, "bench: %s\n", mbs_system_error(sys)->message);
      mbs_system_destroy(sys);
      return NULL;
    }
  }
  const double g[3] = {0, -9.81, 0};
  mbs_system_add_gravity(sys, g);
  if (mbs_system_finalize(sys) != MBS_OK) {
    fprintf(stderr, "bench: %s\n", mbs_system_error(sys)->message);
    mbs_system_destroy(sys);
    return NULL;
  }
  return sys;
}

static inline void cpu_model(char* buf, size_t n) {
  snprintf(buf, n, "unknown CPU");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "model name", 10) == 0) {
      const char* c = strchr(line, ':');
      if (c) {
        snprintf(buf, n, "%s", c + 2);
        buf[strcspn(buf, "\n")] = '\0';
      }
      break;
    }
  }
  fclose(f);
}

#endif  // MBS_BENCH_UTIL_H_
