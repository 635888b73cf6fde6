// A rank's private board in device memory: the plain struct a kernel reads (one-shot's
// OneShotBoard, the symmetric kernels' SymmetricBoard), then, 128-byte aligned, the zeroed state
// it points to (`state`), which only this rank's kernels write.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "base/align.h"
#include "braid/status.h"
#include "gpu/runtime.h"

namespace braid::exec {

/// Allocates device memory for `board` and its State, sets board.state to the state's place,
/// copies both there on `stream` and waits. Returns the allocation (the board at its start).
template <typename State, typename Board>
Result<void*> placeBoard(gpu::Runtime& runtime, Board& board, gpu::Stream stream) {
  const size_t stateAt = alignUp(sizeof(Board), 128);
  const size_t bytes = stateAt + sizeof(State);
  BRAID_ASSIGN_OR_RETURN(void* memory, runtime.deviceAlloc(bytes));
  board.state = reinterpret_cast<State*>(reinterpret_cast<uintptr_t>(memory) + stateAt);
  std::vector<unsigned char> image(bytes, 0);
  memcpy(image.data(), &board, sizeof board);
  Status copied = runtime.copy(memory, image.data(), image.size(), stream);
  if (copied.ok()) copied = runtime.streamSynchronize(stream);
  if (!copied.ok()) {
    (void)runtime.deviceFree(memory);
    return copied;
  }
  return memory;
}

}  // namespace braid::exec
