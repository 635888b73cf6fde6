// One call of a step on one rank: its buffers, the call itself and the check of every byte it
// may and may not have written.
//
// The ten collectives of the collective matrix run through its CaseRun (tests/api/
// matrix_cases.h: guard regions, untouched inputs, exact or bounded references); braid's
// v-collectives run through VariableRun (variable_call.h). Either way the rank derives every
// rank's inputs from the call's seed, so it checks its outputs without hearing from its peers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "braid_ext.h"
#include "nccl.h"
#include "soak/plan.h"

namespace braid::soak {

/// Where a rank's call runs: its communicator and, on a GPU communicator, the device seam and
/// the communicator's stream (device == nullptr: a host communicator).
struct Target {
  ncclComm_t comm = nullptr;
  const braidDeviceApi* device = nullptr;
  cudaStream_t stream = nullptr;
};

/// The outcome of a check: right, or what was wrong (the first few bytes or elements).
struct Verdict {
  bool right = true;
  std::string detail;
};

class CallRun {
 public:
  virtual ~CallRun() = default;
  /// Copies the buffers to the device (GPU targets) and makes a premulsum operator.
  virtual ncclResult_t prepare() = 0;
  /// Issues the call (inside the step's group, if it has one).
  virtual ncclResult_t issue() = 0;
  /// Waits for the stream, copies the buffers back and destroys the operator.
  virtual ncclResult_t finish() = 0;
  virtual Verdict check() = 0;
  /// Flips one byte of this rank's buffers (guards included), chosen by `where`, after the
  /// call: --corrupt-every's proof that the check sees what it should.
  virtual void corrupt(uint64_t where) = 0;
  /// The largest buffer this rank passes, in bytes (what nccl-tests calls the size).
  virtual size_t bytes() const = 0;
};

/// The run of `call` on `rank` of `nranks`.
std::unique_ptr<CallRun> makeCallRun(const PlannedCall& call, int rank, int nranks,
                                     const Target& target);

}  // namespace braid::soak
