// Mesh files: ASCII and binary STL and OBJ written here to a temporary folder and read back
// (counts, merged STL vertices, orientation, areas), and malformed files whose errors name the
// file and the line (or, in binary STL, the triangle). A mesh read from a file becomes a contact
// geometry.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbs/mbs.h"
#include "mbs/mesh.h"
#include "mbs_test.h"

static char dir[256];

static const char* path_of(const char* name) {
  static char p[512];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  return p;
}

static void write_text(const char* name, const char* text) {
  FILE* f = fopen(path_of(name), "wb");
  EXPECT_TRUE(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static int contains(const char* s, const char* sub) { return s && strstr(s, sub) != NULL; }

// the right tetrahedron (0,0,0), (1,0,0), (0,1,0), (0,0,1), faces counterclockwise from outside
static const double tet_v[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
static const int tet_f[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
static const double tet_area = 1.5 + 0.86602540378443865;

static void check_tetrahedron(const mbs_mesh* m) {
  EXPECT_EQ_INT(m->nvertex, 4);
  EXPECT_EQ_INT(m->ntriangle, 4);
  EXPECT_NEAR(mbs_mesh_area(m), tet_area, 1e-12);
  // every face's normal points away from the inside point (0.1, 0.1, 0.1)
  for (int t = 0; t < m->ntriangle; t++) {
    const double* a = m->vertices + 3 * m->triangles[3 * t];
    const double* b = m->vertices + 3 * m->triangles[3 * t + 1];
    const double* c = m->vertices + 3 * m->triangles[3 * t + 2];
    const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                         e1[0] * e2[1] - e1[1] * e2[0]};
    const double d[3] = {a[0] - 0.1, a[1] - 0.1, a[2] - 0.1};
    EXPECT_TRUE(n[0] * d[0] + n[1] * d[1] + n[2] * d[2] > 0);
  }
}

static void put_u32(unsigned char* p, uint32_t u) {
  p[0] = (unsigned char)u;
  p[1] = (unsigned char)(u >> 8);
  p[2] = (unsigned char)(u >> 16);
  p[3] = (unsigned char)(u >> 24);
}
static void put_float(unsigned char* p, float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  put_u32(p, u);
}

// a binary STL of the tetrahedron; the header starts with "solid" as some exporters write
static size_t binary_tetrahedron(unsigned char* buf) {
  memset(buf, 0, 84 + 50 * 4);
  memcpy(buf, "solid exported by a CAD program", 31);
  put_u32(buf + 80, 4);
  for (int t = 0; t < 4; t++) {
    unsigned char* r = buf + 84 + 50 * t;
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++) put_float(r + 12 + 12 * j + 4 * k, (float)tet_v[tet_f[t][j]][k]);
  }
  return 84 + 50 * 4;
}

static void test_stl(void) {
  // ASCII: each facet repeats its vertices; the reader merges them
  char text[4096];
  size_t n = 0;
  n += (size_t)snprintf(text + n, sizeof(text) - n, "solid tet\n");
  for (int t = 0; t < 4; t++) {
    n += (size_t)snprintf(text + n, sizeof(text) - n, "  facet normal 0 0 0\r\n    outer loop\n");
    for (int j = 0; j < 3; j++) {
      const double* v = tet_v[tet_f[t][j]];
      n += (size_t)snprintf(text + n, sizeof(text) - n, "      vertex %.17g %.17g %.17g\n", v[0],
                            v[1], v[2]);
    }
    n += (size_t)snprintf(text + n, sizeof(text) - n, "    endloop\n  endfacet\n");
  }
  snprintf(text + n, sizeof(text) - n, "endsolid tet\n");
  write_text("tet.stl", text);
  mbs_mesh m;
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_mesh_read(path_of("tet.stl"), &m, &err));
  check_tetrahedron(&m);
  mbs_mesh_free(&m);

  // binary, upper-case extension
  unsigned char buf[84 + 50 * 4];
  const size_t size = binary_tetrahedron(buf);
  FILE* f = fopen(path_of("tet_bin.STL"), "wb");
  fwrite(buf, 1, size, f);
  fclose(f);
  EXPECT_OK(mbs_mesh_read(path_of("tet_bin.STL"), &m, &err));
  check_tetrahedron(&m);
  mbs_mesh_free(&m);

  // truncated binary: the error names the file and the triangle
  f = fopen(path_of("cut.stl"), "wb");
  fwrite(buf, 1, size - 30, f);
  fclose(f);
  EXPECT_TRUE(mbs_mesh_read(path_of("cut.stl"), &m, &err) == MBS_ERR_PARSE);
  printf("  %s\n", err.message);
  EXPECT_TRUE(contains(err.message, path_of("cut.stl")));
  EXPECT_TRUE(contains(err.message, "truncated in triangle 4"));
  EXPECT_TRUE(m.nvertex == 0 && m.vertices == NULL && m.triangles == NULL);

  // ASCII with a facet of two vertices: file and line
  write_text("bad.stl",
             "solid bad\n"
             "facet normal 0 0 1\n"
             " outer loop\n"
             "  vertex 0 0 0\n"
             "  vertex 1 0 0\n"
             " endloop\n"
             "endfacet\n"
             "endsolid\n");
  EXPECT_TRUE(mbs_mesh_read(path_of("bad.stl"), &m, &err) == MBS_ERR_PARSE);
  printf("  %s\n", err.message);
  char where[600];
  snprintf(where, sizeof(where), "%s:7:", path_of("bad.stl"));
  EXPECT_TRUE(contains(err.message, where));
  EXPECT_TRUE(contains(err.message, "2 vertices"));
  write_text("bad2.stl", "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\n");
  EXPECT_TRUE(mbs_mesh_read(path_of("bad2.stl"), &m, &err) == MBS_ERR_PARSE);
  snprintf(where, sizeof(where), "%s:4:", path_of("bad2.stl"));
  EXPECT_TRUE(contains(err.message, where));
  write_text("empty.stl", "solid nothing\nendsolid nothing\n");
  EXPECT_TRUE(mbs_mesh_read(path_of("empty.stl"), &m, &err) == MBS_ERR_PARSE);
  EXPECT_TRUE(contains(err.message, "no triangles"));
}

static void test_obj(void) {
  // a unit cube of quads (some with texture and normal indices, one with negative indices)
  write_text("cube.obj",
             "# a cube\n"
             "mtllib cube.mtl\n"
             "o cube\n"
             "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
             "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
             "vt 0 0\nvn 0 0 -1\n"
             "s off\n"
             "f 1/1/1 4/1/1 3/1/1 2/1/1\n"
             "f 5//1 6//1 7//1 8//1\n"
             "f 1 2 6 5\n"
             "f 2 3 7 6\n"
             "f -6 -5 -1 -2\n"  // 3 4 8 7 (8 vertices so far)
             "f 1 5 8 4\n");
  mbs_mesh m;
  mbs_error err;
  EXPECT_OK(mbs_mesh_read(path_of("cube.obj"), &m, &err));
  EXPECT_EQ_INT(m.nvertex, 8);
  EXPECT_EQ_INT(m.ntriangle, 12);
  EXPECT_NEAR(mbs_mesh_area(&m), 6.0, 1e-14);
  // the fan of "f -6 -5 -1 -2": (3, 4, 8), (3, 8, 7) in 1-based numbering
  EXPECT_EQ_INT(m.triangles[3 * 8], 2);
  EXPECT_EQ_INT(m.triangles[3 * 8 + 1], 3);
  EXPECT_EQ_INT(m.triangles[3 * 8 + 2], 7);
  EXPECT_EQ_INT(m.triangles[3 * 9 + 1], 7);
  EXPECT_EQ_INT(m.triangles[3 * 9 + 2], 6);
  // closed and outward: the divergence theorem gives the volume 1
  double vol = 0;
  for (int t = 0; t < m.ntriangle; t++) {
    const double* a = m.vertices + 3 * m.triangles[3 * t];
    const double* b = m.vertices + 3 * m.triangles[3 * t + 1];
    const double* c = m.vertices + 3 * m.triangles[3 * t + 2];
    vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
            a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
  }
  EXPECT_NEAR(vol, 1.0, 1e-14);

  // the cube as a contact mesh
  mbs_system* sys = mbs_system_create("mesh");
  mbs_body_spec s = mbs_body_spec_default("box", 0, MBS_MOB_FREE);
  s.mass = 1;
  s.inertia[0] = s.inertia[1] = s.inertia[2] = 1.0 / 6;
  const int b = mbs_system_add_body(sys, &s);
  mbs_contact_geometry_spec g = mbs_contact_geometry_spec_default("cube", MBS_GEOM_MESH, b);
  g.vertices = m.vertices;
  g.nvertex = m.nvertex;
  g.triangles = m.triangles;
  g.ntriangle = m.ntriangle;
  EXPECT_EQ_INT(mbs_system_add_contact_geometry(sys, &g), 0);
  mbs_mesh_free(&m);  // the system keeps its own copy
  EXPECT_OK(mbs_system_finalize(sys));
  mbs_system_destroy(sys);

  // a bad index names the file and line
  write_text("bad.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n\n# face\nf 1 2 9\n");
  EXPECT_TRUE(mbs_mesh_read(path_of("bad.obj"), &m, &err) == MBS_ERR_PARSE);
  printf("  %s\n", err.message);
  char where[600];
  snprintf(where, sizeof(where), "%s:6:", path_of("bad.obj"));
  EXPECT_TRUE(contains(err.message, where));
  EXPECT_TRUE(contains(err.message, "index 9 is out of range"));
  write_text("bad0.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n");
  EXPECT_TRUE(mbs_mesh_read(path_of("bad0.obj"), &m, &err) == MBS_ERR_PARSE);
  write_text("badv.obj", "v 0 0\n");
  EXPECT_TRUE(mbs_mesh_read(path_of("badv.obj"), &m, &err) == MBS_ERR_PARSE);
  snprintf(where, sizeof(where), "%s:1:", path_of("badv.obj"));
  EXPECT_TRUE(contains(err.message, where));
  write_text("two.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n");
  EXPECT_TRUE(mbs_mesh_read(path_of("two.obj"), &m, &err) == MBS_ERR_PARSE);
  EXPECT_TRUE(contains(err.message, "at least 3"));
  // no such file, unknown format
  EXPECT_TRUE(mbs_mesh_read(path_of("missing.obj"), &m, &err) == MBS_ERR_IO);
  EXPECT_TRUE(contains(err.message, "missing.obj"));
  EXPECT_TRUE(mbs_mesh_read(path_of("cube.ply"), &m, &err) == MBS_ERR_ARGUMENT);
}

int main(void) {
  const char* tmp = getenv("TMPDIR");
  snprintf(dir, sizeof(dir), "%s/mbs_test_mesh_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return EXIT_FAILURE;
  }
  test_stl();
  test_obj();
  // clean up
  const char* files[] = {"tet.stl", "tet_bin.STL", "cut.stl",  "bad.stl",  "bad2.stl",
                         "empty.stl", "cube.obj",  "bad.obj", "bad0.obj", "badv.obj",
                         "two.obj"};
  for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) remove(path_of(files[i]));
  rmdir(dir);
  return mbs_test_finish("test_mesh");
}
