#include "topology/cuda_gpus.h"

#include "base/log.h"
#include "topology/pci_bus_id.h"

#ifdef BRAID_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace braid::topology {

#ifdef BRAID_HAVE_CUDA

std::vector<CudaGpu> listCudaGpus() {
  std::vector<CudaGpu> gpus;
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    // No driver or no device. The error is not sticky; clearing it keeps a
    // later cudaGetLastError() in the caller's code from reporting it.
    cudaGetLastError();
    BRAID_INFO("topology: no CUDA devices (%s)", cudaGetErrorString(error));
    return gpus;
  }
  for (int device = 0; device < count; ++device) {
    char rawBusId[32] = {};
    int major = 0, minor = 0;
    if (cudaDeviceGetPCIBusId(rawBusId, sizeof(rawBusId), device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
      cudaGetLastError();
      BRAID_INFO("topology: cannot read the PCI bus id of CUDA device %d; it is left out", device);
      continue;
    }
    auto busId = normalizePciBusId(rawBusId);
    if (!busId.ok()) {
      BRAID_INFO("topology: CUDA device %d: %s", device, busId.status().message().c_str());
      continue;
    }
    gpus.push_back(
        CudaGpu{device, busId.value(), major * 10 + minor, pciNumaNode("/sys", busId.value())});
  }
  return gpus;
}

#else

std::vector<CudaGpu> listCudaGpus() { return {}; }

#endif

}  // namespace braid::topology
