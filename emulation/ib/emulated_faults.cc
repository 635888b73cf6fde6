// nextWriteFault (emulated_faults.h).
#include "emulation/ib/emulated_faults.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/env.h"
#include "base/log.h"
#include "base/test_fault.h"

namespace braid::transport::ib::emulated {
namespace {

struct Plan {
  WriteFault kind = WriteFault::kNone;
  uint64_t at = 0;  ///< the write, counted from 1
};

Plan readPlan() {
  Plan plan;
  const auto value = env::get("IB_EMULATE_FAULT");
  if (!value || value->empty()) return plan;
  const size_t colon = value->find(':');
  const std::string kind = value->substr(0, colon);
  const uint64_t at =
      colon == std::string::npos ? 0 : std::strtoull(value->c_str() + colon + 1, nullptr, 10);
  if (kind == "completion") plan.kind = WriteFault::kCompletion;
  if (kind == "post") plan.kind = WriteFault::kPost;
  if (kind == "port_down") plan.kind = WriteFault::kPortDown;
  if (at == 0 || plan.kind == WriteFault::kNone) {
    BRAID_WARN(
        "BRAID_IB_EMULATE_FAULT=%s: expected completion:N, post:N or port_down:N (N >= 1); no "
        "fault",
        value->c_str());
    return Plan{};
  }
  plan.at = at;
  BRAID_INFO("emulated HCA: the %llu-th RDMA write of this process will fail (%s)",
             static_cast<unsigned long long>(at), kind.c_str());
  return plan;
}

}  // namespace

WriteFault nextWriteFault() {
  static const Plan plan = readPlan();
  static std::atomic<uint64_t> writes{0};
  if (plan.kind == WriteFault::kNone) return WriteFault::kNone;
  if (writes.fetch_add(1) + 1 != plan.at) return WriteFault::kNone;
  // The caller injects it at once, under the queue pair's lock: this is the fault's moment.
  test_fault::injected(plan.kind == WriteFault::kCompletion ? "ib:completion"
                       : plan.kind == WriteFault::kPost     ? "ib:post"
                                                            : "ib:port_down");
  return plan.kind;
}

}  // namespace braid::transport::ib::emulated
