// CUDA_VISIBLE_DEVICES as the emulated GPU reads it (gpu/visible_devices.h), by CUDA's rules.
#include "gpu/visible_devices.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace visible_devices_test {

using braid::gpu::emulatedUuid;
using braid::gpu::parseDevicePairs;
using braid::gpu::visibleDevices;

std::vector<std::string> machineOf(int n) {
  std::vector<std::string> uuids;
  for (int d = 0; d < n; ++d) uuids.push_back(emulatedUuid(d));
  return uuids;
}

TEST(VisibleDevices, UnsetShowsEveryDeviceAndEmptyNone) {
  EXPECT_EQ(visibleDevices(std::nullopt, machineOf(3)), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(visibleDevices(std::string(""), machineOf(3)), (std::vector<int>{}));
}

TEST(VisibleDevices, IndicesInTheGivenOrderRenumberedFromZero) {
  EXPECT_EQ(visibleDevices(std::string("2"), machineOf(4)), (std::vector<int>{2}));
  EXPECT_EQ(visibleDevices(std::string("3,1"), machineOf(4)), (std::vector<int>{3, 1}));
  EXPECT_EQ(visibleDevices(std::string(" 0 , 2 "), machineOf(4)), (std::vector<int>{0, 2}));
}

TEST(VisibleDevices, TheListEndsAtTheFirstEntryThatNamesNoDevice) {
  EXPECT_EQ(visibleDevices(std::string("1,7,2"), machineOf(4)), (std::vector<int>{1}));
  EXPECT_EQ(visibleDevices(std::string("0,x,2"), machineOf(4)), (std::vector<int>{0}));
  EXPECT_EQ(visibleDevices(std::string("-1,0"), machineOf(4)), (std::vector<int>{}));
  EXPECT_EQ(visibleDevices(std::string("1,1,2"), machineOf(4)), (std::vector<int>{1}));
  EXPECT_EQ(visibleDevices(std::string("0,"), machineOf(4)), (std::vector<int>{0}));
}

TEST(VisibleDevices, UuidsWholeOrByAPrefixOfOneDevice) {
  const std::vector<std::string> uuids = machineOf(3);
  EXPECT_EQ(visibleDevices(uuids[2] + "," + uuids[0], uuids), (std::vector<int>{2, 0}));
  EXPECT_EQ(visibleDevices(uuids[1].substr(0, 12), uuids), (std::vector<int>{1}));
  // A prefix every device shares names none of them.
  EXPECT_EQ(visibleDevices(std::string("GPU-e0e0"), uuids), (std::vector<int>{}));
  EXPECT_EQ(visibleDevices(std::string("GPU-ffff"), uuids), (std::vector<int>{}));
}

TEST(VisibleDevices, EmulatedUuidsAreDistinctAndStable) {
  EXPECT_NE(emulatedUuid(0), emulatedUuid(1));
  EXPECT_EQ(emulatedUuid(5), emulatedUuid(5));
  EXPECT_EQ(emulatedUuid(0).rfind("GPU-", 0), 0u);
}

TEST(VisibleDevices, NoPeerAccessPairsAreReadOrRefusedWhole) {
  using Pairs = std::vector<std::pair<int, int>>;
  EXPECT_EQ(parseDevicePairs("1>0"), (Pairs{{1, 0}}));
  EXPECT_EQ(parseDevicePairs("1>0, 2>3"), (Pairs{{1, 0}, {2, 3}}));
  EXPECT_EQ(parseDevicePairs(""), (Pairs{}));
  EXPECT_EQ(parseDevicePairs("1-0"), std::nullopt);
  EXPECT_EQ(parseDevicePairs("1>"), std::nullopt);
  EXPECT_EQ(parseDevicePairs(">0"), std::nullopt);
  EXPECT_EQ(parseDevicePairs("1>0,x>2"), std::nullopt);
}

}  // namespace visible_devices_test
