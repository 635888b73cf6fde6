// braidAllGatherV, braidReduceScatterV and braidAlltoAllV (braid_ext.h) through the C API, as a
// program linked with libnccl.so.2 calls them: ranks as forked processes and as threads, N in
// {1, 2, 3, 5, 8}, random counts with zeros, one huge block among small ones and all-zero counts,
// blocks in shuffled order with gaps between them, in place and out of place, several datatypes,
// and reduce-scatter-v with float32 sum, int32 max, bfloat16 avg and a float32 premulsum. Every
// output element is compared with a reference computed here, and the gaps between blocks must
// keep what they held. Bad input (NULL arrays, a count that disagrees with its array, unknown
// datatype or operator, overlapping blocks) must fail with ncclGetLastError naming the problem,
// at the call or, for layout errors inside a group, at ncclGroupEnd.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "braid_ext.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace {

using braid::testing::failsWith;
using braid::testing::OneRankTest;

// What a receive buffer holds before a call, so that untouched gaps can be told apart.
constexpr unsigned char kSentinel = 0xA5;

uint64_t mix(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 1) * 0xC2B2AE3D27D4EB4Full ^ (c + 7) * 0x165667B1;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 29);
}

// ---- Layouts -------------------------------------------------------------------------------

enum class Counts { kRandom, kOneHuge, kAllZero };

struct Layout {
  std::vector<size_t> counts;
  std::vector<size_t> displs;
  size_t extent = 0;  // elements from the buffer's start to the end of its last block
};

// n blocks with `pattern` counts, in a shuffled order with gaps; the same on every rank that
// passes the same seed.
Layout makeLayout(int n, Counts pattern, uint32_t seed) {
  std::mt19937 rng(seed);
  Layout l;
  l.counts.assign(n, 0);
  for (int r = 0; r < n && pattern != Counts::kAllZero; ++r) {
    l.counts[r] = rng() % 3 == 0 ? 0 : rng() % 3000;
    if (pattern == Counts::kOneHuge) l.counts[r] %= 4;
  }
  if (pattern == Counts::kOneHuge) l.counts[rng() % n] = 150000;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  l.displs.assign(n, 0);
  size_t at = rng() % 9;
  for (int r : order) {
    l.displs[r] = at;
    at += l.counts[r] + rng() % 9;
  }
  l.extent = at;
  return l;
}

const Counts kPatterns[] = {Counts::kRandom, Counts::kOneHuge, Counts::kAllZero};

size_t typeSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 4;
  }
}

// ---- All-gather-v --------------------------------------------------------------------------

unsigned char gatherByte(int rank, size_t byte) {
  return static_cast<unsigned char>(mix(rank, byte, 1));
}

void allGatherV(ncclComm_t comm, int rank, int n, const Layout& l, ncclDataType_t type,
                bool inPlace) {
  SCOPED_TRACE(std::string("all-gather-v type ") + std::to_string(type) +
               (inPlace ? " in place" : " out of place"));
  const size_t e = typeSize(type);
  const size_t mine = l.counts[rank];
  std::vector<unsigned char> recv(l.extent * e + 1, kSentinel);
  std::vector<unsigned char> own(mine * e);
  for (size_t i = 0; i < own.size(); ++i) own[i] = gatherByte(rank, i);
  const void* send = own.data();
  if (inPlace) {
    std::copy(own.begin(), own.end(), recv.begin() + l.displs[rank] * e);
    send = recv.data() + l.displs[rank] * e;
  }
  ASSERT_EQ(braidAllGatherV(send, mine, recv.data(), l.counts.data(), l.displs.data(), type, comm,
                            nullptr),
            ncclSuccess)
      << ncclGetLastError(comm);
  std::vector<int> owner(l.extent, -1);
  for (int b = 0; b < n; ++b) {
    for (size_t i = 0; i < l.counts[b]; ++i) owner[l.displs[b] + i] = b;
  }
  for (size_t i = 0; i < recv.size(); ++i) {
    const size_t elem = i / e;
    const int b = elem < l.extent ? owner[elem] : -1;
    const unsigned char want = b < 0 ? kSentinel : gatherByte(b, i - l.displs[b] * e);
    ASSERT_EQ(recv[i], want) << "byte " << i << " (element " << elem << ", block " << b << ")";
  }
}

// ---- Reduce-scatter-v ----------------------------------------------------------------------

enum class Reduction { kFloatSum, kIntMax, kBf16Avg, kFloatPreMul };

// Rank r's input at element i, as an integer every type here holds exactly. bfloat16 avg: a
// base value plus deltas that cancel over the ranks, so the average is the base exactly and
// every partial sum stays within bfloat16's exact integers (|sum| <= n * 10 <= 256).
int64_t reduceInput(Reduction red, int r, int n, size_t i) {
  const uint64_t h = mix(r, i, 2);
  switch (red) {
    case Reduction::kIntMax:
      return static_cast<int32_t>(h);
    case Reduction::kBf16Avg: {
      const int64_t base = static_cast<int64_t>(mix(0, i, 3) % 17) - 8;
      const int64_t delta = static_cast<int64_t>(mix(0, i, 4) % 3);
      if (r == n - 1 && n % 2 == 1) return base;
      return base + (r % 2 == 0 ? delta : -delta);
    }
    default:
      return static_cast<int64_t>(h % 17) - 8;
  }
}

uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);  // exact for the small integers used here
}

constexpr float kPreMulScalar = 2.0f;

void reduceScatterV(ncclComm_t comm, int rank, int n, const Layout& l, Reduction red,
                    bool inPlace) {
  SCOPED_TRACE(std::string("reduce-scatter-v reduction ") + std::to_string(static_cast<int>(red)) +
               (inPlace ? " in place" : " out of place"));
  const ncclDataType_t type = red == Reduction::kIntMax    ? ncclInt32
                              : red == Reduction::kBf16Avg ? ncclBfloat16
                                                           : ncclFloat32;
  ncclRedOp_t op = red == Reduction::kIntMax    ? ncclMax
                   : red == Reduction::kBf16Avg ? ncclAvg
                                                : ncclSum;
  float scalar = kPreMulScalar;
  if (red == Reduction::kFloatPreMul) {
    ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm),
              ncclSuccess);
  }
  const size_t e = typeSize(type);
  auto store = [&](void* at, int64_t v) {
    if (type == ncclInt32) {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(at, &x, 4);
    } else if (type == ncclBfloat16) {
      const uint16_t x = toBf16(static_cast<float>(v));
      std::memcpy(at, &x, 2);
    } else {
      const float x = static_cast<float>(v);
      std::memcpy(at, &x, 4);
    }
  };
  std::vector<unsigned char> send(l.extent * e);
  for (size_t i = 0; i < l.extent; ++i) store(&send[i * e], reduceInput(red, rank, n, i));
  const size_t mine = l.counts[rank];
  std::vector<unsigned char> out(mine * e + 1, kSentinel);
  unsigned char* recv = inPlace ? send.data() + l.displs[rank] * e : out.data();
  ASSERT_EQ(braidReduceScatterV(send.data(), l.counts.data(), l.displs.data(), recv, mine, type, op,
                                comm, nullptr),
            ncclSuccess)
      << ncclGetLastError(comm);
  for (size_t k = 0; k < mine; ++k) {
    const size_t i = l.displs[rank] + k;
    int64_t want = reduceInput(red, 0, n, i);
    for (int r = 1; r < n; ++r) {
      const int64_t v = reduceInput(red, r, n, i);
      want = red == Reduction::kIntMax ? std::max(want, v) : want + v;
    }
    if (red == Reduction::kBf16Avg) want /= n;  // exact: the deltas cancel
    if (red == Reduction::kFloatPreMul) want *= static_cast<int64_t>(kPreMulScalar);
    std::vector<unsigned char> expect(e);
    store(expect.data(), want);
    ASSERT_EQ(std::memcmp(recv + k * e, expect.data(), e), 0)
        << "element " << k << " of block " << rank << ", expected " << want;
  }
  if (!inPlace) {
    ASSERT_EQ(out.back(), kSentinel) << "wrote past recvcount";
  }
  if (red == Reduction::kFloatPreMul) {
    EXPECT_EQ(ncclRedOpDestroy(op, comm), ncclSuccess);
  }
}

// ---- All-to-all-v --------------------------------------------------------------------------

unsigned char exchangeByte(int from, int to, size_t byte) {
  return static_cast<unsigned char>(mix(from * 64 + to, byte, 5));
}

// Elements rank `from` sends to rank `to`; zeros included, the same on every rank.
size_t pairCount(int from, int to, uint32_t seed) {
  const uint64_t h = mix(from, to, seed);
  return h % 4 == 0 ? 0 : h % 2000;
}

void allToAllV(ncclComm_t comm, int rank, int n, ncclDataType_t type, uint32_t seed) {
  SCOPED_TRACE("all-to-all-v type " + std::to_string(type) + " seed " + std::to_string(seed));
  const size_t e = typeSize(type);
  std::vector<size_t> sendCounts(n), recvCounts(n);
  for (int p = 0; p < n; ++p) {
    sendCounts[p] = pairCount(rank, p, seed);
    recvCounts[p] = pairCount(p, rank, seed);
  }
  // Each side places its blocks in an order and with gaps of its own.
  Layout sendPlace = makeLayout(n, Counts::kRandom, seed * 31 + rank);
  Layout recvPlace = makeLayout(n, Counts::kRandom, seed * 37 + rank);
  auto place = [n](Layout& l, const std::vector<size_t>& counts) {
    size_t at = 0;
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return l.displs[a] < l.displs[b]; });
    for (int r : order) {
      l.displs[r] = at;
      at += counts[r] + r % 3;
    }
    l.counts = counts;
    l.extent = at;
  };
  place(sendPlace, sendCounts);
  place(recvPlace, recvCounts);
  std::vector<unsigned char> send(sendPlace.extent * e), recv(recvPlace.extent * e, kSentinel);
  for (int p = 0; p < n; ++p) {
    for (size_t b = 0; b < sendCounts[p] * e; ++b) {
      send[sendPlace.displs[p] * e + b] = exchangeByte(rank, p, b);
    }
  }
  ASSERT_EQ(braidAlltoAllV(send.data(), sendCounts.data(), sendPlace.displs.data(), recv.data(),
                           recvCounts.data(), recvPlace.displs.data(), type, comm, nullptr),
            ncclSuccess)
      << ncclGetLastError(comm);
  std::vector<unsigned char> want(recv.size(), kSentinel);
  for (int p = 0; p < n; ++p) {
    for (size_t b = 0; b < recvCounts[p] * e; ++b) {
      want[recvPlace.displs[p] * e + b] = exchangeByte(p, rank, b);
    }
  }
  for (size_t i = 0; i < recv.size(); ++i) ASSERT_EQ(recv[i], want[i]) << "byte " << i;
}

// ---- One rank's whole run ------------------------------------------------------------------

const ncclDataType_t kGatherTypes[] = {ncclInt8, ncclFloat16, ncclFloat32, ncclFloat64};
const Reduction kReductions[] = {Reduction::kFloatSum, Reduction::kIntMax, Reduction::kBf16Avg,
                                 Reduction::kFloatPreMul};

void runAll(ncclComm_t comm, int rank, int n) {
  uint32_t seed = 17 * n;
  for (Counts pattern : kPatterns) {
    const Layout l = makeLayout(n, pattern, ++seed);
    SCOPED_TRACE("pattern " + std::to_string(static_cast<int>(pattern)));
    for (bool inPlace : {false, true}) {
      for (ncclDataType_t t : kGatherTypes) {
        allGatherV(comm, rank, n, l, t, inPlace);
        if (::testing::Test::HasFatalFailure()) return;
      }
      for (Reduction red : kReductions) {
        reduceScatterV(comm, rank, n, l, red, inPlace);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  // The same counts with every block moved: a schedule cached for the first layout must not
  // serve the second.
  Layout moved = makeLayout(n, Counts::kRandom, ++seed);
  for (int shift : {0, 5}) {
    for (size_t& d : moved.displs) d += shift;
    moved.extent += shift;
    allGatherV(comm, rank, n, moved, ncclFloat32, false);
    reduceScatterV(comm, rank, n, moved, Reduction::kFloatSum, false);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (ncclDataType_t t : {ncclInt8, ncclBfloat16, ncclInt32, ncclUint64}) {
    allToAllV(comm, rank, n, t, ++seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

class VCollectives : public ::testing::TestWithParam<int> {};

TEST_P(VCollectives, AcrossProcesses) {
  const int n = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runProcesses(n, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, n, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    runAll(comm, rank, n);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST_P(VCollectives, AcrossThreads) {
  const int n = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runThreads(n, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, n, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    runAll(comm, rank, n);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, VCollectives, ::testing::Values(1, 2, 3, 5, 8),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

// One thread drives every rank inside a group; the count arrays are overwritten right after
// each call, which must not matter because the call copied them.
TEST(VCollectivesGroup, OneThreadDrivesEveryRankAndMayReuseItsArrays) {
  const int n = 3;
  std::vector<ncclComm_t> comms(n);
  ASSERT_EQ(ncclCommInitAll(comms.data(), n, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  const Layout l = makeLayout(n, Counts::kRandom, 99);
  std::vector<std::vector<int32_t>> in(n), gathered(n), reduced(n);
  for (int r = 0; r < n; ++r) {
    in[r].resize(l.extent);
    for (size_t i = 0; i < l.extent; ++i) in[r][i] = static_cast<int32_t>(1000 * r + i);
    gathered[r].assign(l.extent, -1);
    reduced[r].assign(l.counts[r], -1);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    std::vector<size_t> counts = l.counts, displs = l.displs;
    ASSERT_EQ(braidAllGatherV(in[r].data() + l.displs[r], l.counts[r], gathered[r].data(),
                              counts.data(), displs.data(), ncclInt32, comms[r], nullptr),
              ncclSuccess);
    ASSERT_EQ(braidReduceScatterV(in[r].data(), counts.data(), displs.data(), reduced[r].data(),
                                  l.counts[r], ncclInt32, ncclSum, comms[r], nullptr),
              ncclSuccess);
    std::fill(counts.begin(), counts.end(), size_t{12345});  // the group must not see these
    std::fill(displs.begin(), displs.end(), size_t{777});
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int r = 0; r < n; ++r) {
    for (int b = 0; b < n; ++b) {
      for (size_t i = 0; i < l.counts[b]; ++i) {
        ASSERT_EQ(gathered[r][l.displs[b] + i], in[b][l.displs[b] + i]) << r << " " << b;
      }
    }
    for (size_t k = 0; k < l.counts[r]; ++k) {
      const size_t i = l.displs[r] + k;
      ASSERT_EQ(reduced[r][k], in[0][i] + in[1][i] + in[2][i]) << r << " " << k;
    }
  }
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

// ext_c_compile_check.c: braid_ext.h compiled as C99 takes the address of every entry point.
extern "C" int braidCExtEntryPoints(void);

TEST(VCollectivesHeader, CompilesAsC99AndLinks) { EXPECT_EQ(braidCExtEntryPoints(), 3); }

// ---- Bad input -----------------------------------------------------------------------------

using VCollectivesBadInput = OneRankTest;

TEST_F(VCollectivesBadInput, NullArraysAreNamed) {
  std::vector<int32_t> buf(8);
  const size_t counts[] = {4};
  const size_t displs[] = {0};
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(buf.data(), 4, buf.data() + 4, nullptr, displs, ncclInt32, comm_,
                               nullptr);
      },
      ncclInvalidArgument, {"braidAllGatherV", "recvcounts is NULL"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(buf.data(), 4, buf.data() + 4, counts, nullptr, ncclInt32, comm_,
                               nullptr);
      },
      ncclInvalidArgument, {"braidAllGatherV", "displs is NULL"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidReduceScatterV(buf.data(), nullptr, displs, buf.data() + 4, 4, ncclInt32,
                                   ncclSum, comm_, nullptr);
      },
      ncclInvalidArgument, {"braidReduceScatterV", "sendcounts is NULL"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAlltoAllV(buf.data(), counts, displs, buf.data() + 4, counts, nullptr,
                              ncclInt32, comm_, nullptr);
      },
      ncclInvalidArgument, {"braidAlltoAllV", "rdispls is NULL"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAlltoAllV(buf.data(), nullptr, displs, buf.data() + 4, counts, displs,
                              ncclInt32, comm_, nullptr);
      },
      ncclInvalidArgument, {"sendcounts is NULL"}));
}

TEST_F(VCollectivesBadInput, CountsThatDisagreeWithTheirArrayAreNamed) {
  std::vector<int32_t> buf(16);
  const size_t counts[] = {4};
  const size_t displs[] = {0};
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(buf.data(), 3, buf.data() + 8, counts, displs, ncclInt32, comm_,
                               nullptr);
      },
      ncclInvalidArgument, {"sendcount 3 differs from recvcounts[0] = 4"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidReduceScatterV(buf.data(), counts, displs, buf.data() + 8, 5, ncclInt32,
                                   ncclSum, comm_, nullptr);
      },
      ncclInvalidArgument, {"recvcount 5 differs from sendcounts[0] = 4"}));
}

TEST_F(VCollectivesBadInput, UnknownDatatypeAndOperatorAreNamed) {
  std::vector<int32_t> buf(16);
  const size_t counts[] = {4};
  const size_t displs[] = {0};
  const auto badType = static_cast<ncclDataType_t>(42);
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(buf.data(), 4, buf.data() + 8, counts, displs, badType, comm_,
                               nullptr);
      },
      ncclInvalidArgument, {"unknown datatype 42"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAlltoAllV(buf.data(), counts, displs, buf.data() + 8, counts, displs, badType,
                              comm_, nullptr);
      },
      ncclInvalidArgument, {"unknown datatype 42"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidReduceScatterV(buf.data(), counts, displs, buf.data() + 8, 4, ncclInt32,
                                   static_cast<ncclRedOp_t>(-1), comm_, nullptr);
      },
      ncclInvalidArgument, {"unknown reduction op -1"}));
  // A premulsum handle that no communicator made is refused when the call runs.
  EXPECT_TRUE(failsWith(
      [&] {
        return braidReduceScatterV(buf.data(), counts, displs, buf.data() + 8, 4, ncclInt32,
                                   static_cast<ncclRedOp_t>(ncclNumOps + 3), comm_, nullptr);
      },
      ncclInvalidArgument, {"not a live ncclRedOpCreatePreMulSum op"}));
}

TEST_F(VCollectivesBadInput, NullBuffersAndBadAliasingAreNamed) {
  std::vector<int32_t> buf(16);
  const size_t counts[] = {4};
  const size_t displs[] = {2};
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(nullptr, 4, buf.data(), counts, displs, ncclInt32, comm_, nullptr);
      },
      ncclInvalidArgument, {"sendbuff is NULL"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidReduceScatterV(buf.data(), counts, displs, nullptr, 4, ncclInt32, ncclSum,
                                   comm_, nullptr);
      },
      ncclInvalidArgument, {"recvbuff is NULL"}));
  // sendbuff inside recvbuff but not at recvbuff + displs[rank]: not the in-place form.
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(buf.data() + 1, 4, buf.data(), counts, displs, ncclInt32, comm_,
                               nullptr);
      },
      ncclInvalidArgument, {"sendbuff overlaps recvbuff", "in-place"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidReduceScatterV(buf.data(), counts, displs, buf.data() + 3, 4, ncclInt32,
                                   ncclSum, comm_, nullptr);
      },
      ncclInvalidArgument, {"recvbuff overlaps sendbuff"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAlltoAllV(buf.data(), counts, displs, buf.data() + 4, counts, displs, ncclInt32,
                              comm_, nullptr);
      },
      ncclInvalidArgument, {"overlap"}));
  // Empty blocks need no buffers at all.
  const size_t zero[] = {0};
  EXPECT_EQ(braidAllGatherV(nullptr, 0, nullptr, zero, zero, ncclInt32, comm_, nullptr),
            ncclSuccess);
  EXPECT_EQ(
      braidReduceScatterV(nullptr, zero, zero, nullptr, 0, ncclInt32, ncclSum, comm_, nullptr),
      ncclSuccess);
  EXPECT_EQ(braidAlltoAllV(nullptr, zero, zero, nullptr, zero, zero, ncclInt32, comm_, nullptr),
            ncclSuccess);
}

// Arguments are checked once, at the call, in a group too: layouts as well as arrays, so a bad
// call fails where it is made and the group runs the rest.
TEST_F(VCollectivesBadInput, InAGroupEveryArgumentFailsTheCall) {
  std::vector<int32_t> buf(16);
  const size_t counts[] = {4};
  const size_t displs[] = {0};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(buf.data(), 4, buf.data() + 8, nullptr, displs, ncclInt32, comm_,
                               nullptr);
      },
      ncclInvalidArgument, {"recvcounts is NULL"}));
  EXPECT_TRUE(failsWith(
      [&] {
        return braidAllGatherV(buf.data() + 1, 4, buf.data(), counts, displs, ncclInt32, comm_,
                               nullptr);
      },
      ncclInvalidArgument, {"sendbuff overlaps recvbuff"}));
  // A good call of the same group still runs at its end.
  std::fill(buf.begin(), buf.begin() + 8, 7);
  EXPECT_EQ(
      braidAllGatherV(buf.data(), 4, buf.data() + 8, counts, displs, ncclInt32, comm_, nullptr),
      ncclSuccess);
  EXPECT_EQ(buf[8], 0);  // not yet: the group has not ended
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(buf[8], 7);
  EXPECT_EQ(buf[11], 7);
}

TEST(VCollectivesBadLayout, OverlappingBlocksAreNamedOnEveryRank) {
  const int n = 2;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  braid::testing::runThreads(n, [&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, n, id, rank), ncclSuccess);
    std::vector<int32_t> send(16), recv(16);
    const size_t counts[] = {4, 4};
    const size_t overlapping[] = {0, 3};
    EXPECT_TRUE(failsWith(
        [&] {
          return braidAllGatherV(send.data(), 4, recv.data(), counts, overlapping, ncclInt32, comm,
                                 nullptr);
        },
        ncclInvalidArgument, {"blocks 0 and 1 of recvbuff overlap"}, comm));
    // In place, this rank's block is written while the others are read: no overlap allowed.
    EXPECT_TRUE(failsWith(
        [&] {
          return braidReduceScatterV(send.data(), counts, overlapping, send.data() + 3 * rank, 4,
                                     ncclInt32, ncclSum, comm, nullptr);
        },
        ncclInvalidArgument, {"in place", "overlaps block"}, comm));
    // Nothing moved: the communicator still works.
    const size_t displs[] = {0, 4};
    for (int i = 0; i < 4; ++i) send[i] = rank * 10 + i;
    ASSERT_EQ(
        braidAllGatherV(send.data(), 4, recv.data(), counts, displs, ncclInt32, comm, nullptr),
        ncclSuccess)
        << ncclGetLastError(comm);
    EXPECT_EQ(recv[5], 11);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

}  // namespace
