// All-reduce on the ring in deterministic mode (BRAID_DETERMINISTIC=1): a way of its own (way.h).
//
// A ring reduces block b in ring order starting after rank b, so the order
// in which an element's contributions meet depends on which block it falls
// in, and so on the count, the channels and the chunk size. Deterministic
// mode fixes one order per element for every algorithm: the in-order
// binary tree's (algo::foldInOrder). The tree follows it as it reduces; the
// one-shot folds in it; and the ring becomes "owner computes":
//
//   1. every rank sends block b of its input, as it is, to rank b and
//      receives its own block from every peer (a point-to-point batch);
//   2. each rank folds its block from the N inputs in the canonical order;
//   3. the reduced blocks go round the ring as an all-gather, in place.
//
// It moves as many bytes as the ring's reduce-scatter (each rank sends and
// receives N-1 blocks), but as N-1 separate messages instead of a pipeline,
// and keeps N-1 received blocks in scratch; docs/tuning.md has its measured
// cost.
#include <algorithm>
#include <vector>

#include "comm/ways/ways.h"
#include "exec/host_executor.h"
#include "exec/in_order_fold.h"

namespace braid::comm {
namespace {

// Bytes folded at once: the partial results of one chunk stay in the
// L1/L2 caches.
constexpr size_t kFoldChunkBytes = 4096;

/// The ring's blocks of a call of `count` elements: rank b owns block b.
struct Blocks {
  std::vector<size_t> counts;
  std::vector<size_t> offsets;

  Blocks(size_t count, int nranks) : counts(nranks), offsets(nranks) {
    const size_t n = static_cast<size_t>(nranks);
    const size_t block = (count + n - 1) / n;
    for (size_t b = 0; b < n; ++b) {
      offsets[b] = std::min(count, b * block);
      counts[b] = std::min(count, offsets[b] + block) - offsets[b];
    }
  }
};

class DeterministicRingWay : public Way {
 public:
  explicit DeterministicRingWay(const WayParts& parts) : parts_(parts) {}

  Outcome run(WayCall& wc) override {
    const tune::Choice& choice = *wc.choice;
    if (!parts_.config.deterministic || choice.algorithm != algo::Algorithm::kRing ||
        wc.call.collective != Collective::kAllReduce || parts_.members.nranks == 1) {
      return Outcome::declined();
    }
    wc.record.plan(choice, nullptr);
    return Outcome::ranIt(allReduce(wc.call, wc.hostOp, choice.protocol), true);
  }

 private:
  Status allReduce(const CollectiveCall& call, const kernels::HostOp& op, algo::Protocol protocol) {
    const Blocks blocks(call.count, parts_.members.nranks);
    const size_t mine = blocks.counts[parts_.members.rank];
    unsigned char* received =
        parts_.scratch.take(blocks.counts.size() * mine * dataTypeSize(call.type));
    BRAID_TRY(exchange(call, op, blocks, received));
    fold(call, op, blocks, received);
    return gather(call, blocks, protocol);
  }

  /// 1. Every peer's contribution to this rank's block, into `received` (a block per rank). A
  /// pre (premulsum) is the sender's: its scalar is the sending rank's, so the blocks leave
  /// loaded and the owner folds them as they come; only its own block is loaded in fold().
  Status exchange(const CollectiveCall& call, const kernels::HostOp& op, const Blocks& blocks,
                  unsigned char* received) {
    const int rank = parts_.members.rank;
    const int nranks = parts_.members.nranks;
    const size_t elem = dataTypeSize(call.type);
    const size_t mine = blocks.counts[rank];
    const auto* input = static_cast<const unsigned char*>(call.input);
    std::vector<unsigned char> loaded;
    if (op.load != nullptr) {
      loaded.resize(call.count * elem);
      for (int peer = 0; peer < nranks; ++peer) {
        if (peer == rank || blocks.counts[peer] == 0) continue;
        op.load(op.args, loaded.data() + blocks.offsets[peer] * elem,
                input + blocks.offsets[peer] * elem, blocks.counts[peer]);
      }
    }
    const unsigned char* sent = op.load != nullptr ? loaded.data() : input;
    std::vector<exec::P2pTask> tasks;
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == rank) continue;
      exec::P2pTask send;
      send.send = true;
      send.peer = peer;
      send.sendBuffer = sent + blocks.offsets[peer] * elem;
      send.bytes = blocks.counts[peer] * elem;
      tasks.push_back(send);
      exec::P2pTask recv;
      recv.peer = peer;
      recv.recvBuffer = received + peer * mine * elem;
      recv.bytes = mine * elem;
      tasks.push_back(recv);
    }
    return parts_.links.runP2p(tasks, parts_.recorder.hostWaits());
  }

  /// 2. The canonical fold, a chunk at a time, into this rank's block of the output: operands
  /// are read where they are, except this rank's own when the operator has a pre, which loads
  /// it first (the peers' came loaded).
  void fold(const CollectiveCall& call, const kernels::HostOp& op, const Blocks& blocks,
            const unsigned char* received) {
    const int rank = parts_.members.rank;
    const int nranks = parts_.members.nranks;
    const size_t elem = dataTypeSize(call.type);
    const size_t mine = blocks.counts[rank];
    const auto* input = static_cast<const unsigned char*>(call.input);
    auto* output = static_cast<unsigned char*>(call.output);
    const size_t chunkElems = std::max<size_t>(1, kFoldChunkBytes / elem);
    exec::InOrderFold fold(nranks, chunkElems * elem);
    for (size_t at = 0; at < mine; at += chunkElems) {
      const size_t len = std::min(chunkElems, mine - at);
      fold.startChunk();
      for (int r = 0; r < nranks; ++r) {
        const unsigned char* from = r == rank ? input + (blocks.offsets[rank] + at) * elem
                                              : received + (r * mine + at) * elem;
        if (op.load != nullptr && r == rank) {
          char* loaded = fold.takeScratch();
          op.load(op.args, loaded, from, len);
          fold.setScratchOperand(r, loaded);
        } else {
          fold.setOperand(r, reinterpret_cast<const char*>(from));
        }
      }
      fold.foldInto(reinterpret_cast<char*>(output + (blocks.offsets[rank] + at) * elem), len,
                    len * elem, op);
    }
  }

  /// 3. Everyone's block to everyone, in place on the output: the ring's all_gather of blocks.
  Status gather(const CollectiveCall& call, const Blocks& blocks, algo::Protocol protocol) {
    const int rank = parts_.members.rank;
    const size_t elem = dataTypeSize(call.type);
    auto* output = static_cast<unsigned char*>(call.output);
    CollectiveCall all{Collective::kAllGather,
                       output + blocks.offsets[rank] * elem,
                       output,
                       blocks.counts[rank],
                       call.type,
                       RedOp::kSum,
                       -1,
                       blocks.counts.data(),
                       blocks.offsets.data()};
    tune::Choice ring;
    ring.algorithm = algo::Algorithm::kRing;
    ring.protocol = protocol;
    BRAID_ASSIGN_OR_RETURN(const CachedSchedule* cached, parts_.schedules.get(all, ring));
    exec::HostCall hostCall{all.input, all.output, elem, kernels::HostOp{}};
    return exec::runOnHost(cached->program, hostCall, cached->connections,
                           parts_.links.waitContext());
  }

  WayParts parts_;
};

}  // namespace

std::unique_ptr<Way> makeDeterministicRingWay(const WayParts& parts) {
  return std::make_unique<DeterministicRingWay>(parts);
}

}  // namespace braid::comm
