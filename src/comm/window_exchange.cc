// How the ranks of a window's registration map each other's buffers: see window_exchange.h.
//
// Between processes, every rank first connects to the listener of every rank in another process
// (a connect completes once the listener holds it, before any accept), then accepts as many
// connections and sends its handle down each, then receives the handles on its own
// connections: sends never wait on a receive, so no order of the ranks can deadlock them. Every
// wait is bounded by the deadline (BRAID_TIMEOUT_MS).
#include "comm/window_exchange.h"

#include <unistd.h>

#include <cstring>
#include <string>

namespace braid::comm {
namespace {

/// Closes a descriptor when it goes.
struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

/// This rank's handle to every rank of another process that connects to `listener`.
Status handOut(gpu::Runtime& rt, int ranks, void* allocation, int rank,
               const sockets::FdListener& listener, const Deadline& deadline) {
  BRAID_ASSIGN_OR_RETURN(const int exported, rt.vmmExport(allocation));
  FdCloser handle{exported};
  for (int i = 0; i < ranks; ++i) {
    BRAID_ASSIGN_OR_RETURN(sockets::Socket peer, listener.accept(deadline));
    BRAID_TRY(sockets::sendFd(peer, handle.fd, static_cast<uint64_t>(rank)));
  }
  return Status::success();
}

}  // namespace

bool otherProcesses(const Members& members) {
  for (const PeerInfo& p : members.peers()) {
    if (p.pid != members.peers()[members.rank].pid) return true;
  }
  return false;
}

Result<PeerBuffers> mapPeerBuffers(gpu::Runtime& rt, const Members& members,
                                   const std::vector<WindowOffer>& offers, void* allocation,
                                   const sockets::FdListener* listener, const Deadline& deadline) {
  const int n = members.nranks;
  const int32_t myPid = offers[members.rank].pid;
  PeerBuffers out;
  out.bases.assign(n, nullptr);
  std::vector<sockets::Socket> toPeer(n);
  int otherRanks = 0;
  for (int r = 0; r < n; ++r) {
    if (offers[r].pid == myPid) {
      out.bases[r] = reinterpret_cast<char*>(offers[r].buffer);
      continue;
    }
    ++otherRanks;
    const std::string name(offers[r].listener,
                           strnlen(offers[r].listener, sizeof(offers[r].listener)));
    Result<sockets::Socket> s = sockets::connectFdListener(name);
    if (!s.ok()) return s.status().withContext("reaching rank " + std::to_string(r) + "'s process");
    toPeer[r] = std::move(s).value();
  }
  if (otherRanks == 0) return out;
  if (listener == nullptr) return internalError("windows: no listener for the other processes");
  BRAID_TRY(handOut(rt, otherRanks, allocation, members.rank, *listener, deadline));
  Status failed = Status::success();
  for (int r = 0; r < n && failed.ok(); ++r) {
    if (offers[r].pid == myPid) continue;
    Result<sockets::ReceivedFd> got = sockets::recvFd(toPeer[r], deadline);
    if (!got.ok()) {
      failed = got.status().withContext("rank " + std::to_string(r) + "'s handle");
      break;
    }
    FdCloser handle{got.value().fd};
    if (got.value().word != static_cast<uint64_t>(r)) {
      failed =
          internalError("windows: rank " + std::to_string(r) + "'s connection handed out rank " +
                        std::to_string(got.value().word) + "'s handle");
      break;
    }
    Result<void*> mapped = rt.vmmImport(handle.fd, offers[r].allocBytes);
    if (!mapped.ok()) {
      failed = mapped.status().withContext("mapping rank " + std::to_string(r) + "'s buffer");
      break;
    }
    out.mappings.push_back(mapped.value());
    out.bases[r] = static_cast<char*>(mapped.value()) + offers[r].offset;
  }
  if (!failed.ok()) {
    (void)unmapPeerBuffers(rt, out.mappings);
    return failed;
  }
  return out;
}

Status unmapPeerBuffers(gpu::Runtime& rt, const std::vector<void*>& mappings) {
  Status first = Status::success();
  for (void* m : mappings) {
    Status s = rt.vmmUnmap(m);
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

}  // namespace braid::comm
