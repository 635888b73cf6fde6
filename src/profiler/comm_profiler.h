// CommProfiler: one communicator's side of the profiler plugin (profiler_loader.h). It calls the
// plugin's init as the communicator is made (the plugin answers with the events it wants, its
// activation mask) and finalize as it goes, and starts and stops the events NCCL starts, where
// the mask asks for them or for their children, as NCCL decides:
//
//   group      around the calls one ncclGroupEnd runs on the communicator; a call outside a
//              group is a group of its own (NCCL's implicit group)
//   coll       one per collective, child of its group
//   p2p        one per send and per receive of a batch, children of its group
//   proxyOp    what one network FIFO end's proxy moved for one call, child of that call's coll
//              (or of the p2p with that peer and direction) (base/proxy_events.h)
//   proxyStep  one slot a proxy moved, child of its proxy op
//
// The calling thread's methods assume what NCCL does of a communicator: one call at a time.
// The proxies' (ProxyEventSink) may come from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/proxy_events.h"
#include "profiler/profiler_loader.h"
#include "profiler/profiler_plugin.h"

namespace braid::profiler {

class CommProfiler final : public profile::ProxyEventSink,
                           public std::enable_shared_from_this<CommProfiler> {
 public:
  /// The communicator's profiler, or null where no plugin loads or its init fails (said at
  /// INFO, and the communicator goes on without one, as NCCL's does).
  static std::shared_ptr<CommProfiler> open(const std::optional<std::string>& setting,
                                            const CommIdentity& comm);
  /// The plugin's finalize for this communicator.
  ~CommProfiler() override;
  CommProfiler(const CommProfiler&) = delete;
  CommProfiler& operator=(const CommProfiler&) = delete;

  /// The events the plugin asked for (profabi's bits).
  uint64_t mask() const { return mask_; }
  /// What the network's FIFO ends report their proxies' events to: null unless the plugin asked
  /// for proxy ops or steps.
  std::shared_ptr<profile::ProxyEventSink> proxySink();

  /// ncclGroupEnd runs this communicator's calls now (closeGroup when they have run): their
  /// group event starts with the first of them.
  void openGroup();
  void closeGroup();
  /// A collective starts (its group first, where none is open).
  void startColl(const CollFields& fields);
  /// A batch of sends and receives starts: an event per send and per receive.
  void startP2p(const std::vector<P2pFields>& ops);
  /// The call started last has run: its events stop, and the group it opened alone.
  void stopCall();

  // NCCL's API events (v5 on), which the API layer starts as the application calls
  // (api/api_events.h); each is null where the plugin asked for none of the events under it.
  /// The group API event of the calls a thread makes until its outermost group ends (one call
  /// outside a group is a group of its own, of depth 1).
  void* startGroupApi(bool graphCaptured, int groupDepth);
  void recordGroupApi(void* handle, profabi::ncclProfilerEventState_t state);
  /// A collective's (`collective`) or point-to-point call's API event, under `groupApi`.
  void* startCallApi(void* groupApi, const ApiFields& fields, bool collective);
  /// The group API event of the calls this communicator launches next: their kernel launch's
  /// parent.
  void setLaunchParent(void* groupApi) { launchParent_ = groupApi; }
  /// A GPU communicator's kernel launch on `stream`; the caller stops it once launched.
  void* startKernelLaunch(void* stream);

  // ProxyEventSink: the proxies' side.
  uint64_t callNumber() const override { return callNumber_.load(std::memory_order_acquire); }
  void* startOp(const profile::ProxyOpWhere& where, uint64_t* call) override;
  void* startStep(void* op, int step, bool isSend) override;
  void stepMoving(void* step, bool isSend, size_t bytes) override;
  void stop(void* handle) override;
  void* startNetEvent(void* step, int64_t pluginId, void* data) override;
  void updateNetEvent(void* handle, void* data) override;

 private:
  CommProfiler(std::shared_ptr<LoadedProfiler> loaded, void* context, uint64_t mask, int rank);
  void startGroupIfNone();
  void* startEvent(Event& event);

  // One send or receive of the running batch, for its proxy ops' parent.
  struct P2pHandle {
    int peer;
    bool isSend;
    void* handle;
  };

  std::shared_ptr<LoadedProfiler> loaded_;  // the plugin stays loaded while this lives
  ProfilerPlugin& plugin_;
  void* context_;
  const uint64_t mask_;
  const int rank_;
  const pid_t pid_;

  // The calling thread's.
  bool groupOpen_ = false;     // an explicit group runs
  bool groupStarted_ = false;  // its event (or an implicit one) started
  bool groupImplicit_ = false;
  void* group_ = nullptr;
  void* launchParent_ = nullptr;  // the group API event of the calls launched next
  uint64_t seqNumbers_[8] = {};   // per ncclFunc_t of v1 (nccl_names.h), as NCCL counts them

  // The running call's events, which the proxies parent their ops to.
  std::mutex callMutex_;
  void* coll_ = nullptr;
  std::vector<P2pHandle> p2p_;
  std::atomic<uint64_t> callNumber_{0};
};

}  // namespace braid::profiler
