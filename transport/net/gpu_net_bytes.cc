// The GPU FIFOs' byte counts: see gpu_net_bytes.h.
#include "transport/net/gpu_net_bytes.h"

#include <atomic>

namespace braid::transport::net {
namespace {

std::atomic<uint64_t> device{0};
std::atomic<uint64_t> staged{0};
std::atomic<uint64_t> flushed{0};

}  // namespace

void countDeviceRegisteredBytes(uint64_t bytes) {
  device.fetch_add(bytes, std::memory_order_relaxed);
}
void countStagedBytes(uint64_t bytes) { staged.fetch_add(bytes, std::memory_order_relaxed); }
void countFlush() { flushed.fetch_add(1, std::memory_order_relaxed); }
uint64_t flushes() { return flushed.load(std::memory_order_relaxed); }
uint64_t deviceRegisteredBytes() { return device.load(std::memory_order_relaxed); }
uint64_t stagedBytes() { return staged.load(std::memory_order_relaxed); }

}  // namespace braid::transport::net
