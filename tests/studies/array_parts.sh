#!/bin/sh
# An array job's parts (`mbstudy run --part I/K`), run at the same time into one journal folder,
# one of them on two MPI ranks, merged by `mbstudy merge` into the file a single run writes
# (bit for bit, wall times aside); a part run again goes on from its journals; merging before
# every part is done names what is missing; bad --part values and iterative studies refused.
# usage: array_parts.sh MBSTUDY SPEC ITERATIVE_SPEC WORKDIR COMPARE_PY MPIEXEC
set -u
mbstudy=$1
spec=$2
iterative=$3
dir=$4
compare=$5
mpiexec=$6
rm -rf "$dir"
mkdir -p "$dir"

fail() {
  echo "FAIL: $*"
  exit 1
}

"$mbstudy" run "$spec" --output "$dir/single.h5" --quiet || fail "the single run failed"

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

# part 1, twice: the second run finds its samples done and computes nothing
"$mbstudy" run "$spec" --output "$dir/array.h5" --part 1/3 --quiet || fail "part 1 failed"
"$mbstudy" run "$spec" --output "$dir/array.h5" --part 1/3 --quiet > "$dir/p1b.txt" 2>&1 ||
  fail "part 1 again failed"
grep -q "part 1 of 3 (.*): 0 computed this run" "$dir/p1b.txt" ||
  fail "part 1 run again: $(cat "$dir/p1b.txt")"
ls "$dir/array.h5.parts"
"$mbstudy" merge "$spec" --output "$dir/array.h5" --quiet || fail "merge failed"
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
echo "PASS: parts merged into the single run's file; refusals clear"
