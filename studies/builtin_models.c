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

// Two blocks on vertical sliders for fitting tests: block1 (2 kg) hangs from the ceiling on a
// coordinate spring (200 N/m, rest height 1 m, 2 N s/m), block2 (1 kg) hangs from block1 on
// another (150 N/m, rest 0.9 m below it, 1 N s/m) and lands on the floor on a 5 cm sphere
// (Hunt-Crossley, 1e6 Pa, 0.5 s/m, no friction). Springs of known stiffness make the masses and
// the contact stiffness identifiable from the motion (with gravity and contact alone only
// stiffness / mass would be).
static const char spring_blocks[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    "<OpenSimDocument Version=\"40000\">\n"
    "<Model name=\"spring_blocks\">\n"
    "  <gravity>0 -9.80665 0</gravity>\n"
    "  <BodySet><objects>\n"
    "    <Body name=\"block1\"><mass>2</mass><mass_center>0 0 0</mass_center>"
    "<inertia>0.01 0.01 0.01 0 0 0</inertia></Body>\n"
    "    <Body name=\"block2\"><mass>1</mass><mass_center>0 0 0</mass_center>"
    "<inertia>0.001 0.001 0.001 0 0 0</inertia></Body>\n"
    "  </objects></BodySet>\n"
    "  <JointSet><objects>\n"
    "    <SliderJoint name=\"upper\">\n"
    "      <socket_parent_frame>up_ground</socket_parent_frame>\n"
    "      <socket_child_frame>up_block1</socket_child_frame>\n"
    "      <coordinates><Coordinate name=\"y1\"><default_value>1.0</default_value>"
    "<range>-1 3</range></Coordinate></coordinates>\n"
    "      <frames>\n"
    "        <PhysicalOffsetFrame name=\"up_ground\"><socket_parent>/ground</socket_parent>"
    "<translation>0 0 0</translation><orientation>0 0 1.5707963267948966</orientation>"
    "</PhysicalOffsetFrame>\n"
    "        <PhysicalOffsetFrame name=\"up_block1\"><socket_parent>/bodyset/block1"
    "</socket_parent><translation>0 0 0</translation><orientation>0 0 1.5707963267948966"
    "</orientation></PhysicalOffsetFrame>\n"
    "      </frames>\n"
    "    </SliderJoint>\n"
    "    <SliderJoint name=\"lower\">\n"
    "      <socket_parent_frame>low_block1</socket_parent_frame>\n"
    "      <socket_child_frame>low_block2</socket_child_frame>\n"
    "      <coordinates><Coordinate name=\"y2\"><default_value>-0.6</default_value>"
    "<range>-3 1</range></Coordinate></coordinates>\n"
    "      <frames>\n"
    "        <PhysicalOffsetFrame name=\"low_block1\"><socket_parent>/bodyset/block1"
    "</socket_parent><translation>0 0 0</translation><orientation>0 0 1.5707963267948966"
    "</orientation></PhysicalOffsetFrame>\n"
    "        <PhysicalOffsetFrame name=\"low_block2\"><socket_parent>/bodyset/block2"
    "</socket_parent><translation>0 0 0</translation><orientation>0 0 1.5707963267948966"
    "</orientation></PhysicalOffsetFrame>\n"
    "      </frames>\n"
    "    </SliderJoint>\n"
    "  </objects></JointSet>\n"
    "  <ContactGeometrySet><objects>\n"
    "    <ContactHalfSpace name=\"floor\"><socket_frame>/ground</socket_frame>"
    "<location>0 0 0</location><orientation>0 0 -1.5707963267948966</orientation>"
    "</ContactHalfSpace>\n"
    "    <ContactSphere name=\"block2_foot\"><socket_frame>/bodyset/block2</socket_frame>"
    "<location>0 0 0</location><orientation>0 0 0</orientation><radius>0.05</radius>"
    "</ContactSphere>\n"
    "  </objects></ContactGeometrySet>\n"
    "  <ForceSet><objects>\n"
    "    <SpringGeneralizedForce name=\"spring1\"><coordinate>y1</coordinate>"
    "<stiffness>200</stiffness><rest_length>1.0</rest_length><viscosity>2</viscosity>"
    "</SpringGeneralizedForce>\n"
    "    <SpringGeneralizedForce name=\"spring2\"><coordinate>y2</coordinate>"
    "<stiffness>150</stiffness><rest_length>-0.9</rest_length><viscosity>1</viscosity>"
    "</SpringGeneralizedForce>\n"
    "    <HuntCrossleyForce name=\"contact\">\n"
    "      <HuntCrossleyForce::ContactParametersSet name=\"contact_parameters\"><objects>\n"
    "        <HuntCrossleyForce::ContactParameters><geometry>floor block2_foot</geometry>"
    "<stiffness>1e6</stiffness><dissipation>0.5</dissipation><static_friction>0"
    "</static_friction><dynamic_friction>0</dynamic_friction><viscous_friction>0"
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
    {"spring_blocks", spring_blocks, "two blocks on springs, the lower landing on the floor"},
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
