// How the ranks of a host hand each other a region of memory that every one of them maps (the
// one-shot boards, the symmetric kernels' barrier areas): each publishes its region's record in
// a one-page shm segment of its own, all meet, each maps every peer's region, all meet again, and
// each unlinks its names.
//
// Record (the segment `recordName(rank)`): magic, version, rank, nranks, shape (what the region
// is made for: the board's largest call, say), and the region's record (transport/cuda_ipc/
// gpu_region.h); the owner writes `magic` last. A pinned region's own segment is the record's
// name + `cellsSuffix`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braid/status.h"
#include "gpu/runtime.h"
#include "transport/cuda_ipc/gpu_region.h"

namespace braid::exec {

/// What kind of region a record describes, which every peer checks.
struct RegionKind {
  uint64_t magic;
  uint32_t version;
  uint64_t shape;    ///< must be the same on every rank
  const char* what;  ///< the region's name in errors ("GPU one-shot board")
};

/// Every rank of the host calls this with the same names, kind and nranks: publishes `own`,
/// meets the others through `barrier`, maps each peer's region, meets again and unlinks its
/// names. Returns the peers' regions by rank (null at `rank`).
Result<std::vector<std::unique_ptr<transport::cuda_ipc::MappedRegion>>> exchangeRegions(
    gpu::Runtime& runtime, const transport::cuda_ipc::OwnedRegion& own, int rank, int nranks,
    const std::function<std::string(int)>& recordName, const std::string& cellsSuffix,
    const RegionKind& kind, const std::function<Status()>& barrier);

}  // namespace braid::exec
