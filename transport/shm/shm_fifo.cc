// The shm FIFO: a header page of counters, then kFifoSlots data slots.
//
// Segment layout (offsets from the start of the mapping):
//
//   0      FifoHeader                                 one page
//            identity  magic, version, slot count, slot size, stride
//            tail      sender's counter + the byte count of every slot
//            head      receiver's counter
//            recvWaiting / sendWaiting   "I may be asleep" words
//   4096   slot 0 | slot 1 | ... | slot 7            each `stride` bytes,
//                                                    slotBytes rounded up to a page
//
// `tail` counts posted slots and `head` released ones; both only grow and
// wrap at 2^32, so the fill level is the unsigned difference tail - head
// (0..kFifoSlots) and slot i lives at index i % kFifoSlots. Each counter is
// written by one side only and sits on its own cache line (128 bytes apart,
// so the adjacent-line prefetcher does not pair them), as do the two
// waiting words, which are written only when a side goes to sleep but read
// on every post and release.
//
// Each end keeps a private copy of its own counter and the last value it saw
// of the other's, so that with several slots in flight it touches the
// peer's cache line only when its copy says it must wait.
#include "transport/shm/shm_fifo.h"

#include <cassert>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <new>

#include "transport/shm/shm_magic.h"
#include "transport/shm/shm_segment.h"
#include "util/futex.h"

namespace braid::transport::shm {
namespace {

constexpr uint64_t kMagic = kSimpleFifoMagic;
constexpr uint32_t kVersion = 1;
constexpr size_t kLine = 128;
constexpr size_t kPage = 4096;

struct FifoHeader {
  // Identity: written by the receiver, which publishes `magic` last.
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t slotCount;
  uint64_t slotBytes;
  uint64_t stride;
  // Written by the sender on every post.
  alignas(kLine) std::atomic<uint32_t> tail;
  std::atomic<uint32_t> bytes[kFifoSlots];
  // Written by the receiver on every release.
  alignas(kLine) std::atomic<uint32_t> head;
  alignas(kLine) std::atomic<uint32_t> recvWaiting;
  alignas(kLine) std::atomic<uint32_t> sendWaiting;
};
static_assert(sizeof(FifoHeader) <= kPage, "the FIFO header must fit its page");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "magic is read across processes");

size_t strideFor(size_t slotBytes) { return (slotBytes + kPage - 1) / kPage * kPage; }
size_t segmentBytes(size_t slotBytes) { return kPage + kFifoSlots * strideFor(slotBytes); }

Status checkSlotBytes(const std::string& name, size_t slotBytes) {
  // Byte counts travel as 32-bit words next to tail.
  if (slotBytes == 0 || slotBytes > UINT32_MAX) {
    return invalidArgument("shm FIFO " + name + ": slot size " + std::to_string(slotBytes) +
                           " is not in 1..4294967295");
  }
  return Status();
}

class ShmRecvEnd final : public RecvEnd {
 public:
  explicit ShmRecvEnd(ShmSegment segment)
      : segment_(std::move(segment)),
        header_(static_cast<FifoHeader*>(segment_.data())),
        slots_(static_cast<const char*>(segment_.data()) + kPage),
        slotBytes_(header_->slotBytes),
        stride_(header_->stride),
        head_(header_->head.load(std::memory_order_relaxed)),
        seenTail_(head_) {}

  size_t slotBytes() const override { return slotBytes_; }

  Result<const void*> waitSlot(const WaitContext& ctx, size_t* bytes) override {
    if (seenTail_ == head_) {
      Status status =
          futex::waitUntil(header_->tail, header_->recvWaiting, ctx, [this](uint32_t tail) {
            seenTail_ = tail;
            return tail != head_;
          });
      if (!status.ok()) return status;
    }
    uint32_t slot = head_ % kFifoSlots;
    *bytes = header_->bytes[slot].load(std::memory_order_relaxed);
    return static_cast<const void*>(slots_ + slot * stride_);
  }

  const void* trySlot(size_t* bytes) override {
    if (seenTail_ == head_) {
      seenTail_ = header_->tail.load(std::memory_order_acquire);
      if (seenTail_ == head_) return nullptr;
    }
    uint32_t slot = head_ % kFifoSlots;
    *bytes = header_->bytes[slot].load(std::memory_order_relaxed);
    return slots_ + slot * stride_;
  }

  void release() override {
    assert(head_ != seenTail_ && "release() without a slot from waitSlot()");
    ++head_;
    // Release: our reads of the slot are done before the sender may reuse it.
    // seq_cst: the load of sendWaiting below must not move ahead of it.
    header_->head.store(head_, std::memory_order_seq_cst);
    futex::wakeIfWaiting(header_->head, header_->sendWaiting);
  }

 private:
  ShmSegment segment_;
  FifoHeader* header_;
  const char* slots_;
  size_t slotBytes_;
  size_t stride_;
  uint32_t head_;      // our counter; header_->head is its published copy
  uint32_t seenTail_;  // the sender's tail as last read
};

class ShmSendEnd final : public SendEnd {
 public:
  explicit ShmSendEnd(ShmSegment segment)
      : segment_(std::move(segment)),
        header_(static_cast<FifoHeader*>(segment_.data())),
        slots_(static_cast<char*>(segment_.data()) + kPage),
        slotBytes_(header_->slotBytes),
        stride_(header_->stride),
        tail_(header_->tail.load(std::memory_order_relaxed)),
        seenHead_(header_->head.load(std::memory_order_acquire)) {}

  size_t slotBytes() const override { return slotBytes_; }

  Result<void*> waitSlot(const WaitContext& ctx) override {
    if (tail_ - seenHead_ >= static_cast<uint32_t>(kFifoSlots)) {
      Status status =
          futex::waitUntil(header_->head, header_->sendWaiting, ctx, [this](uint32_t head) {
            seenHead_ = head;
            return tail_ - head < static_cast<uint32_t>(kFifoSlots);
          });
      if (!status.ok()) return status;
    }
    return static_cast<void*>(slots_ + (tail_ % kFifoSlots) * stride_);
  }

  void* trySlot() override {
    if (tail_ - seenHead_ >= static_cast<uint32_t>(kFifoSlots)) {
      seenHead_ = header_->head.load(std::memory_order_acquire);
      if (tail_ - seenHead_ >= static_cast<uint32_t>(kFifoSlots)) return nullptr;
    }
    return slots_ + (tail_ % kFifoSlots) * stride_;
  }

  void post(size_t bytes) override {
    assert(bytes <= slotBytes_ && "post() of more bytes than a slot holds");
    assert(tail_ - seenHead_ < static_cast<uint32_t>(kFifoSlots) && "post() without waitSlot()");
    header_->bytes[tail_ % kFifoSlots].store(static_cast<uint32_t>(bytes),
                                             std::memory_order_relaxed);
    ++tail_;
    // seq_cst (not just release) so that the load of recvWaiting below
    // cannot move ahead of it; see util/futex.h.
    header_->tail.store(tail_, std::memory_order_seq_cst);
    futex::wakeIfWaiting(header_->tail, header_->recvWaiting);
  }

 private:
  ShmSegment segment_;
  FifoHeader* header_;
  char* slots_;
  size_t slotBytes_;
  size_t stride_;
  uint32_t tail_;      // our counter; header_->tail is its published copy
  uint32_t seenHead_;  // the receiver's head as last read
};

// Says what is wrong with an opened segment, or nothing when it matches.
Status checkHeader(const std::string& name, const ShmSegment& segment, size_t slotBytes) {
  if (segment.size() < kPage) {
    return invalidUsage("shm segment " + name + " (" + std::to_string(segment.size()) +
                        " bytes) is too small to be a braid FIFO");
  }
  const auto* header = static_cast<const FifoHeader*>(segment.data());
  if (header->magic.load(std::memory_order_acquire) != kMagic) {
    return invalidUsage("shm segment " + name +
                        " is not a braid FIFO, or its creator has not finished setting it up");
  }
  if (header->version != kVersion) {
    return invalidUsage("shm FIFO " + name + " has layout version " +
                        std::to_string(header->version) + ", this build uses " +
                        std::to_string(kVersion) + " (ranks run different braid builds?)");
  }
  if (header->slotCount != static_cast<uint32_t>(kFifoSlots) || header->slotBytes != slotBytes) {
    return invalidUsage("shm FIFO " + name + " has " + std::to_string(header->slotCount) +
                        " slots of " + std::to_string(header->slotBytes) + " bytes, expected " +
                        std::to_string(kFifoSlots) + " of " + std::to_string(slotBytes) +
                        " (ranks configured with different buffer sizes?)");
  }
  if (header->stride != strideFor(slotBytes) || segment.size() < segmentBytes(slotBytes)) {
    return invalidUsage("shm FIFO " + name + " is " + std::to_string(segment.size()) +
                        " bytes, expected " + std::to_string(segmentBytes(slotBytes)));
  }
  return Status();
}

}  // namespace

std::string segmentName(uint64_t magic, int sender, int receiver, int channel) {
  // 6 + 16 + 3 * 12 characters at most, far below NAME_MAX.
  char name[64];
  snprintf(name, sizeof(name), "/braid-%016" PRIx64 "-%d-%d-%d", magic, sender, receiver, channel);
  return name;
}

Result<std::unique_ptr<RecvEnd>> createRecvEnd(const std::string& name, size_t slotBytes) {
  BRAID_TRY(checkSlotBytes(name, slotBytes));
  BRAID_ASSIGN_OR_RETURN(ShmSegment segment, ShmSegment::create(name, segmentBytes(slotBytes)));
  // The memory is fresh and zeroed; constructing the header there makes
  // its atomics objects the C++ way before anyone else can see them.
  auto* header = new (segment.data()) FifoHeader();
  header->version = kVersion;
  header->slotCount = kFifoSlots;
  header->slotBytes = slotBytes;
  header->stride = strideFor(slotBytes);
  header->magic.store(kMagic, std::memory_order_release);
  return std::unique_ptr<RecvEnd>(std::make_unique<ShmRecvEnd>(std::move(segment)));
}

Result<std::unique_ptr<SendEnd>> openSendEnd(const std::string& name, size_t slotBytes) {
  BRAID_TRY(checkSlotBytes(name, slotBytes));
  BRAID_ASSIGN_OR_RETURN(ShmSegment segment, ShmSegment::open(name));
  BRAID_TRY(checkHeader(name, segment, slotBytes));
  return std::unique_ptr<SendEnd>(std::make_unique<ShmSendEnd>(std::move(segment)));
}

Result<std::unique_ptr<SendEnd>> tryOpenSendEnd(const std::string& name, size_t slotBytes) {
  BRAID_TRY(checkSlotBytes(name, slotBytes));
  BRAID_ASSIGN_OR_RETURN(std::optional<ShmSegment> segment, ShmSegment::openIfReady(name));
  if (!segment) return std::unique_ptr<SendEnd>();
  // The receiver publishes the header's magic last: until then (0) it is not
  // ready; any other magic than ours is an error checkHeader names.
  if (segment->size() < kPage ||
      static_cast<const FifoHeader*>(segment->data())->magic.load(std::memory_order_acquire) == 0) {
    return std::unique_ptr<SendEnd>();
  }
  BRAID_TRY(checkHeader(name, *segment, slotBytes));
  return std::unique_ptr<SendEnd>(std::make_unique<ShmSendEnd>(std::move(*segment)));
}

Status unlinkSegment(const std::string& name) { return ShmSegment::unlink(name); }

}  // namespace braid::transport::shm
