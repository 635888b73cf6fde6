// nextSlotBreaks (socket_fault.h).
#include "transport/net/socket/socket_fault.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/env.h"
#include "base/log.h"
#include "base/test_fault.h"

namespace braid::transport::socket {
namespace {

/// The slot whose connection breaks, counted from 1; 0: none.
uint64_t readBreakingSlot() {
  const auto value = env::get("SOCKET_EMULATE_FAULT");
  if (!value || value->empty()) return 0;
  const std::string prefix = "reset:";
  const uint64_t at = value->compare(0, prefix.size(), prefix) == 0
                          ? std::strtoull(value->c_str() + prefix.size(), nullptr, 10)
                          : 0;
  if (at == 0) {
    BRAID_WARN("BRAID_SOCKET_EMULATE_FAULT=%s: expected reset:N (N >= 1); no fault",
               value->c_str());
    return 0;
  }
  BRAID_INFO("socket transport: the connection of this process's %llu-th slot sent will break",
             static_cast<unsigned long long>(at));
  return at;
}

}  // namespace

bool nextSlotBreaks() {
  static const uint64_t breaking = readBreakingSlot();
  static std::atomic<uint64_t> sent{0};
  if (breaking == 0) return false;
  if (sent.fetch_add(1) + 1 != breaking) return false;
  // sendSlot breaks the connection at once: this is the fault's moment.
  test_fault::injected("socket:reset");
  return true;
}

}  // namespace braid::transport::socket
