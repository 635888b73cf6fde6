// What every transport FIFO end must do, whatever its protocol (Simple in
// shm_fifo_test, LL in shm_ll_fifo_test), and the helpers those tests share:
// segment names no parallel run collides with, and wait contexts.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "transport/connection.h"
#include "transport/shm/shm_fifo.h"

namespace braid::testing {

/// A segment name no other test (in this or a parallel run) uses: the pid
/// and a counter; `sender` and `receiver` keep test files apart in one process.
inline std::string uniqueSegmentName(int sender, int receiver, int channel) {
  static std::atomic<uint32_t> counter{0};
  const uint64_t magic = (static_cast<uint64_t>(getpid()) << 32) | counter.fetch_add(1);
  return transport::shm::segmentName(magic, sender, receiver, channel);
}

/// Whether a POSIX shared-memory segment `name` ("/braid-...") exists.
inline bool existsInDevShm(const std::string& name) {
  return access(("/dev/shm" + name).c_str(), F_OK) == 0;
}

/// A wait for `peer` that spins `spin` ns and gives up after `timeoutMs`.
inline transport::WaitContext contextFor(int peer, uint32_t spin = 2000,
                                         int64_t timeoutMs = 60000) {
  transport::WaitContext ctx;
  ctx.deadline = Deadline::afterMs(timeoutMs);
  ctx.peer = peer;
  ctx.spinNs = spin;
  return ctx;
}

/// With nobody on the other side, a receive times out after its deadline
/// naming the peer it waited for; a sender that filled every slot does too.
/// Leaves `send` with kFifoSlots one-byte messages posted.
inline void expectWaitsTimeOut(transport::RecvEnd& recv, transport::SendEnd& send) {
  transport::WaitContext ctx = contextFor(3, 100, 200);
  const auto start = std::chrono::steady_clock::now();
  size_t bytes = 0;
  auto in = recv.waitSlot(ctx, &bytes);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), ErrorCode::kRemoteError);
  EXPECT_NE(in.status().message().find("timed out after"), std::string::npos);
  EXPECT_NE(in.status().message().find("waiting for rank 3"), std::string::npos)
      << in.status().message();
  EXPECT_GE(waited, std::chrono::milliseconds(200));

  for (int i = 0; i < transport::kFifoSlots; ++i) {
    auto out = send.waitSlot(ctx);
    ASSERT_TRUE(out.ok()) << "slot " << i << ": " << out.status().message();
    send.post(1);
  }
  ctx = contextFor(2, 100, 100);
  auto full = send.waitSlot(ctx);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), ErrorCode::kRemoteError);
  EXPECT_NE(full.status().message().find("waiting for rank 2"), std::string::npos)
      << full.status().message();
}

/// Fills `full`, then blocks a send on it and a receive on `idle` (which
/// nobody feeds) with no deadline: raising the abort flag must end both with
/// kRemoteError naming the peer.
inline void expectAbortEndsWaits(transport::SendEnd& full, transport::RecvEnd& idle) {
  for (int i = 0; i < transport::kFifoSlots; ++i) {
    ASSERT_TRUE(full.waitSlot(contextFor(1)).ok());
    full.post(1);
  }
  std::atomic<bool> abort{false};
  transport::WaitContext ctx;  // no deadline: only the abort flag can end these waits
  ctx.abort = &abort;
  ctx.peer = 5;
  std::vector<Status> results(2);
  std::thread sender([&] { results[0] = full.waitSlot(ctx).status(); });
  std::thread receiver([&] {
    size_t bytes = 0;
    results[1] = idle.waitSlot(ctx, &bytes).status();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  abort.store(true);
  sender.join();
  receiver.join();
  for (const Status& status : results) {
    EXPECT_EQ(status.code(), ErrorCode::kRemoteError);
    EXPECT_NE(status.message().find("aborted"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("rank 5"), std::string::npos) << status.message();
  }
}

}  // namespace braid::testing
