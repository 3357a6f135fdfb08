#!/usr/bin/python3
"""OpenSim's own StaticOptimization test case (opensim-core, Applications/Analyze/test,
testStaticOptimization's testArm26) run through `mbstudy run-tool`, its results compared with
OpenSim's standard results as testStaticOptimization compares them.

    check_opensim_static_optimization.py --mbstudy BIN --tests DIR

DIR holds OpenSim's test folder Analyze/ (arm26_Setup_StaticOptimization.xml, arm26.osim,
arm26_InverseKinematics.mot and std_Thelen2003Muscle_Deprecated_arm26_StaticOptimization_
activation.sto and _force.sto); those files are not part of mbstudy. The arm26 model of that
folder is an OpenSim 2 document, whose Thelen2003Muscles mbstudy reads as OpenSim 2's Thelen
model (Thelen2003Muscle_Deprecated), the model testStaticOptimization's tightest standard was
made with: every column of both files is compared over the standard's rows (the result
interpolated linearly at the standard's times), with testStaticOptimization's tolerances for
that model and its measure (RMS per column): 0.005 for activations and 1 N for forces. OpenSim
solves each frame with an interior-point method stopped at its convergence criterion (1e-4),
mbstudy exactly, and the activations differ by up to about 0.0038 (muscles OpenSim keeps
slightly above their lower bound), i.e. up to about 1 N RMS of force (0.97 N for BRA). The
muscles' capacities (force / activation) are compared too (relative 1e-4), and the objectives.
Exits 77 (CTest's skip code) with the reason when the folder or a file is absent."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opensim_check import expect, read_storage, row_at, summary  # noqa: E402
import tempfile

# testStaticOptimization (OpenSim 4) allows 1 N (RMS) for the forces of this model
# (Thelen2003Muscle_Deprecated; 4 N for Thelen2003Muscle, 5 N for Millard2012EquilibriumMuscle).
# mbstudy's exact optimum leaves muscles at their lower bound where the interior-point solution
# keeps them slightly above it and shares the rest a little differently, with the same
# capacities (checked to 1e-4) and a lower objective.
FORCE_TOL = 1.0





def compare(name, result, std, tol, unit):
    """testStaticOptimization's measure (Storage::compareColumnRMS): per column, the RMS of the
    differences at the result's rows within the common time range, the standard interpolated
    there (linearly here; the rows share their times), divided by the row count less one"""
    labels, rows = read_storage(result)
    slabels, srows = read_storage(std)
    index = {l: i for i, l in enumerate(labels)}
    t0, t1 = max(rows[0][0], srows[0][0]), min(rows[-1][0], srows[-1][0])
    used = [r for r in rows if t0 - 1e-9 <= r[0] <= t1 + 1e-9]
    print(f"{name} against {os.path.basename(std)}, RMS over {len(used)} rows from {t0:.4g} to "
          f"{t1:.4g} s (testStaticOptimization's measure; tolerance {tol:g}{unit}):")
    for j, col in enumerate(slabels[1:], 1):
        expect(col in index, f"{name}: no column {col}")
        if col not in index:
            continue
        worst, when, ss = 0.0, 0.0, 0.0
        for row in used:
            d = abs(row[index[col]] - row_at(srows, row[0])[j])
            ss += d * d
            if d >= worst:
                worst, when = d, row[0]
        rms = (ss / max(len(used) - 1, 1)) ** 0.5
        expect(rms <= tol, f"{name}: {col}: RMS {rms:.4g}{unit} from the standard")
        print(f"  {col:10s} RMS {rms:.2e}{unit}, largest difference {worst:.2e}{unit} "
              f"(t = {when:.4g} s)")
    return labels, rows, slabels, srows


def compare_capacities(act, force, std_act, std_force):
    """force / activation, each muscle's capacity, where both activations exceed 1e-3: the
    muscle model at the frame's path length and speed, independent of the optimizer"""
    worst, where = 0.0, ""
    n = 0
    for row_a, row_f in zip(act[1], force[1]):
        sa, sf = row_at(std_act[1], row_a[0]), row_at(std_force[1], row_a[0])
        if abs(sa[0] - row_a[0]) > 1e-6:
            continue
        for j, col in enumerate(act[0][1:], 1):
            k = std_act[0].index(col)
            if row_a[j] > 1e-3 and sa[k] > 1e-3:
                ours, theirs = row_f[j] / row_a[j], sf[k] / sa[k]
                d = abs(ours - theirs) / theirs
                n += 1
                if d >= worst:
                    worst, where = d, f"{col} at t = {row_a[0]:.4g} s ({ours:.2f} N, "\
                                      f"OpenSim {theirs:.2f} N)"
    expect(n > 0 and worst <= 1e-4, f"capacities: {worst:.2e} relative ({where})")
    print(f"muscle capacities (force / activation), {n} values where both activations exceed "
          f"1e-3: largest relative difference {worst:.2e}, {where} (tolerance 1e-4)")


def compare_objectives(act, std_act):
    """sum of squared activations at the standard's rows: OpenSim's interior-point optimizer
    stops within its convergence criterion, mbstudy's optimum is exact"""
    lower, n, most = 0, 0, 0.0
    for row in act[1]:
        s = row_at(std_act[1], row[0])
        if abs(s[0] - row[0]) > 1e-6:
            continue
        ours, theirs = sum(x * x for x in row[1:]), sum(x * x for x in s[1:])
        n += 1
        lower += ours <= theirs * (1 + 1e-9)
        most = max(most, (theirs - ours) / theirs)
    print(f"objective (sum of squared activations): mbstudy's at or below OpenSim's at {lower} "
          f"of {n} rows, by up to {100 * most:.2f} %")


def main():
    args = sys.argv[1:]
    opt = {}
    for i in range(0, len(args) - 1, 2):
        opt[args[i]] = args[i + 1]
    mbstudy, tests = opt.get("--mbstudy"), opt.get("--tests")
    if not mbstudy or tests is None:
        print(__doc__)
        return 2
    if not tests:
        print("SKIPPED: MBS_OPENSIM_TESTS_DIR is not set (OpenSim's Applications test files "
              "are not part of mbstudy)")
        return 77
    src = os.path.join(tests, "Analyze")
    files = ["arm26_Setup_StaticOptimization.xml", "arm26.osim", "arm26_InverseKinematics.mot",
             "std_Thelen2003Muscle_Deprecated_arm26_StaticOptimization_activation.sto",
             "std_Thelen2003Muscle_Deprecated_arm26_StaticOptimization_force.sto"]
    for f in files:
        if not os.path.exists(os.path.join(src, f)):
            print(f"SKIPPED: {os.path.join(src, f)} not found (OpenSim's "
                  f"Applications/Analyze/test files are not part of mbstudy)")
            return 77
    with tempfile.TemporaryDirectory(prefix="mbs_opensim_so_") as work:
        for f in files:
            shutil.copy(os.path.join(src, f), work)
        setup = os.path.join(work, files[0])
        r = subprocess.run([mbstudy, "run-tool", setup, "--quiet"], capture_output=True,
                           text=True)
        expect(r.returncode == 0, f"run-tool exit {r.returncode}: {r.stderr.strip()}")
        if r.returncode == 0:
            out = os.path.join(work, "Results")
            a = compare("activations",
                        os.path.join(out, "arm26_StaticOptimization_activation.sto"),
                        os.path.join(work, files[3]), 0.005, "")
            f = compare("forces", os.path.join(out, "arm26_StaticOptimization_force.sto"),
                        os.path.join(work, files[4]), FORCE_TOL, " N")
            compare_capacities(a[:2], f[:2], a[2:], f[2:])
            compare_objectives(a[:2], a[2:])
    return summary("check_opensim_static_optimization")


if __name__ == "__main__":
    sys.exit(main())
