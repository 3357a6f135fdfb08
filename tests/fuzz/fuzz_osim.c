// libFuzzer harness: the OpenSim model reader (mbs_osim_parse, io/osim.c and the conversion of
// older documents in io/osim_upgrade.c).
//
// The input is the text of an .osim file. Its name is "<private empty folder>/model.osim", so
// relative mesh files and controls files are looked for there (and not found). On success the
// coordinates, records (muscles, wrap objects, ...), markers and warnings are read back
// (ASan checks them), then the model is freed; leaks are reported by LeakSanitizer.
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "mbs/osim.h"

static const char* model_path;

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  fuzz_tmp_init("osim");
  model_path = fuzz_tmp_path("model.osim");  // (never written: only the folder matters)
  return 0;
}

static void touch_model(const mbs_osim_model* m) {
  FUZZ_CHECK(mbs_osim_system(m), "a model has its system");
  fuzz_touch_str(mbs_osim_name(m));
  fuzz_touch_str(mbs_osim_path(m));
  fuzz_sink += (uint64_t)mbs_osim_version(m);
  const int nc = mbs_osim_ncoordinate(m);
  for (int i = 0; i < nc; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, i);
    FUZZ_CHECK(c, "coordinate_info(i) for i < ncoordinate");
    fuzz_touch_str(c->name);
    fuzz_touch_str(c->joint);
    fuzz_touch_doubles(&c->default_value, 1);
    fuzz_touch_doubles(c->range, 2);
    FUZZ_CHECK(!c->name || mbs_osim_find_coordinate(m, c->name) >= 0,
               "its coordinates are found by name");
  }
  const int nr = mbs_osim_nrecord(m);
  FUZZ_CHECK(mbs_osim_nmuscle(m) <= nr, "muscles are records");
  for (int i = 0; i < nr; i++) {
    const mbs_osim_record* r = mbs_osim_record_at(m, i);
    FUZZ_CHECK(r, "record_at(i) for i < nrecord");
    fuzz_touch_str(r->kind);
    fuzz_touch_str(r->name);
    for (int k = 0; k < r->nproperty; k++) {
      fuzz_touch_str(r->properties[k].name);
      fuzz_touch_str(r->properties[k].text);
    }
    for (int k = 0; k < r->npoint; k++) {
      fuzz_touch_str(r->points[k].name);
      fuzz_touch_str(r->points[k].kind);
      fuzz_touch_doubles(r->points[k].location, 3);
    }
    for (int k = 0; k < r->nwrap; k++) fuzz_touch_str(r->wraps[k]);
  }
  const int nm = mbs_osim_nmarker(m);
  for (int i = 0; i < nm; i++) {
    const mbs_osim_marker* mk = mbs_osim_marker_at(m, i);
    FUZZ_CHECK(mk, "marker_at(i) for i < nmarker");
    fuzz_touch_str(mk->name);
    fuzz_touch_doubles(mk->location, 3);
  }
  const int nw = mbs_osim_nwarning(m);
  for (int i = 0; i < nw; i++) fuzz_touch_str(mbs_osim_warning(m, i));
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mbs_error err;
  mbs_error_clear(&err);
  mbs_osim_model* m = mbs_osim_parse((const char*)data, size, model_path, NULL, &err);
  if (m) touch_model(m);
  else fuzz_touch_str(err.message);
  fuzz_report("osim", m != NULL, m ? "" : err.message);
  for (int i = 0; m && i < mbs_osim_nwarning(m); i++)
    fuzz_report("osim: warning", 1, mbs_osim_warning(m, i));
  mbs_osim_free(m);
  return 0;
}
