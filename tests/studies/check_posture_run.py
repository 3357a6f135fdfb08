#!/usr/bin/env python3
"""Behaviour of a posture study (issue: posture perturbation platform), read from its files.

  check_posture_run.py RESULT.h5

Checks, against the simulation's own records:
  - the study wrote the file, the picture (a PNG) and the Markdown table beside it;
  - every sample succeeded; the /posture table holds each sample's values at its grid point and
    stability_index = 1 - exp(-T^2) of time_to_fall;
  - the holding torques reproduce static equilibrium: the force left unbalanced at the start is
    below 1e-3 of the body weight; the torques written (right side) are the same for every sample
    of a posture, the knee's extends and grows with flexion, the ankle's plantarflexes;
  - locked joints, no perturbation: the model stands for the whole simulated duration;
  - free joints (an unstable equilibrium): unperturbed, it stands clearly longer (by 0.1 s) than
    under the smallest perturbation of the grid;
  - locked joints: the stable magnitudes form an interval from 0, and the stability index does
    not increase with the magnitude (within 0.02: a fall about 2 s after a larger push can come
    a little later, the first half of the platform's motion tilting the body the other way);
  - feedback and muscles (delayed ankle feedback of the body's sway through torques or through
    the muscles, studies/posture.h): unperturbed the model stands, it stands after the grid's
    smallest push (where the free model falls), its stable magnitudes form an interval from 0,
    and the largest push topples it;
  - friction carries the bodies that stand along with the platform;
  - fall detection: a fall is reported only when the pelvis really dropped (the pelvis height at
    the last frame before T is above the fall level and the motion ends at T), and every sample
    that stands to the end keeps its pelvis above the level all along; the largest perturbation
    of the grid topples the locked model.
"""
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print("SKIPPED: %s" % e)
    sys.exit(77)

failures = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def main():
    path = sys.argv[1]
    stem = path[:-3] if path.endswith(".h5") else path
    with open(stem + ".png", "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the picture is a PNG: " + stem + ".png")
    check(os.path.getsize(stem + ".md") > 100, "the table: " + stem + ".md")
    f = h5py.File(path, "r")
    check(f.attrs["study"].decode() == "posture", "the file says it is a posture study")
    D = float(f.attrs["simulated_duration"].decode())
    ok = (f["status/done"][:] == 1) & (f["status/code"][:] == 0)
    check(ok.all(), "every sample succeeded (%d of %d)" % (ok.sum(), ok.size))
    names = [n.decode() for n in f["parameter_names"][:]]
    P = f["parameters"][:]
    col = {n: names.index("posture/" + n) for n in ("mode", "knee_flexion", "direction",
                                                    "magnitude")}
    T = f["scalars/time_to_fall"][:]
    SI = f["scalars/stability_index"][:]
    check(np.allclose(SI, 1 - np.exp(-T ** 2), rtol=0, atol=1e-14), "SI = 1 - exp(-T^2)")
    check(np.all((T > 0) & (T <= D)), "0 < T <= the simulated duration %g s" % D)
    g = f["posture"]
    axes = [g[a][:] for a in ("knee_flexion", "direction", "magnitude")]
    modes = [m.decode() for m in g["mode"][:]]
    grid_T = g["time_to_fall"][:]
    placed = True
    for s in range(len(T)):
        i = modes.index(["free", "locked", "feedback", "muscles"][int(round(P[s, col["mode"]]))])
        j = [int(np.argmin(abs(axes[k] - P[s, col[c]])))
             for k, c in enumerate(("knee_flexion", "direction", "magnitude"))]
        placed &= grid_T[i, j[0], j[1], j[2]] == T[s]
    check(placed, "/posture/time_to_fall holds each sample at its grid point")
    weight = 9.80665 * 75  # the built-in human; gait2392 weighs about as much
    res = f["scalars/equilibrium_residual"][:]
    check(np.all(res < 1e-3 * weight), "equilibrium residual below 1e-3 of the weight "
          "(largest %.2e N)" % res.max())
    # the holding torques (right side): one quiet standing per posture, whatever the mode and the
    # push; crouching loads the knee extensors; the centre of mass stands ahead of the ankles,
    # so the ankles hold with a plantarflexing torque
    knee_s = P[:, col["knee_flexion"]]
    tq = {k: f["scalars/torque_" + k][:] for k in ("lumbar_extension", "hip_flexion_r",
                                                   "knee_angle_r", "ankle_angle_r")}
    check(all(f["scalars/torque_" + k].attrs["units"] == "N m" for k in tq),
          "holding torques written, in N m")
    same = all(np.ptp(v[knee_s == k]) < 1e-9 * weight for v in tq.values()
               for k in np.unique(knee_s))
    check(same, "holding torques: the same for every sample of a posture")
    kt = [tq["knee_angle_r"][knee_s == k][0] for k in np.unique(knee_s)]
    check(kt[-1] > 5 and kt[-1] > kt[0] + 5, "knee holding torque (extension > 0) grows with "
          "flexion: %s N m at %s deg" % (np.round(kt, 2), np.unique(knee_s)))
    check(bool(np.all(tq["ankle_angle_r"] < 0)), "ankles hold with plantarflexion (%s N m)" %
          np.round(np.unique(np.round(tq["ankle_angle_r"], 3)), 2))
    mags = axes[2]
    L = modes.index("locked")
    check(np.all(grid_T[L, :, :, 0] == D), "locked, unperturbed: stands for all %g s" % D)
    if "free" in modes:
        F = modes.index("free")
        t0, t1 = grid_T[F, :, :, 0], grid_T[F, :, :, 1]
        check(np.all(t0 > t1 + 0.1), "free: unperturbed T %s s > T at %g cm %s s + 0.1" % (
            np.round(t0.ravel(), 3), 100 * mags[1], np.round(t1.ravel(), 3)))
    si = g["stability_index"][:]
    up = grid_T[L] >= D
    check(bool(np.all(up[:, :, 1:] <= up[:, :, :-1])), "locked: once a magnitude topples the "
          "model, every larger one does (the stable range is an interval from 0)")
    inc = np.max(np.diff(si[L], axis=2))
    check(inc <= 0.02, "locked: SI does not increase with magnitude, within 0.02 (largest step "
          "%+.4f; a fall about 2 s after a larger push can come ~0.1 s later: the first half "
          "of the motion tilts the body the other way)" % inc)
    check(np.all(grid_T[L, :, :, -1] < D), "locked: %g cm topples the model (T %s s)" % (
        100 * mags[-1], np.round(grid_T[L, :, :, -1].ravel(), 3)))
    for mode in ("feedback", "muscles"):  # joints free, balanced by delayed feedback
        if mode not in modes:
            continue
        B = modes.index(mode)
        check(np.all(grid_T[B, :, :, 0] == D), "%s, unperturbed: stands for all %g s" % (mode, D))
        up = grid_T[B] >= D
        check(bool(np.all(up[:, :, 1:] <= up[:, :, :-1])), "%s: the stable range is an "
              "interval from 0" % mode)
        check(bool(np.all(up[:, :, 1])), "%s: stands after %g cm (the free model falls)" % (
            mode, 100 * mags[1]))
        check(np.all(grid_T[B, :, :, -1] < D), "%s: %g cm topples the model (T %s s)" % (
            mode, 100 * mags[-1], np.round(grid_T[B, :, :, -1].ravel(), 3)))
    # fall detection against the pelvis trajectory
    qn = [n.decode() for n in f["trajectories/q_components"][:]]
    y = f["trajectories/q"][:, :, qn.index("pelvis_ty")]
    t = f["time"][:]
    level = 0.75 * f["scalars/pelvis_height"][:]
    good = True
    for s in range(len(T)):
        rec = ~np.isnan(y[s])
        if T[s] < D:
            last = np.nonzero(rec)[0][-1]
            good &= t[last] <= T[s] + 1e-12 and T[s] - t[last] < 0.0100001
            good &= bool(np.all(y[s, rec] >= level[s] - 1e-9))
            # the fall is real: the pelvis is headed down at the end
            good &= y[s, last] < y[s, 0] - 0.05
        else:
            good &= bool(rec.all() and np.all(y[s] > level[s]))
    check(good, "falls are detected where the pelvis passes 3/4 of its height, and only there")
    # friction carries a standing body along with the platform: the right foot (its body
    # origin, the ankle) stays where it stood on the platform, within millimetres (the foot rocks
    # on its spheres), while the platform moves by up to the largest standing magnitude
    q = f["trajectories/q"]
    foot = f["trajectories/bodies/calcn_r/position"]
    rel_x = foot[:, :, 0] - q[:, :, qn.index("platform_tx")]
    rel_z = foot[:, :, 2] - q[:, :, qn.index("platform_tz")]
    stood = T >= D
    # (with feedback the ankles' torque can lift the heels for a while: the foot rolls onto its
    # toes and back, its ankle moving by centimetres, so there the place at the end counts)
    passive = P[:, col["mode"]] < 1.5
    drift = np.hypot(rel_x - rel_x[:, :1], rel_z - rel_z[:, :1])
    slip = np.where(passive, np.nanmax(drift, axis=1), drift[:, -1])[stood]
    mag = P[stood, col["magnitude"]]
    check(bool(np.all(slip < 0.01)) and bool(np.any(mag > 0.02)),
          "standing bodies travel with the platform (up to %.0f cm): the foot stays within "
          "%.4f m of its place on the platform (at the end, with feedback)" % (100 * mag.max(),
                                                                           slip.max()))
    # `com` is the subject's (the platform left out): in quiet standing, 0.52-0.59 of the body's
    # height above the platform's top (de Leva: 0.567 upright; crouching lowers it), over the
    # feet ahead of the ankles (the foot body's origin) and behind the toes (0.75 foot length)
    if "trajectories/com" in f:
        com0 = f["trajectories/com"][:, 0, :]
        H = float(f.attrs["subject_height"]) if "subject_height" in f.attrs else 1.75
        ahead = com0[:, 0] - foot[:, 0, 0]
        check(bool(np.all((com0[:, 1] > 0.52 * H) & (com0[:, 1] < 0.59 * H))) and
              bool(np.all((ahead > 0) & (ahead < 0.75 * 0.152 * H))),
              "com is the subject's: %.3f-%.3f H above the platform, %.3f-%.3f m ahead of the "
              "right ankle" % (com0[:, 1].min() / H, com0[:, 1].max() / H, ahead.min(),
                               ahead.max()))
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
