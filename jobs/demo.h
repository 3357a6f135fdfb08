// `mbstudy demo`: simulate a model built by mbstudy itself and write results to look at.
#ifndef MBS_JOBS_DEMO_H_
#define MBS_JOBS_DEMO_H_

#include <stdio.h>

#include "mbs/status.h"

typedef struct mbs_demo_options {
  const char* out_dir;     // created if missing
  int links;               // links in the chain
  double duration;         // s
  const char* integrator;  // by name, e.g. "rk_merson" (the default) or "rk4"
  double accuracy;         // of the error-controlled integrators
  double step;             // of the fixed-step integrators, s
  double report_interval;  // s between output rows
} mbs_demo_options;

void mbs_demo_options_default(mbs_demo_options* o);
// run the demo, printing progress and a summary to `log`
int mbs_demo_run(const mbs_demo_options* o, FILE* log, mbs_error* err);

#endif  // MBS_JOBS_DEMO_H_
