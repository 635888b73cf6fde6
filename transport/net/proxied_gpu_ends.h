// The kernel's ends of a FIFO to a rank on another host, whose other side is a proxy of this
// process (sockets: socket/gpu_socket_fifo.cc; verbs: ib/gpu_ib_fifo.cc).
//
// The FIFO is a GPU FIFO in pinned host memory, which both the kernel and the proxy address (over
// verbs with GPUDirect RDMA, its slots are in device memory instead: device_slots_fifo.h);
// the kernel runs it exactly as a FIFO to a rank of its host. A subclass adds the proxy as a
// member of its own, which therefore stops before the FIFO goes (PumpedEnd, proxied_ends.h, where
// it is a pump).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "gpu/runtime.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/net/proxied_ends.h"

namespace braid::transport::net {

/// The pinned-host GPU FIFO such an end is made over; `cursor` is the one its receiving side
/// keeps in device memory.
inline Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> makePinnedFifo(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, gpu::Stream stream) {
  Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> fifo = cuda_ipc::GpuRecvEnd::create(
      runtime, name, slotBytes, cuda_ipc::FifoPlacement::kPinnedHost, cursor, stream);
  // Only this process maps it (its kernel and its proxy): the names can go at once, so that a
  // rank killed with SIGKILL leaves nothing behind in /dev/shm.
  cuda_ipc::unlinkFifoNames(name, cuda_ipc::FifoPlacement::kPinnedHost);
  return fifo;
}

class ProxiedGpuSendEnd : public cuda_ipc::GpuSendEnd {
 public:
  cuda_ipc::GpuEnd end() const override {
    cuda_ipc::GpuEnd e = fifo_->end();
    e.cursor = cursor_;  // the kernel sends with its own cursor
    return e;
  }
  cuda_ipc::FifoPlacement placement() const override { return fifo_->placement(); }

 protected:
  ProxiedGpuSendEnd(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo, kernels::engine::FifoCursor* cursor)
      : fifo_(std::move(fifo)), cursor_(cursor) {}
  kernels::engine::FifoRef fifoRef() const { return fifo_->end().fifo; }
  std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo_;  // the proxy is this FIFO's receiver
  kernels::engine::FifoCursor* cursor_;
};

class ProxiedGpuRecvEnd : public cuda_ipc::GpuRecvEnd {
 public:
  cuda_ipc::GpuEnd end() const override { return fifo_->end(); }
  cuda_ipc::FifoPlacement placement() const override { return fifo_->placement(); }

 protected:
  explicit ProxiedGpuRecvEnd(std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo) : fifo_(std::move(fifo)) {}
  kernels::engine::FifoRef fifoRef() const { return fifo_->end().fifo; }
  std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo_;  // the proxy posts into it as its sender
};

}  // namespace braid::transport::net
