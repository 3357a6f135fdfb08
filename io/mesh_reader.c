// Reading triangle meshes: STL (ASCII and binary) and Wavefront OBJ (see mbs/mesh.h).
#include "mbs/mesh.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

//---------------------------------- growing arrays and errors ----------------------------------

typedef struct reader {
  const char* path;
  mbs_error* err;
  double* v;
  int nv, capv;
  int* t;
  int nt, capt;
  // STL vertex merging: open addressing, slots hold vertex index + 1 (0 = empty)
  int* hash;
  size_t hcap;
} reader;

static int fail(reader* r, int code, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(reader* r, int code, int line, const char* fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (line > 0)
    return mbs_error_set(r->err, code, "mbs_mesh_read", line, r->path, "%s:%d: %s", r->path,
                         line, msg);
  return mbs_error_set(r->err, code, "mbs_mesh_read", 0, r->path, "%s: %s", r->path, msg);
}

static int no_memory(reader* r) { return fail(r, MBS_ERR_NO_MEMORY, 0, "out of memory"); }

static int push_vertex(reader* r, const double x[3]) {
  if (r->nv == r->capv) {
    const int cap = r->capv ? 2 * r->capv : 256;
    double* v = realloc(r->v, 3 * (size_t)cap * sizeof(double));
    if (!v) return -1;
    r->v = v;
    r->capv = cap;
  }
  memcpy(r->v + 3 * (size_t)r->nv, x, 3 * sizeof(double));
  return r->nv++;
}

// append a triangle; one that repeats a vertex (zero area) is dropped
static int push_triangle(reader* r, int a, int b, int c) {
  if (a == b || b == c || a == c) return 0;
  if (r->nt == r->capt) {
    const int cap = r->capt ? 2 * r->capt : 256;
    int* t = realloc(r->t, 3 * (size_t)cap * sizeof(int));
    if (!t) return -1;
    r->t = t;
    r->capt = cap;
  }
  int* t = r->t + 3 * (size_t)r->nt++;
  t[0] = a;
  t[1] = b;
  t[2] = c;
  return 0;
}

static uint64_t hash_point(const double x[3]) {
  uint64_t h = 1469598103934665603ULL;
  for (int k = 0; k < 3; k++) {
    const double d = x[k] == 0 ? 0.0 : x[k];  // -0 and +0 are one vertex
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    h ^= u;
    h *= 1099511628211ULL;
    h ^= h >> 29;
  }
  return h;
}

// the index of vertex x, added if new (STL: identical vertices are one); -1 out of memory
static int merge_vertex(reader* r, const double x[3]) {
  if (2 * (size_t)(r->nv + 1) > r->hcap) {  // keep the load below 1/2
    const size_t cap = r->hcap ? 2 * r->hcap : 1024;
    int* h = calloc(cap, sizeof(int));
    if (!h) return -1;
    for (int i = 0; i < r->nv; i++) {
      size_t s = (size_t)hash_point(r->v + 3 * (size_t)i) & (cap - 1);
      while (h[s]) s = (s + 1) & (cap - 1);
      h[s] = i + 1;
    }
    free(r->hash);
    r->hash = h;
    r->hcap = cap;
  }
  size_t s = (size_t)hash_point(x) & (r->hcap - 1);
  while (r->hash[s]) {
    const double* y = r->v + 3 * (size_t)(r->hash[s] - 1);
    if (y[0] == x[0] && y[1] == x[1] && y[2] == x[2]) return r->hash[s] - 1;
    s = (s + 1) & (r->hcap - 1);
  }
  const int i = push_vertex(r, x);
  if (i >= 0) r->hash[s] = i + 1;
  return i;
}

//---------------------------------- lines ------------------------------------------------------

// the next line of buf (NUL-terminated in place, without the line end); NULL at the end
static char* next_line(char** cursor, char* end) {
  char* s = *cursor;
  if (s >= end) return NULL;
  char* e = s;
  while (e < end && *e != '\n') e++;
  char* next = e < end ? e + 1 : end;
  if (e > s && e[-1] == '\r') e--;
  *e = '\0';
  *cursor = next;
  return s;
}

static char* skip_space(char* s) {
  while (*s == ' ' || *s == '\t' || *s == '\v' || *s == '\f') s++;
  return s;
}

// the next whitespace-separated token of *s (NUL-terminated in place); NULL if none
static char* next_token(char** s) {
  char* a = skip_space(*s);
  if (!*a) return NULL;
  char* b = a;
  while (*b && *b != ' ' && *b != '\t' && *b != '\v' && *b != '\f' && *b != '\r') b++;
  if (*b) *b++ = '\0';
  *s = b;
  return a;
}

// three finite numbers from the rest of the line
static int parse_point(char** s, double x[3]) {
  for (int k = 0; k < 3; k++) {
    char* tok = next_token(s);
    if (!tok) return 0;
    char* e;
    errno = 0;
    x[k] = strtod(tok, &e);
    if (*e || e == tok || !isfinite(x[k])) return 0;
  }
  return 1;
}

//---------------------------------- STL --------------------------------------------------------

static uint32_t le32(const unsigned char* b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static double le_float(const unsigned char* b) {
  const uint32_t u = le32(b);
  float f;
  memcpy(&f, &u, sizeof(f));
  return (double)f;
}

static int read_stl_binary(reader* r, const unsigned char* buf, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    const unsigned char* rec = buf + 84 + 50 * (size_t)i;
    int idx[3];
    for (int j = 0; j < 3; j++) {
      double x[3];
      for (int k = 0; k < 3; k++) x[k] = le_float(rec + 12 + 12 * j + 4 * k);
      if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
        return fail(r, MBS_ERR_PARSE, 0, "binary STL triangle %u: vertex %d is not finite",
                    (unsigned)i + 1, j + 1);
      if ((idx[j] = merge_vertex(r, x)) < 0) return no_memory(r);
    }
    if (push_triangle(r, idx[0], idx[1], idx[2])) return no_memory(r);
  }
  return MBS_OK;
}

static int read_stl_ascii(reader* r, char* buf, char* end) {
  char* cur = buf;
  char* line;
  int lineno = 0, in_facet = 0, in_loop = 0, nvert = 0, idx[3] = {0, 0, 0}, facet_line = 0;
  while ((line = next_line(&cur, end))) {
    lineno++;
    char* s = line;
    char* kw = next_token(&s);
    if (!kw) continue;
    if (strcmp(kw, "solid") == 0 || strcmp(kw, "endsolid") == 0) {
      if (in_facet) return fail(r, MBS_ERR_PARSE, lineno, "'%s' inside a facet", kw);
    } else if (strcmp(kw, "facet") == 0) {
      if (in_facet) return fail(r, MBS_ERR_PARSE, lineno, "'facet' inside a facet");
      in_facet = 1;
      nvert = 0;
      facet_line = lineno;
    } else if (strcmp(kw, "outer") == 0) {
      if (!in_facet || in_loop) return fail(r, MBS_ERR_PARSE, lineno, "unexpected 'outer loop'");
      in_loop = 1;
    } else if (strcmp(kw, "vertex") == 0) {
      if (!in_loop) return fail(r, MBS_ERR_PARSE, lineno, "'vertex' outside a facet's loop");
      double x[3];
      if (!parse_point(&s, x))
        return fail(r, MBS_ERR_PARSE, lineno, "a vertex needs three finite numbers");
      if (nvert == 3)
        return fail(r, MBS_ERR_PARSE, lineno, "a facet has more than 3 vertices");
      if ((idx[nvert++] = merge_vertex(r, x)) < 0) return no_memory(r);
    } else if (strcmp(kw, "endloop") == 0) {
      if (!in_loop) return fail(r, MBS_ERR_PARSE, lineno, "'endloop' without 'outer loop'");
      in_loop = 0;
    } else if (strcmp(kw, "endfacet") == 0) {
      if (!in_facet || in_loop)
        return fail(r, MBS_ERR_PARSE, lineno, "'endfacet' without a closed facet");
      if (nvert != 3)
        return fail(r, MBS_ERR_PARSE, lineno, "the facet has %d vertices, not 3", nvert);
      if (push_triangle(r, idx[0], idx[1], idx[2])) return no_memory(r);
      in_facet = 0;
    } else {
      return fail(r, MBS_ERR_PARSE, lineno, "unexpected '%s' in an ASCII STL file", kw);
    }
  }
  if (in_facet)
    return fail(r, MBS_ERR_PARSE, lineno, "the file ends inside the facet begun on line %d",
                facet_line);
  return MBS_OK;
}

// ASCII STL: starts with "solid", is text (no NUL byte) and has a facet or an endsolid (some
// binary files start their 80-byte header with "solid" too)
static int looks_ascii(const unsigned char* buf, size_t size) {
  const char* s = skip_space((char*)buf);
  while (*s == '\n' || *s == '\r') s = skip_space((char*)s + 1);
  if (strncmp(s, "solid", 5) != 0 || memchr(buf, '\0', size)) return 0;
  return strstr((const char*)buf, "facet") || strstr((const char*)buf, "endsolid");
}

static int read_stl(reader* r, unsigned char* buf, size_t size) {
  const uint32_t n = size >= 84 ? le32(buf + 80) : 0;
  const uint64_t want = 84 + 50 * (uint64_t)n;
  if (size >= 84 && want == size) return read_stl_binary(r, buf, n);
  if (looks_ascii(buf, size)) return read_stl_ascii(r, (char*)buf, (char*)buf + size);
  if (size < 84)
    return fail(r, MBS_ERR_PARSE, 0,
                "neither ASCII STL nor binary STL (%zu bytes, less than the 84-byte header)",
                size);
  if (size < want)
    return fail(r, MBS_ERR_PARSE, 0,
                "binary STL truncated in triangle %llu: the header announces %u triangles "
                "(%llu bytes) but the file has %zu bytes",
                (unsigned long long)((size - 84) / 50 + 1), (unsigned)n, (unsigned long long)want,
                size);
  return fail(r, MBS_ERR_PARSE, 0,
              "binary STL of %zu bytes, but the header announces %u triangles (%llu bytes)", size,
              (unsigned)n, (unsigned long long)want);
}

//---------------------------------- OBJ --------------------------------------------------------

static int read_obj(reader* r, char* buf, char* end) {
  char* cur = buf;
  char* line;
  int lineno = 0;
  while ((line = next_line(&cur, end))) {
    lineno++;
    char* s = line;
    char* kw = next_token(&s);
    if (!kw || kw[0] == '#') continue;
    if (strcmp(kw, "v") == 0) {
      double x[3];
      if (!parse_point(&s, x))
        return fail(r, MBS_ERR_PARSE, lineno, "a vertex needs three finite numbers");
      if (push_vertex(r, x) < 0) return no_memory(r);
    } else if (strcmp(kw, "f") == 0) {
      int first = -1, prev = -1, count = 0;
      char* tok;
      while ((tok = next_token(&s))) {
        char* e;
        errno = 0;
        const long i = strtol(tok, &e, 10);
        if (e == tok || (*e && *e != '/') || errno)
          return fail(r, MBS_ERR_PARSE, lineno, "bad face vertex '%s'", tok);
        long v = i > 0 ? i - 1 : (long)r->nv + i;
        if (i == 0 || v < 0 || v >= r->nv)
          return fail(r, MBS_ERR_PARSE, lineno,
                      "face vertex index %ld is out of range (%d vertices so far)", i, r->nv);
        if (count == 0)
          first = (int)v;
        else if (count >= 2 && push_triangle(r, first, prev, (int)v))
          return no_memory(r);
        prev = (int)v;
        count++;
      }
      if (count < 3)
        return fail(r, MBS_ERR_PARSE, lineno, "a face needs at least 3 vertices, not %d", count);
    }
    // other records (vt, vn, g, o, s, usemtl, mtllib, l, p, ...) carry nothing we need
  }
  return MBS_OK;
}

//---------------------------------- entry points -----------------------------------------------

void mbs_mesh_free(mbs_mesh* mesh) {
  if (!mesh) return;
  free(mesh->vertices);
  free(mesh->triangles);
  memset(mesh, 0, sizeof(*mesh));
}

static int has_ext(const char* path, const char* ext) {
  const size_t n = strlen(path), m = strlen(ext);
  return n > m && strcasecmp(path + n - m, ext) == 0;
}

int mbs_mesh_read(const char* path, mbs_mesh* mesh, mbs_error* err) {
  if (!mesh) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "mesh", "mbs_mesh_read: no mesh given");
  memset(mesh, 0, sizeof(*mesh));
  if (!path) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "mesh", "mbs_mesh_read: no path given");
  reader r;
  memset(&r, 0, sizeof(r));
  r.path = path;
  r.err = err;
  const int stl = has_ext(path, ".stl"), obj = has_ext(path, ".obj");
  if (!stl && !obj)
    return fail(&r, MBS_ERR_ARGUMENT, 0, "unknown mesh format (expected .stl or .obj)");
  FILE* fp = fopen(path, "rb");
  if (!fp) return fail(&r, MBS_ERR_IO, 0, "cannot open: %s", strerror(errno));
  long size = -1;
  if (fseek(fp, 0, SEEK_END) == 0) size = ftell(fp);
  if (size < 0 || fseek(fp, 0, SEEK_SET) != 0) {
    fclose(fp);
    return fail(&r, MBS_ERR_IO, 0, "cannot determine the file size");
  }
  unsigned char* buf = malloc((size_t)size + 1);
  if (!buf) {
    fclose(fp);
    return no_memory(&r);
  }
  const size_t got = fread(buf, 1, (size_t)size, fp);
  const int read_error = ferror(fp);
  fclose(fp);
  if (got != (size_t)size || read_error) {
    free(buf);
    return fail(&r, MBS_ERR_IO, 0, "read error");
  }
  buf[size] = '\0';
  int rc = stl ? read_stl(&r, buf, (size_t)size)
               : read_obj(&r, (char*)buf, (char*)buf + size);
  free(buf);
  free(r.hash);
  if (rc == MBS_OK && r.nt == 0) rc = fail(&r, MBS_ERR_PARSE, 0, "the file holds no triangles");
  if (rc != MBS_OK) {
    free(r.v);
    free(r.t);
    return rc;
  }
  mesh->vertices = r.v;
  mesh->nvertex = r.nv;
  mesh->triangles = r.t;
  mesh->ntriangle = r.nt;
  if (err) mbs_error_clear(err);
  return MBS_OK;
}

double mbs_mesh_area(const mbs_mesh* mesh) {
  double area = 0;
  for (int t = 0; t < mesh->ntriangle; t++) {
    const int* tv = mesh->triangles + 3 * t;
    const double* a = mesh->vertices + 3 * tv[0];
    const double* b = mesh->vertices + 3 * tv[1];
    const double* c = mesh->vertices + 3 * tv[2];
    const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                         e1[0] * e2[1] - e1[1] * e2[0]};
    area += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  }
  return area;
}
