// `mbstudy demo`: a 3-D chain of links on ball joints, released from the horizontal with a
// sideways spin, simulated by mbstudy's own engine; writes OpenSim storage files and a picture.
#include "demo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mbs/mbs.h"
#include "mbs/sto.h"
#include "progress.h"
#include "svg_plot.h"

void mbs_demo_options_default(mbs_demo_options* o) {
  o->out_dir = "out/demo";
  o->links = 5;
  o->duration = 5.0;
  o->integrator = "rk_merson";
  o->accuracy = 1e-6;
  o->step = 1e-4;
  o->report_interval = 0.01;
}

static int make_dir(const char* path, mbs_error* err) {
  char buf[1024];
  snprintf(buf, sizeof(buf), "%s", path);
  for (char* p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create folder: %s", buf, strerror(errno));
    *p = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST)
    return MBS_FAIL(err, MBS_ERR_IO, path, "%s: cannot create folder: %s", buf, strerror(errno));
  return MBS_OK;
}

// the chain: n links of length L along x at q = 0, ball joints, gravity along -y
static mbs_system* build_chain(int n, double L, mbs_error* err) {
  mbs_system* sys = mbs_system_create("hanging_chain");
  if (!sys) {
    MBS_FAIL(err, MBS_ERR_NO_MEMORY, "demo", "demo: out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof(name), "link%d", i + 1);
    mbs_body_spec s = mbs_body_spec_default(name, i, MBS_MOB_BALL);
    s.mass = 1.0;
    s.com[0] = L / 2;
    s.inertia[0] = 1e-4;                       // thin rod about its own axis
    s.inertia[1] = s.inertia[2] = s.mass * L * L / 12;
    if (i > 0) s.X_PF.p[0] = L;
    if (mbs_system_add_body(sys, &s) < 0) break;
  }
  const double g[3] = {0, -9.81, 0};
  if (mbs_system_error(sys)->code || mbs_system_add_gravity(sys, g) < 0 ||
      mbs_system_finalize(sys) != 0) {
    *err = *mbs_system_error(sys);
    mbs_system_destroy(sys);
    return NULL;
  }
  return sys;
}

typedef struct growing {
  double* v;
  size_t n, cap;
} growing;

static int push(growing* g, double x) {
  if (g->n == g->cap) {
    const size_t cap = g->cap ? 2 * g->cap : 1024;
    double* v = realloc(g->v, cap * sizeof(double));
    if (!v) return 0;
    g->v = v;
    g->cap = cap;
  }
  g->v[g->n++] = x;
  return 1;
}

typedef struct demo_run {
  mbs_sto_writer *ws, *we;
  double* row;
  int nq, nu, n;
  double tip_B[3];
  growing t, tx, ty, tz, ke, pe, et;
  double E0, drift;
  long reports;
  mbs_progress prog;
  int rc;
  mbs_error* err;
} demo_run;

// one output row per report time: q, u, tip position, energies
static int demo_report(const mbs_system* sys, mbs_state* st, void* user) {
  demo_run* r = user;
  double K, P, tip[3];
  int rc;
  if ((rc = mbs_calc_kinetic_energy(sys, st, &K)) || (rc = mbs_calc_potential_energy(sys, st, &P)) ||
      (rc = mbs_get_station_location(sys, st, r->n, r->tip_B, tip))) {
    *r->err = *mbs_state_error(st);
    return r->rc = rc;
  }
  if (r->reports == 0) r->E0 = K + P;
  r->drift = fmax(r->drift, fabs(K + P - r->E0));
  double* row = r->row;
  row[0] = mbs_state_time(st);
  memcpy(row + 1, mbs_state_q(st), (size_t)r->nq * sizeof(double));
  memcpy(row + 1 + r->nq, mbs_state_u(st), (size_t)r->nu * sizeof(double));
  memcpy(row + 1 + r->nq + r->nu, tip, 3 * sizeof(double));
  const double erow[4] = {row[0], K, P, K + P};
  if ((rc = mbs_sto_write_row(r->ws, row, r->err)) || (rc = mbs_sto_write_row(r->we, erow, r->err)))
    return r->rc = rc;
  if (!push(&r->t, row[0]) || !push(&r->tx, tip[0]) || !push(&r->ty, tip[1]) ||
      !push(&r->tz, tip[2]) || !push(&r->ke, K) || !push(&r->pe, P) || !push(&r->et, K + P))
    return r->rc = MBS_FAIL(r->err, MBS_ERR_NO_MEMORY, "demo", "demo: out of memory");
  mbs_progress_update(&r->prog, ++r->reports);
  return 0;
}

int mbs_demo_run(const mbs_demo_options* o, FILE* log, mbs_error* err) {
  if (o->links < 1 || o->links > 1000)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "demo", "demo: --links must be 1..1000, not %d", o->links);
  const int itype = mbs_integrator_from_name(o->integrator ? o->integrator : "");
  if (itype < 0)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "demo",
                    "demo: unknown integrator '%s' (rk_merson, dormand_prince, cvode_bdf, euler, "
                    "rk4, semi_explicit_euler, verlet, ros34pw2)",
                    o->integrator ? o->integrator : "");
  const int controlled = mbs_integrator_is_error_controlled((mbs_integrator_type)itype);
  if (!(o->duration > 0) || !(o->report_interval > 0) || !(o->report_interval <= o->duration))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "demo",
                    "demo: need duration > 0 and 0 < report interval <= duration");
  if (controlled && !(o->accuracy > 0 && o->accuracy < 1))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "demo", "demo: --accuracy must be in (0, 1), not %g",
                    o->accuracy);
  if (!controlled && !(o->step > 0 && o->step <= o->report_interval))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "demo",
                    "demo: need 0 < step <= report interval for a fixed-step integrator");
  int rc = make_dir(o->out_dir, err);
  if (rc) return rc;
  const double L = 0.3;
  mbs_system* sys = build_chain(o->links, L, err);
  if (!sys) return err->code ? err->code : MBS_ERR_INTERNAL;
  mbs_state* st = mbs_state_create(sys);
  const int nq = mbs_system_nq(sys), nu = mbs_system_nu(sys), n = o->links;
  // released from the horizontal with a spin about the vertical at the root
  mbs_state_upd_u(st)[1] = 1.5;

  // files: states (q, u, tip position) and energies
  char path_states[1200], path_energy[1200], path_svg[1200];
  snprintf(path_states, sizeof(path_states), "%s/chain_states.sto", o->out_dir);
  snprintf(path_energy, sizeof(path_energy), "%s/chain_energy.sto", o->out_dir);
  snprintf(path_svg, sizeof(path_svg), "%s/chain.svg", o->out_dir);
  const int ncol = 1 + nq + nu + 3;
  char** labels = calloc((size_t)ncol, sizeof(char*));
  char* text = calloc((size_t)ncol, 32);
  int c = 0;
  labels[c++] = "time";
  for (int b = 1; b <= n; b++)
    for (int k = 0; k < 4; k++) {
      labels[c] = text + 32 * c;
      snprintf(labels[c], 32, "link%d_quat_%c", b, "wxyz"[k]);
      c++;
    }
  for (int b = 1; b <= n; b++)
    for (int k = 0; k < 3; k++) {
      labels[c] = text + 32 * c;
      snprintf(labels[c], 32, "link%d_w_%c", b, "xyz"[k]);
      c++;
    }
  labels[c++] = "tip_x";
  labels[c++] = "tip_y";
  labels[c++] = "tip_z";
  const char* elabels[4] = {"time", "kinetic", "potential", "total"};
  mbs_sto_writer* ws = mbs_sto_open(path_states, "hanging_chain_states", ncol,
                                    (const char* const*)labels, 0, err);
  mbs_sto_writer* we = ws ? mbs_sto_open(path_energy, "hanging_chain_energy", 4, elabels, 0, err) : NULL;
  double* row = calloc((size_t)ncol, sizeof(double));
  demo_run r = {.ws = ws, .we = we, .row = row, .nq = nq, .nu = nu, .n = n,
                .tip_B = {L, 0, 0}, .err = err};
  mbs_simulation_result res = {0};
  if (!ws || !we || !row) goto done;
  mbs_simulation_options so;
  mbs_simulation_options_default(&so);
  so.integrator = (mbs_integrator_type)itype;
  so.integ.accuracy = o->accuracy;
  so.integ.fixed_step = o->step;
  so.report_interval = o->report_interval;
  if (controlled)
    fprintf(log, "mbstudy demo: %d-link chain on ball joints, %g s, %s at accuracy %g\n", n,
            o->duration, mbs_integrator_name(so.integrator), o->accuracy);
  else
    fprintf(log, "mbstudy demo: %d-link chain on ball joints, %g s, %s at fixed step %g s\n", n,
            o->duration, mbs_integrator_name(so.integrator), o->step);
  mbs_progress_start(&r.prog, log, "reports", (long)(o->duration / o->report_interval + 0.5) + 1);
  rc = mbs_simulate(sys, st, o->duration, &so, NULL, 0, demo_report, &r, &res);
  mbs_progress_finish(&r.prog);
  if (rc) *err = *mbs_state_error(st);
  else if (r.rc) rc = r.rc;  // the report function stopped the run: its error is in *err
  if (rc == MBS_OK) {
    char note[256];
    snprintf(note, sizeof(note),
             "%d links, 0.3 m, 1 kg each, ball joints; released horizontal with 1.5 rad/s about "
             "the vertical. Energy drift %.2g J of %.3g J.", n, r.drift, fabs(r.E0));
    const svg_series top[1] = {{"tip", r.tx.v, r.tz.v, (int)r.t.n, "#1f77b4"}};
    const svg_series side[1] = {{"tip", r.tx.v, r.ty.v, (int)r.t.n, "#d62728"}};
    const svg_series en[3] = {{"kinetic", r.t.v, r.ke.v, (int)r.t.n, "#ff7f0e"},
                              {"potential", r.t.v, r.pe.v, (int)r.t.n, "#2ca02c"},
                              {"total (conserved)", r.t.v, r.et.v, (int)r.t.n, "#000000"}};
    const svg_panel panels[3] = {
        {"Tip path seen from above", "x (m)", "z (m)", top, 1, 1},
        {"Tip path seen from the side", "x (m)", "y, up (m)", side, 1, 1},
        {"Energy", "time (s)", "energy (J)", en, 3, 0}};
    rc = svg_write(path_svg, "mbstudy demo: a falling, swinging chain", note, panels, 3, err);
  }
  if (rc == MBS_OK)
    fprintf(log,
            "wrote %s (OpenSim storage: quaternions, angular velocities, tip position)\n"
            "wrote %s (kinetic, potential, total energy)\n"
            "wrote %s (picture: open it in a web browser)\n"
            "energy drift over the run: %.3g J (%.2g of |E|); %ld steps (%ld rejected), %ld "
            "forward-dynamics evaluations\n",
            path_states, path_energy, path_svg, r.drift, r.drift / fmax(fabs(r.E0), 1e-300),
            res.integrator.steps, res.integrator.rejected, res.integrator.evaluations);
  else if (r.reports > 0)
    fprintf(log, "stopped at t = %g s; the %ld rows up to there are in %s and %s\n",
            mbs_state_time(st), r.reports, path_states, path_energy);
done:;
  int rc2 = MBS_OK;
  if (ws) rc2 = mbs_sto_close(ws, err);
  if (we && !rc2) rc2 = mbs_sto_close(we, err);
  else if (we) mbs_sto_close(we, NULL);
  if (!ws || !we || !row) rc = err->code ? err->code : MBS_ERR_NO_MEMORY;
  free(r.t.v); free(r.tx.v); free(r.ty.v); free(r.tz.v); free(r.ke.v); free(r.pe.v); free(r.et.v);
  free(row);
  free(labels);
  free(text);
  mbs_state_destroy(st);
  mbs_system_destroy(sys);
  return rc ? rc : rc2;
}
