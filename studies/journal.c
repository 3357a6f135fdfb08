// Journals of completed samples (journal.h).
#include "journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

// the file: magic, fingerprint (8), nparams (4), ntraj (8), nscalars (4)
enum { HEADER_SIZE = 32 };
static const char file_magic[8] = {'M', 'B', 'S', 'J', 'R', 'N', 'L', '3'};
static const char file_magic_v2[8] = {'M', 'B', 'S', 'J', 'R', 'N', 'L', '2'};
// a record (format 3): magic (8), payload length (8), checksum of these 16 bytes (4), payload,
// checksum of the payload (4). The magic's outer bytes are neither ASCII nor common in doubles.
static const unsigned char record_magic[8] = {0xE5, 'M', 'B', 'S', 'r', 'e', 'c', 0x1F};
enum { RECORD_HEAD = 20, RECORD_EXTRA = 24 };
// format 2: magic (4, "MBSR"), length (8: payload and checksum), payload, checksum (4)
static const unsigned char record_magic_v2[4] = {'M', 'B', 'S', 'R'};
enum { RECORD_HEAD_V2 = 12 };
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
  int fd;
  char* path;
  mbs_journal_layout L;
  unsigned char* buf;
  size_t cap;
  off_t end;      // the end of the last whole record
  long records;
  int failed;     // the errno of a failed write: no more records
};

static size_t payload_size(const mbs_journal_layout* L, size_t msglen) {
  return 8 + 4 + 4 + 8 + 8 + 4 + msglen +
         8 * ((size_t)L->nparams + (size_t)L->ntraj + (size_t)L->nscalars);
}

// write all of it (0), or the errno
static int write_all(int fd, const void* data, size_t n) {
  const unsigned char* p = data;
  while (n > 0) {
    const ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno ? errno : EIO;
    if (k == 0) return ENOSPC;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

// read up to n bytes at `at`: the count (less at the end of the file), -1 on an error
static ssize_t read_at(int fd, void* data, size_t n, off_t at) {
  unsigned char* p = data;
  size_t got = 0;
  while (got < n) {
    const ssize_t k = pread(fd, p + got, n - got, at + (off_t)got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -1;
    if (k == 0) break;
    got += (size_t)k;
  }
  return (ssize_t)got;
}

static int write_failed(mbs_journal_writer* w, mbs_error* err) {
  return MBS_FAIL(err, MBS_ERR_IO, w->path,
                  "%s: cannot write the journal: %s (the %ld sample%s recorded before %s kept: "
                  "make room, then resume the study with --resume)",
                  w->path, strerror(w->failed), w->records, w->records == 1 ? "" : "s",
                  w->records == 1 ? "is" : "are");
}

mbs_journal_writer* mbs_journal_create(const char* path, const mbs_journal_layout* L,
                                       mbs_error* err) {
  mbs_journal_writer* w = calloc(1, sizeof(*w));
  if (!w || !(w->path = strdup(path))) {
    free(w);
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  w->L = *L;
  w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (w->fd < 0) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create the journal: %s", path, strerror(errno));
    free(w->path);
    free(w);
    return NULL;
  }
  unsigned char h[HEADER_SIZE];
  const int32_t np = L->nparams, ns = L->nscalars;
  const int64_t nt = L->ntraj;
  const uint64_t fp = L->fingerprint;
  memcpy(h, file_magic, 8);
  memcpy(h + 8, &fp, 8);
  memcpy(h + 16, &np, 4);
  memcpy(h + 20, &nt, 8);
  memcpy(h + 28, &ns, 4);
  const int e = write_all(w->fd, h, HEADER_SIZE);
  if (e) {
    // no journal rather than one cut short in its header
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot write the journal: %s", path, strerror(e));
    close(w->fd);
    unlink(path);
    free(w->path);
    free(w);
    return NULL;
  }
  w->end = HEADER_SIZE;
  return w;
}

#define PUT(p, v)                  \
  do {                             \
    memcpy((p), &(v), sizeof(v));  \
    (p) += sizeof(v);              \
  } while (0)

int mbs_journal_append(mbs_journal_writer* w, const mbs_journal_record* r, mbs_error* err) {
  if (w->failed) return write_failed(w, err);
  const uint32_t msglen = (uint32_t)strnlen(r->message, sizeof(r->message) - 1);
  const size_t n = payload_size(&w->L, msglen);
  const size_t total = n + RECORD_EXTRA;
  if (total > w->cap) {
    unsigned char* b = realloc(w->buf, total);
    if (!b) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, w->path, "%s: out of memory", w->path);
    w->buf = b;
    w->cap = total;
  }
  unsigned char* p = w->buf;
  const uint64_t len = n;
  memcpy(p, record_magic, 8);
  p += 8;
  PUT(p, len);
  const uint32_t hcrc = mbs_journal_checksum(w->buf, 16);
  PUT(p, hcrc);
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
  const int e = write_all(w->fd, w->buf, total);
  if (e) {
    // the journal as it was: no partial record for a reader to stumble on
    w->failed = e;
    if (ftruncate(w->fd, w->end) != 0 || lseek(w->fd, w->end, SEEK_SET) < 0) {
      // (a partial record at the end is ignored by readers anyway)
    }
    return write_failed(w, err);
  }
  w->end += (off_t)total;
  w->records++;
  return MBS_OK;
}

int mbs_journal_sync(mbs_journal_writer* w, mbs_error* err) {
  if (w->failed) {
    (void)fsync(w->fd);  // what was written before stays
    return write_failed(w, err);
  }
  if (fsync(w->fd) != 0)
    return MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: cannot flush the journal to disk: %s",
                    w->path, strerror(errno));
  return MBS_OK;
}

int mbs_journal_close(mbs_journal_writer* w, mbs_error* err) {
  if (!w) return MBS_OK;
  int rc = mbs_journal_sync(w, err);
  if (close(w->fd) != 0 && rc == MBS_OK)
    rc = MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: cannot close the journal: %s", w->path,
                  strerror(errno));
  free(w->buf);
  free(w->path);
  free(w);
  return rc;
}

//---------------------------------- reading ----------------------------------------------------

struct mbs_journal_reader {
  int fd;
  int version;            // 2 or 3
  mbs_journal_layout L;
  uint64_t min_len, max_len;  // the record lengths the layout allows (as in the length field)
  unsigned char* buf;     // a record
  size_t cap;
  unsigned char* scan;    // a window of the file when looking for a record magic
  double* params;
  double* traj;
  double* scalars;
  off_t pos;              // where the next record starts
  int scanning;           // after a damaged record: looking for a record magic from scan_at
  off_t scan_at;
  int tentative;          // pos was found by looking for a magic: not yet a record
  int resync;
  long damaged;
};

enum { SCAN_WINDOW = 65536 };

static void free_reader(mbs_journal_reader* r) {
  if (r->fd >= 0) close(r->fd);
  free(r->buf);
  free(r->scan);
  free(r->params);
  free(r->traj);
  free(r->scalars);
  free(r);
}

mbs_journal_reader* mbs_journal_open(const char* path, const mbs_journal_layout* L,
                                     mbs_error* err) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  unsigned char h[HEADER_SIZE];
  const ssize_t got = read_at(fd, h, HEADER_SIZE, 0);
  if (got < 0) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot read: %s", path, strerror(errno));
    close(fd);
    return NULL;
  }
  if (got < HEADER_SIZE) {
    MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: a journal cut short in its header (%ld of %d "
             "bytes): it holds no sample", path, (long)got, HEADER_SIZE);
    close(fd);
    return NULL;
  }
  int version = 0;
  if (!memcmp(h, file_magic, 8)) version = 3;
  else if (!memcmp(h, file_magic_v2, 8)) version = 2;
  if (!version) {
    if (!memcmp(h, file_magic, 7) && h[7] >= '0' && h[7] <= '9')
      MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: a journal of format %c, written by another "
               "version of mbstudy (this one reads formats 2 and 3): rerun without --resume or "
               "with the mbstudy that wrote it", path, h[7]);
    else
      MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: not a journal of completed samples", path);
    close(fd);
    return NULL;
  }
  uint64_t fp;
  int32_t np, ns;
  int64_t nt;
  memcpy(&fp, h + 8, 8);
  memcpy(&np, h + 16, 4);
  memcpy(&nt, h + 20, 8);
  memcpy(&ns, h + 28, 4);
  const mbs_journal_layout own = {fp, np, nt, ns};
  if (!L) L = &own;  // any study's journal (mbstudy status)
  if (np < 0 || nt < 0 || ns < 0 || np > (1 << 20) || nt > ((int64_t)1 << 40) || ns > (1 << 20)) {
    close(fd);
    MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: not a journal of completed samples (its layout is "
             "impossible)", path);
    return NULL;
  }
  if (fp != L->fingerprint || np != L->nparams || nt != L->ntraj || ns != L->nscalars) {
    close(fd);
    MBS_FAIL(err, MBS_ERR_ARGUMENT, path,
             "%s: this journal belongs to another study (its spec or model differs); remove the "
             "folder or use --force to start over", path);
    return NULL;
  }
  mbs_journal_reader* r = calloc(1, sizeof(*r));
  if (r) {
    r->fd = fd;
    r->version = version;
    r->L = *L;
    r->pos = HEADER_SIZE;
    r->resync = 1;
    // the payload with a message of 0 .. 511 bytes (format 2: and its checksum)
    r->min_len = payload_size(L, 0) + (version == 2 ? 4 : 0);
    r->max_len = r->min_len + sizeof(((mbs_journal_record*)0)->message) - 1;
    r->params = malloc(8 * ((size_t)np + 1));
    r->traj = NULL;  // with the first whole record (a header alone sizes nothing)
    r->scalars = malloc(8 * ((size_t)ns + 1));
  }
  if (!r || !r->params || !r->scalars) {
    if (r) free_reader(r);
    else close(fd);
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

enum { REC_OK, REC_SHORT, REC_BAD };

// the record at `at`: REC_OK (in *out, its size in *size), REC_SHORT (the file ends before
// it does: cut short, or still being written) or REC_BAD (damaged; *framed: its magic, length
// and header checksum were right, so it was a record)
static int read_record(mbs_journal_reader* r, off_t at, mbs_journal_record* out, size_t* size,
                       int* framed) {
  *framed = 0;
  const int v3 = r->version == 3;
  const size_t head = v3 ? RECORD_HEAD : RECORD_HEAD_V2, nmagic = v3 ? 8 : 4;
  // the longest record the layout allows, in one read (a shorter one leaves bytes unused),
  // and never more than the file holds: a header's layout alone allocates nothing
  size_t most = head + (size_t)r->max_len + (v3 ? 4 : 0);
  struct stat st;
  if (fstat(r->fd, &st) != 0 || st.st_size <= at) return REC_SHORT;
  if ((uint64_t)(st.st_size - at) < (uint64_t)most) most = (size_t)(st.st_size - at);
  if (most > r->cap) {
    unsigned char* b = realloc(r->buf, most);
    if (!b) return REC_SHORT;
    r->buf = b;
    r->cap = most;
  }
  const unsigned char* h = r->buf;
  const ssize_t got = read_at(r->fd, r->buf, most, at);
  if (got < 0) return REC_SHORT;  // (a read error: as the end, for now)
  if (memcmp(h, v3 ? record_magic : record_magic_v2,
             (size_t)got < nmagic ? (size_t)got : nmagic) != 0)
    return REC_BAD;
  if ((size_t)got < head) return REC_SHORT;
  uint64_t len;
  memcpy(&len, h + nmagic, 8);
  if (v3) {
    uint32_t hcrc;
    memcpy(&hcrc, h + 16, 4);
    if (mbs_journal_checksum(h, 16) != hcrc) return REC_BAD;
  }
  // never more than the layout allows: a damaged length reads no megabytes
  if (len < r->min_len || len > r->max_len) return REC_BAD;
  *framed = v3;  // (format 2 has no header checksum: its length may be damaged)
  const size_t body = (size_t)len + (v3 ? 4 : 0), n = body - 4;
  if ((size_t)got < head + body) return REC_SHORT;
  const unsigned char* p = r->buf + head;
  uint32_t crc;
  memcpy(&crc, p + n, 4);
  if (mbs_journal_checksum(p, n) != crc) return REC_BAD;
  int64_t index, steps;
  int32_t status, frames;
  uint32_t msglen;
  GET(p, index);
  GET(p, status);
  GET(p, frames);
  GET(p, out->wall);
  GET(p, steps);
  GET(p, msglen);
  if (msglen >= sizeof(out->message) || n != payload_size(&r->L, msglen)) return REC_BAD;
  memcpy(out->message, p, msglen);
  out->message[msglen] = 0;
  p += msglen;
  memcpy(r->params, p, 8 * (size_t)r->L.nparams);
  p += 8 * (size_t)r->L.nparams;
  if (!r->traj && !(r->traj = malloc(8 * ((size_t)r->L.ntraj + 1)))) return REC_SHORT;
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
  *size = head + body;
  return REC_OK;
}

// the next record magic from r->scan_at: 1 with its offset in *at; 0 when the file ends first
// (r->scan_at moves to where a magic cut by the end could start)
static int find_magic(mbs_journal_reader* r, off_t* at) {
  const unsigned char* m = r->version == 3 ? record_magic : record_magic_v2;
  const size_t nm = r->version == 3 ? 8 : 4;
  if (!r->scan && !(r->scan = malloc(SCAN_WINDOW))) return 0;
  for (;;) {
    const ssize_t got = read_at(r->fd, r->scan, SCAN_WINDOW, r->scan_at);
    if (got <= 0) return 0;
    const unsigned char* p = r->scan;
    for (ssize_t i = 0; i < got; i++) {
      if (p[i] != m[0]) continue;
      const size_t have = (size_t)(got - i) < nm ? (size_t)(got - i) : nm;
      if (memcmp(p + i, m, have) != 0) continue;
      if (have < nm && got == SCAN_WINDOW) break;  // cut by the window: read from here
      *at = r->scan_at + i;  // (a magic cut by the end of the file: the record is short)
      return 1;
    }
    if (got < SCAN_WINDOW) {
      r->scan_at += got;
      return 0;
    }
    r->scan_at += SCAN_WINDOW - (off_t)nm;  // a magic across the window's edge is read again
  }
}

int mbs_journal_next(mbs_journal_reader* r, mbs_journal_record* out) {
  for (;;) {
    if (!r->scanning) {
      size_t size;
      int framed;
      const int s = read_record(r, r->pos, out, &size, &framed);
      if (s == REC_OK) {
        r->pos += (off_t)size;
        r->tentative = 0;
        return 1;
      }
      // the end, or a journal still being written: later calls look here again
      if (s == REC_SHORT || !r->resync) return 0;
      // damaged: a record (a magic found by scanning is one only with a whole header)
      if (!r->tentative || framed) r->damaged++;
      r->tentative = 0;
      r->scanning = 1;
      r->scan_at = r->pos + 1;
    }
    off_t at;
    if (!find_magic(r, &at)) return 0;  // (a later call goes on from where this one stopped)
    r->scanning = 0;
    r->pos = at;
    r->tentative = 1;
  }
}

long mbs_journal_damaged(const mbs_journal_reader* r) { return r->damaged; }

void mbs_journal_set_resync(mbs_journal_reader* r, int on) { r->resync = on != 0; }

void mbs_journal_close_reader(mbs_journal_reader* r) {
  if (r) free_reader(r);
}

int mbs_journal_header_cut_short(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < HEADER_SIZE;
}

int mbs_journal_set_aside(const char* path, char** moved_to, mbs_error* err) {
  if (moved_to) *moved_to = NULL;
  for (int k = 1; k < 1000; k++) {
    char* to = k == 1 ? mbs_format_string("%s.damaged", path)
                      : mbs_format_string("%s.damaged%d", path, k);
    if (!to) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    struct stat st;
    if (lstat(to, &st) == 0) {  // taken (set aside before)
      free(to);
      continue;
    }
    if (rename(path, to) != 0) {
      const int e = errno;
      free(to);
      return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot set the damaged journal aside: %s",
                      path, strerror(e));
    }
    if (moved_to) *moved_to = to;
    else free(to);
    return MBS_OK;
  }
  return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot set the damaged journal aside: too many "
                  "set aside before", path);
}

//---------------------------------- the journal folder -----------------------------------------

// j<attempt>[-p<part>]-r<rank>-t<thread>[-s<segment>].bin: the length of the name up to the
// end of ".bin" (0: not a journal's name), its attempt and segment (0 without "-s")
static int journal_name(const char* name, int* attempt, int* segment) {
  int a, k, r, t, g = 0, end = -1;
  if (!(sscanf(name, "j%d-r%d-t%d%n", &a, &r, &t, &end) == 3 && end > 0)) {
    end = -1;
    if (!(sscanf(name, "j%d-p%d-r%d-t%d%n", &a, &k, &r, &t, &end) == 4 && end > 0))  // a part's
      return 0;
  }
  if (name[end] == '-') {
    int e2 = -1;
    if (!(sscanf(name + end, "-s%d%n", &g, &e2) == 1 && e2 > 0 && g > 0)) return 0;
    end += e2;
  }
  if (strncmp(name + end, ".bin", 4) != 0) return 0;
  *attempt = a;
  if (segment) *segment = g;
  return end + 4;
}

static int is_journal(const char* name, int* attempt) {
  const int n = journal_name(name, attempt, NULL);
  return n > 0 && name[n] == 0;
}

// a journal set aside (mbs_journal_set_aside): <journal name>.damaged[N]
static int is_set_aside(const char* name, int* attempt) {
  const int n = journal_name(name, attempt, NULL);
  return n > 0 && !strncmp(name + n, ".damaged", 8);
}

char* mbs_journal_segment_path(const char* path, int segment) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int a, g;
  const int n = journal_name(base, &a, &g);
  if (n <= 0 || base[n] != 0 || segment < 1) return NULL;
  // the name without its segment and ".bin"
  size_t keep = (size_t)(base - path) + (size_t)n - 4;
  if (g > 0) {
    const char* dash = strrchr(base, '-');  // "-s<g>"
    keep = (size_t)(dash - path);
  }
  return mbs_format_string("%.*s-s%d.bin", (int)keep, path, segment);
}

char* mbs_journal_next_segment(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int a, g;
  const int n = journal_name(base, &a, &g);
  if (n <= 0 || base[n] != 0) return NULL;
  return mbs_journal_segment_path(path, g + 1);
}

long mbs_journal_bytes(const mbs_journal_writer* w) {
  return w ? (long)w->end : 0;
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
    if (!is_journal(e->d_name, &a)) {
      // one set aside is not listed, but its attempt number is taken: every rank finds the
      // same largest one whether or not rank 0 has set a journal aside yet
      if (is_set_aside(e->d_name, &a) && a > *max_attempt) *max_attempt = a;
      continue;
    }
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
  // those set aside (cut short in their header: nothing in them)
  DIR* d = opendir(dir);
  struct dirent* e;
  while (d && (e = readdir(d))) {
    int a;
    if (!is_set_aside(e->d_name, &a)) continue;
    char* path = mbs_format_string("%s/%s", dir, e->d_name);
    if (path) remove(path);
    free(path);
  }
  if (d) closedir(d);
  char* partial = mbs_format_string("%s/result.h5", dir);
  if (partial) remove(partial);
  free(partial);
  mbs_journal_remove_merged(dir);
  rmdir(dir);
}

//---------------------------------- the merged mark -------------------------------------------

#define MERGED_NAME "merged"

int mbs_journal_write_merged(const char* dir, const mbs_journal_merged* m, mbs_error* err) {
  char* path = mbs_format_string("%s/" MERGED_NAME, dir);
  char* tmp = mbs_format_string("%s/" MERGED_NAME ".new", dir);
  int rc = MBS_OK;
  if (!path || !tmp) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  } else {
    char msg[sizeof m->message];
    snprintf(msg, sizeof msg, "%s", m->message);
    for (char* c = msg; *c; c++)
      if (*c == '\n' || *c == '\r') *c = ' ';
    char text[sizeof msg + 256];
    const int len = snprintf(text, sizeof text, "mbstudy merged 1\nfingerprint %016llx\n"
                             "samples %ld\nfailed %ld\nfirst_failed %ld\nmessage %s\n",
                             (unsigned long long)m->fingerprint, m->samples, m->failed,
                             m->first_failed, msg);
    // written beside, synced, then renamed over the old mark, the folder synced: a crash
    // leaves the old mark or the new one, whole
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, text, (size_t)len) != len || fsync(fd) != 0) {
      rc = MBS_FAIL(err, MBS_ERR_IO, tmp, "%s: cannot write: %s", tmp, strerror(errno));
    }
    if (fd >= 0) close(fd);
    if (rc == MBS_OK && rename(tmp, path) != 0)
      rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot write: %s", path, strerror(errno));
    if (rc != MBS_OK) remove(tmp);
    const int dfd = rc == MBS_OK ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) {
      if (fsync(dfd) != 0)
        rc = MBS_FAIL(err, MBS_ERR_IO, dir, "%s: cannot sync the folder: %s", dir,
                      strerror(errno));
      close(dfd);
    }
  }
  free(path);
  free(tmp);
  return rc;
}

int mbs_journal_read_merged(const char* dir, mbs_journal_merged* m) {
  memset(m, 0, sizeof(*m));
  m->first_failed = -1;
  char* path = mbs_format_string("%s/" MERGED_NAME, dir);
  FILE* f = path ? fopen(path, "r") : NULL;
  free(path);
  if (!f) return 0;
  char line[700];
  int version = 0, have = 0;
  unsigned long long fp = 0;
  while (fgets(line, sizeof line, f)) {
    have += sscanf(line, "mbstudy merged %d", &version) == 1;
    have += sscanf(line, "fingerprint %llx", &fp) == 1;
    have += sscanf(line, "samples %ld", &m->samples) == 1;
    have += sscanf(line, "failed %ld", &m->failed) == 1;
    have += sscanf(line, "first_failed %ld", &m->first_failed) == 1;
    if (!strncmp(line, "message ", 8)) {
      snprintf(m->message, sizeof m->message, "%s", line + 8);
      m->message[strcspn(m->message, "\n")] = 0;
    }
  }
  fclose(f);
  m->fingerprint = fp;
  if (have != 5 || version != 1 || m->samples < 0 || m->failed < 0 || m->failed > m->samples) {
    memset(m, 0, sizeof(*m));
    m->first_failed = -1;
    return 0;
  }
  return 1;
}

void mbs_journal_remove_merged(const char* dir) {
  char* path = mbs_format_string("%s/" MERGED_NAME, dir);
  if (path) remove(path);
  free(path);
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
  // the samples merged into the result file, whose journals may be deleted (the mark)
  mbs_journal_merged mk;
  if (mbs_journal_read_merged(dir, &mk) && mk.samples > 0) {
    cap = mk.samples / 8 + 1024;
    seen = calloc((size_t)cap, 1);
    if (!seen) {
      mbs_journal_free_list(files, n);
      return -1;
    }
    memset(seen, 0xff, (size_t)(mk.samples / 8));
    for (long i = mk.samples / 8 * 8; i < mk.samples; i++)
      seen[i >> 3] |= (unsigned char)(1u << (i & 7));
    *done = mk.samples;
    *failed = mk.failed;
    if (first_failed && mk.first_failed >= 0) {
      *first_failed = mk.first_failed;
      if (message && message_size) snprintf(message, message_size, "%s", mk.message);
    }
  }
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
