// Whether a GPU rank's network FIFO end keeps its slots in device memory that the NIC reads and
// writes directly (GPUDirect RDMA), or in pinned host memory that every byte crosses (staging):
// NCCL's rules (its ncclTopoCheckGdr and net_ib's registration), as pure functions of what the
// machine offers and what the user set. The verbs transport asks them of its ports
// (src/comm/network_gdr.cc); a network plugin's GPU FIFOs of the plugin's device, whose
// ptrSupport stands for what the NIC registers: NCCL_PTR_DMABUF for nicDmabuf, NCCL_PTR_CUDA for
// peermem (src/comm/network_plugin_gdr.cc).
//
//   - The NIC must reach device memory: by dmabuf (the GPU exports one, libibverbs has
//     ibv_reg_dmabuf_mr and the device takes it, NCCL_DMABUF_ENABLE not 0), else by ibv_reg_mr
//     of the device pointer where nvidia-peermem is loaded.
//   - The GPU and the NIC must be close: their path no farther than NCCL_NET_GDR_LEVEL (PXB by
//     default: at most PCIe switches between them, no CPU). A path the topology does not know
//     counts as SYS.
//   - A sender reads device memory only with NCCL_NET_GDR_READ (1 on, 0 off; unset: on from
//     Ampere, compute capability 8, as NCCL; before that NCCL looks for NVLink peers, which
//     braid does not, so reads stay off there).
//   - A receiver flushes each slot that landed in device memory (an RDMA read of it, so that
//     the NIC's PCIe writes are visible before the kernel reads) before Hopper, compute
//     capability 9, or with NCCL_NET_FORCE_FLUSH, unless NCCL_GDR_FLUSH_DISABLE, as NCCL does.
#pragma once

#include <optional>
#include <string>

#include "topology/graph.h"
#include "transport/net/ib/ib_settings.h"

namespace braid::transport::ib {

/// Where a FIFO end's slots are, and so how the NIC reaches them.
enum class SlotPlace {
  kHost,     ///< a host communicator's FIFO: host memory, nothing staged
  kStaged,   ///< a GPU FIFO in pinned host memory: bytes staged through host memory
  kDmabuf,   ///< device memory registered by dmabuf (ibv_reg_dmabuf_mr)
  kPeermem,  ///< device memory registered by pointer (ibv_reg_mr, nvidia-peermem)
};
const char* slotPlaceName(SlotPlace place);
inline bool inDeviceMemory(SlotPlace place) {
  return place == SlotPlace::kDmabuf || place == SlotPlace::kPeermem;
}

/// What the machine offers one GPU FIFO end.
struct GdrFacts {
  std::optional<topology::PathType> distance;  ///< GPU to the end's NIC; nullopt: unknown
  int computeMajor = 0;
  bool gpuDmabuf = false;  ///< the runtime exports dmabufs of this GPU's memory
  bool nicDmabuf = false;  ///< the NIC's verbs (a plugin: NCCL_PTR_DMABUF) register dmabufs
  bool peermem = false;    ///< nvidia-peermem is loaded (a plugin: NCCL_PTR_CUDA)
};

struct GdrChoice {
  SlotPlace place = SlotPlace::kStaged;
  bool flush = false;  ///< a receiver in device memory flushes what lands
  std::string why;     ///< for the INFO line: what decided it
};

/// The choice for a sending (`sending`) or receiving end.
GdrChoice chooseGdr(const IbSettings& settings, const GdrFacts& facts, bool sending);

/// Whether a peer-memory module is loaded (/sys/kernel/mm/memory_peers/nv_mem/version,
/// .../nv_mem_nc/version, /sys/module/nvidia_peermem/version, as NCCL looks).
bool peermemLoaded();

}  // namespace braid::transport::ib
