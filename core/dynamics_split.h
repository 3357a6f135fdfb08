// Internal to core/: what static optimization and induced accelerations share — the applied
// forces split by force element, and the acceleration response of a constrained system.
//
// The forces of one element are what the element's own apply function adds (its entry of the
// force table) on a State realized to Velocity whose controls in effect are current
// (mbs_calc_controls); nothing else of the State changes but that element's report cache and
// state derivatives, which the same inputs would give anyway.
//
// With active constraint equations G u' = b, a generalized force f and the bias terms give
// u' = a - M^-1 G^T lambda, a = M^-1 (f - C), Y lambda = G a - b, Y = G M^-1 G^T (its
// pseudo-inverse when constraints are redundant, as the forward dynamics uses least squares);
// the response to a force alone (no velocity terms) uses G a for the right-hand side.
#ifndef MBS_CORE_DYNAMICS_SPLIT_H_
#define MBS_CORE_DYNAMICS_SPLIT_H_

#include "model_impl.h"

// the forces of element `force` alone: F (nbody x 6) and f (nu), zeroed first
void mbs_split_force(const mbs_system* sys, mbs_state* st, int force, double* F, double* f);
// g = J^T F + f (F may be NULL) [Position]
int mbs_split_generalized(const mbs_system* sys, mbs_state* st, const double* F,
                          const double* f, double* g);

typedef struct mbs_cresp mbs_cresp;

// room for mmax rows in all
mbs_cresp* mbs_cresp_create(int nu, int mmax);
void mbs_cresp_free(mbs_cresp* c);
// factor at the State's active constraint equations and mx more rows Gx (mx x nu, row-major,
// may be NULL) [Position]; the number of rows (equations, then Gx's) in *m
int mbs_cresp_prepare(mbs_cresp* c, const mbs_system* sys, mbs_state* st, const double* Gx,
                      int mx, int* m);
// a <- a - M^-1 G^T lambda, lambda = Y^+ e; e (m) the acceleration errors of a, or NULL for
// G a (a force's response alone); lam (m, may be NULL) receives lambda
void mbs_cresp_project(mbs_cresp* c, double* a, const double* e, double* lam);

#endif  // MBS_CORE_DYNAMICS_SPLIT_H_
