// Making the symmetric kernels' barrier areas and call records (device_symmetric.h).
//
// Area record: "/braid-<nonce>-symbar-<rank>" (region_exchange.h). A pinned area's segment is
// the record's name + "-words".
//
// The rank's private memory, one device allocation: SymmetricBoard | SymmetricState.
#include "exec/device_symmetric.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "exec/board_image.h"
#include "exec/region_exchange.h"

namespace braid::exec {
namespace {

namespace engine = kernels::engine;
using transport::cuda_ipc::OwnedRegion;

constexpr uint64_t kAreaMagic = 0x3142524153444942ull;  // "BIDSARB1"
constexpr uint32_t kAreaVersion = 1;
constexpr const char* kWordsSuffix = "-words";

std::string areaName(uint64_t nonce, int rank) {
  char name[64];
  snprintf(name, sizeof(name), "/braid-%016" PRIx64 "-symbar-%d", nonce, rank);
  return name;
}

}  // namespace

Result<std::unique_ptr<DeviceSymmetric>> DeviceSymmetric::create(
    gpu::Runtime& runtime, uint64_t nonce, int rank, int nranks,
    transport::cuda_ipc::FifoPlacement placement, const std::function<Status()>& barrier,
    gpu::Stream stream) {
  if (nranks < 1 || nranks > static_cast<int>(engine::kMaxSymmetricRanks) || rank < 0 ||
      rank >= nranks) {
    return invalidArgument("the symmetric kernels serve 1.." +
                           std::to_string(engine::kMaxSymmetricRanks) + " ranks, not rank " +
                           std::to_string(rank) + " of " + std::to_string(nranks));
  }
  std::unique_ptr<DeviceSymmetric> out(new DeviceSymmetric(runtime, stream));
  const std::vector<unsigned char> zeros(engine::kSymmetricBarrierBytes, 0);
  Result<std::unique_ptr<OwnedRegion>> own =
      OwnedRegion::create(runtime, placement, areaName(nonce, rank) + kWordsSuffix, zeros, stream);
  if (!own.ok()) return own.status().withContext("symmetric barrier area");
  out->own_ = std::move(own).value();
  BRAID_ASSIGN_OR_RETURN(out->peers_,
                         exchangeRegions(
                             runtime, *out->own_, rank, nranks,
                             [nonce](int r) { return areaName(nonce, r); }, kWordsSuffix,
                             RegionKind{kAreaMagic, kAreaVersion, engine::kSymmetricBarrierBytes,
                                        "symmetric barrier area"},
                             barrier));
  engine::SymmetricBoard b{};
  b.nranks = static_cast<uint32_t>(nranks);
  b.rank = static_cast<uint32_t>(rank);
  for (int q = 0; q < nranks; ++q) {
    b.barriers[q] = static_cast<uint32_t*>(q == rank ? out->own_->data() : out->peers_[q]->data());
  }
  BRAID_ASSIGN_OR_RETURN(out->private_, placeBoard<engine::SymmetricState>(runtime, b, stream));
  out->board_ = static_cast<const engine::SymmetricBoard*>(out->private_);
  return out;
}

Result<const engine::SymmetricCall*> DeviceSymmetric::callFor(const ncclWindow_vidmem* send,
                                                              const ncclWindow_vidmem* recv,
                                                              engine::SymmetricKind kind) {
  const auto key = std::make_tuple(static_cast<const void*>(send), static_cast<const void*>(recv),
                                   static_cast<uint32_t>(kind));
  auto found = calls_.find(key);
  if (found != calls_.end()) return found->second;
  if (usedInChunk_ == kCallsPerChunk) {
    BRAID_ASSIGN_OR_RETURN(void* chunk,
                           runtime_.deviceAlloc(kCallsPerChunk * sizeof(engine::SymmetricCall)));
    chunks_.push_back(chunk);
    usedInChunk_ = 0;
  }
  auto* at = static_cast<engine::SymmetricCall*>(chunks_.back()) + usedInChunk_;
  const engine::SymmetricCall call{board_, send, recv, kind, 0};
  BRAID_TRY(runtime_.copy(at, &call, sizeof call, stream_));
  BRAID_TRY(runtime_.streamSynchronize(stream_));
  ++usedInChunk_;
  calls_.emplace(key, at);
  return static_cast<const engine::SymmetricCall*>(at);
}

DeviceSymmetric::~DeviceSymmetric() {
  // Freeing device memory waits for the device's kernels: no launch still reads these.
  for (void* chunk : chunks_) (void)runtime_.deviceFree(chunk);
  if (private_ != nullptr) (void)runtime_.deviceFree(private_);
}

}  // namespace braid::exec
