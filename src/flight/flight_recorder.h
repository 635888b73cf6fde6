// The flight recorder: what a communicator's last calls were, and for a call in flight, what
// each of its channels waits for, kept so that a hang can be explained after the fact.
//
// Every communicator keeps the last BRAID_FLIGHT_RECORDER_ENTRIES calls (default 32) with their
// state (running, enqueued on a GPU stream, done, failed) and times; the executors note each
// wait that does not succeed at once in a WaitRecord per channel (host) or per block (kernels,
// in pinned memory), so the recorder can say "channel 0 waits 5000 ms for rank 2 (receive),
// instruction 7 of 12". Recording costs a few stores per call: a collective is kept as its
// fields and worded only when a dump asks, the ring's records are reused in place, and a
// call's record is found by its number without a search; waits are noted only on their slow
// path.
//
// A dump is plain text meant for a person, with one fact per line in a fixed "key: value" form
// that braid-doctor (tools/doctor) reads back. It is written to the log when a call times out,
// and, when BRAID_FLIGHT_RECORDER=<dir> asks for it, to <dir>/braid-flight-<comm>-rank<r>.txt
// on every error, on a lost peer and on SIGUSR1 (dump_on_signal.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/spin_mutex.h"
#include "braid/status.h"
#include "kernels/engine/launch.h"

namespace braid::flight {

enum class CallState : uint8_t { kRunning, kEnqueued, kDone, kFailed };
const char* callStateName(CallState state);

/// A collective as its caller made it, kept as fields and worded only when a dump or an error
/// needs the words (describe), so that recording a call costs a few stores and no allocation.
/// The names are static strings (collectiveName, dataTypeName, redOpName).
struct CollectiveFields {
  const char* collective = nullptr;  ///< "AllReduce"; null: not a collective
  bool variable = false;             ///< a variable-count call ("AllGatherV")
  size_t count = 0;
  const char* type = "";  ///< "float"
  const char* op = "";    ///< "sum"; empty when the collective does not reduce
  int userOp = -1;        ///< a premulsum operator's number, which then replaces `op`
  int root = -1;          ///< rooted collectives only
};

/// "AllReduce of 1048576 x float sum", "Broadcast of 16 x int8, root 2".
std::string describe(const CollectiveFields& call);

/// What runs a call, once chosen, kept as fields for the same reason.
struct PlanFields {
  const char* algorithm = nullptr;  ///< "ring"; null: not planned
  const char* protocol = "";        ///< "simple"
  uint32_t channels = 1;
};

/// "ring/simple, 2 channels".
std::string describe(const PlanFields& plan);

/// One call as the recorder keeps it.
struct CallRecord {
  uint64_t seq = 0;  ///< the call's number on the communicator, from 1
  /// "AllReduce of 1048576 x float sum": a collective's fields, or the words of another call.
  CollectiveFields collective;
  std::string what;
  /// "ring/simple, 2 channels": the plan's fields, or words given at begin.
  PlanFields plan;
  std::string how;
  CallState state = CallState::kRunning;
  int64_t startNs = 0;        ///< the monotonic clock as of its last tick (flight_recorder.cc)
  int64_t endNs = 0;          ///< done or failed; the same clock
  std::string error;          ///< failed: the error's first words
  uint64_t launch = 0;        ///< GPU: the launch it went in (EngineArgs::launchSeq)
  uint32_t callInLaunch = 0;  ///< GPU: its index among the launch's calls
  /// The instructions of each of its channels, for "instruction 7 of 12" (host and GPU).
  std::vector<uint32_t> channelInstrs;
  uint32_t firstBlock = 0;  ///< GPU: the block of its channel 0
};

/// Who the dump is of.
struct Identity {
  uint64_t comm = 0;  ///< the communicator (its bootstrap magic), the same on every rank
  int rank = 0;
  int nranks = 1;
  int pid = 0;
  std::string host;
  bool gpu = false;
  std::string name;  ///< the communicator's name (ncclConfig_t's commName); empty: none
};

class FlightRecorder {
 public:
  /// `capacity` calls are kept; `dumpDir` empty: no files (the log still gets timeouts).
  FlightRecorder(Identity identity, size_t capacity, std::string dumpDir);

  /// A call begins; returns its number. `channelInstrs` may be empty (point-to-point).
  uint64_t begin(const std::string& what, const std::string& how,
                 const std::vector<uint32_t>& channelInstrs);
  /// A collective begins; returns its number. Allocates nothing once the ring has filled.
  /// A collective's record opened with its plan at once (one lock instead of two), for a call
  /// whose plan is known before it can wait for anything.
  uint64_t begin(const CollectiveFields& call, const PlanFields& plan,
                 const std::vector<uint32_t>& channelInstrs);
  uint64_t begin(const CollectiveFields& call);
  /// What runs the call, once chosen, and each channel's instructions (empty: one channel that
  /// notes no instructions, as the one-shot board).
  void planned(uint64_t seq, const PlanFields& plan, const std::vector<uint32_t>& channelInstrs);
  /// The call went on a GPU stream in launch `launch` as call `index`, from block `firstBlock`.
  void enqueued(uint64_t seq, uint64_t launch, uint32_t index, uint32_t firstBlock);
  /// The call returned: done, or failed with `status`.
  void end(uint64_t seq, const Status& status);

  /// Where a host communicator's executor notes its channels' waits (64 channels at most).
  kernels::engine::WaitRecord* hostWaits() { return hostWaits_.data(); }
  /// A GPU communicator's block records (kMaxWaitRecords, pinned and mapped; not owned).
  void attachGpuWaits(const kernels::engine::WaitRecord* records) { gpuWaits_ = records; }

  /// The dump: identity, why, the lost peers given, the calls oldest first, the waits.
  std::string render(const std::string& reason, const std::vector<std::string>& lost) const;
  /// Writes the dump to this rank's file in the dump directory (nothing without one); returns
  /// the path written.
  Result<std::string> dump(const std::string& reason, const std::vector<std::string>& lost) const;
  const std::string& dumpDir() const { return dumpDir_; }
  const Identity& identity() const { return identity_; }

 private:
  /// The record of a new call that started at `startNs`, reset, with the mutex held; returns it
  /// with its number set.
  CallRecord& open(int64_t startNs);
  CallRecord* find(uint64_t seq);
  void renderWaits(std::string& out, const CallRecord& call, int64_t nowNs) const;

  const Identity identity_;
  const size_t capacity_;
  const std::string dumpDir_;
  /// Taken three times by every call, by a dump rarely: a spin mutex (base/spin_mutex.h).
  mutable SpinMutex mutex_;
  std::vector<CallRecord> calls_;  ///< a ring of capacity_ entries
  size_t next_ = 0;                ///< where the next call goes in calls_
  uint64_t seq_ = 0;
  std::vector<kernels::engine::WaitRecord> hostWaits_;
  const kernels::engine::WaitRecord* gpuWaits_ = nullptr;
};

}  // namespace braid::flight
