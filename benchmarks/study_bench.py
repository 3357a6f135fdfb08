#!/usr/bin/python3
"""Study throughput: samples per second at 1 and 2 MPI ranks, parallel efficiency, and the share
of wall time spent writing journals and the HDF5 result file.

usage: benchmarks/study_bench.py [--build build] [--repeats 3] [--shared ../shared]

Runs each study in benchmarks/studies/ with `mbstudy run` as a single process and under
`mpirun -n 2`, `--repeats` times each, alternating, and prints a table of medians.
Efficiency at 2 ranks = T(1 rank) / (2 T(2 ranks)) with medians. The I/O share is the wall
time that goes to I/O and nothing else: (the samplers' wait on their journals, averaged over
every thread of every rank, + the time from the last sample to the complete result file) / wall
time, as `mbstudy run` reports them. The
result file is otherwise written by a thread of rank 0 while samples are computed; its total
busy time is shown too.
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
LINE = re.compile(r"wrote .*: (\d+) samples .*; ([0-9.e+-]+) s, of which ([0-9.e+-]+) s waiting "
                  r"on journals .* and ([0-9.e+-]+) s on the result file after the last sample: "
                  r".* worked ([0-9.e+-]+) s")


def run(cmd, env):
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    m = LINE.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return {"samples": int(m.group(1)), "wall": float(m.group(2)),
            "journal": float(m.group(3)), "merge": float(m.group(4)),
            "busy": float(m.group(5)), "process": wall}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    mbstudy = os.path.join(args.build, "mbstudy")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    specs = ["pendulum_mc.yaml", "bouncing_block_mc.yaml"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.h5")
        for spec in specs:
            path = os.path.join(HERE, "studies", spec)
            res = {1: [], 2: []}
            for _ in range(args.repeats):
                for ranks in (1, 2):
                    cmd = [mbstudy, "run", path, "--force", "--quiet", "--threads", "1",
                           "--output", out]
                    if ranks == 2:
                        cmd = ["mpirun", "-n", "2", "--oversubscribe"] + cmd
                    res[ranks].append(run(cmd, env))
            med = {r: {k: statistics.median(x[k] for x in res[r])
                       for k in ("wall", "journal", "merge", "busy", "process")} for r in res}
            n = res[1][0]["samples"]
            for r in (1, 2):
                m = med[r]
                eff = med[1]["wall"] / (r * m["wall"])
                io = (m["journal"] + m["merge"]) / m["wall"]
                rows.append((spec.replace(".yaml", ""), r, n, m["wall"], n / m["wall"], eff, io,
                             m["journal"], m["merge"], m["busy"],
                             ", ".join(f"{x['wall']:.3f}" for x in res[r])))
    print(f"# study throughput, median of {args.repeats} runs each; machine: "
          f"{os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print("| study | ranks | samples | wall s | samples/s | efficiency | I/O share | "
          "journals s | result file after the run s | writer thread busy s | runs (wall s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} | {r[4]:.1f} | {r[5]:.3f} | "
              f"{100 * r[6]:.1f}% | {r[7]:.3f} | {r[8]:.3f} | {r[9]:.3f} | {r[10]} |")


if __name__ == "__main__":
    main()
