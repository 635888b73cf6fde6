// What the emulated HCA's tests share (verbs_emulation_test.cc, verbs_emulation_fault_test.cc):
// devices opened through the verbs seam, endpoints (a PD, CQ, QP and registered buffer), QPs
// brought up to RTS between two endpoints over loopback, writes and receives posted, and
// completions waited for.
#pragma once

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

#include "emulation/ib/emulated_hca_wire.h"
#include "emulation/ib/verbs_emulated.h"

namespace braid::transport::ib::verbs_test {

inline const VerbsApi& verbs() { return emulatedVerbs(); }

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
inline ibv_context* openDevice(int index = 0, int count = 1) {
  emulateDevices(count);
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

inline bool isLoopbackV4(const ibv_gid& gid) {
  static const uint8_t kMapped127[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
  return memcmp(gid.raw, kMapped127, 16) == 0;
}

/// The index of the RoCE v2 GID ::ffff:127.0.0.1, or -1.
inline int loopbackGidIndex(ibv_context* context) {
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

inline int toInit(ibv_qp* qp, int access) {
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

inline ibv_qp_attr rtrAttr(const Path& p) {
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

inline ibv_qp_attr rtsAttr(const Path& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = p.timeout;
  a.retry_cnt = p.retryCnt;
  a.rnr_retry = p.rnrRetry;
  a.max_rd_atomic = 1;
  return a;
}

/// Brings `qp` from RESET to RTS along `path`.
inline void bringUp(ibv_qp* qp, int access, const Path& path) {
  ASSERT_EQ(toInit(qp, access), 0);
  ibv_qp_attr rtr = rtrAttr(path);
  ASSERT_EQ(verbs().modifyQp(qp, &rtr, kRtrMask), 0);
  ibv_qp_attr rts = rtsAttr(path);
  ASSERT_EQ(verbs().modifyQp(qp, &rts, kRtsMask), 0);
}

/// The path from `from` to `to` over loopback, with `from`'s patience.
inline Path loopbackPath(const Endpoint& from, const Endpoint& to, Path patience = {}) {
  Path p = patience;
  p.sgidIndex = loopbackGidIndex(from.context);
  int peerIndex = loopbackGidIndex(to.context);
  EXPECT_GE(p.sgidIndex, 0);
  EXPECT_EQ(verbs().queryGid(to.context, 1, peerIndex, &p.dgid), 0);
  p.destQpNum = to.qp->qp_num;
  return p;
}

/// Connects `a` and `b` both ways; `aPatience` is a's timeouts and retries.
inline void connectPair(Endpoint& a, Endpoint& b, Path aPatience = {}, Path bPatience = {}) {
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

inline int post(ibv_qp* qp, const Write& w) {
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
inline Write writeBetween(const Endpoint& a, size_t from, const Endpoint& b, size_t to,
                          uint32_t length) {
  Write w;
  w.local = a.memory.data() + from;
  w.length = length;
  w.lkey = a.mr->lkey;
  w.remote = b.addr(to);
  w.rkey = b.mr->rkey;
  return w;
}

inline int postReceives(ibv_qp* qp, int count, uint64_t firstId = 100) {
  for (int i = 0; i < count; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = firstId + i;
    ibv_recv_wr* bad = nullptr;
    if (int rc = verbs().postRecv(qp, &wr, &bad); rc != 0) return rc;
  }
  return 0;
}

/// Polls until `n` completions arrived or `ms` passed.
inline std::vector<ibv_wc> pollFor(ibv_cq* cq, size_t n, int64_t ms = kCompletionWaitMs) {
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
inline ibv_qp_state stateOf(ibv_qp* qp) { return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE); }

/// Memory an HCA may be writing into while the CPU reads it, as with any RDMA: a race by
/// design, hidden from ThreadSanitizer.
__attribute__((no_sanitize("thread"))) inline uint64_t readWhileHcaWrites(const uint64_t* p) {
  return *reinterpret_cast<const volatile uint64_t*>(p);
}

/// Waits until `qp` reports `state`, up to `ms`.
inline bool waitForState(ibv_qp* qp, ibv_qp_state state, int64_t ms = kCompletionWaitMs) {
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

}  // namespace braid::transport::ib::verbs_test
