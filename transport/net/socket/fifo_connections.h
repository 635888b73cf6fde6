// How many TCP connections this process's socket FIFO ends have opened, counting both sides (a
// send end's connects and a receive end's accepts): what a test reads to see that
// BRAID_SOCKET_NTHREADS x BRAID_NSOCKS_PERTHREAD connections carry each FIFO end, where the
// bytes alone could not tell one connection from six.
#pragma once

#include <cstdint>

namespace braid::transport::socket {

/// One more connection made or taken by a socket FIFO end.
void countFifoConnection();
/// The connections counted so far in this process.
uint64_t fifoConnections();

}  // namespace braid::transport::socket
