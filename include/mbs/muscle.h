// Musculotendon models as pure numerical kernels: OpenSim's Thelen2003Muscle,
// Millard2012EquilibriumMuscle, DeGrooteFregly2016Muscle, RigidTendonMuscle, the two SIMM
// models OpenSim 4 keeps as Schutte1993Muscle_Deprecated and Delp1990Muscle_Deprecated, and
// OpenSim 2's Thelen model it keeps as Thelen2003Muscle_Deprecated, without System or State. Every function is a pure function of its arguments; evaluation allocates
// nothing and keeps no state between calls.
//
// Sources: the Hill-type equilibrium model of the OpenSim paper (Seth et al. 2011, section 2.3,
// eqs. O-1..O-5 of the papers digest); Thelen, J Biomech Eng 125:70-77 (2003) with OpenSim's modifications
// (exact toe strain, linearly extrapolated inverse force-velocity curve); Millard, Uchida,
// Seth & Delp, J Biomech Eng 135(2):021005 (2013): C2 quintic Bezier curves and the damped
// equilibrium; De Groote, Kinney, Rao & Fregly, Ann Biomed Eng 44:2922-2936 (2016): smooth
// closed-form curves, tendon force as the fiber state; OpenSim's RigidTendonMuscle with its
// default SimmSpline curves (the SIMM / Delp 1990 tables); Schutte, Rodgers, Zajac & Glaser,
// Scand J Rehabil Med 25:181-187 (1993) and Delp, PhD thesis, Stanford (1990), as OpenSim 4's
// Schutte1993Muscle_Deprecated and Delp1990Muscle_Deprecated compute them (tabulated curves,
// SIMM's activation dynamics, Schutte's damped force-velocity relation, Delp's fiber mass);
// Thelen's model as OpenSim 1.x and 2.x computed it (Thelen2003Muscle_Deprecated: Thelen's
// curves in their first form, a damped force-velocity relation whose maximum velocity grows
// with activation, first-order activation dynamics).
//
// Units: lengths m, forces N, time s. Normalized fiber length l~ = l^M / l_opt, normalized
// tendon length l~T = l^T / L_ST, normalized fiber velocity v~ = v^M / (l_opt v_max) with
// v_max in optimal fiber lengths per second (Schutte's and Delp's curves take v^M time_scale /
// l_opt instead); lengthening is positive.
//
// Layers: the normalized curves (their own functions below), the pennation model, the
// activation dynamics, the fiber dynamics mbs_muscle_eval, and the equilibrium initialization
// mbs_muscle_equilibrium_solve.
// A model is made once from its parameters by mbs_muscle_prepare (curve control points,
// spline coefficients, derived constants); the result is a flat struct without pointers, so
// it can be copied with memcpy and kept in a State's Instance-stage cache.
#ifndef MBS_MUSCLE_H_
#define MBS_MUSCLE_H_

#include "mbs/function.h"
#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Curve parameters (OpenSim property names and defaults)
// ---------------------------------------------------------------------------------------------

// Thelen 2003 (Thelen2003Muscle properties).
typedef struct mbs_thelen2003_curve_params {
  double fmax_tendon_strain;          // FmaxTendonStrain e0^T (0.04): tendon strain at F_max
  double fmax_muscle_strain;          // FmaxMuscleStrain e0^M (0.6): fiber strain where f_PE = 1
  double kshape_active;               // KshapeActive gamma (0.45): f_AL = exp(-(l~-1)^2/gamma)
  double kshape_passive;              // KshapePassive k^PE (5)
  double af;                          // Af (0.25): force-velocity shape
  double flen;                        // Flen (1.4): maximum eccentric force multiplier
  double fv_linear_extrap_threshold;  // 0.95: f_V^-1 is linear above 0.95 a f_AL Flen
} mbs_thelen2003_curve_params;

// Millard 2012: ActiveForceLengthCurve, ForceVelocityCurve, FiberForceLengthCurve and
// TendonForceLengthCurve properties.
typedef struct mbs_millard2012_curve_params {
  double afl_min_norm_active_fiber_length;     // 0.4441 (= 0.47 - 0.0259)
  double afl_transition_norm_fiber_length;     // 0.73
  double afl_max_norm_active_fiber_length;     // 1.8123
  double afl_shallow_ascending_slope;          // 0.8616
  double afl_minimum_value;                    // 0.1
  double fv_concentric_slope_at_vmax;          // 0
  double fv_concentric_slope_near_vmax;        // 0.25
  double fv_isometric_slope;                   // 5
  double fv_eccentric_slope_at_vmax;           // 0
  double fv_eccentric_slope_near_vmax;         // 0.15
  double fv_max_eccentric_velocity_force_multiplier;  // 1.4
  double fv_concentric_curviness;              // 0.6
  double fv_eccentric_curviness;               // 0.9
  double fpe_strain_at_zero_force;             // 0
  double fpe_strain_at_one_norm_force;         // 0.7
  double fpe_stiffness_at_low_force;           // 0.2
  double fpe_stiffness_at_one_norm_force;      // 2/0.7
  double fpe_curviness;                        // 0.75
  double fse_strain_at_one_norm_force;         // 0.049
  double fse_stiffness_at_one_norm_force;      // 1.375/0.049
  double fse_norm_force_at_toe_end;            // 2/3
  double fse_curviness;                        // 0.5
} mbs_millard2012_curve_params;

// De Groote & Fregly 2016 (DeGrooteFregly2016Muscle properties; b_ij, d_i are constants).
typedef struct mbs_degroote2016_curve_params {
  double active_force_width_scale;                // 1 (>= 1 widens f_AL about l~ = 1)
  double passive_fiber_strain_at_one_norm_force;  // e0 = 0.6
  double tendon_strain_at_one_norm_force;         // eT = 0.049: k_T = ln(6)/eT = 36.57
  int ignore_passive_fiber_force;                 // 0
} mbs_degroote2016_curve_params;

// OpenSim 2's Thelen model (Thelen2003Muscle_Deprecated): Thelen's curves take
// mbs_thelen2003_curve_params (its defaults FmaxTendonStrain 0.033, FmaxMuscleStrain 0.6,
// KshapeActive 0.5, KshapePassive 4, Af 0.3, Flen 1.8; the linear continuation of the inverse
// force-velocity curve always begins at 0.95 Flen), and these:
typedef struct mbs_thelen2003_deprecated_params {
  double vmax;     // Vmax (10): maximum shortening velocity at full activation, l_opt/s
  double vmax0;    // Vmax0 (5): at zero activation; in between Vmax0 + a (Vmax - Vmax0)
  double damping;  // damping (0.05): normalized force per normalized fiber velocity
} mbs_thelen2003_deprecated_params;

// Schutte 1993 and Delp 1990 (Schutte1993Muscle_Deprecated, Delp1990Muscle_Deprecated): the
// curves are OpenSim Functions read from the model file, kept here as flat tables.
#define MBS_MUSCLE_CURVE_MAX_POINTS 64
typedef struct mbs_muscle_curve {
  mbs_function_type type;  // SIMM_SPLINE, NATURAL_CUBIC_SPLINE, PIECEWISE_LINEAR, CONSTANT,
                           // LINEAR, POLYNOMIAL or SINE
  int n;                   // points (splines, piecewise linear) or coefficients (polynomial)
  double param[2 * MBS_MUSCLE_CURVE_MAX_POINTS];  // mbs_function's parameters: x[0..n-1] then
                                                  // y[0..n-1] for splines and piecewise linear;
                                                  // [value], [slope, intercept], n coefficients
                                                  // or [amplitude, omega, phase, offset]
} mbs_muscle_curve;

// Fill a curve: splines and piecewise linear from n points (x, y); the other types from their
// mbs_function parameters in x (y unused; n: polynomial coefficients, else ignored).
// MBS_ERR_PARAMETER when the type is not allowed or n is out of [1 or 2, MAX_POINTS].
int mbs_muscle_curve_set(mbs_muscle_curve* c, mbs_function_type type, int n, const double* x,
                         const double* y, mbs_error* err);

typedef enum mbs_simm_curve {
  MBS_SIMM_TENDON_FORCE_LENGTH = 0,  // f_T(tendon strain e^T = l^T / L_ST - 1)
  MBS_SIMM_ACTIVE_FORCE_LENGTH,      // f_AL(l~)
  MBS_SIMM_PASSIVE_FORCE_LENGTH,     // f_PE(l~)
  MBS_SIMM_FORCE_VELOCITY,           // f_V(v~), v~ in l_opt per time_scale (Delp only)
  MBS_SIMM_CURVE_COUNT
} mbs_simm_curve;

// OpenSim's default tables (SimmSplines) of the two classes: tendon 17 points, active 21,
// passive 13, force-velocity 42 (the last three are the Delp tables above). Returns n.
int mbs_simm_default_curve_points(mbs_simm_curve which, const double** x, const double** y);

typedef struct mbs_simm_muscle_params {
  double time_scale;   // s (0.1): the unit of the models' normalized time; their normalized
                       // fiber velocity v~ is v^M time_scale / l_opt
  double activation1;  // 7.667: da/dt = (u - a)(activation1 u + activation2) / time_scale
  double activation2;  // 1.459854: while u >= a, else (u - a) activation2 / time_scale
  double damping;      // Schutte (0.1): fiber damping d, in F_max per unit of v~
  double mass;         // Delp (0.00287): normalized mass at the fiber-tendon junction; the
                       // dynamics divide by mass (l_opt / time_scale)^2 (as OpenSim)
  int passive_force_length_curve_is_default;  // Schutte (1): the curve was not given in the
                                              // model file, so OpenSim's Schutte uses
                                              // f_PE = e^{8(l~-1)} / e^4 instead of the table
  mbs_muscle_curve tendon_force_length_curve;   // x: tendon strain, y: F^T / F_max
  mbs_muscle_curve active_force_length_curve;   // x: l~, y: f_AL
  mbs_muscle_curve passive_force_length_curve;  // x: l~, y: f_PE
  mbs_muscle_curve force_velocity_curve;        // Delp: x: v~ (l_opt / time_scale), y: f_V
} mbs_simm_muscle_params;

// ---------------------------------------------------------------------------------------------
// Normalized curves: value and first derivative d[0], d[1] (Bezier curves also d[2])
// ---------------------------------------------------------------------------------------------

// Thelen 2003 curves. f_AL Gaussian; f_PE = (e^{k(l~-1)/e0} - 1)/(e^k - 1) for l~ > 1, else 0;
// tendon: 0 for strain x <= 0, toe F_toe (e^{3x/e_toe} - 1)/(e^3 - 1) up to e_toe
// = 99 e0 e^3/(166 e^3 - 67), then linear 0.33 + k_lin (x - e_toe), k_lin = 0.67/(e0 - e_toe).
void mbs_thelen2003_active_force_length(const mbs_thelen2003_curve_params* p, double l,
                                        double d[2]);
void mbs_thelen2003_passive_force_length(const mbs_thelen2003_curve_params* p, double l,
                                         double d[2]);
void mbs_thelen2003_tendon_force_length(const mbs_thelen2003_curve_params* p, double lt,
                                        double d[2]);
// OpenSim 2's forms (Thelen2003Muscle_Deprecated): the tendon at strain x = l~T - 1: toe
// F_toe (e^{3x/e_toe} - 1)/(e^3 - 1) up to e_toe = 0.609 e0, F_toe = 0.333333, then the line
// of slope 1.712/e0, plus 0.001 (1 + x) at every strain (the tendon is never quite slack);
// passive f_PE = e^{k(l~-1)/e0}/e^k (nonzero at any length), continued above l~ = 1 + e0 by
// its tangent there.
void mbs_thelen2003_deprecated_tendon_force_length(const mbs_thelen2003_curve_params* p,
                                                   double x, double d[2]);
void mbs_thelen2003_deprecated_passive_force_length(const mbs_thelen2003_curve_params* p,
                                                    double l, double d[2]);
// Its fiber velocity (in units of the activation-dependent Vmax) from the velocity-dependent
// force F (normalized, the tendon's force over cos(alpha) less the passive force) and the
// active force at zero velocity A = max(a, 1e-6) f_AL: shortening (F < A) v = (F - A)/(A +
// F/Af + d), lengthening v = (F - A)/(b + d) with b = (2 + 2/Af)(A Flen - F)/(Flen - 1),
// continued below F = 0 and above F = 0.95 A Flen by its secants over the next 1e-6 (OpenSim
// 2's straight continuations); *dv_dF its slope (may be NULL).
double mbs_thelen2003_deprecated_fiber_velocity(const mbs_thelen2003_curve_params* p,
                                                double damping, double A, double F,
                                                double* dv_dF);
// the toe strain e_toe and the linear stiffness k_lin of the tendon curve
void mbs_thelen2003_tendon_constants(const mbs_thelen2003_curve_params* p, double* e_toe,
                                     double* k_lin);
// Thelen's eqs. 6-7 (the inverse force-velocity curve, OpenSim's calcdlceN written for the
// multiplier fv = F^M_active / (a f_AL F_max)): the normalized fiber velocity at which a fiber
// of activation a makes fv; continued linearly below fv = 0 and above the threshold
// fv_linear_extrap_threshold * Flen so that it is invertible everywhere; *dv_dfv its slope
// (may be NULL). Depends on a only through (0.25 + 0.75 a).
double mbs_thelen2003_fv_inverse(const mbs_thelen2003_curve_params* p, double a, double fv,
                                 double* dv_dfv);
// Its exact inverse in closed form: the force-velocity multiplier at normalized velocity v.
double mbs_thelen2003_fv(const mbs_thelen2003_curve_params* p, double a, double v,
                         double* dfv_dv);

// De Groote 2016 curves. f_AL: sum of three b1 exp(-(x-b2)^2 / (2 (b3 + b4 x)^2)) with
// x = (l~-1)/width_scale + 1; f_PE = (e^{4(l~-1)/e0} - o)/(e^4 - o), o = e^{4(0.2-1)/e0};
// tendon f = 0.2 e^{k_T(l~T - 1)} - 0.2; f_V = d1 ln(s + sqrt(s^2+1)) + d4, s = d2 v + d3.
void mbs_degroote2016_active_force_length(const mbs_degroote2016_curve_params* p, double l,
                                          double d[2]);
void mbs_degroote2016_passive_force_length(const mbs_degroote2016_curve_params* p, double l,
                                           double d[2]);
void mbs_degroote2016_tendon_force_length(const mbs_degroote2016_curve_params* p, double lt,
                                          double d[2]);
// normalized tendon length at normalized tendon force f (> -0.2), the tendon curve's inverse
double mbs_degroote2016_tendon_length(const mbs_degroote2016_curve_params* p, double f);
void mbs_degroote2016_force_velocity(double v, double d[2]);
// v = (sinh((fv - d4)/d1) - d3)/d2, the closed-form inverse; *dv_dfv its slope (may be NULL)
double mbs_degroote2016_fv_inverse(double fv, double* dv_dfv);

// The SIMM (Delp 1990) default curves of OpenSim's RigidTendonMuscle: SimmSplines (cubic with
// OpenSim's end conditions, core/function.c) through fixed tables (active f_AL: 21 points,
// passive f_PE: 13 points, f_V: 42 points), continued by their end tangents.
typedef enum mbs_delp_curve {
  MBS_DELP_ACTIVE_FORCE_LENGTH = 0,
  MBS_DELP_PASSIVE_FORCE_LENGTH,
  MBS_DELP_FORCE_VELOCITY,
  MBS_DELP_CURVE_COUNT
} mbs_delp_curve;
#define MBS_DELP_CURVE_MAX_POINTS 42
typedef struct mbs_delp_curves {
  double coef[MBS_DELP_CURVE_COUNT][3 * MBS_DELP_CURVE_MAX_POINTS];  // SimmSpline b, c, d
} mbs_delp_curves;
// compute the spline coefficients of the three tables
int mbs_delp_curves_prepare(mbs_delp_curves* c, mbs_error* err);
// the knots of a table (n points, x increasing)
int mbs_delp_curve_points(mbs_delp_curve which, const double** x, const double** y);
void mbs_delp_curve_eval(const mbs_delp_curves* c, mbs_delp_curve which, double x, double d[2]);

// ---------------------------------------------------------------------------------------------
// Millard 2012: C2 quintic Bezier splines (OpenSim's SmoothSegmentedFunction)
// ---------------------------------------------------------------------------------------------

// A curve of nseg quintic Bezier segments, increasing in x, each with control points
// (x0, m, m, n, n, x1): it leaves its start along the start slope and enters its end along the
// end slope with zero curvature at both, so joined segments are C2. Outside [x_lo, x_hi] the
// curve continues as the straight lines through its end points with the end slopes.
#define MBS_BEZIER_MAX_SEGMENTS 5
typedef struct mbs_bezier_curve {
  int nseg;
  double px[MBS_BEZIER_MAX_SEGMENTS][6];
  double py[MBS_BEZIER_MAX_SEGMENTS][6];
  double x_lo, x_hi, y_lo, y_hi;  // domain ends and the values there
  double dydx_lo, dydx_hi;        // slopes of the extrapolating lines
} mbs_bezier_curve;

// Control points of one corner segment from (x0, y0) with slope dydx0 to (x1, y1) with slope
// dydx1: the two tangent lines meet at C; the inner points lie at the fraction c (the scaled
// curviness, 0.1 + 0.8 curviness) of the way from each end point to C. Fails when the points
// and slopes do not make a C-shaped corner (C farther from either end than the ends are apart).
int mbs_bezier_corner(double x0, double y0, double dydx0, double x1, double y1, double dydx1,
                      double c, double px[6], double py[6], mbs_error* err);
// value, dy/dx and d2y/dx2 at x: the segment's parameter u is found by Newton's method on
// x(u) = x with a bisection safeguard
void mbs_bezier_curve_eval(const mbs_bezier_curve* c, double x, double d[3]);
// the inverse curve x(y) of a curve increasing in y (used as f_V^-1): x, dx/dy, d2x/dy2
void mbs_bezier_curve_eval_inverse(const mbs_bezier_curve* c, double y, double d[3]);

// SmoothSegmentedFunctionFactory's muscle curves. Active force-length: five segments from
// (l_min, min_value) over the shallow ascending plateau to (1, 1) with zero slope and down
// to (l_max, min_value); curviness 1 as ActiveForceLengthCurve uses.
int mbs_millard_active_force_length_curve(mbs_bezier_curve* c, double l_min, double l_transition,
                                          double l_max, double shallow_slope, double min_value,
                                          double curviness, mbs_error* err);
// Force-velocity: four segments through (-1, 0), (-0.9, near), (0, 1), (0.9, near), (1, fmax_e)
// with the given slopes.
int mbs_millard_force_velocity_curve(mbs_bezier_curve* c, double slope_c_vmax,
                                     double slope_c_near, double slope_iso, double slope_e_vmax,
                                     double slope_e_near, double fmax_e, double curviness_c,
                                     double curviness_e, mbs_error* err);
// Passive fiber force-length: two segments from (1 + e_zero, 0) through a low-force foot of
// slope k_low to (1 + e_iso, 1) with slope k_iso.
int mbs_millard_fiber_force_length_curve(mbs_bezier_curve* c, double e_zero, double e_iso,
                                         double k_low, double k_iso, double curviness,
                                         mbs_error* err);
// Tendon force-length: a toe of two segments from (1, 0) to the toe end (x_toe, f_toe) where
// the linear part of slope k_iso through (1 + e_iso, 1) begins.
int mbs_millard_tendon_force_length_curve(mbs_bezier_curve* c, double e_iso, double k_iso,
                                          double f_toe, double curviness, mbs_error* err);

// ---------------------------------------------------------------------------------------------
// Musculotendon model
// ---------------------------------------------------------------------------------------------

typedef enum mbs_muscle_kind {
  MBS_MUSCLE_THELEN2003 = 0,  // states a, l^M; f_V^-1 from Thelen's eqs. 6-7
  MBS_MUSCLE_MILLARD2012,     // states a, l^M; Bezier curves; damped (fiber_damping > 0) or not
  MBS_MUSCLE_DEGROOTE2016,    // states a, normalized tendon force (explicit tendon dynamics)
  MBS_MUSCLE_RIGID_TENDON,    // RigidTendonMuscle: no state; a = excitation; Delp splines
  MBS_MUSCLE_SCHUTTE1993,     // Schutte1993Muscle_Deprecated: states a, l^M; tabulated curves;
                              // v^M from Schutte's damped force-velocity relation
  MBS_MUSCLE_DELP1990,        // Delp1990Muscle_Deprecated: states a, l^M, v^M; tabulated
                              // curves; a mass at the fiber-tendon junction
  MBS_MUSCLE_THELEN2003_DEPRECATED,  // Thelen2003Muscle_Deprecated (OpenSim 2's Thelen2003
                                     // Muscle): states a, l^M; Thelen's first curves, v^M
                                     // from the damped force-velocity relation
  MBS_MUSCLE_KIND_COUNT
} mbs_muscle_kind;

typedef struct mbs_muscle_params {
  mbs_muscle_kind kind;
  double max_isometric_force;          // F_max, N (1000)
  double optimal_fiber_length;         // l_opt, m (0.1)
  double tendon_slack_length;          // L_ST, m (0.2)
  double pennation_angle_at_optimal;   // alpha_opt, rad (0)
  double max_contraction_velocity;     // v_max, optimal fiber lengths per second (10)
  double activation_time_constant;     // s: Thelen 0.015, Millard 0.010, DeGroote 0.015;
                                       // Schutte, Delp: unused (set to time_scale /
                                       // (activation1 + activation2) = 0.01096);
                                       // Thelen2003Muscle_Deprecated 0.01
  double deactivation_time_constant;   // s: Thelen 0.050, Millard 0.040, DeGroote 0.060;
                                       // Schutte, Delp: unused (time_scale / activation2
                                       // = 0.0685); Thelen2003Muscle_Deprecated 0.04
  double minimum_activation;           // Thelen, Millard 0.01; DeGroote, Schutte, Delp,
                                       // Thelen2003Muscle_Deprecated 0
  double maximum_pennation_angle;      // rad, acos(0.1) = 84.26 deg (pi/2 for
                                       // Thelen2003Muscle_Deprecated)
  double fiber_damping;                // beta, in F_max per normalized velocity: Millard 0.1,
                                       // DeGroote 0 (Millard below 0.001 = undamped);
                                       // Thelen, RIGID_TENDON, Schutte (its own `damping`)
                                       // and Delp have none (must be 0)
  double activation_dynamics_smoothing;  // DeGroote's tanh steepness b (0.1)
  int ignore_tendon_compliance;        // rigid tendon: no fiber state
  mbs_thelen2003_curve_params thelen;
  mbs_millard2012_curve_params millard;
  mbs_degroote2016_curve_params degroote;
  mbs_simm_muscle_params simm;         // Schutte 1993, Delp 1990
  mbs_thelen2003_deprecated_params thelen_deprecated;  // Thelen2003Muscle_Deprecated
} mbs_muscle_params;

// OpenSim's defaults for a model kind (the curve sets of all kinds are filled).
void mbs_muscle_params_default(mbs_muscle_params* p, mbs_muscle_kind kind);

// A prepared model: the parameters as used (see mbs_muscle_prepare) and derived data.
typedef struct mbs_muscle_model {
  mbs_muscle_params p;
  double width;                        // h = l_opt sin(alpha_opt), m
  double max_sin_pennation;            // sin(maximum_pennation_angle)
  double min_fiber_length;             // m: the largest of h / sin(alpha_max), 1 % of l_opt,
                                       // and for Millard l_min of f_AL times l_opt, for
                                       // DeGroote 0.2 l_opt (its curves' lower bound)
  double min_fiber_length_along_tendon;  // m
  double velocity_scale;               // m/s per unit of the normalized velocity the
                                       // force-velocity curve takes: l_opt v_max, or
                                       // l_opt / time_scale for Schutte and Delp
  int damped;                          // Millard: fiber_damping >= 0.001
  double thelen_e_toe, thelen_k_lin;   // Thelen tendon constants
  double degroote_kT;                  // ln(6) / eT
  union {
    struct {
      mbs_bezier_curve afl, fv, fv_inv, fpe, fse;  // fv_inv: the curve f_V^-1 inverts
    } millard;
    mbs_delp_curves delp;
    struct {
      double coef[MBS_SIMM_CURVE_COUNT][3 * MBS_MUSCLE_CURVE_MAX_POINTS];  // spline b, c, d
    } simm;
  } c;
} mbs_muscle_model;

// Check the parameters (MBS_ERR_PARAMETER with a message naming `name`) and build the model.
// As OpenSim's Millard2012EquilibriumMuscle does, the damped Millard model uses
// afl_minimum_value 0 and force-velocity end slopes 0; the undamped one needs a minimum
// activation >= 0.01 and raises afl_minimum_value to >= 0.1 and the end slopes to >= half the
// near-vmax slopes; the curve used for f_V^-1 always has end slopes of half the near-vmax
// slopes (so with the default end slopes the undamped f_V^-1 is the exact inverse of its f_V).
// Thelen needs minimum_activation >= 0.01. Schutte and Delp need time_scale > 0, activation1
// >= 0, activation2 > 0, Schutte damping > 0, Delp mass > 0, an elastic tendon, and valid
// curves (their spline coefficients are computed here; the messages name the curve).
int mbs_muscle_prepare(mbs_muscle_model* m, const mbs_muscle_params* p, const char* name,
                       mbs_error* err);

// Number of state variables: activation (1, none for RIGID_TENDON) then the fiber states;
// *has_fiber is their number: 1 (fiber length, m, for Thelen, Millard and Schutte; normalized
// tendon force for DeGroote), 2 for Delp (fiber length, m, then fiber velocity, m/s), none
// with a rigid tendon.
int mbs_muscle_state_count(const mbs_muscle_model* m, int* has_activation, int* has_fiber);
// 0 if neither the tendon force nor the states' derivatives depend on the path's lengthening
// speed: Thelen's and Millard's compliant-tendon models, whose tendon force follows from the
// tendon's strain and whose fiber velocity from the balance of fiber and tendon forces; 1 for the
// others, which depend on it (or may: Schutte's, with fibers perpendicular to the tendon)
int mbs_muscle_uses_path_speed(const mbs_muscle_model* m);

// Pennation at constant width h = l_opt sin(alpha_opt): sin(alpha) = min(h / l^M,
// sin(alpha_max)), so alpha is clamped at the maximum pennation for fibers shorter than
// h / sin(alpha_max); dalpha_dl = -tan(alpha)/l^M where not clamped, else 0. Any output
// pointer may be NULL.
void mbs_muscle_pennation(const mbs_muscle_model* m, double fiber_length, double* alpha,
                          double* cos_alpha, double* dalpha_dl);

// da/dt at excitation u and activation a. Thelen, Millard: (u - a)/tau with a and u clamped
// to [a_min, 1], tau = t_act (0.5 + 1.5 a) if u > a, else t_deact / (0.5 + 1.5 a). DeGroote:
// f = tanh(b (u - a))/2, z = 0.5 + 1.5 a, da/dt = [(f + 1/2)/(t_act z) + (1/2 - f) z/t_deact]
// (u - a). RIGID_TENDON: 0 (its activation is the excitation). Schutte and Delp (SIMM's
// activation dynamics, unclamped as in OpenSim): (u - a)(activation1 u + activation2) /
// time_scale if u >= a, else (u - a) activation2 / time_scale. Thelen2003Muscle_Deprecated
// (unclamped): (u - a)/t_act if u >= a, else (u - a)/t_deact.
double mbs_muscle_activation_derivative(const mbs_muscle_model* m, double excitation,
                                        double activation);

// Everything about a musculotendon at one instant.
typedef struct mbs_muscle_output {
  double activation;                 // as used (clamped to [a_min, 1])
  double fiber_length, normalized_fiber_length;
  double fiber_velocity, normalized_fiber_velocity;  // m/s, l_opt v_max
  double pennation_angle, cos_pennation, pennation_angular_velocity;
  double fiber_length_along_tendon, fiber_velocity_along_tendon;
  double tendon_length, normalized_tendon_length, tendon_strain, tendon_velocity;
  double active_force_length_multiplier;   // f_AL
  double passive_force_multiplier;         // f_PE
  double force_velocity_multiplier;        // f_V
  double active_fiber_force;               // F_max a f_AL f_V, N
  double passive_fiber_force;              // F_max f_PE (elastic), N
  double damping_fiber_force;              // F_max beta v~, N
  double fiber_force;                      // their sum, N
  double fiber_force_along_tendon;         // fiber_force cos(alpha), N
  double tendon_force, normalized_tendon_force;  // N, / F_max
  double muscle_power;                     // -F^T V^MT, W (OpenSim getMusclePower)
  double fiber_state_derivative;           // dl^M/dt (Thelen, Millard, Schutte, Delp),
                                           // d(F^T/F_max)/dt (DeGroote), 0 with a rigid tendon
  double fiber_acceleration;               // Delp: dv^M/dt, m/s^2 (its second fiber state's
                                           // derivative); 0 for the other kinds
  int clamped;                             // fiber at its minimum length and shortening: its
                                           // velocity and fiber forces are zero (OpenSim);
                                           // never for Delp, whose velocity is a state
} mbs_muscle_output;

// Evaluate the musculotendon of path length lmt (m) and lengthening speed vmt (m/s) at
// activation a (the excitation for RIGID_TENDON) and fiber state s (ignored without one).
// Thelen: v from f_V^-1 of the equilibrium f_V = (f_T/cos(alpha) - f_PE)/(a f_AL) (O-4).
// Millard damped: v solves (a f_AL f_V(v) + f_PE + beta v) cos(alpha) = f_T by Newton's method
// in a bracket; undamped: as Thelen with its Bezier f_V^-1. DeGroote: the same equilibrium
// gives v (closed form when beta = 0, Newton otherwise), then d f_T/dt = f_T'(l~T) v^T / L_ST.
// Rigid tendon: l^M from the path, v^M = V^MT cos(alpha), fiber force kept >= 0.
// Schutte: with F = max(f_T/cos(alpha) - f_PE, 0) and A = a max(f_AL, 0), v~ solves
// A g(v~) + d v~ = F, g(v~) = k_v (1 + v~)/(k_v - v~) shortening (v~ < 0, from F < A) and
// (1.4 v~ + s)/(v~ + s) lengthening, k_v = 0.15, s = 0.13 k_v/(1 + k_v): a quadratic in v~
// (OpenSim's calcFiberVelocity); when cos(alpha) = 0 (alpha_max = pi/2 only) v^M = V^MT times
// the cosine at the fiber a slack tendon leaves, or 0 with no tendon force.
// Delp: v^M is a state; with F~ = a f_AL f_V(v~) + f_PE and m~ = mass (l_opt/time_scale)^2,
// d v~/dt~ = (f_T cos(alpha) - F~ cos^2(alpha))/m~ + v~^2 tan^2(alpha)/l~ (the junction mass
// moving along the tendon at constant width), t~ = t / time_scale. Schutte and Delp take f_T
// at the tendon strain (0 below zero strain) and clamp f_AL at 0 (Schutte) as OpenSim does.
// Fails with MBS_ERR_ARGUMENT for non-finite inputs and MBS_ERR_NAN where the model is
// singular (DeGroote: no fiber length along the tendon, or a f_AL = 0 without damping).
// Thelen2003Muscle_Deprecated: v^M = v (Vmax0 + a (Vmax - Vmax0)) l_opt (Vmax l_opt at a >= 1)
// with v from mbs_thelen2003_deprecated_fiber_velocity at F = f_T/cos(alpha) - f_PE and
// A = max(a, 1e-6) f_AL; the fiber's active force is F F_max (the damping in it, as OpenSim
// reports it) and its force-velocity multiplier F / A; no minimum fiber length (only alpha
// <= pi/2).
// Delp has two fiber states: use mbs_muscle_eval_states (mbs_muscle_eval fails with
// MBS_ERR_ARGUMENT for it).
int mbs_muscle_eval(const mbs_muscle_model* m, double lmt, double vmt, double activation,
                    double fiber_state, mbs_muscle_output* out, mbs_error* err);
// The same with the fiber states as an array of mbs_muscle_state_count's *has_fiber numbers
// (may be NULL without fiber states).
int mbs_muscle_eval_states(const mbs_muscle_model* m, double lmt, double vmt, double activation,
                           const double* fiber_states, mbs_muscle_output* out, mbs_error* err);

// A Schutte or Delp model's curve as prepared: the table's function (no clamping) at x.
void mbs_simm_muscle_curve_eval(const mbs_muscle_model* m, mbs_simm_curve which, double x,
                                double d[2]);

typedef struct mbs_muscle_equilibrium {
  double fiber_state;       // the initial fiber state (fiber length, or normalized tendon
                            // force); NaN with a rigid tendon
  double fiber_length;      // m
  double fiber_velocity;    // m/s, the fiber's velocity the solution assumes (Delp's initial
                            // second fiber state; 0 when vmt = 0)
  double tendon_force;      // N
  double residual;          // fiber force along the tendon - tendon force at the solution, N
  int iterations;
  int at_lower_bound;       // 1: even at its minimum length the fiber pulls harder than the
                            // tendon (no root above it; OpenSim's "fiber at lower bound"
                            // warning): the fiber is placed at its minimum length
  int at_upper_bound;       // DeGroote: the tendon force is at its bound 5 F_max
  int tendon_slack;         // the (fast-shortening) fiber would push against any taut tendon:
                            // the state is the fiber length at which the tendon is just
                            // slack (Thelen, Millard, Schutte, Delp) or zero tendon force
                            // (DeGroote); the residual is the imbalance
} mbs_muscle_equilibrium;

// Equilibrium initialization: the fiber length (normalized tendon force for DeGroote) at which
// fiber force along the tendon equals tendon force, at activation a, path length lmt and
// lengthening speed vmt. Static when vmt = 0 (fiber velocity 0); otherwise Thelen, Millard,
// Schutte and Delp share vmt between fiber and tendon by their stiffnesses (OpenSim's heuristic;
// a fiber of negative stiffness takes all of it) and DeGroote gives it all to the fiber (zero
// tendon force rate). Schutte and Delp at vmt = 0 solve OpenSim's computeIsometricForce
// equation (a f_AL + f_PE) cos(alpha) = f_T(strain) (with f_AL, f_PE as their dynamics use
// them); Thelen2003Muscle_Deprecated solves it at any vmt (OpenSim's computeIsometricForce),
// its fiber velocity 0. Newton's method kept inside a bracket (bisection when a step leaves it or stalls)
// until |residual| <= tol (N; tol <= 0: 1e-8 F_max). The lower-bound and slack cases return
// MBS_OK with their flag set (Schutte and Delp: also where a passive table dips below zero at
// a slack tendon). MBS_ERR_ARGUMENT for non-finite inputs; MBS_ERR_ASSEMBLY when there is no
// equilibrium or the iteration fails, with activation, length and speed in the message. With
// a rigid tendon: the fiber the path fixes (no iteration).
int mbs_muscle_equilibrium_solve(const mbs_muscle_model* m, double activation, double lmt,
                                 double vmt, double tol, mbs_muscle_equilibrium* eq,
                                 mbs_error* err);

const char* mbs_muscle_kind_name(mbs_muscle_kind kind);

#ifdef __cplusplus
}
#endif

#endif  // MBS_MUSCLE_H_
