// `mbstudy verify FILE.h5`: a study's result file read in full (every chunk's checksum checked
// by HDF5 on the way) and its sample bookkeeping checked against io/FORMAT.md.
#ifndef MBS_JOBS_VERIFY_CMD_H_
#define MBS_JOBS_VERIFY_CMD_H_

#include <stddef.h>

// argv starts after the command name; exit status 0 whole, 1 damaged or unreadable, 2 usage
int mbs_cmd_verify(int argc, char** argv);

// Why the HDF5 read that just failed could not read: "checksum mismatch (the file is damaged)"
// when a checksum did not match (a chunk's Fletcher32, or the file's metadata), else "cannot be
// read (the file is damaged or truncated): <innermost HDF5 error>". Call it right after the
// failing call, before any other HDF5 call: it reads HDF5's error stack, then clears it.
// Returns out.
const char* mbs_h5_read_problem(char* out, size_t n);

#endif  // MBS_JOBS_VERIFY_CMD_H_
