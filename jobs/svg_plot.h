// Line charts written as SVG, for results a person can open in any browser.
#ifndef MBS_JOBS_SVG_PLOT_H_
#define MBS_JOBS_SVG_PLOT_H_

#include "mbs/status.h"

typedef struct svg_series {
  const char* label;
  const double* x;
  const double* y;
  int n;
  const char* color;  // CSS color
} svg_series;

typedef struct svg_panel {
  const char* title;
  const char* xlabel;
  const char* ylabel;
  const svg_series* series;
  int nseries;
  int equal_aspect;   // same scale on both axes (for paths in space)
} svg_panel;

// panels side by side under a common title
int svg_write(const char* path, const char* title, const char* note, const svg_panel* panels,
              int npanels, mbs_error* err);

#endif  // MBS_JOBS_SVG_PLOT_H_
