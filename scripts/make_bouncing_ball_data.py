#!/usr/bin/python3
"""Make studies/specs/data/bouncing_ball_measured.sto, the synthetic measurement of the fitting
example (studies/specs/fit_bouncing_ball.yaml): mbstudy's bouncing_ball simulated with a contact
stiffness of 2.5e7 Pa and a dissipation of 0.6 s/m, its height every 5 ms for 1.5 s, plus
Gaussian noise of 0.5 mm (numpy's generator, seed 20261124).

usage: scripts/make_bouncing_ball_data.py [MBSTUDY]   (default build/mbstudy)
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
mbstudy = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "mbstudy")
spec = """model: bouncing_ball
simulation: {duration: 1.5, accuracy: 1.0e-8, output_interval: 0.005}
parameters:
  - {path: /forceset/contact/floor/stiffness, distribution: {type: constant, value: 2.5e7}}
  - {path: /forceset/contact/floor/dissipation, distribution: {type: constant, value: 0.6}}
outputs: {trajectories: [q]}
sampling: {method: grid}
output: truth.h5
"""
with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "truth.yaml"), "w") as f:
        f.write(spec)
    subprocess.run([mbstudy, "run", os.path.join(d, "truth.yaml"), "--quiet"], check=True)
    with h5py.File(os.path.join(d, "truth.h5"), "r") as f:
        t = f["time"][:]
        y = f["trajectories/q"][0, :, 0]
rng = np.random.default_rng(20261124)
noisy = y + rng.normal(0, 0.0005, y.shape)
out = os.path.join(root, "studies", "specs", "data", "bouncing_ball_measured.sto")
with open(out, "w") as f:
    f.write("bouncing_ball_measured\nversion=1\n")
    f.write(f"nRows={len(t)}\nnColumns=2\ninDegrees=no\n")
    f.write("Synthetic measurement: mbstudy's bouncing_ball with contact stiffness 2.5e7 Pa and\n")
    f.write("dissipation 0.6 s/m (scripts/make_bouncing_ball_data.py), plus Gaussian noise of 0.5 mm.\n")
    f.write("endheader\ntime\theight\n")
    for ti, yi in zip(t, noisy):
        f.write(f"{ti:.6f}\t{yi:.9f}\n")
print("wrote", out)
