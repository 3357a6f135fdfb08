// The batched forward-dynamics kernel (batch_kernel.h) for any CPU: 2 States per vector (SSE2 on
// x86-64, the compiler's generic vectors elsewhere).
#ifndef MBS_BATCH_PORTABLE_W
#define MBS_BATCH_PORTABLE_W 2
#endif
#define W MBS_BATCH_PORTABLE_W
#define BATCH_KERNEL mbs_batch_kernel_portable
#include "batch_kernel.h"

int mbs_batch_width_portable(void) { return W; }
