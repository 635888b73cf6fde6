// Shrinking a communicator (Comm::shrink, ncclCommShrink): the ranks not excluded make a new
// communicator, in their old order, numbered densely; the excluded ones take no part and may
// be dead.
//
// A split meets on the parent's bootstrap ring, but a dead rank breaks that ring. The survivors
// meet through their watchers instead, whose listeners every rank has known since creation:
// the first survivor (the leader) makes a fresh unique id, as a split's leader does, and posts
// it to every other survivor's watcher as a letter; each survivor collects the letter and joins
// with Comm::create. The letter's key is the parent's magic, the number of this shrink and the
// excluded ranks, so that letters of two shrinks never cross. A survivor waiting for a leader
// that is lost too gives up as soon as its watcher hears of it.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/hash.h"
#include "base/log.h"
#include "bootstrap/shrink_letter.h"
#include "comm/comm_impl.h"

namespace braid {

using comm::checkRank;
namespace {

Status checkExcluded(const std::vector<int>& exclude, int rank, int nranks) {
  if (exclude.empty()) {
    return invalidArgument("shrink: excludeRanksList is empty (excludeRanksCount must be > 0)");
  }
  for (size_t i = 0; i < exclude.size(); ++i) {
    BRAID_TRY(checkRank(exclude[i], nranks, "shrink: excluded rank"));
    if (i > 0 && exclude[i] == exclude[i - 1]) {
      return invalidArgument("shrink: rank " + std::to_string(exclude[i]) + " is excluded twice");
    }
  }
  if (std::binary_search(exclude.begin(), exclude.end(), rank)) {
    return invalidArgument("shrink: rank " + std::to_string(rank) +
                           " is in the excluded list: excluded ranks must not call ncclCommShrink");
  }
  return Status::success();
}

// The leader's part: a new id, posted to every other survivor as a letter.
Result<UniqueId> postNewId(comm::Health& health, const std::vector<int>& survivors, uint64_t key,
                           const Deadline& deadline) {
  const Result<UniqueId> made = Comm::newUniqueId();
  const std::vector<char> letter = bootstrap::encodeShrinkLetter(made);
  for (size_t i = 1; i < survivors.size(); ++i) {
    Status posted = health.postLetter(survivors[i], key, letter.data(), letter.size(), deadline);
    if (!posted.ok()) {
      // That rank is gone too: the new communicator could only wait for it.
      return remoteError("shrink: rank " + std::to_string(survivors[i]) +
                         " is not excluded but cannot be reached (" + posted.message() +
                         "); exclude it too");
    }
  }
  if (!made.ok()) return made.status().withContext("shrink");
  return made.value();
}

// Every other survivor's part: the leader's letter, collected in short slices, so that a leader
// lost meanwhile ends the wait at once.
Result<UniqueId> awaitId(comm::Health& health, int leader, uint64_t key, const Deadline& deadline,
                         int64_t timeoutMs) {
  while (true) {
    const Deadline slice = Deadline::afterMs(std::min<int64_t>(
        100, deadline.isNever() ? 100 : std::max<int64_t>(1, deadline.remainingMs())));
    Result<std::vector<char>> got = health.collectLetter(key, slice);
    if (got.ok()) {
      Result<UniqueId> sent = bootstrap::decodeShrinkLetter(got.value());
      if (!sent.ok()) return sent.status().withContext("shrink: rank " + std::to_string(leader));
      return sent.value();
    }
    for (const watch::Loss& loss : health.watcher()->losses()) {
      if (loss.rank == leader) {
        return remoteError("shrink: rank " + std::to_string(leader) +
                           ", the first rank not excluded, is lost too: " + loss.describe() +
                           "; exclude it as well");
      }
    }
    if (deadline.expired()) {
      return remoteError("shrink: timed out after " + std::to_string(timeoutMs) +
                         " ms waiting for rank " + std::to_string(leader) +
                         " (the first rank not excluded) to call ncclCommShrink with the same "
                         "excluded ranks");
    }
  }
}

}  // namespace

Result<std::unique_ptr<Comm>> Comm::shrink(const std::vector<int>& excludeList, bool abortFirst,
                                           const CommOptions& child) {
  Impl& c = *impl_;
  comm::ActiveCall active = c.health.countCall();
  const int rank = c.members.rank;
  const int nranks = c.members.nranks;
  log::ScopedLogRank logRank(rank);
  std::vector<int> exclude = excludeList;
  std::sort(exclude.begin(), exclude.end());
  BRAID_TRY(checkExcluded(exclude, rank, nranks));
  if (c.health.finalized()) return invalidUsage("communicator was finalized: it cannot be shrunk");
  if (c.health.aborted()) return invalidUsage("communicator was aborted: it cannot be shrunk");
  if (abortFirst) BRAID_TRY(c.quiesce(/*keepStopped=*/true, /*ownCalls=*/1).withContext("shrink"));

  std::vector<int> survivors;
  for (int r = 0; r < nranks; ++r) {
    if (!std::binary_search(exclude.begin(), exclude.end(), r)) survivors.push_back(r);
  }
  const int newRank =
      static_cast<int>(std::find(survivors.begin(), survivors.end(), rank) - survivors.begin());
  const int leader = survivors.front();
  std::string keyText =
      std::to_string(c.members.bootstrap()->magic()) + "/" + std::to_string(c.health.nextShrink());
  for (int r : exclude) keyText += "," + std::to_string(r);
  const uint64_t key = stableHash(keyText);
  const Deadline deadline = Deadline::afterMs(c.config.timeoutMs);
  BRAID_INFO("shrink: rank %d becomes rank %d of %zu (leader %d)", rank, newRank, survivors.size(),
             leader);

  if (survivors.size() > 1 && c.health.watcher() == nullptr) {
    return internalError("shrink: no watcher to meet the other ranks through");
  }
  UniqueId id{};
  if (rank == leader) {
    BRAID_ASSIGN_OR_RETURN(id, postNewId(c.health, survivors, key, deadline));
  } else {
    BRAID_ASSIGN_OR_RETURN(id, awaitId(c.health, leader, key, deadline, c.config.timeoutMs));
  }
  return c.createChild(id, static_cast<int>(survivors.size()), newRank, child);
}

}  // namespace braid
