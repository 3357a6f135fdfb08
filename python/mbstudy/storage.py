"""OpenSim storage files (.sto, .mot) as pandas DataFrames.

read_sto gives a DataFrame whose columns are the file's labels ("time" first), with the header in
``df.attrs``: ``name`` (the name line), ``in_degrees`` (bool), ``version`` (1, 3 or 0 when the
file has no version line) and ``header`` (the other ``key=value`` lines, a dict). write_sto
writes a version 1 header as OpenSim 4 does and numbers that read back bit for bit.
"""
import math

import numpy as np
import pandas as pd

_RESERVED = {"version", "nrows", "ncolumns", "indegrees", "datatype", "endheader"}


def _parse_bool(text):
    return text.strip().lower() in ("yes", "true", "1")


def read_sto(path):
    """An OpenSim storage file (header versions 1 and 3, or none) as a DataFrame."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    try:
        end = next(i for i, line in enumerate(lines) if line.strip() == "endheader")
    except StopIteration:
        raise ValueError(f"{path}: no 'endheader' line: not an OpenSim storage file") from None
    name = ""
    header = {}
    version = 0
    in_degrees = None
    for i, line in enumerate(lines[:end]):
        s = line.strip()
        if "=" in s:
            k, v = s.split("=", 1)
            key = k.strip()
            if key.lower() == "version":
                version = int(v)
            elif key.lower() == "indegrees":
                in_degrees = _parse_bool(v)
            elif key.lower() not in _RESERVED:
                header[key] = v.strip()
        elif i == 0:
            name = s
    if in_degrees is None:  # a motion without the line is in degrees, as OpenSim reads it
        in_degrees = path.lower().endswith(".mot") and version < 1
    if end + 1 >= len(lines):
        raise ValueError(f"{path}: no column labels after 'endheader'")
    labels = lines[end + 1].split("\t") if "\t" in lines[end + 1] else lines[end + 1].split()
    rows = []
    for k, line in enumerate(lines[end + 2:], start=end + 3):
        if not line.strip():
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) != len(labels):
            raise ValueError(f"{path}:{k}: {len(fields)} values for {len(labels)} columns")
        try:
            rows.append([float(x) for x in fields])
        except ValueError as e:
            raise ValueError(f"{path}:{k}: {e}") from None
    df = pd.DataFrame(np.array(rows, dtype=float).reshape(len(rows), len(labels)),
                      columns=labels)
    df.attrs.update(name=name, in_degrees=bool(in_degrees), version=version, header=header)
    return df


def _number(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def write_sto(df, path, name=None, in_degrees=None):
    """Write a DataFrame (its first column the time) as an OpenSim storage file, version 1
    header. name and in_degrees default to df.attrs (then "mbstudy" and False)."""
    name = name if name is not None else df.attrs.get("name") or "mbstudy"
    in_degrees = in_degrees if in_degrees is not None else bool(df.attrs.get("in_degrees", False))
    labels = [str(c) for c in df.columns]
    for c in labels:
        if not c or any(ch.isspace() for ch in c):
            raise ValueError(f"column label {c!r} is empty or holds blanks")
    if "\n" in name or "=" in name:
        raise ValueError(f"the name {name!r} cannot be a header line")
    values = df.to_numpy(dtype=float)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{name}\nversion=1\nnRows={len(df)}\nnColumns={len(labels)}\n"
                f"inDegrees={'yes' if in_degrees else 'no'}\n")
        for k, v in (df.attrs.get("header") or {}).items():
            if k.lower() not in _RESERVED and "\n" not in f"{k}{v}":
                f.write(f"{k}={v}\n")
        f.write("endheader\n" + "\t".join(labels) + "\n")
        for row in values:
            f.write("\t".join(_number(x) for x in row) + "\n")
    return path
