// OpenSim data files as tables: creation, storage (.sto/.mot) and marker (.trc) readers, the
// whole-table storage writer, and unit conversions at the edge.
//
// Readers load the whole file into memory and walk it line by line (CRLF accepted), so lines
// of any length are fine and every message can name the file and the line. Storage headers:
//   version 1 (OpenSim's Storage):    version 3 (OpenSim 4's STOFileAdapter):
//     <name>                            [<name>]
//     version=1                         <key>=<value> ...
//     nRows=<rows>                      DataType=double
//     nColumns=<columns incl. time>     version=3
//     inDegrees=yes|no                  OpenSimVersion=<x.y>
//     <free text> ...                   endheader
//     endheader
// then a line of labels and the rows. Both are read by the same rules: a header line with '='
// and a non-empty key is a key=value field, the first other non-blank line is the name, later
// ones are free text.
#include "mbs/table.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// ---------------------------------------------------------------------------------------------
// small helpers

static char* dup_str(const char* s) {
  if (!s) s = "";
  const size_t n = strlen(s) + 1;
  char* d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int is_blank_char(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// trim blanks at both ends, in place; returns the start
static char* trim(char* s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n > 0 && is_blank_char(s[n - 1])) s[--n] = 0;
  return s;
}

// a whole string as a double (strtod accepts nan, NaN, inf)
static int parse_double(const char* s, double* v) {
  if (!*s) return 0;
  char* end;
  const double x = strtod(s, &end);
  if (end == s || *end) return 0;
  *v = x;
  return 1;
}

// a whole string as a non-negative integer
static int parse_count(const char* s, long* v) {
  if (!*s) return 0;
  char* end;
  errno = 0;
  const long x = strtol(s, &end, 10);
  if (end == s || *end || errno || x < 0 || x > INT_MAX) return 0;
  *v = x;
  return 1;
}

// ---------------------------------------------------------------------------------------------
// table creation and metadata

void mbs_table_free(mbs_table* t) {
  if (!t) return;
  if (t->labels)
    for (int c = 0; c < t->ncol; c++) free(t->labels[c]);
  free(t->labels);
  free(t->data);
  free(t->name);
  for (int i = 0; i < t->nmeta; i++) {
    free(t->meta[i].key);
    free(t->meta[i].value);
  }
  free(t->meta);
  if (t->markers)
    for (int m = 0; m < t->nmarkers; m++) free(t->markers[m]);
  free(t->markers);
  free(t->units);
  free(t);
}

// an empty table with room for labels and data (labels NULL-filled, data zero)
static mbs_table* table_alloc(int nrow, int ncol) {
  mbs_table* t = calloc(1, sizeof(*t));
  if (!t) return NULL;
  t->nrow = nrow;
  t->ncol = ncol;
  t->labels = calloc((size_t)ncol, sizeof(char*));
  t->data = calloc((size_t)nrow * (size_t)ncol + 1, sizeof(double));
  t->name = dup_str("");
  if (!t->labels || !t->data || !t->name) {
    mbs_table_free(t);
    return NULL;
  }
  return t;
}

int mbs_table_create(mbs_table** out, const char* name, int nrow, int ncol,
                     const char* const* labels, mbs_error* err) {
  if (out) *out = NULL;
  if (!out || nrow < 0 || ncol < 1 || !labels)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: bad arguments (%d rows, %d columns)",
                    nrow, ncol);
  if ((double)nrow * ncol > (double)INT_MAX)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: %d x %d values are too many", nrow,
                    ncol);
  mbs_table* t = table_alloc(nrow, ncol);
  if (!t) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table: out of memory");
  free(t->name);
  t->name = dup_str(name);
  int ok = t->name != NULL;
  for (int c = 0; c < ncol && ok; c++) {
    if (!labels[c]) {
      mbs_table_free(t);
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: label %d is NULL", c);
    }
    ok = (t->labels[c] = dup_str(labels[c])) != NULL;
  }
  if (!ok) {
    mbs_table_free(t);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table: out of memory");
  }
  *out = t;
  return MBS_OK;
}

// append a header line (key NULL: free text); 0 when out of memory
static int meta_append(mbs_table* t, const char* key, const char* value) {
  mbs_table_entry* m = realloc(t->meta, (size_t)(t->nmeta + 1) * sizeof(*m));
  if (!m) return 0;
  t->meta = m;
  char* k = key ? dup_str(key) : NULL;
  char* v = dup_str(value);
  if ((key && !k) || !v) {
    free(k);
    free(v);
    return 0;
  }
  t->meta[t->nmeta].key = k;
  t->meta[t->nmeta].value = v;
  t->nmeta++;
  return 1;
}

int mbs_table_set_meta(mbs_table* t, const char* key, const char* value, mbs_error* err) {
  if (!t || !value)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: set_meta needs a table and a value");
  if (key) {
    for (int i = 0; i < t->nmeta; i++) {
      if (t->meta[i].key && strcmp(t->meta[i].key, key) == 0) {
        char* v = dup_str(value);
        if (!v) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table: out of memory");
        free(t->meta[i].value);
        t->meta[i].value = v;
        return MBS_OK;
      }
    }
  }
  if (!meta_append(t, key, value))
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table: out of memory");
  return MBS_OK;
}

const char* mbs_table_get_meta(const mbs_table* t, const char* key) {
  if (!t || !key) return NULL;
  for (int i = 0; i < t->nmeta; i++)
    if (t->meta[i].key && strcmp(t->meta[i].key, key) == 0) return t->meta[i].value;
  return NULL;
}

int mbs_table_column(const mbs_table* t, const char* label) {
  if (!t || !label) return -1;
  for (int c = 0; c < t->ncol; c++)
    if (strcmp(t->labels[c], label) == 0) return c;
  return -1;
}

int mbs_table_copy(mbs_table** out, const mbs_table* t, mbs_error* err) {
  if (out) *out = NULL;
  if (!out || !t) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: nothing to copy");
  mbs_table* c;
  int rc = mbs_table_create(&c, t->name, t->nrow, t->ncol, (const char* const*)t->labels, err);
  if (rc != MBS_OK) return rc;
  if (t->nrow > 0) memcpy(c->data, t->data, (size_t)t->nrow * (size_t)t->ncol * sizeof(double));
  c->in_degrees = t->in_degrees;
  c->version = t->version;
  int ok = 1;
  for (int i = 0; i < t->nmeta && ok; i++) ok = meta_append(c, t->meta[i].key, t->meta[i].value);
  if (ok && t->nmarkers > 0) {
    c->markers = calloc((size_t)t->nmarkers, sizeof(char*));
    ok = c->markers != NULL;
    if (ok) c->nmarkers = t->nmarkers;
    for (int m = 0; m < t->nmarkers && ok; m++) ok = (c->markers[m] = dup_str(t->markers[m])) != NULL;
  }
  if (ok && t->units) ok = (c->units = dup_str(t->units)) != NULL;
  if (!ok) {
    mbs_table_free(c);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table: out of memory");
  }
  *out = c;
  return MBS_OK;
}

// ---------------------------------------------------------------------------------------------
// reading files line by line

typedef struct text_file {
  const char* path;
  char* buf;      // the whole file, NUL-terminated
  size_t len;
  size_t pos;     // start of the next line
  int line;       // number of the line last returned (1-based)
  int newline;    // whether the line last returned ended with '\n'
} text_file;

static int text_open(text_file* f, const char* path, mbs_error* err) {
  memset(f, 0, sizeof(*f));
  f->path = path;
  FILE* fp = fopen(path, "rb");
  if (!fp) return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char* buf = malloc(cap);
  while (buf) {
    if (cap - len < 2) {
      char* b = realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
    const size_t n = fread(buf + len, 1, cap - len - 1, fp);
    len += n;
    if (n == 0) break;
  }
  const int failed = ferror(fp);
  fclose(fp);
  if (!buf) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
  if (failed) {
    free(buf);
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: read failed", path);
  }
  buf[len] = 0;
  f->buf = buf;
  f->len = len;
  return MBS_OK;
}

// the next line, NUL-terminated in place without its '\n' or "\r\n"; NULL at the end
static char* text_next(text_file* f) {
  if (f->pos >= f->len) return NULL;
  char* start = f->buf + f->pos;
  char* nl = memchr(start, '\n', f->len - f->pos);
  size_t n;
  if (nl) {
    n = (size_t)(nl - start);
    *nl = 0;
    f->pos += n + 1;
    f->newline = 1;
  } else {
    n = f->len - f->pos;
    f->pos = f->len;
    f->newline = 0;
  }
  if (n > 0 && start[n - 1] == '\r') start[n - 1] = 0;
  f->line++;
  return start;
}

static int line_is_blank(const char* s) {
  for (; *s; s++)
    if (!is_blank_char(*s)) return 0;
  return 1;
}

// Split s in place at runs of spaces and tabs; stores at most max tokens, returns how many
// there are.
static int split_blanks(char* s, char** tok, int max) {
  int n = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) return n;
    if (n < max) tok[n] = s;
    n++;
    while (*s && *s != ' ' && *s != '\t') s++;
    if (*s) *s++ = 0;
  }
}

// Split s in place at every tab (empty fields kept, each field trimmed); stores at most max
// fields, returns how many there are.
static int split_tabs(char* s, char** tok, int max) {
  int n = 0;
  for (;;) {
    char* end = strchr(s, '\t');
    if (end) *end = 0;
    if (n < max) tok[n] = trim(s);
    n++;
    if (!end) return n;
    s = end + 1;
  }
}

// number of tokens separated by runs of spaces and tabs (s unchanged)
static int count_blank_separated(const char* s) {
  int n = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) return n;
    n++;
    while (*s && *s != ' ' && *s != '\t') s++;
  }
}

// number of non-blank lines from the current position to the end (the file is unchanged)
static long count_data_lines(const text_file* f) {
  long n = 0;
  size_t p = f->pos;
  while (p < f->len) {
    const char* s = f->buf + p;
    const char* nl = memchr(s, '\n', f->len - p);
    const size_t end = nl ? (size_t)(nl - f->buf) : f->len;
    int blank = 1;
    for (size_t i = p; i < end && blank; i++) blank = is_blank_char(f->buf[i]);
    if (!blank) n++;
    p = end + 1;
  }
  return n;
}

// a header line that is two or more numbers: data before any 'endheader'
static int looks_like_data(const char* s) {
  int n = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) return n >= 2;
    char* end;
    (void)strtod(s, &end);
    if (end == s || (*end && *end != ' ' && *end != '\t')) return 0;
    s = end;
    n++;
  }
}

static int parse_yes_no(const char* s, int* v) {
  if (!strcasecmp(s, "yes") || !strcasecmp(s, "true")) {
    *v = 1;
    return 1;
  }
  if (!strcasecmp(s, "no") || !strcasecmp(s, "false")) {
    *v = 0;
    return 1;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// storage files

int mbs_table_read_sto(const char* path, mbs_table** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!path || !out)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: read_sto needs a path and an output");
  text_file f;
  int rc = text_open(&f, path, err);
  if (rc != MBS_OK) return rc;
  mbs_table* t = calloc(1, sizeof(*t));
  char** tok = NULL;
  if (!t) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    goto done;
  }
  if (line_is_blank(f.buf)) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:1: the file is empty (no header)", path);
    goto done;
  }

  // header
  long nrows_hdr = -1, ncols_hdr = -1;
  int nrows_line = 0, ncols_line = 0, have_end = 0;
  char* line;
  while ((line = text_next(&f))) {
    char* s = trim(line);
    if (!*s) continue;
    if (strcmp(s, "endheader") == 0) {
      have_end = 1;
      break;
    }
    char* eq = strchr(s, '=');
    if (eq) {
      *eq = 0;
      char* key = trim(s);
      char* value = trim(eq + 1);
      if (*key) {
        int ok = 1;
        if (strcmp(key, "version") == 0) {
          long v = 0;
          ok = parse_count(value, &v);
          t->version = (int)v;
        } else if (strcmp(key, "nRows") == 0) {
          ok = parse_count(value, &nrows_hdr);
          nrows_line = f.line;
        } else if (strcmp(key, "nColumns") == 0) {
          ok = parse_count(value, &ncols_hdr);
          ncols_line = f.line;
        } else if (strcmp(key, "inDegrees") == 0) {
          ok = parse_yes_no(value, &t->in_degrees);
        } else if (strcmp(key, "DataType") == 0) {
          if (strcmp(value, "double") != 0) {
            rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                          "%s:%d: DataType=%s is not supported (only double)", path, f.line, value);
            goto done;
          }
        } else if (!meta_append(t, key, value)) {
          rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
          goto done;
        }
        if (!ok) {
          rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: %s='%s' is not valid", path, f.line,
                        key, value);
          goto done;
        }
        continue;
      }
      *eq = '=';  // "=..." with an empty key: free text
    }
    if (looks_like_data(s)) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                    "%s:%d: numbers before 'endheader' (is the 'endheader' line missing?)", path,
                    f.line);
      goto done;
    }
    if (!t->name) {
      t->name = dup_str(s);
      if (!t->name) {
        rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
        goto done;
      }
    } else if (!meta_append(t, NULL, s)) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
  }
  if (!have_end) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: end of file before the 'endheader' line",
                  path, f.line);
    goto done;
  }
  {  // a motion file without a version line is SIMM's, in degrees (as OpenSim's Storage reads it)
    const size_t n = strlen(path);
    if (t->version < 1 && n >= 4 && !strcasecmp(path + n - 4, ".mot")) t->in_degrees = 1;
  }
  if (!t->name && !(t->name = dup_str(""))) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    goto done;
  }

  // labels
  while ((line = text_next(&f)) && line_is_blank(line)) {
  }
  if (!line) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: no column labels after 'endheader'", path,
                  f.line);
    goto done;
  }
  const int labels_line = f.line;
  const int ncol = count_blank_separated(line);
  if (ncols_hdr >= 0 && ncols_hdr != ncol) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                  "%s:%d: the labels line has %d labels, the header says nColumns=%ld (line %d)",
                  path, labels_line, ncol, ncols_hdr, ncols_line);
    goto done;
  }
  tok = malloc((size_t)(ncol + 1) * sizeof(char*));
  t->labels = calloc((size_t)ncol, sizeof(char*));
  if (!tok || !t->labels) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    goto done;
  }
  t->ncol = ncol;
  split_blanks(line, tok, ncol);
  for (int c = 0; c < ncol; c++) {
    if (!(t->labels[c] = dup_str(tok[c]))) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
  }

  // rows: count the non-blank lines first, then parse them
  {
    const long nrow = count_data_lines(&f);
    if ((double)nrow * ncol > (double)INT_MAX) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %ld rows of %d columns are too many", path,
                    nrow, ncol);
      goto done;
    }
    t->data = calloc((size_t)nrow * (size_t)ncol + 1, sizeof(double));
    if (!t->data) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
    const char* ncol_source = ncols_hdr >= 0 ? "the header says" : "the labels line has";
    int r = 0;
    while (r < nrow && (line = text_next(&f))) {
      if (line_is_blank(line)) continue;
      const int n = split_blanks(line, tok, ncol + 1);
      if (n != ncol) {
        const int last = !f.newline && f.pos >= f.len;
        rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: row %d has %d values, %s %d columns%s",
                      path, f.line, r + 1, n, ncol_source, ncol,
                      last ? " (the last line has no line end: is the file truncated?)" : "");
        goto done;
      }
      double* row = t->data + (size_t)r * ncol;
      for (int c = 0; c < ncol; c++) {
        if (!parse_double(tok[c], &row[c])) {
          rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                        "%s:%d: row %d, column %d ('%s'): '%s' is not a number", path, f.line,
                        r + 1, c + 1, t->labels[c], tok[c]);
          goto done;
        }
      }
      r++;
    }
    t->nrow = (int)nrow;
  }
  if (nrows_hdr >= 0 && nrows_hdr != t->nrow) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                  "%s:%d: the header says nRows=%ld, the file has %d data rows%s", path,
                  nrows_line, nrows_hdr, t->nrow,
                  !f.newline ? " (the last line has no line end: is the file truncated?)" : "");
    goto done;
  }
  *out = t;
  rc = MBS_OK;
done:
  free(tok);
  free(f.buf);
  if (rc != MBS_OK) mbs_table_free(t);
  return rc;
}

// ---------------------------------------------------------------------------------------------
// marker files

int mbs_table_read_trc(const char* path, mbs_table** out, mbs_error* err) {
  if (out) *out = NULL;
  if (!path || !out)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: read_trc needs a path and an output");
  text_file f;
  int rc = text_open(&f, path, err);
  if (rc != MBS_OK) return rc;
  mbs_table* t = calloc(1, sizeof(*t));
  char** tok = NULL;
  char** keys = NULL;
  int nkeys = 0;
  char* line;
  if (!t) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    goto done;
  }
  if (line_is_blank(f.buf)) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:1: the file is empty (no header)", path);
    goto done;
  }

  // line 1: PathFileType 4 (X/Y/Z) <file name>
  line = text_next(&f);
  {
    char* fields[4] = {NULL, NULL, NULL, NULL};
    const int n = split_tabs(line, fields, 4);
    char* first = fields[0];
    char* rest = first;
    while (*rest && *rest != ' ') rest++;  // "PathFileType 4 ..." separated by spaces
    if (*rest) *rest = 0;
    if (strcmp(first, "PathFileType") != 0) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                    "%s:1: not a marker file: the first line does not start with PathFileType",
                    path);
      goto done;
    }
    if (!(t->name = dup_str(n >= 4 ? fields[3] : ""))) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
  }

  // lines 2 and 3: keys and values
  if (!(line = text_next(&f))) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: end of file before the line of keys", path,
                  f.line);
    goto done;
  }
  nkeys = count_blank_separated(line);
  keys = malloc((size_t)(nkeys + 1) * sizeof(char*));
  if (!keys) {
    rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
    goto done;
  }
  split_blanks(line, keys, nkeys);
  if (!(line = text_next(&f))) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: end of file before the line of values",
                  path, f.line);
    goto done;
  }
  {
    const int nvalues = count_blank_separated(line);
    if (nvalues != nkeys) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: %d values for the %d keys of line %d",
                    path, f.line, nvalues, nkeys, f.line - 1);
      goto done;
    }
    tok = malloc((size_t)(nkeys + 1) * sizeof(char*));
    if (!tok) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
    split_blanks(line, tok, nkeys);
    for (int i = 0; i < nkeys; i++) {
      if (!meta_append(t, keys[i], tok[i])) {
        rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
        goto done;
      }
    }
    free(tok);
    tok = NULL;
  }
  const int values_line = f.line;
  long nframes, nmarkers;
  {
    const char* s = mbs_table_get_meta(t, "NumFrames");
    if (!s || !parse_count(s, &nframes)) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: NumFrames is missing or not a count",
                    path, values_line);
      goto done;
    }
    s = mbs_table_get_meta(t, "NumMarkers");
    if (!s || !parse_count(s, &nmarkers) || nmarkers > (INT_MAX - 2) / 3) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: NumMarkers is missing or not a count",
                    path, values_line);
      goto done;
    }
    s = mbs_table_get_meta(t, "Units");
    if (s && !(t->units = dup_str(s))) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
  }

  // line 4: Frame# Time <marker> (tab) (tab) <marker> ...
  if (!(line = text_next(&f))) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: end of file before the marker names", path,
                  f.line);
    goto done;
  }
  {
    const int nfields = split_tabs(line, NULL, 0);
    tok = malloc((size_t)(nfields + 1) * sizeof(char*));
    if (!tok) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
    // split_tabs with max 0 cut the line at the tabs: gather the fields again
    char* p = line;
    for (int i = 0; i < nfields; i++) {
      tok[i] = p;
      p += strlen(p) + 1;
    }
    int n = 0;
    for (int i = 0; i < nfields; i++)
      if (*trim(tok[i])) tok[n++] = trim(tok[i]);
    if (n < 2 || strcmp(tok[0], "Frame#") != 0 || strcasecmp(tok[1], "Time") != 0) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                    "%s:%d: expected the labels line 'Frame# Time <marker names>'", path, f.line);
      goto done;
    }
    if (n - 2 != nmarkers) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                    "%s:%d: %d marker names, the header says NumMarkers=%ld (line %d)", path,
                    f.line, n - 2, nmarkers, values_line);
      goto done;
    }
    t->markers = calloc((size_t)nmarkers + 1, sizeof(char*));
    t->ncol = 1 + 3 * (int)nmarkers;
    t->labels = calloc((size_t)t->ncol, sizeof(char*));
    if (!t->markers || !t->labels) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
    t->nmarkers = (int)nmarkers;
    int ok = (t->labels[0] = dup_str("time")) != NULL;
    for (int m = 0; m < nmarkers && ok; m++) {
      const char* name = tok[2 + m];
      ok = (t->markers[m] = dup_str(name)) != NULL;
      for (int k = 0; k < 3 && ok; k++) {
        const size_t len = strlen(name) + 3;
        char* label = malloc(len);
        if (label) snprintf(label, len, "%s_%c", name, "xyz"[k]);
        ok = (t->labels[1 + 3 * m + k] = label) != NULL;
      }
    }
    if (!ok) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
    free(tok);
    tok = NULL;
  }

  // line 5: X1 Y1 Z1 X2 ...
  if (!(line = text_next(&f))) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: end of file before the X1 Y1 Z1 line", path,
                  f.line);
    goto done;
  }
  if (count_blank_separated(line) != 3 * nmarkers) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                  "%s:%d: %d coordinate labels (X1 Y1 Z1 ...), expected 3 per marker = %ld",
                  path, f.line, count_blank_separated(line), 3 * nmarkers);
    goto done;
  }

  // frames
  {
    const long nrow = count_data_lines(&f);
    if ((double)nrow * t->ncol > (double)INT_MAX) {
      rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s: %ld frames of %ld markers are too many",
                    path, nrow, nmarkers);
      goto done;
    }
    const int expect = 2 + 3 * (int)nmarkers;
    tok = malloc((size_t)(expect + 1) * sizeof(char*));
    t->data = calloc((size_t)nrow * (size_t)t->ncol + 1, sizeof(double));
    if (!tok || !t->data) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, path, "%s: out of memory", path);
      goto done;
    }
    int r = 0;
    while (r < nrow && (line = text_next(&f))) {
      if (line_is_blank(line)) continue;
      // the fields past the expected ones must all be empty (lines often end with a tab)
      int n = 0;
      char* extra = NULL;
      {
        char* s = line;
        for (;;) {
          char* end = strchr(s, '\t');
          if (end) *end = 0;
          char* field = trim(s);
          if (n < expect) tok[n] = field;
          else if (*field && !extra) extra = field;
          n++;
          if (!end) break;
          s = end + 1;
        }
      }
      if (n < expect || extra) {
        const int last = !f.newline;
        rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                      "%s:%d: frame %d has %d fields, expected %d (Frame#, Time and 3 per "
                      "marker)%s",
                      path, f.line, r + 1, n, expect,
                      last && !extra ? " (the last line has no line end: is the file truncated?)"
                                     : "");
        goto done;
      }
      double* row = t->data + (size_t)r * t->ncol;
      if (!parse_double(tok[1], &row[0])) {
        rc = MBS_FAIL(err, MBS_ERR_PARSE, path, "%s:%d: frame %d: time '%s' is not a number",
                      path, f.line, r + 1, tok[1]);
        goto done;
      }
      for (int m = 0; m < nmarkers; m++) {
        char** xyz = tok + 2 + 3 * m;
        if (!*xyz[0] || !*xyz[1] || !*xyz[2]) {  // not seen in this frame
          row[1 + 3 * m] = row[2 + 3 * m] = row[3 + 3 * m] = NAN;
          continue;
        }
        for (int k = 0; k < 3; k++) {
          if (!parse_double(xyz[k], &row[1 + 3 * m + k])) {
            rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                          "%s:%d: frame %d, column %d ('%s'): '%s' is not a number", path,
                          f.line, r + 1, 3 + 3 * m + k, t->labels[1 + 3 * m + k], xyz[k]);
            goto done;
          }
        }
      }
      r++;
    }
    t->nrow = (int)nrow;
  }
  if (t->nrow != nframes) {
    rc = MBS_FAIL(err, MBS_ERR_PARSE, path,
                  "%s:%d: the header says NumFrames=%ld, the file has %d frames%s", path,
                  values_line, nframes, t->nrow,
                  !f.newline ? " (the last line has no line end: is the file truncated?)" : "");
    goto done;
  }
  *out = t;
  rc = MBS_OK;
done:
  free(tok);
  free(keys);
  free(f.buf);
  if (rc != MBS_OK) mbs_table_free(t);
  return rc;
}

int mbs_table_read(const char* path, mbs_table** out, mbs_error* err) {
  const size_t n = path ? strlen(path) : 0;
  if (n >= 4 && strcasecmp(path + n - 4, ".trc") == 0) return mbs_table_read_trc(path, out, err);
  return mbs_table_read_sto(path, out, err);
}

// ---------------------------------------------------------------------------------------------
// writing storage files

// the shortest of 15, 16 or 17 significant digits that reads back as the same double (the
// format of mbs_sto_write_row); NaN as OpenSim writes it
static void put_double(FILE* f, double x) {
  if (isnan(x)) {
    fputs("NaN", f);
    return;
  }
  char buf[40];
  for (int digits = 15; digits < 17; digits++) {
    snprintf(buf, sizeof(buf), "%.*g", digits, x);
    if (strtod(buf, NULL) == x) {
      fputs(buf, f);
      return;
    }
  }
  fprintf(f, "%.17g", x);
}

static int has_line_break(const char* s) { return strchr(s, '\n') || strchr(s, '\r'); }

static int is_reserved_key(const char* k) {
  return !strcmp(k, "version") || !strcmp(k, "nRows") || !strcmp(k, "nColumns") ||
         !strcmp(k, "inDegrees") || !strcmp(k, "DataType");
}

// what the reader would take for something else than free text
static int text_is_ambiguous(const char* s) {
  const char* eq = strchr(s, '=');
  if (eq) {
    for (const char* p = s; p < eq; p++)
      if (*p != ' ' && *p != '\t') return 1;  // non-empty key: a key=value line
  }
  char copy[64];
  snprintf(copy, sizeof(copy), "%s", s);
  return strcmp(trim(copy), "endheader") == 0 || line_is_blank(s) || looks_like_data(s);
}

int mbs_table_write_sto(const mbs_table* t, const char* path, int version, mbs_error* err) {
  if (!t || !path)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: write_sto needs a table and a path");
  if (version != 1 && version != 3)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, path,
                    "%s: storage header version %d is not supported (1 or 3)", path, version);
  for (int c = 0; c < t->ncol; c++) {
    const char* l = t->labels[c];
    int bad = !*l;
    for (const char* p = l; *p && !bad; p++) bad = is_blank_char(*p);
    if (bad)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, path,
                      "%s: column %d label '%s' is empty or contains blanks", path, c + 1, l);
  }
  const char* name = t->name ? t->name : "";
  {
    char copy[64];
    snprintf(copy, sizeof(copy), "%s", name);
    if (has_line_break(name) || strchr(name, '=') || strcmp(trim(copy), "endheader") == 0)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, path,
                      "%s: the table name '%s' cannot be a header line (line break, '=' or "
                      "'endheader')",
                      path, name);
  }
  for (int i = 0; i < t->nmeta; i++) {
    const mbs_table_entry* m = &t->meta[i];
    int bad = has_line_break(m->value);
    if (m->key)
      bad = bad || !*m->key || has_line_break(m->key) || strchr(m->key, '=') ||
            m->key[0] == ' ' || m->key[0] == '\t';
    else
      bad = bad || text_is_ambiguous(m->value);
    if (bad)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, path,
                      "%s: header line %d ('%s%s%s') would not read back the same", path, i + 1,
                      m->key ? m->key : "", m->key ? "=" : "", m->value);
  }

  FILE* f = fopen(path, "w");
  if (!f) return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create file: %s", path, strerror(errno));
  if (version == 1) {
    fprintf(f, "%s\nversion=1\nnRows=%d\nnColumns=%d\ninDegrees=%s\n", *name ? name : "mbstudy",
            t->nrow, t->ncol, t->in_degrees ? "yes" : "no");
  } else if (*name) {
    fprintf(f, "%s\n", name);
  }
  for (int i = 0; i < t->nmeta; i++) {
    const mbs_table_entry* m = &t->meta[i];
    if (!m->key)
      fprintf(f, "%s\n", m->value);
    else if (!is_reserved_key(m->key))
      fprintf(f, "%s=%s\n", m->key, m->value);
  }
  if (version == 3)
    fprintf(f, "inDegrees=%s\nDataType=double\nversion=3\n", t->in_degrees ? "yes" : "no");
  fputs("endheader\n", f);
  for (int c = 0; c < t->ncol; c++) fprintf(f, "%s%s", c ? "\t" : "", t->labels[c]);
  fputc('\n', f);
  for (int r = 0; r < t->nrow; r++) {
    const double* row = t->data + (size_t)r * t->ncol;
    for (int c = 0; c < t->ncol; c++) {
      if (c) fputc('\t', f);
      put_double(f, row[c]);
    }
    fputc('\n', f);
  }
  const int failed = ferror(f);
  const int close_failed = fclose(f) != 0;
  if (failed || close_failed)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: write failed: %s", path, strerror(errno));
  return MBS_OK;
}

int mbs_table_write_trc(const mbs_table* t, const char* path, mbs_error* err) {
  if (!t || !path || t->nmarkers < 1 || t->ncol != 1 + 3 * t->nmarkers || !t->markers)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, path ? path : "table",
                    "%s: a marker file needs a table of markers (time, then x, y, z of each)",
                    path ? path : "table");
  FILE* f = fopen(path, "w");
  if (!f) return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot write: %s", path, strerror(errno));
  const char* base = strrchr(path, '/');
  const double rate = t->nrow > 1 ? (t->nrow - 1) / (mbs_table_get(t, t->nrow - 1, 0) -
                                                     mbs_table_get(t, 0, 0)) : 1;
  const char* units = t->units ? t->units : "m";
  fprintf(f, "PathFileType\t4\t(X/Y/Z)\t%s\n", base ? base + 1 : path);
  fprintf(f, "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\t"
             "OrigDataStartFrame\tOrigNumFrames\n");
  fprintf(f, "%.10g\t%.10g\t%d\t%d\t%s\t%.10g\t1\t%d\n", rate, rate, t->nrow, t->nmarkers,
          units, rate, t->nrow);
  fputs("Frame#\tTime", f);
  for (int m = 0; m < t->nmarkers; m++) fprintf(f, "\t%s\t\t", t->markers[m]);
  fputs("\n\t", f);
  for (int m = 0; m < t->nmarkers; m++) fprintf(f, "\tX%d\tY%d\tZ%d", m + 1, m + 1, m + 1);
  fputs("\n\n", f);
  for (int r = 0; r < t->nrow; r++) {
    const double* row = t->data + (size_t)r * t->ncol;
    fprintf(f, "%d\t", r + 1);
    put_double(f, row[0]);
    for (int m = 0; m < t->nmarkers; m++) {
      const int seen = isfinite(row[1 + 3 * m]) && isfinite(row[2 + 3 * m]) &&
                       isfinite(row[3 + 3 * m]);
      for (int k = 0; k < 3; k++) {
        fputc('\t', f);
        if (seen) put_double(f, row[1 + 3 * m + k]);  // a marker not seen: empty fields
      }
    }
    fputc('\n', f);
  }
  const int failed = ferror(f);
  const int close_failed = fclose(f) != 0;
  if (failed || close_failed)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: write failed: %s", path, strerror(errno));
  return MBS_OK;
}

// ---------------------------------------------------------------------------------------------
// units at the edge

int mbs_table_to_radians(mbs_table* t, const char* const* columns, int ncolumns,
                         mbs_error* err) {
  if (!t || (columns && ncolumns < 0))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: to_radians: bad arguments");
  if (columns) {  // check every name before changing anything
    for (int i = 0; i < ncolumns; i++) {
      const int c = mbs_table_column(t, columns[i]);
      if (c < 0)
        return MBS_FAIL(err, MBS_ERR_UNKNOWN_NAME, "table",
                        "table '%s': no column '%s' to convert to radians", t->name,
                        columns[i] ? columns[i] : "(null)");
      if (c == 0)
        return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table",
                        "table '%s': column '%s' is the independent variable, not an angle",
                        t->name, columns[i]);
    }
  }
  if (!t->in_degrees) return MBS_OK;
  const double k = M_PI / 180.0;  // OpenSim's SimTK_DEGREE_TO_RADIAN
  const int n = columns ? ncolumns : t->ncol - 1;
  for (int i = 0; i < n; i++) {
    const int c = columns ? mbs_table_column(t, columns[i]) : i + 1;
    if (columns) {  // a name listed twice is converted once
      int seen = 0;
      for (int j = 0; j < i && !seen; j++) seen = strcmp(columns[j], columns[i]) == 0;
      if (seen) continue;
    }
    for (int r = 0; r < t->nrow; r++) t->data[(size_t)r * t->ncol + c] *= k;
  }
  t->in_degrees = 0;
  return MBS_OK;
}

int mbs_table_to_meters(mbs_table* t, mbs_error* err) {
  if (!t) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "table", "table: to_meters: no table");
  if (!t->units)
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table", "table '%s': the units are not known",
                    t->name);
  double k;
  if (!strcasecmp(t->units, "mm")) k = 1e-3;
  else if (!strcasecmp(t->units, "cm")) k = 1e-2;
  else if (!strcasecmp(t->units, "dm")) k = 1e-1;
  else if (!strcasecmp(t->units, "m")) k = 1;
  else
    return MBS_FAIL(err, MBS_ERR_PARAMETER, "table",
                    "table '%s': units '%s' are not a length unit known here (mm, cm, dm, m)",
                    t->name, t->units);
  char* m = dup_str("m");
  if (!m) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, "table", "table: out of memory");
  if (mbs_table_get_meta(t, "Units")) {
    const int rc = mbs_table_set_meta(t, "Units", "m", err);
    if (rc != MBS_OK) {
      free(m);
      return rc;
    }
  }
  if (k != 1)
    for (int r = 0; r < t->nrow; r++)
      for (int c = 1; c < t->ncol; c++) t->data[(size_t)r * t->ncol + c] *= k;
  free(t->units);
  t->units = m;
  return MBS_OK;
}
