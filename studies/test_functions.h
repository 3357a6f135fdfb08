// Test functions as built-in models: formulas of the parameters instead of simulations, so that
// the study drivers are checked against known answers without physics (`model: ishigami`).
// Their parameters are /x1 … /xD (the arguments), their outputs per-sample scalars.
//
//   ishigami    y = sin x1 + a sin² x2 + b x3⁴ sin x1, a = 7, b = 0.1 (Ishigami & Homma 1990);
//               D = 3. With x_i uniform on [−π, π]: V = a²/8 + bπ⁴/5 + b²π⁸/18 + 1/2,
//               S1 = (0.3139, 0.4424, 0), ST = (0.5576, 0.4424, 0.2437).
//   linear      y = Σ i·x_i, i = 1 … D (1 ≤ D ≤ 64): with independent inputs,
//               S1_i = ST_i = i² Var x_i / Σ j² Var x_j, and Morris' elementary effects are
//               exactly i (unit ranges).
//   rosenbrock  y = Σ_{i<D} 100 (x_{i+1} − x_i²)² + (1 − x_i)² (2 ≤ D ≤ 64), and its residuals
//               r1 … r_{2(D−1)}: r_{2i−1} = 10 (x_{i+1} − x_i²), r_{2i} = 1 − x_i, so that
//               y = Σ r_k² (a least-squares problem with minimum 0 at x = (1, …, 1)).
//
// Default argument values (the "model's value"): 0, except rosenbrock's classic start
// (−1.2, 1, 1, …).
#ifndef MBS_STUDIES_TEST_FUNCTIONS_H_
#define MBS_STUDIES_TEST_FUNCTIONS_H_

#include <stddef.h>

#define MBS_TEST_FUNCTION_MAX_DIM 64

typedef struct mbs_test_function {
  const char* name;
  const char* description;
  int min_dim, max_dim;          // the number D of arguments x1 … xD
  int (*noutputs)(int dim);
  void (*output_name)(int dim, int k, char* buf, size_t n);
  double (*default_arg)(int i);  // argument i (0-based)
  void (*eval)(int dim, const double* x, double* y);
} mbs_test_function;

// the test function of that name, or NULL
const mbs_test_function* mbs_test_function_find(const char* name);
int mbs_test_function_count(void);
const mbs_test_function* mbs_test_function_at(int i);

#endif  // MBS_STUDIES_TEST_FUNCTIONS_H_
