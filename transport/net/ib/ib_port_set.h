// The verbs ports of this process, shared by all its communicators.
//
// Each communicator used to open every port again: a device context, a protection domain and a
// completion queue per port per communicator, a proxy thread and an async event thread each. A
// framework makes many communicators in one process (one per process group, per pair for
// point-to-point), so that cost contexts (an uverbs file and doorbell pages each), threads and
// CPU for pollers that mostly find nothing. An IbPortSet is those ports opened once, with the
// one proxy that polls their CQs and drives every FIFO end of every communicator on them, and
// the one thread that reads their async events (the events of a context must have one reader,
// or some are missed): communicators that ask for the same ports share it, and it closes with
// the last of them.
//
// Shared per (verbs table, the settings that choose and address ports: BRAID_IB_HCA,
// IB_GID_INDEX, IB_ROCE_VERSION_NUM, IB_ADDR_FAMILY, IB_EMULATE) and per process: a child
// forked after its parent opened a set opens its own, since the parent's threads are not in it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "braid/status.h"
#include "transport/net/ib/ib_async_events.h"
#include "transport/net/ib/ib_device.h"
#include "transport/net/ib/ib_proxy.h"
#include "transport/net/ib/ib_settings.h"

namespace braid::transport::ib {

class IbPortSet {
 public:
  /// The ports `settings` select through `verbs`: those a live communicator of this process
  /// opened already with the same port settings, or opened now. nullptr (not an error) where no
  /// port is usable, and `*whyNone` (when given) says why (openPorts); an error where opening one
  /// fails.
  static Result<std::shared_ptr<IbPortSet>> acquire(const VerbsApi& verbs,
                                                    const IbSettings& settings,
                                                    std::string* whyNone = nullptr);
  ~IbPortSet();
  IbPortSet(const IbPortSet&) = delete;
  IbPortSet& operator=(const IbPortSet&) = delete;

  const std::vector<IbPort*>& ports() const { return raw_; }
  IbProxy& proxy() { return *proxy_; }

 private:
  IbPortSet(const VerbsApi& verbs, std::vector<std::unique_ptr<IbPort>> ports);

  std::vector<std::unique_ptr<IbPort>> ports_;
  std::vector<IbPort*> raw_;
  std::unique_ptr<IbProxy> proxy_;              // after ports_, so it stops before they close
  std::unique_ptr<IbAsyncEvents> asyncEvents_;  // tells proxy_ of fatal events; stops first
};

}  // namespace braid::transport::ib
