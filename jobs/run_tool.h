// `mbstudy run-tool SETUP.xml`: run an OpenSim tool setup file as OpenSim does. The setup's
// tool element picks the tool from a table (one entry per OpenSim tool: its element name and
// the function that runs it); each tool reads its properties through setup.h, names what it
// does not use in warnings, and writes OpenSim's result files.
#ifndef MBS_JOBS_RUN_TOOL_H_
#define MBS_JOBS_RUN_TOOL_H_

#include <stdio.h>

#include "mbs/osim.h"
#include "setup.h"

#define MBS_TOOL_MAX_RENAMES 16
typedef struct mbs_tool_options {
  const char* results_dir;  // replaces the setup's results_directory (NULL: the setup's)
  int quiet;                // no progress
  FILE* log;                // messages and warnings (stderr)
  // --rename-type OLD=NEW: the model's forces of class OLD read as class NEW (OpenSim's
  // Object::renameType); pairs (old, new)
  const char* rename_types[2 * MBS_TOOL_MAX_RENAMES];
  int nrename_types;
  // parameter values of the models the tool reads other than their files' (a pipeline
  // study's draws; mbs_osim_options.param_values)
  const mbs_osim_param_value* param_values;
  int nparam_values;
} mbs_tool_options;

typedef struct mbs_tool {
  const char* element;      // the setup file's tool element, e.g. "ForwardTool"
  const char* summary;      // one line for the usage text
  // run it; 0 on success, 1 on failure (the message printed on o->log)
  int (*run)(mbs_setup* s, const mbs_tool_options* o);
} mbs_tool;

// the tools run-tool knows, ended by an entry with a NULL element
extern const mbs_tool mbs_tools[];

// argv starts after "run-tool"
int mbs_cmd_run_tool(int argc, char** argv);
// Run a setup file with the tool its element names; 0 on success, 1 on failure (the message
// on o->log).
int mbs_run_tool_setup(const char* setup, const mbs_tool_options* o);
// The same without progress, for a study's chain of tools (mbs_study_options.run_tool).
int mbs_run_tool_quietly(void* user, const char* setup, const char* results_dir,
                         const mbs_osim_param_value* params, int nparams, FILE* log);

// the tools (one file each)
int mbs_tool_forward(mbs_setup* s, const mbs_tool_options* o);
int mbs_tool_inverse_kinematics(mbs_setup* s, const mbs_tool_options* o);
int mbs_tool_inverse_dynamics(mbs_setup* s, const mbs_tool_options* o);
int mbs_tool_scale(mbs_setup* s, const mbs_tool_options* o);
int mbs_tool_analyze(mbs_setup* s, const mbs_tool_options* o);

#endif  // MBS_JOBS_RUN_TOOL_H_
