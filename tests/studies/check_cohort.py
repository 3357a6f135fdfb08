#!/usr/bin/python3
"""Check a generated cohort's file with h5py and numpy.

usage: check_cohort.py FILE.h5 SUBJECTS  (tests/studies/cohort_small.yaml)
       check_cohort.py --pendulum FILE.h5 REFERENCE.h5   (tests/studies/cohort_pendulum.yaml,
                                                          pendulum_reference.yaml)

--pendulum: the length factors are height / 1.75 m times the rods' segment factor 1.2; every
length of the double pendulum scaled by s stretches its time by sqrt(s): each subject's angles
at time t equal the unscaled pendulum's at t / sqrt(s) (1e-3 rad, linear interpolation between
frames 2 ms apart).

Every sample carries its subject's index, sex, height and mass, which are /cohort's, in the
order subject x samples per subject; the subjects lie within the cohort's truncation (3
standard deviations of ANSUR II's statures and masses by sex); mbstudy's human scaled to each
subject stands with its pelvis at the same fraction of its height (the proportions are kept)
but for the feet's contact penetration, which depends on the weight: within twice the Hertz
penetration of one foot sphere carrying a tenth of the heaviest subject's weight; /cohort's
per-subject statistics are numpy's over each subject's samples.
Exits 77 when h5py is unavailable.
"""
import sys

from mbs_check import check, finish, h5py, np


if sys.argv[1] == "--pendulum":
    f = h5py.File(sys.argv[2], "r")
    ref = h5py.File(sys.argv[3], "r")
    g = f["cohort"]
    s = 1.2 * g["height"][:] / 1.75
    L = g["length_factors"][:]
    check(np.allclose(L[:, 1:], s[:, None], rtol=1e-15), "length factors 1.2 height / 1.75")
    check(np.all(L[:, 0] == 1), "Ground unscaled")
    q = f["trajectories/q"][:]
    q0 = ref["trajectories/q"][0]
    t = f["time"][:]
    for b in range(len(s)):
        # subject b at time t looks like the unscaled pendulum at t / sqrt(s_b)
        tr = t / np.sqrt(s[b])
        for c in range(q.shape[2]):
            err = np.max(np.abs(q[b, :, c] - np.interp(tr, t, q0[:, c])))
            check(err < 1e-3, f"subject {b} (s = {s[b]:.3f}): angle {c} differs by {err:.2e}")
    check(np.max(np.abs(q[0] - q[1])) > 1e-2, "the subjects' motions differ in time")
    finish()

f = h5py.File(sys.argv[1], "r")
S = int(sys.argv[2])
g = f["cohort"]
sc = f["scalars"]
h, m, fem = g["height"][:], g["mass"][:], g["female"][:]
check(h.shape == (S,) and m.shape == (S,), f"{S} subjects")
n = int(g.attrs["samples_per_subject"])
N = f["parameters"].shape[0]
check(N == S * n, f"samples {N} = subjects x {n}")
subj = np.repeat(np.arange(S), n)
check(np.array_equal(sc["cohort_subject"][:], subj), "subject of each sample")
check(np.array_equal(sc["cohort_height"][:], h[subj]), "height of each sample")
check(np.array_equal(sc["cohort_mass"][:], m[subj]), "mass of each sample")
check(np.array_equal(sc["cohort_female"][:], fem[subj]), "sex of each sample")
hm = np.where(fem == 1, 1.629, 1.756)
hs = np.where(fem == 1, 0.064, 0.069)
mm = np.where(fem == 1, 67.8, 85.5)
ms = np.where(fem == 1, 11.1, 14.2)
check(np.all(np.abs(h - hm) <= 3 * hs + 1e-12), f"heights within 3 sd: {h}")
check(np.all(np.abs(m - mm) <= 3 * ms + 1e-12), f"masses within 3 sd: {m}")
check(0 < fem.sum() < S, "both sexes drawn")
ok = (f["status/done"][:] == 1) & (f["status/code"][:] == 0)
check(ok.all(), "every sample done and successful")
ratio = sc["pelvis_height"][:] / sc["cohort_height"][:]
dev = sc["pelvis_height"][:] - ratio.mean() * sc["cohort_height"][:]
# Hertz: F = 4/3 E sqrt(R) d^1.5 with E the foot spheres' 1e7 Pa and R their 0.02 H / 1.75
F = 9.80665 * m.max() / 10
R = 0.02 * h.max() / 1.75
d = (3 * F / (4 * 1e7 * np.sqrt(R))) ** (2 / 3)
print(f"pelvis height / stature: {ratio.mean():.5f}; largest deviation {np.abs(dev).max() * 1e3:.3f}"
      f" mm, a sphere's penetration {d * 1e3:.3f} mm")
check(np.abs(dev).max() <= 2 * d, "the scaled humans stand alike but for the contact penetration")
for name in ("time_to_fall", "pelvis_height"):
    v = sc[name][:].reshape(S, n)
    for stat, fn in (("mean", np.mean), ("min", np.min), ("max", np.max)):
        check(np.allclose(g[f"scalars/{name}/{stat}"][:], fn(v, axis=1), rtol=1e-12),
              f"{name} {stat} per subject")
finish()
