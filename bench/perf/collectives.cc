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
// sendbuff == recvbuff for the rest. nccl-tests does not check the in-place
// form of alltoall and sendrecv, where a rank's sends and receives overlap.
#include "perf/collectives.h"

namespace braid::perf {
namespace {

using Kind = Segment::Kind;

size_t share(size_t count, size_t elemSize, int nranks) {
  const size_t unit = elemSize < 16 ? 16 / elemSize : 1;
  return count / nranks / unit * unit;
}

Geometry whole(size_t count, size_t, int) { return {count, count, count, 0, 0}; }

// Every rank contributes a share and receives all of them.
Geometry gathered(size_t count, size_t elemSize, int nranks) {
  const size_t b = share(count, elemSize, nranks);
  return {b, b * nranks, b, b, 0};
}

// Every rank sends all shares and receives one.
Geometry scattered(size_t count, size_t elemSize, int nranks) {
  const size_t b = share(count, elemSize, nranks);
  return {b * nranks, b, b, 0, b};
}

Geometry exchanged(size_t count, size_t elemSize, int nranks) {
  const size_t b = share(count, elemSize, nranks);
  return {b * nranks, b * nranks, b, 0, 0};
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

ncclResult_t allReduceRun(const Call& c) {
  return ncclAllReduce(c.send, c.recv, c.count, c.type, c.op, c.comm, nullptr);
}
ncclResult_t allGatherRun(const Call& c) {
  return ncclAllGather(c.send, c.recv, c.count, c.type, c.comm, nullptr);
}
ncclResult_t reduceScatterRun(const Call& c) {
  return ncclReduceScatter(c.send, c.recv, c.count, c.type, c.op, c.comm, nullptr);
}
ncclResult_t broadcastRun(const Call& c) {
  return ncclBroadcast(c.send, c.recv, c.count, c.type, c.root, c.comm, nullptr);
}
ncclResult_t reduceRun(const Call& c) {
  return ncclReduce(c.send, c.recv, c.count, c.type, c.op, c.root, c.comm, nullptr);
}
ncclResult_t alltoallRun(const Call& c) {
  return ncclAlltoAll(c.send, c.recv, c.count, c.type, c.comm, nullptr);
}
ncclResult_t gatherRun(const Call& c) {
  return ncclGather(c.send, c.recv, c.count, c.type, c.root, c.comm, nullptr);
}
ncclResult_t scatterRun(const Call& c) {
  return ncclScatter(c.send, c.recv, c.count, c.type, c.root, c.comm, nullptr);
}

// A ring shift: send to the next rank, receive from the previous, in one group.
ncclResult_t sendrecvRun(const Call& c) {
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return r;
  r = ncclSend(c.send, c.count, c.type, (c.rank + 1) % c.nranks, c.comm, nullptr);
  if (r == ncclSuccess) {
    r = ncclRecv(c.recv, c.count, c.type, (c.rank - 1 + c.nranks) % c.nranks, c.comm, nullptr);
  }
  // The group must be closed even when a call was refused; the refusal is the error to report.
  const ncclResult_t end = ncclGroupEnd();
  return r != ncclSuccess ? r : end;
}

const CollectiveSpec kCollectives[] = {
    {"all_reduce", "ncclAllReduce", true, false, true, whole, allReduceFactor, allReduceRun,
     allReduceExpect},
    {"all_gather", "ncclAllGather", false, false, true, gathered, spreadFactor, allGatherRun,
     allGatherExpect},
    {"reduce_scatter", "ncclReduceScatter", true, false, true, scattered, spreadFactor,
     reduceScatterRun, reduceScatterExpect},
    {"broadcast", "ncclBroadcast", false, true, true, whole, unitFactor, broadcastRun,
     broadcastExpect},
    {"reduce", "ncclReduce", true, true, true, whole, unitFactor, reduceRun, reduceExpect},
    {"alltoall", "ncclAlltoAll", false, false, false, exchanged, spreadFactor, alltoallRun,
     alltoallExpect},
    {"sendrecv", "ncclSend/ncclRecv", false, false, false, whole, unitFactor, sendrecvRun,
     sendrecvExpect},
    {"gather", "ncclGather", false, true, true, gathered, spreadFactor, gatherRun, gatherExpect},
    {"scatter", "ncclScatter", false, true, true, scattered, spreadFactor, scatterRun,
     scatterExpect},
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
