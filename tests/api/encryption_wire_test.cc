// What a capture of the wire holds while ranks that are processes broadcast a known payload over
// the socket transport (ranks on "hosts" of their own, BRAID_HOSTID; the packets on this
// machine's loopback): with encryption
// (ncclSetEncryption) not one 32-byte run of the payload; without it, the payload (which shows
// the capture sees the data path). The capture is real: an AF_PACKET socket bound to the
// loopback device, every packet of the run, bootstrap and watch included. It needs root
// (CAP_NET_RAW): skipped, saying so, without it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "support/multiprocess.h"
#include "support/scoped_env.h"

namespace encryption_wire_test {
namespace {

// Each test its own marker (33 bytes), so that the other's run, were ctest to run them at once,
// cannot show up in its capture.
constexpr char kPlainMarker[] = "BRAID-PLAINTEXT-MARKER-0123456789";
constexpr char kSealedMarker[] = "BRAID-MUST-NOT-BE-SEEN-9876543210";
constexpr size_t kPayloadBytes = size_t{1} << 20;
const char kKey[] = "braid-wire-capture-test-key-0123456789abcdef";

/// Every packet on the loopback device while it lives, kept in memory.
class LoopbackCapture {
 public:
  /// Empty when the capture is up; else why it cannot be (no CAP_NET_RAW).
  std::string start() {
    fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (fd_ < 0) return std::string("an AF_PACKET socket needs root: ") + strerror(errno);
    const int big = 64 << 20;  // room for the run's packets between two reads
    (void)setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
    sockaddr_ll at{};
    at.sll_family = AF_PACKET;
    at.sll_protocol = htons(ETH_P_ALL);
    at.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
    if (bind(fd_, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) {
      return std::string("binding the capture to lo: ") + strerror(errno);
    }
    thread_ = std::thread([this] { run(); });
    return "";
  }
  /// Stops and returns every byte captured.
  std::string stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return bytes_;
  }
  ~LoopbackCapture() { (void)stop(); }

 private:
  void run() {
    std::vector<char> packet(1 << 17);
    while (!stop_.load()) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(fd_, packet.data(), packet.size(), MSG_DONTWAIT);
      if (n > 0) bytes_.append(packet.data(), static_cast<size_t>(n));
    }
  }
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string bytes_;
};

/// A payload made of `marker` over and over.
std::vector<char> payload(const std::string& marker) {
  std::vector<char> p(kPayloadBytes);
  for (size_t i = 0; i < p.size(); ++i) p[i] = marker[i % marker.size()];
  return p;
}

/// Broadcasts a payload of `marker` from rank 0 to 2 processes over sockets; every rank checks it.
void broadcastOverSockets(const std::string& marker) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  braid::testing::runProcesses(2, [&](int rank) {
    // A host of its own (BRAID_HOSTID), so that the ranks meet over the socket transport.
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_HOSTID", rank == 0 ? "wire-test-a" : "wire-test-b", 1);
    setenv("BRAID_NET", "Socket", 1);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 2, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    const std::vector<char> expected = payload(marker);
    std::vector<char> buffer = rank == 0 ? expected : std::vector<char>(kPayloadBytes, 0);
    ASSERT_EQ(
        ncclBroadcast(buffer.data(), buffer.data(), buffer.size(), ncclInt8, 0, comm, nullptr),
        ncclSuccess)
        << ncclGetLastError(comm);
    EXPECT_EQ(buffer, expected) << "rank " << rank << " received another payload";
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

/// How many times the capture holds `marker`, whole.
size_t markersIn(const std::string& captured, const std::string& marker) {
  size_t found = 0;
  for (size_t at = captured.find(marker); at != std::string::npos;
       at = captured.find(marker, at + 1)) {
    ++found;
  }
  return found;
}

TEST(EncryptionWire, PlaintextRunShowsThePayload) {
  LoopbackCapture capture;
  const std::string why = capture.start();
  if (!why.empty()) GTEST_SKIP() << "no capture of the wire: " << why;
  broadcastOverSockets(kPlainMarker);
  EXPECT_GT(markersIn(capture.stop(), kPlainMarker), 0u)
      << "the capture missed the payload sent in plaintext: it does not see the data path";
}

TEST(EncryptionWire, EncryptedRunHidesThePayload) {
  LoopbackCapture capture;
  const std::string why = capture.start();
  if (!why.empty()) GTEST_SKIP() << "no capture of the wire: " << why;
  ncclEncryptionConfig_t config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  config.mode = NCCL_ENCRYPTION_MODE_PSK;
  config.psk = kKey;
  ASSERT_EQ(ncclSetEncryption(&config), ncclSuccess) << ncclGetLastError(nullptr);
  broadcastOverSockets(kSealedMarker);
  (void)ncclSetEncryption(nullptr);
  const std::string captured = capture.stop();
  EXPECT_GT(captured.size(), kPayloadBytes) << "the payload's ciphertext was not captured";
  EXPECT_EQ(markersIn(captured, kSealedMarker), 0u) << "plaintext of the payload crossed the wire";
}

}  // namespace
}  // namespace encryption_wire_test
