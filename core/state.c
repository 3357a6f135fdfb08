// State creation, layout, variables, stage bookkeeping and the scratch stack.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/wrap.h"
#include "model_impl.h"

static const char* const stage_names[MBS_STAGE_COUNT] = {
    "Empty", "Topology", "Model", "Instance", "Time",
    "Position", "Velocity", "Dynamics", "Acceleration", "Report"};

const char* mbs_stage_name(mbs_stage stage) {
  return (int)stage >= 0 && stage < MBS_STAGE_COUNT ? stage_names[stage] : "Unknown";
}

//---------------------------------- layout -----------------------------------------------------

#define MBS_ALIGN 64

// Assign the State's arrays inside one block starting at base (NULL: only measure).
// Returns the bytes needed; the variable block and the cache come first, the stack last.
static size_t layout(mbs_state* st, const mbs_system* sys, unsigned char* base,
                     size_t* cache_end) {
  size_t off = 0;
  const size_t nb = (size_t)sys->nbody, nq = (size_t)sys->nq, nu = (size_t)sys->nu;
#define PLACE(field, count, type)                                              \
  do {                                                                         \
    off = (off + MBS_ALIGN - 1) / MBS_ALIGN * MBS_ALIGN;                       \
    st->field = base ? (type*)(void*)(base + off) : NULL;                      \
    off += ((count) > 0 ? (size_t)(count) : 1) * sizeof(type);                 \
  } while (0)
  PLACE(vars, sys->nvars, double);
  PLACE(X_PF, nb, mbs_transform);
  PLACE(X_BM, nb, mbs_transform);
  PLACE(X_MB, nb, mbs_transform);
  PLACE(flags, nb, unsigned char);
  PLACE(M_B, nb, mbs_rigid_inertia);
  PLACE(func_cache, sys->nfunc_cache, double);
  PLACE(X_FM, nb, mbs_transform);
  PLACE(X_GB, nb, mbs_transform);
  PLACE(R_GF, 9 * nb, double);
  PLACE(l, 3 * nb, double);
  PLACE(r_F, 3 * nb, double);
  PLACE(H_FM, 6 * nu, double);
  PLACE(H, 6 * nu, double);
  PLACE(M_G, nb, mbs_rigid_inertia);
  PLACE(pool, sys->npool, double);
  PLACE(V_GB, 6 * nb, double);
  PLACE(gyro, 6 * nb, double);
  PLACE(A_c, 6 * nb, double);
  PLACE(qdot, nq, double);
  PLACE(P, MBS_SYM6_SIZE * nb, double);
  PLACE(DI, sys->ndi, double);
  PLACE(G, 6 * nu, double);
  PLACE(con_eq, sys->ncon, int);
  PLACE(eq_con, sys->mcon, int);
  PLACE(eq_level, sys->mcon, int);
  PLACE(con_cache, MBS_CC_SIZE * (size_t)sys->ncon, double);
  PLACE(lambda, sys->mcon, double);
  PLACE(Gt, nu * (size_t)sys->mcon, double);
  PLACE(MinvGt, nu * (size_t)sys->mcon, double);
  PLACE(F_con, 6 * nb, double);
  PLACE(f_con, nu, double);
  PLACE(F_body, 6 * nb, double);
  PLACE(f_mob, nu, double);
  PLACE(force_cache, sys->nforce_cache, double);
  PLACE(zdot, sys->nz, double);
  PLACE(force_icache, sys->nforce_icache, double);
  PLACE(wrap_mem, sys->nwrap_memory, mbs_wrap_memory);
  PLACE(control_eff, sys->ncontrol, double);
  PLACE(ctrl_hist, sys->nctrl_hist, double);
  PLACE(udot, nu, double);
  PLACE(qdotdot, nq, double);
  PLACE(A_GB, 6 * nb, double);
  off = (off + MBS_ALIGN - 1) / MBS_ALIGN * MBS_ALIGN;
  *cache_end = off;
  PLACE(stack, sys->scratch_bytes, unsigned char);
#undef PLACE
  return off;
}

static void point_vars(mbs_state* st, const mbs_system* sys) {
  st->q = st->vars + sys->var_q;
  st->u = st->vars + sys->var_u;
  st->z = st->vars + sys->var_z;
  st->param = st->vars + sys->var_param;
  st->f_applied = st->vars + sys->var_fapp;
  st->F_applied = st->vars + sys->var_Fapp;
  st->controls = st->vars + sys->var_control;
}

mbs_state* mbs_state_create(const mbs_system* sys) {
  if (!sys || !sys->finalized) return NULL;
  mbs_state* st = calloc(1, sizeof(*st));
  if (!st) return NULL;
  size_t cache_end;
  const size_t bytes = layout(st, sys, NULL, &cache_end);
  unsigned char* block = aligned_alloc(MBS_ALIGN, (bytes + MBS_ALIGN - 1) / MBS_ALIGN * MBS_ALIGN);
  if (!block) {
    free(st);
    return NULL;
  }
  // NaN everywhere in the cache: a read of something never computed shows up at once
  const size_t ndouble = cache_end / sizeof(double);
  double* d = (double*)(void*)block;
  for (size_t i = 0; i < ndouble; i++) d[i] = NAN;
  layout(st, sys, block, &cache_end);
  st->block = block;
  st->sys = sys;
  st->stack_size = sys->scratch_bytes;
  point_vars(st, sys);
  memset(st->flags, 0, (size_t)sys->nbody);
  memset(st->wrap_mem, 0, (size_t)sys->nwrap_memory * sizeof(mbs_wrap_memory));
  memset(st->ctrl_hist, 0, (size_t)sys->nctrl_hist * sizeof(double));
  // defaults
  st->vars[0] = 0;
  memcpy(st->q, sys->q_default, (size_t)sys->nq * sizeof(double));
  memset(st->u, 0, (size_t)sys->nu * sizeof(double));
  if (sys->nz) memcpy(st->z, sys->z_default, (size_t)sys->nz * sizeof(double));
  memcpy(st->param, sys->param_default, (size_t)sys->nparam * sizeof(double));
  memset(st->f_applied, 0, (size_t)sys->nu * sizeof(double));
  memset(st->F_applied, 0, 6 * (size_t)sys->nbody * sizeof(double));
  if (sys->ncontrol)
    memcpy(st->controls, sys->control_default, (size_t)sys->ncontrol * sizeof(double));
  st->stage = MBS_STAGE_TOPOLOGY;
  return st;
}

void mbs_state_destroy(mbs_state* st) {
  if (!st) return;
  free(st->block);
  free(st);
}

int mbs_state_copy(const mbs_system* sys, mbs_state* dst, const mbs_state* src) {
  if (!sys || !dst || !src) return MBS_ERR_ARGUMENT;
  if (dst->sys != sys || src->sys != sys)
    return MBS_FAIL(&dst->err, MBS_ERR_SYSTEM_MISMATCH, sys->name,
                    "%s: states of different systems cannot be copied", sys->name);
  // variables and cache share one layout: copy both and keep the source's stage
  const size_t n = (size_t)((unsigned char*)src->stack - (unsigned char*)src->block);
  memcpy(dst->block, src->block, n);
  dst->stage = src->stage;
  dst->abi_valid = src->abi_valid;
  dst->ncon_eq = src->ncon_eq;
  dst->ncon_p = src->ncon_p;
  dst->ncon_v = src->ncon_v;
  return MBS_OK;
}

//---------------------------------- stages -----------------------------------------------------

void mbs_state_invalidate(mbs_state* st, mbs_stage stage) {
  if (st->stage >= (int)stage) st->stage = (int)stage - 1;
  if (stage <= MBS_STAGE_POSITION) st->abi_valid = 0;
}

int mbs_check_stage(const mbs_system* sys, mbs_state* st, mbs_stage stage, const char* func) {
  if (!sys || !st) return MBS_ERR_ARGUMENT;
  if (st->sys != sys)
    return mbs_error_set(&st->err, MBS_ERR_SYSTEM_MISMATCH, func, __LINE__, sys->name,
                         "%s: the state belongs to another system", func);
  if (st->stage < (int)stage)
    return mbs_error_set(&st->err, MBS_ERR_STAGE, func, __LINE__, sys->name,
                         "%s: needs the state realized to %s stage, it is at %s", func,
                         mbs_stage_name(stage), mbs_stage_name((mbs_stage)st->stage));
  return MBS_OK;
}

mbs_stage mbs_state_stage(const mbs_state* st) { return (mbs_stage)st->stage; }
const mbs_error* mbs_state_error(const mbs_state* st) { return &st->err; }
size_t mbs_state_scratch_peak(const mbs_state* st) { return st->stack_peak; }
size_t mbs_state_scratch_size(const mbs_state* st) { return st->stack_size; }

//---------------------------------- variables --------------------------------------------------

const double* mbs_state_vars(const mbs_state* st, size_t* n) {
  if (n) *n = st->sys->nvars;
  return st->vars;
}

int mbs_state_set_vars(const mbs_system* sys, mbs_state* st, const double* vars, size_t n) {
  if (!sys || !st || !vars) return MBS_ERR_ARGUMENT;
  if (st->sys != sys || n != sys->nvars)
    return MBS_FAIL(&st->err, MBS_ERR_SYSTEM_MISMATCH, sys->name,
                    "%s: variable block of %zu numbers does not fit this system (%zu)",
                    sys->name, n, sys->nvars);
  memcpy(st->vars, vars, n * sizeof(double));
  mbs_state_invalidate(st, MBS_STAGE_INSTANCE);
  return MBS_OK;
}

double mbs_state_time(const mbs_state* st) { return st->vars[0]; }
void mbs_state_set_time(mbs_state* st, double t) {
  st->vars[0] = t;
  mbs_state_invalidate(st, MBS_STAGE_TIME);
}
const double* mbs_state_q(const mbs_state* st) { return st->q; }
double* mbs_state_upd_q(mbs_state* st) {
  mbs_state_invalidate(st, MBS_STAGE_POSITION);
  return st->q;
}
const double* mbs_state_u(const mbs_state* st) { return st->u; }
double* mbs_state_upd_u(mbs_state* st) {
  mbs_state_invalidate(st, MBS_STAGE_VELOCITY);
  return st->u;
}
const double* mbs_state_z(const mbs_state* st) { return st->z; }
double* mbs_state_upd_z(mbs_state* st) {
  mbs_state_invalidate(st, MBS_STAGE_DYNAMICS);
  return st->z;
}
const double* mbs_state_params(const mbs_state* st) { return st->param; }
double* mbs_state_upd_params(mbs_state* st) {
  mbs_state_invalidate(st, MBS_STAGE_INSTANCE);
  return st->param;
}
const double* mbs_state_applied_mobility_forces(const mbs_state* st) { return st->f_applied; }
double* mbs_state_upd_applied_mobility_forces(mbs_state* st) {
  mbs_state_invalidate(st, MBS_STAGE_DYNAMICS);
  return st->f_applied;
}
const double* mbs_state_controls(const mbs_state* st) { return st->controls; }
double* mbs_state_upd_controls(mbs_state* st) {
  mbs_state_invalidate(st, MBS_STAGE_DYNAMICS);
  return st->controls;
}
const double* mbs_state_applied_body_forces(const mbs_state* st) { return st->F_applied; }
double* mbs_state_upd_applied_body_forces(mbs_state* st) {
  mbs_state_invalidate(st, MBS_STAGE_DYNAMICS);
  return st->F_applied;
}

int mbs_state_set_param(const mbs_system* sys, mbs_state* st, const char* path, int component,
                        double value) {
  if (!sys || !st || !path) return MBS_ERR_ARGUMENT;
  const mbs_param_info* p = mbs_system_find_param(sys, path);
  if (!p)
    return MBS_FAIL(&st->err, MBS_ERR_UNKNOWN_NAME, path, "%s: no such parameter in model '%s'",
                    path, sys->name);
  if (component < 0 || component >= p->size)
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, path,
                    "%s: component %d out of range (the parameter has %d)", path, component,
                    p->size);
  st->param[p->index + component] = value;
  mbs_state_invalidate(st, MBS_STAGE_INSTANCE);
  return MBS_OK;
}

void mbs_state_normalize_q(const mbs_system* sys, mbs_state* st) {
  int changed = 0;
  for (int b = 1; b < sys->nbody; b++) {
    const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
    if (ops->quat < 0) continue;
    double* q = st->q + sys->body_qadr[b] + ops->quat;
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (n > 0 && n != 1) {
      for (int k = 0; k < 4; k++) q[k] /= n;
      changed = 1;
    }
  }
  if (changed) mbs_state_invalidate(st, MBS_STAGE_POSITION);
}

//---------------------------------- scratch stack ----------------------------------------------

size_t mbs_stack_mark(mbs_state* st) { return st->stack_top; }

void* mbs_stack_alloc(mbs_state* st, size_t bytes, const char* func, int line) {
  const size_t start = (st->stack_top + MBS_ALIGN - 1) / MBS_ALIGN * MBS_ALIGN;
  if (start + bytes > st->stack_size) {
    mbs_error_set(&st->err, MBS_ERR_STACK, func, line, st->sys->name,
                  "%s: scratch stack exhausted (%zu of %zu bytes in use, %zu more asked)", func,
                  st->stack_top, st->stack_size, bytes);
    return NULL;
  }
  st->stack_top = start + bytes;
  if (st->stack_top > st->stack_peak) st->stack_peak = st->stack_top;
  return st->stack + start;
}

void mbs_stack_release(mbs_state* st, size_t mark) { st->stack_top = mark; }
