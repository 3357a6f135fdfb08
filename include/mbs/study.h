// Running a study: one model, many samples, over MPI ranks and OpenMP threads, into one HDF5
// file (include/mbs/store.h, io/FORMAT.md).
//
// Each process builds the System once; each thread owns a State. Samples are handed out
// dynamically: a shared counter (an MPI one-sided fetch-and-add on rank 0, or a local atomic
// without MPI) gives each thread its next chunk of sample indices, chunks shrinking as the
// study nears its end, so that samples of very different cost balance out. A sample's
// parameters come from a counter-based generator keyed by (seed, sample index), so results do
// not depend on rank count, thread count or schedule.
//
// Completed samples are appended, by each thread, to a journal file in `<output>.parts/`
// (flushed to disk every checkpoint interval and when stopped). A study stopped in any way
// (SIGTERM, SIGINT, SIGKILL, a lost node) resumes from the journals and finishes with every
// sample exactly once. A writer thread on rank 0 merges the journals, in sample order, into
// the HDF5 file while the samples are computed; after the last one it adds the statistics
// across samples, moves the file into place and removes the journals. Rank 0 holds a lock on
// `<output>.lock` meanwhile: a second run, resume or merge of the same output is refused,
// naming the process and host that hold it.
#ifndef MBS_STUDY_H_
#define MBS_STUDY_H_

#include <stdio.h>

#include "mbs/spec.h"
#include "mbs/status.h"

struct mbs_osim_param_value;  // osim.h

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_study_options {
  int resume;            // continue from the journals of a stopped run
  int force;             // replace an existing result file / discard journals
  FILE* log;             // progress and the summary (rank 0); NULL: stderr
  int quiet;             // no progress lines
  int use_mpi;           // MPI is initialized by the caller and should be used
  // called now and then on rank 0 with the samples completed so far (all runs) and the total
  // (negative for an iterative study: not known, at most -total)
  void (*progress)(void* user, long done, long total);
  void* progress_user;
  // runs an OpenSim tool setup file as `mbstudy run-tool` does, for study types that chain
  // OpenSim's tools (the pipeline study), with the models it reads given `nparams` parameter
  // values other than their files' (a sample's draws; osim.h): 0 on success, the tool's
  // messages on `log`; the command line gives it, a caller without the tools leaves it NULL.
  // Any thread.
  int (*run_tool)(void* user, const char* setup, const char* results_dir,
                  const struct mbs_osim_param_value* params, int nparams, FILE* log);
  void* run_tool_user;
  // one part of an array job: with part_count K > 0, this run computes only the samples i with
  // i mod K == part_index into the shared journals (`<output>.parts/`, files named by part)
  // and writes no result file; its own completed samples are skipped when it runs again (a
  // requeued task goes on). Not for iterative drivers (fits, calibrations, MCMC).
  int part_index, part_count;
  // merge_only: write the result file from the journals of every part, computing nothing; an
  // error names the samples missing from them (1), or (2) the result says `incomplete` and
  // nothing is written when samples are missing or parts still run (the last part to finish
  // merges)
  int merge_only;
  // make and check the plan (model, parameters, outputs) and return the number of samples in
  // the result, touching no file
  int plan_only;
  // simulate every sample alone, even where the plan allows the batched simulation (batch.h:
  // samples whose System the batched forward dynamics takes, integrated by rk_merson without
  // events, are otherwise simulated in groups side by side; the result is the same)
  int no_batch;
} mbs_study_options;

void mbs_study_options_default(mbs_study_options* o);

// What a run did (on every rank; counts are global).
typedef struct mbs_study_result {
  long samples;          // in the study
  long done;             // completed (ok or failed) in this run
  long skipped;          // already completed by an earlier run (resume)
  long failed;           // failed samples in the whole study
  int stopped;           // stopped by a signal before the end (resume later)
  double wall_time;      // s
  double io_time;        // s of the wall time spent waiting on I/O: journal_time + merge_time
  double merge_time;     // s between the last sample and the complete result file (rank 0)
  double merge_busy;     // s the writer thread worked in all (mostly during the run, beside
                         // the samplers)
  double journal_time;   // s of the wall time the samplers waited on their journals: each
                         // thread's own waiting, averaged over the threads of every rank
  int threads_total;     // the samplers (ranks × threads per rank)
  int incomplete;        // merge_only 2: not merged (samples missing or parts running)
  int complete_before;   // --resume of a study that had finished: nothing done
  long first_failed;     // the failed sample of lowest index in the result file (rank 0), -1
  char first_message[512];  // and its message
} mbs_study_result;

// Run the study. Returns MBS_OK when the result file is complete (failed samples included;
// with part_count, when the part's samples are in the journals), MBS_ERR_INTERRUPTED when
// stopped by a signal (journals kept: resume), or an error.
int mbs_study_run(const mbs_study_spec* spec, const mbs_study_options* o,
                  mbs_study_result* result, mbs_error* err);

// Install SIGTERM/SIGINT/SIGUSR1 handlers that make a running study stop cleanly (SIGUSR1: the
// warning a batch scheduler sends before a job's time limit).
void mbs_study_install_signal_handlers(void);

#ifdef __cplusplus
}
#endif

#endif  // MBS_STUDY_H_
