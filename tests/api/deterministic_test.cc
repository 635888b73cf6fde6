// BRAID_DETERMINISTIC=1: all_reduce of random float32 and bfloat16 data
// gives the same bits under every algorithm, protocol, channel count and
// FIFO size (which sets the chunk size), on every rank.
//
// Without the mode the ring and the tree add in different orders and their
// results differ in the last bits; the control test shows that this test's
// data is the kind that exposes it, so the equality above means something.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"
#include "support/uniform_real.h"

namespace deterministic_test {

using braid::testing::ScopedEnv;

struct Setting {
  const char* algo;
  const char* proto;
  const char* nchannels;
  const char* buffsize;
};

std::string describe(const Setting& s) {
  return std::string("algo ") + s.algo + " proto " + s.proto + " channels " + s.nchannels +
         " buffsize " + s.buffsize;
}

// Rank r's input: floats of mixed signs and magnitudes, so that the order of
// additions shows in the rounding; bfloat16 takes their upper halves.
std::vector<unsigned char> rankInput(int rank, size_t count, ncclDataType_t type, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + rank);
  std::uniform_int_distribution<int> exponent(-8, 8);
  const size_t elem = type == ncclFloat32 ? 4 : 2;
  std::vector<unsigned char> bytes(count * elem);
  for (size_t i = 0; i < count; ++i) {
    const auto mantissa = static_cast<float>(braid::testing::uniformReal(rng, -1, 1));
    float x = std::ldexp(mantissa, exponent(rng));
    uint32_t bits;
    memcpy(&bits, &x, 4);
    if (type == ncclFloat32) {
      memcpy(&bytes[i * 4], &bits, 4);
    } else {
      uint16_t half = static_cast<uint16_t>(bits >> 16);
      memcpy(&bytes[i * 2], &half, 2);
    }
  }
  return bytes;
}

// Runs one all_reduce on `nranks` thread ranks made under `setting`; returns
// rank 0's output after checking that every rank's is the same bits.
std::vector<unsigned char> allReduceUnder(const Setting& setting, bool deterministic, int nranks,
                                          size_t count, ncclDataType_t type, uint64_t seed) {
  ScopedEnv algo("BRAID_ALGO", setting.algo);
  ScopedEnv proto("BRAID_PROTO", setting.proto);
  ScopedEnv channels("BRAID_NCHANNELS", setting.nchannels);
  ScopedEnv buffsize("BRAID_BUFFSIZE", setting.buffsize);
  ScopedEnv mode("BRAID_DETERMINISTIC", deterministic ? "1" : "0");
  std::vector<ncclComm_t> comms(nranks);
  const ncclResult_t init = ncclCommInitAll(comms.data(), nranks, nullptr);
  EXPECT_EQ(init, ncclSuccess) << ncclGetLastError(nullptr);
  if (init != ncclSuccess) return {};
  std::vector<std::vector<unsigned char>> outputs(nranks);
  braid::testing::runThreads(nranks, [&](int rank) {
    std::vector<unsigned char> in = rankInput(rank, count, type, seed);
    outputs[rank].assign(in.size(), 0xee);
    EXPECT_EQ(
        ncclAllReduce(in.data(), outputs[rank].data(), count, type, ncclSum, comms[rank], nullptr),
        ncclSuccess)
        << ncclGetLastError(comms[rank]);
  });
  for (auto c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  for (int r = 1; r < nranks; ++r) {
    EXPECT_TRUE(outputs[r] == outputs[0]) << "rank " << r << " differs from rank 0";
  }
  return outputs[0];
}

size_t firstDifference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) return i;
  }
  return a.size() == b.size() ? SIZE_MAX : std::min(a.size(), b.size());
}

std::vector<Setting> everySetting() {
  std::vector<Setting> all;
  for (const char* algo : {"ring", "tree", "oneshot"}) {
    for (const char* proto : {"simple", "ll"}) {
      for (const char* channels : {"1", "2", "4"}) {
        for (const char* buffsize : {"64K", "4M"}) all.push_back({algo, proto, channels, buffsize});
      }
    }
  }
  return all;
}

struct Case {
  int nranks;
  ncclDataType_t type;
  size_t count;
};

class Deterministic : public ::testing::TestWithParam<Case> {};

TEST_P(Deterministic, EverySettingGivesTheSameBits) {
  const Case c = GetParam();
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<Setting> settings = everySetting();
  const std::vector<unsigned char> first =
      allReduceUnder(settings[0], true, c.nranks, c.count, c.type, seed);
  ASSERT_FALSE(first.empty());
  for (size_t i = 1; i < settings.size(); ++i) {
    SCOPED_TRACE(describe(settings[i]));
    const std::vector<unsigned char> out =
        allReduceUnder(settings[i], true, c.nranks, c.count, c.type, seed);
    const size_t at = firstDifference(out, first);
    EXPECT_EQ(at, SIZE_MAX) << "first differing byte " << at << " vs " << describe(settings[0]);
  }
}

// 1000 elements fit the one-shot board; 70001 do not (BRAID_ALGO=oneshot
// then runs the ring) and take many chunks; 5 and 7 ranks make uneven blocks.
INSTANTIATE_TEST_SUITE_P(Cases, Deterministic,
                         ::testing::Values(Case{4, ncclFloat32, 1000}, Case{7, ncclFloat32, 1000},
                                           Case{4, ncclBfloat16, 1000}, Case{5, ncclBfloat16, 1000},
                                           Case{4, ncclFloat32, 70001},
                                           Case{5, ncclBfloat16, 70001}),
                         [](const auto& info) {
                           return std::to_string(info.param.nranks) + "ranks_" +
                                  (info.param.type == ncclFloat32 ? "float32_" : "bfloat16_") +
                                  std::to_string(info.param.count);
                         });

// The control: without the mode, the ring (whose order depends on the
// block an element is in) and the tree disagree on this data.
TEST(DeterministicControl, WithoutTheModeRingAndTreeDiffer) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto ring =
      allReduceUnder({"ring", "simple", "1", "4M"}, false, 7, 70001, ncclFloat32, seed);
  const auto tree =
      allReduceUnder({"tree", "simple", "1", "4M"}, false, 7, 70001, ncclFloat32, seed);
  EXPECT_NE(firstDifference(ring, tree), SIZE_MAX);
}

}  // namespace deterministic_test
