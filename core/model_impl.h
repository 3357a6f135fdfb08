// Internal layout of mbs_system and mbs_state, shared by the files of core/.
//
// Frames (Simbody monograms): G Ground, P parent body, B body, F mobilizer frame on P,
// M mobilizer frame on B. X_AB = (R_AB, p_AB); V_GB = [w; v] of B's origin in G; H is the
// hinge matrix (6 x nu, column-major per speed), H_FM in F, H (no suffix) in G.
#ifndef MBS_CORE_MODEL_IMPL_H_
#define MBS_CORE_MODEL_IMPL_H_

#include <stddef.h>

#include "mbs/constraint.h"
#include "mbs/dynamics.h"
#include "mbs/function.h"
#include "mbs/mobilizer.h"
#include "mbs/spatial.h"
#include "mbs/state.h"
#include "mbs/status.h"
#include "mbs/system.h"

//---------------------------------- mobilizer kernels ------------------------------------------

// what a mobilizer kernel sees of one body
typedef struct mbs_mob_ctx {
  const mbs_system* sys;
  const mbs_state* st;
  int body;
  int nq, nu;
  const double* param;  // the body's mobilizer parameters (pitch, radii)
  double* pool;         // per-body scratch kept from Position to Velocity stage
} mbs_mob_ctx;

typedef struct mbs_mobilizer_ops {
  const char* name;
  int nq, nu;      // -1: per body (function-based)
  int npool;       // doubles of per-body pool
  int quat;        // index in q of a quaternion, or -1
  // R_FM, p_FM and H_FM (6 x nu, column j at H_FM + 6 j) from q
  void (*position)(const mbs_mob_ctx* c, const double* q, double R_FM[9], double p_FM[3],
                   double* H_FM);
  // HDot_FM u (time derivative in F), after position(); NULL: zero
  void (*hdot_u)(const mbs_mob_ctx* c, const double* q, const double* u, double HDu[6]);
  // q' = N(q) u; NULL: q' = u
  void (*qdot)(const mbs_mob_ctx* c, const double* q, const double* u, double* qdot);
  // u = N(q)^-1 q'; NULL: u = q'
  void (*u_from_qdot)(const mbs_mob_ctx* c, const double* q, const double* qdot, double* u);
  // q'' = N u' + N' u; NULL: q'' = u'
  void (*qdotdot)(const mbs_mob_ctx* c, const double* q, const double* u, const double* udot,
                  double* qdd);
  // default q (q = 0 except identity quaternions); NULL: zeros
  void (*default_q)(const mbs_mob_ctx* c, double* q);
} mbs_mobilizer_ops;

extern const mbs_mobilizer_ops mbs_mob_weld, mbs_mob_pin, mbs_mob_slider, mbs_mob_universal,
    mbs_mob_cylinder, mbs_mob_planar, mbs_mob_screw, mbs_mob_translation, mbs_mob_gimbal,
    mbs_mob_ball, mbs_mob_ball_xyz, mbs_mob_free, mbs_mob_free_xyz, mbs_mob_ellipsoid,
    mbs_mob_ellipsoid_xyz, mbs_mob_function;

// kernels for a type, indexed by mbs_mobilizer_type
const mbs_mobilizer_ops* mbs_mobilizer_ops_of(mbs_mobilizer_type type);

// shared rotation helpers for quaternion and X-Y-Z angle mobilizers (mobilizer_rotation.c)
void mbs_quat_qdot(const double q[4], const double w[3], double qdot[4]);
void mbs_quat_w_from_qdot(const double q[4], const double qdot[4], double w[3]);
void mbs_quat_qdotdot(const double q[4], const double w[3], const double wdot[3], double qdd[4]);
void mbs_xyz_qdot(const double a[3], const double w[3], double adot[3]);
void mbs_xyz_w_from_qdot(const double a[3], const double adot[3], double w[3]);
void mbs_xyz_qdotdot(const double a[3], const double w[3], const double wdot[3],
                     double add[3]);
// the same as mobilizer kernels, for mobilizers whose rotation is a ball's (u = w_FM in F)
void mbs_mob_ball_qdot(const mbs_mob_ctx* c, const double* q, const double* u, double* qd);
void mbs_mob_ball_u_from_qdot(const mbs_mob_ctx* c, const double* q, const double* qd, double* u);
void mbs_mob_ball_qdotdot(const mbs_mob_ctx* c, const double* q, const double* u, const double* ud,
                          double* qdd);
void mbs_mob_quat_default(const mbs_mob_ctx* c, double* q);
void mbs_mob_xyz_qdot(const mbs_mob_ctx* c, const double* q, const double* u, double* qd);
void mbs_mob_xyz_u_from_qdot(const mbs_mob_ctx* c, const double* q, const double* qd, double* u);
void mbs_mob_xyz_qdotdot(const mbs_mob_ctx* c, const double* q, const double* u, const double* ud,
                         double* qdd);

//---------------------------------- system -----------------------------------------------------

// offsets of a body's parameters from body_param_adr[b]
enum {
  MBS_BP_MASS = 0,
  MBS_BP_COM = 1,        // 3
  MBS_BP_INERTIA = 4,    // 6: xx yy zz xy xz yz about the COM in B
  MBS_BP_PF_ANGLES = 10, // 3
  MBS_BP_PF_P = 13,      // 3
  MBS_BP_BM_ANGLES = 16, // 3
  MBS_BP_BM_P = 19,      // 3
  MBS_BP_MOB = 22,       // mobilizer parameters: screw pitch (1) or ellipsoid radii (3)
};

typedef struct mbs_func_desc {
  mbs_function_type type;
  int n;
  int param_adr;   // in the State's parameter vector
  int cache_adr;   // in the State's function cache
  int inner;       // multiplier: inner function
  char* name;
} mbs_func_desc;

typedef enum mbs_force_type {
  MBS_FORCE_GRAVITY = 0,     // params g[3]
  MBS_FORCE_MOBILITY,        // params value
  MBS_FORCE_BODY_FORCE,      // params station[3], force[3]
  MBS_FORCE_BODY_TORQUE,     // params torque[3]
  MBS_FORCE_SPRING,          // params p1[3], p2[3], k, rest length
  MBS_FORCE_DAMPER,          // params p1[3], p2[3], c
  MBS_FORCE_MOBILITY_SPRING, // params k, q0
  MBS_FORCE_MOBILITY_DAMPER, // params c
  MBS_FORCE_BUSHING,             // force_elements.c
  MBS_FORCE_COORDINATE_LIMIT,    // force_elements.c
  MBS_FORCE_SPRING_GENERALIZED,  // force_elements.c
  MBS_FORCE_EXTERNAL,            // force_elements.c
  MBS_FORCE_COORDINATE_ACTUATOR, // force_elements.c
  MBS_FORCE_POINT_ACTUATOR,      // force_elements.c
  MBS_FORCE_TORQUE_ACTUATOR,     // force_elements.c
  MBS_FORCE_HUNT_CROSSLEY,       // contact.c
  MBS_FORCE_ELASTIC_FOUNDATION,  // contact.c
  MBS_FORCE_ACTIVATION_COORDINATE_ACTUATOR,  // force_elements.c
  MBS_FORCE_MUSCLE,              // force_muscle.c
  MBS_FORCE_PATH_ACTUATOR,       // force_path.c
  MBS_FORCE_PATH_SPRING,         // force_path.c
  MBS_FORCE_LIGAMENT,            // force_path.c
  MBS_FORCE_TYPE_COUNT
} mbs_force_type;

#define MBS_FORCE_NIARG 12

typedef struct mbs_force_desc {
  mbs_force_type type;
  int body1, body2;
  int qindex, uindex;  // global coordinate / speed for mobility elements
  int param_adr;       // first parameter in the State's parameter vector
  int nparam;          // parameters (all must be finite)
  int iarg[MBS_FORCE_NIARG];  // type-specific integers (functions, geometries, ...); -1 unused
  int control;         // index into the State's controls, or -1
  int icache_adr;      // Instance-stage cache (a prepared muscle model) in st->force_icache
  int z_adr, nz;       // its auxiliary states (activation, fiber length): z[z_adr .. + nz);
                       // apply() writes their derivatives into st->zdot
  int cache_adr;       // Dynamics-stage cache (reports) in the State's force cache
  int ncache;
  char* name;
} mbs_force_desc;

// What a force element type does; one table entry per mbs_force_type (forces.c). Body forces
// are spatial forces [moment; force] in Ground about each body's origin.
typedef struct mbs_force_ops {
  const char* kind;    // e.g. "bushing"
  // type-specific parameter checks at Instance (finiteness is checked for all); may be NULL
  int (*check)(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f, const double* p);
  // add the element's forces at Dynamics; may write its report cache (st->force_cache +
  // f->cache_adr)
  void (*apply)(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f, const double* p,
                double* F_body, double* f_mob);
  // potential energy [Position]; NULL if the element stores none
  double (*potential)(const mbs_system* sys, const mbs_state* st, const mbs_force_desc* f,
                      const double* p);
} mbs_force_ops;

const mbs_force_ops* mbs_force_ops_of(mbs_force_type type);

// the operations of the element types defined outside forces.c
extern const mbs_force_ops mbs_bushing_ops, mbs_coordinate_limit_ops,
    mbs_spring_generalized_ops, mbs_external_force_ops, mbs_coordinate_actuator_ops,
    mbs_point_actuator_ops, mbs_torque_actuator_ops,
    mbs_activation_coordinate_actuator_ops;                             // force_elements.c
extern const mbs_force_ops mbs_hunt_crossley_ops, mbs_elastic_foundation_ops;  // contact.c
extern const mbs_force_ops mbs_muscle_ops;                                       // force_muscle.c
struct mbs_muscle_data;
void mbs_muscle_data_free(struct mbs_muscle_data* d);

// contact geometry and contact-force data owned by the System (contact.c)
struct mbs_contact_data;
void mbs_contact_data_free(struct mbs_contact_data* c);
// called by mbs_system_finalize before the State is laid out (may reserve parameters and
// force caches); MBS_OK when there is no contact
int mbs_contact_finalize(mbs_system* sys);

// helpers for force elements (forces.c)
// add a force f (in G) acting at point pS (in G) on body b (Ground ignored)
void mbs_force_add_point_force(const mbs_state* st, double* F_body, int b, const double pS[3],
                               const double f[3]);
// add a torque (in G) on body b (Ground ignored)
void mbs_force_add_torque(double* F_body, int b, const double torque[3]);
// station p_BS of body b: location and (if v) velocity in G
void mbs_force_station(const mbs_state* st, int b, const double p_BS[3], double p[3],
                       double v[3]);
// a parameter-check failure naming the force
int mbs_force_fail(mbs_state* st, const mbs_force_desc* f, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// building force elements (system.c)
// 0 if the system may still be built, else the status with the message set
int mbs_system_check_building(mbs_system* sys, const char* func);
// 0 if body exists, else MBS_ERR_ARGUMENT naming `what`
int mbs_system_check_body(mbs_system* sys, int body, const char* what);
// instance parameters: reserve n (defaults may be NULL: zeros); returns the first index or a
// negative status
int mbs_system_add_params(mbs_system* sys, const double* defaults, int n);
// name parameters index..index+size-1 with `path` (taken over, freed on failure); MBS_OK or
// a negative status
int mbs_system_add_param_path(mbs_system* sys, char* path, int index, int size,
                              const char* unit);
// set the system's error to "out of memory" and return its status
int mbs_system_no_memory(mbs_system* sys, const char* func);
// a new force element with np default parameters; named "<kind><index>" until renamed
int mbs_system_new_force(mbs_system* sys, mbs_force_type type, const char* kind, int body1,
                         int body2, const double* params, int np);
// declare parameters offset..offset+size-1 of force `force` as "/forceset/<name>/<field>"
int mbs_system_force_param(mbs_system* sys, int force, const char* field, int offset, int size,
                           const char* unit);
// reserve n doubles of Dynamics-stage cache (reports) for force `force`
int mbs_system_force_cache(mbs_system* sys, int force, int n);
// give force `force` a control (a State variable, default value given); returns its index
int mbs_system_force_control(mbs_system* sys, int force, double default_value, int function);
// controllers (controller.c)
struct mbs_controller_data;
void mbs_controller_data_free(struct mbs_controller_data* d);
int mbs_controllers_realize_instance(const mbs_system* sys, mbs_state* st);
void mbs_controllers_apply(const mbs_system* sys, mbs_state* st, double* controls);
// the controls in effect into st->control_eff (functions of time, the State's, controllers')
// [Velocity]; part of the applied forces
void mbs_calc_controls(const mbs_system* sys, mbs_state* st);
// give force `force` n auxiliary states z (defaults given, named fields[i] within the element:
// static strings); returns the first one's index
int mbs_system_force_z(mbs_system* sys, int force, int n, const double* defaults,
                       const char* const* fields);

// offsets of a constraint's parameters from its param_adr
enum {
  MBS_CP_P1 = 0,       // 3
  MBS_CP_P2 = 3,       // 3
  MBS_CP_A1 = 6,       // 3
  MBS_CP_A2 = 9,       // 3
  MBS_CP_VALUE = 12,
  MBS_CP_ENABLED = 13,
  MBS_CP_SIZE = 14
};
// offsets of a constraint's Instance-stage cache (derived from its parameters)
enum {
  MBS_CC_A1 = 0,       // a1 normalized, in body 1
  MBS_CC_A2 = 3,       // a2 normalized, in body 2
  MBS_CC_X1 = 6,       // unit vectors perpendicular to a1 (x1, y1 = a1 x x1), in body 1
  MBS_CC_Y1 = 9,
  MBS_CC_R1 = 12,      // rotation of the frame given by angles a1, in body 1 (9)
  MBS_CC_R2 = 21,      // rotation of the frame given by angles a2, in body 2 (9)
  MBS_CC_SIZE = 30
};

typedef struct mbs_constraint_desc {
  mbs_constraint_type type;
  char* name;
  int body1, body2;
  int qd, ud;          // dependent / locked / prescribed coordinate (global q and u index)
  int qi, ui;          // coupler: independent coordinate
  int function;
  int mp, mv, ma;      // equations by level
  int param_adr;
} mbs_constraint_desc;

struct mbs_system {
  char* name;
  int finalized;
  mbs_error err;

  // bodies (index 0 = Ground), all arrays nbody long
  int nbody, cap_body;
  char** body_name;
  char** mob_name;
  int* body_parent;
  mbs_mobilizer_type* body_mob;
  int* body_qadr;       // first coordinate in q
  int* body_nq;
  int* body_uadr;       // first speed in u
  int* body_nu;
  int* body_param_adr;  // first parameter (see MBS_BP_*)
  int* body_pool_adr;   // mobilizer pool in the State
  int* body_fmob;       // function-mobilizer index, or -1
  int* body_diadr;      // D^-1 block (nu x nu) in the State's articulated cache
  int* body_nchild;     // number of children
  mbs_function_mobilizer* fmob;
  int nfmob, cap_fmob;

  // functions
  mbs_func_desc* func;
  int nfunc, cap_func;
  int nfunc_cache;

  // forces
  mbs_force_desc* force;
  int nforce, cap_force;
  int nforce_cache;        // doubles of force report cache
  int nforce_icache;       // doubles of force Instance cache (prepared muscle models)
  struct mbs_muscle_data* muscles;   // the muscles' curve constants (force_muscle.c), or NULL
  int ncontrol, cap_control;
  double* control_default; // ncontrol
  int* control_force;      // ncontrol: the force element each control drives
  int* control_function;   // ncontrol: its function of time (replaces the State's value), or -1
  struct mbs_controller_data* controllers;  // controllers (controller.c), or NULL
  int nctrl_hist;          // doubles of the controllers' delay histories in the State
  struct mbs_contact_data* contact;  // contact geometry and contact forces (contact.c), or NULL
  struct mbs_path_data* paths;       // geometry paths (path.c), or NULL
  int nwrap_memory;                  // path wraps: what each remembers lives in the State

  // parameters
  double* param_default;
  int nparam, cap_param;
  mbs_param_info* pblock;
  int npblock, cap_pblock;

  // constraints
  mbs_constraint_desc* con;
  int ncon, cap_con;
  int mcon;            // equations of all constraints (the most a State can have active)

  // sizes
  int nq, nu, nz;
  double* z_default;       // nz: the auxiliary states' default values
  int* z_force;            // nz: the force element each belongs to
  const char** z_field;    // nz: its name within the element ("activation")
  int cap_z;
  int npool, ndi;

  // State layout, set by finalize
  double* q_default;     // nq
  size_t nvars;          // doubles in the variable block
  size_t var_q, var_u, var_z, var_param, var_fapp, var_Fapp, var_control;
  size_t scratch_bytes;
};

//---------------------------------- state ------------------------------------------------------

struct mbs_state {
  const mbs_system* sys;
  int stage;
  int abi_valid;        // articulated inertias (position-dependent, computed on demand)
  mbs_error err;

  // variables: one block [t | q | u | z | param | f_applied | F_applied | controls]
  double* vars;
  double* q;
  double* u;
  double* z;
  double* param;
  double* f_applied;    // nu
  double* F_applied;    // nbody x 6
  double* controls;     // ncontrol

  // Instance: per body
  mbs_transform* X_PF;
  mbs_transform* X_BM;
  mbs_transform* X_MB;
  unsigned char* flags;        // MBS_BF_* per body
  mbs_rigid_inertia* M_B;      // spatial inertia about B's origin, in B
  double* func_cache;

  // Position: per body
  mbs_transform* X_FM;
  mbs_transform* X_GB;
  double* R_GF;                // 9 per body
  double* l;                   // p_PB in G, 3 per body
  double* r_F;                 // p_MB in F (from M's origin to B's origin), 3 per body
  double* H_FM;                // 6 x nu, in F
  double* H;                   // 6 x nu, in G (motion of B's origin in P)
  mbs_rigid_inertia* M_G;      // spatial inertia about B's origin, in G
  double* pool;                // mobilizer pools

  // Velocity
  double* V_GB;                // 6 per body
  double* gyro;                // 6 per body: gyroscopic force [w x I w; m w x (w x c)]
  double* A_c;                 // 6 per body: Coriolis acceleration
  double* qdot;                // nq

  // articulated-body inertias (Position)
  double* P;                   // 21 per body (packed symmetric, see mbs_sym6_*)
  double* DI;                  // D^-1 blocks
  double* G;                   // 6 x nu: phi(l) P H D^-1 (shifted to the parent's origin)

  // Dynamics
  double* F_body;              // 6 per body: applied body forces incl. gravity
  double* f_mob;               // nu: applied generalized forces
  double* force_cache;         // force reports (contact force, point, penetration, ...)
  double* zdot;                // nz: the auxiliary states' derivatives
  double* force_icache;        // Instance: prepared muscle models
  struct mbs_wrap_memory* wrap_mem;  // per path wrap: the wrap it chose last (path.c)
  double* control_eff;         // Dynamics: the controls in effect (controller.c)
  double* ctrl_hist;           // the controllers' histories of delayed signals (kept with the
                               // State's variables: copied with it, recorded after steps)

  // constraints (Instance: which are active and where their equations go)
  int* con_eq;                 // per constraint: first active equation, or -1 if disabled
  int* eq_con;                 // per active equation: its constraint
  int* eq_level;               // per active equation: 0 holonomic, 1 nonholonomic, 2 accel.
  int ncon_eq, ncon_p, ncon_v; // active equations; of them holonomic; nonholonomic
  double* con_cache;           // MBS_CC_SIZE per constraint
  // constraints (Acceleration)
  double* lambda;              // multipliers of the active equations
  double* Gt;                  // G^T, nu x m column-major (column j at Gt + nu j)
  double* MinvGt;              // M^-1 G^T, same layout
  double* F_con;               // body forces of the constraints (nbody x 6), -F(lambda)
  double* f_con;               // generalized forces of the constraints (nu), -f(lambda)

  // Acceleration
  double* udot;                // nu
  double* qdotdot;             // nq
  double* A_GB;                // 6 per body

  // scratch stack
  unsigned char* stack;
  size_t stack_size, stack_top, stack_peak;

  void* block;                 // the single allocation holding everything above
};

//---------------------------------- constraint kernels -----------------------------------------

// what a constraint kernel sees
typedef struct mbs_con_ctx {
  const mbs_system* sys;
  const mbs_state* st;
  const mbs_constraint_desc* d;
  const double* p;     // parameters (MBS_CP_*)
  const double* cc;    // Instance cache (MBS_CC_*)
} mbs_con_ctx;

typedef struct mbs_constraint_ops {
  const char* name;
  int mp, mv, ma;
  // position errors (mp)                                                       [Position]
  void (*perr)(const mbs_con_ctx* c, double* e);
  // velocity errors (mp + mv) for body velocities V (nbody x 6) and speeds u   [Position]
  void (*verr)(const mbs_con_ctx* c, const double* V, const double* u, double* e);
  // acceleration errors (mp + mv + ma) for body accelerations A and u', using the State's
  // current velocities                                                         [Velocity]
  void (*aerr)(const mbs_con_ctx* c, const double* A, const double* udot, double* e);
  // add the forces of multipliers lam (body forces F, generalized forces f): they are G^T lam,
  // the dual of the velocity errors (power lam . (verr(u) - verr(0)) = V . F + u . f)
  void (*forces)(const mbs_con_ctx* c, const double* lam, double* F, double* f);
} mbs_constraint_ops;

const mbs_constraint_ops* mbs_constraint_ops_of(mbs_constraint_type type);

// realize the constraints' Instance stage (active equations, derived geometry)
int mbs_constraints_realize_instance(const mbs_system* sys, mbs_state* st);
// solve for the multipliers and correct u' and the body accelerations (after the ABA)
int mbs_constraints_solve_accelerations(const mbs_system* sys, mbs_state* st);
// body accelerations A (nbody x 6) for generalized accelerations udot, with Coriolis terms
void mbs_body_accelerations(const mbs_system* sys, const mbs_state* st, const double* udot,
                            double* A);

// body flags (Instance stage)
enum { MBS_BF_PF_NO_ROT = 1, MBS_BF_BM_IDENTITY = 2 };

//---------------------------------- internal helpers -------------------------------------------

// scratch: mark, allocate, release (LIFO). Allocation failure records MBS_ERR_STACK.
size_t mbs_stack_mark(mbs_state* st);
void* mbs_stack_alloc(mbs_state* st, size_t bytes, const char* func, int line);
void mbs_stack_release(mbs_state* st, size_t mark);
#define MBS_STACK_ALLOC(st, n, type) \
  ((type*)mbs_stack_alloc((st), (size_t)(n) * sizeof(type), __func__, __LINE__))

// invalidate the cache from `stage` upward
void mbs_state_invalidate(mbs_state* st, mbs_stage stage);

// check that a state belongs to a finalized system and is realized to `stage`
int mbs_check_stage(const mbs_system* sys, mbs_state* st, mbs_stage stage, const char* func);

// evaluate function f (with the multiplier chain) at x: value, first and second derivative
void mbs_system_eval_function(const mbs_system* sys, const mbs_state* st, int f, double x,
                              double d[3]);

// make a mobilizer context for body b
void mbs_mob_ctx_init(mbs_mob_ctx* c, const mbs_system* sys, const mbs_state* st, int b);

// articulated-body inertias (tree_dynamics.c), computed if not valid
int mbs_realize_articulated_inertias(const mbs_system* sys, mbs_state* st);
// forward dynamics by the articulated-body method (tree_dynamics.c)
int mbs_calc_forward_dynamics(const mbs_system* sys, mbs_state* st);
// applied forces of all force elements (forces.c)
int mbs_calc_applied_forces(const mbs_system* sys, mbs_state* st, double* F_body, double* f_mob);
// name the applied force that is not finite, if any (forces.c); MBS_OK if all are finite
int mbs_diagnose_forces(const mbs_system* sys, mbs_state* st);
// check force-element parameters (forces.c)
int mbs_check_force_params(const mbs_system* sys, mbs_state* st);

#endif  // MBS_CORE_MODEL_IMPL_H_
