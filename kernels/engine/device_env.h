// The interpreter's environment on a GPU, real or emulated: ports are FIFO
// descriptors (launch.h), waits poll the FIFOs, the loops are TeamLoops
// (elementwise.h) or, for calls that only move data, CopyLoops.
//
// Two threads of the team wait and publish, one for each direction: the
// leader waits for the incoming slot and hands it back, the sender (team.h)
// waits for room in the outgoing one and posts it, so that a step that both
// receives and sends waits for its two peers at once; the others move bytes.
// Waits give up on abort, another block's fault or the deadline
// (device_waits.h); one that gives up raises the team's stop word, which
// ends the other waiter's wait too.
//
// The two protocols differ only in acquire and complete:
//
//   Simple  the step's loops read and write the FIFO slots in place; the
//           leader waits for the tail, and publishes the tail (fifo.h).
//   LL      a slot is cells of flag and data (ll.h). Receiving, every
//           thread waits for the flags of its cells and unpacks their data
//           into the channel's receive stage; sending, the loops write the
//           send stage and every thread packs its cells from it, each with
//           one 8-byte store that carries its own flag, so no fence and no
//           counter stands between the last store and the reader. The
//           leader still waits for and publishes `head` (flow control).
//           The stages are the channel's own device memory, so the loops
//           run unchanged on them.
//
// Cursors live in the rank's own memory between launches (DevicePort::
// cursor): the leader loads them when its channel of a call starts and
// stores them when it ends, so a FIFO carries on across launches exactly
// as across steps.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/engine/device_waits.h"
#include "kernels/engine/elementwise.h"
#include "kernels/engine/fifo.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/ll.h"
#include "kernels/engine/slice_ops.h"
#include "kernels/engine/sync.h"
#include "kernels/host_device.h"

namespace braid::kernels::engine {

/// What one acquire hands to the whole team from each of its two waiters: the Simple slot, or
/// the LL message's sequence number (its flag and slot). A waiter that stopped because the
/// other gave up has no fault of its own and no slot.
struct RecvAcquired {
  Fault fault;
  const char* slot;
  uint32_t seq;
};
struct SendAcquired {
  Fault fault;
  char* slot;
  uint32_t seq;
};

template <typename Team, typename Loops>
class DeviceEnv {
 public:
  /// `call` is the call's index in the launch and `block` the block running it: where the
  /// channel's waits are noted for the flight recorder (EngineArgs::waits).
  BRAID_HOST_DEVICE DeviceEnv(const Team& team, const Loops& loops, const DeviceChannel& channel,
                              const EngineArgs& args, FifoProtocol protocol, uint32_t call,
                              uint32_t block)
      : team_(team),
        loops_(loops),
        ch_(channel),
        args_(args),
        ll_(protocol == FifoProtocol::kLl),
        call_(call),
        wait_(args.waits != nullptr && block < kMaxWaitRecords ? args.waits + block : nullptr) {}

  BRAID_HOST_DEVICE const Team& team() const { return team_; }

  /// Loads the ports' cursors (the leader the incoming ones, the sender the outgoing ones) and
  /// lowers the team's stop word. Fails on a channel with more ports than kMaxPorts.
  BRAID_HOST_DEVICE Fault begin() {
    if (ch_.nrecv > kMaxPorts || ch_.nsend > kMaxPorts) return {FaultCode::kNoPort, -1, 0, 0};
    if (ll_ && (ch_.llRecvStage == nullptr || ch_.llSendStage == nullptr)) {
      return {FaultCode::kNoPort, -1, 0, 0};
    }
    if (team_.leader()) {
      for (uint32_t i = 0; i < ch_.nrecv; ++i) recvCur_[i] = *ch_.recv[i].cursor;
      team_.clearStop();
    }
    if (isSender()) {
      for (uint32_t i = 0; i < ch_.nsend; ++i) sendCur_[i] = *ch_.send[i].cursor;
    }
    team_.sync();  // no waiter reads the stop word before it is lowered
    return noFault();
  }

  /// Stores the cursors back (each by the thread that moved them), also after a fault: the
  /// communicator is broken then, but its cursors stay consistent.
  BRAID_HOST_DEVICE void end() {
    if (team_.leader()) {
      for (uint32_t i = 0; i < ch_.nrecv; ++i) *ch_.recv[i].cursor = recvCur_[i];
    }
    if (isSender()) {
      for (uint32_t i = 0; i < ch_.nsend; ++i) *ch_.send[i].cursor = sendCur_[i];
    }
  }

  BRAID_HOST_DEVICE Fault acquire(const Instruction& ins, SliceIo& s, bool last) {
    RecvAcquired r{noFault(), nullptr, 0};
    SendAcquired w{noFault(), nullptr, 0};
    if (team_.leader() && stepReceives(ins.op)) r = acquireRecv(ins, s.bytes, last);
    if (isSender() && stepSends(ins.op)) w = acquireSend(ins);
    team_.exchange(r, w);
    const Fault fault = failed(r.fault) ? r.fault : w.fault;
    if (!ll_ || failed(fault)) {
      s.recv = r.slot;
      s.send = w.slot;
      return fault;
    }
    recvSeq_ = r.seq;
    sendSeq_ = w.seq;
    s.send = stepSends(ins.op) ? ch_.llSendStage : nullptr;
    s.recv = nullptr;
    if (!stepReceives(ins.op)) return noFault();
    s.recv = ch_.llRecvStage;
    return unpackLl(ch_.recv[ins.recvPort], s.bytes);
  }

  BRAID_HOST_DEVICE void apply(StepOp op, bool fromOutput, const SliceIo& s) const {
    applySlice(team_, loops_, op, fromOutput, s);
  }

  BRAID_HOST_DEVICE void complete(const Instruction& ins, const SliceIo& s, bool last) {
    team_.sync();  // every thread's part of the slice is written (and read)
    if (ll_) {
      completeLl(ins, s, last);
      return;
    }
    if (isSender() && stepSends(ins.op)) {
      postSlot(ch_.send[ins.sendPort].fifo, sendCur_[ins.sendPort], sliceWord(s.bytes, last));
    }
    if (team_.leader() && stepReceives(ins.op)) {
      releaseSlot(ch_.recv[ins.recvPort].fifo, recvCur_[ins.recvPort]);
    }
  }

  BRAID_HOST_DEVICE void finish(void* buf, size_t count) const {
    loops_.finish(buf, count);
    team_.sync();
  }

 private:
  /// The leader's half of acquire: waits for the incoming slice and checks its size word.
  BRAID_HOST_DEVICE RecvAcquired acquireRecv(const Instruction& ins, size_t bytes, bool last) {
    RecvAcquired a{noFault(), nullptr, 0};
    if (ins.recvPort >= ch_.nrecv) return stopOther(a, {FaultCode::kNoPort, -1, 0, 0});
    const DevicePort& p = ch_.recv[ins.recvPort];
    FifoCursor& c = recvCur_[ins.recvPort];
    if (ll_) {
      bool stopped = false;
      // The size word's cell says the message has begun; the payload's
      // cells are the whole team's to wait for (unpackLl).
      const uint32_t flag = FlagSpace(p.flagBits).flag(c.mine);
      const uint64_t* head = llSlotCells(p.fifo.slots, p.fifo.stride, c.mine);
      uint64_t cell = 0;
      const Fault f = waitFor(
          [&] {
            return flagOf(cell = loadRelaxed(head)) == flag || (stopped = team_.stopRaised());
          },
          p.peer, WaitKind::kRecv, ins);
      if (failed(f)) return stopOther(a, f);
      if (stopped) return a;  // the sender gave up: its fault is the team's
      const Fault size = checkSlice(dataOf(cell), bytes, last, true, p.peer);
      if (failed(size)) return stopOther(a, size);
      a.seq = c.mine;
      return a;
    }
    bool ready = false;
    const Fault f = waitFor([&] { return (ready = recvData(p.fifo, c)) || team_.stopRaised(); },
                            p.peer, WaitKind::kRecv, ins);
    if (failed(f)) return stopOther(a, f);
    if (!ready) return a;  // the sender gave up: its fault is the team's
    const Fault size = checkSlice(postedWord(p.fifo, c), bytes, last, true, p.peer);
    if (failed(size)) return stopOther(a, size);
    a.slot = slotAt(p.fifo, c.mine);
    return a;
  }

  /// The sender's half of acquire: waits for room in the outgoing FIFO.
  BRAID_HOST_DEVICE SendAcquired acquireSend(const Instruction& ins) {
    SendAcquired a{noFault(), nullptr, 0};
    if (ins.sendPort >= ch_.nsend) return stopOther(a, {FaultCode::kNoPort, -1, 0, 0});
    const DevicePort& p = ch_.send[ins.sendPort];
    FifoCursor& c = sendCur_[ins.sendPort];
    bool ready = false;
    const Fault f = waitFor([&] { return (ready = sendRoom(p.fifo, c)) || team_.stopRaised(); },
                            p.peer, WaitKind::kSend, ins);
    if (failed(f)) return stopOther(a, f);
    if (!ready) return a;  // the leader gave up: its fault is the team's
    a.slot = slotAt(p.fifo, c.mine);
    a.seq = c.mine;
    return a;
  }

  BRAID_HOST_DEVICE bool isSender() const { return team_.rank() == team_.sender(); }

  /// `a` with fault `f`, once the team's stop word is raised for the other waiter.
  template <typename Acquired>
  BRAID_HOST_DEVICE Acquired stopOther(Acquired a, const Fault& f) const {
    team_.raiseStop();
    a.fault = f;
    return a;
  }

  /// Every thread waits for its share of the payload cells of message
  /// recvSeq_ and unpacks them into the receive stage. The fault is the
  /// same on every thread.
  BRAID_HOST_DEVICE Fault unpackLl(const DevicePort& p, size_t bytes) const {
    const uint32_t flag = FlagSpace(p.flagBits).flag(recvSeq_);
    const uint64_t* cells = llSlotCells(p.fifo.slots, p.fifo.stride, recvSeq_) + 1;
    return unpackLlCells(team_, args_, cells, payloadCells(bytes), flag,
                         reinterpret_cast<uint32_t*>(ch_.llRecvStage), p.peer);
  }

  /// Packs the send stage into message sendSeq_'s cells (every thread its
  /// share, the leader the size word), then moves the cursors on.
  BRAID_HOST_DEVICE void completeLl(const Instruction& ins, const SliceIo& s, bool last) {
    if (stepSends(ins.op)) {
      const DevicePort& p = ch_.send[ins.sendPort];
      const FlagSpace flags(p.flagBits);
      const uint32_t flag = flags.flag(sendSeq_);
      uint64_t* cells = llSlotCells(p.fifo.slots, p.fifo.stride, sendSeq_);
      const size_t data = payloadCells(s.bytes);
      // Now and then a message rewrites its whole slot, padding included (ll.h).
      const size_t n = flags.rewritesWholeSlot(sendSeq_) ? payloadCells(p.fifo.slotBytes) : data;
      packLlCells(team_, cells + 1, n, data, flag,
                  reinterpret_cast<const uint32_t*>(ch_.llSendStage));
      if (isSender()) {
        storeRelaxed(cells, makeCell(flag, sliceWord(s.bytes, last)));
        ++sendCur_[ins.sendPort].mine;
      }
    }
    // Every thread has read its cells (the barrier in complete): the slot can go back.
    if (team_.leader() && stepReceives(ins.op)) {
      releaseSlot(ch_.recv[ins.recvPort].fifo, recvCur_[ins.recvPort]);
    }
  }

  /// Waits for `ready`, noting the wait for the flight recorder once it has lasted
  /// kPollsBeforeNote polls (device_waits.h), and clearing the note when it ends.
  template <typename Ready>
  BRAID_HOST_DEVICE Fault waitFor(Ready ready, int peer, WaitKind kind,
                                  const Instruction& ins) const {
    if (ready()) return noFault();
    bool noted = false;
    auto note = [&](uint64_t sinceNs) {
      if (wait_ == nullptr) return;
      storeRelaxed(reinterpret_cast<uint32_t*>(&wait_->peer), static_cast<uint32_t>(peer));
      storeRelaxed(&wait_->call, call_);
      storeRelaxed(&wait_->instr, static_cast<uint32_t>(&ins - ch_.instrs));
      storeRelaxed(&wait_->sinceNs, sinceNs);
      storeRelaxed(&wait_->launch, args_.launchSeq);
      storeRelaxed(&wait_->kind, static_cast<uint32_t>(kind));
    };
    const Fault f = waitUntil(args_, ready, peer, note, &noted);
    // The block's two waiters share its record: the last to note a long wait holds it, and only
    // it clears the record.
    if (noted && wait_ != nullptr && loadRelaxed(&wait_->kind) == static_cast<uint32_t>(kind)) {
      storeRelaxed(&wait_->kind, static_cast<uint32_t>(WaitKind::kNone));
    }
    return f;
  }

  const Team& team_;
  const Loops& loops_;
  const DeviceChannel& ch_;
  const EngineArgs& args_;
  const bool ll_;
  const uint32_t call_;
  WaitRecord* const wait_;
  FifoCursor recvCur_[kMaxPorts] = {};
  FifoCursor sendCur_[kMaxPorts] = {};
  uint32_t recvSeq_ = 0;  ///< LL: the message being received, on every thread
  uint32_t sendSeq_ = 0;  ///< LL: the message being sent
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
