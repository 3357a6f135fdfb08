// The distributed scheduler (scheduler.h).
#include "scheduler.h"

#include <omp.h>
#include <string.h>

void mbs_scheduler_open(mbs_scheduler* s, int use_mpi, int nthreads) {
  memset(s, 0, sizeof(*s));
  s->use_mpi = use_mpi;
  s->nthreads = nthreads;
  s->nranks = 1;
  if (!use_mpi) return;
  MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s->nranks);
  MPI_Win_allocate(s->rank == 0 ? 2 * (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &s->win_mem, &s->win);
  if (s->rank == 0) s->win_mem[0] = s->win_mem[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, s->win);
}

void mbs_scheduler_reset(mbs_scheduler* s, long first) {
  if (!s->use_mpi) {
    __atomic_store_n(&s->local_next, first, __ATOMIC_SEQ_CST);
    return;
  }
  long old;
#pragma omp critical(mbs_mpi)
  {
    MPI_Fetch_and_op(&first, &old, MPI_LONG, 0, 0, MPI_REPLACE, s->win);
    MPI_Win_flush(0, s->win);
  }
}

void mbs_scheduler_next(mbs_scheduler* s, long end, long* seen, long* start, long* count) {
  const long nworkers = (long)s->nranks * s->nthreads;
  // guided: a quarter of an even share of what is left, at least 1, at most 64, from this
  // thread's estimate of the counter (one request per chunk, no read)
  long c = (end - *seen) / (4 * nworkers);
  if (c < 1) c = 1;
  if (c > 64) c = 64;
  if (s->use_mpi) {
#pragma omp critical(mbs_mpi)
    {
      MPI_Fetch_and_op(&c, start, MPI_LONG, 0, 0, MPI_SUM, s->win);
      MPI_Win_flush(0, s->win);
    }
  } else {
    *start = __atomic_fetch_add(&s->local_next, c, __ATOMIC_RELAXED);
  }
  // the estimate for the next chunk: while this thread works on its chunk, each of the others
  // takes about one of the same size (taking only its own, start + c, would lag the counter
  // by the others' takes and keep the last chunks of a large run too large)
  *seen = *start + c * nworkers;
  if (*start + c > end) c = end - *start;
  *count = c > 0 ? c : 0;
}

long mbs_scheduler_count_done(mbs_scheduler* s, long add) {
  long total;
  if (s->use_mpi) {
#pragma omp critical(mbs_mpi)
    {
      MPI_Fetch_and_op(&add, &total, MPI_LONG, 0, 1, MPI_SUM, s->win);
      MPI_Win_flush(0, s->win);
    }
    return total + add;
  }
  return __atomic_add_fetch(&s->local_done, add, __ATOMIC_RELAXED);
}

void mbs_scheduler_close(mbs_scheduler* s) {
  if (!s->use_mpi) return;
  MPI_Win_unlock_all(s->win);
  MPI_Win_free(&s->win);
}
