// Ring broadcast: a pipeline along the ring that starts at the root.
//
// Terms. The N ranks sit on a ring in `order`; a rank at ring position p
// receives from position p-1 ("prev") and sends to p+1 ("next"). A rank's
// distance d = p - rootPos (mod N) is its place in the chain: d = 0 is the
// root, d = N-1 the rank just before it, which only receives. Each channel
// owns a contiguous part [begin, end) of the buffer and cuts it into chunks
// of at most chunkElems (planSlices in ring_common.h); every rank does one
// step per chunk:
//   d = 0          copySend       input -> output, and to next
//   0 < d < N-1    recvCopySend   prev -> output, and to next
//   d = N-1        recv           prev -> output
// The executor moves each step in slices and a slice is forwarded as soon as
// it arrives, so the chain streams: the last rank has the first slice after
// N-1 hops, not after N-1 whole messages. The chain has an end that never
// sends, so it cannot deadlock whatever the message size.
//
// Only the root reads its input, so other ranks' send buffers may hold
// anything. In place (sendbuff == recvbuff) the root's copy is a no-op and
// other ranks never read input, so nothing is read after being overwritten.
#include "algo/ring.h"
#include "algo/ring_common.h"

namespace braid::algo {
namespace {

StepOp broadcastStep(int n, int d) {
  return n == 1       ? StepOp::kCopy
         : d == 0     ? StepOp::kCopySend
         : d == n - 1 ? StepOp::kRecv
                      : StepOp::kRecvCopySend;
}

}  // namespace

Result<Schedule> ringBroadcast(const RingParams& params, int root) {
  BRAID_TRY(checkRingParams(params, "broadcast"));
  BRAID_TRY(checkRoot(params, root, "broadcast"));
  Schedule s = newRingSchedule(params, Collective::kBroadcast, root);
  emitChain(s, params, root, broadcastStep);
  return s;
}

}  // namespace braid::algo
