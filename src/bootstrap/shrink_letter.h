// The letter the first survivor of a shrink posts to the others (src/comm/shrink.cc): the new
// communicator's unique id, or why there is none. Coded and read here, apart from the shrink, so
// that the fuzz target reads letters exactly as a survivor does.
#pragma once

#include <vector>

#include "bootstrap/unique_id.h"
#include "braid/status.h"

namespace braid::bootstrap {

/// The letter for `made`: its id, or its error's text.
std::vector<char> encodeShrinkLetter(const Result<UniqueId>& made);
/// The id a letter carries, or an error: the leader's, or that the letter is malformed.
Result<UniqueId> decodeShrinkLetter(const std::vector<char>& letter);

}  // namespace braid::bootstrap
