// Where braid-perf's buffers live, as nccl-tests keeps them: in device memory
// when the communicators run on GPUs, in host memory otherwise.
//
// Two ways to reach a GPU, chosen once: braid's own seam (braidGetDeviceApi
// in braid_ext.h), which is the CUDA runtime, or the emulated GPU when
// BRAID_EMULATE_GPUS is set; or, when the loaded libnccl.so.2 is not braid's
// (NVIDIA's, for a comparison in the same binary), the CUDA runtime linked
// into braid-perf. braid's entry is looked up at run time, so the binary
// also loads against a library that lacks it.
#pragma once

#include <cstddef>
#include <string>

#include "nccl.h"

namespace braid::perf {

class Device {
 public:
  /// The process's device layer, chosen at the first call.
  static const Device& get();

  virtual ~Device() = default;
  /// "emulated GPU (braid)", "CUDA (braid's runtime)", "CUDA (braid-perf's runtime)", "none".
  virtual const char* kind() const = 0;
  /// Devices there are; 0: buffers stay in host memory.
  virtual int count() const = 0;
  virtual bool setDevice(int device) const = 0;
  /// The device's name for the header ("NVIDIA H200", "emulated GPU 0").
  virtual std::string name(int device) const = 0;
  /// Device memory of the current device; nullptr (and a message) on failure.
  virtual void* alloc(size_t bytes) const = 0;
  virtual void release(void* p) const = 0;
  /// Copies in either direction on `stream` and waits for it.
  virtual bool copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) const = 0;
  virtual cudaStream_t newStream() const = 0;
  virtual void destroyStream(cudaStream_t stream) const = 0;
  virtual bool sync(cudaStream_t stream) const = 0;
};

}  // namespace braid::perf
