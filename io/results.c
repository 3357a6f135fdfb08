// A study type's own results in the study file (include/mbs/results.h).
#include "mbs/results.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdlib.h>
#include <string.h>

#include "h5_util.h"

struct mbs_results {
  char* path;
  hid_t file;
  hid_t gcpl;   // groups and datasets without timestamps
  mbs_h5_quiet quiet;
};

static mbs_results* open_mode(const char* path, unsigned mode, mbs_error* err);

mbs_results* mbs_results_open(const char* path, mbs_error* err) {
  return open_mode(path, H5F_ACC_RDWR, err);
}

mbs_results* mbs_results_open_read(const char* path, mbs_error* err) {
  return open_mode(path, H5F_ACC_RDONLY, err);
}

static mbs_results* open_mode(const char* path, unsigned mode, mbs_error* err) {
  mbs_results* r = calloc(1, sizeof(*r));
  if (!r || !(r->path = strdup(path))) {
    free(r);
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    return NULL;
  }
  r->quiet = mbs_h5_quiet_begin();
  int rc = 0;
  r->file = r->gcpl = -1;
  H5TRY(r->file = H5Fopen(path, mode, H5P_DEFAULT),
        mode == H5F_ACC_RDWR ? "open the file for writing" : "open the file");
  H5TRY(r->gcpl = H5Pcreate(H5P_GROUP_CREATE), "make group properties");
  H5TRY(H5Pset_obj_track_times(r->gcpl, 0), "set group properties");
done:
  if (rc) {
    mbs_h5_close(&r->gcpl, H5Pclose);
    mbs_h5_close(&r->file, H5Fclose);
    mbs_h5_quiet_end(r->quiet);
    free(r->path);
    free(r);
    return NULL;
  }
  return r;
}

int mbs_results_close(mbs_results* r, mbs_error* err) {
  if (!r) return MBS_OK;
  const char* path = r->path;
  int rc = 0;
  mbs_h5_close(&r->gcpl, H5Pclose);
  if (H5Fflush(r->file, H5F_SCOPE_LOCAL) < 0) rc = mbs_h5_fail(err, path, "write the file");
  if (H5Fclose(r->file) < 0 && !rc) rc = mbs_h5_fail(err, path, "close the file");
  mbs_h5_quiet_end(r->quiet);
  free(r->path);
  free(r);
  return rc;
}

// the groups on the way to `name` (all but its last segment)
static int parents(mbs_results* r, const char* name, mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  char part[1024];
  for (const char* e = strchr(name + 1, '/'); e && !rc; e = strchr(e + 1, '/')) {
    const size_t n = (size_t)(e - name);
    if (n >= sizeof part)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: name '%s' is too long", path, name);
    memcpy(part, name, n);
    part[n] = '\0';
    htri_t exists = H5Lexists(r->file, part, H5P_DEFAULT);
    H5TRY(exists, "look for group '%s'", part);
    if (!exists) {
      hid_t g;
      H5TRY(g = H5Gcreate2(r->file, part, H5P_DEFAULT, r->gcpl, H5P_DEFAULT),
            "create group '%s'", part);
      H5Gclose(g);
    }
  }
done:
  return rc;
}

int mbs_results_exists(mbs_results* r, const char* name) {
  // every group on the way must exist for H5Lexists
  char part[1024];
  for (const char* e = strchr(name + 1, '/');; e = strchr(e + 1, '/')) {
    const size_t n = e ? (size_t)(e - name) : strlen(name);
    if (n >= sizeof part) return 0;
    memcpy(part, name, n);
    part[n] = '\0';
    if (H5Lexists(r->file, part, H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return 0;
    }
    if (!e) return 1;
  }
}

int mbs_results_group(mbs_results* r, const char* name, int replace, mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  char full[1100];
  snprintf(full, sizeof full, "%s%s", name[0] == '/' ? "" : "/", name);
  if (mbs_results_exists(r, full)) {
    if (!replace) return MBS_OK;
    H5TRY(H5Ldelete(r->file, full, H5P_DEFAULT), "remove '%s'", full);
  }
  rc = parents(r, full, err);
  if (rc) return rc;
  hid_t g;
  H5TRY(g = H5Gcreate2(r->file, full, H5P_DEFAULT, r->gcpl, H5P_DEFAULT), "create group '%s'",
        full);
  H5Gclose(g);
done:
  return rc;
}

static int write_typed(mbs_results* r, const char* name, int rank, const long* dims,
                       hid_t file_type, hid_t mem_type, const void* data, const char* units,
                       mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  hid_t sp = -1, dcpl = -1, d = -1;
  char full[1100];
  snprintf(full, sizeof full, "%s%s", name[0] == '/' ? "" : "/", name);
  hsize_t hd[8];
  if (rank < 0 || rank > 8)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: '%s': rank %d", path, full, rank);
  long total = 1;
  for (int i = 0; i < rank; i++) {
    hd[i] = (hsize_t)dims[i];
    total *= dims[i];
  }
  rc = parents(r, full, err);
  if (rc) return rc;
  if (mbs_results_exists(r, full)) H5TRY(H5Ldelete(r->file, full, H5P_DEFAULT), "replace '%s'", full);
  H5TRY(sp = rank ? H5Screate_simple(rank, hd, NULL) : H5Screate(H5S_SCALAR),
        "make the dataspace of '%s'", full);
  H5TRY(dcpl = H5Pcreate(H5P_DATASET_CREATE), "make properties for '%s'", full);
  H5TRY(H5Pset_obj_track_times(dcpl, 0), "set properties of '%s'", full);
  H5TRY(d = H5Dcreate2(r->file, full, file_type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
        "create dataset '%s'", full);
  if (total > 0) H5TRY(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write '%s'", full);
  if (units) rc = mbs_h5_attr_utf8(path, err, d, "units", units);
done:
  mbs_h5_close(&d, H5Dclose);
  mbs_h5_close(&dcpl, H5Pclose);
  mbs_h5_close(&sp, H5Sclose);
  return rc;
}

int mbs_results_write(mbs_results* r, const char* name, int rank, const long* dims,
                      const double* data, const char* units, mbs_error* err) {
  return write_typed(r, name, rank, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data, units, err);
}

int mbs_results_write_int(mbs_results* r, const char* name, int rank, const long* dims,
                          const long* data, mbs_error* err) {
  return write_typed(r, name, rank, dims, H5T_STD_I64LE, H5T_NATIVE_LONG, data, NULL, err);
}

int mbs_results_strings(mbs_results* r, const char* name, int n, const char* const* v,
                        int scale, mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  size_t w = 1;
  for (int i = 0; i < n; i++)
    if (strlen(v[i]) > w) w = strlen(v[i]);
  char* buf = calloc((size_t)(n > 0 ? n : 1), w);
  hid_t t = -1, d = -1;
  NOMEM(buf);
  for (int i = 0; i < n; i++) memcpy(buf + (size_t)i * w, v[i], strlen(v[i]));
  H5TRY(t = mbs_h5_str_type(w), "make a string type for '%s'", name);
  const long dims[1] = {n};
  rc = write_typed(r, name, 1, dims, t, t, buf, NULL, err);
  if (rc || !scale) goto done;
  H5TRY(d = H5Dopen2(r->file, name, H5P_DEFAULT), "open '%s'", name);
  const char* last = strrchr(name, '/');
  H5TRY(H5DSset_scale(d, last ? last + 1 : name), "make '%s' a dimension scale", name);
done:
  mbs_h5_close(&d, H5Dclose);
  mbs_h5_close(&t, H5Tclose);
  free(buf);
  return rc;
}

int mbs_results_attach(mbs_results* r, const char* name, int axis, const char* scale,
                       const char* label, mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  hid_t d = -1, s = -1;
  H5TRY(d = H5Dopen2(r->file, name, H5P_DEFAULT), "open '%s'", name);
  H5TRY(s = H5Dopen2(r->file, scale, H5P_DEFAULT), "open '%s'", scale);
  H5TRY(H5DSattach_scale(d, s, (unsigned)axis), "attach '%s' to axis %d of '%s'", scale, axis,
        name);
  if (label) H5TRY(H5DSset_label(d, (unsigned)axis, label), "label axis %d of '%s'", axis, name);
done:
  mbs_h5_close(&s, H5Dclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
}

int mbs_results_attribute(mbs_results* r, const char* name, const char* key, const char* value,
                          mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  hid_t o = -1;
  H5TRY(o = H5Oopen(r->file, name, H5P_DEFAULT), "open '%s'", name);
  rc = mbs_h5_attr_string(path, err, o, key, value);
done:
  mbs_h5_close(&o, H5Oclose);
  return rc;
}

int mbs_results_read(mbs_results* r, const char* name, double** out, long* dims, int* rank,
                     mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  hid_t d = -1, sp = -1;
  *out = NULL;
  hsize_t hd[4] = {0, 0, 0, 0};
  if (!mbs_results_exists(r, name))
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no %s", path, name);
  H5TRY(d = H5Dopen2(r->file, name, H5P_DEFAULT), "open '%s'", name);
  H5TRY(sp = H5Dget_space(d), "get the dataspace of '%s'", name);
  const int rk = H5Sget_simple_extent_ndims(sp);
  H5TRY(rk, "get the shape of '%s'", name);
  if (rk > 4) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s has %d dimensions", path, name, rk);
    goto done;
  }
  H5TRY(H5Sget_simple_extent_dims(sp, hd, NULL), "get the shape of '%s'", name);
  size_t n = 1;
  for (int i = 0; i < rk; i++) {
    dims[i] = (long)hd[i];
    n *= hd[i];
  }
  *rank = rk;
  *out = malloc((n ? n : 1) * sizeof(double));
  NOMEM(*out);
  if (n > 0) H5TRY(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out), "read '%s'", name);
done:
  if (rc) {
    free(*out);
    *out = NULL;
  }
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
}

int mbs_results_read_frames(mbs_results* r, const char* name, long f0, long nf, double* out,
                            mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  hid_t d = -1, fs = -1, ms = -1;
  hsize_t dims[3];
  H5TRY(d = H5Dopen2(r->file, name, H5P_DEFAULT), "open '%s'", name);
  H5TRY(fs = H5Dget_space(d), "get the dataspace of '%s'", name);
  if (H5Sget_simple_extent_ndims(fs) != 3) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s is not samples x frames x components", path,
                  name);
    goto done;
  }
  H5TRY(H5Sget_simple_extent_dims(fs, dims, NULL), "get the shape of '%s'", name);
  if (f0 < 0 || nf < 1 || (hsize_t)(f0 + nf) > dims[1]) {
    rc = MBS_FAIL(err, MBS_ERR_ARGUMENT, path, "%s: frames %ld..%ld of %s", path, f0,
                  f0 + nf - 1, name);
    goto done;
  }
  hsize_t start[3] = {0, (hsize_t)f0, 0}, count[3] = {dims[0], (hsize_t)nf, dims[2]};
  H5TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL),
        "select frames of '%s'", name);
  H5TRY(ms = H5Screate_simple(3, count, NULL), "make a memory dataspace");
  H5TRY(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, out), "read frames of '%s'", name);
done:
  mbs_h5_close(&ms, H5Sclose);
  mbs_h5_close(&fs, H5Sclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
}

int mbs_results_read_strings(mbs_results* r, const char* name, char*** out, int* n,
                             mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  hid_t d = -1, t = -1, mt = -1, sp = -1;
  char* buf = NULL;
  *out = NULL;
  *n = 0;
  if (!mbs_results_exists(r, name))
    return MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: no %s", path, name);
  H5TRY(d = H5Dopen2(r->file, name, H5P_DEFAULT), "open '%s'", name);
  H5TRY(t = H5Dget_type(d), "get the type of '%s'", name);
  if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) > 0) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s is not a list of fixed-length strings", path,
                  name);
    goto done;
  }
  const size_t w = H5Tget_size(t) + 1;
  H5TRY(sp = H5Dget_space(d), "get the dataspace of '%s'", name);
  hsize_t dims[1] = {0};
  if (H5Sget_simple_extent_ndims(sp) != 1) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %s is not a list", path, name);
    goto done;
  }
  H5TRY(H5Sget_simple_extent_dims(sp, dims, NULL), "get the shape of '%s'", name);
  H5TRY(mt = H5Tcopy(H5T_C_S1), "make a string type");
  H5TRY(H5Tset_size(mt, w), "make a string type");
  H5TRY(H5Tset_strpad(mt, H5T_STR_NULLTERM), "make a string type");
  H5TRY(H5Tset_cset(mt, H5Tget_cset(t)), "make a string type");
  buf = calloc((size_t)dims[0] + 1, w);
  *out = calloc((size_t)dims[0] + 1, sizeof(char*));
  NOMEM(buf);
  NOMEM(*out);
  if (dims[0] > 0) H5TRY(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), "read '%s'", name);
  for (hsize_t i = 0; i < dims[0]; i++) {
    (*out)[i] = strdup(buf + i * w);
    NOMEM((*out)[i]);
  }
  *n = (int)dims[0];
done:
  if (rc && *out) {
    for (hsize_t i = 0; (*out)[i]; i++) free((*out)[i]);
    free(*out);
    *out = NULL;
  }
  free(buf);
  mbs_h5_close(&mt, H5Tclose);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&t, H5Tclose);
  mbs_h5_close(&d, H5Dclose);
  return rc;
}

int mbs_results_move(mbs_results* r, const char* from, const char* to, mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  if (mbs_results_exists(r, to)) H5TRY(H5Ldelete(r->file, to, H5P_DEFAULT), "replace '%s'", to);
  rc = parents(r, to, err);
  if (rc) return rc;
  H5TRY(H5Lmove(r->file, from, r->file, to, H5P_DEFAULT, H5P_DEFAULT), "move '%s' to '%s'", from,
        to);
done:
  return rc;
}

int mbs_results_read_attribute(mbs_results* r, const char* name, const char* key, char** out,
                               mbs_error* err) {
  const char* path = r->path;
  int rc = 0;
  hid_t o = -1, a = -1, t = -1, mt = -1, sp = -1;
  char* vl = NULL;
  *out = NULL;
  H5TRY(o = H5Oopen(r->file, name, H5P_DEFAULT), "open '%s'", name);
  const htri_t has = H5Aexists(o, key);
  H5TRY(has, "look for attribute '%s' of '%s'", key, name);
  if (!has) goto done;
  H5TRY(a = H5Aopen(o, key, H5P_DEFAULT), "open attribute '%s' of '%s'", key, name);
  H5TRY(t = H5Aget_type(a), "get the type of attribute '%s' of '%s'", key, name);
  H5TRY(sp = H5Aget_space(a), "get the dataspace of attribute '%s' of '%s'", key, name);
  if (H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: attribute '%s' of %s is not a string", path, key,
                  name);
    goto done;
  }
  H5TRY(mt = H5Tcopy(H5T_C_S1), "make a string type");
  H5TRY(H5Tset_cset(mt, H5Tget_cset(t)), "make a string type");
  if (H5Tis_variable_str(t) > 0) {
    H5TRY(H5Tset_size(mt, H5T_VARIABLE), "make a string type");
    H5TRY(H5Aread(a, mt, &vl), "read attribute '%s' of '%s'", key, name);
    *out = strdup(vl ? vl : "");
    NOMEM(*out);
  } else {
    const size_t w = H5Tget_size(t) + 1;
    H5TRY(H5Tset_size(mt, w), "make a string type");
    H5TRY(H5Tset_strpad(mt, H5T_STR_NULLTERM), "make a string type");
    *out = calloc(w, 1);
    NOMEM(*out);
    H5TRY(H5Aread(a, mt, *out), "read attribute '%s' of '%s'", key, name);
  }
done:
  if (vl) H5free_memory(vl);
  if (rc) {
    free(*out);
    *out = NULL;
  }
  mbs_h5_close(&mt, H5Tclose);
  mbs_h5_close(&sp, H5Sclose);
  mbs_h5_close(&t, H5Tclose);
  mbs_h5_close(&a, H5Aclose);
  mbs_h5_close(&o, H5Oclose);
  return rc;
}
