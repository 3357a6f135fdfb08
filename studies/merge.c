// The merger (merge.h).
#include "merge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mbs/version.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static mbs_journal_layout layout_of(const mbs_plan* P) {
  mbs_journal_layout L = {P->fingerprint, P->np, P->frame_values, P->nscal};
  return L;
}

// the journals not known yet. `complete`: no longer written (an earlier run's, or at the end):
// their damaged records are skipped at once; a journal being written is read up to a record
// that does not check out, which may be whole later (a network file system can show its pages
// out of order), until the end (mbs_journal_set_resync in step)
static int find_sources(mbs_merger* M, int complete) {
  char** files;
  int n, max_attempt;
  if (mbs_journal_list(M->parts, &files, &n, &max_attempt))
    return MBS_FAIL(&M->err, MBS_ERR_IO, M->parts, "%s: cannot read: %s", M->parts,
                    strerror(errno));
  const mbs_journal_layout L = layout_of(M->P);
  int rc = MBS_OK;
  for (int i = 0; i < n && rc == MBS_OK; i++) {
    int known = 0;
    for (int k = 0; k < M->nsrc && !known; k++) known = !strcmp(M->src[k].path, files[i]);
    if (known) continue;
    mbs_journal_reader* r = mbs_journal_open(files[i], &L, &M->err);
    if (!r) {  // a journal just created may not have its header yet: try again later
      // (at the end, one cut short in its header holds no sample; the resume set it aside)
      if (M->err.code == MBS_ERR_PARSE &&
          (!M->finish || mbs_journal_header_cut_short(files[i]))) {
        mbs_error_clear(&M->err);
        continue;
      }
      rc = M->err.code;
      break;
    }
    if (M->nsrc == M->capsrc) {
      const int cap = M->capsrc ? 2 * M->capsrc : 16;
      mbs_merge_src* p = realloc(M->src, (size_t)cap * sizeof(*p));
      if (!p) {
        mbs_journal_close_reader(r);
        rc = MBS_FAIL(&M->err, MBS_ERR_NO_MEMORY, "study", "out of memory");
        break;
      }
      M->src = p;
      M->capsrc = cap;
    }
    mbs_merge_src* m = &M->src[M->nsrc++];
    memset(m, 0, sizeof(*m));
    m->path = files[i];
    files[i] = NULL;
    m->r = r;
    m->complete = complete || M->finish;
    m->max_index = -1;
    mbs_journal_set_resync(r, m->complete);
  }
  mbs_journal_free_list(files, n);
  return rc;
}

// make the file, or (reopen > 0) continue the one whose first `reopen` samples are merged
static int open_store(mbs_merger* M, long reopen, mbs_store_prefix* info) {
  const mbs_plan* P = M->P;
  const mbs_study_spec* sp = P->spec;
  int nq = 0;
  for (int i = 0; i < P->nquant; i++) nq += !P->quant[i].hidden;
  mbs_store_quantity* sq = calloc((size_t)nq + 1, sizeof(*sq));
  const char** pn = calloc((size_t)P->np + 1, sizeof(char*));
  const char** pu = calloc((size_t)P->np + 1, sizeof(char*));
  const char** sn = calloc((size_t)P->nscal + 1, sizeof(char*));
  const char** su = calloc((size_t)P->nscal + 1, sizeof(char*));
  if (!M->traj) M->traj = calloc((size_t)nq + 1, sizeof(double*));
  int rc = MBS_OK;
  if (!sq || !pn || !pu || !sn || !su || !M->traj || !M->partial)
    rc = MBS_FAIL(&M->err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int i = 0, k = 0; rc == MBS_OK && i < P->nquant; i++)
    if (!P->quant[i].hidden)
      sq[k++] = (mbs_store_quantity){P->quant[i].name, P->quant[i].ncomp,
                                     (const char* const*)P->quant[i].comps, P->quant[i].unit,
                                     P->quant[i].comp_units};
  for (int i = 0; rc == MBS_OK && i < P->np; i++) {
    pn[i] = P->par[i].name;
    pu[i] = P->par[i].unit ? P->par[i].unit : "";
  }
  for (int i = 0; rc == MBS_OK && i < P->nscal; i++) {
    sn[i] = P->scal[i].name;
    su[i] = P->scal[i].unit ? P->scal[i].unit : "";
  }
  char seed[32], count[32], ranks[32], threads[32], hash[32], started[64];
  snprintf(seed, sizeof(seed), "%llu", (unsigned long long)sp->seed);
  snprintf(count, sizeof(count), "%ld", P->nsamples);
  snprintf(ranks, sizeof(ranks), "%d", M->nranks);
  snprintf(threads, sizeof(threads), "%d", M->nthreads);
  snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)P->fingerprint);
  const time_t t0 = time(NULL) - (time_t)(now() - M->t_start);
  struct tm tmv;
  gmtime_r(&t0, &tmv);
  strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tmv);
  mbs_store_attribute all[20 + MBS_PLAN_MAX_ATTRIBUTES];
  int na = 0;
  all[na++] = (mbs_store_attribute){"creator", "mbstudy " MBS_VERSION_STRING};
  all[na++] = (mbs_store_attribute){"model", sp->model_path ? sp->model_path : sp->model};
  all[na++] = (mbs_store_attribute){"model_name", P->om ? mbs_osim_name(P->om) : sp->model};
  all[na++] = (mbs_store_attribute){"study_fingerprint", hash};
  all[na++] = (mbs_store_attribute){"spec", sp->text};
  all[na++] = (mbs_store_attribute){"spec_path", sp->path};
  all[na++] = (mbs_store_attribute){"study", P->study_type};
  all[na++] = (mbs_store_attribute){"seed", seed};
  all[na++] = (mbs_store_attribute){"samples", count};
  if (sp->has_sampling || sp->posture)
    all[na++] = (mbs_store_attribute){"sampling", mbs_design_name(sp->method)};
  all[na++] = (mbs_store_attribute){"integrator", P->fn ? "none (a test function)"
                                                        : sp->integrator};
  all[na++] = (mbs_store_attribute){"ranks_last_run", ranks};
  all[na++] = (mbs_store_attribute){"threads_per_rank_last_run", threads};
  all[na++] = (mbs_store_attribute){"started_last_run", started};
  if (M->dynamics) all[na++] = (mbs_store_attribute){"dynamics_last_run", M->dynamics};
  for (int i = 0; i < P->nattr; i++)
    all[na++] = (mbs_store_attribute){P->attr_key[i], P->attr_value[i]};
  // the model's warnings, one per line
  char* warnings = NULL;
  size_t wlen = 0;
  if (P->om && mbs_osim_nwarning(P->om) > 0) {
    FILE* wf = open_memstream(&warnings, &wlen);
    for (int i = 0; wf && i < mbs_osim_nwarning(P->om); i++)
      fprintf(wf, "%s%s", i ? "\n" : "", mbs_osim_warning(P->om, i));
    if (wf) fclose(wf);
    if (warnings) all[na++] = (mbs_store_attribute){"model_warnings", warnings};
  }
  static const double pct[5] = {5, 25, 50, 75, 95};
  const mbs_store_layout layout = {P->nsamples, P->np, pn, pu, P->nframes, P->times, nq, sq,
                                   P->nscal, sn, su, 5, pct, na, all, 0, P->time_units,
                                   P->model_document, P->spec->journal_segment};
  if (rc == MBS_OK) {
    M->store = reopen > 0 ? mbs_store_reopen(M->partial, &layout, reopen, info, &M->err)
                          : mbs_store_create(M->partial, &layout, 1, &M->err);
    if (!M->store) rc = M->err.code;
  }
  free(warnings);
  free(sq);
  free(pn);
  free(pu);
  free(sn);
  free(su);
  return rc;
}

// the collected batch: a copy of the record, its parameters checked
static int collect(mbs_merger* M, const mbs_journal_record* r) {
  const mbs_plan* P = M->P;
  const long k = r->index - M->c_first;
  if (k < 0 || k >= M->c_count) return MBS_OK;
  if (M->c_expect &&
      memcmp(M->c_expect + k * P->np, r->params, (size_t)P->np * sizeof(double)) != 0)
    return MBS_FAIL(&M->err, MBS_ERR_ARGUMENT, M->parts,
                    "%s: sample %ld in the journals has other parameters than this run gives "
                    "it (the journals come from another run of the study); start over with "
                    "--force", M->parts, r->index);
  memcpy(M->c_params + k * P->np, r->params, (size_t)P->np * sizeof(double));
  memcpy(M->c_scalars + k * P->nscal, r->scalars, (size_t)P->nscal * sizeof(double));
  memcpy(M->c_traj + k * P->frame_values, r->traj, (size_t)P->frame_values * sizeof(double));
  M->c_status[k] = r->status;
  M->c_frames[k] = r->frames;
  return MBS_OK;
}

// write every sample the journals hold now, in order, up to the limit; with `final`, every
// sample below the limit must be there
static int step(mbs_merger* M, int final, int* progressed) {
  const mbs_plan* P = M->P;
  *progressed = 0;
  const double t0 = now();
  int rc = MBS_OK;
  pthread_mutex_lock(&M->lock);
  const long limit = M->limit;
  pthread_mutex_unlock(&M->lock);
  // the workers are done: every journal is complete, its damaged records skipped
  for (int i = 0; final && i < M->nsrc; i++)
    if (!M->src[i].gone) mbs_journal_set_resync(M->src[i].r, 1);
  while (rc == MBS_OK && M->next < limit && !M->stop) {
    int hit = -1;
    for (int i = 0; i < M->nsrc && hit < 0; i++) {
      mbs_merge_src* m = &M->src[i];
      if (m->gone) continue;
      if (!m->has) m->has = mbs_journal_next(m->r, &m->rec);
      while (m->has && m->rec.index < M->next)  // a duplicate (cannot happen; tolerated)
        m->has = mbs_journal_next(m->r, &m->rec);
      if (m->has && m->rec.index == M->next) hit = i;
    }
    if (hit < 0) {
      // perhaps in a journal not known yet
      const int before = M->nsrc;
      if ((rc = find_sources(M, final)) != MBS_OK) break;
      if (M->nsrc > before) continue;
      if (final)
        rc = MBS_FAIL(&M->err, MBS_ERR_INTERNAL, M->parts,
                      "%s: sample %ld is missing from the journals", M->parts, M->next);
      break;
    }
    mbs_journal_record* r = &M->src[hit].rec;
    if (r->index > M->src[hit].max_index) M->src[hit].max_index = r->index;
    for (int i = 0, k = 0; i < P->nquant; i++)
      if (!P->quant[i].hidden) M->traj[k++] = r->traj + P->quant[i].offset;
    const mbs_store_sample smp = {r->index, r->params, r->status, r->message, r->wall, r->steps,
                                  r->frames, M->traj, r->scalars};
    rc = mbs_store_write_sample(M->store, &smp, &M->err);
    pthread_mutex_lock(&M->lock);
    if (rc == MBS_OK) rc = collect(M, r);
    pthread_mutex_unlock(&M->lock);
    if (r->status != MBS_OK && rc == MBS_OK && M->prune) {  // counted into the mark later
      if (M->nfail_idx == M->capfail) {
        const long cap = M->capfail ? 2 * M->capfail : 64;
        long* v = realloc(M->fail_idx, (size_t)cap * sizeof(long));
        if (!v) rc = MBS_FAIL(&M->err, MBS_ERR_NO_MEMORY, "study", "out of memory");
        else {
          M->fail_idx = v;
          M->capfail = cap;
        }
      }
      if (rc == MBS_OK) M->fail_idx[M->nfail_idx++] = r->index;
    }
    if (r->status != MBS_OK) {
      if (M->failed == 0) {
        M->first_failed = r->index;
        snprintf(M->first_message, sizeof(M->first_message), "%s", r->message);
      }
      if (M->failed < 20)
        fprintf(M->log, "failed sample %ld: %s\n", r->index, r->message);
      else if (M->failed == 20)
        fprintf(M->log, "(more failed samples: see /status in %s)\n", M->output);
      M->failed++;
    }
    pthread_mutex_lock(&M->lock);
    M->next++;
    pthread_cond_broadcast(&M->moved);
    pthread_mutex_unlock(&M->lock);
    M->src[hit].has = 0;
    *progressed = 1;
  }
  M->busy += now() - t0;
  return rc;
}

// delete the complete journals read to their end whose samples are all synced in the result
// file: the file is synced first (at a whole number of its checkpoint blocks) and the merged
// mark written, so that a crash at any point leaves each sample in a journal or below the mark
static int prune(mbs_merger* M) {
  if (!M->prune || !M->store) return MBS_OK;
  const double t0 = now();
  int candidates = 0;
  for (int i = 0; i < M->nsrc; i++) {
    mbs_merge_src* m = &M->src[i];
    if (m->gone) continue;
    if (!m->complete) {  // its writer went on in the next segment: it is whole
      char* nx = mbs_journal_next_segment(m->path);
      m->complete = nx && access(nx, F_OK) == 0;
      free(nx);
      if (!m->complete) continue;
      mbs_journal_set_resync(m->r, 1);
    }
    if (!m->has) m->has = mbs_journal_next(m->r, &m->rec);
    if (!m->has) candidates++;
  }
  int rc = MBS_OK;
  long d = M->durable;
  if (candidates) rc = mbs_store_sync(M->store, &d, &M->err);
  if (rc == MBS_OK && d > M->durable) {
    long k = 0;
    while (k < M->nfail_idx && M->fail_idx[k] < d) k++;
    const long failed = M->durable_failed + k;
    mbs_journal_merged mk;
    memset(&mk, 0, sizeof(mk));
    mk.fingerprint = M->P->fingerprint;
    mk.samples = d;
    mk.failed = failed;
    mk.first_failed = M->first_failed >= 0 && M->first_failed < d ? M->first_failed : -1;
    if (mk.first_failed >= 0) snprintf(mk.message, sizeof(mk.message), "%s", M->first_message);
    rc = mbs_journal_write_merged(M->parts, &mk, &M->err);
    if (rc == MBS_OK) {
      if (k > 0 && M->nfail_idx > k)
        memmove(M->fail_idx, M->fail_idx + k, (size_t)(M->nfail_idx - k) * sizeof(long));
      M->nfail_idx -= k;
      M->durable = d;
      M->durable_failed = failed;
    }
  }
  for (int i = 0; rc == MBS_OK && i < M->nsrc; i++) {
    mbs_merge_src* m = &M->src[i];
    if (m->gone || !m->complete || m->has || m->max_index >= M->durable) continue;
    mbs_journal_close_reader(m->r);
    m->r = NULL;
    m->gone = 1;
    if (remove(m->path) != 0 && errno != ENOENT)
      rc = MBS_FAIL(&M->err, MBS_ERR_IO, m->path, "%s: cannot delete the merged journal: %s",
                    m->path, strerror(errno));
    M->pruned++;
  }
  M->busy += now() - t0;
  return rc;
}

static void* merger_main(void* arg) {
  mbs_merger* M = arg;
  int rc = M->store ? MBS_OK : open_store(M, 0, NULL);
  while (rc == MBS_OK && !M->stop) {
    const int finish = M->finish;  // read before the step: a last full pass after it is set
    int progressed;
    rc = step(M, finish, &progressed);
    if (rc == MBS_OK && !finish && progressed) rc = prune(M);
    if (finish) break;
    if (!progressed) {  // 5 ms, or until someone waits for samples
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_nsec += 5000000;
      if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
      }
      pthread_mutex_lock(&M->lock);
      if (!M->kicked) pthread_cond_timedwait(&M->kick, &M->lock, &until);
      M->kicked = 0;
      pthread_mutex_unlock(&M->lock);
    }
  }
  pthread_mutex_lock(&M->lock);
  if (rc == MBS_OK && M->stop) rc = MBS_ERR_INTERRUPTED;
  M->rc = rc;
  M->running = 0;
  pthread_cond_broadcast(&M->moved);
  pthread_mutex_unlock(&M->lock);
  return NULL;
}

static void drop_sources(mbs_merger* M) {
  for (int i = 0; i < M->nsrc; i++) {
    mbs_journal_close_reader(M->src[i].r);
    free(M->src[i].path);
  }
  free(M->src);
  M->src = NULL;
  M->nsrc = M->capsrc = 0;
}

void mbs_merger_init(mbs_merger* M, const mbs_plan* P, const char* parts, const char* output,
                     FILE* log, double t_start, int nranks, int nthreads, int prune) {
  memset(M, 0, sizeof(*M));
  M->first_failed = -1;
  M->P = P;
  M->parts = parts;
  M->output = output;
  M->log = log ? log : stderr;
  M->t_start = t_start;
  M->nranks = nranks;
  M->nthreads = nthreads;
  M->prune = prune;
}

int mbs_merger_reopen(mbs_merger* M, long* n, long* failed, mbs_error* err) {
  *n = *failed = 0;
  if (!M->partial) M->partial = mbs_format_string("%s/result.h5", M->parts);
  if (!M->partial) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  mbs_journal_merged mk;
  if (!mbs_journal_read_merged(M->parts, &mk) || mk.samples <= 0) return MBS_OK;
  mbs_store_prefix info;
  memset(&info, 0, sizeof(info));
  int rc = MBS_OK;
  if (mk.fingerprint != M->P->fingerprint)
    rc = MBS_FAIL(&M->err, MBS_ERR_ARGUMENT, M->parts, "its mark is of another study");
  else
    rc = open_store(M, mk.samples, &info);
  if (rc != MBS_OK) {
    if (rc == MBS_ERR_NO_MEMORY) {
      *err = M->err;
      return rc;
    }
    // the file cannot be continued: its samples are computed again (their journals are gone)
    fprintf(M->log, "mbstudy: warning: %s: the %ld samples merged before cannot be continued "
            "(%s): they will be computed again\n", M->partial, mk.samples, M->err.message);
    mbs_error_clear(&M->err);
    mbs_journal_remove_merged(M->parts);
    remove(M->partial);
    return MBS_OK;
  }
  M->next = M->durable = mk.samples;
  M->failed = M->durable_failed = info.failed;
  M->first_failed = info.first_failed;
  snprintf(M->first_message, sizeof(M->first_message), "%s", info.first_message);
  *n = mk.samples;
  *failed = info.failed;
  return MBS_OK;
}

void mbs_merger_abandon(mbs_merger* M) {
  if (M->store) mbs_store_discard(M->store);
  M->store = NULL;
  free(M->traj);
  free(M->partial);
  M->traj = NULL;
  M->partial = NULL;
}

int mbs_merger_start(mbs_merger* M, mbs_error* err) {
  if (!M->partial) M->partial = mbs_format_string("%s/result.h5", M->parts);
  if (!M->partial) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  // the journals of earlier runs (before this run's workers start theirs): complete
  if (find_sources(M, 1) != MBS_OK) {
    drop_sources(M);
    *err = M->err;
    return err->code;
  }
  pthread_mutex_init(&M->lock, NULL);
  pthread_cond_init(&M->moved, NULL);
  pthread_cond_init(&M->kick, NULL);
  M->running = 1;
  if (pthread_create(&M->thread, NULL, merger_main, M) != 0) {
    M->running = 0;
    pthread_cond_destroy(&M->moved);
    pthread_cond_destroy(&M->kick);
    pthread_mutex_destroy(&M->lock);
    drop_sources(M);
    return MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "cannot start the writer thread");
  }
  return MBS_OK;
}

void mbs_merger_set_limit(mbs_merger* M, long limit) {
  pthread_mutex_lock(&M->lock);
  M->limit = limit;
  pthread_mutex_unlock(&M->lock);
}

int mbs_merger_collect(mbs_merger* M, long first, long count, const double* expect,
                       mbs_error* err) {
  const mbs_plan* P = M->P;
  int rc = MBS_OK;
  pthread_mutex_lock(&M->lock);
  if (count > M->c_cap) {
    const size_t n = (size_t)count;
    double* a = realloc(M->c_params, n * (size_t)(P->np + 1) * sizeof(double));
    if (a) M->c_params = a;
    double* b = realloc(M->c_scalars, n * (size_t)(P->nscal + 1) * sizeof(double));
    if (b) M->c_scalars = b;
    double* c = realloc(M->c_traj, n * (size_t)(P->frame_values + 1) * sizeof(double));
    if (c) M->c_traj = c;
    int* d = realloc(M->c_status, n * sizeof(int));
    if (d) M->c_status = d;
    int* e = realloc(M->c_frames, n * sizeof(int));
    if (e) M->c_frames = e;
    if (a && b && c && d && e) M->c_cap = count;
    else rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  }
  if (rc == MBS_OK) {
    M->c_first = first;
    M->c_count = count;
    M->c_expect = expect;
  }
  pthread_mutex_unlock(&M->lock);
  return rc;
}

int mbs_merger_wait(mbs_merger* M, long upto, mbs_error* err) {
  pthread_mutex_lock(&M->lock);
  M->kicked = 1;
  pthread_cond_signal(&M->kick);
  while (M->running && M->next < upto) pthread_cond_wait(&M->moved, &M->lock);
  const int ended = !M->running;
  const int rc = ended && M->rc != MBS_OK ? M->rc : MBS_OK;
  if (rc != MBS_OK) *err = M->err;
  pthread_mutex_unlock(&M->lock);
  if (rc == MBS_OK && ended && M->next < upto)
    return MBS_FAIL(err, MBS_ERR_INTERNAL, "study", "the writer thread ended early");
  return rc;
}

mbs_batch_results mbs_merger_batch(const mbs_merger* M) {
  mbs_batch_results b = {M->c_first, M->c_count, M->c_params, M->c_status, M->c_scalars,
                         M->c_traj, M->c_frames};
  return b;
}

int mbs_merger_end(mbs_merger* M, int ok, long final, mbs_error* err) {
  if (ok) {
    mbs_merger_set_limit(M, final);
    M->finish = 1;
  } else {
    M->stop = 1;
  }
  pthread_mutex_lock(&M->lock);
  M->kicked = 1;
  pthread_cond_signal(&M->kick);
  pthread_mutex_unlock(&M->lock);
  pthread_join(M->thread, NULL);
  const double t0 = now();
  int rc = M->rc;
  if (!ok && rc == MBS_OK) rc = MBS_ERR_INTERRUPTED;  // keep the journals
  if (rc == MBS_OK && M->next < final)
    rc = MBS_FAIL(&M->err, MBS_ERR_INTERNAL, M->parts, "%s: sample %ld is missing from the "
                  "journals", M->parts, M->next);
  if (rc == MBS_OK && final < M->P->nsamples) {
    rc = mbs_store_truncate(M->store, final, &M->err);
    char count[32];
    snprintf(count, sizeof(count), "%ld", final);
    if (rc == MBS_OK) rc = mbs_store_set_attribute(M->store, "samples", count, &M->err);
  }
  if (rc == MBS_OK) {
    char nfail[32];
    snprintf(nfail, sizeof(nfail), "%ld", M->failed);
    rc = mbs_store_set_attribute(M->store, "failed_samples", nfail, &M->err);
  }
  int kept = 0;
  if (rc == MBS_OK) {
    rc = mbs_store_close(M->store, &M->err);
  } else if (rc == MBS_ERR_INTERRUPTED && (M->rc == MBS_OK || M->rc == MBS_ERR_INTERRUPTED) &&
             M->keep_partial && M->store) {
    // stopped: the samples merged so far (0 .. next-1, in order) stay readable, marked
    char note[400], nfail[32], count[32];
    snprintf(note, sizeof(note), "yes: stopped with samples 0 .. %ld of %ld merged (status/done "
             "marks them); resume the study to complete it", M->next - 1, M->P->nsamples);
    snprintf(nfail, sizeof(nfail), "%ld", M->failed);
    snprintf(count, sizeof(count), "%ld", M->next);
    mbs_error e;
    kept = mbs_store_set_attribute(M->store, "incomplete", note, &e) == MBS_OK &&
           mbs_store_set_attribute(M->store, "merged_samples", count, &e) == MBS_OK &&
           mbs_store_set_attribute(M->store, "failed_samples", nfail, &e) == MBS_OK &&
           mbs_store_close(M->store, &e) == MBS_OK;
  } else {
    mbs_store_discard(M->store);
  }
  // the samples below the mark are only in the file now (their journals are deleted): it
  // stays, whatever happened after the mark (a resume checks it and goes on from the mark)
  if (rc != MBS_OK && M->durable > 0) kept = 1;
  M->store = NULL;
  for (int i = 0; i < M->nsrc; i++) {
    mbs_journal_close_reader(M->src[i].r);
    M->src[i].r = NULL;
  }
  if (rc != MBS_OK && M->partial && !kept) remove(M->partial);
  M->busy += now() - t0;
  M->rc = rc;
  if (rc != MBS_OK && ok) *err = M->err;
  return rc;
}

int mbs_merger_commit(mbs_merger* M, int ok, mbs_error* err) {
  int rc = MBS_OK;
  const double t0 = now();
  if (ok && rename(M->partial, M->output) != 0) {
    rc = MBS_FAIL(err, MBS_ERR_IO, M->output, "%s: cannot move %s there: %s", M->output,
                  M->partial, strerror(errno));
    if (M->durable == 0) remove(M->partial);  // else it holds samples no journal has
  }
  // the journals are no longer needed once the file is complete
  if (ok && rc == MBS_OK) {
    for (int i = 0; i < M->nsrc; i++) remove(M->src[i].path);
    // and those without a sample, which a thread may have opened after the last look (every
    // writer is closed by now)
    mbs_journal_clear_dir(M->parts);
    rmdir(M->parts);
  }
  for (int i = 0; i < M->nsrc; i++) free(M->src[i].path);
  free(M->src);
  free(M->traj);
  free(M->partial);
  free(M->c_params);
  free(M->c_scalars);
  free(M->c_traj);
  free(M->c_status);
  free(M->c_frames);
  free(M->fail_idx);
  pthread_cond_destroy(&M->moved);
  pthread_cond_destroy(&M->kick);
  pthread_mutex_destroy(&M->lock);
  M->src = NULL;
  M->nsrc = 0;
  M->busy += now() - t0;
  return rc;
}
