// The copy-and-compare check of peer access at a GPU communicator's creation. A GPU that says it
// reaches another's memory (cudaDeviceCanAccessPeer) may still corrupt what it writes there: on
// virtual machines whose IOMMU or PCIe switches do not pass peer traffic through, peer writes
// arrive as garbage or not at all, and a collective over them returns wrong numbers or hangs.
// So before any FIFO is placed, every rank writes a known pattern into the memory of each rank
// of its host on another GPU, with its own GPU's copy engine over the same path a kernel's
// stores take (the direction data flows), and each rank compares what arrived.
#pragma once

#include <vector>

#include "braid/status.h"
#include "comm/members.h"
#include "gpu/runtime.h"

namespace braid::comm {

/// Bytes each rank writes into each probed peer's memory.
inline constexpr size_t kPeerProbeBytes = 4096;

/// Runs the check on every rank of the communicator (collective: every rank calls it at the
/// same point, or none does, which each finds alike from `members`), with this rank's GPU
/// current. `reaches` says, by rank, whether that rank's GPU reaches this one's memory by peer
/// access, as the runtime answered: where it does and its write arrived corrupt, the entry is
/// set false and a warning names the two GPUs (once per process and pair).
Status checkPeerWrites(gpu::Runtime& runtime, const Members& members, gpu::Stream stream,
                       std::vector<bool>& reaches);

}  // namespace braid::comm
