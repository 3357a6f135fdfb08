// Contact geometry: half-spaces, spheres, ellipsoids and triangle meshes fixed on bodies
// (OpenSim's ContactHalfSpace, ContactSphere, ContactEllipsoid, ContactMesh), and the undeformed
// contact geometry that Hertz theory needs (Simbody paper §5.1 and Appendix A.2).
//
// A geometry's frame S on its body B (location, orientation) and its radius or radii are
// instance parameters under /contactgeometryset/<name>/...; a mesh's vertices and triangles
// are copied into the System, and each face's area, centroid and normal are derived when the
// System is finalized.
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact_impl.h"

static const char* const type_names[MBS_GEOM_COUNT] = {"half-space", "sphere", "ellipsoid",
                                                       "mesh"};

//---------------------------------- storage ----------------------------------------------------

void mbs_contact_data_free(struct mbs_contact_data* c) {
  if (!c) return;
  for (int i = 0; i < c->ngeom; i++) {
    mbs_contact_geom* g = &c->geom[i];
    free(g->name);
    free(g->vertices);
    free(g->triangles);
    free(g->face);
  }
  free(c->geom);
  for (int i = 0; i < c->nforce; i++) {
    free(c->force[i].geom);
    free(c->force[i].pair);
  }
  free(c->force);
  free(c);
}

mbs_contact_geometry_spec mbs_contact_geometry_spec_default(const char* name,
                                                            mbs_geometry_type type, int body) {
  mbs_contact_geometry_spec s;
  memset(&s, 0, sizeof(s));
  s.name = name;
  s.type = type;
  s.body = body;
  return s;
}

static int all_finite(const double* v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

static int shape_size(mbs_geometry_type t) {
  return t == MBS_GEOM_SPHERE ? 1 : t == MBS_GEOM_ELLIPSOID ? 3 : 0;
}

static int add_fail(mbs_system* sys, int code, const char* comp, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_fail(mbs_system* sys, int code, const char* comp, const char* fmt, ...) {
  char msg[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return mbs_error_set(&sys->err, code, "mbs_system_add_contact_geometry", __LINE__, comp,
                       "%s: %s", comp, msg);
}

int mbs_system_add_contact_geometry(mbs_system* sys, const mbs_contact_geometry_spec* s) {
  int rc = mbs_system_check_building(sys, __func__);
  if (rc) return rc;
  if (!s || !s->name || !*s->name || strchr(s->name, '/'))
    return MBS_FAIL(&sys->err, MBS_ERR_ARGUMENT, "contact geometry",
                    "contact geometry: a geometry needs a name without '/'");
  char comp[MBS_ERROR_COMPONENT_LEN];
  snprintf(comp, sizeof(comp), "contact geometry '%s'", s->name);
  if (mbs_contact_geometry_find(sys, s->name) >= 0)
    return add_fail(sys, MBS_ERR_ARGUMENT, comp, "a contact geometry of that name exists");
  if ((int)s->type < 0 || s->type >= MBS_GEOM_COUNT)
    return add_fail(sys, MBS_ERR_ARGUMENT, comp, "unknown geometry type %d", (int)s->type);
  if ((rc = mbs_system_check_body(sys, s->body, comp))) return rc;
  if (!all_finite(s->frame.angles, 3) || !all_finite(s->frame.p, 3))
    return add_fail(sys, MBS_ERR_PARAMETER, comp, "location or orientation is not finite");
  if (s->type == MBS_GEOM_SPHERE && !(isfinite(s->radius) && s->radius > 0))
    return add_fail(sys, MBS_ERR_PARAMETER, comp, "radius %g must be positive and finite",
                    s->radius);
  if (s->type == MBS_GEOM_ELLIPSOID)
    for (int k = 0; k < 3; k++)
      if (!(isfinite(s->radii[k]) && s->radii[k] > 0))
        return add_fail(sys, MBS_ERR_PARAMETER, comp, "radius %d (%g) must be positive and finite",
                        k, s->radii[k]);
  if (s->type == MBS_GEOM_MESH) {
    if (!s->vertices || !s->triangles || s->nvertex < 3 || s->ntriangle < 1)
      return add_fail(sys, MBS_ERR_ARGUMENT, comp,
                      "a mesh needs at least 3 vertices and 1 triangle (got %d and %d)",
                      s->nvertex, s->ntriangle);
    for (int v = 0; v < s->nvertex; v++)
      if (!all_finite(s->vertices + 3 * v, 3))
        return add_fail(sys, MBS_ERR_PARAMETER, comp, "vertex %d is not finite", v);
    for (int t = 0; t < s->ntriangle; t++) {
      const int* tv = s->triangles + 3 * t;
      for (int k = 0; k < 3; k++)
        if (tv[k] < 0 || tv[k] >= s->nvertex)
          return add_fail(sys, MBS_ERR_ARGUMENT, comp,
                          "triangle %d refers to vertex %d, but there are %d (0..%d)", t, tv[k],
                          s->nvertex, s->nvertex - 1);
      if (tv[0] == tv[1] || tv[1] == tv[2] || tv[0] == tv[2])
        return add_fail(sys, MBS_ERR_ARGUMENT, comp,
                        "triangle %d repeats a vertex (%d, %d, %d)", t, tv[0], tv[1], tv[2]);
    }
  }

  if (!sys->contact && !(sys->contact = calloc(1, sizeof(*sys->contact))))
    return mbs_system_no_memory(sys, __func__);
  struct mbs_contact_data* cd = sys->contact;
  if (cd->ngeom == cd->cap_geom) {
    const int cap = cd->cap_geom ? 2 * cd->cap_geom : 8;
    mbs_contact_geom* g = realloc(cd->geom, (size_t)cap * sizeof(*g));
    if (!g) return mbs_system_no_memory(sys, __func__);
    cd->geom = g;
    cd->cap_geom = cap;
  }
  mbs_contact_geom g;
  memset(&g, 0, sizeof(g));
  g.type = s->type;
  g.body = s->body;
  g.nparam = MBS_GP_SHAPE + shape_size(s->type);
  g.name = mbs_format_string("%s", s->name);
  if (!g.name) return mbs_system_no_memory(sys, __func__);
  if (s->type == MBS_GEOM_MESH) {
    g.nvertex = s->nvertex;
    g.ntriangle = s->ntriangle;
    g.vertices = malloc(3 * (size_t)s->nvertex * sizeof(double));
    g.triangles = malloc(3 * (size_t)s->ntriangle * sizeof(int));
    if (!g.vertices || !g.triangles) {
      free(g.name);
      free(g.vertices);
      free(g.triangles);
      return mbs_system_no_memory(sys, __func__);
    }
    memcpy(g.vertices, s->vertices, 3 * (size_t)s->nvertex * sizeof(double));
    memcpy(g.triangles, s->triangles, 3 * (size_t)s->ntriangle * sizeof(int));
  }
  double p[MBS_GP_SHAPE + 3];
  memcpy(p + MBS_GP_LOCATION, s->frame.p, 3 * sizeof(double));
  memcpy(p + MBS_GP_ORIENTATION, s->frame.angles, 3 * sizeof(double));
  if (s->type == MBS_GEOM_SPHERE) p[MBS_GP_SHAPE] = s->radius;
  if (s->type == MBS_GEOM_ELLIPSOID) memcpy(p + MBS_GP_SHAPE, s->radii, 3 * sizeof(double));
  g.param_adr = mbs_system_add_params(sys, p, g.nparam);
  if (g.param_adr < 0) {
    free(g.name);
    free(g.vertices);
    free(g.triangles);
    return g.param_adr;
  }
  const int id = cd->ngeom++;
  cd->geom[id] = g;  // owned by the system from here on
  const char* n = g.name;
  if ((rc = mbs_system_add_param_path(sys, mbs_format_string("/contactgeometryset/%s/location", n),
                                      g.param_adr + MBS_GP_LOCATION, 3, "m")) ||
      (rc = mbs_system_add_param_path(
           sys, mbs_format_string("/contactgeometryset/%s/orientation", n),
           g.param_adr + MBS_GP_ORIENTATION, 3, "rad")))
    return rc;
  if (s->type == MBS_GEOM_SPHERE &&
      (rc = mbs_system_add_param_path(sys, mbs_format_string("/contactgeometryset/%s/radius", n),
                                      g.param_adr + MBS_GP_SHAPE, 1, "m")))
    return rc;
  if (s->type == MBS_GEOM_ELLIPSOID &&
      (rc = mbs_system_add_param_path(sys, mbs_format_string("/contactgeometryset/%s/radii", n),
                                      g.param_adr + MBS_GP_SHAPE, 3, "m")))
    return rc;
  return id;
}

int mbs_system_ncontact_geometry(const mbs_system* sys) {
  return sys && sys->contact ? sys->contact->ngeom : 0;
}

int mbs_contact_geometry_find(const mbs_system* sys, const char* name) {
  if (!sys || !sys->contact || !name) return -1;
  for (int i = 0; i < sys->contact->ngeom; i++)
    if (strcmp(sys->contact->geom[i].name, name) == 0) return i;
  return -1;
}

const char* mbs_contact_geometry_name(const mbs_system* sys, int geometry) {
  if (!sys || !sys->contact || geometry < 0 || geometry >= sys->contact->ngeom) return NULL;
  return sys->contact->geom[geometry].name;
}

int mbs_contact_geometry_type(const mbs_system* sys, int geometry) {
  if (!sys || !sys->contact || geometry < 0 || geometry >= sys->contact->ngeom) return -1;
  return (int)sys->contact->geom[geometry].type;
}

int mbs_contact_geometry_body(const mbs_system* sys, int geometry) {
  if (!sys || !sys->contact || geometry < 0 || geometry >= sys->contact->ngeom) return -1;
  return sys->contact->geom[geometry].body;
}

//---------------------------------- finalize: mesh faces ---------------------------------------

static int finalize_mesh(mbs_system* sys, mbs_contact_geom* g) {
  // faces' area, centroid and outward normal (right-hand rule); a face of zero area (relative
  // to the mesh's size) has no normal and is rejected
  double lo[3], hi[3];
  for (int k = 0; k < 3; k++) lo[k] = hi[k] = g->vertices[k];
  for (int v = 1; v < g->nvertex; v++)
    for (int k = 0; k < 3; k++) {
      const double x = g->vertices[3 * v + k];
      lo[k] = x < lo[k] ? x : lo[k];
      hi[k] = x > hi[k] ? x : hi[k];
    }
  double diag[3];
  mbs_v3_sub(diag, hi, lo);
  const double size2 = mbs_v3_dot(diag, diag);
  free(g->face);
  g->face = malloc((size_t)g->ntriangle * MBS_FACE_SIZE * sizeof(double));
  if (!g->face) return mbs_system_no_memory(sys, "mbs_system_finalize");
  for (int t = 0; t < g->ntriangle; t++) {
    const int* tv = g->triangles + 3 * t;
    const double* a = g->vertices + 3 * tv[0];
    const double* b = g->vertices + 3 * tv[1];
    const double* c = g->vertices + 3 * tv[2];
    double e1[3], e2[3], nrm[3];
    mbs_v3_sub(e1, b, a);
    mbs_v3_sub(e2, c, a);
    mbs_v3_cross(nrm, e1, e2);
    const double twice_area = mbs_v3_norm(nrm);
    if (!(twice_area > 1e-12 * size2))
      return mbs_error_set(&sys->err, MBS_ERR_PARAMETER, "mbs_system_finalize", __LINE__,
                           g->name,
                           "contact geometry '%s': mesh triangle %d (vertices %d, %d, %d) has "
                           "zero area; the mesh is degenerate",
                           g->name, t, tv[0], tv[1], tv[2]);
    double* f = g->face + MBS_FACE_SIZE * t;
    f[MBS_FACE_AREA] = 0.5 * twice_area;
    for (int k = 0; k < 3; k++) f[MBS_FACE_CENTROID + k] = (a[k] + b[k] + c[k]) / 3.0;
    mbs_v3_scale(f + MBS_FACE_NORMAL, nrm, 1.0 / twice_area);
  }
  return MBS_OK;
}

int mbs_contact_finalize(mbs_system* sys) {
  if (!sys->contact) return MBS_OK;
  for (int i = 0; i < sys->contact->ngeom; i++) {
    mbs_contact_geom* g = &sys->contact->geom[i];
    if (g->type != MBS_GEOM_MESH) continue;
    const int rc = finalize_mesh(sys, g);
    if (rc) return rc;
  }
  return MBS_OK;
}

//---------------------------------- poses ------------------------------------------------------

void mbs_contact_geom_pose(const mbs_system* sys, const mbs_state* st, int g, mbs_transform* X_GS) {
  const mbs_contact_geom* gd = &sys->contact->geom[g];
  const double* p = st->param + gd->param_adr;
  mbs_transform X_BS;
  mbs_tf_from_xyz(&X_BS, p + MBS_GP_ORIENTATION, p + MBS_GP_LOCATION);
  mbs_tf_mul(X_GS, &st->X_GB[gd->body], &X_BS);
}

//---------------------------------- elliptic contact (Appendix A.2) ---------------------------

void mbs_elliptic_KE(double m, double* K, double* E) {
  // arithmetic-geometric mean: K = pi / (2 a_N), E = K (1 - sum_n 2^(n-1) c_n^2), c_0^2 = m
  double a = 1.0, b = sqrt(1.0 - m), w = 0.5, sum = 0.5 * m;
  for (int i = 0; i < 60; i++) {
    const double c = 0.5 * (a - b);
    const double an = 0.5 * (a + b);
    b = sqrt(a * b);
    a = an;
    w *= 2.0;
    sum += w * c * c;
    if (fabs(c) <= 1e-17 * a) break;
  }
  *K = M_PI / (2.0 * a);
  *E = *K * (1.0 - sum);
}

// B/A of eq. (29) for the contact ellipse's axis ratio k = exp(t) > 1
static double curvature_ratio(double t) {
  const double k = exp(t), m = 1.0 - exp(-2.0 * t);
  double K, E;
  mbs_elliptic_KE(m, &K, &E);
  return (k * k * E - K) / (K - E);
}

double mbs_hertz_sigma(double ratio) {
  if (!(ratio > 1.0 + 1e-12)) return 1.0;  // circular contact
  // solve eq. (29) for t = ln k by the Illinois method on [0, ln ratio]: B/A grows with k and
  // B/A > k for k > 1, so the root lies inside; B/A(k -> 1) = 1
  double t0 = 0.0, g0 = 1.0 - ratio;
  double t1 = log(ratio), g1 = curvature_ratio(t1) - ratio;
  double t = t1;
  if (g1 != 0) {
    int side = 0;
    for (int it = 0; it < 200; it++) {
      t = (t0 * g1 - t1 * g0) / (g1 - g0);
      const double g = curvature_ratio(t) - ratio;
      if (fabs(g) <= 4 * DBL_EPSILON * ratio || fabs(t1 - t0) <= 4 * DBL_EPSILON * fabs(t)) break;
      if ((g > 0) == (g1 > 0)) {
        t1 = t;
        g1 = g;
        if (side == -1) g0 *= 0.5;
        side = -1;
      } else {
        t0 = t;
        g0 = g;
        if (side == 1) g1 *= 0.5;
        side = 1;
      }
    }
  }
  const double k = exp(t), m = 1.0 - exp(-2.0 * t);
  double K, E;
  mbs_elliptic_KE(m, &K, &E);
  return M_PI * sqrt(E) * k / (2.0 * K * sqrt(K));
}

//---------------------------------- Hertz contact geometry -------------------------------------

int mbs_hertz_supported(mbs_geometry_type t1, mbs_geometry_type t2) {
  if (t1 > t2) {
    const mbs_geometry_type t = t1;
    t1 = t2;
    t2 = t;
  }
  return (t1 == MBS_GEOM_HALFSPACE && (t2 == MBS_GEOM_SPHERE || t2 == MBS_GEOM_ELLIPSOID)) ||
         (t1 == MBS_GEOM_SPHERE && t2 == MBS_GEOM_SPHERE);
}

int mbs_efm_supported(mbs_geometry_type t) {
  return t == MBS_GEOM_HALFSPACE || t == MBS_GEOM_SPHERE;
}

// unit vector of the half-space's x axis in G: the direction into the solid
static void halfspace_axis(const mbs_transform* X, double ex[3]) {
  mbs_v3_set(ex, X->R[0], X->R[3], X->R[6]);
}

// sphere (1) against half-space (2)
static void sphere_halfspace(const mbs_transform* Xs, double r, const mbs_transform* Xh,
                             mbs_hertz_contact* c) {
  double ex[3], d[3];
  halfspace_axis(Xh, ex);
  mbs_v3_sub(d, Xs->p, Xh->p);
  c->depth = r + mbs_v3_dot(d, ex);
  mbs_v3_copy(c->n, ex);
  for (int k = 0; k < 3; k++) c->p1[k] = Xs->p[k] + r * ex[k];
  c->R = r;
  c->sigma = 1.0;
}

// ellipsoid (1) against half-space (2)
static void ellipsoid_halfspace(const mbs_transform* Xe, const double radii[3],
                                const mbs_transform* Xh, mbs_hertz_contact* c) {
  double ex[3], d[3], pS[3], pG[3];
  halfspace_axis(Xh, ex);
  mbs_m33_tvec(d, Xe->R, ex);  // direction into the half-space, in the ellipsoid's frame
  double h2 = 0;
  for (int k = 0; k < 3; k++) h2 += radii[k] * radii[k] * d[k] * d[k];
  const double h = sqrt(h2);  // support distance of the ellipsoid along d
  for (int k = 0; k < 3; k++) pS[k] = radii[k] * radii[k] * d[k] / h;
  mbs_m33_vec(pG, Xe->R, pS);
  mbs_v3_add(c->p1, Xe->p, pG);
  mbs_v3_sub(pG, c->p1, Xh->p);
  c->depth = mbs_v3_dot(pG, ex);
  mbs_v3_copy(c->n, ex);
  // principal curvatures at the support point: the eigenvalues of h T^T Q T on the tangent
  // plane (Q = diag(1/r_i^2), T an orthonormal basis perpendicular to d); the half-space is flat
  double t1[3], t2[3];
  const int i = fabs(d[0]) < fabs(d[1]) ? (fabs(d[0]) < fabs(d[2]) ? 0 : 2)
                                        : (fabs(d[1]) < fabs(d[2]) ? 1 : 2);
  double e[3] = {0, 0, 0};
  e[i] = 1;
  mbs_v3_cross(t1, d, e);
  mbs_v3_scale(t1, t1, 1.0 / mbs_v3_norm(t1));
  mbs_v3_cross(t2, d, t1);
  double q11 = 0, q12 = 0, q22 = 0;
  for (int k = 0; k < 3; k++) {
    const double w = h / (radii[k] * radii[k]);
    q11 += w * t1[k] * t1[k];
    q12 += w * t1[k] * t2[k];
    q22 += w * t2[k] * t2[k];
  }
  const double mean = 0.5 * (q11 + q22);
  const double dev = sqrt(0.25 * (q11 - q22) * (q11 - q22) + q12 * q12);
  const double kmax = mean + dev, kmin = mean - dev;
  c->R = 1.0 / mean;  // 1 / (A + B) with semi-curvatures A = kmin / 2, B = kmax / 2
  c->sigma = mbs_hertz_sigma(kmax / kmin);
}

static int sphere_sphere(const mbs_transform* X1, double r1, const mbs_transform* X2, double r2,
                         mbs_hertz_contact* c) {
  double d[3];
  mbs_v3_sub(d, X2->p, X1->p);
  const double L = mbs_v3_norm(d);
  if (L == 0) return 0;
  mbs_v3_scale(c->n, d, 1.0 / L);
  c->depth = r1 + r2 - L;
  for (int k = 0; k < 3; k++) c->p1[k] = X1->p[k] + r1 * c->n[k];
  c->R = r1 * r2 / (r1 + r2);
  c->sigma = 1.0;
  return 1;
}

int mbs_hertz_contact_geometry(mbs_geometry_type t1, const mbs_transform* X1, const double* s1,
                               mbs_geometry_type t2, const mbs_transform* X2, const double* s2,
                               mbs_hertz_contact* c) {
  if (t1 == MBS_GEOM_SPHERE && t2 == MBS_GEOM_SPHERE) return sphere_sphere(X1, s1[0], X2, s2[0], c);
  int swapped = 0;
  if (t1 == MBS_GEOM_HALFSPACE) {  // compute as (curved, half-space), then swap
    const mbs_transform* X = X1;
    X1 = X2;
    X2 = X;
    const double* s = s1;
    s1 = s2;
    s2 = s;
    const mbs_geometry_type t = t1;
    t1 = t2;
    t2 = t;
    swapped = 1;
  }
  if (t2 != MBS_GEOM_HALFSPACE) return 0;
  if (t1 == MBS_GEOM_SPHERE)
    sphere_halfspace(X1, s1[0], X2, c);
  else if (t1 == MBS_GEOM_ELLIPSOID)
    ellipsoid_halfspace(X1, s1, X2, c);
  else
    return 0;
  if (swapped) {  // p2 = p1 - x n becomes p1; the normal turns around
    for (int k = 0; k < 3; k++) {
      c->p1[k] -= c->depth * c->n[k];
      c->n[k] = -c->n[k];
    }
  }
  return 1;
}

const char* mbs_contact_geometry_type_name(mbs_geometry_type t) {
  return (int)t >= 0 && t < MBS_GEOM_COUNT ? type_names[t] : "unknown";
}
