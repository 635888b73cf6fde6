// The GPUs the CUDA runtime shows this process, by PCI bus id: how
// discovery tells which PCI device is CUDA device k.
#pragma once

#include <string>
#include <vector>

namespace braid::topology {

struct CudaGpu {
  int device = -1;    ///< CUDA runtime index (after CUDA_VISIBLE_DEVICES)
  std::string busId;  ///< "0000:17:00.0"
  int smVersion = 0;  ///< compute capability x 10
  int numaNode = -1;  ///< from sysfs, -1 when unknown
};

/// Every CUDA device with its bus id. Empty, never an error, when braid is
/// built without CUDA, there is no driver or device, or any call fails:
/// a host without GPUs is a valid host.
std::vector<CudaGpu> listCudaGpus();

}  // namespace braid::topology
