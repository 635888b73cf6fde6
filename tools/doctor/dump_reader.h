// Reading flight recorder dumps back (the format of src/flight/flight_recorder.h): one file per
// rank, "key: value" lines, ending with "end".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "braid/status.h"

namespace braid::doctor {

struct DumpCall {
  uint64_t seq = 0;
  std::string state;  ///< running, enqueued, done, failed
  std::string what;   ///< "AllReduce of 1024 x float sum"
  std::string how;    ///< "ring/simple, 1 channel"
  double ms = 0;      ///< how long it took, or has run so far
  bool inFlight() const { return state == "running" || state == "enqueued"; }
};

struct DumpWait {
  uint64_t seq = 0;  ///< the call that waits
  int channel = 0;
  bool recv = true;  ///< false: waits for room to send
  int peer = -1;
  int instr = 0;
  int instrs = 0;
  double ms = 0;
};

struct RankDump {
  std::string source;  ///< the file it came from
  std::string comm;    ///< "0x..."
  int rank = -1;
  int nranks = 0;
  int pid = 0;
  std::string host;
  std::string name;  ///< the communicator's name (ncclConfig_t's commName); empty: none
  std::string memory;
  std::string reason;
  std::string time;
  std::vector<std::string> lost;
  std::vector<DumpCall> calls;
  std::vector<DumpWait> waits;
  std::vector<std::string> errors;  ///< "call 17 <the error>", as the dump words them

  /// The oldest call still in flight; else the last call when it failed (a timeout dumps after
  /// its call has returned); else null.
  const DumpCall* stuckCall() const;
  /// The rank a failed call's error says it waited for ("... waiting for rank 2"); -1 if none.
  int failedWaitingFor(uint64_t seq) const;
  const DumpCall* call(uint64_t seq) const;
};

/// Parses one dump; an error names the line that does not read.
Result<RankDump> parseDump(const std::string& text, const std::string& source);

}  // namespace braid::doctor
