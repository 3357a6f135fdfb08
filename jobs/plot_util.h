// What the pictures of jobs/ (posture_plot.c, sensitivity_plot.c, corner_plot.c) draw alike with
// cairo: text (fonts, widths, alignment, names cut to a width), axis steps of 1, 2 or 5 times a
// power of ten and their labels, grid lines on a data-to-pixel frame, markers, the colour-blind
// safe palette of Okabe & Ito (2008, "Color Universal Design"), writing the PNG and releasing
// cairo's and fontconfig's caches; and opening a study file and reading its parameter names for
// a picture (through include/mbs/results.h). Not part of the public API.
#ifndef MBS_JOBS_PLOT_UTIL_H_
#define MBS_JOBS_PLOT_UTIL_H_

#include <cairo.h>
#include <stddef.h>

#include "mbs/results.h"
#include "mbs/status.h"

// Okabe & Ito's eight colours as RGB in 0..1, darkest first; yellow last (weak on white):
// blue, vermillion, bluish green, reddish purple, orange, sky blue, black, yellow.
extern const double mbs_plot_palette[8][3];

// ------------------------------------------------------------------------------------------
// text

// Select the sans-serif font of `size` px, bold when `bold`.
void mbs_plot_font(cairo_t* cr, double size, int bold);
// Select the font of `size` px, made smaller by `step` while s is wider than maxw, down to `least`.
void mbs_plot_font_to_fit(cairo_t* cr, const char* s, double maxw, double size, double least,
                          double step, int bold);
// The advance width of s in the current font.
double mbs_plot_text_width(cairo_t* cr, const char* s);
// Draw s with its baseline at y; halign 0 left, 0.5 centre, 1 right of x. Returns its width.
double mbs_plot_text(cairo_t* cr, double x, double y, const char* s, double halign);
// Draw s rotated a quarter turn counter-clockwise, centred on (x, y).
void mbs_plot_text_vertical(cairo_t* cr, double x, double y, const char* s);
// s cut (at a UTF-8 character boundary, with "…") to at most maxw wide, into buf[n]; returns buf.
const char* mbs_plot_fit(cairo_t* cr, const char* s, double maxw, char* buf, size_t n);

// ------------------------------------------------------------------------------------------
// axes

// A step of 1, 2 or 5 times a power of ten near span / k.
double mbs_plot_nice_step(double span, double k);
// A tick value as text (%.6g), without "-0" and without rounding noise near zero; returns buf.
const char* mbs_plot_tick_text(double v, double step, char* buf, size_t n);

// A data-to-pixel frame: data (u0..u1 along x, v0..v1 along y) onto the pixels x0..x1, y1..y0
// (y0 the top).
typedef struct mbs_plot_frame {
  double x0, x1, y0, y1;
  double u0, u1, v0, v1;
} mbs_plot_frame;

// The pixel column of u and the pixel row of v.
double mbs_plot_fx(const mbs_plot_frame* F, double u);
double mbs_plot_fy(const mbs_plot_frame* F, double v);

// How grid lines and their labels look (the labels dark grey, 0.2).
typedef struct mbs_plot_grid_style {
  double font;                 // the labels' size, px
  double grey;                 // grey level of the grid lines
  double tick;                 // length of the ticks below the frame (x)
  double ylabel_dx, ylabel_dy; // y labels end dx left of the frame, baseline dy below their line
  double xlabel_dy;            // x labels' baseline below the frame
} mbs_plot_grid_style;

// Horizontal grid lines with their labels at the multiples of `step` in v0..v1.
void mbs_plot_grid_y(cairo_t* cr, const mbs_plot_frame* F, double step,
                     const mbs_plot_grid_style* s);
// Vertical grid lines with ticks and labels at the multiples of `step` in u0..u1.
void mbs_plot_grid_x(cairo_t* cr, const mbs_plot_frame* F, double step,
                     const mbs_plot_grid_style* s);
// The frame's outline, grey, 1 px on whole pixels.
void mbs_plot_frame_box(cairo_t* cr, const mbs_plot_frame* F);

// ------------------------------------------------------------------------------------------
// colours and markers

// The source colour rgb[3].
void mbs_plot_rgb(cairo_t* cr, const double* rgb);
// A filled marker of radius about r at (x, y) outlined in white: shape % 4 picks a circle, a
// square, a triangle or a diamond.
void mbs_plot_marker(cairo_t* cr, int shape, double x, double y, double r, const double rgb[3]);

// ------------------------------------------------------------------------------------------
// files

// Open the study file `h5` for drawing the picture `png` of `what` ("sensitivity plot"): NULL
// with MBS_ERR_ARGUMENT when either name is missing, MBS_ERR_IO naming the file when it cannot be
// opened (with the system's reason when it does not exist).
mbs_results* mbs_plot_open(const char* what, const char* h5, const char* png, mbs_error* err);
// Close the study file r read with the status rc: rc, or the closing's error when rc is MBS_OK
// (err keeps the first error).
int mbs_plot_close(mbs_results* r, int rc, mbs_error* err);
// The last two segments of a path-like name ("/bodyset/torso/mass": "torso/mass"), a new string.
char* mbs_plot_short_name(const char* s);
// Read the string dataset `name` of the study file `path` (open as r) as names shortened by
// mbs_plot_short_name: *out a NULL-terminated array of *n new strings (mbs_plot_free_names). A
// missing dataset is MBS_ERR_PARSE "<path>: no <name>: <hint>".
int mbs_plot_read_names(mbs_results* r, const char* path, const char* name, const char* hint,
                        char*** out, int* n, mbs_error* err);
// Free a NULL-terminated array of strings (NULL: nothing).
void mbs_plot_free_names(char** v);

// Write the picture drawn with cr on surf to the PNG file `png`; destroys cr and surf.
// MBS_ERR_IO naming the file when it cannot be drawn or written.
int mbs_plot_write_png(cairo_t* cr, cairo_surface_t* surf, const char* png, mbs_error* err);

// Release what cairo and fontconfig keep for the process's lifetime (fonts, configuration), so
// that leak checkers see a clean exit; call once, after the last picture, before exiting.
void mbs_plot_cleanup(void);

#endif  // MBS_JOBS_PLOT_UTIL_H_
