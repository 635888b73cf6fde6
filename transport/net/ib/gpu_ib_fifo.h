// FIFOs between a GPU communicator's rank and a rank on another host, over verbs.
//
// The kernel runs the engine's FIFO protocol on a GPU FIFO whose other side is the verbs proxy,
// which writes posted slots from it straight into the peer's FIFO (ib_fifo_pump.h). Where
// GPUDirect RDMA is chosen (gdr_choice.h: the NIC reaches device memory, the GPU and the NIC are
// close enough, and for a sender NCCL_NET_GDR_READ), the slots are in device memory
// (device_slots_fifo.h), registered with the NIC by dmabuf or by pointer under nvidia-peermem,
// and a receiver flushes each landed slot before its kernel sees it; otherwise the FIFO is in
// pinned host memory, as for sockets (transport/net/socket/gpu_socket_fifo.h), and every byte is
// staged there. Either way the NIC moves the bytes once.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/socket.h"
#include "braid/status.h"
#include "gpu/runtime.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/net/ib/gdr_choice.h"
#include "transport/net/ib/ib_fifo_pump.h"

namespace braid::transport::ib {

/// The kernel's end of a FIFO to `peer` on another host (names and cursors as
/// openGpuSocketSendEnd's), whose receiving end is at the other end of `connected`.
Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuIbSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, kernels::engine::FifoCursor* proxyCursor,
    gpu::Stream stream, IbNetwork& network, braid::sockets::Socket connected, int peer,
    int64_t timeoutMs, const std::string& nic = "", const GdrChoice& gdr = {});

/// The kernel's end of a FIFO from `peer` on another host.
Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuIbRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, gpu::Stream stream, IbNetwork& network,
    IbRecvPump::SocketTaker take, int peer, int64_t timeoutMs, const std::string& nic = "",
    const GdrChoice& gdr = {});

}  // namespace braid::transport::ib
