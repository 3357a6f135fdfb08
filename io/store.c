// The study result file (HDF5): one process writes it with the default (sec2) file driver; no
// MPI call is made, so it works whether or not MPI is initialized. The layout, the chunking and
// the memory bounds are documented in io/FORMAT.md. Every chunked dataset carries HDF5's
// Fletcher32 checksum (after shuffle + deflate when those are on): a damaged chunk makes a
// read fail instead of returning wrong values (`mbstudy verify` reads a whole file).
//
// Writing: samples arrive in increasing index order. The writer keeps one block of
// `spc` consecutive samples (the sample extent of a trajectory chunk) in memory and writes it
// when a sample of a later block arrives or at close; blocks no sample reached are never written
// and read back as fill values. Count, mean and M2 (Welford) per frame and component accumulate
// as samples arrive, in index order, so they are reproducible bit for bit. At close the
// percentiles are computed column by column from the trajectories read back in blocks of
// frames (and of components when one frame of all samples exceeds the memory budget).
//
// Checkpoints: every per-sample dataset is chunked by spc x 2^k samples, so the largest of those
// lengths (`ckpt`) is a multiple of every chunk length along samples. mbs_store_sync flushes and
// fsyncs the file when the samples written reach a new multiple of ckpt; a chunk below such a
// point is never written again (HDF5 frees and may reuse the space of a rewritten filtered chunk,
// which would destroy the synced copy if the process then died). HDF5's metadata cache writes
// nothing between flushes, so a file cut off by a crash holds the metadata of its last sync and
// data that metadata does not refer to, or refers to past the synced samples.
// mbs_store_reopen checks such a file's synced samples, rebuilds the statistics from them, drops
// what lies past them and goes on writing.
//
// HDF5 never prints: every public function turns automatic error printing off while it runs,
// and a failing call becomes an MBS_ERR_IO status whose message names the file, what was being
// done and the innermost HDF5 error.
#include "mbs/store.h"

#include <hdf5.h>
#include <zlib.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5_util.h"
#include "pselect.h"

#define STORE_KIB 1024L
#define STORE_MIB (1024L * 1024L)
#define DEFAULT_CHUNK_BYTES (256 * STORE_KIB)  // chunk size aimed at when samples_per_chunk = 0
#define MAX_CHUNK_BYTES STORE_MIB              // no trajectory chunk is larger
#define META_CHUNK_BYTES (64 * STORE_KIB)      // per-sample datasets: chunk length in bytes
#define CHECKPOINT_BYTES (64 * STORE_MIB)      // trajectories of one checkpoint interval, at most
#define PERCENTILE_MEMORY (32 * STORE_MIB)     // values gathered at close in one pass (FORMAT.md)
#define SELECT_MEMORY (4 * STORE_MIB)          // beyond: selection in passes, in this much
#define PERCENTILE_MEMORY_ENV "MBS_STORE_PERCENTILE_MEMORY"
#define MESSAGE_WIDTH MBS_ERROR_MESSAGE_LEN    // bytes of /status/message
#define DEFLATE_LEVEL 1
#define DEFLATE_LEVEL_TEXT "1"
#define MIN_RATIO_TEXT "1.25"
#define FORMAT_VERSION "1"

typedef struct store_quantity {
  char* name;
  char* unit;
  int ncomp;
  hid_t dset;         // /trajectories/<name>
  hid_t comps;        // /trajectories/<name>_components (dimension scale)
  hsize_t chunk[3];
  int created;        // the dataset exists (it is made when its first block is written)
  int compressed;     // shuffle + deflate (decided on the first block)
  double* buf;        // the buffered block: spc x nframes x ncomp
  int64_t* count;     // per frame and component (nframes x ncomp)
  double* mean;
  double* m2;         // sum of squared deviations (Welford)
} store_quantity;

typedef struct store_scalar {
  char* name;
  char* unit;
  hid_t dset;         // /scalars/<name>
  hsize_t chunk;
  double* buf;        // spc
  int64_t count;
  double mean, m2;
} store_scalar;

struct mbs_store {
  char* path;
  hid_t file, gcpl;  // gcpl: groups without timestamps
  long nsamples;
  int nparams, nframes, nq, nsc, npct;
  double* pct;
  long spc;           // samples per block (= trajectory chunk extent along samples)
  long ckpt;          // samples per checkpoint: a multiple of every chunk length along samples
  long ckpt_bytes;    // trajectory bytes per checkpoint at most (the layout's, or the default)
  long block;         // first sample of the buffered block
  long last;          // last sample index received, -1 before the first
  long durable;       // samples 0 .. durable-1 are synced (mbs_store_sync)
  int dirty;          // the buffered block holds samples not yet in the file
  int broken;         // a write failed: no more samples are accepted
  hid_t samples, time, params, pnames, code, message, wall, steps, done;
  // chunk lengths along samples: 8-byte rows (/samples, /status/*, /scalars/*), /parameters,
  // /status/message
  hsize_t meta_chunk_meta, meta_chunk_params, meta_chunk_message;
  hid_t message_type;
  double* b_params;   // spc x nparams
  int32_t* b_code;
  char* b_message;    // spc x MESSAGE_WIDTH
  double* b_wall;
  int64_t* b_steps;
  uint8_t* b_done;
  store_quantity* q;
  store_scalar* sc;
};

// ------------------------------------------------------------------------------------------
// small helpers

static char* dup_str(const char* s) {
  if (!s) s = "";
  size_t n = strlen(s) + 1;
  char* d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

// length of s cut to at most max bytes without splitting a UTF-8 sequence
static size_t utf8_cut(const char* s, size_t max) {
  size_t n = strlen(s);
  if (n <= max) return n;
  n = max;
  while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  return n;
}

static int64_t* alloc_i64(size_t n) { return malloc((n ? n : 1) * sizeof(int64_t)); }
static double* alloc_f64(size_t n) { return malloc((n ? n : 1) * sizeof(double)); }

static void fill_nan(double* a, size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = NAN;
}

// a name usable as a path below a group: segments separated by single '/', none "." or ".."
static int valid_path_name(const char* name) {
  if (!name || !*name || name[0] == '/') return 0;
  const char* p = name;
  while (*p) {
    const char* e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0) return 0;
    if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) return 0;
    p += len;
    if (*p == '/') {
      p++;
      if (!*p) return 0;  // trailing '/'
    }
  }
  return 1;
}

// equal, or one is a group on the other's path
static int paths_conflict(const char* a, const char* b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la == lb) return strcmp(a, b) == 0;
  if (la < lb) return strncmp(a, b, la) == 0 && b[la] == '/';
  return strncmp(a, b, lb) == 0 && a[lb] == '/';
}

static int first_segment_is(const char* name, const char* seg) {
  size_t n = strlen(seg);
  return strncmp(name, seg, n) == 0 && (name[n] == '\0' || name[n] == '/');
}

static const char* basename_of(const char* path) {
  const char* b = strrchr(path, '/');
  return b ? b + 1 : path;
}

// ------------------------------------------------------------------------------------------
// attributes and small datasets

// n strings packed as fixed-width fields; *width receives the field width (>= 1)
static char* pack_strings(int n, const char* const* v, size_t* width) {
  size_t w = 1;
  for (int i = 0; i < n; i++)
    if (v && v[i] && strlen(v[i]) > w) w = strlen(v[i]);
  char* buf = calloc(n > 0 ? (size_t)n : 1, w);
  if (!buf) return NULL;
  for (int i = 0; i < n; i++)
    if (v && v[i]) memcpy(buf + (size_t)i * w, v[i], strlen(v[i]));
  *width = w;
  return buf;
}

// an array of n strings (NULL entries, or all of them when v is NULL, as ""): variable-length
// UTF-8 when vlen, else fixed-length
static int attr_strings(const char* path, mbs_error* err, hid_t loc, const char* key, int n,
                        const char* const* v, int vlen) {
  int rc = 0;
  hid_t t = -1, sp = -1, a = -1;
  size_t w = 1;
  char* buf = vlen ? malloc(((size_t)n + 1) * sizeof(char*)) : pack_strings(n, v, &w);
  NOMEM(buf);
  if (vlen) {  // NULL entries as ""
    const char** vv = (const char**)(void*)buf;
    for (int i = 0; i < n; i++) vv[i] = v && v[i] ? v[i] : "";
  }
  hsize_t dims[1] = {(hsize_t)n};
  H5TRY(t = vlen ? mbs_h5_vlen_str_type() : mbs_h5_str_type(w),
        "make a string type for attribute '%s'", key);
  H5TRY(sp = H5Screate_simple(1, dims, NULL), "make a dataspace for attribute '%s'", key);
  H5TRY(a = H5Acreate2(loc, key, t, sp, H5P_DEFAULT, H5P_DEFAULT), "create attribute '%s'", key);
  if (n > 0) H5TRY(H5Awrite(a, t, buf), "write attribute '%s'", key);
done:
  mbs_h5_close(&a, H5Aclose);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&t, H5Tclose);
  free(buf);
  return rc;
}

static int attr_int64(const char* path, mbs_error* err, hid_t loc, const char* key,
                      int64_t value) {
  int rc = 0;
  hid_t sp = -1, a = -1;
  H5TRY(sp = H5Screate(H5S_SCALAR), "make a dataspace for attribute '%s'", key);
  H5TRY(a = H5Acreate2(loc, key, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT),
        "create attribute '%s'", key);
  H5TRY(H5Awrite(a, H5T_NATIVE_INT64, &value), "write attribute '%s'", key);
done:
  mbs_h5_close(&a, H5Aclose);
  mbs_h5_close(&sp, H5Sclose);
  return rc;
}

// the groups on the path of `name` below `loc` (all but the last segment), created if missing
static int make_parents(const char* path, mbs_error* err, hid_t loc, hid_t gcpl,
                        const char* name) {
  int rc = 0;
  char part[1024];
  for (const char* e = strchr(name, '/'); e && !rc; e = strchr(e + 1, '/')) {
    const size_t n = (size_t)(e - name);
    if (n >= sizeof part) return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: name '%s' is too "
                                          "long", path, name);
    memcpy(part, name, n);
    part[n] = '\0';
    htri_t exists = H5Lexists(loc, part, H5P_DEFAULT);
    H5TRY(exists, "look for group '%s'", part);
    if (!exists) {
      hid_t g = H5Gcreate2(loc, part, H5P_DEFAULT, gcpl, H5P_DEFAULT);
      H5TRY(g, "create group '%s'", part);
      H5Gclose(g);
    }
  }
done:
  return rc;
}

// group `name` below `loc`, with its parents
static int make_group(const char* path, mbs_error* err, hid_t loc, hid_t gcpl, const char* name,
                      hid_t* out) {
  int rc = make_parents(path, err, loc, gcpl, name);
  *out = -1;
  if (rc) return rc;
  H5TRY(*out = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT), "create group '%s'", name);
done:
  return rc;
}

// Create dataset `name` below `loc` (intermediate groups created). chunk == NULL or a zero
// dimension: contiguous; otherwise chunked, with shuffle + deflate when `compress`, and always
// with HDF5's Fletcher32 checksum after them (each chunk's checksum is verified on every read:
// a damaged chunk makes H5Dread fail instead of returning wrong values).
static int make_dataset(const char* path, mbs_error* err, hid_t loc, hid_t gcpl,
                        const char* name, hid_t type, int rank, const hsize_t* dims,
                        const hsize_t* chunk, int compress, const void* fill, hid_t* out) {
  int rc = make_parents(path, err, loc, gcpl, name);
  hid_t sp = -1, dcpl = -1;
  *out = -1;
  if (rc) return rc;
  hid_t dapl = -1;
  int empty = 0;
  for (int i = 0; i < rank; i++)
    if (dims[i] == 0) empty = 1;
  H5TRY(sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR),
        "make the dataspace of '%s'", name);
  H5TRY(dcpl = H5Pcreate(H5P_DATASET_CREATE), "make properties for '%s'", name);
  H5TRY(H5Pset_obj_track_times(dcpl, 0), "set properties of '%s'", name);
  if (chunk && !empty) {
    H5TRY(H5Pset_chunk(dcpl, rank, chunk), "set the chunks of '%s'", name);
    if (compress) {
      H5TRY(H5Pset_shuffle(dcpl), "set the shuffle filter of '%s'", name);
      H5TRY(H5Pset_deflate(dcpl, DEFLATE_LEVEL), "set the deflate filter of '%s'", name);
    }
    H5TRY(H5Pset_fletcher32(dcpl), "set the checksum filter of '%s'", name);
  }
  if (fill) H5TRY(H5Pset_fill_value(dcpl, type, fill), "set the fill value of '%s'", name);
  if (chunk && !empty) {
    // a chunk cache of two chunks (at most HDF5's default 1 MiB): samples are written in order,
    // so only the chunk being filled is ever revisited; the default 1 MiB for every per-sample
    // dataset would hold ~10 MB of finished chunks in a long study
    size_t bytes = H5Tget_size(type);
    for (int i = 0; i < rank; i++) bytes *= (size_t)chunk[i];
    bytes *= 2;
    if (bytes > (size_t)STORE_MIB) bytes = (size_t)STORE_MIB;
    H5TRY(dapl = H5Pcreate(H5P_DATASET_ACCESS), "make access properties for '%s'", name);
    H5TRY(H5Pset_chunk_cache(dapl, 101, bytes, 1.0), "set the chunk cache of '%s'", name);
  }
  H5TRY(*out = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, dcpl,
                          dapl >= 0 ? dapl : H5P_DEFAULT),
        "create dataset '%s'", name);
done:
  mbs_h5_close(&dapl, H5Pclose);
  mbs_h5_close(&dcpl, H5Pclose);
  mbs_h5_close(&sp, H5Sclose);
  return rc;
}

// write a whole dataset from memory
static int write_all(const char* path, mbs_error* err, hid_t d, hid_t memtype, const void* buf,
                     const char* name) {
  int rc = 0;
  H5TRY(H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), "write '%s'", name);
done:
  return rc;
}

// write rows [first, first + rows) along the first axis (all of the other axes)
static int write_rows(const char* path, mbs_error* err, hid_t d, hid_t memtype, hsize_t first,
                      hsize_t rows, const void* buf, const char* name) {
  int rc = 0;
  hid_t fs = -1, ms = -1;
  hsize_t dims[3] = {0, 0, 0}, start[3] = {0, 0, 0}, count[3];
  H5TRY(fs = H5Dget_space(d), "get the dataspace of '%s'", name);
  int rank = H5Sget_simple_extent_dims(fs, dims, NULL);
  H5TRY(rank, "get the dimensions of '%s'", name);
  start[0] = first;
  count[0] = rows;
  for (int i = 1; i < rank; i++) count[i] = dims[i];
  for (int i = 0; i < rank; i++)
    if (count[i] == 0) goto done;
  H5TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL),
        "select samples %llu..%llu of '%s'", (unsigned long long)first,
        (unsigned long long)(first + rows - 1), name);
  H5TRY(ms = H5Screate_simple(rank, count, NULL), "make a memory dataspace for '%s'", name);
  H5TRY(H5Dwrite(d, memtype, ms, fs, H5P_DEFAULT, buf), "write samples %llu..%llu of '%s'",
        (unsigned long long)first, (unsigned long long)(first + rows - 1), name);
done:
  mbs_h5_close(&ms, H5Sclose);
  mbs_h5_close(&fs, H5Sclose);
  return rc;
}

static int attach(const char* path, mbs_error* err, hid_t d, hid_t scale, unsigned idx,
                  const char* label, const char* name) {
  int rc = 0;
  H5TRY(H5DSattach_scale(d, scale, idx), "attach a dimension scale to axis %u of '%s'", idx,
        name);
  H5TRY(H5DSset_label(d, idx, label), "label axis %u of '%s'", idx, name);
done:
  return rc;
}

// a dataset of fixed-length strings, made a dimension scale named `scale_name`
static int string_scale(const char* path, mbs_error* err, hid_t loc, hid_t gcpl,
                        const char* name, const char* scale_name, int n,
                        const char* const* v, hid_t* out) {
  int rc = 0;
  hid_t t = -1;
  size_t w = 1;
  char* buf = pack_strings(n, v, &w);
  *out = -1;
  NOMEM(buf);
  hsize_t dims[1] = {(hsize_t)n};
  H5TRY(t = mbs_h5_str_type(w), "make a string type for '%s'", name);
  rc = make_dataset(path, err, loc, gcpl, name, t, 1, dims, NULL, 0, NULL, out);
  if (rc) goto done;
  if (n > 0) rc = write_all(path, err, *out, t, buf, name);
  if (rc) goto done;
  H5TRY(H5DSset_scale(*out, scale_name), "make '%s' a dimension scale", name);
done:
  mbs_h5_close(&t, H5Tclose);
  free(buf);
  return rc;
}

// ------------------------------------------------------------------------------------------
// layout

static int check_layout(const char* path, const mbs_store_layout* L, mbs_error* err) {
#define BAD(...) return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, __VA_ARGS__)
  if (L->nsamples < 1) BAD("%s: the study needs at least one sample (nsamples = %ld)", path,
                           L->nsamples);
  if (L->nframes < 1 || !L->times)
    BAD("%s: the study needs at least one frame and its times (nframes = %d)", path, L->nframes);
  if (L->nparams < 0 || (L->nparams > 0 && !L->param_names))
    BAD("%s: nparams = %d without parameter names", path, L->nparams);
  if (L->nquantities < 0 || (L->nquantities > 0 && !L->quantities))
    BAD("%s: nquantities = %d without quantities", path, L->nquantities);
  if (L->nscalars < 0 || (L->nscalars > 0 && !L->scalar_names))
    BAD("%s: nscalars = %d without scalar names", path, L->nscalars);
  if (L->npercentiles < 0 || (L->npercentiles > 0 && !L->percentiles))
    BAD("%s: npercentiles = %d without percentile levels", path, L->npercentiles);
  if (L->nattributes < 0 || (L->nattributes > 0 && !L->attributes))
    BAD("%s: nattributes = %d without attributes", path, L->nattributes);
  if (L->samples_per_chunk < 0)
    BAD("%s: samples_per_chunk = %d is negative", path, L->samples_per_chunk);
  for (int i = 0; i < L->npercentiles; i++)
    if (!(L->percentiles[i] >= 0 && L->percentiles[i] <= 100))
      BAD("%s: percentile level %g is outside 0..100", path, L->percentiles[i]);
  for (int i = 0; i < L->nattributes; i++)
    if (!L->attributes[i].key || !*L->attributes[i].key)
      BAD("%s: attribute %d has no key", path, i);
  for (int k = 0; k < L->nquantities; k++) {
    const mbs_store_quantity* q = &L->quantities[k];
    if (!valid_path_name(q->name))
      BAD("%s: quantity %d: name '%s' is not a valid dataset path (non-empty segments "
          "separated by single '/', no '.' or '..')", path, k, q->name ? q->name : "(null)");
    if (strlen(q->name) > 900) BAD("%s: quantity %d: name longer than 900 bytes", path, k);
    if (q->ncomp < 1) BAD("%s: quantity '%s' has %d components", path, q->name, q->ncomp);
    if (first_segment_is(q->name, "scalars") || first_segment_is(q->name, "percentiles"))
      BAD("%s: quantity '%s': the names 'scalars' and 'percentiles' are taken in /statistics",
          path, q->name);
    for (int j = 0; j < k; j++) {
      const char* o = L->quantities[j].name;
      size_t lo = strlen(o), lq = strlen(q->name);
      int clash = paths_conflict(q->name, o);
      // q->name == o + "_components" (or the reverse) clashes with a component scale
      if (lq == lo + 11 && strncmp(q->name, o, lo) == 0 && !strcmp(q->name + lo, "_components"))
        clash = 1;
      if (lo == lq + 11 && strncmp(o, q->name, lq) == 0 && !strcmp(o + lq, "_components"))
        clash = 1;
      if (clash)
        BAD("%s: quantities '%s' and '%s' would share a dataset path in /trajectories", path, o,
            q->name);
    }
  }
  for (int k = 0; k < L->nscalars; k++) {
    const char* n = L->scalar_names[k];
    if (!valid_path_name(n))
      BAD("%s: scalar %d: name '%s' is not a valid dataset path", path, k, n ? n : "(null)");
    if (strlen(n) > 900) BAD("%s: scalar %d: name longer than 900 bytes", path, k);
    for (int j = 0; j < k; j++)
      if (paths_conflict(n, L->scalar_names[j]))
        BAD("%s: scalars '%s' and '%s' would share a dataset path in /scalars", path,
            L->scalar_names[j], n);
  }
#undef BAD
  return MBS_OK;
}

// samples per block: the layout's value or ~256 KiB, capped so that no chunk exceeds 1 MiB
static long choose_spc(const mbs_store_layout* L) {
  long max_sample = 8;
  for (int k = 0; k < L->nquantities; k++) {
    long b = (long)L->nframes * L->quantities[k].ncomp * (long)sizeof(double);
    if (b > max_sample) max_sample = b;
  }
  long spc = L->samples_per_chunk > 0 ? L->samples_per_chunk : DEFAULT_CHUNK_BYTES / max_sample;
  long cap = MAX_CHUNK_BYTES / max_sample;
  if (spc > cap) spc = cap;
  if (spc < 1) spc = 1;
  if (spc > L->nsamples) spc = L->nsamples;
  return spc;
}

// Chunk length along samples of a per-sample dataset with `row_bytes` per sample, before the
// cap at S: spc x 2^k, the largest such length within META_CHUNK_BYTES and within the samples
// whose trajectories (`traj_bytes` per sample) fill `ckpt_bytes` (the layout's
// checkpoint_bytes, CHECKPOINT_BYTES by default), but at least spc. All of them are spc times a
// power of two, so the largest is a multiple of every other.
static long meta_chunk(long spc, long row_bytes, long traj_bytes, long ckpt_bytes) {
  long limit = META_CHUNK_BYTES / row_bytes;
  if (limit > ckpt_bytes / traj_bytes) limit = ckpt_bytes / traj_bytes;
  long n = spc;
  while (n <= limit / 2) n *= 2;
  return n;
}

// the chunk shapes of every dataset along samples, and the checkpoint interval
static void plan_chunks(mbs_store* s) {
  long traj_bytes = 0;  // one sample's trajectories
  for (int k = 0; k < s->nq; k++) traj_bytes += (long)s->nframes * s->q[k].ncomp * 8L;
  if (traj_bytes <= 0) traj_bytes = 8;
  const long cb = s->ckpt_bytes;
  const long meta = meta_chunk(s->spc, 8, traj_bytes, cb);
  const long params = meta_chunk(s->spc, s->nparams > 0 ? 8L * s->nparams : 8, traj_bytes, cb);
  const long message = meta_chunk(s->spc, MESSAGE_WIDTH, traj_bytes, cb);
  s->ckpt = meta;
  if (params > s->ckpt) s->ckpt = params;
  if (message > s->ckpt) s->ckpt = message;
  s->meta_chunk_meta = (hsize_t)(meta < s->nsamples ? meta : s->nsamples);
  s->meta_chunk_params = (hsize_t)(params < s->nsamples ? params : s->nsamples);
  s->meta_chunk_message = (hsize_t)(message < s->nsamples ? message : s->nsamples);
  for (int k = 0; k < s->nsc; k++) s->sc[k].chunk = s->meta_chunk_meta;
  // trajectories: spc samples x all frames x all components, split along frames (then
  // components) when one sample alone is larger than MAX_CHUNK_BYTES
  for (int k = 0; k < s->nq; k++) {
    store_quantity* q = &s->q[k];
    const long sample_bytes = (long)s->nframes * q->ncomp * 8;
    q->chunk[0] = (hsize_t)s->spc;
    q->chunk[1] = (hsize_t)s->nframes;
    q->chunk[2] = (hsize_t)q->ncomp;
    if (sample_bytes > MAX_CHUNK_BYTES) {
      q->chunk[0] = 1;
      long fc = MAX_CHUNK_BYTES / (8L * q->ncomp);
      if (fc >= 1) {
        q->chunk[1] = (hsize_t)fc;
      } else {
        q->chunk[1] = 1;
        q->chunk[2] = (hsize_t)(MAX_CHUNK_BYTES / 8);
      }
    }
  }
}

static void reset_block(mbs_store* s) {
  const size_t n = (size_t)s->spc;
  fill_nan(s->b_params, n * (size_t)s->nparams);
  memset(s->b_code, 0, n * sizeof *s->b_code);
  memset(s->b_message, 0, n * MESSAGE_WIDTH);
  fill_nan(s->b_wall, n);
  memset(s->b_steps, 0, n * sizeof *s->b_steps);
  memset(s->b_done, 0, n);
  for (int k = 0; k < s->nq; k++)
    fill_nan(s->q[k].buf, n * (size_t)s->nframes * (size_t)s->q[k].ncomp);
  for (int k = 0; k < s->nsc; k++) fill_nan(s->sc[k].buf, n);
}

static void close_all(mbs_store* s) {
  for (int k = 0; s->q && k < s->nq; k++) {
    mbs_h5_close(&s->q[k].dset, H5Dclose);
    mbs_h5_close(&s->q[k].comps, H5Dclose);
  }
  for (int k = 0; s->sc && k < s->nsc; k++) mbs_h5_close(&s->sc[k].dset, H5Dclose);
  hid_t* ds[] = {&s->samples, &s->time, &s->params, &s->pnames, &s->code,
                 &s->message, &s->wall, &s->steps, &s->done};
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) mbs_h5_close(ds[i], H5Dclose);
  mbs_h5_close(&s->message_type, H5Tclose);
  mbs_h5_close(&s->gcpl, H5Pclose);
}

static void free_store(mbs_store* s) {
  if (!s) return;
  for (int k = 0; s->q && k < s->nq; k++) {
    free(s->q[k].name);
    free(s->q[k].unit);
    free(s->q[k].buf);
    free(s->q[k].count);
    free(s->q[k].mean);
    free(s->q[k].m2);
  }
  for (int k = 0; s->sc && k < s->nsc; k++) {
    free(s->sc[k].name);
    free(s->sc[k].unit);
    free(s->sc[k].buf);
  }
  free(s->q);
  free(s->sc);
  free(s->pct);
  free(s->b_params);
  free(s->b_code);
  free(s->b_message);
  free(s->b_wall);
  free(s->b_steps);
  free(s->b_done);
  free(s->path);
  free(s);
}

static mbs_store* new_store(const char* path, const mbs_store_layout* L) {
  mbs_store* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->file = s->gcpl = -1;
  s->samples = s->time = s->params = s->pnames = s->code = s->message = s->wall = s->steps =
      s->done = s->message_type = -1;
  s->path = dup_str(path);
  s->nsamples = L->nsamples;
  s->nparams = L->nparams;
  s->nframes = L->nframes;
  s->nq = L->nquantities;
  s->nsc = L->nscalars;
  s->npct = L->npercentiles;
  s->spc = choose_spc(L);
  s->last = -1;
  const size_t n = (size_t)s->spc;
  s->pct = alloc_f64((size_t)s->npct);
  s->b_params = alloc_f64(n * (size_t)s->nparams);
  s->b_code = malloc(n * sizeof *s->b_code);
  s->b_message = malloc(n * MESSAGE_WIDTH);
  s->b_wall = alloc_f64(n);
  s->b_steps = alloc_i64(n);
  s->b_done = malloc(n);
  s->q = calloc((size_t)(s->nq ? s->nq : 1), sizeof *s->q);
  s->sc = calloc((size_t)(s->nsc ? s->nsc : 1), sizeof *s->sc);
  int ok = s->path && s->pct && s->b_params && s->b_code && s->b_message && s->b_wall &&
           s->b_steps && s->b_done && s->q && s->sc;
  for (int k = 0; ok && k < s->nq; k++) {
    store_quantity* q = &s->q[k];
    q->dset = q->comps = -1;
    q->ncomp = L->quantities[k].ncomp;
    const size_t m = (size_t)s->nframes * (size_t)q->ncomp;
    q->name = dup_str(L->quantities[k].name);
    q->unit = dup_str(L->quantities[k].unit);
    q->buf = alloc_f64(n * m);
    q->count = calloc(m, sizeof *q->count);
    q->mean = calloc(m, sizeof *q->mean);
    q->m2 = calloc(m, sizeof *q->m2);
    ok = q->name && q->unit && q->buf && q->count && q->mean && q->m2;
  }
  for (int k = 0; ok && k < s->nsc; k++) {
    store_scalar* c = &s->sc[k];
    c->dset = -1;
    c->name = dup_str(L->scalar_names[k]);
    c->unit = dup_str(L->scalar_units ? L->scalar_units[k] : "");
    c->buf = alloc_f64(n);
    ok = c->name && c->unit && c->buf;
  }
  if (!ok) {  // no HDF5 object exists yet: only memory to free
    free_store(s);
    return NULL;
  }
  if (s->npct) memcpy(s->pct, L->percentiles, (size_t)s->npct * sizeof(double));
  s->ckpt_bytes = L->checkpoint_bytes > 0 ? L->checkpoint_bytes : CHECKPOINT_BYTES;
  plan_chunks(s);
  reset_block(s);
  return s;
}

// the file access properties of every open of the file (*out: -1 on failure)
static int file_access(const char* path, mbs_error* err, hid_t* out) {
  int rc = 0;
  hid_t fapl = -1;
  *out = -1;
  H5TRY(fapl = H5Pcreate(H5P_FILE_ACCESS), "make file access properties");
  // the 1.8 file format: readable by HDF5 1.8 and later (netCDF-4, h5py, MATLAB), and it
  // stores attributes larger than 64 KiB (e.g. a whole study specification)
#if H5_VERSION_GE(1, 10, 2)
  H5TRY(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18), "set the format version");
#else
  H5TRY(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
        "set the format version");
#endif
  H5TRY(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), "set the close degree");
#if H5_VERSION_GE(1, 12, 1) || (H5_VERS_MINOR == 10 && H5_VERSION_GE(1, 10, 7))
  // lock where the file system can, go on where it cannot (NFS, Lustre)
  H5TRY(H5Pset_file_locking(fapl, 1, 1), "set file locking");
#endif
  *out = fapl;
  fapl = -1;
done:
  mbs_h5_close(&fapl, H5Pclose);
  return rc;
}

// HDF5's metadata cache writes nothing but when the file is flushed (mbs_store_sync, close):
// otherwise it may write a dirty entry whenever it needs room, and a file cut off by a crash
// would mix metadata of after its last sync with the data of that sync. The cache then holds
// all of the file's metadata that was used (the chunk indexes: tens of bytes per chunk).
static int hold_metadata(mbs_store* s, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  H5AC_cache_config_t c;
  memset(&c, 0, sizeof c);
  c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  H5TRY(H5Fget_mdc_config(s->file, &c), "get the metadata cache configuration");
  c.incr_mode = H5C_incr__off;
  c.flash_incr_mode = H5C_flash_incr__off;
  c.decr_mode = H5C_decr__off;
  c.evictions_enabled = 0;
  H5TRY(H5Fset_mdc_config(s->file, &c), "configure the metadata cache");
done:
  return rc;
}

static int build_file(mbs_store* s, const mbs_store_layout* L, int force, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  hid_t fapl = -1, fcpl = -1, g = -1;
  int64_t* idx = NULL;
  const double nan = NAN;
  const int32_t zero32 = 0;
  const int64_t zero64 = 0;
  const uint8_t zero8 = 0;

  rc = file_access(path, err, &fapl);
  if (rc) goto done;
  // no modification times in object headers: the same study gives the same bytes
  H5TRY(fcpl = H5Pcreate(H5P_FILE_CREATE), "make file creation properties");
  H5TRY(H5Pset_obj_track_times(fcpl, 0), "set file creation properties");
  H5TRY(s->file = H5Fcreate(path, force ? H5F_ACC_TRUNC : H5F_ACC_EXCL, fcpl, fapl),
        "create the file");
  rc = hold_metadata(s, err);
  if (rc) goto done;
  H5TRY(s->gcpl = H5Pcreate(H5P_GROUP_CREATE), "make group properties");
  H5TRY(H5Pset_obj_track_times(s->gcpl, 0), "set group properties");

  // root attributes: provenance, then the format version (which always wins)
  for (int i = 0; i < L->nattributes && !rc; i++)
    rc = mbs_h5_attr_string(path, err, s->file, L->attributes[i].key, L->attributes[i].value);
  if (!rc) rc = mbs_h5_attr_string(path, err, s->file, "mbstudy_format", FORMAT_VERSION);
  if (rc) goto done;

  // /model/document: the model simulated, when it is in no file of the user's
  if (L->model_document) {
    hid_t g = -1;
    rc = make_group(path, err, s->file, s->gcpl, "model", &g);
    if (!rc) rc = mbs_h5_write_text(path, err, g, "document", L->model_document);
    if (!rc) {
      hid_t d = H5Dopen2(g, "document", H5P_DEFAULT);
      rc = d < 0 ? MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open /model/document", path)
                 : mbs_h5_attr_string(path, err, d, "format", "OpenSim 4 .osim");
      if (d >= 0) H5Dclose(d);
    }
    mbs_h5_close(&g, H5Gclose);
    if (rc) goto done;
  }

  // /samples: 0..n-1, the scale of every per-sample axis
  {
    hsize_t dims[1] = {(hsize_t)s->nsamples}, ch[1] = {s->meta_chunk_meta};
    rc = make_dataset(path, err, s->file, s->gcpl, "samples", H5T_STD_I64LE, 1, dims, ch, 1,
                      NULL, &s->samples);
    if (rc) goto done;
    const long piece = (long)ch[0];
    idx = alloc_i64((size_t)piece);
    NOMEM(idx);
    for (long first = 0; first < s->nsamples && !rc; first += piece) {
      long n = s->nsamples - first < piece ? s->nsamples - first : piece;
      for (long i = 0; i < n; i++) idx[i] = first + i;
      rc = write_rows(path, err, s->samples, H5T_NATIVE_INT64, (hsize_t)first, (hsize_t)n, idx,
                      "/samples");
    }
    if (rc) goto done;
    H5TRY(H5DSset_scale(s->samples, "samples"), "make '/samples' a dimension scale");
  }
  // /time
  {
    hsize_t dims[1] = {(hsize_t)s->nframes};
    rc = make_dataset(path, err, s->file, s->gcpl, "time", H5T_IEEE_F64LE, 1, dims, NULL, 0,
                      NULL, &s->time);
    if (!rc) rc = write_all(path, err, s->time, H5T_NATIVE_DOUBLE, L->times, "/time");
    if (!rc) rc = mbs_h5_attr_utf8(path, err, s->time, "units",
                                     L->time_units ? L->time_units : "s");
    if (rc) goto done;
    H5TRY(H5DSset_scale(s->time, "time"), "make '/time' a dimension scale");
  }
  // /parameter_names and /parameters
  {
    rc = string_scale(path, err, s->file, s->gcpl, "parameter_names", "parameter_names",
                      s->nparams, L->param_names, &s->pnames);
    if (rc) goto done;
    hsize_t dims[2] = {(hsize_t)s->nsamples, (hsize_t)s->nparams};
    hsize_t ch[2] = {s->meta_chunk_params, (hsize_t)s->nparams};
    rc = make_dataset(path, err, s->file, s->gcpl, "parameters", H5T_IEEE_F64LE, 2, dims, ch, 1,
                      &nan, &s->params);
    if (!rc) rc = attr_strings(path, err, s->params, "units", s->nparams, L->param_units, 1);
    if (!rc) rc = attach(path, err, s->params, s->samples, 0, "sample", "/parameters");
    if (!rc) rc = attach(path, err, s->params, s->pnames, 1, "parameter", "/parameters");
    if (rc) goto done;
  }
  // /status
  {
    hsize_t dims[1] = {(hsize_t)s->nsamples}, ch[1] = {s->meta_chunk_meta};
    H5TRY(s->message_type = mbs_h5_str_type(MESSAGE_WIDTH), "make the message string type");
    rc = make_dataset(path, err, s->file, s->gcpl, "status/code", H5T_STD_I32LE, 1, dims, ch, 1,
                      &zero32, &s->code);
    if (!rc) {
      hsize_t chm[1] = {s->meta_chunk_message};
      char fill[MESSAGE_WIDTH];
      memset(fill, 0, sizeof fill);
      rc = make_dataset(path, err, s->file, s->gcpl, "status/message", s->message_type, 1, dims,
                        chm, 1, fill, &s->message);
    }
    if (!rc)
      rc = make_dataset(path, err, s->file, s->gcpl, "status/wall_time", H5T_IEEE_F64LE, 1,
                        dims, ch, 1, &nan, &s->wall);
    if (!rc) rc = mbs_h5_attr_utf8(path, err, s->wall, "units", "s");
    if (!rc)
      rc = make_dataset(path, err, s->file, s->gcpl, "status/steps", H5T_STD_I64LE, 1, dims, ch,
                        1, &zero64, &s->steps);
    if (!rc)
      rc = make_dataset(path, err, s->file, s->gcpl, "status/done", H5T_STD_U8LE, 1, dims, ch, 1,
                        &zero8, &s->done);
    if (!rc)
      rc = mbs_h5_attr_string(
          path, err, s->code, "description",
          "mbs_status of the sample: 0 ok, positive informational, negative error");
    if (!rc)
      rc = mbs_h5_attr_string(path, err, s->done, "description",
                           "1 when the sample was written, 0 when it never arrived (fill values)");
    hid_t st[] = {s->code, s->message, s->wall, s->steps, s->done};
    const char* nm[] = {"/status/code", "/status/message", "/status/wall_time", "/status/steps",
                        "/status/done"};
    for (int i = 0; i < 5 && !rc; i++)
      rc = attach(path, err, st[i], s->samples, 0, "sample", nm[i]);
    if (rc) goto done;
  }
  // /trajectories/<quantity> with its component scale
  for (int k = 0; k < s->nq; k++) {
    store_quantity* q = &s->q[k];
    const mbs_store_quantity* lq = &L->quantities[k];
    char name[1024], cname[1024], full[1100];
    snprintf(name, sizeof name, "trajectories/%s", q->name);
    snprintf(cname, sizeof cname, "trajectories/%s_components", q->name);
    snprintf(full, sizeof full, "/%s", name);
    char** gen = NULL;
    const char* const* comps = lq->components;
    if (!comps) {  // unnamed components: "0", "1", ...
      gen = calloc((size_t)q->ncomp, sizeof *gen);
      NOMEM(gen);
      for (int c = 0; c < q->ncomp && gen; c++) {
        gen[c] = malloc(16);
        if (gen[c]) snprintf(gen[c], 16, "%d", c);
      }
      comps = (const char* const*)gen;
    }
    rc = string_scale(path, err, s->file, s->gcpl, cname, basename_of(cname),
                      q->ncomp, comps, &q->comps);
    // each component's unit where they differ (q: rad or m by the coordinate's motion type)
    if (!rc && lq->component_units)
      rc = attr_strings(path, err, q->comps, "units", q->ncomp, lq->component_units, 1);
    if (gen) {
      for (int c = 0; c < q->ncomp; c++) free(gen[c]);
      free(gen);
    }
    if (rc) goto done;
    // the dataset itself is made with its first block (create_trajectory), chunked as planned
    q->created = 0;
  }
  // /scalars/<name>
  for (int k = 0; k < s->nsc; k++) {
    store_scalar* c = &s->sc[k];
    char name[1024];
    snprintf(name, sizeof name, "scalars/%s", c->name);
    hsize_t dims[1] = {(hsize_t)s->nsamples}, ch[1] = {c->chunk};
    rc = make_dataset(path, err, s->file, s->gcpl, name, H5T_IEEE_F64LE, 1, dims, ch, 1, &nan,
                      &c->dset);
    if (!rc) rc = mbs_h5_attr_utf8(path, err, c->dset, "units", c->unit);
    if (!rc) rc = attach(path, err, c->dset, s->samples, 0, "sample", name);
    if (rc) goto done;
  }
  // groups that stay empty still exist, so that readers find every top-level name
  {
    const char* groups[] = {"trajectories", "scalars"};
    for (int i = 0; i < 2; i++) {
      htri_t e = H5Lexists(s->file, groups[i], H5P_DEFAULT);
      H5TRY(e, "look for '/%s'", groups[i]);
      if (!e) {
        rc = make_group(path, err, s->file, s->gcpl, groups[i], &g);
        if (rc) goto done;
        mbs_h5_close(&g, H5Gclose);
      }
    }
  }
  H5TRY(H5Fflush(s->file, H5F_SCOPE_LOCAL), "flush the file");
done:
  free(idx);
  mbs_h5_close(&g, H5Gclose);
  mbs_h5_close(&fcpl, H5Pclose);
  mbs_h5_close(&fapl, H5Pclose);
  return rc;
}

mbs_store* mbs_store_create(const char* path, const mbs_store_layout* layout, int force,
                            mbs_error* err) {
  if (!path || !*path || !layout) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, "store", "store: no file name or no layout");
    return NULL;
  }
  if (check_layout(path, layout, err)) return NULL;
  struct stat st;
  if (!force && stat(path, &st) == 0) {
    MBS_FAIL(err, MBS_ERR_IO, path, "%s already exists; use --force to replace it", path);
    return NULL;
  }
  mbs_store* s = new_store(path, layout);
  if (!s) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory for the store's buffers", path);
    return NULL;
  }
  mbs_h5_quiet qz = mbs_h5_quiet_begin();
  int rc = build_file(s, layout, force, err);
  if (rc) {
    const int created = s->file >= 0;
    close_all(s);
    mbs_h5_close(&s->file, H5Fclose);
    if (created) unlink(path);  // never leave a half-made file behind
    free_store(s);
    s = NULL;
  }
  mbs_h5_quiet_end(qz);
  return s;
}

// ------------------------------------------------------------------------------------------
// writing samples

// Whether deflate pays for a quantity: its first block, shuffled, compressed by zlib at the
// level the file uses. Simulated doubles often carry noise in every mantissa bit (speeds
// compress by about 1.1); deflating them costs more time than it saves space.
#define MIN_COMPRESSION_RATIO 1.25

static double compression_ratio(const double* v, size_t n) {
  if (n == 0) return INFINITY;
  const size_t bytes = n * sizeof(double);
  unsigned char* sh = malloc(bytes);
  uLongf clen = compressBound((uLong)bytes);
  unsigned char* out = malloc(clen);
  double ratio = INFINITY;  // when the probe cannot run, compress
  if (sh && out) {
    const unsigned char* in = (const unsigned char*)v;
    for (size_t i = 0; i < n; i++)
      for (size_t b = 0; b < sizeof(double); b++) sh[b * n + i] = in[i * sizeof(double) + b];
    if (compress2(out, &clen, sh, (uLong)bytes, DEFLATE_LEVEL) == Z_OK)
      ratio = (double)bytes / (double)clen;
  }
  free(sh);
  free(out);
  return ratio;
}

// make /trajectories/<q>, compressed when its first block (`probe`, n values; NULL when no
// sample was ever written) compresses by at least MIN_COMPRESSION_RATIO
static int create_trajectory(mbs_store* s, store_quantity* q, const double* probe, size_t n,
                             mbs_error* err) {
  const char* path = s->path;
  char name[1024], full[1100];
  snprintf(name, sizeof name, "trajectories/%s", q->name);
  snprintf(full, sizeof full, "/%s", name);
  // samples never written (NaN) would make the probe look compressible: probe what is there
  size_t m = 0;
  double* vals = probe ? malloc((n ? n : 1) * sizeof(double)) : NULL;
  if (vals)
    for (size_t i = 0; i < n; i++)
      if (!isnan(probe[i])) vals[m++] = probe[i];
  const double ratio = vals ? compression_ratio(vals, m) : INFINITY;
  free(vals);
  q->compressed = !(ratio < MIN_COMPRESSION_RATIO);
  const double nan = NAN;
  hsize_t dims[3] = {(hsize_t)s->nsamples, (hsize_t)s->nframes, (hsize_t)q->ncomp};
  int rc = make_dataset(path, err, s->file, s->gcpl, name, H5T_IEEE_F64LE, 3, dims, q->chunk,
                        q->compressed, &nan, &q->dset);
  if (!rc) rc = mbs_h5_attr_utf8(path, err, q->dset, "units", q->unit);
  if (!rc)
    rc = mbs_h5_attr_string(path, err, q->dset, "compression",
                         q->compressed ? "shuffle + deflate level " DEFLATE_LEVEL_TEXT
                                       : "none (the first block compressed by less than "
                                         MIN_RATIO_TEXT ")");
  if (!rc) rc = attach(path, err, q->dset, s->samples, 0, "sample", full);
  if (!rc) rc = attach(path, err, q->dset, s->time, 1, "time", full);
  if (!rc) rc = attach(path, err, q->dset, q->comps, 2, "component", full);
  if (!rc) q->created = 1;
  return rc;
}

static int flush_block(mbs_store* s, mbs_error* err) {
  const char* path = s->path;
  const hsize_t first = (hsize_t)s->block;
  const hsize_t rows =
      (hsize_t)(s->nsamples - s->block < s->spc ? s->nsamples - s->block : s->spc);
  int rc = write_rows(path, err, s->params, H5T_NATIVE_DOUBLE, first, rows, s->b_params,
                      "/parameters");
  if (!rc) rc = write_rows(path, err, s->code, H5T_NATIVE_INT32, first, rows, s->b_code,
                           "/status/code");
  if (!rc) rc = write_rows(path, err, s->message, s->message_type, first, rows, s->b_message,
                           "/status/message");
  if (!rc) rc = write_rows(path, err, s->wall, H5T_NATIVE_DOUBLE, first, rows, s->b_wall,
                           "/status/wall_time");
  if (!rc) rc = write_rows(path, err, s->steps, H5T_NATIVE_INT64, first, rows, s->b_steps,
                           "/status/steps");
  if (!rc) rc = write_rows(path, err, s->done, H5T_NATIVE_UINT8, first, rows, s->b_done,
                           "/status/done");
  for (int k = 0; k < s->nq && !rc; k++) {
    store_quantity* q = &s->q[k];
    if (!q->created)
      rc = create_trajectory(s, q, q->buf, (size_t)rows * (size_t)s->nframes * (size_t)q->ncomp,
                             err);
    if (!rc)
      rc = write_rows(path, err, q->dset, H5T_NATIVE_DOUBLE, first, rows, q->buf, q->name);
  }
  for (int k = 0; k < s->nsc && !rc; k++)
    rc = write_rows(path, err, s->sc[k].dset, H5T_NATIVE_DOUBLE, first, rows, s->sc[k].buf,
                    s->sc[k].name);
  if (rc) {
    s->broken = 1;
    return rc;
  }
  s->dirty = 0;
  reset_block(s);
  return MBS_OK;
}

static inline void welford(int64_t* n, double* mean, double* m2, double x) {
  const double d = x - *mean;
  *n += 1;
  *mean += d / (double)*n;
  *m2 += d * (x - *mean);
}

int mbs_store_write_sample(mbs_store* s, const mbs_store_sample* x, mbs_error* err) {
  if (!s || !x) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "store", "store: no store or no sample");
  const char* path = s->path;
  if (s->broken)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: an earlier write failed; sample %ld not stored",
                    path, x->index);
  if (x->index < 0 || x->index >= s->nsamples)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: sample %ld is outside 0..%ld", path,
                    x->index, s->nsamples - 1);
  if (x->index <= s->last)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, path,
                    "%s: sample %ld arrived after sample %ld: samples must be written in "
                    "increasing index order, each once", path, x->index, s->last);
  if (x->nframes_done < 0 || x->nframes_done > s->nframes)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: sample %ld: nframes_done = %d is outside "
                    "0..%d", path, x->index, x->nframes_done, s->nframes);
  if (x->nframes_done > 0 && s->nq > 0) {
    if (!x->traj)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: sample %ld: %d frames done but no "
                      "trajectories", path, x->index, x->nframes_done);
    for (int k = 0; k < s->nq; k++)
      if (!x->traj[k])
        return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: sample %ld: no values for quantity "
                        "'%s'", path, x->index, s->q[k].name);
  }
  int rc = MBS_OK;
  if (x->index >= s->block + s->spc) {
    if (s->dirty) {
      mbs_h5_quiet qz = mbs_h5_quiet_begin();
      rc = flush_block(s, err);
      mbs_h5_quiet_end(qz);
      if (rc) return rc;
    }
    s->block = x->index / s->spc * s->spc;
  }
  const size_t row = (size_t)(x->index - s->block);
  for (int j = 0; j < s->nparams; j++)
    s->b_params[row * (size_t)s->nparams + j] = x->params ? x->params[j] : NAN;
  s->b_code[row] = (int32_t)x->status;
  char* msg = s->b_message + row * MESSAGE_WIDTH;
  memset(msg, 0, MESSAGE_WIDTH);
  if (x->message) memcpy(msg, x->message, utf8_cut(x->message, MESSAGE_WIDTH));
  s->b_wall[row] = x->wall_time;
  s->b_steps[row] = (int64_t)x->steps;
  s->b_done[row] = 1;
  for (int k = 0; k < s->nq; k++) {
    store_quantity* q = &s->q[k];
    const size_t m = (size_t)x->nframes_done * (size_t)q->ncomp;
    double* dst = q->buf + row * (size_t)s->nframes * (size_t)q->ncomp;
    if (m) memcpy(dst, x->traj[k], m * sizeof(double));  // later frames stay NaN
    if (x->status != 0) continue;
    for (size_t i = 0; i < m; i++)
      if (!isnan(dst[i])) welford(&q->count[i], &q->mean[i], &q->m2[i], dst[i]);
  }
  for (int k = 0; k < s->nsc; k++) {
    store_scalar* c = &s->sc[k];
    const double v = x->scalars ? x->scalars[k] : NAN;
    c->buf[row] = v;
    if (x->status == 0 && !isnan(v)) welford(&c->count, &c->mean, &c->m2, v);
  }
  s->last = x->index;
  s->dirty = 1;
  return MBS_OK;
}

int mbs_store_truncate(mbs_store* s, long n, mbs_error* err) {
  if (!s) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "store", "store: no store");
  const char* path = s->path;
  if (n < 1 || n > s->nsamples || n <= s->last)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot end the sample axis at %ld "
                    "samples (it holds %ld, the last written is %ld)", path, n, s->nsamples,
                    s->last);
  if (s->broken)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: an earlier write failed; the file is incomplete",
                    path);
  if (n == s->nsamples) return MBS_OK;
  mbs_h5_quiet qz = mbs_h5_quiet_begin();
  // every dataset made and written at the old size (chunks may exceed the new one), then cut
  int rc = s->dirty ? flush_block(s, err) : MBS_OK;
  for (int k = 0; k < s->nq && !rc; k++)
    if (!s->q[k].created) rc = create_trajectory(s, &s->q[k], NULL, 0, err);
  s->nsamples = n;
  hid_t per_sample[] = {s->samples, s->params, s->code, s->message, s->wall, s->steps, s->done};
  for (size_t i = 0; i < sizeof per_sample / sizeof per_sample[0] && !rc; i++) {
    hsize_t dims[2] = {(hsize_t)n, (hsize_t)s->nparams};
    if (H5Dset_extent(per_sample[i], dims) < 0) rc = mbs_h5_fail(err, path, "shorten the sample axis");
  }
  for (int k = 0; k < s->nq && !rc; k++) {
    hsize_t dims[3] = {(hsize_t)n, (hsize_t)s->nframes, (hsize_t)s->q[k].ncomp};
    if (H5Dset_extent(s->q[k].dset, dims) < 0) rc = mbs_h5_fail(err, path, "shorten '%s'", s->q[k].name);
  }
  for (int k = 0; k < s->nsc && !rc; k++) {
    hsize_t dims[1] = {(hsize_t)n};
    if (H5Dset_extent(s->sc[k].dset, dims) < 0) rc = mbs_h5_fail(err, path, "shorten '%s'", s->sc[k].name);
  }
  if (rc) s->broken = 1;
  mbs_h5_quiet_end(qz);
  return rc;
}

int mbs_store_set_attribute(mbs_store* s, const char* key, const char* value, mbs_error* err) {
  if (!s || !key || !*key)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "store", "store: no store or no attribute name");
  if (!strcmp(key, "mbstudy_format"))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, s->path, "%s: the attribute 'mbstudy_format' is "
                    "reserved", s->path);
  mbs_h5_quiet qz = mbs_h5_quiet_begin();
  int rc = mbs_h5_attr_string(s->path, err, s->file, key, value);
  mbs_h5_quiet_end(qz);
  return rc;
}

// ------------------------------------------------------------------------------------------
// checkpoints and continuing a file

long mbs_store_checkpoint_samples(const mbs_store* s) { return s ? s->ckpt : 0; }

// fsync the folder of `path`, so that the file's name is as durable as its contents (some file
// systems cannot sync a folder: the file's own sync stands then)
static void sync_folder(const char* path) {
  const char* slash = strrchr(path, '/');
  char* dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  if (!dir) return;
  const int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  free(dir);
}

int mbs_store_sync(mbs_store* s, long* durable, mbs_error* err) {
  if (!s) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "store", "store: no store");
  const char* path = s->path;
  if (s->broken)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: an earlier write failed; the file is incomplete",
                    path);
  mbs_h5_quiet qz = mbs_h5_quiet_begin();
  int rc = MBS_OK;
  // the last sample has arrived: no later one can join its block, which is written now
  if (s->dirty && s->last == s->nsamples - 1) rc = flush_block(s, err);
  // every sample below the buffered block is in the file
  long d = s->block / s->ckpt * s->ckpt;
  if (!s->dirty && s->last == s->nsamples - 1) d = s->nsamples;
  if (rc == MBS_OK && d > s->durable) {
    int* fd = NULL;
    if (H5Fflush(s->file, H5F_SCOPE_GLOBAL) < 0)
      rc = mbs_h5_fail(err, path, "flush the file");
    else if (H5Fget_vfd_handle(s->file, H5P_DEFAULT, (void**)&fd) < 0 || !fd)
      rc = mbs_h5_fail(err, path, "get the file's descriptor");
    else if (fsync(*fd) != 0)
      rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot sync the file: %s", path, strerror(errno));
    if (rc) {
      s->broken = 1;  // what HDF5 holds of the file is unknown now
    } else {
      if (s->durable == 0) sync_folder(path);
      s->durable = d;
    }
  }
  mbs_h5_quiet_end(qz);
  if (durable) *durable = s->durable;
  return rc;
}

// whether `name` (a path from the root) exists, every group on its way included
static htri_t path_exists(hid_t file, const char* name) {
  char part[1100];
  const size_t n = strlen(name);
  if (n >= sizeof part) return 0;
  memcpy(part, name, n + 1);
  for (char* e = strchr(part, '/');; e = strchr(e + 1, '/')) {
    if (e) *e = '\0';
    const htri_t x = H5Lexists(file, part, H5P_DEFAULT);
    if (e) *e = '/';
    if (x <= 0 || !e) return x;
  }
}

// "20000 x 11 x 3"
static void format_dims(char* buf, size_t size, int rank, const hsize_t* dims) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < rank && k < size; i++)
    k += (size_t)snprintf(buf + k, size - k, "%s%llu", i ? " x " : "",
                          (unsigned long long)dims[i]);
}

// Open dataset `name` (a path from the root) into *out: it must hold values of `type`'s class
// and size (type < 0: any), with `rank` dimensions `dims` and, unless chunk is NULL, chunks
// `chunk`, as the study's layout makes them.
static int open_checked(mbs_store* s, const char* name, hid_t type, int rank,
                        const hsize_t* dims, const hsize_t* chunk, hid_t* out, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  hid_t ft = -1, sp = -1, dcpl = -1;
  hsize_t got[3] = {0, 0, 0}, gotc[3] = {0, 0, 0};
  char want_s[96], got_s[96];
  *out = -1;
  const htri_t e = path_exists(s->file, name);
  if (e <= 0) {
    H5Eclear2(H5E_DEFAULT);
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot continue it: it has no dataset "
                  "'/%s' (it was not made with this study's layout)", path, name);
    goto done;
  }
  H5TRY(*out = H5Dopen2(s->file, name, H5P_DEFAULT), "continue it: '/%s' cannot be opened",
        name);
  H5TRY(ft = H5Dget_type(*out), "get the type of '/%s'", name);
  if (type >= 0 &&
      (H5Tget_class(ft) != H5Tget_class(type) || H5Tget_size(ft) != H5Tget_size(type))) {
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot continue it: '/%s' holds values of "
                  "another type than this study's", path, name);
    goto done;
  }
  H5TRY(sp = H5Dget_space(*out), "get the dataspace of '/%s'", name);
  const int grank = H5Sget_simple_extent_ndims(sp);
  int same = grank == rank;
  if (same) H5Sget_simple_extent_dims(sp, got, NULL);
  for (int i = 0; same && i < rank; i++) same = got[i] == dims[i];
  if (!same) {
    format_dims(want_s, sizeof want_s, rank, dims);
    format_dims(got_s, sizeof got_s, grank > 0 && grank <= 3 ? grank : 0, got);
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot continue it: '/%s' is %s, this "
                  "study's would be %s", path, name, got_s, want_s);
    goto done;
  }
  if (chunk) {
    H5TRY(dcpl = H5Dget_create_plist(*out), "get the properties of '/%s'", name);
    same = H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 3, gotc) == rank;
    for (int i = 0; same && i < rank; i++) same = gotc[i] == chunk[i];
    if (!same) {
      H5Eclear2(H5E_DEFAULT);
      format_dims(want_s, sizeof want_s, rank, chunk);
      rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot continue it: '/%s' is not chunked "
                    "by %s as this study's file is", path, name, want_s);
      goto done;
    }
  }
done:
  if (rc) mbs_h5_close(out, H5Dclose);
  mbs_h5_close(&dcpl, H5Pclose);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&ft, H5Tclose);
  return rc;
}

// the group `name` holds the datasets of the layout and no other: `expect` of them
static int count_datasets(mbs_store* s, const char* name, long expect, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  mbs_h5_names l;
  memset(&l, 0, sizeof l);
  hid_t g = -1;
  H5TRY(g = H5Gopen2(s->file, name, H5P_DEFAULT), "continue it: '/%s' cannot be opened", name);
  if (mbs_h5_list_datasets(g, "", &l) < 0) {
    rc = l.nomem ? MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path)
                 : mbs_h5_fail(err, path, "list the datasets of '/%s'", name);
    goto done;
  }
  if (l.n != expect)
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot continue it: '/%s' holds %ld "
                  "datasets, this study's file %ld", path, name, l.n, expect);
done:
  mbs_h5_free_names(&l);
  mbs_h5_close(&g, H5Gclose);
  return rc;
}

// the root attribute mbstudy_format is this store's
static int check_format(mbs_store* s, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  hid_t a = -1, ft = -1, mt = -1;
  char v[16] = "";
  const htri_t e = H5Aexists(s->file, "mbstudy_format");
  H5TRY(e, "look for the attribute 'mbstudy_format'");
  if (e) {
    H5TRY(a = H5Aopen(s->file, "mbstudy_format", H5P_DEFAULT), "open 'mbstudy_format'");
    H5TRY(ft = H5Aget_type(a), "get the type of 'mbstudy_format'");
    if (H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) == 0 &&
        H5Tget_size(ft) < sizeof v) {
      H5TRY(mt = H5Tcopy(ft), "make a string type");
      H5TRY(H5Tset_size(mt, H5Tget_size(ft) + 1), "make a string type");
      H5TRY(H5Tset_strpad(mt, H5T_STR_NULLTERM), "make a string type");
      H5TRY(H5Aread(a, mt, v), "read 'mbstudy_format'");
    }
  }
  if (strcmp(v, FORMAT_VERSION))
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot continue it: it is not a study file "
                  "of format %s", path, FORMAT_VERSION);
done:
  mbs_h5_close(&mt, H5Tclose);
  mbs_h5_close(&ft, H5Tclose);
  mbs_h5_close(&a, H5Aclose);
  return rc;
}

// open every dataset the writer uses, each checked against the layout
static int open_layout(mbs_store* s, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  const hsize_t S = (hsize_t)s->nsamples, F = (hsize_t)s->nframes, P = (hsize_t)s->nparams;
  const hsize_t n1[1] = {S}, nf[1] = {F}, np[1] = {P}, nsp[2] = {S, P};
  const hsize_t cm[1] = {s->meta_chunk_meta}, cmsg[1] = {s->meta_chunk_message};
  const hsize_t cp[2] = {s->meta_chunk_params, P};
  char name[1100];
  H5TRY(s->message_type = mbs_h5_str_type(MESSAGE_WIDTH), "make the message string type");
  rc = open_checked(s, "samples", H5T_STD_I64LE, 1, n1, cm, &s->samples, err);
  if (!rc) rc = open_checked(s, "time", H5T_IEEE_F64LE, 1, nf, NULL, &s->time, err);
  if (!rc) rc = open_checked(s, "parameter_names", -1, 1, np, NULL, &s->pnames, err);
  if (!rc)
    rc = open_checked(s, "parameters", H5T_IEEE_F64LE, 2, nsp, s->nparams > 0 ? cp : NULL,
                      &s->params, err);
  if (!rc) rc = open_checked(s, "status/code", H5T_STD_I32LE, 1, n1, cm, &s->code, err);
  if (!rc)
    rc = open_checked(s, "status/message", s->message_type, 1, n1, cmsg, &s->message, err);
  if (!rc) rc = open_checked(s, "status/wall_time", H5T_IEEE_F64LE, 1, n1, cm, &s->wall, err);
  if (!rc) rc = open_checked(s, "status/steps", H5T_STD_I64LE, 1, n1, cm, &s->steps, err);
  if (!rc) rc = open_checked(s, "status/done", H5T_STD_U8LE, 1, n1, cm, &s->done, err);
  for (int k = 0; k < s->nq && !rc; k++) {
    store_quantity* q = &s->q[k];
    const hsize_t dims[3] = {S, F, (hsize_t)q->ncomp}, nc[1] = {(hsize_t)q->ncomp};
    snprintf(name, sizeof name, "trajectories/%s_components", q->name);
    rc = open_checked(s, name, -1, 1, nc, NULL, &q->comps, err);
    // made with the first block, which a file holding a sample has written
    snprintf(name, sizeof name, "trajectories/%s", q->name);
    if (!rc) rc = open_checked(s, name, H5T_IEEE_F64LE, 3, dims, q->chunk, &q->dset, err);
  }
  for (int k = 0; k < s->nsc && !rc; k++) {
    snprintf(name, sizeof name, "scalars/%s", s->sc[k].name);
    rc = open_checked(s, name, H5T_IEEE_F64LE, 1, n1, cm, &s->sc[k].dset, err);
  }
  if (!rc) rc = count_datasets(s, "trajectories", 2L * s->nq, err);
  if (!rc) rc = count_datasets(s, "scalars", s->nsc, err);
done:
  return rc;
}

// q->compressed as the dataset's filters say
static int read_compression(mbs_store* s, store_quantity* q, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  hid_t dcpl = -1;
  H5TRY(dcpl = H5Dget_create_plist(q->dset), "get the properties of '/trajectories/%s'",
        q->name);
  const int nf = H5Pget_nfilters(dcpl);
  H5TRY(nf, "get the filters of '/trajectories/%s'", q->name);
  q->compressed = 0;
  for (int i = 0; i < nf; i++) {
    unsigned flags = 0, cd[8];
    size_t ncd = sizeof cd / sizeof cd[0];
    const H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
    H5TRY(f, "get the filters of '/trajectories/%s'", q->name);
    if (f == H5Z_FILTER_DEFLATE) q->compressed = 1;
  }
  q->created = 1;
done:
  mbs_h5_close(&dcpl, H5Pclose);
  return rc;
}

// read rows [first, first + rows) of dataset d (all of its other axes) into buf
static int read_rows(mbs_store* s, hid_t d, hid_t memtype, long first, long rows, void* buf,
                     const char* name, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  hid_t fs = -1, ms = -1;
  hsize_t dims[3] = {0, 0, 0}, start[3] = {0, 0, 0}, count[3];
  H5TRY(fs = H5Dget_space(d), "get the dataspace of '%s'", name);
  const int rank = H5Sget_simple_extent_dims(fs, dims, NULL);
  H5TRY(rank, "get the dimensions of '%s'", name);
  start[0] = (hsize_t)first;
  count[0] = (hsize_t)rows;
  for (int i = 1; i < rank; i++) count[i] = dims[i];
  for (int i = 0; i < rank; i++)
    if (count[i] == 0) goto done;
  H5TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL),
        "select samples %ld..%ld of '%s'", first, first + rows - 1, name);
  H5TRY(ms = H5Screate_simple(rank, count, NULL), "make a memory dataspace for '%s'", name);
  H5TRY(H5Dread(d, memtype, ms, fs, H5P_DEFAULT, buf),
        "continue it: samples %ld..%ld of '%s' cannot be read", first, first + rows - 1, name);
done:
  mbs_h5_close(&ms, H5Sclose);
  mbs_h5_close(&fs, H5Sclose);
  return rc;
}

// Read samples 0 .. n-1 back a block at a time, which verifies their chunks' checksums: each
// must have been written (/status/done = 1). The statistics accumulate from them as
// mbs_store_write_sample accumulates them (in sample order, status 0, NaN skipped), and
// `info` counts the failed ones.
static int verify_prefix(mbs_store* s, long n, mbs_store_prefix* info, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  char name[1100];
  for (long first = 0; first < n && !rc; first += s->spc) {
    const long rows = n - first < s->spc ? n - first : s->spc;
    // /status/done first: a sample never written is reported as such
    rc = read_rows(s, s->done, H5T_NATIVE_UINT8, first, rows, s->b_done, "/status/done", err);
    for (long r = 0; !rc && r < rows; r++)
      if (s->b_done[r] != 1)
        rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot continue it: '/status/done' is %d for "
                      "sample %ld: samples 0..%ld were not all written", path, s->b_done[r],
                      first + r, n - 1);
    if (!rc) rc = read_rows(s, s->samples, H5T_NATIVE_INT64, first, rows, s->b_steps,
                            "/samples", err);
    for (long r = 0; !rc && r < rows; r++)
      if (s->b_steps[r] != first + r)
        rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot continue it: '/samples' holds %lld "
                      "for sample %ld", path, (long long)s->b_steps[r], first + r);
    if (!rc) rc = read_rows(s, s->params, H5T_NATIVE_DOUBLE, first, rows, s->b_params,
                            "/parameters", err);
    if (!rc) rc = read_rows(s, s->code, H5T_NATIVE_INT32, first, rows, s->b_code,
                            "/status/code", err);
    if (!rc) rc = read_rows(s, s->message, s->message_type, first, rows, s->b_message,
                            "/status/message", err);
    if (!rc) rc = read_rows(s, s->wall, H5T_NATIVE_DOUBLE, first, rows, s->b_wall,
                            "/status/wall_time", err);
    if (!rc) rc = read_rows(s, s->steps, H5T_NATIVE_INT64, first, rows, s->b_steps,
                            "/status/steps", err);
    for (int k = 0; k < s->nq && !rc; k++) {
      snprintf(name, sizeof name, "/trajectories/%s", s->q[k].name);
      rc = read_rows(s, s->q[k].dset, H5T_NATIVE_DOUBLE, first, rows, s->q[k].buf, name, err);
    }
    for (int k = 0; k < s->nsc && !rc; k++) {
      snprintf(name, sizeof name, "/scalars/%s", s->sc[k].name);
      rc = read_rows(s, s->sc[k].dset, H5T_NATIVE_DOUBLE, first, rows, s->sc[k].buf, name, err);
    }
    for (long r = 0; !rc && r < rows; r++) {
      if (s->b_code[r] != 0) {
        if (info->failed++ == 0) {
          const char* msg = s->b_message + (size_t)r * MESSAGE_WIDTH;
          size_t len = strnlen(msg, MESSAGE_WIDTH);
          if (len >= sizeof info->first_message) len = sizeof info->first_message - 1;
          memcpy(info->first_message, msg, len);
          info->first_message[len] = '\0';
          info->first_failed = first + r;
        }
        continue;
      }
      for (int k = 0; k < s->nq; k++) {
        store_quantity* q = &s->q[k];
        const size_t m = (size_t)s->nframes * (size_t)q->ncomp;
        const double* v = q->buf + (size_t)r * m;
        for (size_t i = 0; i < m; i++)
          if (!isnan(v[i])) welford(&q->count[i], &q->mean[i], &q->m2[i], v[i]);
      }
      for (int k = 0; k < s->nsc; k++) {
        store_scalar* c = &s->sc[k];
        if (!isnan(c->buf[r])) welford(&c->count, &c->mean, &c->m2, c->buf[r]);
      }
    }
  }
  reset_block(s);
  return rc;
}

// Drop what the file holds from sample n on (n < S, a multiple of every chunk length along
// samples): cutting the sample axis at n removes those chunks without reading them (a crash
// may have left them damaged, and an uninterrupted writer never wrote what they hold), and
// setting it back to S leaves fill values there. /samples keeps its values.
static int drop_after(mbs_store* s, long n, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  const int nd = 6 + s->nq + s->nsc;
  hid_t* d = malloc((size_t)nd * sizeof *d);
  hid_t dcpl = -1;
  NOMEM(d);
  const hid_t fixed[6] = {s->params, s->code, s->message, s->wall, s->steps, s->done};
  memcpy(d, fixed, sizeof fixed);
  for (int k = 0; k < s->nq; k++) d[6 + k] = s->q[k].dset;
  for (int k = 0; k < s->nsc; k++) d[6 + s->nq + k] = s->sc[k].dset;
  for (int i = 0; i < nd; i++) {
    H5TRY(dcpl = H5Dget_create_plist(d[i]), "get dataset properties");
    const int chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
    mbs_h5_close(&dcpl, H5Pclose);
    if (!chunked) continue;  // /parameters without parameters
    hsize_t dims[3] = {0, 0, 0};
    hid_t sp = H5Dget_space(d[i]);
    H5TRY(sp, "get a dataspace");
    H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    dims[0] = (hsize_t)n;
    H5TRY(H5Dset_extent(d[i], dims), "drop the samples from %ld on", n);
    dims[0] = (hsize_t)s->nsamples;
    H5TRY(H5Dset_extent(d[i], dims), "drop the samples from %ld on", n);
  }
done:
  mbs_h5_close(&dcpl, H5Pclose);
  free(d);
  return rc;
}

static herr_t take_scale(hid_t did, unsigned dim, hid_t dsid, void* data) {
  (void)did;
  (void)dim;
  if (H5Iinc_ref(dsid) < 0) return -1;
  *(hid_t*)data = dsid;
  return 1;
}

// Remove /statistics (written when a stopped run closed the file; close writes them again),
// its datasets first detached from the dimension scales they use, so that the scales list only
// the datasets that exist.
static int drop_statistics(mbs_store* s, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  mbs_h5_names l;
  memset(&l, 0, sizeof l);
  hid_t g = -1, d = -1, sc = -1, sp = -1;
  const htri_t e = H5Lexists(s->file, "statistics", H5P_DEFAULT);
  H5TRY(e, "look for '/statistics'");
  if (!e) goto done;
  H5TRY(g = H5Gopen2(s->file, "statistics", H5P_DEFAULT), "open '/statistics'");
  if (mbs_h5_list_datasets(g, "", &l) < 0) {
    rc = l.nomem ? MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path)
                 : mbs_h5_fail(err, path, "list the datasets of '/statistics'");
    goto done;
  }
  for (long i = 0; i < l.n; i++) {
    H5TRY(d = H5Dopen2(g, l.v[i], H5P_DEFAULT), "open '/statistics/%s'", l.v[i]);
    H5TRY(sp = H5Dget_space(d), "get the dataspace of '/statistics/%s'", l.v[i]);
    const int rank = H5Sget_simple_extent_ndims(sp);
    H5TRY(rank, "get the rank of '/statistics/%s'", l.v[i]);
    mbs_h5_close(&sp, H5Sclose);
    for (int dim = 0; dim < rank; dim++) {
      for (;;) {
        sc = -1;
        const herr_t r = H5DSiterate_scales(d, (unsigned)dim, NULL, take_scale, &sc);
        H5TRY(r, "list the scales of '/statistics/%s'", l.v[i]);
        if (sc < 0) break;
        H5TRY(H5DSdetach_scale(d, sc, (unsigned)dim), "detach a scale from '/statistics/%s'",
              l.v[i]);
        mbs_h5_close(&sc, H5Dclose);
      }
    }
    mbs_h5_close(&d, H5Dclose);
  }
  mbs_h5_close(&g, H5Gclose);
  H5TRY(H5Ldelete(s->file, "statistics", H5P_DEFAULT), "remove '/statistics'");
done:
  mbs_h5_free_names(&l);
  mbs_h5_close(&sc, H5Dclose);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&d, H5Dclose);
  mbs_h5_close(&g, H5Gclose);
  return rc;
}

// the file opened for writing, made ready to take sample n: its trajectories' compression read,
// what it holds from n on dropped, the statistics of an earlier close removed, the root
// attributes of this run written
static int continue_file(mbs_store* s, const mbs_store_layout* L, long n, hid_t fapl,
                         mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  H5TRY(s->file = H5Fopen(path, H5F_ACC_RDWR, fapl), "open the file for writing");
  rc = hold_metadata(s, err);
  if (rc) goto done;
  H5TRY(s->gcpl = H5Pcreate(H5P_GROUP_CREATE), "make group properties");
  H5TRY(H5Pset_obj_track_times(s->gcpl, 0), "set group properties");
  rc = open_layout(s, err);
  for (int k = 0; k < s->nq && !rc; k++) rc = read_compression(s, &s->q[k], err);
  if (!rc && n < s->nsamples) rc = drop_after(s, n, err);
  if (!rc) rc = drop_statistics(s, err);
  // this run's provenance, then the format version (as mbs_store_create writes them)
  for (int i = 0; i < L->nattributes && !rc; i++)
    rc = mbs_h5_attr_string(path, err, s->file, L->attributes[i].key, L->attributes[i].value);
  if (!rc) rc = mbs_h5_attr_string(path, err, s->file, "mbstudy_format", FORMAT_VERSION);
  // the marks of a stopped run's partial file
  const char* marks[] = {"incomplete", "merged_samples"};
  for (int i = 0; i < 2 && !rc; i++) {
    const htri_t e = H5Aexists(s->file, marks[i]);
    H5TRY(e, "look for the attribute '%s'", marks[i]);
    if (e) H5TRY(H5Adelete(s->file, marks[i]), "remove the attribute '%s'", marks[i]);
  }
done:
  return rc;
}

mbs_store* mbs_store_reopen(const char* path, const mbs_store_layout* layout, long n,
                            mbs_store_prefix* info, mbs_error* err) {
  if (!path || !*path || !layout) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, "store", "store: no file name or no layout");
    return NULL;
  }
  if (check_layout(path, layout, err)) return NULL;
  mbs_store* s = new_store(path, layout);
  if (!s) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory for the store's buffers", path);
    return NULL;
  }
  if (n < 1 || n > s->nsamples || (n % s->ckpt != 0 && n != s->nsamples)) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: cannot continue it after %ld samples: it is "
             "continued after a multiple of %ld samples (its checkpoint) or after all %ld", path,
             n, s->ckpt, s->nsamples);
    free_store(s);
    return NULL;
  }
  mbs_store_prefix pre;
  memset(&pre, 0, sizeof pre);
  pre.first_failed = -1;
  mbs_h5_quiet qz = mbs_h5_quiet_begin();
  hid_t fapl = -1;
  int rc = file_access(path, err, &fapl);
  // read-only first: every check and the statistics, so that a refusal leaves the file as it
  // was (closing a file opened for writing would already cut it to its allocated size)
  if (!rc && (s->file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0)
    rc = mbs_h5_fail(err, path, "continue it: it cannot be opened");
  if (!rc) rc = check_format(s, err);
  if (!rc) rc = open_layout(s, err);
  if (!rc) rc = verify_prefix(s, n, &pre, err);
  close_all(s);
  mbs_h5_close(&s->file, H5Fclose);
  if (!rc) rc = continue_file(s, layout, n, fapl, err);
  mbs_h5_close(&fapl, H5Pclose);
  if (rc) {
    close_all(s);
    mbs_h5_close(&s->file, H5Fclose);
    H5Eclear2(H5E_DEFAULT);
    free_store(s);
    s = NULL;
  } else {
    // as if samples 0 .. n-1 had just been written and synced
    s->block = n;
    s->last = n - 1;
    s->durable = n;
    s->dirty = 0;
    if (info) *info = pre;
  }
  mbs_h5_quiet_end(qz);
  return s;
}

// ------------------------------------------------------------------------------------------
// statistics at close

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// Rearrange x[lo..hi] so that x[k] holds the value of rank k, with no larger value before it and
// no smaller value after it (quickselect, median-of-three pivots; sorts after too many rounds).
// Put the order statistics of ranks r[0..nr-1] (ascending, within lo..hi) in place: one
// partition serves every rank on its side, so k ranks cost about n log k, not k n.
static void multiselect(double* x, long lo, long hi, const long* r, int nr, int depth) {
  while (nr > 0 && hi > lo) {
    if (depth++ > 64) {  // pathological pivots: sort what is left
      qsort(x + lo, (size_t)(hi - lo + 1), sizeof(double), cmp_double);
      return;
    }
    const long mid = lo + (hi - lo) / 2;
    double t;
#define SWAP_(a, b) (t = x[a], x[a] = x[b], x[b] = t)
    if (x[mid] < x[lo]) SWAP_(mid, lo);
    if (x[hi] < x[lo]) SWAP_(hi, lo);
    if (x[hi] < x[mid]) SWAP_(hi, mid);
    const double pivot = x[mid];
    long i = lo, j = hi;
    while (i <= j) {
      while (x[i] < pivot) i++;
      while (x[j] > pivot) j--;
      if (i <= j) {
        SWAP_(i, j);
        i++;
        j--;
      }
    }
#undef SWAP_
    // ranks <= j are left of the split, ranks >= i right of it; between, x equals the pivot
    int nl = 0;
    while (nl < nr && r[nl] <= j) nl++;
    int nrr = nr;
    int first_right = nl;
    while (first_right < nr && r[first_right] < i) first_right++;
    nrr = nr - first_right;
    // recurse into the side with fewer ranks, loop on the other
    if (nl <= nrr) {
      multiselect(x, lo, j, r, nl, depth);
      lo = i;
      r += first_right;
      nr = nrr;
    } else {
      multiselect(x, i, hi, r + first_right, nrr, depth);
      hi = j;
      nr = nl;
    }
  }
}

// numpy's default ("linear") percentiles of the n >= 1 values x (reordered) at the levels p[]
// (percent): virtual index h = (n - 1) p / 100 between the order statistics i = floor(h) and
// i + 1, interpolated with numpy's two-sided formula (_lerp), so results match numpy's bits.
// The order statistics come from one multiple selection.
static void percentiles_linear(double* x, long n, const double* p, int np, double* out,
                               size_t out_stride) {
  long ranks[2 * 64];
  int nr = 0;
  for (int l = 0; l < np; l++) {
    const double h = (double)(n - 1) * (p[l] / 100.0);
    long i = (long)floor(h);
    if (i < 0) i = 0;
    if (i > n - 1) i = n - 1;
    const long j = i + 1 < n ? i + 1 : n - 1;
    if (nr + 2 > (int)(sizeof ranks / sizeof ranks[0])) {  // many levels: sort once
      qsort(x, (size_t)n, sizeof(double), cmp_double);
      nr = -1;
      break;
    }
    ranks[nr++] = i;
    ranks[nr++] = j;
  }
  if (nr > 0) {
    // ascending distinct ranks, each selected in the part right of the previous one
    for (int a = 1; a < nr; a++)
      for (int b = a; b > 0 && ranks[b - 1] > ranks[b]; b--) {
        const long t = ranks[b];
        ranks[b] = ranks[b - 1];
        ranks[b - 1] = t;
      }
    int nd = 0;  // distinct
    for (int a = 0; a < nr; a++)
      if (a == 0 || ranks[a] != ranks[a - 1]) ranks[nd++] = ranks[a];
    multiselect(x, 0, n - 1, ranks, nd, 0);
  }
  for (int l = 0; l < np; l++) {
    const double h = (double)(n - 1) * (p[l] / 100.0);
    const double lo = floor(h);
    long i = (long)lo;
    if (i < 0) i = 0;
    if (i > n - 1) i = n - 1;
    const long j = i + 1 < n ? i + 1 : n - 1;
    const double g = h - lo, a = x[i], b = x[j], d = b - a;
    out[(size_t)l * out_stride] = g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
  }
}

// ok[i] = 1 when sample i was written with status 0; *nok receives how many
static int read_mask(mbs_store* s, uint8_t* ok, long* nok, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  const long piece = 65536;
  int32_t* code = malloc((size_t)piece * sizeof *code);
  uint8_t* done = malloc((size_t)piece);
  hid_t fs = -1, ms = -1;
  *nok = 0;
  NOMEM(code);
  NOMEM(done);
  for (long first = 0; first < s->nsamples; first += piece) {
    hsize_t start[1] = {(hsize_t)first};
    hsize_t count[1] = {(hsize_t)(s->nsamples - first < piece ? s->nsamples - first : piece)};
    H5TRY(ms = H5Screate_simple(1, count, NULL), "make a memory dataspace");
    H5TRY(fs = H5Dget_space(s->code), "get the dataspace of '/status/code'");
    H5TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL),
          "select in '/status/code'");
    H5TRY(H5Dread(s->code, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, code),
          "read '/status/code' back");
    H5TRY(H5Dread(s->done, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, done),
          "read '/status/done' back");
    mbs_h5_close(&fs, H5Sclose);
    mbs_h5_close(&ms, H5Sclose);
    for (hsize_t i = 0; i < count[0]; i++) {
      ok[first + (long)i] = done[i] == 1 && code[i] == 0;
      *nok += ok[first + (long)i];
    }
  }
done:
  mbs_h5_close(&fs, H5Sclose);
  mbs_h5_close(&ms, H5Sclose);
  free(code);
  free(done);
  return rc;
}

static size_t percentile_budget(void) {
  const char* e = getenv(PERCENTILE_MEMORY_ENV);
  if (e && *e) {
    char* end = NULL;
    long long v = strtoll(e, &end, 10);
    if (end && *end == '\0' && v > 0) return (size_t)v;
  }
  return (size_t)PERCENTILE_MEMORY;
}

// Percentiles of every column of `src` (as column_percentiles) in memory independent of the
// number of samples: the data is read again for each pass of the selection (pselect.h).
static int column_percentiles_select(mbs_store* s, hid_t src, int rank, long rows, int nframes,
                                     int ncomp, const uint8_t* ok, hid_t out, const char* name,
                                     size_t budget, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  const long m = (long)nframes * ncomp;
  mbs_pselect* sel = mbs_pselect_create(m, s->pct, s->npct, 0, budget);
  double* rbuf = malloc((size_t)rows * (size_t)m * sizeof(double));
  double* obuf = malloc((size_t)s->npct * (size_t)m * sizeof(double));
  hid_t fs = -1, ms = -1;
  NOMEM(sel);
  NOMEM(rbuf);
  NOMEM(obuf);
  int more;
  while ((more = mbs_pselect_begin_pass(sel)) == 1) {
    for (long s0 = 0; s0 < s->nsamples; s0 += rows) {
      const long rn = s->nsamples - s0 < rows ? s->nsamples - s0 : rows;
      long any = 0;
      for (long r = 0; r < rn && !any; r++) any = ok[s0 + r];
      if (!any) continue;
      hsize_t start[3] = {(hsize_t)s0, 0, 0};
      hsize_t count[3] = {(hsize_t)rn, (hsize_t)nframes, (hsize_t)ncomp};
      H5TRY(fs = H5Dget_space(src), "get the dataspace of '%s'", name);
      H5TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), "select in '%s'",
            name);
      H5TRY(ms = H5Screate_simple(rank, count, NULL), "make a memory dataspace");
      H5TRY(H5Dread(src, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, rbuf),
            "read '%s' back for percentiles", name);
      mbs_h5_close(&fs, H5Sclose);
      mbs_h5_close(&ms, H5Sclose);
      for (long r = 0; r < rn; r++)
        if (ok[s0 + r]) mbs_pselect_row(sel, rbuf + (size_t)r * (size_t)m, 1);
    }
    if (mbs_pselect_end_pass(sel) != 0) break;
  }
  if (more != 0) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory for the percentiles of '%s'",
                  path, name);
    goto done;
  }
  mbs_pselect_result(sel, obuf, (size_t)m);
  H5TRY(fs = H5Dget_space(out), "get the dataspace of the percentiles of '%s'", name);
  H5TRY(H5Dwrite(out, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, obuf),
        "write the percentiles of '%s'", name);
done:
  mbs_h5_close(&fs, H5Sclose);
  mbs_h5_close(&ms, H5Sclose);
  mbs_pselect_free(sel);
  free(rbuf);
  free(obuf);
  return rc;
}

// Percentiles of every (frame, component) column of `src` (rank 3: samples x nframes x ncomp,
// or rank 1: samples) over the samples marked ok, NaN values skipped, written to `out`
// (npct x nframes x ncomp, or npct). Columns are gathered in blocks of frames (and components)
// holding at most max(budget, 8 nok) bytes; `src` is read `rows` samples at a time.
static int column_percentiles(mbs_store* s, hid_t src, int rank, long rows, int nframes,
                              int ncomp, const uint8_t* ok, long nok, hid_t out,
                              const char* name, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  const size_t budget = percentile_budget();
  const long per_col = nok > 0 ? nok : 1;
  // the good samples of all columns do not fit: select in passes, in bounded memory
  if ((size_t)per_col * sizeof(double) * (size_t)nframes * (size_t)ncomp > budget)
    return column_percentiles_select(s, src, rank, rows, nframes, ncomp, ok, out, name,
                                     budget < SELECT_MEMORY ? budget : SELECT_MEMORY, err);
  long ncols = (long)(budget / (sizeof(double) * (size_t)per_col));
  if (ncols < 1) ncols = 1;
  long fb, cb;
  if (ncols >= ncomp) {
    cb = ncomp;
    fb = ncols / ncomp;
    if (fb > nframes) fb = nframes;
  } else {
    fb = 1;
    cb = ncols;
  }
  const size_t blk = (size_t)fb * (size_t)cb;
  double* cols = malloc(blk * (size_t)per_col * sizeof(double));
  long* cnt = malloc(blk * sizeof(long));
  double* rbuf = malloc((size_t)rows * blk * sizeof(double));
  double* obuf = malloc((size_t)s->npct * blk * sizeof(double));
  hid_t fs = -1, ms = -1, ofs = -1, oms = -1;
  NOMEM(cols);
  NOMEM(cnt);
  NOMEM(rbuf);
  NOMEM(obuf);
  for (long f0 = 0; f0 < nframes; f0 += fb) {
    const long fn = nframes - f0 < fb ? nframes - f0 : fb;
    for (long c0 = 0; c0 < ncomp; c0 += cb) {
      const long cn = ncomp - c0 < cb ? ncomp - c0 : cb;
      const long m = fn * cn;
      memset(cnt, 0, (size_t)m * sizeof(long));
      for (long s0 = 0; nok > 0 && s0 < s->nsamples; s0 += rows) {
        const long rn = s->nsamples - s0 < rows ? s->nsamples - s0 : rows;
        long any = 0;
        for (long r = 0; r < rn && !any; r++) any = ok[s0 + r];
        if (!any) continue;
        hsize_t start[3] = {(hsize_t)s0, (hsize_t)f0, (hsize_t)c0};
        hsize_t count[3] = {(hsize_t)rn, (hsize_t)fn, (hsize_t)cn};
        H5TRY(fs = H5Dget_space(src), "get the dataspace of '%s'", name);
        H5TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL),
              "select in '%s'", name);
        H5TRY(ms = H5Screate_simple(rank, count, NULL), "make a memory dataspace");
        H5TRY(H5Dread(src, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, rbuf),
              "read '%s' back for percentiles", name);
        mbs_h5_close(&fs, H5Sclose);
        mbs_h5_close(&ms, H5Sclose);
        for (long r = 0; r < rn; r++) {
          if (!ok[s0 + r]) continue;
          const double* v = rbuf + (size_t)r * (size_t)m;
          for (long j = 0; j < m; j++)
            if (!isnan(v[j])) cols[(size_t)j * (size_t)per_col + (size_t)cnt[j]++] = v[j];
        }
      }
      // columns are independent: when the study has finished computing, its cores are free
#pragma omp parallel for schedule(dynamic, 16)
      for (long j = 0; j < m; j++) {
        if (cnt[j] > 0)
          percentiles_linear(cols + (size_t)j * (size_t)per_col, cnt[j], s->pct, s->npct,
                             obuf + j, (size_t)m);
        else
          for (int p = 0; p < s->npct; p++) obuf[(size_t)p * (size_t)m + (size_t)j] = NAN;
      }
      hsize_t ostart[3] = {0, (hsize_t)f0, (hsize_t)c0};
      hsize_t ocount[3] = {(hsize_t)s->npct, (hsize_t)fn, (hsize_t)cn};
      H5TRY(ofs = H5Dget_space(out), "get the dataspace of the percentiles of '%s'", name);
      H5TRY(H5Sselect_hyperslab(ofs, H5S_SELECT_SET, ostart, NULL, ocount, NULL),
            "select in the percentiles of '%s'", name);
      H5TRY(oms = H5Screate_simple(rank, ocount, NULL), "make a memory dataspace");
      H5TRY(H5Dwrite(out, H5T_NATIVE_DOUBLE, oms, ofs, H5P_DEFAULT, obuf),
            "write the percentiles of '%s'", name);
      mbs_h5_close(&ofs, H5Sclose);
      mbs_h5_close(&oms, H5Sclose);
    }
  }
done:
  mbs_h5_close(&fs, H5Sclose);
  mbs_h5_close(&ms, H5Sclose);
  mbs_h5_close(&ofs, H5Sclose);
  mbs_h5_close(&oms, H5Sclose);
  free(cols);
  free(cnt);
  free(rbuf);
  free(obuf);
  return rc;
}

// count, mean, std (n - 1) and percentile datasets in group `g` for m = nframes x ncomp
// values (rank 2) or one value (rank 0)
static int write_moments(mbs_store* s, hid_t g, int rank, const hsize_t* dims, const int64_t* n,
                         const double* mean, const double* m2, size_t m, const char* unit,
                         hid_t comps, const char* name, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  hid_t dc = -1, dm = -1, ds = -1;
  double* mu = alloc_f64(m);
  double* sd = alloc_f64(m);
  NOMEM(mu);
  NOMEM(sd);
  for (size_t i = 0; i < m; i++) {
    mu[i] = n[i] > 0 ? mean[i] : NAN;
    sd[i] = n[i] > 1 ? sqrt(m2[i] / (double)(n[i] - 1)) : NAN;
  }
  rc = make_dataset(path, err, g, s->gcpl, "count", H5T_STD_I64LE, rank, dims, NULL, 0, NULL,
                    &dc);
  if (!rc) rc = write_all(path, err, dc, H5T_NATIVE_INT64, n, name);
  if (!rc) rc = make_dataset(path, err, g, s->gcpl, "mean", H5T_IEEE_F64LE, rank, dims, NULL, 0,
                             NULL, &dm);
  if (!rc) rc = write_all(path, err, dm, H5T_NATIVE_DOUBLE, mu, name);
  if (!rc) rc = mbs_h5_attr_utf8(path, err, dm, "units", unit);
  if (!rc) rc = make_dataset(path, err, g, s->gcpl, "std", H5T_IEEE_F64LE, rank, dims, NULL, 0,
                             NULL, &ds);
  if (!rc) rc = write_all(path, err, ds, H5T_NATIVE_DOUBLE, sd, name);
  if (!rc) rc = mbs_h5_attr_utf8(path, err, ds, "units", unit);
  if (!rc) rc = attr_int64(path, err, ds, "ddof", 1);
  if (!rc && rank == 2) {
    hid_t d3[3] = {dc, dm, ds};
    for (int i = 0; i < 3 && !rc; i++) {
      rc = attach(path, err, d3[i], s->time, 0, "time", name);
      if (!rc) rc = attach(path, err, d3[i], comps, 1, "component", name);
    }
  }
done:
  mbs_h5_close(&dc, H5Dclose);
  mbs_h5_close(&dm, H5Dclose);
  mbs_h5_close(&ds, H5Dclose);
  free(mu);
  free(sd);
  return rc;
}

static int write_statistics(mbs_store* s, mbs_error* err) {
  const char* path = s->path;
  int rc = 0;
  hid_t gs = -1, g = -1, dp = -1, dq = -1;
  long nok = 0;
  uint8_t* ok = malloc((size_t)s->nsamples);
  NOMEM(ok);
  rc = read_mask(s, ok, &nok, err);
  if (rc) goto done;
  rc = make_group(path, err, s->file, s->gcpl, "statistics", &gs);
  if (rc) goto done;
  rc = attr_int64(path, err, gs, "samples_used", nok);
  if (!rc)
    rc = mbs_h5_attr_string(path, err, gs, "selection",
                         "samples with /status/done = 1 and /status/code = 0; NaN values skipped");
  if (rc) goto done;
  if (s->npct > 0) {
    hsize_t dims[1] = {(hsize_t)s->npct};
    rc = make_dataset(path, err, gs, s->gcpl, "percentiles", H5T_IEEE_F64LE, 1, dims, NULL, 0,
                      NULL, &dp);
    if (!rc) rc = write_all(path, err, dp, H5T_NATIVE_DOUBLE, s->pct, "/statistics/percentiles");
    if (!rc) rc = mbs_h5_attr_utf8(path, err, dp, "units", "%");
    if (rc) goto done;
    H5TRY(H5DSset_scale(dp, "percentiles"), "make '/statistics/percentiles' a dimension scale");
  }
  for (int k = 0; k < s->nq && !rc; k++) {
    store_quantity* q = &s->q[k];
    char full[1100];
    snprintf(full, sizeof full, "/trajectories/%s", q->name);
    rc = make_group(path, err, gs, s->gcpl, q->name, &g);
    if (rc) break;
    hsize_t dims[3] = {(hsize_t)s->npct, (hsize_t)s->nframes, (hsize_t)q->ncomp};
    rc = write_moments(s, g, 2, dims + 1, q->count, q->mean, q->m2,
                       (size_t)s->nframes * (size_t)q->ncomp, q->unit, q->comps, full, err);
    if (!rc && s->npct > 0) {
      rc = make_dataset(path, err, g, s->gcpl, "percentile", H5T_IEEE_F64LE, 3, dims, NULL, 0,
                        NULL, &dq);
      if (!rc) rc = mbs_h5_attr_utf8(path, err, dq, "units", q->unit);
      if (!rc) rc = mbs_h5_attr_string(path, err, dq, "method", "linear");
      if (!rc) rc = attach(path, err, dq, dp, 0, "percentile", full);
      if (!rc) rc = attach(path, err, dq, s->time, 1, "time", full);
      if (!rc) rc = attach(path, err, dq, q->comps, 2, "component", full);
      if (!rc)
        rc = column_percentiles(s, q->dset, 3, (long)q->chunk[0], s->nframes, q->ncomp, ok, nok,
                                dq, full, err);
      mbs_h5_close(&dq, H5Dclose);
    }
    mbs_h5_close(&g, H5Gclose);
  }
  for (int k = 0; k < s->nsc && !rc; k++) {
    store_scalar* c = &s->sc[k];
    char gname[1100], full[1100];
    snprintf(gname, sizeof gname, "scalars/%s", c->name);
    snprintf(full, sizeof full, "/scalars/%s", c->name);
    rc = make_group(path, err, gs, s->gcpl, gname, &g);
    if (rc) break;
    rc = write_moments(s, g, 0, NULL, &c->count, &c->mean, &c->m2, 1, c->unit, -1, full, err);
    if (!rc && s->npct > 0) {
      hsize_t dims[1] = {(hsize_t)s->npct};
      rc = make_dataset(path, err, g, s->gcpl, "percentile", H5T_IEEE_F64LE, 1, dims, NULL, 0,
                        NULL, &dq);
      if (!rc) rc = mbs_h5_attr_utf8(path, err, dq, "units", c->unit);
      if (!rc) rc = mbs_h5_attr_string(path, err, dq, "method", "linear");
      if (!rc) rc = attach(path, err, dq, dp, 0, "percentile", full);
      if (!rc)
        rc = column_percentiles(s, c->dset, 1, (long)c->chunk, 1, 1, ok, nok, dq, full, err);
      mbs_h5_close(&dq, H5Dclose);
    }
    mbs_h5_close(&g, H5Gclose);
  }
done:
  mbs_h5_close(&dq, H5Dclose);
  mbs_h5_close(&dp, H5Dclose);
  mbs_h5_close(&g, H5Gclose);
  mbs_h5_close(&gs, H5Gclose);
  free(ok);
  return rc;
}

int mbs_store_close(mbs_store* s, mbs_error* err) {
  if (!s) return MBS_OK;
  mbs_h5_quiet qz = mbs_h5_quiet_begin();
  const char* path = s->path;
  int rc = MBS_OK;
  if (s->broken)
    rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: an earlier write failed; the file is incomplete",
                  path);
  if (!rc && s->dirty) rc = flush_block(s, err);
  for (int k = 0; k < s->nq && !rc; k++)  // quantities of a study that wrote no sample
    if (!s->q[k].created) rc = create_trajectory(s, &s->q[k], NULL, 0, err);
  if (!rc) rc = write_statistics(s, err);
  // HDF5 1.10.8 frees a file whose H5Fclose failed (e.g. disk full) but keeps its id, and then
  // crashes when the library shuts down (HDFGroup/hdf5 pull request 2291 changed this
  // upstream). So the file is closed only after a flush succeeded; otherwise it stays open
  // and HDF5's shutdown at exit closes it (cleanly if space was freed meanwhile).
  const herr_t flushed = H5Fflush(s->file, H5F_SCOPE_LOCAL);
  if (flushed < 0 && !rc) rc = mbs_h5_fail(err, path, "write the file");
  H5Eclear2(H5E_DEFAULT);
  close_all(s);
  if (flushed >= 0 && H5Fclose(s->file) < 0 && !rc) rc = mbs_h5_fail(err, path, "close the file");
  s->file = -1;
  free_store(s);
  mbs_h5_quiet_end(qz);
  return rc;
}

void mbs_store_discard(mbs_store* s) {
  if (!s) return;
  mbs_h5_quiet qz = mbs_h5_quiet_begin();
  close_all(s);
  if (s->file >= 0) H5Fclose(s->file);
  s->file = -1;
  H5Eclear2(H5E_DEFAULT);
  free_store(s);
  mbs_h5_quiet_end(qz);
}
