#!/bin/sh
# Wall time of the posture study's default sweep (the main command's study) and of its gait2392
# version, several runs each, median reported. Run from the repository after a release build:
#   benchmarks/posture_bench.sh [repeats, default 3] [threads, default all cores]
set -eu
cd "$(dirname "$0")/.."
repeats=${1:-3}
threads=${2:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OPENBLAS_NUM_THREADS=1
bench() {  # name spec
    name=$1
    spec=$2
    times=""
    for i in $(seq "$repeats"); do
        t0=$(date +%s.%N)
        build/mbstudy run "$spec" --output "$out/$name.h5" --force --quiet --threads "$threads" \
            > /dev/null
        t1=$(date +%s.%N)
        times="$times $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')"
    done
    samples=$(build/mbstudy inspect "$out/$name.h5" | awk '/^  samples /{print $2}')
    median=$(echo $times | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf "| %s | %s | %s | %.1f | %s |\n" "$name" "$samples" "$threads" "$median" "$times"
}
echo "| study | samples | threads | median wall time (s) | runs (s) |"
echo "|---|--:|--:|--:|---|"
bench posture_sweep studies/specs/posture_sweep.yaml
shared=../shared/models/gait2392_thelen2003muscle.osim
if [ -f "$shared" ]; then
    sed "s#../../../shared/models/#$(cd ../shared/models && pwd)/#" \
        studies/specs/posture_gait2392.yaml > "$out/posture_gait2392.yaml"
    bench posture_gait2392 "$out/posture_gait2392.yaml"
else
    echo "(gait2392: $shared not found, skipped)"
fi
