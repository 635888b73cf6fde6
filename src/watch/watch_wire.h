// What the ranks' watchers say to each other (watch/peer_watch.h).
//
// Two kinds of connection reach a watcher's listener, each opening with a Greeting:
//
//   ring     from the rank's ring predecessor, kept for the communicator's life: Frames flow
//            both ways on it (and on the one this rank opened to its successor)
//   letter   one message for a caller of PeerWatch::collect() (ncclCommShrink's new unique id),
//            `bytes` of payload after the greeting, then the connection closes
//
// Fixed-size structs in host byte order, as the bootstrap's: every rank of a job runs the same
// build on the same architecture.
#pragma once

#include <cstdint>
#include <string>

namespace braid::watch::wire {

enum class Purpose : uint32_t {
  kRing = 1,
  kLetter = 2,
};

struct Greeting {
  uint64_t magic;    ///< the communicator's (bootstrap magic): a stray connection is dropped
  uint32_t purpose;  ///< Purpose
  int32_t rank;      ///< the sender's rank
  uint64_t key;      ///< a letter's key (what collect() waits for); 0 on the ring
  uint32_t bytes;    ///< a letter's payload size, at most kMaxLetterBytes
  uint32_t reserved;
};
static_assert(sizeof(Greeting) == 32, "the greeting is part of the wire format");

inline constexpr uint32_t kMaxLetterBytes = 4096;

enum class FrameKind : uint32_t {
  kHeartbeat = 1,  ///< "still here", every heartbeat interval
  kLoss = 2,       ///< rank `rank` is lost, as `observer` saw (`cause`); passed on around the ring
  kLeaving = 3,    ///< the sender leaves in order (destroy, finalize, abort): its close is no loss
};

/// How a rank was found lost.
enum class Cause : uint32_t {
  kClosed = 1,  ///< its watch connection closed without a kLeaving (the process ended)
  kSilent = 2,  ///< nothing came from it for the heartbeat timeout (host down, link cut, stopped)
  /// The observer's transport link to it failed (a verbs completion or post error, a broken
  /// socket): it may live, but the communicator cannot move data between the two.
  kLinkFailed = 3,
  /// It aborted its communicator and left (its kLeaving carries this cause): it lives, but its
  /// part of any call will not come.
  kAbandoned = 4,
  /// Its watcher's thread ended without letting go of its life line (watch/life_line.h): its
  /// process is ending, seen before the kernel closes its sockets.
  kEnded = 5,
};

struct Frame {
  uint32_t kind;     ///< FrameKind
  int32_t rank;      ///< kLoss: the lost rank; otherwise the sender
  int32_t observer;  ///< kLoss: the rank that saw it
  uint32_t cause;    ///< kLoss: Cause
  int64_t silentMs;  ///< kLoss by kSilent: how long nothing came
};
static_assert(sizeof(Frame) == 24, "the frame is part of the wire format");

/// Why a letter's greeting (its proof checked) is refused, "" when it is taken: another
/// communicator's magic, another purpose, a sender outside [0, nranks), a payload too long.
std::string checkLetterGreeting(const Greeting& g, uint64_t magic, int nranks);
/// Why a kLoss frame is ignored, "" when it is believed: ranks outside [0, nranks), an unknown
/// cause, a negative silence.
std::string checkLossFrame(const Frame& f, int nranks);

}  // namespace braid::watch::wire
