// The picture of a finished sensitivity study, drawn with cairo as PNG from the study's HDF5 file:
// per scalar output, Sobol' indices as a grouped bar chart (first-order S1 and total ST side by
// side with their ± confidence bounds, as SALib's `sobol.analyze` reports them; Saltelli et al.
// 2010, "Variance based sensitivity analysis of model output") or Morris' elementary effects as
// his screening plot (σ against μ*, Morris 1991, with μ* of Campolongo, Cariboni & Saltelli 2007):
// parameters far to the right matter, parameters above the dashed line σ = μ* act non-linearly or
// through interactions.
//
// What the file must hold (written by the sensitivity driver): the group /sensitivity with the
// string attribute `method` ("sobol" or "morris"), /sensitivity/parameter_names (D fixed-length
// strings) and, per scalar output <name>, the group /sensitivity/scalars/<name> with the datasets
// (D doubles each, NaN allowed)
//   sobol:  S1, S1_conf, ST, ST_conf (S2 and S2_conf, D x D, are not drawn)
//   morris: mu, mu_star, sigma, mu_star_conf (mu is not drawn).
// An output is a group below /sensitivity/scalars holding S1 (sobol) or mu_star (morris): names
// may contain '/' (bodies/rod2/position_max). Outputs are drawn in the natural order of their
// names (r2 before r10); an output group's attribute `analysis_failed` is shown in its panel
// when it has no finite values; trajectory indices (/sensitivity/trajectories) are not drawn.
//
// Layout: a header of 120 px (title, subtitle, legend), then one panel per output, at most
// MBS_SENSITIVITY_PLOT_MAX_PANELS (the first ones; the footer says how many more there are), in
// rows of `cols` panels: cols = 1 for one output, 2 for two to four, 3 beyond. A panel is
// PW = max(620, 150 + 44 D) px wide (820 at least when it is the only one, 2400 at most) and
// 470 px high; the picture is 80 + cols PW px wide and 160 + rows 470 px high, panel (r, c)
// with its top-left corner at (40 + c PW, 120 + r 470). Bars: S1 in #0072B2, ST in #D55E00
// (Okabe & Ito 2008); Morris points in that palette by parameter. Parameter names are shortened
// to their last two path segments (/bodyset/torso/mass: torso/mass).
#ifndef MBS_JOBS_SENSITIVITY_PLOT_H_
#define MBS_JOBS_SENSITIVITY_PLOT_H_

#include "mbs/status.h"

// the most outputs drawn in one picture
#define MBS_SENSITIVITY_PLOT_MAX_PANELS 12

// Draw the sensitivity indices of the study file `h5` into the PNG file `png`. MBS_ERR_IO naming
// the file when `h5` cannot be opened or `png` not written; MBS_ERR_PARSE when the file has no
// /sensitivity ("<file>: no /sensitivity: is this a sensitivity study?") or its content is not
// as described above. A file without scalar outputs gets a picture that says so. After the last
// picture, mbs_plot_cleanup (plot_util.h) releases cairo's and fontconfig's caches.
int mbs_sensitivity_plot_png(const char* h5, const char* png, mbs_error* err);

#endif  // MBS_JOBS_SENSITIVITY_PLOT_H_
