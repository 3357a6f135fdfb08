// `mbstudy inspect FILE.h5`, `mbstudy export FILE.h5 --sample I --format sto|csv` and
// `mbstudy export FILE.h5 --pipeline SUBJECT/TRIAL --out DIR`: reading a study's result file
// (layout in io/FORMAT.md).
#include "inspect_cmd.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/h5_util.h"
#include "../studies/builtin_models.h"
#include "../studies/journal.h"
#include "../studies/posture.h"
#include "export_model.h"
#include "mbs/files.h"
#include "mbs/osim.h"
#include "model_cmd.h"
#include "mbs/sto.h"
#include "mbs/table.h"
#include "verify_cmd.h"

// the command and the file being read (set by open_file), for the message of a dataset that
// cannot be read; how many could not
static const char* rd_cmd = "inspect";
static const char* rd_file = "";
static int rd_damaged;

// dataset `path` cannot be read: say which and why (call it right after the failed HDF5 call:
// the reason comes from HDF5's error stack, e.g. a chunk's checksum that does not match)
static void unreadable(const char* path) {
  char why[400];
  mbs_h5_read_problem(why, sizeof why);
  fprintf(stderr, "mbstudy %s: %s: %s: %s\n", rd_cmd, rd_file, path, why);
  rd_damaged++;
}

// the exit of a command that met a dataset it cannot read: never values made up in its place
static int damaged_exit(void) {
  fprintf(stderr, "mbstudy %s: %s is damaged: %d dataset%s cannot be read (mbstudy verify %s "
                  "checks the whole file)\n", rd_cmd, rd_file, rd_damaged,
          rd_damaged == 1 ? "" : "s", rd_file);
  return 1;
}

// a string attribute of an object (fixed-length or variable-length); "" if absent
static void attr_string(hid_t obj, const char* name, char* out, size_t n) {
  out[0] = 0;
  if (H5Aexists(obj, name) <= 0) return;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t ft = H5Aget_type(a);
  if (H5Tget_class(ft) == H5T_STRING) {
    if (H5Tis_variable_str(ft) > 0) {
      char* s = NULL;
      hid_t mt = H5Tcopy(ft);
      if (H5Aread(a, mt, &s) >= 0 && s) snprintf(out, n, "%s", s);
      if (s) H5free_memory(s);
      H5Tclose(mt);
    } else {
      const size_t len = H5Tget_size(ft);
      char* buf = calloc(len + 1, 1);
      hid_t mt = H5Tcopy(ft);
      if (buf && H5Aread(a, mt, buf) >= 0) snprintf(out, n, "%.*s", (int)len, buf);
      free(buf);
      H5Tclose(mt);
    }
  }
  H5Tclose(ft);
  H5Aclose(a);
}

// a 1-D dataset of fixed-length strings: an array of n strings in one block (free both)
static char** read_strings(hid_t file, const char* path, long* n) {
  *n = 0;
  if (H5Lexists(file, path, H5P_DEFAULT) <= 0) return NULL;
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) {
    unreadable(path);
    return NULL;
  }
  hid_t sp = H5Dget_space(d);
  hsize_t dim = 0;
  H5Sget_simple_extent_dims(sp, &dim, NULL);
  hid_t ft = H5Dget_type(d);
  const size_t len = H5Tget_size(ft);
  char* block = calloc((size_t)dim * (len + 1) + 1, 1);
  char* raw = calloc((size_t)dim * len + 1, 1);
  char** v = calloc((size_t)dim + 1, sizeof(char*));
  hid_t mt = H5Tcopy(ft);
  const herr_t got = block && raw && v ? H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) : -1;
  if (got < 0 && block && raw && v) unreadable(path);
  if (got >= 0) {
    for (hsize_t i = 0; i < dim; i++) {
      v[i] = block + i * (len + 1);
      memcpy(v[i], raw + i * len, len);
    }
    *n = (long)dim;
  } else {
    free(block);
    free(v);
    v = NULL;
  }
  free(raw);
  H5Tclose(mt);
  H5Tclose(ft);
  H5Sclose(sp);
  H5Dclose(d);
  return v;
}

static void free_strings(char** v) {
  if (v) free(v[0]);
  free(v);
}

// a whole numeric dataset as doubles (or int64 for integer ones when as_long); dims out
static void* read_all(hid_t file, const char* path, hid_t memtype, int* rank, hsize_t dims[3]) {
  if (H5Lexists(file, path, H5P_DEFAULT) <= 0) return NULL;
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) {
    unreadable(path);
    return NULL;
  }
  hid_t sp = H5Dget_space(d);
  *rank = H5Sget_simple_extent_ndims(sp);
  hsize_t total = 1;
  H5Sget_simple_extent_dims(sp, dims, NULL);
  for (int i = 0; i < *rank; i++) total *= dims[i];
  void* buf = malloc((size_t)(total ? total : 1) * 8);
  if (buf && H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    unreadable(path);
    free(buf);
    buf = NULL;
  }
  H5Sclose(sp);
  H5Dclose(d);
  return buf;
}

// the trajectory datasets under /trajectories (names relative to it), in a fixed order
typedef struct qlist {
  char names[64][256];
  int n;
} qlist;

static herr_t visit_traj(hid_t g, const char* name, const H5L_info_t* info, void* data) {
  (void)info;
  qlist* q = data;
  hid_t o = H5Oopen(g, name, H5P_DEFAULT);
  if (o < 0) return 0;
  const int is_dataset = H5Iget_type(o) == H5I_DATASET;
  H5Oclose(o);
  if (!is_dataset) return 0;
  const size_t len = strlen(name);
  if (len > 11 && !strcmp(name + len - 11, "_components")) return 0;
  if (q->n < 64) snprintf(q->names[q->n++], 256, "%s", name);
  return 0;
}

static int open_file(const char* path, const char* cmd, hid_t* f) {
  rd_cmd = cmd;
  rd_file = path;
  rd_damaged = 0;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (*f < 0) {
    fprintf(stderr, "mbstudy %s: %s: cannot open as an HDF5 file\n", cmd, path);
    return 0;
  }
  char fmtv[16];
  attr_string(*f, "mbstudy_format", fmtv, sizeof(fmtv));
  if (!fmtv[0]) {
    fprintf(stderr, "mbstudy %s: %s: not an mbstudy result file (no mbstudy_format attribute)\n",
            cmd, path);
    H5Fclose(*f);
    return 0;
  }
  return 1;
}

int mbs_cmd_inspect(int argc, char** argv) {
  if (argc != 1) {
    fprintf(stderr, "usage: mbstudy inspect FILE.h5\n");
    return 2;
  }
  // a study stopped or still running: no result file yet, its journals tell what is done
  struct stat sb;
  char* parts = mbs_format_string("%s.parts", argv[0]);
  if (parts && stat(argv[0], &sb) != 0 && stat(parts, &sb) == 0) {
    long done = 0, failed = 0, first = -1;
    char msg[600];
    const int rc = mbs_journal_count(parts, 0, &done, &failed, &first, msg, sizeof(msg), 0, NULL);
    printf("file: %s\n  INCOMPLETE: the study was stopped or is still running; no result file "
           "yet\n", argv[0]);
    if (rc == 0) {
      printf("\nsamples done: %ld, failed %ld (from the journals in %s)\n", done, failed, parts);
      if (first >= 0) printf("  first failed sample %ld: %s\n", first, msg);
      // a stopped study keeps what was merged so far as a readable file
      char* partial = mbs_format_string("%s/result.h5", parts);
      H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
      hid_t pf = partial && stat(partial, &sb) == 0
                     ? H5Fopen(partial, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
      if (pf >= 0) {
        char merged[32], note[400];
        attr_string(pf, "merged_samples", merged, sizeof(merged));
        attr_string(pf, "incomplete", note, sizeof(note));
        if (merged[0])
          printf("samples 0 .. %ld in sample order are readable in %s (its attribute "
                 "'incomplete': %s)\n", atol(merged) - 1, partial, note);
        H5Fclose(pf);
      }
      free(partial);
    } else {
      printf("\n%s: cannot be read\n", parts);
    }
    printf("\nfinish it with mbstudy run SPEC --output %s --resume (mbstudy status %s for a "
           "submitted study)\n", argv[0], argv[0]);
    free(parts);
    return rc == 0 ? 0 : 1;
  }
  free(parts);
  hid_t f;
  if (!open_file(argv[0], "inspect", &f)) return 1;
  static const char* keys[] = {"creator", "study", "model", "model_name", "samples", "sampling",
                               "seed", "integrator", "started_last_run", "ranks_last_run",
                               "threads_per_rank_last_run", "failed_samples",
                               "study_fingerprint", "spec_path"};
  printf("file: %s\n", argv[0]);
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    char v[1024];
    attr_string(f, keys[i], v, sizeof(v));
    if (v[0]) printf("  %-26s %s\n", keys[i], v);
  }
  int rank;
  hsize_t dims[3];
  unsigned char* done = read_all(f, "/status/done", H5T_NATIVE_UCHAR, &rank, dims);
  int* code = read_all(f, "/status/code", H5T_NATIVE_INT, &rank, dims);
  double* wall = read_all(f, "/status/wall_time", H5T_NATIVE_DOUBLE, &rank, dims);
  if (rd_damaged) {  // no counts from a damaged status
    free(done);
    free(code);
    free(wall);
    H5Fclose(f);
    return damaged_exit();
  }
  const long S = done ? (long)dims[0] : 0;
  long ndone = 0, nfail = 0;
  double wsum = 0;
  for (long i = 0; i < S; i++) {
    ndone += done[i] != 0;
    nfail += done[i] && code && code[i] != 0;
    if (wall && done[i]) wsum += wall[i];
  }
  printf("\nsamples: %ld, done %ld, failed %ld; %.3g s of simulation in all\n", S, ndone, nfail,
         wsum);
  if (nfail) {
    long nm;
    char** msg = read_strings(f, "/status/message", &nm);
    int shown = 0;
    for (long i = 0; i < S && shown < 10; i++)
      if (done[i] && code[i] != 0) {
        printf("  failed sample %ld (status %d): %s\n", i, code[i], msg && i < nm ? msg[i] : "");
        shown++;
      }
    if (nfail > shown) printf("  ... and %ld more (see /status)\n", nfail - shown);
    free_strings(msg);
  }
  long np;
  char** pn = read_strings(f, "/parameter_names", &np);
  double* P = read_all(f, "/parameters", H5T_NATIVE_DOUBLE, &rank, dims);
  printf("\nparameters: %ld\n", np);
  for (long j = 0; j < np && P; j++) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    long n = 0;
    for (long i = 0; i < S; i++) {
      const double v = P[i * np + j];
      if (!done[i] || !isfinite(v)) continue;
      lo = fmin(lo, v);
      hi = fmax(hi, v);
      sum += v;
      n++;
    }
    printf("  %-48s min %-12.6g mean %-12.6g max %.6g\n", pn[j], lo, n ? sum / n : NAN, hi);
  }
  free_strings(pn);
  free(P);
  hsize_t tdim[3] = {0, 0, 0};
  double* t = read_all(f, "/time", H5T_NATIVE_DOUBLE, &rank, tdim);
  if (t && tdim[0]) printf("\nframes: %llu, t = %g .. %g s\n", (unsigned long long)tdim[0], t[0],
                           t[tdim[0] - 1]);
  free(t);
  qlist q;
  q.n = 0;
  if (H5Lexists(f, "/trajectories", H5P_DEFAULT) > 0) {
    hid_t g = H5Gopen2(f, "/trajectories", H5P_DEFAULT);
    H5Lvisit(g, H5_INDEX_NAME, H5_ITER_INC, visit_traj, &q);
    H5Gclose(g);
  }
  printf("\ntrajectories: %d\n", q.n);
  for (int i = 0; i < q.n; i++) {
    char path[300], units[128];
    snprintf(path, sizeof(path), "/trajectories/%s", q.names[i]);
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    hid_t sp = H5Dget_space(d);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    attr_string(d, "units", units, sizeof(units));
    printf("  %-40s %llu components (%s)\n", q.names[i], (unsigned long long)dims[2], units);
    H5Sclose(sp);
    H5Dclose(d);
  }
  if (H5Lexists(f, "/scalars", H5P_DEFAULT) > 0) {
    hid_t g = H5Gopen2(f, "/scalars", H5P_DEFAULT);
    H5G_info_t gi;
    H5Gget_info(g, &gi);
    printf("\nscalars: %llu (mean and standard deviation over the successful samples)\n",
           (unsigned long long)gi.nlinks);
    for (hsize_t k = 0; k < gi.nlinks; k++) {
      char name[256];
      H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof(name), H5P_DEFAULT);
      char mp[400], sp2[400];
      snprintf(mp, sizeof(mp), "/statistics/scalars/%s/mean", name);
      snprintf(sp2, sizeof(sp2), "/statistics/scalars/%s/std", name);
      hsize_t d0[3];
      int r0;
      double* m = read_all(f, mp, H5T_NATIVE_DOUBLE, &r0, d0);
      double* s = read_all(f, sp2, H5T_NATIVE_DOUBLE, &r0, d0);
      printf("  %-40s mean %-12.6g std %.6g\n", name, m ? m[0] : NAN, s ? s[0] : NAN);
      free(m);
      free(s);
    }
    H5Gclose(g);
  }
  free(done);
  free(code);
  free(wall);
  H5Fclose(f);
  return rd_damaged ? damaged_exit() : 0;
}

// the tables of a pipeline's /pipeline/<subject>/<trial>/files group (names without the
// "_columns" scales)
static herr_t visit_table(hid_t g, const char* name, const H5L_info_t* info, void* data) {
  (void)info;
  qlist* q = data;
  const size_t len = strlen(name);
  if (len > 8 && !strcmp(name + len - 8, "_columns")) return 0;
  hid_t o = H5Oopen(g, name, H5P_DEFAULT);
  if (o < 0) return 0;
  const int is_dataset = H5Iget_type(o) == H5I_DATASET;
  H5Oclose(o);
  if (!is_dataset) return 0;
  if (q->n < 64) snprintf(q->names[q->n++], 256, "%s", name);
  return 0;
}

// the subject/trial pairs a pipeline file holds files of, for a message
static void list_pipeline_pairs(hid_t f, FILE* o) {
  long ns;
  char** sn = read_strings(f, "/pipeline/subjects", &ns);
  int shown = 0;
  for (long i = 0; i < ns; i++) {
    char path[600];
    snprintf(path, sizeof(path), "/pipeline/%s", sn[i]);
    if (H5Lexists(f, path, H5P_DEFAULT) <= 0) continue;
    hid_t g = H5Gopen2(f, path, H5P_DEFAULT);
    H5G_info_t gi;
    H5Gget_info(g, &gi);
    for (hsize_t k = 0; k < gi.nlinks; k++) {
      char trial[256], files[1200];
      H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, k, trial, sizeof(trial),
                         H5P_DEFAULT);
      snprintf(files, sizeof(files), "%s/files", trial);
      if (H5Lexists(g, trial, H5P_DEFAULT) <= 0) continue;
      hid_t tg = H5Gopen2(g, trial, H5P_DEFAULT);
      const int has = H5Lexists(tg, "files", H5P_DEFAULT) > 0;
      H5Gclose(tg);
      if (has && shown < 20) fprintf(o, "%s %s/%s", shown ? "," : "", sn[i], trial);
      shown += has;
    }
    H5Gclose(g);
  }
  if (shown > 20) fprintf(o, ", ... (%d in all)", shown);
  if (!shown) fprintf(o, " none (the study kept no files: its `keep` was none)");
  fprintf(o, "\n");
  free_strings(sn);
}

// `export FILE.h5 --pipeline SUBJECT/TRIAL --out DIR`: each OpenSim table the pipeline stored
// for that subject and trial written back as the file the tool wrote (its name, header name,
// inDegrees, labels and numbers), so OpenSim and its GUI read it
static int export_pipeline(const char* file, const char* which, const char* out) {
  hid_t f;
  if (!open_file(file, "export", &f)) return 1;
  if (H5Lexists(f, "/pipeline", H5P_DEFAULT) <= 0) {
    fprintf(stderr, "mbstudy export: %s is not a pipeline study's result (no /pipeline)\n", file);
    H5Fclose(f);
    return 1;
  }
  char group[1200];
  snprintf(group, sizeof(group), "/pipeline/%s/files", which);
  const char* slash = strchr(which, '/');
  int exists = slash && slash != which && slash[1] && !strchr(slash + 1, '/') && !strstr(which, "..");
  if (exists) {
    // every link on the way must exist for H5Lexists on the whole path
    char part[1200];
    snprintf(part, sizeof(part), "/pipeline/%.*s", (int)(slash - which), which);
    exists = H5Lexists(f, part, H5P_DEFAULT) > 0;
    snprintf(part, sizeof(part), "/pipeline/%s", which);
    exists = exists && H5Lexists(f, part, H5P_DEFAULT) > 0 &&
             H5Lexists(f, group, H5P_DEFAULT) > 0;
  }
  if (!exists) {
    fprintf(stderr, "mbstudy export: %s holds no files of '%s' (SUBJECT/TRIAL); it holds:", file,
            which);
    list_pipeline_pairs(f, stderr);
    H5Fclose(f);
    return 1;
  }
  if (mbs_make_dirs(out)) {
    fprintf(stderr, "mbstudy export: %s: cannot create the folder\n", out);
    H5Fclose(f);
    return 1;
  }
  qlist q;
  q.n = 0;
  hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_table, &q);
  int rc = 0, written = 0;
  for (int i = 0; i < q.n && !rc; i++) {
    char path[1600], fname[512], tname[512], deg[8], version[8];
    static char header[16384];
    snprintf(path, sizeof(path), "%s/%s", group, q.names[i]);
    int rank = 0;
    hsize_t dims[3] = {0, 0, 0};
    double* data = read_all(f, path, H5T_NATIVE_DOUBLE, &rank, dims);
    snprintf(path, sizeof(path), "%s/%s_columns", group, q.names[i]);
    long nl = 0;
    char** labels = read_strings(f, path, &nl);
    hid_t d = H5Dopen2(g, q.names[i], H5P_DEFAULT);
    attr_string(d, "file", fname, sizeof(fname));
    attr_string(d, "table_name", tname, sizeof(tname));
    attr_string(d, "in_degrees", deg, sizeof(deg));
    attr_string(d, "header", header, sizeof(header));
    attr_string(d, "header_version", version, sizeof(version));
    H5Dclose(d);
    if (!fname[0]) snprintf(fname, sizeof(fname), "%s.sto", q.names[i]);  // files before 0.x
    if (rd_damaged) {
      rc = 1;
    } else if (!data || rank != 2 || !labels || nl != (long)dims[1] || strchr(fname, '/') ||
        !strcmp(fname, "..") || !strcmp(fname, ".")) {
      fprintf(stderr, "mbstudy export: %s: %s/%s is not a table with its column labels\n", file,
              group, q.names[i]);
      rc = 1;
    } else {
      mbs_table* t = NULL;
      mbs_error err;
      char dst[2200];
      snprintf(dst, sizeof(dst), "%s/%s", out, fname);
      rc = mbs_table_create(&t, tname, (int)dims[0], (int)dims[1], (const char* const*)labels,
                            &err);
      if (!rc) {
        memcpy(t->data, data, (size_t)dims[0] * dims[1] * sizeof(double));
        t->in_degrees = !strcmp(deg, "yes");
        for (char *line = header, *next; !rc && *line; line = next) {
          next = line + strcspn(line, "\n");
          if (*next) *next++ = 0;
          char* eq = strchr(line, '=');
          if (eq) *eq = 0;
          rc = mbs_table_set_meta(t, eq ? line : NULL, eq ? eq + 1 : line, &err);
        }
        if (!rc) rc = mbs_table_write_sto(t, dst, !strcmp(version, "3") ? 3 : 1, &err);
      }
      if (rc) {
        fprintf(stderr, "mbstudy export: %s\n", err.message);
        rc = 1;
      } else {
        printf("wrote %s: %llu rows, %llu columns%s\n", dst, (unsigned long long)dims[0],
               (unsigned long long)dims[1], t->in_degrees ? ", in degrees" : "");
        written++;
      }
      mbs_table_free(t);
    }
    free(data);
    free_strings(labels);
  }
  H5Gclose(g);
  H5Fclose(f);
  if (!rc && !written) {
    fprintf(stderr, "mbstudy export: %s holds no tables for %s\n", file, which);
    rc = 1;
  }
  return rc;
}

// export's trajectories, their components and time axis freed, the file closed
static void free_export(const qlist* q, double** vals, char*** comps, double* t, hid_t f) {
  for (int i = 0; i < q->n; i++) {
    free(vals[i]);
    free_strings(comps[i]);
  }
  free(t);
  H5Fclose(f);
}

// a file's whole text (NULL when it cannot be read)
static char* read_text_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  char* text = NULL;
  size_t n = 0;
  FILE* m = open_memstream(&text, &n);
  char buf[65536];
  size_t got;
  int ok = m != NULL;
  while (ok && (got = fread(buf, 1, sizeof buf, f)) > 0) ok = fwrite(buf, 1, got, m) == got;
  ok = ok && !ferror(f);
  fclose(f);
  if (m) fclose(m);
  if (!ok) {
    free(text);
    return NULL;
  }
  return text;
}

// --format osim: the sample's model (the document the study simulated: /model/document, or the
// study's model file or built-in model) with its first frame as the coordinates' defaults and,
// for a posture study, the sample's platform displacement; *model parsed from it (for the state
// paths of the motion), the motion's path DIR/sample_I.sto in sto_path. NULL after a message.
static char* sample_model(hid_t f, const char* file, long sample, const qlist* q,
                          double* const* vals, char** const* comps, const long* ncomp,
                          const char* dir, mbs_osim_model** model, char* sto_path, size_t cap) {
  char mname[2048], study[64];
  attr_string(f, "model", mname, sizeof(mname));
  attr_string(f, "study", study, sizeof(study));
  char* doc = mbs_h5_read_text(f, "/model/document");
  const char* source = "/model/document";
  if (!doc && mbs_builtin_model(mname)) {
    doc = strdup(mbs_builtin_model(mname));
    source = mname;
  } else if (!doc && mname[0]) {
    doc = read_text_file(mname);
    source = mname;
  }
  if (!doc) {
    fprintf(stderr, "mbstudy export: %s holds no model document and the study's model ('%s') "
                    "cannot be read\n", file, mname);
    return NULL;
  }
  // the first frame of q and u by coordinate name
  int iq = -1, iu = -1;
  for (int i = 0; i < q->n; i++) {
    if (!strcmp(q->names[i], "q")) iq = i;
    if (!strcmp(q->names[i], "u")) iu = i;
  }
  if (iq < 0)
    fprintf(stderr, "mbstudy export: warning: %s stores no trajectory q: the model keeps its "
                    "default pose and the motion holds no coordinates\n", file);
  const int nc = iq >= 0 ? (int)ncomp[iq] : 0;
  double* speed = iu >= 0 && nc ? malloc((size_t)nc * sizeof(double)) : NULL;
  for (int k = 0; speed && k < nc; k++) {
    speed[k] = NAN;
    for (long j = 0; j < ncomp[iu]; j++)
      if (comps[iu] && comps[iq] && !strcmp(comps[iu][j], comps[iq][k])) speed[k] = vals[iu][j];
  }
  mbs_export_model_values v = {nc, iq >= 0 ? (const char* const*)comps[iq] : NULL,
                               iq >= 0 ? vals[iq] : NULL, speed, NULL};
  // a posture study: the platform displaced by the sample's magnitude along its direction
  double disp[3];
  if (!strcmp(study, "posture")) {
    long np = 0;
    char** pn = read_strings(f, "/parameter_names", &np);
    int rank;
    hsize_t dims[3] = {0, 0, 0};
    double* par = read_all(f, "/parameters", H5T_NATIVE_DOUBLE, &rank, dims);
    double mag = NAN, dir = NAN;
    for (long k = 0; pn && par && rank == 2 && k < np && (hsize_t)k < dims[1]; k++) {
      if (!strcmp(pn[k], "posture/magnitude")) mag = par[sample * (long)dims[1] + k];
      if (!strcmp(pn[k], "posture/direction")) dir = par[sample * (long)dims[1] + k];
    }
    free_strings(pn);
    free(par);
    if (rd_damaged) {
      free(doc);
      free(speed);
      return NULL;
    }
    if (isnan(mag) || isnan(dir)) {
      fprintf(stderr, "mbstudy export: %s: a posture study without the parameters "
                      "posture/magnitude and posture/direction\n", file);
      free(doc);
      free(speed);
      return NULL;
    }
    mbs_posture_displacement(mag, dir, disp);
    v.platform = disp;
  }
  mbs_error err;
  mbs_error_clear(&err);
  char* edited = mbs_export_model_document(doc, source, &v, &err);
  free(doc);
  free(speed);
  if (!edited) {
    fprintf(stderr, "mbstudy export: %s\n", err.message);
    return NULL;
  }
  *model = mbs_osim_parse(edited, strlen(edited), source, NULL, &err);
  if (!*model) {
    fprintf(stderr, "mbstudy export: the sample's model cannot be read back: %s\n", err.message);
    free(edited);
    return NULL;
  }
  if (mbs_make_dirs(dir)) {
    fprintf(stderr, "mbstudy export: %s: cannot create the folder\n", dir);
    mbs_osim_free(*model);
    *model = NULL;
    free(edited);
    return NULL;
  }
  snprintf(sto_path, cap, "%s/sample_%ld.sto", dir, sample);
  return edited;
}

int mbs_cmd_export(int argc, char** argv) {
  const char *file = NULL, *format = "csv", *out = NULL, *pipeline = NULL;
  long sample = -1;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--pipeline") && i + 1 < argc) {
      pipeline = argv[++i];
      continue;
    }
    if (!strcmp(argv[i], "--sample") && i + 1 < argc) {
      char* end;
      sample = strtol(argv[++i], &end, 10);
      if (*end || end == argv[i] || sample < 0) {
        fprintf(stderr, "mbstudy export: --sample expects a sample index, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
      format = argv[++i];
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      out = argv[++i];
    } else if (argv[i][0] != '-' && !file) {
      file = argv[i];
    } else {
      fprintf(stderr, "mbstudy export: unknown option or missing value '%s'\n", argv[i]);
      return 2;
    }
  }
  if (pipeline) {
    if (!file || !out || sample >= 0) {
      fprintf(stderr, "usage: mbstudy export FILE.h5 --pipeline SUBJECT/TRIAL --out DIR\n");
      return 2;
    }
    return export_pipeline(file, pipeline, out);
  }
  const int osim = !strcmp(format, "osim");
  if (!file || sample < 0 || (strcmp(format, "csv") && strcmp(format, "sto") && !osim) ||
      (strcmp(format, "csv") && !out)) {
    fprintf(stderr, "usage: mbstudy export FILE.h5 --sample I [--format csv|sto] [--out FILE]\n"
                    "       (csv goes to standard output without --out; sto needs --out)\n"
                    "       mbstudy export FILE.h5 --sample I --format osim --out DIR\n"
                    "       (the sample's model as OpenSim opens it, DIR/sample_I.osim, and its\n"
                    "       motion, DIR/sample_I.sto)\n"
                    "       mbstudy export FILE.h5 --pipeline SUBJECT/TRIAL --out DIR\n");
    return 2;
  }
  hid_t f;
  if (!open_file(file, "export", &f)) return 1;
  int rank;
  hsize_t dims[3], tdim[3] = {0, 0, 0};
  unsigned char* done = read_all(f, "/status/done", H5T_NATIVE_UCHAR, &rank, dims);
  if (rd_damaged) {
    free(done);
    H5Fclose(f);
    return damaged_exit();
  }
  const long S = done ? (long)dims[0] : 0;
  if (sample >= S) {
    fprintf(stderr, "mbstudy export: %s has %ld samples (0..%ld); no sample %ld\n", file, S,
            S - 1, sample);
    free(done);
    H5Fclose(f);
    return 1;
  }
  if (!done[sample]) {
    fprintf(stderr, "mbstudy export: sample %ld of %s was never completed\n", sample, file);
    free(done);
    H5Fclose(f);
    return 1;
  }
  free(done);
  // a failed sample: its frames up to the failure (the rest of its rows are NaN), said
  long* code = read_all(f, "/status/code", H5T_NATIVE_LONG, &rank, dims);
  const long failed_code = code ? code[sample] : 0;
  free(code);
  if (failed_code != 0) {
    long nm = 0;
    char** msg = read_strings(f, "/status/message", &nm);
    fprintf(stderr, "mbstudy export: warning: sample %ld of %s failed (code %ld: %s): only its "
                    "frames before the failure are written\n", sample, file, failed_code,
            msg && sample < nm ? msg[sample] : "no message");
    free_strings(msg);
  }
  double* t = read_all(f, "/time", H5T_NATIVE_DOUBLE, &rank, tdim);
  const long F = (long)tdim[0];
  qlist q;
  q.n = 0;
  if (H5Lexists(f, "/trajectories", H5P_DEFAULT) > 0) {
    hid_t g = H5Gopen2(f, "/trajectories", H5P_DEFAULT);
    H5Lvisit(g, H5_INDEX_NAME, H5_ITER_INC, visit_traj, &q);
    H5Gclose(g);
  }
  // columns: time, then every component of every quantity, named "<quantity>/<component>"
  int ncol = 1;
  long ncomp[64];
  double* vals[64];
  char** comps[64];
  for (int i = 0; i < q.n; i++) {
    char path[300];
    snprintf(path, sizeof(path), "/trajectories/%s", q.names[i]);
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    ncomp[i] = 0;
    vals[i] = NULL;
    comps[i] = NULL;
    if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 3) {
      unreadable(path);
      if (sp >= 0) H5Sclose(sp);
      if (d >= 0) H5Dclose(d);
      continue;
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    ncomp[i] = (long)dims[2];
    vals[i] = malloc((size_t)F * (size_t)ncomp[i] * 8 + 8);
    hsize_t start[3] = {(hsize_t)sample, 0, 0}, count[3] = {1, (hsize_t)F, dims[2]};
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(3, count, NULL);
    // a sample that cannot be read (a chunk's checksum does not match) is an error, never NaN
    if (vals[i] && H5Dread(d, H5T_NATIVE_DOUBLE, ms, sp, H5P_DEFAULT, vals[i]) < 0)
      unreadable(path);
    H5Sclose(ms);
    H5Sclose(sp);
    H5Dclose(d);
    long nc;
    snprintf(path, sizeof(path), "/trajectories/%s_components", q.names[i]);
    comps[i] = read_strings(f, path, &nc);
    ncol += (int)ncomp[i];
  }
  if (rd_damaged || !t) {
    if (!rd_damaged) fprintf(stderr, "mbstudy export: %s has no /time\n", file);
    free_export(&q, vals, comps, t, f);
    return rd_damaged ? damaged_exit() : 1;
  }
  // a failed sample's rows end with its last frame that holds a value
  long F_out = F;
  if (failed_code != 0) {
    F_out = 0;
    for (long fr = 0; fr < F; fr++)
      for (int i = 0; i < q.n; i++)
        for (long k = 0; k < ncomp[i]; k++)
          if (!isnan(vals[i][fr * ncomp[i] + k])) F_out = fr + 1;
    if (F_out == 0) {
      fprintf(stderr, "mbstudy export: sample %ld failed before its first frame: nothing to "
                      "export\n", sample);
      free_export(&q, vals, comps, t, f);
      return 1;
    }
  }
  // for a .sto: coordinates and speeds under OpenSim 4's state paths
  // (/jointset/<joint>/<coordinate>/value and /speed), so that OpenSim reads the file as states;
  // the joints from the study's model
  mbs_osim_model* model = NULL;
  char* document = NULL;  // --format osim: the sample's model
  char sto_path[4200] = "";
  if (osim) {
    document = sample_model(f, file, sample, &q, vals, comps, ncomp, out, &model, sto_path,
                            sizeof sto_path);
    if (!document) {
      free_export(&q, vals, comps, t, f);
      return 1;
    }
    out = sto_path;
  } else if (!strcmp(format, "sto")) {
    char mname[2048];
    attr_string(f, "model", mname, sizeof(mname));
    if (mname[0]) model = mbs_cli_load_model(mname, "export", 1);
    if (!model)
      fprintf(stderr, "mbstudy export: warning: the study's model ('%s') cannot be read: "
                      "coordinates keep their names q/<coordinate>, not OpenSim's state paths\n",
              mname);
  }
  char** labels = calloc((size_t)ncol, sizeof(char*));
  int c = 0;
  labels[c++] = strdup("time");
  for (int i = 0; i < q.n; i++)
    for (long k = 0; k < ncomp[i]; k++) {
      char buf[600];
      const char* comp = comps[i] ? comps[i][k] : "?";
      snprintf(buf, sizeof(buf), "%s/%s", q.names[i], comp);
      const int is_q = !strcmp(q.names[i], "q"), is_u = !strcmp(q.names[i], "u");
      for (int j = 0; model && (is_q || is_u) && j < mbs_osim_ncoordinate(model); j++) {
        const mbs_osim_coordinate* co = mbs_osim_coordinate_info(model, j);
        if (!strcmp(co->name, comp)) {
          snprintf(buf, sizeof(buf), "/jointset/%s/%s/%s", co->joint, co->name,
                   is_q ? "value" : "speed");
          break;
        }
      }
      labels[c++] = strdup(buf);
    }
  mbs_osim_free(model);
  double* row = malloc((size_t)ncol * 8);
  int rc = 0;
  if (osim || !strcmp(format, "sto")) {
    mbs_error err;
    char name[64];
    snprintf(name, sizeof(name), "sample_%ld", sample);
    mbs_sto_writer* w = mbs_sto_open(out, name, ncol, (const char* const*)labels, 0, &err);
    for (long fr = 0; w && fr < F_out && !rc; fr++) {
      row[0] = t[fr];
      int k = 1;
      for (int i = 0; i < q.n; i++)
        for (long j = 0; j < ncomp[i]; j++) row[k++] = vals[i][fr * ncomp[i] + j];
      rc = mbs_sto_write_row(w, row, &err);
    }
    if (!w || (w && mbs_sto_close(w, &err)) || rc) {
      fprintf(stderr, "mbstudy export: %s\n", err.message);
      rc = 1;
    }
  } else {
    FILE* o = out ? fopen(out, "w") : stdout;
    if (!o) {
      fprintf(stderr, "mbstudy export: %s: cannot create\n", out);
      rc = 1;
    } else {
      for (int k = 0; k < ncol; k++) fprintf(o, "%s%s", k ? "," : "", labels[k]);
      fprintf(o, "\n");
      for (long fr = 0; fr < F_out; fr++) {
        fprintf(o, "%.17g", t[fr]);
        for (int i = 0; i < q.n; i++)
          for (long j = 0; j < ncomp[i]; j++) fprintf(o, ",%.17g", vals[i][fr * ncomp[i] + j]);
        fprintf(o, "\n");
      }
      if (o != stdout) fclose(o);
    }
  }
  for (int k = 0; k < ncol; k++) free(labels[k]);
  free(labels);
  free(row);
  free_export(&q, vals, comps, t, f);
  if (!rc && out)
    printf("wrote %s: sample %ld, %ld frames, %d columns\n", out, sample, F_out, ncol);
  if (!rc && document) {
    char mpath[4200];
    snprintf(mpath, sizeof mpath, "%.*s.osim", (int)(strlen(sto_path) - 4), sto_path);
    FILE* o = fopen(mpath, "w");
    if (!o || fputs(document, o) < 0 || fclose(o)) {
      fprintf(stderr, "mbstudy export: %s: cannot write\n", mpath);
      if (o) fclose(o);
      rc = 1;
    } else {
      printf("wrote %s: the sample's model; in OpenSim, open it and load %s as its motion\n",
             mpath, sto_path);
    }
  }
  free(document);
  return rc;
}
