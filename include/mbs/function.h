// Scalar functions of one variable with first and second derivatives, as OpenSim uses them to
// couple joint axes to coordinates (CustomJoint) and elsewhere.
//
// A function's numbers (constant value, coefficients, spline knots and values, multiplier scale)
// are instance parameters: they live in the State, so a study can vary them per sample. What is
// derived from them (spline coefficients) lives in the State's Instance-stage cache.
#ifndef MBS_FUNCTION_H_
#define MBS_FUNCTION_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_function_type {
  MBS_FUNC_CONSTANT = 0,         // f = value                                 params [value]
  MBS_FUNC_LINEAR,               // f = slope x + intercept                   params [slope, intercept]
  MBS_FUNC_POLYNOMIAL,           // f = c0 x^(n-1) + ... + c(n-1), highest power first (OpenSim)
  MBS_FUNC_NATURAL_CUBIC_SPLINE, // interpolating cubic, zero 2nd derivative at both ends
  MBS_FUNC_SIMM_SPLINE,          // interpolating cubic whose end 3rd derivatives match the
                                 // cubic through the 4 end points (OpenSim SimmSpline; exact
                                 // for cubic data)
  MBS_FUNC_MULTIPLIER,           // f = scale * inner(x)                      params [scale]
  MBS_FUNC_SINE,                 // f = amplitude sin(omega x + phase) + offset (OpenSim Sine)
                                 //                         params [amplitude, omega, phase, offset]
  MBS_FUNC_PIECEWISE_LINEAR,     // straight lines between points, continued past the ends
                                 // (OpenSim PiecewiseLinearFunction)        params [x..., y...]
  MBS_FUNC_PIECEWISE_LINEAR_HELD,// straight lines between points, held at the end values past
                                 // the ends (OpenSim ControlLinear without extrapolation)
  MBS_FUNC_STEPS,                // between two points the later one's value, held past the
                                 // ends (OpenSim ControlLinear with use_steps) params [x..., y...]
  MBS_FUNC_COUNT
} mbs_function_type;

// Description of a function to add to a system (see mbs_system_add_function).
typedef struct mbs_function_spec {
  mbs_function_type type;
  const char* name;      // used in error messages; may be NULL
  int n;                 // number of coefficients (polynomial) or points (splines)
  const double* coefs;   // constant: [value]; linear: [slope, intercept]; polynomial: n values;
                         // sine: [amplitude, omega, phase, offset]
  const double* x;       // splines, piecewise linear: n strictly increasing knots
  const double* y;       // splines, piecewise linear: n values
  double scale;          // multiplier
  int inner;             // multiplier: index of the function it scales (added earlier)
} mbs_function_spec;

// number of parameters a function of this type and size keeps in the State
int mbs_function_param_count(mbs_function_type type, int n);
// number of cached numbers derived from the parameters
int mbs_function_cache_count(mbs_function_type type, int n);

// Derive the cached numbers from the parameters (spline coefficients); checks the parameters
// (finite, knots strictly increasing, at least 2 points). Not for MBS_FUNC_MULTIPLIER.
int mbs_function_prepare(mbs_function_type type, int n, const double* param, double* cache,
                         mbs_error* err, const char* component);

// Evaluate f(x), f'(x), f''(x) into d[0..2]. Not for MBS_FUNC_MULTIPLIER (the system applies
// the scale to its inner function). Outside a spline's knots the end tangent line is used.
void mbs_function_eval(mbs_function_type type, int n, const double* param, const double* cache,
                       double x, double d[3]);

#ifdef __cplusplus
}
#endif

#endif  // MBS_FUNCTION_H_
