// BRAID_CHECK_CALLS=1 (Calls, calls.h): ranks compare their calls before moving any data.
//
// A rank that calls all_reduce with another count, type, operator or root than its peers, or
// skips a call they make, otherwise hangs the job or corrupts its buffers without a word. With
// the check on, every rank all-gathers a digest of its call through the bootstrap (sequence
// number, collective, count, type, operator, root, and for the variable-count collectives every
// rank's block counts) and compares them; a mismatch returns ncclInvalidUsage on every rank with
// a message naming the ranks and their calls, and nothing moves, so the communicator stays
// usable. It costs one bootstrap all-gather per call (docs/reliability.md). Collectives only:
// point-to-point calls pair different ranks by design.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "base/hash.h"
#include "comm/calls.h"

namespace braid::comm {
namespace {

struct CallDigest {
  uint64_t sequence;
  int32_t collective;
  int32_t type;
  int32_t op;
  int32_t root;  ///< -1 for collectives without one
  uint64_t count;
  uint64_t blocksHash;  ///< variable-count collectives: a hash of every rank's block; else 0

  bool operator==(const CallDigest& o) const {
    return sequence == o.sequence && collective == o.collective && type == o.type && op == o.op &&
           root == o.root && count == o.count && blocksHash == o.blocksHash;
  }
};

std::string describe(const CallDigest& d) {
  const auto collective = static_cast<Collective>(d.collective);
  char text[200];
  snprintf(text, sizeof(text), "call %" PRIu64 ": %s%s of %" PRIu64 " x %s", d.sequence,
           collectiveName(collective), d.blocksHash != 0 ? "V" : "", d.count,
           dataTypeName(static_cast<DataType>(d.type)));
  std::string out = text;
  if (reduces(collective)) {
    out += d.op >= kFirstUserOp ? " user operator " + std::to_string(d.op)
                                : std::string(" ") + redOpName(static_cast<RedOp>(d.op));
  }
  if (d.root >= 0) out += ", root " + std::to_string(d.root);
  if (d.blocksHash != 0) out += ", blocks #" + std::to_string(d.blocksHash % 100000);
  return out;
}

/// "0-2,5" for ranks {0, 1, 2, 5}.
std::string rankList(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

Status Calls::checkCallAgrees(const CollectiveCall& call) {
  const int rank = members_.rank;
  const int nranks = members_.nranks;
  CallDigest mine{};
  mine.sequence = checkedCalls_++;
  mine.collective = static_cast<int32_t>(call.collective);
  mine.type = static_cast<int32_t>(call.type);
  mine.op = reduces(call.collective) ? static_cast<int32_t>(call.op) : 0;
  mine.root = rooted(call.collective) ? call.root : -1;
  if (call.blockCounts != nullptr) {
    std::string blocks;
    for (int r = 0; r < nranks; ++r) blocks += std::to_string(call.blockCounts[r]) + ",";
    mine.blocksHash = stableHash(blocks) | 1;  // never 0, which means "uniform"
  } else {
    mine.count = call.count;
  }
  std::vector<CallDigest> all(nranks);
  all[rank] = mine;
  BRAID_TRY(members_.bootstrap()
                ->allGather(all.data(), sizeof(CallDigest))
                .withContext("BRAID_CHECK_CALLS: exchanging call digests"));
  // The distinct calls, each with the ranks that made it, in the order of their first rank.
  std::vector<std::pair<CallDigest, std::vector<int>>> calls;
  for (int r = 0; r < nranks; ++r) {
    auto same =
        std::find_if(calls.begin(), calls.end(), [&](const auto& c) { return c.first == all[r]; });
    if (same == calls.end()) {
      calls.push_back({all[r], {r}});
    } else {
      same->second.push_back(r);
    }
  }
  if (calls.size() == 1) return Status::success();
  std::string message = "BRAID_CHECK_CALLS: the ranks do not make the same call, nothing moved:";
  for (const auto& [digest, ranks] : calls) {
    message += (ranks.size() == 1 ? " rank " : " ranks ") + rankList(ranks) + ": " +
               describe(digest) + ";";
  }
  message.pop_back();
  return invalidUsage(message);
}

}  // namespace braid::comm
