// What the CUDA runtime (gpu/cuda_runtime.cc) and its virtual-memory calls (gpu/cuda_vmm.cc)
// share: driver functions found at run time through cudart (libnccl.so.2 links no libcuda), and
// the shareable memory of Runtime::vmm*, one function each. Built only with CUDA.
#pragma once

#if defined(BRAID_HAVE_CUDA)

#include <cstddef>

#include "braid/status.h"
#include "gpu/runtime.h"

namespace braid::gpu {

/// The driver function `symbol` of the version that CUDA `sinceCuda` (e.g. 11070) defines,
/// found through the runtime (cudaGetDriverEntryPointByVersion); null where the driver has none.
void* driverEntryPoint(const char* symbol, unsigned sinceCuda);

// Runtime::vmm*, on the CUDA driver's virtual-memory API (gpu/cuda_vmm.cc).
bool cudaVmmSupported(int device);
Result<void*> cudaVmmAlloc(size_t bytes);
Status cudaVmmFree(void* base);
Result<VmmRange> cudaVmmRange(const void* pointer, size_t bytes);
Result<int> cudaVmmExport(void* base);
Result<void*> cudaVmmImport(int fd, size_t bytes);
Status cudaVmmUnmap(void* mapped);

}  // namespace braid::gpu

#endif  // BRAID_HAVE_CUDA
