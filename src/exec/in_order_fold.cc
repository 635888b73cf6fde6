#include "exec/in_order_fold.h"

#include "algo/tree.h"

namespace braid::exec {

InOrderFold::InOrderFold(int nranks, size_t chunkBytes)
    : nranks_(nranks),
      chunkBytes_((chunkBytes + 7) / 8 * 8),
      values_(nranks),
      scratch_((nranks + 1) * (chunkBytes_ / sizeof(uint64_t))) {
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

InOrderFold::Value InOrderFold::combine(Value a, Value b, size_t count, const kernels::HostOp& op) {
  // The result goes into an operand's scratch buffer when either has one
  // (combine allows dst to alias either operand), so the fold takes a buffer
  // only when it joins two operands that live in slots or the input.
  char* dst = a.scratch != nullptr ? a.scratch : b.scratch != nullptr ? b.scratch : takeScratch();
  op.combine(op.args, dst, a.data, b.data, count);
  if (b.scratch != nullptr && b.scratch != dst) free_.push_back(b.scratch);
  return Value{dst, dst};
}

void InOrderFold::foldInto(char* output, size_t count, size_t bytes, const kernels::HostOp& op) {
  const Value result = algo::foldInOrder(
      nranks_, [this](int r) { return values_[r]; },
      [&](const Value& a, const Value& b) { return combine(a, b, count, op); });
  kernels::copyBytes(output, result.data, bytes);
}

}  // namespace braid::exec
