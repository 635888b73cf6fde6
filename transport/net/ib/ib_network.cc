#include "transport/net/ib/ib_network.h"

#include <string>
#include <utility>

#include "base/log.h"
#include "transport/net/gpu_net_bytes.h"
#include "transport/net/ib/verbs_library.h"

namespace braid::transport::ib {

IbNetwork::IbNetwork(const VerbsApi* verbs, IbSettings settings, std::shared_ptr<IbPortSet> shared,
                     int first)
    : verbs_(verbs),
      settings_(std::move(settings)),
      shared_(std::move(shared)),
      ports_(shared_->ports()),
      first_(first) {}

IbNetwork::~IbNetwork() {
  // What this process's GPU FIFOs moved so far, by where the NIC found the bytes: the figure a
  // run with GPUDirect RDMA checks for zero staged bytes (gpu_net_bytes.h).
  const uint64_t device = net::deviceRegisteredBytes();
  const uint64_t staged = net::stagedBytes();
  if (device + staged > 0) {
    BRAID_INFO(
        "verbs: GPU FIFOs moved %llu bytes through device-memory registrations, %llu "
        "staged through host memory; %llu flushes",
        static_cast<unsigned long long>(device), static_cast<unsigned long long>(staged),
        static_cast<unsigned long long>(net::flushes()));
  }
  // What this process's send pumps posted on each port, its own FIFOs' and those it relays
  // for other ranks of its host (PXN): where a test sees which process's NIC carried a send.
  std::string posted;
  for (const IbPort* port : ports_) {
    const uint64_t own = port->postedOwn.load();
    const uint64_t relayed = port->postedRelayed.load();
    if (own + relayed == 0) continue;
    posted += (posted.empty() ? "" : ", ") + port->name() + " " + std::to_string(own) + " own + " +
              std::to_string(relayed) + " relayed";
  }
  if (!posted.empty()) BRAID_INFO("verbs: bytes posted by this process: %s", posted.c_str());
}

Result<std::unique_ptr<IbNetwork>> IbNetwork::open(const IbSettings& settings, int localRank,
                                                   std::string* why) {
  if (settings.disable) {
    *why = "BRAID_IB_DISABLE is set";
    return std::unique_ptr<IbNetwork>();
  }
  const VerbsApi* verbs = nullptr;
  if (settings.emulate > 0) {
    emulateDevices(settings.emulate, settings.emulateKinds);
    verbs = &emulatedVerbs();
  } else {
    Result<const VerbsApi*> library = libraryVerbs();
    if (!library.ok()) {
      *why = library.status().message();
      return std::unique_ptr<IbNetwork>();
    }
    verbs = library.value();
  }
  // Opened once per process and shared with its other communicators (ib_port_set.h).
  BRAID_ASSIGN_OR_RETURN(std::shared_ptr<IbPortSet> shared,
                         IbPortSet::acquire(*verbs, settings, why));
  if (shared == nullptr) return std::unique_ptr<IbNetwork>();
  const int first = localRank % static_cast<int>(shared->ports().size());
  return std::unique_ptr<IbNetwork>(new IbNetwork(verbs, settings, std::move(shared), first));
}

int IbNetwork::portFor(const std::string& nic) const {
  for (size_t i = 0; i < ports_.size() && !nic.empty(); ++i) {
    if (ports_[i]->name() == nic) return static_cast<int>(i);
  }
  return first_;
}

bool IbNetwork::opened(const std::string& nic) const {
  for (const IbPort* port : ports_) {
    if (port->name() == nic) return true;
  }
  return false;
}

std::string IbNetwork::describe() const {
  std::string text;
  for (const auto& port : ports_) text += (text.empty() ? "" : ", ") + port->name();
  if (settings_.emulate > 0) text += " (emulated)";
  return text;
}

}  // namespace braid::transport::ib
