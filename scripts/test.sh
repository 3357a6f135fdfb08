#!/bin/sh
# Build everything and run the whole test suite:
#   1. a release build: unit tests, the same tests under valgrind, command-line tests, and the
#      cross-check against Simbody and MuJoCo;
#   2. a sanitizer build (AddressSanitizer + UndefinedBehaviorSanitizer) running the tests again;
#   3. fuzzing (tests/fuzz/README.md): the readers of study files, .osim models, .sto/.mot/.trc
#      tables and journals under libFuzzer (clang, with AddressSanitizer and
#      UndefinedBehaviorSanitizer), each for MBS_FUZZ_SECONDS seconds (default 60; 0 skips the
#      phase) from a copy of its seed corpus; a crash, leak, timeout or out-of-memory fails the
#      command, and the input is kept in build-fuzz/findings/. Skipped, with a line saying so,
#      where clang or libFuzzer's runtime is missing.
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

# fuzz_start TARGET: fuzz_TARGET in the background over a copy of its seeds, in its own
# temporary folder (inputs are written there), output in $logs/fuzz_TARGET
fuzz_start() {
  w="$logs/fuzz/$1"
  mkdir -p "$w/corpus" "$w/tmp"
  cp tests/fuzz/corpus/"$1"/* "$w/corpus/"
  # the inputs of earlier findings, so that they stay fixed
  if [ -d "tests/fuzz/crashes/$1" ]; then cp tests/fuzz/crashes/"$1"/* "$w/corpus/"; fi
  dict=""
  if [ -f "tests/fuzz/$1.dict" ]; then dict="tests/fuzz/$1.dict"; fi
  # (timeout: only if libFuzzer's own limits failed to stop it)
  TMPDIR="$w/tmp" UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp" \
    timeout -s KILL $((fuzz_seconds + 300)) build-fuzz/tests/fuzz/fuzz_"$1" \
    -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 ${dict:+"-dict=$dict"} \
    -artifact_prefix="$w/" -print_final_stats=1 "$w/corpus" > "$logs/fuzz_$1" 2>&1 &
  eval "fuzz_pid_$1=\$!"
}

# fuzz_finish TARGET: wait for it, report, count it as one test
fuzz_finish() {
  pid=""
  eval "pid=\$fuzz_pid_$1"
  set +e
  wait "$pid"
  rc=$?
  set -e
  w="$logs/fuzz/$1"
  total=$((total + 1))
  found=""
  for f in "$w"/crash-* "$w"/leak-* "$w"/timeout-* "$w"/oom-*; do
    if [ -f "$f" ]; then found="$found ${f##*/}"; fi
  done
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$logs/fuzz_$1" | tail -n 1)
  if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
    echo "fuzz_$1: passed, ${fuzz_seconds} s: $(echo "$done_line" |
      sed 's/^#\([0-9]*\).*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*exec\/s: \([0-9]*\).*/\1 inputs, coverage \2 edges (\3 features), corpus \4, \5 exec\/s/')"
    return
  fi
  failed=$((failed + 1))
  status=1
  echo "fuzz_$1: FAILED (libFuzzer exit code $rc); its report:"
  sed -n '/==ERROR\|ERROR: libFuzzer\|runtime error\|ALARM: working\|out-of-memory/,$p' "$logs/fuzz_$1" |
    grep -v '^stat::' | head -n 80
  mkdir -p "build-fuzz/findings/$1"
  for f in $found; do
    cp "$w/$f" "build-fuzz/findings/$1/"
    echo "fuzz_$1: the input: build-fuzz/findings/$1/$f"
    echo "  reproduce: UBSAN_OPTIONS=print_stacktrace=1 build-fuzz/tests/fuzz/fuzz_$1 build-fuzz/findings/$1/$f"
  done
  if [ -z "$found" ]; then
    echo "fuzz_$1: no input was saved; the whole log:"
    cat "$logs/fuzz_$1"
  fi
}

fuzz_seconds=${MBS_FUZZ_SECONDS:-60}
echo
if [ "$fuzz_seconds" = "0" ]; then
  echo "fuzz: SKIPPED: MBS_FUZZ_SECONDS=0"
elif ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: SKIPPED: clang is not installed (Debian: clang libclang-rt-dev libomp-dev); the" \
       "readers were not fuzzed"
elif ! printf 'int LLVMFuzzerTestOneInput(const char* d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
     clang -x c - -fsanitize=fuzzer,address,undefined -o "$logs/fuzz_probe" > /dev/null 2>&1; then
  echo "fuzz: SKIPPED: clang cannot build libFuzzer programs (Debian: libclang-rt-dev); the" \
       "readers were not fuzzed"
else
  echo "fuzz: the readers under libFuzzer, ${fuzz_seconds} s each"
  CC=clang cmake -S . -B build-fuzz -DCMAKE_C_COMPILER="$(command -v clang)" -DMBS_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMBS_BUILD_COMPARISON=OFF -DMBS_VALGRIND_TESTS=OFF \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake --build build-fuzz --target fuzzers -j "$jobs"
  rm -rf build-fuzz/findings
  running=""
  n=0
  for t in spec osim table journal; do  # as many at once as there are cores
    fuzz_start "$t"
    running="$running $t"
    n=$((n + 1))
    if [ "$n" -ge "$jobs" ]; then
      for r in $running; do fuzz_finish "$r"; done
      running=""
      n=0
    fi
  done
  for r in $running; do fuzz_finish "$r"; done
fi

if [ "$failed" -ne 0 ]; then status=1; fi
echo
echo "$((total - failed)) passed, $failed failed"
exit $status
