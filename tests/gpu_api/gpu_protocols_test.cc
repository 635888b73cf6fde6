// Every algorithm and protocol a GPU communicator runs, each forced (BRAID_ALGO, BRAID_PROTO) on
// communicators of 2, 3 and 4 ranks as threads, two ranks to a GPU: every collective (the tree
// serves all_reduce, broadcast and reduce, the one-shot all_reduce up to 64 KiB; the others fall
// back to the ring, as NCCL's do), out
// of and in place, on counts that fit one LL slot, need many (4000 floats are 16000 bytes, about
// one LL slot of payload, and 70001 need several slots on either protocol), ending in a partial
// slice. The default selection's picks are covered by the matrix; this proves each pick works.
// Also in processes: LL and the one-shot between two processes on one GPU, and over pinned host
// memory; and deterministic mode's one-shot gives the tree's bits.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "api/api_test_util.h"
#include "gpu_api/gpu_cases.h"
#include "support/uniform_real.h"

namespace gpu_protocols_test {

using braid::testing::ScopedEnv;
using braid::testing::gpu::devicesFor;
using braid::testing::gpu::GpuRanks;
using braid::testing::gpu::runCasesInProcesses;
using braid::testing::matrix::Case;
using braid::testing::matrix::CaseRun;
using braid::testing::matrix::Coll;
using braid::testing::matrix::hasInPlace;
using braid::testing::matrix::hasOutOfPlace;
using braid::testing::matrix::Op;
using braid::testing::matrix::reduces;

std::vector<Case> casesFor(int nranks, const std::vector<size_t>& counts) {
  std::vector<Case> cases;
  for (Coll coll : braid::testing::matrix::kAllColls) {
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        if (inPlace ? !hasInPlace(coll) : !hasOutOfPlace(coll)) continue;
        cases.push_back({coll, ncclFloat32, Op::kSum, count, nranks, inPlace, nranks - 1});
        if (reduces(coll))
          cases.push_back({coll, ncclBfloat16, Op::kAvg, count, nranks, inPlace, 0});
      }
    }
  }
  return cases;
}

using Param = std::tuple<const char*, const char*>;  // BRAID_ALGO, BRAID_PROTO

class GpuProtocols : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST_P(GpuProtocols, EveryCollectiveOnTwoThreeAndFourRanks) {
  const auto [algo, proto] = GetParam();
  const std::string tracePattern =
      "/tmp/braid-gpu-protocols-" + std::to_string(getpid()) + "-%r.json";
  for (int nranks : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(nranks) + " ranks");
    std::unique_ptr<GpuRanks> g;
    {
      // Communicators read the environment when they are made. Their traces (BRAID_TRACE) say
      // what each call ran, so the test knows the forced algorithm and protocol were the ones.
      ScopedEnv a("BRAID_ALGO", algo);
      ScopedEnv p("BRAID_PROTO", proto);
      ScopedEnv t("BRAID_TRACE", tracePattern.c_str());
      g = std::make_unique<GpuRanks>(devicesFor(nranks, 2));
    }
    ASSERT_TRUE(g->ok());
    size_t forcedCalls = 0;  // all-reduces of up to 64 KiB: every algorithm runs those
    for (const Case& c : casesFor(nranks, {1, 4000, 70001})) {
      SCOPED_TRACE(braid::testing::matrix::caseName(c));
      CaseRun run(c, braid::testing::matrix::testSeed());
      braid::testing::gpu::runInGroup(run, *g);
      if (HasFailure()) return;
      if (c.coll == Coll::kAllReduce && c.count <= 4000) ++forcedCalls;
    }
    g.reset();  // each rank writes its trace as its communicator goes
    for (int r = 0; r < nranks; ++r) {
      const std::string path =
          tracePattern.substr(0, tracePattern.find("%r")) + std::to_string(r) + ".json";
      const std::string json = readFile(path);
      std::remove(path.c_str());
      const std::string ran = std::string("\"algorithm\":\"") + algo + "\",\"protocol\":\"" + proto;
      EXPECT_GE(occurrences(json, ran), forcedCalls) << path << " ran " << ran << " too few times";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Forced, GpuProtocols,
                         ::testing::Values(Param{"ring", "simple"}, Param{"ring", "ll"},
                                           Param{"tree", "simple"}, Param{"tree", "ll"},
                                           Param{"oneshot", "ll"}),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

// The bits of a float32 all_reduce of 5 ranks (two to a GPU) with BRAID_DETERMINISTIC=1, on every
// rank, by one algorithm. Inputs span many magnitudes, so another order of additions would round
// differently.
std::vector<std::vector<float>> deterministicAllReduce(const char* algo, size_t count) {
  std::unique_ptr<GpuRanks> g;
  {
    ScopedEnv a("BRAID_ALGO", algo);
    ScopedEnv d("BRAID_DETERMINISTIC", "1");
    g = std::make_unique<GpuRanks>(devicesFor(5, 2));
  }
  const braidDeviceApi* api = braid::testing::gpu::deviceApi();
  const int n = g->size();
  std::vector<void*> send(n), recv(n);
  std::mt19937 rng(5);
  for (int r = 0; r < n; ++r) {
    std::vector<float> in(count);
    for (float& x : in) {
      const auto mantissa = static_cast<float>(braid::testing::uniformReal(rng, -1, 1));
      x = std::ldexp(mantissa, rng() % 40);
    }
    EXPECT_EQ(api->setDevice(g->device(r)), ncclSuccess);
    EXPECT_EQ(api->alloc(&send[r], count * sizeof(float)), ncclSuccess);
    EXPECT_EQ(api->alloc(&recv[r], count * sizeof(float)), ncclSuccess);
    EXPECT_EQ(api->copy(send[r], in.data(), count * sizeof(float), g->stream(r)), ncclSuccess);
  }
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(
        ncclAllReduce(send[r], recv[r], count, ncclFloat32, ncclSum, g->comm(r), g->stream(r)),
        ncclSuccess);
  }
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<std::vector<float>> out(n, std::vector<float>(count));
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(api->copy(out[r].data(), recv[r], count * sizeof(float), g->stream(r)), ncclSuccess);
    EXPECT_EQ(api->streamSynchronize(g->stream(r)), ncclSuccess);
    api->release(send[r]);
    api->release(recv[r]);
  }
  return out;
}

class GpuDeterministic : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

TEST_F(GpuDeterministic, OneShotGivesTheTreesBitsOnEveryRank) {
  const size_t count = 3001;
  const auto tree = deterministicAllReduce("tree", count);
  const auto oneShot = deterministicAllReduce("oneshot", count);
  ASSERT_EQ(tree.size(), oneShot.size());
  for (size_t r = 0; r < tree.size(); ++r) {
    EXPECT_EQ(memcmp(tree[r].data(), tree[0].data(), count * sizeof(float)), 0) << "rank " << r;
    EXPECT_EQ(memcmp(oneShot[r].data(), tree[0].data(), count * sizeof(float)), 0) << "rank " << r;
  }
}

class GpuLlProcesses : public ::testing::Test {
 protected:
  void SetUp() override { BRAID_REQUIRE_GPU(); }
};

TEST_F(GpuLlProcesses, TwoProcessesOnOneGpu) {
  runCasesInProcesses(2, {0, 0}, casesFor(2, {1, 70001}),
                      [](int) { setenv("BRAID_PROTO", "ll", 1); });
}

TEST_F(GpuLlProcesses, ThreeProcessesOverPinnedHostMemory) {
  runCasesInProcesses(3, devicesFor(3), casesFor(3, {7, 70001}), [](int) {
    setenv("BRAID_PROTO", "ll", 1);
    setenv("BRAID_TRANSPORTS", "shm", 1);
  });
}

TEST_F(GpuLlProcesses, OneShotAcrossProcessesOnOneGpuAndOverPinnedHostMemory) {
  runCasesInProcesses(2, {0, 0}, casesFor(2, {1, 4000}),
                      [](int) { setenv("BRAID_ALGO", "oneshot", 1); });
  runCasesInProcesses(3, devicesFor(3), casesFor(3, {1, 4000}), [](int) {
    setenv("BRAID_ALGO", "oneshot", 1);
    setenv("BRAID_TRANSPORTS", "shm", 1);
  });
}

}  // namespace gpu_protocols_test
