// The figures GPU communicators choose their protocol and algorithm by,
// until scripts/gpu-check has measured braid's own on a GPU.
//
// PROVISIONAL, every one: no GPU has run braid yet. Their shape follows the
// latencies NVIDIA's NCCL documents in its tuning tables for one NVLink
// hop (LL about 0.6 us, Simple about 3.4 us, since Simple's hand-off is a
// system-scope fence and a counter the peer polls, LL's one flagged store)
// and LL's halved bandwidth (half of every cell is flag). What they decide
// is where LL gives way to Simple: with these, an all_reduce of 2 ranks
// crosses over near 190 KB (docs/tuning.md). The emulated GPU uses them
// too, so CI runs both protocols and the one-shot on GPU communicators.
#include "tune/cost_model.h"

namespace braid::tune {

Model Model::gpuDefaults() {
  constexpr int kSimple = static_cast<int>(algo::Protocol::kSimple);
  constexpr int kLl = static_cast<int>(algo::Protocol::kLl);
  Model m;
  m.callUs = 5;                       // PROVISIONAL: a kernel launch on the user's stream
  m.intraHost[kSimple] = {3.4, 100};  // PROVISIONAL
  m.intraHost[kLl] = {0.6, 25};       // PROVISIONAL
  m.channelGBs[kSimple] = 20;         // PROVISIONAL: one block's copy rate
  m.channelGBs[kLl] = 5;              // PROVISIONAL
  // The one-shot pushes 16-byte lines of flagged cells whatever the protocol
  // (engine/one_shot.h): each rank stores its input, at twice its size, into
  // every peer's board, then polls every peer's area of its own board in one
  // pass. So a hand-off of LL's latency, a small cost per peer (one more area
  // in the same pass, not a wait of its own), and each peer's copy pushed at
  // half the block's store rate. Simple's entry stays above LL's, so that the
  // one-shot is chosen and named as the LL it runs. With these it wins every
  // all_reduce it can take (up to 64 KiB) at 2 and 4 ranks.
  m.oneShot[kSimple] = {3.4, 0.1, 50};  // PROVISIONAL
  m.oneShot[kLl] = {0.6, 0.1, 25};      // PROVISIONAL
  // Between hosts: NCCL's tuning table's network hop for a ring (LL 2.7 us, Simple 9.6 us), and
  // LL at a quarter of Simple's bandwidth as NCCL takes it across nodes. The bandwidth is a
  // placeholder, one 100 Gb/s NIC, until the communicator fits it to the NICs its rings were
  // planned on (Model::fitNetwork, from the topology).
  m.interHost[kSimple] = {9.6, 12.5};  // PROVISIONAL
  m.interHost[kLl] = {2.7, 12.5 / 4};  // PROVISIONAL
  for (int p : {kSimple, kLl}) {
    m.oneShotShared[p] = m.oneShot[p];
    m.intraHostShared[p] = m.intraHost[p];  // a GPU's blocks do not share the host's CPUs
  }
  m.hostCores = 0;
  m.channelsParallel = true;  // a block per channel
  return m;
}

}  // namespace braid::tune
