// Constraints: holonomic p(t, q) = 0, nonholonomic v(t, q, u) = 0 and acceleration-only
// a(t, q, u, u') = 0 equations that close loops, couple or lock coordinates, prescribe motion
// and roll bodies on surfaces (Simbody paper eqs 10-21, Theory Manual §6, §8.2).
//
// Each constraint reaches the acceleration level as G u' - b = 0 and applies the generalized
// force -G^T lambda. Forward dynamics solves Y lambda = G u'_0 - b with Y = G M^-1 G^T built
// column by column through the O(n) M^-1 operator; by LU when G has full rank and by a
// least-squares complete orthogonal factorization (LAPACK dgelsy) when constraints are
// redundant, so that redundant constraints share the load and none is dropped.
//
// Geometry is given on two bodies: body 1 carries the reference (the plane, line, F frame,
// surface), body 2 the follower (point, frame, rolling sphere). Errors are measured in Ground.
#ifndef MBS_CONSTRAINT_H_
#define MBS_CONSTRAINT_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_constraint_type {
  MBS_CON_BALL = 0,              // point p1 on body 1 and p2 on body 2 coincide          (3 p)
  MBS_CON_WELD,                  // frame (p1, angles a1) on body 1 and (p2, a2) on body 2
                                 // coincide                                              (6 p)
  MBS_CON_ROD,                   // |p2 - p1| = value (> 0)                               (1 p)
  MBS_CON_POINT_IN_PLANE,        // p2 lies in the plane of body 1 through p1 with normal
                                 // a1                                                    (1 p)
  MBS_CON_POINT_ON_LINE,         // p2 lies on the line of body 1 through p1 along a1     (2 p)
  MBS_CON_CONSTANT_ANGLE,        // angle between a1 (on body 1) and a2 (on body 2) is value
                                 // (radians, away from 0 and pi)                         (1 p)
  MBS_CON_CONSTANT_ORIENTATION,  // frames with angles a1 on body 1, a2 on body 2 stay
                                 // aligned                                               (3 p)
  MBS_CON_COORDINATE_COUPLER,    // q(dependent) = f(q(independent)) (OpenSim
                                 // CoordinateCouplerConstraint)                          (1 p)
  MBS_CON_LOCKED_COORDINATE,     // q(coordinate) = value                                 (1 p)
  MBS_CON_PRESCRIBED_MOTION,     // q(coordinate) = f(t)                                  (1 p)
  MBS_CON_CONSTANT_SPEED,        // u(coordinate) = value                                 (1 v)
  MBS_CON_ROLLING,               // sphere (center p2, radius value) on body 2 rolls without
                                 // slip or twist on the plane of body 1 (point p1, normal
                                 // a1): contact, 2 no-slip, no-twist                  (1 p, 3 v)
  MBS_CON_CONSTANT_ACCELERATION, // u'(coordinate) = value: acceleration-only, q and u stay
                                 // free (Simbody's ConstantAcceleration)                 (1 a)
  MBS_CON_COUNT
} mbs_constraint_type;

// a generalized coordinate: coordinate `axis` of `body`'s mobilizer
typedef struct mbs_coordinate_ref {
  int body;
  int axis;
} mbs_coordinate_ref;

typedef struct mbs_constraint_spec {
  mbs_constraint_type type;
  const char* name;          // used in messages and parameter paths; may be NULL
  int body1, body2;          // body 1: reference; body 2: follower
  double p1[3], p2[3];       // stations in their bodies
  double a1[3], a2[3];       // directions in their bodies (normalized by the system), or
                             // body-fixed X-Y-Z angles of frames (weld, constant orientation)
  double value;              // length, angle, locked value, speed, acceleration, sphere
                             // radius
  mbs_coordinate_ref coordinate;   // locked, prescribed, constant speed and acceleration;
                                   // coupler: dependent
  mbs_coordinate_ref independent;  // coupler: independent coordinate
  int function;              // coupler: f(q); prescribed motion: f(t)
  int enabled;               // default 1 (mbs_constraint_spec_default); a State may change it
} mbs_constraint_spec;

mbs_constraint_spec mbs_constraint_spec_default(mbs_constraint_type type, const char* name);

// Add a constraint; returns its index (>= 0) or a negative status (message in
// mbs_system_error). Coordinates used by coordinate constraints must have q' = u.
int mbs_system_add_constraint(mbs_system* sys, const mbs_constraint_spec* spec);

int mbs_system_nconstraint(const mbs_system* sys);
const char* mbs_constraint_name(const mbs_system* sys, int c);
mbs_constraint_type mbs_constraint_type_of(const mbs_system* sys, int c);
// equations of a constraint by level
void mbs_constraint_count(const mbs_system* sys, int c, int* mp, int* mv, int* ma);
// name of a constraint type, e.g. "weld"
const char* mbs_constraint_type_name(mbs_constraint_type type);

//---------------------------------- results ----------------------------------------------------

// Number of active constraint equations in this State (disabled constraints have none)
// [Instance]
int mbs_constraint_nequation(const mbs_system* sys, mbs_state* st);
// Constraint errors of the active equations: position errors of the holonomic equations
// (first `*np` entries) [Position]; velocity errors of the holonomic and nonholonomic ones
// [Velocity]; acceleration errors of all [Acceleration]. Each writes its count to *n.
int mbs_calc_position_errors(const mbs_system* sys, mbs_state* st, double* err, int* n);
int mbs_calc_velocity_errors(const mbs_system* sys, mbs_state* st, double* err, int* n);
int mbs_calc_acceleration_errors(const mbs_system* sys, mbs_state* st, double* err, int* n);
// acceleration errors of all active equations for given accelerations udot (nu) [Velocity]
int mbs_calc_acceleration_errors_of(const mbs_system* sys, mbs_state* st, const double* udot,
                                    double* err, int* n);
// the constraint Jacobian G (m x nu, row-major) of the active equations: velocity errors are
// G u - c, acceleration errors G u' - b, and the constraint forces are -G^T lambda [Position]
int mbs_calc_constraint_jacobian(const mbs_system* sys, mbs_state* st, double* G);
// Lagrange multipliers of the active equations, in order [Acceleration]
const double* mbs_get_multipliers(const mbs_system* sys, mbs_state* st, int* n);
// The forces constraint c applies, in Ground: on body 1 and on body 2, as spatial forces
// [moment; force] about each body's origin, and the generalized forces (nu) it applies
// directly (coordinate constraints) [Acceleration]. Any output may be NULL.
int mbs_get_constraint_forces(const mbs_system* sys, mbs_state* st, int c, double F1[6],
                              double F2[6], double* f_mob);

//---------------------------------- solvers ----------------------------------------------------

typedef struct mbs_assembly_options {
  double tolerance;     // RMS of the position (and velocity) errors to reach, default 1e-10
  int max_iterations;   // Gauss-Newton iterations, default 50
} mbs_assembly_options;

void mbs_assembly_options_default(mbs_assembly_options* o);

// Assembly: from the guess in the State, change q (least-squares, smallest change) until all
// position constraints are met, then u until all velocity constraints are met. Coordinates
// that are locked or prescribed are kept at their values (they are constraints too). Fails
// with MBS_ERR_ASSEMBLY, naming the worst constraint, if the errors cannot be removed.
int mbs_assemble(const mbs_system* sys, mbs_state* st, const mbs_assembly_options* o);

// Coordinate projection (Theory Manual §10.1): remove position errors (q) and then velocity
// errors (u) by the smallest change: positions to an RMS of `tolerance`, velocities to
// tolerance / 0.1 s (the time scale that weighs velocity against position errors, §9.3);
// quaternions normalized. Used by every integrator after each step. Returns MBS_ERR_ASSEMBLY
// if it does not converge.
int mbs_project(const mbs_system* sys, mbs_state* st, double tolerance);

#ifdef __cplusplus
}
#endif

#endif  // MBS_CONSTRAINT_H_
