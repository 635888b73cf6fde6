// A call's algorithm selection (tune/alg_selection.h, ncclCollConfig_t::algSelection): the
// pairs each expression selects, NCCL's grammar (prefixes, '+', ',', '^'), the errors, and the
// selector keeping to the pairs (tune::choose with Allowed::pairs).
#include <gtest/gtest.h>

#include <string>

#include "tune/alg_selection.h"
#include "tune/select.h"

namespace braid::tune {
namespace alg_selection_test {

using algo::Algorithm;
using algo::Protocol;

constexpr uint32_t kRingSimple = pairBit(Algorithm::kRing, Protocol::kSimple);
constexpr uint32_t kRingLl = pairBit(Algorithm::kRing, Protocol::kLl);
constexpr uint32_t kTreeSimple = pairBit(Algorithm::kTree, Protocol::kSimple);
constexpr uint32_t kTreeLl = pairBit(Algorithm::kTree, Protocol::kLl);
constexpr uint32_t kOneShot =
    pairBit(Algorithm::kOneShot, Protocol::kSimple) | pairBit(Algorithm::kOneShot, Protocol::kLl);

uint32_t pairsOf(const std::string& text) {
  Result<uint32_t> r = parseAlgSelection(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? r.value() : 0;
}

std::string errorOf(const std::string& text) {
  Result<uint32_t> r = parseAlgSelection(text);
  EXPECT_FALSE(r.ok()) << text << " was accepted";
  return r.ok() ? "" : r.status().message();
}

TEST(AlgSelection, EmptyMeansNoSelection) {
  EXPECT_EQ(pairsOf(""), 0u);
  EXPECT_EQ(pairsOf("  "), 0u);
}

TEST(AlgSelection, WordsSelectTheNamesTheyBegin) {
  EXPECT_EQ(pairsOf("ring"), kRingSimple | kRingLl);  // and RING_LL128, which braid lacks
  EXPECT_EQ(pairsOf("TREE_LL"), kTreeLl);             // and TREE_LL128
  EXPECT_EQ(pairsOf("tree_s"), kTreeSimple);
  EXPECT_EQ(pairsOf("OneShot"), kOneShot);
  EXPECT_EQ(pairsOf("r"), kRingSimple | kRingLl);
}

TEST(AlgSelection, OperatorsCombineAsNcclDocumentsThem) {
  EXPECT_EQ(pairsOf("tree,ring"), kTreeSimple | kTreeLl | kRingSimple | kRingLl);
  EXPECT_EQ(pairsOf("ring + ^RING_LL128"), kRingSimple | kRingLl);
  EXPECT_EQ(pairsOf("ring+^ring_simple"), kRingLl);
  EXPECT_EQ(pairsOf("^symk"), kRingSimple | kRingLl | kTreeSimple | kTreeLl | kOneShot);
  EXPECT_EQ(pairsOf("^tree + ^oneshot , tree_ll"), kRingSimple | kRingLl | kTreeLl);
  EXPECT_EQ(pairsOf("nvls,ring_simple"), kRingSimple);
}

TEST(AlgSelection, BadExpressionsSayWhy) {
  EXPECT_NE(errorOf("ringo").find("no algorithm name begins with 'ringo'"), std::string::npos);
  EXPECT_NE(errorOf("ring,,tree").find("no name beside it"), std::string::npos);
  EXPECT_NE(errorOf("^").find("no name beside it"), std::string::npos);
  EXPECT_NE(errorOf("(ring)").find("no algorithm name begins with '(ring)'"), std::string::npos);
}

TEST(AlgSelection, NamesBraidLacksSelectNothingOfIts) {
  const std::string nvls = errorOf("NVLS");
  EXPECT_NE(nvls.find("NVLS_SIMPLE, NVLSTREE_SIMPLE"), std::string::npos) << nvls;
  EXPECT_NE(nvls.find("none of which braid implements"), std::string::npos) << nvls;
  EXPECT_NE(errorOf("ring_ll128").find("RING_LL128"), std::string::npos);
  EXPECT_NE(errorOf("ring+tree").find("selects nothing"), std::string::npos);
}

// The selector takes the fastest of the pairs a call allows, and falls back (saying so) when
// none of them runs the collective.
TEST(AlgSelection, ChooseKeepsToThePairs) {
  Model m;
  m.callUs = 0.5;
  for (int p = 0; p < algo::kNumProtocols; ++p) {
    m.intraHost[p] = {1.0, 10.0};
    m.oneShot[p] = {2.0, 0.5, 10.0};
  }
  Query q;
  q.bytes = 1 << 20;
  q.nranks = 8;
  Allowed a;
  a.pairs = kTreeLl;
  Result<Choice> tree = choose(m, q, a);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ(tree.value().algorithm, Algorithm::kTree);
  EXPECT_EQ(tree.value().protocol, Protocol::kLl);
  EXPECT_FALSE(tree.value().fellBack);
  q.collective = Collective::kAllGather;  // no tree all-gather
  Result<Choice> ring = choose(m, q, a);
  ASSERT_TRUE(ring.ok()) << ring.status().message();
  EXPECT_EQ(ring.value().algorithm, Algorithm::kRing);
  EXPECT_TRUE(ring.value().fellBack);
}

}  // namespace alg_selection_test
}  // namespace braid::tune
