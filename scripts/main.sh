#!/bin/sh
# mbstudy's main job: install what is missing (Debian), build, and run the posture perturbation
# study (studies/specs/posture_sweep.yaml) on all local cores.
#   scripts/main.sh [options for `mbstudy run`, e.g. --threads 4]
#   scripts/main.sh demo [options for `mbstudy demo`]    the chain demo of the dynamics core
# Set MBS_NO_APT=1 to skip the package step (e.g. on a cluster with environment modules).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
export OPENBLAS_NUM_THREADS=1
if [ "${1:-}" = "demo" ]; then
    shift
    build/mbstudy demo --out out/demo "$@"
    echo "results are in out/demo/ (chain.svg is the picture)"
    exit 0
fi
mkdir -p out/posture
build/mbstudy run studies/specs/posture_sweep.yaml --output out/posture/posture_sweep.h5 \
    --force --threads "$jobs" "$@"
echo "results are in out/posture/: posture_sweep.h5 (all samples; the table in /posture)," \
     "posture_sweep.png (the picture), posture_sweep.md (the table)"
