#!/usr/bin/python3
"""`mbstudy export RESULT.h5 --pipeline SUBJECT/TRIAL --out DIR` on make_pipeline_study.py's
nominal synthetic pendulums:

    check_pipeline_export.py MBSTUDY DIR RESULT.h5

- every OpenSim file the tools wrote for a subject's trial (kept on disk in
  RESULT.h5.pipeline/<subject>/<trial>/draw0) comes back from the HDF5 file under its own name
  with the same header (name line, inDegrees, version, the other header lines), the same column
  labels and the same numbers, bit for bit;
- the exported IK motion is the truth: q in degrees is A sin(2 pi f t) * 180 / pi;
- a subject/trial the file does not hold (and a trial that failed, which left no files) is
  refused with exit 1 and a message listing the pairs it holds; a result file without
  /pipeline is refused.
Exits 77 (skipped) without h5py and numpy."""
import glob
import math
import os
import subprocess
import sys
import tempfile

from mbs_check import check, finish

import h5py


def read_storage(path):
    """header lines (before endheader), labels and rows of numbers as Python floats"""
    with open(path) as f:
        lines = f.read().split("\n")
    end = lines.index("endheader")
    labels = lines[end + 1].split("\t")
    rows = [[float(x) for x in line.split("\t")] for line in lines[end + 2:] if line.strip()]
    return lines[:end], labels, rows


def main():
    mbstudy, folder, result = sys.argv[1], sys.argv[2], sys.argv[3]
    truth = {}
    with open(f"{folder}/truth.txt") as f:
        for line in f:
            n, *v = line.split()
            truth[n] = [float(x) for x in v]
    kept = result + ".pipeline"
    with tempfile.TemporaryDirectory(prefix="mbs_pipeline_export_") as tmp:
        for name in ("s01", "s02", "s03"):
            out = os.path.join(tmp, name)
            r = subprocess.run([mbstudy, "export", result, "--pipeline", f"{name}/swing",
                                "--out", out], capture_output=True, text=True)
            check(r.returncode == 0, f"{name}: export exit {r.returncode}: {r.stderr.strip()}")
            if r.returncode:
                continue
            originals = sorted(glob.glob(f"{kept}/{name}/swing/draw0/*.mot") +
                               glob.glob(f"{kept}/{name}/swing/draw0/*.sto"))
            check(len(originals) >= 2, f"{name}: {len(originals)} files kept on disk")
            exported = sorted(os.listdir(out))
            check(exported == sorted(os.path.basename(p) for p in originals),
                  f"{name}: exported {exported}, the tools wrote "
                  f"{[os.path.basename(p) for p in originals]}")
            for orig in originals:
                mine = os.path.join(out, os.path.basename(orig))
                if not os.path.exists(mine):
                    continue
                h0, l0, r0 = read_storage(orig)
                h1, l1, r1 = read_storage(mine)
                check(h1 == h0, f"{mine}: header {h1} != {h0}")
                check(l1 == l0, f"{mine}: labels {l1} != {l0}")
                check(r1 == r0, f"{mine}: the numbers differ from {orig}")
            # independent truth: the motion itself, in degrees as its header says
            h, labels, rows = read_storage(os.path.join(out, "ik.mot"))
            check("inDegrees=yes" in h, f"{name}: ik.mot not in degrees: {h}")
            A, freq = truth[name][0], truth[name][1]
            worst = max(abs(row[labels.index("q")] - math.degrees(
                A * math.sin(2 * math.pi * freq * row[0]))) for row in rows)
            check(worst < 1e-4, f"{name}: exported q off the truth by {worst} deg")
            print(f"{name}/swing: {len(exported)} files identical to the tools' own; ik.mot "
                  f"within {worst:.1e} deg of A sin(2 pi f t)")
        for bad in ("s03/missing", "s09/swing", "s01", "s01/swing/../x"):
            r = subprocess.run([mbstudy, "export", result, "--pipeline", bad, "--out",
                                os.path.join(tmp, "bad")], capture_output=True, text=True)
            check(r.returncode == 1 and "s01/swing" in r.stderr and bad in r.stderr,
                  f"--pipeline {bad}: exit {r.returncode}, '{r.stderr.strip()}'")
        print("refused:", r.stderr.strip())
        other = os.path.join(tmp, "other.h5")
        with h5py.File(other, "w") as h:
            h.attrs["mbstudy_format"] = "1"
        r = subprocess.run([mbstudy, "export", other, "--pipeline", "s01/swing", "--out",
                            os.path.join(tmp, "bad")], capture_output=True, text=True)
        check(r.returncode == 1 and "no /pipeline" in r.stderr,
              f"a result without /pipeline: exit {r.returncode}, '{r.stderr.strip()}'")
    finish()


if __name__ == "__main__":
    main()
