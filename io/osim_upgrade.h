// Older OpenSim model documents (Version 1.x to 3.x, below 30500) brought to the layout of
// OpenSim 4 in place, as OpenSim 4 converts them when it loads them, so that the reader
// (osim.c) reads one layout. Internal to mbs_io.
#ifndef MBS_IO_OSIM_UPGRADE_H_
#define MBS_IO_OSIM_UPGRADE_H_

#include <libxml/tree.h>
#include <stddef.h>

// What the conversion says about a document, for messages.
typedef struct mbs_osim_upgrade_report {
  int line;        // the line of an element it could not convert (with the error)
  char msg[512];   // what is wrong (error), without file and line
  int njoints;     // joints moved out of their bodies into the JointSet
  int nmuscles;    // OpenSim 1.x muscles whose points were put into a GeometryPath
} mbs_osim_upgrade_report;

// Convert the <Model> element `model` of a document of Version `version` (< 30500): the
// dynamics engine's sets lifted into the model (1.x), old class names (ActuatorSet,
// MusclePoint, MuscleViaPoint, MovingMusclePoint, MusclePointSet, MuscleWrap, MuscleWrapSet),
// 1.x muscles' points into a GeometryPath, the body named "ground" made the model's Ground,
// each body's joint moved into the JointSet with offset frames for its location and
// orientation in parent and child and its coordinates, inertia_xx..yz into inertia, and the
// bodies named by points, contact geometry, constraints and forces as frame sockets. Element
// lines are kept (moved elements keep theirs; new ones take the line of what they replace).
// Returns 0, or a negative status (MBS_ERR_TOPOLOGY for what OpenSim 4 cannot read either,
// MBS_ERR_NO_MEMORY) with the line and message in *r.
int mbs_osim_upgrade(xmlNodePtr model, int version, mbs_osim_upgrade_report* r);

#endif  // MBS_IO_OSIM_UPGRADE_H_
