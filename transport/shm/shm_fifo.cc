// The shm FIFO: a header page of counters, then kFifoSlots data slots.
//
// Segment layout (offsets from the start of the mapping):
//
//   0      FifoHeader                                 one page
//            identity  magic, version, slot count, slot size, stride
//            counters  the engine's FifoCounters (kernels/engine/fifo.h):
//                      tail + byte counts, head, recvWaiting, sendWaiting,
//                      each group on its own 128-byte line
//   4096   slot 0 | slot 1 | ... | slot 7            each `stride` bytes,
//                                                    slotBytes rounded up to a page
//
// The protocol is the engine's, the one the GPU FIFOs run (fifo.h): the
// same counters, cursors, acquire loads and publishing stores. What the CPU
// adds is sleep: a waiter that has spun long enough announces itself in
// recvWaiting / sendWaiting and sleeps on the counter's futex, and the other
// side wakes it after publishing (base/futex.h).
#include "transport/shm/shm_fifo.h"

#include <unistd.h>

#include <cassert>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>

#include "base/futex.h"
#include "kernels/engine/fifo.h"
#include "transport/shm/shm_magic.h"
#include "transport/shm/shm_segment.h"

namespace braid::transport::shm {
namespace {

namespace engine = kernels::engine;

constexpr uint64_t kMagic = kSimpleFifoMagic;
// 2: the counters became the engine's FifoCounters.
constexpr uint32_t kVersion = 2;
constexpr size_t kPage = 4096;

struct FifoHeader {
  // Identity: written by the receiver, which publishes `magic` last.
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t slotCount;
  uint64_t slotBytes;
  uint64_t stride;
  engine::FifoCounters counters;
};
static_assert(sizeof(FifoHeader) <= kPage, "the FIFO header must fit its page");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "magic is read across processes");

size_t strideFor(size_t slotBytes) { return (slotBytes + kPage - 1) / kPage * kPage; }
size_t segmentBytes(size_t slotBytes) { return kPage + kFifoSlots * strideFor(slotBytes); }

Status checkSlotBytes(const std::string& name, size_t slotBytes) {
  // Byte counts travel as 31-bit words (the top bit marks a message's last slice).
  if (slotBytes == 0 || slotBytes >= engine::kLastSlice) {
    return invalidArgument("shm FIFO " + name + ": slot size " + std::to_string(slotBytes) +
                           " is not in 1..2147483647");
  }
  return Status();
}

engine::FifoRef fifoRef(void* mapping) {
  auto* header = static_cast<FifoHeader*>(mapping);
  engine::FifoRef f;
  f.counters = &header->counters;
  f.slots = static_cast<char*>(mapping) + kPage;
  f.stride = header->stride;
  f.slotBytes = static_cast<uint32_t>(header->slotBytes);
  return f;
}

class ShmRecvEnd final : public RecvEnd {
 public:
  explicit ShmRecvEnd(ShmSegment segment)
      : segment_(std::move(segment)),
        fifo_(fifoRef(segment_.data())),
        cursor_(engine::receiverCursor(fifo_.counters)) {}

  size_t slotBytes() const override { return fifo_.slotBytes; }
  const engine::FifoRef& ref() const { return fifo_; }

  Result<const void*> waitSlot(const WaitContext& ctx, size_t* bytes) override {
    if (!engine::recvData(fifo_, cursor_)) {
      engine::FifoCounters& c = *fifo_.counters;
      Status status = futex::waitUntil(&c.tail, &c.recvWaiting, ctx, [this](uint32_t tail) {
        cursor_.seen = tail;
        return tail != cursor_.mine;
      });
      if (!status.ok()) return status;
    }
    *bytes = engine::postedWord(fifo_, cursor_) & ~engine::kLastSlice;
    return static_cast<const void*>(engine::slotAt(fifo_, cursor_.mine));
  }

  const void* trySlot(size_t* bytes) override {
    if (!engine::recvData(fifo_, cursor_)) return nullptr;
    *bytes = engine::postedWord(fifo_, cursor_) & ~engine::kLastSlice;
    return engine::slotAt(fifo_, cursor_.mine);
  }

  void release() override {
    assert(cursor_.mine != cursor_.seen && "release() without a slot from waitSlot()");
    // Our reads of the slot are done before the sender may reuse it; the
    // publish is sequentially consistent, so the load of sendWaiting below
    // cannot move ahead of it.
    engine::releaseSlot(fifo_, cursor_);
    futex::wakeIfWaiting(&fifo_.counters->head, &fifo_.counters->sendWaiting);
  }

 private:
  ShmSegment segment_;
  engine::FifoRef fifo_;
  engine::FifoCursor cursor_;  // our head, and the sender's tail as last read
};

class ShmSendEnd final : public SendEnd {
 public:
  explicit ShmSendEnd(ShmSegment segment)
      : segment_(std::move(segment)),
        fifo_(fifoRef(segment_.data())),
        cursor_(engine::senderCursor(fifo_.counters)) {}

  size_t slotBytes() const override { return fifo_.slotBytes; }

  Result<void*> waitSlot(const WaitContext& ctx) override {
    if (!engine::sendRoom(fifo_, cursor_)) {
      engine::FifoCounters& c = *fifo_.counters;
      Status status = futex::waitUntil(&c.head, &c.sendWaiting, ctx, [this](uint32_t head) {
        cursor_.seen = head;
        return !engine::fifoFull(cursor_);
      });
      if (!status.ok()) return status;
    }
    return static_cast<void*>(engine::slotAt(fifo_, cursor_.mine));
  }

  void* trySlot() override {
    if (!engine::sendRoom(fifo_, cursor_)) return nullptr;
    return engine::slotAt(fifo_, cursor_.mine);
  }

  void post(size_t bytes) override {
    assert(bytes <= fifo_.slotBytes && "post() of more bytes than a slot holds");
    assert(!engine::fifoFull(cursor_) && "post() without waitSlot()");
    // The publish is sequentially consistent, so the load of recvWaiting
    // below cannot move ahead of it; see base/futex.h.
    engine::postSlot(fifo_, cursor_, static_cast<uint32_t>(bytes));
    futex::wakeIfWaiting(&fifo_.counters->tail, &fifo_.counters->recvWaiting);
  }

 private:
  ShmSegment segment_;
  engine::FifoRef fifo_;
  engine::FifoCursor cursor_;  // our tail, and the receiver's head as last read
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

// The receiving end of a FIFO in fresh, zeroed memory: constructing the header there makes its
// atomics objects the C++ way before anyone else can see them.
std::unique_ptr<RecvEnd> recvEndIn(ShmSegment segment, size_t slotBytes) {
  auto* header = new (segment.data()) FifoHeader();
  header->version = kVersion;
  header->slotCount = kFifoSlots;
  header->slotBytes = slotBytes;
  header->stride = strideFor(slotBytes);
  header->magic.store(kMagic, std::memory_order_release);
  return std::make_unique<ShmRecvEnd>(std::move(segment));
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
  return recvEndIn(std::move(segment), slotBytes);
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

Result<PrivateFifo> createPrivateFifo(size_t slotBytes) {
  const std::string what = "(private)";
  BRAID_TRY(checkSlotBytes(what, slotBytes));
  // Both ends are in this process: memory without a name, mapped once for each.
  BRAID_ASSIGN_OR_RETURN(auto mappings, ShmSegment::createUnnamedPair(segmentBytes(slotBytes)));
  PrivateFifo fifo;
  fifo.recv = recvEndIn(std::move(mappings.first), slotBytes);
  BRAID_TRY(checkHeader(what, mappings.second, slotBytes));
  fifo.send = std::make_unique<ShmSendEnd>(std::move(mappings.second));
  fifo.ref = static_cast<const ShmRecvEnd&>(*fifo.recv).ref();
  return fifo;
}

}  // namespace braid::transport::shm
