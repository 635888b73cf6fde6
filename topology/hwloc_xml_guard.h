// What hwloc's XML import relies on but does not check, checked before a
// file reaches it: hwloc runs inside braid's process, so a file that breaks
// it would crash the program that loaded libnccl.so.2, not refuse the file.
//
// Each rule is one topology_file_fuzz found against Debian 12's hwloc 2.9.0
// (docs/reliability.md), reproduced without braid:
//   - an <object> with cpuset= and no complete_cpuset=, or nodeset= and no
//     complete_nodeset= (lstopo always writes both): hwloc_topology_load
//     dereferences the missing bitmap.
//   - a bitmap attribute whose text hwloc's own parser refuses
//     (complete_cpuset="0x%0000003"): hwloc keeps NULL for it and crashes the same way.
//   - a cpuset= outside its complete_cpuset= (or a nodeset= outside its
//     complete_nodeset=): on a root <object> with no children, cpuset="0x3"
//     complete_cpuset="0x4" nodeset="0x1" complete_nodeset="0x1" makes
//     hwloc_topology_load dereference NULL. hwloc documents that a complete set
//     holds its set, and its XML import says it does not check.
//   - a bitmap that starts with a comma (cpuset=",x00000001"): hwloc_bitmap_sscanf
//     counts fields from the second character and aborts on assert(count > 0).
//     Every bitmap attribute (of <object>, <cpukind>, <memattr_value>) must now
//     have the form hwloc writes before hwloc's parser sees it.
// parseTopology then gives hwloc the text pugixml read (XmlDocument::canonicalText),
// not the file, so that what was checked is what hwloc reads.
#pragma once

#include "braid/status.h"
#include "topology/xml_document.h"

namespace braid::topology {

/// kInvalidArgument naming the line of the first element of `document`
/// (hwloc's <topology>) that hwloc could not take.
Status checkHwlocXml(const XmlDocument& document);

}  // namespace braid::topology
