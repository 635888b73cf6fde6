// The soak's communicators. Algorithm, protocol, channels, FIFO size, determinism and call
// checking are fixed per communicator when it is made (braid reads BRAID_* into its Config at
// ncclCommInitRank), so the soak makes one communicator per "flavour" up front, each with its
// variables set around its creation, and each call picks one. Host flavours run on host memory
// (braidCommInitRankHost); GPU flavours on the device of braid's seam, rank r on device
// r % deviceCount(), each with a stream of its own.
//
// A control communicator (host memory, default settings) comes first, from the id the launcher
// hands out; rank 0 makes the other ids and broadcasts them on it, so that the soak needs one
// id from outside however many communicators it makes (mpirun gives only BRAID_COMM_ID). The
// soak also agrees on when to stop over it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nccl.h"
#include "soak/call_run.h"
#include "soak/options.h"

namespace braid::soak {

struct Flavour {
  std::string name;  ///< "ring/ll", "gpu tree/simple 2ch 64K"
  bool gpu = false;
  std::vector<std::pair<const char*, const char*>> env;  ///< set while it is made
};

/// The flavours of a run on `memory`: the host ones, the GPU ones, or both.
std::vector<Flavour> flavoursFor(Memory memory);

class Communicators {
 public:
  Communicators() = default;
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  /// Makes the control communicator from `id`, then one per flavour; on failure says why.
  bool create(const std::vector<Flavour>& flavours, const ncclUniqueId& id, int rank, int nranks,
              std::string* error);
  ncclComm_t control() const { return control_; }
  const Target& target(int flavour) const { return targets_[flavour]; }
  const Flavour& flavour(int f) const { return flavours_[f]; }
  /// Ends every communicator without waiting for peers, after an error.
  void abort();

 private:
  std::vector<Flavour> flavours_;
  std::vector<Target> targets_;
  ncclComm_t control_ = nullptr;
  bool aborted_ = false;
};

}  // namespace braid::soak
