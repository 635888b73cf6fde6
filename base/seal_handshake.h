// The encryption handshake of a connection (socket_seal.h has the wire): run after the listener's
// challenge and before the greeting (socket_greeting.cc, and the watch's letters), while the
// process has an encryption key (encryption_key.h). Each end sends the other a confirmation frame
// and opens the one it got, so that a wrong key fails at connection on both ends.
#pragma once

#include <string>

#include "base/deadline.h"
#include "base/encryption_key.h"
#include "base/socket.h"
#include "base/socket_greeting.h"
#include "base/socket_io.h"

namespace braid::sockets {

/// The connecting end, once it has the listener's `challenge` (its nonce): sends its hello, reads
/// and opens the listener's confirmation, and seals `socket`. Without a key, does nothing.
/// kWrongKey (with `where` naming the connection) when the listener's confirmation does not open
/// or never comes.
IoResult sealAsConnector(Socket& socket, const Challenge& challenge, const Deadline& deadline);

/// How the listening end took a connector's hello.
enum class HelloVerdict {
  kSealed,     ///< keys agree: the socket is sealed
  kNotSealed,  ///< not a sealing peer's hello (one that does not encrypt, or a stray client)
  kWrongKey,   ///< a sealing peer whose key differs: its confirmation does not open
  kFailed,     ///< our confirmation could not be sent, or libcrypto failed
};

/// The listening end, once the connector's whole hello (kSealHelloBytes) arrived on `socket` after
/// `challenge`: sends its own confirmation (before it judges the hello, so that a connector with
/// another key hears of it too), opens the connector's, and seals `socket`. *why says what failed.
HelloVerdict sealAsListener(Socket& socket, const PreSharedKey& key, const Challenge& challenge,
                            const char* hello, std::string* why);

}  // namespace braid::sockets
