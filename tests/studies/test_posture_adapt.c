// Putting published OpenSim models on the perturbation platform (mbs/posture_adapt.h):
// bad input gives errors naming the file and the problem; with --data DIR (the shared folder,
// models in DIR/models) gait2392 and gait2354 are adapted and read: one body and three
// coordinates more, the muscles gone, two contact forces and one actuator per held coordinate,
// ten spheres; every held coordinate locked with an actuator; in the default pose the spheres of
// each foot touch one horizontal plane, the heel behind the ankle and the forefoot ahead; then
// the model stands on them (locked joints, 15 degrees of knee flexion) and stays up for 1 s.
// Exits 77 (skipped) when --data names a folder without models. With MBS_TEST_QUICK set (the
// valgrind run) the standing part is left out.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../studies/human_model.h"
#include "../../studies/posture.h"
#include "mbs/mbs.h"
#include "mbs/osim.h"
#include "mbs/posture_adapt.h"
#include "mbs_test.h"

static const double deg = 3.14159265358979323846 / 180;

static char* read_text(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (s && fread(s, 1, (size_t)len, f) != (size_t)len) {
    free(s);
    s = NULL;
  }
  fclose(f);
  if (s) {
    s[len] = 0;
    *n = (size_t)len;
  }
  return s;
}

// the adapter's defaults with the posture study's held coordinates (studies/posture.h)
static void default_options(mbs_posture_adapt_options* o) {
  mbs_posture_adapt_options_default(o);
  int n = 0;
  while (mbs_posture_joint_names[n]) n++;
  o->held_required = mbs_posture_joint_names;
  o->nrequired = MBS_POSTURE_REQUIRED_JOINTS;
  o->held_optional = mbs_posture_joint_names + MBS_POSTURE_REQUIRED_JOINTS;
  o->noptional = n - MBS_POSTURE_REQUIRED_JOINTS;
}

// adapting `text` fails with a message containing each of the (up to 2) strings
static void expect_failure(const char* text, const char* name, const char* want1,
                           const char* want2) {
  mbs_posture_adapt_options o;
  default_options(&o);
  mbs_error err;
  char* doc = mbs_posture_adapt_osim(text, strlen(text), name, &o, &err);
  EXPECT_TRUE(doc == NULL);
  free(doc);
  EXPECT_TRUE(err.code != 0);
  printf("  expected error: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, name) != NULL);
  if (want1) EXPECT_TRUE(strstr(err.message, want1) != NULL);
  if (want2) EXPECT_TRUE(strstr(err.message, want2) != NULL);
}

static void test_errors(void) {
  printf("errors:\n");
  expect_failure("this is not XML", "words.osim", "not an OpenSim 4 model", NULL);
  expect_failure("<?xml version=\"1.0\"?><html><body/></html>", "page.osim",
                 "not an OpenSim 4 model", "<html>");
  // an OpenSim 3.0 document is converted first (io/osim_upgrade.c): then its feet are missing
  expect_failure("<OpenSimDocument Version=\"30000\"><Model name=\"old\"><BodySet><objects/>"
                 "</BodySet></Model></OpenSimDocument>",
                 "old.osim", "no foot body 'calcn_r'", NULL);
  expect_failure("<OpenSimDocument Version=\"40000\"><Model name=\"m\"><BodySet><objects>"
                 "<Body name=\"pelvis\"><mass>1</mass></Body><Body name=\"calcn_l\"><mass>1</mass>"
                 "</Body></objects></BodySet><JointSet><objects/></JointSet></Model>"
                 "</OpenSimDocument>", "nofoot.osim", "no foot body 'calcn_r'", NULL);
  // the built-in human already stands on a platform
  mbs_human_params p;
  mbs_human_params_default(&p);
  char* human = mbs_human_model_osim(&p);
  EXPECT_TRUE(human != NULL);
  if (human) expect_failure(human, "human.osim", "body named 'platform'", NULL);
  free(human);
}

// the sum of the body masses but the platform's
static double body_mass(const mbs_system* sys, const mbs_state* st) {
  double total = 0;
  for (int b = 1; b < mbs_system_nbody(sys); b++) {
    if (!strcmp(mbs_body_name(sys, b), "platform")) continue;
    char path[256];
    snprintf(path, sizeof path, "/bodyset/%s/mass", mbs_body_name(sys, b));
    const mbs_param_info* pm = mbs_system_find_param(sys, path);
    if (pm) total += mbs_state_params(st)[pm->index];
  }
  return total;
}

static int count_spheres(const mbs_system* sys) {
  int n = 0;
  for (int g = 0; g < mbs_system_ncontact_geometry(sys); g++)
    n += mbs_contact_geometry_type(sys, g) == MBS_GEOM_SPHERE;
  return n;
}

static void check_feet(const mbs_osim_model* m, const mbs_posture_adapt_info* info) {
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  EXPECT_OK(mbs_osim_default_state(m, st));
  EXPECT_OK(mbs_realize_position(sys, st));
  const char* side[2] = {"r", "l"};
  for (int i = 0; i < 2; i++) {
    char name[64];
    snprintf(name, sizeof name, "talus_%s", side[i]);
    const int talus = mbs_body_find(sys, name);
    EXPECT_TRUE(talus > 0);
    static const double origin[3] = {0, 0, 0};
    double ankle[3] = {0, 0, 0};
    if (talus > 0) EXPECT_OK(mbs_get_station_location(sys, st, talus, origin, ankle));
    double low[5], x[5], z[5];
    for (int k = 0; k < 5; k++) {
      snprintf(name, sizeof name, "%s_%s", mbs_foot_sphere_names[k], side[i]);
      const int g = mbs_contact_geometry_find(sys, name);
      EXPECT_TRUE(g >= 0);
      char path[256];
      snprintf(path, sizeof path, "/contactgeometryset/%s/location", name);
      const mbs_param_info* pl = mbs_system_find_param(sys, path);
      snprintf(path, sizeof path, "/contactgeometryset/%s/radius", name);
      const mbs_param_info* pr = mbs_system_find_param(sys, path);
      EXPECT_TRUE(pl && pr);
      if (g < 0 || !pl || !pr) return;
      double p[3];
      EXPECT_OK(mbs_get_station_location(sys, st, mbs_contact_geometry_body(sys, g),
                                         mbs_state_params(st) + pl->index, p));
      low[k] = p[1] - mbs_state_params(st)[pr->index];
      x[k] = p[0];
      z[k] = p[2];
      printf("  %-10s on %-8s at x %+.4f y %+.4f z %+.4f (lowest point y %+.6f)\n", name,
             mbs_body_name(sys, mbs_contact_geometry_body(sys, g)), p[0], p[1], p[2], low[k]);
    }
    printf("  ankle (talus_%s origin) at x %+.4f y %+.4f z %+.4f\n", side[i], ankle[0], ankle[1],
           ankle[2]);
    for (int k = 1; k < 5; k++) EXPECT_ABS(low[k], low[0], 1e-9);  // the foot is flat
    EXPECT_TRUE(x[0] < ankle[0]);                                   // heel behind the ankle
    for (int k = 1; k < 4; k++) EXPECT_TRUE(x[k] > ankle[0]);       // met1, met5, hallux ahead
    // lateral is +z on the right foot: met5 and midfoot outside met1 and hallux
    const double lat = i == 0 ? 1 : -1;
    EXPECT_TRUE(lat * (z[2] - z[1]) > 0 && lat * (z[4] - z[3]) > 0);
    EXPECT_TRUE(info->hallux_on_toes[i]);
    EXPECT_TRUE(info->foot_length[i] > 0.2 && info->foot_length[i] < 0.3);
  }
  mbs_state_destroy(st);
}

// the feet stand flat: the ten spheres all carry load, and neither foot is rolled (the gait
// models' ankle axes are oblique: dorsiflexion alone would roll the feet by degrees in a crouch)
static void check_flat(const mbs_system* sys, mbs_state* st, double knee) {
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  double least = INFINITY, roll = 0;
  for (int f = 0; f < 2; f++) {
    mbs_contact_report rep[16];
    int n = 0;
    EXPECT_OK(mbs_get_contact_reports(sys, st, mbs_force_find(sys, f ? "foot_l" : "foot_r"), rep,
                                      16, &n));
    // the sphere-platform pairs (the force lists the hallux sphere on the toes with the four on
    // the calcaneus: those pairs stay apart)
    const int platform = mbs_body_find(sys, "platform");
    int on_platform = 0;
    for (int k = 0; k < n; k++) {
      if (mbs_contact_geometry_body(sys, rep[k].geometry1) != platform &&
          mbs_contact_geometry_body(sys, rep[k].geometry2) != platform) {
        EXPECT_TRUE(!rep[k].in_contact);
        continue;
      }
      on_platform++;
      least = fmin(least, rep[k].in_contact ? rep[k].penetration : -1);
    }
    EXPECT_EQ_INT(on_platform, 5);
    double R[9];
    EXPECT_OK(mbs_get_body_transform(sys, st, mbs_body_find(sys, f ? "calcn_l" : "calcn_r"), R,
                                     NULL));
    roll = fmax(roll, fabs(R[7]));
  }
  printf("  knee %.0f deg: least sphere penetration %.3e m, largest foot roll %.2e rad\n",
         knee / deg, least, roll);
  EXPECT_TRUE(least > 0);
  EXPECT_TRUE(roll < 1e-3);
}

static void stand(const mbs_osim_model* m, double knee) {
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  mbs_posture_options o;
  mbs_posture_options_default(&o);
  o.knee_flexion = knee;
  o.mode = MBS_JOINTS_LOCKED;
  mbs_posture_result r;
  mbs_error err;
  int rc = mbs_posture_quiet_standing(m, st, &o, &r, &err);
  EXPECT_OK(rc);
  if (rc) {
    printf("  quiet standing: %s\n", err.message);
  } else {
    const double weight = body_mass(sys, st) * 9.80665;
    printf("  standing, knee %.0f deg, locked: hip %.2f deg, ankle %.2f deg, com %.4f m ahead of "
           "the ankles, pelvis at %.4f m, residual %.3e N (weight %.1f N)\n", knee / deg,
           r.hip_flexion / deg, r.ankle_angle / deg, r.com_ahead, r.pelvis_height, r.residual,
           weight);
    EXPECT_TRUE(r.residual < 1e-3 * weight);
    check_flat(sys, st, knee);
    double T = NAN;
    rc = mbs_posture_time_to_fall(m, st, 1.0, 0.75, 1e-4, &T, &err);
    EXPECT_OK(rc);
    if (rc) printf("  time to fall: %s\n", err.message);
    else printf("  locked, unperturbed: T = %.3f s (of 1 s)\n", T);
    EXPECT_NEAR(T, 1.0, 0);
  }
  mbs_state_destroy(st);
}

static void test_model(const char* data, const char* model, int quick) {
  char path[4096];
  snprintf(path, sizeof path, "%s/models/%s.osim", data, model);
  printf("%s:\n", model);
  mbs_error err;
  mbs_osim_model* orig = mbs_osim_read(path, &err);
  EXPECT_TRUE(orig != NULL);
  size_t n = 0;
  char* text = read_text(path, &n);
  EXPECT_TRUE(text != NULL);
  if (!orig || !text) {
    if (!orig) printf("  %s\n", err.message);
    mbs_osim_free(orig);
    free(text);
    return;
  }
  mbs_posture_adapt_options o;
  default_options(&o);
  mbs_posture_adapt_info info;
  char* doc = mbs_posture_adapt_osim_info(text, n, path, &o, &info, &err);
  EXPECT_TRUE(doc != NULL);
  mbs_osim_model* m = doc ? mbs_osim_parse(doc, strlen(doc), path, NULL, &err) : NULL;
  EXPECT_TRUE(m != NULL);
  if (!m) {
    printf("  %s\n", err.message);
  } else {
    printf("  foot length %.4f m, sole at y = %.4f m (right; left %.4f m, %.4f m), spheres of "
           "%.4f m; %d muscles and path actuators removed, %d other forces kept, %d controllers "
           "removed, %d held coordinates\n", info.foot_length[0], info.sole[0],
           info.foot_length[1], info.sole[1], info.radius, info.removed_forces, info.kept_forces,
           info.removed_controllers, info.nheld);
    const mbs_system* s0 = mbs_osim_system(orig);
    const mbs_system* s1 = mbs_osim_system(m);
    EXPECT_EQ_INT(mbs_system_nbody(s1), mbs_system_nbody(s0) + 1);
    EXPECT_EQ_INT(mbs_osim_ncoordinate(m), mbs_osim_ncoordinate(orig) + 3);
    EXPECT_EQ_INT(mbs_osim_nmuscle(m), 0);
    EXPECT_EQ_INT(info.removed_forces, mbs_osim_nmuscle(orig));
    EXPECT_EQ_INT(info.nheld, 17);  // 13 and the subtalar and mtp joints
    // the original's simulated muscles are force elements; the adapted model has none
    int muscles0 = 0, muscles1 = 0;
    for (int f = 0; f < mbs_system_nforce(s0); f++)
      muscles0 += !strcmp(mbs_force_kind(s0, f), "muscle");
    for (int f = 0; f < mbs_system_nforce(s1); f++)
      muscles1 += !strcmp(mbs_force_kind(s1, f), "muscle");
    EXPECT_EQ_INT(muscles1, 0);
    EXPECT_TRUE(muscles0 <= info.removed_forces);
    EXPECT_EQ_INT(mbs_system_nforce(s1), mbs_system_nforce(s0) - muscles0 + 2 + info.nheld);
    EXPECT_EQ_INT(mbs_system_ncontact_geometry(s1), mbs_system_ncontact_geometry(s0) + 11);
    EXPECT_EQ_INT(count_spheres(s1), count_spheres(s0) + 10);
    EXPECT_TRUE(mbs_force_find(s1, "foot_r") >= 0 && mbs_force_find(s1, "foot_l") >= 0);
    int held = 0;
    for (int k = 0; k < mbs_osim_ncoordinate(m); k++) {
      const mbs_osim_coordinate* c = mbs_osim_coordinate_info(m, k);
      char lock[256], act[256];
      snprintf(lock, sizeof lock, "/constraintset/%s_locked/enabled", c->name);
      snprintf(act, sizeof act, "%s_torque", c->name);
      const int has_lock = mbs_system_find_param(s1, lock) != NULL;
      const int has_act = mbs_force_find(s1, act) >= 0;
      if (has_act) EXPECT_TRUE(has_lock && c->locked);  // every actuated coordinate is locked
      held += has_lock && has_act;
    }
    EXPECT_EQ_INT(held, info.nheld);
    for (int k = 0; mbs_posture_joint_names[k]; k++) {
      char lock[256];
      snprintf(lock, sizeof lock, "/constraintset/%s_locked/enabled", mbs_posture_joint_names[k]);
      EXPECT_TRUE(mbs_system_find_param(s1, lock) != NULL);
    }
    check_feet(m, &info);
    // adapting twice: the platform is there already
    char* again = mbs_posture_adapt_osim(doc, strlen(doc), "adapted.osim", &o, &err);
    EXPECT_TRUE(again == NULL);
    free(again);
    printf("  adapted again: %s\n", err.message);
    EXPECT_TRUE(strstr(err.message, "adapted.osim") && strstr(err.message, "'platform'"));
    if (!quick) {
      stand(m, 15 * deg);
      stand(m, 45 * deg);
    }
  }
  mbs_osim_free(m);
  free(doc);
  // without the toes: the foot's length and sole must be given, and the hallux is on the foot
  mbs_posture_adapt_options nt = o;
  nt.toes[0] = nt.toes[1] = NULL;
  char* no_toes = mbs_posture_adapt_osim(text, n, path, &nt, &err);
  EXPECT_TRUE(no_toes == NULL);
  free(no_toes);
  printf("  without toes: %s\n", err.message);
  EXPECT_TRUE(strstr(err.message, "foot length") != NULL);
  nt.foot_length = 0.25;
  nt.sole = -0.027;
  mbs_posture_adapt_info ni;
  no_toes = mbs_posture_adapt_osim_info(text, n, path, &nt, &ni, &err);
  EXPECT_TRUE(no_toes != NULL);
  mbs_osim_model* mt = no_toes ? mbs_osim_parse(no_toes, strlen(no_toes), path, NULL, &err) : NULL;
  EXPECT_TRUE(mt != NULL);
  if (mt) {
    const mbs_system* st = mbs_osim_system(mt);
    const int g = mbs_contact_geometry_find(st, "hallux_r");
    EXPECT_TRUE(g >= 0 && !strcmp(mbs_body_name(st, mbs_contact_geometry_body(st, g)), "calcn_r"));
    EXPECT_TRUE(!ni.hallux_on_toes[0] && ni.foot_length[0] == 0.25 && ni.sole[1] == -0.027);
  }
  mbs_osim_free(mt);
  free(no_toes);
  // a held coordinate missing (renamed)
  const char* key = "<Coordinate name=\"lumbar_rotation\">";
  char* at = strstr(text, key);
  EXPECT_TRUE(at != NULL);
  if (at) {
    memcpy(at, "<Coordinate name=\"lumbar_rotatio2\">", strlen(key));
    char* bad = mbs_posture_adapt_osim(text, n, path, &o, &err);
    EXPECT_TRUE(bad == NULL);
    free(bad);
    printf("  without lumbar_rotation: %s\n", err.message);
    EXPECT_TRUE(strstr(err.message, "lumbar_rotation") && strstr(err.message, model));
  }
  free(text);
  // the convenience reader
  mbs_osim_model* r = mbs_posture_adapt_read(path, &o, &err);
  EXPECT_TRUE(r != NULL && mbs_body_find(mbs_osim_system(r), "platform") > 0);
  mbs_osim_free(r);
  mbs_osim_free(orig);
}

// Rajagopal's model flexes its knees with positive angles: quiet standing says so, naming the
// coordinate, instead of posing hyperextended knees
static void test_knee_convention(const char* data) {
  char path[4096];
  snprintf(path, sizeof path, "%s/models/rajagopal2016.osim", data);
  FILE* f = fopen(path, "rb");
  if (!f) {
    printf("rajagopal2016: %s not found, left out\n", path);
    return;
  }
  fclose(f);
  mbs_posture_adapt_options o;
  default_options(&o);
  mbs_error err;
  mbs_osim_model* m = mbs_posture_adapt_read(path, &o, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) {
    printf("rajagopal2016: %s\n", err.message);
    return;
  }
  mbs_state* st = mbs_state_create(mbs_osim_system(m));
  mbs_posture_options po;
  mbs_posture_options_default(&po);
  po.knee_flexion = 15 * deg;
  mbs_posture_result r;
  mbs_error_clear(&err);
  const int rc = mbs_posture_quiet_standing(m, st, &po, &r, &err);
  printf("rajagopal2016, knee 15 deg: %s\n", rc ? err.message : "stands");
  EXPECT_TRUE(rc == MBS_ERR_ARGUMENT && strstr(err.message, "'knee_angle_r' flexes with a "
                                               "positive angle") != NULL);
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

//---------------------------------- the muscles mode ------------------------------------------

typedef struct muscle_ref {
  int n;
  int force[128], path[128], act[128], control[128];
  double amin[128];
} muscle_ref;

static void find_muscles(const mbs_system* sys, const mbs_state* st, muscle_ref* M) {
  M->n = 0;
  for (int f = 0; f < mbs_system_nforce(sys) && M->n < 128; f++) {
    if (strcmp(mbs_force_kind(sys, f), "muscle") != 0) continue;
    const int k = M->n++;
    M->force[k] = f;
    M->path[k] = mbs_force_path(sys, f);
    M->act[k] = M->control[k] = -1;
    char want[300], name[300];
    snprintf(want, sizeof want, "%s/activation", mbs_force_name(sys, f));
    for (int z = 0; z < mbs_system_nz(sys); z++)
      if (mbs_system_z_name(sys, z, name, sizeof name) == MBS_OK && !strcmp(name, want))
        M->act[k] = z;
    for (int c = 0; c < mbs_system_ncontrol(sys); c++)
      if (mbs_control_force(sys, c) == f) M->control[k] = c;
    snprintf(want, sizeof want, "/forceset/%s/minimum_activation", mbs_force_name(sys, f));
    const mbs_param_info* pi = mbs_system_find_param(sys, want);
    M->amin[k] = pi ? mbs_state_params(st)[pi->index] : 0;
  }
}

// every muscle's tendon force in equilibrium at the State's pose with activations a
static void tendon_forces(const mbs_system* sys, mbs_state* st, const muscle_ref* M,
                          const double* a, double* F) {
  for (int k = 0; k < M->n; k++) {
    if (M->act[k] >= 0) mbs_state_upd_z(st)[M->act[k]] = a[k];
    if (M->control[k] >= 0) mbs_state_upd_controls(st)[M->control[k]] = a[k];
  }
  EXPECT_OK(mbs_equilibrate_muscles(sys, st));
  EXPECT_OK(mbs_realize_dynamics(sys, st));
  for (int k = 0; k < M->n; k++) {
    mbs_muscle_report r;
    EXPECT_OK(mbs_get_muscle_report(sys, st, M->force[k], &r));
    F[k] = r.tendon_force;
  }
}

// The muscles mode on gait2392 with its muscles kept, at 15 degrees of knee flexion. Quiet
// standing's static optimization against its optimality conditions, with what the test finds
// itself: moment arms R_jm = -dL_m/dq_j by central differences of the path lengths, dF_m/da_m by
// central differences of the tendon forces in equilibrium, the reserves rho_j as the inverse
// dynamics' torques with the torque actuators off. Stationarity of sum a^2 + sum rho^2 (rho in
// units of 1 N m) within the bounds: an activation inside them equals
// s_m = sum_j rho_j R_jm dF_m/da_m, one at its minimum has s_m at most that minimum. The
// reserves are small beside the holding torques. The feedback's allocation: per joint and sign
// of the effort, the excitation increments (the controller's output gains) are >= 0 and change
// the muscles' torques, sum_m R_jm dF_m/da_m x_m, by +-1 N m at that joint and by nothing at the
// others. Unperturbed, the body stands 2 s within 5 mrad of quiet standing; with the platform
// moved 2 cm back it stands 3 s, and with the feedback off it falls.
static void test_muscles_mode(const char* data) {
  char path[4096];
  snprintf(path, sizeof path, "%s/models/gait2392_thelen2003muscle.osim", data);
  mbs_posture_adapt_options o;
  default_options(&o);
  o.remove_muscles = 0;
  mbs_osim_options oo = {0};
  oo.extend = mbs_posture_add_feedback;
  o.osim = &oo;
  mbs_error err;
  mbs_osim_model* m = mbs_posture_adapt_read(path, &o, &err);
  EXPECT_TRUE(m != NULL);
  if (!m) {
    printf("muscles mode: %s\n", err.message);
    return;
  }
  const mbs_system* sys = mbs_osim_system(m);
  mbs_state* st = mbs_state_create(sys);
  mbs_posture_options po;
  mbs_posture_options_default(&po);
  po.knee_flexion = 15 * deg;
  po.mode = MBS_JOINTS_MUSCLES;
  mbs_posture_result r;
  int rc = mbs_posture_quiet_standing(m, st, &po, &r, &err);
  EXPECT_OK(rc);
  if (rc) {
    printf("muscles mode: %s\n", err.message);
    mbs_state_destroy(st);
    mbs_osim_free(m);
    return;
  }
  static muscle_ref M;
  find_muscles(sys, st, &M);
  EXPECT_EQ_INT(M.n, 92);
  int nj = 0, qi[MBS_POSTURE_MAX_JOINTS], ui[MBS_POSTURE_MAX_JOINTS], jn[MBS_POSTURE_MAX_JOINTS];
  for (int j = 0; mbs_posture_joint_names[j]; j++) {
    const int c = mbs_osim_find_coordinate(m, mbs_posture_joint_names[j]);
    if (c < 0) continue;
    qi[nj] = mbs_osim_coordinate_info(m, c)->qindex;
    ui[nj] = mbs_osim_coordinate_info(m, c)->uindex;
    jn[nj++] = j;
  }
  mbs_state* w = mbs_state_create(sys);
  static double R[MBS_POSTURE_MAX_JOINTS][128], dF[128], a[128], Fp[128], Fm[128], ap[128],
      am[128];
  // moment arms
  const double h = 1e-6;
  for (int j = 0; j < nj; j++) {
    EXPECT_OK(mbs_state_copy(sys, w, st));
    const double q0 = mbs_state_q(w)[qi[j]];
    for (int k = 0; k < M.n; k++) {
      double Lp, Lm;
      mbs_state_upd_q(w)[qi[j]] = q0 + h;
      EXPECT_OK(mbs_realize_position(sys, w));
      EXPECT_OK(mbs_calc_path_length(sys, w, M.path[k], &Lp, NULL));
      mbs_state_upd_q(w)[qi[j]] = q0 - h;
      EXPECT_OK(mbs_realize_position(sys, w));
      EXPECT_OK(mbs_calc_path_length(sys, w, M.path[k], &Lm, NULL));
      R[j][k] = -(Lp - Lm) / (2 * h);
    }
  }
  // dF/da (one-sided at the minimum)
  for (int k = 0; k < M.n; k++) {
    a[k] = M.act[k] >= 0 ? mbs_state_z(st)[M.act[k]] : mbs_state_controls(st)[M.control[k]];
    ap[k] = a[k] + 1e-5;
    am[k] = fmax(a[k] - 1e-5, M.amin[k]);
  }
  EXPECT_OK(mbs_state_copy(sys, w, st));
  tendon_forces(sys, w, &M, ap, Fp);
  tendon_forces(sys, w, &M, am, Fm);
  for (int k = 0; k < M.n; k++) dF[k] = (Fp[k] - Fm[k]) / (ap[k] - am[k]);
  // the reserves: the inverse dynamics with the torque actuators off
  EXPECT_OK(mbs_state_copy(sys, w, st));
  for (int j = 0; j < nj; j++) {
    char name[160];
    snprintf(name, sizeof name, "%s_torque", mbs_posture_joint_names[jn[j]]);
    const int f = mbs_force_find(sys, name);
    for (int c = 0; c < mbs_system_ncontrol(sys); c++)
      if (mbs_control_force(sys, c) == f) mbs_state_upd_controls(w)[c] = 0;
  }
  const int nu = mbs_system_nu(sys);
  double* udot = calloc((size_t)nu, sizeof(double));
  double* tau = calloc((size_t)nu, sizeof(double));
  EXPECT_OK(mbs_realize_dynamics(sys, w));
  EXPECT_OK(mbs_calc_inverse_dynamics(sys, w, udot, tau));
  double rho[MBS_POSTURE_MAX_JOINTS], worst_reserve = 0, largest_torque = 0;
  for (int j = 0; j < nj; j++) {
    rho[j] = tau[ui[j]];
    EXPECT_NEAR(rho[j], r.reserve[jn[j]], 1e-6 + 1e-6 * fabs(rho[j]));
    worst_reserve = fmax(worst_reserve, fabs(rho[j]));
    largest_torque = fmax(largest_torque, fabs(r.torque[jn[j]]));
  }
  free(udot);
  free(tau);
  printf("muscles mode, knee 15 deg: activations rms %.3f, largest %.3f; largest reserve %.4f N m "
         "(largest holding torque %.1f N m)\n", r.activation_rms, r.activation_max,
         worst_reserve, largest_torque);
  EXPECT_TRUE(worst_reserve < 0.01 * largest_torque);
  // stationarity
  double worst_interior = 0, worst_bound = -INFINITY;
  int interior = 0;
  for (int k = 0; k < M.n; k++) {
    double s = 0;
    for (int j = 0; j < nj; j++) s += rho[j] * R[j][k] * dF[k];
    if (a[k] > M.amin[k] + 1e-4 && a[k] < 1 - 1e-4) {
      interior++;
      worst_interior = fmax(worst_interior, fabs(a[k] - s) / fmax(a[k], 0.01));
    } else if (a[k] <= M.amin[k] + 1e-4) {
      worst_bound = fmax(worst_bound, s - M.amin[k]);
    }
  }
  printf("  static optimization: %d activations inside their bounds, |a - s| / a at most %.2e; "
         "at the minimum s - a_min at most %.2e\n", interior, worst_interior, worst_bound);
  EXPECT_TRUE(interior > 10);
  EXPECT_TRUE(worst_interior < 0.02);
  EXPECT_TRUE(worst_bound < 1e-3);
  // the allocation of each joint's effort
  double worst_alloc = 0, most_negative = 0;
  int checked = 0;
  for (int j = 0; j < nj; j++) {
    char name[200];
    snprintf(name, sizeof name, "/controllerset/%s_muscles/gains", mbs_posture_joint_names[jn[j]]);
    const mbs_param_info* pi = mbs_system_find_param(sys, name);
    EXPECT_TRUE(pi != NULL);
    if (!pi) continue;
    const double* g = mbs_state_params(st) + pi->index;
    EXPECT_EQ_INT(pi->size, 1 + 2 * M.n);
    EXPECT_NEAR(g[0], 0, 0);  // every joint is crossed by muscles: no torque feedback
    for (int sgn = 0; sgn < 2; sgn++) {
      for (int i = 0; i < nj; i++) {
        double t = 0;
        for (int k = 0; k < M.n; k++) {
          const double x = sgn ? -g[2 + 2 * k] : g[1 + 2 * k];
          most_negative = fmin(most_negative, x);
          t += R[i][k] * dF[k] * x;
        }
        const double want = i == j ? (sgn ? -1 : 1) : 0;
        worst_alloc = fmax(worst_alloc, fabs(t - want));
      }
      checked++;
    }
  }
  printf("  feedback allocation: %d joint efforts, torque per unit effort off by at most %.2e N m "
         "at any joint, smallest increment %.2e\n", checked, worst_alloc, most_negative);
  EXPECT_EQ_INT(checked, 2 * nj);
  EXPECT_TRUE(worst_alloc < 0.02);
  EXPECT_TRUE(most_negative >= 0);
  // standing unperturbed; the platform moved 2 cm back, with the feedback and without it
  mbs_simulation_options so;
  mbs_simulation_options_default(&so);
  so.integrator = MBS_INTEG_ROS34PW2;
  so.integ.accuracy = 1e-3;
  so.report_interval = 0;
  const int ty = mbs_osim_find_coordinate(m, "pelvis_ty");
  for (int run = 0; run < 3; run++) {
    char name_buf[200];
    EXPECT_OK(mbs_state_copy(sys, w, st));
    if (run > 0)
      EXPECT_OK(mbs_state_set_param(sys, w, "/functions/platform_tx/prescribed/scale", 0, -0.02));
    for (int j = 0; run == 2 && j < nj; j++) {
      snprintf(name_buf, sizeof name_buf, "/controllerset/%s_muscles/scale",
               mbs_posture_joint_names[jn[j]]);
      EXPECT_OK(mbs_state_set_param(sys, w, name_buf, 0, 0));
    }
    mbs_posture_fall f = {mbs_osim_coordinate_info(m, ty)->qindex, 0, NAN};
    f.level = 0.75 * mbs_state_q(w)[f.qindex];
    mbs_event ev = mbs_posture_fall_event(&f);
    double drift = 0;
    const double duration = run == 0 ? 2 : 3;
    for (int s = 1; 0.25 * s <= duration && isnan(f.time); s++) {
      rc = mbs_simulate(sys, w, 0.25 * s, &so, &ev, 1, NULL, NULL, NULL);
      EXPECT_OK(rc);
      if (rc) {
        printf("  %s\n", mbs_state_error(w)->message);
        break;
      }
      for (int j = 0; j < nj; j++)
        drift = fmax(drift, fabs(mbs_state_q(w)[qi[j]] - mbs_state_q(st)[qi[j]]));
    }
    static const char* const what[3] = {"unperturbed", "platform 2 cm back",
                                         "platform 2 cm back, feedback off"};
    printf("  %s, %.0f s: ", what[run], duration);
    if (isnan(f.time)) printf("stands, joints at most %.2e rad from quiet standing\n", drift);
    else printf("falls at %.2f s\n", f.time);
    if (run < 2) EXPECT_TRUE(isnan(f.time));
    if (run == 0) EXPECT_TRUE(drift < 5e-3);
    if (run == 2) EXPECT_TRUE(f.time < duration);
  }
  mbs_state_destroy(w);
  mbs_state_destroy(st);
  mbs_osim_free(m);
}

int main(int argc, char** argv) {
  const char* data = NULL;
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--data")) data = argv[i + 1];
  test_errors();
  if (data) {
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/models/gait2392_thelen2003muscle.osim", data);
    FILE* f = fopen(probe, "rb");
    if (!f) {
      printf("SKIPPED: %s not found (set the CMake cache variable MBS_SHARED_DIR to the folder "
             "holding models/)\n", probe);
      return 77;
    }
    fclose(f);
    const char* q = getenv("MBS_TEST_QUICK");
    const int quick = q && *q && strcmp(q, "0") != 0;
    if (quick) printf("MBS_TEST_QUICK: the standing part is left out\n");
    test_model(data, "gait2392_thelen2003muscle", quick);
    test_model(data, "gait2354_simbody", quick);
    test_knee_convention(data);
    if (!quick) test_muscles_mode(data);
  }
  return mbs_test_finish(data ? "test_posture_adapt (published models)" : "test_posture_adapt");
}
