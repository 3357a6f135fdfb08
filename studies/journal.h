// Journals: the files in which each thread appends the samples it completes, so that a study
// stopped at any moment loses at most what was not yet flushed, and resumes.
//
// A journal starts with a header of 32 bytes (magic "MBSJRNL3", the study's fingerprint, the
// record layout) and holds records, each framed so that a reader finds the next one after
// damage: an 8-byte record magic, the payload's length (8 bytes), a checksum of these 16 bytes
// (4), the payload (the sample index, status, frames done, wall time, steps, the message,
// parameters, trajectory values, scalars) and a checksum of the payload (4). A record cut short
// by a crash (the end of a journal) fails its length and is ignored with what follows it; a
// damaged record (a bad magic, header checksum, length or checksum) is skipped: the reader
// looks byte by byte for the next record magic whose header and payload check out and goes on
// from there, counting the damaged records (mbs_journal_damaged). The layout fixes a record's
// size up to its message (at most 511 bytes), so a length outside that range is damage too.
// Journals of format 2 ("MBSJRNL2", a 4-byte record magic, the length, no header checksum)
// are read as well. Within a journal, records are in increasing sample order.
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

// writing; every record is handed to the operating system at once (one write). A failed
// write (a full disk, a file size limit) leaves the journal as it was before the record (the
// partial record is cut off) and makes the writer refuse further records: append, sync and
// close then return MBS_ERR_IO with a message naming the file and the system's reason.
typedef struct mbs_journal_writer mbs_journal_writer;
mbs_journal_writer* mbs_journal_create(const char* path, const mbs_journal_layout* L,
                                       mbs_error* err);
int mbs_journal_append(mbs_journal_writer* w, const mbs_journal_record* r, mbs_error* err);
// flush to the operating system and to disk (fsync)
int mbs_journal_sync(mbs_journal_writer* w, mbs_error* err);
int mbs_journal_close(mbs_journal_writer* w, mbs_error* err);

// reading: records one by one; next returns 1 with a record, 0 when no whole valid record
// follows (the end, or a journal still being written: the reader stays where the record
// starts, so a later call can read it once it is complete). Damaged records are skipped
// (counted by mbs_journal_damaged) unless resynchronizing is turned off.
typedef struct mbs_journal_reader mbs_journal_reader;
// (L NULL: a journal of any study, read with its own layout). Errors: MBS_ERR_PARSE for a file
// that is not a journal or is cut short in its header (mbs_journal_header_cut_short tells),
// or one of another format version; MBS_ERR_ARGUMENT for a journal of another study.
mbs_journal_reader* mbs_journal_open(const char* path, const mbs_journal_layout* L,
                                     mbs_error* err);
int mbs_journal_next(mbs_journal_reader* r, mbs_journal_record* out);
// the damaged records skipped so far
long mbs_journal_damaged(const mbs_journal_reader* r);
// on (the default): skip damaged records. Off: stop at one as at the end (a journal still being
// written on a file system that may show its pages out of order: the record may be whole
// later); turned on again, the reader looks at it once more.
void mbs_journal_set_resync(mbs_journal_reader* r, int on);
void mbs_journal_close_reader(mbs_journal_reader* r);

// 1 when the file at path is shorter than a journal's header (a journal whose creation was cut
// short by a full disk or a crash: it holds no sample), 0 otherwise (or when it cannot be read)
int mbs_journal_header_cut_short(const char* path);
// set such a journal aside: renamed to <path>.damaged (<path>.damaged2, ... if taken), which
// mbs_journal_list does not list; the new name in *moved_to (malloc'ed; may be NULL)
int mbs_journal_set_aside(const char* path, char** moved_to, mbs_error* err);

// bytes in the journal (its header and whole records)
long mbs_journal_bytes(const mbs_journal_writer* w);
// The journal folder `<output>.parts/`: journals are named j<attempt>-r<rank>-t<thread>.bin
// (j<attempt>-p<part>-r<rank>-t<thread>.bin in an array job's part). A thread whose journal
// grows past execution.journal_segment closes it and goes on in its next segment, named with
// "-s<segment>" before ".bin" (1, 2, ...); a segment whose successor exists is complete.
// The path of a journal's segment `segment` (>= 1; malloc'ed; NULL for a name that is not a
// journal's)
char* mbs_journal_segment_path(const char* path, int segment);
// the path of the segment after the journal at `path` (malloc'ed; NULL as above)
char* mbs_journal_next_segment(const char* path);
// The journal files of a folder, sorted by name (a missing folder: none; journals set aside
// not listed); *max_attempt is the largest attempt number found, set-aside journals' included
// (-1: none). Free the list with mbs_journal_free_list.
int mbs_journal_list(const char* dir, char*** out, int* n, int* max_attempt);
void mbs_journal_free_list(char** v, int n);
// The samples recorded in a folder's journals and its merged mark, of any study (each sample
// once; records of indices >= nsamples ignored when nsamples > 0): *done, *failed; the first
// failure's index and message (index -1 without). With `recent_since` > 0, *recent counts the
// records of the journals of the highest attempt modified since then (a running job's own).
// 0, or -1 when the folder cannot be read.
int mbs_journal_count(const char* dir, long nsamples, long* done, long* failed,
                      long* first_failed, char* message, size_t message_size, long recent_since,
                      long* recent);
// The merged mark `<parts>/merged`: the samples 0 .. samples-1 are in <parts>/result.h5 and
// synced to disk, so their journals may be deleted (a text file: the study's fingerprint, the
// count, the failed samples among them, the first failed one and its message). Written beside
// and renamed into place (whole or not at all).
typedef struct mbs_journal_merged {
  uint64_t fingerprint;
  long samples;
  long failed;
  long first_failed;   // -1: none
  char message[512];
} mbs_journal_merged;
int mbs_journal_write_merged(const char* dir, const mbs_journal_merged* m, mbs_error* err);
// 1 with a valid mark, 0 without one
int mbs_journal_read_merged(const char* dir, mbs_journal_merged* m);
void mbs_journal_remove_merged(const char* dir);
// remove a folder's journals (those set aside too) and the folder (start over)
void mbs_journal_clear_dir(const char* dir);

// the 32-bit checksum of a record's payload
uint32_t mbs_journal_checksum(const void* data, size_t n);

#endif  // MBS_STUDIES_JOURNAL_H_
