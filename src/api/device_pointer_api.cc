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
#include "api/device_types.h"

using braid::api::commFrom;
using braid::api::notImplemented;
using braid::api::report;

extern "C" {
struct ncclMultimemHandle {
  void* mcBasePtr;
};

/// NVIDIA's ncclGinType_t.
enum ncclGinType_t { NCCL_GIN_TYPE_NONE = 0, NCCL_GIN_TYPE_PROXY = 2, NCCL_GIN_TYPE_GDAKI = 3 };

struct ncclCommProperties {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  ncclGinType_t ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  ncclGinType_t railedGinType;
};
typedef struct ncclCommProperties ncclCommProperties_t;
}

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

BRAID_NCCL_API(ncclResult_t, ncclCommQueryProperties, ncclComm_t comm,
               ncclCommProperties_t* props) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (props == nullptr) return report(braid::invalidArgument("ncclCommQueryProperties: NULL"));
  if (props->magic != NCCL_API_MAGIC) {
    return report(
        braid::invalidArgument("ncclCommQueryProperties: props was not initialized with "
                               "NCCL_COMM_PROPERTIES_INITIALIZER (bad magic)"));
  }
  if (props->size < offsetof(ncclCommProperties_t, rank)) {
    return report(braid::invalidArgument("ncclCommQueryProperties: props has an unexpected size " +
                                         std::to_string(props->size)));
  }
  const braid::Comm& k = *c.value();
  ncclCommProperties_t p{};
  p.size = props->size;
  p.magic = props->magic;
  p.version = props->version;
  p.rank = k.rank();
  p.nRanks = k.size();
  p.cudaDev = k.cudaDevice();
  p.nvmlDev = -1;  // braid does not use NVML: unknown
  p.deviceApiSupport = false;
  p.multimemSupport = false;
  p.ginType = NCCL_GIN_TYPE_NONE;
  // One load/store team per host: the ranks of a host's block (ncclTeamLsa).
  p.nLsaTeams = k.size() / std::max(1, k.hostBlock().second);
  p.hostRmaSupport = false;
  p.railedGinType = NCCL_GIN_TYPE_NONE;
  memcpy(props, &p, std::min(props->size, sizeof p));
  return ncclSuccess;
}

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
