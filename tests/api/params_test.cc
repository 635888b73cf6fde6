// params_test.cc: NCCL 2.30's parameter API over braid's settings (src/api/param_api.cc): every
// key it lists binds, reads as its type says and as text alike, under either prefix, and
// follows the environment; bad input fails with a clear error.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"

namespace {

using braid::testing::failsWith;
using braid::testing::ScopedEnv;

std::vector<std::string> allKeys() {
  const char** table = nullptr;
  int n = 0;
  EXPECT_EQ(ncclParamGetAllParameterKeys(&table, &n), ncclSuccess);
  return std::vector<std::string>(table, table + n);
}

TEST(Params, EveryKeyBindsAndReadsAsItsTextSays) {
  const std::vector<std::string> keys = allKeys();
  ASSERT_GT(keys.size(), 30u);
  for (const std::string& key : keys) {
    SCOPED_TRACE(key);
    ncclParamHandle_t h = nullptr;
    ASSERT_EQ(ncclParamBind(&h, key.c_str()), ncclSuccess) << ncclGetLastError(nullptr);
    const char* text = nullptr;
    int len = 0;
    ASSERT_EQ(ncclParamGetParameter(key.c_str(), &text, &len), ncclSuccess);
    ASSERT_NE(text, nullptr);
    const std::string expected(text, len);
    int32_t i32 = 0;
    int64_t i64 = 0;
    const char* s = nullptr;
    if (ncclParamGetI32(h, &i32) == ncclSuccess) {
      EXPECT_EQ(std::to_string(i32), expected);
    } else if (ncclParamGetI64(h, &i64) == ncclSuccess) {
      EXPECT_EQ(std::to_string(i64), expected);
    } else {
      ASSERT_EQ(ncclParamGetStr(h, &s), ncclSuccess) << "a key of no type";
      EXPECT_EQ(std::string(s), expected);
    }
  }
}

TEST(Params, EitherPrefixNamesOneKnobAndTheEnvironmentSetsIt) {
  ScopedEnv channels("BRAID_NCHANNELS", "5");
  for (const char* key : {"NCCL_NCHANNELS", "BRAID_NCHANNELS", "NCHANNELS"}) {
    ncclParamHandle_t h = nullptr;
    ASSERT_EQ(ncclParamBind(&h, key), ncclSuccess) << key;
    int32_t value = 0;
    ASSERT_EQ(ncclParamGetI32(h, &value), ncclSuccess) << key;
    EXPECT_EQ(value, 5) << key;
  }
}

TEST(Params, BadInputFailsSayingWhy) {
  ncclParamHandle_t h = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclParamBind(nullptr, "NCCL_ALGO"); }, ncclInvalidArgument,
                        {"NULL"}));
  EXPECT_TRUE(failsWith([&] { return ncclParamBind(&h, "NCCL_NOT_A_KNOB"); }, ncclInvalidArgument,
                        {"NCCL_NOT_A_KNOB"}));
  ASSERT_EQ(ncclParamBind(&h, "NCCL_BUFFSIZE"), ncclSuccess);
  int32_t narrow = 0;
  EXPECT_TRUE(failsWith([&] { return ncclParamGetI32(h, &narrow); }, ncclInvalidArgument,
                        {"NCCL_BUFFSIZE", "64-bit"}));
  char small[2];
  int len = 0;
  EXPECT_TRUE(failsWith([&] { return ncclParamGet(h, small, sizeof small, &len); },
                        ncclInvalidArgument, {"needs 8 bytes"}));
  const char* value = nullptr;
  EXPECT_TRUE(failsWith([&] { return ncclParamGetParameter("NOPE", &value, &len); },
                        ncclInvalidArgument, {"NOPE"}));
  EXPECT_EQ(value, nullptr);
}

}  // namespace
