// libFuzzer harness: the OpenSim data-file readers (io/table.c): storage files (.sto, .mot;
// header versions 1 and 3, SIMM's .mot without a version line) and marker files (.trc).
//
// The readers only take a path, and the extension decides how a file is read (.mot without a
// version line is in degrees; mbs_table_read picks the .trc reader by name). The input is
// written to "<private folder>/in.sto", with in.mot and in.trc as symbolic links to it, and
// read three times: mbs_table_read_sto on in.sto and on in.mot, mbs_table_read (the .trc
// reader) on in.trc. A table read is checked against its own counts (every label, value,
// header line and marker read back under ASan) and freed; leaks are reported by LSan.
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "mbs/table.h"

static const char* path_sto;
static const char* path_mot;
static const char* path_trc;

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  fuzz_tmp_init("table");
  path_sto = fuzz_tmp_path("in.sto");
  path_mot = fuzz_tmp_path("in.mot");
  path_trc = fuzz_tmp_path("in.trc");
  fuzz_write_file(path_sto, (const uint8_t*)"", 0);
  if (symlink("in.sto", path_mot) != 0 || symlink("in.sto", path_trc) != 0) {
    perror("fuzz: symlink");
    abort();
  }
  return 0;
}

static void touch_table(const mbs_table* t) {
  FUZZ_CHECK(t->nrow >= 0 && t->ncol >= 1 && t->labels, "rows, a time column and labels");
  for (int c = 0; c < t->ncol; c++) {
    FUZZ_CHECK(t->labels[c], "ncol column labels");
    fuzz_touch_str(t->labels[c]);
  }
  fuzz_touch_doubles(t->data, (long)t->nrow * t->ncol);
  fuzz_touch_str(t->name);
  for (int i = 0; i < t->nmeta; i++) {
    fuzz_touch_str(t->meta[i].key);
    fuzz_touch_str(t->meta[i].value);
  }
  if (t->nmarkers) {
    FUZZ_CHECK(t->ncol == 1 + 3 * t->nmarkers, "marker m is columns 1 + 3m .. 3 + 3m");
    for (int m = 0; m < t->nmarkers; m++) fuzz_touch_str(t->markers[m]);
  }
  fuzz_touch_str(t->units);
}

static void read_one(int (*reader)(const char*, mbs_table**, mbs_error*), const char* path) {
  mbs_table* t = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = reader(path, &t, &err);
  FUZZ_CHECK((rc == MBS_OK) == (t != NULL), "a table exactly when the status is MBS_OK");
  if (t) touch_table(t);
  else fuzz_touch_str(err.message);
  fuzz_report(path + strlen(path) - 6, rc == MBS_OK, rc == MBS_OK ? "" : err.message);
  mbs_table_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_write_file(path_sto, data, size);
  read_one(mbs_table_read_sto, path_sto);
  read_one(mbs_table_read_sto, path_mot);
  read_one(mbs_table_read, path_trc);
  return 0;
}
