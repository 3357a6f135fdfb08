// Geometry paths inside core (path.c): the System's data and what force elements use.
#ifndef MBS_CORE_PATH_IMPL_H_
#define MBS_CORE_PATH_IMPL_H_

#include "mbs/path.h"

typedef struct mbs_path_point_desc {
  mbs_path_point_spec spec;   // (its name is in the parameter path)
  int loc_adr;                // its location (3) in the State's parameters
} mbs_path_point_desc;

typedef struct mbs_path_desc {
  char* owner;
  int npoint;
  mbs_path_point_desc* point;
} mbs_path_desc;

struct mbs_path_data {
  int npath, cap;
  mbs_path_desc* path;
};

void mbs_path_data_free(struct mbs_path_data* d);

// the active points in Ground, their velocities, the unit directions of the segments, the
// length and the lengthening speed
typedef struct mbs_path_eval_out {
  int n;                                 // active points
  int index[MBS_PATH_MAX_POINTS];        // which point of the path each is
  double p[3 * MBS_PATH_MAX_POINTS];
  double v[3 * MBS_PATH_MAX_POINTS];     // (with speed)
  double dir[3 * MBS_PATH_MAX_POINTS];   // segment k: from point k to k+1 (0 when degenerate)
  double length, speed;
} mbs_path_eval_out;

// evaluate a path at the State [Position; Velocity with speed]; no stage check
int mbs_path_eval(const mbs_system* sys, const mbs_state* st, int path, mbs_path_eval_out* o,
                  int with_speed);
// add the forces of a tension along the evaluated path (f_mob may be NULL: no moving points'
// generalized forces)
void mbs_path_apply_tension(const mbs_system* sys, const mbs_state* st, int path,
                            const mbs_path_eval_out* o, double tension, double* F_body,
                            double* f_mob);

#endif  // MBS_CORE_PATH_IMPL_H_
