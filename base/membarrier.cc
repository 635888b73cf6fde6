#include "base/membarrier.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace braid::membarrier {
namespace {

int call(int command) { return static_cast<int>(syscall(__NR_membarrier, command, 0, 0)); }

bool registerOnce() {
  const int supported = call(MEMBARRIER_CMD_QUERY);
  constexpr int kNeeded = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_GLOBAL_EXPEDITED;
  if (supported < 0 || (supported & kNeeded) != kNeeded) return false;
  return call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
         call(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}

}  // namespace

bool available() {
  static const bool registered = registerOnce();
  return registered;
}

void heavyPrivate() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (available()) call(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void heavyGlobal() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (available()) call(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace braid::membarrier
