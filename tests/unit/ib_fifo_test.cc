// The verbs transport's FIFO (transport/net/ib) over the emulated HCA, within one process: two
// IbNetworks stand for the two hosts, each with its proxy, their queue pairs connected through
// the emulated HCA's TCP wire. Messages of every size arrive whole and in order over one queue
// pair and over several on one device (whole slots in turn, or each split over them), every pair
// of a FIFO on its one NIC; a receiver that does not read holds the sender
// back at exactly the two FIFOs' slots; a receiver that never comes makes the sender fail at
// its deadline, and ends go away cleanly. Also BRAID_IB_HCA's syntax and the choice of GID.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "emulation/ib/emulated_hca.h"
#include "support/network_fifo_checks.h"
#include "transport/net/ib/hca_filter.h"
#include "transport/net/ib/ib_device.h"
#include "transport/net/ib/ib_fifo.h"
#include "transport/net/ib/ib_network.h"
#include "transport/net/ib/near_cpus.h"
#include "transport/net/socket_rendezvous.h"

namespace braid::transport::ib {
namespace {

constexpr size_t kSlotBytes = 4096;

TEST(HcaFilterTest, PrefixesPortsExactNamesAndExclusion) {
  EXPECT_TRUE(HcaFilter("").allows("mlx5_0", 1));
  HcaFilter prefix("mlx5");
  EXPECT_TRUE(prefix.allows("mlx5_0", 1));
  EXPECT_TRUE(prefix.allows("mlx5_12", 2));
  EXPECT_FALSE(prefix.allows("bnxt_re0", 1));
  HcaFilter ports("mlx5_0:1,mlx5_1");
  EXPECT_TRUE(ports.allows("mlx5_0", 1));
  EXPECT_FALSE(ports.allows("mlx5_0", 2));
  EXPECT_TRUE(ports.allows("mlx5_1", 2));
  EXPECT_FALSE(ports.allows("mlx5_2", 1));
  HcaFilter exact("=mlx5_1");
  EXPECT_TRUE(exact.allows("mlx5_1", 1));
  EXPECT_FALSE(exact.allows("mlx5_10", 1));
  HcaFilter exclude("^mlx5_1:1");
  EXPECT_FALSE(exclude.allows("mlx5_1", 1));
  EXPECT_TRUE(exclude.allows("mlx5_1", 2));
  EXPECT_TRUE(exclude.allows("mlx5_0", 1));
}

/// A sysfs tree with one HCA on NUMA node `node` (-1: none) whose CPUs are `cpulist`.
std::string fakeSysfs(const std::string& node, const std::string& cpulist) {
  char pattern[] = "/tmp/braid-sysfs-XXXXXX";
  const std::string root = mkdtemp(pattern);
  const std::string device = root + "/class/infiniband/mlx5_0/device";
  const std::string nodeDir = root + "/devices/system/node/node1";
  EXPECT_EQ(system(("mkdir -p " + device + " " + nodeDir).c_str()), 0);
  std::ofstream(device + "/numa_node") << node << "\n";
  std::ofstream(nodeDir + "/cpulist") << cpulist << "\n";
  return root;
}

TEST(NearCpusTest, TheNodesCpusThatTheProcessMayUse) {
  const std::string root = fakeSysfs("1", "4-7,12");
  EXPECT_EQ(cpusNearDevice(root, "mlx5_0", {0, 1, 4, 5, 6, 7, 12, 13}),
            (std::vector<int>{4, 5, 6, 7, 12}));
  EXPECT_EQ(cpusNearDevice(root, "mlx5_0", {5, 12}), (std::vector<int>{5, 12}));
  EXPECT_TRUE(cpusNearDevice(root, "mlx5_0", {0, 1}).empty());  // none allowed: stay put
  EXPECT_TRUE(cpusNearDevice(root, "mlx5_9", {4}).empty());     // no such device
  const std::string none = fakeSysfs("-1", "0-3");
  EXPECT_TRUE(cpusNearDevice(none, "mlx5_0", {0, 1, 2, 3}).empty());  // no NUMA node
  EXPECT_EQ(system(("rm -rf " + root + " " + none).c_str()), 0);
}

GidEntry entry(const char* text, GidType type) {
  GidEntry e{};
  EXPECT_EQ(inet_pton(AF_INET6, text, e.gid.raw), 1) << text;
  e.type = type;
  return e;
}

TEST(ChooseGidTest, PrefersTheVersionAndFamilyAsked) {
  const std::vector<GidEntry> table = {
      entry("fe80::1", GidType::kRoceV1),
      entry("fe80::1", GidType::kRoceV2),
      entry("::", GidType::kRoceV2),
      entry("fd00::5", GidType::kRoceV2),
      entry("::ffff:10.0.0.5", GidType::kRoceV1),
      entry("::ffff:10.0.0.5", GidType::kRoceV2),
  };
  EXPECT_EQ(chooseGid(table, 2, AF_INET), 5);
  EXPECT_EQ(chooseGid(table, 2, AF_INET6), 3);
  EXPECT_EQ(chooseGid(table, 1, AF_INET), 4);
  // No entry of the family: the first of the version (not the zero GID).
  EXPECT_EQ(chooseGid({table[0], table[1], table[2], table[3]}, 2, AF_INET), 1);
  EXPECT_EQ(chooseGid({table[0]}, 2, AF_INET), -1);
}

using braid::testing::within;

net::Greeting greeting(int channel) { return net::Greeting::of(0x5678, 0, 1, channel, 0); }

/// How many queue pairs a FIFO has, and whether each slot is split over them.
struct QpLayout {
  int qps;
  bool split;
};

/// Two "hosts" in one process: each its own verbs transport over the emulated HCA.
class IbFifoTest : public ::testing::TestWithParam<QpLayout> {
 protected:
  void SetUp() override {
    // Two emulated devices: every FIFO's queue pairs on one of them.
    setenv("BRAID_IB_EMULATE", "2", 1);
    IbSettings settings;
    settings.emulate = 2;
    settings.qpsPerConnection = GetParam().qps;
    settings.splitDataOnQps = GetParam().split;
    std::string why;
    auto a = IbNetwork::open(settings, 0, &why);
    auto b = IbNetwork::open(settings, 1, &why);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_NE(a.value(), nullptr) << why;
    senderHost_ = std::move(a).value();
    receiverHost_ = std::move(b).value();
    auto r = net::SocketRendezvous::create(braid::testing::loopbackAddress());
    ASSERT_TRUE(r.ok()) << r.status().message();
    rendezvous_ = std::move(r).value();
  }

  std::unique_ptr<RecvEnd> openRecv(int channel, int64_t timeoutMs = 10000,
                                    const std::string& nic = "") {
    net::SocketRendezvous* r = rendezvous_.get();
    const net::Greeting g = greeting(channel);
    auto end = openIbRecvEnd(
        *receiverHost_, [r, g] { return r->tryAccept(g); }, kSlotBytes, 0, timeoutMs, nic);
    EXPECT_TRUE(end.ok()) << end.status().message();
    return end.ok() ? std::move(end).value() : nullptr;
  }
  std::unique_ptr<SendEnd> openSend(int channel, int64_t timeoutMs = 10000,
                                    const std::string& nic = "") {
    auto socket =
        rendezvous_->connect(rendezvous_->address(), greeting(channel), Deadline::afterMs(5000));
    EXPECT_TRUE(socket.ok()) << socket.status().message();
    if (!socket.ok()) return nullptr;
    auto end =
        openIbSendEnd(*senderHost_, std::move(socket).value(), kSlotBytes, 1, timeoutMs, nic);
    EXPECT_TRUE(end.ok()) << end.status().message();
    return end.ok() ? std::move(end).value() : nullptr;
  }

  std::unique_ptr<IbNetwork> senderHost_;
  std::unique_ptr<IbNetwork> receiverHost_;
  std::unique_ptr<net::SocketRendezvous> rendezvous_;  // last: goes first
};

TEST_P(IbFifoTest, MessagesOfEverySizeArriveWholeAndInOrder) {
  auto recv = openRecv(0);
  auto send = openSend(0);
  ASSERT_TRUE(recv && send);
  braid::testing::expectMessagesOfEverySizeInOrder(*send, *recv, kSlotBytes);
}

TEST_P(IbFifoTest, AReceiverThatDoesNotReadHoldsTheSenderAtBothFifosSlots) {
  auto recv = openRecv(0);
  auto send = openSend(0);
  ASSERT_TRUE(recv && send);
  // The receiver's FIFO fills (its credits stop the sender's writes), then the sender's own:
  // exactly 2 * kFifoSlots slots, none lost.
  const int sent = braid::testing::fillUntilHeldBack(*send, kSlotBytes, 500);
  EXPECT_EQ(sent, 2 * kFifoSlots);
  braid::testing::expectEverySlotHeldBack(*recv, kSlotBytes, sent);
}

TEST_P(IbFifoTest, SeveralFifosBetweenTheSameHostsKeepTheirOwnBytes) {
  std::unique_ptr<RecvEnd> recv[3];
  std::unique_ptr<SendEnd> send[3];
  for (int c : {2, 0, 1}) recv[c] = openRecv(c);
  for (int c : {1, 2, 0}) send[c] = openSend(c);
  for (int round = 0; round < 50; ++round) {
    for (int c = 0; c < 3; ++c) {
      auto slot = send[c]->waitSlot(within(5000));
      ASSERT_TRUE(slot.ok());
      const int value = c * 1000 + round;
      std::memcpy(slot.value(), &value, sizeof(value));
      send[c]->post(sizeof(value));
    }
    for (int c : {2, 1, 0}) {
      size_t n = 0;
      auto slot = recv[c]->waitSlot(within(5000), &n);
      ASSERT_TRUE(slot.ok()) << slot.status().message();
      int value = -1;
      std::memcpy(&value, slot.value(), sizeof(value));
      ASSERT_EQ(value, c * 1000 + round);
      recv[c]->release();
    }
  }
}

TEST_P(IbFifoTest, ASenderWhoseReceiverNeverComesFailsAtItsDeadlineAndGoesAway) {
  auto send = openSend(0, /*timeoutMs=*/300);
  ASSERT_TRUE(send);
  for (int i = 0; i < 2; ++i) {
    auto slot = send->waitSlot(within(1000));
    ASSERT_TRUE(slot.ok());
    send->post(64);
  }
  const auto start = std::chrono::steady_clock::now();
  send.reset();  // the handshake failed at 300 ms: nothing to drain
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_P(IbFifoTest, EndsGoAwayIdleOrWhileTheirPeerIsGone) {
  {
    auto recv = openRecv(0);
    auto send = openSend(0);
  }
  auto recv = openRecv(1);
  auto send = openSend(1);
  ASSERT_TRUE(recv && send);
  auto slot = send->waitSlot(within(1000));
  ASSERT_TRUE(slot.ok());
  send->post(16);
  size_t n = 0;
  ASSERT_TRUE(recv->waitSlot(within(5000), &n).ok());
  recv->release();
  recv.reset();  // the receiving side is gone, its memory deregistered
  send.reset();  // and the sender still goes away
}

// NCCL_IB_QPS_PER_CONNECTION=4: a FIFO's four queue pairs all on its own NIC (here emu_1, the
// one planned for it), none on the other; each pair carries data: slots round-robin over them,
// or (NCCL_IB_SPLIT_DATA_ON_QPS=1) every slot in four parts, one per pair. Counted by the
// emulated HCA per device and per queue pair.
TEST_P(IbFifoTest, OneNicCarriesAllQueuePairsOfAConnection) {
  const QpLayout layout = GetParam();
  auto before = emulated::Hca::acquire(0);
  ASSERT_TRUE(before.ok());
  const uint64_t otherBytes = before.value()->transmitted();
  const int otherQps = static_cast<int>(before.value()->liveQpTraffic().size());
  auto recv = openRecv(0, 10000, "emu_1:1");
  auto send = openSend(0, 10000, "emu_1:1");
  ASSERT_TRUE(recv && send);
  constexpr int kMessages = 24;
  for (int m = 0; m < kMessages; ++m) {
    auto slot = send->waitSlot(within(5000));
    ASSERT_TRUE(slot.ok());
    std::memset(slot.value(), m, kSlotBytes);
    send->post(kSlotBytes);
    size_t n = 0;
    auto got = recv->waitSlot(within(5000), &n);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(n, kSlotBytes);
    const auto* bytes = static_cast<const unsigned char*>(got.value());
    ASSERT_EQ(bytes[0], m);
    ASSERT_EQ(bytes[kSlotBytes - 1], m);
    recv->release();
  }
  auto nic = emulated::Hca::acquire(1);
  ASSERT_TRUE(nic.ok());
  // The sender's pairs carry the data; the receiver's (on the same device, one process) carry
  // its credits on pair 0 only, a few bytes each.
  int carrying = 0;
  const std::vector<emulated::Hca::QpTraffic> live = nic.value()->liveQpTraffic();
  EXPECT_EQ(static_cast<int>(live.size()), 2 * layout.qps);  // both ends' pairs
  for (const auto& qp : live) {
    if (qp.transmitted >= kSlotBytes / static_cast<uint64_t>(layout.qps)) ++carrying;
  }
  EXPECT_EQ(carrying, layout.qps) << "every pair of the connection carries its share";
  // Nothing of this FIFO on the other NIC.
  EXPECT_EQ(static_cast<int>(before.value()->liveQpTraffic().size()), otherQps);
  EXPECT_EQ(before.value()->transmitted(), otherBytes);
}

// The two ends of a FIFO must agree on splitting: a receiver that splits and a sender that does
// not (BRAID_IB_SPLIT_DATA_ON_QPS set on one host only) fail the handshake, naming the variable.
TEST(IbSplitTest, EndsThatDisagreeOnSplittingFailTheirHandshakeNamingTheVariable) {
  setenv("BRAID_IB_EMULATE", "1", 1);
  IbSettings whole;
  whole.emulate = 1;
  whole.qpsPerConnection = 2;
  IbSettings split = whole;
  split.splitDataOnQps = true;
  std::string why;
  auto sender = IbNetwork::open(whole, 0, &why);
  auto receiver = IbNetwork::open(split, 1, &why);
  ASSERT_TRUE(sender.ok() && receiver.ok() && sender.value() && receiver.value()) << why;
  std::string failure;
  std::mutex mu;
  receiver.value()->onFailure([&](int, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    failure = what;
  });
  auto r = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(r.ok());
  net::SocketRendezvous* rendezvous = r.value().get();
  const net::Greeting g = greeting(0);
  auto recv = openIbRecvEnd(
      *receiver.value(), [rendezvous, g] { return rendezvous->tryAccept(g); }, kSlotBytes, 0, 5000);
  ASSERT_TRUE(recv.ok()) << recv.status().message();
  auto socket = rendezvous->connect(rendezvous->address(), g, Deadline::afterMs(5000));
  ASSERT_TRUE(socket.ok());
  auto send = openIbSendEnd(*sender.value(), std::move(socket).value(), kSlotBytes, 1, 5000);
  ASSERT_TRUE(send.ok()) << send.status().message();
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_NE(failure.find("BRAID_IB_SPLIT_DATA_ON_QPS must agree"), std::string::npos) << failure;
}

TEST(IbSplitTest, SlotsSplitOverThePairsInAlignedParts) {
  EXPECT_EQ(slotPart(1000, 0, 4).offset, 0u);
  EXPECT_EQ(slotPart(1000, 0, 4).bytes, 256u);  // 250 rounded up to 128
  EXPECT_EQ(slotPart(1000, 3, 4).offset, 768u);
  EXPECT_EQ(slotPart(1000, 3, 4).bytes, 232u);
  EXPECT_EQ(slotPart(100, 1, 4).bytes, 0u);  // one part of 128 holds it all
  EXPECT_EQ(slotPart(0, 0, 2).bytes, 0u);
  uint32_t total = 0;
  for (int p = 0; p < 3; ++p) total += slotPart(4097, p, 3).bytes;
  EXPECT_EQ(total, 4097u);
}

INSTANTIATE_TEST_SUITE_P(QueuePairs, IbFifoTest,
                         ::testing::Values(QpLayout{1, false}, QpLayout{3, false},
                                           QpLayout{4, false}, QpLayout{4, true}),
                         [](const auto& info) {
                           return std::to_string(info.param.qps) + "qps" +
                                  (info.param.split ? "Split" : "");
                         });

}  // namespace
}  // namespace braid::transport::ib
