// `mbstudy verify FILE.h5` (layout in io/FORMAT.md). Every dataset of the file, found with
// H5Ovisit, is read in full: a chunked one chunk by chunk (HDF5 checks each chunk's Fletcher32
// checksum as it reads it, and refuses a chunk whose checksum does not match), a contiguous one
// in blocks of at most 4 MiB, so memory stays bounded whatever the file's size. Then the sample
// bookkeeping the format guarantees is checked: /samples is 0 .. S-1; every per-sample axis has
// S entries (and a trajectory's frames and components those of /time and its component scale);
// /status/done is 0 or 1, and a sample never written (done 0) keeps status 0; the root
// attributes `samples`, `failed_samples` and `merged_samples` agree with /samples and /status;
// /statistics' `samples_used` does not exceed the samples written with status 0, and no count in
// /statistics exceeds it. One line per problem, then a summary; exit 0 whole, 1 not.
#include "verify_cmd.h"

#include <hdf5.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/h5_util.h"

#define BLOCK_BYTES (4L * 1024 * 1024)  // a contiguous dataset is read in blocks of this size
#define MAX_LINES 10                    // damaged blocks named per dataset
#define MAX_NAMED 5                     // damaged datasets named in the summary

// ------------------------------------------------------------------------------------------
// why a read failed

typedef struct stack_walk {
  char inner[256];
  int checksum;
} stack_walk;

static herr_t stack_cb(unsigned n, const H5E_error2_t* e, void* data) {
  (void)n;
  stack_walk* w = data;
  if (e->desc && *e->desc) {
    snprintf(w->inner, sizeof w->inner, "%s", e->desc);  // downward: the last is the innermost
    if (strstr(e->desc, "checksum") || strstr(e->desc, "Fletcher32")) w->checksum = 1;
  }
  return 0;
}

const char* mbs_h5_read_problem(char* out, size_t n) {
  stack_walk w;
  memset(&w, 0, sizeof w);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, stack_cb, &w);
  H5Eclear2(H5E_DEFAULT);
  if (w.checksum)
    snprintf(out, n, "checksum mismatch (the file is damaged)");
  else if (w.inner[0])
    snprintf(out, n, "cannot be read (the file is damaged or truncated): %s", w.inner);
  else
    snprintf(out, n, "cannot be read (the file is damaged or truncated)");
  return out;
}

// ------------------------------------------------------------------------------------------
// the file's datasets

static int has_name(const mbs_h5_names* l, const char* name) {
  for (long i = 0; i < l->n; i++)
    if (!strcmp(l->v[i], name)) return 1;
  return 0;
}

// ------------------------------------------------------------------------------------------
// reading a dataset block by block

typedef struct reader reader;
// called with each block read (count[] elements from start[], C order); nonzero stops
typedef int (*block_fn)(reader* r, const void* buf, int rank, const hsize_t* start,
                        const hsize_t* count);

struct reader {
  const char* file;
  const char* name;
  int per_sample;  // axis 0 is the samples: name damaged blocks by their samples
  int quiet;       // print nothing (a dataset read again for the bookkeeping)
  long bad_blocks;
  unsigned long long values;
  block_fn fn;
  void* ctx;
};

static void block_problem(reader* r, int rank, const hsize_t* start, const hsize_t* count,
                          const char* what) {
  char why[400];
  mbs_h5_read_problem(why, sizeof why);  // first: any other HDF5 call clears the error stack
  r->bad_blocks++;
  if (r->quiet || r->bad_blocks > MAX_LINES) return;
  printf("%s: %s: %s%s", r->file, r->name, what, why);
  if (rank > 0 && r->per_sample) {
    printf(": samples %llu..%llu", (unsigned long long)start[0],
           (unsigned long long)(start[0] + count[0] - 1));
  } else if (rank > 0) {
    printf(": elements [");
    for (int i = 0; i < rank; i++)
      printf("%s%llu..%llu", i ? ", " : "", (unsigned long long)start[i],
             (unsigned long long)(start[i] + count[i] - 1));
    printf("]");
  }
  printf("\n");
}

static void reclaim(hid_t memtype, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(memtype, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(memtype, space, H5P_DEFAULT, buf);
#endif
}

// Read all of d as memtype: a chunked dataset chunk by chunk, another in blocks of at most
// BLOCK_BYTES (whole trailing axes, then part of the next). Returns 0 when every block was
// read, 1 when not (the damaged blocks named unless r->quiet).
static int read_dataset(hid_t d, hid_t memtype, reader* r) {
  hsize_t dims[H5S_MAX_RANK], block[H5S_MAX_RANK], pos[H5S_MAX_RANK], count[H5S_MAX_RANK];
  const hsize_t zero[H5S_MAX_RANK] = {0};
  hid_t fs = -1, ms = -1, dcpl = -1;
  void* buf = NULL;
  int rc = 0;
  if ((fs = H5Dget_space(d)) < 0) {
    block_problem(r, 0, zero, zero, "dataspace ");
    return 1;
  }
  const H5S_class_t cls = H5Sget_simple_extent_type(fs);
  const int rank = H5Sget_simple_extent_ndims(fs);
  if (cls == H5S_NULL) goto done;  // no values
  if (rank < 0 || rank > H5S_MAX_RANK || cls == H5S_NO_CLASS ||
      H5Sget_simple_extent_dims(fs, dims, NULL) < 0) {
    block_problem(r, 0, zero, zero, "dataspace ");
    rc = 1;
    goto done;
  }
  for (int i = 0; i < rank; i++)
    if (dims[i] == 0) goto done;
  const size_t esize = H5Tget_size(memtype);
  const int vlen = H5Tdetect_class(memtype, H5T_VLEN) > 0 || H5Tis_variable_str(memtype) > 0;
  H5Eclear2(H5E_DEFAULT);  // H5Tis_variable_str fails on a type that is not a string
  dcpl = H5Dget_create_plist(d);
  const int chunked = rank > 0 && dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
                      H5Pget_chunk(dcpl, rank, block) == rank;
  if (chunked) {
    for (int i = 0; i < rank; i++)
      if (block[i] > dims[i]) block[i] = dims[i];  // a dataset shortened below its chunk
  } else if (rank > 0) {
    const hsize_t maxel = esize && (hsize_t)BLOCK_BYTES / esize > 0 ? BLOCK_BYTES / esize : 1;
    hsize_t inner = 1;
    int k = rank;
    while (k > 0 && inner * dims[k - 1] <= maxel) {
      inner *= dims[k - 1];
      block[k - 1] = dims[k - 1];
      k--;
    }
    if (k > 0) {
      block[k - 1] = maxel / inner > 0 ? maxel / inner : 1;
      for (int i = 0; i < k - 1; i++) block[i] = 1;
    }
  }
  hsize_t nblock = 1;
  for (int i = 0; i < rank; i++) nblock *= block[i];
  buf = malloc((size_t)nblock * (esize ? esize : 1));
  if (!buf) {
    fprintf(stderr, "mbstudy verify: out of memory for a block of %s\n", r->name);
    rc = 1;
    goto done;
  }
  memset(pos, 0, sizeof pos);
  for (;;) {
    hsize_t n = 1;
    for (int i = 0; i < rank; i++) {
      count[i] = dims[i] - pos[i] < block[i] ? dims[i] - pos[i] : block[i];
      n *= count[i];
    }
    herr_t ok;
    if (rank == 0) {
      ok = H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    } else {
      ok = H5Sselect_hyperslab(fs, H5S_SELECT_SET, pos, NULL, count, NULL);
      if (ok >= 0) {
        ms = H5Screate_simple(rank, count, NULL);
        ok = ms < 0 ? -1 : H5Dread(d, memtype, ms, fs, H5P_DEFAULT, buf);
      }
    }
    if (ok < 0) {
      block_problem(r, rank, pos, count, "");
      rc = 1;
    } else {
      r->values += n;
      const int stop = r->fn && r->fn(r, buf, rank, pos, count);
      if (vlen) reclaim(memtype, rank ? ms : fs, buf);
      if (stop) break;
    }
    if (ms >= 0) H5Sclose(ms);
    ms = -1;
    int i = rank - 1;
    for (; i >= 0; i--) {  // the next block, last axis fastest
      pos[i] += block[i];
      if (pos[i] < dims[i]) break;
      pos[i] = 0;
    }
    if (i < 0) break;
  }
  if (!r->quiet && r->bad_blocks > MAX_LINES)
    printf("%s: %s: ... and %ld more damaged blocks\n", r->file, r->name,
           r->bad_blocks - MAX_LINES);
done:
  if (ms >= 0) H5Sclose(ms);
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Sclose(fs);
  free(buf);
  return rc;
}

static int has_checksum(hid_t d) {
  hid_t dcpl = H5Dget_create_plist(d);
  int yes = 0;
  const int n = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0;
  for (int i = 0; i < n && !yes; i++) {
    unsigned flags = 0, cd[8];
    size_t ncd = 8;
    yes = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL) ==
          H5Z_FILTER_FLETCHER32;
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  return yes;
}

// ------------------------------------------------------------------------------------------
// the sample bookkeeping

typedef struct book {
  const char* file;
  long problems;
  long S;            // /samples' length, -1 unknown
  uint8_t* done;     // S values of /status/done
  int done_read;     // done (and ndone) hold /status/done
  long ndone, nfail, nok;
  int counted;       // ndone, nfail and nok are known
  // a check's tally while a dataset is read
  long bad;
  long long first_at, first_value;
  long long limit;
} book;

static void problem(book* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(book* b, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s: ", b->file);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  b->problems++;
}

static void tally(book* b, long long at, long long value) {
  if (!b->bad) {
    b->first_at = at;
    b->first_value = value;
  }
  b->bad++;
}

static int check_samples(reader* r, const void* buf, int rank, const hsize_t* start,
                         const hsize_t* count) {
  (void)rank;
  book* b = r->ctx;
  const int64_t* v = buf;
  for (hsize_t i = 0; i < count[0]; i++)
    if (v[i] != (int64_t)(start[0] + i)) tally(b, (long long)(start[0] + i), v[i]);
  return 0;
}

static int keep_done(reader* r, const void* buf, int rank, const hsize_t* start,
                     const hsize_t* count) {
  (void)rank;
  book* b = r->ctx;
  const uint8_t* v = buf;
  memcpy(b->done + start[0], v, (size_t)count[0]);
  for (hsize_t i = 0; i < count[0]; i++)
    if (v[i] > 1) tally(b, (long long)(start[0] + i), v[i]);
  return 0;
}

static int check_code(reader* r, const void* buf, int rank, const hsize_t* start,
                      const hsize_t* count) {
  (void)rank;
  book* b = r->ctx;
  const int32_t* v = buf;
  for (hsize_t i = 0; i < count[0]; i++) {
    const uint8_t dn = b->done[start[0] + i];
    if (dn == 1) {
      b->nfail += v[i] != 0;
      b->nok += v[i] == 0;
    } else if (dn == 0 && v[i] != 0) {
      tally(b, (long long)(start[0] + i), v[i]);
    }
  }
  return 0;
}

static int check_count(reader* r, const void* buf, int rank, const hsize_t* start,
                       const hsize_t* count) {
  (void)start;
  book* b = r->ctx;
  const int64_t* v = buf;
  hsize_t n = 1;
  for (int i = 0; i < rank; i++) n *= count[i];
  for (hsize_t i = 0; i < n; i++)
    if (v[i] < 0 || v[i] > b->limit) tally(b, -1, v[i]);
  return 0;
}

// read dataset `name` quietly as memtype through fn; 0 when read whole
static int read_checked(hid_t f, const char* name, hid_t memtype, block_fn fn, book* b) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d < 0) {
    H5Eclear2(H5E_DEFAULT);
    return 1;
  }
  reader r = {b->file, name, 0, 1, 0, 0, fn, b};
  b->bad = 0;
  const int rc = read_dataset(d, memtype, &r);
  H5Dclose(d);
  return rc;
}

// the dimensions of dataset `name`: its rank, or -1 when it cannot be opened
static int dims_of(hid_t f, const char* name, hsize_t* dims) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  int rank = -1;
  if (d >= 0) {
    hid_t sp = H5Dget_space(d);
    if (sp >= 0) {
      rank = H5Sget_simple_extent_ndims(sp);
      if (rank > H5S_MAX_RANK || (rank > 0 && H5Sget_simple_extent_dims(sp, dims, NULL) < 0))
        rank = -1;
      H5Sclose(sp);
    }
    H5Dclose(d);
  }
  H5Eclear2(H5E_DEFAULT);
  return rank;
}

// a string attribute of an object (fixed-length or variable-length); "" if absent
static void attr_string(hid_t obj, const char* name, char* out, size_t n) {
  out[0] = 0;
  if (H5Aexists(obj, name) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return;
  }
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
  if (ft >= 0 && H5Tget_class(ft) == H5T_STRING) {
    hid_t mt = H5Tcopy(ft);
    if (H5Tis_variable_str(ft) > 0) {
      char* s = NULL;
      if (H5Aread(a, mt, &s) >= 0 && s) snprintf(out, n, "%s", s);
      if (s) H5free_memory(s);
    } else {
      const size_t len = H5Tget_size(ft);
      char* buf = calloc(len + 1, 1);
      if (buf && H5Aread(a, mt, buf) >= 0) snprintf(out, n, "%.*s", (int)len, buf);
      free(buf);
    }
    H5Tclose(mt);
  }
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  H5Eclear2(H5E_DEFAULT);
}

// a root attribute holding a count: 1 and *v when present and a whole number, 0 when absent,
// -1 when it is not a number
static int attr_count(hid_t f, const char* key, long long* v) {
  char s[64];
  attr_string(f, key, s, sizeof s);
  if (!s[0]) return 0;
  char* end = NULL;
  *v = strtoll(s, &end, 10);
  return end && end != s && *end == '\0' ? 1 : -1;
}

static int starts_with(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// a dataset whose axis 0 is the samples (rank: the dataset's, -1 unknown)
static int is_per_sample(const char* name, int rank) {
  return !strcmp(name, "/samples") || !strcmp(name, "/parameters") ||
         starts_with(name, "/status/") || starts_with(name, "/scalars/") ||
         (starts_with(name, "/trajectories/") && rank == 3);
}

static void check_bookkeeping(hid_t f, const mbs_h5_names* l, book* b) {
  static const char* const required[] = {
      "/samples", "/time", "/parameter_names", "/parameters", "/status/code",
      "/status/message", "/status/wall_time", "/status/steps", "/status/done"};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    if (!has_name(l, required[i])) problem(b, "%s is missing", required[i]);
  static const char* const groups[] = {"/trajectories", "/scalars", "/statistics"};
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
    if (H5Lexists(f, groups[i], H5P_DEFAULT) <= 0) problem(b, "group %s is missing", groups[i]);
  H5Eclear2(H5E_DEFAULT);

  // the sample axis and every per-sample dataset's length
  hsize_t dims[H5S_MAX_RANK];
  b->S = -1;
  if (has_name(l, "/samples")) {
    const int r = dims_of(f, "/samples", dims);
    if (r == 1)
      b->S = (long)dims[0];
    else if (r >= 0)
      problem(b, "/samples has %d axes, not 1", r);
  }
  long F = -1;
  if (has_name(l, "/time") && dims_of(f, "/time", dims) == 1) F = (long)dims[0];
  for (long i = 0; i < l->n && b->S >= 0; i++) {
    const char* name = l->v[i];
    const int r = dims_of(f, name, dims);
    if (r < 0 || !is_per_sample(name, r)) continue;
    if (r == 0 || (long)dims[0] != b->S) {
      problem(b, "%s has %lld samples, /samples %ld", name, r ? (long long)dims[0] : 0LL, b->S);
      continue;
    }
    if (r != 3) continue;  // a trajectory: frames as /time, components as its scale
    char comps[1200];
    hsize_t cd[H5S_MAX_RANK];
    snprintf(comps, sizeof comps, "%s_components", name);
    if (F >= 0 && (long)dims[1] != F)
      problem(b, "%s has %llu frames, /time %ld", name, (unsigned long long)dims[1], F);
    if (!has_name(l, comps))
      problem(b, "%s has no component names (%s is missing)", name, comps);
    else if (dims_of(f, comps, cd) != 1 || cd[0] != dims[2])
      problem(b, "%s has %llu components, %s does not name as many", name,
              (unsigned long long)dims[2], comps);
  }

  // /samples = 0 .. S-1; /status/done 0 or 1; never-written samples keep status 0
  if (b->S >= 0 && has_name(l, "/samples")) {
    if (read_checked(f, "/samples", H5T_NATIVE_INT64, check_samples, b) == 0 && b->bad)
      problem(b, "/samples: %ld value%s not %s index (first: /samples[%lld] = %lld)",
              b->bad, b->bad == 1 ? " is" : "s are", b->bad == 1 ? "its" : "their", b->first_at,
              b->first_value);
  }
  int done_ok = 0;
  if (b->S >= 0 && has_name(l, "/status/done") && dims_of(f, "/status/done", dims) == 1 &&
      (long)dims[0] == b->S) {
    b->done = malloc(b->S > 0 ? (size_t)b->S : 1);
    if (b->done && read_checked(f, "/status/done", H5T_NATIVE_UINT8, keep_done, b) == 0) {
      done_ok = b->done_read = 1;
      if (b->bad)
        problem(b, "/status/done: %ld value%s neither 0 nor 1 (first: sample %lld: %lld)",
                b->bad, b->bad == 1 ? " is" : "s are", b->first_at, b->first_value);
      for (long i = 0; i < b->S; i++) b->ndone += b->done[i] == 1;
    }
  }
  if (done_ok && has_name(l, "/status/code") && dims_of(f, "/status/code", dims) == 1 &&
      (long)dims[0] == b->S) {
    if (read_checked(f, "/status/code", H5T_NATIVE_INT32, check_code, b) == 0) {
      b->counted = 1;
      if (b->bad)
        problem(b, "/status/code: %ld sample%s never written (done = 0) %s a status (first: "
                "sample %lld: %lld)", b->bad, b->bad == 1 ? "" : "s", b->bad == 1 ? "has" : "have",
                b->first_at, b->first_value);
    } else {
      b->nfail = b->nok = 0;
    }
  }

  // the counts of the root attributes
  long long v = 0;
  int a = attr_count(f, "samples", &v);
  if (a < 0) problem(b, "the root attribute 'samples' is not a number");
  if (a > 0 && b->S >= 0 && v != b->S)
    problem(b, "the root attribute 'samples' is %lld, /samples holds %ld", v, b->S);
  a = attr_count(f, "failed_samples", &v);
  if (a < 0) problem(b, "the root attribute 'failed_samples' is not a number");
  if (a > 0 && b->counted && v != b->nfail)
    problem(b, "the root attribute 'failed_samples' is %lld, /status counts %ld failed "
            "samples", v, b->nfail);
  a = attr_count(f, "merged_samples", &v);
  if (a < 0) problem(b, "the root attribute 'merged_samples' is not a number");
  if (a > 0 && done_ok && v != b->ndone)
    problem(b, "the root attribute 'merged_samples' is %lld, /status/done counts %ld", v,
            b->ndone);

  // statistics: samples_used, and no count above it
  long long used = -1;
  if (H5Lexists(f, "/statistics", H5P_DEFAULT) > 0) {
    hid_t g = H5Gopen2(f, "/statistics", H5P_DEFAULT);
    if (g >= 0 && H5Aexists(g, "samples_used") > 0) {
      hid_t at = H5Aopen(g, "samples_used", H5P_DEFAULT);
      int64_t u = 0;
      if (at >= 0 && H5Aread(at, H5T_NATIVE_INT64, &u) >= 0) used = u;
      if (at >= 0) H5Aclose(at);
      if (used < 0) problem(b, "/statistics: attribute samples_used cannot be read");
    } else if (g >= 0) {
      problem(b, "/statistics has no attribute samples_used");
    }
    if (g >= 0) H5Gclose(g);
  }
  H5Eclear2(H5E_DEFAULT);
  if (used >= 0 && b->counted && used > b->nok)
    problem(b, "/statistics: samples_used is %lld, but only %ld samples were written with "
            "status 0", used, b->nok);
  b->limit = used >= 0 ? used : b->counted ? b->nok : -1;
  for (long i = 0; i < l->n && b->limit >= 0; i++) {
    const char* name = l->v[i];
    const size_t len = strlen(name);
    if (!starts_with(name, "/statistics/") || len < 6 || strcmp(name + len - 6, "/count"))
      continue;
    if (read_checked(f, name, H5T_NATIVE_INT64, check_count, b) == 0 && b->bad)
      problem(b, "%s: %ld count%s outside 0 .. %lld, the samples used (first: %lld)", name,
              b->bad, b->bad == 1 ? " is" : "s are", b->limit, b->first_value);
  }
}

// ------------------------------------------------------------------------------------------

// 1234567 as "1,234,567"
static const char* grouped(unsigned long long v, char* out, size_t n) {
  char digits[32];
  const int nd = snprintf(digits, sizeof digits, "%llu", v);
  size_t k = 0;
  for (int i = 0; i < nd && k + 2 < n; i++) {
    if (i > 0 && (nd - i) % 3 == 0) out[k++] = ',';
    out[k++] = digits[i];
  }
  out[k] = '\0';
  return out;
}

int mbs_cmd_verify(int argc, char** argv) {
  if (argc != 1 || argv[0][0] == '-') {
    fprintf(stderr, "usage: mbstudy verify FILE.h5\n"
                    "       read every dataset of a study's result file (each chunk's checksum "
                    "checked)\n       and its sample bookkeeping; exit 0 when whole, 1 when "
                    "not\n");
    return 2;
  }
  const char* file = argv[0];
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  struct stat sb;
  if (stat(file, &sb) != 0) {
    char parts[4200];
    snprintf(parts, sizeof parts, "%s.parts", file);
    if (stat(parts, &sb) == 0)
      fprintf(stderr, "mbstudy verify: %s does not exist yet: the study was stopped or is still "
                      "running (mbstudy inspect %s)\n", file, file);
    else
      fprintf(stderr, "mbstudy verify: %s: no such file\n", file);
    return 1;
  }
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    char why[400];
    mbs_h5_read_problem(why, sizeof why);
    printf("%s: cannot be opened as an HDF5 file: %s\n", file, why);
    return 1;
  }
  char format[64];
  attr_string(f, "mbstudy_format", format, sizeof format);
  if (!format[0]) {
    fprintf(stderr, "mbstudy verify: %s: not an mbstudy result file (no mbstudy_format "
                    "attribute)\n", file);
    H5Fclose(f);
    return 1;
  }

  // every dataset, read in full
  mbs_h5_names l = {NULL, 0, 0, 0};
  int structure_damaged = 0;
  if (mbs_h5_list_datasets(f, "/", &l) < 0) {
    char why[400];
    mbs_h5_read_problem(why, sizeof why);
    printf("%s: the file's groups cannot all be walked (%ld datasets found): %s\n", file, l.n,
           why);
    structure_damaged = 1;
  }
  unsigned long long values = 0;
  long ndamaged = 0, nchecksum = 0;
  char damaged[MAX_NAMED * 300 + 16] = "";
  for (long i = 0; i < l.n; i++) {
    const char* name = l.v[i];
    reader r = {file, name, 0, 0, 0, 0, NULL, NULL};
    int bad = 0;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t ft = d >= 0 ? H5Dget_type(d) : -1;
    if (ft < 0) {
      char why[400];
      mbs_h5_read_problem(why, sizeof why);
      printf("%s: %s: cannot be opened: %s\n", file, name, why);
      bad = 1;
    } else {
      hid_t mt = H5Tget_native_type(ft, H5T_DIR_DEFAULT);
      if (mt < 0) mt = H5Tcopy(ft);
      H5Eclear2(H5E_DEFAULT);
      hsize_t dims[H5S_MAX_RANK];
      r.per_sample = is_per_sample(name, dims_of(f, name, dims));
      nchecksum += has_checksum(d);
      bad = mt < 0 || read_dataset(d, mt, &r) != 0;
      values += r.values;
      if (mt >= 0) H5Tclose(mt);
    }
    if (ft >= 0) H5Tclose(ft);
    if (d >= 0) H5Dclose(d);
    H5Eclear2(H5E_DEFAULT);
    if (bad) {
      if (ndamaged < MAX_NAMED) {
        const size_t len = strlen(damaged);
        snprintf(damaged + len, sizeof damaged - len, "%s%s", ndamaged ? ", " : "", name);
      } else if (ndamaged == MAX_NAMED) {
        const size_t len = strlen(damaged);
        snprintf(damaged + len, sizeof damaged - len, ", ...");
      }
      ndamaged++;
    }
  }

  // the sample bookkeeping (format 1)
  book b;
  memset(&b, 0, sizeof b);
  b.file = file;
  b.S = -1;
  if (!strcmp(format, "1"))
    check_bookkeeping(f, &l, &b);
  else
    printf("%s: mbstudy_format is '%s'; this mbstudy knows format 1: the datasets were read, "
           "the bookkeeping not checked\n", file, format);
  free(b.done);
  mbs_h5_free_names(&l);
  H5Fclose(f);

  // the summary
  char vtext[48];
  printf("%s: %ld datasets, %s values read, ", file, l.n, grouped(values, vtext, sizeof vtext));
  if (ndamaged)
    printf("%ld damaged dataset%s: %s", ndamaged, ndamaged == 1 ? "" : "s", damaged);
  else if (structure_damaged)
    printf("the file's structure is damaged");
  else if (nchecksum)
    printf("all checksums good");
  else
    printf("all read, but the file carries no checksums (written by an older mbstudy)");
  if (b.S >= 0) {
    printf("; %ld samples", b.S);
    if (b.done_read) printf(", %ld done", b.ndone);
    if (b.counted) printf(", %ld failed", b.nfail);
  }
  if (b.problems)
    printf("; %ld bookkeeping problem%s (above)", b.problems, b.problems == 1 ? "" : "s");
  printf("\n");
  return ndamaged || structure_damaged || b.problems ? 1 : 0;
}
