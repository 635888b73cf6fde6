// NVLink as NVML reports it, NVML being loaded with dlopen
// (libnvidia-ml.so.1 ships with the GPU driver, not with CUDA).
//
// For every GPU NVML sees: its active links, grouped by the device at the
// other end (another GPU or an NVSwitch) with the number of links to it.
#pragma once

#include <string>
#include <vector>

namespace braid::topology {

enum class NvLinkPeerType {
  kGpu,
  kNvSwitch,
  kOther,  ///< an IBM NPU (a POWER CPU) or a type this NVML does not name
};

struct NvLinkPeer {
  std::string busId;  ///< the remote end's PCI bus id, normalised
  NvLinkPeerType type = NvLinkPeerType::kOther;
  int links = 0;  ///< active links from this GPU to it
};

struct GpuNvLinks {
  std::string busId;  ///< this GPU's PCI bus id, normalised
  int smVersion = 0;  ///< compute capability x 10, 0 if NVML did not say
  std::vector<NvLinkPeer> peers;
};

struct NvmlReport {
  bool loaded = false;  ///< NVML was found and initialised
  std::string note;     ///< why not, or what failed on which GPU (for INFO)
  std::vector<GpuNvLinks> gpus;
};

/// Queries NVML for the NVLinks of every GPU. Never fails: without NVML,
/// loaded is false and the note says so; a GPU or link that cannot be read
/// is skipped with a note.
NvmlReport queryNvLinks();

}  // namespace braid::topology
