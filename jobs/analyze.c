// The AnalyzeTool's analyses: the table of analysis types, their common properties, stepping
// and result tables (analyze.h).
#include "analyze.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// The analyses, one line each: X(name) for `const mbs_analysis_type mbs_analysis_<name>` in
// analysis_<name>.c.
#define MBS_ANALYSES(X) \
  X(kinematics)         \
  X(body_kinematics)    \
  X(actuation)          \
  X(muscle)             \
  X(joint_reaction)     \
  X(static_optimization) \
  X(induced_accelerations)

#define MBS_ANALYSIS_DECLARE(n) extern const mbs_analysis_type mbs_analysis_##n;
MBS_ANALYSES(MBS_ANALYSIS_DECLARE)
#define MBS_ANALYSIS_ENTRY(n) &mbs_analysis_##n,
const mbs_analysis_type* const mbs_analysis_types[] = {MBS_ANALYSES(MBS_ANALYSIS_ENTRY) NULL};

const mbs_analysis_type* mbs_analysis_type_find(const char* element) {
  for (int i = 0; mbs_analysis_types[i]; i++)
    if (!strcmp(mbs_analysis_types[i]->element, element)) return mbs_analysis_types[i];
  return NULL;
}

typedef struct an_table {
  char* suffix;
  char* title;
  char* description;
  int in_degrees;
  int ncol;          // time included
  char** labels;
  double* data;      // rows * ncol
  int nrow, cap;
} an_table;

struct mbs_analysis {
  const mbs_analysis_type* type;
  mbs_setup_node* node;
  char* name;
  int on, in_degrees;
  long step_interval;
  double start_time, end_time;
  int begun;
  void* data;
  an_table* table;
  int ntable, nrow;
};

mbs_setup_node* mbs_analysis_node(const mbs_analysis* a) { return a->node; }
const char* mbs_analysis_name(const mbs_analysis* a) { return a->name; }
const char* mbs_analysis_kind(const mbs_analysis* a) { return a->type->element; }
int mbs_analysis_in_degrees(const mbs_analysis* a) { return a->in_degrees; }
int mbs_analysis_on(const mbs_analysis* a) { return a->on; }
int mbs_analysis_ntable(const mbs_analysis* a) { return a->ntable; }
int mbs_analysis_nrow(const mbs_analysis* a) { return a->nrow; }

static void vreport(const mbs_analyze_context* c, const mbs_analysis* a,
                    const mbs_setup_node* node, const char* what, const char* fmt, va_list ap) {
  char msg[2048];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  fprintf(c->log, "mbstudy run-tool: %s%s:%d: %s '%s': %s\n", what, mbs_setup_path(c->setup),
          mbs_setup_line(node ? node : a->node), mbs_setup_kind(a->node), a->name, msg);
}

int mbs_analysis_fail(const mbs_analyze_context* c, const mbs_analysis* a,
                      const mbs_setup_node* node, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(c, a, node, "", fmt, ap);
  va_end(ap);
  return 1;
}

void mbs_analysis_warn(const mbs_analyze_context* c, const mbs_analysis* a,
                       const mbs_setup_node* node, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(c, a, node, "warning: ", fmt, ap);
  va_end(ap);
}

int mbs_analysis_words(mbs_setup* s, mbs_setup_node* n, const char* key, char*** words,
                       char** buf, int* nwords) {
  *nwords = 0;
  *words = NULL;
  const char* text = mbs_setup_string(s, n, key);
  *buf = strdup(text ? text : "");
  if (!*buf) return -1;
  *words = calloc(strlen(*buf) / 2 + 2, sizeof(char*));
  if (!*words) {
    free(*buf);
    *buf = NULL;
    return -1;
  }
  char* save = NULL;
  for (char* w = strtok_r(*buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
    (*words)[(*nwords)++] = w;
  return 0;
}

int mbs_analysis_add_table(const mbs_analyze_context* c, mbs_analysis* a, const char* suffix,
                           const char* title, const char* description, int in_degrees,
                           int nlabels, const char* const* labels) {
  an_table* t = realloc(a->table, (size_t)(a->ntable + 1) * sizeof(an_table));
  if (!t) {
    mbs_analysis_fail(c, a, NULL, "out of memory");
    return -1;
  }
  a->table = t;
  t = &a->table[a->ntable];
  memset(t, 0, sizeof(*t));
  a->ntable++;  // (freed with the analysis even when filled in part)
  t->suffix = strdup(suffix);
  t->title = strdup(title);
  t->description = strdup(description ? description : "");
  t->in_degrees = in_degrees;
  t->ncol = nlabels + 1;
  t->labels = calloc((size_t)t->ncol, sizeof(char*));
  int ok = t->suffix && t->title && t->description && t->labels;
  if (ok) ok = (t->labels[0] = strdup("time")) != NULL;
  for (int i = 0; ok && i < nlabels; i++) ok = (t->labels[1 + i] = strdup(labels[i])) != NULL;
  if (!ok) {
    mbs_analysis_fail(c, a, NULL, "out of memory");
    return -1;
  }
  return a->ntable - 1;
}

double* mbs_analysis_row(mbs_analysis* a, int table) {
  an_table* t = &a->table[table];
  return t->data + (size_t)(t->nrow - 1) * t->ncol + 1;
}

static void free_tables(mbs_analysis* a) {
  for (int k = 0; k < a->ntable; k++) {
    an_table* t = &a->table[k];
    free(t->suffix);
    free(t->title);
    free(t->description);
    for (int i = 0; t->labels && i < t->ncol; i++) free(t->labels[i]);
    free(t->labels);
    free(t->data);
  }
  free(a->table);
}

void mbs_analysis_free(mbs_analysis* a) {
  if (!a) return;
  if (a->type->destroy) a->type->destroy(a->data);
  free_tables(a);
  free(a->name);
  free(a);
}

mbs_analysis* mbs_analysis_create(const mbs_analyze_context* c, mbs_setup_node* node) {
  mbs_setup* s = c->setup;
  const char* kind = mbs_setup_kind(node);
  const mbs_analysis_type* type = mbs_analysis_type_find(kind);
  if (!type) {
    fprintf(c->log, "mbstudy run-tool: %s:%d: <%s> '%s' is not an analysis mbstudy runs (",
            mbs_setup_path(s), mbs_setup_line(node), kind, mbs_setup_node_name(node));
    for (int i = 0; mbs_analysis_types[i]; i++)
      fprintf(c->log, "%s%s", i ? ", " : "", mbs_analysis_types[i]->element);
    fprintf(c->log, ")\n");
    return NULL;
  }
  mbs_analysis* a = calloc(1, sizeof(*a));
  if (!a || !(a->name = strdup(mbs_setup_node_name(node)))) {
    fprintf(c->log, "mbstudy run-tool: out of memory\n");
    free(a);
    return NULL;
  }
  a->type = type;
  a->node = node;
  mbs_error err;
  mbs_error_clear(&err);
  if (mbs_setup_bool(s, node, "on", 1, &a->on, &err) ||
      mbs_setup_bool(s, node, "in_degrees", 1, &a->in_degrees, &err) ||
      mbs_setup_int(s, node, "step_interval", 1, &a->step_interval, &err) ||
      mbs_setup_number(s, node, "start_time", -INFINITY, &a->start_time, &err) ||
      mbs_setup_number(s, node, "end_time", INFINITY, &a->end_time, &err)) {
    fprintf(c->log, "mbstudy run-tool: %s\n", err.message);
    mbs_analysis_free(a);
    return NULL;
  }
  if (a->step_interval < 1) {
    mbs_analysis_fail(c, a, mbs_setup_child(s, node, "step_interval"),
                      "step_interval %ld must be a positive integer", a->step_interval);
    mbs_analysis_free(a);
    return NULL;
  }
  if (!a->on) {  // OpenSim neither runs nor prints it
    mbs_setup_mark_all(s, node);
    return a;
  }
  const double t0 = mbs_table_get(c->states, c->first_row, 0);
  const double t1 = mbs_table_get(c->states, c->last_row, 0);
  if (a->start_time > t0 || a->end_time < t1)
    mbs_analysis_warn(c, a, NULL, "start_time %g and end_time %g are not applied, as in "
                      "OpenSim 4: the analysis records the tool's rows from %g to %g s",
                      a->start_time, a->end_time, t0, t1);
  if (type->create(c, a, &a->data)) {
    mbs_analysis_free(a);
    return NULL;
  }
  mbs_setup_warn_unused_in(s, node, c->log);
  return a;
}

static int add_row(const mbs_analyze_context* c, mbs_analysis* a, double time) {
  for (int k = 0; k < a->ntable; k++) {
    an_table* t = &a->table[k];
    if (t->nrow == t->cap) {
      const int cap = t->cap ? 2 * t->cap : 64;
      double* d = realloc(t->data, (size_t)cap * t->ncol * sizeof(double));
      if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
      t->data = d;
      t->cap = cap;
    }
    double* row = t->data + (size_t)t->nrow * t->ncol;
    row[0] = time;
    for (int i = 1; i < t->ncol; i++) row[i] = NAN;
    t->nrow++;
  }
  a->nrow++;
  return 0;
}

int mbs_analysis_step(const mbs_analyze_context* c, mbs_analysis* a, int row, mbs_state* st) {
  if (!a->on) return 0;
  // AnalysisSet::begin at the first row, end at the last, step(i) in between: Analysis::
  // proceed(i) is on and i % step_interval == 0 (begin and end proceed with step 0)
  if (row != c->first_row && row != c->last_row && row % a->step_interval != 0) return 0;
  if (!a->begun) {
    a->begun = 1;
    if (a->type->begin && a->type->begin(c, a, a->data, st)) return 1;
  }
  if (add_row(c, a, mbs_state_time(st))) return 1;
  return a->type->record(c, a, a->data, st) ? 1 : 0;
}

int mbs_analysis_write(const mbs_analyze_context* c, mbs_analysis* a, const char* dir,
                       const char* base, int quiet) {
  if (!a->on) return 0;
  if (a->type->finish && a->type->finish(c, a, a->data)) return 1;
  if (mbs_make_dirs(dir)) {
    fprintf(c->log, "mbstudy run-tool: cannot create the results directory %s: %s\n", dir,
            strerror(errno));
    return 1;
  }
  for (int k = 0; k < a->ntable; k++) {
    an_table* t = &a->table[k];
    mbs_error err;
    mbs_error_clear(&err);
    mbs_table* out = NULL;
    char* path = mbs_format_string("%s/%s_%s_%s.sto", dir, base, a->name, t->suffix);
    int rc = path ? mbs_table_create(&out, t->title, t->nrow, t->ncol,
                                     (const char* const*)t->labels, &err)
                  : MBS_ERR_NO_MEMORY;
    if (!rc) {
      memcpy(out->data, t->data, (size_t)t->nrow * t->ncol * sizeof(double));
      out->in_degrees = t->in_degrees;
      // the description's lines (OpenSim prints them between inDegrees and endheader)
      char* save = NULL;
      for (char* l = strtok_r(t->description, "\n", &save); l && !rc;
           l = strtok_r(NULL, "\n", &save))
        if (strspn(l, " \t") < strlen(l)) rc = mbs_table_set_meta(out, NULL, l, &err);
      if (!rc) rc = mbs_table_write_sto(out, path, 1, &err);
    }
    if (rc)
      fprintf(c->log, "mbstudy run-tool: writing %s: %s\n", path ? path : "results",
              rc == MBS_ERR_NO_MEMORY && !err.message[0] ? "out of memory" : err.message);
    mbs_table_free(out);
    free(path);
    if (rc) return 1;
  }
  if (!quiet && a->ntable > 0)
    fprintf(c->log, "mbstudy run-tool: wrote %s/%s_%s_%s%s (%d rows)\n", dir, base, a->name,
            a->ntable > 1 ? "*" : a->table[0].suffix, ".sto", a->nrow);
  return 0;
}
