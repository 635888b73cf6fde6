/*
 * braid: the device communicator a kernel receives by value, and its teams.
 *
 * ncclDevComm's layout is braid's. NCCL documents rank, nRanks, lsaRank and lsaSize as the fields
 * user code may read; braid also fills lsaBarrier (what ncclLsaBarrierSession takes), and leaves
 * the multimem and GIN fields empty, as it makes no devcomm that asks for them.
 */
#ifndef BRAID_NCCL_DEVICE_COMM_H_
#define BRAID_NCCL_DEVICE_COMM_H_

#include "core.h"

struct ncclDevComm {
  unsigned int magic;   /**< NCCL_API_MAGIC while made; ncclDevCommDestroy clears it */
  unsigned int version; /**< NCCL_VERSION_CODE of the library that made it */
  int rank, nRanks;     /**< this rank in the communicator, and its size */
  int lsaRank, lsaSize; /**< this rank in its load/store team (its host's ranks), and its size */
  ncclLsaBarrierHandle_t lsaBarrier;      /**< the devcomm's lsaBarrierCount LSA barriers */
  ncclMultimemHandle_t lsaMultimem;       /**< empty: braid has no multimem */
  ncclGinBarrierHandle_t railGinBarrier;  /**< empty: braid has no GIN */
  ncclGinBarrierHandle_t worldGinBarrier; /**< empty: braid has no GIN */
  int ginSignalCount, ginCounterCount;    /**< 0 */
  uint32_t ginContextCount;               /**< 0 */
  uint32_t* abortFlag;                    /**< NULL: braid's kernels keep their own */

  /* braid's own, read only through the functions of these headers: */
  /** lsaSize device-readable pointers: where each LSA rank's barrier cells are mapped here. */
  uint32_t* const* lsaBarrierCells;
  /** What ncclDevCommDestroy frees (host memory of the library). */
  void* resources;
};

#ifdef __cplusplus
/** The whole communicator. */
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamWorld(ncclDevComm const& comm) {
  return ncclTeam{comm.nRanks, comm.rank, 1};
}
/** The ranks this rank reaches by loads and stores: its host's. */
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamLsa(ncclDevComm const& comm) {
  return ncclTeam{comm.lsaSize, comm.lsaRank, 1};
}
/** The ranks at this rank's place in every LSA team. */
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamRail(ncclDevComm const& comm) {
  return ncclTeam{comm.nRanks / comm.lsaSize, (comm.rank - comm.lsaRank) / comm.lsaSize,
                  comm.lsaSize};
}
/** Team `team`'s rank `rank` as a world rank. */
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToWorld(ncclDevComm const& comm, ncclTeam team, int rank) {
  return comm.rank + (rank - team.rank) * team.stride;
}
/** Team `team`'s rank `rank` as a rank of this rank's LSA team (out of range: not in it). */
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToLsa(ncclDevComm const& comm, ncclTeam team, int rank) {
  return ncclTeamRankToWorld(comm, team, rank) - (comm.rank - comm.lsaRank);
}
#endif /* __cplusplus */

/* Teams as sets of world ranks that hold this rank: how team b's rank bPeer sits in team a. */
#ifdef __cplusplus
/** Whether team `b`'s rank `bPeer` is a rank of team `a`. */
NCCL_HOST_DEVICE_INLINE bool ncclTeamRankIsMember(ncclTeam_t a, ncclTeam_t b, int bPeer) {
  const int offset = (bPeer - b.rank) * b.stride;
  if (offset % a.stride != 0) return false;
  const int aPeer = a.rank + offset / a.stride;
  return aPeer >= 0 && aPeer < a.nRanks;
}
/** Team `b`'s rank `bPeer` as a rank of team `a`; -1 when it is not one. */
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToTeam(ncclTeam_t a, ncclTeam_t b, int bPeer) {
  if (!ncclTeamRankIsMember(a, b, bPeer)) return -1;
  return a.rank + (bPeer - b.rank) * b.stride / a.stride;
}
/** The consecutive `innerSize` ranks of `parent` that hold this rank. */
NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamInnerFactor(ncclTeam_t parent, int innerSize) {
  return ncclTeam_t{innerSize, parent.rank % innerSize, parent.stride};
}
/** The ranks of `parent` at this rank's place in each block of `innerSize`. */
NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamOuterFactor(ncclTeam_t parent, int innerSize) {
  return ncclTeam_t{parent.nRanks / innerSize, parent.rank / innerSize, parent.stride * innerSize};
}
#endif /* __cplusplus */

#endif /* BRAID_NCCL_DEVICE_COMM_H_ */
