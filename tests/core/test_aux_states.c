// Auxiliary state variables z (activations, later fiber lengths) integrated with q and u, checked
// on OpenSim's ActivationCoordinateActuator, whose closed form is known: a body of mass m on a
// slider (no gravity), pushed by F0 a(t) with a' = (e - a) / tau from a(0) = a0 under a constant
// excitation e, has a(t) = e + (a0 - e) exp(-t / tau), and integrating F0 a / m twice,
//   v(t) = v0 + F0/m [e t + (a0 - e) tau (1 - exp(-t/tau))],
//   x(t) = x0 + v0 t + F0/m [e t^2 / 2 + (a0 - e) tau (t - tau (1 - exp(-t/tau)))].
// Every error-controlled integrator (and fixed-step RK4) follows it; the State's z is a variable
// (copied with the State, invalidating Dynamics when set), its derivative is reported at
// Dynamics, and the element reads from an OpenSim document (defaults: tau 0.01 s, a0 0.5) with
// its parameters as study parameters.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs_test.h"

static const double m = 2.0, F0 = 10.0, tau = 0.05, a0 = 0.2, e = 0.9;

static void closed_form(double t, double* x, double* v, double* a) {
  const double E = exp(-t / tau);
  *a = e + (a0 - e) * E;
  *v = F0 / m * (e * t + (a0 - e) * tau * (1 - E));
  *x = F0 / m * (e * t * t / 2 + (a0 - e) * tau * (t - tau * (1 - E)));
}

static mbs_system* build(int* force) {
  mbs_system* sys = mbs_system_create("slider");
  mbs_body_spec s = mbs_body_spec_default("block", 0, MBS_MOB_SLIDER);
  s.mass = m;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 0.1;
  const int b = mbs_system_add_body(sys, &s);
  *force = mbs_system_add_activation_coordinate_actuator(sys, b, 0, F0, tau, a0, e, -1);
  EXPECT_TRUE(*force >= 0);
  EXPECT_OK(mbs_system_finalize(sys));
  return sys;
}

static void test_closed_form(void) {
  int force;
  mbs_system* sys = build(&force);
  EXPECT_EQ_INT(mbs_system_nz(sys), 1);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_NEAR(mbs_state_z(st)[0], a0, 0);
  // the derivative at Dynamics
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_NEAR(mbs_get_zdot(sys, st)[0], (e - a0) / tau, 1e-15);
  double tension;
  EXPECT_OK(mbs_get_actuator_tension(sys, st, force, &tension));
  EXPECT_NEAR(tension, F0 * a0, 1e-15);
  // setting z invalidates Dynamics
  mbs_state_upd_z(st)[0] = 0.5;
  EXPECT_TRUE(mbs_get_zdot(sys, st) == NULL);
  mbs_state_upd_z(st)[0] = a0;
  const char* names[] = {"rk_merson", "dormand_prince", "cvode_bdf", "rk4"};
  for (int k = 0; k < 4; k++) {
    mbs_state* s2 = mbs_state_create(sys);
    mbs_simulation_options o;
    mbs_simulation_options_default(&o);
    EXPECT_TRUE(mbs_integrator_from_name(names[k]) >= 0);
    o.integrator = (mbs_integrator_type)mbs_integrator_from_name(names[k]);
    o.integ.accuracy = 1e-9;
    o.integ.fixed_step = 1e-3;
    o.report_interval = 0.1;
    mbs_simulation_result res;
    memset(&res, 0, sizeof(res));
    EXPECT_OK(mbs_simulate(sys, s2, 0.5, &o, NULL, 0, NULL, NULL, &res));
    double x, v, a;
    closed_form(0.5, &x, &v, &a);
    const double xs = mbs_state_q(s2)[0], vs = mbs_state_u(s2)[0], as = mbs_state_z(s2)[0];
    printf("%-15s x %.12f (%.12f)  v %.12f (%.12f)  a %.12f (%.12f)\n", names[k], xs, x, vs, v,
           as, a);
    EXPECT_NEAR(xs, x, 1e-7);
    EXPECT_NEAR(vs, v, 1e-7);
    EXPECT_NEAR(as, a, 1e-7);
    // a copied State carries z
    mbs_state* s3 = mbs_state_create(sys);
    mbs_state_copy(sys, s3, s2);
    EXPECT_NEAR(mbs_state_z(s3)[0], as, 0);
    mbs_state_destroy(s3);
    mbs_state_destroy(s2);
  }
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
}

// the element in an OpenSim document: defaults, parameters, the control from a controller
static void test_osim(void) {
  const char* doc =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
      "<OpenSimDocument Version=\"40000\"><Model name=\"aca\">\n"
      "<gravity>0 0 0</gravity>\n"
      "<BodySet><objects><Body name=\"block\"><mass>2</mass><mass_center>0 0 0</mass_center>"
      "<inertia>0.1 0.1 0.1 0 0 0</inertia></Body></objects></BodySet>\n"
      "<JointSet><objects><SliderJoint name=\"slide\"><socket_parent_frame>/ground"
      "</socket_parent_frame><socket_child_frame>/bodyset/block</socket_child_frame>"
      "<coordinates><Coordinate name=\"x\"/></coordinates></SliderJoint></objects></JointSet>\n"
      "<ForceSet><objects><ActivationCoordinateActuator name=\"push\"><coordinate>x</coordinate>"
      "<optimal_force>10</optimal_force></ActivationCoordinateActuator></objects></ForceSet>\n"
      "</Model></OpenSimDocument>\n";
  mbs_error err;
  mbs_osim_model* om = mbs_osim_parse(doc, strlen(doc), "aca.osim", NULL, &err);
  EXPECT_TRUE(om != NULL);
  if (!om) {
    printf("%s\n", err.message);
    return;
  }
  const mbs_system* sys = mbs_osim_system(om);
  EXPECT_EQ_INT(mbs_system_nz(sys), 1);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_NEAR(mbs_state_z(st)[0], 0.5, 0);  // OpenSim's default activation
  const mbs_param_info* p = mbs_system_find_param(sys, "/forceset/push/activation_time_constant");
  EXPECT_TRUE(p != NULL && mbs_system_param_default(sys, p->index) == 0.01);
  EXPECT_TRUE(mbs_system_find_param(sys, "/forceset/push/optimal_force") != NULL);
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  EXPECT_NEAR(mbs_get_zdot(sys, st)[0], (0 - 0.5) / 0.01, 1e-12);  // excitation 0
  mbs_state_destroy(st);
  mbs_osim_free(om);
}

int main(void) {
  test_closed_form();
  test_osim();
  return mbs_test_finish("test_aux_states");
}
