// One emulated HCA's shared state, its listener and its accept thread: see emulated_hca.h.
#include "emulation/ib/emulated_hca.h"
#include "base/socket_address.h"
#include "base/socket_greeting.h"
#include "base/socket_io.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "base/dma_copy.h"
#include "base/log.h"
#include "emulation/ib/emulated_hca_wire.h"
#include "emulation/ib/emulated_qp.h"
#include "emulation/ib/emulated_responder.h"

namespace braid::transport::ib::emulated {
namespace {

/// The HCAs of this process, one per device while it has open contexts. A forked child starts
/// afresh: the parent's HCAs are in its memory, but their threads and listeners are not its own.
struct Registry {
  std::mutex mu;
  pid_t pid = 0;
  std::array<std::weak_ptr<Hca>, kMaxDevices> hcas;
};

Registry& registry() {
  static Registry registry;
  return registry;
}

/// A listener on [::] that takes IPv4 too, or on 0.0.0.0 where IPv6 is unavailable.
Result<::braid::sockets::Socket> openListener() {
  ::braid::sockets::Socket socket(
      ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (socket.valid()) {
    int zero = 0;
    sockaddr_in6 any{};
    any.sin6_family = AF_INET6;
    any.sin6_addr = in6addr_any;
    if (setsockopt(socket.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) == 0 &&
        ::bind(socket.fd(), reinterpret_cast<const sockaddr*>(&any), sizeof(any)) == 0 &&
        ::listen(socket.fd(), SOMAXCONN) == 0) {
      return socket;
    }
  }
  sockaddr_storage any4{};
  auto* a4 = reinterpret_cast<sockaddr_in*>(&any4);
  a4->sin_family = AF_INET;
  a4->sin_addr.s_addr = htonl(INADDR_ANY);
  return ::braid::sockets::listenOn(any4, /*reuseAddr=*/false);
}

/// A bijection of 32-bit integers that looks random: xor with a constant, multiplications by
/// odd constants and xor-shifts each undo, so distinct inputs give distinct keys.
uint32_t scramble(uint32_t x, uint32_t seed) {
  x ^= seed;
  x ^= x >> 16;
  x *= 0x45d9f3bu;
  x ^= x >> 13;
  x *= 0x9e3779b1u;
  x ^= x >> 16;
  return x;
}

/// Keys no other region of this process had or will have (until 2^31 registrations), nonzero,
/// and not guessable from the previous ones without the per-process seed.
MrKeys newKeys() {
  static std::atomic<uint32_t> counter{0};
  static const uint32_t seed = std::random_device{}();
  while (true) {
    uint32_t n = counter.fetch_add(1);
    MrKeys keys{scramble(2 * n, seed), scramble(2 * n + 1, seed)};
    if (keys.lkey != 0 && keys.rkey != 0) return keys;
  }
}

/// [addr, addr + length) inside [base, base + size), without overflow.
bool inside(uint64_t addr, uint64_t length, uint64_t base, uint64_t size) {
  return addr >= base && length <= size && addr - base <= size - length;
}

}  // namespace

Result<std::shared_ptr<Hca>> Hca::acquire(int deviceIndex) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.pid != getpid()) {
    for (auto& hca : r.hcas) hca = std::weak_ptr<Hca>();
    r.pid = getpid();
  }
  if (auto hca = r.hcas[deviceIndex].lock()) return hca;
  BRAID_ASSIGN_OR_RETURN(::braid::sockets::Socket listener, openListener());
  BRAID_ASSIGN_OR_RETURN(sockaddr_storage bound, ::braid::sockets::boundAddress(listener));
  uint16_t port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  std::shared_ptr<Hca> hca(new Hca(deviceIndex, std::move(listener), port));
  r.hcas[deviceIndex] = hca;
  BRAID_INFO("emulated HCA %s: listening on %s", hca->name().c_str(),
             ::braid::sockets::addressToString(bound).c_str());
  return hca;
}

Hca::Hca(int index, ::braid::sockets::Socket listener, uint16_t port)
    : index_(index),
      name_("emu_" + std::to_string(index)),
      port_(port),
      listener_(std::move(listener)),
      acceptThread_([this] { acceptLoop(); }) {}

Hca::~Hca() {
  BRAID_INFO(
      "emulated HCA %s:1: %llu bytes transmitted, %llu received; %d queue pair(s) made, %d of "
      "them sent",
      name_.c_str(), static_cast<unsigned long long>(transmitted()),
      static_cast<unsigned long long>(received()), qpsCreated(), qpsThatSent());
  stopping_ = true;
  listener_.shutdown();  // the accept thread's poll returns and accept fails
  acceptThread_.join();
}

void Hca::acceptLoop() {
  ::braid::sockets::GreetingAcceptor acceptor(listener_, wire::kHelloBytes);
  while (!stopping_) {
    ::braid::sockets::Socket connection;
    std::vector<char> greeting;
    ::braid::sockets::IoResult result = acceptor.next(Deadline::never(), &connection, &greeting);
    if (stopping_) return;
    if (!result.ok()) {
      BRAID_WARN("emulated HCA %s: its listener failed (%s); no peer can connect to it any more",
                 name_.c_str(), result.describe().c_str());
      return;
    }
    admit(std::move(connection), greeting);
  }
}

void Hca::admit(::braid::sockets::Socket connection, const std::vector<char>& greeting) {
  auto hello = wire::decodeHello(reinterpret_cast<const uint8_t*>(greeting.data()));
  if (!hello) {
    BRAID_INFO("emulated HCA %s: refused a connection that is not an emulated HCA's",
               name_.c_str());
    return;
  }
  std::lock_guard<std::mutex> lock(qpMu_);  // the QP stays alive while it takes the connection
  QueuePair* qp = findQpLocked(hello->dstQpNum);
  if (qp == nullptr) {
    sendHelloReply(connection, wire::HelloVerdict::kNoSuchQp);
    return;
  }
  qp->admit(std::move(connection), *hello);
}

std::optional<uint32_t> Hca::reserveQpNum() {
  std::lock_guard<std::mutex> lock(qpMu_);
  for (int i = 0; i < kMaxQp; ++i) {
    int slot = (nextSlot_ + i) % kMaxQp;
    if (reserved_[slot]) continue;
    reserved_[slot] = true;
    nextSlot_ = (slot + 1) % kMaxQp;
    qpTransmitted_[slot].store(0, std::memory_order_relaxed);
    qpsCreated_.fetch_add(1, std::memory_order_relaxed);
    return (uint32_t{port_} << 8) | static_cast<uint32_t>(slot);
  }
  return std::nullopt;
}

void Hca::publishQp(uint32_t qpNum, QueuePair* qp) {
  std::lock_guard<std::mutex> lock(qpMu_);
  qps_[qpNum & 0xff] = qp;
}

void Hca::releaseQpNum(uint32_t qpNum) {
  std::lock_guard<std::mutex> lock(qpMu_);
  qps_[qpNum & 0xff] = nullptr;
  reserved_[qpNum & 0xff] = false;
  if (qpTransmitted_[qpNum & 0xff].load(std::memory_order_relaxed) > 0) {
    qpsTransmitting_.fetch_add(1, std::memory_order_relaxed);
  }
}

int Hca::qpsThatSent() const {
  int sent = qpsTransmitting_.load(std::memory_order_relaxed);
  for (const QpTraffic& qp : liveQpTraffic()) sent += qp.transmitted > 0 ? 1 : 0;
  return sent;
}

std::vector<Hca::QpTraffic> Hca::liveQpTraffic() const {
  std::lock_guard<std::mutex> lock(qpMu_);
  std::vector<QpTraffic> live;
  for (int slot = 0; slot < kMaxQp; ++slot) {
    if (!reserved_[slot]) continue;
    live.push_back({(uint32_t{port_} << 8) | static_cast<uint32_t>(slot),
                    qpTransmitted_[slot].load(std::memory_order_relaxed)});
  }
  return live;
}

QueuePair* Hca::findQpLocked(uint32_t qpNum) const {
  if ((qpNum >> 8) != port_) return nullptr;
  return qps_[qpNum & 0xff];
}

std::optional<MrKeys> Hca::registerMr(const ProtectionDomain* pd, uintptr_t addr, uint64_t length,
                                      int access, uintptr_t host) {
  std::unique_lock<std::shared_mutex> lock(mrMu_);
  if (byRkey_.size() >= static_cast<size_t>(kMaxMr)) return std::nullopt;
  MrKeys keys = newKeys();
  byRkey_[keys.rkey] = MrEntry{pd, addr, length, access, host};
  rkeyOfLkey_[keys.lkey] = keys.rkey;
  return keys;
}

void Hca::deregisterMr(const MrKeys& keys) {
  // Exclusive: waits for every copy into the region that is under way.
  std::unique_lock<std::shared_mutex> lock(mrMu_);
  byRkey_.erase(keys.rkey);
  rkeyOfLkey_.erase(keys.lkey);
}

const Hca::MrEntry* Hca::findByRkeyLocked(uint32_t rkey) const {
  auto it = byRkey_.find(rkey);
  return it == byRkey_.end() ? nullptr : &it->second;
}

const char* Hca::checkRemoteWriteLocked(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr,
                                        uint64_t length) const {
  if (length == 0) return nullptr;
  const MrEntry* mr = findByRkeyLocked(rkey);
  if (mr == nullptr) return "the rkey names no live memory region of this device";
  if (mr->pd != pd) return "the memory region belongs to another protection domain";
  if ((mr->access & IBV_ACCESS_REMOTE_WRITE) == 0) {
    return "the memory region does not allow remote writes";
  }
  if (!inside(addr, length, mr->addr, mr->length)) return "the write lies outside the region";
  return nullptr;
}

const char* Hca::checkRemoteWrite(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr,
                                  uint64_t length) const {
  std::shared_lock<std::shared_mutex> lock(mrMu_);
  return checkRemoteWriteLocked(pd, rkey, addr, length);
}

const char* Hca::writeRemote(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr,
                             const uint8_t* data, uint64_t length) {
  std::shared_lock<std::shared_mutex> lock(mrMu_);
  const char* violation = checkRemoteWriteLocked(pd, rkey, addr, length);
  if (violation == nullptr && length > 0) {
    // dmaCopy: the memory's owner may poll a word of it (a credit, a flag) as the bytes land.
    dmaCopy(findByRkeyLocked(rkey)->at(addr), data, length);
    received_.fetch_add(length, std::memory_order_relaxed);
  }
  return violation;
}

const Hca::MrEntry* Hca::localRegionLocked(const ProtectionDomain* pd, const ibv_sge& sge,
                                           const char** why) const {
  auto rkey = rkeyOfLkey_.find(sge.lkey);
  if (rkey == rkeyOfLkey_.end()) {
    *why = "an SGE's lkey names no live memory region";
    return nullptr;
  }
  const MrEntry* mr = findByRkeyLocked(rkey->second);
  if (mr->pd != pd) {
    *why = "an SGE's memory region belongs to another protection domain";
    return nullptr;
  }
  if (!inside(sge.addr, sge.length, mr->addr, mr->length)) {
    *why = "an SGE lies outside its memory region";
    return nullptr;
  }
  return mr;
}

const char* Hca::readLocal(const ProtectionDomain* pd, const ibv_sge* sges, size_t count,
                           uint8_t* out) const {
  std::shared_lock<std::shared_mutex> lock(mrMu_);
  for (size_t i = 0; i < count; ++i) {
    const ibv_sge& sge = sges[i];
    if (sge.length == 0) continue;  // touches no memory
    const char* why = nullptr;
    const MrEntry* mr = localRegionLocked(pd, sge, &why);
    if (mr == nullptr) return why;
    // dmaCopy: the memory's owner may still update a word of it (a credit) as the NIC reads.
    dmaCopy(out, mr->at(sge.addr), sge.length);
    out += sge.length;
  }
  return nullptr;
}

const char* Hca::readRemote(const ProtectionDomain* pd, uint32_t rkey, uint64_t addr,
                            uint64_t length, uint8_t* out) const {
  std::shared_lock<std::shared_mutex> lock(mrMu_);
  if (length == 0) return nullptr;
  const MrEntry* mr = findByRkeyLocked(rkey);
  if (mr == nullptr) return "the rkey names no live memory region of this device";
  if (mr->pd != pd) return "the memory region belongs to another protection domain";
  if ((mr->access & IBV_ACCESS_REMOTE_READ) == 0) {
    return "the memory region does not allow remote reads";
  }
  if (!inside(addr, length, mr->addr, mr->length)) return "the read lies outside the region";
  dmaCopy(out, mr->at(addr), length);
  return nullptr;
}

const char* Hca::writeLocal(const ProtectionDomain* pd, const ibv_sge* sges, size_t count,
                            const uint8_t* data) {
  std::shared_lock<std::shared_mutex> lock(mrMu_);
  for (size_t i = 0; i < count; ++i) {
    const ibv_sge& sge = sges[i];
    if (sge.length == 0) continue;
    const char* why = nullptr;
    const MrEntry* mr = localRegionLocked(pd, sge, &why);
    if (mr == nullptr) return why;
    if ((mr->access & IBV_ACCESS_LOCAL_WRITE) == 0) {
      return "an SGE's memory region does not allow local writes";
    }
    dmaCopy(mr->at(sge.addr), data, sge.length);
    data += sge.length;
  }
  return nullptr;
}

bool Hca::reserve(Counted what) {
  int limit = what == Counted::kProtectionDomain ? kMaxPd : kMaxCq;
  std::atomic<int>& count = counts_[static_cast<int>(what)];
  if (count.fetch_add(1) >= limit) {
    count.fetch_sub(1);
    return false;
  }
  return true;
}

void Hca::release(Counted what) { counts_[static_cast<int>(what)].fetch_sub(1); }

}  // namespace braid::transport::ib::emulated
