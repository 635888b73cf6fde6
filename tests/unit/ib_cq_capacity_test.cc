// Completion queue sizes that follow the queue pairs on them (transport/net/ib/ib_cq_capacity.h):
// the growth rule, and on the emulated HCA a port's CQ growing with ibv_resize_cq as queue pairs
// are made, up to the device's max_cqe, and a clear refusal past it instead of an overrun.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "emulation/ib/emulated_limits.h"
#include "support/emulated_verbs.h"
#include "transport/net/ib/ib_cq_capacity.h"
#include "transport/net/ib/ib_device.h"

namespace braid::transport::ib {
namespace {

TEST(CqGrowth, DoublesUntilTheNeedFitsAndNeverPastTheLimit) {
  EXPECT_EQ(grownCqSize(1024, 500, 65536), 1024);
  EXPECT_EQ(grownCqSize(1024, 1024, 65536), 1024);
  EXPECT_EQ(grownCqSize(1024, 1025, 65536), 2048);
  EXPECT_EQ(grownCqSize(1024, 5000, 65536), 8192);
  EXPECT_EQ(grownCqSize(1024, 65536, 65536), 65536);
  EXPECT_EQ(grownCqSize(1024, 40000, 50000), 50000);  // capped: the limit itself holds it
  EXPECT_EQ(grownCqSize(1024, 65537, 65536), -1);
  EXPECT_EQ(grownCqSize(0, 3, 16), 4);
}

/// Emulated port emu_0:1, opened as the transport opens it.
class CqCapacityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    emulateDevices(1);
    Result<std::vector<std::unique_ptr<IbPort>>> opened = openPorts(emulatedVerbs(), IbSettings{});
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    ASSERT_EQ(opened.value().size(), 1u);
    ports_ = std::move(opened).value();
  }
  void TearDown() override {
    for (ibv_qp* qp : qps_) destroyQueuePair(port(), qp);
  }
  IbPort& port() { return *ports_[0]; }
  /// A queue pair with `depth` send and `depth` receive requests.
  Result<ibv_qp*> make(uint32_t depth) {
    ibv_qp_init_attr init{};
    init.send_cq = port().cq;
    init.recv_cq = port().cq;
    init.qp_type = IBV_QPT_RC;
    init.cap = {depth, depth, 1, 1, 0};
    Result<ibv_qp*> qp = createQueuePair(port(), &init, 5);
    if (qp.ok()) qps_.push_back(qp.value());
    return qp;
  }

  std::vector<std::unique_ptr<IbPort>> ports_;
  std::vector<ibv_qp*> qps_;
};

TEST_F(CqCapacityTest, TheCompletionQueueGrowsWithItsQueuePairs) {
  EXPECT_EQ(port().cq->cqe, kInitialCqEntries);
  EXPECT_EQ(port().completions.limit(), emulated::kMaxCqe);
  ASSERT_TRUE(make(256).ok());  // 512 entries: fits as opened
  EXPECT_EQ(port().cq->cqe, kInitialCqEntries);
  ASSERT_TRUE(make(1024).ok());  // 2560 promised
  EXPECT_EQ(port().completions.promised(), 2560);
  EXPECT_GE(port().cq->cqe, 2560);
  ASSERT_TRUE(make(1024).ok());  // 4608
  EXPECT_GE(port().cq->cqe, 4608);
  // A queue pair destroyed gives its entries back.
  destroyQueuePair(port(), qps_.back());
  qps_.pop_back();
  EXPECT_EQ(port().completions.promised(), 2560);
}

TEST_F(CqCapacityTest, PastTheDevicesMaxCqeAQueuePairIsRefusedNamingTheLimit) {
  // 32 queue pairs of 1024 + 1024 fill the emulated device's 65536 entries exactly.
  const int fill = emulated::kMaxCqe / (2 * 1024);
  for (int i = 0; i < fill; ++i) ASSERT_TRUE(make(1024).ok()) << i;
  EXPECT_EQ(port().cq->cqe, emulated::kMaxCqe);
  Result<ibv_qp*> refused = make(1024);
  ASSERT_FALSE(refused.ok());
  const std::string& why = refused.status().message();
  EXPECT_NE(why.find("emu_0:1"), std::string::npos) << why;
  EXPECT_NE(why.find("for rank 5"), std::string::npos) << why;
  EXPECT_NE(why.find("would need 67584 entries"), std::string::npos) << why;
  EXPECT_NE(why.find("max_cqe of 65536"), std::string::npos) << why;
  EXPECT_EQ(port().completions.promised(), emulated::kMaxCqe);  // nothing promised for it
  // After one goes, one fits again.
  destroyQueuePair(port(), qps_.back());
  qps_.pop_back();
  EXPECT_TRUE(make(1024).ok());
}

}  // namespace
}  // namespace braid::transport::ib
