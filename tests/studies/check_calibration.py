#!/usr/bin/python3
"""Check a calibration study's /calibration group with h5py and numpy against known truth.

usage: check_calibration.py linear FILE.h5     (tests/studies/calibration_linear.yaml)
       check_calibration.py pendulum FILE.h5   (tests/studies/calibration_pendulum.yaml.in)

linear: the analytic posterior of the linear-Gaussian problem, mean and covariance computed
here from the priors and the observation, against the sample mean (within 4 Monte-Carlo
standard errors, sigma sqrt(tau / (W T))) and covariance (10 %); the chain's kept part is the
samples; R-hat near 1; acceptance in the stretch move's usual range.
pendulum: the posterior of rod2's mass concentrated near its true 1 kg; every simulated sample
inside the prior's support (proposals outside are not simulated); the chain's log-probabilities
those of the file's samples.
Exits 77 when h5py is unavailable.
"""
import sys

from mbs_check import check, finish, h5py, np


mode, path = sys.argv[1], sys.argv[2]
f = h5py.File(path, "r")
g = f["calibration"]
chain = g["chain"][:]
T, W, n = chain.shape
burn = int(g.attrs["burn_in"])
kept = chain[burn:].reshape(-1, n)
check(np.array_equal(kept, g["samples"][:]), "samples are the chain after the burn-in")
check(np.allclose(g["mean"][:], kept.mean(axis=0), rtol=1e-12, atol=1e-14), "mean of the samples")
acc = g["acceptance"][:]
if mode == "linear":
    S0 = np.diag([1.0, 4.0])
    m0 = np.array([0.0, 0.5])
    c = np.array([1.0, 2.0])
    sigma, y = 0.5, 1.5
    Sp = np.linalg.inv(np.linalg.inv(S0) + np.outer(c, c) / sigma**2)
    mp = Sp @ (np.linalg.inv(S0) @ m0 + c * y / sigma**2)
    tau = g["autocorr_time"][:]
    mcse = np.sqrt(np.diag(Sp) * tau / kept.shape[0])
    m = g["mean"][:]
    print("mean", m, "analytic", mp, "mcse", mcse)
    check(np.all(np.abs(m - mp) <= 4 * mcse), f"mean {m} vs {mp} (4 mcse {4 * mcse})")
    C = g["covariance"][:]
    print("covariance", C.tolist(), "analytic", Sp.tolist())
    check(np.all(np.abs(np.diag(C) - np.diag(Sp)) <= 0.1 * np.diag(Sp)), "variances within 10 %")
    scale = np.sqrt(np.outer(np.diag(Sp), np.diag(Sp)))
    check(abs(C[0, 1] - Sp[0, 1]) <= 0.1 * scale[0, 1], "covariance within 10 % (scaled)")
    check(np.all(g["rhat"][:] < 1.05), f"R-hat {g['rhat'][:]}")
    check(0.2 < acc.mean() < 0.8, f"acceptance {acc.mean()}")
    check(np.all(g["ess"][:] > 500), f"ESS {g['ess'][:]}")
elif mode == "pendulum":
    m2 = kept[:, 0]
    print("rod2 mass: posterior mean", m2.mean(), "std", m2.std())
    check(abs(m2.mean() - 1.0) < 0.05, f"posterior mean {m2.mean()} near 1 kg")
    X = f["parameters"][:]
    check(np.all((X[:, 0] >= 0.5) & (X[:, 0] <= 1.5)), "simulated only inside the prior's support")
    ok = (f["status/done"][:] == 1) & (f["status/code"][:] == 0)
    check(ok.all(), "every sample done and successful")
    lp = g["log_probability"][:]
    check(np.all(np.isfinite(lp)), "finite log-probabilities")
else:
    print("unknown mode", mode)
    sys.exit(2)
finish()
