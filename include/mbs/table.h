// OpenSim data files as tables: reading and writing storage files (.sto/.mot, header versions
// 1 and 3), reading marker files (.trc), unit conversions at the edge (degrees, millimeters),
// OpenSim's zero-phase low-pass filter and an interpolating quintic spline with derivatives.
//
// A table is a block of doubles, row-major, with one label per column; column 0 is the
// independent variable (labelled "time" in storage files). Row numbers in messages count data
// rows from 1; file messages start with "<path>:<line>:".
//
// Reading and writing: io/table.c. Filtering, resampling, padding and splines:
// io/table_filter.c. The streaming writer of mbs/sto.h stays the way to write rows while a
// simulation runs; mbs_table_write_sto writes a whole table with the same number format.
#ifndef MBS_TABLE_H_
#define MBS_TABLE_H_

#include "mbs/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// One header line other than the fields the table keeps itself: "key=value", or, with key NULL,
// a line of free text (e.g. "Units are S.I. units (second, meters, Newtons, ...)").
typedef struct mbs_table_entry {
  char* key;    // NULL for a free-text line
  char* value;  // the value, or the text of a free-text line
} mbs_table_entry;

typedef struct mbs_table {
  int nrow;            // data rows
  int ncol;            // columns, the time column included
  char** labels;       // ncol column labels; labels[0] is usually "time"
  double* data;        // nrow * ncol values, row-major: row r, column c at data[r * ncol + c]
  char* name;          // the header's name line ("Coordinates"); "" when the file has none
  int in_degrees;      // inDegrees=yes: rotational coordinates are in degrees
  int version;         // storage header version read (1 or 3); 0 when not read from a header
  int nmeta;           // other header lines, in file order (round trips keep them)
  mbs_table_entry* meta;
  // marker files (.trc) only; 0 / NULL otherwise
  int nmarkers;        // markers; marker m is columns 1 + 3m .. 3 + 3m (x, y, z)
  char** markers;      // marker names as in the file ("R.ASIS")
  char* units;         // length units of the marker coordinates ("mm"), NULL if unknown
} mbs_table;

// value at row r, column c
static inline double mbs_table_get(const mbs_table* t, int r, int c) {
  return t->data[(long)r * t->ncol + c];
}

// ---------------------------------------------------------------------------------------------
// Creation and metadata (io/table.c)

// A table of nrow x ncol zeros with copies of the labels (ncol >= 1) and of the name (may be
// NULL). *out is NULL on failure.
int mbs_table_create(mbs_table** out, const char* name, int nrow, int ncol,
                     const char* const* labels, mbs_error* err);
// A deep copy of t (data, labels, header lines, markers, units).
int mbs_table_copy(mbs_table** out, const mbs_table* t, mbs_error* err);
// Free a table and everything it owns; NULL is fine.
void mbs_table_free(mbs_table* t);

// Index of the column labelled `label`, or -1.
int mbs_table_column(const mbs_table* t, const char* label);
// Set header field `key` to `value` (replaced in place when present, appended otherwise). With
// key NULL, appends `value` as a free-text line.
int mbs_table_set_meta(mbs_table* t, const char* key, const char* value, mbs_error* err);
// Value of header field `key`, or NULL.
const char* mbs_table_get_meta(const mbs_table* t, const char* key);

// ---------------------------------------------------------------------------------------------
// Reading (io/table.c)

// Read an OpenSim storage file (.sto or .mot), header version 1 (name line, version=1,
// nRows=, nColumns=, inDegrees=, free text, endheader) or 3 (OpenSim 4's STOFileAdapter:
// key=value lines, DataType=double, version=3, OpenSimVersion=, endheader; nRows and nColumns
// may be absent). Fields are separated by tabs or spaces; CRLF line ends are accepted; "nan"
// and "NaN" read as NaN. The name line, version and inDegrees go to their fields; nRows and
// nColumns are checked against the data and dropped; DataType must be "double" and is dropped;
// every other header line (OpenSimVersion included) is kept in `meta`, in order. A .mot file
// without a version line is SIMM's and in degrees, as OpenSim's Storage reads it. Errors
// (MBS_ERR_IO for a file that cannot be read, MBS_ERR_PARSE for malformed content) name the
// file and the line.
int mbs_table_read_sto(const char* path, mbs_table** out, mbs_error* err);

// Read a marker file (.trc, PathFileType 4): the line of keys (DataRate, CameraRate,
// NumFrames, NumMarkers, Units, OrigDataRate, OrigDataStartFrame, OrigNumFrames) and the line
// of their values, the "Frame# Time <marker> ..." line (each marker spans three columns), the
// "X1 Y1 Z1 ..." line, optional blank lines, then one row per frame. The table has columns
// "time", then "<marker>_x", "<marker>_y", "<marker>_z" for each marker in file order; the
// frame numbers are dropped. A marker with an empty field in a frame (not seen) is NaN in all
// three coordinates, as in OpenSim's TRCFileAdapter. The eight key/value pairs go to `meta`,
// the file name of the first line to `name`, the marker names to `markers` and the units to
// `units`; coordinates stay in the file's units (see mbs_table_to_meters). NumFrames and
// NumMarkers must match the data.
int mbs_table_read_trc(const char* path, mbs_table** out, mbs_error* err);

// mbs_table_read_trc for a path ending in ".trc" (any case), mbs_table_read_sto otherwise.
int mbs_table_read(const char* path, mbs_table** out, mbs_error* err);

// ---------------------------------------------------------------------------------------------
// Writing (io/table.c)

// Write t as an OpenSim storage file with a version 1 header (name line, version=1, nRows,
// nColumns, inDegrees, the other header lines, endheader) or a version 3 header (name line
// when not empty, the other header lines, inDegrees, DataType=double, version=3, endheader).
// Labels and rows are tab-separated; numbers use the shortest of 15, 16 or 17 significant
// digits that reads back as the same double (NaN as "NaN"), so that mbs_table_read_sto gives
// back bit-identical numbers, the same labels, name, inDegrees and header lines. Labels must
// be non-empty without blanks; header lines must not contain line breaks. Header entries with
// the reserved keys version, nRows, nColumns, inDegrees and DataType are not written (the
// writer produces them). An empty name is written as "mbstudy" in a version 1 header. Header
// text is read back without leading and trailing blanks; a free-text line that would read as
// something else (key=value, "endheader", numbers, blank) is refused (MBS_ERR_ARGUMENT).
int mbs_table_write_sto(const mbs_table* t, const char* path, int version, mbs_error* err);
// Write a marker table (as mbs_table_read_trc gives it: time, then x, y, z of each marker, in
// t->units, "m" when NULL) as a .trc file (PathFileType 4); a marker not seen in a frame (NaN)
// gets empty fields, as motion capture systems write it.
int mbs_table_write_trc(const mbs_table* t, const char* path, mbs_error* err);

// ---------------------------------------------------------------------------------------------
// Units at the edge (io/table.c)

// When t->in_degrees is set, convert columns from degrees to radians and clear in_degrees
// (nothing to do otherwise). OpenSim applies inDegrees to rotational coordinates only
// (translations stay in meters), and a table alone does not know which columns are angles:
// pass their labels in `columns` (ncolumns of them; an unknown label is MBS_ERR_UNKNOWN_NAME
// and nothing is converted). With columns NULL every column but column 0 is converted, which
// is right only when every column is an angle; an empty list (columns non-NULL, ncolumns 0)
// converts nothing and still clears in_degrees.
int mbs_table_to_radians(mbs_table* t, const char* const* columns, int ncolumns,
                         mbs_error* err);

// Convert the coordinates of a marker table to meters: every column but column 0 is scaled
// by the factor of t->units ("mm" 0.001, "cm" 0.01, "dm" 0.1, "m" 1, any case), then units and
// the Units header field become "m". MBS_ERR_PARAMETER for other or missing units.
int mbs_table_to_meters(mbs_table* t, mbs_error* err);

// ---------------------------------------------------------------------------------------------
// Filtering (io/table_filter.c)

// Relative tolerance on uniform sampling for mbs_table_lowpass: every step between rows must
// be within this fraction of the mean step. Files that print times with 8 decimals (OpenSim's
// IK and ID results at 60 Hz) deviate by about 1e-6.
#define MBS_TABLE_UNIFORM_RTOL 1e-4

// Zero-phase low-pass filter, in place, of the named columns (NULL: every column but column 0),
// as OpenSim's tools apply lowpass_cutoff_frequency_for_coordinates (InverseDynamicsTool,
// AnalyzeTool, TableUtilities::filterLowpass): with pad non-zero each column is first padded
// with nrow/2 points at each end by odd reflection about the end points (Signal::Pad), then a
// third-order Butterworth low-pass filter (bilinear transform with pre-warped cutoff, first
// three outputs set to the inputs; Signal::LowpassIIR) runs forward and then backward, and the
// rows of the original range are kept. The combined gain is 1 / (1 + (tan(pi f T) /
// tan(pi fc T))^6) at frequency f for sampling interval T, with no phase lag. With pad zero
// the columns are filtered as they are (e.g. after mbs_table_pad, which is how OpenSim's ID
// tool keeps the padding for its splines; io/table_filter.c lists its steps).
// Errors: time not strictly increasing (MBS_ERR_PARAMETER, naming the row); sampling not uniform
// within MBS_TABLE_UNIFORM_RTOL (MBS_ERR_PARAMETER: OpenSim would then resample at the smallest
// step with a quintic spline; do that explicitly with mbs_table_resample and
// mbs_table_min_step); cutoff not positive or not below half the sampling rate
// (MBS_ERR_PARAMETER: OpenSim would lower it to 0.49 times the sampling rate and warn); NaN in
// a column (MBS_ERR_NAN); fewer rows than the filter needs.
int mbs_table_lowpass(mbs_table* t, double cutoff_hz, const char* const* columns, int ncolumns,
                      int pad, mbs_error* err);

// A copy of t with npad rows prepended and appended (0 <= npad < nrow), every column (time
// included) reflected and negated about its end values so that value and slope continue, as
// OpenSim's Storage::pad.
int mbs_table_pad(const mbs_table* t, int npad, mbs_table** out, mbs_error* err);

// Smallest step between consecutive values of column 0 (NaN with fewer than 2 rows).
double mbs_table_min_step(const mbs_table* t);

// A copy of t sampled at times t0 + k dt (k = 0, 1, ... while not past the last time), every
// column interpolated with the quintic spline below (OpenSim resamples with a degree-5
// GCVSpline without smoothing, i.e. the same interpolant).
int mbs_table_resample(const mbs_table* t, double dt, mbs_table** out, mbs_error* err);

// ---------------------------------------------------------------------------------------------
// Splines (io/table_filter.c)

// Interpolating natural quintic splines through every column of a table, as a function of
// column 0: the spline OpenSim's InverseDynamicsTool builds from coordinates (GCVSpline of
// degree 5 with zero error variance, i.e. no smoothing: the quintic that passes through every
// point, is C4, and has zero third and fourth derivatives at both ends). Outside the time range
// it continues as the quadratic with the end value, slope and curvature.
typedef struct mbs_table_spline mbs_table_spline;

// Build the splines of every column but column 0 (needs at least 3 rows, strictly increasing
// finite times, finite values). Allocates once; evaluating never allocates and does not
// modify the spline, so threads may share it.
int mbs_table_spline_create(const mbs_table* t, mbs_table_spline** out, mbs_error* err);
void mbs_table_spline_free(mbs_table_spline* s);

// Value, first and second time derivative of table column col (1 .. ncol-1) at time t into
// d[0..2]; col 0 gives (t, 1, 0), any other col NaN.
void mbs_table_spline_eval(const mbs_table_spline* s, int col, double t, double d[3]);
// The same for every column into arrays of ncol entries (any may be NULL); entry 0 is time.
void mbs_table_spline_eval_all(const mbs_table_spline* s, double t, double* value, double* d1,
                               double* d2);

#ifdef __cplusplus
}
#endif

#endif  // MBS_TABLE_H_
