// libFuzzer target: what braid reads from the wire before it trusts a peer, through the same
// checks the listeners run. The input's first byte names the message, the rest is its bytes:
//
//   0  a rank's Hello to the bootstrap root (bootstrap::checkHello), with the root's state
//   1  the root's reply header and the address after it (wire::classifyReply, isRankAddress),
//      and an error text as the log would print it (wire::printableText)
//   2  a watcher's letter greeting (watch::wire::checkLetterGreeting)
//   3  a run of watch frames (watch::wire::checkLossFrame)
//   4  a shrink's letter (bootstrap::decodeShrinkLetter), and the letter of an id round trip
//   5  a unique id's 128 bytes (bootstrap::unpackUniqueId, describeUniqueId)
//
// Beyond "no crash", what each promises: an admitted Hello is in range for the root to
// allocate; a reply read as an error text is at most kMaxErrorBytes; a believed loss names
// ranks of the communicator; a letter read as an id carries an id braid can unpack; printable
// text has no control bytes.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/root.h"
#include "bootstrap/shrink_letter.h"
#include "bootstrap/unique_id.h"
#include "fuzz/fuzz_check.h"
#include "watch/watch_wire.h"

namespace {

using braid::fuzz::check;
namespace bootstrap = braid::bootstrap;
namespace wwire = braid::watch::wire;

/// The next `bytes` of the input into `out` (zeros past its end).
template <typename T>
T take(const uint8_t*& data, size_t& size) {
  T out{};
  const size_t n = size < sizeof(T) ? size : sizeof(T);
  memcpy(&out, data, n);
  data += n;
  size -= n;
  return out;
}

void fuzzHello(const uint8_t* data, size_t size) {
  const auto state = take<int32_t>(data, size);
  const auto magic = take<uint64_t>(data, size);
  const auto hello = take<bootstrap::wire::Hello>(data, size);
  const int nranksSoFar = state < 0 ? -1 : state % 1024;
  const std::string problem = bootstrap::checkHello(hello, magic, nranksSoFar, (state & 1) != 0);
  if (!problem.empty()) return;
  check(hello.magic == magic, "a Hello of another magic was admitted");
  check(hello.nranks >= 1 && hello.nranks <= bootstrap::kMaxRanks,
        "a Hello for " + std::to_string(hello.nranks) + " ranks was admitted");
  // An introduction to the last of several roots comes as rank nranks (bootstrap/root.h).
  check(hello.rank >= 0 &&
            (hello.rank < hello.nranks || (hello.nroots > 1 && hello.rank == hello.nranks)),
        "a Hello's rank is out of range");
  check(hello.nroots >= 1 && hello.nroots <= hello.nranks && hello.iroot >= 0 &&
            hello.iroot < hello.nroots,
        "a Hello naming a root out of range was admitted");
  check(nranksSoFar < 0 || hello.nranks == nranksSoFar, "a Hello disagreeing on nranks");
  check((state & 1) == 0, "a rank that joined already was admitted again");
}

void fuzzReply(const uint8_t* data, size_t size) {
  const auto header = take<bootstrap::wire::ReplyHeader>(data, size);
  const auto address = take<sockaddr_storage>(data, size);
  switch (bootstrap::wire::classifyReply(header)) {
    case bootstrap::wire::ReplyRead::kError:
      check(header.length <= bootstrap::wire::kMaxErrorBytes, "an error text too long to read");
      break;
    case bootstrap::wire::ReplyRead::kAddress:
      check(header.length == sizeof(sockaddr_storage), "an address of the wrong size");
      break;
    case bootstrap::wire::ReplyRead::kFiled:
      check(header.length == 0, "a filed introduction with a payload");
      break;
    case bootstrap::wire::ReplyRead::kMalformed:
      break;
  }
  if (bootstrap::wire::isRankAddress(address)) {
    check(address.ss_family == AF_INET || address.ss_family == AF_INET6,
          "an address of another family taken for a rank's");
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string shown = bootstrap::wire::printableText(text);
  check(shown.size() == text.size(), "printable text of another length");
  for (unsigned char c : shown) check(c >= 0x20 && c != 0x7f, "a control byte left in a log line");
}

void fuzzLetterGreeting(const uint8_t* data, size_t size) {
  const auto nranks = static_cast<int>(take<uint16_t>(data, size)) + 1;
  const auto magic = take<uint64_t>(data, size);
  const auto g = take<wwire::Greeting>(data, size);
  if (!wwire::checkLetterGreeting(g, magic, nranks).empty()) return;
  check(g.magic == magic && g.purpose == static_cast<uint32_t>(wwire::Purpose::kLetter),
        "a letter of another communicator or purpose was taken");
  check(g.rank >= 0 && g.rank < nranks, "a letter from outside the communicator was taken");
  check(g.bytes <= wwire::kMaxLetterBytes, "a letter too long was taken");
}

void fuzzFrames(const uint8_t* data, size_t size) {
  const auto nranks = static_cast<int>(take<uint16_t>(data, size)) + 1;
  while (size > 0) {
    const auto f = take<wwire::Frame>(data, size);
    if (f.kind != static_cast<uint32_t>(wwire::FrameKind::kLoss)) continue;
    if (!wwire::checkLossFrame(f, nranks).empty()) continue;
    check(f.rank >= 0 && f.rank < nranks && f.observer >= 0 && f.observer < nranks,
          "a loss of a rank outside the communicator was believed");
    check(f.silentMs >= 0, "a negative silence was believed");
  }
}

void fuzzShrinkLetter(const uint8_t* data, size_t size) {
  const std::vector<char> letter(data, data + size);
  braid::Result<braid::UniqueId> id = bootstrap::decodeShrinkLetter(letter);
  if (id.ok()) {
    check(bootstrap::unpackUniqueId(id.value()).ok(), "a letter's id that does not unpack");
    // What a letter carries is what it is read back as.
    const std::vector<char> again = bootstrap::encodeShrinkLetter(id);
    braid::Result<braid::UniqueId> reread = bootstrap::decodeShrinkLetter(again);
    check(reread.ok() && memcmp(reread.value().bytes, id.value().bytes, 128) == 0,
          "a letter that does not read back as itself");
  } else {
    check(id.status().code() == braid::ErrorCode::kRemoteError ||
              id.status().code() == braid::ErrorCode::kInvalidArgument,
          "a letter refused with an unexpected error: " + id.status().message());
  }
}

void fuzzUniqueId(const uint8_t* data, size_t size) {
  braid::UniqueId id{};
  memcpy(id.bytes, data, size < sizeof(id.bytes) ? size : sizeof(id.bytes));
  braid::Result<bootstrap::UniqueIdContents> contents = bootstrap::unpackUniqueId(id);
  const std::string text = bootstrap::describeUniqueId(id);
  if (!contents.ok()) {
    check(text == "<not a braid unique id>", "an id that does not unpack described as one");
    return;
  }
  check(contents.value().marker == bootstrap::kUniqueIdMarker, "an id without the marker");
  check(bootstrap::wire::isRankAddress(bootstrap::rootAddress(contents.value())),
        "an id whose root cannot be reached was taken");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0] % 6;
  ++data;
  --size;
  switch (which) {
    case 0:
      fuzzHello(data, size);
      break;
    case 1:
      fuzzReply(data, size);
      break;
    case 2:
      fuzzLetterGreeting(data, size);
      break;
    case 3:
      fuzzFrames(data, size);
      break;
    case 4:
      fuzzShrinkLetter(data, size);
      break;
    default:
      fuzzUniqueId(data, size);
      break;
  }
  return 0;
}
