#!/usr/bin/python3
"""Journals deleted as their samples are merged: the disk holds little more than the result
file during a run, and a run killed (SIGKILL) or stopped (SIGTERM) at any point after journals
were deleted resumes to the same file as an uninterrupted run.

usage: check_prune.py MBSTUDY COMPARE_PY WORKDIR [MPIEXEC]
(with MPIEXEC, also on two ranks stopped by SIGTERM)"""
import os
import shutil
import signal
import subprocess
import sys
import time

SPEC = """model: double_pendulum
simulation: {duration: DURATION, accuracy: 1.0e-7, output_interval: INTERVAL}
parameters:
  - {path: /bodyset/rod1/mass, distribution: {type: uniform, low: 1, high: 2}}
  - {path: /bodyset/rod2/mass, distribution: {type: uniform, low: 1, high: 2}}
outputs: {trajectories: [q, u]}
sampling: {count: COUNT, seed: 7}
output: OUT
execution: {threads: 2, journal_segment: SEGMENT}
"""
SEGMENT = 262144

fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def disk_use(out):
    """bytes of the result and its journal folder (what the study has on disk)"""
    total = 0
    for p in [out, out + ".parts"]:
        if os.path.isfile(p):
            total += os.stat(p).st_size
        elif os.path.isdir(p):
            for name in os.listdir(p):
                try:
                    total += os.stat(os.path.join(p, name)).st_size
                except FileNotFoundError:
                    pass
    return total


def main():
    mbs, compare, work = sys.argv[1], sys.argv[2], sys.argv[3]
    mpiexec = sys.argv[4] if len(sys.argv) > 4 else None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    def spec(name, count, out, duration=2, interval=0.01):
        p = os.path.join(work, name)
        with open(p, "w") as f:
            f.write(SPEC.replace("COUNT", str(count)).replace("OUT", out)
                    .replace("SEGMENT", str(SEGMENT)).replace("DURATION", str(duration))
                    .replace("INTERVAL", str(interval)))
        return p

    def same(a, b, what):
        r = subprocess.run(["/usr/bin/python3", compare, a, b, "--attributes", "--ignore",
                            "/status/wall_time", "--ignore", "/@started_last_run", "--ignore",
                            "/@ranks_last_run", "--ignore", "/@threads_per_rank_last_run"],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"{what}: the same file as the uninterrupted run "
              f"({r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()})")

    # peak disk: the study's files polled while it runs, against the finished result
    s = spec("peak.yaml", 3000, "peak.h5")
    out = os.path.join(work, "peak.h5")
    p = subprocess.Popen([mbs, "run", s, "--quiet"], cwd=work, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    peak, journal_peak = 0, 0
    while p.poll() is None:
        peak = max(peak, disk_use(out))
        parts = out + ".parts"
        try:
            journals = sum(os.stat(os.path.join(parts, f)).st_size for f in os.listdir(parts)
                           if f.endswith(".bin"))
        except OSError:  # (the folder or a journal went away meanwhile)
            journals = 0
        journal_peak = max(journal_peak, journals)
        time.sleep(0.002)
    _, err = p.communicate()
    check(p.returncode == 0, f"the study ran ({err.strip()})")
    result = os.path.getsize(out) if os.path.exists(out) else 0
    raw = 3000 * 201 * 4 * 8
    print(f"result {result} bytes (trajectories {raw} bytes uncompressed), peak on disk "
          f"{peak} bytes = {peak / max(result, 1):.2f} x the result, journals at most "
          f"{journal_peak} bytes")
    # journals kept to the end would make the peak about result + raw trajectories (about 2x)
    check(result > 0 and peak <= 1.35 * result,
          f"peak disk {peak} bytes is at most 1.35 x the result ({result} bytes)")
    check(not os.path.exists(out + ".parts"), "no journal folder left")

    # the uninterrupted reference, then runs of the same study file stopped at random points
    # after journals were deleted, each resumed; the last resume completes the study
    n = 4000
    ref = os.path.join(work, "ref.h5")
    s = spec("study.yaml", n, "ref.h5")
    r = subprocess.run([mbs, "run", s, "--quiet"], cwd=work, capture_output=True, text=True)
    check(r.returncode == 0, f"the reference run ({r.stderr.strip()})")
    runs = [(signal.SIGKILL, "kill", [], s, ref), (signal.SIGTERM, "term", [], s, ref)]
    if mpiexec:
        # mpiexec passes a SIGTERM on to its ranks about a second later (Open MPI 4.1), about
        # the time the study above takes on two ranks: a study of about 5 s of work on two
        # cores, with its own reference
        ref2 = os.path.join(work, "ref_2ranks.h5")
        s2 = spec("study_2ranks.yaml", 6000, "ref_2ranks.h5", duration=6, interval=0.05)
        r = subprocess.run([mbs, "run", s2, "--quiet"], cwd=work, capture_output=True,
                           text=True)
        check(r.returncode == 0, f"the reference run on one rank ({r.stderr.strip()})")
        runs.append((signal.SIGTERM, "term_2ranks", [mpiexec, "-n", "2", "--oversubscribe"],
                     s2, ref2))
    for sig, name, launcher, study, reference in runs:
        out = os.path.join(work, f"{name}.h5")
        stops, pruned_seen = 0, 0
        for attempt in range(6):
            args = launcher + [mbs, "run", study, "--quiet", "--output", out] + (
                ["--resume"] if attempt else [])
            p = subprocess.Popen(args, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            mark = os.path.join(out + ".parts", "merged")
            start = time.time()
            before = os.path.getmtime(mark) if os.path.exists(mark) else 0
            # stop it once it has written a new mark (journals deleted), a little later each time
            while p.poll() is None and time.time() - start < 60:
                if os.path.exists(mark) and os.path.getmtime(mark) != before:
                    time.sleep(0.01 * attempt)
                    break
                time.sleep(0.001)
            if p.poll() is None:
                pruned_seen += os.path.exists(mark)
                p.send_signal(sig)
                stops += 1
            p.communicate()
            if p.returncode == 0:
                break
        if not os.path.exists(out):
            r = subprocess.run([mbs, "run", study, "--quiet", "--output", out, "--resume"],
                               cwd=work, capture_output=True, text=True)
            check(r.returncode == 0, f"{name}: the last resume ({r.stderr.strip()})")
        check(stops >= 2 and pruned_seen >= 2,
              f"{name}: stopped {stops} times after journals were deleted ({pruned_seen})")
        same(reference, out, f"{name}: stopped {stops} times and resumed")

    # a mark whose file is damaged: the resume says so and computes those samples again
    out = os.path.join(work, "damaged.h5")
    p = subprocess.Popen([mbs, "run", s, "--quiet", "--output", out], cwd=work,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mark = os.path.join(out + ".parts", "merged")
    start = time.time()
    while p.poll() is None and not os.path.exists(mark) and time.time() - start < 60:
        time.sleep(0.001)
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    p.communicate()
    partial = os.path.join(out + ".parts", "result.h5")
    if os.path.exists(partial):
        with open(partial, "r+b") as f:  # the superblock's signature
            f.write(b"XXXXXXXX")
        r = subprocess.run([mbs, "run", s, "--quiet", "--output", out, "--resume"], cwd=work,
                           capture_output=True, text=True)
        check(r.returncode == 0 and "cannot be continued" in r.stderr
              and "computed again" in r.stderr,
              f"a damaged file below the mark: warned and recomputed ({r.stderr.strip()})")
        same(ref, out, "damaged file below the mark, resumed")
    else:
        check(False, "a run killed after its first mark left its result file")
    print(f"{len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
