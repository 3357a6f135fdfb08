// Random multibody trees for tests: every mobilizer type, random frames, mass properties,
// functions, forces and states, all from a seeded generator.
#ifndef MBS_TESTS_RANDOM_TREE_H_
#define MBS_TESTS_RANDOM_TREE_H_

#include "mbs/mbs.h"
#include "mbs_test.h"

typedef struct random_tree_opts {
  int nbody;                         // bodies besides Ground
  const mbs_mobilizer_type* types;   // mobilizer types to use, cycled so that all appear
  int ntypes;
  int chain;                         // 1: each body's parent is the previous body
  int gravity;                       // add uniform gravity
  int springs;                       // add two-point and mobility springs (conservative)
  int dampers;                       // add two-point and mobility dampers
  int frames;                        // 1: random X_PF and X_BM rotations and offsets
  int smooth;                        // 1: function-based mobilizers without splines (whose third
                                     // derivatives jump at the knots)
} random_tree_opts;

// all mobilizer types, for random_tree_opts.types
extern const mbs_mobilizer_type random_tree_all_types[MBS_MOB_COUNT];

// a random principal-axes inertia (xx yy zz xy xz yz) obeying the triangle inequality
void random_inertia(mbs_test_rng* rng, double moments[6]);
// a random unit quaternion
void random_quaternion(mbs_test_rng* rng, double q[4]);

// build and finalize a random system; NULL on failure (message printed)
mbs_system* random_tree_create(mbs_test_rng* rng, const random_tree_opts* o);

// random q (quaternions normalized), u, and (if `forces`) applied generalized and body forces
void random_tree_state(mbs_test_rng* rng, const mbs_system* sys, mbs_state* st, double qscale,
                       double uscale, int forces);

// 1 when MBS_TEST_QUICK is set (valgrind runs use fewer cases)
int test_quick(void);

#endif  // MBS_TESTS_RANDOM_TREE_H_
