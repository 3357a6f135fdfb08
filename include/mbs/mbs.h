// mbstudy core: one header for the whole public API of the dynamics engine.
#ifndef MBS_MBS_H_
#define MBS_MBS_H_

#include "mbs/constraint.h"
#include "mbs/contact.h"
#include "mbs/controller.h"
#include "mbs/force.h"
#include "mbs/dynamics.h"
#include "mbs/function.h"
#include "mbs/integrate.h"
#include "mbs/mobilizer.h"
#include "mbs/path.h"
#include "mbs/path_force.h"
#include "mbs/simulate.h"
#include "mbs/spatial.h"
#include "mbs/state.h"
#include "mbs/status.h"
#include "mbs/system.h"
#include "mbs/version.h"

#endif  // MBS_MBS_H_
