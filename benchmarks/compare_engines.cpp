// mbs_compare_engines: mbstudy's forward dynamics side by side with Simbody and MuJoCo.
//
//   --check       random trees (pin, ball and free mobilizers, random F frames, masses, centers
//                 of mass, inertias, gravity and applied generalized forces) and the pin chains
//                 of --time: the generalized accelerations of the three engines must agree to
//                 1e-9 relative, |a - b| <= 1e-9 max(1, |a|, |b|) per component; exit code 1 if not
//                 Pin models are also solved by an independent 80-bit (long double) Newton-Euler +
//                 Cholesky reference; MuJoCo loaded from URDF is compared with MuJoCo from MJCF.
//   --quick       a reduced --check for CI
//   --time        forward dynamics per call on pin chains of 1..200 bodies, median of repeats
//   --repeats N   timing repeats (default 7, at least 5 recommended)
//
// Timed models: spatial pin chains, each F frame with a random rotation (uniform body-fixed X-Y-Z
// angles) and a random offset in [-0.1, 0.1]^3, so the joint axes point in random directions;
// compact random bodies (see kTimingChain), gravity only, applied forces zero.
//
// One model description (struct Model) is turned into an mbstudy System, a Simbody System and
// an MJCF or URDF document for MuJoCo, so all engines see the identical model:
// - F frames: body-fixed X-Y-Z angles (mbstudy's convention). mbstudy gets the angles, Simbody
//   the same BodyRotationSequence, MuJoCo the quaternion of the rotation computed here.
// - Inertias are built as R diag(d) R^T with d obeying the triangle inequality, so MuJoCo gets
//   them as principal moments (diaginertia + quat): MuJoCo 2.2.2 perturbs `fullinertia`.
// - MuJoCo cannot nest MJCF bodies ~100 deep (tinyxml2 depth limit), so the pin chains are
//   loaded from URDF, which is flat (each joint names its parent and child links). Every MuJoCo
//   model is checked field by field against the intended one (MjEngine::verify) before use.
// - MuJoCo's ball speeds are the angular velocity in the child (M) frame, mbstudy's and
//   Simbody's are in F: u = R_FM qvel. Its free joint (only under the world body) has
//   qpos = (p_GM, quat_GM), qvel = (v of M's origin in Ground, w in M).
#if defined(NDEBUG) && !defined(MBS_SIMBODY_RELEASE)
#error "Debian's Simbody is built without NDEBUG: compile this program without -DNDEBUG"
#endif

#include <Simbody.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_math.hpp"
#include "compare_engines_config.h"
#include "mbs/mbs.h"

namespace {

using namespace mbs_bench;
constexpr double kTol = 1e-9;
const int kChainSizes[] = {1, 5, 10, 20, 50, 100, 200};

std::string fmt(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}
std::string fmt3(const double* v) { return fmt(v[0]) + " " + fmt(v[1]) + " " + fmt(v[2]); }
std::string fmt4(const double* v) { return fmt3(v) + " " + fmt(v[3]); }

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

//---------------------------------- the model all engines share --------------------------------

enum JointType { kPin = 0, kBall = 1, kFree = 2 };
const char* joint_name(int t) { return t == kPin ? "pin" : t == kBall ? "ball" : "free"; }
int joint_nq(int t) { return t == kPin ? 1 : t == kBall ? 4 : 7; }
int joint_nu(int t) { return t == kPin ? 1 : t == kBall ? 3 : 6; }

struct BodyDef {
  int parent = 0;  // 0 = Ground
  int type = kPin;
  double angles[3] = {0, 0, 0};  // F on the parent: body-fixed X-Y-Z angles
  double R_PF[9];                // ... the rotation they give
  double p_PF[3] = {0, 0, 0};
  double angles_BM[3] = {0, 0, 0};  // M on this body, as F: body-fixed X-Y-Z angles
  double R_BM[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double p_BM[3] = {0, 0, 0};
  double mass = 1;
  double com[3] = {0, 0, 0};     // in B
  double d[3] = {1, 1, 1};       // principal central moments
  double qI[4] = {1, 0, 0, 0};   // principal axes in B as a quaternion
  double I6[6];                  // central inertia in B: xx yy zz xy xz yz
};

struct Model {
  std::string name;
  std::vector<BodyDef> b;  // b[0] is Ground (unused)
  double g[3] = {0, 0, -9.81};
  double u_max = 3;  // speeds of random states in [-u_max, u_max]
  int n = 0, nq = 0, nu = 0;
  std::vector<int> qadr, uadr;  // canonical layout: body after body
  int count[3] = {0, 0, 0};
  void layout() {
    n = (int)b.size() - 1;
    qadr.assign(n + 1, 0);
    uadr.assign(n + 1, 0);
    nq = nu = 0;
    count[0] = count[1] = count[2] = 0;
    for (int i = 1; i <= n; i++) {
      qadr[i] = nq;
      uadr[i] = nu;
      nq += joint_nq(b[i].type);
      nu += joint_nu(b[i].type);
      count[b[i].type]++;
    }
  }
};

std::string body_name(int i) { return i == 0 ? "world" : "b" + std::to_string(i); }

// the central inertia in B (I6) from the principal moments d and their axes qI
void set_inertia(BodyDef& bd) {
  double R[9];
  quat_to_rot(R, bd.qI);
  double I[9];
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

// General joint frames, as in OpenSim models: F on the parent and M on the body both have a
// random rotation (uniform body-fixed X-Y-Z angles) and a random offset in [-reach, reach]^3.
void random_body(Rng& rng, BodyDef& bd, double reach, double com_reach, double i_lo, double i_hi) {
  for (int k = 0; k < 3; k++) bd.angles[k] = rng.uniform(-kPi, kPi);
  rot_body_xyz(bd.R_PF, bd.angles);
  for (int k = 0; k < 3; k++) bd.p_PF[k] = rng.uniform(-reach, reach);
  for (int k = 0; k < 3; k++) bd.angles_BM[k] = rng.uniform(-kPi, kPi);
  rot_body_xyz(bd.R_BM, bd.angles_BM);
  for (int k = 0; k < 3; k++) bd.p_BM[k] = rng.uniform(-reach, reach);
  bd.mass = rng.uniform(0.5, 2.0);
  for (int k = 0; k < 3; k++) bd.com[k] = rng.uniform(-com_reach, com_reach);
  const double s = bd.mass * rng.uniform(i_lo, i_hi);
  for (int k = 0; k < 3; k++) bd.d[k] = s * rng.uniform(1.0, 1.9);  // max < sum of the others
  rng.unit_quat(bd.qI);
  set_inertia(bd);
}

// body-fixed X-Y-Z angles of R = Rx(a0) Ry(a1) Rz(a2)
void rot_to_body_xyz(double a[3], const double R[9]) {
  a[1] = std::asin(std::max(-1.0, std::min(1.0, R[2])));
  a[0] = std::atan2(-R[5], R[8]);
  a[2] = std::atan2(-R[1], R[0]);
}

// The same model with every body frame moved onto its M frame (X_BM = identity): the centers of
// mass and principal axes re-expressed in M, each child's F frame in its parent's M frame. The
// coordinates and speeds are unchanged (they relate F and M). MuJoCo has no outboard joint
// frame (a hinge turns about an axis through a point of its body), so it is given this form,
// as a model converter would; so is the 80-bit reference.
Model m_frame_model(const Model& m) {
  Model r = m;
  for (int i = 1; i <= m.n; i++) {
    const BodyDef& b = m.b[i];
    BodyDef& o = r.b[i];
    double d[3];
    for (int k = 0; k < 3; k++) d[k] = b.com[k] - b.p_BM[k];
    mat_tvec(o.com, b.R_BM, d);
    double qBM[4], qMB[4];
    rot_to_quat(qBM, b.R_BM);
    qMB[0] = qBM[0];
    for (int k = 1; k < 4; k++) qMB[k] = -qBM[k];
    quat_mul(o.qI, qMB, b.qI);
    set_inertia(o);
    for (int k = 0; k < 3; k++) o.angles_BM[k] = o.p_BM[k] = 0;
    rot_body_xyz(o.R_BM, o.angles_BM);
    const BodyDef& p = m.b[b.parent];
    if (b.parent > 0) {
      double R[9], Rt[9];
      for (int x = 0; x < 3; x++)
        for (int y = 0; y < 3; y++) Rt[3 * x + y] = p.R_BM[3 * y + x];
      mat_mul(R, Rt, b.R_PF);
      rot_to_body_xyz(o.angles, R);
      rot_body_xyz(o.R_PF, o.angles);
      for (int k = 0; k < 3; k++) d[k] = b.p_PF[k] - p.p_BM[k];
      mat_tvec(o.p_PF, p.R_BM, d);
    }
  }
  return r;
}

// a random tree: random parents (earlier bodies), pin or ball joints, free only under Ground
Model random_tree(uint64_t seed, int n) {
  Rng rng(seed);
  Model m;
  m.name = "tree_seed" + std::to_string(seed);
  m.b.resize(n + 1);
  for (int i = 1; i <= n; i++) {
    BodyDef& bd = m.b[i];
    bd.parent = rng.below(i);
    bd.type = bd.parent == 0 ? rng.below(3) : rng.below(2);
    random_body(rng, bd, 0.4, 0.3, 0.005, 0.05);
  }
  double dir[3] = {rng.gauss(), rng.gauss(), rng.gauss()};
  const double nd = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
  for (int k = 0; k < 3; k++) m.g[k] = 9.81 * dir[k] / nd;
  m.layout();
  return m;
}

// Pin chains: body i hangs from body i-1 by a pin whose F frame has a random rotation (uniform
// body-fixed X-Y-Z angles) and a random offset, so the joint axes point in random directions (a
// spatial chain, not a planar one); gravity (0, 0, -9.81).
struct ChainShape {
  const char* tag;
  double reach, com, i_lo, i_hi;  // offsets and COMs in [-reach, reach]^3 ..., moments / mass
  double u_max;                   // speeds of the random states in [-u_max, u_max]
};
// The timed chains: compact bodies (radius of gyration ~0.3 m) on 0.1 m offsets. Their mass
// matrices are well conditioned, so MuJoCo's qacc (composite inertia M + LDL' solve) stays
// within 1e-9 of the O(n) solutions on 200 bodies.
const ChainShape kTimingChain = {"", 0.1, 0.1, 0.05, 0.2, 1.0};
// Long links (0.3 m) and light bodies: cond(M) ~ 1e6 at 200 bodies. MuJoCo's qacc then drifts
// by up to ~1e-8 from an 80-bit reference (mbstudy and Simbody stay ~1e-12), so this one is
// reported for information in --check: only mbstudy and Simbody are held to the tolerance.
const ChainShape kLongChain = {"_long", 0.3, 0.3, 0.005, 0.05, 3.0};

Model pin_chain(int n, const ChainShape& shape = kTimingChain) {
  Rng rng(1000 + (uint64_t)n);
  Model m;
  m.name = "chain" + std::to_string(n) + shape.tag;
  m.u_max = shape.u_max;
  m.b.resize(n + 1);
  for (int i = 1; i <= n; i++) {
    m.b[i].parent = i - 1;
    m.b[i].type = kPin;
    random_body(rng, m.b[i], shape.reach, shape.com, shape.i_lo, shape.i_hi);
  }
  m.layout();
  return m;
}

// a state in the canonical layout; u of a ball/free body is (w_FM in F[, v_FM in F]), the
// applied generalized forces are dual to u
struct StateDef {
  std::vector<double> q, u, f;
};

StateDef random_state(Rng& rng, const Model& m, bool with_forces) {
  StateDef s;
  s.q.assign(m.nq, 0);
  s.u.assign(m.nu, 0);
  s.f.assign(m.nu, 0);
  for (int i = 1; i <= m.n; i++) {
    double* q = &s.q[m.qadr[i]];
    const int t = m.b[i].type;
    if (t == kPin) {
      q[0] = rng.uniform(-kPi, kPi);
    } else {
      rng.unit_quat(q);
      if (t == kFree)
        for (int k = 4; k < 7; k++) q[k] = rng.uniform(-1, 1);
    }
    for (int k = 0; k < joint_nu(t); k++) {
      s.u[m.uadr[i] + k] = rng.uniform(-m.u_max, m.u_max);
      if (with_forces) s.f[m.uadr[i] + k] = rng.uniform(-2, 2);
    }
  }
  return s;
}

//---------------------------------- mbstudy ----------------------------------------------------

struct MbsEngine {
  mbs_system* sys = nullptr;
  mbs_state* st = nullptr;
  std::vector<int> qadr, uadr;
  std::vector<int> uperm;  // canonical speed index -> mbstudy's
  std::vector<std::string> names;
  int nq = 0, nu = 0;
  ~MbsEngine() {
    if (st) mbs_state_destroy(st);
    if (sys) mbs_system_destroy(sys);
  }
  bool build(const Model& m, std::string& err) {
    sys = mbs_system_create(m.name.c_str());
    if (!sys) return err = "mbs_system_create failed", false;
    names.resize(m.n + 1);
    for (int i = 1; i <= m.n; i++) names[i] = body_name(i);
    for (int i = 1; i <= m.n; i++) {
      const BodyDef& bd = m.b[i];
      const mbs_mobilizer_type mt = bd.type == kPin    ? MBS_MOB_PIN
                                    : bd.type == kBall ? MBS_MOB_BALL
                                                       : MBS_MOB_FREE;
      mbs_body_spec s = mbs_body_spec_default(names[i].c_str(), bd.parent, mt);
      for (int k = 0; k < 3; k++) {
        s.X_PF.angles[k] = bd.angles[k];
        s.X_PF.p[k] = bd.p_PF[k];
        s.X_BM.angles[k] = bd.angles_BM[k];
        s.X_BM.p[k] = bd.p_BM[k];
        s.com[k] = bd.com[k];
      }
      s.mass = bd.mass;
      for (int k = 0; k < 6; k++) s.inertia[k] = bd.I6[k];
      const int id = mbs_system_add_body(sys, &s);
      if (id != i) return err = strf("mbs_system_add_body(%d) -> %d: %s", i, id,
                                     mbs_system_error(sys)->message), false;
    }
    if (mbs_system_add_gravity(sys, m.g) < 0 || mbs_system_finalize(sys) != MBS_OK)
      return err = strf("mbstudy: %s", mbs_system_error(sys)->message), false;
    st = mbs_state_create(sys);
    if (!st) return err = "mbs_state_create failed", false;
    nq = mbs_system_nq(sys);
    nu = mbs_system_nu(sys);
    if (nq != m.nq || nu != m.nu || mbs_system_nbody(sys) != m.n + 1)
      return err = strf("mbstudy: nbody %d nq %d nu %d, expected %d %d %d", mbs_system_nbody(sys),
                        nq, nu, m.n + 1, m.nq, m.nu), false;
    qadr.assign(m.n + 1, 0);
    uadr.assign(m.n + 1, 0);
    uperm.assign(m.nu, 0);
    for (int i = 1; i <= m.n; i++) {
      qadr[i] = mbs_body_qadr(sys, i);
      uadr[i] = mbs_body_uadr(sys, i);
      for (int k = 0; k < joint_nu(m.b[i].type); k++) uperm[m.uadr[i] + k] = uadr[i] + k;
      if (mbs_body_nq(sys, i) != joint_nq(m.b[i].type) ||
          mbs_body_nu(sys, i) != joint_nu(m.b[i].type))
        return err = strf("mbstudy: body %d has nq %d nu %d", i, mbs_body_nq(sys, i),
                          mbs_body_nu(sys, i)), false;
    }
    return true;
  }
  // canonical -> native
  void native(const Model& m, const StateDef& s, std::vector<double>& q, std::vector<double>& u,
              std::vector<double>& f) const {
    q.assign(nq, 0);
    u.assign(nu, 0);
    f.assign(nu, 0);
    for (int i = 1; i <= m.n; i++) {
      const int t = m.b[i].type;
      for (int k = 0; k < joint_nq(t); k++) q[qadr[i] + k] = s.q[m.qadr[i] + k];
      for (int k = 0; k < joint_nu(t); k++) {
        u[uadr[i] + k] = s.u[m.uadr[i] + k];
        f[uadr[i] + k] = s.f[m.uadr[i] + k];
      }
    }
  }
  bool accel(const Model& m, const StateDef& s, std::vector<double>& udot, std::string& err) {
    std::vector<double> q, u, f;
    native(m, s, q, u, f);
    std::memcpy(mbs_state_upd_q(st), q.data(), sizeof(double) * nq);
    std::memcpy(mbs_state_upd_u(st), u.data(), sizeof(double) * nu);
    std::memcpy(mbs_state_upd_applied_mobility_forces(st), f.data(), sizeof(double) * nu);
    if (mbs_realize_acceleration(sys, st) != MBS_OK)
      return err = strf("mbstudy: %s", mbs_state_error(st)->message), false;
    const double* ud = mbs_get_udot(sys, st);
    if (!ud) return err = strf("mbstudy: %s", mbs_state_error(st)->message), false;
    udot.assign(m.nu, 0);
    for (int i = 1; i <= m.n; i++)
      for (int k = 0; k < joint_nu(m.b[i].type); k++) udot[m.uadr[i] + k] = ud[uadr[i] + k];
    return true;
  }
  // tau = M udot + C - f_applied (gravity and the State's applied forces)
  bool inverse(const Model& m, const StateDef& s, const std::vector<double>& udot_c,
               std::vector<double>& tau, std::string& err) {
    std::vector<double> q, u, f;
    native(m, s, q, u, f);
    std::memcpy(mbs_state_upd_q(st), q.data(), sizeof(double) * nq);
    std::memcpy(mbs_state_upd_u(st), u.data(), sizeof(double) * nu);
    std::memcpy(mbs_state_upd_applied_mobility_forces(st), f.data(), sizeof(double) * nu);
    std::vector<double> ud(nu), t(nu);
    for (int c = 0; c < m.nu; c++) ud[uperm[c]] = udot_c[c];
    if (mbs_realize_dynamics(sys, st) != MBS_OK ||
        mbs_calc_inverse_dynamics(sys, st, ud.data(), t.data()) != MBS_OK)
      return err = strf("mbstudy: %s", mbs_state_error(st)->message), false;
    tau.assign(m.nu, 0);
    for (int c = 0; c < m.nu; c++) tau[c] = t[uperm[c]];
    return true;
  }
  // the dense mass matrix, canonical order, row-major
  bool mass(const Model& m, const StateDef& s, std::vector<double>& M, std::string& err) {
    std::vector<double> q, u, f;
    native(m, s, q, u, f);
    std::memcpy(mbs_state_upd_q(st), q.data(), sizeof(double) * nq);
    std::vector<double> Mn((size_t)nu * nu);
    if (mbs_realize_position(sys, st) != MBS_OK ||
        mbs_calc_mass_matrix(sys, st, Mn.data()) != MBS_OK)
      return err = strf("mbstudy: %s", mbs_state_error(st)->message), false;
    M.assign((size_t)m.nu * m.nu, 0);
    for (int i = 0; i < m.nu; i++)
      for (int j = 0; j < m.nu; j++) M[(size_t)i * m.nu + j] = Mn[(size_t)uperm[i] * nu + uperm[j]];
    return true;
  }
};

//---------------------------------- Simbody ----------------------------------------------------

struct SbEngine {
  SimTK::MultibodySystem sys;
  SimTK::SimbodyMatterSubsystem matter;
  SimTK::GeneralForceSubsystem forces;
  SimTK::Force::DiscreteForces applied;
  SimTK::State state;
  std::vector<SimTK::MobilizedBody> mobod;
  std::vector<int> qadr, uadr;
  SbEngine() : matter(sys), forces(sys) {}

  bool build(const Model& m, std::string& err) {
    using namespace SimTK;
    Force::Gravity gravity(forces, matter, Vec3(m.g[0], m.g[1], m.g[2]));
    (void)gravity;
    applied = Force::DiscreteForces(forces, matter);
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
      const Transform X_BM(Rotation(BodyRotationSequence, bd.angles_BM[0], XAxis,
                                    bd.angles_BM[1], YAxis, bd.angles_BM[2], ZAxis),
                           Vec3(bd.p_BM[0], bd.p_BM[1], bd.p_BM[2]));
      MobilizedBody& parent = mobod[bd.parent];
      if (bd.type == kPin)
        mobod.push_back(MobilizedBody::Pin(parent, X_PF, body, X_BM));
      else if (bd.type == kBall)
        mobod.push_back(MobilizedBody::Ball(parent, X_PF, body, X_BM));
      else
        mobod.push_back(MobilizedBody::Free(parent, X_PF, body, X_BM));
    }
    sys.realizeTopology();
    state = sys.getDefaultState();
    sys.realizeModel(state);
    if (state.getNQ() != m.nq || state.getNU() != m.nu)
      return err = strf("Simbody: nq %d nu %d, expected %d %d", state.getNQ(), state.getNU(), m.nq,
                        m.nu), false;
    qadr.assign(m.n + 1, 0);
    uadr.assign(m.n + 1, 0);
    for (int i = 1; i <= m.n; i++) {
      qadr[i] = mobod[i].getFirstQIndex(state);
      uadr[i] = mobod[i].getFirstUIndex(state);
      if (mobod[i].getNumQ(state) != joint_nq(m.b[i].type) ||
          mobod[i].getNumU(state) != joint_nu(m.b[i].type))
        return err = strf("Simbody: body %d has nq %d nu %d", i, mobod[i].getNumQ(state),
                          mobod[i].getNumU(state)), false;
    }
    return true;
  }
  // Simbody's Ball and Free use the same q and u as mbstudy: only the order may differ
  void native(const Model& m, const StateDef& s, SimTK::Vector& q, SimTK::Vector& u,
              SimTK::Vector& f) const {
    q.resize(m.nq);
    u.resize(m.nu);
    f.resize(m.nu);
    for (int i = 1; i <= m.n; i++) {
      const int t = m.b[i].type;
      for (int k = 0; k < joint_nq(t); k++) q[qadr[i] + k] = s.q[m.qadr[i] + k];
      for (int k = 0; k < joint_nu(t); k++) {
        u[uadr[i] + k] = s.u[m.uadr[i] + k];
        f[uadr[i] + k] = s.f[m.uadr[i] + k];
      }
    }
  }
  bool accel(const Model& m, const StateDef& s, std::vector<double>& udot, std::string&) {
    SimTK::Vector q, u, f;
    native(m, s, q, u, f);
    state.updQ() = q;
    state.updU() = u;
    applied.setAllMobilityForces(state, f);
    sys.realize(state, SimTK::Stage::Acceleration);
    const SimTK::Vector& ud = state.getUDot();
    udot.assign(m.nu, 0);
    for (int i = 1; i <= m.n; i++)
      for (int k = 0; k < joint_nu(m.b[i].type); k++) udot[m.uadr[i] + k] = ud[uadr[i] + k];
    return true;
  }
  // the residual M udot + C - (mobility and body forces of every force element, gravity and the
  // applied forces included): Simbody's inverse dynamics
  void inverse_native(const SimTK::Vector& knownUdot, SimTK::Vector& tau) {
    sys.realize(state, SimTK::Stage::Dynamics);
    matter.calcResidualForceIgnoringConstraints(
        state, sys.getMobilityForces(state, SimTK::Stage::Dynamics),
        sys.getRigidBodyForces(state, SimTK::Stage::Dynamics), knownUdot, tau);
  }
  bool inverse(const Model& m, const StateDef& s, const std::vector<double>& udot_c,
               std::vector<double>& tau, std::string&) {
    SimTK::Vector q, u, f, ud(m.nu), t;
    native(m, s, q, u, f);
    state.updQ() = q;
    state.updU() = u;
    applied.setAllMobilityForces(state, f);
    for (int i = 1; i <= m.n; i++)
      for (int k = 0; k < joint_nu(m.b[i].type); k++) ud[uadr[i] + k] = udot_c[m.uadr[i] + k];
    inverse_native(ud, t);
    tau.assign(m.nu, 0);
    for (int i = 1; i <= m.n; i++)
      for (int k = 0; k < joint_nu(m.b[i].type); k++) tau[m.uadr[i] + k] = t[uadr[i] + k];
    return true;
  }
  bool mass(const Model& m, const StateDef& s, std::vector<double>& M, std::string&) {
    SimTK::Vector q, u, f;
    native(m, s, q, u, f);
    state.updQ() = q;
    sys.realize(state, SimTK::Stage::Position);
    SimTK::Matrix Mn;
    matter.calcM(state, Mn);
    std::vector<int> perm(m.nu);
    for (int i = 1; i <= m.n; i++)
      for (int k = 0; k < joint_nu(m.b[i].type); k++) perm[m.uadr[i] + k] = uadr[i] + k;
    M.assign((size_t)m.nu * m.nu, 0);
    for (int i = 0; i < m.nu; i++)
      for (int j = 0; j < m.nu; j++) M[(size_t)i * m.nu + j] = Mn(perm[i], perm[j]);
    return true;
  }
};

//---------------------------------- MuJoCo -----------------------------------------------------

std::string mjcf_body(const Model& m, const std::vector<std::vector<int>>& children, int i,
                      int depth) {
  const BodyDef& bd = m.b[i];
  const std::string ind(2 * depth, ' ');
  double qF[4];
  rot_to_quat(qF, bd.R_PF);
  std::string x = ind + "<body name=\"" + body_name(i) + "\" pos=\"" + fmt3(bd.p_PF) +
                  "\" quat=\"" + fmt4(qF) + "\">\n";
  if (bd.type == kPin)
    x += ind + "  <joint name=\"j" + std::to_string(i) +
         "\" type=\"hinge\" pos=\"0 0 0\" axis=\"0 0 1\" limited=\"false\"/>\n";
  else if (bd.type == kBall)
    x += ind + "  <joint name=\"j" + std::to_string(i) +
         "\" type=\"ball\" pos=\"0 0 0\" limited=\"false\"/>\n";
  else
    x += ind + "  <freejoint name=\"j" + std::to_string(i) + "\"/>\n";
  x += ind + "  <inertial pos=\"" + fmt3(bd.com) + "\" mass=\"" + fmt(bd.mass) +
       "\" diaginertia=\"" + fmt3(bd.d) + "\" quat=\"" + fmt4(bd.qI) + "\"/>\n";
  for (int c : children[i]) x += mjcf_body(m, children, c, depth + 1);
  x += ind + "</body>\n";
  return x;
}

std::string make_mjcf(const Model& m) {
  std::vector<std::vector<int>> children(m.n + 1);
  for (int i = 1; i <= m.n; i++) children[m.b[i].parent].push_back(i);
  std::string x = "<mujoco model=\"" + m.name + "\">\n";
  x += "  <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n";
  x += "  <option gravity=\"" + fmt3(m.g) + "\">\n    <flag contact=\"disable\"/>\n  </option>\n";
  x += "  <worldbody>\n";
  for (int c : children[0]) x += mjcf_body(m, children, c, 2);
  x += "  </worldbody>\n</mujoco>\n";
  return x;
}

// URDF for a pin chain: flat, so its depth is not limited by the XML parser. Each link frame is
// its joint frame (= F = M at q = 0); the inertia is given in its principal frame (origin rpy +
// diagonal tensor). The massless root link "base" has no joint: MuJoCo fuses it into the world.
std::string make_urdf(const Model& m) {
  std::string x = "<robot name=\"" + m.name + "\">\n";
  x += "  <mujoco>\n    <compiler angle=\"radian\" inertiafromgeom=\"false\" fusestatic=\"true\" "
       "discardvisual=\"true\"/>\n  </mujoco>\n";
  x += "  <link name=\"base\"/>\n";
  for (int i = 1; i <= m.n; i++) {
    const BodyDef& bd = m.b[i];
    if (bd.type != kPin) return "";
    double RI[9], rpyI[3];
    quat_to_rot(RI, bd.qI);
    rot_to_rpy(rpyI, RI);
    x += "  <link name=\"" + body_name(i) + "\">\n    <inertial>\n      <origin xyz=\"" +
         fmt3(bd.com) + "\" rpy=\"" + fmt3(rpyI) + "\"/>\n      <mass value=\"" + fmt(bd.mass) +
         "\"/>\n      <inertia ixx=\"" + fmt(bd.d[0]) + "\" iyy=\"" + fmt(bd.d[1]) + "\" izz=\"" +
         fmt(bd.d[2]) + "\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>\n    </inertial>\n  </link>\n";
  }
  for (int i = 1; i <= m.n; i++) {
    const BodyDef& bd = m.b[i];
    double rpyF[3];
    rot_to_rpy(rpyF, bd.R_PF);
    x += "  <joint name=\"j" + std::to_string(i) + "\" type=\"continuous\">\n    <parent link=\"" +
         (bd.parent == 0 ? std::string("base") : body_name(bd.parent)) +
         "\"/>\n    <child link=\"" + body_name(i) + "\"/>\n    <origin xyz=\"" + fmt3(bd.p_PF) +
         "\" rpy=\"" + fmt3(rpyF) + "\"/>\n    <axis xyz=\"0 0 1\"/>\n  </joint>\n";
  }
  x += "</robot>\n";
  return x;
}

mjModel* load_mujoco_text(const std::string& text, const char* fname, std::string& err) {
  std::unique_ptr<mjVFS> vfs(new mjVFS);  // ~2 MB: not on the stack
  mj_defaultVFS(vfs.get());
  if (mj_makeEmptyFileVFS(vfs.get(), fname, (int)text.size()) != 0) {
    err = "MuJoCo: mj_makeEmptyFileVFS failed";
    return nullptr;
  }
  const int id = mj_findFileVFS(vfs.get(), fname);
  std::memcpy(vfs->filedata[id], text.data(), text.size());
  char e[1000] = "";
  mjModel* m = mj_loadXML(fname, vfs.get(), e, sizeof e);
  mj_deleteVFS(vfs.get());
  if (!m) err = std::string("MuJoCo: ") + e;
  return m;
}

struct MjEngine {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  std::string source;                 // "MJCF" or "URDF"
  std::vector<int> qposadr, dofadr;   // per body of the Model
  ~MjEngine() {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
  }

  bool build(const Model& mod, bool urdf, std::string& err) {
    const std::string text = urdf ? make_urdf(mod) : make_mjcf(mod);
    if (text.empty()) return err = "no URDF for this model", false;
    source = urdf ? "URDF" : "MJCF";
    m = load_mujoco_text(text, urdf ? "model.urdf" : "model.xml", err);
    if (!m) return false;
    // run-time options (the same values the MJCF sets; URDF has no <option>)
    for (int k = 0; k < 3; k++) m->opt.gravity[k] = mod.g[k];
    m->opt.disableflags |= mjDSBL_CONTACT;
    d = mj_makeData(m);
    return verify(mod, err);
  }

  // Field-by-field check that the compiled model is the intended one.
  bool verify(const Model& mod, std::string& err) {
    const double tol = 1e-14;
    if (m->nbody != mod.n + 1 || m->njnt != mod.n || m->nq != mod.nq || m->nv != mod.nu)
      return err = strf("MuJoCo (%s): nbody %d njnt %d nq %d nv %d, expected %d %d %d %d",
                        source.c_str(), m->nbody, m->njnt, m->nq, m->nv, mod.n + 1, mod.n, mod.nq,
                        mod.nu), false;
    if (m->ngeom || m->neq || m->ntendon || m->nu || m->nsite > 0 || m->nmocap)
      return err = strf("MuJoCo (%s): unexpected elements: ngeom %d neq %d ntendon %d nu %d",
                        source.c_str(), m->ngeom, m->neq, m->ntendon, m->nu), false;
    if (m->body_mass[0] != 0) return err = "MuJoCo: the world body has mass", false;
    qposadr.assign(mod.n + 1, -1);
    dofadr.assign(mod.n + 1, -1);
    std::vector<int> mjid(mod.n + 1, 0);
    for (int i = 1; i <= mod.n; i++) {
      mjid[i] = mj_name2id(m, mjOBJ_BODY, body_name(i).c_str());
      if (mjid[i] <= 0) return err = "MuJoCo: body " + body_name(i) + " missing", false;
    }
    for (int i = 1; i <= mod.n; i++) {
      const BodyDef& bd = mod.b[i];
      const int b = mjid[i];
      const std::string who = strf("MuJoCo (%s) body %s: ", source.c_str(), body_name(i).c_str());
      if (m->body_parentid[b] != mjid[bd.parent])
        return err = who + "wrong parent " + std::to_string(m->body_parentid[b]), false;
      if (m->body_jntnum[b] != 1) return err = who + "joint count != 1", false;
      const int j = m->body_jntadr[b];
      const int want = bd.type == kPin ? mjJNT_HINGE : bd.type == kBall ? mjJNT_BALL : mjJNT_FREE;
      if (m->jnt_type[j] != want) return err = who + "wrong joint type", false;
      if (m->jnt_limited[j] || m->jnt_stiffness[j] != 0)
        return err = who + "joint limited or stiff", false;
      for (int k = 0; k < 3; k++)
        if (m->jnt_pos[3 * j + k] != 0) return err = who + "joint not at the body origin", false;
      if (bd.type == kPin &&
          (m->jnt_axis[3 * j] != 0 || m->jnt_axis[3 * j + 1] != 0 || m->jnt_axis[3 * j + 2] != 1))
        return err = who + "hinge axis is not z", false;
      qposadr[i] = m->jnt_qposadr[j];
      dofadr[i] = m->jnt_dofadr[j];
      for (int k = 0; k < joint_nu(bd.type); k++) {
        const int v = dofadr[i] + k;
        if (m->dof_damping[v] != 0 || m->dof_armature[v] != 0 || m->dof_frictionloss[v] != 0)
          return err = who + "damping, armature or friction loss", false;
      }
      // frame F: body pos/quat (for a free joint they only give qpos0, still X_GF here)
      double qF[4];
      rot_to_quat(qF, bd.R_PF);
      const double* bq = m->body_quat + 4 * b;
      const double sgn = (bq[0] * qF[0] + bq[1] * qF[1] + bq[2] * qF[2] + bq[3] * qF[3]) < 0 ? -1 : 1;
      for (int k = 0; k < 4; k++)
        if (std::fabs(sgn * bq[k] - qF[k]) > tol) return err = who + "body_quat differs", false;
      for (int k = 0; k < 3; k++)
        if (std::fabs(m->body_pos[3 * b + k] - bd.p_PF[k]) > tol)
          return err = who + "body_pos differs", false;
      // mass properties
      if (std::fabs(m->body_mass[b] - bd.mass) > tol * bd.mass)
        return err = who + "mass differs", false;
      for (int k = 0; k < 3; k++)
        if (std::fabs(m->body_ipos[3 * b + k] - bd.com[k]) > tol)
          return err = who + "center of mass differs", false;
      double R[9];
      quat_to_rot(R, m->body_iquat + 4 * b);
      const double* dm = m->body_inertia + 3 * b;
      double I[9];
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
          double v = 0;
          for (int k = 0; k < 3; k++) v += R[3 * r + k] * dm[k] * R[3 * c + k];
          I[3 * r + c] = v;
        }
      const double want6[6] = {I[0], I[4], I[8], I[1], I[2], I[5]};
      const double scale = bd.d[0] + bd.d[1] + bd.d[2];
      for (int k = 0; k < 6; k++)
        if (std::fabs(want6[k] - bd.I6[k]) > 1e-13 * scale)
          return err = who + strf("inertia differs: component %d %.17g vs %.17g", k, want6[k],
                                  bd.I6[k]), false;
    }
    for (int k = 0; k < 3; k++)
      if (m->opt.gravity[k] != mod.g[k]) return err = "MuJoCo: gravity differs", false;
    return true;
  }

  // canonical -> MuJoCo qpos, qvel, qfrc_applied
  void native(const Model& mod, const StateDef& s, double* qpos, double* qvel,
              double* qfrc) const {
    for (int i = 1; i <= mod.n; i++) {
      const BodyDef& bd = mod.b[i];
      const double* q = &s.q[mod.qadr[i]];
      const double* u = &s.u[mod.uadr[i]];
      const double* f = &s.f[mod.uadr[i]];
      double* qp = qpos + qposadr[i];
      double* qv = qvel + dofadr[i];
      double* qf = qfrc + dofadr[i];
      if (bd.type == kPin) {
        qp[0] = q[0];
        qv[0] = u[0];
        qf[0] = f[0];
      } else if (bd.type == kBall) {
        double R_FM[9];
        quat_to_rot(R_FM, q);
        for (int k = 0; k < 4; k++) qp[k] = q[k];
        mat_tvec(qv, R_FM, u);  // w in M
        mat_tvec(qf, R_FM, f);  // torque in M (dual)
      } else {
        // X_GM = X_GF X_FM (the parent is Ground)
        double R_FM[9], qGF[4];
        quat_to_rot(R_FM, q);
        rot_to_quat(qGF, bd.R_PF);
        double pF[3];
        mat_vec(pF, bd.R_PF, q + 4);
        for (int k = 0; k < 3; k++) qp[k] = bd.p_PF[k] + pF[k];
        quat_mul(qp + 3, qGF, q);
        mat_vec(qv, bd.R_PF, u + 3);      // linear velocity in Ground
        mat_tvec(qv + 3, R_FM, u);        // angular velocity in M
        mat_vec(qf, bd.R_PF, f + 3);      // force in Ground
        mat_tvec(qf + 3, R_FM, f);        // torque in M
      }
    }
  }
  // MuJoCo qacc -> canonical udot
  void to_udot(const Model& mod, const StateDef& s, const double* qacc,
               std::vector<double>& udot) const {
    udot.assign(mod.nu, 0);
    for (int i = 1; i <= mod.n; i++) {
      const BodyDef& bd = mod.b[i];
      const double* q = &s.q[mod.qadr[i]];
      const double* a = qacc + dofadr[i];
      double* ud = &udot[mod.uadr[i]];
      if (bd.type == kPin) {
        ud[0] = a[0];
      } else {
        double R_FM[9];
        quat_to_rot(R_FM, q);
        if (bd.type == kBall) {
          mat_vec(ud, R_FM, a);
        } else {
          mat_vec(ud, R_FM, a + 3);
          mat_tvec(ud + 3, bd.R_PF, a);
        }
      }
    }
  }
  bool accel(const Model& mod, const StateDef& s, std::vector<double>& udot, std::string&) {
    mj_resetData(m, d);
    native(mod, s, d->qpos, d->qvel, d->qfrc_applied);
    mj_forward(m, d);
    to_udot(mod, s, d->qacc, udot);
    return true;
  }
  // Inverse dynamics and the mass matrix, for models of pins only (qvel = u): mj_inverse gives
  // M qacc + bias (gravity included) and leaves qfrc_applied out, which is subtracted here.
  bool inverse(const Model& mod, const StateDef& s, const std::vector<double>& udot_c,
               std::vector<double>& tau, std::string& err) {
    if (mod.count[kPin] != mod.n) return err = "MuJoCo inverse: pins only", false;
    mj_resetData(m, d);
    std::vector<double> qf(m->nv, 0);
    native(mod, s, d->qpos, d->qvel, qf.data());
    for (int i = 1; i <= mod.n; i++) d->qacc[dofadr[i]] = udot_c[mod.uadr[i]];
    mj_inverse(m, d);
    tau.assign(mod.nu, 0);
    for (int i = 1; i <= mod.n; i++)
      tau[mod.uadr[i]] = d->qfrc_inverse[dofadr[i]] - qf[dofadr[i]];
    return true;
  }
  // the mass matrix with the least work MuJoCo's API allows: kinematics, composite inertias
  void mass_native() {
    mj_kinematics(m, d);
    mj_comPos(m, d);
    mj_crb(m, d);
  }
  bool mass(const Model& mod, const StateDef& s, std::vector<double>& M, std::string& err) {
    if (mod.count[kPin] != mod.n) return err = "MuJoCo mass matrix: pins only", false;
    mj_resetData(m, d);
    std::vector<double> qf(m->nv, 0), Mn((size_t)m->nv * m->nv);
    native(mod, s, d->qpos, d->qvel, qf.data());
    mass_native();
    mj_fullM(m, Mn.data(), d->qM);
    M.assign((size_t)mod.nu * mod.nu, 0);
    for (int i = 1; i <= mod.n; i++)
      for (int j = 1; j <= mod.n; j++)
        M[(size_t)mod.uadr[i] * mod.nu + mod.uadr[j]] = Mn[(size_t)dofadr[i] * m->nv + dofadr[j]];
    return true;
  }
};

//---------------------------------- 80-bit reference (pin trees) ------------------------------
// A fourth, deliberately plain solution in long double (64-bit mantissa on x86): inverse dynamics
// by Newton-Euler in Ground, the mass matrix column by column from unit accelerations, and a
// Cholesky solve. O(n^2) per state; used to tell which engine drifts on ill-conditioned chains.

using LD = long double;
struct LV {
  LD x[3];
};
LV lv(LD a, LD b, LD c) { return LV{{a, b, c}}; }
LV operator+(const LV& a, const LV& b) { return lv(a.x[0] + b.x[0], a.x[1] + b.x[1], a.x[2] + b.x[2]); }
LV operator-(const LV& a, const LV& b) { return lv(a.x[0] - b.x[0], a.x[1] - b.x[1], a.x[2] - b.x[2]); }
LV operator*(const LV& a, LD s) { return lv(a.x[0] * s, a.x[1] * s, a.x[2] * s); }
LV cross(const LV& a, const LV& b) {
  return lv(a.x[1] * b.x[2] - a.x[2] * b.x[1], a.x[2] * b.x[0] - a.x[0] * b.x[2],
            a.x[0] * b.x[1] - a.x[1] * b.x[0]);
}
LD dot(const LV& a, const LV& b) { return a.x[0] * b.x[0] + a.x[1] * b.x[1] + a.x[2] * b.x[2]; }
struct LM {
  LD a[9];
};
LM operator*(const LM& A, const LM& B) {
  LM r;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      r.a[3 * i + j] = A.a[3 * i] * B.a[j] + A.a[3 * i + 1] * B.a[3 + j] + A.a[3 * i + 2] * B.a[6 + j];
  return r;
}
LV operator*(const LM& A, const LV& v) {
  return lv(A.a[0] * v.x[0] + A.a[1] * v.x[1] + A.a[2] * v.x[2],
            A.a[3] * v.x[0] + A.a[4] * v.x[1] + A.a[5] * v.x[2],
            A.a[6] * v.x[0] + A.a[7] * v.x[1] + A.a[8] * v.x[2]);
}
LM transpose(const LM& A) {
  LM r;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r.a[3 * i + j] = A.a[3 * j + i];
  return r;
}
LM lrot(int axis, LD t) {
  LM R{};
  const LD c = cosl(t), s = sinl(t);
  const int i1 = (axis + 1) % 3, i2 = (axis + 2) % 3;
  R.a[4 * axis] = 1;
  R.a[3 * i1 + i1] = c;
  R.a[3 * i1 + i2] = -s;
  R.a[3 * i2 + i1] = s;
  R.a[3 * i2 + i2] = c;
  return R;
}
LV lvec(const double* v) { return lv(v[0], v[1], v[2]); }

// generalized forces tau = M udot + bias(q, u) (gravity optional) for a tree of pins
std::vector<LD> ref_inverse_dynamics(const Model& m, const double* q, const double* u,
                                     const std::vector<LD>& udot, bool gravity) {
  const int n = m.n;
  std::vector<LM> R(n + 1);
  std::vector<LV> o(n + 1), w(n + 1), alpha(n + 1), acc(n + 1), z(n + 1), c(n + 1), F(n + 1),
      N(n + 1);
  R[0] = lrot(0, 0);
  o[0] = w[0] = alpha[0] = lv(0, 0, 0);
  acc[0] = gravity ? lv(-m.g[0], -m.g[1], -m.g[2]) : lv(0, 0, 0);  // gravity as base acceleration
  for (int i = 1; i <= n; i++) {
    const BodyDef& b = m.b[i];
    const int p = b.parent;
    const LM R_GF = R[p] * (lrot(0, b.angles[0]) * lrot(1, b.angles[1]) * lrot(2, b.angles[2]));
    R[i] = R_GF * lrot(2, q[m.qadr[i]]);
    const LV r = R[p] * lvec(b.p_PF);  // parent origin -> this origin
    o[i] = o[p] + r;
    z[i] = lv(R_GF.a[2], R_GF.a[5], R_GF.a[8]);  // the pin axis, fixed in F on the parent
    const LD ui = u[m.uadr[i]], udi = udot[m.uadr[i]];
    w[i] = w[p] + z[i] * ui;
    alpha[i] = alpha[p] + cross(w[p], z[i]) * ui + z[i] * udi;
    acc[i] = acc[p] + cross(alpha[p], r) + cross(w[p], cross(w[p], r));
    c[i] = R[i] * lvec(b.com);  // origin -> center of mass, in Ground
    const LV a_c = acc[i] + cross(alpha[i], c[i]) + cross(w[i], cross(w[i], c[i]));
    F[i] = a_c * (LD)b.mass;
    LM I_B;
    I_B.a[0] = b.I6[0];
    I_B.a[4] = b.I6[1];
    I_B.a[8] = b.I6[2];
    I_B.a[1] = I_B.a[3] = b.I6[3];
    I_B.a[2] = I_B.a[6] = b.I6[4];
    I_B.a[5] = I_B.a[7] = b.I6[5];
    const LM I_G = R[i] * I_B * transpose(R[i]);
    N[i] = I_G * alpha[i] + cross(w[i], I_G * w[i]);  // about the center of mass
  }
  std::vector<LV> f(n + 1, lv(0, 0, 0)), mo(n + 1, lv(0, 0, 0));  // about each body origin
  std::vector<LD> tau(m.nu, 0);
  for (int i = n; i >= 1; i--) {
    f[i] = f[i] + F[i];
    mo[i] = mo[i] + N[i] + cross(c[i], F[i]);
    tau[m.uadr[i]] = dot(z[i], mo[i]);
    const int p = m.b[i].parent;
    if (p > 0) {
      f[p] = f[p] + f[i];
      mo[p] = mo[p] + mo[i] + cross(o[i] - o[p], f[i]);
    }
  }
  return tau;
}

// udot in 80 bits; false if the model has other joints than pins
bool ref_udot(const Model& general, const StateDef& s, std::vector<double>& udot) {
  if (general.count[kPin] != general.n) return false;
  const Model m = m_frame_model(general);  // ref_inverse_dynamics knows no M frames
  const int nv = m.nu;
  const std::vector<double> u0(nv, 0);
  std::vector<LD> rhs = ref_inverse_dynamics(m, s.q.data(), s.u.data(), std::vector<LD>(nv, 0), true);
  for (int i = 0; i < nv; i++) rhs[i] = (LD)s.f[i] - rhs[i];
  std::vector<LD> A((size_t)nv * nv);
  for (int j = 0; j < nv; j++) {
    std::vector<LD> e(nv, 0);
    e[j] = 1;
    const std::vector<LD> col = ref_inverse_dynamics(m, s.q.data(), u0.data(), e, false);
    for (int i = 0; i < nv; i++) A[(size_t)i * nv + j] = col[i];
  }
  for (int j = 0; j < nv; j++) {  // Cholesky, lower triangle in place
    LD d = A[(size_t)j * nv + j];
    for (int k = 0; k < j; k++) d -= A[(size_t)j * nv + k] * A[(size_t)j * nv + k];
    if (!(d > 0)) return false;
    d = sqrtl(d);
    A[(size_t)j * nv + j] = d;
    for (int i = j + 1; i < nv; i++) {
      LD t = A[(size_t)i * nv + j];
      for (int k = 0; k < j; k++) t -= A[(size_t)i * nv + k] * A[(size_t)j * nv + k];
      A[(size_t)i * nv + j] = t / d;
    }
  }
  for (int i = 0; i < nv; i++) {
    for (int k = 0; k < i; k++) rhs[i] -= A[(size_t)i * nv + k] * rhs[k];
    rhs[i] /= A[(size_t)i * nv + i];
  }
  for (int i = nv - 1; i >= 0; i--) {
    for (int k = i + 1; k < nv; k++) rhs[i] -= A[(size_t)k * nv + i] * rhs[k];
    rhs[i] /= A[(size_t)i * nv + i];
  }
  udot.assign(nv, 0);
  for (int i = 0; i < nv; i++) udot[i] = (double)rhs[i];
  return true;
}

//---------------------------------- comparison -------------------------------------------------

struct Worst {
  double err = 0;
  std::string where;
  void update(const Model& m, const std::vector<double>& a, const std::vector<double>& b,
              const std::string& ctx) {
    for (int i = 1; i <= m.n; i++)
      for (int k = 0; k < joint_nu(m.b[i].type); k++) {
        const int c = m.uadr[i] + k;
        const double x = a[c], y = b[c];
        const double e = std::fabs(x - y) / std::max({1.0, std::fabs(x), std::fabs(y)});
        if (!(e <= err)) {  // also catches NaN
          err = std::isnan(e) ? INFINITY : e;
          where = strf("%s body %d (%s, parent %d) udot[%d]: %.15g vs %.15g", ctx.c_str(), i,
                       joint_name(m.b[i].type), m.b[i].parent, k, x, y);
        }
      }
  }
};

// the largest relative difference of two vectors (or matrices): each component against
// max(1, |a|, |b|), or, with a common scale (> 0), against max(1, scale)
struct WorstV {
  double err = 0;
  std::string where;
  void update(const std::vector<double>& a, const std::vector<double>& b, double scale,
              const std::string& ctx) {
    for (size_t c = 0; c < a.size(); c++) {
      const double x = a[c], y = b[c];
      const double s = scale > 0 ? std::max(1.0, scale) : std::max({1.0, std::fabs(x), std::fabs(y)});
      const double e = std::fabs(x - y) / s;
      if (!(e <= err)) {
        err = std::isnan(e) ? INFINITY : e;
        where = strf("%s [%zu]: %.15g vs %.15g", ctx.c_str(), c, x, y);
      }
    }
  }
};
void merge(WorstV& t, const WorstV& w) {
  if (!(w.err <= t.err)) t = w;
}
double max_abs(const std::vector<double>& v) {
  double r = 0;
  for (double x : v) r = std::max(r, std::fabs(x));
  return r;
}

// mbstudy and Simbody get the model with its general joint frames, MuJoCo the same model with
// its body frames on the M frames (m_frame_model)
struct Engines {
  MbsEngine mbs;
  SbEngine sb;
  MjEngine mj;
  Model mm;  // the model MuJoCo was given
  bool build(const Model& m, bool urdf, std::string& err) {
    mm = m_frame_model(m);
    return mbs.build(m, err) && sb.build(m, err) && mj.build(mm, urdf, err);
  }
};

struct CheckTotals {
  WorstV tau_ms, tau_mj, M_ms, M_mj;  // inverse dynamics, mass matrix (MuJoCo: pin models)
  Worst ms, mj, sj;     // mbstudy-Simbody, mbstudy-MuJoCo, Simbody-MuJoCo
  Worst mr, sr, jr;     // each engine against the 80-bit reference (pin models)
  Worst urdf_mjcf;      // MuJoCo from URDF against MuJoCo from MJCF, same chain
  int models = 0, states = 0;
  int joints[3] = {0, 0, 0};
  double max_acc = 0;
  std::vector<std::string> failed;
};

void merge(Worst& t, const Worst& w) {
  if (!(w.err <= t.err)) t = w;
}

// Compare the engines on `nstate` random states of model m and print one line. With
// mujoco_counts false (the ill-conditioned chain) MuJoCo's differences are only reported.
bool check_model(const Model& m, bool urdf, int nstate, uint64_t seed, bool mujoco_counts,
                 CheckTotals& tot) {
  Engines e;
  std::string err;
  if (!e.build(m, urdf, err)) {
    std::printf("%-13s FAILED to build: %s\n", m.name.c_str(), err.c_str());
    tot.failed.push_back(m.name + ": " + err);
    return false;
  }
  Worst ms, mj, sj, mr, sr, jr;
  WorstV tms, tmj, Mms, Mmj;
  const bool pins = m.count[kPin] == m.n;
  Rng rng(seed);
  double max_acc = 0;
  bool have_ref = false;
  for (int k = 0; k < nstate; k++) {
    const StateDef s = random_state(rng, m, true);
    std::vector<double> a1, a2, a3, ar;
    std::vector<double> udot(m.nu), t1, t2, t3, M1, M2, M3;
    for (double& x : udot) x = rng.uniform(-3, 3);
    if (!e.mbs.inverse(m, s, udot, t1, err) || !e.sb.inverse(m, s, udot, t2, err) ||
        (pins && !e.mj.inverse(e.mm, s, udot, t3, err)) || !e.mbs.mass(m, s, M1, err) ||
        !e.sb.mass(m, s, M2, err) || (pins && !e.mj.mass(e.mm, s, M3, err))) {
      std::printf("%-13s FAILED: %s\n", m.name.c_str(), err.c_str());
      tot.failed.push_back(m.name + ": " + err);
      return false;
    }
    const std::string cx = m.name + strf(" state %d", k);
    tms.update(t1, t2, 0, cx + " tau");
    Mms.update(M1, M2, max_abs(M2), cx + " M");
    if (pins) {
      tmj.update(t1, t3, 0, cx + " tau");
      Mmj.update(M1, M3, max_abs(M2), cx + " M");
    }
    if (!e.mbs.accel(m, s, a1, err) || !e.sb.accel(m, s, a2, err) ||
        !e.mj.accel(e.mm, s, a3, err)) {
      std::printf("%-13s FAILED: %s\n", m.name.c_str(), err.c_str());
      tot.failed.push_back(m.name + ": " + err);
      return false;
    }
    const std::string ctx = m.name + strf(" state %d", k);
    ms.update(m, a1, a2, ctx);
    mj.update(m, a1, a3, ctx);
    sj.update(m, a2, a3, ctx);
    if (ref_udot(m, s, ar)) {
      have_ref = true;
      mr.update(m, a1, ar, ctx);
      sr.update(m, a2, ar, ctx);
      jr.update(m, a3, ar, ctx);
    }
    for (double x : a2) max_acc = std::max(max_acc, std::fabs(x));
  }
  bool ok = ms.err <= kTol && mr.err <= kTol && sr.err <= kTol && tms.err <= kTol &&
            Mms.err <= kTol;
  if (mujoco_counts) ok = ok && mj.err <= kTol && sj.err <= kTol && jr.err <= kTol &&
                          tmj.err <= kTol && Mmj.err <= kTol;
  std::string line = strf("%-13s %3d bodies (pin %3d ball %2d free %d) nu %3d |udot|<%-7.3g "
                          "mbs-Sb %.1e mbs-Mj %.1e Sb-Mj %.1e",
                          m.name.c_str(), m.n, m.count[0], m.count[1], m.count[2], m.nu, max_acc,
                          ms.err, mj.err, sj.err);
  if (have_ref)
    line += strf(" | vs 80-bit: mbs %.1e Sb %.1e Mj %.1e", mr.err, sr.err, jr.err);
  line += strf(" | tau mbs-Sb %.1e M mbs-Sb %.1e", tms.err, Mms.err);
  if (pins) line += strf(" tau mbs-Mj %.1e M mbs-Mj %.1e", tmj.err, Mmj.err);
  line += strf(" | MuJoCo %s nbody %d nv %d", e.mj.source.c_str(), e.mj.m->nbody, e.mj.m->nv);
  if (!mujoco_counts) line += " (MuJoCo for information)";
  std::printf("%s%s\n", line.c_str(), ok ? "" : "  FAIL");
  merge(tot.ms, ms);
  merge(tot.mr, mr);
  merge(tot.sr, sr);
  merge(tot.tau_ms, tms);
  merge(tot.M_ms, Mms);
  if (mujoco_counts) {
    merge(tot.tau_mj, tmj);
    merge(tot.M_mj, Mmj);
    merge(tot.mj, mj);
    merge(tot.sj, sj);
    merge(tot.jr, jr);
  }
  tot.models++;
  tot.states += nstate;
  for (int t = 0; t < 3; t++) tot.joints[t] += m.count[t];
  tot.max_acc = std::max(tot.max_acc, max_acc);
  if (!ok) tot.failed.push_back(m.name);
  return ok;
}

// central inertia of MuJoCo body b in its body frame, from body_inertia and body_iquat
void mj_inertia(const mjModel* m, int b, double I[9]) {
  double R[9];
  quat_to_rot(R, m->body_iquat + 4 * b);
  const double* d = m->body_inertia + 3 * b;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      I[3 * r + c] = R[3 * r] * d[0] * R[3 * c] + R[3 * r + 1] * d[1] * R[3 * c + 1] +
                     R[3 * r + 2] * d[2] * R[3 * c + 2];
}

// The same chain through MuJoCo's URDF and MJCF readers: the compiled models must agree to
// round-off, field by field, and give the same qacc to the tolerance (a check of the URDF route
// where MJCF nesting is still possible).
void check_urdf_vs_mjcf(const Model& m, int nstate, CheckTotals& tot) {
  MjEngine a, b;
  std::string err;
  const Model mm = m_frame_model(m);
  if (!a.build(mm, true, err) || !b.build(mm, false, err)) {
    std::printf("%-13s URDF vs MJCF: FAILED to build: %s\n", m.name.c_str(), err.c_str());
    tot.failed.push_back(m.name + " URDF vs MJCF: " + err);
    return;
  }
  double dfield = 0;  // largest difference of a compiled body field
  for (int i = 1; i <= m.n; i++) {
    const int ia = mj_name2id(a.m, mjOBJ_BODY, body_name(i).c_str());
    const int ib = mj_name2id(b.m, mjOBJ_BODY, body_name(i).c_str());
    const double* qa = a.m->body_quat + 4 * ia;
    const double* qb = b.m->body_quat + 4 * ib;
    const double sg = qa[0] * qb[0] + qa[1] * qb[1] + qa[2] * qb[2] + qa[3] * qb[3] < 0 ? -1 : 1;
    for (int k = 0; k < 4; k++) dfield = std::max(dfield, std::fabs(qa[k] - sg * qb[k]));
    for (int k = 0; k < 3; k++) {
      dfield = std::max(dfield, std::fabs(a.m->body_pos[3 * ia + k] - b.m->body_pos[3 * ib + k]));
      dfield = std::max(dfield, std::fabs(a.m->body_ipos[3 * ia + k] - b.m->body_ipos[3 * ib + k]));
    }
    dfield = std::max(dfield, std::fabs(a.m->body_mass[ia] - b.m->body_mass[ib]));
    double Ia[9], Ib[9];
    mj_inertia(a.m, ia, Ia);
    mj_inertia(b.m, ib, Ib);
    for (int k = 0; k < 9; k++) dfield = std::max(dfield, std::fabs(Ia[k] - Ib[k]));
  }
  Worst w;
  Rng rng(7000 + (uint64_t)m.n);
  for (int k = 0; k < nstate; k++) {
    const StateDef s = random_state(rng, m, true);
    std::vector<double> x, y;
    a.accel(mm, s, x, err);
    b.accel(mm, s, y, err);
    w.update(m, x, y, m.name + strf(" state %d", k));
  }
  const bool ok = dfield <= 1e-14 && w.err <= kTol;
  std::printf("%-13s MuJoCo from URDF vs from MJCF: nbody %d/%d nv %d/%d, compiled body fields "
              "differ by <= %.1e, qacc by <= %.1e%s\n",
              m.name.c_str(), a.m->nbody, b.m->nbody, a.m->nv, b.m->nv, dfield, w.err,
              ok ? "" : "  FAIL");
  merge(tot.urdf_mjcf, w);
  if (!ok) tot.failed.push_back(m.name + " URDF vs MJCF");
}

int run_check(bool quick) {
  const int ntree = quick ? 6 : 40;
  const int nstate = quick ? 3 : 8;
  std::printf("# mbs_compare_engines --%s: mbstudy %s vs Simbody %s vs MuJoCo %s\n",
              quick ? "quick" : "check", MBS_VERSION_STRING, MBS_CMP_SIMBODY_VERSION,
              mj_versionString());
  std::printf("# tolerance: |a - b| <= %g max(1, |a|, |b|) per generalized acceleration; MuJoCo's "
              "ball/free speeds converted to mbstudy's (u = R_FM qvel, ...)\n", kTol);
  CheckTotals tot;
  std::printf("## random trees, MuJoCo from MJCF; %d random states each (q, u in [-3, 3], "
              "applied generalized forces in [-2, 2]), random gravity direction\n", nstate);
  for (int k = 0; k < ntree; k++) {
    const uint64_t seed = (uint64_t)k + 1;
    Rng pick(seed + 7777);
    const int n = 5 + pick.below(26);  // 5..30 bodies
    check_model(random_tree(seed, n), false, nstate, seed + 100, true, tot);
  }
  std::printf("## the pin chains of --time, MuJoCo from URDF; u in [-1, 1]\n");
  for (int n : kChainSizes)
    check_model(pin_chain(n), true, quick ? 2 : nstate, 5000 + (uint64_t)n, true, tot);
  for (int n : {10, 50}) check_urdf_vs_mjcf(pin_chain(n), 2, tot);
  if (!quick) {
    std::printf("## ill-conditioned chains (0.3 m links, light bodies, u in [-3, 3]): MuJoCo "
                "reported, not held to the tolerance\n");
    for (int n : {50, 200})
      check_model(pin_chain(n, kLongChain), true, nstate, 8000 + (uint64_t)n, false, tot);
  }
  std::printf("\n%d models (%d pin, %d ball, %d free joints), %d states; largest |udot| %.3g\n",
              tot.models, tot.joints[0], tot.joints[1], tot.joints[2], tot.states, tot.max_acc);
  auto show = [](const char* what, const Worst& w) {
    std::printf("worst %-22s %.3e%s%s\n", what, w.err, w.where.empty() ? "" : " at ",
                w.where.c_str());
  };
  show("mbstudy-Simbody", tot.ms);
  show("mbstudy-MuJoCo", tot.mj);
  show("Simbody-MuJoCo", tot.sj);
  show("mbstudy-80-bit ref", tot.mr);
  show("Simbody-80-bit ref", tot.sr);
  show("MuJoCo-80-bit ref", tot.jr);
  show("MuJoCo URDF-MJCF", tot.urdf_mjcf);
  auto showv = [](const char* what, const WorstV& w) {
    std::printf("worst %-22s %.3e%s%s\n", what, w.err, w.where.empty() ? "" : " at ",
                w.where.c_str());
  };
  showv("tau mbstudy-Simbody", tot.tau_ms);
  showv("tau mbstudy-MuJoCo", tot.tau_mj);
  showv("M mbstudy-Simbody", tot.M_ms);
  showv("M mbstudy-MuJoCo", tot.M_mj);
  if (!quick) std::printf("(the MuJoCo figures leave out the ill-conditioned chains)\n");
  const bool ok = tot.failed.empty();
  if (ok) {
    std::printf("PASS: all engines agree to %g\n", kTol);
  } else {
    std::printf("FAIL:");
    for (const std::string& f : tot.failed) std::printf(" [%s]", f.c_str());
    std::printf("\n");
  }
  return ok ? 0 : 1;
}

//---------------------------------- timing -----------------------------------------------------

volatile double g_sink = 0;

// One timed operation of one engine: call(k) does the work of one call on prepared state k.
struct Timed {
  std::string op, engine;
  std::function<void(int)> call;
  long ncall = 1;          // calls per repeat
  std::vector<double> us;  // microseconds per call, one entry per repeat
};

double run_calls(const Timed& t, long n) {
  const double t0 = now_seconds();
  for (long k = 0; k < n; k++) t.call((int)(k & 63));
  return now_seconds() - t0;
}

// the calls per repeat that take about `seconds`
void calibrate(Timed& t, double seconds) {
  long n = 1;
  double s = run_calls(t, n);
  while (s < 0.2 * seconds) {
    n *= 2;
    s = run_calls(t, n);
  }
  t.ncall = std::max(1L, (long)std::ceil((double)n * seconds / s));
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.empty() ? NAN : v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

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

std::string json_str(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if ((unsigned char)c < 0x20) {
      r += strf("\\u%04x", (unsigned char)c);
    } else {
      r += c;
    }
  }
  return r + "\"";
}

struct TimeOptions {
  int repeats = 7;
  double seconds = 0.1;  // per repeat of one engine's operation
  std::vector<int> sizes;
  std::string json;  // raw figures, for benchmarks/run_all.py
};

const char* const kOps[3] = {"fd", "id", "mm"};
const char* const kOpTitle[3] = {"forward dynamics", "inverse dynamics", "mass matrix"};
const char* const kEngines[3] = {"mbstudy", "Simbody", "MuJoCo"};

int run_time(const TimeOptions& o) {
  char date[64];
  const time_t tt = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tt));
  const std::string machine = strf("%s (%ld online CPUs)", cpu_model().c_str(),
                                   sysconf(_SC_NPROCESSORS_ONLN));
  const std::string simbody = strf("Simbody %s, %s (%s)", MBS_CMP_SIMBODY_VERSION,
                                   MBS_CMP_SIMBODY_BUILD, MBS_CMP_SIMBODY_DIR);
  const std::string mujoco = strf("MuJoCo %s, Debian's prebuilt library", mj_versionString());
  const std::string models =
      "spatial pin chains with general joint frames: every joint has an F frame on the parent "
      "and an M frame on the child, each with a random rotation (uniform body-fixed X-Y-Z "
      "angles) and a random offset in [-0.1, 0.1]^3, so the axes point in random directions; "
      "compact random bodies, gravity only, no applied forces. mbstudy and Simbody take the F "
      "and M frames as given; MuJoCo (which has no outboard joint frame) takes the same model "
      "with each body frame on its M frame, from URDF";
  const std::string calls =
      "each call starts from a new state (cycling through 64 random states): forward dynamics: "
      "set q, u; mbstudy mbs_realize_acceleration, Simbody realize(Acceleration), MuJoCo "
      "mj_forward (contacts disabled, no geoms). Inverse dynamics: set q, u and udot; mbstudy "
      "mbs_realize_dynamics + mbs_calc_inverse_dynamics, Simbody realize(Dynamics) + "
      "calcResidualForceIgnoringConstraints (with the force elements' forces), MuJoCo mj_inverse. "
      "Mass matrix (dense, nu x nu): set q; mbstudy mbs_realize_position + mbs_calc_mass_matrix, "
      "Simbody realize(Position) + calcM, MuJoCo mj_kinematics + mj_comPos + mj_crb + mj_fullM";
  std::printf("# time per call: median of %d interleaved repeats of ~%g s (mbstudy, Simbody, "
              "MuJoCo, mbstudy, ... within each repeat); spread = (max - min) / 2 / median\n",
              o.repeats, o.seconds);
  std::printf("# machine: %s, date: %s\n", machine.c_str(), date);
  std::printf("# mbstudy %s (%s build) C flags: %s\n", MBS_VERSION_STRING, MBS_CMP_BUILD_TYPE,
              MBS_CMP_C_INFO);
  std::printf("# this program (Simbody/MuJoCo client code) C++ flags: %s\n", MBS_CMP_CXX_INFO);
  std::printf("# %s\n# %s\n", simbody.c_str(), mujoco.c_str());
  std::printf("# models: %s\n# calls: %s; clock_gettime(CLOCK_MONOTONIC)\n\n", models.c_str(),
              calls.c_str());
  std::fflush(stdout);

  struct ModelTimes {
    std::string name;
    int n, nu;
    std::vector<Timed> t;  // op-major: fd x 3 engines, id x 3, mm x 3
    double err_fd_ms, err_fd_mj, err_id_ms, err_id_mj, err_mm_ms, err_mm_mj;
  };
  std::vector<ModelTimes> all;
  bool all_ok = true;
  for (int n : o.sizes) {
    const Model m = pin_chain(n);
    Engines e;  // timed below, within this iteration
    std::string err;
    if (!e.build(m, true, err)) {
      std::printf("chain %d: FAILED to build: %s\n", n, err.c_str());
      return 1;
    }
    // the timed models must agree before they are timed
    Rng rng(42 + n);
    std::vector<StateDef> states;
    std::vector<std::vector<double>> udots;
    for (int k = 0; k < 64; k++) {
      states.push_back(random_state(rng, m, false));
      std::vector<double> ud(m.nu);
      for (double& x : ud) x = rng.uniform(-3, 3);
      udots.push_back(ud);
    }
    ModelTimes mt;
    mt.name = m.name;
    mt.n = n;
    mt.nu = m.nu;
    Worst w1, w2;
    WorstV t1, t2, M1, M2;
    for (int k = 0; k < 4; k++) {
      std::vector<double> a1, a2, a3, b1, b2, b3, c1, c2, c3;
      bool ok = e.mbs.accel(m, states[k], a1, err) && e.sb.accel(m, states[k], a2, err) &&
                e.mj.accel(e.mm, states[k], a3, err) &&
                e.mbs.inverse(m, states[k], udots[k], b1, err) &&
                e.sb.inverse(m, states[k], udots[k], b2, err) &&
                e.mj.inverse(e.mm, states[k], udots[k], b3, err) &&
                e.mbs.mass(m, states[k], c1, err) && e.sb.mass(m, states[k], c2, err) &&
                e.mj.mass(e.mm, states[k], c3, err);
      if (!ok) {
        std::printf("chain %d: FAILED: %s\n", n, err.c_str());
        return 1;
      }
      w1.update(m, a1, a2, "");
      w2.update(m, a1, a3, "");
      t1.update(b1, b2, 0, "");
      t2.update(b1, b3, 0, "");
      M1.update(c1, c2, max_abs(c2), "");
      M2.update(c1, c3, max_abs(c2), "");
    }
    mt.err_fd_ms = w1.err;
    mt.err_fd_mj = w2.err;
    mt.err_id_ms = t1.err;
    mt.err_id_mj = t2.err;
    mt.err_mm_ms = M1.err;
    mt.err_mm_mj = M2.err;
    if (!(w1.err <= kTol && w2.err <= kTol && t1.err <= kTol && t2.err <= kTol &&
          M1.err <= kTol && M2.err <= kTol))
      all_ok = false;

    // native copies of the 64 states; applied forces are zero in the timing runs
    auto S = std::make_shared<std::vector<std::vector<double>>>(64 * 9);
    auto& v = *S;  // per state k: mbs q u udot, mj qpos qvel qacc, (unused x3)
    auto SB = std::make_shared<std::vector<SimTK::Vector>>(64 * 3);  // Simbody q u udot
    for (int k = 0; k < 64; k++) {
      std::vector<double> f;
      e.mbs.native(m, states[k], v[9 * k], v[9 * k + 1], f);
      v[9 * k + 2].assign(e.mbs.nu, 0);
      for (int c = 0; c < m.nu; c++) v[9 * k + 2][e.mbs.uperm[c]] = udots[k][c];
      SimTK::Vector sf;
      e.sb.native(m, states[k], (*SB)[3 * k], (*SB)[3 * k + 1], sf);
      (*SB)[3 * k + 2].resize(m.nu);
      for (int i = 1; i <= m.n; i++) (*SB)[3 * k + 2][e.sb.uadr[i]] = udots[k][m.uadr[i]];
      v[9 * k + 3].assign(e.mj.m->nq, 0);
      v[9 * k + 4].assign(e.mj.m->nv, 0);
      v[9 * k + 5].assign(e.mj.m->nv, 0);
      std::vector<double> qf(e.mj.m->nv, 0);
      e.mj.native(e.mm, states[k], v[9 * k + 3].data(), v[9 * k + 4].data(), qf.data());
      for (int i = 1; i <= m.n; i++) v[9 * k + 5][e.mj.dofadr[i]] = udots[k][m.uadr[i]];
    }
    std::fill(mbs_state_upd_applied_mobility_forces(e.mbs.st),
              mbs_state_upd_applied_mobility_forces(e.mbs.st) + e.mbs.nu, 0.0);
    e.sb.applied.clearAllForces(e.sb.state);
    mj_resetData(e.mj.m, e.mj.d);

    mbs_system* sys = e.mbs.sys;
    mbs_state* st = e.mbs.st;
    const size_t qb = sizeof(double) * e.mbs.nq, ub = sizeof(double) * e.mbs.nu;
    auto work = std::make_shared<std::vector<double>>((size_t)e.mbs.nu * e.mbs.nu + e.mbs.nu);
    auto mjM = std::make_shared<std::vector<double>>((size_t)e.mj.m->nv * e.mj.m->nv);
    auto sbtau = std::make_shared<SimTK::Vector>();
    auto sbM = std::make_shared<SimTK::Matrix>();
    SimTK::MultibodySystem& ssys = e.sb.sys;
    SimTK::SimbodyMatterSubsystem& smatter = e.sb.matter;
    SimTK::State& sst = e.sb.state;
    SbEngine* sbe = &e.sb;
    MjEngine* mje = &e.mj;
    mjModel* mm = e.mj.m;
    mjData* md = e.mj.d;
    auto add = [&](const char* op, const char* engine, std::function<void(int)> f) {
      Timed t;
      t.op = op;
      t.engine = engine;
      t.call = std::move(f);
      mt.t.push_back(std::move(t));
    };
    add("fd", "mbstudy", [=](int k) {
      const auto& v = *S;
      std::memcpy(mbs_state_upd_q(st), v[9 * k].data(), qb);
      std::memcpy(mbs_state_upd_u(st), v[9 * k + 1].data(), ub);
      if (mbs_realize_acceleration(sys, st) != MBS_OK) std::abort();
      g_sink = g_sink + mbs_get_udot(sys, st)[0];
    });
    add("fd", "Simbody", [=, &ssys, &sst](int k) {
      sst.updQ() = (*SB)[3 * k];
      sst.updU() = (*SB)[3 * k + 1];
      ssys.realize(sst, SimTK::Stage::Acceleration);
      g_sink = g_sink + sst.getUDot()[0];
    });
    add("fd", "MuJoCo", [=](int k) {
      const auto& v = *S;
      mju_copy(md->qpos, v[9 * k + 3].data(), mm->nq);
      mju_copy(md->qvel, v[9 * k + 4].data(), mm->nv);
      mj_forward(mm, md);
      g_sink = g_sink + md->qacc[0];
    });
    add("id", "mbstudy", [=](int k) {
      const auto& v = *S;
      std::memcpy(mbs_state_upd_q(st), v[9 * k].data(), qb);
      std::memcpy(mbs_state_upd_u(st), v[9 * k + 1].data(), ub);
      double* tau = work->data();
      if (mbs_realize_dynamics(sys, st) != MBS_OK ||
          mbs_calc_inverse_dynamics(sys, st, v[9 * k + 2].data(), tau) != MBS_OK)
        std::abort();
      g_sink = g_sink + tau[0];
    });
    add("id", "Simbody", [=, &sst](int k) {
      sst.updQ() = (*SB)[3 * k];
      sst.updU() = (*SB)[3 * k + 1];
      sbe->inverse_native((*SB)[3 * k + 2], *sbtau);
      g_sink = g_sink + (*sbtau)[0];
    });
    add("id", "MuJoCo", [=](int k) {
      const auto& v = *S;
      mju_copy(md->qpos, v[9 * k + 3].data(), mm->nq);
      mju_copy(md->qvel, v[9 * k + 4].data(), mm->nv);
      mju_copy(md->qacc, v[9 * k + 5].data(), mm->nv);
      mj_inverse(mm, md);
      g_sink = g_sink + md->qfrc_inverse[0];
    });
    add("mm", "mbstudy", [=](int k) {
      const auto& v = *S;
      std::memcpy(mbs_state_upd_q(st), v[9 * k].data(), qb);
      double* M = work->data();
      if (mbs_realize_position(sys, st) != MBS_OK || mbs_calc_mass_matrix(sys, st, M) != MBS_OK)
        std::abort();
      g_sink = g_sink + M[0];
    });
    add("mm", "Simbody", [=, &ssys, &smatter, &sst](int k) {
      sst.updQ() = (*SB)[3 * k];
      ssys.realize(sst, SimTK::Stage::Position);
      smatter.calcM(sst, *sbM);
      g_sink = g_sink + (*sbM)(0, 0);
    });
    add("mm", "MuJoCo", [=](int k) {
      const auto& v = *S;
      mju_copy(md->qpos, v[9 * k + 3].data(), mm->nq);
      mje->mass_native();
      mj_fullM(mm, mjM->data(), md->qM);
      g_sink = g_sink + (*mjM)[0];
    });
    for (Timed& t : mt.t) calibrate(t, o.seconds);
    for (int r = 0; r < o.repeats; r++)
      for (Timed& t : mt.t) t.us.push_back(run_calls(t, t.ncall) / (double)t.ncall * 1e6);
    std::fprintf(stderr, "chain %3d timed\n", n);
    all.push_back(std::move(mt));
  }

  auto spread = [](const std::vector<double>& us) {
    const double md = median_of(us);
    return 100 * 0.5 * (*std::max_element(us.begin(), us.end()) -
                        *std::min_element(us.begin(), us.end())) / md;
  };
  for (int op = 0; op < 3; op++) {
    std::printf("## %s per call (us)\n\n", kOpTitle[op]);
    std::printf("| bodies | mbstudy | Simbody | MuJoCo | mbstudy/MuJoCo | mbstudy/Simbody |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|\n");
    for (const ModelTimes& mt : all) {
      const Timed* t = &mt.t[3 * op];
      double md[3];
      for (int k = 0; k < 3; k++) md[k] = median_of(t[k].us);
      std::printf("| %d | %.3f ±%.0f%% | %.3f ±%.0f%% | %.3f ±%.0f%% | %.2f | %.2f |\n", mt.n,
                  md[0], spread(t[0].us), md[1], spread(t[1].us), md[2], spread(t[2].us),
                  md[0] / md[2], md[0] / md[1]);
    }
    std::printf("\n");
  }
  for (const ModelTimes& mt : all)
    std::printf("# %s: largest relative difference mbstudy-Simbody / mbstudy-MuJoCo: udot "
                "%.1e / %.1e, tau %.1e / %.1e, M %.1e / %.1e\n",
                mt.name.c_str(), mt.err_fd_ms, mt.err_fd_mj, mt.err_id_ms, mt.err_id_mj,
                mt.err_mm_ms, mt.err_mm_mj);
  if (!all_ok) std::printf("WARNING: the timed models do not agree to %g\n", kTol);

  if (!o.json.empty()) {
    FILE* f = std::fopen(o.json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s: %s\n", o.json.c_str(), std::strerror(errno));
      return 1;
    }
    std::fprintf(f, "{\n  \"program\": \"mbs_compare_engines\",\n  \"date\": %s,\n",
                 json_str(date).c_str());
    std::fprintf(f, "  \"machine\": %s,\n  \"mbstudy\": %s,\n  \"c_flags\": %s,\n",
                 json_str(machine).c_str(),
                 json_str(strf("mbstudy %s (%s build)", MBS_VERSION_STRING, MBS_CMP_BUILD_TYPE))
                     .c_str(),
                 json_str(MBS_CMP_C_INFO).c_str());
    std::fprintf(f, "  \"cxx_flags\": %s,\n  \"simbody\": %s,\n  \"simbody_release\": %s,\n",
                 json_str(MBS_CMP_CXX_INFO).c_str(), json_str(simbody).c_str(),
#ifdef MBS_SIMBODY_RELEASE
                 "true"
#else
                 "false"
#endif
    );
    std::fprintf(f, "  \"mujoco\": %s,\n  \"models\": %s,\n  \"calls\": %s,\n",
                 json_str(mujoco).c_str(), json_str(models).c_str(), json_str(calls).c_str());
    std::fprintf(f, "  \"repeats\": %d,\n  \"seconds_per_repeat\": %g,\n  \"agree\": %s,\n",
                 o.repeats, o.seconds, all_ok ? "true" : "false");
    std::fprintf(f, "  \"results\": [\n");
    bool first = true;
    for (const ModelTimes& mt : all) {
      const double errs[3][2] = {{mt.err_fd_ms, mt.err_fd_mj},
                                 {mt.err_id_ms, mt.err_id_mj},
                                 {mt.err_mm_ms, mt.err_mm_mj}};
      for (size_t i = 0; i < mt.t.size(); i++) {
        const Timed& t = mt.t[i];
        const int op = (int)i / 3;
        const double diff = t.engine == "mbstudy" ? 0 : errs[op][t.engine == "Simbody" ? 0 : 1];
        std::fprintf(f, "%s    {\"model\": %s, \"bodies\": %d, \"nu\": %d, \"op\": %s, "
                     "\"engine\": %s, \"calls_per_repeat\": %ld, \"diff_from_mbstudy\": %.3g, "
                     "\"us\": [",
                     first ? "" : ",\n", json_str(mt.name).c_str(), mt.n, mt.nu,
                     json_str(t.op).c_str(), json_str(t.engine).c_str(), t.ncall, diff);
        for (size_t r = 0; r < t.us.size(); r++)
          std::fprintf(f, "%s%.6g", r ? ", " : "", t.us[r]);
        std::fprintf(f, "]}");
        first = false;
      }
    }
    std::fprintf(f, "\n  ]\n}\n");
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s: %s\n", o.json.c_str(), std::strerror(errno));
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}

void usage(const char* prog) {
  std::printf("usage: %s --check | --quick | --time [--repeats N] [--seconds S] [--sizes LIST] "
              "[--json FILE]\n"
              "  --check       cross-check udot, inverse dynamics and the mass matrix of mbstudy, "
              "Simbody and MuJoCo on random trees and the timing chains\n"
              "  --quick       a reduced --check (for CI)\n"
              "  --time        time forward dynamics, inverse dynamics and the mass matrix on pin "
              "chains with general joint frames\n"
              "  --repeats N   interleaved timing repeats (default 7)\n"
              "  --seconds S   length of one repeat of one engine's operation (default 0.1)\n"
              "  --sizes LIST  chain sizes, comma-separated (default 1,5,10,20,50,100,200)\n"
              "  --json FILE   also write every repeat's figure as JSON\n",
              prog);
}

}  // namespace

int main(int argc, char** argv) {
  bool check = false, quick = false, time_it = false;
  TimeOptions o;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--check") {
      check = true;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--time") {
      time_it = true;
    } else if (a == "--repeats" && has_value) {
      o.repeats = std::atoi(argv[++i]);
      if (o.repeats < 1) {
        std::fprintf(stderr, "--repeats needs a positive number\n");
        return 2;
      }
    } else if (a == "--seconds" && has_value) {
      o.seconds = std::atof(argv[++i]);
      if (!(o.seconds > 0 && o.seconds <= 100)) {
        std::fprintf(stderr, "--seconds needs a number in (0, 100]\n");
        return 2;
      }
    } else if (a == "--sizes" && has_value) {
      const std::string list = argv[++i];
      size_t pos = 0;
      while (pos <= list.size()) {
        const size_t c = list.find(',', pos);
        const std::string item = list.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
        char* end = nullptr;
        const long n = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end || n < 1 || n > 1000) {
          std::fprintf(stderr, "--sizes: '%s' is not a body count in 1..1000\n", item.c_str());
          return 2;
        }
        o.sizes.push_back((int)n);
        if (c == std::string::npos) break;
        pos = c + 1;
      }
    } else if (a == "--json" && has_value) {
      o.json = argv[++i];
    } else if (a == "--help" || a == "-h") {
      usage(argv[0]);
      return 0;
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s'\n", a.c_str());
      usage(argv[0]);
      return 2;
    }
  }
  if (o.sizes.empty()) o.sizes.assign(std::begin(kChainSizes), std::end(kChainSizes));
  if (time_it && o.repeats < 5)
    std::fprintf(stderr, "warning: --repeats %d: at least 5 repeats give a steadier median\n",
                 o.repeats);
  if (!check && !quick && !time_it) {
    usage(argv[0]);
    return 2;
  }
  int rc = 0;
  if (check || quick) rc |= run_check(quick && !check);
  if (time_it) rc |= run_time(o);
  return rc;
}
