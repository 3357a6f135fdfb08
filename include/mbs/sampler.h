// Random numbers and sample designs for studies.
//
// Every number is a pure function of (study seed, sample index, stream, draw): a counter-based
// generator (Random123's Philox4x64-10) keyed by the seed, with the counter made of the sample
// index, the stream and the draw number. A sample's numbers therefore do not depend on which
// rank or thread computes it, or in which order. Designs (Latin hypercube, Sobol) are pure
// functions of (seed, sample count, sample index) as well.
#ifndef MBS_SAMPLER_H_
#define MBS_SAMPLER_H_

#include <stdint.h>

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// The generator of one (seed, sample, stream): draw k is Philox4x64-10 of the counter
// (sample, stream, k / 4, 0) under the key (seed, 0), lane k % 4.
typedef struct mbs_rng {
  uint64_t seed, sample, stream;
  uint64_t draw;       // next draw number
} mbs_rng;

mbs_rng mbs_rng_make(uint64_t seed, uint64_t sample, uint64_t stream);
// the next 64 random bits
uint64_t mbs_rng_bits(mbs_rng* r);
// uniform in the open interval (0, 1), 53 random bits
double mbs_rng_uniform(mbs_rng* r);
// standard normal (inverse of the normal CDF applied to one uniform: one draw per number, so
// a sample's k-th normal is always its k-th draw)
double mbs_rng_normal(mbs_rng* r);

// The standard normal CDF and its inverse (Wichura's AS241, about 1e-16 relative).
double mbs_normal_cdf(double x);
double mbs_normal_quantile(double p);

// Distributions of a study parameter.
typedef enum mbs_dist_type {
  MBS_DIST_UNIFORM = 0,       // a, b: low, high
  MBS_DIST_NORMAL,            // a, b: mean, standard deviation
  MBS_DIST_LOGNORMAL,         // a, b: mean and standard deviation of log(x)
  MBS_DIST_TRUNCATED_NORMAL,  // a, b: mean, standard deviation of the untruncated normal;
                              // lo, hi: bounds
  MBS_DIST_DISCRETE,          // values[n], equally likely
  MBS_DIST_CONSTANT,          // a
  MBS_DIST_COUNT
} mbs_dist_type;

typedef struct mbs_distribution {
  mbs_dist_type type;
  double a, b;
  double lo, hi;              // truncated normal
  const double* values;       // discrete (not owned)
  int nvalues;
} mbs_distribution;

// check a distribution's numbers (finite, b > 0 for normal families, low < high, lo < hi with
// non-negligible mass between, n >= 1); MBS_ERR_PARAMETER with a message naming `what`
int mbs_distribution_check(const mbs_distribution* d, const char* what, mbs_error* err);
// the value at probability p in (0, 1) (inverse CDF; discrete: values[floor(p n)])
double mbs_distribution_quantile(const mbs_distribution* d, double p);
// mean and variance (for tests and summaries)
double mbs_distribution_mean(const mbs_distribution* d);
double mbs_distribution_variance(const mbs_distribution* d);

// Sample designs: the unit-hypercube point u (dim numbers in (0, 1)) of sample `index` among
// `count`; each parameter then takes mbs_distribution_quantile(d_j, u_j).
typedef enum mbs_design_type {
  MBS_DESIGN_RANDOM = 0,      // independent uniforms: u_j = mbs_rng_uniform(seed, index, j)
  MBS_DESIGN_LHS,             // Latin hypercube: in each dimension the count samples fall one
                              // into each of `count` equal strata, strata permuted by a
                              // seeded permutation per dimension, a uniform position within
  MBS_DESIGN_SOBOL,           // Sobol' low-discrepancy sequence (Joe-Kuo direction numbers);
                              // with seed != 0 scrambled by a seeded random digital shift and
                              // taken from point 0, so that 2^k points fill every stratum of
                              // size 2^-k once; with seed 0 unscrambled from point 1 (the
                              // origin is not inside (0, 1)); up to MBS_SOBOL_MAX_DIM dimensions
  MBS_DESIGN_GRID,            // full factorial over discrete levels: see mbs_grid_point (the
                              // levels are not known to mbs_design_point, which gives NaN)
  MBS_DESIGN_COUNT
} mbs_design_type;

#define MBS_SOBOL_MAX_DIM 64

// Check that a design can make `count` points of `dim` dimensions.
int mbs_design_check(mbs_design_type type, long count, int dim, mbs_error* err);
// The point of sample `index` (0 <= index < count). No allocation; LHS costs O(log count) per
// coordinate (the permutation is evaluated, not stored).
void mbs_design_point(mbs_design_type type, uint64_t seed, long count, long index, int dim,
                      double* u);

// Full factorial grid over dim factors of levels[j] levels each: sample `index` takes level
// k_j of factor j, the first factor varying slowest and the last fastest, and
// u_j = (k_j + 0.5) / levels[j], the middle of the k_j-th of levels[j] equal strata, so that a
// discrete distribution of levels[j] values takes its k_j-th value. NaN for a bad index.
void mbs_grid_point(const int* levels, int dim, long index, double* u);
// the number of grid points (the product of the levels), or -1 when a level count is below 1
// or the product exceeds MBS_DESIGN_MAX_COUNT
long mbs_grid_count(const int* levels, int dim);

// names: "random", "lhs", "sobol", "grid"; "uniform", "normal", "lognormal", "truncated_normal",
// "discrete", "constant"; -1 if unknown
int mbs_design_from_name(const char* name);
const char* mbs_design_name(mbs_design_type t);
int mbs_dist_from_name(const char* name);
const char* mbs_dist_name(mbs_dist_type t);

#ifdef __cplusplus
}
#endif

#endif  // MBS_SAMPLER_H_
