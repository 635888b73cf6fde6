// The state behind braid::Comm (include/braid/comm.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "algo/schedule.h"
#include "bootstrap/bootstrap.h"
#include "braid/comm.h"
#include "config.h"
#include "exec/host_executor.h"
#include "kernels/host_reduce.h"
#include "transport/connection.h"

namespace braid {

/// What every rank tells the others at creation (bootstrap allGather).
struct PeerInfo {
  int32_t rank;
  int32_t pid;
  uint64_t hostId;
  uint64_t nonce;  ///< random; rank 0's names this communicator's shm segments
  int32_t cudaDevice;
  int32_t pad;
};

/// One ring channel: the FIFO from the ring predecessor and the one to the
/// successor.
struct RingChannel {
  std::unique_ptr<transport::RecvEnd> fromPrev;
  std::unique_ptr<transport::SendEnd> toNext;
};

// Counts a call as running for Comm::abort() (declared first in a call, so
// it is released last, after the call's final write to the communicator).
class ActiveCall {
 public:
  explicit ActiveCall(std::atomic<int>& count) : count_(count) { count_.fetch_add(1); }
  ~ActiveCall() { count_.fetch_sub(1); }
  ActiveCall(const ActiveCall&) = delete;
  ActiveCall& operator=(const ActiveCall&) = delete;

 private:
  std::atomic<int>& count_;
};

/// The checks every communicator call shares, with the same messages.
inline Status checkDataType(DataType type) {
  const int t = static_cast<int>(type);
  if (t < 0 || t >= kNumDataTypes) return invalidArgument("unknown datatype " + std::to_string(t));
  return Status::success();
}

/// `what` (a root, a peer) must name a rank of a communicator of `nranks`.
inline Status checkRank(int value, int nranks, const char* what) {
  if (value < 0 || value >= nranks) {
    return invalidArgument(std::string(what) + " " + std::to_string(value) + " is outside [0, " +
                           std::to_string(nranks) + ")");
  }
  return Status::success();
}

/// A premulsum operator made by ncclRedOpCreatePreMulSum.
struct UserOp {
  DataType type = DataType::kFloat32;
  bool byPointer = false;                  ///< read the scalar at each call (ncclScalarDevice)
  const void* pointer = nullptr;           ///< where, when byPointer
  alignas(8) unsigned char value[8] = {};  ///< the scalar, when given by value
};

class Comm::Impl {
 public:
  Config config;
  int rank = 0;
  int nranks = 1;
  std::unique_ptr<bootstrap::Bootstrap> bootstrap;
  std::vector<PeerInfo> peers;
  std::vector<int> ring;  ///< ring order of ranks
  std::vector<RingChannel> channels;
  std::vector<exec::ChannelConnections> connections;  ///< views of `channels`
  size_t slotBytes = 0;
  uint32_t spinNs = 0;
  std::atomic<bool> aborted{false};
  /// Calls now running on this communicator; abort() waits for them to
  /// leave before the caller may free the communicator.
  std::atomic<int> activeCalls{0};
  bool finalized = false;
  /// Set by the first failed collective: the FIFOs are then mid-message and
  /// the communicator cannot be used again (as with NCCL's async errors).
  std::optional<Status> broken;

  /// Schedules built recently, reused while calls repeat (the common case).
  struct CachedSchedule {
    Collective collective;
    size_t count = 0;
    size_t elemBytes = 0;
    int root = -1;
    std::vector<size_t> blockCounts;  ///< variable-count calls only (RingCall)
    std::vector<size_t> blockOffsets;
    algo::Schedule schedule;
  };
  std::vector<CachedSchedule> scheduleCache;

  /// ncclRedOpCreatePreMulSum ops, by index (RedOp value - kFirstUserOp);
  /// empty slots are destroyed ops.
  std::vector<std::optional<UserOp>> userOps;

  /// Point-to-point FIFOs, made the first time a pair needs them: index by
  /// peer rank. The receiver creates its end, the sender opens it when it
  /// appears (exec::P2pLinks in comm_p2p.cc).
  std::vector<std::unique_ptr<transport::RecvEnd>> p2pRecv;
  std::vector<std::unique_ptr<transport::SendEnd>> p2pSend;
  uint64_t p2pNonce = 0;

  Status connectRing();
  /// One ring collective, as the public methods describe it.
  struct RingCall {
    Collective collective;
    const void* input;
    void* output;
    size_t count;
    DataType type;
    RedOp op;
    int root;
    /// Variable-count reduce-scatter and all-gather: nranks block counts and
    /// offsets (algo::RingParams::blockCounts); nullptr for the uniform
    /// layout. `count` is then this rank's own block.
    const size_t* blockCounts = nullptr;
    const size_t* blockOffsets = nullptr;
  };
  /// Refuses work on a finalized, aborted or broken communicator.
  Status checkUsable() const {
    if (finalized) return invalidUsage("communicator was finalized");
    if (aborted.load()) return invalidUsage("communicator was aborted");
    if (broken) return broken->withContext("communicator unusable after an earlier error");
    return Status::success();
  }
  Status runRing(const RingCall& call);
  Result<const algo::Schedule*> ringSchedule(const RingCall& call);
  Result<kernels::HostOp> hostOpFor(DataType type, RedOp op);
  transport::WaitContext waitContext() const;
};

}  // namespace braid
