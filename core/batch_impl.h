// Internal layout of a batch (include/mbs/batch.h), shared by core/batch.c and the vector
// kernels (core/batch_kernel.h, compiled once per instruction set by batch_avx512.c,
// batch_avx2.c and batch_portable.c).
//
// For the batched integrator to come: a kernel evaluates one group of W States into the
// workspace below (q, u and the applied forces transposed in its outward pass, u' and q' read
// out after it), so an integrator that keeps its stage values in this structure-of-arrays form
// can call the group evaluation directly, without States in between, reading the parameters
// and Instance data from the group's States once per step.
#ifndef MBS_CORE_BATCH_IMPL_H_
#define MBS_CORE_BATCH_IMPL_H_

#include "mbs/batch.h"
#include "model_impl.h"

#define MBS_BATCH_WMAX 8  // the widest vector (AVX-512: 8 doubles); the workspace fits it
#define MBS_BATCH_NGRAV 4

typedef enum mbs_batch_isa_id {
  MBS_BATCH_PORTABLE = 0,
  MBS_BATCH_AVX2,
  MBS_BATCH_AVX512,
  MBS_BATCH_ISA_COUNT
} mbs_batch_isa_id;

// Workspace of one group of W States, in vectors of W doubles (lane k = State k of the group).
// Per body (Ground included, at rest at the origin): X_GB, V_GB, l = p_GB - p_GP, the
// articulated inertia P (packed, MBS_SYM6_*), the Coriolis acceleration A_c, the ABA's z (the
// children's share), the spatial acceleration A, the applied body force F (the State's applied
// force plus the force elements'), the gyroscopic force, and the mass and mass center in G (for
// force elements).
enum {
  MBS_BW_R = 0,     // 9
  MBS_BW_P = 9,     // 3: p_GB
  MBS_BW_V = 12,    // 6
  MBS_BW_L = 18,    // 3
  MBS_BW_PA = 21,   // 21: articulated inertia
  MBS_BW_AC = 42,   // 6
  MBS_BW_Z = 48,    // 6
  MBS_BW_A = 54,    // 6
  MBS_BW_F = 60,    // 6
  MBS_BW_GY = 66,   // 6
  MBS_BW_M = 72,    // 1: mass
  MBS_BW_C = 73,    // 3: mass center in G, from B's origin
  MBS_BW_SIZE = 76
};
// per speed: the hinge column H (in G), G shifted to the parent's origin, the generalized
// force f, the ABA's e, u' and u
enum {
  MBS_SW_H = 0,     // 6
  MBS_SW_G = 6,     // 6
  MBS_SW_F = 12,
  MBS_SW_E = 13,
  MBS_SW_UD = 14,
  MBS_SW_U = 15,
  MBS_SW_SIZE = 16
};
// vectors of a group's workspace: bodies, speeds, D^-1 blocks, q and q'
static inline size_t mbs_batch_ws_vectors(const mbs_system* sys) {
  return (size_t)sys->nbody * MBS_BW_SIZE + (size_t)sys->nu * MBS_SW_SIZE + (size_t)sys->ndi +
         2 * (size_t)sys->nq + 8;
}

struct mbs_batch {
  const mbs_system* sys;
  int lanes;
  int nlast;                // States of the last call (its results are readable)
  mbs_batch_isa_id isa;
  int width;                // W of the isa
  double* ws;               // one group's workspace, sized for MBS_BATCH_WMAX lanes
  double* udot;             // lanes x nu: results of the last call
  double* qdot;             // lanes x nq
  int* status;              // lanes
  unsigned char* redo;      // lanes: 1 when the one-at-a-time path must evaluate the State
  int* body_nparam;         // nbody: parameters of each body (MBS_BP_MOB + mobilizer's)
  unsigned char* first_child;  // nbody: 1 for the child of a body (not Ground) that the inward
                               // sweep reaches first (the highest index)
  int keep_mass;            // keep each body's mass and mass center in G (gravity elements that
                            // do not come first)
  int prefetch;             // prefetch the States' data ahead (large Systems)
  int* grav;                // the gravity elements that come first in the System's list of
  int ngrav;                // force elements (applied in the outward pass, at most MBS_BATCH_NGRAV)
  int* elem;                // the other force elements, in the System's order
  int nelem;
  mbs_error err;
};

// The vector kernels: u' and q' of states[0..n-1] into batch->udot and batch->qdot, in groups
// of W; a State that needs the one-at-a-time path (non-finite q, u or result, a singular
// articulated inertia) gets batch->redo[i] = 1. On entry batch->redo marks the States whose
// Instance stage failed (or whose time is not finite): their caches are never read for others.
void mbs_batch_kernel_portable(mbs_batch* batch, const mbs_system* sys, mbs_state* const* states,
                               int n);
void mbs_batch_kernel_avx2(mbs_batch* batch, const mbs_system* sys, mbs_state* const* states,
                           int n);
void mbs_batch_kernel_avx512(mbs_batch* batch, const mbs_system* sys, mbs_state* const* states,
                             int n);
int mbs_batch_width_portable(void);

#endif  // MBS_CORE_BATCH_IMPL_H_
