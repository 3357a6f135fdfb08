// The states OpenSim's AnalyzeTool steps through, as a library (io/analyze_states.c): a table
// with a row of every state variable of a model per time, read as OpenSim 4 reads them, and the
// State of each row.
//
//  - From a states file (states_file): each state variable's column is found as OpenSim's
//    Storage::getStateIndex finds it: the OpenSim 4 label (/jointset/<joint>/<coordinate>/value
//    and /speed, /forceset/<force>/<state>), the same with leading path parts dropped, or the
//    OpenSim 3 label (<coordinate>, <coordinate>_u, <force>.<state>). A state the file lacks
//    keeps the default State's value (Model::formStateStorage), and a file saying inDegrees=yes
//    has its rotational coordinates and their speeds converted to radians.
//  - From a coordinates file (coordinates_file, .mot or .sto; columns named after the
//    coordinates or their state labels), processed as AnalyzeTool::loadStatesFromFile and
//    SimbodyEngine::formCompleteStorages process it: with lowpass_hz >= 0 padded with nrow/2
//    reflected rows at each end, resampled at its smallest step when the steps differ by more
//    than machine epsilon and low-pass filtered (third-order Butterworth, forward and backward;
//    a cutoff at or above half the sampling rate lowered to 0.49 times the rate, as OpenSim
//    does); degrees converted for the coordinates OpenSim calls rotational; the speeds the first
//    derivatives of natural quintic interpolating splines (OpenSim's GCVSplineSet of degree 5) at
//    the rows, or a speeds file's columns (/speed labels, <coordinate>_u, or the coordinate's
//    name) linearly interpolated at them. The rows are the processed table's, the padding
//    included (as OpenSim's); a coordinate the file lacks keeps its default value and speed,
//    and every auxiliary state the default State's value. Unlike OpenSim, a row closer to the
//    previous one than 1e-9 of the mean step (the last time a forward simulation writes twice)
//    is left out, with a warning: as a knot it makes the splines' derivatives explode.
//
// Columns of the table: time; each model coordinate's value (model order); each coordinate's
// speed; each auxiliary state z (the System's order), labelled with OpenSim 4's state names.
#ifndef MBS_ANALYZE_STATES_H_
#define MBS_ANALYZE_STATES_H_

#include "mbs/osim.h"
#include "mbs/state.h"
#include "mbs/status.h"
#include "mbs/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_analyze_states_options {
  const char* states_file;       // all states (.sto); when given, the next three are not used
  const char* coordinates_file;  // or coordinates (.mot or .sto) ...
  const char* speeds_file;       // ... and, optionally, their speeds (NULL: by the splines)
  double lowpass_hz;             // coordinates only; < 0: not filtered
  // what the reading notices (states the file lacks, a lowered cutoff), one sentence each, with
  // the file's name; may be NULL
  void (*warn)(void* user, const char* message);
  void* warn_user;
} mbs_analyze_states_options;

void mbs_analyze_states_options_default(mbs_analyze_states_options* o);

// Read the states of model m; `defaults` holds the values of states the files do not give (the
// model's default State). *out is NULL on failure, with `file:line: what is wrong` (or the file
// and the column) in err.
int mbs_analyze_states_read(const mbs_osim_model* m, const mbs_state* defaults,
                            const mbs_analyze_states_options* o, mbs_table** out,
                            mbs_error* err);

// The row at or before time t (OpenSim's Storage::findIndex): 0 before the first time, the last
// row after the last time.
int mbs_analyze_states_find(const mbs_table* t, double time);

// Put row r of a states table of model m into st (time, coordinates, speeds, auxiliary states)
// and, when the model has constraints, assemble it (OpenSim's Model::assemble: locked and
// prescribed coordinates keep their values). Errors are in mbs_state_error.
int mbs_analyze_states_set(const mbs_osim_model* m, mbs_state* st, const mbs_table* t, int row);

#ifdef __cplusplus
}
#endif

#endif  // MBS_ANALYZE_STATES_H_
