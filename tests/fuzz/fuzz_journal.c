// libFuzzer harness: the journal reader of completed samples (studies/journal.c):
// mbs_journal_open (with the journal's own layout, as `mbstudy status` reads any study's
// journals) and mbs_journal_next until it finds no further whole valid record.
//
// The reader only takes a path: the input is written to "<private folder>/j0-r0-t0.bin". Every
// record read is read back in full (params, trajectory values, scalars of the layout; the
// message must be NUL-terminated) under ASan; leaks are reported by LSan.
//
// Built with -DMBS_FUZZ_JOURNAL_GENERATOR, this file is instead a small program that writes
// seed journals with the library's own writer (see tests/fuzz/README.md).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "journal.h"

#ifndef MBS_FUZZ_JOURNAL_GENERATOR

static const char* journal_path;

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  fuzz_tmp_init("journal");
  journal_path = fuzz_tmp_path("j0-r0-t0.bin");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_write_file(journal_path, data, size);
  mbs_error err;
  mbs_error_clear(&err);
  mbs_journal_reader* r = mbs_journal_open(journal_path, NULL, &err);
  fuzz_report("journal", r != NULL, r ? "opened" : err.message);
  if (!r) {
    fuzz_touch_str(err.message);
    return 0;
  }
  // the layout, as the header gave it (open checked it): read again from the input
  int32_t np = 0, ns = 0;
  int64_t nt = 0;
  FUZZ_CHECK(size >= 32, "a journal opened has a whole header of 32 bytes");
  memcpy(&np, data + 16, 4);
  memcpy(&nt, data + 20, 8);
  memcpy(&ns, data + 28, 4);
  mbs_journal_record rec;
  memset(&rec, 0xA5, sizeof(rec));  // (no NUL in the message unless the reader writes one)
  // records do not overlap and each takes at least 52 bytes (format 2: magic 4, length 8,
  // payload 36 or more, checksum 4; format 3 more): no more records than that
  long nrec = 0;
  const long max_records = (long)(size / 52) + 1;
  while (mbs_journal_next(r, &rec)) {
    FUZZ_CHECK(++nrec <= max_records, "next advances, records do not overlap");
    FUZZ_CHECK(memchr(rec.message, 0, sizeof(rec.message)), "a NUL-terminated message");
    fuzz_touch_str(rec.message);
    fuzz_touch_doubles(rec.params, np);
    fuzz_touch_doubles(rec.traj, (long)nt);
    fuzz_touch_doubles(rec.scalars, ns);
    fuzz_sink += (uint64_t)rec.index + (uint64_t)rec.status + (uint64_t)rec.frames +
                 (uint64_t)rec.steps;
    memset(rec.message, 0xA5, sizeof(rec.message));
  }
  char what[64];
  snprintf(what, sizeof(what), "%ld whole records", nrec);
  fuzz_report("journal", 1, what);
  // a second call at the end finds nothing either (the reader stays where it was)
  FUZZ_CHECK(!mbs_journal_next(r, &rec), "at the end, next finds nothing again");
  mbs_journal_close_reader(r);
  return 0;
}

#else  // MBS_FUZZ_JOURNAL_GENERATOR: write seed journals into the folder given

#include <fcntl.h>
#include <unistd.h>

static void fill_record(mbs_journal_record* r, int i, double* params, double* traj,
                        double* scalars) {
  memset(r, 0, sizeof(*r));
  r->index = 2 * i + 1;
  r->status = i == 1 ? 3 : 0;
  r->frames = 4;
  r->wall = 0.25 * (i + 1);
  r->steps = 100 + i;
  snprintf(r->message, sizeof(r->message), "%s", i == 1 ? "integrator failed at t = 0.5" : "");
  for (int k = 0; k < 4; k++) params[k] = 1.0 + 0.5 * k + i;
  for (int k = 0; k < 8; k++) traj[k] = 0.125 * k - i;
  for (int k = 0; k < 4; k++) scalars[k] = (double)(k * i);
  r->params = params;
  r->traj = traj;
  r->scalars = scalars;
}

// with the library's writer (the current format); damage: 0 none, 1 the last record cut short
// by 7 bytes (a crash while writing), 2 a byte of the middle record's payload changed
static int write_journal(const char* path, const mbs_journal_layout* L, int nrec, int damage) {
  mbs_error err;
  mbs_journal_writer* w = mbs_journal_create(path, L, &err);
  if (!w) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  double params[4], traj[8], scalars[4];
  for (int i = 0; i < nrec; i++) {
    mbs_journal_record r;
    fill_record(&r, i, params, traj, scalars);
    if (mbs_journal_append(w, &r, &err) != MBS_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
  }
  if (mbs_journal_close(w, &err) != MBS_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  if (damage) {
    const int fd = open(path, O_RDWR);
    const off_t n = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
    int rc = n < 0;
    if (!rc && damage == 1) rc = ftruncate(fd, n - 7) != 0;
    if (!rc && damage == 2) {  // (records of equal size: the middle one's middle)
      const off_t at = 32 + (n - 32) / 2;
      unsigned char b;
      rc = pread(fd, &b, 1, at) != 1;
      b ^= 0x40;
      if (!rc) rc = pwrite(fd, &b, 1, at) != 1;
    }
    if (fd >= 0) close(fd);
    if (rc) return 1;
  }
  return 0;
}

#define PUT(p, v)                  \
  do {                             \
    memcpy((p), &(v), sizeof(v));  \
    (p) += sizeof(v);              \
  } while (0)

// a journal of format 2 written by hand ("MBSJRNL2"; records: "MBSR", the length of the
// payload and its checksum (8), the payload, the checksum (4)), which readers still accept
static int write_journal_v2(const char* path, const mbs_journal_layout* L, int nrec) {
  FILE* f = fopen(path, "wb");
  if (!f) return 1;
  const int32_t np = L->nparams, ns = L->nscalars;
  const int64_t nt = L->ntraj;
  const uint64_t fp = L->fingerprint;
  unsigned char buf[1024], *p = buf;
  memcpy(p, "MBSJRNL2", 8);
  p += 8;
  PUT(p, fp);
  PUT(p, np);
  PUT(p, nt);
  PUT(p, ns);
  fwrite(buf, 1, (size_t)(p - buf), f);
  double params[4], traj[8], scalars[4];
  for (int i = 0; i < nrec; i++) {
    mbs_journal_record r;
    fill_record(&r, i, params, traj, scalars);
    const uint32_t msglen = (uint32_t)strlen(r.message);
    unsigned char* payload = buf + 12;
    p = payload;
    const int64_t index = r.index, steps = r.steps;
    const int32_t status = r.status, frames = r.frames;
    PUT(p, index);
    PUT(p, status);
    PUT(p, frames);
    PUT(p, r.wall);
    PUT(p, steps);
    PUT(p, msglen);
    memcpy(p, r.message, msglen);
    p += msglen;
    memcpy(p, params, 8 * (size_t)np);
    p += 8 * (size_t)np;
    memcpy(p, traj, 8 * (size_t)nt);
    p += 8 * (size_t)nt;
    memcpy(p, scalars, 8 * (size_t)ns);
    p += 8 * (size_t)ns;
    const size_t n = (size_t)(p - payload);
    const uint32_t crc = mbs_journal_checksum(payload, n);
    PUT(p, crc);
    const uint64_t len = n + 4;
    memcpy(buf, "MBSR", 4);
    memcpy(buf + 4, &len, 8);
    fwrite(buf, 1, (size_t)(p - buf), f);
  }
  return fclose(f) != 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FOLDER (writes seed journals into it)\n", argv[0]);
    return 2;
  }
  char p[4096];
  const mbs_journal_layout a = {0x1234567890abcdefull, 2, 6, 1};
  const mbs_journal_layout b = {42, 0, 0, 0};
  const mbs_journal_layout c = {7, 4, 8, 4};
  int rc = 0;
  snprintf(p, sizeof(p), "%s/three_records.bin", argv[1]);
  rc |= write_journal(p, &a, 3, 0);
  snprintf(p, sizeof(p), "%s/empty_layout.bin", argv[1]);
  rc |= write_journal(p, &b, 2, 0);
  snprintf(p, sizeof(p), "%s/torn_last_record.bin", argv[1]);
  rc |= write_journal(p, &c, 2, 1);
  snprintf(p, sizeof(p), "%s/damaged_middle_record.bin", argv[1]);
  rc |= write_journal(p, &a, 3, 2);
  snprintf(p, sizeof(p), "%s/header_only.bin", argv[1]);
  rc |= write_journal(p, &a, 0, 0);
  snprintf(p, sizeof(p), "%s/format2.bin", argv[1]);
  rc |= write_journal_v2(p, &a, 2);
  return rc;
}

#endif
