// `mbstudy run-tool SETUP.xml` (run_tool.h).
#include "run_tool.h"

#include <stdlib.h>
#include <string.h>

const mbs_tool mbs_tools[] = {
    {"ForwardTool", "forward simulation of a model under its controls (OpenSim's forward tool)",
     mbs_tool_forward},
    {NULL, NULL, NULL},
};

static void usage(FILE* f) {
  fprintf(f, "usage: mbstudy run-tool SETUP.xml [--results DIR] [--quiet]\n"
             "  runs an OpenSim tool setup file; paths in it are relative to its folder\n"
             "  tools:\n");
  for (const mbs_tool* t = mbs_tools; t->element; t++)
    fprintf(f, "    %-14s %s\n", t->element, t->summary);
}

int mbs_cmd_run_tool(int argc, char** argv) {
  const char* setup = NULL;
  mbs_tool_options o = {NULL, 0, stderr};
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
  mbs_error err;
  mbs_error_clear(&err);
  mbs_setup* s = mbs_setup_read(setup, &err);
  if (!s) {
    fprintf(stderr, "mbstudy run-tool: %s\n", err.message);
    return 1;
  }
  const mbs_tool* tool = NULL;
  for (const mbs_tool* t = mbs_tools; t->element && !tool; t++)
    if (!strcmp(t->element, mbs_setup_tool(s))) tool = t;
  if (!tool) {
    fprintf(stderr, "mbstudy run-tool: %s:%d: <%s> is not a tool mbstudy runs (", setup,
            mbs_setup_line(mbs_setup_root(s)), mbs_setup_tool(s));
    for (const mbs_tool* t = mbs_tools; t->element; t++)
      fprintf(stderr, "%s%s", t == mbs_tools ? "" : ", ", t->element);
    fprintf(stderr, ")\n");
    mbs_setup_free(s);
    return 1;
  }
  const int rc = tool->run(s, &o);
  mbs_setup_free(s);
  return rc;
}
