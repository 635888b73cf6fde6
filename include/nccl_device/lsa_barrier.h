/*
 * braid: barriers among the ranks of a load/store team (LSA), through memory every rank of the
 * host maps (ncclDevCommCreate's lsaBarrierCount).
 *
 * Each rank holds, for each of its devcomm's barriers, a round counter (how many times this rank
 * has passed that barrier) and an inbox of one cell per LSA rank. Passing round k: each rank
 * stores k into its own cell of every peer's inbox (a release store: what the group wrote before
 * is visible to a peer that sees k), then waits until every cell of its own inbox has reached k
 * (acquire loads). A peer is at most one round ahead (it cannot pass round k + 1 before this rank
 * arrives at it), so a cell that is past k counts as k. The counters compare across the wrap of
 * 32 bits.
 *
 * The counting (LsaBarrierCells) compiles for the host too: braid's tests run it with threads as
 * ranks. The session that kernels use (ncclLsaBarrierSession) is device code.
 */
#ifndef BRAID_NCCL_DEVICE_LSA_BARRIER_H_
#define BRAID_NCCL_DEVICE_LSA_BARRIER_H_

#include "comm.h"
#include "coop.h"

#ifdef __cplusplus
namespace nccl {
namespace braid_detail {

/** Cells a rank holds for `nBarriers` barriers of a team of `lsaSize`. */
NCCL_HOST_DEVICE_INLINE constexpr size_t lsaBarrierCellCount(int nBarriers, int lsaSize) {
  return static_cast<size_t>(nBarriers) * (1 + static_cast<size_t>(lsaSize));
}

/** Barrier `index` of `nBarriers`, as LSA rank `lsaRank` of `lsaSize` sees it. */
struct LsaBarrierCells {
  uint32_t* const* bases; /**< lsaSize entries: where each rank's cells are mapped here */
  uint32_t first;         /**< where the devcomm's barriers start among each rank's cells */
  int nBarriers, index, lsaRank, lsaSize;

  /** This rank's count of passes of this barrier. */
  NCCL_HOST_DEVICE_INLINE uint32_t* round() const { return bases[lsaRank] + first + index; }
  /** The cell of `owner`'s inbox that rank `from` stores into. */
  NCCL_HOST_DEVICE_INLINE uint32_t* inbox(int owner, int from) const {
    return bases[owner] + first + nBarriers + index * lsaSize + from;
  }
  /** Part `part` of `parts` of arriving at round `k`: stores k into every `parts`-th peer. */
  NCCL_HOST_DEVICE_INLINE void arrive(int part, int parts, uint32_t k) const {
    for (int peer = part; peer < lsaSize; peer += parts) storeRelease(inbox(peer, lsaRank), k);
  }
  /** Whether the peers this part waits for have all arrived at round `k`. */
  NCCL_HOST_DEVICE_INLINE bool arrived(int part, int parts, uint32_t k) const {
    for (int peer = part; peer < lsaSize; peer += parts) {
      if (rollingBefore(loadAcquire(inbox(lsaRank, peer)), k)) return false;
    }
    return true;
  }
  /** Part `part` of `parts` of waiting for round `k`. */
  NCCL_HOST_DEVICE_INLINE void wait(int part, int parts, uint32_t k) const {
    while (!arrived(part, parts, k)) {
    }
  }
};

}  // namespace braid_detail
}  // namespace nccl
#endif /* __cplusplus */

#if NCCL_CHECK_CUDACC
/**
 * A block's (or any group's) use of one of a devcomm's LSA barriers, from construction to
 * destruction; `index` picks the barrier (below the devcomm's lsaBarrierCount), so that
 * concurrent groups each use their own. Every thread of the group constructs it, calls it and
 * destroys it alike. braid's barriers are of the LSA team as a whole.
 */
template <typename Coop>
struct ncclLsaBarrierSession {
  NCCL_DEVICE_INLINE ncclLsaBarrierSession(Coop coop, ncclDevComm const& comm, ncclTeam team,
                                           ncclLsaBarrierHandle handle, uint32_t index,
                                           bool multimem = false, ncclMultimemHandle mmHandle = {})
      : coop_(coop), cells_{comm.lsaBarrierCells,    handle.bufHandle, handle.nBarriers,
                            static_cast<int>(index), comm.lsaRank,     comm.lsaSize} {
    (void)mmHandle;
    const bool wholeLsa = team.nRanks == comm.lsaSize && team.rank == comm.lsaRank &&
                          (team.stride == 1 || team.nRanks == 1);
    if (multimem || !wholeLsa || static_cast<int>(index) >= handle.nBarriers) {
      nccl::braid_detail::unsupported();
    }
    round_ = *cells_.round();
  }
  NCCL_DEVICE_INLINE ncclLsaBarrierSession(Coop coop, ncclDevComm const& comm, ncclTeamTagLsa,
                                           uint32_t index, bool multimem = false)
      : ncclLsaBarrierSession(coop, comm, ncclTeamLsa(comm), comm.lsaBarrier, index, multimem) {}
  /** Keeps the count of passes for the next session of this barrier. */
  NCCL_DEVICE_INLINE ~ncclLsaBarrierSession() {
    coop_.sync();
    if (coop_.thread_rank() == 0) *cells_.round() = round_;
    coop_.sync();
  }
  ncclLsaBarrierSession(ncclLsaBarrierSession const&) = delete;

  /** Tells every peer this group is here; what the group wrote before is theirs to read. */
  NCCL_DEVICE_INLINE void arrive(Coop, cuda::memory_order) {
    coop_.sync();
    round_ += 1;
    cells_.arrive(coop_.thread_rank(), coop_.size(), round_);
  }
  /** Waits until every peer has arrived; what they wrote before is visible after. */
  NCCL_DEVICE_INLINE void wait(Coop, cuda::memory_order) {
    cells_.wait(coop_.thread_rank(), coop_.size(), round_);
    coop_.sync();
  }
  NCCL_DEVICE_INLINE void sync(Coop coop, cuda::memory_order order) {
    arrive(coop, order);
    wait(coop, order);
  }
  /** wait, giving up with ncclTimeout after about `timeoutCycles` clock cycles (each thread
   *  answers for the peers it waited for). */
  NCCL_DEVICE_INLINE ncclResult_t wait(Coop, cuda::memory_order, uint64_t timeoutCycles) {
    const long long start = clock64();
    int late = 0;
    while (!cells_.arrived(coop_.thread_rank(), coop_.size(), round_)) {
      if (static_cast<uint64_t>(clock64() - start) > timeoutCycles) {
        late = 1;
        break;
      }
    }
    coop_.sync();
    return late != 0 ? ncclTimeout : ncclSuccess;
  }
  NCCL_DEVICE_INLINE ncclResult_t sync(Coop coop, cuda::memory_order order,
                                       uint64_t timeoutCycles) {
    arrive(coop, order);
    return wait(coop, order, timeoutCycles);
  }

 private:
  Coop coop_;
  nccl::braid_detail::LsaBarrierCells cells_;
  uint32_t round_;
};
#endif /* NCCL_CHECK_CUDACC */

#endif /* BRAID_NCCL_DEVICE_LSA_BARRIER_H_ */
