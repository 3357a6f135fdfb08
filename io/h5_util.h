// HDF5 helpers shared by the files of io/ that read and write HDF5 (store.c, posture_table.c);
// not part of the public API. HDF5 never prints: callers turn automatic error printing off
// (mbs_h5_quiet_begin) while they work, and a failing call becomes an MBS_ERR_IO status whose
// message names the file, what was being done and the innermost HDF5 error (mbs_h5_fail).
#ifndef MBS_IO_H5_UTIL_H_
#define MBS_IO_H5_UTIL_H_

#include <hdf5.h>
#include <stddef.h>

#include "mbs/status.h"

// HDF5's automatic error printing as it was before mbs_h5_quiet_begin
typedef struct mbs_h5_quiet {
  H5E_auto2_t func;
  void* data;
} mbs_h5_quiet;

// turn HDF5's error printing off; mbs_h5_quiet_end puts it back as it was
mbs_h5_quiet mbs_h5_quiet_begin(void);
void mbs_h5_quiet_end(mbs_h5_quiet q);

// Turn the HDF5 error stack (read before any other HDF5 call clears it) into an MBS_ERR_IO
// status "<path>: cannot <what>: <innermost HDF5 error> (HDF5 <api function>)", `what` from
// fmt; returns MBS_ERR_IO.
int mbs_h5_fail(mbs_error* err, const char* path, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// In a function with `int rc`, `mbs_error* err`, `const char* path` and a label `done`:
// H5TRY(call, what...) fails with mbs_h5_fail when the call returns a negative value, NOMEM(ptr)
// with "<path>: out of memory" when ptr is NULL; both then go to `done`.
#define H5TRY(call, ...)                         \
  do {                                           \
    if ((call) < 0) {                            \
      rc = mbs_h5_fail(err, path, __VA_ARGS__);  \
      goto done;                                 \
    }                                            \
  } while (0)

#define NOMEM(ptr)                                                                      \
  do {                                                                                  \
    if (!(ptr)) {                                                                       \
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);           \
      goto done;                                                                        \
    }                                                                                   \
  } while (0)

// Dataset names found by mbs_h5_list_datasets (malloc'ed; free with mbs_h5_free_names).
typedef struct mbs_h5_names {
  char** v;
  long n, cap;
  int nomem;  // the walk stopped for want of memory
} mbs_h5_names;

// append the datasets below `g` to *l: their paths relative to g, after `prefix` (e.g. "/" for
// the root), in name order, each object once. Negative when the walk failed (l->nomem: out of
// memory); what it found before stays in *l.
herr_t mbs_h5_list_datasets(hid_t g, const char* prefix, mbs_h5_names* l);
void mbs_h5_free_names(mbs_h5_names* l);

// close *id with fn (H5Dclose, H5Sclose, ...) when it is open; *id becomes -1
void mbs_h5_close(hid_t* id, herr_t (*fn)(hid_t));

// fixed-length, NUL-padded UTF-8 string type of `width` bytes (at least 1); -1 on error
hid_t mbs_h5_str_type(size_t width);

// a variable-length UTF-8 string type (h5py reads such strings as str)
hid_t mbs_h5_vlen_str_type(void);

// the string attribute `key` of `loc` set to `value` (NULL: ""), replacing one that exists:
// fixed-length (h5py gives bytes) ...
int mbs_h5_attr_string(const char* path, mbs_error* err, hid_t loc, const char* key,
                       const char* value);
// ... or variable-length UTF-8 (h5py gives str), as units are stored
int mbs_h5_attr_utf8(const char* path, mbs_error* err, hid_t loc, const char* key,
                     const char* value);

// a scalar dataset `name` in `loc` holding `text` as a variable-length UTF-8 string (h5py:
// .asstr()[()] gives it as str)
int mbs_h5_write_text(const char* path, mbs_error* err, hid_t loc, const char* name,
                      const char* text);
// the text of such a dataset (malloc'ed), or NULL when it is absent or unreadable
char* mbs_h5_read_text(hid_t loc, const char* name);

#endif  // MBS_IO_H5_UTIL_H_
