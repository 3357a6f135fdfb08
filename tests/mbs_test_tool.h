// Helpers for the tests of run-tool's tools run in the test's own process: input files written
// into a folder, a setup file run by a tool with its log captured, and lines looked for in that
// log. (Include after mbs_test.h.)
#ifndef MBS_TESTS_MBS_TEST_TOOL_H_
#define MBS_TESTS_MBS_TEST_TOOL_H_

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../jobs/run_tool.h"

// write `text` to dir/name, or end the test
static inline void mbs_test_write_file(const char* dir, const char* name, const char* text) {
  char p[1024];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  FILE* f = fopen(p, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s: %s\n", p, strerror(errno));
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

// everything written to f so far (malloc'd)
static inline char* mbs_test_read_stream(FILE* f) {
  fflush(f);
  const long n = ftell(f);
  char* s = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
  rewind(f);
  if (s && n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
  return s;
}

// run the setup file with `tool` in this process (results_dir may be NULL); its log into *log
// (malloc'd); the tool's status (1 when the setup cannot be read)
static inline int mbs_test_run_setup(int (*tool)(mbs_setup*, const mbs_tool_options*),
                                     const char* setup, const char* results_dir, char** log) {
  FILE* lf = tmpfile();
  mbs_tool_options o;
  memset(&o, 0, sizeof(o));
  o.quiet = 1;
  o.log = lf;
  o.results_dir = results_dir;
  mbs_error err;
  int rc = 1;
  mbs_setup* s = mbs_setup_read(setup, &err);
  if (s) {
    rc = tool(s, &o);
    mbs_setup_free(s);
  } else {
    fprintf(lf, "%s\n", err.message);
  }
  *log = mbs_test_read_stream(lf);
  fclose(lf);
  return rc;
}

// does a line of the log hold a (and b, when given)?
static inline int mbs_test_log_has(const char* log, const char* a, const char* b) {
  for (const char* line = log; line && *line;) {
    const char* end = strchr(line, '\n');
    const size_t n = end ? (size_t)(end - line) : strlen(line);
    char buf[4096];
    snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) - 1 ? n : sizeof(buf) - 1), line);
    if (strstr(buf, a) && (!b || strstr(buf, b))) return 1;
    line = end ? end + 1 : NULL;
  }
  return 0;
}

#define EXPECT_LOG(log, a, b)                                                                \
  do {                                                                                       \
    mbs_test_checks++;                                                                       \
    if (!mbs_test_log_has((log), (a), (b))) {                                                \
      mbs_test_failures++;                                                                   \
      fprintf(stderr, "%s:%d: FAIL: no log line with '%s'%s%s%s; the log:\n%s\n", __FILE__, \
              __LINE__, (a), (b) ? " and '" : "", (b) ? (b) : "", (b) ? "'" : "", (log));    \
    }                                                                                        \
  } while (0)

#endif  // MBS_TESTS_MBS_TEST_TOOL_H_
