// The perturbation platform as pieces of OpenSim 4 XML (mbs/osim_platform.h).
#include "mbs/osim_platform.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mbs_platform_params_default(mbs_platform_params* p) {
  p->platform_mass = 100;
  p->platform_duration = 0.5;
  p->platform_profile = MBS_PLATFORM_SMOOTH_STEP;
  p->sphere_radius = 0;  // 0: the builder's default
  p->contact_stiffness = 1e7;
  p->contact_dissipation = 1;
  p->static_friction = 0.9;
  p->dynamic_friction = 0.8;
  p->viscous_friction = 0;
  p->transition_velocity = 0.05;
}

double mbs_platform_step(double t, double duration, mbs_platform_profile profile) {
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

void mbs_text_put(mbs_text* b, const char* f, ...) {
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

char* mbs_text_done(mbs_text* b) {
  if (b->bad) {
    free(b->s);
    return NULL;
  }
  return b->s;
}

void mbs_osim_put_body(mbs_text* b, const char* name, double m, const double c[3],
                       const double I[6]) {
  mbs_text_put(b,
               "    <Body name=\"%s\"><mass>%.17g</mass><mass_center>%.17g %.17g %.17g"
               "</mass_center><inertia>%.17g %.17g %.17g %.17g %.17g %.17g</inertia></Body>\n",
               name, m, c[0], c[1], c[2], I[0], I[1], I[2], I[3], I[4], I[5]);
}

void mbs_osim_put_axis(mbs_text* b, const char* name, const char* coord, const char* axis,
                       const char* function) {
  mbs_text_put(b, "          <TransformAxis name=\"%s\"><coordinates>%s</coordinates><axis>%s"
                  "</axis>%s</TransformAxis>\n", name, coord, axis, function);
}

void mbs_osim_put_spatial_transform(mbs_text* b, const char* const coords[6],
                                    const char* const axes[6]) {
  static const char* const names[6] = {"rotation1",    "rotation2",    "rotation3",
                                       "translation1", "translation2", "translation3"};
  mbs_text_put(b, "      <SpatialTransform>\n");
  for (int k = 0; k < 6; k++)
    mbs_osim_put_axis(b, names[k], coords[k], axes[k],
                      coords[k][0] ? "<LinearFunction name=\"function\"><coefficients>1 0"
                                     "</coefficients></LinearFunction>"
                                   : "<Constant name=\"function\"><value>0</value></Constant>");
  mbs_text_put(b, "      </SpatialTransform>\n");
}

//---------------------------------- platform and contact fragments ----------------------------

char* mbs_platform_body_xml(const mbs_platform_params* p) {
  if (!(p->platform_mass > 0)) return NULL;
  const double m = p->platform_mass;
  const double c[3] = {0, -0.05, 0}, I[6] = {m * 0.5, m * 0.5, m * 0.5, 0, 0, 0};
  mbs_text b = {0};
  mbs_osim_put_body(&b, "platform", m, c, I);
  return mbs_text_done(&b);
}

char* mbs_platform_joint_xml(const mbs_platform_params* p) {
  const double tau = p->platform_duration;
  if (!(tau > 0) || (p->platform_profile != MBS_PLATFORM_SMOOTH_STEP &&
                     p->platform_profile != MBS_PLATFORM_COSINE))
    return NULL;
  // the unit step of the profile sampled on 41 points over the duration (natural cubic spline,
  // flat beyond both ends), scaled by multipliers whose scales are the displacement's components
  mbs_text step = {0};
  mbs_text_put(&step, "<NaturalCubicSpline><x>");
  for (int k = -4; k <= 44; k++) mbs_text_put(&step, "%s%.17g", k > -4 ? " " : "", k * tau / 40.0);
  mbs_text_put(&step, "</x><y>");
  for (int k = -4; k <= 44; k++)
    mbs_text_put(&step, "%s%.17g", k > -4 ? " " : "",
        mbs_platform_step(k * tau / 40.0, tau, p->platform_profile));
  mbs_text_put(&step, "</y></NaturalCubicSpline>");
  mbs_text b = {0};
  mbs_text_put(&b, "    <CustomJoint name=\"platform_joint\">\n");
  mbs_text_put(&b, "      <socket_parent_frame>/ground</socket_parent_frame>\n");
  mbs_text_put(&b, "      <socket_child_frame>/bodyset/platform</socket_child_frame>\n");
  mbs_text_put(&b, "      <coordinates>\n");
  const char* pc[3] = {"platform_tx", "platform_ty", "platform_tz"};
  const char* pf[3] = {"platform_x", "platform_y", "platform_z"};
  for (int k = 0; k < 3; k++) {
    mbs_text_put(&b, "        <Coordinate name=\"%s\"><default_value>0</default_value>"
                     "<range>-2 2</range>"
            "<prescribed>true</prescribed><prescribed_function><MultiplierFunction name=\"%s\">"
            "<function>%s</function><scale>0</scale></MultiplierFunction>"
            "</prescribed_function></Coordinate>\n", pc[k], pf[k], step.s ? step.s : "");
  }
  if (step.bad) b.bad = 1;
  free(step.s);
  mbs_text_put(&b, "      </coordinates>\n");
  static const char* const coords[6] = {"", "", "", "platform_tx", "platform_ty", "platform_tz"};
  static const char* const axes[6] = {"1 0 0", "0 1 0", "0 0 1", "1 0 0", "0 1 0", "0 0 1"};
  mbs_osim_put_spatial_transform(&b, coords, axes);
  mbs_text_put(&b, "    </CustomJoint>\n");
  return mbs_text_done(&b);
}

char* mbs_platform_surface_xml(void) {
  mbs_text b = {0};
  // a half-space's outward normal is its frame's -x: rotated by -90 deg about z it is +y
  mbs_text_put(&b, "    <ContactHalfSpace name=\"platform_surface\"><socket_frame>/bodyset/platform"
          "</socket_frame><location>0 0 0</location><orientation>0 0 -1.5707963267948966"
          "</orientation></ContactHalfSpace>\n");
  return mbs_text_done(&b);
}

const char* const mbs_foot_sphere_names[5] = {"heel", "met1", "met5", "hallux", "midfoot"};

char* mbs_foot_spheres_xml(const char* side, const char* const body[5], const double loc[5][3],
                           double radius) {
  if (!(radius > 0)) return NULL;
  mbs_text b = {0};
  for (int k = 0; k < 5; k++)
    mbs_text_put(&b, "    <ContactSphere name=\"%s_%s\"><socket_frame>/bodyset/%s</socket_frame>"
            "<location>%.17g %.17g %.17g</location><orientation>0 0 0</orientation>"
            "<radius>%.17g</radius></ContactSphere>\n", mbs_foot_sphere_names[k], side, body[k],
        loc[k][0], loc[k][1], loc[k][2], radius);
  return mbs_text_done(&b);
}

char* mbs_foot_contact_xml(const mbs_platform_params* p, const char* side) {
  if (!(p->contact_stiffness > 0) || !(p->contact_dissipation >= 0)) return NULL;
  mbs_text b = {0};
  mbs_text_put(&b, "    <HuntCrossleyForce name=\"foot_%s\">\n      <HuntCrossleyForce::"
          "ContactParametersSet name=\"contact_parameters\"><objects>\n", side);
  mbs_text_put(&b, "        <HuntCrossleyForce::ContactParameters><geometry>platform_surface");
  for (int k = 0; k < 5; k++) mbs_text_put(&b, " %s_%s", mbs_foot_sphere_names[k], side);
  mbs_text_put(&b, "</geometry><stiffness>%.17g</stiffness><dissipation>%.17g</dissipation>"
          "<static_friction>%.17g</static_friction><dynamic_friction>%.17g"
          "</dynamic_friction><viscous_friction>%.17g</viscous_friction>"
          "</HuntCrossleyForce::ContactParameters>\n", p->contact_stiffness,
      p->contact_dissipation, p->static_friction, p->dynamic_friction, p->viscous_friction);
  mbs_text_put(&b, "      </objects></HuntCrossleyForce::ContactParametersSet>\n"
          "      <transition_velocity>%.17g</transition_velocity>\n"
          "    </HuntCrossleyForce>\n", p->transition_velocity);
  return mbs_text_done(&b);
}
