/*
 * braid: GPU-initiated networking (GIN), declared so that programs written for it compile.
 * braid has none: ncclCommQueryProperties says ginType NCCL_GIN_TYPE_NONE, ncclDevCommCreate
 * refuses every GIN requirement, and so no kernel of a program that checks either reaches these
 * functions; one that does anyway stops there (a trap), rather than put nothing and carry on.
 */
#ifndef BRAID_NCCL_DEVICE_GIN_H_
#define BRAID_NCCL_DEVICE_GIN_H_

#include "comm.h"
#include "coop.h"

/** Requirements of GIN resources (braid declines them: ncclInvalidUsage, with a message). */
struct ncclGinOutboxHandle {
  ncclDevResourceHandle bufHandle;
  uint32_t size_log2;
};
struct ncclGinInboxA2AHandle {
  ncclDevResourceHandle bufHandle;
  ncclGinSignal_t signals;
  uint32_t size_log2;
  uint32_t nPeers_rcp32;
};
NCCL_EXTERN_C ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team,
                                                           int nBarriers,
                                                           ncclGinBarrierHandle_t* outHandle,
                                                           ncclDevResourceRequirements_t* outReq);
NCCL_EXTERN_C ncclResult_t ncclGinOutboxCreateRequirement(int nBlocks, int size_log2,
                                                          struct ncclGinOutboxHandle* outHandle,
                                                          ncclDevResourceRequirements_t* outReq);
NCCL_EXTERN_C ncclResult_t ncclGinInboxA2ACreateRequirement(ncclTeam_t peers, int nBlocks,
                                                            int size_log2,
                                                            struct ncclGinInboxA2AHandle* outHandle,
                                                            ncclDevResourceRequirements_t* outReq);

#ifdef __cplusplus
/** What a barrier makes sure of for GIN operations (a set of bits). */
enum class ncclGinFenceLevel : uint32_t {
  None = 0,
  Put = 1u << 0, /**< peers' puts to this rank issued before the barrier have landed */
  Get = 1u << 1, /**< this rank's gets issued before the barrier have landed */
  Relaxed = None
};
NCCL_HOST_DEVICE_INLINE constexpr ncclGinFenceLevel operator|(ncclGinFenceLevel a,
                                                              ncclGinFenceLevel b) {
  return static_cast<ncclGinFenceLevel>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
NCCL_HOST_DEVICE_INLINE constexpr ncclGinFenceLevel operator&(ncclGinFenceLevel a,
                                                              ncclGinFenceLevel b) {
  return static_cast<ncclGinFenceLevel>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
}

/* What a put does at its target when it lands (remote actions) and here when its source may be
 * reused (local actions). */
struct ncclGin_None {};
struct ncclGin_SignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_StrongSignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_WeakSignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_SignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_StrongSignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_WeakSignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_VASignalInc {
  ncclWindow_t signalWindow;
  size_t signalOffset;
};
struct ncclGin_VASignalAdd {
  ncclWindow_t signalWindow;
  size_t signalOffset;
  uint64_t value;
};
struct ncclGin_CounterInc {
  ncclGinCounter_t counter;
};
struct ncclGin_WeakCounterInc {
  ncclGinCounter_t counter;
};
#endif /* __cplusplus */

#if NCCL_CHECK_CUDACC
/** A GIN context of a devcomm. Every member stops the kernel: braid makes no devcomm with GIN. */
struct ncclGin {
  ncclDevComm const& comm;
  uint32_t contextId;

  NCCL_DEVICE_INLINE ncclGin(ncclDevComm const& devComm, int contextIndex)
      : comm(devComm), contextId(static_cast<uint32_t>(contextIndex)) {
    nccl::braid_detail::unsupported();
  }

  template <typename RemoteAction = ncclGin_None, typename LocalAction = ncclGin_None,
            typename Coop = ncclCoopThread>
  NCCL_DEVICE_INLINE void put(ncclTeam, int, ncclWindow_t, size_t, ncclWindow_t, size_t, size_t,
                              RemoteAction = ncclGin_None{}, LocalAction = ncclGin_None{},
                              Coop = ncclCoopThread{}) const {
    nccl::braid_detail::unsupported();
  }
  template <typename T, typename RemoteAction = ncclGin_None, typename Coop = ncclCoopThread>
  NCCL_DEVICE_INLINE void putValue(ncclTeam, int, ncclWindow_t, size_t, T,
                                   RemoteAction = ncclGin_None{}, Coop = ncclCoopThread{}) const {
    nccl::braid_detail::unsupported();
  }
  template <typename RemoteAction, typename Coop = ncclCoopThread>
  NCCL_DEVICE_INLINE void signal(ncclTeam, int, RemoteAction, Coop = ncclCoopThread{}) const {
    nccl::braid_detail::unsupported();
  }
  template <typename Coop>
  NCCL_DEVICE_INLINE void flush(Coop, cuda::memory_order = cuda::memory_order_acquire) const {
    nccl::braid_detail::unsupported();
  }
  NCCL_DEVICE_INLINE uint64_t readSignal(ncclGinSignal_t, int = 64,
                                         cuda::memory_order = cuda::memory_order_acquire) const {
    nccl::braid_detail::unsupported();
    return 0;
  }
  template <typename Coop>
  NCCL_DEVICE_INLINE void waitSignal(Coop, ncclGinSignal_t, uint64_t, int = 64,
                                     cuda::memory_order = cuda::memory_order_acquire) const {
    nccl::braid_detail::unsupported();
  }
  NCCL_DEVICE_INLINE void resetSignal(ncclGinSignal_t) const { nccl::braid_detail::unsupported(); }
  NCCL_DEVICE_INLINE uint64_t readCounter(ncclGinCounter_t, int = 56,
                                          cuda::memory_order = cuda::memory_order_acquire) const {
    nccl::braid_detail::unsupported();
    return 0;
  }
  template <typename Coop>
  NCCL_DEVICE_INLINE void waitCounter(Coop, ncclGinCounter_t, uint64_t, int = 56,
                                      cuda::memory_order = cuda::memory_order_acquire) const {
    nccl::braid_detail::unsupported();
  }
  NCCL_DEVICE_INLINE void resetCounter(ncclGinCounter_t) const {
    nccl::braid_detail::unsupported();
  }
};
#endif /* NCCL_CHECK_CUDACC */

#endif /* BRAID_NCCL_DEVICE_GIN_H_ */
