// Global sensitivity analysis: the sample rows and the analysis of Sobol' indices (Saltelli's
// scheme) and of Morris' elementary effects, in SALib's conventions (row order, result names).
//
// Sobol' indices: Saltelli, "Making best use of model evaluations to compute sensitivity
// indices", Comput. Phys. Commun. 145, 280-297 (2002) (the A, B, AB_j, BA_j design and the
// second-order estimator); Saltelli et al., "Variance based sensitivity analysis of model
// output. Design and estimator for the total sensitivity index", Comput. Phys. Commun. 181,
// 259-270 (2010) (first order); Jansen, "Analysis of variance designs for model output",
// Comput. Phys. Commun. 117, 35-43 (1999) (total order, and the "jansen" first and second
// order). Morris, "Factorial sampling plans for preliminary computational experiments",
// Technometrics 33, 161-174 (1991); Campolongo, Cariboni, Saltelli, "An effective screening
// design for sensitivity analysis of large models", Environ. Model. Softw. 22, 1509-1518
// (2007) (mu_star). Confidence intervals are SALib's: z_{(1+c)/2} times the standard deviation
// (ddof 1) of the index over bootstrap resamples.
//
// Everything is a pure function of its inputs and seed: random numbers come from mbs_rng with
// sample = trajectory or resample number and streams reserved for this module (studies/gsa.c).
// Non-finite outputs mark failed samples: their base point or trajectory is left out.
#ifndef MBS_GSA_H_
#define MBS_GSA_H_

#include <stdint.h>

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

//---------------------------------- Sobol' indices -------------------------------------------

// largest D of a Saltelli design (its base points are 2D-dimensional Sobol' points)
#define MBS_SALTELLI_MAX_DIM (64 / 2)

// Check N >= 1 base points of D parameters (1 <= D <= MBS_SALTELLI_MAX_DIM, row count fits).
int mbs_saltelli_check(long N, int D, int second_order, mbs_error* err);
// the number of rows: N (2D + 2) with second order, N (D + 2) without; -1 if invalid
long mbs_saltelli_rows(long N, int D, int second_order);
// The unit point u (D values) of row `row`, given the 2D-dimensional point ab = (A_i, B_i) of
// its base point i = row / (rows per base point). Within a block: A_i; AB_i^(j) (A_i with
// column j from B_i) for j = 0..D-1; with second order BA_i^(j) (B_i with column j from A_i)
// for j = 0..D-1; B_i. No allocation.
void mbs_saltelli_point(long row, int D, int second_order, const double* ab, double* u);

typedef enum mbs_sobol_estimator {
  MBS_SOBOL_SALTELLI = 0,  // SALib's: S1 Saltelli 2010, ST Jansen 1999, S2 Saltelli 2002
  MBS_SOBOL_JANSEN,        // S1, ST and S2 (closed index of {j, k}) all from Jansen's squares
  MBS_SOBOL_ESTIMATOR_COUNT
} mbs_sobol_estimator;

typedef struct mbs_sobol_options {
  int nboot;                     // bootstrap resamples (SALib: 100); below 2: conf NaN
  double conf_level;             // in (0, 1) (SALib: 0.95)
  uint64_t seed;                 // of the resampling
  mbs_sobol_estimator estimator;
} mbs_sobol_options;

// SALib's defaults: 100 resamples, level 0.95, seed 0, the "saltelli" estimator
mbs_sobol_options mbs_sobol_options_default(void);

// Sobol' indices of D parameters; the arrays are allocated by mbs_sobol_analyze in one block
// and released by mbs_sobol_indices_free. S2 and S2_conf are D x D, row-major, filled for
// j < k only (NaN elsewhere, and everywhere without second order).
typedef struct mbs_sobol_indices {
  int dim;
  int second_order;
  long n_used;                   // base points whose outputs were all finite
  long n_total;
  double *S1, *S1_conf, *ST, *ST_conf, *S2, *S2_conf;
} mbs_sobol_indices;

// Analyze Y[mbs_saltelli_rows(N, D, second_order)] in the row order above. A base point with a
// non-finite output in its block is left out; fewer than 2 left is MBS_ERR_NAN. The point
// estimates use every base point left; a constant output gives NaN indices. opt NULL: defaults.
int mbs_sobol_analyze(const double* Y, long N, int D, int second_order,
                      const mbs_sobol_options* opt, mbs_sobol_indices* out, mbs_error* err);
// release the arrays (safe on a zeroed or already freed result)
void mbs_sobol_indices_free(mbs_sobol_indices* s);

//---------------------------------- Morris elementary effects --------------------------------

#define MBS_MORRIS_MAX_DIM 65536

// Check N >= 1 trajectories of 1 <= D <= MBS_MORRIS_MAX_DIM parameters on `levels` levels
// (even, >= 2).
int mbs_morris_check(long N, int D, int levels, mbs_error* err);
// the number of rows, N (D + 1); -1 if invalid
long mbs_morris_rows(long N, int D);
// the jump Delta = levels / (2 (levels - 1))
double mbs_morris_delta(int levels);
// The unit point u (D values) of row `row`: trajectory t = row / (D + 1), step s = row % (D + 1).
// Trajectory t has a base point on {0, 1/(p-1), ..., 1 - Delta}, a direction per parameter and
// an order of the parameters (streams of (seed, t)); its row s has the first s parameters in
// that order moved by Delta in their direction, so every coordinate is a level k/(p-1) in
// [0, 1]. NaN for invalid arguments. No allocation; needs no other trajectory.
void mbs_morris_point(uint64_t seed, long row, int D, int levels, double* u);

typedef struct mbs_morris_options {
  int nboot;                     // bootstrap resamples of mu_star (default 1000); below 2: NaN
  double conf_level;             // in (0, 1) (default 0.95)
  uint64_t seed;                 // of the resampling
} mbs_morris_options;

mbs_morris_options mbs_morris_options_default(void);

// Morris measures of D parameters; the arrays are allocated by mbs_morris_analyze in one block
// and released by mbs_morris_result_free.
typedef struct mbs_morris_result {
  int dim;
  long n_used;                   // trajectories whose outputs were all finite
  long n_total;
  double *mu, *mu_star, *sigma, *mu_star_conf;
} mbs_morris_result;

// Analyze the unit points U (rows x D, row-major) and outputs Y (rows = N (D + 1)): in each
// trajectory consecutive rows must differ in exactly one coordinate, each parameter once
// (MBS_ERR_ARGUMENT otherwise); EE_j = (y_{k+1} - y_k) / (u_{k+1,j} - u_{k,j}). mu, mu_star =
// mean |EE|, sigma (ddof 1) over the trajectories with finite outputs (fewer than 2:
// MBS_ERR_NAN); mu_star_conf from resampling each parameter's effects. opt NULL: defaults.
int mbs_morris_analyze(const double* U, const double* Y, long N, int D,
                       const mbs_morris_options* opt, mbs_morris_result* out, mbs_error* err);
// release the arrays (safe on a zeroed or already freed result)
void mbs_morris_result_free(mbs_morris_result* m);

#ifdef __cplusplus
}
#endif

#endif  // MBS_GSA_H_
