// Batched forward dynamics: u' of many States of one System at once, with the articulated-body
// recursions advancing several States side by side in SIMD lanes.
//
// A batch object is made once per System and lane count; it holds its structure-of-arrays
// workspace (for each body quantity, W consecutive doubles, one per State of a group of W) and
// the result arrays, so evaluating allocates nothing. States are processed in groups of the
// SIMD width W of the instruction set chosen at run time (8 with AVX-512, 4 with AVX2 and FMA,
// 2 otherwise); a last, partial group is padded by repeating its last State.
//
// The mathematics is the one-at-a-time path's (core/realize.c, core/forces.c,
// core/tree_dynamics.c): the same operations in the same order, in vector arithmetic without
// fused multiply-adds, so u' and q' are the very numbers mbs_realize_acceleration gives (as long
// as the library itself is built without FMA contraction, as by default; tests/core/test_batch.c
// checks agreement to 1e-12 relative on random trees).
//
// What is supported (mbs_batch_supported says which part of a System is not):
// - mobilizers: weld, pin, slider, universal, cylinder, planar, screw, translation, gimbal,
//   ball, ball_xyz, free, free_xyz, with arbitrary joint frames X_PF and X_BM;
// - every physical parameter per State: masses, mass centers, inertias, joint frames, screw
//   pitches and force-element parameters are each State's own (a State whose parameters differ
//   from the others' in its group costs a little more: its values are gathered lane by lane);
// - force elements: gravity, constant mobility forces, constant body forces and torques,
//   two-point linear springs and dampers, mobility linear springs and dampers;
// - the applied mobility and body forces set in each State.
// Not supported yet (those Systems are refused; use mbs_realize_acceleration): constraints,
// contact, muscles and every other force element (bushings, coordinate limits, actuators and
// controls, external loads, path forces), controllers, auxiliary states z, ellipsoid and
// function-based (CustomJoint) mobilizers.
//
// The States are read, not realized: each State is realized to Instance stage if it is not
// (that is where its parameters are checked), its q, u, time, parameters and applied forces are
// read, and the results are kept in the batch (mbs_batch_udot, mbs_batch_qdot) until the next
// call. The States' Position-and-up caches are not touched, so mbs_get_udot on them still says
// MBS_ERR_STAGE. A State the vector path cannot finish (a non-finite value, a singular
// articulated inertia, a parameter error) is evaluated by the one-at-a-time path instead, which
// realizes it and reports its error; its status is mbs_batch_status.
//
// A batch object is used by one thread at a time; one per thread for parallel studies.
#ifndef MBS_BATCH_H_
#define MBS_BATCH_H_

#include <stddef.h>

#include "mbs/simulate.h"
#include "mbs/state.h"
#include "mbs/status.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_batch mbs_batch;

// 1 if the batched path handles this (finalized) System, else 0 with the reason in why (at
// most n bytes, may be NULL), naming the body and mobilizer, force element or constraint
int mbs_batch_supported(const mbs_system* sys, char* why, size_t n);

// A batch for up to `lanes` States per call (lanes >= 1, any count). NULL if the System is not
// finalized or not supported (mbs_batch_supported says why), lanes < 1, or memory is short.
mbs_batch* mbs_batch_create(const mbs_system* sys, int lanes);
void mbs_batch_destroy(mbs_batch* batch);

// u' (and q') of states[0..n-1] (1 <= n <= lanes), all of `sys`, the System of the batch.
// Returns MBS_OK when every State succeeded; otherwise the status of the first State that
// failed, with the message in mbs_batch_error (which names the State's index); the other
// States' results are still valid. MBS_ERR_ARGUMENT for a bad call (another System, n out of
// range, a NULL State). Allocates nothing.
int mbs_batch_forward_dynamics(mbs_batch* batch, const mbs_system* sys, mbs_state* const* states,
                               int n);

// results of the last call for State i (0 <= i < n): u' (nu numbers), q' = N(q) u (nq numbers),
// and its status (MBS_OK, or the error the one-at-a-time path gave it). NULL / MBS_ERR_ARGUMENT
// for i out of range (or after a call refused as a whole); the numbers of a failed State are not
// meaningful. Valid until the next call.
const double* mbs_batch_udot(const mbs_batch* batch, int i);
const double* mbs_batch_qdot(const mbs_batch* batch, int i);
int mbs_batch_status(const mbs_batch* batch, int i);
// the first failure of the last call (code MBS_OK if none)
const mbs_error* mbs_batch_error(const mbs_batch* batch);

int mbs_batch_lanes(const mbs_batch* batch);
// the SIMD width W of the batch's instruction set (States advanced together)
int mbs_batch_width(const mbs_batch* batch);

// The instruction set new batches use: "avx512", "avx2" or "portable", the best the CPU runs
// (checked at run time), unless the environment variable MBS_BATCH_ISA names another one the
// CPU runs.
const char* mbs_batch_isa(void);
// the instruction set of a batch
const char* mbs_batch_get_isa(const mbs_batch* batch);
// Make a batch use instruction set `isa` ("avx512", "avx2", "portable"), e.g. to test every
// path on one machine. MBS_ERR_ARGUMENT if the name is unknown or the CPU cannot run it.
int mbs_batch_set_isa(mbs_batch* batch, const char* isa);
// 1 if this CPU runs instruction set `isa`
int mbs_batch_isa_available(const char* isa);

// ---- Batched simulation ------------------------------------------------------------------
//
// mbs_simulate without events, for many States of one System at once: each State (a lane) is
// integrated by Runge-Kutta-Merson with its own error-controlled steps (sizes, rejections and
// report times differ from lane to lane), and whenever every unfinished lane needs its
// derivatives they are evaluated together by mbs_batch_forward_dynamics. A lane's steps and
// reports are those mbs_simulate takes for that State alone: the same arithmetic in the same
// order (tests/core/test_batch_simulate.c checks agreement to 1e-12 relative; on the same
// build the numbers are identical). A call takes any number of States: the simulator's lanes
// take them in order, and a lane whose State has finished takes the next one, so States that
// need more steps than others do not leave lanes idle (only at the end of the call).
typedef struct mbs_batch_sim mbs_batch_sim;

// 1 if mbs_batch_simulate can simulate this System with these options (rk_merson, and a
// System mbs_batch_supported accepts); else 0 with the reason in why (at most n bytes)
int mbs_batch_simulation_supported(const mbs_system* sys, const mbs_simulation_options* o,
                                   char* why, size_t n);
// a simulator of `lanes` States side by side (8 fill one AVX-512 group), with options o
// (NULL: the defaults; the integrator must be rk_merson); NULL if not supported, the options
// are invalid or memory is short. Allocates everything a call needs.
mbs_batch_sim* mbs_batch_sim_create(const mbs_system* sys, int lanes,
                                    const mbs_simulation_options* o);
void mbs_batch_sim_destroy(mbs_batch_sim* sim);
// the batch object that evaluates the forward dynamics (its instruction set can be changed
// with mbs_batch_set_isa)
mbs_batch* mbs_batch_sim_batch(const mbs_batch_sim* sim);

// Simulate states[0..n-1] (n >= 1, any count) from their times to t_final, as mbs_simulate with
// no events would, calling report(sys, state, users[i]) at the report times of lane i (users
// may be NULL); results[i] and status[i] receive each lane's result and status (the State's
// error holds its message, as after mbs_simulate). Returns MBS_OK when every lane succeeded,
// else the first failing lane's status; MBS_ERR_ARGUMENT for a bad call.
int mbs_batch_simulate(mbs_batch_sim* sim, const mbs_system* sys, mbs_state* const* states,
                       int n, double t_final, mbs_report_fn report, void* const* users,
                       mbs_simulation_result* results, int* status);

#ifdef __cplusplus
}
#endif

#endif  // MBS_BATCH_H_
