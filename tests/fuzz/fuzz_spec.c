// libFuzzer harness: the YAML study-file reader (mbs_spec_parse, io/spec.c).
//
// The input is the text of a study file (a NUL byte in it ends the text, as for the reader,
// which takes a C string). Relative paths in it resolve against an empty private folder, so
// nothing outside it is found; MBS_SHARED_DIR is that folder too, where an empty model.osim is
// the only file (so "${MBS_SHARED_DIR}/model.osim" is found, other shared files not). On
// success every string and array of the spec is read back (ASan checks their bounds), then the
// spec is freed; leaks are reported by LeakSanitizer.
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "mbs/spec.h"

static const char* spec_path;

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  const char* dir = fuzz_tmp_init("spec");
  spec_path = fuzz_tmp_path("study.yaml");  // (never written: only the folder matters)
  fuzz_write_file(fuzz_tmp_path("model.osim"), (const uint8_t*)"", 0);
  if (setenv("MBS_SHARED_DIR", dir, 1) != 0) abort();
  return 0;
}

static void touch_spec(const mbs_study_spec* s) {
  fuzz_touch_str(s->path);
  fuzz_touch_str(s->text);
  fuzz_touch_str(s->model);
  fuzz_touch_str(s->model_path);
  fuzz_touch_str(s->external_loads);
  fuzz_touch_str(s->integrator);
  fuzz_touch_str(s->output);
  for (int i = 0; i < s->nevents; i++) {
    fuzz_touch_str(s->events[i].name);
    fuzz_touch_str(s->events[i].body);
    fuzz_touch_str(s->events[i].coordinate);
    fuzz_touch_doubles(s->events[i].point, 3);
  }
  for (int i = 0; i < s->nparams; i++) {
    const mbs_spec_parameter* p = &s->params[i];
    fuzz_touch_str(p->path);
    if (p->dist.values) fuzz_touch_doubles(p->dist.values, p->dist.nvalues);
  }
  for (int i = 0; i < s->nbodies; i++) fuzz_touch_str(s->bodies[i]);
  for (int i = 0; i < s->ncontacts; i++) fuzz_touch_str(s->contacts[i]);
  for (int i = 0; i < s->nmuscles; i++) {
    fuzz_touch_str(s->muscles[i]);
    if (s->muscle_lines) fuzz_sink += (uint64_t)s->muscle_lines[i];
  }
  for (int i = 0; i < s->nmuscle_outputs; i++) {
    fuzz_touch_str(mbs_spec_muscle_output_name(s->muscle_outputs[i]));
    fuzz_touch_str(mbs_spec_muscle_output_unit(s->muscle_outputs[i]));
  }
  for (int i = 0; i < s->nscalars; i++) {
    const mbs_spec_scalar* sc = &s->scalars[i];
    fuzz_touch_str(sc->name);
    fuzz_touch_str(sc->of);
    fuzz_touch_str(sc->coordinate);
    fuzz_touch_str(sc->event);
  }
  if (s->posture) {
    const mbs_spec_posture* p = s->posture;
    fuzz_touch_doubles(p->knee_flexion, p->nknee);
    fuzz_touch_doubles(p->direction, p->ndirection);
    fuzz_touch_doubles(p->magnitude, p->nmagnitude);
    fuzz_touch_str(p->profile);
    for (int k = 0; k < 2; k++) {
      fuzz_touch_str(p->feet[k]);
      fuzz_touch_str(p->toes[k]);
    }
  }
  for (int i = 0; i < s->nsections; i++) {
    const mbs_spec_section* sec = &s->sections[i];
    fuzz_touch_str(sec->name);
    fuzz_touch_str(sec->kp);
    FUZZ_CHECK(mbs_spec_find_section(s, sec->name), "its sections are found by name");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = fuzz_strndup(data, size);
  mbs_study_spec* s = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  const int rc = mbs_spec_parse(text, spec_path, &s, &err);
  FUZZ_CHECK((rc == MBS_OK) == (s != NULL), "a spec exactly when the status is MBS_OK");
  if (rc != MBS_OK) fuzz_touch_str(err.message);
  fuzz_report("spec", rc == MBS_OK, rc == MBS_OK ? "" : err.message);
  if (s) touch_spec(s);
  mbs_spec_free(s);
  free(text);
  return 0;
}
