// Device memory every rank of a host maps: each rank's share, zeroed, and a table in device
// memory of where every share of the host's ranks is mapped in this rank's address space (a
// device communicator's LSA barrier cells, nccl_device/lsa_barrier.h). The shares travel as CUDA
// IPC regions (transport/cuda_ipc/gpu_region.h): the pointer itself within one process, an IPC
// handle across processes, their records exchanged over the bootstrap.
//
// Made collectively on GPU communicators whose ranks all share one host and reach each other's
// memory by peer access; freed one rank at a time (a share is freed by its owner when it goes;
// peers that mapped it unmap theirs when they free their own share set, and use none of it in
// between: every kernel that used it has ended, as ncclDevCommDestroy requires).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "braid/comm.h"
#include "braid/status.h"
#include "comm/members.h"
#include "gpu/runtime.h"
#include "transport/cuda_ipc/gpu_region.h"

namespace braid::comm {

/// One set of shares: this rank's, the peers' as mapped here, and the table of them.
class HostShare {
 public:
  /// Collective: every rank of `members` calls it with the same `bytes`, its device current
  /// (Comm::canShareAcrossHost has said the host's GPUs reach each other).
  static Result<std::unique_ptr<HostShare>> create(gpu::Runtime& runtime, const Members& members,
                                                   size_t bytes);
  HostShare(const HostShare&) = delete;
  HostShare& operator=(const HostShare&) = delete;
  ~HostShare() = default;

  Comm::HostSharedMemory view() const;

 private:
  HostShare() = default;
  Status mapPeers(gpu::Runtime& runtime, const Members& members,
                  const std::vector<transport::cuda_ipc::RegionRecord>& records,
                  gpu::Stream stream);

  std::unique_ptr<transport::cuda_ipc::OwnedRegion> own_;
  std::vector<std::unique_ptr<transport::cuda_ipc::MappedRegion>> peers_;
  std::unique_ptr<transport::cuda_ipc::OwnedRegion> table_;
  int lsaSize_ = 0;
};

/// A communicator's sets of shares, by the handle Comm::shareAcrossHost gave out.
class HostShares {
 public:
  void add(std::unique_ptr<HostShare> share);
  /// Frees the set `handle` names; an error for a handle this communicator did not give.
  Status remove(void* handle);

 private:
  std::mutex mutex_;
  std::map<void*, std::unique_ptr<HostShare>> shares_;
};

}  // namespace braid::comm
