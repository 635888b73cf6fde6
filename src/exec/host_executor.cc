// The engine's CPU instance for host communicators.
//
// HostEnv is the interpreter's environment (kernels/engine/interpreter.h)
// on the CPU: its team is the calling thread, its ports the transport's
// SendEnd / RecvEnd (which wait on a futex when they must), its loops the
// HostOp loops chosen for this CPU (AVX2 where it has it). Reductions read
// the incoming slot and the input and write the outgoing slot directly, so
// each element is touched once per step: the FIFO costs no extra copy on
// the reduce path.
#include "exec/host_executor.h"

#include <string>

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

  void load(void* dst, const void* in, size_t n) const { op.loadInput(dst, in, n, elemBytes); }
  void copy(void* dst, const void* src, size_t bytes) const {
    if (dst != src) kernels::copyBytes(dst, src, bytes);
  }
  void copyPeer(void* dst, const void* recv, size_t bytes) const {
    kernels::copyBytes(dst, recv, bytes);
  }
  void copyPeerTwice(void* dst1, void* dst2, const void* recv, size_t bytes) const {
    kernels::copyTwice(dst1, dst2, recv, bytes);
  }
  void reduce(void* dst, const void* recv, const void* in, size_t n) const {
    op.reduce(op.args, dst, recv, in, n);
  }
  void reduce2(void* dst1, void* dst2, const void* recv, const void* in, size_t n) const {
    op.reduce2(op.args, dst1, dst2, recv, in, n);
  }
  void combine(void* dst, const void* recv, const void* local, size_t n) const {
    op.combine(op.args, dst, recv, local, n);
  }
};

class HostEnv {
 public:
  HostEnv(const HostCall& call, const ChannelProgram& program, const ChannelConnections& conns,
          const transport::WaitContext& wait, engine::WaitRecord* record)
      : call_(call),
        program_(program),
        conns_(conns),
        wait_(wait),
        record_(record),
        loops_{call.reduce, call.elemBytes} {}

  engine::SoloTeam team() const { return {}; }

  Fault acquire(const Instruction& ins, SliceIo& s, bool last) {
    if (engine::stepReceives(ins.op)) {
      if (ins.recvPort >= conns_.recv.size() || conns_.recv[ins.recvPort] == nullptr) {
        return {FaultCode::kNoPort, -1, 0, 0};
      }
      const int peer = program_.recvPeers[ins.recvPort];
      transport::WaitContext wait = wait_;
      wait.peer = peer;
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
    }
    return engine::noFault();
  }

  void apply(engine::StepOp op, bool fromOutput, const SliceIo& s) const {
    engine::applySlice(engine::SoloTeam{}, loops_, op, fromOutput, s);
  }

  void complete(const Instruction& ins, const SliceIo& s, bool) {
    if (engine::stepSends(ins.op)) conns_.send[ins.sendPort]->post(s.bytes);
    if (engine::stepReceives(ins.op)) conns_.recv[ins.recvPort]->release();
  }

  void finish(void* buf, size_t count) const { call_.reduce.finishOutput(buf, count); }

  /// The error behind the last kEnvError.
  const Status& error() const { return error_; }

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
  const auto* input = static_cast<const char*>(call.input);
  auto* output = static_cast<char*>(call.output);
  for (size_t c = 0; c < program.channels.size(); ++c) {
    const ChannelProgram& ch = program.channels[c];
    HostEnv env(call, ch, connections[c], wait, call.waits != nullptr ? call.waits + c : nullptr);
    if (call.trace == nullptr) {
      const Fault f = engine::runInstructions(env, ch.instrs.data(), ch.instrs.size(),
                                              program.sliceElems, call.elemBytes, input, output);
      BRAID_TRY(faultStatus(f, env));
      continue;
    }
    for (const Instruction& ins : ch.instrs) {
      const double start = call.trace->nowUs();
      const Fault f =
          engine::runInstructions(env, &ins, 1, program.sliceElems, call.elemBytes, input, output);
      BRAID_TRY(faultStatus(f, env));
      traceStep(*call.trace, ins, ch, static_cast<int>(c), start, call.elemBytes);
    }
  }
  return Status::success();
}

}  // namespace braid::exec
