// The process's shared verbs ports: see ib_port_set.h.
#include "transport/net/ib/ib_port_set.h"

#include <unistd.h>

#include <mutex>
#include <string>
#include <utility>

namespace braid::transport::ib {
namespace {

/// What makes two communicators' ports the same ports.
struct Key {
  const VerbsApi* verbs;
  pid_t pid;
  std::string hca;
  int gidIndex;
  int rocVersion;
  std::string addrFamily;
  int emulate;
  std::string emulateKinds;

  bool operator==(const Key& o) const {
    return verbs == o.verbs && pid == o.pid && hca == o.hca && gidIndex == o.gidIndex &&
           rocVersion == o.rocVersion && addrFamily == o.addrFamily && emulate == o.emulate &&
           emulateKinds == o.emulateKinds;
  }
};

Key keyOf(const VerbsApi& verbs, const IbSettings& s) {
  return {&verbs,       ::getpid(),   s.hca,     s.gidIndex,
          s.rocVersion, s.addrFamily, s.emulate, s.emulateKinds};
}

/// The live sets: weak, so that a set closes with its last communicator.
struct Registry {
  std::mutex mu;
  std::vector<std::pair<Key, std::weak_ptr<IbPortSet>>> sets;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

IbPortSet::IbPortSet(const VerbsApi& verbs, std::vector<std::unique_ptr<IbPort>> ports)
    : ports_(std::move(ports)) {
  for (auto& port : ports_) raw_.push_back(port.get());
  proxy_ = std::make_unique<IbProxy>(raw_);
  asyncEvents_ = std::make_unique<IbAsyncEvents>(
      verbs, raw_, [this](IbAsyncFailure f) { proxy_->failAsync(std::move(f)); },
      [this](const IbPort* port) { proxy_->portBack(port); });
}

IbPortSet::~IbPortSet() {
  asyncEvents_.reset();
  proxy_.reset();
}

Result<std::shared_ptr<IbPortSet>> IbPortSet::acquire(const VerbsApi& verbs,
                                                      const IbSettings& settings,
                                                      std::string* whyNone) {
  const Key key = keyOf(verbs, settings);
  Registry& r = registry();
  // Held while opening, so that communicators made at once on several threads share too.
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.sets.begin(); it != r.sets.end();) {
    std::shared_ptr<IbPortSet> live = it->second.lock();
    if (!live) {
      it = r.sets.erase(it);
      continue;
    }
    if (it->first == key) return live;
    ++it;
  }
  BRAID_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<IbPort>> ports,
                         openPorts(verbs, settings, whyNone));
  if (ports.empty()) return std::shared_ptr<IbPortSet>();
  std::shared_ptr<IbPortSet> set(new IbPortSet(verbs, std::move(ports)));
  r.sets.emplace_back(key, set);
  return set;
}

}  // namespace braid::transport::ib
