#!/usr/bin/python3
"""`mbstudy export --format osim` of a posture study on a published model: the sample's model is
the published model on the platform (its bodies and coordinates plus the platform's body and its
three prescribed coordinates), mbstudy and OpenSim's state paths agree, and the motion holds
every coordinate of it.

usage: check_export_osim.py MBSTUDY RESULT.h5 MODEL.osim OUTDIR SAMPLE"""
import os
import re
import subprocess
import sys


def info(mbs, path):
    r = subprocess.run([mbs, "model", "info", path], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"model info {path} failed: {r.stderr}")
    bodies = int(re.search(r"^bodies: (\d+)", r.stdout, re.M).group(1))
    lines = r.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("coordinates:"))
    coords = {}
    for l in lines[start + 2:]:
        f = l.split()
        if len(f) < 3:
            break
        coords[f[0]] = f[1]
    return bodies, coords


def main():
    mbs, h5, model, out, sample = sys.argv[1:6]
    if not os.path.exists(h5):
        print(f"{h5} not found: its study did not run")
        return 77
    r = subprocess.run([mbs, "export", h5, "--sample", sample, "--format", "osim", "--out", out],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"export failed: {r.stderr}")
    osim = os.path.join(out, f"sample_{sample}.osim")
    sto = os.path.join(out, f"sample_{sample}.sto")
    b0, c0 = info(mbs, model)
    b1, c1 = info(mbs, osim)
    fails = []
    if b1 != b0 + 1:
        fails.append(f"bodies: {b1}, the model has {b0} (+1 platform expected)")
    if set(c1) != set(c0) | {"platform_tx", "platform_ty", "platform_tz"}:
        fails.append(f"coordinates differ: {sorted(set(c1) ^ set(c0))}")
    with open(sto, encoding="utf-8") as f:
        lines = f.read().splitlines()
    end = lines.index("endheader")
    cols = lines[end + 1].split("\t")
    want = {f"/jointset/{j}/{c}/value" for c, j in c1.items()}
    have = {c for c in cols if c.endswith("/value")}
    if have != want:
        fails.append(f"motion columns differ from the model's state paths: {sorted(have ^ want)[:6]}")
    text = open(osim, encoding="utf-8").read()
    if "HuntCrossleyForce" not in text or "platform_surface" not in text:
        fails.append("no foot contact with the platform in the exported model")
    for f in fails:
        print("FAIL:", f)
    print(f"sample {sample}: {b1} bodies, {len(c1)} coordinates, {len(cols)} motion columns; "
          f"{len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
