#!/bin/sh
# mbstudy's main job: install what is missing (Debian), build, run.
#   scripts/main.sh [options for `mbstudy demo`]
# Set MBS_NO_APT=1 to skip the package step (e.g. on a cluster with environment modules).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
build/mbstudy demo --out out/demo "$@"
echo "results are in out/demo/ (chain.svg is the picture)"
