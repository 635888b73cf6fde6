// The socket transport's FIFO (transport/net/socket/socket_fifo.h) and rendezvous, within one
// process over loopback: messages of every size arrive whole and in order, a receiver that falls
// behind holds the sender back rather than losing slots, greetings pair each FIFO with its own
// connection whatever order they arrive in, ends go away cleanly whether idle or waiting, and
// slots lent from and landing in the caller's memory.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "base/socket_io.h"
#include "support/network_fifo_checks.h"
#include "transport/net/socket/socket_fifo.h"
#include "transport/net/socket_rendezvous.h"

namespace braid::transport::socket {
namespace {

constexpr size_t kSlotBytes = 4096;

using braid::testing::within;

sockaddr_storage loopback() { return braid::testing::loopbackAddress(); }

net::Greeting greeting(int sender, int receiver, int channel) {
  net::Greeting g;
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

Pipe connectPipe(net::SocketRendezvous& rendezvous, int channel = 0,
                 size_t slotBytes = kSlotBytes) {
  Pipe p;
  auto out =
      rendezvous.connect(rendezvous.address(), greeting(0, 1, channel), Deadline::afterMs(5000));
  EXPECT_TRUE(out.ok()) << out.status().message();
  auto in = rendezvous.accept(greeting(0, 1, channel), Deadline::afterMs(5000));
  EXPECT_TRUE(in.ok()) << in.status().message();
  auto send = openSocketSendEnd(std::move(out).value(), slotBytes, 1);
  auto recv = openSocketRecvEnd(std::move(in).value(), slotBytes, 0);
  EXPECT_TRUE(send.ok() && recv.ok());
  p.send = std::move(send).value();
  p.recv = std::move(recv).value();
  return p;
}

TEST(SocketFifoTest, MessagesOfEverySizeArriveWholeAndInOrder) {
  auto rendezvous = net::SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status().message();
  Pipe p = connectPipe(*rendezvous.value());
  // Many times the FIFO's slots: the receiver paces the sender.
  braid::testing::expectMessagesOfEverySizeInOrder(*p.send, *p.recv, kSlotBytes);
}

TEST(SocketFifoTest, ASlowReceiverHoldsTheSenderBack) {
  auto rendezvous = net::SocketRendezvous::create(loopback());
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
  auto made = net::SocketRendezvous::create(loopback());
  ASSERT_TRUE(made.ok());
  net::SocketRendezvous& r = *made.value();
  std::vector<braid::sockets::Socket> out;
  for (int channel : {2, 0, 1}) {
    auto s = r.connect(r.address(), greeting(0, 1, channel), Deadline::afterMs(5000));
    ASSERT_TRUE(s.ok());
    out.push_back(std::move(s).value());
  }
  // Accepted in another order than connected; each connection carries its own channel's bytes.
  const int connectOrder[] = {2, 0, 1};
  for (int k = 0; k < 3; ++k) {
    const char mark = static_cast<char>('a' + connectOrder[k]);
    ASSERT_TRUE(braid::sockets::sendAll(out[k], &mark, 1, Deadline::afterMs(1000)).ok());
  }
  for (int channel : {0, 1, 2}) {
    auto in = r.accept(greeting(0, 1, channel), Deadline::afterMs(5000));
    ASSERT_TRUE(in.ok()) << in.status().message();
    char mark = 0;
    ASSERT_TRUE(braid::sockets::recvAll(in.value(), &mark, 1, Deadline::afterMs(1000)).ok());
    EXPECT_EQ(mark, 'a' + channel);
  }
  auto missing = r.accept(greeting(0, 1, 7), Deadline::afterMs(100));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("did not connect"), std::string::npos);
}

TEST(SocketFifoTest, EndsGoAwayIdleOrWhileTheirPeerIsGone) {
  auto rendezvous = net::SocketRendezvous::create(loopback());
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

// Lending and offers (transport/connection.h): a send end that sends slots from the caller's
// memory and gives it back once the kernel has the bytes, a receive end that reads messages
// straight into memory it was offered, and both cut off from that memory at once when a call
// gives up (abandonLent, withdrawOffer) however stuck their connection is.

constexpr size_t kLendSlotBytes = 64 << 10;

/// A pipe of slots of kLendSlotBytes.
class SocketLendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = net::SocketRendezvous::create(loopback());
    ASSERT_TRUE(made.ok()) << made.status().message();
    rendezvous_ = std::move(made).value();
    p = connectPipe(*rendezvous_, 0, kLendSlotBytes);
  }
  std::unique_ptr<net::SocketRendezvous> rendezvous_;
  Pipe p;
};

std::vector<unsigned char> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

TEST_F(SocketLendTest, LentAndCopiedSlotsArriveWholeAndInOrder) {
  ASSERT_TRUE(p.send->lends());
  // Random sizes up to a slot, every third message copied into its slot, the rest lent from
  // one buffer that is given back before the test writes over it.
  constexpr int kMessages = 600;
  std::mt19937 rng(7);
  std::vector<size_t> sizes(kMessages);
  for (auto& n : sizes) n = rng() % (kLendSlotBytes + 1);
  const std::vector<unsigned char> data = randomBytes(kMessages * kLendSlotBytes, 11);
  std::thread sender([&] {
    uint32_t lastLend = 0;
    bool lent = false;
    for (int i = 0; i < kMessages; ++i) {
      auto slot = p.send->waitSlot(within(10000));
      ASSERT_TRUE(slot.ok()) << slot.status().message();
      const unsigned char* from = data.data() + i * kLendSlotBytes;
      if (i % 3 == 0) {
        memcpy(slot.value(), from, sizes[i]);
        p.send->post(sizes[i]);
      } else {
        const uint32_t number = p.send->postLent(from, sizes[i]);
        if (lent) EXPECT_EQ(number, lastLend + 1);
        lastLend = number;
        lent = true;
      }
    }
    ASSERT_TRUE(p.send->waitReturned(lastLend, within(10000)).ok());
  });
  for (int i = 0; i < kMessages; ++i) {
    size_t n = 0;
    auto slot = p.recv->waitSlot(within(10000), &n);
    ASSERT_TRUE(slot.ok()) << "message " << i << ": " << slot.status().message();
    ASSERT_EQ(n, sizes[i]) << "message " << i;
    ASSERT_EQ(memcmp(slot.value(), data.data() + i * kLendSlotBytes, n), 0) << "message " << i;
    p.recv->release();
  }
  sender.join();
}

TEST_F(SocketLendTest, OfferedMessagesLandInPlaceAndOthersInSlots) {
  ASSERT_TRUE(p.recv->takesOffers());
  // 5 slices of 60000 bytes and a last one of 1234, offered before anything was sent; then a
  // message of its own size outside the offer, and one whose size the offer does not expect.
  constexpr size_t kSlice = 60000;
  const size_t total = 5 * kSlice + 1234;
  std::vector<unsigned char> into(total, 0);
  p.recv->offer(into.data(), kSlice, total);
  const std::vector<unsigned char> data = randomBytes(total + 2 * kLendSlotBytes, 3);
  std::vector<size_t> sizes = {kSlice, kSlice, kSlice, kSlice, kSlice, 1234, 777, kSlice};
  std::thread sender([&] {
    size_t at = 0;
    for (size_t n : sizes) {
      auto slot = p.send->waitSlot(within(10000));
      ASSERT_TRUE(slot.ok());
      memcpy(slot.value(), data.data() + at, n);
      p.send->post(n);
      at += n;
    }
  });
  size_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    size_t n = 0;
    auto slot = p.recv->waitSlot(within(10000), &n);
    ASSERT_TRUE(slot.ok()) << slot.status().message();
    ASSERT_EQ(n, sizes[i]);
    if (i < 6) {
      EXPECT_EQ(slot.value(), into.data() + at) << "message " << i << " landed in a slot";
    } else {
      EXPECT_FALSE(slot.value() >= into.data() && slot.value() < into.data() + total);
    }
    ASSERT_EQ(memcmp(slot.value(), data.data() + at, n), 0) << "message " << i;
    p.recv->release();
    if (i == 5) p.recv->withdrawOffer();
    at += n;
  }
  sender.join();
  EXPECT_EQ(memcmp(into.data(), data.data(), total), 0);
}

TEST_F(SocketLendTest, AnAbandonedLendIsNeverReadAgain) {
  // Nobody receives: the connection fills, and the proxy sits in a send of a lent slot.
  auto buffer = std::make_unique<std::vector<unsigned char>>(randomBytes(kLendSlotBytes, 5));
  uint32_t last = 0;
  for (int i = 0; i < 4000; ++i) {
    auto slot = p.send->waitSlot(within(300));
    if (!slot.ok()) break;  // held back: everything it can take is out
    last = p.send->postLent(buffer->data(), kLendSlotBytes);
  }
  EXPECT_FALSE(p.send->waitReturned(last, within(100)).ok());
  // Cut off, the end may lose its connection but reads nothing more: the memory can go, and
  // the receiver drains what had left (ASan would see the proxy send from freed memory).
  p.send->abandonLent();
  buffer.reset();
  size_t n = 0;
  while (p.recv->waitSlot(within(500), &n).ok()) p.recv->release();
}

TEST_F(SocketLendTest, AWithdrawnOfferIsNeverWrittenAgain) {
  // The offer covers 8 slices; only 3 come and are taken before the call gives up, and the
  // other 5 come after.
  constexpr size_t kSlice = kLendSlotBytes;
  auto into = std::make_unique<std::vector<unsigned char>>(8 * kSlice, 0);
  p.recv->offer(into->data(), kSlice, into->size());
  auto sendSlices = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      auto slot = p.send->waitSlot(within(2000));
      ASSERT_TRUE(slot.ok());
      memset(slot.value(), i + 1, kSlice);
      p.send->post(kSlice);
    }
  };
  sendSlices(0, 3);
  for (int i = 0; i < 3; ++i) {
    size_t n = 0;
    auto slot = p.recv->waitSlot(within(10000), &n);
    ASSERT_TRUE(slot.ok());
    EXPECT_EQ(slot.value(), into->data() + i * kSlice);
    EXPECT_EQ(static_cast<const unsigned char*>(slot.value())[n - 1], i + 1);
    p.recv->release();
  }
  p.recv->withdrawOffer();
  into.reset();
  // The rest reaches nobody: the end stopped reading (ASan would see the proxy write into
  // freed memory before it could post the slice).
  sendSlices(3, 8);
  size_t n = 0;
  EXPECT_FALSE(p.recv->waitSlot(within(500), &n).ok());
}

/// A FIFO striped over threads x sockets per thread connections (socket_stripes.h).
Pipe connectStriped(net::SocketRendezvous& rendezvous, StripeLayout layout, int channel = 0) {
  Pipe p;
  const int n = layout.sockets();
  net::SocketRendezvous* r = &rendezvous;
  const net::Greeting g = greeting(0, 1, channel);
  auto recv = openStripedSocketRecvEnd(
      [r, g, n](int index, const std::atomic<bool>& stop) {
        return r->accept(g.stripeOf(index, n), Deadline::afterMs(5000), &stop);
      },
      kSlotBytes, 0, layout);
  std::vector<braid::sockets::Socket> sockets;
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
  auto rendezvous = net::SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  Pipe p = connectStriped(*rendezvous.value(), layout());
  braid::testing::expectMessagesOfEverySizeInOrder(*p.send, *p.recv, kSlotBytes);
}

TEST_P(StripedSocketFifoTest, ASlowReceiverHoldsTheSenderBack) {
  auto rendezvous = net::SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  Pipe p = connectStriped(*rendezvous.value(), layout());
  const int sent = braid::testing::fillUntilHeldBack(*p.send, kSlotBytes, 300);
  EXPECT_GT(sent, 2 * kFifoSlots);
  EXPECT_LT(sent, 100000);
  braid::testing::expectEverySlotHeldBack(*p.recv, kSlotBytes, sent);
}

TEST_P(StripedSocketFifoTest, EndsGoAwayIdleOrWhileTheirPeerIsGone) {
  auto rendezvous = net::SocketRendezvous::create(loopback());
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
}  // namespace braid::transport::socket
