// Journals: the files in which each thread appends the samples it completes, so that a study
// stopped at any moment loses at most what was not yet flushed, and resumes.
//
// A journal starts with a header (magic "MBSJRNL2", the study's fingerprint, the record
// layout) and holds records: magic, length, then the sample index, status, frames done, wall
// time, steps, the message, parameters, trajectory values, scalars, and a checksum of all of
// it. A record cut short by a crash fails its length or checksum and is ignored, so are all bytes
// after it. Within a journal, records are in increasing sample order.
#ifndef MBS_STUDIES_JOURNAL_H_
#define MBS_STUDIES_JOURNAL_H_

#include <stdint.h>
#include <stdio.h>

#include "mbs/status.h"

typedef struct mbs_journal_layout {
  uint64_t fingerprint;  // of the spec and the model: journals of another study are refused
  int nparams;
  long ntraj;            // trajectory values per sample
  int nscalars;
} mbs_journal_layout;

typedef struct mbs_journal_record {
  long index;
  int status;
  int frames;
  double wall;
  long steps;
  char message[512];
  double* params;        // nparams (buffers owned by the caller when writing; by the reader
  double* traj;          // when reading)
  double* scalars;
} mbs_journal_record;

// writing
typedef struct mbs_journal_writer mbs_journal_writer;
mbs_journal_writer* mbs_journal_create(const char* path, const mbs_journal_layout* L,
                                       mbs_error* err);
int mbs_journal_append(mbs_journal_writer* w, const mbs_journal_record* r, mbs_error* err);
// flush to the operating system and to disk (fsync)
int mbs_journal_sync(mbs_journal_writer* w, mbs_error* err);
int mbs_journal_close(mbs_journal_writer* w, mbs_error* err);

// reading: records one by one; next returns 1 with a record, 0 when no whole valid record
// follows (the end, or a journal still being written: the reader stays where the record
// starts, so a later call can read it once it is complete)
typedef struct mbs_journal_reader mbs_journal_reader;
// (L NULL: a journal of any study, read with its own layout)
mbs_journal_reader* mbs_journal_open(const char* path, const mbs_journal_layout* L,
                                     mbs_error* err);
int mbs_journal_next(mbs_journal_reader* r, mbs_journal_record* out);
void mbs_journal_close_reader(mbs_journal_reader* r);

// The journal folder `<output>.parts/`: journals are named j<attempt>-r<rank>-t<thread>.bin.
// The journal files of a folder, sorted by name (a missing folder: none); *max_attempt is the
// largest attempt number found (-1: none). Free the list with mbs_journal_free_list.
int mbs_journal_list(const char* dir, char*** out, int* n, int* max_attempt);
void mbs_journal_free_list(char** v, int n);
// The samples recorded in a folder's journals, of any study (each sample once; records of
// indices >= nsamples ignored when nsamples > 0): *done, *failed; the first failure's index
// and message (index -1 without). With `recent_since` > 0, *recent counts the records of the
// journals of the highest attempt modified since then (a running job's own). 0, or -1 when the
// folder cannot be read.
int mbs_journal_count(const char* dir, long nsamples, long* done, long* failed,
                      long* first_failed, char* message, size_t message_size, long recent_since,
                      long* recent);
// remove a folder's journals and the folder (start over)
void mbs_journal_clear_dir(const char* dir);

// the 32-bit checksum of a record's payload
uint32_t mbs_journal_checksum(const void* data, size_t n);

#endif  // MBS_STUDIES_JOURNAL_H_
