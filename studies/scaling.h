// Scaling a model to a subject as State edits (the System is never rebuilt): each body has a
// length factor and a mass factor, and every instance parameter that a body's size or mass
// sets is multiplied by its factor, as OpenSim's ScaleTool scales a generic model (with mass
// distribution preserved):
//
//   /bodyset/<B>/mass                       × mass factor of B
//   /bodyset/<B>/mass_center                × length factor of B
//   /bodyset/<B>/inertia                    × mass factor × length factor² of B
//   /jointset/<J>/parent_frame/translation  × length factor of J's parent body
//   /jointset/<J>/child_frame/translation   × length factor of J's child body
//   /functions/<J>/translation<k>/y         × length factor of J's parent body (a
//   /functions/<J>/translation<k>/value       CustomJoint's translations as splines of its
//                                             coordinates, or constants; polynomial and linear
//                                             translation functions — a translational
//                                             coordinate passed through — are left alone)
//   /contactgeometryset/<G>/location        × length factor of G's body
//   /contactgeometryset/<G>/radius          × length factor of G's body (spheres)
//
// Ground (and any body whose factors are 1) keeps its values. Orientations, stiffnesses and
// every other parameter keep theirs.
#ifndef MBS_STUDIES_SCALING_H_
#define MBS_STUDIES_SCALING_H_

#include "mbs/mbs.h"

typedef struct mbs_scaling mbs_scaling;

// what each parameter of the System scales with; NULL when out of memory
mbs_scaling* mbs_scaling_create(const mbs_system* sys);
void mbs_scaling_free(mbs_scaling* s);
// the State's parameters multiplied in place by the bodies' factors (nbody each, Ground
// included): call once on a State with the reference subject's values (a sample's, after its
// parameters are set)
void mbs_scaling_apply(const mbs_scaling* s, mbs_state* st, const double* length,
                       const double* mass);
// how many parameter numbers it scales (for reports and tests)
int mbs_scaling_count(const mbs_scaling* s);

#endif  // MBS_STUDIES_SCALING_H_
