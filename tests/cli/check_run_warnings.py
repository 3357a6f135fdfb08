#!/usr/bin/python3
"""`mbstudy run` of a model with an element mbstudy does not simulate (a force type it does not
know): the warning `model info` and `simulate` give, printed once by the run (on one rank and
on two), and recorded in the result file (root attribute model_warnings).

    check_run_warnings.py MBSTUDY [MPIEXEC]
Exits 77 (skipped) without h5py."""
import os
import subprocess
import sys
import tempfile

try:
    import h5py
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: {e}")
    sys.exit(77)

MODEL = """<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
<Model name="pendulum_with_odd_force">
  <gravity>0 -9.80665 0</gravity>
  <BodySet><objects>
    <Body name="rod"><mass>1</mass><mass_center>0 -0.5 0</mass_center>
      <inertia>0.01 0.01 0.01 0 0 0</inertia></Body>
  </objects></BodySet>
  <JointSet><objects>
    <PinJoint name="pin">
      <socket_parent_frame>/ground</socket_parent_frame>
      <socket_child_frame>/bodyset/rod</socket_child_frame>
      <coordinates><Coordinate name="q"><default_value>0.3</default_value></Coordinate></coordinates>
    </PinJoint>
  </objects></JointSet>
  <ForceSet><objects>
    <SomeFutureForce name="odd"><appliesForce>true</appliesForce></SomeFutureForce>
  </objects></ForceSet>
</Model>
</OpenSimDocument>
"""

SPEC = """model: odd.osim
simulation: {duration: 0.2, accuracy: 1.0e-6, output_interval: 0.05}
parameters:
  - path: /bodyset/rod/mass
    distribution: {type: uniform, low: 0.9, high: 1.1}
outputs: {trajectories: [q]}
sampling: {count: 6, seed: 3}
output: out.h5
"""

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
        print("FAIL:", what)


def main():
    mbs = os.path.abspath(sys.argv[1])
    mpiexec = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "odd.osim"), "w") as f:
            f.write(MODEL)
        with open(os.path.join(tmp, "spec.yaml"), "w") as f:
            f.write(SPEC)
        info = subprocess.run([mbs, "model", "info", os.path.join(tmp, "odd.osim")],
                              capture_output=True, text=True)
        expected = [line[len("warning: "):] for line in info.stderr.splitlines()
                    if line.startswith("warning: ")]
        check(len(expected) >= 1 and any("odd" in w for w in expected),
              f"model info gives no warning for the odd force: {info.stderr}")
        runs = [("1 rank", [mbs, "run", "spec.yaml", "--quiet", "--output", "a.h5"])]
        if mpiexec:
            runs.append(("2 ranks", [mpiexec, "-n", "2", "--oversubscribe", mbs, "run",
                                     "spec.yaml", "--quiet", "--output", "b.h5"]))
        for name, cmd in runs:
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
            check(r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr}")
            got = [line for line in r.stderr.splitlines() if line.startswith("mbstudy: warning:")]
            print(f"{name}: {got}")
            check(len(got) == len(expected) and all(w in g for w, g in zip(expected, got)),
                  f"{name}: warnings {got}, expected each of {expected} once")
            out = os.path.join(tmp, cmd[-1])
            if os.path.exists(out):
                with h5py.File(out, "r") as h:
                    v = h.attrs.get("model_warnings")
                    v = v.decode() if isinstance(v, bytes) else v
                    check(v is not None and v.split("\n") == expected,
                          f"{name}: model_warnings attribute {v!r}")
    if problems:
        print(f"{len(problems)} problem(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
