// The analyses of `mbstudy run-tool`'s AnalyzeTool (tool_analyze.c), one file each
// (analysis_<name>.c), run as OpenSim's AnalysisSet runs them.
//
// ADDING AN ANALYSIS: a file analysis_<name>.c that defines
//     const mbs_analysis_type mbs_analysis_<name> = {"<SetupElement>", "one line", create,
//                                                    begin, record, finish, destroy};
// a line X(<name>) in MBS_ANALYSES (analyze.c), and the file's name in jobs/CMakeLists.txt.
// Nothing else: the tool finds it by its setup element, reads the properties every analysis
// has, steps it through the rows and writes its tables.
//
// HOW THE TOOL RUNS ANALYSES (AnalyzeTool::run, AnalysisSet::begin/step/end):
//  - the model is read with the setup's force sets, controllers and external loads; the states
//    table (include/mbs/analyze_states.h: time, coordinates, speeds, auxiliary states) from the
//    states_file or the coordinates_file;
//  - each analysis of the AnalysisSet is created in setup order: `create` reads its own
//    properties from its element (mbs_analysis_node; read them with setup.h's functions so that
//    the ones it does not read are named in warnings) and declares its result tables
//    (mbs_analysis_add_table). The framework reads the properties every OpenSim analysis has:
//    on (default true; an analysis that is off is neither run nor written), in_degrees (default
//    true; mbs_analysis_in_degrees), step_interval (default 1), start_time and end_time (read,
//    and, as in OpenSim 4, not applied: a warning says so when they would cut the rows);
//  - for each row i of the states table from the row at or before initial_time to the row at
//    or before final_time (Storage::findIndex): the State is set to the row, assembled when the
//    model has constraints, its muscles equilibrated when solve_for_equilibrium_for_auxiliary_
//    states is true, and realized to Velocity. Each analysis that is on then records the row
//    when i is the first or the last row or i % step_interval == 0 (i counts the states table's
//    rows from 0, as OpenSim's step numbers do): the framework appends a row (time filled, the
//    rest NaN) to every table of the analysis and calls `record`, which fills them
//    (mbs_analysis_row). `begin` (optional) runs once, just before the first `record`;
//  - after the last row `finish` (optional) runs, then the tables are written as OpenSim's
//    Storage::printResult writes them: <results_directory>/<tool name>_<analysis name>_<suffix>
//    .sto, version 1 header (the table's title, inDegrees, its description lines).
//
// RULES FOR AN ANALYSIS: `record` may realize the State further (Dynamics, Acceleration) but
// must not change its variables (later analyses of the row see the same State); an analysis
// that must change them (controls, overridden forces) copies the State into one of its own
// (mbs_state_create, mbs_state_copy). Callbacks return 0, or non-zero after printing the
// reason with mbs_analysis_fail (which names the setup file, the line and the analysis); the
// tool then stops. Warnings go through mbs_analysis_warn. Everything an analysis allocates
// lives in its data, freed by `destroy` (called even when `create` fails, with what it set).
#ifndef MBS_JOBS_ANALYZE_H_
#define MBS_JOBS_ANALYZE_H_

#include <stdio.h>

#include "mbs/osim.h"
#include "mbs/state.h"
#include "mbs/table.h"
#include "setup.h"

// What every analysis sees: the setup, the model and the rows (read-only).
typedef struct mbs_analyze_context {
  mbs_setup* setup;              // the setup file (its properties, file name for messages)
  const mbs_osim_model* model;   // the model with the tool's forces, controls and loads
  const mbs_system* sys;         // mbs_osim_system(model)
  const mbs_table* states;       // the states table (include/mbs/analyze_states.h)
  int first_row, last_row;       // the rows the tool steps through
  double initial_time, final_time;  // the setup's
  FILE* log;                     // messages and warnings
} mbs_analyze_context;

typedef struct mbs_analysis mbs_analysis;  // one analysis of the setup (framework-owned)

typedef struct mbs_analysis_type {
  const char* element;  // the setup element, e.g. "Kinematics"
  const char* summary;  // one line for the usage text
  // read the analysis's properties and declare its tables; *data is the analysis's own
  int (*create)(const mbs_analyze_context* c, mbs_analysis* a, void** data);
  // optional: once, before the first record
  int (*begin)(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st);
  // fill the current row of every table for the State (realized to Velocity)
  int (*record)(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st);
  // optional: after the last row, before the tables are written
  int (*finish)(const mbs_analyze_context* c, mbs_analysis* a, void* data);
  void (*destroy)(void* data);  // may be NULL; called with NULL data too
} mbs_analysis_type;

// the analyses run-tool knows, ended by NULL (analyze.c)
extern const mbs_analysis_type* const mbs_analysis_types[];
const mbs_analysis_type* mbs_analysis_type_find(const char* element);

// The analysis's setup element, its name attribute ("" when it has none: OpenSim then writes
// <tool>__<suffix>.sto) and its common properties.
mbs_setup_node* mbs_analysis_node(const mbs_analysis* a);
const char* mbs_analysis_name(const mbs_analysis* a);
const char* mbs_analysis_kind(const mbs_analysis* a);  // the element, e.g. "Kinematics"
int mbs_analysis_in_degrees(const mbs_analysis* a);

// Declare a result table: written as <tool>_<name>_<suffix>.sto with `title` as the storage's
// name line, inDegrees=yes when in_degrees, the lines of `description` (blank ones dropped) in
// its header and columns time, labels[0..nlabels-1]. Returns the table's index, or -1 (out of
// memory, message printed).
int mbs_analysis_add_table(const mbs_analyze_context* c, mbs_analysis* a, const char* suffix,
                           const char* title, const char* description, int in_degrees,
                           int nlabels, const char* const* labels);
int mbs_analysis_ntable(const mbs_analysis* a);
// In record: the current row of table `table` (nlabels values after its time, NaN until set).
double* mbs_analysis_row(mbs_analysis* a, int table);

// Print `mbstudy run-tool: <setup>:<line>: <Kind> '<name>': <message>` (line: node's, or the
// analysis's when node is NULL) and return 1.
int mbs_analysis_fail(const mbs_analyze_context* c, const mbs_analysis* a,
                      const mbs_setup_node* node, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// The same as a warning.
void mbs_analysis_warn(const mbs_analyze_context* c, const mbs_analysis* a,
                       const mbs_setup_node* node, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// Words of a list property (<joint_names> knee hip </joint_names>) into *words (malloc'd
// array of pointers into *buf, also malloc'd; free both). 0 on success, -1 out of memory.
int mbs_analysis_words(mbs_setup* s, mbs_setup_node* n, const char* key, char*** words,
                       char** buf, int* nwords);

// ---- used by the tool (tool_analyze.c) ----------------------------------------------------
// Create the analysis of setup element `node` (NULL with a printed message when it fails or is
// unknown). The common properties are read here.
mbs_analysis* mbs_analysis_create(const mbs_analyze_context* c, mbs_setup_node* node);
void mbs_analysis_free(mbs_analysis* a);
int mbs_analysis_on(const mbs_analysis* a);
// Record row `row` (the State set to it) when the stepping rule says so; 0 or 1 (failed).
int mbs_analysis_step(const mbs_analyze_context* c, mbs_analysis* a, int row, mbs_state* st);
int mbs_analysis_nrow(const mbs_analysis* a);  // rows recorded
// finish, then write the tables into `dir` for tool name `base`; the paths written are
// printed on c->log unless quiet. 0 or 1.
int mbs_analysis_write(const mbs_analyze_context* c, mbs_analysis* a, const char* dir,
                       const char* base, int quiet);

#endif  // MBS_JOBS_ANALYZE_H_
