// Running a study (include/mbs/study.h, engine.h): the plan, the journal folder and resume,
// then batch after batch over MPI ranks and OpenMP threads, and the result file.
//
// Every rank builds the plan; rank 0 alone talks to the driver's next_batch and absorb and
// announces each batch to the other ranks. Inside a batch, the threads of every rank take
// chunks of sample indices from the shared counter (scheduler.h) and append each completed
// sample to their own journal (journal.h), which the merger (merge.h) on rank 0 reads into the
// result file while the samples are computed. Between batches, every rank learns whether the
// study was stopped or failed anywhere.
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

// threads per rank at most this many per core
#define MBS_MAX_THREADS_PER_CORE 8
// samples a thread simulates side by side when the plan allows it (one AVX-512 group of 8
// lanes, two AVX2 groups of 4), taken from up to MBS_SAMPLE_GROUP_MAX samples of its chunk
// whose outputs it holds at once, within MBS_STUDY_GROUP_BYTES
#define MBS_STUDY_LANES 8
#define MBS_STUDY_GROUP_BYTES (256L << 20)

#include "engine.h"
#include "journal.h"
#include "mbs/study.h"
#include "merge.h"
#include "scheduler.h"

//---------------------------------- signals ----------------------------------------------------

static volatile sig_atomic_t g_stop = 0;

static void on_signal(int sig) {
  g_stop = sig;
}

void mbs_study_install_signal_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);  // a batch scheduler's warning before the time limit
}

int mbs_study_stop_requested(void) {
  return g_stop != 0;
}

void mbs_study_options_default(mbs_study_options* o) {
  memset(o, 0, sizeof(*o));
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int file_exists(const char* p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

// n bytes as "3.2 TB", "120 GB", ...
static void human_bytes(double n, char* buf, size_t cap) {
  static const char* const unit[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (n >= 1000 && u < 6) n /= 1000, u++;
  snprintf(buf, cap, u ? "%.3g %s" : "%.0f %s", n, unit[u]);
}

// The result's size (uncompressed: trajectories, parameters, scalars and status of every
// sample) against the free space of the disk that will hold it, before the first sample; said
// when it is large. Journals kept to the end (`keeps_journals`: an iterative driver's, an array
// part's) take about as much again while the study runs; others are deleted as they are merged.
static int check_size(const mbs_plan* P, const mbs_study_spec* sp, int keeps_journals, FILE* log,
                      mbs_error* err) {
  const double per_sample =
      8.0 * ((double)P->frame_values + P->nscal + P->np) + 8 + 8 + 4 + 1 + 320;
  const double bytes = (double)P->nsamples * per_sample;
  char need[32], freeb[32];
  human_bytes(bytes, need, sizeof need);
  const char* slash = strrchr(sp->output, '/');
  char* dir = slash ? mbs_format_string("%.*s", (int)(slash - sp->output) + 1, sp->output)
                    : mbs_format_string(".");
  struct statvfs vs;
  const int known = dir && statvfs(dir, &vs) == 0;
  const double avail = known ? (double)vs.f_bavail * (double)vs.f_frsize : INFINITY;
  human_bytes(avail, freeb, sizeof freeb);
  int rc = MBS_OK;
  if (sp->check_disk_space && bytes > avail)
    rc = mbs_plan_fail(err, MBS_ERR_ARGUMENT, sp, sp->sampling_line,
                       "%ld samples × %d frames × %ld values need about %s for the result "
                       "(uncompressed), and the disk holding %s has %s free: fewer samples, "
                       "frames (simulation.output_interval) or outputs; or, when compression "
                       "will make it fit, execution: {check_disk_space: false}", P->nsamples,
                       P->nframes, P->nframes > 0 ? P->frame_values / P->nframes : 0, need,
                       dir ? dir : ".", freeb);
  else if (bytes >= 1e8 && log && keeps_journals)
    fprintf(log, "mbstudy: the result will take about %s (uncompressed; %s free on %s), and its "
                 "journals about as much while the study runs\n", need, freeb, dir ? dir : ".");
  else if (bytes >= 1e8 && log) {
    char seg[32];
    human_bytes((double)sp->journal_segment, seg, sizeof seg);
    fprintf(log, "mbstudy: the result will take about %s (uncompressed; %s free on %s); its "
                 "journals are deleted as they are merged into it (a few segments of %s per "
                 "thread remain at a time)\n", need, freeb, dir ? dir : ".", seg);
  }
  free(dir);
  return rc;
}

// the journal files in a parts folder (-1 when it cannot be read)
static int journals_in(const char* parts) {
  char** v = NULL;
  int n = 0, max_attempt = -1;
  if (mbs_journal_list(parts, &v, &n, &max_attempt) != 0) return -1;
  mbs_journal_free_list(v, n);
  return n;
}

// the result file's path: not a folder or other non-file, and its folder exists and is
// writable (the journals and the result are made there)
static int check_output(const char* out, mbs_error* err) {
  struct stat sb;
  if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, out, "output: %s is %s, not a file: name the result "
                    "file (e.g. %s/result.h5)", out, S_ISDIR(sb.st_mode) ? "a folder" :
                    "not a regular file", out);
  const char* slash = strrchr(out, '/');
  char* dir = slash ? mbs_format_string("%.*s", (int)(slash - out), out)
                    : mbs_format_string(".");
  if (!dir) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, out, "out of memory");
  if (!dir[0]) {
    free(dir);
    dir = mbs_format_string("/");
    if (!dir) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, out, "out of memory");
  }
  int rc = MBS_OK;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    rc = MBS_FAIL(err, MBS_ERR_IO, out, "output: %s: the folder %s does not exist", out, dir);
  else if (access(dir, W_OK | X_OK) != 0)
    rc = MBS_FAIL(err, MBS_ERR_IO, out, "output: %s: cannot write in the folder %s: %s", out, dir,
                  strerror(errno));
  free(dir);
  return rc;
}

// wait for MPI requests, sleeping between tests instead of spinning
static void polite_wait(int n, MPI_Request* req) {
  for (int done = 0;;) {
    MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    const struct timespec pause = {0, 1000000};  // 1 ms
    nanosleep(&pause, NULL);
  }
}

//---------------------------------- the output's lock ------------------------------------------

// `<output>.lock`: a run or a merge holds it exclusively, the parts of an array job shared, for
// as long as they work on the output and its journals. An fcntl lock: it dies with its process
// (kill -9 leaves no stale lock) and works on network file systems with lock support. The
// exclusive holder writes its process and host into the file for others' messages. *fd: the
// open lock file (keep it open: closing any descriptor of it drops the lock), -1 on failure;
// *busy: 1 when another process holds it.
static int take_lock(const char* output, int exclusive, int* fd, int* busy, mbs_error* err) {
  *fd = -1;
  *busy = 0;
  char* path = mbs_format_string("%s.lock", output);
  if (!path) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  int rc = MBS_OK;
  for (int attempt = 0; attempt < 10; attempt++) {
    const int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0) {
      rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create the lock file: %s", path,
                    strerror(errno));
      break;
    }
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = exclusive ? F_WRLCK : F_RDLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(f, F_SETLK, &fl) != 0) {
      const int e = errno;
      char who[256] = "";
      const ssize_t n = pread(f, who, sizeof(who) - 1, 0);
      who[n > 0 ? n : 0] = 0;
      who[strcspn(who, "\n")] = 0;
      close(f);
      if (e != EACCES && e != EAGAIN) {
        rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot lock: %s", path, strerror(e));
        break;
      }
      *busy = 1;
      long pid = 0;
      char host[200] = "";
      if (sscanf(who, "%ld %199s", &pid, host) == 2)
        rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, output,
                      "%s is being written by process %ld on host %s (another run, resume or "
                      "merge of this output); wait for it or stop it first", output, pid, host);
      else
        rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, output,
                      "%s is being written by array parts of this study running now (%s); "
                      "merge when they are done", output, path);
      break;
    }
    // the file locked must still be the one at the path (a finished run removes it)
    struct stat a, b;
    if (fstat(f, &a) != 0 || stat(path, &b) != 0 || a.st_ino != b.st_ino ||
        a.st_dev != b.st_dev) {
      close(f);
      continue;
    }
    if (exclusive) {
      char host[256] = "?";
      gethostname(host, sizeof(host) - 1);
      host[sizeof(host) - 1] = 0;
      char line[300];
      const int n = snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), host);
      if (ftruncate(f, 0) != 0 || pwrite(f, line, (size_t)n, 0) != n) {
        // the lock holds all the same; only the message of others would lack the holder
      }
    }
    *fd = f;
    break;
  }
  if (rc == MBS_OK && *fd < 0)
    rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: the lock file keeps changing", path);
  free(path);
  return rc;
}

// drop the lock; after a complete result, remove the lock file (while holding it)
static void drop_lock(const char* output, int fd, int remove_file) {
  if (fd < 0) return;
  if (remove_file) {
    char* path = mbs_format_string("%s.lock", output);
    if (path) unlink(path);
    free(path);
  }
  close(fd);
}

//---------------------------------- the plan ---------------------------------------------------

static int make_plan(mbs_plan* P, mbs_driver* D, mbs_error* err) {
  const mbs_study_spec* spec = P->spec;
  int rc = mbs_integrator_from_name(spec->integrator);
  if (rc < 0)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, spec, 0, "unknown integrator '%s'",
                         spec->integrator);
  P->integrator = (mbs_integrator_type)rc;
  mbs_driver* prep = D->prep;
  if (D->ops->load_model) rc = D->ops->load_model(D, P, err);
  else if (prep && prep->ops->load_model) rc = prep->ops->load_model(prep, P, err);
  else rc = mbs_plan_load_model(P, err);
  // the model's warnings (elements read but not simulated, ...), once, as model info and
  // simulate give them; the result file records them too (root attribute model_warnings)
  if (rc == MBS_OK && P->om && P->rank == 0)
    for (int i = 0; i < mbs_osim_nwarning(P->om); i++)
      fprintf(P->log, "mbstudy: warning: %s\n", mbs_osim_warning(P->om, i));
  if (rc == MBS_OK && prep && prep->ops->axes) rc = prep->ops->axes(prep, P, err);
  if (rc == MBS_OK && D->ops->axes) rc = D->ops->axes(D, P, err);
  if (rc == MBS_OK) rc = mbs_plan_params(P, err);
  if (rc == MBS_OK) rc = mbs_plan_outputs(P, err);
  if (rc == MBS_OK && prep) rc = prep->ops->plan(prep, P, err);
  if (rc == MBS_OK) rc = D->ops->plan(D, P, err);
  if (rc == MBS_OK) rc = mbs_plan_events_and_scalars(P, err);
  if (rc == MBS_OK && P->nsamples < 1)
    rc = mbs_plan_fail(err, MBS_ERR_ARGUMENT, spec, 0, "the study has no samples");
  return rc;
}

//---------------------------------- journals and resume ----------------------------------------

typedef struct run_state {
  mbs_plan* P;
  mbs_driver* D;
  const mbs_study_options* o;
  const char* parts;
  unsigned char* done;   // bitmap of samples completed in earlier runs
  long done_before, failed_before;
  int attempt;
  int use_mpi, rank, nranks, nthreads;
  int group;             // samples a thread takes at once (1: one at a time)
  int lanes;             // of which it simulates this many side by side
  char dynamics[320];    // how, for the result file
  mbs_scheduler sched;
  mbs_merger M;
  int merger_init;       // rank 0 of a whole study: the merger is set up (mbs_merger_init)
  int merger_running;
  // the current batch (the same on every rank)
  mbs_batch batch;
  double* batch_params;  // a copy on every rank (iterative drivers)
  long end;              // the end of the last batch: the study's count so far
  int quit;              // 1: no more batches (done, stopped or failed)
  int bad;               // this rank failed
  mbs_error err;
  double last_progress;
} run_state;

static int is_done(const run_state* R, long i) {
  return (R->done[i >> 3] >> (i & 7)) & 1;
}

// with an array job's part: a sample of another part (done elsewhere)
static int not_mine(const run_state* R, long i) {
  return R->o->part_count > 0 && i % R->o->part_count != R->o->part_index;
}

// mark the samples completed by earlier runs: those merged into the result file below its mark
// (rank 0 checks the file and reopens it; every rank learns the count), then the journals'
static int scan_journals(run_state* R, mbs_error* err) {
  long mark[2] = {0, 0};  // merged samples, failed among them (-1: rank 0 failed)
  if (R->merger_init && mbs_merger_reopen(&R->M, &mark[0], &mark[1], err) != MBS_OK)
    mark[0] = -1;
  if (R->use_mpi) MPI_Bcast(mark, 2, MPI_LONG, 0, MPI_COMM_WORLD);
  if (mark[0] < 0)
    return R->rank == 0 ? err->code
                        : MBS_FAIL(err, MBS_ERR_IO, "study", "stopped: rank 0 reported an error");
  if (mark[0] > R->P->nsamples) mark[0] = R->P->nsamples;
  for (long i = 0; i < mark[0]; i++) R->done[i >> 3] |= (unsigned char)(1u << (i & 7));
  R->done_before = mark[0];
  R->failed_before = mark[1];
  char** files;
  int n, max_attempt;
  if (mbs_journal_list(R->parts, &files, &n, &max_attempt))
    return MBS_FAIL(err, MBS_ERR_IO, R->parts, "%s: cannot read: %s", R->parts, strerror(errno));
  R->attempt = max_attempt + 1;
  const mbs_journal_layout L = {R->P->fingerprint, R->P->np, R->P->frame_values, R->P->nscal};
  // rank 0 of a whole study has the folder to itself (the parts of an array job share it: a
  // journal another part is creating may not have its header yet)
  const int own_folder = R->rank == 0 && R->o->part_count <= 0;
  mbs_journal_record rec;
  for (int i = 0; i < n; i++) {
    mbs_journal_reader* r = mbs_journal_open(files[i], &L, err);
    if (!r && (mbs_journal_header_cut_short(files[i]) || !file_exists(files[i]))) {
      // cut short in its header (a full disk or a crash while it was created): no sample in
      // it; set aside so that it stops every resume (gone: set aside by rank 0 meanwhile)
      mbs_error_clear(err);
      char* to = NULL;
      if (own_folder && file_exists(files[i])) {
        if (mbs_journal_set_aside(files[i], &to, err) != MBS_OK) {
          mbs_journal_free_list(files, n);
          return err->code;
        }
        fprintf(R->P->log, "mbstudy: warning: %s: a journal cut short in its header (a full "
                "disk or a crash while it was created): it holds no sample; set aside as %s\n",
                files[i], to);
        free(to);
      }
      continue;
    }
    if (!r) {
      mbs_journal_free_list(files, n);
      return err->code;
    }
    while (mbs_journal_next(r, &rec)) {
      if (rec.index < 0 || rec.index >= R->P->nsamples) break;
      unsigned char* byte = &R->done[rec.index >> 3];
      const unsigned char bit = (unsigned char)(1u << (rec.index & 7));
      if (*byte & bit) continue;
      *byte |= bit;
      R->done_before++;
      if (rec.status != MBS_OK) R->failed_before++;
    }
    const long damaged = mbs_journal_damaged(r);
    if (damaged && R->rank == 0)
      fprintf(R->P->log, "mbstudy: warning: %s: %ld damaged record%s skipped (%s will be "
              "recomputed)\n", files[i], damaged, damaged == 1 ? "" : "s",
              damaged == 1 ? "its sample" : "their samples");
    mbs_journal_close_reader(r);
  }
  mbs_journal_free_list(files, n);
  return MBS_OK;
}

//---------------------------------- batches ----------------------------------------------------

// rank 0: the driver's next batch, the shared counter at its start, the merger told; then
// every rank gets it (one thread per rank)
static void issue_batch(run_state* R) {
  const mbs_plan* P = R->P;
  long head[3] = {0, 0, 0};  // first, count, flags (1 explicit parameters, 2 failed)
  if (R->rank == 0 && !R->quit && R->bad) head[2] = 2;
  if (R->rank == 0 && !R->quit && !R->bad) {
    mbs_batch b = {R->end, 0, NULL};
    int rc = MBS_OK;
    if (R->D->ops->iterative) {
      rc = R->D->ops->next_batch(R->D, P, &b, &R->err);
    } else if (R->end == 0) {  // one-shot: all samples at once
      b.count = P->nsamples;
    }
    if (rc == MBS_OK && b.count > 0 &&
        (b.first != R->end || b.first + b.count > P->nsamples ||
         (R->D->ops->iterative && !b.params)))
      rc = MBS_FAIL(&R->err, MBS_ERR_INTERNAL, "study",
                    "driver '%s': batch [%ld, %ld) does not follow [0, %ld) within %ld samples",
                    R->D->ops->name, b.first, b.first + b.count, R->end, P->nsamples);
    if (rc == MBS_OK && b.params && b.count > 0) {
      double* p = realloc(R->batch_params, (size_t)b.count * (size_t)P->np * sizeof(double) + 8);
      if (!p) {
        rc = MBS_FAIL(&R->err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      } else {
        R->batch_params = p;
        memcpy(p, b.params, (size_t)b.count * (size_t)P->np * sizeof(double));
      }
    }
    if (rc == MBS_OK && b.count > 0) {
      mbs_scheduler_reset(&R->sched, b.first);
      if (R->merger_running) {
        if (R->D->ops->absorb)
          rc = mbs_merger_collect(&R->M, b.first, b.count, b.params ? R->batch_params : NULL,
                                  &R->err);
        mbs_merger_set_limit(&R->M, b.first + b.count);
      }
    }
    if (rc != MBS_OK) {
      R->bad = 1;
      head[2] = 2;
    } else {
      head[0] = b.first;
      head[1] = b.count;
      head[2] = b.params ? 1 : 0;
    }
  }
  if (R->use_mpi) {
    MPI_Request req;
    MPI_Ibcast(head, 3, MPI_LONG, 0, MPI_COMM_WORLD, &req);
    polite_wait(1, &req);
  }
  R->batch.first = head[0];
  R->batch.count = head[1];
  R->batch.params = NULL;
  if (head[2] == 2) {
    R->quit = 1;
    R->batch.count = 0;
    if (!R->bad) {
      R->bad = 1;
      MBS_FAIL(&R->err, MBS_ERR_INTERNAL, "study", "rank 0 failed; see its messages");
    }
    return;
  }
  if (R->batch.count == 0) {
    R->quit = 1;
    return;
  }
  if (head[2] == 1) {
    const size_t n = (size_t)R->batch.count * (size_t)P->np;
    int ok = 1;
    if (R->rank != 0) {
      double* p = realloc(R->batch_params, n * sizeof(double) + 8);
      if (p) R->batch_params = p;
      ok = p != NULL;
    }
    if (R->use_mpi) {  // (every rank takes part, even one short of memory: it then quits)
      double* buf = ok ? R->batch_params : malloc(n * sizeof(double) + 8);
      MPI_Request req;
      MPI_Ibcast(buf, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
      polite_wait(1, &req);
      if (!ok) free(buf);
    }
    if (!ok) {  // no work on this rank; every rank learns it at the end of the batch
      R->bad = 1;
      MBS_FAIL(&R->err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      return;
    }
    R->batch.params = R->batch_params;
  }
}

// after a batch (one thread per rank): did any rank stop or fail? rank 0 gives the batch to the
// driver
static void end_batch(run_state* R) {
  int flags[2] = {g_stop != 0, R->bad};
  if (R->use_mpi) {
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
    polite_wait(1, &req);
  }
  if (flags[0] || flags[1]) {
    R->quit = 1;
    if (flags[1] && !R->bad) {
      R->bad = 1;
      MBS_FAIL(&R->err, MBS_ERR_INTERNAL, "study", "another rank failed; see its messages");
    }
    return;
  }
  R->end = R->batch.first + R->batch.count;
  if (R->rank == 0 && R->D->ops->absorb && R->merger_running) {
    int rc = mbs_merger_wait(&R->M, R->end, &R->err);
    if (rc == MBS_OK) {
      const mbs_batch_results b = mbs_merger_batch(&R->M);
      rc = R->D->ops->absorb(R->D, R->P, &b, &R->err);
    }
    if (rc != MBS_OK) R->bad = 1;
  }
  // (a failure of rank 0 here reaches the others with the next batch)
}

//---------------------------------- the run ----------------------------------------------------

// the end of a run that computes nothing (an error, nothing to do): the lock released and
// everything freed; rc returned
static int end_early(const mbs_study_spec* spec, int lock_fd, mbs_driver* D, mbs_plan* P,
                     run_state* R, const mbs_study_result* res, mbs_study_result* result,
                     int rc) {
  if (R->merger_init) mbs_merger_abandon(&R->M);
  drop_lock(spec->output, lock_fd, 0);
  mbs_driver_destroy(D);
  mbs_plan_free(P);
  free((char*)R->parts);
  free(R->done);
  if (result) *result = *res;
  return rc;
}

int mbs_study_run(const mbs_study_spec* spec, const mbs_study_options* opt,
                  mbs_study_result* result, mbs_error* err) {
  mbs_study_options dflt;
  if (!opt) {
    mbs_study_options_default(&dflt);
    opt = &dflt;
  }
  FILE* log = opt->log ? opt->log : stderr;
  mbs_study_result res;
  memset(&res, 0, sizeof(res));
  res.first_failed = -1;
  const double t_start = now();
  run_state R;
  memset(&R, 0, sizeof(R));
  mbs_plan P;
  memset(&P, 0, sizeof(P));
  mbs_driver D;
  memset(&D, 0, sizeof(D));
  R.P = &P;
  R.D = &D;
  R.o = opt;
  R.use_mpi = opt->use_mpi;
  R.nranks = 1;
  if (R.use_mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &R.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &R.nranks);
  }
  R.nthreads = spec->threads > 0 ? spec->threads : omp_get_max_threads();
  P.spec = spec;
  P.rank = R.rank;
  P.nranks = R.nranks;
  P.log = log;
  P.run_tool = opt->run_tool;
  P.run_tool_user = opt->run_tool_user;
  // threads: a sane multiple of the cores (each thread holds a State, its journal and its
  // stack; thousands of them only thrash, and the OpenMP runtime fails on tens of thousands)
  const int cores = omp_get_num_procs() > 0 ? omp_get_num_procs() : 1;
  const int max_threads = MBS_MAX_THREADS_PER_CORE * cores;
  int rc = MBS_OK;
  if (spec->threads > max_threads)
    rc = mbs_plan_fail(err, MBS_ERR_ARGUMENT, spec, spec->threads_line,
                       "%s: %d threads per rank on a machine with %d core%s: at most %d (%d per "
                       "core); 0 takes one per core", spec->threads_line ? "execution.threads"
                       : "--threads", spec->threads, cores, cores == 1 ? "" : "s", max_threads,
                       MBS_MAX_THREADS_PER_CORE);
  if (rc == MBS_OK) rc = mbs_driver_create(spec, &D, err);
  if (rc == MBS_OK) {
    P.study_type = D.ops->name;
    rc = make_plan(&P, &D, err);
  }
  // the result's size, said and checked before anything is sized by the sample count
  if (rc == MBS_OK && R.rank == 0 && !opt->plan_only)
    rc = check_size(&P, spec, D.ops->iterative || opt->part_count > 0, log, err);
  char* parts = mbs_format_string("%s.parts", spec->output);
  R.parts = parts;
  R.done = rc == MBS_OK ? calloc((size_t)(P.nsamples + 7) / 8 + 1, 1) : NULL;
  if (rc == MBS_OK && (!parts || !R.done))
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory for the bookkeeping of %ld "
                  "samples (sampling.count)", P.nsamples);
  const int part = opt->part_count > 0;
  if (rc == MBS_OK && part && (opt->part_index < 0 || opt->part_index >= opt->part_count))
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, "study", "part %d of %d does not exist (0 .. %d)",
                  opt->part_index, opt->part_count, opt->part_count - 1);
  if (rc == MBS_OK && (part || opt->merge_only) && D.ops->iterative)
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, "study",
                  "a %s study chooses its samples as it goes: it cannot be split into array "
                  "parts or merged from them; run it as one job", D.ops->name);
  if (rc == MBS_OK && part && opt->force)
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, parts,
                  "--force with a part would discard the other parts' journals in %s", parts);
  // the output: a file (or nothing yet) in a folder that exists and can be written, checked
  // before the first sample rather than after the last
  if (rc == MBS_OK && R.rank == 0) rc = check_output(spec->output, err);
  if (rc == MBS_OK && opt->plan_only) {  // the study checked; nothing run, nothing written
    res.samples = P.nsamples;
    mbs_driver_destroy(&D);
    mbs_plan_free(&P);
    free(parts);
    free(R.done);
    if (result) *result = res;
    return MBS_OK;
  }
  // rank 0 holds the output's lock from here to the end (shared by the parts of an array job)
  int lock_fd = -1, lock_busy = 0, complete = 0;
  if (rc == MBS_OK && R.rank == 0) rc = take_lock(spec->output, !part, &lock_fd, &lock_busy, err);
  if (rc == MBS_OK && R.rank == 0 && part) {
    // the shared journals folder: every part adds its own files; rerunning a part goes on
    if (file_exists(spec->output))
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, spec->output,
                    "%s exists: the parts of this study were merged already", spec->output);
    else if (mkdir(parts, 0777) != 0 && errno != EEXIST)
      rc = MBS_FAIL(err, MBS_ERR_IO, parts, "%s: cannot create: %s", parts, strerror(errno));
  }
  // the result file and the journals: never overwrite without --force
  if (rc == MBS_OK && R.rank == 0 && !part) {
    int parts_exist = file_exists(parts);
    const int out_exists = file_exists(spec->output);
    if (parts_exist && !opt->resume && !opt->force && journals_in(parts) == 0 &&
        rmdir(parts) == 0)
      parts_exist = 0;  // left empty by a run stopped before its first sample: nothing lost
    if (out_exists && opt->resume && !opt->force && !parts_exist && !opt->merge_only)
      complete = 1;  // a finished study (a stopped one keeps its journals): nothing to resume
    else if (out_exists && !opt->force)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, spec->output,
                    "%s exists; use --force to replace it", spec->output);
    else if (parts_exist && !opt->resume && !opt->force)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, parts,
                    "%s holds the completed samples of a stopped run of this study; use "
                    "--resume to continue it or --force to start over", parts);
    else if (!parts_exist && opt->resume)
      fprintf(log, "mbstudy: nothing to resume (%s does not exist); starting the study\n",
              parts);
    if (rc == MBS_OK && opt->force && !opt->resume && parts_exist) mbs_journal_clear_dir(parts);
    if (rc == MBS_OK && mkdir(parts, 0777) != 0 && errno != EEXIST)
      rc = MBS_FAIL(err, MBS_ERR_IO, parts, "%s: cannot create: %s", parts, strerror(errno));
  }
  if (R.use_mpi) {  // every rank learns whether rank 0 found a problem or nothing to do
    int flags[2] = {rc != MBS_OK, complete};
    MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (flags[0] && rc == MBS_OK)
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, "study", "stopped: rank 0 reported an error");
    complete = flags[1];
  }
  if (rc == MBS_OK && complete) {
    res.samples = P.nsamples;
    res.skipped = P.nsamples;
    res.complete_before = 1;
    return end_early(spec, lock_fd, &D, &P, &R, &res, result, MBS_OK);
  }
  if (rc == MBS_OK) {
    // the batched simulation where the plan allows it
    char why[256];
    const double sample_bytes = 8.0 * ((double)P.frame_values + P.np + P.nscal + P.nresults);
    long group = (long)((double)MBS_STUDY_GROUP_BYTES / fmax(sample_bytes, 1.0));
    if (group > MBS_SAMPLE_GROUP_MAX) group = MBS_SAMPLE_GROUP_MAX;
    int batchable = !opt->no_batch && mbs_plan_batchable(&P, &D, why, sizeof(why));
    if (batchable && group < MBS_STUDY_LANES) {
      snprintf(why, sizeof(why), "a sample's outputs (%.0f MB) are too large to hold %d at once",
               sample_bytes / 1e6, MBS_STUDY_LANES);
      batchable = 0;
    }
    if (batchable) {
      R.group = (int)group;
      R.lanes = MBS_STUDY_LANES;
      snprintf(R.dynamics, sizeof(R.dynamics),
               "batched: %d samples simulated side by side per thread, their forward dynamics in "
               "%s SIMD lanes (mbs_batch_simulate)", R.lanes, mbs_batch_isa());
    } else {
      R.group = 1;
      snprintf(R.dynamics, sizeof(R.dynamics), "one sample at a time: %s",
               opt->no_batch ? "batching turned off (--one-at-a-time)" : why);
    }
  }
  if (rc == MBS_OK && R.rank == 0 && !part) {
    // merged journals are deleted during the run, except where a resume or the driver needs
    // them again: an iterative driver's (its batches are replayed) and a merge of parts
    mbs_merger_init(&R.M, &P, parts, spec->output, log, t_start, R.nranks, R.nthreads,
                    !D.ops->iterative && !opt->merge_only);
    R.M.dynamics = R.dynamics;
    R.merger_init = 1;
  }
  if (rc == MBS_OK) rc = scan_journals(&R, err);
  if (rc == MBS_OK && opt->merge_only == 2 && R.done_before < P.nsamples) {
    res.incomplete = 1;  // not every part is done: nothing to do yet
    res.samples = P.nsamples;
    res.skipped = R.done_before;
    return end_early(spec, lock_fd, &D, &P, &R, &res, result, MBS_OK);
  }
  if (rc == MBS_OK && opt->merge_only && R.done_before < P.nsamples) {
    long first = -1;
    for (long i = 0; i < P.nsamples && first < 0; i++)
      if (!is_done(&R, i)) first = i;
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, parts,
                  "%ld of %ld samples are not in the journals of %s (the first: sample %ld): "
                  "a part has not finished or was lost; run the study again with --resume to "
                  "compute them", P.nsamples - R.done_before, P.nsamples, parts, first);
  }
  if (rc != MBS_OK) {
    if (opt->merge_only == 2 && lock_busy) {  // a part still works: it merges when done
      res.incomplete = 1;
      res.samples = P.nsamples;
      rc = MBS_OK;
    }
    return end_early(spec, lock_fd, &D, &P, &R, &res, result, rc);
  }
  res.samples = P.nsamples;
  res.skipped = R.done_before;
  mbs_scheduler_open(&R.sched, R.use_mpi, R.nthreads);
  if (R.rank == 0 && part) {
    long mine = 0, mine_done = 0;
    for (long i = 0; i < P.nsamples; i++)
      if (!not_mine(&R, i)) {
        mine++;
        mine_done += is_done(&R, i);
      }
    if (mine_done)
      fprintf(log, "mbstudy: part %d of %d: going on: %ld of its %ld samples were completed "
              "before\n", opt->part_index, opt->part_count, mine_done, mine);
  } else if (R.rank == 0 && R.done_before && !opt->merge_only) {
    fprintf(log, "mbstudy: resuming: %ld of %ld samples were completed before (%ld failed)\n",
            R.done_before, P.nsamples, R.failed_before);
  }
  // the progress starts from what earlier runs did (not part of this run's rate)
  if (R.rank == 0 && opt->progress)
    opt->progress(opt->progress_user, R.done_before, D.ops->iterative ? -P.nsamples : P.nsamples);
  long failed_run = 0, done_run = 0;
  double io_time = 0;
  // the pristine State (model defaults) every sample starts from
  mbs_state* pristine = P.sys ? mbs_state_create(P.sys) : NULL;
  if (P.sys && !pristine) {
    R.bad = 1;
    MBS_FAIL(&R.err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  }
  // rank 0 writes the result file while the samples are computed (not in an array part)
  if (R.rank == 0 && !part) {
    if (!R.bad && mbs_merger_start(&R.M, &R.err) == MBS_OK) {
      R.merger_running = 1;
    } else {
      mbs_merger_abandon(&R.M);
      R.bad = 1;
    }
  }
  R.last_progress = now();
  int err_thread = 0;
  mbs_error terr;
  mbs_error_clear(&terr);
#pragma omp parallel num_threads(R.nthreads) reduction(+ : failed_run, done_run, io_time)
  {
    const int tid = omp_get_thread_num();
    mbs_error e;
    mbs_error_clear(&e);
    mbs_journal_writer* w = NULL;
    char* jpath = NULL;  // the thread's journal (its first segment's name)
    int segment = 0;
    mbs_sample* rs[MBS_SAMPLE_GROUP_MAX] = {NULL};
    mbs_batch_sim* bs = NULL;  // the batched simulation, when the plan allows it
    int ok = 1;
    double sync_t = now();
    for (;;) {
#pragma omp barrier
#pragma omp single
      issue_batch(&R);
      if (R.quit) break;
      // resources on first use (a rank without work in a batch makes none)
      if (ok && !w) {
        char* path = part ? mbs_format_string("%s/j%d-p%d-r%d-t%d.bin", parts, R.attempt,
                                              opt->part_index, R.rank, tid)
                          : mbs_format_string("%s/j%d-r%d-t%d.bin", parts, R.attempt, R.rank,
                                              tid);
        const mbs_journal_layout L = {P.fingerprint, P.np, P.frame_values, P.nscal};
        w = path ? mbs_journal_create(path, &L, &e) : NULL;
        jpath = path;
        ok = w != NULL;
        for (int k = 0; ok && k < R.group; k++) ok = (rs[k] = mbs_sample_create(&P, &D)) != NULL;
        if (ok && R.group > 1) {
          mbs_simulation_options so;
          mbs_sample_simulation_options(&P, &so);
          ok = (bs = mbs_batch_sim_create(P.sys, R.lanes, &so)) != NULL;
        }
        if (!ok && !e.code) MBS_FAIL(&e, MBS_ERR_NO_MEMORY, "study", "out of memory");
      }
      const long end = R.batch.first + R.batch.count;
      long seen = R.batch.first;
      while (ok && !g_stop && !R.bad) {
        long start, count, done_chunk = 0;
        mbs_scheduler_next(&R.sched, end, &seen, &start, &count);
        if (start >= end) break;
        int stop = 0;
        for (long i = start; ok && !stop && i < start + count && !g_stop;) {
          // the next group: up to R.group samples of the chunk still to do
          int m = 0;
          int sts[MBS_SAMPLE_GROUP_MAX];
          for (; i < start + count && m < R.group; i++) {
            if (is_done(&R, i) || not_mine(&R, i)) continue;
            mbs_sample* r = rs[m++];
            r->index = i;
            if (R.batch.params)
              memcpy(r->params, R.batch.params + (i - R.batch.first) * P.np,
                     (size_t)P.np * sizeof(double));
            else
              D.ops->point(&D, &P, i, r->params);
          }
          if (m == 0) break;
          if (bs) mbs_sample_run_group(rs, m, pristine, bs, sts);
          else sts[0] = mbs_sample_run(rs[0], pristine);
          for (int k = 0; k < m && ok; k++) {
            mbs_sample* r = rs[k];
            const int st = sts[k];
            if (r->stopped || (g_stop && st != MBS_OK)) {  // not recorded: redone on resume
              stop = 1;
              break;
            }
            mbs_journal_record rec;
            memset(&rec, 0, sizeof(rec));
            rec.index = r->index;
            rec.status = st;
            rec.frames = r->frames;
            rec.wall = r->wall;
            rec.steps = r->steps;
            snprintf(rec.message, sizeof(rec.message), "%s", mbs_sample_message(r, st));
            rec.params = r->params;
            rec.traj = r->traj;
            rec.scalars = r->scalars;
            const double tio = now();
            if (mbs_journal_append(w, &rec, &e) != MBS_OK) ok = 0;
            if (ok && now() - sync_t >= spec->checkpoint_interval) {
              ok = mbs_journal_sync(w, &e) == MBS_OK;
              sync_t = now();
            }
            if (ok && mbs_journal_bytes(w) >= spec->journal_segment) {
              // the next segment: this one is complete (synced and closed), and the merger may
              // delete it once its samples are safe in the result file
              ok = mbs_journal_close(w, &e) == MBS_OK;
              w = NULL;
              char* next = ok ? mbs_journal_segment_path(jpath, ++segment) : NULL;
              if (ok) {
                const mbs_journal_layout L = {P.fingerprint, P.np, P.frame_values, P.nscal};
                w = next ? mbs_journal_create(next, &L, &e) : NULL;
                if (!w && !e.code) MBS_FAIL(&e, MBS_ERR_NO_MEMORY, "study", "out of memory");
                ok = w != NULL;
              }
              free(next);
            }
            io_time += now() - tio;
            done_run++;
            done_chunk++;
            failed_run += st != MBS_OK;
          }
        }
        if (done_chunk > 0) {
          const long global = mbs_scheduler_count_done(&R.sched, done_chunk);
          if (R.rank == 0 && tid == 0 && opt->progress && now() - R.last_progress >= 0.5) {
            R.last_progress = now();
            opt->progress(opt->progress_user, R.done_before + global,
                          D.ops->iterative ? -P.nsamples : P.nsamples);
          }
        }
        if (stop) break;
      }
      if (!ok) {
#pragma omp critical(mbs_err)
        if (!err_thread) {
          err_thread = 1;
          terr = e;
        }
        R.bad = 1;  // (a benign race: every writer sets 1)
      }
      // every thread's journal records are with the operating system before the batch ends
#pragma omp barrier
#pragma omp single
      end_batch(&R);
      if (R.quit) break;
    }
    const double tio = now();
    if (w && mbs_journal_close(w, &e) != MBS_OK) {
#pragma omp critical(mbs_err)
      if (!err_thread) {
        err_thread = 1;
        terr = e;
      }
    }
    io_time += now() - tio;
    for (int k = 0; k < MBS_SAMPLE_GROUP_MAX; k++) mbs_sample_destroy(rs[k]);
    mbs_batch_sim_destroy(bs);
    free(jpath);
  }
  mbs_state_destroy(pristine);
  if (err_thread) {
    R.bad = 1;
    R.err = terr.code ? terr : R.err;
  }
  if (R.bad) {
    *err = R.err.code ? R.err
                      : (mbs_error){MBS_ERR_INTERNAL, "study", "the study failed", "", 0};
    rc = err->code ? err->code : MBS_ERR_INTERNAL;
  }
  // everyone stops here; was the study stopped, did any rank fail?
  int stopped = g_stop != 0, bad = rc != MBS_OK;
  long sums[2] = {done_run, failed_run};
  if (R.use_mpi) {
    // ranks that finish first wait without spinning: their cores go to rank 0's last samples
    // and to its writer thread
    int flags[2] = {stopped, bad};
    MPI_Request req[2];
    MPI_Iallreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req[0]);
    MPI_Iallreduce(MPI_IN_PLACE, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &req[1]);
    polite_wait(2, req);
    stopped = flags[0];
    bad = flags[1];
  }
  res.done = sums[0];
  res.failed = R.failed_before + sums[1];
  // the wall-clock time the samplers waited on their journals: every thread's own time (they
  // write at once, in parallel) summed over the threads of every rank, divided by their number
  res.journal_time = io_time;
  if (R.use_mpi)
    MPI_Allreduce(MPI_IN_PLACE, &res.journal_time, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  res.threads_total = R.nranks * R.nthreads;
  res.journal_time /= (double)res.threads_total;
  res.stopped = stopped;
  if (rc == MBS_OK && bad)
    rc = MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "another rank failed; see its messages");
  if (rc == MBS_OK && stopped) {
    if (D.ops->iterative)
      rc = MBS_FAIL(err, MBS_ERR_INTERRUPTED, parts,
                    "stopped by a signal after %ld samples; the completed samples are in %s: "
                    "run again with --resume to go on from there", R.done_before + res.done,
                    parts);
    else
      rc = MBS_FAIL(err, MBS_ERR_INTERRUPTED, parts,
                    "stopped by a signal after %ld of %ld samples; the completed samples are "
                    "in %s: run again with --resume to finish", R.done_before + res.done,
                    P.nsamples, parts);
  }
  if (R.rank == 0 && R.merger_running) {
    const double t0 = now();
    R.M.keep_partial = rc == MBS_ERR_INTERRUPTED && !D.ops->iterative;
    int mrc = mbs_merger_end(&R.M, rc == MBS_OK, R.end, err);
    if (rc == MBS_OK && mrc != MBS_OK) rc = mrc;
    // the driver's own results, in the complete file before it is moved into place
    int frc = MBS_OK;
    mbs_error ferr;
    mbs_error_clear(&ferr);
    if (rc == MBS_OK && D.ops->finish) frc = D.ops->finish(&D, &P, R.M.partial, &ferr);
    mrc = mbs_merger_commit(&R.M, rc == MBS_OK, err);
    if (rc == MBS_OK && mrc != MBS_OK) rc = mrc;
    if (rc == MBS_OK && frc != MBS_OK) {
      // the samples are safe in the file; the analysis failed
      rc = mbs_error_set(err, frc, "mbs_study_run", 0, ferr.component,
                         "%s (the samples are in %s)", ferr.message, spec->output);
    }
    res.merge_time = now() - t0;
    res.merge_busy = R.M.busy;
    if (rc == MBS_OK) {
      res.failed = R.M.failed;
      res.first_failed = R.M.first_failed;
      snprintf(res.first_message, sizeof(res.first_message), "%s", R.M.first_message);
    }
  }
  res.samples = R.end > 0 ? R.end : P.nsamples;
  if (R.use_mpi) {
    // the other ranks wait for rank 0's file without spinning, leaving their cores to it
    int bad0 = rc != MBS_OK && R.rank == 0;
    MPI_Request req;
    MPI_Ibcast(&bad0, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    polite_wait(1, &req);
    if (bad0 && rc == MBS_OK)
      rc = MBS_FAIL(err, MBS_ERR_IO, "study", "rank 0 could not write the result file");
  }
  mbs_scheduler_close(&R.sched);
  drop_lock(spec->output, lock_fd, rc == MBS_OK && !part);
  res.wall_time = now() - t_start;
  res.io_time = res.journal_time + res.merge_time;
  if (result) *result = res;
  mbs_driver_destroy(&D);
  mbs_plan_free(&P);
  free(parts);
  free(R.done);
  free(R.batch_params);
  return rc;
}
