// Passing file descriptors between the processes of one host: a listening Unix socket in the
// abstract namespace (no file to clean up, gone with its process), and one descriptor with a
// word beside it per message (SCM_RIGHTS), as NCCL passes CUDA's shareable memory handles. The
// receiver gets a new descriptor of the same open file, in its own numbering: how a handle that
// is a descriptor means something in another process (docs/symmetric-memory.md).
//
// Every wait is a poll() bounded by the deadline.
#pragma once

#include <cstdint>
#include <string>

#include "base/deadline.h"
#include "base/socket.h"
#include "braid/status.h"

namespace braid::sockets {

/// A listening Unix stream socket with a name of this process ("braid-fd-<pid>-<n>").
class FdListener {
 public:
  /// Listens, holding up to `backlog` connections not yet accepted (each connect completes
  /// then, before the accept).
  static Result<FdListener> open(int backlog);
  const std::string& name() const { return name_; }
  /// The next connection, within the deadline.
  Result<Socket> accept(const Deadline& deadline) const;

 private:
  FdListener(Socket socket, std::string name)
      : socket_(std::move(socket)), name_(std::move(name)) {}
  Socket socket_;
  std::string name_;
};

/// Connects to the listener named `name` (FdListener::name, of this host).
Result<Socket> connectFdListener(const std::string& name);

/// Sends `fd` (which stays the caller's) and `word` over `socket`.
Status sendFd(const Socket& socket, int fd, uint64_t word);

/// A descriptor and the word sent with it.
struct ReceivedFd {
  int fd = -1;  ///< the caller's to close
  uint64_t word = 0;
};
/// Receives what sendFd sent, within the deadline.
Result<ReceivedFd> recvFd(const Socket& socket, const Deadline& deadline);

}  // namespace braid::sockets
