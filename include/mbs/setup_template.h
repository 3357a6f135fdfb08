// OpenSim tool setup files made from templates, for studies that run a chain of tools per
// subject and trial (the pipeline study): a template is a setup file with ${name} variables
// (${subject}, ${folder}, ...), instantiated with their values, and some of its elements set
// (where the chain reads the previous tool's output, where this one writes).
#ifndef MBS_SETUP_TEMPLATE_H_
#define MBS_SETUP_TEMPLATE_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Write `out` from `template_path`: every ${name} replaced by the value of variable `name`
// (nvars names and values; a name that is not among them fails with the template's file and
// line, naming the variables there are; "$$" is a literal "$"), then, in the tool element (the
// first element of the <OpenSimDocument>), the nset elements at paths[i] given the text
// values[i]. A path names elements below the tool by their tags, separated by '/'
// ("results_directory", "ModelScaler/output_model_file"); the last one is created when absent,
// the ones before it must exist (a path whose parent is absent is skipped: the template does
// not use that part of the tool). MBS_ERR_IO, MBS_ERR_PARSE or MBS_ERR_UNKNOWN_NAME with the
// file and line.
int mbs_setup_template_write(const char* template_path, int nvars, const char* const* names,
                             const char* const* values, int nset, const char* const* paths,
                             const char* const* set_values, const char* out, mbs_error* err);

// The trimmed text of the element at `path` below the tool element of a setup file (malloc'd),
// or NULL when absent or empty ("Unassigned" counts as empty).
char* mbs_setup_element_text(const char* setup_path, const char* path, mbs_error* err);

// The tool element's name in a setup file ("InverseKinematicsTool"), malloc'd, or NULL.
char* mbs_setup_tool_name(const char* setup_path, mbs_error* err);

#ifdef __cplusplus
}
#endif

#endif  // MBS_SETUP_TEMPLATE_H_
