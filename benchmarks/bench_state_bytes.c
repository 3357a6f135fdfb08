// bench_state_bytes: the memory of one State, as the allocator counts it (glibc's mallinfo2:
// bytes in use after mbs_state_create minus before, block headers included), for pin chains with
// general joint frames and any OpenSim model given on the command line.
//
//   bench_state_bytes [--json FILE] [MODEL.osim ...]
//
// A study keeps one State per thread (and copies of it for the integrator's stages), never one
// per sample, so this is the memory a thread needs, whatever the sample count.
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs/osim.h"

// bytes in use from the allocator: ordinary blocks and mmapped ones (glibc)
static size_t in_use(void) {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

typedef struct row {
  char name[256];
  int nbody, nq, nu, nz;
  size_t bytes;
  size_t vars;
} row;

static void measure(const mbs_system* sys, const char* name, row* r) {
  snprintf(r->name, sizeof r->name, "%s", name);
  const size_t b0 = in_use();
  mbs_state* st = mbs_state_create(sys);
  r->bytes = in_use() - b0;
  r->nbody = mbs_system_nbody(sys);
  r->nq = mbs_system_nq(sys);
  r->nu = mbs_system_nu(sys);
  r->nz = mbs_system_nz(sys);
  size_t n = 0;
  if (st) mbs_state_vars(st, &n);
  r->vars = n;
  mbs_state_destroy(st);
}

// a pin chain with general joint frames (random F and M rotations and offsets)
static mbs_system* chain(int n) {
  mbs_system* sys = mbs_system_create("chain");
  unsigned s = 12345u + (unsigned)n;
  char name[32];
  for (int i = 1; i <= n; i++) {
    snprintf(name, sizeof name, "b%d", i);
    mbs_body_spec b = mbs_body_spec_default(name, i - 1, MBS_MOB_PIN);
    for (int k = 0; k < 3; k++) {
      s = s * 1103515245u + 12345u;
      b.X_PF.angles[k] = ((double)(s >> 8) / 16777216.0 - 0.5) * 6.2;
      s = s * 1103515245u + 12345u;
      b.X_BM.angles[k] = ((double)(s >> 8) / 16777216.0 - 0.5) * 6.2;
      b.X_PF.p[k] = 0.05;
      b.X_BM.p[k] = -0.05;
    }
    b.mass = 1;
    b.inertia[0] = b.inertia[1] = b.inertia[2] = 0.01;
    mbs_system_add_body(sys, &b);
  }
  const double g[3] = {0, -9.81, 0};
  mbs_system_add_gravity(sys, g);
  if (mbs_system_finalize(sys) != MBS_OK) {
    fprintf(stderr, "chain %d: %s\n", n, mbs_system_error(sys)->message);
    exit(1);
  }
  return sys;
}

int main(int argc, char** argv) {
  const char* json = NULL;
  row rows[64];
  int nr = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json") && i + 1 < argc) {
      json = argv[++i];
      continue;
    }
    if (argv[i][0] == '-') {
      fprintf(stderr, "usage: %s [--json FILE] [MODEL.osim ...]\n", argv[0]);
      return 2;
    }
  }
  const int sizes[] = {1, 10, 50, 200};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    mbs_system* sys = chain(sizes[k]);
    char name[64];
    snprintf(name, sizeof name, "pin chain, %d bodies", sizes[k]);
    measure(sys, name, &rows[nr++]);
    mbs_system_destroy(sys);
  }
  for (int i = 1; i < argc && nr < 64; i++) {
    if (!strcmp(argv[i], "--json")) {
      i++;
      continue;
    }
    mbs_error err;
    mbs_osim_model* m = mbs_osim_read(argv[i], &err);
    if (!m) {
      fprintf(stderr, "%s: %s\n", argv[i], err.message);
      return 1;
    }
    const char* base = strrchr(argv[i], '/');
    measure(mbs_osim_system(m), base ? base + 1 : argv[i], &rows[nr++]);
    mbs_osim_free(m);
  }
  printf("| model | bodies | nq | nu | z | State bytes | variables (doubles) |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < nr; i++)
    printf("| %s | %d | %d | %d | %d | %zu | %zu |\n", rows[i].name, rows[i].nbody, rows[i].nq,
           rows[i].nu, rows[i].nz, rows[i].bytes, rows[i].vars);
  if (json) {
    FILE* f = fopen(json, "w");
    if (!f) {
      perror(json);
      return 1;
    }
    fprintf(f, "[\n");
    for (int i = 0; i < nr; i++)
      fprintf(f, "%s  {\"model\": \"%s\", \"bodies\": %d, \"nq\": %d, \"nu\": %d, \"nz\": %d, "
                 "\"bytes\": %zu, \"vars\": %zu}",
              i ? ",\n" : "", rows[i].name, rows[i].nbody, rows[i].nq, rows[i].nu, rows[i].nz,
              rows[i].bytes, rows[i].vars);
    fprintf(f, "\n]\n");
    if (fclose(f)) {
      perror(json);
      return 1;
    }
  }
  return 0;
}
