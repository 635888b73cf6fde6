// PXN relays (transport/net/ib/ib_relay.h, socket_rendezvous.h): how a sender's request reaches
// the relaying process and what the relay refuses; the split FIFO a relay with GPUDirect RDMA
// makes (cuda_ipc::GpuRecvEnd::createSplit), on the emulated GPU; a relay that cannot reach the
// receiver. The relay's data path runs end to end in e2e.netns_verbs.emulated_gpu.pxn.*
// (tests/e2e/perf_pxn.sh).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "base/socket.h"
#include "gpu/runtime.h"
#include "support/network_fifo_checks.h"
#include "transport/cuda_ipc/gpu_fifo.h"
#include "transport/net/ib/ib_network.h"
#include "transport/net/ib/ib_relay.h"
#include "transport/net/socket_rendezvous.h"

namespace braid {
namespace {

namespace net = transport::net;
namespace ib = transport::ib;

net::Greeting fifoGreeting(int sender, int receiver, int channel) {
  return net::Greeting::of(0x5158u, sender, receiver, channel, 0);
}

struct Connected {
  braid::sockets::Socket sender;  ///< the sender's side of the request
  net::Greeting filed;            ///< what the relay's rendezvous filed it as
  braid::sockets::Socket relay;   ///< the relay's side
};

Connected requestRelay(net::SocketRendezvous& r, const net::Greeting& fifo) {
  Connected c;
  auto s = r.connect(r.address(), fifo.relayRequest(), Deadline::afterMs(5000));
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (s.ok()) c.sender = std::move(s).value();
  auto taken = r.acceptRelayRequest(Deadline::afterMs(5000), nullptr);
  EXPECT_TRUE(taken.has_value());
  if (taken) {
    c.filed = taken->first;
    c.relay = std::move(taken->second);
  }
  return c;
}

TEST(IbRelayRequest, TheRelayTakesRequestsButNotTheFifosTheyName) {
  auto made = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(made.ok()) << made.status().message();
  net::SocketRendezvous& r = *made.value();
  const net::Greeting fifo = fifoGreeting(3, 9, -1);
  // The FIFO's own connection (the direct path's, to the receiver) is not a relay request.
  auto direct = r.connect(r.address(), fifo, Deadline::afterMs(5000));
  ASSERT_TRUE(direct.ok());
  Connected c = requestRelay(r, fifo);
  EXPECT_TRUE(c.filed.asksRelay());
  EXPECT_TRUE(c.filed.relayed() == fifo);
  EXPECT_FALSE(r.acceptRelayRequest(Deadline::afterMs(50), nullptr).has_value());
  EXPECT_TRUE(r.tryAccept(fifo).has_value());  // still filed for its receiver
}

TEST(IbRelayRequest, ARequestAndItsAnswerTravelWhole) {
  auto made = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(made.ok());
  Connected c = requestRelay(*made.value(), fifoGreeting(1, 12, -1));
  const Deadline deadline = Deadline::afterMs(5000);
  ASSERT_TRUE(
      ib::sendRelayRequest(c.sender, ib::makeRelayRequest(65536, "mlx5_4:1", "/braid-x"), deadline)
          .ok());
  auto request = ib::readRelayRequest(c.relay, deadline);
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request.value().slotBytes, 65536u);
  EXPECT_STREQ(request.value().nic, "mlx5_4:1");
  EXPECT_STREQ(request.value().fifoName, "/braid-x");
  ASSERT_TRUE(ib::sendRelayReply(c.relay, ib::RelayOutcome::kDeclined, "no memory", deadline).ok());
  auto reply = ib::readRelayReply(c.sender, deadline);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply.value().outcome, ib::RelayOutcome::kDeclined);
  EXPECT_STREQ(reply.value().why, "no memory");
}

TEST(IbRelayRequest, ARequestForNoFifoOrSlotsNoVerbsFifoCarriesIsRefused) {
  auto made = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(made.ok());
  const Deadline deadline = Deadline::afterMs(5000);
  for (const auto& [slot, name] : {std::pair<size_t, std::string>{0, "/braid-x"},
                                   {ib::kMaxIbSlotBytes + 1, "/braid-x"},
                                   {4096, ""}}) {
    Connected c = requestRelay(*made.value(), fifoGreeting(1, 12, -1));
    ASSERT_TRUE(
        ib::sendRelayRequest(c.sender, ib::makeRelayRequest(slot, "emu_0:1", name), deadline).ok());
    auto request = ib::readRelayRequest(c.relay, deadline);
    ASSERT_FALSE(request.ok()) << "slots of " << slot << " named '" << name << "'";
    EXPECT_NE(request.status().message().find("not a FIFO a relay can carry"), std::string::npos)
        << request.status().message();
  }
}

TEST(IbRelayRequest, ASenderThatHangsUpIsAnErrorNotARequest) {
  auto made = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(made.ok());
  Connected c = requestRelay(*made.value(), fifoGreeting(2, 10, -1));
  c.sender.close();
  auto request = ib::readRelayRequest(c.relay, Deadline::afterMs(5000));
  ASSERT_FALSE(request.ok());
  EXPECT_NE(request.status().message().find("PXN relay: reading a request"), std::string::npos)
      << request.status().message();
  // And a relay that hangs up is one the sender hears of.
  Connected d = requestRelay(*made.value(), fifoGreeting(2, 11, -1));
  d.relay.close();
  auto reply = ib::readRelayReply(d.sender, Deadline::afterMs(5000));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("the relay's answer"), std::string::npos);
}

TEST(IbRelaySplitFifo, CountersInPinnedHostMemorySlotsOnAPageOfDeviceMemoryMappedByTheSender) {
  std::unique_ptr<gpu::Runtime> gpu = gpu::makeEmulatedRuntime(1);
  ASSERT_TRUE(gpu->setDevice(0).ok());
  const std::string name = "/braid-relay-split-" + std::to_string(::getpid());
  size_t slotsBytes = 0;
  auto owned = transport::cuda_ipc::GpuRecvEnd::createSplit(*gpu, name, 5000, nullptr, &slotsBytes);
  ASSERT_TRUE(owned.ok()) << owned.status().message();
  const kernels::engine::FifoRef fifo = owned.value()->end().fifo;
  EXPECT_EQ(slotsBytes, kernels::engine::kFifoSlots * 8192u) << "slots of whole pages";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(fifo.slots) % 4096, 0u);
  Result<gpu::PointerInfo> counters = gpu->pointerInfo(fifo.counters);
  ASSERT_TRUE(counters.ok());
  EXPECT_EQ(counters.value().kind, gpu::MemoryKind::kPinnedHost) << "the proxy polls them";
  Result<gpu::PointerInfo> slots = gpu->pointerInfo(fifo.slots);
  ASSERT_TRUE(slots.ok());
  EXPECT_EQ(slots.value().kind, gpu::MemoryKind::kDevice) << "the NIC reads them";
  // A sender of another slot size is refused; the right one maps both memories.
  EXPECT_FALSE(transport::cuda_ipc::GpuSendEnd::tryOpen(*gpu, name, 4096, nullptr).ok());
  auto sender = transport::cuda_ipc::GpuSendEnd::tryOpen(*gpu, name, 5000, nullptr);
  ASSERT_TRUE(sender.ok()) << sender.status().message();
  ASSERT_NE(sender.value(), nullptr);
  EXPECT_EQ(sender.value()->placement(), transport::cuda_ipc::FifoPlacement::kDeviceMemory);
  const kernels::engine::FifoRef mapped = sender.value()->end().fifo;
  EXPECT_EQ(mapped.stride, fifo.stride);
  mapped.counters->tail = 3;  // what the sender posts, the owner's proxy sees
  EXPECT_EQ(fifo.counters->tail, 3u);
  EXPECT_EQ(gpu->pointerInfo(mapped.slots).value().kind, gpu::MemoryKind::kDevice);
}

/// A relay's surroundings: one emulated NIC and one emulated GPU.
struct RelayHost {
  RelayHost() {
    ib::IbSettings settings;
    settings.emulate = 1;
    std::string why;
    auto opened = ib::IbNetwork::open(settings, 0, &why);
    EXPECT_TRUE(opened.ok() && opened.value() != nullptr) << why;
    if (opened.ok()) network = std::move(opened).value();
    EXPECT_TRUE(gpu->setDevice(0).ok());
  }
  /// IbRelay::open of a FIFO of 4096-byte slots to rank 9, by `connect`, on `port`.
  Result<std::unique_ptr<ib::IbRelay>> open(const ib::IbRelay::ReceiverConnector& connect,
                                            const std::string& port, bool* reached) {
    return ib::IbRelay::open(*gpu, nullptr, "/braid-relay-" + std::to_string(::getpid()), 4096,
                             *network, connect, 9, 1000, port, ib::GdrChoice{}, reached);
  }
  std::unique_ptr<ib::IbNetwork> network;
  std::unique_ptr<gpu::Runtime> gpu = gpu::makeEmulatedRuntime(1);
};

TEST(IbRelayOpen, AReceiverThatCannotBeReachedFailsTheRelayBeforeItReachedIt) {
  RelayHost host;
  ASSERT_NE(host.network, nullptr);
  bool reached = true;
  auto relay = host.open(
      []() -> Result<braid::sockets::Socket> { return remoteError("rank 9 is not listening"); },
      host.network->portAt(0).name(), &reached);
  ASSERT_FALSE(relay.ok());
  EXPECT_FALSE(reached) << "the sender may still send directly";
  EXPECT_NE(relay.status().message().find("rank 9 is not listening"), std::string::npos);
}

TEST(IbRelayOpen, APortThisProcessDidNotOpenIsDeclinedBeforeTheReceiverIsAsked) {
  RelayHost host;
  ASSERT_NE(host.network, nullptr);
  int asked = 0;
  bool reached = true;
  auto relay = host.open(
      [&]() -> Result<braid::sockets::Socket> {
        ++asked;
        return remoteError("unexpected");
      },
      "mlx5_7:1", &reached);
  ASSERT_FALSE(relay.ok());
  EXPECT_FALSE(reached);
  EXPECT_EQ(asked, 0);
  EXPECT_NE(relay.status().message().find("no port mlx5_7:1"), std::string::npos)
      << relay.status().message();
}

}  // namespace
}  // namespace braid
