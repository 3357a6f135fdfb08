#!/usr/bin/env python3
"""The OpenSim paper's qualitative findings (§5, Fig. 12) checked on a posture study's file.

  check_posture.py RESULT.h5 [--expect 1,2,4,5] [--report] [--json]

Reads /posture (the grid the study wrote) and checks, printing each finding with its numbers:
  1. joints free: unstable at every posture (the model falls within the simulated duration at
     every magnitude, unperturbed included);
  2. joints free: less crouch is less stable (the mean stability index over the magnitudes does
     not decrease from the least to the most knee flexion, per direction);
  3. joints free: an anterior displacement is more destabilizing than a posterior one (mean
     stability index lower for anterior, per posture);
  4. joints locked: each posture has a stable range (the model stays up for the smallest
     perturbations) that grows with knee flexion (the largest magnitude up to which every
     magnitude leaves the model standing does not decrease with knee flexion, per direction,
     and is larger at the most flexed posture than at the least);
  5. joints locked: the stability index does not increase with the magnitude (per posture and
     direction, within 0.02).
Exit status 0 when all findings hold (with --expect, those listed), 1 otherwise (with --report:
0 whatever holds, for documentation); 77 when h5py is missing. With --json the same results are
printed as one JSON object (finding number -> holds, and the numbers behind them) instead of text.
"""
import json
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print("SKIPPED: %s" % e)
    sys.exit(77)


def main():
    argv = sys.argv[1:]
    expect = None
    if "--expect" in argv:
        i = argv.index("--expect")
        expect = {int(x) for x in argv[i + 1].split(",")}
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    report = "--report" in argv or "--json" in argv
    as_json = "--json" in argv
    summary = {"findings": {}}
    f = h5py.File(args[0], "r")
    g = f["posture"]
    si = g["stability_index"][:]          # mode x knee x direction x magnitude
    T = g["time_to_fall"][:]
    modes = [m.decode() if isinstance(m, bytes) else str(m) for m in g["mode"][:]]
    knees = g["knee_flexion"][:]
    dirs = g["direction"][:]
    mags = g["magnitude"][:]
    D = float(f.attrs["simulated_duration"].decode()) if "simulated_duration" in f.attrs \
        else float(np.nanmax(T))
    dname = {0.0: "anterior", 180.0: "posterior"}
    results = []

    def finding(name, ok, detail):
        number = int(name.split(".")[0]) if name[0].isdigit() else 0
        if expect is None or number == 0 or number in expect:
            results.append(ok)
        summary["findings"][name.split(".")[0] if name[0].isdigit() else name] = bool(ok)
        if not as_json:
            print("%s %s\n    %s" % ("HOLDS " if ok else "FAILS ", name, detail))

    if np.isnan(si).any():
        summary["cells_without_result"] = int(np.isnan(si).sum())
        if "status/message" in f:
            msgs = [m.decode() if isinstance(m, bytes) else str(m) for m in f["status/message"][:]]
            summary["first_failure"] = next((m for m in msgs if m), "")
        finding("every sample succeeded", False, "%d cells without a result" % np.isnan(si).sum())
        if np.isnan(si).all():
            if as_json:
                print(json.dumps(summary))
            else:
                print("no sample succeeded: %s" % summary.get("first_failure", ""))
            return 0 if report else 1
    stands = T >= D * (1 - 1e-9)
    if "free" in modes:
        i = modes.index("free")
        fell = ~stands[i]
        finding("1. joints free: unstable at every posture", bool(fell.all()),
                "fell in %d of %d cases; unperturbed T = %s s" % (
                    fell.sum(), fell.size,
                    ", ".join("%.2f" % T[i, k, 0, 0] for k in range(len(knees)))))
        mean = np.nanmean(si[i], axis=2)    # knee x direction
        summary["free_mean_si"] = {dname.get(dirs[d], "%g" % dirs[d]): [round(float(x), 3) for x in mean[:, d]]
                                   for d in range(len(dirs))}
        summary["free_T_unperturbed"] = [round(float(T[i, k, 0, 0]), 2) for k in range(len(knees))]
        ok2 = all(mean[-1, d] >= mean[0, d] and np.all(np.diff(mean[:, d]) >= -0.02)
                  for d in range(len(dirs)))
        finding("2. joints free: less crouch, less stable", ok2,
                "; ".join("%s: mean SI %s" % (dname.get(dirs[d], "%g deg" % dirs[d]),
                                              " / ".join("%.3f" % x for x in mean[:, d]))
                          for d in range(len(dirs))) + " (knee %s deg)" %
                ", ".join("%g" % k for k in knees))
        if 0.0 in list(dirs) and 180.0 in list(dirs):
            a, p = list(dirs).index(0.0), list(dirs).index(180.0)
            ok3 = bool(np.all(mean[:, a] < mean[:, p]))
            finding("3. joints free: anterior displacement more destabilizing", ok3,
                    "mean SI anterior vs posterior per knee: " + ", ".join(
                        "%g deg %.3f vs %.3f" % (knees[k], mean[k, a], mean[k, p])
                        for k in range(len(knees))) +
                    "; over all postures %.3f vs %.3f" % (mean[:, a].mean(), mean[:, p].mean()))
    if "locked" in modes:
        i = modes.index("locked")
        ok4, parts = True, []
        for d in range(len(dirs)):
            ranges = []
            for k in range(len(knees)):
                up = stands[i, k, d]
                n = np.argmin(up) if not up.all() else len(up)
                ranges.append(mags[n - 1] if n > 0 else -1.0)
            ranges = np.array(ranges)
            summary.setdefault("locked_range_cm", {})[dname.get(dirs[d], "%g" % dirs[d])] = \
                [round(100 * float(r), 1) for r in ranges]
            ok4 &= bool(ranges[0] >= 0 and np.all(np.diff(ranges) >= 0) and ranges[-1] > ranges[0])
            parts.append("%s: stands up to %s cm" % (
                dname.get(dirs[d], "%g deg" % dirs[d]),
                " / ".join("%.1f" % (100 * r) if r >= 0 else "none" for r in ranges)))
        finding("4. joints locked: a stable range growing with knee flexion", ok4,
                "; ".join(parts) + " (knee %s deg)" % ", ".join("%g" % k for k in knees))
        worst = np.nanmax(np.diff(si[i], axis=2))
        finding("5. joints locked: stability index does not increase with magnitude",
                bool(worst <= 0.02), "largest increase between neighbouring magnitudes %.4f" % worst)
    ok = all(results)
    what = "the findings" if expect is None else "findings %s" % ",".join(map(str, sorted(expect)))
    summary["knee_flexion"] = [float(k) for k in knees]
    if as_json:
        print(json.dumps(summary))
    else:
        print("%s hold" % what if ok else "some of %s do not hold" % what)
    return 0 if ok or report else 1


if __name__ == "__main__":
    sys.exit(main())
