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

#include "transport/net/socket_fifo.h"
#include "transport/net/socket_rendezvous.h"

namespace braid::transport::net {
namespace {

constexpr size_t kSlotBytes = 4096;

sockaddr_storage loopback() {
  sockaddr_storage a{};
  auto* in = reinterpret_cast<sockaddr_in*>(&a);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

WaitContext within(int64_t ms) {
  WaitContext ctx;
  ctx.deadline = Deadline::afterMs(ms);
  return ctx;
}

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

/// Message i: (i * 37) % (slot + 1) bytes, byte j = i + j.
size_t sizeOf(int i) { return static_cast<size_t>(i * 37) % (kSlotBytes + 1); }

TEST(SocketFifoTest, MessagesOfEverySizeArriveWholeAndInOrder) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status().message();
  Pipe p = connectPipe(*rendezvous.value());
  constexpr int kMessages = 2000;  // many times the FIFO's slots: the receiver paces the sender
  std::thread sender([&] {
    for (int i = 0; i < kMessages; ++i) {
      auto slot = p.send->waitSlot(within(10000));
      ASSERT_TRUE(slot.ok()) << slot.status().message();
      auto* bytes = static_cast<unsigned char*>(slot.value());
      for (size_t j = 0; j < sizeOf(i); ++j) bytes[j] = static_cast<unsigned char>(i + j);
      p.send->post(sizeOf(i));
    }
  });
  for (int i = 0; i < kMessages; ++i) {
    size_t n = 0;
    auto slot = p.recv->waitSlot(within(10000), &n);
    ASSERT_TRUE(slot.ok()) << "message " << i << ": " << slot.status().message();
    ASSERT_EQ(n, sizeOf(i)) << "message " << i;
    const auto* bytes = static_cast<const unsigned char*>(slot.value());
    for (size_t j = 0; j < n; ++j) {
      ASSERT_EQ(bytes[j], static_cast<unsigned char>(i + j)) << "message " << i << " byte " << j;
    }
    p.recv->release();
  }
  sender.join();
}

TEST(SocketFifoTest, ASlowReceiverHoldsTheSenderBack) {
  auto rendezvous = SocketRendezvous::create(loopback());
  ASSERT_TRUE(rendezvous.ok());
  Pipe p = connectPipe(*rendezvous.value());
  // With nobody receiving, the sender fills its FIFO, the socket and the receiver's FIFO, then
  // waits: never more slots than that, and no slot lost.
  int sent = 0;
  for (; sent < 100000; ++sent) {
    auto slot = p.send->waitSlot(within(300));
    if (!slot.ok()) break;
    std::memcpy(slot.value(), &sent, sizeof(sent));
    p.send->post(kSlotBytes);  // full slots, so the socket's buffers fill too
  }
  EXPECT_GT(sent, 2 * kFifoSlots);
  EXPECT_LT(sent, 100000);
  for (int i = 0; i < sent; ++i) {
    size_t n = 0;
    auto slot = p.recv->waitSlot(within(5000), &n);
    ASSERT_TRUE(slot.ok()) << "message " << i << " of " << sent;
    ASSERT_EQ(n, kSlotBytes);
    int value = -1;
    std::memcpy(&value, slot.value(), sizeof(value));
    ASSERT_EQ(value, i);
    p.recv->release();
  }
  size_t n = 0;
  EXPECT_EQ(p.recv->trySlot(&n), nullptr);
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

}  // namespace
}  // namespace braid::transport::net
