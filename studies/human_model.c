// mbstudy's own standing human without arms (human_model.h).
#include "human_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mbs_human_params_default(mbs_human_params* p) {
  p->height = 1.75;
  p->mass = 75;
  p->sphere_radius = 0;  // 0: 0.02 m scaled by height
  p->contact_stiffness = 1e7;
  p->contact_dissipation = 1;
  p->static_friction = 0.9;
  p->dynamic_friction = 0.8;
  p->viscous_friction = 0;
  p->transition_velocity = 0.05;
  p->platform_mass = 100;
  p->platform_duration = 0.5;
  p->platform_profile = MBS_PLATFORM_SMOOTH_STEP;
  p->lock_joints = 0;
}

double mbs_human_platform_step(double t, double duration, mbs_platform_profile profile) {
  if (t <= 0) return 0;
  if (t >= duration) return 1;
  const double s = t / duration;
  if (profile == MBS_PLATFORM_COSINE) return 0.5 * (1 - cos(3.14159265358979323846 * s));
  return s * s * s * (10 + s * (-15 + 6 * s));
}

const char* mbs_platform_profile_name(mbs_platform_profile profile) {
  return profile == MBS_PLATFORM_COSINE ? "cosine" : "smooth_step";
}

int mbs_platform_profile_from_name(const char* name) {
  if (!strcmp(name, "smooth_step")) return MBS_PLATFORM_SMOOTH_STEP;
  if (!strcmp(name, "cosine")) return MBS_PLATFORM_COSINE;
  return -1;
}

//---------------------------------- text ------------------------------------------------------

typedef struct buf {
  char* s;
  size_t n, cap;
  int bad;
} buf;

static void put(buf* b, const char* f, ...) __attribute__((format(printf, 2, 3)));
static void put(buf* b, const char* f, ...) {
  if (b->bad) return;
  va_list ap;
  va_start(ap, f);
  const int n = vsnprintf(NULL, 0, f, ap);
  va_end(ap);
  if (n < 0) {
    b->bad = 1;
    return;
  }
  if (b->n + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 65536;
    while (cap < b->n + (size_t)n + 1) cap *= 2;
    char* s = realloc(b->s, cap);
    if (!s) {
      b->bad = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, f);
  vsnprintf(b->s + b->n, (size_t)n + 1, f, ap);
  va_end(ap);
  b->n += (size_t)n;
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

static void put_body(buf* b, const char* name, const seg* s) {
  put(b,
      "    <Body name=\"%s\"><mass>%.17g</mass><mass_center>%.17g %.17g %.17g</mass_center>"
      "<inertia>%.17g %.17g %.17g %.17g %.17g %.17g</inertia></Body>\n",
      name, s->m, s->c[0], s->c[1], s->c[2], s->I[0], s->I[1], s->I[2], s->I[3], s->I[4],
      s->I[5]);
}

static void put_coord(buf* b, const char* name, double lo, double hi) {
  put(b,
      "        <Coordinate name=\"%s\"><default_value>0</default_value>"
      "<range>%.17g %.17g</range></Coordinate>\n",
      name, lo, hi);
}

// a coordinate that may be locked (at its default value; a State sets the lock's value)
static void put_coord_l(buf* b, const char* name, double lo, double hi, int locked) {
  put(b,
      "        <Coordinate name=\"%s\"><default_value>0</default_value>"
      "<range>%.17g %.17g</range><locked>%s</locked></Coordinate>\n",
      name, lo, hi, locked ? "true" : "false");
}

static void put_frame(buf* b, const char* name, const char* parent, double x, double y,
                      double z) {
  put(b,
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

static void put_spline(buf* b, const char* tag, const double* x, const double* y, int n,
                       double scale) {
  put(b, "<%s name=\"function\"><x>", tag);
  for (int i = 0; i < n; i++) put(b, "%s%.17g", i ? " " : "", x[i]);
  put(b, "</x><y>");
  for (int i = 0; i < n; i++) put(b, "%s%.17g", i ? " " : "", y[i] * scale);
  put(b, "</y></%s>", tag);
}

static void put_axis(buf* b, const char* name, const char* coord, const char* axis,
                     const char* function) {
  put(b, "          <TransformAxis name=\"%s\"><coordinates>%s</coordinates><axis>%s</axis>%s"
         "</TransformAxis>\n", name, coord, axis, function);
}

static void put_knee(buf* b, const char* side, double L, int lock) {
  put(b, "    <CustomJoint name=\"knee_%s\">\n", side);
  put(b, "      <socket_parent_frame>femur_%s_knee</socket_parent_frame>\n", side);
  put(b, "      <socket_child_frame>/bodyset/tibia_%s</socket_child_frame>\n", side);
  put(b, "      <coordinates>\n");
  char nm[64];
  snprintf(nm, sizeof nm, "knee_angle_%s", side);
  put_coord_l(b, nm, -2.0944, 0.17453, lock);
  put(b, "      </coordinates>\n      <frames>\n");
  char fr[64], par[64];
  snprintf(fr, sizeof fr, "femur_%s_knee", side);
  snprintf(par, sizeof par, "/bodyset/femur_%s", side);
  put_frame(b, fr, par, 0, 0, 0);
  put(b, "      </frames>\n      <SpatialTransform>\n");
  put_axis(b, "rotation1", nm, "0 0 1",
           "<LinearFunction name=\"function\"><coefficients>1 0</coefficients></LinearFunction>");
  put_axis(b, "rotation2", "", "0 1 0", "<Constant name=\"function\"><value>0</value></Constant>");
  put_axis(b, "rotation3", "", "1 0 0", "<Constant name=\"function\"><value>0</value></Constant>");
  const double scale = L / 0.396;  // the published curves belong to a 0.396 m thigh
  buf f = {0};
  put_spline(&f, "SimmSpline", knee_ax, knee_tx, 12, scale);
  put_axis(b, "translation1", nm, "1 0 0", f.s ? f.s : "");
  f.n = 0;
  put_spline(&f, "SimmSpline", knee_angle, knee_ty, 7, scale);
  put_axis(b, "translation2", nm, "0 1 0", f.s ? f.s : "");
  free(f.s);
  put_axis(b, "translation3", "", "0 0 1", "<Constant name=\"function\"><value>0</value></Constant>");
  put(b, "      </SpatialTransform>\n    </CustomJoint>\n");
}

//---------------------------------- platform and contact fragments ----------------------------

static char* done(buf* b) {
  if (b->bad) {
    free(b->s);
    return NULL;
  }
  return b->s;
}

char* mbs_platform_body_xml(const mbs_human_params* p) {
  if (!(p->platform_mass > 0)) return NULL;
  const double m = p->platform_mass;
  const seg platform = {m, {0, -0.05, 0}, {m * 0.5, m * 0.5, m * 0.5, 0, 0, 0}};
  buf b = {0};
  put_body(&b, "platform", &platform);
  return done(&b);
}

char* mbs_platform_joint_xml(const mbs_human_params* p) {
  const double tau = p->platform_duration;
  if (!(tau > 0) || (p->platform_profile != MBS_PLATFORM_SMOOTH_STEP &&
                     p->platform_profile != MBS_PLATFORM_COSINE))
    return NULL;
  // the unit step of the profile sampled on 41 points over the duration (natural cubic spline,
  // flat beyond both ends), scaled by multipliers whose scales are the displacement's components
  buf step = {0};
  put(&step, "<NaturalCubicSpline><x>");
  for (int k = -4; k <= 44; k++) put(&step, "%s%.17g", k > -4 ? " " : "", k * tau / 40.0);
  put(&step, "</x><y>");
  for (int k = -4; k <= 44; k++)
    put(&step, "%s%.17g", k > -4 ? " " : "",
        mbs_human_platform_step(k * tau / 40.0, tau, p->platform_profile));
  put(&step, "</y></NaturalCubicSpline>");
  buf b = {0};
  put(&b, "    <CustomJoint name=\"platform_joint\">\n");
  put(&b, "      <socket_parent_frame>/ground</socket_parent_frame>\n");
  put(&b, "      <socket_child_frame>/bodyset/platform</socket_child_frame>\n");
  put(&b, "      <coordinates>\n");
  const char* pc[3] = {"platform_tx", "platform_ty", "platform_tz"};
  const char* pf[3] = {"platform_x", "platform_y", "platform_z"};
  for (int k = 0; k < 3; k++) {
    put(&b, "        <Coordinate name=\"%s\"><default_value>0</default_value><range>-2 2</range>"
            "<prescribed>true</prescribed><prescribed_function><MultiplierFunction name=\"%s\">"
            "<function>%s</function><scale>0</scale></MultiplierFunction>"
            "</prescribed_function></Coordinate>\n", pc[k], pf[k], step.s ? step.s : "");
  }
  if (step.bad) b.bad = 1;
  free(step.s);
  const char* zero = "<Constant name=\"function\"><value>0</value></Constant>";
  const char* lin = "<LinearFunction name=\"function\"><coefficients>1 0</coefficients>"
                    "</LinearFunction>";
  put(&b, "      </coordinates>\n      <SpatialTransform>\n");
  put_axis(&b, "rotation1", "", "1 0 0", zero);
  put_axis(&b, "rotation2", "", "0 1 0", zero);
  put_axis(&b, "rotation3", "", "0 0 1", zero);
  put_axis(&b, "translation1", "platform_tx", "1 0 0", lin);
  put_axis(&b, "translation2", "platform_ty", "0 1 0", lin);
  put_axis(&b, "translation3", "platform_tz", "0 0 1", lin);
  put(&b, "      </SpatialTransform>\n    </CustomJoint>\n");
  return done(&b);
}

char* mbs_platform_surface_xml(void) {
  buf b = {0};
  // a half-space's outward normal is its frame's -x: rotated by -90 deg about z it is +y
  put(&b, "    <ContactHalfSpace name=\"platform_surface\"><socket_frame>/bodyset/platform"
          "</socket_frame><location>0 0 0</location><orientation>0 0 -1.5707963267948966"
          "</orientation></ContactHalfSpace>\n");
  return done(&b);
}

const char* const mbs_foot_sphere_names[5] = {"heel", "met1", "met5", "hallux", "midfoot"};

char* mbs_foot_spheres_xml(const char* side, const char* const body[5], const double loc[5][3],
                           double radius) {
  if (!(radius > 0)) return NULL;
  buf b = {0};
  for (int k = 0; k < 5; k++)
    put(&b, "    <ContactSphere name=\"%s_%s\"><socket_frame>/bodyset/%s</socket_frame>"
            "<location>%.17g %.17g %.17g</location><orientation>0 0 0</orientation>"
            "<radius>%.17g</radius></ContactSphere>\n", mbs_foot_sphere_names[k], side, body[k],
        loc[k][0], loc[k][1], loc[k][2], radius);
  return done(&b);
}

char* mbs_foot_contact_xml(const mbs_human_params* p, const char* side) {
  if (!(p->contact_stiffness > 0) || !(p->contact_dissipation >= 0)) return NULL;
  buf b = {0};
  put(&b, "    <HuntCrossleyForce name=\"foot_%s\">\n      <HuntCrossleyForce::"
          "ContactParametersSet name=\"contact_parameters\"><objects>\n", side);
  put(&b, "        <HuntCrossleyForce::ContactParameters><geometry>platform_surface");
  for (int k = 0; k < 5; k++) put(&b, " %s_%s", mbs_foot_sphere_names[k], side);
  put(&b, "</geometry><stiffness>%.17g</stiffness><dissipation>%.17g</dissipation>"
          "<static_friction>%.17g</static_friction><dynamic_friction>%.17g"
          "</dynamic_friction><viscous_friction>%.17g</viscous_friction>"
          "</HuntCrossleyForce::ContactParameters>\n", p->contact_stiffness,
      p->contact_dissipation, p->static_friction, p->dynamic_friction, p->viscous_friction);
  put(&b, "      </objects></HuntCrossleyForce::ContactParametersSet>\n"
          "      <transition_velocity>%.17g</transition_velocity>\n"
          "    </HuntCrossleyForce>\n", p->transition_velocity);
  return done(&b);
}

//---------------------------------- the model -------------------------------------------------

char* mbs_human_model_osim(const mbs_human_params* p) {
  const double H = p->height, M = p->mass;
  if (!(H > 0.5 && H < 3) || !(M > 5 && M < 500) || !(p->contact_stiffness > 0) ||
      !(p->platform_mass > 0))
    return NULL;
  const double r_s = p->sphere_radius > 0 ? p->sphere_radius : 0.02 * H / 1.75;
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

  buf b = {0};
  put(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<OpenSimDocument Version=\"40000\">\n");
  put(&b, "<Model name=\"mbstudy_human\">\n  <gravity>0 -9.80665 0</gravity>\n");
  put(&b, "  <credits>mbstudy: de Leva (1996) Table 4 males; Drillis and Contini (1966); "
          "height %.4g m, mass %.4g kg</credits>\n", H, M);
  put(&b, "  <BodySet><objects>\n");
  char* pb = mbs_platform_body_xml(p);
  put(&b, "%s", pb ? pb : "");
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
  put(&b, "  </objects></BodySet>\n");
  put(&b, "  <JointSet><objects>\n");
  char* pj = mbs_platform_joint_xml(p);
  put(&b, "%s", pj ? pj : "");
  if (!pj) b.bad = 1;
  free(pj);
  const char* lin = "<LinearFunction name=\"function\"><coefficients>1 0</coefficients>"
                    "</LinearFunction>";
  const char* zero_fn = "<Constant name=\"function\"><value>0</value></Constant>";
  // pelvis: free in Ground, rotations (tilt about z, list about x, rotation about y, as the
  // gait model orders them) then translations; standing with the mid-hip point at y_hip
  put(&b, "    <CustomJoint name=\"ground_pelvis\">\n");
  put(&b, "      <socket_parent_frame>/ground</socket_parent_frame>\n");
  put(&b, "      <socket_child_frame>/bodyset/pelvis</socket_child_frame>\n");
  put(&b, "      <coordinates>\n");
  put_coord(&b, "pelvis_tilt", -1.5708, 1.5708);
  put_coord(&b, "pelvis_list", -1.5708, 1.5708);
  put_coord(&b, "pelvis_rotation", -1.5708, 1.5708);
  put_coord(&b, "pelvis_tx", -5, 5);
  put(&b, "        <Coordinate name=\"pelvis_ty\"><default_value>%.17g</default_value>"
          "<range>-1 3</range></Coordinate>\n", y_hip);
  put_coord(&b, "pelvis_tz", -5, 5);
  put(&b, "      </coordinates>\n      <SpatialTransform>\n");
  put_axis(&b, "rotation1", "pelvis_tilt", "0 0 1", lin);
  put_axis(&b, "rotation2", "pelvis_list", "1 0 0", lin);
  put_axis(&b, "rotation3", "pelvis_rotation", "0 1 0", lin);
  put_axis(&b, "translation1", "pelvis_tx", "1 0 0", lin);
  put_axis(&b, "translation2", "pelvis_ty", "0 1 0", lin);
  put_axis(&b, "translation3", "pelvis_tz", "0 0 1", lin);
  put(&b, "      </SpatialTransform>\n    </CustomJoint>\n");
  // lumbar: three rotations (extension about z, bending about x, rotation about y), as the gait
  // model's back joint; coordinates with q' = u, so that each can be locked
  put(&b, "    <CustomJoint name=\"back\">\n");
  put(&b, "      <socket_parent_frame>pelvis_lumbar</socket_parent_frame>\n");
  put(&b, "      <socket_child_frame>/bodyset/torso</socket_child_frame>\n");
  put(&b, "      <coordinates>\n");
  put_coord_l(&b, "lumbar_extension", -1.5708, 1.5708, p->lock_joints);
  put_coord_l(&b, "lumbar_bending", -1.5708, 1.5708, p->lock_joints);
  put_coord_l(&b, "lumbar_rotation", -1.5708, 1.5708, p->lock_joints);
  put(&b, "      </coordinates>\n      <frames>\n");
  put_frame(&b, "pelvis_lumbar", "/bodyset/pelvis", 0, L_lpt, 0);
  put(&b, "      </frames>\n      <SpatialTransform>\n");
  put_axis(&b, "rotation1", "lumbar_extension", "0 0 1", lin);
  put_axis(&b, "rotation2", "lumbar_bending", "1 0 0", lin);
  put_axis(&b, "rotation3", "lumbar_rotation", "0 1 0", lin);
  put_axis(&b, "translation1", "", "1 0 0", zero_fn);
  put_axis(&b, "translation2", "", "0 1 0", zero_fn);
  put_axis(&b, "translation3", "", "0 0 1", zero_fn);
  put(&b, "      </SpatialTransform>\n    </CustomJoint>\n");
  for (int i = 0; i < 2; i++) {
    const char* s = sides[i];
    const double z = i == 0 ? hip_half : -hip_half;
    char nm[64], fr[64], par[64];
    (void)nm;
    // hip: three rotations (flexion about z, adduction about x, rotation about y)
    put(&b, "    <CustomJoint name=\"hip_%s\">\n", s);
    put(&b, "      <socket_parent_frame>pelvis_hip_%s</socket_parent_frame>\n", s);
    put(&b, "      <socket_child_frame>/bodyset/femur_%s</socket_child_frame>\n", s);
    put(&b, "      <coordinates>\n");
    char fl[64], ad[64], ro[64];
    snprintf(fl, sizeof fl, "hip_flexion_%s", s);
    snprintf(ad, sizeof ad, "hip_adduction_%s", s);
    snprintf(ro, sizeof ro, "hip_rotation_%s", s);
    put_coord_l(&b, fl, -0.5236, 2.0944, p->lock_joints);
    put_coord_l(&b, ad, -0.8727, 0.5236, p->lock_joints);
    put_coord_l(&b, ro, -0.7854, 0.7854, p->lock_joints);
    put(&b, "      </coordinates>\n      <frames>\n");
    snprintf(fr, sizeof fr, "pelvis_hip_%s", s);
    put_frame(&b, fr, "/bodyset/pelvis", 0, 0, z);
    put(&b, "      </frames>\n      <SpatialTransform>\n");
    put_axis(&b, "rotation1", fl, "0 0 1", lin);
    put_axis(&b, "rotation2", ad, "1 0 0", lin);
    put_axis(&b, "rotation3", ro, "0 1 0", lin);
    put_axis(&b, "translation1", "", "1 0 0", zero_fn);
    put_axis(&b, "translation2", "", "0 1 0", zero_fn);
    put_axis(&b, "translation3", "", "0 0 1", zero_fn);
    put(&b, "      </SpatialTransform>\n    </CustomJoint>\n");
    put_knee(&b, s, L_thigh, p->lock_joints);
    put(&b, "    <PinJoint name=\"ankle_%s\">\n", s);
    put(&b, "      <socket_parent_frame>tibia_%s_ankle</socket_parent_frame>\n", s);
    put(&b, "      <socket_child_frame>/bodyset/calcn_%s</socket_child_frame>\n", s);
    put(&b, "      <coordinates>\n");
    snprintf(nm, sizeof nm, "ankle_angle_%s", s);
    put_coord_l(&b, nm, -0.6981, 0.5236, p->lock_joints);
    put(&b, "      </coordinates>\n      <frames>\n");
    snprintf(fr, sizeof fr, "tibia_%s_ankle", s);
    snprintf(par, sizeof par, "/bodyset/tibia_%s", s);
    put_frame(&b, fr, par, 0, -L_shank, 0);
    put(&b, "      </frames>\n    </PinJoint>\n");
  }
  put(&b, "  </objects></JointSet>\n");
  // contact: the platform's top and five spheres under each foot, touching the sole line
  // (x along the foot from the ankle; z lateral, + for the right foot)
  put(&b, "  <ContactGeometrySet><objects>\n");
  char* surf = mbs_platform_surface_xml();
  put(&b, "%s", surf ? surf : "");
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
    put(&b, "%s", sp ? sp : "");
    if (!sp) b.bad = 1;
    free(sp);
  }
  put(&b, "  </objects></ContactGeometrySet>\n");
  put(&b, "  <ForceSet><objects>\n");
  for (int i = 0; i < 2; i++) {
    char* fc = mbs_foot_contact_xml(p, sides[i]);
    put(&b, "%s", fc ? fc : "");
    if (!fc) b.bad = 1;
    free(fc);
  }
  // holding torques: one coordinate actuator per joint coordinate of the back and legs
  const char* held[] = {"lumbar_bending", "lumbar_rotation", "lumbar_extension",
                        "hip_adduction_r", "hip_rotation_r", "hip_flexion_r", "knee_angle_r",
                        "ankle_angle_r", "hip_adduction_l", "hip_rotation_l", "hip_flexion_l",
                        "knee_angle_l", "ankle_angle_l"};
  for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
    put(&b, "    <CoordinateActuator name=\"%s_torque\"><coordinate>%s</coordinate>"
            "<optimal_force>1</optimal_force></CoordinateActuator>\n", held[i], held[i]);
  put(&b, "  </objects></ForceSet>\n</Model>\n</OpenSimDocument>\n");
  if (b.bad) {
    free(b.s);
    return NULL;
  }
  return b.s;
}
