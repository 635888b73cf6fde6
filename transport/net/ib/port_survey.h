// Which ports of the host's verbs devices can carry the verbs transport's traffic, and why
// each other one cannot.
//
// ibv_get_device_list lists every RDMA device the kernel knows, not only InfiniBand and RoCE
// HCAs: on AWS p5 the EFA devices are there with an active port, but EFA makes no RC queue
// pairs (UD and its own SRD only), has no link layer to verbs and no RoCE GID. A host may also
// have a RoCE port whose netdev has no IP address (no RoCE v2 GID), a port whose cable is out,
// or a storage NIC BRAID_IB_HCA leaves out. None of these is an error: the survey sets each
// aside with the reason, the transport logs one INFO line for each, and uses the ports that
// remain; where none remains, the communicator goes over sockets (or fails naming the reasons,
// under BRAID_NET=IB), as NCCL does.
//
// The checks, in order, each the first reason only:
//   device   BRAID_IB_HCA allows none of its ports; it cannot be opened or queried; it is not
//            an InfiniBand CA of IB transport (node type and transport, as libibverbs reports
//            them in the ibv_device: EFA's are both UNSPECIFIED, iWARP's transport IWARP)
//   port     BRAID_IB_HCA leaves it out; it is not ACTIVE; its link layer is neither InfiniBand
//            nor Ethernet (RoCE); it has no GID the queue pairs can use (an empty table, no RoCE
//            v2 GID of BRAID_IB_ADDR_FAMILY, no entry at BRAID_IB_GID_INDEX)
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "transport/net/ib/ib_settings.h"
#include "transport/net/ib/verbs_api.h"

namespace braid::transport::ib {

/// A port that passed every check: where it is and what the survey read of it.
struct UsablePort {
  ibv_device* device = nullptr;  ///< in the list the survey was given
  std::string deviceName;        ///< "mlx5_0"
  uint8_t number = 1;
  ibv_port_attr attr{};
  int gidIndex = 0;  ///< the GID its queue pairs use
};

/// A device ("efa_0") or a port ("mlx5_1:1") set aside, and why.
struct SkippedPort {
  std::string name;
  std::string why;
};

struct PortSurvey {
  std::vector<UsablePort> usable;
  std::vector<SkippedPort> skipped;
  /// "efa_0: not an InfiniBand ... ; mlx5_1:1: port DOWN", for the reason no port is usable.
  std::string skippedText() const;
  /// One INFO line for each port or device set aside.
  void logSkipped() const;
};

/// Surveys the `count` devices of `list` (ibv_get_device_list's), opening each for the queries
/// and closing it again.
PortSurvey surveyPorts(const VerbsApi& verbs, ibv_device** list, int count,
                       const IbSettings& settings);

/// Why a device of this node type, transport and vendor cannot carry RC verbs traffic; empty
/// where it can (an InfiniBand CA: InfiniBand and RoCE HCAs, rxe).
std::string whyNotRcDevice(int nodeType, int transportType, uint32_t vendorId);

}  // namespace braid::transport::ib
