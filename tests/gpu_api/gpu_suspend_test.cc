// ncclCommSuspend and ncclCommResume on GPU communicators, with and without NCCL_SUSPEND_MEM.
//
// A suspend with the flag frees the FIFOs, programs and one-shot boards, and the resume makes
// the boards and fresh cursors again (the FIFOs come back with their first use). A suspend
// without it frees nothing: the FIFOs its calls made stay live, their cursors where the last
// call left them, and the resume must leave them so. Each test warms every FIFO and board up
// first (all-reduces of 16 B to 1 MiB), suspends and resumes every rank, makes new links (a
// send/recv pair, point-to-point FIFOs the collectives had not made) and then runs every
// collective, checked as in the matrix. Two ranks on two GPUs, as threads of this process.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "gpu_api/gpu_cases.h"

namespace {

using braid::testing::gpu::devicesFor;
using braid::testing::gpu::GpuRanks;
using braid::testing::matrix::Case;
using braid::testing::matrix::caseName;
using braid::testing::matrix::CaseRun;
using braid::testing::matrix::Coll;
using braid::testing::matrix::Op;
using braid::testing::matrix::reduces;
using braid::testing::matrix::testSeed;

constexpr int kRanks = 2;

class GpuSuspend : public ::testing::TestWithParam<int> {  // ncclCommSuspend's flags
 protected:
  void SetUp() override { BRAID_REQUIRE_GPUS(kRanks); }
};

void runCase(const Case& c, const GpuRanks& g) {
  SCOPED_TRACE(caseName(c));
  CaseRun run(c, testSeed(), /*onlyRank=*/-1);
  braid::testing::gpu::runInGroup(run, g);
}

// Every rank at once: a suspend with NCCL_SUSPEND_MEM, and its resume, are collective.
void onEveryRank(const GpuRanks& g, ncclResult_t (*call)(ncclComm_t, int), int flags,
                 const char* what) {
  std::vector<ncclResult_t> results(g.size(), ncclSuccess);
  std::vector<std::string> errors(g.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < g.size(); ++r) {
    threads.emplace_back([&, r] {
      braid::testing::gpu::deviceApi()->setDevice(g.device(r));
      results[r] = call(g.comm(r), flags);
      if (results[r] != ncclSuccess) errors[r] = ncclGetLastError(g.comm(r));
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < g.size(); ++r) {
    EXPECT_EQ(results[r], ncclSuccess) << what << " on rank " << r << ": " << errors[r];
  }
}

TEST_P(GpuSuspend, ResumeKeepsWhatTheSuspendKept) {
  const int flags = GetParam();
  GpuRanks g(devicesFor(kRanks));
  ASSERT_TRUE(g.ok());
  for (size_t count = 4; count <= (size_t{1} << 18); count *= 4) {  // 16 B .. 1 MiB of floats
    runCase({Coll::kAllReduce, ncclFloat32, Op::kSum, count, kRanks, false, 0}, g);
  }
  ASSERT_FALSE(HasFailure());

  onEveryRank(g, ncclCommSuspend, flags, "ncclCommSuspend");
  onEveryRank(
      g, [](ncclComm_t comm, int) { return ncclCommResume(comm); }, 0, "ncclCommResume");
  ASSERT_FALSE(HasFailure());

  // New links after the resume: the point-to-point FIFOs, first used here.
  runCase({Coll::kSendRecv, ncclFloat32, Op::kSum, 1000, kRanks, false, 1}, g);
  for (Coll coll : braid::testing::matrix::kAllColls) {
    for (size_t count : {size_t{5}, size_t{70001}}) {
      const bool inPlace = coll == Coll::kBcast;
      runCase({coll, ncclFloat32, Op::kSum, count, kRanks, inPlace, 1}, g);
      if (reduces(coll)) runCase({coll, ncclBfloat16, Op::kAvg, count, kRanks, inPlace, 0}, g);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Flags, GpuSuspend, ::testing::Values(0, NCCL_SUSPEND_MEM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == 0 ? "NoFlags" : "SuspendMem");
                         });

}  // namespace
