// Device memory the ranks of a host share (host_shares.h), and Comm::shareAcrossHost.
#include "comm/host_shares.h"

#include <cstring>
#include <string>

#include "base/log.h"
#include "comm/comm_impl.h"

namespace braid::comm {
namespace {

namespace ipc = transport::cuda_ipc;

/// The bytes of `pointers`, as a region's image.
std::vector<unsigned char> imageOf(const std::vector<void*>& pointers) {
  std::vector<unsigned char> image(pointers.size() * sizeof(void*));
  if (!image.empty()) memcpy(image.data(), pointers.data(), image.size());
  return image;
}

/// A stream of this rank's device for the copies of the creation, destroyed with it.
class ScopedStream {
 public:
  explicit ScopedStream(gpu::Runtime& runtime) : runtime_(runtime) {}
  ~ScopedStream() {
    if (stream_ != nullptr) (void)runtime_.streamDestroy(stream_);
  }
  ScopedStream(const ScopedStream&) = delete;
  ScopedStream& operator=(const ScopedStream&) = delete;
  Status open() {
    BRAID_ASSIGN_OR_RETURN(stream_, runtime_.streamCreate());
    return Status::success();
  }
  gpu::Stream get() const { return stream_; }

 private:
  gpu::Runtime& runtime_;
  gpu::Stream stream_ = nullptr;
};

}  // namespace

Status HostShare::mapPeers(gpu::Runtime& runtime, const Members& members,
                           const std::vector<ipc::RegionRecord>& records, gpu::Stream stream) {
  const auto [first, count] = members.hostBlock();
  std::vector<void*> bases(count, nullptr);
  for (int r = 0; r < count; ++r) {
    if (first + r == members.rank) {
      bases[r] = own_->data();
      continue;
    }
    Result<std::unique_ptr<ipc::MappedRegion>> mapped =
        ipc::MappedRegion::open(runtime, records[first + r], "");
    if (!mapped.ok()) {
      return mapped.status().withContext("mapping the device memory of rank " +
                                         std::to_string(first + r) + " of this host");
    }
    bases[r] = mapped.value()->data();
    peers_.push_back(std::move(mapped.value()));
  }
  BRAID_ASSIGN_OR_RETURN(table_,
                         ipc::OwnedRegion::create(runtime, ipc::FifoPlacement::kDeviceMemory, "",
                                                  imageOf(bases), stream));
  lsaSize_ = count;
  return Status::success();
}

Result<std::unique_ptr<HostShare>> HostShare::create(gpu::Runtime& runtime, const Members& members,
                                                     size_t bytes) {
  ScopedStream stream(runtime);
  BRAID_TRY(stream.open());
  std::unique_ptr<HostShare> share(new HostShare());
  // Every rank takes part in the exchange even when it cannot map (its record says so with no
  // bytes), so that no peer waits in the allGather for a rank that gave up.
  Result<std::unique_ptr<ipc::OwnedRegion>> own =
      ipc::OwnedRegion::create(runtime, ipc::FifoPlacement::kDeviceMemory, "",
                               std::vector<unsigned char>(bytes, 0), stream.get());
  std::vector<ipc::RegionRecord> records(members.nranks);
  if (own.ok()) {
    share->own_ = std::move(own.value());
    records[members.rank] = share->own_->record();
  }
  BRAID_TRY(members.bootstrap()->allGather(records.data(), sizeof(ipc::RegionRecord)));
  if (!own.ok()) return own.status();
  const auto [first, count] = members.hostBlock();
  for (int r = first; r < first + count; ++r) {
    if (records[r].bytes != bytes) {
      return invalidUsage("rank " + std::to_string(r) + " of this host could not share " +
                          std::to_string(bytes) + " bytes of device memory");
    }
  }
  BRAID_TRY(share->mapPeers(runtime, members, records, stream.get()));
  return share;
}

Comm::HostSharedMemory HostShare::view() const {
  Comm::HostSharedMemory v;
  v.handle = const_cast<HostShare*>(this);
  v.local = own_->data();
  v.deviceTable = static_cast<void* const*>(table_->data());
  v.ranks = lsaSize_;
  return v;
}

void HostShares::add(std::unique_ptr<HostShare> share) {
  std::lock_guard<std::mutex> lock(mutex_);
  HostShare* key = share.get();
  shares_[key] = std::move(share);
}

Status HostShares::remove(void* handle) {
  std::unique_ptr<HostShare> gone;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = shares_.find(handle);
    if (it == shares_.end()) {
      return invalidArgument("not memory this communicator shared (freed already, or another's)");
    }
    gone = std::move(it->second);
    shares_.erase(it);
  }
  return Status::success();
}

}  // namespace braid::comm

namespace braid {

bool Comm::canShareAcrossHost(std::string* why) const {
  std::string reason;
  const comm::Members& m = impl_->members;
  if (!impl_->gpu) {
    reason = "a host communicator has no device memory to share";
  } else if (m.hostCount() != 1) {
    reason = "the communicator spans " + std::to_string(m.hostCount()) +
             " hosts: braid shares device memory among the ranks of one host only";
  } else {
    for (int peer = 0; peer < m.nranks && reason.empty(); ++peer) {
      if (peer == m.rank ||
          impl_->gpu->placementFor(peer) == transport::cuda_ipc::FifoPlacement::kDeviceMemory) {
        continue;
      }
      reason = "the GPU of rank " + std::to_string(peer) +
               " cannot reach this rank's GPU memory by peer access (or BRAID_TRANSPORTS leaves "
               "out cuda_ipc)";
    }
  }
  if (why != nullptr) *why = reason;
  return reason.empty();
}

Result<Comm::HostSharedMemory> Comm::shareAcrossHost(size_t bytes) {
  std::string why;
  if (!canShareAcrossHost(&why)) return invalidUsage(why);
  if (bytes == 0) return invalidArgument("no bytes to share");
  const gpu::DeviceGuard keep = impl_->keepCallersDevice();
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<comm::HostShare> share,
                         comm::HostShare::create(impl_->gpu->runtime(), impl_->members, bytes));
  Comm::HostSharedMemory view = share->view();
  impl_->hostShares.add(std::move(share));
  return view;
}

Status Comm::unshareAcrossHost(void* handle) {
  const gpu::DeviceGuard keep = impl_->keepCallersDevice();
  return impl_->hostShares.remove(handle);
}

}  // namespace braid
