// Progress lines (jobs/progress.c) on a clock the test drives:
//  - a resumed run: the samples done before it are not part of its rate, so the ETA is the
//    work left over this run's rate (the old estimate counted 6000 earlier samples as done in
//    this run's first seconds and promised the end far too early);
//  - samples whose cost changes: the ETA follows the recent rate (the last minute), not the
//    average since the start;
//  - a stopped run says "stopped" and no ETA (it said eta=0.0s at 6105 of 20000);
//  - no rate yet: the ETA is unknown, not 0.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../jobs/progress.h"
#include "mbs_test.h"

static char* read_all(FILE* f) {
  fflush(f);
  long n = ftell(f);
  rewind(f);
  char* s = calloc((size_t)n + 1, 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
  return s;
}

int main(void) {
  // a resumed run: 6000 of 20000 done before; then 10 samples per second
  {
    FILE* f = tmpfile();
    mbs_progress p;
    mbs_progress_start(&p, f, "samples", 20000);
    const double t0 = p.t_start;
    mbs_progress_update_at(&p, 6000, t0);
    for (int k = 1; k <= 20; k++) mbs_progress_update_at(&p, 6000 + 10 * k, t0 + k);
    double rate, eta;
    mbs_progress_estimate(&p, t0 + 20, &rate, &eta);
    printf("resumed: rate %.3f/s, ETA %.1f s (left 13800)\n", rate, eta);
    EXPECT_NEAR(rate, 10.0, 1e-12);
    EXPECT_NEAR(eta, 1380.0, 1e-9);
    fclose(f);
  }
  // the cost changes: 100 samples/s for 10 minutes, then 5/s for 2 minutes
  {
    FILE* f = tmpfile();
    mbs_progress p;
    mbs_progress_start(&p, f, "samples", 100000);
    const double t0 = p.t_start;
    long done = 0;
    mbs_progress_update_at(&p, done, t0);
    double t = 0;
    for (int k = 0; k < 1200; k++) {  // updates every 0.5 s
      t += 0.5;
      done += 50;
      mbs_progress_update_at(&p, done, t0 + t);
    }
    for (int k = 0; k < 240; k++) {
      t += 0.5;
      done += 2;
      if (k % 2) done += 1;  // 5 per second
      mbs_progress_update_at(&p, done, t0 + t);
    }
    double rate, eta;
    mbs_progress_estimate(&p, t0 + t, &rate, &eta);
    printf("uneven: %ld done after %.0f s; recent rate %.3f/s, ETA %.0f s\n", done, t, rate, eta);
    EXPECT_NEAR(rate, 5.0, 0.02);
    EXPECT_NEAR(eta, (100000 - done) / 5.0, 0.01 * (100000 - done) / 5.0);
    fclose(f);
  }
  // stopped: no ETA, the word "stopped"
  {
    FILE* f = tmpfile();
    mbs_progress p;
    mbs_progress_start(&p, f, "samples", 20000);
    mbs_progress_update_at(&p, 6000, p.t_start);
    mbs_progress_update_at(&p, 6105, p.t_start + 5);
    mbs_progress_stopped(&p);
    char* s = read_all(f);
    printf("stopped: %s", s);
    EXPECT_TRUE(s && strstr(s, "done=6105 total=20000") && strstr(s, "stopped") &&
                !strstr(s, "eta="));
    free(s);
    fclose(f);
  }
  // no rate yet: the ETA is unknown
  {
    FILE* f = tmpfile();
    mbs_progress p;
    mbs_progress_start(&p, f, "samples", 100);
    p.interval = 0;
    mbs_progress_update_at(&p, 0, p.t_start + 1);
    char* s = read_all(f);
    printf("no rate: %s", s);
    EXPECT_TRUE(s && strstr(s, "eta=unknown") && !strstr(s, "eta=0.0s"));
    free(s);
    fclose(f);
  }
  return mbs_test_finish("test_progress");
}
