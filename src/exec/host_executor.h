// The HostExecutor runs a Program on host memory with the calling thread:
// the engine's interpreter (kernels/engine/interpreter.h) with the shm
// transport's ends as its ports and the vectorized host loops as its loops.
#pragma once

#include <vector>

#include "base/trace.h"
#include "braid/status.h"
#include "exec/program.h"
#include "kernels/engine/launch.h"
#include "kernels/host_reduce.h"
#include "transport/connection.h"

namespace braid::exec {

/// The transport ends behind one channel's ports: recv[i] is receiving port
/// i (ChannelProgram::recvPeers[i]), send[i] sending port i.
struct ChannelConnections {
  std::vector<transport::RecvEnd*> recv;
  std::vector<transport::SendEnd*> send;
};

struct HostCall {
  const void* input = nullptr;
  void* output = nullptr;
  size_t elemBytes = 0;
  kernels::HostOp reduce;            ///< needed when the program reduces or finishes
  trace::Recorder* trace = nullptr;  ///< BRAID_TRACE: an event per step when set
  /// One per channel: where a wait that does not succeed at once is noted for the flight
  /// recorder (src/flight); null: nowhere.
  kernels::engine::WaitRecord* waits = nullptr;
  /// Slices of kStreamMinBytes and more go into the outgoing slots with non-temporal stores
  /// (Links::streamSlots): the reader then loads them from memory instead of from this core's
  /// cache, which is far faster where the two cores share no cache.
  bool streamSlots = false;
};

/// The smallest slice streamSlots streams: below it the reader would wait for memory where a
/// cache would serve it (64 KiB measured level with plain stores, 2026-12-06).
inline constexpr size_t kStreamMinBytes = 64 * 1024;

/// Runs every instruction of every channel of `program`. Channels run one
/// after another: each is deadlock-free on its own and all ranks take them
/// in the same order, so this is correct; it is not yet parallel.
Status runOnHost(const Program& program, const HostCall& call,
                 const std::vector<ChannelConnections>& connections,
                 const transport::WaitContext& wait);

}  // namespace braid::exec
