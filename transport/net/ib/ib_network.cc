#include "transport/net/ib/ib_network.h"

#include <utility>

#include "transport/net/ib/verbs_library.h"

namespace braid::transport::ib {

IbNetwork::IbNetwork(const VerbsApi* verbs, IbSettings settings, std::shared_ptr<IbPortSet> shared,
                     int first)
    : verbs_(verbs),
      settings_(std::move(settings)),
      shared_(std::move(shared)),
      ports_(shared_->ports()),
      first_(first) {}

IbNetwork::~IbNetwork() = default;

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

std::string IbNetwork::describe() const {
  std::string text;
  for (const auto& port : ports_) text += (text.empty() ? "" : ", ") + port->name();
  if (settings_.emulate > 0) text += " (emulated)";
  return text;
}

}  // namespace braid::transport::ib
