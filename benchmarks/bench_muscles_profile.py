#!/usr/bin/python3
"""Where the time of a muscle-driven forward simulation goes: perf samples of bench_muscles,
attributed to the engine's parts.

usage: benchmarks/bench_muscles_profile.py [--build /tmp/bprof] [--excitation 0.05,0.3]
           [--repeats 5] [--duration 1] [--accuracy 1e-3] [--freq 4000] [--top 12]
           MODEL.osim [MODEL.osim ...]

The profiled program is bench_muscles from a separate build (`--build`, default /tmp/bprof),
configured like the main release build (Release, LTO) plus -g, so the code is the measured
code with debug information; the script configures and builds it when needed and never touches
the main build. Each model and excitation is a separate `perf record --call-graph dwarf` run of
`bench_muscles --repeats N --excitation E MODEL` (one core, OPENBLAS_NUM_THREADS=1).

Only samples inside mbs_simulate count (reading the model and the default state are left out).
Each sample goes to one part: perf's call chain, with inlined functions expanded, is walked from
the innermost frame outwards, and the first frame whose source file belongs to a part decides.
Helpers (spatial.c and .h, sincos.c, function.c, state.c, system.c, forces.c's force
application such as mbs_force_station, libm, libc, the kernel) belong to no part,
so their time goes to the part that called them: exp() in a Thelen curve counts as muscle
model, a 3x3 product in a path's point transforms as paths. The parts:

  paths         core/path.c, core/force_path.c: lengths, speeds, moment-arm forces, point
                positions (including MovingPathPoint and ConditionalPathPoint functions)
  wrapping      core/wrap.c
  muscle model  core/muscle.c, muscle_curves.c, muscle_bezier.c (curves, fiber velocity and
                equilibrium), core/force_muscle.c (activation dynamics, muscle forces)
  multibody     core/realize.c, tree_dynamics.c, mobilizer_*.c, constraint*.c (kinematics,
                O(n) forward dynamics, joint transforms)
  integrator    core/integrator*.c, core/simulate.c (error estimates, step control, reports)
  other         the rest: force dispatch and controls (mbs_calc_applied_forces,
                mbs_calc_controls), other force elements, unattributed samples

It prints, for each case, the share of samples by part and by source file, the hottest
innermost functions (self time; a libm function is shown with its caller) and the functions
with the most inclusive time; then one table of parts with a column per case.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PARTS = ["paths", "wrapping", "muscle model", "multibody", "integrator", "other"]
FILE_PART = {
    "path.c": "paths", "force_path.c": "paths", "path_impl.h": "paths",
    "wrap.c": "wrapping",
    "muscle.c": "muscle model", "muscle_curves.c": "muscle model",
    "muscle_bezier.c": "muscle model", "force_muscle.c": "muscle model",
    "realize.c": "multibody", "tree_dynamics.c": "multibody", "mobilizer_simple.c": "multibody",
    "mobilizer_rotation.c": "multibody", "mobilizer_function.c": "multibody",
    "mobilizer_ellipsoid.c": "multibody", "constraint.c": "multibody",
    "constraint_kernels.c": "multibody",
    "integrator.c": "integrator", "integrator_rk4.c": "integrator",
    "integrator_cvode.c": "integrator", "integrator_impl.h": "integrator",
    "simulate.c": "integrator",
    "force_elements.c": "other", "controller.c": "other",
    "bench_muscles.c": "other",
}
# helpers: their time goes to their caller's part
NEUTRAL = {"spatial.c", "spatial.h", "sincos.c", "function.c", "state.c", "status.c", "system.c",
           "model_impl.h", "forces.c"}
# functions of helper files that are parts of their own: the force dispatch (forces.c's
# mbs_force_station and the like, called by paths and other elements, stay helpers)
FUNC_PART = {"mbs_calc_applied_forces": "other", "mbs_calc_controls": "other"}

FRAME = re.compile(r"^\t\s*([0-9a-f]+) (.*?)(?: \((.*)\))?$")
HEADER = re.compile(r"^\s*(\d+)\s+([\w.-]+)(?::\w*)?:\s*$")  # "    500000 cpu-clock:ppp: "
SRCLINE = re.compile(r"^  (\S+?):(\d+)(?: \(inlined\))?$")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def ensure_build(build):
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        sh(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_FLAGS=-g",
            "-DMBS_BUILD_COMPARISON=OFF"], stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", build, "--target", "bench_muscles", "-j2"], stdout=subprocess.DEVNULL)
    exe = os.path.join(build, "benchmarks", "bench_muscles")
    if not os.access(exe, os.X_OK):
        sys.exit(f"bench_muscles_profile: no {exe}")
    return exe


def samples(script_text):
    """Yield (period, [(function, file, dso)] innermost first) for each sample."""
    period, frames = 0, None
    for line in script_text.splitlines():
        if not line.strip():
            if frames is not None:
                yield period, frames
            frames = None
            continue
        h = HEADER.match(line)
        if h:
            period = int(h.group(1))
            frames = []
            continue
        if frames is None:
            continue
        m = SRCLINE.match(line)
        if m and frames:
            fn, _, dso = frames[-1]
            frames[-1] = (fn, os.path.basename(m.group(1)), dso)
            continue
        m = FRAME.match(line)
        if m:
            fn = re.sub(r"\+0x[0-9a-f]+$", "", m.group(2)).strip()
            frames.append((fn, "", m.group(3) or ""))
    if frames is not None:
        yield period, frames


def clean(fn):
    # GCC's clones and LTO suffixes: step_merson.lto_priv.0, foo.constprop.0, foo.isra.0
    return re.sub(r"\.(lto_priv|constprop|isra|part|cold)(\.\d+)*", "", fn)


def part_of(frames):
    for fn, f, dso in frames:
        if clean(fn) in FUNC_PART:
            return FUNC_PART[clean(fn)], f"{f} ({clean(fn)})"
        if f in FILE_PART:
            return FILE_PART[f], f
    return "other", "(none)"


def profile_case(exe, model, exc, args, tmp):
    data = os.path.join(tmp, "perf.data")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = ["perf", "record", "-q", "-o", data, "-F", str(args.freq), "--call-graph",
           "dwarf,16384", "--", exe, "--quiet", "--trace", "0", "--repeats", str(args.repeats),
           "--excitation", exc, "--duration", str(args.duration), "--accuracy",
           str(args.accuracy), model]
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"bench_muscles_profile: {' '.join(cmd)} failed:\n{out.stderr}{out.stdout}")
    row = [l for l in out.stdout.splitlines() if l.startswith("| " + os.path.basename(model))]
    text = subprocess.run(["perf", "script", "-i", data, "-F", "event,period,ip,sym,dso,srcline",
                           "--inline"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, check=True).stdout
    event = ""
    for line in text.splitlines():
        h = HEADER.match(line)
        if h:
            event = h.group(2)
            break
    total = outside = nsample = 0
    by_part = collections.Counter()
    by_file = collections.Counter()
    self_fn = collections.Counter()
    incl_fn = collections.Counter()
    for period, frames in samples(text):
        names = [clean(fn) for fn, _, _ in frames]
        if "mbs_simulate" not in names:
            outside += period
            continue
        total += period
        nsample += 1
        part, f = part_of(frames)
        by_part[part] += period
        by_file[f] += period
        # self: the innermost function; a library or helper function is shown with its caller
        fn, f0, dso = frames[0]
        label = f"{clean(fn)} ({f0 or os.path.basename(dso) or '?'})"
        if f0 not in FILE_PART:
            for fn1, f1, _ in frames[1:]:
                if f1 in FILE_PART or clean(fn1) in FUNC_PART:
                    label += f" in {clean(fn1)}"
                    break
        self_fn[label] += period
        # inclusive: every engine function below mbs_simulate, once per sample
        cut = names.index("mbs_simulate")
        seen = set()
        for (fn, f, _), name in zip(frames[:cut], names[:cut]):
            if (f in FILE_PART or f in NEUTRAL) and name not in seen:
                seen.add(name)
                incl_fn[f"{name} ({f})"] += period
    return dict(total=total, outside=outside, by_part=by_part, by_file=by_file, self=self_fn,
                incl=incl_fn, event=event, nsample=nsample, row=row[0] if row else "")


def pct(x, total):
    return f"{100.0 * x / total:.1f}" if total else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--build", default="/tmp/bprof")
    ap.add_argument("--excitation", default="0.05,0.3")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--accuracy", type=float, default=1e-3)
    ap.add_argument("--freq", type=int, default=4000)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    for m in args.models:
        if not os.path.isfile(m):
            sys.exit(f"bench_muscles_profile: {m}: no such file")
    exe = ensure_build(args.build)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            for exc in args.excitation.split(","):
                name = f"{os.path.basename(model).removesuffix('.osim')} e={exc}"
                r = profile_case(exe, model, exc, args, tmp)
                cases.append((name, r))
                t = r["total"]
                print(f"## {name}\n")
                amount = (f"{t / 1e9:.2f} s of CPU time" if r["event"] in ("cpu-clock", "task-clock")
                          else f"{t:.3g} {r['event']}")
                print(f"{r['nsample']} samples ({r['event'] or '?'}), {amount} inside "
                      f"mbs_simulate; {pct(r['outside'], t + r['outside'])}% of the time was "
                      "outside it (reading, default state)")
                if r["row"]:
                    print(f"bench_muscles under perf: {r['row']}")
                print("\n| part | % of time in mbs_simulate |\n|---|---:|")
                for p in PARTS:
                    print(f"| {p} | {pct(r['by_part'][p], t)} |")
                print("\n| source file (first attributed frame) | % |\n|---|---:|")
                for f, v in r["by_file"].most_common():
                    print(f"| {f} | {pct(v, t)} |")
                print(f"\n| hottest innermost functions (self) | % |\n|---|---:|")
                for f, v in r["self"].most_common(args.top):
                    print(f"| {f} | {pct(v, t)} |")
                print(f"\n| functions with the most inclusive time | % |\n|---|---:|")
                for f, v in r["incl"].most_common(args.top + 10):
                    print(f"| {f} | {pct(v, t)} |")
                print()
    print("## Parts, % of the time in mbs_simulate\n")
    print("| part | " + " | ".join(n for n, _ in cases) + " |")
    print("|---|" + "---:|" * len(cases))
    for p in PARTS:
        print(f"| {p} | " + " | ".join(pct(r["by_part"][p], r["total"]) for _, r in cases) + " |")


if __name__ == "__main__":
    main()
