// The config of ncclCommSplit, ncclCommGrow and ncclCommShrink is applied to the communicator
// each makes: its channel bounds (minCTAs, maxCTAs) and its name (commName), read before the call
// returns (a group runs the split later, when the caller's string may be gone). A NULL config
// makes the child with its parent's settings, as NCCL copies the parent's config. What a
// communicator was made with shows in what its creation says at INFO: "init: ... name "N"" and
// "ring: ...; K channel(s);". Ranks are host communicators, threads of this process.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"

// Exported by braid (and by NVIDIA's library) but declared in no header: reads NCCL_DEBUG again.
extern "C" void ncclResetDebugInitInternal();

namespace child_config_test {

using braid::testing::ScopedEnv;

constexpr int kRanks = 4;

/// What the communicators made by `make` said at INFO.
std::string infoOf(const std::function<void()>& make) {
  std::string log;
  {
    ScopedEnv debug("NCCL_DEBUG", "INFO");
    ncclResetDebugInitInternal();
    ::testing::internal::CaptureStderr();
    make();
    log = ::testing::internal::GetCapturedStderr();
  }
  ncclResetDebugInitInternal();  // back to the environment's level
  return log;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// `count` communicators were made with `channels` channels and the name `name` ("" for none).
void expectMade(const std::string& log, size_t count, int channels, const std::string& name) {
  EXPECT_EQ(occurrences(log, "; " + std::to_string(channels) + " channel(s);"), count) << log;
  if (name.empty()) {
    EXPECT_EQ(occurrences(log, ", name \""), 0u) << log;
  } else {
    EXPECT_EQ(occurrences(log, ", name \"" + name + "\""), count) << log;
  }
}

ncclConfig_t configOf(int minCtas, int maxCtas, const char* name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (minCtas > 0) config.minCTAs = minCtas;
  if (maxCtas > 0) config.maxCTAs = maxCtas;
  config.commName = name;
  return config;
}

void destroy(const std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms) {
    if (c != nullptr) {
      EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
    }
  }
}

/// One thread splits every one of `parents` in a group, each with color 0 and `config`; the
/// name the config points to is overwritten before the group ends.
std::vector<ncclComm_t> splitAll(const std::vector<ncclComm_t>& parents, ncclConfig_t* config) {
  std::vector<ncclComm_t> out(parents.size(), nullptr);
  char name[16] = {};
  if (config != nullptr && config->commName != nullptr) {
    snprintf(name, sizeof(name), "%s", config->commName);
    config->commName = name;
  }
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  for (size_t r = 0; r < parents.size(); ++r) {
    EXPECT_EQ(ncclCommSplit(parents[r], 0, static_cast<int>(r), &out[r], config), ncclSuccess)
        << ncclGetLastError(parents[r]);
  }
  memset(name, 'x', sizeof(name) - 1);  // the group runs later: the split kept its own copy
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  return out;
}

TEST(ChildConfig, ASplitTakesItsConfigOrItsParents) {
  std::vector<ncclComm_t> parents(kRanks, nullptr);
  ASSERT_EQ(ncclCommInitAll(parents.data(), kRanks, nullptr), ncclSuccess)
      << ncclGetLastError(nullptr);
  std::vector<ncclComm_t> named, inherited, bounded;
  ncclConfig_t three = configOf(3, 0, "alpha");
  expectMade(infoOf([&] { named = splitAll(parents, &three); }), kRanks, 3, "alpha");
  // No config: the child is made as its parent was.
  expectMade(infoOf([&] { inherited = splitAll(named, nullptr); }), kRanks, 3, "alpha");
  // A config of its own replaces the parent's whole: one channel, and no name.
  ncclConfig_t one = configOf(0, 1, nullptr);
  expectMade(infoOf([&] { bounded = splitAll(inherited, &one); }), kRanks, 1, "");
  for (const auto* comms : {&bounded, &inherited, &named, &parents}) destroy(*comms);
}

TEST(ChildConfig, AGrowTakesItsConfig) {
  constexpr int kOld = 2;
  std::vector<ncclComm_t> parents(kOld, nullptr);
  ASSERT_EQ(ncclCommInitAll(parents.data(), kOld, nullptr), ncclSuccess)
      << ncclGetLastError(nullptr);
  ncclUniqueId id;
  ASSERT_EQ(ncclCommGetUniqueId(parents[0], &id), ncclSuccess) << ncclGetLastError(parents[0]);
  ncclConfig_t config = configOf(3, 0, "grown");
  std::vector<ncclComm_t> grown(kOld + 1, nullptr);
  const std::string log = infoOf([&] {
    ncclResult_t joined = ncclInternalError;
    std::thread newRank(
        [&] { joined = ncclCommGrow(nullptr, kOld + 1, &id, kOld, &grown[kOld], &config); });
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < kOld; ++r) {
      EXPECT_EQ(ncclCommGrow(parents[r], kOld + 1, r == 0 ? &id : nullptr, -1, &grown[r], &config),
                ncclSuccess)
          << ncclGetLastError(parents[r]);
    }
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
    newRank.join();
    EXPECT_EQ(joined, ncclSuccess);
  });
  expectMade(log, kOld + 1, 3, "grown");
  destroy(grown);
  destroy(parents);
}

TEST(ChildConfig, AShrinkWithoutConfigTakesItsParents) {
  const ncclUniqueId id = braid::testing::newId();
  ncclConfig_t config = configOf(3, 0, "whole");
  std::vector<ncclComm_t> parents(kRanks, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(ncclCommInitRankConfig(&parents[r], kRanks, id, r, &config), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<ncclComm_t> shrunk(kRanks - 1, nullptr);
  int excluded = kRanks - 1;
  const std::string log = infoOf([&] {
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < kRanks - 1; ++r) {
      EXPECT_EQ(ncclCommShrink(parents[r], &excluded, 1, &shrunk[r], nullptr, NCCL_SHRINK_DEFAULT),
                ncclSuccess)
          << ncclGetLastError(parents[r]);
    }
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  });
  expectMade(log, kRanks - 1, 3, "whole");
  destroy(shrunk);
  destroy(parents);
}

}  // namespace child_config_test
