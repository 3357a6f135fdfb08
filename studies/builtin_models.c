// Models mbstudy builds itself, as OpenSim documents in memory, so that studies, tests and
// the README's commands need no files from elsewhere.
#include "builtin_models.h"

#include <string.h>

// Two rods on pin joints about z, hanging from (0, 1.1, 0): each rod's 1 kg point mass sits at
// its origin, 0.5 m below its pin (the layout of OpenSim's double_pendulum.osim).
static const char double_pendulum[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "<Model name=\"double_pendulum\">\n"
    "  <gravity>0 -9.80665 0</gravity>\n"
    "  <BodySet><objects>\n"
    "    <Body name=\"rod1\"><mass>1</mass><mass_center>0 0 0</mass_center>"
    "<inertia>0 0 0 0 0 0</inertia></Body>\n"
    "    <Body name=\"rod2\"><mass>1</mass><mass_center>0 0 0</mass_center>"
    "<inertia>0 0 0 0 0 0</inertia></Body>\n"
    "  </objects></BodySet>\n"
    "  <JointSet><objects>\n"
    "    <PinJoint name=\"pin1\">\n"
    "      <socket_parent_frame>ground_offset</socket_parent_frame>\n"
    "      <socket_child_frame>rod1_offset</socket_child_frame>\n"
    "      <coordinates><Coordinate name=\"q1\"><default_value>-0.7853981633974483"
    "</default_value><range>-3.14159 3.14159</range></Coordinate></coordinates>\n"
    "      <frames>\n"
    "        <PhysicalOffsetFrame name=\"ground_offset\"><socket_parent>/ground</socket_parent>"
    "<translation>0 1.1 0</translation><orientation>0 0 0</orientation></PhysicalOffsetFrame>\n"
    "        <PhysicalOffsetFrame name=\"rod1_offset\"><socket_parent>/bodyset/rod1"
    "</socket_parent><translation>0 0.5 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "      </frames>\n"
    "    </PinJoint>\n"
    "    <PinJoint name=\"pin2\">\n"
    "      <socket_parent_frame>/bodyset/rod1</socket_parent_frame>\n"
    "      <socket_child_frame>rod2_offset</socket_child_frame>\n"
    "      <coordinates><Coordinate name=\"q2\"><default_value>-1.0471975511965976"
    "</default_value><range>-3.14159 3.14159</range></Coordinate></coordinates>\n"
    "      <frames>\n"
    "        <PhysicalOffsetFrame name=\"rod2_offset\"><socket_parent>/bodyset/rod2"
    "</socket_parent><translation>0 0.5 0</translation><orientation>0 0 0</orientation>"
    "</PhysicalOffsetFrame>\n"
    "      </frames>\n"
    "    </PinJoint>\n"
    "  </objects></JointSet>\n"
    "</Model>\n"
    "</OpenSimDocument>\n";

// A 1 kg ball of radius 0.05 m on a vertical slider, dropped from 0.5 m onto a half-space:
// Hunt-Crossley contact (stiffness 1e7 Pa, dissipation 1 s/m) with friction.
static const char bouncing_ball[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "<Model name=\"bouncing_ball\">\n"
    "  <gravity>0 -9.80665 0</gravity>\n"
    "  <BodySet><objects>\n"
    "    <Body name=\"ball\"><mass>1</mass><mass_center>0 0 0</mass_center>"
    "<inertia>0.001 0.001 0.001 0 0 0</inertia></Body>\n"
    "  </objects></BodySet>\n"
    "  <JointSet><objects>\n"
    "    <SliderJoint name=\"drop\">\n"
    "      <socket_parent_frame>vertical</socket_parent_frame>\n"
    "      <socket_child_frame>ball_frame</socket_child_frame>\n"
    "      <coordinates><Coordinate name=\"height\"><default_value>0.5</default_value>"
    "<range>-1 2</range></Coordinate></coordinates>\n"
    "      <frames>\n"
    "        <PhysicalOffsetFrame name=\"vertical\"><socket_parent>/ground</socket_parent>"
    "<translation>0 0 0</translation><orientation>0 0 1.5707963267948966</orientation>"
    "</PhysicalOffsetFrame>\n"
    "        <PhysicalOffsetFrame name=\"ball_frame\"><socket_parent>/bodyset/ball"
    "</socket_parent><translation>0 0 0</translation><orientation>0 0 1.5707963267948966"
    "</orientation></PhysicalOffsetFrame>\n"
    "      </frames>\n"
    "    </SliderJoint>\n"
    "  </objects></JointSet>\n"
    "  <ContactGeometrySet><objects>\n"
    "    <ContactHalfSpace name=\"floor\"><socket_frame>/ground</socket_frame>"
    "<location>0 0 0</location><orientation>0 0 -1.5707963267948966</orientation>"
    "</ContactHalfSpace>\n"
    "    <ContactSphere name=\"ball_surface\"><socket_frame>/bodyset/ball</socket_frame>"
    "<location>0 0 0</location><orientation>0 0 0</orientation><radius>0.05</radius>"
    "</ContactSphere>\n"
    "  </objects></ContactGeometrySet>\n"
    "  <ForceSet><objects>\n"
    "    <HuntCrossleyForce name=\"contact\">\n"
    "      <HuntCrossleyForce::ContactParametersSet name=\"contact_parameters\"><objects>\n"
    "        <HuntCrossleyForce::ContactParameters><geometry>floor ball_surface</geometry>"
    "<stiffness>1e7</stiffness><dissipation>1</dissipation><static_friction>0.8"
    "</static_friction><dynamic_friction>0.6</dynamic_friction><viscous_friction>0"
    "</viscous_friction></HuntCrossleyForce::ContactParameters>\n"
    "      </objects></HuntCrossleyForce::ContactParametersSet>\n"
    "      <transition_velocity>0.01</transition_velocity>\n"
    "    </HuntCrossleyForce>\n"
    "  </objects></ForceSet>\n"
    "</Model>\n"
    "</OpenSimDocument>\n";

static const struct {
  const char* name;
  const char* text;
  const char* what;
} models[] = {
    {"double_pendulum", double_pendulum, "two 1 kg point masses on 0.5 m rods, pin joints"},
    {"bouncing_ball", bouncing_ball, "a 1 kg ball dropped onto a floor, Hunt-Crossley contact"},
};

const char* mbs_builtin_model(const char* name) {
  for (size_t i = 0; name && i < sizeof(models) / sizeof(models[0]); i++)
    if (!strcmp(models[i].name, name)) return models[i].text;
  return NULL;
}

int mbs_builtin_model_count(void) { return (int)(sizeof(models) / sizeof(models[0])); }

const char* mbs_builtin_model_name(int i) {
  return i >= 0 && i < mbs_builtin_model_count() ? models[i].name : NULL;
}

const char* mbs_builtin_model_description(int i) {
  return i >= 0 && i < mbs_builtin_model_count() ? models[i].what : NULL;
}
