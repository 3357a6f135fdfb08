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
  p->tty = isatty(fileno(out));
  p->t_start = p->t_last = mbs_wall_seconds();
  p->interval = p->tty ? 0.2 : 10.0;
}

static void report(mbs_progress* p, double now, int final) {
  const double elapsed = now - p->t_start;
  const double rate = elapsed > 0 ? (double)p->done / elapsed : 0;
  if (p->total < 0 && final) p->total = p->done;  // an open-ended count, now known
  if (p->total < 0) {  // an open-ended count (an iterative study): at most -total
    if (p->tty)
      fprintf(p->out, "\r%ld %s (at most %ld)  %.0f %s/s  %.1f s ", p->done, p->what, -p->total,
              rate, p->what, elapsed);
    else
      fprintf(p->out, "progress done=%ld total=unknown at_most=%ld unit=%s rate=%.1f/s "
              "elapsed=%.1fs\n", p->done, -p->total, p->what, rate, elapsed);
    fflush(p->out);
    return;
  }
  const double eta = rate > 0 ? (double)(p->total - p->done) / rate : 0;
  const double frac = p->total > 0 ? (double)p->done / (double)p->total : 1;
  if (p->tty) {
    char bar[31];
    const int n = (int)(frac * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < n ? '=' : (i == n ? '>' : ' ');
    bar[30] = 0;
    fprintf(p->out, "\r[%s] %3.0f%%  %ld/%ld %s  %.0f %s/s  %s %.1f s ", bar, 100 * frac,
            p->done, p->total, p->what, rate, p->what, final ? "took" : "ETA",
            final ? elapsed : eta);
    if (final) fputc('\n', p->out);
  } else {
    fprintf(p->out, "progress done=%ld total=%ld unit=%s rate=%.1f/s elapsed=%.1fs eta=%.1fs\n",
            p->done, p->total, p->what, rate, elapsed, final ? 0.0 : eta);
  }
  fflush(p->out);
}

void mbs_progress_update(mbs_progress* p, long done) {
  p->done = done;
  const double now = mbs_wall_seconds();
  if (now - p->t_last >= p->interval) {
    p->t_last = now;
    report(p, now, 0);
  }
}

void mbs_progress_finish(mbs_progress* p) { report(p, mbs_wall_seconds(), 1); }
