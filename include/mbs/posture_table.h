// The table of a finished posture perturbation study (the OpenSim paper's §5 experiment, its
// Fig. 12): the result file's samples arranged on the study's grid of joint mode × knee flexion
// × platform direction × platform displacement, read from the file, written back into it as the
// group /posture (layout in io/FORMAT.md, "Posture studies") and as a Markdown table. HDF5
// only; the picture is drawn by jobs/posture_plot.h, the whole report made by
// jobs/posture_report.h.
//
// The study file (io/FORMAT.md) holds the parameters `posture/mode` (0 joints free with holding
// torques, 1 back and leg joints locked), `posture/knee_flexion` (deg), `posture/direction`
// (deg; 0 anterior, 180 posterior, 90 toward the subject's right) and `posture/magnitude` (m of
// platform displacement) among its /parameter_names, and the scalars `time_to_fall` (s) and
// `stability_index` (1 − exp(−T²)). The grid's axes are the sorted distinct values of the four
// parameters over the written samples (any order of samples); a sample is placed by its values.
// Only samples with /status/done = 1 and /status/code = 0 give values; other cells are NaN.
#ifndef MBS_IO_POSTURE_TABLE_H_
#define MBS_IO_POSTURE_TABLE_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mbs/status.h"

// the grid's axes, in the order of its dimensions
enum {
  MBS_POSTURE_MODE,       // joint mode: 0 free, 1 locked
  MBS_POSTURE_KNEE,       // knee flexion, deg
  MBS_POSTURE_DIRECTION,  // platform direction, deg
  MBS_POSTURE_MAGNITUDE,  // platform displacement, m
  MBS_POSTURE_NAXES
};

// one axis: the sorted distinct values of its parameter over the written samples
typedef struct mbs_posture_axis {
  int n;
  double* v;  // n values
} mbs_posture_axis;

// A posture study on its grid. Cells are indexed by mbs_posture_table_cell (mode slowest,
// magnitude fastest, as the datasets in /posture).
typedef struct mbs_posture_table {
  char* path;                              // the result file, as given to the reader
  long nsamples;                           // samples in the file (written or not)
  mbs_posture_axis axis[MBS_POSTURE_NAXES];
  size_t ncell;                            // product of the axes' lengths
  double* stability_index;                 // ncell; NaN where no successful sample
  double* time_to_fall;                    // ncell, s; NaN where no successful sample
  int64_t* sample;                         // ncell: the sample in the cell, -1 for none
  long written;                            // samples written with values of the 4 parameters
  long good;                               // of those, the successful ones (/status/code 0)
  long placed;                             // successful samples placed on the grid
  // the file's root attributes as text ("" when absent): `study`, `model` (its name without
  // folders: a built-in's name or an .osim file's name), `fall_criterion`, `simulated_duration`
  char study[64], model[256], fall[1024], duration[64];
} mbs_posture_table;

// Read the posture study in `h5_path` and arrange its samples on the grid; *out is the table
// (free it with mbs_posture_table_free), NULL on error. With `write_group`, the file is opened
// for writing and the group /posture is made (replaced when it exists, so it can be made again)
// before the file is closed; without, the file is opened read-only and left as it is.
//
// Errors name the file and what is missing or failed, e.g. "result.h5: no
// /scalars/stability_index: is this a posture study?" (MBS_ERR_PARSE for content that is missing
// or not a grid, MBS_ERR_IO for files that cannot be opened or written). The HDF5 file must not
// be open elsewhere; HDF5 calls are made from the calling thread and print nothing.
int mbs_posture_table_read(const char* h5_path, int write_group, mbs_posture_table** out,
                           mbs_error* err);

// Print the summary as Markdown to `out`: a caption naming the file, the model, the simulated
// duration and how many samples succeeded, then one row per mode, knee flexion and direction
// with the stable range (mbs_posture_table_stable_range), the mean stability index over the
// displacements and T at the smallest one. MBS_ERR_IO when `out` cannot be written.
int mbs_posture_table_write_summary(const mbs_posture_table* t, FILE* out, mbs_error* err);

// Print the summary and then the whole grid as Markdown to `out`: one row per mode, knee
// flexion and direction with the stability index per displacement ("–" where no successful
// sample); with more than MBS_POSTURE_MARKDOWN_COLUMNS displacements, one row per displacement
// and one column per mode, knee flexion and direction instead. MBS_ERR_IO when `out` cannot be
// written.
#define MBS_POSTURE_MARKDOWN_COLUMNS 24
int mbs_posture_table_write_markdown(const mbs_posture_table* t, FILE* out, mbs_error* err);

// The largest displacement (m) up to which the model of mode m, knee flexion k and direction d
// stands for the whole simulated duration (every displacement from the smallest up to it): the
// paper's stable range; it ends before a cell without a result. -1 when the model falls at the
// smallest displacement, NaN when that cell has no result or the file does not give the
// simulated duration.
double mbs_posture_table_stable_range(const mbs_posture_table* t, int m, int k, int d);

// Release the table (NULL is fine).
void mbs_posture_table_free(mbs_posture_table* t);

// The index of the cell of mode m, knee flexion k, direction d and magnitude g (axis indices).
size_t mbs_posture_table_cell(const mbs_posture_table* t, int m, int k, int d, int g);

// Names of axis values, in `buf` (of n bytes) when not one of the fixed names. Short, as in the
// Markdown table and /posture/mode: "free", "locked", "mode 2"; "anterior", "posterior",
// "right", "left", "45°". Long (`long_form`), as in the picture: "joints free, holding
// torques", "leg and back joints locked", "joint mode 2"; "anterior platform displacement",
// "platform displaced to the right", "platform displaced at 45° (0° anterior, 90° right)".
const char* mbs_posture_mode_name(double mode, int long_form, char* buf, size_t n);
const char* mbs_posture_direction_name(double deg, int long_form, char* buf, size_t n);

#endif  // MBS_IO_POSTURE_TABLE_H_
