// Least-distance programming with equality constraints and bounds (internal to core/):
//
//   minimize ||x||^2  subject to  A x = b,  lo <= x <= hi
//
// by Lawson & Hanson's method (Solving Least Squares Problems, 1974, ch. 23): the equalities
// are eliminated through a rank-revealing QR factorization of A^T (x = x_p + Z v, x_p the
// minimum-norm solution, Z an orthonormal basis of A's null space; redundant rows are dropped
// when consistent and reported when not), and the bounds on v become a least-distance program
// min ||v|| s.t. G v >= h, solved exactly through the non-negative least-squares problem
// min ||[G^T; h^T] u - e_{k+1}||, u >= 0 (active-set NNLS, finite). The active bounds it finds
// are then fixed and the equality-constrained problem on the free variables solved once more by
// QR, which gives the solution to rounding and its Lagrange multipliers (checked for sign: the
// Karush-Kuhn-Tucker conditions).
//
// The workspace is sized once for at most nmax variables and mmax equalities; solving
// allocates nothing.
#ifndef MBS_CORE_LEAST_DISTANCE_H_
#define MBS_CORE_LEAST_DISTANCE_H_

typedef struct mbs_lsd mbs_lsd;

enum {
  MBS_LSD_OK = 0,
  MBS_LSD_INCONSISTENT = 1,  // the equalities contradict each other (*bad_row: one of them)
  MBS_LSD_INFEASIBLE = 2,    // the bounds leave no point satisfying the equalities
  MBS_LSD_FAILED = 3,        // the NNLS iteration limit was reached, or LAPACK failed
};

mbs_lsd* mbs_lsd_create(int nmax, int mmax);
void mbs_lsd_free(mbs_lsd* w);

// Solve for x (n) with A m x n column-major (leading dimension lda); lo and hi may hold -inf
// and inf (NULL: unbounded). On MBS_LSD_INCONSISTENT *bad_row is the index of a row that
// cannot be met; x is left undefined unless MBS_LSD_OK. lambda (m, may be NULL) receives the
// multipliers of the equalities for the objective ||x||^2 / 2 (x_free = (A^T lambda)_free);
// *nactive (may be NULL) the number of variables at a bound.
int mbs_lsd_solve(mbs_lsd* w, int m, int n, const double* A, int lda, const double* b,
                  const double* lo, const double* hi, double* x, double* lambda, int* bad_row,
                  int* nactive);

#endif  // MBS_CORE_LEAST_DISTANCE_H_
