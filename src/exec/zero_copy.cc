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
#include <cinttypes>
#include <cstdio>
#include <new>
#include <random>
#include <utility>

#include "exec/peer_wait.h"
#include "transport/shm/shm_segment.h"

namespace braid::exec {

using transport::shm::ShmSegment;

namespace {

constexpr uint64_t kMagic = 0x59504f434f52455aull;  // "ZEROCOPY" read backwards
constexpr uint32_t kVersion = 1;
constexpr size_t kPage = 4096;
// The scratch of one chunk's operands (N + 1 buffers) should stay in a
// core's L2 (1 MiB and more on the CPUs this runs on): the bytes read from
// peers are then combined from cache, and the result is written to the
// peers from cache, so only the inputs and outputs cross the memory bus.
constexpr size_t kScratchBudget = 768 * 1024;
constexpr size_t kMinChunkBytes = 16 * 1024;
constexpr size_t kMaxChunkBytes = 256 * 1024;

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
  alignas(128) std::atomic<uint64_t> posted;
  std::atomic<uint64_t> input;
  std::atomic<uint64_t> output;
  alignas(128) std::atomic<uint64_t> done;
  WakeWords words;
};
static_assert(sizeof(Header) <= kPage, "the zero-copy header must fit its page");

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

Status checkPeerHeader(const ShmSegment& segment, int peer, int nranks) {
  const auto* header = static_cast<const Header*>(segment.data());
  if (segment.size() < kPage || header->magic.load(std::memory_order_acquire) != kMagic ||
      header->version != kVersion) {
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

ZeroCopyBoard::ZeroCopyBoard(int rank, int nranks, size_t chunkBytes)
    : rank_(rank), nranks_(nranks), chunkBytes_(chunkBytes), fold_(nranks, chunkBytes) {}

ZeroCopyBoard::~ZeroCopyBoard() = default;

bool ZeroCopyBoard::peersInProcess() const {
  return std::all_of(spaces_.begin(), spaces_.end(),
                     [](const PeerAddressSpace& s) { return s.sameProcess; });
}

Result<std::unique_ptr<ZeroCopyBoard>> ZeroCopyBoard::create(uint64_t nonce, int rank, int nranks,
                                                             const std::function<Status()>& barrier,
                                                             Probe probe, size_t chunkBytes) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return invalidArgument("zero-copy board: rank " + std::to_string(rank) + " of " +
                           std::to_string(nranks) + " ranks");
  }
  if (chunkBytes % 64 != 0) {
    return invalidArgument("zero-copy board: chunk of " + std::to_string(chunkBytes) +
                           " bytes is not a multiple of 64");
  }
  if (chunkBytes == 0) chunkBytes = chunkBytesFor(nranks);
  std::unique_ptr<ZeroCopyBoard> board(new ZeroCopyBoard(rank, nranks, chunkBytes));
  if (nranks == 1) {
    board->usable_ = true;
    return board;
  }
  const std::string ownName = zeroCopySegmentName(nonce, rank);
  BRAID_ASSIGN_OR_RETURN(ShmSegment own, ShmSegment::create(ownName, kPage));
  auto* header = new (own.data()) Header();
  header->version = kVersion;
  header->rank = rank;
  header->nranks = nranks;
  header->pid = static_cast<int32_t>(getpid());
  header->processToken = processToken();
  header->selfAddress = reinterpret_cast<uint64_t>(header);
  header->magic.store(kMagic, std::memory_order_release);
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
      Result<uint64_t> read = probe(peer.pid, remoteToken);
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
  for (int r = 0; r < nranks; ++r) {
    if (board->ranks_[r].header->verdict.load(std::memory_order_acquire) == kReachesAll) continue;
    board->usable_ = false;
    if (board->unusableReason_.empty()) {
      board->unusableReason_ = "rank " + std::to_string(r) + " cannot read a peer's memory";
    }
  }
  return board;
}

Status ZeroCopyBoard::allReduce(const void* input, void* output, size_t count, DataType type,
                                const kernels::HostOp& op, const transport::WaitContext& wait) {
  if (!broken_.ok()) {
    return invalidUsage("zero-copy board of rank " + std::to_string(rank_) +
                        " is unusable after an earlier call failed (" + broken_.message() + ")");
  }
  if (!usable_) return invalidUsage("zero-copy all_reduce: " + unusableReason_);
  if (op.load != nullptr || op.combine == nullptr) {
    return internalError("zero-copy all_reduce needs an operator without a load and with combine");
  }
  if (count == 0) return Status();
  if (input == nullptr || output == nullptr) {
    return invalidArgument("zero-copy all_reduce of " + std::to_string(count) +
                           " elements with a null " + (input == nullptr ? "input" : "output"));
  }
  const size_t elemBytes = dataTypeSize(type);
  const auto* in = static_cast<const char*>(input);
  auto* out = static_cast<char*>(output);
  if (nranks_ == 1) {
    if (out != in) kernels::copyBytes(out, in, count * elemBytes);
    op.finishOutput(out, count);
    ++calls_;
    return Status();
  }

  // Meeting 1: our addresses out, every peer's in.
  Header& self = *ranks_[rank_].header;
  const uint64_t call = calls_ + 1;
  self.input.store(reinterpret_cast<uint64_t>(in), std::memory_order_relaxed);
  self.output.store(reinterpret_cast<uint64_t>(out), std::memory_order_relaxed);
  self.posted.store(call, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  wakeSleepers(self.words);
  std::vector<const char*> inputs(nranks_);
  std::vector<char*> outputs(nranks_);
  Status status;
  for (int i = 0; status.ok() && i < nranks_; ++i) {
    const int peer = (rank_ + i) % nranks_;
    Header& h = *ranks_[peer].header;
    if (peer != rank_) {
      status = waitForPeer(h.words, peer, wait,
                           [&h, call] { return h.posted.load(std::memory_order_acquire) >= call; });
    }
    inputs[peer] = reinterpret_cast<const char*>(h.input.load(std::memory_order_relaxed));
    outputs[peer] = reinterpret_cast<char*>(h.output.load(std::memory_order_relaxed));
  }

  // This rank's block: the deterministic ring's (calls_deterministic.cc).
  const size_t n = static_cast<size_t>(nranks_);
  const size_t block = (count + n - 1) / n;
  const size_t begin = std::min(count, static_cast<size_t>(rank_) * block);
  const size_t end = std::min(count, begin + block);
  if (status.ok()) status = reduceBlock(inputs, outputs, begin, end - begin, elemBytes, op);

  // Meeting 2: nobody returns while a peer may still read or write its buffers. A rank whose
  // copies failed says so by not saying it is done; its peers' waits end at the deadline or
  // when the communicator's stop flag goes up.
  if (status.ok()) {
    self.done.store(call, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    wakeSleepers(self.words);
  }
  for (int i = 1; status.ok() && i < nranks_; ++i) {
    const int peer = (rank_ + i) % nranks_;
    Header& h = *ranks_[peer].header;
    status = waitForPeer(h.words, peer, wait,
                         [&h, call] { return h.done.load(std::memory_order_acquire) >= call; });
  }
  if (!status.ok()) {
    broken_ = status.withContext("zero-copy all_reduce call " + std::to_string(calls_) + " (" +
                                 std::to_string(count * elemBytes) + " bytes) on rank " +
                                 std::to_string(rank_));
    return broken_;
  }
  calls_ = call;
  return Status();
}

Status ZeroCopyBoard::reduceBlock(const std::vector<const char*>& inputs,
                                  const std::vector<char*>& outputs, size_t offset, size_t count,
                                  size_t elemBytes, const kernels::HostOp& op) {
  const size_t chunkElems = chunkBytes_ / elemBytes;
  for (size_t done = 0; done < count; done += chunkElems) {
    const size_t elems = std::min(chunkElems, count - done);
    const size_t at = (offset + done) * elemBytes;
    const size_t bytes = elems * elemBytes;
    char* mine = outputs[rank_] + at;
    fold_.startChunk();
    fold_.setOperand(rank_, inputs[rank_] + at);
    for (int i = 1; i < nranks_; ++i) {
      const int peer = (rank_ + i) % nranks_;
      char* scratch = fold_.takeScratch();
      BRAID_TRY(readPeer(spaces_[peer], inputs[peer] + at, scratch, bytes));
      fold_.setScratchOperand(peer, scratch);
    }
    if (nranks_ == 2) {
      // The in-order fold of two ranks is rank 0 op rank 1; combine writes it where it belongs
      // instead of into scratch and then out.
      const char* a = rank_ == 0 ? inputs[0] + at : fold_.operand(0);
      const char* b = rank_ == 1 ? inputs[1] + at : fold_.operand(1);
      op.combine(op.args, mine, a, b, elems);
    } else {
      fold_.foldInto(mine, elems, bytes, op);
    }
    op.finishOutput(mine, elems);
    for (int i = 1; i < nranks_; ++i) {
      const int peer = (rank_ + i) % nranks_;
      BRAID_TRY(writePeer(spaces_[peer], outputs[peer] + at, mine, bytes));
    }
  }
  return Status();
}

}  // namespace braid::exec
