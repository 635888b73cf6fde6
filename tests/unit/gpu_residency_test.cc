// Co-residency of the ranks that share a GPU (comm/gpu_channels.h): the channel rule on its own,
// then communicators on an emulated GPU made small (few multiprocessors, few blocks each), as a
// real GPU is for many ranks: braid's own channel count is lowered to fit, a count the user
// forces that does not fit is refused, ranks that cannot all be resident are refused at
// creation, and a batch of sends and receives that needs more blocks than the rank's share is
// refused rather than launched to spin forever.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "braid/comm.h"
#include "comm/gpu_channels.h"
#include "gpu/runtime.h"
#include "support/recording_runtime.h"
#include "support/scoped_env.h"
#include "support/thread_comms.h"

namespace braid {
namespace {

using comm::chooseGpuChannels;
using comm::GpuChannelInputs;
using testing::RecordingRuntime;
using testing::ScopedEnv;

GpuChannelInputs device(int sms, int blocksPerSm, int ranks) {
  GpuChannelInputs in;
  in.multiprocessors = sms;
  in.blocksPerSm = blocksPerSm;
  in.ranksOnDevice = ranks;
  return in;
}

TEST(GpuChannels, BraidPicksOneChannelPerEightMultiprocessorsOfEachRank) {
  // An H200: 132 multiprocessors, 2 engine blocks each.
  auto one = chooseGpuChannels(device(132, 2, 1));
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one.value().channels, 16);
  EXPECT_EQ(one.value().blockBudget, 264);
  auto four = chooseGpuChannels(device(132, 2, 4));
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four.value().channels, 4);
  EXPECT_EQ(four.value().blockBudget, 66);
  // Never fewer than two while they fit, never more than 32.
  EXPECT_EQ(chooseGpuChannels(device(8, 2, 4)).value().channels, 2);
  EXPECT_EQ(chooseGpuChannels(device(1024, 2, 1)).value().channels, 32);
}

TEST(GpuChannels, BraidsOwnChoiceIsLoweredToTheRanksShareOfTheDevice) {
  auto choice = chooseGpuChannels(device(4, 1, 3));  // 4 blocks for 3 ranks: 1 each
  ASSERT_TRUE(choice.ok()) << choice.status().message();
  EXPECT_EQ(choice.value().channels, 1);
  EXPECT_EQ(choice.value().blockBudget, 1);
  EXPECT_NE(choice.value().why.find("lowered"), std::string::npos) << choice.value().why;
}

TEST(GpuChannels, RanksThatCannotEachHaveABlockAreRefusedSayingWhy) {
  auto choice = chooseGpuChannels(device(2, 1, 3));
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().code(), ErrorCode::kInvalidUsage);
  const std::string& m = choice.status().message();
  EXPECT_NE(m.find("3 rank(s)"), std::string::npos) << m;
  EXPECT_NE(m.find("hold 2 engine blocks"), std::string::npos) << m;
  EXPECT_NE(m.find("fewer ranks per GPU"), std::string::npos) << m;
}

TEST(GpuChannels, MinAndMaxBoundBraidsChoice) {
  GpuChannelInputs in = device(132, 2, 1);
  in.maxChannels = 4;
  EXPECT_EQ(chooseGpuChannels(in).value().channels, 4);
  in.maxChannels = 0;
  in.minChannels = 24;
  EXPECT_EQ(chooseGpuChannels(in).value().channels, 24);
  in.maxChannels = 8;  // min above max
  auto crossed = chooseGpuChannels(in);
  ASSERT_FALSE(crossed.ok());
  EXPECT_NE(crossed.status().message().find("exceeds NCCL_MAX_NCHANNELS"), std::string::npos);
}

TEST(GpuChannels, ACountTheUserForcesIsKeptOrRefusedNeverLowered) {
  GpuChannelInputs in = device(132, 2, 1);
  in.forced = 40;  // above braid's own most: the user may
  EXPECT_EQ(chooseGpuChannels(in).value().channels, 40);
  in = device(4, 2, 2);  // 4 blocks a rank
  in.forced = 6;
  auto forced = chooseGpuChannels(in);
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.status().message().find("BRAID_NCHANNELS asks for 6"), std::string::npos)
      << forced.status().message();
  in.forced = 0;
  in.minChannels = 6;
  auto atLeast = chooseGpuChannels(in);
  ASSERT_FALSE(atLeast.ok());
  EXPECT_NE(atLeast.status().message().find("NCCL_MIN_NCHANNELS asks for 6"), std::string::npos)
      << atLeast.status().message();
}

/// Ranks as threads of this process, each on the emulated device `devices[r]` of a GPU of
/// `sms` multiprocessors holding `blocksPerSm` engine blocks each.
class GpuResidency : public ::testing::Test {
 protected:
  // Large enough that the selector runs every channel; not a multiple of a pack: heads and
  // tails run.
  static constexpr size_t kCount = (size_t{1} << 18) + 3;

  void make(int sms, int blocksPerSm) {
    gpu::EmulatedShape shape;
    shape.devices = 2;
    shape.multiprocessors = sms;
    shape.blocksPerSm = blocksPerSm;
    runtime_ = std::make_unique<RecordingRuntime>(shape);
    installed_ = std::make_unique<gpu::ScopedRuntime>(*runtime_);
  }

  /// Creates the ranks; the statuses of those that failed go to failures_.
  void create(const std::vector<int>& devices, CommOptions base = {}) {
    comms_.clear();
    testing::ThreadComms made = testing::createThreadComms(devices, base);
    comms_ = std::move(made.comms);
    failures_ = std::move(made.failures);
  }

  /// An all-reduce of kCount floats on every rank, checked; returns the blocks of each launch.
  std::vector<unsigned> allReduceBlocks(const std::vector<int>& devices) {
    runtime_->clear();
    const int n = static_cast<int>(devices.size());
    std::vector<std::thread> threads;
    std::vector<std::vector<float>> results(n, std::vector<float>(kCount));
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        gpu::Runtime& rt = *runtime_;
        EXPECT_TRUE(rt.setDevice(devices[r]).ok());
        gpu::Stream s = rt.streamCreate().value();
        std::vector<float> in(kCount);
        for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>((r + 1) * (i % 97));
        void* buf = rt.deviceAlloc(kCount * sizeof(float)).value();
        EXPECT_TRUE(rt.copy(buf, in.data(), kCount * sizeof(float), s).ok());
        EXPECT_TRUE(
            comms_[r]->allReduce(buf, buf, kCount, DataType::kFloat32, RedOp::kSum, s).ok());
        EXPECT_TRUE(rt.copy(results[r].data(), buf, kCount * sizeof(float), s).ok());
        EXPECT_TRUE(rt.streamSynchronize(s).ok());
        (void)rt.deviceFree(buf);
        (void)rt.streamDestroy(s);
      });
    }
    for (auto& t : threads) t.join();
    const float ranksSum = static_cast<float>(n * (n + 1) / 2);
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < kCount; ++i) {
        if (results[r][i] == ranksSum * static_cast<float>(i % 97)) continue;
        ADD_FAILURE() << "rank " << r << " [" << i << "]: " << results[r][i];
        break;
      }
    }
    std::vector<unsigned> blocks;
    for (const auto& l : runtime_->launches()) blocks.push_back(l.blocks);
    return blocks;
  }

  void TearDown() override {
    comms_.clear();
    installed_.reset();
    runtime_.reset();
  }

  std::unique_ptr<RecordingRuntime> runtime_;
  std::unique_ptr<gpu::ScopedRuntime> installed_;
  std::vector<std::unique_ptr<Comm>> comms_;
  std::vector<Status> failures_;
};

TEST_F(GpuResidency, TwoRanksOnASmallGpuRunOneChannelEachAndAgree) {
  make(/*sms=*/1, /*blocksPerSm=*/2);  // 2 blocks: 1 for each rank
  create({0, 0});
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(failures_[r].ok()) << failures_[r].message();
  const std::vector<unsigned> blocks = allReduceBlocks({0, 0});
  ASSERT_EQ(blocks.size(), 2u);
  for (unsigned b : blocks) EXPECT_EQ(b, 1u);
}

TEST_F(GpuResidency, RanksOnTwoGpusKeepTheirChannels) {
  make(/*sms=*/1, /*blocksPerSm=*/2);  // 2 blocks each, one rank each
  create({0, 1});
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(failures_[r].ok()) << failures_[r].message();
  for (unsigned b : allReduceBlocks({0, 1})) EXPECT_EQ(b, 2u);
}

TEST_F(GpuResidency, RanksThatCannotAllBeResidentAreRefusedAtCreation) {
  make(/*sms=*/1, /*blocksPerSm=*/1);  // 1 block for 2 ranks
  create({0, 0});
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(failures_[r].ok()) << "rank " << r << " was created";
    EXPECT_NE(failures_[r].message().find("share this GPU"), std::string::npos)
        << failures_[r].message();
  }
}

TEST_F(GpuResidency, AForcedChannelCountThatDoesNotFitIsRefused) {
  make(/*sms=*/2, /*blocksPerSm=*/1);  // 2 blocks for 2 ranks
  ScopedEnv channels("BRAID_NCHANNELS", "2");
  create({0, 0});
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(failures_[r].ok());
    EXPECT_NE(failures_[r].message().find("BRAID_NCHANNELS asks for 2"), std::string::npos)
        << failures_[r].message();
  }
}

TEST_F(GpuResidency, MaxChannelsOfTheConfigBoundTheLaunch) {
  make(/*sms=*/16, /*blocksPerSm=*/2);
  CommOptions options;
  options.maxChannels = 1;  // ncclConfig_t.maxCTAs
  create({0, 1}, options);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(failures_[r].ok()) << failures_[r].message();
  for (unsigned b : allReduceBlocks({0, 1})) EXPECT_EQ(b, 1u);
}

TEST_F(GpuResidency, ABatchNeedingMoreBlocksThanTheRanksShareIsRefused) {
  make(/*sms=*/1, /*blocksPerSm=*/1);  // one block a rank: a send and a receive need two
  create({0, 1});
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(failures_[r].ok()) << failures_[r].message();
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      gpu::Runtime& rt = *runtime_;
      EXPECT_TRUE(rt.setDevice(r).ok());
      gpu::Stream s = rt.streamCreate().value();
      void* a = rt.deviceAlloc(64).value();
      void* b = rt.deviceAlloc(64).value();
      std::vector<P2pOp> ops(2);
      ops[0] = {P2pOp::Kind::kSend, 1 - r, a, 16, DataType::kFloat32};
      ops[1] = {P2pOp::Kind::kRecv, 1 - r, b, 16, DataType::kFloat32};
      const Status s2 = comms_[r]->sendRecv(ops, s);
      EXPECT_FALSE(s2.ok()) << "rank " << r;
      EXPECT_NE(s2.message().find("needs 2 blocks"), std::string::npos) << s2.message();
      (void)rt.streamSynchronize(s);
      (void)rt.deviceFree(a);
      (void)rt.deviceFree(b);
      (void)rt.streamDestroy(s);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace braid
