// A study type's own results in the study file: after the samples are in (include/mbs/store.h),
// a driver opens the complete file, reads what it needs (scalars, trajectories) and adds its
// group (/sensitivity, /fit, /calibration) with the same conventions as the rest of the file
// (io/FORMAT.md): float64 datasets with a `units` attribute where they have units, fixed-length
// UTF-8 strings, dimension scales with labels on named axes, no timestamps.
#ifndef MBS_RESULTS_H_
#define MBS_RESULTS_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_results mbs_results;

// Open the study file `path` for reading and writing. NULL with err filled on failure.
mbs_results* mbs_results_open(const char* path, mbs_error* err);
// Open a study file (or any HDF5 file) for reading only.
mbs_results* mbs_results_open_read(const char* path, mbs_error* err);
// Flush and close; frees r even on error.
int mbs_results_close(mbs_results* r, mbs_error* err);

// Make the group `name` (e.g. "sensitivity" or "sensitivity/scalars/y"), with the groups on its
// way; an existing group of that name is removed first when `replace`.
int mbs_results_group(mbs_results* r, const char* name, int replace, mbs_error* err);

// A float64 dataset of `rank` dimensions (rank 0: a scalar) at `name` (a path from the root,
// its group made when missing), with attribute `units` when units is not NULL.
int mbs_results_write(mbs_results* r, const char* name, int rank, const long* dims,
                      const double* data, const char* units, mbs_error* err);
// An int64 dataset, as mbs_results_write.
int mbs_results_write_int(mbs_results* r, const char* name, int rank, const long* dims,
                          const long* data, mbs_error* err);
// A one-dimensional dataset of n strings; with `scale`, a dimension scale named after its last
// path segment.
int mbs_results_strings(mbs_results* r, const char* name, int n, const char* const* v,
                        int scale, mbs_error* err);
// Attach the dimension scale `scale` (a path) to axis `axis` of dataset `name`, labelled.
int mbs_results_attach(mbs_results* r, const char* name, int axis, const char* scale,
                       const char* label, mbs_error* err);
// A string attribute of the object at `name` ("/" or a group or dataset path).
int mbs_results_attribute(mbs_results* r, const char* name, const char* key, const char* value,
                          mbs_error* err);

// Read the float64 dataset `name` whole: *out (free it) holds the values in C order, dims[]
// (up to 4) its shape, *rank its rank.
int mbs_results_read(mbs_results* r, const char* name, double** out, long* dims, int* rank,
                     mbs_error* err);
// Read a block of a 3-dimensional dataset (samples × frames × components, as
// /trajectories/<q>): the frames [f0, f0 + nf) of every sample, into out (samples × nf × C).
int mbs_results_read_frames(mbs_results* r, const char* name, long f0, long nf, double* out,
                            mbs_error* err);
// Read a one-dimensional dataset of fixed-length strings: *out a NULL-terminated array of *n
// new strings (free each and the array).
int mbs_results_read_strings(mbs_results* r, const char* name, char*** out, int* n,
                             mbs_error* err);
// Read the string attribute `key` (fixed- or variable-length) of the object at `name` ("/" or a
// group or dataset path): *out a new string (free it), NULL when the object has no such attribute.
int mbs_results_read_attribute(mbs_results* r, const char* name, const char* key, char** out,
                               mbs_error* err);
// Move the object `from` (a group or dataset) to `to` (its groups made when missing; an object
// there is replaced).
int mbs_results_move(mbs_results* r, const char* from, const char* to, mbs_error* err);
// Whether the object `name` exists.
int mbs_results_exists(mbs_results* r, const char* name);

#ifdef __cplusplus
}
#endif

#endif  // MBS_RESULTS_H_
