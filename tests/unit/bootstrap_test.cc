// Tests of the bootstrap layer: the unique id, rendezvous through the root,
// the ring allGather / barrier with ranks as threads and as processes, and
// the failures that must come back as clear errors rather than hangs.
#include "bootstrap/bootstrap.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "base/socket_address.h"
#include "bootstrap/unique_id.h"
#include "support/multiprocess.h"

namespace braid::bootstrap {
namespace {

using ::braid::testing::runProcesses;
using ::braid::testing::runThreads;

constexpr int64_t kTimeoutMs = 20000;

/// The byte rank `rank` puts at offset `i` of its slot in round `round`.
uint8_t pattern(int rank, int round, size_t i) {
  return static_cast<uint8_t>(rank * 31 + round * 7 + i * 13 + 1);
}

/// Runs `rounds` allGathers of varied sizes plus barriers on `bootstrap`.
void gatherRounds(Bootstrap& bootstrap, int rounds) {
  const int nranks = bootstrap.nranks();
  const int rank = bootstrap.rank();
  // Odd sizes, one byte, and more than a socket buffer holds (ring deadlock check).
  const size_t sizes[] = {37, 1, 300000};
  for (int round = 0; round < rounds; ++round) {
    size_t bytes = sizes[round % 3];
    std::vector<uint8_t> data(bytes * nranks, 0);
    for (size_t i = 0; i < bytes; ++i) data[rank * bytes + i] = pattern(rank, round, i);
    Status status = bootstrap.allGather(data.data(), bytes);
    ASSERT_TRUE(status.ok()) << "rank " << rank << ": " << status.message();
    for (int slot = 0; slot < nranks; ++slot) {
      for (size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(data[slot * bytes + i], pattern(slot, round, i))
            << "rank " << rank << " round " << round << " slot " << slot << " byte " << i;
      }
    }
    status = bootstrap.barrier();
    ASSERT_TRUE(status.ok()) << "rank " << rank << ": " << status.message();
  }
}

void joinAndGather(const UniqueId& id, int rank, int nranks, int rounds) {
  auto created = Bootstrap::create(id, rank, nranks, kTimeoutMs);
  ASSERT_TRUE(created.ok()) << "rank " << rank << ": " << created.status().message();
  Bootstrap& bootstrap = *created.value();
  EXPECT_EQ(bootstrap.rank(), rank);
  EXPECT_EQ(bootstrap.nranks(), nranks);
  EXPECT_EQ(bootstrap.magic(), unpackUniqueId(id).value().magic);
  gatherRounds(bootstrap, rounds);
}

/// A free port on `host` (port 0 inside): bind port 0, read it, close. 0 when
/// the address cannot be bound here.
int freePort(const sockaddr_storage& host) {
  auto listener = sockets::listenOn(host, false);
  if (!listener.ok()) return 0;
  sockaddr_storage bound = sockets::boundAddress(listener.value()).value();
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

sockaddr_storage loopback(int family) {
  sockaddr_storage addr{};
  addr.ss_family = family;
  if (family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr = in6addr_loopback;
  } else {
    reinterpret_cast<sockaddr_in*>(&addr)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  return addr;
}

UniqueId newId(int64_t rootTimeoutMs = kTimeoutMs) {
  auto id = createUniqueId(rootTimeoutMs);
  EXPECT_TRUE(id.ok()) << id.status().message();
  return id.ok() ? id.value() : UniqueId{};
}

// --- the unique id ------------------------------------------------------------

TEST(BootstrapUniqueId, PackUnpackRoundTrip) {
  UniqueIdContents contents{};
  contents.marker = kUniqueIdMarker;
  contents.flags = kRootStartedByRank0;
  contents.magic = 0x0123456789abcdefULL;
  contents.root.v4.sin_family = AF_INET;
  contents.root.v4.sin_port = htons(4567);
  contents.root.v4.sin_addr.s_addr = htonl(0x0a010203);
  UniqueId id = packUniqueId(contents);
  static_assert(sizeof(id) == 128, "ncclUniqueId is 128 bytes");

  auto back = unpackUniqueId(id);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back.value().flags, kRootStartedByRank0);
  EXPECT_EQ(back.value().magic, contents.magic);
  EXPECT_EQ(sockets::addressToString(rootAddress(back.value())), "10.1.2.3:4567");
  EXPECT_NE(describeUniqueId(id).find("10.1.2.3:4567 magic=0x0123456789abcdef"), std::string::npos)
      << describeUniqueId(id);
}

TEST(BootstrapUniqueId, RejectsGarbage) {
  UniqueId zeros{};
  EXPECT_EQ(unpackUniqueId(zeros).status().code(), ErrorCode::kInvalidArgument);
  UniqueId noise;
  for (size_t i = 0; i < kUniqueIdBytes; ++i) noise.bytes[i] = static_cast<char>(i * 37 + 11);
  EXPECT_EQ(unpackUniqueId(noise).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(describeUniqueId(noise), "<not a braid unique id>");

  UniqueIdContents noAddress{};
  noAddress.marker = kUniqueIdMarker;
  EXPECT_EQ(unpackUniqueId(packUniqueId(noAddress)).status().code(), ErrorCode::kInvalidArgument);

  auto created = Bootstrap::create(zeros, 0, 1, 1000);
  EXPECT_EQ(created.status().code(), ErrorCode::kInvalidArgument);
}

TEST(BootstrapUniqueId, ForAddressIsStable) {
  auto first = uniqueIdForAddress("127.0.0.1:29500");
  auto second = uniqueIdForAddress("127.0.0.1:29500");
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(memcmp(first.value().bytes, second.value().bytes, kUniqueIdBytes), 0);
  auto contents = unpackUniqueId(first.value());
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents.value().flags & kRootStartedByRank0, kRootStartedByRank0);
  EXPECT_EQ(sockets::addressToString(rootAddress(contents.value())), "127.0.0.1:29500");

  auto other = uniqueIdForAddress("127.0.0.1:29501");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(unpackUniqueId(other.value()).value().magic, contents.value().magic);
}

TEST(BootstrapUniqueId, ParsesIpv6AndRejectsBadAddresses) {
  auto v6 = uniqueIdForAddress("[::1]:1234");
  ASSERT_TRUE(v6.ok()) << v6.status().message();
  auto contents = unpackUniqueId(v6.value());
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents.value().root.sa.sa_family, AF_INET6);
  EXPECT_EQ(sockets::addressToString(rootAddress(contents.value())), "[::1]:1234");

  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                          "127.0.0.1:12ab", "[::1]1234", "[::1", ":1234"}) {
    auto id = uniqueIdForAddress(bad);
    EXPECT_EQ(id.status().code(), ErrorCode::kInvalidArgument) << "'" << bad << "'";
  }
}

TEST(BootstrapUniqueId, CreateInvalidRank) {
  UniqueId id = newId();
  EXPECT_EQ(Bootstrap::create(id, 2, 2, 1000).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, -1, 2, 1000).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, 0, 0, 1000).status().code(), ErrorCode::kInvalidArgument);
  // Let the root thread finish: one rank of one.
  joinAndGather(id, 0, 1, 1);
}

// --- rendezvous and the ring --------------------------------------------------

class BootstrapThreads : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapThreads, AllGatherAndBarrier) {
  const int nranks = GetParam();
  UniqueId id = newId();
  runThreads(nranks, [&](int rank) { joinAndGather(id, rank, nranks, 4); });
}

INSTANTIATE_TEST_SUITE_P(Bootstrap, BootstrapThreads, ::testing::Values(1, 2, 3, 5, 8),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

TEST(BootstrapProcesses, AllGatherFourRanks) {
  // The root thread lives in this (parent) process; the ranks are children.
  UniqueId id = newId();
  runProcesses(4, [&](int rank) { joinAndGather(id, rank, 4, 3); });
}

TEST(BootstrapCommId, RankZeroStartsTheRoot) {
  int port = freePort(loopback(AF_INET));
  ASSERT_GT(port, 0);
  std::string address = "127.0.0.1:" + std::to_string(port);
  setenv("BRAID_COMM_ID", address.c_str(), 1);
  auto id = createUniqueId(kTimeoutMs);
  unsetenv("BRAID_COMM_ID");
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto contents = unpackUniqueId(id.value());
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(contents.value().flags & kRootStartedByRank0, kRootStartedByRank0);
  EXPECT_EQ(sockets::addressToString(rootAddress(contents.value())), address);
  // Two communicators in turn at the same address: rank 0 restarts the root.
  for (int comm = 0; comm < 2; ++comm) {
    runThreads(3, [&](int rank) { joinAndGather(id.value(), rank, 3, 2); });
  }
}

TEST(BootstrapCommId, Ipv6Loopback) {
  int port = freePort(loopback(AF_INET6));
  if (port == 0) GTEST_SKIP() << "no IPv6 loopback here";
  auto id = uniqueIdForAddress("[::1]:" + std::to_string(port));
  ASSERT_TRUE(id.ok()) << id.status().message();
  runThreads(2, [&](int rank) { joinAndGather(id.value(), rank, 2, 2); });
}

TEST(BootstrapSocket, InterfaceFilter) {
  // Loopback is chosen only when a filter names it.
  EXPECT_TRUE(sockets::isLoopback(sockets::pickLocalAddress(std::string("lo"))));
  sockaddr_storage fallback = sockets::pickLocalAddress(std::string("=no-such-interface0"));
  EXPECT_EQ(sockets::addressToString(fallback), "127.0.0.1:0");
  sockaddr_storage chosen = sockets::pickLocalAddress(std::nullopt);
  EXPECT_EQ(chosen.ss_family, AF_INET);

  setenv("BRAID_SOCKET_IFNAME", "lo", 1);
  auto id = createUniqueId(kTimeoutMs);
  unsetenv("BRAID_SOCKET_IFNAME");
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_TRUE(sockets::isLoopback(rootAddress(unpackUniqueId(id.value()).value())))
      << describeUniqueId(id.value());
  runThreads(2, [&](int rank) { joinAndGather(id.value(), rank, 2, 1); });
}

// --- failures -----------------------------------------------------------------

TEST(BootstrapTimeout, MissingRankIsNamed) {
  constexpr int64_t kShortMs = 1500;
  UniqueId id = newId(kShortMs);
  runThreads(2, [&](int rank) {
    auto created = Bootstrap::create(id, rank, 3, kShortMs);
    ASSERT_FALSE(created.ok()) << "rank " << rank << " joined a communicator missing rank 2";
    EXPECT_EQ(created.status().code(), ErrorCode::kRemoteError);
    EXPECT_NE(created.status().message().find("rank 2"), std::string::npos)
        << created.status().message();
  });
}

TEST(BootstrapReject, WrongMagic) {
  UniqueId id = newId();
  UniqueIdContents contents = unpackUniqueId(id).value();
  contents.magic ^= 1;
  auto stray = Bootstrap::create(packUniqueId(contents), 1, 2, kTimeoutMs);
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.status().code(), ErrorCode::kRemoteError);
  EXPECT_NE(stray.status().message().find("magic"), std::string::npos) << stray.status().message();
  // The root keeps serving the right communicator.
  runThreads(2, [&](int rank) { joinAndGather(id, rank, 2, 1); });
}

TEST(BootstrapReject, DuplicateRank) {
  UniqueId id = newId();
  std::atomic<int> finished{0};
  std::atomic<int> rejected{0};
  auto rankZero = [&] {
    auto created = Bootstrap::create(id, 0, 2, kTimeoutMs);
    if (!created.ok()) {
      EXPECT_NE(created.status().message().find("already joined"), std::string::npos)
          << created.status().message();
      ++rejected;
    }
    ++finished;  // only the rejected one can finish before rank 1 joins
    if (created.ok()) gatherRounds(*created.value(), 1);
  };
  std::thread first(rankZero);
  std::thread second(rankZero);
  for (int i = 0; i < 20000 && finished.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(finished.load(), 1);
  std::thread rankOne([&] { joinAndGather(id, 1, 2, 1); });
  first.join();
  second.join();
  rankOne.join();
  EXPECT_EQ(rejected.load(), 1);
}

TEST(BootstrapReject, SilentStrayConnectionDoesNotBlockTheRoot) {
  UniqueId id = newId();
  sockaddr_storage root = rootAddress(unpackUniqueId(id).value());
  auto stray = sockets::connectWithRetry(root, Deadline::afterMs(5000));
  ASSERT_TRUE(stray.ok()) << stray.status().message();
  runThreads(2, [&](int rank) { joinAndGather(id, rank, 2, 1); });
}

/// Two ranks; `rankZeroBody` runs on rank 0 while rank 1 keeps its bootstrap
/// alive but idle until rank 0 is done.
void twoRanks(int64_t timeoutMs, const std::function<void(Bootstrap&)>& rankZeroBody) {
  UniqueId id = newId();
  std::atomic<bool> releaseRankOne{false};
  runThreads(2, [&](int rank) {
    auto created = Bootstrap::create(id, rank, 2, timeoutMs);
    ASSERT_TRUE(created.ok()) << created.status().message();
    if (rank == 0) {
      rankZeroBody(*created.value());
      releaseRankOne = true;
      return;
    }
    while (!releaseRankOne.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
}

TEST(BootstrapFailure, PeerClosedIsNamed) {
  UniqueId id = newId();
  std::atomic<bool> rankOneGone{false};
  runThreads(2, [&](int rank) {
    auto created = Bootstrap::create(id, rank, 2, kTimeoutMs);
    ASSERT_TRUE(created.ok()) << created.status().message();
    if (rank == 1) {
      created.value().reset();
      rankOneGone = true;
      return;
    }
    while (!rankOneGone.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Status status = created.value()->barrier();
    EXPECT_EQ(status.code(), ErrorCode::kRemoteError);
    EXPECT_NE(status.message().find("rank 1 closed the bootstrap connection"), std::string::npos)
        << status.message();
    Status later = created.value()->barrier();
    EXPECT_EQ(later.code(), ErrorCode::kRemoteError);
    EXPECT_NE(later.message().find("earlier failure"), std::string::npos) << later.message();
  });
}

TEST(BootstrapFailure, TimeoutNamesTheSilentRank) {
  twoRanks(1000, [](Bootstrap& bootstrap) {
    Status status = bootstrap.barrier();
    EXPECT_EQ(status.code(), ErrorCode::kRemoteError);
    EXPECT_NE(status.message().find("timed out after 1000 ms waiting for rank 1"),
              std::string::npos)
        << status.message();
  });
}

TEST(BootstrapFailure, AbortWakesABlockedCall) {
  twoRanks(kTimeoutMs, [](Bootstrap& bootstrap) {
    std::thread aborter([&] {
      // Give the barrier a moment to block; the outcome is the same either way.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      bootstrap.abort();
    });
    Status status = bootstrap.barrier();
    aborter.join();
    EXPECT_EQ(status.code(), ErrorCode::kRemoteError);
    EXPECT_NE(status.message().find("aborted"), std::string::npos) << status.message();
    std::vector<char> data(2);
    Status later = bootstrap.allGather(data.data(), 1);
    EXPECT_NE(later.message().find("aborted"), std::string::npos) << later.message();
  });
}

}  // namespace
}  // namespace braid::bootstrap
