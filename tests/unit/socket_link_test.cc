// A socket FIFO whose connection breaks under a live end (transport/net/socket/socket_wire.h): the
// end tells its communicator at once, naming the peer, the connection's addresses and interface,
// and the system's words; a peer that closes in order between slots is no failure. A send end
// of a communicator that stopped goes away without draining to a peer that no longer reads. One
// side of each pipe here is a raw socket, so that the test decides how the connection ends: a reset
// (SO_LINGER 0), or an end of file in the middle of a slot.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/socket.h"
#include "base/socket_io.h"
#include "support/network_fifo_checks.h"
#include "transport/net/socket/socket_fifo.h"
#include "transport/net/socket_rendezvous.h"

namespace braid::transport::socket::socket_link_test {
namespace {

constexpr size_t kSlotBytes = 4096;
// Generous: a break is seen within milliseconds; this only bounds a test that would hang.
constexpr int64_t kReportMs = 5000;

using braid::sockets::Socket;
using braid::testing::within;

/// What the ends told their communicator.
class Reports {
 public:
  LinkFailureHandler handler() {
    return [this](int peer, const std::string& why) {
      std::lock_guard<std::mutex> lock(mutex_);
      seen_.push_back({peer, why});
      cv_.notify_all();
    };
  }
  /// Waits for the first report, up to `ms`; false if none came.
  bool awaitFirst(int64_t ms = kReportMs) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return !seen_.empty(); });
  }
  int peer() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_.at(0).first;
  }
  std::string why() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_.at(0).second;
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::pair<int, std::string>> seen_;
};

net::Greeting greeting(int channel) {
  net::Greeting g;
  g.magic = 0x1234;
  g.sender = 0;
  g.receiver = 1;
  g.channel = channel;
  return g;
}

/// A connected pair of raw sockets through the rendezvous: `out` connected, `in` accepted.
struct Connection {
  Socket out;
  Socket in;
};

Connection connect(net::SocketRendezvous& rendezvous, const net::Greeting& g) {
  Connection c;
  auto out = rendezvous.connect(rendezvous.address(), g, Deadline::afterMs(5000));
  EXPECT_TRUE(out.ok()) << out.status().message();
  auto in = rendezvous.accept(g, Deadline::afterMs(5000));
  EXPECT_TRUE(in.ok()) << in.status().message();
  if (out.ok()) c.out = std::move(out).value();
  if (in.ok()) c.in = std::move(in).value();
  return c;
}

/// Sends a slot's word announcing `announced` bytes and `sent` of them.
void sendPartOfASlot(const Socket& socket, uint64_t announced, size_t sent) {
  std::vector<char> bytes(sent, 'x');
  ASSERT_TRUE(
      braid::sockets::sendAll(socket, &announced, sizeof(announced), within(1000).deadline).ok());
  ASSERT_TRUE(braid::sockets::sendAll(socket, bytes.data(), sent, within(1000).deadline).ok());
}

/// Closes `socket` with a reset rather than in order, as a peer's kernel does for a connection
/// it gave up on.
void resetAndClose(Socket& socket) {
  linger hard{1, 0};
  ASSERT_EQ(setsockopt(socket.fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof(hard)), 0);
  socket.close();
}

/// Posts 16-byte slots until `reports` has one or kReportMs passed.
void postUntilReported(SendEnd& send, Reports& reports) {
  const Deadline deadline = Deadline::afterMs(kReportMs);
  while (reports.count() == 0 && !deadline.expired()) {
    auto slot = send.waitSlot(within(50));
    if (slot.ok()) send.post(16);
  }
}

void expectNamesTheConnection(const std::string& why, const std::string& doing) {
  EXPECT_NE(why.find("socket: " + doing), std::string::npos) << why;
  EXPECT_NE(why.find("over 127.0.0.1:"), std::string::npos) << why;
  EXPECT_NE(why.find("(lo) -> 127.0.0.1:"), std::string::npos) << why;
}

/// Makes `socket`'s kernel buffer as small as the system allows, so that a few slots fill it.
void shrinkBuffer(const Socket& socket, int option) {
  const int bytes = 4096;
  ASSERT_EQ(setsockopt(socket.fd(), SOL_SOCKET, option, &bytes, sizeof(bytes)), 0);
}

/// Posts slots until the FIFO has no free one for 200 ms: its proxy is stuck in a send that the
/// peer does not read, and the end holds posted slots it has not sent. False if that never came.
bool postUntilFull(SendEnd& send) {
  for (int posted = 0; posted < 100000; ++posted) {
    if (!send.waitSlot(within(200)).ok()) return true;
    send.post(kSlotBytes);
  }
  return false;
}

/// Raises `stop`, destroys `send` and returns how long that took, in ms.
int64_t msToStopAndDestroy(std::atomic<bool>& stop, std::unique_ptr<SendEnd>& send) {
  stop.store(true);
  const auto start = std::chrono::steady_clock::now();
  send.reset();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

/// One connection through a rendezvous on loopback, and what its ends told.
class SocketLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = net::SocketRendezvous::create(braid::testing::loopbackAddress());
    ASSERT_TRUE(made.ok());
    rendezvous_ = std::move(made).value();
    c_ = connect(*rendezvous_, greeting(0));
  }
  /// The first report came, from the end at `peer`'s other side, naming the connection, what
  /// the end was `doing` and `words`.
  void expectReported(int peer, const std::string& doing, const std::string& words) {
    ASSERT_TRUE(reports_.awaitFirst()) << "the end told nobody";
    EXPECT_EQ(reports_.peer(), peer);
    expectNamesTheConnection(reports_.why(), doing);
    EXPECT_NE(reports_.why().find(words), std::string::npos) << reports_.why();
  }

  std::unique_ptr<net::SocketRendezvous> rendezvous_;
  Connection c_;
  Reports reports_;
};

TEST_F(SocketLinkTest, AReceiverTellsOfAConnectionThatEndsInTheMiddleOfASlot) {
  auto recv = openSocketRecvEnd(std::move(c_.in), kSlotBytes, 0, reports_.handler());
  ASSERT_TRUE(recv.ok());
  sendPartOfASlot(c_.out, 100, 10);
  c_.out.close();
  expectReported(0, "receiving from rank 0", "closed the connection in the middle of a slot");
}

TEST_F(SocketLinkTest, AReceiverTellsOfAResetBetweenSlots) {
  auto recv = openSocketRecvEnd(std::move(c_.in), kSlotBytes, 0, reports_.handler());
  ASSERT_TRUE(recv.ok());
  // A whole slot first: once it is out, the end's proxy has the connection and noted its ends.
  sendPartOfASlot(c_.out, 16, 16);
  size_t bytes = 0;
  ASSERT_TRUE(recv.value()->waitSlot(within(kReportMs), &bytes).ok());
  EXPECT_EQ(bytes, 16u);
  recv.value()->release();
  resetAndClose(c_.out);
  expectReported(0, "receiving from rank 0", "Connection reset by peer");
}

TEST_F(SocketLinkTest, ASenderTellsOfAConnectionItsPeerReset) {
  auto send = openSocketSendEnd(std::move(c_.out), kSlotBytes, 1, reports_.handler());
  ASSERT_TRUE(send.ok());
  resetAndClose(c_.in);
  postUntilReported(*send.value(), reports_);
  // A reset, or the broken pipe of a connection already reset.
  expectReported(1, "sending to rank 1", "peer closed the connection (");
}

TEST_F(SocketLinkTest, APeerThatClosesInOrderBetweenSlotsIsNoFailure) {
  auto send = openSocketSendEnd(std::move(c_.out), kSlotBytes, 1, reports_.handler());
  auto recv = openSocketRecvEnd(std::move(c_.in), kSlotBytes, 0, reports_.handler());
  ASSERT_TRUE(send.ok() && recv.ok());
  auto slot = send.value()->waitSlot(within(1000));
  ASSERT_TRUE(slot.ok());
  send.value()->post(16);
  size_t bytes = 0;
  ASSERT_TRUE(recv.value()->waitSlot(within(kReportMs), &bytes).ok());
  recv.value()->release();
  send.value().reset();  // the sender goes away in order: the receiver's proxy reads an end
  // A report would come within milliseconds; this wait can only miss one, never invent one.
  EXPECT_FALSE(reports_.awaitFirst(300)) << reports_.why();
}

TEST_F(SocketLinkTest, ASendEndOfAStoppedCommunicatorGoesWithoutDraining) {
  shrinkBuffer(c_.out, SO_SNDBUF);
  shrinkBuffer(c_.in, SO_RCVBUF);  // c_.in is never read
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto send =
      openSocketSendEnd(std::move(c_.out), kSlotBytes, 1, LinkWatch(reports_.handler(), stop));
  ASSERT_TRUE(send.ok());
  ASSERT_TRUE(postUntilFull(*send.value())) << "the FIFO never filled: nothing to drain";
  // Only the drain's deadline (kDrainMs) or the stop flag can end it now.
  EXPECT_LT(msToStopAndDestroy(*stop, send.value()), net::kDrainMs / 4);
  EXPECT_EQ(reports_.count(), 0u) << reports_.why();  // an end going away is no failure
}

TEST(StripedSocketLinkTest, AStripedSendEndOfAStoppedCommunicatorGoesWithoutDraining) {
  auto rendezvous = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(rendezvous.ok());
  StripeLayout layout;
  layout.threads = 2;
  const net::Greeting g = greeting(3);
  std::vector<Socket> out;
  std::vector<Socket> in;  // never read
  for (int i = 0; i < 2; ++i) {
    Connection c = connect(*rendezvous.value(), g.stripeOf(i, 2));
    shrinkBuffer(c.out, SO_SNDBUF);
    shrinkBuffer(c.in, SO_RCVBUF);
    out.push_back(std::move(c.out));
    in.push_back(std::move(c.in));
  }
  Reports reports;
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto send = openStripedSocketSendEnd(std::move(out), kSlotBytes, 1, layout,
                                       LinkWatch(reports.handler(), stop));
  ASSERT_TRUE(send.ok());
  ASSERT_TRUE(postUntilFull(*send.value())) << "the FIFO never filled: nothing to drain";
  EXPECT_LT(msToStopAndDestroy(*stop, send.value()), net::kDrainMs / 4);
}

TEST(StripedSocketLinkTest, AStripedReceiverTellsOfAConnectionThatEndsInTheMiddleOfASlot) {
  auto rendezvous = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(rendezvous.ok());
  net::SocketRendezvous* r = rendezvous.value().get();
  StripeLayout layout;
  layout.threads = 2;
  Reports reports;
  const net::Greeting g = greeting(1);
  auto recv = openStripedSocketRecvEnd(
      [r, g](int index, const std::atomic<bool>& stop) {
        return r->accept(g.stripeOf(index, 2), Deadline::afterMs(5000), &stop);
      },
      kSlotBytes, 0, layout, reports.handler());
  ASSERT_TRUE(recv.ok());
  std::vector<Socket> out;
  for (int i = 0; i < 2; ++i) {
    auto s = r->connect(r->address(), g.stripeOf(i, 2), Deadline::afterMs(5000));
    ASSERT_TRUE(s.ok()) << s.status().message();
    out.push_back(std::move(s).value());
  }
  sendPartOfASlot(out[0], 100, 10);  // slot 0 travels on connection 0
  out[0].close();
  ASSERT_TRUE(reports.awaitFirst()) << "the striped receiving end told nobody";
  EXPECT_EQ(reports.peer(), 0);
  expectNamesTheConnection(reports.why(), "receiving from rank 0");
  EXPECT_NE(reports.why().find("in the middle of a slot"), std::string::npos) << reports.why();
}

TEST(StripedSocketLinkTest, AStripedSenderTellsOfAConnectionItsPeerReset) {
  auto rendezvous = net::SocketRendezvous::create(braid::testing::loopbackAddress());
  ASSERT_TRUE(rendezvous.ok());
  net::SocketRendezvous& r = *rendezvous.value();
  StripeLayout layout;
  layout.socketsPerThread = 2;
  const net::Greeting g = greeting(2);
  std::vector<Socket> out;
  std::vector<Socket> in;
  for (int i = 0; i < 2; ++i) {
    Connection c = connect(r, g.stripeOf(i, 2));
    out.push_back(std::move(c.out));
    in.push_back(std::move(c.in));
  }
  Reports reports;
  auto send = openStripedSocketSendEnd(std::move(out), kSlotBytes, 1, layout, reports.handler());
  ASSERT_TRUE(send.ok());
  resetAndClose(in[1]);
  postUntilReported(*send.value(), reports);
  ASSERT_TRUE(reports.awaitFirst()) << "the striped sending end told nobody";
  expectNamesTheConnection(reports.why(), "sending to rank 1");
}

}  // namespace
}  // namespace braid::transport::socket::socket_link_test
