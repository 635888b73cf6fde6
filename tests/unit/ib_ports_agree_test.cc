// The hello's port check (transport/net/ib/ib_queue_pairs.h, checkPortsAgree): ends of one
// FIFO refuse a queue pair between InfiniBand and Ethernet ports, and between InfiniBand
// subnets where LIDs route, naming both ports, both values and the setting that helps; ports
// that agree, Ethernet ports of different prefixes and GID-routed InfiniBand pass.
#include "transport/net/ib/ib_queue_pairs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace braid::transport::ib {
namespace {

struct Gid {
  uint8_t raw[16];
  explicit Gid(uint8_t subnet) : raw{0xfe, 0x80, 0, 0, 0, 0, 0, subnet, 1, 2, 3, 4, 5, 6, 7, 8} {}
};

TEST(IbPortsAgree, MatchingPortsPass) {
  const Gid a(1), b(1);
  EXPECT_TRUE(checkPortsAgree({"mlx5_0:1", IBV_LINK_LAYER_INFINIBAND, a.raw},
                              {"peer", IBV_LINK_LAYER_INFINIBAND, b.raw}, -1, 3)
                  .ok());
  EXPECT_TRUE(checkPortsAgree({"mlx5_0:1", IBV_LINK_LAYER_ETHERNET, a.raw},
                              {"peer", IBV_LINK_LAYER_ETHERNET, Gid(9).raw}, -1, 3)
                  .ok());
}

TEST(IbPortsAgree, InfinibandAgainstEthernetIsRefusedNamingBoth) {
  const Gid a(1);
  const Status s = checkPortsAgree({"mlx5_0:1", IBV_LINK_LAYER_INFINIBAND, a.raw},
                                   {"(queue pair 0)", IBV_LINK_LAYER_ETHERNET, a.raw}, -1, 3);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidUsage);
  for (const char* needle : {"mlx5_0:1", "InfiniBand", "rank 3", "Ethernet", "BRAID_IB_HCA"}) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << needle << " in " << s.message();
  }
}

TEST(IbPortsAgree, InfinibandSubnetsDifferOnlyWhereLidsRoute) {
  const Gid a(1), b(2);
  const Status s = checkPortsAgree({"mlx5_0:1", IBV_LINK_LAYER_INFINIBAND, a.raw},
                                   {"peer", IBV_LINK_LAYER_INFINIBAND, b.raw}, -1, 5);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidUsage);
  for (const char* needle :
       {"fe80:0000:0000:0001", "fe80:0000:0000:0002", "rank 5", "BRAID_IB_GID_INDEX"}) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << needle << " in " << s.message();
  }
  // With a GID index the queue pair routes by GID, through a router: allowed.
  EXPECT_TRUE(checkPortsAgree({"mlx5_0:1", IBV_LINK_LAYER_INFINIBAND, a.raw},
                              {"peer", IBV_LINK_LAYER_INFINIBAND, b.raw}, 0, 5)
                  .ok());
}

}  // namespace
}  // namespace braid::transport::ib
