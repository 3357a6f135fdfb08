#!/bin/sh
# Speed of muscle-driven forward simulation: gait2392 (92 Thelen muscles) and rajagopal2016 (80
# Millard muscles), constant excitations 0.05 and 0.3 from the default pose, rk_merson at
# accuracy 1e-3, 1 s simulated, interleaved repeats, one core. Run from anywhere after a release
# build in build/:
#   benchmarks/bench_muscles.sh [repeats, default 7] [folder of the models, default ../shared/models]
# Extra options for bench_muscles can follow in BENCH_MUSCLES_ARGS (e.g. "--accuracy 1e-4");
# BENCH_CPU=n pins the (single-threaded) program to CPU n.
set -eu
cd "$(dirname "$0")/.."
repeats=${1:-7}
models=${2:-../shared/models}
for m in gait2392_thelen2003muscle.osim rajagopal2016.osim; do
    [ -f "$models/$m" ] || { echo "bench_muscles.sh: $models/$m not found" >&2; exit 1; }
done
cmake --build build --target bench_muscles -j2 > /dev/null
lscpu | sed -n 's/^Model name: *//p' | sed 's/^/# CPU: /'
echo "# $(nproc) online CPUs; git $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- core io include || echo ' (core/io/include modified in the working tree)')"
pin=""
[ -n "${BENCH_CPU:-}" ] && pin="taskset -c $BENCH_CPU"
# shellcheck disable=SC2086
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $pin build/benchmarks/bench_muscles \
    --repeats "$repeats" --duration 1 --accuracy 1e-3 --excitation 0.05,0.3 ${BENCH_MUSCLES_ARGS:-} \
    "$models/gait2392_thelen2003muscle.osim" "$models/rajagopal2016.osim"
