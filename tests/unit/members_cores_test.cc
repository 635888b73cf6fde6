// Members::coresOfHost: how many CPUs the ranks of a host may run on between them, from the
// affinities they exchanged. It decides whether a rank's waits poll (a core each) or sleep at
// once (ranks share cores) in Links::configure.
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
  Members m;
  m.rank = rank;
  m.nranks = static_cast<int>(hosts.size());
  m.peers.resize(hosts.size());
  for (size_t r = 0; r < hosts.size(); ++r) {
    m.peers[r].rank = static_cast<int>(r);
    m.peers[r].hostId = hosts[r];
    m.peers[r].cpus = CpuMask::of(cpus[r]);
  }
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

}  // namespace
}  // namespace braid::comm
