// The environment as braid reads it: Config::fromEnvironment() and validate(), and the small
// parsers behind the variables. The values here are the ones the fuzz targets (tests/fuzz,
// docs/reliability.md) found accepted wrongly or read as something else.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/host_port.h"
#include "base/ifname_filter.h"
#include "config.h"

namespace braid {
namespace {

// Sets BRAID_* variables for one test and removes them after.
class ScopedVariables {
 public:
  explicit ScopedVariables(std::vector<std::pair<std::string, std::string>> variables)
      : variables_(std::move(variables)) {
    for (const auto& [name, value] : variables_) setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedVariables() {
    for (const auto& [name, value] : variables_) unsetenv(name.c_str());
  }
  ScopedVariables(const ScopedVariables&) = delete;
  ScopedVariables& operator=(const ScopedVariables&) = delete;

 private:
  std::vector<std::pair<std::string, std::string>> variables_;
};

TEST(EnvParseSize, NumbersAndSuffixes) {
  EXPECT_EQ(env::parseSize("4M"), 4 << 20);
  EXPECT_EQ(env::parseSize("64KB"), 64 << 10);
  EXPECT_EQ(env::parseSize("0x10"), 16);
  EXPECT_EQ(env::parseSize("-1"), -1);
  EXPECT_EQ(env::parseSize("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(env::parseSize("8589934591G"), int64_t{8589934591} << 30);
  EXPECT_FALSE(env::parseSize("").has_value());
  EXPECT_FALSE(env::parseSize("4X").has_value());
  EXPECT_FALSE(env::parseSize("M").has_value());
}

// Found by env_parsers_fuzz: past int64, strtoll answers INT64_MAX, which was taken as the value.
TEST(EnvParseSize, RefusesNumbersPastInt64) {
  EXPECT_FALSE(env::parseSize("9223922337203685807").has_value());
  EXPECT_FALSE(env::parseSize("-9223922337203685807").has_value());
}

// The product past int64 was undefined behaviour (UBSan in env_parsers_fuzz).
TEST(EnvParseSize, RefusesSuffixesThatOverflow) {
  EXPECT_FALSE(env::parseSize("8589934592G").has_value());
  EXPECT_FALSE(env::parseSize("-9000000000000M").has_value());
  EXPECT_FALSE(env::parseSize("0x7fffffffffffffffK").has_value());
}

Status validated(std::vector<std::pair<std::string, std::string>> variables) {
  ScopedVariables scoped(std::move(variables));
  return Config::fromEnvironment().validate();
}

TEST(ConfigValidate, DefaultsAreValid) { EXPECT_TRUE(validated({}).ok()); }

// Found by config_env_fuzz: BRAID_IB_SL and BRAID_IB_TC were not checked, and the verbs
// transport cut them to the address vector's 4 and 8 bits (IB_TC=106106 became 154).
TEST(ConfigValidate, IbServiceLevelAndTrafficClassRanges) {
  EXPECT_TRUE(validated({{"BRAID_IB_SL", "15"}, {"BRAID_IB_TC", "255"}}).ok());
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"BRAID_IB_SL", "16"},
                                                        {"BRAID_IB_SL", "-1"},
                                                        {"BRAID_IB_TC", "106106"},
                                                        {"BRAID_IB_TC", "-3"}}) {
    const Status status = validated({{name, value}});
    ASSERT_FALSE(status.ok()) << name << "=" << value;
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find(name), std::string::npos) << status.message();
  }
}

// NCCL_NET_GDR_LEVEL: NCCL's path names or its numbers 0-4; anything else is refused by name.
TEST(ConfigValidate, NetGdrLevelIsAPathType) {
  for (const char* value : {"LOC", "PIX", "pxb", "PHB", "SYS", "0", "4"}) {
    EXPECT_TRUE(validated({{"NCCL_NET_GDR_LEVEL", value}}).ok()) << value;
  }
  for (const char* value : {"bogus", "PXB2", "-1"}) {
    const Status status = validated({{"NCCL_NET_GDR_LEVEL", value}});
    ASSERT_FALSE(status.ok()) << value;
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find("NCCL_NET_GDR_LEVEL"), std::string::npos) << status.message();
  }
}

// BRAID_STREAM_SLOTS: -1 (auto, the default), 0 or 1; anything else is refused by name.
TEST(ConfigValidate, StreamSlotsIsAutoOffOrOn) {
  EXPECT_EQ(Config::fromEnvironment().streamSlots, -1);
  for (const char* value : {"-1", "0", "1"}) {
    EXPECT_TRUE(validated({{"BRAID_STREAM_SLOTS", value}}).ok()) << value;
  }
  for (const char* value : {"2", "-2", "99999999999"}) {
    const Status status = validated({{"BRAID_STREAM_SLOTS", value}});
    ASSERT_FALSE(status.ok()) << value;
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find("BRAID_STREAM_SLOTS"), std::string::npos) << status.message();
  }
}

// Found by config_env_fuzz: the spin and the deadlines become nanoseconds (comm/links.cc,
// Deadline, the GPU kernels' timeoutNs), which overflowed int64 for values validate() accepted.
TEST(ConfigValidate, DeadlinesAndSpinFitInNanoseconds) {
  EXPECT_TRUE(validated({{"BRAID_TIMEOUT_MS", "31536000000"},
                         {"BRAID_HEARTBEAT_TIMEOUT_MS", "31536000000"},
                         {"BRAID_SPIN_US", "60000000"}})
                  .ok());
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"BRAID_TIMEOUT_MS", "9300000000000"},
           {"BRAID_HEARTBEAT_TIMEOUT_MS", "31536000001"},
           {"BRAID_SPIN_US", "9223372036854775"}}) {
    const Status status = validated({{name, value}});
    ASSERT_FALSE(status.ok()) << name << "=" << value;
    EXPECT_NE(status.message().find(name), std::string::npos) << status.message();
  }
}

// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS bound a GPU communicator's pick (comm/gpu_channels.h),
// read under either prefix; 0 leaves a bound unset, and past BRAID_NCHANNELS's 64 is refused.
TEST(ConfigValidate, ChannelBoundsAreReadUnderEitherPrefixAndRanged) {
  {
    ScopedVariables scoped({{"NCCL_MIN_NCHANNELS", "4"}, {"NCCL_MAX_NCHANNELS", "12"}});
    const Config c = Config::fromEnvironment();
    EXPECT_EQ(c.minChannels, 4);
    EXPECT_EQ(c.maxChannels, 12);
    EXPECT_TRUE(c.validate().ok());
  }
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"BRAID_MIN_NCHANNELS", "65"}, {"BRAID_MAX_NCHANNELS", "-1"}}) {
    const Status status = validated({{name, value}});
    ASSERT_FALSE(status.ok()) << name << "=" << value;
    EXPECT_NE(status.message().find(name), std::string::npos) << status.message();
  }
}

// NCCL_PXN_DISABLE, NCCL_P2P_PXN_LEVEL and NCCL_IB_SPLIT_DATA_ON_QPS, read under either prefix
// (topology/net_routes.h, transport/net/ib/ib_fifo_pump.h); a PXN level past 2 is refused.
TEST(ConfigValidate, PxnAndQpSplitAreReadAndRanged) {
  {
    const Config c = Config::fromEnvironment();
    EXPECT_FALSE(c.pxnDisable);
    EXPECT_EQ(c.p2pPxnLevel, 2);
    EXPECT_FALSE(c.ib.splitDataOnQps);
  }
  {
    ScopedVariables scoped({{"NCCL_PXN_DISABLE", "1"},
                            {"NCCL_P2P_PXN_LEVEL", "1"},
                            {"NCCL_IB_SPLIT_DATA_ON_QPS", "1"}});
    const Config c = Config::fromEnvironment();
    EXPECT_TRUE(c.pxnDisable);
    EXPECT_EQ(c.p2pPxnLevel, 1);
    EXPECT_TRUE(c.ib.splitDataOnQps);
    EXPECT_TRUE(c.validate().ok());
  }
  for (const char* value : {"3", "-1"}) {
    const Status status = validated({{"BRAID_P2P_PXN_LEVEL", value}});
    ASSERT_FALSE(status.ok()) << value;
    EXPECT_NE(status.message().find("BRAID_P2P_PXN_LEVEL"), std::string::npos) << status.message();
  }
}

// Found by config_env_fuzz: int knobs were read as int64 and cut to int, so a value past int's
// range wrapped round into one validate() accepts: BRAID_IB_ROCE_VERSION_NUM=21474836482 was
// RoCE v2, BRAID_NCHANNELS=4294967297 one channel.
TEST(ConfigValidate, IntKnobsPastIntAreRefusedNotWrapped) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"BRAID_IB_ROCE_VERSION_NUM", "21474836482"},
           {"BRAID_NCHANNELS", "4294967297"},
           {"BRAID_IB_TIMEOUT", "4294967310"},
           {"BRAID_IB_GID_INDEX", "-4294967295"},
           {"BRAID_SOCKET_NTHREADS", "0x100000001"}}) {
    const Status status = validated({{name, value}});
    ASSERT_FALSE(status.ok()) << name << "=" << value;
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find(name), std::string::npos) << status.message();
  }
}

TEST(HostPort, SplitsEveryForm) {
  auto plain = sockets::splitHostPort("node-a:29500");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.value().host, "node-a");
  EXPECT_EQ(plain.value().port, 29500);
  auto bracketed = sockets::splitHostPort("[fe80::1]:80");
  ASSERT_TRUE(bracketed.ok());
  EXPECT_EQ(bracketed.value().host, "fe80::1");
  auto literal = sockets::splitHostPort("::1:65535");
  ASSERT_TRUE(literal.ok());
  EXPECT_EQ(literal.value().host, "::1");
  EXPECT_EQ(literal.value().port, 65535);
  for (const char* bad : {"", "node", ":80", "node:", "node:0", "node:65536", "node:8o", "[::1]80",
                          "[::1", "node:123456"}) {
    EXPECT_FALSE(sockets::splitHostPort(bad).ok()) << bad;
  }
}

TEST(InterfaceFilter, PrefixesExactNamesAndExclusion) {
  const sockets::InterfaceFilter prefixes("eth,,ib");
  EXPECT_TRUE(prefixes.matches("eth0"));
  EXPECT_TRUE(prefixes.matches("ib1"));
  EXPECT_FALSE(prefixes.matches("lo"));
  const sockets::InterfaceFilter exact("=eth0");
  EXPECT_TRUE(exact.matches("eth0"));
  EXPECT_FALSE(exact.matches("eth01"));
  const sockets::InterfaceFilter excluded("^docker,lo");
  EXPECT_TRUE(excluded.exclude());
  EXPECT_FALSE(excluded.matches("docker0"));
  EXPECT_TRUE(excluded.matches("eth0"));
  EXPECT_FALSE(sockets::InterfaceFilter("").matches("eth0"));
  EXPECT_TRUE(sockets::InterfaceFilter("^").matches("eth0"));
}

// BRAID_SYMMETRIC: 0, 1 (auto, the default) or 2; BRAID_SYMMETRIC_ALGO: empty, oneshot or
// twoshot; anything else is refused by name.
TEST(ConfigValidate, SymmetricIsOffAutoOrAlwaysWithItsAlgorithmNamed) {
  EXPECT_EQ(Config::fromEnvironment().symmetric, 1);
  for (const char* value : {"0", "1", "2"}) {
    EXPECT_TRUE(validated({{"BRAID_SYMMETRIC", value}}).ok()) << value;
  }
  for (const char* value : {"oneshot", "twoshot"}) {
    EXPECT_TRUE(validated({{"BRAID_SYMMETRIC_ALGO", value}}).ok()) << value;
  }
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"BRAID_SYMMETRIC", "3"},
                                                        {"BRAID_SYMMETRIC", "-1"},
                                                        {"BRAID_SYMMETRIC_ALGO", "ring"},
                                                        {"BRAID_SYMMETRIC_ALGO", "OneShot"}}) {
    const Status status = validated({{name, value}});
    ASSERT_FALSE(status.ok()) << name << "=" << value;
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find(name), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace braid
