// The one-shot board: segment layout, publication, waiting and the fold.
//
// Each rank's segment (offsets from the start of its mapping):
//
//   0         BoardHeader                                  one page
//               identity   magic, version, rank, nranks, maxBytes
//               published  simple: calls published (k + 1 once call k is)
//               wake       futex word, bumped when a reader may be asleep
//               sleepers   how many readers may be asleep on `wake`
//   4096      simple slot 0 | simple slot 1                maxBytes each, page-rounded
//   then      LL slot 0 | LL slot 1                        ceil(maxBytes / 4) lines of
//                                                          8 bytes each, page-rounded
//
// Each field of the header that changes sits on its own cache line. Simple
// and LL have slots of their own, so a call of one protocol never leaves
// bytes that a call of the other would take for data (a simple slot holds
// raw values, which could look like an LL line with the right flag).
//
// Why two slots are enough, with no "calls read" counter. A rank starts
// call k only after it has returned from call k-1, and it returns only
// after reading every peer's slot for k-1. Rank r writes slot k % 2 at
// call k; that slot was last read by its peers at call k-2. Rank r is at
// call k only if it has finished call k-1, for which it read every peer's
// call k-1; a peer publishes k-1 only after finishing k-2. So when r
// writes, every peer has finished reading call k-2 and nobody reads the
// slot r is writing. The same argument bounds how far a writer can be
// ahead of a reader of call k: at most at call k+1, which is the other slot.
//
// LL flags (LlFlagClock). A slot keeps the lines of the last call that wrote
// each of them, and a reader of call k starts polling a peer's slot as soon
// as it has finished call k-1, possibly before that peer has even started
// call k. So from the moment the peer publishes call k-1 until it writes
// call k, no line of slot k % 2 may carry call k's flag. The g-th call of a
// parity (g = k / 2) writes the flag g % period + 1: never 0 (a new segment
// is zeroed) and different from the flags of the period - 1 generations
// before it. So at every call, of either protocol, the writer looks one
// generation ahead: if lines left since the slot was last zeroed could
// carry the next generation's flag, it zeroes the slot before it publishes
// this call. Nobody reads the slot for an older call then (the argument
// above), and this call's readers see only zeros, older flags or this
// call's lines. With the full 32-bit period the slot is zeroed once every
// 2^33 calls; the period must be at least 2, or a call's own lines would
// carry the next call's flag.
//
// Waiting. Readers spin, then yield, then sleep on the peer's `wake` word in
// slices; any number of readers may sleep on one rank's word, and a writer
// that publishes with sleepers present wakes them all (exec/peer_wait.h
// gives the protocol and why it cannot lose a wake-up).
#include "exec/one_shot.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

#include "base/futex.h"
#include "base/membarrier.h"
#include "exec/peer_wait.h"
#include "kernels/engine/sync.h"
#include "transport/shm/shm_segment.h"

namespace braid::exec {

using transport::shm::ShmSegment;

namespace {

constexpr uint64_t kMagic = 0x42534f4449415242ull;  // the bytes "BRAIDOSB" on a little-endian host
constexpr uint32_t kVersion = 1;
constexpr size_t kLine = 128;
constexpr size_t kPage = 4096;
// A board bigger than this is a mistake: one-shot is for tiny messages.
constexpr size_t kLargestMaxBytes = size_t{1} << 30;

static_assert(OneShotBoard::kChunkBytes % 8 == 0, "chunks hold whole 8-byte elements and LL lines");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "LL lines are single 64-bit stores");

struct BoardHeader {
  // Identity: written by the owner before it publishes `magic`.
  std::atomic<uint64_t> magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  uint64_t maxBytes;
  uint32_t fenceless;  // the owner asked to publish without a full fence, and can
  // Written by the owner at every simple call.
  alignas(kLine) std::atomic<uint64_t> published;
  // `wake`, written by the owner when it finds sleepers; `sleepers`, counted by the readers
  // around a sleep (peer_wait.h).
  WakeWords words;
};
static_assert(sizeof(BoardHeader) <= kPage, "the board header must fit its page");

size_t roundUpToPage(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// Where the slots lie in a segment for a given maxBytes.
struct Layout {
  size_t simpleStride;
  size_t llLines;
  size_t llStride;

  explicit Layout(size_t maxBytes)
      : simpleStride(roundUpToPage(maxBytes)),
        llLines((maxBytes + 3) / 4),
        llStride(roundUpToPage(llLines * sizeof(uint64_t))) {}
  size_t simpleOffset(int parity) const { return kPage + parity * simpleStride; }
  size_t llOffset(int parity) const { return kPage + 2 * simpleStride + parity * llStride; }
  size_t totalBytes() const { return kPage + 2 * simpleStride + 2 * llStride; }
};

const char* protocolText(algo::Protocol protocol) {
  return protocol == algo::Protocol::kLl ? "ll" : "simple";
}

// Turns a freshly created (zeroed) segment into rank's board segment.
void formatSegment(const ShmSegment& segment, int rank, int nranks, size_t maxBytes,
                   const Layout& layout, bool fenceless) {
  char* base = static_cast<char*>(segment.data());
  // Constructing the atomics in place makes them C++ objects before any
  // peer can map the segment; the memory is already zero.
  auto* header = new (base) BoardHeader();
  for (int parity = 0; parity < 2; ++parity) {
    char* lines = base + layout.llOffset(parity);
    for (size_t i = 0; i < layout.llLines; ++i) {
      new (lines + i * sizeof(uint64_t)) std::atomic<uint64_t>(0);
    }
  }
  header->version = kVersion;
  header->rank = rank;
  header->nranks = nranks;
  header->maxBytes = maxBytes;
  header->fenceless = fenceless ? 1 : 0;
  header->magic.store(kMagic, std::memory_order_release);
}

// Says what is wrong with a peer's segment, or nothing when it matches.
Status checkSegment(const ShmSegment& segment, int peer, int nranks, size_t maxBytes,
                    const Layout& layout) {
  const std::string& name = segment.name();
  if (segment.size() < kPage) {
    return invalidUsage("shm segment " + name + " (" + std::to_string(segment.size()) +
                        " bytes) is too small to be a braid one-shot board");
  }
  const auto* header = static_cast<const BoardHeader*>(segment.data());
  if (header->magic.load(std::memory_order_acquire) != kMagic) {
    return invalidUsage("shm segment " + name + " is not a braid one-shot board");
  }
  if (header->version != kVersion) {
    return invalidUsage("one-shot board " + name + " has layout version " +
                        std::to_string(header->version) + ", this build uses " +
                        std::to_string(kVersion) + " (ranks run different braid builds?)");
  }
  if (header->rank != peer || header->nranks != nranks || header->maxBytes != maxBytes ||
      segment.size() < layout.totalBytes()) {
    return invalidUsage(
        "one-shot board " + name + " belongs to rank " + std::to_string(header->rank) + " of " +
        std::to_string(header->nranks) + " with " + std::to_string(header->maxBytes) +
        " bytes, expected rank " + std::to_string(peer) + " of " + std::to_string(nranks) +
        " with " + std::to_string(maxBytes) + " (ranks configured with different one-shot sizes?)");
  }
  return Status();
}

// Writes `bytes` of src as LL lines carrying `flag`, 4 bytes a line (the
// last line zero-padded), each line one 64-bit store.
void packLines(std::atomic<uint64_t>* lines, const char* src, size_t bytes, uint32_t flag) {
  const uint64_t tag = static_cast<uint64_t>(flag) << 32;
  const size_t full = bytes / 4;
  for (size_t i = 0; i < full; ++i) {
    uint32_t piece;
    memcpy(&piece, src + i * 4, 4);
    lines[i].store(tag | piece, std::memory_order_relaxed);
  }
  if (bytes % 4 != 0) {
    uint32_t piece = 0;
    memcpy(&piece, src + full * 4, bytes % 4);
    lines[full].store(tag | piece, std::memory_order_relaxed);
  }
}

// Copies into dst the lines from `next` on that carry `flag`, up to the first
// that does not yet; returns where it stopped (ceil(bytes / 4) when done).
// Each line is read with one 64-bit load, so its data and flag are of one call.
size_t unpackReadyLines(const std::atomic<uint64_t>* lines, size_t next, size_t bytes,
                        uint32_t flag, char* dst) {
  const size_t nlines = (bytes + 3) / 4;
  for (; next < nlines; ++next) {
    const uint64_t line = lines[next].load(std::memory_order_relaxed);
    if (static_cast<uint32_t>(line >> 32) != flag) break;
    const uint32_t piece = static_cast<uint32_t>(line);
    if ((next + 1) * 4 <= bytes) {
      memcpy(dst + next * 4, &piece, 4);
    } else {
      memcpy(dst + next * 4, &piece, bytes - next * 4);
    }
  }
  return next;
}

}  // namespace

std::string oneShotSegmentName(uint64_t nonce, int rank) {
  char name[64];
  snprintf(name, sizeof(name), "/braid-%016" PRIx64 "-oneshot-%d", nonce, rank);
  return name;
}

// One rank's segment as this rank maps it.
struct OneShotBoard::Rank {
  Rank(ShmSegment mapped, const Layout& layout) : segment(std::move(mapped)) {
    char* base = static_cast<char*>(segment.data());
    header = reinterpret_cast<BoardHeader*>(base);
    for (int parity = 0; parity < 2; ++parity) {
      simple[parity] = base + layout.simpleOffset(parity);
      ll[parity] = reinterpret_cast<std::atomic<uint64_t>*>(base + layout.llOffset(parity));
    }
  }

  ShmSegment segment;
  BoardHeader* header;
  char* simple[2];
  std::atomic<uint64_t>* ll[2];
};

struct OneShotBoard::Chunk {
  size_t offset;  ///< bytes from the start of the message
  size_t bytes;
  size_t count;  ///< elements
};

// The LL flag of each call, and when a slot must be zeroed (see the top).
class OneShotBoard::LlFlagClock {
 public:
  explicit LlFlagClock(uint32_t period) : period_(period) {}

  uint32_t flag(uint64_t call) const { return static_cast<uint32_t>(call / 2 % period_) + 1; }

  /// Whether the writer of `call` (of either protocol) must zero its LL
  /// slot before it publishes, so that no line left there can carry the
  /// flag of the next call on the slot; it then counts as zeroed at `call`.
  bool mustClear(uint64_t call) {
    const uint64_t generation = call / 2;
    uint64_t& last = lastCleared_[call % 2];
    if (generation + 1 - last < period_) return false;
    last = generation;
    return true;
  }

 private:
  uint64_t period_;
  uint64_t lastCleared_[2] = {0, 0};  // a new segment is zero: cleared at generation 0
};

OneShotBoard::OneShotBoard(int rank, int nranks, size_t maxBytes, uint32_t llFlagPeriod)
    : rank_(rank),
      nranks_(nranks),
      maxBytes_(maxBytes),
      llClock_(std::make_unique<LlFlagClock>(llFlagPeriod)),
      fold_(nranks, kChunkBytes) {}

OneShotBoard::~OneShotBoard() = default;

Result<std::unique_ptr<OneShotBoard>> OneShotBoard::create(uint64_t nonce, int rank, int nranks,
                                                           size_t maxBytes,
                                                           const std::function<Status()>& barrier,
                                                           uint32_t llFlagPeriod,
                                                           bool fencelessPublish) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return invalidArgument("one-shot board: rank " + std::to_string(rank) + " of " +
                           std::to_string(nranks) + " ranks");
  }
  if (maxBytes == 0 || maxBytes > kLargestMaxBytes) {
    return invalidArgument("one-shot board: maxBytes " + std::to_string(maxBytes) +
                           " is not in 1.." + std::to_string(kLargestMaxBytes));
  }
  if (llFlagPeriod < 2) {
    return invalidArgument("one-shot board: LL flag period " + std::to_string(llFlagPeriod) +
                           " is below 2");
  }
  std::unique_ptr<OneShotBoard> board(new OneShotBoard(rank, nranks, maxBytes, llFlagPeriod));
  if (nranks == 1) return board;  // a rank alone reads nobody's slot

  const Layout layout(maxBytes);
  const std::string ownName = oneShotSegmentName(nonce, rank);
  BRAID_ASSIGN_OR_RETURN(ShmSegment own, ShmSegment::create(ownName, layout.totalBytes()));
  const bool fenceless = fencelessPublish && membarrier::available();
  formatSegment(own, rank, nranks, maxBytes, layout, fenceless);
  board->fencelessPublish_ = fenceless;
  BRAID_TRY(barrier());
  board->ranks_.reserve(nranks);
  for (int r = 0; r < nranks; ++r) {
    if (r == rank) {
      board->ranks_.emplace_back(std::move(own), layout);
      continue;
    }
    BRAID_ASSIGN_OR_RETURN(ShmSegment peer, ShmSegment::open(oneShotSegmentName(nonce, r)));
    BRAID_TRY(checkSegment(peer, r, nranks, maxBytes, layout));
    // Publishing without a fence needs every reader to force the barrier before it sleeps.
    if (static_cast<const BoardHeader*>(peer.data())->fenceless == 0) {
      board->fencelessPublish_ = false;
    }
    board->ranks_.emplace_back(std::move(peer), layout);
  }
  BRAID_TRY(barrier());
  BRAID_TRY(ShmSegment::unlink(ownName));
  return board;
}

Status OneShotBoard::allReduce(const void* input, void* output, size_t count, size_t elemBytes,
                               const kernels::HostOp& op, algo::Protocol protocol,
                               const transport::WaitContext& wait,
                               kernels::engine::WaitRecord* record) {
  BRAID_TRY(begin(input, output, count, elemBytes, op, protocol));
  return complete(input, output, count, elemBytes, op, protocol, wait, record);
}

Status OneShotBoard::begin(const void* input, void* output, size_t count, size_t elemBytes,
                           const kernels::HostOp& op, algo::Protocol protocol) {
  if (!broken_.ok()) {
    return invalidUsage("one-shot board of rank " + std::to_string(rank_) +
                        " is unusable after an earlier call failed (" + broken_.message() + ")");
  }
  if (elemBytes != 1 && elemBytes != 2 && elemBytes != 4 && elemBytes != 8) {
    return invalidArgument("one-shot all_reduce: element size " + std::to_string(elemBytes) +
                           " is not 1, 2, 4 or 8");
  }
  if (count > maxBytes_ / elemBytes) {
    return invalidUsage("one-shot all_reduce of " + std::to_string(count) + " elements of " +
                        std::to_string(elemBytes) + " bytes exceeds the board's " +
                        std::to_string(maxBytes_) + " bytes");
  }
  if (protocol != algo::Protocol::kSimple && protocol != algo::Protocol::kLl) {
    return invalidArgument("one-shot all_reduce: protocol " +
                           std::to_string(static_cast<int>(protocol)) + " is not simple or ll");
  }
  if (op.combine == nullptr) return internalError("one-shot all_reduce: HostOp without combine");
  if (count == 0) return Status();
  if (input == nullptr || output == nullptr) {
    return invalidArgument("one-shot all_reduce of " + std::to_string(count) +
                           " elements with a null " + (input == nullptr ? "input" : "output"));
  }
  // A rank alone has nobody to publish for: complete loads its input.
  if (nranks_ > 1) {
    publish(static_cast<const char*>(input), count * elemBytes, count, elemBytes, op, protocol);
  }
  return Status();
}

Status OneShotBoard::complete(const void* input, void* output, size_t count, size_t elemBytes,
                              const kernels::HostOp& op, algo::Protocol protocol,
                              const transport::WaitContext& wait,
                              kernels::engine::WaitRecord* record) {
  if (count == 0) return Status();
  record_ = record;
  const char* in = static_cast<const char*>(input);
  char* out = static_cast<char*>(output);
  const size_t bytes = count * elemBytes;
  if (nranks_ == 1) {
    op.loadInput(out, in, count, elemBytes);
    ++calls_;
    return Status();
  }
  Status status;
  // Peers are visited from the next rank on, so that ranks do not all wait
  // for (and read from) rank 0 first.
  for (int i = 1; status.ok() && i < nranks_ && protocol == algo::Protocol::kSimple; ++i) {
    status = waitForPublished((rank_ + i) % nranks_, wait);
  }
  for (size_t offset = 0; status.ok() && offset < bytes; offset += kChunkBytes) {
    const size_t chunkBytes = std::min(kChunkBytes, bytes - offset);
    const Chunk chunk{offset, chunkBytes, chunkBytes / elemBytes};
    status = gatherChunk(chunk, in, op, protocol, wait);
    if (status.ok()) fold_.foldInto(out + chunk.offset, chunk.count, chunk.bytes, op);
  }
  if (!status.ok()) {
    broken_ = status.withContext("one-shot all_reduce call " + std::to_string(calls_) + " (" +
                                 protocolText(protocol) + ", " + std::to_string(bytes) +
                                 " bytes) on rank " + std::to_string(rank_));
    return broken_;
  }
  ++calls_;
  return Status();
}

void OneShotBoard::publish(const char* input, size_t bytes, size_t count, size_t elemBytes,
                           const kernels::HostOp& op, algo::Protocol protocol) {
  Rank& self = ranks_[rank_];
  const int parity = static_cast<int>(calls_ % 2);
  std::atomic<uint64_t>* lines = self.ll[parity];
  if (llClock_->mustClear(calls_)) {
    const size_t llLines = Layout(maxBytes_).llLines;
    for (size_t i = 0; i < llLines; ++i) lines[i].store(0, std::memory_order_relaxed);
  }
  if (protocol == algo::Protocol::kSimple) {
    op.loadInput(self.simple[parity], input, count, elemBytes);
    self.header->published.store(calls_ + 1, std::memory_order_release);
  } else {
    const uint32_t flag = llClock_->flag(calls_);
    fold_.startChunk();
    char* loaded = fold_.takeScratch();
    for (size_t offset = 0; offset < bytes; offset += kChunkBytes) {
      const size_t chunkBytes = std::min(kChunkBytes, bytes - offset);
      const char* src = input + offset;
      if (op.load != nullptr) {
        op.load(op.args, loaded, src, chunkBytes / elemBytes);
        src = loaded;
      }
      packLines(lines + offset / 4, src, chunkBytes, flag);
    }
  }
  // Between the lines and the look at `sleepers` (peer_wait.h): a full fence, or only the
  // compiler's where the readers force it before they sleep.
  membarrier::lightFence(fencelessPublish_);
  wakeSleepers(self.header->words);
}

template <typename Ready>
Status OneShotBoard::waitNoted(int peer, const transport::WaitContext& wait, Ready ready) {
  if (ready()) return Status();
  namespace engine = kernels::engine;
  if (record_ != nullptr) {
    engine::storeRelaxed(reinterpret_cast<uint32_t*>(&record_->peer), static_cast<uint32_t>(peer));
    engine::storeRelaxed(&record_->instr, 0u);
    engine::storeRelaxed(&record_->sinceNs, engine::clockNs());
    engine::storeRelaxed(&record_->kind, static_cast<uint32_t>(engine::WaitKind::kRecv));
  }
  Status s = waitForPeer(ranks_[peer].header->words, peer, wait, ready, fencelessPublish_);
  // A wait that failed stays noted: the dump of the failure shows it.
  if (s.ok() && record_ != nullptr) {
    engine::storeRelaxed(&record_->kind, static_cast<uint32_t>(engine::WaitKind::kNone));
  }
  return s;
}

Status OneShotBoard::waitForPublished(int peer, const transport::WaitContext& wait) {
  const BoardHeader& header = *ranks_[peer].header;
  const uint64_t target = calls_ + 1;
  return waitNoted(peer, wait, [&header, target] {
    return header.published.load(std::memory_order_acquire) >= target;
  });
}

Status OneShotBoard::gatherChunk(const Chunk& chunk, const char* input, const kernels::HostOp& op,
                                 algo::Protocol protocol, const transport::WaitContext& wait) {
  fold_.startChunk();
  // This rank's value comes from its input, loaded here.
  if (op.load != nullptr) {
    char* buffer = fold_.takeScratch();
    op.load(op.args, buffer, input + chunk.offset, chunk.count);
    fold_.setScratchOperand(rank_, buffer);
  } else {
    fold_.setOperand(rank_, input + chunk.offset);
  }
  const int parity = static_cast<int>(calls_ % 2);
  const uint32_t flag = llClock_->flag(calls_);
  for (int i = 1; i < nranks_; ++i) {
    const int peer = (rank_ + i) % nranks_;
    const Rank& from = ranks_[peer];
    if (protocol == algo::Protocol::kSimple) {
      fold_.setOperand(peer, from.simple[parity] + chunk.offset);
      continue;
    }
    char* buffer = fold_.takeScratch();
    const std::atomic<uint64_t>* lines = from.ll[parity] + chunk.offset / 4;
    const size_t nlines = (chunk.bytes + 3) / 4;
    size_t next = 0;
    BRAID_TRY(waitNoted(peer, wait, [&] {
      next = unpackReadyLines(lines, next, chunk.bytes, flag, buffer);
      return next == nlines;
    }));
    fold_.setScratchOperand(peer, buffer);
  }
  return Status();
}

}  // namespace braid::exec
