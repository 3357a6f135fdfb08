// Internal layout of contact geometry and contact forces, shared by core/contact.c (the force
// elements) and core/contact_geometry.c (geometry, meshes, Hertz contact geometry).
//
// Frames: G Ground, B the body a geometry is fixed on, S the geometry's own frame (X_BS from
// the instance parameters location and orientation). A pair's normal points from geometry 1
// toward geometry 2; "surface i" of a force is its i-th mbs_contact_surface.
#ifndef MBS_CORE_CONTACT_IMPL_H_
#define MBS_CORE_CONTACT_IMPL_H_

#include "mbs/contact.h"
#include "model_impl.h"

// offsets of a geometry's instance parameters from its param_adr
enum {
  MBS_GP_LOCATION = 0,     // 3, m, p_BS
  MBS_GP_ORIENTATION = 3,  // 3, rad, body-fixed X-Y-Z angles of S in B
  MBS_GP_SHAPE = 6,        // sphere: radius (1); ellipsoid: radii (3); others: none
};

// per mesh face, derived at finalize (in S)
enum { MBS_FACE_AREA = 0, MBS_FACE_CENTROID = 1, MBS_FACE_NORMAL = 4, MBS_FACE_SIZE = 7 };

typedef struct mbs_contact_geom {
  char* name;
  mbs_geometry_type type;
  int body;
  int param_adr;
  int nparam;
  // meshes: copied when added, read-only after finalize
  double* vertices;   // nvertex x 3, in S
  int nvertex;
  int* triangles;     // ntriangle x 3
  int ntriangle;
  double* face;       // ntriangle x MBS_FACE_SIZE (area, centroid, unit normal)
} mbs_contact_geom;

// offsets of a contact force's parameters: transition velocity, then per surface
enum { MBS_CF_TRANSITION = 0, MBS_CF_SURFACES = 1 };
enum {
  MBS_CS_STIFFNESS = 0,
  MBS_CS_DISSIPATION = 1,
  MBS_CS_STATIC = 2,
  MBS_CS_DYNAMIC = 3,
  MBS_CS_VISCOUS = 4,
  MBS_CS_SIZE = 5
};

// one report in a contact force's cache (st->force_cache + cache_adr + MBS_CR_SIZE * pair)
enum {
  MBS_CR_IN_CONTACT = 0,
  MBS_CR_PENETRATION = 1,
  MBS_CR_POINT = 2,   // 3
  MBS_CR_NORMAL = 5,  // 3
  MBS_CR_FORCE = 8,   // 3
  MBS_CR_SIZE = 11
};

typedef struct mbs_contact_force {
  int force;     // index in sys->force (its iarg[0] is the index of this entry)
  int nsurf;
  int* geom;     // nsurf geometry indices
  int npair;
  int* pair;     // 2 per pair: surface indices (geometry 1, geometry 2)
} mbs_contact_force;

struct mbs_contact_data {
  mbs_contact_geom* geom;
  int ngeom, cap_geom;
  mbs_contact_force* force;
  int nforce, cap_force;
};

// X_GS of geometry g [Position]
void mbs_contact_geom_pose(const mbs_system* sys, const mbs_state* st, int g, mbs_transform* X_GS);

// Undeformed contact of two geometries for Hertz theory (sphere-halfspace, sphere-sphere,
// ellipsoid-halfspace, either order).
typedef struct mbs_hertz_contact {
  double depth;   // penetration x (> 0 when overlapping)
  double n[3];    // unit normal from geometry 1 toward geometry 2
  double p1[3];   // point of geometry 1's surface deepest inside geometry 2 (p2 = p1 - x n)
  double R;       // effective radius 1 / (A + B) (A, B the semi-curvatures of the separation)
  double sigma;   // eccentricity factor (Simbody paper eq. 28), 1 for circular contact
} mbs_hertz_contact;

// whether Hunt-Crossley can collide geometry types t1 and t2
int mbs_hertz_supported(mbs_geometry_type t1, mbs_geometry_type t2);
// the contact of geometries 1 and 2 with poses X1, X2 and shape parameters s1, s2 (radius or
// radii); only for supported pairs. Returns 1 when the geometry is defined (depth may be <= 0),
// 0 when it is not (concentric spheres).
int mbs_hertz_contact_geometry(mbs_geometry_type t1, const mbs_transform* X1, const double* s1,
                               mbs_geometry_type t2, const mbs_transform* X2, const double* s2,
                               mbs_hertz_contact* c);
// Simbody paper eq. (28)-(29): sigma for the ratio B/A >= 1 of the semi-curvatures of the
// separation paraboloid (k = a/b of the contact ellipse solved from eq. 29 to machine precision)
double mbs_hertz_sigma(double ratio);
// complete elliptic integrals of the first (K) and second (E) kind of parameter m in [0, 1)
void mbs_elliptic_KE(double m, double* K, double* E);

// "half-space", "sphere", "ellipsoid", "mesh"
const char* mbs_contact_geometry_type_name(mbs_geometry_type t);

// whether the elastic foundation can put a mesh against geometry type t
int mbs_efm_supported(mbs_geometry_type t);

#endif  // MBS_CORE_CONTACT_IMPL_H_
