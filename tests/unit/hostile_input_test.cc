// Hostile input on braid's listeners (issue 14's fifth point): a port scanner, a client that
// says nothing, one that sends junk, a truncated or an oversized greeting, and a process that
// knows the communicator's address and magic but not its secret. None of them may crash a
// listener, hold it up, or get in; the ranks that hold the unique id join as if nothing
// happened.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "base/socket_greeting.h"
#include "base/socket_io.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/root.h"
#include "bootstrap/unique_id.h"
#include "support/multiprocess.h"
#include "transport/net/socket_rendezvous.h"

namespace braid {
namespace {

constexpr int64_t kTimeoutMs = 20000;

sockaddr_storage loopback() {
  sockaddr_storage a{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a);
  v4->sin_family = AF_INET;
  v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

/// Every kind of nuisance, against the listener at `where`; returns once all have had their go.
/// The connections that stay silent are held open for the caller's lifetime of `held`.
void harass(const sockaddr_storage& where, std::vector<sockets::Socket>* held) {
  const Deadline soon = Deadline::afterMs(2000);
  // A scanner: connect and close at once.
  for (int i = 0; i < 20; ++i) (void)sockets::connectWithRetry(where, soon);
  // Silent clients that stay.
  for (int i = 0; i < 8; ++i) {
    Result<sockets::Socket> s = sockets::connectWithRetry(where, soon);
    if (s.ok()) held->push_back(std::move(s).value());
  }
  // Junk, a truncated greeting, and far more than any greeting.
  const std::vector<size_t> sizes = {1, 7, 100, 1 << 16};
  for (size_t bytes : sizes) {
    Result<sockets::Socket> s = sockets::connectWithRetry(where, soon);
    if (!s.ok()) continue;
    std::vector<char> junk(bytes, '\x5a');
    (void)sockets::sendAll(s.value(), junk.data(), junk.size(), soon);
    held->push_back(std::move(s).value());
  }
}

/// A communicator of `nranks` threads on `id`, each checking an all-gather.
void joinAll(const bootstrap::UniqueId& id, int nranks) {
  braid::testing::runThreads(nranks, [&](int rank) {
    auto b = bootstrap::Bootstrap::create(id, rank, nranks, kTimeoutMs);
    ASSERT_TRUE(b.ok()) << "rank " << rank << ": " << b.status().message();
    std::vector<int32_t> all(nranks, -1);
    all[rank] = rank * 10;
    ASSERT_TRUE(b.value()->allGather(all.data(), sizeof(int32_t)).ok());
    for (int r = 0; r < nranks; ++r) EXPECT_EQ(all[r], r * 10);
  });
}

TEST(HostileRoot, ScannersJunkAndSilenceChangeNothing) {
  auto id = bootstrap::createUniqueId(kTimeoutMs);
  ASSERT_TRUE(id.ok()) << id.status().message();
  const sockaddr_storage root =
      bootstrap::rootAddress(bootstrap::unpackUniqueId(id.value()).value());
  std::vector<sockets::Socket> held;
  harass(root, &held);
  joinAll(id.value(), 3);
}

TEST(HostileRoot, AGreetingWithoutTheSecretIsRefused) {
  auto id = bootstrap::createUniqueId(kTimeoutMs);
  ASSERT_TRUE(id.ok());
  bootstrap::UniqueIdContents forged = bootstrap::unpackUniqueId(id.value()).value();
  forged.secret[0] ^= 1;  // the address and the magic are right; the secret is not
  std::atomic<bool> done{false};
  std::string intruder;
  std::thread outsider([&] {
    auto b = bootstrap::Bootstrap::create(bootstrap::packUniqueId(forged), 2, 3, 1500);
    intruder = b.ok() ? "joined" : b.status().message();
    done.store(true);
  });
  // The outsider claims rank 2 first; the real rank 2 must still get in, and the ring work.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  joinAll(id.value(), 3);
  outsider.join();
  EXPECT_TRUE(done.load());
  EXPECT_NE(intruder, "joined");
}

TEST(HostileRoot, HellosThatAskTooMuchAreRefused) {
  bootstrap::wire::Hello h{};
  h.magic = 7;
  h.rank = 0;
  h.nranks = bootstrap::kMaxRanks + 1;
  h.nroots = 1;
  h.listenAddr = loopback();
  EXPECT_NE(bootstrap::checkHello(h, 7, -1, false).find("out of range"), std::string::npos);
  h.nranks = 4;
  h.rank = 4;
  EXPECT_NE(bootstrap::checkHello(h, 7, -1, false).find("out of range"), std::string::npos);
  h.rank = 1;
  EXPECT_EQ(bootstrap::checkHello(h, 7, -1, false), "");
  EXPECT_NE(bootstrap::checkHello(h, 8, -1, false).find("wrong magic"), std::string::npos);
  EXPECT_NE(bootstrap::checkHello(h, 7, 5, false).find("nranks is 4"), std::string::npos);
  EXPECT_NE(bootstrap::checkHello(h, 7, 4, true).find("already joined"), std::string::npos);
  h.listenAddr.ss_family = 99;
  EXPECT_NE(bootstrap::checkHello(h, 7, 4, false).find("family"), std::string::npos);
  h.listenAddr = loopback();
  // Several ids: a root beyond them, or more roots than ranks, is refused; an introduction to
  // the last root comes as rank nranks.
  h.nroots = 2;
  h.iroot = 2;
  EXPECT_NE(bootstrap::checkHello(h, 7, 4, false).find("root 2 of 2"), std::string::npos);
  h.iroot = 1;
  h.rank = 4;
  EXPECT_EQ(bootstrap::checkHello(h, 7, 4, false), "");
  h.nroots = 5;
  EXPECT_NE(bootstrap::checkHello(h, 7, 4, false).find("out of range for 4 ranks"),
            std::string::npos);
  // The most negative count is refused, not overflowed into a limit (the fuzzer found it).
  h.nroots = 1;
  h.nranks = INT32_MIN;
  EXPECT_NE(bootstrap::checkHello(h, 7, -1, false).find("out of range"), std::string::npos);
}

TEST(HostileRendezvous, OnlyProvenConnectionsAreFiled) {
  sockets::Proof proof;
  proof.secret[3] = 42;
  proof.purpose = bootstrap::kProveSocketFifo;
  auto made = transport::net::SocketRendezvous::create(loopback(), proof);
  ASSERT_TRUE(made.ok());
  auto& rendezvous = *made.value();
  std::vector<sockets::Socket> held;
  harass(rendezvous.address(), &held);
  // A greeting that names a FIFO exactly but proves nothing.
  const auto greeting = transport::net::Greeting::of(9, 0, 1, 0, 0);
  Result<sockets::Socket> raw =
      sockets::connectWithRetry(rendezvous.address(), Deadline::afterMs(2000));
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(
      sockets::sendAll(raw.value(), &greeting, sizeof(greeting), Deadline::afterMs(2000)).ok());
  // And one with another secret.
  sockets::Proof wrong = proof;
  wrong.secret[3] = 43;
  Result<sockets::Socket> forged =
      sockets::connectWithRetry(rendezvous.address(), Deadline::afterMs(2000));
  ASSERT_TRUE(forged.ok());
  (void)sockets::sendProvenGreeting(forged.value(), wrong, &greeting, sizeof(greeting),
                                    Deadline::afterMs(2000));
  EXPECT_FALSE(rendezvous.accept(greeting, Deadline::afterMs(500)).ok())
      << "a connection that proves nothing was filed";
  // The real sender gets through.
  auto sender = rendezvous.connect(rendezvous.address(), greeting, Deadline::afterMs(5000));
  ASSERT_TRUE(sender.ok()) << sender.status().message();
  auto receiver = rendezvous.accept(greeting, Deadline::afterMs(5000));
  ASSERT_TRUE(receiver.ok()) << receiver.status().message();
  const uint64_t word = 0x1234;
  ASSERT_TRUE(sockets::sendAll(sender.value(), &word, sizeof(word), Deadline::afterMs(2000)).ok());
  uint64_t got = 0;
  ASSERT_TRUE(sockets::recvAll(receiver.value(), &got, sizeof(got), Deadline::afterMs(2000)).ok());
  EXPECT_EQ(got, word);
}

TEST(HostileAcceptor, AFloodOfSilentClientsHoldsNoMoreThanItsLimit) {
  auto listener = sockets::listenOn(loopback(), false);
  ASSERT_TRUE(listener.ok());
  const sockaddr_storage where = sockets::boundAddress(listener.value()).value();
  sockets::Proof proof;
  proof.purpose = 77;
  sockets::GreetingAcceptor acceptor(listener.value(), 8, proof);
  std::vector<sockets::Socket> flood;
  for (size_t i = 0; i < sockets::GreetingAcceptor::kMaxPending * 3; ++i) {
    auto s = sockets::connectWithRetry(where, Deadline::afterMs(2000));
    if (s.ok()) flood.push_back(std::move(s).value());
  }
  // The flood fills the backlog and the pending list; a client that proves its greeting after
  // it still gets through, and the oldest silent ones were let go.
  std::thread client([&] {
    auto s = sockets::connectWithRetry(where, Deadline::afterMs(5000));
    ASSERT_TRUE(s.ok());
    const char greeting[8] = {'b', 'r', 'a', 'i', 'd', '!', '!', '!'};
    EXPECT_TRUE(
        sockets::sendProvenGreeting(s.value(), proof, greeting, 8, Deadline::afterMs(10000)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  sockets::Socket connection;
  std::vector<char> got;
  const sockets::IoResult io = acceptor.next(Deadline::afterMs(15000), &connection, &got);
  client.join();
  ASSERT_TRUE(io.ok()) << io.describe();
  EXPECT_EQ(std::string(got.begin(), got.end()), "braid!!!");
}

}  // namespace
}  // namespace braid
