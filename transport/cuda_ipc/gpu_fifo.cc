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
//   magic, version, placement, the receiver's pid and device, slot size and
//   stride, protocol and LL flag bits, the FIFO's size and address in the
//   receiver's process, and its CUDA IPC handle; the receiver writes
//   `magic` last.
#include "transport/cuda_ipc/gpu_fifo.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <vector>

#include "kernels/engine/ll.h"
#include "transport/shm/shm_segment.h"

namespace braid::transport::cuda_ipc {
namespace {

namespace engine = kernels::engine;
using shm::ShmSegment;

constexpr uint64_t kRecordMagic = 0x3150494449415242ull;  // "BRAIDIP1"
constexpr uint32_t kRecordVersion = 2;
constexpr size_t kPage = 4096;

struct Record {
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t placement;
  int32_t pid;
  int32_t device;
  uint64_t slotBytes;
  uint64_t stride;
  uint32_t protocol;  ///< engine::FifoProtocol
  uint32_t flagBits;  ///< LL: flags modulo 2^flagBits
  uint64_t bytes;
  uint64_t address;
  gpu::IpcHandle handle;
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
  RecvEndImpl(gpu::Runtime& runtime, FifoPlacement placement, void* memory,
              std::optional<ShmSegment> pinned, ShmSegment record, GpuEnd end)
      : runtime_(runtime),
        placement_(placement),
        memory_(memory),
        pinned_(std::move(pinned)),
        record_(std::move(record)),
        end_(end) {}

  ~RecvEndImpl() override {
    if (placement_ == FifoPlacement::kDeviceMemory) {
      (void)runtime_.deviceFree(memory_);
    } else {
      (void)runtime_.hostUnregister(memory_);
    }
  }

  GpuEnd end() const override { return end_; }
  FifoPlacement placement() const override { return placement_; }

 private:
  gpu::Runtime& runtime_;
  FifoPlacement placement_;
  void* memory_;
  std::optional<ShmSegment> pinned_;  ///< kPinnedHost: the FIFO itself
  ShmSegment record_;
  GpuEnd end_;
};

class SendEndImpl final : public GpuSendEnd {
 public:
  enum class Mapping { kSameProcess, kIpc, kPinned };
  SendEndImpl(gpu::Runtime& runtime, FifoPlacement placement, Mapping mapping, void* memory,
              std::optional<ShmSegment> pinned, GpuEnd end)
      : runtime_(runtime),
        placement_(placement),
        mapping_(mapping),
        memory_(memory),
        pinned_(std::move(pinned)),
        end_(end) {}

  ~SendEndImpl() override {
    if (mapping_ == Mapping::kIpc) (void)runtime_.ipcClose(memory_);
    if (mapping_ == Mapping::kPinned) (void)runtime_.hostUnregister(memory_);
  }

  GpuEnd end() const override { return end_; }
  FifoPlacement placement() const override { return placement_; }

 private:
  gpu::Runtime& runtime_;
  FifoPlacement placement_;
  Mapping mapping_;
  void* memory_;
  std::optional<ShmSegment> pinned_;
  GpuEnd end_;
};

}  // namespace

const char* placementName(FifoPlacement placement) {
  return placement == FifoPlacement::kDeviceMemory ? "device memory" : "pinned host memory";
}

std::string pinnedSegmentName(const std::string& recordName) { return recordName + "-fifo"; }

Result<std::unique_ptr<GpuRecvEnd>> GpuRecvEnd::create(gpu::Runtime& runtime,
                                                       const std::string& name, size_t slotBytes,
                                                       FifoPlacement placement,
                                                       engine::FifoCursor* cursor,
                                                       gpu::Stream stream, FifoFormat format) {
  BRAID_TRY(checkFormat(name, slotBytes, format));
  const std::vector<unsigned char> image = firstImage(slotBytes, format);
  const size_t bytes = image.size();
  BRAID_ASSIGN_OR_RETURN(const int device, runtime.currentDevice());
  void* memory = nullptr;
  std::optional<ShmSegment> pinned;
  gpu::IpcHandle handle{};
  if (placement == FifoPlacement::kDeviceMemory) {
    BRAID_ASSIGN_OR_RETURN(memory, runtime.deviceAlloc(bytes));
    Status laid = runtime.copy(memory, image.data(), bytes, stream);
    if (laid.ok()) laid = runtime.streamSynchronize(stream);
    Result<gpu::IpcHandle> h = laid.ok() ? runtime.ipcHandle(memory) : Result<gpu::IpcHandle>(laid);
    if (!h.ok()) {
      (void)runtime.deviceFree(memory);
      return h.status().withContext("GPU FIFO " + name);
    }
    handle = h.value();
  } else {
    BRAID_ASSIGN_OR_RETURN(ShmSegment segment, ShmSegment::create(pinnedSegmentName(name), bytes));
    memcpy(segment.data(), image.data(), bytes);
    BRAID_TRY(runtime.hostRegister(segment.data(), bytes).withContext("GPU FIFO " + name));
    memory = segment.data();
    pinned = std::move(segment);
  }
  Result<ShmSegment> record = ShmSegment::create(name, kPage);
  if (!record.ok()) {
    if (placement == FifoPlacement::kDeviceMemory) {
      (void)runtime.deviceFree(memory);
    } else {
      (void)runtime.hostUnregister(memory);
    }
    return record.status();
  }
  auto* r = new (record.value().data()) Record();
  r->version = kRecordVersion;
  r->placement = static_cast<uint32_t>(placement);
  r->pid = static_cast<int32_t>(getpid());
  r->device = device;
  r->slotBytes = slotBytes;
  r->stride = strideFor(slotBytes, format.protocol);
  r->protocol = static_cast<uint32_t>(format.protocol);
  r->flagBits = format.llFlagBits;
  r->bytes = bytes;
  r->address = reinterpret_cast<uint64_t>(memory);
  r->handle = handle;
  r->magic.store(kRecordMagic, std::memory_order_release);
  const GpuEnd end = endAt(memory, slotBytes, cursor, format);
  return std::unique_ptr<GpuRecvEnd>(std::make_unique<RecvEndImpl>(
      runtime, placement, memory, std::move(pinned), std::move(record).value(), end));
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
  const auto placement = static_cast<FifoPlacement>(r->placement);
  void* memory = nullptr;
  std::optional<ShmSegment> pinned;
  SendEndImpl::Mapping mapping = SendEndImpl::Mapping::kSameProcess;
  if (r->pid == static_cast<int32_t>(getpid())) {
    memory = reinterpret_cast<void*>(r->address);
    if (placement == FifoPlacement::kDeviceMemory) {
      BRAID_TRY(runtime.enablePeerAccess(r->device).withContext("GPU FIFO " + name));
    }
  } else if (placement == FifoPlacement::kDeviceMemory) {
    BRAID_ASSIGN_OR_RETURN(memory, runtime.ipcOpen(r->handle));
    mapping = SendEndImpl::Mapping::kIpc;
  } else {
    BRAID_ASSIGN_OR_RETURN(ShmSegment fifo, ShmSegment::open(pinnedSegmentName(name)));
    if (fifo.size() < r->bytes) {
      return invalidUsage("GPU FIFO " + name + " is smaller than its record says");
    }
    BRAID_TRY(runtime.hostRegister(fifo.data(), r->bytes).withContext("GPU FIFO " + name));
    memory = fifo.data();
    pinned = std::move(fifo);
    mapping = SendEndImpl::Mapping::kPinned;
  }
  // Both ends hold what they need: the names can go.
  (void)ShmSegment::unlink(name);
  if (placement == FifoPlacement::kPinnedHost) (void)ShmSegment::unlink(pinnedSegmentName(name));
  const GpuEnd end = endAt(memory, slotBytes, cursor, format);
  return std::unique_ptr<GpuSendEnd>(
      std::make_unique<SendEndImpl>(runtime, placement, mapping, memory, std::move(pinned), end));
}

}  // namespace braid::transport::cuda_ipc
