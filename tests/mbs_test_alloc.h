// Counting allocations in a test: n_alloc counts the calls, so a test can check that a hot path
// allocates nothing. Include once per test program (linked with
// -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc).
//
// Two ways, because the linker's --wrap sees only references it resolves itself: in a build
// with link-time optimization (Release) the calls inside mbstudy's own libraries escape it.
// - Without AddressSanitizer: the program defines malloc, calloc, realloc, aligned_alloc and
//   posix_memalign itself, counting and passing on to glibc's (__libc_*). A definition in the
//   executable takes the place of libc's for every caller in the process (mbstudy's libraries
//   whatever their build, SUNDIALS, LAPACK, libc itself); free stays glibc's. Valgrind still
//   tracks the blocks (it replaces the __libc_* functions too). The --wrap entry points only
//   pass on (the interposed functions count).
// - With AddressSanitizer (which defines malloc itself): --wrap, which counts the calls of code
//   linked into the test without link-time optimization (the sanitizer build has none).
// mbs_test_alloc_active() says whether an allocation by a library is seen: a test asserts it,
// so that a counter that sees nothing cannot pass for an allocation-free path.
#ifndef MBS_TESTS_MBS_TEST_ALLOC_H_
#define MBS_TESTS_MBS_TEST_ALLOC_H_

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif

// volatile: the compiler takes malloc for a function that changes no variable of the program,
// and would otherwise fold n_alloc - before to 0 across a call
static volatile long n_alloc = 0;
void* __real_malloc(size_t n);
void* __real_calloc(size_t n, size_t m);
void* __real_realloc(void* p, size_t n);
void* __wrap_malloc(size_t n);
void* __wrap_calloc(size_t n, size_t m);
void* __wrap_realloc(void* p, size_t n);

#if defined(__SANITIZE_ADDRESS__)
void* __wrap_malloc(size_t n) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  return __real_malloc(n);
}
void* __wrap_calloc(size_t n, size_t m) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  return __real_calloc(n, m);
}
void* __wrap_realloc(void* p, size_t n) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  return __real_realloc(p, n);
}
#else
#include <errno.h>
void* __libc_malloc(size_t n);
void* __libc_calloc(size_t n, size_t m);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t align, size_t n);
void* malloc(size_t n) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t align, size_t n) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  return __libc_memalign(align, n);
}
int posix_memalign(void** p, size_t align, size_t n) {
  __atomic_add_fetch(&n_alloc, 1, __ATOMIC_RELAXED);
  if (align < sizeof(void*) || (align & (align - 1))) return EINVAL;
  void* r = __libc_memalign(align, n);
  if (!r) return ENOMEM;
  *p = r;
  return 0;
}
// references resolved through --wrap land here and pass on to the counting functions above
void* __wrap_malloc(size_t n) { return __real_malloc(n); }
void* __wrap_calloc(size_t n, size_t m) { return __real_calloc(n, m); }
void* __wrap_realloc(void* p, size_t n) { return __real_realloc(p, n); }
#endif

// 1 when an allocation made inside a library (fopen's, in libc; valgrind replaces strdup and
// the like with its own) reaches the counter; under the sanitizer's --wrap only the program's
// own calls do, so the check there is a call of its own
// Under valgrind, which puts its own malloc in the place of the program's, nothing is counted:
// the zero-allocation checks hold there trivially and are made in the other runs (it says so).
static int mbs_test_alloc_active(void) {
#if __has_include(<valgrind/valgrind.h>)
  if (RUNNING_ON_VALGRIND) {
    fprintf(stderr, "(under valgrind: allocations are not counted)\n");
    return 1;
  }
#endif
  const long before = n_alloc;
#if defined(__SANITIZE_ADDRESS__)
  void* volatile p = malloc(16);
  free(p);
#else
  FILE* f = fopen("/dev/null", "r");
  if (f) fclose(f);
#endif
  return n_alloc > before;
}

#endif  // MBS_TESTS_MBS_TEST_ALLOC_H_
