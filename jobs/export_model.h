// A study sample's model as an OpenSim document, for `mbstudy export --format osim`: the
// document the study simulated with each coordinate's default value and speed set to the
// sample's first frame and, for a posture study, the platform's displacement set to the
// sample's, so that OpenSim opens it in the sample's starting pose and plays its motion.
#ifndef MBS_JOBS_EXPORT_MODEL_H_
#define MBS_JOBS_EXPORT_MODEL_H_

#include "mbs/status.h"

typedef struct mbs_export_model_values {
  int ncoord;
  const char* const* coords;  // coordinate names
  const double* value;        // default_value per coordinate (rad or m); NaN: keep the model's
  const double* speed;        // default_speed_value, or NULL
  const double* platform;     // the platform's displacement x, y, z (m: the scales of the
                              // multiplier functions platform_x, _y, _z), or NULL
} mbs_export_model_values;

// The edited document (malloc'ed, UTF-8), or NULL with err naming `source` (the document's
// origin, for messages). Elements not named keep their text; coordinates the document does not
// have are skipped.
char* mbs_export_model_document(const char* doc, const char* source,
                                 const mbs_export_model_values* v, mbs_error* err);

#endif  // MBS_JOBS_EXPORT_MODEL_H_
