// BRAID_TRACE=path: a Chrome / Perfetto trace (JSON) of what a rank ran.
//
// Each collective call is one event with its algorithm, protocol, channels
// and bytes, and each step of its schedule one event nested under it, on a
// track per channel, with its peers and bytes. Open the file in
// https://ui.perfetto.dev or chrome://tracing. Events are kept in memory
// and written when the communicator is destroyed; past kMaxEvents the rest
// are counted, not kept, so a long run cannot exhaust memory.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "braid/status.h"

namespace braid::trace {

/// One complete event ("ph":"X"): a name, a track, a start and a duration,
/// and arguments as a prepared JSON object body ("\"peer\":3,...").
struct Event {
  std::string name;
  int track = 0;  ///< 0: the collective; 1 + c: channel c
  double startUs = 0;
  double durationUs = 0;
  std::string args;
};

class Recorder {
 public:
  static constexpr size_t kMaxEvents = 1 << 20;

  /// A recorder for `rank` writing to `path` (a "%r" in it becomes the rank;
  /// without one, ".rank<r>.json" is appended so ranks do not collide).
  Recorder(std::string path, int rank);

  /// Microseconds since the recorder was made (the trace's clock).
  double nowUs() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  void add(Event event);
  size_t dropped() const { return dropped_; }
  const std::string& path() const { return path_; }
  /// Writes every event kept so far to path().
  Status write() const;

 private:
  std::string path_;
  int rank_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Event> events_;
  size_t dropped_ = 0;
};

/// The file a rank writes for BRAID_TRACE=`pattern`.
std::string tracePath(const std::string& pattern, int rank);

}  // namespace braid::trace
