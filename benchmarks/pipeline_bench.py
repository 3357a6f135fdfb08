#!/usr/bin/python3
"""Cohort pipeline throughput: subjects per hour of a pipeline study (inverse kinematics, then
inverse dynamics, from OpenSim setup templates) at 1 and 2 MPI ranks, one thread each, and at
one rank with two threads.

usage: benchmarks/pipeline_bench.py [--build build] [--shared ../shared] [--subjects 600]
                                    [--repeats 5]

The cohort is gait10dof18musc's walking trial (../shared/data/gait10dof18musc) taken as
--subjects subjects, each with its own work folder and files: the templates are the trial's own
IK and ID setup files with ${folder} where they name the trial's marker and force files, so
every subject does the same work (IK of the trial's frames at the setup's accuracy, ID with
the 6 Hz filter and the ground reactions). The runs alternate (1 rank, 2 ranks, 1 rank with 2
threads, 1 rank, ...) and the table gives medians of the wall time `mbstudy run` reports.
Efficiency at 2 = T(1) / (2 T(2)).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r"wrote .*: (\d+) samples .*; ([0-9.e+-]+) s, ")


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    m = LINE.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return int(m.group(1)), float(m.group(2))


def template(src, dst, replace):
    with open(src) as f:
        text = f.read()
    for a, b in replace:
        if a not in text:
            sys.exit(f"{src}: no '{a}' to replace")
        text = text.replace(a, b)
    with open(dst, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--shared", default=os.path.join(HERE, "..", "..", "shared"))
    ap.add_argument("--subjects", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    mbstudy = os.path.abspath(os.path.join(args.build, "mbstudy"))
    data = os.path.abspath(os.path.join(args.shared, "data", "gait10dof18musc"))
    if not os.path.isdir(data):
        sys.exit(f"{data}: not found (--shared names the folder holding data/)")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    with tempfile.TemporaryDirectory() as tmp:
        template(os.path.join(data, "IK", "walk_Setup_IK.xml"), os.path.join(tmp, "ik.xml"),
                 [("../ExperimentalData/subject01_walk.trc",
                   "${folder}/ExperimentalData/subject01_walk.trc")])
        template(os.path.join(data, "ID", "walk_Setup_ID.xml"), os.path.join(tmp, "id.xml"),
                 [("../ExperimentalData/subject01_walk_grf.xml",
                   "${folder}/ExperimentalData/subject01_walk_grf.xml")])
        subjects = "".join(f"    - {{name: s{k + 1:03d}, folder: {data}, trials: [walk]}}\n"
                           for k in range(args.subjects))
        spec = os.path.join(tmp, "cohort.yaml")
        with open(spec, "w") as f:
            f.write(f"model: {data}/subject01.osim\npipeline:\n  subjects:\n{subjects}"
                    "  stages: {ik: ik.xml, id: id.xml}\n  frames: 101\n  keep: none\n"
                    "output: cohort.h5\n")
        configs = [("1 rank x 1 thread", 1, 1), ("2 ranks x 1 thread", 2, 1),
                   ("1 rank x 2 threads", 1, 2)]
        walls = {c[0]: [] for c in configs}
        n = 0
        for _ in range(args.repeats):
            for name, ranks, threads in configs:
                cmd = [mbstudy, "run", spec, "--force", "--quiet", "--threads", str(threads),
                       "--output", os.path.join(tmp, "cohort.h5")]
                if ranks > 1:
                    cmd = ["mpirun", "-n", str(ranks), "--oversubscribe"] + cmd
                n, wall = run(cmd, env)
                walls[name].append(wall)
    t1 = statistics.median(walls[configs[0][0]])
    print(f"# pipeline throughput (IK -> ID on gait10dof18musc's walking trial, {n} subjects), "
          f"median of {args.repeats} interleaved runs each; machine: {os.cpu_count()} CPUs; "
          f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print("| configuration | subjects | wall s | subjects/hour | s per subject | efficiency | "
          "runs (wall s) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, ranks, threads in configs:
        t = statistics.median(walls[name])
        eff = t1 / (ranks * threads * t)
        print(f"| {name} | {n} | {t:.3f} | {3600 * n / t:.0f} | {t / n:.4f} | {eff:.3f} | "
              + ", ".join(f"{w:.3f}" for w in walls[name]) + " |")


if __name__ == "__main__":
    main()
