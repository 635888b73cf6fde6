// Sealed sockets (base/socket_seal.h, base/seal_handshake.h): frames that open only with the
// keys of their connection and direction, in order, unaltered; and the handshake that makes a
// wrong key fail at connection on both ends, each naming the other. Skipped where libcrypto.so.3
// cannot be loaded.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/encryption_key.h"
#include "base/openssl_library.h"
#include "base/seal_handshake.h"
#include "base/socket.h"
#include "base/socket_address.h"
#include "base/socket_greeting.h"
#include "base/socket_io.h"
#include "support/network_fifo_checks.h"

namespace braid::sockets::socket_seal_test {
namespace {

const char kKeyA[] = "this-is-the-first-key-of-the-test-0123456789";
const char kKeyB[] = "this-is-another-key-that-must-not-match-9876";

std::unique_ptr<PreSharedKey> keyOf(const char* text) {
  auto key = std::make_unique<PreSharedKey>();
  key->bytes.assign(text, text + strlen(text));
  return key;
}

SealNonce nonce(uint8_t fill) {
  SealNonce n;
  n.fill(fill);
  return n;
}

class SocketSealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!crypto::openSsl().ok()) GTEST_SKIP() << crypto::openSsl().status().message();
  }
  void TearDown() override { clearEncryptionKey(); }
  /// A listener's and a connector's seals of one connection, made from `a`'s and `b`'s keys.
  void pair(const char* a, const char* b) {
    listener_ =
        SocketSeal::make(*keyOf(a), SocketSeal::Role::kListener, nonce(1), nonce(2)).value();
    connector_ =
        SocketSeal::make(*keyOf(b), SocketSeal::Role::kConnector, nonce(1), nonce(2)).value();
  }
  /// `text` sealed as the connector's next frame.
  std::vector<char> sealByConnector(const std::string& text) {
    std::vector<char> frame;
    EXPECT_EQ(connector_->sealFrame(text.data(), text.size(), nullptr, 0, &frame), text.size());
    return frame;
  }
  bool openAtListener(const std::vector<char>& frame, std::string* plain) {
    plain->resize(frame.size() - kSealHeaderBytes - kSealTagBytes);
    return listener_->openFrame(frame.data(), frame.size(), plain->data());
  }
  std::unique_ptr<SocketSeal> listener_, connector_;
};

TEST_F(SocketSealTest, FramesOpenInOrderWithTheSameKey) {
  pair(kKeyA, kKeyA);
  std::vector<char> first, second;
  EXPECT_EQ(connector_->sealFrame("head", 4, "payload", 7, &first), 11u);
  EXPECT_EQ(connector_->sealFrame("again", 5, nullptr, 0, &second), 5u);
  EXPECT_EQ(std::string(first.data() + kSealHeaderBytes, 11).find("payload"), std::string::npos)
      << "the frame carries its plaintext";
  std::string plain;
  ASSERT_TRUE(openAtListener(first, &plain));
  EXPECT_EQ(plain, "headpayload");
  ASSERT_TRUE(openAtListener(second, &plain));
  EXPECT_EQ(plain, "again");
}

TEST_F(SocketSealTest, AlteredFrameFails) {
  pair(kKeyA, kKeyA);
  std::vector<char> frame = sealByConnector("a slot's bytes");
  frame[kSealHeaderBytes + 3] ^= 0x01;
  std::string plain;
  EXPECT_FALSE(openAtListener(frame, &plain));
}

TEST_F(SocketSealTest, AlteredLengthFails) {
  pair(kKeyA, kKeyA);
  std::vector<char> frame = sealByConnector("a slot's bytes");
  frame[0] = 13;  // the length is authenticated: one byte less does not open
  std::string plain(64, '\0');
  EXPECT_FALSE(listener_->openFrame(frame.data(), frame.size() - 1, plain.data()));
}

TEST_F(SocketSealTest, ReplayedFrameFails) {
  pair(kKeyA, kKeyA);
  const std::vector<char> frame = sealByConnector("pay rank 3");
  std::string plain;
  ASSERT_TRUE(openAtListener(frame, &plain));
  EXPECT_FALSE(openAtListener(frame, &plain)) << "the same frame opened twice";
}

TEST_F(SocketSealTest, WrongKeyFails) {
  pair(kKeyA, kKeyB);
  std::string plain;
  EXPECT_FALSE(openAtListener(sealByConnector("secret"), &plain));
}

TEST_F(SocketSealTest, FrameReflectedToItsSenderFails) {
  pair(kKeyA, kKeyA);
  const std::vector<char> frame = sealByConnector("echo");
  std::string plain(4, '\0');
  EXPECT_FALSE(connector_->openFrame(frame.data(), frame.size(), plain.data()))
      << "each direction has its own key";
}

TEST_F(SocketSealTest, ShortKeyRefused) {
  const Status set = setEncryptionKey("short", 5);
  EXPECT_EQ(set.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(set.message().find("at least 32 bytes"), std::string::npos) << set.message();
  EXPECT_EQ(encryptionKey(), nullptr);
}

/// A greeting through a real connection on loopback: the listener here, the connector in a
/// child process with `childKey` (the key is process-wide). What the listener's acceptor said,
/// and whether the child saw `childExpects`.
struct Handshake {
  IoResult listened;
  std::string greeting;
  int childExit = -1;
};

Handshake handshake(const char* parentKey, const char* childKey, IoEnd childExpects) {
  Handshake h;
  EXPECT_TRUE(setEncryptionKey(parentKey, strlen(parentKey)).ok());
  Socket listener = listenOn(braid::testing::loopbackAddress(), false).value();
  const sockaddr_storage at = boundAddress(listener).value();
  Proof proof;
  proof.secret.fill(7);
  proof.purpose = 3;
  fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    bool ok = setEncryptionKey(childKey, strlen(childKey)).ok();
    Result<Socket> connected = connectWithRetry(at, Deadline::afterMs(10000));
    ok = ok && connected.ok();
    if (ok) {
      const char hello[] = "hello, sealed";
      IoResult io = sendProvenGreeting(connected.value(), proof, hello, sizeof(hello),
                                       Deadline::afterMs(10000));
      ok = io.end == childExpects;
      if (io.end == IoEnd::kWrongKey) {
        // The connector's error names the connection, the listener's end included.
        ok = ok && io.describe().find(addressToString(at)) != std::string::npos &&
             io.describe().find("encryption") != std::string::npos;
      }
      if (io.ok()) {
        char answer[8] = {};
        ok = ok && recvAll(connected.value(), answer, 6, Deadline::afterMs(10000)).ok() &&
             std::string(answer) == "sealed";
      }
    }
    _exit(ok ? 0 : 1);
  }
  GreetingAcceptor acceptor(listener, sizeof("hello, sealed"), proof);
  Socket connection;
  std::vector<char> greeting;
  h.listened = acceptor.next(Deadline::afterMs(10000), &connection, &greeting);
  if (h.listened.ok()) {
    h.greeting = greeting.data();
    EXPECT_NE(connection.seal(), nullptr);
    EXPECT_TRUE(sendAll(connection, "sealed", 6, Deadline::afterMs(10000)).ok());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  h.childExit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return h;
}

TEST_F(SocketSealTest, SameKeyHandshakeSealsTheGreeting) {
  const Handshake h = handshake(kKeyA, kKeyA, IoEnd::kDone);
  ASSERT_TRUE(h.listened.ok()) << h.listened.describe();
  EXPECT_EQ(h.greeting, "hello, sealed");
  EXPECT_EQ(h.childExit, 0);
}

TEST_F(SocketSealTest, WrongKeyFailsOnBothEnds) {
  const Handshake h = handshake(kKeyA, kKeyB, IoEnd::kWrongKey);
  EXPECT_EQ(h.listened.end, IoEnd::kWrongKey) << h.listened.describe();
  // The listener's error names the connector's end: an address on loopback.
  EXPECT_NE(h.listened.describe().find("127.0.0.1"), std::string::npos) << h.listened.describe();
  EXPECT_EQ(h.childExit, 0) << "the connector did not see kWrongKey naming the listener";
}

}  // namespace
}  // namespace braid::sockets::socket_seal_test
