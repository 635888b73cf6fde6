// What a network proxy tells a profiler plugin (src/profiler): NCCL's proxy op and proxy step
// events, from the ground floor so that the transports, which may not include src/, can say
// them. The communicator's profiler implements ProxyEventSink; each FIFO end whose proxy moves
// slots holds a ProxyEventTrack over it, or nothing where no profiler asked for proxy events, so
// that a proxy without a profiler pays one predictable branch per slot.
//
// braid's proxies move slots, not calls: a FIFO end carries the slots of every call of its
// communicator, one after the other. A proxy op here is what one FIFO end moved for one call:
// it starts with the first slot the proxy moves after a call began (its parent is that call's
// collective or point-to-point event) and stops at the first slot of a later call, or when the
// end goes. A proxy step is one slot: from the moment the proxy has it (a send proxy takes a
// posted slot, a receive proxy learns a slot is coming) until it has moved it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace braid::profile {

/// Which FIFO end a proxy op is about: NCCL's proxyOp descriptor, less what the sink knows.
struct ProxyOpWhere {
  int peer = -1;
  int channel = 0;
  bool isSend = false;
  size_t slotBytes = 0;  ///< chunkSize: the bytes a step moves at most
};

/// The communicator's side: starts and stops the events, parented to its running call.
class ProxyEventSink {
 public:
  virtual ~ProxyEventSink() = default;
  /// A number that changes whenever a call starts on the communicator (read without a lock).
  virtual uint64_t callNumber() const = 0;
  /// Starts a proxy op for `where` under the call running now; sets `*call` to that call's
  /// number. Null when the plugin started nothing.
  virtual void* startOp(const ProxyOpWhere& where, uint64_t* call) = 0;
  /// Starts step `step` of `op` (null `op`: a step with no op). Null: none started (the plugin
  /// asked for no steps, or started nothing).
  virtual void* startStep(void* op, int step, bool isSend) = 0;
  /// The step's bytes are moving (SendWait or RecvWait, with the bytes).
  virtual void stepMoving(void* step, bool isSend, size_t bytes) = 0;
  /// Stops an op, a step or a network plugin's event this sink started.
  virtual void stop(void* handle) = 0;
  /// A network plugin's own event (NCCL's netPlugin event, through the profiler callback v10
  /// and later plugins are given) under proxy step `step` (null: none): `pluginId` and `data`
  /// are the plugin's. Null: none started.
  virtual void* startNetEvent(void* step, int64_t pluginId, void* data) = 0;
  /// The plugin's event `handle` changed; `data` says how.
  virtual void updateNetEvent(void* handle, void* data) = 0;
};

/// What a network plugin is given as a transfer's profiler handle (pHandle): whom its events go
/// to and the proxy step they belong to.
struct NetEventParent {
  std::shared_ptr<ProxyEventSink> sink;
  void* step = nullptr;
};

/// One FIFO end's proxy events. Used by the end's proxy thread alone.
class ProxyEventTrack {
 public:
  ProxyEventTrack() = default;
  ProxyEventTrack(std::shared_ptr<ProxyEventSink> sink, ProxyOpWhere where) {
    open(std::move(sink), where);
  }
  ~ProxyEventTrack() { closeOp(); }
  ProxyEventTrack(const ProxyEventTrack&) = delete;
  ProxyEventTrack& operator=(const ProxyEventTrack&) = delete;

  /// Reports to `sink` (null: nothing) about `where` from now on: for an end that learns them
  /// after it is made.
  void open(std::shared_ptr<ProxyEventSink> sink, ProxyOpWhere where) {
    closeOp();
    sink_ = std::move(sink);
    where_ = where;
    for (NetEventParent& p : parents_) p.sink = sink_;
  }
  /// Whether a profiler listens: the proxy's one branch per slot.
  bool on() const { return sink_ != nullptr; }
  /// Slot `slot` (of `bytes`; 0: not known yet) is the proxy's now: the op of the running call
  /// (started where the call changed) and a step for the slot. A proxy with several slots in
  /// flight numbers them (at most kMaxSteps at once); one that moves one at a time may say 0.
  void beginSlot(uint32_t slot, size_t bytes) {
    if (sink_->callNumber() != call_ || !opStarted_) {
      closeOp();
      op_ = sink_->startOp(where_, &call_);
      opStarted_ = true;
      steps_ = 0;
    }
    void*& step = open_[slot % kMaxSteps];
    if (step != nullptr) sink_->stop(step);  // a proxy that never ended it: not left open
    step = sink_->startStep(op_, steps_++, where_.isSend);
    parents_[slot % kMaxSteps].step = step;
    if (step != nullptr && bytes != 0) sink_->stepMoving(step, where_.isSend, bytes);
  }
  /// Whether slot `slot` has a step open (a post the plugin asked to retry keeps its step).
  bool slotOpen(uint32_t slot) const { return open_[slot % kMaxSteps] != nullptr; }
  /// The profiler handle a network plugin is given with slot `slot`'s transfer; null when off.
  void* netParent(uint32_t slot) { return on() ? &parents_[slot % kMaxSteps] : nullptr; }
  /// Slot `slot` has moved; `bytes`, where not known when it began, are its bytes.
  void endSlot(uint32_t slot, size_t bytes = 0) {
    void*& step = open_[slot % kMaxSteps];
    if (step == nullptr) return;
    if (bytes != 0) sink_->stepMoving(step, where_.isSend, bytes);
    sink_->stop(step);
    step = nullptr;
    parents_[slot % kMaxSteps].step = nullptr;
  }
  /// The steps and op open now, if any, stop (the end goes).
  void closeOp() {
    if (sink_ == nullptr) return;
    for (uint32_t slot = 0; slot < kMaxSteps; ++slot) endSlot(slot);
    if (op_ != nullptr) sink_->stop(op_);
    op_ = nullptr;
    opStarted_ = false;
  }

 private:
  std::shared_ptr<ProxyEventSink> sink_;
  ProxyOpWhere where_;
  uint64_t call_ = 0;
  static constexpr uint32_t kMaxSteps = 16;  ///< a FIFO's slots, and more
  void* op_ = nullptr;
  void* open_[kMaxSteps] = {};  ///< the step of each slot in flight
  NetEventParent parents_[kMaxSteps];
  bool opStarted_ = false;
  int steps_ = 0;
};

}  // namespace braid::profile
