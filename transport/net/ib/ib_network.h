// A communicator's verbs transport: the verbs it calls (the library's, or the emulated HCA's),
// the ports it opened, and its proxy thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/proxy_events.h"
#include "braid/status.h"
#include "transport/link_failure.h"
#include "transport/net/ib/ib_device.h"
#include "transport/net/ib/ib_port_set.h"
#include "transport/net/ib/ib_proxy.h"
#include "transport/net/ib/ib_settings.h"

namespace braid::transport::ib {

class IbNetwork {
 public:
  /// Opens the ports `settings` allow. nullptr (not an error) where verbs cannot be used here:
  /// no libibverbs, no device, no usable port (each device or port set aside, and why: see
  /// port_survey.h); `*why` then says which, for the log and for BRAID_NET=IB's error.
  static Result<std::unique_ptr<IbNetwork>> open(const IbSettings& settings, int localRank,
                                                 std::string* why);
  ~IbNetwork();

  const VerbsApi& verbs() const { return *verbs_; }
  const IbSettings& settings() const { return settings_; }
  IbProxy& proxy() { return shared_->proxy(); }
  /// The port a FIFO end's queue pairs are on (all of them: ib_queue_pairs.h): the port named
  /// `nic` ("mlx5_0:1"), the one the topology planned for the FIFO (its channel's NIC, or the
  /// rank's nearest), where this process opened it; otherwise (no topology, or a port
  /// BRAID_IB_HCA left out) spread by this rank's place on its host, so the ranks of a host use
  /// different NICs.
  int portFor(const std::string& nic) const;
  /// Whether this process opened the port named `nic`.
  bool opened(const std::string& nic) const;
  /// The port `index`, counted round the ports opened.
  IbPort& portAt(int index) const { return *ports_[static_cast<size_t>(index) % ports_.size()]; }
  int portCount() const { return static_cast<int>(ports_.size()); }
  /// "emu_0:1, emu_1:1 (emulated)", for the log.
  std::string describe() const;
  /// A send end going away keeps writing what was posted (kDrainMs), unless `*flag` is up: the
  /// communicator's stop flag, raised when a peer is lost or the communicator aborted, where
  /// the peer may never acknowledge (a dead rank's QP answers nothing until the retries run out).
  void stopDrainsWhen(const std::atomic<bool>* flag) { drainCancel_ = flag; }
  const std::atomic<bool>* drainCancel() const { return drainCancel_; }

  /// Who hears of a failed FIFO end (a completion or post error, a broken handshake): the
  /// communicator, which ends every call waiting on it at once (comm::Health). Set before any
  /// FIFO is made; called on the proxy's thread with the peer and what failed.
  using OnFailure = LinkFailureHandler;
  void onFailure(OnFailure f) { onFailure_ = std::move(f); }
  void reportFailure(int peer, const std::string& why) const {
    if (onFailure_) onFailure_(peer, why);
  }
  /// Where the FIFO ends made from now on report their proxy events (base/proxy_events.h);
  /// null: no profiler asked for them.
  void reportProxyEvents(std::shared_ptr<profile::ProxyEventSink> sink) {
    proxyEvents_ = std::move(sink);
  }
  const std::shared_ptr<profile::ProxyEventSink>& proxyEvents() const { return proxyEvents_; }

 private:
  IbNetwork(const VerbsApi* verbs, IbSettings settings, std::shared_ptr<IbPortSet> shared,
            int first);

  const VerbsApi* verbs_;
  IbSettings settings_;
  std::shared_ptr<IbPortSet> shared_;  // the process's ports, proxy and async event reader
  std::vector<IbPort*> ports_;         // shared_'s
  int first_;
  const std::atomic<bool>* drainCancel_ = nullptr;
  OnFailure onFailure_;
  std::shared_ptr<profile::ProxyEventSink> proxyEvents_;
};

}  // namespace braid::transport::ib
