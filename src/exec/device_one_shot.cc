// Making the one-shot boards of a GPU communicator (device_one_shot.h).
//
// Board record: "/braid-<nonce>-gpuboard-<rank>", its shape maxBytes
// (region_exchange.h). A pinned board's segment is the record's name +
// "-cells".
//
// A board (engine::oneShotBoardBytes): two slots of one area per writer,
// each the size word's line and the lines of maxBytes, then kMaxOneShotRanks
// pushed words (engine::oneShotPushed).
//
// The rank's private memory, one device allocation:
//
//   OneShotBoard | OneShotState
#include "exec/device_one_shot.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "algo/tree.h"
#include "base/align.h"
#include "exec/board_image.h"
#include "exec/region_exchange.h"
#include "kernels/engine/sync.h"

namespace braid::exec {
namespace {

namespace engine = kernels::engine;
using transport::cuda_ipc::OwnedRegion;

constexpr uint64_t kRecordMagic = 0x314f534449415242ull;  // "BRAIDSO1"
constexpr uint32_t kRecordVersion = 2;                    // 2: the push model's areas
constexpr const char* kCellsSuffix = "-cells";

std::string recordName(uint64_t nonce, int rank) {
  char name[64];
  snprintf(name, sizeof(name), "/braid-%016" PRIx64 "-gpuboard-%d", nonce, rank);
  return name;
}

}  // namespace

std::vector<int16_t> inOrderFoldProgram(int nranks) {
  return algo::foldInOrder(
      nranks, [](int rank) { return std::vector<int16_t>{static_cast<int16_t>(rank)}; },
      [](std::vector<int16_t> a, const std::vector<int16_t>& b) {
        a.insert(a.end(), b.begin(), b.end());
        a.push_back(engine::kFoldCombine);
        return a;
      });
}

Result<std::unique_ptr<DeviceOneShot>> DeviceOneShot::create(
    gpu::Runtime& runtime, uint64_t nonce, int rank, int nranks, size_t maxBytes,
    transport::cuda_ipc::FifoPlacement placement, const std::function<Status()>& barrier,
    gpu::Stream stream, uint32_t flagPeriod) {
  if (nranks < 1 || nranks > static_cast<int>(engine::kMaxOneShotRanks) || rank < 0 ||
      rank >= nranks) {
    return invalidArgument("a GPU one-shot board serves 1.." +
                           std::to_string(engine::kMaxOneShotRanks) + " ranks, not rank " +
                           std::to_string(rank) + " of " + std::to_string(nranks));
  }
  if (maxBytes == 0 || flagPeriod < 2) {
    return invalidArgument(
        "a GPU one-shot board needs maxBytes > 0 and a flag period of 2 or more");
  }
  const std::vector<int16_t> fold = inOrderFoldProgram(nranks);
  engine::OneShotBoard b{};
  b.maxBytes = alignUp(maxBytes, 16);
  b.areaLines = engine::oneShotAreaLines(b.maxBytes);
  b.nranks = static_cast<uint32_t>(nranks);
  b.rank = static_cast<uint32_t>(rank);
  b.flagPeriod = flagPeriod;
  b.nfold = static_cast<uint32_t>(fold.size());
  std::copy(fold.begin(), fold.end(), b.fold);

  std::unique_ptr<DeviceOneShot> out(new DeviceOneShot(runtime, maxBytes, stream));
  out->rank_ = rank;
  out->nranks_ = nranks;
  const size_t boardBytes = engine::oneShotBoardBytes(b.maxBytes, b.nranks);
  out->pushedAt_ = boardBytes - engine::kMaxOneShotRanks * sizeof(uint64_t);
  const std::vector<unsigned char> zeros(boardBytes, 0);
  Result<std::unique_ptr<OwnedRegion>> own = OwnedRegion::create(
      runtime, placement, recordName(nonce, rank) + kCellsSuffix, zeros, stream);
  if (!own.ok()) return own.status().withContext("GPU one-shot board");
  out->own_ = std::move(own).value();
  BRAID_ASSIGN_OR_RETURN(
      out->peers_,
      exchangeRegions(
          runtime, *out->own_, rank, nranks, [nonce](int r) { return recordName(nonce, r); },
          kCellsSuffix, RegionKind{kRecordMagic, kRecordVersion, maxBytes, "GPU one-shot board"},
          barrier));
  for (int r = 0; r < nranks; ++r) {
    b.boards[r] = static_cast<uint64_t*>(r == rank ? out->own_->data() : out->peers_[r]->data());
  }

  BRAID_ASSIGN_OR_RETURN(out->private_, placeBoard<engine::OneShotState>(runtime, b, stream));
  out->board_ = static_cast<const engine::OneShotBoard*>(out->private_);
  out->state_ = b.state;
  return out;
}

// What destroy waits for. This rank's board is stored into by its peers and
// read by this rank alone. In a call that succeeds, this rank has seen every
// line and size word each peer stored for it, and with them every zero the
// peer stored before (its fence), so those stores are done; but a call that
// ends early (a timeout, another count) leaves a peer's stores of that call
// in flight, and the pushed words themselves, stored at the end of each
// call, may land after this rank's last read. Each peer stores its word
// after a barrier and a system fence behind its every store into this board
// for that call, so once word q reaches began (the calls this rank began:
// every call q stores here while both follow one sequence of calls), no
// store of q's is left to land. A peer that is dead, or that goes on to
// calls this rank never makes (an aborted communicator), is what the
// deadline and the abort word are for.
bool DeviceOneShot::waitForWriters(uint64_t timeoutMs, const uint32_t* abortWord) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  const char* pushed = static_cast<const char*>(own_->data()) + pushedAt_;
  for (;;) {
    engine::OneShotState s{};
    std::vector<uint64_t> read(engine::kMaxOneShotRanks);
    if (!runtime_.copy(&s, state_, sizeof s, stream_).ok() ||
        !runtime_.copy(read.data(), pushed, read.size() * sizeof(uint64_t), stream_).ok() ||
        !runtime_.streamSynchronize(stream_).ok()) {
      return false;
    }
    bool done = true;
    for (int r = 0; r < nranks_; ++r) done = done && (r == rank_ || read[r] >= s.began);
    if (done) return true;
    if (abortWord != nullptr && engine::loadAcquire(abortWord) != 0) return false;
    if (timeoutMs != 0 && std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

DeviceOneShot::~DeviceOneShot() {
  if (private_ != nullptr) (void)runtime_.deviceFree(private_);
}

}  // namespace braid::exec
