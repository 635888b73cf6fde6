// Members::coresOfHost: how many CPUs the ranks of a host may run on between them, from the
// affinities they exchanged. It decides whether a rank's waits poll (a core each) or sleep at
// once (ranks share cores) in Links::configure. Members::someHostOversubscribed: whether any host
// runs more threads than it has CPUs, which every rank must answer alike (it sizes the FIFOs).
#include <gtest/gtest.h>

#include <vector>

#include "comm/members.h"
#include "topology/cpu_affinity.h"
#include "topology/host_id.h"

namespace braid::comm {
namespace {

using topology::CpuMask;

/// `rank`'s view of ranks on the hosts `hosts` with the affinities `cpus` (empty: unknown).
Members membersOf(int rank, const std::vector<uint64_t>& hosts,
                  const std::vector<std::vector<int>>& cpus) {
  std::vector<PeerInfo> peers(hosts.size());
  for (size_t r = 0; r < hosts.size(); ++r) {
    peers[r].rank = static_cast<int>(r);
    peers[r].hostId = hosts[r];
    peers[r].cpus = CpuMask::of(cpus[r]);
  }
  Members m(rank, std::move(peers));
  return m;
}

TEST(MembersCores, RanksBoundToACoreEachCountACoreEach) {
  EXPECT_EQ(membersOf(0, {7, 7}, {{0}, {1}}).coresOfHost(), 2);
  EXPECT_EQ(membersOf(1, {7, 7, 7, 7}, {{0}, {1}, {2}, {3}}).coresOfHost(), 4);
}

TEST(MembersCores, RanksBoundToOneCoreShareIt) {
  EXPECT_EQ(membersOf(0, {7, 7}, {{3}, {3}}).coresOfHost(), 1);
  EXPECT_EQ(membersOf(0, {7, 7, 7}, {{0, 1}, {1}, {0}}).coresOfHost(), 2);
}

TEST(MembersCores, UnboundRanksCountTheirCommonCpus) {
  EXPECT_EQ(membersOf(1, {7, 7}, {{0, 1, 2, 3}, {0, 1, 2, 3}}).coresOfHost(), 4);
}

TEST(MembersCores, OnlyTheRanksOfThisHostCount) {
  const Members m = membersOf(0, {7, 7, 9, 9}, {{0}, {1}, {2}, {3}});
  EXPECT_EQ(m.coresOfHost(), 2);
}

TEST(MembersCores, AnUnknownAffinityFallsBackToThisProcesssCount) {
  EXPECT_EQ(membersOf(0, {7, 7}, {{0}, {}}).coresOfHost(), topology::usableCores());
}

TEST(MembersOversubscribed, AHostWithMoreThreadsThanCpusIsOversubscribed) {
  // Two hosts of one rank each on 2 CPUs: 3 threads a rank (the rank and two proxies) do not fit.
  EXPECT_TRUE(membersOf(0, {7, 9}, {{0, 1}, {0, 1}}).someHostOversubscribed(3));
  EXPECT_FALSE(membersOf(0, {7, 9}, {{0, 1}, {0, 1}}).someHostOversubscribed(2));
  EXPECT_FALSE(membersOf(0, {7, 9}, {{0, 1, 2, 3}, {0, 1, 2}}).someHostOversubscribed(3));
}

TEST(MembersOversubscribed, EveryRankAnswersAlike) {
  // Host 9 has 2 ranks on 2 CPUs, host 7 one rank on 8: host 9 is oversubscribed at 2 threads a
  // rank, and rank 0, on host 7, says so as well as ranks 1 and 2.
  const std::vector<uint64_t> hosts = {7, 9, 9};
  const std::vector<std::vector<int>> cpus = {{0, 1, 2, 3, 4, 5, 6, 7}, {0}, {1}};
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_TRUE(membersOf(rank, hosts, cpus).someHostOversubscribed(2)) << rank;
    EXPECT_FALSE(membersOf(rank, hosts, cpus).someHostOversubscribed(1)) << rank;
  }
}

TEST(MembersHosts, HostsAreNumberedInTheOrderOfTheirFirstRanks) {
  // Ranks of hosts 9, 7 and 5 interleaved: host 9 first (rank 0), then 7 (rank 1), then 5.
  const Members m = membersOf(2, {9, 7, 9, 5, 7}, {{0}, {4}, {1}, {}, {5, 6}});
  EXPECT_EQ(m.hostNumbers(), (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(m.hostCount(), 3);
  const std::vector<Members::HostCpus> hosts = m.cpusOfHosts();
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].firstRank, 0);
  EXPECT_EQ(hosts[0].ranks, 2);
  EXPECT_EQ(hosts[0].cpus, CpuMask::of({0, 1}));
  EXPECT_TRUE(hosts[0].known);
  EXPECT_EQ(hosts[1].firstRank, 1);
  EXPECT_EQ(hosts[1].ranks, 2);
  EXPECT_EQ(hosts[1].cpus, CpuMask::of({4, 5, 6}));
  EXPECT_EQ(hosts[2].firstRank, 3);
  EXPECT_FALSE(hosts[2].known);
  // cpusOfHost says the same of one host.
  const Members::HostCpus seven = m.cpusOfHost(7);
  EXPECT_EQ(seven.firstRank, 1);
  EXPECT_EQ(seven.cpus, hosts[1].cpus);
}

TEST(MembersHosts, AHostPerRankAtScale) {
  // 16384 ranks on as many hosts, the case where a scan of the ranks before each rank had been
  // quadratic (about 10^8 comparisons a call).
  constexpr int kRanks = 16384;
  std::vector<uint64_t> hosts(kRanks);
  std::vector<std::vector<int>> cpus(kRanks, std::vector<int>{0});
  for (int r = 0; r < kRanks; ++r) hosts[r] = 1000 + static_cast<uint64_t>(r) * 7;
  const Members m = membersOf(kRanks - 1, hosts, cpus);
  EXPECT_EQ(m.hostCount(), kRanks);
  const std::vector<Members::HostCpus> all = m.cpusOfHosts();
  ASSERT_EQ(all.size(), static_cast<size_t>(kRanks));
  EXPECT_EQ(all.back().firstRank, kRanks - 1);
  EXPECT_FALSE(m.someHostOversubscribed(1));
  EXPECT_TRUE(m.someHostOversubscribed(2));
}

TEST(MembersOversubscribed, AnUnknownAffinityAnswersNo) {
  EXPECT_FALSE(membersOf(0, {7, 9}, {{0}, {}}).someHostOversubscribed(8));
}

}  // namespace
}  // namespace braid::comm
