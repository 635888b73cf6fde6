// Faults the socket transport injects on request, so that tests see what a connection that
// breaks under a live peer does (the verbs transport's twin is the emulated HCA's,
// emulation/ib/emulated_faults.h). BRAID_SOCKET_EMULATE_FAULT=reset:N, read once per process,
// makes the process's Nth slot sent over a socket FIFO (counted over every connection) break
// its connection just after the slot's word: the connection is shut down both ways and the send
// ends as a reset one does (ECONNRESET), while the receiving side sees the connection end in
// the middle of a slot.
//
// Unset or malformed: no fault (a malformed value is reported once at WARN). The fault's moment
// goes to BRAID_TEST_FAULT_TIME_FILE where a test names one (base/test_fault.h).
#pragma once

namespace braid::transport::socket {

/// Counts one slot sent by this process and says whether its connection is to break.
bool nextSlotBreaks();

}  // namespace braid::transport::socket
