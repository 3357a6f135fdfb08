// `mbstudy model info|accel` and `mbstudy simulate`: OpenSim models from the command line.
#include "model_cmd.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../studies/builtin_models.h"
#include "../studies/human_model.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/sto.h"
#include "mbs/table.h"
#include "progress.h"

// an .osim file, or a model mbstudy builds itself (`run` accepts both): the built-in models
// (double_pendulum, ...) and `human` (the posture study's standing human on its platform)
static mbs_osim_model* load_with(const char* path, const char* loads, const char* cmd,
                                 int quiet) {
  mbs_error err;
  mbs_osim_options o = {.external_loads = loads};
  struct stat sb;
  const int is_file = stat(path, &sb) == 0;
  const char* builtin = is_file ? NULL : mbs_builtin_model(path);
  mbs_osim_model* m;
  if (builtin) {
    m = mbs_osim_parse(builtin, strlen(builtin), path, &o, &err);
  } else if (!is_file && !strcmp(path, "human")) {
    mbs_human_params hp;
    mbs_human_params_default(&hp);
    m = mbs_human_model_build(&hp, &err);
  } else {
    m = mbs_osim_read_options(path, &o, &err);
    if (!m && !is_file && !strchr(path, '/')) {  // perhaps meant as a built-in model's name
      char list[300] = "";
      for (int i = 0; i < mbs_builtin_model_count(); i++) {
        strncat(list, mbs_builtin_model_name(i), sizeof(list) - strlen(list) - 3);
        strncat(list, ", ", sizeof(list) - strlen(list) - 1);
      }
      fprintf(stderr, "mbstudy %s: %s (nor a built-in model: %shuman)\n", cmd, err.message,
              list);
      return NULL;
    }
  }
  if (!m) {
    fprintf(stderr, "mbstudy %s: %s\n", cmd, err.message);
    return NULL;
  }
  if (!quiet) {
    for (int i = 0; i < mbs_osim_nwarning(m); i++)
      fprintf(stderr, "warning: %s\n", mbs_osim_warning(m, i));
  }
  return m;
}

static mbs_osim_model* load(const char* path, const char* cmd, int quiet) {
  return load_with(path, NULL, cmd, quiet);
}

mbs_osim_model* mbs_cli_load_model(const char* path_or_name, const char* cmd, int quiet) {
  return load_with(path_or_name, NULL, cmd, quiet);
}

static const char* motion_name(mbs_osim_motion t) {
  return t == MBS_OSIM_ROTATIONAL ? "rotational" : t == MBS_OSIM_TRANSLATIONAL ? "translational"
                                                                               : "coupled";
}

//---------------------------------- model info -------------------------------------------------

static int cmd_info(const char* path) {
  mbs_osim_model* m = load(path, "model info", 0);
  if (!m) return 1;
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  if (!st) {
    fprintf(stderr, "mbstudy model info: out of memory\n");
    mbs_osim_free(m);
    return 1;
  }
  const int nb = mbs_system_nbody(sys);
  double total = 0;
  const int version = mbs_osim_version(m);
  printf("model: %s (%s, OpenSim document version %d%s)\n", mbs_osim_name(m), path, version,
         version < 30500 ? ", an OpenSim 1.x-3.x file converted on load as OpenSim 4 does" : "");
  printf("\nbodies: %d (plus ground)\n", nb - 1);
  printf("  %-24s %-24s %-24s %-14s %10s\n", "body", "parent", "joint", "mobilizer", "mass kg");
  for (int b = 1; b < nb; b++) {
    char p[512];
    snprintf(p, sizeof(p), "/bodyset/%s/mass", mbs_body_name(sys, b));
    const mbs_param_info* pi = mbs_system_find_param(sys, p);
    const double mass = pi ? mbs_state_params(st)[pi->index] : NAN;
    total += mass;
    printf("  %-24s %-24s %-24s %-14s %10.4f\n", mbs_body_name(sys, b),
           mbs_body_name(sys, mbs_body_parent(sys, b)), mbs_body_mobilizer_name(sys, b),
           mbs_mobilizer_type_name(mbs_body_mobilizer(sys, b)), mass);
  }
  const int nc = mbs_osim_ncoordinate(m);
  printf("\ncoordinates: %d\n", nc);
  printf("  %-24s %-20s %-13s %12s %12s %12s  %s\n", "coordinate", "joint", "motion", "min",
         "max", "default", "flags");
  for (int i = 0; i < nc; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    const int rot = c->motion == MBS_OSIM_ROTATIONAL;
    const double k = rot ? 180.0 / M_PI : 1.0;
    printf("  %-24s %-20s %-13s %12.4f %12.4f %12.4f  %s%s%s%s\n", c->name, c->joint,
           motion_name(c->motion), c->range[0] * k, c->range[1] * k, c->default_value * k,
           rot ? "deg" : "m", c->locked ? " locked" : "", c->clamped ? " clamped" : "",
           c->prescribed ? " prescribed" : "");
  }
  const int ncon = mbs_system_nconstraint(sys);
  int meq = 0;
  printf("\nconstraints: %d\n", ncon);
  for (int i = 0; i < ncon; i++) {
    int mp, mv, ma;
    mbs_constraint_count(sys, i, &mp, &mv, &ma);
    printf("  %-32s %-24s %d equation%s\n", mbs_constraint_name(sys, i),
           mbs_constraint_type_name(mbs_constraint_type_of(sys, i)), mp + mv + ma,
           mp + mv + ma == 1 ? "" : "s");
  }
  int rc = mbs_realize_instance(sys, st);
  if (rc == MBS_OK) meq = mbs_constraint_nequation(sys, st);
  const int nf = mbs_system_nforce(sys);
  printf("\nforces: %d\n", nf);
  for (int i = 0; i < nf; i++)
    printf("  %-32s %s\n", mbs_force_name(sys, i), mbs_force_kind(sys, i));
  int nsim = 0;
  for (int i = 0; i < mbs_osim_nmuscle(m); i++) {
    const int f = mbs_force_find(sys, mbs_osim_record_at(m, i)->name);
    nsim += f >= 0 && mbs_force_path(sys, f) >= 0;
  }
  printf("\nmuscles: %d", mbs_osim_nmuscle(m));
  if (nsim < mbs_osim_nmuscle(m)) printf(" (%d of them read but not simulated)",
                                         mbs_osim_nmuscle(m) - nsim);
  printf("\n");
  for (int i = 0; i < mbs_osim_nmuscle(m); i++) {
    const mbs_osim_record* r = mbs_osim_record_at(m, i);
    const int f = mbs_force_find(sys, r->name);
    const int path = f >= 0 ? mbs_force_path(sys, f) : -1;
    printf("  %-32s %-36s %2d path points, %d wrap%s%s\n", r->name, r->kind, r->npoint,
           r->nwrap, r->nwrap == 1 ? "" : "s", path >= 0 ? "" : "  (not simulated)");
  }
  printf("wrap objects: %d\n", mbs_system_nwrap_object(sys));
  int nother = 0;
  for (int i = mbs_osim_nmuscle(m); i < mbs_osim_nrecord(m); i++) nother++;
  if (nother) {
    printf("\nother elements kept but not simulated: %d\n", nother);
    for (int i = mbs_osim_nmuscle(m); i < mbs_osim_nrecord(m); i++) {
      const mbs_osim_record* r = mbs_osim_record_at(m, i);
      printf("  %-32s %s (line %d)\n", r->name, r->kind, r->line);
    }
  }
  printf("\nmarkers: %d\n", mbs_osim_nmarker(m));
  printf("contact geometries: %d\n", mbs_system_ncontact_geometry(sys));
  printf("actuator controls: %d\n", mbs_system_ncontrol(sys));
  printf("\ntotal mass: %.6g kg\n", total);
  printf("mobilities: %d; enforced constraint equations: %d; degrees of freedom: %d\n",
         mbs_system_nu(sys), meq, mbs_system_nu(sys) - meq);
  if (mbs_osim_nwarning(m))
    printf("warnings: %d (listed on standard error)\n", mbs_osim_nwarning(m));
  mbs_state_destroy(st);
  mbs_osim_free(m);
  return rc ? 1 : 0;
}

//---------------------------------- model accel ------------------------------------------------

// up to 20 characters of input for a message, control characters shown as \n, \t or \xNN
static void excerpt(const char* p, char* out, size_t size) {
  size_t k = 0;
  for (int i = 0; p[i] && i < 20 && k + 5 < size; i++) {
    const unsigned char c = (unsigned char)p[i];
    if (c == '\n') k += (size_t)snprintf(out + k, size - k, "\\n");
    else if (c == '\r') k += (size_t)snprintf(out + k, size - k, "\\r");
    else if (c == '\t') k += (size_t)snprintf(out + k, size - k, "\\t");
    else if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(out + k, size - k, "\\x%02x", c);
    else out[k++] = (char)c;
  }
  out[k] = 0;
}

// the column of a coordinate's value or speed in a storage file: OpenSim 4's state paths
// (/jointset/J/C/value, /speed), or OpenSim 3's names (C, C_u) and a motion's (C)
static int state_column(const mbs_table* t, const mbs_osim_coordinate* c, int speed) {
  char lab[600];
  snprintf(lab, sizeof(lab), "/jointset/%s/%s/%s", c->joint, c->name, speed ? "speed" : "value");
  int k = mbs_table_column(t, lab);
  if (k < 0) {
    snprintf(lab, sizeof(lab), speed ? "%s_u" : "%s", c->name);
    k = mbs_table_column(t, lab);
  }
  return k;
}

// `model accel` of the states in an OpenSim storage file (.sto, .mot): columns by name,
// degrees converted; speeds absent from the file are 0 (said once); a row of time and the
// accelerations per row
static int accel_storage(mbs_osim_model* m, const char* states) {
  mbs_table* t = NULL;
  mbs_error err;
  if (mbs_table_read_sto(states, &t, &err) != MBS_OK) {
    fprintf(stderr, "mbstudy model accel: %s\n", err.message);
    return 1;
  }
  const mbs_system* sys = mbs_osim_system(m);
  const int n = mbs_osim_ncoordinate(m);
  int* col = malloc((2 * (size_t)n + 1) * sizeof(int));
  double* v = malloc((2 * (size_t)n + 1) * sizeof(double));
  double* a = malloc(((size_t)n + 1) * sizeof(double));
  mbs_state* st = mbs_state_create(sys);
  int rc = 0, nospeed = 0;
  if (!col || !v || !a || !st) {
    fprintf(stderr, "mbstudy model accel: out of memory\n");
    rc = 1;
  }
  for (int i = 0; !rc && i < n; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    col[i] = state_column(t, c, 0);
    col[n + i] = state_column(t, c, 1);
    nospeed += col[n + i] < 0;
    if (col[i] < 0) {
      fprintf(stderr, "mbstudy model accel: %s: no column for coordinate '%s' (/jointset/%s/%s/"
                      "value or %s)\n", states, c->name, c->joint, c->name, c->name);
      rc = 1;
    }
  }
  if (!rc && nospeed)
    fprintf(stderr, "mbstudy model accel: %s: %d of %d coordinates have no speed column: their "
                    "speeds are 0\n", states, nospeed, n);
  if (!rc) {
    printf("time");
    for (int i = 0; i < n; i++) printf(" %s", mbs_osim_coordinate_info(m, i)->name);
    printf("\n");
  }
  for (int r = 0; !rc && r < t->nrow; r++) {
    for (int i = 0; i < n; i++) {
      const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
      const double s = t->in_degrees && c->motion == MBS_OSIM_ROTATIONAL ? M_PI / 180 : 1;
      v[i] = s * mbs_table_get(t, r, col[i]);
      v[n + i] = col[n + i] < 0 ? 0 : s * mbs_table_get(t, r, col[n + i]);
    }
    mbs_osim_set_coordinates(m, st, v, v + n);
    if (mbs_osim_get_accelerations(m, st, a)) {
      fprintf(stderr, "mbstudy model accel: %s: row %d (t = %g): %s\n", states, r + 1,
              mbs_table_get(t, r, 0), mbs_state_error(st)->message);
      rc = 1;
      break;
    }
    printf("%.17g", mbs_table_get(t, r, 0));
    for (int i = 0; i < n; i++) printf(" %.17g", a[i]);
    printf("\n");
  }
  mbs_state_destroy(st);
  free(col);
  free(v);
  free(a);
  mbs_table_free(t);
  return rc;
}

static int ends_with(const char* s, const char* tail) {
  const size_t n = strlen(s), k = strlen(tail);
  return n >= k && !strcasecmp(s + n - k, tail);
}

static int cmd_accel(const char* path, const char* states) {
  mbs_osim_model* m = load(path, "model accel", 1);
  if (!m) return 1;
  if (strcmp(states, "-") && (ends_with(states, ".sto") || ends_with(states, ".mot"))) {
    const int rc = accel_storage(m, states);
    mbs_osim_free(m);
    return rc;
  }
  FILE* f = !strcmp(states, "-") ? stdin : fopen(states, "r");
  if (!f) {
    fprintf(stderr, "mbstudy model accel: %s: cannot open: %s\n", states, strerror(errno));
    mbs_osim_free(m);
    return 1;
  }
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  const int n = mbs_osim_ncoordinate(m);
  double* v = malloc((2 * (size_t)n + 1) * sizeof(double));
  double* a = malloc(((size_t)n + 1) * sizeof(double));
  char* line = NULL;
  size_t cap = 0;
  int lineno = 0, rc = 0;
  while (st && v && a && getline(&line, &cap, f) > 0) {
    lineno++;
    char* p = line;
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') continue;
    int k = 0;
    for (;;) {
      while (isspace((unsigned char)*p) || *p == ',') p++;
      if (!*p) break;
      char* end;
      const double x = strtod(p, &end);
      if (end == p) {
        char ex[120];
        excerpt(p, ex, sizeof(ex));
        fprintf(stderr, "mbstudy model accel: %s:%d: '%s' is not a number (an OpenSim storage "
                "file is read by its columns when its name ends in .sto or .mot)\n", states,
                lineno, ex);
        rc = 1;
        break;
      }
      if (k < 2 * n) v[k] = x;
      k++;
      p = end;
    }
    if (rc) break;
    if (k != 2 * n) {
      fprintf(stderr,
              "mbstudy model accel: %s:%d: %d values; the model has %d coordinates, so a line "
              "needs %d values and then %d speeds\n",
              states, lineno, k, n, n, n);
      rc = 1;
      break;
    }
    mbs_osim_set_coordinates(m, st, v, v + n);
    const int r = mbs_osim_get_accelerations(m, st, a);
    if (r) {
      fprintf(stderr, "mbstudy model accel: %s:%d: %s\n", states, lineno,
              mbs_state_error(st)->message);
      rc = 1;
      break;
    }
    for (int i = 0; i < n; i++) printf("%s%.17g", i ? " " : "", a[i]);
    printf("\n");
  }
  if (!st || !v || !a) {
    fprintf(stderr, "mbstudy model accel: out of memory\n");
    rc = 1;
  }
  free(line);
  free(v);
  free(a);
  if (f != stdin) fclose(f);
  mbs_state_destroy(st);
  mbs_osim_free(m);
  return rc;
}

//---------------------------------- model params -----------------------------------------------

static void print_range(double lo, double hi) {
  if (isinf(lo) && isinf(hi)) printf("any");
  else if (isinf(hi)) printf(">= %g", lo);
  else if (isinf(lo)) printf("<= %g", hi);
  else printf("%g .. %g", lo, hi);
}

// the muscles' excitations (their State controls): whether setting one has an effect (not a
// function of time), from the excitation in effect at two control values
static int excitation_settable(const mbs_system* sys, mbs_state* st, int c, int force) {
  const double saved = mbs_state_controls(st)[c];
  double e[2] = {0, 1};
  for (int k = 0; k < 2; k++) {
    mbs_state_upd_controls(st)[c] = 0.25 + 0.5 * k;
    mbs_muscle_report rep = {0};
    if (mbs_realize_dynamics(sys, st) || mbs_get_muscle_report(sys, st, force, &rep)) break;
    e[k] = rep.excitation;
  }
  mbs_state_upd_controls(st)[c] = saved;
  return e[0] != e[1];
}

// every parameter a study can vary: the System's instance parameters, the muscles' excitations
// and the coordinates' initial values and speeds
static int cmd_params(const char* path) {
  mbs_osim_model* m = load(path, "model params", 1);
  if (!m) return 1;
  const mbs_system* sys = mbs_osim_system(m);
  printf("# parameters of %s that a study can vary (path, unit, default, valid range)\n",
         mbs_osim_name(m));
  for (int b = 0; b < mbs_system_nparam_block(sys); b++) {
    const mbs_param_info* p = mbs_system_param_block(sys, b);
    printf("%-56s %-14s ", p->path, p->unit && *p->unit ? p->unit : "-");
    if (p->size > 1) printf("[");
    for (int k = 0; k < p->size && k < 8; k++)
      printf("%s%.10g", k ? " " : "", mbs_system_param_default(sys, p->index + k));
    if (p->size > 8) printf(" ... (%d numbers)", p->size);
    if (p->size > 1) printf("]");
    printf("  ");
    print_range(p->lower, p->upper);
    printf("\n");
  }
  mbs_state* st = mbs_system_ncontrol(sys) > 0 ? mbs_state_create(sys) : NULL;
  for (int c = 0; st && c < mbs_system_ncontrol(sys); c++) {
    const int f = mbs_control_force(sys, c);
    if (f < 0 || strcmp(mbs_force_kind(sys, f), "muscle")) continue;
    char p[600];
    snprintf(p, sizeof(p), "/forceset/%s/excitation", mbs_force_name(sys, f));
    printf("%-56s %-14s %.10g  any (%s)\n", p, "1", mbs_state_controls(st)[c],
           excitation_settable(sys, st, c, f) ? "the muscle's control"
                                              : "a function of time in this model: fixed");
  }
  mbs_state_destroy(st);
  for (int i = 0; i < mbs_osim_ncoordinate(m); i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    const int rot = c->motion == MBS_OSIM_ROTATIONAL;
    char p[600];
    snprintf(p, sizeof(p), "/jointset/%s/%s/default_value", c->joint, c->name);
    printf("%-56s %-14s %.10g  ", p, rot ? "rad" : "m", c->default_value);
    print_range(c->range[0], c->range[1]);
    printf(" (the coordinate's range)\n");
    snprintf(p, sizeof(p), "/jointset/%s/%s/default_speed_value", c->joint, c->name);
    printf("%-56s %-14s %.10g  any\n", p, rot ? "rad/s" : "m/s", c->default_speed);
  }
  mbs_osim_free(m);
  return 0;
}

int mbs_cmd_model(int argc, char** argv) {
  if (argc == 2 && !strcmp(argv[0], "params")) return cmd_params(argv[1]);
  if (argc < 2 || (strcmp(argv[0], "info") && strcmp(argv[0], "accel"))) {
    fprintf(stderr, "usage: mbstudy model info MODEL.osim\n"
                    "       mbstudy model params MODEL.osim\n"
                    "       mbstudy model accel MODEL.osim --states FILE\n");
    return 2;
  }
  if (!strcmp(argv[0], "info")) {
    if (argc != 2) {
      fprintf(stderr, "mbstudy model info: unexpected argument '%s'\n", argv[2]);
      return 2;
    }
    return cmd_info(argv[1]);
  }
  const char* states = NULL;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--states") && i + 1 < argc) states = argv[++i];
    else {
      fprintf(stderr, "mbstudy model accel: unknown option or missing value: '%s'\n", argv[i]);
      return 2;
    }
  }
  if (!states) {
    fprintf(stderr, "mbstudy model accel: --states FILE is required ('-' reads standard input)\n");
    return 2;
  }
  return cmd_accel(argv[1], states);
}

//---------------------------------- simulate ---------------------------------------------------

typedef struct sim_out {
  const mbs_osim_model* m;
  mbs_sto_writer* w;
  double* row;
  mbs_progress prog;
  long reports;
  mbs_error err;
  int rc;
} sim_out;

static int report_row(const mbs_system* sys, mbs_state* st, void* user) {
  (void)sys;
  sim_out* o = user;
  const int n = mbs_osim_ncoordinate(o->m);
  o->row[0] = mbs_state_time(st);
  double* vals = o->row + 1;
  double* spd = o->row + 1 + n;
  mbs_osim_get_coordinates(o->m, st, vals, spd);
  if ((o->rc = mbs_sto_write_row(o->w, o->row, &o->err))) return 1;
  mbs_progress_update(&o->prog, ++o->reports);
  return 0;
}

int mbs_cmd_simulate(int argc, char** argv) {
  const char *model = NULL, *out = NULL, *integ = "rk_merson", *loads = NULL;
  double duration = NAN, accuracy = 1e-3, report = 0.01, step = 1e-4;
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    char* end = NULL;
    if (a[0] != '-' && !model) {
      model = a;
      continue;
    }
    if (!v) {
      fprintf(stderr, "mbstudy simulate: unknown option or missing value: '%s'\n", a);
      return 2;
    }
    if (!strcmp(a, "--out")) out = v;
    else if (!strcmp(a, "--external-loads")) loads = v;
    else if (!strcmp(a, "--integrator")) integ = v;
    else if (!strcmp(a, "--duration")) duration = strtod(v, &end);
    else if (!strcmp(a, "--accuracy")) accuracy = strtod(v, &end);
    else if (!strcmp(a, "--report")) report = strtod(v, &end);
    else if (!strcmp(a, "--step")) step = strtod(v, &end);
    else {
      fprintf(stderr, "mbstudy simulate: unknown option '%s'\n", a);
      return 2;
    }
    if (end && (end == v || *end)) {
      fprintf(stderr, "mbstudy simulate: %s expects a number, got '%s'\n", a, v);
      return 2;
    }
    i++;
  }
  if (!model || !out || !(duration > 0)) {
    fprintf(stderr, "usage: mbstudy simulate MODEL.osim --duration T --out FILE.sto "
                    "[--accuracy A (1e-3)] [--integrator NAME (rk_merson)] [--report S (0.01)] "
                    "[--step S (fixed-step integrators, 1e-4)] [--external-loads FILE.xml]\n");
    return 2;
  }
  const int type = mbs_integrator_from_name(integ);
  if (type < 0) {
    fprintf(stderr, "mbstudy simulate: unknown integrator '%s' (rk_merson, dormand_prince, "
                    "cvode_bdf, euler, rk4, semi_explicit_euler, verlet, ros34pw2)\n", integ);
    return 2;
  }
  mbs_osim_model* m = load_with(model, loads, "simulate", 0);
  if (!m) return 1;
  double lt0, lt1;
  const char* ldata = mbs_osim_external_loads_range(m, &lt0, &lt1);
  if (ldata && (duration > lt1 || lt0 > 0))
    fprintf(stderr, "warning: the external loads' data (%s) cover t = %g .. %g s and the "
                    "simulation runs over 0 .. %g s: outside the data each force, point and "
                    "torque continues along its spline's end tangent (linear extrapolation from "
                    "the %s values)\n", ldata, lt0, lt1, duration,
            duration > lt1 && lt0 > 0 ? "first and last" : duration > lt1 ? "last" : "first");
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  const int n = mbs_osim_ncoordinate(m);
  // OpenSim 4 states file columns
  const int ncol = 1 + 2 * n;
  char** labels = calloc((size_t)ncol, sizeof(char*));
  sim_out o;
  memset(&o, 0, sizeof(o));
  o.m = m;
  o.row = calloc((size_t)ncol, sizeof(double));
  int rc = 0;
  if (!st || !labels || !o.row) {
    fprintf(stderr, "mbstudy simulate: out of memory\n");
    rc = 1;
    goto done;
  }
  labels[0] = strdup("time");
  for (int i = 0; i < n; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    labels[1 + i] = malloc(strlen(c->joint) + strlen(c->name) + 32);
    labels[1 + n + i] = malloc(strlen(c->joint) + strlen(c->name) + 32);
    if (labels[1 + i]) sprintf(labels[1 + i], "/jointset/%s/%s/value", c->joint, c->name);
    if (labels[1 + n + i]) sprintf(labels[1 + n + i], "/jointset/%s/%s/speed", c->joint, c->name);
  }
  for (int i = 0; i < ncol; i++)
    if (!labels[i]) {
      fprintf(stderr, "mbstudy simulate: out of memory\n");
      rc = 1;
      goto done;
    }
  if ((rc = mbs_osim_default_state(m, st))) {
    fprintf(stderr, "mbstudy simulate: %s: default pose: %s\n", model, mbs_state_error(st)->message);
    rc = 1;
    goto done;
  }
  o.w = mbs_sto_open(out, mbs_osim_name(m), ncol, (const char* const*)labels, 0, &o.err);
  if (!o.w) {
    fprintf(stderr, "mbstudy simulate: %s\n", o.err.message);
    rc = 1;
    goto done;
  }
  mbs_simulation_options so;
  mbs_simulation_options_default(&so);
  so.integrator = (mbs_integrator_type)type;
  so.integ.accuracy = accuracy;
  so.integ.fixed_step = step;
  so.report_interval = report;
  fprintf(stderr, "mbstudy simulate: %s, %g s, %s at %s %g\n", mbs_osim_name(m), duration, integ,
          mbs_integrator_is_error_controlled(so.integrator) ? "accuracy" : "step",
          mbs_integrator_is_error_controlled(so.integrator) ? accuracy : step);
  mbs_progress_start(&o.prog, stderr, "reports", (long)(duration / report + 0.5) + 1);
  mbs_simulation_result res;
  const int srun = mbs_simulate(sys, st, duration, &so, NULL, 0, report_row, &o, &res);
  mbs_progress_finish(&o.prog);
  int cl = mbs_sto_close(o.w, &o.err);
  if (o.rc) {
    fprintf(stderr, "mbstudy simulate: %s\n", o.err.message);
    rc = 1;
  } else if (srun) {
    fprintf(stderr, "mbstudy simulate: %s\nthe %ld rows up to t = %g s are in %s\n",
            mbs_state_error(st)->message, o.reports, res.t_end, out);
    rc = 1;
  } else if (cl) {
    fprintf(stderr, "mbstudy simulate: %s\n", o.err.message);
    rc = 1;
  } else {
    printf("wrote %s: %ld rows, t = 0 .. %g s; %ld steps (%ld rejected), %ld evaluations\n", out,
           o.reports, res.t_end, res.integrator.steps, res.integrator.rejected,
           res.integrator.evaluations);
  }
done:
  if (labels)
    for (int i = 0; i < ncol; i++) free(labels[i]);
  free(labels);
  free(o.row);
  mbs_state_destroy(st);
  mbs_osim_free(m);
  return rc;
}
