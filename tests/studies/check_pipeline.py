#!/usr/bin/python3
"""Checks a pipeline study of make_pipeline_study.py's synthetic pendulums against the truth:

    check_pipeline.py DIR RESULT.h5

- every sample of a subject's swing succeeded; s03's trial `missing` failed with a message that
  names the subject, the trial, the stage and the missing marker file;
- inverse kinematics: ik/q at the cycle's frames (0 .. 100 % of 0 .. 1 s) is A sin(2 pi f t)
  within 1e-6 rad (nominal draws) or inside its 5..95 % band (Monte Carlo draws);
- inverse dynamics: the pin's moment is (I + m c^2) q'' + m g c sin q, within 0.5 % of its
  largest value away from the ends of the cycle;
- /pipeline holds the subjects, the nominal draw's OpenSim files of each trial (the IK motion
  and the ID forces as tables with their column labels), and with several draws the bands
  (5 <= 50 <= 95 %, the median near the truth);
- with drawn model parameters (the rod's mass as a factor, its Izz as a value; no marker
  noise): every draw's motion is the truth and its moment the closed form with that draw's
  mass and inertia (the tools read the drawn values), the draws spread over their ranges, and
  the moment's band is as wide as the parameters make it.
Exits 77 (skipped) without h5py and numpy."""
import math
import sys

from mbs_check import check, finish

import h5py
import numpy as np

G = 9.80665


def text(v):
    return v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)


def main():
    folder, path = sys.argv[1], sys.argv[2]
    truth = {}
    with open(f"{folder}/truth.txt") as f:
        for line in f:
            n, *v = line.split()
            truth[n] = [float(x) for x in v]
    with h5py.File(path, "r") as h:
        draws = int(text(h.attrs["pipeline_draws"]))
        subjects = [text(s) for s in h["pipeline/subjects"][:]]
        check(subjects == ["s01", "s02", "s03"], f"subjects {subjects}")
        code = h["status/code"][:]
        msg = [text(m) for m in h["status/message"][:]]
        subj = h["scalars/pipeline_subject"][:]
        trial = h["scalars/pipeline_trial"][:]
        t = np.asarray(h["time"][:]) / 100.0  # % of the cycle -> s (the cycle is 0 .. 1 s)
        check(text(h["time"].attrs["units"]) == "% of the cycle", "time axis units")
        q = h["trajectories/ik/q"][:]
        tau = h["trajectories/id/generalized_forces"][:]
        comps = [text(c) for c in h["trajectories/id/generalized_forces_components"][:]]
        check(comps == ["q_moment"], f"ID components {comps}")
        check(len(code) == 4 * draws, f"{len(code)} samples for 4 trials x {draws} draws")
        inner = (t >= 0.05) & (t <= 0.95)
        par = h["parameters"][:]
        names = [text(n) for n in h["parameter_names"][:]] if par.shape[1] else []
        drawn = par.shape[1] > 0
        if drawn:
            check(names == ["/bodyset/rod/mass", "/bodyset/rod/inertia[2]"], f"params {names}")
            ok = ~np.isnan(par[:, 0])
            check(np.all((par[ok, 0] >= 0.8) & (par[ok, 0] <= 1.2)), "mass factors off range")
            check(np.all((par[ok, 1] >= 0.1) & (par[ok, 1] <= 0.2)), "Izz off range")
            check(np.std(par[ok, 0]) > 0.05 and np.std(par[ok, 1]) > 0.01,
                  "the parameters do not vary")
        worst_q = worst_tau = 0.0
        for s in range(len(code)):
            name = subjects[int(subj[s])]
            if name == "s03" and int(trial[s]) == 1:  # the missing trial
                check(code[s] != 0, f"sample {s}: the missing trial did not fail")
                check("s03" in msg[s] and "missing" in msg[s] and "ik" in msg[s]
                      and "missing.trc" in msg[s], f"sample {s}: message '{msg[s]}'")
                continue
            check(code[s] == 0, f"sample {s} ({name}): status {code[s]}: {msg[s]}")
            A, freq, L, m, c, I = truth[name]
            w = 2 * math.pi * freq
            qt = A * np.sin(w * t)
            qdd = -A * w * w * np.sin(w * t)
            if drawn:  # this draw's mass (a factor on the subject's) and Izz (a value)
                m, I = par[s, 0] * m, par[s, 1]
            taut = (I + m * c * c) * qdd + m * G * c * np.sin(qt)
            if draws == 1 or drawn:
                worst_q = max(worst_q, float(np.max(np.abs(q[s, :, 0] - qt))))
                rel = np.max(np.abs(tau[s, inner, 0] - taut[inner])) / np.max(np.abs(taut))
                worst_tau = max(worst_tau, float(rel))
        if draws == 1 or drawn:
            print(f"{'drawn parameters' if drawn else 'nominal'}: largest |q - A sin(2 pi f t)| {worst_q:.2e} rad; moment within "
                  f"{100 * worst_tau:.3f} % of its largest value (5..95 % of the cycle)")
            check(worst_q < 1e-6, f"ik/q off by {worst_q}")
            check(worst_tau < 5e-3, f"id moment off by {100 * worst_tau} %")
            for name in ("s01", "s02", "s03"):
                g = h[f"pipeline/{name}/swing/files"]
                check("ik" in g and "id" in g, f"{name}: files {list(g)}")
                cols = [text(c) for c in g["id_columns"][:]]
                check(cols == ["time", "q_moment"], f"{name}: id columns {cols}")
                check(g["ik"].shape[0] == 101, f"{name}: ik rows {g['ik'].shape}")
        if drawn and draws > 1:  # the moment's band: as wide as the drawn mass and inertia make it
            for name in ("s01", "s02", "s03"):
                b = h[f"pipeline/{name}/swing/bands/id/generalized_forces"][:]
                check(np.all(b[0] <= b[1] + 1e-12) and np.all(b[1] <= b[2] + 1e-12),
                      f"{name}: moment bands out of order")
                sel = [s for s in range(len(code)) if subjects[int(subj[s])] == name
                       and int(trial[s]) == 0]
                spread = np.percentile(tau[sel, :, 0], 95, axis=0) - \
                    np.percentile(tau[sel, :, 0], 5, axis=0)
                width = b[2, :, 0] - b[0, :, 0]
                check(np.max(np.abs(width - spread)) <= 1e-9 * (1 + np.max(np.abs(spread))),
                      f"{name}: the band is not the draws' 5..95 % spread")
                check(float(np.median(width)) > 0, f"{name}: no spread of the moment")
        elif draws > 1:
            inside = total = 0
            for name in ("s01", "s02", "s03"):
                b = h[f"pipeline/{name}/swing/bands/ik/q"][:]
                check(b.shape == (3, len(t), 1), f"{name}: band shape {b.shape}")
                check(np.all(b[0] <= b[1] + 1e-15) and np.all(b[1] <= b[2] + 1e-15),
                      f"{name}: bands out of order")
                A, freq, *_ = truth[name]
                qt = A * np.sin(2 * math.pi * freq * t)
                inside += int(np.sum((b[0, :, 0] <= qt) & (qt <= b[2, :, 0])))
                total += len(t)
                width = float(np.median(b[2, :, 0] - b[0, :, 0]))
                check(width > 0, f"{name}: no spread")
                check(float(np.max(np.abs(b[1, :, 0] - qt))) < 0.01,
                      f"{name}: the median strays from the truth")
            print(f"Monte Carlo ({draws} draws): the truth inside the 5..95 % band at "
                  f"{inside} of {total} frames")
            check(inside >= 0.8 * total, f"truth inside the band at {inside} of {total} frames")
    finish()


if __name__ == "__main__":
    main()
