#!/usr/bin/python3
"""Check a sensitivity study's /sensitivity group with h5py and numpy against closed forms.

usage: check_sensitivity.py ishigami FILE.h5       (tests/studies/sobol_ishigami.yaml)
       check_sensitivity.py local_pendulum FILE.h5 (tests/studies/local_pendulum.yaml)
       check_sensitivity.py local_ishigami FILE.h5 (tests/studies/local_ishigami.yaml)
       check_sensitivity.py linear_sobol FILE.h5   (tests/studies/sobol_linear.yaml)
       check_sensitivity.py linear_morris FILE.h5  (tests/studies/morris_linear.yaml)

ishigami: the true S1, ST and S2 of Ishigami's function (from its variance decomposition, a = 7,
b = 0.1) each inside the estimate's bootstrap interval (and within 0.03); the samples in SALib's
row order (every AB_j row equals A but for column j, which equals B's).
linear_sobol: S1 = ST = i^2 Var x_i / sum, S2 = 0, for the file's distributions (uniform [0, 1]
twice and normal with std 2), within 0.01.
linear_morris: mu = mu_star = i exactly (1e-12), sigma = 0.
local_pendulum: central differences and CVODES' forward sensitivities agree (1e-4 of the
largest derivative, trajectories and scalars); the 2D + 1 samples are the nominal point and
one parameter raised and lowered by its step each.
local_ishigami: the derivatives equal Ishigami's gradient in closed form (1e-8 relative).
pattern: a pattern path scales both rods' masses alike: the motion is the same.
Exits 77 when h5py is unavailable.
"""
import sys

from mbs_check import check, finish, h5py, np


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
    g = f["sensitivity"] if "sensitivity" in f else None
    ok = (f["status/done"][:] == 1) & (f["status/code"][:] == 0)
    check(ok.all(), "every sample done and successful")
    names = [s.decode() for s in g["parameter_names"][:]] if g else []
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
    elif mode == "local_pendulum":
        check(g.attrs["method"].decode() == "local", "method local")
        check(g.attrs["cvodes"].decode().startswith("used"), "CVODES used")
        X = f["parameters"][:]
        nom = g["nominal"][:]
        h = g["step_sizes"][:]
        D = len(nom)
        check(X.shape == (2 * D + 1, D), f"2D + 1 samples: {X.shape}")
        check(np.array_equal(X[0], nom), "sample 0 is the nominal point")
        for j in range(D):
            e = np.zeros(D)
            e[j] = h[j]
            check(np.allclose(X[2 * j + 1], nom + e, rtol=0, atol=0) and
                  np.allclose(X[2 * j + 2], nom - e, rtol=0, atol=0), f"samples of parameter {j}")
        check(nom[0] == 1.2 and nom[1] == 1.0, f"nominal values {nom}")
        diff = g["cvodes_vs_central_differences"][:]
        check(np.all(diff < 1e-4), f"CVODES vs central differences {diff}")
        for q in ("q", "u"):
            a = g[f"trajectories/{q}/derivative"][:]
            b = g[f"trajectories/{q}/derivative_cvodes"][:]
            check(a.shape == b.shape == (f["time"].shape[0], 2, D), f"{q} shapes {a.shape}")
            check(np.max(np.abs(a - b)) <= 1e-4 * np.max(np.abs(b)), f"{q}: the two agree")
        for n in ("q1_final", "q2_mean", "u2_final"):
            a = g[f"scalars/{n}/derivative"][:]
            b = g[f"scalars/{n}/derivative_cvodes"][:]
            check(np.allclose(a, b, rtol=1e-4, atol=1e-6 * np.max(np.abs(b))),
                  f"{n}: {a} vs {b}")
        # the derivative of q1_final by the file's own samples
        y = f["scalars/q1_final"][:]
        fd = (y[1::2] - y[2::2]) / (2 * h)
        check(np.allclose(g["scalars/q1_final/derivative"][:], fd, rtol=1e-12), "central differences")
        # the derivative of q2 with respect to q1(0) at t = 0 is 0, of q1 is 1
        dq0 = g["trajectories/q/derivative_cvodes"][0]
        check(abs(dq0[0, 2] - 1) < 1e-6 and abs(dq0[1, 2]) < 1e-6, f"dq(0)/dq1(0) = {dq0[:, 2]}")
    elif mode == "pattern":
        q = f["trajectories/q"][:]
        names = [n.decode() for n in f["parameter_names"][:]]
        check(names[0] == "/bodyset/rod*/mass", f"the pattern's name {names}")
        check(q.shape[0] == 2 and np.max(np.abs(q[0] - q[1])) < 1e-7,
              f"both masses tripled: the same motion ({np.max(np.abs(q[0] - q[1]))})")
        check(np.max(np.abs(q[0])) > 0.5, "the pendulum swings")
    elif mode == "local_ishigami":
        x1, x2, x3 = 0.4, -1.1, 2.0
        grad = np.array([np.cos(x1) * (1 + 0.1 * x3**4), 7 * 2 * np.sin(x2) * np.cos(x2),
                         0.4 * x3**3 * np.sin(x1)])
        d = g["scalars/y/derivative"][:]
        check(np.allclose(d, grad, rtol=1e-8), f"gradient {d} vs {grad}")
    else:
        print("unknown mode", mode)
        sys.exit(2)
    finish()


main()
