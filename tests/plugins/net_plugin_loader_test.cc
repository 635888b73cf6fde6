// The network plugin loader (transport/net/plugin/net_plugin_loader.h): how NCCL_NET_PLUGIN's
// value becomes the files dlopen is asked for, and what loading the test plugins built beside
// this binary (net_tcp_plugin.cc) gives: the newest table a library exports, a fall back (null,
// never a crash) where a library is missing, reports no device or is not the network NCCL_NET
// names.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/log.h"
#include "support/scoped_env.h"
#include "transport/net/plugin/net_plugin_abi.h"
#include "transport/net/plugin/net_plugin_loader.h"

namespace {

using braid::transport::plugin::loadNetPlugin;
using braid::transport::plugin::pluginCandidates;
using Files = std::vector<std::string>;

std::string pluginPath(const std::string& variant) {
  return std::string(BRAID_TEST_PLUGIN_DIR) + "/libnccl-net-" + variant + ".so";
}

TEST(NetPluginNames, UnsetTriesTheDefaultLibraryAlone) {
  const auto c = pluginCandidates(std::nullopt);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].files, Files{"libnccl-net.so"});
}

TEST(NetPluginNames, NoneInAnyCaseTriesNothing) {
  EXPECT_TRUE(pluginCandidates(std::string("none")).empty());
  EXPECT_TRUE(pluginCandidates(std::string("NONE")).empty());
  EXPECT_TRUE(pluginCandidates(std::string("")).empty());
}

TEST(NetPluginNames, ANameIsTriedAsGivenThenAsLibncclNetName) {
  const auto c = pluginCandidates(std::string("aws-ofi"));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].files, (Files{"aws-ofi", "libnccl-net-aws-ofi.so"}));
}

TEST(NetPluginNames, APathOrALibraryNameIsTriedAsGivenOnly) {
  EXPECT_EQ(pluginCandidates(std::string("/opt/x/libnccl-net.so"))[0].files,
            Files{"/opt/x/libnccl-net.so"});
  EXPECT_EQ(pluginCandidates(std::string("./plugin"))[0].files, Files{"./plugin"});
  EXPECT_EQ(pluginCandidates(std::string("libnccl-net-ofi.so"))[0].files,
            Files{"libnccl-net-ofi.so"});
  // Not of the form lib*.so: NCCL tries the prefixed name too.
  EXPECT_EQ(pluginCandidates(std::string("ofi.so"))[0].files,
            (Files{"ofi.so", "libnccl-net-ofi.so.so"}));
}

TEST(NetPluginNames, AListIsTriedInOrderSkippingEmptyEntries) {
  const auto c = pluginCandidates(std::string("a,,/p/libb.so,c"));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].entry, "a");
  EXPECT_EQ(c[1].files, Files{"/p/libb.so"});
  EXPECT_EQ(c[2].files, (Files{"c", "libnccl-net-c.so"}));
}

TEST(NetPluginNames, AListKeepsFourteenEntriesAtMost) {
  std::string list;
  for (int i = 0; i < 20; ++i) list += (i ? "," : "") + std::to_string(i);
  EXPECT_EQ(pluginCandidates(list).size(), 14u);
}

TEST(NetPluginLoad, TakesTheNewestTableALibraryExports) {
  auto both = loadNetPlugin(pluginPath("braidtest"), "");
  ASSERT_TRUE(both.ok()) << both.status().message();
  ASSERT_NE(both.value(), nullptr);
  EXPECT_EQ(both.value()->net().version(), 12);
  EXPECT_EQ(both.value()->net().name(), "braidtest");
  ASSERT_EQ(both.value()->devices().size(), 1u);
  EXPECT_EQ(both.value()->devices()[0].name, "braidtest0");
  EXPECT_EQ(both.value()->devices()[0].ptrSupport, braid::netabi::kPtrHost);
  EXPECT_EQ(both.value()->devices()[0].maxRecvs, 1);

  auto v6 = loadNetPlugin(pluginPath("braidtest6"), "");
  ASSERT_TRUE(v6.ok()) << v6.status().message();
  ASSERT_NE(v6.value(), nullptr);
  EXPECT_EQ(v6.value()->net().version(), 6);
  // v6 does not say its largest transfer: NCCL's assumption.
  EXPECT_EQ(v6.value()->devices()[0].maxP2pBytes, braid::netabi::kMaxNetSizeBeforeV9);
}

TEST(NetPluginLoad, IsSharedWhileHeld) {
  auto first = loadNetPlugin(pluginPath("braidtest"), "");
  auto second = loadNetPlugin(pluginPath("braidtest"), "");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first.value().get(), second.value().get());
}

TEST(NetPluginLoad, NcclNetComparesNamesWithoutCase) {
  auto loaded = loadNetPlugin(std::string(BRAID_TEST_PLUGIN_DIR) + "/libnccl-net-braidtest6.so",
                              "BraidTest");  // NCCL_NET compares without case
  ASSERT_TRUE(loaded.ok());
  EXPECT_NE(loaded.value(), nullptr);
}

TEST(NetPluginLoad, FallsBackWithoutCrashing) {
  for (const std::string& setting :
       {std::string("/nonexistent/libnccl-net-x.so"), std::string("nosuchplugin"),
        pluginPath("braidtest-nodev"), std::string("/etc/hostname"), std::string("none")}) {
    SCOPED_TRACE(setting);
    auto loaded = loadNetPlugin(setting, "");
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    EXPECT_EQ(loaded.value(), nullptr);
  }
}

// What loading `setting` logs at INFO.
std::string infoOf(const std::string& setting) {
  braid::testing::ScopedEnv debug("BRAID_DEBUG", "INFO");
  braid::log::resetLevel();
  ::testing::internal::CaptureStderr();
  auto loaded = loadNetPlugin(setting, "");
  std::string text = ::testing::internal::GetCapturedStderr();
  braid::log::resetLevel();
  EXPECT_TRUE(loaded.ok());
  return text;
}

TEST(NetPluginLoad, SaysAtInfoWhatNcclSays) {
  EXPECT_NE(infoOf("/nonexistent/libnccl-net-x.so")
                .find("NET/Plugin: Could not find: /nonexistent/libnccl-net-x.so"),
            std::string::npos);
  EXPECT_NE(infoOf(pluginPath("braidtest")).find("NET/Plugin: Loaded net plugin braidtest (v12)"),
            std::string::npos);
  const std::string nodev = infoOf(pluginPath("braidtest-nodev"));
  EXPECT_NE(nodev.find("Failed to initialize NET plugin braidtest: it reports no device"),
            std::string::npos)
      << nodev;
}

TEST(NetPluginLoad, AListTakesTheFirstThatWorks) {
  auto loaded = loadNetPlugin(
      "nosuchplugin," + pluginPath("braidtest-nodev") + "," + pluginPath("braidtest6"), "");
  ASSERT_TRUE(loaded.ok());
  ASSERT_NE(loaded.value(), nullptr);
  EXPECT_EQ(loaded.value()->net().version(), 6);
}

TEST(NetPluginLoad, NcclNetMustBeItsName) {
  auto loaded = loadNetPlugin(pluginPath("braidtest"), "other");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded.value(), nullptr);
}

}  // namespace
