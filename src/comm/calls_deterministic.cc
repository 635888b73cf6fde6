// Calls' all-reduce on the ring in deterministic mode (BRAID_DETERMINISTIC=1; calls.h).
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

#include "comm/calls.h"
#include "exec/in_order_fold.h"

namespace braid::comm {
namespace {

// Bytes folded at once: the partial results of one chunk stay in the
// L1/L2 caches.
constexpr size_t kFoldChunkBytes = 4096;

}  // namespace

Status Calls::deterministicRingAllReduce(const CollCall& call, const kernels::HostOp& op,
                                         algo::Protocol protocol) {
  const int rank = members_.rank;
  const int nranks = members_.nranks;
  const size_t elem = dataTypeSize(call.type);
  const size_t n = static_cast<size_t>(nranks);
  const size_t block = (call.count + n - 1) / n;
  std::vector<size_t> counts(n);
  std::vector<size_t> offsets(n);
  for (size_t b = 0; b < n; ++b) {
    offsets[b] = std::min(call.count, b * block);
    counts[b] = std::min(call.count, offsets[b] + block) - offsets[b];
  }
  const size_t mine = counts[rank];
  const auto* input = static_cast<const unsigned char*>(call.input);
  auto* output = static_cast<unsigned char*>(call.output);

  // 1. Every peer's contribution to this rank's block. A pre (premulsum) is the sender's: its
  // scalar is the sending rank's, so the blocks leave loaded and the owner folds them as they
  // come; only its own block is loaded below.
  std::vector<unsigned char> loaded;
  if (op.load != nullptr) {
    loaded.resize(call.count * elem);
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == rank || counts[peer] == 0) continue;
      op.load(op.args, loaded.data() + offsets[peer] * elem, input + offsets[peer] * elem,
              counts[peer]);
    }
  }
  const unsigned char* sent = op.load != nullptr ? loaded.data() : input;
  scratch_.resize(std::max(scratch_.size(), n * mine * elem));
  std::vector<exec::P2pTask> tasks;
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    exec::P2pTask send;
    send.send = true;
    send.peer = peer;
    send.sendBuffer = sent + offsets[peer] * elem;
    send.bytes = counts[peer] * elem;
    tasks.push_back(send);
    exec::P2pTask recv;
    recv.peer = peer;
    recv.recvBuffer = scratch_.data() + peer * mine * elem;
    recv.bytes = mine * elem;
    tasks.push_back(recv);
  }
  BRAID_TRY(links_.runP2p(tasks, recorder_.flight->hostWaits()));

  // 2. The canonical fold, a chunk at a time: operands are read where they
  // are, except this rank's own when the operator has a pre, which loads it
  // first (the peers' came loaded).
  const size_t chunkElems = std::max<size_t>(1, kFoldChunkBytes / elem);
  exec::InOrderFold fold(nranks, chunkElems * elem);
  for (size_t at = 0; at < mine; at += chunkElems) {
    const size_t len = std::min(chunkElems, mine - at);
    fold.startChunk();
    for (int r = 0; r < nranks; ++r) {
      const unsigned char* from = r == rank ? input + (offsets[rank] + at) * elem
                                            : scratch_.data() + (r * mine + at) * elem;
      if (op.load != nullptr && r == rank) {
        char* loaded = fold.takeScratch();
        op.load(op.args, loaded, from, len);
        fold.setScratchOperand(r, loaded);
      } else {
        fold.setOperand(r, reinterpret_cast<const char*>(from));
      }
    }
    fold.foldInto(reinterpret_cast<char*>(output + (offsets[rank] + at) * elem), len, len * elem,
                  op);
  }

  // 3. Everyone's block to everyone, in place on the output.
  CollCall gather{Collective::kAllGather,
                  output + offsets[rank] * elem,
                  output,
                  mine,
                  call.type,
                  RedOp::kSum,
                  -1,
                  counts.data(),
                  offsets.data()};
  tune::Choice ring;
  ring.algorithm = algo::Algorithm::kRing;
  ring.protocol = protocol;
  BRAID_ASSIGN_OR_RETURN(const CachedSchedule* cached, scheduleFor(gather, ring));
  exec::HostCall hostCall{gather.input, gather.output, elem, kernels::HostOp{}};
  return exec::runOnHost(cached->program, hostCall, cached->connections, links_.waitContext());
}

}  // namespace braid::comm
