// The report of a finished posture perturbation study (the OpenSim paper's §5 experiment, its
// Fig. 12): the result file's samples arranged on the study's grid of joint mode × knee flexion
// × platform direction × platform displacement, as an HDF5 group, a picture and a table. The
// grid, the group and the table are made by include/mbs/posture_table.h, the picture by
// jobs/posture_plot.h; what the study file must hold is described in include/mbs/posture_table.h.
#ifndef MBS_JOBS_POSTURE_REPORT_H_
#define MBS_JOBS_POSTURE_REPORT_H_

#include <stdio.h>

#include "mbs/status.h"

// Summarize a finished posture study: adds the group /posture to the file with the table of the
// grid, draws the picture as PNG, prints the summary and the whole table as Markdown to `table`
// and the summary alone to `summary` (either may be NULL; mbs/posture_table.h).
//
// /posture (layout in io/FORMAT.md, "Posture studies") is replaced when it exists, so the
// report can be made again. `png_path` may be NULL (no picture). Errors name the file and what
// is missing or failed, e.g. "result.h5: no /scalars/stability_index: is this a posture study?"
// (MBS_ERR_PARSE for content that is missing or not a grid, MBS_ERR_IO for files that cannot
// be opened or written). The HDF5 file must not be open elsewhere; HDF5 calls are made from the
// calling thread and print nothing.
int mbs_posture_report(const char* h5_path, const char* png_path, FILE* table, FILE* summary,
                       mbs_error* err);

// Release what cairo and fontconfig keep for the process's lifetime (fonts, configuration), so
// that leak checkers see a clean exit; call once, after the last report, before exiting.
void mbs_posture_report_cleanup(void);

#endif  // MBS_JOBS_POSTURE_REPORT_H_
