// SHA-256 and HMAC-SHA-256 (base/hmac.h) against the published examples: FIPS 180-4's
// "abc" and its two-block message, a million 'a's, and RFC 4231's HMAC test cases 1, 2, 4 and 6
// (a key longer than a block), fed whole and in pieces.
#include "base/hmac.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace braid::crypto {
namespace {

std::string hex(const Digest& d) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : d) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string hexOf(const std::string& s) { return hex(sha256(s.data(), s.size())); }

TEST(Sha256, PublishedExamples) {
  EXPECT_EQ(hexOf(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hexOf("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.update(chunk.data(), chunk.size());
  EXPECT_EQ(hex(million.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesGiveTheSameDigest) {
  const std::string text = "the quick brown fox jumps over the lazy dog, again and again";
  for (size_t cut = 0; cut <= text.size(); cut += 7) {
    Sha256 s;
    s.update(text.data(), cut);
    s.update(text.data() + cut, text.size() - cut);
    EXPECT_EQ(hex(s.finish()), hexOf(text)) << "cut at " << cut;
  }
}

TEST(HmacSha256, Rfc4231Cases) {
  const std::vector<uint8_t> key1(20, 0x0b);
  const std::string data1 = "Hi There";
  EXPECT_EQ(hex(hmacSha256(key1.data(), key1.size(), data1.data(), data1.size())),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  const std::string key2 = "Jefe";
  const std::string data2 = "what do ya want for nothing?";
  EXPECT_EQ(hex(hmacSha256(key2.data(), key2.size(), data2.data(), data2.size())),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // The same message in three pieces.
  EXPECT_EQ(hex(hmacSha256(key2.data(), key2.size(), data2.data(), 4, data2.data() + 4, 10,
                           data2.data() + 14, data2.size() - 14)),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  std::vector<uint8_t> key4;
  for (int i = 1; i <= 25; ++i) key4.push_back(static_cast<uint8_t>(i));
  const std::vector<uint8_t> data4(50, 0xcd);
  EXPECT_EQ(hex(hmacSha256(key4.data(), key4.size(), data4.data(), data4.size())),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  const std::vector<uint8_t> key6(131, 0xaa);
  const std::string data6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  EXPECT_EQ(hex(hmacSha256(key6.data(), key6.size(), data6.data(), data6.size())),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, ConstantTimeCompare) {
  const uint8_t a[4] = {1, 2, 3, 4};
  const uint8_t b[4] = {1, 2, 3, 5};
  EXPECT_TRUE(equalInConstantTime(a, a, 4));
  EXPECT_FALSE(equalInConstantTime(a, b, 4));
  EXPECT_TRUE(equalInConstantTime(a, b, 3));
}

}  // namespace
}  // namespace braid::crypto
