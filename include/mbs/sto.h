// Writing OpenSim storage files (.sto, version 1 header): a time column and named columns.
// Rows are streamed to disk as they come; the row count in the header is filled in on close.
#ifndef MBS_STO_H_
#define MBS_STO_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_sto_writer mbs_sto_writer;

// Create (or overwrite) `path` with the given table name and column labels (the first label is
// usually "time"). in_degrees says whether angles are written in degrees. NULL on failure, with
// the reason in err.
mbs_sto_writer* mbs_sto_open(const char* path, const char* name, int ncol,
                             const char* const* labels, int in_degrees, mbs_error* err);
// append one row of ncol numbers
int mbs_sto_write_row(mbs_sto_writer* w, const double* row, mbs_error* err);
// finish the header and close; frees w even on error
int mbs_sto_close(mbs_sto_writer* w, mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_STO_H_
