#!/usr/bin/python3
"""What `mbstudy run` and `export` check before the first sample, and the small cases around a
run: each case a study file made here and the message or outcome it must give.

usage: check_early_checks.py MBSTUDY WORKDIR"""
import os
import re
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
    # the summary's I/O: wall-clock waiting, not summed over threads. Journals synced after
    # every record make I/O a large share; 16 threads waiting at once must still come to no
    # more than the wall time (summed over the threads it was several times the wall time)
    s = spec("io.yaml", BASE.replace("OUT", "io.h5").replace("count: 20", "count: 400")
             + "execution: {checkpoint_interval: 1.0e-9}\n")
    for threads in ("1", "16"):
        r, _ = run("run", s, "--quiet", "--force", "--threads", threads)
        m = re.search(r"; ([0-9.e+-]+) s, of which ([0-9.e+-]+) s waiting on journals \(mean of "
                      r"(\d+) threads?\) and ([0-9.e+-]+) s on the result file after the last "
                      r"sample: I/O ([0-9.]+)% of the wall time", r.stdout)
        if not m:
            check(False, f"summary line with the I/O wait ({r.stdout.strip()} {r.stderr.strip()})")
            continue
        wall, wait, n, merge, share = (float(m.group(1)), float(m.group(2)), int(m.group(3)),
                                       float(m.group(4)), float(m.group(5)))
        check(n == int(threads) and 0 < wait <= wall and wait + merge <= wall * 1.01
              and abs(share - 100 * (wait + merge) / wall) <= 0.1 + 0.01 * share,
              f"{threads} thread(s): {wait} s waiting on journals + {merge} s on the result "
              f"file within the wall time {wall} s, share {share}%")
    print(f"{len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
