// The boards of the one-shot all-reduce on GPU communicators
// (kernels/engine/one_shot.h says what the kernel does with them).
//
// Each rank owns a board in its GPU's memory (or pinned host memory where a
// peer's GPU cannot reach it) that its peers store their operands into: two
// slots of one area per writer, each the lines of maxBytes of operand at
// twice its size (flags), so 2 * nranks * (2 * maxBytes + 16) bytes plus the
// pushed words: 2 MiB at 8 ranks and 64 KiB, 8 MiB at 32. It maps every
// peer's board (transport/cuda_ipc/gpu_region.h) to store into it. (A board
// in pinned host memory is polled by its own GPU across PCIe: the push saves
// the round trips to peers, not that one.) The rank's
// own state (its call counts) and the OneShotBoard the kernel reads lie in
// its device memory, apart from the board its peers map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braid/status.h"
#include "gpu/runtime.h"
#include "kernels/engine/one_shot.h"
#include "transport/cuda_ipc/gpu_region.h"

namespace braid::exec {

/// The postfix program of the in-order binary tree's fold over `nranks`
/// operands (algo::foldInOrder): rank numbers push, kFoldCombine combines.
std::vector<int16_t> inOrderFoldProgram(int nranks);

class DeviceOneShot {
 public:
  /// The largest message a board is made for.
  static constexpr size_t kDefaultMaxBytes = 64 * 1024;
  /// Generations before a flag repeats (one_shot.h); tests pass a small one.
  static constexpr uint32_t kFlagPeriod = 0xffffffffu;

  /// Every rank calls create with the same nonce, nranks, maxBytes and
  /// flagPeriod, with its GPU current; `barrier` is the bootstrap barrier.
  /// Each rank publishes its board, all meet, each maps its peers' boards,
  /// all meet again, and each unlinks its names. `stream` serves the
  /// board's copies, now and in waitForWriters.
  static Result<std::unique_ptr<DeviceOneShot>> create(gpu::Runtime& runtime, uint64_t nonce,
                                                       int rank, int nranks, size_t maxBytes,
                                                       transport::cuda_ipc::FifoPlacement placement,
                                                       const std::function<Status()>& barrier,
                                                       gpu::Stream stream,
                                                       uint32_t flagPeriod = kFlagPeriod);

  /// Waits, once this rank's kernels have finished, until every peer has
  /// said it is done storing into this rank's board for every call this rank
  /// began (their pushed words), so that the board can go: until `timeoutMs`
  /// passes (0: no limit) or `*abortWord` is set. True when every peer had.
  bool waitForWriters(uint64_t timeoutMs, const uint32_t* abortWord);

  DeviceOneShot(const DeviceOneShot&) = delete;
  DeviceOneShot& operator=(const DeviceOneShot&) = delete;
  ~DeviceOneShot();

  /// What a one-shot EngineCall points to, in device memory.
  const kernels::engine::OneShotBoard* board() const { return board_; }
  /// The most bytes (count * element size) one call may reduce.
  size_t maxBytes() const { return maxBytes_; }

 private:
  DeviceOneShot(gpu::Runtime& runtime, size_t maxBytes, gpu::Stream stream)
      : runtime_(runtime), maxBytes_(maxBytes), stream_(stream) {}

  gpu::Runtime& runtime_;
  size_t maxBytes_;
  gpu::Stream stream_;
  int rank_ = 0;
  int nranks_ = 0;
  size_t pushedAt_ = 0;  ///< bytes from the board's start to its pushed words
  std::unique_ptr<transport::cuda_ipc::OwnedRegion> own_;
  std::vector<std::unique_ptr<transport::cuda_ipc::MappedRegion>> peers_;
  void* private_ = nullptr;  ///< the OneShotBoard and the state
  const kernels::engine::OneShotBoard* board_ = nullptr;
  const kernels::engine::OneShotState* state_ = nullptr;  ///< in the private memory
};

}  // namespace braid::exec
