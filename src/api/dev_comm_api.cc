// ncclDevCommCreate / ncclDevCommDestroy (nccl_device/core.h): device communicators of GPU
// communicators whose ranks share one host. A devcomm carries the ranks and the LSA team (the
// host's ranks), and, for reqs->lsaBarrierCount barriers, cells every rank of the host maps
// (Comm::shareAcrossHost) that ncclLsaBarrierSession counts in (nccl_device/lsa_barrier.h).
//
// What braid cannot give is refused before anything is made, naming the field: multimem, every
// GPU-initiated networking requirement, the LL all-to-all, extra resource buffers and teams.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "api/api_util.h"
#include "api/group.h"
#include "nccl_device.h"

using braid::api::commFrom;
using braid::api::report;
using braid::api::runOrDefer;

namespace {

/// The caller's requirements, read up to its `size`; what its header did not have stays zero.
braid::Result<ncclDevCommRequirements_t> readRequirements(const ncclDevCommRequirements_t* reqs) {
  if (reqs->magic != NCCL_API_MAGIC) {
    return braid::invalidUsage(
        "ncclDevCommCreate: reqs was not initialized with NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER "
        "(bad magic)");
  }
  constexpr size_t kLeast = offsetof(ncclDevCommRequirements_t, railGinBarrierCount);
  if (reqs->size < kLeast) {
    return braid::invalidArgument("ncclDevCommCreate: reqs has an unexpected size " +
                                  std::to_string(reqs->size));
  }
  ncclDevCommRequirements_t r;
  memset(&r, 0, sizeof r);
  memcpy(&r, reqs, std::min(reqs->size, sizeof r));
  return r;
}

/// The first requirement braid declines, named, or "" when it gives them all.
std::string declined(const ncclDevCommRequirements_t& r) {
  if (r.lsaMultimem) return "lsaMultimem (braid has no multimem)";
  if (r.teamRequirementsList != nullptr) {
    return "teamRequirementsList (extra teams with multimem: braid has no multimem)";
  }
  if (r.resourceRequirementsList != nullptr) {
    return "resourceRequirementsList (braid makes no extra device buffers yet)";
  }
  if (r.barrierCount != 0) {
    return "barrierCount (world barriers go through GIN; a devcomm of one host uses "
           "lsaBarrierCount)";
  }
  if (r.railGinBarrierCount != 0) return "railGinBarrierCount (braid has no GIN)";
  if (r.worldGinBarrierCount != 0) return "worldGinBarrierCount (braid has no GIN)";
  if (r.ginForceEnable) return "ginForceEnable (braid has no GIN)";
  if (r.ginSignalCount != 0) return "ginSignalCount (braid has no GIN)";
  if (r.ginCounterCount != 0) return "ginCounterCount (braid has no GIN)";
  if (r.ginConnectionType != NCCL_GIN_CONNECTION_NONE)
    return "ginConnectionType (braid has no GIN)";
  if (r.lsaLLA2ABlockCount != 0 || r.lsaLLA2ASlotCount != 0) {
    return "lsaLLA2ABlockCount / lsaLLA2ASlotCount (braid has no LL all-to-all)";
  }
  return "";
}

/// Makes the devcomm of `comm` that `r` asks for into `out`, untouched on failure.
braid::Status makeDevComm(braid::Comm& comm, const ncclDevCommRequirements_t& r,
                          ncclDevComm_t* out) {
  const auto [first, count] = comm.hostBlock();
  ncclDevComm_t d;
  memset(&d, 0, sizeof d);
  d.magic = NCCL_API_MAGIC;
  d.version = NCCL_VERSION_CODE;
  d.rank = comm.rank();
  d.nRanks = comm.size();
  d.lsaRank = comm.rank() - first;
  d.lsaSize = count;
  d.lsaBarrier.nBarriers = r.lsaBarrierCount;
  if (r.lsaBarrierCount > 0) {
    const size_t cells = nccl::braid_detail::lsaBarrierCellCount(r.lsaBarrierCount, count);
    BRAID_ASSIGN_OR_RETURN(braid::Comm::HostSharedMemory shared,
                           comm.shareAcrossHost(cells * sizeof(uint32_t)));
    d.lsaBarrierCells = reinterpret_cast<uint32_t* const*>(shared.deviceTable);
    d.resources = shared.handle;
  }
  *out = d;
  return braid::Status::success();
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm,
               const ncclDevCommRequirements_t* reqs, ncclDevComm_t* outDevComm) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (reqs == nullptr || outDevComm == nullptr) {
    return report(braid::invalidArgument("ncclDevCommCreate: reqs or outDevComm is NULL"));
  }
  auto r = readRequirements(reqs);
  if (!r.ok()) return report(r.status());
  const std::string no = declined(r.value());
  if (!no.empty()) {
    return report(braid::invalidUsage("ncclDevCommCreate: braid declines " + no));
  }
  if (r.value().lsaBarrierCount < 0) {
    return report(braid::invalidArgument("ncclDevCommCreate: lsaBarrierCount is negative"));
  }
  std::string why;
  if (!c.value()->canShareAcrossHost(&why)) {
    return report(braid::invalidUsage("ncclDevCommCreate: " + why));
  }
  braid::Comm* k = c.value();
  const ncclDevCommRequirements_t asked = r.value();
  return runOrDefer(static_cast<const void*>(k), [k, asked, outDevComm] {
    return makeDevComm(*k, asked, outDevComm).withContext("ncclDevCommCreate");
  });
}

BRAID_NCCL_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm, const ncclDevComm_t* devComm) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (devComm == nullptr) return report(braid::invalidArgument("ncclDevCommDestroy: NULL"));
  if (devComm->magic != NCCL_API_MAGIC || devComm->rank != c.value()->rank() ||
      devComm->nRanks != c.value()->size()) {
    return report(braid::invalidArgument(
        "ncclDevCommDestroy: not a device communicator ncclDevCommCreate made for this "
        "communicator"));
  }
  if (devComm->resources == nullptr) return ncclSuccess;
  return report(c.value()->unshareAcrossHost(devComm->resources).withContext("ncclDevCommDestroy"));
}
