#!/usr/bin/python3
"""OpenSim's own ForwardTool test cases (opensim-core, Applications/Forward/test) run through
`mbstudy run-tool`, their results compared with OpenSim's standard results as OpenSim's
testForward compares them.

    check_opensim_forward.py --mbstudy BIN --tests DIR [--models DIR]

DIR holds OpenSim's test folder Forward/ (its setup files, models, controls and std_*.sto
files, as in opensim-core); they are not part of mbstudy. --models is a folder of OpenSim 4
models: where mbstudy cannot read a test's own model file, the OpenSim 4 version of the same
model from there is run instead, and the line says so.

Cases (as testForward):
  - pendulum: pendulum_Setup_Forward.xml; over its small swing every row within 1e-2 of the
    harmonic oscillator -amp cos(k t), amp k sin(k t), amp = pi/20, k = sqrt(g/0.5); rows from
    0 to 1 s.
  - pendulum_ext_point_in_ground: pendulum_ext_point_in_ground_Setup_Forward.xml (gravity off,
    replaced by an external force at points expressed in ground); its last row within 1e-2 of
    the pendulum's states at that time.
  - pendulum_ext_gravity: the same with pendulum_ext_gravity_Setup_Forward.xml (when its data
    file is present).
  - arm26: arm26_Setup_Forward.xml with Thelen2003Muscle read as Thelen2003Muscle_Deprecated
    (testForward calls Object::renameType so; mbstudy reads the OpenSim 2 model's muscles so
    by itself); every state at the first and the last time within 1e-3 of
    std_arm26_states.sto.
Exits 77 (CTest's skip code) with the reason when the folder is absent."""
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opensim_check import expect, read_storage, row_at, summary  # noqa: E402
import tempfile





def state_key(label):
    """OpenSim 3 state labels (r_elbow_flex, r_elbow_flex_u, BIClong.activation) from OpenSim
    4 paths (/jointset/r_elbow/r_elbow_flex/value, .../speed, /forceset/BIClong/activation)"""
    p = label.split("/")
    if label.startswith("/jointset/") and len(p) == 5:
        return p[3] + ("_u" if p[4] == "speed" else "")
    if label.startswith("/forceset/") and len(p) == 4:
        return p[2] + "." + p[3]
    return label



def model_readable(mbstudy, model):
    r = subprocess.run([mbstudy, "model", "info", model], capture_output=True, text=True)
    return r.returncode == 0


def run_arm26(mbstudy, src, models, work):
    setup = os.path.join(src, "arm26_Setup_Forward.xml")
    std = os.path.join(src, "std_arm26_states.sto")
    for f in (setup, std):
        if not os.path.exists(f):
            print(f"arm26: skipped ({f} not found)")
            return
    case = os.path.join(work, "arm26")
    shutil.copytree(src, case)
    setup = os.path.join(case, "arm26_Setup_Forward.xml")
    model = os.path.join(case, "arm26.osim")
    note = "its own model"
    if not model_readable(mbstudy, model):
        alt = os.path.join(models, "arm26.osim") if models else None
        if not alt or not os.path.exists(alt):
            print("arm26: skipped (mbstudy cannot read its arm26.osim and no OpenSim 4 "
                  "arm26.osim was given with --models)")
            return
        with open(setup, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"<model_file>[^<]*</model_file>", f"<model_file>{alt}</model_file>", text)
        with open(setup, "w", encoding="utf-8") as f:
            f.write(text)
        note = f"the OpenSim 4 version of its model ({alt})"
    # its own (OpenSim 2) model is read with OpenSim 2's Thelen model, as testForward runs it;
    # the OpenSim 4 version of the model needs the rename testForward makes
    flags = [] if note == "its own model" else [
        "--rename-type", "Thelen2003Muscle=Thelen2003Muscle_Deprecated"]
    r = subprocess.run([mbstudy, "run-tool", setup, "--quiet", *flags], capture_output=True,
                       text=True)
    expect(r.returncode == 0, f"arm26: run-tool exit {r.returncode}: {r.stderr.strip()}")
    if r.returncode:
        return
    labels, rows = read_storage(os.path.join(case, "Results", "arm26_states.sto"))
    slabels, srows = read_storage(std)
    index = {state_key(l): i for i, l in enumerate(labels)}
    print(f"arm26 ({note}{', --rename-type' if flags else ''}), Thelen2003Muscle as "
          f"Thelen2003Muscle_Deprecated, against "
          f"std_arm26_states.sto (tolerance 1e-3, as testForward):")
    for row in (rows[0], rows[-1]):
        t = row[0]
        ref = row_at(srows, t)
        worst, where = 0.0, ""
        for j, name in enumerate(slabels[1:], 1):
            expect(name in index, f"arm26: no column for the state {name}")
            if name not in index:
                continue
            d = abs(row[index[name]] - ref[j])
            expect(d <= 1e-3, f"arm26: t = {t:g}: {name}: std {ref[j]:.8g}, mbstudy "
                              f"{row[index[name]]:.8g}")
            if d >= worst:
                worst, where = d, name
        print(f"  t = {t:g} s: {len(slabels) - 1} states, largest difference {worst:.2e} "
              f"({where})")


def run_tool(mbstudy, setup, *flags):
    r = subprocess.run([mbstudy, "run-tool", setup, "--quiet", *flags], capture_output=True,
                       text=True)
    expect(r.returncode == 0, f"{os.path.basename(setup)}: run-tool exit {r.returncode}: "
                              f"{r.stderr.strip()}")
    return r.returncode == 0


def run_pendulums(mbstudy, src, work):
    case = os.path.join(work, "pendulum")
    shutil.copytree(src, case)
    setup = os.path.join(case, "pendulum_Setup_Forward.xml")
    if not os.path.exists(setup):
        print("pendulum: skipped (pendulum_Setup_Forward.xml not found)")
        return
    if not run_tool(mbstudy, setup):
        return
    labels, rows = read_storage(os.path.join(case, "Results", "pendulum_states.sto"))
    amp, k = math.pi / 20, math.sqrt(9.80665 / 0.5)
    worst = 0.0
    for row in rows:
        t = row[0]
        worst = max(worst, abs(-amp * math.cos(k * t) - row[1]), abs(amp * k * math.sin(k * t)
                                                                     - row[2]))
    expect(rows[0][0] == 0 and rows[-1][0] == 1, "pendulum: rows from 0 to 1 s")
    expect(worst <= 1e-2, f"pendulum: {worst:.3g} from the harmonic oscillator")
    print(f"pendulum: {len(rows)} rows, largest difference from the harmonic oscillator "
          f"{worst:.2e} (tolerance 1e-2, as testForward)")
    for name, out in (("pendulum_ext_point_in_ground", "pendulum_ext_gravity_point_in_ground"),
                      ("pendulum_ext_gravity", "pendulum_ext_gravity")):
        setup = os.path.join(case, name + "_Setup_Forward.xml")
        if not os.path.exists(setup):
            print(f"{name}: skipped ({name}_Setup_Forward.xml not found)")
            continue
        with open(setup, encoding="utf-8", errors="replace") as f:
            loads = re.search(r"<external_loads_file>\s*([^<\s]+)", f.read())
        if loads:
            with open(os.path.join(case, loads.group(1)), encoding="utf-8",
                      errors="replace") as f:
                data = re.search(r"<datafile>\s*([^<\s]+)", f.read())
            if data and not os.path.exists(os.path.join(case, data.group(1))):
                print(f"{name}: skipped (its data file {data.group(1)} not found)")
                continue
        if not run_tool(mbstudy, setup):
            continue
        _, res = read_storage(os.path.join(case, "Results", out + "_states.sto"))
        last = res[-1]
        ref = row_at(rows, last[0])
        d = max(abs(a - b) for a, b in zip(last[1:3], ref[1:3]))
        expect(d <= 1e-2, f"{name}: last row {d:.3g} from the pendulum's states")
        print(f"{name}: at t = {last[0]:g} s the coordinate and speed within {d:.2e} of the "
              f"pendulum's (tolerance 1e-2, as testForward)")


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
        print("SKIPPED: no folder of OpenSim's application tests given (set MBS_OPENSIM_TESTS_DIR "
              "to a folder holding opensim-core's Applications/Forward/test as Forward/)")
        return 77
    src = os.path.join(tests, "Forward")
    if not os.path.isdir(src):
        print(f"SKIPPED: {src} not found (OpenSim's Applications/Forward/test folder; set "
              f"MBS_OPENSIM_TESTS_DIR)")
        return 77
    work = tempfile.mkdtemp(prefix="mbs_osim_forward_")
    try:
        run_pendulums(mbstudy, src, work)
        run_arm26(mbstudy, src, opt.get("--models"), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return summary("check_opensim_forward")


if __name__ == "__main__":
    sys.exit(main())
