// Copy for one rank (GPU communicators): a rank alone, whose operator leaves values as they are
// (all but premulsum: avg divides by 1), only copies: cudaMemcpyAsync-fast, and nothing at all
// in place, as NCCL does. It needs no algorithm, so the dispatcher asks it before choosing one.
#include "comm/gpu_side.h"
#include "comm/ways/ways.h"

namespace braid::comm {
namespace {

class GpuLoneCopyWay : public Way {
 public:
  explicit GpuLoneCopyWay(const WayParts& parts) : parts_(parts) {}

  bool needsChoice() const override { return false; }

  Outcome run(WayCall& wc) override {
    const CollectiveCall& call = wc.call;
    if (parts_.members.nranks != 1 || wc.spec.functor == RedOp::kPreMulSum) {
      return Outcome::declined();
    }
    const size_t bytes = call.count * dataTypeSize(call.type);
    GpuSide& gpu = *parts_.gpu;
    Status s = gpu.flush();  // what the group queued on this stream comes first
    if (s.ok() && call.input != call.output && bytes > 0) {
      s = gpu.runtime()
              .copy(call.output, call.input, bytes, call.stream)
              .withContext("a lone rank's copy");
    }
    return Outcome::ranIt(std::move(s));
  }

 private:
  WayParts parts_;
};

}  // namespace

std::unique_ptr<Way> makeGpuLoneCopyWay(const WayParts& parts) {
  return std::make_unique<GpuLoneCopyWay>(parts);
}

}  // namespace braid::comm
