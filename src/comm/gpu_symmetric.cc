// Enqueuing a symmetric call (gpu_symmetric.h).
#include "comm/gpu_symmetric.h"

#include <string>

#include "comm/gpu_side.h"
#include "comm/ways/ways.h"
#include "nccl_device/window_layout.h"

namespace braid::comm {
namespace {

namespace engine = kernels::engine;

// Whether `buffer` is `span`'s place in its window, as the kernel finds it (its offset from
// the window's localBase).
Status checkSpan(const WindowedBuffer& span, const void* buffer, size_t bytes, const char* name) {
  const ncclWindow_vidmem* w = span.window;
  if (w == nullptr || span.device == nullptr || w->magic != BRAID_WINDOW_MAGIC) {
    return invalidUsage(std::string(name) + " lies in a window that is not registered");
  }
  if (w->localBase + span.offset != static_cast<const char*>(buffer) ||
      span.offset + bytes > w->size) {
    return internalError(std::string(name) + ": the window lookup's offset " +
                         std::to_string(span.offset) + " (" + std::to_string(bytes) +
                         " bytes) is not where the buffer lies in its window of " +
                         std::to_string(w->size) + " bytes");
  }
  return Status::success();
}

}  // namespace

engine::SymmetricKind symmetricKindFor(const CollectiveCall& call, bool twoShot) {
  switch (call.collective) {
    case Collective::kAllGather:
      return engine::SymmetricKind::kAllGather;
    case Collective::kReduceScatter:
      return engine::SymmetricKind::kReduceScatter;
    default:
      return twoShot || call.input == call.output ? engine::SymmetricKind::kAllReduceTwoShot
                                                  : engine::SymmetricKind::kAllReduceOneShot;
  }
}

Status runSymmetric(GpuSide& gpu, const CollectiveCall& call, const OpSpec& spec,
                    const WindowedBuffer& send, const WindowedBuffer& recv, SymmetricPlan plan,
                    int nranks, int rank) {
  const size_t elem = dataTypeSize(call.type);
  const size_t all = call.count * static_cast<size_t>(nranks) * elem;
  const size_t inBytes = call.collective == Collective::kReduceScatter ? all : call.count * elem;
  const size_t outBytes = call.collective == Collective::kAllGather ? all : call.count * elem;
  BRAID_TRY(checkSpan(send, call.input, inBytes, "sendbuff"));
  BRAID_TRY(checkSpan(recv, call.output, outBytes, "recvbuff"));
  if (plan.kind == engine::SymmetricKind::kAllReduceOneShot && call.input == call.output) {
    return internalError("the one-shot symmetric all_reduce cannot run in place");
  }
  if (plan.blocks < 1 || plan.blocks > engine::kMaxSymmetricBlocks) {
    return internalError("a symmetric call on " + std::to_string(plan.blocks) + " blocks");
  }
  BRAID_ASSIGN_OR_RETURN(exec::DeviceSymmetric * symmetric, gpu.symmetric());
  const engine::SymmetricCall* record = nullptr;
  {
    gpu::RelaxedCapture relaxed(
        gpu.runtime());  // a new record: the caller's stream may be captured
    // The kernel reads the windows as the device sees them (their device structs).
    BRAID_ASSIGN_OR_RETURN(record, symmetric->callFor(send.device, recv.device, plan.kind));
  }
  engine::EngineCall ec{};
  ec.kind = static_cast<uint8_t>(engine::CallKind::kSymmetric);
  ec.symmetric = record;
  ec.nchannels = plan.blocks;
  ec.input = call.input;
  ec.output = call.output;
  ec.sliceElems = call.count;
  ec.elemBytes = static_cast<uint16_t>(elem);
  ec.type = static_cast<uint8_t>(call.type);
  ec.op = static_cast<uint8_t>(spec.functor);
  ec.copyOnly = reduces(call.collective) ? 0 : 1;
  ec.args = spec.args;
  ec.scalarPointer = spec.scalarPointer;
  return gpu.enqueue({ec}, {{-1, 0}}, accessesOf(call, nranks, rank, call.output), call.stream);
}

}  // namespace braid::comm
