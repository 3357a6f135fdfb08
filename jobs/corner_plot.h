// The corner plot of a finished calibration study's posterior samples, drawn with cairo as PNG
// from the study's HDF5 file, as the Python package `corner` draws it (Foreman-Mackey 2016,
// "corner.py: Scatterplot matrices in Python", JOSS 1(2), 24): a lower-triangular grid of
// panels, the histogram of each parameter on the diagonal with dashed lines at its 16, 50 and
// 84 % quantiles and the title "name = median +(q84 − q50) −(q50 − q16)" above it, and below the
// diagonal the 2-D histogram of each pair of parameters as grey shades (darker = more samples),
// with the 1σ and 2σ ellipses (Mahalanobis distance 1 and 2, corner's "1σ, 2σ" levels) of the
// Gaussian with the file's posterior mean and covariance drawn over it.
//
// What the file must hold (written by the calibration driver): /calibration/parameter_names (D
// fixed-length strings), /calibration/samples (N x D doubles: the posterior samples after
// burn-in; a rank-3 steps x walkers x D dataset is read as (steps walkers) x D) and, for the
// ellipses, /calibration/mean (D) and /calibration/covariance (D x D); without mean or covariance
// the ellipses are left out. Non-finite samples are skipped, per parameter and per pair.
//
// Binning: each parameter's axis spans its 0.5 to 99.5 % sample quantiles (widened when they
// are equal); diagonal histograms have 30 bins over it, 2-D histograms k x k bins with
// k = round(sqrt(N) / 2.2) clamped to 10..30 (20 for N = 2000).
//
// Layout: the first D' = min(D, MBS_CORNER_PLOT_MAX_PARAMS) parameters (the footer says how many
// are left out) in panels of P x P px, P = 340 for D' <= 2, 300 for 3, 230 for 4 and 5, 180 for 6
// and 7, 150 beyond, 10 px apart; the picture is max(720, 170 + D' P + (D' - 1) 10) px wide and
// 270 + D' P + (D' - 1) 10 px high, the panel of row i and column j (j <= i; parameter j along x,
// parameter i along y) with its top-left corner at (130 + j (P + 10), 150 + i (P + 10)), its data
// range filling the whole panel. Colours: diagonal histograms filled #C6DBEF outlined #0072B2,
// quantile lines dashed dark grey, ellipses #D55E00 (2σ dashed), 2-D histogram bins grey with
// level 1 - 0.85 count / (largest count of the panel), empty bins white. Parameter names are
// shortened to their last two path segments (/bodyset/torso/mass: torso/mass).
#ifndef MBS_JOBS_CORNER_PLOT_H_
#define MBS_JOBS_CORNER_PLOT_H_

#include "mbs/status.h"

// the most parameters drawn in one picture
#define MBS_CORNER_PLOT_MAX_PARAMS 10

// Draw the corner plot of the study file `h5`'s posterior samples into the PNG file `png`.
// MBS_ERR_IO naming the file when `h5` cannot be opened or `png` not written; MBS_ERR_PARSE
// when the file has no /calibration ("<file>: no /calibration: is this a calibration study?"),
// no samples, or content not as described above. After the last picture, mbs_plot_cleanup
// (plot_util.h) releases cairo's and fontconfig's caches.
int mbs_corner_plot_png(const char* h5, const char* png, mbs_error* err);

#endif  // MBS_JOBS_CORNER_PLOT_H_
