#!/usr/bin/python3
"""Check the results of the study types' examples (studies/specs) run at a small size.

usage: check_examples.py NAME FILE.h5

sensitivity_posture: every sample is the one posture of the spec (1 deg, anterior 9 cm, locked)
put into quiet standing; Sobol' indices for both outputs, one per parameter, with their
intervals; the time to fall between 0 and the simulated duration.
fit_bouncing_ball: the fitted stiffness and dissipation hold the values that made the
measurement (2.5e7 Pa, 0.6 s/m) within 4 standard errors of the fit (covariance_unscaled: the
residuals are weighted by the noise's 1/sigma), and the cost is that of the noise
(chi^2 / 2 with m - n degrees of freedom, within 5 of its standard deviations).
cohort_posture: per subject a row in /cohort, the samples subject-major.
Exits 77 when h5py is unavailable.
"""
import sys

from mbs_check import check, finish, h5py, np


name, path = sys.argv[1], sys.argv[2]
f = h5py.File(path, "r")
ok = (f["status/done"][:] == 1) & (f["status/code"][:] == 0)
if name == "sensitivity_posture":
    names = [n.decode() for n in f["parameter_names"][:]]
    X = f["parameters"][:]
    check(np.all(X[:, names.index("posture/magnitude")] == 0.09), "one displacement")
    check(np.all(X[:, names.index("posture/mode")] == 1), "locked")
    g = f["sensitivity"]
    D = len(g["parameter_names"])
    check(D == 6, f"6 parameters varied: {D}")
    N = int(g.attrs["base_samples"])
    check(X.shape[0] == N * (2 * D + 2), f"{X.shape[0]} rows = N (2D + 2)")
    for out in ("time_to_fall", "stability_index"):
        for k in ("S1", "ST", "S1_conf", "ST_conf"):
            check(g[f"scalars/{out}/{k}"].shape == (D,), f"{out}/{k}")
        check(np.all(np.isfinite(g[f"scalars/{out}/ST"][:])), f"{out}: finite ST")
    T = f["scalars/time_to_fall"][:][ok]
    dur = float(f.attrs["simulated_duration"])
    check(np.all((T > 0) & (T <= dur)), "0 < T <= duration")
    check(np.all(np.isfinite(f["scalars/pelvis_height"][:][ok])), "quiet standing in every sample")
    check(ok.mean() > 0.9, f"{ok.mean():.2f} of the samples succeeded")
elif name == "fit_bouncing_ball":
    g = f["fit"]
    x = g["parameters"][:]
    se = np.sqrt(np.diag(g["covariance_unscaled"][:]))
    truth = np.array([2.5e7, 0.6])
    z = (x - truth) / se
    print("fitted", x, "standard errors", se, "z", z)
    check(np.all(np.abs(z) < 4), f"the truth within 4 standard errors: z = {z}")
    m = len(g["residuals"])
    cost = g["cost"][()]
    dof = m - len(x)
    check(abs(2 * cost - dof) < 5 * np.sqrt(2 * dof), f"chi^2 {2 * cost:.1f} for {dof} dof")
elif name == "cohort_posture":
    g = f["cohort"]
    S = len(g["height"])
    n = int(g.attrs["samples_per_subject"])
    check(f["parameters"].shape[0] == S * n, "subject-major samples")
    check(np.array_equal(f["scalars/cohort_subject"][:], np.repeat(np.arange(S), n)),
          "the subject of each sample")
    check(ok.all(), "every sample done and successful")
else:
    print("unknown example", name)
    sys.exit(2)
finish()
