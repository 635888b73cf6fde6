// Tests of the one-shot all_reduce board (src/exec/one_shot.h).
//
// Ranks run as threads (1 to 8 of them, on however few cores) or as forked
// processes and make long sequences of calls that every rank derives from
// one seed: float32, bfloat16 and int32 data, sum, prod, max, min, avg and
// premulsum (a different scalar on every rank), sizes from one element to
// the board's maximum across chunk boundaries, in place and out of place,
// with the simple protocol, LL, or both alternating. Every output must equal,
// bit for bit, the fold of the ranks' loaded inputs in the in-order tree's
// order (algo::foldInOrder) computed here on whole buffers; integer sums,
// whose value does not depend on the order, are also checked against a plain
// loop, so a fold that skipped or repeated a rank could not pass.
//
// Slow ranks (sleeps between calls) check the double buffering and, with an
// LL flag period of 2, the zeroing of slots whose flags would repeat.
// Failures: a peer that never comes (deadline), the abort flag, oversized
// calls, boards of different sizes.
#include "exec/one_shot.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/membarrier.h"
#include "kernels/float_types.h"
#include "support/fifo_contract.h"
#include "support/in_order_reference.h"
#include "support/multiprocess.h"
#include "support/shared_barrier.h"

namespace braid::exec {
namespace {

using algo::Protocol;
using braid::testing::existsInDevShm;
using braid::testing::SharedBarrier;
using Bytes = std::vector<unsigned char>;
using braid::testing::mixSeed;

// A nonce no other test (in this or a parallel run) uses.
uint64_t uniqueNonce() {
  static std::atomic<uint32_t> counter{0};
  return (static_cast<uint64_t>(getpid()) << 32) | (0x80000000u + counter.fetch_add(1));
}

transport::WaitContext waitContext(uint32_t spinNs, int64_t timeoutMs = 20000) {
  transport::WaitContext wait;
  wait.deadline = Deadline::afterMs(timeoutMs);
  wait.spinNs = spinNs;
  return wait;
}

// ---- Calls: what every rank does, derived from a seed ------------------------

struct CallSpec {
  DataType type;
  RedOp op;
  size_t count;
  Protocol protocol;
  bool inPlace;
};

enum class ProtocolMode { kSimple, kLl, kMixed };

std::vector<CallSpec> makeCalls(int ncalls, uint64_t seed, size_t maxBytes, ProtocolMode mode) {
  const DataType types[] = {DataType::kFloat32, DataType::kBfloat16, DataType::kInt32};
  const RedOp ops[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax,
                       RedOp::kMin, RedOp::kAvg,  RedOp::kPreMulSum};
  std::mt19937_64 rng(seed);
  std::vector<CallSpec> calls;
  for (int i = 0; i < ncalls; ++i) {
    CallSpec c{};
    c.type = types[rng() % 3];
    c.op = ops[rng() % 6];
    const size_t elem = dataTypeSize(c.type);
    const size_t maxElems = maxBytes / elem;
    const size_t chunkElems = OneShotBoard::kChunkBytes / elem;
    const size_t special[] = {
        1, 2, 3, chunkElems - 1, chunkElems, chunkElems + 1, maxElems - 1, maxElems};
    c.count = rng() % 2 == 0 ? special[rng() % 8] : 1 + rng() % maxElems;
    c.protocol = mode == ProtocolMode::kSimple ? Protocol::kSimple
                 : mode == ProtocolMode::kLl   ? Protocol::kLl
                 : rng() % 2 == 0              ? Protocol::kSimple
                                               : Protocol::kLl;
    c.inPlace = rng() % 4 == 0;
    calls.push_back(c);
  }
  return calls;
}

// Rank r's operator: premulsum's scalar differs from rank to rank.
kernels::HostOp rankOp(const CallSpec& c, int rank, int nranks) {
  kernels::OpArgs args;
  args.nranks = nranks;
  const float scalar = 0.75f + 0.25f * static_cast<float>(rank);
  if (c.type == DataType::kFloat32) {
    args.setScalar(&scalar, 4);
  } else if (c.type == DataType::kBfloat16) {
    const uint16_t bits = kernels::Bfloat16::fromFloat(scalar).bits;
    args.setScalar(&bits, 2);
  } else {
    const int32_t value = rank + 2;
    args.setScalar(&value, 4);
  }
  auto op = kernels::hostOp(c.type, c.op, args);
  EXPECT_TRUE(op.ok()) << op.status().message();
  return op.ok() ? op.value() : kernels::HostOp{};
}

Bytes rankInput(const CallSpec& c, uint64_t seed, int call, int rank) {
  return braid::testing::spreadInput(c.type, c.count,
                                     mixSeed(seed ^ mixSeed(call * 1000003ull + rank)));
}

// The fold of every rank's loaded input in foldInOrder's order, on whole
// buffers, with avg's finish applied.
Bytes referenceResult(const CallSpec& c, uint64_t seed, int call, int nranks) {
  const size_t elem = dataTypeSize(c.type);
  std::vector<Bytes> loaded(nranks);
  for (int r = 0; r < nranks; ++r) {
    const Bytes input = rankInput(c, seed, call, r);
    loaded[r].resize(input.size());
    rankOp(c, r, nranks).loadInput(loaded[r].data(), input.data(), c.count, elem);
  }
  const kernels::HostOp op = rankOp(c, 0, nranks);
  return braid::testing::inOrderReference(loaded, op, c.type, c.op, c.count);
}

std::string describe(const CallSpec& c, int call) {
  return "call " + std::to_string(call) + ": " + std::to_string(c.count) + " x " +
         dataTypeName(c.type) + " " + redOpName(c.op) + " " +
         (c.protocol == Protocol::kLl ? "ll" : "simple") + (c.inPlace ? " in place" : "");
}

// ---- One rank running a sequence of calls --------------------------------------

struct Scenario {
  uint64_t nonce;
  uint64_t seed;
  int nranks;
  size_t maxBytes = 16 * 1024;
  std::vector<CallSpec> calls;
  uint32_t spinNs = 0;
  uint32_t llFlagPeriod = OneShotBoard::kLlFlagPeriod;
  /// Before call i, rank (i % nranks) sleeps this long when i % 3 == 0.
  int slowRankSleepUs = 0;
  /// create's fencelessPublish: the readers force the publishers' fence before they sleep.
  bool fencelessPublish = false;
};

// Runs every call of the scenario on `rank`, checks each output against
// the reference and returns the outputs (for the cross-rank comparison).
std::vector<Bytes> runRank(const Scenario& s, int rank, SharedBarrier& barrier) {
  std::vector<Bytes> outputs;
  auto board = OneShotBoard::create(
      s.nonce, rank, s.nranks, s.maxBytes, [&barrier] { return barrier.wait(); }, s.llFlagPeriod,
      s.fencelessPublish);
  EXPECT_TRUE(board.ok()) << "rank " << rank << ": " << board.status().message();
  if (!board.ok()) return outputs;
  // Fenceless where asked and the kernel has the barrier (Linux 4.16 on; this suite's machines).
  EXPECT_EQ(board.value()->fencelessPublish(), s.fencelessPublish && membarrier::available());
  for (int i = 0; i < static_cast<int>(s.calls.size()); ++i) {
    const CallSpec& c = s.calls[i];
    if (s.slowRankSleepUs > 0 && i % 3 == 0 && i % s.nranks == rank) {
      std::this_thread::sleep_for(std::chrono::microseconds(s.slowRankSleepUs));
    }
    const size_t elem = dataTypeSize(c.type);
    const kernels::HostOp op = rankOp(c, rank, s.nranks);
    Bytes input = rankInput(c, s.seed, i, rank);
    Bytes separate(input.size(), 0xa5);
    Bytes& output = c.inPlace ? input : separate;
    Status status = board.value()->allReduce(input.data(), output.data(), c.count, elem, op,
                                             c.protocol, waitContext(s.spinNs));
    EXPECT_TRUE(status.ok()) << "rank " << rank << " " << describe(c, i) << ": "
                             << status.message();
    if (!status.ok()) return outputs;
    op.finishOutput(output.data(), c.count);
    const Bytes expected = referenceResult(c, s.seed, i, s.nranks);
    if (output != expected) {
      size_t at = 0;
      while (output[at] == expected[at]) ++at;
      ADD_FAILURE() << "rank " << rank << " " << describe(c, i) << ": wrong bits at element "
                    << at / elem;
      return outputs;
    }
    outputs.push_back(output);
  }
  EXPECT_EQ(board.value()->calls(), s.calls.size());
  return outputs;
}

void runThreadScenario(const Scenario& s) {
  SharedBarrier barrier(s.nranks);
  std::vector<std::vector<Bytes>> outputs(s.nranks);
  braid::testing::runThreads(s.nranks,
                             [&](int rank) { outputs[rank] = runRank(s, rank, barrier); });
  for (int r = 1; r < s.nranks; ++r) {
    EXPECT_TRUE(outputs[r] == outputs[0]) << "rank " << r << "'s outputs differ from rank 0's";
  }
  for (int r = 0; r < s.nranks; ++r) {
    EXPECT_FALSE(existsInDevShm(oneShotSegmentName(s.nonce, r))) << "rank " << r;
  }
}

// ---- The sequences --------------------------------------------------------------

struct SequenceParam {
  int nranks;
  ProtocolMode mode;
  uint32_t spinNs;
};

class OneShotSequenceTest : public ::testing::TestWithParam<SequenceParam> {};

TEST_P(OneShotSequenceTest, MatchesInOrderFoldBitForBit) {
  const SequenceParam p = GetParam();
  Scenario s;
  s.nonce = uniqueNonce();
  s.seed = mixSeed(s.nonce) ^ static_cast<uint64_t>(p.nranks);
  s.nranks = p.nranks;
  s.calls = makeCalls(120, s.seed, s.maxBytes, p.mode);
  s.spinNs = p.spinNs;
  runThreadScenario(s);
}

std::vector<SequenceParam> sequenceParams() {
  std::vector<SequenceParam> params;
  for (int nranks : {1, 2, 3, 4, 5, 8}) {
    for (ProtocolMode mode : {ProtocolMode::kSimple, ProtocolMode::kLl, ProtocolMode::kMixed}) {
      for (uint32_t spin : {0u, 5000u}) params.push_back({nranks, mode, spin});
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(OneShot, OneShotSequenceTest, ::testing::ValuesIn(sequenceParams()),
                         [](const auto& info) {
                           const SequenceParam& p = info.param;
                           const char* mode = p.mode == ProtocolMode::kSimple ? "simple"
                                              : p.mode == ProtocolMode::kLl   ? "ll"
                                                                              : "mixed";
                           return std::to_string(p.nranks) + "ranks_" + mode + "_spin" +
                                  std::to_string(p.spinNs);
                         });

// The check above has teeth only if the order matters for the data: the
// in-order fold of 8 ranks' float sums must differ from a left-to-right one.
TEST(OneShotTest, InOrderFoldDiffersFromSequentialForFloats) {
  const CallSpec c{DataType::kFloat32, RedOp::kSum, 1024, Protocol::kSimple, false};
  const int nranks = 8;
  const Bytes inOrder = referenceResult(c, 42, 0, nranks);
  Bytes sequential = rankInput(c, 42, 0, 0);
  const kernels::HostOp op = rankOp(c, 0, nranks);
  for (int r = 1; r < nranks; ++r) {
    const Bytes input = rankInput(c, 42, 0, r);
    op.reduce(op.args, sequential.data(), sequential.data(), input.data(), c.count);
  }
  EXPECT_NE(inOrder, sequential);
}

// A rank sleeps now and then, so fast ranks publish call k+1 while it still
// has call k to read, and wait on it for long enough to sleep in the kernel.
// The LL flag period of 3 makes flags repeat every third call of a parity:
// without zeroing the slot in time, the readers of a call whose writer
// sleeps would take lines an earlier, larger call left there for its own.
TEST(OneShotTest, SlowRanksAndRepeatingLlFlags) {
  for (ProtocolMode mode : {ProtocolMode::kLl, ProtocolMode::kMixed}) {
    Scenario s;
    s.nonce = uniqueNonce();
    s.seed = mixSeed(s.nonce);
    s.nranks = 4;
    s.llFlagPeriod = 3;
    s.calls = makeCalls(90, s.seed, s.maxBytes, mode);
    // Every third generation of a parity is a full-size call, the two between
    // are small, so the full ones find the lines of the previous full one,
    // which carry their flag, beyond what the small ones overwrote.
    for (size_t i = 0; i < s.calls.size(); ++i) {
      const size_t maxElems = s.maxBytes / dataTypeSize(s.calls[i].type);
      s.calls[i].count = (i / 2) % 3 == 0 ? maxElems : 1 + i % 7;
    }
    s.slowRankSleepUs = 3000;
    s.spinNs = 2000;
    runThreadScenario(s);
  }
}

// The same slow ranks, publishing without a fence: each reader that goes to sleep forces the
// barrier on its peers first (base/membarrier.h). Every result stays right while readers sleep
// in the kernel in both protocols (simple waits for a counter, LL for its lines). A wake lost
// to a missing fence would cost a sleep slice, not a result, which this cannot see; the pairing
// argument is in peer_wait.h.
TEST(OneShotTest, SlowRanksPublishingWithoutAFence) {
  for (ProtocolMode mode : {ProtocolMode::kSimple, ProtocolMode::kLl}) {
    Scenario s;
    s.nonce = uniqueNonce();
    s.seed = mixSeed(s.nonce);
    s.nranks = 3;
    s.calls = makeCalls(60, s.seed, s.maxBytes, mode);
    s.slowRankSleepUs = 3000;
    s.fencelessPublish = true;
    runThreadScenario(s);
  }
}

TEST(OneShotTest, FourProcesses) {
  Scenario s;
  s.nonce = uniqueNonce();
  s.seed = mixSeed(s.nonce);
  s.nranks = 4;
  s.calls = makeCalls(150, s.seed, s.maxBytes, ProtocolMode::kMixed);
  s.slowRankSleepUs = 500;
  SharedBarrier barrier(s.nranks);
  braid::testing::runProcesses(s.nranks, [&](int rank) { runRank(s, rank, barrier); });
  for (int r = 0; r < s.nranks; ++r) EXPECT_FALSE(existsInDevShm(oneShotSegmentName(s.nonce, r)));
}

// ---- Failures --------------------------------------------------------------------

// Rank 0 calls; rank 1 made its board but never calls. Rank 0's wait must end
// at its deadline (or on the abort flag) naming rank 1, and the board must
// refuse the calls after that.
void expectWaitForAbsentPeerFails(Protocol protocol, bool useAbort) {
  SharedBarrier barrier(2);
  const uint64_t nonce = uniqueNonce();
  std::atomic<bool> rank0Done{false};
  std::atomic<bool> abort{false};
  braid::testing::runThreads(2, [&](int rank) {
    auto board = OneShotBoard::create(nonce, rank, 2, 4096, [&] { return barrier.wait(); });
    ASSERT_TRUE(board.ok()) << board.status().message();
    if (rank == 1) {
      if (useAbort) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        abort.store(true);
      }
      while (!rank0Done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return;
    }
    // Before the deadline is made, so that the wait measured covers all of its 200 ms.
    const auto start = std::chrono::steady_clock::now();
    transport::WaitContext wait = waitContext(100, useAbort ? 0 : 200);
    wait.abort = &abort;
    std::vector<float> data(100, 1.0f);
    const CallSpec c{DataType::kFloat32, RedOp::kSum, data.size(), protocol, true};
    const kernels::HostOp op = rankOp(c, 0, 2);
    Status status =
        board.value()->allReduce(data.data(), data.data(), data.size(), 4, op, protocol, wait);
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(status.code(), ErrorCode::kRemoteError) << status.message();
    const std::string& message = status.message();
    EXPECT_NE(message.find("one-shot all_reduce call 0"), std::string::npos) << message;
    EXPECT_NE(message.find("waiting for rank 1"), std::string::npos) << message;
    EXPECT_NE(message.find(useAbort ? "aborted" : "timed out"), std::string::npos) << message;
    if (!useAbort) {
      EXPECT_GE(waited, std::chrono::milliseconds(200));
    }
    Status again = board.value()->allReduce(data.data(), data.data(), data.size(), 4, op, protocol,
                                            waitContext(100, 200));
    EXPECT_EQ(again.code(), ErrorCode::kInvalidUsage) << again.message();
    EXPECT_NE(again.message().find("unusable"), std::string::npos) << again.message();
    rank0Done.store(true);
  });
}

TEST(OneShotTest, AbsentPeerTimesOutSimple) {
  expectWaitForAbsentPeerFails(Protocol::kSimple, false);
}
TEST(OneShotTest, AbsentPeerTimesOutLl) { expectWaitForAbsentPeerFails(Protocol::kLl, false); }
TEST(OneShotTest, AbortEndsWaitSimple) { expectWaitForAbsentPeerFails(Protocol::kSimple, true); }
TEST(OneShotTest, AbortEndsWaitLl) { expectWaitForAbsentPeerFails(Protocol::kLl, true); }

TEST(OneShotTest, OversizedAndMalformedCallsAreRefused) {
  SharedBarrier barrier(2);
  const uint64_t nonce = uniqueNonce();
  braid::testing::runThreads(2, [&](int rank) {
    auto created = OneShotBoard::create(nonce, rank, 2, 1024, [&] { return barrier.wait(); });
    ASSERT_TRUE(created.ok()) << created.status().message();
    OneShotBoard& board = *created.value();
    EXPECT_EQ(board.maxBytes(), 1024u);
    const CallSpec c{DataType::kFloat32, RedOp::kSum, 257, Protocol::kSimple, false};
    const kernels::HostOp op = rankOp(c, rank, 2);
    std::vector<float> in(257, 1.0f), out(257, 0.0f);
    const auto wait = waitContext(1000);
    for (Protocol protocol : {Protocol::kSimple, Protocol::kLl}) {
      Status big = board.allReduce(in.data(), out.data(), 257, 4, op, protocol, wait);
      EXPECT_EQ(big.code(), ErrorCode::kInvalidUsage) << big.message();
      EXPECT_NE(big.message().find("257 elements of 4 bytes"), std::string::npos) << big.message();
      EXPECT_NE(big.message().find("1024"), std::string::npos) << big.message();
    }
    EXPECT_EQ(board.allReduce(in.data(), out.data(), 16, 3, op, Protocol::kLl, wait).code(),
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(board.allReduce(nullptr, out.data(), 16, 4, op, Protocol::kLl, wait).code(),
              ErrorCode::kInvalidArgument);
    EXPECT_TRUE(board.allReduce(nullptr, nullptr, 0, 4, op, Protocol::kLl, wait).ok());
    EXPECT_EQ(board.calls(), 0u) << "refused and empty calls are not calls";
    // The board still works, at its full size.
    Status ok = board.allReduce(in.data(), out.data(), 256, 4, op, Protocol::kLl, wait);
    EXPECT_TRUE(ok.ok()) << ok.message();
    EXPECT_EQ(out[0], 2.0f);
    EXPECT_EQ(out[255], 2.0f);
    EXPECT_EQ(board.calls(), 1u);
  });
}

// Both ranks fail. Which message each gets depends on timing: a rank that
// finds the mismatch gives up and removes its own segment, so the other may
// find the mismatch too or find that segment gone.
TEST(OneShotTest, BoardsOfDifferentSizesRefuseEachOther) {
  SharedBarrier barrier(2);
  const uint64_t nonce = uniqueNonce();
  std::vector<Status> results(2);
  braid::testing::runThreads(2, [&](int rank) {
    results[rank] = OneShotBoard::create(nonce, rank, 2, rank == 0 ? 4096 : 8192, [&] {
                      return barrier.wait();
                    }).status();
  });
  int mismatches = 0;
  for (const Status& status : results) {
    EXPECT_FALSE(status.ok());
    if (status.message().find("different one-shot sizes") != std::string::npos) {
      EXPECT_EQ(status.code(), ErrorCode::kInvalidUsage);
      EXPECT_NE(status.message().find("4096"), std::string::npos) << status.message();
      EXPECT_NE(status.message().find("8192"), std::string::npos) << status.message();
      ++mismatches;
    } else {
      EXPECT_NE(status.message().find("No such file"), std::string::npos) << status.message();
    }
  }
  EXPECT_GE(mismatches, 1);
  EXPECT_FALSE(existsInDevShm(oneShotSegmentName(nonce, 0)));
  EXPECT_FALSE(existsInDevShm(oneShotSegmentName(nonce, 1)));
}

TEST(OneShotTest, BadCreateArgumentsAreRefused) {
  auto noBarrier = [] { return Status(); };
  EXPECT_EQ(OneShotBoard::create(1, 2, 2, 1024, noBarrier).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OneShotBoard::create(1, 0, 0, 1024, noBarrier).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OneShotBoard::create(1, 0, 1, 0, noBarrier).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(OneShotBoard::create(1, 0, 1, 1024, noBarrier, 1).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(OneShotTest, SegmentNameFormat) {
  EXPECT_EQ(oneShotSegmentName(0x0123456789abcdefull, 7), "/braid-0123456789abcdef-oneshot-7");
}

}  // namespace
}  // namespace braid::exec
