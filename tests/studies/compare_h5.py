#!/usr/bin/python3
"""Compare two mbstudy result files dataset by dataset, bit for bit.

usage: compare_h5.py A.h5 B.h5 [--ignore NAME ...] [--own-name] [--attributes]

Every dataset of A must exist in B (and the other way round) with the same shape, type and
bytes (NaN payloads included); datasets named with --ignore (e.g. /status/wall_time, which
measures the machine) are skipped. With --own-name, strings that name their own result file
(a pipeline's failure messages point to A.h5.pipeline/...) are compared with A's file name
read as B's. With --attributes, every attribute of every group and dataset must be the same too
(names, types and values), except those named with --ignore as "/path@attribute" (e.g.
"/@started_last_run"). Exits 0 when identical, 1 with the differences listed, 77
when h5py is not available (the test is then skipped).
"""
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: /usr/bin/python3 cannot import h5py and numpy ({e})")
    sys.exit(77)


def datasets(f):
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out["/" + name] = obj

    f.visititems(visit)
    return out


def objects(f):
    out = {"/": f}
    f.visititems(lambda name, obj: out.__setitem__("/" + name, obj))
    return out


def same_value(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind in "fc":
            return a.dtype == b.dtype and a.tobytes() == b.tobytes()
        return a.shape == b.shape and a.tolist() == b.tolist()
    return type(a) is type(b) and a == b


def compare_attributes(fa, fb, ignore):
    oa, ob = objects(fa), objects(fb)
    problems = []
    for name in sorted(set(oa) & set(ob)):
        aa, ab = oa[name].attrs, ob[name].attrs
        for key in sorted(set(aa) | set(ab)):
            where = f"{name}@{key}"
            if where in ignore or (name == "/" and f"/@{key}" in ignore):
                continue
            if key not in aa or key not in ab:
                problems.append(f"{where}: only in {'B' if key not in aa else 'A'}")
            elif key in ("DIMENSION_LIST", "REFERENCE_LIST"):
                continue  # object references: the dimension scales, compared as datasets
            elif aa.get_id(key).dtype != ab.get_id(key).dtype:
                problems.append(f"{where}: types differ")
            elif not same_value(aa[key], ab[key]):
                problems.append(f"{where}: values differ ({aa[key]!r} and {ab[key]!r})")
    return problems


def main():
    args = sys.argv[1:]
    ignore = set()
    files = []
    own_name = False
    attributes = False
    i = 0
    while i < len(args):
        if args[i] == "--own-name":
            own_name = True
            i += 1
        elif args[i] == "--attributes":
            attributes = True
            i += 1
        elif args[i] == "--ignore":
            ignore.add(args[i + 1])
            i += 2
        else:
            files.append(args[i])
            i += 1
    if len(files) != 2:
        print(__doc__)
        return 2
    with h5py.File(files[0], "r") as fa, h5py.File(files[1], "r") as fb:
        da, db = datasets(fa), datasets(fb)
        problems = []
        for name in sorted(set(da) | set(db)):
            if name in ignore:
                continue
            if name not in da or name not in db:
                problems.append(f"{name}: only in {'B' if name not in da else 'A'}")
                continue
            a, b = da[name][()], db[name][()]
            if getattr(a, "shape", None) != getattr(b, "shape", None):
                problems.append(f"{name}: shapes {np.shape(a)} and {np.shape(b)}")
                continue
            if isinstance(a, np.ndarray) and a.dtype.kind in "fiub":
                if a.dtype != b.dtype or a.tobytes() != b.tobytes():
                    diff = np.nanmax(np.abs(a.astype(float) - b.astype(float))) if a.size else 0
                    problems.append(f"{name}: values differ (largest difference {diff})")
            elif own_name and isinstance(a, np.ndarray) and a.dtype.kind in "SO":
                na = os.path.basename(files[0]).encode()
                nb = os.path.basename(files[1]).encode()
                text = [x if isinstance(x, bytes) else str(x).encode() for x in a.ravel()]
                other = [x if isinstance(x, bytes) else str(x).encode() for x in b.ravel()]
                if [x.replace(na, nb) for x in text] != other:
                    problems.append(f"{name}: values differ")
            elif not np.array_equal(np.asarray(a), np.asarray(b)):
                problems.append(f"{name}: values differ")
        if attributes:
            problems += compare_attributes(fa, fb, ignore)
        for p in problems:
            print(p)
        n = len([k for k in da if k not in ignore])
        print(f"{files[0]} and {files[1]}: {n} datasets compared, {len(problems)} differ")
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
