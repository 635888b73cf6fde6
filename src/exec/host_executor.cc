// The engine's CPU instance for host communicators.
//
// HostEnv is the interpreter's environment (kernels/engine/interpreter.h)
// on the CPU: its team is the calling thread, its ports the transport's
// SendEnd / RecvEnd (which wait on a futex when they must), its loops the
// HostOp loops chosen for this CPU (AVX2 where it has it). Reductions read
// the incoming slot and the input and write the outgoing slot directly, so
// each element is touched once per step: the FIFO costs no extra copy on
// the reduce path.
//
// Where a FIFO's end is a proxy's over the network (a socket end), the copies
// into and out of its slots can go too: a slice whose bytes the user's memory
// holds once the step is applied (the input a step sends, the output it keeps
// and sends) goes out lent from there, and a receive into the output is
// offered the output, so that its end reads the slices into place. LentSlices
// (lent_slices.h) keeps that memory the user's again before the call returns,
// failed or not.
#include "exec/host_executor.h"

#include <algorithm>
#include <string>

#include "exec/lent_slices.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/team.h"

namespace braid::exec {
namespace {

namespace engine = kernels::engine;
using engine::Fault;
using engine::FaultCode;
using engine::Instruction;
using engine::SliceIo;

/// The engine's loop interface (slice_ops.h) over a HostOp.
struct HostLoops {
  const kernels::HostOp& op;
  size_t elemBytes;
  /// The outgoing slot of the slice being applied where it is to be streamed, else null
  /// (HostCall::streamSlots): a loop that writes it there uses non-temporal stores.
  void* streamTo = nullptr;

  void load(void* dst, const void* in, size_t n) const {
    if (dst == streamTo && op.load == nullptr) {
      kernels::streamBytes(dst, in, n * elemBytes);
    } else {
      op.loadInput(dst, in, n, elemBytes);
    }
  }
  void copy(void* dst, const void* src, size_t bytes) const {
    if (dst != src) kernels::copyBytes(dst, src, bytes);
  }
  void copyPeer(void* dst, const void* recv, size_t bytes) const {
    if (dst != recv) kernels::copyBytes(dst, recv, bytes);  // equal: it landed in place
  }
  void copyPeerTwice(void* dst1, void* dst2, const void* recv, size_t bytes) const {
    if (dst1 == dst2) {
      kernels::copyBytes(dst1, recv, bytes);
    } else if (dst2 == streamTo) {
      kernels::copyBytes(dst1, recv, bytes);
      kernels::streamBytes(dst2, dst1, bytes);  // from dst1, which the cache holds now
    } else {
      kernels::copyTwice(dst1, dst2, recv, bytes);
    }
  }
  void reduce(void* dst, const void* recv, const void* in, size_t n) const {
    op.reduce(op.args, dst, recv, in, n);
  }
  void reduce2(void* dst1, void* dst2, const void* recv, const void* in, size_t n) const {
    if (dst1 == dst2) {
      op.reduce(op.args, dst1, recv, in, n);  // a lent slice: the result is kept and sent once
    } else if (dst2 == streamTo) {
      op.reduce(op.args, dst1, recv, in, n);
      kernels::streamBytes(dst2, dst1, n * elemBytes);
    } else {
      op.reduce2(op.args, dst1, dst2, recv, in, n);
    }
  }
  void combine(void* dst, const void* recv, const void* local, size_t n) const {
    op.combine(op.args, dst, recv, local, n);
  }
};

class HostEnv {
 public:
  HostEnv(const HostCall& call, const ChannelProgram& program, size_t sliceElems,
          const ChannelConnections& conns, const transport::WaitContext& wait,
          engine::WaitRecord* record)
      : call_(call),
        program_(program),
        conns_(conns),
        wait_(wait),
        record_(record),
        loops_{call.reduce, call.elemBytes},
        lent_(conns.send, program.sendPeers),
        // avg divides its output after the steps, over results a lent slice might still hold.
        lendsOk_(call.reduce.finish == nullptr),
        sliceBytes_(sliceElems * call.elemBytes) {}

  engine::SoloTeam team() const { return {}; }

  Fault acquire(const Instruction& ins, SliceIo& s, bool last) {
    if (engine::stepReceives(ins.op)) {
      if (ins.recvPort >= conns_.recv.size() || conns_.recv[ins.recvPort] == nullptr) {
        return {FaultCode::kNoPort, -1, 0, 0};
      }
      const int peer = program_.recvPeers[ins.recvPort];
      transport::WaitContext wait = wait_;
      wait.peer = peer;
      if (&ins != offered_ && mayOffer(ins)) {
        const Fault f = offerOutput(ins, s);
        if (engine::failed(f)) return f;
      }
      size_t got = 0;
      const void* ready = conns_.recv[ins.recvPort]->trySlot(&got);
      if (ready == nullptr) {
        note(engine::WaitKind::kRecv, peer, ins);
        Result<const void*> slot = conns_.recv[ins.recvPort]->waitSlot(wait, &got);
        clearNote();
        if (!slot.ok()) return envError(slot.status(), peer);
        ready = slot.value();
      }
      const Fault f = engine::checkSlice(static_cast<uint32_t>(got), s.bytes, last, false, peer);
      if (engine::failed(f)) return f;
      s.recv = static_cast<const char*>(ready);
    }
    if (engine::stepSends(ins.op)) {
      if (ins.sendPort >= conns_.send.size() || conns_.send[ins.sendPort] == nullptr) {
        return {FaultCode::kNoPort, -1, 0, 0};
      }
      const int peer = program_.sendPeers[ins.sendPort];
      transport::WaitContext wait = wait_;
      wait.peer = peer;
      void* room = conns_.send[ins.sendPort]->trySlot();
      if (room == nullptr) {
        note(engine::WaitKind::kSend, peer, ins);
        Result<void*> slot = conns_.send[ins.sendPort]->waitSlot(wait);
        clearNote();
        if (!slot.ok()) return envError(slot.status(), peer);
        room = slot.value();
      }
      s.send = static_cast<char*>(room);
      lending_ = lendsOk_ && lent_.mayLend(ins.sendPort, s.bytes) ? lend(ins, s) : false;
    }
    loops_.streamTo =
        engine::stepSends(ins.op) && !lending_ && call_.streamSlots && s.bytes >= kStreamMinBytes
            ? s.send
            : nullptr;
    // The slice's output must not be a lent slice still out (lent_slices.h).
    if (engine::stepWritesOutput(ins.op)) {
      Status clear = lent_.clear(s.out, s.bytes, wait_);
      if (!clear.ok()) return envError(std::move(clear), -1);
    }
    return engine::noFault();
  }

  void apply(engine::StepOp op, bool fromOutput, const SliceIo& s) const {
    engine::applySlice(engine::SoloTeam{}, loops_, op, fromOutput, s);
  }

  void complete(const Instruction& ins, const SliceIo& s, bool last) {
    if (engine::stepSends(ins.op)) {
      transport::SendEnd& end = *conns_.send[ins.sendPort];
      if (lending_) {
        lent_.add(ins.sendPort, end.postLent(s.send, s.bytes), s.send, s.bytes);
      } else {
        end.post(s.bytes);
      }
    }
    if (engine::stepReceives(ins.op)) {
      conns_.recv[ins.recvPort]->release();
      if (last && &ins == offered_) withdrawOffer();
    }
  }

  void finish(void* buf, size_t count) const { call_.reduce.finishOutput(buf, count); }

  /// The error behind the last kEnvError.
  const Status& error() const { return error_; }
  /// The channel's end: waits for its lent slices; after a failure, cuts its ends off them.
  Status returnLent() { return lent_.returnAll(wait_); }
  void abandonLent() {
    if (offered_ != nullptr) withdrawOffer();
    lent_.abandon();
  }

 private:
  // A wait that did not succeed at once, for the flight recorder (only the slow path pays).
  void note(engine::WaitKind kind, int peer, const Instruction& ins) {
    if (record_ == nullptr) return;
    engine::storeRelaxed(reinterpret_cast<uint32_t*>(&record_->peer), static_cast<uint32_t>(peer));
    engine::storeRelaxed(&record_->instr, static_cast<uint32_t>(&ins - program_.instrs.data()));
    engine::storeRelaxed(&record_->sinceNs, engine::clockNs());
    engine::storeRelaxed(&record_->kind, static_cast<uint32_t>(kind));
  }
  void clearNote() {
    if (record_ != nullptr) {
      engine::storeRelaxed(&record_->kind, static_cast<uint32_t>(engine::WaitKind::kNone));
    }
  }

  // A receive into the output may land there straight from the network: its end reads its
  // slices into place, and the copy out of the slot goes away. Not for small receives, which
  // cost less to copy than to offer.
  bool mayOffer(const Instruction& ins) const {
    return ins.op == engine::StepOp::kRecv &&
           std::min<size_t>(sliceBytes_, ins.count * call_.elemBytes) >= LentSlices::kMinBytes &&
           conns_.recv[ins.recvPort]->takesOffers();
  }
  Fault offerOutput(const Instruction& ins, const SliceIo& s) {
    const size_t bytes = ins.count * call_.elemBytes;
    // The end may write there from now on: no lent slice may still be read from there.
    Status clear = lent_.clear(s.out, bytes, wait_);
    if (!clear.ok()) return envError(std::move(clear), -1);
    conns_.recv[ins.recvPort]->offer(s.out, sliceBytes_, bytes);
    offered_ = &ins;
    return engine::noFault();
  }
  void withdrawOffer() {
    conns_.recv[offered_->recvPort]->withdrawOffer();
    offered_ = nullptr;
  }

  // Points the slice's outgoing bytes at the user memory that holds them, where there is one.
  bool lend(const Instruction& ins, SliceIo& s) const {
    const char* from =
        engine::sentFromUser(ins.op, ins.fromOutput != 0, call_.reduce.load == nullptr, s);
    if (from == nullptr) return false;
    s.send = const_cast<char*>(from);
    return true;
  }

  Fault envError(Status status, int peer) {
    error_ = std::move(status);
    return {FaultCode::kEnvError, peer, 0, 0};
  }

  const HostCall& call_;
  const ChannelProgram& program_;
  const ChannelConnections& conns_;
  const transport::WaitContext& wait_;
  engine::WaitRecord* record_;
  HostLoops loops_;
  LentSlices lent_;
  bool lendsOk_;
  bool lending_ = false;  ///< the slice acquired goes out lent
  size_t sliceBytes_;
  const Instruction* offered_ = nullptr;  ///< the receive whose output its end was offered
  Status error_;
};

Status faultStatus(const Fault& f, const HostEnv& env) {
  switch (f.code) {
    case FaultCode::kNone:
      return Status::success();
    case FaultCode::kEnvError:
      return env.error();
    case FaultCode::kSliceMismatch:
      return internalError("slice size mismatch: received " + std::to_string(f.got) +
                           " bytes from rank " + std::to_string(f.peer) + ", expected " +
                           std::to_string(f.expected) +
                           " (do all ranks call the same collective with the same count?)");
    case FaultCode::kNoPort:
      return internalError("schedule step uses a peer this channel has no connection to");
    case FaultCode::kAborted:
    case FaultCode::kTimedOut:
    case FaultCode::kBadCall:
      break;  // host ports report waits through kEnvError; host loops take any call
  }
  return internalError("host executor stopped with fault " +
                       std::to_string(static_cast<unsigned>(f.code)));
}

void traceStep(trace::Recorder& trace, const Instruction& ins, const ChannelProgram& ch,
               int channel, double startUs, size_t elemBytes) {
  trace::Event e;
  e.name = ins.kind == engine::InstrKind::kFinish ? "finish" : algo::stepOpName(ins.op);
  e.track = 1 + channel;
  e.startUs = startUs;
  e.durationUs = trace.nowUs() - startUs;
  e.args = "\"bytes\":" + std::to_string(ins.count * elemBytes) +
           ",\"chunk\":" + std::to_string(ins.chunk);
  if (ins.kind == engine::InstrKind::kStep) {
    if (ins.recvPort != engine::kNoPort)
      e.args += ",\"from\":" + std::to_string(ch.recvPeers[ins.recvPort]);
    if (ins.sendPort != engine::kNoPort)
      e.args += ",\"to\":" + std::to_string(ch.sendPeers[ins.sendPort]);
  }
  trace.add(std::move(e));
}

bool programReduces(const Program& program) {
  for (const ChannelProgram& ch : program.channels) {
    for (const Instruction& ins : ch.instrs) {
      if (ins.kind == engine::InstrKind::kStep && engine::stepReduces(ins.op)) return true;
    }
  }
  return false;
}

Status runChannel(HostEnv& env, const Program& program, const HostCall& call, int c) {
  const ChannelProgram& ch = program.channels[c];
  const auto* input = static_cast<const char*>(call.input);
  auto* output = static_cast<char*>(call.output);
  if (call.trace == nullptr) {
    const Fault f = engine::runInstructions(env, ch.instrs.data(), ch.instrs.size(),
                                            program.sliceElems, call.elemBytes, input, output);
    return faultStatus(f, env);
  }
  for (const Instruction& ins : ch.instrs) {
    const double start = call.trace->nowUs();
    const Fault f =
        engine::runInstructions(env, &ins, 1, program.sliceElems, call.elemBytes, input, output);
    BRAID_TRY(faultStatus(f, env));
    traceStep(*call.trace, ins, ch, c, start, call.elemBytes);
  }
  return Status::success();
}

}  // namespace

Status runOnHost(const Program& program, const HostCall& call,
                 const std::vector<ChannelConnections>& connections,
                 const transport::WaitContext& wait) {
  if (connections.size() < program.channels.size()) {
    return internalError("schedule has more channels than the communicator connected");
  }
  if (programReduces(program) &&
      (call.reduce.reduce == nullptr || call.reduce.combine == nullptr)) {
    return internalError("reducing step without a reduction function");
  }
  for (size_t c = 0; c < program.channels.size(); ++c) {
    HostEnv env(call, program.channels[c], program.sliceElems, connections[c], wait,
                call.waits != nullptr ? call.waits + c : nullptr);
    Status s = runChannel(env, program, call, static_cast<int>(c));
    // Nothing lent or offered may stay with an end once the channel is over, failed or not.
    if (s.ok()) s = env.returnLent();
    if (!s.ok()) {
      env.abandonLent();
      return s;
    }
  }
  return Status::success();
}

}  // namespace braid::exec
