// The bootstrap root: one thread per unique id that meets every rank of its block once.
//
// Each rank connects and sends a Hello (magic, rank, nranks, its listen
// address). When all ranks have arrived the root closes its listener and
// answers each rank with the listen address of its ring successor, the only
// peer a rank connects to; everything else travels around the ring. Sending
// one address rather than the whole table keeps the root's work linear in the
// number of ranks. If the deadline passes first, every waiting rank is told
// which ranks never came.
//
// A communicator made from several ids (ncclCommInitRankScalable) has a root per id, each
// meeting one block of ranks (root_blocks.h). The last rank of a block has its successor in the
// next block: the first rank of that block introduces itself to this root too, with a Hello
// whose rank is one past the block (nranks where the next block is the first), which the root
// answers at once with kFiled.
//
// A root holds at most GreetingAcceptor::kMaxPending connections whose greeting it has not read;
// under a burst of ranks it drops the oldest, which the rank sees as a reset before any answer.
// The Hello was then not filed, so the rank sends it again (bootstrap.cc). Also the wire format the
// ranks speak with the root and with each other: fixed-size structs in host byte order, since every
// rank of a job runs the same build on the same architecture.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "base/socket.h"
#include "bootstrap/unique_id.h"
#include "braid/status.h"

namespace braid::bootstrap {

namespace wire {

/// Rank -> root, the first bytes on the connection.
struct Hello {
  uint64_t magic;
  int32_t rank;  ///< the rank's own, or one past the root's block for an introduction
  int32_t nranks;
  int32_t nroots;               ///< the ids the communicator is made from (1 but for several ids)
  int32_t iroot;                ///< which of them this root's is
  int64_t timeoutMs;            ///< the rank's timeout (<= 0: none), for messages
  int64_t remainingMs;          ///< the rank's time left; the root gives up no later
  sockaddr_storage listenAddr;  ///< where the rank accepts its ring predecessor
};

enum class ReplyKind : uint32_t {
  kPeerAddress = 1,  ///< followed by the successor's sockaddr_storage
  kError = 2,        ///< followed by `length` bytes of message text
  kFiled = 3,        ///< an introduction was filed (nothing follows)
};

/// Root -> rank.
struct ReplyHeader {
  uint32_t kind;
  uint32_t length;
};
inline constexpr uint32_t kMaxErrorBytes = 4096;

/// What a rank reads after a reply's header: the successor's address, an error's text of
/// `length` bytes, or nothing (the header is malformed: the rank gives up).
enum class ReplyRead { kAddress, kError, kFiled, kMalformed };
ReplyRead classifyReply(const ReplyHeader& header);
/// Whether an address a rank got from the root is one it can connect to: IPv4 or IPv6, a port.
bool isRankAddress(const sockaddr_storage& address);
/// An error text from the wire as a person may read it in a log: control bytes become '?'.
std::string printableText(const std::string& text);

/// Rank -> ring successor, the first bytes on the connection, so that a
/// stray connection (another communicator, a port scanner) is rejected.
struct RingHandshake {
  uint64_t magic;
  int32_t rank;
  uint32_t reserved;
};

}  // namespace wire

/// Serves the communicator of `id` on `listener` from a detached thread: only connections that
/// prove its secret are heard. The thread ends once every rank has been answered or `timeoutMs`
/// (> 0) passed.
Status startRoot(sockets::Socket listener, const UniqueIdContents& id, int64_t timeoutMs);

/// Why the root turns `hello` away ("" when it is admitted), given what it has seen so far:
/// `nranks` (-1 before the first rank) and whether the rank joined already. Also the fuzz
/// target's entry point (tests/fuzz). That the rank belongs to the root's block is the root's
/// own check (it knows the block from its first Hello).
std::string checkHello(const wire::Hello& hello, uint64_t magic, int nranks, bool alreadyJoined);
/// At most this many ranks: a Hello asking for more is refused, never allocated for.
inline constexpr int kMaxRanks = 1 << 20;

}  // namespace braid::bootstrap
