// Older OpenSim documents brought to OpenSim 4's layout (osim_upgrade.h).
//
// What OpenSim 4 does on load and what is done here (opensim-core: Model::updateFromXMLNode,
// Joint, Body, PathPoint, GeometryPath and the type renames of RegisterTypes_osimSimulation):
//  - Version 10600 (OpenSim 1.x): the children of <DynamicsEngine><SimbodyEngine> move up into
//    the <Model>; <ActuatorSet> is the <ForceSet>.
//  - Renamed classes: MuscleWrap -> PathWrap, MuscleWrapSet -> PathWrapSet, MusclePoint ->
//    PathPoint, MuscleViaPoint -> ConditionalPathPoint, MovingMusclePoint -> MovingPathPoint,
//    MusclePointSet -> PathPointSet. OpenSim 1.x muscles hold their point and wrap sets
//    themselves; since 2.0 a <GeometryPath> holds them.
//  - Below 30501: a <JointSet> after the <BodySet>; the body named "ground" becomes the
//    model's <Ground> (with its wrap objects and display); every body's <Joint> moves into
//    the JointSet, connecting the frame of its parent_body to the body's frame. Its
//    location_in_parent and orientation_in_parent (location and orientation: in the child)
//    place the joint in the bodies: OpenSim 4 keeps them as offset frames (PhysicalOffset
//    Frames "<parent>_offset" and "<child>_offset" in the joint's <frames>), which is what is
//    written here; orientations are body-fixed X-Y-Z rotations in both. A joint without a
//    name is named "<parent>_to_<child>".
//  - The coordinates of a joint move from <CoordinateSet><objects> to <coordinates>.
//  - Bodies named by a property become sockets naming frames: path points' <body>
//    (socket_parent_frame), moving points' <x_coordinate> (socket_x_coordinate), contact
//    geometry's <body_name> (socket_frame), constraints' <body_1>/<body_2> (socket_body_1/2,
//    or offset frames for the weld's locations and orientations), springs' <body1>/<body2>,
//    bushings' <body_1>/<body_2> with their locations and orientations (offset frames).
//    (Markers' <body>, actuators' <body>/<bodyA>/<bodyB>, conditional points' <coordinate>
//    and TransformAxis <function> wrappers are read as they are.)
//  - Body inertia_xx .. inertia_yz become <inertia>xx yy zz xy xz yz</inertia>.
// Not convertible (OpenSim 4 refuses them too): SIMM or SD/FAST dynamics engines, and joints
// with <reverse>true</reverse>.
#include "osim_upgrade.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/status.h"

static int is_elem(xmlNodePtr n) { return n && n->type == XML_ELEMENT_NODE; }
static const char* tag(xmlNodePtr n) { return (const char*)n->name; }

static xmlNodePtr kid(xmlNodePtr n, const char* name) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is_elem(c) && !strcmp(tag(c), name)) return c;
  return NULL;
}

static xmlNodePtr first_elem(xmlNodePtr n) {
  for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
    if (is_elem(c)) return c;
  return NULL;
}

static int fail(mbs_osim_upgrade_report* r, int code, xmlNodePtr at, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
  va_end(ap);
  r->line = at ? (int)xmlGetLineNo(at) : 0;
  return code;
}

// the trimmed text of element n into buf ("" when absent)
static const char* text(xmlNodePtr n, char* buf, size_t size) {
  buf[0] = 0;
  if (!n) return buf;
  xmlChar* t = xmlNodeGetContent(n);
  const char* s = t ? (const char*)t : "";
  while (isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
  if (len >= size) len = size - 1;
  memcpy(buf, s, len);
  buf[len] = 0;
  xmlFree(t);
  return buf;
}

static void set_lines(xmlNodePtr n, unsigned short line) {
  for (; n; n = n->next) {
    n->line = line;
    set_lines(n->children, line);
  }
}

// a new element <name>value</name> appended to parent (value NULL: empty), at line `line`
static xmlNodePtr add_text(xmlNodePtr parent, const char* name, const char* value, int line) {
  xmlNodePtr e = xmlNewChild(parent, NULL, (const xmlChar*)name, NULL);
  if (!e) return NULL;
  if (value) {
    xmlNodePtr t = xmlNewText((const xmlChar*)value);
    if (!t) return NULL;
    xmlAddChild(e, t);
  }
  set_lines(e, (unsigned short)(line > 65535 ? 65535 : line));
  return e;
}

// move element c to the end of parent
static void move_to(xmlNodePtr c, xmlNodePtr parent) {
  xmlUnlinkNode(c);
  xmlAddChild(parent, c);
}

// every element of the subtree below n (n itself included) renamed by the table
static void rename_types(xmlNodePtr n) {
  static const char* const map[][2] = {
      {"MuscleWrap", "PathWrap"},         {"MuscleWrapSet", "PathWrapSet"},
      {"MusclePoint", "PathPoint"},       {"MuscleViaPoint", "ConditionalPathPoint"},
      {"MovingMusclePoint", "MovingPathPoint"}, {"MusclePointSet", "PathPointSet"}};
  for (; n; n = n->next) {
    if (!is_elem(n)) continue;
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
      if (!strcmp(tag(n), map[i][0])) {
        xmlNodeSetName(n, (const xmlChar*)map[i][1]);
        break;
      }
    rename_types(n->children);
  }
}

// the socket path of the frame of body `name` ("ground": the model's Ground)
static void body_path(const char* name, char* out, size_t size) {
  if (!strcmp(name, "ground")) snprintf(out, size, "/ground");
  else snprintf(out, size, "/bodyset/%s", name);
}

// property `old` (a body's name) of e replaced by the socket `socket` naming its frame
static int body_socket(xmlNodePtr e, const char* old, const char* socket) {
  xmlNodePtr b = kid(e, old);
  if (!b || kid(e, socket)) return 0;
  char name[256], path[300];
  text(b, name, sizeof(name));
  body_path(name, path, sizeof(path));
  if (!add_text(e, socket, path, (int)xmlGetLineNo(b))) return MBS_ERR_NO_MEMORY;
  return 0;
}

// an offset frame `name` on the frame of body `body`, at the translation and orientation
// (body-fixed X-Y-Z) given by e's properties `loc` and `ori` (absent: zero), appended to the
// <frames> of e
static int offset_frame(xmlNodePtr e, const char* name, const char* body, const char* loc,
                        const char* ori, int line) {
  xmlNodePtr frames = kid(e, "frames");
  if (!frames && !(frames = add_text(e, "frames", NULL, line))) return MBS_ERR_NO_MEMORY;
  xmlNodePtr f = xmlNewChild(frames, NULL, (const xmlChar*)"PhysicalOffsetFrame", NULL);
  if (!f || !xmlNewProp(f, (const xmlChar*)"name", (const xmlChar*)name))
    return MBS_ERR_NO_MEMORY;
  set_lines(f, (unsigned short)(line > 65535 ? 65535 : line));
  char path[300], t[512];
  body_path(body, path, sizeof(path));
  if (!add_text(f, "socket_parent", path, line) ||
      !add_text(f, "translation", text(kid(e, loc), t, sizeof(t))[0] ? t : "0 0 0", line) ||
      !add_text(f, "orientation", text(kid(e, ori), t, sizeof(t))[0] ? t : "0 0 0", line))
    return MBS_ERR_NO_MEMORY;
  return 0;
}

// a body property `b` of e made a frame socket `socket` through an offset frame at the
// locations `loc` and `ori` of e (bushings, weld constraints)
static int body_frame_socket(xmlNodePtr e, const char* b, const char* loc, const char* ori,
                             const char* socket, const char* suffix) {
  xmlNodePtr bn = kid(e, b);
  if (!bn || kid(e, socket)) return 0;
  char body[256], frame[300];
  text(bn, body, sizeof(body));
  snprintf(frame, sizeof(frame), "%s_%s", body, suffix);
  const int line = (int)xmlGetLineNo(bn);
  if (offset_frame(e, frame, body, loc, ori, line) || !add_text(e, socket, frame, line))
    return MBS_ERR_NO_MEMORY;
  return 0;
}

// 1.x: the children of <DynamicsEngine><SimbodyEngine> into the model
static int lift_engine(xmlNodePtr model, mbs_osim_upgrade_report* r) {
  xmlNodePtr eng = kid(model, "DynamicsEngine");
  if (!eng) return 0;
  xmlNodePtr sb = kid(eng, "SimbodyEngine");
  if (!sb) {
    xmlNodePtr other = first_elem(eng);
    return fail(r, MBS_ERR_TOPOLOGY, other ? other : eng,
                "the model uses OpenSim 1.x's %s dynamics engine; only SimbodyEngine models "
                "can be converted (as in OpenSim 4)", other ? tag(other) : "unnamed");
  }
  for (xmlNodePtr c = sb->children; c;) {
    xmlNodePtr next = c->next;
    if (is_elem(c)) move_to(c, model);
    c = next;
  }
  xmlUnlinkNode(eng);
  xmlFreeNode(eng);
  return 0;
}

// 1.x muscles: <PathPointSet> and <PathWrapSet> (renamed) into a new <GeometryPath>
static int muscle_paths(xmlNodePtr model, mbs_osim_upgrade_report* r) {
  xmlNodePtr objs = kid(kid(model, "ForceSet"), "objects");
  for (xmlNodePtr e = objs ? objs->children : NULL; e; e = e->next) {
    if (!is_elem(e) || kid(e, "GeometryPath")) continue;
    xmlNodePtr pts = kid(e, "PathPointSet"), wraps = kid(e, "PathWrapSet");
    if (!pts) continue;
    xmlNodePtr gp = add_text(e, "GeometryPath", NULL, (int)xmlGetLineNo(pts));
    if (!gp) return MBS_ERR_NO_MEMORY;
    move_to(pts, gp);
    if (wraps) move_to(wraps, gp);
    r->nmuscles++;
  }
  return 0;
}

// the body named "ground" becomes the model's <Ground>
static int make_ground(xmlNodePtr body_set) {
  xmlNodePtr objs = kid(body_set, "objects");
  for (xmlNodePtr b = objs ? objs->children : NULL; b; b = b->next) {
    if (!is_elem(b) || strcmp(tag(b), "Body")) continue;
    xmlChar* nm = xmlGetProp(b, (const xmlChar*)"name");
    const int is_ground = nm && !strcmp((const char*)nm, "ground");
    xmlFree(nm);
    if (!is_ground) continue;
    xmlNodePtr g = xmlNewNode(NULL, (const xmlChar*)"Ground");
    if (!g || !xmlNewProp(g, (const xmlChar*)"name", (const xmlChar*)"ground")) {
      xmlFreeNode(g);
      return MBS_ERR_NO_MEMORY;
    }
    g->line = b->line;
    static const char* const keep[] = {"WrapObjectSet", "VisibleObject", "geometry"};
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
      xmlNodePtr c = kid(b, keep[i]);
      if (c) move_to(c, g);
    }
    xmlAddPrevSibling(body_set, g);
    xmlUnlinkNode(b);
    xmlFreeNode(b);
    return 0;
  }
  return 0;
}

// inertia_xx .. inertia_yz into one <inertia>
static int body_inertia(xmlNodePtr b) {
  if (kid(b, "inertia") || !kid(b, "inertia_xx")) return 0;
  static const char* const f[6] = {"inertia_xx", "inertia_yy", "inertia_zz",
                                   "inertia_xy", "inertia_xz", "inertia_yz"};
  char all[6 * 64 + 8] = "", t[64];
  for (int i = 0; i < 6; i++) {
    text(kid(b, f[i]), t, sizeof(t));
    strcat(all, i ? " " : "");
    strcat(all, t[0] ? t : "0");
  }
  return add_text(b, "inertia", all, (int)xmlGetLineNo(kid(b, "inertia_xx"))) ? 0
                                                                          : MBS_ERR_NO_MEMORY;
}

// a body's joint into the JointSet
static int move_joint(xmlNodePtr b, xmlNodePtr joint_objs, mbs_osim_upgrade_report* r) {
  xmlNodePtr holder = kid(b, "Joint");
  if (!holder) return 0;
  xmlNodePtr j = first_elem(holder);
  if (!j) {
    xmlUnlinkNode(holder);
    xmlFreeNode(holder);
    return 0;
  }
  char body[256], parent[256], t[64], frame[300];
  xmlChar* bn = xmlGetProp(b, (const xmlChar*)"name");
  snprintf(body, sizeof(body), "%s", bn ? (const char*)bn : "");
  xmlFree(bn);
  text(kid(j, "reverse"), t, sizeof(t));
  if (!strcmp(t, "true"))
    return fail(r, MBS_ERR_TOPOLOGY, kid(j, "reverse"),
                "joint of body '%s': reversed joints (<reverse>true</reverse>) cannot be "
                "converted (OpenSim 4 does not read them either); define it from the parent",
                body);
  text(kid(j, "parent_body"), parent, sizeof(parent));
  if (!parent[0]) snprintf(parent, sizeof(parent), "ground");
  const int line = (int)xmlGetLineNo(j);
  // the joint's frames in the parent and in the child
  snprintf(frame, sizeof(frame), "%s_offset", parent);
  if (offset_frame(j, frame, parent, "location_in_parent", "orientation_in_parent", line) ||
      !add_text(j, "socket_parent_frame", frame, line))
    return MBS_ERR_NO_MEMORY;
  snprintf(frame, sizeof(frame), "%s_offset", body);
  const char* loc = kid(j, "location_in_child") ? "location_in_child" : "location";
  const char* ori = kid(j, "orientation_in_child") ? "orientation_in_child" : "orientation";
  if (offset_frame(j, frame, body, loc, ori, line) ||
      !add_text(j, "socket_child_frame", frame, line))
    return MBS_ERR_NO_MEMORY;
  // its coordinates
  xmlNodePtr cobjs = kid(kid(j, "CoordinateSet"), "objects");
  if (cobjs && !kid(j, "coordinates")) {
    xmlNodePtr list = add_text(j, "coordinates", NULL, (int)xmlGetLineNo(cobjs));
    if (!list) return MBS_ERR_NO_MEMORY;
    for (xmlNodePtr c = cobjs->children; c;) {
      xmlNodePtr next = c->next;
      if (is_elem(c) && !strcmp(tag(c), "Coordinate")) move_to(c, list);
      c = next;
    }
  }
  // a joint without a name is named after the bodies it connects
  xmlChar* jn = xmlGetProp(j, (const xmlChar*)"name");
  const int unnamed = !jn || !*jn;
  xmlFree(jn);
  if (unnamed) {
    snprintf(frame, sizeof(frame), "%s_to_%s", parent, body);
    if (!xmlSetProp(j, (const xmlChar*)"name", (const xmlChar*)frame)) return MBS_ERR_NO_MEMORY;
  }
  move_to(j, joint_objs);
  xmlUnlinkNode(holder);
  xmlFreeNode(holder);
  r->njoints++;
  return 0;
}

// bodies named by properties, as frame sockets, everywhere below n
static int sockets(xmlNodePtr n) {
  for (; n; n = n->next) {
    if (!is_elem(n)) continue;
    const char* t = tag(n);
    int rc = 0;
    if (!strcmp(t, "PathPoint") || !strcmp(t, "ConditionalPathPoint") ||
        !strcmp(t, "MovingPathPoint")) {
      rc = body_socket(n, "body", "socket_parent_frame");
      static const char* const mc[3][2] = {{"x_coordinate", "socket_x_coordinate"},
                                           {"y_coordinate", "socket_y_coordinate"},
                                           {"z_coordinate", "socket_z_coordinate"}};
      for (int k = 0; k < 3 && !rc; k++) {
        xmlNodePtr c = kid(n, mc[k][0]);
        char v[256];
        if (c && !kid(n, mc[k][1]) &&
            !add_text(n, mc[k][1], text(c, v, sizeof(v)), (int)xmlGetLineNo(c)))
          rc = MBS_ERR_NO_MEMORY;
      }
    } else if (!strncmp(t, "Contact", 7) && kid(n, "body_name")) {
      rc = body_socket(n, "body_name", "socket_frame");
    } else if (!strcmp(t, "PointConstraint") || !strcmp(t, "ConstantDistanceConstraint")) {
      rc = body_socket(n, "body_1", "socket_body_1");
      if (!rc) rc = body_socket(n, "body_2", "socket_body_2");
    } else if (!strcmp(t, "PointOnLineConstraint")) {
      rc = body_socket(n, "line_body", "socket_line_body");
      if (!rc) rc = body_socket(n, "follower_body", "socket_follower_body");
    } else if (!strcmp(t, "WeldConstraint")) {
      rc = body_frame_socket(n, "body_1", "location_body_1", "orientation_body_1",
                             "socket_frame1", "weld1");
      if (!rc)
        rc = body_frame_socket(n, "body_2", "location_body_2", "orientation_body_2",
                               "socket_frame2", "weld2");
    } else if (!strcmp(t, "BushingForce")) {
      rc = body_frame_socket(n, "body_1", "location_body_1", "orientation_body_1",
                             "socket_frame1", "bushing1");
      if (!rc)
        rc = body_frame_socket(n, "body_2", "location_body_2", "orientation_body_2",
                               "socket_frame2", "bushing2");
    } else if (!strcmp(t, "PointToPointSpring")) {
      rc = body_socket(n, "body1", "socket_body1");
      if (!rc) rc = body_socket(n, "body2", "socket_body2");
    }
    if (rc) return rc;
    if ((rc = sockets(n->children))) return rc;
  }
  return 0;
}

int mbs_osim_upgrade(xmlNodePtr model, int version, mbs_osim_upgrade_report* r) {
  memset(r, 0, sizeof(*r));
  int rc;
  if (version >= 30500) return 0;
  if ((rc = lift_engine(model, r))) return rc;
  xmlNodePtr as = kid(model, "ActuatorSet");
  if (as && !kid(model, "ForceSet")) xmlNodeSetName(as, (const xmlChar*)"ForceSet");
  rename_types(model->children);
  if ((rc = muscle_paths(model, r))) return rc;
  xmlNodePtr body_set = kid(model, "BodySet");
  if (body_set && !kid(model, "JointSet")) {
    if ((rc = make_ground(body_set))) return fail(r, rc, body_set, "out of memory");
    xmlNodePtr js = xmlNewNode(NULL, (const xmlChar*)"JointSet");
    xmlNodePtr jobjs = js ? xmlNewChild(js, NULL, (const xmlChar*)"objects", NULL) : NULL;
    if (!jobjs) {
      xmlFreeNode(js);
      return fail(r, MBS_ERR_NO_MEMORY, model, "out of memory");
    }
    set_lines(js, body_set->line);
    xmlAddNextSibling(body_set, js);
    xmlNodePtr objs = kid(body_set, "objects");
    for (xmlNodePtr b = objs ? objs->children : NULL; b; b = b->next) {
      if (!is_elem(b) || strcmp(tag(b), "Body")) continue;
      if ((rc = body_inertia(b)) || (rc = move_joint(b, jobjs, r)))
        return rc == MBS_ERR_NO_MEMORY ? fail(r, rc, b, "out of memory") : rc;
    }
  }
  if ((rc = sockets(model->children))) return fail(r, rc, model, "out of memory");
  return 0;
}
