// OpenSim tool setup files (ForwardTool, and the tools that join `run-tool` later): the tool
// element and its properties, read with OpenSim's conventions (empty or "Unassigned" means not
// given, file names relative to the setup file's folder), every property read marked so that
// what a tool does not use can be named in a warning.
#ifndef MBS_JOBS_SETUP_H_
#define MBS_JOBS_SETUP_H_

#include <stdio.h>

#include "mbs/files.h"
#include "mbs/status.h"

typedef struct mbs_setup mbs_setup;
typedef struct mbs_setup_node mbs_setup_node;  // an element of the file

// Read a setup file: its first element under <OpenSimDocument> (or the root itself) is the
// tool. NULL on failure, with `file:line: what is wrong` in err.
mbs_setup* mbs_setup_read(const char* path, mbs_error* err);
// The same from a document in memory (a tool's setup built from command-line flags): `label`
// stands for the file name in messages, `dir` is the folder its relative file names are
// relative to.
mbs_setup* mbs_setup_read_memory(const char* text, size_t n, const char* label, const char* dir,
                                 mbs_error* err);
void mbs_setup_free(mbs_setup* s);

const char* mbs_setup_path(const mbs_setup* s);
const char* mbs_setup_tool(const mbs_setup* s);      // the tool element's name, "ForwardTool"
const char* mbs_setup_name(const mbs_setup* s);      // its name attribute ("" if none)
mbs_setup_node* mbs_setup_root(const mbs_setup* s);  // the tool element
int mbs_setup_line(const mbs_setup_node* n);
const char* mbs_setup_kind(const mbs_setup_node* n); // the element's name
const char* mbs_setup_node_name(const mbs_setup_node* n);  // its name attribute or ""

// The child element `key` of n (marked used), or NULL.
mbs_setup_node* mbs_setup_child(mbs_setup* s, mbs_setup_node* n, const char* key);
// Text of child `key`, trimmed; NULL when absent, empty or "Unassigned".
const char* mbs_setup_string(mbs_setup* s, mbs_setup_node* n, const char* key);
// A number, integer or flag property; absent: the default. MBS_ERR_PARSE naming file, line
// and property when the text is not one.
int mbs_setup_number(mbs_setup* s, mbs_setup_node* n, const char* key, double dflt,
                     double* out, mbs_error* err);
int mbs_setup_int(mbs_setup* s, mbs_setup_node* n, const char* key, long dflt, long* out,
                  mbs_error* err);
int mbs_setup_bool(mbs_setup* s, mbs_setup_node* n, const char* key, int dflt, int* out,
                   mbs_error* err);
// A file property resolved against the setup file's folder (malloc'd), or NULL when not given.
char* mbs_setup_file(mbs_setup* s, mbs_setup_node* n, const char* key);
// A file name resolved against the setup file's folder (malloc'd).
char* mbs_setup_resolve(const mbs_setup* s, const char* name);
// The i-th item of a set property (<key><objects>items</objects></key>, or items directly
// under <key>), or NULL past the last. key NULL: the items of n itself (the tool when n is
// NULL), e.g. a set read from its own file.
mbs_setup_node* mbs_setup_item(mbs_setup* s, mbs_setup_node* n, const char* key, int i);
// The attribute `attr` of n (e.g. OpenSim's file="..." of an object kept in a file of its own),
// trimmed; NULL when absent or empty.
const char* mbs_setup_attribute(const mbs_setup_node* n, const char* attr);
// Mark every element under n used (a property read as a whole).
void mbs_setup_mark_all(mbs_setup* s, mbs_setup_node* n);

// Warn, on `out`, about the tool's properties never read: `file:line: <key>: not used by
// mbstudy's <tool>; ignored`. Returns how many.
int mbs_setup_warn_unused(const mbs_setup* s, FILE* out);
// The same for the elements directly under n (a nested object such as ScaleTool's ModelScaler).
int mbs_setup_warn_unused_in(const mbs_setup* s, const mbs_setup_node* n, FILE* out);

// What the tools share (and mbs_make_dirs in mbs/files.h):
// The file names of a list property (OpenSim's force_set_files: names separated by white
// space) resolved against the setup's folder: a malloc'd array of *n malloc'd strings (NULL
// and *n = 0 when the property is absent or empty; free with mbs_setup_free_list).
char** mbs_setup_file_list(mbs_setup* s, mbs_setup_node* n, const char* key, int* count);
void mbs_setup_free_list(char** list, int count);
// The controls file of a tool's ControllerSet (a ControlSetController's controls_file), or
// `given` (an older setup's controls_file) when there is one: a malloc'd name, or NULL. On `log`
// it warns about a second controls file, an actuator_list that is not applied and controllers
// that are not run. The ControllerSet is marked used.
char* mbs_setup_tool_controls(mbs_setup* s, const char* given, FILE* log);

#endif  // MBS_JOBS_SETUP_H_
