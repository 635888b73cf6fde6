// Ring schedules: one generator per collective, each in its own file
// (ring.cc for all-reduce, ring_<collective>.cc for the others), sharing the
// pieces in ring_common.h. Counts follow NCCL: `count` is what each rank
// contributes or receives per block (recvcount of reduce-scatter, sendcount
// of all-gather); offsets in Steps are in elements of the buffer they index.
// Reduce-scatter and all-gather also take blocks of different sizes at any
// places (blockCounts / blockOffsets, braid's variable-count collectives).
#pragma once

#include <cstddef>
#include <vector>

#include "algo/schedule.h"
#include "braid/status.h"

namespace braid::algo {

/// The sizes (ScheduleSizes: a chunk is what one rank-chunk holds in one
/// round), and the ring's own options.
struct RingParams : ScheduleSizes {
  std::vector<int> order;  ///< ring order of ranks; empty means 0, 1, ..., nranks-1
  /// A ring per channel, as the topology search plans them (each channel entering and leaving
  /// a host by its own ranks and NICs): channel c follows channelOrders[c % size()]. Empty means
  /// every channel follows `order`.
  std::vector<std::vector<int>> channelOrders;
  /// Reduce-scatter and all-gather with a block of its own size per rank
  /// (braidReduceScatterV, braidAllGatherV): block b holds blockCounts[b]
  /// elements from element blockOffsets[b] of the big buffer (reduce-scatter's
  /// input, all-gather's output). Both empty means the uniform layout, block b
  /// = `count` elements at b * count; otherwise both have nranks entries,
  /// `count` is ignored, and every rank must pass the same ones.
  std::vector<size_t> blockCounts;
  std::vector<size_t> blockOffsets;
};

/// All-reduce as reduce-scatter then all-gather around the ring. Input and
/// output hold `count` elements; in place means sendbuff == recvbuff.
Result<Schedule> ringAllReduce(const RingParams& params);

/// Reduce-scatter: input holds nranks blocks of `count` elements, output
/// `count`; rank r's output is the reduction of every rank's block r. In
/// place means recvbuff == sendbuff + rank * count. With blockCounts, the
/// output holds blockCounts[rank] elements and in place means recvbuff ==
/// sendbuff + blockOffsets[rank].
Result<Schedule> ringReduceScatter(const RingParams& params);

/// All-gather: input holds `count` elements, output nranks blocks of
/// `count`; output block r is rank r's input. In place means
/// sendbuff == recvbuff + rank * count. With blockCounts, the input holds
/// blockCounts[rank] elements and in place means sendbuff == recvbuff +
/// blockOffsets[rank].
Result<Schedule> ringAllGather(const RingParams& params);

/// Broadcast of the root's input (`count` elements) to every rank's output,
/// down a chain along the ring that starts at the root. Only the root reads
/// its input. In place means sendbuff == recvbuff.
Result<Schedule> ringBroadcast(const RingParams& params, int root);

/// Reduce of every rank's input (`count` elements) into the root's output,
/// up a chain along the ring that ends at the root. Only the root writes its
/// output. In place means sendbuff == recvbuff.
Result<Schedule> ringReduce(const RingParams& params, int root);

/// The ring's schedule of `collective` (`root` for broadcast and reduce): the generator above
/// that makes it.
Result<Schedule> ringSchedule(Collective collective, const RingParams& params, int root);

}  // namespace braid::algo
