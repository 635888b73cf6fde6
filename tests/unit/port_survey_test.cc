// Devices that cannot carry the verbs transport's RC traffic (transport/net/ib/port_survey.h),
// as the emulated HCA presents them (emulation/ib/emulated_device_kinds.h): an EFA-like device,
// a RoCE port without a v2 GID, one with an empty GID table, a port that is down, a device
// BRAID_IB_HCA leaves out. Each is set aside with its reason, never an error; the good device
// next to them is used alone; with none left the network says why. Also what the emulated
// devices report through verbs, and the configuration that names them.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "config.h"
#include "emulation/ib/emulated_device_kinds.h"
#include "support/scoped_env.h"
#include "transport/net/ib/ib_device.h"
#include "transport/net/ib/ib_network.h"
#include "transport/net/ib/port_survey.h"

namespace braid::transport::ib {
namespace {

using braid::testing::ScopedEnv;

/// The survey of the emulated HCA with `kinds` (one device each) and `settings`.
PortSurvey survey(const std::string& kinds, IbSettings settings = {}) {
  const int count = static_cast<int>(emulated::parseDeviceKinds(kinds).value().size());
  emulateDevices(count, kinds);
  int listed = 0;
  ibv_device** list = emulatedVerbs().getDeviceList(&listed);
  PortSurvey result = surveyPorts(emulatedVerbs(), list, listed, settings);
  emulatedVerbs().freeDeviceList(list);
  return result;
}

std::string whyOf(const PortSurvey& s, const std::string& name) {
  for (const SkippedPort& skipped : s.skipped) {
    if (skipped.name == name) return skipped.why;
  }
  return "(not skipped)";
}

TEST(PortSurvey, EachUnusableKindIsSetAsideWithItsReasonAndTheGoodOneIsUsed) {
  const PortSurvey s = survey("efa,roce_v1,no_gid,down,roce");
  ASSERT_EQ(s.usable.size(), 1u);
  EXPECT_EQ(s.usable[0].deviceName, "emu_4");
  EXPECT_EQ(s.usable[0].number, 1);
  ASSERT_EQ(s.skipped.size(), 4u) << s.skippedText();
  // EFA is set aside as a device, before its port is looked at: one line, naming what it is.
  EXPECT_NE(whyOf(s, "emu_0").find("node type unspecified, transport unspecified, vendor 0x1d0f"),
            std::string::npos)
      << whyOf(s, "emu_0");
  EXPECT_NE(whyOf(s, "emu_0").find("EFA"), std::string::npos);
  EXPECT_NE(whyOf(s, "emu_1:1").find("no RoCE v2 GID"), std::string::npos) << whyOf(s, "emu_1:1");
  EXPECT_NE(whyOf(s, "emu_2:1").find("GID table is empty"), std::string::npos)
      << whyOf(s, "emu_2:1");
  EXPECT_NE(whyOf(s, "emu_3:1").find("port DOWN, not ACTIVE"), std::string::npos)
      << whyOf(s, "emu_3:1");
}

TEST(PortSurvey, ADeviceBraidIbHcaLeavesOutIsSetAsideUnopened) {
  IbSettings settings;
  settings.hca = "^emu_1";
  const PortSurvey s = survey("roce,roce", settings);
  ASSERT_EQ(s.usable.size(), 1u);
  EXPECT_EQ(s.usable[0].deviceName, "emu_0");
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_EQ(s.skipped[0].name, "emu_1");
  EXPECT_EQ(s.skipped[0].why, "left out by BRAID_IB_HCA=^emu_1");
}

TEST(PortSurvey, AnAllowListLeavesOutEveryOtherDevice) {
  IbSettings settings;
  settings.hca = "=emu_1:1";
  const PortSurvey s = survey("roce,roce", settings);
  ASSERT_EQ(s.usable.size(), 1u);
  EXPECT_EQ(s.usable[0].deviceName, "emu_1");
  EXPECT_EQ(whyOf(s, "emu_0"), "left out by BRAID_IB_HCA==emu_1:1");
}

TEST(PortSurvey, AGidIndexThePortDoesNotHaveSetsItAside) {
  IbSettings settings;
  settings.gidIndex = 200;
  const PortSurvey s = survey("roce", settings);
  EXPECT_TRUE(s.usable.empty());
  EXPECT_NE(whyOf(s, "emu_0:1").find("no GID at index 200 (BRAID_IB_GID_INDEX"), std::string::npos)
      << s.skippedText();
}

TEST(PortSurvey, OnlyInfinibandCasOfIbTransportCarryRcTraffic) {
  EXPECT_EQ(whyNotRcDevice(IBV_NODE_CA, IBV_TRANSPORT_IB, 0x15b3), "");
  EXPECT_NE(whyNotRcDevice(IBV_NODE_RNIC, IBV_TRANSPORT_IWARP, 0x1077).find("iWARP"),
            std::string::npos);
  EXPECT_NE(whyNotRcDevice(IBV_NODE_USNIC, IBV_TRANSPORT_USNIC, 0x1137).find("usNIC"),
            std::string::npos);
  EXPECT_NE(
      whyNotRcDevice(IBV_NODE_UNSPECIFIED, IBV_TRANSPORT_UNSPECIFIED, 0x1d0f).find("aws-ofi-nccl"),
      std::string::npos);
}

TEST(PortSurvey, OpenPortsOpensTheGoodPortAloneAndSaysWhyWhenNoneIsLeft) {
  emulateDevices(2, "efa,roce");
  std::string why;
  Result<std::vector<std::unique_ptr<IbPort>>> mixed = openPorts(emulatedVerbs(), {}, &why);
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  ASSERT_EQ(mixed.value().size(), 1u);
  EXPECT_EQ(mixed.value()[0]->name(), "emu_1:1");
  mixed.value().clear();

  emulateDevices(2, "efa,down");
  Result<std::vector<std::unique_ptr<IbPort>>> none = openPorts(emulatedVerbs(), {}, &why);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none.value().empty());
  EXPECT_NE(why.find("no usable InfiniBand or RoCE port (emu_0: not an InfiniBand"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("emu_1:1: port DOWN"), std::string::npos) << why;
}

TEST(PortSurvey, ANetworkOfOnlyUnusableDevicesIsNoneAndNoError) {
  IbSettings settings;
  settings.emulate = 3;
  settings.emulateKinds = "efa,no_gid,roce_v1";
  std::string why;
  Result<std::unique_ptr<IbNetwork>> network = IbNetwork::open(settings, 0, &why);
  ASSERT_TRUE(network.ok()) << network.status().message();
  EXPECT_EQ(network.value(), nullptr);
  for (const char* name : {"emu_0:", "emu_1:1:", "emu_2:1:"}) {
    EXPECT_NE(why.find(name), std::string::npos) << name << " in " << why;
  }
}

// What rdma-core reports for an EFA device, not only the fields the survey reads.
TEST(EmulatedDeviceKinds, AnEfaDeviceReportsWhatRdmaCoreReportsForEfa) {
  emulateDevices(1, "efa");
  const VerbsApi& verbs = emulatedVerbs();
  int count = 0;
  ibv_device** list = verbs.getDeviceList(&count);
  ASSERT_EQ(count, 1);
  EXPECT_EQ(list[0]->node_type, IBV_NODE_UNSPECIFIED);
  EXPECT_EQ(list[0]->transport_type, IBV_TRANSPORT_UNSPECIFIED);
  ibv_context* context = verbs.openDevice(list[0]);
  verbs.freeDeviceList(list);
  ASSERT_NE(context, nullptr);
  ibv_device_attr device{};
  ASSERT_EQ(verbs.queryDevice(context, &device), 0);
  EXPECT_EQ(device.vendor_id, 0x1d0fu);
  EXPECT_EQ(device.vendor_part_id, 0xefa0u);
  ibv_port_attr port{};
  ASSERT_EQ(verbs.queryPort(context, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_UNSPECIFIED);
  EXPECT_EQ(port.gid_tbl_len, 1);
  // No RC queue pair: EFA's provider refuses every type but UD and SRD.
  ibv_pd* pd = verbs.allocPd(context);
  ibv_cq* cq = verbs.createCq(context, 16);
  ASSERT_TRUE(pd != nullptr && cq != nullptr);
  ibv_qp_init_attr init{};
  init.qp_type = IBV_QPT_RC;
  init.send_cq = cq;
  init.recv_cq = cq;
  init.cap.max_send_wr = 1;
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  errno = 0;
  EXPECT_EQ(verbs.createQp(pd, &init), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(verbs.destroyCq(cq), 0);
  EXPECT_EQ(verbs.deallocPd(pd), 0);
  EXPECT_EQ(verbs.closeDevice(context), 0);
}

TEST(EmulatedDeviceKinds, BadPortsReportWhatTheirKindSays) {
  emulateDevices(3, "roce_v1,no_gid,down");
  const VerbsApi& verbs = emulatedVerbs();
  int count = 0;
  ibv_device** list = verbs.getDeviceList(&count);
  ASSERT_EQ(count, 3);
  std::vector<ibv_port_attr> ports(3);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(list[d]->node_type, IBV_NODE_CA);
    ibv_context* context = verbs.openDevice(list[d]);
    ASSERT_NE(context, nullptr);
    ASSERT_EQ(verbs.queryPort(context, 1, &ports[d]), 0);
    if (d == 0) EXPECT_EQ(verbs.gidType(context, 1, 0), GidType::kRoceV1);
    EXPECT_EQ(verbs.closeDevice(context), 0);
  }
  verbs.freeDeviceList(list);
  EXPECT_EQ(ports[0].gid_tbl_len, 1);
  EXPECT_EQ(ports[0].link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(ports[1].gid_tbl_len, 0);
  EXPECT_EQ(ports[2].state, IBV_PORT_DOWN);
  EXPECT_EQ(ports[2].phys_state, 2);  // Polling: no link
}

Status configured(const char* kinds, const char* count) {
  ScopedEnv k("BRAID_IB_EMULATE_KINDS", kinds);
  ScopedEnv n("BRAID_IB_EMULATE", count);
  if (count[0] == '\0') unsetenv("BRAID_IB_EMULATE");
  return Config::fromEnvironment().validate();
}

TEST(EmulatedDeviceKinds, TheKindsAloneSayHowManyDevicesThereAre) {
  ScopedEnv k("BRAID_IB_EMULATE_KINDS", "efa,roce");
  unsetenv("BRAID_IB_EMULATE");
  const Config config = Config::fromEnvironment();
  EXPECT_TRUE(config.validate().ok());
  EXPECT_EQ(config.ib.emulate, 2);
  EXPECT_EQ(config.ib.emulateKinds, "efa,roce");
}

TEST(EmulatedDeviceKinds, BadKindsAreRefusedNamingTheWord) {
  EXPECT_TRUE(configured("efa,roce", "2").ok());
  const Status unknown = configured("efa,infiniband", "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("'infiniband' is not a kind"), std::string::npos)
      << unknown.message();
  const Status empty = configured("efa,", "");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.message().find("'' is not a kind"), std::string::npos) << empty.message();
  const Status disagree = configured("efa", "2");
  ASSERT_FALSE(disagree.ok());
  EXPECT_NE(disagree.message().find("names 1 devices, but BRAID_IB_EMULATE=2"), std::string::npos)
      << disagree.message();
  const Status tooMany = configured("roce,roce,roce,roce,roce,roce,roce,roce,roce", "");
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.message().find("BRAID_IB_EMULATE must be between 0 and 8"), std::string::npos)
      << tooMany.message();
}

Status stripes(const char* threads, const char* perThread) {
  ScopedEnv t("NCCL_SOCKET_NTHREADS", threads);
  ScopedEnv s("NCCL_NSOCKS_PERTHREAD", perThread);
  return Config::fromEnvironment().validate();
}

// NCCL's limits: 16 threads, 64 connections in all; the NCCL_ names are read.
TEST(SocketStripesConfig, NcclLimitsAreKeptAndEveryValuePastThemIsRefusedByName) {
  EXPECT_TRUE(stripes("16", "4").ok());
  EXPECT_TRUE(stripes("1", "64").ok());
  EXPECT_TRUE(stripes("2", "32").ok());
  {
    ScopedEnv t("NCCL_SOCKET_NTHREADS", "4");
    ScopedEnv s("NCCL_NSOCKS_PERTHREAD", "2");
    const Config config = Config::fromEnvironment();
    EXPECT_EQ(config.socketThreads, 4);
    EXPECT_EQ(config.socketsPerThread, 2);
  }
  for (const auto& [threads, perThread] : std::vector<std::pair<const char*, const char*>>{
           {"17", "1"}, {"0", "1"}, {"-2", "1"}, {"1", "0"}, {"2", "33"}, {"1", "65"}}) {
    const Status status = stripes(threads, perThread);
    ASSERT_FALSE(status.ok()) << threads << " x " << perThread;
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(status.message().find("BRAID_SOCKET_NTHREADS (" + std::string(threads) +
                                    ") and BRAID_NSOCKS_PERTHREAD (" + perThread + ")"),
              std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("at most 16 threads and 64 connections"), std::string::npos);
  }
}

}  // namespace
}  // namespace braid::transport::ib
