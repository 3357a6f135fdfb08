// Counting allocations in a test (linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc):
// n_alloc counts the calls, so a test can check that a hot path allocates nothing. Include once
// per test program.
#ifndef MBS_TESTS_MBS_TEST_ALLOC_H_
#define MBS_TESTS_MBS_TEST_ALLOC_H_

#include <stddef.h>

static long n_alloc = 0;
void* __real_malloc(size_t n);
void* __real_calloc(size_t n, size_t m);
void* __real_realloc(void* p, size_t n);
void* __wrap_malloc(size_t n);
void* __wrap_calloc(size_t n, size_t m);
void* __wrap_realloc(void* p, size_t n);
void* __wrap_malloc(size_t n) {
  n_alloc++;
  return __real_malloc(n);
}
void* __wrap_calloc(size_t n, size_t m) {
  n_alloc++;
  return __real_calloc(n, m);
}
void* __wrap_realloc(void* p, size_t n) {
  n_alloc++;
  return __real_realloc(p, n);
}

#endif  // MBS_TESTS_MBS_TEST_ALLOC_H_
