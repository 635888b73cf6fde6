// The soak's calls (call_run.h): the matrix collectives through CaseRun, the v-collectives
// through VariableRun.
#include "soak/call_run.h"

#include <algorithm>
#include <vector>

#include "api/matrix_cases.h"
#include "soak/variable_call.h"

namespace braid::soak {
namespace {

matrix::Case toCase(const PlannedCall& call, int nranks) {
  return {toMatrix(call.coll), call.type, call.op, call.count, nranks, call.inPlace, call.root};
}

/// A matrix collective: CaseRun prepares only this rank (onlyRank) and checks its regions.
class MatrixRun final : public CallRun {
 public:
  MatrixRun(const PlannedCall& call, int rank, int nranks, const Target& target)
      : rank_(rank), target_(target), run_(toCase(call, nranks), call.seed, rank) {
    const matrix::RankState& st = run_.rank(rank_);
    for (int g = 0; g < st.nregions; ++g) {
      bytes_ = std::max(bytes_, st.regions[g].bytes.size() - 2 * matrix::Region::kGuard);
    }
  }

  ncclResult_t prepare() override {
    if (target_.device != nullptr) {
      const ncclResult_t r = run_.toDevice(rank_, target_.device, target_.stream);
      if (r != ncclSuccess) return r;
    }
    return run_.createOp(rank_, target_.comm);
  }
  ncclResult_t issue() override { return run_.issue(rank_, target_.comm); }
  ncclResult_t finish() override {
    const ncclResult_t back = target_.device != nullptr ? run_.fromDevice(rank_) : ncclSuccess;
    const ncclResult_t destroyed = run_.destroyOp(rank_, target_.comm);
    return back != ncclSuccess ? back : destroyed;
  }
  Verdict check() override {
    const ::testing::AssertionResult result = run_.check(rank_);
    Verdict v;
    v.right = static_cast<bool>(result);
    if (!v.right) v.detail = result.message();
    return v;
  }
  size_t bytes() const override { return bytes_; }
  void corrupt(uint64_t where) override {
    matrix::RankState& st = run_.rank(rank_);
    std::vector<unsigned char>& bytes = st.regions[where % st.nregions].bytes;
    bytes[(where >> 8) % bytes.size()] ^= 0xff;
  }

 private:
  int rank_;
  Target target_;
  matrix::CaseRun run_;
  size_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<CallRun> makeCallRun(const PlannedCall& call, int rank, int nranks,
                                     const Target& target) {
  if (isVariable(call.coll)) return makeVariableRun(call, rank, nranks, target);
  return std::make_unique<MatrixRun>(call, rank, nranks, target);
}

}  // namespace braid::soak
