#!/usr/bin/python3
"""`mbstudy model accel` with OpenSim storage files:

    check_model_accel.py MBSTUDY

- a states file of a simulation (OpenSim 4 state paths, report every 0.5 ms): the accelerations
  at each row match the central differences of the simulated speeds (to the difference
  formula's error, relative 1e-4);
- a motion in degrees with the coordinates' names only (as IK writes it): the accelerations at
  zero speed equal those of the same pose in radians with the speeds given as 0;
- a file that is not a table: the message names the file and line and shows the offending
  text with its line break escaped (no raw control characters)."""
import math
import os
import subprocess
import sys
import tempfile

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
        print("FAIL:", what)


def rows_of(text):
    lines = text.strip().splitlines()
    return lines[0].split(), [[float(x) for x in line.split()] for line in lines[1:]]


def main():
    mbs = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        sto = os.path.join(tmp, "sim.sto")
        r = subprocess.run([mbs, "simulate", "double_pendulum", "--duration", "0.1", "--report",
                            "0.0005", "--accuracy", "1e-10", "--out", sto],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"simulate: {r.stderr}")
        r = subprocess.run([mbs, "model", "accel", "double_pendulum", "--states", sto],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"model accel of a .sto: exit {r.returncode}: {r.stderr}")
        head, acc = rows_of(r.stdout)
        check(head == ["time", "q1", "q2"], f"header {head}")
        with open(sto) as f:
            lines = f.read().splitlines()
        i = lines.index("endheader")
        labels = lines[i + 1].split("\t")
        data = [[float(x) for x in line.split("\t")] for line in lines[i + 2:] if line]
        su = [labels.index("/jointset/pin1/q1/speed"), labels.index("/jointset/pin2/q2/speed")]
        worst = 0.0
        for k in range(1, len(data) - 1):
            h = data[k + 1][0] - data[k - 1][0]
            for j in range(2):
                fd = (data[k + 1][su[j]] - data[k - 1][su[j]]) / h
                worst = max(worst, abs(acc[k][1 + j] - fd) / (1 + abs(fd)))
        print(f"states file: {len(acc)} rows; largest difference from the central differences "
              f"of the speeds {worst:.2e}")
        check(len(acc) == len(data) and worst < 1e-4, f"accelerations vs differences: {worst}")
        # a motion in degrees, names only, against the same pose in radians, speeds 0
        q = (-0.3, 0.7)
        mot = os.path.join(tmp, "pose.mot")
        with open(mot, "w") as f:
            f.write("Coordinates\nversion=1\nnRows=1\nnColumns=3\ninDegrees=yes\nendheader\n"
                    f"time\tq1\tq2\n0\t{math.degrees(q[0])!r}\t{math.degrees(q[1])!r}\n")
        rad = os.path.join(tmp, "pose.txt")
        with open(rad, "w") as f:
            f.write(f"{q[0]!r} {q[1]!r} 0 0\n")
        r1 = subprocess.run([mbs, "model", "accel", "double_pendulum", "--states", mot],
                            capture_output=True, text=True)
        r2 = subprocess.run([mbs, "model", "accel", "double_pendulum", "--states", rad],
                            capture_output=True, text=True)
        check(r1.returncode == 0 and "speeds are 0" in r1.stderr, f"the .mot: {r1.stderr}")
        if r1.returncode == 0 and r2.returncode == 0:
            a1 = rows_of(r1.stdout)[1][0][1:]
            a2 = [float(x) for x in r2.stdout.split()]
            d = max(abs(x - y) for x, y in zip(a1, a2))
            print(f"motion in degrees: {a1} vs radians {a2} (difference {d:.1e})")
            check(d <= 1e-12 * (1 + max(abs(x) for x in a2)), f"degrees not converted: {d}")
        # not a table: an escaped line break in the message
        bad = os.path.join(tmp, "bad.txt")
        with open(bad, "w") as f:
            f.write("Coordinates\nversion=1\n")
        r = subprocess.run([mbs, "model", "accel", "double_pendulum", "--states", bad],
                           capture_output=True, text=True)
        msg = r.stderr.strip()
        check(r.returncode == 1 and "bad.txt:1:" in msg and "\\n" in msg and "\n" not in msg,
              f"message: {msg!r}")
        print("refused:", msg)
    if problems:
        print(f"{len(problems)} problem(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
