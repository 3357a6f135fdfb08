// Progress reporting for long-running commands: a live line (done/total, rate, ETA) on a
// terminal, periodic plain "progress ..." lines otherwise (logs, batch jobs).
#ifndef MBS_JOBS_PROGRESS_H_
#define MBS_JOBS_PROGRESS_H_

#include <stdio.h>

// The ETA comes from the recent rate (the last minute of updates, or all of them since the
// first when shorter) and the work left, so that uneven units (samples whose cost varies) and
// units done before this run (a resume) do not mislead it.
#define MBS_PROGRESS_WINDOW 128

typedef struct mbs_progress {
  FILE* out;
  const char* what;    // unit of work, e.g. "steps" or "samples"
  long total;          // negative: not known, at most -total (no ETA)
  long done;
  long base;           // units done before this run (the first update's count)
  int started;         // an update has been seen
  int tty;             // live line instead of log lines
  double t_start;      // seconds (monotonic)
  double t_last;       // last report
  double interval;     // seconds between reports
  double window;       // seconds of updates the rate is taken over (60)
  // the recent updates (time, done), a ring
  double ring_t[MBS_PROGRESS_WINDOW];
  long ring_n[MBS_PROGRESS_WINDOW];
  int ring_head, ring_count;
} mbs_progress;

// start reporting on `out` (usually stderr)
void mbs_progress_start(mbs_progress* p, FILE* out, const char* what, long total);
// record that `done` units are finished (the first call gives what was done before this run);
// reports if the interval has passed
void mbs_progress_update(mbs_progress* p, long done);
// the same at a given time (seconds on mbs_wall_seconds' clock; for tests)
void mbs_progress_update_at(mbs_progress* p, long done, double now);
// the current rate (units per second, recent) and ETA (seconds; negative when not known)
void mbs_progress_estimate(const mbs_progress* p, double now, double* rate, double* eta);
// final report (always printed)
void mbs_progress_finish(mbs_progress* p);
// final report of a run stopped before the end: "stopped", with no ETA
void mbs_progress_stopped(mbs_progress* p);
// seconds since an arbitrary fixed point (monotonic clock)
double mbs_wall_seconds(void);

#endif  // MBS_JOBS_PROGRESS_H_
