// Study specifications (io/spec.c):
//  - a complete spec (every section, every distribution type, both event kinds, every kind of
//    scalar) parses to the expected values, with paths resolved against the spec's folder and
//    a "[k]" suffix parsed into the component;
//  - a minimal spec takes the documented defaults;
//  - broken specs, each made here from the complete one by replacing some of its lines (or
//    written whole): each fails with the expected status and a message naming the file, the
//    line and the key path ("study.yaml:7: simulation.acuracy: unknown key (...)");
//  - mbs_spec_read on a file written here and on a missing file; mbs_spec_free(NULL);
//  - limits: an alias bomb (nine levels of nine aliases) refused in well under 2 s at the line
//    of the alias that crosses 1000000 nodes, an alias inside its own anchor, a document of
//    more than 1000000 nodes, a file over 16 MiB; an anchor used a few times still reads;
//    binary garbage is "not a text file", not an "empty spec".
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <limits.h>

#include "mbs/spec.h"
#include "mbs_test.h"

// the complete spec, one string per line (line k of the file is base[k - 1])
static const char* const base[] = {
    "# a complete study",                                          // 1
    "model: models/arm.osim",                                      // 2
    "external_loads: /data/grf.xml",                               // 3
    "simulation:",                                                 // 4
    "  duration: 5",                                               // 5
    "  accuracy: 1.0e-4",                                          // 6
    "  integrator: dormand_prince",                                // 7
    "  output_interval: 0.01",                                     // 8
    "  max_wall_time: 60",                                         // 9
    "  events:",                                                   // 10
    "    - name: fall",                                            // 11
    "      body: pelvis",                                          // 12
    "      point: [0, 0.1, -2.5e-1]",                              // 13
    "      height_below: 0.5",                                     // 14
    "    - name: knee_flexed",                                     // 15
    "      coordinate: knee_angle_r",                              // 16
    "      above: 1.2",                                            // 17
    "      terminate: false",                                      // 18
    "parameters:",                                                 // 19
    "  - path: /bodyset/rod1/mass",                                // 20
    "    distribution: {type: uniform, low: 0.8, high: 1.2}",      // 21
    "  - path: /bodyset/rod2/mass",                                // 22
    "    scale: {type: normal, mean: 1.0, std: 0.05}",             // 23
    "  - path: /jointset/pin1/q1/default_value",                   // 24
    "    distribution: {type: discrete, values: [-0.5, 0, 0.5]}",  // 25
    "  - path: /bodyset/rod1/mass_center[1]",                      // 26
    "    distribution:",                                           // 27
    "      type: truncated_normal",                                // 28
    "      mean: 0.5",                                             // 29
    "      std: 0.1",                                              // 30
    "      low: 0.3",                                              // 31
    "      high: 0.7",                                             // 32
    "  - path: /forceset/spring/stiffness",                        // 33
    "    scale: {type: lognormal, mu: 0, sigma: 0.2}",             // 34
    "  - path: /bodyset/rod1/mass_center[2]",                      // 35
    "    distribution: {type: constant, value: -3}",               // 36
    "outputs:",                                                    // 37
    "  trajectories: [q, u, com, bodies, contacts, z, reactions]", // 38
    "  bodies: [rod2, pelvis]",                                    // 39
    "  contacts: [foot_contact_force]",                            // 40
    "  scalars:",                                                  // 41
    "    - {name: q1_end, of: q, coordinate: q1, at: final}",      // 42
    "    - {name: fall_time, event: fall}",                        // 43
    "    - name: pelvis_y_max",                                    // 44
    "      of: body:pelvis",                                       // 45
    "      component: 1",                                          // 46
    "      at: max",                                               // 47
    "    - {name: com_x_mean, of: com, component: 0, at: mean}",   // 48
    "    - {name: u_min, of: u, coordinate: q1, at: min}",         // 49
    "sampling:",                                                   // 50
    "  count: 1000",                                               // 51
    "  seed: 18446744073709551615",                                // 52
    "  method: sobol",                                             // 53
    "execution:",                                                  // 54
    "  threads: 2",                                                // 55
    "  checkpoint_interval: 30",                                   // 56
    "output: out/results.h5",                                      // 57
};
#define NBASE ((int)(sizeof(base) / sizeof(base[0])))

// the complete spec with lines first..first+count-1 replaced by `with` (NULL: none)
static char* edited(int first, int count, const char* with) {
  size_t cap = 64 + (with ? strlen(with) : 0);
  for (int i = 0; i < NBASE; i++) cap += strlen(base[i]) + 1;
  char* t = malloc(cap);
  if (!t) exit(2);
  t[0] = '\0';
  for (int k = 1; k <= NBASE; k++) {
    if (k == first && with) {
      strcat(t, with);
      strcat(t, "\n");
    }
    if (k >= first && k < first + count) continue;
    strcat(t, base[k - 1]);
    strcat(t, "\n");
  }
  return t;
}

static int same_str(const char* a, const char* b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

static void check_complete(const mbs_study_spec* s, const char* dir) {
  char want[512];
  EXPECT_TRUE(same_str(s->model, "models/arm.osim"));
  snprintf(want, sizeof(want), "%smodels/arm.osim", dir);
  EXPECT_TRUE(same_str(s->model_path, want));
  EXPECT_TRUE(same_str(s->external_loads, "/data/grf.xml"));  // absolute: kept
  snprintf(want, sizeof(want), "%sout/results.h5", dir);
  EXPECT_TRUE(same_str(s->output, want));

  EXPECT_TRUE(s->duration == 5);
  EXPECT_TRUE(s->accuracy == 1.0e-4);
  EXPECT_TRUE(same_str(s->integrator, "dormand_prince"));
  EXPECT_TRUE(s->output_interval == 0.01);
  EXPECT_TRUE(s->max_wall_time == 60);

  EXPECT_EQ_INT(s->nevents, 2);
  if (s->nevents == 2) {
    const mbs_spec_event* e = &s->events[0];
    EXPECT_TRUE(same_str(e->name, "fall"));
    EXPECT_EQ_INT(e->kind, MBS_SPEC_EVENT_HEIGHT_BELOW);
    EXPECT_TRUE(same_str(e->body, "pelvis"));
    EXPECT_TRUE(e->point[0] == 0 && e->point[1] == 0.1 && e->point[2] == -0.25);
    EXPECT_TRUE(e->coordinate == NULL);
    EXPECT_TRUE(e->value == 0.5);
    EXPECT_EQ_INT(e->terminate, 1);
    EXPECT_EQ_INT(e->line, 11);
    e = &s->events[1];
    EXPECT_TRUE(same_str(e->name, "knee_flexed"));
    EXPECT_EQ_INT(e->kind, MBS_SPEC_EVENT_COORDINATE_ABOVE);
    EXPECT_TRUE(e->body == NULL);
    EXPECT_TRUE(same_str(e->coordinate, "knee_angle_r"));
    EXPECT_TRUE(e->value == 1.2);
    EXPECT_EQ_INT(e->terminate, 0);
    EXPECT_EQ_INT(e->line, 15);
  }

  EXPECT_EQ_INT(s->nparams, 6);
  if (s->nparams == 6) {
    const mbs_spec_parameter* p = s->params;
    EXPECT_TRUE(same_str(p[0].path, "/bodyset/rod1/mass"));
    EXPECT_EQ_INT(p[0].component, 0);
    EXPECT_EQ_INT(p[0].is_scale, 0);
    EXPECT_EQ_INT(p[0].dist.type, MBS_DIST_UNIFORM);
    EXPECT_TRUE(p[0].dist.a == 0.8 && p[0].dist.b == 1.2);
    EXPECT_EQ_INT(p[0].line, 20);

    EXPECT_TRUE(same_str(p[1].path, "/bodyset/rod2/mass"));
    EXPECT_EQ_INT(p[1].is_scale, 1);
    EXPECT_EQ_INT(p[1].dist.type, MBS_DIST_NORMAL);
    EXPECT_TRUE(p[1].dist.a == 1.0 && p[1].dist.b == 0.05);
    EXPECT_EQ_INT(p[1].line, 22);

    EXPECT_TRUE(same_str(p[2].path, "/jointset/pin1/q1/default_value"));
    EXPECT_EQ_INT(p[2].is_scale, 0);
    EXPECT_EQ_INT(p[2].dist.type, MBS_DIST_DISCRETE);
    EXPECT_EQ_INT(p[2].dist.nvalues, 3);
    if (p[2].dist.nvalues == 3)
      EXPECT_TRUE(p[2].dist.values[0] == -0.5 && p[2].dist.values[1] == 0 &&
                  p[2].dist.values[2] == 0.5);

    EXPECT_TRUE(same_str(p[3].path, "/bodyset/rod1/mass_center"));
    EXPECT_EQ_INT(p[3].component, 1);
    EXPECT_EQ_INT(p[3].dist.type, MBS_DIST_TRUNCATED_NORMAL);
    EXPECT_TRUE(p[3].dist.a == 0.5 && p[3].dist.b == 0.1 && p[3].dist.lo == 0.3 &&
                p[3].dist.hi == 0.7);
    EXPECT_EQ_INT(p[3].line, 26);

    EXPECT_TRUE(same_str(p[4].path, "/forceset/spring/stiffness"));
    EXPECT_EQ_INT(p[4].is_scale, 1);
    EXPECT_EQ_INT(p[4].dist.type, MBS_DIST_LOGNORMAL);
    EXPECT_TRUE(p[4].dist.a == 0 && p[4].dist.b == 0.2);

    EXPECT_TRUE(same_str(p[5].path, "/bodyset/rod1/mass_center"));
    EXPECT_EQ_INT(p[5].component, 2);
    EXPECT_EQ_INT(p[5].dist.type, MBS_DIST_CONSTANT);
    EXPECT_TRUE(p[5].dist.a == -3);
    EXPECT_EQ_INT(p[5].line, 35);
  }

  EXPECT_EQ_INT(s->outputs, MBS_OUT_Q | MBS_OUT_U | MBS_OUT_Z | MBS_OUT_COM | MBS_OUT_BODIES |
                                MBS_OUT_CONTACTS | MBS_OUT_REACTIONS);
  EXPECT_EQ_INT(s->nbodies, 2);
  if (s->nbodies == 2)
    EXPECT_TRUE(same_str(s->bodies[0], "rod2") && same_str(s->bodies[1], "pelvis"));
  EXPECT_EQ_INT(s->ncontacts, 1);
  if (s->ncontacts == 1) EXPECT_TRUE(same_str(s->contacts[0], "foot_contact_force"));

  EXPECT_EQ_INT(s->nscalars, 5);
  if (s->nscalars == 5) {
    const mbs_spec_scalar* c = s->scalars;
    EXPECT_TRUE(same_str(c[0].name, "q1_end") && same_str(c[0].of, "q") &&
                same_str(c[0].coordinate, "q1") && c[0].event == NULL);
    EXPECT_EQ_INT(c[0].at, MBS_SPEC_AT_FINAL);
    EXPECT_EQ_INT(c[0].line, 42);
    EXPECT_TRUE(same_str(c[1].name, "fall_time") && c[1].of == NULL &&
                c[1].coordinate == NULL && same_str(c[1].event, "fall"));
    EXPECT_EQ_INT(c[1].line, 43);
    EXPECT_TRUE(same_str(c[2].name, "pelvis_y_max") && same_str(c[2].of, "body:pelvis") &&
                c[2].coordinate == NULL);
    EXPECT_EQ_INT(c[2].component, 1);
    EXPECT_EQ_INT(c[2].at, MBS_SPEC_AT_MAX);
    EXPECT_EQ_INT(c[2].line, 44);
    EXPECT_TRUE(same_str(c[3].name, "com_x_mean") && same_str(c[3].of, "com"));
    EXPECT_EQ_INT(c[3].component, 0);
    EXPECT_EQ_INT(c[3].at, MBS_SPEC_AT_MEAN);
    EXPECT_TRUE(same_str(c[4].name, "u_min") && same_str(c[4].of, "u") &&
                same_str(c[4].coordinate, "q1"));
    EXPECT_EQ_INT(c[4].at, MBS_SPEC_AT_MIN);
  }

  EXPECT_EQ_INT(s->count, 1000);
  EXPECT_TRUE(s->seed == UINT64_MAX);
  EXPECT_EQ_INT(s->method, MBS_DESIGN_SOBOL);
  EXPECT_EQ_INT(s->threads, 2);
  EXPECT_TRUE(s->checkpoint_interval == 30);
}

static void test_complete(void) {
  char* text = edited(0, 0, NULL);
  mbs_study_spec* s = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_spec_parse(text, "studies/a/study.yaml", &s, &err));
  if (!s) {
    fprintf(stderr, "  %s\n", err.message);
  } else {
    check_complete(s, "studies/a/");
    EXPECT_TRUE(same_str(s->path, "studies/a/study.yaml"));
    EXPECT_TRUE(same_str(s->text, text));
    EXPECT_TRUE(s->text != text);
  }
  mbs_spec_free(s);

  // a spec in the current folder: relative paths stay relative
  s = NULL;
  EXPECT_OK(mbs_spec_parse(text, "study.yaml", &s, &err));
  if (s) {
    EXPECT_TRUE(same_str(s->model_path, "models/arm.osim"));
    EXPECT_TRUE(same_str(s->output, "out/results.h5"));
  }
  mbs_spec_free(s);
  free(text);
}

static void test_defaults(void) {
  const char* text =
      "model: double_pendulum\n"
      "simulation: {duration: 2}\n"
      "sampling: {count: 1}\n"
      "output: /tmp/r.h5\n";
  mbs_study_spec* s = NULL;
  mbs_error err;
  EXPECT_OK(mbs_spec_parse(text, "dir/study.yaml", &s, &err));
  if (!s) {
    fprintf(stderr, "  %s\n", err.message);
    return;
  }
  EXPECT_TRUE(same_str(s->model, "double_pendulum"));
  EXPECT_TRUE(s->model_path == NULL);  // a built-in model: not a path
  EXPECT_TRUE(s->external_loads == NULL);
  EXPECT_TRUE(same_str(s->output, "/tmp/r.h5"));
  EXPECT_TRUE(s->duration == 2);
  EXPECT_TRUE(s->accuracy == 1e-3);
  EXPECT_TRUE(same_str(s->integrator, "rk_merson"));
  EXPECT_TRUE(s->output_interval == 2.0 / 100);
  EXPECT_TRUE(s->max_wall_time == 0);
  EXPECT_EQ_INT(s->nevents, 0);
  EXPECT_TRUE(s->events == NULL);
  EXPECT_EQ_INT(s->nparams, 0);
  EXPECT_EQ_INT(s->outputs, MBS_OUT_Q | MBS_OUT_U);
  EXPECT_EQ_INT(s->nbodies, 0);
  EXPECT_EQ_INT(s->ncontacts, 0);
  EXPECT_EQ_INT(s->nscalars, 0);
  EXPECT_EQ_INT(s->count, 1);
  EXPECT_TRUE(s->seed == 0);
  EXPECT_EQ_INT(s->method, MBS_DESIGN_RANDOM);
  EXPECT_EQ_INT(s->threads, 0);
  EXPECT_TRUE(s->checkpoint_interval == 60);
  mbs_spec_free(s);

  // outputs without trajectories keeps [q, u]; an empty list asks for none; block and flow
  // styles, comments, quoted names, anchors and merge keys are all YAML
  const char* text2 =
      "# comment\n"
      "model: \"My Model.OSIM\"   # an .osim file, whatever the case\n"
      "simulation:\n"
      "  duration: 1\n"
      "  events: []\n"
      "parameters:\n"
      "  - &p {path: /a/b, distribution: &d {type: uniform, low: -1, high: 1}}\n"
      "  - <<: *p\n"
      "    path: /a/c\n"
      "  - path: /a/d\n"
      "    scale: *d\n"
      "outputs:\n"
      "  scalars: [{name: s, of: com, component: 2}]\n"
      "sampling:\n"
      "  count: 7\n"
      "  method: lhs\n"
      "output: r.h5\n";
  s = NULL;
  EXPECT_OK(mbs_spec_parse(text2, "/abs/dir/study.yaml", &s, &err));
  if (!s) {
    fprintf(stderr, "  %s\n", err.message);
    return;
  }
  EXPECT_TRUE(same_str(s->model_path, "/abs/dir/My Model.OSIM"));
  EXPECT_TRUE(same_str(s->output, "/abs/dir/r.h5"));
  EXPECT_EQ_INT(s->outputs, MBS_OUT_Q | MBS_OUT_U);
  EXPECT_EQ_INT(s->nparams, 3);
  if (s->nparams == 3) {
    EXPECT_TRUE(same_str(s->params[1].path, "/a/c"));  // merged, its own path kept
    EXPECT_EQ_INT(s->params[1].is_scale, 0);
    EXPECT_EQ_INT(s->params[1].dist.type, MBS_DIST_UNIFORM);
    EXPECT_EQ_INT(s->params[2].is_scale, 1);
    EXPECT_TRUE(s->params[2].dist.a == -1 && s->params[2].dist.b == 1);
  }
  EXPECT_EQ_INT(s->nscalars, 1);
  if (s->nscalars == 1) EXPECT_EQ_INT(s->scalars[0].at, MBS_SPEC_AT_FINAL);
  EXPECT_EQ_INT(s->count, 7);
  EXPECT_EQ_INT(s->method, MBS_DESIGN_LHS);
  mbs_spec_free(s);

  const char* text3 =
      "model: m\nsimulation: {duration: 1}\noutputs: {trajectories: []}\n"
      "sampling: {count: 2147483648, method: sobol}\noutput: r.h5\n";
  s = NULL;
  EXPECT_OK(mbs_spec_parse(text3, "study.yaml", &s, &err));
  if (s) {
    EXPECT_EQ_INT(s->outputs, 0);
    EXPECT_EQ_INT(s->count, 2147483648L);  // 2^31: sobol's limit, allowed
  }
  mbs_spec_free(s);
}

// ---------------------------------------------------------------------------------------------
// broken specs

typedef struct broken_case {
  int first, count;      // lines of the complete spec replaced...
  const char* with;      // ...by this (NULL: removed); first 0: `with` is the whole text
  int status;
  int line;              // expected line in the message
  const char* key;       // expected key path ("" for libfyaml's own messages)
  const char* what;      // expected part of the message
} broken_case;

static const broken_case broken[] = {
    // unknown keys, at the top and nested
    {57, 1, "output: out/results.h5\noutptu: x", MBS_ERR_PARSE, 58, "outptu",
     "unknown key (model, external_loads, simulation, parameters, outputs, sampling, "
     "execution, output, posture, sensitivity, fit, calibration, cohort, pipeline)"},
    {6, 1, "  acuracy: 1.0e-4", MBS_ERR_PARSE, 6, "simulation.acuracy",
     "unknown key (duration, accuracy, integrator, output_interval, max_wall_time, events)"},
    {12, 1, "      bodyy: pelvis", MBS_ERR_PARSE, 12, "simulation.events[0].bodyy",
     "unknown key"},
    {23, 1, "    scale: {type: normal, mean: 1.0, sigma: 0.05}", MBS_ERR_PARSE, 23,
     "parameters[1].scale.sigma", "unknown key (type, mean, std)"},
    {42, 1, "    - {name: q1_end, of: q, coordinate: q1, unit: rad}", MBS_ERR_PARSE, 42,
     "outputs.scalars[0].unit", "unknown key"},
    {56, 1, "  checkpoint: 30", MBS_ERR_PARSE, 56, "execution.checkpoint", "unknown key"},
    // distributions
    {21, 1, "    distribution: {type: unifrom, low: 0.8, high: 1.2}", MBS_ERR_ARGUMENT, 21,
     "parameters[0].distribution.type", "unknown distribution 'unifrom' (uniform, normal"},
    {21, 1, "    distribution: {type: uniform, low: 1.2, high: 0.8}", MBS_ERR_ARGUMENT, 21,
     "parameters[0].distribution.high", "not above low"},
    {21, 1, "    distribution: {type: uniform, low: 1, high: 1}", MBS_ERR_ARGUMENT, 21,
     "parameters[0].distribution.high", "not above low"},
    {23, 1, "    scale: {type: normal, mean: 1.0, std: 0}", MBS_ERR_ARGUMENT, 23,
     "parameters[1].scale.std", "not positive"},
    {30, 1, "      std: -0.1", MBS_ERR_ARGUMENT, 30, "parameters[3].distribution.std",
     "not positive"},
    {32, 1, "      high: 0.3", MBS_ERR_ARGUMENT, 32, "parameters[3].distribution.high",
     "not above low"},
    {31, 2, "      low: 10\n      high: 11", MBS_ERR_ARGUMENT, 28,
     "parameters[3].distribution", "tail"},
    {34, 1, "    scale: {type: lognormal, mu: 0, sigma: 0}", MBS_ERR_ARGUMENT, 34,
     "parameters[4].scale.sigma", "not positive"},
    {25, 1, "    distribution: {type: discrete, values: []}", MBS_ERR_ARGUMENT, 25,
     "parameters[2].distribution.values", "empty"},
    {25, 1, "    distribution: {type: discrete, values: [1, x]}", MBS_ERR_PARSE, 25,
     "parameters[2].distribution.values[1]", "expected a number, got 'x'"},
    {25, 1, "    distribution: {type: discrete, values: 1}", MBS_ERR_PARSE, 25,
     "parameters[2].distribution.values", "expected a list of numbers"},
    {21, 1, "    distribution: {type: uniform, low: 0.8}", MBS_ERR_PARSE, 21,
     "parameters[0].distribution", "needs 'high'"},
    {21, 1, "    distribution: {low: 0.8, high: 1}", MBS_ERR_PARSE, 21,
     "parameters[0].distribution", "missing 'type'"},
    {21, 1, "    distribution: uniform", MBS_ERR_PARSE, 21, "parameters[0].distribution",
     "expected a mapping"},
    // parameters
    {35, 1, "  - path: /bodyset/rod1/mass_center[1]", MBS_ERR_ARGUMENT, 35, "parameters[5].path",
     "given twice (first on line 26)"},
    {22, 1, "  - path: /bodyset/rod1/mass", MBS_ERR_ARGUMENT, 22, "parameters[1].path",
     "/bodyset/rod1/mass is given twice (first on line 20)"},
    {35, 1, "  - path: /bodyset/rod1/mass[0]", MBS_ERR_ARGUMENT, 35, "parameters[5].path",
     "/bodyset/rod1/mass is given twice (first on line 20)"},
    {20, 1, "  - path: bodyset/rod1/mass", MBS_ERR_ARGUMENT, 20, "parameters[0].path",
     "starts with '/'"},
    {26, 1, "  - path: /bodyset/rod1/mass_center[x]", MBS_ERR_ARGUMENT, 26, "parameters[3].path",
     "one index at the end"},
    {21, 1, "    distribution: {type: uniform, low: 0.8, high: 1.2}\n"
            "    scale: {type: constant, value: 1}",
     MBS_ERR_PARSE, 22, "parameters[0].scale", "not both"},
    {21, 1, "    initial: heavy", MBS_ERR_PARSE, 21, "parameters[0].initial", "expected a number"},
    {19, 18, "parameters: {path: /a}", MBS_ERR_PARSE, 19, "parameters",
     "expected a list of parameters, got a mapping"},
    // simulation
    {5, 1, "  # no duration", MBS_ERR_PARSE, 4, "simulation.duration", "missing"},
    {5, 1, "  duration: five", MBS_ERR_PARSE, 5, "simulation.duration",
     "expected a number, got 'five'"},
    {5, 1, "  duration: \"5\"", MBS_ERR_PARSE, 5, "simulation.duration",
     "expected a number, got '5' (quoted: a string)"},
    {5, 1, "  duration: 5 s", MBS_ERR_PARSE, 5, "simulation.duration", "expected a number"},
    {5, 1, "  duration: .inf", MBS_ERR_PARSE, 5, "simulation.duration", "expected a number"},
    {5, 1, "  duration: 1e999", MBS_ERR_ARGUMENT, 5, "simulation.duration", "not a finite"},
    {5, 1, "  duration: 0", MBS_ERR_ARGUMENT, 5, "simulation.duration", "not positive"},
    {6, 1, "  accuracy: 1", MBS_ERR_ARGUMENT, 6, "simulation.accuracy", "between 0 and 1"},
    {7, 1, "  integrator: rk45", MBS_ERR_ARGUMENT, 7, "simulation.integrator",
     "unknown integrator 'rk45' (rk_merson, dormand_prince, cvode_bdf, euler, rk4, "
     "semi_explicit_euler, verlet, ros34pw2)"},
    {7, 1, "  integrator:", MBS_ERR_PARSE, 7, "simulation.integrator", "got nothing"},
    {8, 1, "  output_interval: 6", MBS_ERR_ARGUMENT, 8, "simulation.output_interval",
     "longer than the duration"},
    {9, 1, "  max_wall_time: -1", MBS_ERR_ARGUMENT, 9, "simulation.max_wall_time", "negative"},
    {4, 15, "simulation: [5]", MBS_ERR_PARSE, 4, "simulation", "expected a mapping of (duration"},
    // events
    {14, 1, "      height_below: 0.5\n      height_above: 0.7", MBS_ERR_PARSE, 15,
     "simulation.events[0].height_above", "one trigger"},
    {14, 1, "      # no trigger", MBS_ERR_PARSE, 11, "simulation.events[0]", "needs a trigger"},
    {16, 1, "      coordinate: knee_angle_r\n      body: femur", MBS_ERR_PARSE, 17,
     "simulation.events[1].body", "not used by above"},
    {12, 1, "      # no body", MBS_ERR_PARSE, 11, "simulation.events[0].body", "missing"},
    {15, 1, "    - name: fall", MBS_ERR_ARGUMENT, 15, "simulation.events[1].name",
     "defined twice (first on line 11)"},
    {13, 1, "      point: [0, 1]", MBS_ERR_PARSE, 13, "simulation.events[0].point",
     "a list of 3 numbers [x, y, z], got a list of 2 items"},
    {18, 1, "      terminate: maybe", MBS_ERR_PARSE, 18, "simulation.events[1].terminate",
     "true or false"},
    {10, 9, "  events: {name: fall}", MBS_ERR_PARSE, 10, "simulation.events",
     "expected a list of events, got a mapping"},
    // outputs
    {43, 1, "    - {name: fall_time, event: trip}", MBS_ERR_ARGUMENT, 43,
     "outputs.scalars[1].event", "no event named 'trip'"},
    {43, 1, "    - {name: fall_time, event: fall, at: max}", MBS_ERR_PARSE, 43,
     "outputs.scalars[1].at", "does not apply"},
    {39, 1, "  bodies: []", MBS_ERR_ARGUMENT, 38, "outputs.trajectories[3]",
     "'bodies' needs the bodies listed in outputs.bodies"},
    {40, 1, "  # no contacts", MBS_ERR_ARGUMENT, 38, "outputs.trajectories[4]",
     "outputs.contacts"},
    {38, 1, "  trajectories: [q, u, contacts]", MBS_ERR_ARGUMENT, 39, "outputs.bodies",
     "not in outputs.trajectories"},
    {38, 1, "  trajectories: [q, velocity]", MBS_ERR_ARGUMENT, 38, "outputs.trajectories[1]",
     "unknown quantity 'velocity'"},
    {39, 1, "  bodies: {rod2: 1}", MBS_ERR_PARSE, 39, "outputs.bodies",
     "expected a list of names, got a mapping"},
    {39, 1, "  bodies: [rod2, rod2]", MBS_ERR_ARGUMENT, 39, "outputs.bodies[1]", "listed twice"},
    {48, 1, "    - {name: q1_end, of: com, component: 0}", MBS_ERR_ARGUMENT, 48,
     "outputs.scalars[3].name", "defined twice (first on line 42)"},
    {42, 1, "    - {name: q1_end, of: q, coordinate: q1, at: last}", MBS_ERR_ARGUMENT, 42,
     "outputs.scalars[0].at", "unknown reduction 'last'"},
    {49, 1, "    - {name: u_min, of: u, at: min}", MBS_ERR_PARSE, 49,
     "outputs.scalars[4].coordinate", "missing"},
    {48, 1, "    - {name: com_x_mean, of: com, component: 3}", MBS_ERR_ARGUMENT, 48,
     "outputs.scalars[3].component", "out of range"},
    {48, 1, "    - {name: com_x_mean, of: qdot, component: 0}", MBS_ERR_ARGUMENT, 48,
     "outputs.scalars[3].of", "unknown quantity 'qdot'"},
    {46, 1, "      coordinate: q1", MBS_ERR_PARSE, 46, "outputs.scalars[2].coordinate",
     "not used with of: body:pelvis"},
    {42, 1, "    - {name: q1_end}", MBS_ERR_PARSE, 42, "outputs.scalars[0]", "needs 'of'"},
    // sampling, execution
    {51, 1, "  count: 0", MBS_ERR_ARGUMENT, 51, "sampling.count", "0 is less than 1"},
    {51, 1, "  count: 10.5", MBS_ERR_PARSE, 51, "sampling.count", "expected an integer"},
    {51, 1, "  count: 2147483649", MBS_ERR_ARGUMENT, 51, "sampling.count", "2^31"},
    {51, 1, "  # no count", MBS_ERR_PARSE, 50, "sampling.count", "missing"},
    {52, 1, "  seed: -1", MBS_ERR_PARSE, 52, "sampling.seed", "non-negative integer"},
    {52, 1, "  seed: 18446744073709551616", MBS_ERR_ARGUMENT, 52, "sampling.seed", "2^64"},
    {53, 1, "  method: halton", MBS_ERR_ARGUMENT, 53, "sampling.method",
     "unknown method 'halton' (random, lhs, sobol, grid)"},
    {55, 1, "  threads: two", MBS_ERR_PARSE, 55, "execution.threads", "expected an integer"},
    {56, 1, "  checkpoint_interval: 0", MBS_ERR_ARGUMENT, 56, "execution.checkpoint_interval",
     "not positive"},
    {54, 3, "execution: fast", MBS_ERR_PARSE, 54, "execution", "expected a mapping"},
    // top level
    {57, 1, "# no output", MBS_ERR_PARSE, 1, "output", "missing"},
    {2, 1, "# no model", MBS_ERR_PARSE, 1, "model", "missing"},
    {2, 1, "model: double_pendulum", MBS_ERR_ARGUMENT, 3, "external_loads", ".osim models only"},
    // YAML syntax: libfyaml's message and line
    // (an unclosed bracket is noticed where the text stops fitting a flow sequence)
    {38, 1, "  trajectories: [q, u, com", MBS_ERR_PARSE, 40, "", "flow sequence"},
    {57, 1, "output: [out/results.h5", MBS_ERR_PARSE, 58, "",
     "flow sequence without a closing bracket"},
    {6, 1, " accuracy: 1.0e-4", MBS_ERR_PARSE, 6, "", "invalid indentation"},
    {13, 1, "     point: [0, 0.1, -2.5e-1]", MBS_ERR_PARSE, 13, "", "did not find expected"},
    {25, 1, "    distribution: {type: discrete, values: [-0.5, 0, 0.5}", MBS_ERR_PARSE, 25, "",
     ""},
    {5, 1, "  duration: 5\n  sampling: <<: x", MBS_ERR_PARSE, 6, "", ""},
    {57, 1, "output: out/results.h5\nmerged:\n  <<: {a: 1}", MBS_ERR_PARSE, 59, "",
     "invalid merge key value"},
    {9, 1, "  max_wall_time: 60\n  duration: 3", MBS_ERR_PARSE, 10, "", "duplicate key"},
    {57, 1, "output: out/results.h5\n---\nmodel: other", MBS_ERR_PARSE, 59, "",
     "a second YAML document"},
    {0, 0, "", MBS_ERR_PARSE, 1, "", "empty spec"},
    {0, 0, "# only a comment\n", MBS_ERR_PARSE, 1, "", "empty spec"},
    {0, 0, "- model\n- output\n", MBS_ERR_PARSE, 1, "", "expected a mapping of (model"},
    {0, 0, "model: m\n[a]: 1\n", MBS_ERR_PARSE, 2, "", "keys must be names"},
};

static void test_broken(void) {
  const int n = (int)(sizeof(broken) / sizeof(broken[0]));
  for (int i = 0; i < n; i++) {
    const broken_case* b = &broken[i];
    char* text = b->first > 0 ? edited(b->first, b->count, b->with) : strdup(b->with);
    mbs_study_spec* s = (mbs_study_spec*)&text;  // must be reset to NULL
    mbs_error err;
    mbs_error_clear(&err);
    const int rc = mbs_spec_parse(text, "study.yaml", &s, &err);
    char head[64];
    snprintf(head, sizeof(head), "study.yaml:%d: ", b->line);
    char key[128];
    snprintf(key, sizeof(key), "%s: ", b->key);
    const int ok = rc == b->status && s == NULL && err.code == b->status &&
                   strncmp(err.message, head, strlen(head)) == 0 &&
                   (!b->key[0] || strncmp(err.message + strlen(head), key, strlen(key)) == 0) &&
                   strstr(err.message, b->what) != NULL;
    EXPECT_TRUE(ok);
    if (getenv("MBS_TEST_VERBOSE")) printf("%s\n", err.message);
    if (!ok)
      fprintf(stderr, "  case %d (line %d -> '%s'): status %d (%s), want %d; message: %s\n", i,
              b->first, b->with, rc, mbs_status_name(rc), b->status, err.message);
    if (rc == MBS_OK) mbs_spec_free(s);
    free(text);
  }
}

// ---------------------------------------------------------------------------------------------
// files

static void test_files(void) {
  char dir[] = "/tmp/mbs_test_spec_XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "cannot make a temporary folder\n");
    exit(2);
  }
  char path[256], want[512];
  snprintf(path, sizeof(path), "%s/study.yaml", dir);
  char* text = edited(0, 0, NULL);
  FILE* f = fopen(path, "wb");
  if (!f) exit(2);
  fputs(text, f);
  fclose(f);

  mbs_study_spec* s = NULL;
  mbs_error err;
  EXPECT_OK(mbs_spec_read(path, &s, &err));
  if (s) {
    snprintf(want, sizeof(want), "%s/", dir);
    check_complete(s, want);
    EXPECT_TRUE(same_str(s->path, path));
    EXPECT_TRUE(same_str(s->text, text));
  } else {
    fprintf(stderr, "  %s\n", err.message);
  }
  mbs_spec_free(s);

  // errors from a file name the file as given
  f = fopen(path, "wb");
  if (!f) exit(2);
  fputs("model: m\nsimulation:\n  duration: 1\n  acuracy: 0.1\nsampling: {count: 1}\n"
        "output: o.h5\n", f);
  fclose(f);
  s = NULL;
  EXPECT_EQ_INT(mbs_spec_read(path, &s, &err), MBS_ERR_PARSE);
  snprintf(want, sizeof(want), "%s:4: simulation.acuracy: unknown key", path);
  EXPECT_TRUE(s == NULL && strncmp(err.message, want, strlen(want)) == 0);
  remove(path);

  // a missing file
  s = NULL;
  EXPECT_EQ_INT(mbs_spec_read(path, &s, &err), MBS_ERR_IO);
  EXPECT_TRUE(s == NULL && strstr(err.message, path) != NULL &&
              strstr(err.message, "cannot open") != NULL);
  rmdir(dir);
  free(text);

  // bad arguments, and freeing nothing
  EXPECT_EQ_INT(mbs_spec_parse(NULL, "x.yaml", &s, &err), MBS_ERR_ARGUMENT);
  EXPECT_EQ_INT(mbs_spec_read(NULL, &s, &err), MBS_ERR_ARGUMENT);
  mbs_spec_free(NULL);
}

// ---------------------------------------------------------------------------------------------
// limits: aliases, size, text

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void write_text(const char* path, const char* text, size_t n) {
  FILE* f = fopen(path, "wb");
  if (!f) exit(2);
  fwrite(text, 1, n, f);
  fclose(f);
}

// the message starts with `head` and holds `what` (printed when not)
static int message_is(const mbs_error* err, const char* head, const char* what) {
  const int ok = strncmp(err->message, head, strlen(head)) == 0 && strstr(err->message, what);
  if (!ok) fprintf(stderr, "  want '%s...%s', got: %s\n", head, what, err->message);
  return ok;
}

static void test_limits(void) {
  char dir[] = "/tmp/mbs_test_spec_limits_XXXXXX";
  if (!mkdtemp(dir)) exit(2);
  char path[256], head[320];
  mbs_study_spec* s = NULL;
  mbs_error err;

  // the alias bomb: 386 bytes, 9^9 (387 million) scalars once expanded; the counts of a..f
  // (10, 91, 820, 7381, 66430, 597871 nodes) stay below the limit, the second *f of line 7
  // crosses it
  char bomb[1024] = "a: &a [x,x,x,x,x,x,x,x,x]\n";
  for (char k = 'b'; k <= 'i'; k++) {
    char line[96];
    snprintf(line, sizeof(line), "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", k, k, k - 1,
             k - 1, k - 1, k - 1, k - 1, k - 1, k - 1, k - 1, k - 1);
    strcat(bomb, line);
  }
  EXPECT_TRUE(strlen(bomb) < 400);
  double t0 = seconds_now();
  EXPECT_EQ_INT(mbs_spec_parse(bomb, "bomb.yaml", &s, &err), MBS_ERR_PARSE);
  double dt = seconds_now() - t0;
  printf("alias bomb (text): %.4f s: %s\n", dt, err.message);
  EXPECT_TRUE(s == NULL && dt < 2.0);
  EXPECT_TRUE(message_is(&err, "bomb.yaml:7: ", "aliases expand beyond 1000000 nodes"));
  snprintf(path, sizeof(path), "%s/bomb.yaml", dir);
  write_text(path, bomb, strlen(bomb));
  t0 = seconds_now();
  EXPECT_EQ_INT(mbs_spec_read(path, &s, &err), MBS_ERR_PARSE);
  dt = seconds_now() - t0;
  printf("alias bomb (file): %.4f s: %s\n", dt, err.message);
  EXPECT_TRUE(s == NULL && dt < 2.0);
  snprintf(head, sizeof(head), "%s:7: ", path);
  EXPECT_TRUE(message_is(&err, head, "aliases"));
  remove(path);

  // the same through merge keys, and an alias inside the node it refers to
  const char* merged =
      "a: &a {p: 1, q: 2, r: 3, s: 4, t: 5, u: 6, v: 7, w: 8}\n"
      "b: &b {<<: *a, x: [*a, *a, *a, *a, *a, *a, *a, *a, *a]}\n"
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
      "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
  EXPECT_EQ_INT(mbs_spec_parse(merged, "merged.yaml", &s, &err), MBS_ERR_PARSE);
  EXPECT_TRUE(message_is(&err, "merged.yaml:6: ", "aliases expand beyond 1000000 nodes"));
  EXPECT_EQ_INT(mbs_spec_parse("model: m\na: &a [x, [y, *a]]\n", "cycle.yaml", &s, &err),
                MBS_ERR_PARSE);
  EXPECT_TRUE(message_is(&err, "cycle.yaml:2: ", "alias"));

  // an anchor used three times (and a mapping merged twice): read as before
  const char* reused =
      "model: m\n"
      "simulation: {duration: 1}\n"
      "parameters:\n"
      "  - {path: /a/x, distribution: &u {type: uniform, low: 0.5, high: 2}}\n"
      "  - {path: /a/y, distribution: *u}\n"
      "  - {path: /a/z, scale: *u}\n"
      "  - &n {path: /b/x, distribution: {type: normal, mean: 1, std: 0.1}}\n"
      "  - {<<: *n, path: /b/y}\n"
      "  - {<<: *n, path: /b/z}\n"
      "sampling: {count: 3}\n"
      "output: r.h5\n";
  s = NULL;
  EXPECT_OK(mbs_spec_parse(reused, "reused.yaml", &s, &err));
  if (!s) fprintf(stderr, "  %s\n", err.message);
  EXPECT_TRUE(s && s->nparams == 6);
  if (s && s->nparams == 6) {
    for (int i = 0; i < 3; i++) {
      EXPECT_EQ_INT(s->params[i].dist.type, MBS_DIST_UNIFORM);
      EXPECT_TRUE(s->params[i].dist.a == 0.5 && s->params[i].dist.b == 2);
      EXPECT_EQ_INT(s->params[i].is_scale, i == 2);
      EXPECT_EQ_INT(s->params[3 + i].dist.type, MBS_DIST_NORMAL);
    }
    EXPECT_TRUE(same_str(s->params[4].path, "/b/y") && same_str(s->params[5].path, "/b/z"));
  }
  mbs_spec_free(s);

  // more than 1000000 nodes without aliases (a list of 1000001 zeros): refused, saying so
  if (!getenv("MBS_TEST_QUICK")) {
    const size_t n = 1000001;
    char* big = malloc(16 + 2 * n);
    if (!big) exit(2);
    size_t k = 0;
    k += (size_t)sprintf(big, "x: [");
    for (size_t i = 0; i < n; i++) {
      big[k++] = '0';
      big[k++] = i + 1 < n ? ',' : ']';
    }
    big[k] = '\0';
    EXPECT_EQ_INT(mbs_spec_parse(big, "big.yaml", &s, &err), MBS_ERR_PARSE);
    EXPECT_TRUE(message_is(&err, "big.yaml:1: ", "more than 1000000 nodes"));
    free(big);
  }

  // a file over 16 MiB: refused before it is read, naming its size; the same text too
  {
    const size_t n = ((size_t)16 << 20) + 1;
    char* huge = malloc(n + 1);
    if (!huge) exit(2);
    memset(huge, '#', n);
    huge[n] = '\0';
    snprintf(path, sizeof(path), "%s/huge.yaml", dir);
    write_text(path, huge, n);
    EXPECT_EQ_INT(mbs_spec_read(path, &s, &err), MBS_ERR_PARSE);
    snprintf(head, sizeof(head), "%s: 16777217 bytes, more than", path);
    EXPECT_TRUE(message_is(&err, head, "16777216 bytes (16 MiB) a study file may have"));
    EXPECT_EQ_INT(mbs_spec_parse(huge, "huge.yaml", &s, &err), MBS_ERR_PARSE);
    EXPECT_TRUE(message_is(&err, "huge.yaml: 16777217 bytes", "16 MiB"));
    remove(path);
    free(huge);
  }

  // binary garbage without NUL bytes (bytes 1..255): not a text file, not an empty spec
  {
    char garbage[4097];
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < sizeof(garbage) - 1; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      garbage[i] = (char)(1 + x % 255);
    }
    garbage[sizeof(garbage) - 1] = '\0';
    snprintf(path, sizeof(path), "%s/garbage.yaml", dir);
    write_text(path, garbage, sizeof(garbage) - 1);
    EXPECT_EQ_INT(mbs_spec_read(path, &s, &err), MBS_ERR_PARSE);
    printf("binary garbage: %s\n", err.message);
    EXPECT_TRUE(s == NULL && strstr(err.message, "empty spec") == NULL);
    EXPECT_TRUE(strncmp(err.message, path, strlen(path)) == 0);
    EXPECT_TRUE(strstr(err.message, "not a text file") != NULL);
    // other garbage, which libfyaml reads as no document at all (no error of its own)
    unsigned lcg = 12345;
    for (size_t i = 0; i < sizeof(garbage) - 1; i++) {
      lcg = lcg * 1103515245u + 12345u;
      garbage[i] = (char)(1 + (lcg >> 16) % 255);
    }
    write_text(path, garbage, sizeof(garbage) - 1);
    EXPECT_EQ_INT(mbs_spec_read(path, &s, &err), MBS_ERR_PARSE);
    printf("binary garbage: %s\n", err.message);
    EXPECT_TRUE(s == NULL && strstr(err.message, "empty spec") == NULL);
    EXPECT_TRUE(strncmp(err.message, path, strlen(path)) == 0);
    EXPECT_TRUE(strstr(err.message, "not a text file") != NULL);
    remove(path);
    // one bad byte in a good spec: the line named
    EXPECT_EQ_INT(mbs_spec_parse("model: m\noutput: r\xff.h5\n", "b.yaml", &s, &err),
                  MBS_ERR_PARSE);
    printf("bad byte: %s\n", err.message);
    EXPECT_TRUE(message_is(&err, "b.yaml:2: ", "not a text file (invalid UTF-8 (byte 0xff))"));
  }
  rmdir(dir);
}

// ---------------------------------------------------------------------------------------------
// posture studies and grids

static void test_posture(void) {
  const char* text =
      "model: human\n"
      "simulation: {duration: 3, accuracy: 1.0e-4}\n"
      "posture:\n"
      "  knee_flexion: [1, 15, 30, 45]\n"
      "  direction: [anterior, posterior, 45, right]\n"
      "  magnitude: [0, 0.05, 0.1]\n"
      "  mode: [locked]\n"
      "  perturbation: {duration: 0.3, profile: cosine}\n"
      "  fall_fraction: 0.7\n"
      "  trunk_lean: 5\n"
      "  trunk_lean_ratio: 0.5\n"
      "  subject: {height: 1.6, mass: 60}\n"
      "  contact: {stiffness: 2.0e7, static_friction: 1.0}\n"
      "parameters:\n"
      "  - path: /bodyset/torso/mass\n"
      "    scale: {type: discrete, values: [0.9, 1.1]}\n"
      "  - path: /bodyset/pelvis/mass\n"
      "    distribution: {type: constant, value: 8}\n"
      "output: r.h5\n";
  mbs_study_spec* s = NULL;
  mbs_error err;
  EXPECT_OK(mbs_spec_parse(text, "dir/study.yaml", &s, &err));
  if (!s) {
    fprintf(stderr, "  %s\n", err.message);
    return;
  }
  EXPECT_TRUE(s->posture != NULL);
  const mbs_spec_posture* p = s->posture;
  EXPECT_EQ_INT(p->nknee, 4);
  EXPECT_TRUE(p->knee_flexion[3] == 45);
  EXPECT_EQ_INT(p->ndirection, 4);
  EXPECT_TRUE(p->direction[0] == 0 && p->direction[1] == 180 && p->direction[2] == 45 &&
              p->direction[3] == 90);
  EXPECT_EQ_INT(p->nmagnitude, 3);
  EXPECT_EQ_INT(p->nmode, 1);
  EXPECT_EQ_INT(p->mode[0], 1);
  EXPECT_TRUE(p->perturbation_duration == 0.3);
  EXPECT_TRUE(same_str(p->profile, "cosine"));
  EXPECT_TRUE(p->fall_fraction == 0.7);
  EXPECT_TRUE(p->trunk_lean == 5 && p->trunk_lean_ratio == 0.5);
  EXPECT_TRUE(p->height == 1.6 && p->mass == 60);
  EXPECT_TRUE(p->stiffness == 2e7 && p->static_friction == 1.0);
  EXPECT_TRUE(isnan(p->dissipation));
  EXPECT_EQ_INT(p->remove_muscles, 1);
  EXPECT_EQ_INT(s->method, MBS_DESIGN_GRID);
  // the grid: 2 x 1 (parameters) x 1 x 4 x 4 x 3 (mode, knees, directions, magnitudes)
  EXPECT_EQ_INT((int)s->count, 2 * 1 * 1 * 4 * 4 * 3);
  mbs_spec_free(s);

  // defaults: both directions and modes
  const char* minimal =
      "model: human\nsimulation: {duration: 2}\n"
      "posture: {knee_flexion: [15], magnitude: [0.1, 0.2]}\noutput: r.h5\n";
  EXPECT_OK(mbs_spec_parse(minimal, "study.yaml", &s, &err));
  if (s) {
    EXPECT_EQ_INT(s->posture->ndirection, 2);
    EXPECT_EQ_INT(s->posture->nmode, 2);
    EXPECT_TRUE(s->posture->perturbation_duration == 0.5 && s->posture->fall_fraction == 0.75);
    EXPECT_TRUE(s->posture->profile == NULL);
    EXPECT_EQ_INT((int)s->count, 8);
    mbs_spec_free(s);
  }
  // the muscles mode keeps the model's muscles
  const char* muscles =
      "model: m.osim\nsimulation: {duration: 2}\n"
      "posture: {knee_flexion: [15], magnitude: [0.1], mode: [feedback, muscles]}\n"
      "output: r.h5\n";
  EXPECT_OK(mbs_spec_parse(muscles, "study.yaml", &s, &err));
  if (s) {
    EXPECT_EQ_INT(s->posture->nmode, 2);
    EXPECT_EQ_INT(s->posture->mode[1], 3);
    EXPECT_EQ_INT(s->posture->remove_muscles, 0);
    mbs_spec_free(s);
  }
  // ranges: 0 .. 0.2 by 0.001 is 201 magnitudes, 0.2 included; 1 .. 45 by 10 stops at 41;
  // directions in degrees
  const char* ranges =
      "model: human\nsimulation: {duration: 2}\n"
      "posture:\n  knee_flexion: {from: 1, to: 45, step: 10}\n"
      "  magnitude: {from: 0, to: 0.2, step: 0.001}\n"
      "  direction: {from: 0, to: 345, step: 15}\noutput: r.h5\n";
  EXPECT_OK(mbs_spec_parse(ranges, "study.yaml", &s, &err));
  if (s) {
    const mbs_spec_posture* p = s->posture;
    EXPECT_EQ_INT(p->nmagnitude, 201);
    EXPECT_ABS(p->magnitude[0], 0, 0);
    EXPECT_ABS(p->magnitude[35], 0.035, 1e-15);
    EXPECT_ABS(p->magnitude[200], 0.2, 1e-15);
    EXPECT_EQ_INT(p->nknee, 5);
    EXPECT_ABS(p->knee_flexion[4], 41, 1e-12);
    EXPECT_EQ_INT(p->ndirection, 24);
    EXPECT_ABS(p->direction[23], 345, 1e-12);
    EXPECT_EQ_INT((int)s->count, 2 * 5 * 24 * 201);
    mbs_spec_free(s);
  }
  // a grid of plain parameters
  const char* grid =
      "model: double_pendulum\nsimulation: {duration: 2}\n"
      "parameters:\n"
      "  - path: /bodyset/rod1/mass\n    distribution: {type: discrete, values: [1, 2, 3]}\n"
      "  - path: /bodyset/rod2/mass\n    distribution: {type: discrete, values: [1, 2]}\n"
      "sampling: {method: grid}\noutput: r.h5\n";
  EXPECT_OK(mbs_spec_parse(grid, "study.yaml", &s, &err));
  if (s) {
    EXPECT_EQ_INT((int)s->count, 6);
    mbs_spec_free(s);
  }

  // broken posture specs: status, line, key and message
  static const struct {
    const char* text;
    int status, line;
    const char* what;
  } bad[] = {
      {"model: human\nsimulation: {duration: 2}\nposture: {magnitude: [0.1]}\noutput: r.h5\n",
       MBS_ERR_PARSE, 3, "posture.knee_flexion: missing"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15, 15]\n"
       "  magnitude: [0.1]\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 4, "posture.knee_flexion[1]: 15 is given twice"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  direction: [forward]\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 6, "posture.direction[0]: unknown value 'forward' (anterior, posterior"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [-0.1]\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 5, "posture.magnitude[0]: -0.1 is outside 0 .. 2"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: {from: 0, to: 0.2, step: 0}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 5, "posture.magnitude.step: 0 is not positive"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: {from: 0.2, to: 0.1, step: 0.01}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 5, "posture.magnitude: to (0.1) is below from (0.2)"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: {from: 0, to: 0.2}\noutput: r.h5\n",
       MBS_ERR_PARSE, 5, "posture.magnitude.step: missing"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: {from: 0, to: 3, step: 0.1}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 5, "posture.magnitude.to: 3 is outside 0 .. 2"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: {from: 0, to: 1, step: 1e-9}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 5, "posture.magnitude.step: 1e+09 levels from 0 to 1 by 1e-09"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: {from: 0, to: 1, step: 0.1, by: 2}\noutput: r.h5\n",
       MBS_ERR_PARSE, 5, "posture.magnitude.by: unknown key (from, to, step)"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  mode: {from: 0, to: 1, step: 1}\noutput: r.h5\n",
       MBS_ERR_PARSE, 6, "posture.mode: expected a non-empty list"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  mode: [free, rigid]\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 6,
       "posture.mode[1]: unknown value 'rigid' (free, locked, feedback, muscles)"},
      {"model: m.osim\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  mode: [free, muscles]\n  feet: {remove_muscles: true}\n"
       "output: r.h5\n",
       MBS_ERR_ARGUMENT, 7, "posture.feet.remove_muscles: the muscles mode needs the model's "
       "muscles"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  perturbation: {profile: ramp}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 6, "posture.perturbation.profile: unknown profile 'ramp'"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  fall_fraction: 1.5\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 6, "posture.fall_fraction: 1.5 is outside 0 .. 0.999 (0 excluded)"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  feet: {foot_length: 0.25}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 6, "posture.feet: only for .osim models"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  trunk_lean_ratio: 3\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 6, "posture.trunk_lean_ratio: 3 is outside 0 .. 1.5"},
      {"model: human\nsimulation: {duration: 2}\nposture:\n  knee_flexion: [15]\n"
       "  magnitude: [0.1]\n  stance: wide\noutput: r.h5\n",
       MBS_ERR_PARSE, 6, "posture.stance: unknown key"},
      {"model: human\nsimulation: {duration: 2}\nposture: {knee_flexion: [15], magnitude: [0.1]}\n"
       "sampling: {count: 10, method: lhs}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 4, "sampling.method: a posture study is a grid"},
      {"model: human\nsimulation: {duration: 2}\nposture: {knee_flexion: [15], magnitude: [0.1]}\n"
       "sampling: {count: 10, method: grid}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 4, "sampling.count: 10 does not match the grid's 4 points"},
      {"model: double_pendulum\nsimulation: {duration: 2}\nparameters:\n"
       "  - path: /bodyset/rod1/mass\n    distribution: {type: uniform, low: 1, high: 2}\n"
       "sampling: {method: grid}\noutput: r.h5\n",
       MBS_ERR_ARGUMENT, 4, "parameters: '/bodyset/rod1/mass': a grid needs discrete or constant"},
      {"model: double_pendulum\nsimulation: {duration: 2}\nsampling: {method: lhs}\n"
       "output: r.h5\n",
       MBS_ERR_PARSE, 3, "sampling.count: missing"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    s = NULL;
    mbs_error_clear(&err);
    const int rc = mbs_spec_parse(bad[i].text, "study.yaml", &s, &err);
    char head[300];
    snprintf(head, sizeof(head), "study.yaml:%d: %s", bad[i].line, bad[i].what);
    const int ok = rc == bad[i].status && s == NULL && strstr(err.message, head) == err.message;
    EXPECT_TRUE(ok);
    if (!ok) fprintf(stderr, "  posture case %zu: status %d, message: %s\n", i, rc, err.message);
    if (s) mbs_spec_free(s);
  }
}

// the sections that study types read themselves: values, defaults, and messages that name the
// file, the line and the key path; a parameter without a distribution
static void test_sections(void) {
  const char* text =
      "model: ishigami\n"                                   // 1
      "parameters:\n"                                       // 2
      "  - {path: /x1, initial: 0.5}\n"                     // 3
      "  - path: /x2\n"                                     // 4
      "    distribution: {type: uniform, low: 0, high: 1}\n"  // 5
      "fit:\n"                                              // 6
      "  method: cmaes\n"                                   // 7
      "  population: 12\n"                                  // 8
      "  tolerance: 1.0e-6\n"                               // 9
      "  refine: true\n"                                    // 10
      "  data: ref/block.sto\n"                             // 11
      "  weights: [1, 2.5]\n"                               // 12
      "  targets:\n"                                        // 13
      "    - {scalar: y, value: 3}\n"                       // 14
      "    - {scalar: r1, value: -1, weight: bad}\n"        // 15
      "output: out.h5\n";                                   // 16
  mbs_study_spec* s = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  EXPECT_OK(mbs_spec_parse(text, "dir/fit.yaml", &s, &err));
  if (!s) {
    fprintf(stderr, "  %s\n", err.message);
    return;
  }
  EXPECT_TRUE(!s->has_simulation && !s->has_sampling);
  EXPECT_TRUE(s->nparams == 2 && !s->params[0].has_dist && s->params[1].has_dist);
  EXPECT_NEAR(s->params[0].initial, 0.5, 0);
  EXPECT_TRUE(s->params[0].initial_line == 3 && isnan(s->params[1].initial));
  const mbs_spec_section* f = mbs_spec_find_section(s, "fit");
  EXPECT_TRUE(f != NULL && f->line == 6 && mbs_spec_find_section(s, "cohort") == NULL);
  if (!f) {
    mbs_spec_free(s);
    return;
  }
  static const char* const keys[] = {"method", "population", "tolerance", "refine", "data",
                                     "weights", "targets"};
  EXPECT_OK(mbs_spec_section_keys(f, keys, 7, &err));
  EXPECT_TRUE(mbs_spec_section_keys(f, keys, 6, &err) == MBS_ERR_PARSE &&
              strstr(err.message, "dir/fit.yaml:13: fit.targets: unknown key (method,") != NULL);
  static const char* const methods[] = {"lm", "cmaes"};
  int m = -1, refine = 0;
  EXPECT_OK(mbs_spec_section_choice(f, "method", methods, 2, -1, &m, &err));
  EXPECT_TRUE(m == 1);
  EXPECT_TRUE(mbs_spec_section_choice(f, "method", methods, 1, -1, &m, &err) ==
                  MBS_ERR_ARGUMENT &&
              strstr(err.message, "fit.yaml:7: fit.method: unknown value 'cmaes' (lm)") != NULL);
  long pop = 0, absent = 0;
  EXPECT_OK(mbs_spec_section_integer(f, "population", 0, 2, 1000, &pop, &err));
  EXPECT_TRUE(pop == 12);
  EXPECT_OK(mbs_spec_section_integer(f, "restarts", 3, 0, 10, &absent, &err));
  EXPECT_TRUE(absent == 3);
  EXPECT_TRUE(mbs_spec_section_integer(f, "restarts", LONG_MIN, 0, 10, &absent, &err) ==
                  MBS_ERR_PARSE && strstr(err.message, "fit.restarts: missing") != NULL);
  EXPECT_TRUE(mbs_spec_section_integer(f, "population", 0, 20, 1000, &pop, &err) ==
                  MBS_ERR_ARGUMENT && strstr(err.message, ":8: fit.population:") != NULL);
  double tol = 0;
  EXPECT_OK(mbs_spec_section_number(f, "tolerance", NAN, 0, 1, 1, 0, &tol, &err));
  EXPECT_NEAR(tol, 1e-6, 0);
  EXPECT_TRUE(mbs_spec_section_number(f, "tolerance", NAN, 1e-3, 0, NAN, 0, &tol, &err) ==
                  MBS_ERR_ARGUMENT &&
              strstr(err.message, ":9: fit.tolerance: 1e-06 is outside the allowed range "
                                  "(at least 0.001)") != NULL);
  EXPECT_OK(mbs_spec_section_bool(f, "refine", 0, &refine, &err));
  EXPECT_TRUE(refine == 1);
  char* data = NULL;
  EXPECT_OK(mbs_spec_section_string(f, "data", NULL, 1, &data, &err));
  EXPECT_TRUE(data && !strcmp(data, "dir/ref/block.sto"));
  free(data);
  double* w = NULL;
  int nw = 0;
  EXPECT_OK(mbs_spec_section_numbers(f, "weights", &w, &nw, &err));
  EXPECT_TRUE(nw == 2 && w && w[1] == 2.5);
  free(w);
  int nt = 0;
  EXPECT_OK(mbs_spec_section_count(f, "targets", &nt, &err));
  EXPECT_TRUE(nt == 2);
  mbs_spec_section t;
  EXPECT_OK(mbs_spec_section_item(f, "targets", 1, &t, &err));
  double wt = 0;
  EXPECT_TRUE(mbs_spec_section_number(&t, "weight", 1, 0, 0, NAN, 0, &wt, &err) ==
                  MBS_ERR_PARSE &&
              strstr(err.message, "dir/fit.yaml:15: fit.targets[1].weight: expected a number") !=
                  NULL);
  EXPECT_TRUE(mbs_spec_section_fail(&t, "value", MBS_ERR_ARGUMENT, &err, "no %s", "good") ==
                  MBS_ERR_ARGUMENT &&
              strstr(err.message, "fit.yaml:15: fit.targets[1].value: no good") != NULL);
  mbs_spec_free(s);
  // a section that is not a mapping
  s = NULL;
  EXPECT_TRUE(mbs_spec_parse("model: m\nsensitivity: sobol\noutput: o.h5\n", "x.yaml", &s,
                             &err) == MBS_ERR_PARSE &&
              strstr(err.message, "x.yaml:2: sensitivity: expected a mapping") != NULL);
  mbs_spec_free(s);
}

int main(void) {
  test_sections();
  test_posture();
  test_complete();
  test_defaults();
  test_broken();
  test_files();
  test_limits();
  return mbs_test_finish("test_spec");
}
