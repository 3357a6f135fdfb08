// Progress reporting for long-running commands: a live line (done/total, rate, ETA) on a
// terminal, periodic plain "progress ..." lines otherwise (logs, batch jobs).
#ifndef MBS_JOBS_PROGRESS_H_
#define MBS_JOBS_PROGRESS_H_

#include <stdio.h>

typedef struct mbs_progress {
  FILE* out;
  const char* what;    // unit of work, e.g. "steps" or "samples"
  long total;          // negative: not known, at most -total (no ETA)
  long done;
  int tty;             // live line instead of log lines
  double t_start;      // seconds (monotonic)
  double t_last;       // last report
  double interval;     // seconds between reports
} mbs_progress;

// start reporting on `out` (usually stderr)
void mbs_progress_start(mbs_progress* p, FILE* out, const char* what, long total);
// record that `done` units are finished; reports if the interval has passed
void mbs_progress_update(mbs_progress* p, long done);
// final report (always printed)
void mbs_progress_finish(mbs_progress* p);
// seconds since an arbitrary fixed point (monotonic clock)
double mbs_wall_seconds(void);

#endif  // MBS_JOBS_PROGRESS_H_
