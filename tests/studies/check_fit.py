#!/usr/bin/python3
"""Check a fit study's /fit group with h5py against the known truth.

usage: check_fit.py spring_blocks FILE.h5   (tests/studies/fit_spring_blocks.yaml.in)
       check_fit.py rosenbrock FILE.h5      (tests/studies/fit_rosenbrock.yaml)
       check_fit.py cohort FILE.h5          (tests/studies/cohort_fit.yaml.in)

cohort: each subject's fit of the pendulum's rod lengths, which the cohort then scales by
s_k = height_k / 1.75 m, finds 0.5 m / s_k (1e-5 relative); every sample's parameter
cohort/subject is the subject whose scalars it carries.

rosenbrock: Levenberg-Marquardt on Rosenbrock's residuals from (-1.2, 1) ends at (1, 1) (1e-8)
with the cost at 0, every batch's point inside the bounds.

The fitted masses (2, 1 kg) and contact stiffness (1e6 Pa) of spring_blocks, the model that
made the synthetic data, are recovered to 1e-3 relative from a start 30 % off; the best cost of
the log never increases; the residuals at the fit are those of the file's own sample nearest
the fit; the covariance is symmetric with positive variances; every evaluated point lies within
the bounds. Exits 77 when h5py is unavailable.
"""
import sys

from mbs_check import check, finish, h5py, np


f = h5py.File(sys.argv[2], "r")
g = f["fit"] if "fit" in f else None
if sys.argv[1] == "cohort":
    c = f["cohort"]
    s = c["height"][:] / 1.75
    for k in range(len(s)):
        x = c[f"subjects/{k}/fit/parameters"][:]
        check(np.allclose(x, 0.5 / s[k], rtol=1e-5), f"subject {k}: {x} vs {0.5 / s[k]}")
        print(f"subject {k}: s = {s[k]:.4f}, fitted {x}, expected {0.5 / s[k]:.6f}")
    names = [n.decode() for n in f["parameter_names"][:]]
    subj = f["parameters"][:, names.index("cohort/subject")]
    check(np.array_equal(subj, f["scalars/cohort_subject"][:]), "the subject of each sample")
    check(set(subj.tolist()) == set(range(len(s))), "every subject's samples")
    finish()
if sys.argv[1] == "rosenbrock":
    x = g["parameters"][:]
    check(np.allclose(x, [1, 1], rtol=0, atol=1e-8), f"fitted {x}")
    check(g["cost"][()] < 1e-16, f"cost {g['cost'][()]}")
    check(g.attrs["method"].decode() == "lm", "Levenberg-Marquardt alone")
    X = f["parameters"][:]
    check(np.all(np.abs(X) <= 2), "inside the bounds")
    check(np.all(np.diff(g["log/best_cost"][:]) <= 0), "the best cost never increases")
    print("fitted", x, "in", X.shape[0], "evaluations")
    finish()
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
finish()
