// The study result file: one self-describing HDF5 file per study (layout in io/FORMAT.md).
//
// A writer creates the file with the study's layout, then receives the samples in increasing
// sample order (each exactly once) and closes it. Trajectories are chunked by groups of
// samples and compressed; the writer buffers one chunk's worth of samples, so its memory does
// not grow with the number of samples. Statistics across samples (count, mean, standard
// deviation per frame and component, in sample order: reproducible bit for bit) accumulate as
// samples arrive; percentiles are computed at close by reading the trajectories back in blocks
// of frames. Failed samples are stored with their status and NaN trajectories and take no part
// in the statistics.
#ifndef MBS_STORE_H_
#define MBS_STORE_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_store mbs_store;

// A trajectory quantity: frames x components per sample, e.g. "q" with one component per
// coordinate, "com" with x, y, z, "bodies/rod2/position".
typedef struct mbs_store_quantity {
  const char* name;                  // dataset name under /trajectories (may contain '/')
  int ncomp;
  const char* const* components;     // component names (for the dimension scale)
  const char* unit;                  // e.g. "rad or m", "m", "N"
  const char* const* component_units;  // each component's unit (attribute "units" of the
                                       // component scale), or NULL when `unit` says it all
} mbs_store_quantity;

typedef struct mbs_store_attribute {
  const char* key;
  const char* value;
} mbs_store_attribute;

typedef struct mbs_store_layout {
  long nsamples;
  int nparams;
  const char* const* param_names;    // e.g. "/bodyset/rod1/mass"
  const char* const* param_units;
  int nframes;
  const double* times;               // the time axis, s (nframes)
  int nquantities;
  const mbs_store_quantity* quantities;
  int nscalars;
  const char* const* scalar_names;
  const char* const* scalar_units;
  int npercentiles;                  // e.g. 5, 25, 50, 75, 95
  const double* percentiles;
  int nattributes;                   // provenance: written as root attributes
  const mbs_store_attribute* attributes;
  int samples_per_chunk;             // 0: chosen so a chunk holds about 256 KiB
  const char* time_units;            // units of the time axis; NULL: "s"
  // the OpenSim document the study simulated when no file the user gave holds it (a posture
  // study's model on its platform), written as /model/document (variable-length UTF-8 string,
  // attribute `format` = "OpenSim 4 .osim"); NULL: none
  const char* model_document;
  // trajectory bytes between two checkpoints at most (mbs_store_sync): the per-sample chunks
  // are sized so that a checkpoint comes at least this often; 0: 64 MiB
  long checkpoint_bytes;
} mbs_store_layout;

// Create `path` (refusing to replace an existing file unless `force`). NULL on failure.
mbs_store* mbs_store_create(const char* path, const mbs_store_layout* layout, int force,
                            mbs_error* err);

// One sample's results. `traj[k]` holds quantity k as nframes_done x ncomp values (frames
// after a sample ended early, e.g. at a terminating event or a failure, are stored as NaN).
typedef struct mbs_store_sample {
  long index;
  const double* params;              // nparams
  int status;                        // an mbs_status; 0 = ok
  const char* message;               // "" when ok
  double wall_time;                  // s
  long steps;
  int nframes_done;
  const double* const* traj;         // nquantities pointers
  const double* scalars;             // nscalars
} mbs_store_sample;

// Samples must come in increasing index order.
int mbs_store_write_sample(mbs_store* s, const mbs_store_sample* sample, mbs_error* err);

// End the sample axis at n samples (n > the last index written, n <= the layout's nsamples):
// a study whose sample count is known only at its end (an iterative driver) creates the file
// with an upper bound and shortens it before closing. Unwritten chunks take no space.
int mbs_store_truncate(mbs_store* s, long n, mbs_error* err);

// Provenance known only at the end (end time, failure counts): more root attributes.
int mbs_store_set_attribute(mbs_store* s, const char* key, const char* value, mbs_error* err);

// Flush the last chunk, write the statistics and close; frees s even on error.
int mbs_store_close(mbs_store* s, mbs_error* err);

// Close without flushing the last chunk or writing statistics (the file is incomplete and
// should be removed by the caller); frees s.
void mbs_store_discard(mbs_store* s);

// Checkpoints: the file as the durable record of the samples written so far.
//
// Samples per checkpoint: every durable count is a multiple of it (or S). Every per-sample
// chunk length and the trajectories' samples per chunk divide it, so no chunk holding a sample
// below a checkpoint is written again after it (see io/FORMAT.md).
long mbs_store_checkpoint_samples(const mbs_store* s);

// Make the samples written so far durable up to D, the largest multiple of the checkpoint with
// every sample below it in the file (S once the last sample, index S - 1, has arrived: its
// block is written then): when D exceeds the durable count, flush the file and fsync it (and
// its folder the first time). A process killed after this leaves a file that
// mbs_store_reopen continues from *durable, which receives the durable count (0 before the
// first checkpoint). Cheap when the count does not change. A failure leaves the store refusing
// further samples, as a failed write does.
int mbs_store_sync(mbs_store* s, long* durable, mbs_error* err);

// What mbs_store_reopen found in the samples it kept.
typedef struct mbs_store_prefix {
  long failed;              // samples with status != 0
  long first_failed;        // the lowest index of those, -1 when none
  char first_message[512];  // its message
} mbs_store_prefix;

// Continue a file that mbs_store_create made with the same layout (the same nsamples, nparams,
// nframes, quantities and scalars, or an error naming the file) and whose samples 0 .. n-1 were
// written and made durable by mbs_store_sync (n a multiple of the checkpoint, or S; n >= 1).
// Those samples are read back in blocks of a trajectory chunk, which checks them: an unreadable
// chunk (a checksum mismatch) or a sample below n never written fails with an error naming the
// file and the dataset, and the file is left as it was. The statistics are rebuilt from them,
// what the file held from sample n on is dropped, the layout's root attributes are written again
// (and "incomplete" and "merged_samples" removed, with the statistics of an earlier close);
// writing goes on with sample n, and mbs_store_close then gives the datasets an uninterrupted
// writer would have. `info` (may be NULL) receives the failed samples below n. NULL on failure.
mbs_store* mbs_store_reopen(const char* path, const mbs_store_layout* layout, long n,
                            mbs_store_prefix* info, mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_STORE_H_
