// bad_input_test.cc: every C API entry point given bad input, and the texts it leaves behind.
//
// A program that passes NULL, a rank out of range, an uninitialized ncclConfig_t or an unknown
// enum value must get the documented ncclResult_t and a ncclGetLastError() text that names the
// problem; never a crash, never a hang, never a silent success. (The entry points braid declines
// are checked in windows_test.cc and device_team_test.cc.) Most checks need no peers, because a
// 1-rank communicator connects to nobody. The missing-peer tests shorten BRAID_TIMEOUT_MS so that
// braid's own deadline, not the test runner, ends the wait.
//
// Every text check first makes ncclGetLastError() hold a known text of its own (see failsWith in
// api_test_util.h), so that a message left behind by an earlier call cannot make a check pass.
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace {

using braid::testing::failsWith;
using braid::testing::kHangGuard;
using braid::testing::newId;
using braid::testing::OneRankTest;
using braid::testing::primeWithVersion;
using braid::testing::runGuarded;
using braid::testing::runProcesses;
using braid::testing::ScopedEnv;

/// The BRAID_TIMEOUT_MS used where a missing check or a missing peer would otherwise block.
constexpr const char* kShortTimeoutMs = "1500";

/// What one ncclCommInitRank call did, seen from the thread that made it.
struct InitOutcome {
  ncclResult_t result = ncclSuccess;
  std::string lastError;
  ncclComm_t comm = nullptr;
};

/// Joins rank `rank` of `nranks` on its own thread; nullopt if it hung.
std::optional<InitOutcome> initGuarded(const ncclUniqueId& id, int nranks, int rank) {
  return runGuarded<InitOutcome>([id, nranks, rank] {
    InitOutcome out;
    out.result = ncclCommInitRank(&out.comm, nranks, id, rank);
    out.lastError = ncclGetLastError(nullptr);
    return out;
  });
}

using BadInputOneRank = OneRankTest;
using BadInputGroup = OneRankTest;

// ---- NULL and foreign communicators -----------------------------------------------------------

TEST(BadInputNullComm, QueriesAndFinalizeRejectNullComm) {
  int value = 0;
  ncclResult_t async = ncclSuccess;
  const std::vector<std::string> needles = {"comm", "NULL"};
  EXPECT_TRUE(
      failsWith([&] { return ncclCommCount(nullptr, &value); }, ncclInvalidArgument, needles));
  EXPECT_TRUE(
      failsWith([&] { return ncclCommUserRank(nullptr, &value); }, ncclInvalidArgument, needles));
  EXPECT_TRUE(
      failsWith([&] { return ncclCommCuDevice(nullptr, &value); }, ncclInvalidArgument, needles));
  EXPECT_TRUE(failsWith([&] { return ncclCommGetAsyncError(nullptr, &async); }, ncclInvalidArgument,
                        needles));
  EXPECT_TRUE(failsWith([&] { return ncclCommFinalize(nullptr); }, ncclInvalidArgument, needles));
}

TEST(BadInputNullComm, AllReduceRejectsNullComm) {
  std::vector<float> send(8, 1.0f);
  std::vector<float> recv(8, 0.0f);
  const float* s = send.data();
  float* r = recv.data();
  EXPECT_TRUE(failsWith([&] { return ncclAllReduce(s, r, 8, ncclFloat32, ncclSum, nullptr, 0); },
                        ncclInvalidArgument, {"comm", "NULL"}));
  // The pncclX twin is the same function.
  EXPECT_TRUE(failsWith([&] { return pncclAllReduce(s, r, 8, ncclFloat32, ncclSum, nullptr, 0); },
                        ncclInvalidArgument, {"comm", "NULL"}));
  EXPECT_EQ(recv, std::vector<float>(8, 0.0f));
}

TEST(BadInputNullComm, DestroyAndAbortOfNullSucceed) {
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommAbort(nullptr), ncclSuccess);
}

TEST(BadInputNullComm, HandleNotMadeByBraidIsRejected) {
  // Zeroed memory where a communicator should be: braid must see that it did not make it, and
  // must not free it.
  alignas(64) unsigned char fake[256] = {};
  auto comm = reinterpret_cast<ncclComm_t>(fake);
  int value = 0;
  float data[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  EXPECT_TRUE(
      failsWith([&] { return ncclCommCount(comm, &value); }, ncclInvalidArgument, {"comm"}));
  EXPECT_TRUE(failsWith([&] { return ncclAllReduce(data, data, 4, ncclFloat32, ncclSum, comm, 0); },
                        ncclInvalidArgument, {"comm"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommDestroy(comm); }, ncclInvalidArgument, {"comm"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommAbort(comm); }, ncclInvalidArgument, {"comm"}));
}

// ---- NULL output pointers ---------------------------------------------------------------------

TEST(BadInputNullOutput, LibraryCallsRejectNullOutputs) {
  EXPECT_TRUE(failsWith([] { return ncclGetVersion(nullptr); }, ncclInvalidArgument, {"NULL"}));
  EXPECT_TRUE(failsWith([] { return ncclGetUniqueId(nullptr); }, ncclInvalidArgument, {"NULL"}));
}

TEST(BadInputNullOutput, InitRejectsNullComm) {
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  const ncclUniqueId id = newId();
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRank(nullptr, 1, id, 0); }, ncclInvalidArgument,
                        {"NULL"}));
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRankConfig(nullptr, 1, id, 0, &config); },
                        ncclInvalidArgument, {"NULL"}));
}

TEST_F(BadInputOneRank, QueriesRejectNullOutputs) {
  EXPECT_TRUE(failsWith([&] { return ncclCommCount(comm_, nullptr); }, ncclInvalidArgument,
                        {"count", "NULL"}, comm_));
  EXPECT_TRUE(failsWith([&] { return ncclCommUserRank(comm_, nullptr); }, ncclInvalidArgument,
                        {"rank", "NULL"}, comm_));
  EXPECT_TRUE(failsWith([&] { return ncclCommCuDevice(comm_, nullptr); }, ncclInvalidArgument,
                        {"device", "NULL"}, comm_));
  EXPECT_TRUE(failsWith([&] { return ncclCommGetAsyncError(comm_, nullptr); }, ncclInvalidArgument,
                        {"NULL"}, comm_));
}

// ---- Communicator creation ----------------------------------------------------------------------

// These run with a short BRAID_TIMEOUT_MS: were a check missing, the call would go on to wait for
// peers that never come and fail with ncclRemoteError after it, instead of hanging the test.
TEST(BadInputInitRank, RejectsNranksAndRanksOutOfRange) {
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  const ncclUniqueId id = newId();
  struct Case {
    int nranks;
    int rank;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {{0, 0, {"nranks", "0"}},
                                   {-1, 0, {"nranks", "-1"}},
                                   {INT_MIN, 0, {"nranks", std::to_string(INT_MIN)}},
                                   {2, -1, {"rank", "-1"}},
                                   {2, 2, {"rank", "2"}},
                                   {2, 3, {"rank", "3"}},
                                   {1, 1, {"rank", "1"}},
                                   {4, INT_MAX, {"rank", std::to_string(INT_MAX)}}};
  for (const Case& c : cases) {
    SCOPED_TRACE("rank " + std::to_string(c.rank) + " of " + std::to_string(c.nranks));
    ncclComm_t comm = nullptr;
    EXPECT_TRUE(failsWith([&] { return ncclCommInitRank(&comm, c.nranks, id, c.rank); },
                          ncclInvalidArgument, c.needles));
    EXPECT_EQ(comm, nullptr);
  }
}

TEST(BadInputInitRank, RejectsIdNotMadeByGetUniqueId) {
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  ncclUniqueId zeros;
  memset(&zeros, 0, sizeof(zeros));
  ncclUniqueId garbage;
  memset(&garbage, 0x5a, sizeof(garbage));
  for (const ncclUniqueId* id : {&zeros, &garbage}) {
    for (int nranks : {1, 2}) {
      ncclComm_t comm = nullptr;
      EXPECT_TRUE(failsWith([&] { return ncclCommInitRank(&comm, nranks, *id, 0); },
                            ncclInvalidArgument, {"unique id"}));
      EXPECT_EQ(comm, nullptr);
    }
  }
}

TEST(BadInputInitRank, BadConfigIsRejected) {
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  const ncclUniqueId id = newId();
  ncclConfig_t zeroed;
  memset(&zeroed, 0, sizeof(zeroed));
  ncclConfig_t garbage;
  memset(&garbage, 0xab, sizeof(garbage));
  ncclConfig_t badBlocking = NCCL_CONFIG_INITIALIZER;
  badBlocking.blocking = 7;
  ncclConfig_t badSize = NCCL_CONFIG_INITIALIZER;
  badSize.size = 4;
  ncclConfig_t badMinCtas = NCCL_CONFIG_INITIALIZER;
  badMinCtas.minCTAs = 65;
  ncclConfig_t badMaxCtas = NCCL_CONFIG_INITIALIZER;
  badMaxCtas.maxCTAs = -2;
  const std::vector<std::pair<ncclConfig_t*, const char*>> cases = {
      {&zeroed, "NCCL_CONFIG_INITIALIZER"},
      {&garbage, "NCCL_CONFIG_INITIALIZER"},
      {&badBlocking, "blocking"},
      {&badSize, "size"},
      {&badMinCtas, "minCTAs"},
      {&badMaxCtas, "maxCTAs"}};
  for (const auto& badCase : cases) {
    ncclConfig_t* config = badCase.first;  // a lambda may not capture a structured binding
    const char* needle = badCase.second;
    SCOPED_TRACE(needle);
    ncclComm_t comm = nullptr;
    EXPECT_TRUE(failsWith([&] { return ncclCommInitRankConfig(&comm, 1, id, 0, config); },
                          ncclInvalidArgument, {needle}));
    EXPECT_EQ(comm, nullptr);
  }
}

TEST(BadInputInitRank, ConfigFromInitializerWorks) {
  // No config, and blocking left to the default, asked for, and declined: a host communicator
  // may finish creation at once in every case; a non-blocking one may report ncclInProgress.
  for (int blocking : {INT_MAX, NCCL_CONFIG_UNDEF_INT, 1, 0}) {
    SCOPED_TRACE(blocking == INT_MAX ? "config NULL" : "blocking " + std::to_string(blocking));
    const ncclUniqueId id = newId();
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = blocking;
    ncclComm_t comm = nullptr;
    ncclResult_t result =
        ncclCommInitRankConfig(&comm, 1, id, 0, blocking == INT_MAX ? nullptr : &config);
    ASSERT_TRUE(result == ncclSuccess || (blocking == 0 && result == ncclInProgress))
        << result << ": " << ncclGetLastError(nullptr);
    ASSERT_NE(comm, nullptr);
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) ASSERT_EQ(ncclCommGetAsyncError(comm, &state), ncclSuccess);
    EXPECT_EQ(state, ncclSuccess);
    int count = 0;
    int rank = -1;
    EXPECT_EQ(ncclCommCount(comm, &count), ncclSuccess);
    EXPECT_EQ(ncclCommUserRank(comm, &rank), ncclSuccess);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(rank, 0);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }
}

TEST(BadInputInitRank, EnvironmentBraidCannotHonourIsNamed) {
  struct Case {
    const char* name;
    const char* value;
    ncclResult_t expected;
  };
  for (Case c : {Case{"BRAID_NCHANNELS", "0", ncclInvalidArgument},
                 Case{"BRAID_BUFFSIZE", "1", ncclInvalidArgument},
                 Case{"BRAID_TIMEOUT_MS", "-5", ncclInvalidArgument},
                 Case{"BRAID_ALGO", "no-such-algorithm", ncclInvalidArgument},
                 Case{"BRAID_ALGO", "^ring,tree,oneshot", ncclInvalidArgument},
                 Case{"BRAID_PROTO", "LL128", ncclInvalidUsage},
                 Case{"BRAID_ALGO", "NVLS", ncclInvalidUsage}}) {
    SCOPED_TRACE(std::string(c.name) + "=" + c.value);
    const ncclUniqueId id = newId();
    ScopedEnv env(c.name, c.value);  // read at creation, after the id was made
    ncclComm_t comm = nullptr;
    EXPECT_TRUE(failsWith([&] { return ncclCommInitRank(&comm, 1, id, 0); }, c.expected, {c.name}));
    EXPECT_EQ(comm, nullptr);
  }
}

// ---- A peer that never arrives ----------------------------------------------------------------

TEST(BadInputMissingPeer, LoneRankOfTwoGetsRemoteErrorNamingTheOther) {
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  for (int rank : {0, 1}) {
    SCOPED_TRACE("rank " + std::to_string(rank) + " alone");
    const ncclUniqueId id = newId();
    std::optional<InitOutcome> outcome = initGuarded(id, 2, rank);
    ASSERT_TRUE(outcome.has_value())
        << "ncclCommInitRank hung with BRAID_TIMEOUT_MS=" << kShortTimeoutMs;
    EXPECT_EQ(outcome->result, ncclRemoteError) << outcome->lastError;
    EXPECT_EQ(outcome->comm, nullptr);
    std::string missing = "rank " + std::to_string(1 - rank);
    EXPECT_NE(outcome->lastError.find(missing), std::string::npos)
        << "\"" << outcome->lastError << "\" does not name " << missing;
    if (outcome->comm != nullptr) ncclCommDestroy(outcome->comm);
  }
}

TEST(BadInputMissingPeer, ThreeProcessesOfFourEachGetAnError) {
  // The id is made before the fork, so its root runs on a thread of this process, which the
  // children reach over TCP like any other rank.
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  const ncclUniqueId id = newId();
  runProcesses(
      3,
      [&](int rank) {
        ncclComm_t comm = nullptr;
        ncclResult_t result = ncclCommInitRank(&comm, 4, id, rank);
        std::string text = ncclGetLastError(nullptr);
        EXPECT_EQ(result, ncclRemoteError) << text;
        EXPECT_EQ(comm, nullptr);
        EXPECT_NE(text.find("rank 3"), std::string::npos) << "\"" << text << "\"";
      },
      static_cast<int>(kHangGuard.count()));
}

TEST(BadInputMissingPeer, RanksThatDisagreeAllGetErrors) {
  // Two threads claim rank 0 of 2, or disagree on nranks. The root turns away whichever arrives
  // second, saying why; the other waits for a rank that never comes. Both must return.
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  struct Claim {
    int nranks;
    int rank;
  };
  struct Case {
    Claim a;
    Claim b;
    const char* why;  // what the turned-away rank is told
  };
  for (Case c : {Case{{2, 0}, {2, 0}, "already joined"}, Case{{2, 0}, {3, 1}, "nranks"}}) {
    SCOPED_TRACE(c.why);
    const ncclUniqueId id = newId();
    std::future<std::optional<InitOutcome>> a =
        std::async(std::launch::async, [&] { return initGuarded(id, c.a.nranks, c.a.rank); });
    std::optional<InitOutcome> b = initGuarded(id, c.b.nranks, c.b.rank);
    std::optional<InitOutcome> first = a.get();
    ASSERT_TRUE(first.has_value() && b.has_value()) << "a rank hung";
    EXPECT_NE(first->result, ncclSuccess);
    EXPECT_NE(b->result, ncclSuccess);
    EXPECT_NE((first->lastError + "|" + b->lastError).find(c.why), std::string::npos)
        << "\"" << first->lastError << "\" / \"" << b->lastError << "\"";
    for (ncclComm_t comm : {first->comm, b->comm}) EXPECT_EQ(comm, nullptr);
  }
}

TEST(BadInputMissingPeer, UniqueIdUsedTwiceGetsAnError) {
  // An id names one communicator; its root is gone once that communicator exists.
  ScopedEnv timeout("BRAID_TIMEOUT_MS", kShortTimeoutMs);
  const ncclUniqueId id = newId();
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  std::optional<InitOutcome> again = initGuarded(id, 1, 0);
  ASSERT_TRUE(again.has_value()) << "reusing a unique id hung";
  EXPECT_NE(again->result, ncclSuccess);
  EXPECT_NE(again->lastError.find("root"), std::string::npos) << again->lastError;
  EXPECT_EQ(again->comm, nullptr);
}

// ---- ncclCommInitAll ----------------------------------------------------------------------------

TEST(BadInputInitAll, RejectsBadCountsAndNullArray) {
  ncclComm_t comms[2] = {nullptr, nullptr};
  for (int ndev : {0, -1, INT_MIN}) {
    SCOPED_TRACE("ndev " + std::to_string(ndev));
    EXPECT_TRUE(failsWith([&] { return ncclCommInitAll(comms, ndev, nullptr); },
                          ncclInvalidArgument, {"ndev", std::to_string(ndev)}));
  }
  EXPECT_TRUE(failsWith([] { return ncclCommInitAll(nullptr, 2, nullptr); }, ncclInvalidArgument,
                        {"NULL"}));
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_EQ(comms[1], nullptr);
}

TEST(BadInputInitAll, FourCommunicatorsAllReduceFromOneThreadEach) {
  constexpr int kRanks = 4;
  constexpr size_t kCount = 1000;
  ncclComm_t comms[kRanks] = {};
  ASSERT_EQ(ncclCommInitAll(comms, kRanks, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  for (int i = 0; i < kRanks; ++i) {
    ASSERT_NE(comms[i], nullptr);
    int rank = -1;
    int count = 0;
    EXPECT_EQ(ncclCommUserRank(comms[i], &rank), ncclSuccess);
    EXPECT_EQ(ncclCommCount(comms[i], &count), ncclSuccess);
    EXPECT_EQ(rank, i);
    EXPECT_EQ(count, kRanks);
  }
  // Each all-reduce blocks until every rank has joined it, so each rank needs a thread.
  std::vector<std::vector<float>> floats(kRanks);
  std::vector<std::vector<int32_t>> ints(kRanks);
  std::vector<ncclResult_t> results(2 * kRanks, ncclInternalError);
  std::vector<std::string> texts(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      std::vector<float> send(kCount);
      for (size_t i = 0; i < kCount; ++i) send[i] = static_cast<float>((r + 1) * (i % 7));
      floats[r].assign(kCount, -1.0f);
      results[2 * r] = ncclAllReduce(send.data(), floats[r].data(), kCount, ncclFloat32, ncclSum,
                                     comms[r], nullptr);
      ints[r].resize(kCount);
      for (size_t i = 0; i < kCount; ++i) ints[r][i] = static_cast<int32_t>(i) - 100 * r;
      results[2 * r + 1] = ncclAllReduce(ints[r].data(), ints[r].data(), kCount, ncclInt32, ncclSum,
                                         comms[r], nullptr);
      texts[r] = ncclGetLastError(comms[r]);
    });
  }
  for (auto& t : threads) t.join();
  // Ranks contribute (r + 1) * (i % 7) and i - 100 r: sums 10 * (i % 7) and 4 i - 600.
  for (int r = 0; r < kRanks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_EQ(results[2 * r], ncclSuccess) << texts[r];
    ASSERT_EQ(results[2 * r + 1], ncclSuccess) << texts[r];
    for (size_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(floats[r][i], static_cast<float>(10 * (i % 7))) << "element " << i;
      ASSERT_EQ(ints[r][i], static_cast<int32_t>(4 * i) - 600) << "element " << i;
    }
  }
  for (ncclComm_t comm : comms) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// ---- Life cycle ---------------------------------------------------------------------------------

TEST(BadInputLifecycle, AbortOfLiveCommunicatorSucceeds) {
  const ncclUniqueId id = newId();
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);  // frees it, as ncclCommDestroy would
}

// Aborting a collective that waits for a dead peer is what ncclCommAbort is for (PyTorch's
// watchdog does it from its own thread): the blocked call must return an error and the abort
// must not free the communicator under it. The child process keeps a crash from taking the test
// binary down.
TEST(BadInputLifecycle, AbortFromAnotherThreadUnblocksACollective) {
  runProcesses(
      1,
      [](int) {
        ScopedEnv timeout("BRAID_TIMEOUT_MS", "30000");  // the abort, not the deadline, ends it
        ncclComm_t comms[2] = {};
        ASSERT_EQ(ncclCommInitAll(comms, 2, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
        std::vector<float> data(16, 1.0f);
        ncclResult_t result = ncclSuccess;
        std::string text;
        // Rank 1 never joins the all-reduce, so rank 0 waits in it until aborted.
        std::thread blocked([&] {
          result = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum,
                                 comms[0], nullptr);
          text = ncclGetLastError(nullptr);
        });
        // Lets the thread reach its wait: the one ordering in these tests that rests on time.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        EXPECT_EQ(ncclCommAbort(comms[0]), ncclSuccess);
        blocked.join();
        EXPECT_NE(result, ncclSuccess);
        EXPECT_FALSE(text.empty());
        EXPECT_EQ(ncclCommDestroy(comms[1]), ncclSuccess);
      },
      static_cast<int>(kHangGuard.count()));
}

TEST_F(BadInputOneRank, FinalizedCommunicatorRefusesMoreWork) {
  std::vector<float> data(4, 2.0f);
  ASSERT_EQ(ncclCommFinalize(comm_), ncclSuccess) << ncclGetLastError(comm_);
  EXPECT_TRUE(failsWith([&] { return allReduce(data.data(), data.data(), data.size()); },
                        ncclInvalidUsage, {"finalized"}, comm_));
  EXPECT_TRUE(
      failsWith([&] { return ncclCommFinalize(comm_); }, ncclInvalidUsage, {"finalized"}, comm_));
  // TearDown destroys it, which is still allowed.
}

// ---- ncclAllReduce on one rank ----------------------------------------------------------------

TEST_F(BadInputOneRank, AllReduceRejectsNullBuffersWithCount) {
  std::vector<float> buf(8, 1.0f);
  EXPECT_TRUE(failsWith([&] { return allReduce(nullptr, buf.data(), 8); }, ncclInvalidArgument,
                        {"sendbuff", "NULL"}, comm_));
  EXPECT_TRUE(failsWith([&] { return allReduce(buf.data(), nullptr, 8); }, ncclInvalidArgument,
                        {"recvbuff", "NULL"}, comm_));
  EXPECT_TRUE(failsWith([&] { return allReduce(nullptr, nullptr, 1, ncclInt32, ncclMax); },
                        ncclInvalidArgument, {"NULL"}, comm_));
}

TEST_F(BadInputOneRank, AllReduceOfZeroElementsAcceptsNullBuffers) {
  EXPECT_EQ(allReduce(nullptr, nullptr, 0), ncclSuccess) << ncclGetLastError(comm_);
  std::vector<float> buf(2, 3.0f);
  EXPECT_EQ(allReduce(buf.data(), buf.data(), 0), ncclSuccess) << ncclGetLastError(comm_);
  EXPECT_EQ(buf, std::vector<float>(2, 3.0f));
}

TEST_F(BadInputOneRank, AllReduceRejectsUnknownDatatype) {
  std::vector<double> send(4, 1.0);
  std::vector<double> recv(4, 0.0);
  for (int type : {99, -1, static_cast<int>(ncclNumTypes)}) {
    SCOPED_TRACE("datatype " + std::to_string(type));
    auto bad = static_cast<ncclDataType_t>(type);
    EXPECT_TRUE(failsWith([&] { return allReduce(send.data(), recv.data(), 4, bad); },
                          ncclInvalidArgument, {"datatype", std::to_string(type)}, comm_));
  }
  EXPECT_EQ(recv, std::vector<double>(4, 0.0));
}

TEST_F(BadInputOneRank, AllReduceRejectsUnknownOp) {
  std::vector<float> send(4, 1.0f);
  std::vector<float> recv(4, 0.0f);
  // ncclNumOps is the first handle ncclRedOpCreatePreMulSum would give out; none was made here.
  for (int op : {42, -1, static_cast<int>(ncclNumOps), static_cast<int>(ncclMaxRedOp)}) {
    SCOPED_TRACE("op " + std::to_string(op));
    auto bad = static_cast<ncclRedOp_t>(op);
    EXPECT_TRUE(failsWith([&] { return allReduce(send.data(), recv.data(), 4, ncclFloat32, bad); },
                          ncclInvalidArgument, {"op", std::to_string(op)}, comm_));
  }
  EXPECT_EQ(recv, std::vector<float>(4, 0.0f));
}

TEST_F(BadInputOneRank, RejectedCallsLeaveTheCommunicatorUsable) {
  std::vector<float> send = {1.5f, -2.0f, 3.25f};
  std::vector<float> recv(3, 0.0f);
  EXPECT_NE(allReduce(nullptr, recv.data(), 3), ncclSuccess);
  EXPECT_NE(allReduce(send.data(), recv.data(), 3, static_cast<ncclDataType_t>(99)), ncclSuccess);
  EXPECT_NE(allReduce(send.data(), recv.data(), 3, ncclFloat32, static_cast<ncclRedOp_t>(42)),
            ncclSuccess);
  ncclResult_t async = ncclInternalError;
  ASSERT_EQ(ncclCommGetAsyncError(comm_, &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  ASSERT_EQ(allReduce(send.data(), recv.data(), 3), ncclSuccess) << ncclGetLastError(comm_);
  EXPECT_EQ(recv, send);
}

template <typename T>
void expectOneRankAllReduceIsIdentity(ncclComm_t comm, ncclDataType_t type,
                                      const std::vector<T>& input) {
  for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin}) {
    SCOPED_TRACE("op " + std::to_string(op));
    std::vector<T> out(input.size(), T{});
    std::vector<T> inPlace = input;
    const size_t n = input.size();
    ASSERT_EQ(ncclAllReduce(input.data(), out.data(), n, type, op, comm, nullptr), ncclSuccess)
        << ncclGetLastError(comm);
    ASSERT_EQ(ncclAllReduce(inPlace.data(), inPlace.data(), n, type, op, comm, nullptr),
              ncclSuccess)
        << ncclGetLastError(comm);
    EXPECT_EQ(out, input) << "out of place";
    EXPECT_EQ(inPlace, input) << "in place";
  }
}

TEST_F(BadInputOneRank, AllReduceOfOneRankGivesTheInput) {
  for (size_t count : {size_t{1}, size_t{7}, size_t{100000}}) {
    SCOPED_TRACE("count " + std::to_string(count));
    std::vector<float> floats(count);
    std::vector<int32_t> ints(count);
    for (size_t i = 0; i < count; ++i) {
      floats[i] = (i % 2 ? -1.0f : 1.0f) * (0.5f + static_cast<float>(i % 1013));
      ints[i] = static_cast<int32_t>(i * 2654435761u);  // both signs, large magnitudes
    }
    expectOneRankAllReduceIsIdentity(comm_, ncclFloat32, floats);
    expectOneRankAllReduceIsIdentity(comm_, ncclInt32, ints);
  }
}

// ---- Groups -------------------------------------------------------------------------------------

TEST(BadInputGroupNoComm, EndWithoutStartIsInvalidUsage) {
  // Twice: a failed ncclGroupEnd must not leave a group half open.
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(failsWith([] { return ncclGroupEnd(); }, ncclInvalidUsage, {"ncclGroupStart"}));
  }
}

TEST(BadInputGroupNoComm, SimulateEndWithoutStartIsInvalidUsage) {
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  EXPECT_TRUE(
      failsWith([&] { return ncclGroupSimulateEnd(&info); }, ncclInvalidUsage, {"ncclGroupStart"}));
}

TEST_F(BadInputGroup, NestedGroupRunsAtTheOutermostEnd) {
  std::vector<float> send = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> recv(4, 0.0f);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(allReduce(send.data(), recv.data(), 4), ncclSuccess) << ncclGetLastError(comm_);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm_);
  EXPECT_EQ(recv, std::vector<float>(4, 0.0f)) << "an inner ncclGroupEnd ran the group";
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm_);
  EXPECT_EQ(recv, send);
  // Both groups are closed now.
  EXPECT_TRUE(failsWith([] { return ncclGroupEnd(); }, ncclInvalidUsage, {"ncclGroupStart"}));
}

TEST_F(BadInputGroup, BadCallInsideGroupFailsAtOnce) {
  std::vector<float> buf(4, 1.0f);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_TRUE(failsWith([&] { return allReduce(nullptr, buf.data(), 4); }, ncclInvalidArgument,
                        {"sendbuff", "NULL"}, comm_));
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm_);
}

TEST_F(BadInputGroup, SimulateEndEstimatesAndRunsNothing) {
  std::vector<float> send(1 << 20, 5.0f);
  std::vector<float> recv(1 << 20, 0.0f);
  ncclSimInfo_t small = NCCL_SIM_INFO_INITIALIZER;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(allReduce(send.data(), recv.data(), 2), ncclSuccess);
  ASSERT_EQ(ncclGroupSimulateEnd(&small), ncclSuccess) << ncclGetLastError(comm_);
  EXPECT_GT(small.estimatedTime, 0.0f);
  EXPECT_EQ(recv, std::vector<float>(recv.size(), 0.0f)) << "a simulated group ran its operations";
  EXPECT_TRUE(failsWith([] { return ncclGroupEnd(); }, ncclInvalidUsage, {"ncclGroupStart"}))
      << "ncclGroupSimulateEnd left the group open";

  // Two large calls are predicted to take longer than one small one.
  ncclSimInfo_t large = NCCL_SIM_INFO_INITIALIZER;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(allReduce(send.data(), recv.data(), send.size()), ncclSuccess);
  ASSERT_EQ(allReduce(send.data(), recv.data(), send.size()), ncclSuccess);
  ASSERT_EQ(ncclGroupSimulateEnd(&large), ncclSuccess) << ncclGetLastError(comm_);
  EXPECT_GT(large.estimatedTime, small.estimatedTime);
  EXPECT_EQ(recv, std::vector<float>(recv.size(), 0.0f));
}

// Sends, receives, gather, scatter and all-to-all are estimated too, as the
// batches ncclGroupEnd would run; nothing moves.
TEST_F(BadInputGroup, SimulateEndEstimatesPointToPoint) {
  std::vector<float> send(1 << 20, 5.0f);
  std::vector<float> recv(1 << 20, 0.0f);
  auto simulate = [&](auto&& issue) {
    ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    issue();
    EXPECT_EQ(ncclGroupSimulateEnd(&info), ncclSuccess) << ncclGetLastError(comm_);
    EXPECT_EQ(recv, std::vector<float>(recv.size(), 0.0f)) << "a simulated group moved data";
    return info.estimatedTime;
  };
  auto sendRecv = [&](size_t count) {
    return simulate([&] {
      ASSERT_EQ(ncclSend(send.data(), count, ncclFloat32, 0, comm_, nullptr), ncclSuccess);
      ASSERT_EQ(ncclRecv(recv.data(), count, ncclFloat32, 0, comm_, nullptr), ncclSuccess);
    });
  };
  const float small = sendRecv(16);
  const float large = sendRecv(send.size());
  EXPECT_GT(small, 0.0f);
  EXPECT_GT(large, small);
  const float collectives = simulate([&] {
    ASSERT_EQ(ncclGather(send.data(), recv.data(), send.size(), ncclFloat32, 0, comm_, nullptr),
              ncclSuccess);
    ASSERT_EQ(ncclScatter(send.data(), recv.data(), send.size(), ncclFloat32, 0, comm_, nullptr),
              ncclSuccess);
    ASSERT_EQ(ncclAlltoAll(send.data(), recv.data(), send.size(), ncclFloat32, comm_, nullptr),
              ncclSuccess);
  });
  // Three batches of the large copy: three times the one above, within rounding.
  EXPECT_NEAR(collectives, 3 * large, 0.01f * collectives);
}

TEST_F(BadInputGroup, SimulateEndRefusesAnUninitializedSimInfo) {
  std::vector<float> buf(2, 1.0f);
  ncclSimInfo_t info{};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(allReduce(buf.data(), buf.data(), 2), ncclSuccess);
  (void)primeWithVersion();
  EXPECT_EQ(ncclGroupSimulateEnd(&info), ncclInvalidArgument);
  std::string text = ncclGetLastError(comm_);
  EXPECT_NE(text.find("NCCL_SIM_INFO_INITIALIZER"), std::string::npos) << text;
  // The group is still open: end it for real.
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
}

// ---- Library information ------------------------------------------------------------------------

TEST(BadInputLibraryInfo, VersionIsTheHeaders) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  EXPECT_EQ(version, NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH));
}

TEST(BadInputLibraryInfo, EveryResultHasAnErrorString) {
  std::set<std::string> seen;
  for (int r = ncclSuccess; r < ncclNumResults; ++r) {
    const char* text = ncclGetErrorString(static_cast<ncclResult_t>(r));
    ASSERT_NE(text, nullptr) << "result " << r;
    EXPECT_GT(strlen(text), 0u) << "result " << r;
    EXPECT_TRUE(seen.insert(text).second) << "result " << r << " shares its text: " << text;
  }
  for (int r : {static_cast<int>(ncclNumResults), -1, 1000, INT_MAX, INT_MIN}) {
    const char* text = ncclGetErrorString(static_cast<ncclResult_t>(r));
    ASSERT_NE(text, nullptr) << "result " << r;
    EXPECT_GT(strlen(text), 0u) << "result " << r;
    EXPECT_EQ(seen.count(text), 0u) << "out-of-range result " << r << " reads as a real one";
  }
}

}  // namespace
