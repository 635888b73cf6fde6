// The FIFOs GPU communicators run on: the engine's FIFO (kernels/engine/fifo.h)
// in memory both ranks' kernels address.
//
// The receiver owns the FIFO, as with shm: it allocates it (a region of
// gpu_region.h: in its GPU's memory, or pinned host memory for GPUs that
// cannot reach each other) and publishes how to reach it in a small shm
// segment (the rendezvous record) under a name both sides compute, so no
// handshake is needed. The sender opens the record once it exists and maps
// the FIFO.
//
// Each end keeps its cursor (fifo.h) in its own rank's device memory, at a
// place the caller gives, so that it survives from one launch to the next.
//
// A FIFO is Simple or LL (FifoFormat): both have the counters first; an LL
// FIFO's slots are cells (kernels/engine/ll.h), filled at creation as the
// round before the first message would have left them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "braid/status.h"
#include "gpu/runtime.h"
#include "kernels/engine/fifo.h"
#include "kernels/engine/launch.h"
#include "transport/cuda_ipc/gpu_region.h"

namespace braid::transport::cuda_ipc {

/// How a FIFO's slots carry data.
struct FifoFormat {
  kernels::engine::FifoProtocol protocol = kernels::engine::FifoProtocol::kSimple;
  /// LL: cells carry sequence numbers modulo 2^llFlagBits (4..32); tests
  /// make it small to reach the flags' wrap-around in a few messages.
  uint32_t llFlagBits = 32;
};

/// A FIFO end as the engine's DevicePort needs it.
struct GpuEnd {
  kernels::engine::FifoRef fifo;        ///< in this process's address space
  kernels::engine::FifoCursor* cursor;  ///< this end's cursor, in device memory
  uint32_t flagBits;                    ///< LL: the FIFO's flag bits; Simple: 0
};

class GpuRecvEnd {
 public:
  /// Allocates the FIFO of kFifoSlots slots of `slotBytes` (the payload of
  /// one slot) on the current device (or pinned), lays it out for `format`
  /// (on `stream`, waiting for it), and publishes the record `name`.
  static Result<std::unique_ptr<GpuRecvEnd>> create(gpu::Runtime& runtime, const std::string& name,
                                                    size_t slotBytes, FifoPlacement placement,
                                                    kernels::engine::FifoCursor* cursor,
                                                    gpu::Stream stream, FifoFormat format = {});
  /// A Simple FIFO split between two memories, for a proxy that sends its slots over the
  /// network by GPUDirect RDMA (a PXN relay, transport/net/ib/ib_relay.h): its counters in
  /// pinned host memory, which the proxy polls, and its slots in this rank's GPU memory, which
  /// the NIC reads. The slots start on a page and take a whole number of pages
  /// (`*slotsBytes`), so that a dmabuf export of them covers nothing else. The sender maps both
  /// (tryOpen), its GPU writing the slots by CUDA IPC: it must reach this GPU's memory.
  static Result<std::unique_ptr<GpuRecvEnd>> createSplit(gpu::Runtime& runtime,
                                                         const std::string& name, size_t slotBytes,
                                                         gpu::Stream stream, size_t* slotsBytes);
  virtual ~GpuRecvEnd() = default;
  virtual GpuEnd end() const = 0;
  virtual FifoPlacement placement() const = 0;
};

class GpuSendEnd {
 public:
  /// Maps the FIFO whose record is `name`; nullptr (not an error) while the
  /// receiver has not published it yet. Unlinks the record's name (and the
  /// pinned FIFO's) once mapped: both ends then hold what they need. Fails
  /// when the receiver made it with another slot size or protocol.
  static Result<std::unique_ptr<GpuSendEnd>> tryOpen(
      gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
      kernels::engine::FifoCursor* cursor,
      kernels::engine::FifoProtocol protocol = kernels::engine::FifoProtocol::kSimple);
  virtual ~GpuSendEnd() = default;
  virtual GpuEnd end() const = 0;
  virtual FifoPlacement placement() const = 0;
};

/// The names a receiving end made (the record, and the pinned FIFO), for a
/// cleanup when its sender never came.
std::string pinnedSegmentName(const std::string& recordName);
/// Unlinks the names of the GPU FIFO `recordName` (its record, and its pinned FIFO where
/// `placement` is pinned host memory) once every end that needs them has mapped it.
void unlinkFifoNames(const std::string& recordName, FifoPlacement placement);

}  // namespace braid::transport::cuda_ipc
