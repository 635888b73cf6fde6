/*
 * braid: the barrier of a team as a whole (NCCL's ncclBarrierSession). NCCL composes it of an
 * LSA barrier within hosts and a GIN barrier across them; braid's devcomms span one host, so the
 * LSA team is the world and the session is its LSA barrier. The constructors that take a GIN
 * context stop the kernel (gin.h): braid makes no devcomm with GIN.
 */
#ifndef BRAID_NCCL_DEVICE_BARRIER_H_
#define BRAID_NCCL_DEVICE_BARRIER_H_

#include "gin.h"
#include "lsa_barrier.h"

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclBarrierSession {
  /** The LSA team's barrier `index` (the devcomm's lsaBarrier). */
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop coop, ncclTeamTagLsa lsa, ncclDevComm const& comm,
                                        uint32_t index, bool multimem = false)
      : lsa_(coop, comm, lsa, index, multimem) {}
  /** The world's barrier through GIN: braid has none. */
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop coop, ncclTeamTagWorld, ncclGin gin, uint32_t index,
                                        bool multimem = false)
      : lsa_(refused(coop), gin.comm, ncclTeamTagLsa{}, index, multimem) {}
  /** The rail's barrier through GIN: braid has none. */
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop coop, ncclTeamTagRail, ncclGin gin, uint32_t index)
      : lsa_(refused(coop), gin.comm, ncclTeamTagLsa{}, index) {}
  ncclBarrierSession(ncclBarrierSession const&) = delete;

  NCCL_DEVICE_INLINE ncclLsaBarrierSession<Coop>& lsaBarrier() { return lsa_; }

  /** Arrives and waits. `fence` concerns GIN operations, which a braid devcomm has none of. */
  NCCL_DEVICE_INLINE void sync(Coop coop, cuda::memory_order order,
                               ncclGinFenceLevel fence = ncclGinFenceLevel::Put |
                                                         ncclGinFenceLevel::Get) {
    (void)fence;
    lsa_.sync(coop, order);
  }
  NCCL_DEVICE_INLINE ncclResult_t sync(Coop coop, cuda::memory_order order, ncclGinFenceLevel fence,
                                       uint64_t timeoutCycles) {
    (void)fence;
    return lsa_.sync(coop, order, timeoutCycles);
  }

 private:
  NCCL_DEVICE_INLINE static Coop refused(Coop coop) {
    nccl::braid_detail::unsupported();
    return coop;
  }
  ncclLsaBarrierSession<Coop> lsa_;
};
#endif /* NCCL_CHECK_CUDACC */

#endif /* BRAID_NCCL_DEVICE_BARRIER_H_ */
