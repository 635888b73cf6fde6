// The emulated RoCE HCA (emulation/ib/verbs_emulated.h), driven through the verbs seam as
// the transport drives a real one: devices, ports and GIDs; registration and the QP state
// machine; RDMA writes with and without immediate between QPs over loopback, with every check a
// responder and a requester make (rkey, bounds, access, lkey, RNR). Timeouts, lifetimes, hostile
// bytes and two processes: verbs_emulation_fault_test.cc.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "support/emulated_verbs.h"

namespace braid::transport::ib {
namespace {

using namespace verbs_test;  // NOLINT: the fixtures this file is written with

// --- Devices, ports, GIDs --------------------------------------------------------------------

TEST(VerbsEmulationDevice, ListsTheDevicesItIsToldOf) {
  {
    emulateDevices(2);
    // The environment is Config's to read: the emulation lists what it was told, whatever the
    // variable says now.
    ScopedEnv env("BRAID_IB_EMULATE", "5");
    int n = -1;
    ibv_device** list = verbs().getDeviceList(&n);
    ASSERT_NE(list, nullptr);
    ASSERT_EQ(n, 2);
    EXPECT_STREQ(verbs().getDeviceName(list[0]), "emu_0");
    EXPECT_STREQ(verbs().getDeviceName(list[1]), "emu_1");
    EXPECT_STREQ(list[1]->name, "emu_1");
    EXPECT_NE(list[1]->dev_name[0], '\0');
    EXPECT_EQ(list[0]->node_type, IBV_NODE_CA);
    EXPECT_EQ(list[0]->transport_type, IBV_TRANSPORT_IB);
    EXPECT_EQ(list[2], nullptr);
    ibv_context* context = verbs().openDevice(list[1]);
    verbs().freeDeviceList(list);  // the context stays usable
    ASSERT_NE(context, nullptr);
    EXPECT_STREQ(context->device->name, "emu_1");
    EXPECT_EQ(verbs().closeDevice(context), 0);
  }
  for (int count : {0, 9, -1}) {
    emulateDevices(count);
    int n = -1;
    ibv_device** list = verbs().getDeviceList(&n);
    EXPECT_EQ(n, 0) << count;
    ASSERT_NE(list, nullptr);
    EXPECT_EQ(list[0], nullptr);
    verbs().freeDeviceList(list);
  }
}

TEST(VerbsEmulationDevice, ReportsItsPortAndLimits) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_device_attr dev{};
  ASSERT_EQ(verbs().queryDevice(device.context, &dev), 0);
  EXPECT_EQ(dev.phys_port_cnt, 1);
  EXPECT_EQ(dev.max_qp, 256);
  EXPECT_EQ(dev.max_qp_wr, 1024);
  EXPECT_EQ(dev.max_sge, 4);
  EXPECT_EQ(dev.max_cq, 1024);
  EXPECT_EQ(dev.max_cqe, 65536);
  EXPECT_EQ(dev.max_mr, 65536);
  EXPECT_EQ(dev.max_mr_size, uint64_t{1} << 40);
  EXPECT_EQ(dev.max_qp_rd_atom, 16);
  EXPECT_EQ(dev.vendor_id, 0u);
  EXPECT_STREQ(dev.fw_ver, "braid-emulated");

  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(device.context, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(port.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(port.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(port.lid, 0);
  EXPECT_EQ(port.active_width, 2);
  EXPECT_EQ(port.active_speed, 32);
  EXPECT_EQ(port.phys_state, 5);
  EXPECT_GE(port.gid_tbl_len, 2);
  EXPECT_EQ(verbs().queryPort(device.context, 2, &port), EINVAL);
  EXPECT_EQ(verbs().queryPort(device.context, 0, &port), EINVAL);
}

TEST(VerbsEmulationDevice, GidTableHasRoceV1FirstAndLoopbackLast) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(device.context, 1, &port), 0);
  ibv_gid gid;
  ASSERT_EQ(verbs().queryGid(device.context, 1, 0, &gid), 0);
  EXPECT_EQ(gid.raw[0], 0xfe);
  EXPECT_EQ(gid.raw[1], 0x80);
  EXPECT_EQ(verbs().gidType(device.context, 1, 0), GidType::kRoceV1);
  int loopback = loopbackGidIndex(device.context);
  ASSERT_GT(loopback, 0) << "no RoCE v2 GID ::ffff:127.0.0.1";
  bool seenLoopback = false;
  for (int i = 1; i < port.gid_tbl_len; ++i) {
    ASSERT_EQ(verbs().queryGid(device.context, 1, i, &gid), 0);
    EXPECT_EQ(verbs().gidType(device.context, 1, i), GidType::kRoceV2) << i;
    EXPECT_FALSE(gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80) << "link-local at " << i;
    static const uint8_t kLoopbackV6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    bool isLoopback = gid.raw[10] == 0xff && gid.raw[11] == 0xff && gid.raw[12] == 127;
    isLoopback = isLoopback || memcmp(gid.raw, kLoopbackV6, 16) == 0;
    EXPECT_TRUE(isLoopback || !seenLoopback) << "a non-loopback GID after loopback at " << i;
    seenLoopback = seenLoopback || isLoopback;
  }
  EXPECT_EQ(verbs().queryGid(device.context, 1, port.gid_tbl_len, &gid), EINVAL);
  EXPECT_EQ(verbs().queryGid(device.context, 1, -1, &gid), EINVAL);
  EXPECT_EQ(verbs().queryGid(device.context, 2, 0, &gid), EINVAL);
  EXPECT_EQ(verbs().gidType(device.context, 1, port.gid_tbl_len), GidType::kUnknown);
}

// --- Memory regions, queue pairs ---------------------------------------------------------------

TEST(VerbsEmulationMemory, RegistrationChecksItsArguments) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_pd* pd = verbs().allocPd(device.context);
  ASSERT_NE(pd, nullptr);
  std::vector<uint8_t> buffer(4096);
  errno = 0;
  EXPECT_EQ(verbs().regMr(pd, buffer.data(), buffer.size(), IBV_ACCESS_REMOTE_WRITE), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(verbs().regMr(pd, nullptr, buffer.size(), kRw), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(verbs().regMr(pd, buffer.data(), 0, kRw), nullptr);
  EXPECT_EQ(errno, EINVAL);
  ibv_mr* first = verbs().regMr(pd, buffer.data(), buffer.size(), kRw);
  ibv_mr* second = verbs().regMr(pd, buffer.data(), 64, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->addr, buffer.data());
  EXPECT_EQ(first->length, buffer.size());
  EXPECT_EQ(first->pd, pd);
  std::vector<uint32_t> keys = {first->lkey, first->rkey, second->lkey, second->rkey};
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_NE(keys[i], 0u);
    for (size_t j = 0; j < i; ++j) EXPECT_NE(keys[i], keys[j]);
  }
  EXPECT_EQ(verbs().deallocPd(pd), EBUSY);
  EXPECT_EQ(verbs().deregMr(first), 0);
  EXPECT_EQ(verbs().deregMr(second), 0);
  EXPECT_EQ(verbs().deallocPd(pd), 0);
}

TEST(VerbsEmulationQp, StateMachineChecksTransitionsAndMasks) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  Endpoint e(device.context);
  ASSERT_TRUE(e.ok());
  ibv_qp_init_attr ud{};
  ud.send_cq = e.sendCq;
  ud.recv_cq = e.recvCq;
  ud.qp_type = IBV_QPT_UD;
  ud.cap = {16, 16, 1, 1, 0};
  errno = 0;
  EXPECT_EQ(verbs().createQp(e.pd, &ud), nullptr);
  EXPECT_EQ(errno, EINVAL);
  Write w = writeBetween(e, 0, e, 64, 8);
  EXPECT_EQ(post(e.qp, w), EINVAL) << "post_send in RESET";
  EXPECT_EQ(postReceives(e.qp, 1), EINVAL) << "post_recv in RESET";

  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.port_num = 1;
  init.qp_access_flags = kRw;
  EXPECT_EQ(verbs().modifyQp(e.qp, &init, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL)
      << "RESET -> INIT without PKEY_INDEX";
  constexpr int kInitMask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  init.port_num = 2;
  EXPECT_EQ(verbs().modifyQp(e.qp, &init, kInitMask), EINVAL) << "port 2";
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RESET);
  init.port_num = 1;
  ASSERT_EQ(verbs().modifyQp(e.qp, &init, kInitMask), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_INIT);
  EXPECT_EQ(post(e.qp, w), EINVAL) << "post_send in INIT";
  EXPECT_EQ(postReceives(e.qp, 1), 0) << "post_recv in INIT";

  Path path = loopbackPath(e, e);
  ibv_qp_attr rts = rtsAttr(path);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rts, kRtsMask), EINVAL) << "INIT -> RTS";
  ibv_qp_attr rtr = rtrAttr(path);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask & ~IBV_QP_MIN_RNR_TIMER), EINVAL);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask | IBV_QP_SQ_PSN), EINVAL) << "extra attribute";
  rtr.ah_attr.is_global = 0;
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask), EINVAL) << "RoCE needs a GRH";
  rtr = rtrAttr(path);
  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(e.context, 1, &port), 0);
  rtr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port.gid_tbl_len);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask), EINVAL) << "sgid_index past the table";
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_INIT);
  rtr = rtrAttr(path);
  ASSERT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RTR);
  EXPECT_EQ(post(e.qp, w), EINVAL) << "post_send in RTR";
  EXPECT_EQ(verbs().modifyQp(e.qp, &rts, kRtsMask & ~IBV_QP_SQ_PSN), EINVAL);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RTR);
  ASSERT_EQ(verbs().modifyQp(e.qp, &rts, kRtsMask), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RTS);
  ibv_qp_attr same{};
  same.qp_state = IBV_QPS_RTS;
  EXPECT_EQ(verbs().modifyQp(e.qp, &same, IBV_QP_STATE), 0);

  EXPECT_EQ(verbs().destroyCq(e.sendCq), EBUSY);
  EXPECT_EQ(verbs().deallocPd(e.pd), EBUSY);

  ibv_qp_attr err{};
  err.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(verbs().modifyQp(e.qp, &err, IBV_QP_STATE), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_ERR);
  auto flushedRecv = pollFor(e.recvCq, 1);  // the receive posted in INIT
  ASSERT_EQ(flushedRecv.size(), 1u);
  EXPECT_EQ(flushedRecv[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(post(e.qp, w), 0) << "post_send in ERR is accepted and flushed";
  auto flushedSend = pollFor(e.sendCq, 1);
  ASSERT_EQ(flushedSend.size(), 1u);
  EXPECT_EQ(flushedSend[0].status, IBV_WC_WR_FLUSH_ERR);
  ibv_qp_attr reset{};
  reset.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(verbs().modifyQp(e.qp, &reset, IBV_QP_STATE), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RESET);
}

TEST(VerbsEmulationQp, QpNumbersRunOutAt256) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  Endpoint e(device.context);
  ASSERT_TRUE(e.ok());
  std::vector<ibv_qp*> qps = {e.qp};
  ibv_qp_init_attr init{};
  init.send_cq = e.sendCq;
  init.recv_cq = e.recvCq;
  init.qp_type = IBV_QPT_RC;
  init.cap = {4, 4, 1, 1, 0};
  while (qps.size() < 256) {
    ibv_qp* qp = verbs().createQp(e.pd, &init);
    ASSERT_NE(qp, nullptr) << qps.size();
    for (ibv_qp* other : qps) ASSERT_NE(other->qp_num, qp->qp_num);
    EXPECT_EQ(qp->qp_num >> 8, e.qp->qp_num >> 8) << "the listener's port";
    qps.push_back(qp);
  }
  errno = 0;
  EXPECT_EQ(verbs().createQp(e.pd, &init), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  for (size_t i = 1; i < qps.size(); ++i) EXPECT_EQ(verbs().destroyQp(qps[i]), 0);
  ibv_qp* again = verbs().createQp(e.pd, &init);
  EXPECT_NE(again, nullptr);
  if (again != nullptr) {
    EXPECT_EQ(verbs().destroyQp(again), 0);
  }
}

TEST(VerbsEmulationQp, SendQueueHoldsMaxSendWrAndDestroyDoesNotWait) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  EndpointOptions options;
  options.maxSendWr = 4;
  Endpoint a(device.context, options);
  Endpoint b(device.context);
  ASSERT_TRUE(a.ok() && b.ok());
  Path never = loopbackPath(a, b);
  never.sgidIndex = 0;  // RoCE v1: nothing ever leaves
  never.timeout = 0;    // and nothing ever times out
  bringUp(a.qp, kRw, never);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), 0);
  EXPECT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), ENOMEM);
}

TEST(VerbsEmulationQp, OverrunCompletionQueueFailsEveryPoll) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  EndpointOptions options;
  options.cqEntries = 2;
  Endpoint e(device.context, options);
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(toInit(e.qp, kRw), 0);
  ibv_qp_attr err{};
  err.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(verbs().modifyQp(e.qp, &err, IBV_QP_STATE), 0);
  ASSERT_EQ(postReceives(e.qp, 2), 0);
  ibv_wc wc[4];
  EXPECT_EQ(verbs().pollCq(e.recvCq, 4, wc), 2);
  ASSERT_EQ(postReceives(e.qp, 3), 0);  // three flushes into two entries
  EXPECT_EQ(verbs().pollCq(e.recvCq, 4, wc), -1);
  EXPECT_EQ(verbs().pollCq(e.recvCq, 4, wc), -1);
}

// --- Writes over loopback --------------------------------------------------------------------

TEST_F(VerbsEmulationWrite, WriteWithImmediateLandsAndCompletes) {
  connect();
  ASSERT_EQ(postReceives(b_.qp, 1, 77), 0);
  const char text[] = "over the emulated fabric";
  memcpy(a_.memory.data(), text, sizeof(text));
  Write w = aToB(100, sizeof(text));
  w.wrId = 5;
  w.imm = 0xa1b2c3d4;
  ASSERT_EQ(post(a_.qp, w), 0);
  auto recv = pollFor(b_.recvCq, 1);
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(recv[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(recv[0].wr_id, 77u);
  EXPECT_EQ(recv[0].byte_len, sizeof(text));
  EXPECT_TRUE(recv[0].wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(recv[0].imm_data), 0xa1b2c3d4u);
  EXPECT_EQ(recv[0].qp_num, b_.qp->qp_num);
  EXPECT_EQ(recv[0].src_qp, a_.qp->qp_num);
  EXPECT_STREQ(reinterpret_cast<const char*>(b_.memory.data() + 100), text);  // before the CQE
  auto send = pollFor(a_.sendCq, 1);
  ASSERT_EQ(send.size(), 1u);
  EXPECT_EQ(send[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(send[0].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(send[0].wr_id, 5u);
  EXPECT_EQ(send[0].qp_num, a_.qp->qp_num);

  // Inline: the source may change as soon as post returns.
  ASSERT_EQ(postReceives(b_.qp, 1), 0);
  uint64_t value = 0x1122334455667788;
  Write in = aToB(200, 8);
  in.local = &value;
  in.lkey = 0;  // not checked for inline data
  in.inlined = true;
  in.imm = 1;
  ASSERT_EQ(post(a_.qp, in), 0);
  value = 0;
  ASSERT_EQ(pollFor(b_.recvCq, 1).size(), 1u);
  uint64_t landed;
  memcpy(&landed, b_.memory.data() + 200, 8);
  EXPECT_EQ(landed, 0x1122334455667788u);
}

TEST(VerbsEmulationOrder, ThousandWritesIntoOneSlotArriveInOrder) {
  Device d0(0, 2);
  Device d1(1, 2);  // a device of its own: its own listener, QP numbers and keys
  ASSERT_NE(d0.context, nullptr);
  ASSERT_NE(d1.context, nullptr);
  constexpr int kWrites = 1000;
  EndpointOptions options;
  options.bytes = kWrites * sizeof(uint64_t);
  Endpoint a(d0.context, options);
  Endpoint b(d1.context, options);
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  ASSERT_EQ(postReceives(b.qp, kWrites), 0);
  auto* sequence = reinterpret_cast<uint64_t*>(a.memory.data());
  for (int i = 0; i < kWrites; ++i) sequence[i] = static_cast<uint64_t>(i) + 1;
  for (int i = 0; i < kWrites; ++i) {
    Write w = writeBetween(a, i * sizeof(uint64_t), b, 0, sizeof(uint64_t));
    w.wrId = static_cast<uint64_t>(i);
    w.imm = static_cast<uint32_t>(i);
    ASSERT_EQ(post(a.qp, w), 0) << i;
  }
  const auto* slot = reinterpret_cast<const uint64_t*>(b.memory.data());
  for (int i = 0; i < kWrites; ++i) {
    auto wc = pollFor(b.recvCq, 1);
    ASSERT_EQ(wc.size(), 1u) << i;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS);
    ASSERT_EQ(ntohl(wc[0].imm_data), static_cast<uint32_t>(i));
    // Write i is in memory before its completion; later ones may have landed too.
    ASSERT_GE(readWhileHcaWrites(slot), static_cast<uint64_t>(i) + 1) << "write " << i;
  }
  EXPECT_EQ(readWhileHcaWrites(slot), static_cast<uint64_t>(kWrites));
  auto sends = pollFor(a.sendCq, kWrites);
  ASSERT_EQ(sends.size(), static_cast<size_t>(kWrites));
  for (int i = 0; i < kWrites; ++i) EXPECT_EQ(sends[i].wr_id, static_cast<uint64_t>(i));
}

TEST(VerbsEmulationLarge, SixteenMegabytesArriveWhole) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  EndpointOptions options;
  options.bytes = size_t{16} << 20;  // several of the responder's read pieces
  Endpoint a(device.context, options);
  Endpoint b(device.context, options);
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  for (size_t i = 0; i < a.memory.size(); ++i) a.memory[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  ASSERT_EQ(postReceives(b.qp, 1), 0);
  Write w = writeBetween(a, 0, b, 0, static_cast<uint32_t>(a.memory.size()));
  w.imm = 16;
  ASSERT_EQ(post(a.qp, w), 0);
  auto recv = pollFor(b.recvCq, 1);
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0].byte_len, a.memory.size());
  EXPECT_TRUE(b.memory == a.memory);
  auto send = pollFor(a.sendCq, 1);
  ASSERT_EQ(send.size(), 1u);
  EXPECT_EQ(send[0].status, IBV_WC_SUCCESS);
}

TEST(VerbsEmulationThreads, WritesGoOnWhileOtherQpsComeAndGo) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  Endpoint a(device.context);
  Endpoint b(device.context);
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  std::atomic<bool> done{false};
  std::thread churn([&] {  // the device's other users: QPs created, connected, used, destroyed
    while (!done) {
      Endpoint c(device.context);
      Endpoint d(device.context);
      if (!c.ok() || !d.ok()) break;
      connectPair(c, d);
      (void)post(c.qp, writeBetween(c, 0, d, 0, 64));
      if (done) break;  // destroyed with the write maybe still under way: that must not hang
    }
  });
  constexpr int kWrites = 2000;
  auto* counter = reinterpret_cast<uint32_t*>(a.memory.data());
  for (int i = 0; i < kWrites; ++i) {
    counter[i % 64] = static_cast<uint32_t>(i);
    Write w = writeBetween(a, (i % 64) * 4, b, (i % 64) * 4, 4);
    w.wrId = static_cast<uint64_t>(i);
    ASSERT_EQ(post(a.qp, w), 0);
    auto wc = pollFor(a.sendCq, 1);
    ASSERT_EQ(wc.size(), 1u) << i;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << i;
    ASSERT_EQ(wc[0].wr_id, static_cast<uint64_t>(i));
  }
  done = true;
  churn.join();
  EXPECT_EQ(memcmp(a.memory.data(), b.memory.data(), 256), 0);
}

TEST_F(VerbsEmulationWrite, UnsignaledWritesCompleteSilentlyButArrive) {
  connect();
  for (int i = 0; i < 16; ++i) a_.memory[i] = static_cast<uint8_t>(i + 1);
  for (int i = 0; i < 10; ++i) {
    Write w = writeBetween(a_, i, b_, i, 1);
    w.signaled = false;
    ASSERT_EQ(post(a_.qp, w), 0);
  }
  Write last = writeBetween(a_, 10, b_, 10, 1);
  last.wrId = 99;
  ASSERT_EQ(post(a_.qp, last), 0);
  auto wc = pollFor(a_.sendCq, 2, 100);
  ASSERT_EQ(wc.size(), 1u) << "only the signaled write completes";
  EXPECT_EQ(wc[0].wr_id, 99u);
  for (int i = 0; i < 11; ++i) EXPECT_EQ(b_.memory[i], i + 1) << i;
}

TEST_F(VerbsEmulationWrite, WrongRkeyIsRemoteAccessErrorAndFlushesTheRest) {
  connect();
  ASSERT_EQ(postReceives(b_.qp, 2), 0);
  memset(a_.memory.data(), 0xab, 64);
  Write bad = aToB(0, 64);
  bad.rkey ^= 0x5a5a5a5a;
  bad.imm = 1;
  ASSERT_EQ(post(a_.qp, bad), 0);
  for (int i = 0; i < 3; ++i) {
    Write later = aToB(0, 64);
    later.wrId = 10 + i;
    later.signaled = false;  // flushes complete anyway
    ASSERT_EQ(post(a_.qp, later), 0);
  }
  auto wc = pollFor(a_.sendCq, 4);
  ASSERT_EQ(wc.size(), 4u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(wc[0].wr_id, 1u);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(wc[i].wr_id, 9u + i);
  }
  EXPECT_EQ(stateOf(a_.qp), IBV_QPS_ERR);
  EXPECT_EQ(std::vector<uint8_t>(b_.memory.size(), 0), b_.memory);
  // The emulation's choice: the responder's QP goes to ERR too, flushing its receives.
  EXPECT_TRUE(waitForState(b_.qp, IBV_QPS_ERR));
  auto flushed = pollFor(b_.recvCq, 2);
  ASSERT_EQ(flushed.size(), 2u);
  EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(VerbsEmulationWrite, OneBytePastTheRegionIsRemoteAccessError) {
  connect();
  ASSERT_EQ(post(a_.qp, aToB(b_.memory.size() - 63, 64)), 0);
  expectRefused(IBV_WC_REM_ACCESS_ERR);
}

/// The write of 8 bytes from a's buffer to b's, on a fresh pair whose b is made by `options`
/// and then `spoil`; returns a's completion status and expects b's memory untouched.
template <typename Spoil>
ibv_wc_status writeToSpoiledPeer(ibv_context* context, EndpointOptions options, Spoil spoil) {
  Endpoint a(context);
  Endpoint b(context, options);
  EXPECT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  a.memory[0] = 1;
  Write w = writeBetween(a, 0, b, 0, 8);
  spoil(b, &w);
  EXPECT_EQ(post(a.qp, w), 0);
  auto wc = pollFor(a.sendCq, 1);
  EXPECT_EQ(wc.size(), 1u);
  EXPECT_EQ(b.memory[0], 0);
  return wc.empty() ? IBV_WC_GENERAL_ERR : wc[0].status;
}

TEST(VerbsEmulationRemoteAccess, EveryResponderCheckRefusesTheWrite) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  auto nothing = [](Endpoint&, Write*) {};
  EndpointOptions regionLocalOnly;
  regionLocalOnly.mrAccess = IBV_ACCESS_LOCAL_WRITE;
  EXPECT_EQ(writeToSpoiledPeer(device.context, regionLocalOnly, nothing), IBV_WC_REM_ACCESS_ERR)
      << "a region without IBV_ACCESS_REMOTE_WRITE";
  EndpointOptions qpLocalOnly;
  qpLocalOnly.qpAccess = IBV_ACCESS_LOCAL_WRITE;
  EXPECT_EQ(writeToSpoiledPeer(device.context, qpLocalOnly, nothing), IBV_WC_REM_ACCESS_ERR)
      << "a QP without IBV_ACCESS_REMOTE_WRITE";
  std::vector<uint8_t> elsewhere(64, 0);
  ibv_pd* otherPd = verbs().allocPd(device.context);
  ibv_mr* otherMr = verbs().regMr(otherPd, elsewhere.data(), elsewhere.size(), kRw);
  ASSERT_NE(otherMr, nullptr);
  auto otherDomain = [&](Endpoint&, Write* w) {
    w->remote = reinterpret_cast<uintptr_t>(elsewhere.data());
    w->rkey = otherMr->rkey;
  };
  EXPECT_EQ(writeToSpoiledPeer(device.context, {}, otherDomain), IBV_WC_REM_ACCESS_ERR)
      << "a region of another protection domain";
  EXPECT_EQ(elsewhere, std::vector<uint8_t>(64, 0));
  EXPECT_EQ(verbs().deregMr(otherMr), 0);
  EXPECT_EQ(verbs().deallocPd(otherPd), 0);
  auto below = [](Endpoint& b, Write* w) { w->remote = b.addr() - 1; };
  EXPECT_EQ(writeToSpoiledPeer(device.context, {}, below), IBV_WC_REM_ACCESS_ERR)
      << "one byte before the region";
  auto sane = [](Endpoint& b, Write* w) { w->remote = b.addr(8); };
  EXPECT_EQ(writeToSpoiledPeer(device.context, {}, sane), IBV_WC_SUCCESS) << "the control";
}

TEST_F(VerbsEmulationWrite, DeregisteredRegionIsRemoteAccessError) {
  connect();
  std::vector<uint8_t> other(256, 0);
  ibv_mr* gone = verbs().regMr(b_.pd, other.data(), other.size(), kRw);
  ASSERT_NE(gone, nullptr);
  uint32_t rkey = gone->rkey;
  ASSERT_EQ(verbs().deregMr(gone), 0);
  a_.memory[0] = 1;
  Write w = aToB(0, 8);
  w.remote = reinterpret_cast<uintptr_t>(other.data());
  w.rkey = rkey;
  ASSERT_EQ(post(a_.qp, w), 0);
  expectRefused(IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(other, std::vector<uint8_t>(256, 0));
}

TEST_F(VerbsEmulationWrite, BadLkeyIsLocalProtectionError) {
  connect();
  ASSERT_EQ(post(a_.qp, aToB(0, 8)), 0);  // a good one first: it completes before the error
  Write bad = aToB(0, 8);
  bad.wrId = 2;
  bad.lkey = a_.mr->rkey;  // a key, but not an lkey
  ASSERT_EQ(post(a_.qp, bad), 0);
  Write after = aToB(0, 8);
  after.wrId = 3;
  ASSERT_EQ(post(a_.qp, after), 0);
  auto wc = pollFor(a_.sendCq, 3);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[1].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[2].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(stateOf(a_.qp), IBV_QPS_ERR);
}

TEST(VerbsEmulationLocalAccess, SgeOutsideItsRegionOrDomainIsLocalProtectionError) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  std::vector<uint8_t> elsewhere(64, 1);
  ibv_pd* otherPd = verbs().allocPd(device.context);
  ibv_mr* otherMr = verbs().regMr(otherPd, elsewhere.data(), elsewhere.size(), kRw);
  ASSERT_NE(otherMr, nullptr);
  for (int kind = 0; kind < 2; ++kind) {
    Endpoint a(device.context);
    Endpoint b(device.context);
    ASSERT_TRUE(a.ok() && b.ok());
    connectPair(a, b);
    Write w = writeBetween(a, a.memory.size() - 4, b, 0, 8);  // 4 bytes past a's region
    if (kind == 1) {
      w.local = elsewhere.data();  // inside a region, of another protection domain
      w.lkey = otherMr->lkey;
    }
    ASSERT_EQ(post(a.qp, w), 0);
    auto wc = pollFor(a.sendCq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR) << kind;
    EXPECT_EQ(b.memory[0], 0);
  }
  EXPECT_EQ(verbs().deregMr(otherMr), 0);
  EXPECT_EQ(verbs().deallocPd(otherPd), 0);
}

TEST_F(VerbsEmulationWrite, NoReceiveWithRnrRetryOneIsRnrRetryExceeded) {
  Path impatient;
  impatient.rnrRetry = 1;
  Path quickTimer;
  quickTimer.minRnrTimer = 1;  // 10 µs
  connect(impatient, quickTimer);
  Write w = aToB(0, 8);
  w.imm = 3;
  ASSERT_EQ(post(a_.qp, w), 0);
  expectRefused(IBV_WC_RNR_RETRY_EXC_ERR);
  EXPECT_EQ(stateOf(b_.qp), IBV_QPS_RTS) << "RNR leaves the responder as it was";
}

TEST_F(VerbsEmulationWrite, RnrWaitsForALateReceiveBeyondTheAckTimeout) {
  Path shortTimeout;
  shortTimeout.timeout = 15;  // 134 ms, no retry: the responder's RNR notices keep it alive
  shortTimeout.retryCnt = 0;
  connect(shortTimeout);  // rnr_retry 7: for ever
  Write w = aToB(0, 8);
  a_.memory[0] = 42;
  w.imm = 4;
  ASSERT_EQ(post(a_.qp, w), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_EQ(postReceives(b_.qp, 1), 0);
  auto wc = pollFor(a_.sendCq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(b_.memory[0], 42);
}

TEST(VerbsEmulationRoute, EveryRoceV2GidCarriesWrites) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(device.context, 1, &port), 0);
  int routes = 0;
  for (int i = 0; i < port.gid_tbl_len; ++i) {
    if (verbs().gidType(device.context, 1, i) != GidType::kRoceV2) continue;
    Endpoint a(device.context);
    Endpoint b(device.context);
    ASSERT_TRUE(a.ok() && b.ok());
    Path there;  // this host's address i, IPv4-mapped or IPv6, both ways
    there.sgidIndex = i;
    ASSERT_EQ(verbs().queryGid(device.context, 1, i, &there.dgid), 0);
    Path back = there;
    there.destQpNum = b.qp->qp_num;
    back.destQpNum = a.qp->qp_num;
    bringUp(a.qp, kRw, there);
    bringUp(b.qp, kRw, back);
    a.memory[0] = static_cast<uint8_t>(i + 1);
    ASSERT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), 0);
    auto wc = pollFor(a.sendCq, 1);
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, there.dgid.raw, text, sizeof(text));
    ASSERT_EQ(wc.size(), 1u) << text;
    EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << text;
    EXPECT_EQ(b.memory[0], i + 1) << text;
    ++routes;
  }
  EXPECT_GE(routes, 1);
}

}  // namespace
}  // namespace braid::transport::ib
