// NCCL 2.31's and 2.32's entry points braid exports but cannot serve yet, so that programs built
// against NVIDIA's library load and get a clear error, never a silent success.
//
// The host side of Compute Fabric Transport (2.31, declared by NVIDIA in nccl_device/host.h):
// the logical-endpoint queries and the CFT barrier need CFT windows, which braid's lack.
#include <cstddef>
#include <cstdint>

#include "api/api_util.h"
#include "nccl_device.h"

// Opaque here: braid's nccl_device.h does not declare CFT, which braid does not have.
struct ncclCftBarrierHandle;

using braid::api::notImplemented;

namespace {

constexpr const char* kCftPlan =
    "braid has no Compute Fabric Transport: its windows have no logical endpoints";

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclGetMultimemDeviceLeInfo, ncclWindow_t window, size_t offset,
               uint32_t* leId, size_t* leOffset) {
  (void)window, (void)offset, (void)leId, (void)leOffset;
  return notImplemented("ncclGetMultimemDeviceLeInfo", kCftPlan);
}

BRAID_NCCL_API(ncclResult_t, ncclGetCftDeviceLeInfo, ncclWindow_t window, size_t offset,
               int peerCft, ncclTeam_t cftTeam, uint32_t* leId, size_t* leOffset) {
  (void)window, (void)offset, (void)peerCft, (void)cftTeam, (void)leId, (void)leOffset;
  return notImplemented("ncclGetCftDeviceLeInfo", kCftPlan);
}

BRAID_NCCL_API(ncclResult_t, ncclGetPeerDeviceLeInfo, ncclWindow_t window, size_t offset,
               int peerWorld, uint32_t* leId, size_t* leOffset) {
  (void)window, (void)offset, (void)peerWorld, (void)leId, (void)leOffset;
  return notImplemented("ncclGetPeerDeviceLeInfo", kCftPlan);
}

// The CFT teams: braid has no CFT group, so every CFT team is empty (no ranks), the answer
// NVIDIA's library gives where its CFT state cannot be set up.
BRAID_NCCL_API(ncclTeam_t, ncclTeamCft, ncclComm_t comm, int mode) {
  (void)comm, (void)mode;
  return ncclTeam_t{0, 0, 0};
}

BRAID_NCCL_API(ncclTeam_t, ncclTeamCftMultimem, ncclComm_t comm) {
  (void)comm;
  return ncclTeam_t{0, 0, 0};
}

BRAID_NCCL_API(ncclResult_t, ncclCftBarrierCreateRequirement, ncclTeam_t team, int nBarriers,
               struct ncclCftBarrierHandle* outHandle, struct ncclDevResourceRequirements* outReq) {
  (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return notImplemented("ncclCftBarrierCreateRequirement", kCftPlan);
}
