// Network::gpuSlotPlace: whether a GPU FIFO end over verbs runs with GPUDirect RDMA (see
// network.h and transport/net/ib/gdr_choice.h).
#include <errno.h>

#include "base/log.h"
#include "comm/network.h"
#include "transport/net/ib/gdr_choice.h"

namespace braid::comm {
namespace {

/// Whether the port's verbs register dmabufs: NCCL's probe, a registration of no fd that a
/// kernel and library with dmabuf refuse with EBADF, and others with EOPNOTSUPP or
/// EPROTONOSUPPORT (or, before rdma-core 34, no such call at all).
bool portRegistersDmabuf(const transport::ib::IbPort& port) {
  const transport::ib::VerbsApi& verbs = port.verbs();
  if (verbs.regDmabufMr == nullptr) return false;
  errno = 0;
  ibv_mr* mr = verbs.regDmabufMr(port.pd, 0, 0, 0, -1, 0);
  if (mr != nullptr) {
    verbs.deregMr(mr);
    return true;
  }
  return errno != EOPNOTSUPP && errno != EPROTONOSUPPORT;
}

}  // namespace

transport::ib::GdrChoice Network::gpuSlotPlace(gpu::Runtime& runtime, int port, bool sending) {
  const int index = port % ib_->portCount();
  const transport::ib::IbPort& ibPort = ib_->portAt(index);
  transport::ib::GdrFacts facts;
  Result<int> device = runtime.currentDevice();
  if (device.ok()) {
    Result<gpu::DeviceInfo> info = runtime.deviceInfo(device.value());
    if (info.ok()) facts.computeMajor = info.value().computeMajor;
    facts.gpuDmabuf = runtime.dmabufSupported(device.value());
  }
  facts.peermem = transport::ib::peermemLoaded();
  std::lock_guard<std::mutex> lock(gdrMutex_);
  // What the port offers is asked once: every FIFO end on it would get the same answers.
  auto known = gdrPorts_.find(index);
  if (known == gdrPorts_.end()) {
    transport::ib::GdrFacts port;
    port.distance = members_.gpuNicPath(ibPort.name(), index);
    port.nicDmabuf = portRegistersDmabuf(ibPort);
    known = gdrPorts_.emplace(index, port).first;
  }
  facts.distance = known->second.distance;
  facts.nicDmabuf = known->second.nicDmabuf;
  const transport::ib::GdrChoice choice = chooseGdr(config_.ib, facts, sending);
  const std::string said = ibPort.name() + (sending ? " send" : " recv");
  if (gdrSaid_.insert(said).second) {
    // NCCL's words, with what decided it.
    BRAID_INFO("GPU Direct RDMA %s for GPU %d / HCA %s (%s): %s, slots in %s",
               transport::ib::inDeviceMemory(choice.place) ? "Enabled" : "Disabled",
               device.ok() ? device.value() : -1, ibPort.name().c_str(),
               sending ? "send, NIC reads" : "receive, NIC writes", choice.why.c_str(),
               transport::ib::slotPlaceName(choice.place));
  }
  return choice;
}

}  // namespace braid::comm
