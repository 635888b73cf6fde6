// Calls on a GPU communicator (calls.h): collectives run their schedule's device
// program (the same Program the host executor runs, lowered once and copied
// to the device), point-to-point transfers a one-instruction program per
// (peer, direction, size); both become calls of the engine's launch
// (gpu_launch.cc), enqueued on the caller's stream.
#include <algorithm>
#include <string>
#include <vector>

#include "base/log.h"
#include "comm/calls.h"
#include "comm/gpu_side.h"

namespace braid::comm {
namespace {

namespace engine = kernels::engine;

// A GPU communicator takes memory its device can address: device memory,
// managed memory, or pinned host memory; not pageable host memory.
Status checkDeviceBuffer(gpu::Runtime& rt, const void* buffer, const char* name) {
  if (buffer == nullptr) return Status::success();
  BRAID_ASSIGN_OR_RETURN(const gpu::PointerInfo info, rt.pointerInfo(buffer));
  if (info.kind == gpu::MemoryKind::kHost) {
    return invalidArgument(std::string(name) +
                           " is host memory, but this communicator runs on a GPU: pass device "
                           "memory (cudaMalloc, ncclMemAlloc), or make the communicator with "
                           "BRAID_HOST_COMM=1 for host buffers");
  }
  return Status::success();
}

// What `call` reads and writes of this rank's memory, with `output` where it writes (the call's,
// or scratch for a tree reduce's non-root): the input and output extents of its collective,
// variable blocks included.
std::vector<Access> accessesOf(const CollCall& call, int nranks, int rank, void* output) {
  const size_t elem = dataTypeSize(call.type);
  auto blocksExtent = [&]() -> size_t {
    if (call.blockCounts == nullptr) return call.count * static_cast<size_t>(nranks);
    size_t end = 0;
    for (int r = 0; r < nranks; ++r) {
      end = std::max(end, call.blockOffsets[r] + call.blockCounts[r]);
    }
    return end;
  };
  size_t in = call.count;
  size_t out = call.count;
  bool reads = true;
  bool writes = true;
  switch (call.collective) {
    case Collective::kAllReduce:
      break;
    case Collective::kReduceScatter:
      in = blocksExtent();
      break;
    case Collective::kAllGather:
      out = blocksExtent();
      break;
    case Collective::kBroadcast:
      reads = rank == call.root;
      break;
    case Collective::kReduce:
      writes = rank == call.root || output != call.output;
      break;
  }
  std::vector<Access> accesses;
  if (reads) accesses.push_back({call.input, in * elem, false});
  if (writes) accesses.push_back({output, out * elem, true});
  return accesses;
}

}  // namespace

Status Calls::runOnGpu(const CollCall& call) {
  GpuSide& gpu = *gpu_;
  const int rank = members_.rank;
  gpu::Runtime& rt = *gpu.runtime;
  // The first call of a shape allocates, uploads and waits on the private stream (its FIFOs,
  // its device program, scratch), which a capture of the user's stream in global mode (PyTorch's
  // default) would forbid: relaxed, as NCCL is, it may, and what goes on the user's stream is
  // only the launch, which the capture records.
  gpu::RelaxedCapture relaxed(rt);
  BRAID_TRY(rt.setDevice(gpu.device));
  const bool readsInput =
      !rooted(call.collective) || call.collective == Collective::kReduce || rank == call.root;
  const bool writesOutput = call.collective != Collective::kReduce || rank == call.root;
  if (readsInput) BRAID_TRY(checkDeviceBuffer(rt, call.input, "sendbuff"));
  if (writesOutput) BRAID_TRY(checkDeviceBuffer(rt, call.output, "recvbuff"));
  OpSpec spec;
  if (reduces(call.collective)) {
    BRAID_ASSIGN_OR_RETURN(spec, userOps.spec(call.type, call.op, members_.nranks));
  }
  // A rank alone, whose operator leaves values as they are (all but
  // premulsum: avg divides by 1), only copies: cudaMemcpyAsync-fast, and
  // nothing at all in place, as NCCL does.
  if (members_.nranks == 1 && spec.functor != RedOp::kPreMulSum) {
    const size_t bytes = call.count * dataTypeSize(call.type);
    BRAID_TRY(gpu.flush());  // what the group queued on this stream comes first
    if (call.input == call.output || bytes == 0) return Status::success();
    return rt.copy(call.output, call.input, bytes, call.stream).withContext("a lone rank's copy");
  }
  BRAID_ASSIGN_OR_RETURN(const tune::Choice choice, selector_.choose(call));
  const double traceStart = recorder_.traceNowUs();
  const size_t elemBytes = dataTypeSize(call.type);
  engine::EngineCall ec{};
  ec.input = call.input;
  ec.elemBytes = static_cast<uint32_t>(elemBytes);
  ec.type = static_cast<uint8_t>(call.type);
  ec.op = static_cast<uint8_t>(spec.functor);
  ec.copyOnly = reduces(call.collective) ? 0 : 1;
  ec.protocol = static_cast<uint8_t>(choice.protocol);  // FifoProtocol has its values
  ec.args = spec.args;
  ec.scalarPointer = spec.scalarPointer;
  if (choice.algorithm == algo::Algorithm::kOneShot) {
    // One block reads every peer's board; its LL cells serve either protocol.
    ec.oneShot = gpu.oneShot->board();
    ec.nchannels = 1;
    ec.output = call.output;
    ec.sliceElems = call.count;
    recorder_.plan(choice, nullptr);
    BRAID_TRY(gpu.enqueue({ec}, {{-1, 0}}, accessesOf(call, members_.nranks, rank, call.output),
                          call.stream));
    recorder_.traceCall(call, choice, 1, traceStart);
    return Status::success();
  }
  BRAID_ASSIGN_OR_RETURN(const CachedSchedule* cached, scheduleFor(call, choice));
  recorder_.plan(choice, &cached->program);
  void* output = call.output;
  // As on the host: a tree reduce's inner nodes keep partial results in
  // their output, which a non-root must not see.
  if (call.collective == Collective::kReduce && rank != call.root &&
      choice.algorithm == algo::Algorithm::kTree) {
    const size_t need = call.count * elemBytes;
    if (gpu.scratchBytes < need) {
      if (gpu.scratch != nullptr) gpu.retiredScratch.push_back(gpu.scratch);
      gpu.scratch = nullptr;
      gpu.scratchBytes = 0;
      BRAID_ASSIGN_OR_RETURN(gpu.scratch, rt.deviceAlloc(need));
      gpu.scratchBytes = need;
    }
    output = gpu.scratch;
  }
  ec.channels = cached->device->channels();
  ec.nchannels = cached->device->nchannels();
  ec.output = output;
  ec.sliceElems = cached->program.sliceElems;
  BRAID_TRY(
      gpu.enqueue({ec}, {{-1, 0}}, accessesOf(call, members_.nranks, rank, output), call.stream));
  recorder_.traceCall(call, choice, ec.nchannels, traceStart);
  return Status::success();
}

Status Calls::sendRecvOnGpu(const std::vector<P2pOp>& ops, void* stream) {
  GpuSide& gpu = *gpu_;
  const int rank = members_.rank;
  gpu::Runtime& rt = *gpu.runtime;
  gpu::RelaxedCapture relaxed(rt);  // as runOnGpu: first uses set up on the private stream
  BRAID_TRY(rt.setDevice(gpu.device));
  std::vector<const P2pOp*> selfSends, selfRecvs;
  std::vector<int> recvFrom, sendTo;
  for (const P2pOp& op : ops) {
    if (op.count == 0) continue;
    BRAID_TRY(
        checkDeviceBuffer(rt, op.buffer, op.kind == P2pOp::Kind::kSend ? "sendbuff" : "recvbuff"));
    if (op.peer == rank) {
      (op.kind == P2pOp::Kind::kSend ? selfSends : selfRecvs).push_back(&op);
    } else if (op.kind == P2pOp::Kind::kSend) {
      sendTo.push_back(op.peer);
    } else {
      recvFrom.push_back(op.peer);
    }
  }
  if (selfSends.size() != selfRecvs.size()) {
    return invalidUsage(std::to_string(selfSends.size()) + " send(s) to self but " +
                        std::to_string(selfRecvs.size()) +
                        " receive(s) from self in one group: each needs its match");
  }
  BRAID_TRY(gpu.linkP2p(recvFrom, sendTo));
  const size_t slot = gpuP2pSlotBytes(links_.slotBytes);
  // The program of one transfer, made the first time its peer, direction
  // and size come up.
  auto programFor = [&](int peer, bool send, size_t bytes) -> Result<const exec::DeviceProgram*> {
    auto& prog = gpu.p2pPrograms[{peer, send, bytes}];
    if (!prog) {
      exec::Program program;
      program.sliceElems = slot;
      exec::ChannelPorts ports;
      if (peer == rank) {
        exec::ChannelProgram ch;
        engine::Instruction copy{};
        copy.kind = engine::InstrKind::kStep;
        copy.op = engine::StepOp::kCopy;
        copy.count = bytes;
        copy.recvPort = engine::kNoPort;
        copy.sendPort = engine::kNoPort;
        ch.instrs.push_back(copy);
        program.channels.push_back(ch);
      } else {
        program.channels.push_back(exec::p2pChannel(send, peer, 0, bytes));
        const auto e = send ? gpu.sendLinks[{peer, kP2pChannel}]->end()
                            : gpu.recvLinks[{peer, kP2pChannel}]->end();
        (send ? ports.send : ports.recv).push_back({e.fifo, e.cursor, peer, 0});
      }
      BRAID_ASSIGN_OR_RETURN(exec::DeviceProgram uploaded,
                             exec::DeviceProgram::upload(rt, program, {ports}, gpu.stream));
      prog = std::make_unique<exec::DeviceProgram>(std::move(uploaded));
    }
    return prog.get();
  };
  // The whole batch goes into one launch: its transfers run at once, since
  // each may wait for another (a send bigger than the FIFO for its peer's
  // receive, which comes after the peer's own send).
  std::vector<engine::EngineCall> calls;
  std::vector<std::pair<int, int>> lanes;
  std::vector<Access> accesses;
  auto transfer = [&](const void* input, void* output, int peer, bool send, size_t bytes,
                      int lane) -> Status {
    if (input != nullptr) accesses.push_back({input, bytes, false});
    if (output != nullptr) accesses.push_back({output, bytes, true});
    BRAID_ASSIGN_OR_RETURN(const exec::DeviceProgram* prog, programFor(peer, send, bytes));
    engine::EngineCall ec{};
    ec.channels = prog->channels();
    ec.nchannels = 1;
    ec.input = input;
    ec.output = output;
    ec.sliceElems = slot;
    ec.elemBytes = 1;
    ec.type = static_cast<uint8_t>(DataType::kInt8);
    ec.op = static_cast<uint8_t>(RedOp::kSum);
    ec.copyOnly = 1;
    calls.push_back(ec);
    lanes.push_back({peer, lane});
    return Status::success();
  };
  for (size_t i = 0; i < selfSends.size(); ++i) {
    const size_t bytes = selfSends[i]->count * dataTypeSize(selfSends[i]->type);
    const size_t want = selfRecvs[i]->count * dataTypeSize(selfRecvs[i]->type);
    if (bytes != want) {
      return invalidUsage("send to self of " + std::to_string(bytes) +
                          " bytes does not match the receive from self of " + std::to_string(want) +
                          " bytes");
    }
    BRAID_TRY(transfer(selfSends[i]->buffer, selfRecvs[i]->buffer, rank, true, bytes, 2));
  }
  for (const P2pOp& op : ops) {
    if (op.count == 0 || op.peer == rank) continue;
    const size_t bytes = op.count * dataTypeSize(op.type);
    const bool send = op.kind == P2pOp::Kind::kSend;
    BRAID_TRY(transfer(send ? op.buffer : nullptr, send ? nullptr : op.buffer, op.peer, send, bytes,
                       send ? 1 : 0));
  }
  return gpu.enqueue(calls, lanes, accesses, stream);
}

}  // namespace braid::comm
