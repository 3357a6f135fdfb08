#!/usr/bin/python3
"""`mbstudy run-tool` with an AnalyzeTool setup running StaticOptimization and
InducedAccelerations (jobs/analysis_static_optimization.c, analysis_induced_accelerations.c)
on a pendulum written here, against closed forms.

    check_tool_so_ia.py --mbstudy BIN

The pendulum: a rod (mass 2 kg, mass center 0.5 m below a pin, 0.05 kg m^2 about it) on a
PinJoint about z, gravity 9.80665 m/s^2, two CoordinateActuators on the pin, act1 (optimal
force 10 N m, unbounded) and act2 (20 N m, controls within [-0.3, 0.3] as the model file says),
driven by controls 0.4 and -0.2 (a controls file); the motion q = 0.2 + 0.5 sin(2 pi t) in a
coordinates file sampled every 10 ms. With I = 0.55 kg m^2 about the pin and
tau = I q'' + m g l sin q:
  - StaticOptimization: the least-squares controls, act1 = 10 tau / 500 and act2 = 20 tau / 500
    while that is within 0.3, else act2 at its bound and act1 = (tau - 20 act2) / 10; forces are
    the controls times the optimal forces;
  - InducedAccelerations (in degrees): act1 4 / I, act2 -4 / I, gravity -m g l sin q / I,
    velocity 0, total their sum; the rod's mass center (l sin q, -l cos q) accelerates by
    l (cos q, sin q) q'' for each force and by l u^2 (-sin q, cos q) for "velocity"; the
    system's mass center is the rod's.
Rows from 0.1 to 0.9 s are compared (the desired accelerations come from splines of splines,
whose ends are less accurate), within 1e-4 (relative to the largest value)."""
import math
import os
import subprocess
import sys
import tempfile

checks = 0
failures = 0
M, L, IC, G = 2.0, 0.5, 0.05, 9.80665
I = IC + M * L * L
F1, F2, B2 = 10.0, 20.0, 0.3
C1, C2 = 0.4, -0.2


def expect(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}", file=sys.stderr)


def read_storage(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    end = next(i for i, l in enumerate(lines) if l.strip() == "endheader")
    labels = lines[end + 1].split("\t")
    rows = [[float(x) for x in l.split()] for l in lines[end + 2:] if l.strip()]
    return labels, rows, lines[:end]


def q_of(t):
    w = 2 * math.pi
    return 0.2 + 0.5 * math.sin(w * t), 0.5 * w * math.cos(w * t), -0.5 * w * w * math.sin(w * t)


MODEL = f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <Model name="pendulum">
    <Ground name="ground"/>
    <gravity>0 -{G} 0</gravity>
    <BodySet name="bodyset"><objects>
      <Body name="rod"><mass>{M}</mass><mass_center>0 -{L} 0</mass_center>
        <inertia>0.1 0.1 {IC} 0 0 0</inertia></Body>
    </objects></BodySet>
    <JointSet name="jointset"><objects>
      <PinJoint name="pin">
        <socket_parent_frame>/ground</socket_parent_frame>
        <socket_child_frame>/bodyset/rod</socket_child_frame>
        <coordinates><Coordinate name="q"><default_value>0</default_value></Coordinate></coordinates>
      </PinJoint>
    </objects></JointSet>
    <ForceSet name="forceset"><objects>
      <CoordinateActuator name="act1"><coordinate>q</coordinate>
        <optimal_force>{F1}</optimal_force></CoordinateActuator>
      <CoordinateActuator name="act2"><coordinate>q</coordinate>
        <min_control>-{B2}</min_control><max_control>{B2}</max_control>
        <optimal_force>{F2}</optimal_force></CoordinateActuator>
    </objects></ForceSet>
  </Model>
</OpenSimDocument>
"""

SETUP = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
  <AnalyzeTool name="pendulum">
    <model_file>pendulum.osim</model_file>
    <results_directory>Results</results_directory>
    <initial_time>0</initial_time>
    <final_time>1</final_time>
    <AnalysisSet name="Analyses"><objects>
      <StaticOptimization name="SO">
        <activation_exponent>2</activation_exponent>
        <use_muscle_physiology>true</use_muscle_physiology>
      </StaticOptimization>
      <InducedAccelerations name="IA">
        <coordinate_names>all</coordinate_names>
        <body_names>rod center_of_mass</body_names>
      </InducedAccelerations>
    </objects></AnalysisSet>
    <ControllerSet name="Controllers"><objects>
      <ControlSetController><controls_file>controls.sto</controls_file></ControlSetController>
    </objects></ControllerSet>
    <coordinates_file>motion.sto</coordinates_file>
    <lowpass_cutoff_frequency_for_coordinates>-1</lowpass_cutoff_frequency_for_coordinates>
  </AnalyzeTool>
</OpenSimDocument>
"""


def close(a, b, scale, what):
    expect(abs(a - b) <= 1e-4 * scale, f"{what}: {a:.10g}, expected {b:.10g}")


def main():
    args = sys.argv[1:]
    if len(args) != 2 or args[0] != "--mbstudy":
        print(__doc__)
        return 2
    mbstudy = args[1]
    with tempfile.TemporaryDirectory(prefix="mbs_so_ia_") as work:
        with open(os.path.join(work, "pendulum.osim"), "w") as f:
            f.write(MODEL)
        with open(os.path.join(work, "setup.xml"), "w") as f:
            f.write(SETUP)
        with open(os.path.join(work, "motion.sto"), "w") as f:
            f.write("Coordinates\nversion=1\nnRows=101\nnColumns=2\ninDegrees=no\nendheader\n"
                    "time\tq\n")
            for k in range(101):
                t = k / 100
                f.write(f"{t:.17g}\t{q_of(t)[0]:.17g}\n")
        with open(os.path.join(work, "controls.sto"), "w") as f:
            f.write("Controls\nversion=1\nnRows=2\nnColumns=3\ninDegrees=no\nendheader\n"
                    f"time\tact1\tact2\n0\t{C1}\t{C2}\n1\t{C1}\t{C2}\n")
        r = subprocess.run([mbstudy, "run-tool", os.path.join(work, "setup.xml"), "--quiet"],
                           capture_output=True, text=True)
        expect(r.returncode == 0, f"run-tool exit {r.returncode}: {r.stderr.strip()}")
        if r.returncode:
            print(r.stdout, r.stderr)
            return 1
        out = os.path.join(work, "Results")
        # static optimization
        la, act, head = read_storage(os.path.join(out, "pendulum_SO_activation.sto"))
        lf, frc, _ = read_storage(os.path.join(out, "pendulum_SO_force.sto"))
        expect(la == ["time", "act1", "act2"] and lf == la, f"SO columns {la} {lf}")
        expect(head[0] == "Static Optimization", f"SO title '{head[0]}'")
        nsat = 0
        for ra, rf in zip(act, frc):
            t = ra[0]
            if t < 0.1 - 1e-9 or t > 0.9 + 1e-9:
                continue
            q, _, qdd = q_of(t)
            tau = I * qdd + M * G * L * math.sin(q)
            x1, x2 = F1 * tau / (F1 * F1 + F2 * F2), F2 * tau / (F1 * F1 + F2 * F2)
            if abs(x2) > B2:
                x2 = math.copysign(B2, x2)
                x1 = (tau - F2 * x2) / F1
                nsat += 1
            close(ra[1], x1, 2, f"SO act1 at t = {t:g}")
            close(ra[2], x2, 2, f"SO act2 at t = {t:g}")
            close(rf[1], F1 * x1, 20, f"SO force act1 at t = {t:g}")
            close(rf[2], F2 * x2, 20, f"SO force act2 at t = {t:g}")
        expect(0 < nsat < 81, f"act2 at its bound at {nsat} of 81 rows (both regimes wanted)")
        print(f"StaticOptimization: 81 rows against the closed form, act2 at its bound at "
              f"{nsat}")
        # induced accelerations
        deg = 180 / math.pi
        lq, rq, hq = read_storage(os.path.join(out, "pendulum_IA_q.sto"))
        expect(lq == ["time", "total", "act1", "act2", "gravity", "velocity"],
               f"IA columns {lq}")
        expect("inDegrees=yes" in hq, "IA coordinate file in degrees")
        lb, rb, _ = read_storage(os.path.join(out, "pendulum_IA_rod.sto"))
        lc, rc, _ = read_storage(os.path.join(out, "pendulum_IA_center_of_mass.sto"))
        expect(len(lb) == 1 + 6 * 5 and lb[1] == "total_X" and lb[4] == "total_Ox",
               f"IA body columns {lb[:8]}")
        expect(len(lc) == 1 + 3 * 5 and lc[1] == "total_X", f"IA mass-center columns {lc[:5]}")
        n = 0
        for row, brow, crow in zip(rq, rb, rc):
            t = row[0]
            if t < 0.1 - 1e-9 or t > 0.9 + 1e-9:
                continue
            n += 1
            q, u, _ = q_of(t)
            parts = {"act1": F1 * C1 / I, "act2": F2 * C2 / I,
                     "gravity": -M * G * L * math.sin(q) / I, "velocity": 0.0}
            parts = {"total": sum(parts.values()), **parts}
            for k, name in enumerate(lq[1:]):
                close(row[1 + k], parts[name] * deg, 200, f"IA {name} at t = {t:g}")
                qdd = parts[name]
                a = [L * math.cos(q) * qdd, L * math.sin(q) * qdd, 0.0]
                if name in ("velocity", "total"):
                    a[0] += -L * math.sin(q) * u * u
                    a[1] += L * math.cos(q) * u * u
                for s in range(3):
                    close(brow[1 + 6 * k + s], a[s], 10, f"IA rod {name} {'XYZ'[s]} at t = {t:g}")
                    close(crow[1 + 3 * k + s], a[s], 10, f"IA center of mass {name} at t = {t:g}")
                close(brow[1 + 6 * k + 5], qdd * deg, 200, f"IA rod {name} Oz at t = {t:g}")
        print(f"InducedAccelerations: {n} rows against the closed form (coordinate, rod, mass "
              f"center)")
    print(f"check_tool_so_ia: {checks} checks, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
