// The engine's CPU instances: a block of a launch run by a team of threads (thread_team.h), with
// the code of the CUDA kernels (kernels/engine/engine_block.h), one per (datatype, operator)
// from the dispatch table.
#include "kernels/dispatch.h"
#include "kernels/engine/engine_block.h"
#include "kernels/engine/thread_team.h"
#include "kernels/engine_launch.h"

namespace braid::kernels {
namespace {

template <typename T, typename O>
void hostBlock(const void* args, unsigned block, unsigned /*blocks*/,
               const engine::ThreadTeam& team) {
  engine::runEngineBlock<engine::ThreadTeam, T, O>(
      team, *static_cast<const engine::EngineArgs*>(args), block);
}

}  // namespace

EngineKernel engineKernelFor(DataType type, RedOp op) {
  EngineKernel k;
  k.host = dispatchTypeAndOp(type, op, EngineHostBlock{nullptr}, [](auto t, auto o) {
    return &hostBlock<typename decltype(t)::Type, decltype(o)>;
  });
  if (k.host != nullptr) k.device = detail::engineDeviceKernelFor(type, op);
  return k;
}

unsigned engineThreadsPerBlock() { return engine::kEngineThreads; }

#if !defined(BRAID_HAVE_CUDA)
namespace detail {
const void* engineDeviceKernelFor(DataType, RedOp) { return nullptr; }
}  // namespace detail
#endif

}  // namespace braid::kernels
