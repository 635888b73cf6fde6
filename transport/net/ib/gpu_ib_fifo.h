// FIFOs between a GPU communicator's rank and a rank on another host, over verbs.
//
// The kernel runs the engine's FIFO protocol on a GPU FIFO in pinned host memory, as it does for
// sockets (transport/net/socket/gpu_socket_fifo.h); the verbs proxy writes posted slots from it
// straight into the peer's pinned FIFO (ib_fifo_pump.h). The NIC reads and writes the pinned
// memory, so the bytes cross once. Device memory registered by dmabuf, where the NIC could reach
// the GPU's memory directly (GPUDirect RDMA), is not done yet: slots stay in pinned host memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/socket.h"
#include "braid/status.h"
#include "gpu/runtime.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/net/ib/ib_fifo_pump.h"

namespace braid::transport::ib {

/// The kernel's end of a FIFO to `peer` on another host (names and cursors as
/// openGpuSocketSendEnd's), whose receiving end is at the other end of `connected`.
Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuIbSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, kernels::engine::FifoCursor* proxyCursor,
    gpu::Stream stream, IbNetwork& network, braid::sockets::Socket connected, int peer,
    int64_t timeoutMs, const std::string& nic = "");

/// The kernel's end of a FIFO from `peer` on another host.
Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuIbRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, gpu::Stream stream, IbNetwork& network,
    IbRecvPump::SocketTaker take, int peer, int64_t timeoutMs, const std::string& nic = "");

}  // namespace braid::transport::ib
