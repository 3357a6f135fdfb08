// The .sto writer: header fields as OpenSim reads them (version 1: name, version, nRows,
// nColumns, inDegrees, endheader), tab-separated labels, rows that read back to the exact
// doubles, the row count filled in at close, and a clear error for an unwritable path.
#include <stdlib.h>
#include <string.h>

#include "mbs/sto.h"
#include "mbs_test.h"

int main(void) {
  const char* path = "test_sto_out.sto";
  const char* labels[3] = {"time", "knee_angle_r", "hip_flexion_r"};
  mbs_error err;
  mbs_error_clear(&err);
  mbs_sto_writer* w = mbs_sto_open(path, "states", 3, labels, 0, &err);
  EXPECT_TRUE(w != NULL);
  if (!w) return mbs_test_finish("test_sto");
  double rows[7][3];
  for (int i = 0; i < 7; i++) {
    rows[i][0] = 0.01 * i;
    rows[i][1] = sin(0.3 * i) / 3.0;   // values that need all 17 digits
    rows[i][2] = -1e-300 * i + 1.0 / 7.0;
    EXPECT_OK(mbs_sto_write_row(w, rows[i], &err));
  }
  EXPECT_OK(mbs_sto_close(w, &err));

  FILE* f = fopen(path, "r");
  EXPECT_TRUE(f != NULL);
  char line[512];
  int nrows = -1, ncols = -1, saw_end = 0, saw_version = 0, in_degrees = -1;
  EXPECT_TRUE(fgets(line, sizeof(line), f) && strcmp(line, "states\n") == 0);
  while (fgets(line, sizeof(line), f)) {
    if (strcmp(line, "endheader\n") == 0) {
      saw_end = 1;
      break;
    }
    if (strcmp(line, "version=1\n") == 0) saw_version = 1;
    if (strncmp(line, "nRows=", 6) == 0) nrows = atoi(line + 6);
    if (strncmp(line, "nColumns=", 9) == 0) ncols = atoi(line + 9);
    if (strcmp(line, "inDegrees=no\n") == 0) in_degrees = 0;
  }
  EXPECT_TRUE(saw_end);
  EXPECT_TRUE(saw_version);
  EXPECT_EQ_INT(nrows, 7);
  EXPECT_EQ_INT(ncols, 3);
  EXPECT_EQ_INT(in_degrees, 0);
  EXPECT_TRUE(fgets(line, sizeof(line), f) && strcmp(line, "time\tknee_angle_r\thip_flexion_r\n") == 0);
  int r = 0;
  while (fgets(line, sizeof(line), f)) {
    char* p = line;
    for (int c = 0; c < 3; c++) {
      char* end;
      const double v = strtod(p, &end);
      EXPECT_TRUE(end != p);
      EXPECT_TRUE(r < 7 && v == rows[r][c]);  // exact round trip
      p = end;
    }
    r++;
  }
  EXPECT_EQ_INT(r, 7);
  fclose(f);
  remove(path);

  mbs_error_clear(&err);
  EXPECT_TRUE(mbs_sto_open("/nonexistent-folder/x.sto", "s", 3, labels, 0, &err) == NULL);
  EXPECT_EQ_INT(err.code, MBS_ERR_IO);
  EXPECT_TRUE(strstr(err.message, "/nonexistent-folder/x.sto") != NULL);
  return mbs_test_finish("test_sto");
}
