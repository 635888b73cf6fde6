// NCCL 2.30's host entry points of its device API beyond 2.28's (device_team_api.cc): the
// communicator's properties, the device pointers of a window's memory, and the GIN inbox and
// outbox requirements. NVIDIA declares them in nccl_device/core.h and gin_win_stub.h; the
// declarations here repeat theirs, with the same layouts (ncclCommProperties_t is versioned like
// ncclConfig_t: read and written up to the caller's `size`).
//
// ncclCommQueryProperties answers truthfully: braid has no device API, no multimem, no GIN and
// no host RMA. The device pointers are of a window's memory, and braid makes no windows
// (window_api.cc), so they refuse the NULL window braid hands out, saying why.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "api/api_util.h"
#include "nccl_device.h"

using braid::api::commFrom;
using braid::api::notImplemented;
using braid::api::report;

namespace {

constexpr const char* kGinPlan = "braid has no GPU-initiated networking (GIN) yet";

// The device pointer calls' refusal: every window braid hands out is NULL.
ncclResult_t noWindow(const char* function, void** outPtr) {
  if (outPtr != nullptr) *outPtr = nullptr;
  return report(braid::invalidArgument(
      std::string(function) +
      ": the window is not one braid made (braid makes no windows yet: ncclCommWindowRegister "
      "returns NULL, as NCCL's does without symmetric memory)"));
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclGetLsaMultimemDevicePointer, ncclWindow_t window, size_t offset,
               void** outPtr) {
  (void)window, (void)offset;
  return noWindow("ncclGetLsaMultimemDevicePointer", outPtr);
}

BRAID_NCCL_API(ncclResult_t, ncclGetMultimemDevicePointer, ncclWindow_t window, size_t offset,
               struct ncclMultimemHandle multimem, void** outPtr) {
  (void)window, (void)offset, (void)multimem;
  return noWindow("ncclGetMultimemDevicePointer", outPtr);
}

BRAID_NCCL_API(ncclResult_t, ncclGetLsaDevicePointer, ncclWindow_t window, size_t offset,
               int lsaRank, void** outPtr) {
  (void)window, (void)offset, (void)lsaRank;
  return noWindow("ncclGetLsaDevicePointer", outPtr);
}

BRAID_NCCL_API(ncclResult_t, ncclGetPeerDevicePointer, ncclWindow_t window, size_t offset, int peer,
               void** outPtr) {
  (void)window, (void)offset, (void)peer;
  return noWindow("ncclGetPeerDevicePointer", outPtr);
}

BRAID_NCCL_API(ncclResult_t, ncclGinOutboxCreateRequirement, int nBlocks, int sizeLog2,
               struct ncclGinOutboxHandle* outHandle, struct ncclDevResourceRequirements* outReq) {
  (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return notImplemented("ncclGinOutboxCreateRequirement", kGinPlan);
}

BRAID_NCCL_API(ncclResult_t, ncclGinInboxA2ACreateRequirement, ncclTeam_t peers, int nBlocks,
               int sizeLog2, struct ncclGinInboxA2AHandle* outHandle,
               struct ncclDevResourceRequirements* outReq) {
  (void)peers, (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return notImplemented("ncclGinInboxA2ACreateRequirement", kGinPlan);
}
