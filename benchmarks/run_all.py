#!/usr/bin/python3
"""Every benchmark of mbstudy in one command, written to BENCHMARKS.md.

usage: benchmarks/run_all.py [--build DIR] [--out FILE] [--shared DIR] [--quick]
                             [--only SECTION,...] [--no-simbody-release]

Builds mbstudy with optimization (CMake Release, the engine comparison on) in --build (default
build-bench), builds Simbody from Debian's source package in Release (-DNDEBUG) when its source
can be fetched (apt-get source with a private source list: the system's apt configuration is
not touched; MBS_SIMBODY_SOURCE=DIR names an unpacked source tree instead), then runs every
benchmark and writes --out (default BENCHMARKS.md in the repository): the machine, the date,
each exact command, the versions and build flags of every program compared, medians and spread
of interleaved repeats (A, B, C, A, B, C, ...), and each target with its figure.

Sections (--only): core, fig3, batch, muscles, io, memory, studies, sched. --quick shortens
every section (fewer repeats and sizes) to check the command itself; its figures are not for
quoting. Needs ../shared (models) for muscles and the gait2392 rows; sections that cannot run
say why in the report.
"""
import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SECTIONS = ["core", "fig3", "batch", "muscles", "io", "memory", "studies", "sched"]
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


class Report:
    def __init__(self):
        self.parts = []      # (section, markdown)
        self.commands = []   # every command run for a figure
        self.targets = []    # (target, figure, met: True/False/None, where)

    def cmd(self, argv):
        self.commands.append(" ".join(shlex.quote(str(a)) for a in argv))

    def add(self, section, text):
        self.parts.append((section, text))

    def target(self, what, figure, met, where):
        self.targets.append((what, figure, met, where))


def log(msg):
    print(f"[run_all {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(argv, rep=None, check=True, timeout=None, env=None, cwd=None):
    if rep is not None:
        rep.cmd(argv)
    log("$ " + " ".join(shlex.quote(str(a)) for a in argv))
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env or ENV,
                       timeout=timeout, cwd=cwd)
    if check and p.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {p.returncode}:\n{p.stdout[-3000:]}\n"
                           f"{p.stderr[-3000:]}")
    return p


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    m = median(xs)
    return 100 * (max(xs) - min(xs)) / 2 / m if xs and m else float("nan")


# ------------------------------------------------------------------ machine and builds

def machine_facts():
    cpu = "unknown CPU"
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu == "unknown CPU":
                    cpu = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f"{kb / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    simd = [x for x in ("avx2", "fma", "avx512f", "avx512dq") if x in flags]
    osr = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    osr = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return {"cpu": cpu, "cpus": os.cpu_count(), "memory": mem, "simd": " ".join(simd),
            "os": osr, "kernel": platform.release(),
            "git": git + (" (working tree modified)" if dirty else ""), "cc": cc,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def build_mbstudy(args, rep):
    b = args.build
    run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DMBS_BUILD_COMPARISON=ON",
         f"-DMBS_SHARED_DIR={args.shared}"], rep)
    run(["cmake", "--build", b, "-j", str(os.cpu_count() or 2)], rep, timeout=3600)
    cache = open(os.path.join(b, "CMakeCache.txt")).read()
    flags = re.search(r"^CMAKE_C_FLAGS_RELEASE:STRING=(.*)$", cache, re.M)
    return flags.group(1) if flags else "?"


def apt_mirror():
    """The Debian mirror the system's apt uses (deb822 or one-line sources)."""
    for path in ["/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"]:
        try:
            text = open(path).read()
        except OSError:
            continue
        m = re.search(r"^URIs:\s*(\S+)", text, re.M) or re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)",
                                                                  text, re.M)
        if m and "security" not in m.group(1):
            return m.group(1)
    return "http://deb.debian.org/debian"


def fetch_simbody_source(work):
    """Debian's simbody source package, unpacked; (dir, how) or (None, reason)."""
    given = os.environ.get("MBS_SIMBODY_SOURCE")
    if given:
        if os.path.isfile(os.path.join(given, "CMakeLists.txt")):
            return given, f"the source tree in MBS_SIMBODY_SOURCE ({given})"
        return None, f"MBS_SIMBODY_SOURCE={given} holds no CMakeLists.txt"
    src = os.path.join(work, "src")
    for d in (os.listdir(src) if os.path.isdir(src) else []):
        if d.startswith("simbody-") and os.path.isfile(os.path.join(src, d, "CMakeLists.txt")):
            return os.path.join(src, d), "Debian's source package (fetched before)"
    if not shutil.which("apt-get") or not shutil.which("dpkg-source"):
        return None, "apt-get or dpkg-source not found (Debian's dpkg-dev)"
    os.makedirs(os.path.join(work, "lists", "partial"), exist_ok=True)
    os.makedirs(src, exist_ok=True)
    codename = "bookworm"
    try:
        for line in open("/etc/os-release"):
            if line.startswith("VERSION_CODENAME="):
                codename = line.split("=", 1)[1].strip() or codename
    except OSError:
        pass
    sl = os.path.join(work, "sources.list")
    with open(sl, "w") as f:
        f.write(f"deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                f"{apt_mirror()} {codename} main\n")
    opts = ["-o", f"Dir::Etc::SourceList={sl}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={os.path.join(work, 'lists')}", "-q"]
    try:
        run(["apt-get"] + opts + ["update"], timeout=600)
        run(["apt-get"] + opts + ["source", "simbody"], timeout=1200, cwd=src)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        return None, f"apt-get source simbody failed: {str(e).strip().splitlines()[-1]}"
    for d in os.listdir(src):
        if d.startswith("simbody-") and os.path.isfile(os.path.join(src, d, "CMakeLists.txt")):
            return os.path.join(src, d), "Debian's source package (apt-get source simbody)"
    return None, "apt-get source simbody gave no source tree"


def build_simbody_release(args, rep):
    """(binary dir of the comparison programs built against it, description) or (None, why)."""
    work = os.path.join(args.build, "simbody-release")
    inst = os.path.join(work, "install")
    cfg = os.path.join(inst, "lib", "cmake", "simbody")
    if not os.path.isdir(os.path.join(cfg)):
        cfg = os.path.join(inst, "lib", "x86_64-linux-gnu", "cmake", "simbody")
    how = "Debian's source package (built by an earlier run)"
    if not os.path.isfile(os.path.join(cfg, "SimbodyConfig.cmake")):
        srcdir, how = fetch_simbody_source(work)
        if not srcdir:
            return None, how
        bdir = os.path.join(work, "build")
        run(["cmake", "-S", srcdir, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
             f"-DCMAKE_INSTALL_PREFIX={inst}", "-DCMAKE_INSTALL_LIBDIR=lib",
             "-DBUILD_EXAMPLES=OFF", "-DBUILD_VISUALIZER=OFF", "-DBUILD_TESTING=OFF",
             "-DBUILD_STATIC_LIBRARIES=OFF", "-DBUILD_DYNAMIC_LIBRARIES=ON",
             # Debian's patches (0001) want the visualizer's folder named, as its rules do
             f"-DSIMBODY_VISUALIZER_INSTALL_DIR={os.path.join(inst, 'libexec', 'simbody')}"],
            rep)
        run(["cmake", "--build", bdir, "-j", str(os.cpu_count() or 2), "--target", "install"],
            rep, timeout=7200)
        cfg = os.path.join(inst, "lib", "cmake", "simbody")
    bb = os.path.join(args.build, "sbrel")
    run(["cmake", "-S", ROOT, "-B", bb, "-DCMAKE_BUILD_TYPE=Release", "-DMBS_BUILD_COMPARISON=ON",
         f"-DSimbody_DIR={cfg}", "-DMBS_SIMBODY_RELEASE=ON"], rep)
    run(["cmake", "--build", bb, "-j", str(os.cpu_count() or 2), "--target",
         "mbs_compare_engines", "mbs_fig3_accuracy"], rep, timeout=3600)
    return bb, f"Simbody 3.7 from {how}, CMAKE_BUILD_TYPE=Release (-O3 -DNDEBUG), in {inst}"


# ------------------------------------------------------------------ sections

def section_core(args, rep, builds):
    """Forward/inverse dynamics and mass matrix: mbstudy, Simbody (Debian and Release), MuJoCo."""
    progs = [("debian", os.path.join(args.build, "benchmarks", "mbs_compare_engines"))]
    if builds.get("sbrel"):
        progs.append(("release", os.path.join(builds["sbrel"], "benchmarks",
                                              "mbs_compare_engines")))
    rounds = 1 if args.quick else 3
    per = 3 if args.quick else 5
    sizes = "10,50" if args.quick else "1,5,10,20,50,100,200"
    raw = {}   # (variant, op, engine, bodies) -> [us]
    meta = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for variant, prog in progs:   # processes alternate: debian, release, debian, ...
                js = os.path.join(tmp, f"{variant}{r}.json")
                run([prog, "--time", "--repeats", per, "--sizes", sizes, "--json", js], rep,
                    timeout=3600)
                d = json.load(open(js))
                meta[variant] = d
                for x in d["results"]:
                    raw.setdefault((variant, x["op"], x["engine"], x["bodies"]), []).extend(x["us"])
    ops = [("fd", "Forward dynamics"), ("id", "Inverse dynamics"), ("mm", "Mass matrix (dense)")]
    bodies = sorted({k[3] for k in raw})
    d0 = meta["debian"]
    text = ["The engines are timed in one process per Simbody build; the processes alternate "
            f"({rounds} rounds × {per} repeats), and within each repeat the engines alternate "
            "(mbstudy, Simbody, MuJoCo, mbstudy, ...). Microseconds per call, median of all "
            "repeats, ± half the range in percent. mbstudy and MuJoCo are the same programs in "
            "both processes: their columns pool both, and the ratio to MuJoCo is of those "
            "pooled medians; the ratio to each Simbody build takes mbstudy's median from the "
            "same process, interleaved with that build.", "",
            f"- models: {d0['models']}", f"- calls: {d0['calls']}",
            f"- mbstudy: {d0['mbstudy']}, C flags: `{d0['c_flags']}`",
            f"- client code of Simbody and MuJoCo: C++ flags `{d0['cxx_flags']}`",
            f"- Simbody (Debian): {d0['simbody']}"]
    if "release" in meta:
        text.append(f"- Simbody (Release): {meta['release']['simbody']}; "
                    f"{builds.get('sbrel_how', '')}")
    else:
        text.append(f"- Simbody (Release): not measured: {builds.get('sbrel_why', '?')}")
    text.append(f"- {d0['mujoco']}")
    text.append(f"- all engines agree on every timed model to 1e-9 (udot, tau, M): "
                f"{'yes' if all(m['agree'] for m in meta.values()) else 'NO'}")
    text.append("")
    worst = {}
    for op, title in ops:
        text.append(f"#### {title}, µs per call\n")
        hdr = "| bodies | mbstudy | MuJoCo | Simbody (Debian) |"
        sep = "|---:|---:|---:|---:|"
        if "release" in meta:
            hdr += " Simbody (Release) |"
            sep += "---:|"
        hdr += " mbstudy/MuJoCo | mbstudy/Simbody (Debian) |"
        sep += "---:|---:|"
        if "release" in meta:
            hdr += " mbstudy/Simbody (Release) |"
            sep += "---:|"
        text += [hdr, sep]
        for n in bodies:
            def pooled(engine):
                xs = []
                for v in meta:
                    xs += raw.get((v, op, engine, n), [])
                return xs
            mb, mj = pooled("mbstudy"), pooled("MuJoCo")
            sd = raw.get(("debian", op, "Simbody", n), [])
            sr = raw.get(("release", op, "Simbody", n), [])
            cells = [f"{median(mb):.3f} ±{spread(mb):.0f}%", f"{median(mj):.3f} ±{spread(mj):.0f}%",
                     f"{median(sd):.3f} ±{spread(sd):.0f}%"]
            if "release" in meta:
                cells.append(f"{median(sr):.3f} ±{spread(sr):.0f}%")
            # each Simbody build against mbstudy timed in the same process (interleaved with it)
            mb_d = raw.get(("debian", op, "mbstudy", n), [])
            mb_r = raw.get(("release", op, "mbstudy", n), [])
            rmj, rsd = median(mb) / median(mj), median(mb_d) / median(sd)
            cells += [f"{rmj:.2f}", f"{rsd:.2f}"]
            rsr = None
            if "release" in meta:
                rsr = median(mb_r) / median(sr)
                cells.append(f"{rsr:.2f}")
            text.append(f"| {n} | " + " | ".join(cells) + " |")
            if op == "fd" and 10 <= n <= 200:
                worst.setdefault("mj", []).append((rmj, n))
                if rsr is not None:
                    worst.setdefault("sr", []).append((rsr, n))
        text.append("")
    if "mj" in worst:
        r, n = max(worst["mj"])
        rep.target("Forward dynamics ≤ 0.5× MuJoCo's mj_forward, 10–200 bodies, general frames",
                   f"worst {r:.2f}× (at {n} bodies)", r <= 0.5, "Core")
    if "sr" in worst:
        r, n = max(worst["sr"])
        rep.target("Forward dynamics ≤ 0.25× Release Simbody's, 10–200 bodies",
                   f"worst {r:.2f}× (at {n} bodies)", r <= 0.25, "Core")
    else:
        rep.target("Forward dynamics ≤ 0.25× Release Simbody's, 10–200 bodies",
                   "not measured: " + builds.get("sbrel_why", "?"), None, "Core")
    rep.add("Core: forward dynamics, inverse dynamics, mass matrix", "\n".join(text))


def section_fig3(args, rep, builds):
    progs = [("Debian Simbody", os.path.join(args.build, "benchmarks", "mbs_fig3_accuracy"))]
    if builds.get("sbrel"):
        progs.append(("Release Simbody", os.path.join(builds["sbrel"], "benchmarks",
                                                      "mbs_fig3_accuracy")))
    text = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, prog in progs:
            js = os.path.join(tmp, "fig3.json")
            argv = [prog, "--quick"] if args.quick else [prog, "--run", "--repeats", "3",
                                                         "--json", js]
            p = run(argv, rep, timeout=7200)
            text += [f"#### Against {name}\n", "```", p.stdout.strip(), "```", ""]
            if not args.quick and os.path.exists(js):
                d = json.load(open(js))
                fig3_target(rep, name, d)
    rep.add("Integration: the Simbody paper's Fig. 3 experiment", "\n".join(text))


def fig3_target(rep, name, d):
    """The Fig. 3 target from mbs_fig3_accuracy --json: CPU at the same alpha and at equal error."""
    worst = None
    for r in d.get("rows", []):
        try:
            ratio = r["cpu_ratio_median"]
            eq = r.get("cpu_ratio_equal_error", ratio)
            err = r["mbstudy"]["error_max_rad"] / r["simbody"]["error_max_rad"]
        except (KeyError, TypeError, ZeroDivisionError):
            continue
        key = max(ratio, eq if eq == eq else ratio)
        if worst is None or key > worst[0]:
            worst = (key, r["alpha"], ratio, eq, err)
    if worst:
        rep.target(f"Fig. 3: Simbody RK-Merson's error with ≤ 0.25× its CPU time ({name})",
                   f"worst at α = {worst[1]:g}: {worst[2]:.2f}× at the same α, {worst[3]:.2f}× at "
                   f"equal error (error ratio {worst[4]:.2f})", worst[0] <= 0.25, "Integration")


def section_batch(args, rep, builds):
    prog = os.path.join(args.build, "benchmarks", "bench_batch")
    if not os.path.exists(prog):
        rep.add("Many samples per instruction (batched forward dynamics)",
                "Not measured: bench_batch is not built in this version.")
        rep.target("Batched forward dynamics ≥ 3× the one-at-a-time throughput, 10–200 bodies",
                   "not measured", None, "Batched")
        return
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "batch.json")
        argv = [prog, "--json", js]
        if args.quick:
            argv += ["--bodies", "10,50", "--repeats", "3"]
        p = run(argv, rep, timeout=3600)
        text = ["States of one System advanced together in SIMD lanes (`mbs_batch_forward_dynamics`, "
                "64 States per call) against `mbs_realize_acceleration` one State at a time; "
                "time per State evaluation, interleaved repeats, on pin chains with general "
                "joint frames; gain = median one-at-a-time / median batched.", "",
                "```", p.stdout.strip(), "```"]
        try:
            d = json.load(open(js))
            gains = []
            for c in d.get("chains", []):
                n = c["bodies"]
                if not 10 <= n <= 200:
                    continue
                one = median(c["one_at_a_time"])
                for isa, ts in c["batched"].items():
                    gains.append((one / median(ts), n, isa))
            best_isa = {}
            for g, n, isa in gains:
                best_isa.setdefault(isa, []).append((g, n))
            for isa, gs in best_isa.items():
                g, n = min(gs)
                rep.target(f"Batched forward dynamics ≥ 3× the one-at-a-time throughput, "
                           f"10–200 bodies ({isa})", f"least {g:.2f}× (at {n} bodies)", g >= 3,
                           "Batched")
        except (OSError, ValueError, KeyError, ZeroDivisionError):
            pass
        text += batched_simulation(args, rep, tmp)
    rep.add("Many samples per instruction (batched forward dynamics)", "\n".join(text))


def batched_simulation(args, rep, tmp):
    """The batched simulation (mbs_batch_simulate) against mbs_simulate, then a study run both
    ways (the pendulum Monte Carlo, batched and --one-at-a-time, alternating)."""
    text = []
    prog = os.path.join(args.build, "benchmarks", "bench_batch_simulate")
    if os.path.exists(prog):
        argv = [prog, "--json", os.path.join(tmp, "sim.json")]
        argv += ["--bodies", "10,50", "--repeats", "3"] if args.quick else ["--bodies", "10,50,200"]
        p = run(argv, rep, timeout=3600)
        text += ["", "#### Batched simulation", "",
                 "Whole simulations: each State integrated by rk_merson with its own "
                 "error-controlled steps, 8 States side by side, their forward dynamics evaluated "
                 "together (`mbs_batch_simulate`), against `mbs_simulate` one State at a time "
                 "(bench_batch_simulate; the States end at the same numbers, checked). The gain is "
                 "below the forward dynamics' alone: every lane's step control, error norm and "
                 "reports (interpolation and the State's kinematics at each report) are still one "
                 "lane at a time.", "", "```", p.stdout.strip(), "```"]
    spec0 = os.path.join(HERE, "studies", "pendulum_mc.yaml")
    mbstudy = os.path.join(args.build, "mbstudy")
    if not os.path.exists(mbstudy):
        return text
    count = 400 if args.quick else 2000
    spec = spec_with(spec0, os.path.join(tmp, "mc.yaml"), count=count)
    rounds = 1 if args.quick else 3
    walls = {"batched": [], "one": []}
    outs = {}
    for r in range(rounds):
        for mode in ("batched", "one"):
            out = os.path.join(tmp, f"mc_{mode}.h5")
            cmd = [mbstudy, "run", spec, "--force", "--quiet", "--threads", "1", "--output", out]
            if mode == "one":
                cmd.append("--one-at-a-time")
            p = run(cmd, rep if r == 0 else None, timeout=3600)
            m = SUMMARY.search(p.stdout + p.stderr)
            if m:
                walls[mode].append(float(m.group(2)))
            outs[mode] = out
    same = run(["/usr/bin/python3", os.path.join(ROOT, "tests", "studies", "compare_h5.py"),
                outs["batched"], outs["one"], "--ignore", "/status/wall_time"], rep, check=False)
    wb, wo = median(walls["batched"]), median(walls["one"])
    text += ["", f"A study both ways: the pendulum Monte Carlo (`benchmarks/studies/pendulum_mc.yaml`,"
             f" {count} samples of the built-in double pendulum, 10 s at accuracy 1e-8, 1 rank, 1 "
             f"thread), batched and with `--one-at-a-time`, alternating, medians of {rounds}:", "",
             "| path | wall s | samples/s |", "|---|---:|---:|",
             f"| batched | {wb:.2f} | {count / wb:.0f} |",
             f"| one at a time | {wo:.2f} | {count / wo:.0f} |", "",
             f"Gain {wo / wb:.2f}×; the two result files are "
             + ("identical (every dataset but the wall times)." if same.returncode == 0 else
                "**not** identical: " + same.stdout.strip().splitlines()[-1])]
    return text


def section_muscles(args, rep, builds):
    models = [os.path.join(args.shared, "models", m) for m in
              ("gait2392_thelen2003muscle.osim", "rajagopal2016.osim")]
    missing = [m for m in models if not os.path.exists(m)]
    if missing:
        rep.add("Muscles", f"Not measured: {', '.join(missing)} not found (--shared).")
        return
    prog = os.path.join(args.build, "benchmarks", "bench_muscles")
    argv = [prog, "--repeats", 3 if args.quick else 7, "--duration", 1, "--accuracy", "1e-3",
            "--excitation", "0.05,0.3"] + models
    p = run(argv, rep, timeout=3600)
    rep.add("Muscles: muscle-driven forward simulation",
            "Simulated seconds per wall second, one core, from the default pose with constant "
            "excitations, RK-Merson at accuracy 1e-3 (bench_muscles; its header says what is "
            "timed).\n\n```\n" + p.stdout.strip() + "\n```")


SUMMARY = re.compile(r"wrote .*: (\d+) samples .*; ([0-9.e+-]+) s, of which ([0-9.e+-]+) s "
                     r"waiting on journals .* and ([0-9.e+-]+) s on the result file after the "
                     r"last sample")


def mbstudy_run(args, rep, spec, out, ranks=1, threads=1, record=True):
    cmd = [os.path.join(args.build, "mbstudy"), "run", spec, "--force", "--quiet", "--threads",
           threads, "--output", out]
    if ranks > 1:
        cmd = ["mpiexec", "-n", ranks, "--oversubscribe"] + cmd
    t0 = time.monotonic()
    p = run(cmd, rep if record else None, timeout=7200)
    wall_process = time.monotonic() - t0
    m = SUMMARY.search(p.stdout)
    if not m:
        raise RuntimeError(f"no summary line in the output of {' '.join(map(str, cmd))}:\n"
                           f"{p.stdout}")
    return {"samples": int(m.group(1)), "wall": float(m.group(2)),
            "journal": float(m.group(3)), "merge": float(m.group(4)),
            "process": wall_process}


def spec_with(src, dst, **repl):
    """A copy of a study spec with top-level keys of its sections replaced (simple YAML)."""
    text = open(src).read()
    for key, val in repl.items():
        text, n = re.subn(rf"(?m)^(\s+){key}:.*$", rf"\g<1>{key}: {val}", text)
        if n == 0:
            raise RuntimeError(f"{src}: no '{key}:' to replace")
    with open(dst, "w") as f:
        f.write(text)
    return dst


def section_studies(args, rep, builds):
    configs = [(1, 1), (1, 2), (2, 1)]
    rounds = 1 if args.quick else 3
    studies = [("pendulum Monte Carlo (uniform sample cost)",
                os.path.join(HERE, "studies", "pendulum_mc.yaml"), {"count": 400} if args.quick
                else {}),
               ("posture sweep, magnitudes every 1 cm (heterogeneous: falls end runs early)",
                os.path.join(ROOT, "studies", "specs", "posture_sweep.yaml"),
                {"magnitude": "{from: 0, to: 0.2, step: 0.01}"})]
    text = ["Samples per second and parallel efficiency E = T(1 rank, 1 thread) / (workers × T), "
            f"medians of {rounds} runs; the configurations alternate (1×1, 1×2, 2×1, 1×1, ...). "
            "Wall time as `mbstudy run` reports it (start to complete result file).", "",
            "| study | ranks × threads | samples | wall s (median) | spread | samples/s | "
            "efficiency | I/O share |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    effs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec, repl in studies:
            if not os.path.exists(spec):
                text.append(f"| {name} | not found: {spec} | | | | | | |")
                continue
            if args.quick and "posture" in spec:
                continue
            s = spec_with(spec, os.path.join(tmp, "s.yaml"), **repl) if repl else spec
            res = {c: [] for c in configs}
            for r in range(rounds):
                for c in configs:
                    res[c].append(mbstudy_run(args, rep, s, os.path.join(tmp, "o.h5"), *c,
                                              record=(r == 0)))
            t1 = median([x["wall"] for x in res[(1, 1)]])
            for c in configs:
                w = [x["wall"] for x in res[c]]
                e = t1 / (c[0] * c[1] * median(w))
                io = median([(x["journal"] + x["merge"]) / x["wall"] for x in res[c]])
                n = res[c][0]["samples"]
                text.append(f"| {name} | {c[0]} × {c[1]} | {n} | {median(w):.2f} | "
                            f"±{spread(w):.0f}% | {n / median(w):.1f} | {100 * e:.1f}% | "
                            f"{100 * io:.1f}% |")
                if c == (2, 1):
                    effs.append((e, name))
    for e, name in effs:
        rep.target(f"Parallel efficiency ≥ 95% at 2 ranks ({name})", f"{100 * e:.1f}%", e >= 0.95,
                   "Studies")
    rep.add("Studies: throughput and parallel efficiency", "\n".join(text))


def disk_write_speed(folder, mb):
    """Sequential write of `mb` MiB with dd, synced: MB/s."""
    path = os.path.join(folder, "dd.bin")
    t0 = time.monotonic()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={mb}", "conv=fsync"],
                   capture_output=True, check=True)
    dt = time.monotonic() - t0
    os.remove(path)
    return mb * 2**20 / dt / 1e6


def section_io(args, rep, builds):
    folder = tempfile.mkdtemp(dir=args.build, prefix="io-")
    try:
        mb = 256 if args.quick else 2048
        dd = [disk_write_speed(folder, mb) for _ in range(1 if args.quick else 3)]
        rep.cmd(["dd", "if=/dev/zero", f"of={folder}/dd.bin", "bs=1M", f"count={mb}",
                 "conv=fsync"])
        rows = []
        # small outputs: scalars only; trajectory-heavy: q and u every frame
        n_heavy = 2000 if args.quick else 100000
        cases = [("small (scalars only)", {"count": 20000 if not args.quick else 2000},
                  "scalars"),
                 (f"trajectory-heavy ({n_heavy} samples × 1000 frames of q, u)",
                  {"count": n_heavy, "duration": 10.0, "output_interval": 0.01}, "heavy")]
        spec0 = os.path.join(HERE, "studies", "pendulum_mc.yaml")
        for name, repl, kind in cases:
            s = spec_with(spec0, os.path.join(folder, "s.yaml"), **repl)
            if kind == "scalars":
                text = open(s).read().replace("trajectories: [q, u]", "trajectories: []")
                open(s, "w").write(text)
            else:
                text = open(s).read().replace("accuracy: 1.0e-8", "accuracy: 1.0e-4")
                open(s, "w").write(text)
            out = os.path.join(folder, "o.h5")
            x = mbstudy_run(args, rep, s, out, 1, os.cpu_count() or 2)
            size = os.path.getsize(out)
            rows.append((name, x, size))
            os.remove(out)
        text = [f"Local disk ({folder}): sequential write with `dd bs=1M count={mb} conv=fsync`: "
                f"median {median(dd):.0f} MB/s ({', '.join(f'{v:.0f}' for v in dd)}).", "",
                "| output | samples | result file MB | wall s | result MB/s over the run | "
                "journal wait s | after the last sample s | I/O share |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, x, size in rows:
            io = (x["journal"] + x["merge"]) / x["wall"]
            text.append(f"| {name} | {x['samples']} | {size / 1e6:.1f} | {x['wall']:.1f} | "
                        f"{size / 1e6 / x['wall']:.1f} | {x['journal']:.2f} | {x['merge']:.2f} | "
                        f"{100 * io:.1f}% |")
            rep.target(f"HDF5 I/O ≤ 5% of study wall time ({name})", f"{100 * io:.1f}%",
                       io <= 0.05, "I/O")
        rep.add("I/O: HDF5 against the disk", "\n".join(text))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def section_memory(args, rep, builds):
    text = []
    prog = os.path.join(args.build, "benchmarks", "bench_state_bytes")
    models = [os.path.join(args.shared, "models", m) for m in
              ("gait2392_thelen2003muscle.osim", "rajagopal2016.osim")]
    p = run([prog] + [m for m in models if os.path.exists(m)], rep)
    text += ["Bytes per State (the allocator's bytes in use around `mbs_state_create`):", "",
             p.stdout.strip(), ""]
    counts = [1000, 10000] if args.quick else [1000, 10000, 100000, 1000000]
    spec0 = os.path.join(HERE, "studies", "pendulum_mc.yaml")
    text += ["Peak resident memory of one rank (one process, 2 threads) against the sample count: "
             "the pendulum Monte Carlo with scalar outputs and trajectories every 0.05 s "
             "(ru_maxrss of the process, which ran alone):", "",
             "| samples | peak RSS MB | wall s |", "|---:|---:|---:|"]
    peaks = []
    folder = tempfile.mkdtemp(dir=args.build, prefix="mem-")
    try:
        for n in counts:
            s = spec_with(spec0, os.path.join(folder, "s.yaml"), count=n, duration=1.0)
            s_text = open(s).read().replace("accuracy: 1.0e-8", "accuracy: 1.0e-5")
            open(s, "w").write(s_text)
            out = os.path.join(folder, "o.h5")
            cmd = [os.path.join(args.build, "mbstudy"), "run", s, "--force", "--quiet",
                   "--threads", "2", "--output", out]
            rep.cmd(cmd)
            log("$ " + " ".join(cmd))
            t0 = time.monotonic()
            child = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
            _, status, ru = os.wait4(child.pid, 0)  # this child's own peak, not the session's
            child.returncode = os.waitstatus_to_exitcode(status)
            err = child.stderr.read().decode(errors="replace")
            child.stderr.close()
            wall = time.monotonic() - t0
            if child.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} exited {child.returncode}: {err[-2000:]}")
            kb = ru.ru_maxrss
            peaks.append((n, kb / 1024))
            text.append(f"| {n} | {kb / 1024:.1f} | {wall:.1f} |")
            os.remove(out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if len(peaks) >= 2:
        growth = peaks[-1][1] / peaks[0][1]
        text.append(f"\nPeak at {peaks[-1][0]} samples / at {peaks[0][0]}: {growth:.2f}×.")
        if len(peaks) >= 3:
            rest = [p for _, p in peaks[1:]]
            text.append(f"From {peaks[1][0]} to {peaks[-1][0]} samples the peak stays within "
                        f"{min(rest):.1f}–{max(rest):.1f} MB ({max(rest) / min(rest):.2f}×): what "
                        "grows with the study is bounded by constants (the percentiles at close "
                        "gather at most 32 MiB, or select in passes within 4 MiB, io/FORMAT.md; "
                        "HDF5's chunk caches hold two chunks per dataset); the smallest study "
                        "does not fill them. Per sample, rank 0 keeps S bytes of status mask at close and S/8 "
                        "of done flags (1.1 MB at 10⁶ samples).")
        rep.target("Peak memory per rank independent of sample count",
                   f"{peaks[0][1]:.0f} MB at {peaks[0][0]} samples, {peaks[-1][1]:.0f} MB at "
                   f"{peaks[-1][0]}", growth <= 1.2, "Memory")
    rep.add("Memory", "\n".join(text))


SCHED_TITLE = "Beyond this machine: scheduling simulator"
SCHED_TARGET = "Predicted efficiency ≥ 90% at 1024 ranks, ≥ 80% at 16,384 (posture sweep)"
# the counter protocols compared (sched_sim.py's POLICY+DONE): mbstudy's before 2026-11-28, its
# protocol since then, the proposed two-level counter
SCHED_CASES = [("guided+sample", "guided + progress per sample (before 2026-11-28)"),
               ("guided1+chunk", "guided1 + progress per chunk (mbstudy today)"),
               ("hier+chunk", "hier: node pools (proposed)")]


def sched_protocol(mbstudy):
    """The work counter's protocol of an mbstudy binary, as sched_sim.py names it, and why:
    before 2026-11-28 scheduler.c read the counter with MPI_NO_OP (Open MPI's symbol
    ompi_mpi_op_no_op) and engine.c counted progress per sample; since then neither."""
    srcs = [os.path.join(ROOT, "studies", f) for f in ("scheduler.c", "engine.c")]
    stale = ""
    try:
        if os.path.getmtime(mbstudy) < max(os.path.getmtime(s) for s in srcs):
            stale = "; the binary is older than studies/scheduler.c or engine.c"
    except OSError:
        pass
    p = subprocess.run(["nm", "-D", mbstudy], capture_output=True, text=True)
    if p.returncode != 0:
        return "guided1+chunk", "assumed (nm -D failed)" + stale
    if "ompi_mpi_op_no_op" in p.stdout:
        return "guided+sample", "the binary reads the counter with MPI_NO_OP" + stale
    return "guided1+chunk", "the binary makes no MPI_NO_OP read" + stale


def sched_mini_validation(args, rep, mbstudy, folder):
    """--quick (or no measured runs): a posture sweep on a coarse grid (magnitudes every 5 cm,
    120 samples) on 1 rank, 1 thread, in sched_validate.sh's layout (runs.txt, the log and the
    result file) so that sched_sim.py --validate calibrates from it"""
    spec = spec_with(os.path.join(HERE, "studies", "sched_posture.yaml"),
                     os.path.join(folder, "sched_posture_quick.yaml"),
                     magnitude="{from: 0, to: 0.2, step: 0.05}")
    h5, lg = os.path.join(folder, "posture_r1.1.h5"), os.path.join(folder, "posture_r1.1.log")
    t0 = time.monotonic()
    p = run([mbstudy, "run", spec, "--output", h5, "--force", "--quiet", "--threads", 1,
             "--allow-failures"], rep, timeout=1800)
    outer = time.monotonic() - t0
    with open(lg, "w") as f:
        f.write(p.stdout + p.stderr)
    load = open("/proc/loadavg").read().split()[0]
    with open(os.path.join(folder, "machine.txt"), "w") as f:
        f.write(f"# run_all.py --quick: one posture run, {os.cpu_count()} cores, load {load}\n")
    with open(os.path.join(folder, "runs.txt"), "w") as f:
        f.write("study ranks repeat outer_s load_before load_after log h5\n"
                f"posture 1 1 {outer:.3f} {load} {load} {lg} {h5}\n")


def sched_table(heads, rows, align=None):
    align = align or ["---:"] * len(heads)
    return "\n".join(["| " + " | ".join(heads) + " |", "|" + "|".join(align) + "|"] +
                     ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def section_sched(args, rep, builds):
    """sched_sim.py: the measured 1-3-rank runs against its predictions (sched_validate.sh), then
    predictions at scale for the posture sweep: mbstudy's counter protocol today and before
    2026-11-28, the proposed node pools; the writer none (scheduling alone), merger (mbstudy's)
    and pernode (proposed)."""
    prog = os.path.join(HERE, "sched_sim.py")
    mbstudy = os.path.join(args.build, "mbstudy")
    if not os.path.exists(prog) or not os.path.exists(mbstudy):
        rep.add(SCHED_TITLE, f"Not available: {prog if not os.path.exists(prog) else mbstudy} "
                "not found.")
        rep.target(SCHED_TARGET, "not predicted", None, "Scheduling")
        return
    py = "/usr/bin/python3"
    proto, why = sched_protocol(mbstudy)
    text = ["`benchmarks/sched_sim.py` is a discrete-event model of the study engine: rank 0's "
            "work counter (an MPI fetch-and-add served one request at a time, the requests of a "
            "rank's threads serialized by `omp critical`), the per-thread journals and rank 0's "
            "merger thread that writes the result file in sample order, startup and the "
            "collectives; its docstring lists what it leaves out. It replays measured per-sample "
            "times on virtual ranks × threads. mbstudy's counter protocol since 2026-11-28 is "
            "**guided1 + progress per chunk**: one fetch-and-add per chunk, sized from the "
            "thread's own last view of the counter, and one progress request per completed "
            "chunk (two requests per chunk at rank 0); before, it was **guided + progress per "
            "sample**: an `MPI_NO_OP` read and a fetch-and-add per chunk, and a progress "
            "request after every sample.", ""]
    keep = os.environ.get("MBS_SCHED_VALIDATE")   # a folder sched_validate.sh made before
    tmp = tempfile.mkdtemp()
    try:
        vdir, measured, notes = None, False, []
        if keep and os.path.isfile(os.path.join(keep, "runs.txt")):
            vdir, measured = keep, True
            notes.append(f"Measured runs: the folder MBS_SCHED_VALIDATE={keep} "
                         "(sched_validate.sh's, made before; not rerun).")
        elif not args.quick:
            vdir = os.path.join(args.build, "sched-validate")
            shutil.rmtree(vdir, ignore_errors=True)
            try:
                run(["sh", os.path.join(HERE, "sched_validate.sh"), mbstudy, vdir], rep,
                    timeout=3600)
                measured = True
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                notes.append("sched_validate.sh failed (" + str(e).strip().splitlines()[0] +
                             "): no validation; calibration from one short posture run.")
                vdir = None
        else:
            notes.append("--quick: no measured multi-rank runs (sched_validate.sh skipped), so "
                         "no validation; the per-sample times and the calibration are from one "
                         "posture sweep on a coarse grid (120 samples, 1 rank, 1 thread).")
        if vdir is None:
            vdir = tmp
            sched_mini_validation(args, rep, mbstudy, vdir)
        run([py, prog, "--validate", vdir, "--validate-as", proto], rep, timeout=1800)
        val = json.load(open(os.path.join(vdir, "validation.json")))
        calib_path = os.path.join(vdir, "calib.json")
        calib = json.load(open(calib_path))
        text += notes
        # ---- validation
        if measured:
            text += ["", "#### Validation: measured runs on this machine against the model", "",
                     f"`sched_validate.sh` ran each study with `mpiexec -n 1/2/3` (1 thread per "
                     f"rank; {os.cpu_count()} cores, so 3 ranks are oversubscribed) and "
                     f"`sched_sim.py --validate` predicted each run from the 1-rank run's "
                     f"per-sample times with the measured binary's protocol, **{proto}** "
                     f"({why}). The 1-rank row calibrates the startup (its error is 0 by "
                     "construction); 'own times': the run's own per-sample times replayed "
                     "(its load and oversubscription included), the scheduling and writing "
                     "model alone.", ""]
            rows = []
            for r in val["rows"]:
                rows.append([r["study"], r["ranks"], r["samples"], r["batches"],
                             f"{r['measured_wall']:.2f}", f"{r['predicted_wall']:.2f}",
                             f"{100 * r['error']:+.1f}%", f"{100 * r['measured_efficiency']:.1f}%",
                             f"{100 * r['predicted_efficiency']:.1f}%",
                             f"{r['predicted_wall_own_times']:.2f}",
                             f"{100 * r['error_own_times']:+.1f}%",
                             f"{r['sample_time_ratio']:.2f}",
                             f"{r['load_before']:.1f}–{r['load_after']:.1f}"])
            text.append(sched_table(
                ["study", "ranks", "samples", "batches", "measured s", "predicted s", "error",
                 "efficiency measured", "predicted", "predicted s (own times)", "error",
                 "sample time ×", "load"], rows, ["---"] + ["---:"] * 11 + ["---"]))
            multi = [r for r in val["rows"] if r["ranks"] > 1]
            if multi:
                worst = max(multi, key=lambda r: abs(r["error"]))
                own = max(multi, key=lambda r: abs(r["error_own_times"]))
                slow = max(r["sample_time_ratio"] / max(1.0, r["ranks"] / (os.cpu_count() or 1))
                           for r in multi)
                text.append(f"\nLargest error at 2–3 ranks: {100 * worst['error']:+.1f}% "
                            f"({worst['study']}, {worst['ranks']} ranks); with the runs' own "
                            f"per-sample times: {100 * own['error_own_times']:+.1f}% "
                            f"({own['study']}, {own['ranks']} ranks). 'sample time ×': the "
                            "run's summed per-sample times / the 1-rank run's; 'load': the "
                            "1-minute load average before and after the run." +
                            (f" Some runs' samples took up to {slow:.1f}× as long as in the 1-"
                             "rank run beyond what oversubscription explains: other work on "
                             "this shared machine slowed them, which the model (it assumes "
                             "free cores) cannot predict; the 'own times' column is the error "
                             "of the scheduling and writing model on what actually ran."
                             if slow > 1.2 else ""))
        for st, c in calib.items():
            if st.startswith("_"):
                continue
            text.append(f"- calibration {st} ({c['samples']} samples): journal "
                        f"{1e3 * c['journal']:.3g} ms/sample, merger {1e3 * c['merge']:.3g} "
                        f"ms/sample, end tail {1e3 * c['close']:.3g} ms/sample, startup "
                        f"{c['startup']:.3g} s, {c['record_bytes']} bytes per record")
        # ---- predictions
        if "posture" not in calib:
            raise RuntimeError("no posture run in " + vdir)
        times = calib["posture"]["times_file"]
        ranks = "64,1024,16384" if args.quick else "64,256,1024,4096,16384"
        nsamp = 100000 if args.quick else 1000000
        js = os.path.join(tmp, "predict.json")
        t0 = time.monotonic()
        p = run([py, prog, "--times", f"posture={times}", "--calib", calib_path, "--samples",
                 nsamp, "--ranks", ranks, "--threads", "1,4", "--policies",
                 ",".join(c for c, _ in SCHED_CASES), "--writer", "none,merger,pernode",
                 "--quiet", "--json", js], rep, timeout=3600)
        dt = time.monotonic() - t0
        res = json.load(open(js))["results"]
        m = re.search(r"# posture: .*?: (\d+) samples \((\d+) failed, (\d+) ended early\), "
                      r"mean (\S+) s, cv (\S+), max/mean (\S+),", p.stdout)
        dist = (f"{m.group(1)} samples, {m.group(3)} ended early by a fall, mean "
                f"{float(m.group(4)):.3g} s, coefficient of variation {m.group(5)}, max/mean "
                f"{m.group(6)}" if m else "?")
        mod = res[0]["model"]
        cell = {(r["ranks"], r["threads"], f"{r['policy']}+{r['count_done']}", r["writer"]): r
                for r in res}
        text += ["", f"#### Predictions: the posture sweep on up to {ranks.split(',')[-1]} "
                 "ranks", "",
                 f"{nsamp:,} virtual samples drawn from the per-sample times of "
                 f"`{os.path.basename(times)}` ({dist}); the cluster defaults of the model "
                 f"(remote fetch-and-add round trip {1e6 * mod['L']:.3g} µs, rank 0's service "
                 f"{1e6 * mod['s']:.3g} µs per request, node pools of {mod['node_ranks']} ranks) "
                 f"with the calibration above; simulated in {dt:.0f} s. Efficiency = summed "
                 "sample times / (ranks × "
                 "threads × wall time). Writers: none (the scheduling alone), merger "
                 "(mbstudy's: rank 0 writes every sample), pernode (proposed: one indexed "
                 f"writer per {mod['node_ranks']} ranks, the output in node parts).", ""]
        for wr, title in [("none", "writer none (the scheduling alone)"),
                          ("merger", "writer merger (mbstudy's writing as it is)"),
                          ("pernode", "writer pernode (proposed)")]:
            rows = []
            for T in (1, 4):
                for P in [int(x) for x in ranks.split(",")]:
                    cs = [cell.get((P, T, c, wr)) for c, _ in SCHED_CASES]
                    if not all(cs):
                        continue
                    today = cs[1]
                    rows.append([P, T] + [f"{100 * c['efficiency']:.1f}%" for c in cs] +
                                [f"{100 * cs[0]['counter_utilization']:.0f}% → "
                                 f"{100 * today['counter_utilization']:.0f}%",
                                 f"{cs[0]['counter_requests'] / cs[0]['samples']:.2f} → "
                                 f"{today['counter_requests'] / today['samples']:.2f}",
                                 today["limiter"]])
            text += [f"Predicted efficiency with {title}:", "", sched_table(
                ["ranks", "threads"] + [d for _, d in SCHED_CASES] +
                ["rank 0's counter busy (before → today)", "requests per sample (before → "
                 "today)", "largest loss (today)"], rows, ["---:"] * 5 + ["---:", "---:", "---"]),
                ""]
        # ---- the target: mbstudy as it is today (guided1 + per chunk, its merger)
        figs, sched_figs, oks = [], [], []
        for P, lim in [(1024, 0.9), (16384, 0.8)]:
            for T in (1, 4):
                r = cell.get((P, T, "guided1+chunk", "merger"))
                s = cell.get((P, T, "guided1+chunk", "none"))
                if r is None or s is None:
                    continue
                oks.append(r["efficiency"] >= lim)
                figs.append(f"{P} × {T}: {100 * r['efficiency']:.1f}%")
                sched_figs.append(f"{P} × {T}: {100 * s['efficiency']:.1f}%")
        met = all(oks) if len(oks) == 4 else None
        figure = ("mbstudy today (guided1 + progress per chunk, merger; ranks × threads): " +
                  ", ".join(figs) + "; the scheduling alone (writer none): " +
                  ", ".join(sched_figs) + (f" (--quick: {nsamp:,} samples)" if args.quick
                                           else ""))
        rep.target(SCHED_TARGET, figure if figs else "not predicted", met, "Scheduling")
        text += [f"Target ({SCHED_TARGET}), judged for mbstudy as it is today (guided1 + "
                 "progress per chunk, writer merger, 1 and 4 threads per rank): "
                 f"{'met' if met else 'not met' if met is False else 'not predicted'}: "
                 f"{figure}."]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.add(SCHED_TITLE, "\n".join(text))


# ------------------------------------------------------------------ report

TARGET_WHERE = {"core": "Core", "fig3": "Integration", "batch": "Batched", "muscles": "Muscles",
                "io": "I/O", "memory": "Memory", "studies": "Studies", "sched": "Scheduling"}


def read_previous(path):
    """The sections, targets and commands of an earlier report (for --update)."""
    prev = {"header": "", "parts": [], "targets": [], "commands": []}
    text = open(path).read()
    blocks = re.split(r"(?m)^## ", text)
    prev["header"] = blocks[0]
    for b in blocks[1:]:
        title, _, body = b.partition("\n")
        body = body.strip("\n")
        if title == "Machine and builds":
            prev["machine"] = body
        elif title == "Targets":
            for line in body.splitlines():
                cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
                if len(cells) == 4 and cells[0] not in ("target", "---"):
                    met = {"yes": True, "**no**": False}.get(cells[2])
                    prev["targets"].append((cells[0], cells[1], met, cells[3]))
        elif title == "Commands":
            m = re.search(r"```\n(.*?)```", body, re.S)
            prev["commands"] = m.group(1).strip("\n").splitlines() if m else []
        else:
            prev["parts"].append((title, body))
    return prev


def merge_previous(prev, rep0, only):
    """A copy of rep0 with the sections not run this time taken from prev."""
    rep = Report()
    rep.targets, rep.parts, rep.commands = list(rep0.targets), list(rep0.parts), list(rep0.commands)
    if prev is None:
        return rep
    where = {TARGET_WHERE[s] for s in only}
    targets = [t for t in prev["targets"] if t[3] not in where]
    rep.targets = targets + rep.targets
    new_titles = {t for t, _ in rep.parts}
    parts = []
    for title, body in prev["parts"]:
        if title in new_titles:
            parts += [p for p in rep.parts if p[0] == title]
            new_titles.discard(title)
        else:
            parts.append((title, body))
    parts += [p for p in rep.parts if p[0] in new_titles]
    rep.parts = parts
    rep.commands = prev["commands"] + rep.commands
    return rep


def portable(text, shared=None):
    """The report's text with this machine's paths made relative to the repository (and
    temporary folders named $TMP), so that it reads the same wherever it was made."""
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/tmp[A-Za-z0-9_]+", "$TMP", text)
    if shared:
        text = text.replace(os.path.abspath(shared), os.path.relpath(shared, ROOT))
    text = re.sub(re.escape(ROOT) + r"/(?=[\w.-])", "", text)
    text = re.sub(re.escape(ROOT) + r"(?=[\s`'\"),]|$)", ".", text)
    return re.sub(r"\./build/io-[A-Za-z0-9_]+|build(?:-bench)?/(io|mem)-[A-Za-z0-9_]+",
                  lambda m: m.group(0).rsplit("-", 1)[0] + "-$TMP", text)


def write_report(path, facts, builds, rep, args, started):
    lines = ["# mbstudy benchmarks", "",
             f"Written by `{' '.join(shlex.quote(a) for a in ['benchmarks/run_all.py'] + sys.argv[1:])}` on "
             f"{facts['date']} in {time.time() - started:.0f} s. "
             + ("**--quick: shortened runs to check the command; not figures to quote.**"
                if args.quick else "")
             + (f" Sections rerun: {args.only}; the others are from the report before."
                if args.update else ""), "",
             "## Machine and builds", "",
             f"- CPU: {facts['cpu']}, {facts['cpus']} online CPUs ({facts['simd']}), "
             f"memory {facts['memory']}",
             f"- system: {facts['os']}, Linux {facts['kernel']}",
             f"- mbstudy: git {facts['git']}, CMake Release, C flags `{builds['cflags']}` + LTO; "
             f"compiler: {facts['cc']}",
             f"- Simbody (Debian): Debian's prebuilt libsimbody (built without NDEBUG: its debug "
             f"checks are on)",
             "- Simbody (Release): " + (builds.get("sbrel_how") or
                                        f"not available: {builds.get('sbrel_why')}"),
             "- MuJoCo: Debian's prebuilt libmujoco", "",
             "The machine is shared: figures are medians of interleaved repeats, and the spread "
             "says how steady each was.", "", "## Targets", "",
             "| target | measured | met | section |", "|---|---|---|---|"]
    for what, fig, met, where in rep.targets:
        m = "yes" if met else ("not measured" if met is None else "**no**")
        lines.append(f"| {what} | {fig} | {m} | {where} |")
    for title, text in rep.parts:
        lines += ["", f"## {title}", "", text]
    lines += ["", "## Commands", "", "Every command that produced a figure above, in order:", "",
              "```"] + rep.commands + ["```", ""]
    with open(path, "w") as f:
        f.write(portable("\n".join(lines), args.shared))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--no-simbody-release", action="store_true")
    ap.add_argument("--update", action="store_true",
                    help="rerun the --only sections and keep the others of an existing --out")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.shared = os.path.abspath(args.shared)
    only = [s for s in args.only.split(",") if s]
    bad = [s for s in only if s not in SECTIONS]
    if bad:
        ap.error(f"unknown section(s) {', '.join(bad)}; known: {', '.join(SECTIONS)}")
    started = time.time()
    prev = read_previous(args.out) if args.update and os.path.exists(args.out) else None
    facts = machine_facts()
    rep = Report()
    builds = {"cflags": build_mbstudy(args, rep)}
    if not args.no_simbody_release and ("core" in only or "fig3" in only):
        try:
            bb, how = build_simbody_release(args, rep)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            bb, how = None, f"the build failed: {str(e).strip().splitlines()[0]}"
        if bb:
            builds["sbrel"], builds["sbrel_how"] = bb, how
        else:
            builds["sbrel_why"] = how
    elif args.no_simbody_release:
        builds["sbrel_why"] = "--no-simbody-release"
    for s in SECTIONS:
        if s not in only:
            continue
        log(f"section {s}")
        try:
            globals()[f"section_{s}"](args, rep, builds)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            rep.add(f"{s}: FAILED", "```\n" + str(e)[-4000:] + "\n```")
            log(f"section {s} failed: {str(e)[:300]}")
        # nothing lost on a stop
        write_report(args.out, facts, builds, merge_previous(prev, rep, only), args, started)
    write_report(args.out, facts, builds, merge_previous(prev, rep, only), args, started)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
