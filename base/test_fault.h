// Points where a test can make this process die, to check what its peers see when a rank is
// lost at an exact moment of communicator setup (tests/api/setup_kill_test.cc), and the record of
// when a fault a test asked for was injected.
//
// BRAID_TEST_DIE_AT=<point> makes the process SIGKILL itself when it reaches the point of that
// name. The variable is read each time a point is reached, so a test may set it after
// ncclCommInitRank to reach the lazy connections of a first collective. The points lie on setup
// paths only (never a collective's inner loop); unset, as it is for every user, a point costs one
// getenv. The names, and where they are:
//
//   bootstrap.joined   Comm::create, the bootstrap ring made, the peer watch not started
//   watch.started      Comm::create, the watch running, nothing else exchanged
//   greeting.before    a socket connection to a peer made, its greeting not sent
//   greeting.sent      the greeting sent, the transport's own exchange (a verbs QP's) not begun
//   greeting.taken     the accepting side: a peer's greeting taken for a FIFO, nothing answered
//
// BRAID_TEST_FAULT_TIME_FILE=<file>: every fault injected on a test's request (a point above,
// BRAID_IB_EMULATE_FAULT, BRAID_SOCKET_EMULATE_FAULT) appends one line to the file at the moment
// it acts, `<CLOCK_REALTIME ns> <pid> <what>`, so that a test measures how long the ranks took
// to see the fault from the fault itself. Only the injectors call it, after they decided to act.
#pragma once

namespace braid::test_fault {

/// Dies with SIGKILL when BRAID_TEST_DIE_AT names `point`.
void reached(const char* point);

/// Appends the moment of an injected fault, and `what` it is (one word), to
/// BRAID_TEST_FAULT_TIME_FILE; nothing when it is unset or cannot be written.
void injected(const char* what);

}  // namespace braid::test_fault
