// Vectorized host loops for every (datatype, op) pair, and the byte copies
// the executors use between user buffers and FIFO slots.
//
// The executors look up one HostOp per collective call and run its loops on
// every slice, so the dispatch on type and operator happens once, not per
// element. An operator is applied in three places (kernels/reduce_op.h):
//
//   load    where a rank's own input enters the reduction without being
//           reduced (a ring's first send): dst = pre(in)
//   reduce  where it meets a received partial result: dst = op(recv, pre(in))
//   finish  once on the final result: buf = post(buf)
//
// and a fourth, combine, joins two values that have both been loaded
// already (a tree node adding its second child to what it holds):
// dst = op(a, b), with no pre.
//
// load and finish are nullptr when pre / post is the identity, which is the
// case for every operator except premulsum (load) and avg (finish).
#pragma once

#include <cstddef>

#include "braid/status.h"
#include "braid/types.h"
#include "kernels/reduce_op.h"

namespace braid::kernels {

/// dst = op(recv, pre(in)) for `count` elements; dst may alias recv or in.
using HostReduceFn = void (*)(const OpArgs& args, void* dst, const void* recv, const void* in,
                              size_t count);
/// dst1 = dst2 = op(recv, pre(in)): one pass for a step that both keeps and
/// forwards its result (recvReduceCopySend), instead of reduce + copy.
using HostReduce2Fn = void (*)(const OpArgs& args, void* dst1, void* dst2, const void* recv,
                               const void* in, size_t count);
/// dst = pre(in); dst may alias in.
using HostLoadFn = void (*)(const OpArgs& args, void* dst, const void* in, size_t count);
/// buf = post(buf).
using HostFinishFn = void (*)(const OpArgs& args, void* buf, size_t count);

/// An operator as the executors apply it. `in` is always this rank's own input.
struct HostOp {
  OpArgs args;
  HostReduceFn reduce = nullptr;
  HostReduce2Fn reduce2 = nullptr;
  HostLoadFn load = nullptr;      ///< nullptr when pre is the identity (use copyBytes)
  HostFinishFn finish = nullptr;  ///< nullptr when there is no post (only avg has one)
  /// dst = op(a, b) for two loaded values (a HostReduceFn whose `in` gets no pre).
  HostReduceFn combine = nullptr;

  /// dst = pre(in) for `count` elements of `elemBytes` each: the load, or a
  /// copy when pre is the identity (nothing at all when dst == in).
  void loadInput(void* dst, const void* in, size_t count, size_t elemBytes) const;
  /// buf = post(buf), when the operator has a post.
  void finishOutput(void* buf, size_t count) const {
    if (finish != nullptr) finish(args, buf, count);
  }
};

/// Which build of the loops to run. kBest picks the fastest the CPU supports
/// (decided once per process); the others exist so that tests can check
/// every build against the same reference on a machine that has them.
enum class HostIsa {
  kBest,
  kPortable,  ///< the compiler's baseline target (SSE2 on x86-64)
  kAvx2,      ///< the same loops compiled for AVX2
  kAvx2F16c,  ///< kAvx2, and the 16- and 8-bit float types converted 8 lanes at a time
  kAvx512,    ///< AVX-512 F, BW and VL: 512-bit loops; bfloat16 32 elements a step, fp8
              ///< 64 where the CPU has VBMI too (fp8 max, min, and all without VBMI:
              ///< kAvx2F16c's loops)
};

/// Every HostIsa, for the tests and benchmarks that go through them all.
inline constexpr HostIsa kHostIsas[] = {HostIsa::kBest, HostIsa::kPortable, HostIsa::kAvx2,
                                        HostIsa::kAvx2F16c, HostIsa::kAvx512};

/// Whether this CPU runs `isa` (kBest and kPortable always).
bool hostIsaSupported(HostIsa isa);

/// A short name for `isa`: "best", "portable", "avx2", ...
const char* hostIsaName(HostIsa isa);

/// The loops for (type, op) with `args`; an error for values outside the
/// enums, an avg without ranks, or an ISA this CPU lacks.
Result<HostOp> hostOp(DataType type, RedOp op, const OpArgs& args, HostIsa isa = HostIsa::kBest);

/// dst1 = dst2 = src, reading src once (recvCopySend).
void copyTwice(void* dst1, void* dst2, const void* src, size_t bytes);

/// dst = src for the executors' copies into and out of FIFO slots. A plain
/// vector loop: glibc's memcpy switches to `rep movsb` for large sizes, which
/// on some CPUs (AMD Zen among them) runs several times slower than vector
/// loads and stores when the lines come from or go to another core.
void copyBytes(void* dst, const void* src, size_t bytes);

/// dst = src with non-temporal stores (x86; copyBytes elsewhere): for a destination nobody
/// reads soon, whose lines would otherwise be read from memory before each write (a third more
/// traffic). Ends with a store fence, so a release store after it publishes the bytes.
void streamBytes(void* dst, const void* src, size_t bytes);

/// dsts[k] + offset = src for k < ndsts, as streamBytes does but without its fence: one piece
/// of a streamed reduction (src in L1) to every output in one call, for many pieces that one
/// storeFence() then ends. Nothing may read the bytes, or learn of them, before that fence.
void streamToEach(char* const* dsts, int ndsts, size_t offset, const void* src, size_t bytes);
/// Orders every store before it (non-temporal ones included) before any store after it.
void storeFence();

}  // namespace braid::kernels
