// Tests of the zero-copy all_reduce board (src/exec/zero_copy.h).
//
// Ranks run as forked processes (their buffers reached with
// process_vm_readv / process_vm_writev) or as threads of this process
// (plain copies), 2 to 5 of them, and make sequences of calls that every
// rank derives from one seed: float32, bfloat16, float16, float64, int32 and
// int8 data, sum, prod, max, min and avg, counts from one element to several
// chunks, with blocks that are empty on the last ranks, in place and out of
// place. Every output must equal, bit for bit, the fold of the ranks' inputs
// in the in-order tree's order computed here on whole buffers (what the
// deterministic ring gives), and the integer sums a plain loop as well, so
// a fold that skipped or repeated a rank could not pass.
//
// Failures: a peer that never comes (deadline, naming it), the abort flag,
// a probe refused on one rank (every rank then finds the board unusable,
// with the reason), and which calls keep their bits (zeroCopyKeepsResult).
#include "exec/zero_copy.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/float_types.h"
#include "support/fifo_contract.h"
#include "support/in_order_reference.h"
#include "support/multiprocess.h"
#include "support/shared_barrier.h"
#include "transport/shm/shared_host_memory.h"

namespace braid::exec {
namespace {

using braid::testing::existsInDevShm;
using braid::testing::SharedBarrier;
using Bytes = std::vector<unsigned char>;
using braid::testing::mixSeed;

uint64_t uniqueNonce() {
  static std::atomic<uint32_t> counter{0};
  return (static_cast<uint64_t>(getpid()) << 32) | (0x40000000u + counter.fetch_add(1));
}

transport::WaitContext waitContext(int64_t timeoutMs = 20000) {
  transport::WaitContext wait;
  wait.deadline = Deadline::afterMs(timeoutMs);
  wait.spinNs = 2000;
  return wait;
}

struct CallSpec {
  Collective collective;
  DataType type;
  RedOp op;
  size_t count;  ///< per rank, as the API counts (reduce_scatter's output, all_gather's input)
  bool inPlace;
};

std::string describe(const CallSpec& c, int call) {
  return "call " + std::to_string(call) + ": " + collectiveName(c.collective) + " of " +
         std::to_string(c.count) + " x " + dataTypeName(c.type) + " " + redOpName(c.op) +
         (c.inPlace ? " in place" : "");
}

size_t inputElems(const CallSpec& c, int nranks) {
  return c.collective == Collective::kReduceScatter ? c.count * nranks : c.count;
}
size_t outputElems(const CallSpec& c, int nranks) {
  return c.collective == Collective::kAllGather ? c.count * nranks : c.count;
}

// Counts that matter: 1 element (one rank has it all), fewer elements than
// ranks (empty blocks), a block that is one chunk give or take one element,
// several chunks and a ragged tail.
std::vector<CallSpec> makeCalls(int ncalls, uint64_t seed, int nranks, size_t chunkBytes) {
  const DataType types[] = {DataType::kFloat32, DataType::kBfloat16, DataType::kFloat16,
                            DataType::kFloat64, DataType::kInt32,    DataType::kInt8};
  const RedOp ops[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg};
  std::mt19937_64 rng(seed);
  const Collective collectives[] = {Collective::kAllReduce, Collective::kReduceScatter,
                                    Collective::kAllGather};
  std::vector<CallSpec> calls;
  for (int i = 0; i < ncalls; ++i) {
    CallSpec c{};
    c.collective = collectives[i % 3];
    c.type = types[rng() % 6];
    c.op = ops[rng() % 5];
    const size_t chunk = chunkBytes / dataTypeSize(c.type);
    const size_t n = static_cast<size_t>(nranks);
    const size_t special[] = {1,
                              n - 1,
                              n,
                              chunk * n - 1,
                              chunk * n,
                              chunk * n + 1,
                              3 * chunk * n + 7,
                              1 + rng() % (4 * chunk * n)};
    c.count = std::max<size_t>(1, special[rng() % 8]);
    c.inPlace = rng() % 3 == 0;
    calls.push_back(c);
  }
  return calls;
}

kernels::HostOp opFor(const CallSpec& c, int nranks) {
  kernels::OpArgs args;
  args.nranks = nranks;
  auto op = kernels::hostOp(c.type, c.op, args);
  EXPECT_TRUE(op.ok()) << op.status().message();
  return op.ok() ? op.value() : kernels::HostOp{};
}

Bytes rankInput(const CallSpec& c, uint64_t seed, int call, int rank, int nranks) {
  return braid::testing::spreadInput(c.type, inputElems(c, nranks),
                                     mixSeed(seed ^ mixSeed(call * 1000003ull + rank)));
}

// What `rank`'s output must hold: the in-order fold of every input (all_reduce) or of every
// input's block `rank` (reduce_scatter), or every rank's input in rank order (all_gather).
Bytes referenceResult(const CallSpec& c, uint64_t seed, int call, int nranks, int rank) {
  std::vector<Bytes> inputs(nranks);
  for (int r = 0; r < nranks; ++r) inputs[r] = rankInput(c, seed, call, r, nranks);
  const size_t blockBytes = c.count * dataTypeSize(c.type);
  if (c.collective == Collective::kAllGather) {
    Bytes all;
    for (const Bytes& in : inputs) all.insert(all.end(), in.begin(), in.end());
    return all;
  }
  if (c.collective == Collective::kReduceScatter) {
    for (Bytes& in : inputs) {
      in = Bytes(in.begin() + rank * blockBytes, in.begin() + (rank + 1) * blockBytes);
    }
  }
  const kernels::HostOp op = opFor(c, nranks);
  return braid::testing::inOrderReference(inputs, op, c.type, c.op, c.count);
}

struct Scenario {
  uint64_t nonce;
  uint64_t seed;
  int nranks;
  int ncalls = 24;
};

// Where ranks run and where their buffers live, and the mode that must follow.
enum class Where {
  kThreads,          // std::vector buffers of one process: mapped
  kProcesses,        // std::vector buffers: cross-memory copies
  kProcessesShared,  // allocSharedHost buffers (what ncclMemAlloc gives): mapped
};

// A buffer of `bytes` holding `init`: shared memory or a vector's.
class TestBuffer {
 public:
  TestBuffer(const Bytes& init, bool shared) : shared_(shared) {
    if (!shared) {
      vector_ = init;
      data_ = vector_.data();
    } else {
      auto p = transport::shm::allocSharedHost(std::max<size_t>(init.size(), 1));
      EXPECT_TRUE(p.ok()) << p.status().message();
      data_ = p.ok() ? static_cast<unsigned char*>(p.value()) : nullptr;
      if (data_ != nullptr) memcpy(data_, init.data(), init.size());
    }
    size_ = init.size();
  }
  ~TestBuffer() {
    if (shared_ && data_ != nullptr) EXPECT_TRUE(transport::shm::freeSharedHost(data_));
  }
  unsigned char* data() const { return data_; }
  Bytes bytes() const { return Bytes(data_, data_ + size_); }

 private:
  bool shared_;
  Bytes vector_;
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

// Runs the scenario's calls on `rank`; returns how many were right.
int runRank(const Scenario& s, int rank, SharedBarrier& barrier, Where where) {
  // 1 KiB chunks: a few KiB cross every boundary; the default size is covered by the
  // communicator tests (tests/api/zero_copy_processes_test.cc). Processes with vector buffers
  // need cross-memory copies whatever their measured speed.
  ZeroCopyBoard::Options options;
  options.chunkBytes = 1024;
  options.crossMemory =
      where == Where::kProcesses ? CrossMemoryPolicy::kAlways : CrossMemoryPolicy::kNever;
  auto board = ZeroCopyBoard::create(
      s.nonce, rank, s.nranks, [&barrier] { return barrier.wait(); }, options);
  EXPECT_TRUE(board.ok()) << "rank " << rank << ": " << board.status().message();
  if (!board.ok()) return 0;
  EXPECT_TRUE(board.value()->usable()) << board.value()->unusableReason();
  EXPECT_EQ(board.value()->peersInProcess(), where == Where::kThreads);
  const ZeroCopyMode expectedMode =
      where == Where::kProcesses ? ZeroCopyMode::kCrossMemory : ZeroCopyMode::kMapped;
  const std::vector<CallSpec> calls =
      makeCalls(s.ncalls, s.seed, s.nranks, board.value()->chunkBytes());
  int right = 0;
  for (int i = 0; i < s.ncalls; ++i) {
    const CallSpec& c = calls[i];
    // Fresh shared buffers every call: new allocations for the peers to map, more of them
    // than the mappings kept, so the oldest are let go on the way.
    const bool shared = where == Where::kProcessesShared;
    const Bytes init = rankInput(c, s.seed, i, rank, s.nranks);
    const size_t blockBytes = c.count * dataTypeSize(c.type);
    const size_t outBytes = outputElems(c, s.nranks) * dataTypeSize(c.type);
    // In place as NCCL has it: reduce_scatter's output is block `rank` of its input, and
    // all_gather's input is block `rank` of its output.
    Bytes gathered(outBytes, 0xa5);
    if (c.collective == Collective::kAllGather) {
      std::copy(init.begin(), init.end(), gathered.begin() + rank * blockBytes);
    }
    const bool gatherInPlace = c.inPlace && c.collective == Collective::kAllGather;
    TestBuffer input(gatherInPlace ? gathered : init, shared);
    TestBuffer separate(Bytes(outBytes, 0xa5), shared);
    unsigned char* in = gatherInPlace ? input.data() + rank * blockBytes : input.data();
    unsigned char* out = separate.data();
    if (c.inPlace) {
      out = c.collective == Collective::kReduceScatter ? input.data() + rank * blockBytes
                                                       : input.data();
    }
    ZeroCopyMode mode = ZeroCopyMode::kDeclined;
    ZeroCopyBoard& b = *board.value();
    Status status;
    if (c.collective == Collective::kAllReduce) {
      status = b.allReduce(in, out, c.count, c.type, opFor(c, s.nranks), waitContext(), &mode);
    } else if (c.collective == Collective::kReduceScatter) {
      status = b.reduceScatter(in, out, c.count, c.type, opFor(c, s.nranks), waitContext(), &mode);
    } else {
      status = b.allGather(in, out, c.count, c.type, waitContext(), &mode);
    }
    EXPECT_TRUE(status.ok()) << "rank " << rank << " " << describe(c, i) << ": "
                             << status.message();
    if (!status.ok()) return right;
    EXPECT_EQ(mode, expectedMode) << describe(c, i);
    const Bytes expected = referenceResult(c, s.seed, i, s.nranks, rank);
    const Bytes got(out, out + expected.size());
    if (got != expected) {
      size_t at = 0;
      while (got[at] == expected[at]) ++at;
      ADD_FAILURE() << "rank " << rank << " " << describe(c, i) << ": wrong bits at element "
                    << at / dataTypeSize(c.type);
      return right;
    }
    ++right;
  }
  EXPECT_EQ(board.value()->calls(), static_cast<uint64_t>(s.ncalls));
  return right;
}

class ZeroCopyRanks : public ::testing::TestWithParam<int> {};

TEST_P(ZeroCopyRanks, ThreadsGetTheInOrderFoldBitForBit) {
  const Scenario s{uniqueNonce(), 0x5eed0000u + static_cast<uint64_t>(GetParam()), GetParam()};
  SharedBarrier barrier(s.nranks);
  std::vector<int> right(s.nranks);
  braid::testing::runThreads(
      s.nranks, [&](int rank) { right[rank] = runRank(s, rank, barrier, Where::kThreads); });
  for (int r = 0; r < s.nranks; ++r) {
    EXPECT_EQ(right[r], s.ncalls) << "rank " << r;
    EXPECT_FALSE(existsInDevShm(zeroCopySegmentName(s.nonce, r))) << "rank " << r;
  }
}

TEST_P(ZeroCopyRanks, ProcessesGetTheInOrderFoldBitForBitByCrossMemoryCopies) {
  const Scenario s{uniqueNonce(), 0x5eed1000u + static_cast<uint64_t>(GetParam()), GetParam()};
  SharedBarrier barrier(s.nranks);
  // A child's failures end its process with a non-zero status, which runProcesses reports.
  braid::testing::runProcesses(s.nranks, [&](int rank) {
    if (runRank(s, rank, barrier, Where::kProcesses) != s.ncalls) _exit(1);
  });
}

TEST_P(ZeroCopyRanks, ProcessesGetTheInOrderFoldBitForBitInSharedMemoryTheyMap) {
  const Scenario s{uniqueNonce(), 0x5eed2000u + static_cast<uint64_t>(GetParam()), GetParam()};
  SharedBarrier barrier(s.nranks);
  braid::testing::runProcesses(s.nranks, [&](int rank) {
    if (runRank(s, rank, barrier, Where::kProcessesShared) != s.ncalls) _exit(1);
  });
}

// A board of a forked rank that maps buffers and never copies across processes; a board that
// cannot be made ends the process.
std::unique_ptr<ZeroCopyBoard> mappedOnlyBoard(uint64_t nonce, int rank, SharedBarrier& barrier,
                                               int nranks = 2) {
  ZeroCopyBoard::Options options;
  options.crossMemory = CrossMemoryPolicy::kNever;
  auto board = ZeroCopyBoard::create(
      nonce, rank, nranks, [&barrier] { return barrier.wait(); }, options);
  if (!board.ok() || !board.value()->usable()) _exit(2);
  return std::move(board).value();
}

// Without cross-memory copies, a call where one rank's buffers are not shared memory is
// declined by every rank, buffers untouched, and the next call, all shared, still runs.
TEST(ZeroCopyBoard, ACallSomeRankCannotMapIsDeclinedByEveryRank) {
  const uint64_t nonce = uniqueNonce();
  SharedBarrier barrier(2);
  braid::testing::runProcesses(2, [&](int rank) {
    auto board = mappedOnlyBoard(nonce, rank, barrier);
    const CallSpec c{Collective::kAllReduce, DataType::kInt32, RedOp::kSum, 1000, false};
    const Bytes init = rankInput(c, 7, 0, rank, 2);
    TestBuffer input(init, rank == 0);
    TestBuffer output(Bytes(init.size(), 0xa5), rank == 0);
    ZeroCopyMode mode = ZeroCopyMode::kMapped;
    Status s = board->allReduce(input.data(), output.data(), c.count, c.type, opFor(c, 2),
                                waitContext(), &mode);
    if (!s.ok() || mode != ZeroCopyMode::kDeclined) _exit(3);
    if (input.bytes() != init || output.bytes() != Bytes(init.size(), 0xa5)) _exit(4);
    TestBuffer sharedInput(init, true);
    TestBuffer sharedOutput(Bytes(init.size(), 0), true);
    s = board->allReduce(sharedInput.data(), sharedOutput.data(), c.count, c.type, opFor(c, 2),
                         waitContext(), &mode);
    if (!s.ok() || mode != ZeroCopyMode::kMapped) _exit(5);
    if (sharedOutput.bytes() != referenceResult(c, 7, 0, 2, rank)) _exit(6);
    if (board->calls() != 1) _exit(7);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, ZeroCopyRanks, ::testing::Values(2, 3, 5));

// Large mapped calls write their outputs with non-temporal stores (all_reduce's and
// reduce_scatter's a small piece at a time): the bits must not change, in place or not, with a
// ragged last piece, for a 16-bit float with a finish (avg) and for more than 2 ranks too.
struct LargeCase {
  int nranks;
  DataType type;
  RedOp op;
  std::vector<Collective> collectives;
};

class ZeroCopyLarge : public ::testing::TestWithParam<LargeCase> {};

TEST_P(ZeroCopyLarge, AMappedCallStreamsItsOutputsAndKeepsTheBits) {
  const LargeCase& large = GetParam();
  const int n = large.nranks;
  const size_t elemBytes = dataTypeSize(large.type);
  const uint64_t nonce = uniqueNonce();
  SharedBarrier barrier(n);
  braid::testing::runProcesses(n, [&](int rank) {
    auto board = mappedOnlyBoard(nonce, rank, barrier, n);
    int call = 0;
    for (Collective coll : large.collectives) {
      for (bool inPlace : {false, true}) {
        // Each rank writes 8 MiB and more: what makes a call stream.
        const size_t count = (size_t{8} << 20) / elemBytes + 777;
        const CallSpec c{coll, large.type, large.op, count, inPlace};
        const Bytes init = rankInput(c, 11, call, rank, n);
        const size_t block = c.count * elemBytes;
        const size_t outBytes = outputElems(c, n) * elemBytes;
        Bytes initOut(outBytes, 0xa5);
        if (coll == Collective::kAllGather) {
          std::copy(init.begin(), init.end(), initOut.begin() + rank * block);
        }
        TestBuffer input(coll == Collective::kAllGather && inPlace ? initOut : init, true);
        TestBuffer separate(initOut, true);
        unsigned char* in = input.data();
        unsigned char* out = separate.data();
        if (inPlace && coll == Collective::kAllReduce) out = in;
        if (inPlace && coll == Collective::kReduceScatter) out = in + rank * block;
        if (inPlace && coll == Collective::kAllGather) {
          out = input.data();
          in = out + rank * block;
        }
        ZeroCopyMode mode = ZeroCopyMode::kDeclined;
        Status s;
        if (coll == Collective::kAllReduce) {
          s = board->allReduce(in, out, c.count, c.type, opFor(c, n), waitContext(), &mode);
        } else if (coll == Collective::kReduceScatter) {
          s = board->reduceScatter(in, out, c.count, c.type, opFor(c, n), waitContext(), &mode);
        } else {
          s = board->allGather(in, out, c.count, c.type, waitContext(), &mode);
        }
        if (!s.ok() || mode != ZeroCopyMode::kMapped) _exit(3);
        const Bytes expected = referenceResult(c, 11, call, n, rank);
        if (Bytes(out, out + expected.size()) != expected) _exit(10 + call);
        ++call;
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ZeroCopyLarge,
    ::testing::Values(LargeCase{2,
                                DataType::kFloat32,
                                RedOp::kSum,
                                {Collective::kAllReduce, Collective::kReduceScatter,
                                 Collective::kAllGather}},
                      LargeCase{2, DataType::kBfloat16, RedOp::kAvg, {Collective::kAllReduce}},
                      LargeCase{3,
                                DataType::kInt32,
                                RedOp::kSum,
                                {Collective::kAllReduce, Collective::kReduceScatter}}),
    [](const ::testing::TestParamInfo<LargeCase>& info) {
      return std::to_string(info.param.nranks) + "Ranks" +
             std::string(dataTypeName(info.param.type)) + std::string(redOpName(info.param.op));
    });

TEST(StreamBytes, CopiesEveryLengthAtEveryAlignment) {
  std::vector<unsigned char> from(512);
  for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<unsigned char>(i * 7 + 3);
  for (size_t dstOffset = 0; dstOffset < 16; ++dstOffset) {
    for (size_t srcOffset : {0, 1, 8, 15}) {
      for (size_t bytes : {0, 1, 15, 16, 17, 63, 64, 65, 130, 400}) {
        std::vector<unsigned char> to(512, 0xee);
        kernels::streamBytes(to.data() + dstOffset, from.data() + srcOffset, bytes);
        for (size_t i = 0; i < to.size(); ++i) {
          const bool inside = i >= dstOffset && i < dstOffset + bytes;
          const unsigned char want = inside ? from[srcOffset + i - dstOffset] : 0xee;
          ASSERT_EQ(to[i], want) << "dst +" << dstOffset << " src +" << srcOffset << ", " << bytes
                                 << " bytes, at " << i;
        }
      }
    }
  }
}

// One streamed piece into every output at once: each output gets the bytes at the same offset,
// whatever its own alignment, and nothing outside them.
TEST(StreamBytes, StreamToEachCopiesIntoEveryDestinationAtTheOffset) {
  std::vector<unsigned char> from(512);
  for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<unsigned char>(i * 13 + 5);
  for (size_t offset : {0, 1, 9, 16, 31}) {
    for (size_t bytes : {0, 1, 15, 64, 65, 200, 512}) {
      std::vector<std::vector<unsigned char>> outputs(3, std::vector<unsigned char>(600, 0xee));
      // Three alignments at once: the outputs start 0, 5 and 12 bytes into their storage.
      const size_t starts[3] = {0, 5, 12};
      char* dsts[3];
      for (int k = 0; k < 3; ++k) dsts[k] = reinterpret_cast<char*>(outputs[k].data() + starts[k]);
      kernels::streamToEach(dsts, 3, offset, from.data(), bytes);
      kernels::storeFence();
      for (int k = 0; k < 3; ++k) {
        for (size_t i = 0; i < outputs[k].size(); ++i) {
          const size_t first = starts[k] + offset;
          const bool inside = i >= first && i < first + bytes;
          ASSERT_EQ(outputs[k][i], inside ? from[i - first] : 0xee)
              << "output " << k << ", offset " << offset << ", " << bytes << " bytes, at " << i;
        }
      }
    }
  }
}

TEST(ZeroCopyBoard, APeerThatNeverComesEndsTheCallAtTheDeadlineNamingIt) {
  const uint64_t nonce = uniqueNonce();
  SharedBarrier barrier(2);
  std::vector<Status> results(2);
  braid::testing::runThreads(2, [&](int rank) {
    auto board = ZeroCopyBoard::create(nonce, rank, 2, [&barrier] { return barrier.wait(); });
    ASSERT_TRUE(board.ok()) << board.status().message();
    if (rank == 1) return;  // never calls
    std::vector<float> data(1024, 1.0f);
    ZeroCopyMode mode = ZeroCopyMode::kDeclined;
    const CallSpec c{Collective::kAllReduce, DataType::kFloat32, RedOp::kSum, data.size(), true};
    results[0] = board.value()->allReduce(data.data(), data.data(), data.size(), c.type,
                                          opFor(c, 2), waitContext(/*timeoutMs=*/200), &mode);
    // The board refuses calls after a failure: its peer may be mid-call.
    const Status again = board.value()->allReduce(data.data(), data.data(), data.size(), c.type,
                                                  opFor(c, 2), waitContext(200), &mode);
    EXPECT_EQ(again.code(), ErrorCode::kInvalidUsage);
  });
  EXPECT_EQ(results[0].code(), ErrorCode::kRemoteError);
  EXPECT_NE(results[0].message().find("rank 1"), std::string::npos) << results[0].message();
}

TEST(ZeroCopyBoard, TheAbortFlagEndsAWait) {
  const uint64_t nonce = uniqueNonce();
  SharedBarrier barrier(2);
  Status result;
  std::atomic<bool> abort{false};
  braid::testing::runThreads(2, [&](int rank) {
    auto board = ZeroCopyBoard::create(nonce, rank, 2, [&barrier] { return barrier.wait(); });
    ASSERT_TRUE(board.ok()) << board.status().message();
    if (rank == 1) {
      abort.store(true);
      return;
    }
    std::vector<int32_t> data(64, 3);
    ZeroCopyMode mode = ZeroCopyMode::kDeclined;
    const CallSpec c{Collective::kAllReduce, DataType::kInt32, RedOp::kSum, data.size(), false};
    std::vector<int32_t> out(data.size());
    transport::WaitContext wait = waitContext();
    wait.abort = &abort;
    result = board.value()->allReduce(data.data(), out.data(), data.size(), c.type, opFor(c, 2),
                                      wait, &mode);
  });
  EXPECT_EQ(result.code(), ErrorCode::kRemoteError) << result.message();
}

// Rank 2 of 3 cannot read its peers: every rank must find the board unusable, so that all take
// the FIFOs together, and say why.
Result<uint64_t> refusingProbe(pid_t, const void*) {
  return systemError("Operation not permitted");
}

TEST(ZeroCopyBoard, ARefusedProbeOnOneRankMakesTheBoardUnusableOnEvery) {
  const uint64_t nonce = uniqueNonce();
  SharedBarrier barrier(3);
  std::vector<int> usable(3, -1);
  std::vector<std::string> reasons(3);
  braid::testing::runThreads(3, [&](int rank) {
    ZeroCopyBoard::Options options;
    if (rank == 2) options.probe = refusingProbe;
    auto board = ZeroCopyBoard::create(
        nonce, rank, 3, [&barrier] { return barrier.wait(); }, options);
    ASSERT_TRUE(board.ok()) << board.status().message();
    usable[rank] = board.value()->usable() ? 1 : 0;
    reasons[rank] = board.value()->unusableReason();
    std::vector<float> data(16, 1.0f);
    ZeroCopyMode mode = ZeroCopyMode::kDeclined;
    const CallSpec c{Collective::kAllReduce, DataType::kFloat32, RedOp::kSum, data.size(), true};
    const Status s = board.value()->allReduce(data.data(), data.data(), data.size(), c.type,
                                              opFor(c, 3), waitContext(1000), &mode);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidUsage) << s.message();
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(usable[r], 0) << "rank " << r;
  EXPECT_NE(reasons[2].find("Operation not permitted"), std::string::npos) << reasons[2];
  EXPECT_NE(reasons[0].find("rank 2"), std::string::npos) << reasons[0];
}

TEST(ZeroCopyBoard, OnlyCallsWhoseBitsCannotChangeQualify) {
  auto op = [](DataType t, RedOp o) {
    kernels::OpArgs args;
    args.nranks = 4;
    const float scalar = 2.0f;
    args.setScalar(&scalar, 4);
    return kernels::hostOp(t, o, args).value();
  };
  const DataType f = DataType::kFloat32;
  // Deterministic mode folds in the same order as the deterministic ring: any built-in op.
  EXPECT_TRUE(zeroCopyKeepsResult(f, RedOp::kSum, op(f, RedOp::kSum), 4, true));
  EXPECT_TRUE(zeroCopyKeepsResult(f, RedOp::kMax, op(f, RedOp::kMax), 2, true));
  // Otherwise: two ranks' float sum, product and avg; any integer op; nothing else.
  EXPECT_TRUE(zeroCopyKeepsResult(f, RedOp::kSum, op(f, RedOp::kSum), 2, false));
  EXPECT_TRUE(zeroCopyKeepsResult(f, RedOp::kAvg, op(f, RedOp::kAvg), 2, false));
  EXPECT_FALSE(zeroCopyKeepsResult(f, RedOp::kSum, op(f, RedOp::kSum), 3, false));
  EXPECT_FALSE(zeroCopyKeepsResult(f, RedOp::kMax, op(f, RedOp::kMax), 2, false));
  EXPECT_TRUE(zeroCopyKeepsResult(DataType::kInt32, RedOp::kSum, op(DataType::kInt32, RedOp::kSum),
                                  8, false));
  // premulsum's scalar is each sender's own: never.
  const DataType h = DataType::kFloat32;
  EXPECT_FALSE(zeroCopyKeepsResult(h, RedOp::kPreMulSum, op(h, RedOp::kPreMulSum), 2, true));
}

}  // namespace
}  // namespace braid::exec
