// A GPU FIFO to a rank on another host whose slots are in device memory (GPUDirect RDMA): the
// NIC writes received slots into them and reads posted slots out of them, so no byte crosses
// host memory. Its counters stay in pinned host memory, where both the kernel and the proxy
// poll them, as NCCL keeps its head and tail in host memory beside device buffers.
//
// The slots are a whole number of host pages starting on a page, inside an allocation of their
// own (one page larger: cudaMalloc promises 256-byte alignment only), so that the dmabuf the NIC
// registers (exportDmabuf, which wants pages) covers them and nothing else. Simple protocol only:
// LL does not cross hosts.
#pragma once

#include <cstddef>
#include <memory>

#include "braid/status.h"
#include "gpu/runtime.h"
#include "kernels/engine/fifo.h"
#include "transport/cuda_ipc/gpu_fifo.h"

namespace braid::transport::net {

class DeviceSlotsFifo final : public cuda_ipc::GpuRecvEnd {
 public:
  /// Counters (zero) in pinned host memory and kFifoSlots slots of `slotBytes` on the current
  /// device; `cursor` is the kernel's, in device memory.
  static Result<std::unique_ptr<DeviceSlotsFifo>> create(gpu::Runtime& runtime, size_t slotBytes,
                                                         kernels::engine::FifoCursor* cursor);
  ~DeviceSlotsFifo() override;
  DeviceSlotsFifo(const DeviceSlotsFifo&) = delete;
  DeviceSlotsFifo& operator=(const DeviceSlotsFifo&) = delete;

  cuda_ipc::GpuEnd end() const override { return end_; }
  cuda_ipc::FifoPlacement placement() const override {
    return cuda_ipc::FifoPlacement::kDeviceMemory;
  }
  /// The slots' bytes, from end().fifo.slots (a page boundary): a whole number of pages.
  size_t slotsBytes() const { return slotsBytes_; }

 private:
  DeviceSlotsFifo(gpu::Runtime& runtime) : runtime_(runtime) {}

  gpu::Runtime& runtime_;
  void* counters_ = nullptr;
  void* allocation_ = nullptr;  ///< the device allocation the slots lie in
  size_t slotsBytes_ = 0;
  cuda_ipc::GpuEnd end_{};
};

}  // namespace braid::transport::net
