// What each emulated device presents: a good RoCE v2 HCA, or one of the devices a real host
// lists that cannot carry the verbs transport's RC traffic, so that tests can show the transport
// skipping them (transport/net/ib/port_survey.h) and falling back to sockets.
//
// BRAID_IB_EMULATE_KINDS=efa,roce (read by Config alone, handed to emulateDevices) makes emu_0
// an EFA-like device and emu_1 a good one. Each kind reports what rdma-core reports for such a
// device, not only the field braid checks:
//
//   roce      node type CA, transport IB, vendor 0, link layer Ethernet, port ACTIVE, a RoCE v1
//             link-local GID then a RoCE v2 GID per interface address (emulated_gid_table.h)
//   efa       AWS's Elastic Fabric Adapter: node type and transport UNSPECIFIED, vendor 0x1d0f
//             (Amazon) part 0xefa0, link layer UNSPECIFIED, port ACTIVE (EFA's always is), one
//             GID (its own address, not an IP address), and ibv_create_qp refuses every QP type
//             but UD and the driver's SRD with EOPNOTSUPP, so never an RC queue pair
//   roce_v1   a RoCE port whose table has the link-local RoCE v1 GID only (no IP address on its
//             netdev, or a switch configured for v1): no RoCE v2 GID to route by
//   no_gid    a RoCE port with an empty GID table (gid_tbl_len 0)
//   down      a good RoCE device whose port is DOWN (physical state Polling: no link)
#pragma once

#include <string>
#include <vector>

#include "braid/status.h"
#include "emulation/ib/emulated_gid_table.h"

namespace braid::transport::ib::emulated {

enum class DeviceKind { kRoce, kEfa, kRoceV1Only, kNoGid, kPortDown };

/// "roce", "efa", ... as BRAID_IB_EMULATE_KINDS spells it.
const char* kindName(DeviceKind kind);
/// The kinds of "efa,roce"; an error naming the word that is no kind, and the kinds there are.
Result<std::vector<DeviceKind>> parseDeviceKinds(const std::string& text);

/// The kinds of the devices from now on, emu_0 first; devices past the list are kRoce.
void setDeviceKinds(std::vector<DeviceKind> kinds);
/// What device `index` presents.
DeviceKind deviceKind(int index);

/// The GID table a device of `kind` shows, read now (emulated_gid_table.h): EFA's one entry
/// is its own address, which sysfs types "IB/RoCE v1" as it does every GID of a port that is
/// not RoCE v2; here the device's link-local GID.
std::vector<GidEntry> gidTableOf(DeviceKind kind, int deviceIndex);

/// rdma-core's vendor id of EFA devices (Amazon's PCI vendor id), and the part id reported.
constexpr unsigned kAmazonVendorId = 0x1d0f;
constexpr unsigned kEfaPartId = 0xefa0;

}  // namespace braid::transport::ib::emulated
