#!/bin/sh
# Validation of benchmarks/sched_sim.py against measured mbstudy runs on this machine:
#   benchmarks/sched_validate.sh MBSTUDY OUTDIR
# (environment: REPEAT=n runs each measurement n times and keeps the fastest, default 1;
#  WAIT_LOAD=x waits before each run, up to WAIT_MAX s (600), until the 1-minute load average is
#  below x (the machine is shared); STUDIES="posture mc fit" chooses the studies; MPIEXEC,
#  default mpiexec --oversubscribe).
#
# 1. Micro-benchmarks (C, compiled here with mpicc): the latency of the work counter's
#    operation (MPI_Fetch_and_op + MPI_Win_flush on rank 0's window, as studies/scheduler.c),
#    alone and with every rank at once, on 2 and 3 ranks; the cost of engine.c's polite_wait
#    on a non-blocking allreduce and broadcast; and the merger's costs that grow with the
#    number of journals (studies/merge.c's scan over mbs_merge_src and the strcmp of
#    find_sources, with the real struct from merge.h).
# 2. The studies benchmarks/studies/sched_{posture,mc,fit}.yaml (a posture sweep on a 1 cm
#    grid, a Monte Carlo study of the bouncing block, a CMA-ES + LM fit) run with mpiexec on 1,
#    2 and 3 ranks, 1 thread each; the wall time is the one mbstudy reports ("wrote ...: N
#    samples ...; W s"), the per-sample times are the result files' /status/wall_time. The
#    machine has 2 cores: 3 ranks oversubscribe them (and other users' load distorts every run:
#    the load average is recorded with each run).
# 3. Calibration from the 1-rank run and a merge-only run (the study as an array part, then
#    `mbstudy merge`; not possible for the fit): journal, merger and end-tail costs per sample,
#    startup (for the fit: rank 0's absorb + next_batch per batch).
# 4. sched_sim.py --validate: the predicted wall time and efficiency at 1, 2 and 3 ranks from
#    the 1-rank run's per-sample times, against the measured ones: OUTDIR/validation.txt and
#    OUTDIR/validation.json (and OUTDIR/calib.json for predictions at scale).
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 MBSTUDY OUTDIR" >&2
    exit 2
fi
mbstudy=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2"
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
repeat=${REPEAT:-1}
studies=${STUDIES:-"posture mc fit"}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec=${MPIEXEC:-"mpiexec --oversubscribe"}
python=/usr/bin/python3
load() { cut -d' ' -f1 /proc/loadavg; }
wait_quiet() {
    [ -n "${WAIT_LOAD:-}" ] || return 0
    waited=0
    while awk -v l="$(load)" -v m="$WAIT_LOAD" 'BEGIN {exit !(l > m)}' &&
        [ $waited -lt "${WAIT_MAX:-600}" ]; do
        sleep 10
        waited=$((waited + 10))
    done
}

echo "# sched_validate: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(getconf _NPROCESSORS_ONLN) cores, load $(cat /proc/loadavg)" \
    | tee "$out/machine.txt"
"$mbstudy" --version >> "$out/machine.txt" 2>&1 || true

#---------------------------------- 1. micro-benchmarks ----------------------------------------
cat > "$out/fao.c" <<'EOF'
// the work counter's operation (studies/scheduler.c): MPI_Fetch_and_op + MPI_Win_flush on a
// window of rank 0, in a passive-target epoch (MPI_Win_lock_all)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  int provided, rank, n;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const long iters = argc > 1 ? atol(argv[1]) : 20000;
  long* mem;
  MPI_Win win;
  MPI_Win_allocate(rank == 0 ? 2 * (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &mem, &win);
  if (rank == 0) mem[0] = mem[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  for (int mode = 0; mode < 2; mode++)  // 0: one rank at a time; 1: every rank at once
    for (int who = 0; who < (mode ? 1 : n); who++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double dt = 0;
      if (mode || rank == who) {
        const long one = 1;
        long old;
        const double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
          MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
          MPI_Win_flush(0, win);
        }
        dt = MPI_Wtime() - t0;
      }
      double all[256] = {0};
      MPI_Gather(&dt, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (rank == 0 && !mode) printf("alone %d %.4f\n", who, 1e6 * all[who] / iters);
      if (rank == 0 && mode) {
        double mx = 0;
        for (int r = 0; r < n; r++) mx = all[r] > mx ? all[r] : mx;
        printf("together %d %.4f %.4f\n", n, 1e6 * mx / iters, 1e6 * mx / (iters * n));
      }
    }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
EOF
cat > "$out/mscan.c" <<'EOF'
// the merger's costs that grow with the journals (studies/merge.c): step()'s scan of
// mbs_merge_src[] for the next sample (the loop copied; the struct from merge.h), and
// find_sources()'s strcmp of every listed journal with every known one
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "merge.h"
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
int main(int argc, char** argv) {
  const int nsrc = argc > 1 ? atoi(argv[1]) : 16384;
  mbs_merge_src* src = calloc((size_t)nsrc, sizeof(*src));
  int* perm = malloc(sizeof(int) * (size_t)nsrc);
  for (int i = 0; i < nsrc; i++) perm[i] = i;
  srand(1);
  for (int i = nsrc - 1; i > 0; i--) {
    const int j = rand() % (i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  const int reps = nsrc >= 16384 ? 1 : 4;
  long next = 0, checks = 0;
  double t0 = now();
  for (int r = 0; r < reps; r++) {
    for (int k = 0; k < nsrc; k++) {
      src[perm[k]].has = 1;
      src[perm[k]].rec.index = next + k;
    }
    for (int k = 0; k < nsrc; k++, next++) {
      int hit = -1;
      for (int i = 0; i < nsrc && hit < 0; i++) {
        mbs_merge_src* m = &src[i];
        checks++;
        if (m->gone) continue;
        while (m->has && m->rec.index < next) m->has = 0;
        if (m->has && m->rec.index == next) hit = i;
      }
    }
  }
  double dt = now() - t0;
  char** names = malloc(sizeof(char*) * (size_t)nsrc);
  for (int i = 0; i < nsrc; i++) {
    names[i] = malloc(96);
    snprintf(names[i], 96, "/scratch/project/study/posture_sweep.h5.parts/j0-r%d-t%d.bin", i / 4,
             i % 4);
    src[i].path = names[i];
  }
  const int m = nsrc < 4096 ? nsrc : 4096;  // part of the quadratic loop
  long cmps = 0;
  const double t1 = now();
  for (int i = 0; i < m; i++) {
    int known = 0;
    const char* name = names[(long)i * 7919 % nsrc];
    for (int k = 0; k < nsrc && !known; k++, cmps++) known = !strcmp(src[k].path, name);
  }
  const double dc = now() - t1;
  printf("%d %zu %.3f %.3f\n", nsrc, sizeof(mbs_merge_src), 1e9 * dt / (double)checks,
         1e9 * dc / (double)cmps);
  return 0;
}
EOF
cat > "$out/pw.c" <<'EOF'
// polite_wait (studies/engine.c: MPI_Testall, then 1 ms sleeps) on a non-blocking allreduce
// and broadcast: the time from the last rank's arrival (the root's for the broadcast) to the
// last rank's return, ranks arriving 0-3 ms apart
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void polite_wait(int n, MPI_Request* req) {
  for (int done = 0;;) {
    MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    const struct timespec pause = {0, 1000000};  // 1 ms
    nanosleep(&pause, NULL);
  }
}
static void spin(double s) {
  const double t = MPI_Wtime();
  while (MPI_Wtime() - t < s) {
  }
}
int main(int argc, char** argv) {
  int provided, rank, n;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int iters = argc > 1 ? atoi(argv[1]) : 300;
  srand(rank + 1);
  double sum[2] = {0, 0};
  for (int it = 0; it < iters; it++)
    for (int kind = 0; kind < 2; kind++) {
      MPI_Barrier(MPI_COMM_WORLD);
      spin(1e-3 * (rand() % 3000) / 1000.0);
      const double arrive = MPI_Wtime();
      long v[3] = {rank, 0, 0};
      MPI_Request req;
      if (kind == 0) MPI_Iallreduce(MPI_IN_PLACE, v, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, &req);
      else MPI_Ibcast(v, 3, MPI_LONG, 0, MPI_COMM_WORLD, &req);
      polite_wait(1, &req);
      const double leave = MPI_Wtime();
      double last = arrive, w, mx;
      if (kind == 0) MPI_Allreduce(&arrive, &last, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      else MPI_Bcast(&last, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      w = leave - (last > arrive ? last : arrive);
      MPI_Allreduce(&w, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      sum[kind] += mx;
    }
  if (rank == 0) printf("polite %d %.4f %.4f\n", n, 1e3 * sum[0] / iters, 1e3 * sum[1] / iters);
  MPI_Finalize();
  return 0;
}
EOF
if mpicc -O2 -o "$out/pw" "$out/pw.c"; then
    for n in 2 3; do
        $mpiexec -n $n "$out/pw" 300 > "$out/pw_$n.txt" || true
    done
fi
if mpicc -O2 -o "$out/fao" "$out/fao.c"; then
    for n in 2 3; do
        $mpiexec -n $n "$out/fao" 20000 > "$out/fao_$n.txt" || true
    done
fi
build_inc=$(dirname "$mbstudy")/include
if mpicc -O2 -I"$repo/include" -I"$repo/studies" -I"$build_inc" -o "$out/mscan" "$out/mscan.c"; then
    : > "$out/mscan.txt"
    for n in 64 1024 16384 65536; do "$out/mscan" $n >> "$out/mscan.txt"; done
fi

#---------------------------------- 2. the studies ---------------------------------------------
echo "study ranks repeat outer_s load_before load_after log h5" > "$out/runs.txt"
for st in $studies; do
    spec="$here/studies/sched_$st.yaml"
    r=1
    while [ "$r" -le "$repeat" ]; do  # 1, 2, 3 ranks, then again: drifts of the load hit all
        for n in 1 2 3; do
            h5="$out/${st}_r$n.$r.h5"
            log="$out/${st}_r$n.$r.log"
            wait_quiet
            l0=$(load)
            t0=$(date +%s.%N)
            $mpiexec -n $n "$mbstudy" run "$spec" --output "$h5" --force --quiet --threads 1 \
                --allow-failures > "$log" 2>&1 || { echo "failed: see $log" >&2; exit 1; }
            t1=$(date +%s.%N)
            echo "$st $n $r $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') $l0 $(load) $log $h5" \
                >> "$out/runs.txt"
            grep '^wrote [^ ]*\.h5: ' "$log" | sed "s#^#$st $n ranks: #"
            rm -f "${h5%.h5}.png" "${h5%.h5}.md"
        done
        r=$((r + 1))
    done
    # the merger alone: the study as an array part (journals kept, computed with 2 threads),
    # then a merge-only run: every sample merged back to back
    cal="$out/${st}_merge.h5"
    rm -rf "$cal" "$cal.parts" "$cal.lock"
    # (not for an iterative driver: it cannot run as parts; its merger cost is taken from the
    # 1-rank run's writer time)
    if "$mbstudy" run "$spec" --output "$cal" --quiet --threads 2 --part 0/1 --allow-failures \
        > "$out/${st}_part.log" 2>&1; then
        "$mbstudy" merge "$spec" --output "$cal" --quiet > "$out/${st}_merge.log" 2>&1
        grep '^wrote [^ ]*\.h5: ' "$out/${st}_merge.log" | sed "s#^#$st merge only: #"
    else
        echo "$st: no merge-only run ($(tail -1 "$out/${st}_part.log"))"
    fi
    rm -rf "$cal" "$cal.parts" "$cal.lock" "${cal%.h5}.png" "${cal%.h5}.md"
done

#---------------------------------- 3-4. calibration, predictions ------------------------------
"$python" "$here/sched_sim.py" --validate "$out"
