// Communicators across two "hosts" (BRAID_HOSTID), each rank a forked process, whose emulated
// HCAs present devices the verbs transport cannot use (emulation/ib/emulated_device_kinds.h):
// with only an EFA-like device the communicator is made and runs over sockets, its log saying
// once why the device was skipped; with a good device beside a bad one, verbs runs on the good
// one alone; BRAID_NET=IB with only bad devices is refused, naming them. And the socket
// transport's NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD: the connections each FIFO end opens,
// counted (transport/net/socket/fifo_connections.h), with correct results.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/log.h"
#include "braid/comm.h"
#include "support/multiprocess.h"
#include "transport/net/socket/fifo_connections.h"

namespace braid {
namespace {

constexpr int kRanks = 2;
constexpr size_t kCount = 100000;  // several slots, on every channel

/// This process's log (stderr) goes to a file of its own at INFO from here on.
class CapturedLog {
 public:
  CapturedLog() {
    char name[] = "/tmp/braid-net-fallback-XXXXXX";
    const int fd = mkstemp(name);
    path_ = name;
    fflush(stderr);
    dup2(fd, 2);
    close(fd);
    setenv("BRAID_DEBUG", "INFO", 1);
    log::resetLevel();
  }
  ~CapturedLog() { unlink(path_.c_str()); }
  std::string text() const {
    fflush(stderr);
    std::ifstream in(path_);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }
  /// The lines that hold `needle`.
  int linesWith(const std::string& needle) const {
    std::istringstream lines(text());
    int found = 0;
    for (std::string line; std::getline(lines, line);)
      found += line.find(needle) != std::string::npos;
    return found;
  }

 private:
  std::string path_;
};

/// Rank `rank` of a host communicator on its own host, made with the environment set now.
Result<std::unique_ptr<Comm>> joinOwnHost(const UniqueId& id, int rank) {
  setenv("BRAID_HOSTID", rank == 0 ? "net-fallback-a" : "net-fallback-b", 1);
  CommOptions options;
  options.hostMemory = true;
  return Comm::create(id, kRanks, rank, options);
}

/// An int32 sum all_reduce on `comm`, checked against the sum every rank can compute.
void expectAllReduceSums(Comm& comm) {
  std::vector<int32_t> input(kCount);
  std::vector<int32_t> output(kCount, -1);
  for (size_t i = 0; i < kCount; ++i) input[i] = static_cast<int32_t>(i * 3 + comm.rank());
  ASSERT_TRUE(
      comm.allReduce(input.data(), output.data(), kCount, DataType::kInt32, RedOp::kSum).ok());
  for (size_t i = 0; i < kCount; ++i) {
    const int32_t want = static_cast<int32_t>(i * 3 * kRanks + (kRanks * (kRanks - 1)) / 2);
    ASSERT_EQ(output[i], want) << "element " << i;
  }
}

/// Runs `body(rank, id)` on two forked ranks, each of its own host with `kinds` on its HCA.
void runOnTwoHosts(const char* kinds, const std::function<void(int, const UniqueId&)>& body) {
  Result<UniqueId> id = Comm::newUniqueId();
  ASSERT_TRUE(id.ok()) << id.status().message();
  testing::runProcesses(kRanks, [&](int rank) {
    setenv("BRAID_IB_EMULATE_KINDS", kinds, 1);
    body(rank, id.value());
  });
}

TEST(NetFallback, OnlyAnEfaDeviceRunsOverSocketsAndSaysOnceWhy) {
  runOnTwoHosts("efa", [](int rank, const UniqueId& id) {
    CapturedLog log;
    Result<std::unique_ptr<Comm>> comm = joinOwnHost(id, rank);
    ASSERT_TRUE(comm.ok()) << comm.status().message();
    expectAllReduceSums(*comm.value());
    EXPECT_GT(transport::socket::fifoConnections(), 0u);
    comm.value().reset();
    EXPECT_EQ(log.linesWith("verbs: skipping emu_0: not an InfiniBand or RoCE device"), 1)
        << log.text();
    EXPECT_EQ(log.linesWith("verbs: skipping"), 1) << log.text();
    // Rank 0 says why it has no verbs; rank 1 that rank 0 has none.
    EXPECT_EQ(log.linesWith(rank == 0 ? "network: socket transport (no usable InfiniBand or RoCE"
                                      : "network: socket transport (rank 0 has no verbs)"),
              1)
        << log.text();
    EXPECT_EQ(log.linesWith("verbs transport on"), 0) << log.text();
  });
}

TEST(NetFallback, AGoodDeviceBesideBadOnesCarriesEverything) {
  runOnTwoHosts("efa,down,roce,roce_v1", [](int rank, const UniqueId& id) {
    CapturedLog log;
    Result<std::unique_ptr<Comm>> comm = joinOwnHost(id, rank);
    ASSERT_TRUE(comm.ok()) << comm.status().message();
    expectAllReduceSums(*comm.value());
    EXPECT_EQ(transport::socket::fifoConnections(), 0u);
    comm.value().reset();
    EXPECT_EQ(log.linesWith("network: verbs transport on emu_2:1 (emulated)"), 1) << log.text();
    EXPECT_EQ(log.linesWith("verbs: skipping emu_0: "), 1) << log.text();
    EXPECT_EQ(log.linesWith("verbs: skipping emu_1:1: port DOWN"), 1) << log.text();
    EXPECT_EQ(log.linesWith("verbs: skipping emu_3:1: no RoCE v2 GID"), 1) << log.text();
    EXPECT_EQ(log.linesWith("verbs: skipping"), 3) << log.text();
  });
}

TEST(NetFallback, NetIbWithOnlyUnusableDevicesIsRefusedNamingThem) {
  runOnTwoHosts("efa,no_gid", [](int rank, const UniqueId& id) {
    setenv("BRAID_NET", "IB", 1);
    setenv("BRAID_TIMEOUT_MS", "20000", 1);
    Result<std::unique_ptr<Comm>> comm = joinOwnHost(id, rank);
    ASSERT_FALSE(comm.ok());
    const std::string& why = comm.status().message();
    EXPECT_NE(why.find("BRAID_NET=IB, but rank "), std::string::npos) << why;
    EXPECT_NE(why.find("cannot use verbs"), std::string::npos) << why;
    // The rank that names itself says why, device by device.
    if (why.find("rank " + std::to_string(rank) + " cannot") != std::string::npos) {
      EXPECT_NE(why.find("emu_0: not an InfiniBand or RoCE device"), std::string::npos) << why;
      EXPECT_NE(why.find("emu_1:1: its GID table is empty"), std::string::npos) << why;
    }
  });
}

/// The connections this rank's socket FIFO ends opened for one all_reduce on a new
/// communicator, with the environment set now; checks the sums and the INFO line of `perEnd`.
uint64_t connectionsOfOneCall(const UniqueId& id, int rank, int perEnd) {
  CapturedLog log;
  const uint64_t before = transport::socket::fifoConnections();
  Result<std::unique_ptr<Comm>> comm = joinOwnHost(id, rank);
  EXPECT_TRUE(comm.ok()) << comm.status().message();
  if (!comm.ok()) return 0;
  expectAllReduceSums(*comm.value());
  comm.value().reset();
  EXPECT_EQ(log.linesWith(std::to_string(perEnd) + " connection(s) per FIFO end"), 1) << log.text();
  return transport::socket::fifoConnections() - before;
}

TEST(NetFallback, SocketFifoEndsOpenNthreadsTimesNsocksConnections) {
  Result<UniqueId> plain = Comm::newUniqueId();
  Result<UniqueId> striped = Comm::newUniqueId();
  ASSERT_TRUE(plain.ok() && striped.ok());
  testing::runProcesses(kRanks, [&](int rank) {
    setenv("BRAID_NET", "Socket", 1);
    setenv("BRAID_NCHANNELS", "2", 1);
    const uint64_t one = connectionsOfOneCall(plain.value(), rank, 1);
    setenv("NCCL_SOCKET_NTHREADS", "2", 1);
    setenv("NCCL_NSOCKS_PERTHREAD", "3", 1);
    const uint64_t six = connectionsOfOneCall(striped.value(), rank, 6);
    // The same FIFO ends, each on 2 x 3 connections instead of one.
    EXPECT_GT(one, 0u);
    EXPECT_EQ(six, 6 * one);
  });
}

}  // namespace
}  // namespace braid
