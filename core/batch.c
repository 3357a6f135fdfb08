// Batched forward dynamics (include/mbs/batch.h): which Systems the vector path handles, the
// batch object, the choice of instruction set at run time, and the one-at-a-time fallback for
// the States the vector kernels (core/batch_kernel.h) cannot finish.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_impl.h"

//---------------------------------- instruction sets -------------------------------------------

static const char* const isa_names[MBS_BATCH_ISA_COUNT] = {"portable", "avx2", "avx512"};

static int isa_runs(mbs_batch_isa_id isa) {
  switch (isa) {
    case MBS_BATCH_PORTABLE:
      return 1;
#if defined(__x86_64__) || defined(__i386__)
    case MBS_BATCH_AVX2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case MBS_BATCH_AVX512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    default:
      return 0;
  }
}

static int isa_from_name(const char* name) {
  for (int i = 0; i < MBS_BATCH_ISA_COUNT; i++)
    if (name && strcmp(name, isa_names[i]) == 0) return i;
  return -1;
}

static int isa_width(mbs_batch_isa_id isa) {
  switch (isa) {
    case MBS_BATCH_AVX512: return 8;
    case MBS_BATCH_AVX2: return 4;
    default: return mbs_batch_width_portable();
  }
}

static mbs_batch_isa_id default_isa(void) {
  const int env = isa_from_name(getenv("MBS_BATCH_ISA"));
  if (env >= 0 && isa_runs((mbs_batch_isa_id)env)) return (mbs_batch_isa_id)env;
  for (int i = MBS_BATCH_ISA_COUNT - 1; i > 0; i--)
    if (isa_runs((mbs_batch_isa_id)i)) return (mbs_batch_isa_id)i;
  return MBS_BATCH_PORTABLE;
}

const char* mbs_batch_isa(void) { return isa_names[default_isa()]; }

int mbs_batch_isa_available(const char* isa) {
  const int i = isa_from_name(isa);
  return i >= 0 && isa_runs((mbs_batch_isa_id)i);
}

const char* mbs_batch_get_isa(const mbs_batch* batch) {
  return batch ? isa_names[batch->isa] : NULL;
}

int mbs_batch_set_isa(mbs_batch* batch, const char* isa) {
  if (!batch) return MBS_ERR_ARGUMENT;
  const int i = isa_from_name(isa);
  if (i < 0)
    return MBS_FAIL(&batch->err, MBS_ERR_ARGUMENT, "batch",
                    "batch: unknown instruction set '%s' (avx512, avx2 or portable)",
                    isa ? isa : "(null)");
  if (!isa_runs((mbs_batch_isa_id)i))
    return MBS_FAIL(&batch->err, MBS_ERR_ARGUMENT, "batch",
                    "batch: this CPU cannot run the %s path", isa_names[i]);
  batch->isa = (mbs_batch_isa_id)i;
  batch->width = isa_width(batch->isa);
  return MBS_OK;
}

//---------------------------------- what is supported ------------------------------------------

static int mobilizer_supported(mbs_mobilizer_type t) {
  switch (t) {
    case MBS_MOB_WELD: case MBS_MOB_PIN: case MBS_MOB_SLIDER: case MBS_MOB_UNIVERSAL:
    case MBS_MOB_CYLINDER: case MBS_MOB_PLANAR: case MBS_MOB_SCREW: case MBS_MOB_TRANSLATION:
    case MBS_MOB_GIMBAL: case MBS_MOB_BALL: case MBS_MOB_BALL_XYZ: case MBS_MOB_FREE:
    case MBS_MOB_FREE_XYZ:
      return 1;
    default:
      return 0;
  }
}

static int force_supported(mbs_force_type t) {
  switch (t) {
    case MBS_FORCE_GRAVITY: case MBS_FORCE_MOBILITY: case MBS_FORCE_BODY_FORCE:
    case MBS_FORCE_BODY_TORQUE: case MBS_FORCE_SPRING: case MBS_FORCE_DAMPER:
    case MBS_FORCE_MOBILITY_SPRING: case MBS_FORCE_MOBILITY_DAMPER:
      return 1;
    default:
      return 0;
  }
}

#define SUPPORTED_MOBILIZERS \
  "weld, pin, slider, universal, cylinder, planar, screw, translation, gimbal, ball, ball_xyz, " \
  "free, free_xyz"
#define SUPPORTED_FORCES \
  "gravity, mobility_force, body_force, body_torque, spring, damper, mobility_spring, " \
  "mobility_damper"

static int refuse(char* why, size_t n, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char* why, size_t n, const char* fmt, ...) {
  if (why && n > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return 0;
}

int mbs_batch_supported(const mbs_system* sys, char* why, size_t n) {
  if (why && n > 0) why[0] = '\0';
  if (!sys) return refuse(why, n, "no system");
  if (!sys->finalized)
    return refuse(why, n, "system '%s' is not finalized", sys->name);
  for (int b = 1; b < sys->nbody; b++)
    if (!mobilizer_supported(sys->body_mob[b]))
      return refuse(why, n,
                    "body '%s': mobilizer '%s' (%s) is not supported by the batched path yet "
                    "(supported: " SUPPORTED_MOBILIZERS ")",
                    sys->body_name[b], sys->mob_name[b],
                    mbs_mobilizer_type_name(sys->body_mob[b]));
  for (int i = 0; i < sys->nforce; i++)
    if (!force_supported(sys->force[i].type))
      return refuse(why, n,
                    "force '%s' (%s) is not supported by the batched path yet (supported: "
                    SUPPORTED_FORCES ")",
                    sys->force[i].name, mbs_force_ops_of(sys->force[i].type)->kind);
  if (sys->ncon > 0)
    return refuse(why, n, "constraint '%s': constraints are not supported by the batched path yet",
                  sys->con[0].name);
  if (sys->controllers)
    return refuse(why, n, "system '%s': controllers are not supported by the batched path yet",
                  sys->name);
  if (sys->ncontrol > 0 || sys->nz > 0)
    return refuse(why, n,
                  "system '%s': controls and auxiliary states are not supported by the batched "
                  "path yet",
                  sys->name);
  return 1;
}

//---------------------------------- the batch object -------------------------------------------

mbs_batch* mbs_batch_create(const mbs_system* sys, int lanes) {
  if (lanes < 1 || !mbs_batch_supported(sys, NULL, 0)) return NULL;
  mbs_batch* bt = calloc(1, sizeof(*bt));
  if (!bt) return NULL;
  bt->sys = sys;
  bt->lanes = lanes;
  bt->isa = default_isa();
  bt->width = isa_width(bt->isa);
  const size_t vec_bytes = MBS_BATCH_WMAX * sizeof(double);
  const size_t ws_bytes = mbs_batch_ws_vectors(sys) * vec_bytes;
  bt->ws = aligned_alloc(vec_bytes, ws_bytes);
  const size_t L = (size_t)lanes;
  bt->udot = malloc(L * (size_t)(sys->nu > 0 ? sys->nu : 1) * sizeof(double));
  bt->qdot = malloc(L * (size_t)(sys->nq > 0 ? sys->nq : 1) * sizeof(double));
  bt->status = calloc(L, sizeof(int));
  bt->redo = calloc(L, 1);
  bt->body_nparam = calloc((size_t)sys->nbody, sizeof(int));
  bt->first_child = calloc((size_t)sys->nbody, 1);
  bt->elem = malloc((size_t)(sys->nforce > 0 ? sys->nforce : 1) * sizeof(int));
  bt->grav = malloc((size_t)(sys->nforce > 0 ? sys->nforce : 1) * sizeof(int));
  unsigned char* seen = calloc((size_t)sys->nbody, 1);
  if (!bt->ws || !bt->udot || !bt->qdot || !bt->status || !bt->redo || !bt->body_nparam ||
      !bt->first_child || !bt->elem || !bt->grav || !seen) {
    free(seen);
    mbs_batch_destroy(bt);
    return NULL;
  }
  memset(bt->ws, 0, ws_bytes);
  memset(bt->udot, 0, L * (size_t)(sys->nu > 0 ? sys->nu : 1) * sizeof(double));
  memset(bt->qdot, 0, L * (size_t)(sys->nq > 0 ? sys->nq : 1) * sizeof(double));
  for (int b = sys->nbody - 1; b >= 1; b--) {
    const mbs_mobilizer_type t = sys->body_mob[b];
    bt->body_nparam[b] = MBS_BP_MOB + (t == MBS_MOB_SCREW ? 1 : 0);
    const int par = sys->body_parent[b];
    bt->first_child[b] = par != 0 && !seen[par];
    seen[par] = 1;
  }
  free(seen);
  // the States' data of a large System no longer stays in cache between groups
  bt->prefetch = sys->nbody > 24;
  // the leading gravity elements act in the outward pass; the others in the System's order after
  // it, so that each body's forces add up in the one-at-a-time path's order
  for (int i = 0; i < sys->nforce; i++) {
    if (sys->force[i].type == MBS_FORCE_GRAVITY && bt->nelem == 0 && bt->ngrav < MBS_BATCH_NGRAV)
      bt->grav[bt->ngrav++] = i;
    else
      bt->elem[bt->nelem++] = i;
  }
  for (int e = 0; e < bt->nelem; e++)
    if (sys->force[bt->elem[e]].type == MBS_FORCE_GRAVITY) bt->keep_mass = 1;
  mbs_error_clear(&bt->err);
  return bt;
}

void mbs_batch_destroy(mbs_batch* bt) {
  if (!bt) return;
  free(bt->ws);
  free(bt->udot);
  free(bt->qdot);
  free(bt->status);
  free(bt->redo);
  free(bt->body_nparam);
  free(bt->first_child);
  free(bt->elem);
  free(bt->grav);
  free(bt);
}

int mbs_batch_lanes(const mbs_batch* bt) { return bt ? bt->lanes : 0; }
int mbs_batch_width(const mbs_batch* bt) { return bt ? bt->width : 0; }
const mbs_error* mbs_batch_error(const mbs_batch* bt) { return bt ? &bt->err : NULL; }

const double* mbs_batch_udot(const mbs_batch* bt, int i) {
  if (!bt || i < 0 || i >= bt->nlast) return NULL;
  return bt->udot + (size_t)i * (size_t)bt->sys->nu;
}

const double* mbs_batch_qdot(const mbs_batch* bt, int i) {
  if (!bt || i < 0 || i >= bt->nlast) return NULL;
  return bt->qdot + (size_t)i * (size_t)bt->sys->nq;
}

int mbs_batch_status(const mbs_batch* bt, int i) {
  if (!bt || i < 0 || i >= bt->nlast) return MBS_ERR_ARGUMENT;
  return bt->status[i];
}

//---------------------------------- forward dynamics -------------------------------------------

int mbs_batch_forward_dynamics(mbs_batch* bt, const mbs_system* sys, mbs_state* const* states,
                               int n) {
  if (!bt) return MBS_ERR_ARGUMENT;
  mbs_error_clear(&bt->err);
  bt->nlast = 0;
  if (!sys || sys != bt->sys)
    return MBS_FAIL(&bt->err, MBS_ERR_SYSTEM_MISMATCH, "batch",
                    "%s: the batch was made for another system", __func__);
  if (!states || n < 1 || n > bt->lanes)
    return MBS_FAIL(&bt->err, MBS_ERR_ARGUMENT, sys->name,
                    "%s: %d States for a batch of %d lanes (1..%d)", __func__, n, bt->lanes,
                    bt->lanes);
  for (int i = 0; i < n; i++) {
    mbs_state* st = states[i];
    if (!st)
      return MBS_FAIL(&bt->err, MBS_ERR_ARGUMENT, sys->name, "%s: State %d is NULL", __func__, i);
    if (st->sys != sys)
      return MBS_FAIL(&bt->err, MBS_ERR_SYSTEM_MISMATCH, sys->name,
                      "%s: State %d belongs to another system", __func__, i);
  }
  // each State's parameters -> its Instance cache (checked there); time must be finite
  for (int i = 0; i < n; i++) {
    mbs_state* st = states[i];
    bt->status[i] = MBS_OK;
    bt->redo[i] = 0;
    if (st->stage < MBS_STAGE_INSTANCE && mbs_realize_instance(sys, st) != MBS_OK)
      bt->redo[i] = 1;
    if (!isfinite(st->vars[0])) bt->redo[i] = 1;
  }
  bt->nlast = n;
  switch (bt->isa) {
    case MBS_BATCH_AVX512: mbs_batch_kernel_avx512(bt, sys, states, n); break;
    case MBS_BATCH_AVX2: mbs_batch_kernel_avx2(bt, sys, states, n); break;
    default: mbs_batch_kernel_portable(bt, sys, states, n); break;
  }
  // the States the vector path could not finish: the one-at-a-time path, for its result or
  // its error
  int first = MBS_OK;
  for (int i = 0; i < n; i++) {
    if (!bt->redo[i]) continue;
    mbs_state* st = states[i];
    const int rc = mbs_realize_acceleration(sys, st);
    if (rc == MBS_OK) {
      memcpy(bt->udot + (size_t)i * sys->nu, st->udot, (size_t)sys->nu * sizeof(double));
      memcpy(bt->qdot + (size_t)i * sys->nq, st->qdot, (size_t)sys->nq * sizeof(double));
      continue;
    }
    bt->status[i] = rc;
    if (first == MBS_OK) {
      first = rc;
      mbs_error_set(&bt->err, rc, st->err.func ? st->err.func : __func__, st->err.line,
                    st->err.component, "State %d: %s", i, st->err.message);
    }
  }
  return first;
}
