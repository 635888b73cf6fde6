#include "exec/in_order_fold.h"

#include "algo/tree.h"

namespace braid::exec {

InOrderFold::InOrderFold(int nranks, size_t chunkBytes)
    : nranks_(nranks),
      chunkBytes_((chunkBytes + 7) / 8 * 8),
      values_(2 * nranks - 1),
      scratch_((nranks + 1) * (chunkBytes_ / sizeof(uint64_t))) {
  // The tree's shape depends only on nranks: walk it once, as indices, and keep the joins, so
  // a chunk's fold is a loop over them instead of a walk of the tree (a tiny call is one chunk,
  // and the walk was a twentieth of its time).
  int next = nranks;
  algo::foldInOrder(
      nranks, [](int r) { return r; },
      [&](int a, int b) {
        joins_.push_back(Join{a, b});
        return next++;
      });
  startChunk();
}

void InOrderFold::startChunk() {
  free_.clear();
  char* base = reinterpret_cast<char*>(scratch_.data());
  for (int i = 0; i <= nranks_; ++i) free_.push_back(base + i * chunkBytes_);
}

char* InOrderFold::takeScratch() {
  // nranks + 1 buffers always suffice: a chunk has nranks operands and every
  // join frees as many scratch buffers as it takes.
  char* buffer = free_.back();
  free_.pop_back();
  return buffer;
}

void InOrderFold::setOperand(int rank, const char* data) { values_[rank] = Value{data, nullptr}; }

void InOrderFold::setScratchOperand(int rank, char* scratch) {
  values_[rank] = Value{scratch, scratch};
}

InOrderFold::Value InOrderFold::combine(Value a, Value b, size_t count, const kernels::HostOp& op,
                                        char* dst) {
  // The result goes into `dst` when given (the last join writes the output itself), else into
  // an operand's scratch buffer when either has one (combine allows dst to alias either
  // operand), so the fold takes a buffer only when it joins two operands that live in slots or
  // the input.
  if (dst == nullptr) {
    dst = a.scratch != nullptr ? a.scratch : b.scratch != nullptr ? b.scratch : takeScratch();
  }
  op.combine(op.args, dst, a.data, b.data, count);
  if (b.scratch != nullptr && b.scratch != dst) free_.push_back(b.scratch);
  return Value{dst, dst};
}

void InOrderFold::foldInto(char* output, size_t count, size_t bytes, const kernels::HostOp& op) {
  if (joins_.empty()) {
    kernels::copyBytes(output, values_[0].data, bytes);
    return;
  }
  for (size_t j = 0; j < joins_.size(); ++j) {
    const Join& join = joins_[j];
    const bool last = j + 1 == joins_.size();
    values_[nranks_ + j] =
        combine(values_[join.a], values_[join.b], count, op, last ? output : nullptr);
  }
}

}  // namespace braid::exec
