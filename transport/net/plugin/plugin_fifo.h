// FIFOs between ranks on different hosts over a network plugin (net_plugin.h).
//
// As over verbs, the executor sees a FIFO in this process's memory (net::ProxiedSendEnd /
// ProxiedRecvEnd) and a pump, driven by the plugin's proxy thread (plugin_proxy.h), moves its
// slots across:
//
//   sender host:   executor -> local FIFO -> [send pump] isend of slot k -> plugin
//   receiver host: plugin -> irecv into slot k of the local FIFO -> [recv pump] posts it ->
//   executor
//
// The connection is made as NCCL makes it: the receiver's pump listens on its device and sends
// the handle to the sender over the FIFO's rendezvous connection (the one the socket transport
// carries slots on, socket_rendezvous.h); the sender's pump connects with it and the receiver's
// accepts, each called again until it returns a communicator. Both register their FIFO's slots
// (host memory, netabi::kPtrHost, or device memory: below) and deregister them at close.
//
// GPU communicators' FIFOs go the same way: the kernel's end is a GPU FIFO in pinned host memory
// (proxied_gpu_ends.h), which the pumps drive as they drive a host FIFO. The kernel checks each
// slot's word, which carries the last-slice mark besides the count, so a GPU FIFO's transfer ends
// with the word (4 bytes, in the slot past the data: its FIFO has room for them), and the
// receiving pump posts the word that came, checked against the bytes that came.
//
// GPUDirect RDMA: where the plugin's device reaches device memory (ptrSupport NCCL_PTR_DMABUF or
// NCCL_PTR_CUDA) and the communicator's rules allow it (GpuSlots), the GPU FIFO's slots are in
// device memory (DeviceSlotsFifo), registered with regMrDmaBuf (a dmabuf of them) or regMr
// (NCCL_PTR_CUDA), and the plugin moves the bytes between the NIC and the GPU with no host copy.
// The pump cannot write a word into device memory after the data, nor read one out of it, so
// the word travels as a transfer of its own, from and into a small host array of the pump's
// (registered NCCL_PTR_HOST): the data's isend then the word's, the data's irecv then the word's
// (a comm's requests complete in order, so the word of slot k is the second transfer of slot k).
// The two ends of a FIFO may differ (NCCL_NET_GDR_READ=0 stages senders only), so the receiver
// says with the handle whether its slots are in device memory and the sender answers the same;
// where either is, both send the word apart (a staged end from and into its host array too).
// That costs a second request per slot but keeps the kernel's FIFO protocol as it is: the
// alternative, the kernel writing the word into device memory and the pump learning the count
// some other way, would need a second protocol in the kernel for plugin ends. Once a slot's data
// and word have landed, the receiving pump flushes the data where the rules ask (iflush, tested
// to completion: before Hopper, NCCL_NET_FORCE_FLUSH, or the device's forceFlush property) and
// only then publishes the slot. Bytes moved are counted (gpu_net_bytes.h) as device-registered
// or staged.
//
// Back-pressure: the receive pump posts an irecv only into a slot its executor released, the send
// pump an isend only for a slot its executor posted, and each keeps at most
// min(kFifoSlots, NCCL_NET_MAX_REQUESTS) requests in flight, one buffer per irecv (within any
// maxRecvs). A request the plugin cannot take now (null) is asked for again on the next pass.
// Requests finish in order: the pumps test the oldest and hand slots on in FIFO order. A call of
// the plugin that fails ends the FIFO end and tells the communicator (LinkWatch), naming the
// plugin and the call.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/socket.h"
#include "braid/status.h"
#include "gpu/runtime.h"
#include "kernels/engine/fifo.h"
#include "transport/connection.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/link_failure.h"
#include "transport/net/plugin/net_plugin_loader.h"

namespace braid::transport::plugin {

/// Where a FIFO end over the plugin leads and what it tells when it breaks.
struct PluginLink {
  std::shared_ptr<LoadedNetPlugin> plugin;
  int dev = 0;  ///< this rank's device of the plugin
  int peer = -1;
  int64_t timeoutMs = 0;  ///< for the connection to be made; 0: no deadline
  LinkWatch watch;
};

/// The sender's connection, once the rendezvous has it (never blocks).
using SocketTaker = std::function<std::optional<braid::sockets::Socket>()>;

/// What a slot's word is on the wire: the host executor's FIFOs post byte counts, which the
/// transfer's size carries (kBare); a GPU FIFO's word carries the last-slice mark too, and
/// travels after the data (kTrailer).
/// With the slots in device memory, the word travels as a transfer of its own (kSeparate).
enum class SlotWords { kBare, kTrailer, kSeparate };

/// Where a GPU FIFO end's slots are and how the plugin reaches them.
enum class GpuSlots {
  kStaged,  ///< pinned host memory (NCCL_PTR_HOST): every byte crosses host memory
  kDmabuf,  ///< device memory registered with regMrDmaBuf
  kCuda,    ///< device memory registered with regMr, NCCL_PTR_CUDA
};

/// The kernel's side of a GPU FIFO end: its runtime and stream, the FIFO's name, the most bytes
/// the kernel puts in a slot, and the cursor the kernel keeps (the sender's, or the receiver's).
struct GpuFifoSpec {
  gpu::Runtime* runtime = nullptr;
  gpu::Stream stream{};
  std::string name;
  size_t slotBytes = 0;
  kernels::engine::FifoCursor* cursor = nullptr;
  GpuSlots slots = GpuSlots::kStaged;
  bool flush = false;  ///< a receiving end in device memory flushes each slot (iflush)
};

/// The executor's end of a FIFO to `link.peer`, whose receiving end is at the other end of
/// `connected` (made by openPluginRecvEnd there). Returns at once; the pump connects.
Result<std::unique_ptr<SendEnd>> openPluginSendEnd(PluginLink link,
                                                   braid::sockets::Socket connected,
                                                   size_t slotBytes);
/// The executor's end of a FIFO from `link.peer`; returns at once, and the pump takes the
/// sender's connection with `take` when it arrives.
Result<std::unique_ptr<RecvEnd>> openPluginRecvEnd(PluginLink link, SocketTaker take,
                                                   size_t slotBytes);

/// The kernel's end of a FIFO to `link.peer` on another host; `proxyCursor` is the one the send
/// pump keeps as the FIFO's receiver. Returns at once; the pump connects.
Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuPluginSendEnd(
    PluginLink link, braid::sockets::Socket connected, const GpuFifoSpec& spec,
    kernels::engine::FifoCursor* proxyCursor);
/// The kernel's end of a FIFO from `link.peer` on another host.
Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuPluginRecvEnd(PluginLink link,
                                                                   SocketTaker take,
                                                                   const GpuFifoSpec& spec);

}  // namespace braid::transport::plugin
