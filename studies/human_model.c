// mbstudy's own standing human without arms (human_model.h).
#include "human_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/osim_platform.h"

void mbs_human_params_default(mbs_human_params* p) {
  p->height = 1.75;
  p->mass = 75;
  mbs_platform_params_default(&p->platform);
  p->lock_joints = 0;
}

//---------------------------------- segments --------------------------------------------------

// a segment's mass properties in its body frame: mass, centre of mass, inertia about it
typedef struct seg {
  double m, c[3], I[6];  // I: xx yy zz xy xz yz
} seg;

// a de Leva segment along y (long axis), centre of mass at c, radii of gyration as fractions of
// the length L about the sagittal (x), longitudinal (y) and transverse (z) axes
static seg vertical_segment(double m, const double c[3], double L, double r_sag, double r_long,
                            double r_trans) {
  seg s = {m, {c[0], c[1], c[2]}, {0}};
  s.I[0] = m * (r_sag * L) * (r_sag * L);
  s.I[1] = m * (r_long * L) * (r_long * L);
  s.I[2] = m * (r_trans * L) * (r_trans * L);
  return s;
}

// the sum of segments, inertia about the combined centre of mass (parallel axes)
static seg combine(const seg* a, int n) {
  seg s = {0, {0, 0, 0}, {0}};
  for (int i = 0; i < n; i++) {
    s.m += a[i].m;
    for (int k = 0; k < 3; k++) s.c[k] += a[i].m * a[i].c[k];
  }
  for (int k = 0; k < 3; k++) s.c[k] /= s.m;
  for (int i = 0; i < n; i++) {
    const double d[3] = {a[i].c[0] - s.c[0], a[i].c[1] - s.c[1], a[i].c[2] - s.c[2]};
    const double m = a[i].m;
    s.I[0] += a[i].I[0] + m * (d[1] * d[1] + d[2] * d[2]);
    s.I[1] += a[i].I[1] + m * (d[0] * d[0] + d[2] * d[2]);
    s.I[2] += a[i].I[2] + m * (d[0] * d[0] + d[1] * d[1]);
    s.I[3] += a[i].I[3] - m * d[0] * d[1];
    s.I[4] += a[i].I[4] - m * d[0] * d[2];
    s.I[5] += a[i].I[5] - m * d[1] * d[2];
  }
  return s;
}

static void put_body(mbs_text* b, const char* name, const seg* s) {
  mbs_osim_put_body(b, name, s->m, s->c, s->I);
}

static void put_coord(mbs_text* b, const char* name, double lo, double hi) {
  mbs_text_put(b,
      "        <Coordinate name=\"%s\"><default_value>0</default_value>"
      "<range>%.17g %.17g</range></Coordinate>\n",
      name, lo, hi);
}

// a coordinate that may be locked (at its default value; a State sets the lock's value)
static void put_coord_l(mbs_text* b, const char* name, double lo, double hi, int locked) {
  mbs_text_put(b,
      "        <Coordinate name=\"%s\"><default_value>0</default_value>"
      "<range>%.17g %.17g</range><locked>%s</locked></Coordinate>\n",
      name, lo, hi, locked ? "true" : "false");
}

static void put_frame(mbs_text* b, const char* name, const char* parent, double x, double y,
                      double z) {
  mbs_text_put(b,
      "        <PhysicalOffsetFrame name=\"%s\"><socket_parent>%s</socket_parent>"
      "<translation>%.17g %.17g %.17g</translation><orientation>0 0 0</orientation>"
      "</PhysicalOffsetFrame>\n",
      name, parent, x, y, z);
}

// knee: the tibia's translation in the femur's knee frame follows flexion (the planar knee of
// Yamaguchi and Zajac, as in the gait models), scaled to the thigh length L
static const double knee_angle[7] = {-2.0944, -1.22173, -0.523599, -0.349066, -0.174533,
                                     0.159149, 2.0944};
static const double knee_ty[7] = {-0.4226, -0.4082, -0.399, -0.3976, -0.3966, -0.395264, -0.396};
static const double knee_ax[12] = {-2.0944, -1.74533, -1.39626, -1.0472, -0.698132, -0.349066,
                                   -0.174533, 0.197344, 0.337395, 0.490178, 1.52146, 2.0944};
static const double knee_tx[12] = {-0.0032, 0.00179, 0.00411, 0.0041, 0.00212, -0.001,
                                   -0.0031, -0.005227, -0.005435, -0.005574, -0.005435, -0.00525};

static void put_spline(mbs_text* b, const char* tag, const double* x, const double* y, int n,
                       double scale) {
  mbs_text_put(b, "<%s name=\"function\"><x>", tag);
  for (int i = 0; i < n; i++) mbs_text_put(b, "%s%.17g", i ? " " : "", x[i]);
  mbs_text_put(b, "</x><y>");
  for (int i = 0; i < n; i++) mbs_text_put(b, "%s%.17g", i ? " " : "", y[i] * scale);
  mbs_text_put(b, "</y></%s>", tag);
}


static void put_knee(mbs_text* b, const char* side, double L, int lock) {
  mbs_text_put(b, "    <CustomJoint name=\"knee_%s\">\n", side);
  mbs_text_put(b, "      <socket_parent_frame>femur_%s_knee</socket_parent_frame>\n", side);
  mbs_text_put(b, "      <socket_child_frame>/bodyset/tibia_%s</socket_child_frame>\n", side);
  mbs_text_put(b, "      <coordinates>\n");
  char nm[64];
  snprintf(nm, sizeof nm, "knee_angle_%s", side);
  put_coord_l(b, nm, -2.0944, 0.17453, lock);
  mbs_text_put(b, "      </coordinates>\n      <frames>\n");
  char fr[64], par[64];
  snprintf(fr, sizeof fr, "femur_%s_knee", side);
  snprintf(par, sizeof par, "/bodyset/femur_%s", side);
  put_frame(b, fr, par, 0, 0, 0);
  mbs_text_put(b, "      </frames>\n      <SpatialTransform>\n");
  mbs_osim_put_axis(b, "rotation1", nm, "0 0 1",
           "<LinearFunction name=\"function\"><coefficients>1 0</coefficients></LinearFunction>");
  mbs_osim_put_axis(b, "rotation2", "", "0 1 0",
                    "<Constant name=\"function\"><value>0</value></Constant>");
  mbs_osim_put_axis(b, "rotation3", "", "1 0 0",
                    "<Constant name=\"function\"><value>0</value></Constant>");
  const double scale = L / 0.396;  // the published curves belong to a 0.396 m thigh
  mbs_text f = {0};
  put_spline(&f, "SimmSpline", knee_ax, knee_tx, 12, scale);
  mbs_osim_put_axis(b, "translation1", nm, "1 0 0", f.s ? f.s : "");
  f.n = 0;
  put_spline(&f, "SimmSpline", knee_angle, knee_ty, 7, scale);
  mbs_osim_put_axis(b, "translation2", nm, "0 1 0", f.s ? f.s : "");
  free(f.s);
  mbs_osim_put_axis(b, "translation3", "", "0 0 1",
                    "<Constant name=\"function\"><value>0</value></Constant>");
  mbs_text_put(b, "      </SpatialTransform>\n    </CustomJoint>\n");
}

//---------------------------------- the model -------------------------------------------------

char* mbs_human_model_osim(const mbs_human_params* p) {
  const double H = p->height, M = p->mass;
  if (!(H > 0.5 && H < 3) || !(M > 5 && M < 500) || !(p->platform.contact_stiffness > 0) ||
      !(p->platform.platform_mass > 0))
    return NULL;
  const mbs_platform_params* pp = &p->platform;
  const double r_s = p->platform.sphere_radius > 0 ? p->platform.sphere_radius : 0.02 * H / 1.75;
  // heights above the sole (standing, all angles zero) and lengths (Drillis and Contini)
  const double y_ankle = 0.039 * H, y_knee = 0.285 * H, y_hip = 0.530 * H;
  const double L_shank = y_knee - y_ankle, L_thigh = y_hip - y_knee;
  const double L_foot = 0.152 * H, foot_w = 0.055 * H, hip_half = 0.191 * H / 4;
  const double shoulder_half = 0.259 * H / 2;
  // trunk landmarks from de Leva's segment lengths (reference stature 1741 mm)
  const double L_lpt = 145.7 / 1741 * H, L_mpt = 215.5 / 1741 * H, L_upt = 170.7 / 1741 * H;
  const double y_lumbar = y_hip + L_lpt, y_xyph = y_lumbar + L_mpt, y_supr = y_xyph + L_upt;
  const double L_head = H - y_supr;
  // masses (de Leva, males, % of body mass); the arms ride with the torso
  const double m_head = 0.0694 * M, m_upt = 0.1596 * M, m_mpt = 0.1633 * M, m_lpt = 0.1117 * M;
  const double m_uarm = 0.0271 * M, m_farm = 0.0162 * M, m_hand = 0.0061 * M;
  const double m_thigh = 0.1416 * M, m_shank = 0.0433 * M, m_foot = 0.0137 * M;
  // pelvis (lower trunk): frame at the mid-hip point; CM 61.15 % from OMPH (top)
  const double c_lpt[3] = {0, L_lpt * (1 - 0.6115), 0};
  const seg pelvis = vertical_segment(m_lpt, c_lpt, L_lpt, 0.615, 0.587, 0.551);
  // torso: frame at the lumbar joint; middle and upper trunk, head, both arms hanging
  seg parts[9];
  const double c_mpt[3] = {0, L_mpt * (1 - 0.4502), 0};
  parts[0] = vertical_segment(m_mpt, c_mpt, L_mpt, 0.482, 0.468, 0.383);
  const double c_upt[3] = {0, L_mpt + L_upt * (1 - 0.2999), 0};
  parts[1] = vertical_segment(m_upt, c_upt, L_upt, 0.716, 0.659, 0.454);
  const double c_head[3] = {0, H - y_lumbar - 0.5976 * L_head, 0};
  parts[2] = vertical_segment(m_head, c_head, L_head, 0.362, 0.312, 0.376);
  const double L_uarm = 281.7 / 1741 * H, L_farm = 268.9 / 1741 * H, L_hand = 86.2 / 1741 * H;
  const double y_sh = 0.818 * H - y_lumbar;
  for (int side = 0; side < 2; side++) {
    const double z = side ? -shoulder_half : shoulder_half;
    const double c_u[3] = {0, y_sh - 0.5772 * L_uarm, z};
    const double c_f[3] = {0, y_sh - L_uarm - 0.4574 * L_farm, z};
    const double c_h[3] = {0, y_sh - L_uarm - L_farm - 0.79 * L_hand, z};
    parts[3 + 3 * side] = vertical_segment(m_uarm, c_u, L_uarm, 0.285, 0.158, 0.269);
    parts[4 + 3 * side] = vertical_segment(m_farm, c_f, L_farm, 0.276, 0.121, 0.265);
    parts[5 + 3 * side] = vertical_segment(m_hand, c_h, L_hand, 0.628, 0.401, 0.513);
  }
  const seg torso = combine(parts, 9);
  // thigh: frame at the hip joint centre, CM 40.95 % from the hip
  const double c_thigh[3] = {0, -0.4095 * L_thigh, 0};
  const seg thigh = vertical_segment(m_thigh, c_thigh, L_thigh, 0.329, 0.149, 0.329);
  // shank: frame at the knee, CM 43.95 % from the knee (KJC-AJC row)
  const double c_shank[3] = {0, -0.4395 * L_shank, 0};
  const seg shank = vertical_segment(m_shank, c_shank, L_shank, 0.251, 0.102, 0.246);
  // foot: frame at the ankle; heel 0.25 L behind it, toe tip 0.75 L ahead, sole y_ankle below;
  // CM 44.15 % from the heel; long axis x
  const double heel_x = -0.25 * L_foot;
  seg foot = {m_foot, {heel_x + 0.4415 * L_foot, -0.5 * y_ankle, 0}, {0}};
  foot.I[0] = m_foot * pow(0.124 * L_foot, 2);  // longitudinal
  foot.I[1] = m_foot * pow(0.257 * L_foot, 2);
  foot.I[2] = m_foot * pow(0.245 * L_foot, 2);

  mbs_text b = {0};
  mbs_text_put(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
                   "<OpenSimDocument Version=\"40000\">\n");
  mbs_text_put(&b, "<Model name=\"mbstudy_human\">\n  <gravity>0 -9.80665 0</gravity>\n");
  mbs_text_put(&b, "  <credits>mbstudy: de Leva (1996) Table 4 males; Drillis and Contini (1966); "
          "height %.4g m, mass %.4g kg</credits>\n", H, M);
  mbs_text_put(&b, "  <BodySet><objects>\n");
  char* pb = mbs_platform_body_xml(pp);
  mbs_text_put(&b, "%s", pb ? pb : "");
  if (!pb) b.bad = 1;
  free(pb);
  put_body(&b, "pelvis", &pelvis);
  put_body(&b, "torso", &torso);
  const char* sides[2] = {"r", "l"};
  for (int i = 0; i < 2; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "femur_%s", sides[i]);
    put_body(&b, nm, &thigh);
    snprintf(nm, sizeof nm, "tibia_%s", sides[i]);
    put_body(&b, nm, &shank);
    snprintf(nm, sizeof nm, "calcn_%s", sides[i]);
    put_body(&b, nm, &foot);
  }
  mbs_text_put(&b, "  </objects></BodySet>\n");
  mbs_text_put(&b, "  <JointSet><objects>\n");
  char* pj = mbs_platform_joint_xml(pp);
  mbs_text_put(&b, "%s", pj ? pj : "");
  if (!pj) b.bad = 1;
  free(pj);
  // pelvis: free in Ground, rotations (tilt about z, list about x, rotation about y, as the
  // gait model orders them) then translations; standing with the mid-hip point at y_hip
  mbs_text_put(&b, "    <CustomJoint name=\"ground_pelvis\">\n");
  mbs_text_put(&b, "      <socket_parent_frame>/ground</socket_parent_frame>\n");
  mbs_text_put(&b, "      <socket_child_frame>/bodyset/pelvis</socket_child_frame>\n");
  mbs_text_put(&b, "      <coordinates>\n");
  put_coord(&b, "pelvis_tilt", -1.5708, 1.5708);
  put_coord(&b, "pelvis_list", -1.5708, 1.5708);
  put_coord(&b, "pelvis_rotation", -1.5708, 1.5708);
  put_coord(&b, "pelvis_tx", -5, 5);
  mbs_text_put(&b, "        <Coordinate name=\"pelvis_ty\"><default_value>%.17g</default_value>"
          "<range>-1 3</range></Coordinate>\n", y_hip);
  put_coord(&b, "pelvis_tz", -5, 5);
  mbs_text_put(&b, "      </coordinates>\n");
  // rotations: tilt about z, list about x, rotation about y (the gait model's order)
  static const char* const xyz_zxy[6] = {"0 0 1", "1 0 0", "0 1 0", "1 0 0", "0 1 0", "0 0 1"};
  static const char* const pelvis_q[6] = {"pelvis_tilt", "pelvis_list", "pelvis_rotation",
                                          "pelvis_tx",   "pelvis_ty",   "pelvis_tz"};
  mbs_osim_put_spatial_transform(&b, pelvis_q, xyz_zxy);
  mbs_text_put(&b, "    </CustomJoint>\n");
  // lumbar: three rotations (extension about z, bending about x, rotation about y), as the gait
  // model's back joint; coordinates with q' = u, so that each can be locked
  mbs_text_put(&b, "    <CustomJoint name=\"back\">\n");
  mbs_text_put(&b, "      <socket_parent_frame>pelvis_lumbar</socket_parent_frame>\n");
  mbs_text_put(&b, "      <socket_child_frame>/bodyset/torso</socket_child_frame>\n");
  mbs_text_put(&b, "      <coordinates>\n");
  put_coord_l(&b, "lumbar_extension", -1.5708, 1.5708, p->lock_joints);
  put_coord_l(&b, "lumbar_bending", -1.5708, 1.5708, p->lock_joints);
  put_coord_l(&b, "lumbar_rotation", -1.5708, 1.5708, p->lock_joints);
  mbs_text_put(&b, "      </coordinates>\n      <frames>\n");
  put_frame(&b, "pelvis_lumbar", "/bodyset/pelvis", 0, L_lpt, 0);
  mbs_text_put(&b, "      </frames>\n");
  static const char* const back_q[6] = {"lumbar_extension", "lumbar_bending", "lumbar_rotation",
                                        "", "", ""};
  mbs_osim_put_spatial_transform(&b, back_q, xyz_zxy);
  mbs_text_put(&b, "    </CustomJoint>\n");
  for (int i = 0; i < 2; i++) {
    const char* s = sides[i];
    const double z = i == 0 ? hip_half : -hip_half;
    char nm[64], fr[64], par[64];
    (void)nm;
    // hip: three rotations (flexion about z, adduction about x, rotation about y)
    mbs_text_put(&b, "    <CustomJoint name=\"hip_%s\">\n", s);
    mbs_text_put(&b, "      <socket_parent_frame>pelvis_hip_%s</socket_parent_frame>\n", s);
    mbs_text_put(&b, "      <socket_child_frame>/bodyset/femur_%s</socket_child_frame>\n", s);
    mbs_text_put(&b, "      <coordinates>\n");
    char fl[64], ad[64], ro[64];
    snprintf(fl, sizeof fl, "hip_flexion_%s", s);
    snprintf(ad, sizeof ad, "hip_adduction_%s", s);
    snprintf(ro, sizeof ro, "hip_rotation_%s", s);
    put_coord_l(&b, fl, -0.5236, 2.0944, p->lock_joints);
    put_coord_l(&b, ad, -0.8727, 0.5236, p->lock_joints);
    put_coord_l(&b, ro, -0.7854, 0.7854, p->lock_joints);
    mbs_text_put(&b, "      </coordinates>\n      <frames>\n");
    snprintf(fr, sizeof fr, "pelvis_hip_%s", s);
    put_frame(&b, fr, "/bodyset/pelvis", 0, 0, z);
    mbs_text_put(&b, "      </frames>\n");
    const char* const hip_q[6] = {fl, ad, ro, "", "", ""};
    mbs_osim_put_spatial_transform(&b, hip_q, xyz_zxy);
    mbs_text_put(&b, "    </CustomJoint>\n");
    put_knee(&b, s, L_thigh, p->lock_joints);
    mbs_text_put(&b, "    <PinJoint name=\"ankle_%s\">\n", s);
    mbs_text_put(&b, "      <socket_parent_frame>tibia_%s_ankle</socket_parent_frame>\n", s);
    mbs_text_put(&b, "      <socket_child_frame>/bodyset/calcn_%s</socket_child_frame>\n", s);
    mbs_text_put(&b, "      <coordinates>\n");
    snprintf(nm, sizeof nm, "ankle_angle_%s", s);
    put_coord_l(&b, nm, -0.6981, 0.5236, p->lock_joints);
    mbs_text_put(&b, "      </coordinates>\n      <frames>\n");
    snprintf(fr, sizeof fr, "tibia_%s_ankle", s);
    snprintf(par, sizeof par, "/bodyset/tibia_%s", s);
    put_frame(&b, fr, par, 0, -L_shank, 0);
    mbs_text_put(&b, "      </frames>\n    </PinJoint>\n");
  }
  mbs_text_put(&b, "  </objects></JointSet>\n");
  // contact: the platform's top and five spheres under each foot, touching the sole line
  // (x along the foot from the ankle; z lateral, + for the right foot)
  mbs_text_put(&b, "  <ContactGeometrySet><objects>\n");
  char* surf = mbs_platform_surface_xml();
  mbs_text_put(&b, "%s", surf ? surf : "");
  if (!surf) b.bad = 1;
  free(surf);
  const double sx[5] = {heel_x + r_s, 0.50 * L_foot, 0.45 * L_foot, 0.70 * L_foot,
                        0.10 * L_foot};
  const double sz[5] = {0, -0.35 * foot_w, 0.40 * foot_w, -0.30 * foot_w, 0.45 * foot_w};
  for (int i = 0; i < 2; i++) {
    char body[32];
    snprintf(body, sizeof body, "calcn_%s", sides[i]);
    const char* bodies[5] = {body, body, body, body, body};
    double loc[5][3];
    for (int k = 0; k < 5; k++) {
      loc[k][0] = sx[k];
      loc[k][1] = -y_ankle + r_s;
      loc[k][2] = i == 0 ? sz[k] : -sz[k];
    }
    char* sp = mbs_foot_spheres_xml(sides[i], bodies, loc, r_s);
    mbs_text_put(&b, "%s", sp ? sp : "");
    if (!sp) b.bad = 1;
    free(sp);
  }
  mbs_text_put(&b, "  </objects></ContactGeometrySet>\n");
  mbs_text_put(&b, "  <ForceSet><objects>\n");
  for (int i = 0; i < 2; i++) {
    char* fc = mbs_foot_contact_xml(pp, sides[i]);
    mbs_text_put(&b, "%s", fc ? fc : "");
    if (!fc) b.bad = 1;
    free(fc);
  }
  // holding torques: one coordinate actuator per joint coordinate of the back and legs
  const char* held[] = {"lumbar_bending", "lumbar_rotation", "lumbar_extension",
                        "hip_adduction_r", "hip_rotation_r", "hip_flexion_r", "knee_angle_r",
                        "ankle_angle_r", "hip_adduction_l", "hip_rotation_l", "hip_flexion_l",
                        "knee_angle_l", "ankle_angle_l"};
  for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
    mbs_text_put(&b, "    <CoordinateActuator name=\"%s_torque\"><coordinate>%s</coordinate>"
            "<optimal_force>1</optimal_force></CoordinateActuator>\n", held[i], held[i]);
  mbs_text_put(&b, "  </objects></ForceSet>\n</Model>\n</OpenSimDocument>\n");
  if (b.bad) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

mbs_osim_model* mbs_human_model_build(const mbs_human_params* p, mbs_error* err) {
  char* text = mbs_human_model_osim(p);
  if (!text) {
    MBS_FAIL(err, MBS_ERR_ARGUMENT, "human",
             "human: no model of height %g m and mass %g kg with these parameters", p->height,
             p->mass);
    return NULL;
  }
  mbs_osim_model* m = mbs_osim_parse(text, strlen(text), "human.osim", NULL, err);
  free(text);
  return m;
}
