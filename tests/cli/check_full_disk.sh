#!/bin/sh
# A study on a disk that fills up: every run ends with the message naming the journal and exit
# code 1 (no crash at exit, no signal), on one rank and on two; resumes on the still full disk
# fail the same way and leave nothing that blocks a later resume; once there is room, --resume
# completes the study and gives the same file as an uninterrupted run on a roomy disk.
# The small disk is a tmpfs mounted in a mount namespace of the test's own (unshare -m, or
# unshare -rm without root); without those rights the test skips (77).
# usage: check_full_disk.sh MBSTUDY COMPARE_PY WORKDIR [MPIEXEC]
set -u
mbstudy=$1
compare=$2
dir=$3
mpiexec=${4:-}
rm -rf "$dir"
mkdir -p "$dir/disk"
cd "$dir" || exit 1

fail() {
  echo "FAIL: $*"
  exit 1
}

cat > study.yaml <<'EOF'
model: double_pendulum
simulation: {duration: 0.5, accuracy: 1.0e-6, output_interval: 0.01}
parameters:
  - {path: /bodyset/rod1/mass, distribution: {type: uniform, low: 1, high: 2}}
outputs: {trajectories: [q]}
sampling: {count: 2000, seed: 1}
output: disk/out.h5
execution: {check_disk_space: false}
EOF
"$mbstudy" run study.yaml --output "$dir/roomy.h5" --quiet || fail "the run on the roomy disk failed"

# inside the namespace: the runs, their exit codes and messages in runs.log
cat > inside.sh <<EOF
mount -t tmpfs -o size=300k tmpfs disk || exit 77
run() { echo "== \$*"; "\$@" 2> err.txt; rc=\$?; cat err.txt; echo "rc=\$rc"; }
run "$mbstudy" run study.yaml --quiet
run "$mbstudy" run study.yaml --quiet --resume
run "$mbstudy" run study.yaml --quiet --resume
if [ -n "$mpiexec" ]; then
  run "$mpiexec" -n 2 --oversubscribe "$mbstudy" run study.yaml --quiet --resume
fi
mount -o remount,size=64m disk || exit 1
run "$mbstudy" run study.yaml --quiet --resume
cp disk/out.h5 full.h5 2>/dev/null
exit 0
EOF
: > runs.log
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  unshare -m sh inside.sh > runs.log 2>&1
elif unshare -rm true 2>/dev/null; then
  unshare -rm sh inside.sh > runs.log 2>&1
else
  echo "SKIP: no mount namespace (unshare -m needs root, unshare -rm user namespaces)"
  exit 77
fi
rc=$?
cat runs.log
[ $rc -eq 77 ] && { echo "SKIP: cannot mount a tmpfs in the namespace"; exit 77; }
[ $rc -eq 0 ] || fail "the namespace script failed ($rc)"

# every run before the room was made: exit 1 with the journal's message, never a signal
codes=$(grep '^rc=' runs.log | sed 's/rc=//')
n=$(echo "$codes" | wc -l)
last=$(echo "$codes" | tail -1)
full=$(echo "$codes" | head -n $((n - 1)))
for c in $full; do
  [ "$c" = 1 ] || fail "a run on the full disk exited with $c (expected 1)"
done
[ "$(grep -c 'No space left on device' runs.log)" -ge $((n - 1)) ] ||
  fail "not every run on the full disk said 'No space left on device'"
grep -q -i 'segmentation\|infinite loop\|HDF5-DIAG\|core dumped' runs.log &&
  fail "a crash or HDF5 diagnostic at exit"
[ "$last" = 0 ] || fail "the resume after the room was made exited with $last"
[ -f full.h5 ] || fail "no result file after the resume"
/usr/bin/python3 "$compare" roomy.h5 full.h5 --attributes --ignore /status/wall_time \
  --ignore /@started_last_run --ignore /@ranks_last_run --ignore /@threads_per_rank_last_run \
  || fail "the resumed study differs from the uninterrupted one"
echo "ok: $((n - 1)) runs on the full disk exited 1 with the message; the resume gives the uninterrupted file"
