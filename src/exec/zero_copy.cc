// The zero-copy board: segment layout, the probe, the two meetings of a call
// and the chunk loop (zero_copy.h says what and why).
//
// Each rank's segment is one page:
//
//   identity   magic, version, rank, nranks, pid, the process's token, the
//              address at which the owner maps this page (for the probe)
//   verdict    whether the owner could read every peer (the probe's answer)
//   posted     the call the addresses below belong to (calls made + 1)
//   input, output   the owner's buffers for that call, in its address space
//   done       calls the owner has finished reading and writing for
//   wake, sleepers  exec/peer_wait.h
//
// `posted` and `done` only grow. One set of addresses is enough: a rank
// publishes call k+1 only after every peer said it was done with call k, and
// a peer reads call k's addresses before it can say that.
#include "exec/zero_copy.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <map>
#include <new>
#include <random>
#include <utility>

#include "exec/peer_wait.h"
#include "transport/shm/shared_host_memory.h"
#include "transport/shm/shm_segment.h"

namespace braid::exec {

using transport::shm::PeerMapping;
using transport::shm::SharedRange;
using transport::shm::ShmSegment;

namespace {

constexpr uint64_t kZeroCopyMagic = 0x59504f434f52455aull;  // "ZEROCOPY" read backwards
constexpr uint32_t kZeroCopyVersion = 1;
constexpr size_t kHeaderPage = 4096;
// The scratch of one chunk's operands (N + 1 buffers) should stay in a
// core's L2 (1 MiB and more on the CPUs this runs on): the bytes read from
// peers are then combined from cache, and the result is written to the
// peers from cache, so only the inputs and outputs cross the memory bus.
constexpr size_t kScratchBudget = 768 * 1024;
constexpr size_t kMinChunkBytes = 16 * 1024;
// 64 KiB measured best for a 64 MiB all_reduce of 2 ranks with ncclMemAlloc buffers (busbw,
// 3 runs each, 2026-12-05: 32 KiB 7.6-7.8 GB/s, 64 KiB 7.8-9.5, 128 KiB 7.8-8.6, 256 KiB 8.1-8.5),
// when that call still went by chunks; large mapped reductions go by kStreamPieceBytes since
// 2026-12-06, and chunks serve the others (cross-memory copies, smaller mapped calls).
constexpr size_t kMaxChunkBytes = 64 * 1024;
// Messages at least this large write their outputs with non-temporal stores: they cannot stay
// in the caches anyway, and a plain store reads each line before it writes it.
constexpr size_t kStreamBytes = 8 << 20;
// What such a reduction folds before it writes the result out: a multiple of every element's
// size, small enough to leave the inputs' and outputs' streams both running (measured:
// docs/benchmarks.md).
constexpr size_t kStreamPieceBytes = 512;

enum Verdict : uint32_t { kUnknown = 0, kReachesAll = 1, kRefused = 2 };

struct Header {
  std::atomic<uint64_t> magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  int32_t pid;
  uint64_t processToken;
  uint64_t selfAddress;
  std::atomic<uint32_t> verdict;
  uint32_t crossMemoryFast;  // 1 when the measurement at creation favoured cross-memory copies
  alignas(128) std::atomic<uint64_t> posted;
  uint64_t input;
  uint64_t output;
  transport::shm::SharedRange inputRange;  // id 0 where the buffer is not shared memory
  transport::shm::SharedRange outputRange;
  alignas(128) std::atomic<uint64_t> done;
  WakeWords words;
};
static_assert(sizeof(Header) <= kHeaderPage, "the zero-copy header must fit its page");

// Random once per process: with the pid, tells a thread of this process
// from a process that happens to have our pid in another PID namespace.
uint64_t processToken() {
  static const uint64_t token = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  return token;
}

size_t chunkBytesFor(int nranks) {
  const size_t share = kScratchBudget / static_cast<size_t>(nranks + 1);
  return std::clamp(share, kMinChunkBytes, kMaxChunkBytes) / 64 * 64;
}

bool isInteger(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64:
      return true;
    default:
      return false;
  }
}

// Cross-memory copies are worth it only where the kernel copies about as fast as we do: each
// saves a copy through a FIFO slot, but on some CPUs (AMD Zen among them) the kernel's
// `rep movsb` runs at a third of a vector loop's rate, and the FIFOs then win. Returns the
// kernel's rate over copyBytes', best of a few rounds of 1 MiB, reading our own memory.
double measureCrossMemoryRatio() {
  constexpr size_t kBytes = 1 << 20;
  std::vector<uint64_t> from(kBytes / 8, 1);
  std::vector<uint64_t> to(kBytes / 8, 0);
  const PeerAddressSpace self{getpid(), false, -1};
  auto best = [](auto copy) {
    double fastest = 1e30;
    for (int round = 0; round < 4; ++round) {
      const auto start = std::chrono::steady_clock::now();
      if (!copy()) return 1e30;
      fastest = std::min(
          fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return fastest;
  };
  const double plain = best([&] {
    kernels::copyBytes(to.data(), from.data(), kBytes);
    return true;
  });
  const double kernel = best([&] { return readPeer(self, from.data(), to.data(), kBytes).ok(); });
  return kernel > 0 ? plain / kernel : 0;
}

// Below this ratio the FIFOs move unmappable buffers faster (measured: docs/benchmarks.md).
constexpr double kCrossMemoryWorthIt = 0.6;

Status checkPeerHeader(const ShmSegment& segment, int peer, int nranks) {
  const auto* header = static_cast<const Header*>(segment.data());
  if (segment.size() < kHeaderPage ||
      header->magic.load(std::memory_order_acquire) != kZeroCopyMagic ||
      header->version != kZeroCopyVersion) {
    return invalidUsage("shm segment " + segment.name() +
                        " is not a braid zero-copy board of this version (ranks run different "
                        "braid builds?)");
  }
  if (header->rank != peer || header->nranks != nranks) {
    return invalidUsage("zero-copy board " + segment.name() + " belongs to rank " +
                        std::to_string(header->rank) + " of " + std::to_string(header->nranks) +
                        ", expected rank " + std::to_string(peer) + " of " +
                        std::to_string(nranks));
  }
  return Status();
}

}  // namespace

std::string zeroCopySegmentName(uint64_t nonce, int rank) {
  char name[64];
  snprintf(name, sizeof(name), "/braid-%016" PRIx64 "-zerocopy-%d", nonce, rank);
  return name;
}

bool zeroCopyKeepsResult(DataType type, RedOp op, const kernels::HostOp& hostOp, int nranks,
                         bool deterministic) {
  if (hostOp.load != nullptr || static_cast<int>(op) >= kNumRedOps) return false;
  if (deterministic || isInteger(type)) return true;
  // Two operands: a + b == b + a and a * b == b * a; max and min pick the first of two
  // equal-comparing values (-0 and +0), so their order shows.
  return nranks == 2 && (op == RedOp::kSum || op == RedOp::kProd || op == RedOp::kAvg);
}

struct ZeroCopyBoard::Rank {
  explicit Rank(ShmSegment mapped)
      : segment(std::move(mapped)), header(static_cast<Header*>(segment.data())) {}
  ShmSegment segment;
  Header* header;
};

// One call's buffers of every rank, as this rank reaches them: addresses in the owner's space
// (for cross-memory copies) or in ours (mapped).
struct ZeroCopyBoard::Buffers {
  std::vector<const char*> inputs;
  std::vector<char*> outputs;
};

// Peers' shared allocations mapped here, by (rank, allocation id), the least recently used
// let go when more come (never during a call: a call maps at most 2 per peer, and the cache
// holds more). A mapping keeps its allocation's memory alive after the owner frees it, until
// it is let go or the board is destroyed: the cache is small so that little memory stays
// behind, and a program that allocates its buffers once (what ncclMemAlloc is for) maps them
// once.
class ZeroCopyBoard::Mappings {
 public:
  // A call maps at most its peers' inputs and outputs: never fewer entries than that.
  explicit Mappings(int nranks)
      : entries_(std::max<size_t>(16, 2 * static_cast<size_t>(nranks - 1))) {}

  Result<char*> find(pid_t pid, int rank, const SharedRange& range) {
    const Key key{rank, range.id};
    auto it = maps_.find(key);
    if (it != maps_.end()) {
      order_.erase(std::find(order_.begin(), order_.end(), key));
    } else {
      BRAID_ASSIGN_OR_RETURN(PeerMapping mapping, PeerMapping::open(pid, range));
      if (maps_.size() >= entries_) {
        maps_.erase(order_.front());
        order_.pop_front();
      }
      it = maps_.emplace(key, std::move(mapping)).first;
    }
    order_.push_back(key);
    return it->second.data() + range.offset;
  }

 private:
  size_t entries_;
  using Key = std::pair<int, uint64_t>;
  std::map<Key, PeerMapping> maps_;
  std::deque<Key> order_;  // least recently used first
};

ZeroCopyBoard::ZeroCopyBoard(int rank, int nranks, size_t chunkBytes)
    : rank_(rank),
      nranks_(nranks),
      mappings_(std::make_unique<Mappings>(nranks)),
      chunkBytes_(chunkBytes),
      fold_(nranks, chunkBytes),
      staged_((kStreamPieceBytes + 7) / 8) {}

ZeroCopyBoard::~ZeroCopyBoard() = default;

bool ZeroCopyBoard::peersInProcess() const {
  return std::all_of(spaces_.begin(), spaces_.end(),
                     [](const PeerAddressSpace& s) { return s.sameProcess; });
}

Result<std::unique_ptr<ZeroCopyBoard>> ZeroCopyBoard::create(uint64_t nonce, int rank, int nranks,
                                                             const std::function<Status()>& barrier,
                                                             const Options& options) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return invalidArgument("zero-copy board: rank " + std::to_string(rank) + " of " +
                           std::to_string(nranks) + " ranks");
  }
  if (options.chunkBytes % 64 != 0) {
    return invalidArgument("zero-copy board: chunk of " + std::to_string(options.chunkBytes) +
                           " bytes is not a multiple of 64");
  }
  const size_t chunkBytes = options.chunkBytes != 0 ? options.chunkBytes : chunkBytesFor(nranks);
  std::unique_ptr<ZeroCopyBoard> board(new ZeroCopyBoard(rank, nranks, chunkBytes));
  if (nranks == 1) {
    board->usable_ = true;
    return board;
  }
  // Only the default policy asks the measurement; the others answer without it.
  if (options.crossMemory == CrossMemoryPolicy::kWhereFaster) {
    board->crossMemoryRatio_ = measureCrossMemoryRatio();
  }
  const std::string ownName = zeroCopySegmentName(nonce, rank);
  BRAID_ASSIGN_OR_RETURN(ShmSegment own, ShmSegment::create(ownName, kHeaderPage));
  auto* header = new (own.data()) Header();
  header->version = kZeroCopyVersion;
  header->rank = rank;
  header->nranks = nranks;
  header->pid = static_cast<int32_t>(getpid());
  header->processToken = processToken();
  header->selfAddress = reinterpret_cast<uint64_t>(header);
  header->crossMemoryFast = options.crossMemory == CrossMemoryPolicy::kAlways ||
                            (options.crossMemory == CrossMemoryPolicy::kWhereFaster &&
                             board->crossMemoryRatio_ >= kCrossMemoryWorthIt);
  header->magic.store(kZeroCopyMagic, std::memory_order_release);
  BRAID_TRY(barrier());

  // The probe: read each peer's token through its own address of it, as a
  // call will read its buffers. Every refusal is the same answer for us.
  Verdict verdict = kReachesAll;
  board->ranks_.reserve(nranks);
  board->spaces_.resize(nranks);
  for (int r = 0; r < nranks; ++r) {
    if (r == rank) {
      board->ranks_.emplace_back(std::move(own));
      board->spaces_[r] = PeerAddressSpace{getpid(), true, r};
      continue;
    }
    BRAID_ASSIGN_OR_RETURN(ShmSegment mapped, ShmSegment::open(zeroCopySegmentName(nonce, r)));
    BRAID_TRY(checkPeerHeader(mapped, r, nranks));
    const Header& peer = *static_cast<const Header*>(mapped.data());
    const bool samePid = peer.pid == static_cast<int32_t>(getpid());
    board->spaces_[r] =
        PeerAddressSpace{peer.pid, samePid && peer.processToken == processToken(), r};
    if (verdict == kReachesAll) {
      const auto* remoteToken =
          reinterpret_cast<const char*>(peer.selfAddress) + offsetof(Header, processToken);
      Result<uint64_t> read = options.probe(peer.pid, remoteToken);
      if (!read.ok() || read.value() != peer.processToken) {
        verdict = kRefused;
        board->unusableReason_ =
            "rank " + std::to_string(rank) + " cannot read the memory of rank " +
            std::to_string(r) + " (pid " + std::to_string(peer.pid) + ") with process_vm_readv: " +
            (read.ok() ? std::string("it read something else (another PID namespace?)")
                       : read.status().message());
      }
    }
    board->ranks_.emplace_back(std::move(mapped));
  }
  board->ranks_[rank].header->verdict.store(verdict, std::memory_order_release);
  BRAID_TRY(barrier());
  BRAID_TRY(ShmSegment::unlink(ownName));
  board->usable_ = true;
  board->crossMemory_ = true;
  for (int r = 0; r < nranks; ++r) {
    const Header& h = *board->ranks_[r].header;
    board->crossMemory_ = board->crossMemory_ && h.crossMemoryFast != 0;
    if (h.verdict.load(std::memory_order_acquire) == kReachesAll) continue;
    board->usable_ = false;
    if (board->unusableReason_.empty()) {
      board->unusableReason_ = "rank " + std::to_string(r) + " cannot read a peer's memory";
    }
  }
  return board;
}

// A meeting: this rank says it has reached `call` (posted, or done with it), and waits until
// every peer has. Peers are visited from the next rank on, so that ranks do not all wait for
// rank 0 first.
Status ZeroCopyBoard::meet(uint64_t call, bool done, const transport::WaitContext& wait) {
  Header& self = *ranks_[rank_].header;
  (done ? self.done : self.posted).store(call, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  wakeSleepers(self.words);
  for (int i = 1; i < nranks_; ++i) {
    const int peer = (rank_ + i) % nranks_;
    Header& h = *ranks_[peer].header;
    const std::atomic<uint64_t>& word = done ? h.done : h.posted;
    BRAID_TRY(waitForPeer(h.words, peer, wait,
                          [&word, call] { return word.load(std::memory_order_acquire) >= call; }));
  }
  return Status();
}

// The mode every rank comes to from what all posted: mapped when every rank's buffers can be
// mapped by every other (threads of one process, or all in shared allocations), else
// cross-memory copies where the board uses them, else declined. `buffers` then holds
// addresses to use: mapped ones here, the owners' for cross-memory copies.
Result<ZeroCopyMode> ZeroCopyBoard::resolve(Buffers& buffers, size_t inputBytes,
                                            size_t outputBytes) {
  buffers.inputs.assign(nranks_, nullptr);
  buffers.outputs.assign(nranks_, nullptr);
  bool allShared = true;
  for (int r = 0; r < nranks_; ++r) {
    const Header& h = *ranks_[r].header;
    buffers.inputs[r] = reinterpret_cast<const char*>(h.input);
    buffers.outputs[r] = reinterpret_cast<char*>(h.output);
    allShared = allShared && h.inputRange.id != 0 && h.outputRange.id != 0;
  }
  if (!peersInProcess() && !allShared) {
    return crossMemory_ ? ZeroCopyMode::kCrossMemory : ZeroCopyMode::kDeclined;
  }
  for (int r = 0; r < nranks_; ++r) {
    if (spaces_[r].sameProcess) continue;
    const Header& h = *ranks_[r].header;
    if (h.inputRange.offset + inputBytes > h.inputRange.mapBytes ||
        h.outputRange.offset + outputBytes > h.outputRange.mapBytes) {
      return internalError("rank " + std::to_string(r) + "'s buffers end past their allocation");
    }
    BRAID_ASSIGN_OR_RETURN(char* in, mappings_->find(spaces_[r].pid, r, h.inputRange));
    BRAID_ASSIGN_OR_RETURN(buffers.outputs[r], mappings_->find(spaces_[r].pid, r, h.outputRange));
    buffers.inputs[r] = in;
  }
  return ZeroCopyMode::kMapped;
}

Status ZeroCopyBoard::allReduce(const void* input, void* output, size_t count, DataType type,
                                const kernels::HostOp& op, const transport::WaitContext& wait,
                                ZeroCopyMode* mode) {
  if (op.load != nullptr || op.combine == nullptr) {
    return internalError("zero-copy all_reduce needs an operator without a load and with combine");
  }
  const size_t elemBytes = dataTypeSize(type);
  const size_t bytes = count * elemBytes;
  return runCall("all_reduce", input, output, count, bytes, bytes, wait, mode,
                 [&](const Buffers& buffers, ZeroCopyMode chosen) {
                   // This rank's block: the deterministic ring's
                   // (comm/ways/deterministic_ring_way.cc).
                   const size_t n = static_cast<size_t>(nranks_);
                   const size_t block = (count + n - 1) / n;
                   const size_t begin = std::min(count, static_cast<size_t>(rank_) * block);
                   const size_t end = std::min(count, begin + block);
                   return reduceBlock(buffers, chosen, begin * elemBytes, begin * elemBytes,
                                      end - begin, elemBytes, op, /*toPeers=*/true);
                 });
}

Status ZeroCopyBoard::reduceScatter(const void* input, void* output, size_t count, DataType type,
                                    const kernels::HostOp& op, const transport::WaitContext& wait,
                                    ZeroCopyMode* mode) {
  if (op.load != nullptr || op.combine == nullptr) {
    return internalError(
        "zero-copy reduce_scatter needs an operator without a load and with combine");
  }
  const size_t elemBytes = dataTypeSize(type);
  const size_t bytes = count * elemBytes;
  return runCall("reduce_scatter", input, output, count, bytes * static_cast<size_t>(nranks_),
                 bytes, wait, mode, [&](const Buffers& buffers, ZeroCopyMode chosen) {
                   // Block r of every input, folded into rank r's output alone.
                   return reduceBlock(buffers, chosen, static_cast<size_t>(rank_) * bytes, 0, count,
                                      elemBytes, op, /*toPeers=*/false);
                 });
}

Status ZeroCopyBoard::allGather(const void* input, void* output, size_t count, DataType type,
                                const transport::WaitContext& wait, ZeroCopyMode* mode) {
  const size_t bytes = count * dataTypeSize(type);
  return runCall("all_gather", input, output, count, bytes, bytes * static_cast<size_t>(nranks_),
                 wait, mode, [&](const Buffers& buffers, ZeroCopyMode chosen) {
                   return copyBlock(buffers, chosen, bytes);
                 });
}

Status ZeroCopyBoard::runCall(const char* what, const void* input, void* output, size_t count,
                              size_t inputBytes, size_t outputBytes,
                              const transport::WaitContext& wait, ZeroCopyMode* mode,
                              const std::function<Status(const Buffers&, ZeroCopyMode)>& work) {
  *mode = ZeroCopyMode::kDeclined;
  if (!broken_.ok()) {
    return invalidUsage("zero-copy board of rank " + std::to_string(rank_) +
                        " is unusable after an earlier call failed (" + broken_.message() + ")");
  }
  if (!usable_) return invalidUsage(std::string("zero-copy ") + what + ": " + unusableReason_);
  if (count == 0) return Status();
  if (input == nullptr || output == nullptr) {
    return invalidArgument(std::string("zero-copy ") + what + " of " + std::to_string(count) +
                           " elements with a null " + (input == nullptr ? "input" : "output"));
  }
  if (nranks_ == 1) {
    Buffers buffers;
    buffers.inputs.assign(1, static_cast<const char*>(input));
    buffers.outputs.assign(1, static_cast<char*>(output));
    BRAID_TRY(work(buffers, ZeroCopyMode::kMapped));
    *mode = ZeroCopyMode::kMapped;
    ++ran_;
    return Status();
  }

  // Meeting 1: our buffers out, every peer's in. The fields are read only after `posted`
  // says they are this call's, and rewritten only after every peer's `done` for it.
  Header& self = *ranks_[rank_].header;
  const uint64_t call = calls_ + 1;
  self.input = reinterpret_cast<uint64_t>(input);
  self.output = reinterpret_cast<uint64_t>(output);
  self.inputRange = transport::shm::findSharedHost(input, inputBytes).value_or(SharedRange{});
  self.outputRange = transport::shm::findSharedHost(output, outputBytes).value_or(SharedRange{});
  Status status = meet(call, false, wait);
  Buffers buffers;
  ZeroCopyMode chosen = ZeroCopyMode::kDeclined;
  if (status.ok()) {
    Result<ZeroCopyMode> resolved = resolve(buffers, inputBytes, outputBytes);
    status = resolved.status();
    if (resolved.ok()) chosen = resolved.value();
  }
  if (status.ok() && chosen != ZeroCopyMode::kDeclined) status = work(buffers, chosen);
  // Meeting 2: nobody returns while a peer may still read or write its buffers, or read its
  // posted fields. A rank whose work failed does not come; its peers' waits end at the deadline
  // or when the communicator's stop flag goes up.
  if (status.ok()) status = meet(call, true, wait);
  if (!status.ok()) {
    broken_ = status.withContext(std::string("zero-copy ") + what + " call " +
                                 std::to_string(call) + " (" + std::to_string(outputBytes) +
                                 " output bytes) on rank " + std::to_string(rank_));
    return broken_;
  }
  calls_ = call;
  if (chosen != ZeroCopyMode::kDeclined) ++ran_;
  *mode = chosen;
  return Status();
}

// All-gather: this rank's input goes into block `rank` of every rank's output, its own
// included (nothing to do there in place). Mapped and large, with non-temporal stores: the
// input is read from memory once per destination, and no output line is read before it is
// written.
Status ZeroCopyBoard::copyBlock(const Buffers& buffers, ZeroCopyMode mode, size_t bytes) {
  const bool streamed =
      mode == ZeroCopyMode::kMapped && bytes * static_cast<size_t>(nranks_) >= kStreamBytes;
  const char* mine = buffers.inputs[rank_];
  const size_t at = static_cast<size_t>(rank_) * bytes;
  for (int i = 0; i < nranks_; ++i) {
    const int to = (rank_ + i) % nranks_;
    char* out = buffers.outputs[to] + at;
    if (to == rank_ && out == mine) continue;
    if (to == rank_ || mode == ZeroCopyMode::kMapped) {
      if (streamed) {
        kernels::streamBytes(out, mine, bytes);
      } else {
        kernels::copyBytes(out, mine, bytes);
      }
      continue;
    }
    for (size_t done = 0; done < bytes; done += chunkBytes_) {
      const size_t piece = std::min(chunkBytes_, bytes - done);
      BRAID_TRY(writePeer(spaces_[to], out + done, mine + done, piece));
    }
  }
  return Status();
}

Status ZeroCopyBoard::reduceBlock(const Buffers& buffers, ZeroCopyMode mode, size_t inAt,
                                  size_t outAt, size_t count, size_t elemBytes,
                                  const kernels::HostOp& op, bool toPeers) {
  if (nranks_ == 1) {
    char* out = buffers.outputs[0] + outAt;
    const char* in = buffers.inputs[0] + inAt;
    if (out != in) kernels::copyBytes(out, in, count * elemBytes);
    op.finishOutput(out, count);
    return Status();
  }
  const bool mapped = mode == ZeroCopyMode::kMapped;
  const size_t written = count * elemBytes * (toPeers ? static_cast<size_t>(nranks_) : 1);
  if (mapped && written >= kStreamBytes) {
    streamReducedBlock(buffers, inAt, outAt, count, elemBytes, op, toPeers);
    return Status();
  }
  const size_t chunkElems = chunkBytes_ / elemBytes;
  for (size_t done = 0; done < count; done += chunkElems) {
    const size_t elems = std::min(chunkElems, count - done);
    const size_t from = inAt + done * elemBytes;
    const size_t at = outAt + done * elemBytes;
    const size_t bytes = elems * elemBytes;
    char* mine = buffers.outputs[rank_] + at;
    fold_.startChunk();
    for (int r = 0; r < nranks_; ++r) {
      if (r == rank_ || mapped) {
        fold_.setOperand(r, buffers.inputs[r] + from);
        continue;
      }
      char* scratch = fold_.takeScratch();
      BRAID_TRY(readPeer(spaces_[r], buffers.inputs[r] + from, scratch, bytes));
      fold_.setScratchOperand(r, scratch);
    }
    fold_.foldInto(mine, elems, bytes, op);  // its last join writes `mine` itself
    op.finishOutput(mine, elems);
    // The chunk is in this core's cache now: each peer's copy of it reads it from there.
    for (int i = 1; toPeers && i < nranks_; ++i) {
      const int peer = (rank_ + i) % nranks_;
      if (mapped) {
        kernels::copyBytes(buffers.outputs[peer] + at, mine, bytes);
      } else {
        BRAID_TRY(writePeer(spaces_[peer], buffers.outputs[peer] + at, mine, bytes));
      }
    }
  }
  return Status();
}

// Mapped and large: the result goes to the outputs with non-temporal stores (a plain store
// reads each output line from memory before it writes it, a third more traffic for a
// reduction that only streams), a piece at a time through a buffer that stays in L1. The
// pieces are small so that the core reads the inputs and writes the outputs at once: folding
// a whole chunk before writing it out left the memory idle in one direction at a time, and
// measured 1.3-2x slower (docs/benchmarks.md).
void ZeroCopyBoard::streamReducedBlock(const Buffers& buffers, size_t inAt, size_t outAt,
                                       size_t count, size_t elemBytes, const kernels::HostOp& op,
                                       bool toPeers) {
  const size_t pieceElems = kStreamPieceBytes / elemBytes;
  char* result = reinterpret_cast<char*>(staged_.data());
  // The outputs this rank writes, its own first.
  const int nouts = toPeers ? nranks_ : 1;
  std::vector<char*> outs(static_cast<size_t>(nouts));
  for (int i = 0; i < nouts; ++i) outs[i] = buffers.outputs[(rank_ + i) % nranks_];
  // A piece moves about 80 ns' worth of memory traffic: what it costs besides (calls, the
  // fold's bookkeeping) shows in the rate, so two ranks, whose in-order fold is one join,
  // combine directly (measured: docs/benchmarks.md, "Eleventh session").
  const char* first = buffers.inputs[0] + inAt;
  const char* second = buffers.inputs[1] + inAt;
  for (size_t done = 0; done < count; done += pieceElems) {
    const size_t elems = std::min(pieceElems, count - done);
    const size_t offset = done * elemBytes;
    if (nranks_ == 2) {
      op.combine(op.args, result, first + offset, second + offset, elems);
    } else {
      fold_.startChunk();
      for (int r = 0; r < nranks_; ++r) fold_.setOperand(r, buffers.inputs[r] + inAt + offset);
      fold_.foldInto(result, elems, elems * elemBytes, op);
    }
    op.finishOutput(result, elems);
    kernels::streamToEach(outs.data(), nouts, outAt + offset, result, elems * elemBytes);
  }
  // Before meeting 2 tells the peers their outputs are written.
  kernels::storeFence();
}

}  // namespace braid::exec
