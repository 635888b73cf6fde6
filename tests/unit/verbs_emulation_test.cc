// The emulated RoCE HCA (transport/net/ib/verbs_emulated.h), driven through the verbs seam as
// the transport drives a real one: devices, ports and GIDs; registration and the QP state
// machine; RDMA writes with and without immediate between QPs over loopback, with every check
// a responder and a requester make (rkey, bounds, access, lkey, RNR, the transport timeout);
// bytes on the wire that no HCA would send; and writes both ways between two processes.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "transport/net/ib/emulated_hca_wire.h"
#include "transport/net/ib/verbs_emulated.h"

namespace braid::transport::ib {
namespace {

const VerbsApi& verbs() { return emulatedVerbs(); }

constexpr int kRw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
constexpr int64_t kCompletionWaitMs = 5000;  // generous: the machine may be busy

/// Sets an environment variable until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// Opens emulated device `index` of `count`.
ibv_context* openDevice(int index = 0, int count = 1) {
  ScopedEnv env("BRAID_IB_EMULATE", std::to_string(count).c_str());
  int n = 0;
  ibv_device** list = verbs().getDeviceList(&n);
  ibv_context* context = index < n ? verbs().openDevice(list[index]) : nullptr;
  verbs().freeDeviceList(list);
  return context;
}

/// The closing half of openDevice, for tests.
struct Device {
  explicit Device(int index = 0, int count = 1) : context(openDevice(index, count)) {}
  ~Device() {
    if (context != nullptr) {
      EXPECT_EQ(verbs().closeDevice(context), 0);
    }
  }
  ibv_context* context;
};

bool isLoopbackV4(const ibv_gid& gid) {
  static const uint8_t kMapped127[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
  return memcmp(gid.raw, kMapped127, 16) == 0;
}

/// The index of the RoCE v2 GID ::ffff:127.0.0.1, or -1.
int loopbackGidIndex(ibv_context* context) {
  ibv_gid gid;
  for (int i = 0; verbs().queryGid(context, 1, i, &gid) == 0; ++i) {
    if (isLoopbackV4(gid) && verbs().gidType(context, 1, i) == GidType::kRoceV2) return i;
  }
  return -1;
}

struct EndpointOptions {
  size_t bytes = 4096;
  int mrAccess = kRw;
  int qpAccess = kRw;
  uint32_t maxSendWr = 1024;
  uint32_t maxRecvWr = 1024;
  int cqEntries = 4096;
};

/// A QP with its PD, CQs and a registered buffer.
struct Endpoint {
  explicit Endpoint(ibv_context* c, EndpointOptions o = {}) : context(c), memory(o.bytes, 0) {
    pd = verbs().allocPd(context);
    sendCq = verbs().createCq(context, o.cqEntries);
    recvCq = verbs().createCq(context, o.cqEntries);
    mr = verbs().regMr(pd, memory.data(), memory.size(), o.mrAccess);
    ibv_qp_init_attr init{};
    init.send_cq = sendCq;
    init.recv_cq = recvCq;
    init.qp_type = IBV_QPT_RC;
    init.cap = {o.maxSendWr, o.maxRecvWr, 1, 1, 64};
    qp = verbs().createQp(pd, &init);
    qpAccess = o.qpAccess;
  }
  ~Endpoint() {
    // Null where creation failed (the test has failed already) or the context took them.
    EXPECT_EQ(qp != nullptr ? verbs().destroyQp(qp) : 0, 0);
    EXPECT_EQ(mr != nullptr ? verbs().deregMr(mr) : 0, 0);
    EXPECT_EQ(sendCq != nullptr ? verbs().destroyCq(sendCq) : 0, 0);
    EXPECT_EQ(recvCq != nullptr ? verbs().destroyCq(recvCq) : 0, 0);
    EXPECT_EQ(pd != nullptr ? verbs().deallocPd(pd) : 0, 0);
  }
  /// Its verbs objects went with their context: nothing left to destroy.
  void forget() { pd = nullptr, sendCq = nullptr, recvCq = nullptr, mr = nullptr, qp = nullptr; }
  bool ok() const { return pd && sendCq && recvCq && mr && qp; }
  uint64_t addr(size_t offset = 0) const {
    return reinterpret_cast<uintptr_t>(memory.data()) + offset;
  }

  ibv_context* context;
  std::vector<uint8_t> memory;
  ibv_pd* pd = nullptr;
  ibv_cq* sendCq = nullptr;
  ibv_cq* recvCq = nullptr;
  ibv_mr* mr = nullptr;
  ibv_qp* qp = nullptr;
  int qpAccess = kRw;
};

/// Where a QP sends, and how patiently.
struct Path {
  ibv_gid dgid{};
  uint32_t destQpNum = 0;
  int sgidIndex = 0;
  uint8_t timeout = 18;  // 1.07 s per try: never reached on a busy machine either
  uint8_t retryCnt = 7;
  uint8_t rnrRetry = 7;
  uint8_t minRnrTimer = 12;
};

int toInit(ibv_qp* qp, int access) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = access;
  return verbs().modifyQp(qp, &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRtsMask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                         IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

ibv_qp_attr rtrAttr(const Path& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_4096;
  a.dest_qp_num = p.destQpNum;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = p.minRnrTimer;
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = 1;
  a.ah_attr.grh.dgid = p.dgid;
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(p.sgidIndex);
  a.ah_attr.grh.hop_limit = 255;
  return a;
}

ibv_qp_attr rtsAttr(const Path& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = p.timeout;
  a.retry_cnt = p.retryCnt;
  a.rnr_retry = p.rnrRetry;
  a.max_rd_atomic = 1;
  return a;
}

/// Brings `qp` from RESET to RTS along `path`.
void bringUp(ibv_qp* qp, int access, const Path& path) {
  ASSERT_EQ(toInit(qp, access), 0);
  ibv_qp_attr rtr = rtrAttr(path);
  ASSERT_EQ(verbs().modifyQp(qp, &rtr, kRtrMask), 0);
  ibv_qp_attr rts = rtsAttr(path);
  ASSERT_EQ(verbs().modifyQp(qp, &rts, kRtsMask), 0);
}

/// The path from `from` to `to` over loopback, with `from`'s patience.
Path loopbackPath(const Endpoint& from, const Endpoint& to, Path patience = {}) {
  Path p = patience;
  p.sgidIndex = loopbackGidIndex(from.context);
  int peerIndex = loopbackGidIndex(to.context);
  EXPECT_GE(p.sgidIndex, 0);
  EXPECT_EQ(verbs().queryGid(to.context, 1, peerIndex, &p.dgid), 0);
  p.destQpNum = to.qp->qp_num;
  return p;
}

/// Connects `a` and `b` both ways; `aPatience` is a's timeouts and retries.
void connectPair(Endpoint& a, Endpoint& b, Path aPatience = {}, Path bPatience = {}) {
  bringUp(a.qp, a.qpAccess, loopbackPath(a, b, aPatience));
  bringUp(b.qp, b.qpAccess, loopbackPath(b, a, bPatience));
}

struct Write {
  uint64_t wrId = 1;
  const void* local = nullptr;
  uint32_t length = 0;
  uint32_t lkey = 0;
  uint64_t remote = 0;
  uint32_t rkey = 0;
  std::optional<uint32_t> imm;  // host order; sent in network order
  bool signaled = true;
  bool inlined = false;
};

int post(ibv_qp* qp, const Write& w) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(w.local), w.length, w.lkey};
  ibv_send_wr wr{};
  wr.wr_id = w.wrId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = w.imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  wr.imm_data = w.imm ? htonl(*w.imm) : 0;
  wr.send_flags = (w.signaled ? IBV_SEND_SIGNALED : 0) | (w.inlined ? IBV_SEND_INLINE : 0);
  wr.wr.rdma.remote_addr = w.remote;
  wr.wr.rdma.rkey = w.rkey;
  ibv_send_wr* bad = nullptr;
  return verbs().postSend(qp, &wr, &bad);
}

/// A write of `length` bytes from a's buffer at `from` to b's buffer at `to`.
Write writeBetween(const Endpoint& a, size_t from, const Endpoint& b, size_t to, uint32_t length) {
  Write w;
  w.local = a.memory.data() + from;
  w.length = length;
  w.lkey = a.mr->lkey;
  w.remote = b.addr(to);
  w.rkey = b.mr->rkey;
  return w;
}

int postReceives(ibv_qp* qp, int count, uint64_t firstId = 100) {
  for (int i = 0; i < count; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = firstId + i;
    ibv_recv_wr* bad = nullptr;
    if (int rc = verbs().postRecv(qp, &wr, &bad); rc != 0) return rc;
  }
  return 0;
}

/// Polls until `n` completions arrived or `ms` passed.
std::vector<ibv_wc> pollFor(ibv_cq* cq, size_t n, int64_t ms = kCompletionWaitMs) {
  std::vector<ibv_wc> got;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (got.size() < n && std::chrono::steady_clock::now() < until) {
    ibv_wc wc[16];
    int k = verbs().pollCq(cq, static_cast<int>(std::min<size_t>(16, n - got.size())), wc);
    if (k < 0) break;
    got.insert(got.end(), wc, wc + k);
    if (k == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return got;
}

/// qp->state, which the emulation's threads change as the test reads it.
ibv_qp_state stateOf(ibv_qp* qp) { return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE); }

/// Memory an HCA may be writing into while the CPU reads it, as with any RDMA: a race by
/// design, hidden from ThreadSanitizer.
__attribute__((no_sanitize("thread"))) uint64_t readWhileHcaWrites(const uint64_t* p) {
  return *reinterpret_cast<const volatile uint64_t*>(p);
}

/// Waits until `qp` reports `state`, up to `ms`.
bool waitForState(ibv_qp* qp, ibv_qp_state state, int64_t ms = kCompletionWaitMs) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (stateOf(qp) != state && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return stateOf(qp) == state;
}

/// a and b on emu_0, connected both ways over loopback.
class VerbsEmulationWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(device_.context, nullptr);
    ASSERT_TRUE(a_.ok() && b_.ok());
  }
  void connect(Path aPatience = {}, Path bPatience = {}) {
    connectPair(a_, b_, aPatience, bPatience);
  }
  /// The write of `length` bytes from a's buffer start to b's at `to`.
  Write aToB(size_t to, uint32_t length) { return writeBetween(a_, 0, b_, to, length); }
  /// Expects one failed write on a: `status`, a's QP in ERR, b's memory all zero.
  void expectRefused(ibv_wc_status status) {
    auto wc = pollFor(a_.sendCq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, status);
    EXPECT_EQ(wc[0].qp_num, a_.qp->qp_num);
    EXPECT_EQ(stateOf(a_.qp), IBV_QPS_ERR);
    EXPECT_EQ(std::vector<uint8_t>(b_.memory.size(), 0), b_.memory);
  }

  Device device_;
  Endpoint a_{device_.context};
  Endpoint b_{device_.context};
};

// --- Devices, ports, GIDs --------------------------------------------------------------------

TEST(VerbsEmulationDevice, ListsTheDevicesTheEnvironmentAsksFor) {
  {
    ScopedEnv env("BRAID_IB_EMULATE", "2");
    int n = -1;
    ibv_device** list = verbs().getDeviceList(&n);
    ASSERT_NE(list, nullptr);
    ASSERT_EQ(n, 2);
    EXPECT_STREQ(verbs().getDeviceName(list[0]), "emu_0");
    EXPECT_STREQ(verbs().getDeviceName(list[1]), "emu_1");
    EXPECT_STREQ(list[1]->name, "emu_1");
    EXPECT_NE(list[1]->dev_name[0], '\0');
    EXPECT_EQ(list[0]->node_type, IBV_NODE_CA);
    EXPECT_EQ(list[0]->transport_type, IBV_TRANSPORT_IB);
    EXPECT_EQ(list[2], nullptr);
    ibv_context* context = verbs().openDevice(list[1]);
    verbs().freeDeviceList(list);  // the context stays usable
    ASSERT_NE(context, nullptr);
    EXPECT_STREQ(context->device->name, "emu_1");
    EXPECT_EQ(verbs().closeDevice(context), 0);
  }
  for (const char* value : {"0", "9", "two", ""}) {
    ScopedEnv env("BRAID_IB_EMULATE", value);
    int n = -1;
    ibv_device** list = verbs().getDeviceList(&n);
    EXPECT_EQ(n, 0) << value;
    ASSERT_NE(list, nullptr);
    EXPECT_EQ(list[0], nullptr);
    verbs().freeDeviceList(list);
  }
}

TEST(VerbsEmulationDevice, ReportsItsPortAndLimits) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_device_attr dev{};
  ASSERT_EQ(verbs().queryDevice(device.context, &dev), 0);
  EXPECT_EQ(dev.phys_port_cnt, 1);
  EXPECT_EQ(dev.max_qp, 256);
  EXPECT_EQ(dev.max_qp_wr, 1024);
  EXPECT_EQ(dev.max_sge, 4);
  EXPECT_EQ(dev.max_cq, 1024);
  EXPECT_EQ(dev.max_cqe, 65536);
  EXPECT_EQ(dev.max_mr, 65536);
  EXPECT_EQ(dev.max_mr_size, uint64_t{1} << 40);
  EXPECT_EQ(dev.max_qp_rd_atom, 16);
  EXPECT_EQ(dev.vendor_id, 0u);
  EXPECT_STREQ(dev.fw_ver, "braid-emulated");

  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(device.context, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(port.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(port.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(port.lid, 0);
  EXPECT_EQ(port.active_width, 2);
  EXPECT_EQ(port.active_speed, 32);
  EXPECT_EQ(port.phys_state, 5);
  EXPECT_GE(port.gid_tbl_len, 2);
  EXPECT_EQ(verbs().queryPort(device.context, 2, &port), EINVAL);
  EXPECT_EQ(verbs().queryPort(device.context, 0, &port), EINVAL);
}

TEST(VerbsEmulationDevice, GidTableHasRoceV1FirstAndLoopbackLast) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(device.context, 1, &port), 0);
  ibv_gid gid;
  ASSERT_EQ(verbs().queryGid(device.context, 1, 0, &gid), 0);
  EXPECT_EQ(gid.raw[0], 0xfe);
  EXPECT_EQ(gid.raw[1], 0x80);
  EXPECT_EQ(verbs().gidType(device.context, 1, 0), GidType::kRoceV1);
  int loopback = loopbackGidIndex(device.context);
  ASSERT_GT(loopback, 0) << "no RoCE v2 GID ::ffff:127.0.0.1";
  bool seenLoopback = false;
  for (int i = 1; i < port.gid_tbl_len; ++i) {
    ASSERT_EQ(verbs().queryGid(device.context, 1, i, &gid), 0);
    EXPECT_EQ(verbs().gidType(device.context, 1, i), GidType::kRoceV2) << i;
    EXPECT_FALSE(gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80) << "link-local at " << i;
    static const uint8_t kLoopbackV6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    bool isLoopback = gid.raw[10] == 0xff && gid.raw[11] == 0xff && gid.raw[12] == 127;
    isLoopback = isLoopback || memcmp(gid.raw, kLoopbackV6, 16) == 0;
    EXPECT_TRUE(isLoopback || !seenLoopback) << "a non-loopback GID after loopback at " << i;
    seenLoopback = seenLoopback || isLoopback;
  }
  EXPECT_EQ(verbs().queryGid(device.context, 1, port.gid_tbl_len, &gid), EINVAL);
  EXPECT_EQ(verbs().queryGid(device.context, 1, -1, &gid), EINVAL);
  EXPECT_EQ(verbs().queryGid(device.context, 2, 0, &gid), EINVAL);
  EXPECT_EQ(verbs().gidType(device.context, 1, port.gid_tbl_len), GidType::kUnknown);
}

// --- Memory regions, queue pairs ---------------------------------------------------------------

TEST(VerbsEmulationMemory, RegistrationChecksItsArguments) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_pd* pd = verbs().allocPd(device.context);
  ASSERT_NE(pd, nullptr);
  std::vector<uint8_t> buffer(4096);
  errno = 0;
  EXPECT_EQ(verbs().regMr(pd, buffer.data(), buffer.size(), IBV_ACCESS_REMOTE_WRITE), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(verbs().regMr(pd, nullptr, buffer.size(), kRw), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(verbs().regMr(pd, buffer.data(), 0, kRw), nullptr);
  EXPECT_EQ(errno, EINVAL);
  ibv_mr* first = verbs().regMr(pd, buffer.data(), buffer.size(), kRw);
  ibv_mr* second = verbs().regMr(pd, buffer.data(), 64, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->addr, buffer.data());
  EXPECT_EQ(first->length, buffer.size());
  EXPECT_EQ(first->pd, pd);
  std::vector<uint32_t> keys = {first->lkey, first->rkey, second->lkey, second->rkey};
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_NE(keys[i], 0u);
    for (size_t j = 0; j < i; ++j) EXPECT_NE(keys[i], keys[j]);
  }
  EXPECT_EQ(verbs().deallocPd(pd), EBUSY);
  EXPECT_EQ(verbs().deregMr(first), 0);
  EXPECT_EQ(verbs().deregMr(second), 0);
  EXPECT_EQ(verbs().deallocPd(pd), 0);
}

TEST(VerbsEmulationQp, StateMachineChecksTransitionsAndMasks) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  Endpoint e(device.context);
  ASSERT_TRUE(e.ok());
  ibv_qp_init_attr ud{};
  ud.send_cq = e.sendCq;
  ud.recv_cq = e.recvCq;
  ud.qp_type = IBV_QPT_UD;
  ud.cap = {16, 16, 1, 1, 0};
  errno = 0;
  EXPECT_EQ(verbs().createQp(e.pd, &ud), nullptr);
  EXPECT_EQ(errno, EINVAL);
  Write w = writeBetween(e, 0, e, 64, 8);
  EXPECT_EQ(post(e.qp, w), EINVAL) << "post_send in RESET";
  EXPECT_EQ(postReceives(e.qp, 1), EINVAL) << "post_recv in RESET";

  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.port_num = 1;
  init.qp_access_flags = kRw;
  EXPECT_EQ(verbs().modifyQp(e.qp, &init, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL)
      << "RESET -> INIT without PKEY_INDEX";
  constexpr int kInitMask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  init.port_num = 2;
  EXPECT_EQ(verbs().modifyQp(e.qp, &init, kInitMask), EINVAL) << "port 2";
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RESET);
  init.port_num = 1;
  ASSERT_EQ(verbs().modifyQp(e.qp, &init, kInitMask), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_INIT);
  EXPECT_EQ(post(e.qp, w), EINVAL) << "post_send in INIT";
  EXPECT_EQ(postReceives(e.qp, 1), 0) << "post_recv in INIT";

  Path path = loopbackPath(e, e);
  ibv_qp_attr rts = rtsAttr(path);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rts, kRtsMask), EINVAL) << "INIT -> RTS";
  ibv_qp_attr rtr = rtrAttr(path);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask & ~IBV_QP_MIN_RNR_TIMER), EINVAL);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask | IBV_QP_SQ_PSN), EINVAL) << "extra attribute";
  rtr.ah_attr.is_global = 0;
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask), EINVAL) << "RoCE needs a GRH";
  rtr = rtrAttr(path);
  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(e.context, 1, &port), 0);
  rtr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port.gid_tbl_len);
  EXPECT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask), EINVAL) << "sgid_index past the table";
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_INIT);
  rtr = rtrAttr(path);
  ASSERT_EQ(verbs().modifyQp(e.qp, &rtr, kRtrMask), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RTR);
  EXPECT_EQ(post(e.qp, w), EINVAL) << "post_send in RTR";
  EXPECT_EQ(verbs().modifyQp(e.qp, &rts, kRtsMask & ~IBV_QP_SQ_PSN), EINVAL);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RTR);
  ASSERT_EQ(verbs().modifyQp(e.qp, &rts, kRtsMask), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RTS);
  ibv_qp_attr same{};
  same.qp_state = IBV_QPS_RTS;
  EXPECT_EQ(verbs().modifyQp(e.qp, &same, IBV_QP_STATE), 0);

  EXPECT_EQ(verbs().destroyCq(e.sendCq), EBUSY);
  EXPECT_EQ(verbs().deallocPd(e.pd), EBUSY);

  ibv_qp_attr err{};
  err.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(verbs().modifyQp(e.qp, &err, IBV_QP_STATE), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_ERR);
  auto flushedRecv = pollFor(e.recvCq, 1);  // the receive posted in INIT
  ASSERT_EQ(flushedRecv.size(), 1u);
  EXPECT_EQ(flushedRecv[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(post(e.qp, w), 0) << "post_send in ERR is accepted and flushed";
  auto flushedSend = pollFor(e.sendCq, 1);
  ASSERT_EQ(flushedSend.size(), 1u);
  EXPECT_EQ(flushedSend[0].status, IBV_WC_WR_FLUSH_ERR);
  ibv_qp_attr reset{};
  reset.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(verbs().modifyQp(e.qp, &reset, IBV_QP_STATE), 0);
  EXPECT_EQ(stateOf(e.qp), IBV_QPS_RESET);
}

TEST(VerbsEmulationQp, QpNumbersRunOutAt256) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  Endpoint e(device.context);
  ASSERT_TRUE(e.ok());
  std::vector<ibv_qp*> qps = {e.qp};
  ibv_qp_init_attr init{};
  init.send_cq = e.sendCq;
  init.recv_cq = e.recvCq;
  init.qp_type = IBV_QPT_RC;
  init.cap = {4, 4, 1, 1, 0};
  while (qps.size() < 256) {
    ibv_qp* qp = verbs().createQp(e.pd, &init);
    ASSERT_NE(qp, nullptr) << qps.size();
    for (ibv_qp* other : qps) ASSERT_NE(other->qp_num, qp->qp_num);
    EXPECT_EQ(qp->qp_num >> 8, e.qp->qp_num >> 8) << "the listener's port";
    qps.push_back(qp);
  }
  errno = 0;
  EXPECT_EQ(verbs().createQp(e.pd, &init), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  for (size_t i = 1; i < qps.size(); ++i) EXPECT_EQ(verbs().destroyQp(qps[i]), 0);
  ibv_qp* again = verbs().createQp(e.pd, &init);
  EXPECT_NE(again, nullptr);
  if (again != nullptr) {
    EXPECT_EQ(verbs().destroyQp(again), 0);
  }
}

TEST(VerbsEmulationQp, SendQueueHoldsMaxSendWrAndDestroyDoesNotWait) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  EndpointOptions options;
  options.maxSendWr = 4;
  Endpoint a(device.context, options);
  Endpoint b(device.context);
  ASSERT_TRUE(a.ok() && b.ok());
  Path never = loopbackPath(a, b);
  never.sgidIndex = 0;  // RoCE v1: nothing ever leaves
  never.timeout = 0;    // and nothing ever times out
  bringUp(a.qp, kRw, never);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), 0);
  EXPECT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), ENOMEM);
}

TEST(VerbsEmulationQp, OverrunCompletionQueueFailsEveryPoll) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  EndpointOptions options;
  options.cqEntries = 2;
  Endpoint e(device.context, options);
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(toInit(e.qp, kRw), 0);
  ibv_qp_attr err{};
  err.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(verbs().modifyQp(e.qp, &err, IBV_QP_STATE), 0);
  ASSERT_EQ(postReceives(e.qp, 2), 0);
  ibv_wc wc[4];
  EXPECT_EQ(verbs().pollCq(e.recvCq, 4, wc), 2);
  ASSERT_EQ(postReceives(e.qp, 3), 0);  // three flushes into two entries
  EXPECT_EQ(verbs().pollCq(e.recvCq, 4, wc), -1);
  EXPECT_EQ(verbs().pollCq(e.recvCq, 4, wc), -1);
}

// --- Writes over loopback --------------------------------------------------------------------

TEST_F(VerbsEmulationWrite, WriteWithImmediateLandsAndCompletes) {
  connect();
  ASSERT_EQ(postReceives(b_.qp, 1, 77), 0);
  const char text[] = "over the emulated fabric";
  memcpy(a_.memory.data(), text, sizeof(text));
  Write w = aToB(100, sizeof(text));
  w.wrId = 5;
  w.imm = 0xa1b2c3d4;
  ASSERT_EQ(post(a_.qp, w), 0);
  auto recv = pollFor(b_.recvCq, 1);
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(recv[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(recv[0].wr_id, 77u);
  EXPECT_EQ(recv[0].byte_len, sizeof(text));
  EXPECT_TRUE(recv[0].wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(recv[0].imm_data), 0xa1b2c3d4u);
  EXPECT_EQ(recv[0].qp_num, b_.qp->qp_num);
  EXPECT_EQ(recv[0].src_qp, a_.qp->qp_num);
  EXPECT_STREQ(reinterpret_cast<const char*>(b_.memory.data() + 100), text);  // before the CQE
  auto send = pollFor(a_.sendCq, 1);
  ASSERT_EQ(send.size(), 1u);
  EXPECT_EQ(send[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(send[0].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(send[0].wr_id, 5u);
  EXPECT_EQ(send[0].qp_num, a_.qp->qp_num);

  // Inline: the source may change as soon as post returns.
  ASSERT_EQ(postReceives(b_.qp, 1), 0);
  uint64_t value = 0x1122334455667788;
  Write in = aToB(200, 8);
  in.local = &value;
  in.lkey = 0;  // not checked for inline data
  in.inlined = true;
  in.imm = 1;
  ASSERT_EQ(post(a_.qp, in), 0);
  value = 0;
  ASSERT_EQ(pollFor(b_.recvCq, 1).size(), 1u);
  uint64_t landed;
  memcpy(&landed, b_.memory.data() + 200, 8);
  EXPECT_EQ(landed, 0x1122334455667788u);
}

TEST(VerbsEmulationOrder, ThousandWritesIntoOneSlotArriveInOrder) {
  Device d0(0, 2);
  Device d1(1, 2);  // a device of its own: its own listener, QP numbers and keys
  ASSERT_NE(d0.context, nullptr);
  ASSERT_NE(d1.context, nullptr);
  constexpr int kWrites = 1000;
  EndpointOptions options;
  options.bytes = kWrites * sizeof(uint64_t);
  Endpoint a(d0.context, options);
  Endpoint b(d1.context, options);
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  ASSERT_EQ(postReceives(b.qp, kWrites), 0);
  auto* sequence = reinterpret_cast<uint64_t*>(a.memory.data());
  for (int i = 0; i < kWrites; ++i) sequence[i] = static_cast<uint64_t>(i) + 1;
  for (int i = 0; i < kWrites; ++i) {
    Write w = writeBetween(a, i * sizeof(uint64_t), b, 0, sizeof(uint64_t));
    w.wrId = static_cast<uint64_t>(i);
    w.imm = static_cast<uint32_t>(i);
    ASSERT_EQ(post(a.qp, w), 0) << i;
  }
  const auto* slot = reinterpret_cast<const uint64_t*>(b.memory.data());
  for (int i = 0; i < kWrites; ++i) {
    auto wc = pollFor(b.recvCq, 1);
    ASSERT_EQ(wc.size(), 1u) << i;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS);
    ASSERT_EQ(ntohl(wc[0].imm_data), static_cast<uint32_t>(i));
    // Write i is in memory before its completion; later ones may have landed too.
    ASSERT_GE(readWhileHcaWrites(slot), static_cast<uint64_t>(i) + 1) << "write " << i;
  }
  EXPECT_EQ(readWhileHcaWrites(slot), static_cast<uint64_t>(kWrites));
  auto sends = pollFor(a.sendCq, kWrites);
  ASSERT_EQ(sends.size(), static_cast<size_t>(kWrites));
  for (int i = 0; i < kWrites; ++i) EXPECT_EQ(sends[i].wr_id, static_cast<uint64_t>(i));
}

TEST(VerbsEmulationLarge, SixteenMegabytesArriveWhole) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  EndpointOptions options;
  options.bytes = size_t{16} << 20;  // several of the responder's read pieces
  Endpoint a(device.context, options);
  Endpoint b(device.context, options);
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  for (size_t i = 0; i < a.memory.size(); ++i) a.memory[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  ASSERT_EQ(postReceives(b.qp, 1), 0);
  Write w = writeBetween(a, 0, b, 0, static_cast<uint32_t>(a.memory.size()));
  w.imm = 16;
  ASSERT_EQ(post(a.qp, w), 0);
  auto recv = pollFor(b.recvCq, 1);
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0].byte_len, a.memory.size());
  EXPECT_TRUE(b.memory == a.memory);
  auto send = pollFor(a.sendCq, 1);
  ASSERT_EQ(send.size(), 1u);
  EXPECT_EQ(send[0].status, IBV_WC_SUCCESS);
}

TEST(VerbsEmulationThreads, WritesGoOnWhileOtherQpsComeAndGo) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  Endpoint a(device.context);
  Endpoint b(device.context);
  ASSERT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  std::atomic<bool> done{false};
  std::thread churn([&] {  // the device's other users: QPs created, connected, used, destroyed
    while (!done) {
      Endpoint c(device.context);
      Endpoint d(device.context);
      if (!c.ok() || !d.ok()) break;
      connectPair(c, d);
      (void)post(c.qp, writeBetween(c, 0, d, 0, 64));
      if (done) break;  // destroyed with the write maybe still under way: that must not hang
    }
  });
  constexpr int kWrites = 2000;
  auto* counter = reinterpret_cast<uint32_t*>(a.memory.data());
  for (int i = 0; i < kWrites; ++i) {
    counter[i % 64] = static_cast<uint32_t>(i);
    Write w = writeBetween(a, (i % 64) * 4, b, (i % 64) * 4, 4);
    w.wrId = static_cast<uint64_t>(i);
    ASSERT_EQ(post(a.qp, w), 0);
    auto wc = pollFor(a.sendCq, 1);
    ASSERT_EQ(wc.size(), 1u) << i;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << i;
    ASSERT_EQ(wc[0].wr_id, static_cast<uint64_t>(i));
  }
  done = true;
  churn.join();
  EXPECT_EQ(memcmp(a.memory.data(), b.memory.data(), 256), 0);
}

TEST_F(VerbsEmulationWrite, UnsignaledWritesCompleteSilentlyButArrive) {
  connect();
  for (int i = 0; i < 16; ++i) a_.memory[i] = static_cast<uint8_t>(i + 1);
  for (int i = 0; i < 10; ++i) {
    Write w = writeBetween(a_, i, b_, i, 1);
    w.signaled = false;
    ASSERT_EQ(post(a_.qp, w), 0);
  }
  Write last = writeBetween(a_, 10, b_, 10, 1);
  last.wrId = 99;
  ASSERT_EQ(post(a_.qp, last), 0);
  auto wc = pollFor(a_.sendCq, 2, 100);
  ASSERT_EQ(wc.size(), 1u) << "only the signaled write completes";
  EXPECT_EQ(wc[0].wr_id, 99u);
  for (int i = 0; i < 11; ++i) EXPECT_EQ(b_.memory[i], i + 1) << i;
}

TEST_F(VerbsEmulationWrite, WrongRkeyIsRemoteAccessErrorAndFlushesTheRest) {
  connect();
  ASSERT_EQ(postReceives(b_.qp, 2), 0);
  memset(a_.memory.data(), 0xab, 64);
  Write bad = aToB(0, 64);
  bad.rkey ^= 0x5a5a5a5a;
  bad.imm = 1;
  ASSERT_EQ(post(a_.qp, bad), 0);
  for (int i = 0; i < 3; ++i) {
    Write later = aToB(0, 64);
    later.wrId = 10 + i;
    later.signaled = false;  // flushes complete anyway
    ASSERT_EQ(post(a_.qp, later), 0);
  }
  auto wc = pollFor(a_.sendCq, 4);
  ASSERT_EQ(wc.size(), 4u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(wc[0].wr_id, 1u);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(wc[i].wr_id, 9u + i);
  }
  EXPECT_EQ(stateOf(a_.qp), IBV_QPS_ERR);
  EXPECT_EQ(std::vector<uint8_t>(b_.memory.size(), 0), b_.memory);
  // The emulation's choice: the responder's QP goes to ERR too, flushing its receives.
  EXPECT_TRUE(waitForState(b_.qp, IBV_QPS_ERR));
  auto flushed = pollFor(b_.recvCq, 2);
  ASSERT_EQ(flushed.size(), 2u);
  EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(VerbsEmulationWrite, OneBytePastTheRegionIsRemoteAccessError) {
  connect();
  ASSERT_EQ(post(a_.qp, aToB(b_.memory.size() - 63, 64)), 0);
  expectRefused(IBV_WC_REM_ACCESS_ERR);
}

/// The write of 8 bytes from a's buffer to b's, on a fresh pair whose b is made by `options`
/// and then `spoil`; returns a's completion status and expects b's memory untouched.
template <typename Spoil>
ibv_wc_status writeToSpoiledPeer(ibv_context* context, EndpointOptions options, Spoil spoil) {
  Endpoint a(context);
  Endpoint b(context, options);
  EXPECT_TRUE(a.ok() && b.ok());
  connectPair(a, b);
  a.memory[0] = 1;
  Write w = writeBetween(a, 0, b, 0, 8);
  spoil(b, &w);
  EXPECT_EQ(post(a.qp, w), 0);
  auto wc = pollFor(a.sendCq, 1);
  EXPECT_EQ(wc.size(), 1u);
  EXPECT_EQ(b.memory[0], 0);
  return wc.empty() ? IBV_WC_GENERAL_ERR : wc[0].status;
}

TEST(VerbsEmulationRemoteAccess, EveryResponderCheckRefusesTheWrite) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  auto nothing = [](Endpoint&, Write*) {};
  EndpointOptions regionLocalOnly;
  regionLocalOnly.mrAccess = IBV_ACCESS_LOCAL_WRITE;
  EXPECT_EQ(writeToSpoiledPeer(device.context, regionLocalOnly, nothing), IBV_WC_REM_ACCESS_ERR)
      << "a region without IBV_ACCESS_REMOTE_WRITE";
  EndpointOptions qpLocalOnly;
  qpLocalOnly.qpAccess = IBV_ACCESS_LOCAL_WRITE;
  EXPECT_EQ(writeToSpoiledPeer(device.context, qpLocalOnly, nothing), IBV_WC_REM_ACCESS_ERR)
      << "a QP without IBV_ACCESS_REMOTE_WRITE";
  std::vector<uint8_t> elsewhere(64, 0);
  ibv_pd* otherPd = verbs().allocPd(device.context);
  ibv_mr* otherMr = verbs().regMr(otherPd, elsewhere.data(), elsewhere.size(), kRw);
  ASSERT_NE(otherMr, nullptr);
  auto otherDomain = [&](Endpoint&, Write* w) {
    w->remote = reinterpret_cast<uintptr_t>(elsewhere.data());
    w->rkey = otherMr->rkey;
  };
  EXPECT_EQ(writeToSpoiledPeer(device.context, {}, otherDomain), IBV_WC_REM_ACCESS_ERR)
      << "a region of another protection domain";
  EXPECT_EQ(elsewhere, std::vector<uint8_t>(64, 0));
  EXPECT_EQ(verbs().deregMr(otherMr), 0);
  EXPECT_EQ(verbs().deallocPd(otherPd), 0);
  auto below = [](Endpoint& b, Write* w) { w->remote = b.addr() - 1; };
  EXPECT_EQ(writeToSpoiledPeer(device.context, {}, below), IBV_WC_REM_ACCESS_ERR)
      << "one byte before the region";
  auto sane = [](Endpoint& b, Write* w) { w->remote = b.addr(8); };
  EXPECT_EQ(writeToSpoiledPeer(device.context, {}, sane), IBV_WC_SUCCESS) << "the control";
}

TEST_F(VerbsEmulationWrite, DeregisteredRegionIsRemoteAccessError) {
  connect();
  std::vector<uint8_t> other(256, 0);
  ibv_mr* gone = verbs().regMr(b_.pd, other.data(), other.size(), kRw);
  ASSERT_NE(gone, nullptr);
  uint32_t rkey = gone->rkey;
  ASSERT_EQ(verbs().deregMr(gone), 0);
  a_.memory[0] = 1;
  Write w = aToB(0, 8);
  w.remote = reinterpret_cast<uintptr_t>(other.data());
  w.rkey = rkey;
  ASSERT_EQ(post(a_.qp, w), 0);
  expectRefused(IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(other, std::vector<uint8_t>(256, 0));
}

TEST_F(VerbsEmulationWrite, BadLkeyIsLocalProtectionError) {
  connect();
  ASSERT_EQ(post(a_.qp, aToB(0, 8)), 0);  // a good one first: it completes before the error
  Write bad = aToB(0, 8);
  bad.wrId = 2;
  bad.lkey = a_.mr->rkey;  // a key, but not an lkey
  ASSERT_EQ(post(a_.qp, bad), 0);
  Write after = aToB(0, 8);
  after.wrId = 3;
  ASSERT_EQ(post(a_.qp, after), 0);
  auto wc = pollFor(a_.sendCq, 3);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[1].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[2].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(stateOf(a_.qp), IBV_QPS_ERR);
}

TEST(VerbsEmulationLocalAccess, SgeOutsideItsRegionOrDomainIsLocalProtectionError) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  std::vector<uint8_t> elsewhere(64, 1);
  ibv_pd* otherPd = verbs().allocPd(device.context);
  ibv_mr* otherMr = verbs().regMr(otherPd, elsewhere.data(), elsewhere.size(), kRw);
  ASSERT_NE(otherMr, nullptr);
  for (int kind = 0; kind < 2; ++kind) {
    Endpoint a(device.context);
    Endpoint b(device.context);
    ASSERT_TRUE(a.ok() && b.ok());
    connectPair(a, b);
    Write w = writeBetween(a, a.memory.size() - 4, b, 0, 8);  // 4 bytes past a's region
    if (kind == 1) {
      w.local = elsewhere.data();  // inside a region, of another protection domain
      w.lkey = otherMr->lkey;
    }
    ASSERT_EQ(post(a.qp, w), 0);
    auto wc = pollFor(a.sendCq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR) << kind;
    EXPECT_EQ(b.memory[0], 0);
  }
  EXPECT_EQ(verbs().deregMr(otherMr), 0);
  EXPECT_EQ(verbs().deallocPd(otherPd), 0);
}

TEST_F(VerbsEmulationWrite, NoReceiveWithRnrRetryOneIsRnrRetryExceeded) {
  Path impatient;
  impatient.rnrRetry = 1;
  Path quickTimer;
  quickTimer.minRnrTimer = 1;  // 10 µs
  connect(impatient, quickTimer);
  Write w = aToB(0, 8);
  w.imm = 3;
  ASSERT_EQ(post(a_.qp, w), 0);
  expectRefused(IBV_WC_RNR_RETRY_EXC_ERR);
  EXPECT_EQ(stateOf(b_.qp), IBV_QPS_RTS) << "RNR leaves the responder as it was";
}

TEST_F(VerbsEmulationWrite, RnrWaitsForALateReceiveBeyondTheAckTimeout) {
  Path shortTimeout;
  shortTimeout.timeout = 15;  // 134 ms, no retry: the responder's RNR notices keep it alive
  shortTimeout.retryCnt = 0;
  connect(shortTimeout);  // rnr_retry 7: for ever
  Write w = aToB(0, 8);
  a_.memory[0] = 42;
  w.imm = 4;
  ASSERT_EQ(post(a_.qp, w), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_EQ(postReceives(b_.qp, 1), 0);
  auto wc = pollFor(a_.sendCq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(b_.memory[0], 42);
}

TEST(VerbsEmulationRoute, EveryRoceV2GidCarriesWrites) {
  Device device;
  ASSERT_NE(device.context, nullptr);
  ibv_port_attr port{};
  ASSERT_EQ(verbs().queryPort(device.context, 1, &port), 0);
  int routes = 0;
  for (int i = 0; i < port.gid_tbl_len; ++i) {
    if (verbs().gidType(device.context, 1, i) != GidType::kRoceV2) continue;
    Endpoint a(device.context);
    Endpoint b(device.context);
    ASSERT_TRUE(a.ok() && b.ok());
    Path there;  // this host's address i, IPv4-mapped or IPv6, both ways
    there.sgidIndex = i;
    ASSERT_EQ(verbs().queryGid(device.context, 1, i, &there.dgid), 0);
    Path back = there;
    there.destQpNum = b.qp->qp_num;
    back.destQpNum = a.qp->qp_num;
    bringUp(a.qp, kRw, there);
    bringUp(b.qp, kRw, back);
    a.memory[0] = static_cast<uint8_t>(i + 1);
    ASSERT_EQ(post(a.qp, writeBetween(a, 0, b, 0, 8)), 0);
    auto wc = pollFor(a.sendCq, 1);
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, there.dgid.raw, text, sizeof(text));
    ASSERT_EQ(wc.size(), 1u) << text;
    EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << text;
    EXPECT_EQ(b.memory[0], i + 1) << text;
    ++routes;
  }
  EXPECT_GE(routes, 1);
}

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
  int fd = socket(AF_INET, SOCK_STREAM, 0);
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
  ScopedEnv env("BRAID_IB_EMULATE", "1");
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
