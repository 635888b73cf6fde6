// The fixture of ptxas_check_verdict.sh: the engine's reduce loop (transformLoop) under the
// engine kernel's launch bounds, with an element function that, when BRAID_PTXAS_SPILL is
// defined, holds twice the registers a thread has at once (a chain of values, each from the one
// before, then used last to first, so that none can be dropped or cheaply recomputed): ptxas must
// spill in the loop, and scripts/lib/ptxas_check.py must name it. Without it, the same loop does
// not.
#include <cstddef>

#include "kernels/engine/elementwise.h"
#include "kernels/engine/launch.h"
#include "kernels/engine/team.h"

namespace braid::kernels::engine {

#if defined(BRAID_PTXAS_SPILL)
inline constexpr int kLiveValues = 2 * kEngineRegisters;
#else
inline constexpr int kLiveValues = 1;
#endif

struct Greedy {
  __device__ float operator()(const float (&x)[2]) const {
    float v[kLiveValues];
    v[0] = x[0];
    BRAID_UNROLL
    for (int i = 1; i < kLiveValues; ++i) v[i] = v[i - 1] * v[i - 1] + x[1];
    float sum = x[1];
    BRAID_UNROLL
    for (int i = kLiveValues - 1; i >= 0; --i) sum = sum * v[i] + x[0];
    return sum;
  }
};

__global__ void __launch_bounds__(kEngineThreads, kEngineMinBlocksPerSm)
    greedyLoop(float* dst, const float* src, size_t n) {
  transformLoop<0>(BlockTeam{}, Operands<float, 1, 2>{{dst}, {src, src + n}}, n, Greedy{});
}

}  // namespace braid::kernels::engine
