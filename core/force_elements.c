// Force elements as OpenSim models use them: bushing, coordinate limit force, spring
// generalized force, prescribed external force, and coordinate, point and torque actuators.
//
// Bushing (OpenSim BushingForce, which builds Simbody's Force::LinearBushing). Frames
// X_GF = X_GB1 X_B1F and X_GM = X_GB2 X_B2M; the deflection is X_FM = X_GF^-1 X_GM: its
// body-fixed X-Y-Z angles a (R_FM = Rx(a0) Ry(a1) Rz(a2)) and p = p_FM expressed in F. With
// w_FM in F = E(a) a' (E: mbs_body_xyz_rate_matrix) and p' the derivative of p taken in F,
// the generalized forces are f_a = -(k_rot a + c_rot a') and f_p = -(k_tr p + c_tr p'). They
// are mapped to the bodies by virtual work:
//   moment on body 2      m = R_GF E^-T f_a          (since f_a . da = (E^-T f_a) . dtheta_FM)
//   force on body 2       f = R_GF f_p, acting at M's origin
//   on body 1             -m and -f at the same point (M's origin)
// so the pair is exactly the negative gradient of PE = 1/2 sum k a^2 + 1/2 sum k p^2.
//
// Coordinate limit (OpenSim CoordinateLimitForce). With SimTK's quintic step
// S(x) = 10x^3 - 15x^4 + 6x^5 on [0, 1] (0 below, 1 above), transition h:
//   K_up(q) = K_upper S((q - q_upper)/h),  K_lo(q) = K_lower S((q_lower - q)/h),
//   f = -K_up(q) (q - q_upper) + K_lo(q) (q_lower - q) - c (K_up/K_upper + K_lo/K_lower) u,
// the damping scaled by the same steps (written S_up + S_lo here, which is the same and stays
// defined when a stiffness is zero). PE beyond a limit by d (x = d/h):
//   d < h: K d^2 x^3 (2 - 5x/2 + 6x^2/7)   (the integral of K S(s/h) s ds),
//   d >= h: K (d^2/2 - h^2/7),
// exactly OpenSim's computePotentialEnergy, so f = -dPE/dq when c = 0.
//
// Actuators (OpenSim CoordinateActuator, PointActuator, TorqueActuator): tension
// = optimal_force * control; direction and axis are used normalized (SimTK::UnitVec3).
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mbs/force.h"
#include "mbs/path_force.h"
#include "model_impl.h"

//---------------------------------- helpers ----------------------------------------------------

static int all_finite(const double* v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

// a failure while adding an element of `kind`, which would have been named "<kind><nforce>"
static int add_fail(mbs_system* sys, int code, const char* func, const char* kind,
                    const char* fmt, ...) __attribute__((format(printf, 5, 6)));
static int add_fail(mbs_system* sys, int code, const char* func, const char* kind,
                    const char* fmt, ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "force '%s%d'", kind, sys->nforce);
  return mbs_error_set(&sys->err, code, func, __LINE__, comp, "%s: %s", comp, msg);
}

// the component string "force '<kind><n>'" of the element about to be added
static void pending_name(const mbs_system* sys, const char* kind, char* buf, size_t n) {
  snprintf(buf, n, "force '%s%d'", kind, sys->nforce);
}

// A parameter check shared by add time (defaults, error on the System) and Instance stage
// (values in the State, error on the State): 0 if fine, else 1 with the reason in msg.
typedef int (*problem_fn)(const double* p, char* msg, size_t n);

static int check_with(mbs_state* st, const mbs_force_desc* f, const double* p, problem_fn fn) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  if (fn(p, msg, sizeof(msg))) return mbs_force_fail(st, f, "%s", msg);
  return MBS_OK;
}

// add-time checks: finite defaults, then the element's own problem function
static int check_defaults(mbs_system* sys, const char* func, const char* kind, const double* p,
                          int np, problem_fn fn) {
  if (!all_finite(p, np))
    return add_fail(sys, MBS_ERR_PARAMETER, func, kind, "a parameter is not finite");
  char msg[MBS_ERROR_MESSAGE_LEN];
  if (fn && fn(p, msg, sizeof(msg))) return add_fail(sys, MBS_ERR_PARAMETER, func, kind, "%s", msg);
  return MBS_OK;
}

static int negative3(const double* v, const char* what, char* msg, size_t n) {
  for (int i = 0; i < 3; i++)
    if (v[i] < 0) {
      snprintf(msg, n, "%s %g about/along %c must not be negative", what, v[i], "xyz"[i]);
      return 1;
    }
  return 0;
}

// 1 when coordinate `axis` of body b's mobilizer has q' = u (its coordinate is its speed)
static int coordinate_is_speed(const mbs_system* sys, int b, int axis) {
  const mbs_mobilizer_ops* ops = mbs_mobilizer_ops_of(sys->body_mob[b]);
  if (!ops->qdot) return 1;
  return sys->body_mob[b] == MBS_MOB_FREE_XYZ && axis >= 3;  // translations of p_FM
}

// a coordinate of body `body` for a one-coordinate element; 0 or a status
static int check_coordinate(mbs_system* sys, const char* func, const char* kind, int body,
                            int axis, int need_q_is_u) {
  char comp[MBS_ERROR_COMPONENT_LEN];
  pending_name(sys, kind, comp, sizeof(comp));
  int rc = mbs_system_check_body(sys, body, comp);
  if (rc) return rc;
  if (axis < 0 || axis >= sys->body_nu[body])
    return add_fail(sys, MBS_ERR_ARGUMENT, func, kind, "body '%s' has %d speeds, no axis %d",
                    sys->body_name[body], sys->body_nu[body], axis);
  if (need_q_is_u && !coordinate_is_speed(sys, body, axis))
    return add_fail(sys, MBS_ERR_ARGUMENT, func, kind,
                    "coordinate %d of body '%s' (mobilizer %s) is a quaternion or an X-Y-Z "
                    "angle whose rate is not its speed; it needs a coordinate with q' = u "
                    "(e.g. a pin, slider, gimbal or function-based mobilizer)",
                    axis, sys->body_name[body], mbs_mobilizer_type_name(sys->body_mob[body]));
  return MBS_OK;
}

static int check_function(mbs_system* sys, const char* func, const char* kind, int fn,
                          const char* what) {
  if (fn < -1 || fn >= sys->nfunc)
    return add_fail(sys, MBS_ERR_ARGUMENT, func, kind,
                    "%s refers to function %d, which does not exist (-1 or 0..%d)", what, fn,
                    sys->nfunc - 1);
  return MBS_OK;
}

static double eval_time_function(const mbs_system* sys, const mbs_state* st, int fn) {
  double d[3];
  mbs_system_eval_function(sys, st, fn, st->vars[0], d);
  return d[0];
}

//---------------------------------- bushing ----------------------------------------------------

enum {
  BU_F1_ANGLES = 0,   // frame 1 on body 1: X-Y-Z angles, translation
  BU_F1_P = 3,
  BU_F2_ANGLES = 6,   // frame 2 on body 2
  BU_F2_P = 9,
  BU_K_ROT = 12,
  BU_K_TR = 15,
  BU_C_ROT = 18,
  BU_C_TR = 21,
  BU_SIZE = 24
};

typedef struct bushing_geom {
  double R_GF[9];
  double p_GM[3];       // origin of M (frame 2) in G
  double p_B1F_G[3];    // from body 1's origin to F's origin, in G
  double p_B2M_G[3];    // from body 2's origin to M's origin, in G
  double p_FM_G[3];     // from F's origin to M's origin, in G
  double a[3];          // body-fixed X-Y-Z angles of R_FM
  double p[3];          // p_FM in F
} bushing_geom;

static void bushing_geometry(const mbs_state* st, const mbs_force_desc* f, const double* p,
                             bushing_geom* g) {
  const mbs_transform* X1 = &st->X_GB[f->body1];
  const mbs_transform* X2 = &st->X_GB[f->body2];
  double R_BF[9], R_GM[9], R_FM[9], p_GF[3];
  mbs_rot_body_xyz(R_BF, p + BU_F1_ANGLES);
  mbs_m33_mul(g->R_GF, X1->R, R_BF);
  mbs_rot_body_xyz(R_BF, p + BU_F2_ANGLES);
  mbs_m33_mul(R_GM, X2->R, R_BF);
  mbs_m33_vec(g->p_B1F_G, X1->R, p + BU_F1_P);
  mbs_m33_vec(g->p_B2M_G, X2->R, p + BU_F2_P);
  mbs_v3_add(p_GF, X1->p, g->p_B1F_G);
  mbs_v3_add(g->p_GM, X2->p, g->p_B2M_G);
  mbs_v3_sub(g->p_FM_G, g->p_GM, p_GF);
  mbs_m33_tmul(R_FM, g->R_GF, R_GM);
  mbs_rot_to_body_xyz(g->a, R_FM);
  mbs_m33_tvec(g->p, g->R_GF, g->p_FM_G);
}

static int bushing_problem(const double* p, char* msg, size_t n) {
  return negative3(p + BU_K_ROT, "rotational stiffness", msg, n) ||
         negative3(p + BU_K_TR, "translational stiffness", msg, n) ||
         negative3(p + BU_C_ROT, "rotational damping", msg, n) ||
         negative3(p + BU_C_TR, "translational damping", msg, n);
}
static int bushing_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                         const double* p) {
  (void)sys;
  return check_with(st, f, p, bushing_problem);
}

static void bushing_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                          const double* p, double* F_body, double* f_mob) {
  (void)sys;
  (void)f_mob;
  bushing_geom g;
  bushing_geometry(st, f, p, &g);
  const double* V1 = st->V_GB + 6 * f->body1;
  const double* V2 = st->V_GB + 6 * f->body2;
  // deflection rates: w_FM and the rate of p_FM, both taken in F
  double w[3], vF[3], vM[3], t[3], ad[3], pd[3];
  mbs_v3_sub(t, V2, V1);
  mbs_m33_tvec(w, g.R_GF, t);
  mbs_xyz_qdot(g.a, w, ad);
  mbs_v3_cross(vF, V1, g.p_B1F_G);
  mbs_v3_add(vF, vF, V1 + 3);
  mbs_v3_cross(vM, V2, g.p_B2M_G);
  mbs_v3_add(vM, vM, V2 + 3);
  mbs_v3_sub(t, vM, vF);
  double wx[3];
  mbs_v3_cross(wx, V1, g.p_FM_G);  // F turns with body 1
  mbs_v3_sub(t, t, wx);
  mbs_m33_tvec(pd, g.R_GF, t);
  double fa[3], fp[3];
  for (int i = 0; i < 3; i++) {
    fa[i] = -(p[BU_K_ROT + i] * g.a[i] + p[BU_C_ROT + i] * ad[i]);
    fp[i] = -(p[BU_K_TR + i] * g.p[i] + p[BU_C_TR + i] * pd[i]);
  }
  // moment in F: E^T m = f_a with E = [[1, 0, s1], [0, c0, -s0 c1], [0, s0, c0 c1]]
  double s0, c0, s1, c1;
  mbs_sincos(g.a[0], &s0, &c0);
  mbs_sincos(g.a[1], &s1, &c1);
  const double h = (fa[2] - s1 * fa[0]) / c1;
  const double mF[3] = {fa[0], c0 * fa[1] - s0 * h, s0 * fa[1] + c0 * h};
  double m[3], fG[3];
  mbs_m33_vec(m, g.R_GF, mF);
  mbs_m33_vec(fG, g.R_GF, fp);
  mbs_force_add_torque(F_body, f->body2, m);
  mbs_force_add_point_force(st, F_body, f->body2, g.p_GM, fG);
  mbs_v3_scale(m, m, -1.0);
  mbs_v3_scale(fG, fG, -1.0);
  mbs_force_add_torque(F_body, f->body1, m);
  mbs_force_add_point_force(st, F_body, f->body1, g.p_GM, fG);
}

static double bushing_potential(const mbs_system* sys, const mbs_state* st,
                                const mbs_force_desc* f, const double* p) {
  (void)sys;
  bushing_geom g;
  bushing_geometry(st, f, p, &g);
  double e = 0;
  for (int i = 0; i < 3; i++)
    e += p[BU_K_ROT + i] * g.a[i] * g.a[i] + p[BU_K_TR + i] * g.p[i] * g.p[i];
  return 0.5 * e;
}

int mbs_system_add_bushing(mbs_system* sys, const mbs_bushing_spec* s) {
  static const char kind[] = "bushing";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!s) return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind, "no spec given");
  char comp[MBS_ERROR_COMPONENT_LEN];
  pending_name(sys, kind, comp, sizeof(comp));
  if ((rc = mbs_system_check_body(sys, s->body1, comp)) ||
      (rc = mbs_system_check_body(sys, s->body2, comp)))
    return rc;
  if (s->body1 == s->body2)
    return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind,
                    "both frames are on body '%s'; a bushing connects two bodies",
                    sys->body_name[s->body1]);
  double p[BU_SIZE];
  memcpy(p + BU_F1_ANGLES, s->frame1.angles, 3 * sizeof(double));
  memcpy(p + BU_F1_P, s->frame1.p, 3 * sizeof(double));
  memcpy(p + BU_F2_ANGLES, s->frame2.angles, 3 * sizeof(double));
  memcpy(p + BU_F2_P, s->frame2.p, 3 * sizeof(double));
  memcpy(p + BU_K_ROT, s->rotational_stiffness, 3 * sizeof(double));
  memcpy(p + BU_K_TR, s->translational_stiffness, 3 * sizeof(double));
  memcpy(p + BU_C_ROT, s->rotational_damping, 3 * sizeof(double));
  memcpy(p + BU_C_TR, s->translational_damping, 3 * sizeof(double));
  if ((rc = check_defaults(sys, __func__, kind, p, BU_SIZE, bushing_problem))) return rc;
  const int id = mbs_system_new_force(sys, MBS_FORCE_BUSHING, kind, s->body1, s->body2, p, BU_SIZE);
  if (id < 0) return id;
  if ((rc = mbs_system_force_param(sys, id, "frame1/orientation", BU_F1_ANGLES, 3, "rad")) ||
      (rc = mbs_system_force_param(sys, id, "frame1/translation", BU_F1_P, 3, "m")) ||
      (rc = mbs_system_force_param(sys, id, "frame2/orientation", BU_F2_ANGLES, 3, "rad")) ||
      (rc = mbs_system_force_param(sys, id, "frame2/translation", BU_F2_P, 3, "m")) ||
      (rc = mbs_system_force_param(sys, id, "rotational_stiffness", BU_K_ROT, 3, "N m/rad")) ||
      (rc = mbs_system_force_param(sys, id, "translational_stiffness", BU_K_TR, 3, "N/m")) ||
      (rc = mbs_system_force_param(sys, id, "rotational_damping", BU_C_ROT, 3, "N m s/rad")) ||
      (rc = mbs_system_force_param(sys, id, "translational_damping", BU_C_TR, 3, "N s/m")))
    return rc;
  return id;
}

//---------------------------------- coordinate limit -------------------------------------------

enum { CL_K_UP = 0, CL_Q_UP, CL_K_LO, CL_Q_LO, CL_DAMPING, CL_TRANSITION, CL_SIZE };

// SimTK stepUp: 0 for x <= 0, 1 for x >= 1, 10x^3 - 15x^4 + 6x^5 between
static double step_up(double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  return x * x * x * (10 + x * (6 * x - 15));
}

static int coordinate_limit_problem(const double* p, char* msg, size_t n) {
  if (p[CL_K_UP] < 0) {
    snprintf(msg, n, "upper stiffness %g must not be negative", p[CL_K_UP]);
    return 1;
  }
  if (p[CL_K_LO] < 0) {
    snprintf(msg, n, "lower stiffness %g must not be negative", p[CL_K_LO]);
    return 1;
  }
  if (p[CL_DAMPING] < 0) {
    snprintf(msg, n, "damping %g must not be negative", p[CL_DAMPING]);
    return 1;
  }
  if (!(p[CL_TRANSITION] > 0)) {
    snprintf(msg, n, "transition %g must be positive", p[CL_TRANSITION]);
    return 1;
  }
  if (p[CL_Q_LO] > p[CL_Q_UP]) {
    snprintf(msg, n, "lower limit %g is above the upper limit %g", p[CL_Q_LO], p[CL_Q_UP]);
    return 1;
  }
  return 0;
}
static int coordinate_limit_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                  const double* p) {
  (void)sys;
  return check_with(st, f, p, coordinate_limit_problem);
}

static void coordinate_limit_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                   const double* p, double* F_body, double* f_mob) {
  (void)sys;
  (void)F_body;
  const double q = st->q[f->qindex], u = st->u[f->uindex];
  const double h = p[CL_TRANSITION];
  const double s_up = step_up((q - p[CL_Q_UP]) / h), s_lo = step_up((p[CL_Q_LO] - q) / h);
  f_mob[f->uindex] += -p[CL_K_UP] * s_up * (q - p[CL_Q_UP]) +
                      p[CL_K_LO] * s_lo * (p[CL_Q_LO] - q) - p[CL_DAMPING] * (s_up + s_lo) * u;
}

static double coordinate_limit_potential(const mbs_system* sys, const mbs_state* st,
                                         const mbs_force_desc* f, const double* p) {
  (void)sys;
  const double q = st->q[f->qindex], h = p[CL_TRANSITION];
  double K, d;
  if (q > p[CL_Q_UP]) {
    K = p[CL_K_UP];
    d = q - p[CL_Q_UP];
  } else if (q < p[CL_Q_LO]) {
    K = p[CL_K_LO];
    d = p[CL_Q_LO] - q;
  } else {
    return 0;
  }
  if (d >= h) return K * (0.5 * d * d - h * h / 7.0);
  const double x = d / h;
  return K * d * d * x * x * x * (2.0 - 2.5 * x + (6.0 / 7.0) * x * x);
}

int mbs_system_add_coordinate_limit(mbs_system* sys, const mbs_coordinate_limit_spec* s) {
  static const char kind[] = "coordinate_limit";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!s) return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind, "no spec given");
  if ((rc = check_coordinate(sys, __func__, kind, s->body, s->axis, 1))) return rc;
  const double p[CL_SIZE] = {s->upper_stiffness, s->upper_limit, s->lower_stiffness,
                             s->lower_limit,     s->damping,     s->transition};
  if ((rc = check_defaults(sys, __func__, kind, p, CL_SIZE, coordinate_limit_problem))) return rc;
  const int id =
      mbs_system_new_force(sys, MBS_FORCE_COORDINATE_LIMIT, kind, s->body, s->body, p, CL_SIZE);
  if (id < 0) return id;
  sys->force[id].qindex = sys->body_qadr[s->body] + s->axis;
  sys->force[id].uindex = sys->body_uadr[s->body] + s->axis;
  if ((rc = mbs_system_force_param(sys, id, "upper_stiffness", CL_K_UP, 1, "N m/rad or N/m")) ||
      (rc = mbs_system_force_param(sys, id, "upper_limit", CL_Q_UP, 1, "rad or m")) ||
      (rc = mbs_system_force_param(sys, id, "lower_stiffness", CL_K_LO, 1, "N m/rad or N/m")) ||
      (rc = mbs_system_force_param(sys, id, "lower_limit", CL_Q_LO, 1, "rad or m")) ||
      (rc = mbs_system_force_param(sys, id, "damping", CL_DAMPING, 1, "N m s/rad or N s/m")) ||
      (rc = mbs_system_force_param(sys, id, "transition", CL_TRANSITION, 1, "rad or m")))
    return rc;
  return id;
}

//---------------------------------- spring generalized force -----------------------------------

enum { SG_K = 0, SG_REST, SG_VISCOSITY, SG_SIZE };

static int spring_generalized_problem(const double* p, char* msg, size_t n) {
  if (p[SG_K] < 0) {
    snprintf(msg, n, "stiffness %g must not be negative", p[SG_K]);
    return 1;
  }
  if (p[SG_VISCOSITY] < 0) {
    snprintf(msg, n, "viscosity %g must not be negative", p[SG_VISCOSITY]);
    return 1;
  }
  return 0;
}
static int spring_generalized_check(const mbs_system* sys, mbs_state* st,
                                    const mbs_force_desc* f, const double* p) {
  (void)sys;
  return check_with(st, f, p, spring_generalized_problem);
}
static void spring_generalized_apply(const mbs_system* sys, mbs_state* st,
                                     const mbs_force_desc* f, const double* p, double* F_body,
                                     double* f_mob) {
  (void)sys;
  (void)F_body;
  f_mob[f->uindex] -=
      p[SG_K] * (st->q[f->qindex] - p[SG_REST]) + p[SG_VISCOSITY] * st->u[f->uindex];
}
static double spring_generalized_potential(const mbs_system* sys, const mbs_state* st,
                                           const mbs_force_desc* f, const double* p) {
  (void)sys;
  const double d = st->q[f->qindex] - p[SG_REST];
  return 0.5 * p[SG_K] * d * d;
}

int mbs_system_add_spring_generalized_force(mbs_system* sys, int body, int axis,
                                            double stiffness, double rest_length,
                                            double viscosity) {
  static const char kind[] = "spring_generalized_force";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if ((rc = check_coordinate(sys, __func__, kind, body, axis, 1))) return rc;
  const double p[SG_SIZE] = {stiffness, rest_length, viscosity};
  if ((rc = check_defaults(sys, __func__, kind, p, SG_SIZE, spring_generalized_problem))) return rc;
  const int id = mbs_system_new_force(sys, MBS_FORCE_SPRING_GENERALIZED, kind, body, body, p,
                                      SG_SIZE);
  if (id < 0) return id;
  sys->force[id].qindex = sys->body_qadr[body] + axis;
  sys->force[id].uindex = sys->body_uadr[body] + axis;
  if ((rc = mbs_system_force_param(sys, id, "stiffness", SG_K, 1, "N m/rad or N/m")) ||
      (rc = mbs_system_force_param(sys, id, "rest_length", SG_REST, 1, "rad or m")) ||
      (rc = mbs_system_force_param(sys, id, "viscosity", SG_VISCOSITY, 1, "N m s/rad or N s/m")))
    return rc;
  return id;
}

//---------------------------------- external force ---------------------------------------------

// iarg: functions of force (0..2), point (3..5), torque (6..8); point frame body (9);
// body1: the body it is applied to; body2: the body whose frame expresses force and torque
enum { EX_FORCE = 0, EX_POINT = 3, EX_TORQUE = 6, EX_POINT_BODY = 9 };

static void external_force_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                 const double* p, double* F_body, double* f_mob) {
  (void)p;
  (void)f_mob;
  const int b = f->body1;
  if (b == 0) return;
  const double* R = st->X_GB[f->body2].R;
  double v[3], x[3];
  if (f->iarg[EX_FORCE] >= 0) {
    for (int i = 0; i < 3; i++) v[i] = eval_time_function(sys, st, f->iarg[EX_FORCE + i]);
    double pG[3], fG[3];
    if (f->iarg[EX_POINT] >= 0) {
      for (int i = 0; i < 3; i++) x[i] = eval_time_function(sys, st, f->iarg[EX_POINT + i]);
      mbs_force_station(st, f->iarg[EX_POINT_BODY], x, pG, NULL);
    } else {
      mbs_v3_copy(pG, st->X_GB[b].p);
    }
    mbs_m33_vec(fG, R, v);
    mbs_force_add_point_force(st, F_body, b, pG, fG);
  }
  if (f->iarg[EX_TORQUE] >= 0) {
    for (int i = 0; i < 3; i++) v[i] = eval_time_function(sys, st, f->iarg[EX_TORQUE + i]);
    mbs_m33_vec(x, R, v);
    mbs_force_add_torque(F_body, b, x);
  }
}

int mbs_get_external_force(const mbs_system* sys, mbs_state* st, int force, int* body,
                           double force_G[3], double point_G[3], double torque_G[3]) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_POSITION, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce || sys->force[force].type != MBS_FORCE_EXTERNAL)
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, sys->name,
                    "%s: force %d is not an external force", __func__, force);
  const mbs_force_desc* f = &sys->force[force];
  const double* R = st->X_GB[f->body2].R;
  double v[3], x[3];
  if (body) *body = f->body1;
  if (force_G) {
    for (int i = 0; i < 3; i++)
      v[i] = f->iarg[EX_FORCE] >= 0 ? eval_time_function(sys, st, f->iarg[EX_FORCE + i]) : 0;
    mbs_m33_vec(force_G, R, v);
  }
  if (point_G) {
    if (f->iarg[EX_POINT] >= 0) {
      for (int i = 0; i < 3; i++) x[i] = eval_time_function(sys, st, f->iarg[EX_POINT + i]);
      mbs_force_station(st, f->iarg[EX_POINT_BODY], x, point_G, NULL);
    } else {
      mbs_v3_copy(point_G, st->X_GB[f->body1].p);
    }
  }
  if (torque_G) {
    for (int i = 0; i < 3; i++)
      v[i] = f->iarg[EX_TORQUE] >= 0 ? eval_time_function(sys, st, f->iarg[EX_TORQUE + i]) : 0;
    mbs_m33_vec(torque_G, R, v);
  }
  return MBS_OK;
}

int mbs_system_add_external_force(mbs_system* sys, const mbs_external_force_spec* s) {
  static const char kind[] = "external_force";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!s) return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind, "no spec given");
  char comp[MBS_ERROR_COMPONENT_LEN];
  pending_name(sys, kind, comp, sizeof(comp));
  if ((rc = mbs_system_check_body(sys, s->body, comp)) ||
      (rc = mbs_system_check_body(sys, s->force_frame_body, comp)) ||
      (rc = mbs_system_check_body(sys, s->point_frame_body, comp)))
    return rc;
  static const char* const names[3] = {"force", "point", "torque"};
  const int* fn[3] = {s->force_functions, s->point_functions, s->torque_functions};
  for (int k = 0; k < 3; k++) {
    int given = 0;
    for (int i = 0; i < 3; i++) {
      char what[48];
      snprintf(what, sizeof(what), "%s function %c", names[k], "xyz"[i]);
      if ((rc = check_function(sys, __func__, kind, fn[k][i], what))) return rc;
      given += fn[k][i] >= 0;
    }
    if (given != 0 && given != 3)
      return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind,
                      "the %s needs three functions (x, y, z) or none (all -1)", names[k]);
  }
  const int id = mbs_system_new_force(sys, MBS_FORCE_EXTERNAL, kind, s->body,
                                      s->force_frame_body, NULL, 0);
  if (id < 0) return id;
  mbs_force_desc* f = &sys->force[id];
  for (int i = 0; i < 3; i++) {
    f->iarg[EX_FORCE + i] = s->force_functions[i];
    f->iarg[EX_POINT + i] = s->point_functions[i];
    f->iarg[EX_TORQUE + i] = s->torque_functions[i];
  }
  f->iarg[EX_POINT_BODY] = s->point_frame_body;
  return id;
}

//---------------------------------- actuators --------------------------------------------------

// iarg[0]: control function or -1; iarg[1], iarg[2]: flags (see each actuator)
enum { AC_FUNCTION = 0, AC_FLAG1 = 1, AC_FLAG2 = 2 };

// tension = optimal_force * control, kept in the report cache
static double actuator_tension(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                               double optimal_force) {
  (void)sys;
  // the control in effect: its function of time or the State's control, plus controllers'
  const double c = f->control >= 0 ? st->control_eff[f->control]
                                   : 0.0;  // only if adding it ran out of memory
  const double tension = optimal_force * c;
  st->force_cache[f->cache_adr] = tension;
  return tension;
}

static int optimal_force_problem(double fo, char* msg, size_t n) {
  if (!(fo > 0)) {
    snprintf(msg, n, "optimal force %g must be positive", fo);
    return 1;
  }
  return 0;
}
static int unit_vector_problem(const double* v, const char* what, char* msg, size_t n) {
  if (!(mbs_v3_norm(v) > 1e-12)) {
    snprintf(msg, n, "%s (%g, %g, %g) is zero", what, v[0], v[1], v[2]);
    return 1;
  }
  return 0;
}

// coordinate actuator: params [optimal_force]
static int coordinate_actuator_problem(const double* p, char* msg, size_t n) {
  return optimal_force_problem(p[0], msg, n);
}
static int coordinate_actuator_check(const mbs_system* sys, mbs_state* st,
                                     const mbs_force_desc* f, const double* p) {
  (void)sys;
  return check_with(st, f, p, coordinate_actuator_problem);
}
static void coordinate_actuator_apply(const mbs_system* sys, mbs_state* st,
                                      const mbs_force_desc* f, const double* p, double* F_body,
                                      double* f_mob) {
  (void)F_body;
  f_mob[f->uindex] += actuator_tension(sys, st, f, p[0]);
}

// point actuator: params [point(3), direction(3), optimal_force]; flags point_is_global,
// force_is_global
enum { PA_POINT = 0, PA_DIRECTION = 3, PA_OPTIMAL = 6, PA_SIZE = 7 };
static int point_actuator_problem(const double* p, char* msg, size_t n) {
  return unit_vector_problem(p + PA_DIRECTION, "direction", msg, n) ||
         optimal_force_problem(p[PA_OPTIMAL], msg, n);
}
static int point_actuator_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                const double* p) {
  (void)sys;
  return check_with(st, f, p, point_actuator_problem);
}
static void point_actuator_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                 const double* p, double* F_body, double* f_mob) {
  (void)f_mob;
  const double tension = actuator_tension(sys, st, f, p[PA_OPTIMAL]);
  const int b = f->body1;
  double d[3], fG[3], pG[3];
  mbs_v3_scale(d, p + PA_DIRECTION, tension / mbs_v3_norm(p + PA_DIRECTION));
  if (f->iarg[AC_FLAG2])
    mbs_v3_copy(fG, d);
  else
    mbs_m33_vec(fG, st->X_GB[b].R, d);
  if (f->iarg[AC_FLAG1])
    mbs_v3_copy(pG, p + PA_POINT);  // the body's point that is there now
  else
    mbs_force_station(st, b, p + PA_POINT, pG, NULL);
  mbs_force_add_point_force(st, F_body, b, pG, fG);
}

// torque actuator: params [axis(3), optimal_force]; flag torque_is_global
enum { TA_AXIS = 0, TA_OPTIMAL = 3, TA_SIZE = 4 };
static int torque_actuator_problem(const double* p, char* msg, size_t n) {
  return unit_vector_problem(p + TA_AXIS, "axis", msg, n) ||
         optimal_force_problem(p[TA_OPTIMAL], msg, n);
}
static int torque_actuator_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                 const double* p) {
  (void)sys;
  return check_with(st, f, p, torque_actuator_problem);
}
static void torque_actuator_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                  const double* p, double* F_body, double* f_mob) {
  (void)f_mob;
  const double tension = actuator_tension(sys, st, f, p[TA_OPTIMAL]);
  double a[3], tau[3];
  mbs_v3_scale(a, p + TA_AXIS, tension / mbs_v3_norm(p + TA_AXIS));
  if (f->iarg[AC_FLAG1])
    mbs_v3_copy(tau, a);
  else
    mbs_m33_vec(tau, st->X_GB[f->body1].R, a);
  mbs_force_add_torque(F_body, f->body1, tau);
  mbs_v3_scale(tau, tau, -1.0);
  mbs_force_add_torque(F_body, f->body2, tau);
}

// the parts every actuator shares: a control, its function, the tension report
static int finish_actuator(mbs_system* sys, int id, double default_control, int control_function) {
  sys->force[id].iarg[AC_FUNCTION] = control_function;
  mbs_system_force_cache(sys, id, 1);
  const int c = mbs_system_force_control(sys, id, default_control, control_function);
  return c < 0 ? c : MBS_OK;
}

static int check_actuator_args(mbs_system* sys, const char* func, const char* kind,
                               double default_control, int control_function) {
  if (!isfinite(default_control))
    return add_fail(sys, MBS_ERR_PARAMETER, func, kind, "default control is not finite");
  return check_function(sys, func, kind, control_function, "control function");
}

int mbs_system_add_coordinate_actuator(mbs_system* sys, int body, int axis, double optimal_force,
                                       double default_control, int control_function) {
  static const char kind[] = "coordinate_actuator";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if ((rc = check_coordinate(sys, __func__, kind, body, axis, 0)) ||
      (rc = check_actuator_args(sys, __func__, kind, default_control, control_function)) ||
      (rc = check_defaults(sys, __func__, kind, &optimal_force, 1, coordinate_actuator_problem)))
    return rc;
  const int id = mbs_system_new_force(sys, MBS_FORCE_COORDINATE_ACTUATOR, kind, body, body,
                                      &optimal_force, 1);
  if (id < 0) return id;
  sys->force[id].qindex = sys->body_qadr[body] + axis;
  sys->force[id].uindex = sys->body_uadr[body] + axis;
  if ((rc = finish_actuator(sys, id, default_control, control_function)) ||
      (rc = mbs_system_force_param(sys, id, "optimal_force", 0, 1, "N or N m")))
    return rc;
  return id;
}

// activation coordinate actuator: params [optimal_force, time_constant]; z: activation a with
// a' = (e - a) / tau, e the control (excitation); generalized force optimal_force * a
enum { ACA_OPTIMAL = 0, ACA_TAU = 1, ACA_SIZE = 2 };
static int activation_actuator_problem(const double* p, char* msg, size_t n) {
  if (optimal_force_problem(p[ACA_OPTIMAL], msg, n)) return 1;
  if (!(p[ACA_TAU] > 0)) {
    snprintf(msg, n, "activation time constant %g must be positive", p[ACA_TAU]);
    return 1;
  }
  return 0;
}
static int activation_actuator_check(const mbs_system* sys, mbs_state* st,
                                     const mbs_force_desc* f, const double* p) {
  (void)sys;
  return check_with(st, f, p, activation_actuator_problem);
}
static void activation_actuator_apply(const mbs_system* sys, mbs_state* st,
                                      const mbs_force_desc* f, const double* p, double* F_body,
                                      double* f_mob) {
  (void)F_body;
  (void)sys;
  const double e = f->control >= 0 ? st->control_eff[f->control] : 0.0;
  const double a = st->z[f->z_adr];
  st->zdot[f->z_adr] = (e - a) / p[ACA_TAU];
  const double tension = p[ACA_OPTIMAL] * a;
  st->force_cache[f->cache_adr] = tension;
  f_mob[f->uindex] += tension;
}

int mbs_system_add_activation_coordinate_actuator(mbs_system* sys, int body, int axis,
                                                  double optimal_force, double time_constant,
                                                  double default_activation,
                                                  double default_control, int control_function) {
  static const char kind[] = "activation_coordinate_actuator";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  const double p[ACA_SIZE] = {optimal_force, time_constant};
  if ((rc = check_coordinate(sys, __func__, kind, body, axis, 0)) ||
      (rc = check_actuator_args(sys, __func__, kind, default_control, control_function)) ||
      (rc = check_defaults(sys, __func__, kind, p, ACA_SIZE, activation_actuator_problem)))
    return rc;
  if (!isfinite(default_activation))
    return add_fail(sys, MBS_ERR_PARAMETER, __func__, kind, "default activation is not finite");
  const int id = mbs_system_new_force(sys, MBS_FORCE_ACTIVATION_COORDINATE_ACTUATOR, kind, body,
                                      body, p, ACA_SIZE);
  if (id < 0) return id;
  sys->force[id].qindex = sys->body_qadr[body] + axis;
  sys->force[id].uindex = sys->body_uadr[body] + axis;
  if ((rc = finish_actuator(sys, id, default_control, control_function)) ||
      (rc = mbs_system_force_param(sys, id, "optimal_force", ACA_OPTIMAL, 1, "N or N m")) ||
      (rc = mbs_system_force_param(sys, id, "activation_time_constant", ACA_TAU, 1, "s")))
    return rc;
  static const char* const field[1] = {"activation"};
  const int z = mbs_system_force_z(sys, id, 1, &default_activation, field);
  return z < 0 ? z : id;
}

int mbs_system_add_point_actuator(mbs_system* sys, const mbs_point_actuator_spec* s) {
  static const char kind[] = "point_actuator";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!s) return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind, "no spec given");
  char comp[MBS_ERROR_COMPONENT_LEN];
  pending_name(sys, kind, comp, sizeof(comp));
  double p[PA_SIZE];
  memcpy(p + PA_POINT, s->point, 3 * sizeof(double));
  memcpy(p + PA_DIRECTION, s->direction, 3 * sizeof(double));
  p[PA_OPTIMAL] = s->optimal_force;
  if ((rc = mbs_system_check_body(sys, s->body, comp)) ||
      (rc = check_actuator_args(sys, __func__, kind, s->default_control, s->control_function)) ||
      (rc = check_defaults(sys, __func__, kind, p, PA_SIZE, point_actuator_problem)))
    return rc;
  // direction normalized (the State may later hold any non-zero direction)
  mbs_v3_scale(p + PA_DIRECTION, p + PA_DIRECTION, 1.0 / mbs_v3_norm(p + PA_DIRECTION));
  const int id = mbs_system_new_force(sys, MBS_FORCE_POINT_ACTUATOR, kind, s->body, s->body, p,
                                      PA_SIZE);
  if (id < 0) return id;
  sys->force[id].iarg[AC_FLAG1] = s->point_is_global != 0;
  sys->force[id].iarg[AC_FLAG2] = s->force_is_global != 0;
  if ((rc = finish_actuator(sys, id, s->default_control, s->control_function)) ||
      (rc = mbs_system_force_param(sys, id, "point", PA_POINT, 3, "m")) ||
      (rc = mbs_system_force_param(sys, id, "direction", PA_DIRECTION, 3, "")) ||
      (rc = mbs_system_force_param(sys, id, "optimal_force", PA_OPTIMAL, 1, "N")))
    return rc;
  return id;
}

int mbs_system_add_torque_actuator(mbs_system* sys, const mbs_torque_actuator_spec* s) {
  static const char kind[] = "torque_actuator";
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!s) return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind, "no spec given");
  char comp[MBS_ERROR_COMPONENT_LEN];
  pending_name(sys, kind, comp, sizeof(comp));
  double p[TA_SIZE];
  memcpy(p + TA_AXIS, s->axis, 3 * sizeof(double));
  p[TA_OPTIMAL] = s->optimal_force;
  if ((rc = mbs_system_check_body(sys, s->body_a, comp)) ||
      (rc = mbs_system_check_body(sys, s->body_b, comp)) ||
      (rc = check_actuator_args(sys, __func__, kind, s->default_control, s->control_function)) ||
      (rc = check_defaults(sys, __func__, kind, p, TA_SIZE, torque_actuator_problem)))
    return rc;
  if (s->body_a == s->body_b)
    return add_fail(sys, MBS_ERR_ARGUMENT, __func__, kind,
                    "body A and body B are both '%s'; the torque and its reaction would cancel",
                    sys->body_name[s->body_a]);
  mbs_v3_scale(p + TA_AXIS, p + TA_AXIS, 1.0 / mbs_v3_norm(p + TA_AXIS));
  const int id = mbs_system_new_force(sys, MBS_FORCE_TORQUE_ACTUATOR, kind, s->body_a, s->body_b,
                                      p, TA_SIZE);
  if (id < 0) return id;
  sys->force[id].iarg[AC_FLAG1] = s->torque_is_global != 0;
  if ((rc = finish_actuator(sys, id, s->default_control, s->control_function)) ||
      (rc = mbs_system_force_param(sys, id, "axis", TA_AXIS, 3, "")) ||
      (rc = mbs_system_force_param(sys, id, "optimal_force", TA_OPTIMAL, 1, "N m")))
    return rc;
  return id;
}

int mbs_get_actuator_tension(const mbs_system* sys, mbs_state* st, int force, double* tension) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce || !tension)
    return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, __func__, __LINE__, sys->name,
                         "%s: force %d does not exist (0..%d) or no output given", __func__,
                         force, sys->nforce - 1);
  const mbs_force_desc* f = &sys->force[force];
  const int actuator = f->type == MBS_FORCE_COORDINATE_ACTUATOR ||
                       f->type == MBS_FORCE_POINT_ACTUATOR || f->type == MBS_FORCE_TORQUE_ACTUATOR ||
                       f->type == MBS_FORCE_ACTIVATION_COORDINATE_ACTUATOR ||
                       f->type == MBS_FORCE_PATH_ACTUATOR;  // its report starts with it
  *tension = actuator ? st->force_cache[f->cache_adr] : 0.0;
  return MBS_OK;
}

// An actuator's speed and power as OpenSim reports them (Actuation analysis) [Dynamics]
int mbs_get_actuator_speed(const mbs_system* sys, mbs_state* st, int force, double* speed,
                           double* power) {
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce)
    return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, __func__, __LINE__, sys->name,
                         "%s: force %d does not exist (0..%d)", __func__, force, sys->nforce - 1);
  const mbs_force_desc* f = &sys->force[force];
  const double* p = st->param + f->param_adr;
  const double tension = st->force_cache[f->cache_adr];
  double v = 0, pw = 0;
  switch (f->type) {
    case MBS_FORCE_COORDINATE_ACTUATOR:
    case MBS_FORCE_ACTIVATION_COORDINATE_ACTUATOR:
      v = st->u[f->uindex];
      pw = tension * v;
      break;
    case MBS_FORCE_POINT_ACTUATOR: {  // the speed of its point (OpenSim: the norm)
      const int b = f->body1;
      double pB[3], pG[3], vG[3], r[3];
      if (f->iarg[AC_FLAG1]) {  // a global point: the body's point that is there now
        mbs_v3_sub(r, p + PA_POINT, st->X_GB[b].p);
        mbs_m33_tvec(pB, st->X_GB[b].R, r);
      } else {
        mbs_v3_copy(pB, p + PA_POINT);
      }
      mbs_force_station(st, b, pB, pG, vG);
      v = mbs_v3_norm(vG);
      pw = tension * v;
      break;
    }
    case MBS_FORCE_TORQUE_ACTUATOR: {  // A's angular velocity relative to B about the axis
      double a[3], w[3];
      mbs_v3_scale(a, p + TA_AXIS, 1.0 / mbs_v3_norm(p + TA_AXIS));
      if (!f->iarg[AC_FLAG1]) {
        double t[3];
        mbs_m33_vec(t, st->X_GB[f->body1].R, a);
        mbs_v3_copy(a, t);
      }
      mbs_v3_sub(w, st->V_GB + 6 * f->body1, st->V_GB + 6 * f->body2);
      v = mbs_v3_dot(a, w);
      pw = tension * v;
      break;
    }
    case MBS_FORCE_PATH_ACTUATOR: {
      mbs_path_force_report r;
      if ((rc = mbs_get_path_force_report(sys, st, force, &r))) return rc;
      v = r.lengthening_speed;
      pw = -r.tension * v;
      break;
    }
    case MBS_FORCE_MUSCLE: {
      mbs_muscle_report r;
      if ((rc = mbs_get_muscle_report(sys, st, force, &r))) return rc;
      v = r.path_speed;
      pw = r.muscle_power;
      break;
    }
    default:
      return mbs_error_set(&st->err, MBS_ERR_ARGUMENT, __func__, __LINE__, sys->name,
                           "%s: force '%s' (%s) is not an actuator", __func__, f->name,
                           mbs_force_kind(sys, force));
  }
  if (speed) *speed = v;
  if (power) *power = pw;
  return MBS_OK;
}

//---------------------------------- the table entries ------------------------------------------

const mbs_force_ops mbs_bushing_ops = {"bushing", bushing_check, bushing_apply, bushing_potential};
const mbs_force_ops mbs_activation_coordinate_actuator_ops = {
    "activation_coordinate_actuator", activation_actuator_check, activation_actuator_apply, NULL};
const mbs_force_ops mbs_coordinate_limit_ops = {"coordinate_limit", coordinate_limit_check,
                                                coordinate_limit_apply,
                                                coordinate_limit_potential};
const mbs_force_ops mbs_spring_generalized_ops = {"spring_generalized_force",
                                                  spring_generalized_check,
                                                  spring_generalized_apply,
                                                  spring_generalized_potential};
const mbs_force_ops mbs_external_force_ops = {"external_force", NULL, external_force_apply, NULL};
const mbs_force_ops mbs_coordinate_actuator_ops = {"coordinate_actuator",
                                                   coordinate_actuator_check,
                                                   coordinate_actuator_apply, NULL};
const mbs_force_ops mbs_point_actuator_ops = {"point_actuator", point_actuator_check,
                                              point_actuator_apply, NULL};
const mbs_force_ops mbs_torque_actuator_ops = {"torque_actuator", torque_actuator_check,
                                               torque_actuator_apply, NULL};
