// One emulated HCA (emu_<n>) of this process: what the open contexts of that device share.
//
// - The device's TCP listener ([::] dual stack, or 0.0.0.0 where IPv6 is unavailable; the port
//   chosen by the kernel) and the thread that accepts connections on it and hands each to the
//   QP its hello names.
// - The table of live QPs. A QP's number carries the listener's port, qp_num = port << 8 | slot
//   (24 bits), so that a peer HCA finds the QP from (destination GID, dest_qp_num) alone, as a
//   real fabric routes by them; hence at most 256 live QPs per device.
// - The table of memory regions and their keys, behind a reader-writer lock: writes into
//   registered memory (remote writes, and the requester reading local SGEs) hold it shared while
//   they copy, deregistration holds it exclusively, so once deregMr returns no write lands in
//   that memory.
//
// Created by the first openDevice of the device and gone with its last context.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/socket.h"
#include "braid/status.h"
#include "emulation/ib/emulated_async_events.h"
#include "emulation/ib/emulated_limits.h"

namespace braid::transport::ib::emulated {

class QueuePair;
struct ProtectionDomain;

struct MrKeys {
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

class Hca {
 public:
  /// The HCA of device `deviceIndex`, started on first use (listener and accept thread).
  static Result<std::shared_ptr<Hca>> acquire(int deviceIndex);
  ~Hca();
  Hca(const Hca&) = delete;
  Hca& operator=(const Hca&) = delete;

  int index() const { return index_; }
  const std::string& name() const { return name_; }
  uint16_t port() const { return port_; }

  /// A number for a new QP, its slot reserved; nullopt when kMaxQp QPs are live.
  std::optional<uint32_t> reserveQpNum();
  /// Makes a reserved number's QP reachable by connections.
  void publishQp(uint32_t qpNum, QueuePair* qp);
  /// Frees the number: once this returns no connection reaches the QP any more.
  void releaseQpNum(uint32_t qpNum);

  /// Registers [addr, addr + length) for `pd`, whose bytes lie at `host` in this process (the
  /// address itself for ibv_reg_mr; a dmabuf's mapping for ibv_reg_dmabuf_mr, whose `addr` is
  /// the iova the queue pairs use); nullopt when kMaxMr regions exist.
  std::optional<MrKeys> registerMr(const ProtectionDomain* pd, uintptr_t addr, uint64_t length,
                                   int access, uintptr_t host);
  void deregisterMr(const MrKeys& keys);

  /// What a remote write of `length` bytes at `addr` with `rkey` would violate, for a QP of
  /// `pd`; nullptr when it is allowed. A zero-length write checks nothing (IB spec: its R_Key
  /// is not validated).
  const char* checkRemoteWrite(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr,
                               uint64_t length) const;
  /// The same check and, when it passes, the copy, both under the region table's lock.
  const char* writeRemote(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr,
                          const uint8_t* data, uint64_t length);
  /// Gathers local SGEs (lkeys of `pd`'s regions) into `out`; nullptr, or the violation.
  const char* readLocal(const ProtectionDomain* pd, const ibv_sge* sges, size_t count,
                        uint8_t* out) const;
  /// An RDMA read's responder side: `length` bytes at `addr` of the region `rkey` names (which
  /// must allow remote reads) into `out`; nullptr, or the violation.
  const char* readRemote(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr, uint64_t length,
                         uint8_t* out) const;
  /// An RDMA read's requester side: scatters `data` into local SGEs (regions of `pd` that allow
  /// local writes); nullptr, or the violation.
  const char* writeLocal(const ProtectionDomain* pd, const ibv_sge* sges, size_t count,
                         const uint8_t* data);

  /// Objects counted against the device's limits (ibv_device_attr).
  enum class Counted { kProtectionDomain, kCompletionQueue };
  /// Counts one more; false when the device has its limit of them already.
  bool reserve(Counted what);
  void release(Counted what);

  /// Payload bytes its port sent and received by RDMA, as a real port counts them in
  /// port_xmit_data / port_rcv_data; said at INFO when the HCA goes, so that a test can see
  /// which NICs carried a run's traffic.
  /// `bytes` sent by the QP numbered `qpNum`, counted for the port and for that QP.
  void countTransmitted(uint32_t qpNum, uint64_t bytes) {
    transmitted_.fetch_add(bytes, std::memory_order_relaxed);
    qpTransmitted_[qpNum & 0xff].fetch_add(bytes, std::memory_order_relaxed);
  }
  uint64_t transmitted() const { return transmitted_.load(std::memory_order_relaxed); }
  uint64_t received() const { return received_.load(std::memory_order_relaxed); }
  /// QPs made on this device since it started (live or destroyed since), and which of them
  /// sent anything: the INFO line when the HCA goes says both, so that a test can see how many
  /// QPs a run's connections put on each NIC.
  int qpsCreated() const { return qpsCreated_.load(std::memory_order_relaxed); }
  int qpsThatSent() const;
  /// Each live QP of the device and the payload bytes it has sent, by QP number.
  struct QpTraffic {
    uint32_t qpNum;
    uint64_t transmitted;
  };
  std::vector<QpTraffic> liveQpTraffic() const;

  /// Its ports' states and the contexts that hear of them (emulated_async_events.h).
  PortEvents& portEvents() { return portEvents_; }

 private:
  struct MrEntry {
    const ProtectionDomain* pd;
    uintptr_t addr;
    uint64_t length;
    int access;
    uintptr_t host;  ///< where addr's byte lies in this process
    uint8_t* at(uint64_t a) const { return reinterpret_cast<uint8_t*>(host + (a - addr)); }
  };
  /// The region of a local SGE's lkey, of `pd`, holding the SGE; or the violation in `*why`.
  const MrEntry* localRegionLocked(const ProtectionDomain* pd, const ibv_sge& sge,
                                   const char** why) const;

  Hca(int index, ::braid::sockets::Socket listener, uint16_t port);
  void acceptLoop();
  /// Hands an accepted connection to the QP its hello names, or refuses it.
  void admit(::braid::sockets::Socket connection, const std::vector<char>& greeting);
  QueuePair* findQpLocked(uint32_t qpNum) const;
  const MrEntry* findByRkeyLocked(uint32_t rkey) const;
  const char* checkRemoteWriteLocked(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr,
                                     uint64_t length) const;

  const int index_;
  const std::string name_;
  const uint16_t port_;
  ::braid::sockets::Socket listener_;

  mutable std::mutex qpMu_;
  std::array<QueuePair*, kMaxQp> qps_{};
  std::array<bool, kMaxQp> reserved_{};
  int nextSlot_ = 0;  ///< next-fit, so that a freed number is not handed out again at once

  mutable std::shared_mutex mrMu_;
  std::unordered_map<uint32_t, MrEntry> byRkey_;
  std::unordered_map<uint32_t, uint32_t> rkeyOfLkey_;

  std::atomic<int> counts_[2] = {0, 0};
  std::atomic<uint64_t> transmitted_{0};
  std::atomic<uint64_t> received_{0};
  std::array<std::atomic<uint64_t>, kMaxQp> qpTransmitted_{};  ///< by QP slot, reset at reserve
  std::atomic<int> qpsCreated_{0};
  std::atomic<int> qpsTransmitting_{0};  ///< QPs destroyed after sending something
  PortEvents portEvents_{name_};
  std::atomic<bool> stopping_{false};
  std::thread acceptThread_;  // last: it uses everything above
};

}  // namespace braid::transport::ib::emulated
