// Induced accelerations (the numerical core of OpenSim's InducedAccelerations analysis): the
// share of each force in the generalized accelerations, the bodies' accelerations and the
// system's center-of-mass acceleration at one State.
//
// Contributors, in this order: "total" (not with compute_potentials_only), each actuator (the
// force elements with a control, in control order, named after them), "gravity" (the gravity
// elements), "velocity" (Coriolis, centrifugal and gyroscopic terms and the constraints'
// velocity terms) and, in MBS_IA_SUPERPOSITION mode when the System has any, "other_forces"
// (every other force element — springs, dampers, ligaments, bushings, limits, contact — and
// the State's applied forces). External forces (ExternalForce elements) act in none, as in
// OpenSim, which disables them all: contact is represented by constraints instead.
//
// Each contributor's generalized accelerations are the constrained response to its
// generalized forces f alone, u' = P M^-1 f (P removes the share the active constraint
// equations G u' = b take: Y lambda = G M^-1 f, Y = G M^-1 G^T); "velocity" responds to -C
// with the right-hand side G a - b, and "total" to everything with it. Body accelerations are
// J u' (plus, for "velocity" and "total", the terms in the speeds), taken at each body's mass
// center: [angular acceleration; linear acceleration of the mass center], in Ground.
//
// Modes:
//  - MBS_IA_SUPERPOSITION (default): every force as it acts in the State (at its speeds); the
//    contributions sum to "total" exactly (to rounding).
//  - MBS_IA_OPENSIM: as OpenSim's analysis: actuators and gravity evaluated with the speeds set
//    to zero and with every other force element acting in each contribution (at zero speeds;
//    at the State's speeds in "velocity"); no "other_forces". The contributions then sum to the
//    total only where the other forces vanish and the actuators' forces do not depend on speed.
//
// Contact replacement (OpenSim's ConstraintSet with force_threshold; OpenSim then disables
// every external force): each listed external force whose magnitude exceeds the threshold at
// the State's time is replaced by a constraint between the body it is applied to and Ground at
// its point of application P, acting in every contribution (its share removed as a
// constraint's would be):
//  - MBS_IA_CONTACT_POINT (OpenSim's PointConstraint): P's acceleration J_P u' + a_P0 = 0;
//  - MBS_IA_CONTACT_WELD (WeldConstraint): that, and the body's angular acceleration too;
//  - MBS_IA_CONTACT_ROLLING (RollingOnSurfaceConstraint with a Ground surface of normal n):
//    P stays in the plane through it (n . a_P = 0), does not slip along Ground's x and z axes
//    (x . a_P = z . a_P = 0), and the body does not spin about n (a constant angle between
//    Ground's x axis and the body axis along x cross n, as OpenSim's ConstantAngle).
// a_P0 is P's acceleration at u' = 0 (the speeds' terms), which "velocity" and "total" carry.
// OpenSim's RollingOnSurfaceConstraint also switches its parts off where the total's reaction
// pulls or slides beyond friction; that check is not made here.
// An mbs_ia is made once per System (and thread) and allocates nothing when solving.
#ifndef MBS_INDUCED_ACCELERATIONS_H_
#define MBS_INDUCED_ACCELERATIONS_H_

#include "mbs/state.h"
#include "mbs/status.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_ia_mode {
  MBS_IA_SUPERPOSITION = 0,
  MBS_IA_OPENSIM = 1,
} mbs_ia_mode;

typedef enum mbs_ia_contact_type {
  MBS_IA_CONTACT_POINT = 0,
  MBS_IA_CONTACT_WELD,
  MBS_IA_CONTACT_ROLLING,
} mbs_ia_contact_type;

typedef struct mbs_ia_contact {
  int external_force;        // force element index of an external force
  mbs_ia_contact_type type;
  double normal[3];          // rolling: the surface normal in Ground (OpenSim's default 0 1 0)
} mbs_ia_contact;

typedef struct mbs_ia_options {
  mbs_ia_mode mode;
  int compute_potentials_only;  // muscles pull with a unit tension; no "total"
  double force_threshold;       // N (OpenSim's force_threshold, default 6)
  const mbs_ia_contact* contacts;
  int ncontact;
} mbs_ia_options;

void mbs_ia_options_default(mbs_ia_options* o);

typedef struct mbs_ia mbs_ia;

int mbs_ia_create(const mbs_system* sys, const mbs_ia_options* o, mbs_ia** out,
                  mbs_error* err);
void mbs_ia_free(mbs_ia* ia);

int mbs_ia_ncontributor(const mbs_ia* ia);
const char* mbs_ia_contributor_name(const mbs_ia* ia, int c);
// the actuator's force element for an actuator contributor, else -1
int mbs_ia_contributor_force(const mbs_ia* ia, int c);

// Compute every contribution at the State's time, q, u and auxiliary states (st itself is not
// changed). MBS_ERR_ARGUMENT for non-finite inputs.
int mbs_ia_solve(mbs_ia* ia, const mbs_state* st, mbs_error* err);

// results of the last solve
const double* mbs_ia_udot(const mbs_ia* ia, int c);               // nu
const double* mbs_ia_body_acceleration(const mbs_ia* ia, int c);  // nbody x 6
const double* mbs_ia_com_acceleration(const mbs_ia* ia, int c);   // 3
// whether contact k was replaced by its constraint
int mbs_ia_contact_on(const mbs_ia* ia, int k);

#ifdef __cplusplus
}
#endif

#endif  // MBS_INDUCED_ACCELERATIONS_H_
