// The merger: the result file written from the journals, in sample order.
//
// On rank 0 it runs in a thread of its own during the study, taking each sample as soon as
// the journals hold it (the workers hand every record to the operating system at once), so
// that little is left to do when the last sample is computed. The file is written to
// <parts>/result.h5 and moved to the output only when complete (by the engine, after the
// driver has added its results). For iterative drivers it also hands the samples of the
// current batch to the engine (mbs_merger_collect), checking that a sample read back from the
// journals of an earlier run has the parameters the batch gives it now.
#ifndef MBS_STUDIES_MERGE_H_
#define MBS_STUDIES_MERGE_H_

#include <pthread.h>
#include <stdio.h>

#include "engine.h"
#include "journal.h"

typedef struct mbs_merge_src {
  char* path;
  mbs_journal_reader* r;
  mbs_journal_record rec;
  int has;
  int complete;           // no longer written (an earlier run's, or its next segment exists)
  int gone;               // deleted: its samples are in the result file, synced
  long max_index;         // the largest sample index read from it (-1: none)
} mbs_merge_src;

typedef struct mbs_merger {
  const mbs_plan* P;
  const char* parts;      // the journal folder
  const char* output;     // the study's output (for messages)
  FILE* log;              // failed samples are listed here
  double t_start;         // the run's start (CLOCK_MONOTONIC s), for the file's start time
  int nranks, nthreads;
  const char* dynamics;   // how the samples were simulated (root attribute), NULL: not said
  mbs_merge_src* src;
  int nsrc, capsrc;
  mbs_store* store;
  char* partial;          // <parts>/result.h5
  const double** traj;
  long next;              // the next sample to write
  long limit;             // samples below it have been asked for
  long failed;
  int keep_partial;       // stopped by a signal: keep <parts>/result.h5 (what is merged so
                          // far, attribute "incomplete") for readers until a resume replaces it
  long first_failed;      // the first failed sample (by index), -1: none
  char first_message[512];
  double busy;            // s spent reading journals and writing (not waiting)
  // deleting merged journals during the run (not for iterative drivers, whose resume replays
  // the journals, nor for array parts and their merge): once a complete journal's samples are
  // all below the result file's synced count, the merged mark (journal.h) is written and the
  // journal deleted, so that the disk holds little more than the result file
  int prune;
  long durable;           // samples synced in the result file and marked
  long durable_failed;    // failed samples among them
  long* fail_idx;         // failed samples at or above `durable` (in order)
  long nfail_idx, capfail;
  long pruned;            // journals deleted
  int rc;
  mbs_error err;
  // the batch being collected for the driver (rank 0)
  long c_first, c_count;
  const double* c_expect; // the batch's parameters (NULL: not checked)
  double* c_params;
  int* c_status;
  double* c_scalars;
  double* c_traj;
  int* c_frames;
  long c_cap;
  // thread control
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t moved;   // signalled when `next` moves or the merger ends
  pthread_cond_t kick;    // signalled when samples are waited for: look at the journals now
  int running;
  int kicked;
  volatile int finish;    // the workers are done: read everything, then close
  volatile int stop;      // abandon (the study was stopped or failed)
} mbs_merger;

// set up (rank 0): nothing is read or written yet; prune: delete merged journals during the run
void mbs_merger_init(mbs_merger* M, const mbs_plan* P, const char* parts, const char* output,
                     FILE* log, double t_start, int nranks, int nthreads, int prune);
// at a resume (before start): the samples an earlier run merged into <parts>/result.h5 and
// marked (<parts>/merged), the file reopened to go on from them. *n: their count, *failed:
// failed samples among them (0 without a mark; 0 also when the file cannot be continued: a
// warning on the log says why, the mark and the file are removed and the samples are computed
// again). Errors only for what stops the run (out of memory).
int mbs_merger_reopen(mbs_merger* M, long* n, long* failed, mbs_error* err);
// start the writer thread (rank 0), the file made (or continued after mbs_merger_reopen)
int mbs_merger_start(mbs_merger* M, mbs_error* err);
// before start, when the run ends early: close a reopened file as it is, free
void mbs_merger_abandon(mbs_merger* M);
// samples [0, limit) are asked for
void mbs_merger_set_limit(mbs_merger* M, long limit);
// collect the samples [first, first + count) for the driver (expect: their parameters, count ×
// np, or NULL); before the batch is announced
int mbs_merger_collect(mbs_merger* M, long first, long count, const double* expect,
                       mbs_error* err);
// wait until every sample below `upto` is written; the merger's status
int mbs_merger_wait(mbs_merger* M, long upto, mbs_error* err);
// the collected batch
mbs_batch_results mbs_merger_batch(const mbs_merger* M);
// end the thread: with ok, read every sample below `final` (the study's count) and close the
// file complete at M->partial, shortened to `final` samples; else abandon it (journals kept).
// The merger's status.
int mbs_merger_end(mbs_merger* M, int ok, long final, mbs_error* err);
// after mbs_merger_end: move the file to the output, remove the journals (ok), free
int mbs_merger_commit(mbs_merger* M, int ok, mbs_error* err);

#endif  // MBS_STUDIES_MERGE_H_
