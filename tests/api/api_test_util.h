// Helpers shared by the C API tests that check bad input and unimplemented entry points:
// checking a failure and the ncclGetLastError text it leaves, scoped environment variables,
// guarding against hangs, and a 1-rank communicator fixture.
//
// Every text check first makes ncclGetLastError() hold a known text of its own (see failsWith),
// so that a message left behind by an earlier call cannot make a check pass.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "support/scoped_env.h"

namespace braid::testing {

/// How long a call that should fail quickly may run before the test calls it a hang. Far above
/// any deadline these tests set, so it never decides a result on a slow machine.
inline constexpr auto kHangGuard = std::chrono::seconds(60);

// Two calls that fail without side effects, each leaving a text of its own in ncclGetLastError.
inline std::string primeWithVersion() {
  (void)ncclGetVersion(nullptr);
  return ncclGetLastError(nullptr);
}
inline std::string primeWithUniqueId() {
  (void)ncclGetUniqueId(nullptr);
  return ncclGetLastError(nullptr);
}

/// Runs `call` (which must be repeatable: bad input changes nothing) and checks that it returns
/// `expected` (any error when nullopt) and leaves a new, non-empty ncclGetLastError(comm) that
/// contains every one of `needles`. The last-error text is primed before the call; should the
/// call leave exactly the primer's text, it runs again behind the other primer.
inline ::testing::AssertionResult failsWith(const std::function<ncclResult_t()>& call,
                                            std::optional<ncclResult_t> expected,
                                            const std::vector<std::string>& needles = {},
                                            ncclComm_t comm = nullptr) {
  std::string before;
  std::string text;
  ncclResult_t result = ncclSuccess;
  for (auto prime : {primeWithVersion, primeWithUniqueId}) {
    before = prime();
    result = call();
    const char* last = ncclGetLastError(comm);
    text = last == nullptr ? "" : last;
    if (text != before) break;
  }
  if (expected ? result != *expected : result == ncclSuccess) {
    return ::testing::AssertionFailure()
           << "returned " << result << " (" << ncclGetErrorString(result) << "), expected "
           << (expected ? std::to_string(*expected) : std::string("an error")) << "; last error: \""
           << text << "\"";
  }
  if (text.empty() || text == before) {
    return ::testing::AssertionFailure()
           << "returned " << result << " but did not set ncclGetLastError (it still reads \""
           << text << "\")";
  }
  for (const std::string& needle : needles) {
    if (text.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "last error \"" << text << "\" does not mention \"" << needle << "\"";
    }
  }
  return ::testing::AssertionSuccess() << "\"" << text << "\"";
}

/// The whole text of the file at `path` ("" when it cannot be read).
inline std::string fileText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// How many times `what` occurs in `text`, overlapping occurrences counted.
inline size_t occurrencesOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// A new unique id, whose root listens from now on; a failure shows in the test that asked.
inline ncclUniqueId newId() {
  ncclUniqueId id{};
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  return id;
}

/// Runs `body` on its own thread and returns its value, or nullopt when it has not returned
/// within kHangGuard (the thread is then left behind, so that the test fails rather than hangs).
template <typename T>
std::optional<T> runGuarded(std::function<T()> body) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> result = promise->get_future();
  std::thread([promise, body = std::move(body)] { promise->set_value(body()); }).detach();
  if (result.wait_for(kHangGuard) != std::future_status::ready) return std::nullopt;
  return result.get();
}

/// Tests that need a live communicator get a 1-rank one: it has no peers to wait for.
class OneRankTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ncclUniqueId id = newId();
    ASSERT_EQ(ncclCommInitRank(&comm_, 1, id, 0), ncclSuccess) << ncclGetLastError(nullptr);
    ASSERT_NE(comm_, nullptr);
  }
  void TearDown() override {
    if (comm_ != nullptr) {
      EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess);
    }
  }

  /// ncclAllReduce on this communicator without a stream: a host communicator completes it.
  ncclResult_t allReduce(const void* send, void* recv, size_t count,
                         ncclDataType_t type = ncclFloat32, ncclRedOp_t op = ncclSum) {
    return ncclAllReduce(send, recv, count, type, op, comm_, nullptr);
  }

  ncclComm_t comm_ = nullptr;
};

}  // namespace braid::testing
