// The zero-copy all_reduce, reduce_scatter and all_gather through the API, ranks in processes
// (exec/zero_copy.h): each child joins two communicators, one zero-copy (buffers from
// ncclMemAlloc that the ranks map, or cross-memory copies forced with BRAID_ZERO_COPY=2) and one
// with BRAID_ZERO_COPY=0, runs the same collective of random data on both (about 1 MiB per
// rank, above BRAID_ZERO_COPY_MIN_BYTES), and
// checks that the results have the same bits, and from each communicator's BRAID_DUMP_SCHEDULE
// line that the first went zero-copy exactly where the result cannot change (and the second
// never did). The data spans many binary orders of magnitude, so a float sum in another order
// would show in the last bits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/api_test_util.h"
#include "nccl.h"
#include "support/multiprocess.h"
#include "support/uniform_real.h"

namespace {

using braid::testing::ScopedEnv;

struct Case {
  int nranks;
  ncclDataType_t type;
  ncclRedOp_t op;
  bool deterministic;
  bool inPlace;
  bool expectZeroCopy;  ///< zeroCopyKeepsResult's answer for this case
  /// Buffers from ncclMemAlloc, which the ranks map (BRAID_ZERO_COPY=1); otherwise vectors,
  /// with cross-memory copies forced (BRAID_ZERO_COPY=2).
  bool memAlloc = false;
  enum Collective { kAllReduce, kReduceScatter, kAllGather } collective = kAllReduce;
};

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const char* type = c.type == ncclFloat32 ? "float" : c.type == ncclBfloat16 ? "bf16" : "int32";
  const char* op = c.op == ncclSum ? "sum" : c.op == ncclAvg ? "avg" : "max";
  const char* coll = c.collective == Case::kAllReduce       ? ""
                     : c.collective == Case::kReduceScatter ? "reduce_scatter_"
                                                            : "all_gather_";
  return std::string(coll) + std::to_string(c.nranks) + "ranks_" + type + "_" + op +
         (c.deterministic ? "_deterministic" : "") + (c.inPlace ? "_inplace" : "") +
         (c.memAlloc ? "_memalloc" : "");
}

size_t elemBytes(ncclDataType_t type) { return type == ncclBfloat16 ? 2 : 4; }

std::vector<unsigned char> rankInput(const Case& c, int rank, size_t count) {
  std::mt19937_64 rng(0x2e40c0f7ull * 31 + rank);
  std::uniform_int_distribution<int> exponent(-10, 10);
  std::vector<unsigned char> bytes(count * elemBytes(c.type));
  for (size_t i = 0; i < count; ++i) {
    const auto mantissa = static_cast<float>(braid::testing::uniformReal(rng, -1, 1));
    const float x = std::ldexp(mantissa, exponent(rng));
    uint32_t bits;
    memcpy(&bits, &x, 4);
    if (c.type == ncclInt32) bits = static_cast<uint32_t>(rng());
    if (c.type == ncclBfloat16) {
      const uint16_t half = static_cast<uint16_t>(bits >> 16);
      memcpy(&bytes[i * 2], &half, 2);
    } else {
      memcpy(&bytes[i * 4], &bits, 4);
    }
  }
  return bytes;
}

// One call of the case's collective on a new communicator; returns the output (the dump goes
// to `dumpPath`). `count` is per rank, as the API counts it.
std::vector<unsigned char> callOnce(const Case& c, const ncclUniqueId& id, int rank, size_t count,
                                    const std::string& dumpPath) {
  // BRAID_DUMP_SCHEDULE writes to stderr: send it to a file for the length of this call.
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  FILE* dump = fopen(dumpPath.c_str(), "w");
  EXPECT_NE(dump, nullptr);
  if (dump == nullptr) return {};
  dup2(fileno(dump), STDERR_FILENO);
  const size_t n = static_cast<size_t>(c.nranks);
  const size_t block = count * elemBytes(c.type);
  const size_t inBytes = c.collective == Case::kReduceScatter ? block * n : block;
  const size_t outBytes = c.collective == Case::kAllGather ? block * n : block;
  const std::vector<unsigned char> data = rankInput(c, rank, inBytes / elemBytes(c.type));
  // In place as NCCL has it: one buffer of the larger size, the smaller side at block `rank`
  // (all_reduce: the same bytes).
  const size_t whole = std::max(inBytes, outBytes);
  const size_t inAt = c.inPlace && c.collective == Case::kAllGather ? rank * block : 0;
  const size_t outAt = c.inPlace && c.collective == Case::kReduceScatter ? rank * block : 0;
  std::vector<unsigned char> first(c.inPlace ? whole : inBytes, 0x5a);
  std::copy(data.begin(), data.end(), first.begin() + inAt);
  std::vector<unsigned char> second(c.inPlace ? 0 : outBytes, 0x5a);
  // With memAlloc the call runs on ncclMemAlloc's copies of the vectors.
  void* base1 = first.data();
  void* base2 = second.data();
  if (c.memAlloc) {
    EXPECT_EQ(ncclMemAlloc(&base1, first.size()), ncclSuccess);
    memcpy(base1, first.data(), first.size());
    if (!c.inPlace) {
      EXPECT_EQ(ncclMemAlloc(&base2, second.size()), ncclSuccess);
      memcpy(base2, second.data(), second.size());
    }
  }
  char* in = static_cast<char*>(base1) + inAt;
  char* out = c.inPlace ? static_cast<char*>(base1) + outAt : static_cast<char*>(base2);
  ncclComm_t comm = nullptr;
  ncclResult_t init = ncclCommInitRank(&comm, c.nranks, id, rank);
  ncclResult_t call = ncclInternalError;
  if (init == ncclSuccess) {
    if (c.collective == Case::kAllReduce) {
      call = ncclAllReduce(in, out, count, c.type, c.op, comm, nullptr);
    } else if (c.collective == Case::kReduceScatter) {
      call = ncclReduceScatter(in, out, count, c.type, c.op, comm, nullptr);
    } else {
      call = ncclAllGather(in, out, count, c.type, comm, nullptr);
    }
  }
  const std::vector<unsigned char> output(out, out + outBytes);
  if (c.memAlloc) {
    if (!c.inPlace) ncclMemFree(base2);
    ncclMemFree(base1);
  }
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  fclose(dump);
  EXPECT_EQ(init, ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(call, ncclSuccess) << ncclGetLastError(comm);
  if (comm != nullptr) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  return output;
}

bool dumpSaysZeroCopy(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str().find(": zero-copy") != std::string::npos;
}

class ZeroCopyProcesses : public ::testing::TestWithParam<Case> {};

TEST_P(ZeroCopyProcesses, HasTheFifoPathsBitsAndRunsWhereItMay) {
  const Case c = GetParam();
  const size_t count = (size_t{1} << 18) + 5;
  ncclUniqueId zeroCopyId;
  ncclUniqueId fifoId;
  ASSERT_EQ(ncclGetUniqueId(&zeroCopyId), ncclSuccess);
  ASSERT_EQ(ncclGetUniqueId(&fifoId), ncclSuccess);
  const std::string dir = ::testing::TempDir();
  braid::testing::runProcesses(c.nranks, [&](int rank) {
    ScopedEnv dumpOn("BRAID_DUMP_SCHEDULE", "1");
    ScopedEnv mode("BRAID_DETERMINISTIC", c.deterministic ? "1" : "0");
    const std::string base = dir + "/zc-" + std::to_string(getppid()) + "-" + std::to_string(rank);
    std::vector<unsigned char> zeroCopied;
    {
      ScopedEnv on("BRAID_ZERO_COPY", c.memAlloc ? "1" : "2");
      // The trace names what ran: "zero-copy" where it did (the flight recorder's plan too).
      ScopedEnv trace("BRAID_TRACE", (base + "-trace-%r.json").c_str());
      zeroCopied = callOnce(c, zeroCopyId, rank, count, base + "-on.txt");
    }
    const std::string tracePath = base + "-trace-" + std::to_string(rank) + ".json";
    std::ifstream traced(tracePath);
    std::stringstream traceText;
    traceText << traced.rdbuf();
    EXPECT_EQ(traceText.str().find("\"algorithm\":\"zero-copy\"") != std::string::npos,
              c.expectZeroCopy)
        << "rank " << rank << "'s trace: " << traceText.str().substr(0, 400);
    unlink(tracePath.c_str());
    std::vector<unsigned char> copied;
    {
      ScopedEnv off("BRAID_ZERO_COPY", "0");
      copied = callOnce(c, fifoId, rank, count, base + "-off.txt");
    }
    EXPECT_EQ(dumpSaysZeroCopy(base + "-on.txt"), c.expectZeroCopy) << "rank " << rank;
    EXPECT_FALSE(dumpSaysZeroCopy(base + "-off.txt")) << "rank " << rank;
    ASSERT_EQ(zeroCopied.size(), copied.size());
    size_t at = 0;
    while (at < copied.size() && zeroCopied[at] == copied[at]) ++at;
    EXPECT_EQ(at, copied.size()) << "rank " << rank << ": the results differ at byte " << at;
    unlink((base + "-on.txt").c_str());
    unlink((base + "-off.txt").c_str());
  });
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ZeroCopyProcesses,
    ::testing::Values(Case{2, ncclFloat32, ncclSum, false, false, true},
                      Case{2, ncclBfloat16, ncclAvg, false, true, true},
                      Case{3, ncclInt32, ncclMax, false, false, true},
                      Case{3, ncclFloat32, ncclSum, true, true, true},
                      Case{2, ncclFloat32, ncclSum, false, false, true, true},
                      Case{3, ncclInt32, ncclSum, false, true, true, true},
                      // Three ranks' float sum adds in the ring's order: the FIFOs keep it.
                      Case{3, ncclFloat32, ncclSum, false, false, false},
                      // reduce_scatter keeps the FIFOs, faster here (calls.cc), even where
                      // zero-copy would keep its bits (the board's own tests run it).
                      Case{3, ncclInt32, ncclSum, false, true, false, true, Case::kReduceScatter},
                      Case{3, ncclFloat32, ncclSum, false, true, true, true, Case::kAllGather},
                      Case{2, ncclBfloat16, ncclSum, false, false, true, false, Case::kAllGather}),
    caseName);

}  // namespace
