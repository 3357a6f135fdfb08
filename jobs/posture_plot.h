// The picture of a finished posture study (include/mbs/posture_table.h) in the manner of Fig. 12 of
// the OpenSim paper (Seth et al. 2011), drawn with cairo as PNG: one column of panels per joint
// mode, one row per platform direction, the stability index against the platform displacement with
// one line per knee flexion, each panel with the displacement up to which each posture stands for
// the whole simulated duration and, under it, a strip of each posture's difference from the mean
// of the postures (so that postures whose indices nearly coincide stay apart); a title with the model, the fall criterion, a legend and a footer
// with the file's sample counts.
#ifndef MBS_JOBS_POSTURE_PLOT_H_
#define MBS_JOBS_POSTURE_PLOT_H_

#include "mbs/status.h"
#include "mbs/posture_table.h"

// Draw the table's picture into the PNG file `png`. MBS_ERR_IO naming the file when it cannot
// be drawn or written. After the last picture, mbs_plot_cleanup (plot_util.h) releases cairo's
// and fontconfig's caches.
int mbs_posture_plot_png(const mbs_posture_table* t, const char* png, mbs_error* err);

#endif  // MBS_JOBS_POSTURE_PLOT_H_
