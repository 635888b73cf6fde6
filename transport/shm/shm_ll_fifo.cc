// The LL FIFO's two ends; the segment layout is in shm_ll_layout.h.
//
// Why 8-byte cells: one aligned 64-bit store or load is single-copy atomic on
// every 64-bit CPU, so a receiver that reads a cell with the expected flag has
// the data of that same store: no second location, hence no fence and no
// compiler barrier beyond the atomic access itself. 16-byte cells would give
// 64-bit flags that never wrap, but a 16-byte atomic store exists only on
// some CPUs (x86 with AVX, Arm with LSE2) and std::atomic of 16 bytes falls
// back to a locked cmpxchg16b or a lock. Both formats spend half the memory
// on flags.
//
// Why old cells never look new: see kernels/engine/ll.h, whose rewrite rule
// and first fill this FIFO follows.
//
// Flow control is the Simple FIFO's: the receiver publishes `head` on its
// own cache line after each message and the sender keeps the last value it
// read, so it touches that line only when its copy says the FIFO is full.
// The data path of the receiver reads nothing but the slot.
#include "transport/shm/shm_ll_fifo.h"

#include <sched.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/futex.h"
#include "transport/shm/shm_ll_layout.h"
#include "transport/shm/shm_segment.h"

namespace braid::transport::shm {
namespace ll {
namespace {

// A process-private buffer aligned like a slot start would be, padded to
// whole cells: the sender's data before post() encodes it, the receiver's
// after it decodes a message.
class Staging {
 public:
  static Result<Staging> allocate(size_t slotBytes) {
    constexpr size_t kAlign = 64;
    size_t bytes = (payloadCells(slotBytes) * kCellData + kAlign - 1) / kAlign * kAlign;
    void* p = std::aligned_alloc(kAlign, bytes);
    if (p == nullptr) {
      return systemError("cannot allocate a " + std::to_string(bytes) +
                         "-byte staging buffer for an LL FIFO");
    }
    return Staging(static_cast<unsigned char*>(p));
  }
  unsigned char* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  explicit Staging(unsigned char* data) : data_(data) {}
  std::unique_ptr<unsigned char, Free> data_;
};

// What both ends keep of a mapped FIFO: the segment, its header, its
// slots, the header's fixed facts copied out (they never change once the
// receiver has published the magic), and this end's staging buffer.
struct Mapping {
  Mapping(ShmSegment mapped, Staging buffer)
      : segment(std::move(mapped)),
        header(static_cast<Header*>(segment.data())),
        slots(static_cast<char*>(segment.data()) + kPage),
        slotBytes(header->slotBytes),
        stride(header->stride),
        flags(header->flagBits),
        staging(std::move(buffer)) {}

  ShmSegment segment;
  Header* header;
  void* slots;
  size_t slotBytes;
  size_t stride;
  FlagSpace flags;
  Staging staging;
};

class LlRecvEnd final : public RecvEnd {
 public:
  LlRecvEnd(ShmSegment segment, Staging staging)
      : m_(std::move(segment), std::move(staging)),
        head_(m_.header->head.load(std::memory_order_relaxed)) {}

  size_t slotBytes() const override { return m_.slotBytes; }

  Result<const void*> waitSlot(const WaitContext& ctx, size_t* bytes) override {
    if (!poll()) BRAID_TRY(waitForMessage(ctx));
    *bytes = bytes_;
    return static_cast<const void*>(m_.staging.data());
  }

  const void* trySlot(size_t* bytes) override {
    if (!poll()) return nullptr;
    *bytes = bytes_;
    return m_.staging.data();
  }

  void release() override {
    assert(complete_ && "release() without a message from waitSlot()");
    complete_ = false;
    nextCell_ = 0;
    ++head_;
    // Release: our reads of the slot are done before the sender may reuse it.
    // seq_cst: the load of sendWaiting below must not move ahead of it.
    m_.header->head.store(head_, std::memory_order_seq_cst);
    futex::wakeIfWaiting(m_.header->head, m_.header->sendWaiting);
  }

 private:
  // Decodes what has arrived of message head_ into the staging buffer,
  // resuming where the last call stopped; true once all of it is there.
  bool poll() {
    if (complete_) return true;
    const Cell* cells = slotCells(m_.slots, m_.stride, head_);
    const uint32_t flag = m_.flags.flag(head_);
    size_t next = nextCell_;
    if (next == 0) {
      uint64_t sizeCell = cells[0].load(std::memory_order_relaxed);
      if (flagOf(sizeCell) != flag) return false;
      // A sane sender never posts more than a slot; clamping keeps a corrupt
      // count from writing past the staging buffer.
      bytes_ = std::min<size_t>(dataOf(sizeCell), m_.slotBytes);
      endCell_ = 1 + payloadCells(bytes_);
      next = 1;
    }
    unsigned char* out = m_.staging.data();
    for (; next < endCell_; ++next) {
      uint64_t c = cells[next].load(std::memory_order_relaxed);
      if (flagOf(c) != flag) break;
      uint32_t data = dataOf(c);
      memcpy(out + (next - 1) * kCellData, &data, kCellData);
    }
    nextCell_ = next;
    complete_ = next == endCell_;
    return complete_;
  }

  // futex::waitUntil's policy (spin, yield, then sleep in slices) around
  // poll(), which watches the slot's cells rather than one counter word.
  Status waitForMessage(const WaitContext& ctx) {
    const auto start = std::chrono::steady_clock::now();
    constexpr int kPollsPerClockRead = 64;
    const auto spinUntil = start + std::chrono::nanoseconds(ctx.spinNs);
    while (ctx.spinNs > 0) {
      for (int i = 0; i < kPollsPerClockRead; ++i) {
        futex::cpuRelax();
        if (poll()) return Status();
      }
      if (std::chrono::steady_clock::now() >= spinUntil) break;
    }
    for (int i = 0; i < futex::kYields; ++i) {
      sched_yield();
      if (poll()) return Status();
    }
    for (;;) {
      if (ctx.abort != nullptr && ctx.abort->load(std::memory_order_relaxed)) {
        return futex::abortedError(ctx.peer);
      }
      if (ctx.deadline.expired()) {
        if (poll()) return Status();
        auto elapsed = std::chrono::steady_clock::now() - start;
        return futex::timedOutError(
            std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), ctx.peer);
      }
      int64_t sliceMs = std::max<int64_t>(ctx.deadline.remainingMs(futex::kSliceMs), 1);
      if (sleepOnce(sliceMs)) return Status();
    }
  }

  // One sleep of at most sliceMs unless the message is complete. Against a
  // lost wakeup, each side stores its part, then a seq_cst fence, then loads
  // the other's (post() is the sender's half): either our poll sees every
  // cell of the post, or the sender sees recvWaiting and bumps the doorbell,
  // which the kernel compares with `seen` before we sleep. The doorbell is
  // bumped with release and read with acquire, so a `seen` that already
  // includes the bump also shows the cells to poll().
  bool sleepOnce(int64_t sliceMs) {
    m_.header->recvWaiting.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    uint32_t seen = m_.header->doorbell.load(std::memory_order_acquire);
    if (!poll()) futex::wait(&m_.header->doorbell, seen, sliceMs * 1000 * 1000);
    m_.header->recvWaiting.store(0, std::memory_order_relaxed);
    return poll();
  }

  Mapping m_;
  uint32_t head_;          // our counter; m_.header->head is its published copy
  size_t nextCell_ = 0;    // the first cell of message head_ not decoded yet
  size_t endCell_ = 0;     // one past its last cell, once cell 0 has arrived
  size_t bytes_ = 0;       // its byte count, likewise
  bool complete_ = false;  // all of it is in the staging buffer
};

class LlSendEnd final : public SendEnd {
 public:
  LlSendEnd(ShmSegment segment, Staging staging)
      : m_(std::move(segment), std::move(staging)),
        // Nothing is in flight when the sender opens: the next message is
        // the one the receiver expects.
        tail_(m_.header->head.load(std::memory_order_acquire)),
        seenHead_(tail_) {}

  size_t slotBytes() const override { return m_.slotBytes; }

  Result<void*> waitSlot(const WaitContext& ctx) override {
    if (full()) {
      BRAID_TRY(
          futex::waitUntil(m_.header->head, m_.header->sendWaiting, ctx, [this](uint32_t head) {
            seenHead_ = head;
            return !full();
          }));
    }
    return static_cast<void*>(m_.staging.data());
  }

  void* trySlot() override {
    if (full()) {
      seenHead_ = m_.header->head.load(std::memory_order_acquire);
      if (full()) return nullptr;
    }
    return m_.staging.data();
  }

  void post(size_t bytes) override {
    assert(bytes <= m_.slotBytes && "post() of more bytes than a slot holds");
    assert(!full() && "post() without waitSlot()");
    Cell* cells = slotCells(m_.slots, m_.stride, tail_);
    const uint32_t flag = m_.flags.flag(tail_);
    const size_t used = payloadCells(bytes);
    const size_t written = m_.flags.rewritesWholeSlot(tail_) ? payloadCells(m_.slotBytes) : used;
    const unsigned char* in = m_.staging.data();
    // Relaxed stores: each cell proves itself by its flag, so their order
    // does not matter for correctness.
    for (size_t i = 0; i < used; ++i) {
      uint32_t data;
      memcpy(&data, in + i * kCellData, kCellData);
      cells[1 + i].store(makeCell(flag, data), std::memory_order_relaxed);
    }
    for (size_t i = used; i < written; ++i) {
      cells[1 + i].store(makeCell(flag, 0), std::memory_order_relaxed);
    }
    // The count last: a receiver polling cell 0 then usually finds the payload
    // complete (on x86, stores become visible in program order) instead of
    // pulling cache lines the sender is still writing.
    cells[0].store(makeCell(flag, static_cast<uint32_t>(bytes)), std::memory_order_relaxed);
    ++tail_;
    // The sender's half of sleepOnce()'s protocol.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (m_.header->recvWaiting.load(std::memory_order_relaxed) != 0) {
      m_.header->doorbell.fetch_add(1, std::memory_order_release);
      futex::wake(&m_.header->doorbell);
    }
  }

 private:
  bool full() const { return tail_ - seenHead_ >= static_cast<uint32_t>(kFifoSlots); }

  Mapping m_;
  uint32_t tail_;      // the sequence number of the next message
  uint32_t seenHead_;  // the receiver's head as last read
};

Status checkSlotBytes(const std::string& name, size_t slotBytes) {
  // The byte count travels in the 32-bit data half of cell 0.
  if (slotBytes == 0 || slotBytes > UINT32_MAX) {
    return invalidArgument("shm LL FIFO " + name + ": slot size " + std::to_string(slotBytes) +
                           " is not in 1..4294967295");
  }
  return Status();
}

// Says what is wrong with an opened segment, or nothing when it matches.
Status checkHeader(const std::string& name, const ShmSegment& segment, size_t slotBytes) {
  if (segment.size() < kPage) {
    return invalidUsage("shm segment " + name + " (" + std::to_string(segment.size()) +
                        " bytes) is too small to be a braid LL FIFO");
  }
  const auto* header = static_cast<const Header*>(segment.data());
  uint64_t magic = header->magic.load(std::memory_order_acquire);
  if (magic == kSimpleMagic) {
    return invalidUsage("shm segment " + name +
                        " is a Simple-protocol FIFO, not an LL one (ranks run with different "
                        "BRAID_PROTO?)");
  }
  if (magic != kMagic) {
    return invalidUsage("shm segment " + name +
                        " is not a braid LL FIFO, or its creator has not finished setting it up");
  }
  if (header->version != kVersion) {
    return invalidUsage("shm LL FIFO " + name + " has layout version " +
                        std::to_string(header->version) + ", this build uses " +
                        std::to_string(kVersion) + " (ranks run different braid builds?)");
  }
  if (header->slotCount != static_cast<uint32_t>(kFifoSlots) || header->slotBytes != slotBytes) {
    return invalidUsage("shm LL FIFO " + name + " has " + std::to_string(header->slotCount) +
                        " slots of " + std::to_string(header->slotBytes) + " bytes, expected " +
                        std::to_string(kFifoSlots) + " of " + std::to_string(slotBytes) +
                        " (ranks configured with different buffer sizes?)");
  }
  if (header->flagBits < kMinFlagBits || header->flagBits > kMaxFlagBits) {
    return invalidUsage("shm LL FIFO " + name + " has " + std::to_string(header->flagBits) +
                        "-bit flags, expected " + std::to_string(kMinFlagBits) + " to " +
                        std::to_string(kMaxFlagBits));
  }
  if (header->stride != strideFor(slotBytes) || segment.size() < segmentBytes(slotBytes)) {
    return invalidUsage("shm LL FIFO " + name + " is " + std::to_string(segment.size()) +
                        " bytes, expected " + std::to_string(segmentBytes(slotBytes)));
  }
  return Status();
}

Result<std::unique_ptr<SendEnd>> makeSendEnd(ShmSegment segment, size_t slotBytes) {
  BRAID_ASSIGN_OR_RETURN(Staging staging, Staging::allocate(slotBytes));
  return std::unique_ptr<SendEnd>(
      std::make_unique<LlSendEnd>(std::move(segment), std::move(staging)));
}

Result<std::unique_ptr<RecvEnd>> createRecvEnd(const std::string& name, size_t slotBytes,
                                               const LlFifoOptions& options) {
  BRAID_TRY(checkSlotBytes(name, slotBytes));
  if (options.flagBits < kMinFlagBits || options.flagBits > kMaxFlagBits) {
    return invalidArgument("shm LL FIFO " + name + ": " + std::to_string(options.flagBits) +
                           "-bit flags, expected " + std::to_string(kMinFlagBits) + " to " +
                           std::to_string(kMaxFlagBits));
  }
  BRAID_ASSIGN_OR_RETURN(Staging staging, Staging::allocate(slotBytes));
  BRAID_ASSIGN_OR_RETURN(ShmSegment segment, ShmSegment::create(name, segmentBytes(slotBytes)));
  // The memory is fresh and zeroed; constructing the header and the cells
  // there makes their atomics objects the C++ way before anyone can see them.
  auto* header = new (segment.data()) Header();
  header->version = kVersion;
  header->slotCount = kFifoSlots;
  header->slotBytes = slotBytes;
  header->stride = strideFor(slotBytes);
  header->flagBits = static_cast<uint32_t>(options.flagBits);
  header->head.store(options.firstSequence, std::memory_order_relaxed);
  kernels::engine::fillAsPreviousRound(static_cast<char*>(segment.data()) + kPage, slotBytes,
                                       strideFor(slotBytes), FlagSpace(header->flagBits),
                                       options.firstSequence);
  header->magic.store(kMagic, std::memory_order_release);
  return std::unique_ptr<RecvEnd>(
      std::make_unique<LlRecvEnd>(std::move(segment), std::move(staging)));
}

Result<std::unique_ptr<SendEnd>> openSendEnd(const std::string& name, size_t slotBytes) {
  BRAID_TRY(checkSlotBytes(name, slotBytes));
  BRAID_ASSIGN_OR_RETURN(ShmSegment segment, ShmSegment::open(name));
  BRAID_TRY(checkHeader(name, segment, slotBytes));
  return makeSendEnd(std::move(segment), slotBytes);
}

Result<std::unique_ptr<SendEnd>> tryOpenSendEnd(const std::string& name, size_t slotBytes) {
  BRAID_TRY(checkSlotBytes(name, slotBytes));
  BRAID_ASSIGN_OR_RETURN(std::optional<ShmSegment> segment, ShmSegment::openIfReady(name));
  if (!segment) return std::unique_ptr<SendEnd>();
  // The receiver publishes the magic last: while it is zero the segment is
  // not ready. Any other value is a verdict checkHeader explains.
  if (segment->size() < kPage ||
      static_cast<const Header*>(segment->data())->magic.load(std::memory_order_acquire) == 0) {
    return std::unique_ptr<SendEnd>();
  }
  BRAID_TRY(checkHeader(name, *segment, slotBytes));
  return makeSendEnd(std::move(*segment), slotBytes);
}

}  // namespace
}  // namespace ll

Result<std::unique_ptr<RecvEnd>> createLlRecvEnd(const std::string& name, size_t slotBytes,
                                                 const LlFifoOptions& options) {
  return ll::createRecvEnd(name, slotBytes, options);
}

Result<std::unique_ptr<SendEnd>> openLlSendEnd(const std::string& name, size_t slotBytes) {
  return ll::openSendEnd(name, slotBytes);
}

Result<std::unique_ptr<SendEnd>> tryOpenLlSendEnd(const std::string& name, size_t slotBytes) {
  return ll::tryOpenSendEnd(name, slotBytes);
}

}  // namespace braid::transport::shm
