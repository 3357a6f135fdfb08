// Reading XML documents (OpenSim models, setup, external loads, controls and force set files)
// with libxml2, safely: one helper that every XML reader of mbs_io goes through. Internal to
// mbs_io (defined in osim.c).
//
// libxml2's limits stay on (no XML_PARSE_HUGE: a text node is at most 10 MB, far above the
// spline data of the largest OpenSim models), entities are never substituted (no
// XML_PARSE_NOENT), no DTD is loaded or validated, nothing is fetched from the network
// (XML_PARSE_NONET), and a document that declares entities (<!ENTITY ...> in its document type,
// which no OpenSim file needs) is refused as soon as the parser meets the declaration: a
// "billion laughs" document costs no more than reading its first lines.
#ifndef MBS_IO_XML_READ_H_
#define MBS_IO_XML_READ_H_

#include <libxml/tree.h>
#include <stddef.h>

// Why a document was not read.
typedef struct mbs_xml_failure {
  int line;        // line of the problem (0 when unknown)
  int io;          // the file could not be opened or read (libxml2's I/O errors)
  int entities;    // refused: the document declares entities
  char msg[384];   // what is wrong, without file and line (no trailing newline)
} mbs_xml_failure;

// Parse `n` bytes of `text` (named `path` in libxml2's records) or, when `text` is NULL, the
// file `path`. `options` are XML_PARSE_* flags (e.g. XML_PARSE_NOBLANKS); XML_PARSE_HUGE,
// NOENT, DTDLOAD, DTDATTR, DTDVALID and XINCLUDE are removed, NONET, NOERROR and NOWARNING
// added. `what` names the kind of document in the message for entity declarations ("a model
// file"). Returns the document (xmlFreeDoc), or NULL with *f filled.
xmlDocPtr mbs_xml_read(const char* path, const char* text, size_t n, int options,
                       const char* what, mbs_xml_failure* f);

#endif  // MBS_IO_XML_READ_H_
