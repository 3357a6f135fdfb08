// The batched forward-dynamics kernel (batch_kernel.h) for AVX2 with FMA: 4 States per vector.
// Only called when the CPU has AVX2 and FMA (core/batch.c checks at run time).
#include "batch_impl.h"

#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif
#define W 4
#define BATCH_KERNEL mbs_batch_kernel_avx2
#include "batch_kernel.h"
#if defined(__clang__)
#pragma clang attribute pop
#endif
#else
void mbs_batch_kernel_avx2(mbs_batch* batch, const mbs_system* sys, mbs_state* const* states,
                           int n) {
  mbs_batch_kernel_portable(batch, sys, states, n);
}
#endif
