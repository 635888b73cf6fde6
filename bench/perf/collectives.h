// The collectives braid-perf measures, one table entry each, with nccl-tests'
// names and conventions (nccl-tests' <coll>.cu files): how a row's size turns
// into the counts of the call, where the in-place form puts the buffers, the
// bus-bandwidth factor, the call itself, and what every rank's output must
// hold afterwards. braid's variable-count collectives (all_gatherv,
// reduce_scatterv, alltoallv; braid_ext.h) have entries too: their blocks
// differ from rank to rank, so a rank's counts come from RankGeometry.
#pragma once

#include <string>
#include <vector>

#include "nccl.h"

namespace braid::perf {

/// Element counts of one call, derived from a row's element count as
/// nccl-tests derives them: what each rank sends and receives, the count
/// argument of the call, and, for the in-place form, where input and output
/// start in the receive buffer (in units of these offsets times the rank).
struct Geometry {
  size_t sendCount = 0;
  size_t recvCount = 0;
  size_t paramCount = 0;
  size_t sendInplaceOffset = 0;
  size_t recvInplaceOffset = 0;
  /// Variable-count collectives: elements of each rank's block (empty for
  /// the others); see collectives.cc for the pattern.
  std::vector<size_t> blocks;
};

/// Per-rank counts and displacements of a variable-count call, in elements.
struct VCounts {
  std::vector<size_t> sendCounts;
  std::vector<size_t> sendDispls;
  std::vector<size_t> recvCounts;
  std::vector<size_t> recvDispls;
};

/// One rank's part of a row: what its buffers hold and, in place, where its
/// input and output start in its receive buffer (elements).
struct RankGeometry {
  size_t sendCount = 0;
  size_t recvCount = 0;
  size_t sendInplaceAt = 0;
  size_t recvInplaceAt = 0;
  VCounts v;  ///< variable-count collectives only
};

/// One call to issue on one rank.
struct Call {
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  ///< Geometry::paramCount
  ncclDataType_t type = ncclFloat;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  ncclComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
  const VCounts* v = nullptr;     ///< variable-count collectives: this rank's counts
  cudaStream_t stream = nullptr;  ///< a GPU rank's stream (nullptr on host memory)
};

/// A run of a rank's output elements and what they must hold after the call.
struct Segment {
  enum class Kind {
    kCopy,       ///< rank srcRank's input elements srcIndex ...
    kReduce,     ///< the reduction of every rank's input elements srcIndex ...
    kUnchanged,  ///< what was there before the call (a non-root's receive buffer)
  };
  Kind kind = Kind::kCopy;
  size_t offset = 0;  ///< first element of the output
  size_t length = 0;
  int srcRank = 0;
  size_t srcIndex = 0;
};

struct CollectiveSpec {
  const char* name;      ///< nccl-tests' name, e.g. all_gather
  const char* function;  ///< the NCCL call, for messages
  bool hasOp;            ///< reduces with an operator (the redop column, -o)
  bool rooted;           ///< has a root (the root column, -r)
  /// Whether the in-place form has a defined result to check; nccl-tests
  /// prints N/A in the in-place #wrong column of the others.
  bool checkInPlace;
  /// Whether there is an in-place form to run at all: braidAlltoAllV refuses
  /// overlapping buffers, and alltoall and sendrecv in place race (their sends
  /// read what their receives write), so their in-place cells read N/A.
  bool runsInPlace;
  Geometry (*geometry)(size_t count, size_t elemSize, int nranks);
  /// Rank `rank`'s part of the row's geometry.
  RankGeometry (*rankGeometry)(const Geometry& g, int rank, int nranks);
  /// nccl-tests' busbw / algbw (doc/PERFORMANCE.md).
  double (*busFactor)(int nranks);
  ncclResult_t (*run)(const Call& call);
  /// Rank `rank`'s output, in segments that cover RankGeometry::recvCount elements.
  std::vector<Segment> (*expect)(const Geometry& g, int rank, int nranks, int root);
};

/// The entry named `name`, or nullptr.
const CollectiveSpec* findCollective(const std::string& name);

/// Every name, space-separated, for usage and error messages.
std::string collectiveNames();

}  // namespace braid::perf
