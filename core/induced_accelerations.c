// Induced accelerations (mbs/induced_accelerations.h): each contributor's generalized forces,
// their constrained response, and the bodies' and the system's mass-center accelerations.
#include "mbs/induced_accelerations.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics_split.h"
#include "mbs/constraint.h"
#include "mbs/dynamics.h"
#include "mbs/force.h"
#include "mbs/path.h"
#include "model_impl.h"

enum { CK_TOTAL = 0, CK_ACTUATOR, CK_GRAVITY, CK_VELOCITY, CK_OTHER };

struct mbs_ia {
  const mbs_system* sys;
  int nu, nb;
  mbs_ia_mode mode;
  int potentials;
  double threshold;
  int ncontact;
  mbs_ia_contact* contacts;
  int* contact_on;
  double* Gx;        // 6 ncontact x nu: the contact rows
  double* cx;        // 6 ncontact: their speeds' terms (G_x u' + c_x = 0)
  int mx;            // rows in use
  double* Vcol;      // nu x 6 nbody: J e_i, the bodies' velocities for each unit speed
  int nc;            // contributors
  int* kind;         // nc
  int* force;        // nc: actuator's force element, else -1
  char** name;       // nc (actuator names point into the System)
  int nother;        // other force elements
  mbs_state* ws;     // the State at its speeds
  mbs_state* ws0;    // the same at zero speeds (OpenSim mode)
  double* F;         // 6 nb
  double* Fs;        // 6 nb
  double* fm;        // nu
  double* fs;        // nu
  double* g;         // nu
  double* gsum;      // nu: "other" at zero speeds (OpenSim mode)
  double* C;         // nu
  double* e;         // mcon
  double* zero;      // nu
  double* Acor;      // 6 nb: body accelerations from the speeds alone (u' = 0)
  double* udot;      // nc x nu
  double* A;         // nc x 6 nb
  double* com;       // nc x 3
  mbs_cresp* cr;
};

void mbs_ia_options_default(mbs_ia_options* o) {
  memset(o, 0, sizeof(*o));
  o->mode = MBS_IA_SUPERPOSITION;
  o->force_threshold = 6.0;
}

void mbs_ia_free(mbs_ia* ia) {
  if (!ia) return;
  free(ia->contacts);
  free(ia->contact_on);
  free(ia->Gx);
  free(ia->cx);
  free(ia->Vcol);
  free(ia->kind);
  free(ia->force);
  free(ia->name);
  mbs_state_destroy(ia->ws);
  mbs_state_destroy(ia->ws0);
  free(ia->F); free(ia->Fs); free(ia->fm); free(ia->fs); free(ia->g); free(ia->gsum);
  free(ia->C); free(ia->e); free(ia->zero); free(ia->Acor); free(ia->udot); free(ia->A);
  free(ia->com);
  mbs_cresp_free(ia->cr);
  free(ia);
}

static int is_other(const mbs_force_desc* fd) {
  return fd->control < 0 && fd->type != MBS_FORCE_GRAVITY && fd->type != MBS_FORCE_EXTERNAL;
}

int mbs_ia_create(const mbs_system* sys, const mbs_ia_options* opt, mbs_ia** out,
                  mbs_error* err) {
  if (out) *out = NULL;
  if (!sys || !out) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "%s: no system or output", __func__);
  const char* sn = mbs_system_name(sys);
  if (!mbs_system_is_finalized(sys))
    return MBS_FAIL(err, MBS_ERR_NOT_FINALIZED, sn, "%s: induced accelerations need a "
                    "finalized system", sn);
  mbs_ia_options o;
  if (opt) o = *opt;
  else mbs_ia_options_default(&o);
  if (o.mode != MBS_IA_SUPERPOSITION && o.mode != MBS_IA_OPENSIM)
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "InducedAccelerations",
                    "InducedAccelerations: unknown mode %d", (int)o.mode);
  if (!(o.force_threshold >= 0))
    return MBS_FAIL(err, MBS_ERR_ARGUMENT, "InducedAccelerations",
                    "InducedAccelerations: force_threshold %g must be a number >= 0",
                    o.force_threshold);
  for (int k = 0; k < o.ncontact; k++) {
    const mbs_ia_contact* c = &o.contacts[k];
    if (c->external_force < 0 || c->external_force >= sys->nforce ||
        sys->force[c->external_force].type != MBS_FORCE_EXTERNAL)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, "InducedAccelerations", "InducedAccelerations: "
                      "contact %d: force %d is not an external force", k, c->external_force);
    if (c->type != MBS_IA_CONTACT_POINT && c->type != MBS_IA_CONTACT_WELD &&
        c->type != MBS_IA_CONTACT_ROLLING)
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, "InducedAccelerations", "InducedAccelerations: "
                      "contact %d: unknown constraint type %d", k, (int)c->type);
    if (c->type == MBS_IA_CONTACT_ROLLING &&
        !(mbs_v3_norm(c->normal) > 0 && isfinite(mbs_v3_norm(c->normal))))
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, sys->force[c->external_force].name,
                      "InducedAccelerations: the rolling contact replacing '%s' needs a "
                      "surface normal", sys->force[c->external_force].name);
  }
  mbs_ia* ia = calloc(1, sizeof(*ia));
  if (!ia) return MBS_FAIL(err, MBS_ERR_NO_MEMORY, sn, "%s: out of memory", sn);
  ia->sys = sys;
  ia->nu = sys->nu;
  ia->nb = sys->nbody;
  ia->mode = o.mode;
  ia->potentials = o.compute_potentials_only != 0;
  ia->threshold = o.force_threshold;
  ia->ncontact = o.ncontact;
  for (int i = 0; i < sys->nforce; i++) ia->nother += is_other(&sys->force[i]);
  const int nctrl = sys->ncontrol;
  const int has_other = o.mode == MBS_IA_SUPERPOSITION && ia->nother > 0;
  ia->nc = (ia->potentials ? 0 : 1) + nctrl + 2 + has_other;
  const size_t nu = (size_t)ia->nu, nb = (size_t)ia->nb, nc = (size_t)ia->nc;
  ia->contacts = calloc((size_t)(o.ncontact > 0 ? o.ncontact : 1), sizeof(mbs_ia_contact));
  ia->contact_on = calloc((size_t)(o.ncontact > 0 ? o.ncontact : 1), sizeof(int));
  const size_t nk = (size_t)(o.ncontact > 0 ? o.ncontact : 1);
  ia->Gx = calloc(6 * nk * (size_t)(sys->nu > 0 ? sys->nu : 1), sizeof(double));
  ia->cx = calloc(6 * nk, sizeof(double));
  ia->Vcol = o.ncontact > 0 ? calloc((size_t)sys->nu * 6 * (size_t)sys->nbody + 1, sizeof(double))
                            : calloc(1, sizeof(double));
  ia->kind = calloc(nc, sizeof(int));
  ia->force = calloc(nc, sizeof(int));
  ia->name = calloc(nc, sizeof(char*));
  ia->ws = mbs_state_create(sys);
  ia->ws0 = o.mode == MBS_IA_OPENSIM ? mbs_state_create(sys) : NULL;
  ia->F = calloc(6 * nb, sizeof(double));
  ia->Fs = calloc(6 * nb, sizeof(double));
  ia->fm = calloc(nu + 1, sizeof(double));
  ia->fs = calloc(nu + 1, sizeof(double));
  ia->g = calloc(nu + 1, sizeof(double));
  ia->gsum = calloc(nu + 1, sizeof(double));
  ia->C = calloc(nu + 1, sizeof(double));
  ia->e = calloc((size_t)sys->mcon + 6 * nk + 1, sizeof(double));
  ia->zero = calloc(nu + 1, sizeof(double));
  ia->Acor = calloc(6 * nb, sizeof(double));
  ia->udot = calloc(nc * nu + 1, sizeof(double));
  ia->A = calloc(nc * 6 * nb, sizeof(double));
  ia->com = calloc(nc * 3, sizeof(double));
  ia->cr = mbs_cresp_create(ia->nu, sys->mcon + 6 * o.ncontact);
  if (!ia->contacts || !ia->contact_on || !ia->Gx || !ia->cx || !ia->Vcol || !ia->kind || !ia->force || !ia->name ||
      !ia->ws || (o.mode == MBS_IA_OPENSIM && !ia->ws0) || !ia->F || !ia->Fs || !ia->fm || !ia->fs ||
      !ia->g || !ia->gsum || !ia->C || !ia->e || !ia->zero || !ia->Acor || !ia->udot ||
      !ia->A || !ia->com || !ia->cr) {
    mbs_ia_free(ia);
    return MBS_FAIL(err, MBS_ERR_NO_MEMORY, sn, "%s: out of memory", sn);
  }
  if (o.ncontact > 0)
    memcpy(ia->contacts, o.contacts, (size_t)o.ncontact * sizeof(mbs_ia_contact));
  int c = 0;
  if (!ia->potentials) {
    ia->kind[c] = CK_TOTAL;
    ia->force[c] = -1;
    ia->name[c++] = "total";
  }
  for (int k = 0; k < nctrl; k++) {
    const int f = sys->control_force[k];
    ia->kind[c] = CK_ACTUATOR;
    ia->force[c] = f;
    ia->name[c++] = sys->force[f].name;
  }
  ia->kind[c] = CK_GRAVITY;
  ia->force[c] = -1;
  ia->name[c++] = "gravity";
  ia->kind[c] = CK_VELOCITY;
  ia->force[c] = -1;
  ia->name[c++] = "velocity";
  if (has_other) {
    ia->kind[c] = CK_OTHER;
    ia->force[c] = -1;
    ia->name[c++] = "other_forces";
  }
  *out = ia;
  return MBS_OK;
}

int mbs_ia_ncontributor(const mbs_ia* ia) { return ia ? ia->nc : 0; }
const char* mbs_ia_contributor_name(const mbs_ia* ia, int c) {
  return ia && c >= 0 && c < ia->nc ? ia->name[c] : NULL;
}
int mbs_ia_contributor_force(const mbs_ia* ia, int c) {
  return ia && c >= 0 && c < ia->nc ? ia->force[c] : -1;
}
const double* mbs_ia_udot(const mbs_ia* ia, int c) {
  return ia && c >= 0 && c < ia->nc ? ia->udot + (size_t)c * ia->nu : NULL;
}
const double* mbs_ia_body_acceleration(const mbs_ia* ia, int c) {
  return ia && c >= 0 && c < ia->nc ? ia->A + (size_t)c * 6 * ia->nb : NULL;
}
const double* mbs_ia_com_acceleration(const mbs_ia* ia, int c) {
  return ia && c >= 0 && c < ia->nc ? ia->com + (size_t)c * 3 : NULL;
}
int mbs_ia_contact_on(const mbs_ia* ia, int k) {
  return ia && k >= 0 && k < ia->ncontact ? ia->contact_on[k] : 0;
}

static int ws_fail(mbs_ia* ia, mbs_state* ws, int rc, mbs_error* err) {
  const mbs_error* e = mbs_state_error(ws);
  if (e && e->code) {
    if (err) *err = *e;
    return e->code;
  }
  return MBS_FAIL(err, rc, mbs_system_name(ia->sys), "%s: induced accelerations failed (%s)",
                  mbs_system_name(ia->sys), mbs_status_text(rc));
}

// the contact rows G_x u' + c_x = 0 of the forces above the threshold (ws at Velocity, the
// speeds' share of the body accelerations in ia->Acor)
static int contact_rows(mbs_ia* ia, mbs_state* ws, mbs_error* err) {
  const mbs_system* sys = ia->sys;
  const int nu = ia->nu, nb = ia->nb;
  ia->mx = 0;
  int any = 0;
  for (int k = 0; k < ia->ncontact; k++) {
    const mbs_ia_contact* c = &ia->contacts[k];
    double Fg[3], Pg[3];
    int rc = mbs_get_external_force(sys, ws, c->external_force, NULL, Fg, Pg, NULL);
    if (rc) return ws_fail(ia, ws, rc, err);
    const double fn = mbs_v3_norm(Fg);
    if (!isfinite(fn) || !isfinite(mbs_v3_norm(Pg)))
      return MBS_FAIL(err, MBS_ERR_NAN, sys->force[c->external_force].name,
                      "external force '%s': not finite at t = %g",
                      sys->force[c->external_force].name, mbs_state_time(ws));
    ia->contact_on[k] = fn > ia->threshold;
    any |= ia->contact_on[k];
  }
  if (!any) return MBS_OK;
  // J e_i for every speed: the bodies' angular and origin velocities per unit speed
  for (int i = 0; i < nu; i++) {
    memset(ia->fs, 0, (size_t)nu * sizeof(double));
    ia->fs[i] = 1;
    int rc = mbs_calc_jacobian_times(sys, ws, ia->fs, ia->Vcol + (size_t)i * 6 * nb);
    if (rc) return ws_fail(ia, ws, rc, err);
  }
  for (int k = 0; k < ia->ncontact; k++) {
    if (!ia->contact_on[k]) continue;
    const mbs_ia_contact* c = &ia->contacts[k];
    const int b = sys->force[c->external_force].body1;
    double Pg[3], r[3];
    mbs_get_external_force(sys, ws, c->external_force, NULL, NULL, Pg, NULL);
    mbs_v3_sub(r, Pg, ws->X_GB[b].p);
    // the point's and the body's speeds' terms
    const double* w = ws->V_GB + 6 * b;
    const double* A0 = ia->Acor + 6 * b;
    double aP0[3], t[3], wr[3];
    mbs_v3_cross(t, A0, r);
    mbs_v3_add(aP0, A0 + 3, t);
    mbs_v3_cross(wr, w, r);
    mbs_v3_cross(t, w, wr);
    mbs_v3_add(aP0, aP0, t);
    // the directions of the rows (in Ground), linear ones on J_P, angular ones on J_w
    double dirs[6][3];
    int ang[6], nd = 0;
    double extra[6] = {0, 0, 0, 0, 0, 0};
    static const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
    if (c->type == MBS_IA_CONTACT_ROLLING) {
      double n[3], f[3];
      mbs_v3_scale(n, c->normal, 1 / mbs_v3_norm(c->normal));
      mbs_v3_copy(dirs[0], n), ang[0] = 0;
      mbs_v3_copy(dirs[1], ex), ang[1] = 0;
      mbs_v3_copy(dirs[2], ez), ang[2] = 0;
      mbs_v3_copy(dirs[3], n), ang[3] = 1;
      // ConstantAngle between Ground's x and the body axis f = x cross n: its speeds' term
      mbs_v3_cross(f, ex, n);
      extra[3] = mbs_v3_dot(ex, w) * mbs_v3_dot(f, w);
      nd = 4;
    } else {
      const double* e3[3] = {ex, ey, ez};
      for (int i = 0; i < 3; i++) mbs_v3_copy(dirs[nd], e3[i]), ang[nd++] = 0;
      if (c->type == MBS_IA_CONTACT_WELD)
        for (int i = 0; i < 3; i++) mbs_v3_copy(dirs[nd], e3[i]), ang[nd++] = 1;
    }
    for (int d = 0; d < nd; d++) {
      double* row = ia->Gx + (size_t)ia->mx * nu;
      for (int i = 0; i < nu; i++) {
        const double* V = ia->Vcol + (size_t)i * 6 * nb + 6 * b;
        double v[3];
        if (ang[d]) {
          mbs_v3_copy(v, V);
        } else {
          mbs_v3_cross(v, V, r);
          mbs_v3_add(v, v, V + 3);
        }
        row[i] = mbs_v3_dot(dirs[d], v);
      }
      ia->cx[ia->mx] = mbs_v3_dot(dirs[d], ang[d] ? A0 : aP0) + extra[d];
      ia->mx++;
    }
  }
  return MBS_OK;
}

// the generalized forces of one force element alone on ws, added to g
static int add_element(mbs_ia* ia, mbs_state* ws, int f, double* g) {
  mbs_split_force(ia->sys, ws, f, ia->F, ia->fm);
  int rc = mbs_split_generalized(ia->sys, ws, ia->F, ia->fm, ia->fs);
  if (rc) return rc;
  for (int i = 0; i < ia->nu; i++) g[i] += ia->fs[i];
  return MBS_OK;
}

// the other force elements (and the State's applied forces) on ws, added to g
static int add_others(mbs_ia* ia, mbs_state* ws, double* g) {
  const mbs_system* sys = ia->sys;
  int rc = mbs_split_generalized(sys, ws, ws->F_applied, ws->f_applied, ia->fs);
  if (rc) return rc;
  for (int i = 0; i < ia->nu; i++) g[i] += ia->fs[i];
  for (int f = 0; f < sys->nforce; f++)
    if (is_other(&sys->force[f]) && (rc = add_element(ia, ws, f, g))) return rc;
  return MBS_OK;
}

// a muscle's unit tension: its moment arms
static int add_unit_tension(mbs_ia* ia, mbs_state* ws, int f, double* g) {
  int rc = mbs_calc_path_moment_arms(ia->sys, ws, mbs_force_path(ia->sys, f), ia->fs);
  if (rc) return rc;
  for (int i = 0; i < ia->nu; i++) g[i] += ia->fs[i];
  return MBS_OK;
}

int mbs_ia_solve(mbs_ia* ia, const mbs_state* st, mbs_error* err) {
  if (!ia || !st) return MBS_FAIL(err, MBS_ERR_ARGUMENT, "", "%s: missing argument", __func__);
  const mbs_system* sys = ia->sys;
  const char* sn = mbs_system_name(sys);
  const int nu = ia->nu, nb = ia->nb;
  const double t = mbs_state_time(st);
  if (!isfinite(t)) return MBS_FAIL(err, MBS_ERR_ARGUMENT, sn, "%s: the time is not finite", sn);
  const double* q = mbs_state_q(st);
  const double* u = mbs_state_u(st);
  for (int i = 0; i < sys->nq; i++)
    if (!isfinite(q[i]))
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, sn, "induced accelerations at t = %g: coordinate "
                      "value %d is not finite", t, i);
  for (int i = 0; i < nu; i++)
    if (!isfinite(u[i]))
      return MBS_FAIL(err, MBS_ERR_ARGUMENT, sn, "induced accelerations at t = %g: speed %d "
                      "is not finite", t, i);
  mbs_state* ws = ia->ws;
  mbs_error_clear(&ws->err);
  int rc = mbs_state_copy(sys, ws, st);
  if (rc || (rc = mbs_realize_velocity(sys, ws))) return ws_fail(ia, ws, rc, err);
  mbs_calc_controls(sys, ws);
  mbs_state* w0 = NULL;
  if (ia->mode == MBS_IA_OPENSIM) {
    w0 = ia->ws0;
    mbs_error_clear(&w0->err);
    if ((rc = mbs_state_copy(sys, w0, ws))) return ws_fail(ia, w0, rc, err);
    memset(mbs_state_upd_u(w0), 0, (size_t)nu * sizeof(double));
    if ((rc = mbs_realize_velocity(sys, w0))) return ws_fail(ia, w0, rc, err);
    mbs_calc_controls(sys, w0);
    memset(ia->gsum, 0, (size_t)nu * sizeof(double));
    if ((rc = add_others(ia, w0, ia->gsum))) return ws_fail(ia, w0, rc, err);
  }
  // the speeds' share of the body accelerations; the contacts' rows; the constraints
  mbs_body_accelerations(sys, ws, ia->zero, ia->Acor);
  if (ia->ncontact && (rc = contact_rows(ia, ws, err))) return rc;
  int m = 0;
  const int ms = ws->ncon_eq;
  if ((rc = mbs_cresp_prepare(ia->cr, sys, ws, ia->Gx, ia->mx, &m)) ||
      (rc = mbs_calc_bias_forces(sys, ws, ia->C)))
    return ws_fail(ia, ws, rc, err);
  for (int c = 0; c < ia->nc; c++) {
    double* g = ia->g;
    double* ud = ia->udot + (size_t)c * nu;
    memset(g, 0, (size_t)nu * sizeof(double));
    int with_velocity = 0;
    switch (ia->kind[c]) {
      case CK_TOTAL:
        with_velocity = 1;
        rc = add_others(ia, ws, g);
        for (int f = 0; !rc && f < sys->nforce; f++) {
          const mbs_force_desc* fd = &sys->force[f];
          if (fd->control >= 0 || fd->type == MBS_FORCE_GRAVITY) rc = add_element(ia, ws, f, g);
        }
        for (int i = 0; i < nu; i++) g[i] -= ia->C[i];
        break;
      case CK_ACTUATOR: {
        mbs_state* wa = w0 ? w0 : ws;
        const int f = ia->force[c];
        if (ia->potentials && sys->force[f].type == MBS_FORCE_MUSCLE)
          rc = add_unit_tension(ia, wa, f, g);
        else
          rc = add_element(ia, wa, f, g);
        if (w0)
          for (int i = 0; i < nu; i++) g[i] += ia->gsum[i];
        break;
      }
      case CK_GRAVITY: {
        mbs_state* wa = w0 ? w0 : ws;
        for (int f = 0; !rc && f < sys->nforce; f++)
          if (sys->force[f].type == MBS_FORCE_GRAVITY) rc = add_element(ia, wa, f, g);
        if (w0)
          for (int i = 0; i < nu; i++) g[i] += ia->gsum[i];
        break;
      }
      case CK_VELOCITY:
        with_velocity = 1;
        if (w0) rc = add_others(ia, ws, g);
        for (int i = 0; i < nu; i++) g[i] -= ia->C[i];
        break;
      default:  // CK_OTHER
        rc = add_others(ia, ws, g);
        break;
    }
    if (rc) return ws_fail(ia, w0 && ia->kind[c] != CK_VELOCITY ? w0 : ws, rc, err);
    for (int i = 0; i < nu; i++)
      if (!isfinite(g[i]))
        return MBS_FAIL(err, MBS_ERR_NAN, sn, "induced accelerations at t = %g: the forces of "
                        "'%s' are not finite", t, ia->name[c]);
    if ((rc = mbs_calc_mass_matrix_inverse_times(sys, ws, g, ud))) return ws_fail(ia, ws, rc, err);
    if (m > 0) {
      if (with_velocity) {
        int ne = 0;
        if (ms > 0 && (rc = mbs_calc_acceleration_errors_of(sys, ws, ud, ia->e, &ne)))
          return ws_fail(ia, ws, rc, err);
        for (int k = 0; k < ia->mx; k++) {
          const double* row = ia->Gx + (size_t)k * nu;
          double s = ia->cx[k];
          for (int i = 0; i < nu; i++) s += row[i] * ud[i];
          ia->e[ms + k] = s;
        }
        mbs_cresp_project(ia->cr, ud, ia->e, NULL);
      } else {
        mbs_cresp_project(ia->cr, ud, NULL, NULL);
      }
    }
    // bodies: J u' (+ the speeds' terms), at the mass centers; the system's mass center
    double* A = ia->A + (size_t)c * 6 * nb;
    if ((rc = mbs_calc_jacobian_times(sys, ws, ud, A))) return ws_fail(ia, ws, rc, err);
    double* com = ia->com + (size_t)c * 3;
    double mtot = 0;
    mbs_v3_zero(com);
    mbs_sv_zero(A);
    for (int b = 1; b < nb; b++) {
      double* Ab = A + 6 * b;
      if (with_velocity)
        for (int i = 0; i < 6; i++) Ab[i] += ia->Acor[6 * b + i];
      const mbs_rigid_inertia* M = &ws->M_G[b];
      double t1[3];
      mbs_v3_cross(t1, Ab, M->c);  // alpha x r
      mbs_v3_add(Ab + 3, Ab + 3, t1);
      if (with_velocity) {
        const double* w = ws->V_GB + 6 * b;
        double wr[3], wwr[3];
        mbs_v3_cross(wr, w, M->c);
        mbs_v3_cross(wwr, w, wr);
        mbs_v3_add(Ab + 3, Ab + 3, wwr);
      }
      mbs_v3_axpy(com, M->m, Ab + 3);
      mtot += M->m;
    }
    if (mtot > 0) mbs_v3_scale(com, com, 1.0 / mtot);
  }
  return MBS_OK;
}
