// OpenSim's ScaleTool (run_tool.h): a generic model scaled to a subject, read from a setup file
// with OpenSim 4's properties (paths relative to the setup file), in OpenSim's three steps:
//  1. GenericModelMaker: model_file, and marker_set_file whose markers replace the model's
//     markers of the same names or join them;
//  2. ModelScaler (when apply): the steps of scaling_order, "measurements" and "manualScale":
//     each applied Measurement's factor is the mean over its marker pairs of the pair's
//     distance in the marker_file (averaged over the frames of time_range, picked as OpenSim's
//     MarkerData does) over its distance in the model at its default pose, set on the axes of
//     the bodies of its BodyScaleSet; each applied Scale of the ScaleSet sets its segment's
//     three factors. The model is scaled (mbs/scale.h) to the subject's <mass> (when > 0),
//     with preserve_mass_distribution; output_model_file and output_scale_file (a ScaleSet with
//     a Scale for Ground, every body and every offset frame) are written;
//  3. MarkerPlacer (when apply): the model's markers absent from the marker_file are deleted;
//     the frames of time_range are averaged (missing values left out); inverse kinematics
//     (mbs/ik.h) puts the model in that pose, tracking the IKTaskSet's applied marker tasks
//     (every marker, weight 1, when none is applied) and its coordinate tasks; every marker
//     not <fixed> is moved to its averaged position, expressed in its frame; output_model_file,
//     output_marker_file (a MarkerSet) and output_motion_file (the pose: coordinate values and
//     speeds as an OpenSim 4 states file, radians) are written.
// A MeasurementSet, ScaleSet or IKTaskSet may be kept in a file of its own (file="...").
// Bad input stops with `file:line: what`: a marker pair naming a marker the model or the trial
// lacks (or that is missing in the frames averaged), a body or segment the model lacks, a
// time_range that is empty or reversed, a missing file.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "mbs/ik.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/scale.h"
#include "mbs/table.h"
#include "run_tool.h"

#define LOG(o, ...) fprintf((o)->log, "mbstudy run-tool: " __VA_ARGS__)
#define WARN(o, ...) fprintf((o)->log, "mbstudy run-tool: warning: " __VA_ARGS__)

// mkdir -p of the folder of a file
static int make_parent_dirs(const char* file) {
  char* p = strdup(file);
  if (!p) return -1;
  char* last = strrchr(p, '/');
  int rc = 0;
  if (last && last != p) {
    *last = 0;
    rc = mbs_make_dirs(p);
  }
  free(p);
  return rc;
}

// an output file name of the setup: relative to its folder (to --results DIR when given)
static char* output_path(mbs_setup* s, const mbs_tool_options* o, mbs_setup_node* n,
                         const char* key) {
  const char* name = mbs_setup_string(s, n, key);
  if (!name) return NULL;
  if (o->results_dir && name[0] != '/') return mbs_format_string("%s/%s", o->results_dir, name);
  return mbs_setup_resolve(s, name);
}

// a set property that may live in a file of its own: its items come from *src
typedef struct set_ref {
  mbs_setup* src;        // the setup holding the items (s, or the set's own file)
  mbs_setup_node* node;  // the set element (NULL: absent)
  mbs_setup* own;        // the set's own file, to free
} set_ref;

static int open_set(mbs_setup* s, const mbs_tool_options* o, mbs_setup_node* parent,
                    const char* key, set_ref* r) {
  memset(r, 0, sizeof(*r));
  r->src = s;
  r->node = mbs_setup_child(s, parent, key);
  const char* file = mbs_setup_attribute(r->node, "file");
  if (!file) return 0;
  char* path = mbs_setup_resolve(s, file);
  mbs_error err;
  mbs_error_clear(&err);
  r->own = path ? mbs_setup_read(path, &err) : NULL;
  free(path);
  if (!r->own) {
    LOG(o, "%s:%d: <%s file=\"%s\">: %s\n", mbs_setup_path(s), mbs_setup_line(r->node), key,
        file, path ? err.message : "out of memory");
    return 1;
  }
  if (strcmp(mbs_setup_tool(r->own), key)) {
    LOG(o, "%s: the file holds a <%s>, not the <%s> that %s:%d names\n",
        mbs_setup_path(r->own), mbs_setup_tool(r->own), key, mbs_setup_path(s),
        mbs_setup_line(r->node));
    mbs_setup_free(r->own);
    r->own = NULL;
    return 1;
  }
  r->src = r->own;
  r->node = mbs_setup_root(r->own);
  return 0;
}

static mbs_setup_node* set_item(set_ref* r, int i) {
  if (!r->node) return NULL;
  if (r->own) return mbs_setup_item(r->src, NULL, NULL, i);
  return mbs_setup_item(r->src, r->node, NULL, i);
}

// time_range: two numbers; *given 0 when absent
static int read_time_range(mbs_setup* s, const mbs_tool_options* o, mbs_setup_node* n,
                           double t[2], int* given) {
  *given = 0;
  mbs_setup_node* c = mbs_setup_child(s, n, "time_range");
  if (!c) return 0;
  const char* tr = mbs_setup_string(s, n, "time_range");
  if (!tr) {
    LOG(o, "%s:%d: <time_range> is empty (give the start and end times, s)\n",
        mbs_setup_path(s), mbs_setup_line(c));
    return 1;
  }
  char* end;
  t[0] = strtod(tr, &end);
  const char* p = end;
  t[1] = strtod(p, &end);
  while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
  if (p == tr || end == p || *end || !isfinite(t[0]) || !isfinite(t[1])) {
    LOG(o, "%s:%d: <time_range> '%s' is not two times (start and end, s)\n", mbs_setup_path(s),
        mbs_setup_line(c), tr);
    return 1;
  }
  if (t[0] > t[1]) {
    LOG(o, "%s:%d: <time_range> %g .. %g is empty: the start is after the end\n",
        mbs_setup_path(s), mbs_setup_line(c), t[0], t[1]);
    return 1;
  }
  *given = 1;
  return 0;
}

// a .trc file in meters
static mbs_table* read_markers(const mbs_tool_options* o, const char* setup_path, int line,
                               const char* file, double* to_file_units) {
  const size_t l = strlen(file);
  if (l < 4 || strcasecmp(file + l - 4, ".trc")) {
    LOG(o, "%s:%d: <marker_file> %s: mbstudy reads marker files in the .trc format\n",
        setup_path, line, file);
    return NULL;
  }
  mbs_table* t = NULL;
  mbs_error err;
  mbs_error_clear(&err);
  if (mbs_table_read_trc(file, &t, &err)) {
    LOG(o, "%s:%d: <marker_file>: %s\n", setup_path, line, err.message);
    return NULL;
  }
  double k = 1;
  if (t->units) {
    if (!strcasecmp(t->units, "mm")) k = 1e-3;
    else if (!strcasecmp(t->units, "cm")) k = 1e-2;
    else if (!strcasecmp(t->units, "dm")) k = 1e-1;
    if (mbs_table_to_meters(t, &err)) {
      LOG(o, "%s: %s\n", file, err.message);
      mbs_table_free(t);
      return NULL;
    }
  } else {
    WARN(o, "%s: no Units: the marker coordinates are taken as meters\n", file);
  }
  if (t->nrow < 1) {
    LOG(o, "%s: no frames\n", file);
    mbs_table_free(t);
    return NULL;
  }
  if (to_file_units) *to_file_units = 1 / k;
  return t;
}

static int trc_marker(const mbs_table* t, const char* name) {
  for (int j = 0; j < t->nmarkers; j++)
    if (!strcmp(t->markers[j], name)) return j;
  return -1;
}

static int model_marker(const mbs_osim_model* m, const char* name) {
  for (int i = 0; i < mbs_osim_nmarker(m); i++)
    if (!strcmp(mbs_osim_marker_at(m, i)->name, name)) return i;
  return -1;
}

//---------------------------------- ModelScaler ------------------------------------------------

typedef struct scale_run {
  mbs_setup* s;
  const mbs_tool_options* o;
  mbs_scale_model* sm;
  const mbs_osim_options* mo;
  double* F;             // 3 per segment
  mbs_table* trc;        // the marker file (measurements)
  mbs_osim_model* m0;    // the unscaled model (measurements)
  mbs_state* st0;
  int i0, i1;            // frames averaged
} scale_run;

static const char* pair_text(mbs_setup* s, mbs_setup_node* pair, char a[256], char b[256]) {
  const char* t = mbs_setup_string(s, pair, "markers");
  a[0] = b[0] = 0;
  if (!t) return NULL;
  char extra[8] = "";
  const int n = sscanf(t, "%255s %255s %7s", a, b, extra);
  return n == 2 ? t : NULL;
}

// the model's distance between two of its markers at its default pose
static double model_distance(scale_run* r, int ma, int mb) {
  const mbs_system* sys = mbs_osim_system(r->m0);
  const mbs_osim_marker* a = mbs_osim_marker_at(r->m0, ma);
  const mbs_osim_marker* b = mbs_osim_marker_at(r->m0, mb);
  double pa[3], pb[3];
  if (mbs_get_station_location(sys, r->st0, a->body, a->location, pa) ||
      mbs_get_station_location(sys, r->st0, b->body, b->location, pb))
    return NAN;
  return sqrt((pa[0] - pb[0]) * (pa[0] - pb[0]) + (pa[1] - pb[1]) * (pa[1] - pb[1]) +
              (pa[2] - pb[2]) * (pa[2] - pb[2]));
}

static int measurement(scale_run* r, set_ref* set, mbs_setup_node* me, const char* trc_path) {
  mbs_setup* s = set->src;
  const mbs_tool_options* o = r->o;
  const char* path = mbs_setup_path(s);
  const char* name = mbs_setup_node_name(me);
  mbs_error err;
  mbs_error_clear(&err);
  int apply;
  if (mbs_setup_bool(s, me, "apply", 1, &apply, &err)) {
    LOG(o, "%s\n", err.message);
    return 1;
  }
  if (!apply) {
    mbs_setup_mark_all(s, me);
    return 0;
  }
  // its factor: the mean ratio over its marker pairs
  double factor = 0;
  int npair = 0;
  mbs_setup_node* pairs = mbs_setup_child(s, me, "MarkerPairSet");
  for (mbs_setup_node* p; (p = mbs_setup_item(s, me, "MarkerPairSet", npair)); npair++) {
    char a[256], b[256];
    if (!pair_text(s, p, a, b)) {
      LOG(o, "%s:%d: Measurement '%s': MarkerPair's <markers> must name two markers\n", path,
          mbs_setup_line(p), name);
      return 1;
    }
    const int ma = model_marker(r->m0, a), mb = model_marker(r->m0, b);
    const int ta = trc_marker(r->trc, a), tb = trc_marker(r->trc, b);
    const char* missing = ma < 0 ? a : mb < 0 ? b : NULL;
    if (missing) {
      LOG(o, "%s:%d: Measurement '%s': marker '%s' of the pair is not in the generic model "
          "(with its marker set)\n", path, mbs_setup_line(p), name, missing);
      return 1;
    }
    missing = ta < 0 ? a : tb < 0 ? b : NULL;
    if (missing) {
      LOG(o, "%s:%d: Measurement '%s': marker '%s' of the pair is not in %s\n", path,
          mbs_setup_line(p), name, missing, trc_path);
      return 1;
    }
    const double exp = mbs_scale_marker_distance(r->trc, ta, tb, r->i0, r->i1);
    const double mod = model_distance(r, ma, mb);
    if (!isfinite(exp)) {
      LOG(o, "%s:%d: Measurement '%s': marker '%s' or '%s' is missing in frames %d to %d of "
          "%s\n", path, mbs_setup_line(p), name, a, b, r->i0 + 1, r->i1 + 1, trc_path);
      return 1;
    }
    if (!(mod > 0)) {
      LOG(o, "%s:%d: Measurement '%s': markers '%s' and '%s' coincide in the model\n", path,
          mbs_setup_line(p), name, a, b);
      return 1;
    }
    LOG(o, "  measurement '%s', pair %d (%s, %s): model %.6g m, experimental %.6g m\n", name,
        npair, a, b, mod, exp);
    factor += exp / mod;
  }
  if (npair == 0) {
    LOG(o, "%s:%d: Measurement '%s' has no marker pairs (MarkerPairSet)\n", path,
        mbs_setup_line(pairs ? pairs : me), name);
    return 1;
  }
  factor /= npair;
  LOG(o, "  measurement '%s': scale factor %.9g\n", name, factor);
  // its bodies and axes
  int nbody = 0;
  mbs_setup_node* bodies = mbs_setup_child(s, me, "BodyScaleSet");
  for (mbs_setup_node* b; (b = mbs_setup_item(s, me, "BodyScaleSet", nbody)); nbody++) {
    const char* body = mbs_setup_node_name(b);
    const int seg = mbs_scale_model_find_segment(r->sm, body);
    if (seg < 0) {  // OpenSim passes over it (its own gait2354 setup names patellae)
      WARN(o, "%s:%d: Measurement '%s': BodyScale '%s': the model has no such body; ignored\n",
           path, mbs_setup_line(b), name, body);
      mbs_setup_mark_all(s, b);
      continue;
    }
    const char* axes = mbs_setup_string(s, b, "axes");
    if (!axes) {
      LOG(o, "%s:%d: Measurement '%s': BodyScale '%s' has no <axes> (X Y Z)\n", path,
          mbs_setup_line(b), name, body);
      return 1;
    }
    for (const char* c = axes; *c; c++) {
      if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') continue;
      const int k = *c == 'x' || *c == 'X' ? 0 : *c == 'y' || *c == 'Y' ? 1
                    : *c == 'z' || *c == 'Z' ? 2 : -1;
      const char nx = c[1];
      if (k < 0 || (nx && nx != ' ' && nx != '\t' && nx != '\n' && nx != '\r')) {
        LOG(o, "%s:%d: Measurement '%s': BodyScale '%s': <axes> '%s' is not a list of X, Y "
            "and Z\n", path, mbs_setup_line(b), name, body, axes);
        return 1;
      }
      r->F[3 * seg + k] = factor;
    }
  }
  if (nbody == 0)
    WARN(o, "%s:%d: Measurement '%s' scales no body (its BodyScaleSet is empty)\n", path,
         mbs_setup_line(bodies ? bodies : me), name);
  return 0;
}

static int measurements(scale_run* r, mbs_setup_node* ms, const char* trc_path,
                        mbs_setup_node* trc_node) {
  mbs_setup* s = r->s;
  const mbs_tool_options* o = r->o;
  const char* path = mbs_setup_path(s);
  if (!trc_path) {
    LOG(o, "%s:%d: <ModelScaler>: scaling_order has 'measurements' but there is no "
        "<marker_file>\n", path, mbs_setup_line(ms));
    return 1;
  }
  mbs_error err;
  mbs_error_clear(&err);
  if (!r->trc) {
    r->trc = read_markers(o, path, mbs_setup_line(trc_node), trc_path, NULL);
    if (!r->trc) return 1;
    double t[2] = {-1, -1};  // OpenSim's default: the first frame
    int given;
    if (read_time_range(s, o, ms, t, &given)) return 1;
    mbs_scale_frame_range(r->trc, t[0], t[1], &r->i0, &r->i1);
    LOG(o, "measurements: %s, frames %d to %d (t = %g .. %g s)%s\n", trc_path, r->i0 + 1,
        r->i1 + 1, mbs_table_get(r->trc, r->i0, 0), mbs_table_get(r->trc, r->i1, 0),
        given ? "" : " (no <time_range>: the first frame, as OpenSim)");
  }
  if (!r->m0) {
    r->m0 = mbs_scale_model_build(r->sm, r->mo, &err);
    if (!r->m0) {
      LOG(o, "%s\n", err.message);
      return 1;
    }
    const mbs_system* sys = mbs_osim_system(r->m0);
    r->st0 = mbs_state_create(sys);
    if (!r->st0 || mbs_osim_default_state(r->m0, r->st0) ||
        mbs_realize_position(sys, r->st0)) {
      LOG(o, "the generic model's default pose: %s\n",
          r->st0 ? mbs_state_error(r->st0)->message : "out of memory");
      return 1;
    }
  }
  set_ref set;
  if (open_set(s, o, ms, "MeasurementSet", &set)) return 1;
  int rc = 0, n = 0;
  for (mbs_setup_node* me; !rc && (me = set_item(&set, n)); n++) {
    if (strcmp(mbs_setup_kind(me), "Measurement")) {
      WARN(o, "%s:%d: <%s> is not a Measurement; ignored\n", mbs_setup_path(set.src),
           mbs_setup_line(me), mbs_setup_kind(me));
      mbs_setup_mark_all(set.src, me);
      continue;
    }
    rc = measurement(r, &set, me, trc_path);
  }
  if (!rc && n == 0)
    WARN(o, "%s:%d: 'measurements' in scaling_order, but the MeasurementSet is empty\n", path,
         mbs_setup_line(ms));
  mbs_setup_free(set.own);
  return rc;
}

static int manual_scales(scale_run* r, mbs_setup_node* ms) {
  const mbs_tool_options* o = r->o;
  set_ref set;
  if (open_set(r->s, o, ms, "ScaleSet", &set)) return 1;
  mbs_setup* s = set.src;
  const char* path = mbs_setup_path(s);
  int rc = 0, n = 0;
  for (mbs_setup_node* sc; !rc && (sc = set_item(&set, n)); n++) {
    mbs_error err;
    mbs_error_clear(&err);
    int apply;
    if (mbs_setup_bool(s, sc, "apply", 1, &apply, &err)) {
      LOG(o, "%s\n", err.message);
      rc = 1;
      break;
    }
    const char* seg_name = mbs_setup_string(s, sc, "segment");
    const char* scales = mbs_setup_string(s, sc, "scales");
    if (!apply) continue;
    const int seg = seg_name ? mbs_scale_model_find_segment(r->sm, seg_name) : -1;
    if (!seg_name) {
      LOG(o, "%s:%d: Scale has no <segment> (the body it scales)\n", path, mbs_setup_line(sc));
      rc = 1;
      break;
    }
    if (seg < 0) {  // OpenSim passes over it
      WARN(o, "%s:%d: Scale: the model has no body '%s'; ignored\n", path, mbs_setup_line(sc),
           seg_name);
      continue;
    }
    double f[3];
    char extra[8] = "";
    if (!scales || sscanf(scales, "%lf %lf %lf %7s", &f[0], &f[1], &f[2], extra) != 3 ||
        !isfinite(f[0]) || !isfinite(f[1]) || !isfinite(f[2]) || !f[0] || !f[1] || !f[2]) {
      LOG(o, "%s:%d: Scale '%s': <scales> '%s' is not three non-zero numbers\n", path,
          mbs_setup_line(sc), seg_name, scales ? scales : "");
      rc = 1;
      break;
    }
    memcpy(r->F + 3 * seg, f, sizeof(f));
    LOG(o, "  manual scale '%s': %g %g %g\n", seg_name, f[0], f[1], f[2]);
  }
  mbs_setup_free(set.own);
  return rc;
}

// ModelScaler; 0, or 1 after a message
static int model_scaler(mbs_setup* s, const mbs_tool_options* o, mbs_setup_node* ms,
                        mbs_scale_model* sm, const mbs_osim_options* mo, double mass) {
  const char* path = mbs_setup_path(s);
  const int nseg = mbs_scale_model_nsegment(sm);
  scale_run r = {.s = s, .o = o, .sm = sm, .mo = mo};
  r.F = malloc(3 * (size_t)nseg * sizeof(double));
  char* trc_path = mbs_setup_file(s, ms, "marker_file");
  char* out_model = output_path(s, o, ms, "output_model_file");
  char* out_scale = output_path(s, o, ms, "output_scale_file");
  mbs_setup_node* trc_node = mbs_setup_child(s, ms, "marker_file");
  int rc = 1, preserve;
  mbs_error err;
  mbs_error_clear(&err);
  if (!r.F) {
    LOG(o, "out of memory\n");
    goto done;
  }
  for (int i = 0; i < 3 * nseg; i++) r.F[i] = 1;
  if (mbs_setup_bool(s, ms, "preserve_mass_distribution", 0, &preserve, &err)) {
    LOG(o, "%s\n", err.message);
    goto done;
  }
  {
    double t[2];
    int given;
    if (read_time_range(s, o, ms, t, &given)) goto done;
  }
  const char* order = mbs_setup_string(s, ms, "scaling_order");
  if (!order) WARN(o, "%s:%d: <ModelScaler> has no scaling_order: no factors are applied\n",
                   path, mbs_setup_line(ms));
  char* copy = strdup(order ? order : "");
  char* save = NULL;
  int bad = !copy;
  for (char* w = copy ? strtok_r(copy, " \t\r\n", &save) : NULL; w && !bad;
       w = strtok_r(NULL, " \t\r\n", &save)) {
    if (!strcmp(w, "measurements")) {
      bad = measurements(&r, ms, trc_path, trc_node);
    } else if (!strcmp(w, "manualScale")) {
      bad = manual_scales(&r, ms);
    } else {
      LOG(o, "%s:%d: <scaling_order>: '%s' is not 'measurements' or 'manualScale'\n", path,
          mbs_setup_line(mbs_setup_child(s, ms, "scaling_order")), w);
      bad = 1;
    }
  }
  free(copy);
  if (bad) goto done;
  // what is not used in a scaling order without that step is still read
  mbs_setup_child(s, ms, "MeasurementSet");
  mbs_setup_child(s, ms, "ScaleSet");
  mbs_setup_warn_unused_in(s, ms, o->log);
  // scale
  mbs_scale_report rep;
  if (mbs_scale_model_apply(sm, r.F, mass, preserve, mo, &rep, &err)) {
    LOG(o, "%s\n", err.message);
    goto done;
  }
  for (int i = 0; i < mbs_scale_model_nwarning(sm); i++)
    WARN(o, "%s\n", mbs_scale_model_warning(sm, i));
  LOG(o, "scaled %d bodies: %d offset frames, %d markers, %d path points, %d wrap objects, %d "
      "functions, %d muscle and ligament lengths; mass %.6g kg -> %.6g kg%s\n", nseg - 1,
      rep.nframes, rep.nmarkers, rep.npoints, rep.nwraps, rep.nfunctions, rep.nlengths,
      rep.mass_before, rep.mass_after,
      mass > 0 ? (preserve ? " (mass distribution preserved)" : "") : " (no subject mass)");
  for (int i = 0; i < nseg; i++)
    LOG(o, "  %-12s %.9g %.9g %.9g\n", mbs_scale_model_segment(sm, i), r.F[3 * i],
        r.F[3 * i + 1], r.F[3 * i + 2]);
  if (out_model) {
    if (make_parent_dirs(out_model) || mbs_scale_model_write(sm, out_model, &err)) {
      LOG(o, "%s\n", err.code ? err.message : strerror(errno));
      goto done;
    }
    LOG(o, "wrote %s\n", out_model);
  }
  if (out_scale) {
    const int noff = mbs_scale_model_noffset_frame(sm);
    const char** names = calloc((size_t)(nseg + noff) + 1, sizeof(char*));
    double* f = calloc(3 * (size_t)(nseg + noff) + 1, sizeof(double));
    int wrc = !names || !f;
    for (int i = 0; !wrc && i < nseg + noff; i++) {
      names[i] = i < nseg ? mbs_scale_model_segment(sm, i)
                          : mbs_scale_model_offset_frame(sm, i - nseg);
      for (int k = 0; k < 3; k++) f[3 * i + k] = i < nseg ? r.F[3 * i + k] : 1;
    }
    if (!wrc) wrc = make_parent_dirs(out_scale) ||
                    mbs_scale_set_write(out_scale, nseg + noff, names, f, &err);
    free(names);
    free(f);
    if (wrc) {
      LOG(o, "%s\n", err.code ? err.message : "cannot write the scale set");
      goto done;
    }
    LOG(o, "wrote %s\n", out_scale);
  }
  rc = 0;
done:
  free(r.F);
  free(trc_path);
  free(out_model);
  free(out_scale);
  mbs_table_free(r.trc);
  mbs_state_destroy(r.st0);
  mbs_osim_free(r.m0);
  return rc;
}

//---------------------------------- MarkerPlacer -----------------------------------------------

typedef struct place_run {
  mbs_table* trc;
  double* avg;            // 3 per trc marker, m (NaN: missing)
  mbs_osim_model* m;
  mbs_state* st;
  mbs_ik* ik;
  mbs_ik_marker* ikm;
  int* ikm_trc;           // the trc marker of each tracked marker
  mbs_ik_task* ikt;
  double* targets;
  mbs_ik_bound* bounds;
  int* fixed;
  double* obs;
  const char** names;
  mbs_table* motion;
  char** labels;
  int nlabels;
  mbs_table* coords;
  mbs_table_spline* spline;
} place_run;

static void place_free(place_run* p) {
  mbs_table_free(p->trc);
  free(p->avg);
  mbs_ik_free(p->ik);
  mbs_state_destroy(p->st);
  mbs_osim_free(p->m);
  free(p->ikm);
  free(p->ikm_trc);
  free(p->ikt);
  free(p->targets);
  free(p->bounds);
  free(p->fixed);
  free(p->obs);
  free(p->names);
  mbs_table_free(p->motion);
  for (int i = 0; i < p->nlabels; i++) free(p->labels[i]);
  free(p->labels);
  mbs_table_free(p->coords);
  mbs_table_spline_free(p->spline);
}

static int marker_placer(mbs_setup* s, const mbs_tool_options* o, mbs_setup_node* mp,
                         mbs_scale_model* sm, const mbs_osim_options* mo) {
  const char* path = mbs_setup_path(s);
  place_run p;
  memset(&p, 0, sizeof(p));
  char* trc_path = mbs_setup_file(s, mp, "marker_file");
  char* coord_path = mbs_setup_file(s, mp, "coordinate_file");
  char* out_model = output_path(s, o, mp, "output_model_file");
  char* out_markers = output_path(s, o, mp, "output_marker_file");
  char* out_motion = output_path(s, o, mp, "output_motion_file");
  mbs_setup_node* trc_node = mbs_setup_child(s, mp, "marker_file");
  set_ref tasks = {0};
  int rc = 1;
  double max_move, t[2] = {-1, -1}, to_file_units = 1;
  int given;
  mbs_error err;
  mbs_error_clear(&err);
  if (mbs_setup_number(s, mp, "max_marker_movement", -1, &max_move, &err)) {
    LOG(o, "%s\n", err.message);
    goto done;
  }
  if (read_time_range(s, o, mp, t, &given)) goto done;
  if (!trc_path) {
    LOG(o, "%s:%d: <MarkerPlacer> has no <marker_file> (the static trial)\n", path,
        mbs_setup_line(mp));
    goto done;
  }
  if (open_set(s, o, mp, "IKTaskSet", &tasks)) goto done;
  mbs_setup_child(s, mp, "optimizer_algorithm");
  mbs_setup_child(s, mp, "print_level");
  if (!(p.trc = read_markers(o, path, mbs_setup_line(trc_node), trc_path, &to_file_units)))
    goto done;
  // the frames: the time range within the data (OpenSim narrows it so)
  const int nrow = p.trc->nrow, nfm = p.trc->nmarkers;
  const double tf = mbs_table_get(p.trc, 0, 0), tl = mbs_table_get(p.trc, nrow - 1, 0);
  if (!given) t[0] = t[1] = tf;
  if (t[0] < tf) t[0] = tf;
  if (t[1] > tl) t[1] = tl;
  int f0 = -1, f1 = -1;
  for (int i = 0; i < nrow; i++) {
    const double ti = mbs_table_get(p.trc, i, 0);
    if (ti >= t[0] - 1e-9 && ti <= t[1] + 1e-9) {
      if (f0 < 0) f0 = i;
      f1 = i;
    }
  }
  if (f0 < 0) {
    LOG(o, "%s:%d: <time_range> %g .. %g holds no frame of %s (%g .. %g s)\n", path,
        mbs_setup_line(mbs_setup_child(s, mp, "time_range")), t[0], t[1], trc_path, tf, tl);
    goto done;
  }
  // the averaged pose
  p.avg = calloc(3 * (size_t)nfm + 1, sizeof(double));
  if (!p.avg) goto oom;
  for (int j = 0; j < nfm; j++) {
    double sum[3] = {0, 0, 0}, lo[3], hi[3];
    int n = 0;
    for (int k = 0; k < 3; k++) {
      lo[k] = INFINITY;
      hi[k] = -INFINITY;
    }
    for (int i = f0; i <= f1; i++) {
      double x[3];
      int ok = 1;
      for (int k = 0; k < 3; k++) ok &= isfinite(x[k] = mbs_table_get(p.trc, i, 1 + 3 * j + k));
      if (!ok) continue;
      n++;
      for (int k = 0; k < 3; k++) {
        sum[k] += x[k];
        if (x[k] < lo[k]) lo[k] = x[k];
        if (x[k] > hi[k]) hi[k] = x[k];
      }
    }
    for (int k = 0; k < 3; k++) p.avg[3 * j + k] = n ? sum[k] / n : NAN;
    if (!n) {
      WARN(o, "marker '%s' is missing in frames %d to %d of %s; it is not tracked or moved\n",
           p.trc->markers[j], f0 + 1, f1 + 1, trc_path);
    } else if (max_move > 0) {
      double move = 0;
      for (int k = 0; k < 3; k++)
        if ((hi[k] - lo[k]) * to_file_units > move) move = (hi[k] - lo[k]) * to_file_units;
      if (move > max_move)
        WARN(o, "movement of marker '%s' in %s is %g (max_marker_movement %g)\n",
             p.trc->markers[j], trc_path, move, max_move);
    }
  }
  // the model's markers absent from the trial are deleted (OpenSim's deleteUnusedMarkers)
  {
    int ndel = 0;
    mbs_scale_model_keep_markers(sm, (const char* const*)p.trc->markers, nfm, &ndel);
    if (ndel) LOG(o, "deleted %d markers of the model that %s does not have\n", ndel, trc_path);
  }
  if (!(p.m = mbs_scale_model_build(sm, mo, &err))) {
    LOG(o, "%s\n", err.message);
    goto done;
  }
  const mbs_system* sys = mbs_osim_system(p.m);
  const int nmk = mbs_osim_nmarker(p.m), ncoord = mbs_osim_ncoordinate(p.m);
  // the tasks
  int nt = 0, nmtask = 0;
  while (set_item(&tasks, nt)) nt++;
  p.ikm = calloc((size_t)nmk + 1, sizeof(mbs_ik_marker));
  p.ikm_trc = calloc((size_t)nmk + 1, sizeof(int));
  p.ikt = calloc((size_t)nt + 1, sizeof(mbs_ik_task));
  p.targets = calloc((size_t)nt + 1, sizeof(double));
  p.bounds = calloc((size_t)ncoord + 1, sizeof(mbs_ik_bound));
  p.fixed = calloc((size_t)ncoord + 1, sizeof(int));
  p.obs = calloc(3 * (size_t)nmk + 1, sizeof(double));
  if (!p.ikm || !p.ikm_trc || !p.ikt || !p.targets || !p.bounds || !p.fixed || !p.obs) goto oom;
  int nused = 0, ntask = 0;
  for (int i = 0; i < nt; i++) {
    mbs_setup_node* k = set_item(&tasks, i);
    const char* kind = mbs_setup_kind(k);
    if (!strcmp(kind, "IKMarkerTask")) {
      int apply;
      if (mbs_setup_bool(tasks.src, k, "apply", 1, &apply, &err)) goto msg;
      if (apply) nmtask++;
    }
  }
  for (int i = 0; i < nmk; i++) {
    const mbs_osim_marker* mk = mbs_osim_marker_at(p.m, i);
    double w = 1;
    if (nmtask > 0) {
      w = -1;
      for (int j = 0; j < nt && w < 0; j++) {
        mbs_setup_node* k = set_item(&tasks, j);
        int apply;
        if (strcmp(mbs_setup_kind(k), "IKMarkerTask") ||
            strcmp(mbs_setup_node_name(k), mk->name))
          continue;
        if (mbs_setup_bool(tasks.src, k, "apply", 1, &apply, &err) ||
            mbs_setup_number(tasks.src, k, "weight", 0, &w, &err))
          goto msg;
        if (!apply) w = -1;
      }
      if (w < 0) continue;
    }
    const int j = trc_marker(p.trc, mk->name);
    if (j < 0 || !isfinite(p.avg[3 * j]) || mk->body <= 0) continue;
    p.ikm[nused] = (mbs_ik_marker){.name = mk->name, .body = mk->body, .weight = w};
    memcpy(p.ikm[nused].station, mk->location, sizeof(mk->location));
    memcpy(p.obs + 3 * nused, p.avg + 3 * j, 3 * sizeof(double));
    p.ikm_trc[nused++] = j;
  }
  if (nused == 0) {
    LOG(o, "%s:%d: MarkerPlacer: no marker of the model is both in %s and tracked\n", path,
        mbs_setup_line(mp), trc_path);
    goto done;
  }
  for (int i = 0; i < nt; i++) {
    mbs_setup_node* k = set_item(&tasks, i);
    const char* kind = mbs_setup_kind(k);
    const char* tn = mbs_setup_node_name(k);
    const char* tp = mbs_setup_path(tasks.src);
    if (!strcmp(kind, "IKMarkerTask")) {
      mbs_setup_mark_all(tasks.src, k);
      continue;
    }
    if (strcmp(kind, "IKCoordinateTask")) {
      WARN(o, "%s:%d: <%s> is not an IK task; ignored\n", tp, mbs_setup_line(k), kind);
      mbs_setup_mark_all(tasks.src, k);
      continue;
    }
    int apply;
    double w, value;
    if (mbs_setup_bool(tasks.src, k, "apply", 1, &apply, &err) ||
        mbs_setup_number(tasks.src, k, "weight", 0, &w, &err) ||
        mbs_setup_number(tasks.src, k, "value", 0, &value, &err))
      goto msg;
    const char* vt = mbs_setup_string(tasks.src, k, "value_type");
    if (!apply) continue;
    const int ci = mbs_osim_find_coordinate(p.m, tn);
    if (ci < 0) {
      LOG(o, "%s:%d: IKCoordinateTask '%s': the model has no such coordinate\n", tp,
          mbs_setup_line(k), tn);
      goto done;
    }
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(p.m, ci);
    if (c->locked) continue;
    double target = c->default_value;
    if (vt && !strcasecmp(vt, "manual_value")) {
      target = value;
    } else if (vt && !strcasecmp(vt, "from_file")) {
      if (!coord_path) {
        LOG(o, "%s:%d: IKCoordinateTask '%s' takes its value from_file, but there is no "
            "<coordinate_file>\n", tp, mbs_setup_line(k), tn);
        goto done;
      }
      if (!p.coords && (mbs_table_read_sto(coord_path, &p.coords, &err) ||
                        mbs_table_spline_create(p.coords, &p.spline, &err)))
        goto msg;
      char label[600];
      snprintf(label, sizeof(label), "/jointset/%s/%s/value", c->joint, c->name);
      int col = mbs_table_column(p.coords, c->name);
      if (col <= 0) col = mbs_table_column(p.coords, label);
      if (col <= 0) {
        LOG(o, "%s:%d: IKCoordinateTask '%s': %s has no column for it\n", tp,
            mbs_setup_line(k), tn, coord_path);
        goto done;
      }
      double d[3];
      mbs_table_spline_eval(p.spline, col, t[0], d);
      target = p.coords->in_degrees && c->motion == MBS_OSIM_ROTATIONAL ? d[0] * M_PI / 180
                                                                         : d[0];
    } else if (vt && strcasecmp(vt, "default_value")) {
      LOG(o, "%s:%d: IKCoordinateTask '%s': value_type '%s' is not default_value, "
          "manual_value or from_file\n", tp, mbs_setup_line(k), tn, vt);
      goto done;
    }
    p.ikt[ntask] = (mbs_ik_task){.name = c->name, .q = c->qindex, .weight = w};
    p.targets[ntask++] = target;
  }
  int nbound = 0, nfixed = 0;
  for (int i = 0; i < ncoord; i++) {
    const mbs_osim_coordinate* c = mbs_osim_coordinate_info(p.m, i);
    if (c->locked) p.fixed[nfixed++] = c->qindex;
    else if (c->clamped && !c->prescribed)
      p.bounds[nbound++] = (mbs_ik_bound){.name = c->name, .q = c->qindex, .lower = c->range[0],
                                          .upper = c->range[1]};
  }
  {
    mbs_ik_problem pr;
    mbs_ik_problem_default(&pr);
    pr.nmarker = nused;
    pr.markers = p.ikm;
    pr.ntask = ntask;
    pr.tasks = p.ikt;
    pr.nbound = nbound;
    pr.bounds = p.bounds;
    pr.nfixed = nfixed;
    pr.fixed = p.fixed;
    if (mbs_ik_create(sys, &pr, &p.ik, &err)) goto msg;
  }
  p.st = mbs_state_create(sys);
  if (!p.st) goto oom;
  if (mbs_osim_default_state(p.m, p.st)) {
    LOG(o, "the scaled model's default pose: %s\n", mbs_state_error(p.st)->message);
    goto done;
  }
  mbs_state_set_time(p.st, t[0]);
  mbs_ik_report irep;
  if (mbs_ik_solve(p.ik, sys, p.st, p.obs, p.targets, &irep) ||
      mbs_realize_position(sys, p.st)) {
    LOG(o, "%s: the static pose: %s\n", trc_path, mbs_state_error(p.st)->message);
    goto done;
  }
  {
    const double* e2 = mbs_ik_marker_squared_errors(p.ik);
    double total = 0, worst = 0;
    int wi = 0;
    for (int i = 0; i < nused; i++) {
      total += e2[i];
      if (e2[i] > worst) {
        worst = e2[i];
        wi = i;
      }
    }
    LOG(o, "static pose (frames %d to %d of %s, t = %g .. %g s): %d markers, %d coordinate "
        "tasks; total squared error %.6g m^2, marker error RMS %.6g m, max %.6g m (%s)%s\n",
        f0 + 1, f1 + 1, trc_path, mbs_table_get(p.trc, f0, 0), mbs_table_get(p.trc, f1, 0),
        nused, ntask, total, sqrt(total / nused), sqrt(worst), p.ikm[wi].name,
        irep.converged ? "" : " (the solver did not converge)");
  }
  // the markers moved to the pose
  int moved = 0;
  for (int i = 0; i < nmk; i++) {
    const mbs_osim_marker* mk = mbs_osim_marker_at(p.m, i);
    const int j = trc_marker(p.trc, mk->name);
    if (mk->fixed || j < 0 || !isfinite(p.avg[3 * j])) continue;
    double R[9], org[3], d[3], p_B[3];
    mbs_get_body_transform(sys, p.st, mk->body, R, org);
    for (int k = 0; k < 3; k++) d[k] = p.avg[3 * j + k] - org[k];
    for (int k = 0; k < 3; k++) p_B[k] = R[k] * d[0] + R[3 + k] * d[1] + R[6 + k] * d[2];
    if (mbs_scale_model_set_marker(sm, mk->name, p_B, &err)) goto msg;
    moved++;
  }
  LOG(o, "moved %d markers of the model to the static pose\n", moved);
  mbs_setup_warn_unused_in(s, mp, o->log);
  if (out_model) {
    if (make_parent_dirs(out_model) || mbs_scale_model_write(sm, out_model, &err)) goto msg;
    LOG(o, "wrote %s\n", out_model);
  }
  if (out_markers) {
    if (make_parent_dirs(out_markers) || mbs_scale_model_write_markers(sm, out_markers, &err))
      goto msg;
    LOG(o, "wrote %s\n", out_markers);
  }
  if (out_motion) {
    p.nlabels = 1 + 2 * ncoord;
    p.labels = calloc((size_t)p.nlabels, sizeof(char*));
    if (!p.labels) {
      p.nlabels = 0;
      goto oom;
    }
    int ok = (p.labels[0] = strdup("time")) != NULL;
    for (int i = 0; ok && i < ncoord; i++) {
      const mbs_osim_coordinate* c = mbs_osim_coordinate_info(p.m, i);
      ok = (p.labels[1 + i] = mbs_format_string("/jointset/%s/%s/value", c->joint, c->name)) &&
           (p.labels[1 + ncoord + i] =
                mbs_format_string("/jointset/%s/%s/speed", c->joint, c->name));
    }
    if (!ok) goto oom;
    if (mbs_table_create(&p.motion, "static pose", 1, p.nlabels,
                         (const char* const*)p.labels, &err))
      goto msg;
    p.motion->data[0] = t[0];
    mbs_osim_get_coordinates(p.m, p.st, p.motion->data + 1, p.motion->data + 1 + ncoord);
    for (int i = 0; i < ncoord; i++) p.motion->data[1 + ncoord + i] = 0;
    if (make_parent_dirs(out_motion) || mbs_table_write_sto(p.motion, out_motion, 1, &err))
      goto msg;
    LOG(o, "wrote %s\n", out_motion);
  }
  rc = 0;
  goto done;
oom:
  LOG(o, "out of memory\n");
  goto done;
msg:
  LOG(o, "%s\n", err.code ? err.message : strerror(errno));
done:
  place_free(&p);
  mbs_setup_free(tasks.own);
  free(trc_path);
  free(coord_path);
  free(out_model);
  free(out_markers);
  free(out_motion);
  return rc;
}

//---------------------------------- the tool ---------------------------------------------------

int mbs_tool_scale(mbs_setup* s, const mbs_tool_options* o) {
  const char* path = mbs_setup_path(s);
  mbs_error err;
  mbs_error_clear(&err);
  double mass, height, age;
  if (mbs_setup_number(s, NULL, "mass", -1, &mass, &err) ||
      mbs_setup_number(s, NULL, "height", -1, &height, &err) ||
      mbs_setup_number(s, NULL, "age", -1, &age, &err)) {
    LOG(o, "%s\n", err.message);
    return 1;
  }
  mbs_setup_child(s, NULL, "notes");
  mbs_setup_child(s, NULL, "defaults");  // OpenSim 2's templates
  mbs_setup_node* gm = mbs_setup_child(s, NULL, "GenericModelMaker");
  mbs_setup_node* ms = mbs_setup_child(s, NULL, "ModelScaler");
  mbs_setup_node* mp = mbs_setup_child(s, NULL, "MarkerPlacer");
  mbs_setup_warn_unused(s, o->log);
  if (!gm) {
    LOG(o, "%s:%d: <%s> has no <GenericModelMaker> (the generic model to scale)\n", path,
        mbs_setup_line(mbs_setup_root(s)), mbs_setup_tool(s));
    return 1;
  }
  char* model_file = mbs_setup_file(s, gm, "model_file");
  char* marker_set = mbs_setup_file(s, gm, "marker_set_file");
  mbs_setup_warn_unused_in(s, gm, o->log);
  int rc = 1, apply_scaler = 0, apply_placer = 0;
  mbs_scale_model* sm = NULL;
  mbs_osim_options mo = {.rename_types = o->rename_types,
                         .nrename_types = o->nrename_types,
                         .param_values = o->param_values,
                         .nparam_values = o->nparam_values};
  if (!model_file) {
    LOG(o, "%s:%d: <GenericModelMaker> has no <model_file>\n", path, mbs_setup_line(gm));
    goto done;
  }
  if ((ms && mbs_setup_bool(s, ms, "apply", 1, &apply_scaler, &err)) ||
      (mp && mbs_setup_bool(s, mp, "apply", 1, &apply_placer, &err))) {
    LOG(o, "%s\n", err.message);
    goto done;
  }
  if (!(sm = mbs_scale_model_read(model_file, &err))) {
    LOG(o, "%s:%d: <model_file>: %s\n", path,
        mbs_setup_line(mbs_setup_child(s, gm, "model_file")), err.message);
    goto done;
  }
  LOG(o, "%s '%s': %s, %d bodies, mass %.6g kg; subject mass %g kg\n", mbs_setup_tool(s),
      mbs_setup_name(s), model_file, mbs_scale_model_nsegment(sm) - 1,
      mbs_scale_model_total_mass(sm), mass);
  if (marker_set) {
    int nrep, nadd;
    if (mbs_scale_model_update_markers(sm, marker_set, &nrep, &nadd, &err)) {
      LOG(o, "%s:%d: <marker_set_file>: %s\n", path,
          mbs_setup_line(mbs_setup_child(s, gm, "marker_set_file")), err.message);
      goto done;
    }
    LOG(o, "markers of %s: %d replaced, %d added\n", marker_set, nrep, nadd);
  }
  if (ms && apply_scaler) {
    if (model_scaler(s, o, ms, sm, &mo, mass)) goto done;
  } else {
    if (ms) mbs_setup_mark_all(s, ms);
    LOG(o, "ModelScaler %s: the model is not scaled\n", ms ? "not applied" : "absent");
  }
  if (mp && apply_placer) {
    if (marker_placer(s, o, mp, sm, &mo)) goto done;
  } else {
    if (mp) mbs_setup_mark_all(s, mp);
    LOG(o, "MarkerPlacer %s: the markers are not moved\n", mp ? "not applied" : "absent");
  }
  rc = 0;
done:
  mbs_scale_model_free(sm);
  free(model_file);
  free(marker_set);
  return rc;
}
