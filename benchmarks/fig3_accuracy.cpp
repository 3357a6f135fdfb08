// mbs_fig3_accuracy: CPU time and error against the accuracy setting alpha, mbstudy side by side
// with Simbody: the experiment of Fig. 3 of the Simbody paper (Sherman, Seth and Delp 2011).
//
//   --run          the full experiment in the caption's regime: 11 chains of 20 links of 0.25 m
//                  on randomly oriented revolute joints, hanging from a common base that slides
//                  along Ground's x axis with prescribed motion x(t) = A sin(w t) (5 cm at
//                  0.5 Hz), gravity, light mobility damping, random initial speeds up to
//                  0.7 rad/s on every pin; 20 s with Runge-Kutta-Merson at alpha = 1e-2 ... 1e-7
//                  in both engines. The error of every run at t = 20 s is measured against one
//                  common reference, the mean of both engines' runs at alpha = 1e-10 (--ref-alpha);
//                  how far those two reference runs are from each other is printed, and bounds
//                  the error the comparison can resolve.
//   --quick        a reduced check for CI (the same model builder with 2 chains of 5 links, 1 s):
//                  the final pin coordinates of the two engines agree to 1e-5 at alpha = 1e-6 and
//                  both converge; exit code 1 if not
//   --repeats N    CPU-time repeats per run in --run (N >= 1, default 3). The runs are
//                  interleaved: for each alpha, for r = 1..N: mbstudy, Simbody, mbstudy, Simbody
//                  ...; the median, min and max of each engine's CPU times are reported
//   --json FILE    also write every raw figure of --run (per alpha and engine: steps, attempts,
//                  evaluations, each repeat's CPU time, errors; the header facts: machine, date,
//                  build flags, Simbody build, model parameters) to FILE as JSON
//   --extra        also time mbstudy's Dormand-Prince 5(4) at each alpha (a third run in the
//                  interleaved loop), with its CPU time at Simbody RK-Merson's error
//   --ref-alpha R  the accuracy of the two reference runs (default 1e-10)
//
// One description (struct Model) is turned into an mbstudy System and a Simbody System:
// - base: mbstudy MBS_MOB_SLIDER with an MBS_FUNC_SINE function and an MBS_CON_PRESCRIBED_MOTION
//   constraint on its coordinate; Simbody MobilizedBody::Slider with a Motion::Sinusoid at the
//   Position level. Both slide along the common x axis of F and M (= Ground x). Its motion is
//   prescribed, so its mass does not affect the chains.
// - chains: pins (rotation about the common z axis of F and M) whose F frames are uniformly
//   random rotations of the parent (a random unit quaternion, handed to both engines as
//   body-fixed X-Y-Z angles), so every pin axis points in a uniformly random direction in
//   Ground at q = 0. Each link is a uniform slender rod (a solid steel cylinder, 0.25 m long,
//   radius 1 cm: 0.617 kg) from its own joint to the next one: the joints of a chain are 0.25 m
//   apart (the first joints sit on the base, 0.25 m apart along z), and at q = 0 every joint
//   and every center of mass of a chain lies on one vertical line below its attachment point:
//   q = 0 is the chain hanging straight down, an equilibrium (every point at its lowest). In the
//   parent's (randomly rotated) frame the F offset has all three components non-zero.
// - mass properties: center of mass at the middle of the rod; central inertia of a solid
//   cylinder, m (L^2/12 + r^2/4) across the rod and m r^2/2 along it, with the rod's axis along
//   the link; mbstudy gets the central inertia, Simbody the inertia about the body origin.
// - gravity (0, -9.81, 0); a linear mobility damper f = -c u on every pin, c = 0.005 N m s/rad
//   (a damping ratio of 2.5 % for one link swinging alone about a horizontal axis, far less for
//   the chains' slow modes).
// - the initial state: q = 0, every pin speed uniform in [-0.7, 0.7] rad/s, base speed A w;
//   mbstudy assembles it (mbs_assemble) and Simbody's integrator prescribes it; both are
//   checked to be the same. The seed (2011) and every parameter are printed in the header.
//
// The accelerations of the two models are compared at a random state before anything is timed,
// so a difference between the systems shows up at once, not as a slow drift of the trajectory.
//
// Whether this motion is regular is measured, not assumed: --run perturbs every initial pin speed
// by 1e-7 rad/s and prints how far the final pin coordinates move (a factor of order 1..100 x
// 1e-7 is regular motion; many decades more is chaos, where no two accuracies follow the same
// trajectory and the final "error" measures the chaos, not the integrator). It also prints the
// largest pin speed and angle reached, and the kinetic energy, along the reference trajectory.
// With the defaults (seed 2011) the motion is large but regular: the perturbation grows ~13-fold
// over 20 s, pins swing up to ~2.2 rad and the fastest pin (axis 13 deg from its rod: little
// inertia about it) reaches ~21 rad/s; both engines take ~440 RK-Merson steps at alpha = 1e-2
// and ~6350 at 1e-7 (the issue quotes ~335 and ~3600 for the paper's system), their
// reference runs agree to ~2.5e-10 rad, and the errors fall by ~10^0.93 per decade of alpha.
//
// Reading the exponents: a 4th-order method with the local error per step held to alpha takes
// steps ~ alpha^-1/5 (error per unit step: alpha^-1/4) and its global error goes as alpha^4/5;
// Merson's embedded estimate is of order 5 (not 4) on linear constant-coefficient problems; at
// loose accuracies the steps may be limited by stability, not accuracy.
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
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}
double vmin(const std::vector<double>& v) {
  return v.empty() ? NAN : *std::min_element(v.begin(), v.end());
}
double vmax(const std::vector<double>& v) {
  return v.empty() ? NAN : *std::max_element(v.begin(), v.end());
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
  double I6[6];                  // central inertia in B: xx yy zz xy xz yz
  double u0 = 0;                 // initial speed
  double axis_G[3] = {0, 0, 1};  // the pin axis in Ground at q = 0 (for the printout)
  double axis_link_deg = 90;     // angle between the pin axis and the rod, 0..90 degrees
};

struct Params {
  int nchain = 11, nlink = 20;
  double t_final = 20;
  double A = 0.05, w = kPi;      // base motion x(t) = A sin(w t): 5 cm at 0.5 Hz
  double base_mass = 5;          // kg (prescribed motion: does not affect the chains)
  double base_moment = 0.1;      // kg m^2 (about each axis; the base only translates)
  double link = 0.25;            // joint-to-joint distance = rod length, m
  double radius = 0.01;          // rod radius, m
  double density = 7850;         // rod density, kg/m^3 (steel)
  double spacing = 0.25;         // the chains' attachment points on the base, along z, m
  double damping = 0.005;        // N m s/rad on every pin
  double u_max = 0.7;            // initial pin speeds uniform in [-u_max, u_max] rad/s
  double g = 9.81;               // gravity (0, -g, 0)
  uint64_t seed = 2011;
  double rod_mass() const { return density * kPi * radius * radius * link; }
  double rod_I_across() const { return rod_mass() * (link * link / 12 + radius * radius / 4); }
  double rod_I_along() const { return rod_mass() * radius * radius / 2; }
  // damping ratio of one link swinging alone about a horizontal axis through its joint
  double link_zeta() const {
    const double m = rod_mass(), I = rod_I_across() + m * 0.25 * link * link;
    return damping / (2 * std::sqrt(I * m * g * 0.5 * link));
  }
};

struct Model {
  Params p;
  std::vector<BodyDef> b;  // b[0] Ground (unused), b[1] the base, then chain after chain
  int n = 0;               // bodies besides Ground
  std::vector<int> pins;   // the pin bodies, in order
  double max_joint_gap = 0;     // max | |joint-to-joint| - link | over the chains (check)
  double min_axis_link_deg = 0;  // smallest angle between a pin axis and its link, degrees
  double max_axis_link_deg = 0;  // largest
};

// R = Rx(a0) Ry(a1) Rz(a2) -> (a0, a1, a2)
void rot_to_body_xyz(double a[3], const double R[9]) {
  a[1] = std::asin(std::max(-1.0, std::min(1.0, R[2])));
  a[0] = std::atan2(-R[5], R[8]);
  a[2] = std::atan2(-R[1], R[0]);
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
  for (int k = 0; k < 6; k++) base.I6[k] = k < 3 ? p.base_moment : 0;
  base.u0 = p.A * p.w;  // d/dt A sin(w t) at t = 0
  const double mass = p.rod_mass(), It = p.rod_I_across(), Ia = p.rod_I_along();
  double min_ang = 180, max_ang = 0, gap = 0;
  int id = 2;
  for (int c = 0; c < p.nchain; c++) {
    // R_GP: orientation in Ground of the parent at q = 0; the base does not rotate
    double R_GP[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double joint_G[3] = {0, 0, 0};  // this chain's previous joint, in Ground at q = 0
    for (int l = 0; l < p.nlink; l++, id++) {
      BodyDef& bd = m.b[id];
      bd.parent = l == 0 ? 1 : id - 1;
      bd.type = kPin;
      // a uniformly random rotation of F in the parent, as body-fixed X-Y-Z angles
      double qr[4], R_rand[9], R_PF[9], R_GB[9];
      rng.unit_quat(qr);
      quat_to_rot(R_rand, qr);
      rot_to_body_xyz(bd.angles, R_rand);
      rot_body_xyz(R_PF, bd.angles);  // exactly what both engines build from the angles
      mat_mul(R_GB, R_GP, R_PF);      // at q = 0, M = F and B = M
      const double zB[3] = {0, 0, 1};
      mat_vec(bd.axis_G, R_GB, zB);
      double jG[3];
      if (l == 0) {
        // the attachment points on the base, spread along z
        bd.p_PF[0] = 0;
        bd.p_PF[1] = 0;
        bd.p_PF[2] = p.spacing * (c - 0.5 * (p.nchain - 1));
        for (int k = 0; k < 3; k++) jG[k] = bd.p_PF[k];
      } else {
        // the joint at the far end of the parent's rod: straight below the parent's joint (in
        // Ground, at q = 0), expressed in the parent's frame
        const double down[3] = {0, -p.link, 0};
        mat_tvec(bd.p_PF, R_GP, down);
        double step[3];
        mat_vec(step, R_GP, bd.p_PF);
        for (int k = 0; k < 3; k++) jG[k] = joint_G[k] + step[k];
        const double dx = jG[0] - joint_G[0], dy = jG[1] - joint_G[1], dz = jG[2] - joint_G[2];
        gap = std::max(gap, std::fabs(std::sqrt(dx * dx + dy * dy + dz * dz) - p.link));
      }
      std::memcpy(joint_G, jG, sizeof jG);
      // the rod: from this joint along e (down in Ground at q = 0) to the next joint
      const double downG[3] = {0, -1, 0};
      double e[3];
      mat_tvec(e, R_GB, downG);
      for (int k = 0; k < 3; k++) bd.com[k] = 0.5 * p.link * e[k];
      bd.mass = mass;
      // central inertia of a solid cylinder along e: It (1 - e e^T) + Ia e e^T
      double I[9];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) I[3 * i + j] = (i == j ? It : 0) + (Ia - It) * e[i] * e[j];
      bd.I6[0] = I[0];
      bd.I6[1] = I[4];
      bd.I6[2] = I[8];
      bd.I6[3] = I[1];
      bd.I6[4] = I[2];
      bd.I6[5] = I[5];
      bd.u0 = rng.uniform(-p.u_max, p.u_max);
      // angle between the pin axis and the rod (0..90 degrees)
      const double ca = std::fabs(bd.axis_G[1]);
      const double ang = std::acos(std::min(1.0, ca)) * 180 / kPi;
      bd.axis_link_deg = ang;
      min_ang = std::min(min_ang, ang);
      max_ang = std::max(max_ang, ang);
      std::memcpy(R_GP, R_GB, sizeof R_GP);
      m.pins.push_back(id);
    }
  }
  m.n = (int)m.b.size() - 1;
  m.max_joint_gap = gap;
  m.min_axis_link_deg = min_ang;
  m.max_axis_link_deg = max_ang;
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

// what the reference trajectory looks like (reported every 0.01 s)
struct MotionStats {
  bool ok = false;
  double max_u = 0, max_q = 0;   // largest |pin speed| (rad/s) and |pin angle| (rad) reached
  int max_u_body = 0;            // the pin that reached the largest speed
  double ke0 = 0, ke_max = 0, ke_end = 0;  // kinetic energy, J
  double e0 = 0, e_end = 0;      // kinetic + gravitational potential energy, J
  double max_u_end = 0;          // largest |pin speed| at t_final
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
  RunResult run(const Model& m, double alpha,
                mbs_integrator_type type = MBS_INTEG_RK_MERSON) {
    RunResult r;
    if (mbs_state_set_vars(sys, st, init.data(), init.size()) != MBS_OK) {
      r.err = "mbs_state_set_vars failed";
      return r;
    }
    mbs_simulation_options opt;
    mbs_simulation_options_default(&opt);
    opt.integrator = type;
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
  // an untimed run with reports every 0.01 s: how large the motion gets
  MotionStats motion(const Model& m, double alpha) {
    struct Ctx {
      const Model* m;
      MbsEngine* e;
      MotionStats s;
      bool first = true;
    } ctx{&m, this, MotionStats{}};
    MotionStats out;
    if (mbs_state_set_vars(sys, st, init.data(), init.size()) != MBS_OK) return out;
    mbs_simulation_options opt;
    mbs_simulation_options_default(&opt);
    opt.integrator = MBS_INTEG_RK_MERSON;
    opt.integ.accuracy = alpha;
    opt.report_interval = 0.01;
    auto report = [](const mbs_system* sy, mbs_state* s, void* user) -> int {
      Ctx& c = *static_cast<Ctx*>(user);
      double ke = 0, pe = 0;
      mbs_calc_kinetic_energy(sy, s, &ke);
      mbs_calc_potential_energy(sy, s, &pe);
      if (c.first) c.s.ke0 = ke, c.s.e0 = ke + pe;
      c.first = false;
      c.s.ke_max = std::max(c.s.ke_max, ke);
      c.s.ke_end = ke;
      c.s.e_end = ke + pe;
      double umax = 0;
      for (int i : c.m->pins) {
        const double ui = std::fabs(mbs_state_u(s)[c.e->uadr[i]]);
        umax = std::max(umax, ui);
        if (ui > c.s.max_u) c.s.max_u = ui, c.s.max_u_body = i;
        c.s.max_q = std::max(c.s.max_q, std::fabs(mbs_state_q(s)[c.e->qadr[i]]));
      }
      c.s.max_u_end = umax;
      return 0;
    };
    mbs_simulation_result res;
    std::memset(&res, 0, sizeof res);
    const int rc = mbs_simulate(sys, st, m.p.t_final, &opt, nullptr, 0, report, &ctx, &res);
    out = ctx.s;
    out.ok = rc == MBS_OK && mbs_state_time(st) == m.p.t_final;
    return out;
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
double rms_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return INFINITY;
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s / (double)a.size());
}

struct ModelCheck {
  double dq = NAN, du = NAN, d0 = NAN, d1 = NAN, amax = NAN, dbase = NAN;
  bool ok = false;
};

struct Setup {
  Model m;
  MbsEngine mbs;
  SbEngine sb;
  ModelCheck check;
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
  s.check = ModelCheck{dq, du, d0, d1, amax, dbase, ok};
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

std::string date_string() {
  char date[64];
  const time_t tt = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tt));
  return date;
}

std::string host_name() {
  char h[256] = {0};
  if (gethostname(h, sizeof h - 1) != 0) return "unknown";
  return h;
}

void print_params(const Model& m) {
  const Params& p = m.p;
  std::printf("# model: %d chains of %d links = %d pins + 1 prescribed slider base; %g s "
              "simulated; seed %llu\n",
              p.nchain, p.nlink, p.nchain * p.nlink, p.t_final, (unsigned long long)p.seed);
  std::printf("# base: slider along Ground x, x(t) = %g sin(%.6g t) m (amplitude %g m, %.3g Hz; "
              "peak speed %.3g m/s, peak acceleration %.3g m/s^2), mass %g kg, moments %g kg m^2 "
              "(prescribed: no effect on the chains); mbstudy MBS_FUNC_SINE + "
              "MBS_CON_PRESCRIBED_MOTION, Simbody Motion::Sinusoid (Position level)\n",
              p.A, p.w, p.A, p.w / (2 * kPi), p.A * p.w, p.A * p.w * p.w, p.base_mass,
              p.base_moment);
  std::printf("# pins: F frames uniformly random rotations of the parent (random unit quaternion "
              "-> body-fixed X-Y-Z angles), so the axes point in uniformly random directions "
              "(angle between a pin axis and its link %.1f..%.1f deg); joints %g m apart "
              "(checked: largest deviation %.1e m), vertical at q = 0: each chain, %g m long, "
              "hangs straight down at q = 0 (an equilibrium); first joints on the base %g m apart "
              "along z\n",
              m.min_axis_link_deg, m.max_axis_link_deg, p.link, m.max_joint_gap,
              p.link * p.nlink, p.spacing);
  std::printf("# links: uniform solid cylinders (rods) from joint to joint, length %g m, radius "
              "%g m, density %g kg/m^3: mass %.4f kg, center of mass at mid-length, central "
              "moments %.4e kg m^2 across and %.4e kg m^2 along the rod\n",
              p.link, p.radius, p.density, p.rod_mass(), p.rod_I_across(), p.rod_I_along());
  std::printf("# forces: gravity (0, %g, 0) m/s^2; linear mobility damper c = %g N m s/rad on "
              "every pin (damping ratio %.3f for one link swinging alone); initial pin speeds "
              "uniform in [%g, %g] rad/s, q = 0, base u = A w\n",
              -p.g, p.damping, p.link_zeta(), -p.u_max, p.u_max);
}

void print_header(const char* mode, int repeats) {
  std::printf("# mbs_fig3_accuracy %s: CPU time and error vs accuracy alpha, Runge-Kutta-Merson "
              "in both engines (Simbody paper Fig. 3)\n", mode);
  std::printf("# machine: %s (%ld online CPUs), host %s, date: %s\n", cpu_model().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), host_name().c_str(), date_string().c_str());
  std::printf("# mbstudy %s (%s build) C flags: %s\n", MBS_VERSION_STRING, MBS_CMP_BUILD_TYPE,
              MBS_CMP_C_INFO);
  std::printf("# this program (Simbody client code) C++ flags: %s\n", MBS_CMP_CXX_INFO);
  std::printf("# Simbody %s: %s; CMake package %s\n", MBS_CMP_SIMBODY_VERSION,
              MBS_CMP_SIMBODY_BUILD, MBS_CMP_SIMBODY_DIR);
  const char* ob = std::getenv("OPENBLAS_NUM_THREADS");
  std::printf("# OPENBLAS_NUM_THREADS=%s\n", ob ? ob : "(unset)");
  if (repeats > 0)
    std::printf("# CPU time: clock_gettime(CLOCK_PROCESS_CPUTIME_ID) around integrator creation, "
                "initialization and the run to the final time; %d repeat%s per alpha and engine, "
                "interleaved (mbstudy, Simbody, mbstudy, Simbody, ...): median [min, max]\n",
                repeats, repeats == 1 ? "" : "s");
  std::printf("# mbstudy: mbs_simulate, MBS_INTEG_RK_MERSON, opt.integ.accuracy = alpha, other "
              "options default, report_interval 0; steps = accepted steps\n");
  std::printf("# Simbody: RungeKuttaMersonIntegrator, setAccuracy(alpha), setFinalTime(t_final), "
              "other options default, TimeStepper::stepTo(t_final); steps = getNumStepsTaken()\n");
}

//---------------------------------- JSON -------------------------------------------------------

// a minimal JSON writer: objects and arrays nest, commas and indentation are automatic
struct Json {
  std::string s;
  std::vector<bool> first{true};
  static std::string quote(const std::string& v) {
    std::string r = "\"";
    for (unsigned char c : v) {
      if (c == '"' || c == '\\') {
        r += '\\';
        r += (char)c;
      } else if (c < 0x20) {
        r += strf("\\u%04x", c);
      } else {
        r += (char)c;
      }
    }
    return r + "\"";
  }
  static std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    return strf("%.17g", v);
  }
  void item(const char* key) {
    if (!first.back()) s += ",";
    first.back() = false;
    s += "\n" + std::string(2 * (first.size() - 1), ' ');
    if (key) s += quote(key) + ": ";
  }
  void open(const char* key, char c) {
    item(key);
    s += c;
    first.push_back(true);
  }
  void close(char c) {
    const bool empty = first.back();
    first.pop_back();
    if (!empty) s += "\n" + std::string(2 * (first.size() - 1), ' ');
    s += c;
  }
  void obj(const char* key = nullptr) { open(key, '{'); }
  void end_obj() { close('}'); }
  void arr(const char* key = nullptr) { open(key, '['); }
  void end_arr() { close(']'); }
  void kv(const char* key, double v) { item(key), s += num(v); }
  void kv(const char* key, long v) { item(key), s += std::to_string(v); }
  void kv(const char* key, int v) { item(key), s += std::to_string(v); }
  void kv(const char* key, unsigned long long v) { item(key), s += std::to_string(v); }
  void kv(const char* key, bool v) { item(key), s += v ? "true" : "false"; }
  void kv(const char* key, const std::string& v) { item(key), s += quote(v); }
  void kv(const char* key, const char* v) { item(key), s += quote(v); }
  void kv(const char* key, const std::vector<double>& v) {
    item(key);
    s += "[";
    for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + num(v[i]);
    s += "]";
  }
  bool write(const char* path) {
    FILE* f = std::fopen(path, "w");
    if (!f) return false;
    std::string out = s.substr(s.find_first_not_of(",\n")) + "\n";
    const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    return std::fclose(f) == 0 && ok;
  }
};

void json_header(Json& j, const char* mode, int repeats) {
  j.kv("program", "mbs_fig3_accuracy");
  j.kv("mode", mode);
  j.kv("date", date_string());
  j.kv("unix_time", (long)time(nullptr));
  j.obj("machine");
  j.kv("cpu", cpu_model());
  j.kv("online_cpus", (long)sysconf(_SC_NPROCESSORS_ONLN));
  j.kv("host", host_name());
  j.end_obj();
  j.obj("build");
  j.kv("mbstudy_version", MBS_VERSION_STRING);
  j.kv("build_type", MBS_CMP_BUILD_TYPE);
  j.kv("c_info", MBS_CMP_C_INFO);
  j.kv("cxx_info", MBS_CMP_CXX_INFO);
#ifdef NDEBUG
  j.kv("client_ndebug", true);
#else
  j.kv("client_ndebug", false);
#endif
  j.end_obj();
  j.obj("simbody");
  j.kv("version", MBS_CMP_SIMBODY_VERSION);
  j.kv("build", MBS_CMP_SIMBODY_BUILD);
  j.kv("dir", MBS_CMP_SIMBODY_DIR);
#ifdef MBS_SIMBODY_RELEASE
  j.kv("release", true);
#else
  j.kv("release", false);
#endif
  j.end_obj();
  const char* ob = std::getenv("OPENBLAS_NUM_THREADS");
  j.kv("openblas_num_threads", ob ? ob : "");
  j.kv("repeats", repeats);
  j.kv("timing", "CLOCK_PROCESS_CPUTIME_ID around integrator creation, initialization and the "
                 "run; interleaved per alpha: for r = 1..repeats: mbstudy, Simbody");
}

void json_model(Json& j, const Model& m) {
  const Params& p = m.p;
  j.obj("model");
  j.kv("nchain", p.nchain);
  j.kv("nlink", p.nlink);
  j.kv("npins", (int)m.pins.size());
  j.kv("t_final", p.t_final);
  j.kv("seed", (unsigned long long)p.seed);
  j.kv("base_amplitude_m", p.A);
  j.kv("base_omega_rad_s", p.w);
  j.kv("base_frequency_hz", p.w / (2 * kPi));
  j.kv("base_mass_kg", p.base_mass);
  j.kv("base_moment_kg_m2", p.base_moment);
  j.kv("link_length_m", p.link);
  j.kv("rod_radius_m", p.radius);
  j.kv("rod_density_kg_m3", p.density);
  j.kv("rod_mass_kg", p.rod_mass());
  j.kv("rod_inertia_across_kg_m2", p.rod_I_across());
  j.kv("rod_inertia_along_kg_m2", p.rod_I_along());
  j.kv("chain_spacing_m", p.spacing);
  j.kv("damping_n_m_s_rad", p.damping);
  j.kv("single_link_damping_ratio", p.link_zeta());
  j.kv("initial_speed_max_rad_s", p.u_max);
  j.kv("gravity_m_s2", p.g);
  j.kv("joint_spacing_max_deviation_m", m.max_joint_gap);
  j.kv("axis_link_angle_min_deg", m.min_axis_link_deg);
  j.kv("axis_link_angle_max_deg", m.max_axis_link_deg);
  j.kv("axes", "uniformly random F rotation per pin (unit quaternion -> body-fixed XYZ angles)");
  j.kv("geometry", "each chain hangs straight down at q = 0; links are solid cylinders from "
                   "joint to joint, center of mass at mid-length");
  j.end_obj();
}

void json_run(Json& j, const char* key, const RunResult& r) {
  j.obj(key);
  j.kv("ok", r.ok);
  j.kv("steps", r.steps);
  j.kv("attempts", r.attempts);
  j.kv("evaluations", r.evals);
  j.kv("projections", r.projections);
  j.kv("cpu_s", r.cpu);
  j.kv("q_base_final", r.q_base);
  j.kv("u_base_final", r.u_base);
  j.end_obj();
}

//---------------------------------- --quick ----------------------------------------------------

int run_quick(Params p) {
  p.nchain = 2;
  p.nlink = 5;
  p.t_final = 1;
  Setup s;
  s.m = make_model(p);
  print_header("--quick", 0);
  print_params(s.m);
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

struct EngineRow {
  RunResult first;           // the first repeat (steps, counts, final state)
  std::vector<double> cpu;   // every repeat's CPU time, in order
  double err = NAN;          // largest |q - q_ref| against the common reference
  double err_rms = NAN;      // RMS over the pins against the common reference
  double err_own = NAN;      // largest |q - q_ref| against the same engine's reference
  bool det = true;           // repeats gave bit-identical final pin coordinates
};

struct Row {
  double alpha;
  EngineRow m, s;
  EngineRow d;  // --extra: mbstudy's Dormand-Prince 5(4) at the same alpha
};

// log-log interpolation of CPU time at a given error on one engine's (error, median CPU) curve;
// NAN when the error is outside the range the curve covers
double cpu_at_error(const std::vector<Row>& rows, const EngineRow Row::*eng, double err) {
  for (size_t k = 0; k + 1 < rows.size(); k++) {
    const EngineRow& a = rows[k].*eng;
    const EngineRow& b = rows[k + 1].*eng;
    const double ea = a.err, eb = b.err;
    if (!(ea > 0 && eb > 0 && err > 0)) continue;
    if ((err <= ea && err >= eb) || (err >= ea && err <= eb)) {
      if (ea == eb) return median(a.cpu);
      const double t = (std::log(err) - std::log(ea)) / (std::log(eb) - std::log(ea));
      return std::exp(std::log(median(a.cpu)) +
                      t * (std::log(median(b.cpu)) - std::log(median(a.cpu))));
    }
  }
  return NAN;
}

int run_full(const Params& p, int repeats, double ref_alpha, const char* json_path, bool extra) {
  const double wall0 = wall_seconds();
  Setup s;
  s.m = make_model(p);
  print_header("--run", repeats);
  print_params(s.m);
  std::fflush(stdout);
  Json j;
  j.obj();
  json_header(j, "run", repeats);
  j.kv("extra_dormand_prince", extra);
  json_model(j, s.m);
  auto write_json = [&](const char* status) {
    if (!json_path) return true;
    j.kv("status", status);
    j.end_obj();
    if (!j.write(json_path)) {
      std::fprintf(stderr, "cannot write %s\n", json_path);
      return false;
    }
    std::fprintf(stderr, "wrote %s\n", json_path);
    return true;
  };
  const bool checked = build_and_check(s, 1e-9);
  j.obj("model_check");
  j.kv("initial_q_diff", s.check.dq);
  j.kv("initial_u_diff", s.check.du);
  j.kv("initial_udot_diff", s.check.d0);
  j.kv("random_state_udot_rel_diff", s.check.d1);
  j.kv("random_state_udot_max", s.check.amax);
  j.kv("prescribed_base_udot_err", s.check.dbase);
  j.kv("ok", s.check.ok);
  j.end_obj();
  if (!checked) {
    std::printf("FAIL: the two models differ\n");
    write_json("model check failed");
    return 1;
  }
  const std::vector<double> alphas = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7};
  // references first (timed once)
  std::fprintf(stderr, "reference runs at alpha %g ...\n", ref_alpha);
  const RunResult ref_m = s.mbs.run(s.m, ref_alpha);
  const RunResult ref_s = s.sb.run(s.m, ref_alpha);
  for (const RunResult* r : {&ref_m, &ref_s})
    if (!r->ok) {
      std::printf("FAIL: reference run: %s\n", r->err.c_str());
      write_json("reference run failed");
      return 1;
    }
  std::fprintf(stderr, "  mbstudy %ld steps %.2f s, Simbody %ld steps %.2f s\n", ref_m.steps,
               ref_m.cpu, ref_s.steps, ref_s.cpu);
  // the common reference: the mean of the two engines' reference runs
  std::vector<double> q_ref(ref_m.q_pins.size());
  for (size_t i = 0; i < q_ref.size(); i++) q_ref[i] = 0.5 * (ref_m.q_pins[i] + ref_s.q_pins[i]);
  const double dref = max_diff(ref_m.q_pins, ref_s.q_pins);
  const double dref_rms = rms_diff(ref_m.q_pins, ref_s.q_pins);
  // Is the motion regular? Perturb every initial pin speed by 1e-7 rad/s and see how much the
  // final pin coordinates move (mbstudy at alpha 1e-9): a factor of order 1 to 100 means
  // errors made along the way are carried to t_final about linearly, so that the final error
  // can fall tenfold per decade of alpha; a chaotic motion amplifies them by many decades.
  double amplification = NAN;
  const double sens_du = 1e-7, sens_alpha = 1e-9;
  {
    Model m2 = s.m;
    for (int i : m2.pins) m2.b[i].u0 += sens_du;
    MbsEngine e2;
    std::string err;
    if (e2.build(m2, err)) {
      const RunResult a = s.mbs.run(s.m, sens_alpha), b = e2.run(m2, sens_alpha);
      if (a.ok && b.ok) amplification = max_diff(a.q_pins, b.q_pins) / sens_du;
    }
  }
  // how large the motion gets (untimed, mbstudy at alpha 1e-8, reports every 0.01 s)
  const MotionStats motion = s.mbs.motion(s.m, 1e-8);

  std::vector<Row> rows;
  bool all_ok = true;
  for (double a : alphas) {
    Row row;
    row.alpha = a;
    for (int r = 0; r < repeats; r++) {
      // interleaved: mbstudy, Simbody, mbstudy, Simbody, ...
      // (with --extra: mbstudy, Simbody, mbstudy Dormand-Prince, mbstudy, Simbody, ...)
      RunResult x = s.mbs.run(s.m, a);
      RunResult y = s.sb.run(s.m, a);
      RunResult z;
      if (extra) z = s.mbs.run(s.m, a, MBS_INTEG_DORMAND_PRINCE);
      for (const RunResult* res : {&x, &y, &z}) {
        if (res == &z && !extra) continue;
        if (!res->ok) {
          std::printf("FAIL at alpha %g: %s\n", a, res->err.c_str());
          all_ok = false;
        }
      }
      for (auto [e, res] : {std::pair<EngineRow*, RunResult*>{&row.m, &x}, {&row.s, &y},
                            {&row.d, &z}}) {
        if (e == &row.d && !extra) continue;
        e->cpu.push_back(res->cpu);
        if (r == 0)
          e->first = *res;
        else if (res->q_pins != e->first.q_pins || res->steps != e->first.steps)
          e->det = false;
      }
    }
    for (EngineRow* e : {&row.m, &row.s, &row.d}) {
      if (e->cpu.empty()) continue;
      e->err = max_diff(e->first.q_pins, q_ref);
      e->err_rms = rms_diff(e->first.q_pins, q_ref);
    }
    row.m.err_own = max_diff(row.m.first.q_pins, ref_m.q_pins);
    row.s.err_own = max_diff(row.s.first.q_pins, ref_s.q_pins);
    row.d.err_own = row.d.cpu.empty() ? NAN : max_diff(row.d.first.q_pins, ref_m.q_pins);
    std::fprintf(stderr, "alpha %.0e: mbstudy %ld steps %.3f s, Simbody %ld steps %.3f s\n", a,
                 row.m.first.steps, median(row.m.cpu), row.s.first.steps, median(row.s.cpu));
    rows.push_back(row);
  }
  if (!all_ok) {
    write_json("a timed run failed");
    return 1;
  }

  std::printf("\n| alpha | mbstudy steps | mbstudy CPU s, median [min, max] | Simbody steps | "
              "Simbody CPU s, median [min, max] | CPU ratio mbstudy/Simbody (medians) | "
              "mbstudy error | Simbody error |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows)
    std::printf("| %.0e | %ld | %.4f [%.4f, %.4f] | %ld | %.4f [%.4f, %.4f] | %.3f | %.2e | "
                "%.2e |\n",
                r.alpha, r.m.first.steps, median(r.m.cpu), vmin(r.m.cpu), vmax(r.m.cpu),
                r.s.first.steps, median(r.s.cpu), vmin(r.s.cpu), vmax(r.s.cpu),
                median(r.m.cpu) / median(r.s.cpu), r.m.err, r.s.err);
  std::printf("| %.0e (ref) | %ld | %.4f | %ld | %.4f | %.3f | %.2e | %.2e |\n", ref_alpha,
              ref_m.steps, ref_m.cpu, ref_s.steps, ref_s.cpu, ref_m.cpu / ref_s.cpu,
              max_diff(ref_m.q_pins, q_ref), max_diff(ref_s.q_pins, q_ref));
  std::printf("\nerror: largest |q_i(%g) - q_ref_i| over the %zu pin coordinates, q_ref = the "
              "mean of the two engines' runs at alpha = %.0e (one common reference; those two "
              "runs differ by up to %.2e rad, so errors below ~%.1e are not resolved). Reference "
              "CPU times: one run each.\n",
              p.t_final, s.m.pins.size(), ref_alpha, dref, 0.5 * dref);

  // CPU at equal error: each engine's CPU interpolated (log-log) at the other's error
  std::printf("\nCPU at equal error: mbstudy's CPU time interpolated (log-log, between "
              "neighbouring alphas) at Simbody's error, over Simbody's CPU time ('-': Simbody's "
              "error is outside the range of mbstudy's errors)\n\n");
  std::printf("| alpha (Simbody) | Simbody error | Simbody CPU s | mbstudy CPU s at that error | "
              "ratio mbstudy/Simbody at equal error |\n|---:|---:|---:|---:|---:|\n");
  std::vector<double> eq_ratio;
  for (const Row& r : rows) {
    const double c = cpu_at_error(rows, &Row::m, r.s.err);
    eq_ratio.push_back(c / median(r.s.cpu));
    if (std::isfinite(c))
      std::printf("| %.0e | %.2e | %.4f | %.4f | %.3f |\n", r.alpha, r.s.err, median(r.s.cpu), c,
                  c / median(r.s.cpu));
    else
      std::printf("| %.0e | %.2e | %.4f | - | - |\n", r.alpha, r.s.err, median(r.s.cpu));
  }
  std::vector<double> eq_ratio_d;
  if (extra) {
    std::printf("\nExtra: mbstudy's Dormand-Prince 5(4) (MBS_INTEG_DORMAND_PRINCE) at the same "
                "alpha, timed in the same interleaved loop; the last column is its CPU time "
                "interpolated at Simbody RK-Merson's error over Simbody's CPU time\n\n");
    std::printf("| alpha | DP54 steps | DP54 evaluations | DP54 CPU s, median [min, max] | DP54 "
                "error | DP54 / Simbody RKM CPU, same alpha | DP54 / Simbody RKM CPU, equal error "
                "|\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const Row& r : rows) {
      const double c = cpu_at_error(rows, &Row::d, r.s.err);
      eq_ratio_d.push_back(c / median(r.s.cpu));
      std::printf("| %.0e | %ld | %ld | %.4f [%.4f, %.4f] | %.2e | %.3f | %s |\n", r.alpha,
                  r.d.first.steps, r.d.first.evals, median(r.d.cpu), vmin(r.d.cpu),
                  vmax(r.d.cpu), r.d.err, median(r.d.cpu) / median(r.s.cpu),
                  std::isfinite(c) ? strf("%.3f", c / median(r.s.cpu)).c_str() : "-");
    }
  }

  std::printf("\nDetails (first repeat): attempted steps, forward-dynamics evaluations "
              "(Simbody: realizations), projections, RMS error over the pins, error against the "
              "same engine's own reference, and the two engines' difference at %g s\n\n",
              p.t_final);
  std::printf("| alpha | mbstudy attempts | mbstudy evaluations | mbstudy projections | Simbody "
              "attempts | Simbody realizations | Simbody projections | mbstudy RMS error | "
              "Simbody RMS error | mbstudy error (own ref) | Simbody error (own ref) | "
              "mbstudy - Simbody |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows)
    std::printf("| %.0e | %ld | %ld | %ld | %ld | %ld | %ld | %.2e | %.2e | %.2e | %.2e | %.2e "
                "|\n",
                r.alpha, r.m.first.attempts, r.m.first.evals, r.m.first.projections,
                r.s.first.attempts, r.s.first.evals, r.s.first.projections, r.m.err_rms,
                r.s.err_rms, r.m.err_own, r.s.err_own,
                max_diff(r.m.first.q_pins, r.s.first.q_pins));

  // fits: log10 CPU, steps and error on log10 alpha
  auto fit = [&](int what, bool mbs, double lo, double hi) {
    std::vector<double> x, y;
    for (const Row& r : rows) {
      if (r.alpha < lo * 0.999 || r.alpha > hi * 1.001) continue;
      const EngineRow& e = mbs ? r.m : r.s;
      const double v = what == 0 ? median(e.cpu) : what == 1 ? (double)e.first.steps : e.err;
      if (!(v > 0)) continue;
      x.push_back(std::log10(r.alpha));
      y.push_back(std::log10(v));
    }
    return fit_slope(x, y);
  };
  std::printf("\nFitted exponents (least squares of log10 value on log10 alpha; a 4th-order "
              "method: steps and CPU ~ alpha^-0.2..-0.25, error ~ alpha^0.8..1):\n\n");
  std::printf("| engine | CPU, 1e-2..1e-7 | CPU, 1e-4..1e-7 | steps, 1e-2..1e-7 | steps, "
              "1e-4..1e-7 | error, 1e-2..1e-7 | error, 1e-4..1e-7 |\n"
              "|---|---:|---:|---:|---:|---:|---:|\n");
  double fits[2][6];
  for (int e = 0; e < 2; e++) {
    const bool mbs = e == 0;
    for (int w = 0; w < 3; w++) {
      fits[e][2 * w] = fit(w, mbs, 1e-7, 1e-2);
      fits[e][2 * w + 1] = fit(w, mbs, 1e-7, 1e-4);
    }
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", mbs ? "mbstudy" : "Simbody",
                fits[e][0], fits[e][1], fits[e][2], fits[e][3], fits[e][4], fits[e][5]);
  }
  std::printf("\nsteps ratio alpha 1e-7 / 1e-2: mbstudy %.2f, Simbody %.2f (alpha^-1/4 over 5 "
              "decades: %.1f; alpha^-1/5: %.1f)\n",
              (double)rows.back().m.first.steps / (double)rows.front().m.first.steps,
              (double)rows.back().s.first.steps / (double)rows.front().s.first.steps,
              std::pow(10.0, 1.25), 10.0);
  std::printf("\nreference runs (alpha %.0e): mbstudy - Simbody, largest |q_i(%g)| difference "
              "over the pins %.2e rad (RMS %.2e); base x(%g): mbstudy %.17g, Simbody %.17g, "
              "exact %.17g\n",
              ref_alpha, p.t_final, dref, dref_rms, p.t_final, ref_m.q_base, ref_s.q_base,
              p.A * std::sin(p.w * p.t_final));
  double qmax = 0;
  for (double q : q_ref) qmax = std::max(qmax, std::fabs(q));
  std::printf("largest |q_i(%g)| of the reference: %.3f rad\n", p.t_final, qmax);
  if (motion.ok) {
    const BodyDef& fb = s.m.b[motion.max_u_body];
    std::printf("motion along the trajectory (mbstudy, alpha 1e-8, sampled every 0.01 s): largest "
                "|pin speed| %.3g rad/s (pin of body %d, link %d of its chain, axis %.1f deg from "
                "its link; largest |pin speed| at t = %g s: %.3g rad/s), largest |pin angle| %.3g "
                "rad; kinetic energy %.4g J at t = 0, up to %.4g J, %.4g J at t = %g s; kinetic + "
                "gravitational energy %.4g J at t = 0, %.4g J at t = %g s (damping takes energy "
                "out, the prescribed base puts some in)\n",
                motion.max_u, motion.max_u_body, (motion.max_u_body - 2) % p.nlink + 1,
                fb.axis_link_deg, p.t_final, motion.max_u_end, motion.max_q, motion.ke0,
                motion.ke_max, motion.ke_end, p.t_final, motion.e0, motion.e_end, p.t_final);
  }
  std::printf("sensitivity: initial pin speeds + %.0e rad/s move the final pin coordinates by up "
              "to %.3g x %.0e rad (mbstudy, alpha %.0e; order 1..100 is regular motion, many "
              "decades more means chaotic motion: ln(factor)/t_final = %.3g 1/s)\n",
              sens_du, amplification, sens_du, sens_alpha,
              std::log(std::max(amplification, 1e-300)) / p.t_final);
  bool det = true;
  for (const Row& r : rows) det = det && r.m.det && r.s.det && r.d.det;
  std::printf("repeats gave bit-identical results: %s\n", det ? "yes" : "NO");
  const bool agree = dref <= 1e-6;
  if (!agree)
    std::printf("WARNING: the reference runs of the two engines differ by %.2e rad (> 1e-6): "
                "errors below that are not resolved by this comparison\n", dref);
  const double wall = wall_seconds() - wall0;
  std::printf("total wall time of this program: %.1f s\n", wall);

  // JSON: every raw figure
  j.obj("reference");
  j.kv("alpha", ref_alpha);
  j.kv("common", "mean of the mbstudy and Simbody runs at alpha");
  j.kv("engines_max_diff_rad", dref);
  j.kv("engines_rms_diff_rad", dref_rms);
  j.kv("exact_base_x_final", p.A * std::sin(p.w * p.t_final));
  j.kv("max_abs_q_final", qmax);
  json_run(j, "mbstudy", ref_m);
  json_run(j, "simbody", ref_s);
  j.kv("q_pins_mbstudy", ref_m.q_pins);
  j.kv("q_pins_simbody", ref_s.q_pins);
  j.end_obj();
  j.obj("sensitivity");
  j.kv("du_rad_s", sens_du);
  j.kv("alpha", sens_alpha);
  j.kv("amplification", amplification);
  j.end_obj();
  j.obj("motion");
  j.kv("ok", motion.ok);
  j.kv("alpha", 1e-8);
  j.kv("max_abs_pin_speed_rad_s", motion.max_u);
  j.kv("max_abs_pin_speed_body", motion.max_u_body);
  j.kv("max_abs_pin_speed_axis_link_deg", s.m.b[motion.max_u_body].axis_link_deg);
  j.kv("max_abs_pin_speed_final_rad_s", motion.max_u_end);
  j.kv("max_abs_pin_angle_rad", motion.max_q);
  j.kv("kinetic_energy_initial_j", motion.ke0);
  j.kv("kinetic_energy_max_j", motion.ke_max);
  j.kv("kinetic_energy_final_j", motion.ke_end);
  j.kv("mechanical_energy_initial_j", motion.e0);
  j.kv("mechanical_energy_final_j", motion.e_end);
  j.end_obj();
  j.arr("rows");
  for (const Row& r : rows) {
    j.obj();
    j.kv("alpha", r.alpha);
    const size_t ri = (size_t)(&r - rows.data());
    for (int e = 0; e < (extra ? 3 : 2); e++) {
      const EngineRow& er = e == 0 ? r.m : e == 1 ? r.s : r.d;
      j.obj(e == 0 ? "mbstudy" : e == 1 ? "simbody" : "mbstudy_dormand_prince");
      j.kv("integrator", e == 0   ? "MBS_INTEG_RK_MERSON"
                         : e == 1 ? "RungeKuttaMersonIntegrator"
                                  : "MBS_INTEG_DORMAND_PRINCE");
      j.kv("steps", er.first.steps);
      j.kv("attempts", er.first.attempts);
      j.kv("evaluations", er.first.evals);
      j.kv("projections", er.first.projections);
      j.kv("cpu_s", er.cpu);
      j.kv("cpu_median_s", median(er.cpu));
      j.kv("cpu_min_s", vmin(er.cpu));
      j.kv("cpu_max_s", vmax(er.cpu));
      j.kv("error_max_rad", er.err);
      j.kv("error_rms_rad", er.err_rms);
      j.kv("error_own_reference_max_rad", er.err_own);
      j.kv("q_base_final", er.first.q_base);
      j.kv("deterministic", er.det);
      j.end_obj();
    }
    j.kv("cpu_ratio_median", median(r.m.cpu) / median(r.s.cpu));
    j.kv("cpu_ratio_equal_error", eq_ratio[ri]);
    if (extra) j.kv("dormand_prince_cpu_ratio_equal_error", eq_ratio_d[ri]);
    j.kv("engines_max_diff_rad", max_diff(r.m.first.q_pins, r.s.first.q_pins));
    j.end_obj();
  }
  j.end_arr();
  j.obj("fits");
  const char* fit_names[6] = {"cpu_1e-2_1e-7",   "cpu_1e-4_1e-7",   "steps_1e-2_1e-7",
                              "steps_1e-4_1e-7", "error_1e-2_1e-7", "error_1e-4_1e-7"};
  for (int e = 0; e < 2; e++) {
    j.obj(e == 0 ? "mbstudy" : "simbody");
    for (int k = 0; k < 6; k++) j.kv(fit_names[k], fits[e][k]);
    j.end_obj();
  }
  j.end_obj();
  j.kv("deterministic", det);
  j.kv("references_agree_1e-6", agree);
  j.kv("wall_s", wall);
  if (!write_json("ok")) return 1;
  return 0;
}

void usage(const char* prog) {
  const Params p;
  std::printf("usage: %s --run [--repeats N] [--json FILE] [--ref-alpha R] [--extra] | --quick   "
              "[model options]\n"
              "  --run           the Fig. 3 experiment: 11 chains x 20 links, 20 s, alpha "
              "1e-2..1e-7\n"
              "  --quick         a reduced agreement and convergence check (for CI)\n"
              "  --repeats N     CPU-time repeats per run, interleaved (N >= 1; default 3)\n"
              "  --json FILE     write every raw figure of --run as JSON\n"
              "  --ref-alpha R   accuracy of the two reference runs [1e-10]\n"
              "  --extra         also time mbstudy's Dormand-Prince 5(4) at each alpha\n"
              "model options (defaults in brackets):\n"
              "  --amplitude A   base motion amplitude, m [%g]\n"
              "  --omega W       base motion rate, rad/s [%g]\n"
              "  --damping C     pin damping, N m s/rad [%g]\n"
              "  --umax U        initial pin speeds in [-U, U], rad/s [%g]\n"
              "  --seed S        random model and speeds [%llu]\n",
              prog, p.A, p.w, p.damping, p.u_max, (unsigned long long)p.seed);
}

}  // namespace

int main(int argc, char** argv) {
  bool run = false, quick = false, extra = false;
  int repeats = 3;
  double ref_alpha = 1e-10;
  const char* json_path = nullptr;
  Params p;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    double* param = a == "--amplitude"   ? &p.A
                    : a == "--omega"     ? &p.w
                    : a == "--damping"   ? &p.damping
                    : a == "--umax"      ? &p.u_max
                    : a == "--ref-alpha" ? &ref_alpha
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
    } else if (a == "--extra") {
      extra = true;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--repeats" && i + 1 < argc) {
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (!end || *end || n < 1 || n > 1000000) {
        std::fprintf(stderr, "--repeats needs a positive integer\n");
        return 2;
      }
      repeats = (int)n;
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
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
  if (!(ref_alpha > 0)) {
    std::fprintf(stderr, "--ref-alpha needs a positive number\n");
    return 2;
  }
  int rc = 0;
  if (quick) rc |= run_quick(p);
  if (run) rc |= run_full(p, repeats, ref_alpha, json_path, extra);
  return rc;
}
