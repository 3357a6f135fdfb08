// Mobilizers with q' = u: weld, pin, slider, universal, cylinder, planar, screw, translation;
// and the table of all mobilizer types.
//
// Each kernel gives R_FM and p_FM from q, the hinge matrix H_FM (columns [w; v] in F, one per
// speed) and HDot_FM u. Only the universal joint has a q-dependent H_FM among these.
#include <string.h>

#include "model_impl.h"

static void set_col(double* H, int j, double w0, double w1, double w2, double v0, double v1,
                    double v2) {
  double* h = H + 6 * j;
  h[0] = w0; h[1] = w1; h[2] = w2;
  h[3] = v0; h[4] = v1; h[5] = v2;
}

//---------------------------------- weld -------------------------------------------------------

static void weld_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                          double* H) {
  (void)c; (void)q; (void)H;
  mbs_m33_identity(R);
  mbs_v3_zero(p);
}

const mbs_mobilizer_ops mbs_mob_weld = {"weld", 0, 0, 0, -1, weld_position, NULL, NULL, NULL,
                                        NULL, NULL};

//---------------------------------- pin: rotation q about z ------------------------------------

static void pin_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                         double* H) {
  (void)c;
  mbs_rot_z(R, q[0]);
  mbs_v3_zero(p);
  set_col(H, 0, 0, 0, 1, 0, 0, 0);
}

const mbs_mobilizer_ops mbs_mob_pin = {"pin", 1, 1, 0, -1, pin_position, NULL, NULL, NULL, NULL,
                                       NULL};

//---------------------------------- slider: translation q along x -----------------------------

static void slider_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                            double* H) {
  (void)c;
  mbs_m33_identity(R);
  mbs_v3_set(p, q[0], 0, 0);
  set_col(H, 0, 0, 0, 0, 1, 0, 0);
}

const mbs_mobilizer_ops mbs_mob_slider = {"slider", 1, 1, 0, -1, slider_position, NULL, NULL,
                                          NULL, NULL, NULL};

//---------------------------------- universal: q0 about x, q1 about the new y ------------------

static void universal_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                               double* H) {
  (void)c;
  double Rx[9], Ry[9];
  mbs_rot_x(Rx, q[0]);
  mbs_rot_y(Ry, q[1]);
  mbs_m33_mul(R, Rx, Ry);
  mbs_v3_zero(p);
  set_col(H, 0, 1, 0, 0, 0, 0, 0);
  set_col(H, 1, 0, Rx[4], Rx[7], 0, 0, 0);  // new y = Rx(q0) y = (0, cos q0, sin q0)
}

static void universal_hdot_u(const mbs_mob_ctx* c, const double* q, const double* u,
                             double HDu[6]) {
  (void)c;
  // d/dt (0, c0, s0) = (0, -s0, c0) q0'
  double sn, cs;
  mbs_sincos(q[0], &sn, &cs);
  mbs_sv_zero(HDu);
  HDu[1] = -sn * u[0] * u[1];
  HDu[2] = cs * u[0] * u[1];
}

const mbs_mobilizer_ops mbs_mob_universal = {"universal", 2, 2, 0, -1, universal_position,
                                             universal_hdot_u, NULL, NULL, NULL, NULL};

//---------------------------------- cylinder: angle q0 about z, translation q1 along z ---------

static void cylinder_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                              double* H) {
  (void)c;
  mbs_rot_z(R, q[0]);
  mbs_v3_set(p, 0, 0, q[1]);
  set_col(H, 0, 0, 0, 1, 0, 0, 0);
  set_col(H, 1, 0, 0, 0, 0, 0, 1);
}

const mbs_mobilizer_ops mbs_mob_cylinder = {"cylinder", 2, 2, 0, -1, cylinder_position, NULL,
                                            NULL, NULL, NULL, NULL};

//---------------------------------- planar: angle about z, then x, y in F ----------------------

static void planar_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                            double* H) {
  (void)c;
  mbs_rot_z(R, q[0]);
  mbs_v3_set(p, q[1], q[2], 0);
  set_col(H, 0, 0, 0, 1, 0, 0, 0);
  set_col(H, 1, 0, 0, 0, 1, 0, 0);
  set_col(H, 2, 0, 0, 0, 0, 1, 0);
}

const mbs_mobilizer_ops mbs_mob_planar = {"planar", 3, 3, 0, -1, planar_position, NULL, NULL,
                                          NULL, NULL, NULL};

//---------------------------------- screw: angle q about z, translation pitch*q along z --------

static void screw_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                           double* H) {
  const double pitch = c->param[0];
  mbs_rot_z(R, q[0]);
  mbs_v3_set(p, 0, 0, pitch * q[0]);
  set_col(H, 0, 0, 0, 1, 0, 0, pitch);
}

const mbs_mobilizer_ops mbs_mob_screw = {"screw", 1, 1, 0, -1, screw_position, NULL, NULL, NULL,
                                         NULL, NULL};

//---------------------------------- translation: p_FM = q --------------------------------------

static void translation_position(const mbs_mob_ctx* c, const double* q, double R[9], double p[3],
                                 double* H) {
  (void)c;
  mbs_m33_identity(R);
  mbs_v3_copy(p, q);
  set_col(H, 0, 0, 0, 0, 1, 0, 0);
  set_col(H, 1, 0, 0, 0, 0, 1, 0);
  set_col(H, 2, 0, 0, 0, 0, 0, 1);
}

const mbs_mobilizer_ops mbs_mob_translation = {"translation", 3, 3, 0, -1, translation_position,
                                               NULL, NULL, NULL, NULL, NULL};

//---------------------------------- table ------------------------------------------------------

static const mbs_mobilizer_ops* const mob_table[MBS_MOB_COUNT] = {
    [MBS_MOB_WELD] = &mbs_mob_weld,
    [MBS_MOB_PIN] = &mbs_mob_pin,
    [MBS_MOB_SLIDER] = &mbs_mob_slider,
    [MBS_MOB_UNIVERSAL] = &mbs_mob_universal,
    [MBS_MOB_CYLINDER] = &mbs_mob_cylinder,
    [MBS_MOB_PLANAR] = &mbs_mob_planar,
    [MBS_MOB_SCREW] = &mbs_mob_screw,
    [MBS_MOB_TRANSLATION] = &mbs_mob_translation,
    [MBS_MOB_GIMBAL] = &mbs_mob_gimbal,
    [MBS_MOB_BALL] = &mbs_mob_ball,
    [MBS_MOB_BALL_XYZ] = &mbs_mob_ball_xyz,
    [MBS_MOB_FREE] = &mbs_mob_free,
    [MBS_MOB_FREE_XYZ] = &mbs_mob_free_xyz,
    [MBS_MOB_ELLIPSOID] = &mbs_mob_ellipsoid,
    [MBS_MOB_ELLIPSOID_XYZ] = &mbs_mob_ellipsoid_xyz,
    [MBS_MOB_FUNCTION] = &mbs_mob_function,
};

const mbs_mobilizer_ops* mbs_mobilizer_ops_of(mbs_mobilizer_type type) { return mob_table[type]; }

const char* mbs_mobilizer_type_name(mbs_mobilizer_type type) {
  return (int)type >= 0 && type < MBS_MOB_COUNT ? mob_table[type]->name : NULL;
}

int mbs_mobilizer_type_from_name(const char* name) {
  for (int t = 0; t < MBS_MOB_COUNT; t++)
    if (strcmp(mob_table[t]->name, name) == 0) return t;
  return -1;
}

int mbs_mobilizer_type_nq(mbs_mobilizer_type type) {
  return (int)type >= 0 && type < MBS_MOB_COUNT ? mob_table[type]->nq : -1;
}

int mbs_mobilizer_type_nu(mbs_mobilizer_type type) {
  return (int)type >= 0 && type < MBS_MOB_COUNT ? mob_table[type]->nu : -1;
}
