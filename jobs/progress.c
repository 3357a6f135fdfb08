// Progress reporting: live line on a terminal, periodic plain lines otherwise.
#include "progress.h"

#include <time.h>
#include <unistd.h>

double mbs_wall_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void mbs_progress_start(mbs_progress* p, FILE* out, const char* what, long total) {
  p->out = out;
  p->what = what;
  p->total = total;
  p->done = 0;
  p->base = 0;
  p->started = 0;
  p->tty = isatty(fileno(out));
  p->t_start = p->t_last = mbs_wall_seconds();
  p->interval = p->tty ? 0.2 : 10.0;
  p->window = 60;
  p->ring_head = p->ring_count = 0;
}

static void remember(mbs_progress* p, double now, long done) {
  p->ring_t[p->ring_head] = now;
  p->ring_n[p->ring_head] = done;
  p->ring_head = (p->ring_head + 1) % MBS_PROGRESS_WINDOW;
  if (p->ring_count < MBS_PROGRESS_WINDOW) p->ring_count++;
}

void mbs_progress_estimate(const mbs_progress* p, double now, double* rate, double* eta) {
  // the oldest remembered update within the window (the first one when all are recent)
  double t0 = p->t_start;
  long n0 = p->base;
  for (int k = p->ring_count; k >= 1; k--) {
    const int i = (p->ring_head - k + MBS_PROGRESS_WINDOW) % MBS_PROGRESS_WINDOW;
    if (now - p->ring_t[i] <= p->window || k == 1) {
      if (now - p->ring_t[i] > 0) {
        t0 = p->ring_t[i];
        n0 = p->ring_n[i];
      }
      break;
    }
  }
  const double dt = now - t0;
  *rate = dt > 0 && p->done > n0 ? (double)(p->done - n0) / dt : 0;
  *eta = p->total >= 0 && *rate > 0 ? (double)(p->total - p->done) / *rate : -1;
}

static void report(mbs_progress* p, double now, int final, int stopped) {
  const double elapsed = now - p->t_start;
  double rate, eta;
  mbs_progress_estimate(p, now, &rate, &eta);
  if (final) {  // the whole run's rate
    rate = elapsed > 0 ? (double)(p->done - p->base) / elapsed : 0;
  }
  if (p->total < 0 && final && !stopped) p->total = p->done;  // an open-ended count, now known
  if (p->total < 0) {  // an open-ended count (an iterative study): at most -total
    if (p->tty)
      fprintf(p->out, "\r%ld %s (at most %ld)  %.0f %s/s  %.1f s%s ", p->done, p->what,
              -p->total, rate, p->what, elapsed, stopped ? "  stopped\n" : "");
    else
      fprintf(p->out, "progress done=%ld total=unknown at_most=%ld unit=%s rate=%.1f/s "
              "elapsed=%.1fs%s\n", p->done, -p->total, p->what, rate, elapsed,
              stopped ? " stopped" : "");
    fflush(p->out);
    return;
  }
  const double frac = p->total > 0 ? (double)p->done / (double)p->total : 1;
  char when[64];
  if (stopped) snprintf(when, sizeof when, "stopped after %.1f s", elapsed);
  else if (final) snprintf(when, sizeof when, "took %.1f s", elapsed);
  else if (eta >= 0) snprintf(when, sizeof when, "ETA %.1f s", eta);
  else snprintf(when, sizeof when, "ETA not known yet");
  if (p->tty) {
    char bar[31];
    const int n = (int)(frac * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < n ? '=' : (i == n ? '>' : ' ');
    bar[30] = 0;
    fprintf(p->out, "\r[%s] %3.0f%%  %ld/%ld %s  %.0f %s/s  %s ", bar, 100 * frac, p->done,
            p->total, p->what, rate, p->what, when);
    if (final) fputc('\n', p->out);
  } else if (stopped) {
    fprintf(p->out, "progress done=%ld total=%ld unit=%s rate=%.1f/s elapsed=%.1fs stopped\n",
            p->done, p->total, p->what, rate, elapsed);
  } else if (final || eta >= 0) {
    fprintf(p->out, "progress done=%ld total=%ld unit=%s rate=%.1f/s elapsed=%.1fs eta=%.1fs\n",
            p->done, p->total, p->what, rate, elapsed, final ? 0.0 : eta);
  } else {
    fprintf(p->out, "progress done=%ld total=%ld unit=%s rate=%.1f/s elapsed=%.1fs "
            "eta=unknown\n", p->done, p->total, p->what, rate, elapsed);
  }
  fflush(p->out);
}

void mbs_progress_update_at(mbs_progress* p, long done, double now) {
  if (!p->started) {  // what was done before this run: not part of its rate
    p->started = 1;
    p->base = done;
  }
  p->done = done;
  remember(p, now, done);
  if (now - p->t_last >= p->interval) {
    p->t_last = now;
    report(p, now, 0, 0);
  }
}

void mbs_progress_update(mbs_progress* p, long done) {
  mbs_progress_update_at(p, done, mbs_wall_seconds());
}

void mbs_progress_finish(mbs_progress* p) { report(p, mbs_wall_seconds(), 1, 0); }

void mbs_progress_stopped(mbs_progress* p) { report(p, mbs_wall_seconds(), 1, 1); }
