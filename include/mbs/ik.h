// Inverse kinematics: the pose that best matches observed marker positions, frame by frame
// (OpenSim's InverseKinematicsSolver, Simbody's Assembler with a Markers goal).
//
// For each frame the solver finds the coordinates q that minimize
//
//   f(q) = sum_i (w_i / W) |p_i(q) - x_i|^2 + sum_j w_j (q_j - v_j)^2
//
// over the markers i observed in the frame (x_i finite, w_i > 0; W = sum of their weights, the
// normalization Simbody's Markers goal uses) and the coordinate tasks j (target values v_j),
// subject to the System's holonomic constraints (enforced exactly, or added to f as
// w_c |perr|^2 when a finite constraint weight w_c is given), with fixed coordinates held and
// bounded coordinates kept within their ranges (OpenSim's clamped coordinates, Simbody's
// Assembler::restrictQ).
//
// Method: Gauss-Newton with Levenberg-Marquardt damping on analytic station Jacobians (the
// hinge matrices of the realized Position stage, mapped from speeds to coordinate rates by
// N(q)^-1). Each step solves the damped normal equations with the constraint rows as equality
// constraints (range-space method: Cholesky of the damped Hessian, pivoted Cholesky of the
// Schur complement so that redundant constraint rows drop out); coordinates at a bound are
// held there by a primal active set inside the step, released when the gradient points inward.
// Steps are accepted on an exact-penalty merit function f + rho |perr|_1. A frame has
// converged when a nearly undamped step moves no coordinate by more than accuracy / 10 (rad or
// m) and every constraint error is below accuracy / 1000.
//
// Frames are solved from the pose in the State (the previous frame's solution when tracking),
// so call mbs_ik_solve on consecutive frames with the same State. Solving allocates nothing:
// the workspace is sized by mbs_ik_create. A solver may be used by one thread at a time; the
// System stays read-only.
#ifndef MBS_IK_H_
#define MBS_IK_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

// A marker fixed on a body.
typedef struct mbs_ik_marker {
  const char* name;     // for messages (may be NULL)
  int body;             // the body it is fixed to (not Ground)
  double station[3];    // its location in the body frame, m
  double weight;        // >= 0; a marker of weight 0 is reported but not tracked
} mbs_ik_marker;

// A coordinate task: q[q] pulled toward a target value given each frame.
typedef struct mbs_ik_task {
  const char* name;
  int q;                // index in the State's q
  double weight;        // >= 0
} mbs_ik_task;

// A bounded (clamped) coordinate: lower <= q[q] <= upper.
typedef struct mbs_ik_bound {
  const char* name;
  int q;
  double lower, upper;
} mbs_ik_bound;

typedef struct mbs_ik_problem {
  int nmarker;
  const mbs_ik_marker* markers;
  int ntask;
  const mbs_ik_task* tasks;
  int nbound;
  const mbs_ik_bound* bounds;
  int nfixed;
  const int* fixed;            // q indexes held at the values they have (locked coordinates)
  double accuracy;             // default 1e-5 (OpenSim's default)
  double constraint_weight;    // INFINITY (default): constraints enforced; finite >= 0: penalty
  int max_iterations;          // Gauss-Newton iterations per frame, default 200
} mbs_ik_problem;

// what a frame's solve did
typedef struct mbs_ik_report {
  int iterations;              // Gauss-Newton iterations (steps tried)
  int converged;               // 1: the step and constraint criteria were met
  int nobserved;               // markers tracked in this frame (observed, weight > 0)
  double cost;                 // f at the solution
  double step;                 // largest |dq| of the last accepted step
  double constraint_error;     // largest |position error| of the holonomic constraints
  int nactive;                 // bounded coordinates at a bound
} mbs_ik_report;

typedef struct mbs_ik mbs_ik;

// Zeros, accuracy 1e-5, constraint weight INFINITY, 200 iterations.
void mbs_ik_problem_default(mbs_ik_problem* p);

// A solver for the problem on a finalized System. The problem's arrays are copied (names are
// kept as pointers: they must outlive the solver). *out is NULL on failure, with the reason
// (naming the marker, task or bound) in err.
int mbs_ik_create(const mbs_system* sys, const mbs_ik_problem* p, mbs_ik** out, mbs_error* err);
void mbs_ik_free(mbs_ik* ik);

// Solve one frame at the State's time (prescribed motion follows it), starting from the
// State's q, which receives the solution (u is left alone). observed: 3 numbers per marker in
// Ground, m; a marker with any non-finite number is missing in this frame and not tracked.
// targets: one value per task (NULL when there are none). rep may be NULL.
// Returns MBS_OK (rep->converged says whether the criteria were met within max_iterations),
// MBS_ERR_ASSEMBLY when the constraints cannot be satisfied, or another error from
// realization; the message is in mbs_state_error(st).
int mbs_ik_solve(mbs_ik* ik, const mbs_system* sys, mbs_state* st, const double* observed,
                 const double* targets, mbs_ik_report* rep);

// After mbs_ik_solve: each marker's location in Ground (3 per marker) and squared distance to
// its observation (0 for a marker missing in the frame, as Simbody reports it).
const double* mbs_ik_marker_locations(const mbs_ik* ik);
const double* mbs_ik_marker_squared_errors(const mbs_ik* ik);

#ifdef __cplusplus
}
#endif

#endif  // MBS_IK_H_
