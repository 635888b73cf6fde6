// The HCA ports the verbs transport uses, opened once per process (ib_port_set.h): each with
// its context, protection domain and one completion queue that the proxy polls, and the address
// (GID, LID) queue pairs on it go by.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braid/status.h"
#include "topology/verbs_nics.h"
#include "transport/net/ib/ib_cq_capacity.h"
#include "transport/net/ib/ib_settings.h"
#include "transport/net/ib/verbs_api.h"

namespace braid::transport::ib {

/// Completions one port's CQ holds when opened; it grows with the queue pairs made on it
/// (ib_cq_capacity.h).
inline constexpr int kInitialCqEntries = 1024;

class IbPort {
 public:
  IbPort(const VerbsApi& verbs, std::string name) : verbs_(verbs), name_(std::move(name)) {}
  ~IbPort();
  IbPort(const IbPort&) = delete;
  IbPort& operator=(const IbPort&) = delete;

  const VerbsApi& verbs() const { return verbs_; }
  const std::string& name() const { return name_; }  ///< "mlx5_0:1"

  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  uint8_t port = 1;
  uint8_t linkLayer = IBV_LINK_LAYER_UNSPECIFIED;
  ibv_mtu activeMtu = IBV_MTU_1024;
  uint16_t lid = 0;
  int gidIndex = 0;
  ibv_gid gid{};
  int maxQpWr = 0;
  CqCapacity completions;  ///< cq's entries promised to queue pairs
  /// The bytes this process's send pumps posted on the port: for FIFOs of its own ranks, and
  /// relayed for other ranks' (PXN, ib_relay.h). Said at INFO when a communicator closes.
  std::atomic<uint64_t> postedOwn{0};
  std::atomic<uint64_t> postedRelayed{0};

 private:
  const VerbsApi& verbs_;
  std::string name_;
};

/// A GID table entry, for chooseGid.
struct GidEntry {
  ibv_gid gid;
  GidType type;
};

/// The GID a RoCE port's queue pairs use when BRAID_IB_GID_INDEX does not say: the first entry
/// of RoCE version `rocVersion` whose address is of `family` (AF_INET: IPv4-mapped; AF_INET6:
/// any other that is not link-local), else the first of that version, else -1.
int chooseGid(const std::vector<GidEntry>& table, int rocVersion, int family);

/// The ports that can carry the transport's traffic (port_survey.h: active, allowed by
/// BRAID_IB_HCA, of an InfiniBand or RoCE device, with a usable GID), opened; one INFO line for
/// each device or port set aside. Empty (not an error) where none is usable, and then
/// `*whyNone` (when given) says why: no device, or each one set aside and its reason. An error
/// where opening a usable one fails.
Result<std::vector<std::unique_ptr<IbPort>>> openPorts(const VerbsApi& verbs,
                                                       const IbSettings& settings,
                                                       std::string* whyNone = nullptr);

/// The same ports, as topology describes real ones (VerbsPort), for ports no discovery sees:
/// the emulated HCA's. Opens and closes them; logs nothing (openPorts does, once).
Result<std::vector<topology::VerbsPort>> describePorts(const VerbsApi& verbs,
                                                       const IbSettings& settings);

/// "fe80::1" style text of a GID, for logs.
std::string gidToString(const ibv_gid& gid);

}  // namespace braid::transport::ib
