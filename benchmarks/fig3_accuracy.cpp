// mbs_fig3_accuracy: CPU time and error against the accuracy setting alpha, mbstudy side by side
// with Simbody: the experiment of Fig. 3 of the Simbody paper (Sherman, Seth and Delp 2011).
//
//   --run         the full experiment: 11 chains of 20 pin-jointed bodies hanging from a base
//                 that slides along Ground's x axis with prescribed motion x(t) = A sin(w t),
//                 gravity, light mobility damping, small random initial speeds; 20 s with
//                 Runge-Kutta-Merson at alpha = 1e-2 ... 1e-7 in both engines; each engine's
//                 error at t = 20 s is measured against its own run at alpha = 1e-10
//   --quick       a reduced check for CI (2 chains of 5 bodies, 1 s): the final pin coordinates
//                 of the two engines agree to 1e-5 at alpha = 1e-6 and both converge; exit code 1
//                 if not
//   --repeats N   CPU-time repeats per run in --run (median; default 3)
//
// One description (struct Model) is turned into an mbstudy System and a Simbody System:
// - base: mbstudy MBS_MOB_SLIDER with an MBS_FUNC_SINE function and an MBS_CON_PRESCRIBED_MOTION
//   constraint on its coordinate; Simbody MobilizedBody::Slider with a Motion::Sinusoid at the
//   Position level. Both slide along the common x axis of F and M (= Ground x).
// - chains: pins (rotation about the common z axis of F and M) whose F frames have random
//   body-fixed X-Y-Z angles, so the axes point in random directions. The offsets are chosen so
//   that at q = 0 every joint and every center of mass of a chain lies on one vertical line
//   below the chain's attachment point: q = 0 is then a stable equilibrium of the chain (the
//   lowest position of every point), and the motion stays small and regular (the paper: "speeds
//   low enough to avoid chaotic motion so that all simulations approximated identical
//   trajectories"). Each F offset is random in length, vertical in Ground at q = 0, which in
//   the parent's (randomly rotated) frame has all three components non-zero.
// - mass properties: random masses, centers of mass on that vertical line, principal moments
//   rotated by random rotations (central inertia R diag(d) R^T); mbstudy gets the central
//   inertia, Simbody the inertia about the body origin.
// - gravity (0, -9.81, 0); a linear mobility damper f = -c u on every pin.
// - the initial state: q = 0, random pin speeds, base speed A w; mbstudy assembles it
//   (mbs_assemble) and Simbody's integrator prescribes it; both are checked to be the same.
//
// The accelerations of the two models are compared at a random state before anything is timed,
// so a difference between the systems shows up at once, not as a slow drift of the trajectory.
//
// Defaults: A = 0.005 m, w = 2 pi rad/s (1 Hz), base 5 kg, links 0.05..0.15 m, bodies 0.5..1.5
// kg, c = 0.01 N m s/rad, |u0| <= 0.1 rad/s, seed 2011 (all printed in the header). With a larger
// base motion the chains' light tips are driven hard: at A = 0.05 m the tips spin at up to
// ~40 rad/s, a 1e-7 rad/s change of the initial speeds moves q(20 s) by ~6e-2 rad, and the
// errors of the two engines (and their reference runs) no longer fall with alpha. --run prints
// that sensitivity for the chosen model so a chaotic choice is visible.
//
// Reading the exponents: Merson's embedded error estimate is of order 5 (not 4) on linear
// constant-coefficient problems, so on nearly linear motion like this one the step count goes
// as alpha^-1/5 and the global error as alpha^4/5 rather than alpha^-1/4 and alpha^1; at loose
// accuracies the steps are limited by stability, not accuracy, and hardly change with alpha.
#if defined(NDEBUG) && !defined(MBS_SIMBODY_RELEASE)
#error "Debian's Simbody is built without NDEBUG: compile this program without -DNDEBUG"
#endif

#include <Simbody.h>

#include <algorithm>
#include <cstdarg>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_math.hpp"
#include "compare_engines_config.h"
#include "mbs/mbs.h"

namespace {

using namespace mbs_bench;

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
double wall_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// least-squares slope of y on x
double fit_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= (double)n;
  my /= (double)n;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : NAN;
}

//---------------------------------- the model both engines share -------------------------------

enum JointType { kSlider = 0, kPin = 1 };

struct BodyDef {
  int parent = 0;  // 0 = Ground
  int type = kPin;
  double angles[3] = {0, 0, 0};  // F on the parent: body-fixed X-Y-Z angles
  double p_PF[3] = {0, 0, 0};    // F's origin in the parent
  double mass = 1;
  double com[3] = {0, 0, 0};     // in B (= M)
  double d[3] = {1, 1, 1};       // principal central moments
  double I6[6];                  // central inertia in B: xx yy zz xy xz yz
  double u0 = 0;                 // initial speed
};

struct Params {
  int nchain = 11, nlink = 20;
  double t_final = 20;
  double A = 0.005, w = 2 * kPi;        // base motion x(t) = A sin(w t)
  double base_mass = 5;                 // kg
  double base_moment = 0.1;             // kg m^2 (about each axis; the base only translates)
  double link_lo = 0.05, link_hi = 0.15;  // joint-to-joint distance, m
  double mass_lo = 0.5, mass_hi = 1.5;    // kg
  double gyr_lo = 0.002, gyr_hi = 0.005;  // principal moments / mass, m^2 (times 1..1.9)
  double damping = 0.01;                // N m s/rad on every pin
  double u_max = 0.1;                   // initial pin speeds in [-u_max, u_max] rad/s
  double g = 9.81;                      // gravity (0, -g, 0)
  uint64_t seed = 2011;
};

struct Model {
  Params p;
  std::vector<BodyDef> b;  // b[0] Ground (unused), b[1] the base, then chain after chain
  int n = 0;               // bodies besides Ground
  std::vector<int> pins;   // the pin bodies, in order
};

void set_inertia(Rng& rng, BodyDef& bd, double s) {
  for (int k = 0; k < 3; k++) bd.d[k] = s * rng.uniform(1.0, 1.9);  // max < sum of the others
  double qI[4], R[9], I[9];
  rng.unit_quat(qI);
  quat_to_rot(R, qI);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double v = 0;
      for (int k = 0; k < 3; k++) v += R[3 * i + k] * bd.d[k] * R[3 * j + k];
      I[3 * i + j] = v;
    }
  bd.I6[0] = I[0];
  bd.I6[1] = I[4];
  bd.I6[2] = I[8];
  bd.I6[3] = 0.5 * (I[1] + I[3]);
  bd.I6[4] = 0.5 * (I[2] + I[6]);
  bd.I6[5] = 0.5 * (I[5] + I[7]);
}

Model make_model(const Params& p) {
  Model m;
  m.p = p;
  Rng rng(p.seed);
  m.b.resize(1 + 1 + p.nchain * p.nlink);
  BodyDef& base = m.b[1];
  base.parent = 0;
  base.type = kSlider;
  base.mass = p.base_mass;
  for (int k = 0; k < 3; k++) base.d[k] = p.base_moment;
  for (int k = 0; k < 6; k++) base.I6[k] = k < 3 ? p.base_moment : 0;
  base.u0 = p.A * p.w;  // d/dt A sin(w t) at t = 0
  int id = 2;
  for (int c = 0; c < p.nchain; c++) {
    // R_GP: orientation in Ground of the parent at q = 0; the base does not rotate
    double R_GP[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double link_above = 0;  // distance from the parent's origin to this joint
    for (int l = 0; l < p.nlink; l++, id++) {
      BodyDef& bd = m.b[id];
      bd.parent = l == 0 ? 1 : id - 1;
      bd.type = kPin;
      for (int k = 0; k < 3; k++) bd.angles[k] = rng.uniform(-kPi, kPi);
      double R_PF[9], R_GB[9];
      rot_body_xyz(R_PF, bd.angles);
      mat_mul(R_GB, R_GP, R_PF);  // at q = 0, M = F and B = M
      if (l == 0) {
        // the attachment points on the base: spread along z, a small random offset
        bd.p_PF[0] = rng.uniform(-0.05, 0.05);
        bd.p_PF[1] = rng.uniform(-0.05, 0.05);
        bd.p_PF[2] = 0.15 * (c - 0.5 * (p.nchain - 1)) + rng.uniform(-0.02, 0.02);
      } else {
        // the joint straight below the parent's origin (in Ground, at q = 0)
        const double down[3] = {0, -link_above, 0};
        mat_tvec(bd.p_PF, R_GP, down);
      }
      const double link = rng.uniform(p.link_lo, p.link_hi);  // to the next joint
      const double c_dist = link * rng.uniform(0.3, 0.7);     // to the center of mass
      const double down_c[3] = {0, -c_dist, 0};
      mat_tvec(bd.com, R_GB, down_c);
      bd.mass = rng.uniform(p.mass_lo, p.mass_hi);
      set_inertia(rng, bd, bd.mass * rng.uniform(p.gyr_lo, p.gyr_hi));
      bd.u0 = rng.uniform(-p.u_max, p.u_max);
      std::memcpy(R_GP, R_GB, sizeof R_GP);
      link_above = link;
      m.pins.push_back(id);
    }
  }
  m.n = (int)m.b.size() - 1;
  return m;
}

// a state of the model in body order: one q and one u per body (slider and pins alike)
struct StateDef {
  double t = 0;
  std::vector<double> q, u;
};

//---------------------------------- mbstudy ----------------------------------------------------

struct RunResult {
  bool ok = false;
  std::string err;
  double t_end = 0;
  double cpu = 0;
  long steps = 0, attempts = 0, evals = 0, projections = 0;
  std::vector<double> q_pins;  // final pin coordinates, in Model::pins order
  double q_base = 0, u_base = 0;
};

struct MbsEngine {
  mbs_system* sys = nullptr;
  mbs_state* st = nullptr;
  std::vector<double> init;  // variable block of the initial state
  std::vector<int> qadr, uadr;
  int nq = 0, nu = 0;
  MbsEngine() = default;
  MbsEngine(const MbsEngine&) = delete;
  MbsEngine& operator=(const MbsEngine&) = delete;
  ~MbsEngine() {
    if (st) mbs_state_destroy(st);
    if (sys) mbs_system_destroy(sys);
  }
  bool fail(std::string& err, const char* what) {
    err = strf("mbstudy %s: %s", what, mbs_system_error(sys)->message);
    return false;
  }
  bool build(const Model& m, std::string& err) {
    sys = mbs_system_create("fig3");
    if (!sys) return err = "mbs_system_create failed", false;
    std::vector<std::string> names(m.n + 1);
    for (int i = 1; i <= m.n; i++) {
      const BodyDef& bd = m.b[i];
      names[i] = i == 1 ? std::string("base") : "b" + std::to_string(i);
      mbs_body_spec s = mbs_body_spec_default(names[i].c_str(), bd.parent,
                                              bd.type == kSlider ? MBS_MOB_SLIDER : MBS_MOB_PIN);
      for (int k = 0; k < 3; k++) {
        s.X_PF.angles[k] = bd.angles[k];
        s.X_PF.p[k] = bd.p_PF[k];
        s.com[k] = bd.com[k];
      }
      s.mass = bd.mass;
      for (int k = 0; k < 6; k++) s.inertia[k] = bd.I6[k];
      const int got = mbs_system_add_body(sys, &s);
      if (got != i) return fail(err, strf("add body %d", i).c_str());
    }
    // the base's prescribed motion x(t) = A sin(w t + 0) + 0
    const double coefs[4] = {m.p.A, m.p.w, 0, 0};
    mbs_function_spec fs{};
    fs.type = MBS_FUNC_SINE;
    fs.name = "base_motion";
    fs.n = 4;
    fs.coefs = coefs;
    const int fid = mbs_system_add_function(sys, &fs);
    if (fid < 0) return fail(err, "add function");
    mbs_constraint_spec cs = mbs_constraint_spec_default(MBS_CON_PRESCRIBED_MOTION, "base_motion");
    cs.coordinate.body = 1;
    cs.coordinate.axis = 0;
    cs.function = fid;
    if (mbs_system_add_constraint(sys, &cs) < 0) return fail(err, "add constraint");
    const double g[3] = {0, -m.p.g, 0};
    if (mbs_system_add_gravity(sys, g) < 0) return fail(err, "add gravity");
    for (int i : m.pins)
      if (mbs_system_add_mobility_damper(sys, i, 0, m.p.damping) < 0)
        return fail(err, "add damper");
    if (mbs_system_finalize(sys) != MBS_OK) return fail(err, "finalize");
    st = mbs_state_create(sys);
    if (!st) return err = "mbs_state_create failed", false;
    nq = mbs_system_nq(sys);
    nu = mbs_system_nu(sys);
    if (nq != m.n || nu != m.n) return err = strf("mbstudy: nq %d nu %d, expected %d", nq, nu, m.n), false;
    qadr.assign(m.n + 1, 0);
    uadr.assign(m.n + 1, 0);
    for (int i = 1; i <= m.n; i++) {
      qadr[i] = mbs_body_qadr(sys, i);
      uadr[i] = mbs_body_uadr(sys, i);
    }
    // the initial state: q = 0, the chosen speeds, then assembly (it must not need to move)
    mbs_state_set_time(st, 0);
    double* q = mbs_state_upd_q(st);
    double* u = mbs_state_upd_u(st);
    for (int i = 1; i <= m.n; i++) {
      q[qadr[i]] = 0;
      u[uadr[i]] = m.b[i].u0;
    }
    mbs_assembly_options ao;
    mbs_assembly_options_default(&ao);
    if (mbs_assemble(sys, st, &ao) != MBS_OK)
      return err = strf("mbstudy assembly: %s", mbs_state_error(st)->message), false;
    size_t n = 0;
    const double* v = mbs_state_vars(st, &n);
    init.assign(v, v + n);
    return true;
  }
  void get(const Model& m, StateDef& s) const {
    s.t = mbs_state_time(st);
    s.q.assign(m.n + 1, 0);
    s.u.assign(m.n + 1, 0);
    for (int i = 1; i <= m.n; i++) {
      s.q[i] = mbs_state_q(st)[qadr[i]];
      s.u[i] = mbs_state_u(st)[uadr[i]];
    }
  }
  // generalized accelerations at a given state (body order)
  bool accel(const Model& m, const StateDef& s, std::vector<double>& udot, std::string& err) {
    mbs_state_set_time(st, s.t);
    double* q = mbs_state_upd_q(st);
    double* u = mbs_state_upd_u(st);
    for (int i = 1; i <= m.n; i++) {
      q[qadr[i]] = s.q[i];
      u[uadr[i]] = s.u[i];
    }
    if (mbs_realize_acceleration(sys, st) != MBS_OK)
      return err = strf("mbstudy: %s", mbs_state_error(st)->message), false;
    const double* ud = mbs_get_udot(sys, st);
    udot.assign(m.n + 1, 0);
    for (int i = 1; i <= m.n; i++) udot[i] = ud[uadr[i]];
    return true;
  }
  RunResult run(const Model& m, double alpha) {
    RunResult r;
    if (mbs_state_set_vars(sys, st, init.data(), init.size()) != MBS_OK) {
      r.err = "mbs_state_set_vars failed";
      return r;
    }
    mbs_simulation_options opt;
    mbs_simulation_options_default(&opt);
    opt.integrator = MBS_INTEG_RK_MERSON;
    opt.integ.accuracy = alpha;
    opt.report_interval = 0;
    mbs_simulation_result res;
    std::memset(&res, 0, sizeof res);
    const double c0 = cpu_seconds();
    const int rc = mbs_simulate(sys, st, m.p.t_final, &opt, nullptr, 0, nullptr, nullptr, &res);
    r.cpu = cpu_seconds() - c0;
    r.t_end = mbs_state_time(st);
    r.steps = res.integrator.steps;
    r.attempts = res.integrator.attempts;
    r.evals = res.integrator.evaluations;
    r.projections = res.integrator.projections;
    if (rc != MBS_OK) {
      r.err = strf("mbs_simulate: %s: %s", mbs_status_name(rc), mbs_state_error(st)->message);
      return r;
    }
    for (int i : m.pins) r.q_pins.push_back(mbs_state_q(st)[qadr[i]]);
    r.q_base = mbs_state_q(st)[qadr[1]];
    r.u_base = mbs_state_u(st)[uadr[1]];
    r.ok = r.t_end == m.p.t_final;
    if (!r.ok) r.err = strf("mbstudy stopped at t = %.17g", r.t_end);
    return r;
  }
};

//---------------------------------- Simbody ----------------------------------------------------

struct SbEngine {
  SimTK::MultibodySystem sys;
  SimTK::SimbodyMatterSubsystem matter;
  SimTK::GeneralForceSubsystem forces;
  SimTK::State init;  // the initial state
  std::vector<SimTK::MobilizedBody> mobod;
  std::vector<int> qadr, uadr;
  SbEngine() : matter(sys), forces(sys) {}

  bool build(const Model& m, std::string& err) {
    using namespace SimTK;
    Force::Gravity gravity(forces, matter, Vec3(0, -m.p.g, 0));
    (void)gravity;
    mobod.clear();
    mobod.push_back(matter.updGround());
    for (int i = 1; i <= m.n; i++) {
      const BodyDef& bd = m.b[i];
      const Vec3 com(bd.com[0], bd.com[1], bd.com[2]);
      const Inertia I_C(bd.I6[0], bd.I6[1], bd.I6[2], bd.I6[3], bd.I6[4], bd.I6[5]);
      // MassProperties wants the inertia about the body origin
      const Body::Rigid body(MassProperties(bd.mass, com, I_C.shiftFromMassCenter(-com, bd.mass)));
      const Transform X_PF(Rotation(BodyRotationSequence, bd.angles[0], XAxis, bd.angles[1],
                                    YAxis, bd.angles[2], ZAxis),
                           Vec3(bd.p_PF[0], bd.p_PF[1], bd.p_PF[2]));
      MobilizedBody& parent = mobod[bd.parent];
      if (bd.type == kSlider) {
        MobilizedBody::Slider slider(parent, X_PF, body, Transform());
        Motion::Sinusoid(slider, Motion::Position, m.p.A, m.p.w, 0);
        mobod.push_back(slider);
      } else {
        MobilizedBody::Pin pin(parent, X_PF, body, Transform());
        Force::MobilityLinearDamper(forces, pin, MobilizerUIndex(0), m.p.damping);
        mobod.push_back(pin);
      }
    }
    sys.realizeTopology();
    init = sys.getDefaultState();
    sys.realizeModel(init);
    if (init.getNQ() != m.n || init.getNU() != m.n)
      return err = strf("Simbody: nq %d nu %d, expected %d", init.getNQ(), init.getNU(), m.n),
             false;
    qadr.assign(m.n + 1, 0);
    uadr.assign(m.n + 1, 0);
    for (int i = 1; i <= m.n; i++) {
      qadr[i] = mobod[i].getFirstQIndex(init);
      uadr[i] = mobod[i].getFirstUIndex(init);
    }
    init.setTime(0);
    for (int i = 1; i <= m.n; i++) {
      init.updQ()[qadr[i]] = 0;
      init.updU()[uadr[i]] = m.b[i].u0;
    }
    // prescribed q and u (q = A sin 0 = 0 and u = A w, already so) and the constraint
    // projection, as the integrator does when it starts
    sys.realize(init, Stage::Time);
    sys.prescribeQ(init);
    sys.realize(init, Stage::Position);
    sys.prescribeU(init);
    sys.realize(init, Stage::Velocity);
    return true;
  }
  void get(const Model& m, const SimTK::State& s, StateDef& d) const {
    d.t = s.getTime();
    d.q.assign(m.n + 1, 0);
    d.u.assign(m.n + 1, 0);
    for (int i = 1; i <= m.n; i++) {
      d.q[i] = s.getQ()[qadr[i]];
      d.u[i] = s.getU()[uadr[i]];
    }
  }
  bool accel(const Model& m, const StateDef& s, std::vector<double>& udot, std::string&) {
    SimTK::State st = init;
    st.setTime(s.t);
    for (int i = 1; i <= m.n; i++) {
      st.updQ()[qadr[i]] = s.q[i];
      st.updU()[uadr[i]] = s.u[i];
    }
    sys.realize(st, SimTK::Stage::Acceleration);
    udot.assign(m.n + 1, 0);
    for (int i = 1; i <= m.n; i++) udot[i] = st.getUDot()[uadr[i]];
    return true;
  }
  RunResult run(const Model& m, double alpha) {
    using namespace SimTK;
    RunResult r;
    try {
      const double c0 = cpu_seconds();
      RungeKuttaMersonIntegrator integ(sys);
      integ.setAccuracy(alpha);
      integ.setFinalTime(m.p.t_final);  // land on t_final exactly, no interpolated end state
      TimeStepper ts(sys, integ);
      ts.initialize(init);
      ts.stepTo(m.p.t_final);
      r.cpu = cpu_seconds() - c0;
      const State& s = integ.getState();
      r.t_end = s.getTime();
      r.steps = integ.getNumStepsTaken();
      r.attempts = integ.getNumStepsAttempted();
      r.evals = integ.getNumRealizations();
      r.projections = integ.getNumProjections();
      for (int i : m.pins) r.q_pins.push_back(s.getQ()[qadr[i]]);
      r.q_base = s.getQ()[qadr[1]];
      r.u_base = s.getU()[uadr[1]];
      r.ok = r.t_end == m.p.t_final;
      if (!r.ok) r.err = strf("Simbody stopped at t = %.17g", r.t_end);
    } catch (const std::exception& e) {
      r.err = std::string("Simbody: ") + e.what();
    }
    return r;
  }
};

//---------------------------------- checks -----------------------------------------------------

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); i++) d = std::max(d, std::fabs(a[i] - b[i]));
  if (a.size() != b.size()) d = INFINITY;
  return d;
}

struct Setup {
  Model m;
  MbsEngine mbs;
  SbEngine sb;
  bool ok = false;
};

// Build both engines and check that they hold the same model and the same initial state:
// the initial states must match, and the accelerations must agree at the initial state and at
// a random state (random angles up to pi, speeds up to 3 rad/s, a time where the base is
// accelerating). Prints one line per check.
bool build_and_check(Setup& s, double tol_udot) {
  std::string err;
  if (!s.mbs.build(s.m, err) || !s.sb.build(s.m, err)) {
    std::printf("FAILED to build: %s\n", err.c_str());
    return false;
  }
  StateDef a, b;
  s.mbs.get(s.m, a);
  s.sb.get(s.m, s.sb.init, b);
  const double dq = max_diff(a.q, b.q), du = max_diff(a.u, b.u);
  std::vector<double> ua, ub;
  if (!s.mbs.accel(s.m, a, ua, err) || !s.sb.accel(s.m, a, ub, err)) {
    std::printf("FAILED: %s\n", err.c_str());
    return false;
  }
  const double d0 = max_diff(ua, ub);
  // a random state at t = 0.3 s (the base prescribed: q = A sin w t, u = A w cos w t)
  Rng rng(s.m.p.seed + 99);
  StateDef r;
  r.t = 0.3;
  r.q.assign(s.m.n + 1, 0);
  r.u.assign(s.m.n + 1, 0);
  r.q[1] = s.m.p.A * std::sin(s.m.p.w * r.t);
  r.u[1] = s.m.p.A * s.m.p.w * std::cos(s.m.p.w * r.t);
  for (int i : s.m.pins) {
    r.q[i] = rng.uniform(-kPi, kPi);
    r.u[i] = rng.uniform(-3, 3);
  }
  std::vector<double> ra, rb;
  if (!s.mbs.accel(s.m, r, ra, err) || !s.sb.accel(s.m, r, rb, err)) {
    std::printf("FAILED: %s\n", err.c_str());
    return false;
  }
  double d1 = 0, amax = 0;
  for (size_t i = 1; i < ra.size(); i++) {
    d1 = std::max(d1, std::fabs(ra[i] - rb[i]) / std::max(1.0, std::fabs(rb[i])));
    amax = std::max(amax, std::fabs(rb[i]));
  }
  const double base_want = -s.m.p.A * s.m.p.w * s.m.p.w * std::sin(s.m.p.w * r.t);
  const double dbase = std::max(std::fabs(ra[1] - base_want), std::fabs(rb[1] - base_want));
  const bool ok = dq == 0 && du <= 1e-15 && d0 <= tol_udot && d1 <= tol_udot && dbase <= 1e-12;
  std::printf("# model check: initial states differ by %.1e in q, %.1e in u; udot differs by "
              "%.1e at the initial state and by %.1e (relative, |udot| up to %.3g) at a random "
              "state at t = 0.3 s; prescribed base udot off by %.1e%s\n",
              dq, du, d0, d1, amax, dbase, ok ? "" : "  FAIL");
  s.ok = ok;
  return ok;
}

//---------------------------------- output -----------------------------------------------------

std::string cpu_model() {
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  std::string r = "unknown CPU";
  if (!f) return r;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "model name", 10) == 0) {
      const char* p = std::strchr(line, ':');
      if (p) {
        r = p + 1;
        while (!r.empty() && (r.back() == '\n' || r.back() == ' ')) r.pop_back();
        while (!r.empty() && r.front() == ' ') r.erase(r.begin());
      }
      break;
    }
  }
  std::fclose(f);
  return r;
}

void print_params(const Params& p) {
  std::printf("# model: %d chains of %d bodies = %d pins + 1 prescribed slider base; %g s; "
              "seed %llu\n",
              p.nchain, p.nlink, p.nchain * p.nlink, p.t_final, (unsigned long long)p.seed);
  std::printf("# base: slider along Ground x, x(t) = %g sin(%.6g t) m (%.3g Hz), mass %g kg, "
              "moments %g kg m^2; mbstudy MBS_FUNC_SINE + MBS_CON_PRESCRIBED_MOTION, Simbody "
              "Motion::Sinusoid (Position level)\n",
              p.A, p.w, p.w / (2 * kPi), p.base_mass, p.base_moment);
  std::printf("# pins: F frames with uniform random body-fixed X-Y-Z angles in [-pi, pi]; joint "
              "spacing %g..%g m, vertical at q = 0 (each chain hangs straight down at q = 0: a "
              "stable equilibrium); first joints on the base spread 0.15 m apart along z\n",
              p.link_lo, p.link_hi);
  std::printf("# bodies: mass %g..%g kg, center of mass 0.3..0.7 of the way to the next joint, "
              "principal moments mass x %g..%g m^2 x 1..1.9 rotated by a random rotation\n",
              p.mass_lo, p.mass_hi, p.gyr_lo, p.gyr_hi);
  std::printf("# forces: gravity (0, %g, 0) m/s^2; linear mobility damper c = %g N m s/rad on "
              "every pin; initial pin speeds uniform in [%g, %g] rad/s, q = 0, base u = A w\n",
              -p.g, p.damping, -p.u_max, p.u_max);
}

void print_header(const char* mode, int repeats) {
  char date[64];
  const time_t tt = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tt));
  std::printf("# mbs_fig3_accuracy %s: CPU time and error vs accuracy alpha, Runge-Kutta-Merson "
              "in both engines (Simbody paper Fig. 3)\n", mode);
  std::printf("# machine: %s (%ld online CPUs), date: %s\n", cpu_model().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), date);
  std::printf("# mbstudy %s (%s build) C flags: %s\n", MBS_VERSION_STRING, MBS_CMP_BUILD_TYPE,
              MBS_CMP_C_INFO);
  std::printf("# this program (Simbody client code) C++ flags: %s\n", MBS_CMP_CXX_INFO);
  std::printf("# Simbody %s: prebuilt Debian library (its own flags)\n", MBS_CMP_SIMBODY_VERSION);
  const char* ob = std::getenv("OPENBLAS_NUM_THREADS");
  std::printf("# OPENBLAS_NUM_THREADS=%s\n", ob ? ob : "(unset)");
  if (repeats > 0)
    std::printf("# CPU time: clock_gettime(CLOCK_PROCESS_CPUTIME_ID) around integrator creation, "
                "initialization and the run to the final time; median of %d repeats\n", repeats);
  std::printf("# mbstudy: mbs_simulate, MBS_INTEG_RK_MERSON, opt.integ.accuracy = alpha, other "
              "options default, report_interval 0; steps = accepted steps\n");
  std::printf("# Simbody: RungeKuttaMersonIntegrator, setAccuracy(alpha), setFinalTime(t_final), "
              "other options default, TimeStepper::stepTo(t_final); steps = getNumStepsTaken()\n");
}

//---------------------------------- --quick ----------------------------------------------------

int run_quick(Params p) {
  p.nchain = 2;
  p.nlink = 5;
  p.t_final = 1;
  Setup s;
  s.m = make_model(p);
  print_header("--quick", 0);
  print_params(p);
  const double tol = 1e-5;
  bool ok = build_and_check(s, 1e-9);
  if (!ok) {
    std::printf("FAIL: the two models differ\n");
    return 1;
  }
  const double alphas[3] = {1e-4, 1e-6, 1e-9};
  RunResult rm[3], rs[3];
  for (int k = 0; k < 3; k++) {
    rm[k] = s.mbs.run(s.m, alphas[k]);
    rs[k] = s.sb.run(s.m, alphas[k]);
    for (const RunResult* r : {&rm[k], &rs[k]})
      if (!r->ok) {
        std::printf("FAIL at alpha %g: %s\n", alphas[k], r->err.c_str());
        ok = false;
      }
  }
  if (!ok) return 1;
  std::printf("\n| alpha | mbstudy steps | Simbody steps | mbstudy error | Simbody error | "
              "mbstudy - Simbody |\n|---:|---:|---:|---:|---:|---:|\n");
  double em[3], es[3];
  for (int k = 0; k < 3; k++) {
    em[k] = max_diff(rm[k].q_pins, rm[2].q_pins);
    es[k] = max_diff(rs[k].q_pins, rs[2].q_pins);
    std::printf("| %.0e | %ld | %ld | %.2e | %.2e | %.2e |\n", alphas[k], rm[k].steps,
                rs[k].steps, em[k], es[k], max_diff(rm[k].q_pins, rs[k].q_pins));
  }
  std::printf("(error: largest |q - q_ref| over the pins at t = %g s, q_ref = the same engine at "
              "alpha 1e-9)\n\n", p.t_final);
  const double d6 = max_diff(rm[1].q_pins, rs[1].q_pins);
  const double dref = max_diff(rm[2].q_pins, rs[2].q_pins);
  const double x_end = p.A * std::sin(p.w * p.t_final);
  const double base_m = std::fabs(rm[1].q_base - x_end), base_s = std::fabs(rs[1].q_base - x_end);
  const double base_err = std::max(base_m, base_s);
  std::printf("prescribed base |x(t_final) - A sin(w t_final)| at alpha 1e-6: mbstudy %.2e, "
              "Simbody %.2e\n", base_m, base_s);
  struct Crit {
    const char* what;
    double value, limit;
  };
  const Crit crit[] = {
      {"mbstudy vs Simbody final pin q at alpha 1e-6", d6, tol},
      {"mbstudy vs Simbody final pin q at alpha 1e-9", dref, 1e-7},
      {"mbstudy error at alpha 1e-6", em[1], tol},
      {"Simbody error at alpha 1e-6", es[1], tol},
      {"mbstudy error 1e-6 / error 1e-4", em[1] / std::max(em[0], 1e-300), 0.5},
      {"Simbody error 1e-6 / error 1e-4", es[1] / std::max(es[0], 1e-300), 0.5},
      {"prescribed base x(t_final) at alpha 1e-6", base_err, 1e-6},
  };
  for (const Crit& c : crit) {
    const bool pass = c.value <= c.limit;
    std::printf("%-46s %.2e (limit %.0e)%s\n", c.what, c.value, c.limit, pass ? "" : "  FAIL");
    ok = ok && pass;
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

//---------------------------------- --run ------------------------------------------------------

int run_full(const Params& p, int repeats) {
  const double wall0 = wall_seconds();
  Setup s;
  s.m = make_model(p);
  print_header("--run", repeats);
  print_params(p);
  std::fflush(stdout);
  if (!build_and_check(s, 1e-9)) {
    std::printf("FAIL: the two models differ\n");
    return 1;
  }
  const double ref_alpha = 1e-10;
  const std::vector<double> alphas = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7};
  // references first (timed once)
  std::fprintf(stderr, "reference runs at alpha %g ...\n", ref_alpha);
  const RunResult ref_m = s.mbs.run(s.m, ref_alpha);
  const RunResult ref_s = s.sb.run(s.m, ref_alpha);
  for (const RunResult* r : {&ref_m, &ref_s})
    if (!r->ok) {
      std::printf("FAIL: reference run: %s\n", r->err.c_str());
      return 1;
    }
  std::fprintf(stderr, "  mbstudy %ld steps %.2f s, Simbody %ld steps %.2f s\n", ref_m.steps,
               ref_m.cpu, ref_s.steps, ref_s.cpu);
  // Is the motion regular? Perturb every initial pin speed by 1e-7 rad/s and see how much the
  // final pin coordinates move (mbstudy at alpha 1e-9): a factor of order 1 to 100 means
  // errors made along the way are carried to t_final about linearly, so that the final error
  // can fall tenfold per decade of alpha; a chaotic motion amplifies them by many decades.
  double amplification = NAN;
  {
    const double du = 1e-7;
    Model m2 = s.m;
    for (int i : m2.pins) m2.b[i].u0 += du;
    MbsEngine e2;
    std::string err;
    if (e2.build(m2, err)) {
      const RunResult a = s.mbs.run(s.m, 1e-9), b = e2.run(m2, 1e-9);
      if (a.ok && b.ok) amplification = max_diff(a.q_pins, b.q_pins) / du;
    }
  }
  struct Row {
    double alpha;
    RunResult m, s;
    double cpu_m, cpu_s, err_m, err_s;
    bool det;  // repeats gave bit-identical results
  };
  std::vector<Row> rows;
  bool all_ok = true;
  for (double a : alphas) {
    Row row;
    row.alpha = a;
    row.det = true;
    std::vector<double> cm, cs;
    for (int r = 0; r < repeats; r++) {
      RunResult x = s.mbs.run(s.m, a);
      RunResult y = s.sb.run(s.m, a);
      if (!x.ok || !y.ok) {
        std::printf("FAIL at alpha %g: %s\n", a, (!x.ok ? x.err : y.err).c_str());
        all_ok = false;
      }
      cm.push_back(x.cpu);
      cs.push_back(y.cpu);
      if (r == 0) {
        row.m = x;
        row.s = y;
      } else if (x.q_pins != row.m.q_pins || y.q_pins != row.s.q_pins) {
        row.det = false;
      }
    }
    row.cpu_m = median(cm);
    row.cpu_s = median(cs);
    row.err_m = max_diff(row.m.q_pins, ref_m.q_pins);
    row.err_s = max_diff(row.s.q_pins, ref_s.q_pins);
    std::fprintf(stderr, "alpha %.0e: mbstudy %ld steps %.3f s, Simbody %ld steps %.3f s\n", a,
                 row.m.steps, row.cpu_m, row.s.steps, row.cpu_s);
    rows.push_back(row);
  }
  if (!all_ok) return 1;

  std::printf("\n| alpha | mbstudy steps | mbstudy CPU s | Simbody steps | Simbody CPU s | "
              "CPU ratio mbstudy/Simbody | mbstudy error | Simbody error |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows)
    std::printf("| %.0e | %ld | %.4f | %ld | %.4f | %.3f | %.2e | %.2e |\n", r.alpha, r.m.steps,
                r.cpu_m, r.s.steps, r.cpu_s, r.cpu_m / r.cpu_s, r.err_m, r.err_s);
  std::printf("| %.0e (ref) | %ld | %.4f | %ld | %.4f | %.3f | - | - |\n", ref_alpha, ref_m.steps,
              ref_m.cpu, ref_s.steps, ref_s.cpu, ref_m.cpu / ref_s.cpu);
  std::printf("\nerror: largest |q_i(%g) - q_ref_i(%g)| over the %zu pin coordinates, q_ref = the "
              "same engine at alpha = %.0e (reference CPU times: one run each)\n",
              p.t_final, p.t_final, s.m.pins.size(), ref_alpha);

  std::printf("\nDetails (first repeat): attempted steps, forward-dynamics evaluations "
              "(Simbody: realizations), projections\n\n");
  std::printf("| alpha | mbstudy attempts | mbstudy evaluations | mbstudy projections | Simbody "
              "attempts | Simbody realizations | Simbody projections | mbstudy - Simbody |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows)
    std::printf("| %.0e | %ld | %ld | %ld | %ld | %ld | %ld | %.2e |\n", r.alpha, r.m.attempts,
                r.m.evals, r.m.projections, r.s.attempts, r.s.evals, r.s.projections,
                max_diff(r.m.q_pins, r.s.q_pins));

  // fits: log10 CPU (and error) on log10 alpha
  auto fit = [&](bool cpu, bool mbs, double lo, double hi) {
    std::vector<double> x, y;
    for (const Row& r : rows) {
      if (r.alpha < lo * 0.999 || r.alpha > hi * 1.001) continue;
      const double v = cpu ? (mbs ? r.cpu_m : r.cpu_s) : (mbs ? r.err_m : r.err_s);
      if (!(v > 0)) continue;
      x.push_back(std::log10(r.alpha));
      y.push_back(std::log10(v));
    }
    return fit_slope(x, y);
  };
  auto fit_steps = [&](bool mbs, double hi) {  // over alpha = 1e-7 .. hi
    std::vector<double> x, y;
    for (const Row& r : rows) {
      if (r.alpha > hi * 1.001) continue;
      x.push_back(std::log10(r.alpha));
      y.push_back(std::log10((double)(mbs ? r.m.steps : r.s.steps)));
    }
    return fit_slope(x, y);
  };
  std::printf("\nFitted exponents (least squares of log10 value on log10 alpha; a 4th-order "
              "method should give CPU ~ alpha^-0.25, error ~ alpha^1):\n\n");
  std::printf("| engine | CPU, 1e-2..1e-7 | CPU, 1e-4..1e-7 | steps, 1e-2..1e-7 | steps, "
              "1e-4..1e-7 | error, 1e-2..1e-7 | error, 1e-4..1e-7 |\n"
              "|---|---:|---:|---:|---:|---:|---:|\n");
  for (int e = 0; e < 2; e++) {
    const bool mbs = e == 0;
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", mbs ? "mbstudy" : "Simbody",
                fit(true, mbs, 1e-7, 1e-2), fit(true, mbs, 1e-7, 1e-4), fit_steps(mbs, 1e-2),
                fit_steps(mbs, 1e-4), fit(false, mbs, 1e-7, 1e-2), fit(false, mbs, 1e-7, 1e-4));
  }
  const double dref = max_diff(ref_m.q_pins, ref_s.q_pins);
  std::printf("\nreference solutions (alpha %.0e): mbstudy - Simbody, largest |q_i(%g)| "
              "difference over the pins: %.2e; base x(%g): mbstudy %.17g, Simbody %.17g, "
              "exact %.17g\n",
              ref_alpha, p.t_final, dref, p.t_final, ref_m.q_base, ref_s.q_base,
              p.A * std::sin(p.w * p.t_final));
  double qmax = 0;
  for (double q : ref_m.q_pins) qmax = std::max(qmax, std::fabs(q));
  std::printf("largest |q_i(%g)| of the reference: %.3f rad\n", p.t_final, qmax);
  std::printf("sensitivity: initial pin speeds + 1e-7 rad/s move the final pin coordinates by up "
              "to %.3g x 1e-7 rad (mbstudy, alpha 1e-9; large values mean chaotic motion)\n",
              amplification);
  bool det = true;
  for (const Row& r : rows) det = det && r.det;
  std::printf("repeats gave bit-identical results: %s\n", det ? "yes" : "NO");
  const bool agree = dref <= 1e-6;
  if (!agree) std::printf("WARNING: the reference solutions of the two engines differ by more than 1e-6\n");
  std::printf("total wall time of this program: %.1f s\n", wall_seconds() - wall0);
  return agree ? 0 : 1;
}

void usage(const char* prog) {
  const Params p;
  std::printf("usage: %s --run [--repeats N] | --quick   [model options]\n"
              "  --run         the Fig. 3 experiment: 11 chains x 20 bodies, 20 s, alpha 1e-2..1e-7\n"
              "  --quick       a reduced agreement and convergence check (for CI)\n"
              "  --repeats N   CPU-time repeats per run (median; default 3)\n"
              "model options (defaults in brackets):\n"
              "  --amplitude A base motion amplitude, m [%g]\n"
              "  --omega W     base motion rate, rad/s [%g]\n"
              "  --damping C   pin damping, N m s/rad [%g]\n"
              "  --umax U      initial pin speeds in [-U, U], rad/s [%g]\n"
              "  --seed S      random model and speeds [%llu]\n",
              prog, p.A, p.w, p.damping, p.u_max, (unsigned long long)p.seed);
}

}  // namespace

int main(int argc, char** argv) {
  bool run = false, quick = false;
  int repeats = 3;
  Params p;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    double* param = a == "--amplitude" ? &p.A
                    : a == "--omega"   ? &p.w
                    : a == "--damping" ? &p.damping
                    : a == "--umax"    ? &p.u_max
                                       : nullptr;
    if (param && i + 1 < argc) {
      char* end = nullptr;
      *param = std::strtod(argv[++i], &end);
      if (!end || *end || !(*param >= 0)) {
        std::fprintf(stderr, "%s needs a non-negative number\n", a.c_str());
        return 2;
      }
    } else if (a == "--seed" && i + 1 < argc) {
      p.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--run") {
      run = true;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--repeats" && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
      if (repeats < 1) {
        std::fprintf(stderr, "--repeats needs a positive number\n");
        return 2;
      }
    } else if (a == "--help" || a == "-h") {
      usage(argv[0]);
      return 0;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      usage(argv[0]);
      return 2;
    }
  }
  if (!run && !quick) {
    usage(argv[0]);
    return 2;
  }
  int rc = 0;
  if (quick) rc |= run_quick(p);
  if (run) rc |= run_full(p, repeats);
  return rc;
}
