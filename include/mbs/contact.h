// Compliant contact (Simbody paper §5 and Appendix A; OpenSim's HuntCrossleyForce and
// ElasticFoundationForce): contact geometry fixed on bodies, and force elements that press
// pairs of geometries apart with Hertz or elastic-foundation stiffness, Hunt-Crossley
// dissipation and Stribeck friction. A contact force never pulls.
#ifndef MBS_CONTACT_H_
#define MBS_CONTACT_H_

#include "mbs/state.h"
#include "mbs/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_geometry_type {
  MBS_GEOM_HALFSPACE = 0,  // OpenSim ContactHalfSpace: the solid is x > 0 of its frame
                           // (outward normal -x), as Simbody's ContactGeometry::HalfSpace
  MBS_GEOM_SPHERE,         // ContactSphere: radius, centered at the frame's origin
  MBS_GEOM_ELLIPSOID,      // radii along the frame's x, y, z
  MBS_GEOM_MESH,           // ContactMesh: triangles, vertices in the frame, outward normals
                           // by the right-hand rule (counterclockwise seen from outside)
  MBS_GEOM_COUNT
} mbs_geometry_type;

typedef struct mbs_contact_geometry_spec {
  const char* name;        // unique
  mbs_geometry_type type;
  int body;                // 0 = Ground
  mbs_frame_spec frame;    // the geometry's frame on the body (OpenSim location, orientation)
  double radius;           // sphere, m
  double radii[3];         // ellipsoid, m
  const double* vertices;  // mesh: nvertex x 3, copied
  int nvertex;
  const int* triangles;    // mesh: ntriangle x 3 vertex indices, copied
  int ntriangle;
} mbs_contact_geometry_spec;

// a spec with the frame at the body origin, for the given name, type and body
mbs_contact_geometry_spec mbs_contact_geometry_spec_default(const char* name,
                                                            mbs_geometry_type type, int body);
// Add a contact geometry; returns its index (>= 0) or a negative status.
int mbs_system_add_contact_geometry(mbs_system* sys, const mbs_contact_geometry_spec* spec);
int mbs_system_ncontact_geometry(const mbs_system* sys);
int mbs_contact_geometry_find(const mbs_system* sys, const char* name);  // -1 if unknown
const char* mbs_contact_geometry_name(const mbs_system* sys, int geometry);
int mbs_contact_geometry_type(const mbs_system* sys, int geometry);  // mbs_geometry_type, -1
int mbs_contact_geometry_body(const mbs_system* sys, int geometry);  // its body, -1

// The material of one geometry within a contact force (OpenSim ContactParameters).
typedef struct mbs_contact_surface {
  int geometry;
  double stiffness;          // Hunt-Crossley: plane-strain modulus E (Pa = N/m^2);
                             // elastic foundation: N/m^3 (pressure per depth)
  double dissipation;        // s/m
  double static_friction;    // mu_s
  double dynamic_friction;   // mu_d
  double viscous_friction;   // mu_v, s/m
} mbs_contact_surface;

// Hunt-Crossley (Hertz) contact among the given surfaces: every pair of them on different
// bodies that the force knows how to collide (sphere-halfspace, sphere-sphere,
// ellipsoid-halfspace) is checked; parameters of a pair combine by Appendix A's rules.
// transition_velocity (m/s, > 0) shapes the Stribeck friction curve. Returns the force index.
// Stiffness is the plane-strain modulus E itself (OpenSim's HuntCrossleyForce "stiffness";
// Simbody raises it to the power 2/3 inside). Friction follows Simbody's HuntCrossleyForce:
// mu = min(v/vt, 1) (mu_d + 2 (mu_s - mu_d) / (1 + (v/vt)^2)) + mu_v v, coefficients of a
// pair combined as 2 mu1 mu2 / (mu1 + mu2) (details in core/contact.c). Meshes are refused;
// other pairs (ellipsoid-sphere, ...) are not collided. Parameters: /forceset/<force>/
// transition_velocity and /forceset/<force>/<geometry>/{stiffness, dissipation,
// static_friction, dynamic_friction, viscous_friction}; geometry: /contactgeometryset/<name>/
// {location, orientation, radius, radii}.
int mbs_system_add_hunt_crossley(mbs_system* sys, const mbs_contact_surface* surfaces, int n,
                                 double transition_velocity);
// Elastic foundation contact: each mesh among the surfaces against each other surface on
// another body; one spring per mesh face (force stiffness * area * depth), with the same
// dissipation and friction laws. Returns the force index.
// The mesh's stiffness is exactly OpenSim's ElasticFoundationForce "stiffness" (N/m^3). The
// other surface (a half-space or a sphere; meshes and ellipsoids are refused) is rigid when
// its stiffness is 0, which is what OpenSim and Simbody do with every non-mesh geometry (so
// give it 0 to reproduce them); with stiffness k2 > 0 the two layers act in series,
// k = k1 k2 / (k1 + k2) (the paper's EFM combining rule).
int mbs_system_add_elastic_foundation(mbs_system* sys, const mbs_contact_surface* surfaces,
                                      int n, double transition_velocity);

// Friction laws mu(v) of the contact forces, v the slip speed (both get f = mu(v) f_normal):
typedef enum mbs_friction_model {
  // Simbody's HuntCrossleyForce and ElasticFoundationForce, which OpenSim uses (the default):
  // mu = min(v/vt, 1) (mu_d + 2 (mu_s - mu_d) / (1 + (v/vt)^2)) + mu_v v; a kink at vt
  MBS_FRICTION_HOLLARS = 0,
  // the Simbody paper's Stribeck curve (§5.1): a quintic from 0 up to mu_s on [0, vt], a
  // quintic down to mu_d on [vt, 3 vt], then mu_d; C2 everywhere; plus mu_v v
  MBS_FRICTION_STRIBECK = 1,
} mbs_friction_model;

// choose the friction law of contact force `force` (while building)
int mbs_system_set_contact_friction_model(mbs_system* sys, int force, mbs_friction_model model);
// mu(v) of a law, for given (combined) coefficients and transition velocity
double mbs_contact_friction_coefficient(mbs_friction_model model, double us, double ud,
                                        double uv, double vt, double v);

// One contact of a contact force at the current State.
typedef struct mbs_contact_report {
  int geometry1, geometry2;  // the pair
  int in_contact;            // 0: the pair is apart (the rest is zero)
  double penetration;        // m (Hunt-Crossley: depth; elastic foundation: deepest face)
  double point[3];           // contact point (center of pressure), Ground
  double normal[3];          // unit normal from geometry 1 toward geometry 2, Ground
  double force[3];           // force on geometry 2's body at `point`, Ground (geometry 1's body
                             // gets the opposite); normal and friction parts together
} mbs_contact_report;

// The pairs of contact force `force`, in a fixed order [Dynamics]. Writes up to `max` reports
// and the number of pairs to *n.
int mbs_get_contact_reports(const mbs_system* sys, mbs_state* st, int force,
                            mbs_contact_report* reports, int max, int* n);

#ifdef __cplusplus
}
#endif

#endif  // MBS_CONTACT_H_
