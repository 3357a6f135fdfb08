// OpenSim's InducedAccelerations analysis (analyze.h) on the library's induced accelerations
// (include/mbs/induced_accelerations.h).
//   properties coordinate_names (names or "All"; default none), body_names (names, "All", or
//              center_of_mass; default center_of_mass), ConstraintSet (PointConstraint,
//              WeldConstraint, RollingOnSurfaceConstraint with its surface_normal: one per
//              external force of the model, in order, each replacing its force above
//              force_threshold), force_threshold (6 N), compute_potentials_only (false),
//              report_constraint_reactions (false; true is not supported), and mbstudy's
//              opensim_contributions (false: every force as it acts at the State's speeds, so
//              that the contributions sum to "total", with the forces that are neither
//              actuators nor gravity as their own column "other_forces"; true: as OpenSim's
//              analysis, actuators and gravity at zero speeds with those other forces in each)
//   files      <tool>_<name>_<coordinate>.sto for each coordinate (title the coordinate's name,
//              columns time and the contributors: total (not with compute_potentials_only),
//              the actuators, gravity, velocity and, when present, other_forces);
//              <tool>_<name>_<body>.sto for each body (each contributor's _X _Y _Z, the
//              acceleration of the body's mass center in Ground, and _Ox _Oy _Oz, its angular
//              acceleration); <tool>_<name>_center_of_mass.sto (_X _Y _Z of the system's mass
//              center)
// As OpenSim 4's InducedAccelerations::record: external forces act in no contribution (OpenSim
// disables them all); with in_degrees every coordinate's acceleration and the bodies' angular
// accelerations are converted by 180/pi (OpenSim converts the translational coordinates too).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze.h"
#include "mbs/induced_accelerations.h"
#include "mbs/mbs.h"

typedef struct ia_data {
  mbs_ia* ia;
  mbs_ia_contact* contacts;
  int ncontact;
  int nc;              // contributors
  int ncoord;
  int* coord_u;        // the coordinates' speeds
  int* tcoord;         // their tables
  int nbody;
  int* body;           // the bodies (system indices)
  int* tbody;
  int com, tcom;       // center of mass wanted; its table
  double scale;        // 180/pi with in_degrees, else 1
} ia_data;

static void ia_destroy(void* data) {
  ia_data* d = data;
  if (!d) return;
  mbs_ia_free(d->ia);
  free(d->contacts);
  free(d->coord_u);
  free(d->tcoord);
  free(d->body);
  free(d->tbody);
  free(d);
}

static const char ia_desc[] =
    "\nThis file contains accelerations of coordinates or bodies.\n\nUnits are S.I. units "
    "(seconds, meters, Newtons, ...)\nIf the header above contains a line with 'inDegrees', "
    "this indicates whether rotational values are in degrees (yes) or radians (no).\n\n";

// the replacement constraints of the ConstraintSet, paired with the model's external forces
static int read_contacts(const mbs_analyze_context* c, mbs_analysis* a, ia_data* d) {
  const mbs_system* sys = c->sys;
  mbs_setup_node* node = mbs_analysis_node(a);
  const int nf = mbs_system_nforce(sys);
  int next = 0, ncon = 0;
  for (int f = 0; f < nf; f++) next += !strcmp(mbs_force_kind(sys, f), "external_force");
  while (mbs_setup_item(c->setup, node, "ConstraintSet", ncon)) ncon++;
  mbs_setup_node* cset = mbs_setup_child(c->setup, node, "ConstraintSet");
  if (ncon == 0) {
    if (next > 0)
      mbs_analysis_warn(c, a, cset, "the model's %d external force(s) act in no contribution "
                        "(OpenSim disables them) and no ConstraintSet replaces them", next);
    return 0;
  }
  if (ncon != next)
    return mbs_analysis_fail(c, a, cset, "the ConstraintSet has %d constraint(s) for the "
                             "model's %d external force(s); OpenSim needs one per external "
                             "force, in order", ncon, next);
  d->contacts = calloc((size_t)ncon, sizeof(mbs_ia_contact));
  if (!d->contacts) return mbs_analysis_fail(c, a, NULL, "out of memory");
  int k = 0;
  for (int f = 0; f < nf && k < ncon; f++) {
    if (strcmp(mbs_force_kind(sys, f), "external_force")) continue;
    mbs_setup_node* item = mbs_setup_item(c->setup, node, "ConstraintSet", k);
    const char* kind = mbs_setup_kind(item);
    mbs_ia_contact* ct = &d->contacts[k];
    ct->external_force = f;
    ct->normal[1] = 1;
    const char* body_key[3] = {"socket_body_2", "body_2", NULL};
    if (!strcmp(kind, "PointConstraint")) {
      ct->type = MBS_IA_CONTACT_POINT;
    } else if (!strcmp(kind, "WeldConstraint")) {
      ct->type = MBS_IA_CONTACT_WELD;
    } else if (!strcmp(kind, "RollingOnSurfaceConstraint")) {
      ct->type = MBS_IA_CONTACT_ROLLING;
      body_key[0] = "socket_rolling_body";
      body_key[1] = "rolling_body";
      const char* n = mbs_setup_string(c->setup, item, "surface_normal");
      if (n && sscanf(n, "%lf %lf %lf", &ct->normal[0], &ct->normal[1], &ct->normal[2]) != 3)
        return mbs_analysis_fail(c, a, item, "%s '%s': surface_normal '%s' is not three "
                                 "numbers", kind, mbs_setup_node_name(item), n);
    } else {
      return mbs_analysis_fail(c, a, item, "%s '%s' cannot replace an external force: "
                               "PointConstraint, WeldConstraint and RollingOnSurfaceConstraint "
                               "can", kind, mbs_setup_node_name(item));
    }
    // the body it names should be the one the force is applied to (the force's is used)
    int applied = -1;
    mbs_state* tmp = mbs_state_create(sys);
    if (tmp && !mbs_realize_position(sys, tmp))
      mbs_get_external_force(sys, tmp, f, &applied, NULL, NULL, NULL);
    mbs_state_destroy(tmp);
    for (int i = 0; body_key[i]; i++) {
      const char* b = mbs_setup_string(c->setup, item, body_key[i]);
      if (!b) continue;
      const char* slash = strrchr(b, '/');
      const char* bn = slash ? slash + 1 : b;
      if (applied > 0 && mbs_body_find(sys, bn) != applied)
        mbs_analysis_warn(c, a, item, "%s '%s': body '%s' is not the body external force '%s' "
                          "is applied to ('%s'); the constraint acts on that one", kind,
                          mbs_setup_node_name(item), bn, mbs_force_name(sys, f),
                          mbs_body_name(sys, applied));
      break;
    }
    mbs_setup_mark_all(c->setup, item);
    k++;
  }
  d->ncontact = ncon;
  return 0;
}

static int ia_create(const mbs_analyze_context* c, mbs_analysis* a, void** data) {
  ia_data* d = calloc(1, sizeof(*d));
  *data = d;
  if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
  const mbs_system* sys = c->sys;
  const mbs_osim_model* m = c->model;
  mbs_setup_node* node = mbs_analysis_node(a);
  mbs_error err;
  mbs_error_clear(&err);
  mbs_ia_options o;
  mbs_ia_options_default(&o);
  int potentials = 0, reactions = 0, opensim = 0;
  if (mbs_setup_number(c->setup, node, "force_threshold", 6, &o.force_threshold, &err) ||
      mbs_setup_bool(c->setup, node, "compute_potentials_only", 0, &potentials, &err) ||
      mbs_setup_bool(c->setup, node, "report_constraint_reactions", 0, &reactions, &err) ||
      mbs_setup_bool(c->setup, node, "opensim_contributions", 0, &opensim, &err))
    return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  if (reactions)
    mbs_analysis_warn(c, a, mbs_setup_child(c->setup, node, "report_constraint_reactions"),
                      "report_constraint_reactions is not supported; the constraints' "
                      "reactions are not written");
  o.compute_potentials_only = potentials;
  o.mode = opensim ? MBS_IA_OPENSIM : MBS_IA_SUPERPOSITION;
  if (read_contacts(c, a, d)) return 1;
  o.contacts = d->contacts;
  o.ncontact = d->ncontact;
  if (mbs_ia_create(sys, &o, &d->ia, &err))
    return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  d->nc = mbs_ia_ncontributor(d->ia);
  d->scale = mbs_analysis_in_degrees(a) ? 180.0 / M_PI : 1.0;
  // the coordinates and bodies
  char **cw = NULL, *cbuf = NULL, **bw = NULL, *bbuf = NULL;
  int ncw = 0, nbw = 0, rc = 0;
  char** labels = NULL;
  if (mbs_analysis_words(c->setup, node, "coordinate_names", &cw, &cbuf, &ncw) ||
      mbs_analysis_words(c->setup, node, "body_names", &bw, &bbuf, &nbw)) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  const int nmc = mbs_osim_ncoordinate(m), nb = mbs_system_nbody(sys);
  d->coord_u = calloc((size_t)nmc + (size_t)ncw + 1, sizeof(int));
  d->tcoord = calloc((size_t)nmc + (size_t)ncw + 1, sizeof(int));
  d->body = calloc((size_t)nb + (size_t)nbw + 1, sizeof(int));
  d->tbody = calloc((size_t)nb + (size_t)nbw + 1, sizeof(int));
  labels = calloc(6 * (size_t)d->nc + 1, sizeof(char*));
  if (!d->coord_u || !d->tcoord || !d->body || !d->tbody || !labels) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  mbs_setup_node* cn = mbs_setup_child(c->setup, node, "coordinate_names");
  const char** cnames = calloc((size_t)nmc + (size_t)ncw + 1, sizeof(char*));
  if (!cnames) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  if (ncw > 0 && !strcasecmp(cw[0], "all")) {
    for (int k = 0; k < nmc; k++) {
      cnames[d->ncoord] = mbs_osim_coordinate_info(m, k)->name;
      d->coord_u[d->ncoord++] = mbs_osim_coordinate_info(m, k)->uindex;
    }
  } else {
    for (int i = 0; i < ncw && !rc; i++) {
      const int k = mbs_osim_find_coordinate(m, cw[i]);
      if (k < 0) {
        rc = mbs_analysis_fail(c, a, cn, "coordinate_names: '%s' is not a coordinate of model "
                               "'%s' (OpenSim stops here too)", cw[i], mbs_osim_name(m));
        break;
      }
      cnames[d->ncoord] = mbs_osim_coordinate_info(m, k)->name;
      d->coord_u[d->ncoord++] = mbs_osim_coordinate_info(m, k)->uindex;
    }
  }
  mbs_setup_node* bn = mbs_setup_child(c->setup, node, "body_names");
  if (!rc) {
    if (nbw == 0) {
      d->com = 1;  // OpenSim's default
    } else if (!strcasecmp(bw[0], "all")) {
      for (int b = 1; b < nb; b++) d->body[d->nbody++] = b;
    } else {
      for (int i = 0; i < nbw && !rc; i++) {
        if (!strcasecmp(bw[i], "center_of_mass")) {
          d->com = 1;
          continue;
        }
        const int b = mbs_body_find(sys, bw[i]);
        if (b <= 0)
          rc = mbs_analysis_fail(c, a, bn, "body_names: '%s' is not a body of model '%s' "
                                 "(OpenSim stops here too)", bw[i], mbs_osim_name(m));
        else
          d->body[d->nbody++] = b;
      }
    }
  }
  // the tables
  for (int k = 0; k < d->nc; k++) labels[k] = (char*)mbs_ia_contributor_name(d->ia, k);
  for (int i = 0; i < d->ncoord && !rc; i++)
    if ((d->tcoord[i] = mbs_analysis_add_table(c, a, cnames[i], cnames[i], ia_desc,
                                               mbs_analysis_in_degrees(a), d->nc,
                                               (const char* const*)labels)) < 0)
      rc = 1;
  free(cnames);
  if (!rc && (d->nbody > 0 || d->com)) {
    static const char* const sfx[6] = {"_X", "_Y", "_Z", "_Ox", "_Oy", "_Oz"};
    for (int k = 0; k < d->nc; k++) labels[k] = NULL;
    for (int k = 0; k < d->nc && !rc; k++)
      for (int s = 0; s < 6; s++)
        if (!(labels[6 * k + s] = mbs_format_string("%s%s", mbs_ia_contributor_name(d->ia, k),
                                                     sfx[s])))
          rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    for (int i = 0; i < d->nbody && !rc; i++) {
      const char* name = mbs_body_name(sys, d->body[i]);
      if ((d->tbody[i] = mbs_analysis_add_table(c, a, name, name, ia_desc, 0, 6 * d->nc,
                                                (const char* const*)labels)) < 0)
        rc = 1;
    }
    if (!rc && d->com) {
      // the center of mass: _X _Y _Z of each contributor
      char** l3 = calloc(3 * (size_t)d->nc + 1, sizeof(char*));
      if (!l3) {
        rc = mbs_analysis_fail(c, a, NULL, "out of memory");
      } else {
        for (int k = 0; k < d->nc; k++)
          for (int s = 0; s < 3; s++) l3[3 * k + s] = labels[6 * k + s];
        if ((d->tcom = mbs_analysis_add_table(c, a, "center_of_mass", "center_of_mass",
                                              ia_desc, 0, 3 * d->nc,
                                              (const char* const*)l3)) < 0)
          rc = 1;
        free(l3);
      }
    }
    for (int k = 0; k < 6 * d->nc; k++) free(labels[k]);
  }
done:
  free(labels);
  free(cw);
  free(cbuf);
  free(bw);
  free(bbuf);
  return rc;
}

static int ia_record(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  ia_data* d = data;
  mbs_error err;
  mbs_error_clear(&err);
  if (mbs_ia_solve(d->ia, st, &err)) return mbs_analysis_fail(c, a, NULL, "%s", err.message);
  for (int i = 0; i < d->ncoord; i++) {
    double* row = mbs_analysis_row(a, d->tcoord[i]);
    for (int k = 0; k < d->nc; k++) row[k] = mbs_ia_udot(d->ia, k)[d->coord_u[i]] * d->scale;
  }
  for (int i = 0; i < d->nbody; i++) {
    double* row = mbs_analysis_row(a, d->tbody[i]);
    for (int k = 0; k < d->nc; k++) {
      const double* A = mbs_ia_body_acceleration(d->ia, k) + 6 * d->body[i];
      for (int s = 0; s < 3; s++) {
        row[6 * k + s] = A[3 + s];
        row[6 * k + 3 + s] = A[s] * d->scale;
      }
    }
  }
  if (d->com) {
    double* row = mbs_analysis_row(a, d->tcom);
    for (int k = 0; k < d->nc; k++)
      for (int s = 0; s < 3; s++) row[3 * k + s] = mbs_ia_com_acceleration(d->ia, k)[s];
  }
  return 0;
}

const mbs_analysis_type mbs_analysis_induced_accelerations = {
    "InducedAccelerations",
    "each force's share of the accelerations of coordinates, bodies and the mass center",
    ia_create, NULL, ia_record, NULL, ia_destroy};
