// Network::pluginGpuSpec: whether a GPU FIFO end over a network plugin runs with GPUDirect RDMA
// (see network.h, transport/net/plugin/plugin_fifo.h and transport/net/ib/gdr_choice.h).
//
// The plugin's device stands where the verbs port stands for the verbs transport: its ptrSupport
// says what it registers (NCCL_PTR_DMABUF: dmabufs, as a port whose verbs register them;
// NCCL_PTR_CUDA: device pointers, as nvidia-peermem lets a port), and its place on the topology
// (the PCI path it reports) gives the path from this rank's GPU to it, unknown (SYS) where the
// topology does not place both. NCCL's rules then choose, as for verbs.
#include "base/log.h"
#include "comm/network.h"
#include "transport/net/gpu_net_bytes.h"
#include "transport/net/ib/gdr_choice.h"
#include "transport/net/plugin/net_plugin_abi.h"

namespace braid::comm {

transport::plugin::GpuFifoSpec Network::pluginGpuSpec(transport::plugin::GpuFifoSpec spec,
                                                      bool sending) {
  const transport::plugin::DeviceProps& props = plugin_->devices().at(pluginDev_);
  gpu::Runtime& runtime = *spec.runtime;
  transport::ib::GdrFacts facts;
  facts.distance = pluginGpuPath_;
  Result<int> device = runtime.currentDevice();
  if (device.ok()) {
    Result<gpu::DeviceInfo> info = runtime.deviceInfo(device.value());
    if (info.ok()) facts.computeMajor = info.value().computeMajor;
    facts.gpuDmabuf = runtime.dmabufSupported(device.value());
  }
  facts.nicDmabuf = (props.ptrSupport & netabi::kPtrDmabuf) != 0;
  facts.peermem = (props.ptrSupport & netabi::kPtrCuda) != 0;
  const transport::ib::GdrChoice choice = chooseGdr(config_.ib, facts, sending);
  switch (choice.place) {
    case transport::ib::SlotPlace::kDmabuf:
      spec.slots = transport::plugin::GpuSlots::kDmabuf;
      break;
    case transport::ib::SlotPlace::kPeermem:
      spec.slots = transport::plugin::GpuSlots::kCuda;
      break;
    default:
      spec.slots = transport::plugin::GpuSlots::kStaged;
      break;
  }
  const bool inDevice = spec.slots != transport::plugin::GpuSlots::kStaged;
  // The device may ask for a flush whatever the GPU (ncclNetProperties_t's forceFlush), unless
  // NCCL_GDR_FLUSH_DISABLE.
  spec.flush =
      inDevice && !sending && !config_.ib.gdrFlushDisable && (choice.flush || props.forceFlush);
  std::string why = choice.why;
  const std::string noFlush = ", no flush";
  if (spec.flush && !choice.flush && why.size() >= noFlush.size() &&
      why.compare(why.size() - noFlush.size(), noFlush.size(), noFlush) == 0) {
    why.replace(why.size() - noFlush.size(), noFlush.size(),
                ", flushed after each receive (the device's forceFlush)");
  }
  std::lock_guard<std::mutex> lock(gdrMutex_);
  if (gdrSaid_.insert(std::string("plugin ") + (sending ? "send" : "recv")).second) {
    // NCCL's words, with what decided it.
    BRAID_INFO("GPU Direct RDMA %s for GPU %d / NET plugin %s device %d (%s, %s): %s, slots in %s",
               inDevice ? "Enabled" : "Disabled", device.ok() ? device.value() : -1,
               plugin_->net().name().c_str(), pluginDev_, props.name.c_str(),
               sending ? "send, NIC reads" : "receive, NIC writes", why.c_str(),
               transport::ib::slotPlaceName(choice.place));
  }
  return spec;
}

Network::~Network() {
  // The relays' thread calls back into this object (gpuSlotPlace, connectSocket), whose
  // members declared after relays_ would go first: it stops before anything does.
  relays_.reset();
  if (!plugin_) return;
  // What this process's GPU FIFOs moved so far, by where the plugin found the bytes: the figure a
  // run with GPUDirect RDMA checks for zero staged bytes (gpu_net_bytes.h).
  const uint64_t device = transport::net::deviceRegisteredBytes();
  const uint64_t staged = transport::net::stagedBytes();
  if (device + staged > 0) {
    BRAID_INFO(
        "NET plugin %s: GPU FIFOs moved %llu bytes through device-memory registrations, %llu "
        "staged through host memory; %llu flushes",
        plugin_->describe().c_str(), static_cast<unsigned long long>(device),
        static_cast<unsigned long long>(staged),
        static_cast<unsigned long long>(transport::net::flushes()));
  }
}

}  // namespace braid::comm
