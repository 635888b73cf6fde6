// FIFOs between a GPU communicator's rank and a rank on another host.
//
// The kernel keeps running the engine's FIFO protocol on a GPU FIFO (transport/cuda_ipc) placed
// in pinned host memory, which both the kernel and a proxy thread of this process address; the
// proxy moves slots between that FIFO and a TCP connection, as the host communicators' socket
// FIFOs do (socket_fifo.h):
//
//   sender host:   kernel -> pinned FIFO -> [proxy: receiver's side] -> socket
//   receiver host: socket -> [proxy: sender's side] -> pinned FIFO -> kernel
//
// Slots travel with their posted word (byte count and the last-slice flag), so the receiving
// kernel checks message lengths as on one host. The kernel never sleeps and never wakes anyone,
// so the proxy polls its FIFO, pausing between polls.
//
// Placement in device memory with GPUDirect RDMA, where a NIC and its driver can read it, is for
// the verbs transport; sockets need the bytes in host memory anyway.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/socket.h"
#include "braid/status.h"
#include "gpu/runtime.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/net/socket/socket_fifo.h"

namespace braid::transport::socket {

/// The kernel's end of a FIFO to `peer` on another host, at the other end of `connected`. The
/// FIFO is made under the record name `name` (unique in this process's host), with
/// `proxyCursor` the device-memory cursor its receiving side needs (unused by the proxy, which
/// keeps its own) and `cursor` the kernel's.
Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuSocketSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, kernels::engine::FifoCursor* proxyCursor,
    gpu::Stream stream, braid::sockets::Socket connected, int peer, LinkWatch watch = {});

/// The kernel's end of a FIFO from `peer` on another host, whose connection `connect` waits for
/// on the proxy's thread. `watch` hears of a connection that breaks under either end, and says
/// when a send end going away need not drain (link_failure.h, socket_wire.h).
Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuSocketRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, gpu::Stream stream, SocketConnector connect, int peer,
    LinkWatch watch = {});

/// The striped ends (socket_stripes.h), where BRAID_SOCKET_NTHREADS x BRAID_NSOCKS_PERTHREAD
/// is above 1: `connected` holds the layout's connections in order.
Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuStripedSocketSendEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, kernels::engine::FifoCursor* proxyCursor,
    gpu::Stream stream, std::vector<braid::sockets::Socket> connected, int peer,
    StripeLayout layout, LinkWatch watch = {});
Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuStripedSocketRecvEnd(
    gpu::Runtime& runtime, const std::string& name, size_t slotBytes,
    kernels::engine::FifoCursor* cursor, gpu::Stream stream, StripeConnector connect, int peer,
    StripeLayout layout, LinkWatch watch = {});

}  // namespace braid::transport::socket
