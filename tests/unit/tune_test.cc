// The cost model (src/tune/cost_model.h) and the selector (select.h): the
// shapes and predictions against hand-computed values, crossovers where the
// formulas put them, the selector's choice on both sides of each boundary,
// allow-lists, refusals and the parsing of BRAID_ALGO / BRAID_PROTO.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "algo/tree.h"
#include "tune/cost_model.h"
#include "tune/select.h"

namespace braid::tune {
namespace {

using algo::Algorithm;
using algo::Protocol;

constexpr int kSimple = static_cast<int>(Protocol::kSimple);
constexpr int kLl = static_cast<int>(Protocol::kLl);

const Collective kAllCollectives[] = {Collective::kAllReduce, Collective::kReduceScatter,
                                      Collective::kAllGather, Collective::kBroadcast,
                                      Collective::kReduce};

// A model with round figures, so that expected times can be worked out by
// hand: 1 us and 10 GB/s (1e4 bytes/us) per hop for Simple, LL half the
// latency and half the bandwidth, 0.5 us per call, no tree penalty.
Model roundModel() {
  Model m;
  m.callUs = 0.5;
  m.intraHost[kSimple] = {1.0, 10.0};
  m.intraHost[kLl] = {0.5, 5.0};
  m.intraHostShared[kSimple] = {20.0, 5.0};
  m.intraHostShared[kLl] = {20.0, 2.5};
  m.interHost[kSimple] = {5.0, 5.0};
  m.interHost[kLl] = {4.0, 2.5};
  m.oneShot[kSimple] = {2.0, 0.5, 10.0};
  m.oneShot[kLl] = {1.0, 0.5, 5.0};
  m.oneShotShared[kSimple] = {4.0, 10.0, 5.0};
  m.oneShotShared[kLl] = {4.0, 10.0, 2.5};
  return m;
}

// The GPU cluster braid-sim models: 8 GPUs a host on NVLink (450 GB/s), a
// 400 Gb/s NIC (50 GB/s) between hosts. The latencies are round test values.
Model gpuClusterModel() {
  Model m;
  m.callUs = 5;
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    m.intraHost[p] = {p == kSimple ? 1.0 : 0.6, p == kSimple ? 450.0 : 200.0};
    m.interHost[p] = {p == kSimple ? 6.0 : 4.0, p == kSimple ? 50.0 : 25.0};
  }
  m.oneShot[kSimple] = {3, 0.5, 300};
  m.oneShot[kLl] = {2, 0.3, 150};
  m.channelsParallel = true;
  m.channelGBs[kSimple] = 30;
  m.channelGBs[kLl] = 15;
  return m;
}

Query allReduce(size_t bytes, int nranks, int nhosts = 1) {
  Query q;
  q.collective = Collective::kAllReduce;
  q.bytes = bytes;
  q.nranks = nranks;
  q.nhosts = nhosts;
  return q;
}

double predict(const Model& m, const Query& q, Algorithm a, Protocol p) {
  Result<double> r = predictUs(m, q, a, p);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : NAN;
}

Allowed only(std::initializer_list<Algorithm> algorithms,
             std::initializer_list<Protocol> protocols = {Protocol::kSimple, Protocol::kLl},
             size_t oneShotMaxBytes = 0) {
  Allowed a;
  std::fill(std::begin(a.algorithm), std::end(a.algorithm), false);
  std::fill(std::begin(a.protocol), std::end(a.protocol), false);
  for (Algorithm x : algorithms) a.algorithm[static_cast<int>(x)] = true;
  for (Protocol x : protocols) a.protocol[static_cast<int>(x)] = true;
  a.oneShotMaxBytes = oneShotMaxBytes;
  return a;
}

Choice chosen(const Model& m, const Query& q, const Allowed& allowed) {
  Result<Choice> r = choose(m, q, allowed);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : Choice{};
}

TEST(TuneNames, AlgorithmAndProtocolNamesAreTheEnvSpellings) {
  EXPECT_STREQ(algo::algorithmName(Algorithm::kRing), "ring");
  EXPECT_STREQ(algo::algorithmName(Algorithm::kTree), "tree");
  EXPECT_STREQ(algo::algorithmName(Algorithm::kOneShot), "oneshot");
  EXPECT_STREQ(algo::protocolName(Protocol::kSimple), "simple");
  EXPECT_STREQ(algo::protocolName(Protocol::kLl), "ll");
}

// The model's depth must be the depth of the tree the schedules build.
TEST(TuneShape, TreeDepthIsTheInOrderTreesDepth) {
  for (int n = 1; n <= 70; ++n) {
    int deepest = 0;
    for (int r = 0; r < n; ++r) {
      int hops = 0;
      for (int at = r; algo::inOrderTree(n, at).parent >= 0; at = algo::inOrderTree(n, at).parent) {
        ++hops;
      }
      deepest = std::max(deepest, hops);
    }
    EXPECT_EQ(treeDepth(n), deepest) << "n=" << n;
  }
  EXPECT_EQ(treeDepth(4096), 12);
  EXPECT_EQ(treeDepth(4097), 13);
}

TEST(TuneShape, RingAndTreeShapesOnOneHost) {
  Query q = allReduce(4000, 4);
  CostShape ring = costShape(q, Algorithm::kRing).value();
  EXPECT_EQ(ring.intraHops, 6);  // 2(N-1)
  EXPECT_EQ(ring.interHops, 0);
  EXPECT_DOUBLE_EQ(ring.busBytes, 6000);  // 2(N-1)/N of the data
  CostShape tree = costShape(q, Algorithm::kTree).value();
  EXPECT_EQ(tree.intraHops, 4);  // up and down a tree of depth 2
  EXPECT_DOUBLE_EQ(tree.busBytes, 8000);

  q.collective = Collective::kAllGather;
  CostShape gather = costShape(q, Algorithm::kRing).value();
  EXPECT_EQ(gather.intraHops, 3);
  EXPECT_DOUBLE_EQ(gather.busBytes, 3000);  // the other ranks' blocks

  q.collective = Collective::kBroadcast;
  CostShape chain = costShape(q, Algorithm::kRing).value();
  EXPECT_EQ(chain.intraHops, 3);
  EXPECT_DOUBLE_EQ(chain.busBytes, 4000);
  CostShape down = costShape(q, Algorithm::kTree).value();
  EXPECT_EQ(down.intraHops, 2);
  EXPECT_DOUBLE_EQ(down.busBytes, 8000);  // rank 2 sends every chunk to two children

  q = allReduce(4000, 4);
  CostShape oneShot = costShape(q, Algorithm::kOneShot).value();
  EXPECT_EQ(oneShot.peers, 3);
  EXPECT_DOUBLE_EQ(oneShot.peerBytes, 4000);
}

TEST(TuneShape, CrossingHopsAcrossHosts) {
  // 16 ranks on 2 hosts: a ring all-reduce path of 30 hops meets the 2 host
  // boundaries of the 16-edge ring 30 * 2 / 16 = 3.75, about 4 times.
  CostShape ring = costShape(allReduce(1 << 20, 16, 2), Algorithm::kRing).value();
  EXPECT_EQ(ring.interHops, 4);
  EXPECT_EQ(ring.intraHops, 26);
  EXPECT_TRUE(ring.crossesHosts);
  // 16 ranks on 4 hosts: depth 4, the top 2 levels join hosts.
  CostShape tree = costShape(allReduce(1 << 20, 16, 4), Algorithm::kTree).value();
  EXPECT_EQ(tree.interHops, 4);
  EXPECT_EQ(tree.intraHops, 4);
  // One rank per host: every hop crosses.
  CostShape flat = costShape(allReduce(1 << 20, 8, 8), Algorithm::kRing).value();
  EXPECT_EQ(flat.interHops, 14);
  EXPECT_EQ(flat.intraHops, 0);
}

TEST(TunePredict, MatchesTheFormulaByHand) {
  const Model m = roundModel();
  // Ring: 0.5 + 6 hops * 1 us + 6000 bytes / 1e4 bytes/us.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 4), Algorithm::kRing, Protocol::kSimple), 7.1);
  // Tree: 0.5 + 4 * 1 + 8000 / 1e4.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 4), Algorithm::kTree, Protocol::kSimple), 5.3);
  // LL: 0.5 + 6 * 0.5 + 6000 / 5e3.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 4), Algorithm::kRing, Protocol::kLl), 4.7);
  // One-shot: 0.5 + 2 + 3 * 0.5 + 3 * 4000 / 1e4; LL: 0.5 + 1 + 3 * 0.5 + 3 * 4000 / 5e3.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 4), Algorithm::kOneShot, Protocol::kSimple), 5.2);
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 4), Algorithm::kOneShot, Protocol::kLl), 5.4);
  // Nothing to move: the call returns at once.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(0, 4), Algorithm::kRing, Protocol::kSimple), 0);
}

TEST(TunePredict, TwoHostsUseTheNetworkForCrossingHopsAndBandwidth) {
  const Model m = roundModel();
  // 16 ranks, 2 hosts: 26 intra hops * 1 + 4 inter * 5, bandwidth min(10, 5) GB/s.
  const double bytes = 16e4;
  const double expected = 0.5 + 26 + 20 + 2 * 15.0 / 16 * bytes / 5e3;
  EXPECT_NEAR(predict(m, allReduce(16e4, 16, 2), Algorithm::kRing, Protocol::kSimple), expected,
              1e-9);
}

TEST(TuneFitNetwork, APlaceholderTakesThePlannedRingsAndKeepsItsProportions) {
  // The GPU model's network is a placeholder: 8 NICs of 400 Gb/s replace it, and LL keeps its
  // quarter of Simple; the latencies stay.
  Model m = Model::gpuDefaults();
  ASSERT_FALSE(m.interHostMeasured);
  const LinkCost simple = m.interHost[kSimple];
  const LinkCost ll = m.interHost[kLl];
  m.fitNetwork(400);
  EXPECT_DOUBLE_EQ(m.interHost[kSimple].bandwidthGBs, 400);
  EXPECT_DOUBLE_EQ(m.interHost[kLl].bandwidthGBs, 400 * ll.bandwidthGBs / simple.bandwidthGBs);
  EXPECT_DOUBLE_EQ(m.interHost[kSimple].latencyUs, simple.latencyUs);
  EXPECT_DOUBLE_EQ(m.interHost[kLl].latencyUs, ll.latencyUs);
  // So the bus bandwidth of a large ring across hosts is the planned one, not the placeholder.
  const double bytes = 1 << 30;
  const double us = predict(m, allReduce(bytes, 16, 2), Algorithm::kRing, Protocol::kSimple);
  EXPECT_LT(us, 2 * 15.0 / 16 * bytes / (simple.bandwidthGBs * 1e3));
}

TEST(TuneFitNetwork, AMeasuredFigureIsOnlyLowered) {
  // The host model's network was measured through braid's sockets: a plan of 25 GB/s of NICs
  // does not raise it, one of a 1 Gb/s NIC (0.125 GB/s) lowers it, LL with it.
  Model m = Model::calibratedDefaults();
  ASSERT_TRUE(m.interHostMeasured);
  const double measured = m.interHost[kSimple].bandwidthGBs;
  m.fitNetwork(25);
  EXPECT_DOUBLE_EQ(m.interHost[kSimple].bandwidthGBs, measured);
  m.fitNetwork(0.125);
  EXPECT_DOUBLE_EQ(m.interHost[kSimple].bandwidthGBs, 0.125);
  EXPECT_DOUBLE_EQ(m.interHost[kLl].bandwidthGBs, 0.125);
}

TEST(TuneFitNetwork, NoPlanChangesNothing) {
  for (double none : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    Model m = Model::gpuDefaults();
    m.fitNetwork(none);
    EXPECT_DOUBLE_EQ(m.interHost[kSimple].bandwidthGBs,
                     Model::gpuDefaults().interHost[kSimple].bandwidthGBs)
        << none;
  }
}

TEST(TuneFitNetwork, APluginsLatencyIsAFloorForEveryProtocol) {
  // A plugin device reporting 50 us raises every protocol's hop to it; one reporting less than
  // the model's figure leaves it; none (0, or nonsense) changes nothing.
  Model m = Model::gpuDefaults();
  const double before = m.interHost[kSimple].latencyUs;
  m.fitNetworkLatency(before / 2);
  EXPECT_DOUBLE_EQ(m.interHost[kSimple].latencyUs, before);
  for (double none : {0.0, -3.0, std::nan(""), HUGE_VAL}) m.fitNetworkLatency(none);
  EXPECT_DOUBLE_EQ(m.interHost[kSimple].latencyUs, before);
  m.fitNetworkLatency(before + 50);
  EXPECT_DOUBLE_EQ(m.interHost[kSimple].latencyUs, before + 50);
  EXPECT_GE(m.interHost[kLl].latencyUs, before + 50);
}

TEST(TunePredict, RanksSharingCpusUseTheSharedFigures) {
  Model m = roundModel();
  m.hostCores = 2;
  // 4 ranks on 2 CPUs: 0.5 + 6 * 20 + 6000 / 5e3.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 4), Algorithm::kRing, Protocol::kSimple), 121.7);
  // 2 ranks have a CPU each: 0.5 + 2 * 1 + 4000 / 1e4.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 2), Algorithm::kRing, Protocol::kSimple), 2.9);
  // One-shot likewise: 0.5 + 4 + 3 * 10 + 3 * 4000 / 5e3 shared, 0.5 + 2 + 0.5 + 0.4 not.
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 4), Algorithm::kOneShot, Protocol::kSimple), 36.9);
  EXPECT_DOUBLE_EQ(predict(m, allReduce(4000, 2), Algorithm::kOneShot, Protocol::kSimple), 3.4);
}

TEST(TunePredict, ChannelsOnTheHostRunOneAfterAnother) {
  Model m = roundModel();
  Query q = allReduce(4000, 4);
  q.nchannels = 3;
  // Each channel pays the 6 hops; the bytes are shared out, so no more bandwidth.
  EXPECT_DOUBLE_EQ(predict(m, q, Algorithm::kRing, Protocol::kSimple), 0.5 + 18 + 0.6);
  // In parallel (GPU blocks), the hops are paid once, and channels add
  // bandwidth up to the link's.
  m.channelsParallel = true;
  m.channelGBs[kSimple] = 4;  // 3 channels: 12 GB/s, above the link's 10
  EXPECT_DOUBLE_EQ(predict(m, q, Algorithm::kRing, Protocol::kSimple), 0.5 + 6 + 0.6);
  q.nchannels = 2;  // 8 GB/s
  EXPECT_DOUBLE_EQ(predict(m, q, Algorithm::kRing, Protocol::kSimple), 0.5 + 6 + 6000 / 8e3);
}

TEST(TunePredict, DeterministicModeMultipliesByItsSlowdown) {
  Model m = roundModel();
  m.deterministicSlowdown[static_cast<int>(Algorithm::kRing)] = 1.5;
  Query q = allReduce(4000, 4);
  q.deterministic = true;
  EXPECT_DOUBLE_EQ(predict(m, q, Algorithm::kRing, Protocol::kSimple), 7.1 * 1.5);
  EXPECT_DOUBLE_EQ(predict(m, q, Algorithm::kTree, Protocol::kSimple), 5.3);
}

TEST(TunePredict, NonDecreasingInSizeForEveryCombination) {
  for (const Model& m :
       {roundModel(), gpuClusterModel(), Model::calibratedDefaults(), Model::gpuDefaults()}) {
    for (Collective c : kAllCollectives) {
      for (int n : {1, 2, 3, 4, 7, 8, 16, 64}) {
        for (int a = 0; a < algo::kNumAlgorithms; ++a) {
          for (int p = 0; p < algo::kNumProtocols; ++p) {
            Query q;
            q.collective = c;
            q.nranks = n;
            if (!supports(static_cast<Algorithm>(a), q)) continue;
            double last = -1;
            for (size_t bytes = 1; bytes <= (size_t{1} << 32); bytes *= 2) {
              q.bytes = bytes;
              const double us = predict(m, q, static_cast<Algorithm>(a), static_cast<Protocol>(p));
              EXPECT_TRUE(std::isfinite(us));
              EXPECT_GT(us, last) << collectiveName(c) << " n=" << n << " a=" << a << " p=" << p
                                  << " bytes=" << bytes;
              last = us;
            }
          }
        }
      }
    }
  }
}

TEST(TunePredict, RefusesWhatAnAlgorithmCannotRun) {
  const Model m = roundModel();
  Query q = allReduce(1024, 4);
  for (Collective c : {Collective::kAllGather, Collective::kReduceScatter}) {
    q.collective = c;
    Result<double> tree = predictUs(m, q, Algorithm::kTree, Protocol::kSimple);
    EXPECT_EQ(tree.status().code(), ErrorCode::kInvalidUsage);
    EXPECT_NE(tree.status().message().find("tree"), std::string::npos);
  }
  q.collective = Collective::kBroadcast;
  EXPECT_EQ(predictUs(m, q, Algorithm::kOneShot, Protocol::kSimple).status().code(),
            ErrorCode::kInvalidUsage);
  Result<double> acrossHosts =
      predictUs(m, allReduce(1024, 8, 2), Algorithm::kOneShot, Protocol::kSimple);
  EXPECT_EQ(acrossHosts.status().code(), ErrorCode::kInvalidUsage);
  EXPECT_NE(acrossHosts.status().message().find("across hosts"), std::string::npos);
}

TEST(TunePredict, RefusesMalformedQueriesAndModels) {
  const Model m = roundModel();
  Query q = allReduce(1024, 0);
  EXPECT_EQ(predictUs(m, q, Algorithm::kRing, Protocol::kSimple).status().code(),
            ErrorCode::kInvalidArgument);
  q = allReduce(1024, 4, 5);
  EXPECT_NE(predictUs(m, q, Algorithm::kRing, Protocol::kSimple).status().message().find("nhosts"),
            std::string::npos);
  q = allReduce(1024, 4);
  q.nchannels = 0;
  EXPECT_EQ(predictUs(m, q, Algorithm::kRing, Protocol::kSimple).status().code(),
            ErrorCode::kInvalidArgument);
  Model empty;  // no figures: a bandwidth of 0 must be an error, not infinity
  Result<double> r = predictUs(empty, allReduce(1024, 4), Algorithm::kRing, Protocol::kLl);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("intraHost[ll]"), std::string::npos);
}

P2pQuery batch(size_t sendBytes, size_t recvBytes, size_t selfBytes = 0, int nranks = 4) {
  P2pQuery q;
  q.sendBytes = sendBytes;
  q.recvBytes = recvBytes;
  q.selfBytes = selfBytes;
  q.nranks = nranks;
  return q;
}

double predictP2p(const Model& m, const P2pQuery& q) {
  Result<double> r = predictP2pUs(m, q);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : NAN;
}

// roundModel's Simple hop: 1 us and 1e4 bytes/us, 0.5 us per call.
TEST(TuneP2p, ABatchPaysOneHopAndItsBusierDirection) {
  const Model m = roundModel();
  EXPECT_EQ(predictP2p(m, batch(0, 0)), 0.0) << "an empty batch returns at once";
  // An exchange of 1e5 bytes each way: 0.5 + 1 + 1e5 / 1e4.
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 100000)), 11.5);
  // Sending to three peers while receiving less: the sends bound it.
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(300000, 100000)), 31.5);
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(0, 300000)), 31.5);
  // A self-send is a copy without a hop: 0.5 + 2e4 / 1e4.
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(0, 0, 20000)), 2.5);
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 0, 20000)), 13.5);
}

TEST(TuneP2p, SharedCpusAndOtherHostsUseTheirFigures) {
  Model m = roundModel();
  m.hostCores = 2;
  // Four ranks on two CPUs: the shared hop, 20 us and 5e3 bytes/us.
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 100000)), 0.5 + 20 + 20);
  m.hostCores = 0;
  P2pQuery q = batch(100000, 0, 0, 8);
  q.nhosts = 2;
  q.crossesHosts = true;  // the network hop: 5 us and 5e3 bytes/us
  EXPECT_DOUBLE_EQ(predictP2p(m, q), 0.5 + 5 + 20);
}

TEST(TuneP2p, UsesItsOwnHopWhenCalibrated) {
  Model m = roundModel();
  m.p2p = {3.0, 2.0};  // 3 us and 2e3 bytes/us, unlike the ring's 1 us and 1e4
  // 0.5 + 3 + 1e5 / 2e3.
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 100000)), 53.5);
  // The self-copy is not a hop: it keeps the one-rank copy rate.
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(0, 0, 20000)), 2.5);
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 0, 20000)), 55.5);
  // Across hosts the hop is no faster than the network (5 us, 5e3 bytes/us):
  // the network's latency, p2p's smaller bandwidth.
  P2pQuery q = batch(100000, 0, 0, 8);
  q.nhosts = 2;
  q.crossesHosts = true;
  EXPECT_DOUBLE_EQ(predictP2p(m, q), 0.5 + 5 + 50);
}

TEST(TuneP2p, SharedCpusUseTheSharedP2pHop) {
  Model m = roundModel();
  m.p2p = {3.0, 2.0};
  m.p2pShared = {40.0, 4.0};
  m.hostCores = 2;  // four ranks on two CPUs: 0.5 + 40 + 1e5 / 4e3
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 100000)), 65.5);
  m.hostCores = 4;  // a CPU each: p2p, not p2pShared
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 100000)), 53.5);
}

TEST(TuneP2p, UnsetFiguresFallBackToTheRingHop) {
  Model m = roundModel();
  // A bandwidth of 0 marks a figure unset, whatever its latency.
  m.p2p = {7.0, 0.0};
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 100000)), 11.5) << "intraHost[simple]";
  // Each class falls back on its own: p2p set, p2pShared not.
  m.p2p = {3.0, 2.0};
  m.hostCores = 2;
  EXPECT_DOUBLE_EQ(predictP2p(m, batch(100000, 100000)), 0.5 + 20 + 20)
      << "intraHostShared[simple]";
}

TEST(TuneP2p, RefusesAMalformedP2pHop) {
  Model m = roundModel();
  m.p2p = {-1.0, 2.0};
  Result<double> r = predictP2pUs(m, batch(1024, 0));
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("p2p needs"), std::string::npos) << r.status().message();
  m.p2p = {};
  m.p2pShared = {-1.0, 2.0};
  m.hostCores = 2;
  r = predictP2pUs(m, batch(1024, 0));
  EXPECT_NE(r.status().message().find("p2pShared needs"), std::string::npos)
      << r.status().message();
}

TEST(TuneP2p, RefusesMalformedBatchesAndModels) {
  const Model m = roundModel();
  EXPECT_EQ(predictP2pUs(m, batch(1, 1, 0, 0)).status().code(), ErrorCode::kInvalidArgument);
  P2pQuery q = batch(1, 1);
  q.nhosts = 5;
  EXPECT_NE(predictP2pUs(m, q).status().message().find("nhosts"), std::string::npos);
  Model empty;
  Result<double> r = predictP2pUs(empty, batch(1024, 0));
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("intraHost[simple]"), std::string::npos);
}

// Ring against tree, 16 ranks of one host in roundModel: the ring costs
// 0.5 + 30 + (30/16) S / 1e4 and the tree 0.5 + 8 + 2 S / 1e4, equal at
// S = 22 * 1e4 / (2 - 30/16) = 1,760,000 bytes.
TEST(TuneSelect, RingTreeCrossoverIsWhereTheFormulasPutIt) {
  const Model m = roundModel();
  Query q = allReduce(0, 16);
  auto crossing = crossoverBytes(m, q, {Algorithm::kRing, Protocol::kSimple},
                                 {Algorithm::kTree, Protocol::kSimple});
  ASSERT_TRUE(crossing.ok()) << crossing.status().message();
  ASSERT_TRUE(crossing.value().has_value());
  EXPECT_NEAR(*crossing.value(), 1.76e6, 1e-3);
  const Allowed simple = only({Algorithm::kRing, Algorithm::kTree}, {Protocol::kSimple});
  q.bytes = 1760000 - 1;
  EXPECT_EQ(chosen(m, q, simple).algorithm, Algorithm::kTree);
  q.bytes = 1760000 + 1;
  EXPECT_EQ(chosen(m, q, simple).algorithm, Algorithm::kRing);
  q.bytes = static_cast<size_t>(1.76e6 * 0.9);
  EXPECT_EQ(chosen(m, q, simple).algorithm, Algorithm::kTree);
  q.bytes = static_cast<size_t>(1.76e6 * 1.1);
  EXPECT_EQ(chosen(m, q, simple).algorithm, Algorithm::kRing);
}

// Simple against LL on the ring, 4 ranks: 0.5 + 6 + 1.5 S / 1e4 against
// 0.5 + 3 + 1.5 S / 5e3, equal at S = 20,000 bytes.
TEST(TuneSelect, SimpleLlCrossoverIsWhereTheFormulasPutIt) {
  const Model m = roundModel();
  Query q = allReduce(0, 4);
  auto crossing = crossoverBytes(m, q, {Algorithm::kRing, Protocol::kSimple},
                                 {Algorithm::kRing, Protocol::kLl});
  ASSERT_TRUE(crossing.ok() && crossing.value().has_value());
  EXPECT_NEAR(*crossing.value(), 2e4, 1e-6);
  const Allowed ring = only({Algorithm::kRing});
  q.bytes = 19999;
  EXPECT_EQ(chosen(m, q, ring).protocol, Protocol::kLl);
  q.bytes = 20001;
  EXPECT_EQ(chosen(m, q, ring).protocol, Protocol::kSimple);
}

// GPU communicators take LL for small all_reduces and Simple for large ones:
// with 8 channels (a real GPU's default) the ring's two protocols cross where
// 5.6 us of Simple's extra hop latency equals LL's slower bytes,
// 5.6 / (1/25e3 - 1/100e3) bytes; with one (the emulated GPU's) where
// the channel caps meet, 5.6 / (1/5e3 - 1/20e3).
TEST(TuneSelect, GpuDefaultsTakeLlForSmallAllReducesAndSimpleForLarge) {
  const Model m = Model::gpuDefaults();
  for (auto [channels, bytes] : {std::pair{8, 5.6 / 3e-5}, std::pair{1, 5.6 / 1.5e-4}}) {
    Query q = allReduce(0, 2);
    q.nchannels = channels;
    auto crossing = crossoverBytes(m, q, {Algorithm::kRing, Protocol::kSimple},
                                   {Algorithm::kRing, Protocol::kLl});
    ASSERT_TRUE(crossing.ok() && crossing.value().has_value());
    EXPECT_NEAR(*crossing.value(), bytes, 1);
    const Allowed ring = only({Algorithm::kRing});
    q.bytes = 8;
    EXPECT_EQ(chosen(m, q, ring).protocol, Protocol::kLl);
    q.bytes = 64 << 20;
    EXPECT_EQ(chosen(m, q, ring).protocol, Protocol::kSimple);
  }
}

// Every crossover of every pair of candidates, in every model the tests know
// and the calibrated one: just below it one candidate wins, just above it the
// other (with only those two allowed), as the formulas say.
TEST(TuneSelect, ChoiceFlipsAtEveryCrossover) {
  const Candidate candidates[] = {
      {Algorithm::kRing, Protocol::kSimple},    {Algorithm::kRing, Protocol::kLl},
      {Algorithm::kTree, Protocol::kSimple},    {Algorithm::kTree, Protocol::kLl},
      {Algorithm::kOneShot, Protocol::kSimple}, {Algorithm::kOneShot, Protocol::kLl}};
  int crossings = 0;
  for (const Model& m :
       {roundModel(), gpuClusterModel(), Model::calibratedDefaults(), Model::gpuDefaults()}) {
    for (int n : {2, 3, 4, 8, 16, 64}) {
      for (const Candidate& a : candidates) {
        for (const Candidate& b : candidates) {
          if (a.algorithm == b.algorithm && a.protocol == b.protocol) continue;
          Query q = allReduce(0, n);
          auto at = crossoverBytes(m, q, a, b);
          ASSERT_TRUE(at.ok()) << at.status().message();
          if (!at.value() || *at.value() < 16 || *at.value() > 1e12) continue;
          ++crossings;
          Allowed pair = only({a.algorithm, b.algorithm}, {a.protocol, b.protocol}, SIZE_MAX);
          // Only the two candidates: a tree/ll against ring/simple pair must
          // not let ring/ll or tree/simple in.
          auto winner = [&](size_t bytes) {
            q.bytes = bytes;
            const double ua = predict(m, q, a.algorithm, a.protocol);
            const double ub = predict(m, q, b.algorithm, b.protocol);
            return ua < ub ? a : b;
          };
          const size_t below = static_cast<size_t>(*at.value() * 0.9);
          const size_t above = static_cast<size_t>(*at.value() * 1.1);
          const Candidate low = winner(below), high = winner(above);
          EXPECT_FALSE(low.algorithm == high.algorithm && low.protocol == high.protocol)
              << "n=" << n << " crossover " << *at.value();
          if (a.protocol == b.protocol || a.algorithm == b.algorithm) {
            // With only two candidates in the allow-list, choose must agree.
            for (size_t bytes : {below, above}) {
              q.bytes = bytes;
              const Choice c = chosen(m, q, pair);
              const Candidate w = winner(bytes);
              EXPECT_EQ(c.algorithm, w.algorithm) << "n=" << n << " bytes=" << bytes;
              EXPECT_EQ(c.protocol, w.protocol) << "n=" << n << " bytes=" << bytes;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(crossings, 10);
}

TEST(TuneSelect, OneShotOnlyUpToItsLimit) {
  Model m = roundModel();
  m.oneShot[kSimple] = {0, 0, 1000};  // cheaper than anything at any size
  const Query small = allReduce(4096, 4);
  EXPECT_EQ(
      chosen(m, small, only({Algorithm::kRing, Algorithm::kOneShot}, {Protocol::kSimple}, 4096))
          .algorithm,
      Algorithm::kOneShot);
  const Query bigger = allReduce(4097, 4);
  EXPECT_EQ(
      chosen(m, bigger, only({Algorithm::kRing, Algorithm::kOneShot}, {Protocol::kSimple}, 4096))
          .algorithm,
      Algorithm::kRing);
  Allowed all;  // oneShotMaxBytes 0: never
  EXPECT_NE(chosen(m, small, all).algorithm, Algorithm::kOneShot);
  all.oneShotMaxBytes = SIZE_MAX;  // but never across hosts
  EXPECT_NE(chosen(m, allReduce(4096, 8, 2), all).algorithm, Algorithm::kOneShot);
}

TEST(TuneSelect, AllowListsAreHonoured) {
  const Model m = roundModel();
  const Query big = allReduce(1 << 30, 16);  // the ring is far faster here
  EXPECT_EQ(chosen(m, big, Allowed{}).algorithm, Algorithm::kRing);
  const Choice tree = chosen(m, big, only({Algorithm::kTree}));
  EXPECT_EQ(tree.algorithm, Algorithm::kTree);
  EXPECT_FALSE(tree.fellBack);
  EXPECT_DOUBLE_EQ(tree.predictedUs, predict(m, big, Algorithm::kTree, Protocol::kSimple));
  EXPECT_EQ(chosen(m, big, only({Algorithm::kRing}, {Protocol::kLl})).protocol, Protocol::kLl);
}

TEST(TuneSelect, FallsBackToTheRingWhenNothingAllowedRunsTheCollective) {
  const Model m = roundModel();
  Query q = allReduce(1 << 20, 4);
  q.collective = Collective::kAllGather;
  const Choice c = chosen(m, q, only({Algorithm::kTree}, {Protocol::kLl}));
  EXPECT_EQ(c.algorithm, Algorithm::kRing);
  EXPECT_EQ(c.protocol, Protocol::kLl);  // the allowed protocol is kept
  EXPECT_TRUE(c.fellBack);
  const Choice none = chosen(m, q, only({}, {}));
  EXPECT_EQ(none.algorithm, Algorithm::kRing);
  EXPECT_EQ(none.protocol, Protocol::kSimple);
  EXPECT_TRUE(none.fellBack);
}

TEST(TuneSelect, ManyHostsPreferTheTreeForSmallMessages) {
  const Model m = gpuClusterModel();
  const Query small = allReduce(64 << 10, 512 * 8, 512);
  const Choice c = chosen(m, small, Allowed{});
  EXPECT_EQ(c.algorithm, Algorithm::kTree);
  // The ring's 2(N-1) = 8190 hop latencies dwarf the tree's 2 * 12.
  EXPECT_GT(predict(m, small, Algorithm::kRing, Protocol::kSimple), 10 * c.predictedUs);
  // On one host of 8 GPUs with 1 GiB, the bandwidth decides: the ring.
  EXPECT_EQ(chosen(m, allReduce(size_t{1} << 30, 8), Allowed{}).algorithm, Algorithm::kRing);
}

TEST(TuneSelect, SelectionErrorsNameTheBadQuery) {
  Result<Choice> r = choose(roundModel(), allReduce(1024, 4, 8), Allowed{});
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
}

TEST(TuneParse, EmptyAllowsEverything) {
  Allowed a = parseAllowed("", "").value();
  for (bool x : a.algorithm) EXPECT_TRUE(x);
  for (bool x : a.protocol) EXPECT_TRUE(x);
  EXPECT_EQ(a.oneShotMaxBytes, 0u);
}

TEST(TuneParse, ListsAndExclusionsInNcclSyntax) {
  Allowed a = parseAllowed("Ring, TREE", "ll").value();
  EXPECT_TRUE(a.algorithm[0] && a.algorithm[1] && !a.algorithm[2]);
  EXPECT_TRUE(!a.protocol[kSimple] && a.protocol[kLl]);
  a = parseAllowed("^tree", "^ll").value();
  EXPECT_TRUE(a.algorithm[0] && !a.algorithm[1] && a.algorithm[2]);
  EXPECT_TRUE(a.protocol[kSimple] && !a.protocol[kLl]);
  a = parseAllowed("oneshot", "Simple").value();
  EXPECT_TRUE(!a.algorithm[0] && !a.algorithm[1] && a.algorithm[2]);
  EXPECT_EQ(describeAllowed(a), "algorithms oneshot protocols simple one-shot up to 0 B");
}

TEST(TuneParse, NcclNamesBraidLacksAreRefusedWhenAskedForAndIgnoredWhenExcluded) {
  Result<Allowed> ll128 = parseAllowed("", "LL128");
  EXPECT_EQ(ll128.status().code(), ErrorCode::kInvalidUsage);
  EXPECT_NE(ll128.status().message().find("does not implement the protocol LL128"),
            std::string::npos);
  EXPECT_EQ(parseAllowed("", "simple,ll128").status().code(), ErrorCode::kInvalidUsage);
  EXPECT_EQ(parseAllowed("ring,nvls", "").status().code(), ErrorCode::kInvalidUsage);
  Allowed a = parseAllowed("^NVLS,CollnetDirect", "^LL128").value();
  for (bool x : a.algorithm) EXPECT_TRUE(x);
  for (bool x : a.protocol) EXPECT_TRUE(x);
}

TEST(TuneParse, MalformedListsAreRefusedWithTheirText) {
  Result<Allowed> unknown = parseAllowed("ring,rign", "");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'rign'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("BRAID_ALGO"), std::string::npos);
  EXPECT_EQ(parseAllowed("ring,,tree", "").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parseAllowed("^", "").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parseAllowed("", "fast").status().code(), ErrorCode::kInvalidArgument);
  Result<Allowed> nothing = parseAllowed("^ring,tree,oneshot", "");
  EXPECT_NE(nothing.status().message().find("leaves no algorithm"), std::string::npos);
  Result<Allowed> perCollective = parseAllowed("allreduce:tree;broadcast:ring", "");
  EXPECT_EQ(perCollective.status().code(), ErrorCode::kInvalidUsage);
  EXPECT_NE(perCollective.status().message().find("per-collective"), std::string::npos);
}

}  // namespace
}  // namespace braid::tune
