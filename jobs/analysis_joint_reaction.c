// OpenSim's JointReaction analysis (analyze.h): the force and moment a joint transmits.
//   properties joint_names: names or "ALL" (first word, any case; default: every joint);
//              apply_on_bodies: "child" (default) or "parent", one for all or one per joint;
//              express_in_frame: "ground" (default), a body's name, or the keyword "child" or
//              "parent" (that joint's child or parent body), one for all or one per joint;
//              forces_file: not supported (an error)
//   file       <tool>_<name>_ReactionLoads.sto ("Joint Reaction Loads"): per joint
//              <joint>_on_<body>_in_<frame>_fx, _fy, _fz, _mx, _my, _mz, _px, _py, _pz
// As OpenSim 4's JointReaction::record: at Stage Acceleration (the model's forward dynamics at
// the State), the reaction on the child body is Simbody's mobilizer reaction at the origin of
// the joint's child frame (mbs_calc_mobilizer_reaction_forces: what the parent applies through
// the joint, the joint's own generalized forces, e.g. coordinate actuators and springs, and
// constraint forces included); the reaction on the parent is its opposite moved to the origin
// of the joint's parent frame: f_P = -f, m_P = -(m + (p_M - p_F) x f). Force and moment are
// expressed in the frame, and p is that frame origin's location in the frame (Ground's
// location of the child or parent frame origin, re-expressed). Labels name the bodies (the
// base frames) as OpenSim 4 does. The joints are the model's in mbstudy's body order (the
// file's JointSet order whenever a joint's parent comes before it); a name that is no joint is
// left out with a warning, as OpenSim does.
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze.h"
#include "mbs/dynamics.h"
#include "mbs/mbs.h"

typedef struct jr_key {
  int body;        // the joint's child body (its mobilizer)
  int on_child;
  int frame;       // expressed in this body's frame (0: Ground)
  int p_child;     // parameter index of p_BM (child frame origin in the child), or -1
  int p_parent;    // parameter index of p_PF (parent frame origin in the parent), or -1
} jr_key;

typedef struct jr_data {
  int n;
  jr_key* key;
  double* F;       // nbody x 6 reactions
  int table;
} jr_data;

static void jr_destroy(void* data) {
  jr_data* d = data;
  if (!d) return;
  free(d->key);
  free(d->F);
  free(d);
}

static int param_index(const mbs_system* sys, const char* joint, const char* which) {
  char path[600];
  snprintf(path, sizeof(path), "/jointset/%s/%s/translation", joint, which);
  const mbs_param_info* p = mbs_system_find_param(sys, path);
  return p ? p->index : -1;
}

static int jr_create(const mbs_analyze_context* c, mbs_analysis* a, void** data) {
  jr_data* d = calloc(1, sizeof(*d));
  *data = d;
  if (!d) return mbs_analysis_fail(c, a, NULL, "out of memory");
  const mbs_system* sys = c->sys;
  const int nb = mbs_system_nbody(sys);
  mbs_setup* s = c->setup;
  mbs_setup_node* node = mbs_analysis_node(a);
  char **jw = NULL, *jbuf = NULL, **ow = NULL, *obuf = NULL, **fw = NULL, *fbuf = NULL;
  char** names = NULL;
  char** labels = NULL;
  int nj = 0, no = 0, nfr = 0, rc = 0, nl = 0;
  if (mbs_analysis_words(s, node, "joint_names", &jw, &jbuf, &nj) ||
      mbs_analysis_words(s, node, "apply_on_bodies", &ow, &obuf, &no) ||
      mbs_analysis_words(s, node, "express_in_frame", &fw, &fbuf, &nfr)) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  if (mbs_setup_string(s, node, "forces_file")) {
    rc = mbs_analysis_fail(c, a, mbs_setup_child(s, node, "forces_file"),
                           "forces_file (actuator forces from a file instead of the states) is "
                           "not supported by mbstudy; remove it to compute the reactions from "
                           "the states");
    goto done;
  }
  // the joint names: ALL (first word) for every joint
  names = calloc((size_t)nb + (size_t)nj + 1, sizeof(char*));
  d->key = calloc((size_t)nb + (size_t)nj + 1, sizeof(jr_key));
  d->F = malloc((size_t)nb * 6 * sizeof(double));
  if (!names || !d->key || !d->F) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  int nn = 0;
  if (nj == 0 || !strcasecmp(jw[0], "ALL")) {
    for (int b = 1; b < nb; b++) names[nn++] = (char*)mbs_body_mobilizer_name(sys, b);
  } else {
    for (int i = 0; i < nj; i++) names[nn++] = jw[i];
  }
  mbs_setup_node* on_node = mbs_setup_child(s, node, "apply_on_bodies");
  mbs_setup_node* in_node = mbs_setup_child(s, node, "express_in_frame");
  if (no > 1 && no != nn) {
    rc = mbs_analysis_fail(c, a, on_node, "apply_on_bodies has %d entries for %d joints; give "
                           "one for all joints or one per joint", no, nn);
    goto done;
  }
  if (nfr > 1 && nfr != nn) {
    rc = mbs_analysis_fail(c, a, in_node, "express_in_frame has %d entries for %d joints; give "
                           "one for all joints or one per joint", nfr, nn);
    goto done;
  }
  mbs_setup_node* jn_node = mbs_setup_child(s, node, "joint_names");
  for (int i = 0; i < nn; i++) {
    int b = -1;
    for (int k = 1; k < nb && b < 0; k++)
      if (!strcmp(mbs_body_mobilizer_name(sys, k), names[i])) b = k;
    if (b < 0) {
      mbs_analysis_warn(c, a, jn_node, "joint_names: '%s' is not a joint of model '%s'; "
                        "ignored, as OpenSim ignores it", names[i], mbs_osim_name(c->model));
      continue;
    }
    jr_key* k = &d->key[d->n];
    k->body = b;
    const char* on = no ? ow[i < no ? i : 0] : "child";
    if (!strcasecmp(on, "child")) {
      k->on_child = 1;
    } else if (!strcasecmp(on, "parent")) {
      k->on_child = 0;
    } else {
      rc = mbs_analysis_fail(c, a, on_node, "apply_on_bodies: '%s' is neither child nor parent",
                             on);
      goto done;
    }
    // the frame: a frame of the model by name (Ground or a body), else the keywords
    const char* in = nfr ? fw[i < nfr ? i : 0] : "ground";
    int f = mbs_body_find(sys, in);
    if (f < 0) {
      if (!strcasecmp(in, "child")) {
        f = b;
      } else if (!strcasecmp(in, "parent")) {
        f = mbs_body_parent(sys, b);
      } else {
        rc = mbs_analysis_fail(c, a, in_node, "express_in_frame: '%s' is neither a frame of "
                               "model '%s' (ground or a body) nor the keyword child or parent",
                               in, mbs_osim_name(c->model));
        goto done;
      }
    }
    k->frame = f;
    k->p_child = param_index(sys, names[i], "child_frame");
    k->p_parent = param_index(sys, names[i], "parent_frame");
    d->n++;
  }
  if (d->n == 0) mbs_analysis_warn(c, a, jn_node, "no joints to report");
  nl = 9 * d->n;
  labels = calloc((size_t)nl + 1, sizeof(char*));
  if (!labels) {
    rc = mbs_analysis_fail(c, a, NULL, "out of memory");
    goto done;
  }
  static const char* comp[9] = {"fx", "fy", "fz", "mx", "my", "mz", "px", "py", "pz"};
  for (int i = 0; i < d->n; i++) {
    const jr_key* k = &d->key[i];
    const int on = k->on_child ? k->body : mbs_body_parent(sys, k->body);
    for (int j = 0; j < 9; j++)
      if (!(labels[9 * i + j] = mbs_format_string(
                "%s_on_%s_in_%s_%s", mbs_body_mobilizer_name(sys, k->body),
                mbs_body_name(sys, on), mbs_body_name(sys, k->frame), comp[j]))) {
        rc = mbs_analysis_fail(c, a, NULL, "out of memory");
        goto done;
      }
  }
  static const char desc[] =
      "\nThis file contains the reaction forces and moments\napplied to the specified body of a "
      "joint pair and expressed  in the specified reference frame.\n\nUnits are S.I. units "
      "(seconds, meters, Newtons, ...)";
  if ((d->table = mbs_analysis_add_table(c, a, "ReactionLoads", "Joint Reaction Loads", desc, 0,
                                         nl, (const char* const*)labels)) < 0)
    rc = 1;
done:
  for (int i = 0; labels && i < nl; i++) free(labels[i]);
  free(labels);
  free(names);
  free(jw);
  free(jbuf);
  free(ow);
  free(obuf);
  free(fw);
  free(fbuf);
  return rc;
}

// a vector in Ground expressed in body f's frame
static void express(const mbs_system* sys, const mbs_state* st, int f, const double v[3],
                    double out[3]) {
  double R[9], p[3];
  mbs_get_body_transform(sys, st, f, R, p);
  mbs_m33_tvec(out, R, v);
}

static int jr_record(const mbs_analyze_context* c, mbs_analysis* a, void* data, mbs_state* st) {
  jr_data* d = data;
  const mbs_system* sys = c->sys;
  if (mbs_realize_acceleration(sys, st) || mbs_calc_mobilizer_reaction_forces(sys, st, d->F))
    return mbs_analysis_fail(c, a, NULL, "reactions at t = %.9g s: %s", mbs_state_time(st),
                             mbs_state_error(st)->message);
  const double* par = mbs_state_params(st);
  static const double zero[3] = {0, 0, 0};
  double* row = mbs_analysis_row(a, d->table);
  for (int i = 0; i < d->n; i++) {
    const jr_key* k = &d->key[i];
    const double* R = d->F + 6 * k->body;  // [moment; force] on the child at M, in Ground
    double pM[3], pF[3], f[3], m[3], p[3];
    mbs_get_station_location(sys, st, k->body, k->p_child >= 0 ? par + k->p_child : zero, pM);
    if (k->on_child) {
      mbs_v3_copy(m, R);
      mbs_v3_copy(f, R + 3);
      mbs_v3_copy(p, pM);
    } else {
      const int parent = mbs_body_parent(sys, k->body);
      mbs_get_station_location(sys, st, parent, k->p_parent >= 0 ? par + k->p_parent : zero, pF);
      double r[3], t[3];
      mbs_v3_sub(r, pM, pF);
      mbs_v3_cross(t, r, R + 3);
      for (int j = 0; j < 3; j++) {
        f[j] = -R[3 + j];
        m[j] = -(R[j] + t[j]);
      }
      mbs_v3_copy(p, pF);
    }
    double* out = row + 9 * i;
    if (k->frame == 0) {
      mbs_v3_copy(out, f);
      mbs_v3_copy(out + 3, m);
      mbs_v3_copy(out + 6, p);
    } else {
      double Rf[9], of[3], rel[3];
      mbs_get_body_transform(sys, st, k->frame, Rf, of);
      express(sys, st, k->frame, f, out);
      express(sys, st, k->frame, m, out + 3);
      mbs_v3_sub(rel, p, of);
      mbs_m33_tvec(out + 6, Rf, rel);
    }
  }
  return 0;
}

const mbs_analysis_type mbs_analysis_joint_reaction = {
    "JointReaction", "forces and moments joints transmit (_ReactionLoads)", jr_create, NULL,
    jr_record, NULL, jr_destroy};
