// Status names and error records.
#include "mbs/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char* mbs_status_name(int status) {
  switch (status) {
#define MBS_STATUS_NAME_(name, value, text) \
  case value:                               \
    return #name;
    MBS_STATUS_LIST(MBS_STATUS_NAME_)
#undef MBS_STATUS_NAME_
  }
  return "MBS_UNKNOWN_STATUS";
}

const char* mbs_status_text(int status) {
  switch (status) {
#define MBS_STATUS_TEXT_(name, value, text) \
  case value:                               \
    return text;
    MBS_STATUS_LIST(MBS_STATUS_TEXT_)
#undef MBS_STATUS_TEXT_
  }
  return "unknown status";
}

void mbs_error_clear(mbs_error* err) {
  if (!err) return;
  memset(err, 0, sizeof(*err));
}

int mbs_error_set(mbs_error* err, int code, const char* func, int line, const char* component,
                  const char* fmt, ...) {
  if (!err) return code;
  err->code = code;
  err->func = func;
  err->line = line;
  snprintf(err->component, sizeof(err->component), "%s", component ? component : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof(err->message), fmt, ap);
  va_end(ap);
  return code;
}
