// Transfers on a connection that give up at a Deadline: all of a buffer sent or received, a
// bulk receive that wakes rarely, a header and its payload in one sendmsg, a send and a receive
// at once (exchange), and a receive of what has arrived, without waiting.
//
// Every wait is a poll() bounded by the deadline. Transfers report how they ended (IoResult)
// rather than a worded Status, because only the caller knows whom it was waiting for ("timed out
// waiting for rank 3").
#pragma once

#include <cstddef>
#include <string>

#include "base/deadline.h"
#include "base/socket.h"

namespace braid::sockets {

/// How a blocking transfer ended.
/// kCancelled: the deadline's cancel flag rose (Deadline::cancelledBy).
/// kUnauthentic: on a sealed connection (socket_seal.h), a frame failed authentication.
/// kWrongKey: the encryption handshake failed (the peer's key differs, or it does not encrypt).
enum class IoEnd { kDone, kTimedOut, kPeerClosed, kFailed, kCancelled, kUnauthentic, kWrongKey };

struct IoResult {
  IoEnd end = IoEnd::kDone;
  int sysErrno = 0;     ///< the errno behind kFailed
  bool onSend = false;  ///< exchange(): the send side is the one that stopped
  std::string where;    ///< kWrongKey: the connection's two ends (socket_address.h's describe)
  bool ok() const { return end == IoEnd::kDone; }
  /// "timed out", "peer closed the connection" (with the system's words for a reset or a broken
  /// pipe) or the system error text.
  std::string describe() const;
};

IoResult sendAll(const Socket& socket, const void* data, size_t bytes, const Deadline& deadline);
IoResult recvAll(const Socket& socket, void* data, size_t bytes, const Deadline& deadline);
/// recvAll of a bulk payload (a slot's bytes): while at least kBulkWakeBytes are still to come,
/// the wait between two reads ends only once that many have arrived (SO_RCVLOWAT), not at each
/// segment, so a large receive wakes its thread a few times instead of once per arrival. The
/// socket's low-water mark is back at one byte when it returns.
IoResult recvBulk(const Socket& socket, void* data, size_t bytes, const Deadline& deadline);
/// How much a bulk receive waits to have arrived before it reads again.
inline constexpr size_t kBulkWakeBytes = 256 * 1024;

/// sendAll of `head` and then `data`, both in one sendmsg where the socket takes them (a
/// message's header and its payload: one system call, one segment where they fit).
IoResult sendAllv(const Socket& socket, const void* head, size_t headBytes, const void* data,
                  size_t bytes, const Deadline& deadline);

/// Sends to `to` and receives from `from` at the same time, so that a ring of
/// ranks all sending more than a socket buffer holds cannot deadlock.
IoResult exchange(const Socket& to, const void* sendData, size_t sendBytes, const Socket& from,
                  void* recvData, size_t recvBytes, const Deadline& deadline);

/// Receives what has arrived, without waiting: at most `bytes` into `data`, how many it took in
/// *received. False when the connection can give no more (the peer closed it, or it failed).
/// On a sealed connection, what arrived may already sit opened in the seal, where a poll on
/// the socket does not see it: check readableNow() before waiting in a poll of one's own.
bool recvArrived(const Socket& socket, void* data, size_t bytes, size_t* received);

/// Sends what the socket takes now, without waiting: at most `bytes` of `data`, how many it took
/// in *sent. False when the connection takes no more (the peer closed it, or it failed). On a
/// sealed connection a frame that went in part is kept: call again with the same unsent bytes.
bool sendWhatFits(const Socket& socket, const void* data, size_t bytes, size_t* sent);

/// Whether a receive would give bytes without waiting for the socket: plaintext already opened
/// in its seal. False on a plaintext connection.
inline bool readableNow(const Socket& socket) {
  return socket.seal() != nullptr && socket.seal()->hasPlaintext();
}

}  // namespace braid::sockets
