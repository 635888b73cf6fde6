// braid's own topology format: what BRAID_TOPO_DUMP_FILE and
// `braid-topo --dump` write and BRAID_TOPO_FILE reads back, for one host or
// many. It is written to be read by people: the PCIe tree is the nesting,
// with each element's `bw` the bandwidth of the link to its parent, and the
// links that are not PCIe tree edges are listed after it.
//
//   <braid-topology version="1">
//     <host name="node-a">
//       <cpu name="cpu0" numa="0" cpus="0-55,112-167" vendor="GenuineIntel">
//         <pci name="sw0" busid="0000:15:01.0" bw="48">
//           <gpu name="gpu0" busid="0000:1b:00.0" cuda="0" sm="90" bw="48"/>
//           <nic name="mlx5_0" busid="0000:18:00.0" speed="400" linklayer="InfiniBand"
//                port="1" rdma="1" bw="48"/>
//         </pci>
//       </cpu>
//       <nvswitch name="nvswitch"/>
//       <link a="gpu0" b="nvswitch" type="NVL" bw="450"/>
//     </host>
//     <net name="net"/>
//     <link a="node-a/mlx5_0" b="net" type="NET" bw="50"/>
//   </braid-topology>
//
// Bandwidths are GB/s per direction; NIC speed is Gbit/s. Inside a host,
// links name nodes by `name` (or by `id` where the writer had to add one to
// tell equal names apart); at the top level, host nodes are "host/name".
// Unknown elements and attributes are errors, so a typo never goes unseen.
#pragma once

#include <string>

#include "topology/graph.h"
#include "topology/xml_document.h"

namespace braid::topology {

/// The graph in braid's format, a whole document.
std::string writeBraidXml(const Graph& graph);

/// The graph the root element of `document`, a <braid-topology>, describes.
/// Errors name the document's source and line.
Result<Graph> graphFromBraidXml(const XmlDocument& document);

}  // namespace braid::topology
