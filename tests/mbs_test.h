// Minimal test harness for mbstudy's C tests: each test program counts checks and failures,
// prints each failure with file and line, and exits non-zero if anything failed.
#ifndef MBS_TESTS_MBS_TEST_H_
#define MBS_TESTS_MBS_TEST_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int mbs_test_checks = 0;
static int mbs_test_failures = 0;

// relative-or-absolute closeness: |a - b| <= tol * max(1, |a|, |b|)
static inline int mbs_test_close(double a, double b, double tol) {
  double s = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  if (s < 1) s = 1;
  return fabs(a - b) <= tol * s;
}

#define EXPECT_TRUE(cond)                                                         \
  do {                                                                            \
    mbs_test_checks++;                                                            \
    if (!(cond)) {                                                                \
      mbs_test_failures++;                                                        \
      fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond);            \
    }                                                                             \
  } while (0)

// |a - b| <= tol * max(1, |a|, |b|)
#define EXPECT_NEAR(a, b, tol)                                                    \
  do {                                                                            \
    const double ea_ = (a), eb_ = (b);                                            \
    mbs_test_checks++;                                                            \
    if (!mbs_test_close(ea_, eb_, (tol))) {                                       \
      mbs_test_failures++;                                                        \
      fprintf(stderr, "%s:%d: FAIL: %s = %.17g, expected %s = %.17g (tol %g)\n",  \
              __FILE__, __LINE__, #a, ea_, #b, eb_, (double)(tol));               \
    }                                                                             \
  } while (0)

// |a - b| <= tol
#define EXPECT_ABS(a, b, tol)                                                     \
  do {                                                                            \
    const double ea_ = (a), eb_ = (b);                                            \
    mbs_test_checks++;                                                            \
    if (!(fabs(ea_ - eb_) <= (tol))) {                                            \
      mbs_test_failures++;                                                        \
      fprintf(stderr, "%s:%d: FAIL: %s = %.17g, expected %s = %.17g (abs tol %g)\n", \
              __FILE__, __LINE__, #a, ea_, #b, eb_, (double)(tol));               \
    }                                                                             \
  } while (0)

#define EXPECT_OK(expr)                                                           \
  do {                                                                            \
    const int rc_ = (expr);                                                       \
    mbs_test_checks++;                                                            \
    if (rc_ != 0) {                                                               \
      mbs_test_failures++;                                                        \
      fprintf(stderr, "%s:%d: FAIL: %s returned %d\n", __FILE__, __LINE__, #expr, rc_); \
    }                                                                             \
  } while (0)

#define EXPECT_EQ_INT(a, b)                                                       \
  do {                                                                            \
    const long ea_ = (long)(a), eb_ = (long)(b);                                  \
    mbs_test_checks++;                                                            \
    if (ea_ != eb_) {                                                             \
      mbs_test_failures++;                                                        \
      fprintf(stderr, "%s:%d: FAIL: %s = %ld, expected %ld\n", __FILE__, __LINE__, #a, ea_, eb_); \
    }                                                                             \
  } while (0)

// print the summary line and return the exit code
static inline int mbs_test_finish(const char* name) {
  printf("%s: %d checks, %d failed\n", name, mbs_test_checks, mbs_test_failures);
  return mbs_test_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}

// deterministic pseudo-random numbers for test inputs (xorshift64*)
typedef struct mbs_test_rng {
  unsigned long long s;
} mbs_test_rng;
static inline double mbs_test_uniform(mbs_test_rng* r, double lo, double hi) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  const unsigned long long x = r->s * 2685821657736338717ULL;
  return lo + (hi - lo) * ((double)(x >> 11) * (1.0 / 9007199254740992.0));
}

#endif  // MBS_TESTS_MBS_TEST_H_
