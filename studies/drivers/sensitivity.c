// What the sensitivity study types share (sensitivity.h).
#include "sensitivity.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/results.h"

static const char* const common_keys[] = {"method", "seed", "bootstrap", "confidence", "outputs",
                                          "trajectories"};
#define NCOMMON (int)(sizeof(common_keys) / sizeof(common_keys[0]))

int sens_read_common(const mbs_spec_section* s, const char* const* keys, int nkeys,
                     sens_common* c, mbs_error* err) {
  const char* all[32];
  int n = 0;
  for (int i = 0; i < NCOMMON; i++) all[n++] = common_keys[i];
  for (int i = 0; i < nkeys && n < 32; i++) all[n++] = keys[i];
  int rc = mbs_spec_section_keys(s, all, n, err);
  long seed = 0, nboot = 0;
  if (!rc) rc = mbs_spec_section_integer(s, "seed", 1, 0, LONG_MAX, &seed, err);
  if (!rc) rc = mbs_spec_section_integer(s, "bootstrap", 100, 0, 100000, &nboot, err);
  if (!rc)
    rc = mbs_spec_section_number(s, "confidence", 0.95, 0, 1, 1, 1, &c->confidence, err);
  if (!rc && mbs_spec_section_has(s, "outputs"))
    rc = mbs_spec_section_names(s, "outputs", &c->outputs, &c->noutputs, err);
  if (!rc && mbs_spec_section_has(s, "trajectories"))
    rc = mbs_spec_section_names(s, "trajectories", &c->trajectories, &c->ntrajectories, err);
  c->seed = (uint64_t)seed;
  c->nboot = (int)nboot;
  return rc;
}

void sens_free_common(sens_common* c) {
  for (int i = 0; i < c->noutputs; i++) free(c->outputs[i]);
  free(c->outputs);
  for (int i = 0; i < c->ntrajectories; i++) free(c->trajectories[i]);
  free(c->trajectories);
  c->outputs = c->trajectories = NULL;
  c->noutputs = c->ntrajectories = 0;
}

static const mbs_spec_section* section_of(const mbs_plan* P) {
  return mbs_spec_find_section(P->spec, "sensitivity");
}

int sens_plan_common(sens_common* c, mbs_plan* P, int need_dist, const char* what,
                     mbs_error* err) {
  const mbs_spec_section* s = section_of(P);
  c->first = P->naxes;
  c->D = P->np - P->naxes;
  if (c->D < 1)
    return mbs_plan_fail(err, MBS_ERR_ARGUMENT, P->spec, s->line,
                         "sensitivity: no parameters to vary (give them under parameters:)");
  if (need_dist) {
    int rc = mbs_plan_require_distributions(P, what, err);
    if (rc) return rc;
  }
  // trajectories analyzed per frame: recorded ones
  for (int i = 0; i < c->ntrajectories; i++) {
    int found = 0;
    for (int q = 0; q < P->nquant && !found; q++)
      found = !P->quant[q].hidden && !strcmp(P->quant[q].name, c->trajectories[i]);
    if (!found)
      return mbs_spec_section_fail(s, "trajectories", MBS_ERR_ARGUMENT, err,
                                   "'%s' is not among the recorded trajectories "
                                   "(outputs.trajectories)", c->trajectories[i]);
  }
  return MBS_OK;
}

// checked once the scalars are planned (the driver's plan runs before): at the finish
static int check_outputs(const sens_common* c, const mbs_plan* P, mbs_error* err) {
  const mbs_spec_section* s = section_of(P);
  for (int i = 0; i < c->noutputs; i++)
    if (mbs_plan_find_scalar(P, c->outputs[i]) < 0)
      return mbs_spec_section_fail(s, "outputs", MBS_ERR_ARGUMENT, err,
                                   "'%s' is not a scalar of the study", c->outputs[i]);
  if (P->nscal == 0 && c->ntrajectories == 0)
    return mbs_spec_section_fail(s, NULL, MBS_ERR_ARGUMENT, err,
                                 "the study has no scalar outputs to analyze (outputs.scalars) "
                                 "and no trajectories are named (sensitivity.trajectories)");
  return MBS_OK;
}

void sens_fixed_axes(const sens_common* c, const mbs_plan* P, double* params) {
  for (int j = 0; j < c->first; j++) params[j] = P->dist[j].values[0];
}

static int write_arrays(mbs_results* r, const char* group, const mbs_plan* P,
                        const sens_common* c, const sens_array* arrays, int narrays,
                        double* const* out, int lead, const long* lead_dims,
                        const char* out_units, long used, mbs_error* err) {
  int rc = MBS_OK;
  for (int k = 0; k < narrays && rc == MBS_OK; k++) {
    long dims[5];
    int rank = 0;
    for (int i = 0; i < lead; i++) dims[rank++] = lead_dims[i];
    dims[rank++] = c->D;
    if (arrays[k].square) dims[rank++] = c->D;
    char name[1200];
    snprintf(name, sizeof(name), "%s/%s", group, arrays[k].name);
    rc = mbs_results_write(r, name, rank, dims, out[k],
                           arrays[k].output_units ? out_units : arrays[k].units, err);
    // the parameter axes carry the parameter names
    for (int a = lead; rc == MBS_OK && a < rank; a++)
      rc = mbs_results_attach(r, name, a, "/sensitivity/parameter_names", "parameter", err);
    if (rc == MBS_OK && lead == 2) {
      rc = mbs_results_attach(r, name, 0, "/time", "time", err);
    }
  }
  (void)P;
  if (rc == MBS_OK) {
    char used_s[32];
    snprintf(used_s, sizeof(used_s), "%ld", used);
    rc = mbs_results_attribute(r, group, "samples_used", used_s, err);
  }
  return rc;
}

static void set_nan(double* v, size_t n) {
  for (size_t i = 0; i < n; i++) v[i] = NAN;
}

int sens_write(const char* path, const mbs_plan* P, const sens_common* c, const char* method,
               const char* const* attr, int nattr, const sens_array* arrays, int narrays,
               sens_analyze_fn fn, const void* self, mbs_error* err) {
  int rc = check_outputs(c, P, err);
  if (rc) return rc;
  mbs_results* r = mbs_results_open(path, err);
  if (!r) return err->code;
  const long S = P->nsamples;
  const int D = c->D;
  double* code = NULL;
  double* y = NULL;
  double* outbuf = NULL;
  double* block = NULL;
  double* big = NULL;
  long dims[4];
  int rank;
  size_t per = 0;  // values per analysis over all arrays
  for (int k = 0; k < narrays; k++) per += arrays[k].square ? (size_t)D * D : (size_t)D;
  double* out[16];
  rc = mbs_results_group(r, "sensitivity", 1, err);
  if (!rc) rc = mbs_results_attribute(r, "/sensitivity", "method", method, err);
  for (int i = 0; i + 1 < nattr && !rc; i += 2)
    rc = mbs_results_attribute(r, "/sensitivity", attr[i], attr[i + 1], err);
  if (!rc) {
    const char* names[MBS_SOBOL_MAX_DIM * 4];
    const char* units[MBS_SOBOL_MAX_DIM * 4];
    for (int j = 0; j < D && j < MBS_SOBOL_MAX_DIM * 4; j++) {
      names[j] = P->par[c->first + j].name;
      units[j] = P->par[c->first + j].unit ? P->par[c->first + j].unit : "";
    }
    rc = mbs_results_strings(r, "/sensitivity/parameter_names", D, names, 1, err);
    if (!rc) rc = mbs_results_strings(r, "/sensitivity/parameter_units", D, units, 0, err);
  }
  if (!rc) rc = mbs_results_read(r, "/status/code", &code, dims, &rank, err);
  outbuf = malloc(per * sizeof(double) + 8);
  y = malloc((size_t)S * sizeof(double) + 8);
  if (!rc && (!outbuf || !y)) rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
  for (int k = 0, off = 0; k < narrays && outbuf; k++) {
    out[k] = outbuf + off;
    off += arrays[k].square ? D * D : D;
  }
  // the scalars
  for (int i = 0; i < P->nscal && !rc; i++) {
    const char* name = P->scal[i].name;
    int wanted = c->noutputs == 0;
    for (int k = 0; k < c->noutputs && !wanted; k++) wanted = !strcmp(c->outputs[k], name);
    if (!wanted) continue;
    char ds[1100], group[1100];
    snprintf(ds, sizeof(ds), "/scalars/%s", name);
    snprintf(group, sizeof(group), "/sensitivity/scalars/%s", name);
    double* v = NULL;
    rc = mbs_results_read(r, ds, &v, dims, &rank, err);
    if (rc) break;
    for (long s = 0; s < S; s++) y[s] = code[s] == 0 ? v[s] : NAN;
    free(v);
    long used = 0;
    set_nan(outbuf, per);
    mbs_error ae;
    mbs_error_clear(&ae);
    const int arc = fn(self, P, y, out, &used, &ae);
    if (arc == MBS_ERR_NO_MEMORY) {
      *err = ae;
      rc = arc;
      break;
    }
    rc = mbs_results_group(r, group, 1, err);
    if (!rc)
      rc = write_arrays(r, group, P, c, arrays, narrays, out, 0, NULL, P->scal[i].unit, used,
                        err);
    if (!rc && arc != MBS_OK)  // e.g. too few good samples: NaN indices and the reason
      rc = mbs_results_attribute(r, group, "analysis_failed", ae.message, err);
  }
  // trajectories, frame by frame
  for (int t = 0; t < c->ntrajectories && !rc; t++) {
    const mbs_quantity_plan* q = NULL;
    for (int k = 0; k < P->nquant; k++)
      if (!P->quant[k].hidden && !strcmp(P->quant[k].name, c->trajectories[t])) q = &P->quant[k];
    if (!q) continue;
    const long F = P->nframes, C = q->ncomp;
    const long nf = 8;  // frames read at a time
    free(block);
    free(big);
    block = malloc((size_t)(S * nf * C) * sizeof(double) + 8);
    big = malloc((size_t)(F * C) * per * sizeof(double) + 8);
    if (!block || !big) {
      rc = MBS_FAIL(err, MBS_ERR_NO_MEMORY, "study", "out of memory");
      break;
    }
    char ds[1100], group[1100];
    snprintf(ds, sizeof(ds), "/trajectories/%s", q->name);
    snprintf(group, sizeof(group), "/sensitivity/trajectories/%s", q->name);
    long used_min = LONG_MAX;
    for (long f0 = 0; f0 < F && !rc; f0 += nf) {
      const long n = F - f0 < nf ? F - f0 : nf;
      rc = mbs_results_read_frames(r, ds, f0, n, block, err);
      for (long f = 0; f < n && !rc; f++)
        for (long comp = 0; comp < C && !rc; comp++) {
          for (long s = 0; s < S; s++)
            y[s] = code[s] == 0 ? block[(s * n + f) * C + comp] : NAN;
          long used = 0;
          set_nan(outbuf, per);
          mbs_error ae;
          const int arc = fn(self, P, y, out, &used, &ae);
          if (arc == MBS_ERR_NO_MEMORY) {
            *err = ae;
            rc = arc;
          }
          if (used < used_min) used_min = used;
          // into frames × components × (D or D × D), array by array
          for (int k = 0, off = 0; k < narrays; k++) {
            const long m = arrays[k].square ? (long)D * D : D;
            double* dst = big + (size_t)off * F * C + ((size_t)(f0 + f) * C + comp) * m;
            memcpy(dst, out[k], (size_t)m * sizeof(double));
            off += (int)m;
          }
        }
    }
    if (rc) break;
    rc = mbs_results_group(r, group, 1, err);
    double* arr[16];
    for (int k = 0, off = 0; k < narrays; k++) {
      arr[k] = big + (size_t)off * F * C;
      off += arrays[k].square ? D * D : D;
    }
    const long lead[2] = {F, C};
    if (!rc)
      rc = write_arrays(r, group, P, c, arrays, narrays, arr, 2, lead, q->unit,
                        used_min == LONG_MAX ? 0 : used_min, err);
    char comps[1200];
    snprintf(comps, sizeof(comps), "/trajectories/%s_components", q->name);
    for (int k = 0; k < narrays && !rc; k++) {
      char name[1200];
      snprintf(name, sizeof(name), "%s/%s", group, arrays[k].name);
      rc = mbs_results_attach(r, name, 1, comps, "component", err);
    }
  }
  free(code);
  free(y);
  free(outbuf);
  free(block);
  free(big);
  mbs_error cerr;
  const int crc = mbs_results_close(r, &cerr);
  if (!rc && crc) *err = cerr;
  return rc ? rc : crc;
}
