// Interpreting Steps on the CPU.
//
// A step moves its elements in slices of schedule.sliceElems. For each slice
// it waits for the incoming slot (if it receives) and the outgoing slot (if
// it sends), does the copy or reduction straight between the user buffers and
// the slots, then posts and releases. Reductions read the incoming slot and
// the input and write the outgoing slot directly, so each element is touched
// once per step: the FIFO costs no extra copy on the reduce path.
#include "exec/host_executor.h"

#include <cstring>
#include <string>

namespace braid::exec {
namespace {

using algo::Step;
using algo::StepOp;

struct SliceIo {
  const char* in;
  char* out;
  const char* recv;
  char* send;
  size_t bytes;
  size_t count;
};

// A step whose local operand is the output (fromOutput) holds values that
// are loaded already: they are copied and combined, never pre'd again.
void applyStepFromOutput(StepOp op, const SliceIo& s, const kernels::HostOp& red) {
  switch (op) {
    case StepOp::kSend:
    case StepOp::kCopySend:
      kernels::copyBytes(s.send, s.in, s.bytes);
      break;
    case StepOp::kRecvReduceSend:
      red.combine(red.args, s.send, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopy:
      red.combine(red.args, s.out, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopySend:
      red.combine(red.args, s.out, s.recv, s.in, s.count);
      kernels::copyBytes(s.send, s.out, s.bytes);
      break;
    case StepOp::kCopy:  // output onto itself
    case StepOp::kRecv:
    case StepOp::kRecvCopySend:
      break;  // no local operand: applyStep handles them
  }
}

void applyStep(StepOp op, const SliceIo& s, size_t elemBytes, const kernels::HostOp& red) {
  // Steps that read this rank's input without reducing it still apply the
  // operator's pre (premulsum's scalar): loadInput copies when there is none.
  switch (op) {
    case StepOp::kSend:
      red.loadInput(s.send, s.in, s.count, elemBytes);
      break;
    case StepOp::kRecv:
      kernels::copyBytes(s.out, s.recv, s.bytes);
      break;
    case StepOp::kCopy:
      red.loadInput(s.out, s.in, s.count, elemBytes);
      break;
    case StepOp::kCopySend:
      red.loadInput(s.send, s.in, s.count, elemBytes);
      red.loadInput(s.out, s.in, s.count, elemBytes);
      break;
    case StepOp::kRecvReduceSend:
      red.reduce(red.args, s.send, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopy:
      red.reduce(red.args, s.out, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvReduceCopySend:
      red.reduce2(red.args, s.out, s.send, s.recv, s.in, s.count);
      break;
    case StepOp::kRecvCopySend:
      kernels::copyTwice(s.out, s.send, s.recv, s.bytes);
      break;
  }
}

Status runStep(const Step& step, size_t sliceElems, const HostCall& call,
               const ChannelConnections& conns, const transport::WaitContext& wait) {
  const bool receives = algo::stepReceives(step.op);
  const bool sends = algo::stepSends(step.op);
  transport::RecvEnd* from = receives ? conns.recv[step.recvPeer] : nullptr;
  transport::SendEnd* to = sends ? conns.send[step.sendPeer] : nullptr;
  if ((receives && from == nullptr) || (sends && to == nullptr)) {
    return internalError(std::string("schedule step ") + algo::stepOpName(step.op) +
                         " uses a peer this channel has no connection to");
  }
  transport::WaitContext recvWait = wait;
  recvWait.peer = step.recvPeer;
  transport::WaitContext sendWait = wait;
  sendWait.peer = step.sendPeer;
  char* out = static_cast<char*>(call.output) + step.outOffset * call.elemBytes;
  const char* in =
      step.fromOutput ? out : static_cast<const char*>(call.input) + step.inOffset * call.elemBytes;
  const bool local = algo::stepReadsOutput(step);
  for (size_t done = 0; done < step.count; done += sliceElems) {
    SliceIo s{};
    s.count = std::min(sliceElems, step.count - done);
    s.bytes = s.count * call.elemBytes;
    s.in = in + done * call.elemBytes;
    s.out = out + done * call.elemBytes;
    if (receives) {
      size_t got = 0;
      BRAID_ASSIGN_OR_RETURN(const void* slot, from->waitSlot(recvWait, &got));
      if (got != s.bytes) {
        return internalError("slice size mismatch: received " + std::to_string(got) +
                             " bytes from rank " + std::to_string(step.recvPeer) + ", expected " +
                             std::to_string(s.bytes) +
                             " (do all ranks call the same collective with the same count?)");
      }
      s.recv = static_cast<const char*>(slot);
    }
    if (sends) {
      BRAID_ASSIGN_OR_RETURN(void* slot, to->waitSlot(sendWait));
      s.send = static_cast<char*>(slot);
    }
    if (local) {
      applyStepFromOutput(step.op, s, call.reduce);
    } else {
      applyStep(step.op, s, call.elemBytes, call.reduce);
    }
    if (sends) to->post(s.bytes);
    if (receives) from->release();
  }
  return Status::success();
}

void traceStep(trace::Recorder& trace, const Step& step, int channel, double startUs,
               size_t elemBytes) {
  trace::Event e;
  e.name = algo::stepOpName(step.op);
  e.track = 1 + channel;
  e.startUs = startUs;
  e.durationUs = trace.nowUs() - startUs;
  e.args = "\"bytes\":" + std::to_string(step.count * elemBytes) +
           ",\"chunk\":" + std::to_string(step.chunk);
  if (step.recvPeer >= 0) e.args += ",\"from\":" + std::to_string(step.recvPeer);
  if (step.sendPeer >= 0) e.args += ",\"to\":" + std::to_string(step.sendPeer);
  trace.add(std::move(e));
}

}  // namespace

Status runOnHost(const algo::Schedule& schedule, const HostCall& call,
                 const std::vector<ChannelConnections>& connections,
                 const transport::WaitContext& wait) {
  if (connections.size() < schedule.channels.size()) {
    return internalError("schedule has more channels than the communicator connected");
  }
  for (size_t c = 0; c < schedule.channels.size(); ++c) {
    for (const Step& step : schedule.channels[c].steps) {
      if (step.count == 0) continue;  // both ends of the message skip it alike
      if (algo::stepReduces(step.op) &&
          (call.reduce.reduce == nullptr || call.reduce.combine == nullptr)) {
        return internalError("reducing step without a reduction function");
      }
      const double start = call.trace ? call.trace->nowUs() : 0;
      BRAID_TRY(runStep(step, schedule.sliceElems, call, connections[c], wait));
      if (call.trace) traceStep(*call.trace, step, static_cast<int>(c), start, call.elemBytes);
    }
  }
  return Status::success();
}

}  // namespace braid::exec
