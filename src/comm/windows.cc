// A GPU communicator's symmetric memory windows: see windows.h.
#include "comm/windows.h"

#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>

#include "base/log.h"
#include "comm/gpu_side.h"
#include "comm/window_exchange.h"

namespace braid::comm {

namespace {

/// Where the table starts in a window's device memory, after the struct.
constexpr size_t kTableOffset = (sizeof(ncclWindow_vidmem) + 63) / 64 * 64;

/// Every live window of the process, by handle: what the pointer queries, which get only the
/// handle, look up. Made once and never destroyed, so that a communicator destroyed at exit
/// still finds it.
struct Directory {
  std::mutex mutex;
  std::map<const void*, WindowInfo> live;
};
Directory& directory() {
  static auto* d = new Directory();
  return *d;
}

WindowInfo infoOf(const ncclWindow_vidmem& host, const std::vector<char*>& bases) {
  WindowInfo info;
  info.worldRank = host.worldRank;
  info.worldSize = host.worldSize;
  info.lsaFirstWorldRank = host.lsaFirstWorldRank;
  info.bytes = host.size;
  info.lsaBases.assign(bases.begin(), bases.end());
  return info;
}

/// Why the offers of a registration leave this communicator without windows; empty where every
/// GPU reaches every other.
std::string unreachedBy(const std::vector<WindowOffer>& offers) {
  for (size_t r = 0; r < offers.size(); ++r) {
    if (offers[r].reached == 0) {
      return "the GPU of some rank of this host cannot reach rank " + std::to_string(r) +
             "'s GPU by peer access";
    }
  }
  return {};
}

/// The failure of a registration whose buffer of rank `r` is not shareable memory.
Status notShareable(int r, int self, const Status& why) {
  const std::string whose =
      r == self ? "this rank's buffer" : "rank " + std::to_string(r) + "'s buffer";
  return Status(ErrorCode::kCudaError,
                "ncclCommWindowRegister: " + whose +
                    " is not shareable device memory (CUDA virtual memory with a POSIX file "
                    "descriptor handle, as ncclMemAlloc makes it): cudaMalloc'd memory cannot be "
                    "mapped by the other ranks, and NCCL 2.30.7 fails the same way "
                    "(cuMemRetainAllocationHandle refuses it)" +
                    (r == self && !why.ok() ? " [" + why.message() + "]" : std::string()));
}

}  // namespace

Windows::~Windows() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [handle, w] : windows_) {
    Status s = release(*w);
    if (!s.ok()) BRAID_WARN("windows: releasing a window at destruction: %s", s.message().c_str());
  }
  windows_.clear();
}

std::string Windows::declinedBefore() const {
  if (members_.spansHosts()) {
    return "the communicator spans " + std::to_string(members_.hostCount()) +
           " hosts, so its load/store team is not the whole communicator";
  }
  return {};
}

bool Windows::declines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return declined_ || !declinedBefore().empty();
}

namespace {

void sayDeclined(const std::string& why) {
  BRAID_INFO(
      "windows: ncclCommWindowRegister makes no window (NULL), as NCCL's without "
      "symmetric support: %s",
      why.c_str());
}

}  // namespace

WindowOffer Windows::offer(void* buffer, size_t bytes, int flags, Status* unshareable) const {
  WindowOffer mine;
  mine.pid = static_cast<int32_t>(getpid());
  mine.reached = gpu_.reachedByEveryPeer() ? 1 : 0;
  mine.flags = flags;
  mine.buffer = reinterpret_cast<uintptr_t>(buffer);
  mine.bytes = bytes;
  const Result<gpu::VmmRange> range = gpu_.runtime().vmmRange(buffer, bytes);
  if (range.ok()) {
    mine.shareable = 1;
    mine.allocBytes = range.value().bytes;
    mine.offset = mine.buffer - reinterpret_cast<uintptr_t>(range.value().base);
  } else {
    *unshareable = range.status();
  }
  return mine;
}

Result<ncclWindow_vidmem*> Windows::add(void* buffer, size_t bytes, int flags) {
  const std::string before = declinedBefore();
  if (!before.empty() || declines()) {
    sayDeclined(before.empty() ? "its GPUs do not all reach each other by peer access" : before);
    return static_cast<ncclWindow_vidmem*>(nullptr);
  }
  gpu::Runtime& rt = gpu_.runtime();
  gpu::RelaxedCapture relaxed(rt);
  Status unshareable = Status::success();
  WindowOffer mine = offer(buffer, bytes, flags, &unshareable);
  std::optional<sockets::FdListener> listener;
  if (otherProcesses(members_)) {
    BRAID_ASSIGN_OR_RETURN(sockets::FdListener l, sockets::FdListener::open(members_.nranks));
    snprintf(mine.listener, sizeof(mine.listener), "%s", l.name().c_str());
    listener.emplace(std::move(l));
  }
  std::vector<WindowOffer> offers(members_.nranks);
  offers[members_.rank] = mine;
  BRAID_TRY(members_.bootstrap()
                ->allGather(offers.data(), sizeof(WindowOffer))
                .withContext("ncclCommWindowRegister: telling the ranks about the buffers"));
  const std::string unreached = unreachedBy(offers);
  if (!unreached.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    declined_ = true;
    sayDeclined(unreached);
    return static_cast<ncclWindow_vidmem*>(nullptr);
  }
  for (int r = 0; r < members_.nranks; ++r) {
    if (offers[r].shareable == 0) return notShareable(r, members_.rank, unshareable);
  }
  void* allocation = static_cast<char*>(buffer) - mine.offset;
  Result<PeerBuffers> mapped =
      mapPeerBuffers(rt, members_, offers, allocation, listener ? &*listener : nullptr,
                     Deadline::afterMs(config_.timeoutMs));
  if (!mapped.ok()) return agree(mapped.status());
  PeerBuffers peers = std::move(mapped).value();
  auto w = std::make_unique<Window>();
  w->lsaBases = std::move(peers.bases);
  w->mappings = std::move(peers.mappings);
  w->host = hostStruct(buffer, bytes, flags);
  BRAID_ASSIGN_OR_RETURN(ncclWindow_vidmem * handle, keep(std::move(w)));
  BRAID_INFO("windows: rank %d registered %zu bytes at %p as window %p of %d ranks (%s)",
             members_.rank, bytes, buffer, static_cast<void*>(handle), members_.nranks,
             listener ? "handles passed between processes" : "ranks of one process");
  return handle;
}

ncclWindow_vidmem Windows::hostStruct(void* buffer, size_t bytes, int flags) const {
  ncclWindow_vidmem host{};
  host.magic = BRAID_WINDOW_MAGIC;
  host.winFlags = flags;
  host.worldRank = members_.rank;
  host.worldSize = members_.nranks;
  // One host: the load/store team is the whole communicator.
  host.lsaRank = members_.rank;
  host.lsaSize = members_.nranks;
  host.lsaFirstWorldRank = 0;
  host.size = bytes;
  host.localBase = static_cast<char*>(buffer);
  return host;
}

Status Windows::agree(const Status& mine) const {
  std::vector<int32_t> made(members_.nranks, 0);
  made[members_.rank] = mine.ok() ? 1 : 0;
  const Status told = members_.bootstrap()->allGather(made.data(), sizeof(int32_t));
  BRAID_TRY(mine);  // after telling the others
  BRAID_TRY(told.withContext("ncclCommWindowRegister"));
  for (int r = 0; r < members_.nranks; ++r) {
    if (made[r] == 0) {
      return remoteError("ncclCommWindowRegister: rank " + std::to_string(r) +
                         " could not make its window (its log says why)");
    }
  }
  return Status::success();
}

Result<ncclWindow_vidmem*> Windows::keep(std::unique_ptr<Window> w) {
  Status published = publish(*w);
  published = agree(published);
  if (!published.ok()) {
    (void)release(*w);
    return published;
  }
  ncclWindow_vidmem* handle = w->device;
  {
    std::lock_guard<std::mutex> lock(directory().mutex);
    directory().live[handle] = infoOf(w->host, w->lsaBases);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  windows_.emplace(handle, std::move(w));
  return handle;
}

Status Windows::publish(Window& w) {
  gpu::Runtime& rt = gpu_.runtime();
  const size_t tableBytes = w.lsaBases.size() * sizeof(char*);
  BRAID_ASSIGN_OR_RETURN(void* memory, rt.deviceAlloc(kTableOffset + tableBytes));
  w.device = static_cast<ncclWindow_vidmem*>(memory);
  char** table = reinterpret_cast<char**>(static_cast<char*>(memory) + kTableOffset);
  w.host.lsaBases = table;
  BRAID_ASSIGN_OR_RETURN(gpu::Stream stream, rt.streamCreate());
  Status s = rt.copy(table, w.lsaBases.data(), tableBytes, stream);
  if (s.ok()) s = rt.copy(memory, &w.host, sizeof(w.host), stream);
  if (s.ok()) s = rt.streamSynchronize(stream);
  (void)rt.streamDestroy(stream);
  return s;
}

Status Windows::release(Window& w) {
  gpu::Runtime& rt = gpu_.runtime();
  Status first = unmapPeerBuffers(rt, w.mappings);
  w.mappings.clear();
  if (w.device != nullptr) {
    {
      std::lock_guard<std::mutex> lock(directory().mutex);
      directory().live.erase(w.device);
    }
    // A kernel still holding the handle finds the magic gone.
    Result<gpu::Stream> stream = rt.streamCreate();
    if (stream.ok()) {
      Status cleared = rt.fill(&w.device->magic, 0, sizeof(w.device->magic), stream.value());
      if (cleared.ok()) cleared = rt.streamSynchronize(stream.value());
      (void)rt.streamDestroy(stream.value());
      if (first.ok() && !cleared.ok()) first = cleared;
    }
    Status freed = rt.deviceFree(w.device);
    if (first.ok() && !freed.ok()) first = freed;
    w.device = nullptr;
  }
  return first;
}

Status Windows::remove(const void* handle) {
  std::unique_ptr<Window> w;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = windows_.find(handle);
    if (it == windows_.end()) {
      return invalidArgument(
          "ncclCommWindowDeregister: the window is not a live window of this communicator "
          "(never registered here, or deregistered already)");
    }
    w = std::move(it->second);
    windows_.erase(it);
  }
  gpu::RelaxedCapture relaxed(gpu_.runtime());
  return release(*w).withContext("ncclCommWindowDeregister");
}

Result<void*> Windows::userPointer(const void* handle) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = windows_.find(handle);
  if (it == windows_.end()) {
    return invalidArgument(
        "ncclWinGetUserPtr: the window is not a live window of this communicator (never "
        "registered here, or deregistered already)");
  }
  return static_cast<void*>(it->second->host.localBase);
}

std::optional<WindowedBuffer> Windows::find(const void* p, size_t bytes) const {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [handle, w] : windows_) {
    const auto base = reinterpret_cast<uintptr_t>(w->host.localBase);
    if (at >= base && at - base < w->host.size && bytes <= w->host.size - (at - base)) {
      return WindowedBuffer{&w->host, w->device, at - base};
    }
  }
  return std::nullopt;
}

Result<WindowInfo> lookupWindow(const void* handle) {
  if (handle == nullptr) return invalidArgument("the window is NULL");
  std::lock_guard<std::mutex> lock(directory().mutex);
  auto it = directory().live.find(handle);
  if (it == directory().live.end()) {
    return invalidArgument(
        "the window is not a live window of braid (never registered, or deregistered already)");
  }
  return it->second;
}

}  // namespace braid::comm
