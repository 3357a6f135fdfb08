#!/usr/bin/python3
"""Check a sensitivity study's /sensitivity group with h5py and numpy against closed forms.

usage: check_sensitivity.py ishigami FILE.h5       (tests/studies/sobol_ishigami.yaml)
       check_sensitivity.py linear_sobol FILE.h5   (tests/studies/sobol_linear.yaml)
       check_sensitivity.py linear_morris FILE.h5  (tests/studies/morris_linear.yaml)

ishigami: the true S1, ST and S2 of Ishigami's function (from its variance decomposition, a = 7,
b = 0.1) each inside the estimate's bootstrap interval (and within 0.03); the samples in SALib's
row order (every AB_j row equals A but for column j, which equals B's).
linear_sobol: S1 = ST = i^2 Var x_i / sum, S2 = 0, for the file's distributions (uniform [0, 1]
twice and normal with std 2), within 0.01.
linear_morris: mu = mu_star = i exactly (1e-12), sigma = 0.
Exits 77 when h5py is unavailable.
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


def ishigami_truth(a=7.0, b=0.1):
    pi = np.pi
    V1 = 0.5 * (1 + b * pi**4 / 5) ** 2
    V2 = a * a / 8
    V13 = b * b * pi**8 * (1 / 18 - 1 / 50)
    V = V1 + V2 + V13
    S1 = np.array([V1, V2, 0]) / V
    ST = np.array([V1 + V13, V2, V13]) / V
    return S1, ST, V13 / V


def main():
    mode, path = sys.argv[1], sys.argv[2]
    f = h5py.File(path, "r")
    g = f["sensitivity"]
    ok = (f["status/done"][:] == 1) & (f["status/code"][:] == 0)
    check(ok.all(), "every sample done and successful")
    names = [s.decode() for s in g["parameter_names"][:]]
    if mode == "ishigami":
        check(g.attrs["method"].decode() == "sobol", "method sobol")
        check(names == ["/x1", "/x2", "/x3"], f"parameter names {names}")
        y = g["scalars/y"]
        S1t, STt, S13 = ishigami_truth()
        for k, truth in (("S1", S1t), ("ST", STt)):
            est, conf = y[k][:], y[k + "_conf"][:]
            for i in range(3):
                check(abs(est[i] - truth[i]) <= conf[i], f"{k}[{i}] = {est[i]:.4f} +- {conf[i]:.4f}"
                      f" holds the true {truth[i]:.4f}")
                check(abs(est[i] - truth[i]) <= 0.03, f"{k}[{i}] within 0.03 of {truth[i]:.4f}")
        S2, S2c = y["S2"][:], y["S2_conf"][:]
        for (i, j), truth in (((0, 1), 0.0), ((0, 2), S13), ((1, 2), 0.0)):
            check(abs(S2[i, j] - truth) <= S2c[i, j], f"S2[{i},{j}] = {S2[i, j]:.4f} +- "
                  f"{S2c[i, j]:.4f} holds {truth:.4f}")
        check(np.isnan(S2[1, 0]) and np.isnan(S2[0, 0]), "S2 NaN off the upper triangle")
        # SALib's row order in the file's parameters
        D = 3
        X = f["parameters"][:]
        N = int(g.attrs["base_samples"])
        check(X.shape == (N * (2 * D + 2), D), f"rows {X.shape}")
        blk = X.reshape(N, 2 * D + 2, D)
        A, B = blk[:, 0], blk[:, -1]
        good = True
        for j in range(D):
            AB, BA = blk[:, 1 + j], blk[:, 1 + D + j]
            others = [k for k in range(D) if k != j]
            good &= np.array_equal(AB[:, j], B[:, j]) and np.array_equal(AB[:, others], A[:, others])
            good &= np.array_equal(BA[:, j], A[:, j]) and np.array_equal(BA[:, others], B[:, others])
        check(good, "rows A, AB_j, BA_j, B in SALib's order")
        # the outputs are Ishigami's of the rows (the formula evaluated here)
        yv = f["scalars/y"][:]
        ref = np.sin(X[:, 0]) + 7 * np.sin(X[:, 1]) ** 2 + 0.1 * X[:, 2] ** 4 * np.sin(X[:, 0])
        check(np.allclose(yv, ref, rtol=1e-13, atol=1e-13), "y is Ishigami's function of the row")
    elif mode == "linear_sobol":
        var = np.array([1 / 12, 1 / 12, 4.0]) * np.array([1, 4, 9])
        truth = var / var.sum()
        y = g["scalars/y"]
        for k in ("S1", "ST"):
            est = y[k][:]
            check(np.all(np.abs(est - truth) <= 0.01), f"{k} = {est} vs {truth}")
        S2 = y["S2"][:]
        up = S2[np.triu_indices(3, 1)]
        check(np.all(np.abs(up) <= 0.01), f"S2 = {up} vs 0")
        check(g.attrs["estimator"].decode().startswith("jansen"), "the Jansen estimator")
    elif mode == "linear_morris":
        y = g["scalars/y"]
        c = np.arange(1, 5, dtype=float)
        check(np.allclose(y["mu"][:], c, rtol=0, atol=1e-12), f"mu = {y['mu'][:]}")
        check(np.allclose(y["mu_star"][:], c, rtol=0, atol=1e-12), f"mu_star = {y['mu_star'][:]}")
        check(np.all(np.abs(y["sigma"][:]) <= 1e-12), f"sigma = {y['sigma'][:]}")
        X = f["parameters"][:]
        check(X.shape == (50 * 5, 4), f"N (D + 1) rows: {X.shape}")
        steps = np.abs(np.diff(X.reshape(50, 5, 4), axis=1))
        check(np.all((steps > 0).sum(axis=2) == 1), "one parameter changes per step")
        check(np.allclose(steps[steps > 0], 2 / 3), "by delta = p / (2 (p - 1)) = 2/3")
    else:
        print("unknown mode", mode)
        sys.exit(2)
    if problems:
        print(f"{len(problems)} problem(s)")
        sys.exit(1)
    print("ok")


main()
