// OpenSim's InverseDynamicsTool (run_tool.h, tool_id.h): the generalized forces that make a
// model follow a coordinates file, with its external loads and gravity and without the forces
// it excludes, processed as OpenSim 4 does (include/mbs/inverse_dynamics.h), written as OpenSim
// writes them:
//   <results_directory>/<output_gen_force_file>     time, <coordinate>_moment or _force per
//                                                   coordinate (OpenSim's tree order)
//   <results_directory>/<output_body_forces_file>   when joints_to_report_body_forces names
//                                                   joints: <joint>_<child frame>_FX .. _MZ
// Setup properties: model_file, time_range, forces_to_exclude, external_loads_file,
// coordinates_file, lowpass_cutoff_frequency_for_coordinates, results_directory,
// output_gen_force_file, joints_to_report_body_forces, output_body_forces_file; paths relative
// to the setup file. The same from flags: `mbstudy inverse-dynamics` (mbs_cmd_inverse_dynamics).
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mbs/inverse_dynamics.h"
#include "progress.h"
#include "run_tool.h"
#include "tool_id.h"

// words of a list property ("Muscles Actuators") into a NULL-ended array (malloc'd; the words
// point into *buf)
static char** split_words(const char* text, char** buf, int* n) {
  *n = 0;
  *buf = strdup(text ? text : "");
  char** w = calloc(strlen(*buf) / 2 + 2, sizeof(char*));
  if (!*buf || !w) {
    free(*buf);
    free(w);
    *buf = NULL;
    return NULL;
  }
  char* save = NULL;
  for (char* t = strtok_r(*buf, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
    w[(*n)++] = t;
  return w;
}

// Storage::printResult: <dir>/<file name>, ".sto" added when the name has no extension; a
// folder in the name is dropped (with a warning), as OpenSim does
static char* result_path(const char* dir, const char* name, FILE* log) {
  const char* base = strrchr(name, '/');
  if (base) {
    fprintf(log, "mbstudy: warning: '%s' names a folder where only a file name is expected; "
                 "the file goes to %s, as OpenSim does\n", name, dir);
    base++;
  } else {
    base = name;
  }
  const char* dot = strrchr(base, '.');
  return mbs_format_string("%s/%s%s", dir, base, dot ? "" : ".sto");
}

// run the prepared options; the result files at gen_path (and body_path when joints are
// reported); `what` names the run in messages
static int run_id(const mbs_id_options* io, const char* results, const char* gen_name,
                  const char* body_name, const char* what, FILE* log, int quiet) {
  mbs_error err;
  mbs_error_clear(&err);
  mbs_id* id = NULL;
  const double t0 = mbs_wall_seconds();
  if (mbs_id_create(io, &id, &err)) {
    fprintf(log, "mbstudy: %s: %s\n", what, err.message);
    return 1;
  }
  const double t1 = mbs_wall_seconds();
  for (int i = 0; i < mbs_id_nwarning(id); i++)
    fprintf(log, "mbstudy: warning: %s\n", mbs_id_warning(id, i));
  if (!quiet) {
    fprintf(log, "mbstudy: %s: %s, %d coordinates; forces excluded: %d", what,
            mbs_osim_name(mbs_id_model(id)), mbs_id_ncolumn(id), mbs_id_nexcluded(id));
    if (io->lowpass_hz >= 0)
      fprintf(log, "; coordinates low-pass filtered at %g Hz", io->lowpass_hz);
    fprintf(log, "\n");
  }
  mbs_table *gen = NULL, *body = NULL;
  int rc = 1;
  char *gp = NULL, *bp = NULL;
  if (mbs_id_run(id, &gen, &body, &err)) {
    fprintf(log, "mbstudy: %s: %s\n", what, err.message);
    goto done;
  }
  const double t2 = mbs_wall_seconds();
  if (mbs_make_dirs(results)) {
    fprintf(log, "mbstudy: %s: cannot create the results directory %s: %s\n", what, results,
            strerror(errno));
    goto done;
  }
  gp = result_path(results, gen_name, log);
  if (!gp || mbs_table_write_sto(gen, gp, 1, &err)) {
    fprintf(log, "mbstudy: %s: %s\n", what, gp ? err.message : "out of memory");
    goto done;
  }
  if (body) {
    bp = result_path(results, body_name, log);
    if (!bp || mbs_table_write_sto(body, bp, 1, &err)) {
      fprintf(log, "mbstudy: %s: %s\n", what, bp ? err.message : "out of memory");
      goto done;
    }
  }
  const int n = mbs_id_nframe(id);
  const double t3 = mbs_wall_seconds();
  fprintf(log, "mbstudy: %s: wrote %s%s%s: %d frames, t = %.8g .. %.8g s; inverse dynamics "
               "%.3g ms (%.0f frames/s), whole tool %.3g ms (reading and filtering %.3g ms)\n",
          what, gp, bp ? " and " : "", bp ? bp : "", n, mbs_id_frame_time(id, 0),
          mbs_id_frame_time(id, n - 1), 1e3 * (t2 - t1), t2 > t1 ? n / (t2 - t1) : 0.0,
          1e3 * (t3 - t0), 1e3 * (t1 - t0));
  rc = 0;
done:
  free(gp);
  free(bp);
  mbs_table_free(gen);
  mbs_table_free(body);
  mbs_id_free(id);
  return rc;
}

// a file a setup names must be readable: `setup:line: <key> 'name' (path): reason`
static int check_file(mbs_setup* s, const char* key, const char* path, FILE* log) {
  if (!path || !access(path, R_OK)) return 0;
  mbs_setup_node* n = mbs_setup_child(s, NULL, key);
  fprintf(log, "mbstudy run-tool: %s:%d: <%s> %s: %s\n", mbs_setup_path(s),
          n ? mbs_setup_line(n) : 0, key, path, strerror(errno));
  return 1;
}

int mbs_tool_inverse_dynamics(mbs_setup* s, const mbs_tool_options* o) {
  FILE* log = o->log ? o->log : stderr;
  mbs_error err;
  mbs_error_clear(&err);
  const char* name = *mbs_setup_name(s) ? mbs_setup_name(s) : "inverse_dynamics";
  char* model = mbs_setup_file(s, NULL, "model_file");
  char* coords = mbs_setup_file(s, NULL, "coordinates_file");
  char* loads = mbs_setup_file(s, NULL, "external_loads_file");
  const char* rdir = mbs_setup_string(s, NULL, "results_directory");
  char* results = o->results_dir ? strdup(o->results_dir) : mbs_setup_resolve(s, rdir ? rdir : ".");
  const char* gen = mbs_setup_string(s, NULL, "output_gen_force_file");
  const char* body = mbs_setup_string(s, NULL, "output_body_forces_file");
  const char* range = mbs_setup_string(s, NULL, "time_range");
  char *exbuf = NULL, *jbuf = NULL;
  int nex = 0, nj = 0, rc = 1;
  char** ex = split_words(mbs_setup_string(s, NULL, "forces_to_exclude"), &exbuf, &nex);
  char** joints = split_words(mbs_setup_string(s, NULL, "joints_to_report_body_forces"), &jbuf,
                              &nj);
  mbs_id_options io;
  mbs_id_options_default(&io);
  if (!ex || !joints || !results) {
    fprintf(log, "mbstudy run-tool: out of memory\n");
    goto done;
  }
  if (mbs_setup_number(s, NULL, "lowpass_cutoff_frequency_for_coordinates", -1, &io.lowpass_hz,
                       &err)) {
    fprintf(log, "mbstudy run-tool: %s\n", err.message);
    goto done;
  }
  if (range) {
    char* end;
    io.time_range[0] = strtod(range, &end);
    char* end2;
    io.time_range[1] = strtod(end, &end2);
    while (*end2 == ' ' || *end2 == '\t' || *end2 == '\n' || *end2 == '\r') end2++;
    if (end == range || end2 == end || *end2 || isnan(io.time_range[0]) ||
        isnan(io.time_range[1]) || io.time_range[0] > io.time_range[1]) {
      fprintf(log, "mbstudy run-tool: %s:%d: <time_range> '%s' is not two times, start then "
                   "end\n", mbs_setup_path(s), mbs_setup_line(mbs_setup_child(s, NULL,
                                                                               "time_range")),
              range);
      goto done;
    }
  }
  if (!model || !coords) {
    fprintf(log, "mbstudy run-tool: %s:%d: <%s> has no <%s>\n", mbs_setup_path(s),
            mbs_setup_line(mbs_setup_root(s)), mbs_setup_tool(s),
            model ? "coordinates_file" : "model_file");
    goto done;
  }
  if (check_file(s, "model_file", model, log) || check_file(s, "coordinates_file", coords, log) ||
      check_file(s, "external_loads_file", loads, log))
    goto done;
  mbs_setup_warn_unused(s, log);
  io.model_file = model;
  io.coordinates_file = coords;
  io.external_loads = loads;
  io.exclude = (const char* const*)ex;
  io.nexclude = nex;
  io.report_joints = (const char* const*)joints;
  io.nreport_joints = nj;
  io.rename_types = o->rename_types;
  io.nrename_types = o->nrename_types;
  io.param_values = o->param_values;
  io.nparam_values = o->nparam_values;
  char what[600];
  snprintf(what, sizeof(what), "run-tool: %s: %s '%s'", mbs_setup_path(s), mbs_setup_tool(s),
           name);
  rc = run_id(&io, results, gen ? gen : "inverse_dynamics.sto",
              body ? body : "body_forces_at_joints.sto", what, log, o->quiet);
done:
  free(model);
  free(coords);
  free(loads);
  free(results);
  free(ex);
  free(exbuf);
  free(joints);
  free(jbuf);
  return rc;
}

static void usage(FILE* f) {
  fprintf(f,
          "usage: mbstudy inverse-dynamics --model MODEL.osim --coordinates FILE.mot [options]\n"
          "  OpenSim's InverseDynamicsTool: the generalized forces that make the model follow\n"
          "  the coordinates (OpenSim 4's processing, columns and file)\n"
          "  --external-loads FILE.xml   an OpenSim ExternalLoads file (e.g. ground reactions)\n"
          "  --lowpass HZ                filter the coordinates at HZ (default -1: none)\n"
          "  --time-range T0 T1          frames within [T0, T1] (default: the file's times)\n"
          "  --exclude NAME              a force, group, Muscles, Actuators or All left out\n"
          "                              (repeatable; OpenSim's forces_to_exclude)\n"
          "  --body-forces JOINT         report the joint's equivalent body force (repeatable;\n"
          "                              All for every joint)\n"
          "  --out FILE.sto              generalized forces (default inverse_dynamics.sto)\n"
          "  --body-forces-out FILE.sto  body forces (default body_forces_at_joints.sto)\n"
          "  --rename-type OLD=NEW       read forces of class OLD as class NEW\n"
          "  --quiet                     only warnings, errors and the summary\n");
}

int mbs_cmd_inverse_dynamics(int argc, char** argv) {
  mbs_id_options io;
  mbs_id_options_default(&io);
  const char* out = "inverse_dynamics.sto";
  const char* bout = NULL;
  const char* ex[64];
  const char* joints[64];
  const char* renames[32];
  int nex = 0, nj = 0, nren = 0, quiet = 0, range = 0;
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    char* end = NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--quiet")) {
      quiet = 1;
      continue;
    } else if (!v) {
      fprintf(stderr, "mbstudy inverse-dynamics: unknown option or missing value: '%s'\n", a);
      usage(stderr);
      return 2;
    }
    if (!strcmp(a, "--model")) io.model_file = v;
    else if (!strcmp(a, "--coordinates")) io.coordinates_file = v;
    else if (!strcmp(a, "--external-loads")) io.external_loads = v;
    else if (!strcmp(a, "--out")) out = v;
    else if (!strcmp(a, "--body-forces-out")) bout = v;
    else if (!strcmp(a, "--lowpass")) {
      io.lowpass_hz = strtod(v, &end);
      if (end == v || *end) {
        fprintf(stderr, "mbstudy inverse-dynamics: --lowpass expects a number, got '%s'\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--time-range") && i + 2 < argc) {
      char* end2 = NULL;
      io.time_range[0] = strtod(v, &end);
      io.time_range[1] = strtod(argv[i + 2], &end2);
      if (end == v || *end || end2 == argv[i + 2] || *end2) {
        fprintf(stderr, "mbstudy inverse-dynamics: --time-range expects two numbers, got "
                        "'%s %s'\n", v, argv[i + 2]);
        return 2;
      }
      i++;
      range = 1;
    } else if (!strcmp(a, "--exclude") && nex < 64) ex[nex++] = v;
    else if (!strcmp(a, "--body-forces") && nj < 64) joints[nj++] = v;
    else if (!strcmp(a, "--rename-type") && nren < 16) {
      const char* eq = strchr(v, '=');
      if (!eq || eq == v || !eq[1]) {
        fprintf(stderr, "mbstudy inverse-dynamics: --rename-type takes OLD=NEW, got '%s'\n", v);
        return 2;
      }
      renames[2 * nren] = strndup(v, (size_t)(eq - v));
      renames[2 * nren + 1] = eq + 1;
      nren++;
    } else {
      fprintf(stderr, "mbstudy inverse-dynamics: unknown option or missing value: '%s'\n", a);
      usage(stderr);
      for (int k = 0; k < nren; k++) free((char*)renames[2 * k]);
      return 2;
    }
    i++;
  }
  int rc = 2;
  if (!io.model_file || !io.coordinates_file) {
    fprintf(stderr, "mbstudy inverse-dynamics: --model and --coordinates are needed\n");
    usage(stderr);
  } else {
    // without --time-range: the coordinates' own times (OpenSim's default, all times, would
    // also give the frames on the padding the filter adds)
    mbs_table* ct = NULL;
    mbs_error err;
    if (!range && !mbs_table_read(io.coordinates_file, &ct, &err) && ct->nrow > 0) {
      io.time_range[0] = mbs_table_get(ct, 0, 0);
      io.time_range[1] = mbs_table_get(ct, ct->nrow - 1, 0);
    }
    mbs_table_free(ct);
    io.exclude = ex;
    io.nexclude = nex;
    io.report_joints = joints;
    io.nreport_joints = nj;
    io.rename_types = renames;
    io.nrename_types = nren;
    // the results folder and file names from --out (and --body-forces-out)
    char* dir = strdup(out);
    char* slash = dir ? strrchr(dir, '/') : NULL;
    const char* gname = slash ? out + (slash - dir) + 1 : out;
    if (slash) *slash = 0;
    const char* folder = !dir ? "." : slash ? (*dir ? dir : "/") : ".";
    const char* bname = "body_forces_at_joints.sto";
    if (bout) {
      const char* bs = strrchr(bout, '/');
      if (bs && (strncmp(bout, dir ? dir : "", (size_t)(bs - bout)) || !slash ||
                 (size_t)(bs - bout) != strlen(dir)))
        fprintf(stderr, "mbstudy inverse-dynamics: warning: the body forces go next to %s\n",
                out);
      bname = bs ? bs + 1 : bout;
    }
    rc = dir ? run_id(&io, folder, gname, bname, "inverse-dynamics", stderr, quiet) : 1;
    free(dir);
  }
  for (int k = 0; k < nren; k++) free((char*)renames[2 * k]);
  return rc;
}
