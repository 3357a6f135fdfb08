// Study specifications (YAML), read with libfyaml into mbs_study_spec.
//
// The document is parsed whole (anchors, aliases and merge keys resolved), then walked key by
// key against a fixed schema: every mapping's keys are checked against the list it may hold
// before any value is used, so a misspelled key is an error naming its full path and line,
// never silently ignored. Every message reads "<file>:<line>: <key.path>: <what>".
//
// Statuses: MBS_ERR_PARSE for the form of the document (YAML syntax, unknown or missing keys,
// a mapping, list or text where something else is needed, a number or integer that does not
// parse, keys that exclude each other); MBS_ERR_ARGUMENT for values that are well formed but
// not allowed (out of range, unknown names, duplicates, references to nothing); MBS_ERR_IO
// when the file cannot be read; MBS_ERR_NO_MEMORY.
//
// Limits: a study file is at most SPEC_MAX_BYTES long, and its document at most SPEC_MAX_NODES
// nodes with every alias expanded (each alias counts the nodes it stands for, every time it is
// used). The document is loaded unresolved and counted first (the size of every anchored node
// counted once, so the count is cheap even for a bomb), then resolved: a few hundred bytes of
// nested aliases ("a: &a [x, x, ...], b: &b [*a, *a, ...], ...") would otherwise expand to
// billions of nodes and gigabytes.
//
// Line numbers: libfyaml 0.7 gives marks for scalar tokens only, so a mapping or a list is
// located by its first key or item, and a missing key by the key that holds the mapping.
// io does not depend on studies: distribution and design names are mapped here, and
// distribution numbers are checked here (the same rules as mbs_distribution_check).
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <libfyaml.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mbs/integrate.h"
#include "mbs/spec.h"

#define KP_LEN 200  // key paths ("parameters[12].distribution.values[3]")

// the largest study file, bytes (16 MiB)
#define SPEC_MAX_BYTES ((size_t)16 << 20)
// the most nodes of a study file's document, aliases expanded
#define SPEC_MAX_NODES 1000000L
// the deepest chain of aliases within aliases followed while counting (each may nest 64 levels,
// libfyaml's limit: the count's recursion stays a few thousand calls deep)
#define SPEC_MAX_ALIAS_DEPTH 100

typedef struct spec_ctx {
  const char* file;  // name used in messages
  mbs_error* err;
} spec_ctx;

// "<file>:<line>: <keypath>: <what>"
static int __attribute__((format(printf, 5, 6)))
fail(spec_ctx* c, int code, int line, const char* kp, const char* fmt, ...) {
  char what[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  if (kp && kp[0])
    return MBS_FAIL(c->err, code, kp, "%s:%d: %s: %s", c->file, line, kp, what);
  return MBS_FAIL(c->err, code, c->file, "%s:%d: %s", c->file, line, what);
}

static int no_memory(spec_ctx* c, int line, const char* kp) {
  return fail(c, MBS_ERR_NO_MEMORY, line, kp, "out of memory");
}

// ---------------------------------------------------------------------------------------------
// nodes

// 1-based line of a node: its scalar token, else its first key or item; `fallback` if none
static int node_line(struct fy_node* n, int fallback) {
  if (!n) return fallback;
  switch (fy_node_get_type(n)) {
    case FYNT_SCALAR: {
      struct fy_token* t = fy_node_get_scalar_token(n);
      const struct fy_mark* m = t ? fy_token_start_mark(t) : NULL;
      return m ? m->line + 1 : fallback;
    }
    case FYNT_MAPPING: {
      void* it = NULL;
      struct fy_node_pair* p = fy_node_mapping_iterate(n, &it);
      return p ? node_line(fy_node_pair_key(p), fallback) : fallback;
    }
    case FYNT_SEQUENCE: {
      void* it = NULL;
      struct fy_node* item = fy_node_sequence_iterate(n, &it);
      return item ? node_line(item, fallback) : fallback;
    }
  }
  return fallback;
}

static const char* scalar_text(struct fy_node* n, size_t* len) {
  const char* s = fy_node_get_scalar(n, len);
  if (!s) {
    *len = 0;
    return "";
  }
  return s;
}

// a missing value: `key:` alone, `~` or `null`
static int is_null(struct fy_node* n) {
  if (!n) return 1;
  if (fy_node_get_type(n) != FYNT_SCALAR) return 0;
  if (fy_node_get_style(n) != FYNS_PLAIN && fy_node_get_style(n) != FYNS_ANY) return 0;
  size_t len;
  const char* s = scalar_text(n, &len);
  if (len == 0) return 1;
  static const char* const nulls[] = {"~", "null", "Null", "NULL"};
  for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
    if (len == strlen(nulls[i]) && memcmp(s, nulls[i], len) == 0) return 1;
  return 0;
}

// what a node is, for messages: "a mapping", "a list", "'text'"
static void describe(struct fy_node* n, char* buf, size_t cap) {
  if (is_null(n)) {
    snprintf(buf, cap, "nothing");
  } else if (fy_node_get_type(n) == FYNT_MAPPING) {
    snprintf(buf, cap, "a mapping");
  } else if (fy_node_get_type(n) == FYNT_SEQUENCE) {
    const int k = fy_node_sequence_item_count(n);
    snprintf(buf, cap, "a list of %d item%s", k, k == 1 ? "" : "s");
  } else {
    size_t len;
    const char* s = scalar_text(n, &len);
    const enum fy_node_style st = fy_node_get_style(n);
    const int quoted = st == FYNS_SINGLE_QUOTED || st == FYNS_DOUBLE_QUOTED;
    snprintf(buf, cap, "'%.*s%s'%s", len > 40 ? 40 : (int)len, s, len > 40 ? "..." : "",
             quoted ? " (quoted: a string)" : "");
  }
}

static int expected(spec_ctx* c, struct fy_node* n, int line, const char* kp, const char* what) {
  char got[80];
  describe(n, got, sizeof(got));
  return fail(c, MBS_ERR_PARSE, node_line(n, line), kp, "expected %s, got %s", what, got);
}

// (a key path too long for KP_LEN is cut, ending in "...")
static void kp_cut(char* out, int written) {
  if (written >= KP_LEN) memcpy(out + KP_LEN - 4, "...", 4);
}

static void kp_key(char* out, const char* parent, const char* key) {
  if (parent && parent[0]) kp_cut(out, snprintf(out, KP_LEN, "%s.%s", parent, key));
  else kp_cut(out, snprintf(out, KP_LEN, "%s", key));
}

static void kp_index(char* out, const char* parent, int i) {
  kp_cut(out, snprintf(out, KP_LEN, "%s[%d]", parent, i));
}

// ---------------------------------------------------------------------------------------------
// scalars

// a string: any scalar but null or empty; *out is a new string
static int get_string(spec_ctx* c, struct fy_node* n, int line, const char* kp, char** out) {
  if (is_null(n) || fy_node_get_type(n) != FYNT_SCALAR) return expected(c, n, line, kp, "a name");
  size_t len;
  const char* s = scalar_text(n, &len);
  if (len == 0) return fail(c, MBS_ERR_ARGUMENT, node_line(n, line), kp, "is empty");
  if (memchr(s, '\0', len))
    return fail(c, MBS_ERR_ARGUMENT, node_line(n, line), kp, "contains a NUL character");
  char* d = malloc(len + 1);
  if (!d) return no_memory(c, line, kp);
  memcpy(d, s, len);
  d[len] = '\0';
  *out = d;
  return MBS_OK;
}

// the scalar's text if it is a plain scalar short enough to be a number, else NULL
static const char* number_text(struct fy_node* n, char* buf, size_t cap) {
  if (is_null(n) || fy_node_get_type(n) != FYNT_SCALAR || fy_node_get_style(n) != FYNS_PLAIN)
    return NULL;
  size_t len;
  const char* s = scalar_text(n, &len);
  if (len == 0 || len >= cap) return NULL;
  memcpy(buf, s, len);
  buf[len] = '\0';
  return buf;
}

// a finite number written in decimal: the whole scalar, no quotes, no inf/nan/hex
static int get_number(spec_ctx* c, struct fy_node* n, int line, const char* kp, double* out) {
  char buf[64];
  const char* s = number_text(n, buf, sizeof(buf));
  int ok = s != NULL;
  for (const char* p = s; ok && *p; p++)
    ok = isdigit((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.' || *p == 'e' ||
         *p == 'E';
  if (ok) {
    char* end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    ok = end != s && *end == '\0';
    if (ok && !isfinite(v))
      return fail(c, MBS_ERR_ARGUMENT, node_line(n, line), kp, "%s is not a finite number", s);
    if (ok) {
      *out = v;
      return MBS_OK;
    }
  }
  return expected(c, n, line, kp, "a number");
}

// an integer in [lo, hi], digits with an optional sign
static int get_integer(spec_ctx* c, struct fy_node* n, int line, const char* kp, long lo, long hi,
                       long* out) {
  char buf[64];
  const char* s = number_text(n, buf, sizeof(buf));
  int ok = s != NULL;
  for (const char* p = s; ok && *p; p++)
    ok = isdigit((unsigned char)*p) || ((*p == '+' || *p == '-') && p == s && p[1]);
  if (!ok) return expected(c, n, line, kp, "an integer");
  errno = 0;
  const long v = strtol(s, NULL, 10);
  if (hi == LONG_MAX && errno != ERANGE && v < lo)
    return fail(c, MBS_ERR_ARGUMENT, node_line(n, line), kp, "%s is less than %ld", s, lo);
  if (errno == ERANGE || v < lo || v > hi)
    return fail(c, MBS_ERR_ARGUMENT, node_line(n, line), kp, "%s is out of range (%ld to %ld)",
                s, lo, hi);
  *out = v;
  return MBS_OK;
}

static int get_u64(spec_ctx* c, struct fy_node* n, int line, const char* kp, uint64_t* out) {
  char buf[64];
  const char* s = number_text(n, buf, sizeof(buf));
  int ok = s != NULL;
  for (const char* p = s; ok && *p; p++) ok = isdigit((unsigned char)*p);
  if (!ok) return expected(c, n, line, kp, "a non-negative integer");
  errno = 0;
  const unsigned long long v = strtoull(s, NULL, 10);
  if (errno == ERANGE)
    return fail(c, MBS_ERR_ARGUMENT, node_line(n, line), kp, "%s is larger than 2^64 - 1", s);
  *out = (uint64_t)v;
  return MBS_OK;
}

static int get_bool(spec_ctx* c, struct fy_node* n, int line, const char* kp, int* out) {
  char buf[16];
  const char* s = number_text(n, buf, sizeof(buf));
  if (s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))) {
    *out = 1;
    return MBS_OK;
  }
  if (s && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))) {
    *out = 0;
    return MBS_OK;
  }
  return expected(c, n, line, kp, "true or false");
}

static int is_list(struct fy_node* n) {
  return n && !is_null(n) && fy_node_get_type(n) == FYNT_SEQUENCE;
}

// ---------------------------------------------------------------------------------------------
// mappings

typedef struct field {
  struct fy_node* value;  // NULL if absent (is_null values are kept and rejected by getters)
  int line;               // the key's line
  int present;
} field;

// `keys` as "a, b, c"
static void key_list(const char* const* keys, int nkeys, char* buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < nkeys && used < cap; i++) {
    const int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", keys[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

// Check that `n` is a mapping whose keys are all among `keys` (each at most once) and file the
// values by key index into `out`. `line` is the line of the key that holds the mapping.
static int read_map(spec_ctx* c, struct fy_node* n, int line, const char* kp,
                    const char* const* keys, int nkeys, field* out) {
  char list[256];
  key_list(keys, nkeys, list, sizeof(list));
  for (int i = 0; i < nkeys; i++) out[i] = (field){NULL, line, 0};
  if (is_null(n) || fy_node_get_type(n) != FYNT_MAPPING) {
    char what[300];
    snprintf(what, sizeof(what), "a mapping of (%s)", list);
    return expected(c, n, line, kp, what);
  }
  void* it = NULL;
  struct fy_node_pair* p;
  while ((p = fy_node_mapping_iterate(n, &it))) {
    struct fy_node* k = fy_node_pair_key(p);
    const int kline = node_line(k, line);
    if (is_null(k) || fy_node_get_type(k) != FYNT_SCALAR)
      return fail(c, MBS_ERR_PARSE, kline, kp, "keys must be names (%s)", list);
    size_t len;
    const char* s = scalar_text(k, &len);
    int found = -1;
    for (int i = 0; i < nkeys && found < 0; i++)
      if (len == strlen(keys[i]) && memcmp(s, keys[i], len) == 0) found = i;
    char sub[KP_LEN];
    char name[80];
    snprintf(name, sizeof(name), "%.*s", len > 60 ? 60 : (int)len, s);
    kp_key(sub, kp, name);
    if (found < 0) return fail(c, MBS_ERR_PARSE, kline, sub, "unknown key (%s)", list);
    if (out[found].present)  // libfyaml refuses duplicate keys already; merge keys may not
      return fail(c, MBS_ERR_PARSE, kline, sub, "given twice");
    out[found] = (field){fy_node_pair_value(p), kline, 1};
  }
  return MBS_OK;
}

static int missing(spec_ctx* c, int line, const char* kp, const char* key) {
  char sub[KP_LEN];
  kp_key(sub, kp, key);
  return fail(c, MBS_ERR_PARSE, line, sub, "missing (required)");
}

// ---------------------------------------------------------------------------------------------
// paths

static int ends_with_ci(const char* s, const char* suffix) {
  const size_t n = strlen(s), m = strlen(suffix);
  if (m > n) return 0;
  for (size_t i = 0; i < m; i++)
    if (tolower((unsigned char)s[n - m + i]) != tolower((unsigned char)suffix[i])) return 0;
  return 1;
}

// `rel` against the folder of `spec_path` (absolute paths are kept)
static char* resolve_path(const char* spec_path, const char* rel) {
  const char* slash = strrchr(spec_path, '/');
  const size_t dir = (rel[0] == '/' || !slash) ? 0 : (size_t)(slash - spec_path) + 1;
  const size_t n = strlen(rel);
  char* out = malloc(dir + n + 1);
  if (!out) return NULL;
  memcpy(out, spec_path, dir);
  memcpy(out + dir, rel, n + 1);
  return out;
}

// The folder of OpenSim's published models and data (models/, data/): the environment's
// MBS_SHARED_DIR, else the build's (CMake's MBS_SHARED_DIR, the setting the tests use).
#ifndef MBS_DEFAULT_SHARED_DIR
#define MBS_DEFAULT_SHARED_DIR ""
#endif
static const char* shared_dir(int* from_env) {
  const char* e = getenv("MBS_SHARED_DIR");
  *from_env = e && *e;
  return *from_env ? e : MBS_DEFAULT_SHARED_DIR;
}

// A path with ${MBS_SHARED_DIR} (at its start) replaced by that folder; *out a new string. A
// folder that is not set, or a file not there, is reported with how to set it.
static int expand_shared(spec_ctx* c, int line, const char* kp, const char* in, char** out) {
  static const char var[] = "${MBS_SHARED_DIR}";
  *out = NULL;
  if (strncmp(in, var, sizeof(var) - 1) != 0) {
    *out = strdup(in);
    return *out ? MBS_OK : no_memory(c, line, kp);
  }
  int from_env;
  const char* dir = shared_dir(&from_env);
  if (!*dir)
    return fail(c, MBS_ERR_ARGUMENT, line, kp, "'%.80s': MBS_SHARED_DIR is not set: set it to "
                "the folder holding OpenSim's published models and data (models/, data/), e.g. "
                "export MBS_SHARED_DIR=$HOME/opensim-shared, or configure with cmake "
                "-DMBS_SHARED_DIR=...", in);
  *out = mbs_format_string("%s%s", dir, in + sizeof(var) - 1);
  if (!*out) return no_memory(c, line, kp);
  FILE* f = fopen(*out, "r");
  if (!f)
    return fail(c, MBS_ERR_ARGUMENT, line, kp, "%s not found: MBS_SHARED_DIR (%s, %s) should "
                "name the folder holding OpenSim's published models and data (models/, data/); "
                "set it with export MBS_SHARED_DIR=... or cmake -DMBS_SHARED_DIR=...", *out, dir,
                from_env ? "from the environment" : "from the build");
  fclose(f);
  return MBS_OK;
}

static int get_path(spec_ctx* c, const char* spec_path, field* f, const char* kp, char** out) {
  char* s = NULL;
  int rc = get_string(c, f->value, f->line, kp, &s);
  if (rc) return rc;
  char* x = NULL;
  rc = expand_shared(c, f->line, kp, s, &x);
  free(s);
  if (rc) {
    free(x);
    return rc;
  }
  *out = resolve_path(spec_path, x);
  free(x);
  return *out ? MBS_OK : no_memory(c, f->line, kp);
}

// ---------------------------------------------------------------------------------------------
// simulation and events

static const char* const simulation_keys[] = {"duration",        "accuracy",      "integrator",
                                              "output_interval", "max_wall_time", "events"};
enum { SIM_DURATION, SIM_ACCURACY, SIM_INTEGRATOR, SIM_INTERVAL, SIM_WALL, SIM_EVENTS, SIM_N };

static const char* const event_keys[] = {"name",         "body",       "point",
                                         "height_below", "height_above", "coordinate",
                                         "below",        "above",      "terminate"};
enum {
  EV_NAME, EV_BODY, EV_POINT, EV_HBELOW, EV_HABOVE, EV_COORD, EV_BELOW, EV_ABOVE, EV_TERMINATE,
  EV_N
};

// A list of mappings (events, parameters, scalars): read_list makes its elements of `size`
// bytes and stores them in the pointer at `slot` (&s->events etc.; NULL for an empty list), then
// reads item i with `read` into element i after counting it in *n, so that a spec freed halfway
// frees what was begun.
typedef int (*list_item_reader)(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line,
                                const char* kp, int i);

static int read_list(spec_ctx* c, mbs_study_spec* s, struct fy_node* list, int line,
                     const char* kp, const char* what, size_t size, void* slot, int* n,
                     list_item_reader read) {
  void* mem = NULL;
  memcpy(slot, &mem, sizeof mem);
  if (!is_list(list)) return expected(c, list, line, kp, what);
  const int count = fy_node_sequence_item_count(list);
  if (count > 0 && !(mem = calloc((size_t)count, size))) return no_memory(c, line, kp);
  memcpy(slot, &mem, sizeof mem);
  void* it = NULL;
  struct fy_node* item;
  for (int i = 0; (item = fy_node_sequence_iterate(list, &it)) && i < count; i++) {
    char ikp[KP_LEN];
    kp_index(ikp, kp, i);
    (*n)++;
    const int rc = read(c, s, item, node_line(item, line), ikp, i);
    if (rc) return rc;
  }
  return MBS_OK;
}

// event e (after the `nprev` events before it)
static int read_event(spec_ctx* c, struct fy_node* n, int line, const char* kp,
                      const mbs_spec_event* prev, int nprev, mbs_spec_event* e) {
  field f[EV_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, event_keys, EV_N, f);
  if (rc) return rc;
  e->line = node_line(n, line);
  e->terminate = 1;
  if (!f[EV_NAME].present) return missing(c, e->line, kp, "name");
  kp_key(sub, kp, "name");
  if ((rc = get_string(c, f[EV_NAME].value, f[EV_NAME].line, sub, &e->name))) return rc;
  for (int j = 0; j < nprev; j++)
    if (strcmp(prev[j].name, e->name) == 0)
      return fail(c, MBS_ERR_ARGUMENT, f[EV_NAME].line, sub,
                  "event '%.60s' is defined twice (first on line %d)", e->name, prev[j].line);

  static const int trig[4] = {EV_HBELOW, EV_HABOVE, EV_BELOW, EV_ABOVE};
  static const mbs_spec_event_kind kinds[4] = {
      MBS_SPEC_EVENT_HEIGHT_BELOW, MBS_SPEC_EVENT_HEIGHT_ABOVE,
      MBS_SPEC_EVENT_COORDINATE_BELOW, MBS_SPEC_EVENT_COORDINATE_ABOVE};
  int which = -1;
  for (int k = 0; k < 4; k++) {
    if (!f[trig[k]].present) continue;
    if (which >= 0) {
      kp_key(sub, kp, event_keys[trig[k]]);
      return fail(c, MBS_ERR_PARSE, f[trig[k]].line, sub, "an event has one trigger; '%s' is "
                  "given already", event_keys[trig[which]]);
    }
    which = k;
  }
  if (which < 0)
    return fail(c, MBS_ERR_PARSE, e->line, kp,
                "needs a trigger: height_below or height_above (with body), or below or above "
                "(with coordinate)");
  e->kind = kinds[which];
  kp_key(sub, kp, event_keys[trig[which]]);
  if ((rc = get_number(c, f[trig[which]].value, f[trig[which]].line, sub, &e->value))) return rc;

  if (which < 2) {  // a body station's height
    if (f[EV_COORD].present) {
      kp_key(sub, kp, "coordinate");
      return fail(c, MBS_ERR_PARSE, f[EV_COORD].line, sub, "not used by %s (it needs body)",
                  event_keys[trig[which]]);
    }
    if (!f[EV_BODY].present) return missing(c, e->line, kp, "body");
    kp_key(sub, kp, "body");
    if ((rc = get_string(c, f[EV_BODY].value, f[EV_BODY].line, sub, &e->body))) return rc;
    if (f[EV_POINT].present) {
      kp_key(sub, kp, "point");
      struct fy_node* pt = f[EV_POINT].value;
      if (!is_list(pt) || fy_node_sequence_item_count(pt) != 3)
        return expected(c, pt, f[EV_POINT].line, sub, "a list of 3 numbers [x, y, z]");
      void* it = NULL;
      struct fy_node* x;
      for (int k = 0; (x = fy_node_sequence_iterate(pt, &it)); k++) {
        char item[KP_LEN];
        kp_index(item, sub, k);
        if ((rc = get_number(c, x, f[EV_POINT].line, item, &e->point[k]))) return rc;
      }
    }
  } else {  // a coordinate
    for (int k = EV_BODY; k <= EV_POINT; k++)
      if (f[k].present) {
        kp_key(sub, kp, event_keys[k]);
        return fail(c, MBS_ERR_PARSE, f[k].line, sub, "not used by %s (it needs coordinate)",
                    event_keys[trig[which]]);
      }
    if (!f[EV_COORD].present) return missing(c, e->line, kp, "coordinate");
    kp_key(sub, kp, "coordinate");
    if ((rc = get_string(c, f[EV_COORD].value, f[EV_COORD].line, sub, &e->coordinate))) return rc;
  }
  if (f[EV_TERMINATE].present) {
    kp_key(sub, kp, "terminate");
    if ((rc = get_bool(c, f[EV_TERMINATE].value, f[EV_TERMINATE].line, sub, &e->terminate)))
      return rc;
  }
  return MBS_OK;
}

static int event_item(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line,
                      const char* kp, int i) {
  return read_event(c, n, line, kp, s->events, i, &s->events[i]);
}

static int read_simulation(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line) {
  const char* kp = "simulation";
  field f[SIM_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, simulation_keys, SIM_N, f);
  if (rc) return rc;

  if (!f[SIM_DURATION].present) return missing(c, line, kp, "duration");
  kp_key(sub, kp, "duration");
  if ((rc = get_number(c, f[SIM_DURATION].value, f[SIM_DURATION].line, sub, &s->duration)))
    return rc;
  s->duration_line = f[SIM_DURATION].line;
  if (!(s->duration > 0))
    return fail(c, MBS_ERR_ARGUMENT, f[SIM_DURATION].line, sub, "%g s is not positive",
                s->duration);

  s->accuracy = 1e-3;
  if (f[SIM_ACCURACY].present) {
    kp_key(sub, kp, "accuracy");
    if ((rc = get_number(c, f[SIM_ACCURACY].value, f[SIM_ACCURACY].line, sub, &s->accuracy)))
      return rc;
    if (!(s->accuracy > 0 && s->accuracy < 1))
      return fail(c, MBS_ERR_ARGUMENT, f[SIM_ACCURACY].line, sub,
                  "%g is not between 0 and 1 (exclusive)", s->accuracy);
  }

  kp_key(sub, kp, "integrator");
  if (f[SIM_INTEGRATOR].present) {
    if ((rc = get_string(c, f[SIM_INTEGRATOR].value, f[SIM_INTEGRATOR].line, sub,
                         &s->integrator)))
      return rc;
    if (mbs_integrator_from_name(s->integrator) < 0) {
      char names[200];
      const char* list[MBS_INTEG_COUNT];
      for (int t = 0; t < MBS_INTEG_COUNT; t++) list[t] = mbs_integrator_name(t);
      key_list(list, MBS_INTEG_COUNT, names, sizeof(names));
      return fail(c, MBS_ERR_ARGUMENT, f[SIM_INTEGRATOR].line, sub,
                  "unknown integrator '%.60s' (%s)", s->integrator, names);
    }
  } else {
    s->integrator = strdup("rk_merson");
    if (!s->integrator) return no_memory(c, line, sub);
  }

  s->output_interval = s->duration / 100;
  if (f[SIM_INTERVAL].present) {
    kp_key(sub, kp, "output_interval");
    s->output_interval_line = f[SIM_INTERVAL].line;
    if ((rc = get_number(c, f[SIM_INTERVAL].value, f[SIM_INTERVAL].line, sub,
                         &s->output_interval)))
      return rc;
    if (!(s->output_interval > 0))
      return fail(c, MBS_ERR_ARGUMENT, f[SIM_INTERVAL].line, sub, "%g s is not positive",
                  s->output_interval);
    if (s->output_interval > s->duration)
      return fail(c, MBS_ERR_ARGUMENT, f[SIM_INTERVAL].line, sub,
                  "%g s is longer than the duration (%g s)", s->output_interval, s->duration);
  }

  s->max_wall_time = 0;
  if (f[SIM_WALL].present) {
    kp_key(sub, kp, "max_wall_time");
    if ((rc = get_number(c, f[SIM_WALL].value, f[SIM_WALL].line, sub, &s->max_wall_time)))
      return rc;
    if (s->max_wall_time < 0)
      return fail(c, MBS_ERR_ARGUMENT, f[SIM_WALL].line, sub, "%g s is negative (0: no limit)",
                  s->max_wall_time);
  }

  if (f[SIM_EVENTS].present) {
    kp_key(sub, kp, "events");
    return read_list(c, s, f[SIM_EVENTS].value, f[SIM_EVENTS].line, sub, "a list of events",
                     sizeof(*s->events), &s->events, &s->nevents, event_item);
  }
  return MBS_OK;
}

// ---------------------------------------------------------------------------------------------
// parameters and distributions

static const char* const dist_names[MBS_DIST_COUNT] = {
    "uniform", "normal", "lognormal", "truncated_normal", "discrete", "constant"};
#define DIST_NAME_LIST "uniform, normal, lognormal, truncated_normal, discrete, constant"

// the keys of each distribution type after "type", in the order of its numbers
static const char* const dist_keys[MBS_DIST_COUNT][5] = {
    {"type", "low", "high", NULL, NULL},
    {"type", "mean", "std", NULL, NULL},
    {"type", "mu", "sigma", NULL, NULL},
    {"type", "mean", "std", "low", "high"},
    {"type", "values", NULL, NULL, NULL},
    {"type", "value", NULL, NULL, NULL},
};

// probability that a normal (mean m, std sd) falls in [lo, hi], accurate in both tails
static double normal_mass(double m, double sd, double lo, double hi) {
  const double a = (lo - m) / (sd * sqrt(2.0)), b = (hi - m) / (sd * sqrt(2.0));
  if (a >= 0) return 0.5 * (erfc(a) - erfc(b));
  if (b <= 0) return 0.5 * (erfc(-b) - erfc(-a));
  return 1 - 0.5 * (erfc(-a) + erfc(b));
}

static int read_distribution(spec_ctx* c, struct fy_node* n, int line, const char* kp,
                             mbs_distribution* d) {
  char sub[KP_LEN];
  int rc;
  memset(d, 0, sizeof(*d));
  if (is_null(n) || fy_node_get_type(n) != FYNT_MAPPING)
    return expected(c, n, line, kp, "a mapping {type: ..., ...}");
  // the type first: it says which other keys belong
  struct fy_node* tnode = NULL;
  int tline = line, has_type = 0;
  {
    void* it = NULL;
    struct fy_node_pair* p;
    while ((p = fy_node_mapping_iterate(n, &it))) {
      struct fy_node* k = fy_node_pair_key(p);
      size_t len;
      if (k && fy_node_get_type(k) == FYNT_SCALAR) {
        const char* s = scalar_text(k, &len);
        if (len == 4 && memcmp(s, "type", 4) == 0) {
          tnode = fy_node_pair_value(p);
          tline = node_line(k, line);
          has_type = 1;
        }
      }
    }
  }
  if (!has_type)
    return fail(c, MBS_ERR_PARSE, node_line(n, line), kp, "missing 'type' (%s)", DIST_NAME_LIST);
  kp_key(sub, kp, "type");
  char* tname = NULL;
  if ((rc = get_string(c, tnode, tline, sub, &tname))) return rc;
  int type = -1;
  for (int t = 0; t < MBS_DIST_COUNT; t++)
    if (strcmp(tname, dist_names[t]) == 0) type = t;
  if (type < 0) {
    rc = fail(c, MBS_ERR_ARGUMENT, tline, sub, "unknown distribution '%.60s' (%s)", tname,
              DIST_NAME_LIST);
    free(tname);
    return rc;
  }
  free(tname);
  d->type = (mbs_dist_type)type;

  int nkeys = 0;
  while (nkeys < 5 && dist_keys[type][nkeys]) nkeys++;
  field f[5];
  if ((rc = read_map(c, n, line, kp, dist_keys[type], nkeys, f))) return rc;
  for (int k = 1; k < nkeys; k++)
    if (!f[k].present)
      return fail(c, MBS_ERR_PARSE, node_line(n, line), kp, "a %s distribution needs '%s'",
                  dist_names[type], dist_keys[type][k]);
  double v[4] = {0, 0, 0, 0};
  if (d->type != MBS_DIST_DISCRETE)
    for (int k = 1; k < nkeys; k++) {
      kp_key(sub, kp, dist_keys[type][k]);
      if ((rc = get_number(c, f[k].value, f[k].line, sub, &v[k - 1]))) return rc;
    }
  // the line of the number a check is about
#define DLINE(k) node_line(f[k].value, f[k].line)
  switch (d->type) {
    case MBS_DIST_UNIFORM:
      d->a = v[0];
      d->b = v[1];
      if (!(d->a < d->b)) {
        kp_key(sub, kp, "high");
        return fail(c, MBS_ERR_ARGUMENT, DLINE(2), sub, "high %g is not above low %g", d->b,
                    d->a);
      }
      break;
    case MBS_DIST_NORMAL:
    case MBS_DIST_LOGNORMAL:
      d->a = v[0];
      d->b = v[1];
      if (!(d->b > 0)) {
        kp_key(sub, kp, dist_keys[type][2]);
        return fail(c, MBS_ERR_ARGUMENT, DLINE(2), sub, "%g is not positive", d->b);
      }
      break;
    case MBS_DIST_TRUNCATED_NORMAL:
      d->a = v[0];
      d->b = v[1];
      d->lo = v[2];
      d->hi = v[3];
      if (!(d->b > 0)) {
        kp_key(sub, kp, "std");
        return fail(c, MBS_ERR_ARGUMENT, DLINE(2), sub, "%g is not positive", d->b);
      }
      if (!(d->lo < d->hi)) {
        kp_key(sub, kp, "high");
        return fail(c, MBS_ERR_ARGUMENT, DLINE(4), sub, "high %g is not above low %g", d->hi,
                    d->lo);
      }
      if (!(normal_mass(d->a, d->b, d->lo, d->hi) > 1e-12))
        return fail(c, MBS_ERR_ARGUMENT, node_line(n, line), kp,
                    "[%g, %g] lies too far in the tail of normal(%g, %g) to be sampled", d->lo,
                    d->hi, d->a, d->b);
      break;
    case MBS_DIST_DISCRETE: {
      kp_key(sub, kp, "values");
      struct fy_node* list = f[1].value;
      if (!is_list(list)) return expected(c, list, f[1].line, sub, "a list of numbers");
      const int count = fy_node_sequence_item_count(list);
      if (count < 1)
        return fail(c, MBS_ERR_ARGUMENT, f[1].line, sub, "is empty (give at least one value)");
      double* vals = calloc((size_t)count, sizeof(double));
      if (!vals) return no_memory(c, f[1].line, sub);
      d->values = vals;  // owned by the spec from here on
      void* it = NULL;
      struct fy_node* x;
      for (int i = 0; (x = fy_node_sequence_iterate(list, &it)) && i < count; i++) {
        char item[KP_LEN];
        kp_index(item, sub, i);
        if ((rc = get_number(c, x, f[1].line, item, &vals[i]))) return rc;
        d->nvalues = i + 1;
      }
      break;
    }
    case MBS_DIST_CONSTANT:
      d->a = v[0];
      break;
    default:
      break;
  }
#undef DLINE
  return MBS_OK;
}

static const char* const param_keys[] = {"path", "distribution", "scale", "initial"};
enum { PAR_PATH, PAR_DIST, PAR_SCALE, PAR_INITIAL, PAR_N };

// parameter p (after the `nprev` before it)
static int read_parameter(spec_ctx* c, struct fy_node* n, int line, const char* kp,
                          const mbs_spec_parameter* prev, int nprev, mbs_spec_parameter* p) {
  field f[PAR_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, param_keys, PAR_N, f);
  if (rc) return rc;
  p->line = node_line(n, line);
  if (!f[PAR_PATH].present) return missing(c, p->line, kp, "path");
  kp_key(sub, kp, "path");
  if ((rc = get_string(c, f[PAR_PATH].value, f[PAR_PATH].line, sub, &p->path))) return rc;
  const int pline = f[PAR_PATH].line;
  size_t len = strlen(p->path);
  if (p->path[0] != '/' || len < 2)
    return fail(c, MBS_ERR_ARGUMENT, pline, sub,
                "'%.80s' is not a component path (it starts with '/', e.g. "
                "/bodyset/rod1/mass)", p->path);
  for (size_t i = 0; i < len; i++)
    if (isspace((unsigned char)p->path[i]))
      return fail(c, MBS_ERR_ARGUMENT, pline, sub, "'%.80s' contains white space", p->path);
  // an optional component suffix "[k]"
  char* open = strchr(p->path, '[');
  if (open || strchr(p->path, ']')) {
    const char* q = open ? open + 1 : NULL;
    int ok = q && isdigit((unsigned char)*q) && open > p->path + 1 && open[-1] != '/';
    long k = 0;
    while (ok && isdigit((unsigned char)*q)) {
      k = 10 * k + (*q - '0');
      ok = k <= 1000000;
      q++;
    }
    ok = ok && q[0] == ']' && q[1] == '\0';
    if (!ok)
      return fail(c, MBS_ERR_ARGUMENT, pline, sub,
                  "'%.80s': a component is written as one index at the end, e.g. "
                  "/bodyset/rod1/mass_center[1]", p->path);
    p->component = (int)k;
    *open = '\0';
    len = (size_t)(open - p->path);
  }
  if (p->path[len - 1] == '/')
    return fail(c, MBS_ERR_ARGUMENT, pline, sub, "'%.80s' ends with '/'", p->path);
  for (int j = 0; j < nprev; j++)
    if (prev[j].component == p->component && strcmp(prev[j].path, p->path) == 0)
      return fail(c, MBS_ERR_ARGUMENT, pline, sub, "%.80s%s%.0d%s is given twice (first on line %d)",
                  p->path, p->component ? "[" : "", p->component, p->component ? "]" : "",
                  prev[j].line);

  if (f[PAR_DIST].present && f[PAR_SCALE].present) {
    kp_key(sub, kp, "scale");
    return fail(c, MBS_ERR_PARSE, f[PAR_SCALE].line, sub,
                "give either distribution (the value) or scale (a factor), not both");
  }
  p->initial = NAN;
  if (f[PAR_INITIAL].present) {
    kp_key(sub, kp, "initial");
    if ((rc = get_number(c, f[PAR_INITIAL].value, f[PAR_INITIAL].line, sub, &p->initial)))
      return rc;
    p->initial_line = f[PAR_INITIAL].line;
  }
  // without either, the parameter has the model's value as its nominal value (local
  // sensitivity); the study types that draw values refuse it when they plan
  p->has_dist = f[PAR_DIST].present || f[PAR_SCALE].present;
  if (!p->has_dist) {
    p->dist = (mbs_distribution){.type = MBS_DIST_CONSTANT, .a = NAN};
    return MBS_OK;
  }
  const int which = f[PAR_DIST].present ? PAR_DIST : PAR_SCALE;
  p->is_scale = which == PAR_SCALE;
  kp_key(sub, kp, param_keys[which]);
  return read_distribution(c, f[which].value, f[which].line, sub, &p->dist);
}

static int parameter_item(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line,
                          const char* kp, int i) {
  return read_parameter(c, n, line, kp, s->params, i, &s->params[i]);
}

static int read_parameters(spec_ctx* c, mbs_study_spec* s, struct fy_node* list, int line) {
  return read_list(c, s, list, line, "parameters", "a list of parameters", sizeof(*s->params),
                   &s->params, &s->nparams, parameter_item);
}

// ---------------------------------------------------------------------------------------------
// outputs

static const char* const output_keys[] = {"trajectories", "bodies",         "contacts",
                                          "muscles",      "muscle_outputs", "scalars"};
enum { OUT_TRAJ, OUT_BODIES, OUT_CONTACTS, OUT_MUSCLES, OUT_MUSCLE_OUTPUTS, OUT_SCALARS, OUT_N };

// in the order of the MBS_OUT_* flags
static const char* const traj_names[] = {"q",      "u",        "z",         "com",
                                         "bodies", "contacts", "reactions", "muscles"};
#define NTRAJ ((int)(sizeof(traj_names) / sizeof(traj_names[0])))
#define TRAJ_NAME_LIST "q, u, z, com, bodies, contacts, reactions, muscles"

static const char* const scalar_keys[] = {"name", "of",    "coordinate", "component",
                                          "at",   "event", "output"};
enum { SC_NAME, SC_OF, SC_COORD, SC_COMPONENT, SC_AT, SC_EVENT, SC_OUTPUT, SC_N };

static const char* const at_names[] = {"final", "max", "min", "mean"};

// the fields of mbs_muscle_report a study records, in the order of mbs_spec_muscle_output
static const char* const muscle_output_names[MBS_MUSCLE_OUT_COUNT] = {
    "tendon_force",     "fiber_length",       "fiber_velocity",      "normalized_fiber_length",
    "normalized_fiber_velocity", "activation", "excitation",         "pennation_angle",
    "active_fiber_force", "passive_fiber_force", "muscle_power",     "tendon_length"};
static const char* const muscle_output_units[MBS_MUSCLE_OUT_COUNT] = {
    "N", "m", "m/s", "1", "1", "1", "1", "rad", "N", "N", "W", "m"};
#define MUSCLE_OUTPUT_LIST                                                                     \
  "tendon_force, fiber_length, fiber_velocity, normalized_fiber_length, "                     \
  "normalized_fiber_velocity, activation, excitation, pennation_angle, active_fiber_force, "   \
  "passive_fiber_force, muscle_power, tendon_length"

const char* mbs_spec_muscle_output_name(int field) {
  return field >= 0 && field < MBS_MUSCLE_OUT_COUNT ? muscle_output_names[field] : NULL;
}

const char* mbs_spec_muscle_output_unit(int field) {
  return field >= 0 && field < MBS_MUSCLE_OUT_COUNT ? muscle_output_units[field] : NULL;
}

// a muscle field by name, or -1
static int muscle_output_find(const char* name) {
  for (int k = 0; k < MBS_MUSCLE_OUT_COUNT; k++)
    if (!strcmp(name, muscle_output_names[k])) return k;
  return -1;
}

// a list of distinct names
static int read_names(spec_ctx* c, struct fy_node* list, int line, const char* kp, char*** out,
                      int* nout) {
  if (!is_list(list)) return expected(c, list, line, kp, "a list of names");
  const int count = fy_node_sequence_item_count(list);
  if (count > 0) {
    *out = calloc((size_t)count, sizeof(char*));
    if (!*out) return no_memory(c, line, kp);
  }
  void* it = NULL;
  struct fy_node* item;
  for (int i = 0; (item = fy_node_sequence_iterate(list, &it)) && i < count; i++) {
    char ikp[KP_LEN];
    kp_index(ikp, kp, i);
    int rc = get_string(c, item, line, ikp, &(*out)[i]);
    if (rc) return rc;
    *nout = i + 1;
    for (int j = 0; j < i; j++)
      if (strcmp((*out)[j], (*out)[i]) == 0)
        return fail(c, MBS_ERR_ARGUMENT, node_line(item, line), ikp, "'%.60s' is listed twice",
                    (*out)[i]);
  }
  return MBS_OK;
}

// scalar s->scalars[nprev] (after the `nprev` before it)
static int read_scalar(spec_ctx* c, const mbs_study_spec* s, struct fy_node* n, int line,
                       const char* kp, int nprev, mbs_spec_scalar* sc) {
  field f[SC_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, scalar_keys, SC_N, f);
  if (rc) return rc;
  sc->line = node_line(n, line);
  if (!f[SC_NAME].present) return missing(c, sc->line, kp, "name");
  kp_key(sub, kp, "name");
  if ((rc = get_string(c, f[SC_NAME].value, f[SC_NAME].line, sub, &sc->name))) return rc;
  for (int j = 0; j < nprev; j++)
    if (strcmp(s->scalars[j].name, sc->name) == 0)
      return fail(c, MBS_ERR_ARGUMENT, f[SC_NAME].line, sub,
                  "scalar '%.60s' is defined twice (first on line %d)", sc->name,
                  s->scalars[j].line);

  if (f[SC_EVENT].present) {
    for (int k = SC_OF; k < SC_N; k++)
      if (k != SC_EVENT && f[k].present) {
        kp_key(sub, kp, scalar_keys[k]);
        return fail(c, MBS_ERR_PARSE, f[k].line, sub,
                    "an event scalar is the event's time; '%s' does not apply", scalar_keys[k]);
      }
    kp_key(sub, kp, "event");
    if ((rc = get_string(c, f[SC_EVENT].value, f[SC_EVENT].line, sub, &sc->event))) return rc;
    for (int j = 0; j < s->nevents; j++)
      if (strcmp(s->events[j].name, sc->event) == 0) return MBS_OK;
    return fail(c, MBS_ERR_ARGUMENT, node_line(f[SC_EVENT].value, f[SC_EVENT].line), sub,
                "no event named '%.60s' in simulation.events", sc->event);
  }
  sc->output = -1;
  if (!f[SC_OF].present)
    return fail(c, MBS_ERR_PARSE, sc->line, kp,
                "needs 'of' (q, u, com, body:<name>, muscle:<name>) or 'event' (an event's "
                "time)");
  kp_key(sub, kp, "of");
  if ((rc = get_string(c, f[SC_OF].value, f[SC_OF].line, sub, &sc->of))) return rc;
  const int is_coord = !strcmp(sc->of, "q") || !strcmp(sc->of, "u");
  const int is_body = !strncmp(sc->of, "body:", 5);
  const int is_muscle = !strncmp(sc->of, "muscle:", 7);
  if (is_body && sc->of[5] == '\0')
    return fail(c, MBS_ERR_ARGUMENT, f[SC_OF].line, sub, "'body:' needs a body name");
  if (is_muscle && sc->of[7] == '\0')
    return fail(c, MBS_ERR_ARGUMENT, f[SC_OF].line, sub, "'muscle:' needs a muscle name");
  if (is_muscle && strpbrk(sc->of + 7, "*?["))
    return fail(c, MBS_ERR_ARGUMENT, f[SC_OF].line, sub,
                "'%.60s': a scalar is one muscle's (no * or ?)", sc->of);
  if (!is_coord && !is_body && !is_muscle && strcmp(sc->of, "com"))
    return fail(c, MBS_ERR_ARGUMENT, f[SC_OF].line, sub,
                "unknown quantity '%.60s' (q, u, com, body:<name>, muscle:<name>)", sc->of);
  if (!is_muscle && f[SC_OUTPUT].present) {
    kp_key(sub, kp, "output");
    return fail(c, MBS_ERR_PARSE, f[SC_OUTPUT].line, sub,
                "only with of: muscle:<name> (a muscle's field)");
  }
  if (is_muscle) {
    for (int k = SC_COORD; k <= SC_COMPONENT; k++)
      if (f[k].present) {
        kp_key(sub, kp, scalar_keys[k]);
        return fail(c, MBS_ERR_PARSE, f[k].line, sub,
                    "not used with of: %.60s (give output: %s)", sc->of, MUSCLE_OUTPUT_LIST);
      }
    if (!f[SC_OUTPUT].present) return missing(c, sc->line, kp, "output");
    kp_key(sub, kp, "output");
    char* field = NULL;
    if ((rc = get_string(c, f[SC_OUTPUT].value, f[SC_OUTPUT].line, sub, &field))) return rc;
    sc->output = muscle_output_find(field);
    if (sc->output < 0)
      rc = fail(c, MBS_ERR_ARGUMENT, f[SC_OUTPUT].line, sub,
                "unknown muscle output '%.60s' (%s)", field, MUSCLE_OUTPUT_LIST);
    free(field);
    if (rc) return rc;
  } else if (is_coord) {
    if (f[SC_COMPONENT].present) {
      kp_key(sub, kp, "component");
      return fail(c, MBS_ERR_PARSE, f[SC_COMPONENT].line, sub,
                  "not used with of: %s (give coordinate)", sc->of);
    }
    if (!f[SC_COORD].present) return missing(c, sc->line, kp, "coordinate");
    kp_key(sub, kp, "coordinate");
    if ((rc = get_string(c, f[SC_COORD].value, f[SC_COORD].line, sub, &sc->coordinate)))
      return rc;
  } else {
    if (f[SC_COORD].present) {
      kp_key(sub, kp, "coordinate");
      return fail(c, MBS_ERR_PARSE, f[SC_COORD].line, sub,
                  "not used with of: %.60s (give component 0, 1 or 2)", sc->of);
    }
    if (!f[SC_COMPONENT].present) return missing(c, sc->line, kp, "component");
    kp_key(sub, kp, "component");
    long k = 0;
    if ((rc = get_integer(c, f[SC_COMPONENT].value, f[SC_COMPONENT].line, sub, 0, 2, &k)))
      return rc;
    sc->component = (int)k;
  }
  sc->at = MBS_SPEC_AT_FINAL;
  if (f[SC_AT].present) {
    kp_key(sub, kp, "at");
    char* at = NULL;
    if ((rc = get_string(c, f[SC_AT].value, f[SC_AT].line, sub, &at))) return rc;
    int found = -1;
    for (int k = 0; k < 4; k++)
      if (!strcmp(at, at_names[k])) found = k;
    if (found < 0) {
      rc = fail(c, MBS_ERR_ARGUMENT, f[SC_AT].line, sub,
                "unknown reduction '%.60s' (final, max, min, mean)", at);
      free(at);
      return rc;
    }
    free(at);
    sc->at = (mbs_spec_reduce)found;
  }
  return MBS_OK;
}

static int scalar_item(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line,
                       const char* kp, int i) {
  return read_scalar(c, s, n, line, kp, i, &s->scalars[i]);
}

// outputs.muscles: a list of muscle names or patterns (or one), each with its line
static int read_muscles(spec_ctx* c, mbs_study_spec* s, field* f, const char* kp) {
  s->muscles_line = f->line;
  struct fy_node* list = f->value;
  const int one = !is_list(list);
  if (one && (is_null(list) || fy_node_get_type(list) != FYNT_SCALAR))
    return expected(c, list, f->line, kp, "a list of muscle names or patterns");
  const int count = one ? 1 : fy_node_sequence_item_count(list);
  if (count > 0) {
    s->muscles = calloc((size_t)count, sizeof(char*));
    s->muscle_lines = calloc((size_t)count, sizeof(int));
    if (!s->muscles || !s->muscle_lines) return no_memory(c, f->line, kp);
  }
  for (int i = 0; i < count; i++) {
    struct fy_node* item = one ? list : fy_node_sequence_get_by_index(list, i);
    char ikp[KP_LEN];
    if (one) snprintf(ikp, sizeof(ikp), "%s", kp);
    else kp_index(ikp, kp, i);
    const int iline = node_line(item, f->line);
    int rc = get_string(c, item, f->line, ikp, &s->muscles[i]);
    if (rc) return rc;
    s->muscle_lines[i] = iline;
    s->nmuscles = i + 1;
    if (strchr(s->muscles[i], '/'))
      return fail(c, MBS_ERR_ARGUMENT, iline, ikp,
                  "'%.60s': a muscle's name (the last segment of /forceset/<muscle>)",
                  s->muscles[i]);
    for (int j = 0; j < i; j++)
      if (strcmp(s->muscles[j], s->muscles[i]) == 0)
        return fail(c, MBS_ERR_ARGUMENT, iline, ikp, "'%.60s' is listed twice", s->muscles[i]);
  }
  return MBS_OK;
}

// outputs.muscle_outputs: a list of muscle fields (or one)
static int read_muscle_outputs(spec_ctx* c, mbs_study_spec* s, field* f, const char* kp) {
  struct fy_node* list = f->value;
  const int one = !is_list(list);
  if (one && (is_null(list) || fy_node_get_type(list) != FYNT_SCALAR))
    return expected(c, list, f->line, kp, "a list of muscle outputs");
  const int count = one ? 1 : fy_node_sequence_item_count(list);
  if (count == 0)
    return fail(c, MBS_ERR_ARGUMENT, f->line, kp, "is empty (%s)", MUSCLE_OUTPUT_LIST);
  for (int i = 0; i < count; i++) {
    struct fy_node* item = one ? list : fy_node_sequence_get_by_index(list, i);
    char ikp[KP_LEN];
    if (one) snprintf(ikp, sizeof(ikp), "%s", kp);
    else kp_index(ikp, kp, i);
    const int iline = node_line(item, f->line);
    char* name = NULL;
    int rc = get_string(c, item, f->line, ikp, &name);
    if (rc) return rc;
    const int k = muscle_output_find(name);
    if (k < 0)
      rc = fail(c, MBS_ERR_ARGUMENT, iline, ikp, "unknown muscle output '%.60s' (%s)", name,
                MUSCLE_OUTPUT_LIST);
    for (int j = 0; !rc && j < s->nmuscle_outputs; j++)
      if (s->muscle_outputs[j] == k)
        rc = fail(c, MBS_ERR_ARGUMENT, iline, ikp, "'%.60s' is listed twice", name);
    free(name);
    if (rc) return rc;
    s->muscle_outputs[s->nmuscle_outputs++] = k;
  }
  return MBS_OK;
}

static int read_outputs(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line) {
  const char* kp = "outputs";
  field f[OUT_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, output_keys, OUT_N, f);
  if (rc) return rc;
  if (f[OUT_MUSCLES].present) {
    kp_key(sub, kp, "muscles");
    if ((rc = read_muscles(c, s, &f[OUT_MUSCLES], sub))) return rc;
  }
  if (f[OUT_MUSCLE_OUTPUTS].present) {
    kp_key(sub, kp, "muscle_outputs");
    if ((rc = read_muscle_outputs(c, s, &f[OUT_MUSCLE_OUTPUTS], sub))) return rc;
  }
  if (f[OUT_BODIES].present) {
    kp_key(sub, kp, "bodies");
    if ((rc = read_names(c, f[OUT_BODIES].value, f[OUT_BODIES].line, sub, &s->bodies,
                         &s->nbodies)))
      return rc;
  }
  if (f[OUT_CONTACTS].present) {
    kp_key(sub, kp, "contacts");
    if ((rc = read_names(c, f[OUT_CONTACTS].value, f[OUT_CONTACTS].line, sub, &s->contacts,
                         &s->ncontacts)))
      return rc;
  }
  if (f[OUT_TRAJ].present) {
    kp_key(sub, kp, "trajectories");
    struct fy_node* list = f[OUT_TRAJ].value;
    if (!is_list(list)) return expected(c, list, f[OUT_TRAJ].line, sub, "a list of quantities");
    s->outputs = 0;
    void* it = NULL;
    struct fy_node* item;
    for (int i = 0; (item = fy_node_sequence_iterate(list, &it)); i++) {
      char ikp[KP_LEN];
      kp_index(ikp, sub, i);
      const int iline = node_line(item, f[OUT_TRAJ].line);
      char* name = NULL;
      if ((rc = get_string(c, item, f[OUT_TRAJ].line, ikp, &name))) return rc;
      int found = -1;
      for (int k = 0; k < NTRAJ; k++)
        if (!strcmp(name, traj_names[k])) found = k;
      if (found < 0) {
        rc = fail(c, MBS_ERR_ARGUMENT, iline, ikp, "unknown quantity '%.60s' (%s)", name,
                  TRAJ_NAME_LIST);
        free(name);
        return rc;
      }
      free(name);
      const unsigned flag = 1u << found;
      if (s->outputs & flag)
        return fail(c, MBS_ERR_ARGUMENT, iline, ikp, "'%s' is listed twice", traj_names[found]);
      s->outputs |= flag;
      if (flag == MBS_OUT_BODIES && s->nbodies == 0)
        return fail(c, MBS_ERR_ARGUMENT, iline, ikp,
                    "'bodies' needs the bodies listed in outputs.bodies");
      if (flag == MBS_OUT_CONTACTS && s->ncontacts == 0)
        return fail(c, MBS_ERR_ARGUMENT, iline, ikp,
                    "'contacts' needs the contact forces listed in outputs.contacts");
      if (flag == MBS_OUT_MUSCLES && s->nmuscles == 0)
        return fail(c, MBS_ERR_ARGUMENT, iline, ikp,
                    "'muscles' needs the muscles listed in outputs.muscles (\"*\": every "
                    "muscle)");
    }
  }
  if (s->nmuscles > 0 && !(s->outputs & MBS_OUT_MUSCLES)) {
    kp_key(sub, kp, "muscles");
    return fail(c, MBS_ERR_ARGUMENT, f[OUT_MUSCLES].line, sub,
                "muscles are listed but 'muscles' is not in outputs.trajectories");
  }
  if (s->nmuscle_outputs > 0 && !(s->outputs & MBS_OUT_MUSCLES)) {
    kp_key(sub, kp, "muscle_outputs");
    return fail(c, MBS_ERR_ARGUMENT, f[OUT_MUSCLE_OUTPUTS].line, sub,
                "muscle outputs are listed but 'muscles' is not in outputs.trajectories");
  }
  if ((s->outputs & MBS_OUT_MUSCLES) && s->nmuscle_outputs == 0) {
    static const int dflt[3] = {MBS_MUSCLE_OUT_TENDON_FORCE, MBS_MUSCLE_OUT_ACTIVATION,
                                MBS_MUSCLE_OUT_FIBER_LENGTH};
    memcpy(s->muscle_outputs, dflt, sizeof(dflt));
    s->nmuscle_outputs = 3;
  }
  if (s->nbodies > 0 && !(s->outputs & MBS_OUT_BODIES)) {
    kp_key(sub, kp, "bodies");
    return fail(c, MBS_ERR_ARGUMENT, f[OUT_BODIES].line, sub,
                "bodies are listed but 'bodies' is not in outputs.trajectories");
  }
  if (s->ncontacts > 0 && !(s->outputs & MBS_OUT_CONTACTS)) {
    kp_key(sub, kp, "contacts");
    return fail(c, MBS_ERR_ARGUMENT, f[OUT_CONTACTS].line, sub,
                "contacts are listed but 'contacts' is not in outputs.trajectories");
  }
  if (f[OUT_SCALARS].present) {
    kp_key(sub, kp, "scalars");
    return read_list(c, s, f[OUT_SCALARS].value, f[OUT_SCALARS].line, sub, "a list of scalars",
                     sizeof(*s->scalars), &s->scalars, &s->nscalars, scalar_item);
  }
  return MBS_OK;
}

// ---------------------------------------------------------------------------------------------
// posture studies

#define MBS_SPEC_MAX_LEVELS 100000

// a grid axis written as a range {from, to, step}: from, from + step, ... up to to (included
// when it lies on the steps, within 1e-9 of a step)
static int get_range(spec_ctx* c, field* f, const char* kp, double lo, double hi, double** out,
                     int* n) {
  static const char* const keys[] = {"from", "to", "step"};
  field g[3];
  int rc = read_map(c, f->value, f->line, kp, keys, 3, g);
  if (rc) return rc;
  double v[3];
  for (int i = 0; i < 3; i++) {
    char sub[KP_LEN];
    kp_key(sub, kp, keys[i]);
    if (!g[i].present) return fail(c, MBS_ERR_PARSE, f->line, sub, "missing (from, to, step)");
    if ((rc = get_number(c, g[i].value, g[i].line, sub, &v[i]))) return rc;
    if (i < 2 && !(v[i] >= lo && v[i] <= hi))
      return fail(c, MBS_ERR_ARGUMENT, g[i].line, sub, "%g is outside %g .. %g", v[i], lo, hi);
  }
  char sub[KP_LEN];
  kp_key(sub, kp, "step");
  if (!(v[2] > 0)) return fail(c, MBS_ERR_ARGUMENT, g[2].line, sub, "%g is not positive", v[2]);
  if (v[1] < v[0])
    return fail(c, MBS_ERR_ARGUMENT, g[1].line, kp, "to (%g) is below from (%g)", v[1], v[0]);
  const double count = floor((v[1] - v[0]) / v[2] + 1e-9) + 1;
  if (count > MBS_SPEC_MAX_LEVELS)
    return fail(c, MBS_ERR_ARGUMENT, g[2].line, sub, "%g levels from %g to %g by %g: at most %d",
                count, v[0], v[1], v[2], MBS_SPEC_MAX_LEVELS);
  double* x = malloc((size_t)count * sizeof(double));
  if (!x) return no_memory(c, f->line, kp);
  for (int k = 0; k < (int)count; k++) x[k] = fmin(v[0] + k * v[2], v[1]);
  *out = x;
  *n = (int)count;
  return MBS_OK;
}

// a non-empty list of numbers in [lo, hi], or of names from `names` (values `name_values`),
// no value twice; or a range {from, to, step} of numbers (get_range)
static int get_levels(spec_ctx* c, field* f, const char* kp, double lo, double hi,
                      const char* const* names, const double* name_values, int nnames,
                      double** out, int* n) {
  struct fy_node* list = f->value;
  if (lo <= hi && !is_null(list) && fy_node_get_type(list) == FYNT_MAPPING)
    return get_range(c, f, kp, lo, hi, out, n);
  if (!is_list(list) || fy_node_sequence_item_count(list) < 1)
    return expected(c, list, f->line, kp, "a non-empty list or a range {from, to, step}");
  const int count = fy_node_sequence_item_count(list);
  double* v = calloc((size_t)count, sizeof(double));
  if (!v) return no_memory(c, f->line, kp);
  void* it = NULL;
  struct fy_node* x;
  int rc = MBS_OK;
  for (int k = 0; rc == MBS_OK && (x = fy_node_sequence_iterate(list, &it)); k++) {
    char item[KP_LEN];
    kp_index(item, kp, k);
    const int line = node_line(x, f->line);
    int named = 0;
    if (nnames && !is_null(x) && fy_node_get_type(x) == FYNT_SCALAR) {
      size_t len;
      const char* t = scalar_text(x, &len);
      for (int j = 0; j < nnames; j++)
        if (len == strlen(names[j]) && !memcmp(t, names[j], len)) {
          v[k] = name_values[j];
          named = 1;
        }
      if (!named && (lo > hi || (len > 0 && !isdigit((unsigned char)t[0]) && t[0] != '-' &&
                                  t[0] != '+' && t[0] != '.'))) {
        char list_s[200];
        key_list(names, nnames, list_s, sizeof(list_s));
        rc = fail(c, MBS_ERR_ARGUMENT, line, item, "unknown value '%.*s' (%s%s)",
                  len > 40 ? 40 : (int)len, t, list_s, lo < hi ? ", or a number" : "");
        break;
      }
    }
    if (!named) {
      if ((rc = get_number(c, x, line, item, &v[k]))) break;
      if (!(v[k] >= lo && v[k] <= hi)) {
        rc = fail(c, MBS_ERR_ARGUMENT, line, item, "%g is outside %g .. %g", v[k], lo, hi);
        break;
      }
    }
    for (int j = 0; j < k && rc == MBS_OK; j++)
      if (v[j] == v[k]) rc = fail(c, MBS_ERR_ARGUMENT, line, item, "%g is given twice", v[k]);
  }
  if (rc) {
    free(v);
    return rc;
  }
  *out = v;
  *n = count;
  return MBS_OK;
}

// optional number in [lo, hi] (lo_open: > lo)
static int get_bounded(spec_ctx* c, field* f, const char* parent, const char* key, double lo,
                       int lo_open, double hi, double* out) {
  if (!f->present) return MBS_OK;
  char sub[KP_LEN];
  kp_key(sub, parent, key);
  int rc = get_number(c, f->value, f->line, sub, out);
  if (rc) return rc;
  if ((lo_open ? !(*out > lo) : !(*out >= lo)) || !(*out <= hi)) {
    if (lo_open)
      return fail(c, MBS_ERR_ARGUMENT, node_line(f->value, f->line), sub,
                  "%g is outside %g .. %g (%g excluded)", *out, lo, hi, lo);
    return fail(c, MBS_ERR_ARGUMENT, node_line(f->value, f->line), sub,
                "%g is outside %g .. %g", *out, lo, hi);
  }
  return MBS_OK;
}

// a pair of names [right, left]
static int get_pair(spec_ctx* c, field* f, const char* kp, char* out[2]) {
  struct fy_node* list = f->value;
  if (!is_list(list) || fy_node_sequence_item_count(list) != 2)
    return expected(c, list, f->line, kp, "a list of 2 names [right, left]");
  void* it = NULL;
  struct fy_node* x;
  for (int k = 0; (x = fy_node_sequence_iterate(list, &it)); k++) {
    char item[KP_LEN];
    kp_index(item, kp, k);
    free(out[k]);
    out[k] = NULL;
    const int rc = get_string(c, x, f->line, item, &out[k]);
    if (rc) return rc;
  }
  return MBS_OK;
}

static const char* const posture_keys[] = {
    "knee_flexion", "direction", "magnitude", "mode",       "perturbation",     "fall_fraction",
    "com_ahead",    "subject",   "contact",   "feet",       "trunk_lean",       "trunk_lean_ratio"};
enum { PO_KNEE, PO_DIR, PO_MAG, PO_MODE, PO_PERT, PO_FALL, PO_COM, PO_SUBJECT, PO_CONTACT,
       PO_FEET, PO_LEAN, PO_LEAN_RATIO, PO_N };
static const char* const perturbation_keys[] = {"duration", "profile"};
static const char* const subject_keys[] = {"height", "mass"};
static const char* const contact_keys[] = {"sphere_radius",    "stiffness",
                                           "dissipation",      "static_friction",
                                           "dynamic_friction", "viscous_friction",
                                           "transition_velocity"};
static const char* const feet_keys[] = {"bodies", "toes", "foot_length", "sole",
                                        "remove_muscles"};

static int read_posture(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line) {
  const char* kp = "posture";
  field f[PO_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, posture_keys, PO_N, f);
  if (rc) return rc;
  mbs_spec_posture* p = calloc(1, sizeof(*p));
  if (!p) return no_memory(c, line, kp);
  s->posture = p;
  p->line = line;
  p->perturbation_duration = 0.5;
  p->fall_fraction = 0.75;
  p->height = 1.75;
  p->mass = 75;
  p->sphere_radius = p->stiffness = p->dissipation = p->static_friction = NAN;
  p->dynamic_friction = p->viscous_friction = p->transition_velocity = NAN;
  p->sole = NAN;
  p->remove_muscles = 1;
  static const char* const required[] = {"knee_flexion", "magnitude"};
  if (!f[PO_KNEE].present) return missing(c, line, kp, required[0]);
  if (!f[PO_MAG].present) return missing(c, line, kp, required[1]);
  kp_key(sub, kp, "knee_flexion");
  if ((rc = get_levels(c, &f[PO_KNEE], sub, 0, 100, NULL, NULL, 0, &p->knee_flexion, &p->nknee)))
    return rc;
  kp_key(sub, kp, "magnitude");
  if ((rc = get_levels(c, &f[PO_MAG], sub, 0, 2, NULL, NULL, 0, &p->magnitude, &p->nmagnitude)))
    return rc;
  static const char* const dir_names[] = {"anterior", "posterior", "right", "left"};
  static const double dir_values[] = {0, 180, 90, -90};
  if (f[PO_DIR].present) {
    kp_key(sub, kp, "direction");
    if ((rc = get_levels(c, &f[PO_DIR], sub, -360, 360, dir_names, dir_values, 4, &p->direction,
                         &p->ndirection)))
      return rc;
  } else {
    p->direction = malloc(2 * sizeof(double));
    if (!p->direction) return no_memory(c, line, kp);
    p->direction[0] = 0;
    p->direction[1] = 180;
    p->ndirection = 2;
  }
  p->mode[0] = 0;
  p->mode[1] = 1;
  p->nmode = 2;
  if (f[PO_MODE].present) {
    static const char* const mode_names[] = {"free", "locked", "feedback", "muscles"};
    static const double mode_values[] = {0, 1, 2, 3};
    double* m = NULL;
    int nm = 0;
    kp_key(sub, kp, "mode");
    if ((rc = get_levels(c, &f[PO_MODE], sub, 1, 0, mode_names, mode_values, 4, &m, &nm)))
      return rc;
    if (nm > 4) {
      free(m);
      return fail(c, MBS_ERR_ARGUMENT, f[PO_MODE].line, sub, "%d modes given: each of free, "
                  "locked, feedback and muscles at most once", nm);
    }
    p->nmode = nm;
    for (int k = 0; k < nm; k++) p->mode[k] = (int)m[k];
    free(m);
  }
  if (f[PO_PERT].present) {
    field g[2];
    kp_key(sub, kp, "perturbation");
    if ((rc = read_map(c, f[PO_PERT].value, f[PO_PERT].line, sub, perturbation_keys, 2, g)))
      return rc;
    if ((rc = get_bounded(c, &g[0], sub, "duration", 0, 1, 100, &p->perturbation_duration)))
      return rc;
    if (g[1].present) {
      char sub2[KP_LEN];
      kp_key(sub2, sub, "profile");
      if ((rc = get_string(c, g[1].value, g[1].line, sub2, &p->profile))) return rc;
      if (strcmp(p->profile, "smooth_step") && strcmp(p->profile, "cosine"))
        return fail(c, MBS_ERR_ARGUMENT, g[1].line, sub2,
                    "unknown profile '%.60s' (smooth_step, cosine)", p->profile);
    }
  }
  if ((rc = get_bounded(c, &f[PO_FALL], kp, "fall_fraction", 0, 1, 0.999, &p->fall_fraction)))
    return rc;
  if ((rc = get_bounded(c, &f[PO_COM], kp, "com_ahead", 0, 0, 1, &p->com_ahead)) ||
      (rc = get_bounded(c, &f[PO_LEAN], kp, "trunk_lean", -20, 0, 60, &p->trunk_lean)) ||
      (rc = get_bounded(c, &f[PO_LEAN_RATIO], kp, "trunk_lean_ratio", 0, 0, 1.5,
                        &p->trunk_lean_ratio)))
    return rc;
  if (f[PO_SUBJECT].present) {
    field g[2];
    kp_key(sub, kp, "subject");
    if ((rc = read_map(c, f[PO_SUBJECT].value, f[PO_SUBJECT].line, sub, subject_keys, 2, g)) ||
        (rc = get_bounded(c, &g[0], sub, "height", 0.5, 1, 3, &p->height)) ||
        (rc = get_bounded(c, &g[1], sub, "mass", 5, 1, 500, &p->mass)))
      return rc;
  }
  if (f[PO_CONTACT].present) {
    field g[7];
    kp_key(sub, kp, "contact");
    if ((rc = read_map(c, f[PO_CONTACT].value, f[PO_CONTACT].line, sub, contact_keys, 7, g)) ||
        (rc = get_bounded(c, &g[0], sub, "sphere_radius", 0, 1, 1, &p->sphere_radius)) ||
        (rc = get_bounded(c, &g[1], sub, "stiffness", 0, 1, 1e15, &p->stiffness)) ||
        (rc = get_bounded(c, &g[2], sub, "dissipation", 0, 0, 1e6, &p->dissipation)) ||
        (rc = get_bounded(c, &g[3], sub, "static_friction", 0, 0, 10, &p->static_friction)) ||
        (rc = get_bounded(c, &g[4], sub, "dynamic_friction", 0, 0, 10, &p->dynamic_friction)) ||
        (rc = get_bounded(c, &g[5], sub, "viscous_friction", 0, 0, 1e6, &p->viscous_friction)) ||
        (rc = get_bounded(c, &g[6], sub, "transition_velocity", 0, 1, 100,
                          &p->transition_velocity)))
      return rc;
  }
  if (f[PO_FEET].present) {
    field g[5];
    kp_key(sub, kp, "feet");
    if ((rc = read_map(c, f[PO_FEET].value, f[PO_FEET].line, sub, feet_keys, 5, g))) return rc;
    char sub2[KP_LEN];
    if (g[0].present) {
      kp_key(sub2, sub, "bodies");
      if ((rc = get_pair(c, &g[0], sub2, p->feet))) return rc;
    }
    if (g[1].present) {
      kp_key(sub2, sub, "toes");
      if ((rc = get_pair(c, &g[1], sub2, p->toes))) return rc;
    }
    if ((rc = get_bounded(c, &g[2], sub, "foot_length", 0, 1, 1, &p->foot_length)) ||
        (rc = get_bounded(c, &g[3], sub, "sole", -1, 0, 1, &p->sole)))
      return rc;
    if (g[4].present) {
      kp_key(sub2, sub, "remove_muscles");
      if ((rc = get_bool(c, g[4].value, g[4].line, sub2, &p->remove_muscles))) return rc;
    }
    // the muscles mode keeps them (by default; asked to remove them, it cannot run)
    int muscles = 0;
    for (int k = 0; k < p->nmode; k++) muscles = muscles || p->mode[k] == 3;
    if (muscles && g[4].present && p->remove_muscles)
      return fail(c, MBS_ERR_ARGUMENT, g[4].line, sub2, "the muscles mode needs the model's "
                  "muscles: remove_muscles must be false (or left out)");
    if (!s->model_path)
      return fail(c, MBS_ERR_ARGUMENT, f[PO_FEET].line, sub,
                  "only for .osim models (the built-in human has its own feet)");
  }
  for (int k = 0; k < p->nmode; k++)
    if (p->mode[k] == 3) p->remove_muscles = 0;
  return MBS_OK;
}

// the grid: every parameter discrete or constant; the count is the product of the levels (with
// the posture axes)
static int check_grid(spec_ctx* c, mbs_study_spec* s, int count_given, int line) {
  long n = 1;
  const long max = 1L << 40;
  for (int i = 0; i < s->nparams; i++) {
    const mbs_spec_parameter* q = &s->params[i];
    int levels = 1;
    if (q->dist.type == MBS_DIST_DISCRETE) levels = q->dist.nvalues;
    else if (q->dist.type != MBS_DIST_CONSTANT)
      return fail(c, MBS_ERR_ARGUMENT, q->line, "parameters",
                  "'%s': a grid needs discrete or constant values, not a %s distribution",
                  q->path, dist_names[q->dist.type]);
    if (levels < 1 || n > max / levels)
      return fail(c, MBS_ERR_ARGUMENT, line, "sampling", "the grid has more than 2^40 points");
    n *= levels;
  }
  if (s->posture) {
    const int axes[4] = {s->posture->nmode, s->posture->nknee, s->posture->ndirection,
                         s->posture->nmagnitude};
    for (int k = 0; k < 4; k++) {
      if (n > max / axes[k])
        return fail(c, MBS_ERR_ARGUMENT, line, "posture", "the grid has more than 2^40 points");
      n *= axes[k];
    }
  }
  if (count_given && s->count != n)
    return fail(c, MBS_ERR_ARGUMENT, line, "sampling.count",
                "%ld does not match the grid's %ld points (leave count out)", s->count, n);
  s->count = n;
  return MBS_OK;
}

// ---------------------------------------------------------------------------------------------
// sampling and execution

static const char* const sampling_keys[] = {"count", "seed", "method"};
enum { SAM_COUNT, SAM_SEED, SAM_METHOD, SAM_N };
static const char* const design_names[MBS_DESIGN_COUNT] = {"random", "lhs", "sobol", "grid"};

static int read_sampling(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line) {
  const char* kp = "sampling";
  field f[SAM_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, sampling_keys, SAM_N, f);
  if (rc) return rc;
  if (f[SAM_COUNT].present) {
    kp_key(sub, kp, "count");
    if ((rc = get_integer(c, f[SAM_COUNT].value, f[SAM_COUNT].line, sub, 1, LONG_MAX,
                          &s->count)))
      return rc;
  }
  s->seed = 0;
  if (f[SAM_SEED].present) {
    kp_key(sub, kp, "seed");
    if ((rc = get_u64(c, f[SAM_SEED].value, f[SAM_SEED].line, sub, &s->seed))) return rc;
  }
  s->method = MBS_DESIGN_RANDOM;
  if (f[SAM_METHOD].present) {
    kp_key(sub, kp, "method");
    char* m = NULL;
    if ((rc = get_string(c, f[SAM_METHOD].value, f[SAM_METHOD].line, sub, &m))) return rc;
    int found = -1;
    for (int k = 0; k < MBS_DESIGN_COUNT; k++)
      if (!strcmp(m, design_names[k])) found = k;
    if (found < 0) {
      rc = fail(c, MBS_ERR_ARGUMENT, f[SAM_METHOD].line, sub,
                "unknown method '%.60s' (random, lhs, sobol, grid)", m);
      free(m);
      return rc;
    }
    free(m);
    s->method = (mbs_design_type)found;
  }
  if (s->posture && s->method != MBS_DESIGN_GRID) {
    kp_key(sub, kp, "method");
    return fail(c, MBS_ERR_ARGUMENT, f[SAM_METHOD].present ? f[SAM_METHOD].line : line, sub,
                "a posture study is a grid (method: grid, or leave sampling out)");
  }
  if (s->method == MBS_DESIGN_GRID)
    return check_grid(c, s, f[SAM_COUNT].present, f[SAM_COUNT].present ? f[SAM_COUNT].line : line);
  if (!f[SAM_COUNT].present) return missing(c, line, kp, "count");
  if (s->method == MBS_DESIGN_SOBOL) {
    if (s->count > (1L << 31)) {
      kp_key(sub, kp, "count");
      return fail(c, MBS_ERR_ARGUMENT, f[SAM_COUNT].line, sub,
                  "%ld is more than sobol's 2^31 points", s->count);
    }
    if (s->nparams > MBS_SOBOL_MAX_DIM) {
      kp_key(sub, kp, "method");
      return fail(c, MBS_ERR_ARGUMENT, f[SAM_METHOD].line, sub,
                  "sobol takes at most %d parameters, the spec has %d", MBS_SOBOL_MAX_DIM,
                  s->nparams);
    }
  }
  return MBS_OK;
}

static const char* const execution_keys[] = {"threads", "checkpoint_interval",
                                              "allow_failed_samples", "max_frames",
                                              "check_disk_space", "journal_segment"};
enum { EXE_THREADS, EXE_CHECKPOINT, EXE_ALLOW_FAILED, EXE_MAX_FRAMES, EXE_DISK, EXE_SEGMENT,
       EXE_N };

static int read_execution(spec_ctx* c, mbs_study_spec* s, struct fy_node* n, int line) {
  const char* kp = "execution";
  field f[EXE_N];
  char sub[KP_LEN];
  int rc = read_map(c, n, line, kp, execution_keys, EXE_N, f);
  if (rc) return rc;
  if (f[EXE_THREADS].present) {
    kp_key(sub, kp, "threads");
    long t = 0;
    if ((rc = get_integer(c, f[EXE_THREADS].value, f[EXE_THREADS].line, sub, 0, 65536, &t)))
      return rc;
    s->threads = (int)t;
    s->threads_line = f[EXE_THREADS].line;
  }
  if (f[EXE_MAX_FRAMES].present) {
    kp_key(sub, kp, "max_frames");
    if ((rc = get_integer(c, f[EXE_MAX_FRAMES].value, f[EXE_MAX_FRAMES].line, sub, 1,
                          1000000000L, &s->max_frames)))
      return rc;
  }
  if (f[EXE_SEGMENT].present) {
    kp_key(sub, kp, "journal_segment");
    if ((rc = get_integer(c, f[EXE_SEGMENT].value, f[EXE_SEGMENT].line, sub, 4096,
                          1L << 40, &s->journal_segment)))
      return rc;
  }
  if (f[EXE_DISK].present) {
    kp_key(sub, kp, "check_disk_space");
    if ((rc = get_bool(c, f[EXE_DISK].value, f[EXE_DISK].line, sub, &s->check_disk_space)))
      return rc;
  }
  if (f[EXE_ALLOW_FAILED].present) {
    kp_key(sub, kp, "allow_failed_samples");
    if ((rc = get_bool(c, f[EXE_ALLOW_FAILED].value, f[EXE_ALLOW_FAILED].line, sub,
                       &s->allow_failed_samples)))
      return rc;
  }
  if (f[EXE_CHECKPOINT].present) {
    kp_key(sub, kp, "checkpoint_interval");
    if ((rc = get_number(c, f[EXE_CHECKPOINT].value, f[EXE_CHECKPOINT].line, sub,
                         &s->checkpoint_interval)))
      return rc;
    if (!(s->checkpoint_interval > 0))
      return fail(c, MBS_ERR_ARGUMENT, f[EXE_CHECKPOINT].line, sub, "%g s is not positive",
                  s->checkpoint_interval);
  }
  return MBS_OK;
}

// ---------------------------------------------------------------------------------------------
// limits: nodes with aliases expanded

// the expanded size of alias targets already counted (open addressing on the node's address;
// -1 while the target is being counted, to find an alias inside the node it refers to)
typedef struct count_memo {
  const struct fy_node* node;
  long count;
} count_memo;

typedef struct node_counter {
  spec_ctx* c;
  count_memo* memo;
  size_t cap, used;
  long aliases;  // aliases expanded so far
  int depth;     // aliases being expanded, one inside the other
} node_counter;

static size_t memo_hash(const struct fy_node* n, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)n;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

// the memo entry of `n`, NULL if absent (insert: created with count 0; NULL when out of memory)
static count_memo* memo_at(node_counter* nc, const struct fy_node* n, int insert) {
  if (insert && 2 * (nc->used + 1) > nc->cap) {
    const size_t cap = nc->cap ? 2 * nc->cap : 64;
    count_memo* m = calloc(cap, sizeof(*m));
    if (!m) return NULL;
    for (size_t i = 0; i < nc->cap; i++) {
      if (!nc->memo[i].node) continue;
      size_t j = memo_hash(nc->memo[i].node, cap);
      while (m[j].node) j = (j + 1) & (cap - 1);
      m[j] = nc->memo[i];
    }
    free(nc->memo);
    nc->memo = m;
    nc->cap = cap;
  }
  if (!nc->cap) return NULL;
  size_t j = memo_hash(n, nc->cap);
  while (nc->memo[j].node && nc->memo[j].node != n) j = (j + 1) & (nc->cap - 1);
  if (nc->memo[j].node) return &nc->memo[j];
  if (!insert) return NULL;
  nc->memo[j].node = n;
  nc->memo[j].count = 0;
  nc->used++;
  return &nc->memo[j];
}

static int count_nodes(node_counter* nc, struct fy_node* n, long* out);

// add the nodes of `item` to *sum, failing at the item's line past the limit
static int count_add(node_counter* nc, struct fy_node* item, long* sum) {
  long k = 0;
  const int rc = count_nodes(nc, item, &k);
  if (rc) return rc;
  *sum += k;
  if (*sum > SPEC_MAX_NODES) {
    if (nc->aliases > 0)
      return fail(nc->c, MBS_ERR_PARSE, node_line(item, 1), "",
                  "aliases expand beyond %ld nodes", SPEC_MAX_NODES);
    return fail(nc->c, MBS_ERR_PARSE, node_line(item, 1), "", "more than %ld nodes",
                SPEC_MAX_NODES);
  }
  return MBS_OK;
}

// the nodes of `n` once its aliases are expanded (an alias: the nodes of what it refers to)
static int count_nodes(node_counter* nc, struct fy_node* n, long* out) {
  *out = 0;
  if (!n) return MBS_OK;
  if (fy_node_is_alias(n)) {
    struct fy_node* t = fy_node_resolve_alias(n);
    if (!t) {  // an alias to nothing, or aliases of aliases in a loop: fy_document_resolve says
      *out = 1;
      return MBS_OK;
    }
    nc->aliases++;
    const int line = node_line(n, 1);
    count_memo* m = memo_at(nc, t, 0);
    if (m && m->count < 0)
      return fail(nc->c, MBS_ERR_PARSE, line, "", "an alias inside the node it refers to");
    if (m) {
      *out = m->count;
      return MBS_OK;
    }
    if (nc->depth >= SPEC_MAX_ALIAS_DEPTH)
      return fail(nc->c, MBS_ERR_PARSE, line, "", "aliases nest more than %d deep",
                  SPEC_MAX_ALIAS_DEPTH);
    if (!(m = memo_at(nc, t, 1))) return no_memory(nc->c, line, "");
    m->count = -1;
    nc->depth++;
    long k = 0;
    const int rc = count_nodes(nc, t, &k);
    nc->depth--;
    if (rc) return rc;
    memo_at(nc, t, 0)->count = k;  // (the table may have moved)
    *out = k;
    return MBS_OK;
  }
  long sum = 1;
  int rc = MBS_OK;
  void* it = NULL;
  if (fy_node_get_type(n) == FYNT_SEQUENCE) {
    struct fy_node* item;
    while (rc == MBS_OK && (item = fy_node_sequence_iterate(n, &it)))
      rc = count_add(nc, item, &sum);
  } else if (fy_node_get_type(n) == FYNT_MAPPING) {
    struct fy_node_pair* p;
    while (rc == MBS_OK && (p = fy_node_mapping_iterate(n, &it))) {
      rc = count_add(nc, fy_node_pair_key(p), &sum);
      if (rc == MBS_OK) rc = count_add(nc, fy_node_pair_value(p), &sum);
    }
  }
  *out = sum;
  return rc;
}

// MBS_OK if the document, aliases expanded, has at most SPEC_MAX_NODES nodes
static int check_node_count(spec_ctx* c, struct fy_node* root) {
  node_counter nc = {c, NULL, 0, 0, 0, 0};
  long total = 0;
  const int rc = count_add(&nc, root, &total);
  free(nc.memo);
  return rc;
}

// ---------------------------------------------------------------------------------------------
// text that is not a YAML document

// the first byte that cannot be in a YAML text: invalid UTF-8, or a control character other
// than tab, line feed and carriage return; 1 with its line and a description, else 0
static int not_text(const char* text, int* line, char* what, size_t cap) {
  const unsigned char* p = (const unsigned char*)text;
  *line = 1;
  while (*p) {
    const unsigned char b = *p;
    if (b == '\n') {
      ++*line;
      p++;
      continue;
    }
    if (b < 0x80) {
      if ((b < 0x20 && b != '\t' && b != '\r') || b == 0x7f) {
        snprintf(what, cap, "control character 0x%02x", b);
        return 1;
      }
      p++;
      continue;
    }
    int more = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2
             : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    uint32_t cp = b & (more == 1 ? 0x1f : more == 2 ? 0x0f : 0x07);
    for (int k = 1; more > 0 && k <= more; k++) {
      if ((p[k] & 0xc0) != 0x80) {
        more = -1;
        break;
      }
      cp = cp << 6 | (p[k] & 0x3f);
    }
    if (more < 0 || (more == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (more == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
      snprintf(what, cap, "invalid UTF-8 (byte 0x%02x)", b);
      return 1;
    }
    p += 1 + more;
  }
  return 0;
}

// nothing but blank lines and comments
static int blank_or_comments(const char* text) {
  for (const char* p = text; *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (*p == '#')
      while (*p && *p != '\n') p++;
    if (*p && *p != '\n') return 0;
    if (*p) p++;
  }
  return 1;
}

// ---------------------------------------------------------------------------------------------
// the document

static const char* const top_keys[] = {
    "model",   "external_loads", "simulation", "parameters",  "outputs", "sampling",
    "execution", "output",       "posture",    "sensitivity", "fit",     "calibration",
    "cohort",    "pipeline"};
enum { TOP_MODEL, TOP_LOADS, TOP_SIM, TOP_PARAMS, TOP_OUTPUTS, TOP_SAMPLING, TOP_EXEC, TOP_OUTPUT,
       TOP_POSTURE, TOP_SENSITIVITY, TOP_FIT, TOP_CALIBRATION, TOP_COHORT, TOP_PIPELINE, TOP_N };
// the sections whose contents the study types read themselves (mbs_spec_section)
enum { TOP_FIRST_SECTION = TOP_SENSITIVITY };

static int read_root(spec_ctx* c, mbs_study_spec* s, struct fy_node* root) {
  field f[TOP_N];
  const int line = 1;  // a missing top-level key is reported at the top of the file
  int rc = read_map(c, root, line, "", top_keys, TOP_N, f);
  if (rc) return rc;
  for (int k = 0; k < TOP_N; k++) {
    if (k == TOP_MODEL || k == TOP_OUTPUT) {
      if (!f[k].present) return missing(c, line, "", top_keys[k]);
    }
  }
  if ((rc = get_string(c, f[TOP_MODEL].value, f[TOP_MODEL].line, "model", &s->model))) return rc;
  {
    char* x = NULL;
    rc = expand_shared(c, f[TOP_MODEL].line, "model", s->model, &x);
    free(s->model);
    s->model = x;
    if (rc) return rc;
  }
  if (ends_with_ci(s->model, ".osim")) {
    s->model_path = resolve_path(s->path, s->model);
    if (!s->model_path) return no_memory(c, f[TOP_MODEL].line, "model");
  }
  if (f[TOP_LOADS].present) {
    if ((rc = get_path(c, s->path, &f[TOP_LOADS], "external_loads", &s->external_loads)))
      return rc;
    if (!s->model_path)
      return fail(c, MBS_ERR_ARGUMENT, f[TOP_LOADS].line, "external_loads",
                  "applies to .osim models only; '%.60s' is a built-in model", s->model);
  }
  // a simulation: required by the models that simulate (checked when the study is planned;
  // the test functions evaluate a formula)
  s->has_simulation = f[TOP_SIM].present;
  if (s->has_simulation) {
    if ((rc = read_simulation(c, s, f[TOP_SIM].value, f[TOP_SIM].line))) return rc;
  } else {
    s->duration = s->output_interval = 1;
    s->accuracy = 1e-3;
    s->integrator = strdup("rk_merson");
    if (!s->integrator) return no_memory(c, line, "simulation");
  }
  for (int k = TOP_FIRST_SECTION; k < TOP_N; k++) {
    if (!f[k].present) continue;
    mbs_spec_section* sec = &s->sections[s->nsections++];
    sec->name = top_keys[k];
    sec->node = f[k].value;
    sec->line = f[k].line;
    sec->spec = s;
    snprintf(sec->kp, sizeof(sec->kp), "%s", top_keys[k]);
    if (is_null(f[k].value) || fy_node_get_type(f[k].value) != FYNT_MAPPING)
      return expected(c, f[k].value, f[k].line, top_keys[k], "a mapping");
  }
  if (f[TOP_PARAMS].present &&
      (rc = read_parameters(c, s, f[TOP_PARAMS].value, f[TOP_PARAMS].line)))
    return rc;
  // when outputs.trajectories is absent (a pipeline study's trajectories are its tools')
  s->outputs = f[TOP_PIPELINE].present ? 0 : MBS_OUT_Q | MBS_OUT_U;
  if (f[TOP_OUTPUTS].present &&
      (rc = read_outputs(c, s, f[TOP_OUTPUTS].value, f[TOP_OUTPUTS].line)))
    return rc;
  if (f[TOP_POSTURE].present &&
      (rc = read_posture(c, s, f[TOP_POSTURE].value, f[TOP_POSTURE].line)))
    return rc;
  s->has_sampling = f[TOP_SAMPLING].present;
  s->sampling_line = f[TOP_SAMPLING].line;
  if (f[TOP_SAMPLING].present) {
    if ((rc = read_sampling(c, s, f[TOP_SAMPLING].value, f[TOP_SAMPLING].line))) return rc;
  } else if (f[TOP_POSTURE].present && !f[TOP_SENSITIVITY].present && !f[TOP_FIT].present &&
             !f[TOP_CALIBRATION].present) {
    // a posture study without a sampling section: the grid (with a sensitivity, fit or
    // calibration section the posture prepares that study's samples instead)
    s->method = MBS_DESIGN_GRID;
    if ((rc = check_grid(c, s, 0, f[TOP_POSTURE].line))) return rc;
  }
  s->threads = 0;
  s->checkpoint_interval = 60;
  s->journal_segment = 64L << 20;
  s->max_frames = 1000000;
  s->check_disk_space = 1;
  if (f[TOP_EXEC].present && (rc = read_execution(c, s, f[TOP_EXEC].value, f[TOP_EXEC].line)))
    return rc;
  return get_path(c, s->path, &f[TOP_OUTPUT], "output", &s->output);
}

// the first error libfyaml collected, or NULL (with collection on, fy_diag_got_error does
// not see every error: a bad merge key, for one, only ends the document)
static struct fy_diag_error* yaml_first_error(struct fy_diag* diag) {
  void* it = NULL;
  struct fy_diag_error* e;
  while ((e = fy_diag_errors_iterate(diag, &it)))
    if (e->type >= FYET_ERROR) return e;
  return NULL;
}

// that error as "file:line: message"
static int yaml_error(spec_ctx* c, const struct fy_diag_error* e) {
  return MBS_FAIL(c->err, MBS_ERR_PARSE, c->file, "%s:%d: %s", c->file,
                  e->line > 0 ? e->line : 1, e->msg ? e->msg : "YAML syntax error");
}

int mbs_spec_parse(const char* text, const char* path, mbs_study_spec** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!text || !out)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "spec", "spec: text and out must not be NULL");
  spec_ctx ctx = {path ? path : "<spec>", err};
  spec_ctx* c = &ctx;
  const size_t nbytes = strlen(text);
  if (nbytes > SPEC_MAX_BYTES)
    return MBS_FAIL(err, MBS_ERR_PARSE, ctx.file,
                    "%s: %zu bytes, more than the %zu bytes (%zu MiB) a study file may have",
                    ctx.file, nbytes, SPEC_MAX_BYTES, SPEC_MAX_BYTES >> 20);
  mbs_study_spec* s = calloc(1, sizeof(*s));
  if (!s) return no_memory(c, 1, "");
  s->path = strdup(ctx.file);
  s->text = strdup(text);
  if (!s->path || !s->text) {
    mbs_spec_free(s);
    return no_memory(c, 1, "");
  }

  struct fy_diag_cfg dcfg;
  fy_diag_cfg_default(&dcfg);
  dcfg.fp = NULL;  // nothing printed: errors are collected
  struct fy_diag* diag = fy_diag_create(&dcfg);
  struct fy_parser* parser = NULL;
  struct fy_document* doc = NULL;
  int rc = MBS_OK;
  if (!diag) {
    rc = no_memory(c, 1, "");
    goto done;
  }
  fy_diag_set_collect_errors(diag, true);
  struct fy_parse_cfg pcfg;
  memset(&pcfg, 0, sizeof(pcfg));
  pcfg.flags = FYPCF_QUIET;  // resolved below, once counted
  pcfg.diag = diag;
  parser = fy_parser_create(&pcfg);
  if (!parser || fy_parser_set_string(parser, s->text, nbytes) != 0) {
    rc = no_memory(c, 1, "");
    goto done;
  }
  static const char empty[] = "empty spec (it needs model, simulation, sampling and output)";
  // binary data is said so before libfyaml sees it (libfyaml 0.7 loops for ever on some
  // invalid UTF-8, e.g. in a directive line)
  int bad_line = 1;
  char what[64];
  if (not_text(s->text, &bad_line, what, sizeof(what))) {
    rc = fail(c, MBS_ERR_PARSE, bad_line, "",
              "not a text file (%s): a study file is a YAML mapping (model, simulation, "
              "sampling, output, ...)", what);
    goto done;
  }
  doc = fy_parse_load_document(parser);
  const struct fy_diag_error* e = yaml_first_error(diag);
  if (!doc || e) {
    if (e)
      rc = yaml_error(c, e);
    else if (!blank_or_comments(s->text))
      rc = fail(c, MBS_ERR_PARSE, 1, "",
                "not a YAML document: a study file is a YAML mapping (model, simulation, "
                "sampling, output, ...)");
    else
      rc = fail(c, MBS_ERR_PARSE, 1, "", empty);
    goto done;
  }
  // one document only: a second one ('---') would be silently ignored otherwise
  struct fy_document* extra = fy_parse_load_document(parser);
  const int extra_line = extra ? node_line(fy_document_root(extra), 0) : 0;
  if (extra) fy_parse_document_destroy(parser, extra);
  if ((e = yaml_first_error(diag))) {
    rc = yaml_error(c, e);
    goto done;
  }
  if (extra_line > 0) {  // (an empty trailing document, a lone "---", is harmless)
    rc = fail(c, MBS_ERR_PARSE, extra_line, "", "a second YAML document; a spec is one document");
    goto done;
  }
  // aliases: counted unexpanded, then resolved (with merge keys)
  if ((rc = check_node_count(c, fy_document_root(doc)))) goto done;
  const int resolved = fy_document_resolve(doc) == 0;
  if ((e = yaml_first_error(diag)) || !resolved) {
    rc = e ? yaml_error(c, e) : fail(c, MBS_ERR_PARSE, 1, "", "YAML aliases cannot be resolved");
    goto done;
  }
  struct fy_node* root = fy_document_root(doc);
  if (!root || is_null(root)) {
    rc = fail(c, MBS_ERR_PARSE, 1, "", empty);
    goto done;
  }
  rc = read_root(c, s, root);

done:
  // the document stays with the spec while it has sections that the study types read
  if (rc == MBS_OK && s->nsections > 0) {
    s->yaml_parser = parser;
    s->yaml_doc = doc;
    s->yaml_diag = diag;
    *out = s;
    return MBS_OK;
  }
  if (doc) fy_parse_document_destroy(parser, doc);
  if (parser) fy_parser_destroy(parser);
  if (diag) fy_diag_destroy(diag);
  if (rc) {
    mbs_spec_free(s);
    return rc;
  }
  *out = s;
  return MBS_OK;
}

int mbs_spec_read(const char* path, mbs_study_spec** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!path || !out)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "spec", "spec: path and out must not be NULL");
  FILE* f = fopen(path, "rb");
  if (!f) return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
      (uintmax_t)st.st_size > SPEC_MAX_BYTES) {
    fclose(f);
    return MBS_FAIL(err, MBS_ERR_PARSE, path,
                    "%s: %jd bytes, more than the %zu bytes (%zu MiB) a study file may have", path,
                    (intmax_t)st.st_size, SPEC_MAX_BYTES, SPEC_MAX_BYTES >> 20);
  }
  size_t cap = 1 << 14, n = 0;
  char* buf = malloc(cap);
  int rc = MBS_OK;
  while (buf) {
    if (n > SPEC_MAX_BYTES) {  // (a file that grew, or a pipe)
      fclose(f);
      free(buf);
      return MBS_FAIL(err, MBS_ERR_PARSE, path,
                      "%s: more than the %zu bytes (%zu MiB) a study file may have", path,
                      SPEC_MAX_BYTES, SPEC_MAX_BYTES >> 20);
    }
    if (n + 1 >= cap) {
      char* bigger = realloc(buf, cap * 2);
      if (!bigger) break;
      buf = bigger;
      cap *= 2;
    }
    const size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  if (!buf || n + 1 >= cap) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
  } else if (ferror(f)) {
    rc = MBS_FAIL(err, MBS_ERR_IO, path, "%s: read error: %s", path, strerror(errno));
  } else if (memchr(buf, '\0', n)) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: contains NUL bytes (not a YAML text file)", path);
  }
  fclose(f);
  if (rc) {
    free(buf);
    return rc;
  }
  buf[n] = '\0';
  rc = mbs_spec_parse(buf, path, out, err);
  free(buf);
  return rc;
}

void mbs_spec_free(mbs_study_spec* s) {
  if (!s) return;
  if (s->yaml_doc) fy_parse_document_destroy(s->yaml_parser, s->yaml_doc);
  if (s->yaml_parser) fy_parser_destroy(s->yaml_parser);
  if (s->yaml_diag) fy_diag_destroy(s->yaml_diag);

  free(s->path);
  free(s->text);
  free(s->model);
  free(s->model_path);
  free(s->external_loads);
  free(s->integrator);
  for (int i = 0; i < s->nevents; i++) {
    free(s->events[i].name);
    free(s->events[i].body);
    free(s->events[i].coordinate);
  }
  free(s->events);
  for (int i = 0; i < s->nparams; i++) {
    free(s->params[i].path);
    free((void*)s->params[i].dist.values);
  }
  free(s->params);
  for (int i = 0; i < s->nbodies; i++) free(s->bodies[i]);
  free(s->bodies);
  for (int i = 0; i < s->ncontacts; i++) free(s->contacts[i]);
  free(s->contacts);
  for (int i = 0; i < s->nmuscles; i++) free(s->muscles[i]);
  free(s->muscles);
  free(s->muscle_lines);
  for (int i = 0; i < s->nscalars; i++) {
    free(s->scalars[i].name);
    free(s->scalars[i].of);
    free(s->scalars[i].coordinate);
    free(s->scalars[i].event);
  }
  free(s->scalars);
  free(s->output);
  if (s->posture) {
    free(s->posture->knee_flexion);
    free(s->posture->direction);
    free(s->posture->magnitude);
    free(s->posture->profile);
    for (int k = 0; k < 2; k++) {
      free(s->posture->feet[k]);
      free(s->posture->toes[k]);
    }
    free(s->posture);
  }
  free(s);
}

// ---------------------------------------------------------------------------------------------
// sections read by the study types

const mbs_spec_section* mbs_spec_find_section(const mbs_study_spec* s, const char* name) {
  for (int i = 0; s && i < s->nsections; i++)
    if (!strcmp(s->sections[i].name, name)) return &s->sections[i];
  return NULL;
}

// the key's value and line in the section's mapping (value NULL when absent)
static field sec_field(const mbs_spec_section* s, const char* key) {
  field f = {NULL, s->line, 0};
  struct fy_node_pair* p =
      fy_node_mapping_lookup_pair_by_string((struct fy_node*)s->node, key, FY_NT);
  if (!p) return f;
  f.value = fy_node_pair_value(p);
  f.line = node_line(fy_node_pair_key(p), s->line);
  f.present = 1;
  return f;
}

#define SEC_CTX(s, err)                                       \
  spec_ctx ctx_ = {(s)->spec ? (s)->spec->path : "<spec>", (err)}; \
  spec_ctx* c = &ctx_

int mbs_spec_section_keys(const mbs_spec_section* s, const char* const* keys, int n,
                          mbs_error* err) {
  SEC_CTX(s, err);
  field* f = calloc((size_t)n + 1, sizeof(*f));
  if (!f) return no_memory(c, s->line, s->kp);
  const int rc = read_map(c, (struct fy_node*)s->node, s->line, s->kp, keys, n, f);
  free(f);
  return rc;
}

int mbs_spec_section_has(const mbs_spec_section* s, const char* key) {
  return sec_field(s, key).present;
}

int mbs_spec_section_line(const mbs_spec_section* s, const char* key) {
  return sec_field(s, key).line;
}

int mbs_spec_section_fail(const mbs_spec_section* s, const char* key, int code, mbs_error* err,
                          const char* fmt, ...) {
  SEC_CTX(s, err);
  char what[MBS_ERROR_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  char sub[KP_LEN];
  if (key) kp_key(sub, s->kp, key);
  else snprintf(sub, sizeof(sub), "%s", s->kp);
  return fail(c, code, key ? sec_field(s, key).line : s->line, sub, "%s", what);
}

int mbs_spec_section_number(const mbs_spec_section* s, const char* key, double dflt, double lo,
                            int lo_open, double hi, int hi_open, double* out, mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  if (!f.present) {
    if (isnan(dflt)) return missing(c, s->line, s->kp, key);
    *out = dflt;
    return MBS_OK;
  }
  double v;
  int rc = get_number(c, f.value, f.line, sub, &v);
  if (rc) return rc;
  const int below = !isnan(lo) && (lo_open ? !(v > lo) : !(v >= lo));
  const int above = !isnan(hi) && (hi_open ? !(v < hi) : !(v <= hi));
  if (below || above) {
    char range[120];
    if (isnan(hi)) snprintf(range, sizeof(range), "%s %g", lo_open ? "above" : "at least", lo);
    else if (isnan(lo)) snprintf(range, sizeof(range), "%s %g", hi_open ? "below" : "at most", hi);
    else snprintf(range, sizeof(range), "%g .. %g%s", lo, hi,
                  lo_open && hi_open ? " (both excluded)" : lo_open ? " (lower excluded)"
                                                        : hi_open ? " (upper excluded)" : "");
    return fail(c, MBS_ERR_ARGUMENT, f.line, sub, "%g is outside the allowed range (%s)", v,
                range);
  }
  *out = v;
  return MBS_OK;
}

int mbs_spec_section_integer(const mbs_spec_section* s, const char* key, long dflt, long lo,
                             long hi, long* out, mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  if (!f.present) {
    if (dflt == LONG_MIN) return missing(c, s->line, s->kp, key);
    *out = dflt;
    return MBS_OK;
  }
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  return get_integer(c, f.value, f.line, sub, lo, hi, out);
}

int mbs_spec_section_bool(const mbs_spec_section* s, const char* key, int dflt, int* out,
                          mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  if (!f.present) {
    *out = dflt;
    return MBS_OK;
  }
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  return get_bool(c, f.value, f.line, sub, out);
}

int mbs_spec_section_string(const mbs_spec_section* s, const char* key, const char* dflt,
                            int path, char** out, mbs_error* err) {
  SEC_CTX(s, err);
  field f = sec_field(s, key);
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  *out = NULL;
  if (!f.present) {
    if (!dflt) return missing(c, s->line, s->kp, key);
    *out = path ? resolve_path(s->spec->path, dflt) : strdup(dflt);
    return *out ? MBS_OK : no_memory(c, s->line, sub);
  }
  if (path) return get_path(c, s->spec->path, &f, sub, out);
  return get_string(c, f.value, f.line, sub, out);
}

int mbs_spec_section_choice(const mbs_spec_section* s, const char* key,
                            const char* const* names, int n, int dflt, int* out,
                            mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  if (!f.present) {
    if (dflt < 0) return missing(c, s->line, s->kp, key);
    *out = dflt;
    return MBS_OK;
  }
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  char* v = NULL;
  int rc = get_string(c, f.value, f.line, sub, &v);
  if (rc) return rc;
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i])) {
      free(v);
      *out = i;
      return MBS_OK;
    }
  char list[256];
  key_list(names, n, list, sizeof(list));
  rc = fail(c, MBS_ERR_ARGUMENT, f.line, sub, "unknown value '%.60s' (%s)", v, list);
  free(v);
  return rc;
}

int mbs_spec_section_numbers(const mbs_spec_section* s, const char* key, double** out, int* n,
                             mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  *out = NULL;
  *n = 0;
  if (!f.present) return missing(c, s->line, s->kp, key);
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  if (!is_list(f.value)) {
    double v;
    int rc = get_number(c, f.value, f.line, sub, &v);
    if (rc) return rc;
    if (!(*out = malloc(sizeof(double)))) return no_memory(c, f.line, sub);
    **out = v;
    *n = 1;
    return MBS_OK;
  }
  const int m = fy_node_sequence_item_count(f.value);
  if (m < 1) return fail(c, MBS_ERR_ARGUMENT, f.line, sub, "is an empty list");
  double* v = malloc((size_t)m * sizeof(double));
  if (!v) return no_memory(c, f.line, sub);
  for (int i = 0; i < m; i++) {
    char item[KP_LEN];
    kp_index(item, sub, i);
    struct fy_node* it = fy_node_sequence_get_by_index(f.value, i);
    const int rc = get_number(c, it, node_line(it, f.line), item, &v[i]);
    if (rc) {
      free(v);
      return rc;
    }
  }
  *out = v;
  *n = m;
  return MBS_OK;
}

int mbs_spec_section_names(const mbs_spec_section* s, const char* key, char*** out, int* n,
                           mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  *out = NULL;
  *n = 0;
  if (!f.present) return missing(c, s->line, s->kp, key);
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  const int m = is_list(f.value) ? fy_node_sequence_item_count(f.value) : 1;
  if (m < 1) return fail(c, MBS_ERR_ARGUMENT, f.line, sub, "is an empty list");
  char** v = calloc((size_t)m, sizeof(char*));
  if (!v) return no_memory(c, f.line, sub);
  int rc = MBS_OK;
  for (int i = 0; i < m && !rc; i++) {
    char item[KP_LEN];
    kp_index(item, sub, i);
    struct fy_node* it = is_list(f.value) ? fy_node_sequence_get_by_index(f.value, i) : f.value;
    rc = get_string(c, it, node_line(it, f.line), is_list(f.value) ? item : sub, &v[i]);
  }
  if (rc) {
    for (int i = 0; i < m; i++) free(v[i]);
    free(v);
    return rc;
  }
  *out = v;
  *n = m;
  return MBS_OK;
}

int mbs_spec_section_sub(const mbs_spec_section* s, const char* key, mbs_spec_section* out,
                         mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  if (!f.present) return missing(c, s->line, s->kp, key);
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  if (is_null(f.value) || fy_node_get_type(f.value) != FYNT_MAPPING)
    return expected(c, f.value, f.line, sub, "a mapping");
  *out = *s;
  out->node = f.value;
  out->line = f.line;
  snprintf(out->kp, sizeof(out->kp), "%s", sub);
  return MBS_OK;
}

int mbs_spec_section_count(const mbs_spec_section* s, const char* key, int* n, mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  *n = 0;
  if (!f.present) return MBS_OK;
  char sub[KP_LEN];
  kp_key(sub, s->kp, key);
  if (!is_list(f.value)) return expected(c, f.value, f.line, sub, "a list");
  *n = fy_node_sequence_item_count(f.value);
  return MBS_OK;
}

int mbs_spec_section_item(const mbs_spec_section* s, const char* key, int i,
                          mbs_spec_section* out, mbs_error* err) {
  SEC_CTX(s, err);
  const field f = sec_field(s, key);
  char sub[KP_LEN], item[KP_LEN];
  kp_key(sub, s->kp, key);
  if (!is_list(f.value) || i < 0 || i >= fy_node_sequence_item_count(f.value))
    return expected(c, f.value, f.line, sub, "a list");
  struct fy_node* it = fy_node_sequence_get_by_index(f.value, i);
  kp_index(item, sub, i);
  if (is_null(it) || fy_node_get_type(it) != FYNT_MAPPING)
    return expected(c, it, node_line(it, f.line), item, "a mapping");
  *out = *s;
  out->node = it;
  out->line = node_line(it, f.line);
  snprintf(out->kp, sizeof(out->kp), "%s", item);
  return MBS_OK;
}
