// Every connection base/socket.h makes or accepts, the bootstrap's and the transports' alike,
// notices a peer that went silent (Liveness: TCP_USER_TIMEOUT and keepalive probes), and can say
// where it ran once it is gone (connectionEnds, describe). And sendAllv's two parts arrive whole,
// and recvBulk's low-water mark neither loses bytes nor outlives it.
#include <gtest/gtest.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/socket.h"
#include "base/socket_address.h"
#include "base/socket_greeting.h"
#include "base/socket_io.h"
#include "support/network_fifo_checks.h"

namespace braid::sockets {
namespace {

int option(const Socket& socket, int level, int name) {
  int value = -1;
  socklen_t len = sizeof(value);
  EXPECT_EQ(getsockopt(socket.fd(), level, name, &value, &len), 0) << name;
  return value;
}

void expectLiveness(const Socket& socket, const char* side) {
  SCOPED_TRACE(side);
  EXPECT_EQ(option(socket, IPPROTO_TCP, TCP_USER_TIMEOUT), Liveness::kUserTimeoutMs);
  EXPECT_EQ(option(socket, SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(option(socket, IPPROTO_TCP, TCP_KEEPIDLE), Liveness::kKeepIdleS);
  EXPECT_EQ(option(socket, IPPROTO_TCP, TCP_KEEPINTVL), Liveness::kKeepIntervalS);
  EXPECT_EQ(option(socket, IPPROTO_TCP, TCP_KEEPCNT), Liveness::kKeepCount);
  EXPECT_EQ(option(socket, IPPROTO_TCP, TCP_NODELAY), 1);
}

/// A connection made with `connect` to a listener on loopback, greeted with one byte, and its
/// accepted side.
struct LoopbackPair {
  Socket out;
  Socket in;
};

template <typename Connect>
void connectOnLoopback(Connect connect, LoopbackPair* pair) {
  auto listener = listenOn(braid::testing::loopbackAddress(), /*reuseAddr=*/false);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  auto address = boundAddress(listener.value());
  ASSERT_TRUE(address.ok());
  Result<Socket> out = connect(address.value());
  ASSERT_TRUE(out.ok()) << out.status().message();
  pair->out = std::move(out).value();
  const char hello = 'h';
  ASSERT_TRUE(sendAll(pair->out, &hello, 1, Deadline::afterMs(5000)).ok());
  GreetingAcceptor acceptor(listener.value(), 1);
  std::vector<char> greeting;
  ASSERT_TRUE(acceptor.next(Deadline::afterMs(5000), &pair->in, &greeting).ok());
}

template <typename Connect>
void expectBothSidesLive(Connect connect) {
  LoopbackPair pair;
  ASSERT_NO_FATAL_FAILURE(connectOnLoopback(connect, &pair));
  expectLiveness(pair.out, "connecting side");
  expectLiveness(pair.in, "accepting side");
}

TEST(SocketLivenessTest, ARetriedConnectionAndItsAcceptedSideNoticeASilentPeer) {
  expectBothSidesLive(
      [](const sockaddr_storage& to) { return connectWithRetry(to, Deadline::afterMs(5000)); });
}

TEST(SocketLivenessTest, AOneShotConnectionAndItsAcceptedSideNoticeASilentPeer) {
  expectBothSidesLive(
      [](const sockaddr_storage& to) { return connectOnce(to, Deadline::afterMs(5000)); });
}

TEST(SocketLivenessTest, AConnectionSaysWhereItRanAfterItIsGone) {
  auto listener = listenOn(braid::testing::loopbackAddress(), /*reuseAddr=*/false);
  ASSERT_TRUE(listener.ok());
  auto address = boundAddress(listener.value());
  ASSERT_TRUE(address.ok());
  auto out = connectOnce(address.value(), Deadline::afterMs(5000));
  ASSERT_TRUE(out.ok());
  const ConnectionEnds ends = connectionEnds(out.value());
  out.value().close();
  const std::string where = describe(ends);
  EXPECT_EQ(where.rfind("127.0.0.1:", 0), 0u) << where;
  EXPECT_NE(where.find(" (lo) -> " + addressToString(address.value())), std::string::npos) << where;
  EXPECT_EQ(interfaceOf(sockaddr_storage{}), "");
}

TEST(SocketLivenessTest, AResetSaysSoInItsWords) {
  IoResult reset;
  reset.end = IoEnd::kPeerClosed;
  reset.sysErrno = ECONNRESET;
  EXPECT_EQ(reset.describe(), "peer closed the connection (Connection reset by peer)");
  IoResult orderly;
  orderly.end = IoEnd::kPeerClosed;
  EXPECT_EQ(orderly.describe(), "peer closed the connection");
}

TEST(SocketSendTest, AHeaderAndAPayloadLargerThanTheSocketBuffersArriveInOrder) {
  // sendAllv: one sendmsg while the socket takes both parts, then the rest as room comes.
  LoopbackPair pair;
  ASSERT_NO_FATAL_FAILURE(connectOnLoopback(
      [](const sockaddr_storage& to) { return connectOnce(to, Deadline::afterMs(5000)); }, &pair));
  Socket& out = pair.out;
  Socket& in = pair.in;

  std::vector<char> payload(16 << 20);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 131 + (i >> 13));
  const uint64_t head = 0x1122334455667788ull;
  std::vector<char> got(sizeof(head) + payload.size() + sizeof(head));
  IoResult received;
  std::thread reader(
      [&] { received = recvAll(in, got.data(), got.size(), Deadline::afterMs(20000)); });
  EXPECT_TRUE(
      sendAllv(out, &head, sizeof(head), payload.data(), payload.size(), Deadline::afterMs(20000))
          .ok());
  // No header: the payload alone, here a second header's 8 bytes.
  EXPECT_TRUE(sendAllv(out, nullptr, 0, &head, sizeof(head), Deadline::afterMs(5000)).ok());
  reader.join();
  ASSERT_TRUE(received.ok()) << received.describe();
  EXPECT_EQ(std::memcmp(got.data(), &head, sizeof(head)), 0);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), got.begin() + sizeof(head)));
  EXPECT_EQ(std::memcmp(got.data() + sizeof(head) + payload.size(), &head, sizeof(head)), 0);
}

TEST(SocketRecvBulkTest, ABulkArrivingInPiecesIsWholeAndTheNextSmallReadStillWakes) {
  LoopbackPair pair;
  ASSERT_NO_FATAL_FAILURE(connectOnLoopback(
      [](const sockaddr_storage& to) { return connectOnce(to, Deadline::afterMs(5000)); }, &pair));
  std::vector<char> payload(3 * kBulkWakeBytes + 1234);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7 + (i >> 11));
  const uint64_t word = 0x0102030405060708ull;
  std::thread writer([&] {
    // In pieces smaller than the mark, with pauses, so that the reader waits between them.
    for (size_t at = 0; at < payload.size(); at += 60000) {
      const size_t n = std::min<size_t>(60000, payload.size() - at);
      ASSERT_TRUE(sendAll(pair.out, payload.data() + at, n, Deadline::afterMs(5000)).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    // A small message after a pause: its reader must wake at its first bytes.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(sendAll(pair.out, &word, sizeof(word), Deadline::afterMs(5000)).ok());
  });
  std::vector<char> got(payload.size());
  const IoResult bulk = recvBulk(pair.in, got.data(), got.size(), Deadline::afterMs(10000));
  EXPECT_TRUE(bulk.ok()) << bulk.describe();
  EXPECT_EQ(got, payload);
  EXPECT_EQ(option(pair.in, SOL_SOCKET, SO_RCVLOWAT), 1);
  uint64_t next = 0;
  const IoResult small = recvAll(pair.in, &next, sizeof(next), Deadline::afterMs(5000));
  writer.join();
  EXPECT_TRUE(small.ok()) << small.describe();
  EXPECT_EQ(next, word);
}

TEST(SocketRecvBulkTest, APeerThatClosesShortOfTheMarkEndsTheWait) {
  LoopbackPair pair;
  ASSERT_NO_FATAL_FAILURE(connectOnLoopback(
      [](const sockaddr_storage& to) { return connectOnce(to, Deadline::afterMs(5000)); }, &pair));
  std::vector<char> part(kBulkWakeBytes / 2, 'x');
  std::thread writer([&] {
    ASSERT_TRUE(sendAll(pair.out, part.data(), part.size(), Deadline::afterMs(5000)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pair.out = Socket();  // closed with half a mark's worth sent
  });
  std::vector<char> got(4 * kBulkWakeBytes);
  const IoResult io = recvBulk(pair.in, got.data(), got.size(), Deadline::afterMs(10000));
  writer.join();
  EXPECT_EQ(io.end, IoEnd::kPeerClosed) << io.describe();
}

}  // namespace
}  // namespace braid::sockets
