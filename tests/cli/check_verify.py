#!/usr/bin/python3
"""Damaged result files are detected, never read as wrong values (io/FORMAT.md, "Checksums").

A small Monte Carlo study of the built-in double pendulum is run; then:
- every chunked dataset of its file carries HDF5's Fletcher32 checksum, the compression is as
  the `compression` attribute says, and h5py reads the file;
- the values are unchanged by the filter: `export --sample K --format csv` gives, bit for bit,
  what h5py reads from the same file;
- `mbstudy verify` of the file exits 0 and says "all checksums good" with its sample counts;
- 8 bytes flipped inside the chunk of /trajectories/q holding sample K (in a copy): `verify`
  exits 1 naming /trajectories/q (and no other dataset), `export --sample K` (csv and sto) exits
  non-zero naming the file and /trajectories/q, with no values written;
- `inspect` reads no trajectory (only their shapes), so 8 bytes are flipped inside the chunk of
  /status/wall_time, which it reads: `inspect` exits non-zero naming the file and the dataset;
- a copy whose bookkeeping is wrong but whose checksums are good (rewritten through h5py):
  `verify` exits 1 and names each problem;
- a study with failed samples: `verify` exits 0 and counts them as h5py does;
- `verify --help`, `verify` without a file (exit 2), of a missing file and of a file that is not
  HDF5 (exit 1), and `mbstudy help` listing verify.

usage: check_verify.py MBSTUDY PENDULUM_SPEC FAILING_SPEC OUTDIR"""
import math
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: /usr/bin/python3 cannot import h5py and numpy ({e})")
    sys.exit(77)

problems = []
SAMPLE = 7


def check(cond, what):
    if not cond:
        problems.append(what)
        print("FAIL:", what)


def run(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def flip(src, dst, dataset, sample):
    """Copy src to dst with 8 bytes XORed with 0xA5 in the middle of the chunk of `dataset` that
    holds `sample` (XOR with 0xFF could turn a 0x0000 word into 0xFFFF, which Fletcher's sums
    modulo 65535 cannot tell apart)."""
    with h5py.File(src, "r") as f:
        ds = f[dataset]
        info = None
        for i in range(ds.id.get_num_chunks()):
            c = ds.id.get_chunk_info(i)
            if c.chunk_offset[0] <= sample < c.chunk_offset[0] + ds.chunks[0]:
                info = c
        if info is None:
            sys.exit(f"{src}: no chunk of {dataset} holds sample {sample}")
    shutil.copyfile(src, dst)
    at = info.byte_offset + info.size // 2 - 4
    with open(dst, "r+b") as h:
        h.seek(at)
        old = h.read(8)
        h.seek(at)
        h.write(bytes(b ^ 0xA5 for b in old))
    print(f"{dst}: 8 bytes flipped at {at} in the chunk of {dataset} at {info.chunk_offset} "
          f"({info.size} bytes at {info.byte_offset})")


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def main():
    mbs, spec, failing_spec, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    good = os.path.join(out, "pendulum.h5")
    rc, so, se = run(mbs, "run", spec, "--force", "--quiet", "--output", good)
    if rc:
        sys.exit(f"the study failed (exit {rc}): {se}")

    # the file: checksums on every chunked dataset, compression as before, h5py reads it
    with h5py.File(good, "r") as f:
        chunked = []
        f.visititems(lambda n, o: chunked.append(n) if isinstance(o, h5py.Dataset)
                     and o.chunks else None)
        for must in ["samples", "parameters", "status/code", "status/done", "status/message",
                     "status/wall_time", "status/steps", "scalars/q1_final", "trajectories/q",
                     "trajectories/u", "trajectories/com"]:
            check(must in chunked, f"/{must} is chunked (it can carry a checksum)")
        for n in chunked:
            ds = f[n]
            check(ds.fletcher32, f"/{n}: Fletcher32 checksum")
            if n.startswith("trajectories/"):
                packed = ds.attrs["compression"].decode().startswith("shuffle + deflate")
                check(ds.compression == ("gzip" if packed else None) and ds.shuffle == packed,
                      f"/{n}: compression {ds.compression} as its attribute says")
            else:
                check(ds.compression == "gzip" and ds.shuffle, f"/{n}: shuffle + deflate")
        q = f["trajectories/q"][...]
        check(q.shape[0] == 60 and not np.isnan(q[SAMPLE]).all(), "sample values readable")
        want = {}
        for name in ["q", "u", "com", "bodies/rod2/position", "bodies/rod2/orientation"]:
            comps = f[f"trajectories/{name}_components"].asstr()[...]
            v = f[f"trajectories/{name}"][SAMPLE]
            for k, c in enumerate(comps):
                want[f"{name}/{c}"] = v[:, k]
        want["time"] = f["time"][...]

    # the values unchanged: export's CSV = h5py's read of the same file, bit for bit
    rc, so, se = run(mbs, "export", good, "--sample", str(SAMPLE), "--format", "csv")
    check(rc == 0, f"export of the whole file: exit {rc}: {se}")
    lines = so.splitlines()
    if lines:
        labels = lines[0].split(",")
        rows = [[float(x) for x in l.split(",")] for l in lines[1:]]
        check(sorted(labels) == sorted(want), f"export columns {labels}")
        check(len(rows) == len(want["time"]), f"export: {len(rows)} rows")
        bad = [(lab, i) for j, lab in enumerate(labels) if lab in want
               for i, r in enumerate(rows) if not same(r[j], float(want[lab][i]))]
        check(not bad, f"export differs from h5py at {bad[:5]}")

    # verify: the whole file
    rc, so, se = run(mbs, "verify", good)
    print(so + se, end="")
    check(rc == 0, f"verify of the whole file: exit {rc}")
    check("all checksums good; 60 samples, 60 done, 0 failed" in so,
          "verify's summary of the whole file")

    # 8 bytes flipped in the chunk of /trajectories/q that holds the exported sample
    bad_q = os.path.join(out, "pendulum_damaged_q.h5")
    flip(good, bad_q, "trajectories/q", SAMPLE)
    rc, so, se = run(mbs, "verify", bad_q)
    print(so + se, end="")
    check(rc == 1, f"verify of the damaged file: exit {rc}, not 1")
    check(f"{bad_q}: /trajectories/q: checksum mismatch" in so,
          "verify names /trajectories/q and the checksum")
    check("1 damaged dataset: /trajectories/q;" in so, "verify's summary: only /trajectories/q")
    rc, so, se = run(mbs, "export", bad_q, "--sample", str(SAMPLE), "--format", "csv")
    print(se, end="")
    check(rc != 0, f"export --format csv of the damaged sample: exit {rc}")
    check(f"{bad_q}: /trajectories/q: checksum mismatch (the file is damaged)" in se,
          "export names the file, /trajectories/q and the checksum")
    check(so == "", f"export wrote values of a damaged sample: {so[:200]!r}")
    sto = os.path.join(out, "damaged_sample.sto")
    if os.path.exists(sto):
        os.remove(sto)
    rc, so, se = run(mbs, "export", bad_q, "--sample", str(SAMPLE), "--format", "sto",
                     "--out", sto)
    check(rc != 0 and "/trajectories/q" in se and not os.path.exists(sto),
          f"export --format sto of the damaged sample: exit {rc}, {se!r}")

    # inspect reads /status (not the trajectories): damage /status/wall_time
    bad_w = os.path.join(out, "pendulum_damaged_wall_time.h5")
    flip(good, bad_w, "status/wall_time", SAMPLE)
    rc, so, se = run(mbs, "inspect", bad_w)
    print(se, end="")
    check(rc != 0, f"inspect of a damaged /status/wall_time: exit {rc}")
    check(f"{bad_w}: /status/wall_time: checksum mismatch (the file is damaged)" in se,
          "inspect names the file, /status/wall_time and the checksum")
    rc, so, se = run(mbs, "verify", bad_w)
    check(rc == 1 and "1 damaged dataset: /status/wall_time;" in so,
          f"verify of a damaged /status/wall_time: exit {rc}: {so}")

    # bookkeeping that contradicts itself, checksums good (h5py rewrites them)
    book = os.path.join(out, "pendulum_bookkeeping.h5")
    shutil.copyfile(good, book)
    with h5py.File(book, "r+") as f:
        f["status/done"][3] = 2
        f["status/done"][4] = 0
        f["status/code"][4] = -105
        f["samples"][5] = 50
        f.attrs.modify("samples", np.bytes_("61"))
        c = f["statistics/q/count"][...]
        c[0, 0] = 1000
        f["statistics/q/count"][...] = c
    rc, so, se = run(mbs, "verify", book)
    print(so + se, end="")
    check(rc == 1, f"verify of wrong bookkeeping: exit {rc}")
    for line in ["/samples: 1 value is not its index (first: /samples[5] = 50)",
                 "/status/done: 1 value is neither 0 nor 1 (first: sample 3: 2)",
                 "/status/code: 1 sample never written (done = 0) has a status (first: "
                 "sample 4: -105)",
                 "the root attribute 'samples' is 61, /samples holds 60",
                 "/statistics: samples_used is 60, but only 58 samples were written with "
                 "status 0",
                 "/statistics/q/count: 1 count is outside 0 .. 60",
                 "all checksums good; 60 samples, 58 done, 0 failed; 6 bookkeeping problems"]:
        check(line in so, f"verify says '{line}'")

    # failed samples are counted, not problems
    fail = os.path.join(out, "failing.h5")
    rc, so, se = run(mbs, "run", failing_spec, "--force", "--quiet", "--allow-failures",
                     "--output", fail)
    check(rc == 0, f"the failing study: exit {rc}: {se[-300:]}")
    with h5py.File(fail, "r") as f:
        done, code = f["status/done"][...], f["status/code"][...]
        nfail = int(((done == 1) & (code != 0)).sum())
    rc, so, se = run(mbs, "verify", fail)
    print(so, end="")
    check(rc == 0 and nfail > 0 and
          f"all checksums good; 200 samples, 200 done, {nfail} failed" in so,
          f"verify of a study with {nfail} failed samples: exit {rc}")

    # usage
    rc, so, se = run(mbs, "verify", "--help")
    check(rc == 0 and "usage" in so.lower() and "verify FILE.h5" in so, f"verify --help: {rc}")
    rc, so, se = run(mbs, "verify")
    check(rc == 2 and "usage: mbstudy verify" in se, f"verify without a file: exit {rc}")
    rc, so, se = run(mbs, "verify", os.path.join(out, "no_such_file.h5"))
    check(rc == 1 and "no such file" in se, f"verify of a missing file: exit {rc}: {se}")
    rc, so, se = run(mbs, "verify", spec)
    check(rc == 1 and "cannot be opened as an HDF5 file" in so,
          f"verify of a file that is not HDF5: exit {rc}: {so}{se}")
    rc, so, se = run(mbs, "help")
    check(rc == 0 and "  verify FILE.h5" in so, "mbstudy help lists verify")

    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
