// The out-of-band network every communicator is built on.
//
// Each rank opens a listening TCP socket, connects to the root named in the
// unique id and sends it (rank, nranks, its listen address). The root answers
// every rank with the table of all addresses; then each rank connects to its
// ring successor and accepts its predecessor, and the root is no longer used.
// allGather and barrier run around that ring of sockets (nranks - 1 steps).
// Every wait has a deadline: a rank that never arrives gives kRemoteError
// naming the missing rank(s) by the deadline, never a hang.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/socket_greeting.h"
#include "bootstrap/unique_id.h"
#include "braid/status.h"

namespace braid::bootstrap {

class Bootstrap {
 public:
  /// Joins the communicator named by `id` as `rank` of `nranks`. Blocks until
  /// all ranks have joined or `timeoutMs` passed (<= 0: no deadline). Every wait, then and in
  /// allGather later, also ends once `*cancel` is true (the communicator's stop flag).
  static Result<std::unique_ptr<Bootstrap>> create(const UniqueId& id, int rank, int nranks,
                                                   int64_t timeoutMs,
                                                   const std::atomic<bool>* cancel = nullptr);
  /// The same from several ids (ncclCommInitRankScalable: the same ids in the same order on
  /// every rank, at most one per rank): each id's root meets one block of the ranks
  /// (root_blocks.h), and the communicator is the first id's (its magic and secret).
  static Result<std::unique_ptr<Bootstrap>> create(const std::vector<UniqueId>& ids, int rank,
                                                   int nranks, int64_t timeoutMs,
                                                   const std::atomic<bool>* cancel = nullptr);
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  /// The magic of the unique id, shared by all ranks (used to name shm segments).
  virtual uint64_t magic() const = 0;
  /// What a connection of this communicator proves for `purpose` (a ProofPurpose of
  /// bootstrap/unique_id.h): the unique id's secret.
  virtual sockets::Proof proof(uint32_t purpose) const = 0;
  /// The address this rank's bootstrap listens on (its port aside): the interface other hosts
  /// reach this one through (BRAID_SOCKET_IFNAME), which the socket transport listens on too.
  virtual sockaddr_storage localAddress() const = 0;

  /// `data` holds nranks slots of `bytesPerRank`; this rank's slot is filled
  /// in; on return every slot is.
  virtual Status allGather(void* data, size_t bytesPerRank) = 0;
  /// Returns when every rank has entered the barrier.
  virtual Status barrier() = 0;
  /// Makes every blocked or later call fail at once (ncclCommAbort).
  virtual void abort() = 0;
};

}  // namespace braid::bootstrap
