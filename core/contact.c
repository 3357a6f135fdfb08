// Compliant contact forces (Simbody paper §5 and Appendix A; Simbody's HuntCrossleyForce and
// ElasticFoundationForce, which OpenSim's forces of the same names wrap).
//
// Hunt-Crossley (Hertz). For a pair with plane-strain moduli E1, E2 (Pa), dissipations c1, c2
// and the undeformed contact geometry (depth x, normal n from geometry 1 to 2, effective radius
// R = 1/(A + B) and eccentricity factor sigma from contact_geometry.c):
//   e_i = E_i^(2/3), s1 = e2 / (e1 + e2), E* = (e1 s1)^(3/2)      (Appendix A.1)
//   k = (4/3) sigma sqrt(R) E*,  fH = k x^(3/2),  c = c1 s1 + c2 (1 - s1)
//   fn = max(fH (1 + (3/2) c x'), 0)                                 (eqs. 23-26)
// applied at P = p1 - s1 x n (geometry 1 deforms by s1 x), x' the approach rate of the two
// bodies' stations at P along n. Potential energy (2/5) k x^(5/2).
//
// Friction (both forces): the slip velocity v (tangential part of the bodies' relative velocity
// at P) gets the force fn mu(|v|) against it, each coefficient combined as 2 mu1 mu2 /
// (mu1 + mu2) (0 when both are 0). Two laws (mbs_friction_model):
// - Hollars (the default): Simbody's HuntCrossleyForce / ElasticFoundationForce curve, which
//   OpenSim uses, so that OpenSim models give OpenSim's numbers:
//     mu = min(vs/vt, 1) (mu_d + 2 (mu_s - mu_d) / (1 + (vs/vt)^2)) + mu_v vs
//   continuous, with a kink at vs = vt where it peaks at mu_s.
// - Stribeck: the paper's three-segment spline (§5.1, Fig. 5; Simbody's compliant contact
//   subsystem): quintic smooth steps from 0 up to mu_s on [0, vt] and down to mu_d on
//   [vt, 3 vt], then mu_d, plus mu_v vs; C2 everywhere.
// Both rise from 0 (no true stiction: a body "sticks" by creeping at a speed below vt).
// Unlike Simbody's HuntCrossleyForce, friction scales the clipped normal force (Simbody uses
// the unclipped one, which lets friction push along the slip while the surfaces separate fast).
//
// Elastic foundation. One spring per mesh face whose centroid lies inside the other geometry
// (half-space or sphere): depth x from the centroid to the nearest point S of the other
// surface, fn = max(k a x (1 + c x'), 0) along the surface normal at S, friction as above, all
// at P = centroid + s x (S - centroid)/x. k is the mesh's stiffness (N/m^3 = pressure per
// depth; exactly OpenSim's ElasticFoundationForce "stiffness", which Simbody multiplies by the
// face area a). A non-mesh surface with stiffness 0 is rigid (what OpenSim and Simbody do with
// every non-mesh geometry: s = 1, the mesh's own dissipation and friction); with stiffness
// k2 > 0 the layers act in series (paper, Appendix A.1, "EFM"): k = k1 k2 / (k1 + k2),
// s = k2 / (k1 + k2), c = c1 s + c2 (1 - s), friction combined as above. Potential energy
// (1/2) k a x^2 per face. The pair's report gives the total force on geometry 2's body, the
// center of pressure (the normal forces' weighted mean of the P) and the deepest face's depth.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact_impl.h"

//---------------------------------- shared pieces ----------------------------------------------

static int all_finite_n(const double* v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

static double harmonic(double a, double b) { return a + b > 0 ? 2.0 * a * b / (a + b) : 0.0; }

typedef struct friction {
  double us, ud, uv, vt;
  int model;  // mbs_friction_model
} friction;

// 10 x^3 - 15 x^4 + 6 x^5: 0 to 1 on [0, 1] with zero slope and curvature at both ends
static double step5(double x) { return x * x * x * (10.0 + x * (-15.0 + 6.0 * x)); }

static double stribeck(const friction* fr, double vs) {
  const double r = vs / fr->vt;
  if (fr->model == MBS_FRICTION_STRIBECK) {
    // the paper's curve (§5.1; Simbody's compliant contact subsystem): quintic from 0 to mu_s
    // on [0, vt], quintic from mu_s down to mu_d on [vt, 3 vt], then mu_d; C2 throughout
    const double dry = r >= 3.0   ? fr->ud
                       : r >= 1.0 ? fr->us - (fr->us - fr->ud) * step5(0.5 * (r - 1.0))
                                  : fr->us * step5(r);
    return dry + fr->uv * vs;
  }
  return (r < 1.0 ? r : 1.0) * (fr->ud + 2.0 * (fr->us - fr->ud) / (1.0 + r * r)) + fr->uv * vs;
}

double mbs_contact_friction_coefficient(mbs_friction_model model, double us, double ud,
                                        double uv, double vt, double v) {
  const friction fr = {us, ud, uv, vt, (int)model};
  return stribeck(&fr, v);
}

int mbs_system_set_contact_friction_model(mbs_system* sys, int force, mbs_friction_model model) {
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce ||
      (sys->force[force].type != MBS_FORCE_HUNT_CROSSLEY &&
       sys->force[force].type != MBS_FORCE_ELASTIC_FOUNDATION))
    return mbs_error_set(&sys->err, MBS_ERR_ARGUMENT, __func__, __LINE__, "contact",
                         "force %d is not a contact force", force);
  if (model != MBS_FRICTION_HOLLARS && model != MBS_FRICTION_STRIBECK)
    return mbs_error_set(&sys->err, MBS_ERR_ARGUMENT, __func__, __LINE__, sys->force[force].name,
                         "force '%s': unknown friction model %d", sys->force[force].name,
                         (int)model);
  sys->force[force].iarg[1] = (int)model;
  return MBS_OK;
}

// velocity in G of the station of body b at ground point p
static void point_velocity(const mbs_state* st, int b, const double p[3], double v[3]) {
  const double* V = st->V_GB + 6 * b;
  double r[3];
  mbs_v3_sub(r, p, st->X_GB[b].p);
  mbs_v3_cross(v, V, r);
  mbs_v3_add(v, v, V + 3);
}

// The force on body b2 (the opposite on b1) at P: normal fel (1 + cx x') >= 0 along n (from 1
// to 2), x' = (v1 - v2).n, and friction along the slip of 1 relative to 2. Returns fn.
static double contact_force(const mbs_state* st, int b1, int b2, const double P[3],
                            const double n[3], double fel, double cx, const friction* fr,
                            double F[3]) {
  double v1[3], v2[3], v[3];
  point_velocity(st, b1, P, v1);
  point_velocity(st, b2, P, v2);
  mbs_v3_sub(v, v1, v2);
  const double xdot = mbs_v3_dot(v, n);
  double fn = fel * (1.0 + cx * xdot);
  if (!(fn > 0)) fn = 0;
  mbs_v3_scale(F, n, fn);
  double vt[3];
  for (int k = 0; k < 3; k++) vt[k] = v[k] - xdot * n[k];
  const double vs = mbs_v3_norm(vt);
  if (fn > 0 && vs > 0) mbs_v3_axpy(F, fn * stribeck(fr, vs) / vs, vt);
  return fn;
}

static void apply_pair_force(const mbs_state* st, double* F_body, int b1, int b2,
                             const double P[3], const double F[3]) {
  const double mF[3] = {-F[0], -F[1], -F[2]};
  mbs_force_add_point_force(st, F_body, b2, P, F);
  mbs_force_add_point_force(st, F_body, b1, P, mF);
}

static const mbs_contact_force* contact_force_of(const mbs_system* sys, const mbs_force_desc* f) {
  return &sys->contact->force[f->iarg[0]];
}

static const mbs_contact_geom* geom_of(const mbs_system* sys, const mbs_contact_force* cf,
                                       int surface) {
  return &sys->contact->geom[cf->geom[surface]];
}

static double* report_of(mbs_state* st, const mbs_force_desc* f, int pair) {
  return st->force_cache + f->cache_adr + MBS_CR_SIZE * pair;
}

//---------------------------------- parameter checks -------------------------------------------

// a problem with one surface's material, or 0
static int surface_problem(int efm, mbs_geometry_type type, const double* m, char* msg,
                           size_t n) {
  static const char* const names[MBS_CS_SIZE] = {"stiffness", "dissipation", "static friction",
                                                 "dynamic friction", "viscous friction"};
  for (int k = 0; k < MBS_CS_SIZE; k++) {
    if (!isfinite(m[k])) return snprintf(msg, n, "%s is not finite", names[k]), 1;
    if (m[k] < 0) return snprintf(msg, n, "%s %g must not be negative", names[k], m[k]), 1;
  }
  if (m[MBS_CS_STIFFNESS] == 0 && (!efm || type == MBS_GEOM_MESH))
    return snprintf(msg, n, "stiffness must be positive%s",
                    efm ? " for a mesh" : " (plane-strain modulus E, Pa)"),
           1;
  return 0;
}

// a problem with a geometry's parameters, or 0
static int geometry_problem(const mbs_contact_geom* g, const double* p, char* msg, size_t n) {
  if (!all_finite_n(p, g->nparam)) return snprintf(msg, n, "a parameter is not finite"), 1;
  if (g->type == MBS_GEOM_SPHERE && !(p[MBS_GP_SHAPE] > 0))
    return snprintf(msg, n, "radius %g must be positive", p[MBS_GP_SHAPE]), 1;
  if (g->type == MBS_GEOM_ELLIPSOID)
    for (int k = 0; k < 3; k++)
      if (!(p[MBS_GP_SHAPE + k] > 0))
        return snprintf(msg, n, "radii (%g %g %g) must be positive", p[MBS_GP_SHAPE],
                        p[MBS_GP_SHAPE + 1], p[MBS_GP_SHAPE + 2]),
               1;
  return 0;
}

static int contact_check(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                         const double* p) {
  const mbs_contact_force* cf = contact_force_of(sys, f);
  const int efm = f->type == MBS_FORCE_ELASTIC_FOUNDATION;
  char msg[200];
  if (!(p[MBS_CF_TRANSITION] > 0))
    return mbs_force_fail(st, f, "transition velocity %g must be positive", p[MBS_CF_TRANSITION]);
  for (int s = 0; s < cf->nsurf; s++) {
    const mbs_contact_geom* g = geom_of(sys, cf, s);
    if (surface_problem(efm, g->type, p + MBS_CF_SURFACES + MBS_CS_SIZE * s, msg, sizeof(msg)))
      return mbs_force_fail(st, f, "surface '%s': %s", g->name, msg);
    if (geometry_problem(g, st->param + g->param_adr, msg, sizeof(msg))) {
      char comp[MBS_ERROR_COMPONENT_LEN];
      snprintf(comp, sizeof(comp), "contact geometry '%s'", g->name);
      return mbs_error_set(&st->err, MBS_ERR_PARAMETER, "mbs_realize_instance", __LINE__, comp,
                           "contact geometry '%s': %s", g->name, msg);
    }
  }
  return MBS_OK;
}

//---------------------------------- Hunt-Crossley ----------------------------------------------

typedef struct hertz_pair {
  int b1, b2;
  mbs_hertz_contact c;
  double k;    // (4/3) sigma sqrt(R) E*
  double s1;   // share of the depth taken by geometry 1
  double c12;  // combined dissipation
} hertz_pair;

// the geometry and combined stiffness of pair i; 0 when the pair is apart
static int hertz_pair_eval(const mbs_system* sys, const mbs_state* st, const mbs_contact_force* cf,
                           const double* p, int i, hertz_pair* hp) {
  const int s1 = cf->pair[2 * i], s2 = cf->pair[2 * i + 1];
  const mbs_contact_geom* g1 = geom_of(sys, cf, s1);
  const mbs_contact_geom* g2 = geom_of(sys, cf, s2);
  mbs_transform X1, X2;
  mbs_contact_geom_pose(sys, st, cf->geom[s1], &X1);
  mbs_contact_geom_pose(sys, st, cf->geom[s2], &X2);
  const double* sh1 = st->param + g1->param_adr + MBS_GP_SHAPE;
  const double* sh2 = st->param + g2->param_adr + MBS_GP_SHAPE;
  if (!mbs_hertz_contact_geometry(g1->type, &X1, sh1, g2->type, &X2, sh2, &hp->c) ||
      !(hp->c.depth > 0))
    return 0;
  const double* m1 = p + MBS_CF_SURFACES + MBS_CS_SIZE * s1;
  const double* m2 = p + MBS_CF_SURFACES + MBS_CS_SIZE * s2;
  const double e1 = cbrt(m1[MBS_CS_STIFFNESS] * m1[MBS_CS_STIFFNESS]);
  const double e2 = cbrt(m2[MBS_CS_STIFFNESS] * m2[MBS_CS_STIFFNESS]);
  hp->s1 = e2 / (e1 + e2);
  const double e = e1 * hp->s1;  // E*^(2/3)
  hp->k = (4.0 / 3.0) * hp->c.sigma * sqrt(hp->c.R) * e * sqrt(e);
  hp->c12 = m1[MBS_CS_DISSIPATION] * hp->s1 + m2[MBS_CS_DISSIPATION] * (1.0 - hp->s1);
  hp->b1 = g1->body;
  hp->b2 = g2->body;
  return 1;
}

static int friction_model_of(const mbs_force_desc* f) {
  return f->iarg[1] == MBS_FRICTION_STRIBECK ? MBS_FRICTION_STRIBECK : MBS_FRICTION_HOLLARS;
}

static void hunt_crossley_apply(const mbs_system* sys, mbs_state* st, const mbs_force_desc* f,
                                const double* p, double* F_body, double* f_mob) {
  (void)f_mob;
  const mbs_contact_force* cf = contact_force_of(sys, f);
  for (int i = 0; i < cf->npair; i++) {
    double* rep = report_of(st, f, i);
    hertz_pair hp;
    if (!hertz_pair_eval(sys, st, cf, p, i, &hp)) {
      memset(rep, 0, MBS_CR_SIZE * sizeof(double));
      continue;
    }
    const double* m1 = p + MBS_CF_SURFACES + MBS_CS_SIZE * cf->pair[2 * i];
    const double* m2 = p + MBS_CF_SURFACES + MBS_CS_SIZE * cf->pair[2 * i + 1];
    const friction fr = {harmonic(m1[MBS_CS_STATIC], m2[MBS_CS_STATIC]),
                         harmonic(m1[MBS_CS_DYNAMIC], m2[MBS_CS_DYNAMIC]),
                         harmonic(m1[MBS_CS_VISCOUS], m2[MBS_CS_VISCOUS]),
                         p[MBS_CF_TRANSITION], friction_model_of(f)};
    const double x = hp.c.depth;
    double P[3], F[3];
    for (int k = 0; k < 3; k++) P[k] = hp.c.p1[k] - hp.s1 * x * hp.c.n[k];
    contact_force(st, hp.b1, hp.b2, P, hp.c.n, hp.k * x * sqrt(x), 1.5 * hp.c12, &fr, F);
    apply_pair_force(st, F_body, hp.b1, hp.b2, P, F);
    rep[MBS_CR_IN_CONTACT] = 1;
    rep[MBS_CR_PENETRATION] = x;
    mbs_v3_copy(rep + MBS_CR_POINT, P);
    mbs_v3_copy(rep + MBS_CR_NORMAL, hp.c.n);
    mbs_v3_copy(rep + MBS_CR_FORCE, F);
  }
}

static double hunt_crossley_potential(const mbs_system* sys, const mbs_state* st,
                                      const mbs_force_desc* f, const double* p) {
  const mbs_contact_force* cf = contact_force_of(sys, f);
  double e = 0;
  for (int i = 0; i < cf->npair; i++) {
    hertz_pair hp;
    if (!hertz_pair_eval(sys, st, cf, p, i, &hp)) continue;
    const double x = hp.c.depth;
    e += 0.4 * hp.k * x * x * sqrt(x);
  }
  return e;
}

//---------------------------------- elastic foundation -----------------------------------------

typedef struct efm_pair {
  const mbs_contact_geom* mesh;
  const mbs_contact_geom* other;
  mbs_transform XM, XO;
  double k, s, c;
  friction fr;
} efm_pair;

static void efm_pair_setup(const mbs_system* sys, const mbs_state* st, const mbs_contact_force* cf,
                           const double* p, int i, efm_pair* e) {
  const int sm = cf->pair[2 * i], so = cf->pair[2 * i + 1];
  e->mesh = geom_of(sys, cf, sm);
  e->other = geom_of(sys, cf, so);
  mbs_contact_geom_pose(sys, st, cf->geom[sm], &e->XM);
  mbs_contact_geom_pose(sys, st, cf->geom[so], &e->XO);
  const double* m1 = p + MBS_CF_SURFACES + MBS_CS_SIZE * sm;
  const double* m2 = p + MBS_CF_SURFACES + MBS_CS_SIZE * so;
  const double k1 = m1[MBS_CS_STIFFNESS], k2 = m2[MBS_CS_STIFFNESS];
  e->fr.vt = p[MBS_CF_TRANSITION];
  e->fr.model = friction_model_of(&sys->force[cf->force]);
  if (k2 == 0) {  // rigid other surface
    e->k = k1;
    e->s = 1.0;
    e->c = m1[MBS_CS_DISSIPATION];
    e->fr.us = m1[MBS_CS_STATIC];
    e->fr.ud = m1[MBS_CS_DYNAMIC];
    e->fr.uv = m1[MBS_CS_VISCOUS];
  } else {
    e->k = k1 * k2 / (k1 + k2);
    e->s = k2 / (k1 + k2);
    e->c = m1[MBS_CS_DISSIPATION] * e->s + m2[MBS_CS_DISSIPATION] * (1.0 - e->s);
    e->fr.us = harmonic(m1[MBS_CS_STATIC], m2[MBS_CS_STATIC]);
    e->fr.ud = harmonic(m1[MBS_CS_DYNAMIC], m2[MBS_CS_DYNAMIC]);
    e->fr.uv = harmonic(m1[MBS_CS_VISCOUS], m2[MBS_CS_VISCOUS]);
  }
}

// depth of face t's centroid inside the other surface and the unit direction out of it (from
// the centroid toward the nearest surface point); 0 if the centroid is not inside
static int efm_face(const mbs_state* st, const efm_pair* e, int t, double cG[3], double* depth,
                    double out[3]) {
  const double* fc = e->mesh->face + MBS_FACE_SIZE * t;
  mbs_tf_point(cG, &e->XM, fc + MBS_FACE_CENTROID);
  double d[3];
  mbs_v3_sub(d, cG, e->XO.p);
  if (e->other->type == MBS_GEOM_HALFSPACE) {
    const double ex[3] = {e->XO.R[0], e->XO.R[3], e->XO.R[6]};
    *depth = mbs_v3_dot(d, ex);
    mbs_v3_scale(out, ex, -1.0);
  } else {  // sphere
    const double r = st->param[e->other->param_adr + MBS_GP_SHAPE];
    const double L = mbs_v3_norm(d);
    if (L == 0) return 0;
    *depth = r - L;
    mbs_v3_scale(out, d, 1.0 / L);
  }
  return *depth > 0;
}

static void elastic_foundation_apply(const mbs_system* sys, mbs_state* st,
                                     const mbs_force_desc* f, const double* p, double* F_body,
                                     double* f_mob) {
  (void)f_mob;
  const mbs_contact_force* cf = contact_force_of(sys, f);
  for (int i = 0; i < cf->npair; i++) {
    efm_pair e;
    efm_pair_setup(sys, st, cf, p, i, &e);
    const int b1 = e.mesh->body, b2 = e.other->body;
    double Ftot[3] = {0, 0, 0}, cop[3] = {0, 0, 0}, nsum[3] = {0, 0, 0};
    double wsum = 0, maxdepth = 0, cop_el[3] = {0, 0, 0}, nsum_el[3] = {0, 0, 0}, wsum_el = 0;
    int inside = 0;
    for (int t = 0; t < e.mesh->ntriangle; t++) {
      double cG[3], x, out[3];
      if (!efm_face(st, &e, t, cG, &x, out)) continue;
      inside = 1;
      const double n[3] = {-out[0], -out[1], -out[2]};  // from the mesh into the other
      double P[3], F[3];
      for (int k = 0; k < 3; k++) P[k] = cG[k] + e.s * x * out[k];
      const double fel = e.k * e.mesh->face[MBS_FACE_SIZE * t + MBS_FACE_AREA] * x;
      const double fn = contact_force(st, b1, b2, P, n, fel, e.c, &e.fr, F);
      apply_pair_force(st, F_body, b1, b2, P, F);
      mbs_v3_add(Ftot, Ftot, F);
      mbs_v3_axpy(cop, fn, P);
      mbs_v3_axpy(nsum, fn, n);
      wsum += fn;
      mbs_v3_axpy(cop_el, fel, P);
      mbs_v3_axpy(nsum_el, fel, n);
      wsum_el += fel;
      if (x > maxdepth) maxdepth = x;
    }
    double* rep = report_of(st, f, i);
    memset(rep, 0, MBS_CR_SIZE * sizeof(double));
    if (!inside) continue;
    if (!(wsum > 0)) {  // every face separating fast: locate the patch by its elastic forces
      mbs_v3_copy(cop, cop_el);
      mbs_v3_copy(nsum, nsum_el);
      wsum = wsum_el;
    }
    rep[MBS_CR_IN_CONTACT] = 1;
    rep[MBS_CR_PENETRATION] = maxdepth;
    mbs_v3_scale(rep + MBS_CR_POINT, cop, 1.0 / wsum);
    const double nn = mbs_v3_norm(nsum);
    if (nn > 0) mbs_v3_scale(rep + MBS_CR_NORMAL, nsum, 1.0 / nn);
    mbs_v3_copy(rep + MBS_CR_FORCE, Ftot);
  }
}

static double elastic_foundation_potential(const mbs_system* sys, const mbs_state* st,
                                           const mbs_force_desc* f, const double* p) {
  const mbs_contact_force* cf = contact_force_of(sys, f);
  double pe = 0;
  for (int i = 0; i < cf->npair; i++) {
    efm_pair e;
    efm_pair_setup(sys, st, cf, p, i, &e);
    for (int t = 0; t < e.mesh->ntriangle; t++) {
      double cG[3], x, out[3];
      if (efm_face(st, &e, t, cG, &x, out))
        pe += 0.5 * e.k * e.mesh->face[MBS_FACE_SIZE * t + MBS_FACE_AREA] * x * x;
    }
  }
  return pe;
}

const mbs_force_ops mbs_hunt_crossley_ops = {"hunt_crossley", contact_check, hunt_crossley_apply,
                                             hunt_crossley_potential};
const mbs_force_ops mbs_elastic_foundation_ops = {"elastic_foundation", contact_check,
                                                  elastic_foundation_apply,
                                                  elastic_foundation_potential};

//---------------------------------- building ---------------------------------------------------

static int add_contact_force(mbs_system* sys, mbs_force_type type, const char* func,
                             const mbs_contact_surface* surf, int n, double vt) {
  const int efm = type == MBS_FORCE_ELASTIC_FOUNDATION;
  const char* kind = efm ? "elastic_foundation" : "hunt_crossley";
  const char* what = efm ? "elastic foundation" : "Hunt-Crossley contact";
  int rc = mbs_system_check_building(sys, func);
  if (rc) return rc;
#define ADD_FAIL(code, ...) \
  mbs_error_set(&sys->err, (code), func, __LINE__, kind, __VA_ARGS__)
  if (!surf || n < 2)
    return ADD_FAIL(MBS_ERR_ARGUMENT, "%s: needs at least two surfaces (got %d)", what, n);
  if (!(isfinite(vt) && vt > 0))
    return ADD_FAIL(MBS_ERR_PARAMETER, "%s: transition velocity %g must be positive", what, vt);
  const int ngeom = mbs_system_ncontact_geometry(sys);
  char msg[200];
  int nmesh = 0;
  for (int i = 0; i < n; i++) {
    const int g = surf[i].geometry;
    if (g < 0 || g >= ngeom)
      return ADD_FAIL(MBS_ERR_ARGUMENT, "%s: surface %d: contact geometry %d does not exist (%d "
                      "geometries)", what, i, g, ngeom);
    const mbs_contact_geom* gd = &sys->contact->geom[g];
    for (int j = 0; j < i; j++)
      if (surf[j].geometry == g)
        return ADD_FAIL(MBS_ERR_ARGUMENT, "%s: contact geometry '%s' is listed twice", what,
                        gd->name);
    const double m[MBS_CS_SIZE] = {surf[i].stiffness, surf[i].dissipation,
                                   surf[i].static_friction, surf[i].dynamic_friction,
                                   surf[i].viscous_friction};
    if (surface_problem(efm, gd->type, m, msg, sizeof(msg)))
      return ADD_FAIL(MBS_ERR_PARAMETER, "%s: surface '%s': %s", what, gd->name, msg);
    if (!efm && gd->type == MBS_GEOM_MESH)
      return ADD_FAIL(MBS_ERR_ARGUMENT,
                      "%s: '%s' is a mesh; Hertz contact needs half-spaces, spheres and "
                      "ellipsoids (use an elastic foundation for meshes)", what, gd->name);
    nmesh += gd->type == MBS_GEOM_MESH;
  }
  if (efm && nmesh == 0)
    return ADD_FAIL(MBS_ERR_ARGUMENT, "%s: none of the surfaces is a mesh", what);
  // the pairs
  int* pair = malloc(2 * sizeof(int) * (size_t)n * (size_t)n);
  int* geom = malloc(sizeof(int) * (size_t)n);
  double* params = malloc(sizeof(double) * (size_t)(MBS_CF_SURFACES + MBS_CS_SIZE * n));
  if (!pair || !geom || !params) {
    free(pair);
    free(geom);
    free(params);
    return mbs_system_no_memory(sys, func);
  }
  int npair = 0;
  for (int i = 0; i < n; i++) {
    const mbs_contact_geom* gi = &sys->contact->geom[surf[i].geometry];
    geom[i] = surf[i].geometry;
    for (int j = efm ? 0 : i + 1; j < n; j++) {
      const mbs_contact_geom* gj = &sys->contact->geom[surf[j].geometry];
      if (j == i || gi->body == gj->body) continue;
      if (!efm) {
        if (mbs_hertz_supported(gi->type, gj->type)) {
          pair[2 * npair] = i;
          pair[2 * npair++ + 1] = j;
        }
        continue;
      }
      if (gi->type != MBS_GEOM_MESH) continue;
      if (!mbs_efm_supported(gj->type)) {
        free(pair);
        free(geom);
        free(params);
        return ADD_FAIL(MBS_ERR_ARGUMENT,
                        "%s: mesh '%s' against %s '%s' is not supported (a mesh meets "
                        "half-spaces and spheres)", what, gi->name,
                        mbs_contact_geometry_type_name(gj->type), gj->name);
      }
      pair[2 * npair] = i;
      pair[2 * npair++ + 1] = j;
    }
  }
  if (npair == 0) {
    free(pair);
    free(geom);
    free(params);
    return ADD_FAIL(MBS_ERR_ARGUMENT,
                    "%s: no two of the surfaces can touch (they are on one body, or of types "
                    "the force does not collide)", what);
  }
  params[MBS_CF_TRANSITION] = vt;
  for (int i = 0; i < n; i++) {
    double* m = params + MBS_CF_SURFACES + MBS_CS_SIZE * i;
    m[MBS_CS_STIFFNESS] = surf[i].stiffness;
    m[MBS_CS_DISSIPATION] = surf[i].dissipation;
    m[MBS_CS_STATIC] = surf[i].static_friction;
    m[MBS_CS_DYNAMIC] = surf[i].dynamic_friction;
    m[MBS_CS_VISCOUS] = surf[i].viscous_friction;
  }
  struct mbs_contact_data* cd = sys->contact;
  if (cd->nforce == cd->cap_force) {
    const int cap = cd->cap_force ? 2 * cd->cap_force : 4;
    mbs_contact_force* cf = realloc(cd->force, (size_t)cap * sizeof(*cf));
    if (!cf) {
      free(pair);
      free(geom);
      free(params);
      return mbs_system_no_memory(sys, func);
    }
    cd->force = cf;
    cd->cap_force = cap;
  }
  const int b1 = sys->contact->geom[geom[pair[0]]].body;
  const int b2 = sys->contact->geom[geom[pair[1]]].body;
  const int id = mbs_system_new_force(sys, type, kind, b1, b2, params,
                                      MBS_CF_SURFACES + MBS_CS_SIZE * n);
  free(params);
  if (id < 0) {
    free(pair);
    free(geom);
    return id;
  }
  mbs_contact_force* cf = &cd->force[cd->nforce];
  cf->force = id;
  cf->nsurf = n;
  cf->geom = geom;
  cf->npair = npair;
  cf->pair = pair;
  sys->force[id].iarg[0] = cd->nforce++;
  mbs_system_force_cache(sys, id, MBS_CR_SIZE * npair);  // the reports, one per pair
  if ((rc = mbs_system_force_param(sys, id, "transition_velocity", MBS_CF_TRANSITION, 1, "m/s")))
    return rc;
  static const char* const fields[MBS_CS_SIZE] = {"stiffness", "dissipation", "static_friction",
                                                  "dynamic_friction", "viscous_friction"};
  const char* const units[MBS_CS_SIZE] = {efm ? "N/m^3" : "Pa", "s/m", "", "", "s/m"};
  for (int i = 0; i < n; i++)
    for (int k = 0; k < MBS_CS_SIZE; k++) {
      char field[300];
      snprintf(field, sizeof(field), "%s/%s", sys->contact->geom[geom[i]].name, fields[k]);
      if ((rc = mbs_system_force_param(sys, id, field, MBS_CF_SURFACES + MBS_CS_SIZE * i + k, 1,
                                       units[k])))
        return rc;
    }
#undef ADD_FAIL
  return id;
}

int mbs_system_add_hunt_crossley(mbs_system* sys, const mbs_contact_surface* surfaces, int n,
                                 double transition_velocity) {
  return add_contact_force(sys, MBS_FORCE_HUNT_CROSSLEY, __func__, surfaces, n,
                           transition_velocity);
}

int mbs_system_add_elastic_foundation(mbs_system* sys, const mbs_contact_surface* surfaces,
                                      int n, double transition_velocity) {
  return add_contact_force(sys, MBS_FORCE_ELASTIC_FOUNDATION, __func__, surfaces, n,
                           transition_velocity);
}

//---------------------------------- reports ----------------------------------------------------

int mbs_get_contact_reports(const mbs_system* sys, mbs_state* st, int force,
                            mbs_contact_report* reports, int max, int* n) {
  if (!sys || !st) return MBS_ERR_ARGUMENT;
  int rc = mbs_check_stage(sys, st, MBS_STAGE_DYNAMICS, __func__);
  if (rc) return rc;
  if (force < 0 || force >= sys->nforce ||
      (sys->force[force].type != MBS_FORCE_HUNT_CROSSLEY &&
       sys->force[force].type != MBS_FORCE_ELASTIC_FOUNDATION))
    return MBS_FAIL(&st->err, MBS_ERR_ARGUMENT, sys->name,
                    "mbs_get_contact_reports: force %d is not a contact force", force);
  const mbs_force_desc* f = &sys->force[force];
  const mbs_contact_force* cf = contact_force_of(sys, f);
  if (n) *n = cf->npair;
  for (int i = 0; i < cf->npair && i < max && reports; i++) {
    const double* rep = report_of(st, f, i);
    mbs_contact_report* r = &reports[i];
    r->geometry1 = cf->geom[cf->pair[2 * i]];
    r->geometry2 = cf->geom[cf->pair[2 * i + 1]];
    r->in_contact = rep[MBS_CR_IN_CONTACT] != 0;
    r->penetration = rep[MBS_CR_PENETRATION];
    mbs_v3_copy(r->point, rep + MBS_CR_POINT);
    mbs_v3_copy(r->normal, rep + MBS_CR_NORMAL);
    mbs_v3_copy(r->force, rep + MBS_CR_FORCE);
  }
  return MBS_OK;
}
