#!/usr/bin/python3
"""What `mbstudy run` and `export` check before the first sample, and the small cases around a
run: each case a study file made here and the message or outcome it must give.

usage: check_early_checks.py MBSTUDY WORKDIR"""
import os
import shutil
import subprocess
import sys
import time

BASE = """model: double_pendulum
simulation: {duration: 0.5, accuracy: 1.0e-6, output_interval: 0.01}
parameters:
  - {path: /bodyset/rod1/mass, distribution: {type: uniform, low: 1, high: 2}}
outputs: {trajectories: [q]}
sampling: {count: 20, seed: 1}
output: OUT
"""

fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def main():
    mbs, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    def spec(name, text):
        p = os.path.join(work, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def run(*args, timeout=60):
        t0 = time.time()
        r = subprocess.run([mbs] + list(args), capture_output=True, text=True, timeout=timeout,
                           cwd=work)
        return r, time.time() - t0

    # threads: bounded by a multiple of the cores, at the file's line
    s = spec("threads.yaml", BASE.replace("OUT", "threads.h5") + "execution: {threads: 65536}\n")
    r, dt = run("run", s, "--quiet")
    check(r.returncode != 0 and "threads.yaml:8: execution.threads: 65536" in r.stderr
          and "per core" in r.stderr and dt < 5, f"threads 65536 refused ({r.stderr.strip()})")
    r, _ = run("run", s, "--quiet", "--threads", "100000")
    check(r.returncode != 0 and "--threads: 100000" in r.stderr, "--threads 100000 refused")
    # an output that is a folder, or in a folder that does not exist: before any sample
    os.makedirs(os.path.join(work, "folder.h5"))
    s = spec("folder.yaml", BASE.replace("OUT", "folder.h5"))
    r, _ = run("run", s, "--quiet")
    check(r.returncode != 0 and "folder.h5 is a folder" in r.stderr
          and not os.path.exists(os.path.join(work, "folder.h5.parts"))
          and not os.path.exists(os.path.join(work, "folder.h5.lock")),
          f"output a folder refused before the run, nothing left ({r.stderr.strip()})")
    s = spec("nodir.yaml", BASE.replace("OUT", "nodir/x.h5"))
    r, _ = run("run", s, "--quiet")
    check(r.returncode != 0 and "the folder" in r.stderr and "does not exist" in r.stderr,
          "output in a missing folder refused")
    # a bad scalar name: at its line, before any sample
    s = spec("scalar.yaml", BASE.replace("OUT", "scalar.h5").replace(
        "outputs: {trajectories: [q]}",
        "outputs:\n  trajectories: [q]\n  scalars: [{name: x, of: q, coordinate: nope, at: final}]"))
    r, _ = run("run", s, "--quiet")
    check(r.returncode != 0 and "scalar.yaml:7:" in r.stderr and "nope" in r.stderr
          and not os.path.exists(os.path.join(work, "scalar.h5.parts")),
          f"bad scalar name at its line ({r.stderr.strip()})")
    # sizes: frames and the result against the disk, said with the settings that ask for them
    s = spec("frames.yaml", BASE.replace("OUT", "frames.h5").replace("0.01}", "1.0e-8}"))
    r, dt = run("run", s, "--quiet")
    check(r.returncode != 0 and "frames.yaml:2:" in r.stderr and "execution.max_frames" in r.stderr
          and dt < 5, f"output_interval 1e-8 refused quickly ({r.stderr.strip()})")
    s = spec("huge.yaml", BASE.replace("OUT", "huge.h5").replace("duration: 0.5", "duration: 1e300"))
    r, dt = run("run", s, "--quiet")
    check(r.returncode != 0 and "frames per sample" in r.stderr and dt < 5,
          "duration 1e300 refused (no double-to-int conversion)")
    s = spec("count.yaml", BASE.replace("OUT", "count.h5").replace("count: 20", "count: 1000000000000"))
    r, dt = run("run", s, "--quiet")
    check(r.returncode != 0 and "count.yaml:6:" in r.stderr and "need about" in r.stderr
          and "free" in r.stderr and dt < 5, f"count 1e12 refused with the size ({r.stderr.strip()})")
    s = spec("frames_ok.yaml", BASE.replace("OUT", "frames_ok.h5").replace("0.01}", "1.0e-4}")
             .replace("count: 20", "count: 2") + "execution: {max_frames: 100}\n")
    r, _ = run("run", s, "--quiet")
    check(r.returncode != 0 and "limit is 100 (execution.max_frames)" in r.stderr,
          "execution.max_frames sets the limit")
    # a plain rerun after a run that left an empty journal folder goes on
    s = spec("empty.yaml", BASE.replace("OUT", "empty.h5"))
    os.makedirs(os.path.join(work, "empty.h5.parts"))
    r, _ = run("run", s, "--quiet")
    check(r.returncode == 0 and os.path.exists(os.path.join(work, "empty.h5")),
          f"empty journal folder does not block a rerun ({r.stderr.strip()})")
    # --resume of a finished study: complete, exit 0, the file untouched
    before = os.stat(os.path.join(work, "empty.h5")).st_mtime_ns
    r, _ = run("run", s, "--resume")
    check(r.returncode == 0 and "is complete" in r.stdout
          and os.stat(os.path.join(work, "empty.h5")).st_mtime_ns == before,
          f"--resume of a finished study ({r.stdout.strip()} {r.stderr.strip()})")
    # export: an empty sample index, a failed sample
    r, _ = run("export", "empty.h5", "--sample", "")
    check(r.returncode == 2 and "expects a sample index" in r.stderr, "export --sample '' refused")
    s = spec("fail.yaml", BASE.replace("OUT", "fail.h5").replace(
        "duration: 0.5, accuracy: 1.0e-6,", "duration: 0.5, accuracy: 1.0e-6, max_wall_time: 1.0e-9,")
        .replace("count: 20", "count: 2"))
    r, _ = run("run", s, "--quiet", "--allow-failures")
    if r.returncode == 0:
        r, _ = run("export", "fail.h5", "--sample", "0", "--format", "csv")
        rows = [l for l in r.stdout.splitlines()[1:] if l]
        check("failed" in r.stderr and ("nothing to export" in r.stderr or
                                        all("nan" not in l.split(",", 1)[0] for l in rows)),
              f"export of a failed sample warns ({r.stderr.strip()})")
    else:
        check(False, f"a study with failing samples ran ({r.stderr.strip()})")
    print(f"{len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
