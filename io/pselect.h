// Exact percentiles of many columns in memory independent of the number of rows.
//
// The rows are fed in passes (the caller reads its data again for each pass): the first pass
// finds each column's count and range; then every order statistic the percentiles need is
// narrowed by 256-bin histograms over an order-preserving 64-bit key of the values (8 bits of
// the key range per pass, so that integer arithmetic alone decides which bin a value is in),
// and once its bin holds at most `cap` values they are gathered and the statistic read off. A
// column whose values are all equal is done after the first pass. The results are the exact
// order statistics, combined as numpy's default ("linear") percentile: the same bits as a full
// sort. NaN values are skipped. Memory: 24 bytes per column and target bookkeeping, plus at
// most `budget` bytes of histograms and gathered values per pass (nodes beyond it wait for the
// next pass). Passes: about 2 + log_256(rows / cap) for smooth data.
#ifndef MBS_IO_PSELECT_H
#define MBS_IO_PSELECT_H

#include <stddef.h>

typedef struct mbs_pselect mbs_pselect;

// ncols columns, npct levels in percent (0..100); cap: values gathered per statistic at most
// (0: 128); budget: bytes of histograms and gathered values per pass (0: 8 MiB). NULL when out
// of memory.
mbs_pselect* mbs_pselect_create(long ncols, const double* pct, int npct, long cap, size_t budget);
void mbs_pselect_free(mbs_pselect* s);

// 1: the caller must feed every row once more (then call mbs_pselect_end_pass); 0: done.
// -1: out of memory.
int mbs_pselect_begin_pass(mbs_pselect* s);
// one row of ncols values (v[j * stride] is column j)
void mbs_pselect_row(mbs_pselect* s, const double* v, size_t stride);
// after the rows of a pass: -1 when out of memory
int mbs_pselect_end_pass(mbs_pselect* s);
// the percentiles once begin_pass returned 0: out[l * out_stride + j] for level l, column j
// (NaN for a column without values)
void mbs_pselect_result(const mbs_pselect* s, double* out, size_t out_stride);
// passes made so far
int mbs_pselect_passes(const mbs_pselect* s);

#endif
