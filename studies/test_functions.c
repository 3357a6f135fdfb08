// Test functions as built-in models (test_functions.h).
#include "test_functions.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int one_output(int dim) {
  (void)dim;
  return 1;
}

static void name_y(int dim, int k, char* buf, size_t n) {
  (void)dim;
  (void)k;
  snprintf(buf, n, "y");
}

static double zero_arg(int i) {
  (void)i;
  return 0;
}

static void ishigami(int dim, const double* x, double* y) {
  (void)dim;
  const double a = 7, b = 0.1, s2 = sin(x[1]), x3 = x[2];
  y[0] = sin(x[0]) + a * s2 * s2 + b * x3 * x3 * x3 * x3 * sin(x[0]);
}

static void linear(int dim, const double* x, double* y) {
  double s = 0;
  for (int i = 0; i < dim; i++) s += (i + 1) * x[i];
  y[0] = s;
}

static int rosenbrock_outputs(int dim) {
  return 1 + 2 * (dim - 1);
}

static void rosenbrock_name(int dim, int k, char* buf, size_t n) {
  (void)dim;
  if (k == 0) snprintf(buf, n, "y");
  else snprintf(buf, n, "r%d", k);
}

static double rosenbrock_start(int i) {
  return i == 0 ? -1.2 : 1.0;
}

static void rosenbrock(int dim, const double* x, double* y) {
  double s = 0;
  for (int i = 0; i + 1 < dim; i++) {
    const double a = 10 * (x[i + 1] - x[i] * x[i]), b = 1 - x[i];
    y[1 + 2 * i] = a;
    y[2 + 2 * i] = b;
    s += a * a + b * b;
  }
  y[0] = s;
}

static const mbs_test_function functions[] = {
    {"ishigami", "Ishigami & Homma's function of x1, x2, x3 (a = 7, b = 0.1)", 3, 3, one_output,
     name_y, zero_arg, ishigami},
    {"linear", "y = sum of i x_i over x1 .. xD", 1, MBS_TEST_FUNCTION_MAX_DIM, one_output, name_y,
     zero_arg, linear},
    {"rosenbrock", "Rosenbrock's function of x1 .. xD and its residuals r1 .. r2(D-1)", 2,
     MBS_TEST_FUNCTION_MAX_DIM, rosenbrock_outputs, rosenbrock_name, rosenbrock_start,
     rosenbrock},
};

const mbs_test_function* mbs_test_function_find(const char* name) {
  for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
    if (!strcmp(functions[i].name, name)) return &functions[i];
  return NULL;
}

int mbs_test_function_count(void) {
  return (int)(sizeof(functions) / sizeof(functions[0]));
}

const mbs_test_function* mbs_test_function_at(int i) {
  return i >= 0 && i < mbs_test_function_count() ? &functions[i] : NULL;
}
