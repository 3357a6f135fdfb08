// O(n) multibody operators on a realized State (Simbody Theory Manual §8, §12; Jain 2011).
//
// All spatial quantities are in Ground; body quantities are about the body origin. Each
// operator states the stage it needs and fails with MBS_ERR_STAGE below it. None allocates:
// temporaries come from the State's scratch stack.
#ifndef MBS_DYNAMICS_H_
#define MBS_DYNAMICS_H_

#include "mbs/state.h"

#ifdef __cplusplus
extern "C" {
#endif

// Mv = M v, mass matrix times a vector (nu)                           [Position]
int mbs_calc_mass_matrix_times(const mbs_system* sys, mbs_state* st, const double* v,
                               double* Mv);
// x = M^-1 f by the articulated-body method, never forming M (nu)     [Position]
int mbs_calc_mass_matrix_inverse_times(const mbs_system* sys, mbs_state* st, const double* f,
                                       double* x);
// dense mass matrix (nu x nu, row-major) by the composite-body method  [Position]
int mbs_calc_mass_matrix(const mbs_system* sys, mbs_state* st, double* M);
// Inverse dynamics: the generalized forces tau (nu) that, added to the forces acting now,
// produce accelerations udot: tau = M udot + C(q, u) - f_applied. f_applied includes every
// force element and the applied forces set in the State.              [Dynamics]
int mbs_calc_inverse_dynamics(const mbs_system* sys, mbs_state* st, const double* udot,
                              double* tau);
// Coriolis, centrifugal and gyroscopic generalized forces C(q, u) (no applied forces) [Velocity]
int mbs_calc_bias_forces(const mbs_system* sys, mbs_state* st, double* C);
// generalized forces equivalent to body forces: f = J^T F (F: nbody x 6)    [Position]
int mbs_calc_jacobian_transpose_times(const mbs_system* sys, mbs_state* st, const double* F,
                                      double* f);
// body spatial velocities from speeds: V = J u (V: nbody x 6)               [Position]
int mbs_calc_jacobian_times(const mbs_system* sys, mbs_state* st, const double* u, double* V);
// Jacobian of the Ground velocity of station p_BS on a body: v = J u, J is 3 x nu row-major
// [Position]
int mbs_calc_station_jacobian(const mbs_system* sys, mbs_state* st, int body,
                              const double p_BS[3], double* J);
// q' = N(q) u and u = N(q)^-1 q' (nq and nu)                                 [Position]
int mbs_calc_qdot(const mbs_system* sys, mbs_state* st, const double* u, double* qdot);
int mbs_calc_u_from_qdot(const mbs_system* sys, mbs_state* st, const double* qdot, double* u);

// kinetic energy                                                             [Velocity]
int mbs_calc_kinetic_energy(const mbs_system* sys, mbs_state* st, double* ke);
// potential energy of gravity and springs (gravity is zero at the Ground origin) [Position]
int mbs_calc_potential_energy(const mbs_system* sys, mbs_state* st, double* pe);
// system spatial momentum about the Ground origin [angular; linear]          [Velocity]
int mbs_calc_momentum(const mbs_system* sys, mbs_state* st, double momentum[6]);
// total mass, center of mass location                                       [Position]
int mbs_calc_center_of_mass(const mbs_system* sys, mbs_state* st, double* mass, double com[3]);
// the same over the bodies b with skip[b] == 0 (skip: nbody flags; NULL: every body), e.g. a
// subject without the platform it stands on; mass 0 and com 0 when nothing is left  [Position]
int mbs_calc_center_of_mass_subset(const mbs_system* sys, mbs_state* st,
                                   const unsigned char* skip, double* mass, double com[3]);
// center of mass velocity                                                   [Velocity]
int mbs_calc_center_of_mass_velocity(const mbs_system* sys, mbs_state* st, double vcom[3]);
// Mobilizer reaction on each body (nbody x 6, [moment; force] in Ground), as applied by the
// parent through the mobilizer at the origin of the body's M frame. Applied mobility forces are
// included (Simbody's and SD/FAST's convention). Entry 0 is the reaction of a weld that would
// hold Ground at its origin.                                                 [Acceleration]
int mbs_calc_mobilizer_reaction_forces(const mbs_system* sys, mbs_state* st, double* F);

#ifdef __cplusplus
}
#endif

#endif  // MBS_DYNAMICS_H_
