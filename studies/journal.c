// Journals of completed samples (journal.h).
#include "journal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char file_magic[8] = {'M', 'B', 'S', 'J', 'R', 'N', 'L', '2'};
static const uint32_t record_magic = 0x5253424Du;  // "MBSR"

uint32_t mbs_journal_checksum(const void* data, size_t n) {
  // a multiply-xor hash over 8-byte words: enough to tell a whole record from a torn or
  // garbled one after a crash, at memory speed
  const unsigned char* p = data;
  uint64_t h = 0x243F6A8885A308D3ull ^ (uint64_t)n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  uint64_t w = 0;
  for (size_t k = 0; i + k < n; k++) w |= (uint64_t)p[i + k] << (8 * k);
  h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 32;
  return (uint32_t)h;
}

struct mbs_journal_writer {
  FILE* f;
  char* path;
  mbs_journal_layout L;
  unsigned char* buf;
  size_t cap;
};

static size_t payload_size(const mbs_journal_layout* L, size_t msglen) {
  return 8 + 4 + 4 + 8 + 8 + 4 + msglen +
         8 * ((size_t)L->nparams + (size_t)L->ntraj + (size_t)L->nscalars);
}

mbs_journal_writer* mbs_journal_create(const char* path, const mbs_journal_layout* L,
                                       mbs_error* err) {
  mbs_journal_writer* w = calloc(1, sizeof(*w));
  if (!w) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  w->L = *L;
  w->path = strdup(path);
  w->f = fopen(path, "wb");
  if (!w->f || !w->path) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create the journal: %s", path, strerror(errno));
    if (w->f) fclose(w->f);
    free(w->path);
    free(w);
    return NULL;
  }
  int32_t np = L->nparams, ns = L->nscalars;
  int64_t nt = L->ntraj;
  uint64_t fp = L->fingerprint;
  if (fwrite(file_magic, 1, 8, w->f) != 8 || fwrite(&fp, 8, 1, w->f) != 1 ||
      fwrite(&np, 4, 1, w->f) != 1 || fwrite(&nt, 8, 1, w->f) != 1 ||
      fwrite(&ns, 4, 1, w->f) != 1 || fflush(w->f) != 0) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: write failed: %s", path, strerror(errno));
    fclose(w->f);
    free(w->path);
    free(w);
    return NULL;
  }
  return w;
}

#define PUT(p, v)                  \
  do {                             \
    memcpy((p), &(v), sizeof(v));  \
    (p) += sizeof(v);              \
  } while (0)

int mbs_journal_append(mbs_journal_writer* w, const mbs_journal_record* r, mbs_error* err) {
  const uint32_t msglen = (uint32_t)strnlen(r->message, sizeof(r->message) - 1);
  const size_t n = payload_size(&w->L, msglen);
  const size_t total = 4 + 8 + n + 4;
  if (total > w->cap) {
    unsigned char* b = realloc(w->buf, total);
    if (!b) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, w->path, "%s: out of memory", w->path);
    w->buf = b;
    w->cap = total;
  }
  unsigned char* p = w->buf;
  const uint64_t len = n + 4;
  PUT(p, record_magic);
  PUT(p, len);
  unsigned char* payload = p;
  const int64_t index = r->index, steps = r->steps;
  const int32_t status = r->status, frames = r->frames;
  PUT(p, index);
  PUT(p, status);
  PUT(p, frames);
  PUT(p, r->wall);
  PUT(p, steps);
  PUT(p, msglen);
  memcpy(p, r->message, msglen);
  p += msglen;
  memcpy(p, r->params, 8 * (size_t)w->L.nparams);
  p += 8 * (size_t)w->L.nparams;
  memcpy(p, r->traj, 8 * (size_t)w->L.ntraj);
  p += 8 * (size_t)w->L.ntraj;
  memcpy(p, r->scalars, 8 * (size_t)w->L.nscalars);
  p += 8 * (size_t)w->L.nscalars;
  const uint32_t crc = mbs_journal_checksum(payload, n);
  PUT(p, crc);
  // handed to the operating system at once, so that the merger can read it during the run
  if (fwrite(w->buf, 1, total, w->f) != total || fflush(w->f) != 0)
    return MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: write failed: %s", w->path, strerror(errno));
  return MBS_OK;
}

int mbs_journal_sync(mbs_journal_writer* w, mbs_error* err) {
  if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
    return MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: flush failed: %s", w->path, strerror(errno));
  return MBS_OK;
}

int mbs_journal_close(mbs_journal_writer* w, mbs_error* err) {
  if (!w) return MBS_OK;
  int rc = mbs_journal_sync(w, err);
  if (fclose(w->f) != 0 && rc == MBS_OK)
    rc = MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: close failed: %s", w->path, strerror(errno));
  free(w->buf);
  free(w->path);
  free(w);
  return rc;
}

struct mbs_journal_reader {
  FILE* f;
  mbs_journal_layout L;
  unsigned char* buf;
  size_t cap;
  double* params;
  double* traj;
  double* scalars;
};

mbs_journal_reader* mbs_journal_open(const char* path, const mbs_journal_layout* L,
                                     mbs_error* err) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  char magic[8];
  uint64_t fp;
  int32_t np, ns;
  int64_t nt;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, file_magic, 8) != 0 ||
      fread(&fp, 8, 1, f) != 1 || fread(&np, 4, 1, f) != 1 || fread(&nt, 8, 1, f) != 1 ||
      fread(&ns, 4, 1, f) != 1) {
    fclose(f);
    MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: not a journal of completed samples (or cut short "
             "in its header)", path);
    return NULL;
  }
  const mbs_journal_layout own = {fp, np, nt, ns};
  if (!L) L = &own;  // any study's journal (mbstudy status)
  if (np < 0 || nt < 0 || ns < 0 || np > (1 << 20) || nt > ((int64_t)1 << 40) || ns > (1 << 20)) {
    fclose(f);
    MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: not a journal of completed samples (its layout is "
             "impossible)", path);
    return NULL;
  }
  if (fp != L->fingerprint || np != L->nparams || nt != L->ntraj || ns != L->nscalars) {
    fclose(f);
    MBS_FAIL(err, MBS_ERR_ARGUMENT, path,
             "%s: this journal belongs to another study (its spec or model differs); remove the "
             "folder or use --force to start over", path);
    return NULL;
  }
  mbs_journal_reader* r = calloc(1, sizeof(*r));
  if (r) {
    r->f = f;
    r->L = *L;
    r->params = malloc(8 * ((size_t)np + 1));
    r->traj = malloc(8 * ((size_t)nt + 1));
    r->scalars = malloc(8 * ((size_t)ns + 1));
  }
  if (!r || !r->params || !r->traj || !r->scalars) {
    if (r) {
      free(r->params);
      free(r->traj);
      free(r->scalars);
      free(r);
    }
    fclose(f);
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  return r;
}

#define GET(p, v)                  \
  do {                             \
    memcpy(&(v), (p), sizeof(v));  \
    (p) += sizeof(v);              \
  } while (0)

static int next_record(mbs_journal_reader* r, mbs_journal_record* out);

int mbs_journal_next(mbs_journal_reader* r, mbs_journal_record* out) {
  // on anything short of a whole valid record, go back to where it starts: the journal may
  // still be growing (a later call can succeed), or it ends there
  const long at = ftell(r->f);
  if (next_record(r, out)) return 1;
  clearerr(r->f);
  fseek(r->f, at, SEEK_SET);
  return 0;
}

static int next_record(mbs_journal_reader* r, mbs_journal_record* out) {
  uint32_t magic;
  uint64_t len;
  if (fread(&magic, 4, 1, r->f) != 1 || magic != record_magic || fread(&len, 8, 1, r->f) != 1)
    return 0;
  const size_t min = payload_size(&r->L, 0) + 4;
  if (len < min || len > min + 512) return 0;
  if (len > r->cap) {
    unsigned char* b = realloc(r->buf, len);
    if (!b) return 0;
    r->buf = b;
    r->cap = len;
  }
  if (fread(r->buf, 1, len, r->f) != len) return 0;
  uint32_t crc;
  memcpy(&crc, r->buf + len - 4, 4);
  if (mbs_journal_checksum(r->buf, len - 4) != crc) return 0;
  const unsigned char* p = r->buf;
  int64_t index, steps;
  int32_t status, frames;
  uint32_t msglen;
  GET(p, index);
  GET(p, status);
  GET(p, frames);
  GET(p, out->wall);
  GET(p, steps);
  GET(p, msglen);
  if (len != payload_size(&r->L, msglen) + 4 || msglen >= sizeof(out->message)) return 0;
  memcpy(out->message, p, msglen);
  out->message[msglen] = 0;
  p += msglen;
  memcpy(r->params, p, 8 * (size_t)r->L.nparams);
  p += 8 * (size_t)r->L.nparams;
  memcpy(r->traj, p, 8 * (size_t)r->L.ntraj);
  p += 8 * (size_t)r->L.ntraj;
  memcpy(r->scalars, p, 8 * (size_t)r->L.nscalars);
  out->index = index;
  out->status = status;
  out->frames = frames;
  out->steps = steps;
  out->params = r->params;
  out->traj = r->traj;
  out->scalars = r->scalars;
  return 1;
}

void mbs_journal_close_reader(mbs_journal_reader* r) {
  if (!r) return;
  fclose(r->f);
  free(r->buf);
  free(r->params);
  free(r->traj);
  free(r->scalars);
  free(r);
}

//---------------------------------- the journal folder -----------------------------------------

static int is_journal(const char* name, int* attempt) {
  int a, k, r, t;
  char tail[8];
  if (sscanf(name, "j%d-r%d-t%d.bin%7s", &a, &r, &t, tail) == 3 ||
      sscanf(name, "j%d-p%d-r%d-t%d.bin%7s", &a, &k, &r, &t, tail) == 4) {  // an array part's
    *attempt = a;
    return 1;
  }
  return 0;
}

static int cmp_str(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

int mbs_journal_list(const char* dir, char*** out, int* n, int* max_attempt) {
  *out = NULL;
  *n = 0;
  *max_attempt = -1;
  DIR* d = opendir(dir);
  if (!d) return errno == ENOENT ? MBS_OK : MBS_ERR_IO;
  struct dirent* e;
  int cap = 0;
  while ((e = readdir(d))) {
    int a;
    if (!is_journal(e->d_name, &a)) continue;
    if (a > *max_attempt) *max_attempt = a;
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      char** p = realloc(*out, (size_t)cap * sizeof(char*));
      if (!p) break;
      *out = p;
    }
    char* path = mbs_format_string("%s/%s", dir, e->d_name);
    if (path) (*out)[(*n)++] = path;
  }
  closedir(d);
  if (*n) qsort(*out, (size_t)*n, sizeof(char*), cmp_str);
  return MBS_OK;
}

void mbs_journal_free_list(char** v, int n) {
  for (int i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

void mbs_journal_clear_dir(const char* dir) {
  char** files;
  int n, a;
  if (mbs_journal_list(dir, &files, &n, &a) == MBS_OK) {
    for (int i = 0; i < n; i++) remove(files[i]);
    mbs_journal_free_list(files, n);
  }
  char* partial = mbs_format_string("%s/result.h5", dir);
  if (partial) remove(partial);
  free(partial);
  rmdir(dir);
}

int mbs_journal_count(const char* dir, long nsamples, long* done, long* failed,
                      long* first_failed, char* message, size_t message_size, long recent_since,
                      long* recent) {
  *done = *failed = 0;
  if (first_failed) *first_failed = -1;
  if (recent) *recent = 0;
  if (message && message_size) message[0] = 0;
  char** files;
  int n, max_attempt;
  if (mbs_journal_list(dir, &files, &n, &max_attempt)) return -1;
  // which samples were seen: a bitmap as large as the largest index (grown as needed)
  unsigned char* seen = NULL;
  long cap = 0;
  for (int i = 0; i < n; i++) {
    mbs_error e;
    mbs_journal_reader* r = mbs_journal_open(files[i], NULL, &e);
    if (!r) continue;
    int attempt = -1;
    const char* base = strrchr(files[i], '/');
    sscanf(base ? base + 1 : files[i], "j%d", &attempt);
    struct stat fs;
    const int current = recent && recent_since > 0 && attempt == max_attempt &&
                        stat(files[i], &fs) == 0 && (long)fs.st_mtime >= recent_since;
    mbs_journal_record rec;
    while (mbs_journal_next(r, &rec)) {
      if (rec.index < 0 || (nsamples > 0 && rec.index >= nsamples)) continue;
      if (rec.index >= cap * 8) {
        const long ncap = rec.index / 8 + 1024;
        unsigned char* b = realloc(seen, (size_t)ncap);
        if (!b) continue;
        memset(b + cap, 0, (size_t)(ncap - cap));
        seen = b;
        cap = ncap;
      }
      unsigned char* byte = &seen[rec.index >> 3];
      const unsigned char bit = (unsigned char)(1u << (rec.index & 7));
      if (*byte & bit) continue;
      *byte |= bit;
      (*done)++;
      if (current) (*recent)++;
      if (rec.status != MBS_OK) {
        (*failed)++;
        if (first_failed && (*first_failed < 0 || rec.index < *first_failed)) {
          *first_failed = rec.index;
          if (message && message_size) snprintf(message, message_size, "%s", rec.message);
        }
      }
    }
    mbs_journal_close_reader(r);
  }
  free(seen);
  mbs_journal_free_list(files, n);
  return 0;
}
