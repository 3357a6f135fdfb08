// `mbstudy run SPEC [--resume] [--force]`: a study, as a single process or under mpirun.
#include "run_cmd.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/spec.h"
#include "mbs/study.h"
#include "corner_plot.h"
#include "plot_util.h"
#include "posture_report.h"
#include "progress.h"
#include "run_tool.h"
#include "sensitivity_plot.h"

// launched by mpirun (Open MPI, MPICH/Hydra, Slurm's PMI)?
static int under_mpi_launcher(void) {
  static const char* vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

static void on_progress(void* user, long done, long total) {
  mbs_progress* p = user;
  p->total = total;
  mbs_progress_update(p, done);
}

// a posture study's table (in the file, as Markdown beside it and on stdout) and picture:
// <output>.png and <output>.md for <output>.h5
static int posture_report(const char* output) {
  const size_t n = strlen(output);
  const size_t stem = n > 3 && !strcmp(output + n - 3, ".h5") ? n - 3 : n;
  char* png = malloc(stem + 5);
  char* md = malloc(stem + 4);
  if (!png || !md) {
    free(png);
    free(md);
    return MBS_ERR_NO_MEMORY;
  }
  memcpy(png, output, stem);
  memcpy(png + stem, ".png", 5);
  memcpy(md, output, stem);
  memcpy(md + stem, ".md", 4);
  mbs_error err;
  FILE* f = fopen(md, "w");
  int rc = f ? mbs_posture_report(output, png, f, stdout, &err) : MBS_ERR_IO;
  if (!f) fprintf(stderr, "mbstudy run: %s: cannot write\n", md);
  if (f && fclose(f) != 0 && rc == MBS_OK) {
    fprintf(stderr, "mbstudy run: %s: cannot write\n", md);
    rc = MBS_ERR_IO;
  }
  if (f && rc != MBS_OK) fprintf(stderr, "mbstudy run: %s\n", err.message);
  if (rc == MBS_OK)
    printf("wrote %s (stability against perturbation) and %s (this summary and the whole table; "
           "also in %s:/posture)\n", png, md, output);
  free(png);
  free(md);
  mbs_posture_report_cleanup();
  return rc;
}

// <output stem><suffix> for <output>.h5 (a new string)
static char* beside(const char* output, const char* suffix) {
  const size_t n = strlen(output);
  const size_t stem = n > 3 && !strcmp(output + n - 3, ".h5") ? n - 3 : n;
  char* p = malloc(stem + strlen(suffix) + 1);
  if (!p) return NULL;
  memcpy(p, output, stem);
  strcpy(p + stem, suffix);
  return p;
}

// the picture of a study type that has one: Sobol' or Morris indices, a posterior's corner plot
static int study_picture(const mbs_study_spec* spec, const char* output) {
  const mbs_spec_section* sens = mbs_spec_find_section(spec, "sensitivity");
  const int calibration = mbs_spec_find_section(spec, "calibration") != NULL;
  int sensitivity = 0;
  if (sens) {
    char* m = NULL;
    mbs_error e;
    if (mbs_spec_section_string(sens, "method", "", 0, &m, &e) == MBS_OK)
      sensitivity = !strcmp(m, "sobol") || !strcmp(m, "morris");
    free(m);
  }
  if (!sensitivity && !calibration) return MBS_OK;
  char* png = beside(output, ".png");
  if (!png) return MBS_ERR_NO_MEMORY;
  mbs_error err;
  const int rc = sensitivity ? mbs_sensitivity_plot_png(output, png, &err)
                             : mbs_corner_plot_png(output, png, &err);
  if (rc == MBS_OK)
    printf("wrote %s (%s)\n", png, sensitivity ? "the sensitivity indices"
                                               : "the posterior samples, corner plot");
  else
    fprintf(stderr, "mbstudy run: %s\n", err.message);
  free(png);
  mbs_plot_cleanup();
  return rc;
}

#define RUN_USAGE                                                                            \
  "usage: mbstudy run SPEC.yaml [--resume] [--force] [--quiet] [--output FILE.h5] "           \
  "[--threads N] [--part I/K] [--allow-failures] [--one-at-a-time]\n"
#define MERGE_USAGE                                                                          \
  "usage: mbstudy merge SPEC.yaml [--output FILE.h5] [--quiet] [--if-complete] "              \
  "[--allow-failures]\n"

// `run`, or with merge set `merge` (the result file from the journals of an array job's parts)
static int run_main(int argc, char** argv, int merge) {
  const char* cmd = merge ? "merge" : "run";
  const char* usage = merge ? MERGE_USAGE : RUN_USAGE;
  const char* spec_path = NULL;
  const char* output = NULL;
  int resume = 0, force = 0, quiet = 0, threads = -1, part_index = 0, part_count = 0;
  int allow_failures = 0, one_at_a_time = 0;
  for (int i = 0; i < argc; i++) {
    if (!merge && !strcmp(argv[i], "--resume")) resume = 1;
    else if (!merge && !strcmp(argv[i], "--force")) force = 1;
    else if (!strcmp(argv[i], "--quiet")) quiet = 1;
    else if (!strcmp(argv[i], "--allow-failures")) allow_failures = 1;
    else if (!merge && !strcmp(argv[i], "--one-at-a-time")) one_at_a_time = 1;
    else if (merge && !strcmp(argv[i], "--if-complete")) merge = 2;
    else if (!merge && !strcmp(argv[i], "--part") && i + 1 < argc) {
      char slash = 0, extra = 0;
      if (sscanf(argv[++i], "%d%c%d%c", &part_index, &slash, &part_count, &extra) != 3 ||
          slash != '/' || part_count < 1 || part_index < 0 || part_index >= part_count) {
        fprintf(stderr, "mbstudy run: --part expects I/K with 0 <= I < K (the array task's "
                        "index and the number of parts), got '%s'\n", argv[i]);
        return 2;
      }
    }
    else if (!strcmp(argv[i], "--output") && i + 1 < argc) output = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      char* end;
      threads = (int)strtol(argv[++i], &end, 10);
      if (*end || threads < 0) {
        fprintf(stderr, "mbstudy run: --threads expects a number >= 0, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (argv[i][0] != '-' && !spec_path) spec_path = argv[i];
    else {
      fprintf(stderr, "mbstudy %s: unknown option '%s'\n%s", cmd, argv[i], usage);
      return 2;
    }
  }
  if (!spec_path) {
    fputs(usage, stderr);
    return 2;
  }
  const int use_mpi = under_mpi_launcher();
  int rank = 0, nranks = 1;
  if (use_mpi) {
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (provided < MPI_THREAD_SERIALIZED) {
      if (rank == 0)
        fprintf(stderr, "mbstudy run: the MPI library does not support threads "
                        "(MPI_THREAD_SERIALIZED); run with one thread per rank\n");
    }
  }
  mbs_study_install_signal_handlers();
  mbs_error err;
  mbs_study_spec* spec = NULL;
  int rc = mbs_spec_read(spec_path, &spec, &err);
  if (rc) {
    if (rank == 0) fprintf(stderr, "mbstudy run: %s\n", err.message);
    if (use_mpi) MPI_Finalize();
    return 1;
  }
  if (output) {  // the command line wins over the spec
    char* copy = strdup(output);
    if (copy) {
      free(spec->output);
      spec->output = copy;
    }
  }
  if (threads >= 0) {
    spec->threads = threads;
    spec->threads_line = 0;  // the flag's, not the file's
  }
  mbs_study_options o;
  mbs_study_options_default(&o);
  o.resume = resume || merge;
  o.force = force;
  o.merge_only = merge;
  o.no_batch = one_at_a_time;
  o.part_index = part_index;
  o.part_count = part_count;
  o.use_mpi = use_mpi;
  o.log = stderr;
  o.run_tool = mbs_run_tool_quietly;  // the pipeline study's chain of OpenSim's tools
  mbs_progress prog;
  if (rank == 0 && !quiet) {
    fprintf(stderr, "mbstudy %s: %s: a study of '%s', %d rank%s\n", cmd, spec_path,
            spec->model, nranks, nranks == 1 ? "" : "s");
    mbs_progress_start(&prog, stderr, "samples", spec->count);
    o.progress = on_progress;
    o.progress_user = &prog;
  }
  mbs_study_result res;
  rc = mbs_study_run(spec, &o, &res, &err);
  if (rank == 0 && !quiet && (rc == MBS_OK || rc == MBS_ERR_INTERRUPTED)) {
    prog.done = res.skipped + res.done;
    if (prog.total <= 0) prog.total = res.samples;  // a study whose count the spec does not say
    if (rc == MBS_ERR_INTERRUPTED) mbs_progress_stopped(&prog);
    else mbs_progress_finish(&prog);
  }
  int exit_code = 0;
  if (rank == 0) {
    if (rc == MBS_OK && res.complete_before) {
      printf("%s is complete (%ld samples): nothing to resume\n", spec->output, res.samples);
    } else if (rc == MBS_OK && res.incomplete) {
      printf("%s: not merged yet: %ld of %ld samples are in the journals, or parts of the "
             "study are still running (the last to finish merges)\n", spec->output,
             res.skipped, res.samples);
    } else if (rc == MBS_OK && part_count > 0) {
      printf("part %d of %d (samples i with i mod %d = %d): %ld computed this run, %ld "
             "failed in the whole study so far; journals in %s.parts; when every part is "
             "done: mbstudy merge %s --output %s\n", part_index, part_count, part_count,
             part_index, res.done, res.failed, spec->output, spec_path, spec->output);
    } else if (rc == MBS_OK) {
      // I/O as wall time: the samplers' waiting on their journals (per thread) and the time
      // from the last sample to the complete file; the writer thread works beside the samplers
      printf("wrote %s: %ld samples (%ld this run, %ld before), %ld failed; %.3g s, of which "
             "%.3g s waiting on journals (mean of %d thread%s) and %.3g s on the result file "
             "after the last sample: I/O %.1f%% of the wall time (the writer thread worked "
             "%.3g s in all)\n", spec->output, res.samples, res.done, res.skipped, res.failed,
             res.wall_time, res.journal_time, res.threads_total,
             res.threads_total == 1 ? "" : "s", res.merge_time,
             res.wall_time > 0 ? 100.0 * res.io_time / res.wall_time : 0.0, res.merge_busy);
      // the posture study's own table and picture (not when it prepares another design)
      if (spec->posture && spec->nsections == 0 && posture_report(spec->output) != MBS_OK)
        exit_code = 1;
      if (study_picture(spec, spec->output) != MBS_OK) exit_code = 1;
    } else {
      fprintf(stderr, "mbstudy %s: %s\n", cmd, err.message);
    }
  }
  // failed samples: the file holds them, but scripts and job chains must notice (exit 4)
  // unless the study file or the command line accepts them
  if (rc == MBS_OK && !exit_code && !res.incomplete && !res.complete_before && part_count == 0 &&
      res.failed > 0 &&
      !allow_failures && !spec->allow_failed_samples) {
    if (rank == 0) {
      fprintf(stderr, "mbstudy %s: %ld of %ld samples failed; first: sample %ld: %s\n"
                      "(they are in %s with their messages; --allow-failures or execution: "
                      "{allow_failed_samples: true} accepts failed samples: exit 0)\n", cmd,
              res.failed, res.samples, res.first_failed, res.first_message, spec->output);
    }
    exit_code = 4;
  }
  if (rc == MBS_ERR_INTERRUPTED) exit_code = 3;
  else if (rc != MBS_OK) exit_code = 1;
  mbs_spec_free(spec);
  if (use_mpi) MPI_Finalize();
  return exit_code;
}

int mbs_cmd_run(int argc, char** argv) {
  return run_main(argc, argv, 0);
}

int mbs_cmd_merge(int argc, char** argv) {
  return run_main(argc, argv, 1);
}
