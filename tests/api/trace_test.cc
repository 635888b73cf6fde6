// BRAID_TRACE=path: each rank writes a Perfetto/Chrome JSON trace naming the
// collectives it ran (algorithm, protocol, channels, bytes) and their steps
// (peer, bytes), when its communicator is destroyed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"

namespace {

using braid::testing::fileText;
using braid::testing::occurrencesOf;
using braid::testing::ScopedEnv;

TEST(Trace, EachRankWritesItsCollectivesAndSteps) {
  const std::string pattern = "/tmp/braid-trace-test-" + std::to_string(getpid()) + "-%r.json";
  const int nranks = 3;
  {
    ScopedEnv trace("BRAID_TRACE", pattern.c_str());
    ScopedEnv algo("BRAID_ALGO", "tree");
    std::vector<ncclComm_t> comms(nranks);
    ASSERT_EQ(ncclCommInitAll(comms.data(), nranks, nullptr), ncclSuccess);
    braid::testing::runThreads(nranks, [&](int rank) {
      std::vector<float> buf(1000, 1.0f);
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(ncclAllReduce(buf.data(), buf.data(), buf.size(), ncclFloat32, ncclSum,
                                comms[rank], nullptr),
                  ncclSuccess);
      }
    });
    for (auto c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }
  for (int r = 0; r < nranks; ++r) {
    const std::string path = pattern.substr(0, pattern.find("%r")) + std::to_string(r) + ".json";
    const std::string json = fileText(path);
    SCOPED_TRACE(path);
    ASSERT_FALSE(json.empty());
    EXPECT_EQ(json.rfind("{\"displayTimeUnit\"", 0), 0u);
    EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
    EXPECT_EQ(occurrencesOf(json, "\"name\":\"AllReduce\""), 2u);
    EXPECT_EQ(occurrencesOf(json, "\"algorithm\":\"tree\""), 2u);
    EXPECT_NE(json.find("\"protocol\":"), std::string::npos);
    EXPECT_NE(json.find("\"bytes\":4000"), std::string::npos);
    // Every rank of a tree talks to at least one peer.
    EXPECT_NE(json.find("\"to\":"), std::string::npos);
    EXPECT_NE(json.find("\"from\":"), std::string::npos);
    unlink(path.c_str());
  }
}

}  // namespace
