// NCCL's topology XML, the NCCL_TOPO_FILE format: one host as
//
//   <system version="1">
//     <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel">
//       <pci busid="0000:17:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
//         <pci busid="0000:19:00.0" class="0x030200" vendor="0x10de" ...>
//           <gpu dev="0" sm="90"><nvlink target="0000:05:00.0" count="5" tclass="0x068000"/></gpu>
//         </pci>
//         <pci busid="0000:18:00.0" class="0x020700" vendor="0x15b3" ...>
//           <nic><net name="mlx5_0" speed="400000" port="1"/></nic>
//         </pci>
//       </pci>
//     </cpu>
//   </system>
//
// as NCCL_TOPO_DUMP_FILE writes it and cloud vendors publish it for their
// GPU VMs. A <pci> element is a PCI bridge (class 0x06xx) or a device; its
// link_speed and link_width describe the link to its parent. Vendors often
// leave out the <gpu> and <nic> children, so devices are recognised by class
// and vendor: a GPU is an NVIDIA (0x10de) display or 3D controller
// (0x0300, 0x0302; a 3D controller of unnamed vendor counts too), a NIC is
// an InfiniBand (0x0207) or Ethernet (0x0200) controller. Other devices
// (NVMe, the BMC's VGA) and the bridges that lead only to them are left out.
#pragma once

#include <string>

#include "topology/graph.h"
#include "topology/xml_document.h"

namespace braid::topology {

/// The graph of the host the root element of `document`, a <system>,
/// describes, as host 0. Errors name the document's source and line.
Result<Graph> graphFromNcclXml(const XmlDocument& document);

/// A CPU mask as NCCL and Linux write it (32-bit hex words separated by
/// commas, most significant first, "0x" prefixes allowed) as a list of
/// cores: "0000ffff,0000ffff" -> "0-15,32-47".
Result<std::string> cpuMaskToList(const std::string& mask);

}  // namespace braid::topology
