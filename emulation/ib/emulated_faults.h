// Faults the emulated HCA injects on request, so that tests see what a real NIC does when a
// link fails under a live peer: BRAID_IB_EMULATE_FAULT=KIND:N, read once per process, makes the
// process's Nth RDMA write (counted over every queue pair) fail as KIND says:
//
//   completion  the write completes with IBV_WC_RETRY_EXC_ERR and its QP goes to ERR, as when
//               the peer's NIC stops acknowledging (cable pulled, port down, switch lost)
//   post        ibv_post_send refuses the write with EIO, as a driver whose device went away
//   port_down   the port of the write's QP goes down (emulated_async_events.h): every context of
//               the device gets IBV_EVENT_PORT_ERR, and the port carries nothing more, so the
//               write and every later one wait for the transport timeout, as on a real fabric
//
// Unset or malformed: no fault (a malformed value is reported once at WARN). The fault's moment
// goes to BRAID_TEST_FAULT_TIME_FILE where a test names one (base/test_fault.h).
#pragma once

#include <cstdint>

namespace braid::transport::ib::emulated {

enum class WriteFault { kNone, kCompletion, kPost, kPortDown };

/// Counts one RDMA write posted by this process and says whether it is the one to fail.
WriteFault nextWriteFault();

}  // namespace braid::transport::ib::emulated
