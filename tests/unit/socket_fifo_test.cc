// The socket transport's FIFO (transport/net/socket_fifo.h) and rendezvous, within one process
// over loopback: messages of every size arrive whole and in order, a receiver that falls behind
// holds the sender back rather than losing slots, greetings pair each FIFO with its own
// connection whatever order they arrive in, and ends go away cleanly whether idle or waiting.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "support/network_fifo_checks.h"
#include "transport/net/socket_fifo.h"
#include "transport/net/socket_rendezvous.h"

namespace braid::transport::net {
namespace {

constexpr size_t kSlotBytes = 4096;

using braid::testing::within;

sockaddr_storage loopback() { return braid::testing::loopbackAddress(); }

Greeting greeting(int sender, int receiver, int channel) {
  Greeting g;
  g.magic = 0x1234;
  g.sender = sender;
  g.receiver = receiver;
  g.channel = channel;
  g.protocol = 0;
  return g;
}

/// A connected pair of ends: the send end's slots arrive at the receive end.
struct Pipe {
  std::unique_ptr<SendEnd> send;
  std::unique_ptr<RecvEnd> recv;
};

Pipe connectPipe(SocketRendezvous& rendezvous, int channel = 0) {
  Pipe p;
  auto out =
      rendezvous.connect(rendezvous.address(), greeting(0, 1, channel), Deadline::afterMs(5000));
  EXPECT_TRUE(out.ok()) << out.status().message();
  auto in = rendezvous.accept(greeting(0, 1, channel), Deadline::afterMs(5000));
  EXPECT_TRUE(in.ok()) << in.status().message();
  auto send = openSocketSendEnd(std::move(out).value(), kSlotBytes, 1);
  auto recv = openSocketRecvEnd(std::move(in).value(), kSlotBytes, 0);
  EXPECT_TRUE(send.ok() && recv.ok());
  p.send = std::move(send).value();
  p.recv = std::move(recv).value();
  return p;
}

TEST(SocketFifoTest, MessagesOfEverySizeArriveWholeAndInOrder) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status().message();
  Pipe p = connectPipe(*rendezvous.value());
  // Many times the FIFO's slots: the receiver paces the sender.
  braid::testing::expectMessagesOfEverySizeInOrder(*p.send, *p.recv, kSlotBytes);
}

TEST(SocketFifoTest, ASlowReceiverHoldsTheSenderBack) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  Pipe p = connectPipe(*rendezvous.value());
  // With nobody receiving, the sender fills its FIFO, the socket and the receiver's FIFO, then
  // waits: never more slots than that, and no slot lost.
  const int sent = braid::testing::fillUntilHeldBack(*p.send, kSlotBytes, 300);
  EXPECT_GT(sent, 2 * kFifoSlots);
  EXPECT_LT(sent, 100000);
  braid::testing::expectEverySlotHeldBack(*p.recv, kSlotBytes, sent);
}

TEST(SocketFifoTest, GreetingsPairFifosWithTheirConnectionsInAnyOrder) {
  auto made = SocketRendezvous::create(loopback());
  ASSERT_TRUE(made.ok());
  SocketRendezvous& r = *made.value();
  std::vector<braid::net::Socket> out;
  for (int channel : {2, 0, 1}) {
    auto s = r.connect(r.address(), greeting(0, 1, channel), Deadline::afterMs(5000));
    ASSERT_TRUE(s.ok());
    out.push_back(std::move(s).value());
  }
  // Accepted in another order than connected; each connection carries its own channel's bytes.
  const int connectOrder[] = {2, 0, 1};
  for (int k = 0; k < 3; ++k) {
    const char mark = static_cast<char>('a' + connectOrder[k]);
    ASSERT_TRUE(braid::net::sendAll(out[k], &mark, 1, Deadline::afterMs(1000)).ok());
  }
  for (int channel : {0, 1, 2}) {
    auto in = r.accept(greeting(0, 1, channel), Deadline::afterMs(5000));
    ASSERT_TRUE(in.ok()) << in.status().message();
    char mark = 0;
    ASSERT_TRUE(braid::net::recvAll(in.value(), &mark, 1, Deadline::afterMs(1000)).ok());
    EXPECT_EQ(mark, 'a' + channel);
  }
  auto missing = r.accept(greeting(0, 1, 7), Deadline::afterMs(100));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("did not connect"), std::string::npos);
}

TEST(SocketFifoTest, EndsGoAwayIdleOrWhileTheirPeerIsGone) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  { Pipe idle = connectPipe(*rendezvous.value(), 0); }
  Pipe p = connectPipe(*rendezvous.value(), 1);
  p.recv.reset();  // the receiving side is gone: the sender's proxy sees the socket close
  for (int i = 0; i < 4; ++i) {
    auto slot = p.send->waitSlot(within(1000));
    ASSERT_TRUE(slot.ok());
    p.send->post(16);
  }
  p.send.reset();  // and still goes away
}

/// A FIFO striped over threads x sockets per thread connections (socket_stripes.h).
Pipe connectStriped(SocketRendezvous& rendezvous, StripeLayout layout, int channel = 0) {
  Pipe p;
  const int n = layout.sockets();
  SocketRendezvous* r = &rendezvous;
  const Greeting g = greeting(0, 1, channel);
  auto recv = openStripedSocketRecvEnd(
      [r, g, n](int index, const std::atomic<bool>& stop) {
        return r->accept(g.stripeOf(index, n), Deadline::afterMs(5000), &stop);
      },
      kSlotBytes, 0, layout);
  std::vector<braid::net::Socket> sockets;
  // Connected in reverse: the receiver files each by its stripe number.
  for (int i = n - 1; i >= 0; --i) {
    auto out = rendezvous.connect(rendezvous.address(), g.stripeOf(i, n), Deadline::afterMs(5000));
    EXPECT_TRUE(out.ok()) << out.status().message();
    sockets.insert(sockets.begin(), std::move(out).value());
  }
  auto send = openStripedSocketSendEnd(std::move(sockets), kSlotBytes, 1, layout);
  EXPECT_TRUE(send.ok() && recv.ok());
  p.send = std::move(send).value();
  p.recv = std::move(recv).value();
  return p;
}

class StripedSocketFifoTest : public ::testing::TestWithParam<std::pair<int, int>> {
 protected:
  StripeLayout layout() const {
    StripeLayout l;
    l.threads = GetParam().first;
    l.socketsPerThread = GetParam().second;
    return l;
  }
};

TEST_P(StripedSocketFifoTest, MessagesOfEverySizeArriveWholeAndInOrder) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  Pipe p = connectStriped(*rendezvous.value(), layout());
  braid::testing::expectMessagesOfEverySizeInOrder(*p.send, *p.recv, kSlotBytes);
}

TEST_P(StripedSocketFifoTest, ASlowReceiverHoldsTheSenderBack) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  Pipe p = connectStriped(*rendezvous.value(), layout());
  const int sent = braid::testing::fillUntilHeldBack(*p.send, kSlotBytes, 300);
  EXPECT_GT(sent, 2 * kFifoSlots);
  EXPECT_LT(sent, 100000);
  braid::testing::expectEverySlotHeldBack(*p.recv, kSlotBytes, sent);
}

TEST_P(StripedSocketFifoTest, EndsGoAwayIdleOrWhileTheirPeerIsGone) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  { Pipe idle = connectStriped(*rendezvous.value(), layout(), 0); }
  Pipe p = connectStriped(*rendezvous.value(), layout(), 1);
  p.recv.reset();
  for (int i = 0; i < 4; ++i) {
    auto slot = p.send->waitSlot(within(1000));
    ASSERT_TRUE(slot.ok());
    p.send->post(16);
  }
  p.send.reset();
}

INSTANTIATE_TEST_SUITE_P(Layouts, StripedSocketFifoTest,
                         ::testing::Values(std::make_pair(1, 2), std::make_pair(2, 1),
                                           std::make_pair(2, 3)),
                         [](const auto& info) {
                           return std::to_string(info.param.first) + "threads" +
                                  std::to_string(info.param.second) + "socks";
                         });

}  // namespace
}  // namespace braid::transport::net
