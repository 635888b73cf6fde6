#include "comm/p2p_batches.h"

namespace braid {
namespace {

// Sends only read their buffer; P2pOp has one pointer for both directions.
void* elementAt(const void* base, size_t elems, DataType type) {
  if (base == nullptr) return nullptr;
  return const_cast<char*>(static_cast<const char*>(base)) + elems * dataTypeSize(type);
}

P2pOp makeOp(P2pOp::Kind kind, int peer, void* buffer, size_t count, DataType type) {
  P2pOp op;
  op.kind = kind;
  op.peer = peer;
  op.buffer = buffer;
  op.count = count;
  op.type = type;
  return op;
}

}  // namespace

std::vector<P2pOp> gatherBatch(int rank, int nranks, const void* input, void* output, size_t count,
                               DataType type, int root) {
  std::vector<P2pOp> ops{makeOp(P2pOp::Kind::kSend, root, elementAt(input, 0, type), count, type)};
  if (rank == root) {
    for (int r = 0; r < nranks; ++r) {
      ops.push_back(makeOp(P2pOp::Kind::kRecv, r, elementAt(output, r * count, type), count, type));
    }
  }
  return ops;
}

std::vector<P2pOp> scatterBatch(int rank, int nranks, const void* input, void* output, size_t count,
                                DataType type, int root) {
  std::vector<P2pOp> ops;
  if (rank == root) {
    for (int r = 0; r < nranks; ++r) {
      ops.push_back(makeOp(P2pOp::Kind::kSend, r, elementAt(input, r * count, type), count, type));
    }
  }
  ops.push_back(makeOp(P2pOp::Kind::kRecv, root, elementAt(output, 0, type), count, type));
  return ops;
}

std::vector<P2pOp> allToAllBatch(int nranks, const void* input, void* output, size_t count,
                                 DataType type) {
  std::vector<P2pOp> ops;
  ops.reserve(2 * static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    ops.push_back(makeOp(P2pOp::Kind::kSend, r, elementAt(input, r * count, type), count, type));
    ops.push_back(makeOp(P2pOp::Kind::kRecv, r, elementAt(output, r * count, type), count, type));
  }
  return ops;
}

std::vector<P2pOp> allToAllVBatch(int nranks, const void* input, const size_t* sendCounts,
                                  const size_t* sendDispls, void* output, const size_t* recvCounts,
                                  const size_t* recvDispls, DataType type) {
  std::vector<P2pOp> ops;
  ops.reserve(2 * static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    ops.push_back(
        makeOp(P2pOp::Kind::kSend, r, elementAt(input, sendDispls[r], type), sendCounts[r], type));
    ops.push_back(
        makeOp(P2pOp::Kind::kRecv, r, elementAt(output, recvDispls[r], type), recvCounts[r], type));
  }
  return ops;
}

}  // namespace braid
