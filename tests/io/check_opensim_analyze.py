#!/usr/bin/python3
"""OpenSim's own AnalyzeTool test cases (opensim-core, Applications/Analyze/test) run through
`mbstudy run-tool`, their results compared with OpenSim's standard results as OpenSim's
testJointReactions compares them.

    check_opensim_analyze.py --mbstudy BIN --tests DIR

DIR holds OpenSim's test folder Analyze/ (not part of mbstudy): the setup files, models, states
and std_*.sto files of the cases below, with OpenSim's names. Standard files may hold only some
of OpenSim's rows: each standard row is compared with the result's row at the same time.

Cases (as testJointReactions, every value within 1e-5):
  - SinglePin: SinglePin_Setup_JointReaction.xml (an OpenSim 1.9 pendulum, states_file
    SinglePin_states.sto; the reactions of pin1 on its child expressed in the child and in
    Ground) against std_SinglePin_JointReaction_ReactionLoads.sto;
  - DoublePendulum3D: DoublePendulum3D_Setup_JointReaction.xml (an OpenSim 3 double pendulum
    about two axes; coordinates_file DoublePendulum3D_states_degrees.mot, the forward run's
    states in degrees, speeds by the splines) against
    std_DoublePendulum3D_JointReaction_ReactionLoads.sto.
Columns are compared in order: OpenSim 4 labels the bodies by their base frames (rod1) where the
older standard files name the joints' offset frames (rod1_offset).
Exits 77 (CTest's skip code) with the reason when the folder is absent."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opensim_check import expect, read_storage, summary  # noqa: E402
import tempfile





CASES = [
    ("SinglePin", "SinglePin_Setup_JointReaction.xml",
     "SinglePin_JointReaction_ReactionLoads.sto", "std_SinglePin_JointReaction_ReactionLoads.sto"),
    ("DoublePendulum3D", "DoublePendulum3D_Setup_JointReaction.xml",
     "DoublePendulum3D_JointReaction_ReactionLoads.sto",
     "std_DoublePendulum3D_JointReaction_ReactionLoads.sto"),
]
TOL = 1e-5  # testJointReactions' tolerance


def main():
    args = sys.argv[1:]
    mbstudy = args[args.index("--mbstudy") + 1] if "--mbstudy" in args else None
    tests = args[args.index("--tests") + 1] if "--tests" in args else ""
    folder = os.path.join(tests, "Analyze")
    if not mbstudy or not os.path.isdir(folder):
        print(f"SKIPPED: OpenSim's Analyze test folder not found ({folder or 'no --tests'}); set "
              "MBS_OPENSIM_TESTS_DIR to a folder holding opensim-core's "
              "Applications/Analyze/test as Analyze/")
        return 77
    ran = 0
    for name, setup, out, std in CASES:
        if not all(os.path.exists(os.path.join(folder, f)) for f in (setup, std)):
            print(f"{name}: skipped ({setup} or {std} not in {folder})")
            continue
        ran += 1
        work = tempfile.mkdtemp(prefix="mbs_opensim_analyze_")
        try:
            p = subprocess.run([mbstudy, "run-tool", os.path.join(folder, setup), "--results",
                                work, "--quiet"], capture_output=True, text=True)
            expect(p.returncode == 0, f"{name}: run-tool exited {p.returncode}: {p.stderr}")
            if p.returncode != 0:
                continue
            labels, rows = read_storage(os.path.join(work, out))
            slabels, srows = read_storage(os.path.join(folder, std))
            expect(len(labels) == len(slabels),
                   f"{name}: {len(labels)} columns, OpenSim's {len(slabels)}")
            worst, where, compared = 0.0, "", 0
            for s in srows:
                r = min(rows, key=lambda r: abs(r[0] - s[0]))
                expect(abs(r[0] - s[0]) < 1e-9, f"{name}: no row at t = {s[0]}")
                if abs(r[0] - s[0]) >= 1e-9:
                    continue
                compared += 1
                for k in range(1, min(len(r), len(s))):
                    d = abs(r[k] - s[k])
                    if d > worst:
                        worst, where = d, f"{slabels[k]} at t = {s[0]:.6g}"
                    expect(d <= TOL, f"{name}: {labels[k]} at t = {s[0]:.9g}: {r[k]:.12g}, "
                           f"OpenSim {s[k]:.12g}")
            print(f"{name}: {compared} rows of {len(srows)} in {std}, {len(slabels) - 1} "
                  f"columns: largest difference {worst:.3g} ({where}); allowed {TOL:g}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if ran == 0:
        print(f"SKIPPED: none of the cases' files are in {folder}")
        return 77
    return summary("check_opensim_analyze")


if __name__ == "__main__":
    sys.exit(main())
