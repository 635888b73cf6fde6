// The barrier areas and call records of the symmetric kernels on GPU communicators
// (kernels/engine/symmetric.h says what the kernel does with them).
//
// Each rank owns a barrier area of kSymmetricBarrierBytes (a word per block and writer) in its
// GPU's memory, or pinned host memory where a peer's GPU cannot reach it, that its peers store
// their epochs into; it maps every peer's area (transport/cuda_ipc/gpu_region.h, CUDA IPC), so
// the barriers need nothing of the windows the calls run on. The rank's own state (its epochs)
// and the SymmetricBoard the kernel reads lie in its device memory.
//
// A call's record (SymmetricCall: the board, the two windows, the kind) is made the first time
// its (send window, receive window, kind) comes up and kept for the communicator's life: a
// queued launch or a captured graph may read it at any time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "braid/status.h"
#include "gpu/runtime.h"
#include "kernels/engine/symmetric.h"
#include "transport/cuda_ipc/gpu_region.h"

namespace braid::exec {

class DeviceSymmetric {
 public:
  /// Every rank of the host calls create with the same nonce and nranks, with its GPU current;
  /// `barrier` is the bootstrap barrier. Each rank publishes its area, all meet, each maps its
  /// peers' areas, all meet again, and each unlinks its names. `stream` serves the copies.
  static Result<std::unique_ptr<DeviceSymmetric>> create(
      gpu::Runtime& runtime, uint64_t nonce, int rank, int nranks,
      transport::cuda_ipc::FifoPlacement placement, const std::function<Status()>& barrier,
      gpu::Stream stream);

  DeviceSymmetric(const DeviceSymmetric&) = delete;
  DeviceSymmetric& operator=(const DeviceSymmetric&) = delete;
  ~DeviceSymmetric();

  /// What a symmetric EngineCall of `kind` on windows `send` and `recv` (device-readable, as
  /// ncclCommWindowRegister gives them) points to, in device memory.
  Result<const kernels::engine::SymmetricCall*> callFor(const ncclWindow_vidmem* send,
                                                        const ncclWindow_vidmem* recv,
                                                        kernels::engine::SymmetricKind kind);

 private:
  DeviceSymmetric(gpu::Runtime& runtime, gpu::Stream stream) : runtime_(runtime), stream_(stream) {}

  /// Records made per device allocation.
  static constexpr size_t kCallsPerChunk = 64;

  gpu::Runtime& runtime_;
  gpu::Stream stream_;
  std::unique_ptr<transport::cuda_ipc::OwnedRegion> own_;
  std::vector<std::unique_ptr<transport::cuda_ipc::MappedRegion>> peers_;
  void* private_ = nullptr;  ///< the SymmetricBoard and the state
  const kernels::engine::SymmetricBoard* board_ = nullptr;
  std::vector<void*> chunks_;  ///< the call records' device memory
  size_t usedInChunk_ = kCallsPerChunk;
  std::map<std::tuple<const void*, const void*, uint32_t>, const kernels::engine::SymmetricCall*>
      calls_;
};

}  // namespace braid::exec
