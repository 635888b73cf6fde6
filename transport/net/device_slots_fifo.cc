// A GPU FIFO with its slots in device memory: see device_slots_fifo.h.
#include "transport/net/device_slots_fifo.h"

#include <cstdint>
#include <cstring>

#include "base/log.h"

namespace braid::transport::net {
namespace {

constexpr size_t kPage = 4096;

size_t roundToPage(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

Result<std::unique_ptr<DeviceSlotsFifo>> DeviceSlotsFifo::create(
    gpu::Runtime& runtime, size_t slotBytes, kernels::engine::FifoCursor* cursor) {
  if (slotBytes == 0 || slotBytes >= kernels::engine::kLastSlice) {
    return invalidArgument("GPU FIFO in device memory: slot size " + std::to_string(slotBytes) +
                           " is not in 1..2147483647");
  }
  std::unique_ptr<DeviceSlotsFifo> fifo(new DeviceSlotsFifo(runtime));
  BRAID_ASSIGN_OR_RETURN(fifo->counters_, runtime.hostAlloc(kPage));
  std::memset(fifo->counters_, 0, kPage);  // host memory: the kernel has not seen it yet
  const size_t stride = roundToPage(slotBytes);
  fifo->slotsBytes_ = kernels::engine::kFifoSlots * stride;
  BRAID_ASSIGN_OR_RETURN(fifo->allocation_, runtime.deviceAlloc(fifo->slotsBytes_ + kPage));
  const uintptr_t start = reinterpret_cast<uintptr_t>(fifo->allocation_);
  cuda_ipc::GpuEnd& e = fifo->end_;
  e.fifo.counters = static_cast<kernels::engine::FifoCounters*>(fifo->counters_);
  e.fifo.slots = reinterpret_cast<char*>((start + kPage - 1) / kPage * kPage);
  e.fifo.stride = stride;
  e.fifo.slotBytes = static_cast<uint32_t>(slotBytes);
  e.cursor = cursor;
  e.flagBits = 0;
  return fifo;
}

DeviceSlotsFifo::~DeviceSlotsFifo() {
  if (allocation_ != nullptr) {
    if (Status s = runtime_.deviceFree(allocation_); !s.ok()) {
      BRAID_WARN("%s", s.message().c_str());
    }
  }
  if (counters_ != nullptr) {
    if (Status s = runtime_.hostFree(counters_); !s.ok()) BRAID_WARN("%s", s.message().c_str());
  }
}

}  // namespace braid::transport::net
