#include "transport/net/plugin/plugin_fifo.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "base/deadline.h"
#include "base/futex.h"
#include "base/log.h"
#include "base/socket_io.h"
#include "kernels/engine/fifo.h"
#include "transport/net/device_slots_fifo.h"
#include "transport/net/gpu_net_bytes.h"
#include "transport/net/plugin/net_plugin_abi.h"
#include "transport/net/plugin/plugin_proxy.h"
#include "transport/net/proxied_ends.h"
#include "transport/net/proxied_gpu_ends.h"
#include "transport/net/proxy_waits.h"
#include "transport/shm/shm_fifo.h"

namespace braid::transport::plugin {
namespace {

namespace engine = kernels::engine;
using braid::sockets::Socket;

// Requests in flight per FIFO end: a FIFO's slots, and never more than NCCL lets a comm have.
constexpr uint32_t kInFlight =
    std::min<uint32_t>(engine::kFifoSlots, static_cast<uint32_t>(netabi::kMaxRequests));
// Every transfer of a FIFO carries this tag: a comm carries one FIFO, in order.
constexpr int kTag = 0;
// A GPU FIFO's word travels after the slot's bytes (SlotWords::kTrailer), or apart (kSeparate).
constexpr uint32_t kWordBytes = sizeof(uint32_t);
// Requests per slot: its data, and its word where that travels apart.
constexpr int kMaxParts = 2;
static_assert(kInFlight * kMaxParts + 1 <= static_cast<uint32_t>(netabi::kMaxRequests),
              "a FIFO end's requests (two per slot, and a flush) must fit what a comm may have");

// How a pump reaches its FIFO's slots.
struct SlotAccess {
  SlotWords words = SlotWords::kBare;
  int type = netabi::kPtrHost;  // how the slots are registered
  int dmabufFd = -1;            // kPtrDmabuf: the dmabuf of the slots, the pump's to close
  bool flush = false;           // a receiver flushes each slot before publishing it
};

// What the ends trade over the rendezvous connection before the plugin connects: the receiver
// sends the plugin's handle and whether its slots are in device memory, and the sender answers
// (one byte) whether its are. Where either is, the slots' words travel apart
// (SlotWords::kSeparate) at both ends: a staged end cannot find a device end's word after the
// data, nor can a device end put one there (NCCL_NET_GDR_READ=0 stages senders only).
struct Hello {
  char handle[netabi::kHandleMaxSize];
  uint8_t deviceSlots;
};

// Moves `size` bytes over the rendezvous connection without blocking, across calls: true once
// all of them went (or came); an error when the connection failed.
Result<bool> moveSome(const Socket& socket, char* bytes, size_t size, size_t* done, bool sending) {
  // Through the socket's seal, where the process encrypts (base/socket_io.h).
  size_t n = 0;
  const bool alive = sending ? braid::sockets::sendWhatFits(socket, bytes + *done, size - *done, &n)
                             : braid::sockets::recvArrived(socket, bytes + *done, size - *done, &n);
  *done += n;
  if (*done == size) return true;
  if (alive) return false;
  return remoteError(std::string("the connection closed or failed while ") +
                     (sending ? "sending" : "receiving") + " the plugin's connection handle");
}

// What both pumps share: the state of the connection, the registration, the failure.
class PluginPump : public PluginEndpoint {
 public:
  ~PluginPump() override = default;

 protected:
  enum class State { kAwaitSocket, kHandle, kConnecting, kRunning, kFailed };

  PluginPump(const engine::FifoRef& fifo, PluginLink link, SlotAccess access, bool isSend)
      : fifo_(fifo),
        link_(std::move(link)),
        access_(access),
        trailer_(access.words == SlotWords::kTrailer ? kWordBytes : 0),
        parts_(access.words == SlotWords::kSeparate ? 2 : 1),
        net_(link_.plugin->net()),
        connectBy_(link_.timeoutMs > 0 ? Deadline::afterMs(link_.timeoutMs) : Deadline::never()),
        events_(link_.watch.proxyEvents,
                {link_.peer, link_.watch.channel, isSend, static_cast<size_t>(fifo.slotBytes)}) {}
  void closeDmabuf() {
    if (access_.dmabufFd >= 0) ::close(access_.dmabufFd);
    access_.dmabufFd = -1;
  }

  bool running() const { return state_ == State::kRunning; }
  /// Moves to kFailed and says why, naming the plugin, once: logged and told to the
  /// communicator.
  void fail(const std::string& why) {
    report("NET plugin " + link_.plugin->describe() + ": " + why);
  }
  /// Fails with `status` (whose words name the plugin and its call) where it is not ok; whether
  /// it was. `what` says what the FIFO end was doing.
  bool check(const Status& status, const std::string& what) {
    if (status.ok()) return true;
    report(status.message() + ", " + what + " rank " + std::to_string(link_.peer));
    return false;
  }
  void report(const std::string& text) {
    if (state_ == State::kFailed) return;
    state_ = State::kFailed;
    failed_.store(true);
    socket_.close();
    BRAID_WARN("%s", text.c_str());
    if (link_.watch.onFailure) link_.watch.onFailure(link_.peer, text);
  }
  /// While connecting: fails once the deadline passed; whether it has.
  bool lateConnecting() {
    if (!connectBy_.expired()) return false;
    fail("rank " + std::to_string(link_.peer) +
         " did not connect its FIFO in time (BRAID_TIMEOUT_MS); is it running the same "
         "collective?");
    return true;
  }
  /// Posts what is left of slot next_'s requests with `post` (isend or irecv): its data (`size`
  /// bytes at `data`), then its word where that travels apart. True once all are posted (next_
  /// moves on); false to stop posting: a post failed (said), or the plugin is busy and is asked
  /// again on the next pass.
  template <typename Post>
  bool postSlot(Post post, char* data, size_t size, const char* what) {
    const uint32_t i = next_ % engine::kFifoSlots;
    while (partsPosted_ < parts_) {
      void* request = nullptr;
      // The data carries the slot's profiler handle (profile::NetEventParent); the word none.
      const Status status = partsPosted_ == 0
                                ? post(data, size, mhandle_, events_.netParent(next_), &request)
                                : post(&words_[i], kWordBytes, wordMhandle_, nullptr, &request);
      if (!check(status, what) || request == nullptr) return false;
      requests_[i][partsPosted_++] = request;
    }
    partsPosted_ = 0;
    ++next_;
    return true;
  }
  /// Tests slot `slot`'s requests in order from the first not yet done: true once all are, the
  /// data's bytes in tested_ (for the caller to take and reset with takeTested()).
  Result<bool> testSlot(uint32_t slot) {
    void* const* requests = requests_[slot % engine::kFifoSlots];
    while (partsDone_ < parts_) {
      bool done = false;
      size_t bytes = 0;
      BRAID_TRY(net_.test(requests[partsDone_], &done, &bytes));
      if (!done) return false;
      if (partsDone_++ == 0) tested_ = bytes;
    }
    return true;
  }
  size_t takeTested() {
    partsDone_ = 0;
    return tested_;
  }
  /// Counts `bytes` a GPU FIFO end moved, by where the plugin found them.
  void countBytes(size_t bytes) const {
    if (access_.words == SlotWords::kBare) return;  // a host communicator's
    if (access_.type == netabi::kPtrHost) {
      net::countStagedBytes(bytes);
    } else {
      net::countDeviceRegisteredBytes(bytes);
    }
  }
  /// One step of moving `size` bytes at `bytes` over the rendezvous connection: whether all
  /// moved (false while not; failing where the connection failed or the deadline passed).
  bool moveStep(char* bytes, size_t size, size_t* done, bool sending) {
    Result<bool> moved = moveSome(socket_, bytes, size, done, sending);
    if (!moved.ok()) {
      fail("connecting to rank " + std::to_string(link_.peer) + ": " + moved.status().message());
      return false;
    }
    if (!moved.value()) lateConnecting();
    return moved.value();
  }
  /// One step of the Hello's trip (`sending` it, or receiving it); kConnecting once all of it
  /// went. Whether it did.
  bool moveHandle(bool sending) {
    if (sending) hello_.deviceSlots = deviceSlots();
    if (!moveStep(reinterpret_cast<char*>(&hello_), sizeof(hello_), &helloMoved_, sending)) {
      return false;
    }
    if (!sending) agreeWords(hello_.deviceSlots != 0);
    state_ = State::kConnecting;
    return true;
  }
  /// One step of the sender's answer (`sending` it, or receiving it): whether it went.
  bool moveReply(bool sending) {
    if (replyMoved_ == sizeof(reply_)) return true;
    if (sending) reply_ = deviceSlots();
    if (!moveStep(reinterpret_cast<char*>(&reply_), sizeof(reply_), &replyMoved_, sending)) {
      return false;
    }
    if (!sending) agreeWords(reply_ != 0);
    return true;
  }
  uint8_t deviceSlots() const { return access_.words == SlotWords::kSeparate ? 1 : 0; }
  /// Where the peer's slots are in device memory, this end's words travel apart too (Hello).
  void agreeWords(bool peerInDevice) {
    if (!peerInDevice || access_.words != SlotWords::kTrailer) return;
    access_.words = SlotWords::kSeparate;
    trailer_ = 0;
    parts_ = kMaxParts;
  }
  /// The FIFO's slots registered with the plugin on `comm` as access_ says, and the words'
  /// array where the words travel apart; the connection is done.
  void registerSlots(void* comm) {
    comm_ = comm;
    const size_t bytes = static_cast<size_t>(fifo_.stride) * engine::kFifoSlots;
    const Status registered = access_.type == netabi::kPtrDmabuf
                                  ? net_.regMrDmaBuf(comm_, fifo_.slots, bytes, netabi::kPtrDmabuf,
                                                     /*offset=*/0, access_.dmabufFd, &mhandle_)
                                  : net_.regMr(comm_, fifo_.slots, bytes, access_.type, &mhandle_);
    // The plugin holds what it needs of the dmabuf now (as NCCL closes it after registering).
    closeDmabuf();
    if (!check(registered, "registering the FIFO with")) return;
    if (parts_ > 1 &&
        !check(net_.regMr(comm_, words_, sizeof(words_), netabi::kPtrHost, &wordMhandle_),
               "registering the FIFO's words with")) {
      return;
    }
    socket_.close();
    state_ = State::kRunning;
    BRAID_TRACE("NET plugin %s: FIFO with rank %d connected", net_.name().c_str(), link_.peer);
  }
  /// Deregisters and closes what the connection made (the proxy no longer drives this end).
  template <typename Close>
  void closeComm(Close close) {
    if (mhandle_ != nullptr) logIfFailed(net_.deregMr(comm_, mhandle_));
    if (wordMhandle_ != nullptr) logIfFailed(net_.deregMr(comm_, wordMhandle_));
    if (comm_ != nullptr) logIfFailed(close(comm_));
    closeDmabuf();
  }
  static void logIfFailed(const Status& status) {
    if (!status.ok()) BRAID_WARN("%s", status.message().c_str());
  }

  /// The most bytes of data a slot carries: its capacity, less the word's room where it has one.
  uint32_t dataCapacity() const { return fifo_.slotBytes - trailer_; }

  engine::FifoRef fifo_;
  PluginLink link_;
  SlotAccess access_;
  uint32_t trailer_;  // kWordBytes where each transfer ends with the slot's word, else 0
  int parts_;         // requests per slot: 2 where the word travels apart
  NetPlugin& net_;
  Deadline connectBy_;
  profile::ProxyEventTrack events_;    // the proxy thread's, closed once it no longer drives this
  State state_ = State::kAwaitSocket;  // the proxy thread's
  std::atomic<bool> failed_{false};    // the same, for the end's thread
  Socket socket_;
  Hello hello_{};
  size_t helloMoved_ = 0;
  uint8_t reply_ = 0;  // the sender's answer: its Hello::deviceSlots
  size_t replyMoved_ = 0;
  void* comm_ = nullptr;
  void* mhandle_ = nullptr;
  void* wordMhandle_ = nullptr;
  uint32_t words_[engine::kFifoSlots] = {};  // SlotWords::kSeparate: the slots' words, host memory
  void* requests_[engine::kFifoSlots][kMaxParts] = {};
  uint32_t next_ = 0;    // the next slot to isend, or to irecv into
  int partsPosted_ = 0;  // slot next_'s requests posted so far
  int partsDone_ = 0;    // the oldest slot's requests tested done so far
  size_t tested_ = 0;    // the oldest slot's data bytes, once its data request is done
};

class PluginSendPump final : public PluginPump {
 public:
  PluginSendPump(const engine::FifoRef& fifo, PluginLink link, Socket connected, SlotAccess access)
      : PluginPump(fifo, std::move(link), access, /*isSend=*/true) {
    socket_ = std::move(connected);
    state_ = State::kHandle;
    released_ = engine::receiverCursor(fifo_.counters);
    next_ = released_.mine;
    releasedCount_.store(released_.mine);
    link_.plugin->proxy().add(this);
  }
  // Sends what the executor posted first (bounded by net::kDrainMs, cut short once the
  // communicator stopped): a host collective completes on a rank before its last slots left.
  ~PluginSendPump() override {
    const Deadline drainBy =
        Deadline::afterMs(net::kDrainMs).cancelledBy(link_.watch.stopped.get());
    net::waitDrained(drainBy, [this] {
      return failed_.load() || releasedCount_.load() == engine::loadAcquire(&fifo_.counters->tail);
    });
    link_.plugin->proxy().remove(this);
    closeComm([this](void* comm) { return net_.closeSend(comm); });
  }

  bool progress() override {
    if (state_ == State::kHandle) return moveHandle(/*sending=*/false);
    if (state_ == State::kConnecting) return connect();
    if (!running()) return false;
    bool moved = post();
    moved = complete() || moved;
    return moved;
  }

 private:
  bool connect() {
    void* comm = nullptr;
    if (!moveReply(/*sending=*/true)) return false;
    if (!check(net_.connect(link_.dev, hello_.handle, &comm), "connecting to")) return false;
    if (comm == nullptr) return lateConnecting();
    registerSlots(comm);
    return true;
  }
  // An isend for each slot the executor posted, while requests are free.
  bool post() {
    bool moved = false;
    const uint32_t tail = engine::loadAcquire(&fifo_.counters->tail);
    while (next_ != tail && next_ - released_.mine < kInFlight) {
      const uint32_t word = engine::loadRelaxed(&fifo_.counters->bytes[next_ % engine::kFifoSlots]);
      // A host FIFO's word is its byte count; a GPU FIFO's carries kLastSlice too.
      const uint32_t bytes = access_.words != SlotWords::kBare ? word & ~engine::kLastSlice : word;
      if (bytes > dataCapacity()) {
        fail("a slot of " + std::to_string(bytes) + " bytes, over the FIFO's " +
             std::to_string(dataCapacity()));
        return false;
      }
      char* slot = engine::slotAt(fifo_, next_);
      // The slot's bytes past `bytes` are free until it is released: the word goes there.
      if (trailer_ != 0) std::memcpy(slot + bytes, &word, kWordBytes);
      words_[next_ % engine::kFifoSlots] = word;
      // The step starts before the isend, which hands its handle to the plugin's own events; a
      // post the plugin asks to retry keeps it.
      if (events_.on() && !events_.slotOpen(next_)) events_.beginSlot(next_, bytes);
      auto isend = [this](void* data, size_t size, void* mhandle, void* phandle, void** request) {
        return net_.isend(comm_, data, size, kTag, mhandle, phandle, request);
      };
      if (!postSlot(isend, slot, bytes + trailer_, "sending to")) break;
      countBytes(bytes);
      moved = true;
    }
    return moved;
  }
  // Sent slots handed back to the executor, oldest first.
  bool complete() {
    bool moved = false;
    while (released_.mine != next_) {
      Result<bool> done = testSlot(released_.mine);
      if (!check(done.status(), "testing a send to")) return false;
      if (!done.value()) break;
      takeTested();
      if (events_.on()) events_.endSlot(released_.mine);
      engine::releaseSlot(fifo_, released_);
      releasedCount_.store(released_.mine);
      moved = true;
    }
    if (moved) futex::wakeIfWaiting(&fifo_.counters->head, &fifo_.counters->sendWaiting);
    return moved;
  }

  engine::FifoCursor released_{};  // as the local FIFO's receiver
  std::atomic<uint32_t> releasedCount_{0};
};

class PluginRecvPump final : public PluginPump {
 public:
  PluginRecvPump(const engine::FifoRef& fifo, PluginLink link, SocketTaker take, SlotAccess access)
      : PluginPump(fifo, std::move(link), access, /*isSend=*/false), take_(std::move(take)) {
    published_ = engine::senderCursor(fifo_.counters);
    next_ = published_.mine;
    link_.plugin->proxy().add(this);
  }
  ~PluginRecvPump() override {
    link_.plugin->proxy().remove(this);
    if (listenComm_ != nullptr) logIfFailed(net_.closeListen(listenComm_));
    closeComm([this](void* comm) { return net_.closeRecv(comm); });
  }

  bool progress() override {
    switch (state_) {
      case State::kAwaitSocket:
        return takeSocket();
      case State::kHandle:
        return moveHandle(/*sending=*/true);
      case State::kConnecting:
        return accept();
      case State::kRunning: {
        bool moved = post();
        moved = complete() || moved;
        return moved;
      }
      case State::kFailed:
        return false;
    }
    return false;
  }

 private:
  bool takeSocket() {
    std::optional<Socket> socket = take_();
    if (!socket) return lateConnecting();
    socket_ = std::move(*socket);
    if (!check(net_.listen(link_.dev, hello_.handle, &listenComm_), "listening for")) return false;
    state_ = State::kHandle;
    return true;
  }
  bool accept() {
    void* comm = nullptr;
    if (!moveReply(/*sending=*/false)) return false;
    if (!check(net_.accept(listenComm_, &comm), "accepting the FIFO of")) return false;
    if (comm == nullptr) return lateConnecting();
    logIfFailed(net_.closeListen(listenComm_));
    listenComm_ = nullptr;
    registerSlots(comm);
    return true;
  }
  // An irecv into each slot the executor released, while requests are free.
  bool post() {
    bool moved = false;
    const uint32_t head = engine::loadAcquire(&fifo_.counters->head);
    while (next_ - head < engine::kFifoSlots && next_ - published_.mine < kInFlight) {
      auto irecv = [this](void* data, size_t size, void* mhandle, void* phandle, void** request) {
        return net_.irecv(comm_, data, size, kTag, mhandle, phandle, request);
      };
      if (!postSlot(irecv, engine::slotAt(fifo_, next_), fifo_.slotBytes, "receiving from")) break;
      moved = true;
    }
    return moved;
  }
  // Received slots published to the executor, oldest first.
  bool complete() {
    bool moved = false;
    while (published_.mine != next_) {
      Result<bool> tested = testSlot(published_.mine);
      if (!tested.ok() && !executorWaits()) {
        endQuietly(tested.status());
        return false;
      }
      if (!check(tested.status(), "testing a receive from")) return false;
      if (!tested.value() || !flushed()) break;
      const size_t bytes = takeTested();
      if (bytes > fifo_.slotBytes || bytes < trailer_) {
        fail("a receive from rank " + std::to_string(link_.peer) + " of " + std::to_string(bytes) +
             " bytes, not within the slot's " + std::to_string(trailer_) + ".." +
             std::to_string(fifo_.slotBytes));
        return false;
      }
      Result<uint32_t> word = wordOf(published_.mine, bytes);
      if (!word.ok()) {
        fail(word.status().message());
        return false;
      }
      // A receive's step is the slot that landed, handed on: an irecv posted ahead waits for a
      // call that may not have started.
      if (events_.on()) events_.beginSlot(published_.mine, bytes - trailer_);
      engine::postSlot(fifo_, published_, word.value());
      if (events_.on()) events_.endSlot(published_.mine - 1);
      countBytes(bytes - trailer_);
      moved = true;
    }
    if (moved) futex::wakeIfWaiting(&fifo_.counters->tail, &fifo_.counters->recvWaiting);
    return moved;
  }

  // Whether the oldest slot, whose data and word came, is flushed where access_ asks: iflush of
  // its data posted once (a null request: nothing to flush), then tested until done. A failed
  // call fails the end (false).
  bool flushed() {
    if (!access_.flush || tested_ == 0) return true;
    const uint32_t slot = published_.mine;
    if (!flushPosted_) {
      if (!check(net_.iflush(comm_, engine::slotAt(fifo_, slot), tested_, mhandle_, &flush_),
                 "flushing a receive from")) {
        return false;
      }
      flushPosted_ = true;
    }
    if (flush_ != nullptr) {
      bool done = false;
      size_t bytes = 0;
      if (!check(net_.test(flush_, &done, &bytes), "testing a flush of a receive from")) {
        return false;
      }
      if (!done) return false;
      net::countFlush();
    }
    flush_ = nullptr;
    flushPosted_ = false;
    return true;
  }
  // The word to post for slot `slot`, which received `bytes`: the count itself, or the word that
  // came after the data or apart from it, which must count the data.
  Result<uint32_t> wordOf(uint32_t slot, size_t bytes) const {
    if (access_.words == SlotWords::kBare) return static_cast<uint32_t>(bytes);
    uint32_t word = words_[slot % engine::kFifoSlots];
    if (trailer_ != 0) {
      std::memcpy(&word, engine::slotAt(fifo_, slot) + bytes - kWordBytes, kWordBytes);
    }
    if ((word & ~engine::kLastSlice) != bytes - trailer_) {
      return remoteError("a receive from rank " + std::to_string(link_.peer) + " of " +
                         std::to_string(bytes - trailer_) + " bytes whose word says " +
                         std::to_string(word & ~engine::kLastSlice) +
                         " (a peer not running braid's GPU FIFO?)");
    }
    return word;
  }
  // Whether the executor is asleep on this FIFO with nothing in it to read: a call waits for
  // what this end receives.
  bool executorWaits() const {
    return __atomic_load_n(&fifo_.counters->recvWaiting, __ATOMIC_ACQUIRE) != 0 &&
           engine::loadAcquire(&fifo_.counters->head) == published_.mine;
  }
  // A receive failed while nobody waited on the FIFO: most often the sender's communicator went
  // away first and its plugin closed the connection, which the receives braid posts ahead then
  // see (a plugin cannot say it closed in order). As over sockets, where a peer that closes
  // between slots is no failure, this end only stops, and says so at INFO: a call that then
  // waits on it ends by the watch of the ranks, which sees why the peer went, or its deadline.
  void endQuietly(const Status& status) {
    BRAID_INFO("%s, receiving from rank %d while no call waited; this FIFO end stops",
               status.message().c_str(), link_.peer);
    state_ = State::kFailed;
    failed_.store(true);
  }

  SocketTaker take_;
  void* listenComm_ = nullptr;
  engine::FifoCursor published_{};  // as the local FIFO's sender
  bool flushPosted_ = false;        // the oldest slot's iflush was called
  void* flush_ = nullptr;           // and the request it gave, until done
};

using PluginSendEnd = net::PumpedEnd<net::ProxiedSendEnd, PluginSendPump>;
using PluginRecvEnd = net::PumpedEnd<net::ProxiedRecvEnd, PluginRecvPump>;
using GpuPluginSendEnd = net::PumpedEnd<net::ProxiedGpuSendEnd, PluginSendPump>;
using GpuPluginRecvEnd = net::PumpedEnd<net::ProxiedGpuRecvEnd, PluginRecvPump>;

// `transfer` bytes must fit one transfer of the link's device.
Status checkSlot(const PluginLink& link, size_t transfer) {
  const DeviceProps& props = link.plugin->devices().at(link.dev);
  if (transfer > props.maxP2pBytes) {
    return invalidUsage("NET plugin " + link.plugin->describe() + ": a FIFO slot of " +
                        std::to_string(transfer) + " bytes is over the " +
                        std::to_string(props.maxP2pBytes) +
                        " bytes its device takes in one transfer; lower BRAID_BUFFSIZE");
  }
  return Status::success();
}

// A GPU FIFO end's FIFO and how its pump reaches the slots.
struct GpuPluginFifo {
  std::unique_ptr<cuda_ipc::GpuRecvEnd> fifo;
  SlotAccess access;
};

// The FIFO of a GPU end as spec.slots says, `cursor` the one its receiving side keeps: in pinned
// host memory with room for the word after the data, or in device memory (the word apart), with
// the dmabuf that registers it.
Result<GpuPluginFifo> makeGpuFifo(const PluginLink& link, const GpuFifoSpec& spec,
                                  kernels::engine::FifoCursor* cursor) {
  GpuPluginFifo made;
  if (spec.slots == GpuSlots::kStaged) {
    const size_t capacity = spec.slotBytes + kWordBytes;
    BRAID_TRY(checkSlot(link, capacity));
    BRAID_ASSIGN_OR_RETURN(
        made.fifo, net::makePinnedFifo(*spec.runtime, spec.name, capacity, cursor, spec.stream));
    made.access.words = SlotWords::kTrailer;
    return made;
  }
  BRAID_TRY(checkSlot(link, spec.slotBytes));
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<net::DeviceSlotsFifo> fifo,
                         net::DeviceSlotsFifo::create(*spec.runtime, spec.slotBytes, cursor));
  made.access.words = SlotWords::kSeparate;
  made.access.flush = spec.flush;
  made.access.type = netabi::kPtrCuda;
  if (spec.slots == GpuSlots::kDmabuf) {
    Result<int> fd = spec.runtime->exportDmabuf(fifo->end().fifo.slots, fifo->slotsBytes());
    if (!fd.ok()) return fd.status().withContext("GPU FIFO " + spec.name + ": GPUDirect RDMA");
    made.access.type = netabi::kPtrDmabuf;
    made.access.dmabufFd = fd.value();
  }
  made.fifo = std::move(fifo);
  return made;
}

}  // namespace

Result<std::unique_ptr<SendEnd>> openPluginSendEnd(PluginLink link, Socket connected,
                                                   size_t slotBytes) {
  BRAID_TRY(checkSlot(link, slotBytes));
  BRAID_ASSIGN_OR_RETURN(shm::PrivateFifo fifo, shm::createPrivateFifo(slotBytes));
  auto end = std::make_unique<PluginSendEnd>(std::move(fifo));
  end->makePump(std::move(link), std::move(connected), SlotAccess{});
  return std::unique_ptr<SendEnd>(std::move(end));
}

Result<std::unique_ptr<RecvEnd>> openPluginRecvEnd(PluginLink link, SocketTaker take,
                                                   size_t slotBytes) {
  BRAID_TRY(checkSlot(link, slotBytes));
  BRAID_ASSIGN_OR_RETURN(shm::PrivateFifo fifo, shm::createPrivateFifo(slotBytes));
  auto end = std::make_unique<PluginRecvEnd>(std::move(fifo));
  end->makePump(std::move(link), std::move(take), SlotAccess{});
  return std::unique_ptr<RecvEnd>(std::move(end));
}

Result<std::unique_ptr<cuda_ipc::GpuSendEnd>> openGpuPluginSendEnd(
    PluginLink link, Socket connected, const GpuFifoSpec& spec,
    kernels::engine::FifoCursor* proxyCursor) {
  BRAID_ASSIGN_OR_RETURN(GpuPluginFifo made, makeGpuFifo(link, spec, proxyCursor));
  auto end = std::make_unique<GpuPluginSendEnd>(std::move(made.fifo), spec.cursor);
  end->makePump(std::move(link), std::move(connected), made.access);
  return std::unique_ptr<cuda_ipc::GpuSendEnd>(std::move(end));
}

Result<std::unique_ptr<cuda_ipc::GpuRecvEnd>> openGpuPluginRecvEnd(PluginLink link,
                                                                   SocketTaker take,
                                                                   const GpuFifoSpec& spec) {
  BRAID_ASSIGN_OR_RETURN(GpuPluginFifo made, makeGpuFifo(link, spec, spec.cursor));
  auto end = std::make_unique<GpuPluginRecvEnd>(std::move(made.fifo));
  end->makePump(std::move(link), std::move(take), made.access);
  return std::unique_ptr<cuda_ipc::GpuRecvEnd>(std::move(end));
}

}  // namespace braid::transport::plugin
