// The v-collective calls of the soak (variable_call.h).
//
// Names: n ranks; this rank r; a Layout is one buffer's blocks, block q holding counts[q]
// elements at element displs[q], `extent` elements in all. All-gather-v and reduce-scatter-v
// share one layout on every rank (the receive buffer's and the send buffer's respectively);
// all-to-all-v has a matrix sent[i][j] of the elements rank i sends rank j, rank i's send
// layout holding blocks sent[i][*] and its receive layout blocks sent[*][i].
#include "soak/variable_call.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "api/matrix_reference.h"
#include "braid_ext.h"
#include "soak/buffers.h"

namespace braid::soak {
namespace {

using matrix::mixSeed;
using matrix::Rng;

struct Layout {
  std::vector<size_t> counts;
  std::vector<size_t> displs;
  size_t extent = 0;
};

/// n block counts in [0, most], a quarter of them 0.
std::vector<size_t> drawCounts(Rng& rng, int n, size_t most) {
  std::vector<size_t> counts(n, 0);
  for (size_t& c : counts) c = rng() % 4 == 0 ? 0 : rng() % (most + 1);
  return counts;
}

/// The blocks packed in rank order as MPI programs lay them out, in reverse order, or shuffled;
/// packed tight or with gaps of up to 8 elements before each block and after the last.
Layout arrange(Rng& rng, std::vector<size_t> counts) {
  const size_t n = counts.size();
  std::vector<size_t> order(n);
  const uint64_t shape = rng() % 3;
  for (size_t i = 0; i < n; ++i) order[i] = shape == 1 ? n - 1 - i : i;
  if (shape == 2) {
    for (size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng() % (i + 1)]);
  }
  const uint64_t gaps = rng() % 2 == 0 ? 0 : 9;  // gap sizes drawn in [0, gaps)
  auto gap = [&] { return gaps == 0 ? size_t{0} : static_cast<size_t>(rng() % gaps); };
  Layout l;
  l.displs.assign(n, 0);
  size_t end = gap();
  for (size_t q : order) {
    l.displs[q] = end;
    end += counts[q] + gap();
  }
  l.counts = std::move(counts);
  l.extent = end;
  return l;
}

class VariableRun final : public CallRun {
 public:
  VariableRun(const PlannedCall& call, int rank, int nranks, const Target& target)
      : call_(call),
        rank_(rank),
        n_(nranks),
        target_(target),
        type_(matrix::typeInfo(call.type)),
        elem_(type_.bytes),
        buffers_(elem_) {
    Rng layoutRng(mixSeed(call.seed, 1));
    Rng fill(mixSeed(call.seed, 1000 + static_cast<uint64_t>(rank)));
    switch (call.coll) {
      case Collective::kAllGatherV:
        layOutAllGather(layoutRng, fill);
        break;
      case Collective::kReduceScatterV:
        layOutReduceScatter(layoutRng, fill);
        break;
      default:
        layOutAlltoAll(layoutRng, fill);
        break;
    }
  }

  ncclResult_t prepare() override {
    if (target_.device != nullptr) {
      const ncclResult_t r = buffers_.toDevice(target_.device, target_.stream);
      if (r != ncclSuccess) return r;
    }
    return createOp();
  }

  ncclResult_t issue() override {
    const Layout& l = layout_;
    switch (call_.coll) {
      case Collective::kAllGatherV:
        return braidAllGatherV(buffers_.callAt(send_.first, send_.second), l.counts[rank_],
                               buffers_.callAt(recv_.first, recv_.second), l.counts.data(),
                               l.displs.data(), call_.type, target_.comm, target_.stream);
      case Collective::kReduceScatterV:
        return braidReduceScatterV(buffers_.callAt(send_.first, send_.second), l.counts.data(),
                                   l.displs.data(), buffers_.callAt(recv_.first, recv_.second),
                                   l.counts[rank_], call_.type, op_, target_.comm, target_.stream);
      default:
        return braidAlltoAllV(buffers_.callAt(send_.first, send_.second), l.counts.data(),
                              l.displs.data(), buffers_.callAt(recv_.first, recv_.second),
                              recvLayout_.counts.data(), recvLayout_.displs.data(), call_.type,
                              target_.comm, target_.stream);
    }
  }

  ncclResult_t finish() override {
    const ncclResult_t back = target_.device != nullptr ? buffers_.fromDevice() : ncclSuccess;
    const ncclResult_t destroyed =
        madeOp_ ? ncclRedOpDestroy(op_, target_.comm) : ncclResult_t{ncclSuccess};
    madeOp_ = false;
    return back != ncclSuccess ? back : destroyed;
  }

  Verdict check() override {
    return buffers_.check(type_, [this](size_t i, uint64_t got, std::string* why) {
      const unsigned char* elems[matrix::kMaxRanks];
      for (int q = 0; q < n_; ++q) elems[q] = &reduceInputs_[q][i * elem_];
      const matrix::Expected e = (*reducer_)(elems);
      if (matches(type_, e, got)) return true;
      *why = "reduced element " + std::to_string(i) + " of block " + std::to_string(rank_) + ": " +
             describeMismatch(type_, e, got);
      return false;
    });
  }

  size_t bytes() const override { return buffers_.largest(); }
  void corrupt(uint64_t where) override { buffers_.corrupt(where); }

 private:
  // Every rank q's block for all-gather-v: random bytes, since the values do not matter.
  std::vector<unsigned char> blockOf(int q, size_t elems) const {
    std::vector<unsigned char> bytes(elems * elem_);
    Rng rng(mixSeed(call_.seed, 100 + static_cast<uint64_t>(q)));
    matrix::randomBytes(rng, bytes.data(), bytes.size());
    return bytes;
  }

  void layOutAllGather(Rng& layoutRng, Rng& fill) {
    layout_ = arrange(layoutRng, drawCounts(layoutRng, n_, call_.count));
    const Layout& l = layout_;
    const std::vector<unsigned char> mine = blockOf(rank_, l.counts[rank_]);
    if (call_.inPlace) {
      const int g = buffers_.add(l.extent, fill);
      send_ = {g, l.displs[rank_]};
      recv_ = {g, 0};
    } else {
      send_ = {buffers_.add(l.counts[rank_], fill), 0};
      recv_ = {buffers_.add(l.extent, fill), 0};
    }
    if (!mine.empty()) memcpy(buffers_.at(send_.first, send_.second), mine.data(), mine.size());
    buffers_.freeze();
    for (int q = 0; q < n_; ++q) {
      const std::vector<unsigned char> block = blockOf(q, l.counts[q]);
      if (!block.empty())
        memcpy(buffers_.expectAt(recv_.first, l.displs[q]), block.data(), block.size());
    }
  }

  // Rank q's block b for reduce-scatter-v: elements drawn for the operator (matrix_reference.h).
  void reduceBlock(int q, int b, unsigned char* out) const {
    Rng rng(mixSeed(mixSeed(call_.seed, 300 + static_cast<uint64_t>(q)), b));
    for (size_t i = 0; i < layout_.counts[b]; ++i) {
      type_.store(out + i * elem_, matrix::randomElement(type_, call_.op, n_, i, rng));
    }
  }

  void layOutReduceScatter(Rng& layoutRng, Rng& fill) {
    layout_ = arrange(layoutRng, drawCounts(layoutRng, n_, call_.count));
    const Layout& l = layout_;
    scalars_.resize(n_);
    for (int q = 0; q < n_; ++q) {
      Rng rng(mixSeed(call_.seed, 200 + static_cast<uint64_t>(q)));
      scalars_[q] = matrix::randomScalar(type_, rng);
    }
    const int g = buffers_.add(l.extent, fill);
    for (int b = 0; b < n_; ++b) reduceBlock(rank_, b, buffers_.at(g, l.displs[b]));
    send_ = {g, 0};
    recv_ = call_.inPlace ? std::pair<int, size_t>{g, l.displs[rank_]}
                          : std::pair<int, size_t>{buffers_.add(l.counts[rank_], fill), 0};
    buffers_.freeze();
    buffers_.expectReduced(recv_.first, recv_.second, l.counts[rank_], 0);
    // What every rank contributes to this rank's block, for the reference.
    reduceInputs_.resize(n_);
    for (int q = 0; q < n_; ++q) {
      reduceInputs_[q].resize(l.counts[rank_] * elem_);
      reduceBlock(q, rank_, reduceInputs_[q].data());
    }
    reducer_ = std::make_unique<matrix::Reducer>(type_, call_.op, n_, scalars_.data());
  }

  void layOutAlltoAll(Rng& layoutRng, Rng& fill) {
    std::vector<std::vector<size_t>> sent(n_);
    for (int i = 0; i < n_; ++i) sent[i] = drawCounts(layoutRng, n_, call_.count);
    auto sendLayout = [&](int i) {
      Rng rng(mixSeed(call_.seed, 400 + static_cast<uint64_t>(i)));
      return arrange(rng, sent[i]);
    };
    // Rank i's whole send buffer, gaps included: random bytes.
    auto sendBytes = [&](int i, size_t extent) {
      std::vector<unsigned char> bytes(extent * elem_);
      Rng rng(mixSeed(call_.seed, 600 + static_cast<uint64_t>(i)));
      matrix::randomBytes(rng, bytes.data(), bytes.size());
      return bytes;
    };
    std::vector<size_t> received(n_);
    for (int k = 0; k < n_; ++k) received[k] = sent[k][rank_];
    Rng recvRng(mixSeed(call_.seed, 500 + static_cast<uint64_t>(rank_)));
    layout_ = sendLayout(rank_);
    recvLayout_ = arrange(recvRng, received);
    send_ = {buffers_.add(layout_.extent, fill), 0};
    const std::vector<unsigned char> mine = sendBytes(rank_, layout_.extent);
    if (!mine.empty()) memcpy(buffers_.at(send_.first, 0), mine.data(), mine.size());
    recv_ = {buffers_.add(recvLayout_.extent, fill), 0};
    buffers_.freeze();
    for (int k = 0; k < n_; ++k) {
      if (received[k] == 0) continue;
      const Layout from = sendLayout(k);
      const std::vector<unsigned char> bytes = sendBytes(k, from.extent);
      memcpy(buffers_.expectAt(recv_.first, recvLayout_.displs[k]),
             &bytes[from.displs[rank_] * elem_], received[k] * elem_);
    }
  }

  ncclResult_t createOp() {
    if (!collectiveReduces(call_.coll)) return ncclSuccess;
    if (!matrix::isPreMul(call_.op)) {
      op_ = matrix::builtinOp(call_.op);
      return ncclSuccess;
    }
    scalar_ = scalars_[rank_];
    void* scalar = &scalar_;
    const bool onDevice = call_.op == matrix::Op::kPreMulDevice;
    // A device scalar lives in device memory on a GPU communicator, as NCCL requires.
    if (onDevice && target_.device != nullptr) {
      ncclResult_t r =
          target_.device->copy(buffers_.deviceScalar(), &scalar_, sizeof scalar_, target_.stream);
      if (r == ncclSuccess) r = target_.device->streamSynchronize(target_.stream);
      if (r != ncclSuccess) return r;
      scalar = buffers_.deviceScalar();
    }
    const ncclResult_t r = ncclRedOpCreatePreMulSum(
        &op_, scalar, call_.type, onDevice ? ncclScalarDevice : ncclScalarHostImmediate,
        target_.comm);
    madeOp_ = r == ncclSuccess;
    return r;
  }

  PlannedCall call_;
  int rank_;
  int n_;
  Target target_;
  const matrix::TypeInfo& type_;
  size_t elem_;
  Buffers buffers_;
  Layout layout_;      ///< all-gather-v: receive; reduce-scatter-v and all-to-all-v: send
  Layout recvLayout_;  ///< all-to-all-v only
  std::pair<int, size_t> send_{0, 0};  ///< region and element of the send buffer
  std::pair<int, size_t> recv_{0, 0};
  std::vector<uint64_t> scalars_;
  uint64_t scalar_ = 0;
  ncclRedOp_t op_ = ncclSum;
  bool madeOp_ = false;
  std::vector<std::vector<unsigned char>> reduceInputs_;  ///< [q]: rank q's block rank_
  std::unique_ptr<matrix::Reducer> reducer_;
};

}  // namespace

std::unique_ptr<CallRun> makeVariableRun(const PlannedCall& call, int rank, int nranks,
                                         const Target& target) {
  return std::make_unique<VariableRun>(call, rank, nranks, target);
}

}  // namespace braid::soak
