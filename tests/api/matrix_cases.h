// One case of the collective matrix (collective x datatype x op x count x ranks x placement x
// root) run through the C API and checked byte by byte on every rank.
//
// A case lays out, for each rank, the buffers it passes: one or two "regions", each a heap block
// with guard bytes on both sides, filled with the rank's input where the call reads it and with
// random bytes everywhere else. From the inputs of all ranks it derives what every byte of every
// region must hold afterwards: the bytes that were there (guards, send buffers, outputs NCCL
// leaves alone, such as a non-root's receive buffer of ncclReduce), copied data (gather,
// broadcast, ...) or, for reductions, elements checked against matrix_reference.h. In-place
// calls use NCCL's aliasing: all_gather's sendbuff is recvbuff + rank * count, reduce_scatter's
// recvbuff is sendbuff + rank * count, gather's sendbuff is recvbuff + root * count (every rank
// passes its own block, as a program sharing one layout would), scatter's recvbuff is
// sendbuff + root * count; the others pass one buffer for both.
//
// The same case runs with every rank on a thread of this process (prepare all ranks) or with
// one rank per process (prepare and check only that rank; inputs of all ranks are derived from
// the seed, so every process knows them).
#pragma once

#include <gtest/gtest.h>
#include <malloc.h>

#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/matrix_reference.h"
#include "braid_ext.h"
#include "nccl.h"

namespace braid::testing::matrix {

enum class Coll {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kBcast,
  kReduce,
  kSendRecv,
  kGather,
  kScatter,
  kAlltoAll,
};

/// Keeps the memory a case frees in the process, for the next case to reuse. glibc serves a
/// block of 128 KiB or more with mmap and unmaps it when freed, so a case at (1 << 20) + 3
/// elements (up to 32 MiB of input a rank) faulted every page of its buffers in afresh: in a VM
/// that was half of the case's time. Call before the first case; no effect under a sanitizer,
/// whose allocator is its own.
inline void keepFreedMemory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

inline constexpr Coll kAllColls[] = {
    Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllGather, Coll::kBroadcast, Coll::kBcast,
    Coll::kReduce,    Coll::kSendRecv,      Coll::kGather,    Coll::kScatter,   Coll::kAlltoAll};

inline const char* collName(Coll c) {
  static const char* const kNames[] = {"AllReduce", "ReduceScatter", "AllGather", "Broadcast",
                                       "Bcast",     "Reduce",        "SendRecv",  "Gather",
                                       "Scatter",   "AlltoAll"};
  return kNames[static_cast<int>(c)];
}

/// Lets gtest print a Coll parameter by name.
inline void PrintTo(Coll c, std::ostream* os) { *os << collName(c); }

inline bool reduces(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kReduceScatter || c == Coll::kReduce;
}

/// Collectives with a root; for SendRecv the "root" is the shift: rank r sends to r + root.
inline bool rooted(Coll c) {
  return c == Coll::kBroadcast || c == Coll::kBcast || c == Coll::kReduce || c == Coll::kGather ||
         c == Coll::kScatter || c == Coll::kSendRecv;
}

/// NCCL defines no in-place form for all-to-all and send/receive; ncclBcast is only in place.
inline bool hasInPlace(Coll c) { return c != Coll::kAlltoAll && c != Coll::kSendRecv; }
inline bool hasOutOfPlace(Coll c) { return c != Coll::kBcast; }

/// Elements each rank's input holds: nranks blocks for the collectives that split their input.
inline size_t inputElems(Coll c, size_t count, int nranks) {
  const bool blocks = c == Coll::kReduceScatter || c == Coll::kScatter || c == Coll::kAlltoAll;
  return blocks ? count * nranks : count;
}

struct Case {
  Coll coll = Coll::kAllReduce;
  ncclDataType_t type = ncclFloat32;
  Op op = Op::kSum;  ///< ignored by the collectives that do not reduce
  size_t count = 0;
  int nranks = 1;
  bool inPlace = false;
  int root = 0;  ///< ignored by the collectives without one
};

/// "AllReduce float32 sum count=7 nranks=3 in-place root=1": enough to repeat the case.
inline std::string caseName(const Case& c) {
  std::string s = std::string(collName(c.coll)) + " " + typeInfo(c.type).name;
  if (reduces(c.coll)) s += std::string(" ") + opName(c.op);
  s += " count=" + std::to_string(c.count) + " nranks=" + std::to_string(c.nranks);
  s += c.inPlace ? " in-place" : " out-of-place";
  if (rooted(c.coll))
    s += (c.coll == Coll::kSendRecv ? " shift=" : " root=") + std::to_string(c.root);
  return s;
}

inline uint64_t caseSeed(const Case& c, uint64_t seed) {
  uint64_t s = mixSeed(seed, static_cast<uint64_t>(c.coll));
  s = mixSeed(s, static_cast<uint64_t>(c.type));
  s = mixSeed(s, static_cast<uint64_t>(c.op));
  s = mixSeed(s, c.count);
  s = mixSeed(s, static_cast<uint64_t>(c.nranks));
  return mixSeed(s, static_cast<uint64_t>(c.root) * 2 + (c.inPlace ? 1 : 0));
}

/// A heap block with guards: `payload` bytes between two kGuard-byte margins.
struct Region {
  static constexpr size_t kGuard = 64;
  std::vector<unsigned char> bytes;     ///< what the region holds
  std::vector<unsigned char> expected;  ///< what it must hold after the call (outside reductions)
  unsigned char* payload() { return bytes.data() + kGuard; }
};

/// Elements of a region that must hold reduced results: [offset, offset + count) of region
/// `region` holds reduction elements [first, first + count).
struct ReducedRange {
  int region = 0;
  size_t offset = 0;
  size_t count = 0;
  size_t first = 0;
};

struct RankState {
  Region regions[2];
  int nregions = 0;
  void* send = nullptr;
  void* recv = nullptr;
  int sendRegion = 0;  ///< where send and recv lie: region and element offset
  size_t sendAt = 0;
  int recvRegion = 0;
  size_t recvAt = 0;
  std::vector<ReducedRange> reduced;
  uint64_t scalar = 0;  ///< premulsum's scalar; a Device op reads it here when the call runs
  ncclRedOp_t op = ncclSum;

  // On a GPU communicator (CaseRun::toDevice): the regions' copies in device memory, the
  // premulsum scalar there, and the stream the call goes on. issue() passes these.
  const braidDeviceApi* device = nullptr;
  void* deviceRegions[2] = {nullptr, nullptr};
  void* deviceScalar = nullptr;
  cudaStream_t stream = nullptr;
};

class CaseRun {
 public:
  /// Prepares every rank, or only `onlyRank` when it is not -1.
  CaseRun(const Case& c, uint64_t seed, int onlyRank = -1)
      : case_(c), type_(typeInfo(c.type)), elem_(type_.bytes), ranks_(c.nranks) {
    const uint64_t s = caseSeed(c, seed);
    const size_t in = inputElems(c.coll, c.count, c.nranks);
    inputs_.resize(c.nranks);
    scalars_.resize(c.nranks);
    for (int r = 0; r < c.nranks; ++r) {
      Rng rng(mixSeed(s, r));
      scalars_[r] = randomScalar(type_, rng);
      // A broadcast's or scatter's non-root input is never read: its send buffer only has to
      // stay as it was, so it gets random bytes as any other unused memory does.
      if (rooted(c.coll) && c.coll != Coll::kGather && c.coll != Coll::kSendRecv &&
          c.coll != Coll::kReduce && r != c.root) {
        continue;
      }
      inputs_[r].resize(in * elem_);
      if (!reduces(c.coll)) {
        randomBytes(rng, inputs_[r].data(), inputs_[r].size());  // values do not matter
        continue;
      }
      for (size_t i = 0; i < in; ++i) {
        type_.store(&inputs_[r][i * elem_], randomElement(type_, c.op, c.nranks, i, rng));
      }
    }
    reducer_ = std::make_unique<Reducer>(type_, c.op, c.nranks, scalars_.data());
    // All-reduce checks every element on every rank: work each out once.
    if (c.coll == Coll::kAllReduce && onlyRank < 0 && c.nranks > 1) {
      cache_.resize(c.count);
      cached_.assign(c.count, 0);
    }
    for (int r = 0; r < c.nranks; ++r) {
      if (onlyRank < 0 || onlyRank == r) layOut(r, mixSeed(s, 1000 + r));
    }
  }

  const Case& spec() const { return case_; }
  RankState& rank(int r) { return ranks_[r]; }

  /// Makes rank r's premulsum op (a no-op for other ops). A device scalar is in device memory
  /// on a GPU communicator (after toDevice), as NCCL requires.
  ncclResult_t createOp(int r, ncclComm_t comm) {
    RankState& st = ranks_[r];
    if (!isPreMul(case_.op)) {
      st.op = builtinOp(case_.op);
      return ncclSuccess;
    }
    st.scalar = scalars_[r];
    const auto residence =
        case_.op == Op::kPreMulDevice ? ncclScalarDevice : ncclScalarHostImmediate;
    void* scalar = &st.scalar;
    if (st.device != nullptr && residence == ncclScalarDevice) {
      ncclResult_t r2 = st.device->copy(st.deviceScalar, &st.scalar, sizeof st.scalar, st.stream);
      if (r2 == ncclSuccess) r2 = st.device->streamSynchronize(st.stream);
      if (r2 != ncclSuccess) return r2;
      scalar = st.deviceScalar;
    }
    return ncclRedOpCreatePreMulSum(&st.op, scalar, case_.type, residence, comm);
  }

  /// Copies rank r's regions to memory of the current device, where the call then reads and
  /// writes them, on `stream`.
  ncclResult_t toDevice(int r, const braidDeviceApi* device, cudaStream_t stream) {
    RankState& st = ranks_[r];
    st.device = device;
    st.stream = stream;
    ncclResult_t res = device->alloc(&st.deviceScalar, sizeof st.scalar);
    for (int g = 0; g < st.nregions && res == ncclSuccess; ++g) {
      res = device->alloc(&st.deviceRegions[g], st.regions[g].bytes.size());
      if (res == ncclSuccess) {
        res = device->copy(st.deviceRegions[g], st.regions[g].bytes.data(),
                           st.regions[g].bytes.size(), stream);
      }
    }
    if (res == ncclSuccess) res = device->streamSynchronize(stream);
    return res;
  }

  /// Waits for rank r's stream, copies its regions back to host memory (where check() looks)
  /// and frees the device copies.
  ncclResult_t fromDevice(int r) {
    RankState& st = ranks_[r];
    const braidDeviceApi* device = st.device;
    ncclResult_t res = device->streamSynchronize(st.stream);
    for (int g = 0; g < st.nregions && res == ncclSuccess; ++g) {
      res = device->copy(st.regions[g].bytes.data(), st.deviceRegions[g],
                         st.regions[g].bytes.size(), st.stream);
    }
    if (res == ncclSuccess) res = device->streamSynchronize(st.stream);
    for (int g = 0; g < st.nregions; ++g) device->release(st.deviceRegions[g]);
    device->release(st.deviceScalar);
    st.deviceRegions[0] = st.deviceRegions[1] = st.deviceScalar = nullptr;
    return res;
  }

  ncclResult_t destroyOp(int r, ncclComm_t comm) {
    return isPreMul(case_.op) ? ncclRedOpDestroy(ranks_[r].op, comm) : ncclSuccess;
  }

  /// Issues rank r's call (on its device copies and stream after toDevice).
  ncclResult_t issue(int r, ncclComm_t comm) {
    RankState& st = ranks_[r];
    const Case& c = case_;
    const size_t n = c.count;
    void* send = st.send;
    void* recv = st.recv;
    if (st.device != nullptr) {
      send = static_cast<unsigned char*>(st.deviceRegions[st.sendRegion]) + Region::kGuard +
             st.sendAt * elem_;
      recv = static_cast<unsigned char*>(st.deviceRegions[st.recvRegion]) + Region::kGuard +
             st.recvAt * elem_;
    }
    cudaStream_t stream = st.stream;
    switch (c.coll) {
      case Coll::kAllReduce:
        return ncclAllReduce(send, recv, n, c.type, st.op, comm, stream);
      case Coll::kReduceScatter:
        return ncclReduceScatter(send, recv, n, c.type, st.op, comm, stream);
      case Coll::kAllGather:
        return ncclAllGather(send, recv, n, c.type, comm, stream);
      case Coll::kBroadcast:
        return ncclBroadcast(send, recv, n, c.type, c.root, comm, stream);
      case Coll::kBcast:
        return ncclBcast(recv, n, c.type, c.root, comm, stream);
      case Coll::kReduce:
        return ncclReduce(send, recv, n, c.type, st.op, c.root, comm, stream);
      case Coll::kGather:
        return ncclGather(send, recv, n, c.type, c.root, comm, stream);
      case Coll::kScatter:
        return ncclScatter(send, recv, n, c.type, c.root, comm, stream);
      case Coll::kAlltoAll:
        return ncclAlltoAll(send, recv, n, c.type, comm, stream);
      case Coll::kSendRecv: {
        const int to = (r + c.root) % c.nranks, from = (r + c.nranks - c.root) % c.nranks;
        ncclResult_t result = ncclGroupStart();
        if (result == ncclSuccess) result = ncclSend(send, n, c.type, to, comm, stream);
        if (result == ncclSuccess) result = ncclRecv(recv, n, c.type, from, comm, stream);
        const ncclResult_t end = ncclGroupEnd();
        return result != ncclSuccess ? result : end;
      }
    }
    return ncclInternalError;
  }

  /// Checks every byte of rank r's regions.
  ::testing::AssertionResult check(int r) {
    RankState& st = ranks_[r];
    size_t wrong = 0;
    std::string report;
    auto note = [&](const std::string& what) {
      if (wrong++ < 3) report += "\n    " + what;
    };
    for (int g = 0; g < st.nregions; ++g) {
      // Bytes outside the reduced range (a region has at most one): exactly as expected.
      Region& region = st.regions[g];
      size_t holeBegin = region.bytes.size(), holeEnd = region.bytes.size();
      for (const ReducedRange& rr : st.reduced) {
        if (rr.region != g) continue;
        holeBegin = Region::kGuard + rr.offset * elem_;
        holeEnd = holeBegin + rr.count * elem_;
      }
      auto compare = [&](size_t begin, size_t end) {
        if (memcmp(region.bytes.data() + begin, region.expected.data() + begin, end - begin) == 0) {
          return;
        }
        for (size_t b = begin; b < end; ++b) {
          if (region.bytes[b] != region.expected[b]) note(describeByte(g, region, b));
        }
      };
      compare(0, holeBegin);
      compare(holeEnd, region.bytes.size());
    }
    for (const ReducedRange& rr : st.reduced) {
      const unsigned char* out = st.regions[rr.region].payload() + rr.offset * elem_;
      for (size_t i = 0; i < rr.count; ++i) {
        const Expected& e = expectedAt(rr.first + i);
        const uint64_t got = type_.load(out + i * elem_);
        if (!matches(type_, e, got)) {
          note("reduced element " + std::to_string(rr.first + i) + ": " +
               describeMismatch(type_, e, got) + inputsAt(rr.first + i));
        }
      }
    }
    if (wrong == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << caseName(case_) << ": rank " << r << " has " << wrong
                                         << " wrong byte(s) or element(s)" << report;
  }

 private:
  /// Adds a region of `elems` elements filled with random bytes; returns its index.
  int addRegion(RankState& st, size_t elems, Rng& rng) {
    Region& g = st.regions[st.nregions];
    g.bytes.resize(elems * elem_ + 2 * Region::kGuard);
    randomBytes(rng, g.bytes.data(), g.bytes.size());
    return st.nregions++;
  }

  /// Copies `elems` elements of rank `from`'s input starting at element `first` to `dst`.
  void copyInput(unsigned char* dst, int from, size_t first, size_t elems) const {
    if (elems > 0 && !inputs_[from].empty())
      memcpy(dst, &inputs_[from][first * elem_], elems * elem_);
  }

  unsigned char* at(RankState& st, int g, size_t elem) {
    return st.regions[g].payload() + elem * elem_;
  }
  unsigned char* expectAt(RankState& st, int g, size_t elem) {
    return st.regions[g].expected.data() + Region::kGuard + elem * elem_;
  }

  void layOut(int r, uint64_t seed);

  const Expected& expectedAt(size_t j) {
    if (!cache_.empty() && cached_[j]) return cache_[j];
    const unsigned char* elems[kMaxRanks];
    for (int q = 0; q < case_.nranks; ++q) elems[q] = &inputs_[q][j * elem_];
    Expected& e = cache_.empty() ? scratch_ : cache_[j];
    e = (*reducer_)(elems);
    if (!cache_.empty()) cached_[j] = 1;
    return e;
  }

  std::string inputsAt(size_t j) const {
    std::string s = " from inputs";
    char text[64];
    for (int q = 0; q < case_.nranks; ++q) {
      const uint64_t bits = type_.load(&inputs_[q][j * elem_]);
      if (type_.isFloat()) {
        snprintf(text, sizeof text, " %.9g", type_.value(bits));
      } else {
        snprintf(text, sizeof text, " 0x%llx", static_cast<unsigned long long>(bits));
      }
      s += text;
    }
    return s;
  }

  std::string describeByte(int g, Region& region, size_t b) const {
    char text[160];
    const long payloadByte = static_cast<long>(b) - static_cast<long>(Region::kGuard);
    const size_t payloadBytes = region.bytes.size() - 2 * Region::kGuard;
    const char* where = payloadByte < 0                                    ? "guard before"
                        : static_cast<size_t>(payloadByte) >= payloadBytes ? "guard after"
                                                                           : "payload";
    snprintf(text, sizeof text, "region %d %s, byte %ld (element %ld): got 0x%02x, expected 0x%02x",
             g, where, payloadByte, payloadByte >= 0 ? payloadByte / static_cast<long>(elem_) : -1,
             region.bytes[b], region.expected[b]);
    return text;
  }

  Case case_;
  const TypeInfo& type_;
  size_t elem_;
  std::vector<std::vector<unsigned char>> inputs_;  ///< every rank's input
  std::vector<uint64_t> scalars_;                   ///< every rank's premulsum scalar
  std::vector<RankState> ranks_;
  std::unique_ptr<Reducer> reducer_;
  std::vector<Expected> cache_;  ///< all-reduce only: expected elements worked out so far
  std::vector<char> cached_;
  Expected scratch_;
};

inline void CaseRun::layOut(int r, uint64_t seed) {
  Rng rng(seed);
  RankState& st = ranks_[r];
  const Case& c = case_;
  const size_t n = c.count;
  const int nr = c.nranks;
  const size_t in = inputElems(c.coll, n, nr);
  // Output size per rank, where it differs from the input's.
  const bool wideOutput =
      c.coll == Coll::kAllGather || c.coll == Coll::kGather || c.coll == Coll::kAlltoAll;
  const size_t out = wideOutput ? n * nr : n;
  int sendRegion = 0, recvRegion = 0;
  size_t sendAt = 0, recvAt = 0;  // element offsets of the buffers in their regions
  if (!c.inPlace) {
    sendRegion = addRegion(st, in, rng);
    recvRegion = addRegion(st, out, rng);
  } else if (c.coll == Coll::kAllGather || c.coll == Coll::kGather) {
    recvRegion = sendRegion = addRegion(st, n * nr, rng);
    sendAt = static_cast<size_t>(r) * n;
  } else if (c.coll == Coll::kReduceScatter || c.coll == Coll::kScatter) {
    recvRegion = sendRegion = addRegion(st, in, rng);
    recvAt = static_cast<size_t>(r) * n;
  } else {
    recvRegion = sendRegion = addRegion(st, in, rng);
  }
  copyInput(at(st, sendRegion, sendAt), r, 0, in);
  st.send = at(st, sendRegion, sendAt);
  st.recv = at(st, recvRegion, recvAt);
  st.sendRegion = sendRegion;
  st.sendAt = sendAt;
  st.recvRegion = recvRegion;
  st.recvAt = recvAt;
  for (int g = 0; g < st.nregions; ++g) st.regions[g].expected = st.regions[g].bytes;

  // What the call must leave in the receive buffer, on ranks where it writes one.
  unsigned char* expect = expectAt(st, recvRegion, recvAt);
  switch (c.coll) {
    case Coll::kAllReduce:
      st.reduced.push_back({recvRegion, recvAt, n, 0});
      break;
    case Coll::kReduceScatter:
      st.reduced.push_back({recvRegion, recvAt, n, static_cast<size_t>(r) * n});
      break;
    case Coll::kReduce:
      if (r == c.root) st.reduced.push_back({recvRegion, recvAt, n, 0});
      break;
    case Coll::kAllGather:
      for (int q = 0; q < nr; ++q) copyInput(expect + q * n * elem_, q, 0, n);
      break;
    case Coll::kGather:
      if (r == c.root) {
        for (int q = 0; q < nr; ++q) copyInput(expect + q * n * elem_, q, 0, n);
      }
      break;
    case Coll::kBroadcast:
    case Coll::kBcast:
      copyInput(expect, c.root, 0, n);
      break;
    case Coll::kScatter:
      copyInput(expect, c.root, static_cast<size_t>(r) * n, n);
      break;
    case Coll::kAlltoAll:
      for (int q = 0; q < nr; ++q)
        copyInput(expect + q * n * elem_, q, static_cast<size_t>(r) * n, n);
      break;
    case Coll::kSendRecv:
      copyInput(expect, (r + nr - c.root) % nr, 0, n);
      break;
  }
}

/// Runs runCase(c) for every case of (coll, type, op) over rankCounts x counts x placement (in
/// and out of place, where the collective has the form) x roots(nranks), each under a trace
/// naming it; after kMaxFailingCases failing cases the test fails and stops, since the first
/// ones say what is wrong.
template <typename Roots, typename RunCase>
void sweepCases(Coll coll, ncclDataType_t type, Op op, const std::vector<int>& rankCounts,
                const std::vector<size_t>& counts, Roots roots, RunCase runCase) {
  constexpr int kMaxFailingCases = 5;
  auto parts = [] {
    return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
  };
  int failing = 0;
  for (int nranks : rankCounts) {
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        if (inPlace ? !hasInPlace(coll) : !hasOutOfPlace(coll)) continue;
        for (int root : roots(nranks)) {
          const Case c{coll, type, op, count, nranks, inPlace, root};
          SCOPED_TRACE(caseName(c));
          const int before = parts();
          runCase(c);
          if (::testing::Test::HasFatalFailure()) return;
          if (parts() != before && ++failing >= kMaxFailingCases) {
            FAIL() << "stopping after " << failing << " failing cases";
          }
        }
      }
    }
  }
}

/// Communicators of every size a test asks for, made once (ncclCommInitAll) and destroyed with
/// the set.
class CommSets {
 public:
  CommSets() = default;
  CommSets(const CommSets&) = delete;
  CommSets& operator=(const CommSets&) = delete;
  ~CommSets() {
    for (auto& set : sets_) {
      for (ncclComm_t comm : set.second) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    }
  }

  /// The communicators of an nranks-rank set; empty (after a failure) when creation failed.
  const std::vector<ncclComm_t>& get(int nranks) {
    auto it = sets_.find(nranks);
    if (it != sets_.end()) return it->second;
    std::vector<ncclComm_t> comms(nranks, nullptr);
    const ncclResult_t made = ncclCommInitAll(comms.data(), nranks, nullptr);
    EXPECT_EQ(made, ncclSuccess) << ncclGetLastError(nullptr);
    if (made != ncclSuccess) comms.clear();
    return sets_.emplace(nranks, std::move(comms)).first->second;
  }

 private:
  std::map<int, std::vector<ncclComm_t>> sets_;
};

/// Runs a prepared case with every rank driven from this thread inside one group: the group
/// runs the communicators concurrently at ncclGroupEnd.
inline void runInGroup(CaseRun& run, const std::vector<ncclComm_t>& comms) {
  const int nr = run.spec().nranks;
  for (int r = 0; r < nr; ++r) {
    ASSERT_EQ(run.createOp(r, comms[r]), ncclSuccess) << ncclGetLastError(comms[r]);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  std::vector<ncclResult_t> results(nr);
  for (int r = 0; r < nr; ++r) results[r] = run.issue(r, comms[r]);
  const ncclResult_t end = ncclGroupEnd();
  for (int r = 0; r < nr; ++r) {
    EXPECT_EQ(results[r], ncclSuccess)
        << caseName(run.spec()) << ": rank " << r << ": " << ncclGetLastError(comms[r]);
  }
  ASSERT_EQ(end, ncclSuccess) << caseName(run.spec()) << ": " << ncclGetLastError(nullptr);
  for (int r = 0; r < nr; ++r) {
    EXPECT_EQ(run.destroyOp(r, comms[r]), ncclSuccess) << ncclGetLastError(comms[r]);
    EXPECT_TRUE(run.check(r));
  }
}

/// Runs a prepared case with one thread per rank, each making its own call.
inline void runOnThreads(CaseRun& run, const std::vector<ncclComm_t>& comms) {
  const int nr = run.spec().nranks;
  std::vector<ncclResult_t> results(nr, ncclSuccess);
  std::vector<std::string> errors(nr);
  std::vector<std::thread> threads;
  for (int r = 0; r < nr; ++r) {
    threads.emplace_back([&, r] {
      ncclResult_t res = run.createOp(r, comms[r]);
      if (res == ncclSuccess) res = run.issue(r, comms[r]);
      if (res == ncclSuccess) res = run.destroyOp(r, comms[r]);
      if (res != ncclSuccess) errors[r] = ncclGetLastError(comms[r]);
      results[r] = res;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < nr; ++r) {
    EXPECT_EQ(results[r], ncclSuccess)
        << caseName(run.spec()) << ": rank " << r << ": " << errors[r];
    EXPECT_TRUE(run.check(r));
  }
}

}  // namespace braid::testing::matrix
