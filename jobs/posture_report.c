// The report of a finished posture study: the table from io/ (into the file as /posture and as
// Markdown), the picture from posture_plot.c. See posture_report.h.
#include "posture_report.h"

#include "plot_util.h"
#include "posture_plot.h"
#include "mbs/posture_table.h"

int mbs_posture_report(const char* h5_path, const char* png_path, FILE* table, FILE* summary,
                       mbs_error* err) {
  if (!h5_path || !*h5_path)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "posture report", "posture report: no result file");
  mbs_posture_table* t = NULL;
  int rc = mbs_posture_table_read(h5_path, 1, &t, err);
  if (!rc && png_path) rc = mbs_posture_plot_png(t, png_path, err);
  if (!rc && table) rc = mbs_posture_table_write_markdown(t, table, err);
  if (!rc && summary) rc = mbs_posture_table_write_summary(t, summary, err);
  mbs_posture_table_free(t);
  return rc;
}

void mbs_posture_report_cleanup(void) { mbs_plot_cleanup(); }
