// Journals (studies/journal.c): records written and read back bit for bit; one damaged record
// (a flipped byte in its payload, its length, its magic, its checksums; garbage between
// records; two damaged records) costs that record alone, the reader resynchronizing on the next
// one and counting the damage; a journal cut short in its last record keeps every earlier one,
// and a reader following a growing journal picks the rest up; journals cut short in their
// header are told apart from garbage and from another study's, set aside, not listed again and
// tolerated by mbs_journal_count; format 2 journals are read, other formats refused with a
// clear message; a write that fails (a file size limit, as a full disk) returns an error naming
// the file and the reason, never crashes, and leaves the records written before readable.
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../studies/journal.h"
#include "mbs_test.h"

enum { NP = 3, NT = 10, NS = 2, NREC = 200 };
static const mbs_journal_layout layout = {0x1234567890ABCDEFull, NP, NT, NS};

static char dir[256];

// the values of record i
static void fill(long i, mbs_journal_record* r, double* p, double* t, double* s) {
  memset(r, 0, sizeof(*r));
  r->index = i;
  r->status = i % 7 == 3 ? -105 : 0;
  r->frames = (int)(i % 11);
  r->wall = 0.001 * (double)i;
  r->steps = 100 + i;
  if (r->status) snprintf(r->message, sizeof(r->message), "sample %ld: mass -%ld kg", i, i);
  if (i % 50 == 17) memset(r->message, 'x', sizeof(r->message) - 1);  // the longest message
  for (int k = 0; k < NP; k++) p[k] = (double)i + 0.1 * k;
  for (int k = 0; k < NT; k++) t[k] = (double)i * 1000 + k;
  for (int k = 0; k < NS; k++) s[k] = -(double)i - 0.5 * k;
  r->params = p;
  r->traj = t;
  r->scalars = s;
}

static int same(const mbs_journal_record* a, const mbs_journal_record* b) {
  return a->index == b->index && a->status == b->status && a->frames == b->frames &&
         a->wall == b->wall && a->steps == b->steps && !strcmp(a->message, b->message) &&
         !memcmp(a->params, b->params, NP * 8) && !memcmp(a->traj, b->traj, NT * 8) &&
         !memcmp(a->scalars, b->scalars, NS * 8);
}

static long file_size(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

// a journal of n records; the offsets where records start (and the end) in at[0 .. n]
static void write_journal(const char* path, long n, long* at) {
  mbs_error e;
  mbs_journal_writer* w = mbs_journal_create(path, &layout, &e);
  EXPECT_TRUE(w != NULL);
  if (!w) return;
  for (long i = 0; i < n; i++) {
    if (at) at[i] = file_size(path);
    mbs_journal_record r;
    double p[NP], t[NT], s[NS];
    fill(i, &r, p, t, s);
    EXPECT_OK(mbs_journal_append(w, &r, &e));
  }
  if (at) at[n] = file_size(path);
  EXPECT_OK(mbs_journal_close(w, &e));
}

static unsigned char* slurp(const char* path, long* n) {
  FILE* f = fopen(path, "rb");
  *n = file_size(path);
  unsigned char* b = malloc((size_t)*n + 1);
  if (!f || !b || fread(b, 1, (size_t)*n, f) != (size_t)*n) *n = -1;
  if (f) fclose(f);
  return b;
}

static void spit(const char* path, const unsigned char* b, long n) {
  FILE* f = fopen(path, "wb");
  EXPECT_TRUE(f && fwrite(b, 1, (size_t)n, f) == (size_t)n);
  if (f) fclose(f);
}

// read a journal: the records (each checked against its values) as a bitmap of indices, their
// count, the damaged records counted
static long read_all(const char* path, unsigned char* seen, long* damaged) {
  mbs_error e;
  memset(seen, 0, NREC);
  *damaged = -1;
  mbs_journal_reader* r = mbs_journal_open(path, &layout, &e);
  EXPECT_TRUE(r != NULL);
  if (!r) {
    fprintf(stderr, "  %s\n", e.message);
    return -1;
  }
  long n = 0, last = -1;
  mbs_journal_record rec;
  while (mbs_journal_next(r, &rec)) {
    mbs_journal_record want;
    double p[NP], t[NT], s[NS];
    fill(rec.index, &want, p, t, s);
    EXPECT_TRUE(rec.index > last && rec.index < NREC);
    EXPECT_TRUE(same(&rec, &want));
    if (rec.index >= 0 && rec.index < NREC) seen[rec.index] = 1;
    last = rec.index;
    n++;
  }
  EXPECT_EQ_INT(mbs_journal_next(r, &rec), 0);  // the end stays the end
  *damaged = mbs_journal_damaged(r);
  mbs_journal_close_reader(r);
  return n;
}

// every record but those listed
static int all_but(const unsigned char* seen, const long* missing, int nmissing) {
  for (long i = 0; i < NREC; i++) {
    int miss = 0;
    for (int k = 0; k < nmissing; k++) miss |= missing[k] == i;
    if (seen[i] == miss) {
      fprintf(stderr, "  record %ld: %s\n", i, miss ? "read, but it was damaged" : "lost");
      return 0;
    }
  }
  return 1;
}

static void test_round_trip(const char* path, long* at) {
  write_journal(path, NREC, at);
  unsigned char seen[NREC];
  long damaged;
  EXPECT_EQ_INT(read_all(path, seen, &damaged), NREC);
  EXPECT_EQ_INT(damaged, 0);
  EXPECT_TRUE(all_but(seen, NULL, 0));
}

// flip byte `off` of the journal at `path` (in a copy), read it: n records, those missing,
// `damaged` damaged
static void expect_after_flips(const char* what, const char* path, const long* off, int noff,
                               long n, const long* missing, int nmissing, long damaged) {
  long size;
  unsigned char* b = slurp(path, &size);
  char copy[300];
  snprintf(copy, sizeof(copy), "%s/damaged.bin", dir);
  for (int k = 0; k < noff; k++) b[off[k]] ^= 0x10;
  spit(copy, b, size);
  free(b);
  unsigned char seen[NREC];
  long d;
  const long got = read_all(copy, seen, &d);
  const int ok = got == n && d == damaged && all_but(seen, missing, nmissing);
  EXPECT_TRUE(ok);
  printf("  %s: %ld records read, %ld damaged%s\n", what, got, d, ok ? "" : " (WRONG)");
}

static void test_damage(const char* path, const long* at) {
  const long r50[1] = {50};
  // a byte of record 50: in its payload (a parameter), its length, its magic, its header
  // checksum, its payload checksum, its message length
  const long payload = at[50] + 20 + 8 + 4 + 4 + 8 + 8 + 4 + 3, length = at[50] + 8 + 2;
  const long magic = at[50] + 3, hcrc = at[50] + 17, crc = at[51] - 2, msglen = at[50] + 52;
  expect_after_flips("a byte of record 50's payload", path, &payload, 1, NREC - 1, r50, 1, 1);
  expect_after_flips("a byte of record 50's length", path, &length, 1, NREC - 1, r50, 1, 1);
  const long length_top = at[50] + 15;  // a length of petabytes: nothing read or allocated
  expect_after_flips("the top byte of record 50's length", path, &length_top, 1, NREC - 1, r50,
                     1, 1);
  expect_after_flips("a byte of record 50's magic", path, &magic, 1, NREC - 1, r50, 1, 1);
  expect_after_flips("a byte of record 50's header checksum", path, &hcrc, 1, NREC - 1, r50, 1,
                     1);
  expect_after_flips("a byte of record 50's checksum", path, &crc, 1, NREC - 1, r50, 1, 1);
  expect_after_flips("record 50's message length", path, &msglen, 1, NREC - 1, r50, 1, 1);
  // two records apart, two next to each other, the first and the last
  const long two[2] = {at[50] + 40, at[120] + 60}, m2[2] = {50, 120};
  expect_after_flips("records 50 and 120", path, two, 2, NREC - 2, m2, 2, 2);
  const long adj[2] = {at[50] + 40, at[51] + 40}, ma[2] = {50, 51};
  expect_after_flips("records 50 and 51", path, adj, 2, NREC - 2, ma, 2, 2);
  const long adjm[2] = {at[50] + 1, at[51] + 1};  // both magics: one stretch of damage
  expect_after_flips("the magics of records 50 and 51", path, adjm, 2, NREC - 2, ma, 2, 1);
  const long first = at[0] + 30, r0[1] = {0};
  expect_after_flips("record 0", path, &first, 1, NREC - 1, r0, 1, 1);
  const long last = at[NREC - 1] + 30, rl[1] = {NREC - 1};
  expect_after_flips("the last record", path, &last, 1, NREC - 1, rl, 1, 1);

  // garbage between records 10 and 11 (with a record magic cut short and a whole record header
  // followed by no record: two damaged records): every record read
  long size;
  unsigned char* b = slurp(path, &size);
  unsigned char* g = malloc((size_t)size + 1000);
  memcpy(g, b, (size_t)at[11]);
  for (int k = 0; k < 1000; k++) g[at[11] + k] = (unsigned char)(k * 37 + 11);
  memcpy(g + at[11] + 300, b + at[11], 6);  // a magic cut short
  memcpy(g + at[11] + 600, b + at[11], 20);  // a whole record header, no record
  memcpy(g + at[11] + 1000, b + at[11], (size_t)(size - at[11]));
  char copy[300];
  snprintf(copy, sizeof(copy), "%s/garbage.bin", dir);
  spit(copy, g, size + 1000);
  unsigned char seen[NREC];
  long d;
  EXPECT_EQ_INT(read_all(copy, seen, &d), NREC);
  EXPECT_TRUE(all_but(seen, NULL, 0));
  EXPECT_EQ_INT(d, 2);
  printf("  1000 bytes of garbage between records 10 and 11: %ld damaged, every record read\n",
         d);
  free(g);
  free(b);
}

// a journal cut within its last record: the records before it; a reader following the growing
// journal reads the last record once it is whole (not counted as damage)
static void test_truncated(const char* path, const long* at) {
  long size;
  unsigned char* b = slurp(path, &size);
  char copy[300];
  snprintf(copy, sizeof(copy), "%s/cut.bin", dir);
  const long last = at[NREC - 1];
  const long cuts[] = {last + 1, last + 8, last + 12, last + 19, last + 20, last + 100,
                       size - 1};
  for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
    spit(copy, b, cuts[k]);
    unsigned char seen[NREC];
    long d;
    const long rl[1] = {NREC - 1};
    EXPECT_EQ_INT(read_all(copy, seen, &d), NREC - 1);
    EXPECT_EQ_INT(d, 0);
    EXPECT_TRUE(all_but(seen, rl, 1));
    // growing
    mbs_error e;
    mbs_journal_reader* r = mbs_journal_open(copy, &layout, &e);
    EXPECT_TRUE(r != NULL);
    if (!r) continue;
    mbs_journal_record rec;
    long n = 0;
    while (mbs_journal_next(r, &rec)) n++;
    EXPECT_EQ_INT(n, NREC - 1);
    FILE* f = fopen(copy, "ab");
    EXPECT_TRUE(f && fwrite(b + cuts[k], 1, (size_t)(size - cuts[k]), f) ==
                         (size_t)(size - cuts[k]));
    if (f) fclose(f);
    EXPECT_EQ_INT(mbs_journal_next(r, &rec), 1);
    EXPECT_EQ_INT(rec.index, NREC - 1);
    EXPECT_EQ_INT(mbs_journal_next(r, &rec), 0);
    EXPECT_EQ_INT(mbs_journal_damaged(r), 0);
    mbs_journal_close_reader(r);
  }
  printf("  cut within the last record (%zu places): %d records read, and the last once whole\n",
         sizeof(cuts) / sizeof(cuts[0]), NREC - 1);
  // resynchronizing off (a journal being written): a damaged record stops the reader as the
  // end does, uncounted, until it is turned on
  b[at[50] + 40] ^= 1;
  spit(copy, b, size);
  mbs_error e;
  mbs_journal_reader* r = mbs_journal_open(copy, &layout, &e);
  EXPECT_TRUE(r != NULL);
  if (r) {
    mbs_journal_set_resync(r, 0);
    mbs_journal_record rec;
    long n = 0;
    while (mbs_journal_next(r, &rec)) n++;
    EXPECT_EQ_INT(n, 50);
    EXPECT_EQ_INT(mbs_journal_next(r, &rec), 0);
    EXPECT_EQ_INT(mbs_journal_damaged(r), 0);
    mbs_journal_set_resync(r, 1);
    while (mbs_journal_next(r, &rec)) n++;
    EXPECT_EQ_INT(n, NREC - 1);
    EXPECT_EQ_INT(mbs_journal_damaged(r), 1);
    mbs_journal_close_reader(r);
  }
  free(b);
}

static void write_bytes(const char* path, const void* b, size_t n) {
  FILE* f = fopen(path, "wb");
  EXPECT_TRUE(f && (n == 0 || fwrite(b, 1, n, f) == n));
  if (f) fclose(f);
}

// journals cut short in their header, garbage, another study's, other formats
static void test_headers(const char* good) {
  char path[300];
  mbs_error e;
  snprintf(path, sizeof(path), "%s/j1-r0-t0.bin", dir);
  write_bytes(path, "", 0);
  EXPECT_TRUE(mbs_journal_open(path, &layout, &e) == NULL);
  EXPECT_EQ_INT(e.code, MBS_ERR_PARSE);
  EXPECT_TRUE(strstr(e.message, "cut short in its header") != NULL);
  EXPECT_EQ_INT(mbs_journal_header_cut_short(path), 1);
  snprintf(path, sizeof(path), "%s/j1-r0-t1.bin", dir);
  write_bytes(path, "MBSJR", 5);
  EXPECT_TRUE(mbs_journal_open(path, &layout, &e) == NULL);
  EXPECT_EQ_INT(e.code, MBS_ERR_PARSE);
  EXPECT_EQ_INT(mbs_journal_header_cut_short(path), 1);
  // a whole header of garbage: refused, not "cut short"
  char garbage[300];
  snprintf(garbage, sizeof(garbage), "%s/garbage_header.bin", dir);
  write_bytes(garbage, "this is not a journal of mbstudy, no", 36);
  EXPECT_TRUE(mbs_journal_open(garbage, &layout, &e) == NULL);
  EXPECT_EQ_INT(e.code, MBS_ERR_PARSE);
  EXPECT_TRUE(strstr(e.message, "not a journal") != NULL);
  EXPECT_EQ_INT(mbs_journal_header_cut_short(garbage), 0);
  // another study's
  mbs_journal_layout other = layout;
  other.fingerprint ^= 1;
  EXPECT_TRUE(mbs_journal_open(good, &other, &e) == NULL);
  EXPECT_EQ_INT(e.code, MBS_ERR_ARGUMENT);
  EXPECT_TRUE(strstr(e.message, "another study") != NULL);
  EXPECT_EQ_INT(mbs_journal_header_cut_short(good), 0);
  // a format this mbstudy does not know
  long size;
  unsigned char* b = slurp(good, &size);
  b[7] = '9';
  snprintf(path, sizeof(path), "%s/format9.bin", dir);
  spit(path, b, size);
  EXPECT_TRUE(mbs_journal_open(path, &layout, &e) == NULL);
  EXPECT_EQ_INT(e.code, MBS_ERR_PARSE);
  EXPECT_TRUE(strstr(e.message, "rerun without --resume or with the mbstudy that wrote it"));
  printf("  %s\n", e.message);
  free(b);
  remove(path);
  remove(garbage);
}

// the folder: cut-short journals set aside, not listed; counted around
static void test_folder(void) {
  char path[300], first[300], second[300];
  snprintf(path, sizeof(path), "%s/j0-r0-t0.bin", dir);
  write_journal(path, NREC, NULL);
  snprintf(first, sizeof(first), "%s/j1-r0-t0.bin", dir);  // (from test_headers)
  snprintf(second, sizeof(second), "%s/j1-r0-t1.bin", dir);
  char** files;
  int n, max_attempt;
  long done, failed, ff;
  char msg[600];
  // mbs_journal_count with them there (inspect)
  EXPECT_EQ_INT(mbs_journal_count(dir, 0, &done, &failed, &ff, msg, sizeof(msg), 0, NULL), 0);
  EXPECT_EQ_INT(done, NREC);
  EXPECT_EQ_INT(mbs_journal_list(dir, &files, &n, &max_attempt), MBS_OK);
  EXPECT_EQ_INT(n, 3);
  EXPECT_EQ_INT(max_attempt, 1);
  mbs_journal_free_list(files, n);
  mbs_error e;
  char* to = NULL;
  EXPECT_OK(mbs_journal_set_aside(first, &to, &e));
  EXPECT_TRUE(to && strstr(to, "j1-r0-t0.bin.damaged"));
  EXPECT_EQ_INT(file_size(first), -1);
  EXPECT_EQ_INT(file_size(to), 0);
  free(to);
  // a second one of the same name: set aside next to the first
  write_bytes(first, "M", 1);
  EXPECT_OK(mbs_journal_set_aside(first, &to, &e));
  EXPECT_TRUE(to && strstr(to, "j1-r0-t0.bin.damaged2"));
  free(to);
  EXPECT_OK(mbs_journal_set_aside(second, NULL, &e));
  EXPECT_EQ_INT(mbs_journal_list(dir, &files, &n, &max_attempt), MBS_OK);
  EXPECT_EQ_INT(n, 1);
  EXPECT_EQ_INT(max_attempt, 1);  // (the attempt numbers of those set aside are taken)
  if (n == 1) EXPECT_TRUE(!strcmp(files[0], path));
  mbs_journal_free_list(files, n);
  EXPECT_EQ_INT(mbs_journal_count(dir, 0, &done, &failed, &ff, msg, sizeof(msg), 0, NULL), 0);
  EXPECT_EQ_INT(done, NREC);
  // a missing journal cannot be set aside
  EXPECT_TRUE(mbs_journal_set_aside(second, NULL, &e) == MBS_ERR_IO);
  // start over: everything goes, the set-aside journals too, and the folder
  char sub[300];
  snprintf(sub, sizeof(sub), "%s/parts", dir);
  mkdir(sub, 0777);
  snprintf(path, sizeof(path), "%s/j0-p1-r0-t0.bin", sub);
  write_journal(path, 3, NULL);
  snprintf(path, sizeof(path), "%s/j0-r0-t0.bin.damaged", sub);
  write_bytes(path, "", 0);
  snprintf(path, sizeof(path), "%s/j0-p1-r0-t1.bin.damaged3", sub);
  write_bytes(path, "", 0);
  mbs_journal_clear_dir(sub);
  EXPECT_EQ_INT(file_size(sub), -1);
  printf("  journals cut short in their header: set aside, not listed, counted around\n");
}

// records first .. last-1 in a new journal at path
static void write_range(const char* path, long first, long last) {
  mbs_error e;
  mbs_journal_writer* w = mbs_journal_create(path, &layout, &e);
  EXPECT_TRUE(w != NULL);
  if (!w) return;
  EXPECT_EQ_INT(mbs_journal_bytes(w), file_size(path));
  for (long i = first; i < last; i++) {
    mbs_journal_record r;
    double p[NP], t[NT], s[NS];
    fill(i, &r, p, t, s);
    EXPECT_OK(mbs_journal_append(w, &r, &e));
  }
  EXPECT_EQ_INT(mbs_journal_bytes(w), file_size(path));
  EXPECT_OK(mbs_journal_close(w, &e));
}

// a thread's journal in segments (names, listing) and the merged mark (written whole, read
// back, counted with the journals by mbs_journal_count, removed with the folder)
static void test_segments_and_mark(void) {
  static const struct {
    const char* path;
    int segment;
    const char* want;  // NULL: not a journal's name
  } names[] = {
      {"d/j3-r1-t2.bin", 1, "d/j3-r1-t2-s1.bin"},
      {"d/j3-p4-r1-t2-s7.bin", 8, "d/j3-p4-r1-t2-s8.bin"},
      {"j0-r0-t0-s9.bin", 10, "j0-r0-t0-s10.bin"},
      {"d/x.bin", 1, NULL},
      {"d/j0-r0-t0-s0.bin", 1, NULL},
      {"d/j0-r0-t0-sx.bin", 1, NULL},
      {"d/j0-r0-t0.binx", 1, NULL},
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char* got = mbs_journal_segment_path(names[i].path, names[i].segment);
    EXPECT_TRUE(names[i].want ? got && !strcmp(got, names[i].want) : got == NULL);
    free(got);
  }
  char* nx = mbs_journal_next_segment("d/j1-r0-t3-s9.bin");
  EXPECT_TRUE(nx && !strcmp(nx, "d/j1-r0-t3-s10.bin"));
  free(nx);
  nx = mbs_journal_next_segment("d/j1-r0-t3.bin");
  EXPECT_TRUE(nx && !strcmp(nx, "d/j1-r0-t3-s1.bin"));
  free(nx);

  char sub[300], a[400], b[400], c[400];
  snprintf(sub, sizeof(sub), "%s/segments", dir);
  mkdir(sub, 0777);
  snprintf(a, sizeof(a), "%s/j0-r0-t0.bin", sub);
  snprintf(b, sizeof(b), "%s/j0-r0-t0-s1.bin", sub);
  write_range(a, 20, 30);
  write_range(b, 30, 40);
  snprintf(c, sizeof(c), "%s/j0-r0-t0-s1.bin.damaged", sub);
  write_bytes(c, "", 0);
  snprintf(c, sizeof(c), "%s/j0-r0-t0-s2.binx", sub);
  write_bytes(c, "", 0);
  char** files;
  int n, max_attempt;
  EXPECT_EQ_INT(mbs_journal_list(sub, &files, &n, &max_attempt), MBS_OK);
  EXPECT_EQ_INT(n, 2);
  EXPECT_EQ_INT(max_attempt, 0);
  mbs_journal_free_list(files, n);

  mbs_journal_merged m, r;
  memset(&m, 0, sizeof(m));
  m.fingerprint = layout.fingerprint;
  m.samples = 30;
  m.failed = 4;
  m.first_failed = 3;
  snprintf(m.message, sizeof(m.message), "sample 3: two\nlines");
  EXPECT_EQ_INT(mbs_journal_read_merged(sub, &r), 0);
  mbs_error e;
  EXPECT_OK(mbs_journal_write_merged(sub, &m, &e));
  EXPECT_EQ_INT(mbs_journal_read_merged(sub, &r), 1);
  EXPECT_TRUE(r.fingerprint == m.fingerprint && r.samples == 30 && r.failed == 4 &&
              r.first_failed == 3 && !strcmp(r.message, "sample 3: two lines"));
  // counted with the journals: 0..29 from the mark (4 failed), 30..39 from the journals
  // (31 and 38 failed), 20..29 once
  long done, failed, ff;
  char msg[600];
  EXPECT_EQ_INT(mbs_journal_count(sub, 0, &done, &failed, &ff, msg, sizeof(msg), 0, NULL), 0);
  EXPECT_EQ_INT(done, 40);
  EXPECT_EQ_INT(failed, 6);
  EXPECT_EQ_INT(ff, 3);
  EXPECT_TRUE(!strcmp(msg, "sample 3: two lines"));
  // a mark that is not whole or not a mark: none
  snprintf(c, sizeof(c), "%s/merged", sub);
  const char* cut = "mbstudy merged 1\nsamples 5\n";
  write_bytes(c, cut, strlen(cut));
  EXPECT_EQ_INT(mbs_journal_read_merged(sub, &r), 0);
  const char* odd = "mbstudy merged 1\nfingerprint 1\nsamples 5\nfailed 6\nfirst_failed -1\n";
  write_bytes(c, odd, strlen(odd));
  EXPECT_EQ_INT(mbs_journal_read_merged(sub, &r), 0);  // more failed than samples
  EXPECT_OK(mbs_journal_write_merged(sub, &m, &e));
  snprintf(c, sizeof(c), "%s/j0-r0-t0-s2.binx", sub);  // (not a journal: clear_dir keeps it)
  remove(c);
  mbs_journal_clear_dir(sub);
  EXPECT_EQ_INT(file_size(sub), -1);
  printf("  journal segments named and listed; the merged mark written, read and counted\n");
}

// format 2: "MBSJRNL2", records of a 4-byte magic, the length of payload and checksum, the
// payload, its checksum
static void test_format2(void) {
  char path[300];
  snprintf(path, sizeof(path), "%s/v2.bin", dir);
  FILE* f = fopen(path, "wb");
  EXPECT_TRUE(f != NULL);
  if (!f) return;
  const int32_t np = NP, ns = NS;
  const int64_t nt = NT;
  const uint64_t fp = layout.fingerprint;
  fwrite("MBSJRNL2", 1, 8, f);
  fwrite(&fp, 8, 1, f);
  fwrite(&np, 4, 1, f);
  fwrite(&nt, 8, 1, f);
  fwrite(&ns, 4, 1, f);
  for (long i = 0; i < NREC; i++) {
    mbs_journal_record r;
    double p[NP], t[NT], s[NS];
    fill(i, &r, p, t, s);
    const uint32_t msglen = (uint32_t)strlen(r.message);
    const size_t n = 8 + 4 + 4 + 8 + 8 + 4 + msglen + 8 * (NP + NT + NS);
    unsigned char* b = malloc(n);
    unsigned char* q = b;
    const int64_t index = i, steps = r.steps;
    const int32_t status = r.status, frames = r.frames;
    memcpy(q, &index, 8), q += 8;
    memcpy(q, &status, 4), q += 4;
    memcpy(q, &frames, 4), q += 4;
    memcpy(q, &r.wall, 8), q += 8;
    memcpy(q, &steps, 8), q += 8;
    memcpy(q, &msglen, 4), q += 4;
    memcpy(q, r.message, msglen), q += msglen;
    memcpy(q, p, 8 * NP), q += 8 * NP;
    memcpy(q, t, 8 * NT), q += 8 * NT;
    memcpy(q, s, 8 * NS);
    const uint32_t magic = 0x5253424Du, crc = mbs_journal_checksum(b, n);
    const uint64_t len = n + 4;
    fwrite(&magic, 4, 1, f);
    fwrite(&len, 8, 1, f);
    fwrite(b, 1, n, f);
    fwrite(&crc, 4, 1, f);
    free(b);
  }
  fclose(f);
  unsigned char seen[NREC];
  long d;
  EXPECT_EQ_INT(read_all(path, seen, &d), NREC);
  EXPECT_EQ_INT(d, 0);
  printf("  a format 2 journal: %d records read\n", NREC);
  remove(path);
}

// a write refused (RLIMIT_FSIZE, as a full disk): errors naming the file and the reason, no
// crash, the records before it readable
static void test_full_disk(void) {
  char path[300];
  snprintf(path, sizeof(path), "%s/full.bin", dir);
  struct rlimit old;
  EXPECT_OK(getrlimit(RLIMIT_FSIZE, &old));
  signal(SIGXFSZ, SIG_IGN);
  mbs_error e;
  mbs_error_clear(&e);
  // not even the header: no journal, and no file left
  struct rlimit lim = old;
  lim.rlim_cur = 20;
  EXPECT_OK(setrlimit(RLIMIT_FSIZE, &lim));
  EXPECT_TRUE(mbs_journal_create(path, &layout, &e) == NULL);
  EXPECT_EQ_INT(e.code, MBS_ERR_IO);
  EXPECT_TRUE(strstr(e.message, path) && strstr(e.message, strerror(EFBIG)));
  printf("  %s\n", e.message);
  EXPECT_EQ_INT(file_size(path), -1);
  // 30 kB: a few records
  lim.rlim_cur = 30000;
  EXPECT_OK(setrlimit(RLIMIT_FSIZE, &lim));
  mbs_journal_writer* w = mbs_journal_create(path, &layout, &e);
  EXPECT_TRUE(w != NULL);
  long written = 0;
  int rc = MBS_OK;
  for (long i = 0; w && i < NREC && rc == MBS_OK; i++) {
    mbs_journal_record r;
    double p[NP], t[NT], s[NS];
    fill(i, &r, p, t, s);
    rc = mbs_journal_append(w, &r, &e);
    if (rc == MBS_OK) written++;
    if (rc == MBS_OK && i % 10 == 9) EXPECT_OK(mbs_journal_sync(w, &e));
  }
  EXPECT_EQ_INT(rc, MBS_ERR_IO);
  EXPECT_TRUE(written > 10 && written < NREC);
  EXPECT_TRUE(strstr(e.message, path) && strstr(e.message, strerror(EFBIG)));
  printf("  %s\n", e.message);
  if (w) {
    mbs_journal_record r;
    double p[NP], t[NT], s[NS];
    fill(written + 1, &r, p, t, s);
    mbs_error_clear(&e);
    EXPECT_EQ_INT(mbs_journal_append(w, &r, &e), MBS_ERR_IO);  // refused, the same reason
    EXPECT_TRUE(strstr(e.message, path) && strstr(e.message, strerror(EFBIG)));
    mbs_error_clear(&e);
    EXPECT_EQ_INT(mbs_journal_sync(w, &e), MBS_ERR_IO);
    EXPECT_TRUE(strstr(e.message, path) && strstr(e.message, strerror(EFBIG)));
    mbs_error_clear(&e);
    EXPECT_EQ_INT(mbs_journal_close(w, &e), MBS_ERR_IO);
    EXPECT_TRUE(strstr(e.message, path) && strstr(e.message, strerror(EFBIG)));
  }
  EXPECT_OK(setrlimit(RLIMIT_FSIZE, &old));
  signal(SIGXFSZ, SIG_DFL);
  // every record appended before the failure, nothing else, no damage
  unsigned char seen[NREC];
  long d;
  EXPECT_EQ_INT(read_all(path, seen, &d), written);
  EXPECT_EQ_INT(d, 0);
  for (long i = 0; i < written; i++) EXPECT_TRUE(seen[i]);
  printf("  a write over the file size limit: %ld records kept and read back\n", written);
  remove(path);
}

int main(void) {
  const char* tmp = getenv("TMPDIR");
  snprintf(dir, sizeof(dir), "%s/mbs_test_journal_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  char path[300];
  snprintf(path, sizeof(path), "%s/j0-r0-t1.bin", dir);
  long at[NREC + 1];
  test_round_trip(path, at);
  test_damage(path, at);
  test_truncated(path, at);
  test_headers(path);
  remove(path);
  char copy[300];
  snprintf(copy, sizeof(copy), "%s/damaged.bin", dir);
  remove(copy);
  snprintf(copy, sizeof(copy), "%s/garbage.bin", dir);
  remove(copy);
  snprintf(copy, sizeof(copy), "%s/cut.bin", dir);
  remove(copy);
  test_folder();
  test_segments_and_mark();
  test_format2();
  test_full_disk();
  mbs_journal_clear_dir(dir);
  rmdir(dir);
  return mbs_test_finish("test_journal");
}
