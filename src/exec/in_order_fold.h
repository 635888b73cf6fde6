// The reduction of every rank's value of one chunk in the in-order binary
// tree's order (algo::foldInOrder), on host buffers: what the one-shot
// all-reduce and the deterministic ring compute once they hold all N
// operands.
//
// Operands either live where the fold may only read them (a peer's slot,
// the caller's input) or in scratch buffers the fold owns; a join writes
// into an operand's scratch buffer when it has one and frees the other's, so
// a chunk needs at most nranks + 1 buffers and no operand is copied only to
// be combined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/host_reduce.h"

namespace braid::exec {

class InOrderFold {
 public:
  /// For `nranks` operands of at most `chunkBytes` each.
  InOrderFold(int nranks, size_t chunkBytes);

  /// Starts a chunk: forgets the operands and frees every scratch buffer.
  void startChunk();
  /// A free scratch buffer of chunkBytes, 8-byte aligned, to load an operand into.
  char* takeScratch();
  /// Rank `rank`'s operand, loaded (pre applied), where the fold may only read it.
  void setOperand(int rank, const char* data);
  /// Rank `rank`'s operand, loaded, in `scratch` from takeScratch().
  void setScratchOperand(int rank, char* scratch);
  /// output = the fold of the operands, `count` elements of `bytes` in all,
  /// joined with op.combine; the last join writes output itself, which may be
  /// an operand's own place (in place) but must not overlap another's.
  void foldInto(char* output, size_t count, size_t bytes, const kernels::HostOp& op);

 private:
  // `data` holds the operand; `scratch` is its buffer when the fold owns it.
  struct Value {
    const char* data = nullptr;
    char* scratch = nullptr;
  };
  // One join of the fold: the values at `a` and `b` (ranks' operands first, then the joins'
  // results in order) combined, a op b.
  struct Join {
    int a;
    int b;
  };
  Value combine(Value a, Value b, size_t count, const kernels::HostOp& op, char* dst);

  int nranks_;
  size_t chunkBytes_;
  std::vector<Join> joins_;        ///< foldInOrder's joins, found once: nranks - 1 of them
  std::vector<Value> values_;      ///< the operands, then each join's result
  std::vector<uint64_t> scratch_;  // nranks + 1 chunks, 8-byte aligned for any element
  std::vector<char*> free_;
};

}  // namespace braid::exec
