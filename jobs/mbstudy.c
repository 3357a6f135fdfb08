#define _GNU_SOURCE  // open_memstream
// The mbstudy command line.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "demo.h"
#include "model_cmd.h"
#include "inspect_cmd.h"
#include "verify_cmd.h"
#include "run_cmd.h"
#include "submit_cmd.h"
#include "run_tool.h"
#include "tool_cli.h"
#include "tool_id.h"
#include "mbs/mbs.h"

static void usage(FILE* f) {
  fprintf(f,
          "mbstudy %s: many multibody and musculoskeletal simulations at once\n"
          "\n"
          "usage: mbstudy <command> [options]\n"
          "\n"
          "commands:\n"
          "  demo      simulate a 3-D chain on ball joints; write OpenSim .sto files and an SVG\n"
          "            options: --out DIR (out/demo)  --links N (5)  --duration S (5)\n"
          "                     --integrator NAME (rk_merson; or dormand_prince, cvode_bdf,\n"
          "                       euler, rk4, semi_explicit_euler, verlet, ros34pw2)\n"
          "                     --accuracy A (1e-6)  --step S (fixed-step integrators, 1e-4)\n"
          "                     --report S (0.01)\n"
          "  model info MODEL.osim\n"
          "            bodies, coordinates with ranges, constraints, forces, muscles, mass, DOFs\n"
          "  model params MODEL.osim\n"
          "            every parameter a study can vary: path, unit, default, valid range\n"
          "  model accel MODEL.osim --states FILE\n"
          "            forward dynamics at given states: each line of FILE holds the coordinate\n"
          "            values (model order, rad and m) then the speeds; prints the accelerations\n"
          "  simulate MODEL.osim --duration T --out FILE.sto [--accuracy A (1e-3)]\n"
          "            [--integrator NAME (rk_merson)] [--report S (0.01)]\n"
          "            [--external-loads FILE.xml (OpenSim ExternalLoads, e.g. ground reactions)]\n"
          "            forward simulation from the default pose; writes an OpenSim states file\n"
          "  run SPEC.yaml [--resume] [--force] [--quiet] [--output FILE.h5] [--threads N]\n"
          "            [--part I/K]\n"
          "            run a study (Monte Carlo over the parameters of a model); under mpirun\n"
          "            the ranks share the samples; --resume finishes a stopped study;\n"
          "            --part I/K computes one part of K (samples i mod K = I) of an array job\n"
          "  merge SPEC.yaml [--output FILE.h5] [--quiet]\n"
          "            the result file of an array job from its parts' journals\n"
          "  submit SPEC.yaml --scheduler slurm|pbs --nodes N --ranks-per-node R --threads T\n"
          "            --time HH:MM:SS [--partition P] [--account A] [--mem M] [--array K]\n"
          "            [--dry-run]: the study as a cluster job (--help for all options)\n"
          "  status OUTPUT.h5   a submitted study: its jobs, samples done and left, rate, ETA\n"
          "  cancel OUTPUT.h5   cancel its jobs (the completed samples stay)\n"
          "  run-tool SETUP.xml [--results DIR] [--quiet]\n"
          "            run an OpenSim tool setup file (ForwardTool) as OpenSim does: its model,\n"
          "            times, controllers, initial states, external loads; OpenSim's results\n"
          "  inverse-dynamics --model MODEL.osim --coordinates FILE.mot [--external-loads X.xml]\n"
          "            [--lowpass HZ] [--time-range T0 T1] [--exclude NAME]... [--out FILE.sto]\n"
          "            OpenSim's InverseDynamicsTool from flags (--help for all of them)\n"
          "  inverse-kinematics --model MODEL.osim --markers TRIAL.trc --out FILE.mot\n"
          "            [--time-range T0 T1] [--weights TASKS.xml | --weight NAME=W ...]\n"
          "            [--coordinate-task NAME=VALUE[:W]]... [--marker-errors FILE.sto]\n"
          "            OpenSim's InverseKinematicsTool from flags (--help for all of them)\n"
          "  scale --model GENERIC.osim --static STATIC.trc --mass KG --out SCALED.osim\n"
          "            [--markers SET.xml] [--measurements SET.xml] [--manual BODY=SX,SY,SZ]...\n"
          "            [--place-markers] [--preserve-mass-distribution] [--scale-set FILE.xml]\n"
          "            OpenSim's ScaleTool from flags (--help for all of them)\n"
          "  analyze --model MODEL.osim (--states S.sto | --coordinates C.mot) --results DIR\n"
          "            [--analyses kinematics,joint_reaction,...] [--time-range T0 T1]\n"
          "            [--external-loads X.xml] [--controls C.xml] [--step-interval N]\n"
          "            OpenSim's AnalyzeTool from flags (--help for all of them)\n"
          "  inspect FILE.h5\n"
          "            samples done and failed, parameters, outputs and provenance of a study\n"
          "  export FILE.h5 --sample I [--format csv|sto] [--out FILE]\n"
          "            one sample's trajectories as CSV (standard output) or an OpenSim .sto\n"
          "  export FILE.h5 --pipeline SUBJECT/TRIAL --out DIR\n"
          "            a pipeline study's OpenSim files of one subject and trial (.mot, .sto)\n"
          "  verify FILE.h5\n"
          "            read the whole result file, checking every chunk's checksum and the\n"
          "            samples' bookkeeping; one line per problem; exit 0 whole, 1 damaged\n"
          "  version   print the version\n"
          "  help      print this text\n",
          MBS_VERSION_STRING);
}

// parse a number option value completely; complain with the option's name
static int parse_double(const char* opt, const char* s, double* v) {
  char* end;
  errno = 0;
  *v = strtod(s, &end);
  if (errno || end == s || *end) {
    fprintf(stderr, "mbstudy: %s expects a number, got '%s'\n", opt, s);
    return 0;
  }
  return 1;
}

static int parse_int(const char* opt, const char* s, int* v) {
  char* end;
  errno = 0;
  const long x = strtol(s, &end, 10);
  if (errno || end == s || *end || x < -2147483647L || x > 2147483647L) {
    fprintf(stderr, "mbstudy: %s expects an integer, got '%s'\n", opt, s);
    return 0;
  }
  *v = (int)x;
  return 1;
}

static int cmd_demo(int argc, char** argv) {
  mbs_demo_options o;
  mbs_demo_options_default(&o);
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1;
    if (!strcmp(a, "--out") && v) o.out_dir = v;
    else if (!strcmp(a, "--links") && v) ok = parse_int(a, v, &o.links);
    else if (!strcmp(a, "--duration") && v) ok = parse_double(a, v, &o.duration);
    else if (!strcmp(a, "--integrator") && v) o.integrator = v;
    else if (!strcmp(a, "--accuracy") && v) ok = parse_double(a, v, &o.accuracy);
    else if (!strcmp(a, "--step") && v) ok = parse_double(a, v, &o.step);
    else if (!strcmp(a, "--report") && v) ok = parse_double(a, v, &o.report_interval);
    else {
      fprintf(stderr, "mbstudy demo: unknown option or missing value: '%s'\n", a);
      usage(stderr);
      return 2;
    }
    if (!ok) return 2;
    i++;
  }
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = mbs_demo_run(&o, stdout, &err);
  if (rc) {
    fprintf(stderr, "mbstudy demo: %s\n", err.message[0] ? err.message : mbs_status_text(rc));
    return 1;
  }
  return 0;
}

// `mbstudy CMD --help` for the commands without their own: CMD's part of the usage text (its
// lines and their continuations)
static int command_help(const char* cmd) {
  char* text = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  if (!f) return 1;
  usage(f);
  fclose(f);
  const size_t n = strlen(cmd);
  int in = 0, found = 0;
  printf("usage:\n");
  for (char* line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (!strncmp(line, "  ", 2) && line[2] != ' ')  // a command's first line
      in = !strncmp(line + 2, cmd, n) && (line[2 + n] == ' ' || !line[2 + n]);
    else if (strncmp(line, "    ", 4))  // not a continuation: a heading
      in = 0;
    if (in) {
      printf("%s\n", line);
      found = 1;
    }
  }
  free(text);
  if (!found) printf("  mbstudy %s (see mbstudy help)\n", cmd);
  return 0;
}

static int wants_help(int argc, char** argv) {
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

int main(int argc, char** argv) {
  // HDF5 closes nothing at exit: every command closes its files itself, and a file whose flush
  // failed (a full disk) cannot be closed again under HDF5 1.10 (its shutdown then loops or
  // crashes after the clear message was printed)
  H5dont_atexit();
  H5open();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  // files are written with the user's umask, but never writable by everyone
  const mode_t mask = umask(0);
  umask(mask | S_IWOTH);
  const char* cmd = argv[1];
  // every command answers --help (these with their own, longer text)
  static const char* const own_help[] = {"run-tool", "submit", "inverse-dynamics",
                                         "inverse-kinematics", "scale", "analyze"};
  int own = 0;
  for (size_t k = 0; k < sizeof(own_help) / sizeof(own_help[0]); k++)
    own |= !strcmp(cmd, own_help[k]);
  if (!own && wants_help(argc, argv)) return command_help(cmd);
  if (!strcmp(cmd, "demo")) return cmd_demo(argc - 2, argv + 2);
  if (!strcmp(cmd, "model")) return mbs_cmd_model(argc - 2, argv + 2);
  if (!strcmp(cmd, "simulate")) return mbs_cmd_simulate(argc - 2, argv + 2);
  if (!strcmp(cmd, "run")) return mbs_cmd_run(argc - 2, argv + 2);
  if (!strcmp(cmd, "merge")) return mbs_cmd_merge(argc - 2, argv + 2);
  if (!strcmp(cmd, "submit")) return mbs_cmd_submit(argc - 2, argv + 2);
  if (!strcmp(cmd, "status")) return mbs_cmd_status(argc - 2, argv + 2);
  if (!strcmp(cmd, "cancel")) return mbs_cmd_cancel(argc - 2, argv + 2);
  if (!strcmp(cmd, "run-tool")) return mbs_cmd_run_tool(argc - 2, argv + 2);
  if (!strcmp(cmd, "inverse-dynamics")) return mbs_cmd_inverse_dynamics(argc - 2, argv + 2);
  if (!strcmp(cmd, "inverse-kinematics")) return mbs_cmd_inverse_kinematics(argc - 2, argv + 2);
  if (!strcmp(cmd, "scale")) return mbs_cmd_scale(argc - 2, argv + 2);
  if (!strcmp(cmd, "analyze")) return mbs_cmd_analyze(argc - 2, argv + 2);
  if (!strcmp(cmd, "inspect")) return mbs_cmd_inspect(argc - 2, argv + 2);
  if (!strcmp(cmd, "export")) return mbs_cmd_export(argc - 2, argv + 2);
  if (!strcmp(cmd, "verify")) return mbs_cmd_verify(argc - 2, argv + 2);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("mbstudy %s\n", MBS_VERSION_STRING);
    return 0;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "mbstudy: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
