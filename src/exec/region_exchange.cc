// Handing the ranks of a host each other's regions (region_exchange.h).
#include "exec/region_exchange.h"

#include <atomic>
#include <new>
#include <utility>

#include "transport/shm/shm_segment.h"

namespace braid::exec {
namespace {

using transport::cuda_ipc::MappedRegion;
using transport::shm::ShmSegment;

constexpr size_t kRegionRecordPage = 4096;

struct RegionPost {
  std::atomic<uint64_t> magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  uint32_t reserved;
  uint64_t shape;
  transport::cuda_ipc::RegionRecord region;
};
static_assert(sizeof(RegionPost) <= kRegionRecordPage, "a region record fits its page");

// Maps rank `peer`'s region from its record `name`.
Result<std::unique_ptr<MappedRegion>> mapPeer(gpu::Runtime& runtime, const std::string& name,
                                              const std::string& cellsSuffix, int peer, int nranks,
                                              const RegionKind& kind) {
  BRAID_ASSIGN_OR_RETURN(ShmSegment segment, ShmSegment::open(name));
  const auto* r = static_cast<const RegionPost*>(segment.data());
  if (segment.size() < sizeof(RegionPost) ||
      r->magic.load(std::memory_order_acquire) != kind.magic || r->version != kind.version) {
    return invalidUsage("shm segment " + name + " is not a braid " + kind.what +
                        " of this version (ranks run different braid builds?)");
  }
  if (r->rank != peer || r->nranks != nranks || r->shape != kind.shape) {
    return invalidUsage(std::string(kind.what) + " " + name + " belongs to rank " +
                        std::to_string(r->rank) + " of " + std::to_string(r->nranks) +
                        " with shape " + std::to_string(r->shape) + ", expected rank " +
                        std::to_string(peer) + " of " + std::to_string(nranks) + " with " +
                        std::to_string(kind.shape));
  }
  Result<std::unique_ptr<MappedRegion>> mapped =
      MappedRegion::open(runtime, r->region, name + cellsSuffix);
  if (!mapped.ok()) {
    return mapped.status().withContext(std::string(kind.what) + " of rank " + std::to_string(peer));
  }
  return mapped;
}

}  // namespace

Result<std::vector<std::unique_ptr<MappedRegion>>> exchangeRegions(
    gpu::Runtime& runtime, const transport::cuda_ipc::OwnedRegion& own, int rank, int nranks,
    const std::function<std::string(int)>& recordName, const std::string& cellsSuffix,
    const RegionKind& kind, const std::function<Status()>& barrier) {
  const std::string ownName = recordName(rank);
  BRAID_ASSIGN_OR_RETURN(ShmSegment record, ShmSegment::create(ownName, kRegionRecordPage));
  auto* r = new (record.data()) RegionPost();
  r->version = kind.version;
  r->rank = rank;
  r->nranks = nranks;
  r->shape = kind.shape;
  r->region = own.record();
  r->magic.store(kind.magic, std::memory_order_release);
  // Every record exists once all ranks pass the barrier; every peer has mapped this one once
  // all pass the second.
  std::vector<std::unique_ptr<MappedRegion>> peers;
  Status mapped = barrier();
  for (int peer = 0; mapped.ok() && peer < nranks; ++peer) {
    if (peer == rank) {
      peers.push_back(nullptr);
      continue;
    }
    Result<std::unique_ptr<MappedRegion>> m =
        mapPeer(runtime, recordName(peer), cellsSuffix, peer, nranks, kind);
    if (!m.ok()) {
      mapped = m.status();
      break;
    }
    peers.push_back(std::move(m).value());
  }
  if (mapped.ok()) mapped = barrier();
  (void)ShmSegment::unlink(ownName);
  if (own.placement() == transport::cuda_ipc::FifoPlacement::kPinnedHost) {
    (void)ShmSegment::unlink(ownName + cellsSuffix);
  }
  BRAID_TRY(mapped);
  return peers;
}

}  // namespace braid::exec
