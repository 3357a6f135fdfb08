#!/bin/sh
# mbstudy submit, status and cancel against a real Slurm: a single-node cluster on this machine
# (munged with a generated key, slurmctld and slurmd with a generated slurm.conf in a temporary
# folder, on free ports, run as the current user), then
#   1. a small study submitted, waited for, and its file identical to a direct run;
#   2. a longer study cancelled part-way (mbstudy cancel: scancel), submitted again, finished
#      with every sample exactly once (identical to a direct run);
#   3. a 3-way array job, merged by its last part, identical to a direct run;
#   4. a study longer than its job's time limit: the warning signal stops it cleanly, the
#      script chains itself, and the chain completes it.
# Every daemon it started is stopped by its PID at the end. Exits 77 (skipped), with the reason,
# only when Slurm or munge is not installed or the daemons cannot start.
# usage: slurm_test.sh MBSTUDY SPEC_SMALL SPEC_LONG COMPARE_PY WORKDIR
set -u
mbstudy=$1
small=$2
long=$3
compare=$4
work=$5

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}

for cmd in munged slurmctld slurmd sbatch squeue scancel; do
  command -v $cmd > /dev/null 2>&1 || skip "$cmd not found (install slurm-wlm and munge)"
done
rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"
work=$(cd "$work" && pwd)
# a short folder for the daemons' sockets (a UNIX socket path is limited to 108 bytes)
run=$(mktemp -d /tmp/mbs_slurm_XXXXXX) || fail "mktemp"
chmod 755 "$run"
mkdir -p "$run/munge" "$run/state" "$run/spool"
chmod 700 "$run/munge"

stop_all() {
  for p in slurmd slurmctld; do
    [ -f "$run/$p.pid" ] && kill "$(cat "$run/$p.pid")" 2>/dev/null
  done
  sleep 1
  for p in slurmd slurmctld; do
    [ -f "$run/$p.pid" ] && kill -9 "$(cat "$run/$p.pid")" 2>/dev/null
  done
  [ -f "$run/munge/munged.pid" ] && kill "$(cat "$run/munge/munged.pid")" 2>/dev/null
  rm -rf "$run"
}
trap stop_all EXIT
trap 'exit 1' INT TERM

# munge: a generated key, its own socket
dd if=/dev/urandom of="$run/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$run/munge/munge.key"
munged --force --key-file="$run/munge/munge.key" --socket="$run/munge/munge.sock" \
  --pid-file="$run/munge/munged.pid" --log-file="$run/munge/munged.log" \
  --seed-file="$run/munge/munged.seed" 2> "$run/munged.err" ||
  skip "munged does not start: $(cat "$run/munged.err")"

# two free ports
ports=$(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
ctld_port=${ports% *}
d_port=${ports#* }
host=$(hostname -s)
cpus=$(nproc)
user=$(id -un)
cat > "$run/slurm.conf" <<EOF
ClusterName=mbstest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$run/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$run/state
SlurmdSpoolDir=$run/spool
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$run/slurmctld.log
SlurmdLogFile=$run/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$run/slurm.conf"
slurmctld -f "$SLURM_CONF" 2> "$run/ctld.err" || skip "slurmctld does not start: $(cat "$run/ctld.err")"
slurmd -f "$SLURM_CONF" 2> "$run/d.err" || skip "slurmd does not start: $(cat "$run/d.err")"
i=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
  i=$((i + 1))
  [ $i -gt 60 ] && skip "the node never became idle: $(tail -5 "$run/slurmctld.log" "$run/slurmd.log")"
  sleep 0.5
done
echo "Slurm is up: node $host, $cpus CPUs, ports $ctld_port and $d_port"

# wait_for FILE SECONDS: until FILE exists (a study complete)
wait_for() {
  i=0
  while [ ! -f "$1" ]; do
    i=$((i + 1))
    if [ $i -gt $(($2 * 2)) ]; then
      "$mbstudy" status "${1}" || true
      cat "${1}".slurm-*.log 2>/dev/null | tail -20
      fail "$1 not written within $2 s"
    fi
    sleep 0.5
  done
}
# jobs_done OUT: no job of OUT queued or running any more
jobs_done() {
  i=0
  while "$mbstudy" status "$1" | grep -q -E "RUNNING|PENDING|COMPLETING| [1-9][0-9]* (running|pending)"; do
    i=$((i + 1))
    [ $i -gt 240 ] && fail "the jobs of $1 did not end"
    sleep 0.5
  done
}
same() {
  /usr/bin/python3 "$compare" "$1" "$2" --ignore /status/wall_time
  rc=$?
  [ $rc -eq 77 ] && skip "compare_h5.py cannot run (h5py)"
  [ $rc -eq 0 ] || fail "$2 differs from $1"
}
opts="--scheduler slurm --nodes 1 --ranks-per-node 1 --threads 1"

# direct runs to compare with
"$mbstudy" run "$small" --output "$work/small_direct.h5" --quiet --allow-failures > /dev/null 2>&1 ||
  fail "direct run"
"$mbstudy" run "$long" --output "$work/long_direct.h5" --threads 2 --quiet > /dev/null 2>&1 ||
  fail "direct run of the long study"

# 1. a small study
# shellcheck disable=SC2086
id=$("$mbstudy" submit "$small" $opts --time 00:05:00 --output "$work/small.h5") ||
  fail "submit: $id"
echo "1. submitted job $id"
wait_for "$work/small.h5" 120
jobs_done "$work/small.h5"
"$mbstudy" status "$work/small.h5"
"$mbstudy" status "$work/small.h5" | grep -q "all done" || fail "status of the complete study"
same "$work/small_direct.h5" "$work/small.h5"
echo "1. ok: the submitted study equals the direct run"

# 2. cancelled part-way, submitted again, finished
# shellcheck disable=SC2086
id=$("$mbstudy" submit "$long" $opts --time 00:05:00 --output "$work/long.h5") || fail "submit"
i=0
until [ "$(cat "$work"/long.h5.parts/*.bin 2>/dev/null | wc -c)" -gt 100000 ]; do
  i=$((i + 1))
  [ $i -gt 240 ] && fail "job $id wrote no samples in 120 s: $(cat "$work"/long.h5.slurm-*.log)"
  [ -f "$work/long.h5" ] && fail "the long study finished before it could be cancelled"
  sleep 0.5
done
"$mbstudy" status "$work/long.h5"
"$mbstudy" cancel "$work/long.h5" || fail "cancel"
jobs_done "$work/long.h5"
[ -f "$work/long.h5" ] && fail "the cancelled study wrote its result file"
"$mbstudy" status "$work/long.h5" | tee "$work/status2.txt"
grep -q "left" "$work/status2.txt" || fail "status after cancel"
# shellcheck disable=SC2086
id=$("$mbstudy" submit "$long" $opts --time 00:05:00 --output "$work/long.h5") ||
  fail "submit again"
wait_for "$work/long.h5" 240
jobs_done "$work/long.h5"
grep -q "resuming" "$work"/long.h5.slurm-"$id".log || fail "the second job did not resume"
same "$work/long_direct.h5" "$work/long.h5"
echo "2. ok: cancelled and submitted again: every sample once, equal to the direct run"

# 3. a 3-way array job
# shellcheck disable=SC2086
id=$("$mbstudy" submit "$small" $opts --time 00:05:00 --array 3 --output "$work/array.h5") ||
  fail "submit --array"
wait_for "$work/array.h5" 180
jobs_done "$work/array.h5"
same "$work/small_direct.h5" "$work/array.h5"
echo "3. ok: the array job's 3 parts merged equal the direct run"

# 4. longer than the time limit: warned (USR1 40 s before the 1-minute limit), chained
sed -e 's/^\( *count:\).*/\1 8000/' "$long" > "$work/longer.yaml"
# shellcheck disable=SC2086
id=$("$mbstudy" submit "$work/longer.yaml" $opts --time 00:01:00 --warn 40 \
  --output "$work/longer.h5") || fail "submit with a time limit"
wait_for "$work/longer.h5" 600
jobs_done "$work/longer.h5"
chained=$(grep -c "chained" "$work/longer.h5.jobs")
[ "$chained" -ge 1 ] || fail "the study finished without a chained job: $(cat "$work/longer.h5.jobs")"
/usr/bin/python3 - "$work/longer.h5" <<'EOF' || fail "the chained study is not whole"
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "r") as h:
    done = h["status/done"][:]
    code = h["status/code"][:]
    assert len(done) == 8000 and np.all(done == 1) and np.all(code == 0), "samples missing"
    q = h["trajectories/q"][:]
    assert np.all(np.isfinite(q)), "NaN trajectories"
print("8000 samples, every one done once")
EOF
echo "4. ok: $chained chained job(s) completed the study after its time limit"
echo "PASS"
