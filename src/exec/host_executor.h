// The HostExecutor runs a Schedule on host memory with the calling thread.
#pragma once

#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"
#include "kernels/host_reduce.h"
#include "transport/connection.h"
#include "util/trace.h"

namespace braid::exec {

/// The connections one channel of a rank uses, indexed by peer rank
/// (nullptr where the channel has none with that peer).
struct ChannelConnections {
  std::vector<transport::SendEnd*> send;
  std::vector<transport::RecvEnd*> recv;
};

struct HostCall {
  const void* input = nullptr;
  void* output = nullptr;
  size_t elemBytes = 0;
  kernels::HostOp reduce;            ///< needed when the schedule reduces; finish is the caller's
  trace::Recorder* trace = nullptr;  ///< BRAID_TRACE: an event per step when set
};

/// Runs every step of every channel of `schedule`. Channels run one after
/// another: each is deadlock-free on its own and all ranks take them in the
/// same order, so this is correct; it is not yet parallel.
Status runOnHost(const algo::Schedule& schedule, const HostCall& call,
                 const std::vector<ChannelConnections>& connections,
                 const transport::WaitContext& wait);

}  // namespace braid::exec
