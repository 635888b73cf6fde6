// Communicators of one job whose ranks are threads of this test process, rank r on devices[r]
// of the runtime installed (the emulated GPU): what the GPU communicator tests of tests/unit set
// up before each case.
#pragma once

#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "braid/comm.h"

namespace braid::testing {

/// Every rank's communicator (null where it failed) and status.
struct ThreadComms {
  std::vector<std::unique_ptr<Comm>> comms;
  std::vector<Status> failures;
};

/// Creates the ranks of one job, a thread each, rank r with `base` on devices[r].
inline ThreadComms createThreadComms(const std::vector<int>& devices,
                                     const CommOptions& base = {}) {
  ThreadComms out;
  Result<UniqueId> id = Comm::newUniqueId();
  const int n = static_cast<int>(devices.size());
  out.comms.resize(n);
  out.failures.assign(n, id.ok() ? Status::success() : id.status());
  if (!id.ok()) return out;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      CommOptions options = base;
      options.device = devices[r];
      auto made = Comm::create(id.value(), n, r, options);
      if (made.ok()) {
        out.comms[r] = std::move(made).value();
      } else {
        out.failures[r] = made.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace braid::testing
