// `mbstudy submit`, `mbstudy status` and `mbstudy cancel`: a study on a cluster through Slurm
// or PBS (submit_cmd.h).
//
// submit checks the study (its plan, as `run` would make it), writes a batch script next to
// the output (`<output>.slurm.sh` or `.pbs.sh`), submits it and records the job in
// `<output>.jobs`, a text file of tab-separated lines the scripts append to as well:
//
//   scheduler <tab> slurm|pbs          spec <tab> PATH            samples <tab> N
//   script <tab> PATH                  parts <tab> K (array jobs)
//   job <tab> ID <tab> EPOCH <tab> submitted|chained N|merge
//   started <tab> ID <tab> EPOCH <tab> PART       ended <tab> ID <tab> EPOCH <tab> EXIT_CODE
//   cancelled <tab> ID <tab> EPOCH
//
// The script runs `mbstudy run` (under mpirun with several ranks; `--part` in an array job) and
// asks for a warning signal before the time limit (Slurm: --signal=B:USR1@W; PBS has none, so
// the script sets its own timer); the signal goes to mbstudy, which writes its journals and
// stops (exit 3); the script then submits itself again to go on (`--resume`), up to
// --max-chain times. In an array job every part is a task; the last part to finish merges
// (`mbstudy merge --if-complete`), so chained parts need no dependency. Every user-supplied
// string that reaches the script or a command line is validated (names, partitions, accounts,
// memory, times, modules) or single-quoted (paths); no shell ever sees an unquoted one.
#define _GNU_SOURCE  // open_memstream, realpath
#include "submit_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../studies/journal.h"
#include "mbs/spec.h"
#include "mbs/study.h"
#include "mbs/version.h"

enum { SCHED_SLURM, SCHED_PBS };

typedef struct submit_opts {
  const char* spec;
  const char* output;
  int scheduler;
  int nodes, ranks_per_node, threads, array, max_chain, warn;
  long seconds;
  const char *time, *partition, *account, *mem, *launcher;
  const char* modules[16];
  int nmodules;
  int dry_run, force;
} submit_opts;

//---------------------------------- validation and quoting -------------------------------------

// a word that may stand unquoted in a script and on a command line: letters, digits and . _ -
// (and / + for module names), not starting with '-'
static int valid_word(const char* s, int module) {
  if (!s || !*s || strlen(s) > 128 || s[0] == '-') return 0;
  for (const char* p = s; *p; p++) {
    const char c = *p;
    const int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-' || (module && (c == '/' || c == '+'));
    if (!ok) return 0;
  }
  return 1;
}

// [D-]HH:MM:SS, as both schedulers take it; *seconds the limit
static int valid_time(const char* s, long* seconds) {
  long d = 0, h, m, sec;
  char tail;
  int n;
  if (strchr(s, '-')) {
    if (sscanf(s, "%ld-%ld:%ld:%ld%n", &d, &h, &m, &sec, &n) != 4 || s[n] || d < 0) return 0;
  } else if (sscanf(s, "%ld:%ld:%ld%c", &h, &m, &sec, &tail) != 3) {
    return 0;
  }
  for (const char* p = s; *p; p++)
    if (!((*p >= '0' && *p <= '9') || *p == ':' || *p == '-')) return 0;
  if (h < 0 || m < 0 || m > 59 || sec < 0 || sec > 59) return 0;
  *seconds = ((d * 24 + h) * 60 + m) * 60 + sec;
  return *seconds > 0;
}

// a memory amount: digits and one unit letter (K, M, G, T), e.g. 4G
static int valid_mem(const char* s) {
  const char* p = s;
  while (*p >= '0' && *p <= '9') p++;
  if (p == s || p - s > 12) return 0;
  if (*p && strchr("KMGTkmgt", *p)) p++;
  if (*p == 'B' || *p == 'b') p++;
  return *p == 0;
}

// no control characters (a line break would end a script line)
static int printable(const char* s) {
  for (const unsigned char* p = (const unsigned char*)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return 0;
  return 1;
}

// s in single quotes for a POSIX shell ('\'' for a quote inside)
static void put_quoted(FILE* f, const char* s) {
  fputc('\'', f);
  for (const char* p = s; *p; p++) {
    if (*p == '\'') fputs("'\\''", f);
    else fputc(*p, f);
  }
  fputc('\'', f);
}

// an absolute path for a file that may not exist yet (its folder must)
static char* absolute_path(const char* path) {
  char* full = realpath(path, NULL);
  if (full) return full;
  const char* slash = strrchr(path, '/');
  char* dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) : strdup(".");
  char* rdir = dir ? realpath(dir, NULL) : NULL;
  char* out = rdir ? mbs_format_string("%s/%s", rdir, slash ? slash + 1 : path) : NULL;
  free(dir);
  free(rdir);
  return out;
}

//---------------------------------- running the scheduler's commands --------------------------

// run argv (no shell); its standard output (and with both, its error output) in *out (free
// it); the exit status, -1 if it could not be started
static int run_command_to(char* const* argv, char** out, int both) {
  *out = NULL;
  int fd[2];
  if (pipe(fd) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fd[1], 1);
    if (both) dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t len = 0, cap = 256;
  char* buf = malloc(cap);
  for (;;) {
    if (buf && len + 128 > cap) {
      char* b = realloc(buf, cap *= 2);
      if (!b) {
        free(buf);
        buf = NULL;
      }
      buf = b;
    }
    char tmp[128];
    const ssize_t n = read(fd[0], buf ? buf + len : tmp, 127);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (buf) len += (size_t)n;
  }
  close(fd[0]);
  if (buf) buf[len] = 0;
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  *out = buf;
  if (!WIFEXITED(st)) return -1;
  return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
}

static int run_command(char* const* argv, char** out) {
  return run_command_to(argv, out, 0);
}

//---------------------------------- the jobs file ----------------------------------------------

typedef struct job_rec {
  char id[64];
  char what[64];
  long when;
} job_rec;

typedef struct jobs_file {
  int scheduler;
  char spec[PATH_MAX], script[PATH_MAX];
  long samples;
  int parts;
  job_rec jobs[256];
  int njobs;
  long last_start;  // the latest 'started' time
  int running_starts;
} jobs_file;

static int read_jobs(const char* path, jobs_file* J) {
  memset(J, 0, sizeof(*J));
  J->scheduler = -1;
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[PATH_MAX + 200];
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = 0;
    char* v = strchr(line, '\t');
    if (!v) continue;
    *v++ = 0;
    if (!strcmp(line, "scheduler")) J->scheduler = !strcmp(v, "pbs") ? SCHED_PBS : SCHED_SLURM;
    else if (!strcmp(line, "spec")) snprintf(J->spec, sizeof(J->spec), "%s", v);
    else if (!strcmp(line, "script")) snprintf(J->script, sizeof(J->script), "%s", v);
    else if (!strcmp(line, "samples")) J->samples = atol(v);
    else if (!strcmp(line, "parts")) J->parts = atoi(v);
    else if (!strcmp(line, "job") && J->njobs < 256) {
      job_rec* j = &J->jobs[J->njobs++];
      char* w = strchr(v, '\t');
      if (w) *w++ = 0;
      snprintf(j->id, sizeof(j->id), "%s", v);
      char* x = w ? strchr(w, '\t') : NULL;
      if (x) *x++ = 0;
      j->when = w ? atol(w) : 0;
      snprintf(j->what, sizeof(j->what), "%s", x ? x : "");
    } else if (!strcmp(line, "started")) {
      char* w = strchr(v, '\t');
      if (w && atol(w + 1) > J->last_start) J->last_start = atol(w + 1);
    }
  }
  fclose(f);
  return J->scheduler >= 0;
}

//---------------------------------- the batch script -------------------------------------------

static void script_common_tail(FILE* f, const submit_opts* o, const char* mbstudy,
                               const char* spec, const char* out, const char* script) {
  const int ranks = o->nodes * o->ranks_per_node;
  const int slurm = o->scheduler == SCHED_SLURM;
  fputs("set -u\n", f);
  for (int i = 0; i < o->nmodules; i++) fprintf(f, "module load %s\n", o->modules[i]);
  fputs("mbstudy=", f);
  put_quoted(f, mbstudy);
  fputs("\nspec=", f);
  put_quoted(f, spec);
  fputs("\nout=", f);
  put_quoted(f, out);
  fputs("\nscript=", f);
  put_quoted(f, script);
  fprintf(f, "\njobs=\"$out.jobs\"\nmax_chain=%d\nchain=${MBS_CHAIN:-0}\n", o->max_chain);
  fprintf(f, "export OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=1\n", o->threads);
  if (slurm) {
    fputs("job=$SLURM_JOB_ID\n", f);
    fputs("part=${MBS_PART:-${SLURM_ARRAY_TASK_ID:-}}\n", f);
  } else {
    fputs("job=$PBS_JOBID\n", f);
    fputs("part=${MBS_PART:-${PBS_ARRAY_INDEX:-}}\n", f);
    fputs("cd \"$(dirname \"$out\")\" || exit 1\n", f);
  }
  fputs("printf 'started\\t%s\\t%s\\t%s\\n' \"$job\" \"$(date +%s)\" \"$part\" >> \"$jobs\"\n",
        f);
  fprintf(f, "set -- \"$mbstudy\" run \"$spec\" --output \"$out\" --threads %d\n", o->threads);
  if (o->array > 1) {
    fprintf(f, "set -- \"$@\" --part \"$part/%d\"\n", o->array);
  } else {
    fputs("if [ -d \"$out.parts\" ]; then set -- \"$@\" --resume; fi\n", f);
  }
  if (ranks > 1) {
    if (!strcmp(o->launcher, "srun")) fprintf(f, "set -- srun -n %d \"$@\"\n", ranks);
    else fprintf(f, "set -- mpirun -n %d \"$@\"\n", ranks);
  }
  // the warning goes to mbstudy (through mpirun, which passes SIGUSR1 on to the ranks)
  fputs("warned=0\n"
        "trap 'warned=1; kill -USR1 \"$pid\" 2>/dev/null' USR1\n"
        "\"$@\" &\n"
        "pid=$!\n",
        f);
  if (!slurm)  // PBS sends no warning: the script's own timer
    fprintf(f, "( trap 'kill \"$s\" 2>/dev/null; exit 0' TERM; sleep %ld & s=$!; wait \"$s\" && "
               "kill -USR1 $$ ) < /dev/null > /dev/null 2>&1 &\ntimer=$!\n",
            o->seconds > o->warn ? o->seconds - o->warn : 1);
  fputs("wait \"$pid\"\n"
        "rc=$?\n"
        "while [ \"$rc\" -gt 128 ] && kill -0 \"$pid\" 2>/dev/null; do wait \"$pid\"; rc=$?; done\n",
        f);
  if (!slurm) fputs("kill \"$timer\" 2>/dev/null\n", f);
  fputs("printf 'ended\\t%s\\t%s\\t%s\\n' \"$job\" \"$(date +%s)\" \"$rc\" >> \"$jobs\"\n", f);
  // at the time limit: the same script again, going on from the journals
  fputs("if [ \"$rc\" -eq 3 ] && [ \"$warned\" -eq 1 ]; then\n"
        "  if [ \"$chain\" -ge \"$max_chain\" ]; then\n"
        "    echo \"mbstudy: $max_chain chained jobs and the study is not done; submit again "
        "with more time\" >&2\n"
        "    exit 3\n"
        "  fi\n"
        "  next=$((chain + 1))\n",
        f);
  if (slurm)
    fputs("  new=$(sbatch --parsable --export=ALL,MBS_CHAIN=$next,MBS_PART=$part "
          "\"$script\") || exit 3\n"
          "  new=${new%%;*}\n",
          f);
  else
    fputs("  new=$(qsub -v MBS_CHAIN=$next,MBS_PART=$part \"$script\") || exit 3\n", f);
  fputs("  printf 'job\\t%s\\t%s\\tchained %s\\n' \"$new\" \"$(date +%s)\" \"$next\" >> "
        "\"$jobs\"\n"
        "  echo \"mbstudy: time limit near: the study goes on in job $new\"\n"
        "  exit 0\n"
        "fi\n",
        f);
  if (o->array > 1)  // the last part to finish merges
    fputs("if [ \"$rc\" -eq 0 ]; then\n"
          "  \"$mbstudy\" merge \"$spec\" --output \"$out\" --if-complete --quiet\n"
          "  rc=$?\n"
          "fi\n",
          f);
  fputs("exit \"$rc\"\n", f);
}

static char* make_script(const submit_opts* o, const char* mbstudy, const char* spec,
                         const char* out, const char* script, const char* name) {
  char* text = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  if (!f) return NULL;
  const int slurm = o->scheduler == SCHED_SLURM;
  fprintf(f, "#!/bin/bash\n# written by `mbstudy submit` (mbstudy %s): the study ", MBS_VERSION_STRING);
  put_quoted(f, spec);
  fputs(" into ", f);
  put_quoted(f, out);
  fputc('\n', f);
  if (slurm) {
    fprintf(f, "#SBATCH --job-name=mbs-%s\n", name);
    fprintf(f, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=%d\n#SBATCH --cpus-per-task=%d\n",
            o->nodes, o->ranks_per_node, o->threads);
    fprintf(f, "#SBATCH --time=%s\n#SBATCH --signal=B:USR1@%d\n", o->time, o->warn);
    if (o->partition) fprintf(f, "#SBATCH --partition=%s\n", o->partition);
    if (o->account) fprintf(f, "#SBATCH --account=%s\n", o->account);
    if (o->mem) fprintf(f, "#SBATCH --mem=%s\n", o->mem);
    if (o->array > 1) fprintf(f, "#SBATCH --array=0-%d\n", o->array - 1);
    // the log next to the output (#SBATCH lines take no quotes: the path is checked plain)
    fprintf(f, "#SBATCH --output=%s.slurm-%s.log\n#SBATCH --open-mode=append\n", out,
            o->array > 1 ? "%A_%a" : "%j");
  } else {
    fprintf(f, "#PBS -N mbs-%s\n", name);
    fprintf(f, "#PBS -l select=%d:ncpus=%d:mpiprocs=%d:ompthreads=%d%s%s\n", o->nodes,
            o->ranks_per_node * o->threads, o->ranks_per_node, o->threads, o->mem ? ":mem=" : "",
            o->mem ? o->mem : "");
    fprintf(f, "#PBS -l walltime=%s\n", o->time);
    if (o->partition) fprintf(f, "#PBS -q %s\n", o->partition);
    if (o->account) fprintf(f, "#PBS -A %s\n", o->account);
    if (o->array > 1) fprintf(f, "#PBS -J 0-%d\n", o->array - 1);
    fprintf(f, "#PBS -j oe\n#PBS -o %s.pbs.log\n#PBS -r y\n", out);
  }
  script_common_tail(f, o, mbstudy, spec, out, script);
  fclose(f);
  return text;
}

//---------------------------------- submit -----------------------------------------------------

static int parse_int(const char* opt, const char* s, int lo, int hi, int* v) {
  char* end;
  errno = 0;
  const long x = strtol(s, &end, 10);
  if (errno || end == s || *end || x < lo || x > hi) {
    fprintf(stderr, "mbstudy submit: %s expects a whole number from %d to %d, got '%s'\n", opt,
            lo, hi, s);
    return 0;
  }
  *v = (int)x;
  return 1;
}

#define SUBMIT_USAGE                                                                           \
  "usage: mbstudy submit SPEC.yaml --scheduler slurm|pbs --nodes N --ranks-per-node R\n"       \
  "         --threads T --time [D-]HH:MM:SS [--partition P] [--account A] [--mem M]\n"          \
  "         [--array K] [--output FILE.h5] [--module NAME]... [--launcher mpirun|srun]\n"       \
  "         [--warn SECONDS (120)] [--max-chain N (10)] [--dry-run] [--force]\n"

int mbs_cmd_submit(int argc, char** argv) {
  submit_opts o;
  memset(&o, 0, sizeof(o));
  o.scheduler = -1;
  o.array = 1;
  o.max_chain = 10;
  o.warn = 120;
  o.launcher = "mpirun";
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1;
    if (!strcmp(a, "--dry-run")) o.dry_run = 1;
    else if (!strcmp(a, "--force")) o.force = 1;
    else if (!strcmp(a, "--help")) {
      fputs(SUBMIT_USAGE, stdout);
      return 0;
    } else if (a[0] == '-' && !v) {
      fprintf(stderr, "mbstudy submit: %s needs a value\n" SUBMIT_USAGE, a);
      return 2;
    } else if (!strcmp(a, "--scheduler")) {
      i++;
      if (!strcmp(v, "slurm")) o.scheduler = SCHED_SLURM;
      else if (!strcmp(v, "pbs")) o.scheduler = SCHED_PBS;
      else {
        fprintf(stderr, "mbstudy submit: --scheduler is slurm or pbs, not '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--nodes")) ok = parse_int(a, argv[++i], 1, 100000, &o.nodes);
    else if (!strcmp(a, "--ranks-per-node")) ok = parse_int(a, argv[++i], 1, 4096, &o.ranks_per_node);
    else if (!strcmp(a, "--threads")) ok = parse_int(a, argv[++i], 1, 1024, &o.threads);
    else if (!strcmp(a, "--array")) ok = parse_int(a, argv[++i], 1, 100000, &o.array);
    else if (!strcmp(a, "--max-chain")) ok = parse_int(a, argv[++i], 0, 1000, &o.max_chain);
    else if (!strcmp(a, "--warn")) ok = parse_int(a, argv[++i], 1, 86400, &o.warn);
    else if (!strcmp(a, "--time")) o.time = argv[++i];
    else if (!strcmp(a, "--partition")) o.partition = argv[++i];
    else if (!strcmp(a, "--account")) o.account = argv[++i];
    else if (!strcmp(a, "--mem")) o.mem = argv[++i];
    else if (!strcmp(a, "--output")) o.output = argv[++i];
    else if (!strcmp(a, "--launcher")) o.launcher = argv[++i];
    else if (!strcmp(a, "--module")) {
      if (o.nmodules == 16) {
        fprintf(stderr, "mbstudy submit: at most 16 --module\n");
        return 2;
      }
      o.modules[o.nmodules++] = argv[++i];
    } else if (a[0] != '-' && !o.spec) o.spec = a;
    else {
      fprintf(stderr, "mbstudy submit: unknown option '%s'\n" SUBMIT_USAGE, a);
      return 2;
    }
    if (!ok) return 2;
  }
  if (!o.spec || o.scheduler < 0 || !o.nodes || !o.ranks_per_node || !o.threads || !o.time) {
    fprintf(stderr, "mbstudy submit: SPEC, --scheduler, --nodes, --ranks-per-node, --threads and "
                    "--time are required\n" SUBMIT_USAGE);
    return 2;
  }
  // every string that reaches the script: validated, or a path quoted
  if (!valid_time(o.time, &o.seconds)) {
    fprintf(stderr, "mbstudy submit: --time '%s' is not [D-]HH:MM:SS\n", o.time);
    return 2;
  }
  struct {
    const char* what;
    const char* v;
  } words[] = {{"--partition", o.partition}, {"--account", o.account}};
  for (int k = 0; k < 2; k++)
    if (words[k].v && !valid_word(words[k].v, 0)) {
      fprintf(stderr, "mbstudy submit: %s '%s': only letters, digits, '.', '_' and '-' "
                      "are accepted\n", words[k].what, words[k].v);
      return 2;
    }
  if (o.mem && !valid_mem(o.mem)) {
    fprintf(stderr, "mbstudy submit: --mem '%s' is not an amount such as 4G or 500M\n", o.mem);
    return 2;
  }
  for (int k = 0; k < o.nmodules; k++)
    if (!valid_word(o.modules[k], 1)) {
      fprintf(stderr, "mbstudy submit: --module '%s': only letters, digits and . _ - / + are "
                      "accepted\n", o.modules[k]);
      return 2;
    }
  if (strcmp(o.launcher, "mpirun") && strcmp(o.launcher, "srun")) {
    fprintf(stderr, "mbstudy submit: --launcher is mpirun or srun, not '%s'\n", o.launcher);
    return 2;
  }
  if (o.scheduler == SCHED_PBS && !strcmp(o.launcher, "srun")) {
    fprintf(stderr, "mbstudy submit: --launcher srun needs --scheduler slurm\n");
    return 2;
  }
  if (o.warn >= o.seconds) {
    fprintf(stderr, "mbstudy submit: --warn %d s is not shorter than --time %s\n", o.warn,
            o.time);
    return 2;
  }
  // the study itself, checked as `run` would check it before the first sample
  mbs_error err;
  mbs_study_spec* spec = NULL;
  if (mbs_spec_read(o.spec, &spec, &err) != MBS_OK) {
    fprintf(stderr, "mbstudy submit: %s\n", err.message);
    return 1;
  }
  if (o.output) {
    char* copy = strdup(o.output);
    if (copy) {
      free(spec->output);
      spec->output = copy;
    }
  }
  mbs_study_options so;
  mbs_study_options_default(&so);
  so.plan_only = 1;
  so.log = stderr;
  so.part_count = o.array > 1 ? o.array : 0;
  mbs_study_result res;
  int rc = mbs_study_run(spec, &so, &res, &err);
  if (rc != MBS_OK) {
    fprintf(stderr, "mbstudy submit: %s\n", err.message);
    mbs_spec_free(spec);
    return 1;
  }
  char* mbstudy = realpath("/proc/self/exe", NULL);
  char* spec_abs = realpath(o.spec, NULL);
  char* out = absolute_path(spec->output);
  char* script = out ? mbs_format_string("%s.%s.sh", out, o.scheduler == SCHED_SLURM ? "slurm"
                                                                                     : "pbs")
                     : NULL;
  char* jobs = out ? mbs_format_string("%s.jobs", out) : NULL;
  char* parts = out ? mbs_format_string("%s.parts", out) : NULL;
  int code = 0;
  if (!mbstudy || !spec_abs || !out || !script || !jobs || !parts) {
    fprintf(stderr, "mbstudy submit: %s: cannot find the output's folder\n", spec->output);
    code = 1;
  } else if (!printable(out) || !printable(spec_abs) || !printable(mbstudy) ||
             strchr(out, '%')) {
    fprintf(stderr, "mbstudy submit: the paths of the study, its output and mbstudy must not "
                    "hold control characters or '%%'\n");
    code = 1;
  } else if (o.scheduler == SCHED_SLURM && strpbrk(out, " \t\"'\\$`")) {
    // #SBATCH --output takes no quotes
    fprintf(stderr, "mbstudy submit: %s: an output path for Slurm must not hold blanks, quotes, "
                    "'\\', '$' or '`' (its log goes next to it)\n", out);
    code = 1;
  }
  struct stat sb;
  if (!code && stat(out, &sb) == 0 && !o.force) {
    fprintf(stderr, "mbstudy submit: %s exists; use --force to replace it\n", out);
    code = 1;
  }
  // the study's name for the scheduler's listings: the output's file name, reduced to a word
  char name[64];
  {
    const char* base = out ? strrchr(out, '/') : NULL;
    base = base ? base + 1 : (out ? out : "study");
    int k = 0;
    for (const char* p = base; *p && k < 40; p++) {
      const char c = *p;
      const int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      name[k++] = ok ? c : '_';
    }
    name[k] = 0;
    char* dot = strrchr(name, '.');
    if (dot && dot != name) *dot = 0;
  }
  char* text = code ? NULL : make_script(&o, mbstudy, spec_abs, out, script, name);
  if (!code && !text) {
    fprintf(stderr, "mbstudy submit: out of memory\n");
    code = 1;
  }
  if (!code && o.dry_run) {
    fputs(text, stdout);
    fprintf(stderr, "mbstudy submit: --dry-run: %s not written, nothing submitted (%ld "
                    "samples%s)\n", script, res.samples, o.array > 1 ? " in parts" : "");
  } else if (!code) {
    // a study already queued or running is not submitted twice
    jobs_file J;
    if (read_jobs(jobs, &J)) {
      for (int k = 0; k < J.njobs && !code; k++) {
        char* st = NULL;
        char* cmd_s[] = {"squeue", "-h", "-o", "%T", "-j", J.jobs[k].id, NULL};
        char* cmd_p[] = {"qstat", J.jobs[k].id, NULL};
        const int r = run_command(J.scheduler == SCHED_PBS ? cmd_p : cmd_s, &st);
        if (r == 0 && st && (strstr(st, "PENDING") || strstr(st, "RUNNING") ||
                             (J.scheduler == SCHED_PBS && strstr(st, J.jobs[k].id)))) {
          fprintf(stderr, "mbstudy submit: job %s of this output is still queued or running; "
                          "see mbstudy status %s, or mbstudy cancel it first\n",
                  J.jobs[k].id, out);
          code = 1;
        }
        free(st);
      }
    }
    // the script: the user's umask, never writable by others
    int fd = code ? -1 : open(script, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755 & ~0022);
    if (!code && fd < 0) {
      fprintf(stderr, "mbstudy submit: %s: cannot write: %s\n", script, strerror(errno));
      code = 1;
    }
    if (fd >= 0) {
      const size_t n = strlen(text);
      if (write(fd, text, n) != (ssize_t)n || close(fd) != 0) {
        fprintf(stderr, "mbstudy submit: %s: cannot write: %s\n", script, strerror(errno));
        code = 1;
      }
    }
    if (!code && o.force && stat(out, &sb) == 0) remove(out);
    if (!code && o.force) {  // start over: the journals of an earlier run go
      mbs_journal_clear_dir(parts);
      rmdir(parts);
    } else if (!code && stat(parts, &sb) == 0) {
      fprintf(stderr, "mbstudy submit: %s holds completed samples of an earlier run: the job "
                      "goes on from them (--force starts over)\n", parts);
    }
    char* id = NULL;
    if (!code) {
      char* cmd_s[] = {"sbatch", "--parsable", script, NULL};
      char* cmd_p[] = {"qsub", script, NULL};
      const int r = run_command(o.scheduler == SCHED_SLURM ? cmd_s : cmd_p, &id);
      if (r != 0 || !id || !*id) {
        fprintf(stderr, "mbstudy submit: %s %s failed (exit %d); the script is %s\n",
                o.scheduler == SCHED_SLURM ? "sbatch" : "qsub", script, r, script);
        code = 1;
      } else {
        id[strcspn(id, ";\n")] = 0;  // "123;cluster" from sbatch --parsable
      }
    }
    if (!code) {
      const int fresh = stat(jobs, &sb) != 0;
      FILE* jf = fopen(jobs, "a");
      if (jf) {
        if (fresh)
          fprintf(jf, "scheduler\t%s\nspec\t%s\nscript\t%s\nsamples\t%ld\nparts\t%d\n",
                  o.scheduler == SCHED_SLURM ? "slurm" : "pbs", spec_abs, script, res.samples,
                  o.array);
        fprintf(jf, "job\t%s\t%ld\tsubmitted\n", id, (long)time(NULL));
        fclose(jf);
      }
      printf("%s\n", id);
      fprintf(stderr, "mbstudy submit: job %s: %ld samples into %s%s; script %s; follow it "
                      "with mbstudy status %s\n", id, res.samples, out,
              o.array > 1 ? " (array job)" : "", script, out);
    }
    free(id);
  }
  free(text);
  free(mbstudy);
  free(spec_abs);
  free(out);
  free(script);
  free(jobs);
  free(parts);
  mbs_spec_free(spec);
  return code;
}

//---------------------------------- status -----------------------------------------------------

// a job's state from the scheduler: "RUNNING", "PENDING", ... or "finished (no longer listed)"
static void job_state(int scheduler, const char* id, char* out, size_t n) {
  char* st = NULL;
  int r;
  if (scheduler == SCHED_SLURM) {
    char* cmd[] = {"squeue", "-h", "-r", "-t", "all", "-o", "%i %T", "-j", (char*)id, NULL};
    r = run_command_to(cmd, &st, 1);
  } else {
    char* cmd[] = {"qstat", "-f", (char*)id, NULL};
    r = run_command_to(cmd, &st, 1);
  }
  // a job the scheduler has forgotten: "Invalid job id" (squeue), "Unknown Job Id" (qstat)
  const int forgotten = st && (strstr(st, "nvalid job id") || strstr(st, "nknown Job Id") ||
                               strstr(st, "has finished"));
  if (r < 0) {
    snprintf(out, n, "unknown (the scheduler's commands are not found here)");
  } else if (r != 0 && !forgotten) {
    char first[120] = "";
    if (st) snprintf(first, sizeof(first), "%.*s", (int)strcspn(st, "\n"), st);
    snprintf(out, n, "unknown (%s: %s)", scheduler == SCHED_SLURM ? "squeue" : "qstat", first);
  } else if (r != 0 || !st || !*st) {
    snprintf(out, n, "finished (no longer listed)");
  } else if (scheduler == SCHED_SLURM) {
    // one line per job (per task of an array): "123 RUNNING"; summarize
    int running = 0, pending = 0, other = 0;
    char last[64] = "";
    for (char* line = strtok(st, "\n"); line; line = strtok(NULL, "\n")) {
      const char* s = strchr(line, ' ');
      s = s ? s + 1 : line;
      if (!strcmp(s, "RUNNING")) running++;
      else if (!strcmp(s, "PENDING")) pending++;
      else {
        other++;
        snprintf(last, sizeof(last), "%s", s);
      }
    }
    if (running + pending + other == 1)
      snprintf(out, n, "%s", running ? "RUNNING" : pending ? "PENDING" : last);
    else
      snprintf(out, n, "%d running, %d pending, %d ended (%s)", running, pending, other, last);
  } else {
    const char* s = strstr(st, "job_state = ");
    char c = s ? s[12] : '?';
    snprintf(out, n, "%s", c == 'R' ? "RUNNING" : c == 'Q' ? "QUEUED" : c == 'H' ? "HELD"
                           : c == 'F' || c == 'C' ? "FINISHED" : c == 'E' ? "EXITING" : "?");
  }
  free(st);
}

static void put_duration(FILE* f, double s) {
  if (s < 120) fprintf(f, "%.0f s", s);
  else if (s < 7200) fprintf(f, "%.0f min", s / 60);
  else fprintf(f, "%.1f h", s / 3600);
}

int mbs_cmd_status(int argc, char** argv) {
  if (argc != 1 || argv[0][0] == '-') {
    fprintf(stderr, "usage: mbstudy status OUTPUT.h5\n");
    return argc == 1 && !strcmp(argv[0], "--help") ? 0 : 2;
  }
  const char* out = argv[0];
  char* jobs = mbs_format_string("%s.jobs", out);
  char* parts = mbs_format_string("%s.parts", out);
  jobs_file* J = calloc(1, sizeof(jobs_file));
  if (!jobs || !parts || !J) {
    free(jobs);
    free(parts);
    free(J);
    return 1;
  }
  const int have_jobs = read_jobs(jobs, J);
  struct stat sb;
  const int complete = stat(out, &sb) == 0;
  if (!have_jobs && !complete && stat(parts, &sb) != 0) {
    fprintf(stderr, "mbstudy status: %s: no such study output (no %s, no %s, no %s)\n", out,
            out, parts, jobs);
    free(jobs);
    free(parts);
    free(J);
    return 1;
  }
  printf("study: %s%s%s\n", out, have_jobs ? ", spec " : "", have_jobs ? J->spec : "");
  int running = 0, waiting = 0;
  if (have_jobs) {
    printf("jobs (%s):\n", J->scheduler == SCHED_SLURM ? "slurm" : "pbs");
    for (int k = 0; k < J->njobs; k++) {
      char st[200];
      job_state(J->scheduler, J->jobs[k].id, st, sizeof(st));
      running += strstr(st, "RUNNING") != NULL ||
                 (strstr(st, " running") && strncmp(st, "0 running", 9) != 0);
      waiting += strstr(st, "PENDING") != NULL || strstr(st, "QUEUED") != NULL ||
                 strstr(st, "HELD") != NULL || (strstr(st, " pending") && !strstr(st, " 0 pending"));
      printf("  %-12s %-10s %s\n", J->jobs[k].id, J->jobs[k].what, st);
    }
  }
  long done = 0, failed = 0, total = have_jobs ? J->samples : 0, recent = 0;
  if (complete) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "/status/code", H5P_DEFAULT) : -1;
    if (d >= 0) {
      hid_t sp = H5Dget_space(d);
      hsize_t n = 0;
      H5Sget_simple_extent_dims(sp, &n, NULL);
      int* code = malloc((size_t)n * sizeof(int) + 4);
      if (code && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, code) >= 0) {
        total = done = (long)n;
        for (hsize_t i = 0; i < n; i++) failed += code[i] != 0;
      }
      free(code);
      H5Sclose(sp);
      H5Dclose(d);
    }
    if (f >= 0) H5Fclose(f);
    printf("samples: %ld, all done (%ld failed): the study is complete in %s\n", done, failed,
           out);
  } else {
    // the journals: every record once (a sample in two journals counts once)
    mbs_journal_count(parts, total, &done, &failed, NULL, NULL, 0, J->last_start, &recent);
    if (total > 0)
      printf("samples: %ld of %ld done (%ld failed), %ld left\n", done, total, failed,
             total - done);
    else
      printf("samples: %ld done (%ld failed)\n", done, failed);
    const double elapsed = J->last_start > 0 ? (double)(time(NULL) - J->last_start) : 0;
    if (running && recent > 0 && elapsed > 0) {
      const double rate = recent / elapsed;
      printf("rate: %.3g samples/s in the running job%s; ", rate, running > 1 ? "s" : "");
      if (total > done) {
        printf("about ");
        put_duration(stdout, (double)(total - done) / rate);
        printf(" to finish\n");
      } else {
        printf("the result file is being written\n");
      }
    } else if (running) {
      printf("rate: not known yet (no samples of the running job in the journals)\n");
    } else if (waiting) {
      printf("waiting in the scheduler's queue\n");
    } else if (!complete && done < total) {
      printf("no job is running: resume with mbstudy submit (the same options) or "
             "mbstudy run %s --output %s --resume\n", have_jobs ? J->spec : "SPEC", out);
    }
  }
  free(jobs);
  free(parts);
  free(J);
  return 0;
}

//---------------------------------- cancel -----------------------------------------------------

int mbs_cmd_cancel(int argc, char** argv) {
  if (argc != 1 || argv[0][0] == '-') {
    fprintf(stderr, "usage: mbstudy cancel OUTPUT.h5\n");
    return argc == 1 && !strcmp(argv[0], "--help") ? 0 : 2;
  }
  const char* out = argv[0];
  char* jobs = mbs_format_string("%s.jobs", out);
  jobs_file* J = calloc(1, sizeof(jobs_file));
  if (!jobs || !J || !read_jobs(jobs, J)) {
    fprintf(stderr, "mbstudy cancel: %s: no jobs recorded (no %s.jobs)\n", out, out);
    free(jobs);
    free(J);
    return 1;
  }
  int code = 0, cancelled = 0;
  for (int k = 0; k < J->njobs; k++) {
    char st[200];
    job_state(J->scheduler, J->jobs[k].id, st, sizeof(st));
    if (!strstr(st, "RUNNING") && !strstr(st, "PENDING") && !strstr(st, "running") &&
        !strstr(st, "pending") && !strstr(st, "QUEUED") && !strstr(st, "HELD"))
      continue;
    char* o = NULL;
    char* cmd_s[] = {"scancel", J->jobs[k].id, NULL};
    char* cmd_p[] = {"qdel", J->jobs[k].id, NULL};
    const int r = run_command(J->scheduler == SCHED_SLURM ? cmd_s : cmd_p, &o);
    free(o);
    if (r != 0) {
      fprintf(stderr, "mbstudy cancel: %s %s failed (exit %d)\n",
              J->scheduler == SCHED_SLURM ? "scancel" : "qdel", J->jobs[k].id, r);
      code = 1;
      continue;
    }
    FILE* jf = fopen(jobs, "a");
    if (jf) {
      fprintf(jf, "cancelled\t%s\t%ld\n", J->jobs[k].id, (long)time(NULL));
      fclose(jf);
    }
    printf("cancelled job %s\n", J->jobs[k].id);
    cancelled++;
  }
  if (!cancelled && !code)
    printf("no job of %s is queued or running\n", out);
  else if (cancelled)
    printf("the completed samples stay in %s.parts: mbstudy submit (the same options) goes "
           "on from them\n", out);
  free(jobs);
  free(J);
  return code;
}
