// braid-perf's table of collectives (see collectives.h).
//
// Counts follow current nccl-tests: from a row of `size` bytes, count = size /
// typesize; collectives that split the buffer among ranks give each rank
// count / nranks elements, rounded down to whole 16-byte units. The size
// column then shows the larger of what a rank sends and receives, and the
// count column the count argument of the call.
//
// In place, as nccl-tests calls it: the input lives at recvbuff +
// rank * sendInplaceOffset and the output at recvbuff + rank *
// recvInplaceOffset, which gives all_gather's sendbuff == recvbuff + rank *
// sendcount, reduce_scatter's recvbuff == sendbuff + rank * recvcount, and
// sendbuff == recvbuff for the rest. alltoall and sendrecv have no in-place
// form here: with one buffer a rank's receives write what its sends are still
// reading, a data race of the caller's (ThreadSanitizer reports it in the
// engine's copy loops). nccl-tests times that call but cannot check it;
// braid-perf runs neither, and its in-place cells read N/A.
//
// The variable-count collectives (braid_ext.h) split the same total as their
// uniform twins (nranks shares of whole 16-byte units) unevenly: rank r's
// block is (r + 1) / (1 + 2 + ... + nranks) of it, in whole 16-byte units
// rounded down, the last rank taking what rounding leaves. Blocks grow with
// the rank, and the first ones are empty at small sizes. Blocks lie in rank
// order without gaps, so rank r's block starts at the sum of the blocks
// before it. all_gatherv and reduce_scatterv use them as the ranks' blocks
// (in place as braid_ext.h defines it: sendbuff == recvbuff + displs[rank],
// recvbuff == sendbuff + displs[rank]); alltoallv sends blocks[(i + j) % n]
// elements from rank i to rank j, so every rank sends and receives the
// total, each in a different split. The size column is the total in bytes
// and the count column the mean block, as the uniform twin prints them, and
// busbw uses the uniform twin's factor, so rows compare line by line.
#include "perf/collectives.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "braid_ext.h"

namespace braid::perf {
namespace {

using Kind = Segment::Kind;

size_t share(size_t count, size_t elemSize, int nranks) {
  const size_t unit = elemSize < 16 ? 16 / elemSize : 1;
  return count / nranks / unit * unit;
}

Geometry whole(size_t count, size_t, int) { return {count, count, count, 0, 0, {}}; }

// Every rank contributes a share and receives all of them.
Geometry gathered(size_t count, size_t elemSize, int nranks) {
  const size_t b = share(count, elemSize, nranks);
  return {b, b * nranks, b, b, 0, {}};
}

// Every rank sends all shares and receives one.
Geometry scattered(size_t count, size_t elemSize, int nranks) {
  const size_t b = share(count, elemSize, nranks);
  return {b * nranks, b, b, 0, b, {}};
}

Geometry exchanged(size_t count, size_t elemSize, int nranks) {
  const size_t b = share(count, elemSize, nranks);
  return {b * nranks, b * nranks, b, 0, 0, {}};
}

// Blocks of the variable-count collectives (top of the file); paramCount is
// the mean block.
Geometry varied(size_t count, size_t elemSize, int nranks) {
  const size_t unit = elemSize < 16 ? 16 / elemSize : 1;
  const size_t units = share(count, elemSize, nranks) / unit * nranks;
  const size_t weights = static_cast<size_t>(nranks) * (nranks + 1) / 2;
  Geometry g;
  g.blocks.resize(nranks);
  size_t given = 0;
  for (int r = 0; r + 1 < nranks; ++r) {
    g.blocks[r] = units * (r + 1) / weights * unit;
    given += g.blocks[r];
  }
  g.blocks[nranks - 1] = units * unit - given;
  g.paramCount = share(count, elemSize, nranks);
  return g;
}

size_t totalOf(const Geometry& g) {
  return std::accumulate(g.blocks.begin(), g.blocks.end(), size_t{0});
}
size_t largestOf(const Geometry& g) { return *std::max_element(g.blocks.begin(), g.blocks.end()); }

// As gathered, scattered and exchanged: the larger of what a rank sends and
// receives is the total.
Geometry gatheredV(size_t count, size_t elemSize, int nranks) {
  Geometry g = varied(count, elemSize, nranks);
  g.sendCount = largestOf(g);
  g.recvCount = totalOf(g);
  return g;
}
Geometry scatteredV(size_t count, size_t elemSize, int nranks) {
  Geometry g = varied(count, elemSize, nranks);
  g.sendCount = totalOf(g);
  g.recvCount = largestOf(g);
  return g;
}
Geometry exchangedV(size_t count, size_t elemSize, int nranks) {
  Geometry g = varied(count, elemSize, nranks);
  g.sendCount = g.recvCount = totalOf(g);
  return g;
}

// Where blocks of these counts start when they lie back to back.
std::vector<size_t> packed(const std::vector<size_t>& counts) {
  std::vector<size_t> displs(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  return displs;
}

RankGeometry uniformRank(const Geometry& g, int rank, int) {
  RankGeometry r;
  r.sendCount = g.sendCount;
  r.recvCount = g.recvCount;
  r.sendInplaceAt = g.sendInplaceOffset * rank;
  r.recvInplaceAt = g.recvInplaceOffset * rank;
  return r;
}

RankGeometry allGatherVRank(const Geometry& g, int rank, int) {
  RankGeometry r;
  r.v.recvCounts = g.blocks;
  r.v.recvDispls = packed(g.blocks);
  r.sendCount = g.blocks[rank];
  r.recvCount = totalOf(g);
  r.sendInplaceAt = r.v.recvDispls[rank];
  return r;
}

RankGeometry reduceScatterVRank(const Geometry& g, int rank, int) {
  RankGeometry r;
  r.v.sendCounts = g.blocks;
  r.v.sendDispls = packed(g.blocks);
  r.sendCount = totalOf(g);
  r.recvCount = g.blocks[rank];
  r.recvInplaceAt = r.v.sendDispls[rank];
  return r;
}

// Rank i sends blocks[(i + j) % n] elements to rank j.
size_t pairCount(const Geometry& g, int from, int to, int nranks) {
  return g.blocks[(from + to) % nranks];
}

RankGeometry alltoallVRank(const Geometry& g, int rank, int nranks) {
  RankGeometry r;
  for (int p = 0; p < nranks; ++p) {
    r.v.sendCounts.push_back(pairCount(g, rank, p, nranks));
    r.v.recvCounts.push_back(pairCount(g, p, rank, nranks));
  }
  r.v.sendDispls = packed(r.v.sendCounts);
  r.v.recvDispls = packed(r.v.recvCounts);
  r.sendCount = r.recvCount = totalOf(g);
  return r;
}

// As nccl-tests' formulas, also for one rank, where nothing crosses a bus: busbw 0.
double allReduceFactor(int n) { return 2.0 * (n - 1) / n; }
double spreadFactor(int n) { return static_cast<double>(n - 1) / n; }
double unitFactor(int) { return 1.0; }

// Rank r's input, shares of `length` elements from `srcIndex`, at r * length.
std::vector<Segment> everyRank(int nranks, size_t length, size_t srcIndex) {
  std::vector<Segment> s;
  for (int r = 0; r < nranks; ++r) s.push_back({Kind::kCopy, r * length, length, r, srcIndex});
  return s;
}

std::vector<Segment> allReduceExpect(const Geometry& g, int, int, int) {
  return {{Kind::kReduce, 0, g.recvCount, 0, 0}};
}
std::vector<Segment> allGatherExpect(const Geometry& g, int, int nranks, int) {
  return everyRank(nranks, g.sendCount, 0);
}
std::vector<Segment> reduceScatterExpect(const Geometry& g, int rank, int, int) {
  return {{Kind::kReduce, 0, g.recvCount, 0, rank * g.recvCount}};
}
std::vector<Segment> broadcastExpect(const Geometry& g, int, int, int root) {
  return {{Kind::kCopy, 0, g.recvCount, root, 0}};
}
std::vector<Segment> reduceExpect(const Geometry& g, int rank, int, int root) {
  if (rank != root) return {{Kind::kUnchanged, 0, g.recvCount, 0, 0}};
  return {{Kind::kReduce, 0, g.recvCount, 0, 0}};
}
std::vector<Segment> alltoallExpect(const Geometry& g, int rank, int nranks, int) {
  return everyRank(nranks, g.paramCount, rank * g.paramCount);
}
std::vector<Segment> sendrecvExpect(const Geometry& g, int rank, int nranks, int) {
  return {{Kind::kCopy, 0, g.recvCount, (rank - 1 + nranks) % nranks, 0}};
}
std::vector<Segment> gatherExpect(const Geometry& g, int rank, int nranks, int root) {
  if (rank != root) return {{Kind::kUnchanged, 0, g.recvCount, 0, 0}};
  return everyRank(nranks, g.sendCount, 0);
}
std::vector<Segment> scatterExpect(const Geometry& g, int rank, int, int root) {
  return {{Kind::kCopy, 0, g.recvCount, root, rank * g.recvCount}};
}

std::vector<Segment> allGatherVExpect(const Geometry& g, int, int nranks, int) {
  const std::vector<size_t> displs = packed(g.blocks);
  std::vector<Segment> s;
  for (int r = 0; r < nranks; ++r) s.push_back({Kind::kCopy, displs[r], g.blocks[r], r, 0});
  return s;
}
std::vector<Segment> reduceScatterVExpect(const Geometry& g, int rank, int, int) {
  return {{Kind::kReduce, 0, g.blocks[rank], 0, packed(g.blocks)[rank]}};
}
// From rank i: its block for this rank, which starts at i's send displacement
// for this rank.
std::vector<Segment> alltoallVExpect(const Geometry& g, int rank, int nranks, int) {
  const RankGeometry mine = alltoallVRank(g, rank, nranks);
  std::vector<Segment> s;
  for (int i = 0; i < nranks; ++i) {
    const RankGeometry from = alltoallVRank(g, i, nranks);
    s.push_back(
        {Kind::kCopy, mine.v.recvDispls[i], mine.v.recvCounts[i], i, from.v.sendDispls[rank]});
  }
  return s;
}

ncclResult_t allReduceRun(const Call& c) {
  return ncclAllReduce(c.send, c.recv, c.count, c.type, c.op, c.comm, c.stream);
}
ncclResult_t allGatherRun(const Call& c) {
  return ncclAllGather(c.send, c.recv, c.count, c.type, c.comm, c.stream);
}
ncclResult_t reduceScatterRun(const Call& c) {
  return ncclReduceScatter(c.send, c.recv, c.count, c.type, c.op, c.comm, c.stream);
}
ncclResult_t broadcastRun(const Call& c) {
  return ncclBroadcast(c.send, c.recv, c.count, c.type, c.root, c.comm, c.stream);
}
ncclResult_t reduceRun(const Call& c) {
  return ncclReduce(c.send, c.recv, c.count, c.type, c.op, c.root, c.comm, c.stream);
}
ncclResult_t alltoallRun(const Call& c) {
  return ncclAlltoAll(c.send, c.recv, c.count, c.type, c.comm, c.stream);
}
ncclResult_t gatherRun(const Call& c) {
  return ncclGather(c.send, c.recv, c.count, c.type, c.root, c.comm, c.stream);
}
ncclResult_t scatterRun(const Call& c) {
  return ncclScatter(c.send, c.recv, c.count, c.type, c.root, c.comm, c.stream);
}

// braid's own collectives (braid_ext.h) are weak references: against a
// libnccl.so.2 without them (NVIDIA's) they are null, and the call says so.
#pragma weak braidAllGatherV
#pragma weak braidReduceScatterV
#pragma weak braidAlltoAllV

ncclResult_t notInThisLibrary(const char* function) {
  fprintf(stderr, "braid-perf: %s is braid's own; the libnccl.so.2 loaded has no such function\n",
          function);
  return ncclInvalidUsage;
}

ncclResult_t allGatherVRun(const Call& c) {
  if (&braidAllGatherV == nullptr) return notInThisLibrary("braidAllGatherV");
  return braidAllGatherV(c.send, c.v->recvCounts[c.rank], c.recv, c.v->recvCounts.data(),
                         c.v->recvDispls.data(), c.type, c.comm, c.stream);
}
ncclResult_t reduceScatterVRun(const Call& c) {
  if (&braidReduceScatterV == nullptr) return notInThisLibrary("braidReduceScatterV");
  return braidReduceScatterV(c.send, c.v->sendCounts.data(), c.v->sendDispls.data(), c.recv,
                             c.v->sendCounts[c.rank], c.type, c.op, c.comm, c.stream);
}
ncclResult_t alltoallVRun(const Call& c) {
  if (&braidAlltoAllV == nullptr) return notInThisLibrary("braidAlltoAllV");
  return braidAlltoAllV(c.send, c.v->sendCounts.data(), c.v->sendDispls.data(), c.recv,
                        c.v->recvCounts.data(), c.v->recvDispls.data(), c.type, c.comm, c.stream);
}

// A ring shift: send to the next rank, receive from the previous, in one group.
ncclResult_t sendrecvRun(const Call& c) {
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return r;
  r = ncclSend(c.send, c.count, c.type, (c.rank + 1) % c.nranks, c.comm, c.stream);
  if (r == ncclSuccess) {
    r = ncclRecv(c.recv, c.count, c.type, (c.rank - 1 + c.nranks) % c.nranks, c.comm, c.stream);
  }
  // The group must be closed even when a call was refused; the refusal is the error to report.
  const ncclResult_t end = ncclGroupEnd();
  return r != ncclSuccess ? r : end;
}

const CollectiveSpec kCollectives[] = {
    {"all_reduce", "ncclAllReduce", true, false, true, true, whole, uniformRank, allReduceFactor,
     allReduceRun, allReduceExpect},
    {"all_gather", "ncclAllGather", false, false, true, true, gathered, uniformRank, spreadFactor,
     allGatherRun, allGatherExpect},
    {"reduce_scatter", "ncclReduceScatter", true, false, true, true, scattered, uniformRank,
     spreadFactor, reduceScatterRun, reduceScatterExpect},
    {"broadcast", "ncclBroadcast", false, true, true, true, whole, uniformRank, unitFactor,
     broadcastRun, broadcastExpect},
    {"reduce", "ncclReduce", true, true, true, true, whole, uniformRank, unitFactor, reduceRun,
     reduceExpect},
    {"alltoall", "ncclAlltoAll", false, false, false, false, exchanged, uniformRank, spreadFactor,
     alltoallRun, alltoallExpect},
    {"sendrecv", "ncclSend/ncclRecv", false, false, false, false, whole, uniformRank, unitFactor,
     sendrecvRun, sendrecvExpect},
    {"gather", "ncclGather", false, true, true, true, gathered, uniformRank, spreadFactor,
     gatherRun, gatherExpect},
    {"scatter", "ncclScatter", false, true, true, true, scattered, uniformRank, spreadFactor,
     scatterRun, scatterExpect},
    {"all_gatherv", "braidAllGatherV", false, false, true, true, gatheredV, allGatherVRank,
     spreadFactor, allGatherVRun, allGatherVExpect},
    {"reduce_scatterv", "braidReduceScatterV", true, false, true, true, scatteredV,
     reduceScatterVRank, spreadFactor, reduceScatterVRun, reduceScatterVExpect},
    {"alltoallv", "braidAlltoAllV", false, false, false, false, exchangedV, alltoallVRank,
     spreadFactor, alltoallVRun, alltoallVExpect},
};

}  // namespace

const CollectiveSpec* findCollective(const std::string& name) {
  for (const CollectiveSpec& c : kCollectives) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string collectiveNames() {
  std::string names;
  for (const CollectiveSpec& c : kCollectives) {
    if (!names.empty()) names += ' ';
    names += c.name;
  }
  return names;
}

}  // namespace braid::perf
