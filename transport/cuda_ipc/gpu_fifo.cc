// GPU FIFOs and their rendezvous records (gpu_fifo.h).
//
// FIFO memory (offsets from its start):
//
//   0      FifoCounters (kernels/engine/fifo.h), zeroed
//   4096   slot 0 | slot 1 | ... | slot 7     each `stride` bytes: Simple,
//                                             the payload rounded up to a
//                                             page; LL, its cells rounded
//                                             up to 128 bytes
//
// Record (a one-page shm segment named like the shm FIFOs):
//
//   magic, version, protocol, slot size and stride, LL flag bits, and the
//   region's own record (gpu_region.h: placement, the receiver's pid and
//   device, the FIFO's size and address in its process, its CUDA IPC
//   handle); the receiver writes `magic` last.
#include "transport/cuda_ipc/gpu_fifo.h"

#include <atomic>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/engine/ll.h"
#include "transport/shm/shm_segment.h"

namespace braid::transport::cuda_ipc {
namespace {

namespace engine = kernels::engine;
using shm::ShmSegment;

constexpr uint64_t kRecordMagic = 0x3150494449415242ull;  // "BRAIDIP1"
constexpr uint32_t kRecordVersion = 4;
constexpr size_t kPage = 4096;

struct Record {
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t protocol;  ///< engine::FifoProtocol
  uint64_t slotBytes;
  uint64_t stride;
  uint32_t flagBits;  ///< LL: flags modulo 2^flagBits
  uint32_t split;     ///< 1: counters in `region`, slots in `slotsRegion` (createSplit)
  RegionRecord region;
  RegionRecord slotsRegion;  ///< split: where the slots lie, from `slotsOffset` on
  uint64_t slotsOffset;
};
static_assert(sizeof(Record) <= kPage, "a record fits its page");

bool isLl(engine::FifoProtocol protocol) { return protocol == engine::FifoProtocol::kLl; }

size_t strideFor(size_t slotBytes, engine::FifoProtocol protocol) {
  if (isLl(protocol)) return engine::llStrideFor(slotBytes);
  return (slotBytes + kPage - 1) / kPage * kPage;
}
size_t fifoBytes(size_t slotBytes, engine::FifoProtocol protocol) {
  return kPage + engine::kFifoSlots * strideFor(slotBytes, protocol);
}

GpuEnd endAt(void* memory, size_t slotBytes, engine::FifoCursor* cursor, const FifoFormat& format) {
  GpuEnd e;
  e.fifo.counters = static_cast<engine::FifoCounters*>(memory);
  e.fifo.slots = static_cast<char*>(memory) + kPage;
  e.fifo.stride = strideFor(slotBytes, format.protocol);
  e.fifo.slotBytes = static_cast<uint32_t>(slotBytes);
  e.cursor = cursor;
  e.flagBits = isLl(format.protocol) ? format.llFlagBits : 0;
  return e;
}

Status checkFormat(const std::string& name, size_t slotBytes, const FifoFormat& format) {
  if (slotBytes == 0 || slotBytes >= engine::kLastSlice) {
    return invalidArgument("GPU FIFO " + name + ": slot size " + std::to_string(slotBytes) +
                           " is not in 1..2147483647");
  }
  // Flags must tell a slot's last kFifoSlots messages apart (ll.h).
  if (isLl(format.protocol) && (format.llFlagBits < 4 || format.llFlagBits > 32)) {
    return invalidArgument("GPU FIFO " + name + ": LL flag bits " +
                           std::to_string(format.llFlagBits) + " are not in 4..32");
  }
  return Status::success();
}

// The FIFO's first contents: zero counters, and for LL every cell as the
// round before message 0 would have left it (engine::fillAsPreviousRound).
std::vector<unsigned char> firstImage(size_t slotBytes, const FifoFormat& format) {
  std::vector<unsigned char> image(fifoBytes(slotBytes, format.protocol), 0);
  if (isLl(format.protocol)) {
    engine::fillAsPreviousRound(image.data() + kPage, slotBytes,
                                strideFor(slotBytes, format.protocol),
                                engine::FlagSpace(format.llFlagBits), 0);
  }
  return image;
}

class RecvEndImpl final : public GpuRecvEnd {
 public:
  RecvEndImpl(std::unique_ptr<OwnedRegion> region, ShmSegment record, GpuEnd end)
      : region_(std::move(region)), record_(std::move(record)), end_(end) {}

  GpuEnd end() const override { return end_; }
  FifoPlacement placement() const override { return region_->placement(); }

 private:
  std::unique_ptr<OwnedRegion> region_;
  ShmSegment record_;
  GpuEnd end_;
};

class SendEndImpl final : public GpuSendEnd {
 public:
  SendEndImpl(std::unique_ptr<MappedRegion> region, GpuEnd end,
              std::unique_ptr<MappedRegion> slots = nullptr)
      : region_(std::move(region)), slots_(std::move(slots)), end_(end) {}

  GpuEnd end() const override { return end_; }
  FifoPlacement placement() const override { return (slots_ ? slots_ : region_)->placement(); }

 private:
  std::unique_ptr<MappedRegion> region_;
  std::unique_ptr<MappedRegion> slots_;  ///< a split FIFO's slots (createSplit)
  GpuEnd end_;
};

class SplitRecvEnd final : public GpuRecvEnd {
 public:
  SplitRecvEnd(std::unique_ptr<OwnedRegion> counters, std::unique_ptr<OwnedRegion> slots,
               ShmSegment record, GpuEnd end)
      : counters_(std::move(counters)),
        slots_(std::move(slots)),
        record_(std::move(record)),
        end_(end) {}

  GpuEnd end() const override { return end_; }
  FifoPlacement placement() const override { return FifoPlacement::kDeviceMemory; }

 private:
  std::unique_ptr<OwnedRegion> counters_;
  std::unique_ptr<OwnedRegion> slots_;
  ShmSegment record_;
  GpuEnd end_;
};

constexpr size_t roundToPage(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

std::string pinnedSegmentName(const std::string& recordName) { return recordName + "-fifo"; }

void unlinkFifoNames(const std::string& recordName, FifoPlacement placement) {
  (void)ShmSegment::unlink(recordName);
  if (placement == FifoPlacement::kPinnedHost)
    (void)ShmSegment::unlink(pinnedSegmentName(recordName));
}

Result<std::unique_ptr<GpuRecvEnd>> GpuRecvEnd::create(gpu::Runtime& runtime,
                                                       const std::string& name, size_t slotBytes,
                                                       FifoPlacement placement,
                                                       engine::FifoCursor* cursor,
                                                       gpu::Stream stream, FifoFormat format) {
  BRAID_TRY(checkFormat(name, slotBytes, format));
  Result<std::unique_ptr<OwnedRegion>> made = OwnedRegion::create(
      runtime, placement, pinnedSegmentName(name), firstImage(slotBytes, format), stream);
  if (!made.ok()) return made.status().withContext("GPU FIFO " + name);
  std::unique_ptr<OwnedRegion> region = std::move(made).value();
  BRAID_ASSIGN_OR_RETURN(ShmSegment record, ShmSegment::create(name, kPage));
  auto* r = new (record.data()) Record();
  r->version = kRecordVersion;
  r->slotBytes = slotBytes;
  r->stride = strideFor(slotBytes, format.protocol);
  r->protocol = static_cast<uint32_t>(format.protocol);
  r->flagBits = format.llFlagBits;
  r->region = region->record();
  r->magic.store(kRecordMagic, std::memory_order_release);
  const GpuEnd end = endAt(region->data(), slotBytes, cursor, format);
  return std::unique_ptr<GpuRecvEnd>(
      std::make_unique<RecvEndImpl>(std::move(region), std::move(record), end));
}

Result<std::unique_ptr<GpuRecvEnd>> GpuRecvEnd::createSplit(gpu::Runtime& runtime,
                                                            const std::string& name,
                                                            size_t slotBytes, gpu::Stream stream,
                                                            size_t* slotsBytes) {
  BRAID_TRY(checkFormat(name, slotBytes, {}));
  Result<std::unique_ptr<OwnedRegion>> counters =
      OwnedRegion::create(runtime, FifoPlacement::kPinnedHost, pinnedSegmentName(name),
                          std::vector<unsigned char>(kPage, 0), stream);
  if (!counters.ok()) return counters.status().withContext("GPU FIFO " + name + "'s counters");
  const size_t stride = strideFor(slotBytes, engine::FifoProtocol::kSimple);
  *slotsBytes = engine::kFifoSlots * stride;
  // A page more than the slots: the allocation promises less than a page's alignment.
  Result<std::unique_ptr<OwnedRegion>> slots =
      OwnedRegion::create(runtime, FifoPlacement::kDeviceMemory, "",
                          std::vector<unsigned char>(*slotsBytes + kPage, 0), stream);
  if (!slots.ok()) return slots.status().withContext("GPU FIFO " + name + "'s slots");
  const uintptr_t start = reinterpret_cast<uintptr_t>(slots.value()->data());
  const uint64_t offset = roundToPage(start) - start;
  BRAID_ASSIGN_OR_RETURN(ShmSegment record, ShmSegment::create(name, kPage));
  auto* r = new (record.data()) Record();
  r->version = kRecordVersion;
  r->slotBytes = slotBytes;
  r->stride = stride;
  r->protocol = static_cast<uint32_t>(engine::FifoProtocol::kSimple);
  r->split = 1;
  r->region = counters.value()->record();
  r->slotsRegion = slots.value()->record();
  r->slotsOffset = offset;
  r->magic.store(kRecordMagic, std::memory_order_release);
  GpuEnd end = endAt(counters.value()->data(), slotBytes, nullptr, {});
  end.fifo.slots = static_cast<char*>(slots.value()->data()) + offset;
  return std::unique_ptr<GpuRecvEnd>(std::make_unique<SplitRecvEnd>(
      std::move(counters).value(), std::move(slots).value(), std::move(record), end));
}

Result<std::unique_ptr<GpuSendEnd>> GpuSendEnd::tryOpen(gpu::Runtime& runtime,
                                                        const std::string& name, size_t slotBytes,
                                                        engine::FifoCursor* cursor,
                                                        engine::FifoProtocol protocol) {
  BRAID_TRY(checkFormat(name, slotBytes, FifoFormat{protocol, 32}));
  BRAID_ASSIGN_OR_RETURN(std::optional<ShmSegment> segment, ShmSegment::openIfReady(name));
  if (!segment || segment->size() < sizeof(Record)) return std::unique_ptr<GpuSendEnd>();
  const auto* r = static_cast<const Record*>(segment->data());
  const uint64_t magic = r->magic.load(std::memory_order_acquire);
  if (magic == 0) return std::unique_ptr<GpuSendEnd>();  // not published yet
  if (magic != kRecordMagic || r->version != kRecordVersion) {
    return invalidUsage("shm segment " + name +
                        " is not a braid GPU FIFO record of this version (ranks run different "
                        "braid builds?)");
  }
  if (r->slotBytes != slotBytes) {
    return invalidUsage("GPU FIFO " + name + " has slots of " + std::to_string(r->slotBytes) +
                        " bytes, expected " + std::to_string(slotBytes) +
                        " (ranks configured with different buffer sizes?)");
  }
  if (r->protocol != static_cast<uint32_t>(protocol)) {
    return invalidUsage("GPU FIFO " + name + " was made for another protocol than " +
                        (isLl(protocol) ? "LL" : "Simple"));
  }
  const FifoFormat format{protocol, r->flagBits};
  Result<std::unique_ptr<MappedRegion>> mapped =
      MappedRegion::open(runtime, r->region, pinnedSegmentName(name));
  if (!mapped.ok()) return mapped.status().withContext("GPU FIFO " + name);
  std::unique_ptr<MappedRegion> region = std::move(mapped).value();
  std::unique_ptr<MappedRegion> slots;
  if (r->split != 0) {
    Result<std::unique_ptr<MappedRegion>> mappedSlots =
        MappedRegion::open(runtime, r->slotsRegion, "");
    if (!mappedSlots.ok()) return mappedSlots.status().withContext("GPU FIFO " + name + "'s slots");
    slots = std::move(mappedSlots).value();
  }
  // Both ends hold what they need: the names can go.
  unlinkFifoNames(name, region->placement());
  GpuEnd end = endAt(region->data(), slotBytes, cursor, format);
  if (slots) end.fifo.slots = static_cast<char*>(slots->data()) + r->slotsOffset;
  return std::unique_ptr<GpuSendEnd>(
      std::make_unique<SendEndImpl>(std::move(region), end, std::move(slots)));
}

}  // namespace braid::transport::cuda_ipc
