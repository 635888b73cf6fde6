// Running a collective with a symmetric kernel (kernels/engine/symmetric.h) on a GPU
// communicator: the call, its two windows, and which kernel on how many blocks become one
// engine call of the communicator's next launch. Which calls go this way is the symmetric way's
// (ways/gpu_symmetric_way.cc).
#pragma once

#include <cstdint>

#include "braid/comm.h"
#include "braid/status.h"
#include "comm/user_ops.h"
#include "kernels/engine/symmetric.h"

namespace braid::comm {

class GpuSide;

/// Which symmetric kernel runs a call, on how many blocks.
struct SymmetricPlan {
  kernels::engine::SymmetricKind kind = kernels::engine::SymmetricKind::kAllReduceOneShot;
  uint32_t blocks = 1;
};

/// The kernel of `collective` (all_reduce, all_gather or reduce_scatter); all_reduce's is the
/// two-shot where `twoShot` or the call is in place (the one-shot reads its peers' inputs while
/// it writes its own output).
kernels::engine::SymmetricKind symmetricKindFor(const CollectiveCall& call, bool twoShot);

/// Enqueues `call` on `gpu` with `plan`'s kernel: its input lies in `send`, its output in
/// `recv` (windows of this rank's, the lookup's answers), `spec` its operator. Every rank of
/// the communicator must be on this host and make the same call with the same plan.
Status runSymmetric(GpuSide& gpu, const CollectiveCall& call, const OpSpec& spec,
                    const WindowedBuffer& send, const WindowedBuffer& recv, SymmetricPlan plan,
                    int nranks, int rank);

}  // namespace braid::comm
