// ncclConfig_t and ncclCollConfig_t as every release from 2.28 on lays them out: a program built
// against an older nccl.h passes a smaller struct, whose `size` says so, and the library must
// read no byte past it. Each struct here ends exactly where a page the process may not touch
// begins, so a read past `size` kills the test instead of passing unseen.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "api/api_test_util.h"
#include "nccl.h"

namespace config_sizes_test {

using braid::testing::failsWith;
using braid::testing::newId;

// Two pages, the second inaccessible: a struct of `size` bytes placed at end() - size ends where
// the second begins.
class GuardedPages {
 public:
  GuardedPages() : page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    void* p = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    if (base_ != nullptr) mprotect(base_ + page_, page_, PROT_NONE);
  }
  ~GuardedPages() {
    if (base_ != nullptr) munmap(base_, 2 * page_);
  }
  GuardedPages(const GuardedPages&) = delete;
  GuardedPages& operator=(const GuardedPages&) = delete;

  /// The first `size` bytes of `whole` copied so that they end at the guard page.
  template <typename T>
  T* place(const T& whole, size_t size) {
    char* at = base_ + page_ - size;
    memcpy(at, &whole, size);
    return reinterpret_cast<T*>(at);
  }
  bool ok() const { return base_ != nullptr; }

 private:
  size_t page_;
  char* base_ = nullptr;
};

// The size of each release's ncclConfig_t: where the next release's first field begins.
struct Release {
  const char* name;
  size_t configSize;
};

const Release kReleases[] = {
    {"2.28", offsetof(ncclConfig_t, graphUsageMode)},
    {"2.30", offsetof(ncclConfig_t, launchOrderImplicit)},
    {"2.31", offsetof(ncclConfig_t, nvlsHostMode)},
    {"2.32", sizeof(ncclConfig_t)},
};

class ConfigSizes : public ::testing::TestWithParam<Release> {};

TEST_P(ConfigSizes, CommunicatorIsMadeFromTheReleasesStruct) {
  GuardedPages pages;
  ASSERT_TRUE(pages.ok());
  ncclConfig_t whole = NCCL_CONFIG_INITIALIZER;
  whole.size = GetParam().configSize;
  whole.blocking = 1;
  whole.maxCTAs = 4;
  whole.commName = "sized";
  whole.launchOrderImplicit = 1;  // inside the struct only from 2.31 on
  whole.nvlsHostMode = ncclNvlsHostModeDisable;
  ncclConfig_t* config = pages.place(whole, GetParam().configSize);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRankConfig(&comm, 1, newId(), 0, config), ncclSuccess)
      << GetParam().name << ": " << ncclGetLastError(nullptr);
  float value = 2.0f;
  EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(value, 2.0f);
  // A split given the same struct reads it the same way.
  ncclComm_t child = nullptr;
  EXPECT_EQ(ncclCommSplit(comm, 0, 0, &child, config), ncclSuccess) << ncclGetLastError(nullptr);
  if (child != nullptr) EXPECT_EQ(ncclCommDestroy(child), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

INSTANTIATE_TEST_SUITE_P(EveryRelease, ConfigSizes, ::testing::ValuesIn(kReleases),
                         [](const ::testing::TestParamInfo<Release>& info) {
                           std::string name = std::string("nccl") + info.param.name;
                           name.erase(name.find('.'), 1);
                           return name;
                         });

TEST(ConfigSizesBadInput, StructSmallerThanAnyReleaseIsRefused) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.size = offsetof(ncclConfig_t, blocking);
  ncclComm_t comm = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclCommInitRankConfig(&comm, 1, newId(), 0, &config); },
                        ncclInvalidArgument, {"size"}));
}

// ncclCollConfig_t: 2.31's ends before launchCompletionEvent, 2.32's after it.
class CollConfigSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(CollConfigSizes, CallReadsTheReleasesStruct) {
  GuardedPages pages;
  ASSERT_TRUE(pages.ok());
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, newId(), 0), ncclSuccess);
  ncclCollConfig_t whole = NCCL_COLLCONFIG_INITIALIZER;
  whole.size = GetParam();
  whole.algSelection = "ring";
  whole.maxCTAs = 1;
  const ncclCollConfig_t* config = pages.place(whole, GetParam());
  int values[3] = {1, 2, 3};
  EXPECT_EQ(ncclAllReduceConfig(values, values, 3, ncclInt32, ncclSum, comm, nullptr, config),
            ncclSuccess)
      << ncclGetLastError(comm);
  EXPECT_EQ(values[2], 3);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

INSTANTIATE_TEST_SUITE_P(EveryRelease, CollConfigSizes,
                         ::testing::Values(offsetof(ncclCollConfig_t, launchCompletionEvent),
                                           sizeof(ncclCollConfig_t)),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return info.param == sizeof(ncclCollConfig_t) ? std::string("nccl232")
                                                                         : std::string("nccl231");
                         });

}  // namespace config_sizes_test
