// Status codes and error records.
//
// Sign convention: 0 is success, positive codes are informational or recoverable (an event
// fired, a step was rejected), negative codes are errors grouped in bands by cause:
//   -1xx usage and input   -2xx numerical   -3xx resources   -4xx files   -9xx internal.
// The library never prints and never exits: it returns a status and fills an error record
// whose message names the component (and, for files, the file and line).
#ifndef MBS_STATUS_H_
#define MBS_STATUS_H_

#ifdef __cplusplus
extern "C" {
#endif

#define MBS_STATUS_LIST(X)                                                          \
  X(MBS_OK,                 0,    "ok")                                             \
  X(MBS_EVENT,              1,    "event triggered")                                \
  X(MBS_STEP_REJECTED,      2,    "step rejected")                                  \
  X(MBS_ERR_ARGUMENT,       -100, "invalid argument")                               \
  X(MBS_ERR_STAGE,          -101, "state not realized to the required stage")       \
  X(MBS_ERR_NOT_FINALIZED,  -102, "system not finalized")                           \
  X(MBS_ERR_FINALIZED,      -103, "system already finalized")                       \
  X(MBS_ERR_UNKNOWN_NAME,   -104, "unknown name")                                   \
  X(MBS_ERR_PARAMETER,      -105, "invalid parameter value")                        \
  X(MBS_ERR_TOPOLOGY,       -106, "invalid topology")                               \
  X(MBS_ERR_SYSTEM_MISMATCH,-107, "state belongs to another system")                \
  X(MBS_ERR_SINGULAR,       -200, "singular matrix")                                \
  X(MBS_ERR_NAN,            -201, "not a number")                                   \
  X(MBS_ERR_ASSEMBLY,       -202, "constraints cannot be satisfied")                \
  X(MBS_ERR_INTEGRATOR,     -203, "integration failed")                             \
  X(MBS_ERR_STEP_LIMIT,     -204, "step limit reached")                             \
  X(MBS_ERR_INTERRUPTED,    -205, "stopped by a signal")                            \
  X(MBS_ERR_NO_MEMORY,      -300, "out of memory")                                  \
  X(MBS_ERR_STACK,          -301, "scratch stack exhausted")                        \
  X(MBS_ERR_IO,             -400, "input/output error")                             \
  X(MBS_ERR_PARSE,          -401, "malformed input")                                \
  X(MBS_ERR_INTERNAL,       -900, "internal error")

typedef enum mbs_status {
#define MBS_STATUS_ENUM_(name, value, text) name = value,
  MBS_STATUS_LIST(MBS_STATUS_ENUM_)
#undef MBS_STATUS_ENUM_
} mbs_status;

// symbolic name of a status code, e.g. "MBS_ERR_STAGE"; "MBS_UNKNOWN_STATUS" if not a code
const char* mbs_status_name(int status);

// one-line description of a status code
const char* mbs_status_text(int status);

#define MBS_ERROR_COMPONENT_LEN 96
#define MBS_ERROR_MESSAGE_LEN 320

// the last error: code, the component it concerns, a message, and where it was raised
typedef struct mbs_error {
  int code;                                   // an mbs_status, MBS_OK when clear
  char component[MBS_ERROR_COMPONENT_LEN];    // e.g. "body 'femur_r'" (may be empty)
  char message[MBS_ERROR_MESSAGE_LEN];        // full sentence, starts with the component
  const char* func;                           // function that raised it
  int line;                                   // source line that raised it
} mbs_error;

// clear an error record
void mbs_error_clear(mbs_error* err);

// fill an error record; returns code so that callers can `return mbs_error_set(...)`
int mbs_error_set(mbs_error* err, int code, const char* func, int line, const char* component,
                  const char* fmt, ...) __attribute__((format(printf, 6, 7)));

#define MBS_FAIL(err, code, component, ...) \
  mbs_error_set((err), (code), __func__, __LINE__, (component), __VA_ARGS__)

// printf into a new string (malloc'ed; NULL when out of memory)
char* mbs_format_string(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif  // MBS_STATUS_H_
