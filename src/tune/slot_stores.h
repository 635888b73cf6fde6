// How a host rank writes the FIFO slots it sends, chosen call by call from what calls measured.
//
// Plain stores leave a slot's lines in the writer's cache, where the reader fetches them; non-
// temporal ("streamed") stores send them to memory, where the reader loads them. Which is faster
// depends on how far apart the two cores are, and a VM's vCPUs move: on the 2-vCPU VM of
// 2026-12-06 a 1 MiB all_reduce of two ranks took 52-61 us plain and 105-115 streamed while a
// cache line crossed in 79 ns, and 213 plain against 68-72 streamed a minute later while it
// crossed in 300 (docs/benchmarks.md). No setting made once at creation is right all day there,
// so the choice follows the calls:
//
//   - calls of kMinBytes and more are timed, per byte, in the mode they ran, for each size class
//     (a power of two: a 64 MiB call is bound by memory where a 1 MiB one is not): the winner's
//     times as a moving average, the loser's last time as it is;
//   - in each class, every kExploreEvery-th call runs the mode that did not win last, to see
//     whether it wins now (a loser twice as slow costs 3% that way); the others run the winner;
//   - every rank counts the same calls, so the ranks explore together, and each rank's times
//     include its peers' reads of what it wrote.
//
// Smaller calls keep the starting choice: their slices are mostly below the streaming size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace braid::tune {

class SlotStores {
 public:
  static constexpr size_t kMinBytes = 256 * 1024;
  static constexpr uint32_t kExploreEvery = 32;

  /// Whether the next call, of `bytes`, streams; then record() its time. `startStreamed` is the
  /// choice before anything is measured (Links::streamSlots, from the line time at creation).
  bool streamNext(size_t bytes, bool startStreamed);
  /// The call streamNext was asked for took `seconds`.
  void record(size_t bytes, bool streamed, double seconds);
  /// What a class of calls measured, per byte, for a mode (0: not yet): for the tests and logs.
  double nsPerByte(size_t bytes, bool streamed) const;

 private:
  struct SizeClass {
    uint32_t calls = 0;
    double nsPerByte[2] = {0, 0};  // [plain, streamed]; a moving average, 0 = not measured
  };
  static constexpr int kClasses = 40;  // 2^18 .. 2^57 bytes
  static int classOf(size_t bytes);

  std::array<SizeClass, kClasses> classes_{};
};

}  // namespace braid::tune
