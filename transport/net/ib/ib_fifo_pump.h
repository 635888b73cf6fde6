// The two halves of a FIFO over verbs: each an IbEndpoint the proxy drives, each over a FIFO
// (engine::FifoRef) in this process's memory that the executor, or a kernel, uses exactly as it
// uses a FIFO to a rank on its own host.
//
//   sender:    executor -> local FIFO -> [IbSendPump] RDMA write with immediate of slot k
//                                         into the receiver's local FIFO, slot k % kFifoSlots
//   receiver:  [IbRecvPump] its completion -> publishes slot k -> executor
//              executor releases slot k -> [IbRecvPump] RDMA write of its released count
//                                          into the sender's credit word
//
// The immediate carries the slot's posted word (byte count, last-slice flag) and its index, so
// with several queue pairs the receiver publishes slots in order whatever order they land in.
// Several queue pairs (all on the FIFO's one NIC) carry slots round-robin, slot k on pair k % n,
// or, with BRAID_IB_SPLIT_DATA_ON_QPS=1, every slot in n parts, one per pair, as NCCL splits a
// message: part i is bytes [i * c, (i + 1) * c) with c = the slot's bytes / n rounded up to 128
// (empty where the slot is shorter), each part a write with immediate, so the receiver publishes
// the slot once all n have landed and the sender hands it back once all n completed.
// Back-pressure: the sender writes slot k only once the credit word says slot k - kFifoSlots
// was released, and hands slot k back to its executor once the write completed; the executors
// wait on their local FIFOs only, with their own deadlines. The bytes move once, from the
// sender's slot into the receiver's: no copy in either proxy.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/proxy_events.h"
#include "base/socket.h"
#include "braid/status.h"
#include "kernels/engine/fifo.h"
#include "transport/net/ib/gdr_choice.h"
#include "transport/net/ib/ib_queue_pairs.h"
#include "transport/net/slots_in_order.h"

namespace braid::transport::ib {

/// The largest slot a verbs FIFO carries: the immediate has 28 bits for the byte count.
inline constexpr size_t kMaxIbSlotBytes = (size_t{1} << 28) - 1;
/// What NCCL aligns the parts of a message split over queue pairs to.
inline constexpr uint32_t kSplitAlignment = 128;

/// Where part `part` of `parts` of a slot of `bytes` bytes starts, and how long it is (0 where
/// the slot ends before it): each part but the last is the slot's share rounded up to
/// kSplitAlignment.
struct SlotPart {
  uint32_t offset;
  uint32_t bytes;
};
SlotPart slotPart(uint32_t bytes, int part, int parts);

/// Where a FIFO's slots are (gdr_choice.h) and how the NIC registers them.
struct SlotMemory {
  SlotPlace place = SlotPlace::kHost;
  /// kDmabuf: an export of the slots' allocation, which starts at the FIFO's first slot; the
  /// caller closes it once start() returned (the registration keeps its own reference).
  int dmabufFd = -1;
  /// A receiver in device memory: read back a byte of each slot that landed before publishing
  /// it (NCCL's flush; unless NCCL_GDR_FLUSH_DISABLE), so that the NIC's PCIe writes are visible
  /// before the kernel reads.
  bool flush = false;
  /// A relay's FIFO (ib_relay.h): another rank's bytes, counted apart on the port.
  bool relayed = false;
};

/// What the halves share: the handshake, the failure, the registration with the proxy.
class IbPump : public IbEndpoint {
 public:
  ~IbPump() override;
  bool failed() const { return state_.load() == State::kFailed; }
  /// Fails when one of its queue pairs, or the port under it, is what `failure` ends.
  void asyncFailure(const IbAsyncFailure& failure) override;

 protected:
  enum class State { kAwaitSocket, kAwaitHello, kSendHello, kRunning, kFailed };
  /// Its queue pairs are on port `nic` where this process has it (IbNetwork::portFor).
  IbPump(IbNetwork& network, const kernels::engine::FifoRef& fifo, int peer, int64_t timeoutMs,
         const std::string& nic, const SlotMemory& memory);
  /// Queue pairs, the credit page, and the FIFO's slots registered with `slotAccess`.
  Status setUp(int slotAccess, int creditAccess);
  /// Counts `bytes` that left or landed in the slots, by where they are (gpu_net_bytes.h).
  void countSlotBytes(uint64_t bytes) const;
  /// Starts being driven by the proxy.
  void attach();
  /// Stops being driven (idempotent). Each subclass's destructor must call it first: the
  /// proxy calls progress() until it returns.
  void detach();
  /// Moves to kFailed and says why, once.
  void fail(const std::string& why);
  /// The handshake's steps; false while waiting. `sendFirst`: the sender sends its hello at
  /// once, the receiver once it has read the sender's and is ready for writes.
  bool handshake(bool sendFirst);
  /// The receiver's hello, sent as the socket takes it (kSendHello): never a wait on the
  /// proxy's thread, which drives every end of the process. True once it is all sent.
  bool sendHello();
  /// What this side offers the other: the memory the peer writes, and our queue pairs.
  virtual IbHello ourHello() const = 0;

  IbNetwork& network_;
  kernels::engine::FifoRef fifo_;
  SlotMemory memory_;
  int peer_;
  int portIndex_;
  Deadline connectBy_;
  std::atomic<State> state_{State::kAwaitHello};
  braid::sockets::Socket socket_;
  HelloReader reader_;
  IbHello remote_{};
  int parts_ = 1;         ///< writes per slot: the queue pairs where split, else 1
  IbHello helloOut_{};    ///< the receiver's hello, while kSendHello
  size_t helloSent_ = 0;  ///< its bytes sent so far
  std::unique_ptr<uint32_t, void (*)(void*)> creditPage_{nullptr, nullptr};
  IbRegion slotsRegion_;
  IbRegion creditRegion_;
  std::unique_ptr<IbQueuePairs> qps_;  // after the regions: destroyed before they deregister
  uint32_t id_;                        // in the wr_ids of everything this end posts
  bool attached_ = false;
  profile::ProxyEventTrack events_;  // the proxy's events (channel unknown here: 0)
};

class IbSendPump final : public IbPump {
 public:
  /// The sending half for `fifo` (whose posted slots it takes, as its receiver), to `peer`,
  /// whose receiving half is at the other end of `connected`.
  static Result<std::unique_ptr<IbSendPump>> start(IbNetwork& network,
                                                   const kernels::engine::FifoRef& fifo,
                                                   braid::sockets::Socket connected, int peer,
                                                   int64_t timeoutMs, const std::string& nic,
                                                   const SlotMemory& memory = {});
  /// Sends what the executor posted first (bounded by kDrainMs): a host collective completes
  /// on a rank before its last slots have left.
  ~IbSendPump() override;

  bool progress() override;
  void completed(const ibv_wc& wc, uint32_t tag) override;
  /// The bytes it posted so far (from any thread).
  uint64_t bytesPosted() const { return bytesPosted_.load(std::memory_order_relaxed); }

 private:
  using IbPump::IbPump;
  IbHello ourHello() const override;
  /// Posts slot `slot`'s writes: one on pair slot % n, or a part on each pair where split.
  bool postSlot(uint32_t slot);

  uint32_t next_ = 0;                                    // the next slot to write
  uint8_t partsDone_[kernels::engine::kFifoSlots] = {};  // completed parts, by slot % kFifoSlots
  kernels::engine::FifoCursor released_{};               // as the local FIFO's receiver
  std::atomic<uint32_t> releasedCount_{0};               // released_.mine, for the destructor
  net::SlotsInOrder written_;                            // completed writes, released in order
  std::atomic<uint64_t> bytesPosted_{0};
};

class IbRecvPump final : public IbPump {
 public:
  /// The sender's connection, once the rendezvous has it (never blocks).
  using SocketTaker = std::function<std::optional<braid::sockets::Socket>()>;
  /// The receiving half for `fifo` (which it posts into, as its sender), from `peer`.
  static Result<std::unique_ptr<IbRecvPump>> start(IbNetwork& network,
                                                   const kernels::engine::FifoRef& fifo,
                                                   SocketTaker take, int peer, int64_t timeoutMs,
                                                   const std::string& nic,
                                                   const SlotMemory& memory = {});
  /// Detaches here, not in ~IbPump: by then this part is gone, and the proxy would call it.
  ~IbRecvPump() override { detach(); }

  bool progress() override;
  void completed(const ibv_wc& wc, uint32_t tag) override;

 private:
  using IbPump::IbPump;
  IbHello ourHello() const override;
  Status postReceive(int qp);
  /// The flush's loopback queue pair (connected to itself, on the first pair's port) and the
  /// host word its reads land in.
  Status startFlush();
  /// Reads a byte of slot `slot` back through the loopback pair; `word` is published once the
  /// read completes.
  bool postFlush(uint32_t slot, uint32_t word);

  SocketTaker take_;
  kernels::engine::FifoCursor posted_{};                    // as the local FIFO's sender
  net::SlotsInOrder landed_;                                // arrived slots, published in order
  uint8_t partsLanded_[kernels::engine::kFifoSlots] = {};   // where split: parts arrived
  uint32_t bytesLanded_[kernels::engine::kFifoSlots] = {};  // and their bytes, by slot
  uint32_t creditSent_ = 0;
  int creditsInFlight_ = 0;
  std::unique_ptr<uint32_t, void (*)(void*)> flushPage_{nullptr, nullptr};
  IbRegion flushRegion_;
  std::unique_ptr<IbQueuePairs> flushQp_;  // after its region: destroyed before it deregisters
  uint32_t flushWords_[kernels::engine::kFifoSlots] = {};  ///< landed words awaiting their flush
};

}  // namespace braid::transport::ib
