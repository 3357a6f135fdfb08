// `mbstudy run-tool SETUP.xml` (run_tool.h).
#include "run_tool.h"

#include <stdlib.h>
#include <string.h>

const mbs_tool mbs_tools[] = {
    {"ForwardTool", "forward simulation of a model under its controls (OpenSim's forward tool)",
     mbs_tool_forward},
    {"InverseKinematicsTool", "inverse kinematics from markers", mbs_tool_inverse_kinematics},
    {"InverseDynamicsTool", "inverse dynamics (OpenSim's ID tool)", mbs_tool_inverse_dynamics},
    {"ScaleTool", "model scaling to a subject (OpenSim's scale tool)", mbs_tool_scale},
    {"AnalyzeTool", "analyses of a model's states (OpenSim's analyze tool)", mbs_tool_analyze},
    {NULL, NULL, NULL},
};

static void usage(FILE* f) {
  fprintf(f, "usage: mbstudy run-tool SETUP.xml [--results DIR] [--rename-type OLD=NEW]... "
             "[--quiet]\n"
             "  runs an OpenSim tool setup file; paths in it are relative to its folder\n"
             "  --rename-type OLD=NEW  read the model's forces of class OLD as class NEW, as\n"
             "      OpenSim's Object::renameType (e.g. Thelen2003Muscle=Thelen2003Muscle_"
             "Deprecated,\n"
             "      the muscle model OpenSim 2 models were made with)\n"
             "  tools:\n");
  for (const mbs_tool* t = mbs_tools; t->element; t++)
    fprintf(f, "    %-14s %s\n", t->element, t->summary);
}

int mbs_cmd_run_tool(int argc, char** argv) {
  const char* setup = NULL;
  mbs_tool_options o;
  memset(&o, 0, sizeof(o));
  o.log = stderr;
  for (int i = 0; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--quiet")) {
      o.quiet = 1;
    } else if (!strcmp(a, "--results") && i + 1 < argc) {
      o.results_dir = argv[++i];
    } else if (!strcmp(a, "--rename-type") && i + 1 < argc) {
      char* pair = argv[++i];
      char* eq = strchr(pair, '=');
      if (!eq || eq == pair || !eq[1] || strchr(eq + 1, '=')) {
        fprintf(stderr, "mbstudy run-tool: --rename-type takes OLD=NEW (two class names), got "
                        "'%s'\n", pair);
        return 2;
      }
      if (o.nrename_types == MBS_TOOL_MAX_RENAMES) {
        fprintf(stderr, "mbstudy run-tool: at most %d --rename-type options\n",
                MBS_TOOL_MAX_RENAMES);
        return 2;
      }
      *eq = 0;
      o.rename_types[2 * o.nrename_types] = pair;
      o.rename_types[2 * o.nrename_types + 1] = eq + 1;
      o.nrename_types++;
    } else if (a[0] != '-' && !setup) {
      setup = a;
    } else {
      fprintf(stderr, "mbstudy run-tool: unknown option or missing value: '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!setup) {
    usage(stderr);
    return 2;
  }
  return mbs_run_tool_setup(setup, &o);
}

int mbs_run_tool_setup(const char* setup, const mbs_tool_options* o) {
  mbs_error err;
  mbs_error_clear(&err);
  mbs_setup* s = mbs_setup_read(setup, &err);
  if (!s) {
    fprintf(o->log, "mbstudy run-tool: %s\n", err.message);
    return 1;
  }
  const mbs_tool* tool = NULL;
  for (const mbs_tool* t = mbs_tools; t->element && !tool; t++)
    if (!strcmp(t->element, mbs_setup_tool(s))) tool = t;
  if (!tool) {
    fprintf(o->log, "mbstudy run-tool: %s:%d: <%s> is not a tool mbstudy runs (", setup,
            mbs_setup_line(mbs_setup_root(s)), mbs_setup_tool(s));
    for (const mbs_tool* t = mbs_tools; t->element; t++)
      fprintf(o->log, "%s%s", t == mbs_tools ? "" : ", ", t->element);
    fprintf(o->log, ")\n");
    mbs_setup_free(s);
    return 1;
  }
  const int rc = tool->run(s, o);
  mbs_setup_free(s);
  return rc;
}

int mbs_run_tool_quietly(void* user, const char* setup, const char* results_dir,
                         const mbs_osim_param_value* params, int nparams, FILE* log) {
  (void)user;
  mbs_tool_options o;
  memset(&o, 0, sizeof(o));
  o.results_dir = results_dir;
  o.quiet = 1;
  o.log = log;
  o.param_values = params;
  o.nparam_values = nparams;
  return mbs_run_tool_setup(setup, &o);
}
