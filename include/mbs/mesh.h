// Triangle meshes from files: STL (ASCII or binary) and Wavefront OBJ, read into the vertex and
// triangle arrays that mbs_contact_geometry_spec takes for a MBS_GEOM_MESH (OpenSim's
// ContactMesh). Coordinates are taken as they are (no unit conversion).
#ifndef MBS_MESH_H_
#define MBS_MESH_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_mesh {
  double* vertices;  // nvertex x 3
  int nvertex;
  int* triangles;    // ntriangle x 3 vertex indices, counterclockwise seen from outside
  int ntriangle;
} mbs_mesh;

// Read `path`; the format comes from the extension (.stl or .obj, any case).
// - STL: binary when the size is 84 + 50 n bytes for the n triangles its header announces,
//   else ASCII (starting with "solid"). Identical vertices are merged into one; the facet
//   normals in the file are ignored (the vertex order gives the orientation).
// - OBJ: "v x y z" and "f" records ("f 1 2 3", "1/4/2", "1//2"; negative indices count back
//   from the last vertex read); a polygon of n vertices becomes n - 2 triangles (a fan); other
//   records (vt, vn, g, o, s, usemtl, mtllib, comments) are skipped.
// On success *mesh owns its arrays (mbs_mesh_free). On failure *mesh is empty and err says
// why, naming the file and the line ("foot.obj:12: ...") or, in binary STL, the triangle.
int mbs_mesh_read(const char* path, mbs_mesh* mesh, mbs_error* err);
void mbs_mesh_free(mbs_mesh* mesh);

// total area of the triangles
double mbs_mesh_area(const mbs_mesh* mesh);

#ifdef __cplusplus
}
#endif

#endif  // MBS_MESH_H_
