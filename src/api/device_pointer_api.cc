// NCCL 2.30's host entry points of its device API beyond 2.28's (device_team_api.cc): the
// device pointers of a window's memory, and the GIN inbox and outbox requirements. NVIDIA
// declares them in nccl_device/core.h and gin_win_stub.h; braid's own nccl_device.h declares
// them here (ncclCommQueryProperties is comm_properties_api.cc's).
//
// The device pointers are of a window's memory (window_api.cc, src/comm/windows.h):
// a load/store team rank's buffer as this process maps it, checked as NCCL checks it (a window
// braid did not make, an offset past the window or a rank outside the team is an invalid
// argument; a world rank outside this host's team has no pointer, NULL, as NCCL answers). There
// is no multimem (NVLS) in braid: the multimem pointers of a live window are NULL, as NCCL's are
// on a communicator without NVLS.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "api/api_util.h"
#include "base/log.h"
#include "nccl_device.h"

using braid::api::commFrom;
using braid::api::notImplemented;
using braid::api::report;

namespace {

constexpr const char* kGinPlan = "braid has no GPU-initiated networking (GIN) yet";

/// The live window `window`, for `function`'s checks; its failure names the function.
braid::Result<braid::WindowInfo> windowFor(const char* function, ncclWindow_t window,
                                           void** outPtr) {
  if (outPtr == nullptr) return braid::invalidArgument(std::string(function) + ": outPtr is NULL");
  *outPtr = nullptr;
  auto info = braid::Comm::lookupWindow(window);
  if (!info.ok()) return info.status().withContext(function);
  return info;
}

/// Team rank `lsaRank`'s buffer at `offset`, checked as NCCL checks them.
ncclResult_t lsaPointer(const char* function, const braid::WindowInfo& w, size_t offset,
                        int lsaRank, void** outPtr) {
  const int lsaSize = static_cast<int>(w.lsaBases.size());
  if (lsaRank < 0 || lsaRank >= lsaSize) {
    return report(braid::invalidArgument(
        std::string(function) + ": rank " + std::to_string(lsaRank) +
        " is outside the window's load/store team [0, " + std::to_string(lsaSize) + ")"));
  }
  if (offset >= w.bytes) {
    return report(braid::invalidArgument(std::string(function) + ": offset " +
                                         std::to_string(offset) + " is past the window's " +
                                         std::to_string(w.bytes) + " bytes"));
  }
  *outPtr = static_cast<char*>(w.lsaBases[lsaRank]) + offset;
  return ncclSuccess;
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclGetLsaMultimemDevicePointer, ncclWindow_t window, size_t offset,
               void** outPtr) {
  (void)offset;
  auto w = windowFor("ncclGetLsaMultimemDevicePointer", window, outPtr);
  if (!w.ok()) return report(w.status());
  BRAID_INFO(
      "ncclGetLsaMultimemDevicePointer: braid has no multimem (NVLS): NULL, as NCCL "
      "answers without NVLS");
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclGetMultimemDevicePointer, ncclWindow_t window, size_t offset,
               struct ncclMultimemHandle multimem, void** outPtr) {
  (void)offset;
  auto w = windowFor("ncclGetMultimemDevicePointer", window, outPtr);
  if (!w.ok()) return report(w.status());
  if (multimem.mcBasePtr == nullptr) {
    return report(braid::invalidArgument(
        "ncclGetMultimemDevicePointer: the multimem handle's mcBasePtr is NULL"));
  }
  BRAID_INFO(
      "ncclGetMultimemDevicePointer: braid has no multimem (NVLS): NULL, as NCCL answers "
      "without NVLS");
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclGetLsaDevicePointer, ncclWindow_t window, size_t offset,
               int lsaRank, void** outPtr) {
  auto w = windowFor("ncclGetLsaDevicePointer", window, outPtr);
  if (!w.ok()) return report(w.status());
  return lsaPointer("ncclGetLsaDevicePointer", w.value(), offset, lsaRank, outPtr);
}

BRAID_NCCL_API(ncclResult_t, ncclGetPeerDevicePointer, ncclWindow_t window, size_t offset, int peer,
               void** outPtr) {
  auto w = windowFor("ncclGetPeerDevicePointer", window, outPtr);
  if (!w.ok()) return report(w.status());
  if (peer < 0 || peer >= w.value().worldSize) {
    return report(braid::invalidArgument("ncclGetPeerDevicePointer: peer " + std::to_string(peer) +
                                         " is outside the communicator's " +
                                         std::to_string(w.value().worldSize) + " ranks"));
  }
  const int lsaRank = peer - w.value().lsaFirstWorldRank;
  // A rank of the communicator outside this host's team has no pointer: NULL, as NCCL answers.
  if (lsaRank < 0 || lsaRank >= static_cast<int>(w.value().lsaBases.size())) return ncclSuccess;
  return lsaPointer("ncclGetPeerDevicePointer", w.value(), offset, lsaRank, outPtr);
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
