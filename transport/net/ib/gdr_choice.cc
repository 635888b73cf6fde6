// GPUDirect RDMA's choice: see gdr_choice.h.
#include "transport/net/ib/gdr_choice.h"

#include <unistd.h>

namespace braid::transport::ib {

const char* slotPlaceName(SlotPlace place) {
  switch (place) {
    case SlotPlace::kHost:
      return "host memory";
    case SlotPlace::kStaged:
      return "pinned host memory (staged)";
    case SlotPlace::kDmabuf:
      return "device memory (dmabuf)";
    case SlotPlace::kPeermem:
      return "device memory (nvidia-peermem)";
  }
  return "?";
}

GdrChoice chooseGdr(const IbSettings& settings, const GdrFacts& facts, bool sending) {
  const bool dmabuf = settings.dmabufEnable && facts.gpuDmabuf && facts.nicDmabuf;
  if (!dmabuf && !facts.peermem) {
    std::string why = "the NIC cannot reach device memory: ";
    if (!settings.dmabufEnable) {
      why += "NCCL_DMABUF_ENABLE=0";
    } else if (!facts.gpuDmabuf) {
      why += "the GPU exports no dmabuf";
    } else {
      why += "the NIC registers no dmabuf";
    }
    return {SlotPlace::kStaged, false,
            why + ", and it takes no device pointer (nvidia-peermem, a plugin's NCCL_PTR_CUDA)"};
  }
  if (sending && (settings.gdrRead == 0 || (settings.gdrRead < 0 && facts.computeMajor < 8))) {
    return {SlotPlace::kStaged, false,
            settings.gdrRead == 0 ? "NCCL_NET_GDR_READ=0: the sender stages"
                                  : "reads of device memory are off before compute capability "
                                    "8 unless NCCL_NET_GDR_READ=1: the sender stages"};
  }
  topology::PathType level = topology::PathType::kPxb;
  if (!settings.gdrLevel.empty()) {
    Result<topology::PathType> parsed = topology::parsePathType(settings.gdrLevel);
    if (parsed.ok()) level = parsed.value();  // Config::validate refused anything else
  }
  const topology::PathType distance = facts.distance.value_or(topology::PathType::kSys);
  const std::string path =
      std::string(facts.distance ? "" : "unknown, taken as ") + topology::pathTypeName(distance);
  if (distance > level) {
    return {SlotPlace::kStaged, false,
            "GPU-NIC path " + path + " is farther than NCCL_NET_GDR_LEVEL " +
                topology::pathTypeName(level)};
  }
  const bool flush =
      !sending && !settings.gdrFlushDisable && (facts.computeMajor < 9 || settings.forceFlush);
  return {dmabuf ? SlotPlace::kDmabuf : SlotPlace::kPeermem, flush,
          "GPU-NIC path " + path + ", within " + topology::pathTypeName(level) +
              (sending ? ""
               : flush ? ", flushed after each receive"
                       : ", no flush")};
}

bool peermemLoaded() {
  for (const char* path :
       {"/sys/kernel/mm/memory_peers/nv_mem/version",
        "/sys/kernel/mm/memory_peers/nv_mem_nc/version", "/sys/module/nvidia_peermem/version"}) {
    if (access(path, F_OK) == 0) return true;
  }
  return false;
}

}  // namespace braid::transport::ib
