// OpenSim storage (.sto) writer, version 1 header:
//   <name>
//   version=1
//   nRows=<rows>
//   nColumns=<columns>
//   inDegrees=yes|no
//   endheader
//   <tab-separated labels>
//   <tab-separated rows>
// The row count is written as a fixed-width field and patched on close, so rows stream to disk.
#include "mbs/sto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mbs_sto_writer {
  FILE* f;
  char* path;
  int ncol;
  long rows;
  long rows_field;  // file offset of the row count digits
};

#define ROWS_WIDTH 12

mbs_sto_writer* mbs_sto_open(const char* path, const char* name, int ncol,
                             const char* const* labels, int in_degrees, mbs_error* err) {
  if (!path || ncol < 1 || !labels) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, path ? path : "", "sto: bad arguments for '%s'",
             path ? path : "(null)");
    return NULL;
  }
  mbs_sto_writer* w = calloc(1, sizeof(*w));
  if (!w) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  w->f = fopen(path, "w");
  if (!w->f) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create file: %s", path, strerror(errno));
    free(w);
    return NULL;
  }
  w->path = strdup(path);
  w->ncol = ncol;
  fprintf(w->f, "%s\nversion=1\nnRows=", name && *name ? name : "mbstudy");
  w->rows_field = ftell(w->f);
  fprintf(w->f, "%0*d\nnColumns=%d\ninDegrees=%s\nendheader\n", ROWS_WIDTH, 0, ncol,
          in_degrees ? "yes" : "no");
  for (int i = 0; i < ncol; i++) fprintf(w->f, "%s%s", i ? "\t" : "", labels[i]);
  fputc('\n', w->f);
  if (ferror(w->f)) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s: write failed: %s", path, strerror(errno));
    fclose(w->f);
    free(w->path);
    free(w);
    return NULL;
  }
  return w;
}

// the shortest of 15, 16 or 17 significant digits that reads back as the same double
static void put_double(FILE* f, double x) {
  char buf[40];
  for (int digits = 15; digits < 17; digits++) {
    snprintf(buf, sizeof(buf), "%.*g", digits, x);
    if (strtod(buf, NULL) == x) {
      fputs(buf, f);
      return;
    }
  }
  fprintf(f, "%.17g", x);
}

int mbs_sto_write_row(mbs_sto_writer* w, const double* row, mbs_error* err) {
  for (int i = 0; i < w->ncol; i++) {
    if (i) fputc('\t', w->f);
    put_double(w->f, row[i]);
  }
  fputc('\n', w->f);
  if (ferror(w->f))
    return MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: write failed: %s", w->path, strerror(errno));
  w->rows++;
  return MBS_OK;
}

int mbs_sto_close(mbs_sto_writer* w, mbs_error* err) {
  if (!w) return MBS_ERR_ARGUMENT;
  int rc = MBS_OK;
  if (fseek(w->f, w->rows_field, SEEK_SET) == 0) {
    fprintf(w->f, "%0*ld", ROWS_WIDTH, w->rows);
  } else {
    rc = MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: cannot update the row count: %s", w->path,
                  strerror(errno));
  }
  if (fclose(w->f) != 0 && rc == MBS_OK)
    rc = MBS_FAIL(err, MBS_ERR_IO, w->path, "%s: close failed: %s", w->path, strerror(errno));
  free(w->path);
  free(w);
  return rc;
}
