#!/bin/sh
# A study killed with SIGKILL in the middle, and another stopped with SIGTERM (and with
# MBS_KILL_USR1=1 one with SIGUSR1), each resumed with --resume, must give the same file as an
# uninterrupted run (wall times aside).
# usage: kill_resume.sh MBSTUDY SPEC WORKDIR COMPARE_PY [BYTES [COMPARE_OPTION ...]]
# (the runs are stopped once the journals hold BYTES, default 1000000; the options go to
# COMPARE_PY)
set -u
mbstudy=$1
spec=$2
dir=$3
compare=$4
threshold=${5:-1000000}
shift 4
[ $# -gt 0 ] && shift
extra="$*"  # options for COMPARE_PY (no blanks in them)
rm -rf "$dir"
mkdir -p "$dir"

fail() {
  echo "FAIL: $*"
  exit 1
}

"$mbstudy" run "$spec" --output "$dir/full.h5" --quiet || fail "the uninterrupted run failed"

# wait until some samples are in the journals, then stop the run with signal $1
interrupt() {
  sig=$1
  out=$2
  "$mbstudy" run "$spec" --output "$out" --quiet &
  pid=$!
  i=0
  while [ $i -lt 3000 ]; do
    size=$(cat "$out".parts/*.bin 2>/dev/null | wc -c)
    [ "$size" -gt "$threshold" ] && break
    sleep 0.02
    i=$((i + 1))
  done
  kill -s "$sig" $pid 2>/dev/null
  wait $pid
  code=$?
  [ -f "$out" ] && fail "the study finished before it could be stopped by $sig"
  [ -d "$out.parts" ] || fail "no journals after $sig"
  echo "stopped by $sig with exit code $code; journals: $(cat "$out".parts/*.bin | wc -c) bytes"
  if [ "$sig" != KILL ]; then
    [ $code -eq 3 ] || fail "SIG$sig: exit code $code, expected 3 (stopped, resumable)"
  fi
  # without --resume the stopped study is not overwritten
  if "$mbstudy" run "$spec" --output "$out" --quiet 2>"$dir/refused.txt"; then
    fail "a second run without --resume did not refuse the journals"
  fi
  grep -q -- "--resume" "$dir/refused.txt" || fail "the refusal does not mention --resume"
  "$mbstudy" run "$spec" --output "$out" --resume --quiet || fail "--resume after $sig failed"
  [ -d "$out.parts" ] && fail "journals left after a complete run"
  /usr/bin/python3 "$compare" "$dir/full.h5" "$out" --ignore /status/wall_time $extra
  rc=$?
  [ $rc -eq 77 ] && exit 77
  [ $rc -eq 0 ] || fail "the resumed study after $sig differs from the uninterrupted one"
}

interrupt KILL "$dir/killed.h5"
interrupt TERM "$dir/terminated.h5"
# SIGUSR1: a batch scheduler's warning before the time limit (MBS_KILL_USR1=1)
if [ "${MBS_KILL_USR1:-0}" = 1 ]; then
  interrupt USR1 "$dir/warned.h5"
fi
# an existing result file is never overwritten without --force
"$mbstudy" run "$spec" --output "$dir/full.h5" --quiet 2>/dev/null && fail "overwrote a result"
echo "PASS: killed and terminated studies resumed to the uninterrupted result"
