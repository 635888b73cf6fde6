// The interpreter's environment on a GPU, real or emulated: ports are FIFO
// descriptors (launch.h), waits poll the counters, the loops are TeamLoops
// (elementwise.h) or, for calls that only move data, CopyLoops.
//
// The team's leader does every wait and publish; the others only move
// bytes. A wait polls the FIFO counter and, every kPollsPerCheck polls,
// looks at three reasons to give up: the communicator's abort word, a fault
// another block of this launch recorded, and the deadline. A kernel that
// waits for a dead peer therefore ends as soon as the host raises the abort
// word, and by itself once the deadline passes.
//
// Cursors live in the rank's own memory between launches (DevicePort::
// cursor): the leader loads them when its channel of a call starts and
// stores them when it ends, so a FIFO carries on across launches exactly
// as across steps.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/elementwise.h"
#include "kernels/engine/fifo.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/slice_ops.h"
#include "kernels/engine/sync.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

inline constexpr uint32_t kPollsPerCheck = 64;
/// Polls after which a waiter backs off between checks (sync.h backOff).
inline constexpr uint32_t kPollsBeforeBackOff = 1024;

/// The slots one acquire hands to the whole team.
struct Acquired {
  Fault fault;
  const char* recv;
  char* send;
};

template <typename Team, typename Loops>
class DeviceEnv {
 public:
  BRAID_HOST_DEVICE DeviceEnv(const Team& team, const Loops& loops, const DeviceChannel& channel,
                              const EngineArgs& args)
      : team_(team), loops_(loops), ch_(channel), args_(args) {}

  BRAID_HOST_DEVICE const Team& team() const { return team_; }

  /// Loads the ports' cursors (leader only). Fails on a channel with more
  /// ports than kMaxPorts.
  BRAID_HOST_DEVICE Fault begin() {
    if (ch_.nrecv > kMaxPorts || ch_.nsend > kMaxPorts) return {FaultCode::kNoPort, -1, 0, 0};
    if (!team_.leader()) return noFault();
    for (uint32_t i = 0; i < ch_.nrecv; ++i) recvCur_[i] = *ch_.recv[i].cursor;
    for (uint32_t i = 0; i < ch_.nsend; ++i) sendCur_[i] = *ch_.send[i].cursor;
    return noFault();
  }

  /// Stores the cursors back (leader only), also after a fault: the
  /// communicator is broken then, but its cursors stay consistent.
  BRAID_HOST_DEVICE void end() {
    if (!team_.leader()) return;
    for (uint32_t i = 0; i < ch_.nrecv; ++i) *ch_.recv[i].cursor = recvCur_[i];
    for (uint32_t i = 0; i < ch_.nsend; ++i) *ch_.send[i].cursor = sendCur_[i];
  }

  BRAID_HOST_DEVICE Fault acquire(const Instruction& ins, SliceIo& s, bool last) {
    Acquired a{noFault(), nullptr, nullptr};
    if (team_.leader()) a = leaderAcquire(ins, s.bytes, last);
    a = team_.share(a);
    s.recv = a.recv;
    s.send = a.send;
    return a.fault;
  }

  BRAID_HOST_DEVICE void apply(StepOp op, bool fromOutput, const SliceIo& s) const {
    applySlice(team_, loops_, op, fromOutput, s);
  }

  BRAID_HOST_DEVICE void complete(const Instruction& ins, const SliceIo& s, bool last) {
    team_.sync();  // every thread's part of the slice is written (and read)
    if (!team_.leader()) return;
    if (stepSends(ins.op)) {
      postSlot(ch_.send[ins.sendPort].fifo, sendCur_[ins.sendPort], sliceWord(s.bytes, last));
    }
    if (stepReceives(ins.op)) releaseSlot(ch_.recv[ins.recvPort].fifo, recvCur_[ins.recvPort]);
  }

  BRAID_HOST_DEVICE void finish(void* buf, size_t count) const {
    loops_.finish(buf, count);
    team_.sync();
  }

 private:
  BRAID_HOST_DEVICE Acquired leaderAcquire(const Instruction& ins, size_t bytes, bool last) {
    Acquired a{noFault(), nullptr, nullptr};
    if (stepReceives(ins.op)) {
      if (ins.recvPort >= ch_.nrecv) return {{FaultCode::kNoPort, -1, 0, 0}, nullptr, nullptr};
      const DevicePort& p = ch_.recv[ins.recvPort];
      FifoCursor& c = recvCur_[ins.recvPort];
      a.fault = waitFor([&] { return recvData(p.fifo, c); }, p.peer);
      if (failed(a.fault)) return a;
      a.fault = checkSlice(postedWord(p.fifo, c), bytes, last, true, p.peer);
      if (failed(a.fault)) return a;
      a.recv = slotAt(p.fifo, c.mine);
    }
    if (stepSends(ins.op)) {
      if (ins.sendPort >= ch_.nsend) return {{FaultCode::kNoPort, -1, 0, 0}, nullptr, nullptr};
      const DevicePort& p = ch_.send[ins.sendPort];
      FifoCursor& c = sendCur_[ins.sendPort];
      a.fault = waitFor([&] { return sendRoom(p.fifo, c); }, p.peer);
      if (failed(a.fault)) return a;
      a.send = slotAt(p.fifo, c.mine);
    }
    return a;
  }

  template <typename Ready>
  BRAID_HOST_DEVICE Fault waitFor(Ready ready, int peer) const {
    if (ready()) return noFault();
    const uint64_t start = clockNs();
    for (uint32_t polls = 1;; ++polls) {
      spinPause();
      if (ready()) return noFault();
      if (polls % kPollsPerCheck != 0) continue;
      if (loadRelaxed(args_.abortFlag) != 0) return {FaultCode::kAborted, peer, 0, 0};
      // Another block of this launch gave up: the rank's calls cannot finish.
      if (loadRelaxed(&args_.fault->code) != 0) return {FaultCode::kAborted, peer, 0, 0};
      const uint64_t waited = clockNs() - start;
      if (args_.timeoutNs != 0 && waited > args_.timeoutNs) {
        return {FaultCode::kTimedOut, peer, waited, args_.timeoutNs};
      }
      if (polls >= kPollsBeforeBackOff) backOff();
    }
  }

  const Team& team_;
  const Loops& loops_;
  const DeviceChannel& ch_;
  const EngineArgs& args_;
  FifoCursor recvCur_[kMaxPorts] = {};
  FifoCursor sendCur_[kMaxPorts] = {};
};

/// Writes `f` as the launch's fault unless a block did already (leader only).
BRAID_HOST_DEVICE void recordFault(FaultRecord* record, const Fault& f, uint32_t block,
                                   uint32_t call) {
  if (!claimWord(&record->claim)) return;
  storeRelaxed(reinterpret_cast<uint32_t*>(&record->peer), static_cast<uint32_t>(f.peer));
  storeRelaxed(&record->block, block);
  storeRelaxed(&record->call, call);
  storeRelaxed(&record->got, f.got);
  storeRelaxed(&record->expected, f.expected);
  storePublish(&record->code, static_cast<uint32_t>(f.code));
}

}  // namespace braid::kernels::engine
