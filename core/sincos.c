// sin and cos together, for joint angles.
//
// Evaluating a rotation from an angle is in every position realization, and the C library's
// sincos was 13% of the forward-dynamics time of a pin chain. This one reduces the argument by
// multiples of pi/2 with a three-part constant (Cody and Waite) and evaluates the classical
// minimax polynomials on [-pi/4, pi/4] (the coefficients published with Sun's fdlibm), with the
// compensated form of cosine near 1. It agrees with the correctly rounded result to about one
// units in the last place for |x| < 2^20 (tests/core/test_spatial.c checks it against libm) and
// gives the same bits on every machine, whatever the C library. Larger or non-finite arguments
// go to the C library.
#include <math.h>

#include "mbs/spatial.h"

// pi/2 = P1 + P2 + P3, P1 and P2 with trailing zero bits so that k P1 and k P2 are exact
static const double P1 = 1.57079632673412561417e+00;
static const double P2 = 6.07710050630396597660e-11;
static const double P3 = 2.02226624871116645580e-21;
static const double TWO_OVER_PI = 6.36619772367581382433e-01;
static const double ROUND = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer

// sin(r) and cos(r) for |r| <= pi/4
static inline void kernel(double r, double* s, double* c) {
  const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
               S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
               S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
               C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
               C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  const double z = r * r;
  const double ps = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
  *s = r + (r * z) * (S1 + z * ps);
  const double pc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
  const double hz = 0.5 * z;
  const double w = 1.0 - hz;
  *c = w + (((1.0 - w) - hz) + z * pc);
}

void mbs_sincos(double x, double* s, double* c) {
  const double ax = fabs(x);
  if (x == 0) {  // keeps the sign of -0
    *s = x;
    *c = 1;
    return;
  }
  if (ax <= 0.78539816339744830962) {  // |x| <= pi/4: no reduction
    kernel(x, s, c);
    return;
  }
  if (!(ax < 1647099.0)) {  // about 2^20 pi/2, and NaN or infinity
    *s = sin(x);
    *c = cos(x);
    return;
  }
  const double k = (x * TWO_OVER_PI + ROUND) - ROUND;  // nearest integer (|x| < 2^20 here)
  const double r = ((x - k * P1) - k * P2) - k * P3;
  double sr, cr;
  kernel(r, &sr, &cr);
  switch ((long)k & 3) {
    case 0: *s = sr; *c = cr; break;
    case 1: *s = cr; *c = -sr; break;
    case 2: *s = -sr; *c = -cr; break;
    default: *s = -cr; *c = sr; break;
  }
}
