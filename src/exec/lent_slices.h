// The slices one channel of a host call lent to its send ends instead of copying them into slots
// (transport/connection.h, "Lending"): a socket end's proxy then hands the user's bytes to the
// kernel itself, and the executor's copy into the FIFO goes away.
//
// A lent slice is the user's memory (the input a step sends, or the output a step keeps and
// sends: kernels/engine/slice_ops.h, sentFromUser), so until its end gives it back:
//   - the executor must not write over it: a step about to write output that overlaps a slice
//     still out waits for it (clear), which in the ring and tree schedules never happens, as a
//     region is written again only with results that needed the bytes sent from it;
//   - the call must not return: each channel waits for all of its lends before the next
//     channel runs (returnAll), and a channel that fails cuts its ends off them (abandon),
//     at the price of their connections: the communicator is unusable after a failed call.
// An end never holds more than a FIFO's slots of lends (a lend is given back before its slot),
// so each port keeps its last kFifoSlots lends.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "braid/status.h"
#include "transport/connection.h"

namespace braid::exec {

class LentSlices {
 public:
  /// Slices smaller than this are copied: the copy costs less than waiting for them at the end.
  static constexpr size_t kMinBytes = 64 << 10;

  /// The channel's send ends by port, and the rank behind each (for errors).
  LentSlices(const std::vector<transport::SendEnd*>& ends, const std::vector<int>& peers);

  /// Whether a slice of `bytes` on `port` is worth lending and its end lends.
  bool mayLend(size_t port, size_t bytes) const;
  /// Records that `port`'s end took lend `number`: `bytes` at `data`.
  void add(size_t port, uint32_t number, const char* data, size_t bytes);
  /// Waits until no lent slice overlaps [data, data + bytes), before the executor writes there.
  Status clear(const char* data, size_t bytes, const transport::WaitContext& wait);
  /// Waits until every slice lent is given back.
  Status returnAll(const transport::WaitContext& wait);
  /// After a failure: no end reads lent memory again.
  void abandon();

 private:
  struct Lend {
    const char* begin = nullptr;
    const char* end = nullptr;
    uint32_t number = 0;
    bool out = false;  ///< not known to be given back
  };
  struct Port {
    std::array<Lend, transport::kFifoSlots> last;  ///< lend k at k % kFifoSlots
    size_t count = 0;
  };

  Status waitFor(size_t port, uint32_t number, const transport::WaitContext& wait);

  const std::vector<transport::SendEnd*>& ends_;
  const std::vector<int>& peers_;
  std::vector<Port> ports_;
  bool any_ = false;
};

}  // namespace braid::exec
