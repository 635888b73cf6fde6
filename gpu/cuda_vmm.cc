// Runtime::vmm* on the CUDA driver's virtual-memory API, as NCCL's ncclMemAlloc uses it: physical
// memory made by cuMemCreate with a POSIX file descriptor handle (so that the host's other
// processes can import it), a reserved address range, the mapping, and read-write access for the
// device and every device that reaches it by peer access. The driver's functions are found
// through cudart (driverEntryPoint), once. Built only with CUDA.
#if defined(BRAID_HAVE_CUDA)

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "gpu/cuda_driver.h"

namespace braid::gpu {
namespace {

/// The driver's virtual-memory functions, found once; a member is null where the driver lacks it.
struct VmmDriver {
  CUresult (*deviceAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                     unsigned long long);
  CUresult (*release)(CUmemGenericAllocationHandle);
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*addressFree)(CUdeviceptr, size_t);
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*unmap)(CUdeviceptr, size_t);
  CUresult (*setAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*retain)(CUmemGenericAllocationHandle*, void*);
  CUresult (*properties)(CUmemAllocationProp*, CUmemGenericAllocationHandle);
  CUresult (*addressRange)(CUdeviceptr*, size_t*, CUdeviceptr);
  CUresult (*exportHandle)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                           unsigned long long);
  CUresult (*importHandle)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);

  bool complete() const {
    return deviceAttribute && granularity && create && release && reserve && addressFree && map &&
           unmap && setAccess && retain && properties && addressRange && exportHandle &&
           importHandle;
  }
};

template <typename Fn>
void find(Fn*& fn, const char* symbol, unsigned sinceCuda) {
  fn = reinterpret_cast<Fn*>(driverEntryPoint(symbol, sinceCuda));
}

const VmmDriver& driver() {
  static const VmmDriver d = [] {
    VmmDriver v{};
    find(v.deviceAttribute, "cuDeviceGetAttribute", 2000);
    find(v.granularity, "cuMemGetAllocationGranularity", 10020);
    find(v.create, "cuMemCreate", 10020);
    find(v.release, "cuMemRelease", 10020);
    find(v.reserve, "cuMemAddressReserve", 10020);
    find(v.addressFree, "cuMemAddressFree", 10020);
    find(v.map, "cuMemMap", 10020);
    find(v.unmap, "cuMemUnmap", 10020);
    find(v.setAccess, "cuMemSetAccess", 10020);
    find(v.retain, "cuMemRetainAllocationHandle", 11000);
    find(v.properties, "cuMemGetAllocationPropertiesFromHandle", 10020);
    find(v.addressRange, "cuMemGetAddressRange", 3020);
    find(v.exportHandle, "cuMemExportToShareableHandle", 10020);
    find(v.importHandle, "cuMemImportFromShareableHandle", 10020);
    return v;
  }();
  return d;
}

Status cuStatus(CUresult rc, const char* call) {
  if (rc == CUDA_SUCCESS) return Status::success();
  return Status(ErrorCode::kCudaError,
                std::string(call) + " failed: CUresult " + std::to_string(static_cast<int>(rc)));
}

#define BRAID_CU_CALL(call) cuStatus((call), #call)

Status needDriver() {
  if (driver().complete()) return Status::success();
  return Status(ErrorCode::kCudaError,
                "the CUDA driver lacks the virtual-memory API (cuMemCreate and the calls around "
                "it, CUDA 11.0 or newer)");
}

Result<int> currentDevice() {
  int device = -1;
  const cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return Status(ErrorCode::kCudaError,
                  std::string("cudaGetDevice failed: ") + cudaGetErrorString(err));
  }
  cudaFree(nullptr);  // the device's primary context, current for the driver's calls
  return device;
}

CUmemAllocationProp propertiesOn(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

Status grantAccess(CUdeviceptr at, size_t bytes, int device) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return BRAID_CU_CALL(driver().setAccess(at, bytes, &access, 1));
}

/// Read-write access to [at, at + bytes) for `device` and every device that reaches its memory.
Status grantPeersAccess(CUdeviceptr at, size_t bytes, int device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  cudaGetLastError();
  for (int d = 0; d < count; ++d) {
    int reaches = d == device ? 1 : 0;
    if (d != device && cudaDeviceCanAccessPeer(&reaches, d, device) != cudaSuccess) reaches = 0;
    cudaGetLastError();
    if (reaches != 0) BRAID_TRY(grantAccess(at, bytes, d));
  }
  return Status::success();
}

/// Unmaps, frees the range and releases the handle of a mapping of `bytes` at `at`.
Status unmapRange(CUdeviceptr at, size_t bytes, CUmemGenericAllocationHandle handle) {
  const Status unmapped = BRAID_CU_CALL(driver().unmap(at, bytes));
  const Status released = BRAID_CU_CALL(driver().release(handle));
  const Status freed = BRAID_CU_CALL(driver().addressFree(at, bytes));
  BRAID_TRY(unmapped);
  BRAID_TRY(released);
  return freed;
}

/// Maps `handle` (`bytes`) at a new range with `device`'s access (and its peers', `peers`); the
/// handle is released if that fails.
Result<void*> mapHandle(CUmemGenericAllocationHandle handle, size_t bytes, size_t align, int device,
                        bool peers) {
  CUdeviceptr at = 0;
  Status s = BRAID_CU_CALL(driver().reserve(&at, bytes, align, 0, 0));
  if (!s.ok()) {
    driver().release(handle);
    return s;
  }
  s = BRAID_CU_CALL(driver().map(at, bytes, 0, handle, 0));
  if (!s.ok()) {
    driver().addressFree(at, bytes);
    driver().release(handle);
    return s;
  }
  s = peers ? grantPeersAccess(at, bytes, device) : grantAccess(at, bytes, device);
  if (!s.ok()) {
    (void)unmapRange(at, bytes, handle);
    return s;
  }
  return reinterpret_cast<void*>(at);
}

/// The allocation mapped at `pointer`: its start, size and (retained: the caller releases it)
/// handle.
struct Mapped {
  CUdeviceptr base = 0;
  size_t bytes = 0;
  CUmemGenericAllocationHandle handle = 0;
};
Result<Mapped> mappedAt(const void* pointer) {
  BRAID_TRY(needDriver());
  Mapped m;
  BRAID_TRY(BRAID_CU_CALL(driver().retain(&m.handle, const_cast<void*>(pointer))));
  const Status range = BRAID_CU_CALL(
      driver().addressRange(&m.base, &m.bytes, reinterpret_cast<CUdeviceptr>(pointer)));
  if (!range.ok()) {
    driver().release(m.handle);
    return range;
  }
  return m;
}

}  // namespace

bool cudaVmmSupported(int device) {
  if (!driver().complete()) return false;
  int vmm = 0;
  int fd = 0;
  return driver().deviceAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                  device) == CUDA_SUCCESS &&
         vmm != 0 &&
         driver().deviceAttribute(&fd,
                                  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                                  device) == CUDA_SUCCESS &&
         fd != 0;
}

Result<void*> cudaVmmAlloc(size_t bytes) {
  BRAID_TRY(needDriver());
  BRAID_ASSIGN_OR_RETURN(const int device, currentDevice());
  const CUmemAllocationProp prop = propertiesOn(device);
  size_t granularity = 0;
  BRAID_TRY(BRAID_CU_CALL(
      driver().granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)));
  if (granularity == 0) granularity = size_t{2} << 20;
  const size_t rounded = (bytes + granularity - 1) / granularity * granularity;
  CUmemGenericAllocationHandle handle = 0;
  BRAID_TRY(BRAID_CU_CALL(driver().create(&handle, rounded, &prop, 0)));
  return mapHandle(handle, rounded, granularity, device, /*peers=*/true);
}

Status cudaVmmFree(void* base) {
  BRAID_ASSIGN_OR_RETURN(const Mapped m, mappedAt(base));
  if (m.base != reinterpret_cast<CUdeviceptr>(base)) {
    driver().release(m.handle);
    return invalidArgument("vmmFree: the pointer is not the start of its allocation");
  }
  driver().release(m.handle);  // the reference mappedAt retained; the mapping's goes below
  return unmapRange(m.base, m.bytes, m.handle);
}

Result<VmmRange> cudaVmmRange(const void* pointer, size_t bytes) {
  BRAID_ASSIGN_OR_RETURN(const Mapped m, mappedAt(pointer));
  CUmemAllocationProp prop{};
  const Status read = BRAID_CU_CALL(driver().properties(&prop, m.handle));
  driver().release(m.handle);
  BRAID_TRY(read);
  if ((prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
    return Status(ErrorCode::kCudaError,
                  "the memory was made by cuMemCreate without a POSIX file descriptor handle: "
                  "other processes cannot map it");
  }
  const auto at = reinterpret_cast<CUdeviceptr>(pointer);
  if (bytes > m.base + m.bytes - at) {
    return Status(ErrorCode::kCudaError, std::to_string(bytes) +
                                             " bytes leave the shareable allocation holding "
                                             "their start");
  }
  return VmmRange{reinterpret_cast<void*>(m.base), m.bytes};
}

Result<int> cudaVmmExport(void* base) {
  BRAID_ASSIGN_OR_RETURN(const Mapped m, mappedAt(base));
  int fd = -1;
  const Status exported = BRAID_CU_CALL(
      driver().exportHandle(&fd, m.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  driver().release(m.handle);
  BRAID_TRY(exported);
  return fd;
}

Result<void*> cudaVmmImport(int fd, size_t bytes) {
  BRAID_TRY(needDriver());
  BRAID_ASSIGN_OR_RETURN(const int device, currentDevice());
  CUmemGenericAllocationHandle handle = 0;
  BRAID_TRY(BRAID_CU_CALL(driver().importHandle(&handle,
                                                reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)));
  const CUmemAllocationProp prop = propertiesOn(device);
  size_t granularity = 0;
  if (driver().granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
      granularity == 0) {
    granularity = size_t{2} << 20;
  }
  return mapHandle(handle, bytes, granularity, device, /*peers=*/false);
}

Status cudaVmmUnmap(void* mapped) {
  BRAID_ASSIGN_OR_RETURN(const Mapped m, mappedAt(mapped));
  driver().release(m.handle);
  return unmapRange(m.base, m.bytes, m.handle);
}

}  // namespace braid::gpu

#endif  // BRAID_HAVE_CUDA
