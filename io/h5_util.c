// HDF5 helpers shared by io/store.c and io/posture_table.c. See h5_util.h.
#include "h5_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mbs_h5_quiet mbs_h5_quiet_begin(void) {
  mbs_h5_quiet q = {NULL, NULL};
  H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return q;
}

void mbs_h5_quiet_end(mbs_h5_quiet q) { H5Eset_auto2(H5E_DEFAULT, q.func, q.data); }

typedef struct walk_info {
  char api[64];
  char inner[256];
  int n;
} walk_info;

static herr_t walk_cb(unsigned n, const H5E_error2_t* e, void* data) {
  walk_info* w = data;
  if (n == 0 && e->func_name) snprintf(w->api, sizeof w->api, "%s", e->func_name);
  if (e->desc && *e->desc) snprintf(w->inner, sizeof w->inner, "%s", e->desc);
  w->n++;
  return 0;
}

int mbs_h5_fail(mbs_error* err, const char* path, const char* fmt, ...) {
  char what[192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  walk_info w;
  memset(&w, 0, sizeof w);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &w);
  H5Eclear2(H5E_DEFAULT);
  // the system's message when the innermost error carries one ("error message = '...'")
  const char* sys = strstr(w.inner, "error message = '");
  if (sys) {
    sys += strlen("error message = '");
    const char* end = strchr(sys, '\'');
    const int len = end ? (int)(end - sys) : (int)strlen(sys);
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot %s: %.*s (HDF5 %s)", path, what, len, sys,
                    w.api[0] ? w.api : "error");
  }
  if (w.n && w.inner[0])
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot %s: %s (HDF5 %s)", path, what, w.inner,
                    w.api[0] ? w.api : "error");
  return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot %s (HDF5 error)", path, what);
}

void mbs_h5_close(hid_t* id, herr_t (*fn)(hid_t)) {
  if (*id >= 0) fn(*id);
  *id = -1;
}

hid_t mbs_h5_str_type(size_t width) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return t;
  if (H5Tset_size(t, width ? width : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0 ||
      H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

hid_t mbs_h5_vlen_str_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return t;
  if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

// vlen: a variable-length UTF-8 string, else fixed-length ASCII of the value's length
static int attr_string(const char* path, mbs_error* err, hid_t loc, const char* key,
                       const char* value, int vlen) {
  int rc = 0;
  hid_t t = -1, sp = -1, a = -1;
  if (!value) value = "";
  size_t n = strlen(value);
  htri_t exists = H5Aexists(loc, key);
  H5TRY(exists, "check attribute '%s'", key);
  if (exists > 0) H5TRY(H5Adelete(loc, key), "replace attribute '%s'", key);
  if (vlen) {
    H5TRY(t = mbs_h5_vlen_str_type(), "make a string type for attribute '%s'", key);
  } else {
    H5TRY(t = mbs_h5_str_type(n), "make a string type for attribute '%s'", key);
  }
  H5TRY(sp = H5Screate(H5S_SCALAR), "make a dataspace for attribute '%s'", key);
  H5TRY(a = H5Acreate2(loc, key, t, sp, H5P_DEFAULT, H5P_DEFAULT), "create attribute '%s'", key);
  if (vlen) {
    H5TRY(H5Awrite(a, t, &value), "write attribute '%s'", key);
  } else {
    H5TRY(H5Awrite(a, t, value), "write attribute '%s'", key);
  }
done:
  mbs_h5_close(&a, H5Aclose);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&t, H5Tclose);
  return rc;
}

int mbs_h5_attr_string(const char* path, mbs_error* err, hid_t loc, const char* key,
                       const char* value) {
  return attr_string(path, err, loc, key, value, 0);
}

int mbs_h5_attr_utf8(const char* path, mbs_error* err, hid_t loc, const char* key,
                     const char* value) {
  return attr_string(path, err, loc, key, value, 1);
}

int mbs_h5_write_text(const char* path, mbs_error* err, hid_t loc, const char* name,
                      const char* text) {
  int rc = 0;
  hid_t t = -1, sp = -1, d = -1, dcpl = -1;
  H5TRY(t = mbs_h5_vlen_str_type(), "make a string type for '%s'", name);
  H5TRY(sp = H5Screate(H5S_SCALAR), "make a dataspace for '%s'", name);
  H5TRY(dcpl = H5Pcreate(H5P_DATASET_CREATE), "make dataset properties for '%s'", name);
  H5TRY(H5Pset_obj_track_times(dcpl, 0), "set dataset properties for '%s'", name);
  H5TRY(d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT), "create '%s'", name);
  H5TRY(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text), "write '%s'", name);
done:
  mbs_h5_close(&d, H5Dclose);
  mbs_h5_close(&dcpl, H5Pclose);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&t, H5Tclose);
  return rc;
}

char* mbs_h5_read_text(hid_t loc, const char* name) {
  if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return NULL;
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return NULL;
  char* out = NULL;
  hid_t ft = H5Dget_type(d), t = mbs_h5_vlen_str_type(), sp = H5Dget_space(d);
  char* v = NULL;
  if (ft >= 0 && t >= 0 && sp >= 0 && H5Tis_variable_str(ft) > 0 &&
      H5Sget_simple_extent_type(sp) == H5S_SCALAR &&
      H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) >= 0 && v) {
    out = strdup(v);
    H5Dvlen_reclaim(t, sp, H5P_DEFAULT, &v);
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (ft >= 0) H5Tclose(ft);
  H5Dclose(d);
  return out;
}

// ------------------------------------------------------------------------------------------
// walking a group's datasets

#if H5_VERSION_GE(1, 12, 0)
typedef H5O_info2_t dset_walk_info;
#else
typedef H5O_info_t dset_walk_info;
#endif

typedef struct dset_walk {
  mbs_h5_names* l;
  const char* prefix;
} dset_walk;

static herr_t dset_walk_cb(hid_t obj, const char* name, const dset_walk_info* info, void* data) {
  (void)obj;
  dset_walk* w = data;
  mbs_h5_names* l = w->l;
  if (info->type != H5O_TYPE_DATASET) return 0;
  if (l->n == l->cap) {
    const long cap = l->cap ? 2 * l->cap : 32;
    char** v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) {
      l->nomem = 1;
      return -1;
    }
    l->v = v;
    l->cap = cap;
  }
  const size_t np = strlen(w->prefix), len = strlen(name);
  char* s = malloc(np + len + 1);
  if (!s) {
    l->nomem = 1;
    return -1;
  }
  memcpy(s, w->prefix, np);
  memcpy(s + np, name, len + 1);
  l->v[l->n++] = s;
  return 0;
}

herr_t mbs_h5_list_datasets(hid_t g, const char* prefix, mbs_h5_names* l) {
  dset_walk w = {l, prefix ? prefix : ""};
#if H5_VERSION_GE(1, 12, 0)
  return H5Ovisit3(g, H5_INDEX_NAME, H5_ITER_INC, dset_walk_cb, &w, H5O_INFO_BASIC);
#elif H5_VERSION_GE(1, 10, 3)
  return H5Ovisit2(g, H5_INDEX_NAME, H5_ITER_INC, dset_walk_cb, &w, H5O_INFO_BASIC);
#else
  return H5Ovisit(g, H5_INDEX_NAME, H5_ITER_INC, dset_walk_cb, &w);
#endif
}

void mbs_h5_free_names(mbs_h5_names* l) {
  for (long i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}
