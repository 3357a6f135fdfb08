#!/usr/bin/python3
"""Reads a study file written by `test_store --example FILE` with h5py and checks, as a Python
user would see it (layout in io/FORMAT.md):
  - dimension scales attached to every axis (dataset.dims[i][0].name) with their labels;
  - strings (attributes, names, units, messages) decode as UTF-8;
  - parameters, status and trajectories: shapes, NaN for frames not reached and samples never
    written;
  - /statistics against numpy over the samples with status 0 that were written: nanmean,
    nanstd(ddof=1) and nanpercentile(method='linear'), NaN values skipped, counts.
Exits 77 (CTest's skip code) with the reason when h5py or numpy cannot be imported."""
import sys
import warnings

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: {sys.executable} cannot import h5py and numpy ({e})")
    sys.exit(77)

checks = 0
failures = 0


def expect(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}", file=sys.stderr)


def text(value):
    """a fixed-length string attribute as str (h5py returns numpy.bytes_)"""
    return value.decode("utf-8") if isinstance(value, (bytes, np.bytes_)) else str(value)


def scale(ds, axis):
    return ds.dims[axis][0].name if len(ds.dims[axis]) else None


def close(a, b, what, rtol=1e-12):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=1e-300, equal_nan=True)
    if not ok:
        bad = np.argwhere(~np.isclose(a, b, rtol=rtol, atol=1e-300, equal_nan=True)) \
            if a.shape == b.shape else "shape"
        print(f"  {what}: differs at {bad[:5] if not isinstance(bad, str) else bad}",
              file=sys.stderr)
    expect(ok, what)


def main(path):
    f = h5py.File(path, "r")
    expect(text(f.attrs["mbstudy_format"]) == "1", "mbstudy_format")
    expect(text(f.attrs["author"]) == "J\u00f6rg M\u00fcller", "UTF-8 attribute")
    expect(text(f.attrs["empty"]) == "", "empty attribute")
    expect(text(f.attrs["seed"]) == "43", "attribute replaced at the end")

    samples = f["samples"][...]
    ns = samples.size
    expect(np.array_equal(samples, np.arange(ns)), "/samples is 0..n-1")
    time = f["time"]
    nf = time.size
    # units: variable-length UTF-8, which h5py gives as str (io/FORMAT.md, Strings)
    expect(isinstance(time.attrs["units"], str) and time.attrs["units"] == "s",
           f"/time units {time.attrs['units']!r} (not a str)")
    names = f["parameter_names"].asstr()[...]
    expect(list(names) == ["/bodyset/rod1/mass", "/bodyset/rod1/length",
                           "/forceset/spring/stiffness"], "parameter names")

    p = f["parameters"]
    expect(p.shape == (ns, 3), "parameters shape")
    expect(scale(p, 0) == "/samples" and scale(p, 1) == "/parameter_names", "parameter scales")
    expect(p.dims[0].label == "sample" and p.dims[1].label == "parameter", "parameter labels")
    expect(list(p.attrs["units"]) == ["kg", "m", "N/m"] and
           all(isinstance(u, str) for u in p.attrs["units"]), "parameter units (str)")

    code = f["status/code"][...]
    done = f["status/done"][...]
    msg = f["status/message"].asstr()[...]
    for name in ("code", "message", "wall_time", "steps", "done"):
        expect(scale(f["status/" + name], 0) == "/samples", f"/status/{name} scale")
    expect(done.dtype == np.uint8 and code.dtype == np.int32, "status types")
    ok = (done == 1) & (code == 0)
    expect(int(ok.sum()) == int(f["statistics"].attrs["samples_used"]), "samples_used")
    expect(np.all(np.isnan(p[...][done == 0])), "unwritten samples have NaN parameters")
    expect(all(m.startswith("integrator failed") for m in msg[(done == 1) & (code != 0)]),
           "failure messages")
    expect(all(m == "" for m in msg[ok]), "empty messages when ok")
    print(f"{path}: {ns} samples ({int(done.sum())} written, {int(ok.sum())} ok), {nf} frames")

    levels = f["statistics/percentiles"][...]
    expect(scale(f["statistics/percentiles"], 0) is None, "percentiles is itself a scale")

    def walk(group, prefix=""):
        for k, v in group.items():
            if isinstance(v, h5py.Group):
                yield from walk(v, prefix + k + "/")
            elif not k.endswith("_components"):
                yield prefix + k

    quantities = list(walk(f["trajectories"]))
    expect(sorted(quantities) == ["bodies/rod2/position", "q"], f"quantities {quantities}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns, n < 2
        for q in quantities:
            ds = f["trajectories/" + q]
            comps = "/trajectories/" + q + "_components"
            expect(ds.ndim == 3 and ds.shape[:2] == (ns, nf), f"{q} shape")
            expect([scale(ds, i) for i in range(3)] == ["/samples", "/time", comps],
                   f"{q} scales {[scale(ds, i) for i in range(3)]}")
            expect([ds.dims[i].label for i in range(3)] == ["sample", "time", "component"],
                   f"{q} labels")
            how = ds.attrs["compression"].decode()
            packed = how.startswith("shuffle + deflate")
            expect(packed or how.startswith("none"), f"{q} compression attribute '{how}'")
            expect(ds.chunks == (8, nf, ds.shape[2])
                   and ds.compression == ("gzip" if packed else None)
                   and ds.shuffle == packed and ds.fillvalue != ds.fillvalue, f"{q} storage")
            expect(f[comps].size == ds.shape[2], f"{q} component names")
            v = ds[...]
            expect(np.all(np.isnan(v[done == 0])), f"{q}: unwritten samples are NaN")
            x = v[ok]
            st = f["statistics/" + q]
            close(st["count"][...], np.sum(~np.isnan(x), axis=0), f"{q} count")
            close(st["mean"][...], np.nanmean(x, axis=0), f"{q} mean")
            close(st["std"][...], np.nanstd(x, axis=0, ddof=1), f"{q} std")
            close(st["percentile"][...],
                  np.nanpercentile(x, levels, axis=0, method="linear"), f"{q} percentile")
            expect(scale(st["mean"], 0) == "/time" and scale(st["mean"], 1) == comps,
                   f"{q} statistics scales")
            expect([scale(st["percentile"], i) for i in range(3)]
                   == ["/statistics/percentiles", "/time", comps], f"{q} percentile scales")
            # failed samples would change the mean if they had been included
            expect(not np.allclose(np.nanmean(v[(done == 1)], axis=0)[0],
                                   st["mean"][0], equal_nan=True), f"{q}: failures excluded")
        for s in f["scalars"]:
            ds = f["scalars/" + s]
            expect(scale(ds, 0) == "/samples", f"scalar {s} scale")
            x = ds[...][ok]
            st = f["statistics/scalars/" + s]
            close(st["count"][()], np.sum(~np.isnan(x)), f"{s} count")
            close(st["mean"][()], np.nanmean(x), f"{s} mean")
            close(st["std"][()], np.nanstd(x, ddof=1), f"{s} std")
            close(st["percentile"][...], np.nanpercentile(x, levels, method="linear"),
                  f"{s} percentile")
    f.close()
    print(f"check_store: {checks} checks, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: check_store.py FILE.h5", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
