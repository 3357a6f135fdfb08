"""A study's result file (io/FORMAT.md) as pandas and numpy: mbstudy.open(path)."""
import builtins
import os
import struct

import h5py
import numpy as np
import pandas as pd

_DRIVER_GROUPS = ("posture", "sensitivity", "fit", "calibration", "cohort", "pipeline")


def _text(v):
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("utf-8", errors="replace")
    if isinstance(v, np.ndarray) and v.dtype.kind in "SO":
        return [_text(x) for x in v.tolist()]
    if isinstance(v, np.ndarray):
        return v.tolist() if v.ndim else v.item()
    return v


def _strings(ds):
    return [_text(x) for x in ds[()].tolist()]


class Trajectory:
    """A trajectory quantity: values samples x frames x components (``dims``), with the sample
    indices, the frames' times and the components' names as its axes, and its units:
    ``units`` for the whole quantity (e.g. "rad or m" for q) and ``component_units``, one per
    component (e.g. "rad" for a hip angle, "m" for the pelvis' height)."""

    dims = ("sample", "frame", "component")

    def __init__(self, name, values, samples, time, components, units, time_units,
                 component_units=None):
        self.name = name
        self.values = values
        self.samples = samples
        self.time = time
        self.components = components
        self.units = units
        self.time_units = time_units
        self.component_units = (list(component_units) if component_units is not None
                                else [units] * len(components))

    @property
    def shape(self):
        return self.values.shape

    @property
    def coords(self):
        """the axes: {"sample": indices, "frame": times, "component": names}"""
        return {"sample": self.samples, "frame": self.time, "component": self.components}

    def __array__(self, dtype=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def component(self, name):
        """samples x frames of one component"""
        try:
            return self.values[:, :, self.components.index(name)]
        except ValueError:
            raise KeyError(f"{self.name}: no component {name!r} ({', '.join(self.components)})"
                           ) from None

    def sample(self, i):
        """one sample as a DataFrame: index the time, one column per component"""
        row = int(np.searchsorted(self.samples, i))
        if row >= len(self.samples) or self.samples[row] != i:
            raise KeyError(f"{self.name}: no sample {i}")
        df = pd.DataFrame(self.values[row], index=pd.Index(self.time, name="time"),
                          columns=self.components)
        df.attrs["units"] = dict(zip(self.components, self.component_units))
        return df

    def __repr__(self):
        return (f"Trajectory({self.name!r}, {self.shape[0]} samples x {self.shape[1]} frames x "
                f"{self.shape[2]} components, units {self.units!r})")


class Study:
    """A study's results. ``complete`` is False for a study stopped part way (what was merged
    before the stop, from ``<output>.parts/result.h5``) or still running (then only what the
    journals say: each sample's status, parameters and scalars, unnamed, and no trajectories;
    ``running`` is True)."""

    def __init__(self, path, file=None, complete=True, note="", journal=None):
        self.path = path
        self.file = file
        self.complete = complete
        self.running = journal is not None
        self.note = note
        self._journal = journal

    # -- context manager
    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "complete" if self.complete else ("running" if self.running else "incomplete")
        return f"<mbstudy.Study {self.path!r} ({state}, {len(self.samples)} samples)>"

    # -- provenance
    @property
    def provenance(self):
        """the root attributes: creator, model, spec, seed, integrator, started_last_run, ..."""
        if self.file is None:
            return {}
        return {k: _text(v) for k, v in self.file.attrs.items()}

    @property
    def model_document(self):
        """the OpenSim document the study simulated when the file keeps it (a posture study's
        model on the platform, /model/document) as str, else None"""
        if self.file is None or "model/document" not in self.file:
            return None
        return self.file["model/document"].asstr()[()]

    # -- samples
    @property
    def parameters(self):
        if self.file is None:
            n = self._journal["nparams"] if self._journal else 0
            return [f"p{k}" for k in range(n)]
        return _strings(self.file["parameter_names"])

    @property
    def scalars(self):
        if self.file is None:
            n = self._journal["nscalars"] if self._journal else 0
            return [f"s{k}" for k in range(n)]
        out = []
        if "scalars" in self.file:
            self.file["scalars"].visititems(
                lambda name, obj: out.append(name) if isinstance(obj, h5py.Dataset) else None)
        return out

    @property
    def samples(self):
        """One row per sample (index ``sample``): the parameters, ``done`` (written),
        ``status`` (0 ok, else the error's code), ``message``, ``wall_time``, ``steps`` and the
        scalars. ``df.attrs["units"]`` maps columns to units."""
        if self.file is None:
            return self._journal_samples()
        f = self.file
        idx = pd.Index(f["samples"][()], name="sample")
        cols, units = {}, {}
        pnames = self.parameters
        P = f["parameters"][()]
        punits = f["parameters"].attrs.get("units", [])
        punits = [_text(u) for u in punits] if len(pnames) else []
        for k, n in enumerate(pnames):
            cols[n] = P[:, k]
            units[n] = punits[k] if k < len(punits) else ""
        cols["done"] = f["status/done"][()].astype(bool)
        cols["status"] = f["status/code"][()]
        cols["message"] = _strings(f["status/message"])
        cols["wall_time"] = f["status/wall_time"][()]
        units["wall_time"] = "s"
        if "status/steps" in f:
            cols["steps"] = f["status/steps"][()]
        for n in self.scalars:
            d = f["scalars/" + n]
            cols[n] = d[()]
            units[n] = _text(d.attrs.get("units", ""))
        df = pd.DataFrame(cols, index=idx)
        df.attrs["units"] = units
        return df

    @property
    def ok(self):
        """which samples were written and succeeded (a boolean array in sample order)"""
        s = self.samples
        return (s["done"] & (s["status"] == 0)).to_numpy()

    # -- trajectories
    @property
    def time(self):
        return self.file["time"][()] if self.file is not None else np.zeros(0)

    @property
    def time_units(self):
        return _text(self.file["time"].attrs.get("units", "s")) if self.file is not None else "s"

    @property
    def trajectories(self):
        if self.file is None or "trajectories" not in self.file:
            return []
        out = []

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and not name.endswith("_components"):
                out.append(name)

        self.file["trajectories"].visititems(visit)
        return out

    def trajectory(self, name):
        if self.file is None:
            raise KeyError(f"{self.path}: the study is running: no trajectories until it stops")
        if name not in self.trajectories:
            raise KeyError(f"{self.path}: no trajectory {name!r} ({', '.join(self.trajectories)})")
        d = self.file["trajectories/" + name]
        c = self.file["trajectories/" + name + "_components"]
        cu = c.attrs.get("units")
        return Trajectory(name, d[()], self.file["samples"][()], self.time, _strings(c),
                          _text(d.attrs.get("units", "")), self.time_units,
                          None if cu is None else [_text(u) for u in cu])

    # -- the study type's own results
    @property
    def results(self):
        """The study type's own groups: ``posture`` (a DataFrame, one row per grid cell),
        ``sensitivity`` (method, parameter names and each scalar's indices), and ``fit``,
        ``calibration``, ``cohort``, ``pipeline`` as nested dicts of arrays (attributes under
        ``"attrs"``)."""
        out = {}
        if self.file is None:
            return out
        for g in _DRIVER_GROUPS:
            if g not in self.file:
                continue
            if g == "posture":
                out[g] = self._posture()
            else:
                out[g] = _group_dict(self.file[g])
        return out

    def _posture(self):
        g = self.file["posture"]
        modes = _strings(g["mode"])
        axes = [modes, g["knee_flexion"][()], g["direction"][()], g["magnitude"][()]]
        grid = np.meshgrid(*[np.arange(len(a)) for a in axes], indexing="ij")
        rows = {"mode": [modes[i] for i in grid[0].ravel()],
                "knee_flexion": axes[1][grid[1].ravel()],
                "direction": axes[2][grid[2].ravel()],
                "magnitude": axes[3][grid[3].ravel()],
                "stability_index": g["stability_index"][()].ravel(),
                "time_to_fall": g["time_to_fall"][()].ravel(),
                "sample": g["samples"][()].ravel()}
        df = pd.DataFrame(rows)
        df.attrs["units"] = {"knee_flexion": "deg", "direction": "deg", "magnitude": "m",
                             "stability_index": "1", "time_to_fall": "s"}
        return df

    # -- a running study: the journals
    def _journal_samples(self):
        j = self._journal or {"records": [], "nparams": 0, "nscalars": 0}
        recs = sorted(j["records"].values(), key=lambda r: r["index"]) if j["records"] else []
        cols = {"done": [True] * len(recs), "status": [r["status"] for r in recs],
                "message": [r["message"] for r in recs], "wall_time": [r["wall"] for r in recs],
                "steps": [r["steps"] for r in recs]}
        for k in range(j["nparams"]):
            cols[f"p{k}"] = [r["params"][k] for r in recs]
        for k in range(j["nscalars"]):
            cols[f"s{k}"] = [r["scalars"][k] for r in recs]
        df = pd.DataFrame(cols, index=pd.Index([r["index"] for r in recs], name="sample"))
        df.attrs["units"] = {"wall_time": "s"}
        return df


def _group_dict(g):
    out = {"attrs": {k: _text(v) for k, v in g.attrs.items()}}
    for k, v in g.items():
        if isinstance(v, h5py.Group):
            out[k] = _group_dict(v)
        else:
            out[k] = _text(v[()]) if v.dtype.kind in "SO" else v[()]
    return out


_FILE_MAGICS = (b"MBSJRNL3", b"MBSJRNL2")
# format 3: record magic (8), payload length (8), header checksum (4), payload, checksum (4)
_RECORD_MAGIC3 = bytes([0xE5]) + b"MBSrec" + bytes([0x1F])
# format 2: record magic (4), length of payload and checksum (8), payload, checksum (4)
_RECORD_MAGIC2 = 0x5253424D


def _parse_payload(data, p, np_, nt, ns):
    index, status, frames, wall, steps, msglen = struct.unpack_from("<qiidqI", data, p)
    p += 8 + 4 + 4 + 8 + 8 + 4
    message = data[p:p + msglen].decode("utf-8", errors="replace")
    p += msglen
    params = struct.unpack_from(f"<{np_}d", data, p)
    p += 8 * np_ + 8 * nt
    scalars = struct.unpack_from(f"<{ns}d", data, p)
    return {"index": index, "status": status, "frames": frames, "wall": wall, "steps": steps,
            "message": message, "params": params, "scalars": scalars}


def _merged_count(parts):
    """the samples a running study has merged into its result file (`<parts>/merged`), 0"""
    try:
        with builtins.open(os.path.join(parts, "merged")) as f:
            for line in f:
                if line.startswith("samples "):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _read_journals(parts):
    """every whole record of the journals in `parts` (each sample once; a damaged record of
    format 3 is skipped as mbstudy does, by looking for the next record)"""
    records, nparams, nscalars = {}, 0, 0
    for name in sorted(os.listdir(parts)):
        if not (name.startswith("j") and name.endswith(".bin")):
            continue
        with builtins.open(os.path.join(parts, name), "rb") as f:
            data = f.read()
        if len(data) < 32 or data[:8] not in _FILE_MAGICS:
            continue
        v3 = data[:8] == _FILE_MAGICS[0]
        _, np_, nt, ns = struct.unpack_from("<QiqI", data, 8)
        nparams, nscalars = np_, ns
        pos = 32
        while True:
            if v3:
                if pos + 20 > len(data):
                    break
                if data[pos:pos + 8] != _RECORD_MAGIC3:
                    pos = data.find(_RECORD_MAGIC3, pos + 1)
                    if pos < 0:
                        break
                    continue
                (length,) = struct.unpack_from("<Q", data, pos + 8)
                end = pos + 20 + length + 4
                if end > len(data) or length < 36:
                    pos = data.find(_RECORD_MAGIC3, pos + 1)
                    if pos < 0:
                        break
                    continue
                try:
                    rec = _parse_payload(data, pos + 20, np_, nt, ns)
                except struct.error:
                    pos = data.find(_RECORD_MAGIC3, pos + 1)
                    if pos < 0:
                        break
                    continue
                records.setdefault(rec["index"], rec)
                pos = end
            else:
                if pos + 12 > len(data):
                    break
                magic, length = struct.unpack_from("<IQ", data, pos)
                if magic != _RECORD_MAGIC2 or pos + 12 + length > len(data):
                    break
                rec = _parse_payload(data, pos + 12, np_, nt, ns)
                records.setdefault(rec["index"], rec)
                pos += 12 + length
    return {"records": records, "nparams": nparams, "nscalars": nscalars}


def open(path):
    """A study's results: the result file; for a study stopped part way, what was merged
    before the stop (complete False); for one still running, what its journals hold
    (running True)."""
    path = os.fspath(path)
    parts = path + ".parts"
    if os.path.exists(path):
        return Study(path, h5py.File(path, "r"))
    partial = os.path.join(parts, "result.h5")
    if os.path.exists(partial):
        try:
            f = h5py.File(partial, "r")
        except OSError:  # being written by the running study
            f = None
        if f is not None:
            note = _text(f.attrs.get("incomplete", "")) or "incomplete"
            return Study(path, f, complete=False, note=note)
    if os.path.isdir(parts):
        note = ("running (or stopped before any sample was merged): the journals' records")
        merged = _merged_count(parts)
        if merged:
            note = (f"running: samples 0 .. {merged - 1} are merged into the result file (their "
                    f"journals deleted; readable when the run ends) and here are the journals' "
                    f"records of the others")
        return Study(path, None, complete=False, note=note, journal=_read_journals(parts))
    raise FileNotFoundError(f"{path}: no result file and no journals ({parts})")
