// OpenSim's AnalyzeTool (run_tool.h): the analyses of the setup's AnalysisSet (analyze.h; one
// file each) run over a model's states, read from a setup file with OpenSim 4's properties:
//   model_file, replace_force_set (default false, as the AnalyzeTool's), force_set_files,
//   results_directory, initial_time, final_time, solve_for_equilibrium_for_auxiliary_states,
//   AnalysisSet, ControllerSet (ControlSetControllers' controls files) or the older
//   controls_file, external_loads_file, states_file, or coordinates_file with speeds_file and
//   lowpass_cutoff_frequency_for_coordinates (include/mbs/analyze_states.h).
// The integrator settings of the setup (AbstractTool's) mean nothing to this tool and are read
// without a warning; output_precision is read too, and numbers are written to full double
// precision. Each analysis writes <results_directory>/<name>_<analysis name>_<suffix>.sto.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "mbs/analyze_states.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "progress.h"
#include "run_tool.h"

#define LOG(log, ...) fprintf((log), "mbstudy run-tool: " __VA_ARGS__)

static void warn_cb(void* user, const char* msg) {
  fprintf((FILE*)user, "mbstudy run-tool: warning: %s\n", msg);
}

// a file a setup names must be readable: `setup:line: <key> path: reason`
static int check_file(mbs_setup* s, const char* key, const char* path, FILE* log) {
  if (!path || !access(path, R_OK)) return 0;
  mbs_setup_node* n = mbs_setup_child(s, NULL, key);
  LOG(log, "%s:%d: <%s> %s: %s\n", mbs_setup_path(s), n ? mbs_setup_line(n) : 0, key, path,
      strerror(errno));
  return 1;
}

int mbs_tool_analyze(mbs_setup* s, const mbs_tool_options* o) {
  FILE* log = o->log ? o->log : stderr;
  mbs_error err;
  mbs_error_clear(&err);
  const char* path = mbs_setup_path(s);
  const char* name = mbs_setup_name(s);
  char* model = mbs_setup_file(s, NULL, "model_file");
  const char* rdir = mbs_setup_string(s, NULL, "results_directory");
  char* results = o->results_dir ? strdup(o->results_dir) : mbs_setup_resolve(s, rdir ? rdir : ".");
  char* loads = mbs_setup_file(s, NULL, "external_loads_file");
  char* states_file = mbs_setup_file(s, NULL, "states_file");
  char* coords = mbs_setup_file(s, NULL, "coordinates_file");
  char* speeds = mbs_setup_file(s, NULL, "speeds_file");
  char* controls = mbs_setup_file(s, NULL, "controls_file");  // (older setups)
  char** fsets = NULL;
  int nfsets = 0, rc = 1, nan = 0;
  mbs_osim_model* m = NULL;
  mbs_state* st = NULL;
  mbs_table* states = NULL;
  mbs_analysis** an = NULL;
  double ti, tf, dummy, lowpass;
  long precision, ldummy;
  int equilibrate, replace;
  if (mbs_setup_number(s, NULL, "initial_time", 0, &ti, &err) ||
      mbs_setup_number(s, NULL, "final_time", 1, &tf, &err) ||
      mbs_setup_number(s, NULL, "lowpass_cutoff_frequency_for_coordinates", -1, &lowpass, &err) ||
      mbs_setup_int(s, NULL, "output_precision", 8, &precision, &err) ||
      mbs_setup_bool(s, NULL, "solve_for_equilibrium_for_auxiliary_states", 0, &equilibrate,
                     &err) ||
      mbs_setup_bool(s, NULL, "replace_force_set", 0, &replace, &err) ||
      // an AbstractTool's integrator settings: nothing is integrated here
      mbs_setup_int(s, NULL, "maximum_number_of_integrator_steps", 0, &ldummy, &err) ||
      mbs_setup_number(s, NULL, "maximum_integrator_step_size", 0, &dummy, &err) ||
      mbs_setup_number(s, NULL, "minimum_integrator_step_size", 0, &dummy, &err) ||
      mbs_setup_number(s, NULL, "integrator_error_tolerance", 0, &dummy, &err)) {
    LOG(log, "%s\n", err.message);
    goto done;
  }
  (void)precision;
  mbs_setup_mark_all(s, mbs_setup_child(s, NULL, "defaults"));  // (OpenSim 2 setups' templates)
  if (!model) {
    LOG(log, "%s:%d: <%s> has no <model_file>\n", path, mbs_setup_line(mbs_setup_root(s)),
        mbs_setup_tool(s));
    goto done;
  }
  if (!states_file && !coords) {
    LOG(log, "%s:%d: <%s> has neither a <states_file> nor a <coordinates_file>: one of them "
             "gives the states to analyze\n", path, mbs_setup_line(mbs_setup_root(s)),
        mbs_setup_tool(s));
    goto done;
  }
  if (states_file && (coords || speeds)) {
    LOG(log, "warning: %s: <%s> is ignored since <states_file> is given, as OpenSim does\n",
        path, coords ? "coordinates_file" : "speeds_file");
    free(coords);
    free(speeds);
    coords = speeds = NULL;
  }
  if (!(tf >= ti)) {
    LOG(log, "%s:%d: final_time %g is before initial_time %g\n", path,
        mbs_setup_line(mbs_setup_child(s, NULL, "final_time")), tf, ti);
    goto done;
  }
  if (check_file(s, "model_file", model, log) || check_file(s, "states_file", states_file, log) ||
      check_file(s, "coordinates_file", coords, log) || check_file(s, "speeds_file", speeds, log) ||
      check_file(s, "external_loads_file", loads, log) ||
      check_file(s, "controls_file", controls, log))
    goto done;
  fsets = mbs_setup_file_list(s, NULL, "force_set_files", &nfsets);
  {  // the ControllerSet's controls file (or the older setups' controls_file)
    char* c = mbs_setup_tool_controls(s, controls, log);
    const int missing = c && (!controls || strcmp(c, controls)) && access(c, R_OK);
    free(controls);
    controls = c;
    if (missing) {
      LOG(log, "%s: ControllerSet: <controls_file> %s: %s\n", path, c, strerror(errno));
      goto done;
    }
  }
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
    LOG(log, "%s\n", err.message);
    goto done;
  }
  for (int i = 0; i < mbs_osim_nwarning(m); i++) LOG(log, "warning: %s\n", mbs_osim_warning(m, i));
  const mbs_system* sys = mbs_osim_system(m);
  // the states a file does not give: the model's defaults with the fiber states its file gives
  // (OpenSim's initSystem)
  st = mbs_state_create(sys);
  if (!st || mbs_osim_default_state(m, st)) {
    LOG(log, "%s: default state: %s\n", model, st ? mbs_state_error(st)->message : "out of memory");
    goto done;
  }
  mbs_osim_file_auxiliary_states(m, st);
  {
    mbs_analyze_states_options so;
    mbs_analyze_states_options_default(&so);
    so.states_file = states_file;
    so.coordinates_file = coords;
    so.speeds_file = speeds;
    so.lowpass_hz = lowpass;
    so.warn = warn_cb;
    so.warn_user = log;
    if (mbs_analyze_states_read(m, st, &so, &states, &err)) {
      LOG(log, "%s\n", err.message);
      goto done;
    }
  }
  // the rows: Storage::findIndex of initial_time and final_time
  const double first = mbs_table_get(states, 0, 0);
  const double last = mbs_table_get(states, states->nrow - 1, 0);
  const char* sfile = states_file ? states_file : coords;
  if (tf < first || ti > last) {
    LOG(log, "%s: initial_time %g to final_time %g lies outside the states of %s (%g to %g s)\n",
        path, ti, tf, sfile, first, last);
    goto done;
  }
  mbs_analyze_context c = {.setup = s,
                           .model = m,
                           .sys = sys,
                           .states = states,
                           .first_row = mbs_analyze_states_find(states, ti),
                           .last_row = mbs_analyze_states_find(states, tf),
                           .initial_time = ti,
                           .final_time = tf,
                           .log = log};
  const double slack = 1e-9 * (last - first) / (states->nrow > 1 ? states->nrow - 1 : 1);
  if (ti < first - slack || tf > last + slack)
    LOG(log, "warning: %s: initial_time %g to final_time %g extends past the states of %s (%g to "
             "%g s); the analyses run from %g to %g s, as OpenSim's\n", path, ti, tf, sfile,
        first, last, mbs_table_get(states, c.first_row, 0), mbs_table_get(states, c.last_row, 0));
  // the analyses, in setup order
  int nan_cap = 0;
  for (int i = 0;; i++) {
    mbs_setup_node* a = mbs_setup_item(s, NULL, "AnalysisSet", i);
    if (!a) break;
    if (nan == nan_cap) {
      nan_cap = nan_cap ? 2 * nan_cap : 8;
      mbs_analysis** g = realloc(an, (size_t)nan_cap * sizeof(*an));
      if (!g) {
        LOG(log, "out of memory\n");
        goto done;
      }
      an = g;
    }
    if (!(an[nan] = mbs_analysis_create(&c, a))) goto done;
    nan++;
  }
  mbs_setup_child(s, NULL, "AnalysisSet");
  mbs_setup_warn_unused(s, log);
  int non = 0;
  for (int i = 0; i < nan; i++) non += mbs_analysis_on(an[i]);
  if (non == 0) {
    LOG(log, "%s: the AnalysisSet has no analysis that is on; nothing to do (OpenSim stops "
             "so too)\n", path);
    goto done;
  }
  // the rows
  const int nrow = c.last_row - c.first_row + 1;
  if (!o->quiet)
    LOG(log, "%s '%s': %s, %d analyses, %d rows of %s from %g to %g s%s\n", mbs_setup_tool(s),
        name, mbs_osim_name(m), non, nrow, sfile, mbs_table_get(states, c.first_row, 0),
        mbs_table_get(states, c.last_row, 0),
        equilibrate ? ", muscles equilibrated at each row" : "");
  mbs_progress prog;
  if (!o->quiet) mbs_progress_start(&prog, log, "rows", nrow);
  int nfail_eq = 0, failed = 0;
  const double t_start = mbs_wall_seconds();
  for (int r = c.first_row; r <= c.last_row && !failed; r++) {
    const double t = mbs_table_get(states, r, 0);
    if (mbs_analyze_states_set(m, st, states, r)) {
      LOG(log, "%s: the states at t = %.9g s: %s\n", sfile, t, mbs_state_error(st)->message);
      failed = 1;
      break;
    }
    if (equilibrate && mbs_equilibrate_muscles(sys, st) && nfail_eq++ < 5)
      LOG(log, "warning: muscle equilibrium at t = %.9g s: %s; the muscles keep the states' "
               "values (OpenSim warns and goes on too)\n", t, mbs_state_error(st)->message);
    if (mbs_realize_velocity(sys, st)) {
      LOG(log, "%s: the states at t = %.9g s: %s\n", sfile, t, mbs_state_error(st)->message);
      failed = 1;
      break;
    }
    for (int i = 0; i < nan && !failed; i++) failed = mbs_analysis_step(&c, an[i], r, st);
    if (!o->quiet) mbs_progress_update(&prog, r - c.first_row + 1);
  }
  if (!o->quiet) mbs_progress_finish(&prog);
  const double elapsed = mbs_wall_seconds() - t_start;
  if (nfail_eq > 5)
    LOG(log, "warning: muscle equilibrium failed at %d rows in all\n", nfail_eq);
  if (failed) goto done;
  // the results
  for (int i = 0; i < nan; i++)
    if (mbs_analysis_write(&c, an[i], results, name, o->quiet)) goto done;
  LOG(log, "%s '%s': %d rows, t = %.8g .. %.8g s, analyzed in %.3g s; results in %s\n",
      mbs_setup_tool(s), name, nrow, mbs_table_get(states, c.first_row, 0),
      mbs_table_get(states, c.last_row, 0), elapsed, results);
  rc = 0;
done:
  for (int i = 0; i < nan; i++) mbs_analysis_free(an[i]);
  free(an);
  mbs_table_free(states);
  mbs_state_destroy(st);
  mbs_osim_free(m);
  mbs_setup_free_list(fsets, nfsets);
  free(model);
  free(results);
  free(loads);
  free(states_file);
  free(coords);
  free(speeds);
  free(controls);
  return rc;
}
