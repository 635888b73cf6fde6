// Faults the emulated HCA injects on request, so that tests see what a real NIC does when a
// link fails under a live peer: BRAID_IB_EMULATE_FAULT=KIND:N, read once per process, makes the
// process's Nth RDMA write (counted over every queue pair) fail as KIND says:
//
//   completion  the write completes with IBV_WC_RETRY_EXC_ERR and its QP goes to ERR, as when
//               the peer's NIC stops acknowledging (cable pulled, port down, switch lost)
//   post        ibv_post_send refuses the write with EIO, as a driver whose device went away
//
// Unset or malformed: no fault (a malformed value is reported once at WARN).
#pragma once

#include <cstdint>

namespace braid::transport::ib::emulated {

enum class WriteFault { kNone, kCompletion, kPost };

/// Counts one RDMA write posted by this process and says whether it is the one to fail.
WriteFault nextWriteFault();

}  // namespace braid::transport::ib::emulated
