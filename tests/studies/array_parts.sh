#!/bin/sh
# An array job's parts (`mbstudy run --part I/K`), run at the same time into one journal folder,
# one of them on two MPI ranks, merged by `mbstudy merge` into the file a single run writes
# (bit for bit, wall times aside); a part run again goes on from its journals; merging before
# every part is done names what is missing (--if-complete: writes nothing, exit 0); bad --part values and iterative studies refused.
# Also the output's lock: a second run, a resume or a merge of an output being written is
# refused, naming the process and host; a part cannot run while a full run holds it; a stopped
# study is inspected from its journals, marked incomplete.
# usage: array_parts.sh MBSTUDY SPEC ITERATIVE_SPEC WORKDIR COMPARE_PY MPIEXEC LONG_SPEC
set -u
mbstudy=$1
spec=$2
iterative=$3
dir=$4
compare=$5
mpiexec=$6
long=$7
rm -rf "$dir"
mkdir -p "$dir"

fail() {
  echo "FAIL: $*"
  exit 1
}

"$mbstudy" run "$spec" --output "$dir/single.h5" --quiet --allow-failures ||
  fail "the single run failed"

# parts 0 and 2 of 3 at once (part 2 on two ranks), then merging with part 1 missing
"$mbstudy" run "$spec" --output "$dir/array.h5" --part 0/3 --quiet > "$dir/p0.txt" 2>&1 &
p0=$!
"$mpiexec" -n 2 --oversubscribe "$mbstudy" run "$spec" --output "$dir/array.h5" --part 2/3 \
  --quiet > "$dir/p2.txt" 2>&1 || fail "part 2 on two ranks failed: $(cat "$dir/p2.txt")"
wait $p0 || fail "part 0 failed: $(cat "$dir/p0.txt")"
[ -f "$dir/array.h5" ] && fail "a part wrote the result file"
if "$mbstudy" merge "$spec" --output "$dir/array.h5" --quiet 2> "$dir/merge1.txt"; then
  fail "merged with part 1 missing"
fi
grep -q "not in the journals" "$dir/merge1.txt" || fail "merge message: $(cat "$dir/merge1.txt")"
[ -f "$dir/array.h5" ] && fail "a refused merge left a result file"
echo "refused: $(cat "$dir/merge1.txt")"
"$mbstudy" merge "$spec" --output "$dir/array.h5" --if-complete > "$dir/merge2.txt" 2>&1 ||
  fail "merge --if-complete with a part missing: $(cat "$dir/merge2.txt")"
grep -q "not merged yet" "$dir/merge2.txt" || fail "merge --if-complete: $(cat "$dir/merge2.txt")"
[ -f "$dir/array.h5" ] && fail "merge --if-complete wrote a result with a part missing"

# part 1, twice: the second run finds its samples done and computes nothing
"$mbstudy" run "$spec" --output "$dir/array.h5" --part 1/3 --quiet || fail "part 1 failed"
"$mbstudy" run "$spec" --output "$dir/array.h5" --part 1/3 --quiet > "$dir/p1b.txt" 2>&1 ||
  fail "part 1 again failed"
grep -q "part 1 of 3 (.*): 0 computed this run" "$dir/p1b.txt" ||
  fail "part 1 run again: $(cat "$dir/p1b.txt")"
ls "$dir/array.h5.parts"
"$mbstudy" merge "$spec" --output "$dir/array.h5" --if-complete --quiet --allow-failures ||
  fail "merge failed"
[ -d "$dir/array.h5.parts" ] && fail "journals left after the merge"
/usr/bin/python3 "$compare" "$dir/single.h5" "$dir/array.h5" --ignore /status/wall_time
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "the merged parts differ from the single run"
# a merged study is not run again as a part
"$mbstudy" run "$spec" --output "$dir/array.h5" --part 0/3 --quiet 2>/dev/null &&
  fail "a part ran after the merge"

# refusals: bad --part values, a part with --force, an iterative study
for bad in 3/3 -1/3 1/0 x 1/2/3; do
  "$mbstudy" run "$spec" --output "$dir/bad.h5" --part "$bad" 2>/dev/null
  [ $? -eq 2 ] || fail "--part $bad was not refused"
done
"$mbstudy" run "$spec" --output "$dir/bad.h5" --part 0/2 --force --quiet 2> "$dir/force.txt" &&
  fail "--part with --force ran"
grep -q "other parts' journals" "$dir/force.txt" || fail "--force message: $(cat "$dir/force.txt")"
"$mbstudy" run "$iterative" --output "$dir/fit.h5" --part 0/2 --quiet 2> "$dir/iter.txt" &&
  fail "an iterative study ran as a part"
grep -q "cannot be split into array parts" "$dir/iter.txt" ||
  fail "iterative message: $(cat "$dir/iter.txt")"

# the lock: a run of a long study in the background, then every other writer refused
"$mbstudy" run "$long" --output "$dir/long.h5" --threads 1 --quiet > /dev/null 2>&1 &
lpid=$!
i=0
while [ ! -s "$dir/long.h5.lock" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
for how in "--resume" "--force" "--part 0/2"; do
  # shellcheck disable=SC2086
  "$mbstudy" run "$long" --output "$dir/long.h5" $how --quiet 2> "$dir/lock.txt" &&
    fail "run $how went on while another run held the output"
  grep -q "is being written by process $lpid on host" "$dir/lock.txt" ||
    fail "run $how: '$(cat "$dir/lock.txt")'"
done
"$mbstudy" merge "$long" --output "$dir/long.h5" --quiet 2> "$dir/lock.txt" &&
  fail "merge went on while a run held the output"
grep -q "is being written by process $lpid" "$dir/lock.txt" || fail "merge: $(cat "$dir/lock.txt")"
echo "refused: $(cat "$dir/lock.txt")"
# some samples in before the stop
i=0
while [ "$(cat "$dir"/long.h5.parts/*.bin 2>/dev/null | wc -c)" -lt 50000 ] && [ $i -lt 500 ]; do
  sleep 0.02
  i=$((i + 1))
done
kill -TERM $lpid
wait $lpid
[ $? -eq 3 ] || fail "the long run did not stop cleanly"
# a stopped study: inspect reads its journals and says it is incomplete
"$mbstudy" inspect "$dir/long.h5" > "$dir/inspect.txt" 2>&1 || fail "inspect of a stopped study: $(cat "$dir/inspect.txt")"
grep -q "INCOMPLETE" "$dir/inspect.txt" && grep -q "samples done: [1-9]" "$dir/inspect.txt" ||
  fail "inspect of a stopped study: $(cat "$dir/inspect.txt")"
# and what was merged before the stop stays readable, marked incomplete
grep -q "samples 0 .. [0-9]* in sample order are readable in .*long.h5.parts/result.h5 (its attribute 'incomplete': yes: stopped" "$dir/inspect.txt" ||
  fail "no readable partial result after the stop: $(cat "$dir/inspect.txt")"
# the lock died with its holder: the resume runs
"$mbstudy" run "$long" --output "$dir/long.h5" --resume --threads 1 --quiet > /dev/null 2>&1 &
lpid=$!
sleep 0.3
kill -KILL $lpid
wait $lpid
"$mbstudy" run "$long" --output "$dir/long.h5" --resume --quiet > /dev/null 2>&1 ||
  fail "no resume after SIGKILL (a stale lock?)"
[ -e "$dir/long.h5.lock" ] && fail "the lock file stays after a complete run"
echo "PASS: parts merged into the single run's file; refusals clear; the output locked"
