// The host entry points of NCCL 2.28's device API about teams and resource requirements, as
// braid's nccl_device.h declares them (device communicators themselves: dev_comm_api.cc).
//
// What braid can give, it gives: the teams of a communicator (world, the
// ranks next to this one on its host, the rail through every host), the
// translation of a team's ranks, and the LL all-to-all's slot count. The
// requirements of extra resources (LSA barriers beyond a devcomm's own,
// GIN barriers, the LL all-to-all's buffer) are not implemented: those fail
// with ncclInvalidUsage and say so.
#include "api/api_util.h"
#include "base/log.h"
#include "nccl_device.h"

using braid::api::commFrom;
using braid::api::notImplemented;

namespace {

constexpr const char* kDevicePlan =
    "braid makes no extra device resources (a devcomm's own LSA barriers: lsaBarrierCount)";

// A team of one rank, for a communicator handle that is not one.
ncclTeam_t loneTeam() { return {1, 0, 1}; }

// The world rank of a team's rank `r`: ranks of a team are `stride` apart.
int worldRankOf(const braid::Comm& comm, ncclTeam_t team, int r) {
  return comm.rank() + (r - team.rank) * team.stride;
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclLsaBarrierCreateRequirement, ncclTeam_t team, int nBarriers,
               struct ncclLsaBarrierHandle* outHandle, struct ncclDevResourceRequirements* outReq) {
  (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return notImplemented("ncclLsaBarrierCreateRequirement", kDevicePlan);
}

BRAID_NCCL_API(ncclResult_t, ncclGinBarrierCreateRequirement, ncclComm_t comm, ncclTeam_t team,
               int nBarriers, struct ncclGinBarrierHandle* outHandle,
               struct ncclDevResourceRequirements* outReq) {
  (void)comm, (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return notImplemented("ncclGinBarrierCreateRequirement", kDevicePlan);
}

BRAID_NCCL_API(ncclResult_t, ncclLLA2ACreateRequirement, int nBlocks, int nSlots,
               struct ncclLLA2AHandle* outHandle, struct ncclDevResourceRequirements* outReq) {
  (void)nBlocks, (void)nSlots, (void)outHandle, (void)outReq;
  return notImplemented("ncclLLA2ACreateRequirement", kDevicePlan);
}

// Slots of 8 bytes for maxElts elements of up to maxEltSize bytes each, as
// NVIDIA's documents its LL all-to-all's sizing.
BRAID_NCCL_API(int, ncclLLA2ACalcSlots, int maxElts, int maxEltSize) {
  return maxElts * ((maxEltSize + 7) / 8);
}

BRAID_NCCL_API(ncclTeam_t, ncclTeamWorld, ncclComm_t comm) {
  auto c = commFrom(comm);
  if (!c.ok()) return loneTeam();
  return {c.value()->size(), c.value()->rank(), 1};
}

BRAID_NCCL_API(ncclTeam_t, ncclTeamLsa, ncclComm_t comm) {
  auto c = commFrom(comm);
  if (!c.ok()) return loneTeam();
  const auto [first, count] = c.value()->hostBlock();
  return {count, c.value()->rank() - first, 1};
}

// The rail: the ranks at this rank's place in every host's block, when
// every host holds a block of the same size; else this rank alone.
BRAID_NCCL_API(ncclTeam_t, ncclTeamRail, ncclComm_t comm) {
  auto c = commFrom(comm);
  if (!c.ok()) return loneTeam();
  const auto [first, count] = c.value()->hostBlock();
  const int n = c.value()->size();
  if (n % count != 0 || first % count != 0) return {1, 0, count};
  return {n / count, first / count, count};
}

BRAID_NCCL_API(int, ncclTeamRankToWorld, ncclComm_t comm, ncclTeam_t team, int rank) {
  auto c = commFrom(comm);
  if (!c.ok() || rank < 0 || rank >= team.nRanks) return -1;
  const int world = worldRankOf(*c.value(), team, rank);
  return world >= 0 && world < c.value()->size() ? world : -1;
}

BRAID_NCCL_API(int, ncclTeamRankToLsa, ncclComm_t comm, ncclTeam_t team, int rank) {
  auto c = commFrom(comm);
  if (!c.ok() || rank < 0 || rank >= team.nRanks) return -1;
  const int world = worldRankOf(*c.value(), team, rank);
  const auto [first, count] = c.value()->hostBlock();
  return world >= first && world < first + count ? world - first : -1;
}

// NVIDIA's test hook: read the debug settings (BRAID_DEBUG / NCCL_DEBUG) again.
BRAID_NCCL_API(void, ncclResetDebugInitInternal) { braid::log::resetLevel(); }
