// Helpers shared by the libFuzzer harnesses of tests/fuzz: a private temporary folder per
// process (for the readers that only take a path), writing an input to a file in it, and
// "touching" what a reader returned so that AddressSanitizer sees every byte of it.
#ifndef MBS_FUZZ_UTIL_H_
#define MBS_FUZZ_UTIL_H_

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The folder: $TMPDIR (else /tmp)/mbs-fuzz-<what>-XXXXXX, created once per process and removed
// at a normal exit (with the files named in fuzz_tmp_files). A crash leaves it behind (a few
// small files); scripts/test.sh points TMPDIR at a folder it removes itself.
#define FUZZ_MAX_TMP_FILES 8
static char fuzz_tmp_dir[PATH_MAX];
static char fuzz_tmp_files[FUZZ_MAX_TMP_FILES][PATH_MAX];
static int fuzz_ntmp_files;

static inline void fuzz_tmp_cleanup(void) {
  for (int i = 0; i < fuzz_ntmp_files; i++) unlink(fuzz_tmp_files[i]);
  if (fuzz_tmp_dir[0]) rmdir(fuzz_tmp_dir);
}

static inline const char* fuzz_tmp_init(const char* what) {
  if (fuzz_tmp_dir[0]) return fuzz_tmp_dir;
  const char* base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  snprintf(fuzz_tmp_dir, sizeof(fuzz_tmp_dir), "%s/mbs-fuzz-%s-XXXXXX", base, what);
  if (!mkdtemp(fuzz_tmp_dir)) {
    perror("fuzz: mkdtemp");
    abort();
  }
  atexit(fuzz_tmp_cleanup);
  return fuzz_tmp_dir;
}

// "<folder>/<name>", remembered for removal at exit
static inline const char* fuzz_tmp_path(const char* name) {
  if (fuzz_ntmp_files >= FUZZ_MAX_TMP_FILES) abort();
  char* p = fuzz_tmp_files[fuzz_ntmp_files++];
  snprintf(p, PATH_MAX, "%s/%s", fuzz_tmp_dir, name);
  return p;
}

// replace the file's content with the input
static inline void fuzz_write_file(const char* path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
    perror("fuzz: writing the input file");
    abort();
  }
}

// a NUL-terminated copy of the input (free it)
static inline char* fuzz_strndup(const uint8_t* data, size_t size) {
  char* s = malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = 0;
  return s;
}

// A reader broke one of its documented promises: say which, then abort (a finding, with the
// stack of the harness line)
#define FUZZ_CHECK(cond, what)                                              \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "fuzz: %s:%d: broken: %s (%s)\n", __FILE__, __LINE__, \
              (what), #cond);                                               \
      abort();                                                              \
    }                                                                       \
  } while (0)

// MBS_FUZZ_VERBOSE=1 in the environment: each input's outcome on stderr (to see why a seed is
// refused, or what a reproduced input does); silent otherwise, as fuzzing needs
static inline void fuzz_report(const char* what, int ok, const char* message) {
  static int verbose = -1;
  if (verbose < 0) {
    const char* v = getenv("MBS_FUZZ_VERBOSE");
    verbose = v && *v && strcmp(v, "0") != 0;
  }
  if (verbose)
    fprintf(stderr, "%s: %s%s\n", what, ok ? "ok " : "refused: ", message ? message : "");
}

// reading every byte of what a reader returned: out-of-bounds or freed memory shows up under
// ASan; the sum goes to a volatile so that nothing is optimized away
static volatile uint64_t fuzz_sink;
static inline void fuzz_touch_str(const char* s) {
  if (s) fuzz_sink += strlen(s);
}
static inline void fuzz_touch_doubles(const double* v, long n) {
  uint64_t h = 0;
  for (long i = 0; i < n; i++) {
    uint64_t w;
    memcpy(&w, &v[i], sizeof(w));
    h ^= w;
  }
  fuzz_sink += h;
}

#endif  // MBS_FUZZ_UTIL_H_
