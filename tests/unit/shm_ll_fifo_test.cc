// Tests of the LL shared-memory FIFO (transport/shm/shm_ll_fifo.h).
//
// Every message's size and bytes derive from its stream and sequence number,
// and the receiver checks every byte. Half the messages are 1..8 bytes, so
// that the cells past them keep old flags for long runs: the case that the
// whole-slot rewrites exist for. Small flag spaces (LlFifoOptions) make the
// flags wrap every few dozen messages, and a first sequence just below 2^32
// makes the message counter wrap. Since on x86 a receiver never sees a
// message's count before its payload, old cells could not be caught reading
// the wrong data here; InOneThread therefore checks the invariant itself from
// a second mapping: no cell of a free slot carries the flag of the message
// that will use it next. Segment names carry the test's pid.
#include "transport/shm/shm_ll_fifo.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/fifo_contract.h"
#include "support/multiprocess.h"
#include "transport/shm/shm_ll_layout.h"
#include "transport/shm/shm_segment.h"

namespace braid::transport::shm::shm_ll_fifo_test {
namespace {

using braid::testing::contextFor;
using braid::testing::existsInDevShm;
using braid::testing::expectAbortEndsWaits;
using braid::testing::expectWaitsTimeOut;
using braid::testing::runProcesses;
using braid::testing::runThreads;
using braid::testing::uniqueSegmentName;

// Ranks 21 -> 22 keep these names apart from shm_fifo_test's in one process.
std::string uniqueName(int channel = 0) { return uniqueSegmentName(21, 22, channel); }

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t messageSeed(uint32_t stream, uint32_t seq) { return mix(uint64_t{stream} << 32 | seq); }

size_t messageSize(uint32_t stream, uint32_t seq, size_t slotBytes) {
  uint64_t seed = messageSeed(stream, seq);
  size_t limit = (seed & 1) != 0 ? slotBytes : std::min<size_t>(slotBytes, 8);
  return 1 + (seed >> 1) % limit;
}

unsigned char messageByte(uint64_t seed, size_t offset) {
  return static_cast<unsigned char>((seed >> (8 * (offset % 8))) + offset / 8);
}

size_t fillMessage(void* slot, uint32_t stream, uint32_t seq, size_t slotBytes) {
  size_t size = messageSize(stream, seq, slotBytes);
  uint64_t seed = messageSeed(stream, seq);
  auto* data = static_cast<unsigned char*>(slot);
  for (size_t i = 0; i < size; ++i) data[i] = messageByte(seed, i);
  return size;
}

::testing::AssertionResult isMessage(const void* slot, size_t size, uint32_t stream, uint32_t seq,
                                     size_t slotBytes) {
  size_t expected = messageSize(stream, seq, slotBytes);
  if (size != expected) {
    return ::testing::AssertionFailure() << "stream " << stream << " message " << seq << " has "
                                         << size << " bytes, expected " << expected;
  }
  uint64_t seed = messageSeed(stream, seq);
  const auto* data = static_cast<const unsigned char*>(slot);
  size_t wrong = 0;
  size_t first = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != messageByte(seed, i) && wrong++ == 0) first = i;
  }
  if (wrong != 0) {
    return ::testing::AssertionFailure() << "stream " << stream << " message " << seq << " has "
                                         << wrong << " wrong bytes, the first at offset " << first;
  }
  return ::testing::AssertionSuccess();
}

void sendStream(SendEnd& send, uint32_t stream, uint32_t count, const WaitContext& ctx) {
  for (uint32_t seq = 0; seq < count; ++seq) {
    auto slot = send.waitSlot(ctx);
    ASSERT_TRUE(slot.ok()) << slot.status().message();
    send.post(fillMessage(slot.value(), stream, seq, send.slotBytes()));
  }
}

void recvStream(RecvEnd& recv, uint32_t stream, uint32_t count, const WaitContext& ctx) {
  for (uint32_t seq = 0; seq < count; ++seq) {
    size_t size = 0;
    auto slot = recv.waitSlot(ctx, &size);
    ASSERT_TRUE(slot.ok()) << slot.status().message();
    ASSERT_TRUE(isMessage(slot.value(), size, stream, seq, recv.slotBytes()));
    recv.release();
  }
}

struct Fifo {
  std::unique_ptr<RecvEnd> recv;
  std::unique_ptr<SendEnd> send;
};

// Both ends in this process, the name already unlinked.
Fifo makeFifo(const std::string& name, size_t slotBytes, const LlFifoOptions& options = {}) {
  Fifo fifo;
  auto recv = createLlRecvEnd(name, slotBytes, options);
  EXPECT_TRUE(recv.ok()) << recv.status().message();
  if (!recv.ok()) return fifo;
  auto send = openLlSendEnd(name, slotBytes);
  EXPECT_TRUE(send.ok()) << send.status().message();
  if (!send.ok()) return fifo;
  EXPECT_TRUE(unlinkSegment(name).ok());
  fifo.recv = std::move(recv).value();
  fifo.send = std::move(send).value();
  return fifo;
}

// Opens `name` until its receiver has set it up, as the comm would after
// the receiver's word through the bootstrap.
std::unique_ptr<SendEnd> openWhenReady(const std::string& name, size_t slotBytes) {
  auto deadline = Deadline::afterMs(30000);
  for (;;) {
    auto send = tryOpenLlSendEnd(name, slotBytes);
    EXPECT_TRUE(send.ok()) << send.status().message();
    if (!send.ok()) return nullptr;
    if (send.value() != nullptr) return std::move(send).value();
    if (deadline.expired()) {
      ADD_FAILURE() << name << " was not set up within 30 s";
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(LlFifoTest, CreateOpenRoundTrip) {
  const std::string name = uniqueName();
  auto recv = createLlRecvEnd(name, 4096);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  EXPECT_EQ(recv.value()->slotBytes(), 4096u);
  EXPECT_TRUE(existsInDevShm(name));
  auto again = createLlRecvEnd(name, 4096);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kSystemError);

  auto send = openLlSendEnd(name, 4096);
  ASSERT_TRUE(send.ok()) << send.status().message();
  EXPECT_EQ(send.value()->slotBytes(), 4096u);
  ASSERT_TRUE(unlinkSegment(name).ok());
  EXPECT_FALSE(existsInDevShm(name));

  WaitContext ctx = contextFor(2);
  auto out = send.value()->waitSlot(ctx);
  ASSERT_TRUE(out.ok()) << out.status().message();
  memcpy(out.value(), "hello", 5);
  send.value()->post(5);
  ASSERT_TRUE(send.value()->waitSlot(ctx).ok());
  send.value()->post(0);  // an empty message is a message too

  size_t bytes = 0;
  auto in = recv.value()->waitSlot(ctx, &bytes);
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(bytes, 5u);
  EXPECT_EQ(memcmp(in.value(), "hello", 5), 0);
  recv.value()->release();
  in = recv.value()->waitSlot(ctx, &bytes);
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(bytes, 0u);
  recv.value()->release();
  EXPECT_EQ(recv.value()->trySlot(&bytes), nullptr);
}

TEST(LlFifoTest, OpenOfMissingSegment) {
  const std::string name = uniqueName();
  auto send = openLlSendEnd(name, 64);
  ASSERT_FALSE(send.ok());
  EXPECT_EQ(send.status().code(), ErrorCode::kSystemError);
  EXPECT_NE(send.status().message().find(name), std::string::npos) << send.status().message();
  EXPECT_NE(send.status().message().find("No such file"), std::string::npos)
      << send.status().message();
  auto later = tryOpenLlSendEnd(name, 64);
  ASSERT_TRUE(later.ok()) << later.status().message();
  EXPECT_EQ(later.value(), nullptr) << "a missing segment is not ready yet, not an error";
}

TEST(LlFifoTest, SegmentNotSetUpYet) {
  // What the sender sees between the receiver's fallocate and its magic.
  const std::string name = uniqueName();
  auto segment = ShmSegment::create(name, 1 << 16);
  ASSERT_TRUE(segment.ok()) << segment.status().message();
  auto later = tryOpenLlSendEnd(name, 64);
  ASSERT_TRUE(later.ok()) << later.status().message();
  EXPECT_EQ(later.value(), nullptr);
  auto now = openLlSendEnd(name, 64);
  ASSERT_FALSE(now.ok());
  EXPECT_EQ(now.status().code(), ErrorCode::kInvalidUsage);
  EXPECT_NE(now.status().message().find("not a braid LL FIFO"), std::string::npos)
      << now.status().message();

  // Any other non-zero magic is a foreign segment, for both calls.
  static_cast<std::atomic<uint64_t>*>(segment.value().data())->store(0x1234);
  auto foreign = tryOpenLlSendEnd(name, 64);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("not a braid LL FIFO"), std::string::npos)
      << foreign.status().message();
}

TEST(LlFifoTest, OpenWithOtherSlotSizeFails) {
  const std::string name = uniqueName();
  auto recv = createLlRecvEnd(name, 4096);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  for (bool retrying : {false, true}) {
    auto send = retrying ? tryOpenLlSendEnd(name, 8192) : openLlSendEnd(name, 8192);
    ASSERT_FALSE(send.ok());
    EXPECT_EQ(send.status().code(), ErrorCode::kInvalidUsage);
    const std::string& message = send.status().message();
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("4096"), std::string::npos) << message;
    EXPECT_NE(message.find("8192"), std::string::npos) << message;
  }
}

TEST(LlFifoTest, SimpleAndLlSegmentsAreNotConfused) {
  const std::string simpleName = uniqueName(0);
  auto simple = createRecvEnd(simpleName, 4096);
  ASSERT_TRUE(simple.ok()) << simple.status().message();
  for (bool retrying : {false, true}) {
    auto send = retrying ? tryOpenLlSendEnd(simpleName, 4096) : openLlSendEnd(simpleName, 4096);
    ASSERT_FALSE(send.ok()) << "an LL sender opened a Simple FIFO";
    EXPECT_EQ(send.status().code(), ErrorCode::kInvalidUsage);
    EXPECT_NE(send.status().message().find("Simple-protocol FIFO"), std::string::npos)
        << send.status().message();
    EXPECT_NE(send.status().message().find("BRAID_PROTO"), std::string::npos)
        << send.status().message();
  }

  const std::string llName = uniqueName(1);
  auto ll = createLlRecvEnd(llName, 4096);
  ASSERT_TRUE(ll.ok()) << ll.status().message();
  // The retrying open fails at once too, rather than waiting for a Simple
  // header that will never appear.
  for (bool retrying : {false, true}) {
    auto send = retrying ? tryOpenSendEnd(llName, 4096) : openSendEnd(llName, 4096);
    ASSERT_FALSE(send.ok()) << "a Simple sender opened an LL FIFO";
    EXPECT_EQ(send.status().code(), ErrorCode::kInvalidUsage);
    EXPECT_NE(send.status().message().find("not a braid FIFO"), std::string::npos)
        << send.status().message();
  }
}

TEST(LlFifoTest, BadArgumentsAreRejected) {
  const size_t tooBig = size_t{UINT32_MAX} + 1;
  EXPECT_EQ(createLlRecvEnd(uniqueName(), 0).status().code(), ErrorCode::kInvalidArgument);
  auto big = createLlRecvEnd(uniqueName(), tooBig);
  EXPECT_EQ(big.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find(std::to_string(tooBig)), std::string::npos)
      << big.status().message();
  EXPECT_EQ(openLlSendEnd(uniqueName(), 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(tryOpenLlSendEnd(uniqueName(), tooBig).status().code(), ErrorCode::kInvalidArgument);
  for (int bits : {3, 33}) {
    LlFifoOptions options;
    options.flagBits = bits;
    auto recv = createLlRecvEnd(uniqueName(), 64, options);
    EXPECT_EQ(recv.status().code(), ErrorCode::kInvalidArgument) << bits << "-bit flags";
    EXPECT_NE(recv.status().message().find(std::to_string(bits) + "-bit"), std::string::npos)
        << recv.status().message();
  }
  EXPECT_EQ(createLlRecvEnd("no-leading-slash", 64).status().code(), ErrorCode::kInvalidArgument);
}

TEST(LlFifoTest, TrySlotNeverBlocks) {
  const size_t slotBytes = 100;
  Fifo fifo = makeFifo(uniqueName(), slotBytes);
  ASSERT_TRUE(fifo.recv && fifo.send);
  size_t bytes = 0;
  EXPECT_EQ(fifo.recv->trySlot(&bytes), nullptr) << "nothing was posted";

  for (uint32_t seq = 0; seq < kFifoSlots; ++seq) {
    void* slot = fifo.send->trySlot();
    ASSERT_NE(slot, nullptr) << "slot " << seq << " of an emptied FIFO";
    EXPECT_EQ(fifo.send->trySlot(), slot) << "asking twice gives the same slot";
    fifo.send->post(fillMessage(slot, 7, seq, slotBytes));
  }
  EXPECT_EQ(fifo.send->trySlot(), nullptr) << "all slots are full";

  const void* first = fifo.recv->trySlot(&bytes);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(isMessage(first, bytes, 7, 0, slotBytes));
  size_t again = 0;
  EXPECT_EQ(fifo.recv->trySlot(&again), first) << "until release(), the same message";
  EXPECT_EQ(again, bytes);
  auto waited = fifo.recv->waitSlot(contextFor(1), &again);
  ASSERT_TRUE(waited.ok()) << waited.status().message();
  EXPECT_EQ(waited.value(), first);
  fifo.recv->release();
  EXPECT_NE(fifo.send->trySlot(), nullptr) << "a released slot is free again";

  for (uint32_t seq = 1; seq < kFifoSlots; ++seq) {
    const void* slot = fifo.recv->trySlot(&bytes);
    ASSERT_NE(slot, nullptr) << "message " << seq;
    EXPECT_TRUE(isMessage(slot, bytes, 7, seq, slotBytes));
    fifo.recv->release();
  }
  EXPECT_EQ(fifo.recv->trySlot(&bytes), nullptr);
}

// On Arm a message's cells may become visible in any order; on x86 the
// count, stored last, never shows before the payload. So this test plays a
// sender through a second mapping, one cell at a time and count first: the
// receiver must take nothing until every cell carries the message's flag,
// resume where it stopped, and never take a cell of the previous round.
TEST(LlFifoTest, MessageSeenInPiecesIsTakenWhole) {
  const std::string name = uniqueName();
  LlFifoOptions options;
  options.flagBits = 5;
  options.firstSequence = 40;
  auto recv = createLlRecvEnd(name, 64, options);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto view = ShmSegment::open(name);
  ASSERT_TRUE(view.ok()) << view.status().message();
  ll::FlagSpace flags(5);
  ll::Cell* cells = ll::slotCells(static_cast<char*>(view.value().data()) + ll::kPage,
                                  ll::strideFor(64), options.firstSequence);
  const uint32_t flag = flags.flag(options.firstSequence);
  // Bytes 0..9 (and two of padding) as a little-endian host packs them.
  const uint32_t words[3] = {0x03020100, 0x07060504, 0x0b0a0908};

  size_t bytes = 0;
  cells[0].store(ll::makeCell(flag, 10));  // 10 bytes: three payload cells
  EXPECT_EQ(recv.value()->trySlot(&bytes), nullptr) << "only the count has arrived";
  cells[2].store(ll::makeCell(flag, words[1]));
  cells[3].store(ll::makeCell(flag - 1, 0xdeadbeef));  // a neighbour's flag: not ours
  EXPECT_EQ(recv.value()->trySlot(&bytes), nullptr) << "cell 1 is missing";
  cells[1].store(ll::makeCell(flag, words[0]));
  EXPECT_EQ(recv.value()->trySlot(&bytes), nullptr) << "cell 3 is missing";
  cells[3].store(ll::makeCell(flag, words[2]));
  const void* slot = recv.value()->trySlot(&bytes);
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(bytes, 10u);
  const unsigned char expected[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(memcmp(slot, expected, 10), 0);
  recv.value()->release();
  EXPECT_EQ(static_cast<const ll::Header*>(view.value().data())->head.load(),
            options.firstSequence + 1);
}

// The streams above rarely get past the yields into a futex sleep on two
// busy cores, so this test makes the receiver sleep for sure: it waits for
// the receiver's announcement in the header, then posts, and the post must
// ring the doorbell (wake the receiver) rather than leave it to the end of
// its slice.
TEST(LlFifoTest, PostWakesSleepingReceiver) {
  const std::string name = uniqueName();
  auto recv = createLlRecvEnd(name, 64);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto send = openLlSendEnd(name, 64);
  ASSERT_TRUE(send.ok()) << send.status().message();
  auto view = ShmSegment::open(name);
  ASSERT_TRUE(view.ok()) << view.status().message();
  const auto* header = static_cast<const ll::Header*>(view.value().data());

  for (uint32_t seq = 0; seq < 3; ++seq) {
    Status received;
    std::thread receiver([&] {
      WaitContext ctx;  // no deadline, no spin: straight to the yields and the sleep
      ctx.spinNs = 0;
      size_t bytes = 0;
      auto slot = recv.value()->waitSlot(ctx, &bytes);
      received = slot.status();
      if (slot.ok()) {
        EXPECT_TRUE(isMessage(slot.value(), bytes, 9, seq, 64));
        recv.value()->release();
      }
    });
    auto deadline = Deadline::afterMs(10000);
    while (header->recvWaiting.load() == 0 && !deadline.expired()) std::this_thread::yield();
    ASSERT_EQ(header->recvWaiting.load(), 1u) << "the receiver never went to sleep";
    const uint32_t rings = header->doorbell.load();
    auto slot = send.value()->waitSlot(contextFor(1));
    ASSERT_TRUE(slot.ok()) << slot.status().message();
    send.value()->post(fillMessage(slot.value(), 9, seq, 64));
    EXPECT_EQ(header->doorbell.load(), rings + 1) << "the post did not ring the doorbell";
    receiver.join();
    EXPECT_TRUE(received.ok()) << received.message();
    EXPECT_EQ(header->recvWaiting.load(), 0u) << "the receiver withdraws its announcement";
  }
}

// One FIFO shape for the parameterised stream tests.
struct LlShape {
  const char* name;
  size_t slotBytes;
  LlFifoOptions options;
};

std::string shapeName(const ::testing::TestParamInfo<LlShape>& info) { return info.param.name; }
void PrintTo(const LlShape& shape, std::ostream* os) {
  *os << shape.name << " (" << shape.slotBytes << "-byte slots, " << shape.options.flagBits
      << "-bit flags, first message " << shape.options.firstSequence << ")";
}

const LlShape kShapes[] = {
    {"Plain", 1000, {}},
    {"OddSlot", 3, {}},  // less than a cell, and not a multiple of one
    {"FlagsWrap", 61, {5, 0}},
    {"EveryMessageRewrites", 64, {4, 0}},
    {"CounterWraps", 200, {32, UINT32_MAX - 3000}},
    {"BothWrap", 100, {6, UINT32_MAX - 50}},
};

class LlFifoStreamTest : public ::testing::TestWithParam<LlShape> {};

// The invariant of shm_ll_fifo.cc, read from `view`: no cell of a free slot
// carries the flag of the message that will use it next. `head` and `tail`
// are the receiver's and sender's counts.
::testing::AssertionResult oldCellsLookOld(const ShmSegment& view, uint32_t head, uint32_t tail) {
  const auto* header = static_cast<const ll::Header*>(view.data());
  ll::FlagSpace flags(header->flagBits);
  void* slots = static_cast<char*>(view.data()) + ll::kPage;
  for (uint32_t seq = tail; seq != head + kFifoSlots; ++seq) {
    const ll::Cell* cells = ll::slotCells(slots, header->stride, seq);
    for (size_t i = 0; i < ll::cellsPerSlot(header->slotBytes); ++i) {
      if (ll::flagOf(cells[i].load()) == flags.flag(seq)) {
        return ::testing::AssertionFailure()
               << "cell " << i << " of the slot of message " << seq
               << " carries that message's flag before it was sent (head " << head << ", tail "
               << tail << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Sends and receives in bursts of 1..8 from one thread, checking every
// message and, after every step, the invariant.
TEST_P(LlFifoStreamTest, InOneThread) {
  const LlShape& shape = GetParam();
  const std::string name = uniqueName();
  auto recv = createLlRecvEnd(name, shape.slotBytes, shape.options);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto send = openLlSendEnd(name, shape.slotBytes);
  ASSERT_TRUE(send.ok()) << send.status().message();
  auto view = ShmSegment::open(name);
  ASSERT_TRUE(view.ok()) << view.status().message();

  constexpr uint32_t kMessages = 20000;
  const uint32_t first = shape.options.firstSequence;
  uint32_t sent = 0;
  uint32_t received = 0;
  uint32_t step = 0;
  WaitContext ctx = contextFor(1);
  while (received < kMessages) {
    uint32_t burst = 1 + mix(step++) % kFifoSlots;
    for (uint32_t i = 0; i < burst && sent < kMessages && sent - received < kFifoSlots; ++i) {
      auto slot = send.value()->waitSlot(ctx);
      ASSERT_TRUE(slot.ok()) << slot.status().message();
      send.value()->post(fillMessage(slot.value(), 1, sent, shape.slotBytes));
      ++sent;
      ASSERT_TRUE(oldCellsLookOld(view.value(), first + received, first + sent));
    }
    burst = 1 + mix(step++) % kFifoSlots;
    for (uint32_t i = 0; i < burst && received < sent; ++i) {
      size_t bytes = 0;
      auto slot = recv.value()->waitSlot(ctx, &bytes);
      ASSERT_TRUE(slot.ok()) << slot.status().message();
      ASSERT_TRUE(isMessage(slot.value(), bytes, 1, received, shape.slotBytes));
      recv.value()->release();
      ++received;
      ASSERT_TRUE(oldCellsLookOld(view.value(), first + received, first + sent));
    }
  }
}

TEST_P(LlFifoStreamTest, Threads) {
  const LlShape& shape = GetParam();
  Fifo fifo = makeFifo(uniqueName(), shape.slotBytes, shape.options);
  ASSERT_TRUE(fifo.recv && fifo.send);
  // spinNs 0 sends every wait through the futex sleep and wake.
  for (uint32_t spin : {0u, 2000u}) {
    SCOPED_TRACE("spinNs " + std::to_string(spin));
    WaitContext ctx = contextFor(0, spin);
    runThreads(2, [&](int rank) {
      if (rank == 0) {
        sendStream(*fifo.send, spin, 10000, ctx);
      } else {
        recvStream(*fifo.recv, spin, 10000, ctx);
      }
    });
  }
}

TEST_P(LlFifoStreamTest, Processes) {
  const LlShape& shape = GetParam();
  const std::string name = uniqueName();
  runProcesses(2, [&](int rank) {
    WaitContext ctx = contextFor(1 - rank, 2000);
    if (rank == 0) {
      auto recv = createLlRecvEnd(name, shape.slotBytes, shape.options);
      ASSERT_TRUE(recv.ok()) << recv.status().message();
      recvStream(*recv.value(), 3, 10000, ctx);
      return;
    }
    std::unique_ptr<SendEnd> send = openWhenReady(name, shape.slotBytes);
    ASSERT_NE(send, nullptr);
    ASSERT_TRUE(unlinkSegment(name).ok());
    sendStream(*send, 3, 10000, ctx);
  });
  EXPECT_FALSE(existsInDevShm(name));
}

INSTANTIATE_TEST_SUITE_P(LlFifo, LlFifoStreamTest, ::testing::ValuesIn(kShapes), shapeName);

// Messages go back and forth: each side blocks in waitSlot on both FIFOs in
// turn, so the receiver's sleep on the doorbell and the sender's on head
// both run, in both directions.
TEST(LlFifoTest, PingPongThreads) {
  for (uint32_t spin : {0u, 2000u}) {
    SCOPED_TRACE("spinNs " + std::to_string(spin));
    Fifo there = makeFifo(uniqueName(0), 256);
    Fifo back = makeFifo(uniqueName(1), 256);
    ASSERT_TRUE(there.recv && back.recv);
    constexpr uint32_t kRounds = 5000;
    runThreads(2, [&](int rank) {
      WaitContext ctx = contextFor(1 - rank, spin);
      for (uint32_t seq = 0; seq < kRounds; ++seq) {
        if (rank == 0) {
          ASSERT_NO_FATAL_FAILURE(sendStream(*there.send, seq, 1, ctx));
          ASSERT_NO_FATAL_FAILURE(recvStream(*back.recv, seq + 1, 1, ctx));
        } else {
          ASSERT_NO_FATAL_FAILURE(recvStream(*there.recv, seq, 1, ctx));
          ASSERT_NO_FATAL_FAILURE(sendStream(*back.send, seq + 1, 1, ctx));
        }
      }
    });
  }
}

// One end of a FIFO inside exchange(), with its stream and progress.
struct Outgoing {
  SendEnd* end;
  uint32_t stream;
  uint32_t sent = 0;
};
struct Incoming {
  RecvEnd* end;
  uint32_t stream;
  uint32_t received = 0;
};

// Moves `count` messages over every connection with trySlot only, the way
// an executor advancing several connections at once would; a receiver
// therefore often finds a message half written.
void exchange(std::vector<Outgoing>& outs, std::vector<Incoming>& ins, uint32_t count) {
  auto deadline = Deadline::afterMs(60000);
  for (;;) {
    bool done = true;
    bool progress = false;
    for (Outgoing& out : outs) {
      if (out.sent == count) continue;
      done = false;
      if (void* slot = out.end->trySlot()) {
        out.end->post(fillMessage(slot, out.stream, out.sent++, out.end->slotBytes()));
        progress = true;
      }
    }
    for (Incoming& in : ins) {
      if (in.received == count) continue;
      done = false;
      size_t bytes = 0;
      if (const void* slot = in.end->trySlot(&bytes)) {
        ASSERT_TRUE(isMessage(slot, bytes, in.stream, in.received++, in.end->slotBytes()));
        in.end->release();
        progress = true;
      }
    }
    if (done) return;
    if (!progress) {
      ASSERT_FALSE(deadline.expired()) << "no progress for 60 s";
      std::this_thread::yield();
    }
  }
}

uint32_t streamOf(int sender, int receiver, int channel) {
  return static_cast<uint32_t>(sender * 100 + receiver * 10 + channel);
}

// Slot sizes and flag spaces differ per channel, so one test mixes them.
size_t slotBytesOf(int channel) { return channel == 0 ? 61 : 1000; }
LlFifoOptions optionsOf(int channel) {
  return channel == 0 ? LlFifoOptions{5, 0} : LlFifoOptions{};
}

// Four threads, two FIFOs from each to each: 24 FIFOs busy at once.
TEST(LlFifoTest, AllToAllThreads) {
  constexpr int kRanks = 4;
  constexpr int kChannels = 2;
  std::vector<Fifo> fifos;
  std::vector<std::vector<Outgoing>> outs(kRanks);
  std::vector<std::vector<Incoming>> ins(kRanks);
  fifos.reserve(kRanks * kRanks * kChannels);
  for (int from = 0; from < kRanks; ++from) {
    for (int to = 0; to < kRanks; ++to) {
      for (int channel = 0; channel < kChannels && from != to; ++channel) {
        fifos.push_back(makeFifo(uniqueName(channel), slotBytesOf(channel), optionsOf(channel)));
        ASSERT_TRUE(fifos.back().recv && fifos.back().send);
        outs[from].push_back({fifos.back().send.get(), streamOf(from, to, channel)});
        ins[to].push_back({fifos.back().recv.get(), streamOf(from, to, channel)});
      }
    }
  }
  runThreads(kRanks, [&](int rank) { exchange(outs[rank], ins[rank], 3000); });
}

// Three processes, two FIFOs from each to each, every rank creating its
// incoming ends and opening its outgoing ones whenever it gets to them.
TEST(LlFifoTest, AllToAllProcesses) {
  constexpr int kRanks = 3;
  constexpr int kChannels = 2;
  const uint64_t magic = (static_cast<uint64_t>(getpid()) << 32) | 0xffff0000u;
  runProcesses(kRanks, [&](int rank) {
    std::vector<std::unique_ptr<RecvEnd>> recvs;
    std::vector<std::unique_ptr<SendEnd>> sends;
    std::vector<Outgoing> outs;
    std::vector<Incoming> ins;
    for (int peer = 0; peer < kRanks; ++peer) {
      for (int channel = 0; channel < kChannels && peer != rank; ++channel) {
        std::string name = segmentName(magic, peer, rank, channel);
        auto recv = createLlRecvEnd(name, slotBytesOf(channel), optionsOf(channel));
        ASSERT_TRUE(recv.ok()) << recv.status().message();
        recvs.push_back(std::move(recv).value());
        ins.push_back({recvs.back().get(), streamOf(peer, rank, channel)});
      }
    }
    for (int peer = 0; peer < kRanks; ++peer) {
      for (int channel = 0; channel < kChannels && peer != rank; ++channel) {
        std::string name = segmentName(magic, rank, peer, channel);
        sends.push_back(openWhenReady(name, slotBytesOf(channel)));
        ASSERT_NE(sends.back(), nullptr);
        ASSERT_TRUE(unlinkSegment(name).ok());
        outs.push_back({sends.back().get(), streamOf(rank, peer, channel)});
      }
    }
    exchange(outs, ins, 3000);
  });
  for (int from = 0; from < kRanks; ++from) {
    for (int to = 0; to < kRanks; ++to) {
      EXPECT_FALSE(existsInDevShm(segmentName(magic, from, to, 0)));
    }
  }
}

// 16 threads on (typically) 2 cores: if waiters spun instead of sleeping,
// each message would cost a scheduler time slice and this would not finish.
TEST(LlFifoTest, ManyPairsOversubscribed) {
  constexpr int kPairs = 8;
  std::vector<Fifo> fifos;
  for (int pair = 0; pair < kPairs; ++pair) {
    fifos.push_back(makeFifo(uniqueName(pair), 256));
    ASSERT_TRUE(fifos.back().recv && fifos.back().send);
  }
  runThreads(2 * kPairs, [&](int thread) {
    WaitContext ctx = contextFor(thread ^ 1, 2000);
    Fifo& fifo = fifos[thread / 2];
    if (thread % 2 == 0) {
      sendStream(*fifo.send, thread, 5000, ctx);
    } else {
      recvStream(*fifo.recv, thread - 1, 5000, ctx);
    }
  });
}

TEST(LlFifoTest, WaitWithNobodyThereTimesOut) {
  Fifo fifo = makeFifo(uniqueName(), 64);
  ASSERT_TRUE(fifo.recv && fifo.send);
  expectWaitsTimeOut(*fifo.recv, *fifo.send);
  if (::testing::Test::HasFatalFailure()) return;

  // A message that arrives after a timeout is still delivered whole.
  size_t bytes = 0;
  auto in = fifo.recv->waitSlot(contextFor(3), &bytes);
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(bytes, 1u);
}

TEST(LlFifoTest, AbortEndsBlockedWaits) {
  Fifo full = makeFifo(uniqueName(0), 64);
  Fifo idle = makeFifo(uniqueName(1), 64);
  ASSERT_TRUE(full.send && idle.recv);
  expectAbortEndsWaits(*full.send, *idle.recv);
}

}  // namespace
}  // namespace braid::transport::shm::shm_ll_fifo_test
