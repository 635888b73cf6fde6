// A Program (exec/program.h) in device memory, as the engine's kernels read
// it: DeviceChannel descriptors, their instructions and their ports
// (kernels/engine/launch.h), in one allocation made once per schedule and
// kept while the communicator lives (a captured CUDA graph may replay it).
#pragma once

#include <cstddef>
#include <vector>

#include "braid/status.h"
#include "exec/program.h"
#include "gpu/runtime.h"
#include "kernels/engine/launch.h"

namespace braid::exec {

/// The ports of one channel, in the order of its recvPeers and sendPeers.
struct ChannelPorts {
  std::vector<kernels::engine::DevicePort> recv;
  std::vector<kernels::engine::DevicePort> send;
};

class DeviceProgram {
 public:
  /// Copies `program` with the ports `ports` (one per channel) into memory
  /// of the current device, on `stream` (the communicator's own, so that
  /// the copy waits for nothing of the user's); waits for the copy. An LL
  /// program (llSlotBytes > 0, its FIFOs' payload per slot) gets each
  /// channel's two stages (kernels/engine/launch.h) in the same memory.
  static Result<DeviceProgram> upload(gpu::Runtime& runtime, const Program& program,
                                      const std::vector<ChannelPorts>& ports, gpu::Stream stream,
                                      size_t llSlotBytes = 0);
  DeviceProgram() = default;
  DeviceProgram(DeviceProgram&& other) noexcept;
  DeviceProgram& operator=(DeviceProgram&& other) noexcept;
  DeviceProgram(const DeviceProgram&) = delete;
  DeviceProgram& operator=(const DeviceProgram&) = delete;
  ~DeviceProgram();

  /// The channel descriptors, in device memory.
  const kernels::engine::DeviceChannel* channels() const { return channels_; }
  uint32_t nchannels() const { return nchannels_; }
  size_t sliceElems() const { return sliceElems_; }

 private:
  gpu::Runtime* runtime_ = nullptr;
  void* memory_ = nullptr;
  const kernels::engine::DeviceChannel* channels_ = nullptr;
  uint32_t nchannels_ = 0;
  size_t sliceElems_ = 0;
};

}  // namespace braid::exec
