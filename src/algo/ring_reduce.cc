// Ring reduce: a chain along the ring that ends at the root.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). A rank's
// distance d = p - rootPos (mod N) is its place in the chain: d = 1, the rank
// just after the root, starts it, and partial sums grow along the ring until
// they reach the root (d = 0), which only receives. Each channel owns a
// contiguous part [begin, end) of the buffer and cuts it into chunks of at
// most chunkElems (planSlices in ring_common.h); every rank does one step per
// chunk:
//   d = 1          send             input, to next
//   1 < d < N      recvReduceSend   op(prev, input), to next
//   d = 0          recvReduceCopy   op(prev, input) -> output
// Slices are reduced and forwarded as they arrive, so the chain streams; it
// ends at a rank that never sends, so it cannot deadlock.
//
// Only the root writes its output, so other ranks' receive buffers are left
// alone. In place (sendbuff == recvbuff) the root reads each input element
// in the same step that writes it, before writing it; the other ranks write
// nothing. So nothing is read after being overwritten.
#include "algo/ring.h"
#include "algo/ring_common.h"

namespace braid::algo {
namespace {

StepOp reduceStep(int n, int d) {
  return n == 1   ? StepOp::kCopy
         : d == 0 ? StepOp::kRecvReduceCopy
         : d == 1 ? StepOp::kSend
                  : StepOp::kRecvReduceSend;
}

}  // namespace

Result<Schedule> ringReduce(const RingParams& params, int root) {
  BRAID_TRY(checkRingParams(params, "reduce"));
  BRAID_TRY(checkRoot(params, root, "reduce"));
  Schedule s = newRingSchedule(params, Collective::kReduce, root);
  emitChain(s, params, root, reduceStep);
  return s;
}

}  // namespace braid::algo
