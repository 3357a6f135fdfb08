// Exact percentiles of many columns by histogram refinement over order-preserving keys
// (see pselect.h).
#define _GNU_SOURCE  // qsort_r
#include "pselect.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NBINS 256
#define BIN_BITS 8
#define DEFAULT_CAP 128
#define DEFAULT_BUDGET ((size_t)8 << 20)

enum { STAGE_NEW, STAGE_RANGE, STAGE_REFINE, STAGE_DONE };
enum { NODE_FREE, NODE_PENDING, NODE_ACTIVE };
enum { KIND_HIST, KIND_GATHER };

typedef struct {
  long n;               // values (not NaN)
  uint64_t kmin, kmax;  // key range
  int s0;               // shift of the first histogram (a multiple of 8)
  int t0, nt;           // its targets: targets[t0 .. t0 + nt)
} pcol;

typedef struct {
  long rank;     // order statistic (0-based) among the column's values
  long node;     // the node that holds it, -1 once resolved
  double value;  // once resolved
} ptarget;

// A set of a column's values: those whose key offset u = key - kmin lies in [lo, hi], which is
// a whole bin of its parent's histogram (all of the column for the first node). Its histogram
// bins u by the 8 bits below its prefix: bin = (u >> shift) & 255.
typedef struct {
  int state, kind;
  int col;
  int shift;
  uint64_t lo, hi;
  uint64_t umin, umax;  // of the values seen in its pass
  long below;           // the column's values ordered before it
  long count;           // its values
  uint32_t* hist;
  uint64_t* vals;
  long nvals;
} pnode;

struct mbs_pselect {
  long ncols;
  int npct;
  double* pct;
  long cap;
  size_t budget;
  int stage;
  int passes;
  pcol* cols;
  ptarget* targets;
  long ntargets, max_targets;
  pnode* nodes;
  long nnodes, max_nodes;
  long* free_ids;
  long nfree;
  // the nodes of the current pass, ordered by (column, lo); per column: act_ids[act_start[j] ..
  // act_start[j + 1])
  long* act_ids;
  long nact;
  long* act_start;
  long* act_cols;  // columns with active nodes
  long nact_cols;
};

static inline uint64_t key_of(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
}

static inline double value_of(uint64_t k) {
  const uint64_t b = (k >> 63) ? k & ~((uint64_t)1 << 63) : ~k;
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

mbs_pselect* mbs_pselect_create(long ncols, const double* pct, int npct, long cap, size_t budget) {
  mbs_pselect* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->ncols = ncols > 0 ? ncols : 0;
  s->npct = npct > 0 ? npct : 0;
  s->cap = cap > 0 ? cap : DEFAULT_CAP;
  s->budget = budget > 0 ? budget : DEFAULT_BUDGET;
  s->max_targets = 2L * s->npct;
  const size_t nc = (size_t)s->ncols + 1;
  s->pct = malloc(((size_t)s->npct + 1) * sizeof(double));
  s->cols = calloc(nc, sizeof(pcol));
  s->targets = calloc(nc * (size_t)(s->max_targets + 1), sizeof(ptarget));
  // each target is in at most one node at a time
  s->max_nodes = s->ncols * s->max_targets + 1;
  s->nodes = calloc((size_t)s->max_nodes, sizeof(pnode));
  s->free_ids = malloc((size_t)s->max_nodes * sizeof(long));
  s->act_ids = malloc((size_t)s->max_nodes * sizeof(long));
  s->act_start = calloc(nc + 1, sizeof(long));
  s->act_cols = malloc(nc * sizeof(long));
  if (!s->pct || !s->cols || !s->targets || !s->nodes || !s->free_ids || !s->act_ids ||
      !s->act_start || !s->act_cols) {
    mbs_pselect_free(s);
    return NULL;
  }
  if (s->npct) memcpy(s->pct, pct, (size_t)s->npct * sizeof(double));
  return s;
}

void mbs_pselect_free(mbs_pselect* s) {
  if (!s) return;
  for (long i = 0; s->nodes && i < s->nnodes; i++) {
    free(s->nodes[i].hist);
    free(s->nodes[i].vals);
  }
  free(s->pct);
  free(s->cols);
  free(s->targets);
  free(s->nodes);
  free(s->free_ids);
  free(s->act_ids);
  free(s->act_start);
  free(s->act_cols);
  free(s);
}

int mbs_pselect_passes(const mbs_pselect* s) {
  return s->passes;
}

static long new_node(mbs_pselect* s) {
  long id;
  if (s->nfree > 0) id = s->free_ids[--s->nfree];
  else id = s->nnodes++;  // (never beyond max_nodes: one live node per target)
  memset(&s->nodes[id], 0, sizeof(pnode));
  return id;
}

static void release_node(mbs_pselect* s, long id) {
  pnode* d = &s->nodes[id];
  free(d->hist);
  free(d->vals);
  d->hist = NULL;
  d->vals = NULL;
  d->state = NODE_FREE;
  s->free_ids[s->nfree++] = id;
}

// the node for the values of column `c` with u in [lo, hi] (count of them, `below` before
// them) holding target t, or the target resolved when one value is left; `sibling` dedupes
// the children of one parent bin (-1: none yet)
static long place(mbs_pselect* s, long t, int c, uint64_t lo, uint64_t hi, int shift, long below,
                  long count, long sibling) {
  ptarget* tg = &s->targets[t];
  if (lo == hi) {  // a single key: the value itself
    tg->node = -1;
    tg->value = value_of(s->cols[c].kmin + lo);
    return -1;
  }
  if (sibling >= 0) {
    tg->node = sibling;
    return sibling;
  }
  const long id = new_node(s);
  pnode* d = &s->nodes[id];
  d->state = NODE_PENDING;
  d->kind = count <= s->cap ? KIND_GATHER : KIND_HIST;
  d->col = c;
  d->lo = lo;
  d->hi = hi;
  d->shift = shift;
  d->below = below;
  d->count = count;
  tg->node = id;
  return id;
}

// after the range pass: each column's order statistics and its first node
static void start_columns(mbs_pselect* s) {
  for (long c = 0; c < s->ncols; c++) {
    pcol* col = &s->cols[c];
    col->t0 = (int)(c * s->max_targets);
    col->nt = 0;
    if (col->n == 0) continue;
    // the ranks numpy's linear method reads: i = floor(h) and i + 1 (clamped), h = (n-1) p/100
    int nr = 0;
    for (int l = 0; l < s->npct; l++) {
      const double h = (double)(col->n - 1) * (s->pct[l] / 100.0);
      long i = (long)floor(h);
      if (i < 0) i = 0;
      if (i > col->n - 1) i = col->n - 1;
      const long j = i + 1 < col->n ? i + 1 : col->n - 1;
      const long two[2] = {i, j};
      for (int a = 0; a < 2; a++) {
        int seen = 0;
        for (int b = 0; b < nr && !seen; b++) seen = s->targets[col->t0 + b].rank == two[a];
        if (!seen) s->targets[col->t0 + nr++].rank = two[a];
      }
    }
    const uint64_t range = col->kmax - col->kmin;
    int bits = 0;
    while (bits < 64 && (range >> bits) != 0) bits++;
    const int levels = (bits + BIN_BITS - 1) / BIN_BITS;
    col->s0 = levels > 0 ? (levels - 1) * BIN_BITS : 0;
    long root = -1;
    for (int a = 0; a < nr; a++) {
      const long t = col->t0 + a;
      const long id = place(s, t, (int)c, 0, range, col->s0, 0, col->n, root);
      if (id >= 0) root = id;
    }
    col->nt = nr;
  }
}

static int cmp_active(const void* a, const void* b, void* ctx) {
  const mbs_pselect* s = ctx;
  const pnode* x = &s->nodes[*(const long*)a];
  const pnode* y = &s->nodes[*(const long*)b];
  if (x->col != y->col) return x->col < y->col ? -1 : 1;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_u64(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

int mbs_pselect_begin_pass(mbs_pselect* s) {
  if (s->stage == STAGE_NEW) {
    for (long c = 0; c < s->ncols; c++) {
      s->cols[c].n = 0;
      s->cols[c].kmin = UINT64_MAX;
      s->cols[c].kmax = 0;
    }
    s->stage = STAGE_RANGE;
    s->passes++;
    return 1;
  }
  if (s->stage == STAGE_DONE) return 0;
  // the waiting nodes, in order, within the budget (at least one)
  size_t used = 0;
  s->nact = 0;
  for (long id = 0; id < s->nnodes; id++) {
    pnode* d = &s->nodes[id];
    if (d->state != NODE_PENDING) continue;
    const size_t need = d->kind == KIND_HIST ? NBINS * sizeof(uint32_t)
                                             : (size_t)d->count * sizeof(uint64_t);
    if (s->nact > 0 && used + need > s->budget) continue;
    if (d->kind == KIND_HIST) {
      if (!(d->hist = calloc(NBINS, sizeof(uint32_t)))) return -1;
    } else if (!(d->vals = malloc((size_t)d->count * sizeof(uint64_t)))) {
      return -1;
    }
    d->nvals = 0;
    d->umin = UINT64_MAX;
    d->umax = 0;
    d->state = NODE_ACTIVE;
    used += need;
    s->act_ids[s->nact++] = id;
  }
  if (s->nact == 0) {
    s->stage = STAGE_DONE;
    return 0;
  }
  qsort_r(s->act_ids, (size_t)s->nact, sizeof(long), cmp_active, s);
  memset(s->act_start, 0, ((size_t)s->ncols + 2) * sizeof(long));
  for (long a = 0; a < s->nact; a++) s->act_start[s->nodes[s->act_ids[a]].col + 1]++;
  s->nact_cols = 0;
  for (long c = 0; c < s->ncols; c++) {
    if (s->act_start[c + 1] > 0) s->act_cols[s->nact_cols++] = c;
    s->act_start[c + 1] += s->act_start[c];
  }
  s->passes++;
  return 1;
}

void mbs_pselect_row(mbs_pselect* s, const double* v, size_t stride) {
  if (s->stage == STAGE_RANGE) {
    for (long c = 0; c < s->ncols; c++) {
      const double x = v[(size_t)c * stride];
      if (isnan(x)) continue;
      pcol* col = &s->cols[c];
      const uint64_t k = key_of(x);
      col->n++;
      if (k < col->kmin) col->kmin = k;
      if (k > col->kmax) col->kmax = k;
    }
    return;
  }
  for (long a = 0; a < s->nact_cols; a++) {
    const long c = s->act_cols[a];
    const double x = v[(size_t)c * stride];
    if (isnan(x)) continue;
    const uint64_t u = key_of(x) - s->cols[c].kmin;
    // the column's nodes are disjoint ranges ordered by lo: the last with lo <= u
    long first = s->act_start[c], last = s->act_start[c + 1] - 1;
    if (u < s->nodes[s->act_ids[first]].lo) continue;
    while (first < last) {
      const long mid = (first + last + 1) / 2;
      if (s->nodes[s->act_ids[mid]].lo <= u) first = mid;
      else last = mid - 1;
    }
    pnode* d = &s->nodes[s->act_ids[first]];
    if (u > d->hi) continue;
    if (u < d->umin) d->umin = u;
    if (u > d->umax) d->umax = u;
    if (d->kind == KIND_HIST) d->hist[(u >> d->shift) & (NBINS - 1)]++;
    else if (d->nvals < d->count) d->vals[d->nvals++] = u;
  }
}

int mbs_pselect_end_pass(mbs_pselect* s) {
  if (s->stage == STAGE_RANGE) {
    start_columns(s);
    s->stage = STAGE_REFINE;
    return 0;
  }
  for (long a = 0; a < s->nact; a++) {
    const long id = s->act_ids[a];
    pnode* d = &s->nodes[id];
    const pcol* col = &s->cols[d->col];
    if (d->kind == KIND_GATHER) {
      qsort(d->vals, (size_t)d->nvals, sizeof(uint64_t), cmp_u64);
      for (int t = col->t0; t < col->t0 + col->nt; t++) {
        ptarget* tg = &s->targets[t];
        if (tg->node != id) continue;
        long r = tg->rank - d->below;
        if (r < 0) r = 0;  // (only if the data changed between passes)
        if (r > d->nvals - 1) r = d->nvals - 1;
        tg->node = -1;
        tg->value = d->nvals > 0 ? value_of(col->kmin + d->vals[r]) : NAN;
      }
      release_node(s, id);
      continue;
    }
    // each target's bin: the child node (shared by the targets in the same bin)
    long child[NBINS];
    for (int b = 0; b < NBINS; b++) child[b] = -1;
    const int sh = d->shift;
    const uint32_t* h = d->hist;
    for (int t = col->t0; t < col->t0 + col->nt; t++) {
      ptarget* tg = &s->targets[t];
      if (tg->node != id) continue;
      long below = d->below;
      int b = 0;
      for (; b < NBINS - 1 && tg->rank >= below + (long)h[b]; b++) below += (long)h[b];
      uint64_t lo = (d->lo >> sh >> BIN_BITS << BIN_BITS | (uint64_t)b) << sh;
      uint64_t hi = lo + (((uint64_t)1 << sh) - 1);
      if (lo < d->umin) lo = d->umin;  // the values seen bound it too
      if (hi > d->umax) hi = d->umax;
      const int next = sh >= BIN_BITS ? sh - BIN_BITS : 0;
      // (the new node is never this one: it is released only below)
      const long c2 = place(s, t, d->col, lo, hi, next, below, (long)h[b], child[b]);
      if (c2 >= 0) child[b] = c2;
    }
    release_node(s, id);
  }
  return 0;
}

void mbs_pselect_result(const mbs_pselect* s, double* out, size_t out_stride) {
  for (long c = 0; c < s->ncols; c++) {
    const pcol* col = &s->cols[c];
    for (int l = 0; l < s->npct; l++) {
      double r = NAN;
      if (col->n > 0) {
        const double h = (double)(col->n - 1) * (s->pct[l] / 100.0);
        const double lo = floor(h);
        long i = (long)lo;
        if (i < 0) i = 0;
        if (i > col->n - 1) i = col->n - 1;
        const long j = i + 1 < col->n ? i + 1 : col->n - 1;
        double a = NAN, b = NAN;
        for (int t = col->t0; t < col->t0 + col->nt; t++) {
          if (s->targets[t].rank == i) a = s->targets[t].value;
          if (s->targets[t].rank == j) b = s->targets[t].value;
        }
        const double g = h - lo, d = b - a;
        r = g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
      }
      out[(size_t)l * out_stride + (size_t)c] = r;
    }
  }
}
