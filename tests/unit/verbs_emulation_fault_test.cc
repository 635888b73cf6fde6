// The emulated RoCE HCA when things go wrong: the transport timeout (a peer gone, a QP number
// nobody has, RoCE v1 GIDs no IP network routes), devices closed under live QPs, bytes on the
// wire that no HCA would send; and writes both ways between two processes.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "support/emulated_verbs.h"

namespace braid::transport::ib {
namespace {

using namespace verbs_test;  // NOLINT: the fixtures this file is written with

// --- Transport timeout -----------------------------------------------------------------------

/// Patience of 4.096 µs * 2^8 * 2 = 2.1 ms.
Path impatient() {
  Path p;
  p.timeout = 8;
  p.retryCnt = 1;
  return p;
}

/// Expects the write and the one after it to end as a QP with no reachable peer does.
void expectTimeout(Endpoint& a, Endpoint& b) {
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), 0);
  Write next = writeBetween(a, 0, b, 0, 8);
  next.wrId = 2;
  ASSERT_EQ(post(a.qp, next), 0);
  auto wc = pollFor(a.sendCq, 2);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(stateOf(a.qp), IBV_QPS_ERR);
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST_F(VerbsEmulationWrite, PeerDestroyedBeforeTheWriteTimesOut) {
  connect(impatient());
  ASSERT_EQ(verbs().destroyQp(b_.qp), 0);
  b_.qp = nullptr;
  expectTimeout(a_, b_);
}

TEST_F(VerbsEmulationWrite, QpNumberNobodyHasTimesOut) {
  Path p = loopbackPath(a_, b_, impatient());
  p.destQpNum = (b_.qp->qp_num & ~0xffu) | ((b_.qp->qp_num + 128) & 0xff);  // an unused slot
  bringUp(a_.qp, kRw, p);
  expectTimeout(a_, b_);
}

TEST_F(VerbsEmulationWrite, RoceV1SourceGidNeverArrives) {
  Path p = loopbackPath(a_, b_, impatient());
  p.sgidIndex = 0;  // RoCE v1
  bringUp(a_.qp, kRw, p);
  bringUp(b_.qp, kRw, loopbackPath(b_, a_));
  expectTimeout(a_, b_);
  EXPECT_EQ(std::vector<uint8_t>(b_.memory.size(), 0), b_.memory);
}

TEST_F(VerbsEmulationWrite, RoceV1DestinationGidNeverArrives) {
  Path p = loopbackPath(a_, b_, impatient());
  ASSERT_EQ(verbs().queryGid(b_.context, 1, 0, &p.dgid), 0);  // b's RoCE v1 GID
  bringUp(a_.qp, kRw, p);
  bringUp(b_.qp, kRw, loopbackPath(b_, a_));
  expectTimeout(a_, b_);
}

// --- Lifetime --------------------------------------------------------------------------------

size_t threadCount() {
  size_t n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) n += entry->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

TEST(VerbsEmulationLifetime, ClosingTheDeviceLeavesNoThread) {
  // A thread started and joined first: ThreadSanitizer starts a thread of its own at a
  // process's first pthread_create, which would otherwise count as the device's.
  std::thread([] {}).join();
  size_t before = threadCount();
  ibv_context* context = openDevice();
  ASSERT_NE(context, nullptr);
  {
    Endpoint a(context);
    Endpoint b(context);
    ASSERT_TRUE(a.ok() && b.ok());
    connectPair(a, b);
    ASSERT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), 0);
    ASSERT_EQ(pollFor(a.sendCq, 1).size(), 1u);
    EXPECT_GT(threadCount(), before);
  }
  // A context closed with its objects still there destroys them, threads and all, as the kernel
  // does when a process closes its verbs device.
  Endpoint c(context);
  Endpoint d(context);
  ASSERT_TRUE(c.ok() && d.ok());
  connectPair(c, d);
  Write w = writeBetween(c, 0, d, 0, 8);
  w.imm = 1;  // no receive posted: the responder waits for one (rnr_retry 7) when the close comes
  ASSERT_EQ(post(c.qp, w), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(verbs().closeDevice(context), 0);
  c.forget();
  d.forget();
  // At most as many: a thread of an earlier test in this binary may have ended meanwhile.
  EXPECT_LE(threadCount(), before);
}

// --- Bytes no HCA sends ----------------------------------------------------------------------

/// A TCP connection to the listener of the HCA that owns `qpNum`, over loopback.
int connectToHca(uint32_t qpNum) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(qpNum >> 8));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

/// Reads `n` bytes; false on EOF, error or the 5 s timeout.
bool readExactly(int fd, void* data, size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

/// Says hello to `target` as QP `from`; true when accepted.
bool greet(int fd, uint32_t from, uint32_t target) {
  wire::Hello hello;
  hello.srcQpNum = from;
  hello.dstQpNum = target;
  auto bytes = wire::encodeHello(hello);
  if (write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) return false;
  uint8_t reply[wire::kHelloReplyBytes];
  if (!readExactly(fd, reply, sizeof(reply))) return false;
  return wire::decodeHelloReply(reply) == wire::HelloVerdict::kAccepted;
}

TEST(VerbsEmulationWire, ResponderSurvivesBytesNoHcaSends) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  Endpoint b(device.context);
  ASSERT_TRUE(b.ok());
  constexpr uint32_t kFakePeer = 0x123456;
  Path p = loopbackPath(b, b);
  p.destQpNum = kFakePeer;
  bringUp(b.qp, kRw, p);

  int fd = connectToHca(b.qp->qp_num);  // not a hello: refused, nothing else happens
  ASSERT_GE(fd, 0);
  uint8_t junk[wire::kHelloBytes];
  memset(junk, 0xee, sizeof(junk));
  ASSERT_EQ(write(fd, junk, sizeof(junk)), static_cast<ssize_t>(sizeof(junk)));
  uint8_t byte;
  EXPECT_LE(read(fd, &byte, 1), 0);
  close(fd);

  fd = connectToHca(b.qp->qp_num);  // a hello from a QP b does not talk to: refused
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(greet(fd, kFakePeer + 1, b.qp->qp_num));
  close(fd);

  fd = connectToHca(b.qp->qp_num);  // a write past the region: NAK, nothing written
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(greet(fd, kFakePeer, b.qp->qp_num));
  wire::RequestHeader header;
  header.rkey = b.mr->rkey;
  header.remoteAddr = b.addr(b.memory.size() - 4);
  header.length = 8;
  auto bytes = wire::encodeRequest(header);
  uint8_t payload[8];
  memset(payload, 0xff, sizeof(payload));
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(write(fd, payload, sizeof(payload)), static_cast<ssize_t>(sizeof(payload)));
  uint8_t response[wire::kResponseBytes];
  ASSERT_TRUE(readExactly(fd, response, sizeof(response)));
  EXPECT_EQ(wire::decodeResponse(response)->kind, wire::ResponseKind::kNakRemoteAccess);
  EXPECT_EQ(std::vector<uint8_t>(b.memory.size(), 0), b.memory);
  EXPECT_TRUE(waitForState(b.qp, IBV_QPS_ERR));
  close(fd);

  // An unknown opcode, and a length past 1 GiB, from an accepted peer: the QP goes to ERR.
  for (int variant = 0; variant < 2; ++variant) {
    Endpoint c(device.context);
    ASSERT_TRUE(c.ok());
    Path q = loopbackPath(c, c);
    q.destQpNum = kFakePeer;
    bringUp(c.qp, kRw, q);
    fd = connectToHca(c.qp->qp_num);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(greet(fd, kFakePeer, c.qp->qp_num));
    header.rkey = c.mr->rkey;
    header.remoteAddr = c.addr();
    header.length = variant == 0 ? 8 : (uint64_t{1} << 31);
    bytes = wire::encodeRequest(header);
    if (variant == 0) bytes[0] = 99;  // opcode
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    EXPECT_LE(read(fd, &byte, 1), 0) << "the connection closes";
    EXPECT_TRUE(waitForState(c.qp, IBV_QPS_ERR)) << variant;
    close(fd);
  }
}

// --- Between processes -----------------------------------------------------------------------

/// What each process tells the other about its QP and buffer.
struct Card {
  uint32_t qpNum;
  ibv_gid gid;
  uint64_t addr;
  uint32_t rkey;
};

constexpr size_t kProcessBytes = 1 << 16;

bool sendAllFd(int fd, const void* data, size_t n) {
  return write(fd, data, n) == static_cast<ssize_t>(n);
}

/// One side of the exchange: 0 on success, else the step that failed (the child's exit code).
int exchangeWrites(int fd, uint8_t mine, uint8_t theirs) {
  Device device;
  if (device.context == nullptr) return 10;
  EndpointOptions options;
  options.bytes = 2 * kProcessBytes;  // the first half is written by the peer, the second sent
  Endpoint e(device.context, options);
  if (!e.ok()) return 11;
  int gidIndex = loopbackGidIndex(e.context);
  if (gidIndex < 0) return 12;
  if (toInit(e.qp, kRw) != 0) return 13;
  if (postReceives(e.qp, 1, 7) != 0) return 14;
  Card card{e.qp->qp_num, {}, e.addr(), e.mr->rkey};
  verbs().queryGid(e.context, 1, gidIndex, &card.gid);
  Card peer{};
  if (!sendAllFd(fd, &card, sizeof(card)) || !readExactly(fd, &peer, sizeof(peer))) return 15;
  Path path;
  path.dgid = peer.gid;
  path.destQpNum = peer.qpNum;
  path.sgidIndex = gidIndex;
  ibv_qp_attr rtr = rtrAttr(path);
  ibv_qp_attr rts = rtsAttr(path);
  if (verbs().modifyQp(e.qp, &rtr, kRtrMask) != 0) return 16;
  if (verbs().modifyQp(e.qp, &rts, kRtsMask) != 0) return 17;
  for (size_t i = 0; i < kProcessBytes; ++i) e.memory[kProcessBytes + i] = mine ^ (i & 0x7f);
  Write w;
  w.local = e.memory.data() + kProcessBytes;
  w.length = kProcessBytes;
  w.lkey = e.mr->lkey;
  w.remote = peer.addr;
  w.rkey = peer.rkey;
  w.imm = mine;
  if (post(e.qp, w) != 0) return 18;
  auto recv = pollFor(e.recvCq, 1);
  if (recv.size() != 1 || recv[0].status != IBV_WC_SUCCESS) return 19;
  if (ntohl(recv[0].imm_data) != theirs || recv[0].byte_len != kProcessBytes) return 20;
  for (size_t i = 0; i < kProcessBytes; ++i) {
    if (e.memory[i] != (theirs ^ (i & 0x7f))) return 21;
  }
  auto send = pollFor(e.sendCq, 1);
  if (send.size() != 1 || send[0].status != IBV_WC_SUCCESS) return 22;
  // Both are done before either tears down: the other's ACK may still be on its way.
  char done = 'd';
  if (!sendAllFd(fd, &done, 1) || !readExactly(fd, &done, 1)) return 23;
  return 0;
}

TEST(VerbsEmulationProcess, WritesBothWaysBetweenForkedProcesses) {
  emulateDevices(1);
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  pid_t pid = fork();  // before any device is open here: the child inherits no HCA thread
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    alarm(30);  // never outlive a parent that failed
    _exit(exchangeWrites(sv[1], 0xc1, 0x9a));
  }
  close(sv[1]);
  timeval tv{15, 0};
  setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  int parent = exchangeWrites(sv[0], 0x9a, 0xc1);
  close(sv[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(parent, 0) << "the parent failed at step " << parent;
  ASSERT_TRUE(WIFEXITED(status)) << "the child died (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child failed at step " << WEXITSTATUS(status);
}

}  // namespace
}  // namespace braid::transport::ib
