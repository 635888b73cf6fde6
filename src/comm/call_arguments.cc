// The rules of a call's arguments (call_arguments.h).
#include "comm/call_arguments.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace braid::comm {
namespace {

Status checkArray(const size_t* array, const char* name) {
  if (array == nullptr) return invalidArgument(std::string(name) + " is NULL");
  return Status::success();
}

// Bytes from the start of a buffer to the end of its last block, checked for overflow; `what`
// names the arrays in messages.
Result<size_t> extentBytes(const size_t* counts, const size_t* displs, int nranks, size_t elemBytes,
                           const std::string& what) {
  constexpr size_t kMax = SIZE_MAX;
  size_t end = 0;
  for (int b = 0; b < nranks; ++b) {
    if (counts[b] == 0) continue;
    if (displs[b] > kMax - counts[b] || displs[b] + counts[b] > kMax / elemBytes) {
      return invalidArgument(what + ": block " + std::to_string(b) + " (displacement " +
                             std::to_string(displs[b]) + ", count " + std::to_string(counts[b]) +
                             ") ends past the addressable range");
    }
    end = std::max(end, displs[b] + counts[b]);
  }
  return end * elemBytes;
}

bool intersects(size_t aBegin, size_t aCount, size_t bBegin, size_t bCount) {
  return aCount > 0 && bCount > 0 && aBegin < bBegin + bCount && bBegin < aBegin + aCount;
}

// The first two non-empty blocks that share an element, as a message.
Status checkDisjoint(const size_t* counts, const size_t* displs, int nranks,
                     const std::string& buffer) {
  std::vector<int> blocks;
  for (int b = 0; b < nranks; ++b) {
    if (counts[b] > 0) blocks.push_back(b);
  }
  std::sort(blocks.begin(), blocks.end(), [&](int a, int b) { return displs[a] < displs[b]; });
  for (size_t i = 1; i < blocks.size(); ++i) {
    const int a = blocks[i - 1];
    const int b = blocks[i];
    if (intersects(displs[a], counts[a], displs[b], counts[b])) {
      return invalidArgument("blocks " + std::to_string(std::min(a, b)) + " and " +
                             std::to_string(std::max(a, b)) + " of " + buffer +
                             " overlap (displacements and counts describe overlapping ranges)");
    }
  }
  return Status::success();
}

// Whether byte ranges [a, a + aBytes) and [b, b + bBytes) share a byte.
bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b);
  return aBytes > 0 && bBytes > 0 && x < y + bBytes && y < x + aBytes;
}

// Element `elems` of a buffer; a NULL buffer (allowed where nothing is read or written) stays
// NULL.
const char* at(const void* base, size_t elems, size_t elemBytes) {
  return base == nullptr ? nullptr : static_cast<const char*>(base) + elems * elemBytes;
}

// The variable-count layout, in the C API's names: all-gather-v's blocks are its recvcounts
// (the output's), reduce-scatter-v's its sendcounts (the input's). The block of this rank is
// the one the other buffer holds, and the in-place form puts that buffer at its displacement.
Status checkBlocks(const CollectiveCall& call, int rank, int nranks) {
  const bool gather = call.collective == Collective::kAllGather;
  const char* blocksName = gather ? "recvcounts" : "sendcounts";
  const char* countName = gather ? "sendcount" : "recvcount";
  const char* blocksBuffer = gather ? "recvbuff" : "sendbuff";
  const char* ownBuffer = gather ? "sendbuff" : "recvbuff";
  const size_t* counts = call.blockCounts;
  const size_t* displs = call.blockOffsets;
  BRAID_TRY(checkArray(counts, blocksName));
  BRAID_TRY(checkArray(displs, "displs"));
  if (call.count != counts[rank]) {
    return invalidArgument(std::string(countName) + " " + std::to_string(call.count) +
                           " differs from " + blocksName + "[" + std::to_string(rank) +
                           "] = " + std::to_string(counts[rank]) + " (this rank's block)");
  }
  const size_t elem = dataTypeSize(call.type);
  BRAID_ASSIGN_OR_RETURN(const size_t extent, extentBytes(counts, displs, nranks, elem,
                                                          std::string(blocksName) + "/displs"));
  const void* blocks = gather ? call.output : call.input;
  const void* own = gather ? call.input : call.output;
  if (call.count > 0 && own == nullptr) {
    return invalidArgument(std::string(ownBuffer) + " is NULL with " + countName + " > 0");
  }
  if (extent > 0 && blocks == nullptr) {
    return invalidArgument(std::string(blocksBuffer) + " is NULL with a " + blocksName +
                           " entry > 0");
  }
  // Written blocks must not share elements; read ones may.
  if (gather) BRAID_TRY(checkDisjoint(counts, displs, nranks, blocksBuffer));
  const bool inPlace = call.count > 0 && own == at(blocks, displs[rank], elem);
  if (!inPlace && overlaps(own, call.count * elem, blocks, extent)) {
    return invalidArgument(std::string(ownBuffer) + " overlaps " + blocksBuffer + " but is not " +
                           blocksBuffer + " + displs[" + std::to_string(rank) +
                           "] (the in-place form)");
  }
  // A reduce-scatter in place overwrites this rank's block while the others are still read.
  for (int b = 0; !gather && inPlace && b < nranks; ++b) {
    if (b != rank && intersects(displs[rank], call.count, displs[b], counts[b])) {
      return invalidArgument("in place, block " + std::to_string(rank) +
                             " (this rank's, the output) overlaps block " + std::to_string(b) +
                             " of sendbuff");
    }
  }
  return Status::success();
}

}  // namespace

Status checkVariableArguments(const CollectiveCall& call, int rank, int nranks) {
  if (!call.variableCounts) {
    return invalidArgument("block counts given to a call of the uniform layout");
  }
  if (call.collective != Collective::kAllGather && call.collective != Collective::kReduceScatter) {
    return invalidArgument(std::string(collectiveName(call.collective)) +
                           " has no variable-count form");
  }
  return checkBlocks(call, rank, nranks);
}

Status checkAllToAllVArguments(const void* input, const size_t* sendCounts,
                               const size_t* sendDispls, const void* output,
                               const size_t* recvCounts, const size_t* recvDispls, DataType type,
                               int nranks) {
  BRAID_TRY(checkDataType(type));
  const size_t elem = dataTypeSize(type);
  BRAID_TRY(checkArray(sendCounts, "sendcounts"));
  BRAID_TRY(checkArray(sendDispls, "sdispls"));
  BRAID_TRY(checkArray(recvCounts, "recvcounts"));
  BRAID_TRY(checkArray(recvDispls, "rdispls"));
  BRAID_ASSIGN_OR_RETURN(const size_t sendExtent,
                         extentBytes(sendCounts, sendDispls, nranks, elem, "sendcounts/sdispls"));
  BRAID_ASSIGN_OR_RETURN(const size_t recvExtent,
                         extentBytes(recvCounts, recvDispls, nranks, elem, "recvcounts/rdispls"));
  if (sendExtent > 0 && input == nullptr) {
    return invalidArgument("sendbuff is NULL with a sendcounts entry > 0");
  }
  if (recvExtent > 0 && output == nullptr) {
    return invalidArgument("recvbuff is NULL with a recvcounts entry > 0");
  }
  BRAID_TRY(checkDisjoint(recvCounts, recvDispls, nranks, "recvbuff"));
  // The sends of the batch read while its receives write, in any order.
  if (overlaps(input, sendExtent, output, recvExtent)) {
    return invalidArgument("sendbuff and recvbuff overlap (all-to-all-v has no in-place form)");
  }
  return Status::success();
}

}  // namespace braid::comm
