// OpenSim's ForwardTool (run_tool.h): a forward simulation of a model under its controls, read
// from a setup file with OpenSim 4's properties (and the older controls_file and
// initial_states_file), results as OpenSim writes them:
//   <results_directory>/<name>_states.sto          every state at every integrator step:
//                                                   /jointset/<joint>/<coordinate>/value and
//                                                   /speed, /forceset/<muscle>/activation and
//                                                   /fiber_length (OpenSim 4's labels)
//   <results_directory>/<name>_states_degrees.mot  the same with rotational coordinates in
//                                                   degrees
//   <results_directory>/<name>_controls.sto        each actuator's control in effect
// The integrator is Runge-Kutta-Merson (OpenSim's Manager default) at integrator_error_tolerance,
// within maximum/minimum_integrator_step_size and maximum_number_of_integrator_steps. A failure
// leaves the rows up to it in the files.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/sto.h"
#include "mbs/table.h"
#include "progress.h"
#include "run_tool.h"

#define LOG(o, ...) fprintf((o)->log, __VA_ARGS__)

typedef struct forward_out {
  const mbs_osim_model* m;
  mbs_sto_writer *states, *degrees, *controls;
  double *row, *drow, *crow;
  int ncoord, nz, nctl;
  const int* rotational;
  mbs_progress prog;
  double t0, tf;
  int quiet;
  mbs_error err;
  int rc;
} forward_out;

static int report(const mbs_system* sys, mbs_state* st, void* user) {
  forward_out* o = user;
  const int n = o->ncoord;
  double* q = o->row + 1;  // interleaved value, speed per coordinate
  double qv[1024], uv[1024];
  mbs_osim_get_coordinates(o->m, st, qv, uv);
  o->row[0] = o->drow[0] = o->crow[0] = mbs_state_time(st);
  for (int i = 0; i < n; i++) {
    q[2 * i] = qv[i];
    q[2 * i + 1] = uv[i];
    const double k = o->rotational[i] ? 180 / M_PI : 1;
    o->drow[1 + 2 * i] = qv[i] * k;
    o->drow[2 + 2 * i] = uv[i] * k;
  }
  const double* z = mbs_state_z(st);
  for (int i = 0; i < o->nz; i++) o->row[1 + 2 * n + i] = o->drow[1 + 2 * n + i] = z[i];
  if ((o->rc = mbs_realize_dynamics(sys, st))) return 1;
  const double* c = mbs_get_controls(sys, st);
  for (int i = 0; i < o->nctl; i++) o->crow[1 + i] = c[i];
  if ((o->rc = mbs_sto_write_row(o->states, o->row, &o->err)) ||
      (o->rc = mbs_sto_write_row(o->degrees, o->drow, &o->err)) ||
      (o->rc = mbs_sto_write_row(o->controls, o->crow, &o->err)))
    return 1;
  if (!o->quiet && o->tf > o->t0)
    mbs_progress_update(&o->prog, (long)(1000 * (mbs_state_time(st) - o->t0) / (o->tf - o->t0)));
  return 0;
}

// a column of the states file for coordinate c's value (speed) or auxiliary state `zname`
// ("<force>/<field>"), by OpenSim 4's label or OpenSim 3's
static int state_column(const mbs_table* t, const mbs_osim_coordinate* c, int speed,
                        const char* zname) {
  char a[600], b[600];
  if (c) {
    snprintf(a, sizeof(a), "/jointset/%s/%s/%s", c->joint, c->name, speed ? "speed" : "value");
    snprintf(b, sizeof(b), speed ? "%s_u" : "%s", c->name);
  } else {
    snprintf(a, sizeof(a), "/forceset/%s", zname);
    snprintf(b, sizeof(b), "%s", zname);
    char* slash = strrchr(b, '/');
    if (slash) *slash = '.';
  }
  const int k = mbs_table_column(t, a);
  return k >= 0 ? k : mbs_table_column(t, b);
}

// the initial states from a states file: the row at or before *ti (OpenSim: the closest
// earlier; before the first row, the first, and ti moves to it)
static int initial_states(const mbs_tool_options* o, const mbs_osim_model* m, mbs_state* st,
                          const char* file, double* ti) {
  mbs_table* t = NULL;
  mbs_error err;
  if (mbs_table_read_sto(file, &t, &err)) {
    LOG(o, "mbstudy run-tool: states_file: %s\n", err.message);
    return 1;
  }
  if (t->nrow < 1) {
    LOG(o, "mbstudy run-tool: states_file %s: no rows\n", file);
    mbs_table_free(t);
    return 1;
  }
  int r = -1;
  for (int i = 0; i < t->nrow; i++)
    if (mbs_table_get(t, i, 0) <= *ti) r = i;
  if (r < 0) {
    r = 0;
    LOG(o, "mbstudy run-tool: warning: initial_time %g precedes the first time in %s; the "
           "simulation starts at %g\n", *ti, file, mbs_table_get(t, 0, 0));
  }
  *ti = mbs_table_get(t, r, 0);
  const mbs_system* sys = mbs_osim_system(m);
  const int n = mbs_osim_ncoordinate(m);
  double* q = malloc(2 * ((size_t)n + 1) * sizeof(double));
  if (!q) {
    mbs_table_free(t);
    return 1;
  }
  double* u = q + n + 1;
  mbs_osim_get_coordinates(m, st, q, u);
  int found = 0;
  for (int i = 0; i < n; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    const double k = t->in_degrees && c->motion == MBS_OSIM_ROTATIONAL ? M_PI / 180 : 1;
    int col = state_column(t, c, 0, NULL);
    if (col > 0) {
      q[i] = mbs_table_get(t, r, col) * k;
      found++;
    }
    if ((col = state_column(t, c, 1, NULL)) > 0) u[i] = mbs_table_get(t, r, col) * k;
  }
  mbs_osim_set_coordinates(m, st, q, u);
  double* z = mbs_state_upd_z(st);
  for (int i = 0; i < mbs_system_nz(sys); i++) {
    char zn[512];
    mbs_system_z_name(sys, i, zn, sizeof(zn));
    const int col = state_column(t, NULL, 0, zn);
    if (col > 0) z[i] = mbs_table_get(t, r, col);
  }
  free(q);
  mbs_table_free(t);
  if (!found) {
    LOG(o, "mbstudy run-tool: states_file %s: no column names a coordinate of the model\n",
        file);
    return 1;
  }
  return 0;
}

int mbs_tool_forward(mbs_setup* s, const mbs_tool_options* o) {
  mbs_error err;
  mbs_error_clear(&err);
  const char* name = *mbs_setup_name(s) ? mbs_setup_name(s) : "forward";
  char* model = mbs_setup_file(s, NULL, "model_file");
  const char* rdir = mbs_setup_string(s, NULL, "results_directory");
  char* results = o->results_dir ? strdup(o->results_dir) : mbs_setup_resolve(s, rdir ? rdir : ".");
  char* loads = mbs_setup_file(s, NULL, "external_loads_file");
  char* states_file = mbs_setup_file(s, NULL, "states_file");
  if (!states_file) states_file = mbs_setup_file(s, NULL, "initial_states_file");
  char* controls = mbs_setup_file(s, NULL, "controls_file");  // (older setups)
  double ti, tf, accuracy, max_dt, min_dt;
  long max_steps, precision;
  int equilibrate, replace, specified_dt;
  char** fsets = NULL;
  int nfsets = 0, rc = 1;
  mbs_osim_model* m = NULL;
  mbs_state* st = NULL;
  forward_out out;
  memset(&out, 0, sizeof(out));
  if (mbs_setup_number(s, NULL, "initial_time", 0, &ti, &err) ||
      mbs_setup_number(s, NULL, "final_time", 1, &tf, &err) ||
      mbs_setup_number(s, NULL, "integrator_error_tolerance", 1e-5, &accuracy, &err) ||
      mbs_setup_number(s, NULL, "maximum_integrator_step_size", 1, &max_dt, &err) ||
      mbs_setup_number(s, NULL, "minimum_integrator_step_size", 1e-8, &min_dt, &err) ||
      mbs_setup_int(s, NULL, "maximum_number_of_integrator_steps", 20000, &max_steps, &err) ||
      mbs_setup_int(s, NULL, "output_precision", 8, &precision, &err) ||
      mbs_setup_bool(s, NULL, "solve_for_equilibrium_for_auxiliary_states", 0, &equilibrate,
                     &err) ||
      mbs_setup_bool(s, NULL, "replace_force_set", 1, &replace, &err) ||
      mbs_setup_bool(s, NULL, "use_specified_dt", 0, &specified_dt, &err)) {
    LOG(o, "mbstudy run-tool: %s\n", err.message);
    goto done;
  }
  if (!model) {
    LOG(o, "mbstudy run-tool: %s:%d: <%s> has no <model_file>\n", mbs_setup_path(s),
        mbs_setup_line(mbs_setup_root(s)), mbs_setup_tool(s));
    goto done;
  }
  if (!(tf > ti)) {
    LOG(o, "mbstudy run-tool: %s: final_time %g is not after initial_time %g\n",
        mbs_setup_path(s), tf, ti);
    goto done;
  }
  if (!(accuracy > 0) || !(max_dt > 0) || !(min_dt > 0) || min_dt > max_dt || max_steps < 1) {
    LOG(o, "mbstudy run-tool: %s: integrator settings out of range (error tolerance %g, step "
           "sizes %g .. %g, at most %ld steps)\n", mbs_setup_path(s), accuracy, min_dt, max_dt,
        max_steps);
    goto done;
  }
  if (specified_dt)
    LOG(o, "mbstudy run-tool: warning: %s: use_specified_dt is not supported; the integrator "
           "chooses its steps\n", mbs_setup_path(s));
  fsets = mbs_setup_file_list(s, NULL, "force_set_files", &nfsets);
  {  // the ControllerSet's controls file (or the older setups' controls_file)
    char* c = mbs_setup_tool_controls(s, controls, o->log);
    free(controls);
    controls = c;
  }
  for (int i = 0;; i++) {
    mbs_setup_node* a = mbs_setup_item(s, NULL, "AnalysisSet", i);
    if (!a) break;
    mbs_setup_mark_all(s, a);
    LOG(o, "mbstudy run-tool: warning: %s:%d: analysis %s '%s' is not run by mbstudy's "
           "ForwardTool\n", mbs_setup_path(s), mbs_setup_line(a), mbs_setup_kind(a),
        mbs_setup_node_name(a));
  }
  mbs_setup_child(s, NULL, "AnalysisSet");
  mbs_setup_warn_unused(s, o->log);
  // the model, with the tool's loads, controls and forces
  {
    mbs_osim_options mo = {.external_loads = loads,
                           .controls_file = controls,
                           .replace_force_set = replace,
                           .force_set_files = (const char* const*)fsets,
                           .nforce_set_files = nfsets,
                           .rename_types = o->rename_types,
                           .nrename_types = o->nrename_types,
                           .param_values = o->param_values,
                           .nparam_values = o->nparam_values};
    m = mbs_osim_read_options(model, &mo, &err);
  }
  if (!m) {
    LOG(o, "mbstudy run-tool: %s\n", err.message);
    goto done;
  }
  for (int i = 0; i < mbs_osim_nwarning(m); i++)
    LOG(o, "mbstudy run-tool: warning: %s\n", mbs_osim_warning(m, i));
  const mbs_system* sys = mbs_osim_system(m);
  st = mbs_state_create(sys);
  if (!st || mbs_osim_default_state(m, st)) {
    LOG(o, "mbstudy run-tool: %s: default state: %s\n", model,
        st ? mbs_state_error(st)->message : "out of memory");
    goto done;
  }
  // the start: the file's fiber states unless equilibrated, then the states file
  if (!equilibrate) mbs_osim_file_auxiliary_states(m, st);
  if (states_file && initial_states(o, m, st, states_file, &ti)) goto done;
  mbs_state_set_time(st, ti);
  if (mbs_system_nconstraint(sys) > 0 && mbs_assemble(sys, st, NULL)) {
    LOG(o, "mbstudy run-tool: %s: the initial state does not assemble: %s\n", model,
        mbs_state_error(st)->message);
    goto done;
  }
  if (equilibrate && mbs_equilibrate_muscles(sys, st)) {
    LOG(o, "mbstudy run-tool: %s: muscle equilibrium: %s\n", model, mbs_state_error(st)->message);
    goto done;
  }
  // result files
  if (mbs_make_dirs(results)) {
    LOG(o, "mbstudy run-tool: cannot create the results directory %s: %s\n", results,
        strerror(errno));
    goto done;
  }
  const int n = mbs_osim_ncoordinate(m), nz = mbs_system_nz(sys), nc = mbs_system_ncontrol(sys);
  if (n > 1024) {
    LOG(o, "mbstudy run-tool: %s: more than 1024 coordinates\n", model);
    goto done;
  }
  const int ncol = 1 + 2 * n + nz;
  char** labels = calloc((size_t)(ncol + nc + 1), sizeof(char*));
  int* rot = calloc((size_t)n + 1, sizeof(int));
  out.row = calloc((size_t)ncol, sizeof(double));
  out.drow = calloc((size_t)ncol, sizeof(double));
  out.crow = calloc((size_t)nc + 1, sizeof(double));
  int ok = labels && rot && out.row && out.drow && out.crow;
  if (ok) labels[0] = strdup("time");
  for (int i = 0; ok && i < n; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    rot[i] = c->motion == MBS_OSIM_ROTATIONAL;
    char b[600];
    snprintf(b, sizeof(b), "/jointset/%s/%s/value", c->joint, c->name);
    labels[1 + 2 * i] = strdup(b);
    snprintf(b, sizeof(b), "/jointset/%s/%s/speed", c->joint, c->name);
    labels[2 + 2 * i] = strdup(b);
  }
  for (int i = 0; ok && i < nz; i++) {
    char zn[512], b[600];
    mbs_system_z_name(sys, i, zn, sizeof(zn));
    snprintf(b, sizeof(b), "/forceset/%s", zn);
    labels[1 + 2 * n + i] = strdup(b);
  }
  char** clabels = labels + ncol;  // time, then each actuator's name
  for (int i = 0; ok && i < nc; i++) clabels[i] = strdup(mbs_force_name(sys, mbs_control_force(sys, i)));
  for (int i = 0; ok && i < ncol + nc; i++) ok = labels[i] != NULL;
  if (ok) {
    char p1[4096], p2[4096], p3[4096], nm[600];
    snprintf(p1, sizeof(p1), "%s/%s_states.sto", results, name);
    snprintf(p2, sizeof(p2), "%s/%s_states_degrees.mot", results, name);
    snprintf(p3, sizeof(p3), "%s/%s_controls.sto", results, name);
    snprintf(nm, sizeof(nm), "%s_states", name);
    out.states = mbs_sto_open(p1, nm, ncol, (const char* const*)labels, 0, &err);
    out.degrees = out.states ? mbs_sto_open(p2, nm, ncol, (const char* const*)labels, 1, &err)
                             : NULL;
    // the controls file: time, then the actuators
    const char** cl = malloc(((size_t)nc + 1) * sizeof(char*));
    if (cl && out.degrees) {
      cl[0] = "time";
      for (int i = 0; i < nc; i++) cl[1 + i] = clabels[i];
      snprintf(nm, sizeof(nm), "%s_controls", name);
      out.controls = mbs_sto_open(p3, nm, nc + 1, cl, 0, &err);
    }
    free(cl);
    ok = out.controls != NULL;
    if (!ok) LOG(o, "mbstudy run-tool: %s\n", err.message);
  } else {
    LOG(o, "mbstudy run-tool: out of memory\n");
  }
  for (int i = 0; labels && i < ncol + nc; i++) free(labels[i]);
  free(labels);
  if (!ok) {
    free(rot);
    goto done;
  }
  out.m = m;
  out.ncoord = n;
  out.nz = nz;
  out.nctl = nc;
  out.rotational = rot;
  out.t0 = ti;
  out.tf = tf;
  out.quiet = o->quiet;
  (void)precision;  // (numbers are written to full double precision)
  mbs_simulation_options so;
  mbs_simulation_options_default(&so);
  so.integrator = MBS_INTEG_RK_MERSON;
  so.integ.accuracy = accuracy;
  so.integ.max_step = max_dt;
  so.integ.min_step = min_dt;
  so.max_steps = max_steps;
  so.report_interval = 0;  // every step, as OpenSim's Manager records
  LOG(o, "mbstudy run-tool: %s '%s': %s from %g to %g s, accuracy %g%s%s\n", mbs_setup_tool(s),
      name, mbs_osim_name(m), ti, tf, accuracy, controls ? ", controls " : "",
      controls ? controls : "");
  if (!o->quiet) mbs_progress_start(&out.prog, o->log, "permille of the time", 1000);
  mbs_simulation_result res;
  const int srun = mbs_simulate(sys, st, tf, &so, NULL, 0, report, &out, &res);
  if (!o->quiet) mbs_progress_finish(&out.prog);
  const int c1 = mbs_sto_close(out.states, &err), c2 = mbs_sto_close(out.degrees, &err);
  const int c3 = mbs_sto_close(out.controls, &err);
  free(rot);
  if (srun) {
    LOG(o, "mbstudy run-tool: the simulation stopped at t = %.6g s: %s; the states up to then "
           "are in %s/%s_states.sto\n", mbs_state_time(st), mbs_state_error(st)->message,
        results, name);
  } else if (out.rc) {
    LOG(o, "mbstudy run-tool: writing results: %s\n",
        out.err.message[0] ? out.err.message : mbs_state_error(st)->message);
  } else if (c1 || c2 || c3) {
    LOG(o, "mbstudy run-tool: closing results: %s\n", err.message);
  } else {
    LOG(o, "mbstudy run-tool: wrote %s/%s_states.sto, _states_degrees.mot and _controls.sto: "
           "%ld rows, t = %g .. %g s; %ld steps (%ld rejected)\n", results, name, res.reports,
        ti, res.t_end, res.integrator.steps, res.integrator.rejected);
    rc = 0;
  }
done:
  mbs_state_destroy(st);
  mbs_osim_free(m);
  mbs_setup_free_list(fsets, nfsets);
  free(out.row);
  free(out.drow);
  free(out.crow);
  free(model);
  free(results);
  free(loads);
  free(states_file);
  free(controls);
  return rc;
}
