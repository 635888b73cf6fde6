#include "bootstrap/shrink_letter.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "bootstrap/root.h"

namespace braid::bootstrap {
namespace {

struct Letter {
  int32_t ok;  ///< 1: `id` is the new communicator's
  int32_t reserved;
  UniqueId id;
  char error[512];  ///< ok == 0: the leader's error, NUL-terminated
};

}  // namespace

std::vector<char> encodeShrinkLetter(const Result<UniqueId>& made) {
  Letter letter{};
  letter.ok = made.ok() ? 1 : 0;
  if (made.ok()) {
    letter.id = made.value();
  } else {
    snprintf(letter.error, sizeof(letter.error), "%s", made.status().message().c_str());
  }
  std::vector<char> bytes(sizeof(letter));
  memcpy(bytes.data(), &letter, sizeof(letter));
  return bytes;
}

Result<UniqueId> decodeShrinkLetter(const std::vector<char>& bytes) {
  if (bytes.size() != sizeof(Letter)) {
    return remoteError("a malformed letter of " + std::to_string(bytes.size()) + " bytes");
  }
  Letter letter;
  memcpy(&letter, bytes.data(), sizeof(letter));
  if (letter.ok == 1) {
    BRAID_TRY(unpackUniqueId(letter.id).status().withContext("the letter's unique id"));
    return letter.id;
  }
  if (letter.ok != 0)
    return remoteError("a malformed letter (state " + std::to_string(letter.ok) + ")");
  letter.error[sizeof(letter.error) - 1] = '\0';
  return remoteError("it could not make the new communicator: " +
                     wire::printableText(letter.error));
}

}  // namespace braid::bootstrap
