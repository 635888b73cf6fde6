// The watcher's wire checks (see watch_wire.h): pure functions, so that the fuzz target runs
// exactly what the watcher runs on what arrives.
#include "watch/watch_wire.h"

namespace braid::watch::wire {

std::string checkLetterGreeting(const Greeting& g, uint64_t magic, int nranks) {
  if (g.magic != magic) return "another communicator's magic";
  if (g.purpose != static_cast<uint32_t>(Purpose::kLetter)) {
    return "purpose " + std::to_string(g.purpose) + " is not a letter's";
  }
  if (g.rank < 0 || g.rank >= nranks) return "sender rank " + std::to_string(g.rank);
  if (g.bytes > kMaxLetterBytes) return "a payload of " + std::to_string(g.bytes) + " bytes";
  return "";
}

std::string checkLossFrame(const Frame& f, int nranks) {
  if (f.rank < 0 || f.rank >= nranks) return "lost rank " + std::to_string(f.rank);
  if (f.observer < 0 || f.observer >= nranks) return "observer " + std::to_string(f.observer);
  if (f.cause != static_cast<uint32_t>(Cause::kClosed) &&
      f.cause != static_cast<uint32_t>(Cause::kSilent) &&
      f.cause != static_cast<uint32_t>(Cause::kLinkFailed) &&
      f.cause != static_cast<uint32_t>(Cause::kAbandoned) &&
      f.cause != static_cast<uint32_t>(Cause::kEnded)) {
    return "cause " + std::to_string(f.cause);
  }
  if (f.silentMs < 0) return "a negative silence";
  return "";
}

}  // namespace braid::watch::wire
