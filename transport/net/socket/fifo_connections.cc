// The socket FIFO ends' connection count: see fifo_connections.h.
#include "transport/net/socket/fifo_connections.h"

#include <atomic>

namespace braid::transport::socket {
namespace {

std::atomic<uint64_t> counted{0};

}  // namespace

void countFifoConnection() { counted.fetch_add(1, std::memory_order_relaxed); }

uint64_t fifoConnections() { return counted.load(std::memory_order_relaxed); }

}  // namespace braid::transport::socket
