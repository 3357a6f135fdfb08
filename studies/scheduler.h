// The distributed scheduler: the shared work counter from which every thread of every rank
// takes its next chunk of a batch's sample indices — an MPI one-sided fetch-and-add on rank 0,
// or a local atomic without MPI —, chunks shrinking as the batch nears its end (guided
// scheduling: a quarter of an even share of what is left, 1 to 64 samples), so that samples
// of very different cost balance out; and the count of completed samples for progress. One
// request to rank 0 per chunk taken and one per chunk completed.
#ifndef MBS_STUDIES_SCHEDULER_H_
#define MBS_STUDIES_SCHEDULER_H_

#include <mpi.h>

typedef struct mbs_scheduler {
  int use_mpi, rank, nranks, nthreads;
  MPI_Win win;
  long* win_mem;      // rank 0: [next sample, samples done in this run]
  long local_next, local_done;
} mbs_scheduler;

// collective over MPI_COMM_WORLD when use_mpi
void mbs_scheduler_open(mbs_scheduler* s, int use_mpi, int nthreads);
// the counter at the first sample of a batch: on rank 0 (one thread) before the batch is
// announced to the other ranks, when no thread takes work
void mbs_scheduler_reset(mbs_scheduler* s, long first);
// the next chunk [*start, *start + *count) of the batch ending at `end`; *start >= end: none.
// *seen: the calling thread's estimate of the counter (the batch's first sample before its
// first chunk), which sizes the chunk without a read of the counter; updated to the start of
// the chunk plus every worker's share of one chunk of its size.
void mbs_scheduler_next(mbs_scheduler* s, long end, long* seen, long* start, long* count);
// add to the completed samples of this run (called once per chunk); the new total over all
// ranks (approximately, for progress)
long mbs_scheduler_count_done(mbs_scheduler* s, long add);
// collective
void mbs_scheduler_close(mbs_scheduler* s);

#endif  // MBS_STUDIES_SCHEDULER_H_
