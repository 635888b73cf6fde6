#include "transport/net/ib/ib_fifo_pump.h"
#include "base/socket_io.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "transport/net/gpu_net_bytes.h"
#include "transport/net/ib/wc_status.h"
#include "transport/net/proxy_waits.h"

namespace braid::transport::ib {
namespace {

namespace engine = kernels::engine;
using engine::kFifoSlots;

// Credit writes a receiver may have outstanding; more releases meanwhile go in the next one.
constexpr int kMaxCreditWrites = 4;
constexpr int kSendDepth = static_cast<int>(kFifoSlots) + kMaxCreditWrites;
constexpr int kRecvDepth = static_cast<int>(kFifoSlots);
// A receiver's wr_id tags: its receives (with the queue pair's index) and its credit writes.
constexpr uint32_t kRecvTag = 0x40000000u;
constexpr uint32_t kCreditTag = 0x80000000u;
constexpr uint32_t kFlushTag = 0x20000000u;  // with the slot flushed
constexpr uint32_t kCountBits = 0x0fffffffu;

uint32_t encodeImmediate(uint32_t slot, uint32_t word) {
  return (word & engine::kLastSlice) | ((slot % kFifoSlots) << 28) | (word & kCountBits);
}

size_t slotsBytes(const engine::FifoRef& fifo) { return kFifoSlots * fifo.stride; }

}  // namespace

SlotPart slotPart(uint32_t bytes, int part, int parts) {
  const uint32_t n = static_cast<uint32_t>(parts);
  const uint32_t share = (bytes + n - 1) / n;
  const uint32_t chunk = (share + kSplitAlignment - 1) / kSplitAlignment * kSplitAlignment;
  const uint64_t start = uint64_t{chunk} * static_cast<uint32_t>(part);
  if (start >= bytes) return {bytes, 0};
  return {static_cast<uint32_t>(start), std::min(chunk, bytes - static_cast<uint32_t>(start))};
}

IbPump::IbPump(IbNetwork& network, const engine::FifoRef& fifo, int peer, int64_t timeoutMs,
               const std::string& nic, const SlotMemory& memory)
    : network_(network),
      fifo_(fifo),
      memory_(memory),
      peer_(peer),
      portIndex_(network.portFor(nic)),
      connectBy_(timeoutMs > 0 ? Deadline::afterMs(timeoutMs) : Deadline::never()),
      id_(network.proxy().newId()) {}

IbPump::~IbPump() { detach(); }

Status IbPump::setUp(int slotAccess, int creditAccess) {
  if (fifo_.slotBytes > kMaxIbSlotBytes) {
    return invalidArgument("verbs: FIFO slots of " + std::to_string(fifo_.slotBytes) +
                           " bytes are over the " + std::to_string(kMaxIbSlotBytes) +
                           " a verbs FIFO carries (lower BRAID_BUFFSIZE)");
  }
  const int qps = network_.settings().qpsPerConnection;
  parts_ = network_.settings().splitDataOnQps ? qps : 1;
  BRAID_ASSIGN_OR_RETURN(
      qps_, IbQueuePairs::create(network_, portIndex_, qps, kSendDepth, kRecvDepth, peer_));
  void* page = std::aligned_alloc(4096, 4096);
  if (page == nullptr) return systemError("verbs: no memory for a credit word");
  std::memset(page, 0, 4096);
  creditPage_ = {static_cast<uint32_t*>(page), std::free};
  if (memory_.place == SlotPlace::kDmabuf) {
    BRAID_TRY(qps_->registerDmabuf(&slotsRegion_, memory_.dmabufFd, fifo_.slots, slotsBytes(fifo_),
                                   slotAccess));
  } else {
    // Host memory, or device memory that nvidia-peermem lets ibv_reg_mr pin by its pointer.
    BRAID_TRY(qps_->registerMemory(&slotsRegion_, fifo_.slots, slotsBytes(fifo_), slotAccess));
  }
  BRAID_TRY(qps_->registerMemory(&creditRegion_, page, 4096, creditAccess));
  return Status::success();
}

void IbPump::countSlotBytes(uint64_t bytes) const {
  if (inDeviceMemory(memory_.place)) {
    net::countDeviceRegisteredBytes(bytes);
  } else if (memory_.place == SlotPlace::kStaged) {
    net::countStagedBytes(bytes);
  }
}

void IbPump::attach() {
  network_.proxy().add(id_, this);
  attached_ = true;
}

void IbPump::detach() {
  if (!attached_) return;
  network_.proxy().remove(id_);
  attached_ = false;
}

void IbPump::fail(const std::string& why) {
  if (state_.exchange(State::kFailed) == State::kFailed) return;
  // The NICs this end's queue pairs use, so that the error says where it happened.
  std::string nics;
  for (int i = 0; qps_ != nullptr && i < qps_->size(); ++i) {
    const std::string& name = qps_->port(i).name();
    if (nics.find(name) == std::string::npos) nics += (nics.empty() ? "" : ", ") + name;
  }
  const std::string where = nics.empty() ? why : why + " (on " + nics + ")";
  BRAID_WARN("verbs transport: %s", where.c_str());
  socket_.close();
  network_.reportFailure(peer_, "verbs: " + where);
}

void IbPump::asyncFailure(const IbAsyncFailure& failure) {
  for (int i = 0; qps_ != nullptr && i < qps_->size(); ++i) {
    if (failure.ends(qps_->port(i), qps_->qp(i)->qp_num)) {
      fail(failure.what + " under the link to rank " + std::to_string(peer_));
      return;
    }
  }
}

IbHello IbSendPump::ourHello() const {
  // The receiver writes our credit word.
  return qps_->hello(creditRegion_, reinterpret_cast<uintptr_t>(creditPage_.get()), fifo_.stride,
                     fifo_.slotBytes);
}

IbHello IbRecvPump::ourHello() const {
  // The sender writes our slots.
  return qps_->hello(slotsRegion_, reinterpret_cast<uintptr_t>(fifo_.slots), fifo_.stride,
                     fifo_.slotBytes);
}

bool IbPump::handshake(bool sendFirst) {
  if (connectBy_.expired()) {
    fail("rank " + std::to_string(peer_) +
         " did not connect its verbs FIFO in time (BRAID_TIMEOUT_MS); is it running the same "
         "collective?");
    return false;
  }
  Result<bool> read = reader_.poll(socket_);
  if (!read.ok()) {
    fail("connecting to rank " + std::to_string(peer_) + ": " + read.status().message());
    return false;
  }
  if (!read.value()) return false;
  remote_ = reader_.hello();
  Status connected = qps_->connect(remote_, fifo_.slotBytes);
  if (!connected.ok()) {
    fail("connecting to rank " + std::to_string(peer_) + ": " + connected.message());
    return false;
  }
  if (!sendFirst) {
    // The receiver's pairs are in RTR now, so the sender's first write finds them ready.
    helloOut_ = ourHello();
    helloSent_ = 0;
    state_.store(State::kSendHello);
    return sendHello();
  }
  socket_.close();
  state_.store(State::kRunning);
  BRAID_TRACE("verbs transport: FIFO with rank %d connected", peer_);
  return true;
}

bool IbPump::sendHello() {
  size_t sent = 0;
  const bool alive =
      braid::sockets::sendWhatFits(socket_, reinterpret_cast<const char*>(&helloOut_) + helloSent_,
                                   sizeof(helloOut_) - helloSent_, &sent);
  helloSent_ += sent;
  if (!alive) {
    fail("sending the verbs hello to rank " + std::to_string(peer_) +
         ": the connection closed or failed");
    return false;
  }
  if (helloSent_ < sizeof(helloOut_)) {
    if (connectBy_.expired()) {
      fail("rank " + std::to_string(peer_) +
           " did not take the verbs hello in time (BRAID_TIMEOUT_MS)");
    }
    return sent > 0;
  }
  socket_.close();
  state_.store(State::kRunning);
  BRAID_TRACE("verbs transport: FIFO with rank %d connected", peer_);
  return true;
}

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<IbSendPump>> IbSendPump::start(IbNetwork& network,
                                                      const engine::FifoRef& fifo,
                                                      braid::sockets::Socket connected, int peer,
                                                      int64_t timeoutMs, const std::string& nic,
                                                      const SlotMemory& memory) {
  std::unique_ptr<IbSendPump> pump(new IbSendPump(network, fifo, peer, timeoutMs, nic, memory));
  BRAID_TRY(pump->setUp(IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  pump->released_ = engine::receiverCursor(fifo.counters);
  pump->next_ = pump->released_.mine;
  pump->releasedCount_.store(pump->released_.mine);
  pump->socket_ = std::move(connected);
  pump->events_.open(network.proxyEvents(), {peer, 0, /*isSend=*/true, fifo.slotBytes});
  const IbHello hello = pump->ourHello();
  braid::sockets::IoResult io = braid::sockets::sendAll(
      pump->socket_, &hello, sizeof(hello), Deadline::afterMs(timeoutMs > 0 ? timeoutMs : 60000));
  if (!io.ok()) {
    return remoteError("verbs transport: sending the hello to rank " + std::to_string(peer) + ": " +
                       io.describe());
  }
  pump->attach();
  return pump;
}

IbSendPump::~IbSendPump() {
  net::waitDrained(Deadline::afterMs(net::kDrainMs).cancelledBy(network_.drainCancel()), [this] {
    return state_.load() == State::kFailed ||
           releasedCount_.load() == engine::loadAcquire(&fifo_.counters->tail);
  });
  detach();
}

bool IbSendPump::progress() {
  if (state_.load() == State::kAwaitHello) return handshake(/*sendFirst=*/true);
  if (state_.load() != State::kRunning) return false;
  const uint32_t tail = engine::loadAcquire(&fifo_.counters->tail);
  // The receiver's released count, written by its NIC into our credit page.
  const uint32_t credit = __atomic_load_n(creditPage_.get(), __ATOMIC_ACQUIRE);
  bool moved = false;
  while (next_ != tail && next_ - credit < kFifoSlots) {
    if (!postSlot(next_)) return false;
    ++next_;
    moved = true;
  }
  return moved;
}

bool IbSendPump::postSlot(uint32_t slot) {
  const uint32_t word = engine::loadRelaxed(&fifo_.counters->bytes[slot % kFifoSlots]);
  const uint32_t bytes = word & ~engine::kLastSlice;
  const int n = qps_->size();
  for (int part = 0; part < parts_; ++part) {
    const int q = parts_ > 1 ? part : static_cast<int>(slot % static_cast<uint32_t>(n));
    const SlotPart where = parts_ > 1 ? slotPart(bytes, part, parts_) : SlotPart{0, bytes};
    const IbPort& port = qps_->port(q);
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(engine::slotAt(fifo_, slot)) + where.offset;
    sge.length = where.bytes;
    sge.lkey = slotsRegion_.lkey(port);
    ibv_send_wr wr{};
    wr.wr_id = IbProxy::wrId(id_, slot);
    wr.sg_list = &sge;
    wr.num_sge = where.bytes > 0 ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(encodeImmediate(slot, word));
    wr.wr.rdma.remote_addr = remote_.addr + (slot % kFifoSlots) * remote_.stride + where.offset;
    wr.wr.rdma.rkey = remote_.qp[q].rkey;
    ibv_send_wr* bad = nullptr;
    if (int rc = port.verbs().postSend(qps_->qp(q), &wr, &bad); rc != 0) {
      fail("posting a write to rank " + std::to_string(peer_) + ": " + std::strerror(rc));
      return false;
    }
  }
  if (events_.on()) events_.beginSlot(slot, bytes);
  countSlotBytes(bytes);
  bytesPosted_.fetch_add(bytes, std::memory_order_relaxed);
  IbPort& first = qps_->port(0);  // every pair of an end is on its one port
  (memory_.relayed ? first.postedRelayed : first.postedOwn)
      .fetch_add(bytes, std::memory_order_relaxed);
  return true;
}

void IbSendPump::completed(const ibv_wc& wc, uint32_t tag) {
  if (state_.load() == State::kFailed) return;
  if (wc.status != IBV_WC_SUCCESS) {
    fail("a write to rank " + std::to_string(peer_) + " failed: " + wcStatusName(wc.status) +
         " (ibv_wc_status " + std::to_string(static_cast<int>(wc.status)) + ", vendor error " +
         std::to_string(wc.vendor_err) + ")");
    return;
  }
  // Split: the slot is written once its last part is.
  if (parts_ > 1 && ++partsDone_[tag % kFifoSlots] < parts_) return;
  partsDone_[tag % kFifoSlots] = 0;
  if (events_.on()) events_.endSlot(tag);
  written_.mark(tag);
  if (written_.release(fifo_, released_)) releasedCount_.store(released_.mine);
}

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<IbRecvPump>> IbRecvPump::start(IbNetwork& network,
                                                      const engine::FifoRef& fifo, SocketTaker take,
                                                      int peer, int64_t timeoutMs,
                                                      const std::string& nic,
                                                      const SlotMemory& memory) {
  std::unique_ptr<IbRecvPump> pump(new IbRecvPump(network, fifo, peer, timeoutMs, nic, memory));
  // Remote reads: the flush reads back what landed in device memory.
  BRAID_TRY(pump->setUp(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
                        IBV_ACCESS_LOCAL_WRITE));
  pump->posted_ = engine::senderCursor(fifo.counters);
  pump->creditSent_ = engine::loadAcquire(&fifo.counters->head);
  for (int q = 0; q < pump->qps_->size(); ++q) {
    for (uint32_t i = 0; i < kFifoSlots; ++i) BRAID_TRY(pump->postReceive(q));
  }
  if (memory.flush) BRAID_TRY(pump->startFlush());
  pump->take_ = std::move(take);
  pump->events_.open(network.proxyEvents(), {peer, 0, /*isSend=*/false, fifo.slotBytes});
  pump->state_.store(State::kAwaitSocket);
  pump->attach();
  return pump;
}

Status IbRecvPump::postReceive(int qp) {
  ibv_recv_wr wr{};
  wr.wr_id = IbProxy::wrId(id_, kRecvTag | static_cast<uint32_t>(qp));
  ibv_recv_wr* bad = nullptr;
  if (int rc = qps_->port(qp).verbs().postRecv(qps_->qp(qp), &wr, &bad); rc != 0) {
    return systemError("verbs: posting a receive for rank " + std::to_string(peer_) + ": " +
                       std::strerror(rc));
  }
  return Status::success();
}

Status IbRecvPump::startFlush() {
  // NCCL's flush: a queue pair connected to itself, whose RDMA read of the slot completes only
  // once the NIC's earlier PCIe writes into it are visible; it reads into a host word.
  BRAID_ASSIGN_OR_RETURN(flushQp_, IbQueuePairs::create(network_, portIndex_, 1,
                                                        static_cast<int>(kFifoSlots), 1, peer_));
  void* page = std::aligned_alloc(4096, 4096);
  if (page == nullptr) return systemError("verbs: no memory for a flush word");
  std::memset(page, 0, 4096);
  flushPage_ = {static_cast<uint32_t*>(page), std::free};
  BRAID_TRY(flushQp_->registerMemory(&flushRegion_, page, 4096, IBV_ACCESS_LOCAL_WRITE));
  // The pair reads our slots: its hello names their region, as a peer's would.
  const IbHello self = flushQp_->hello(slotsRegion_, reinterpret_cast<uintptr_t>(fifo_.slots),
                                       fifo_.stride, fifo_.slotBytes);
  BRAID_TRY(flushQp_->connect(self, fifo_.slotBytes));
  return Status::success();
}

bool IbRecvPump::postFlush(uint32_t slot, uint32_t word) {
  flushWords_[slot] = word;
  const IbPort& port = flushQp_->port(0);
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(flushPage_.get());
  sge.length = 1;
  sge.lkey = flushRegion_.lkey(port);
  ibv_send_wr wr{};
  wr.wr_id = IbProxy::wrId(id_, kFlushTag | slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(fifo_.slots) + slot * fifo_.stride;
  wr.wr.rdma.rkey = slotsRegion_.rkey(port);
  ibv_send_wr* bad = nullptr;
  if (int rc = port.verbs().postSend(flushQp_->qp(0), &wr, &bad); rc != 0) {
    fail("posting a flush of a slot from rank " + std::to_string(peer_) + ": " + std::strerror(rc));
    return false;
  }
  return true;
}

bool IbRecvPump::progress() {
  if (state_.load() == State::kAwaitSocket) {
    std::optional<braid::sockets::Socket> socket = take_();
    if (!socket) {
      if (connectBy_.expired()) handshake(false);  // says that the sender never came
      return false;
    }
    socket_ = std::move(*socket);
    state_.store(State::kAwaitHello);
  }
  if (state_.load() == State::kAwaitHello) return handshake(/*sendFirst=*/false);
  if (state_.load() == State::kSendHello) return sendHello();
  if (state_.load() != State::kRunning) return false;
  // Hand the sender the slots our executor released.
  const uint32_t head = engine::loadAcquire(&fifo_.counters->head);
  if (head == creditSent_ || creditsInFlight_ >= kMaxCreditWrites) return false;
  uint32_t* credit = creditPage_.get();
  // A write still in flight may read this newer count: it only ever grows, so that is a credit
  // the sender may take early, never a wrong one.
  __atomic_store_n(credit, head, __ATOMIC_RELEASE);
  const IbPort& port = qps_->port(0);
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(credit);
  sge.length = sizeof(uint32_t);
  sge.lkey = creditRegion_.lkey(port);
  ibv_send_wr wr{};
  wr.wr_id = IbProxy::wrId(id_, kCreditTag);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_.addr;
  wr.wr.rdma.rkey = remote_.qp[0].rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = port.verbs().postSend(qps_->qp(0), &wr, &bad); rc != 0) {
    fail("posting a credit to rank " + std::to_string(peer_) + ": " + std::strerror(rc));
    return false;
  }
  creditSent_ = head;
  ++creditsInFlight_;
  return true;
}

void IbRecvPump::completed(const ibv_wc& wc, uint32_t tag) {
  if (state_.load() == State::kFailed) return;
  if (wc.status != IBV_WC_SUCCESS) {
    fail(std::string(tag == kCreditTag        ? "a credit to"
                     : (tag & kFlushTag) != 0 ? "a flush of a slot from"
                                              : "a receive from") +
         " rank " + std::to_string(peer_) + " failed: " + wcStatusName(wc.status) +
         " (vendor error " + std::to_string(wc.vendor_err) + ")");
    return;
  }
  if (tag == kCreditTag) {
    --creditsInFlight_;
    return;
  }
  if ((tag & kFlushTag) != 0) {
    // What landed in the slot is visible now: hand it to the kernel.
    const uint32_t slot = tag & (kFifoSlots - 1);
    net::countFlush();
    landed_.mark(slot, flushWords_[slot]);
    landed_.publish(fifo_, posted_);
    return;
  }
  const uint32_t imm = ntohl(wc.imm_data);
  const uint32_t slot = (imm >> 28) & (kFifoSlots - 1);
  const uint32_t word = (imm & engine::kLastSlice) | (imm & kCountBits);
  const uint32_t bytes = imm & kCountBits;
  const uint32_t expected = parts_ > 1 ? bytes - bytesLanded_[slot] : bytes;
  if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0 || bytes > fifo_.slotBytes || wc.byte_len > expected ||
      (parts_ == 1 && wc.byte_len != bytes) || landed_.marked(slot)) {
    fail("rank " + std::to_string(peer_) + " wrote slot " + std::to_string(slot) + " with " +
         std::to_string(wc.byte_len) + " bytes out of turn or over the " +
         std::to_string(fifo_.slotBytes) + " a slot holds");
    return;
  }
  const int q = static_cast<int>(tag & ~kRecvTag);
  if (Status reposted = postReceive(q); !reposted.ok()) {
    fail(reposted.message());
    return;
  }
  if (parts_ > 1) {
    // Split: the slot has landed once all its parts have, and they must make it whole.
    bytesLanded_[slot] += wc.byte_len;
    if (++partsLanded_[slot] < parts_) return;
    const uint32_t got = bytesLanded_[slot];
    partsLanded_[slot] = 0;
    bytesLanded_[slot] = 0;
    if (got != bytes) {
      fail("rank " + std::to_string(peer_) + " wrote slot " + std::to_string(slot) + " in " +
           std::to_string(parts_) + " parts of " + std::to_string(got) + " bytes, not the " +
           std::to_string(bytes) + " it announced");
      return;
    }
  }
  countSlotBytes(bytes);
  if (events_.on()) {  // a receive's step: the slot that landed (its write was the sender's)
    events_.beginSlot(slot, bytes);
    events_.endSlot(slot);
  }
  if (flushQp_ != nullptr) {
    postFlush(slot, word);  // published when the read completes
    return;
  }
  landed_.mark(slot, word);  // slot = its counter mod kFifoSlots, all SlotsInOrder needs
  landed_.publish(fifo_, posted_);
}

}  // namespace braid::transport::ib
