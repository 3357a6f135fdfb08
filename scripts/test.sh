#!/bin/sh
# Build everything and run the whole test suite:
#   1. a release build: unit tests, the same tests under valgrind, command-line tests, and the
#      cross-check against Simbody and MuJoCo;
#   2. a sanitizer build (AddressSanitizer + UndefinedBehaviorSanitizer) running the tests again.
# Installs missing Debian packages first (MBS_NO_APT=1 skips that).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
jobs=$(nproc 2>/dev/null || echo 2)
export OPENBLAS_NUM_THREADS=1
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0
total=0
failed=0

# run_ctest BUILD_DIR NAME: run CTest, show its output, add its counts to the totals
run_ctest() {
  set +e
  (cd "$1" && ctest --output-on-failure -j "$jobs") > "$logs/$2" 2>&1
  rc=$?
  set -e
  cat "$logs/$2"
  n=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$logs/$2" | tail -n 1)
  f=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$logs/$2" | tail -n 1)
  if [ -z "$n" ] || [ "$rc" -ne 0 ]; then status=1; fi
  total=$((total + ${n:-0}))
  failed=$((failed + ${f:-0}))
}

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
run_ctest build release

cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DMBS_SANITIZE=ON -DMBS_BUILD_COMPARISON=OFF
cmake --build build-sanitize -j "$jobs"
run_ctest build-sanitize sanitize

if [ "$failed" -ne 0 ]; then status=1; fi
echo
echo "$((total - failed)) passed, $failed failed"
exit $status
