// Scaling an OpenSim model to a subject, as OpenSim 4's ScaleTool does (its ModelScaler, and the
// model edits of its GenericModelMaker and MarkerPlacer), on the model's document: the numbers
// of the OpenSim 4 document are scaled in place and the document is written out again (older
// documents are first converted to OpenSim 4's layout, as the reader converts them), so that
// the scaled model is an OpenSim 4 model that OpenSim and mbstudy both read.
//
// A segment is Ground or a body; its scale factors (sx, sy, sz) apply along its own axes. As
// OpenSim 4's Model::scale, with s the factors of a frame's base segment (the body it is fixed
// to, through any chain of PhysicalOffsetFrames):
//  - bodies: mass_center *= s; the attached geometry's scale_factors *= s (visual only);
//  - PhysicalOffsetFrames (the joints' frames and any other): translation *= s of the frame
//    they are offset from (their orientation is kept);
//  - markers, path points (PathPoint, ConditionalPathPoint) and stations: location *= s of
//    their frame; MovingPathPoint: each location function becomes a MultiplierFunction of
//    scale s[k] (or its scale is multiplied by s[k]);
//  - wrap objects: translation *= s; sphere radius *= mean(s); cylinder radius *=
//    (|Rx∘s| + |Ry∘s|) / 2 and length *= |Rz∘s|; ellipsoid dimensions[k] *= |Rk∘s|; torus radii
//    *= (|Rx∘s| + |Ry∘s|) / 2, where Rk is the object's k-th axis in its frame (from
//    xyz_body_rotation) and ∘ the elementwise product;
//  - CustomJoint: the functions of the translation axes (not LinearFunctions of slope 1 and
//    intercept 0, which are coordinates) become MultiplierFunctions of scale |axis|·s of the
//    joint's parent frame; EllipsoidJoint: radii_x_y_z *= s of the parent frame;
//    CoordinateCouplerConstraint: when its dependent coordinate is a translation, scale_factor
//    *= s[0] of the parent frame of that coordinate's joint (which must scale uniformly);
//  - muscles (optimal_fiber_length and tendon_slack_length), Ligament and PathSpring
//    (resting_length) and Blankevoort1991Ligament (slack_length): multiplied by the ratio of
//    the path's length after and before scaling, both at the model's default pose;
//  - masses and inertias (Body::scaleInertialProperties): without preserve_mass_distribution,
//    mass *= |sx sy sz|; inertia about the mass centre *= (mass ratio) s^2 when s is uniform,
//    else the body is taken for a cylinder along its axis of least inertia whose radius and
//    length are scaled; then, when a subject mass is given, every mass and inertia is
//    multiplied by subject mass / total mass.
// Contact geometry is not scaled (OpenSim 4 does not scale it either); such elements on scaled
// bodies are named in warnings.
#ifndef MBS_SCALE_H_
#define MBS_SCALE_H_

#include <stddef.h>

#include "mbs/osim.h"
#include "mbs/status.h"
#include "mbs/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_scale_model mbs_scale_model;

// Read a model document (older versions converted to OpenSim 4's layout); NULL on failure with
// `file:line: what` in err.
mbs_scale_model* mbs_scale_model_read(const char* path, mbs_error* err);
// The same from text in memory (`name` stands for the file in messages).
mbs_scale_model* mbs_scale_model_parse(const char* text, size_t n, const char* name,
                                       mbs_error* err);
void mbs_scale_model_free(mbs_scale_model* sm);

// GenericModelMaker's marker_set_file (OpenSim's Model::updateMarkerSet): each marker of the
// MarkerSet document replaces the model's marker of that name or is added to the model's
// MarkerSet (markers naming their body by <body> are written as OpenSim 4's
// socket_parent_frame). Counts in *nreplaced, *nadded (may be NULL).
int mbs_scale_model_update_markers(mbs_scale_model* sm, const char* marker_set_file,
                                   int* nreplaced, int* nadded, mbs_error* err);

// The model of the document as it is now (mbs_osim_parse; o may be NULL); free with
// mbs_osim_free. NULL on failure with the message in err.
mbs_osim_model* mbs_scale_model_build(const mbs_scale_model* sm, const mbs_osim_options* o,
                                      mbs_error* err);

// Segments a Scale may name: 0 is Ground, then the bodies in the BodySet's order.
int mbs_scale_model_nsegment(const mbs_scale_model* sm);
const char* mbs_scale_model_segment(const mbs_scale_model* sm, int i);
int mbs_scale_model_find_segment(const mbs_scale_model* sm, const char* name);  // -1 if none
// The other physical frames (PhysicalOffsetFrames, in document order; names may repeat), which
// OpenSim's scale set file lists with factors 1.
int mbs_scale_model_noffset_frame(const mbs_scale_model* sm);
const char* mbs_scale_model_offset_frame(const mbs_scale_model* sm, int i);
// Sum of the bodies' masses, kg.
double mbs_scale_model_total_mass(const mbs_scale_model* sm);

typedef struct mbs_scale_report {
  double mass_before, mass_after;  // total, kg
  int nframes;                     // offset frames scaled
  int nmarkers, npoints, nwraps;   // markers, path points and stations, wrap objects scaled
  int nfunctions;                  // CustomJoint axes and moving points made multipliers
  int nlengths;                    // path forces whose lengths were scaled
} mbs_scale_report;

// Scale the model: factors holds 3 numbers per segment (nsegment x 3, Ground's first; each
// finite and non-zero). subject_mass > 0: the total mass afterwards (else masses scale with the
// bodies only, or not at all with preserve_mass_distribution). The path lengths are taken from
// models built with options o (may be NULL). rep may be NULL. Warnings (what is not scaled) are
// kept in the model (mbs_scale_model_warning).
int mbs_scale_model_apply(mbs_scale_model* sm, const double* factors, double subject_mass,
                          int preserve_mass_distribution, const mbs_osim_options* o,
                          mbs_scale_report* rep, mbs_error* err);

int mbs_scale_model_nwarning(const mbs_scale_model* sm);
const char* mbs_scale_model_warning(const mbs_scale_model* sm, int i);

// MarkerPlacer's model edits. Delete the markers whose names are not among names[0..n-1]
// (OpenSim's Model::deleteUnusedMarkers); the count in *ndeleted (may be NULL).
int mbs_scale_model_keep_markers(mbs_scale_model* sm, const char* const* names, int n,
                                 int* ndeleted);
// Put marker `name` at p_B, a point in the frame of the body it is fixed to (the base of its
// parent frame): its location property becomes that point in its parent frame.
int mbs_scale_model_set_marker(mbs_scale_model* sm, const char* name, const double p_B[3],
                               mbs_error* err);

// Rename the model (its Model element's name attribute).
int mbs_scale_model_set_name(mbs_scale_model* sm, const char* name);

// The document: to a file, or as text (malloc'd, its length in *n when n is not NULL).
int mbs_scale_model_write(const mbs_scale_model* sm, const char* path, mbs_error* err);
char* mbs_scale_model_text(const mbs_scale_model* sm, size_t* n, mbs_error* err);
// The model's MarkerSet as an OpenSim document of its own (MarkerPlacer's output_marker_file).
int mbs_scale_model_write_markers(const mbs_scale_model* sm, const char* path, mbs_error* err);

// An OpenSim ScaleSet document: a <Scale> (scales, segment, apply true) per segment;
// factors holds 3 numbers per segment.
int mbs_scale_set_write(const char* path, int n, const char* const* segments,
                        const double* factors, mbs_error* err);

// Numbers as OpenSim 4 writes them: the shortest text that reads back as the same double.
void mbs_scale_format_number(char* buf, size_t n, double v);

//---------------------------------- measurements ----------------------------------------------
// The frames OpenSim's MarkerData::findFrameRange picks for a time range: *i0 the last frame at
// or before t0 (the first frame if none), *i1 the first frame from *i0 on at or after t1 (the
// last frame if none). MBS_ERR_ARGUMENT when t0 > t1 or the table has no rows.
int mbs_scale_frame_range(const mbs_table* markers, double t0, double t1, int* i0, int* i1);
// The mean over frames i0..i1 of the distance between markers a and b of a marker table (their
// indexes in markers->markers); NaN when either is missing (not finite) in one of the frames,
// as OpenSim's average is then.
double mbs_scale_marker_distance(const mbs_table* markers, int a, int b, int i0, int i1);

#ifdef __cplusplus
}
#endif

#endif  // MBS_SCALE_H_
