#!/usr/bin/python3
"""Check a study result file with h5py and numpy, independently of mbstudy's own code.

usage: check_study.py pendulum FILE.h5     (tests/studies/pendulum_mc.yaml)
       check_study.py failing FILE.h5      (tests/studies/failing_mc.yaml)
       check_study.py bouncing FILE.h5     (tests/studies/bouncing_block_study.yaml.in)
       check_study.py export FILE.h5 CSV I (a sample exported with mbstudy export)

pendulum: dimension scales on every axis; parameters inside their distributions' supports and
spread over them (LHS: one sample per stratum of rod1's mass); scalars equal to the
trajectories they come from; statistics equal to numpy's over the samples; the pendulum's
energy conserved along every trajectory (a physical check on the stored q and u).
failing: exactly the samples with a negative mass failed, each with its message, and the
statistics leave them out.
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


def scale_names(d):
    return [d.dims[i][0].name if len(d.dims[i]) else None for i in range(d.ndim)]


def stats_match(f, name, values, ok):
    """/statistics/<name>: count, mean, std, percentile against numpy over the ok samples."""
    g = f["statistics/" + name]
    v = values[ok]
    check(np.array_equal(g["count"][()], np.sum(np.isfinite(v), axis=0)), f"{name}: count")
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(v, axis=0)
        std = np.nanstd(v, axis=0, ddof=1)
        pct = np.nanpercentile(v, f["statistics/percentiles"][()], axis=0)
    check(np.allclose(g["mean"][()], mean, rtol=1e-12, atol=1e-12, equal_nan=True),
          f"{name}: mean")
    check(np.allclose(g["std"][()], std, rtol=1e-9, atol=1e-12, equal_nan=True), f"{name}: std")
    check(np.allclose(g["percentile"][()], pct, rtol=1e-12, atol=1e-12, equal_nan=True),
          f"{name}: percentiles")


def pendulum(f):
    n = f["parameters"].shape[0]
    names = [s.decode() if isinstance(s, bytes) else s for s in f["parameter_names"][()]]
    check(names == ["/bodyset/rod1/mass", "/bodyset/rod2/mass",
                    "/jointset/pin1/q1/default_value",
                    "/jointset/pin2/q2/default_speed_value"], f"parameter names {names}")
    check(scale_names(f["parameters"]) == ["/samples", "/parameter_names"], "parameter scales")
    q, u = f["trajectories/q"][()], f["trajectories/u"][()]
    check(scale_names(f["trajectories/q"])[:2] == ["/samples", "/time"], "trajectory scales")
    check(all(len(f["trajectories/q"].dims[i]) == 1 for i in range(3)), "q: 3 scales")
    p = f["parameters"][()]
    m1 = p[:, 0]
    check(np.all((m1 > 0.5) & (m1 < 1.5)), "rod1 mass inside [0.5, 1.5]")
    strata = np.floor((m1 - 0.5) / 1.0 * n).astype(int)
    check(sorted(strata) == list(range(n)), "LHS: one sample per stratum of rod1's mass")
    check(np.all(p[:, 1] > 0), "rod2 mass (scaled lognormal) positive")
    check(np.all((p[:, 3] >= -1) & (p[:, 3] <= 2)), "truncated normal inside [-1, 2]")
    # initial conditions are the sampled ones
    check(np.allclose(q[:, 0, 0], p[:, 2], rtol=0, atol=1e-9), "q1(0) = sampled default value")
    check(np.allclose(u[:, 0, 1], p[:, 3], rtol=0, atol=1e-9), "u2(0) = sampled default speed")
    # scalars from the trajectories
    check(np.array_equal(f["scalars/q1_final"][()], q[:, -1, 0]), "q1_final = last q1")
    check(np.array_equal(f["scalars/q2_max"][()], q[:, :, 1].max(axis=1)), "q2_max")
    pos = f["trajectories/bodies/rod2/position"][()]
    check(np.array_equal(f["scalars/rod2_lowest"][()], pos[:, :, 1].min(axis=1)), "rod2_lowest")
    ok = f["status/code"][()] == 0
    check(ok.all(), "every pendulum sample succeeded")
    for name in ["q", "u", "com", "bodies/rod2/position"]:
        stats_match(f, name, f["trajectories/" + name][()], ok)
    # energy of the point masses (0.5 m rods, pivot at y = 1.1): conserved along each run
    g = 9.80665
    m2 = p[:, 1]
    t1, t2 = q[:, :, 0], q[:, :, 0] + q[:, :, 1]
    w1, w2 = u[:, :, 0], u[:, :, 0] + u[:, :, 1]
    L = 0.5
    x1, y1 = L * np.sin(t1), 1.1 - L * np.cos(t1)
    vx1, vy1 = L * np.cos(t1) * w1, L * np.sin(t1) * w1
    vx2, vy2 = vx1 + L * np.cos(t2) * w2, vy1 + L * np.sin(t2) * w2
    y2 = y1 - L * np.cos(t2)
    E = (0.5 * m1[:, None] * (vx1**2 + vy1**2) + 0.5 * m2[:, None] * (vx2**2 + vy2**2)
         + g * (m1[:, None] * y1 + m2[:, None] * y2))
    drift = np.max(np.abs(E - E[:, :1]) / np.maximum(np.abs(E[:, :1]), 1))
    print(f"energy drift along the stored trajectories: {drift:.2e}")
    check(drift < 1e-3, f"energy conserved along the stored trajectories ({drift:.2e})")


def failing(f):
    p = f["parameters"][()][:, 0]
    code = f["status/code"][()]
    msgs = [m.decode() if isinstance(m, bytes) else m for m in f["status/message"][()]]
    neg = p < 0
    print(f"{neg.sum()} of {len(p)} samples have a negative mass; {np.sum(code != 0)} failed")
    check(neg.sum() > 0, "some masses are negative")
    check(np.array_equal(code != 0, neg), "exactly the samples with a negative mass failed")
    check(all(("rod1" in msgs[i] and "mass" in msgs[i]) for i in np.where(neg)[0]),
          "the failure messages name the body and the mass")
    check(all(msgs[i] == "" for i in np.where(~neg)[0]), "successful samples have no message")
    check(np.all(f["status/done"][()] == 1), "every sample is present")
    q = f["trajectories/q"][()]
    check(np.all(np.isnan(q[neg])), "failed samples have NaN trajectories")
    check(np.all(np.isfinite(q[~neg])), "other samples are finite")
    check(int(f.attrs["failed_samples"]) == neg.sum(), "failed_samples attribute")
    stats_match(f, "q", q, ~neg)


def export(f, csv_path, sample):
    """`mbstudy export --format csv`: every column equals the file's trajectory component."""
    with open(csv_path) as c:
        header = c.readline().strip().split(",")
        rows = np.array([[float(x) for x in line.split(",")] for line in c if line.strip()])
    check(header[0] == "time", "first column is time")
    check(np.array_equal(rows[:, 0], f["time"][()]), "time column")
    for k, name in enumerate(header[1:], start=1):
        quantity, comp = name.rsplit("/", 1)
        comps = list(f["trajectories/" + quantity + "_components"].asstr()[()])
        want = f["trajectories/" + quantity][sample, :, comps.index(comp)]
        check(np.array_equal(rows[:, k], want), f"column {name}")
    print(f"{len(header)} columns of sample {sample} checked")


def export_sto(f, sto_path, sample):
    """`mbstudy export --format sto`: coordinates and speeds under OpenSim 4's state paths
    (/jointset/<joint>/<coordinate>/value, /speed), every column equal to the file's component
    (to the storage file's printed digits)."""
    with open(sto_path) as s:
        lines = s.read().splitlines()
    end = lines.index("endheader")
    check("inDegrees=no" in lines[:end], "the states in radians")
    header = lines[end + 1].split("\t")
    rows = np.array([[float(x) for x in line.split("\t")] for line in lines[end + 2:] if line])
    check(header[0] == "time", "first column is time")
    seen = {"q": 0, "u": 0}
    for k, name in enumerate(header[1:], start=1):
        if name.startswith("/jointset/"):
            _, _, joint, coord, what = name.split("/")
            quantity = {"value": "q", "speed": "u"}[what]
            comp = coord
            seen[quantity] += 1
        else:
            quantity, comp = name.rsplit("/", 1)
            check(quantity not in ("q", "u"), f"column {name}: not a state path")
        comps = list(f["trajectories/" + quantity + "_components"].asstr()[()])
        want = f["trajectories/" + quantity][sample, :, comps.index(comp)]
        check(np.allclose(rows[:, k], want, rtol=1e-14, atol=1e-300), f"column {name}")
    for quantity in ("q", "u"):
        if "trajectories/" + quantity in f:
            n = len(f["trajectories/" + quantity + "_components"])
            check(seen[quantity] == n, f"{quantity}: {seen[quantity]} state paths of {n}")
    print(f"{len(header)} columns of sample {sample} checked, {seen} as state paths")


def bouncing(f):
    """bouncing_block_study.yaml: contact and reaction outputs obey the physics."""
    code = f["status/code"][()]
    check(np.all(code == 0), f"all samples succeeded ({code})")
    c = f["trajectories/contacts/foot_contact_force"][()]
    comps = list(f["trajectories/contacts/foot_contact_force_components"].asstr()[()])
    fy = c[:, :, comps.index("platform-heel/fy")]
    depth = c[:, :, comps.index("platform-heel/depth")]
    ok = np.isfinite(depth)
    check(np.all(depth[ok] >= 0), "penetration never negative")
    check(np.all(fy[ok][depth[ok] == 0] == 0), "no force when apart")
    check(np.all(fy[ok][depth[ok] > 0] >= 0), "the floor pushes the heel up, never pulls")
    check(np.any(depth[ok] > 0), "the heel touches the floor")
    # the point-on-line constraints only hold the block and foot on the y axis: no vertical
    # reaction
    for name in ("lock_block_to_y_axis", "lock_foot_to_y_axis"):
        r = f["trajectories/reactions/" + name][()]
        fyr = r[:, :, 4]
        scale = max(np.nanmax(np.abs(r[:, :, 3:])), 1e-300)
        check(np.nanmax(np.abs(fyr)) <= 1e-9 * scale,
              f"{name}: no reaction along the line ({np.nanmax(np.abs(fyr)):.2e} of {scale:.2e})")
    # heavy blocks (2000 kg) sink below 0.3 m and end at the event; light ones never do
    mass = f["parameters"][:, 2]
    t_low = f["scalars/low_time"][()]
    lowest = f["scalars/lowest"][()]
    check(np.all(np.isnan(t_low[mass == 20])), "20 kg blocks stay above 0.3 m")
    heavy = mass == 2000
    check(np.any(heavy) and np.all(np.isfinite(t_low[heavy])), "2000 kg blocks sink below 0.3 m")
    q = f["trajectories/q"][()]
    frames_after = np.isnan(q[heavy][:, -1, 0])
    check(np.all(frames_after), "a terminating event ends the trajectory (NaN frames after it)")
    check(np.all(lowest[heavy] > 0.3 - 0.05), "the last frame before the event is near 0.3 m")
    print(f"{heavy.sum()} heavy samples ended at t = {np.round(t_low[heavy], 3)}")


def main():
    if len(sys.argv) == 5 and sys.argv[1] in ("export", "export_sto"):
        with h5py.File(sys.argv[2], "r") as f:
            (export if sys.argv[1] == "export" else export_sto)(f, sys.argv[3],
                                                                int(sys.argv[4]))
        print("PASS" if not problems else f"{len(problems)} problems")
        return 1 if problems else 0
    modes = {"pendulum": pendulum, "failing": failing, "bouncing": bouncing}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        print(__doc__)
        return 2
    with h5py.File(sys.argv[2], "r") as f:
        modes[sys.argv[1]](f)
    print("PASS" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
