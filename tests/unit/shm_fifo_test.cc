// Tests of the shared-memory FIFO (transport/shm) and the futex waits under it.
//
// Streams check every byte of every message against its sequence number,
// between threads and between forked processes, with spinning on and off
// (spinNs = 0 sends every wait through the futex sleep and wake).
// Waits with nobody on the other side must end with kRemoteError on the
// deadline or on the abort flag. Segment names carry the test's pid so that
// parallel test runs on one host do not collide.
#include "transport/shm/shm_fifo.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/futex.h"
#include "support/fifo_contract.h"
#include "support/multiprocess.h"
#include "transport/shm/shm_segment.h"

namespace braid::transport::shm {
namespace {

using braid::testing::contextFor;
using braid::testing::existsInDevShm;
using braid::testing::expectAbortEndsWaits;
using braid::testing::expectWaitsTimeOut;
using braid::testing::runProcesses;
using braid::testing::runThreads;
using braid::testing::uniqueSegmentName;

// Ranks 1 -> 2 keep these names apart from shm_ll_fifo_test's in one process.
std::string uniqueName(int channel = 0) { return uniqueSegmentName(1, 2, channel); }

// Message `seq`: its size and the byte at each offset, both derived from seq.
size_t messageSize(uint32_t seq, size_t slotBytes) { return 1 + (seq * 7919u) % slotBytes; }
char messageByte(uint32_t seq, size_t offset) { return static_cast<char>(seq * 31u + offset); }

void sendStream(SendEnd& send, uint32_t count, const WaitContext& ctx) {
  for (uint32_t seq = 0; seq < count; ++seq) {
    auto slot = send.waitSlot(ctx);
    ASSERT_TRUE(slot.ok()) << slot.status().message();
    size_t size = messageSize(seq, send.slotBytes());
    char* data = static_cast<char*>(slot.value());
    for (size_t i = 0; i < size; ++i) data[i] = messageByte(seq, i);
    send.post(size);
  }
}

void recvStream(RecvEnd& recv, uint32_t count, const WaitContext& ctx) {
  for (uint32_t seq = 0; seq < count; ++seq) {
    size_t size = 0;
    auto slot = recv.waitSlot(ctx, &size);
    ASSERT_TRUE(slot.ok()) << slot.status().message();
    ASSERT_EQ(size, messageSize(seq, recv.slotBytes())) << "message " << seq;
    const char* data = static_cast<const char*>(slot.value());
    size_t wrong = 0;
    for (size_t i = 0; i < size; ++i) wrong += data[i] != messageByte(seq, i);
    ASSERT_EQ(wrong, 0u) << "message " << seq << " has " << wrong << " wrong bytes";
    recv.release();
  }
}

TEST(ShmFifoTest, SegmentNameFormat) {
  EXPECT_EQ(segmentName(0x0123456789abcdefull, 3, 4, 5), "/braid-0123456789abcdef-3-4-5");
  EXPECT_EQ(segmentName(0, 0, 0, 0), "/braid-0000000000000000-0-0-0");
  std::string longest = segmentName(UINT64_MAX, INT_MAX, INT_MAX, INT_MAX);
  EXPECT_EQ(longest, "/braid-ffffffffffffffff-2147483647-2147483647-2147483647");
  EXPECT_LE(longest.size(), static_cast<size_t>(NAME_MAX));
}

TEST(ShmFifoTest, CreateOpenUnlink) {
  const std::string name = uniqueName();
  auto recv = createRecvEnd(name, 4096);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  EXPECT_EQ(recv.value()->slotBytes(), 4096u);
  EXPECT_TRUE(existsInDevShm(name));

  auto again = createRecvEnd(name, 4096);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kSystemError);
  EXPECT_NE(again.status().message().find(name), std::string::npos) << again.status().message();

  auto send = openSendEnd(name, 4096);
  ASSERT_TRUE(send.ok()) << send.status().message();
  EXPECT_EQ(send.value()->slotBytes(), 4096u);

  ASSERT_TRUE(unlinkSegment(name).ok());
  EXPECT_FALSE(existsInDevShm(name));
  EXPECT_TRUE(unlinkSegment(name).ok()) << "unlinking twice is allowed";
  auto missing = openSendEnd(name, 4096);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kSystemError);
  EXPECT_NE(missing.status().message().find(name), std::string::npos);
  EXPECT_NE(missing.status().message().find("No such file"), std::string::npos)
      << missing.status().message();

  // The two mappings still share memory after the name is gone.
  WaitContext ctx = contextFor(2);
  auto out = send.value()->waitSlot(ctx);
  ASSERT_TRUE(out.ok());
  memcpy(out.value(), "hello", 5);
  send.value()->post(5);
  size_t bytes = 0;
  auto in = recv.value()->waitSlot(ctx, &bytes);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(bytes, 5u);
  EXPECT_EQ(memcmp(in.value(), "hello", 5), 0);
  recv.value()->release();
}

TEST(ShmFifoTest, CreatorUnlinksOnDestructionIfNobodyDid) {
  const std::string name = uniqueName();
  {
    auto recv = createRecvEnd(name, 64);
    ASSERT_TRUE(recv.ok()) << recv.status().message();
    EXPECT_TRUE(existsInDevShm(name));
  }
  EXPECT_FALSE(existsInDevShm(name));
}

TEST(ShmFifoTest, OpenWithOtherSlotSizeFails) {
  const std::string name = uniqueName();
  auto recv = createRecvEnd(name, 4096);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto send = openSendEnd(name, 8192);
  ASSERT_FALSE(send.ok());
  EXPECT_EQ(send.status().code(), ErrorCode::kInvalidUsage);
  const std::string& message = send.status().message();
  EXPECT_NE(message.find(name), std::string::npos) << message;
  EXPECT_NE(message.find("4096"), std::string::npos) << message;
  EXPECT_NE(message.find("8192"), std::string::npos) << message;
  EXPECT_TRUE(unlinkSegment(name).ok());
}

TEST(ShmFifoTest, OpenOfForeignSegmentFails) {
  const std::string name = uniqueName();
  auto segment = ShmSegment::create(name, 8192);
  ASSERT_TRUE(segment.ok()) << segment.status().message();
  auto send = openSendEnd(name, 64);
  ASSERT_FALSE(send.ok());
  EXPECT_NE(send.status().message().find("not a braid FIFO"), std::string::npos)
      << send.status().message();
}

TEST(ShmFifoTest, BadArgumentsAreRejected) {
  auto badName = createRecvEnd("no-leading-slash", 64);
  ASSERT_FALSE(badName.ok());
  EXPECT_EQ(badName.status().code(), ErrorCode::kInvalidArgument);
  auto nested = createRecvEnd("/a/b", 64);
  EXPECT_EQ(nested.status().code(), ErrorCode::kInvalidArgument);
  auto tooLong = createRecvEnd("/" + std::string(NAME_MAX + 1, 'x'), 64);
  EXPECT_EQ(tooLong.status().code(), ErrorCode::kInvalidArgument);
  auto empty = createRecvEnd(uniqueName(), 0);
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument);
}

class ShmFifoStreamTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ShmFifoStreamTest, Threads) {
  const std::string name = uniqueName();
  const size_t slotBytes = 1000;  // not a page multiple, so strides differ from sizes
  auto recv = createRecvEnd(name, slotBytes);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto send = openSendEnd(name, slotBytes);
  ASSERT_TRUE(send.ok()) << send.status().message();
  ASSERT_TRUE(unlinkSegment(name).ok());
  WaitContext ctx = contextFor(0, GetParam());
  runThreads(2, [&](int rank) {
    if (rank == 0) {
      sendStream(*send.value(), 10000, ctx);
    } else {
      recvStream(*recv.value(), 10000, ctx);
    }
  });
}

// The FIFO between a rank and its network proxy: no name in /dev/shm at any moment, and its
// slots' memory committed only as they are written (32 MiB FIFOs cost small messages nothing).
TEST(ShmFifoTest, APrivateFifoHasNoNameAndCommitsItsSlotsAsTheyAreWritten) {
  // This process's mappings of /dev/shm files, unlinked ones included: counting the folder's
  // entries instead raced with every other test that ctest runs beside this one.
  auto devShmMappings = [] {
    size_t n = 0;
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
      if (line.find(" /dev/shm/") != std::string::npos) ++n;
    }
    return n;
  };
  const size_t before = devShmMappings();
  const size_t slotBytes = 4 << 20;
  auto fifo = createPrivateFifo(slotBytes);
  ASSERT_TRUE(fifo.ok()) << fifo.status().message();
  EXPECT_EQ(devShmMappings(), before);

  const long page = sysconf(_SC_PAGESIZE);
  const size_t slotsBytes = static_cast<size_t>(fifo.value().ref.stride) * kFifoSlots;
  auto residentPages = [&] {
    std::vector<unsigned char> resident(slotsBytes / page);
    EXPECT_EQ(mincore(fifo.value().ref.slots, slotsBytes, resident.data()), 0);
    size_t n = 0;
    for (unsigned char r : resident) n += r & 1;
    return n;
  };
  EXPECT_EQ(residentPages(), 0u) << "slots committed before anything was written";

  // One small message in the first slot commits its page and no other.
  WaitContext ctx = contextFor(0);
  auto slot = fifo.value().send->waitSlot(ctx);
  ASSERT_TRUE(slot.ok()) << slot.status().message();
  memcpy(slot.value(), "hi", 2);
  fifo.value().send->post(2);
  EXPECT_EQ(residentPages(), 1u);

  size_t bytes = 0;
  auto in = fifo.value().recv->waitSlot(ctx, &bytes);
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(bytes, 2u);
  EXPECT_EQ(memcmp(in.value(), "hi", 2), 0);
  fifo.value().recv->release();
  // And it streams as any FIFO does.
  runThreads(2, [&](int rank) {
    if (rank == 0) {
      sendStream(*fifo.value().send, 200, ctx);
    } else {
      recvStream(*fifo.value().recv, 200, ctx);
    }
  });
}

TEST_P(ShmFifoStreamTest, Processes) {
  const std::string name = uniqueName();
  const size_t slotBytes = 3000;
  runProcesses(2, [&](int rank) {
    WaitContext ctx = contextFor(1 - rank, GetParam());
    if (rank == 0) {
      auto recv = createRecvEnd(name, slotBytes);
      ASSERT_TRUE(recv.ok()) << recv.status().message();
      recvStream(*recv.value(), 10000, ctx);
      return;
    }
    // The comm would wait for the receiver's word through the bootstrap;
    // here the sender retries until the segment is there and set up.
    auto deadline = Deadline::afterMs(30000);
    auto send = openSendEnd(name, slotBytes);
    while (!send.ok() && !deadline.expired()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      send = openSendEnd(name, slotBytes);
    }
    ASSERT_TRUE(send.ok()) << send.status().message();
    ASSERT_TRUE(unlinkSegment(name).ok());
    sendStream(*send.value(), 10000, ctx);
  });
  EXPECT_FALSE(existsInDevShm(name));
  EXPECT_TRUE(unlinkSegment(name).ok());
}

INSTANTIATE_TEST_SUITE_P(ShmFifo, ShmFifoStreamTest, ::testing::Values(0u, 2000u),
                         [](const auto& info) { return "spin" + std::to_string(info.param); });

TEST(ShmFifoTest, WaitWithNobodyThereTimesOut) {
  const std::string name = uniqueName();
  auto recv = createRecvEnd(name, 64);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto send = openSendEnd(name, 64);
  ASSERT_TRUE(send.ok()) << send.status().message();
  expectWaitsTimeOut(*recv.value(), *send.value());
}

TEST(ShmFifoTest, AbortEndsBlockedWaits) {
  const std::string name = uniqueName();
  auto recv = createRecvEnd(name, 64);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto send = openSendEnd(name, 64);
  ASSERT_TRUE(send.ok()) << send.status().message();
  // The sender blocks on this FIFO once full; a receiver blocks on an empty
  // one that nobody feeds.
  auto idle = createRecvEnd(uniqueName(1), 64);
  ASSERT_TRUE(idle.ok()) << idle.status().message();
  expectAbortEndsWaits(*send.value(), *idle.value());
}

// 16 threads on (typically) 2 cores: if waiters spun instead of sleeping,
// each message would cost a scheduler time slice and this would not finish.
TEST(ShmFifoTest, ManyPairsOversubscribed) {
  constexpr int kPairs = 8;
  std::vector<std::unique_ptr<RecvEnd>> recvs;
  std::vector<std::unique_ptr<SendEnd>> sends;
  for (int pair = 0; pair < kPairs; ++pair) {
    const std::string name = uniqueName(pair);
    auto recv = createRecvEnd(name, 256);
    ASSERT_TRUE(recv.ok()) << recv.status().message();
    auto send = openSendEnd(name, 256);
    ASSERT_TRUE(send.ok()) << send.status().message();
    ASSERT_TRUE(unlinkSegment(name).ok());
    recvs.push_back(std::move(recv).value());
    sends.push_back(std::move(send).value());
  }
  runThreads(2 * kPairs, [&](int thread) {
    WaitContext ctx = contextFor(thread ^ 1, 2000);
    if (thread % 2 == 0) {
      sendStream(*sends[thread / 2], 5000, ctx);
    } else {
      recvStream(*recvs[thread / 2], 5000, ctx);
    }
  });
}

// The waits below go through the kernel on purpose, on words in a segment
// that is mapped twice, as two processes would map it.
struct TwoMappings {
  ShmSegment a;
  ShmSegment b;
  std::atomic<uint32_t>& wordIn(const ShmSegment& s) {
    return *static_cast<std::atomic<uint32_t>*>(s.data());
  }
};

TwoMappings mapTwice() {
  const std::string name = uniqueName();
  auto a = ShmSegment::create(name, 4096);
  EXPECT_TRUE(a.ok()) << a.status().message();
  auto b = ShmSegment::open(name);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return TwoMappings{std::move(a).value(), std::move(b).value()};
}

TEST(FutexTest, WaitOnChangedWordReturnsAtOnce) {
  std::atomic<uint32_t> word{1};
  EXPECT_EQ(futex::wait(&word, 0, 10LL * 1000 * 1000 * 1000), futex::WaitResult::kValueChanged);
}

TEST(FutexTest, WaitTimesOut) {
  std::atomic<uint32_t> word{0};
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(futex::wait(&word, 0, 20 * 1000 * 1000), futex::WaitResult::kTimedOut);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
}

TEST(FutexTest, WakeReachesWaiterThroughAnotherMapping) {
  TwoMappings maps = mapTwice();
  ASSERT_NE(maps.a.data(), maps.b.data());
  std::atomic<uint32_t>& viaA = maps.wordIn(maps.a);
  std::atomic<uint32_t>& viaB = maps.wordIn(maps.b);
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    while (viaA.load() == 0) futex::wait(&viaA, 0, -1);  // no timeout: only a wake ends it
    done.store(true);
  });
  // Wake until the waiter is gone: it may not be asleep yet at the first wake.
  viaB.store(1);
  while (!done.load()) {
    futex::wake(&viaB);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  waiter.join();
}

struct FakeContext {
  Deadline deadline;
  const std::atomic<bool>* abort = nullptr;
  int peer = -1;
  uint32_t spinNs = 0;
};

TEST(FutexTest, WaitUntilSeesPostFromOtherMapping) {
  TwoMappings maps = mapTwice();
  std::atomic<uint32_t>& viaA = maps.wordIn(maps.a);
  std::atomic<uint32_t>& viaB = maps.wordIn(maps.b);
  auto* waitingA = static_cast<std::atomic<uint32_t>*>(maps.a.data()) + 16;
  auto* waitingB = static_cast<std::atomic<uint32_t>*>(maps.b.data()) + 16;
  FakeContext ctx{Deadline::afterMs(60000)};
  Status status;
  std::thread waiter(
      [&] { status = futex::waitUntil(viaA, *waitingA, ctx, [](uint32_t v) { return v == 42; }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  viaB.store(42, std::memory_order_seq_cst);
  futex::wakeIfWaiting(viaB, *waitingB);
  waiter.join();
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(waitingA->load(), 0u) << "the waiter withdraws its announcement";
}

TEST(FutexTest, WaitUntilReadyOrExpired) {
  std::atomic<uint32_t> word{7};
  std::atomic<uint32_t> waiting{0};
  FakeContext expired{Deadline::afterMs(1)};
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_TRUE(futex::waitUntil(word, waiting, expired, [](uint32_t v) { return v == 7; }).ok())
      << "a ready word wins over an expired deadline";
  Status late = futex::waitUntil(word, waiting, expired, [](uint32_t v) { return v == 8; });
  EXPECT_EQ(late.code(), ErrorCode::kRemoteError);
  EXPECT_NE(late.message().find("timed out after"), std::string::npos) << late.message();
  EXPECT_NE(late.message().find("the peer"), std::string::npos) << late.message();
}

}  // namespace
}  // namespace braid::transport::shm
