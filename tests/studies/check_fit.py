#!/usr/bin/python3
"""Check a fit study's /fit group with h5py against the known truth.

usage: check_fit.py spring_blocks FILE.h5   (tests/studies/fit_spring_blocks.yaml.in)

The fitted masses (2, 1 kg) and contact stiffness (1e6 Pa) of spring_blocks, the model that
made the synthetic data, are recovered to 1e-3 relative from a start 30 % off; the best cost of
the log never increases; the residuals at the fit are those of the file's own sample nearest
the fit; the covariance is symmetric with positive variances; every evaluated point lies within
the bounds. Exits 77 when h5py is unavailable.
"""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: /usr/bin/python3 cannot import h5py and numpy ({e})")
    sys.exit(77)

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
        print("FAIL:", what)


f = h5py.File(sys.argv[2], "r")
g = f["fit"]
truth = np.array([2.0, 1.0, 1.0e6])
x = g["parameters"][:]
x0 = g["initial"][:]
check(np.allclose(np.abs(x0 - truth) / truth, 0.3), f"the start is 30 % off: {x0}")
rel = np.abs(x - truth) / truth
check(np.all(rel <= 1e-3), f"fitted {x}, relative error {rel}")
print("fitted", x, "relative error", rel)
best = g["log/best_cost"][:]
check(np.all(np.diff(best) <= 0), "the best cost never increases")
check(g["cost"][()] < 1e-6 * best[0], f"cost {g['cost'][()]} from {best[0]}")
cov = g["covariance"][:]
check(np.allclose(cov, cov.T, rtol=1e-6, atol=0), "covariance symmetric")
check(np.all(np.diag(cov) > 0), "positive variances")
check(np.all(g["identifiable"][:] == 1), "every parameter identifiable")
X = f["parameters"][:]
lo, hi = g["lower"][:], g["upper"][:]
check(np.all((X >= lo) & (X <= hi)), "every evaluated point inside the bounds")
ok = (f["status/done"][:] == 1) & (f["status/code"][:] == 0)
check(ok.all(), "every sample done and successful")
check(int(f.attrs["samples"]) == X.shape[0] == int(g.attrs["evaluations"]),
      "the file's sample count is the evaluations'")
# the residuals at the fit: y1 and y2 against the truth at every frame, by the file's samples
q = f["trajectories/q"][:]
i = int(np.argmin(np.sum((X - x) ** 2 / truth**2, axis=1)))
check(np.allclose(X[i], x, rtol=1e-6), "the fitted point is one of the evaluated samples")
r = g["residuals"][:]
check(r.shape == (2 * q.shape[1],), f"residual count {r.shape}")
check(np.max(np.abs(r)) < 1e-6, f"residuals at the fit {np.max(np.abs(r))}")
if problems:
    print(f"{len(problems)} problem(s)")
    sys.exit(1)
print("ok")
