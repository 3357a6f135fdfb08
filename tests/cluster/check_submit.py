#!/usr/bin/python3
"""`mbstudy submit` without a scheduler: the batch scripts by content (Slurm and PBS, plain and
array jobs), hostile strings refused or quoted, and the files it writes.

    check_submit.py MBSTUDY SPEC

- Slurm and PBS scripts (--dry-run) hold the resources, time limit, warning (Slurm's
  --signal=B:USR1@W; for PBS the script's own timer at the limit less W), array range, launcher
  with the right rank count, --part per task, the chaining command and the last part's merge;
  every script passes `bash -n`;
- every user-supplied string that reaches a script is validated (partition, account, memory,
  time, modules, launcher: exit 2 with a message naming the option) or single-quoted (paths):
  a study and an output whose paths hold quotes and $(...) run from the generated script
  without running anything else;
- a submission (to a stand-in qsub on PATH) under umask 000 writes the script and the jobs file
  without write permission for others, records the job id, and does not replace an existing
  result without --force.
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
        print("FAIL:", what)


def run(args, env=None, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)


def main():
    mbstudy, spec = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    base = [mbstudy, "submit", spec, "--nodes", "2", "--ranks-per-node", "4", "--threads", "2",
            "--time", "01:30:00", "--dry-run"]
    with tempfile.TemporaryDirectory(prefix="mbs_submit_") as tmp:
        out = os.path.join(tmp, "study.h5")
        # Slurm
        r = run(base + ["--scheduler", "slurm", "--partition", "short", "--account", "proj-1",
                        "--mem", "8G", "--output", out, "--module", "openmpi/4.1",
                        "--module", "hdf5"])
        check(r.returncode == 0, f"slurm dry run: {r.stderr}")
        s = r.stdout
        for line in ("#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4",
                     "#SBATCH --cpus-per-task=2", "#SBATCH --time=01:30:00",
                     "#SBATCH --signal=B:USR1@120", "#SBATCH --partition=short",
                     "#SBATCH --account=proj-1", "#SBATCH --mem=8G",
                     f"#SBATCH --output={out}.slurm-%j.log", "module load openmpi/4.1",
                     "module load hdf5", "set -- mpirun -n 8 \"$@\"",
                     "export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1",
                     "sbatch --parsable --export=ALL,MBS_CHAIN=$next", "--resume"):
            check(line in s, f"slurm script lacks '{line}'")
        check('--part "' not in s and "merge" not in s, "a plain job's script has parts")
        check(not os.path.exists(out + ".slurm.sh"), "--dry-run wrote the script")
        scripts = {"slurm": s}
        r = run(base + ["--scheduler", "slurm", "--array", "3", "--launcher", "srun",
                        "--output", out])
        s = r.stdout
        for line in ("#SBATCH --array=0-2", f"#SBATCH --output={out}.slurm-%A_%a.log",
                     "set -- \"$@\" --part \"$part/3\"", "set -- srun -n 8 \"$@\"",
                     "merge \"$spec\" --output \"$out\" --if-complete"):
            check(line in s, f"slurm array script lacks '{line}'")
        scripts["slurm array"] = s
        # PBS: no warning signal of its own, so a timer at 5400 - 300 s
        r = run(base + ["--scheduler", "pbs", "--partition", "workq", "--account", "a1",
                        "--mem", "4G", "--array", "4", "--warn", "300", "--output", out])
        check(r.returncode == 0, f"pbs dry run: {r.stderr}")
        s = r.stdout
        for line in ("#PBS -l select=2:ncpus=8:mpiprocs=4:ompthreads=2:mem=4G",
                     "#PBS -l walltime=01:30:00", "#PBS -q workq", "#PBS -A a1", "#PBS -J 0-3",
                     f"#PBS -o {out}.pbs.log", "sleep 5100 & s=$!; wait \"$s\" && kill -USR1 $$",
                     "part=${MBS_PART:-${PBS_ARRAY_INDEX:-}}", "set -- mpirun -n 8 \"$@\"",
                     "qsub -v MBS_CHAIN=$next,MBS_PART=$part \"$script\"",
                     "--if-complete"):
            check(line in s, f"pbs script lacks '{line}'")
        scripts["pbs"] = s
        for name, text in scripts.items():
            p = os.path.join(tmp, "syntax.sh")
            with open(p, "w") as f:
                f.write(text)
            r = run(["bash", "-n", p])
            check(r.returncode == 0, f"{name} script: bash -n: {r.stderr}")
        print(f"scripts: {len(scripts)} by content and bash -n")

        # refusals, each naming its option
        bad = [(["--partition", "a;b"], "--partition"), (["--account", "$(id)"], "--account"),
               (["--partition", "-x"], "--partition"), (["--mem", "4G;rm"], "--mem"),
               (["--time", "1:00"], "--time"), (["--time", "00:61:00"], "--time"),
               (["--module", "a b"], "--module"), (["--module", "x`id`"], "--module"),
               (["--launcher", "sh"], "--launcher"), (["--warn", "6000"], "--warn"),
               (["--nodes", "0"], "--nodes"), (["--array", "x"], "--array")]
        for extra, opt in bad:
            r = run(base + ["--scheduler", "slurm", "--output", out] + extra)
            check(r.returncode == 2 and opt in r.stderr,
                  f"{extra}: exit {r.returncode}, '{r.stderr.strip()}'")
        r = run(base + ["--scheduler", "lsf", "--output", out])
        check(r.returncode == 2 and "--scheduler" in r.stderr, "--scheduler lsf accepted")
        r = run(base[:3] + ["--scheduler", "slurm"])
        check(r.returncode == 2, "submit without resources accepted")
        r = run([mbstudy, "submit", os.path.join(tmp, "none.yaml")] + base[3:] +
                ["--scheduler", "slurm"])
        check(r.returncode == 1 and "none.yaml" in r.stderr, f"missing spec: {r.stderr}")
        # Slurm's #SBATCH --output takes no quotes: an output with blanks is refused there
        r = run(base + ["--scheduler", "slurm", "--output", os.path.join(tmp, "a b.h5")])
        check(r.returncode == 1 and "blanks" in r.stderr, f"slurm output with a blank: {r.stderr}")
        print(f"refusals: {len(bad) + 4}")

        # hostile paths, quoted: the PBS script run by bash runs the study and nothing else
        weird = os.path.join(tmp, "d'$(touch PWNED1)`touch PWNED2`")
        os.mkdir(weird)
        wspec = os.path.join(weird, "s'$(touch PWNED3).yaml")
        shutil.copy(spec, wspec)
        wout = os.path.join(weird, "o';touch PWNED4;'.h5")
        r = run([mbstudy, "submit", wspec, "--scheduler", "pbs", "--nodes", "1",
                 "--ranks-per-node", "1", "--threads", "1", "--time", "00:10:00",
                 "--output", wout, "--dry-run"])
        check(r.returncode == 0, f"hostile paths refused for PBS: {r.stderr}")
        script = os.path.join(tmp, "run.sh")
        with open(script, "w") as f:
            f.write(r.stdout)
        env = dict(os.environ, PBS_JOBID="1.test", OPENBLAS_NUM_THREADS="1")
        r = run(["bash", script], env=env, cwd=tmp)
        check(r.returncode == 0, f"the PBS script did not run the study: {r.stdout} {r.stderr}")
        check(os.path.isfile(wout), "the study's result is not at its hostile path")
        pwned = [n for n in ("PWNED1", "PWNED2", "PWNED3", "PWNED4")
                 if os.path.exists(os.path.join(tmp, n)) or os.path.exists(os.path.join(weird, n))]
        check(not pwned, f"the script ran injected commands: {pwned}")
        print("hostile paths: quoted; the script ran the study and nothing else")

        # a submission to a stand-in qsub under umask 000
        bin_dir = os.path.join(tmp, "bin")
        os.mkdir(bin_dir)
        with open(os.path.join(bin_dir, "qsub"), "w") as f:
            f.write("#!/bin/sh\necho 4242.pbs-server\n")
        os.chmod(os.path.join(bin_dir, "qsub"), 0o755)
        env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"])
        sub = [mbstudy, "submit", spec, "--scheduler", "pbs", "--nodes", "1",
               "--ranks-per-node", "1", "--threads", "1", "--time", "00:10:00", "--output", out]
        old = os.umask(0)
        try:
            r = run(sub, env=env)
        finally:
            os.umask(old)
        check(r.returncode == 0 and r.stdout.strip() == "4242.pbs-server",
              f"submit to the stand-in qsub: {r.returncode} '{r.stdout}' '{r.stderr}'")
        for p in (out + ".pbs.sh", out + ".jobs"):
            if os.path.exists(p):
                mode = stat.S_IMODE(os.stat(p).st_mode)
                check(not mode & stat.S_IWOTH, f"{p}: mode {oct(mode)} is world-writable")
            else:
                check(False, f"{p} not written")
        if os.path.exists(out + ".jobs"):
            with open(out + ".jobs") as f:
                text = f.read()
            check("job\t4242.pbs-server\t" in text and "scheduler\tpbs" in text,
                  f"jobs file: {text}")
        # an existing result is never replaced without --force
        with open(out, "w") as f:
            f.write("result")
        r = run(sub, env=env)
        check(r.returncode == 1 and "--force" in r.stderr, f"existing result: {r.stderr}")
        with open(out) as f:
            check(f.read() == "result", "the existing result was touched")
        print("submission: job recorded, files not world-writable, results kept")
    if problems:
        print(f"{len(problems)} problem(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
