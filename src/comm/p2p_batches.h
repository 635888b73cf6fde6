// The batches of sends and receives that gather, scatter and the all-to-alls
// are made of on one rank. Comm runs them (Comm::sendRecv) and
// ncclGroupSimulateEnd times them (Comm::estimateP2pUs), so both see the
// same transfers.
#pragma once

#include <cstddef>
#include <vector>

#include "braid/comm.h"
#include "braid/types.h"

namespace braid {

/// Gather: every rank sends its input to the root, which receives block r
/// (count elements) from rank r into output + r * count.
std::vector<P2pOp> gatherBatch(int rank, int nranks, const void* input, void* output, size_t count,
                               DataType type, int root);

/// Scatter: the root sends block r of its input to rank r; every rank
/// receives its block into output.
std::vector<P2pOp> scatterBatch(int rank, int nranks, const void* input, void* output, size_t count,
                                DataType type, int root);

/// All-to-all: block j of the input goes to rank j; the block from rank i
/// lands at output + i * count.
std::vector<P2pOp> allToAllBatch(int nranks, const void* input, void* output, size_t count,
                                 DataType type);

/// All-to-all-v: sendCounts[j] elements at input + sendDispls[j] go to rank
/// j; recvCounts[i] elements from rank i land at output + recvDispls[i]
/// (displacements in elements). The arrays hold nranks entries.
std::vector<P2pOp> allToAllVBatch(int nranks, const void* input, const size_t* sendCounts,
                                  const size_t* sendDispls, void* output, const size_t* recvCounts,
                                  const size_t* recvDispls, DataType type);

}  // namespace braid
