#!/usr/bin/python3
"""The batched simulation of a study's samples gives the one-at-a-time result.

usage: check_batched.py MBSTUDY SPEC.yaml OUTDIR batched|one [--threads N] [--why TEXT]

Runs the study twice on one rank, as it comes (samples simulated side by side where the plan
allows it) and with --one-at-a-time, and compares the two result files bit for bit (every
dataset but /status/wall_time, which measures the machine). The root attribute
dynamics_last_run must say which path ran: "batched" for the first run when the expectation is
`batched`, "one sample at a time" (with the reason, containing --why's text when given) when it
is `one`, and "one sample at a time" for the second run always. Exits 0 on success, 1 on a
difference, 77 when h5py is missing.
"""
import os
import subprocess
import sys

try:
    import h5py
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: /usr/bin/python3 cannot import h5py ({e})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    if len(argv) < 4 or argv[3] not in ("batched", "one"):
        print(__doc__)
        return 2
    exe, spec, outdir, expect = argv[:4]
    threads, why = "2", None
    rest = argv[4:]
    while rest:
        if rest[0] == "--threads" and len(rest) > 1:
            threads, rest = rest[1], rest[2:]
        elif rest[0] == "--why" and len(rest) > 1:
            why, rest = rest[1], rest[2:]
        else:
            print(f"unknown argument {rest[0]}")
            return 2
    os.makedirs(outdir, exist_ok=True)
    name = os.path.splitext(os.path.basename(spec))[0]
    a = os.path.join(outdir, f"{name}_batched.h5")
    b = os.path.join(outdir, f"{name}_alone.h5")
    for out, extra in ((a, []), (b, ["--one-at-a-time"])):
        cmd = [exe, "run", spec, "--force", "--quiet", "--allow-failures", "--threads", threads,
               "--output", out]
        p = subprocess.run(cmd + extra, capture_output=True, text=True)
        print("$", " ".join(cmd + extra))
        print(p.stderr.strip())
        if p.returncode != 0:
            print(f"FAIL: exit {p.returncode}")
            return 1
    failures = 0
    with h5py.File(a) as fa, h5py.File(b) as fb:
        da = fa.attrs["dynamics_last_run"]
        db = fb.attrs["dynamics_last_run"]
        da = da.decode() if isinstance(da, bytes) else str(da)
        db = db.decode() if isinstance(db, bytes) else str(db)
        print(f"as it comes:     {da}")
        print(f"--one-at-a-time: {db}")
        if expect == "batched" and not da.startswith("batched"):
            print("FAIL: the study was expected to run batched")
            failures += 1
        if expect == "one" and not da.startswith("one sample at a time"):
            print("FAIL: the study was expected to run one sample at a time")
            failures += 1
        if expect == "one" and why and why not in da:
            print(f"FAIL: the reason should mention '{why}'")
            failures += 1
        if not db.startswith("one sample at a time") or "--one-at-a-time" not in db:
            print("FAIL: --one-at-a-time was not recorded")
            failures += 1
        nfail = int(fa["/status/code"][:].astype(bool).sum())
        print(f"{len(fa['/status/code'])} samples, {nfail} failed")
    p = subprocess.run([sys.executable, os.path.join(HERE, "compare_h5.py"), a, b, "--ignore",
                        "/status/wall_time"], capture_output=True, text=True)
    print(p.stdout.strip())
    if p.returncode != 0:
        failures += 1
    print("PASS" if failures == 0 else f"FAIL: {failures} checks failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
