#!/usr/bin/env python3
"""A posture study's Markdown report (<output>.md) checked against its HDF5 file.

  check_posture_md.py RESULT.h5 [REPORT.md]

The report holds a summary (one row per joint mode, knee flexion and direction: the stable
range, the mean stability index, T at the smallest displacement) and the whole grid of
stability indices (one row per displacement when there are more than 24 of them, else one row
per mode, knee flexion and direction). Every number is compared with /posture in the file,
computed here from the datasets. Exit status 0 when all agree, 1 otherwise, 77 without h5py.
"""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print("SKIPPED: %s" % e)
    sys.exit(77)


def cells(line):
    return [x.strip() for x in line.strip().strip("|").split("|")]


def number(text):
    return float("nan") if text == "–" else float(text.split()[0])


def grid_cell_ok(text, want_si, want_T, D):
    """a grid cell: the index to 4 decimals, and '(falls at T s)' exactly when T < D"""
    v = number(text)
    if np.isnan(want_si):
        return np.isnan(v)
    ok = abs(v - want_si) <= 5e-5 + 1e-12
    fell = want_T < D * (1 - 1e-9)
    if fell:
        tail = text.split("(falls at ")
        ok = ok and len(tail) == 2 and abs(float(tail[1].split()[0]) - want_T) <= 0.005 + 1e-12
    else:
        ok = ok and "falls" not in text
    return ok


def main():
    h5 = sys.argv[1]
    md = sys.argv[2] if len(sys.argv) > 2 else h5[:-3] + ".md"
    f = h5py.File(h5, "r")
    g = f["posture"]
    si = g["stability_index"][:]
    T = g["time_to_fall"][:]
    modes = [m.decode() if isinstance(m, bytes) else str(m) for m in g["mode"][:]]
    knees, dirs, mags = g["knee_flexion"][:], g["direction"][:], g["magnitude"][:]
    D = float(f.attrs["simulated_duration"].decode())
    dname = {0.0: "anterior", 180.0: "posterior"}
    labels = [(m, k, d) for m in range(len(modes)) for k in range(len(knees))
              for d in range(len(dirs))]
    name = lambda m, k, d: (modes[m], "%g°" % knees[k], dname.get(dirs[d], "%g°" % dirs[d]))
    lines = open(md, encoding="utf-8").read().splitlines()
    tables, cur = [], None
    for line in lines:
        if line.startswith("|"):
            if cur is None:
                cur = []
                tables.append(cur)
            cur.append(cells(line))
        else:
            cur = None
    failures = []

    def check(ok, what):
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            failures.append(what)

    check(len(tables) == 2, "two tables (summary and grid): %d" % len(tables))
    if len(tables) != 2:
        return 1
    summary, grid = tables
    # the summary: stable range, mean index, T at the smallest displacement
    bad = 0
    for (m, k, d), row in zip(labels, summary[2:]):
        bad += tuple(row[:3]) != name(m, k, d)
        stands = T[m, k, d] >= D * (1 - 1e-9)
        n = len(mags) if stands.all() else int(np.argmin(stands))
        if n == 0:
            bad += not row[3].startswith("none")
        else:
            bad += abs(number(row[3]) - 100 * mags[n - 1]) > 1e-9
        bad += abs(number(row[4]) - np.nanmean(si[m, k, d])) > 0.0005 + 1e-12
        bad += abs(number(row[5]) - T[m, k, d, 0]) > 0.005 + 1e-12
    check(len(summary) == 2 + len(labels) and bad == 0,
          "summary: %d rows, %d disagreeing cells" % (len(summary) - 2, bad))
    # the grid
    bad = 0
    if len(mags) > 24:
        header = grid[0][1:]
        bad += header != [" ".join(name(m, k, d)) for (m, k, d) in labels]
        for gi, row in enumerate(grid[2:]):
            bad += abs(number(row[0]) - 100 * mags[gi]) > 1e-9
            for j, (m, k, d) in enumerate(labels):
                bad += not grid_cell_ok(row[1 + j], si[m, k, d, gi], T[m, k, d, gi], D)
        rows = len(mags)
    else:
        for (m, k, d), row in zip(labels, grid[2:]):
            bad += tuple(row[:3]) != name(m, k, d)
            for gi in range(len(mags)):
                bad += not grid_cell_ok(row[3 + gi], si[m, k, d, gi], T[m, k, d, gi], D)
        rows = len(labels)
    check(len(grid) == 2 + rows and bad == 0,
          "grid: %d rows (%d displacements), %d disagreeing cells" % (len(grid) - 2, len(mags),
                                                                     bad))
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
