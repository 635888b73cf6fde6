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
#pragma once

#include "braid/status.h"
#include "topology/xml_document.h"

namespace braid::topology {

/// kInvalidArgument naming the line of the first <object> of `document`
/// (hwloc's <topology>) that hwloc could not take.
Status checkHwlocXml(const XmlDocument& document);

}  // namespace braid::topology
