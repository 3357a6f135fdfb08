// Geometry paths inside core (path.c): the System's data and what force elements use.
#ifndef MBS_CORE_PATH_IMPL_H_
#define MBS_CORE_PATH_IMPL_H_

#include "mbs/path.h"
#include "mbs/wrap.h"

typedef struct mbs_path_point_desc {
  mbs_path_point_spec spec;   // (its name is in the parameter path)
  int loc_adr;                // its location (3) in the State's parameters
} mbs_path_point_desc;

// a wrap object: shape and quadrant here, sizes and translation in the State's parameters
typedef struct mbs_wrap_desc {
  char* name;
  int body;
  int active;
  double R_BW[9];             // orientation in its body
  int trans_adr;              // translation (3) in its body
  int size_adr[2];            // sphere: radius; cylinder: radius, length; ellipsoid: dimensions
                              // (3); torus: inner_radius, outer_radius
  mbs_wrap_object obj;        // shape and quadrant (sizes filled from the parameters)
} mbs_wrap_desc;

// a path's use of a wrap object (OpenSim's PathWrap)
typedef struct mbs_path_wrap_desc {
  int wrap;                   // the wrap object
  mbs_wrap_method method;
  int start, end;             // 1-based range of the path's points considered; < 1: first, last
  int mem;                    // its mbs_wrap_memory in the State
} mbs_path_wrap_desc;

typedef struct mbs_path_desc {
  char* owner;
  int npoint;
  mbs_path_point_desc* point;
  int nwrap;
  mbs_path_wrap_desc wrap[MBS_PATH_MAX_WRAPS];
} mbs_path_desc;

struct mbs_path_data {
  int npath, cap;
  mbs_path_desc* path;
  int nwrapobj, wrapcap;
  mbs_wrap_desc* wrapobj;
};

void mbs_path_data_free(struct mbs_path_data* d);

// Instance: the points' locations finite, the wrap objects' sizes valid
int mbs_paths_realize_instance(const mbs_system* sys, mbs_state* st);

#define MBS_PATH_MAX_ENTRIES (MBS_PATH_MAX_POINTS + 2 * MBS_PATH_MAX_WRAPS)

// The path now: its active points and the tangent points of its wraps in order, in Ground,
// their velocities, the unit directions of the straight segments, the length and the
// lengthening speed. Entry k is path point index[k] (>= 0) or, for index[k] < 0, a tangent
// point of path wrap w = (-index[k] - 1) / 2 (first tangent point when (-index[k] - 1) is even),
// fixed on the wrap object's body; the segment from a wrap's first tangent point to its second
// lies on the wrap surface (dir 0: its forces are internal to that body).
typedef struct mbs_path_eval_out {
  int n;                                   // entries
  int index[MBS_PATH_MAX_ENTRIES];
  int body[MBS_PATH_MAX_ENTRIES];
  double p[3 * MBS_PATH_MAX_ENTRIES];
  double v[3 * MBS_PATH_MAX_ENTRIES];      // (with speed)
  double seg[MBS_PATH_MAX_ENTRIES];        // length of segment k (from entry k to k+1)
  double dir[3 * MBS_PATH_MAX_ENTRIES];    // segment k's unit direction (0: degenerate, or on
                                           // a wrap surface)
  double length, speed;
} mbs_path_eval_out;

// evaluate a path at the State [Position; Velocity with speed]; no stage check. Wrapping reads
// and updates the wraps' memories in the State. On failure (a point not finite) the length
// and speed are NaN and the error is in the State.
int mbs_path_eval(const mbs_system* sys, mbs_state* st, int path, mbs_path_eval_out* o,
                  int with_speed);
// add the forces of a tension along the evaluated path (f_mob may be NULL: no moving points'
// generalized forces)
void mbs_path_apply_tension(const mbs_system* sys, const mbs_state* st, int path,
                            const mbs_path_eval_out* o, double tension, double* F_body,
                            double* f_mob);

#endif  // MBS_CORE_PATH_IMPL_H_
