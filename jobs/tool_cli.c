// `mbstudy inverse-kinematics`, `mbstudy scale` and `mbstudy analyze` (tool_cli.h). Each command
// reads its flags, makes the files they name absolute (relative names are relative to the
// current folder), checks that its input files can be read, builds the setup document OpenSim
// would read for the same run (with libxml2's tree, so that names are escaped) and runs it, read
// by mbs_setup_read_memory, with the tool function `mbstudy run-tool` runs: the same computation,
// result files and messages (which name the document "<command> flags").
#include "tool_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../io/xml_read.h"
#include "mbs/files.h"
#include "mbs/osim.h"
#include "mbs/scale.h"
#include "mbs/table.h"
#include "run_tool.h"

#define CLI_MAX_LIST 512  // values of a repeated flag (--weight, --manual, ...)

//---------------------------------- flags -------------------------------------------------------

typedef struct cli {
  const char* cmd;       // "inverse-kinematics"
  int argc;
  char** argv;
  int i;                 // the flag being read
  mbs_tool_options o;    // --quiet, --rename-type
  char** owned;          // strings made here (absolute paths), freed with cli_free
  int nowned, cap;
} cli;

static void cli_init(cli* c, const char* cmd, int argc, char** argv) {
  memset(c, 0, sizeof(*c));
  c->cmd = cmd;
  c->argc = argc;
  c->argv = argv;
  c->o.log = stderr;
}

static void cli_free(cli* c) {
  for (int i = 0; i < c->nowned; i++) free(c->owned[i]);
  free(c->owned);
}

// --help or -h anywhere
static int wants_help(int argc, char** argv) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

// the value of flag argv[i] (i moves on to it), or NULL after a message; a value cannot start
// with "--" (that is the next flag: this one's value is missing)
static char* value(cli* c, const char* what) {
  if (c->i + 1 >= c->argc || !strncmp(c->argv[c->i + 1], "--", 2)) {
    fprintf(stderr, "mbstudy %s: %s needs a value (%s)\n", c->cmd, c->argv[c->i], what);
    return NULL;
  }
  return c->argv[++c->i];
}

// s as a number (finite, or also infinite when inf_ok: "Inf", "Infinity"); 0 after a message
static int number(const cli* c, const char* flag, const char* s, int inf_ok, double* v) {
  char* end;
  *v = strtod(s, &end);
  if (end == s || *end || isnan(*v) || (!inf_ok && isinf(*v))) {
    fprintf(stderr, "mbstudy %s: %s expects a number, got '%s'\n", c->cmd, flag, s);
    return 0;
  }
  return 1;
}

// --time-range T0 T1 (i moves on to T1); 0 after a message
static int time_range(cli* c, double t[2]) {
  const char* flag = c->argv[c->i];
  if (c->i + 2 >= c->argc) {
    fprintf(stderr, "mbstudy %s: %s needs two values (T0 T1, s)\n", c->cmd, flag);
    return 0;
  }
  if (!number(c, flag, c->argv[c->i + 1], 0, &t[0]) ||
      !number(c, flag, c->argv[c->i + 2], 0, &t[1]))
    return 0;
  if (t[0] > t[1]) {
    fprintf(stderr, "mbstudy %s: %s %s %s: the start is after the end\n", c->cmd, flag,
            c->argv[c->i + 1], c->argv[c->i + 2]);
    return 0;
  }
  c->i += 2;
  return 1;
}

// the flags every command takes: --quiet and --rename-type OLD=NEW; 1 when argv[i] is one
// (read), -1 after a message about it, 0 when it is another
static int common_flag(cli* c) {
  const char* a = c->argv[c->i];
  if (!strcmp(a, "--quiet")) {
    c->o.quiet = 1;
    return 1;
  }
  if (strcmp(a, "--rename-type")) return 0;
  char* v = value(c, "OLD=NEW, two class names");
  if (!v) return -1;
  char* eq = strchr(v, '=');
  if (!eq || eq == v || !eq[1] || strchr(eq + 1, '=')) {
    fprintf(stderr, "mbstudy %s: --rename-type takes OLD=NEW (two class names), got '%s'\n",
            c->cmd, v);
    return -1;
  }
  if (c->o.nrename_types == MBS_TOOL_MAX_RENAMES) {
    fprintf(stderr, "mbstudy %s: at most %d --rename-type options\n", c->cmd,
            MBS_TOOL_MAX_RENAMES);
    return -1;
  }
  *eq = 0;  // (argv's strings are the program's to change)
  c->o.rename_types[2 * c->o.nrename_types] = v;
  c->o.rename_types[2 * c->o.nrename_types + 1] = eq + 1;
  c->o.nrename_types++;
  return 1;
}

static int unknown(const cli* c) {
  const char* a = c->argv[c->i];
  if (a[0] == '-')
    fprintf(stderr, "mbstudy %s: unknown option '%s' (mbstudy %s --help lists them)\n", c->cmd,
            a, c->cmd);
  else
    fprintf(stderr, "mbstudy %s: unexpected argument '%s' (each value follows its option)\n",
            c->cmd, a);
  return 2;
}

// room for one more value of a repeated flag; 0 after a message
static int room(const cli* c, int n) {
  if (n < CLI_MAX_LIST) return 1;
  fprintf(stderr, "mbstudy %s: at most %d %s options\n", c->cmd, CLI_MAX_LIST, c->argv[c->i]);
  return 0;
}

// add `flag` to the list of missing ones when not given
static void need(char* missing, size_t n, const char* flag, int given) {
  if (given) return;
  const size_t l = strlen(missing);
  snprintf(missing + l, n - l, "%s%s", l ? ", " : "", flag);
}

// the required flags not given: a message and the usage; 2, or 0 when none is missing
static int report_missing(const cli* c, const char* missing, void (*usage)(FILE*)) {
  if (!*missing) return 0;
  fprintf(stderr, "mbstudy %s: missing %s\n", c->cmd, missing);
  usage(stderr);
  return 2;
}

static char* own(cli* c, char* s) {
  if (!s) return NULL;
  if (c->nowned == c->cap) {
    const int cap = c->cap ? 2 * c->cap : 16;
    char** g = realloc(c->owned, (size_t)cap * sizeof(char*));
    if (!g) {
      free(s);
      return NULL;
    }
    c->owned = g;
    c->cap = cap;
  }
  return c->owned[c->nowned++] = s;
}

// `p` made absolute against the current folder (kept by c), or NULL (out of memory, message
// printed); NULL in, NULL out
static const char* absolute(cli* c, const char* p, int* oom) {
  if (!p) return NULL;
  char* r = NULL;
  if (p[0] == '/') {
    r = strdup(p);
  } else {
    char* cwd = getcwd(NULL, 0);
    while (p[0] == '.' && p[1] == '/') {
      p += 2;
      while (*p == '/') p++;
    }
    if (cwd) r = *p && strcmp(p, ".") ? mbs_format_string("%s/%s", cwd, p) : strdup(cwd);
    free(cwd);
  }
  if (!own(c, r)) {
    fprintf(stderr, "mbstudy %s: %s\n", c->cmd, r ? "out of memory" : strerror(errno));
    *oom = 1;
    return NULL;
  }
  return r;
}

// an input file must be a readable file: `mbstudy CMD: FLAG GIVEN: reason`; 0 after that
static int readable(const cli* c, const char* flag, const char* given, const char* path) {
  struct stat sb;
  const char* why = NULL;
  if (stat(path, &sb) || access(path, R_OK)) why = strerror(errno);
  else if (S_ISDIR(sb.st_mode)) why = "a folder, not a file";
  if (!why) return 1;
  fprintf(stderr, "mbstudy %s: %s %s: %s\n", c->cmd, flag, given, why);
  return 0;
}

// the file name without its folder and last extension (kept by c)
static const char* stem(cli* c, const char* path) {
  const char* b = strrchr(path, '/');
  b = b ? b + 1 : path;
  const char* dot = strrchr(b, '.');
  return own(c, strndup(b, dot && dot != b ? (size_t)(dot - b) : strlen(b)));
}

// the folder of a file name (kept by c)
static const char* folder(cli* c, const char* path) {
  const char* slash = strrchr(path, '/');
  if (!slash) return own(c, strdup("."));
  return own(c, strndup(path, slash == path ? 1 : (size_t)(slash - path)));
}

//---------------------------------- the setup document -------------------------------------------

typedef struct xml {
  xmlDocPtr doc;
  int bad;  // out of memory
} xml;

// <OpenSimDocument Version="40000"><element name="name">: the tool element
static xmlNodePtr xml_tool(xml* x, const char* element, const char* name) {
  x->doc = xmlNewDoc(BAD_CAST "1.0");
  xmlNodePtr root = x->doc ? xmlNewNode(NULL, BAD_CAST "OpenSimDocument") : NULL;
  xmlNodePtr t = NULL;
  if (root) {
    xmlDocSetRootElement(x->doc, root);
    t = xmlNewChild(root, NULL, BAD_CAST element, NULL);
  }
  if (!root || !t || !xmlNewProp(root, BAD_CAST "Version", BAD_CAST "40000") ||
      !xmlNewProp(t, BAD_CAST "name", BAD_CAST name))
    x->bad = 1;
  return t;
}

// <key>text</key> under parent (text NULL: an empty element); an object when name is given
static xmlNodePtr xml_add(xml* x, xmlNodePtr parent, const char* key, const char* text) {
  xmlNodePtr n = parent ? xmlNewTextChild(parent, NULL, BAD_CAST key, BAD_CAST text) : NULL;
  if (!n) x->bad = 1;
  return n;
}

static xmlNodePtr xml_object(xml* x, xmlNodePtr parent, const char* kind, const char* name) {
  xmlNodePtr n = xml_add(x, parent, kind, NULL);
  if (n && name && !xmlNewProp(n, BAD_CAST "name", BAD_CAST name)) x->bad = 1;
  return n;
}

static void xml_number(xml* x, xmlNodePtr parent, const char* key, double v) {
  char b[64];
  if (isinf(v)) snprintf(b, sizeof(b), "%sInf", v < 0 ? "-" : "");
  else snprintf(b, sizeof(b), "%.17g", v);
  xml_add(x, parent, key, b);
}

static void xml_numbers(xml* x, xmlNodePtr parent, const char* key, const double* v, int n) {
  char b[200] = "";
  for (int i = 0; i < n; i++)
    snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%.17g", i ? " " : "", v[i]);
  xml_add(x, parent, key, b);
}

// run the document with the tool; its status, or 1 after a message
static int run_document(cli* c, xml* x, int (*tool)(mbs_setup*, const mbs_tool_options*)) {
  if (x->bad) {
    fprintf(stderr, "mbstudy %s: out of memory\n", c->cmd);
    return 1;
  }
  xmlChar* text = NULL;
  int n = 0;
  xmlDocDumpFormatMemoryEnc(x->doc, &text, &n, "UTF-8", 1);
  char* cwd = getcwd(NULL, 0);
  char label[64];
  snprintf(label, sizeof(label), "%s flags", c->cmd);
  mbs_error err;
  mbs_error_clear(&err);
  mbs_setup* s = text && cwd ? mbs_setup_read_memory((const char*)text, (size_t)n, label, cwd,
                                                     &err)
                             : NULL;
  int rc = 1;
  if (!s) {
    fprintf(stderr, "mbstudy %s: %s\n", c->cmd, text && cwd ? err.message : "out of memory");
  } else {
    rc = tool(s, &c->o);
    mbs_setup_free(s);
  }
  xmlFree(text);
  free(cwd);
  return rc;
}

//---------------------------------- inverse-kinematics -------------------------------------------

static void ik_usage(FILE* f) {
  fprintf(f,
          "usage: mbstudy inverse-kinematics --model MODEL.osim --markers TRIAL.trc\n"
          "                                  --out FILE.mot [options]\n"
          "  OpenSim's InverseKinematicsTool: frame by frame, the coordinates that best fit the\n"
          "  trial's markers (the run `mbstudy run-tool` makes of the equivalent setup file)\n"
          "  --model MODEL.osim          the model; its markers that the trial has are tracked\n"
          "  --markers TRIAL.trc         the marker trajectories\n"
          "  --out FILE.mot              the coordinates (rotations in degrees), as OpenSim\n"
          "                              writes them\n"
          "  --time-range T0 T1          the frames nearest T0 and T1 and those between\n"
          "                              (default: every frame)\n"
          "  --weight NAME=W             marker NAME's weight (repeatable): every marker of the\n"
          "                              trial that the model has is tracked, with weight 1\n"
          "                              unless given (0 leaves it out)\n"
          "  --weights FILE.xml          the marker tasks of an IKTaskSet file as OpenSim writes\n"
          "                              it (or of the first IKTaskSet of a setup file) instead:\n"
          "                              only its applied marker tasks are tracked\n"
          "  --coordinate-task NAME=VALUE[:W]\n"
          "                              hold coordinate NAME near VALUE (rad or m, as OpenSim's\n"
          "                              IKCoordinateTask; VALUEdeg in degrees; 'default' for\n"
          "                              its default value) with weight W (1) (repeatable)\n"
          "  --accuracy A                the solver's accuracy (1e-5)\n"
          "  --constraint-weight W       constraints penalized with weight W (default Inf: they\n"
          "                              are enforced)\n"
          "  --marker-errors FILE.sto    also write the marker errors of each frame\n"
          "                              (total_squared_error, marker_error_RMS and _max)\n"
          "  --rename-type OLD=NEW       read the model's forces of class OLD as class NEW\n"
          "  --quiet                     no progress\n");
}

typedef struct ik_ctask {
  const char* name;
  int dflt;        // default_value (else manual_value)
  double value;    // rad or m
  double weight;
} ik_ctask;

// the first IKTaskSet element at or below n
static xmlNodePtr find_task_set(xmlNodePtr n) {
  for (; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    if (!strcmp((const char*)n->name, "IKTaskSet")) return n;
    xmlNodePtr d = find_task_set(n->children);
    if (d) return d;
  }
  return NULL;
}

// the IKTaskSet of --weights FILE copied under the tool, the coordinate tasks of flags
// replacing its own of the same names; the set (NULL, with a message, on failure)
static xmlNodePtr import_task_set(cli* c, xml* x, xmlNodePtr tool, const char* given,
                                  const char* path, const ik_ctask* ct, int nct) {
  mbs_xml_failure xf;
  xmlDocPtr src = mbs_xml_read(path, NULL, 0, 0, "a weights file", &xf);
  if (!src) {
    fprintf(stderr, "mbstudy %s: --weights %s:%d: %s\n", c->cmd, given, xf.line, xf.msg);
    return NULL;
  }
  xmlNodePtr set = find_task_set(xmlDocGetRootElement(src));
  xmlChar* file = set ? xmlGetProp(set, BAD_CAST "file") : NULL;
  xmlNodePtr copy = NULL;
  if (!set) {
    fprintf(stderr, "mbstudy %s: --weights %s: no <IKTaskSet> in the file\n", c->cmd, given);
  } else if (file) {
    fprintf(stderr, "mbstudy %s: --weights %s:%d: the IKTaskSet is kept in %s: give that file\n",
            c->cmd, given, set->line, (const char*)file);
  } else if (!(copy = xmlDocCopyNode(set, x->doc, 1)) || !xmlAddChild(tool, copy)) {
    xmlFreeNode(copy);
    copy = NULL;
    x->bad = 1;
    fprintf(stderr, "mbstudy %s: out of memory\n", c->cmd);
  }
  xmlFree(file);
  xmlFreeDoc(src);
  if (!copy || !nct) return copy;
  xmlNodePtr list = copy;
  for (xmlNodePtr k = copy->children; k; k = k->next)
    if (k->type == XML_ELEMENT_NODE && !strcmp((const char*)k->name, "objects")) list = k;
  for (xmlNodePtr k = list->children, next; k; k = next) {
    next = k->next;
    if (k->type != XML_ELEMENT_NODE || strcmp((const char*)k->name, "IKCoordinateTask")) continue;
    xmlChar* nm = xmlGetProp(k, BAD_CAST "name");
    for (int j = 0; nm && j < nct; j++)
      if (!strcmp((const char*)nm, ct[j].name)) {
        fprintf(stderr, "mbstudy %s: note: --coordinate-task %s replaces the IKCoordinateTask "
                        "'%s' of %s\n", c->cmd, ct[j].name, ct[j].name, given);
        xmlUnlinkNode(k);
        xmlFreeNode(k);
        break;
      }
    xmlFree(nm);
  }
  return list;
}

static void add_coordinate_tasks(xml* x, xmlNodePtr list, const ik_ctask* ct, int nct) {
  for (int j = 0; j < nct; j++) {
    xmlNodePtr t = xml_object(x, list, "IKCoordinateTask", ct[j].name);
    xml_add(x, t, "apply", "true");
    xml_number(x, t, "weight", ct[j].weight);
    xml_add(x, t, "value_type", ct[j].dflt ? "default_value" : "manual_value");
    if (!ct[j].dflt) xml_number(x, t, "value", ct[j].value);
  }
}

// NAME=VALUE[:W] into *t (the string is split in place); 0 after a message
static int parse_coordinate_task(const cli* c, char* v, ik_ctask* t) {
  char* eq = strchr(v, '=');
  if (!eq || eq == v || !eq[1]) {
    fprintf(stderr, "mbstudy %s: --coordinate-task takes NAME=VALUE or NAME=VALUE:WEIGHT, got "
                    "'%s'\n", c->cmd, v);
    return 0;
  }
  *eq = 0;
  char* val = eq + 1;
  char* colon = strrchr(val, ':');
  t->name = v;
  t->weight = 1;
  if (colon) {
    *colon = 0;
    if (!number(c, "--coordinate-task's weight", colon + 1, 0, &t->weight)) return 0;
    if (t->weight < 0) {
      fprintf(stderr, "mbstudy %s: --coordinate-task %s: weight %g is negative\n", c->cmd, v,
              t->weight);
      return 0;
    }
  }
  t->dflt = !strcasecmp(val, "default");
  if (t->dflt) return 1;
  const size_t l = strlen(val);
  const int deg = l > 3 && !strcasecmp(val + l - 3, "deg");
  char buf[128];
  snprintf(buf, sizeof(buf), "%.*s", (int)(deg ? l - 3 : l), val);
  if (!number(c, "--coordinate-task's value", buf, 0, &t->value)) return 0;
  if (deg) t->value *= M_PI / 180;
  return 1;
}

static int has_marker(const mbs_osim_model* m, const char* name) {
  for (int i = 0; i < mbs_osim_nmarker(m); i++)
    if (!strcmp(mbs_osim_marker_at(m, i)->name, name)) return 1;
  return 0;
}

int mbs_cmd_inverse_kinematics(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    ik_usage(stdout);
    return 0;
  }
  cli c;
  cli_init(&c, "inverse-kinematics", argc, argv);
  const char *model = NULL, *markers = NULL, *out = NULL, *weights = NULL, *errors = NULL;
  double accuracy = NAN, cweight = NAN, range[2] = {NAN, NAN};
  const char* wname[CLI_MAX_LIST];
  double wval[CLI_MAX_LIST];
  ik_ctask ct[CLI_MAX_LIST];
  int nw = 0, nct = 0, rc = 2;
  for (c.i = 0; c.i < argc; c.i++) {
    const char* a = argv[c.i];
    const int common = common_flag(&c);
    if (common < 0) return 2;
    if (common) continue;
    if (!strcmp(a, "--model")) {
      if (!(model = value(&c, "a model file"))) return 2;
    } else if (!strcmp(a, "--markers")) {
      if (!(markers = value(&c, "a .trc file"))) return 2;
    } else if (!strcmp(a, "--out")) {
      if (!(out = value(&c, "the .mot file to write"))) return 2;
    } else if (!strcmp(a, "--weights")) {
      if (!(weights = value(&c, "an IKTaskSet file"))) return 2;
    } else if (!strcmp(a, "--marker-errors")) {
      if (!(errors = value(&c, "the .sto file to write"))) return 2;
    } else if (!strcmp(a, "--time-range")) {
      if (!time_range(&c, range)) return 2;
    } else if (!strcmp(a, "--accuracy")) {
      const char* v = value(&c, "a number");
      if (!v || !number(&c, a, v, 0, &accuracy)) return 2;
      if (!(accuracy > 0)) {
        fprintf(stderr, "mbstudy %s: --accuracy must be positive, got '%s'\n", c.cmd, v);
        return 2;
      }
    } else if (!strcmp(a, "--constraint-weight")) {
      const char* v = value(&c, "a number or Inf");
      if (!v || !number(&c, a, v, 1, &cweight)) return 2;
      if (cweight < 0) {
        fprintf(stderr, "mbstudy %s: --constraint-weight must not be negative, got '%s'\n",
                c.cmd, v);
        return 2;
      }
    } else if (!strcmp(a, "--weight")) {
      char* v = value(&c, "NAME=WEIGHT");
      if (!v || !room(&c, nw)) return 2;
      char* eq = strrchr(v, '=');
      if (!eq || eq == v || !eq[1]) {
        fprintf(stderr, "mbstudy %s: --weight takes NAME=WEIGHT (a marker and its weight), got "
                        "'%s'\n", c.cmd, v);
        return 2;
      }
      *eq = 0;
      if (!number(&c, "--weight", eq + 1, 0, &wval[nw])) return 2;
      if (wval[nw] < 0) {
        fprintf(stderr, "mbstudy %s: --weight %s: weight %g is negative\n", c.cmd, v, wval[nw]);
        return 2;
      }
      wname[nw++] = v;
    } else if (!strcmp(a, "--coordinate-task")) {
      char* v = value(&c, "NAME=VALUE[:WEIGHT]");
      if (!v || !room(&c, nct) || !parse_coordinate_task(&c, v, &ct[nct])) return 2;
      nct++;
    } else {
      return unknown(&c);
    }
  }
  char missing[200] = "";
  need(missing, sizeof(missing), "--model", model != NULL);
  need(missing, sizeof(missing), "--markers", markers != NULL);
  need(missing, sizeof(missing), "--out", out != NULL);
  if (report_missing(&c, missing, ik_usage)) return 2;
  if (weights && nw) {
    fprintf(stderr, "mbstudy %s: --weights and --weight do not go together: give the weights "
                    "in the file or by flags\n", c.cmd);
    return 2;
  }
  xml x = {NULL, 0};
  mbs_osim_model* m = NULL;
  mbs_table* trc = NULL;
  char* tmp = NULL;
  int oom = 0;
  const char* model_abs = absolute(&c, model, &oom);
  const char* markers_abs = absolute(&c, markers, &oom);
  const char* out_abs = absolute(&c, out, &oom);
  const char* weights_abs = absolute(&c, weights, &oom);
  const char* errors_abs = absolute(&c, errors, &oom);
  rc = 1;
  if (oom || !readable(&c, "--model", model, model_abs) ||
      !readable(&c, "--markers", markers, markers_abs) ||
      (weights && !readable(&c, "--weights", weights, weights_abs)))
    goto done;
  // the model's markers and coordinates and the trial's markers, for the tasks the flags give
  mbs_error err;
  mbs_error_clear(&err);
  if (!weights || nct) {
    mbs_osim_options mo = {.rename_types = c.o.rename_types,
                           .nrename_types = c.o.nrename_types};
    if (!(m = mbs_osim_read_options(model_abs, &mo, &err))) {
      fprintf(stderr, "mbstudy %s: %s\n", c.cmd, err.message);
      goto done;
    }
  }
  const size_t lm = strlen(markers_abs);
  if (lm < 4 || strcasecmp(markers_abs + lm - 4, ".trc")) {
    fprintf(stderr, "mbstudy %s: --markers %s: mbstudy reads marker files in the .trc format\n",
            c.cmd, markers);
    goto done;
  }
  if (!weights && mbs_table_read_trc(markers_abs, &trc, &err)) {
    fprintf(stderr, "mbstudy %s: %s\n", c.cmd, err.message);
    goto done;
  }
  for (int j = 0; j < nw; j++) {
    int found = 0;
    for (int k = 0; k < trc->nmarkers && !found; k++) found = !strcmp(trc->markers[k], wname[j]);
    if (!found || !has_marker(m, wname[j])) {
      fprintf(stderr, "mbstudy %s: --weight %s: %s has no marker '%s'\n", c.cmd, wname[j],
              found ? model : markers, wname[j]);
      goto done;
    }
  }
  for (int j = 0; j < nct; j++)
    if (mbs_osim_find_coordinate(m, ct[j].name) < 0) {
      fprintf(stderr, "mbstudy %s: --coordinate-task %s: %s has no coordinate '%s'\n", c.cmd,
              ct[j].name, model, ct[j].name);
      goto done;
    }
  // the marker errors: <results_directory>/<name>_ik_marker_errors.sto, so a file of another
  // name is written into a folder of its own next to it, then moved
  const char* name = stem(&c, out_abs);
  const char* results = folder(&c, errors_abs ? errors_abs : out_abs);
  static const char suffix[] = "_ik_marker_errors.sto";
  if (errors_abs) {
    const char* base = strrchr(errors_abs, '/') + 1;
    const size_t lb = strlen(base), ls = strlen(suffix);
    if (lb >= ls && !strcmp(base + lb - ls, suffix)) {
      name = own(&c, strndup(base, lb - ls));
    } else if (results) {
      if (mbs_make_dirs(results) ||
          !(tmp = mbs_format_string("%s/.mbstudy-ik-XXXXXX", results)) || !mkdtemp(tmp)) {
        fprintf(stderr, "mbstudy %s: --marker-errors %s: cannot make a folder in %s: %s\n",
                c.cmd, errors, results, tmp ? strerror(errno) : "out of memory");
        free(tmp);
        tmp = NULL;
        goto done;
      }
      results = tmp;
    }
  }
  if (!name || !results) {
    fprintf(stderr, "mbstudy %s: out of memory\n", c.cmd);
    goto done;
  }
  // the setup
  xmlNodePtr tool = xml_tool(&x, "InverseKinematicsTool", name);
  xml_add(&x, tool, "results_directory", results);
  xml_add(&x, tool, "model_file", model_abs);
  if (!isnan(cweight)) xml_number(&x, tool, "constraint_weight", cweight);
  if (!isnan(accuracy)) xml_number(&x, tool, "accuracy", accuracy);
  xmlNodePtr list = NULL;
  if (weights) {
    if (!(list = import_task_set(&c, &x, tool, weights, weights_abs, ct, nct))) goto done;
  } else {
    list = xml_add(&x, xml_object(&x, tool, "IKTaskSet", "ik_tasks"), "objects", NULL);
    for (int k = 0; k < trc->nmarkers; k++) {
      const char* mk = trc->markers[k];
      if (!has_marker(m, mk)) continue;
      double w = 1;
      for (int j = 0; j < nw; j++)
        if (!strcmp(wname[j], mk)) w = wval[j];
      if (w == 0) continue;  // left out (and out of the marker errors)
      xmlNodePtr t = xml_object(&x, list, "IKMarkerTask", mk);
      xml_add(&x, t, "apply", "true");
      xml_number(&x, t, "weight", w);
    }
  }
  add_coordinate_tasks(&x, list, ct, nct);
  xml_add(&x, tool, "marker_file", markers_abs);
  if (!isnan(range[0])) xml_numbers(&x, tool, "time_range", range, 2);
  xml_add(&x, tool, "report_errors", errors ? "true" : "false");
  xml_add(&x, tool, "output_motion_file", out_abs);
  xml_add(&x, tool, "report_marker_locations", "false");
  rc = run_document(&c, &x, mbs_tool_inverse_kinematics);
  if (tmp) {
    char* written = mbs_format_string("%s/%s%s", tmp, name, suffix);
    if (!rc && (!written || rename(written, errors_abs))) {
      fprintf(stderr, "mbstudy %s: --marker-errors %s: %s\n", c.cmd, errors,
              written ? strerror(errno) : "out of memory");
      rc = 1;
    } else if (!rc) {
      fprintf(stderr, "mbstudy %s: the marker errors are in %s\n", c.cmd, errors_abs);
    }
    free(written);
  }
done:
  if (tmp) mbs_remove_tree(tmp);
  free(tmp);
  xmlFreeDoc(x.doc);
  mbs_table_free(trc);
  mbs_osim_free(m);
  cli_free(&c);
  return rc;
}

//---------------------------------- scale --------------------------------------------------------

static void scale_usage(FILE* f) {
  fprintf(f,
          "usage: mbstudy scale --model GENERIC.osim --static STATIC.trc --mass KG\n"
          "                     --out SCALED.osim [options]\n"
          "  OpenSim's ScaleTool: the generic model scaled to the subject (the run `mbstudy\n"
          "  run-tool` makes of the equivalent setup file)\n"
          "  --model GENERIC.osim        the generic model\n"
          "  --static STATIC.trc         the static trial (marker distances; marker placement)\n"
          "  --mass KG                   the subject's mass: the bodies' masses are scaled to it\n"
          "  --out SCALED.osim           the scaled model (with --place-markers its markers moved\n"
          "                              to the static pose)\n"
          "  --markers MARKERSET.xml     a MarkerSet whose markers replace the model's of the\n"
          "                              same names, or join them\n"
          "  --measurements FILE.xml     a MeasurementSet as OpenSim writes it: each\n"
          "                              measurement's factor (the mean ratio of its marker\n"
          "                              pairs' distances in the trial to the model's) on its\n"
          "                              bodies' axes\n"
          "  --manual BODY=SX,SY,SZ      the body's factors (BODY=S: the same on every axis);\n"
          "                              applied after the measurements (repeatable)\n"
          "  --time-range T0 T1          the static trial's frames averaged (default: the first)\n"
          "  --place-markers             move the markers to the static pose (MarkerPlacer: IK\n"
          "                              of the averaged frames, every marker that is not fixed\n"
          "                              put where the trial has it)\n"
          "  --preserve-mass-distribution  one factor for every body's mass (else each body's\n"
          "                              mass follows its size before all go to --mass)\n"
          "  --scale-set FILE.xml        write the factors as OpenSim's ScaleSet\n"
          "  --rename-type OLD=NEW       read the model's forces of class OLD as class NEW\n"
          "  --quiet                     less output\n");
}

typedef struct manual_scale {
  const char* body;
  double f[3];
} manual_scale;

// BODY=S or BODY=SX,SY,SZ (split in place); 0 after a message
static int parse_manual(const cli* c, char* v, manual_scale* ms) {
  char* eq = strchr(v, '=');
  double f[4];
  int n = 0, ok = eq && eq != v && eq[1];
  if (ok) {
    *eq = 0;
    char* save = NULL;
    for (char* w = strtok_r(eq + 1, ",", &save); w && ok; w = strtok_r(NULL, ",", &save)) {
      char* end;
      ok = n < 3;
      if (ok) f[n] = strtod(w, &end);
      ok = ok && end != w && !*end && isfinite(f[n]) && f[n] != 0;
      n++;
    }
    ok = ok && (n == 1 || n == 3);
  }
  if (!ok) {
    fprintf(stderr, "mbstudy %s: --manual takes BODY=S or BODY=SX,SY,SZ (non-zero factors), got "
                    "'%s%s%s'\n", c->cmd, v, eq ? "=" : "", eq ? "..." : "");
    return 0;
  }
  ms->body = v;
  for (int k = 0; k < 3; k++) ms->f[k] = f[n == 1 ? 0 : k];
  return 1;
}

int mbs_cmd_scale(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    scale_usage(stdout);
    return 0;
  }
  cli c;
  cli_init(&c, "scale", argc, argv);
  const char *model = NULL, *trial = NULL, *out = NULL, *markers = NULL, *measurements = NULL;
  const char* scale_set = NULL;
  double mass = NAN, range[2] = {NAN, NAN};
  int place = 0, preserve = 0, nman = 0;
  manual_scale man[CLI_MAX_LIST];
  for (c.i = 0; c.i < argc; c.i++) {
    const char* a = argv[c.i];
    const int common = common_flag(&c);
    if (common < 0) return 2;
    if (common) continue;
    if (!strcmp(a, "--model")) {
      if (!(model = value(&c, "the generic model file"))) return 2;
    } else if (!strcmp(a, "--static")) {
      if (!(trial = value(&c, "the static trial's .trc file"))) return 2;
    } else if (!strcmp(a, "--out")) {
      if (!(out = value(&c, "the .osim file to write"))) return 2;
    } else if (!strcmp(a, "--markers")) {
      if (!(markers = value(&c, "a MarkerSet file"))) return 2;
    } else if (!strcmp(a, "--measurements")) {
      if (!(measurements = value(&c, "a MeasurementSet file"))) return 2;
    } else if (!strcmp(a, "--scale-set")) {
      if (!(scale_set = value(&c, "the ScaleSet file to write"))) return 2;
    } else if (!strcmp(a, "--mass")) {
      const char* v = value(&c, "the subject's mass, kg");
      if (!v || !number(&c, a, v, 0, &mass)) return 2;
      if (!(mass > 0)) {
        fprintf(stderr, "mbstudy %s: --mass must be positive (kg), got '%s'\n", c.cmd, v);
        return 2;
      }
    } else if (!strcmp(a, "--time-range")) {
      if (!time_range(&c, range)) return 2;
    } else if (!strcmp(a, "--manual")) {
      char* v = value(&c, "BODY=SX,SY,SZ");
      if (!v || !room(&c, nman) || !parse_manual(&c, v, &man[nman])) return 2;
      nman++;
    } else if (!strcmp(a, "--place-markers")) {
      place = 1;
    } else if (!strcmp(a, "--preserve-mass-distribution")) {
      preserve = 1;
    } else {
      return unknown(&c);
    }
  }
  char missing[200] = "";
  need(missing, sizeof(missing), "--model", model != NULL);
  need(missing, sizeof(missing), "--static", trial != NULL);
  need(missing, sizeof(missing), "--mass", !isnan(mass));
  need(missing, sizeof(missing), "--out", out != NULL);
  if (report_missing(&c, missing, scale_usage)) return 2;
  xml x = {NULL, 0};
  mbs_scale_model* sm = NULL;
  int rc = 1, oom = 0;
  const char* model_abs = absolute(&c, model, &oom);
  const char* trial_abs = absolute(&c, trial, &oom);
  const char* out_abs = absolute(&c, out, &oom);
  const char* markers_abs = absolute(&c, markers, &oom);
  const char* meas_abs = absolute(&c, measurements, &oom);
  const char* set_abs = absolute(&c, scale_set, &oom);
  if (oom || !readable(&c, "--model", model, model_abs) ||
      !readable(&c, "--static", trial, trial_abs) ||
      (markers && !readable(&c, "--markers", markers, markers_abs)) ||
      (measurements && !readable(&c, "--measurements", measurements, meas_abs)))
    goto done;
  if (nman) {  // the bodies named must be the model's (the tool would only warn)
    mbs_error err;
    mbs_error_clear(&err);
    if (!(sm = mbs_scale_model_read(model_abs, &err))) {
      fprintf(stderr, "mbstudy %s: %s\n", c.cmd, err.message);
      goto done;
    }
    for (int j = 0; j < nman; j++)
      if (mbs_scale_model_find_segment(sm, man[j].body) < 0) {
        fprintf(stderr, "mbstudy %s: --manual %s: %s has no body '%s'\n", c.cmd, man[j].body,
                model, man[j].body);
        goto done;
      }
  }
  if (!measurements && !nman)
    fprintf(stderr, "mbstudy %s: note: no --measurements or --manual: the bodies keep their "
                    "sizes; only the masses are scaled\n", c.cmd);
  const char* name = stem(&c, out_abs);
  xmlNodePtr tool = xml_tool(&x, "ScaleTool", name ? name : "");
  xml_number(&x, tool, "mass", mass);
  xmlNodePtr gm = xml_add(&x, tool, "GenericModelMaker", NULL);
  xml_add(&x, gm, "model_file", model_abs);
  if (markers) xml_add(&x, gm, "marker_set_file", markers_abs);
  xmlNodePtr ms = xml_add(&x, tool, "ModelScaler", NULL);
  xml_add(&x, ms, "apply", "true");
  xml_add(&x, ms, "scaling_order", measurements && nman ? "measurements manualScale"
                                   : measurements     ? "measurements"
                                                      : "manualScale");
  if (measurements) {
    xmlNodePtr set = xml_add(&x, ms, "MeasurementSet", NULL);
    if (set && !xmlNewProp(set, BAD_CAST "file", BAD_CAST meas_abs)) x.bad = 1;
  }
  xmlNodePtr scales = xml_add(&x, xml_add(&x, ms, "ScaleSet", NULL), "objects", NULL);
  for (int j = 0; j < nman; j++) {
    xmlNodePtr s = xml_add(&x, scales, "Scale", NULL);
    xml_numbers(&x, s, "scales", man[j].f, 3);
    xml_add(&x, s, "segment", man[j].body);
    xml_add(&x, s, "apply", "true");
  }
  xml_add(&x, ms, "marker_file", trial_abs);
  if (!isnan(range[0])) xml_numbers(&x, ms, "time_range", range, 2);
  xml_add(&x, ms, "preserve_mass_distribution", preserve ? "true" : "false");
  if (!place) xml_add(&x, ms, "output_model_file", out_abs);
  if (scale_set) xml_add(&x, ms, "output_scale_file", set_abs);
  if (place) {
    xmlNodePtr mp = xml_add(&x, tool, "MarkerPlacer", NULL);
    xml_add(&x, mp, "apply", "true");
    xml_add(&x, mp, "marker_file", trial_abs);
    if (!isnan(range[0])) xml_numbers(&x, mp, "time_range", range, 2);
    xml_add(&x, mp, "output_model_file", out_abs);
  }
  if (!name) x.bad = 1;
  rc = run_document(&c, &x, mbs_tool_scale);
done:
  xmlFreeDoc(x.doc);
  mbs_scale_model_free(sm);
  cli_free(&c);
  return rc;
}

//---------------------------------- analyze ------------------------------------------------------

// the analyses by flag name, with their OpenSim elements and the properties written for them
static const struct {
  const char* key;
  const char* element;
  const char* props[3][2];  // (property, value) pairs: the defaults, spelled out
} analyses[] = {
    {"kinematics", "Kinematics", {{"coordinates", "all"}}},
    {"body_kinematics", "BodyKinematics",
     {{"bodies", "all"}, {"express_results_in_body_local_frame", "false"}}},
    {"actuation", "Actuation", {{NULL, NULL}}},
    {"muscle_analysis", "MuscleAnalysis",
     {{"muscle_list", "all"}, {"moment_arm_coordinate_list", "all"}, {"compute_moments", "true"}}},
    {"joint_reaction", "JointReaction",
     {{"joint_names", "all"}, {"apply_on_bodies", "child"}, {"express_in_frame", "ground"}}},
    {"static_optimization", "StaticOptimization",
     {{"use_model_force_set", "true"}, {"activation_exponent", "2"},
      {"use_muscle_physiology", "true"}}},
    {"induced_accelerations", "InducedAccelerations",
     {{"coordinate_names", "all"}, {"body_names", "center_of_mass"}}},
};
#define NANALYSES ((int)(sizeof(analyses) / sizeof(analyses[0])))

static void analyze_usage(FILE* f) {
  fprintf(f,
          "usage: mbstudy analyze --model MODEL.osim (--states S.sto | --coordinates C.mot)\n"
          "                       --results DIR [options]\n"
          "  OpenSim's AnalyzeTool: analyses of the model's states, each written to\n"
          "  DIR/<name>_<Analysis>_<table>.sto (the run `mbstudy run-tool` makes of the\n"
          "  equivalent setup file)\n"
          "  --model MODEL.osim          the model\n"
          "  --states S.sto              the states (OpenSim's states file: coordinates, speeds,\n"
          "                              muscle states)\n"
          "  --coordinates C.mot         or the coordinates, speeds from their splines:\n"
          "    --lowpass HZ              filtered at HZ first (default: not filtered)\n"
          "    --speeds U.sto            the speeds from a file instead\n"
          "  --results DIR               the folder of the results\n"
          "  --analyses LIST             comma-separated, of kinematics, body_kinematics,\n"
          "                              actuation, muscle_analysis, joint_reaction,\n"
          "                              static_optimization, induced_accelerations, or all\n"
          "                              (default: kinematics); with OpenSim's defaults:\n"
          "                              every coordinate, body, muscle and joint (reactions on\n"
          "                              the child, in ground), static optimization with\n"
          "                              p = 2 and muscle physiology, induced accelerations of\n"
          "                              every coordinate and the center of mass\n"
          "  --time-range T0 T1          the rows from T0 to T1 (default: every row)\n"
          "  --step-interval N           every analysis records every N-th row (1)\n"
          "  --external-loads FILE.xml   an OpenSim ExternalLoads file (e.g. ground reactions)\n"
          "  --controls FILE             the actuators' controls (a ControlSet .xml or .sto)\n"
          "  --force-set FILE.xml        a ForceSet added to the model's forces, e.g. reserve\n"
          "                              actuators (repeatable)\n"
          "  --name NAME                 the results' file names start with it (default: the\n"
          "                              model file's name without .osim)\n"
          "  --rename-type OLD=NEW       read the model's forces of class OLD as class NEW\n"
          "  --quiet                     no progress\n");
}

// a comma-separated list of analyses into on[] (in order[]); 0 after a message
static int parse_analyses(const cli* c, char* v, int* order, int* norder) {
  char* save = NULL;
  for (char* w = strtok_r(v, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
    int k = -1;
    const int all = !strcasecmp(w, "all");
    for (int j = 0; j < NANALYSES && k < 0 && !all; j++)
      if (!strcasecmp(w, analyses[j].key) || !strcasecmp(w, analyses[j].element)) k = j;
    if (k < 0 && !all) {
      fprintf(stderr, "mbstudy %s: --analyses: unknown analysis '%s' (", c->cmd, w);
      for (int j = 0; j < NANALYSES; j++) fprintf(stderr, "%s, ", analyses[j].key);
      fprintf(stderr, "or all)\n");
      return 0;
    }
    for (int j = all ? 0 : k; j <= (all ? NANALYSES - 1 : k); j++) {
      int seen = 0;
      for (int i = 0; i < *norder && !seen; i++) seen = order[i] == j;
      if (!seen) order[(*norder)++] = j;
    }
  }
  return 1;
}

int mbs_cmd_analyze(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    analyze_usage(stdout);
    return 0;
  }
  cli c;
  cli_init(&c, "analyze", argc, argv);
  const char *model = NULL, *states = NULL, *coords = NULL, *speeds = NULL, *results = NULL;
  const char *loads = NULL, *controls = NULL, *name = NULL;
  const char* fsets[CLI_MAX_LIST];
  double lowpass = NAN, range[2] = {NAN, NAN};
  long step = 1;
  int order[NANALYSES], norder = 0, nfsets = 0;
  for (c.i = 0; c.i < argc; c.i++) {
    const char* a = argv[c.i];
    const int common = common_flag(&c);
    if (common < 0) return 2;
    if (common) continue;
    if (!strcmp(a, "--model")) {
      if (!(model = value(&c, "a model file"))) return 2;
    } else if (!strcmp(a, "--states")) {
      if (!(states = value(&c, "a states file"))) return 2;
    } else if (!strcmp(a, "--coordinates")) {
      if (!(coords = value(&c, "a coordinates file"))) return 2;
    } else if (!strcmp(a, "--speeds")) {
      if (!(speeds = value(&c, "a speeds file"))) return 2;
    } else if (!strcmp(a, "--results")) {
      if (!(results = value(&c, "a folder"))) return 2;
    } else if (!strcmp(a, "--external-loads")) {
      if (!(loads = value(&c, "an ExternalLoads file"))) return 2;
    } else if (!strcmp(a, "--controls")) {
      if (!(controls = value(&c, "a controls file"))) return 2;
    } else if (!strcmp(a, "--name")) {
      if (!(name = value(&c, "the results' name"))) return 2;
    } else if (!strcmp(a, "--force-set")) {
      const char* v = value(&c, "a ForceSet file");
      if (!v || !room(&c, nfsets)) return 2;
      fsets[nfsets++] = v;
    } else if (!strcmp(a, "--lowpass")) {
      const char* v = value(&c, "a cutoff frequency, Hz");
      if (!v || !number(&c, a, v, 0, &lowpass)) return 2;
      if (!(lowpass > 0)) {
        fprintf(stderr, "mbstudy %s: --lowpass must be a positive frequency (Hz), got '%s'\n",
                c.cmd, v);
        return 2;
      }
    } else if (!strcmp(a, "--time-range")) {
      if (!time_range(&c, range)) return 2;
    } else if (!strcmp(a, "--step-interval")) {
      const char* v = value(&c, "a positive integer");
      char* end = NULL;
      if (v) step = strtol(v, &end, 10);
      if (!v || end == v || *end || step < 1 || step > 1000000000L) {
        if (v)
          fprintf(stderr, "mbstudy %s: --step-interval expects a positive integer, got '%s'\n",
                  c.cmd, v);
        return 2;
      }
    } else if (!strcmp(a, "--analyses")) {
      char* v = value(&c, "a comma-separated list of analyses");
      if (!v || !parse_analyses(&c, v, order, &norder)) return 2;
    } else {
      return unknown(&c);
    }
  }
  char missing[200] = "";
  need(missing, sizeof(missing), "--model", model != NULL);
  need(missing, sizeof(missing), "--states or --coordinates", states || coords);
  need(missing, sizeof(missing), "--results", results != NULL);
  if (report_missing(&c, missing, analyze_usage)) return 2;
  if (states && coords) {
    fprintf(stderr, "mbstudy %s: --states and --coordinates do not go together: the states "
                    "come from one of them\n", c.cmd);
    return 2;
  }
  if (states && (speeds || !isnan(lowpass))) {
    fprintf(stderr, "mbstudy %s: %s goes with --coordinates, not with --states\n", c.cmd,
            speeds ? "--speeds" : "--lowpass");
    return 2;
  }
  if (norder == 0) order[norder++] = 0;  // kinematics
  xml x = {NULL, 0};
  mbs_table* t = NULL;
  char* fset_list = NULL;
  int rc = 1, oom = 0;
  const char* model_abs = absolute(&c, model, &oom);
  const char* states_abs = absolute(&c, states, &oom);
  const char* coords_abs = absolute(&c, coords, &oom);
  const char* speeds_abs = absolute(&c, speeds, &oom);
  const char* results_abs = absolute(&c, results, &oom);
  const char* loads_abs = absolute(&c, loads, &oom);
  const char* controls_abs = absolute(&c, controls, &oom);
  if (oom || !readable(&c, "--model", model, model_abs) ||
      (states && !readable(&c, "--states", states, states_abs)) ||
      (coords && !readable(&c, "--coordinates", coords, coords_abs)) ||
      (speeds && !readable(&c, "--speeds", speeds, speeds_abs)) ||
      (loads && !readable(&c, "--external-loads", loads, loads_abs)) ||
      (controls && !readable(&c, "--controls", controls, controls_abs)))
    goto done;
  // the force sets: a list of names separated by white space, as OpenSim's
  for (int j = 0; j < nfsets; j++) {
    const char* p = absolute(&c, fsets[j], &oom);
    if (!p || !readable(&c, "--force-set", fsets[j], p)) goto done;
    if (strpbrk(p, " \t\r\n")) {
      fprintf(stderr, "mbstudy %s: --force-set %s: a ForceSet file's name cannot hold spaces "
                      "(OpenSim's force_set_files is a list separated by them)\n", c.cmd, p);
      goto done;
    }
    char* l = mbs_format_string("%s%s%s", fset_list ? fset_list : "", fset_list ? " " : "", p);
    free(fset_list);
    if (!(fset_list = l)) {
      fprintf(stderr, "mbstudy %s: out of memory\n", c.cmd);
      goto done;
    }
  }
  // the rows: by default every row of the file (AnalyzeTool's own defaults are 0 to 1 s)
  if (isnan(range[0])) {
    mbs_error err;
    mbs_error_clear(&err);
    if (mbs_table_read(states ? states_abs : coords_abs, &t, &err)) {
      fprintf(stderr, "mbstudy %s: %s\n", c.cmd, err.message);
      goto done;
    }
    if (t->nrow < 1 || t->ncol < 1) {
      fprintf(stderr, "mbstudy %s: %s %s has no rows\n", c.cmd,
              states ? "--states" : "--coordinates", states ? states : coords);
      goto done;
    }
    range[0] = mbs_table_get(t, 0, 0);
    range[1] = mbs_table_get(t, t->nrow - 1, 0);
  }
  if (!name) name = stem(&c, model_abs);
  xmlNodePtr tool = xml_tool(&x, "AnalyzeTool", name ? name : "");
  xml_add(&x, tool, "model_file", model_abs);
  xml_add(&x, tool, "replace_force_set", "false");
  if (fset_list) xml_add(&x, tool, "force_set_files", fset_list);
  xml_add(&x, tool, "results_directory", results_abs);
  xml_number(&x, tool, "initial_time", range[0]);
  xml_number(&x, tool, "final_time", range[1]);
  xmlNodePtr list = xml_add(&x, xml_object(&x, tool, "AnalysisSet", "Analyses"), "objects", NULL);
  for (int i = 0; i < norder; i++) {
    const int k = order[i];
    xmlNodePtr an = xml_object(&x, list, analyses[k].element, analyses[k].element);
    xml_add(&x, an, "on", "true");
    xml_number(&x, an, "step_interval", (double)step);
    xml_add(&x, an, "in_degrees", "true");
    for (int p = 0; p < 3 && analyses[k].props[p][0]; p++)
      xml_add(&x, an, analyses[k].props[p][0], analyses[k].props[p][1]);
  }
  if (controls) {
    xmlNodePtr cs = xml_add(&x, xml_object(&x, tool, "ControllerSet", "Controllers"), "objects",
                            NULL);
    xml_add(&x, xml_object(&x, cs, "ControlSetController", "controls"), "controls_file",
            controls_abs);
  }
  if (loads) xml_add(&x, tool, "external_loads_file", loads_abs);
  if (states) xml_add(&x, tool, "states_file", states_abs);
  if (coords) xml_add(&x, tool, "coordinates_file", coords_abs);
  if (speeds) xml_add(&x, tool, "speeds_file", speeds_abs);
  if (!isnan(lowpass)) xml_number(&x, tool, "lowpass_cutoff_frequency_for_coordinates", lowpass);
  if (!name) x.bad = 1;
  rc = run_document(&c, &x, mbs_tool_analyze);
done:
  xmlFreeDoc(x.doc);
  mbs_table_free(t);
  free(fset_list);
  cli_free(&c);
  return rc;
}
